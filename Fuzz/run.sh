#!/usr/bin/env bash
# Builds a libFuzzer target and runs it.
#   Fuzz/run.sh [SECONDS] [TARGET]   (default 60 s, target manifest)
# Targets: manifest (the manifest loader), journal (the journal reader),
# headers (Content-Range, HTTP dates, Retry-After and validators), trust
# (checksum lists, gpgv status lines, armor, minisign and signify files).
# Crashes, leaks, timeouts and out-of-memory inputs are written to
# Fuzz/artifacts/; the run fails (non-zero) if any is found.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
target=${2:-manifest}
mkdir -p Fuzz/work Fuzz/artifacts "Fuzz/work/$target-corpus"
bin=Fuzz/work/$target-fuzz
# The library's lower targets are built as modules of their own, as in the
# package (the core without libcurl: RuntimeLibraries.swift is left out);
# the target adds the sources it reads above them.
core=()
for f in Sources/SyncFilesCore/*.swift; do
  case $f in */RuntimeLibraries.swift) ;; *) core+=("$f") ;; esac
done
case $target in
  manifest)
    sources=(Sources/SyncFiles/Report/ValidationReport.swift Fuzz/ManifestFuzz.swift)
    dict=(-dict=Fuzz/manifest.dict)
    # Work on a copy so the committed seed corpus stays small and reviewed.
    cp -n Fuzz/corpus/* Fuzz/work/manifest-corpus/ 2>/dev/null || true
    cp -n manifests/samples/*.yaml manifests/invalid/*.yaml Examples/quickstart/*.yaml Fuzz/work/manifest-corpus/ \
      2>/dev/null || true
    ;;
  journal)
    sources=(Fuzz/JournalFuzz.swift)
    dict=()
    cp -n Fuzz/journal-corpus/* Fuzz/work/journal-corpus/ 2>/dev/null || true
    ;;
  headers)
    sources=(Sources/SyncFiles/Transfer/HeaderText.swift Sources/SyncFiles/Plan/RequestPolicy.swift Fuzz/HeaderFuzz.swift)
    dict=()
    cp -n Fuzz/headers-corpus/* Fuzz/work/headers-corpus/ 2>/dev/null || true
    ;;
  trust)
    sources=(Fuzz/TrustFuzz.swift)
    dict=()
    cp -n Fuzz/trust-corpus/* Fuzz/work/trust-corpus/ 2>/dev/null || true
    ;;
  *) echo "run.sh: unknown target '$target' (manifest, journal, headers, trust)" >&2; exit 2 ;;
esac
echo "building $bin" >&2
mods=Fuzz/work/modules
mkdir -p "$mods"
# `package` declarations cross modules of one package name, as SwiftPM builds them.
flags=(-sanitize=fuzzer,address -parse-as-library -O -g -package-name syncfiles -I "$mods" -L "$mods"
  -I Sources/CLinux -I Sources/CYAML -I Sources/CZlib -I Sources/CCrypto)
module() {  # NAME SOURCES...: a static library and its module, under $mods
  local name=$1
  shift
  swiftc "${flags[@]}" -module-name "$name" -emit-library -static -emit-module \
    -emit-module-path "$mods/$name.swiftmodule" -o "$mods/lib$name.a" "$@"
}
module SyncFilesCore "${core[@]}"
module SyncFilesManifest Sources/SyncFilesManifest/*.swift
module SyncFilesJournal Sources/SyncFilesJournal/*.swift
module SyncFilesVerify Sources/SyncFilesVerify/*.swift
module SyncFilesInstall Sources/SyncFilesInstall/*.swift
swiftc "${flags[@]}" -module-name SyncFilesFuzz -lSyncFilesInstall -lSyncFilesVerify -lSyncFilesJournal \
  -lSyncFilesManifest -lSyncFilesCore -lyaml -lz -lcrypto -o "$bin" "${sources[@]}" \
  2> >(grep -v "Cannot export local symbol" >&2)  # gold's harmless notes on ASan's symbols
echo "fuzzing for ${seconds}s" >&2
# libFuzzer and ASan print the crash's stack; Swift's own backtracer would
# outlive the fuzzer and hold its output pipe open.
export SWIFT_BACKTRACE=enable=no
"$bin" "Fuzz/work/$target-corpus" -max_total_time="$seconds" -max_len=65536 -rss_limit_mb=2048 -timeout=10 \
  -artifact_prefix=Fuzz/artifacts/ "${dict[@]}" -print_final_stats=1 2>&1 | tail -n 25
