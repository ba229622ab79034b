#!/usr/bin/python3
"""Counts node outputs whose shape stays unresolved after onnx's own shape
inference (infer_shapes with data_prop=True) and after pfvm's (`interp
shapes`), on the same models (dev-time; writes a markdown table).

A dim counts as resolved when it is a number or an expression of the
graph-input dims; onnx's generated `unk__N` names and pfvm's fresh
`Node_oK_dJ` symbols count as unresolved.

    /usr/bin/python3 tools/shape_report.py MODEL.onnx...
"""
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


def pfvm_counts(path, interp="./build/interp"):
    out = subprocess.run([interp, "shapes", path], capture_output=True, text=True, check=True).stdout
    m = onnx.load(path)
    inputs = {i.name for i in m.graph.input}
    lines = [l.split("\t") for l in out.splitlines() if l]
    values = [l for l in lines if l[0] not in inputs]
    bad = [l for l in values if l[2] == "?" or re.search(r"_o[0-9]+_d[0-9]+", l[2])]
    return len(bad), len(values)


def main():
    print("| model | onnx infer_shapes(data_prop) unresolved | pfvm unresolved |")
    print("| --- | --- | --- |")
    for path in sys.argv[1:]:
        try:
            o = "%d of %d" % onnx_counts(path)
        except Exception as e:  # onnx raises several types
            o = "error: %s" % str(e).splitlines()[0][:60]
        p = "%d of %d" % pfvm_counts(path)
        print("| %s | %s | %s |" % (path.split("/")[-1], o, p))


if __name__ == "__main__":
    main()
