#!/bin/sh
# One thread, before and after a change, against onnxruntime: BASE (an
# `interp` built from the earlier commit), build/interp and onnxruntime-node
# (bench/ort_bench.js, intra_op_num_threads 1) alternating on each conv net
# in a rotating order, ROUNDS rounds of ITERS runs; each keeps the smallest
# of its rounds' medians. Prints a markdown table (bench/speed.sh makes the
# full one; this is the quicker check under load).
#
#   git worktree add /tmp/base MAIN && make -C /tmp/base build/interp
#   BASE=/tmp/base/build/interp sh bench/speed_ab.sh
set -eu
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-3}
ITERS=${ITERS:-20}
BASE=${BASE:?BASE: the earlier interp}
MODELS=${MODELS:-"tests/models/resnet18/model.onnx tests/models/mobilenet_v2/model.onnx tests/models/squeezenet1_1/model.onnx bench/models/efficientnet_b0.onnx bench/models/shufflenet_v2_x0_5.onnx"}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
run() {
    case "$1" in
    b) "$BASE" bench "$2" -n "$ITERS" >"$tmp/out" ;;
    a) build/interp bench "$2" -n "$ITERS" >"$tmp/out" ;;
    o) node bench/ort_bench.js "$2" "$ITERS" int=1 threads=1 >"$tmp/out" ;;
    esac
    sed -n -E 's/^median ([0-9.]+) ms.*/\1/p' "$tmp/out" >>"$tmp/$1"
}
echo "| model | before ms | after ms | ORT ms | before / ORT | after / ORT | after / before |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"
for f in $MODELS; do
    [ -f "$f" ] || continue
    name=$(echo "$f" | sed -E 's,tests/models/([^/]*)/model.onnx,\1,; s,bench/models/(.*)\.onnx,\1,')
    : >"$tmp/b"
    : >"$tmp/a"
    : >"$tmp/o"
    r=0
    while [ $r -lt "$ROUNDS" ]; do
        case $((r % 3)) in
        0) order="b a o" ;;
        1) order="a o b" ;;
        *) order="o b a" ;;
        esac
        for s in $order; do
            run "$s" "$f"
        done
        r=$((r + 1))
    done
    b=$(sort -g "$tmp/b" | head -n 1)
    a=$(sort -g "$tmp/a" | head -n 1)
    o=$(sort -g "$tmp/o" | head -n 1)
    awk -v n="$name" -v b="$b" -v a="$a" -v o="$o" \
        'BEGIN {printf "| %s | %.3f | %.3f | %.3f | %.2f | %.2f | %.2f |\n", n, b, a, o, b / o, a / o, a / b}'
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
