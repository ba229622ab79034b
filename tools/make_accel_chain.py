#!/usr/bin/python3
"""Writes tests/models/accel_chain: three inverted residual blocks of
mobilenet_v2: one without expansion (depthwise 3x3 -> Clip -> 1x1 project,
mobilenet_v2's first), then two of 1x1 expand -> Clip -> depthwise 3x3 ->
Clip -> 1x1 project, the first with its residual Add, the second with a
strided depthwise Conv and no project bias. On the target written beside it (target.txt: 64
PEs of 64 KiB under root links of 2 bytes per cycle, so that the expanded
tensors' round trips dominate and the cost model takes the chain)
pfvm_accel.h runs each block in the tiles of its projection's output (pfvm_accel_ctx.chain): the expanded tensors never go
to the root memory. The expected output is pfvm's interpreter's
(build/interp run). Run with /usr/bin/python3 (onnx, numpy) after
`make build/interp`."""
import os
import numpy as np
from onnx import helper, numpy_helper, TensorProto

from interp_fixture import save_with_interp_output

rng = np.random.default_rng(23)
out = os.path.join(os.path.dirname(__file__), "..", "tests", "models", "accel_chain")


def w(name, *shape):
    return numpy_helper.from_array((rng.standard_normal(shape) * 0.4).astype(np.float32), name)


def scalar(name, v):
    return numpy_helper.from_array(np.array(v, np.float32), name)


inits = [w("we1", 32, 8, 1, 1), w("be1", 32), w("wd1", 32, 1, 3, 3), w("bd1", 32), w("wp1", 8, 32, 1, 1),
         w("bp1", 8), w("we2", 32, 8, 1, 1), w("be2", 32), w("wd2", 32, 1, 3, 3), w("bd2", 32),
         w("wp2", 12, 32, 1, 1), w("wd0", 8, 1, 3, 3), w("bd0", 8), w("wp0", 8, 8, 1, 1), w("bp0", 8),
         scalar("lo", 0.0), scalar("hi", 1.5)]
nodes = [
    helper.make_node("Conv", ["x", "wd0", "bd0"], ["d0"], name="dw0", group=8, pads=[1, 1, 1, 1]),
    helper.make_node("Clip", ["d0", "lo", "hi"], ["d0c"], name="clip_d0"),
    helper.make_node("Conv", ["d0c", "wp0", "bp0"], ["y0"], name="project0"),
    helper.make_node("Conv", ["y0", "we1", "be1"], ["e1"], name="expand1"),
    helper.make_node("Clip", ["e1", "lo", "hi"], ["e1c"], name="clip_e1"),
    helper.make_node("Conv", ["e1c", "wd1", "bd1"], ["d1"], name="dw1", group=32, pads=[1, 1, 1, 1]),
    helper.make_node("Clip", ["d1", "lo", "hi"], ["d1c"], name="clip_d1"),
    helper.make_node("Conv", ["d1c", "wp1", "bp1"], ["p1"], name="project1"),
    helper.make_node("Add", ["y0", "p1"], ["y1"], name="add1"),
    helper.make_node("Conv", ["y1", "we2", "be2"], ["e2"], name="expand2"),
    helper.make_node("Clip", ["e2", "lo", "hi"], ["e2c"], name="clip_e2"),
    helper.make_node("Conv", ["e2c", "wd2", "bd2"], ["d2"], name="dw2", group=32, strides=[2, 2],
                     pads=[1, 1, 1, 1]),
    helper.make_node("Clip", ["d2", "lo", "hi"], ["d2c"], name="clip_d2"),
    helper.make_node("Conv", ["d2c", "wp2"], ["y"], name="project2"),
]
graph = helper.make_graph(nodes, "accel_chain",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 16, 16])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 12, 8, 8])], inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="make_accel_chain.py")
model.ir_version = 8
x = rng.standard_normal((1, 8, 16, 16)).astype(np.float32)
save_with_interp_output(model, out, x)
with open(os.path.join(out, "target.txt"), "w") as f:
    f.write("# written by tools/make_accel_chain.py: slow root links, so that the chain pays\n"
            "target chain_test\n"
            "level host    fanout 1  mem 16M\n"
            "level cluster fanout 4  mem 0   down 2  up 2  broadcast reduce\n"
            "level pe      fanout 16 mem 64K down 64 up 64 broadcast\n"
            "pe simd 4 mac float 8\n")
with open(os.path.join(out, "target_parts.txt"), "w") as f:
    f.write("# written by tools/make_accel_chain.py: 256 PEs, root links of 8 bytes per cycle: the blocks'\n"
            "# tiles are fewer than the PEs, so the chains split their expanded channels over the 4 PEs of a group\n"
            "target chain_parts_test\n"
            "level host    fanout 1  mem 16M\n"
            "level cluster fanout 4  mem 0   down 8  up 8  broadcast reduce\n"
            "level group   fanout 16 mem 0   down 64 up 64 broadcast reduce\n"
            "level pe      fanout 4  mem 64K down 16 up 16 broadcast\n"
            "pe simd 4 mac float 8\n")
