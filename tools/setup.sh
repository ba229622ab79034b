#!/bin/sh
# Installs the Debian packages pfvm's build and tests need, if missing.
# Idempotent; needs root (or sudo) only when something is missing.
set -eu
PKGS="make gcc g++ clang libclang-rt-dev cmake pkg-config python3 python3-yaml nanopb libnanopb-dev libstb-dev libonnx-testdata gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm qemu-user gcc-aarch64-linux-gnu dpkg-dev"
missing=""
for p in $PKGS; do
    dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "setup: installing$missing"
SUDO=""
[ "$(id -u)" = 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q $missing
