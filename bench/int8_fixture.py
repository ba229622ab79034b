#!/usr/bin/python3
"""A second mobilenet_v2 for bench/int8.sh (dev-time, needs torch and
torchvision): tests/models/mobilenet_v2's architecture and weights
(torchvision, weights=None, torch.manual_seed(0)), but with every
BatchNorm's running mean and variance recalibrated on natural-image views
(bench/int8_inputs.py's "images", seed 3: other crops than the calibration
(seed 1) and evaluation (seed 2) views): torch train-mode forward passes over
the views in batches, BatchNorm only, a cumulative average, then eval. The
tests/models fixture had its statistics from standard-normal batches, so on
photos its activations drift from BatchNorm's normalisation layer after
layer and its logits end nearly flat; recalibrated on photos they behave like
a trained network's (each layer normalised on the data it sees).

    /usr/bin/python3 bench/int8_fixture.py OUT.onnx [N_VIEWS]
"""
import os
import sys

import numpy as np
import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from int8_inputs import image_views  # noqa: E402


def main():
    out = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 64
    import torchvision
    torch.manual_seed(0)  # the weights of tools/make_fixtures.py's mobilenet_v2
    model = torchvision.models.mobilenet_v2(weights=None)
    views = np.concatenate(list(image_views(n, 3, (1, 3, 224, 224))))
    bns = [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    for m in bns:
        m.reset_running_stats()
        m.momentum = None
    model.eval()
    for m in bns:
        m.train()
    with torch.no_grad():
        for i in range(0, n, 16):
            model(torch.from_numpy(views[i:i + 16]))
    model.eval()
    x = torch.from_numpy(views[:1])
    torch.onnx.export(model, x, out, opset_version=13, input_names=["input"], output_names=["output"],
                      training=torch.onnx.TrainingMode.EVAL)


if __name__ == "__main__":
    main()
