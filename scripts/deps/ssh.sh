#!/usr/bin/env bash
# System dependencies of `cryptobench ssh` and its tests: OpenSSH's server and client,
# Dropbear's server and client (dropbear-bin: the programs without the init script),
# iproute2 for the namespaces. Idempotent.
# --check: exit 1, naming them, if any is missing.
# Installing openssh-server would start the system's sshd: a policy-rc.d that refuses
# every start is in place during the install (only if none is there already), so that
# nothing is left running; cryptobench starts its own sshd in a namespace.
set -euo pipefail

export DEBIAN_FRONTEND=noninteractive
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

PKGS="openssh-server openssh-client dropbear-bin iproute2 procps coreutils"
missing=""
for p in $PKGS; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
if [ "${1:-}" = "--check" ]; then
  [ -z "$missing" ] || { echo "ssh:$missing"; exit 1; }
  exit 0
fi
if [ -n "$missing" ]; then
  policy=/usr/sbin/policy-rc.d
  ours=""
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' | $SUDO tee "$policy" >/dev/null
    $SUDO chmod 0755 "$policy"
    ours=1
  fi
  cleanup() { [ -z "$ours" ] || $SUDO rm -f "$policy"; }
  trap cleanup EXIT
  $SUDO apt-get -o DPkg::Lock::Timeout=600 update -q
  $SUDO env RUNLEVEL=1 apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends $missing
fi
# sshd (as root) refuses to start without its privilege separation directory, which
# Debian's service makes when it starts: made here, empty, as the service would.
$SUDO mkdir -p /run/sshd
$SUDO chmod 0755 /run/sshd
echo "ssh deps: $(ssh -V 2>&1), dropbear $(dpkg-query -W -f='${Version}' dropbear-bin)"
