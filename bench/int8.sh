#!/bin/sh
# int8 post-training quantization (issue 20): accuracy, model size, arena
# and latency of float vs int8, pfvm vs onnxruntime on the same QDQ model.
# Writes bench/int8.md.
#   sh bench/int8.sh                 N=100 generated inputs per model (N=500: the issue's count)
#   N=500 ITERS=20 sh bench/int8.sh
# N_ORT (default 100, at most N): how many of them onnxruntime runs for the
# pfvm-against-ORT table; N_NOISE (default 100): the noise-input rows.
# Needs /usr/bin/python3 with onnx (and python3-sklearn for the digits
# test set); onnxruntime-node goes into bench/.ort (git-ignored) as in
# bench/fusion.sh, without npm its columns stay empty.
#
# digits: test accuracy on the 360 held-out images (tools/make_digits.py's
# split), calibrated on models/digits_calib (32 training images).
# mobilenet_v2, resnet18: top-1 agreement of int8 with float on N views of
# natural photos (bench/int8_inputs.py's "images": random crops, flips and
# colour jitter of sklearn's china.jpg and flower.jpg, ImageNet-normalized;
# seed 2), calibrated on 32 other views (seed 1) with --method percentile
# --percentile 99.9. Their previous measurement (standard-normal inputs,
# seed 2, min/max calibration on 8 others, seed 1) stays as extra rows on
# N_NOISE inputs. dscnn (MFCC-shaped input, no photo applies): standard-
# normal inputs as before.
# Every model is quantized with --per-channel (uint8 activations).
# Latency: median of ITERS runs, one thread, float and int8 alternating
# (two rounds, the lower median kept); "int8 in ORT" runs the QDQ file.
set -e
cd "$(dirname "$0")/.."
N=${N:-100}
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
ITERS=${ITERS:-10}
N_ORT=${N_ORT:-100}
[ "$N_ORT" -le "$N" ] || N_ORT=$N
N_NOISE=${N_NOISE:-100}
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
: > "$T/q.log"
AGREE=$T/agree.md
CEIL=$T/ceiling.md
NOISE=$T/noise.md
: > "$NOISE"
: > "$T/weights.md"
: > "$ROWS"
: > "$AGREE"
: > "$CEIL"

# model: NAME FLOAT INT8 INPUTDIR SHAPE ACCURACY_FLOAT ACCURACY_INT8 (acc: "x%" strings)
model_row() {
    name=$1 f=$2 q=$3 dir=$4 shape=$5 accf=$6 accq=$7
    fs=$(stat -c %s "$f")
    qs=$(stat -c %s "$q")
    # the arena of what runs: each model after the default passes (int8: QLinearConv, QLinearAdd, QGemm)
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
        # the first N_ORT inputs (onnxruntime's time is not what this measures)
        bins=$(ls "$dir"/*.bin | sort | head -n "$N_ORT")
        head -n "$N_ORT" "$T/$name.q.txt" > "$T/$name.qs.txt"
        argmax "$T/$name.qs.txt" > "$T/$name.qs.top"
        node bench/int8_ort.js "$q" "$shape" $bins > "$T/$name.ort.txt"
        ORT_NOOPT=1 node bench/int8_ort.js "$q" "$shape" $bins > "$T/$name.ortref.txt"
        argmax "$T/$name.ort.txt" > "$T/$name.ort.top"
        argmax "$T/$name.ortref.txt" > "$T/$name.ortref.top"
        echo "| $name | $(agree "$T/$name.qs.top" "$T/$name.ort.top")% | $(maxdiff "$T/$name.qs.txt" "$T/$name.ort.txt") | $(agree "$T/$name.qs.top" "$T/$name.ortref.top")% | $(maxdiff "$T/$name.qs.txt" "$T/$name.ortref.txt") | $(agree "$T/$name.ort.top" "$T/$name.ortref.top")% |" >> "$AGREE"
    fi
}

# ---- digits
$PY tools/make_digits_calib.py --test "$T/digits_test"
printf 'digits: ' >> "$T/q.log"
build/interp quantize models/digits.onnx --calib models/digits_calib --per-channel -o "$T/digits_int8.onnx" 2>>"$T/q.log"
dirs=$(ls -d "$T"/digits_test/[0-9]*/ | sort)
"$T/eval" models/digits.onnx $dirs > "$T/digits.f.txt"
"$T/eval" "$T/digits_int8.onnx" $dirs > "$T/digits.q.txt"
awk '{ print $2 }' "$T/digits_test/labels.txt" > "$T/labels"
argmax "$T/digits.f.txt" > "$T/digits.f.top"
argmax "$T/digits.q.txt" > "$T/digits.q.top"
model_row digits models/digits.onnx "$T/digits_int8.onnx" "$T/digits_test" 1,1,8,8 \
    "$(agree "$T/digits.f.top" "$T/labels")% (test)" "$(agree "$T/digits.q.top" "$T/labels")% (test)"

# ---- generated inputs
# the float model's and the int8 model's top-1 on every input folder of $2
run_both() {
    rb=$T/$1
    dirs=$(ls -d "$2"/[0-9]*/ | sort)
    "$T/eval" "$3" $dirs > "$rb.f.txt"
    "$T/eval" "$4" $dirs > "$rb.q.txt"
    argmax "$rb.f.txt" > "$rb.f.top"
    argmax "$rb.q.txt" > "$rb.q.top"
}

# the previous measurement: N_NOISE standard-normal inputs, min/max on 8 others
noise_row() {
    name=$1 f=$2 shape=$3
    $PY bench/int8_inputs.py "$T/$name.ncalib" 8 1 "$shape"
    $PY bench/int8_inputs.py "$T/$name.neval" "$N_NOISE" 2 "$shape"
    printf '%s, noise inputs: ' "$name" >> "$T/q.log"
    build/interp quantize "$f" --calib "$T/$name.ncalib" --per-channel -o "$T/${name}_noise_int8.onnx" 2>>"$T/q.log"
    run_both "$name.noise" "$T/$name.neval" "$f" "$T/${name}_noise_int8.onnx"
    echo "| $name | $(agree "$T/$name.noise.f.top" "$T/$name.noise.q.top")% top-1 = float ($N_NOISE) |" >> "$NOISE"
}

# gen_model NAME FLOAT SHAPE KIND NCALIB QUANTIZE-OPTIONS...
gen_model() {
    name=$1 f=$2 shape=$3 kind=$4 ncal=$5
    shift 5
    $PY bench/int8_inputs.py "$T/$name.calib" "$ncal" 1 "$shape" "$kind"
    $PY bench/int8_inputs.py "$T/$name.eval" "$N" 2 "$shape" "$kind"
    printf '%s, %s inputs: ' "$name" "$kind" >> "$T/q.log"
    build/interp quantize "$f" --calib "$T/$name.calib" --per-channel "$@" -o "$T/${name}_int8.onnx" 2>>"$T/q.log"
    run_both "$name" "$T/$name.eval" "$f" "$T/${name}_int8.onnx"
    # the ceiling: the float model on inputs rounded to the int8 model's input grid
    $PY bench/int8_inputs.py --round "$T/${name}_int8.onnx" "$T/$name.eval" "$T/$name.evalq"
    "$T/eval" "$f" $(ls -d "$T/$name.evalq"/[0-9]*/ | sort) > "$T/$name.fq.txt"
    argmax "$T/$name.fq.txt" > "$T/$name.fq.top"
    echo "| $name | $(agree "$T/$name.f.top" "$T/$name.fq.top")% |" >> "$CEIL"
    model_row "$name" "$f" "$T/${name}_int8.onnx" "$T/$name.eval" "$shape" "-" \
        "$(agree "$T/$name.f.top" "$T/$name.q.top")% top-1 = float ($N)"
}
gen_model dscnn tests/models/dscnn/model.onnx 1,1,49,10 noise 8
gen_model mobilenet_v2 tests/models/mobilenet_v2/model.onnx 1,3,224,224 images 32 --method percentile --percentile 99.9
gen_model resnet18 tests/models/resnet18/model.onnx 1,3,224,224 images 32 --method percentile --percentile 99.9
noise_row mobilenet_v2 tests/models/mobilenet_v2/model.onnx 1,3,224,224
noise_row resnet18 tests/models/resnet18/model.onnx 1,3,224,224

# ---- the weights alone: float initializers of the float file against the int8 file's
# int8 weights and int32 biases (what the file holds besides: scales, zero points, nodes)
for n in digits dscnn mobilenet_v2 resnet18; do
    case $n in digits) f=models/digits.onnx ;; *) f=tests/models/$n/model.onnx ;; esac
    $PY -c "
