#!/usr/bin/python3
"""Makes the gradient fixtures under tests/grad (dev-time tool, needs torch).

Each fixture is a folder: model.onnx (torch's export of a small network),
wrt.txt (the parameters to differentiate, comma-separated, as ONNX
initializer names), and test_data_set_0 in the backend-test layout of the
*training graph* that `interp grad model.onnx --wrt $(cat wrt.txt)` makes:
input_0.pb is the network's input, input_1.pb the seed `output_grad` (fixed
random weights w), output_0.pb torch's output y and output_K.pb (K >= 1)
torch autograd's gradient of the scalar loss sum(y * w) with respect to the
K-th parameter of wrt.txt. tests/test_autodiff.c checks pfvm's gradients
against them (rtol 1e-3). Weights and inputs are random (seeded); reruns
reproduce the files.

    /usr/bin/python3 tools/make_grad_fixtures.py [NAME...]
"""
import os
import sys

import numpy as np
import onnx
import torch
import torch.nn as nn
from onnx import numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "grad")


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(12, 16), nn.GELU(), nn.LayerNorm(16), nn.Linear(16, 4))

    def forward(self, x):
        return self.net(x)


class CNN(nn.Module):
    """Conv, BatchNorm in training mode (batch statistics), ReLU, MaxPool,
    strided Conv, global average pool, Linear."""

    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(4, 6, 3, stride=2, padding=1), nn.BatchNorm2d(6), nn.ReLU(),
            nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(6, 3))

    def forward(self, x):
        return self.body(x)


def encoder():
    layer = nn.TransformerEncoderLayer(d_model=16, nhead=2, dim_feedforward=24, batch_first=True)
    return nn.TransformerEncoder(layer, num_layers=1, enable_nested_tensor=False)


# name: (constructor, input shape, opset, training mode)
FIXTURES = {
    "mlp": (MLP, (3, 12), 17, False),
    "cnn_bn_train": (CNN, (2, 3, 8, 8), 15, True),
    "transformer_encoder": (encoder, (2, 4, 16), 14, False),
}


def build(ctor, training):
    """The network with every parameter nudged by its own random noise, so
    that no two are equal (torch's exporter would store equal ones, such as
    LayerNorm's initial weights, as one shared initializer)."""
    torch.manual_seed(0)
    model = ctor()
    model.train(training)
    g = torch.Generator().manual_seed(2)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.1 * torch.randn(p.shape, generator=g))
    return model


def save_pb(array, path, name):
    with open(path, "wb") as f:
        f.write(numpy_helper.from_array(np.ascontiguousarray(array), name).SerializeToString())


def make(name):
    ctor, shape, opset, training = FIXTURES[name]
    model = build(ctor, training)
    g = torch.Generator().manual_seed(1)
    x = torch.randn(*shape, generator=g)
    folder = os.path.join(OUT, name)
    data = os.path.join(folder, "test_data_set_0")
    os.makedirs(data, exist_ok=True)
    path = os.path.join(folder, "model.onnx")
    mode = torch.onnx.TrainingMode.TRAINING if training else torch.onnx.TrainingMode.EVAL
    # no constant folding: parameters stay initializers of their own names
    # (folding would store transposed copies under new names)
    torch.onnx.export(model, x, path, opset_version=opset, input_names=["input"], output_names=["output"],
                      training=mode, do_constant_folding=False)
    m = onnx.load(path)
    onnx.checker.check_model(m, full_check=True)
    inits = [i.name for i in m.graph.initializer]
    params = dict(model.named_parameters())
    wrt = [n for n in inits if n in params]
    assert wrt, "no parameter is an initializer"
    # the same forward pass torch exported, then the loss sum(y * w)
    model = build(ctor, training)
    params = dict(model.named_parameters())
    assert len(wrt) == len(params), "some parameters are not initializers: %s" % sorted(set(params) - set(wrt))
    y = model(x)
    w = torch.randn(*y.shape, generator=g)
    (y * w).sum().backward()
    save_pb(x.numpy(), os.path.join(data, "input_0.pb"), "input")
    save_pb(w.numpy(), os.path.join(data, "input_1.pb"), "output_grad")
    save_pb(y.detach().numpy(), os.path.join(data, "output_0.pb"), "output")
    for k, n in enumerate(wrt):
        save_pb(params[n].grad.numpy(), os.path.join(data, "output_%d.pb" % (k + 1)), n + "_grad")
    with open(os.path.join(folder, "wrt.txt"), "w") as f:
        f.write(",".join(wrt) + "\n")
    ops = sorted(set(n.op_type for n in m.graph.node))
    size = sum(os.path.getsize(os.path.join(dp, f)) for dp, _, fs in os.walk(folder) for f in fs)
    print("%-20s opset %d, %3d nodes, %2d parameters, %6.1f KB: %s" % (name, opset, len(m.graph.node), len(wrt),
                                                                     size / 1e3, " ".join(ops)))


def main():
    for n in sys.argv[1:] or list(FIXTURES):
        make(n)


if __name__ == "__main__":
    main()
