#!/usr/bin/env bash
# musl (OpenWrt) cross builds and their emulation: Debian's gcc cross compilers (the same
# ones scripts/deps/arm.sh installs, plus mipsel), qemu-user, the host's musl (so that the
# dynamic x86_64 musl build runs here natively), the Rust targets (where rustup has the
# standard library; elsewhere the toolchain's rust-src, for -Zbuild-std), and one
# sysroot per architecture made of Debian's own musl and musl-dev packages, unpacked with
# dpkg -x under ${CRYPTOBENCH_MUSL_CACHE:-~/.cache/cryptobench/musl}/sysroot-<arch>
# (headers, crt files, libc.a, libc.so and /lib/ld-musl-<arch>.so.1, for `qemu-<arch> -L`);
# for mipsel, a soft-float musl built from Debian's source (scripts/sysroot-musl-softfloat).
# Idempotent: a second run with everything present takes well under a second.
set -euo pipefail
cd "$(dirname "$0")/../.."
export DEBIAN_FRONTEND=noninteractive PATH="$HOME/.cargo/bin:$PATH"
CACHE=${CRYPTOBENCH_MUSL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cryptobench/musl}

# linux-libc-dev*: the kernel's headers, which musl does not ship (OpenSSL needs them).
PKGS="musl-tools gcc-aarch64-linux-gnu gcc-arm-linux-gnueabihf gcc-mipsel-linux-gnu g++-mipsel-linux-gnu qemu-user
      linux-libc-dev linux-libc-dev-arm64-cross linux-libc-dev-armhf-cross linux-libc-dev-mipsel-cross"
# mipsel's musl is built soft-float from Debian's source (Debian's musl:mipsel is hard-float).
ARCHS="amd64 arm64 armhf"
SYSROOT_PKGS="musl musl-dev"
# rustup has no standard library for armv7-unknown-linux-musleabihf here (its download
# answers 404), so that target, like the tier-3 mipsel one, is built with -Zbuild-std
# (scripts/build-musl).
STABLE_TARGETS="x86_64-unknown-linux-musl aarch64-unknown-linux-musl"

if [ "${1:-}" = "--check" ]; then
  missing=$(scripts/apt-install --check $PKGS || true)
  installed=$(rustup target list --installed 2>/dev/null || true)
  for t in $STABLE_TARGETS; do
    grep -qx "$t" <<<"$installed" || missing="$missing rustup:$t"
  done
  rustup component list --installed 2>/dev/null | grep -q '^rust-src' ||
    missing="$missing rustup:rust-src"
  for arch in $ARCHS; do
    [ "$(cat "$CACHE/sysroot-$arch/.pkgs" 2>/dev/null)" = "$SYSROOT_PKGS" ] || missing="$missing musl-sysroot-$arch"
  done
  command -v mipsel-linux-gnu-gcc >/dev/null &&
    scripts/sysroot-musl-softfloat --check "$CACHE/sysroot-mipsel-sf" "$CACHE/src" ||
    missing="$missing musl-sysroot-mipsel-sf"
  [ -z "$missing" ] || { echo "musl:$missing"; exit 1; }
  exit 0
fi

scripts/apt-install $PKGS

installed=$(rustup target list --installed)
for t in $STABLE_TARGETS; do
  grep -qx "$t" <<<"$installed" || rustup target add "$t"
done
rustup component list --installed 2>/dev/null | grep -q '^rust-src' || rustup component add rust-src

for arch in $ARCHS; do
  scripts/sysroot "$CACHE/sysroot-$arch" "$CACHE/debs" "$arch" $SYSROOT_PKGS
done
scripts/sysroot-musl-softfloat "$CACHE/sysroot-mipsel-sf" "$CACHE/src"
