#!/usr/bin/env bash
# System dependencies of `cryptobench disk` and its tests: fio (Debian's) and dmsetup
# (the guest packs the host's; its kernel has dm-crypt and brd). Idempotent.
# --check: exit 1, naming them, if any is missing.
set -euo pipefail

export DEBIAN_FRONTEND=noninteractive
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

PKGS="fio dmsetup kmod"
missing=""
for p in $PKGS; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
if [ "${1:-}" = "--check" ]; then
  [ -z "$missing" ] || { echo "disk:$missing"; exit 1; }
  exit 0
fi
if [ -n "$missing" ]; then
  $SUDO apt-get -o DPkg::Lock::Timeout=600 update -q
  $SUDO apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends $missing
fi
echo "disk deps: $(fio --version), $(dmsetup --version | head -1)"
