#!/usr/bin/python3
"""Element-wise-heavy models for bench/fusion.sh (dev-time: needs onnx).

    /usr/bin/python3 bench/make_fusion_models.py OUTDIR [N]

N is the element count of the large tensors (default 4194304 = 4M). Writes:
  gelu.onnx          GELU as transformer exports write it: x*0.5*(1+erf(x/sqrt2))
  gelu_tanh.onnx     the tanh approximation 0.5x(1+tanh(sqrt(2/pi)(x+0.044715x^3)))
  layernorm.onnx     LayerNorm as opset<17 exports write it: ReduceMean, Sub, Pow,
                     ReduceMean, Add eps, Sqrt, Div, Mul gamma, Add beta; rows of 1024
  swish.onnx         EfficientNet's x*sigmoid(x) on [1,64,H,W]
  chain_K.onnx       K = 1..8 cheap element-wise ops in a chain (Mul, Add, Relu, Sub, Neg, Max, Abs, Min)
  maxgrad.onnx       backward of y = max(a, b): gy' = where(a == b, gy/2, gy);
                     ga = gy' * cast(a >= b); gb = gy' * cast(a < b)
  maxgrad_bcast.onnx the same with b of shape [cols] (broadcast along rows):
                     gb = ReduceSum(gy' * cast(a < b), axes=[0])
All inputs are float32; the first dim of every input is the symbol `n`
(dynamic), so the benches bind it with --dim n=ROWS.
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


def gelu(cols):
    n = helper.make_node
    nodes = [
        n("Div", ["x", "sqrt2"], ["d"]),
        n("Erf", ["d"], ["e"]),
        n("Add", ["e", "one"], ["a"]),
        n("Mul", ["x", "a"], ["m"]),
        n("Mul", ["m", "half"], ["y"]),
    ]
    return model("gelu", nodes, [vi("x", ["n", cols])], [vi("y", ["n", cols])],
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
    return model("gelu_tanh", nodes, [vi("x", ["n", cols])], [vi("y", ["n", cols])],
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
    return model("layernorm", nodes, [vi("x", ["n", cols])], [vi("y", ["n", cols])],
                 [const("two", 2.0), const("eps", 1e-5), gamma, beta])


def swish(h, w):
    n = helper.make_node
    nodes = [n("Sigmoid", ["x"], ["s"]), n("Mul", ["x", "s"], ["y"])]
    return model("swish", nodes, [vi("x", ["n", 64, h, w])], [vi("y", ["n", 64, h, w])])


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
    return model("chain_%d" % k, nodes, [vi("x", ["n", cols])], [vi("y", ["n", cols])],
                 [t for t in inits if t.name in used])


def maxgrad(cols, bcast):
    n = helper.make_node
    bshape = [cols] if bcast else ["n", cols]
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
                 [vi("a", ["n", cols]), vi("b", bshape), vi("gy", ["n", cols])],
                 [vi("ga", ["n", cols]), vi("gb", bshape)], inits)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    models = {
        "gelu": gelu(1024), "gelu_tanh": gelu_tanh(1024), "layernorm": layernorm(1024), "swish": swish(256, 256),
        "maxgrad": maxgrad(1024, False), "maxgrad_bcast": maxgrad(1024, True),
    }
    for k in range(1, 9):
        models["chain_%d" % k] = chain(k, 1024)
    for name, m in models.items():
        onnx.save(m, os.path.join(out, name + ".onnx"))
    print("wrote %d models to %s" % (len(models), out))


if __name__ == "__main__":
    main()
