#!/usr/bin/env bash
# System dependencies of `cryptobench vpn` and its tests: OpenVPN, iperf3, irtt (round
# trips), WireGuard tools,
# iproute2, and wireguard-go when the kernel has no WireGuard module. Idempotent.
# --check: exit 1, naming them, if any is missing (without root, a kernel WireGuard
# module is recognised by modinfo or /sys/module).
set -euo pipefail

export DEBIAN_FRONTEND=noninteractive
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

PKGS="openvpn iperf3 irtt wireguard-tools iproute2 openssl procps"
missing=""
for p in $PKGS; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
if [ "${1:-}" = "--check" ]; then
  wg_go="/usr/local/bin/wireguard-go"
  if ! { [ -d /sys/module/wireguard ] || modinfo wireguard >/dev/null 2>&1 || [ -x "$wg_go" ]; }; then
    missing="$missing wireguard-go"
  fi
  [ -z "$missing" ] || { echo "vpn:$missing"; exit 1; }
  exit 0
fi
if [ -n "$missing" ]; then
  $SUDO apt-get -o DPkg::Lock::Timeout=600 update -q
  $SUDO apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends $missing
fi

# WireGuard in user space, only where the kernel cannot create a wireguard link.
# Pinned: wireguard-go 0.0.20250522 (needs Go >= 1.23; older Go fetches that toolchain
# through the module proxy).
WG_GO_MODULE="golang.zx2c4.com/wireguard"
WG_GO_VERSION="v0.0.0-20260522210424-ecfc5a8d5446"
WG_GO_BIN="/usr/local/bin/wireguard-go"

kernel_wireguard() {
  local name="cbenchprobe$$"
  if $SUDO ip link add "$name" type wireguard >/dev/null 2>&1; then
    $SUDO ip link del "$name" >/dev/null 2>&1 || true
    return 0
  fi
  return 1
}

if kernel_wireguard; then
  echo "vpn deps: kernel WireGuard available; wireguard-go not needed"
  exit 0
fi
# Installed already at the pinned version?
if [ -x "$WG_GO_BIN" ] && [ -f "$WG_GO_BIN.version" ] && [ "$(cat "$WG_GO_BIN.version")" = "$WG_GO_VERSION" ]; then
  echo "vpn deps: $("$WG_GO_BIN" --version | head -1) at $WG_GO_BIN"
  exit 0
fi

export PATH="$PATH:/usr/local/go/bin:$HOME/go/bin"
if ! command -v go >/dev/null 2>&1; then
  $SUDO apt-get -o DPkg::Lock::Timeout=600 update -q
  $SUDO apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends golang-go
fi
go version
gobin="$(mktemp -d)"
trap 'rm -rf "$gobin"' EXIT
GOBIN="$gobin" GOTOOLCHAIN="${GOTOOLCHAIN:-auto}" go install "$WG_GO_MODULE@$WG_GO_VERSION"
# go install names the binary after the module's last element: "wireguard".
$SUDO install -m 0755 "$gobin/wireguard" "$WG_GO_BIN"
echo "$WG_GO_VERSION" | $SUDO tee "$WG_GO_BIN.version" >/dev/null
echo "vpn deps: $("$WG_GO_BIN" --version | head -1) at $WG_GO_BIN"
