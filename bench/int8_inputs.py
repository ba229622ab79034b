#!/usr/bin/python3
"""Inputs for bench/int8.sh (dev-time): N standard-normal float32 tensors
of SHAPE, each as DIR/KKK/input_0.pb and DIR/KKK.bin (raw, for
onnxruntime-node), from a fixed seed.

    /usr/bin/python3 bench/int8_inputs.py DIR N SEED d0,d1,...
"""
import os
import sys

import numpy as np
from onnx import numpy_helper


def main():
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
