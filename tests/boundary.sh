#!/bin/sh
# The public boundary of the generated headers. Prints "N passed, M failed".
#
#   sh tests/boundary.sh [BUILD_DIR]
#
# - an object built with PFVM_IMPLEMENTATION exports exactly the names in
#   tests/public_symbols.txt (internal functions and tables are static);
# - the public sections of pfvm.h, pfvm_onnx.h and pfvm_accel.h bring in neither stb_ds
#   nor nanopb, and declare no pfvm__ function;
# - a program's own stb_ds (included before or after pfvm, its own
#   STB_DS_IMPLEMENTATION in another file) links with pfvm;
# - two private copies (PFVM_STATIC) link into one program, warning-free;
# - the implementation compiles as C++ (g++), warning-free;
# - interp.c, the examples and tests/consumer compile against the public
#   API alone (the unit tests, tests/test_*.c, link build/libpfvm.a built
#   per module); no unit test, example or interp.c names a pfvm__ or stbds_
#   identifier;
# - every configuration macro is documented in a header's top comment.
set -u
cd "$(dirname "$0")/.."
BUILD=${1:-build}
CC=${CC:-cc}
CXX=${CXX:-g++}
WARN="-Wall -Wextra -Werror"
pass=0
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }

# ---- exported symbols ----
printf '#define PFVM_IMPLEMENTATION\n#include "pfvm_onnx.h"\n#include "pfvm_accel.h"\n' > "$tmp/impl.c"
if $CC -std=c99 $WARN -pedantic -O0 -I. -c "$tmp/impl.c" -o "$tmp/impl.o" 2>"$tmp/err"; then
    # (clang's target_clones resolvers, <kernel>.resolver, are global even for
    # static kernels; they can clash only where the public names clash too:
    # a PFVM_STATIC copy built by clang does without them, see src/ops/fused.h)
    nm -g --defined-only "$tmp/impl.o" | awk '{print $3}' | grep -v '\.resolver$' | LC_ALL=C sort > "$tmp/syms"
    if LC_ALL=C sort tests/public_symbols.txt | cmp -s - "$tmp/syms"; then
        ok
    else
        bad "exported symbols differ from tests/public_symbols.txt (< expected, > exported):"
        LC_ALL=C sort tests/public_symbols.txt | diff - "$tmp/syms" | grep '^[<>]' | head -n 20
    fi
else
    bad "implementation does not compile"; head -n 20 "$tmp/err"
fi

# ---- the public sections ----
printf '#include "pfvm_onnx.h"\n#include "pfvm_accel.h"\n' > "$tmp/user.c"
if $CC -std=c99 -E -I. "$tmp/user.c" > "$tmp/user.i" 2>"$tmp/err"; then
    if grep -q 'stbds_\|pb_istream_t\|pb_ostream_t\|pb_field_t' "$tmp/user.i"; then
        bad "the public API brings in stb_ds or nanopb:"; grep -m 5 'stbds_\|pb_[io]stream_t\|pb_field_t' "$tmp/user.i"
    else
        ok
    fi
    if grep -Eq 'pfvm__[A-Za-z0-9_]*[[:space:]]*\(' "$tmp/user.i"; then
        bad "the public API declares pfvm__ functions:"; grep -Eo 'pfvm__[A-Za-z0-9_]*[[:space:]]*\(' "$tmp/user.i" | sort -u | head
    else
        ok
    fi
else
    bad "pfvm_onnx.h + pfvm_accel.h do not preprocess"; head -n 20 "$tmp/err"
fi

