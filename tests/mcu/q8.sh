#!/bin/sh
# The int8 firmware cases of tests/mcu/run.sh (digits_q8, dscnn_q8, odd_q8: the
# kernels' remainder paths on odd shapes, tests/models/q8_odd): each
# float model quantized by build/interp (QDQ: per-channel int8 weights,
# uint8 activations) and lowered to its integer form by `interp opt`
# (QLinearConv, ...), written to DIR/NAME.onnx; remade when the float model
# or build/interp is newer. No Python: the calibration sets are committed
# (digits: models/digits_calib; the others: their test input).
#
#   sh tests/mcu/q8.sh DIR
set -u
B=$1
if [ ! -x build/interp ]; then
    echo "mcu: the int8 cases need build/interp (make), left out"
    exit 0
fi
q8() { # NAME MODEL CALIB
    out=$B/$1.onnx
    if [ -f "$out" ] && [ ! "$2" -nt "$out" ] && [ ! build/interp -nt "$out" ]; then
        return 0
    fi
    if ! build/interp quantize "$2" --calib "$3" --per-channel -o "$B/$1.qdq.onnx" >"$B/$1.log" 2>&1 ||
        ! build/interp opt "$B/$1.qdq.onnx" -o "$out" >>"$B/$1.log" 2>&1; then
        echo "mcu: making $out failed: $(tail -n 3 "$B/$1.log")"
        rm -f "$out"
        return 1
    fi
}
mkdir -p "$B"
q8 digits_q8 models/digits.onnx models/digits_calib &&
    q8 dscnn_q8 tests/models/dscnn/model.onnx tests/models/dscnn/test_data_set_0 &&
    q8 odd_q8 tests/models/q8_odd/model.onnx tests/models/q8_odd/test_data_set_0
