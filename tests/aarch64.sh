#!/bin/sh
# The test suite on 64-bit Arm: cross-compiles interp and the unit tests with
# Debian's aarch64-linux-gnu-gcc into build-a64/ and runs them under
# qemu-aarch64 (user mode): the unit tests, the four ONNX backend suites
# (same known-failures list as the host) and the model fixtures, optimized
# and with --no-opt. This is what tests the kernels' aarch64 paths (NEON)
# and everything that differs with the ABI (char signedness, long double).
#
#   sh tests/aarch64.sh        (tests/run.sh runs it; PFVM_AARCH64=0 skips)
#
# nanopb's runtime for the target comes from Debian's source package, like
# the firmware build (tools/fetch_nanopb.sh). Ends with "N passed, M failed,
# K skipped".
set -u
cd "$(dirname "$0")/.."
B=build-a64
CC=aarch64-linux-gnu-gcc
DATA=${PFVM_TESTDATA:-/usr/share/libonnx-testdata/data}
if ! command -v $CC >/dev/null || ! command -v qemu-aarch64 >/dev/null; then
    echo "aarch64: needs gcc-aarch64-linux-gnu and qemu-user (tools/setup.sh installs them)"
    echo "0 passed, 1 failed"
    exit 1
fi
if ! sh tools/fetch_nanopb.sh build/nanopb-src; then
    echo "aarch64: could not fetch nanopb's runtime sources"
    echo "0 passed, 1 failed"
    exit 1
fi
mkdir -p $B/nanopb
for n in pb_common pb_decode pb_encode; do
    if [ ! -f $B/nanopb/$n.o ]; then
        $CC -O2 -c build/nanopb-src/$n.c -Ibuild/nanopb-src -o $B/nanopb/$n.o || exit 1
    fi
done
rm -f $B/nanopb/libnanopb.a
aarch64-linux-gnu-ar rcs $B/nanopb/libnanopb.a $B/nanopb/pb_*.o
tests=$(ls tests/test_*.c | sed "s|^tests/\(.*\)\.c$|$B/tests/\1|")
if ! make -s -j2 BUILD=$B CC=$CC CFLAGS="-Werror -isystem build/nanopb-src" \
        LDLIBS="$B/nanopb/libnanopb.a -lm" $B/interp $tests >$B/build.log 2>&1; then
    tail -n 20 $B/build.log
    echo "aarch64: build failed"
    echo "0 passed, 1 failed"
    exit 1
fi
QEMU_LD_PREFIX=${QEMU_LD_PREFIX:-/usr/aarch64-linux-gnu}
export QEMU_LD_PREFIX
# tests with a long architecture-independent part leave it to the host run
PFVM_TEST_QUICK=1
export PFVM_TEST_QUICK
pass=0
fail=0
skip=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# Adds the counts of the closing "N passed, M failed[, K skipped]" line.
part() {
    label=$1
    shift
    timeout 900 qemu-aarch64 "$@" >"$log" 2>&1
    grep -E '^(FAIL|XPASS|CRASH)|check failed' "$log" | head -n 20
    line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
    if [ -z "$line" ]; then
        echo "[aarch64 $label] no result line (crashed?)"
        tail -n 5 "$log"
        fail=$((fail + 1))
        return
    fi
    echo "[aarch64 $label] $line"
    pass=$((pass + $(echo "$line" | sed -E 's/^([0-9]+) passed.*/\1/')))
    fail=$((fail + $(echo "$line" | sed -E 's/^[0-9]+ passed, ([0-9]+) failed.*/\1/')))
    case "$line" in *skipped*) skip=$((skip + $(echo "$line" | sed -E 's/.*, ([0-9]+) skipped.*/\1/'))) ;; esac
}
for t in $tests; do
    part "$(basename "$t")" "$t"
done
for s in node pytorch-converted pytorch-operator simple; do
    if [ -d "$DATA/$s" ]; then
        part "onnx-$s" $B/interp test --known tests/known_failures.txt "$DATA/$s"
    fi
done
part models $B/interp test --atol 1e-5 tests/models
part models-noopt $B/interp test --no-opt --atol 1e-5 tests/models
echo "$pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
