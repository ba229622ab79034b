#!/bin/sh
# Runs every test of pfvm and prints one closing line "N passed, M failed".
#
#   sh tests/run.sh [BUILD_DIR]        (make test calls this)
#
# Parts: unit tests (build/tests/test_*), the ONNX backend suites from
# Debian's libonnx-testdata run by `interp test` (known failures in
# tests/known_failures.txt count as skipped; one that passes is a failure,
# so the list only shrinks; the node suite runs twice, optimized as
# `interp test` does by default and with --no-opt), the model fixtures under
# tests/models (optimized and with --no-opt), the command-line checks in
# tests/cli.sh, the headers' public boundary in tests/boundary.sh, the
# packages (make install, pkg-config, CMake) in tests/packaging.sh, the
# layers' separate links in tests/layers.sh, the firmware tests under
# QEMU (tests/mcu/run.sh) and the suites on 64-bit Arm under qemu-aarch64
# (tests/aarch64.sh). With
# PFVM_ASAN=1 the same suites run again with the AddressSanitizer +
# UndefinedBehaviorSanitizer build in build-asan/, and the fuzz targets
# (tests/fuzz, clang + libFuzzer + ASan + UBSan) replay the committed
# regression corpus under tests/fuzz/regress (part "fuzz").
set -u
cd "$(dirname "$0")/.."
BUILD=${1:-build}
DATA=${PFVM_TESTDATA:-/usr/share/libonnx-testdata/data}
KNOWN=tests/known_failures.txt
total_pass=0
total_fail=0
total_skip=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT

# Adds the counts of the last "N passed, M failed[, K skipped]" line of $log.
tally() {
    label=$1
    line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
    if [ -z "$line" ]; then
        echo "[$label] no result line (crashed?)"
        tail -n 5 "$log"
        total_fail=$((total_fail + 1))
        return
    fi
    p=$(echo "$line" | sed -E 's/^([0-9]+) passed.*/\1/')
    f=$(echo "$line" | sed -E 's/^[0-9]+ passed, ([0-9]+) failed.*/\1/')
    s=0
    case "$line" in *skipped*) s=$(echo "$line" | sed -E 's/.*, ([0-9]+) skipped.*/\1/') ;; esac
    total_pass=$((total_pass + p))
    total_fail=$((total_fail + f))
    total_skip=$((total_skip + s))
    echo "[$label] $line"
}

run_part() {
    label=$1
    shift
    "$@" >"$log" 2>&1
    status=$?
    grep -E '^(FAIL|XPASS|CRASH)|check failed|ERROR|runtime error' "$log" | head -n 40
    tally "$label"
    if [ $status -ne 0 ] && ! grep -qE '^[0-9]+ passed, [1-9][0-9]* failed' "$log"; then
        echo "[$label] exited with status $status"
        total_fail=$((total_fail + 1))
    fi
}

suites() {
    bdir=$1
    tag=$2
    fork=$3
    for t in "$bdir"/tests/test_*; do
        [ -x "$t" ] || continue
        run_part "$tag$(basename "$t")" "$t"
    done
    if [ -d "$DATA/node" ]; then
        for s in node pytorch-converted pytorch-operator simple; do
            run_part "${tag}onnx-$s" "$bdir/interp" test $fork --known "$KNOWN" "$DATA/$s"
        done
        # the optimization passes must not change a result: the node suite
        # again as loaded, under the same known-failures list
        run_part "${tag}onnx-node-noopt" "$bdir/interp" test $fork --no-opt --known "$KNOWN" "$DATA/node"
    else
        echo "[${tag}onnx] $DATA not found: install libonnx-testdata"
        total_fail=$((total_fail + 1))
    fi
    run_part "${tag}models" "$bdir/interp" test $fork --atol 1e-5 tests/models
    run_part "${tag}models-noopt" "$bdir/interp" test $fork --no-opt --atol 1e-5 tests/models
    if [ -f tests/cli.sh ]; then
        run_part "${tag}cli" sh tests/cli.sh "$bdir"
    fi
    # the headers' public boundary (exported symbols, private stb_ds, two
    # PFVM_STATIC copies, C++): once, not per build
    if [ -z "$tag" ] && [ -f tests/boundary.sh ]; then
        run_part "boundary" sh tests/boundary.sh "$bdir"
        if command -v clang >/dev/null && command -v clang++ >/dev/null; then
            run_part "boundary-clang" env CC=clang CXX=clang++ sh tests/boundary.sh "$bdir"
        fi
    fi
    if [ -z "$tag" ] && [ -f tests/layers.sh ]; then
        run_part "layers" sh tests/layers.sh "$bdir"
    fi
    if [ -z "$tag" ] && [ -f tests/packaging.sh ]; then
        run_part "packaging" sh tests/packaging.sh
    fi
}

suites "$BUILD" "" ""
# firmware: every model on QEMU's Cortex-M4F and Cortex-M7 boards, bit for
# bit against the host (tests/mcu/run.sh; PFVM_MCU=0 leaves it out)
if [ "${PFVM_MCU:-1}" = 1 ]; then
    run_part mcu sh tests/mcu/run.sh
fi
# 64-bit Arm: the unit tests, ONNX suites and fixtures cross-compiled and run
# under qemu-aarch64 (tests/aarch64.sh; PFVM_AARCH64=0 leaves it out)
if [ "${PFVM_AARCH64:-1}" = 1 ]; then
    run_part aarch64 sh tests/aarch64.sh
fi
if [ "${PFVM_ASAN:-0}" = 1 ]; then
    # in one process, so that LeakSanitizer sees every case at exit (a
    # forked child ends with _exit, which skips the leak check)
    ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
    export ASAN_OPTIONS
    suites build-asan "asan:" --no-fork
    run_part fuzz sh tests/fuzz/replay.sh
fi

echo "$total_pass passed, $total_fail failed, $total_skip skipped"
[ $total_fail -eq 0 ]
