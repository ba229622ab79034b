#!/bin/sh
# Makes the seed corpora under build-fuzz/corpus/<target>/ (not committed:
# tens of MB) from the ONNX backend suites of Debian's libonnx-testdata:
#
#   sh tests/fuzz/seeds.sh [DATA_DIR]
#
# model targets (fuzz_load_infer, fuzz_roundtrip, fuzz_run): every
#   model.onnx of node, pytorch-converted, pytorch-operator and simple,
#   named <suite>_<test>.onnx;
# fuzz_value: input_0.pb and output_0.pb of each test's first data set;
# fuzz_sym: a few stack programs (the target's byte code, see fuzz_sym.c);
# every target: the committed tests/fuzz/regress and tests/fuzz/corpus files.
# libFuzzer merges duplicates by coverage when it loads a corpus.
set -eu
cd "$(dirname "$0")/../.."
DATA=${1:-${PFVM_TESTDATA:-/usr/share/libonnx-testdata/data}}
C=build-fuzz/corpus
mkdir -p $C/models $C/fuzz_value $C/fuzz_sym
for suite in node pytorch-converted pytorch-operator simple; do
    [ -d "$DATA/$suite" ] || continue
    for d in "$DATA/$suite"/*/; do
        t=$(basename "$d")
        [ -f "$d/model.onnx" ] && cp "$d/model.onnx" "$C/models/${suite}_$t.onnx"
        for f in input_0 output_0; do
            [ -f "$d/test_data_set_0/$f.pb" ] && cp "$d/test_data_set_0/$f.pb" "$C/fuzz_value/${suite}_${t}_$f.pb"
        done
    done
done
# the three model targets share the model seeds (each keeps its own corpus)
for t in fuzz_load_infer fuzz_roundtrip fuzz_run; do
    mkdir -p $C/$t
    cp -n $C/models/* $C/$t/ 2>/dev/null || true
done
for t in fuzz_load_infer fuzz_roundtrip fuzz_run fuzz_value fuzz_sym; do
    for d in tests/fuzz/regress/$t tests/fuzz/corpus/$t; do
        [ -d $d ] && { cp -n $d/* $C/$t/ 2>/dev/null || true; }
    done
done
# fuzz_sym: (a+1)*2, floor(c/2)*2 + c mod 2, min(a,b)-max(a,b), eq(d, d+0)
printf '\002\000\000\001\017\000\002\005' >$C/fuzz_sym/seed_addmul
printf '\002\002\000\002\006\002\002\000\002\005\002\002\000\002\010\003' >$C/fuzz_sym/seed_divmod
printf '\002\000\002\001\011\002\000\002\001\012\004' >$C/fuzz_sym/seed_minmax
printf '\002\003\002\003\000\000\003\013\016' >$C/fuzz_sym/seed_eq
echo "corpora in $C: $(ls $C/models | wc -l) models, $(ls $C/fuzz_value | wc -l) value files"
