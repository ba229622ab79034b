#!/usr/bin/env python3
"""Appends ", NULL" to every positional pfvm_op_def initializer that lacks
the struct's last field, as gcc's -Wmissing-field-initializers reports them.

Written when `accel` was added at the end of struct pfvm_op_def (issue 21);
rerun it after merging branches that add table entries, naming the last
field (now `variants`):

    python3 tools/op_def_fill_field.py variants

Entries built by macros (PFVM__EW_*, PFVM__RED_OP, PFVM__TN_END) are
edited by hand, as are examples/custom_op.c and tests/test_custom_op.c.
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
    line = open(f).read().split("\n")[ln - 1]
    if re.match(r"^\s*[A-Z_][A-Z0-9_]*\s*,?\s*$", line):
        # an entry made by an argument-less macro (PFVM__TN_END): its
        # closing brace is in the #define, so the macro is edited by hand
        print("%s:%d: edit the macro %s by hand" % (f, ln, line.strip().rstrip(",")))
        continue
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
