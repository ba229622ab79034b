#!/bin/sh
# Fusion benchmark (issue 5): pfvm with the optimization passes off
# (--no-opt) and on (the default pipeline, fusion last), and onnxruntime-node
# with one thread, in the same run, on element-wise-heavy graphs made by
# bench/make_fusion_models.py. Prints a markdown table (bench/fusion.md keeps
# a measured one).
#
#   sh bench/fusion.sh            ROWS=4096 (4M-element tensors), ITERS=30
#   ROWS=64 ITERS=200 sh bench/fusion.sh
#   NATIVE=1 sh bench/fusion.sh   pfvm built with -O2 -march=native (build-native/)
#
# Needs the dev-time tools: /usr/bin/python3 with onnx, and npm (installs
# onnxruntime-node into bench/.ort, git-ignored; without npm the ORT column
# is empty). Times are medians (and minimums) of ITERS runs after a warm-up;
# pfvm's runs with the passes off and on alternate in one process (interp
# bench --compare), and off/on is the median of the pairs' ratios, which the
# machine's slow phases move less than they move either median; "bytes
# avoided" is pfvm_pass_stats.bytes_avoided of the fuse pass.
set -eu
cd "$(dirname "$0")/.."
ROWS=${ROWS:-4096}
ITERS=${ITERS:-30}
OUT=bench/models/fusion_$ROWS
if [ "${NATIVE:-0}" = 1 ]; then
    B=build-native
    make -j2 BUILD=$B OPT="-O2 -march=native" $B/interp >/dev/null
else
    B=build
    make -j2 build/interp >/dev/null
fi
/usr/bin/python3 bench/make_fusion_models.py "$OUT" "$ROWS" >/dev/null
ORT=1
if [ ! -d bench/.ort/node_modules/onnxruntime-node ]; then
    mkdir -p bench/.ort
    (cd bench/.ort && ONNXRUNTIME_NODE_INSTALL=skip npm install --silent onnxruntime-node >/dev/null 2>&1) || ORT=0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# "median X ms ... (min Y, ...)" -> "X Y"
ms_of() {
    sed -E 's/^median ([0-9.]+) ms.*min ([0-9.]+).*/\1 \2/'
}

echo "| model | elements | nodes (opt off → on) | groups | bytes avoided | pfvm off ms | pfvm on ms | off/on | ORT 1 thread ms | ORT/on (min) |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
for m in gelu gelu_tanh layernorm swish maxgrad maxgrad_bcast chain_1 chain_2 chain_3 chain_4 chain_5 chain_6 chain_7 chain_8; do
    f="$OUT/$m.onnx"
    $B/interp opt "$f" -o "$tmp/o.onnx" 2>"$tmp/rep" >/dev/null
    before=$(awk 'NR == 2 {print $2}' "$tmp/rep")
    after=$(awk '$1 != "pass" {a = $3} END {print a}' "$tmp/rep")
    groups=$(awk '$1 == "fuse" {print $6}' "$tmp/rep")
    avoided=$(awk '$1 == "fuse" {print $7}' "$tmp/rep")
    # off and on alternating in one process; ratio: median of the pairs' off/on
    set -- $($B/interp bench "$f" --compare -n "$ITERS" |
        sed -E 's/^off median ([0-9.]+) ms \(min ([0-9.]+)\), on median ([0-9.]+) ms \(min ([0-9.]+)\), off\/on median ([0-9.]+).*/\1 \2 \3 \4 \5/')
    off=$1
    off_min=$2
    on=$3
    on_min=$4
    ratio=$5
    ort="" ortmin=""
    if [ $ORT = 1 ]; then
        set -- $(node bench/ort_bench.js "$f" "$ITERS" | sed -E 's/^median ([0-9.]+) ms \(min ([0-9.]+)\)/\1 \2/')
        ort=$1
        ortmin=$2
    fi
    elems=$((ROWS * 1024))
    echo "$m $elems $before $after $groups $avoided $off $off_min $on $on_min $ratio $ort $ortmin" | awk '{
        o = ($13 != "" && $10 > 0) ? sprintf("%.2f", $13 / $10) : ""
        printf "| %s | %d | %d → %d | %d | %.1f MB | %.3f (%.3f) | %.3f (%.3f) | %.2f | %s%s | %s |\n",
            $1, $2, $3, $4, $5, $6 / 1048576, $7, $8, $9, $10, $11, $12, ($13 != "" ? " (" $13 ")" : ""), o }'
done
