#!/usr/bin/env bash
# System dependencies of `--dut` and its tests: the OpenSSH client (the transport) and
# Debian's openssh-server, which the tests run as their own sshd (`sshd -D -f <config>`
# on a test port inside a network namespace), never the packaged service. Idempotent.
# --check: exit 1, naming them, if any is missing.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

PKGS="openssh-client openssh-server iproute2 util-linux"
missing=""
for p in $PKGS; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
if [ "${1:-}" = "--check" ]; then
  [ -z "$missing" ] || { echo "dut:$missing"; exit 1; }
  exit 0
fi
if [ -n "$missing" ]; then
  # policy-rc.d: the package must not start its own sshd on port 22 where it is installed.
  policy=/usr/sbin/policy-rc.d
  made_policy=""
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' | $SUDO tee "$policy" >/dev/null
    $SUDO chmod 755 "$policy"
    made_policy=1
  fi
  $SUDO apt-get -o DPkg::Lock::Timeout=600 update -q
  $SUDO apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends $missing
  [ -z "$made_policy" ] || $SUDO rm -f "$policy"
fi
# The packaged service is not what the tests use: keep it off where systemd runs.
if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet ssh 2>/dev/null; then
  $SUDO systemctl stop ssh || true
  $SUDO systemctl disable ssh >/dev/null 2>&1 || true
fi
