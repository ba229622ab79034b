#!/bin/sh
# int8 on Cortex-M (issue 20): instructions per int8 multiply-accumulate of
# the int8 digits CNN and DS-CNN on mps2-an386 (Cortex-M4F) and mps2-an500
# (Cortex-M7) under QEMU -icount, beside their float models, from the
# firmware tests (tests/mcu/run.sh: digits_q8 and dscnn_q8 are the models
# quantized and lowered by build/interp, tests/mcu/q8.sh; every output
# bit-exact with the host). Then where one M4 inference spends its
# instructions (QEMU trace, bench/qemu_profile.py). Writes bench/int8_mcu.md.
#
#   sh bench/int8_mcu.sh
set -eu
cd "$(dirname "$0")/.."
B=${MCU_BUILD:-build/mcu}
OUT=bench/int8_mcu.md
MODELS="digits digits_q8 dscnn dscnn_q8"
sh tests/mcu/run.sh $MODELS >"$B/int8_run.log" 2>&1 || { cat "$B/int8_run.log"; exit 1; }
stat() { sed -n "s/^stat $2 //p" "$1" | head -n 1; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b ? a / b : 0 }'; }
{
    echo "# int8 on Cortex-M (QEMU)"
    echo
    echo "Made by \`sh bench/int8_mcu.sh\` on $(date -u +%Y-%m-%d) ($(git rev-parse --short HEAD 2>/dev/null || echo '?'));"
    echo "firmware tests: $(tail -n 1 "$B/int8_run.log") (every output bit-exact with the host build and \`interp run\`)."
    echo "Build as tests/mcu/run.sh (\`arm-none-eabi-gcc\` $(arm-none-eabi-gcc -dumpversion) -Os, newlib-nano); QEMU"
    echo "$(qemu-system-arm --version | head -n 1 | awk '{print $4}') \`-icount shift=0\` (instructions, not cycles). The int8 models: \`interp quantize"
    echo "MODEL --calib DIR --per-channel\` (digits: models/digits_calib; dscnn: its test input) then"
    echo "\`interp opt\` (QLinearConv); the device runs them as \`interp run\` does. MACs: the float"
    echo "model's Conv and Gemm multiply-adds (main.c's count), the same for both forms."
    echo
    echo "| model | MACs | M4 insns / inference | M4 insns / MAC | M7 insns / inference | M7 insns / MAC | heap peak | stack (run) |"
    echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
    for m in $MODELS; do
        macs=$(stat "$B/host/${m%_q8}.out" macs)
        i4=$(($(stat "$B/an386/$m.out" run_ticks) * 40))
        i7=$(($(stat "$B/an500/$m.out" run_ticks) * 40))
        echo "| $m | $macs | $i4 | $(ratio $i4 $macs) | $i7 | $(ratio $i7 $macs) | $(stat "$B/an386/$m.out" heap_sbrk) | $(stat "$B/an386/$m.out" stack_run) |"
    done
    echo
    cat <<'MD'
Target (issue 20): <= 1.5 instructions per int8 MAC on the M4: both int8 models meet it
(the table).

- The GEMM tile (`pfvm__qg_tile`, 4x2 SMLAD, a naked assembly function) is 11 instructions
  per 16 MACs in its loop (four reduction pairs per iteration, three more for the bound);
  with its call (the sums start from the biases: one LDM) about 0.78 per MAC of the dense
  and pointwise convolutions. A product of one column (a Gemm after the qlinear pass:
  digits' 512 -> 64) runs `pfvm__qg_gemv_tile` instead:
  4 rows x 1 column from one int16 vector (the input minus its zero point, no panels to
  zero and fill), per reduction pair one LDM of the four rows' words and four SMLADs, x
  two pairs per LDRD: 24 instructions per 32 MACs in its loop (the 4x2 tile spent its 11
  per 16 on 8 useful ones). A last Gemm whose logits stay float is QGemm (exact int32
  sums, portable C on the M4: 4% of digits_q8's instructions). Requantization (`pfvm__qc_store_hi`): SMMLA, ASR, USAT,
  STRB, two outputs per step, about 8 instructions per output (one output per K MACs:
  it weighs most after DS-CNN's depthwise layers, 9 MACs per output). The depthwise
  3x3 kernel (`pfvm__qc_dw3_rows2`) runs two output rows per pass: 13.5 instructions
  per output in its loop, about 15 with the rows' ends (DS-CNN's rows are 5 wide).
  `pfvm__q_k_qlinear_conv` holds the inlined plane fill (UXTB16/SSUB16/PKHBT, four
  bytes per step), the loops around the kernels and the calls.
- digits_q8 (520440 instructions before these three): its 2x2 MaxPool on uint8 runs one
  loop over each plane (unpadded 2x2 windows at stride 2, inlined in `pfvm__nn_pool`: two
  outputs per USUB8/SEL, then the same on the word and itself shifted by a byte): about
  8000 instructions for 512 outputs with the node's setup (25300 through the row kernel
  and `pfvm__nn_krange32`). The 3x3 convolutions' im2col fills both halves of the
  panels' pair words per pass at stride 1 (`pfvm__qc_pair_rows` per pair of kernel
  positions, `pfvm__qc_pair_run_dsp` per row: an LDR of each position's two columns,
  PKHBT/PKHTB, four columns per step): 48500 instructions for the 9728 values of both
  convolutions, 5 per value with the calls (the rows are 8 columns), against about 9.5
  for the one-position copy inlined in `pfvm__q_k_qlinear_conv` (123653 before, 26209
  now). The 512 -> 64 Gemm: 24784 in the one-column tile against about 48000 in the
  4x2 tile, and no panels to pack (`pfvm__qc_pack_pairs`, 11264) or zero (memset,
  17717 before, 10519 now).
MD
    for m in digits_q8 dscnn_q8; do
        echo
        echo "### Where $m's M4 inference goes"
        echo
        echo "\`qemu-system-arm -M mps2-an386 -icount shift=0 ... -kernel $B/an386/$m.elf -d in_asm,exec,nochain -D LOG\`,"
        echo "\`python3 bench/qemu_profile.py ELF LOG\` (one pfvm_exec_run; inlined code counts in its caller):"
        echo
        qemu-system-arm -M mps2-an386 -icount shift=0 -display none -monitor none -serial none -nodefaults -net none \
            -semihosting-config enable=on,target=native -kernel "$B/an386/$m.elf" \
            -d in_asm,exec,nochain -D "$B/$m.trace" >/dev/null 2>&1
        python3 bench/qemu_profile.py "$B/an386/$m.elf" "$B/$m.trace" 12
        rm -f "$B/$m.trace"
    done
} >"$OUT"
cat "$OUT"
