#!/usr/bin/python3
"""Writes tests/models/accel_residual: Convs whose single consumer adds
(or subtracts) a second activation of the same shape, the residual
connections of resnet18 and mobilenet_v2, small enough for
targets/tiny.txt's 1 KiB PEs to need the streamed plan, so that
pfvm_accel.h applies the consumer (and a Relu after it) in the Conv's
output tiles (pfvm_accel_ctx.res): a 3x3 Conv (the rows plan) + Add + Relu,
a 1x1 Conv added as the second operand, a Sub (operand order), a
strided depthwise Conv read twice (nothing fused), a MatMul (B 2-D) + Add
+ Relu, and a Gemm with a bias whose Sub reads a reshape. The expected output
is pfvm's interpreter's (build/interp run). Run with /usr/bin/python3
(onnx, numpy) after `make build/interp`."""
import os
import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto

from interp_fixture import save_with_interp_output

rng = np.random.default_rng(22)
out = os.path.join(os.path.dirname(__file__), "..", "tests", "models", "accel_residual")


def w(name, *shape):
    return numpy_helper.from_array((rng.standard_normal(shape) * 0.3).astype(np.float32), name)


inits = [w("wa", 8, 8, 3, 3), w("ba", 8), w("wb", 8, 8, 1, 1), w("wc", 8, 8, 1, 1), w("bc", 8),
         w("wd", 8, 1, 3, 3), w("bd", 8), w("wm", 5, 5), w("wg", 25, 25), w("bg", 25),
         numpy_helper.from_array(np.array([8, 25], np.int64), "shape")]
nodes = [
    helper.make_node("Conv", ["x", "wa", "ba"], ["a"], name="conv_a", pads=[1, 1, 1, 1]),
    helper.make_node("Add", ["a", "x"], ["s1"], name="add_a"),
    helper.make_node("Relu", ["s1"], ["r1"], name="relu_a"),
    helper.make_node("Conv", ["r1", "wb"], ["b"], name="conv_b"),
    helper.make_node("Add", ["r1", "b"], ["s2"], name="add_b"),
    helper.make_node("Conv", ["s2", "wc", "bc"], ["c"], name="conv_c"),
    helper.make_node("Sub", ["c", "r1"], ["s3"], name="sub_c"),
    helper.make_node("Conv", ["s3", "wd", "bd"], ["d"], name="conv_dw", group=8, strides=[2, 2], pads=[1, 1, 1, 1]),
    helper.make_node("MatMul", ["d", "wm"], ["m"], name="matmul"),
    helper.make_node("Add", ["d", "m"], ["s4"], name="add_m"),
    helper.make_node("Relu", ["s4"], ["r4"], name="relu_m"),
    helper.make_node("Reshape", ["r4", "shape"], ["q"], name="reshape"),
    helper.make_node("Gemm", ["q", "wg", "bg"], ["g"], name="gemm"),
    helper.make_node("Sub", ["g", "q"], ["y"], name="sub_g"),
]
graph = helper.make_graph(nodes, "accel_residual",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 10, 10])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [8, 25])], inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="make_accel_residual.py")
model.ir_version = 8
x = rng.standard_normal((1, 8, 10, 10)).astype(np.float32)
save_with_interp_output(model, out, x)
