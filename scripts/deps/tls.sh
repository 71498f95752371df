#!/usr/bin/env bash
# System dependencies of `cryptobench tls`: nginx (the server), wrk and h2load
# (nghttp2-client, the load generators), openssl (the throwaway certificate and the
# suite list) and iproute2 (ss, used by the tests to check that no port stays open).
# Idempotent: installs only what is missing. --check: exit 1, naming them, if any is.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

PKGS="nginx wrk nghttp2-client openssl iproute2"
missing=""
for p in $PKGS; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
# An nginx already on PATH (any flavour) will do.
if command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ]; then
  missing="${missing/ nginx/}"
fi
if [ "${1:-}" = "--check" ]; then
  [ -z "$missing" ] || { echo "tls:$missing"; exit 1; }
  exit 0
fi
if [ -n "$missing" ]; then
  $SUDO apt-get update -q
  $SUDO apt-get install -y -q --no-install-recommends $missing
fi

# The Debian package starts a system nginx on port 80; cryptobench runs its own
# instances on free loopback ports and needs none. Stop it where systemd runs it.
if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet nginx 2>/dev/null; then
  $SUDO systemctl stop nginx || true
  $SUDO systemctl disable nginx >/dev/null 2>&1 || true
fi
