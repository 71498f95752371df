#!/usr/bin/env bash
# System dependencies of `cryptobench tls`: nginx and haproxy (the servers), wrk and h2load
# (nghttp2-client, the load generators), openssl (the throwaway certificate and the
# suite list) and iproute2 (ss, used by the tests to check that no port stays open).
# Idempotent: installs only what is missing. --check: exit 1, naming them, if any is.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

PKGS="nginx haproxy wrk nghttp2-client openssl iproute2"
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

# The Debian packages start a system nginx on port 80 (and a haproxy); cryptobench runs
# its own instances on free loopback ports and needs neither. Stop them where systemd runs them.
for svc in nginx haproxy; do
  if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet "$svc" 2>/dev/null; then
    $SUDO systemctl stop "$svc" || true
    $SUDO systemctl disable "$svc" >/dev/null 2>&1 || true
  fi
done
