#!/usr/bin/python3
"""Writes tests/models/accel_chain7: a depthwise -> project chain on a
small plane, as mobilenet_v2's 7 x 7 blocks (features.15-17 at batch 8):
a padded depthwise 3x3 Conv over 60 channels -> Clip -> 1x1 project 60 ->
17, at batch 3 on 7 x 7. On the target written beside it (128 PEs of 4
KiB under root links of 8 bytes per cycle) the chain's tiles are many
small ones whose depthwise weights every output block shares and whose
edge boxes are partly padding: the chain's cost model must count those
from the wave's load lines (pfvm__acl_ir_exact) to pick its tile; the
search's estimate alone picked one that ran 7417 cycles. The expected
output is pfvm's interpreter's (build/interp run). Run with
/usr/bin/python3 (onnx, numpy) after `make build/interp`."""
import os
import numpy as np
from onnx import helper, numpy_helper, TensorProto

from interp_fixture import save_with_interp_output

rng = np.random.default_rng(31)
out = os.path.join(os.path.dirname(__file__), "..", "tests", "models", "accel_chain7")
N, C, H, W, OC = 3, 60, 7, 7, 17


def w(name, *shape):
    return numpy_helper.from_array((rng.standard_normal(shape) * 0.4).astype(np.float32), name)


inits = [w("wd", C, 1, 3, 3), w("bd", C), w("wp", OC, C, 1, 1), w("bp", OC),
         numpy_helper.from_array(np.array(0.0, np.float32), "lo"),
         numpy_helper.from_array(np.array(1.5, np.float32), "hi")]
nodes = [helper.make_node("Conv", ["x", "wd", "bd"], ["d"], name="dw", group=C, pads=[1, 1, 1, 1]),
         helper.make_node("Clip", ["d", "lo", "hi"], ["dc"], name="clip_d"),
         helper.make_node("Conv", ["dc", "wp", "bp"], ["y"], name="project")]
graph = helper.make_graph(nodes, "accel_chain7",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [N, C, H, W])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [N, OC, H, W])], inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="make_accel_chain7.py")
model.ir_version = 8
x = rng.standard_normal((N, C, H, W)).astype(np.float32)
save_with_interp_output(model, out, x)
with open(os.path.join(out, "target.txt"), "w") as f:
    f.write("# written by tools/make_accel_chain7.py: 128 PEs of 4 KiB, root links of 8 bytes per cycle\n"
            "target chain7_test\n"
            "level host    fanout 1  mem 16M\n"
            "level cluster fanout 2  mem 0   down 8  up 8  broadcast reduce\n"
            "level group   fanout 16 mem 0   down 64 up 64 broadcast reduce\n"
            "level pe      fanout 4  mem 4K  down 16 up 16 broadcast\n"
            "pe simd 4 mac float 8\n")
