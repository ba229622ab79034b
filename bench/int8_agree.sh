#!/bin/sh
# Round 9 of issue 20 (branch int8a9): top-1 agreement of int8 with float
# by quantizer setting, for mobilenet_v2 and resnet18 on N views of natural
# photos (bench/int8_inputs.py "images", seed 2; calibration: 32 views,
# seed 1), all --per-channel. Prints a markdown section on stdout
# (bench/int8.sh appends it to bench/int8.md); run alone:
#   N=100 sh bench/int8_agree.sh
# Rows: the tests/models fixtures, and mobilenet_v2 "photo BN" (bench/
# int8_fixture.py: the same weights, BatchNorm statistics recalibrated on 64
# photo views, seed 3). SQNR: the outputs' signal-to-quantization-noise
# ratio that `interp quantize --report` measures on 8 calibration sets
# (QDQ reference semantics, after any auto-exclusion). Margin: the float
# model's median gap between its top two logits over the N views.
set -e
cd "$(dirname "$0")/.."
N=${N:-100}
PY=/usr/bin/python3
T=${TMPDIR:-/tmp}/pfvm_int8_agree
rm -rf "$T"
mkdir -p "$T"
make -s build/interp >/dev/null
${CC:-cc} -std=c99 -O2 -I. bench/int8_eval.c -o "$T/eval" -lprotobuf-nanopb -lm
S0=$(date +%s)
$PY bench/int8_inputs.py "$T/calib" 32 1 1,3,224,224 images
$PY bench/int8_inputs.py "$T/eval_in" "$N" 2 1,3,224,224 images
$PY bench/int8_fixture.py "$T/mobilenet_v2_photo.onnx" >/dev/null 2>&1
DIRS=$(ls -d "$T"/eval_in/[0-9]*/ | sort)
top1() { awk '{ b = 1; for (i = 2; i <= NF; i++) if ($i + 0 > $b + 0) b = i; print b - 1 }' "$1"; }
margin() { awk '{ a = -1e30; b = -1e30; for (i = 1; i <= NF; i++) { v = $i + 0; if (v > a) { b = a; a = v } else if (v > b) b = v } print a - b }' "$1" | sort -g | awk '{ v[NR] = $1 } END { printf "%.3g", v[int((NR + 1) / 2)] }'; }
# row NAME LABEL FLOAT OPTIONS...
row() {
    name=$1 label=$2 f=$3
    shift 3
    tag=$(echo "$name $*" | tr -c 'a-zA-Z0-9\n' '_')
    if [ ! -f "$T/$name.f.top" ]; then
        "$T/eval" "$f" $DIRS > "$T/$name.f.txt"
        top1 "$T/$name.f.txt" > "$T/$name.f.top"
    fi
    build/interp quantize "$f" --calib "$T/calib" --per-channel --report "$@" -o "$T/$tag.onnx" 2> "$T/$tag.log"
    "$T/eval" "$T/$tag.onnx" $DIRS > "$T/$tag.q.txt"
    top1 "$T/$tag.q.txt" > "$T/$tag.q.top"
    sqnr=$(sed -n -E 's/.*outputs ([-0-9.]+) dB SQNR.*/\1/p' "$T/$tag.log")
    ag=$(paste -d' ' "$T/$name.f.top" "$T/$tag.q.top" | awk '{ n++; if ($1 == $2) s++ } END { printf "%.1f", 100 * s / n }')
    echo "| $label | \`$*\` | $ag% | $sqnr | $(margin "$T/$name.f.txt") |" >> "$T/rows.md"
}
: > "$T/rows.md"
MV=tests/models/mobilenet_v2/model.onnx
RN=tests/models/resnet18/model.onnx
MP=$T/mobilenet_v2_photo.onnx
row mobilenet_v2 mobilenet_v2 $MV --method percentile --percentile 99.9
row mobilenet_v2 mobilenet_v2 $MV --method mse
row mobilenet_v2 mobilenet_v2 $MV --method minmax
row mobilenet_v2 mobilenet_v2 $MV --method percentile --percentile 99.9 --auto-exclude 4
row mobilenet_v2 mobilenet_v2 $MV --method percentile --percentile 99.9 --symmetric
row mobilenet_v2_photo "mobilenet_v2, photo BN" $MP --method percentile --percentile 99.9
row mobilenet_v2_photo "mobilenet_v2, photo BN" $MP --method mse
row resnet18 resnet18 $RN --method percentile --percentile 99.9
row resnet18 resnet18 $RN --method mse
# per-layer: the accumulated SQNR of a few activations in order, from the --report of the percentile rows
layers() {
    grep -E '^quantize:   ' "$1" | awk -v label="$2" '{ n++; s[n] = $5; a[n] = $7 } END {
        printf "| %s | %s | %s | %s | %s | %s | %s |\n", label, s[1], s[int(n / 4)], s[int(n / 2)], s[int(3 * n / 4)], s[n - 2], n }'
}
tag_of() { echo "$*" | tr -c 'a-zA-Z0-9\n' '_'; }
echo "Accumulated SQNR (dB) of the QDQ model's dequantized activations against the float model's,"
echo "in graph order (\`interp quantize --report\`, 8 calibration sets, percentile 99.9):"
echo
echo "| model | input | 1/4 | 1/2 | 3/4 | last before pooling | activations |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
layers "$T/$(tag_of mobilenet_v2 --method percentile --percentile 99.9).log" mobilenet_v2
layers "$T/$(tag_of mobilenet_v2_photo --method percentile --percentile 99.9).log" "mobilenet_v2, photo BN"
layers "$T/$(tag_of resnet18 --method percentile --percentile 99.9).log" resnet18
echo
echo "Each activation quantized alone (everything else float), the outputs' SQNR in dB: the most"
echo "sensitive of mobilenet_v2 (from its --auto-exclude 4 row), and its input (local SQNR 48 dB):"
echo
echo "| activation | alone |"
echo "| --- | --- |"
grep -E '^quantize:   ' "$T/$(tag_of mobilenet_v2 --method percentile --percentile 99.9 --auto-exclude 4).log" |
    awk '{ print $7, $2 }' | sort -g | head -n 5 | awk '{ printf "| %s | %s |\n", $2, $1 }'
grep -E '^quantize:   input ' "$T/$(tag_of mobilenet_v2 --method percentile --percentile 99.9 --auto-exclude 4).log" |
    awk '{ printf "| %s | %s |\n", $2, $7 }'
echo
echo "| model | quantize options (all --per-channel) | top-1 = float ($N) | outputs SQNR dB | float median top-2 margin |"
echo "| --- | --- | --- | --- | --- |"
cat "$T/rows.md"
echo
# the QDQ files of every row are valid ONNX (auto-exclude's too: its dropped pairs leave no dangling node)
$PY -c "import onnx, sys; [onnx.checker.check_model(onnx.load(p), full_check=True) for p in sys.argv[1:]]" "$T"/*_*.onnx &&
    echo "onnx.checker (full_check) accepts the QDQ file of every row."
echo
echo "($(($(date +%s) - S0)) s for N=$N, load average $(cut -d' ' -f1-3 /proc/loadavg).)"
