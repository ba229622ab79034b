#!/bin/sh
# int8 post-training quantization (issue 20): accuracy, model size, arena
# and latency of float vs int8, pfvm vs onnxruntime on the same QDQ model.
# Writes bench/int8.md.
#   sh bench/int8.sh                 N=100 generated inputs per model (N=500: the issue's count)
#   N=500 ITERS=20 sh bench/int8.sh
# Needs /usr/bin/python3 with onnx (and python3-sklearn for the digits
# test set); onnxruntime-node goes into bench/.ort (git-ignored) as in
# bench/fusion.sh, without npm its columns stay empty.
#
# digits: test accuracy on the 360 held-out images (tools/make_digits.py's
# split), calibrated on models/digits_calib (32 training images).
# dscnn, mobilenet_v2, resnet18: top-1 agreement of int8 with float on N
# standard-normal inputs (seed 2), calibrated on 8 others (seed 1).
# Every model is quantized with --per-channel (uint8 activations).
# Latency: median of ITERS runs, one thread, float and int8 alternating
# (two rounds, the lower median kept); "int8 in ORT" runs the QDQ file.
set -e
cd "$(dirname "$0")/.."
N=${N:-100}
ITERS=${ITERS:-10}
PY=/usr/bin/python3
T=${TMPDIR:-/tmp}/pfvm_int8_bench
rm -rf "$T"
mkdir -p "$T"
make -s build/interp >/dev/null
${CC:-cc} -std=c99 -O2 -I. bench/int8_eval.c -o "$T/eval" -lprotobuf-nanopb -lm
ORT=1
if [ ! -d bench/.ort/node_modules/onnxruntime-node ]; then
    mkdir -p bench/.ort
    (cd bench/.ort && ONNXRUNTIME_NODE_INSTALL=skip npm install --silent onnxruntime-node >/dev/null 2>&1) || ORT=0
fi
command -v node >/dev/null 2>&1 || ORT=0

argmax() { awk '{ b = 1; for (i = 2; i <= NF; i++) if ($i + 0 > $b + 0) b = i; print b - 1 }' "$1"; }
# share (in %) of equal lines of two files
agree() { paste -d' ' "$1" "$2" | awk '{ n++; if ($1 == $2) s++ } END { printf "%.1f", n ? 100 * s / n : 0 }'; }
# largest |a - b| over two files of numbers, and the largest |a|
maxdiff() { paste -d'\n' "$1" "$2" | awk 'NR % 2 { split($0, a); next } { n = split($0, b); for (i = 1; i <= n; i++) { d = a[i] - b[i]; d = d < 0 ? -d : d; if (d > m) m = d; v = a[i] < 0 ? -a[i] : a[i]; if (v > r) r = v } } END { printf "%.3g of %.3g", m, r }'; }
bench_ms() { build/interp bench "$1" -n "$ITERS" | sed -n -E 's/^median ([0-9.]+) ms.*/\1/p'; }
ort_ms() { [ $ORT = 1 ] && node bench/ort_bench.js "$1" "$ITERS" | sed -E 's/^median ([0-9.]+) ms.*/\1/' || echo "-"; }
arena() { build/interp plan "$1" | awk -F'\t' '/^symbolic arena bytes/ { print $2 }'; }
min2() { awk -v a="$1" -v b="$2" 'BEGIN { print (a + 0 < b + 0) ? a : b }'; }

ROWS=$T/rows.md
AGREE=$T/agree.md
CEIL=$T/ceiling.md
: > "$ROWS"
: > "$AGREE"
: > "$CEIL"

# model: NAME FLOAT INT8 INPUTDIR SHAPE ACCURACY_FLOAT ACCURACY_INT8 (acc: "x%" strings)
model_row() {
    name=$1 f=$2 q=$3 dir=$4 shape=$5 accf=$6 accq=$7
    fs=$(stat -c %s "$f")
    qs=$(stat -c %s "$q")
    # the arena of what runs: each model after the default passes (int8: QLinearConv)
    build/interp opt "$f" -o "$T/${name}_float_opt.onnx" --quiet
    build/interp opt "$q" -o "$T/${name}_qlinear.onnx" --quiet
    fa=$(arena "$T/${name}_float_opt.onnx")
    qa=$(arena "$T/${name}_qlinear.onnx")
    f1=$(bench_ms "$f"); q1=$(bench_ms "$q"); f2=$(bench_ms "$f"); q2=$(bench_ms "$q")
    fl=$(min2 "$f1" "$f2")
    ql=$(min2 "$q1" "$q2")
    of=$(ort_ms "$f")
    oq=$(ort_ms "$q")
    echo "| $name | $accf | $accq | $fs | $qs | $(awk -v a="$fs" -v b="$qs" 'BEGIN { printf "%.2f", a / b }') | $fa | $qa | $(awk -v a="$fa" -v b="$qa" 'BEGIN { printf "%.2f", a / b }') | $fl | $ql | $(awk -v a="$fl" -v b="$ql" 'BEGIN { printf "%.2f", a / b }') | $of | $oq |" >> "$ROWS"
    if [ $ORT = 1 ]; then
        node bench/int8_ort.js "$q" "$shape" "$dir"/*.bin > "$T/$name.ort.txt"
        ORT_NOOPT=1 node bench/int8_ort.js "$q" "$shape" "$dir"/*.bin > "$T/$name.ortref.txt"
        argmax "$T/$name.ort.txt" > "$T/$name.ort.top"
        argmax "$T/$name.ortref.txt" > "$T/$name.ortref.top"
        echo "| $name | $(agree "$T/$name.q.top" "$T/$name.ort.top")% | $(maxdiff "$T/$name.q.txt" "$T/$name.ort.txt") | $(agree "$T/$name.q.top" "$T/$name.ortref.top")% | $(maxdiff "$T/$name.q.txt" "$T/$name.ortref.txt") | $(agree "$T/$name.ort.top" "$T/$name.ortref.top")% |" >> "$AGREE"
    fi
}

# ---- digits
$PY tools/make_digits_calib.py --test "$T/digits_test"
build/interp quantize models/digits.onnx --calib models/digits_calib --per-channel -o "$T/digits_int8.onnx" 2>"$T/q.log"
dirs=$(ls -d "$T"/digits_test/[0-9]*/ | sort)
"$T/eval" models/digits.onnx $dirs > "$T/digits.f.txt"
"$T/eval" "$T/digits_int8.onnx" $dirs > "$T/digits.q.txt"
awk '{ print $2 }' "$T/digits_test/labels.txt" > "$T/labels"
argmax "$T/digits.f.txt" > "$T/digits.f.top"
argmax "$T/digits.q.txt" > "$T/digits.q.top"
model_row digits models/digits.onnx "$T/digits_int8.onnx" "$T/digits_test" 1,1,8,8 \
    "$(agree "$T/digits.f.top" "$T/labels")% (test)" "$(agree "$T/digits.q.top" "$T/labels")% (test)"

