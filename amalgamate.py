#!/usr/bin/env python3
"""Builds the single-file headers pfvm.h, pfvm_onnx.h and pfvm_accel.h from src/.

Each header has three sections, the way sqlite's amalgamation does:

1. the public API (types and PFVM_API prototypes of every module header, in
   dependency order, under one include guard): no stb_ds, no nanopb;
2. the internal declarations, under #ifdef PFVM_IMPLEMENTATION: every
   PFVM_INTERNAL declaration of a module header (with the comment right
   above it), every region between the lines `/* pfvm:internal-begin */` and
   `/* pfvm:internal-end */`, and the headers listed in INTERNAL_HEADERS
   whole. The amalgamation defines PFVM__AMALGAMATION, which makes
   PFVM_INTERNAL `static` (src/base/base.h), so internal functions and
   tables never leave the implementation's object file;
3. the implementation (every module .c file).

The text of LICENSE (MIT) closes each header.

In the per-module build of src/ (build/libpfvm.a, which the unit tests link)
PFVM__AMALGAMATION is not defined and internal functions keep external
linkage, so tests can reach them.

Quoted #include lines are dropped (everything is in one file); system
includes stay. The `extern "C"` wrappers of the module headers are replaced
by one around the public section.

    python3 amalgamate.py           write the headers
    python3 amalgamate.py --check   fail if a committed header is stale
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(ROOT, "src")

# (header, guard, doc, [module dirs in dependency order], includes)
HEADERS = [
    ("pfvm.h", "PFVM_H", "pfvm.h.txt",
     ["base", "sym", "ir", "opi", "ops", "shape", "plan", "passes", "exec", "quantize"], []),
    ("pfvm_onnx.h", "PFVM_ONNX_H", "pfvm_onnx.h.txt",
     ["onnx"], ["pfvm.h"]),
    ("pfvm_accel.h", "PFVM_ACCEL_H", "pfvm_accel.h.txt",
     ["accel"], ["pfvm.h"]),
]

# Headers inside a module that must come first (others follow sorted).
FIRST = {
    "opi": ["opi.h", "grad.h", "rewrite.h"],
    "ops": ["fused.h", "ops_common.h"],
    "onnx": ["onnx.pb.h"],
    "base": ["base.h"],
    "accel": ["target.h"],
}
# Implementation files that must come first within a module.
FIRST_C = {"onnx": ["onnx.pb.c"]}
# Implementation files that come after every module of their header: the
# operator registry takes the addresses of the (static) operator tables of
# src/ops, the function-call operator of src/ops/fused.c included, which
# must be defined first.
LAST_C = {"ops": ["registry.c"]}
# Module headers that are internal as a whole.
INTERNAL_HEADERS = {"ops/ops_common.h", "opi/rewrite.h", "onnx/onnx.pb.h"}

QUOTED = re.compile(r'^\s*#\s*include\s+"[^"]+"')
BEGIN = "/* pfvm:internal-begin */"
END = "/* pfvm:internal-end */"


def module_files(mod, ext):
    path = os.path.join(SRC, mod)
    if not os.path.isdir(path):
        return []
    names = sorted(n for n in os.listdir(path) if n.endswith(ext))
    first = (FIRST if ext == ".h" else FIRST_C).get(mod, [])
    last = LAST_C.get(mod, []) if ext == ".c" else []
    ordered = [n for n in first if n in names] + \
        [n for n in names if n not in first and n not in last]
    return [os.path.join(path, n) for n in ordered], \
        [os.path.join(path, n) for n in last if n in names]


def read_lines(path):
    with open(path) as f:
        lines = [l for l in f if not QUOTED.match(l)]
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    return lines


TABLE = re.compile(r'^PFVM_INTERNAL const pfvm_op_def pfvm__ops_(\w+)\[\] = \{\n', re.M)
NAME = re.compile(r'"((?:[^"\\]|\\.)*)"')


def split_entries(body):
    """Splits an initializer list at its top-level commas (outside
    brackets, strings and comments); each piece keeps its comma."""
    pieces, depth, i, start = [], 0, 0, 0
    while i < len(body):
        c = body[i]
        if body.startswith("/*", i):
            i = body.index("*/", i) + 2
            continue
        if body.startswith("//", i):
            i = body.index("\n", i)
            continue
        if c == '"':
            i += 1
            while body[i] != '"':
                i += 2 if body[i] == "\\" else 1
        elif c in "({[":
            depth += 1
        elif c in ")}]":
            depth -= 1
        elif c == "," and depth == 0:
            pieces.append(body[start:i + 1])
            start = i + 1
        i += 1
    pieces.append(body[start:])
    return pieces


HOOKS = (("PFVM_NO_AUTODIFF", "_grad"), ("PFVM_NO_FUSION", "_fuse"))
NO_INFERENCE_HOOK = re.compile(r'infer|_simp_|_flops\b|^pfvm_acl_|_accel(_|\b)')


def hook_switches(text, body):
    """The lines around an operator table that make its gradient builders
    (PFVM_NO_AUTODIFF) or fusion hooks (PFVM_NO_FUSION) NULL: for every
    identifier X of the table, X_grad / X_fuse (the names the tables and
    their macros use) and X itself when it has that suffix; and its
    inference, simplify, flops and accel hooks (PFVM_NO_SHAPE_INFERENCE),
    by name (NO_INFERENCE_HOOK)."""
    ids = set(re.findall(r'\bpfvm__\w+', re.sub(r'"(?:[^"\\]|\\.)*"', '', body)))
    before, after = [], []
    # inference hooks, and those only passes and pfvm_accel.h call (which
    # need inference): the function names of the table (and of the macros
    # that build its entries) with "infer", "_simp_", "_flops" or "accel"
    # in them, pfvm_acl_* (lowerings)
    code = re.sub(r'"(?:[^"\\]|\\.)*"', '', body)
    for mac in set(re.findall(r'\b(PFVM__\w+)\(', body)):
        d = re.search(r'^#define %s\((?:.*\\\n)*.*' % mac, text, re.M)
        if d:
            code += d.group(0)
    infer = set(n for n in re.findall(r'\bpfvm_\w+', code) if NO_INFERENCE_HOOK.search(n))
    infer = sorted(n for n in infer if not n.endswith("_fn") and not re.search(r'^#define %s\b' % n, text, re.M))
    if infer:
        before.append("#ifdef PFVM_NO_SHAPE_INFERENCE\n" + "".join("#define %s NULL\n" % n for n in infer) + "#endif\n")
        after.append("#ifdef PFVM_NO_SHAPE_INFERENCE\n" + "".join("#undef %s\n" % n for n in infer) + "#endif\n")
    for macro, suffix in HOOKS:
        names = sorted({i if i.endswith(suffix) else i + suffix for i in ids} |
                       # gradient builders shared by several operators (pfvm__tn_g_reshape)
                       ({i for i in ids if "_g_" in i} if suffix == "_grad" else set()))
        names = [n for n in names if not re.search(r'^#define %s\b' % n, text, re.M)]
        if not names:
            continue
        before.append("#ifdef %s\n" % macro + "".join("#define %s NULL\n" % n for n in names) + "#endif\n")
        after.append("#ifdef %s\n" % macro + "".join("#undef %s\n" % n for n in names) + "#endif\n")
    return "".join(before), "".join(after)


def family_switch(family, names):
    """PFVM__FAMILY_<family>(...): its arguments where the family keeps an
    operator (every build without PFVM_OPS_SELECTED), nothing where the
    selection keeps none, so that the registry (src/ops/registry.c) does
    not list the table and --gc-sections drops it with its end entry."""
    cond = " || \\\n    ".join(["!defined(PFVM_OPS_SELECTED)"] +
                               ["PFVM_OP_%s + 0 == 1" % n for n in sorted(set(names))])
    return ("#if %s\n#define PFVM__FAMILY_%s(...) __VA_ARGS__\n#else\n#define PFVM__FAMILY_%s(...)\n#endif\n"
            % (cond, family, family))


def select_ops(text, path):
    """Wraps every entry of an operator table in PFVM__OP_SEL(Name, ...)
    (src/ops/registry.h), so that a build with PFVM_OPS_SELECTED keeps only
    the operators whose PFVM_OP_<Name> is 1 and --gc-sections drops the
    rest's kernels and hooks. The sources keep plain initializers."""
    out, pos = [], 0
    for m in TABLE.finditer(text):
        end = text.index("\n};", m.end())
        body = text[m.end():end + 1]
        if re.search(r'^\s*#', body, re.M):
            raise SystemExit("%s: preprocessor line inside an operator table" % path)
        hooks = hook_switches(text, body)
        pieces, names = [], []
        for piece in split_entries(body):
            code = re.sub(r'/\*.*?\*/', '', piece, flags=re.S)
            name = NAME.search(code)
            if not name or not re.match(r'^[A-Za-z_]\w*$', name.group(1)) or not piece.rstrip().endswith(","):
                pieces.append(piece)
                continue
            lead = piece[:len(piece) - len(piece.lstrip())]
            pieces.append("%sPFVM__OP_SEL(%s, %s)" % (lead, name.group(1), piece.strip()[:-1]))
            names.append(name.group(1))
        out.append(text[pos:m.start()])
        out.append(family_switch(m.group(1), names))
        out.append(hooks[0])
        out.append(text[m.start():m.end()])
        out.append("".join(pieces))
        out.append(text[end + 1:end + 4])
        out.append(hooks[1])
        pos = end + 4
    out.append(text[pos:])
    return "".join(out)


