#!/usr/bin/python3
"""Runs onnx's checker over models (dev-time; tests call it only when
Debian's python3-onnx is installed).

    /usr/bin/python3 tools/onnx_check.py MODEL.onnx...
"""
import sys

import onnx


def main():
    if len(sys.argv) < 2:
        print("usage: onnx_check.py MODEL.onnx...", file=sys.stderr)
        return 2
    bad = 0
    for path in sys.argv[1:]:
        try:
            onnx.checker.check_model(onnx.load(path), full_check=True)
            print("OK", path)
        except Exception as e:  # the checker raises several exception types
            try:
                onnx.checker.check_model(onnx.load(path))
                print("OK", path, "(without full_check; shape inference failed: %s)" % str(e).splitlines()[0])
            except Exception as e2:
                print("FAIL", path, str(e2).splitlines()[0] if str(e2) else type(e2).__name__)
                bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
