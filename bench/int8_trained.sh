#!/bin/sh
# Round 10 of issue 20 (branch int8a10): int8 against float on TRAINED
# torchvision networks (bench/int8_train.py: mobilenet_v2 and resnet18,
# layers unchanged, 10-class classifier, trained from scratch on sklearn's
# 8x8 digits rendered at 1x3x32x32 with augmentation, seeded). Prints a
# markdown section on stdout (bench/int8.sh appends it to bench/int8.md):
#   N=500 sh bench/int8_trained.sh
# The trained weights are cached in bench/.int8_fixtures (git-ignored); a
# missing one is trained first (one thread, at load average ~20 on 2 cores:
# mobilenet_v2 20 epochs 750 s, resnet18 4 epochs 213 s). RETRAIN=1 trains
# again. Measured per model and quantizer setting (all --per-channel): float and int8 test accuracy on the 360 held-out digits
# (tools/make_digits.py's split, rendered without augmentation), top-1
# agreement of int8 with float on N augmented views of the held-out digits
# (seed 2; calibration: 32 augmented views of training digits, seed 1),
# the outputs' SQNR (`interp quantize --report`, 8 calibration sets) and
# the float model's median top-2 logit margin over the N views.
set -e
cd "$(dirname "$0")/.."
N=${N:-500}
PY=/usr/bin/python3
FIX=${FIX:-bench/.int8_fixtures}  # the cache of trained weights and their ONNX exports
T=${TMPDIR:-/tmp}/pfvm_int8_trained
rm -rf "$T"
mkdir -p "$T" "$FIX"
# INTERP: an interp binary built from this tree (default build/interp, made here)
INTERP=${INTERP:-build/interp}
[ "$INTERP" != build/interp ] || make -s build/interp >/dev/null
# EVAL: a bench/int8_eval.c binary already built from this tree (skips a slow compile)
if [ -n "$EVAL" ]; then cp "$EVAL" "$T/eval"; else ${CC:-cc} -std=c99 -O2 -I. bench/int8_eval.c -o "$T/eval" -lprotobuf-nanopb -lm; fi
S0=$(date +%s)
ARCHS=${ARCHS:-mobilenet_v2 resnet18}
for a in $ARCHS; do
    epochs=20
    [ "$a" = resnet18 ] && epochs=4
    if [ -n "$RETRAIN" ] || [ ! -f "$FIX/$a.part0.npz" ]; then
        $PY bench/int8_train.py train "$FIX" "$a" $epochs cpu >&2
        rm -f "$FIX/$a.onnx"
    fi
    [ -f "$FIX/$a.onnx" ] || $PY bench/int8_train.py export "$FIX" "$a" "$FIX/$a.onnx" >/dev/null 2>&1
