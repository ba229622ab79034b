#!/usr/bin/python3
"""Compares two ONNX TensorProto files (dev-time helper).

    /usr/bin/python3 tools/compare_pb.py A.pb B.pb [--rtol 1e-3] [--atol 1e-5]

Prints the shapes, dtypes and the largest absolute difference; the tensors
match when their shapes agree and numpy.allclose(B, A, rtol, atol) holds
(NaNs in the same places count as equal; integer, bool and string tensors
must be equal). Exit status 0 on a match, 1 on a mismatch, 2 on a usage or
read error.
"""
import argparse
import sys

import numpy as np
import onnx
from onnx import numpy_helper


def load(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t), t.name


def main():
    ap = argparse.ArgumentParser(description="compare two ONNX TensorProto files")
    ap.add_argument("a", help="expected tensor (.pb)")
    ap.add_argument("b", help="actual tensor (.pb)")
    ap.add_argument("--rtol", type=float, default=1e-3)
    ap.add_argument("--atol", type=float, default=1e-5)
    args = ap.parse_args()
    try:
        a, na = load(args.a)
        b, nb = load(args.b)
    except Exception as e:  # protobuf and numpy_helper raise several types
        print("error: %s" % e, file=sys.stderr)
        return 2
    print("A %s: name %r, %s %s" % (args.a, na, a.dtype, list(a.shape)))
    print("B %s: name %r, %s %s" % (args.b, nb, b.dtype, list(b.shape)))
    if a.shape != b.shape:
        print("MISMATCH: shapes differ")
        return 1
    if a.dtype != b.dtype:
        print("note: dtypes differ, comparing values")
    if a.dtype.kind in "OSU" or b.dtype.kind in "OSU":
        same = a.size == 0 or bool(np.all(a == b))
        print("%s: %d of %d elements differ" % ("OK" if same else "MISMATCH", int(np.sum(a != b)), a.size))
        return 0 if same else 1
    if a.size == 0:
        print("OK: empty tensors")
        return 0
    fa, fb = a.astype(np.float64), b.astype(np.float64)
    exact = a.dtype.kind in "biu" and b.dtype.kind in "biu"
    if exact:
        close = fa == fb
    else:
        close = np.isclose(fb, fa, rtol=args.rtol, atol=args.atol, equal_nan=True)
    with np.errstate(invalid="ignore"):
        diff = np.abs(fa - fb)
    both_nan = np.isnan(fa) & np.isnan(fb)
    diff = np.where(both_nan | (fa == fb), 0.0, diff)  # equal infinities differ by 0
    diff = np.where(np.isnan(diff), np.inf, diff)  # NaN against a number
    worst = int(np.argmax(diff))
    idx = np.unravel_index(worst, a.shape) if a.shape else ()
    print("max abs diff %.6g at %s (A %r, B %r)" % (diff.flat[worst], list(idx), a.flat[worst], b.flat[worst]))
    bad = int(np.sum(~close))
    if bad:
        print("MISMATCH: %d of %d elements outside %s" %
              (bad, a.size, "exact equality" if exact else "rtol %g atol %g" % (args.rtol, args.atol)))
        return 1
    print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