def drop_extern_c(lines):
    """Removes the three-line `#ifdef __cplusplus / extern "C" { / #endif`
    wrappers (and their closing `}`) of a module header."""
    out = []
    i = 0
    while i < len(lines):
        s = [l.strip() for l in lines[i:i + 3]]
        if len(s) == 3 and s[0] == "#ifdef __cplusplus" and s[2] == "#endif" and \
                re.match(r'^(extern "C" \{|\}( /\* extern "C" \*/)?)$', s[1]):
            i += 3
            continue
        out.append(lines[i])
        i += 1
    return out


def comment_start(pub):
    """Index in pub where the comment block that ends pub starts, or None."""
    if not pub or not pub[-1].rstrip().endswith("*/"):
        return None
    j = len(pub) - 1
    while j >= 0:
        s = pub[j].strip()
        if "/*" in s:
            return j if s.startswith("/*") else None
        if j != len(pub) - 1 and "*/" in s:
            return None
        j -= 1
    return None


def split_header(path):
    """(public lines, internal lines) of a module header."""
    rel = os.path.relpath(path, SRC)
    tag = "/* ---- src/%s ---- */\n" % rel
    lines = drop_extern_c(read_lines(path))
    if rel in INTERNAL_HEADERS:
        return [], [tag] + lines
    pub, priv = [tag], [tag]
    i = 0
    while i < len(lines):
        line = lines[i]
        s = line.strip()
        if s == BEGIN:
            i += 1
            while i < len(lines) and lines[i].strip() != END:
                priv.append(lines[i])
                i += 1
            if i == len(lines):
                raise SystemExit("%s: %s without %s" % (path, BEGIN, END))
            i += 1
            continue
        if s.startswith("PFVM_INTERNAL ") and not line[0].isspace():
            c = comment_start(pub)
            if c is not None and c > 0:
                priv.extend(pub[c:])
                del pub[c:]
            depth = 0
            start = i
            while True:
                if i >= len(lines) or i - start > 20:
                    raise SystemExit("%s:%d: PFVM_INTERNAL declaration without ';'" % (path, start + 1))
                l = lines[i]
                priv.append(l)
                depth += l.count("(") - l.count(")")
                i += 1
                if depth == 0 and l.rstrip().endswith(";") and not l.lstrip().startswith("#"):
                    break
            continue
        pub.append(line)
        i += 1
    return pub, priv