import sys, onnx
from onnx import numpy_helper as h
def parts(p):
    m = onnx.load(p)
    d = {}
    for t in m.graph.initializer:
        a = h.to_array(t)
        d[a.dtype.name] = d.get(a.dtype.name, 0) + a.nbytes
    return d, sum(len(x.SerializeToString()) for x in m.graph.node)
f, fn = parts(sys.argv[2])
q, qn = parts(sys.argv[3])
fw = f.get('float32', 0)
qw = q.get('int8', 0) + q.get('int32', 0)
print('| %s | %d | %d | %.2f | %d | %d | %d |' % (sys.argv[1], fw, qw, fw / qw, q.get('float32', 0), q.get('uint8', 0), qn))
" "$n" "$f" "$T/${n}_int8.onnx" >> "$T/weights.md"
done

# ---- the QDQ files are valid ONNX (and so is the integer form pfvm runs)
checks=""
for n in digits dscnn mobilenet_v2 resnet18; do
    q=$T/${n}_int8.onnx
    $PY -c "import onnx, sys; [onnx.checker.check_model(onnx.load(p), full_check=True) for p in sys.argv[1:]]" \
        "$q" "$T/${n}_qlinear.onnx" && checks="$checks $n"
done

# ---- round 9: top-1 agreement by quantizer setting, per-layer SQNR (bench/int8_agree.sh)
N=$N sh bench/int8_agree.sh > "$T/agree9.md"
# ---- round 10: trained mobilenet_v2 (and resnet18) on the digits (bench/int8_trained.sh; cached weights)
N=$N EVAL="$T/eval" sh bench/int8_trained.sh > "$T/trained10.md"

