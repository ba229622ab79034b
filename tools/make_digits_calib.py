#!/usr/bin/python3
"""Writes calibration and test inputs for quantizing models/digits.onnx
(dev-time tool; the calibration sets are committed).

    /usr/bin/python3 tools/make_digits_calib.py            calibration: models/digits_calib/set_KK/input_0.pb
    /usr/bin/python3 tools/make_digits_calib.py --test DIR  the 360 held-out images: DIR/KKK/input_0.pb, DIR/KKK.bin, DIR/labels.txt

The split is tools/make_digits.py's (RandomState(0) permutation, first 80%
for training): calibration images come from the training part only.
"""
import os
import sys

import numpy as np
from onnx import numpy_helper
from sklearn.datasets import load_digits

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def write(dirpath, img, raw=False):
    os.makedirs(dirpath, exist_ok=True)
    with open(os.path.join(dirpath, "input_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(img, "image").SerializeToString())
    if raw:  # for onnxruntime-node (bench/int8_ort.js)
        img.tofile(dirpath + ".bin")


def main():
    digits = load_digits()
    x = (digits.images / 16.0).astype(np.float32)[:, None]
    order = np.random.RandomState(0).permutation(len(x))
    split = int(0.8 * len(x))
    tr, te = order[:split], order[split:]
    if len(sys.argv) > 2 and sys.argv[1] == "--test":
        out = sys.argv[2]
        os.makedirs(out, exist_ok=True)
        with open(os.path.join(out, "labels.txt"), "w") as f:
            for k, i in enumerate(te):
                write(os.path.join(out, "%03d" % k), x[i:i + 1], raw=True)
                f.write("%03d %d\n" % (k, int(digits.target[i])))
        return
    for k, i in enumerate(tr[:32]):
        write(os.path.join(ROOT, "models", "digits_calib", "set_%02d" % k), x[i:i + 1])


if __name__ == "__main__":
    main()
