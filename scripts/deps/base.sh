#!/usr/bin/env bash
# What every build and test needs: the system libcrypto and the openssl CLI (measured
# in-process and used by bench/), a C toolchain (aws-lc-sys, libsodium's bundled source),
# curl (rustup) and python3 (scripts/import-graph). Idempotent. --check: exit 1, naming
# them, if any is missing.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

PKGS="openssl libssl3 build-essential pkg-config ca-certificates curl python3"
missing=""
for p in $PKGS; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
if [ "${1:-}" = "--check" ]; then
  [ -z "$missing" ] || { echo "base:$missing"; exit 1; }
  exit 0
fi
if [ -n "$missing" ]; then
  $SUDO apt-get -o DPkg::Lock::Timeout=600 update -q
  $SUDO apt-get -o DPkg::Lock::Timeout=600 install -y -q $missing
fi
