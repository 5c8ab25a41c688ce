#!/usr/bin/env bash
# syncfiles side by side with curl, aria2c and wget2 on one nginx (loopback).
# Installs what it needs (nginx, curl, aria2, wget2), builds syncfiles in
# release mode, runs Benchmarks/compare.py. Options go to compare.py:
#   --rounds N (3)  --only W1,...,W8,W7h1,W3h2  --big BYTES (1 GiB)  --w8 BYTES (256 MiB)  --json FILE
#   --callgrind (instructions instead of times; installs valgrind)  --also NAME=PATH
#   --same-fs (every run in its workload's folder; by default each gets a new ext4 on a loop device)
# W8 starts a second nginx with limit_rate 16m and also runs W6 with segments.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup
as_root() { if [[ $(id -u) -eq 0 ]]; then "$@"; else sudo "$@"; fi; }
need=()
command -v curl >/dev/null || need+=(curl)
command -v aria2c >/dev/null || need+=(aria2)
command -v wget2 >/dev/null || need+=(wget2)
command -v openssl >/dev/null || need+=(openssl)
[[ -x /usr/bin/time ]] || need+=(time)  # peak memory of each tool (compare.py)
[[ -f /usr/include/zlib.h ]] || need+=(zlib1g-dev)  # spec-floor.c's CRC-32 (libcurl's headers only suggest it)
if [[ " $* " == *" --callgrind "* ]] && ! command -v valgrind >/dev/null; then need+=(valgrind); fi
if ((${#need[@]})); then
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
exec python3 Benchmarks/compare.py --syncfiles "$(scripts/build-release)" "$@"
