#!/usr/bin/python3
"""Counts node outputs whose shape stays unresolved after onnx's own shape
inference (infer_shapes with data_prop=True) and after pfvm's (`interp
shapes`), on the same models (dev-time; writes a markdown table).

A dim counts as resolved when it is a number or an expression of the
graph-input dims; onnx's generated `unk__N` names, pfvm's fresh
`Node_oK_dJ` symbols and any other name (a dim_param the model declares on
an inner value) count as unresolved, and so does an unknown rank (`?`).
A case shape (`COND ? [..] : [..]`) is resolved when every shape and
condition in it is.

    /usr/bin/python3 tools/shape_report.py [--dim NAME=VALUE]... MODEL.onnx...

(PFVM_INTERP=path/to/interp measures another build.)

With --dim the shapes of the model specialized to the binding are counted
(the `= [..]` column of `interp shapes --dim`).
"""
import os
import re
import subprocess
import sys

import onnx
from onnx import shape_inference


def onnx_counts(path):
    m = shape_inference.infer_shapes(onnx.load(path), data_prop=True)
    info = {}
    outs = []

    def walk(g):
        for vi in list(g.value_info) + list(g.output) + list(g.input):
            t = vi.type.tensor_type
            info[vi.name] = t.HasField("shape") and all(
                d.HasField("dim_value") or (d.HasField("dim_param") and not d.dim_param.startswith("unk__"))
                for d in t.shape.dim)
        for n in g.node:
            outs.extend(o for o in n.output if o)
            for a in n.attribute:
                if a.g.node:
                    walk(a.g)
    walk(m.graph)
    return sum(1 for o in outs if not info.get(o, False)), len(outs)


IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def names(shape):
    return {x for x in IDENT.findall(shape) if x not in ("min", "max")}


def unknown_rank(shape):
    # the ternary's " ? " and " : " are not unknown ranks
    return "?" in shape.replace(" ? ", " ").replace(" : ", " ")


def pfvm_counts(path, dims=(), interp=os.environ.get("PFVM_INTERP", "./build/interp")):
    args = [interp, "shapes", path]
    for d in dims:
        args += ["--dim", d]
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    m = onnx.load(path)
    inits = {i.name for i in m.graph.initializer}
    inputs = [i.name for i in m.graph.input if i.name not in inits]
    lines = [l.split("\t") for l in out.splitlines() if l]
    col = 3 if dims else 2
    shape = lambda l: l[col][2:] if dims else l[col]
    # the graph inputs' symbols (printed first, in order)
    allowed = set()
    for l in lines[:len(inputs)]:
        assert l[0] in inputs, l[0]
        allowed |= names(l[2])
    values = [l for l in lines if l[0] not in inputs]
    bad = [l for l in values if len(l) <= col or unknown_rank(shape(l)) or names(shape(l)) - allowed]
    return len(bad), len(values)


def main():
    print("| model | onnx infer_shapes(data_prop) unresolved | pfvm unresolved |")
    print("| --- | --- | --- |")
    args, dims = sys.argv[1:], []
    while args and args[0] == "--dim":
        dims.append(args[1])
        args = args[2:]
    for path in args:
        if dims:
            print("| %s (--dim %s) | - | %d of %d |" % ((path.split("/")[-1], " ".join(dims)) + pfvm_counts(path, dims)))
            continue
        try:
            o = "%d of %d" % onnx_counts(path)
        except Exception as e:  # onnx raises several types
            o = "error: %s" % str(e).splitlines()[0][:60]
        p = "%d of %d" % pfvm_counts(path)
        print("| %s | %s | %s |" % (path.split("/")[-1], o, p))


if __name__ == "__main__":
    main()
