"""Shared by the tools that write a model fixture whose expected output is
pfvm's own interpreter's (build/interp run): saves the model and its one
input as tests/models/NAME/{model.onnx,test_data_set_0/input_0.pb} and
writes interp's output beside them. Needs `make build/interp` first."""
import os
import subprocess
import tempfile

import onnx
from onnx import numpy_helper


def save_with_interp_output(model, out, x, input_name="x"):
    """Checks and saves model into folder out with input x (a numpy array
    named input_name) and interp's output_0.pb as the expected output."""
    onnx.checker.check_model(model)
    data = os.path.join(out, "test_data_set_0")
    os.makedirs(data, exist_ok=True)
    onnx.save(model, os.path.join(out, "model.onnx"))
    with open(os.path.join(data, "input_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(x, input_name).SerializeToString())
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([os.path.join(root, "build", "interp"), "run", os.path.join(out, "model.onnx"), "-i",
                        os.path.join(data, "input_0.pb"), "-o", tmp, "--quiet"], check=True)
        with open(os.path.join(tmp, "output_0.pb"), "rb") as f:
            y = f.read()
    with open(os.path.join(data, "output_0.pb"), "wb") as f:
        f.write(y)
