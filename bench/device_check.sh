#!/bin/sh
# Runs on a lent many-core x86 machine (the `run` device of the development
# environment, which has no compilers or packages): checks the AVX-512
# kernels, which the 2-core development machine (AVX2 only) cannot run, and
# fuzzes the model targets with many jobs at once. Everything it runs is
# built here beforehand and packed into build-fuzz/dev.tar.xz:
#   fuzz/      tests/fuzz/build.sh's targets (debug info stripped)
#   lib/       libstdc++ and libgcc_s of the build machine
#   interp, tests/test_*   build/ binaries (gcc -O2, run-time dispatch)
#   gemm, peak bench/gemm.c (OpenBLAS linked statically) and bench/peak.c
#   node.tar.xz the ONNX node suite (libonnx-testdata)
# Results go to $OUT (bench/fuzz.md and bench/gemm.md quote them).
#
#   sh bench/device_check.sh FUZZ_SECONDS
#   FUZZ_ONLY=1 EXTRA_CORPUS=new_corpus.tgz sh bench/device_check.sh 300
set -u
cd "$(dirname "$0")/.."
secs=${1:-420}
out=${OUT:-/tmp/device-out}
mkdir -p "$out"
d=build-fuzz/dev
mkdir -p $d && tar xJf build-fuzz/dev.tar.xz -C $d
export LD_LIBRARY_PATH="$PWD/$d/lib"
{ lscpu; nproc; free -g; } >"$out/machine.txt" 2>&1
grep -o -w -E 'avx512f|avx512_vnni|avx512vnni|avx2|fma' /proc/cpuinfo | sort | uniq -c >>"$out/machine.txt"
# inputs found by an earlier run (its new_corpus.tgz), if given
[ -n "${EXTRA_CORPUS:-}" ] && mkdir -p build-fuzz/extra && tar xzf "$EXTRA_CORPUS" -C build-fuzz/extra &&
    for c in build-fuzz/extra/corpus/*/; do cp "$c"* "tests/fuzz/corpus/$(basename "$c")/"; done
# fuzzing in the background, leaving a few cores for the kernel checks
FUZZ_BIN=$d/fuzz sh tests/fuzz/many.sh "$secs" "$out/fuzz" fuzz_run:5 fuzz_load_infer:4 fuzz_roundtrip:3 \
    >"$out/fuzz.txt" 2>&1 &
[ -n "${FUZZ_ONLY:-}" ] || {
    for t in $d/tests/*; do echo "== $t"; $t 2>&1 | tail -n 3; done
    echo "== models"; $d/interp test --atol 1e-5 tests/models 2>&1 | tail -n 3
    echo "== models --no-opt"; $d/interp test --no-opt --atol 1e-5 tests/models 2>&1 | tail -n 3
    mkdir -p $d/data && tar xJf $d/node.tar.xz -C $d/data
    echo "== node suite"; $d/interp test --known tests/known_failures.txt $d/data/node 2>&1 | tail -n 5
    echo "== peak"; $d/peak
    echo "== gemm"; OPENBLAS_NUM_THREADS=1 $d/gemm 0.3
} >"$out/kernels.txt" 2>&1
wait
# the working corpora's new small inputs, to merge into the committed ones
(cd "$out/fuzz" && for c in corpus/*/; do
    find "$c" -type f -size -2k -newer "${c%/}.start"; done | tar czf "$out/new_corpus.tgz" -T -)
rm -rf "$out/fuzz/corpus"
tar czf "$out/findings.tgz" -C "$out/fuzz" findings && rm -rf "$out/fuzz/findings"
cat "$out/fuzz.txt"
