#!/usr/bin/python3
"""Trains the demo's digit classifier and exports it (dev-time tool).

A small CNN learns the 8x8 handwritten digits that Debian's python3-sklearn
ships (sklearn.datasets.load_digits), then is exported with
torch.onnx.export to models/digits.onnx. Six test images are written as
ONNX TensorProto files with their labels and torch's predictions, for
examples/digits.c.

    /usr/bin/python3 tools/make_digits.py
"""
import os

import numpy as np
import onnx
import torch
import torch.nn as nn
from onnx import numpy_helper
from sklearn.datasets import load_digits

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "models")


class DigitNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
            nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        )
        self.head = nn.Sequential(nn.Flatten(), nn.Linear(32 * 4 * 4, 64), nn.ReLU(), nn.Linear(64, 10))

    def forward(self, x):
        return self.head(self.features(x))


def main():
    torch.manual_seed(0)
    rng = np.random.RandomState(0)
    digits = load_digits()
    x = (digits.images / 16.0).astype(np.float32)[:, None]
    y = digits.target.astype(np.int64)
    order = rng.permutation(len(x))
    split = int(0.8 * len(x))
    tr, te = order[:split], order[split:]
    net = DigitNet()
    opt = torch.optim.Adam(net.parameters(), lr=3e-3)
    xt, yt = torch.from_numpy(x[tr]), torch.from_numpy(y[tr])
    for epoch in range(30):
        net.train()
        perm = torch.randperm(len(xt))
        for i in range(0, len(xt), 64):
            idx = perm[i:i + 64]
            opt.zero_grad()
            loss = nn.functional.cross_entropy(net(xt[idx]), yt[idx])
            loss.backward()
            opt.step()
    net.eval()
    with torch.no_grad():
        pred = net(torch.from_numpy(x[te])).argmax(1).numpy()
    acc = float((pred == y[te]).mean())
    print("test accuracy %.4f" % acc)
    os.makedirs(os.path.join(OUT, "digits_samples"), exist_ok=True)
    path = os.path.join(OUT, "digits.onnx")
    torch.onnx.export(net, torch.zeros(1, 1, 8, 8), path, opset_version=13,
                      input_names=["image"], output_names=["logits"])
    onnx.checker.check_model(onnx.load(path))
    lines = []
    for k, i in enumerate(te[:6]):
        img = x[i:i + 1]
        with torch.no_grad():
            p = int(net(torch.from_numpy(img)).argmax(1).item())
        name = "digit_%d.pb" % k
        with open(os.path.join(OUT, "digits_samples", name), "wb") as f:
            f.write(numpy_helper.from_array(img, "image").SerializeToString())
        lines.append("%s %d %d\n" % (name, int(y[i]), p))
    with open(os.path.join(OUT, "digits_samples", "labels.txt"), "w") as f:
        f.writelines(lines)
    with open(os.path.join(OUT, "digits.txt"), "w") as f:
        f.write("DigitNet trained by tools/make_digits.py on sklearn's 8x8 digits "
                "(%d train, %d test images): test accuracy %.4f\n" % (len(tr), len(te), acc))


if __name__ == "__main__":
    main()
