#!/usr/bin/python3
"""Makes the firmware benchmark's models that tools/make_fixtures.py does not:
tests/models/dscnn, tests/models/mlp_mnist and tests/models/q8_odd.

dscnn: a keyword-spotting-class DS-CNN (the shape of
ARM's ML-zoo "DS-CNN small" for Google Speech Commands: 49 frames x 10 MFCC
features in, 12 classes out), for the firmware tests (tests/mcu/run.sh) and
bench/mcu.sh.

    /usr/bin/python3 tools/make_dscnn.py [NAME...]

Conv 10x4 stride 2 (64 channels), BatchNorm, ReLU; four depthwise-separable
blocks (depthwise 3x3 + BatchNorm + ReLU, pointwise 1x1 + BatchNorm +
ReLU); average pool over the whole map; Linear to 12. Random weights and
BatchNorm statistics from torch.manual_seed(0) (no training, no download);
eval mode, so the export folds BatchNorm into the convolutions. Opset 13.
mlp_mnist: the classic 784-128-10 MLP (Linear, ReLU, Linear; 101,770
parameters, about 400 KB of float weights), input [1,784]: the "400 KB
MLP" of the firmware RAM figures. Same seed, opset 13.
q8_odd: a small CNN of odd shapes (Conv 3x3 3->5 on 7x11, ReLU, MaxPool 2,
Linear 75->9, ReLU, Linear 9->7) whose int8 form (tests/mcu/q8.sh) takes
the Cortex-M kernels' remainder paths. Same seed, opset 13.

Each folder gets model.onnx and test_data_set_0/{input_0,output_0}.pb (the output is
torch's), the ONNX backend-test layout that `interp test tests/models`
reads. Reruns reproduce the files byte for byte."""
import os

import numpy as np
import onnx
import torch
import torch.nn as nn
from onnx import numpy_helper

MODELS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "models")


def bn(c):
    b = nn.BatchNorm2d(c)
    with torch.no_grad():  # non-trivial statistics, so the folding is exercised
        b.running_mean.uniform_(-0.2, 0.2)
        b.running_var.uniform_(0.5, 1.5)
        b.weight.uniform_(0.5, 1.5)
        b.bias.uniform_(-0.2, 0.2)
    return b


class DSCNN(nn.Module):
    def __init__(self, ch=64, blocks=4, classes=12):
        super().__init__()
        layers = [nn.Conv2d(1, ch, (10, 4), stride=(2, 2), padding=(5, 1), bias=False), bn(ch), nn.ReLU()]
        for _ in range(blocks):
            layers += [nn.Conv2d(ch, ch, 3, padding=1, groups=ch, bias=False), bn(ch), nn.ReLU(),
                       nn.Conv2d(ch, ch, 1, bias=False), bn(ch), nn.ReLU()]
        self.features = nn.Sequential(*layers)
        self.pool = nn.AvgPool2d((25, 5))
        self.fc = nn.Linear(ch, classes)

    def forward(self, x):
        x = self.pool(self.features(x))
        return self.fc(torch.flatten(x, 1))


def save_pb(array, path, name):
    with open(path, "wb") as f:
        f.write(numpy_helper.from_array(np.ascontiguousarray(array), name).SerializeToString())


def mlp_mnist():
    return nn.Sequential(nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 10))


def q8_odd():
    # odd shapes for the int8 firmware kernels (quantized by tests/mcu/q8.sh):
    # a 3x3 convolution of 27 reduction values over rows 11 wide (panel
    # shares of 11, 5, 6...), a 2x2 max pool leaving a row and a column
    # over, a one-column product of 75 values (38 reduction pairs: 2 before
    # the loop of 4, the last pair half padding)
    return nn.Sequential(nn.Conv2d(3, 5, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(75, 9),
                         nn.ReLU(), nn.Linear(9, 7))


def make(name, ctor, shape):
    OUT = os.path.join(MODELS, name)
    torch.manual_seed(0)
    model = ctor().eval()
    x = torch.randn(*shape)
    os.makedirs(os.path.join(OUT, "test_data_set_0"), exist_ok=True)
    path = os.path.join(OUT, "model.onnx")
    torch.onnx.export(model, x, path, opset_version=13, input_names=["input"], output_names=["output"],
                      training=torch.onnx.TrainingMode.EVAL)
    with torch.no_grad():
        y = model(x)
    m = onnx.load(path)
    onnx.checker.check_model(m, full_check=True)
    save_pb(x.numpy(), os.path.join(OUT, "test_data_set_0", "input_0.pb"), "input")
    save_pb(y.numpy(), os.path.join(OUT, "test_data_set_0", "output_0.pb"), "output")
    params = sum(int(np.prod(t.dims)) for t in m.graph.initializer)
    print("%s: %d nodes, %d parameters, %.1f KB: %s" % (name, len(m.graph.node), params, os.path.getsize(path) / 1e3,
                                                          " ".join(sorted(set(n.op_type for n in m.graph.node)))))


if __name__ == "__main__":
    import sys
    want = sys.argv[1:]
    for name, ctor, shape in (("dscnn", DSCNN, (1, 1, 49, 10)), ("mlp_mnist", mlp_mnist, (1, 784)),
                              ("q8_odd", q8_odd, (1, 3, 7, 11))):
        if not want or name in want:
            make(name, ctor, shape)
