#!/usr/bin/env bash
# What scripts/build-aws-lc, scripts/build-wolfssl and scripts/build-haproxy need: cmake,
# ninja, a C and C++ compiler (AWS-LC's libssl is C++) and make, autoconf, automake and
# libtool (wolfSSL's tarball is its release tag's tree, without configure), and Debian
# trixie's source index, a deb-src entry only (no trixie binary package can be installed
# through it), from which scripts/fetch-trixie-orig fetches HAProxy 3.0's and wolfSSL's
# sources with apt (checked against the signed index). Idempotent: installs only what is
# missing. --check: exit 1, naming it, if any is.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

PKGS="cmake ninja-build make gcc g++ libc6-dev autoconf automake libtool"
LIST=/etc/apt/sources.list.d/cryptobench-trixie-src.sources
missing=""
for p in $PKGS; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
# The index is fetched by apt-get update once the entry exists.
ls /var/lib/apt/lists/*_dists_trixie_main_source_Sources* >/dev/null 2>&1 ||
  missing="$missing trixie-deb-src"
if [ "${1:-}" = "--check" ]; then
  [ -z "$missing" ] || { echo "haproxy:$missing"; exit 1; }
  exit 0
fi
if [ ! -f "$LIST" ]; then
  $SUDO tee "$LIST" >/dev/null <<SRC
# cryptobench (scripts/deps/haproxy.sh): HAProxy 3.0's and wolfSSL's sources for scripts/build-haproxy.
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: trixie
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
fi
if [ -n "$missing" ]; then
  $SUDO apt-get -o DPkg::Lock::Timeout=900 update -q
  pkgs=${missing/ trixie-deb-src/}
  [ -z "${pkgs// /}" ] ||
    $SUDO apt-get -o DPkg::Lock::Timeout=900 install -y -q --no-install-recommends $pkgs
fi
