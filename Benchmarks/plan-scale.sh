#!/usr/bin/env bash
# How `syncfiles plan` scales with the number of entries: wall time and peak
# memory for 1,000 / 10,000 / 100,000 entries (3 runs each, median shown).
#   Benchmarks/plan-scale.sh [SIZES...]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup
command -v /usr/bin/time >/dev/null 2>&1 || { as=""; [[ $(id -u) -eq 0 ]] || as=sudo; $as apt-get install -y -qq time >/dev/null; }
bin=$(scripts/build-release)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
sizes=("$@")
((${#sizes[@]})) || sizes=(1000 10000 100000)
printf '%-10s %12s %14s %16s\n' entries "median s" "peak RSS MiB" "KiB per entry"
for n in "${sizes[@]}"; do
  python3 - "$n" "$work/m$n.yaml" <<'PY'
import sys
n, path = int(sys.argv[1]), sys.argv[2]
with open(path, "w") as f:
    f.write("version: 1\nname: scale\nroot: data\njournal: state/journal\nfiles:\n")
    for i in range(n):
        f.write(f"  - id: f{i}\n    url: https://example.org/d/{i}.bin\n    destination: d{i % 100}/f{i}.bin\n"
                f"    expected_bytes: 16KiB\n    max_bytes: 1MiB\n    schedule: every 6h\n")
PY
  times=(); rss=()
  for _ in 1 2 3; do
    out=$( { /usr/bin/time -f '%e %M' "$bin" plan "$work/m$n.yaml" >/dev/null; } 2>&1 | tail -n1)
    times+=("${out% *}"); rss+=("${out#* }")
  done
  med=$(printf '%s\n' "${times[@]}" | sort -n | sed -n 2p)
  peak=$(printf '%s\n' "${rss[@]}" | sort -n | sed -n 2p)
  awk -v n="$n" -v t="$med" -v k="$peak" 'BEGIN { printf "%-10s %12s %14.1f %16.2f\n", n, t, k / 1024, k / n }'
done
