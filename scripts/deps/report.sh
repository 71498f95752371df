#!/usr/bin/env bash
# System dependencies of `cryptobench report`'s figures and their test: a font for the
# PNGs (DejaVu Sans, rendered by resvg from the same SVG) and headless Chromium for the
# browser test. Idempotent.
set -euo pipefail

export DEBIAN_FRONTEND=noninteractive
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

PKGS="fonts-dejavu-core chromium"
missing=""
for p in $PKGS; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
if [ -n "$missing" ]; then
  $SUDO apt-get -o DPkg::Lock::Timeout=600 update -q
  $SUDO apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends $missing
fi
