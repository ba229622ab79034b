#!/usr/bin/python3
"""Makes the control-flow and shape-idiom fixtures under tests/models (dev-time
tool: needs Debian's python3-torch and python3-onnx, and onnxruntime-node for
the expected outputs):

    /usr/bin/python3 tools/make_loop_fixtures.py [NAME...]

Each fixture is a folder in the ONNX backend-test layout (model.onnx,
test_data_set_0/input_K.pb and output_K.pb); the inputs are written here,
the outputs are onnxruntime's (tools/ort_case.js). `interp test tests/models`
runs them optimized, `interp test --no-opt tests/models` as loaded, and both
check every value's inferred shape, loop bodies included, at every
iteration.

| fixture | what |
| --- | --- |
| loop_greedy | greedy decoding from a `torch.jit.script` while-loop (ONNX Loop, opset 15): the generated tokens are loop-carried and grow by one column per iteration (Concat), the body declares them `[toks.11_dim_0, toks.11_dim_1]`; an early stop (`break` when every row picked token 3) ends the loop through its condition |
| loop_concat | a hand-built Loop whose carried value grows by Concat each iteration, with shape arithmetic on the carried value in the body (Shape, Gather, Range, ConstantOfShape) and a scan output of per-iteration widths |
| loop_nested | a Loop whose body runs an inner Loop over the outer carried value: both grow, the inner one by one column per inner iteration, the outer by the inner loop's result |
| expand_where | detection-style post-processing exported by torch at opset 11: `arange(b).unsqueeze(1).expand(-1, n).reshape(-1)`, whose Expand target is built with the exporter's `-1` idiom (ConstantOfShape, Mul by -1, Equal, Where) |
"""
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "models")


def write_case(name, model_bytes, inputs):
    """Writes tests/models/NAME with onnxruntime's outputs for `inputs`
    (name -> numpy array, in graph-input order)."""
    d = os.path.join(OUT, name)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    path = os.path.join(d, "model.onnx")
    with open(path, "wb") as f:
        f.write(model_bytes)
    pbs = []
    for k, (iname, arr) in enumerate(inputs):
        p = os.path.join(d, "test_data_set_0", "input_%d.pb" % k)
        with open(p, "wb") as f:
            f.write(numpy_helper.from_array(arr, iname).SerializeToString())
        pbs.append(p)
    r = subprocess.run(["node", os.path.join(ROOT, "tools", "ort_case.js"), path, d] + pbs, cwd=ROOT)
    if r.returncode:
        sys.exit("ort_case.js failed for %s (status %d)" % (name, r.returncode))


# ---- loop_greedy: torch.jit.script while-loop -------------------------------------------------


