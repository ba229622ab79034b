#!/usr/bin/python3
"""Element-wise-heavy models for bench/fusion.sh (dev-time: needs onnx).

    /usr/bin/python3 bench/make_fusion_models.py OUTDIR [ROWS]

The large tensors are [ROWS, 1024] (default ROWS 4096: 4M elements), with
static shapes so that the fusion pass can count the bytes it avoids
(dynamic dims are covered by tests/test_fused.c). Writes:
  gelu.onnx          GELU as transformer exports write it: x*0.5*(1+erf(x/sqrt2))
  gelu_tanh.onnx     the tanh approximation 0.5x(1+tanh(sqrt(2/pi)(x+0.044715x^3)))
  layernorm.onnx     LayerNorm as opset<17 exports write it: ReduceMean, Sub, Pow,
                     ReduceMean, Add eps, Sqrt, Div, Mul gamma, Add beta; rows of 1024
  swish.onnx         EfficientNet's x*sigmoid(x) on [1,64,ROWS/16,256]
  chain_K.onnx       K = 1..8 cheap element-wise ops in a chain (Mul, Add, Relu, Sub, Neg, Max, Abs, Min)
  maxgrad.onnx       backward of y = max(a, b): gy' = where(a == b, gy/2, gy);
                     ga = gy' * cast(a >= b); gb = gy' * cast(a < b)
  maxgrad_bcast.onnx the same with b of shape [cols] (broadcast along rows):
                     gb = ReduceSum(gy' * cast(a < b), axes=[0])
All inputs are float32.
"""
import math
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

OPSET = 13


def const(name, value):
    return helper.make_tensor(name, TensorProto.FLOAT, [], [float(value)])


def model(name, nodes, inputs, outputs, inits=()):
    g = helper.make_graph(nodes, name, inputs, outputs, list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="pfvm-bench")
    m.ir_version = 7
    onnx.checker.check_model(m)
    return m


