#!/usr/bin/env python3
"""Appends ", NULL" to every positional pfvm_op_def initializer that lacks
the struct's last field, as gcc's -Wmissing-field-initializers reports them.

Written when `accel` was added at the end of struct pfvm_op_def (issue 21);
rerun it after merging branches that add table entries:

    python3 tools/op_def_fill_field.py accel
"""
import re
import subprocess
import sys
from glob import glob

field = sys.argv[1] if len(sys.argv) > 1 else "accel"
pat = re.compile(r"^(src/[^:]+):(\d+):(\d+): warning: missing initializer for field .%s. of .pfvm_op_def." % field)
sites = set()
for f in sorted(glob("src/*/*.c")):
    r = subprocess.run(["gcc", "-std=c99", "-Wall", "-Wextra", "-Isrc", "-fsyntax-only", f],
                       capture_output=True, text=True)
    for line in r.stderr.splitlines():
        m = pat.match(line)
        if m:
            sites.add((m.group(1), int(m.group(2)), int(m.group(3))))


def close_of(text, pos):
    """Index of the '}' that ends the initializer around/at pos."""
    depth, i, n = 0, pos, len(text)
    while i < n:
        c = text[i]
        if c in "\"'":
            q, i = c, i + 1
            while text[i] != q:
                i += 2 if text[i] == "\\" else 1
        elif c == "{":
            depth += 1
        elif c == "}":
            if depth <= 1:
                return i
            depth -= 1
        i += 1
    raise SystemExit("no closing brace after offset %d" % pos)


by_file = {}
for f, ln, col in sites:
    by_file.setdefault(f, []).append((ln, col))
for f, locs in by_file.items():
    text = open(f).read()
    starts = [0]
    for l in text.split("\n"):
        starts.append(starts[-1] + len(l) + 1)
    closes = sorted({close_of(text, starts[ln - 1] + col - 1) for ln, col in locs}, reverse=True)
    for c in closes:
        text = text[:c] + ", NULL" + text[c:]
    open(f, "w").write(text)
    print("%s: %d initializers" % (f, len(closes)))
