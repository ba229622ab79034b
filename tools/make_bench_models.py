"""Models for bench/speed.sh that are too large to commit: torchvision's
efficientnet_b0 and shufflenet_v2_x0_5 (randomly initialized: the timing
does not depend on the weights' values, and nothing is downloaded),
exported to ONNX with a 1x3x224x224 input into bench/models/ (git-ignored).

    /usr/bin/python3 tools/make_bench_models.py [OUTDIR]
"""
import os
import sys

import torch
import torchvision


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "bench", "models")
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    for name in ("efficientnet_b0", "shufflenet_v2_x0_5"):
        path = os.path.join(out, name + ".onnx")
        if os.path.exists(path):
            continue
        model = getattr(torchvision.models, name)(weights=None).eval()
        x = torch.randn(1, 3, 224, 224)
        torch.onnx.export(model, x, path, input_names=["input"], output_names=["output"], opset_version=17)
        print(path)


if __name__ == "__main__":
    main()