def build(header, guard, doc, mods, includes):
    with open(os.path.join(SRC, "doc", doc)) as f:
        text = f.read()
    parts = [text.rstrip() + "\n\n"]
    parts.append("/* Generated by amalgamate.py from src/: edit the sources, not this file. */\n")
    parts.append("#ifndef %s\n#define %s\n\n" % (guard, guard))
    for inc in includes:
        parts.append('#include "%s"\n' % inc)
    public, internal, code, last = [], [], [], []
    for mod in mods:
        hs, _ = module_files(mod, ".h")
        for h in hs:
            pub, priv = split_header(h)
            public.append("".join(pub))
            internal.append("".join(priv))
        cs, ls = module_files(mod, ".c")
        for c in cs:
            body = "".join(read_lines(c))
            if mod == "ops":
                body = select_ops(body, c)
            code.append("/* ---- %s ---- */\n" % os.path.relpath(c, ROOT) + body)
        for c in ls:
            last.append("/* ---- %s ---- */\n" % os.path.relpath(c, ROOT) + "".join(read_lines(c)))
    parts.append("#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n")
    parts.extend(public)
    parts.append("\n#ifdef __cplusplus\n}\n#endif\n")
    parts.append("\n#endif /* %s */\n\n" % guard)
    parts.append("#ifdef PFVM_IMPLEMENTATION\n#ifndef %s_IMPLEMENTED\n#define %s_IMPLEMENTED\n\n"
                 % (guard, guard))
    parts.append("/* ======== internal declarations (the implementation's only) ======== */\n\n")
    parts.append("#ifndef PFVM__AMALGAMATION\n#define PFVM__AMALGAMATION 1\n#endif\n\n")
    parts.extend(internal)
    parts.append("\n/* ======== implementation ======== */\n\n")
    parts.extend(code)
    parts.extend(last)
    parts.append("\n#endif /* %s_IMPLEMENTED */\n#endif /* PFVM_IMPLEMENTATION */\n" % guard)
    with open(os.path.join(ROOT, "LICENSE")) as f:
        lic = f.read().rstrip("\n").split("\n")
    parts.append("\n/*\n" + "".join((" * " + l).rstrip() + "\n" for l in lic) + " */\n")
    return "".join(parts)


def main():
    check = "--check" in sys.argv[1:]
    stale = []
    for header, guard, doc, mods, includes in HEADERS:
        if not os.path.exists(os.path.join(SRC, "doc", doc)):
            continue
        text = build(header, guard, doc, mods, includes)
        path = os.path.join(ROOT, header)
        old = open(path).read() if os.path.exists(path) else None
        if check:
            if old != text:
                stale.append(header)
        elif old != text:
            with open(path, "w") as f:
                f.write(text)
            print("wrote", header)
        else:
            # same text: newer all the same, or make would run this again
            # on every call once a source is newer than the header
            os.utime(path)
    if stale:
        print("stale: %s (run python3 amalgamate.py)" % ", ".join(stale))
        return 1
    if check:
        print("headers are up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())
