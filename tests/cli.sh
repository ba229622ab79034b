#!/bin/sh
# Command-line behaviour of interp: error handling, corrupted models, the
# save/load round trip, shapes and plan. Prints "N passed, M failed".
#
#   sh tests/cli.sh BUILD_DIR
#
# Under an ASan build (build-asan) a crash, a leak or undefined behaviour
# ends the process with exit code 86, which every check below rejects.
set -u
cd "$(dirname "$0")/.."
BUILD=${1:-build}
INTERP=$BUILD/interp
MODEL=tests/models/cnn_small
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}:exitcode=86"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1}:exitcode=86"
pass=0
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ok() { pass=$((pass + 1)); }
have_ort_root=0
command -v node >/dev/null 2>&1 && node -e "require('onnxruntime-node')" >/dev/null 2>&1 && have_ort_root=1
bad() { fail=$((fail + 1)); echo "FAIL $*"; }

# A command that must fail cleanly: exit 1 and one line on stderr.
expect_clean_error() {
    what=$1
    shift
    "$@" >"$tmp/out" 2>"$tmp/err"
    status=$?
    lines=$(wc -l <"$tmp/err")
    if [ $status -eq 1 ] && [ "$lines" -eq 1 ] && grep -q '^interp: ' "$tmp/err"; then
        ok
    else
        bad "$what: exit $status, $lines stderr lines: $(head -c 300 "$tmp/err")"
    fi
}

expect_clean_error "no args" "$INTERP" run
expect_clean_error "missing model" "$INTERP" run "$tmp/nope.onnx"
expect_clean_error "unknown command" "$INTERP" frobnicate
echo "not a model" >"$tmp/text.onnx"
expect_clean_error "text file" "$INTERP" run "$tmp/text.onnx"
expect_clean_error "wrong input count" "$INTERP" run "$MODEL/model.onnx"
expect_clean_error "bad --dim" "$INTERP" shapes "$MODEL/model.onnx" --dim nonsense

# Corrupted and truncated models: 300 variants of a real model. Each must
# load and run, or fail with a clean error — never crash, hang or leak.
size=$(wc -c <"$MODEL/model.onnx")
i=0
while [ $i -lt 300 ]; do
    v="$tmp/v.onnx"
    if [ $((i % 2)) -eq 0 ]; then
        # truncations spread over the file, denser near the start
        cut=$(( (i * i * 7919 + i * 13) % size ))
        head -c "$cut" "$MODEL/model.onnx" >"$v"
    else
        # flip a few bytes at pseudo-random offsets
        cp "$MODEL/model.onnx" "$v"
        k=0
        while [ $k -lt 4 ]; do
            off=$(( (i * 104729 + k * 7907 + i * k * 31) % size ))
            printf "\\$(printf '%03o' $(( (i * 37 + k * 101) % 256 )))" |
                dd of="$v" bs=1 seek="$off" conv=notrunc 2>/dev/null
            k=$((k + 1))
        done
    fi
    timeout 60 "$INTERP" run "$v" -i "$MODEL/test_data_set_0/input_0.pb" -o "$tmp/o" --quiet >/dev/null 2>"$tmp/err"
    status=$?
    if [ $status -eq 0 ] || { [ $status -eq 1 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ]; }; then
        ok
    else
        bad "corrupt variant $i: exit $status: $(head -c 300 "$tmp/err")"
        cp "$v" "$tmp/../pfvm_bad_variant_$i.onnx" 2>/dev/null
    fi
    i=$((i + 1))
done

# Hostile models (tests/hostile/README.md): each is rejected with one clean
# line naming the problem, optimized and not, at run, shapes and plan.
H=tests/hostile
expect_error_matching() {
    what=$1
    pattern=$2
    shift 2
    "$@" >"$tmp/out" 2>"$tmp/err"
    status=$?
    if [ $status -eq 1 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q "^interp: .*$pattern" "$tmp/err"; then
        ok
    else
        bad "$what: exit $status: $(head -c 300 "$tmp/err")"
    fi
}
while IFS='|' read -r name inputs pattern; do
    case "$name" in "#"* | "") continue ;; esac
    set --
    for f in "$H/${inputs}"_input_*.pb; do set -- "$@" -i "$f"; done
    for o in "" --no-opt; do
        expect_error_matching "hostile $name run $o" "$pattern" "$INTERP" run "$H/$name.onnx" "$@" -o "$tmp/o" $o
    done
    expect_error_matching "hostile $name shapes" "$pattern" "$INTERP" shapes "$H/$name.onnx"
done <<'TABLE'
tfidf_negative_count|tfidf|ngram_counts\[1\] = -1000000 is outside the pool
tfidf_large_count|tfidf|ngram_counts\[1\] = 1000000 is outside the pool
tfidf_index_int64_max|tfidf|ngram_indexes\[2\] = 9223372036854775807 is not an output column
conv_pads_int64_max|conv|pads 9223372036854775807, 1 past 2^31
convtranspose_strides_int64_max|convtranspose|stride 9223372036854775807, .* past 2^31
maxpool_pads_int64_max|maxpool|pads 2, 9223372036854775807 past 2^31
roialign_sampling_ratio_int64_max|roialign|sampling_ratio must be in \[0, 65536\]
TABLE
# Resource limits: the 7.5 GB output fails at bind under the default limit
# of 4 GiB per tensor, and --max-memory sets firmware-sized limits.
for o in "" --no-opt; do
    expect_error_matching "hostile tfidf_huge_output $o" "output 'Y' needs 7515865040 bytes, over the limit of 4294967296 bytes per tensor" \
        "$INTERP" run "$H/tfidf_huge_output.onnx" -i "$H/tfidf_input_0.pb" -o "$tmp/o" $o
