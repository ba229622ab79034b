#!/bin/sh
# Firmware tests: builds pfvm for QEMU's mps2-an386 (Cortex-M4F) and
# mps2-an500 (Cortex-M7) with arm-none-eabi-gcc and newlib-nano, runs each
# model under `qemu-system-arm -icount shift=0` (output over semihosting)
# and compares every output with the same program built for the host, bit
# for bit (and that program's outputs with `build/interp run`'s, when
# build/interp exists), and fails when pfvm_exec_run allocates. One line per
# model and board (with flash, RAM, instructions and the soft-double call
# sites linked), then "N passed, M failed".
#
#   sh tests/mcu/run.sh [MODEL...]      (names from the list below)
#
# Needs gcc-arm-none-eabi, libnewlib-arm-none-eabi, qemu-system-arm (see
# tools/setup.sh) and nanopb's runtime sources, which tools/fetch_nanopb.sh
# takes from Debian's source package into build/nanopb-src (cached).
# Build products go to build/mcu/ (MCU_BUILD overrides); each run's
# semihosting output is kept there as BOARD/MODEL.out, which bench/mcu.sh
# reads. MCU_TIMEOUT (seconds, default 120) bounds each QEMU run.
set -u
cd "$(dirname "$0")/../.."
B=${MCU_BUILD:-build/mcu}
TIMEOUT=${MCU_TIMEOUT:-120}
CROSS=arm-none-eabi-gcc
HOSTCC=${CC:-cc}
# the host reference: pfvm as interp builds it (run-time dispatch to the
# CPU's kernels); MCU_HOST_FLAGS=-DPFVM_NO_DISPATCH\ -DPFVM_EXACT_FMA for the portable ones
HOST_PFVM_FLAGS=${MCU_HOST_FLAGS:-}

# name  model  input  [variant: sel = pfvm compiled with PFVM_NO_AUTODIFF and only the operators
# the model uses (PFVM_OPS_SELECTED), the model prepared by `interp opt`
# (both made by build/interp into $B) and run without pfvm_optimize
# (main.c with MCU_PREPARED); planned = the same with PFVM_NO_SHAPE_INFERENCE, PFVM_PLANNED_ONLY
# and PFVM_NO_FUSION too, the model prepared by `interp opt --planned --passes
# fold,simplify,cse,bnfold,dce` (not fused; its plan stored in it:
# no inference and no planner on the device), the operators those of
# digits_planned and mlp_mnist_planned together, arena blocks of 1 KB,
# float32 only (PFVM_FLOAT32_ONLY: the image must link no soft-double call),
# a reader of dense tensors only (PFVM_ONNX_TENSORS_ONLY), one thread (PFVM_NO_THREADS), terse
# messages (PFVM_TERSE_MESSAGES); the
# selection header leaves Conv's depthwise kernel out (PFVM_CONV_NO_DEPTHWISE)
# and MaxPool's 8-bit planes (PFVM_POOL_NO_INT8); small = planned with
# PFVM_SMALL_KERNELS (one loop nest per product: fewer bytes, slower)]
MODELS="digits models/digits.onnx models/digits_samples/digit_0.pb
digits_sel $B/digits_sel.onnx models/digits_samples/digit_0.pb sel
digits_planned $B/digits_planned.onnx models/digits_samples/digit_0.pb planned
mlp_mnist_planned $B/mlp_mnist_planned.onnx tests/models/mlp_mnist/test_data_set_0/input_0.pb planned
digits_small $B/digits_planned.onnx models/digits_samples/digit_0.pb small
mlp tests/models/mlp/model.onnx tests/models/mlp/test_data_set_0/input_0.pb
cnn_small tests/models/cnn_small/model.onnx tests/models/cnn_small/test_data_set_0/input_0.pb
dscnn tests/models/dscnn/model.onnx tests/models/dscnn/test_data_set_0/input_0.pb
mlp_mnist tests/models/mlp_mnist/model.onnx tests/models/mlp_mnist/test_data_set_0/input_0.pb
digits_q8 $B/digits_q8.onnx models/digits_samples/digit_0.pb
dscnn_q8 $B/dscnn_q8.onnx tests/models/dscnn/test_data_set_0/input_0.pb
odd_q8 $B/odd_q8.onnx tests/models/q8_odd/test_data_set_0/input_0.pb"
BOARDS="an386 an500"

for tool in $CROSS qemu-system-arm; do
    if ! command -v $tool >/dev/null; then
        echo "mcu: $tool not installed (sh tools/setup.sh)"
        echo "0 passed, 1 failed"
        exit 1
    fi