def vi(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


ROWS = 4096


def gelu(cols):
    n = helper.make_node
    nodes = [
        n("Div", ["x", "sqrt2"], ["d"]),
        n("Erf", ["d"], ["e"]),
        n("Add", ["e", "one"], ["a"]),
        n("Mul", ["x", "a"], ["m"]),
        n("Mul", ["m", "half"], ["y"]),
    ]
    return model("gelu", nodes, [vi("x", [ROWS, cols])], [vi("y", [ROWS, cols])],
                 [const("sqrt2", math.sqrt(2.0)), const("one", 1.0), const("half", 0.5)])


def gelu_tanh(cols):
    n = helper.make_node
    nodes = [
        n("Mul", ["x", "x"], ["x2"]),
        n("Mul", ["x2", "x"], ["x3"]),
        n("Mul", ["x3", "c"], ["cx3"]),
        n("Add", ["x", "cx3"], ["s"]),
        n("Mul", ["s", "k"], ["ks"]),
        n("Tanh", ["ks"], ["t"]),
        n("Add", ["t", "one"], ["a"]),
        n("Mul", ["x", "a"], ["m"]),
        n("Mul", ["m", "half"], ["y"]),
    ]
    return model("gelu_tanh", nodes, [vi("x", [ROWS, cols])], [vi("y", [ROWS, cols])],
                 [const("c", 0.044715), const("k", math.sqrt(2.0 / math.pi)), const("one", 1.0),
                  const("half", 0.5)])


def layernorm(cols):
    n = helper.make_node
    rng = np.random.default_rng(0)
    gamma = helper.make_tensor("gamma", TensorProto.FLOAT, [cols], rng.standard_normal(cols).astype(np.float32))
    beta = helper.make_tensor("beta", TensorProto.FLOAT, [cols], rng.standard_normal(cols).astype(np.float32))
    nodes = [
        n("ReduceMean", ["x"], ["mean"], axes=[-1], keepdims=1),
        n("Sub", ["x", "mean"], ["d"]),
        n("Pow", ["d", "two"], ["d2"]),
        n("ReduceMean", ["d2"], ["var"], axes=[-1], keepdims=1),
        n("Add", ["var", "eps"], ["ve"]),
        n("Sqrt", ["ve"], ["sd"]),
        n("Div", ["d", "sd"], ["nrm"]),
        n("Mul", ["nrm", "gamma"], ["sc"]),
        n("Add", ["sc", "beta"], ["y"]),
    ]
    return model("layernorm", nodes, [vi("x", [ROWS, cols])], [vi("y", [ROWS, cols])],
                 [const("two", 2.0), const("eps", 1e-5), gamma, beta])


def swish(h, w):
    n = helper.make_node
    nodes = [n("Sigmoid", ["x"], ["s"]), n("Mul", ["x", "s"], ["y"])]
    return model("swish", nodes, [vi("x", [1, 64, h, w])], [vi("y", [1, 64, h, w])])


def chain(k, cols):
    n = helper.make_node
    ops = [("Mul", "c1"), ("Add", "c2"), ("Relu", None), ("Sub", "c3"), ("Neg", None), ("Max", "c4"),
           ("Abs", None), ("Min", "c5")]
    nodes, cur = [], "x"
    for i in range(k):
        op, c = ops[i]
        out = "y" if i == k - 1 else "t%d" % i
        nodes.append(n(op, [cur, c] if c else [cur], [out]))
        cur = out
    inits = [const("c1", 1.5), const("c2", 0.25), const("c3", 0.5), const("c4", -0.75), const("c5", 2.0)]
    used = {x for nd in nodes for x in nd.input}
    return model("chain_%d" % k, nodes, [vi("x", [ROWS, cols])], [vi("y", [ROWS, cols])],
                 [t for t in inits if t.name in used])


def maxgrad(cols, bcast):
    n = helper.make_node
    bshape = [cols] if bcast else [ROWS, cols]
    nodes = [
        n("Equal", ["a", "b"], ["eq"]),
        n("Div", ["gy", "two"], ["half"]),
        n("Where", ["eq", "half", "gy"], ["g"]),
        n("GreaterOrEqual", ["a", "b"], ["ge"]),
        n("Cast", ["ge"], ["gef"], to=TensorProto.FLOAT),
        n("Mul", ["g", "gef"], ["ga"]),
        n("Less", ["a", "b"], ["lt"]),
        n("Cast", ["lt"], ["ltf"], to=TensorProto.FLOAT),
        n("Mul", ["g", "ltf"], ["gb_full" if bcast else "gb"]),
    ]
    if bcast:
        nodes.append(n("ReduceSum", ["gb_full", "axes0"], ["gb"], keepdims=0))
    inits = [const("two", 2.0)]
    if bcast:
        inits.append(helper.make_tensor("axes0", TensorProto.INT64, [1], [0]))
    return model("maxgrad_bcast" if bcast else "maxgrad", nodes,
                 [vi("a", [ROWS, cols]), vi("b", bshape), vi("gy", [ROWS, cols])],
                 [vi("ga", [ROWS, cols]), vi("gb", bshape)], inits)


def main():
    global ROWS
    out = sys.argv[1]
    if len(sys.argv) > 2:
        ROWS = int(sys.argv[2])
    os.makedirs(out, exist_ok=True)
    models = {
        "gelu": gelu(1024), "gelu_tanh": gelu_tanh(1024), "layernorm": layernorm(1024), "swish": swish(max(1, ROWS // 16), 256),
        "maxgrad": maxgrad(1024, False), "maxgrad_bcast": maxgrad(1024, True),
    }
    for k in range(1, 9):
        models["chain_%d" % k] = chain(k, 1024)
    for name, m in models.items():
        onnx.save(m, os.path.join(out, name + ".onnx"))
    print("wrote %d models to %s" % (len(models), out))


if __name__ == "__main__":
    main()
