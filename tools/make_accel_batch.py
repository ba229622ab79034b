#!/usr/bin/python3
"""Batch-B copies of model fixtures for bench/accel.sh (issue 21 measures
the accel back end at batch 8), with a random input as
test_data_set_0/input_0.pb (the bench compares the simulator with
`interp run` on it):

- a fixture whose graph has no shape constants (resnet18, mobilenet_v2,
  squeezenet1_1: Flatten, no Reshape) is edited: the first axis of its
  input and output set to B, the inferred value_info dropped;
- any other is exported again from make_fixtures.py's constructor (same
  seed, so the same weights) for an input of first axis B (the
  TransformerEncoder's Reshapes carry the batch).

    /usr/bin/python3 tools/make_accel_batch.py OUTDIR B NAME...

Needs onnx, numpy and torch (/usr/bin/python3 has them; not torchvision);
the bench calls it, no test does.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import make_fixtures as mf  # noqa: E402
import numpy as np  # noqa: E402
import onnx  # noqa: E402

SHAPE_OPS = {"Reshape", "Expand", "ConstantOfShape", "Tile", "Shape"}


def edit(src, path, batch):
    m = onnx.load(src)
    if any(n.op_type in SHAPE_OPS for n in m.graph.node):
        return None
    inits = {t.name for t in m.graph.initializer}
    for v in list(m.graph.input) + list(m.graph.output):
        if v.name not in inits:
            v.type.tensor_type.shape.dim[0].dim_value = batch
    del m.graph.value_info[:]
    onnx.checker.check_model(m)
    onnx.save(m, path)
    return [d.dim_value for d in m.graph.input[0].type.tensor_type.shape.dim]


def export(name, path, batch):
    import torch
    ctor, make_input, opset = mf.FIXTURES[name][:3]
    torch.manual_seed(0)
    model = ctor().eval()
    x = make_input()
    x = torch.randn(batch, *x.shape[1:])
    torch.onnx.export(model, x, path, opset_version=opset, input_names=["input"], output_names=["output"],
                      training=torch.onnx.TrainingMode.EVAL)
    return list(x.shape)


def main():
    out, batch, names = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    rng = np.random.default_rng(0)
    for name in names:
        folder = os.path.join(out, name)
        os.makedirs(os.path.join(folder, "test_data_set_0"), exist_ok=True)
        path = os.path.join(folder, "model.onnx")
        shape = edit(os.path.join(mf.OUT, name, "model.onnx"), path, batch) or export(name, path, batch)
        x = rng.standard_normal(shape).astype(np.float32)
        mf.save_pb(x, os.path.join(folder, "test_data_set_0", "input_0.pb"), "input")
        print("%s at batch %d: %s" % (name, batch, path))


if __name__ == "__main__":
    main()