done
if ! sh tools/fetch_nanopb.sh build/nanopb-src; then
    echo "mcu: could not fetch nanopb's runtime sources"
    echo "0 passed, 1 failed"
    exit 1
fi
want=${*:-}

board_flags() {
    case $1 in
        an386) echo "-mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16" ;;
        an500) echo "-mcpu=cortex-m7 -mthumb -mfloat-abi=hard -mfpu=fpv5-d16" ;;
    esac
}
board_machine() {
    case $1 in
        an386) echo "mps2-an386" ;;
        an500) echo "mps2-an500" ;;
    esac
}

mkdir -p "$B/sysinc" "$B/host"
ln -sfn /usr/include/stb "$B/sysinc/stb" # stb_ds.h only, not the host's libc headers
# -std=c99 keeps floating-point contraction off, as on the host: no fused
# multiply-adds the host build would not make
COMMON="-std=c99 -Wall -Wextra -pedantic -Os -ffunction-sections -fdata-sections -I. -isystem build/nanopb-src -idirafter $B/sysinc"
NANOPB="pb_common pb_decode pb_encode"

# Rebuilds $2 from the sources $3... when any of them (or the headers) is newer.
stale() {
    out=$1
    shift
    [ -f "$out" ] || return 0
    for s in "$@" pfvm.h pfvm_onnx.h tests/mcu/run.sh; do
        [ "$s" -nt "$out" ] && return 0
    done
    return 1
}

build_fail=0
compile() { # CC FLAGS OUT SRC [EXTRA...]
    cc=$1 flags=$2 out=$3 src=$4
    shift 4
    if stale "$out" "$src" tests/mcu/main.c; then
        # shellcheck disable=SC2086
        if ! nice $cc $COMMON $flags "$@" -c "$src" -o "$out" 2>"$out.log"; then
            echo "mcu: compiling $src for $out failed:"
            head -n 20 "$out.log"
            build_fail=1
        fi
    fi
}