done
expect_error_matching "--max-memory 1M" "over the limit of 1048576 bytes per tensor" \
    "$INTERP" run "$H/tfidf_huge_output.onnx" -i "$H/tfidf_input_0.pb" -o "$tmp/o" --max-memory 1M
expect_error_matching "--max-memory 10k" "over the limit of 10240 bytes" \
    "$INTERP" run "$MODEL/model.onnx" -i "$MODEL/test_data_set_0/input_0.pb" -o "$tmp/o" --max-memory 10k
if "$INTERP" run "$MODEL/model.onnx" -i "$MODEL/test_data_set_0/input_0.pb" -o "$tmp/o" --max-memory 4M --quiet >"$tmp/out" 2>&1; then ok; else bad "--max-memory 4M: $(head -c 300 "$tmp/out")"; fi
# --threads N: interp's pthreads pool gives the outputs of one thread, bit for bit
# (tests/test_threads.c checks every fixture through the library)
for t in 1 2 3; do
    "$INTERP" run tests/models/mobilenet_v2/model.onnx -i tests/models/mobilenet_v2/test_data_set_0/input_0.pb \
        -o "$tmp/threads$t" --threads $t --quiet >"$tmp/out" 2>&1 || bad "--threads $t: $(head -c 300 "$tmp/out")"
done
if cmp -s "$tmp/threads1/output_0.pb" "$tmp/threads2/output_0.pb" && cmp -s "$tmp/threads1/output_0.pb" "$tmp/threads3/output_0.pb"; then
    ok
else
    bad "--threads 2 and 3 differ from 1 thread on mobilenet_v2"
fi
# --profile-threads: thread CPU accounting that adds up (serial fraction, regions of split work)
if "$INTERP" bench tests/models/mobilenet_v2/model.onnx -n 2 --threads 2 --profile-threads >"$tmp/out" 2>&1 &&
    grep -q "^serial fraction 0\.[0-9]*, imbalance" "$tmp/out" && grep -q "Conv+Clip" "$tmp/out" &&
    grep -q "in [1-9][0-9]* regions per run" "$tmp/out"; then
    ok
else
    bad "--profile-threads: $(head -c 600 "$tmp/out")"
fi
# bench-pool: the pool's fork/join timed alone (a time per call, the tasks met)
if "$INTERP" bench-pool --threads 2 -n 50 >"$tmp/out" 2>&1 &&
    grep -q "^fork/join, tasks that only meet: *[0-9.]* median *[0-9.]* least" "$tmp/out" &&
    grep -q "^with a [0-9.]* us spin each" "$tmp/out"; then
    ok
else
    bad "bench-pool: $(head -c 600 "$tmp/out")"
fi
expect_clean_error "bench-pool, one thread" "$INTERP" bench-pool
expect_clean_error "bench-pool, bad argument" "$INTERP" bench-pool --threads 2 -x
expect_clean_error "--threads 0" "$INTERP" run "$MODEL/model.onnx" --threads 0
expect_clean_error "--threads x" "$INTERP" run "$MODEL/model.onnx" --threads x
# Scan with num_scan_inputs = 2^31: one error naming the count (no int overflow)
for o in "" --no-opt; do
    expect_error_matching "hostile scan_num_scan_inputs_2e31 $o" "(Scan): num_scan_inputs 2147483648 does not fit the 2 inputs" \
        "$INTERP" run "$H/scan_num_scan_inputs_2e31.onnx" -i "$H/scan_input_0.pb" -i "$H/scan_input_1.pb" -o "$tmp/o" $o
done
# A Loop with M = INT64_MAX and a condition that stays true, keeping 4 MB of
# scan output per iteration: its kept outputs count against the limit.
for o in "" --no-opt; do
    expect_error_matching "hostile loop_endless_scan $o" "scan outputs of 17 iterations take more than the limit of 67108864 bytes" \
        "$INTERP" run "$H/loop_endless_scan.onnx" -o "$tmp/o" --max-memory 64M $o
done
# --max-operations: the work budget; bench prints what a run counts
for o in "" --no-opt; do
    expect_error_matching "hostile roialign_sampling_65536 $o" "(RoiAlign): the run passed its budget of 100000000 operations" \
        "$INTERP" bench tests/fuzz/regress/fuzz_run/roialign_sampling_65536_timeout.onnx -n 1 --max-operations 1e8 $o
done
"$INTERP" bench "$MODEL/model.onnx" -n 1 >"$tmp/out" 2>&1
if grep -q "^[1-9][0-9]* operations per run" "$tmp/out"; then ok; else bad "bench prints no operation count: $(head -c 300 "$tmp/out")"; fi
expect_error_matching "--max-operations 1000" "budget of 1000 operations (pfvm_limits.max_run_operations)" \
    "$INTERP" run "$MODEL/model.onnx" -i "$MODEL/test_data_set_0/input_0.pb" -o "$tmp/o" --max-operations 1000
expect_clean_error "bad --max-operations" "$INTERP" run "$MODEL/model.onnx" --max-operations 0
expect_clean_error "bad --max-memory" "$INTERP" run "$MODEL/model.onnx" --max-memory lots
expect_clean_error "--max-memory on opt" "$INTERP" opt "$MODEL/model.onnx" -o "$tmp/o.onnx" --max-memory 1M

# Save and load again: same outputs.
if "$INTERP" opt "$MODEL/model.onnx" -o "$tmp/saved.onnx" 2>"$tmp/err"; then
    mkdir -p "$tmp/case"
    cp "$tmp/saved.onnx" "$tmp/case/model.onnx"
    cp -r "$MODEL/test_data_set_0" "$tmp/case/"
    if "$INTERP" test --atol 1e-5 "$tmp/case" >"$tmp/out" 2>&1; then ok; else bad "round trip: $(tail -n 3 "$tmp/out")"; fi
    # onnx's checker, when the dev-time Python is present (tests never need it)
    if /usr/bin/python3 -c "import onnx.checker" 2>/dev/null; then
        if /usr/bin/python3 tools/onnx_check.py "$tmp/saved.onnx" >"$tmp/out" 2>&1; then ok; else bad "checker: $(tail -n 3 "$tmp/out")"; fi
    fi
