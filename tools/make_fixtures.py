#!/usr/bin/python3
"""Makes the model fixtures under tests/models (dev-time tool, needs torch).

Each fixture is a folder in the ONNX backend-test layout: model.onnx and
test_data_set_0/{input,output}_K.pb with torch's outputs, so that
`interp test tests/models` checks pfvm against torch. Weights are random
(seeded); no download is needed.

    /usr/bin/python3 tools/make_fixtures.py [NAME...]
"""
import math
import os
import sys

import numpy as np
import onnx
import torch
import torch.nn as nn
from onnx import numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "models")


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
            nn.Conv2d(8, 8, 3, padding=1, groups=4), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(8, 16, 3, stride=2), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
            nn.Linear(16, 10), nn.LogSoftmax(dim=1))

    def forward(self, x):
        return self.body(x)


class StemCNN(nn.Module):
    """A resnet-like stem (strided Conv, ReLU, MaxPool) on a batch of 8: its
    backward pass is where a training step peaks, which the recompute pass
    runs in channel slices."""
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(3, 16, 5, stride=2, padding=2), nn.ReLU(), nn.MaxPool2d(3, stride=2, padding=1),
            nn.Conv2d(16, 16, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
            nn.Linear(16, 10))

    def forward(self, x):
        return self.body(x)


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(20, 32), nn.GELU(), nn.LayerNorm(32), nn.Linear(32, 5))

    def forward(self, x):
        return self.net(x)


