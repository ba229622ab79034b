#!/bin/sh
# Builds pfvm's fuzz targets with clang, libFuzzer, AddressSanitizer and
# UndefinedBehaviorSanitizer into build-fuzz/ (see tests/fuzz/README):
#
#   sh tests/fuzz/build.sh            every target: build-fuzz/fuzz/<target>
#
# src/ is compiled once into build-fuzz/libpfvm.a with coverage
# instrumentation (-fsanitize=fuzzer-no-link) through the Makefile, with
# PFVM_NO_DISPATCH as `make asan` (the portable kernels), then each target
# links it. CC may name another clang (default clang).
set -eu
cd "$(dirname "$0")/../.."
CC=${CC:-clang}
SAN="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
OPT="-O1 -g -DPFVM_NO_DISPATCH"
make -s -j2 BUILD=build-fuzz CC="$CC" OPT="$OPT" SAN="-fsanitize=fuzzer-no-link $SAN" build-fuzz/libpfvm.a
mkdir -p build-fuzz/fuzz
for src in tests/fuzz/fuzz_*.c; do
    t=$(basename "$src" .c)
    out=build-fuzz/fuzz/$t
    if [ ! -x "$out" ] || [ "$src" -nt "$out" ] || [ tests/fuzz/fuzz_common.h -nt "$out" ] ||
        [ build-fuzz/libpfvm.a -nt "$out" ]; then
        $CC -std=c99 -Wall -Wextra -pedantic -Werror $OPT -fsanitize=fuzzer $SAN -Isrc -Itests/fuzz \
            "$src" build-fuzz/libpfvm.a -o "$out" -lprotobuf-nanopb -lm
    fi
done
