#!/bin/sh
# accel back end (issue 21): for each fixture on a target, whether pfvm_accel.h
# lowers it, the compute and traffic lower bounds, the simulated cycles (interp accel
# --simulate on the fixture's test input), the naive baseline's simulated
# cycles (--baseline naive: each node on as many PEs as its output's first
# axis, through DRAM) and the planning time (interp accel without
# --simulate, wall clock, one core). Prints a markdown table; bench/accel.md
# keeps a measured one. A second table: the layout planner's exact and heuristic plans.
#
#   sh bench/accel.sh [TARGET]      default targets/mncore2.txt
#
# The fixtures have static batches (1, 1, 2); resnet18, mobilenet_v2 and the
# TransformerEncoder are also measured at batch 8, copies made by
# tools/make_accel_batch.py (/usr/bin/python3 with onnx and torch) with a
# random input. A model that is not lowered shows the one-line error. "max
# |diff|" is the largest difference between the simulated output 0 and the
# interpreter's (interp run on the same input).
set -eu
cd "$(dirname "$0")/.."
TARGET=${1:-targets/mncore2.txt}
make -j2 build/interp >/dev/null
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
/usr/bin/python3 tools/make_accel_batch.py "$tmp/b8" 8 resnet18 mobilenet_v2 transformer_encoder >/dev/null
now() { date +%s.%N; }
echo "target: \`$TARGET\`"
echo
echo "| model | batch | plan | nodes | on PE 0 (fallback) | compute bound | traffic bound | simulated | of them transfer-bound | simulated / max(bounds) | naive baseline | naive / simulated | planning (s) | program lines | max \\|diff\\| |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
for m in mlp cnn_small squeezenet1_1 resnet18 mobilenet_v2 transformer_encoder gpt_small \
    b8/resnet18 b8/mobilenet_v2 b8/transformer_encoder; do
    case $m in
    b8/*) dir=$tmp/$m batch=8 ;;
    *) dir=tests/models/$m batch=1 ;;
    esac
    name=${m#b8/}
    t0=$(now)
    if build/interp accel "$dir/model.onnx" --target "$TARGET" >"$tmp/plan" 2>"$tmp/err"; then
        t1=$(now)
        set --
        for f in "$dir"/test_data_set_0/input_*.pb; do set -- "$@" -i "$f"; done
        build/interp accel "$dir/model.onnx" --target "$TARGET" -o "$tmp/prog" --simulate "$@" --out "$tmp/o" >"$tmp/sim" 2>"$tmp/err" || true
        build/interp accel "$dir/model.onnx" --target "$TARGET" --baseline naive --simulate "$@" --out "$tmp/on" >"$tmp/naive" 2>/dev/null || true
        build/interp run "$dir/model.onnx" "$@" -o "$tmp/ref" --quiet >/dev/null 2>&1 || true
        diff=$(/usr/bin/python3 tools/compare_pb.py "$tmp/o/output_0.pb" "$tmp/ref/output_0.pb" 2>/dev/null |
            sed -n 's/^max abs diff \([^ ]*\).*/\1/p')
        lines=$(wc -l <"$tmp/prog")
        kind=$(sed -n 's/^plan: \([a-z]*\).*/\1/p' "$tmp/plan")
        [ "$kind" = naive ] && kind=resident
        nodes=$(sed -n 's/^nodes \([0-9]*\),.*/\1/p' "$tmp/plan")
        fb=$(sed -n 's/^fallback: \([0-9]*\) nodes.*/\1/p' "$tmp/plan")
        bound=$(sed -n 's/^compute lower bound \([0-9]*\) cycles.*/\1/p' "$tmp/plan")
        tbound=$(sed -n 's/^traffic lower bound \([0-9]*\) cycles.*/\1/p' "$tmp/plan")
        cyc=$(sed -n 's/^simulated \([0-9]*\) cycles.*/\1/p' "$tmp/sim")
        xfer=$(sed -n 's/^simulated [0-9]* cycles (\([0-9]*\) of them.*/\1/p' "$tmp/sim")
        ncyc=$(sed -n 's/^simulated \([0-9]*\) cycles.*/\1/p' "$tmp/naive")
        ratio=$(awk -v c="${cyc:-0}" -v b="${bound:-0}" -v t="${tbound:-0}" 'BEGIN { if (t > b) b = t; if (b > 0) printf "%.2f", c / b; else print "-" }')
        nratio=$(awk -v c="${cyc:-0}" -v n="${ncyc:-0}" 'BEGIN { if (c > 0 && n > 0) printf "%.0f", n / c; else print "-" }')
        plan=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
        # the layout planner's line (its own cost model), for the table below
        sed -n 's/^layout plan (cost model): \(.*\)$/| '"$name"' | '"$batch"' | \1 |/p' "$tmp/plan" >>"$tmp/layout"
        echo "| $name | $batch | $kind | $nodes | ${fb:-0} | $bound | $tbound | ${cyc:-error: $(cut -c1-80 "$tmp/err")} | ${xfer:-} | $ratio | ${ncyc:--} | $nratio | $plan | $lines | $diff |"
    else
        echo "| $name | $batch | no: $(sed 's/^interp: error: //' "$tmp/err" | cut -c1-110 | sed 's/|/\\|/g') | | | | | | | | | | | | |"
    fi
done
echo
echo "layout planner (pfvm_accel_plan_layouts, README.md \"Layout planner\"; its cost model's cycles, not the simulator's):"
echo
echo "| model | batch | exact search and heuristic |"
echo "| --- | --- | --- |"
cat "$tmp/layout" 2>/dev/null || true
