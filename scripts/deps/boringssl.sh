#!/usr/bin/env bash
# System dependencies of the `boringssl` cargo feature: boring-sys builds BoringSSL from
# its vendored sources with cmake and generates its bindings with bindgen, which loads
# libclang. Idempotent: installs only what is missing.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

PKGS="libclang-dev cmake"
missing=""
for p in $PKGS; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
if [ -n "$missing" ]; then
  $SUDO apt-get update -q
  $SUDO apt-get install -y -q --no-install-recommends $missing
fi
