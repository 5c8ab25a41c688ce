#!/usr/bin/env bash
# Makes the keys the trust tests sign with, in DIR, with the real tools:
#   DIR/gnupg                 a GnuPG home holding four signing keys:
#     good@example.org          valid
#     expired@example.org       made and expired in 2020 (--faked-system-time)
#     revoked@example.org       revoked after it signed
#     stranger@example.org      valid, but in no keyring handed to syncfiles
#   DIR/release.gpg, .asc     good, expired and revoked keys, binary and armored
#   DIR/minisign.{key,pub}, DIR/minisign2.{key,pub}   two minisign keys (no password)
#   DIR/signify.{sec,pub}     a signify key (no password)
#   DIR/cosign.{key,pub}      an ECDSA P-256 key pair in PEM, as cosign's
set -euo pipefail
dir=$1
mkdir -p "$dir/gnupg"
chmod 700 "$dir/gnupg"
export GNUPGHOME=$dir/gnupg
gen() { gpg --batch --passphrase '' --quiet "$@" 2>/dev/null; }
gen --quick-gen-key 'Good <good@example.org>' ed25519 sign 10y
gen --faked-system-time 20200101T000000 --quick-gen-key 'Expired <expired@example.org>' ed25519 sign 1d
gen --quick-gen-key 'Revoked <revoked@example.org>' ed25519 sign 10y
gen --quick-gen-key 'Stranger <stranger@example.org>' ed25519 sign 10y
# The revoked key signs from DIR/gnupg, where it is not revoked; the
# keyrings come from DIR/gnupg-revoked, where the revocation is imported.
fpr=$(gpg --with-colons --list-keys revoked@example.org | awk -F: '/^fpr/ {print $10; exit}')
cert=$dir/gnupg/openpgp-revocs.d/$fpr.rev
sed 's/^:-----/-----/' "$cert" >"$dir/revocation.asc"
gpg --export good@example.org expired@example.org revoked@example.org >"$dir/release-unrevoked.gpg"
# A second home with the revocation imported: its export is the keyring.
cp -r "$dir/gnupg" "$dir/gnupg-revoked"
GNUPGHOME=$dir/gnupg-revoked gpg --batch --quiet --import "$dir/revocation.asc" 2>/dev/null
GNUPGHOME=$dir/gnupg-revoked gpg --export good@example.org expired@example.org revoked@example.org >"$dir/release.gpg"
GNUPGHOME=$dir/gnupg-revoked gpg --armor --export good@example.org expired@example.org revoked@example.org >"$dir/release.asc"
minisign -G -W -f -p "$dir/minisign.pub" -s "$dir/minisign.key" >/dev/null
minisign -G -W -f -p "$dir/minisign2.pub" -s "$dir/minisign2.key" >/dev/null
signify-openbsd -G -n -p "$dir/signify.pub" -s "$dir/signify.sec" -c "syncfiles test key"
openssl ecparam -genkey -name prime256v1 -noout -out "$dir/cosign.key" 2>/dev/null
openssl ec -in "$dir/cosign.key" -pubout -out "$dir/cosign.pub" 2>/dev/null
