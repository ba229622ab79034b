#!/bin/sh
# Thread scaling of pfvm alone: `interp bench MODEL --threads T` for each
# thread count and each interp build, the settings alternating in every round;
# each time is the smallest of ROUNDS medians of ITERS runs. Prints a markdown
# table of times and speed-ups over one thread (no onnxruntime: the issue's
# "2 threads >= 1.8x one thread" is pfvm's own ratio, so this runs on any
# machine that can run a static interp, e.g. a quiet many-core one).
#
#   INTERPS="main=build/interp" THREADS="1 2 4" ROUNDS=3 ITERS=20 sh bench/threads.sh [MODEL.onnx...]
#
# INTERPS is a list of label=path pairs (A/B builds measured side by side).
set -eu
cd "$(dirname "$0")/.."
INTERPS=${INTERPS:-main=build/interp}
THREADS=${THREADS:-1 2}
ROUNDS=${ROUNDS:-3}
ITERS=${ITERS:-20}
if [ $# -eq 0 ]; then
    set -- tests/models/resnet18/model.onnx tests/models/mobilenet_v2/model.onnx tests/models/squeezenet1_1/model.onnx
    for f in bench/models/efficientnet_b0.onnx bench/models/shufflenet_v2_x0_5.onnx; do
        [ -f "$f" ] && set -- "$@" "$f"
    done
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

model_name() {
    echo "$1" | sed -E 's,.*/([^/]*)/model.onnx,\1,; s,.*/(.*)\.onnx,\1,'
}

header="| model | build |"
rule="| --- | --- |"
for t in $THREADS; do header="$header ms, $t thr |"; rule="$rule ---: |"; done
for t in $THREADS; do [ "$t" = 1 ] || { header="$header 1t / ${t}t |"; rule="$rule ---: |"; }; done
echo "$(nproc) cores, $(grep -m1 -o -E 'model name.*' /proc/cpuinfo | sed 's/model name[[:space:]]*: //'), ROUNDS=$ROUNDS ITERS=$ITERS, load before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "$header"
echo "$rule"
for f in "$@"; do
    name=$(model_name "$f")
    r=0
    while [ "$r" -lt "$ROUNDS" ]; do
        for pair in $INTERPS; do
            label=${pair%%=*}
            bin=${pair#*=}
            for t in $THREADS; do
                "$bin" bench "$f" -n "$ITERS" --threads "$t" | sed -n -E 's/^median ([0-9.]+) ms.*/\1/p' >>"$tmp/$label.$t"
            done
        done
        r=$((r + 1))
    done
    for pair in $INTERPS; do
        label=${pair%%=*}
        row="| $name | $label |"
        for t in $THREADS; do
            row="$row $(sort -g "$tmp/$label.$t" | head -n 1) |"
        done
        one=$(sort -g "$tmp/$label.1" 2>/dev/null | head -n 1)
        for t in $THREADS; do
            [ "$t" = 1 ] && continue
            row="$row $(awk -v a="$one" -v b="$(sort -g "$tmp/$label.$t" | head -n 1)" 'BEGIN { printf "%.2f", a / b }') |"
        done
        echo "$row"
        rm -f "$tmp/$label".*
    done
done
echo
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
