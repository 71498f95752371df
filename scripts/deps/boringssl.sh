#!/usr/bin/env bash
# System dependencies of the `boringssl` cargo feature: boring-sys builds BoringSSL from
# its vendored sources with cmake and generates its bindings with bindgen, which loads
# libclang. Idempotent: installs only what is missing. --check: exit 1, naming them, if
# any is missing.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

PKGS="libclang-dev cmake"
missing=""
for p in $PKGS; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
if [ "${1:-}" = "--check" ]; then
  [ -z "$missing" ] || { echo "boringssl:$missing"; exit 1; }
  exit 0
fi
if [ -n "$missing" ]; then
  $SUDO apt-get -o DPkg::Lock::Timeout=600 update -q
  $SUDO apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends $missing
fi
