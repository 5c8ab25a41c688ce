#!/usr/bin/env bash
# Re-makes this example's release as a distribution lays one out, signed by
# throwaway keys whose secret halves are deleted at the end:
#   release/SHA256SUMS, release/SHA256SUMS.gpg   (gpg --detach-sign)
#   release/tool.tar.gz.minisig                  (minisign -S)
#   keys/release.gpg, keys/minisign.pub          (the public keys)
# Run it only to change the example; the files it makes are committed.
set -euo pipefail
cd "$(dirname "$0")"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export GNUPGHOME=$work/gnupg
mkdir -m 700 "$GNUPGHOME"
gpg --batch --quiet --passphrase '' --quick-gen-key 'syncfiles example release <release@example.org>' ed25519 sign never
gpg --export release@example.org >keys/release.gpg
minisign -G -W -f -p keys/minisign.pub -s "$work/minisign.key" >/dev/null
(cd release && sha256sum os.img tool.tar.gz >SHA256SUMS)
gpg --batch --yes --quiet -u release@example.org --detach-sign -o release/SHA256SUMS.gpg release/SHA256SUMS
minisign -S -s "$work/minisign.key" -m release/tool.tar.gz -t "tool 1.0, syncfiles example" >/dev/null
echo "signed by $(gpg --with-colons --list-keys release@example.org | awk -F: '/^pub/ {print $5; exit}')"