{
    echo "# int8 quantization"
    echo
    echo "Made by \`N=$N ITERS=$ITERS sh bench/int8.sh\` on $(date -u +%Y-%m-%d), $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'),"
    echo "one thread; int8 GEMM kernel: $(./build/tests/test_quant 2>/dev/null | sed -n 's/^int8 GEMM kernel: //p');"
    echo "load average at the start $LOAD0, at the end $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) cores: latencies are ratios of runs alternated within one call)."
    echo "Models quantized by \`interp quantize MODEL --calib DIR --per-channel\` (QDQ: uint8 activations,"
    echo "int8 per-channel weights, int32 biases); pfvm runs them after its qlinear pass (QLinearConv; residual Adds as QLinearAdd, the float-output classifier Gemm as QGemm)."
    echo "digits: its 360 held-out test images. mobilenet_v2, resnet18 (torchvision architectures with"
    echo "untrained weights): $N views of natural photos (random crops of 8-100% of the area, flips, +-20%"
    echo "brightness/contrast/saturation of sklearn's china.jpg and flower.jpg, ImageNet-normalized; seed 2),"
    echo "calibrated on 32 other views (seed 1, different crops) with \`--method percentile --percentile 99.9\`."
    echo "dscnn: $N standard-normal inputs (seed 2), min/max calibration on 8 others (seed 1)."
    echo "pfvm against onnxruntime: the first $N_ORT of those inputs."
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
    echo "Weights alone (bytes of tensor data): the float file's float initializers against the int8 file's"
    echo "int8 weights and int32 biases; the int8 file also holds float scales (per channel for weights and"
    echo "biases), uint8 activation zero points, and its nodes (QuantizeLinear/DequantizeLinear pairs, in"
    echo "protobuf bytes), which small models feel most."
    echo
    echo "| model | float weights | int8 weights + int32 biases | ratio | float scales | uint8 zero points | node bytes |"
    echo "| --- | --- | --- | --- | --- | --- | --- |"
    cat "$T/weights.md"
    echo
    echo "Previous measurement of the generated-input agreement, kept for comparison: standard-normal"
    echo "inputs (seed 2), min/max calibration on 8 others (seed 1), --per-channel:"
    echo
    echo "| model | int8 |"
    echo "| --- | --- |"
    cat "$NOISE"
    echo
    echo "onnx.checker (full_check) accepts the QDQ files and their integer form (\`interp opt\`):$checks."
    echo
    echo "Quantize log:"
    echo
    sed 's/^/    /' "$T/q.log"
    echo
    # where the issue's numbers stand (written by hand from the run of 2026-11-27)
    cat <<'PFVM_INT8_STATUS'
## Against the issue's numbers (this run, 2026-11-27, and the quiet reruns below)

- Digits CNN: int8 test accuracy 99.2% = float 99.2% (within 1 point: met).
- Top-1 agreement with float >= 97% on 500 generated inputs, per-channel weights: resnet18 100.0%
  (untrained, photo views, the table above) and 100.0% (trained, "Round 10: agreement" below);
  mobilenet_v2 98.6% on the trained fixture (torchvision's mobilenet_v2, layers unchanged, trained
  here on the digits at 32x32, 500 augmented views: "Round 10: agreement" below): met. The
  untrained 224x224 mobilenet_v2 agrees on 74.2% only: its logits are nearly flat (median top-2
  margin 0.04, below its 8-bit noise: "Round 9: agreement"), so its top-1 is decided by noise in
  any 8-bit runtime (onnxruntime and pfvm agree with each other on 96% of it); it is kept as a
  row, not claimed. No pretrained ImageNet weights can be fetched here (Debian and npm only).
- Cortex-M4, instructions per int8 multiply-accumulate (bench/int8_mcu.md): digits 1.26, DS-CNN
  1.45 (<= 1.5: met).
- x86, one thread: int8 at least 1.5x pfvm's float: mobilenet_v2 2.31x, resnet18 4.27x in this
  run (load 16-22), 2.09x / 2.45x in the quiet runs: met. No slower than onnxruntime on the same
  QDQ file: this run pfvm int8 / ORT int8 resnet18 48.6 / 51.5 ms (0.94), mobilenet_v2 19.9 /
  20.2 ms (0.99), wall-clock medians at load 16-22; the quiet CPU-time rerun after round 12
  (`ROUNDS=5 sh bench/int8_cpu.sh`, load 0.0-0.3, "Round 12" below) resnet18 0.95x (every
  round below 1), mobilenet_v2 0.88x (medians): met.
- Model files: the int8 weights are 4.00x smaller than the float weights (one byte for four);
  with the int32 biases (as the QDQ format stores them) 3.94-3.99x on mobilenet_v2, resnet18 and
  digits, 3.71x on the DS-CNN (many small layers: biases weigh more); whole files 2.03-3.96x
  (scales, zero points and QuantizeLinear/DequantizeLinear nodes). Arena: 1/4 of float's on every
  model (<= 1/3: met).

PFVM_INT8_STATUS
    # the rounds' notes (measured by hand; kept here so that a rerun keeps them)
    cat <<'PFVM_INT8_NOTES'
Round 8 (x86 int8 speed, branch int8x8): the machine this run had reports AVX-512 VNNI
(`avx512_vnni`, `avx512vl` in /proc/cpuinfo; an AMD EPYC again), which the previous run's
did not (its onnxruntime added u8 x s8 pairs in saturating int16 there, hence top-1 = ORT
40% then and 96% now: ORT's kernels are exact with VNNI too). QLinearConv's GEMM gained a
`vpdpbusd` kernel behind run-time dispatch (`pfvm_q_vnni()`): uint8 im2col panels (4
reduction positions per int32 lane) against int8 weights packed once at bind with their row
sums (the input zero point rides in each row's starting sum), 4x16 tiles requantized in
registers two rows per store, per-row parameters made once per layer. Exact: the unit tests
compare it byte for byte with the AVX2 kernel and the portable C on random shapes (odd K,
rows % 4, strides 2 and 3, dilation, groups, pads wider than the input, per-channel scales,
random zero points, x 255 against w -128). Depthwise layers, QLinearAdd and the AVX2 path
are unchanged. Before/after in one session, alternating main (848b7b0) and this branch on the
same QDQ files, at load average ~16 on 2 cores: CPU time per inference (task-clock of
`interp bench -n 22` minus `-n 2`, over 20) resnet18 44.5 -> 18.8 and 38.8 -> 17.1 ms
(2.37x, 2.27x), mobilenet_v2 10.2 -> 6.8 and 12.9 -> 9.7 ms (1.50x, 1.33x); wall-clock
medians of 10 (same alternation): resnet18 1.87x, 1.94x, mobilenet_v2 0.65x and 1.78x (noise).
Targets, from round 8's table (then at the top of this file; one thread, noisy): int8 at least 1.5x pfvm's float: met
(mobilenet_v2 2.09x, resnet18 2.45x). No slower than onnxruntime on the same QDQ model: not
met (pfvm int8 / ORT int8: mobilenet_v2 22.4 / 14.6 ms = 1.54x slower, resnet18 45.5 / 23.7 ms
= 1.92x slower); what remains of mobilenet_v2 is mostly its depthwise layers (int16 planes
and `vpmaddwd`, ~15-20% of its profile) and the panels' packing; resnet18's is the 4x16
tile itself (32-register AVX-512 allows 8x16, and K blocking for the 3x3 layers' panels).

Round 9: x86 int8 speed (branch int8x9). Profile of the round-8 kernels on this machine
(`perf record`, resnet18 int8): the 4x16 `vpdpbusd` tile about half, the VNNI im2col about a
quarter, 9 points of it libc memset/memcpy calls (three per output row of every reduction
position). Changes, all behind run-time dispatch (AVX-512 F and BW with VNNI; the portable C,
AVX2, SMLAD and 4x16 VNNI paths unchanged, and `test_quant` compares the new path byte for byte
with each of them on odd shapes: odd K, 63 and 66 columns, rows 8 + 4 + 1, groups, strides,
per-channel scales, random zero points, extremes):
8x32 tiles in zmm registers (two 4-row weight blocks by two 16-column panels, 16 sums, the
weights' layout of round 8, requantized in the tile by the 4x16 tile's store on each half);
im2col rows at stride 1 as one masked load and store per 64 columns (no library calls); the
panels' interleave 64 columns per step (a 4x4 transpose of 128-bit lanes). Depthwise layers,
QLinearAdd and per-node work are unchanged.
Before/after in one session (Zen 4 EPYC, load average ~20 on 2 cores, so CPU time, not
wall-clock: `BASE=main-d74e805/interp ROUNDS=3 sh bench/int8_cpu.sh`, ms of CPU per inference,
task-clock of `bench -n 52` minus `-n 2` over 50, onnxruntime 1 thread on the same QDQ file,
the three alternating per round):

| model | ORT int8 | pfvm int8 before (main) | pfvm int8 after | after / before | after / ORT |
| --- | --- | --- | --- | --- | --- |
| resnet18 (8x32 tile and masked rows) | 12.8 13.3 12.1 | 22.0 21.2 18.8 | 15.5 15.0 14.4 | 1.41x faster | 1.17x slower |
| resnet18 (with the zmm interleave) | 10.6 11.7 11.0 | 20.1 19.2 18.3 | 15.4 14.9 14.6 | 1.29x faster | 1.35x slower |
| mobilenet_v2 (8x32 tile and masked rows) | 4.7 6.1 4.8 | 9.5 7.3 8.3 | 7.9 7.7 6.8 | 1.08x faster | 1.60x slower |
| mobilenet_v2 (with the zmm interleave) | 4.5 5.0 5.1 | 6.9 6.1 5.9 | 6.9 6.3 6.4 | 0.95x (same) | 1.28x slower |

(Ratios of the medians of each row's three rounds; the second rows ran beside a build.)
Targets: int8 at least 1.5x pfvm's float: met (round 8's table). No slower than onnxruntime:
not met. resnet18 closed from about 1.7x to 1.2-1.35x slower in CPU time; its `vpdpbusd`
tile now runs near this core's peak (about 64 multiply-adds a cycle: 1.8 G of them in ~9 ms),
what is left is packing (~20%: onnxruntime's NHWC convolution reads its input without an
im2col copy). mobilenet_v2 did not move: about 40% of its time is the depthwise layers
(int16 planes and `vpmaddwd`, per-channel fills and a second requantizing pass on narrow
rows), the next thing to rewrite (channels-last blocks of 16 or 64 channels with `vpdpbusd`
or `vpdpwssd`), then the requantizing store of the small-K pointwise layers.
PFVM_INT8_NOTES
    echo
    cat <<'PFVM_INT8_NOTES12'
## Round 12: x86 int8 resnet18 (branch int8r12)

Round 11 left resnet18's direct QLinearConv tile (8 rows by 32 positions counted over the
padded width) computing the padding columns and each layer's round up to 32 positions: 14% of
its sums (31% in the 7x7 layers). Changes, behind run-time dispatch (AVX-512 F, BW, VNNI and
VBMI; the portable C, AVX2, SMLAD, 4x16 VNNI and 8x32 paths unchanged):
a channel tile for the direct path (`pfvm__qv_kernel_ch`): 32 output channels in the lanes of
two zmm against 7 output positions, each position's four channels at a tap one word of the
channel-interleaved planes broadcast (`vpdpbusd` with the weights as the signed operand), so
any positions and no padding columns are computed (49, 196, 784 and 3136 are multiples of 7:
resnet18's layers compute no waste). The direct path's weights are now packed in blocks of 16
rows (one 64-byte load a block and reduction step; the 8x32 tile broadcasts from the same
blocks). Each node and run takes the tile that computes fewer sums (`pfvm__qv_use_ch`: 32-row
blocks by positions rounded to 7 against 8-row blocks by 32 flat positions): all of resnet18's
3x3 layers take the channel tile (the 56x56 ones by 4%). Its store requantizes the 7
positions' 16 lanes, transposes the bytes with two `vpermt2b` into 16 rows of 7 and writes one
masked store a row straight into Y (a byte at a time first: 5.8% of the profile, now ~3%). The
stride-2 layers' phase-plane rows are gathered 64 positions at a time and interleaved as at
stride 1 (a position at a time cost ~2%). The 16-wide tile for an odd last column pair was not
needed (no layer of resnet18 takes the position tile now) and the stem (3-channel 7x7/2,
im2col, ~9%) is unchanged. `test_quant` runs both tiles (`pfvm_q_force_direct_tile`) on every
case and compares them byte for byte with the portable kernel, on 10 new shapes (resnet18's
7x7, 14x14 with 40 rows, odd sizes with C % 4 and 17 rows, one output position, stride 2 to
7x7 with 33 rows, 5x5 dilated, the extremes, the stem, stride 2 with 76 positions a phase row,
stride 3 dilated with uneven pads); resnet18's and mobilenet_v2's int8 outputs are byte for
byte main's (three inputs each).
Before/after in one session (Zen 4 EPYC, load average ~21 on 2 cores, so CPU time:
`BASE=main-79f26d9/interp ROUNDS=3 sh bench/int8_cpu.sh`, ms of CPU per inference, the three
alternating per round), two runs:

| model | ORT int8 | pfvm int8 before (main) | pfvm int8 after | after / before | after / ORT |
| --- | --- | --- | --- | --- | --- |
| resnet18 | 11.3 11.2 11.1 | 11.8 11.8 11.6 | 10.9 10.8 10.9 | 1.08x faster | 0.97x (faster) |
| resnet18 (second run) | 11.5 11.1 11.1 | 12.2 12.3 11.9 | 11.4 10.0 11.3 | 1.08x faster | 1.02x (even) |
| mobilenet_v2 | 4.5 4.2 4.7 | 4.1 4.0 4.1 | 4.1 4.3 3.7 | 1.00x (same code) | 0.91x |
| mobilenet_v2 (second run) | 4.3 4.0 4.6 | 3.8 3.9 3.9 | 3.8 3.9 3.9 | 1.00x (same code) | 0.90x |

(Ratios of the medians of each row's three rounds.) Targets: no slower than onnxruntime on
the same QDQ model, one thread: resnet18 met within the noise (0.97x and 1.02x of
onnxruntime's CPU time in two runs, from 1.09-1.12x in round 11); mobilenet_v2 still met (its
3x3 layers are depthwise: the same code as before). resnet18's profile now: the channel tile
~65% (the `vpdpbusd` work itself), the stem's im2col tile and packing ~9%, the store ~3%, the
fills, MaxPool and QLinearAdd ~1% each. Next: the stem without im2col (4 lanes for 3 channels
cost a third more sums than its packing saves on the direct path; a 3-channel phase layout
could avoid both).

Quiet rerun on merged main after round 12 (e44f01b, load average 0.0-0.3, right after CI:
`BASE=<883f4cd interp> ROUNDS=5 sh bench/int8_cpu.sh`, ms of CPU per inference, rounds in order):
resnet18 ORT 13.3 10.6 11.0 11.2 11.9, pfvm 11.9 10.1 9.7 10.6 11.2, before 11.0 11.6 12.9 12.0
11.5: pfvm / ORT 0.95 (medians; 0.88-0.95 in every round), 0.91x of the time before;
mobilenet_v2 ORT 4.2 3.8 6.9 3.9 5.5, pfvm 3.7 4.8 3.7 3.4 3.7: 0.88 (medians; single rounds
0.54-1.26). resnet18 is no slower than onnxruntime at low load in every round of this run.
PFVM_INT8_NOTES12
    echo
    cat <<'PFVM_INT8_NOTES11'
## Round 11: x86 int8 mobilenet_v2 (branch int8m11)

Profile of round 10 on this machine (`perf record -g build/interp bench FILE -n 300`, the
mobilenet_v2 QDQ file, steady state): the 8x32 `vpdpbusd` tile ~48%, the depthwise kernel ~23%,
the tiles' requantization set-up (`pfvm__qv_epi_at`) ~4%, the depthwise plane fills' `memcpy`
~3%. Changes, all behind the same run-time dispatch (the portable C, AVX2, SMLAD and 4x16
paths unchanged; `test_quant` compares every path byte for byte on 16 new shapes):
depthwise planes of at most 16 columns put whole output rows in each vector (lane i: row
i / OW, column i % OW; as many rows as fit 16 lanes and one 64-byte load: 7x7 two rows, 3
columns five), 4 vectors a step packed and put in output order by one `vpermb` into one masked
store (a 7x7 plane: 4 vectors and one store, where it took 7 and 7; 14x14: 4 rows a store);
the plane fills as masked moves; the kernel's tap geometry kept in locals. Pointwise and other
VNNI GEMMs: an odd panel (14x14: 13 panels, 28x28: 49) as 16x16 zmm tiles (four weight blocks
by one panel) at the 8x32 tile's rate, where 4x16 tiles ran at half of it; a last panel of at
most 4 columns (7x7: 49 = 48 + 1, 14x14: 196 = 192 + 4) as 16-row column vectors (the rows in
the lanes, one `vpdpbusd` a column, requantized per lane), where the 8x32 tile spent 16 lanes
on it; the 8x32 and 16x16 tiles requantize four rows per zmm pass (one pack, masked row
stores for short panels: half the instructions of the ymm halves' store); the tiles'
requantization set-up O(1) (rows by base and stride); the per-run weight-scale scan skipped
where bind made the state from those scales. QLinearAdd is untouched (int8r11's). The int8
mobilenet_v2 and resnet18 outputs are byte for byte those of main (the test set's input and 10
of the bench's views).
Before/after in one session (Zen 4 EPYC, load average ~24 on 2 cores, so CPU time, not
wall-clock: `BASE=main-d3a8e39/interp ROUNDS=4 ITERS=102 sh bench/int8_cpu.sh`, ms of CPU per
inference, task-clock of `bench -n 102` minus `-n 2` over 100, onnxruntime 1 thread on the
same QDQ file, the three alternating per round):

| model | ORT int8 | pfvm int8 before (main) | pfvm int8 after | after / before | after / ORT |
| --- | --- | --- | --- | --- | --- |
| resnet18 | 11.9 10.8 11.0 11.5 | 14.3 14.4 15.5 14.7 | 14.8 13.5 15.4 14.7 | 0.99x (same) | 1.31x slower |
| mobilenet_v2 | 4.9 4.5 4.7 6.0 | 5.0 4.9 4.6 5.0 | 4.2 4.4 4.0 4.6 | 1.15x faster | 0.90x (faster) |

(Ratios of the medians of each row's four rounds.) A second run (`MODELS=mobilenet_v2`, load
~24, beside a build, same binaries): ORT 5.0 4.7 5.6 4.8, before 5.1 5.2 5.2 5.7, after 4.3
4.5 4.5 4.3 ms (1.18x faster, 0.90x of ORT). Targets: int8 at least 1.5x pfvm's float: met
(round 8's table; int8 only got faster). No slower than onnxruntime on the same QDQ model:
mobilenet_v2 met in the medians of both runs (0.90x of ORT's CPU time, from 1.01-1.06x in
round 10), but only at the 0.9x asked for and not clearly under noise: single rounds range
0.77x to 0.98x, so "clearly faster" is not yet established; resnet18 not met (1.3x slower,
its im2col packing; its 28, 14 and 7-column layers take the new tiles too, no faster overall). After the
change mobilenet_v2's profile is the 8x32 tile ~50% (at its 16 `vpdpbusd` per 4 reduction
positions), the depthwise kernel ~22% (now mostly the 112, 56 and 28-column planes), panel
packing ~3%, the 16x16 and column tiles ~4%; what is left to try: the rows' starting sums,
multipliers and shifts made at bind (about 1%: a per-run loop over every row), the
depthwise weights broadcast once per channel, and onnxruntime's NHWC layout (no panels).
On the branch merged with main (int8m11-merged: int8r11's direct QLinearConv as well), the
same command, `ROUNDS=2`, load ~10: mobilenet_v2 ORT 5.6 5.0, before (d3a8e39) 4.8 4.7, after
3.9 4.3 ms (0.70x, 0.86x of ORT); resnet18 ORT 11.8 11.3, before 16.0 15.0, after 11.7 11.8 ms
(about even with ORT); the int8 outputs byte for byte those of d3a8e39.

## Round 11: x86 int8 resnet18 (branch int8r11)

Profile of round 10 on this machine (`perf record -g build/interp bench resnet18_int8.onnx`):
the 8x32 `vpdpbusd` tile, the im2col packing of the 3x3 layers (rows and their interleave,
~20%), MaxPool (~3%, a scalar loop), QLinearAdd (~1%). Changes, behind run-time dispatch
(AVX-512 F, BW and VNNI; the portable C, AVX2, SMLAD and 4x16 VNNI paths unchanged):
a direct QLinearConv for windows over 1x1 (`pfvm__qv_direct_*`): no im2col. The input
becomes, once per run, channel-interleaved padded planes (four channels in each int32 lane,
`xi[c/4][row][col][4]`, the zero point in the padding; at strides over 1 split into stride
phase planes), and the weights are packed at bind with the reduction in the order (c/4, kh,
kw, c%4); then for 16 output positions counted over the padded width, one tap of four
channels is 64 contiguous bytes of xi at a per-tap offset, which the 8x32 tile loads in place
(the same tile, per-tap offsets from a table made once per node). The positions in the padding
columns are computed and dropped: the tile stores a flat output that is copied to the real
rows. The loop order keeps the smaller of xi and the weights in cache (resnet18's layers 2-4:
a weight block against every position; layer 1: a column pair against every block). Stride
2 with channel counts not a multiple of 4 takes this path only where the padding channels add
at most 1/8 (so the 3-channel 7x7 stem stays on the im2col path: 4 lanes for 3 channels would
cost more than its packing). uint8 MaxPool 3x3 at stride 2 (after the stem): 16 outputs a step
(SSE2: the three rows' maximum, then even, odd and shifted even bytes). QLinearAdd and the
qlinear pass are unchanged (QLinearAdd ~1% of the profile; fusing it into the conv's store was
not done). `test_quant` compares the direct path byte for byte with the portable C, AVX2, SMLAD
and 4x16 VNNI kernels on 11 new shapes (uneven pads, channels % 4, 2 images, 7x7, 5x5 dilated,
1x3, groups, one output position, 36 rows = 32 + 4, stride 2 with C % 4, strides 3 and 2 with
dilation, 2x2 stride 2), `test_ops_nn` the MaxPool rows on 3 new shapes; resnet18's int8 output
is byte for byte main's (three inputs compared).
Before/after in one session (Zen 4 EPYC, load average ~21-24 on 2 cores, so CPU time, not
wall-clock: `BASE=main-d3a8e39/interp ROUNDS=3 sh bench/int8_cpu.sh`, ms of CPU per
inference, task-clock of `bench -n 52` minus `-n 2` over 50, onnxruntime 1 thread on the same
QDQ file, the three alternating per round):

| model | ORT int8 | pfvm int8 before (main) | pfvm int8 after | after / before | after / ORT |
| --- | --- | --- | --- | --- | --- |
| resnet18 | 11.4 10.8 10.7 | 14.5 13.6 13.8 | 12.5 11.8 11.6 | 1.17x faster | 1.09x slower |
| mobilenet_v2 | 4.4 4.6 4.6 | 4.5 4.5 4.4 | 4.4 4.7 4.4 | 1.00x (same code) | 0.96x (even) |

(Ratios of the medians of each row's three rounds.) A second run (same command, load ~24,
beside firmware builds): resnet18 ORT 13.2 11.1 10.3, before 15.0 15.7 17.1, after 13.3 12.2
12.4 ms (1.27x faster, 1.12x slower than ORT); mobilenet_v2 ORT 6.4 4.9 5.8, before 5.5 5.9
6.0, after 4.9 4.8 5.0 ms (its convolutions other than depthwise and pointwise are the
3-channel stem, which stays on the im2col path: the same code, noise). Targets: no slower than onnxruntime on the
same QDQ model, one thread: resnet18 NOT met: about 1.1x slower now (1.3-1.45x in round 10).
After the change resnet18's profile is the direct tile ~72% (near this core's `vpdpbusd`
rate), the stem's im2col tile and packing ~9%, the phase-plane fill of the stride-2 layers and
the flat output's copy ~2%, MaxPool and QLinearAdd ~1% each. What is left is mostly waste, not
packing: the 16-lane tiles compute the padding columns and round each layer's positions up to
32, 14% of resnet18's sums (31% in the 7x7 layers: 64 positions computed for 49; onnxruntime's
NHWC kernels put channels in the lanes and compute none). The next step is a tile with output
channels in the lanes (positions broadcast from xi, any subset of them) for the small layers,
and a 16-wide tile for the odd last column pair. mobilenet_v2 (its 3x3 layers are depthwise,
its 1x1 ones pointwise) runs the same code as before.
PFVM_INT8_NOTES11
    echo
    cat <<'PFVM_INT8_NOTES10'
## Round 10: x86 int8 speed (branch int8x10)

Profile of round 9 on this machine (`perf record`, mobilenet_v2 int8): the depthwise layers
(int16 planes, `vpmaddwd` over pairs of taps, the widening and stride-phase fills and a second
requantizing pass) about 30% of its time, the pointwise layers' 8x32 `vpdpbusd` tile most of
the rest. Change: a depthwise kernel behind run-time dispatch (AVX-512 F, BW, VNNI and VBMI;
uint8 inputs, weights within int8 after their zero point; the portable C, AVX2 and SMLAD
paths unchanged): each channel's padded plane as raw uint8 (the input's zero point in the
padding, which the weights' sums take off again, folded with the bias into the starting
sum), per kernel row one 64-byte load, one `vpermb` that gathers 16 output lanes' four window
bytes (any stride and dilation with 15 s + (KW - 1) dw <= 63; indices made once per node)
and one `vpdpbusd` per four taps against weights packed at bind (per run when they are graph
inputs); up to 64 columns per step, requantized in registers and packed with saturation into
one masked store. A 3x3 kernel is 3 loads, 3 `vpermb` and 3 `vpdpbusd` per 16 outputs.
`test_quant` compares it byte for byte with the portable C (and the old AVX2 path) on 11 new
depthwise shapes: 3x3 at strides 1 and 2, dilated, uneven pads, 5x3 stride 3 with 2 images,
9x9, 7, 37, 56, 113 and 130 columns, int8 output, per-tensor and per-channel scales, random
zero points, extremes, stride 5 (past one load: the AVX2 path). resnet18 (no depthwise
layers), QLinearAdd and per-node work are unchanged.
Before/after in one session (Zen 4 EPYC, load average ~18 on 2 cores, so CPU time, not
wall-clock: `BASE=main-648b6a7/interp ROUNDS=3 sh bench/int8_cpu.sh`, ms of CPU per
inference, task-clock of `bench -n 52` minus `-n 2` over 50, onnxruntime 1 thread on the same
QDQ file, the three alternating per round):

| model | ORT int8 | pfvm int8 before (main) | pfvm int8 after | after / before | after / ORT |
| --- | --- | --- | --- | --- | --- |
| resnet18 | 11.2 11.0 12.5 | 15.6 15.9 16.9 | 14.9 15.9 16.5 | 1.00x (same code) | 1.42x slower |
| mobilenet_v2 | 4.8 5.1 6.1 | 7.9 7.8 8.3 | 5.4 5.0 5.7 | 1.46x faster | 1.06x slower |

(Ratios of the medians of each row's three rounds.) A second run (`ROUNDS=2`, load ~17, on the
final commit): resnet18 ORT 11.0 11.5, before 14.1 15.0, after 14.4 14.5 ms; mobilenet_v2 ORT
4.3 4.8, before 7.8 7.5, after 4.6 4.6 ms (1.66x faster, 1.01x of ORT). The int8 mobilenet_v2's
output is byte for byte the one of main. Targets: int8 at least 1.5x pfvm's float:
met (round 8's table; int8 only got faster). No slower than onnxruntime on the same QDQ model:
mobilenet_v2 now within noise of it (1.06x in the medians; single rounds 0.93x to 1.13x), not
clearly met; resnet18 not met (1.3-1.45x slower: its im2col packing, untouched this round).
After the change mobilenet_v2's profile is the pointwise 8x32 tile ~45%, the depthwise kernel
~20% (its 7-column rows fill 7 of 16 lanes), the tiles' per-call setup ~5%.
PFVM_INT8_NOTES10
    echo
    echo "## Round 9: agreement (branch int8a9)"
    echo
    echo "Made by \`N=$N sh bench/int8_agree.sh\` (called from here); see its header for the rows."
    echo
    cat "$T/agree9.md"
    # round 9's analysis (measured by hand; kept here so that a rerun keeps it)
    cat <<'PFVM_INT8_AGREE_NOTES'

Why the untrained mobilenet_v2 stays far from 97% (round 9's analysis, measured on its run):
its quantization noise grows layer after layer. The input's 8-bit grid costs 48 dB of SQNR, and
quantizing the input alone, everything else float, leaves the outputs at 26 dB: the untrained
network amplifies a perturbation about 22 dB between input and logits. With every activation
quantized the noise compounds, about 1.5 dB lost per inverted-residual block, down to 5 dB at the
last 1x1 convolution and 15 dB at the logits (noise RMS roughly 0.04 against a logit spread of
0.23), while the float model's median top-2 margin is 0.03-0.04: the noise is as large as the
margin that decides top-1 on half the inputs. resnet18's SQNR levels off at 24-27 dB, its logits
at 30 dB, with margins of 0.4: 100%. No 8-bit setting changes this on this fixture: the most
sensitive activations (the first layers, each alone costing the outputs 21-26 dB) are many and of
similar weight, so `--auto-exclude 4` (4 of 65 activations float) gains 0.7 dB only; and the
photo-BN fixture ("mobilenet_v2, photo BN": the same untrained weights with every BatchNorm's
statistics recalibrated on 64 other photo views, bench/int8_fixture.py) is worse (flatter
logits; its layers lose SQNR faster): recalibrating BatchNorm on photos does not make an
untrained network's classifier decisive. "outputs SQNR": what `interp quantize --report`
measures on 8 calibration sets (QDQ reference semantics); "margin": the float model's median gap
between its top two logits over the evaluated views. The trained fixtures of round 10 (below)
are where the issue's 97% is measured.
PFVM_INT8_AGREE_NOTES
    echo
    echo "## Round 10: agreement on a trained mobilenet_v2 (branch int8a10)"
    echo
    echo "Made by \`N=$N sh bench/int8_trained.sh\` (called from here); see its header for the rows."
    echo
    cat "$T/trained10.md"
    echo
    # round 10's notes (measured by hand on its run; kept here so that a rerun keeps them)
    cat <<'PFVM_INT8_TRAINED_NOTES'
What the rows measure. The rounds above measure untrained networks (torchvision's
`weights=None`): their rows stay as they were, and the issue's 97% is not claimed for them
(round 9: their logits are nearly flat, so 8-bit noise decides top-1). This section's fixtures
are TRAINED: torchvision's mobilenet_v2 and resnet18, layers unchanged, classifier sized to 10
classes, trained from scratch by bench/int8_train.py on sklearn's 8x8 digits (tools/make_digits.py's
split: 1437 training, 360 held-out images) drawn at 1x3x32x32 (grey in three channels,
ImageNet-normalized) with random rotation +-15 degrees, scale 0.85-1.15, shift +-10% and ink
brightness 0.8-1.2; AdamW, one-cycle learning rate, batch 64, seeded, deterministic algorithms,
one thread. Training commands (bench/int8_trained.sh runs them when bench/.int8_fixtures,
git-ignored, lacks the weights; the opset-13 exports are cached beside them), at load average
~20 on the 2 shared cores:
`/usr/bin/python3 bench/int8_train.py train bench/.int8_fixtures mobilenet_v2 20 cpu`: 750 s,
float test accuracy 97.8%; `... resnet18 4 cpu`: 213 s, 99.7% (trained again: bit-identical
weights, same host and torch).
Their input is 1x3x32x32, not the 224x224 of the rows above: mobilenet_v2 trains here at about
0.02 s per 32x32 image on one thread, and 224x224 has 49x the multiply-adds, so training at 224
would take hours on this host; the layers are the same (the last stages run at 1x1), and a
network trained at 32 reads digits drawn at 224 at a scale it never saw, so each is exported
at the size it learnt. (The device machine could not take this repository: its tracked files,
69.7 MB, exceed the 64 MiB a call carries.) "float test", "int8 test": accuracy on the 360
held-out digits as drawn (no augmentation); "top-1 = float": int8 against float on 500 augmented
views of the held-out digits (seed 2; harder than the test set: float gets 94.8% of them right),
calibrated on 32 augmented views of training digits (seed 1); every row `--per-channel`.

Results. With the quantizer's defaults (`--per-channel`, min/max ranges) the trained mobilenet_v2
keeps its test accuracy (97.8% int8 = 97.8% float) and its top-1 agrees with float on 98.6% of
the 500 views: the issue's 97% is met (7 views differ; on the 474 views that float classifies
right, 99.8%; rounding the input alone to its 8-bit grid changes none). `--method mse` 99.0% (best found, outputs 31.7 dB);
percentile 99.9 (round 9's setting for photos) 97.6% at 25.5 dB: the trained network's activation
tails carry signal; `--auto-exclude 2/4` 98.6% (more SQNR, no more agreement). resnet18 trained
the same way: 100% with the defaults, int8 test 99.4% against float 99.7%. The per-layer SQNR
shows why the trained network behaves where the untrained one did not: the noise levels off
through the inverted-residual blocks (the table above) and the logits end at 31.6 dB, not 15,
with a median top-2 margin of 5.3 against 0.04. No quantizer change was needed this round.

Shorter training, the same measurement (the first fixture of this round: mobilenet_v2 8 epochs,
580 s, float test 95.0%, float right on 86.4% of the views, margin 3.05, outputs 24.4 dB with the
defaults): int8 test 94.7%; top-1 = float 96.8% with the defaults (16 views differ, every one a
float near tie: top-2 margins 0.01-0.44; 98.6% on the 432 views float classifies right; the
input's rounding alone 99.0%), 96.6% `--method mse`, 93.0% percentile 99.9, 98.2% `--auto-exclude
2` (the input and the first block's projection output float). The less trained network's
smaller margins cost about 2 points of agreement: agreement measures the fixture's decisiveness
as much as the quantizer.
PFVM_INT8_TRAINED_NOTES
} > bench/int8.md
cat bench/int8.md
