#!/bin/sh
# CPU time per inference of the int8 models, pfvm against onnxruntime on
# the same QDQ files (the ones bench/int8.sh leaves in
# ${TMPDIR:-/tmp}/pfvm_int8_bench), optionally against a second pfvm
# binary (BASE=path/to/interp: an earlier build), alternating within each
# round. On a loaded machine wall-clock medians swing 2x; the task-clock
# of `bench -n ITERS` minus that of `bench -n 2`, over ITERS - 2, counts only this
# process's own time (ITERS=52: of -n 52 minus -n 2, over 50; the load
# and bind time cancel out). Needs perf and onnxruntime-node in bench/.ort.
#   sh bench/int8_cpu.sh                        ROUNDS=3 by default
#   BASE=/tmp/interp_main ROUNDS=6 sh bench/int8_cpu.sh
set -e
cd "$(dirname "$0")/.."
T=${TMPDIR:-/tmp}/pfvm_int8_bench
ROUNDS=${ROUNDS:-3}
ITERS=${ITERS:-52}
MODELS=${MODELS:-"resnet18 mobilenet_v2"}
clock() { perf stat -e task-clock -x, "$@" 2>&1 >/dev/null | awk -F, '/task-clock/ { print $1 }'; }
per_run() { a=$(clock "$@" "$ITERS"); b=$(clock "$@" 2); awk -v a="$a" -v b="$b" -v n="$ITERS" 'BEGIN { printf "%.1f", (a - b) / (n - 2) }'; }
echo "load average $(cut -d' ' -f1-3 /proc/loadavg); ms of CPU per inference"
for m in $MODELS; do
    f=$T/${m}_int8.onnx
    i=0
    while [ $i -lt "$ROUNDS" ]; do
        o=$(per_run node bench/ort_bench.js "$f")
        p=$(per_run build/interp bench "$f" -n)
        line="$m ORT $o pfvm $p"
        [ -n "$BASE" ] && line="$line base $(per_run "$BASE" bench "$f" -n)"
        echo "$line"
        i=$((i + 1))
    done
done
