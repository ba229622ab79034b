#!/usr/bin/python3
"""Writes tests/models/accel_convpool: three Convs each followed by a
MaxPool that reads only it, the shapes of resnet18's stem (Conv 3x3/2
padded + Relu, MaxPool 3x3/2 with padding 1: tiles whose pool boxes reach
into the pool's padding on every side), squeezenet's stem (Conv 3x3/1 +
Relu, MaxPool 3x3/2 with ceil_mode: boxes past the Conv's last row) and a
1x1 Conv without activation or bias (negative values pooled, 2x2/2),
whose 24 input channels come in steps on the target beside it. On that
target (target.txt: 64 PEs of 16 KiB under root links of 2 bytes per
cycle, so that the Conv outputs' round trips dominate and the cost model
takes the fusion) pfvm_accel.h runs each MaxPool in the tiles of its
Conv (pfvm_accel_ctx.chain): the Conv outputs never go to the root
memory. The expected output is pfvm's interpreter's (build/interp run).
Run with /usr/bin/python3 (onnx, numpy) after `make build/interp`."""
import os
import numpy as np
from onnx import helper, numpy_helper, TensorProto

from interp_fixture import save_with_interp_output

rng = np.random.default_rng(29)
out = os.path.join(os.path.dirname(__file__), "..", "tests", "models", "accel_convpool")


def w(name, *shape):
    return numpy_helper.from_array((rng.standard_normal(shape) * 0.3).astype(np.float32), name)


inits = [w("w1", 16, 3, 3, 3), w("b1", 16), w("w2", 24, 16, 3, 3), w("b2", 24), w("w3", 8, 24, 1, 1)]
nodes = [
    helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="conv1", strides=[2, 2], pads=[1, 1, 1, 1]),
    helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
    helper.make_node("MaxPool", ["r1"], ["p1"], name="pool1", kernel_shape=[3, 3], strides=[2, 2],
                     pads=[1, 1, 1, 1]),
    helper.make_node("Conv", ["p1", "w2", "b2"], ["c2"], name="conv2"),
    helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
    helper.make_node("MaxPool", ["r2"], ["p2"], name="pool2", kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1),
    helper.make_node("Conv", ["p2", "w3"], ["c3"], name="conv3"),
    helper.make_node("MaxPool", ["c3"], ["y"], name="pool3", kernel_shape=[2, 2], strides=[2, 2]),
]
graph = helper.make_graph(nodes, "accel_convpool",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 62, 62])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 3, 3])], inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="make_accel_convpool.py")
model.ir_version = 8
x = rng.standard_normal((1, 3, 62, 62)).astype(np.float32)
save_with_interp_output(model, out, x)
with open(os.path.join(out, "target.txt"), "w") as f:
    f.write("# written by tools/make_accel_convpool.py: slow root links, so that the fusion pays\n"
            "target convpool_test\n"
            "level host    fanout 1  mem 16M\n"
            "level cluster fanout 4  mem 0   down 2  up 2  broadcast reduce\n"
            "level pe      fanout 16 mem 16K down 64 up 64 broadcast\n"
            "pe simd 4 mac float 8\n")
