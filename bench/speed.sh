#!/bin/sh
# Speed against onnxruntime (issue 18): pfvm `interp bench` and
# onnxruntime-node (bench/ort_bench.js: one intra-op thread, all graph
# optimizations) on the same models with the same input values, runs
# alternating in one window (pfvm first in odd rounds, ORT first in even
# ones), ROUNDS rounds of ITERS runs each; each side keeps the smallest of
# its rounds' medians. Writes bench/speed.md.
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

table=""
for f in tests/models/resnet18/model.onnx tests/models/mobilenet_v2/model.onnx tests/models/squeezenet1_1/model.onnx \
    bench/models/efficientnet_b0.onnx bench/models/shufflenet_v2_x0_5.onnx tests/models/transformer_encoder/model.onnx \
    tests/models/cnn_small/model.onnx tests/models/mlp_mnist/model.onnx tests/models/gpt_small/model.onnx; do
    [ -f "$f" ] || continue
    name=$(echo "$f" | sed -E 's,tests/models/([^/]*)/model.onnx,\1,; s,bench/models/(.*)\.onnx,\1,')
    : >"$tmp/p"
    : >"$tmp/o"
    r=0
    while [ $r -lt "$ROUNDS" ]; do
        for side in 0 1; do
            if [ $(((r + side) % 2)) = 0 ]; then
                build/interp bench "$f" -n "$ITERS" >"$tmp/out"
                sed -n -E 's/^median ([0-9.]+) ms.*/\1/p' "$tmp/out" >>"$tmp/p"
                nodes=$(sed -n -E 's/^([0-9]+) of ([0-9]+) nodes run.*/\1/p' "$tmp/out")
            else
                node bench/ort_bench.js "$f" "$ITERS" "int=$(int_bound "$f")" | sed -E 's/^median ([0-9.]+) ms.*/\1/' >>"$tmp/o"
            fi
        done
        r=$((r + 1))
    done
    p=$(min_of <"$tmp/p")
    o=$(min_of <"$tmp/o")
    row=$(awk -v n="$name" -v p="$p" -v o="$o" -v k="$nodes" 'BEGIN {printf "| %s | %s | %.3f | %.3f | %.2f |", n, k, p, o, p / o}')
    echo "$row"
    table="$table
$row"
done
{
    echo "# Speed: pfvm against onnxruntime, one thread"
    echo
    echo "Made by \`sh bench/speed.sh\` (ROUNDS=$ROUNDS, ITERS=$ITERS) on $(date -u +%Y-%m-%d), $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'),"
    echo "$(grep -m1 -o -w -E 'avx512f|avx2' /proc/cpuinfo | tail -n 1) kernels, onnxruntime-node $(node -e "console.log(require('./bench/.ort/node_modules/onnxruntime-node/package.json').version)") (intra_op_num_threads=1)."
    echo "pfvm: \`interp bench MODEL -n $ITERS\` (default passes; every input varying, integer inputs valid token ids)."
    echo "Each time is the smallest of $ROUNDS medians of $ITERS runs, the two sides alternating; pfvm / ORT below 1 means"
    echo "pfvm is faster. The machine is shared: absolute times move by up to 2x with its load, ratios much less."
    echo
    echo "| model | pfvm nodes run | pfvm ms | ORT ms | pfvm / ORT |"
    echo "| --- | ---: | ---: | ---: | ---: |"
    echo "$table" | sed '/^$/d'
} >bench/speed.md
cat bench/speed.md
