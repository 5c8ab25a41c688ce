#!/usr/bin/env bash
# A fleet behind one cache (SPEC §9.3): 20 nodes, each its own manifest,
# root and journal, through Squid (forward proxy) and through nginx
# proxy_cache (a mirror), with the configurations of Docs/fleet/, to one
# nginx origin on loopback. For each cache, the nodes run at once and one
# after another, through four sweeps:
#   cold fill                       origin bytes ÷ unique bytes    (target ≤ 1.02)
#   unchanged                       origin requests, each a 304    (≤ 1 per file per node)
#   a change of 5 files, one large  origin bytes ÷ changed bytes   (≤ 1.05)
#   unchanged, cache_max_age 5m     origin requests                (0 through Squid)
# Every node's files are compared with the origin's after every sweep.
# It is the test FleetSweepTests at a larger shape (CI runs it with 10
# nodes and smaller files). Options: --nodes N (20) --files N (40)
# --file-kib N (1024) --large-mib N (96).
set -euo pipefail
cd "$(dirname "$0")/.."
nodes=20 files=40 file_kib=1024 large_mib=96
while (($#)); do
  case "$1" in
    --nodes) nodes=$2; shift 2 ;;
    --files) files=$2; shift 2 ;;
    --file-kib) file_kib=$2; shift 2 ;;
    --large-mib) large_mib=$2; shift 2 ;;
    *) echo "fleet.sh: unknown option $1 (--nodes, --files, --file-kib, --large-mib)" >&2; exit 2 ;;
  esac
done
scripts/setup
swift build --build-tests
out=$(mktemp)
trap 'rm -f "$out"' EXIT
SYNCFILES_FLEET_NODES=$nodes SYNCFILES_FLEET_FILES=$files SYNCFILES_FLEET_FILE_KIB=$file_kib \
  SYNCFILES_FLEET_LARGE_MIB=$large_mib \
  swift test --skip-build --filter FleetSweepTests >"$out" 2>&1 && status=0 || status=$?
grep '^fleet |' "$out" | sed 's/^fleet | //'
if ((status != 0)); then
  grep -E 'Expectation failed|error:' "$out" | head -20 >&2
  echo "fleet.sh: a target was missed or a node's files differ from the origin's (exit $status)" >&2
fi
exit $status
