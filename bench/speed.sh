#!/bin/sh
# Speed against onnxruntime (issue 18): pfvm `interp bench` and
# onnxruntime-node (bench/ort_bench.js: all graph optimizations) on the
# same models with the same input values, at 1 thread (pfvm without a
# parallel-for, ORT intra_op_num_threads=1) and at 2 (pfvm --threads 2,
# ORT intra_op_num_threads=2), runs alternating in one window (the four
# settings in a rotating order: each goes first in turn), ROUNDS rounds of
# ITERS runs each; each keeps the smallest of its rounds' medians. Writes
# bench/speed.md with the ratios pfvm / ORT at each thread count and the
# speed-up of 2 threads over 1 for each side.
#
#   sh bench/speed.sh              ROUNDS=3 ITERS=20
#   ITERS=50 sh bench/speed.sh
#
# Models: the fixtures in tests/models, and bench/models/*.onnx when
# tools/make_bench_models.py has made them (it needs torchvision).
# onnxruntime-node is installed into bench/.ort (git-ignored) with npm.
set -eu
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-3}
ITERS=${ITERS:-20}
make -j2 build/interp >/dev/null
if [ ! -d bench/.ort/node_modules/onnxruntime-node ]; then
    mkdir -p bench/.ort
    (cd bench/.ort && ONNXRUNTIME_NODE_INSTALL=skip npm install --silent onnxruntime-node >/dev/null 2>&1)
fi
/usr/bin/python3 tools/make_bench_models.py >/dev/null 2>&1 || true
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# the exclusive bound of integer inputs (token ids) that `interp bench` picks
int_bound() {
    case "$1" in
    *gpt_small*) echo 50 ;; # the embedding table's rows (tok.weight is 50 x 32)
    *) echo 1 ;;
    esac
}

min_of() {
    sort -g | head -n 1
}

# runs setting $1 (p1 p2 o1 o2) of model $2 once; appends its median to $tmp/$1
run_setting() {
    case "$1" in
    p1) build/interp bench "$2" -n "$ITERS" >"$tmp/out" ;;
    p2) build/interp bench "$2" -n "$ITERS" --threads 2 >"$tmp/out" ;;
    o1) node bench/ort_bench.js "$2" "$ITERS" "int=$(int_bound "$2")" threads=1 >"$tmp/out" ;;
    o2) node bench/ort_bench.js "$2" "$ITERS" "int=$(int_bound "$2")" threads=2 >"$tmp/out" ;;
    esac
    sed -n -E 's/^median ([0-9.]+) ms.*/\1/p' "$tmp/out" >>"$tmp/$1"
    case "$1" in p1) nodes=$(sed -n -E 's/^([0-9]+) of ([0-9]+) nodes run.*/\1/p' "$tmp/out") ;; esac
}

table=""
for f in tests/models/resnet18/model.onnx tests/models/mobilenet_v2/model.onnx tests/models/squeezenet1_1/model.onnx \
    bench/models/efficientnet_b0.onnx bench/models/shufflenet_v2_x0_5.onnx tests/models/transformer_encoder/model.onnx \
    tests/models/cnn_small/model.onnx tests/models/mlp_mnist/model.onnx tests/models/gpt_small/model.onnx; do
    [ -f "$f" ] || continue
    name=$(echo "$f" | sed -E 's,tests/models/([^/]*)/model.onnx,\1,; s,bench/models/(.*)\.onnx,\1,')
    : >"$tmp/p1"
    : >"$tmp/p2"
    : >"$tmp/o1"
    : >"$tmp/o2"
    r=0
    while [ $r -lt "$ROUNDS" ]; do
        case $((r % 4)) in
        0) order="p1 o1 p2 o2" ;;
        1) order="o1 p1 o2 p2" ;;
        2) order="p2 o2 p1 o1" ;;
        *) order="o2 p2 o1 p1" ;;
        esac
        for s in $order; do
            run_setting "$s" "$f"
        done
        r=$((r + 1))
    done
    p1=$(min_of <"$tmp/p1")
    p2=$(min_of <"$tmp/p2")
    o1=$(min_of <"$tmp/o1")
    o2=$(min_of <"$tmp/o2")
    row=$(awk -v n="$name" -v k="$nodes" -v p1="$p1" -v o1="$o1" -v p2="$p2" -v o2="$o2" \
        'BEGIN {printf "| %s | %s | %.3f | %.3f | %.2f | %.3f | %.3f | %.2f | %.2f | %.2f |", n, k, p1, o1, p1 / o1, p2, o2, p2 / o2, p1 / p2, o1 / o2}')
    echo "$row"
    table="$table
$row"
done
{
    echo "# Speed: pfvm against onnxruntime, one and two threads"
    echo
    echo "Made by \`sh bench/speed.sh\` (ROUNDS=$ROUNDS, ITERS=$ITERS) on $(date -u +%Y-%m-%d), $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'),"
    echo "$(nproc) cores, $(grep -m1 -o -w -E 'avx512f|avx2' /proc/cpuinfo | tail -n 1) kernels, onnxruntime-node $(node -e "console.log(require('./bench/.ort/node_modules/onnxruntime-node/package.json').version)") (intra_op_num_threads 1 and 2)."
    echo "pfvm: \`interp bench MODEL -n $ITERS [--threads 2]\` (default passes; every input varying, integer inputs valid token ids)."
    echo "Each time is the smallest of $ROUNDS medians of $ITERS runs, the four settings alternating; pfvm / ORT below 1 means"
    echo "pfvm is faster; 1t / 2t is the speed-up of two threads over one (2 at best). The machine is shared: absolute"
    echo "times move by up to 2x with its load, ratios much less. Load average when the script ended: $(cut -d' ' -f1-3 /proc/loadavg)."
    echo
    echo "| model | pfvm nodes run | pfvm ms, 1 thread | ORT ms, 1 thread | pfvm / ORT, 1 thread | pfvm ms, 2 threads | ORT ms, 2 threads | pfvm / ORT, 2 threads | pfvm 1t / 2t | ORT 1t / 2t |"
    echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
    echo "$table" | sed '/^$/d'
} >bench/speed.md
cat bench/speed.md
