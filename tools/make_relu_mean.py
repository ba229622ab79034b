#!/usr/bin/python3
"""Writes tests/models/relu_mean: Relu, then ReduceMean over H and W
(keepdims 0) and ReduceSum over W (keepdims 1) of the Relu, as in
shufflenet_v2's head (x.mean([2, 3]) after the last Relu). pfvm fuses the
Relu and its reductions into one walk that threads cut in whole groups of
positions (tests/test_threads.c compares 1, 2 and 3 threads bit for bit).
The expected outputs are numpy's, in double. Run with /usr/bin/python3."""
import os
import numpy as np
from onnx import helper, numpy_helper, TensorProto, save

rng = np.random.default_rng(41)
out = os.path.join(os.path.dirname(__file__), "..", "tests", "models", "relu_mean")
shape = [2, 64, 17, 19]
nodes = [
    helper.make_node("Relu", ["x"], ["r"], name="relu"),
    helper.make_node("ReduceMean", ["r"], ["m"], name="mean", axes=[2, 3], keepdims=0),
    helper.make_node("ReduceSum", ["r", "axes_w"], ["s"], name="sum_w", keepdims=1),
]
inits = [numpy_helper.from_array(np.array([3], np.int64), "axes_w")]
graph = helper.make_graph(nodes, "relu_mean", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                          [helper.make_tensor_value_info("m", TensorProto.FLOAT, [2, 64]),
                           helper.make_tensor_value_info("s", TensorProto.FLOAT, [2, 64, 17, 1])], inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="make_relu_mean.py")
model.ir_version = 8
x = rng.standard_normal(shape).astype(np.float32)
r = np.maximum(x, 0).astype(np.float64)
m = r.mean(axis=(2, 3)).astype(np.float32)
s = r.sum(axis=3, keepdims=True).astype(np.float32)
os.makedirs(os.path.join(out, "test_data_set_0"), exist_ok=True)
save(model, os.path.join(out, "model.onnx"))
for name, t in (("input_0", x), ("output_0", m), ("output_1", s)):
    with open(os.path.join(out, "test_data_set_0", name + ".pb"), "wb") as f:
        f.write(numpy_helper.from_array(t, name.replace("put_", "")).SerializeToString())
