#!/usr/bin/python3
"""Makes tests/shapes/rank_if.onnx (dev-time tool, needs python3-onnx): the
rank-polymorphic If of Silero VAD v5's decoder in miniature.

    y = If(Shape(x)[1] == 1, Squeeze(x, 1), Identity(x))    # x: [b, n]
    z = Relu(y)

y's rank depends on whether n == 1, so `interp shapes` prints it per case:
`n==1 ? [b] : [b,n]`.

    /usr/bin/python3 tools/make_rank_if.py
"""
import os

import onnx
from onnx import TensorProto, helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    one = helper.make_tensor("one", TensorProto.INT64, [], [1])
    axis = helper.make_tensor("axis", TensorProto.INT64, [1], [1])
    then_g = helper.make_graph(
        [helper.make_node("Squeeze", ["x", "axis"], ["y_then"], name="squeeze")],
        "then", [], [helper.make_tensor_value_info("y_then", TensorProto.FLOAT, None)])
    else_g = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["y_else"], name="identity")],
        "else", [], [helper.make_tensor_value_info("y_else", TensorProto.FLOAT, None)])
    nodes = [
        helper.make_node("Shape", ["x"], ["shape"], name="shape"),
        helper.make_node("Gather", ["shape", "one"], ["n"], name="gather", axis=0),
        helper.make_node("Equal", ["n", "one"], ["is_one"], name="equal"),
        helper.make_node("If", ["is_one"], ["y"], name="if", then_branch=then_g, else_branch=else_g),
        helper.make_node("Relu", ["y"], ["z"], name="relu"),
    ]
    g = helper.make_graph(nodes, "rank_if",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["b", "n"])],
                          [helper.make_tensor_value_info("z", TensorProto.FLOAT, None)],
                          initializer=[one, axis])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], producer_name="pfvm tools/make_rank_if.py")
    m.ir_version = 8
    # (no onnx.checker: onnx 1.12 wants a shape on every output, and these
    # have no single one)
    onnx.save(m, os.path.join(ROOT, "tests", "shapes", "rank_if.onnx"))


if __name__ == "__main__":
    main()
