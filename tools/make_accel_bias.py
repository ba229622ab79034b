#!/usr/bin/python3
"""Writes tests/models/accel_bias: MatMuls whose single consumer combines
their output with a constant vector along the last axis (a bias Add, the
TransformerEncoder's linear layers), small enough for targets/tiny.txt's
1 KiB PEs to need the streamed plan, so that pfvm_accel.h applies that
consumer in the gemm tiles (pfvm_accel_ctx.vec), then the consumer's
own consumer: a batched 3-D MatMul + bias Add + Relu (the feed-forward's
first layer), a MatMul + bias Add + residual Add (its second), the bias
as the first operand of the Add, a Mul by a (1, N) scale, a Sub of a
vector, a Softmax (the rows stream) + Mul by a vector, and a Gemm with a
bias of its own followed by a bias Add (not fused: Gemm's tiles hold one
vector). The expected output is pfvm's
interpreter's (build/interp run). Run with /usr/bin/python3 (onnx, numpy)
after `make build/interp`."""
import os
import numpy as np
from onnx import helper, numpy_helper, TensorProto

from interp_fixture import save_with_interp_output

rng = np.random.default_rng(23)
out = os.path.join(os.path.dirname(__file__), "..", "tests", "models", "accel_bias")


def w(name, *shape):
    return numpy_helper.from_array((rng.standard_normal(shape) * 0.3).astype(np.float32), name)


inits = [w("w1", 12, 20), w("b1", 20), w("w2", 20, 12), w("b2", 12), w("w3", 12, 12), w("b3", 12),
         w("s4", 1, 12), w("w4", 12, 12), w("v5", 12), w("wg", 12, 12), w("bg", 12), w("bh", 12),
         w("gam", 12), w("bet", 12),
         numpy_helper.from_array(np.array([-1, 12], np.int64), "shape")]
nodes = [
    helper.make_node("MatMul", ["x", "w1"], ["m1"], name="mm1"),
    helper.make_node("Add", ["m1", "b1"], ["a1"], name="bias1"),
    helper.make_node("Relu", ["a1"], ["r1"], name="relu1"),
    helper.make_node("MatMul", ["r1", "w2"], ["m2"], name="mm2"),
    helper.make_node("Add", ["m2", "b2"], ["a2"], name="bias2"),
    helper.make_node("Add", ["a2", "x"], ["s2"], name="res2"),
    helper.make_node("MatMul", ["s2", "w3"], ["m3"], name="mm3"),
    helper.make_node("Add", ["b3", "m3"], ["a3"], name="bias3"),
    helper.make_node("MatMul", ["a3", "w4"], ["m4"], name="mm4"),
    helper.make_node("Mul", ["m4", "s4"], ["a4"], name="scale4"),
    helper.make_node("Sub", ["a4", "v5"], ["a5"], name="sub5"),
    helper.make_node("Softmax", ["a5"], ["sm"], name="softmax", axis=-1),
    helper.make_node("Mul", ["sm", "gam"], ["gm"], name="gamma"),
    helper.make_node("Add", ["gm", "bet"], ["gb"], name="beta"),
    helper.make_node("Reshape", ["gb", "shape"], ["q"], name="reshape"),
    helper.make_node("Gemm", ["q", "wg", "bg"], ["g"], name="gemm"),
    helper.make_node("Add", ["g", "bh"], ["y"], name="bias_g"),
]
graph = helper.make_graph(nodes, "accel_bias",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 10, 12])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [30, 12])], inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="make_accel_bias.py")
model.ir_version = 8
x = rng.standard_normal((3, 10, 12)).astype(np.float32)
save_with_interp_output(model, out, x)