# the operator-selected variant: the prepared model and its selection header
sel=0
if [ -z "$want" ] || echo " $want " | grep -q " digits_sel "; then
    if [ -x build/interp ]; then
        if stale "$B/digits_sel.onnx" models/digits.onnx build/interp; then
            rm -f "$B"/*/pfvm_impl_sel.o
            build/interp opt models/digits.onnx -o "$B/digits_sel.onnx" >"$B/digits_sel.log" 2>&1 &&
                build/interp ops --config "$B/digits_sel.onnx" -o "$B/digits_ops.h" || build_fail=1
        fi
        sel=1
    else
        echo "mcu: digits_sel needs build/interp (make), left out"
    fi
fi
SEL_FLAGS="-include $B/digits_ops.h -DPFVM_NO_AUTODIFF"
# the int8 cases' models (*_q8), made by build/interp
case " $want " in "  " | *_q8\ *) sh tests/mcu/q8.sh "$B" || build_fail=1 ;; esac

# the planned variant: models with their plan stored, their selection header
# (prepared without the fuse pass: the build leaves the fused-loop engine
# out, PFVM_NO_FUSION)
PLANNED_PASSES=fold,simplify,cse,bnfold,dce
planned=0
if [ -z "$want" ] || echo " $want " | grep -qE " ((digits|mlp_mnist)_planned|digits_small) "; then
    if [ -x build/interp ]; then
        if stale "$B/planned_ops.h" models/digits.onnx tests/models/mlp_mnist/model.onnx build/interp; then
            rm -f "$B"/*/pfvm_impl_planned.o "$B"/*/pfvm_impl_small.o
            build/interp opt models/digits.onnx -o "$B/digits_planned.onnx" --planned --passes "$PLANNED_PASSES" >"$B/planned.log" 2>&1 &&
                build/interp opt tests/models/mlp_mnist/model.onnx -o "$B/mlp_mnist_planned.onnx" --planned --passes "$PLANNED_PASSES" >>"$B/planned.log" 2>&1 &&
                build/interp ops --config "$B/digits_planned.onnx" "$B/mlp_mnist_planned.onnx" -o "$B/planned_ops.h" ||
                { build_fail=1; cat "$B/planned.log"; }
        fi
        planned=1
    else
        echo "mcu: the planned models need build/interp (make), left out"
    fi
fi
PLANNED_SWITCHES="-DPFVM_NO_AUTODIFF -DPFVM_NO_SHAPE_INFERENCE -DPFVM_PLANNED_ONLY -DPFVM_ARENA_CHUNK=1024 -DPFVM_FLOAT32_ONLY -DPFVM_ONNX_TENSORS_ONLY -DPFVM_NO_THREADS -DPFVM_TERSE_MESSAGES -DPFVM_NO_FUSION -DPFVM_LEAN_KERNELS"
PLANNED_FLAGS="-include $B/planned_ops.h $PLANNED_SWITCHES"
# the reader + executor with no kernels (no_kernels.elf: the planned build with
# an empty operator selection, linked into digits_planned's program; not run,
# only measured and held to its flash budget)
printf '#define PFVM_OPS_SELECTED 1\n' >"$B/no_ops.tmp"
cmp -s "$B/no_ops.tmp" "$B/no_ops.h" || mv "$B/no_ops.tmp" "$B/no_ops.h"
rm -f "$B/no_ops.tmp"

# the libraries, once per board and for the host (in parallel: two jobs)
pids=""
for board in $BOARDS; do
    mkdir -p "$B/$board"
    (
        f=$(board_flags $board)
        compile $CROSS "$f" "$B/$board/pfvm_impl.o" tests/mcu/pfvm_impl.c
        [ $sel = 1 ] && compile $CROSS "$f $SEL_FLAGS" "$B/$board/pfvm_impl_sel.o" tests/mcu/pfvm_impl.c
        [ $planned = 1 ] && compile $CROSS "$f $PLANNED_FLAGS" "$B/$board/pfvm_impl_planned.o" tests/mcu/pfvm_impl.c
        [ $planned = 1 ] && compile $CROSS "$f $PLANNED_FLAGS -DPFVM_SMALL_KERNELS" "$B/$board/pfvm_impl_small.o" tests/mcu/pfvm_impl.c
        [ $planned = 1 ] && [ $board = an386 ] &&
            compile $CROSS "$f -include $B/no_ops.h $PLANNED_SWITCHES" "$B/$board/pfvm_impl_none.o" tests/mcu/pfvm_impl.c
        [ $sel = 1 ] || [ $planned = 1 ] && compile $CROSS "$f -DMCU_PREPARED" "$B/$board/main_sel.o" tests/mcu/main.c
        for n in $NANOPB; do compile $CROSS "$f" "$B/$board/$n.o" build/nanopb-src/$n.c; done
        compile $CROSS "$f" "$B/$board/startup.o" tests/mcu/startup.c
        compile $CROSS "$f" "$B/$board/main.o" tests/mcu/main.c
        [ $build_fail = 0 ]
    ) &
    pids="$pids $!"
done
(
    compile $HOSTCC "-O2 $HOST_PFVM_FLAGS" "$B/host/pfvm_impl.o" tests/mcu/pfvm_impl.c
    [ $sel = 1 ] && compile $HOSTCC "-O2 $HOST_PFVM_FLAGS $SEL_FLAGS" "$B/host/pfvm_impl_sel.o" tests/mcu/pfvm_impl.c
    compile $HOSTCC "-O2" "$B/host/main.o" tests/mcu/main.c -DMCU_HOST
    [ $planned = 1 ] && compile $HOSTCC "-O2 $HOST_PFVM_FLAGS $PLANNED_FLAGS" "$B/host/pfvm_impl_planned.o" tests/mcu/pfvm_impl.c
    [ $planned = 1 ] && compile $HOSTCC "-O2 $HOST_PFVM_FLAGS $PLANNED_FLAGS -DPFVM_SMALL_KERNELS" "$B/host/pfvm_impl_small.o" tests/mcu/pfvm_impl.c
    [ $sel = 1 ] || [ $planned = 1 ] && compile $HOSTCC "-O2 -DMCU_PREPARED" "$B/host/main_sel.o" tests/mcu/main.c -DMCU_HOST
    [ $build_fail = 0 ]
) &
pids="$pids $!"
for p in $pids; do wait $p || build_fail=1; done
if [ $build_fail != 0 ]; then
    echo "0 passed, 1 failed"
    exit 1
fi

rm -f "$B/.fails" "$B/.passes"
echo "$MODELS" | while read -r name model input variant; do
    if [ -n "$want" ] && ! echo " $want " | grep -q " $name "; then continue; fi
    if [ "$variant" = sel ] && [ $sel = 0 ]; then continue; fi
    [ -f "$model" ] || continue # a *_q8 model without build/interp
    if { [ "$variant" = planned ] || [ "$variant" = small ]; } && [ $planned = 0 ]; then continue; fi
    impl=pfvm_impl${variant:+_$variant}.o
    main=main${variant:+_sel}.o # sel, planned: no pfvm_optimize on the device (MCU_PREPARED)
    # host reference: same program, same embedded bytes, portable kernels
    h="$B/host/$name"
    if stale "$h" "$model" "$input" tests/mcu/model.S "$B/host/$main" "$B/host/$impl"; then
        $HOSTCC -c tests/mcu/model.S -DMODEL_FILE="\"$model\"" -DINPUT_FILE="\"$input\"" -o "$h.model.o" &&
            $HOSTCC "$B/host/$main" "$B/host/$impl" "$h.model.o" -o "$h" -lprotobuf-nanopb -lm ||
            { echo "FAIL $name host: link"; echo x >>"$B/.fails"; continue; }
    fi
    # and the host program against `interp run` itself, when it is built
    ref=""
    if [ -x build/interp ]; then
        ref="$h.interp"
        rm -rf "$ref"
        build/interp run "$model" -i "$input" -o "$ref" --quiet >/dev/null 2>&1 || ref="$h.interp-failed"
    fi
    "$h" $ref >"$h.out" 2>&1
    grep -E '^(out|v) ' "$h.out" >"$h.bits"
    if ! grep -q '^done$' "$h.out" || [ ! -s "$h.bits" ] || grep -q '^FAIL' "$h.out"; then
        echo "FAIL $name host: $(grep -m1 FAIL "$h.out")"
        echo x >>"$B/.fails"
        continue
    fi
    for board in $BOARDS; do
        d="$B/$board/$name"
        f=$(board_flags $board)
        if stale "$d.elf" "$model" "$input" tests/mcu/model.S tests/mcu/mps2.ld "$B/$board/$main" "$B/$board/$impl"; then
            # shellcheck disable=SC2086
            $CROSS $f -c tests/mcu/model.S -DMODEL_FILE="\"$model\"" -DINPUT_FILE="\"$input\"" -o "$d.model.o" &&
                $CROSS $f --specs=nano.specs --specs=nosys.specs -nostartfiles -T tests/mcu/mps2.ld \
                    -Wl,--gc-sections -Wl,-Map="$d.map" -Wl,--no-warn-rwx-segments \
                    "$B/$board/startup.o" "$B/$board/$main" "$B/$board/$impl" \
                    "$B/$board/pb_common.o" "$B/$board/pb_decode.o" "$B/$board/pb_encode.o" "$d.model.o" \
                    -lm -o "$d.elf" 2>"$d.link.log" ||
                { echo "FAIL $name $board: link: $(head -c 300 "$d.link.log")"; echo x >>"$B/.fails"; continue; }
        fi
        start=$(date +%s)
        timeout "$TIMEOUT" qemu-system-arm -M "$(board_machine $board)" -icount shift=0 \
            -display none -monitor none -serial none -nodefaults -net none \
            -semihosting-config enable=on,target=native -kernel "$d.elf" >"$d.out" 2>&1
        rc=$?
        secs=$(($(date +%s) - start))
        grep -E '^(out|v) ' "$d.out" >"$d.bits"
        insns=$(($(sed -n 's/^stat run_ticks //p' "$d.out" | head -n 1) * 40))
        if [ $rc -ne 0 ] || ! grep -q '^done$' "$d.out"; then
            echo "FAIL $name $board: exit $rc$([ $rc = 124 ] && echo ' (timeout)'): $(grep -v -E '^(out|v|stat) ' "$d.out" | head -n 3 | tr '\n' ' ')"
            echo x >>"$B/.fails"
        elif [ "$(sed -n 's/^stat run_alloc_calls //p' "$d.out")" != 0 ]; then
            echo "FAIL $name $board: pfvm_exec_run allocated $(sed -n 's/^stat run_alloc_calls //p' "$d.out") times ($(sed -n 's/^stat run_alloc_bytes //p' "$d.out") bytes)"
            echo x >>"$B/.fails"
        elif ! cmp -s "$h.bits" "$d.bits"; then
            echo "FAIL $name $board: outputs differ from the host's ($(diff "$h.bits" "$d.bits" | grep -c '^>') lines)"
            diff "$h.bits" "$d.bits" | head -n 6
            echo x >>"$B/.fails"
        else
            # flash: code + rodata (+ .data's initial values), the model apart; RAM: static + heap + stack
            flash=$(arm-none-eabi-size -A "$d.elf" | awk '$1 ~ /^\.(text|rodata|data|ARM\.ex(idx|tab)|(pre)?init_array|fini_array)$/ { s += $2 } END { print s }')
            static=$(arm-none-eabi-size -A "$d.elf" | awk '$1 == ".data" || $1 == ".bss" { s += $2 } END { print s }')
            heap=$(sed -n 's/^stat heap_sbrk //p' "$d.out")
            stack=$(sed -n 's/^stat stack_\(setup\|run\) //p' "$d.out" | sort -n | tail -n 1)
            vals=$(awk '$1 == "out" { s += $4 } END { print s }' "$d.bits")
            same=$([ -n "$ref" ] && echo "host and interp" || echo "host")
            # calls into libgcc's soft-double routines linked: none in the
            # planned (PFVM_FLOAT32_ONLY) images, reported for the others
            sd=$(arm-none-eabi-objdump -d "$d.elf" | grep -cE '[[:space:]](bl|b\.w|b)[[:space:]]+[0-9a-f]+ <__aeabi_(d[a-z0-9]+|[a-z0-9]+2d|cd[a-z0-9]+)>')
            if { [ "$variant" = planned ] || [ "$variant" = small ]; } && [ "$sd" != 0 ]; then
                echo "FAIL $name $board: $sd soft-double call sites linked in a PFVM_FLOAT32_ONLY image (arm-none-eabi-objdump -d $d.elf)"
                echo x >>"$B/.fails"
                continue
            fi
            echo "ok   $name $board: $vals values bit-exact with the $same; flash $flash B; RAM $((static + heap + stack)) B (static $static + heap $heap + stack $stack); $insns instructions/inference; no allocation in run; $sd soft-double call sites; ${secs}s"
            echo x >>"$B/.passes"
        fi
    done
done

# the reader + executor with no kernels, on the M4 (after digits_planned: its model object)
if [ $planned = 1 ] && [ -f "$B/an386/digits_planned.model.o" ] && { [ -z "$want" ] || echo " $want " | grep -q " digits_planned "; }; then
    d="$B/an386/no_kernels"
    if stale "$d.elf" "$B/an386/pfvm_impl_none.o" "$B/an386/main_sel.o" "$B/an386/digits_planned.model.o" tests/mcu/mps2.ld; then
        # shellcheck disable=SC2086
        $CROSS $(board_flags an386) --specs=nano.specs --specs=nosys.specs -nostartfiles -T tests/mcu/mps2.ld -Wl,--gc-sections \
            -Wl,-Map="$d.map" -Wl,--no-warn-rwx-segments "$B/an386/startup.o" "$B/an386/main_sel.o" \
            "$B/an386/pfvm_impl_none.o" "$B/an386/pb_common.o" "$B/an386/pb_decode.o" "$B/an386/pb_encode.o" \
            "$B/an386/digits_planned.model.o" -lm -o "$d.elf" 2>"$d.link.log" ||
            { echo "FAIL no_kernels an386: link: $(head -c 300 "$d.link.log")"; echo x >>"$B/.fails"; rm -f "$d.map"; }
    fi
fi

# Flash budget: pfvm's bytes (tests/mcu/flash_by_origin.awk over the M4's
# linker map) in each image listed in tests/mcu/flash_budget.txt may not
# grow more than FLASH_SLACK bytes past the figure recorded there, so that
# a merge cannot grow the firmware unnoticed. Images this run did not make
# are left out.
FLASH_SLACK=512
grep -v '^#' tests/mcu/flash_budget.txt | while read -r name budget; do
    [ -n "$name" ] || continue
    if [ "$name" != no_kernels ] && [ -n "$want" ] && ! echo " $want " | grep -q " $name "; then continue; fi
    [ "$name" = no_kernels ] && { [ -n "$want" ] && ! echo " $want " | grep -q " digits_planned "; } && continue
    map="$B/an386/$name.map"
    [ -f "$map" ] || continue
    set -- $(awk -f tests/mcu/flash_by_origin.awk "$map")
    if [ "$1" -gt $((budget + FLASH_SLACK)) ]; then
        echo "FAIL flash $name an386: pfvm takes $1 B, $(($1 - budget)) B past its budget of $budget B (+ $FLASH_SLACK B slack)."
        echo "     A growth on purpose: set $name's figure in tests/mcu/flash_budget.txt to $1 and say why in the commit"
        echo "     (python3 bench/flash_by_dir.py --purpose ${map%.map}.elf shows where the bytes go)."
        echo x >>"$B/.fails"
    else
        echo "ok   flash $name an386: pfvm $1 B, budget $budget B (+ $FLASH_SLACK B)$([ "$1" -lt $((budget - FLASH_SLACK)) ] && echo "; $((budget - $1)) B under it: lower the figure in tests/mcu/flash_budget.txt")"
    fi
done
pass=$(cat "$B/.passes" 2>/dev/null | wc -l)
fail=$(cat "$B/.fails" 2>/dev/null | wc -l)
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
