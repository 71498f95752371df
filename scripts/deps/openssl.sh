#!/usr/bin/env bash
# What scripts/build-openssl needs to build OpenSSL from the openssl-src crate's source:
# perl (OpenSSL's Configure and its generators need perl's core modules, which Debian's
# perl-base alone lacks), make and a C compiler; cargo (rustup) fetches the source.
# The cross compilers for --target come from scripts/deps/arm.sh. Idempotent.
# --check: exit 1, naming them, if any is missing.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

PKGS="perl make gcc libc6-dev"
missing=""
for p in $PKGS; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
if [ "${1:-}" = "--check" ]; then
  [ -z "$missing" ] || { echo "openssl:$missing"; exit 1; }
  exit 0
fi
if [ -n "$missing" ]; then
  $SUDO apt-get -o DPkg::Lock::Timeout=600 update -q
  $SUDO apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends $missing
fi
