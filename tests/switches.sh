#!/bin/sh
# Firmware switches: builds the amalgamated headers with PFVM_NO_AUTODIFF,
# PFVM_NO_FUSION, both, and both with the operator selection that
# `interp ops --config` writes for the model, PFVM_NO_SHAPE_INFERENCE with
# the model planned by `interp opt --planned` (and refusing one without a
# stored plan), each with -Werror (gcc, and
# clang when installed), and runs models/digits.onnx prepared on the host
# by `interp opt` (without the fuse pass for PFVM_NO_FUSION builds) as
# loaded: its outputs must be the plain build's, bit for bit (also with
# the 4x4 matrix tile of 32-bit Arm, PFVM_LA_TILE4, and its direct
# convolution loops, PFVM_CONV_DIRECT, whose rounding
# tests/test_gemm.c checks too; and with PFVM_FLOAT32_ONLY, whose refusals
# tests/test_float32_only.c checks; and with PFVM_NO_THREADS, and
# PFVM_TERSE_MESSAGES, whose message format is checked too, and
# PFVM_POOL_NO_INT8, also on digits quantized: uint8 MaxPool, and
# PFVM_QLINEAR_PACK_PER_RUN on the same; and PFVM_UNARY_F32_ONLY (with
# PFVM_PLANNED_ONLY: the header for the fused model does not write it),
# whose refusals tests/test_float32_only.c checks; and
# PFVM_PLANNED_ONLY, and PFVM_SMALL_KERNELS, and PFVM_LEAN_KERNELS with
# the 4x4 tile, whose rounding tests/test_gemm.c checks too); and a
# depthwise model (dscnn) without Conv's depthwise kernel, near the plain
# build's outputs; and the mlp's GELU folded into one fused call on the host
# (PFVM_FUSE_FOLD), bit-exact. Needs
# build/interp (make). One line per build, then "N passed, M failed".
#
#   sh tests/switches.sh [BUILD_DIR]
set -u
cd "$(dirname "$0")/.."
B=${1:-build}/switches
mkdir -p "$B"
CC=${CC:-cc}
MODEL=models/digits.onnx
INPUT=models/digits_samples/digit_0.pb
pass=0 fail=0
if [ ! -x "${1:-build}/interp" ]; then
    echo "FAIL switches: ${1:-build}/interp not built"
    echo "0 passed, 1 failed"
    exit 1
