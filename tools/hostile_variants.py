#!/usr/bin/python3
"""Writes one-field edits of the node-suite models for the attribute and
input audit of issue 17 (tests/fuzz/README, "Audit"):

  /usr/bin/python3 tools/hostile_variants.py OUTDIR [SUITE] [OPS]

Every input of a node-suite model with data in test_data_set_0 becomes an
initializer (so fuzz_run, which makes inputs from the declared types, runs
the real values), and each variant changes one thing:

  a<node>_<attr>[_<k>]_<value>   an INT or FLOAT attribute, or element k
                                 of an INTS or FLOATS attribute, set to an
                                 extreme value (or an INTS list emptied);
                                 a STRING attribute set to "", "zz", 300
                                 letters, "...->" or bytes with a NUL
  i<input>_<where>_<value>       element 0, the last element or every
                                 element of an input set to an extreme
                                 value (integers: -1, +-10^6, +-2^31,
                                 2^40, INT64_MIN/MAX clamped to the type;
                                 floats: NaN, +-Inf, +-1e30, -1)
  i<input>_empty                 the input with no elements

OPS (comma separated) keeps only models using one of those op types;
HV_ONLY=float (or string) in the environment writes only the FLOAT(S)
(or STRING) attribute edits.
The
files are for tests/fuzz/sweep.sh (run through fuzz_run under ASan+UBSan);
they are not committed.
"""
import os
import sys

import numpy as np
import onnx
from onnx import numpy_helper

INT_VALUES = [-1, -1000000, 1000000, 2**31, -(2**31) - 1, 2**40,
              -(2**63), 2**63 - 1]
FLOAT_VALUES = [float("nan"), float("inf"), float("-inf"), 1e30, -1e30, -1.0]
STRING_VALUES = [b"", b"zz", b"a" * 300, b"...->", b"\xff\x00x"]


def clamp(v, dt):
    info = np.iinfo(dt)
    return max(int(info.min), min(int(info.max), v))


def load_inputs(test_dir, model):
    ds = os.path.join(test_dir, "test_data_set_0")
    values = {}
    for i, inp in enumerate(model.graph.input):
        p = os.path.join(ds, "input_%d.pb" % i)
        if not os.path.exists(p):
            continue
        t = onnx.TensorProto()
        with open(p, "rb") as f:
            t.ParseFromString(f.read())
        try:
            values[inp.name] = numpy_helper.to_array(t)
        except Exception:
            pass
    return values


def with_initializers(model, values, override=None):
    m = onnx.ModelProto()
    m.CopyFrom(model)
    keep = [i for i in m.graph.input if i.name not in values]
    del m.graph.input[:]
    m.graph.input.extend(keep)
    for name, arr in values.items():
        if override and name in override:
            arr = override[name]
        m.graph.initializer.append(numpy_helper.from_array(arr, name))
    return m


def input_variants(values):
    for name, arr in values.items():
        if arr.dtype.kind in "iu":
            vals = sorted({clamp(v, arr.dtype) for v in INT_VALUES})
        elif arr.dtype.kind == "f":
            vals = FLOAT_VALUES
        else:
            vals = []
        yield "i%s_empty" % name, name, np.zeros((0,), arr.dtype)
        if arr.size == 0:
            continue
        for v in vals:
            for where in ("first", "last", "all"):
                a = arr.copy().reshape(-1)
                if where == "first":
                    a[0] = v
                elif where == "last":
                    a[-1] = v
                else:
                    a[:] = v
                yield "i%s_%s_%s" % (name, where, v), name, a.reshape(arr.shape)


def attr_variants(model):
    for ni, node in enumerate(model.graph.node):
        for ai, at in enumerate(node.attribute):
            if at.type == onnx.AttributeProto.INT:
                for v in INT_VALUES:
                    yield "a%d_%s_%d" % (ni, at.name, v), ni, ai, None, v
            elif at.type == onnx.AttributeProto.FLOAT:
                for v in FLOAT_VALUES:
                    yield "a%d_%s_%s" % (ni, at.name, v), ni, ai, "float", v
            elif at.type == onnx.AttributeProto.FLOATS:
                for k in range(min(len(at.floats), 4)):
                    for v in FLOAT_VALUES:
                        yield "a%d_%s_%d_%s" % (ni, at.name, k, v), ni, ai, ("floats", k), v
            elif at.type == onnx.AttributeProto.STRING:
                for v in STRING_VALUES:
                    yield "a%d_%s_s%d" % (ni, at.name, len(v)), ni, ai, "string", v
            elif at.type == onnx.AttributeProto.INTS:
                yield "a%d_%s_empty" % (ni, at.name), ni, ai, "empty", 0
                for k in range(min(len(at.ints), 4)):
                    for v in INT_VALUES:
                        yield "a%d_%s_%d_%d" % (ni, at.name, k, v), ni, ai, k, v


def safe(s):
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in s)[:120]


def main():
    out = sys.argv[1]
    suite = sys.argv[2] if len(sys.argv) > 2 else \
        "/usr/share/libonnx-testdata/data/node"
    ops = set(sys.argv[3].split(",")) if len(sys.argv) > 3 else None
    os.makedirs(out, exist_ok=True)
    n = 0
    for test in sorted(os.listdir(suite)):
        d = os.path.join(suite, test)
        try:
            model = onnx.load(os.path.join(d, "model.onnx"))
        except Exception:
            continue
        if ops and not ops & {nd.op_type for nd in model.graph.node}:
            continue
        values = load_inputs(d, model)
        base = with_initializers(model, values)

        def write(tag, m):
            nonlocal n
            with open(os.path.join(out, safe(test + "__" + tag) + ".onnx"), "wb") as f:
                f.write(m.SerializeToString())
            n += 1

        only = os.environ.get("HV_ONLY", "")
        if not only:
            write("base", base)
        for tag, ni, ai, k, v in attr_variants(base):
            if only == "float" and not (k == "float" or isinstance(k, tuple)):
                continue
            if only == "string" and k != "string":
                continue
            m = onnx.ModelProto()
            m.CopyFrom(base)
            at = m.graph.node[ni].attribute[ai]
            if k is None:
                at.i = v
            elif k == "float":
                at.f = v
            elif k == "string":
                at.s = v
            elif isinstance(k, tuple):
                at.floats[k[1]] = v
            elif k == "empty":
                del at.ints[:]
            else:
                at.ints[k] = v
            write(tag, m)
        for tag, name, arr in ([] if only else input_variants(values)):
            try:
                write(tag, with_initializers(model, values, {name: arr}))
            except Exception:
                pass
    print("%d variants in %s" % (n, out))


if __name__ == "__main__":
    main()
