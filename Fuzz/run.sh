#!/usr/bin/env bash
# Builds the libFuzzer target over the manifest loader and runs it.
#   Fuzz/run.sh [SECONDS]      (default 60)
# Crashes, leaks, timeouts and out-of-memory inputs are written to
# Fuzz/artifacts/; the run fails (non-zero) if any is found.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
mkdir -p Fuzz/work Fuzz/artifacts Fuzz/work/corpus
bin=Fuzz/work/manifest-fuzz
# The loader's sources only: Manifest/, Support/ (no libcurl), and the validation report.
# Runtime.swift is left out: it links libcurl, which the loader never needs.
sources=()
for f in Sources/SyncFiles/Manifest/*.swift Sources/SyncFiles/Support/*.swift Sources/SyncFiles/Report/ValidationReport.swift; do
  [[ $f == */Runtime.swift ]] || sources+=("$f")
done
echo "building $bin" >&2
swiftc -sanitize=fuzzer,address -parse-as-library -O -g -module-name SyncFilesFuzz \
  -I Sources/CYAML -lyaml -o "$bin" "${sources[@]}" Fuzz/ManifestFuzz.swift \
  2> >(grep -v "Cannot export local symbol" >&2)  # gold's harmless notes on ASan's symbols
# Work on a copy so the committed seed corpus stays small and reviewed.
cp -n Fuzz/corpus/* Fuzz/work/corpus/ 2>/dev/null || true
cp -n manifests/samples/*.yaml manifests/invalid/*.yaml Examples/quickstart/*.yaml Fuzz/work/corpus/ 2>/dev/null || true
echo "fuzzing for ${seconds}s" >&2
# libFuzzer and ASan print the crash's stack; Swift's own backtracer would
# outlive the fuzzer and hold its output pipe open.
export SWIFT_BACKTRACE=enable=no
"$bin" Fuzz/work/corpus -max_total_time="$seconds" -max_len=65536 -rss_limit_mb=2048 -timeout=10 \
  -artifact_prefix=Fuzz/artifacts/ -dict=Fuzz/manifest.dict -print_final_stats=1 2>&1 | tail -n 25
