#!/bin/sh
# Checks the optimizer against onnx and onnxruntime (dev-time). For each
# model: `interp opt` must succeed, onnx's checker must accept the saved
# model (when /usr/bin/python3 has onnx), and onnxruntime-node must give
# the saved model's outputs equal to the original's on the same inputs
# (bench/ort_compare.js; the backend tests' own inputs where they exist).
#
#   sh bench/opt_check.sh [--build DIR] [MODEL.onnx | TESTDIR]...
#
# Without models: tests/models, tests/shapes and a selection of the ONNX
# backend tests (the operators the passes rewrite, and the torch suites).
# Needs onnxruntime-node, installed under bench/ or the repository root:
#   (cd bench && ONNXRUNTIME_NODE_INSTALL=skip npm install --no-save onnxruntime-node)
# Ends with "N passed, M failed, K skipped" (skipped: onnxruntime cannot
# run the original, or its outputs are random).
set -u
cd "$(dirname "$0")/.."
BUILD=build
if [ "${1:-}" = "--build" ]; then
    BUILD=$2
    shift 2
fi
INTERP=$BUILD/interp
DATA=${PFVM_TESTDATA:-/usr/share/libonnx-testdata/data}
if ! (cd bench && node -e "require('onnxruntime-node')") >/dev/null 2>&1; then
    echo "opt_check: onnxruntime-node is not installed (see the comment at the top)" >&2
    exit 2
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ $# -eq 0 ]; then
    set -- tests/models/* tests/shapes/*.onnx
    if [ -d "$DATA/node" ]; then
        for d in "$DATA"/node/test_*; do
            case "$(basename "$d")" in
            test_batchnorm* | test_reshape* | test_transpose* | test_squeeze* | test_unsqueeze* | test_flatten* | \
                test_identity* | test_dropout* | test_cast_* | test_pad* | test_slice* | test_concat* | test_expand* | \
                test_tile* | test_sum* | test_mean* | test_max_one* | test_min_one* | test_constant* | test_shape* | \
                test_conv_* | test_gemm* | test_matmul* | test_add* | test_mul* | test_div* | test_sub* | test_pow*)
                set -- "$@" "$d" ;;
            esac
        done
        set -- "$@" "$DATA"/pytorch-converted/* "$DATA"/pytorch-operator/* "$DATA"/simple/*
    fi
fi

fail=0
k=0
: >"$tmp/manifest"
: >"$tmp/saved"
for arg in "$@"; do
    case $arg in /*) ;; *) arg=$PWD/$arg ;; esac
    if [ -d "$arg" ]; then model=$arg/model.onnx; else model=$arg; fi
    case $model in *.onnx) ;; *) continue ;; esac
    [ -f "$model" ] || continue
    k=$((k + 1))
    out=$tmp/$k.onnx
    if ! "$INTERP" opt "$model" -o "$out" --quiet 2>"$tmp/err"; then
        echo "FAIL $model: interp opt: $(head -c 300 "$tmp/err")"
        fail=$((fail + 1))
        continue
    fi
    echo "$out $model" >>"$tmp/saved"
    line="$model	$out"
    if [ -d "$arg/test_data_set_0" ]; then
        i=0
        while [ -f "$arg/test_data_set_0/input_$i.pb" ]; do
            line="$line	$arg/test_data_set_0/input_$i.pb"
            i=$((i + 1))
        done
    fi
    printf '%s\n' "$line" >>"$tmp/manifest"
done

# onnx's checker over every saved model, in one process
if /usr/bin/python3 -c "import onnx.checker" 2>/dev/null && [ -s "$tmp/saved" ]; then
    # shellcheck disable=SC2046
    /usr/bin/python3 tools/onnx_check.py $(cut -d' ' -f1 "$tmp/saved") >"$tmp/check" 2>&1
    while read -r verdict path rest; do
        if [ "$verdict" = FAIL ]; then
            echo "FAIL $(grep "^$path " "$tmp/saved" | cut -d' ' -f2): onnx checker: $rest"
            fail=$((fail + 1))
        fi
    done <"$tmp/check"
fi

(cd bench && node ort_compare.js "$tmp/manifest") >"$tmp/ort" 2>&1
grep -v '^[0-9]* passed' "$tmp/ort"
summary=$(grep -E '^[0-9]+ passed' "$tmp/ort" | tail -n 1)
if [ -z "$summary" ]; then
    echo "opt_check: ort_compare.js ended without a result"
    echo "0 passed, $((fail + 1)) failed, 0 skipped"
    exit 1
fi
p=$(echo "$summary" | sed -E 's/^([0-9]+) passed.*/\1/')
f=$(echo "$summary" | sed -E 's/^[0-9]+ passed, ([0-9]+) failed.*/\1/')
s=$(echo "$summary" | sed -E 's/.*, ([0-9]+) skipped.*/\1/')
# a model that failed the checker may still have passed onnxruntime
p=$((p - fail > 0 ? p - fail : 0))
echo "$p passed, $((f + fail)) failed, $s skipped"
[ $((f + fail)) -eq 0 ]