else
    bad "opt: $(cat "$tmp/err")"
fi

# interp opt writes flash-ready files: every raw_data aligned in the file
# (PFVM_ONNX_WRITE_ALIGN), so the weights are viewed in place, not copied
# (test_onnx_io checks the pointers); the saved mlp_mnist runs to the same
# outputs as the torch export.
d=tests/models/mlp_mnist
rm -rf "$tmp/ao" "$tmp/an"
if "$INTERP" opt "$d/model.onnx" -o "$tmp/aligned.onnx" 2>"$tmp/err" &&
    "$INTERP" run "$d/model.onnx" -i "$d/test_data_set_0/input_0.pb" -o "$tmp/ao" --quiet >"$tmp/out" 2>&1 &&
    "$INTERP" run "$tmp/aligned.onnx" -i "$d/test_data_set_0/input_0.pb" -o "$tmp/an" --quiet >>"$tmp/out" 2>&1 &&
    [ -s "$tmp/an/output_0.pb" ] && diff -r "$tmp/ao" "$tmp/an" >/dev/null; then ok; else bad "opt mlp_mnist, run: $(tail -n 2 "$tmp/out" "$tmp/err")"; fi
if /usr/bin/python3 -c "import onnx" 2>/dev/null; then
    if /usr/bin/python3 -c "
import sys, onnx
path = sys.argv[1]
m = onnx.load(path)
onnx.checker.check_model(m)
raw = open(path, 'rb').read()
for t in m.graph.initializer:
    at = raw.find(t.raw_data)
    assert at >= 0 and at % 16 == 0, (t.name, at)
" "$tmp/aligned.onnx" >"$tmp/out" 2>&1; then ok; else bad "aligned raw_data: $(tail -n 3 "$tmp/out")"; fi
fi

# Fused models (groups saved as model-local functions in domain pfvm) load
# back, run, and pass onnx's checker; dot draws the groups as clusters.
for m in gpt_small resnet18; do
    if "$INTERP" opt "tests/models/$m/model.onnx" -o "$tmp/fused.onnx" 2>"$tmp/err" &&
        grep -q '^fuse .* [1-9][0-9]* ' "$tmp/err"; then ok; else bad "fuse $m: $(cat "$tmp/err")"; fi
    rm -rf "$tmp/fcase"
    mkdir -p "$tmp/fcase"
    cp "$tmp/fused.onnx" "$tmp/fcase/model.onnx"
    cp -r "tests/models/$m/test_data_set_0" "$tmp/fcase/"
    if "$INTERP" test --atol 1e-5 --no-opt "$tmp/fcase" >"$tmp/out" 2>&1; then ok; else bad "fused $m: $(tail -n 3 "$tmp/out")"; fi
    if /usr/bin/python3 -c "import onnx.checker" 2>/dev/null; then
        if /usr/bin/python3 tools/onnx_check.py "$tmp/fused.onnx" >"$tmp/out" 2>&1; then ok; else bad "checker $m fused: $(tail -n 3 "$tmp/out")"; fi
    fi
done
# opt --planned stores the plan (pfvm.plan, value_info): the model runs
# with it (--no-opt keeps it) to the test data and passes onnx's checker
for m in mlp_mnist cnn_small; do
    rm -rf "$tmp/pcase"
    mkdir -p "$tmp/pcase"
    if "$INTERP" opt "tests/models/$m/model.onnx" -o "$tmp/pcase/model.onnx" --planned --quiet 2>"$tmp/err" &&
        grep -q 'pfvm-plan' "$tmp/pcase/model.onnx"; then ok; else bad "opt --planned $m: $(cat "$tmp/err")"; fi
    cp -r "tests/models/$m/test_data_set_0" "$tmp/pcase/"
    if "$INTERP" test --atol 1e-5 --no-opt "$tmp/pcase" >"$tmp/out" 2>&1; then ok; else bad "planned $m: $(tail -n 3 "$tmp/out")"; fi
    if /usr/bin/python3 -c "import onnx.checker" 2>/dev/null; then
        if /usr/bin/python3 tools/onnx_check.py "$tmp/pcase/model.onnx" >"$tmp/out" 2>&1; then ok; else bad "checker $m planned: $(tail -n 3 "$tmp/out")"; fi
    fi
done
if "$INTERP" dot tests/models/gpt_small/model.onnx --opt -o "$tmp/g.dot" && grep -q 'subgraph cluster_' "$tmp/g.dot" &&
    grep -q 'label="float\[' "$tmp/g.dot"; then ok; else bad "dot: $(head -n 3 "$tmp/g.dot")"; fi

# shapes prints one line per value; plan reports an arena.
if "$INTERP" shapes "$MODEL/model.onnx" >"$tmp/out" 2>&1 && grep -q "$(printf '\t')float$(printf '\t')\[" "$tmp/out"; then ok; else bad "shapes: $(head -n 3 "$tmp/out")"; fi
if "$INTERP" plan "$MODEL/model.onnx" >"$tmp/out" 2>&1 && grep -q '^symbolic arena bytes' "$tmp/out"; then ok; else bad "plan: $(head -n 3 "$tmp/out")"; fi
# without a binding the plan of a dynamic model is an expression of its dims;
# with one it is a number, and the expression evaluates next to it
if "$INTERP" plan tests/shapes/cnn_dynamic.onnx >"$tmp/out" 2>&1 && grep -q '^symbolic arena bytes.*batch' "$tmp/out"; then ok; else bad "symbolic plan: $(head -n 3 "$tmp/out")"; fi
if "$INTERP" plan tests/shapes/cnn_dynamic.onnx --dim batch=2 --dim h=32 --dim w=40 >"$tmp/out" 2>&1 &&
    grep -q '^arena bytes	[0-9]' "$tmp/out" && grep -q '^symbolic arena bytes.* = [0-9]' "$tmp/out"; then ok; else bad "bound plan: $(head -n 5 "$tmp/out")"; fi