done
$PY bench/int8_train.py test "$T/test"
$PY bench/int8_train.py views "$T/calib" 32 1 train
$PY bench/int8_train.py views "$T/views" "$N" 2 test
TEST=$(ls -d "$T"/test/[0-9]*/ | sort)
VIEWS=$(ls -d "$T"/views/[0-9]*/ | sort)
awk '{ print $2 }' "$T/test/labels.txt" > "$T/test.labels"
awk '{ print $2 }' "$T/views/labels.txt" > "$T/views.labels"
top1() { awk '{ b = 1; for (i = 2; i <= NF; i++) if ($i + 0 > $b + 0) b = i; print b - 1 }' "$1"; }
agree() { paste -d' ' "$1" "$2" | awk '{ n++; if ($1 == $2) s++ } END { printf "%.1f", 100 * s / n }'; }
margin() { awk '{ a = -1e30; b = -1e30; for (i = 1; i <= NF; i++) { v = $i + 0; if (v > a) { b = a; a = v } else if (v > b) b = v } print a - b }' "$1" | sort -g | awk '{ v[NR] = $1 } END { printf "%.3g", v[int((NR + 1) / 2)] }'; }
# row ARCH OPTIONS...: one quantizer setting of one trained model
row() {
    a=$1
    shift
    f=$FIX/$a.onnx
    tag=$(echo "$a $*" | tr -c 'a-zA-Z0-9\n' '_')
    if [ ! -f "$T/$a.f.top" ]; then
        "$T/eval" "$f" $TEST > "$T/$a.ft.txt"
        "$T/eval" "$f" $VIEWS > "$T/$a.f.txt"
        top1 "$T/$a.ft.txt" > "$T/$a.ft.top"
        top1 "$T/$a.f.txt" > "$T/$a.f.top"
    fi
    "$INTERP" quantize "$f" --calib "$T/calib" --per-channel --report "$@" -o "$T/$tag.onnx" 2> "$T/$tag.log"
    "$T/eval" "$T/$tag.onnx" $TEST > "$T/$tag.qt.txt"
    "$T/eval" "$T/$tag.onnx" $VIEWS > "$T/$tag.q.txt"
    top1 "$T/$tag.qt.txt" > "$T/$tag.qt.top"
    top1 "$T/$tag.q.txt" > "$T/$tag.q.top"
    sqnr=$(sed -n -E 's/.*outputs ([-0-9.]+) dB SQNR.*/\1/p' "$T/$tag.log")
    opts=$(echo "--per-channel $*" | sed 's/ *$//')
    echo "| $a | \`$opts\` | $(agree "$T/$a.ft.top" "$T/test.labels")% | $(agree "$T/$tag.qt.top" "$T/test.labels")% | $(agree "$T/$a.f.top" "$T/$tag.q.top")% | $(agree "$T/$a.f.top" "$T/views.labels")% | $sqnr | $(margin "$T/$a.f.txt") |" >> "$T/rows.md"
}
: > "$T/rows.md"
: > "$T/ceiling.md"
: > "$T/right.md"
for a in $ARCHS; do
    row "$a"
    row "$a" --method percentile --percentile 99.9
    row "$a" --method mse
    row "$a" --auto-exclude 2
    row "$a" --auto-exclude 4
    # the ceiling: the float model on the views rounded to the default int8 model's input grid
    $PY bench/int8_inputs.py --round "$T/${a}_.onnx" "$T/views" "$T/$a.viewsq"
    "$T/eval" "$FIX/$a.onnx" $(ls -d "$T/$a.viewsq"/[0-9]*/ | sort) > "$T/$a.fq.txt"
    top1 "$T/$a.fq.txt" > "$T/$a.fq.top"
    echo "| $a | $(agree "$T/$a.f.top" "$T/$a.fq.top")% |" >> "$T/ceiling.md"
    # agreement on the views that the float model classifies right, default settings
    paste -d' ' "$T/$a.f.top" "$T/${a}_.q.top" "$T/views.labels" |
        awk -v a="$a" '$1 == $3 { n++; if ($1 == $2) s++ } END { printf "| %s | %d | %.1f%% |\n", a, n, 100 * s / n }' >> "$T/right.md"
done
layers() {
    grep -E '^quantize:   ' "$1" | awk -v label="$2" '{ n++; s[n] = $5 } END {
        printf "| %s | %s | %s | %s | %s | %s | %s |\n", label, s[1], s[int(n / 4)], s[int(n / 2)], s[int(3 * n / 4)], s[n - 2], n }'
}
echo "| model | quantize options | float test (360) | int8 test (360) | top-1 = float ($N views) | float on the views | outputs SQNR dB | float median top-2 margin |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
cat "$T/rows.md"
echo
echo "Ceiling: the float model on the $N views rounded to the int8 model's input grid (QuantizeLinear ->"
echo "DequantizeLinear of the input alone), top-1 = float; and top-1 = float (default settings) on the"
echo "views that the float model classifies right:"
echo
echo "| model | input rounded: top-1 = float |"
echo "| --- | --- |"
cat "$T/ceiling.md"
echo
echo "| model | views float classifies right | int8 top-1 = float on them |"
echo "| --- | --- | --- |"
cat "$T/right.md"
echo
echo "Accumulated SQNR (dB) of the QDQ model's dequantized activations against the float model's,"
echo "in graph order (\`interp quantize --report\`, 8 calibration sets, default --per-channel options):"
echo
echo "| model | input | 1/4 | 1/2 | 3/4 | last before pooling | activations |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
for a in $ARCHS; do layers "$T/$(echo "$a " | tr -c 'a-zA-Z0-9\n' '_').log" "$a (trained)"; done
echo
$PY -c "import onnx, sys; [onnx.checker.check_model(onnx.load(p), full_check=True) for p in sys.argv[1:]]" "$T"/*_*.onnx &&
    echo "onnx.checker (full_check) accepts the QDQ file of every row."
echo
for a in $ARCHS; do sed 's/^/    /' "$FIX/$a.txt"; done
echo
echo "($(($(date +%s) - S0)) s for N=$N, load average $(cut -d' ' -f1-3 /proc/loadavg).)"
