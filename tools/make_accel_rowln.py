#!/usr/bin/python3
"""Writes tests/models/accel_rowln: x (8, 8, 30) -> Transpose (1, 0, 2)
-> Add x (a residual) -> LayerNormalization over the last axis (scale
and bias random): the TransformerEncoder's attention output Transpose +
residual + norm1 on odd sizes, big enough for targets/tiny.txt's 1 KiB
PEs to need the streamed plan, where the copy's tiles may apply the
LayerNorm in whole rows (pfvm_accel_ctx.row). tests/models/accel_rowln/
unfused has the same computation with a Reshape to (64, 30) between the
Add and the LayerNorm, which keeps them apart (the Add's reader is no row
consumer): its cycles are the plan without the fusion. The expected
outputs are pfvm's interpreter's (build/interp run). Run with
/usr/bin/python3 (onnx, numpy) after `make build/interp`."""
import os
import numpy as np
from onnx import helper, numpy_helper, TensorProto

from interp_fixture import save_with_interp_output

rng = np.random.default_rng(31)
out = os.path.join(os.path.dirname(__file__), "..", "tests", "models", "accel_rowln")
S, B, D = 8, 8, 30
gamma = (1 + 0.3 * rng.standard_normal(D)).astype(np.float32)
beta = (0.2 * rng.standard_normal(D)).astype(np.float32)
x = rng.standard_normal((S, B, D)).astype(np.float32)


def build(unfused):
    inits = [numpy_helper.from_array(gamma, "gamma"), numpy_helper.from_array(beta, "beta"),
             numpy_helper.from_array(np.array([S * B, D], np.int64), "rows")]
    nodes = [helper.make_node("Transpose", ["x"], ["t"], name="transpose", perm=[1, 0, 2]),
             helper.make_node("Add", ["t", "x"], ["r"], name="residual")]
    shape = [S, B, D]
    if unfused:
        nodes.append(helper.make_node("Reshape", ["r", "rows"], ["r2"], name="reshape"))
        shape = [S * B, D]
    nodes.append(helper.make_node("LayerNormalization", ["r2" if unfused else "r", "gamma", "beta"], ["y"],
                                  name="norm", axis=-1, epsilon=1e-5))
    graph = helper.make_graph(nodes, "accel_rowln", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [S, B, D])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="make_accel_rowln.py")
    model.ir_version = 8
    return model


save_with_interp_output(build(False), out, x)
save_with_interp_output(build(True), os.path.join(out, "unfused"), x)
