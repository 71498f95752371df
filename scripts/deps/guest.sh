#!/usr/bin/env bash
# The test guest: qemu, and a Debian cloud kernel and busybox unpacked into guest/.cache.
set -euo pipefail
cd "$(dirname "$0")/../.."
exec guest/setup