class Block(nn.Module):
    def __init__(self, d, heads, n_ctx):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        q = q.view(b, t, self.heads, d // self.heads).transpose(1, 2)
        k = k.view(b, t, self.heads, d // self.heads).transpose(1, 2)
        v = v.view(b, t, self.heads, d // self.heads).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) / math.sqrt(d // self.heads)
        mask = torch.tril(torch.ones(t, t, dtype=torch.bool))
        att = att.masked_fill(~mask, float("-inf")).softmax(-1)
        y = (att @ v).transpose(1, 2).reshape(b, t, d)
        x = x + self.proj(y)
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    def __init__(self, vocab=50, d=32, heads=4, n_ctx=16, layers=2):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(n_ctx, d)
        self.blocks = nn.Sequential(*[Block(d, heads, n_ctx) for _ in range(layers)])
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab)

    def forward(self, idx):
        t = idx.shape[1]
        pos = torch.arange(t, dtype=torch.long).unsqueeze(0)
        return self.head(self.ln(self.blocks(self.tok(idx) + self.pos(pos))))


def encoder():
    layer = nn.TransformerEncoderLayer(d_model=32, nhead=4, dim_feedforward=64, batch_first=True)
    return nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)


def torchvision_model(name, calibrate=False):
    import torchvision
    model = getattr(torchvision.models, name)(weights=None)
    if calibrate:
        calibrate_batchnorm(model, (3, 224, 224))
    return model


def calibrate_batchnorm(model, shape, batches=2, batch=4):
    """Sets every BatchNorm's running mean and variance to the statistics of
    a few random batches (a cumulative average; the batches come from a
    generator of their own, so the fixture's input does not change). With
    torchvision's initialisation and the default running statistics (0 and
    1), mobilenet_v2's activations shrink at every depthwise layer and its
    logits end near 1e-9, which any output passes at atol 1e-5; calibrated,
    they are around 0.1 to 0.5."""
    bns = [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    for m in bns:
        m.reset_running_stats()
        m.momentum = None
    g = torch.Generator().manual_seed(1)
    model.eval()
    for m in bns:  # only BatchNorm trains: Dropout would draw on torch's global RNG
        m.train()
    with torch.no_grad():
        for _ in range(batches):
            model(torch.randn((batch,) + shape, generator=g))
    model.eval()


def cnn_small():
    """SmallCNN with random BatchNorm statistics and affine parameters (from a
    generator of their own: conv and linear weights and the input stay those
    of cnn_dynamic), exported with the BatchNormalization node kept."""
    model = SmallCNN()
    g = torch.Generator().manual_seed(2)
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            c = m.num_features
            m.running_mean.copy_(0.5 * torch.randn(c, generator=g))
            m.running_var.copy_(0.5 + torch.rand(c, generator=g))
            with torch.no_grad():
                m.weight.copy_(1 + 0.3 * torch.randn(c, generator=g))
                m.bias.copy_(0.3 * torch.randn(c, generator=g))
    return model


# name: (constructor, input maker, opset[, keep BatchNormalization]).
# torch folds an eval-mode BatchNorm that follows a Conv into the Conv's
# weights; TrainingMode.PRESERVE (the model is in eval mode, so the node is
# an inference BatchNormalization) keeps it as a node of its own.
FIXTURES = {
    "cnn_small": (cnn_small, lambda: torch.randn(2, 3, 16, 16), 13, True),
    "cnn_stem": (StemCNN, lambda: torch.randn(8, 3, 32, 32), 16),
    "mlp": (MLP, lambda: torch.randn(4, 20), 17),
    "transformer_encoder": (encoder, lambda: torch.randn(2, 5, 32), 14),
    "gpt_small": (GPT, lambda: torch.randint(0, 50, (1, 8)), 15),
    "resnet18": (lambda: torchvision_model("resnet18"), lambda: torch.randn(1, 3, 224, 224), 13),
    "mobilenet_v2": (lambda: torchvision_model("mobilenet_v2", calibrate=True), lambda: torch.randn(1, 3, 224, 224), 13),
    "squeezenet1_1": (lambda: torchvision_model("squeezenet1_1"), lambda: torch.randn(1, 3, 224, 224), 13),
}


def save_pb(array, path, name):
    with open(path, "wb") as f:
        f.write(numpy_helper.from_array(np.ascontiguousarray(array), name).SerializeToString())


def make(name):
    ctor, make_input, opset = FIXTURES[name][:3]
    keep_bn = len(FIXTURES[name]) > 3 and FIXTURES[name][3]
    torch.manual_seed(0)
    model = ctor().eval()
    x = make_input()
    folder = os.path.join(OUT, name)
    os.makedirs(os.path.join(folder, "test_data_set_0"), exist_ok=True)
    path = os.path.join(folder, "model.onnx")
    # exported with gradients enabled: torch 1.13's fused inference path for
    # TransformerEncoder (taken under no_grad) has no ONNX export
    mode = torch.onnx.TrainingMode.PRESERVE if keep_bn else torch.onnx.TrainingMode.EVAL
    torch.onnx.export(model, x, path, opset_version=opset, input_names=["input"], output_names=["output"],
                      training=mode)
    assert not model.training
    y = model(x).detach()
    m = onnx.load(path)
    onnx.checker.check_model(m, full_check=True)
    save_pb(x.numpy(), os.path.join(folder, "test_data_set_0", "input_0.pb"), "input")
    save_pb(y.numpy(), os.path.join(folder, "test_data_set_0", "output_0.pb"), "output")
    ops = sorted(set(n.op_type for n in m.graph.node))
    print("%-20s opset %d, %4d nodes, %6.1f MB: %s" % (name, opset, len(m.graph.node), os.path.getsize(path) / 1e6,
                                                      " ".join(ops)))


def make_external():
    """mlp_external: the mlp fixture with every initializer in weights.bin
    (ONNX external data), to test the reader's external-data path."""
    import shutil
    src, dst = os.path.join(OUT, "mlp"), os.path.join(OUT, "mlp_external")
    os.makedirs(os.path.join(dst, "test_data_set_0"), exist_ok=True)
    # onnx appends to an existing external-data file: start from an empty one
    # so that reruns reproduce the same bytes
    if os.path.exists(os.path.join(dst, "weights.bin")):
        os.remove(os.path.join(dst, "weights.bin"))
    onnx.save_model(onnx.load(os.path.join(src, "model.onnx")), os.path.join(dst, "model.onnx"),
                    save_as_external_data=True, all_tensors_to_one_file=True, location="weights.bin",
                    size_threshold=0)
    for f in ("input_0.pb", "output_0.pb"):
        shutil.copy(os.path.join(src, "test_data_set_0", f), os.path.join(dst, "test_data_set_0", f))
    print("mlp_external         mlp with external data (weights.bin)")


# Exports with dynamic axes, for shape inference (tests/shapes): every value
# must resolve to an expression of the named input dims.
DYNAMIC = {
    "gpt_dynamic": (GPT, lambda: torch.randint(0, 50, (2, 8)), 15, {0: "batch", 1: "seq"}),
    "encoder_dynamic": (encoder, lambda: torch.randn(2, 5, 32), 14, {0: "batch", 1: "seq"}),
    "cnn_dynamic": (SmallCNN, lambda: torch.randn(2, 3, 16, 16), 13, {0: "batch", 2: "h", 3: "w"}),
}


def make_dynamic(name):
    ctor, make_input, opset, axes = DYNAMIC[name]
    torch.manual_seed(0)
    folder = os.path.join(ROOT, "tests", "shapes")
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, name + ".onnx")
    torch.onnx.export(ctor().eval(), make_input(), path, opset_version=opset, input_names=["input"],
                      output_names=["output"], dynamic_axes={"input": axes})
    onnx.checker.check_model(onnx.load(path))
    print("%-20s dynamic axes %s" % (name, axes))


def main():
    names = sys.argv[1:] or list(FIXTURES) + list(DYNAMIC)
    for n in names:
        if n in DYNAMIC:
            make_dynamic(n)
        else:
            make(n)
    if "mlp" in names:
        make_external()


if __name__ == "__main__":
    main()