# ---- the program's own stb_ds, before and after pfvm ----
cat > "$tmp/before.c" <<'C'
#include <stb/stb_ds.h>
#include "pfvm_onnx.h"
int before(void)
{
    int *a = NULL, n;
    arrput(a, 1);
    arrput(a, 2);
    n = (int)arrlen(a);
    arrfree(a);
    return n + (pfvm_dtype_size(PFVM_FLOAT) == 4);
}
C
cat > "$tmp/after.c" <<'C'
#include "pfvm_onnx.h"
#define STB_DS_IMPLEMENTATION
#include <stb/stb_ds.h>
int after(void)
{
    char **s = NULL;
    int n;
    arrput(s, (char *)pfvm_dtype_name(PFVM_INT64));
    n = (int)arrlen(s);
    arrfree(s);
    return n;
}
C
cat > "$tmp/impl_before.c" <<'C'
#include <stb/stb_ds.h>
#define PFVM_IMPLEMENTATION
#include "pfvm_onnx.h"
#include "pfvm_accel.h"
C
cat > "$tmp/main_ds.c" <<'C'
#include <stdio.h>
#include "pfvm.h"
int before(void);
int after(void);
int main(void)
{
    pfvm_status st;
    pfvm_model *m = pfvm_model_new(&st);
    int r = before() == 3 && after() == 1 && m != NULL;
    pfvm_model_free(m);
    printf("%s\n", r ? "ok" : "wrong");
    return !r;
}
C
for impl in impl impl_before; do
    if $CC -std=c99 $WARN -I. -c "$tmp/$impl.c" -o "$tmp/$impl.o" 2>"$tmp/err" &&
        $CC -std=c99 $WARN -I. -c "$tmp/before.c" -o "$tmp/before.o" 2>>"$tmp/err" &&
        $CC -std=c99 $WARN -I. -c "$tmp/after.c" -o "$tmp/after.o" 2>>"$tmp/err" &&
        $CC -std=c99 $WARN -I. "$tmp/main_ds.c" "$tmp/before.o" "$tmp/after.o" "$tmp/$impl.o" -o "$tmp/ds" \
            -lprotobuf-nanopb -lm 2>>"$tmp/err" &&
        [ "$("$tmp/ds")" = ok ]; then
        ok
    else
        bad "a program's own stb_ds with pfvm ($impl.c)"; head -n 20 "$tmp/err"
    fi
done

# ---- two private copies ----
for c in a b; do
    cat > "$tmp/copy_$c.c" <<C
#define PFVM_STATIC
#define PFVM_IMPLEMENTATION
#include "pfvm_onnx.h"
#include "pfvm_accel.h"
int copy_$c(void)
{
    pfvm_status st;
    int64_t dims[1] = {3};
    float x[3] = {-1, 2, -3};
    pfvm_model *m = pfvm_model_new(&st);
    pfvm_graph *g = m ? pfvm_graph_new(m, NULL, "g", &st) : NULL;
    pfvm_value *i = g ? pfvm_graph_value(g, "x", &st) : NULL, *o = g ? pfvm_graph_value(g, "y", &st) : NULL;
    pfvm_exec *e;
    pfvm_tensor *t;
    float r = -1;
    if (!i || !o || pfvm_model_set_opset(m, "", 17, &st) || pfvm_graph_add_input(g, i, &st) ||
        !pfvm_graph_add_node(g, "Relu", "", "relu", &i, 1, &o, 1, &st) || pfvm_graph_add_output(g, o, &st))
        return -1;
    e = pfvm_exec_new(m, NULL, &st);
    t = pfvm_tensor_view(PFVM_FLOAT, 1, dims, x, &st);
    if (e && t && !pfvm_exec_bind_one(e, t, &st) && !pfvm_exec_run(e, &st))
        r = ((const float *)pfvm_exec_output(e, 0)->data)[1];
    pfvm_tensor_free(t);
    pfvm_exec_free(e);
    pfvm_model_free(m);
    return (int)r;
}
C
done
cat > "$tmp/main2.c" <<'C'
#include <stdio.h>
int copy_a(void);
int copy_b(void);
int main(void)
{
    int r = copy_a() == 2 && copy_b() == 2;
    printf("%s\n", r ? "ok" : "wrong");
    return !r;
}
C
if $CC -std=c99 $WARN -pedantic -O0 -I. -c "$tmp/copy_a.c" -o "$tmp/copy_a.o" 2>"$tmp/err" &&
    $CC -std=c99 $WARN -pedantic -O0 -I. -c "$tmp/copy_b.c" -o "$tmp/copy_b.o" 2>>"$tmp/err" &&
    $CC -std=c99 $WARN "$tmp/main2.c" "$tmp/copy_a.o" "$tmp/copy_b.o" -o "$tmp/two" -lprotobuf-nanopb -lm 2>>"$tmp/err" &&
    [ "$("$tmp/two")" = ok ]; then
    if [ -z "$(nm -g --defined-only "$tmp/copy_a.o" | awk '{print $3}' | grep -v '^copy_a$')" ]; then
        ok
    else
        bad "a PFVM_STATIC object exports more than its own function:"; nm -g --defined-only "$tmp/copy_a.o" | head
    fi
