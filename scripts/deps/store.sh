#!/usr/bin/env bash
# System dependencies of the store's tests: a real PostgreSQL server (Debian's postgresql
# package; the tests start their own with initdb/pg_ctl as an unprivileged user in a
# temporary directory, never the packaged cluster) and setpriv (util-linux) to drop to it;
# faketime (libfaketime), which stops the wall clock for two runs whose ids must collide in
# all but their random part (tests/hostile_cli.rs).
# Idempotent: installs only what is missing.
set -euo pipefail
# --check: exit 1, naming them, when packages are missing; installs nothing.
if [ "${1:-}" = "--check" ]; then
  missing=""
  for p in postgresql util-linux faketime; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
  [ -z "$missing" ] || { echo "store:$missing"; exit 1; }
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

PKGS="postgresql util-linux faketime"
missing=""
for p in $PKGS; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
if [ -n "$missing" ]; then
  $SUDO apt-get update -q
  $SUDO apt-get install -y -q --no-install-recommends $missing
fi

# The package may start its own cluster where systemd runs; the tests need none.
if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet postgresql 2>/dev/null; then
  $SUDO systemctl stop postgresql || true
  $SUDO systemctl disable postgresql >/dev/null 2>&1 || true
fi
