#!/usr/bin/env bash
# System dependencies of the package tests (tests/package_deb.rs): debootstrap, which
# makes the clean Debian 12 root the .deb is installed into (from Debian's archive, kept
# as a tarball in ~/.cache/cryptobench/deb-root), and dpkg-dev (dpkg-shlibdeps, which
# scripts/package-deb reads the Depends from). tests/package_openwrt.rs needs nothing more
# than base.sh's tar, gzip and binutils (readelf) and musl.sh's qemu-user and sysroots: no
# opkg or apk-tools is to be had from Debian (docs/routers.md). Idempotent: installs only
# what is missing.
set -euo pipefail
PKGS="debootstrap dpkg-dev"
missing=""
for p in $PKGS; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
# --check: exit 1, naming them, when packages are missing; installs nothing.
if [ "${1:-}" = "--check" ]; then
  [ -z "$missing" ] || { echo "package:$missing"; exit 1; }
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
if [ -n "$missing" ]; then
  $SUDO apt-get -o DPkg::Lock::Timeout=600 update -q
  $SUDO apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends $missing
fi
