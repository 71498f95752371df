#!/usr/bin/env bash
# System dependency of `--profile` (tls, vpn, speed): perf, from Debian's linux-perf.
# Sampling uses the cpu-clock software event, so no hardware counters are needed.
# Idempotent: installs only what is missing.
set -euo pipefail
# --check: exit 1, naming it, when perf is missing; installs nothing.
if [ "${1:-}" = "--check" ]; then
  command -v perf >/dev/null 2>&1 || { echo "profile: linux-perf"; exit 1; }
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
if ! command -v perf >/dev/null 2>&1; then
  $SUDO apt-get update -q
  $SUDO apt-get install -y -q --no-install-recommends linux-perf
fi
