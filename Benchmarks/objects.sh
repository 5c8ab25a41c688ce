#!/usr/bin/env bash
# W10: a prefix of object storage (1,000 x 64 KiB and one 128 MiB object on
# moto_server, signatures checked), syncfiles beside `aws s3 sync` (awscli
# from PyPI) and `rclone copy` (Debian), cold and then unchanged.
# Options go to objects.py: --rounds N (3) --count N (1000) --size BYTES --big BYTES
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup
as_root() { if [[ $(id -u) -eq 0 ]]; then "$@"; else sudo "$@"; fi; }
if ! command -v rclone >/dev/null; then
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends rclone >/dev/null
fi
command -v aws >/dev/null || python3 -m pip install -q awscli
exec python3 Benchmarks/objects.py --syncfiles "$(scripts/build-release)" "$@"
