#!/usr/bin/python3
"""Inputs for bench/int8.sh (dev-time): N standard-normal float32 tensors
of SHAPE, each as DIR/KKK/input_0.pb and DIR/KKK.bin (raw, for
onnxruntime-node), from a fixed seed.

    /usr/bin/python3 bench/int8_inputs.py DIR N SEED d0,d1,...

With --round, copies the inputs of IN_DIR to OUT_DIR rounded to the grid of
the QDQ model's input (its first QuantizeLinear of the graph input): what
the float model sees when only its input is quantized.

    /usr/bin/python3 bench/int8_inputs.py --round QDQ.onnx IN_DIR OUT_DIR
"""
import os
import sys

import numpy as np
from onnx import numpy_helper


def round_inputs(model, src, out):
    import onnx
    m = onnx.load(model)
    inits = {t.name: numpy_helper.to_array(t) for t in m.graph.initializer}
    x = m.graph.input[0].name
    q = [n for n in m.graph.node if n.op_type == "QuantizeLinear" and n.input[0] == x][0]
    s, z = float(inits[q.input[1]]), float(inits[q.input[2]])
    lo, hi = (0, 255) if inits[q.input[2]].dtype == np.uint8 else (-128, 127)
    for k in sorted(os.listdir(src)):
        p = os.path.join(src, k, "input_0.pb")
        if not os.path.isfile(p):
            continue
        v = numpy_helper.to_array(onnx.load_tensor(p))
        r = ((np.clip(np.round(v / np.float32(s)) + z, lo, hi) - z) * s).astype(np.float32)
        os.makedirs(os.path.join(out, k), exist_ok=True)
        with open(os.path.join(out, k, "input_0.pb"), "wb") as f:
            f.write(numpy_helper.from_array(r).SerializeToString())


def main():
    if sys.argv[1] == "--round":
        round_inputs(sys.argv[2], sys.argv[3], sys.argv[4])
        return
    out, n, seed, shape = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), [int(d) for d in sys.argv[4].split(",")]
    rng = np.random.RandomState(seed)
    for k in range(n):
        x = rng.randn(*shape).astype(np.float32)
        d = os.path.join(out, "%03d" % k)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "input_0.pb"), "wb") as f:
            f.write(numpy_helper.from_array(x).SerializeToString())
        x.tofile(d + ".bin")


if __name__ == "__main__":
    main()