# Dynamic-axes exports: every value's shape resolves to the input dims
# (unknowns would print as Node_oK_dJ symbols or '?').
# A case shape (`COND ? [..] : [..]`) is resolved; its " ? " is no unknown rank.
for f in tests/shapes/*.onnx; do
    if "$INTERP" shapes "$f" >"$tmp/out" 2>&1 && ! sed 's/ ? / /g' "$tmp/out" | grep -qE '_o[0-9]+_d[0-9]+|\?'; then ok; else bad "shapes $f: $(grep -E '_o[0-9]+_d[0-9]+|\?|error' "$tmp/out" | head -n 2)"; fi
done
# The rank-polymorphic If (tools/make_rank_if.py): one shape per case of
# n == 1, each case decided under a binding.
if "$INTERP" shapes tests/shapes/rank_if.onnx >"$tmp/out" 2>&1 && grep -q "^z$(printf '\t')float$(printf '\t')n==1 ? \[b\] : \[b,n\]\$" "$tmp/out" &&
    "$INTERP" shapes tests/shapes/rank_if.onnx --dim n=1 >"$tmp/out" 2>&1 && grep -q "^z$(printf '\t').*= \[b\]\$" "$tmp/out" &&
    "$INTERP" shapes tests/shapes/rank_if.onnx --dim n=5 --dim b=2 >"$tmp/out" 2>&1 && grep -q "^z$(printf '\t').*= \[2,5\]\$" "$tmp/out"; then ok; else bad "shapes rank_if: $(cat "$tmp/out")"; fi

# Shape values through the exporters' -1 idiom (tools/make_loop_fixtures.py):
# torch's opset-11 Expand target goes through ConstantOfShape, Mul by -1,
# Equal and Where; the Expand is [batch,N] and the Reshape after it N*batch.
T=$(printf '\t')
if "$INTERP" shapes tests/models/expand_where/model.onnx >"$tmp/out" 2>&1 &&
    grep -q "^/Expand_output_0${T}int64${T}\[batch,N\]\$" "$tmp/out" && grep -q "^idx${T}int64${T}\[N\*batch\]\$" "$tmp/out"; then ok; else bad "shapes expand_where: $(grep -E 'Expand|^idx' "$tmp/out")"; fi
# Loop-carried values that grow: the body's input is the loop's own symbol
# for the growing dim, never the first iteration's width.
if "$INTERP" shapes tests/models/loop_greedy/model.onnx >"$tmp/out" 2>&1 &&
    grep -q "^/Loop/toks.11${T}int64${T}\[batch,_Loop_c0_d1\]\$" "$tmp/out" &&
    grep -q "^/Loop//Concat_2_output_0${T}int64${T}\[batch,_Loop_c0_d1+1\]\$" "$tmp/out"; then ok; else bad "shapes loop_greedy: $(grep -E 'toks|_Loop_c0' "$tmp/out")"; fi
# Each loop fixture runs the same with the default passes, with each pass
# alone, and as loaded; onnxruntime runs pfvm's optimized model to the same
# outputs when onnxruntime-node is installed.
for m in loop_greedy loop_concat loop_nested expand_where; do
    d=tests/models/$m
    set --
    for f in "$d"/test_data_set_0/input_*.pb; do set -- "$@" -i "$f"; done
    rm -rf "$tmp/ro" "$tmp/rn"
    if "$INTERP" run "$d/model.onnx" "$@" -o "$tmp/ro" --quiet >"$tmp/out" 2>&1 &&
        "$INTERP" run --no-opt "$d/model.onnx" "$@" -o "$tmp/rn" --quiet >>"$tmp/out" 2>&1 &&
        diff -r "$tmp/ro" "$tmp/rn" >/dev/null; then ok; else bad "run $m optimized vs --no-opt: $(tail -n 2 "$tmp/out")"; fi
    for p in fold simplify cse bnfold compose dce fuse; do
        rm -rf "$tmp/pcase"
        mkdir -p "$tmp/pcase"
        cp -r "$d/test_data_set_0" "$tmp/pcase/"
        if "$INTERP" opt "$d/model.onnx" -o "$tmp/pcase/model.onnx" --passes $p 2>"$tmp/out" &&
            "$INTERP" test --no-opt "$tmp/pcase" >>"$tmp/out" 2>&1; then ok; else bad "$m --passes $p: $(tail -n 2 "$tmp/out")"; fi
    done
    if [ $have_ort_root = 1 ]; then
        rm -rf "$tmp/ocase"
        mkdir -p "$tmp/ocase"
        if "$INTERP" opt "$d/model.onnx" -o "$tmp/opt_$m.onnx" 2>/dev/null &&
            node tools/ort_case.js "$tmp/opt_$m.onnx" "$tmp/ocase" "$d"/test_data_set_0/input_*.pb >"$tmp/out" 2>&1 &&
            "$INTERP" test --no-opt "$tmp/ocase" >>"$tmp/out" 2>&1 &&
            "$INTERP" test "$d" >>"$tmp/out" 2>&1; then ok; else bad "$m optimized vs onnxruntime: $(tail -n 3 "$tmp/out")"; fi
    fi
done

# grad: the training graph of each small fixture. It runs (seed inputs get
# random values), onnx's checker accepts it when python3-onnx is present,
# and onnxruntime gives pfvm's gradients when onnxruntime-node is installed
# (tools/ort_case.js; skipped otherwise). The dp/chen cases add
# recomputation (--recompute): the rewritten graph must pass the same checks;
# cnn_stem at half its peak also runs its stem's backward in channel slices
# (with Adam's update reading the sliced gradients too).
expect_clean_error "grad without -o" "$INTERP" grad "$MODEL/model.onnx"
expect_clean_error "grad unknown loss" "$INTERP" grad "$MODEL/model.onnx" -o "$tmp/g.onnx" --loss nothing
expect_clean_error "grad bad optimizer" "$INTERP" grad "$MODEL/model.onnx" -o "$tmp/g.onnx" --optimizer rmsprop --lr 1
expect_clean_error "grad unknown wrt" "$INTERP" grad "$MODEL/model.onnx" -o "$tmp/g.onnx" --wrt nothing
have_checker=0
/usr/bin/python3 -c "import onnx.checker" 2>/dev/null && have_checker=1
have_ort=0
node -e "require('onnxruntime-node')" 2>/dev/null && have_ort=1
expect_clean_error "grad bad recompute" "$INTERP" grad "$MODEL/model.onnx" -o "$tmp/g.onnx" --recompute sometimes
expect_clean_error "grad budget without recompute" "$INTERP" grad "$MODEL/model.onnx" -o "$tmp/g.onnx" --budget 50%
for spec in mlp: cnn_small: transformer_encoder: gpt_small: mlp:adam cnn_small:sgd cnn_small:dp transformer_encoder:chen cnn_stem:slice cnn_stem:slice_adam; do
    m=${spec%%:*}
    opt=${spec#*:}
    d="$tmp/grad_${m}_$opt"
    mkdir -p "$d"
    case "$opt" in
    "") set -- ;;
    dp) set -- --recompute dp --budget 70% ;;
    chen) set -- --recompute chen ;;
    slice) set -- --recompute dp --budget 50% ;;
    slice_adam) set -- --recompute dp --budget 50% --optimizer adam --lr 0.01 ;;
    *) set -- --optimizer "$opt" --lr 0.01 ;;
    esac
    if ! "$INTERP" grad "tests/models/$m/model.onnx" -o "$d/model.onnx" "$@" >"$tmp/out" 2>&1; then
        bad "grad $m $opt: $(tail -n 2 "$tmp/out")"
        continue
    fi
    ok
    case "$opt" in
    dp | chen) if grep -qE '^recompute \(.*[1-9][0-9]* forward nodes recomputed' "$tmp/out"; then ok; else bad "grad $m $opt: nothing recomputed: $(cat "$tmp/out")"; fi ;;
    slice*) if grep -q "backward pass runs in 4 channel slices" "$tmp/out"; then ok; else bad "grad $m $opt: not sliced: $(cat "$tmp/out")"; fi ;;
    esac
    if [ $have_checker = 1 ]; then
        if /usr/bin/python3 tools/onnx_check.py "$d/model.onnx" >"$tmp/out" 2>&1; then ok; else bad "grad $m $opt checker: $(tail -n 2 "$tmp/out")"; fi
    fi
    if [ $have_ort = 1 ]; then
        if node tools/ort_case.js "$d/model.onnx" "$d" "tests/models/$m/test_data_set_0/input_0.pb" >"$tmp/out" 2>&1 &&
            "$INTERP" test --rtol 1e-3 --atol 1e-4 "$d" >"$tmp/out" 2>&1; then ok; else bad "grad $m $opt vs onnxruntime: $(tail -n 3 "$tmp/out")"; fi
    fi
done

# The training example: trains an MLP, and a small CNN, on the digits from
# scratch with pfvm alone (deterministic: a fixed seed); each must reach 95%
# test accuracy, and the model it saves classifies the demo's digits.
TRAIN=$BUILD/examples/train_digits
if [ -x "$TRAIN" ]; then
    for arch in mlp cnn; do
        if [ $arch = cnn ]; then set -- --cnn; else set --; fi
        if "$TRAIN" "$@" --save "$tmp/trained.onnx" >"$tmp/out" 2>&1 && grep -q '^final test accuracy' "$tmp/out"; then ok; else bad "train_digits $arch: $(tail -n 3 "$tmp/out")"; fi
        if "$BUILD/examples/digits" "$tmp/trained.onnx" models/digits_samples >"$tmp/out" 2>&1 &&
            grep -qE '^[56] of 6 digits right' "$tmp/out"; then ok; else bad "digits with the trained $arch: $(tail -n 2 "$tmp/out")"; fi
    done
    "$TRAIN" --data "$tmp/nowhere" >"$tmp/out" 2>&1
    if [ $? -eq 1 ]; then ok; else bad "train_digits without data: $(tail -n 2 "$tmp/out")"; fi
else
    bad "$TRAIN not built"
fi

# The optimizer: a per-pass report on stderr, a clean error for an unknown
# pass, --no-opt on the commands that run models.
if "$INTERP" opt "$MODEL/model.onnx" -o "$tmp/o.onnx" 2>"$tmp/err" && grep -q '^bnfold ' "$tmp/err" &&
    grep -q '^dce ' "$tmp/err"; then ok; else bad "opt report: $(head -n 3 "$tmp/err")"; fi
expect_clean_error "unknown pass" "$INTERP" opt "$MODEL/model.onnx" -o "$tmp/o.onnx" --passes fold,nope
if "$INTERP" opt "$MODEL/model.onnx" -o "$tmp/o.onnx" --passes none 2>/dev/null; then ok; else bad "opt --passes none"; fi
if "$INTERP" test --no-opt --atol 1e-5 "$MODEL" >"$tmp/out" 2>&1; then ok; else bad "test --no-opt: $(tail -n 2 "$tmp/out")"; fi
if "$INTERP" run --no-opt "$MODEL/model.onnx" -i "$MODEL/test_data_set_0/input_0.pb" -o "$tmp/r" --quiet &&
    "$INTERP" bench --no-opt -n 1 "$MODEL/model.onnx" >/dev/null; then ok; else bad "run/bench --no-opt"; fi

# bench measures real work: every input is varying (never folded), token
# ids are valid Gather indices, and it says how many nodes ran.
if "$INTERP" bench -n 2 tests/models/gpt_small/model.onnx >"$tmp/out" 2>&1 &&
    grep -qE '^[1-9][0-9]* of [0-9]+ nodes run, 0 folded at plan time$' "$tmp/out" &&
    ! grep -q '^median 0\.000 ms' "$tmp/out"; then ok; else bad "bench gpt_small: $(cat "$tmp/out")"; fi
# bench --profile: ms per op kind, a fused group named by its body, and
# refused with --compare (it times one way)
if "$INTERP" bench -n 2 --profile "$MODEL/model.onnx" >"$tmp/out" 2>&1 && grep -q '^profile over 2 runs' "$tmp/out" &&
    grep -q 'FusedElementwise\[Conv+Relu\]$' "$tmp/out" && grep -q 'ms total in kernels$' "$tmp/out" &&
    ! "$INTERP" bench -n 1 --profile --compare "$MODEL/model.onnx" >/dev/null 2>&1; then ok; else bad "bench --profile: $(cat "$tmp/out")"; fi
# interp quantize: the digits CNN from its committed calibration sets; the
# int8 model (run as QLinearConv, its float logits as QGemm, after the qlinear pass) keeps the float
# model's predictions on the six samples, and runs in onnxruntime when
# bench/.ort has it (a dev-time tool: skipped silently otherwise).
if "$INTERP" quantize models/digits.onnx --calib models/digits_calib --per-channel -o "$tmp/dq.onnx" 2>"$tmp/err" &&
    grep -q 'quantize: 32 calibration sets; 9 nodes quantized' "$tmp/err"; then ok; else bad "quantize digits: $(head -c 300 "$tmp/err")"; fi
same=0
for k in 0 1 2 3 4 5; do
    a=$("$INTERP" run models/digits.onnx -i models/digits_samples/digit_$k.pb -o "$tmp/qf" --quiet && od -An -f "$tmp/qf/output_0.pb" | tr -s ' ' '\n' | tail -n 10 | awk 'NF { v[n++] = $1 } END { b = 0; for (i = 1; i < n; i++) if (v[i] + 0 > v[b] + 0) b = i; print b }')
    b=$("$INTERP" run "$tmp/dq.onnx" -i models/digits_samples/digit_$k.pb -o "$tmp/qq" --quiet && od -An -f "$tmp/qq/output_0.pb" | tr -s ' ' '\n' | tail -n 10 | awk 'NF { v[n++] = $1 } END { b = 0; for (i = 1; i < n; i++) if (v[i] + 0 > v[b] + 0) b = i; print b }')
    [ -n "$a" ] && [ "$a" = "$b" ] && same=$((same + 1))
done
if [ $same -eq 6 ]; then ok; else bad "quantized digits: $same of 6 predictions as float"; fi
if "$INTERP" opt "$tmp/dq.onnx" -o "$tmp/dqi.onnx" 2>"$tmp/err" && grep -Eq '^qlinear +[0-9]+ +[0-9]+ +0 +6 ' "$tmp/err"; then ok; else bad "qlinear on digits: $(head -n 3 "$tmp/err")"; fi
# --method mse, the sensitivity report and one activation left float: still the float model's predictions
if "$INTERP" quantize models/digits.onnx --calib models/digits_calib --per-channel --method mse --auto-exclude 1 --report \
    -o "$tmp/dqa.onnx" 2>"$tmp/err" && grep -q '^quantize: auto-exclude: .* left float' "$tmp/err" &&
    grep -q '1 activations left float; outputs [0-9.]* dB SQNR$' "$tmp/err" &&
    [ "$(grep -c '^quantize:   .* activation ' "$tmp/err")" -eq 6 ]; then ok; else bad "quantize --auto-exclude: $(tail -n 3 "$tmp/err")"; fi
same=0
for k in 0 1 2 3 4 5; do
    a=$("$INTERP" run models/digits.onnx -i models/digits_samples/digit_$k.pb -o "$tmp/qf" --quiet && od -An -f "$tmp/qf/output_0.pb" | tr -s ' ' '\n' | tail -n 10 | awk 'NF { v[n++] = $1 } END { b = 0; for (i = 1; i < n; i++) if (v[i] + 0 > v[b] + 0) b = i; print b }')
    b=$("$INTERP" run "$tmp/dqa.onnx" -i models/digits_samples/digit_$k.pb -o "$tmp/qq" --quiet && od -An -f "$tmp/qq/output_0.pb" | tr -s ' ' '\n' | tail -n 10 | awk 'NF { v[n++] = $1 } END { b = 0; for (i = 1; i < n; i++) if (v[i] + 0 > v[b] + 0) b = i; print b }')
    [ -n "$a" ] && [ "$a" = "$b" ] && same=$((same + 1))
done
if [ $same -eq 6 ]; then ok; else bad "quantized digits, --auto-exclude 1: $same of 6 predictions as float"; fi
expect_clean_error "quantize without --calib" "$INTERP" quantize models/digits.onnx -o "$tmp/x.onnx"
expect_clean_error "quantize bad method" "$INTERP" quantize models/digits.onnx --calib models/digits_calib --method kl -o "$tmp/x.onnx"
expect_clean_error "quantize empty calib dir" "$INTERP" quantize models/digits.onnx --calib "$tmp/qf/nope" -o "$tmp/x.onnx"
expect_clean_error "quantize wrong input" "$INTERP" quantize "$MODEL/model.onnx" --calib models/digits_calib/set_00 -o "$tmp/x.onnx"
if [ -d bench/.ort/node_modules/onnxruntime-node ] && command -v node >/dev/null 2>&1; then
    if node bench/ort_bench.js "$tmp/dq.onnx" 1 >/dev/null 2>&1 && node bench/ort_bench.js "$tmp/dqi.onnx" 1 >/dev/null 2>&1; then
        ok; else bad "onnxruntime does not run the quantized digits"; fi
fi

# Optimized models against onnxruntime (bench/opt_check.sh), when
# onnxruntime-node is installed (a dev-time tool: skipped silently otherwise).
if command -v node >/dev/null 2>&1 && (cd bench && node -e "require('onnxruntime-node')") >/dev/null 2>&1; then
    if sh bench/opt_check.sh --build "$BUILD" >"$tmp/out" 2>&1; then ok; else bad "opt_check: $(grep -E '^FAIL|passed' "$tmp/out" | head -n 5)"; fi
fi

# interp ops --config: the selection header of the operators a model uses
if "$INTERP" ops --config models/digits.onnx -o "$tmp/ops.h" >"$tmp/out" 2>&1 &&
    grep -q '^#define PFVM_OPS_SELECTED 1$' "$tmp/ops.h" && grep -q '^#define PFVM_OP_Conv 1$' "$tmp/ops.h" &&
    [ "$(grep -c '^#define PFVM_OP_' "$tmp/ops.h")" = 5 ]; then ok; else bad "ops --config: $(cat "$tmp/out" "$tmp/ops.h" | head -n 8)"; fi
# Conv's depthwise kernel: left out for digits (no Conv with one channel per group), kept for dscnn
if grep -q '^#define PFVM_CONV_NO_DEPTHWISE 1' "$tmp/ops.h" &&
    "$INTERP" ops --config tests/models/dscnn/model.onnx -o "$tmp/ops_dw.h" >"$tmp/out" 2>&1 &&
    grep -q '^#define PFVM_OP_Conv 1$' "$tmp/ops_dw.h" && ! grep -q 'PFVM_CONV_NO_DEPTHWISE' "$tmp/ops_dw.h"; then
    ok
else bad "ops --config: PFVM_CONV_NO_DEPTHWISE: $(cat "$tmp/out" "$tmp/ops_dw.h" | head -n 8)"; fi
# Conv's direct loops of 32-bit Arm: left out for digits (8 and 16 output
# channels per group), kept for cnn_small (a group of 2)
if grep -q '^#define PFVM_CONV_NO_DIRECT 1' "$tmp/ops.h" &&
    "$INTERP" ops --config tests/models/cnn_small/model.onnx -o "$tmp/ops_dc.h" >"$tmp/out" 2>&1 &&
    grep -q '^#define PFVM_OP_Conv 1$' "$tmp/ops_dc.h" && ! grep -q 'PFVM_CONV_NO_DIRECT' "$tmp/ops_dc.h"; then
    ok
else bad "ops --config: PFVM_CONV_NO_DIRECT: $(cat "$tmp/out" "$tmp/ops_dc.h" | head -n 8)"; fi
# MaxPool's 8-bit planes: left out for digits planned (its value_info says
# float), kept for digits as exported (MaxPool's input type not in the file);
# the generic float pooling loop left out for digits planned (2-D, no indices)
if "$INTERP" opt models/digits.onnx -o "$tmp/dp.onnx" --planned --quiet >"$tmp/out" 2>&1 &&
    "$INTERP" ops --config "$tmp/dp.onnx" -o "$tmp/ops_dp.h" >>"$tmp/out" 2>&1 &&
    grep -q '^#define PFVM_POOL_NO_INT8 1' "$tmp/ops_dp.h" && ! grep -q 'PFVM_POOL_NO_INT8' "$tmp/ops.h" &&
    grep -q '^#define PFVM_POOL_PLANES_ONLY 1' "$tmp/ops_dp.h"; then
    ok
else bad "ops --config: PFVM_POOL_NO_INT8: $(cat "$tmp/out" "$tmp/ops_dp.h" | head -n 8)"; fi
# the unary operators without the general element-wise engine: for digits
# planned without the fuse pass (Relu reads float32), not for digits as
# exported (types not given) nor fused (the groups' values have no types)
if "$INTERP" opt models/digits.onnx -o "$tmp/dp_nf.onnx" --planned --passes fold,simplify,cse,bnfold,dce --quiet \
    >"$tmp/out" 2>&1 && "$INTERP" ops --config "$tmp/dp_nf.onnx" -o "$tmp/ops_nf.h" >>"$tmp/out" 2>&1 &&
    grep -q '^#define PFVM_UNARY_F32_ONLY 1' "$tmp/ops_nf.h" && ! grep -q 'PFVM_UNARY_F32_ONLY' "$tmp/ops.h"; then
    ok
else bad "ops --config: PFVM_UNARY_F32_ONLY: $(cat "$tmp/out" "$tmp/ops_nf.h" | head -n 12)"; fi
expect_clean_error "ops --config without a model" "$INTERP" ops --config
expect_clean_error "ops --config missing model" "$INTERP" ops --config "$tmp/nope.onnx"
# ---- interp accel (pfvm_accel.h) ----
MLP=tests/models/mlp
if "$INTERP" accel "$MLP/model.onnx" --target targets/mncore2.txt -o "$tmp/mlp.accel" \
    --simulate -i "$MLP/test_data_set_0/input_0.pb" --out "$tmp/accel" >"$tmp/out" 2>"$tmp/err" &&
    [ -f "$tmp/accel/output_0.pb" ] && head -n 1 "$tmp/mlp.accel" | grep -q '^program mncore2$' &&
    grep -q '^simulated [0-9]* cycles' "$tmp/out" && grep -q '^compute lower bound' "$tmp/out" &&
    grep -q '^traffic lower bound' "$tmp/out" &&
    grep -q '^layout plan (cost model): exact search ([0-9]* states at most) [0-9]* cycles, heuristic [0-9]* (gap [0-9.]*%)' "$tmp/out" &&
    grep -q '^  /net/net.0/Gemm (Gemm) -> pe:4\*local:1, local:32  \[PEs 4, [0-9]* cycles\]$' "$tmp/out"; then
    ok
else
    bad "accel mlp --simulate: $(head -c 300 "$tmp/err")"
fi
# the simulated output is the interpreter's (interp run's file, compared by interp test)
mkdir -p "$tmp/accel_case/test_data_set_0"
cp "$MLP/model.onnx" "$tmp/accel_case/model.onnx"
cp "$MLP/test_data_set_0/input_0.pb" "$tmp/accel/output_0.pb" "$tmp/accel_case/test_data_set_0/" 2>/dev/null
if "$INTERP" test --no-opt "$tmp/accel_case" 2>&1 | grep -q '^1 passed, 0 failed'; then ok; else bad "accel mlp output differs from interp's"; fi
expect_error_matching "accel without --target" "no --target FILE given" "$INTERP" accel "$MLP/model.onnx"
expect_error_matching "accel missing target" "cannot open" "$INTERP" accel "$MLP/model.onnx" --target "$tmp/none.txt"
printf 'target t\nlevel r fanout 1 mem 1M\nlevel pe fanout 4 mem 1K down 4\n' >"$tmp/bad_target.txt"
expect_error_matching "accel bad target" "bad_target.txt:3: a level below the root needs down and up" \
    "$INTERP" accel "$MLP/model.onnx" --target "$tmp/bad_target.txt"
# cnn_small (Conv, BatchNormalization, MaxPool, GlobalAveragePool, Flatten, Gemm, LogSoftmax) end to end
if "$INTERP" accel "$MODEL/model.onnx" --target targets/mncore2.txt --simulate \
    -i "$MODEL/test_data_set_0/input_0.pb" --out "$tmp/accel_cnn" >"$tmp/out" 2>"$tmp/err" &&
    grep -q '^  /body/body.0/Conv (Conv) -> pe:2\*local:1, local:8, local:16, local:16  \[PEs 2, [0-9]* cycles\]$' "$tmp/out"; then
    ok
else
    bad "accel cnn_small --simulate: $(head -c 300 "$tmp/err")"
fi
mkdir -p "$tmp/accel_cnn_case/test_data_set_0"
cp "$MODEL/model.onnx" "$tmp/accel_cnn_case/model.onnx"
cp "$MODEL/test_data_set_0/input_0.pb" "$tmp/accel_cnn/output_0.pb" "$tmp/accel_cnn_case/test_data_set_0/" 2>/dev/null
if "$INTERP" test --no-opt "$tmp/accel_cnn_case" 2>&1 | grep -q '^1 passed, 0 failed'; then ok; else bad "accel cnn_small output differs from interp's"; fi
# --onnx: the optimized model with the layouts in metadata_props, loadable again
if "$INTERP" accel "$MODEL/model.onnx" --target targets/mncore2.txt --onnx "$tmp/laid.onnx" >"$tmp/out" 2>"$tmp/err" &&
    grep -a -q 'pfvm.accel.layout./body/body.0/Conv_output_0' "$tmp/laid.onnx" &&
    "$INTERP" run "$tmp/laid.onnx" -i "$MODEL/test_data_set_0/input_0.pb" -o "$tmp/laid_out" >/dev/null 2>&1; then
    ok
else
    bad "accel --onnx: $(head -c 300 "$tmp/err")"
fi
EW=tests/models/expand_where
expect_error_matching "accel unbound dim" "value scores: dim 0 is symbolic (batch); bind it" \
    "$INTERP" accel "$EW/model.onnx" --target targets/mncore2.txt
expect_error_matching "accel --dim unknown name" "--dim bogus: the model has no dimension named 'bogus'" \
    "$INTERP" accel "$EW/model.onnx" --target targets/mncore2.txt --dim bogus=3
expect_error_matching "accel --dim without a value" "--dim wants NAME=VALUE" \
    "$INTERP" accel "$EW/model.onnx" --target targets/mncore2.txt --dim batch
# bound, the graph reaches Shape, which has no accel lowering
expect_error_matching "accel op without lowering" "node /Shape (Shape): no accel lowering" \
    "$INTERP" accel "$EW/model.onnx" --target targets/mncore2.txt --dim batch=4 --dim N=8
printf 'target small\nlevel host fanout 1 mem 1M\nlevel pe fanout 4 mem 64 down 4 up 4 broadcast\npe simd 4 mac float 4\n' >"$tmp/small_pe.txt"
expect_error_matching "accel tile does not fit" "node /net/net.0/Gemm (Gemm): the smallest tile needs 192 bytes, more than the 64 bytes of a PE" \
    "$INTERP" accel "$MLP/model.onnx" --target "$tmp/small_pe.txt"
expect_error_matching "accel --baseline other" "--baseline knows 'naive', not 'smart'" \
    "$INTERP" accel "$MLP/model.onnx" --target targets/mncore2.txt --baseline smart
# the naive baseline (first axis over the PEs: 1 here) simulates to the same output
if "$INTERP" accel "$MLP/model.onnx" --target targets/mncore2.txt --baseline naive --simulate \
    -i "$MLP/test_data_set_0/input_0.pb" --out "$tmp/naive_out" >"$tmp/out" 2>"$tmp/err" &&
    grep -q '^plan: baseline naive' "$tmp/out" && grep -q '^simulated [0-9]* cycles' "$tmp/out" &&
    [ -f "$tmp/naive_out/output_0.pb" ]; then
    ok
else
    bad "accel --baseline naive: $(head -c 300 "$tmp/err")"
fi

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
