#!/usr/bin/env bash
# The test guest: qemu, and a Debian cloud kernel and busybox unpacked into ~/.cache/cryptobench/guest.
# --check: exit 1, naming them, if the host tools are missing (the kernel and busybox are
# fetched without root, by guest/setup, when a guest test first runs).
# The guest also packs the host's tls and vpn tools (scripts/deps/tls.sh, vpn.sh: run them
# first) and, built once by guest/setup with build-essential (scripts/deps/base.sh) from
# Debian's openvpn-dco-dkms and the kernel's headers (downloaded, not installed), OpenVPN's
# ovpn-dco module.
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ "${1:-}" = "--check" ]; then
  missing=""
  for p in qemu-system-x86 cpio kmod; do
    [ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" = "install ok installed" ] || missing="$missing $p"
  done
  [ -z "$missing" ] || { echo "guest:$missing"; exit 1; }
  exit 0
fi
exec guest/setup
