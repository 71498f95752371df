#!/usr/bin/env bash
# System dependencies of the change-point cross-check (src/analyse/changepoint/tests.rs):
# Python's venv module, to hold Apache Otava from PyPI (scripts/otava makes the venv, as
# the calling user). Idempotent: installs only what is missing.
set -euo pipefail
# --check: exit 1, naming it, when python3 cannot make a venv; installs nothing.
if [ "${1:-}" = "--check" ]; then
  python3 -m venv --help >/dev/null 2>&1 || { echo "trend: python3-venv"; exit 1; }
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
if ! python3 -m venv --help >/dev/null 2>&1; then
  $SUDO apt-get -o DPkg::Lock::Timeout=600 update -q
  $SUDO apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends python3-venv python3-pip
fi
