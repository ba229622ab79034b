#!/bin/sh
# The main job: builds pfvm and classifies a few handwritten digits with a
# small CNN (models/digits.onnx, trained by tools/make_digits.py) run by pfvm.
# Installs what it needs (Debian packages) first.
set -eu
cd "$(dirname "$0")"
sh tools/setup.sh
make -j2 build/examples/digits >/dev/null
./build/examples/digits models/digits.onnx models/digits_samples
