#!/usr/bin/python3
"""Writes tests/models/accel_tiled: a small CNN whose tensors do not fit the
1 KiB PEs of targets/tiny.txt, so that pfvm_accel.h's streamed plan tiles
every node (Conv with input-channel steps, a depthwise Conv, MaxPool with
padding, Concat, Add, Clip, GlobalAveragePool, Flatten, Gemm) and keeps the
tensors in the host memory. The expected output is pfvm's interpreter's
(build/interp run; the test compares the simulator with the interpreter).
Run with /usr/bin/python3 (onnx, numpy) after `make build/interp`."""
import os
import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto

from interp_fixture import save_with_interp_output

rng = np.random.default_rng(21)
out = os.path.join(os.path.dirname(__file__), "..", "tests", "models", "accel_tiled")


def w(name, *shape):
    return numpy_helper.from_array((rng.standard_normal(shape) * 0.3).astype(np.float32), name)


inits = [w("wa", 8, 3, 3, 3), w("ba", 8), w("wb", 4, 8, 1, 1), w("wc", 4, 8, 3, 3), w("bc", 4),
         w("wd", 8, 1, 3, 3), w("bd", 8), w("wg", 10, 8), w("bg", 10),
         numpy_helper.from_array(np.array(0, np.float32), "lo"), numpy_helper.from_array(np.array(6, np.float32), "hi")]
nodes = [
    helper.make_node("Conv", ["x", "wa", "ba"], ["a"], name="conv_a", pads=[1, 1, 1, 1]),
    helper.make_node("Relu", ["a"], ["ar"], name="relu_a"),
    helper.make_node("MaxPool", ["ar"], ["p"], name="pool", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
    helper.make_node("Conv", ["p", "wb"], ["b"], name="conv_b"),
    helper.make_node("Relu", ["b"], ["br"], name="relu_b"),
    helper.make_node("Conv", ["p", "wc", "bc"], ["c"], name="conv_c", pads=[1, 1, 1, 1]),
    helper.make_node("Clip", ["c", "lo", "hi"], ["cc"], name="clip_c"),
    helper.make_node("Concat", ["br", "cc"], ["cat"], name="cat", axis=1),
    helper.make_node("Add", ["cat", "p"], ["s"], name="add"),
    helper.make_node("Conv", ["s", "wd", "bd"], ["d"], name="conv_dw", group=8, strides=[2, 2], pads=[1, 1, 1, 1]),
    helper.make_node("GlobalAveragePool", ["d"], ["g"], name="gap"),
    helper.make_node("Flatten", ["g"], ["f"], name="flat"),
    helper.make_node("Gemm", ["f", "wg", "bg"], ["y"], name="fc", transB=1),
]
graph = helper.make_graph(nodes, "accel_tiled", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 12, 12])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])], inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="make_accel_tiled.py")
model.ir_version = 8
x = rng.standard_normal((1, 3, 12, 12)).astype(np.float32)
save_with_interp_output(model, out, x)
