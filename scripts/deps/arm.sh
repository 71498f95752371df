#!/usr/bin/env bash
# ARM cross builds and their emulation: Debian's cross compilers, qemu-user, the rustup
# targets, and per-architecture sysroots (Debian's own arm64/armhf libc and libcrypto,
# unpacked with dpkg -x, nothing installed for a foreign architecture) under
# ${CRYPTOBENCH_ARM_CACHE:-~/.cache/cryptobench/arm}/sysroot-{arm64,armhf}, for `qemu-aarch64 -L`.
# Idempotent: a second run with everything present takes well under a second.
set -euo pipefail
cd "$(dirname "$0")/../.."
export DEBIAN_FRONTEND=noninteractive PATH="$HOME/.cargo/bin:$PATH"
CACHE=${CRYPTOBENCH_ARM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cryptobench/arm}

PKGS="gcc-aarch64-linux-gnu libc6-dev-arm64-cross gcc-arm-linux-gnueabihf libc6-dev-armhf-cross qemu-user"

# --check: exit 1, naming what is missing (packages, rustup targets, sysroots, the arm64
# guest), without installing anything.
if [ "${1:-}" = "--check" ]; then
  missing=$(scripts/apt-install --check $PKGS || true)
  installed=$(rustup target list --installed 2>/dev/null || true)
  for t in aarch64-unknown-linux-gnu armv7-unknown-linux-gnueabihf; do
    grep -qx "$t" <<<"$installed" || missing="$missing rustup:$t"
  done
  for arch in arm64 armhf; do
    [ -d "$CACHE/sysroot-$arch/usr" ] || missing="$missing sysroot-$arch"
  done
  [ -d "${GUEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cryptobench/guest/arm64}/kernel" ] || missing="$missing arm64-guest"
  [ -z "$missing" ] || { echo "arm:$missing"; exit 1; }
  exit 0
fi
scripts/apt-install $PKGS

installed_targets=$(rustup target list --installed)
for t in aarch64-unknown-linux-gnu armv7-unknown-linux-gnueabihf; do
  grep -qx "$t" <<<"$installed_targets" || rustup target add "$t"
done

# The sysroot is what a Debian board has: libc and libcrypto (with its engines and
# providers) at their multiarch paths. Rebuilt when the package list changes.
SYSROOT_PKGS="libc6 libssl3 libgcc-s1 zlib1g"
for arch in arm64 armhf; do
  scripts/sysroot "$CACHE/sysroot-$arch" "$CACHE/debs" "$arch" $SYSROOT_PKGS
done

# The arm64 guest (Debian's arm64 kernel under qemu-system-aarch64) that
# tests/guest_arm64.rs boots: qemu-system-arm, the kernel and the base initramfs.
GUEST_ARCH=arm64 guest/setup --quiet