else
    bad "two PFVM_STATIC copies in one program"; head -n 20 "$tmp/err"
fi

# ---- C++ ----
if command -v "$CXX" >/dev/null; then
    cp "$tmp/impl.c" "$tmp/impl.cpp"
    if $CXX $WARN -O0 -I. -c "$tmp/impl.cpp" -o "$tmp/impl_cpp.o" 2>"$tmp/err"; then
        ok
    else
        bad "the implementation does not compile as C++"; grep -m 20 'error\|warning' "$tmp/err"
    fi
else
    bad "$CXX not installed"
fi

# ---- interp.c and the examples use the public API only ----
# (each defines PFVM_IMPLEMENTATION; without it they must still compile)
for f in interp.c examples/*.c tests/consumer/app.c; do
    sed '/^#define PFVM_IMPLEMENTATION$/d' "$f" > "$tmp/public_only.c"
    if $CC -std=c99 $WARN -pedantic -fsyntax-only -I. "$tmp/public_only.c" 2>"$tmp/err"; then
        ok
    else
        bad "$f needs more than the public API"; grep -m 10 'error' "$tmp/err"
    fi
done

# ---- the unit tests use the public API only ----
# No test, example or interp.c names a pfvm__ or stbds_ identifier (the
# internals are tested through the public calls that use them).
for f in tests/*.c tests/*.h tests/*/*.c tests/*/*.h interp.c examples/*.c; do
    [ -f "$f" ] || continue
    if grep -Eq '(^|[^A-Za-z0-9_])(pfvm__|stbds_)[A-Za-z0-9_]' "$f"; then
        bad "$f uses internals:"
        grep -Eon '(^|[^A-Za-z0-9_])(pfvm__|stbds_)[A-Za-z0-9_]+' "$f" | head -n 5
    else
        ok
    fi
done

# ---- a program's own operator (examples/custom_op.c, built by make) ----
if [ -x "$BUILD/examples/custom_op" ]; then
    got=$("$BUILD/examples/custom_op" 2>&1)
    if [ "$got" = "my.ops.Scale(alpha=2.5): -2.5 5 -7.5 10" ]; then ok; else bad "examples/custom_op: $got"; fi
else
    bad "$BUILD/examples/custom_op not built (make all)"
fi

# ---- every configuration macro is documented in a header's top comment ----
# (header guards, PFVM__ names and the macros the code derives itself aside)
missing=
for m in $(grep -ohE '(#[[:space:]]*ifn?def|defined[[:space:]]*\(?)[[:space:]]*PFVM_[A-Z0-9_]+' src/*/*.[ch] |
    grep -oE 'PFVM_[A-Z0-9_]+' | sort -u); do
    case $m in
    PFVM__* | *_H | PFVM_DISPATCH | PFVM_DISPATCH_CLONES | PFVM_AVX512_KERNELS | PFVM_NO_STB_DS_IMPLEMENTATION) continue ;;
    esac
    if ! { sed -n '1,/\*\//p' pfvm.h; sed -n '1,/\*\//p' pfvm_onnx.h; sed -n '1,/\*\//p' pfvm_accel.h; } | grep -q "$m"; then
        missing="$missing $m"
    fi
done
if [ -z "$missing" ]; then ok; else bad "configuration macros not in the headers' top comments:$missing"; fi

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
