#!/usr/bin/python3
"""Writes tests/models/accel_strided: Slices read through their readers'
strided maps (pfvm_acl_view_of, pfvm_acl_view_reader), big enough for
targets/tiny.txt's 1 KiB PEs to need the streamed plan. A Slice of the
columns -> Reshape -> Transpose (the TransformerEncoder's Q, K and V
heads: the Slice is a view, the Transpose's map splits the Reshape's axis
over the view's dims); the same Slice -> Reshape -> Slice from an offset
that carries across the view's rows (does not compose: the first Slice
runs); a Slice of rows and of every other column -> Transpose (composes);
Transposes read in place by MatMul as A (x transposed; and through a
Reshape that halves its rows, where a tile's rows may not compose as one
block) and as B (a Transpose of a Slice: a view of a view). Transposes
divided or multiplied by a constant before a MatMul (the queries' Div by
sqrt(head dim)): the scaled views (pfvm_acl_view_scale) read as A and,
through a Reshape, as B, the factor MatMul's alpha; and one read by
another Transpose (a copy, which applies no factor: runs). Their results
are concatenated. The expected output is pfvm's
interpreter's (build/interp run). Run with /usr/bin/python3 (onnx, numpy)
after `make build/interp`."""
import os
import numpy as np
from onnx import helper, numpy_helper, TensorProto

from interp_fixture import save_with_interp_output

rng = np.random.default_rng(23)
out = os.path.join(os.path.dirname(__file__), "..", "tests", "models", "accel_strided")


def ints(name, *v):
    return numpy_helper.from_array(np.array(v, np.int64), name)


inits = [ints("s0", 8), ints("e0", 40), ints("ax1", 1), ints("shape_a", 64, 4, 8), ints("flat", -1),
         ints("s1", 3), ints("e1", 2043), ints("ax0", 0), ints("s2", 2, 0), ints("e2", 62, 48), ints("ax01", 0, 1),
         ints("st2", 1, 2), ints("s3", 0, 0), ints("end3", 32, 32), ints("shape_f", 96, 32), ints("shape_h", 48, 64),
         numpy_helper.from_array((rng.standard_normal((64, 16)) * 0.3).astype(np.float32), "wd"),
         numpy_helper.from_array((rng.standard_normal((8, 32)) * 0.3).astype(np.float32), "ae"),
         numpy_helper.from_array((rng.standard_normal((32, 8)) * 0.3).astype(np.float32), "wf"),
         numpy_helper.from_array((rng.standard_normal((64, 8)) * 0.3).astype(np.float32), "wg"),
         numpy_helper.from_array((rng.standard_normal((8, 48)) * 0.3).astype(np.float32), "ah"),
         numpy_helper.from_array(np.array(2.8284271, np.float32), "kg"),
         numpy_helper.from_array(np.array(0.5, np.float32), "kh"),
         numpy_helper.from_array(np.array(-2.0, np.float32), "kj")]
nodes = [
    helper.make_node("Slice", ["x", "s0", "e0", "ax1"], ["a0"], name="slice_a"),
    helper.make_node("Reshape", ["a0", "shape_a"], ["a1"], name="reshape_a"),
    helper.make_node("Transpose", ["a1"], ["a2"], name="transpose_a", perm=[1, 0, 2]),
    helper.make_node("Reshape", ["a2", "flat"], ["a3"], name="flat_a"),
    helper.make_node("Slice", ["x", "s0", "e0", "ax1"], ["b0"], name="slice_b"),
    helper.make_node("Reshape", ["b0", "flat"], ["b1"], name="reshape_b"),
    helper.make_node("Slice", ["b1", "s1", "e1", "ax0"], ["b2"], name="slice_b2"),
    helper.make_node("Slice", ["x", "s2", "e2", "ax01", "st2"], ["c0"], name="slice_c"),
    helper.make_node("Transpose", ["c0"], ["c1"], name="transpose_c", perm=[1, 0]),
    helper.make_node("Reshape", ["c1", "flat"], ["c2"], name="flat_c"),
    helper.make_node("Transpose", ["x"], ["d0"], name="transpose_d", perm=[1, 0]),
    helper.make_node("MatMul", ["d0", "wd"], ["d1"], name="matmul_d"),
    helper.make_node("Reshape", ["d1", "flat"], ["d2"], name="flat_d"),
    helper.make_node("Slice", ["x", "s3", "end3", "ax01"], ["h0"], name="slice_e"),
    helper.make_node("Transpose", ["h0"], ["h1"], name="transpose_e", perm=[1, 0]),
    helper.make_node("MatMul", ["ae", "h1"], ["h2"], name="matmul_e"),
    helper.make_node("Reshape", ["h2", "flat"], ["h3"], name="flat_e"),
    helper.make_node("Transpose", ["x"], ["f0"], name="transpose_f", perm=[1, 0]),
    helper.make_node("Reshape", ["f0", "shape_f"], ["f1"], name="reshape_f"),
    helper.make_node("MatMul", ["f1", "wf"], ["f2"], name="matmul_f"),
    helper.make_node("Reshape", ["f2", "flat"], ["f3"], name="flat_f"),
    helper.make_node("Transpose", ["x"], ["g0"], name="transpose_g", perm=[1, 0]),
    helper.make_node("Div", ["g0", "kg"], ["g1"], name="div_g"),
    helper.make_node("MatMul", ["g1", "wg"], ["g2"], name="matmul_g"),
    helper.make_node("Reshape", ["g2", "flat"], ["g3"], name="flat_g"),
    helper.make_node("Transpose", ["x"], ["k0"], name="transpose_h", perm=[1, 0]),
    helper.make_node("Mul", ["kh", "k0"], ["k1"], name="mul_h"),
    helper.make_node("Reshape", ["k1", "shape_h"], ["k2"], name="reshape_h"),
    helper.make_node("MatMul", ["ah", "k2"], ["k3"], name="matmul_h"),
    helper.make_node("Reshape", ["k3", "flat"], ["k4"], name="flat_h"),
    helper.make_node("Transpose", ["x"], ["j0"], name="transpose_j", perm=[1, 0]),
    helper.make_node("Mul", ["j0", "kj"], ["j1"], name="mul_j"),
    helper.make_node("Transpose", ["j1"], ["j2"], name="transpose_j2", perm=[1, 0]),
    helper.make_node("Reshape", ["j2", "flat"], ["j3"], name="flat_j"),
    helper.make_node("Concat", ["g3", "k4"], ["gk"], name="concat_gk", axis=0),
    helper.make_node("Concat", ["a3", "b2", "c2", "d2", "h3", "f3", "gk", "j3"], ["y"], name="concat", axis=0),
]
graph = helper.make_graph(nodes, "accel_strided",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [64, 48])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2048 + 2040 + 60 * 24 + 48 * 16 + 8 * 32 + 96 * 8 + 48 * 8 + 8 * 64 + 64 * 48])], inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="make_accel_strided.py")
model.ir_version = 8
x = rng.standard_normal((64, 48)).astype(np.float32)
save_with_interp_output(model, out, x)