# ---- generated inputs
gen_model() {
    name=$1 f=$2 shape=$3
    $PY bench/int8_inputs.py "$T/$name.calib" 8 1 "$shape"
    $PY bench/int8_inputs.py "$T/$name.eval" "$N" 2 "$shape"
    build/interp quantize "$f" --calib "$T/$name.calib" --per-channel -o "$T/${name}_int8.onnx" 2>>"$T/q.log"
    dirs=$(ls -d "$T/$name.eval"/[0-9]*/ | sort)
    "$T/eval" "$f" $dirs > "$T/$name.f.txt"
    "$T/eval" "$T/${name}_int8.onnx" $dirs > "$T/$name.q.txt"
    argmax "$T/$name.f.txt" > "$T/$name.f.top"
    argmax "$T/$name.q.txt" > "$T/$name.q.top"
    # the ceiling: the float model on inputs rounded to the int8 model's input grid
    $PY bench/int8_inputs.py --round "$T/${name}_int8.onnx" "$T/$name.eval" "$T/$name.evalq"
    "$T/eval" "$f" $(ls -d "$T/$name.evalq"/[0-9]*/ | sort) > "$T/$name.fq.txt"
    argmax "$T/$name.fq.txt" > "$T/$name.fq.top"
    echo "| $name | $(agree "$T/$name.f.top" "$T/$name.fq.top")% |" >> "$CEIL"
    model_row "$name" "$f" "$T/${name}_int8.onnx" "$T/$name.eval" "$shape" "-" \
        "$(agree "$T/$name.f.top" "$T/$name.q.top")% top-1 = float ($N)"
}
gen_model dscnn tests/models/dscnn/model.onnx 1,1,49,10
gen_model mobilenet_v2 tests/models/mobilenet_v2/model.onnx 1,3,224,224
gen_model resnet18 tests/models/resnet18/model.onnx 1,3,224,224

# ---- the QDQ files are valid ONNX (and so is the integer form pfvm runs)
checks=""
for q in "$T"/*_int8.onnx; do
    n=$(basename "$q" _int8.onnx)
    $PY -c "import onnx, sys; [onnx.checker.check_model(onnx.load(p), full_check=True) for p in sys.argv[1:]]" \
        "$q" "$T/${n}_qlinear.onnx" && checks="$checks $n"
done

{
    echo "# int8 quantization"
    echo
    echo "Made by \`N=$N ITERS=$ITERS sh bench/int8.sh\` on $(date -u +%Y-%m-%d), $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'),"
    echo "one thread; int8 GEMM kernel: $(./build/tests/test_quant 2>/dev/null | sed -n 's/^int8 GEMM kernel: //p')."
    echo "Models quantized by \`interp quantize MODEL --calib DIR --per-channel\` (QDQ: uint8 activations,"
    echo "int8 per-channel weights, int32 biases); pfvm runs them after its qlinear pass (QLinearConv)."
    echo "Sizes in bytes (the files), arena in bytes (\`interp plan\` of each model after \`interp opt\`: the"
    echo "integer form for int8), latency in ms (median of $ITERS)."
    echo
    echo "| model | float | int8 | float file | int8 file | ratio | float arena | int8 arena | ratio | pfvm float ms | pfvm int8 ms | speedup | ORT float ms | ORT int8 ms |"
    echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
    cat "$ROWS"
    echo
    if [ $ORT = 1 ]; then
        echo "pfvm's int8 against onnxruntime on the same QDQ file (same inputs as above): ORT as it runs by"
        echo "default (its QDQ fusions and integer kernels) and ORT with graph optimizations disabled (the QDQ"
        echo "graph as written, DequantizeLinear -> float op -> QuantizeLinear: the format's reference meaning)."
        echo "Largest output difference: of the largest output."
        echo
        echo "| model | top-1 = ORT | largest difference | top-1 = ORT reference | largest difference | ORT = ORT reference |"
        echo "| --- | --- | --- | --- | --- | --- |"
        cat "$AGREE"
        echo
    fi
    echo "Ceiling of the generated-input agreement: the float model on the same inputs rounded to the int8"
    echo "model's input grid (QuantizeLinear -> DequantizeLinear of the input alone), top-1 = float:"
    echo
    echo "| model | top-1 = float |"
    echo "| --- | --- |"
    cat "$CEIL"
    echo
    echo "onnx.checker (full_check) accepts the QDQ files and their integer form (\`interp opt\`):$checks."
    echo
    echo "Quantize log:"
    echo
    sed 's/^/    /' "$T/q.log"
} > bench/int8.md
cat bench/int8.md
