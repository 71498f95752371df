#!/usr/bin/env bash
# System dependencies of `cryptobench ssh` and its tests: OpenSSH's client and server
# (scripts/deps/dut.sh installs them with the packaged service refused: nothing is left
# running), and Dropbear's programs (dropbear-bin: no init script, no service).
# Idempotent. --check: exit 1, naming them, if any is missing.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
here="$(dirname "$0")"

PKGS="dropbear-bin procps coreutils"
missing=""
for p in $PKGS; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
if [ "${1:-}" = "--check" ]; then
  openssh="$(bash "$here/dut.sh" --check | sed 's/^dut://')" || true
  [ -z "$openssh$missing" ] || { echo "ssh:$openssh$missing"; exit 1; }
  exit 0
fi
bash "$here/dut.sh"
if [ -n "$missing" ]; then
  $SUDO apt-get -o DPkg::Lock::Timeout=600 update -q
  $SUDO apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends $missing
fi
# sshd (as root) refuses to start without its privilege separation directory, which
# Debian's service makes when it starts: made here, empty, as the service would.
$SUDO mkdir -p /run/sshd
$SUDO chmod 0755 /run/sshd
echo "ssh deps: $(ssh -V 2>&1), dropbear $(dpkg-query -W -f='${Version}' dropbear-bin)"
