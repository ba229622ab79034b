#!/usr/bin/python3
"""Writes the handwritten digits Debian's python3-sklearn ships as ONNX
TensorProto files for the training example (dev-time tool).

    /usr/bin/python3 tools/make_digits_data.py

examples/data/digits_images.pb  uint8 [1797, 8, 8], pixel values 0..16
examples/data/digits_labels.pb  uint8 [1797], the digit 0..9
The order is shuffled with a fixed seed: the first 1437 images (80%) are the
training set, the remaining 360 the test set.
"""
import os

import numpy as np
from onnx import numpy_helper
from sklearn.datasets import load_digits

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "examples", "data")


def main():
    digits = load_digits()
    order = np.random.RandomState(0).permutation(len(digits.images))
    images = digits.images[order].astype(np.uint8)
    labels = digits.target[order].astype(np.uint8)
    os.makedirs(OUT, exist_ok=True)
    for name, arr in (("digits_images", images), ("digits_labels", labels)):
        t = numpy_helper.from_array(arr, name)
        with open(os.path.join(OUT, name + ".pb"), "wb") as f:
            f.write(t.SerializeToString())
    print("wrote %d images (%d train, %d test) to %s" % (len(images), int(0.8 * len(images)),
                                                        len(images) - int(0.8 * len(images)), OUT))


if __name__ == "__main__":
    main()
