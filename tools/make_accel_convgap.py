#!/usr/bin/python3
"""Writes tests/models/accel_convgap: two Convs each followed by a
GlobalAveragePool that reads only it, at batch 3 on odd planes (9 x 13):
a padded 3x3 Conv 12 -> 20 with bias and Clip(0, 6) (mobilenet_v2's last
Conv), and a 1x1 Conv 12 -> 20 without bias or activation (negative
values averaged); the two pooled outputs are added. On the target beside
it (target.txt: 64 PEs of 16 KiB under root links of 2 bytes per cycle,
so that the Conv outputs' round trips dominate and the cost model takes
the fusion; the 3x3 Conv's input channels come in steps) pfvm_accel.h
runs each pool in the tiles of its Conv (pfvm_accel_ctx.chain): the
Conv outputs never go to the root memory. The expected output is pfvm's
interpreter's (build/interp run). Run with /usr/bin/python3 (onnx, numpy)
after `make build/interp`."""
import os
import numpy as np
from onnx import helper, numpy_helper, TensorProto

from interp_fixture import save_with_interp_output

rng = np.random.default_rng(31)
out = os.path.join(os.path.dirname(__file__), "..", "tests", "models", "accel_convgap")


def w(name, *shape):
    return numpy_helper.from_array((rng.standard_normal(shape) * 0.3).astype(np.float32), name)


inits = [w("w1", 20, 12, 3, 3), w("b1", 20), w("w2", 20, 12, 1, 1),
         numpy_helper.from_array(np.array(0, np.float32), "lo"), numpy_helper.from_array(np.array(6, np.float32), "hi")]
nodes = [
    helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
    helper.make_node("Clip", ["c1", "lo", "hi"], ["r1"], name="clip1"),
    helper.make_node("GlobalAveragePool", ["r1"], ["g1"], name="gap1"),
    helper.make_node("Conv", ["x", "w2"], ["c2"], name="conv2"),
    helper.make_node("GlobalAveragePool", ["c2"], ["g2"], name="gap2"),
    helper.make_node("Add", ["g1", "g2"], ["y"], name="add"),
]
graph = helper.make_graph(nodes, "accel_convgap",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 12, 9, 13])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 20, 1, 1])], inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="make_accel_convgap.py")
model.ir_version = 8
x = rng.standard_normal((3, 12, 9, 13)).astype(np.float32)
save_with_interp_output(model, out, x)
with open(os.path.join(out, "target.txt"), "w") as f:
    f.write("# written by tools/make_accel_convgap.py: slow root links, so that the fusion pays\n"
            "target convgap_test\n"
            "level host    fanout 1  mem 16M\n"
            "level cluster fanout 4  mem 0   down 2  up 2  broadcast reduce\n"
            "level pe      fanout 16 mem 16K down 64 up 64 broadcast\n"
            "pe simd 4 mac float 8\n")