def make_loop_greedy():
    import torch

    class Greedy(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = torch.nn.Embedding(16, 8)
            self.out = torch.nn.Linear(8, 16)

        def forward(self, x, max_len: int):
            batch = x.shape[0]
            toks = torch.zeros([batch, 0], dtype=torch.long)
            prev = torch.full([batch, 1], -1, dtype=torch.long)
            h = x
            i = 0
            while i < max_len:
                logits = self.out(h)
                nxt = torch.argmax(logits, dim=1, keepdim=True)
                toks = torch.cat([toks, nxt], dim=1)
                h = torch.tanh(h + self.emb(nxt).squeeze(1))
                # early stop: every row repeats its last token
                if bool((nxt == prev).all()):
                    break
                prev = nxt
                i += 1
            return toks

    torch.manual_seed(0)
    m = torch.jit.script(Greedy().eval())
    x = torch.randn(3, 8)
    print("loop_greedy: torch gives", m(x, 12).tolist())
    with tempfile.TemporaryDirectory() as tmp:
        p = os.path.join(tmp, "m.onnx")
        torch.onnx.export(m, (x, 12), p, input_names=["x", "max_len"], output_names=["toks"],
                          dynamic_axes={"x": {0: "batch"}, "toks": {0: "batch", 1: "len"}}, opset_version=15)
        data = open(p, "rb").read()
    write_case("loop_greedy", data, [("x", x.numpy()), ("max_len", np.array(12, dtype=np.int64))])


# ---- loop_concat: hand-built growing carried value ---------------------------------------------


def make_loop_concat():
    i64 = TensorProto.INT64
    f32 = TensorProto.FLOAT
    # body(iter, cond, acc[b, w]) -> cond, acc' = Concat(acc, row * (iter+1)) [b, w+1], width w (scan)
    body_nodes = [
        helper.make_node("Identity", ["cond_in"], ["cond_out"], name="keep_cond"),
        helper.make_node("Shape", ["acc_in"], ["acc_shape"], name="acc_shape"),
        helper.make_node("Gather", ["acc_shape", "one"], ["width"], name="width", axis=0),
        helper.make_node("Gather", ["acc_shape", "zero"], ["rows"], name="rows", axis=0),
        helper.make_node("Unsqueeze", ["rows"], ["rows1"], name="rows1", axes=[0]),
        helper.make_node("Concat", ["rows1", "one1"], ["col_shape"], name="col_shape", axis=0),
        helper.make_node("ConstantOfShape", ["col_shape"], ["ones_col"], name="ones_col",
                         value=helper.make_tensor("v", f32, [1], [1.0])),
        helper.make_node("Cast", ["iter"], ["iter_f"], name="iter_f", to=f32),
        helper.make_node("Add", ["iter_f", "one_f"], ["step"], name="step"),
        helper.make_node("Mul", ["ones_col", "step"], ["col"], name="col"),
        helper.make_node("ReduceSum", ["acc_in"], ["row_sum"], name="row_sum", axes=[1], keepdims=1),
        helper.make_node("Add", ["col", "row_sum"], ["col2"], name="col2"),
        helper.make_node("Concat", ["acc_in", "col2"], ["acc_out"], name="grow", axis=1),
        # a value sized by the carried width: Range(0, w+1) summed, per iteration
        helper.make_node("Add", ["width", "one"], ["w1"], name="w1"),
        helper.make_node("Range", ["zero", "w1", "one"], ["ramp"], name="ramp"),
        helper.make_node("Identity", ["width"], ["width_out"], name="width_out"),
    ]
    body = helper.make_graph(
        body_nodes, "grow_body",
        [helper.make_tensor_value_info("iter", i64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc_in", f32, ["acc_rows", "acc_width"])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc_out", f32, ["acc_rows", "acc_width_next"]),
         helper.make_tensor_value_info("width_out", i64, [])],
        initializer=[helper.make_tensor("one", i64, [], [1]), helper.make_tensor("zero", i64, [], [0]),
                     helper.make_tensor("one1", i64, [1], [1]),
                     helper.make_tensor("one_f", f32, [], [1.0])])
    nodes = [
        helper.make_node("Loop", ["n", "", "x"], ["acc", "widths"], name="loop", body=body),
        helper.make_node("ReduceSum", ["acc"], ["total"], name="total", axes=[1], keepdims=0),
    ]
    g = helper.make_graph(
        nodes, "loop_concat",
        [helper.make_tensor_value_info("n", i64, []), helper.make_tensor_value_info("x", f32, ["batch", 3])],
        [helper.make_tensor_value_info("acc", f32, ["batch", "w_out"]),
         helper.make_tensor_value_info("widths", i64, ["trips"]),
         helper.make_tensor_value_info("total", f32, ["batch"])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 12)], producer_name="pfvm tools/make_loop_fixtures.py")
    m.ir_version = 7
    onnx.checker.check_model(m)
    x = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)  # width 3: a number, as the body's first iteration sees it
    write_case("loop_concat", m.SerializeToString(), [("n", np.array(4, dtype=np.int64)), ("x", x)])


# ---- loop_nested: a Loop in a Loop's body -----------------------------------------------------------


