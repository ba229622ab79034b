#!/usr/bin/python3
"""Writes tests/models/accel_concatpool: two fire-like modules, each a
Concat (axis 1) of two Conv branches read only by a MaxPool, as
squeezenet's features.4 -> features.5: a 1x1 squeeze Conv + Relu, then a
1x1 Conv + Relu and a padded 3x3 Conv + Relu concatenated and pooled 3x3/2
with ceil_mode; after a 1x1 Conv + Relu, the second module concatenates
a 1x1 Conv + Relu and a depthwise 3x3 Conv + Relu (group 12, which the
Conv + MaxPool lowering does not run) of its output, pooled 2x2/2. On the target beside it (slow root links,
so that the fusion pays) pfvm_accel.h pools each Concat input where it is
computed (pfvm_acl_part_through): a group-1 Conv runs the pool in its
tiles and stores the pooled part into the pool's output; the depthwise
Conv writes its part to a buffer of its own and the pool's lowering
pools that part alone; the Concats and MaxPools are views. The expected
output is pfvm's interpreter's (build/interp run). Run with
/usr/bin/python3 (onnx, numpy) after `make build/interp`."""
import os
import numpy as np
from onnx import helper, numpy_helper, TensorProto

from interp_fixture import save_with_interp_output

rng = np.random.default_rng(31)
out = os.path.join(os.path.dirname(__file__), "..", "tests", "models", "accel_concatpool")


def w(name, *shape):
    return numpy_helper.from_array((rng.standard_normal(shape) * 0.3).astype(np.float32), name)


inits = [w("ws", 8, 6, 1, 1), w("bs", 8), w("we1", 12, 8, 1, 1), w("be1", 12), w("we3", 12, 8, 3, 3), w("be3", 12),
         w("wf1", 12, 24, 1, 1), w("bf1", 12), w("wa", 12, 12, 1, 1), w("ba", 12), w("wd", 12, 1, 3, 3),
         w("bd", 12)]
nodes = [
    helper.make_node("Conv", ["x", "ws", "bs"], ["s"], name="squeeze"),
    helper.make_node("Relu", ["s"], ["sr"], name="squeeze_relu"),
    helper.make_node("Conv", ["sr", "we1", "be1"], ["e1"], name="expand1"),
    helper.make_node("Relu", ["e1"], ["e1r"], name="expand1_relu"),
    helper.make_node("Conv", ["sr", "we3", "be3"], ["e3"], name="expand3", pads=[1, 1, 1, 1]),
    helper.make_node("Relu", ["e3"], ["e3r"], name="expand3_relu"),
    helper.make_node("Concat", ["e1r", "e3r"], ["cat1"], name="cat1", axis=1),
    helper.make_node("MaxPool", ["cat1"], ["p1"], name="pool1", kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1),
    helper.make_node("Conv", ["p1", "wf1", "bf1"], ["f1"], name="fire1"),
    helper.make_node("Relu", ["f1"], ["f1r"], name="fire1_relu"),
    helper.make_node("Conv", ["f1r", "wa", "ba"], ["a"], name="branch1"),
    helper.make_node("Relu", ["a"], ["ar"], name="branch1_relu"),
    helper.make_node("Conv", ["f1r", "wd", "bd"], ["d"], name="dw", group=12, pads=[1, 1, 1, 1]),
    helper.make_node("Relu", ["d"], ["dr"], name="dw_relu"),
    helper.make_node("Concat", ["ar", "dr"], ["cat2"], name="cat2", axis=1),
    helper.make_node("MaxPool", ["cat2"], ["y"], name="pool2", kernel_shape=[2, 2], strides=[2, 2]),
]
graph = helper.make_graph(nodes, "accel_concatpool",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 6, 30, 30])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 24, 7, 7])], inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="make_accel_concatpool.py")
model.ir_version = 8
x = rng.standard_normal((1, 6, 30, 30)).astype(np.float32)
save_with_interp_output(model, out, x)
with open(os.path.join(out, "target.txt"), "w") as f:
    f.write("# written by tools/make_accel_concatpool.py: slow root links, so that the fusion pays\n"
            "target concatpool_test\n"
            "level host    fanout 1  mem 16M\n"
            "level cluster fanout 4  mem 0   down 2  up 2  broadcast reduce\n"
            "level pe      fanout 16 mem 16K down 64 up 64 broadcast\n"
            "pe simd 4 mac float 8\n")
