#!/usr/bin/python3
"""Writes tests/models/accel_stem: two chains whose first Conv has a
window of its own (mobilenet_v2's 3x3/2 stem before its first block):
a 3x3 stride-2 padded Conv 3 -> 32 -> Clip -> depthwise 3x3 -> Clip ->
1x1 project 32 -> 8 (with bias), then a 3x3 unpadded stride-1 Conv 8 ->
12 -> Clip -> strided depthwise 3x3 -> Clip -> 1x1 project 12 -> 6 (no
bias), at batch 2 on odd spatial sizes (47 x 43). On the target written
beside it (as accel_chain's: 64 PEs under root links of 2 bytes per cycle,
so that the first Conv's output round trip dominates) pfvm_accel.h runs
each in the tiles of its projection's output (pfvm_accel_ctx.chain): the
PE loads the raw box of x, im2cols it and expands it chunk by chunk. The
expected output is pfvm's interpreter's (build/interp run). Run with
/usr/bin/python3 (onnx, numpy) after `make build/interp`."""
import os
import numpy as np
from onnx import helper, numpy_helper, TensorProto

from interp_fixture import save_with_interp_output

rng = np.random.default_rng(29)
out = os.path.join(os.path.dirname(__file__), "..", "tests", "models", "accel_stem")


def w(name, *shape):
    return numpy_helper.from_array((rng.standard_normal(shape) * 0.4).astype(np.float32), name)


def scalar(name, v):
    return numpy_helper.from_array(np.array(v, np.float32), name)


inits = [w("ws1", 32, 3, 3, 3), w("bs1", 32), w("wd1", 32, 1, 3, 3), w("bd1", 32), w("wp1", 8, 32, 1, 1),
         w("bp1", 8), w("ws2", 12, 8, 3, 3), w("bs2", 12), w("wd2", 12, 1, 3, 3), w("bd2", 12),
         w("wp2", 6, 12, 1, 1), scalar("lo", 0.0), scalar("hi", 1.5)]
nodes = [
    helper.make_node("Conv", ["x", "ws1", "bs1"], ["s1"], name="stem1", strides=[2, 2], pads=[1, 1, 1, 1]),
    helper.make_node("Clip", ["s1", "lo", "hi"], ["s1c"], name="clip_s1"),
    helper.make_node("Conv", ["s1c", "wd1", "bd1"], ["d1"], name="dw1", group=32, pads=[1, 1, 1, 1]),
    helper.make_node("Clip", ["d1", "lo", "hi"], ["d1c"], name="clip_d1"),
    helper.make_node("Conv", ["d1c", "wp1", "bp1"], ["y1"], name="project1"),
    helper.make_node("Conv", ["y1", "ws2", "bs2"], ["s2"], name="stem2"),
    helper.make_node("Clip", ["s2", "lo", "hi"], ["s2c"], name="clip_s2"),
    helper.make_node("Conv", ["s2c", "wd2", "bd2"], ["d2"], name="dw2", group=12, strides=[2, 2],
                     pads=[1, 1, 1, 1]),
    helper.make_node("Clip", ["d2", "lo", "hi"], ["d2c"], name="clip_d2"),
    helper.make_node("Conv", ["d2c", "wp2"], ["y"], name="project2"),
]
# x 47 x 43 -> stem1 24 x 22 (32 channels: more than a PE holds, so the plan is streamed)
# -> dw1 24 x 22 -> stem2 22 x 20 -> dw2 11 x 10
graph = helper.make_graph(nodes, "accel_stem",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 47, 43])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 6, 11, 10])], inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="make_accel_stem.py")
model.ir_version = 8
x = rng.standard_normal((2, 3, 47, 43)).astype(np.float32)
save_with_interp_output(model, out, x)
with open(os.path.join(out, "target.txt"), "w") as f:
    f.write("# written by tools/make_accel_stem.py: slow root links, so that the chain pays\n"
            "target stem_test\n"
            "level host    fanout 1  mem 16M\n"
            "level cluster fanout 4  mem 0   down 2  up 2  broadcast reduce\n"
            "level pe      fanout 16 mem 64K down 64 up 64 broadcast\n"
            "pe simd 4 mac float 8\n")