def make_loop_nested():
    i64 = TensorProto.INT64
    f32 = TensorProto.FLOAT
    inner = helper.make_graph(
        [helper.make_node("Identity", ["icond"], ["icond_out"], name="inner_cond"),
         helper.make_node("ReduceMax", ["iacc"], ["imax"], name="inner_max", axes=[1], keepdims=1),
         helper.make_node("Add", ["imax", "outer_step"], ["icol"], name="inner_col"),
         helper.make_node("Concat", ["iacc", "icol"], ["iacc_out"], name="inner_grow", axis=1)],
        "inner_body",
        [helper.make_tensor_value_info("ii", i64, []),
         helper.make_tensor_value_info("icond", TensorProto.BOOL, []),
         helper.make_tensor_value_info("iacc", f32, ["ib", "iw"])],
        [helper.make_tensor_value_info("icond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("iacc_out", f32, ["ib", "iw2"])])
    outer = helper.make_graph(
        [helper.make_node("Identity", ["ocond"], ["ocond_out"], name="outer_cond"),
         helper.make_node("Cast", ["oi"], ["oi_f"], name="outer_i", to=f32),
         helper.make_node("Add", ["oi_f", "half"], ["outer_step"], name="outer_step"),
         helper.make_node("Add", ["oi", "one"], ["inner_n"], name="inner_n"),
         helper.make_node("Loop", ["inner_n", "", "oacc"], ["oacc_in"], name="inner_loop", body=inner),
         helper.make_node("Neg", ["oacc_in"], ["oacc_neg"], name="outer_neg"),
         helper.make_node("Concat", ["oacc_in", "oacc_neg"], ["oacc_out"], name="outer_grow", axis=1),
         helper.make_node("Shape", ["oacc_out"], ["oshape"], name="outer_shape")],
        "outer_body",
        [helper.make_tensor_value_info("oi", i64, []),
         helper.make_tensor_value_info("ocond", TensorProto.BOOL, []),
         helper.make_tensor_value_info("oacc", f32, ["ob", "ow"])],
        [helper.make_tensor_value_info("ocond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("oacc_out", f32, ["ob", "ow2"]),
         helper.make_tensor_value_info("oshape", i64, [2])],
        initializer=[helper.make_tensor("half", f32, [], [0.5]), helper.make_tensor("one", i64, [], [1])])
    g = helper.make_graph(
        [helper.make_node("Loop", ["n", "", "x"], ["y", "shapes"], name="outer_loop", body=outer)],
        "loop_nested",
        [helper.make_tensor_value_info("n", i64, []), helper.make_tensor_value_info("x", f32, ["batch", 2])],
        [helper.make_tensor_value_info("y", f32, ["batch", "w"]),
         helper.make_tensor_value_info("shapes", i64, ["trips", 2])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 12)], producer_name="pfvm tools/make_loop_fixtures.py")
    m.ir_version = 7
    onnx.checker.check_model(m)
    x = np.array([[0.5, -1.0], [2.0, 0.25], [-0.5, 1.5]], dtype=np.float32)
    write_case("loop_nested", m.SerializeToString(), [("n", np.array(3, dtype=np.int64)), ("x", x)])


# ---- expand_where: torch's opset-11 Expand with -1 --------------------------------------------------


def make_expand_where():
    import torch

    class Post(torch.nn.Module):
        def forward(self, scores):
            b = scores.shape[0]
            n = scores.shape[1]
            idx = torch.arange(b).unsqueeze(1).expand(-1, n)
            flat = idx.reshape(-1)
            best = scores.reshape(-1)
            return flat, best * 2

    x = torch.randn(3, 5, generator=torch.Generator().manual_seed(0))
    with tempfile.TemporaryDirectory() as tmp:
        p = os.path.join(tmp, "m.onnx")
        torch.onnx.export(Post(), (x,), p, input_names=["scores"], output_names=["idx", "best"],
                          dynamic_axes={"scores": {0: "batch", 1: "N"}}, opset_version=11)
        data = open(p, "rb").read()
    write_case("expand_where", data, [("scores", x.numpy())])


FIXTURES = {
    "loop_greedy": make_loop_greedy,
    "loop_concat": make_loop_concat,
    "loop_nested": make_loop_nested,
    "expand_where": make_expand_where,
}


def main():
    names = sys.argv[1:] or list(FIXTURES)
    for n in names:
        if n not in FIXTURES:
            sys.exit("unknown fixture %s (known: %s)" % (n, ", ".join(FIXTURES)))
        FIXTURES[n]()
        print("made tests/models/%s" % n)


if __name__ == "__main__":
    main()
