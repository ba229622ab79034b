#!/bin/sh
# Builds pfvm and runs every test; the last line is "N passed, M failed".
# Installs what it needs (Debian packages) first. CI runs this.
set -eu
cd "$(dirname "$0")"
sh tools/setup.sh
python3 amalgamate.py --check
# warnings are errors here: gcc and clang must both build clean
make -j2 all CFLAGS=-Werror >/dev/null
make -j2 BUILD=build-clang CC=clang CFLAGS=-Werror build-clang/interp build-clang/libpfvm.a >/dev/null
make -j2 asan >/dev/null
sh tests/arm.sh
PFVM_ASAN=1 sh tests/run.sh build