fi
I=${1:-build}/interp
$I opt $MODEL -o "$B/fused.onnx" >/dev/null 2>&1 &&
    $I opt $MODEL -o "$B/plain.onnx" --passes fold,simplify,cse,bnfold,dce >/dev/null 2>&1 &&
    $I opt $MODEL -o "$B/planned.onnx" --planned >/dev/null 2>&1 &&
    $I opt $MODEL -o "$B/planned_nf.onnx" --planned --passes fold,simplify,cse,bnfold,dce >/dev/null 2>&1 &&
    $I ops --config "$B/fused.onnx" -o "$B/ops.h" || {
    echo "FAIL switches: interp opt / ops --config"
    echo "0 passed, 1 failed"
    exit 1
}
build() { # NAME COMPILER FLAGS...
    name=$1 cc=$2
    shift 2
    # shellcheck disable=SC2068
    nice $cc -std=c99 -Wall -Wextra -pedantic -Werror -O2 -I. $@ tests/switches_main.c -o "$B/$name" \
        -lprotobuf-nanopb -lm 2>"$B/$name.log"
}
build ref "$CC" || { echo "FAIL switches: the plain build:"; head -n 5 "$B/ref.log"; echo "0 passed, 1 failed"; exit 1; }
"$B/ref" "$B/fused.onnx" $INPUT >"$B/ref.out" || { echo "FAIL switches: the plain build does not run"; exit 1; }
compilers=$CC
command -v clang >/dev/null && [ "$CC" != clang ] && compilers="$compilers clang"
for cc in $compilers; do
    for v in "noautodiff:fused:-DPFVM_NO_AUTODIFF" "nofusion:plain:-DPFVM_NO_FUSION" \
        "both:plain:-DPFVM_NO_AUTODIFF -DPFVM_NO_FUSION" "selected:plain:-DPFVM_NO_AUTODIFF -DPFVM_NO_FUSION -include $B/ops.h" \
        "selected_fused:fused:-DPFVM_NO_AUTODIFF -include $B/ops.h" \
        "tile4:fused:-DPFVM_NO_DISPATCH -DPFVM_LA_TILE4 -DPFVM_CONV_DIRECT -DPFVM_EXACT_FMA" \
        "small:fused:-DPFVM_SMALL_KERNELS" \
        "lean:fused:-DPFVM_NO_DISPATCH -DPFVM_LA_TILE4 -DPFVM_LEAN_KERNELS -DPFVM_EXACT_FMA" \
        "planned:planned:-DPFVM_NO_AUTODIFF -DPFVM_NO_SHAPE_INFERENCE -include $B/ops.h" \
        "float32:fused:-DPFVM_FLOAT32_ONLY -DPFVM_ONNX_TENSORS_ONLY" \
        "planned_f32:planned:-DPFVM_NO_AUTODIFF -DPFVM_NO_SHAPE_INFERENCE -DPFVM_FLOAT32_ONLY -DPFVM_ONNX_TENSORS_ONLY -DPFVM_NO_THREADS -include $B/ops.h" \
        "planned_terse:planned:-DPFVM_NO_AUTODIFF -DPFVM_NO_SHAPE_INFERENCE -DPFVM_FLOAT32_ONLY -DPFVM_ONNX_TENSORS_ONLY -DPFVM_NO_THREADS -DPFVM_TERSE_MESSAGES -DPFVM_POOL_NO_INT8 -include $B/ops.h" \
        "planned_nofusion:planned_nf:-DPFVM_NO_AUTODIFF -DPFVM_NO_SHAPE_INFERENCE -DPFVM_FLOAT32_ONLY -DPFVM_ONNX_TENSORS_ONLY -DPFVM_NO_THREADS -DPFVM_TERSE_MESSAGES -DPFVM_POOL_NO_INT8 -DPFVM_NO_FUSION -include $B/ops.h" \
        "planned_only:planned_nf:-DPFVM_NO_AUTODIFF -DPFVM_PLANNED_ONLY -DPFVM_FLOAT32_ONLY -DPFVM_ONNX_TENSORS_ONLY -DPFVM_NO_THREADS -DPFVM_TERSE_MESSAGES -DPFVM_POOL_NO_INT8 -DPFVM_UNARY_F32_ONLY -DPFVM_NO_FUSION -include $B/ops.h"; do
        name=${v%%:*} rest=${v#*:}
        model=${rest%%:*} flags=${rest#*:}
        exe="$name-$(basename "$cc")"
        if ! build "$exe" "$cc" $flags; then
            echo "FAIL $exe ($flags): compile:"
            head -n 5 "$B/$exe.log"
            fail=$((fail + 1))
        elif ! "$B/$exe" "$B/$model.onnx" $INPUT >"$B/$exe.out" 2>&1 || ! cmp -s "$B/ref.out" "$B/$exe.out"; then
            echo "FAIL $exe ($flags, $model.onnx): outputs differ from the plain build's: $(head -n 2 "$B/$exe.out" | tr '\n' ' ')"
            fail=$((fail + 1))
        else
            echo "ok   $exe ($flags, $model.onnx): $(wc -l <"$B/ref.out") outputs bit-exact; $(size "$B/$exe" | awk 'NR == 2 { print $1 }') B text (plain $(size "$B/ref" | awk 'NR == 2 { print $1 }'))"
            pass=$((pass + 1))
        fi
    done
done
# without inference, a model without a stored plan is refused when bound
exe="planned-$(basename "$CC")"
if [ -x "$B/$exe" ] && ! "$B/$exe" "$B/fused.onnx" $INPUT >"$B/$exe.unplanned" 2>&1 &&
    grep -q "no stored plan" "$B/$exe.unplanned"; then
    echo "ok   $exe refuses a model without a stored plan"
    pass=$((pass + 1))
else
    echo "FAIL $exe with a model without a stored plan: $(head -n 2 "$B/$exe.unplanned" 2>/dev/null | tr '\n' ' ')"
    fail=$((fail + 1))
fi
# terse messages: the code's name and where in the header, no format strings
exe="planned_terse-$(basename "$CC")"
if [ -x "$B/$exe" ] && ! "$B/$exe" "$B/fused.onnx" $INPUT >"$B/$exe.unplanned" 2>&1 &&
    grep -qE '^FAIL: [a-z/ ]+ \(([^ ]*/)?pfvm(_onnx)?\.h:[0-9]+\)$' "$B/$exe.unplanned"; then
    echo "ok   $exe refuses a model without a stored plan: $(cat "$B/$exe.unplanned")"
    pass=$((pass + 1))
else
    echo "FAIL $exe with a model without a stored plan: $(head -n 2 "$B/$exe.unplanned" 2>/dev/null | tr '\n' ' ')"
    fail=$((fail + 1))
fi
# bad stored plans on the device's code path (no inference): errors, never crashes
if ! nice $CC -std=c99 -Wall -Wextra -pedantic -Werror -O1 -g -I. -Itests -DSTORED_PLAN_AMALGAMATED -DPFVM_NO_AUTODIFF \
    -DPFVM_NO_SHAPE_INFERENCE -include "$B/ops.h" tests/test_stored_plan.c -o "$B/stored_plan_device" \
    -lprotobuf-nanopb -lm 2>"$B/stored_plan_device.log"; then
    echo "FAIL stored_plan_device: compile:"
    head -n 5 "$B/stored_plan_device.log"
    fail=$((fail + 1))
elif ! "$B/stored_plan_device" "$B/planned.onnx" >"$B/stored_plan_device.out" 2>&1; then
    echo "FAIL stored_plan_device: $(tail -n 3 "$B/stored_plan_device.out" | tr '\n' ' ')"
    fail=$((fail + 1))
else
    echo "ok   stored_plan_device: tests/test_stored_plan.c without inference: $(tail -n 1 "$B/stored_plan_device.out")"
    pass=$((pass + 1))
fi
# the same with PFVM_PLANNED_ONLY (no symbols: a dim without a number is refused on load)
if ! nice $CC -std=c99 -Wall -Wextra -pedantic -Werror -O1 -g -I. -Itests -DSTORED_PLAN_AMALGAMATED -DPFVM_NO_AUTODIFF \
    -DPFVM_PLANNED_ONLY -include "$B/ops.h" tests/test_stored_plan.c -o "$B/stored_plan_planned_only" \
    -lprotobuf-nanopb -lm 2>"$B/stored_plan_planned_only.log"; then
    echo "FAIL stored_plan_planned_only: compile:"
    head -n 5 "$B/stored_plan_planned_only.log"
    fail=$((fail + 1))
elif ! "$B/stored_plan_planned_only" "$B/planned.onnx" >"$B/stored_plan_planned_only.out" 2>&1; then
    echo "FAIL stored_plan_planned_only: $(tail -n 3 "$B/stored_plan_planned_only.out" | tr '\n' ' ')"
    fail=$((fail + 1))
else
    echo "ok   stored_plan_planned_only: tests/test_stored_plan.c with PFVM_PLANNED_ONLY: $(tail -n 1 "$B/stored_plan_planned_only.out")"
    pass=$((pass + 1))
fi
# float32-only kernels: float32 results, clean refusals of double tensors (tests/test_float32_only.c)
if ! nice $CC -std=c99 -Wall -Wextra -pedantic -Werror -O1 -g -I. -Itests -DFLOAT32_ONLY_AMALGAMATED -DPFVM_FLOAT32_ONLY \
    tests/test_float32_only.c -o "$B/float32_only" -lprotobuf-nanopb -lm 2>"$B/float32_only.log"; then
    echo "FAIL float32_only: compile:"
    head -n 5 "$B/float32_only.log"
    fail=$((fail + 1))
elif ! "$B/float32_only" >"$B/float32_only.out" 2>&1; then
    echo "FAIL float32_only: $(tail -n 3 "$B/float32_only.out" | tr '\n' ' ')"
    fail=$((fail + 1))
else
    echo "ok   float32_only: tests/test_float32_only.c with PFVM_FLOAT32_ONLY: $(tail -n 1 "$B/float32_only.out")"
    pass=$((pass + 1))
fi
# the unary operators without the general element-wise engine
# (PFVM_UNARY_F32_ONLY): float32 Relu's values, clean refusals of double
# and int8 Relu; alone and with PFVM_FLOAT32_ONLY (tests/test_float32_only.c);
# and float pooling on planes only (PFVM_POOL_PLANES_ONLY, with the lean
# kernels' plane loop): the same values, a 3-D window refused with
# PFVM_FLOAT32_ONLY
for v in "unary_f32:-DPFVM_UNARY_F32_ONLY" "unary_f32_float32:-DPFVM_UNARY_F32_ONLY -DPFVM_FLOAT32_ONLY" \
    "pool_planes:-DPFVM_POOL_PLANES_ONLY -DPFVM_LEAN_KERNELS" \
    "pool_planes_float32:-DPFVM_POOL_PLANES_ONLY -DPFVM_FLOAT32_ONLY -DPFVM_LEAN_KERNELS"; do
    name=${v%%:*} flags=${v#*:}
    # shellcheck disable=SC2086
    if ! nice $CC -std=c99 -Wall -Wextra -pedantic -Werror -O1 -g -I. -Itests -DFLOAT32_ONLY_AMALGAMATED $flags \
        tests/test_float32_only.c -o "$B/$name" -lprotobuf-nanopb -lm 2>"$B/$name.log"; then
        echo "FAIL $name: compile:"
        head -n 5 "$B/$name.log"
        fail=$((fail + 1))
    elif ! "$B/$name" >"$B/$name.out" 2>&1; then
        echo "FAIL $name: $(tail -n 3 "$B/$name.out" | tr '\n' ' ')"
        fail=$((fail + 1))
    else
        echo "ok   $name: tests/test_float32_only.c with $flags: $(tail -n 1 "$B/$name.out")"
        pass=$((pass + 1))
    fi
done
# MaxPool without its 8-bit planes (PFVM_POOL_NO_INT8): digits quantized
# (uint8 MaxPool) runs the generic loop, with the plain build's bits
if ! { $I quantize $MODEL --calib models/digits_calib --per-channel -o "$B/q8.qdq.onnx" >/dev/null 2>&1 &&
    $I opt "$B/q8.qdq.onnx" -o "$B/q8.onnx" >/dev/null 2>&1 && "$B/ref" "$B/q8.onnx" $INPUT >"$B/ref_q8.out"; }; then
    echo "FAIL pool_noint8: quantizing digits or running the plain build on it"
    fail=$((fail + 1))
elif ! build pool_noint8 "$CC" -DPFVM_POOL_NO_INT8; then
    echo "FAIL pool_noint8: compile:"
    head -n 5 "$B/pool_noint8.log"
    fail=$((fail + 1))
elif ! "$B/pool_noint8" "$B/q8.onnx" $INPUT >"$B/pool_noint8.out" 2>&1 || ! cmp -s "$B/ref_q8.out" "$B/pool_noint8.out"; then
    echo "FAIL pool_noint8 (PFVM_POOL_NO_INT8, digits int8): outputs differ from the plain build's: $(head -n 2 "$B/pool_noint8.out" | tr '\n' ' ')"
    fail=$((fail + 1))
else
    echo "ok   pool_noint8 (PFVM_POOL_NO_INT8, digits int8, uint8 MaxPool): $(wc -l <"$B/ref_q8.out") outputs bit-exact"
    pass=$((pass + 1))
fi
# QLinearConv packing its weights per run (PFVM_QLINEAR_PACK_PER_RUN, no
# packed copy kept from bind): same bits as the plain build, with gcc and clang
for cc in $compilers; do
    n=qpack_$cc
    if [ ! -s "$B/ref_q8.out" ]; then
        echo "FAIL $n: no reference output (see pool_noint8)"
        fail=$((fail + 1))
    elif ! build $n "$cc" -DPFVM_QLINEAR_PACK_PER_RUN; then
        echo "FAIL $n: compile:"
        head -n 5 "$B/$n.log"
        fail=$((fail + 1))
    elif ! "$B/$n" "$B/q8.onnx" $INPUT >"$B/$n.out" 2>&1 || ! cmp -s "$B/ref_q8.out" "$B/$n.out"; then
        echo "FAIL $n (PFVM_QLINEAR_PACK_PER_RUN, digits int8): outputs differ from the plain build's: $(head -n 2 "$B/$n.out" | tr '\n' ' ')"
        fail=$((fail + 1))
    else
        echo "ok   $n (PFVM_QLINEAR_PACK_PER_RUN, digits int8): $(wc -l <"$B/ref_q8.out") outputs bit-exact"
        pass=$((pass + 1))
    fi
done
# Conv without its depthwise kernel (PFVM_CONV_NO_DEPTHWISE, which ops.h
# sets for digits, checked above): a depthwise model's planes run as
# matrix products, other roundings, so within a tolerance of the plain build
DW=tests/models/dscnn
float_near() { # two files of float bits (hex, one a line): equal within 1e-4 + 1e-3 relative
    [ "$(wc -l <"$1")" = "$(wc -l <"$2")" ] && [ -s "$1" ] || return 1
    paste "$1" "$2" | while read -r a b; do echo $((0x$a)) $((0x$b)); done | awk '
        function f(u,    s, e, m) {
            s = u >= 2147483648; if (s) u -= 2147483648
            e = int(u / 8388608); m = u % 8388608
            return (s ? -1 : 1) * (e ? (1 + m / 8388608) * 2 ^ (e - 127) : m / 8388608 * 2 ^ -126)
        }
        { x = f($1); y = f($2); d = x - y; if (d < 0) d = -d; if (d > 1e-4 + 1e-3 * (x < 0 ? -x : x)) bad++ }
        END { exit bad > 0 }'
}
if ! build nodw "$CC" -DPFVM_CONV_NO_DEPTHWISE -DPFVM_NO_THREADS; then
    echo "FAIL nodw: compile:"
    head -n 5 "$B/nodw.log"
    fail=$((fail + 1))
elif ! "$B/ref" $DW/model.onnx $DW/test_data_set_0/input_0.pb >"$B/ref_dscnn.out" ||
    ! "$B/nodw" $DW/model.onnx $DW/test_data_set_0/input_0.pb >"$B/nodw.out" 2>&1 ||
    ! float_near "$B/ref_dscnn.out" "$B/nodw.out"; then
    echo "FAIL nodw (PFVM_CONV_NO_DEPTHWISE, $DW): outputs not near the plain build's: $(head -n 2 "$B/nodw.out" | tr '\n' ' ')"
    fail=$((fail + 1))
else
    echo "ok   nodw (PFVM_CONV_NO_DEPTHWISE PFVM_NO_THREADS, $DW): $(wc -l <"$B/ref_dscnn.out") outputs near the plain build's ($(cmp -s "$B/ref_dscnn.out" "$B/nodw.out" && echo same bits || echo other bits))"
    pass=$((pass + 1))
fi
# GELU written out folded into one fused call (PFVM_FUSE_FOLD: what 32-bit
# builds do by default) on the host: the mlp's Div, Erf, Add, Mul, Mul as one
# step per value, the operators' own bits
ML=tests/models/mlp
if ! $I opt $ML/model.onnx -o "$B/mlp_fused.onnx" >/dev/null 2>&1 ||
    ! "$B/ref" "$B/mlp_fused.onnx" $ML/test_data_set_0/input_0.pb >"$B/ref_mlp.out"; then
    echo "FAIL fusefold: preparing $ML or running the plain build on it"
    fail=$((fail + 1))
elif ! build fusefold "$CC" -DPFVM_FUSE_FOLD; then
    echo "FAIL fusefold: compile:"
    head -n 5 "$B/fusefold.log"
    fail=$((fail + 1))
elif ! "$B/fusefold" "$B/mlp_fused.onnx" $ML/test_data_set_0/input_0.pb >"$B/fusefold.out" 2>&1 ||
    ! cmp -s "$B/ref_mlp.out" "$B/fusefold.out"; then
    echo "FAIL fusefold (PFVM_FUSE_FOLD, $ML): outputs differ from the plain build's: $(head -n 2 "$B/fusefold.out" | tr '\n' ' ')"
    fail=$((fail + 1))
else
    echo "ok   fusefold (PFVM_FUSE_FOLD, $ML fused): $(wc -l <"$B/ref_mlp.out") outputs bit-exact"
    pass=$((pass + 1))
fi
# the direct convolution loops of 32-bit Arm (PFVM_CONV_DIRECT, in the tile4
# build above: grouped, strided and depthwise convolutions read in place)
# round as the matrix engine and the depthwise kernel do: bit for bit
for m in cnn_small dscnn; do
    t=tests/models/$m
    if ! "$B/ref" $t/model.onnx $t/test_data_set_0/input_0.pb >"$B/ref_$m.out" ||
        ! "$B/tile4-$(basename "$CC")" $t/model.onnx $t/test_data_set_0/input_0.pb >"$B/direct_$m.out" 2>&1 ||
        ! cmp -s "$B/ref_$m.out" "$B/direct_$m.out"; then
        echo "FAIL direct (PFVM_CONV_DIRECT, $t): outputs differ from the plain build's: $(head -n 2 "$B/direct_$m.out" | tr '\n' ' ')"
        fail=$((fail + 1))
    else
        echo "ok   direct (PFVM_CONV_DIRECT, $t): $(wc -l <"$B/ref_$m.out") outputs bit-exact"
        pass=$((pass + 1))
    fi
done
# the matrix engine's rounding rule with the Cortex-M tile (tests/test_gemm.c)
if ! nice $CC -std=c99 -Wall -Wextra -pedantic -Werror -O2 -I. -Itests -DGEMM_AMALGAMATED -DPFVM_NO_DISPATCH \
    -DPFVM_LA_TILE4 -DPFVM_EXACT_FMA tests/test_gemm.c -o "$B/gemm_tile4" -lprotobuf-nanopb -lm 2>"$B/gemm_tile4.log"; then
    echo "FAIL gemm_tile4: compile:"
    head -n 5 "$B/gemm_tile4.log"
    fail=$((fail + 1))
elif ! "$B/gemm_tile4" >"$B/gemm_tile4.out" 2>&1; then
    echo "FAIL gemm_tile4: $(tail -n 1 "$B/gemm_tile4.out")"
    fail=$((fail + 1))
else
    echo "ok   gemm_tile4: tests/test_gemm.c with the 4x4 tile of 32-bit Arm: $(tail -n 1 "$B/gemm_tile4.out")"
    pass=$((pass + 1))
fi
# the same rule with PFVM_SMALL_KERNELS' one loop nest (tests/test_gemm.c)
if ! nice $CC -std=c99 -Wall -Wextra -pedantic -Werror -O2 -I. -Itests -DGEMM_AMALGAMATED -DPFVM_NO_DISPATCH \
    -DPFVM_SMALL_KERNELS -DPFVM_EXACT_FMA tests/test_gemm.c -o "$B/gemm_small" -lprotobuf-nanopb -lm 2>"$B/gemm_small.log"; then
    echo "FAIL gemm_small: compile:"
    head -n 5 "$B/gemm_small.log"
    fail=$((fail + 1))
elif ! "$B/gemm_small" >"$B/gemm_small.out" 2>&1; then
    echo "FAIL gemm_small: $(tail -n 1 "$B/gemm_small.out")"
    fail=$((fail + 1))
else
    echo "ok   gemm_small: tests/test_gemm.c with PFVM_SMALL_KERNELS: $(tail -n 1 "$B/gemm_small.out")"
    pass=$((pass + 1))
fi
# and with PFVM_LEAN_KERNELS (the tile, the matrix-vector loops, the loop nest)
if ! nice $CC -std=c99 -Wall -Wextra -pedantic -Werror -O2 -I. -Itests -DGEMM_AMALGAMATED -DPFVM_NO_DISPATCH \
    -DPFVM_LA_TILE4 -DPFVM_LEAN_KERNELS -DPFVM_EXACT_FMA tests/test_gemm.c -o "$B/gemm_lean" -lprotobuf-nanopb -lm 2>"$B/gemm_lean.log"; then
    echo "FAIL gemm_lean: compile:"
    head -n 5 "$B/gemm_lean.log"
    fail=$((fail + 1))
elif ! "$B/gemm_lean" >"$B/gemm_lean.out" 2>&1; then
    echo "FAIL gemm_lean: $(tail -n 1 "$B/gemm_lean.out")"
    fail=$((fail + 1))
else
    echo "ok   gemm_lean: tests/test_gemm.c with PFVM_LEAN_KERNELS and the 4x4 tile: $(tail -n 1 "$B/gemm_lean.out")"
    pass=$((pass + 1))
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
