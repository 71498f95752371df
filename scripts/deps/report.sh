#!/usr/bin/env bash
# System dependencies of `cryptobench report`'s figures and their test: a font for the
# PNGs (DejaVu Sans, rendered by resvg from the same SVG) and headless Chromium for the
# browser test. Idempotent.
set -euo pipefail
# --check: exit 1, naming them, when packages are missing; installs nothing.
if [ "${1:-}" = "--check" ]; then
  missing=""
  for p in fonts-dejavu-core chromium; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
  [ -z "$missing" ] || { echo "report:$missing"; exit 1; }
  exit 0
fi

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
