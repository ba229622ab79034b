/* Unit tests of the element-wise family (src/ops/elementwise.c): the
 * broadcasting engine, numeric semantics per element type, Where, Clip,
 * Cast, and the errors bad nodes get. Expected values are worked out by
 * hand or taken from the ONNX spec's examples. */
#include "base/base.h"
#include "ir/ir.h"
#include "exec/exec.h"
#include "ops/ops_common.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include "check.h"

/* ---- running one node ------------------------------------------------------------ */

typedef struct attr {
    const char *name;
    char kind; /* 'i', 'f', 's' */
    int64_t i;
    double f;
    const char *s;
} attr;

#define NO_ATTRS ((const attr *)NULL)

static pfvm_status last;

/* Runs `op` at `opset` on the inputs (NULL = omitted optional) and returns
 * a copy of output 0, or NULL with `last` holding the error. */
static pfvm_tensor *run_op(const char *op, int opset, const attr *attrs, const pfvm_tensor *const *ins, int n_in)
{
    pfvm_model *m = pfvm_model_new(&last);
    pfvm_graph *g = pfvm_graph_new(m, NULL, "g", &last);
    pfvm_value *in_v[8], *y = pfvm_graph_value(g, "y", &last);
    const pfvm_tensor *bound[8];
    pfvm_tensor *result = NULL;
    pfvm_exec *e = NULL;
    pfvm_node *n;
    int j, nb = 0;
    pfvm_model_set_opset(m, "", opset, &last);
    for (j = 0; j < n_in; j++) {
        char name[16];
        in_v[j] = NULL;
        if (!ins[j])
            continue;
        snprintf(name, sizeof name, "x%d", j);
        in_v[j] = pfvm_graph_value(g, name, &last);
        pfvm_graph_add_input(g, in_v[j], &last);
        bound[nb++] = ins[j];
    }
    n = pfvm_graph_add_node(g, op, "", "node", in_v, n_in, &y, 1, &last);
    for (; attrs && attrs->name; attrs++) {
        if (attrs->kind == 'i')
            pfvm_node_set_attr_int(n, attrs->name, attrs->i, &last);
        else if (attrs->kind == 'f')
            pfvm_node_set_attr_float(n, attrs->name, (float)attrs->f, &last);
        else
            pfvm_node_set_attr_string(n, attrs->name, attrs->s, &last);
    }
    pfvm_graph_add_output(g, y, &last);
    memset(&last, 0, sizeof last);
    e = pfvm_exec_new(m, NULL, &last);
    if (e && !pfvm_exec_bind(e, bound, nb, &last) && !pfvm_exec_run(e, &last))
        result = pfvm_tensor_clone(pfvm_exec_output(e, 0), &last);
    pfvm_exec_free(e);
    pfvm_model_free(m);
    return result;
}

static pfvm_tensor *run1(const char *op, int opset, const attr *attrs, const pfvm_tensor *a)
{
    return run_op(op, opset, attrs, &a, 1);
}

static pfvm_tensor *run2(const char *op, int opset, const attr *attrs, const pfvm_tensor *a, const pfvm_tensor *b)
{
    const pfvm_tensor *ins[2];
    ins[0] = a;
    ins[1] = b;
    return run_op(op, opset, attrs, ins, 2);
}

/* Input tensors: copies of the given values (freed by `drop`). */
static pfvm_tensor *tens(pfvm_dtype t, int rank, const int64_t *dims, const void *vals)
{
    pfvm_tensor *x = pfvm_tensor_new(t, rank, dims, NULL);
    if (x && vals)
        memcpy(x->data, vals, (size_t)pfvm_tensor_numel(x) * pfvm_dtype_size(t));
    return x;
}

static pfvm_tensor *f32(int rank, const int64_t *dims, const float *v) { return tens(PFVM_FLOAT, rank, dims, v); }

static pfvm_tensor *scalar_f32(float v) { return tens(PFVM_FLOAT, 0, NULL, &v); }

static void drop(pfvm_tensor *t) { pfvm_tensor_free(t); }

/* The spacing of floats at w (subnormal spacing below FLT_MIN). */
static double pfvm_test_ulp(float w)
{
    int e;
    if (w == 0 || fabsf(w) < FLT_MIN)
        return ldexp(1.0, -149);
    frexp(w, &e);
    return ldexp(1.0, e - 24);
}

static int has_shape(const pfvm_tensor *t, pfvm_dtype dtype, int rank, const int64_t *dims)
{
    return t && t->dtype == dtype && t->rank == rank && !memcmp(t->dims, dims, sizeof(int64_t) * (size_t)rank);
}

/* Element i of t (any numeric type) equals want, NaN matching NaN. */
static int elem_is(const pfvm_tensor *t, int64_t i, double want)
{
    double v = pfvm_tensor_get_f64(t, i);
    if (want != want)
        return v != v;
    return v == want || fabs(v - want) <= 1e-6 * fabs(want) + 1e-7;
}

static int all_are(const pfvm_tensor *t, const double *want, int n)
{
    int i;
    if (!t || pfvm_tensor_numel(t) != n)
        return 0;
    for (i = 0; i < n; i++)
        if (!elem_is(t, i, want[i])) {
            fprintf(stderr, "  element %d is %.9g, expected %.9g\n", i, pfvm_tensor_get_f64(t, i), want[i]);
            return 0;
        }
    return 1;
}

static int fails_with(const char *needle)
{
    int ok = last.code != PFVM_OK && strstr(last.msg, needle) != NULL;
    if (!ok)
        fprintf(stderr, "  status %d '%s', expected a failure with '%s'\n", (int)last.code, last.msg, needle);
    return ok;
}

/* ---- the engine ---------------------------------------------------------------- */

/* A kernel context outside an executor, for calling the engine directly. */
static pfvm_node direct_node;
static pfvm_status direct_st;

static void direct_kctx(pfvm_kctx *k)
{
    memset(k, 0, sizeof *k);
    direct_node.name = "direct";
    direct_node.op_type = "Test";
    direct_node.domain = "";
    k->node = &direct_node;
    k->st = &direct_st;
}

static int runs_seen;
static int64_t longest_run;

static void count_runs(void *user, int64_t pos, int64_t len, const int64_t *off, const int64_t *stride)
{
    (void)user, (void)pos, (void)off, (void)stride;
    runs_seen++;
    if (len > longest_run)
        longest_run = len;
}

static int runs_for(const pfvm_tensor *a, const pfvm_tensor *b, pfvm_tensor *out)
{
    pfvm_kctx k;
    const pfvm_tensor *ins[2];
    direct_kctx(&k);
    ins[0] = a;
    ins[1] = b;
    runs_seen = 0;
    longest_run = 0;
    if (pfvm_ew_apply(&k, ins, 2, out, count_runs, NULL))
        return -1;
    return runs_seen;
}

static void test_engine_runs(void)
{
    int64_t d234[3] = {2, 3, 4}, d4[1] = {4}, d231[3] = {2, 3, 1}, d5[1] = {5}, d1[1] = {1};
    pfvm_tensor *a = tens(PFVM_FLOAT, 3, d234, NULL), *b = tens(PFVM_FLOAT, 1, d4, NULL);
    pfvm_tensor *c = tens(PFVM_FLOAT, 3, d231, NULL), *s = tens(PFVM_FLOAT, 0, NULL, NULL);
    pfvm_tensor *one = tens(PFVM_FLOAT, 1, d1, NULL), *bad = tens(PFVM_FLOAT, 1, d5, NULL);
    pfvm_tensor *out = tens(PFVM_FLOAT, 3, d234, NULL);
    /* equal shapes and scalars: one run over everything */
    CHECK(runs_for(a, a, out) == 1 && longest_run == 24);
    CHECK(runs_for(a, s, out) == 1 && longest_run == 24);
    CHECK(runs_for(one, a, out) == 1 && longest_run == 24);
    /* a trailing vector: the two outer dims merge into 6 rows of 4 */
    CHECK(runs_for(a, b, out) == 6 && longest_run == 4);
    /* [2,3,1] against [2,3,4]: rows of 4 */
    CHECK(runs_for(a, c, out) == 6 && longest_run == 4);
    /* a shape that does not broadcast is an error, not a wild read */
    CHECK(runs_for(a, bad, out) == -1);
    drop(a), drop(b), drop(c), drop(s), drop(one), drop(bad), drop(out);
}

static void test_broadcast_binary_helper(void)
{
    int64_t d23[2] = {2, 3}, d3[1] = {3};
    float av[6] = {1, 2, 3, 4, 5, 6}, bv[3] = {10, 20, 30};
    double want[6] = {11, 22, 33, 14, 25, 36}, cmp[6] = {0, 0, 0, 0, 0, 0};
    pfvm_tensor *a = f32(2, d23, av), *b = f32(1, d3, bv), out;
    pfvm_tensor *outs[1];
    pfvm_kctx k;
    direct_kctx(&k);
    memset(&out, 0, sizeof out);
    outs[0] = &out;
    k.out = outs;
    k.n_out = 1;
    out.dtype = PFVM_FLOAT;
    /* no storage yet: the helper shapes and allocates the output */
    CHECK(pfvm_ew_broadcast_binary(&k, PFVM_EW_ADD, a, b, &out) == PFVM_OK);
    CHECK(has_shape(&out, PFVM_FLOAT, 2, d23) && all_are(&out, want, 6));
    pfvm_tensor_release(&out);
    memset(&out, 0, sizeof out);
    out.dtype = PFVM_BOOL;
    CHECK(pfvm_ew_broadcast_binary(&k, PFVM_EW_GREATER, a, b, &out) == PFVM_OK);
    CHECK(has_shape(&out, PFVM_BOOL, 2, d23) && all_are(&out, cmp, 6));
    pfvm_tensor_release(&out);
    CHECK(pfvm_ew_broadcast_binary(&k, (pfvm_ew_binop)99, a, b, &out) != PFVM_OK);
    drop(a), drop(b);
}

/* ---- arithmetic ---------------------------------------------------------------- */

static void test_add_broadcast(void)
{
    int64_t d23[2] = {2, 3}, d3[1] = {3}, d21[2] = {2, 1}, d13[2] = {1, 3};
    float av[6] = {1, 2, 3, 4, 5, 6}, bv[3] = {10, 20, 30}, cv[2] = {100, 200};
    double w1[6] = {11, 22, 33, 14, 25, 36}, w2[6] = {110, 120, 130, 210, 220, 230}, w3[6] = {0.5, 1.5, 2.5, 3.5, 4.5, 5.5};
    pfvm_tensor *a = f32(2, d23, av), *b = f32(1, d3, bv), *c = f32(2, d21, cv), *b13 = f32(2, d13, bv);
    pfvm_tensor *h = scalar_f32(-0.5f), *y;
    y = run2("Add", 17, NO_ATTRS, a, b);
    CHECK(has_shape(y, PFVM_FLOAT, 2, d23) && all_are(y, w1, 6));
    drop(y);
    y = run2("Add", 17, NO_ATTRS, c, b13); /* [2,1] + [1,3] -> [2,3] */
    CHECK(has_shape(y, PFVM_FLOAT, 2, d23) && all_are(y, w2, 6));
    drop(y);
    y = run2("Add", 17, NO_ATTRS, a, h);
    CHECK(all_are(y, w3, 6));
    drop(y);
    y = run2("Add", 17, NO_ATTRS, a, c); /* [2,3] + [2,1] */
    {
        double w[6] = {101, 102, 103, 204, 205, 206};
        CHECK(all_are(y, w, 6));
    }
    drop(y);
    /* incompatible shapes fail, naming the dimension */
    {
        pfvm_tensor *two = tens(PFVM_FLOAT, 1, d21, cv);
        y = run2("Add", 17, NO_ATTRS, a, two);
        CHECK(!y && fails_with("broadcast"));
        drop(two);
    }
    drop(a), drop(b), drop(c), drop(b13), drop(h);
}

/* Rows and one value per row ([2, 3, L] and [2, 3, 1], either first:
 * squeeze-excite's Mul on 7x7 and 14x14 planes) for row lengths around
 * the x86 chunks of 16: every element the plain float operation's bits,
 * -0, inf and NaN included, for Mul, Div, Sub and Greater (a bool output). */
static void test_rows_by_value(void)
{
    static const int64_t lens[] = {1, 15, 16, 17, 33, 49, 196};
    static const char *const ops[] = {"Mul", "Div", "Sub", "Greater"};
    size_t il, io, sw;
    for (il = 0; il < sizeof lens / sizeof lens[0]; il++)
        for (io = 0; io < 2 * sizeof ops / sizeof ops[0]; io++) {
            int64_t L = lens[il], da[3] = {2, 3, 0}, db[3] = {2, 3, 1}, i, n, bad = 0;
            float av[2 * 3 * 196], bv[6] = {0.75f, -3.0f, 0.0f, -0.0f, 1e30f, 7.0f};
            pfvm_tensor *a, *b, *y;
            da[2] = L;
            n = 6 * L;
            for (i = 0; i < n; i++)
                av[i] = i % 11 == 3 ? -0.0f : i % 13 == 5 ? INFINITY : i % 17 == 7 ? NAN
                                                                         : (float)((i * 37) % 101 - 50) / 7.0f;
            a = f32(3, da, av);
            b = f32(3, db, bv);
            sw = io % 2; /* 1: the value first */
            y = sw ? run2(ops[io / 2], 13, NO_ATTRS, b, a) : run2(ops[io / 2], 13, NO_ATTRS, a, b);
            CHECK_MSG(y && pfvm_tensor_numel(y) == n, "%s rows of %lld: no output", ops[io / 2], (long long)L);
            for (i = 0; y && i < n; i++) {
                volatile float x0 = sw ? bv[i / L] : av[i], x1 = sw ? av[i] : bv[i / L], w;
                if (io / 2 == 3) {
                    bad += ((const unsigned char *)y->data)[i] != (x0 > x1);
                    continue;
                }
                w = io / 2 == 0 ? x0 * x1 : io / 2 == 1 ? x0 / x1 : x0 - x1;
                bad += memcmp((const void *)&w, (const float *)y->data + i, sizeof(float)) != 0 &&
                       !(w != w && ((const float *)y->data)[i] != ((const float *)y->data)[i]);
            }
            CHECK_MSG(bad == 0, "%s rows of %lld and one value (first: %d): %lld elements differ", ops[io / 2],
                      (long long)L, (int)sw, (long long)bad);
            drop(a), drop(b), drop(y);
        }
}

static void test_legacy_broadcast(void)
{
    /* opset 6: B lines up with A at `axis` */
    int64_t d23[2] = {2, 3}, d2[1] = {2};
    float av[6] = {1, 2, 3, 4, 5, 6}, bv[2] = {10, 20};
    double w[6] = {11, 12, 13, 24, 25, 26};
    attr at[] = {{"broadcast", 'i', 1, 0, NULL}, {"axis", 'i', 0, 0, NULL}, {NULL, 0, 0, 0, NULL}};
    pfvm_tensor *a = f32(2, d23, av), *b = f32(1, d2, bv), *y = run2("Add", 6, at, a, b);
    CHECK(has_shape(y, PFVM_FLOAT, 2, d23) && all_are(y, w, 6));
    drop(y), drop(a), drop(b);
}

static void test_integer_arith(void)
{
    int64_t d4[1] = {4}, d1[1] = {1};
    int32_t a[4] = {-7, 7, -7, 7}, b[4] = {2, 2, -2, -2};
    int64_t big[1] = {INT64_MIN}, m1[1] = {-1};
    uint8_t ua[4] = {250, 3, 0, 255}, ub[4] = {10, 5, 1, 1};
    pfvm_tensor *ta = tens(PFVM_INT32, 1, d4, a), *tb = tens(PFVM_INT32, 1, d4, b), *y;
    pfvm_tensor *tbig = tens(PFVM_INT64, 1, d1, big), *tm1 = tens(PFVM_INT64, 1, d1, m1);
    pfvm_tensor *tua = tens(PFVM_UINT8, 1, d4, ua), *tub = tens(PFVM_UINT8, 1, d4, ub);
    attr fmod1[] = {{"fmod", 'i', 1, 0, NULL}, {NULL, 0, 0, 0, NULL}};
    {
        double w[4] = {-3, 3, 3, -3}; /* division truncates */
        y = run2("Div", 14, NO_ATTRS, ta, tb);
        CHECK(y && y->dtype == PFVM_INT32 && all_are(y, w, 4));
        drop(y);
    }
    {
        double w[4] = {1, 1, -1, -1}; /* Python's %: the divisor's sign */
        y = run2("Mod", 13, NO_ATTRS, ta, tb);
        CHECK(all_are(y, w, 4));
        drop(y);
    }
    {
        double w[4] = {-1, 1, -1, 1}; /* C's fmod: the dividend's sign */
        y = run2("Mod", 13, fmod1, ta, tb);
        CHECK(all_are(y, w, 4));
        drop(y);
    }
    {
        double w[4] = {4, 8, 1, 0}; /* uint8 wraps */
        y = run2("Add", 14, NO_ATTRS, tua, tub);
        CHECK(y && y->dtype == PFVM_UINT8 && all_are(y, w, 4));
        drop(y);
    }
    /* INT64_MIN / -1 and |INT64_MIN| wrap instead of trapping */
    y = run2("Div", 14, NO_ATTRS, tbig, tm1);
    CHECK(y && ((int64_t *)y->data)[0] == INT64_MIN);
    drop(y);
    y = run1("Abs", 13, NO_ATTRS, tbig);
    CHECK(y && ((int64_t *)y->data)[0] == INT64_MIN);
    drop(y);
    y = run1("Neg", 13, NO_ATTRS, tbig);
    CHECK(y && ((int64_t *)y->data)[0] == INT64_MIN);
    drop(y);
    /* division by zero is defined as 0 rather than a trap */
    {
        int32_t z[4] = {0, 0, 0, 0};
        pfvm_tensor *tz = tens(PFVM_INT32, 1, d4, z);
        double w[4] = {0, 0, 0, 0};
        y = run2("Div", 14, NO_ATTRS, ta, tz);
        CHECK(all_are(y, w, 4));
        drop(y);
        y = run2("Mod", 13, NO_ATTRS, ta, tz);
        CHECK(all_are(y, w, 4));
        drop(y), drop(tz);
    }
    drop(ta), drop(tb), drop(tbig), drop(tm1), drop(tua), drop(tub);
}

static void test_unsigned_64(void)
{
    int64_t d2[1] = {2};
    uint64_t a[2] = {UINT64_MAX, 5}, b[2] = {1, UINT64_MAX};
    pfvm_tensor *ta = tens(PFVM_UINT64, 1, d2, a), *tb = tens(PFVM_UINT64, 1, d2, b), *y;
    double g[2] = {1, 0};
    y = run2("Greater", 13, NO_ATTRS, ta, tb);
    CHECK(y && y->dtype == PFVM_BOOL && all_are(y, g, 2));
    drop(y);
    y = run2("Max", 13, NO_ATTRS, ta, tb);
    CHECK(y && ((uint64_t *)y->data)[0] == UINT64_MAX && ((uint64_t *)y->data)[1] == UINT64_MAX);
    drop(y);
    y = run1("Abs", 13, NO_ATTRS, ta);
    CHECK(y && ((uint64_t *)y->data)[0] == UINT64_MAX);
    drop(y);
    drop(ta), drop(tb);
}

static void test_pow_types(void)
{
    int64_t d3[1] = {3};
    int32_t ib[3] = {2, 3, -2}, ie[3] = {10, 3, 3};
    float fe[3] = {0.5f, 2.0f, 1.0f}, fb[3] = {4, 2, 0.5f};
    pfvm_tensor *tib = tens(PFVM_INT32, 1, d3, ib), *tie = tens(PFVM_INT32, 1, d3, ie);
    pfvm_tensor *tfe = f32(1, d3, fe), *tfb = f32(1, d3, fb), *y;
    {
        double w[3] = {1024, 27, -8};
        y = run2("Pow", 15, NO_ATTRS, tib, tie);
        CHECK(y && y->dtype == PFVM_INT32 && all_are(y, w, 3));
        drop(y);
    }
    {
        double w[3] = {1, 9, -2}; /* int base, float exponent: truncated to the base's type */
        y = run2("Pow", 15, NO_ATTRS, tib, tfe);
        CHECK(y && y->dtype == PFVM_INT32 && all_are(y, w, 3));
        drop(y);
    }
    {
        double w[3] = {1048576, 8, 0.125};
        y = run2("Pow", 15, NO_ATTRS, tfb, tie);
        CHECK(y && y->dtype == PFVM_FLOAT && all_are(y, w, 3));
        drop(y);
    }
    drop(tib), drop(tie), drop(tfe), drop(tfb);
}

static void test_bitshift(void)
{
    int64_t d3[1] = {3};
    uint8_t x[3] = {16, 4, 1}, s[3] = {1, 2, 9};
    attr right[] = {{"direction", 's', 0, 0, "RIGHT"}, {NULL, 0, 0, 0, NULL}};
    attr left[] = {{"direction", 's', 0, 0, "LEFT"}, {NULL, 0, 0, 0, NULL}};
    attr bad[] = {{"direction", 's', 0, 0, "UP"}, {NULL, 0, 0, 0, NULL}};
    pfvm_tensor *tx = tens(PFVM_UINT8, 1, d3, x), *ts = tens(PFVM_UINT8, 1, d3, s), *y;
    double wr[3] = {8, 1, 0}, wl[3] = {32, 16, 0};
    y = run2("BitShift", 11, right, tx, ts);
    CHECK(all_are(y, wr, 3));
    drop(y);
    y = run2("BitShift", 11, left, tx, ts);
    CHECK(all_are(y, wl, 3));
    drop(y);
    y = run2("BitShift", 11, bad, tx, ts);
    CHECK(!y && fails_with("direction"));
    drop(tx), drop(ts);
}

/* ---- unary --------------------------------------------------------------------- */

static void test_unary_float(void)
{
    int64_t d6[1] = {6};
    float v[6] = {0.5f, 1.5f, 2.5f, -0.5f, -2.5f, 0.49999997f};
    double round_w[6] = {0, 2, 2, -0.0, -2, 0};
    pfvm_tensor *x = f32(1, d6, v), *y;
    y = run1("Round", 11, NO_ATTRS, x); /* half to even */
    CHECK(all_are(y, round_w, 6));
    drop(y);
    {
        float s[4] = {-3, 0, 2, NAN};
        int64_t d[1] = {4};
        pfvm_tensor *t = f32(1, d, s);
        double w[4] = {-1, 0, 1, NAN};
        y = run1("Sign", 13, NO_ATTRS, t);
        CHECK(all_are(y, w, 4));
        drop(y), drop(t);
    }
    {
        float s[4] = {-4, -1, 1, 4};
        int64_t d[1] = {4};
        pfvm_tensor *t = f32(1, d, s);
        double hs[4] = {0, -1.0 / 3, 2.0 / 3, 4}, sh[4] = {-3.5, 0, 0, 3.5};
        attr shr[] = {{"lambd", 'f', 0, 1.5, NULL}, {"bias", 'f', 0, 0.5, NULL}, {NULL, 0, 0, 0, NULL}};
        y = run1("HardSwish", 14, NO_ATTRS, t);
        CHECK(all_are(y, hs, 4));
        drop(y);
        y = run1("Shrink", 9, shr, t);
        CHECK(all_are(y, sh, 4));
        drop(y), drop(t);
    }
    {
        float s[3] = {-1, 0, 1};
        int64_t d[1] = {3};
        pfvm_tensor *t = f32(1, d, s);
        double elu[3] = {2.0 * (exp(-1.0) - 1), 0, 1}, lr[3] = {-0.1, 0, 1};
        attr a2[] = {{"alpha", 'f', 0, 2.0, NULL}, {NULL, 0, 0, 0, NULL}};
        attr a01[] = {{"alpha", 'f', 0, 0.1, NULL}, {NULL, 0, 0, 0, NULL}};
        y = run1("Elu", 6, a2, t);
        CHECK(all_are(y, elu, 3));
        drop(y);
        y = run1("LeakyRelu", 6, a01, t);
        CHECK(all_are(y, lr, 3));
        drop(y), drop(t);
    }
    drop(x);
}

/* float32 Sigmoid over a long tensor runs the block kernel (on AVX-512
 * CPUs the hand-written one); runs shorter than 32 elements evaluate the
 * scalar function. Both must give the same bits (NaN by class) for every
 * value, specials included, and stay within 2.5 ulp of the double result
 * (tools/ulp_check.c measures 2.40 over all floats). */
static void test_sigmoid_kernel(void)
{
    enum { N = 16384, CHUNK = 16 };
    static const float special[] = {0.0f, -0.0f, 1e-30f, -1e-30f, 1e-45f, -1e-45f, 0.5f, -0.5f, 4.1572938f,
                                    -4.1572938f, 87.33f, -87.33f, 88.72f, -88.72f, 103.97f, -103.97f, 104.0f,
                                    -104.0f, 104.01f, -104.01f, 200.0f, -200.0f, INFINITY, -INFINITY, NAN, -NAN};
    static float v[N];
    int64_t dn[1] = {N}, dc[1] = {CHUNK};
    int i, c, same = 1, close = 1, ran = 1;
    pfvm_tensor *x, *y;
    for (i = 0; i < N; i++) {
        uint32_t u = (uint32_t)i * 262147u; /* every exponent, both signs */
        memcpy(&v[i], &u, 4);
    }
    memcpy(v, special, sizeof special);
    x = f32(1, dn, v);
    y = run1("Sigmoid", 13, NO_ATTRS, x);
    CHECK(y != NULL);
    for (c = 0; y && c < N; c += CHUNK) {
        pfvm_tensor *xc = f32(1, dc, v + c), *yc = run1("Sigmoid", 13, NO_ATTRS, xc);
        for (i = 0; yc && i < CHUNK; i++) {
            float a = ((const float *)y->data)[c + i], b = ((const float *)yc->data)[i];
            double want = v[c + i] >= 0 ? 1.0 / (1.0 + exp(-(double)v[c + i]))
                                       : exp((double)v[c + i]) / (1.0 + exp((double)v[c + i]));
            if ((a != a) != (b != b) || (a == a && memcmp(&a, &b, 4) != 0)) {
                if (same)
                    CHECK_MSG(0, "sigmoid(%a): block kernel %a, scalar %a", (double)v[c + i], (double)a, (double)b);
                same = 0;
            }
            if (a == a && want == want && fabs(a - want) > 2.5 * pfvm_test_ulp((float)want)) {
                if (close)
                    CHECK_MSG(0, "sigmoid(%a) = %a, want %a", (double)v[c + i], (double)a, want);
                close = 0;
            }
        }
        ran &= yc != NULL;
        drop(xc), drop(yc);
    }
    CHECK(ran && same && close);
    drop(x), drop(y);
}

static void test_unary_other_types(void)
{
    int64_t d3[1] = {3};
    uint16_t h[3], bf[3];
    double w[3] = {0, 0.5, 2};
    float src[3] = {-1, 0.5f, 2};
    pfvm_tensor *th, *tbf, *y;
    int i;
    for (i = 0; i < 3; i++) {
        h[i] = pfvm_float_to_half(src[i]);
        bf[i] = pfvm_float_to_bf16(src[i]);
    }
    th = tens(PFVM_FLOAT16, 1, d3, h);
    tbf = tens(PFVM_BFLOAT16, 1, d3, bf);
    y = run1("Relu", 14, NO_ATTRS, th);
    CHECK(y && y->dtype == PFVM_FLOAT16 && all_are(y, w, 3));
    drop(y);
    y = run1("Relu", 14, NO_ATTRS, tbf);
    CHECK(y && y->dtype == PFVM_BFLOAT16 && all_are(y, w, 3));
    drop(y);
    {
        double d[3] = {-1.5, 0.25, 1e300};
        pfvm_tensor *td = tens(PFVM_DOUBLE, 1, d3, d);
        double wd[3] = {1.5, 0.25, 1e300};
        y = run1("Abs", 13, NO_ATTRS, td);
        CHECK(y && y->dtype == PFVM_DOUBLE && all_are(y, wd, 3));
        drop(y), drop(td);
    }
    {
        int8_t i8[3] = {-5, 0, 7};
        pfvm_tensor *t8 = tens(PFVM_INT8, 1, d3, i8);
        double ws[3] = {-1, 0, 1}, wr[3] = {0, 0, 7};
        y = run1("Sign", 13, NO_ATTRS, t8);
        CHECK(y && y->dtype == PFVM_INT8 && all_are(y, ws, 3));
        drop(y);
        y = run1("Relu", 14, NO_ATTRS, t8);
        CHECK(all_are(y, wr, 3));
        drop(y), drop(t8);
    }
    drop(th), drop(tbf);
}

static void test_predicates(void)
{
    int64_t d4[1] = {4};
    float v[4] = {INFINITY, -INFINITY, NAN, 1};
    attr pos_only[] = {{"detect_negative", 'i', 0, 0, NULL}, {NULL, 0, 0, 0, NULL}};
    double both[4] = {1, 1, 0, 0}, pos[4] = {1, 0, 0, 0}, nan[4] = {0, 0, 1, 0};
    pfvm_tensor *x = f32(1, d4, v), *y;
    y = run1("IsInf", 10, NO_ATTRS, x);
    CHECK(y && y->dtype == PFVM_BOOL && all_are(y, both, 4));
    drop(y);
    y = run1("IsInf", 10, pos_only, x);
    CHECK(all_are(y, pos, 4));
    drop(y);
    y = run1("IsNaN", 13, NO_ATTRS, x);
    CHECK(y && y->dtype == PFVM_BOOL && all_are(y, nan, 4));
    drop(y);
    drop(x);
}

/* ---- variadic ------------------------------------------------------------------ */

static void test_variadic(void)
{
    int64_t d3[1] = {3}, d21[2] = {2, 1}, d23[2] = {2, 3};
    float a[3] = {1, 5, NAN}, b[2] = {3, -1}, c = 2;
    pfvm_tensor *ta = f32(1, d3, a), *tb = f32(2, d21, b), *tc = scalar_f32(c), *y;
    const pfvm_tensor *ins[3];
    ins[0] = ta;
    ins[1] = tb;
    ins[2] = tc;
    {
        double w[6] = {3, 5, NAN, 2, 5, NAN}; /* NaN propagates */
        y = run_op("Max", 13, NO_ATTRS, ins, 3);
        CHECK(has_shape(y, PFVM_FLOAT, 2, d23) && all_are(y, w, 6));
        drop(y);
    }
    {
        double w[6] = {1, 2, NAN, -1, -1, NAN};
        y = run_op("Min", 13, NO_ATTRS, ins, 3);
        CHECK(all_are(y, w, 6));
        drop(y);
    }
    {
        double w[6] = {6, 10, NAN, 2, 6, NAN};
        y = run_op("Sum", 13, NO_ATTRS, ins, 3);
        CHECK(all_are(y, w, 6));
        drop(y);
    }
    {
        double w[6] = {2, 10.0 / 3, NAN, 2.0 / 3, 2, NAN};
        y = run_op("Mean", 13, NO_ATTRS, ins, 3);
        CHECK(all_are(y, w, 6));
        drop(y);
    }
    {
        double w[3] = {1, 5, NAN};
        y = run_op("Sum", 13, NO_ATTRS, ins, 1);
        CHECK(all_are(y, w, 3));
        drop(y);
    }
    {
        int16_t i1[3] = {-3, 9, 4}, i2[3] = {2, -8, 4};
        pfvm_tensor *t1 = tens(PFVM_INT16, 1, d3, i1), *t2 = tens(PFVM_INT16, 1, d3, i2);
        double w[3] = {2, 9, 4};
        y = run2("Max", 13, NO_ATTRS, t1, t2);
        CHECK(y && y->dtype == PFVM_INT16 && all_are(y, w, 3));
        drop(y), drop(t1), drop(t2);
    }
    drop(ta), drop(tb), drop(tc);
}

/* ---- comparisons and logic ------------------------------------------------------------ */

static void test_compare_logic(void)
{
    int64_t d4[1] = {4};
    float a[4] = {1, 2, 3, NAN}, b = 2;
    uint8_t p[4] = {1, 1, 0, 0}, q[4] = {1, 0, 1, 0};
    pfvm_tensor *ta = f32(1, d4, a), *tb = scalar_f32(b), *tp = tens(PFVM_BOOL, 1, d4, p), *tq = tens(PFVM_BOOL, 1, d4, q);
    pfvm_tensor *y;
    struct {
        const char *op;
        double w[4];
    } cmp[] = {{"Equal", {0, 1, 0, 0}},   {"Greater", {0, 0, 1, 0}},        {"Less", {1, 0, 0, 0}},
               {"LessOrEqual", {1, 1, 0, 0}}, {"GreaterOrEqual", {0, 1, 1, 0}}};
    struct {
        const char *op;
        double w[4];
    } logic[] = {{"And", {1, 0, 0, 0}}, {"Or", {1, 1, 1, 0}}, {"Xor", {0, 1, 1, 0}}};
    size_t i;
    for (i = 0; i < sizeof cmp / sizeof cmp[0]; i++) {
        y = run2(cmp[i].op, 16, NO_ATTRS, ta, tb);
        CHECK_MSG(y && y->dtype == PFVM_BOOL && all_are(y, cmp[i].w, 4), "%s", cmp[i].op);
        drop(y);
    }
    for (i = 0; i < sizeof logic / sizeof logic[0]; i++) {
        y = run2(logic[i].op, 7, NO_ATTRS, tp, tq);
        CHECK_MSG(y && y->dtype == PFVM_BOOL && all_are(y, logic[i].w, 4), "%s", logic[i].op);
        drop(y);
    }
    {
        double w[4] = {0, 0, 1, 1};
        y = run1("Not", 1, NO_ATTRS, tp);
        CHECK(all_are(y, w, 4));
        drop(y);
    }
    /* logic on floats is refused, not guessed */
    y = run2("And", 7, NO_ATTRS, ta, ta);
    CHECK(!y && last.code != PFVM_OK);
    drop(ta), drop(tb), drop(tp), drop(tq);
}

static void test_prelu(void)
{
    int64_t d23[2] = {2, 3}, d3[1] = {3}, d2[1] = {2};
    float x[6] = {-1, 2, -3, -4, 5, -6}, s3[3] = {0.1f, 0.2f, 0.3f}, s2[2] = {0.5f, 2};
    pfvm_tensor *tx = f32(2, d23, x), *ts3 = f32(1, d3, s3), *ts2 = f32(1, d2, s2), *y;
    double w[6] = {-0.1, 2, -0.9, -0.4, 5, -1.8};
    y = run2("PRelu", 16, NO_ATTRS, tx, ts3);
    CHECK(has_shape(y, PFVM_FLOAT, 2, d23) && all_are(y, w, 6));
    drop(y);
    /* opset 6: one slope per channel (dim 1) */
    {
        int64_t d32[2] = {3, 2};
        pfvm_tensor *tx2 = f32(2, d32, x);
        double w2[6] = {-0.5, 2, -1.5, -8, 5, -12};
        y = run2("PRelu", 6, NO_ATTRS, tx2, ts2);
        CHECK(all_are(y, w2, 6));
        drop(y), drop(tx2);
    }
    drop(tx), drop(ts3), drop(ts2);
}

/* ---- Where, Clip ----------------------------------------------------------------- */

static void test_where(void)
{
    int64_t d2[1] = {2}, d22[2] = {2, 2}, d21[2] = {2, 1};
    uint8_t c[2] = {1, 0};
    int64_t xv[4] = {1, 2, 3, 4}, yv[2] = {-1, -2};
    pfvm_tensor *tc = tens(PFVM_BOOL, 1, d2, c), *tx = tens(PFVM_INT64, 2, d22, xv), *ty = tens(PFVM_INT64, 2, d21, yv);
    const pfvm_tensor *ins[3];
    pfvm_tensor *y;
    double w[4] = {1, -1, 3, -2};
    ins[0] = tc;
    ins[1] = tx;
    ins[2] = ty;
    y = run_op("Where", 16, NO_ATTRS, ins, 3);
    CHECK(has_shape(y, PFVM_INT64, 2, d22) && all_are(y, w, 4));
    drop(y);
    {
        /* strings */
        pfvm_tensor *sx = pfvm_tensor_new(PFVM_STRING, 1, d2, NULL), *sy = pfvm_tensor_new(PFVM_STRING, 0, NULL, NULL);
        pfvm_tensor_set_string(sx, 0, "a", NULL);
        pfvm_tensor_set_string(sx, 1, "b", NULL);
        pfvm_tensor_set_string(sy, 0, "z", NULL);
        sx->owns_strings = sy->owns_strings = 1;
        ins[1] = sx;
        ins[2] = sy;
        y = run_op("Where", 16, NO_ATTRS, ins, 3);
        CHECK(y && y->dtype == PFVM_STRING && !strcmp(((char **)y->data)[0], "a") && !strcmp(((char **)y->data)[1], "z"));
        drop(y), drop(sx), drop(sy);
    }
    /* the condition must be bool, X and Y of one type */
    ins[0] = tx;
    ins[1] = tx;
    ins[2] = ty;
    y = run_op("Where", 16, NO_ATTRS, ins, 3);
    CHECK(!y && fails_with("bool"));
    {
        float f = 1;
        pfvm_tensor *tf = scalar_f32(f);
        ins[0] = tc;
        ins[2] = tf;
        y = run_op("Where", 16, NO_ATTRS, ins, 3);
        CHECK(!y && fails_with("Y is"));
        drop(tf);
    }
    drop(tc), drop(tx), drop(ty);
}

static void test_clip(void)
{
    int64_t d5[1] = {5}, d2[1] = {2};
    float x[5] = {-6, -1, 0, 1, 6}, lo = -5, hi = 5, two[2] = {1, 2};
    int8_t xi[5] = {-128, -1, 0, 1, 127}, lo8 = 0;
    pfvm_tensor *tx = f32(1, d5, x), *tlo = scalar_f32(lo), *thi = scalar_f32(hi), *y;
    pfvm_tensor *txi = tens(PFVM_INT8, 1, d5, xi), *tlo8 = tens(PFVM_INT8, 0, NULL, &lo8);
    const pfvm_tensor *ins[3];
    attr at6[] = {{"min", 'f', 0, -1, NULL}, {"max", 'f', 0, 0.5, NULL}, {NULL, 0, 0, 0, NULL}};
    {
        double w[5] = {-5, -1, 0, 1, 5};
        ins[0] = tx;
        ins[1] = tlo;
        ins[2] = thi;
        y = run_op("Clip", 13, NO_ATTRS, ins, 3);
        CHECK(all_are(y, w, 5));
        drop(y);
    }
    {
        double w[5] = {-6, -1, 0, 1, 5}; /* max only */
        ins[1] = NULL;
        y = run_op("Clip", 13, NO_ATTRS, ins, 3);
        CHECK(all_are(y, w, 5));
        drop(y);
    }
    {
        double w[5] = {-5, -5, -5, -5, -5}; /* min > max gives max, as numpy */
        ins[1] = thi;
        ins[2] = tlo;
        y = run_op("Clip", 13, NO_ATTRS, ins, 3);
        CHECK(all_are(y, w, 5));
        drop(y);
    }
    {
        double w[5] = {-1, -1, 0, 0.5, 0.5}; /* opset 6: attributes */
        y = run1("Clip", 6, at6, tx);
        CHECK(all_are(y, w, 5));
        drop(y);
    }
    {
        double w[5] = {0, 0, 0, 1, 127};
        ins[0] = txi;
        ins[1] = tlo8;
        y = run_op("Clip", 13, NO_ATTRS, ins, 2);
        CHECK(y && y->dtype == PFVM_INT8 && all_are(y, w, 5));
        drop(y);
    }
    {
        pfvm_tensor *t2 = f32(1, d2, two);
        ins[0] = tx;
        ins[1] = t2;
        y = run_op("Clip", 13, NO_ATTRS, ins, 2);
        CHECK(!y && fails_with("scalar"));
        drop(t2);
    }
    drop(tx), drop(tlo), drop(thi), drop(txi), drop(tlo8);
}

/* ---- Cast ---------------------------------------------------------------------------- */

static pfvm_tensor *cast_to(const pfvm_tensor *x, pfvm_dtype to)
{
    attr at[] = {{"to", 'i', 0, 0, NULL}, {NULL, 0, 0, 0, NULL}};
    at[0].i = to;
    return run1("Cast", 13, at, x);
}

static int strings_are(const pfvm_tensor *t, const char *const *want, int n)
{
    int i;
    if (!t || t->dtype != PFVM_STRING || pfvm_tensor_numel(t) != n)
        return 0;
    for (i = 0; i < n; i++) {
        const char *s = ((char *const *)t->data)[i];
        if (!s || strcmp(s, want[i])) {
            fprintf(stderr, "  string %d is '%s', expected '%s'\n", i, s ? s : "(null)", want[i]);
            return 0;
        }
    }
    return 1;
}

static void test_cast_numeric(void)
{
    int64_t d5[1] = {5}, d2[1] = {2};
    float x[5] = {-2.7f, -0.5f, 0, 2.7f, NAN};
    uint64_t u[2] = {UINT64_MAX, 3};
    pfvm_tensor *tx = f32(1, d5, x), *tu = tens(PFVM_UINT64, 1, d2, u), *y;
    {
        double w[5] = {-2, 0, 0, 2, 0}; /* truncation; NaN is 0 */
        y = cast_to(tx, PFVM_INT32);
        CHECK(y && y->dtype == PFVM_INT32 && all_are(y, w, 5));
        drop(y);
    }
    {
        double w[5] = {1, 1, 0, 1, 1};
        y = cast_to(tx, PFVM_BOOL);
        CHECK(y && y->dtype == PFVM_BOOL && all_are(y, w, 5));
        drop(y);
    }
    {
        /* through float16 and back: within half precision */
        pfvm_tensor *h = cast_to(tx, PFVM_FLOAT16);
        int i, close = 1;
        CHECK(h && h->dtype == PFVM_FLOAT16);
        y = h ? cast_to(h, PFVM_DOUBLE) : NULL;
        for (i = 0; y && i < 4; i++)
            close &= fabs(((double *)y->data)[i] - x[i]) <= 1e-3 * fabs(x[i]);
        CHECK(y && y->dtype == PFVM_DOUBLE && close && isnan(((double *)y->data)[4]));
        drop(y), drop(h);
    }
    y = cast_to(tu, PFVM_DOUBLE);
    CHECK(y && ((double *)y->data)[0] == 18446744073709551615.0 && ((double *)y->data)[1] == 3);
    drop(y);
    y = cast_to(tu, PFVM_UINT8);
    CHECK(y && ((uint8_t *)y->data)[0] == 255 && ((uint8_t *)y->data)[1] == 3);
    drop(y);
    {
        double big = 1e19;
        pfvm_tensor *tb = tens(PFVM_DOUBLE, 0, NULL, &big);
        y = cast_to(tb, PFVM_UINT64);
        CHECK(y && ((uint64_t *)y->data)[0] == 10000000000000000000ull);
        drop(y), drop(tb);
    }
    /* an unknown 'to' is refused when the node is loaded */
    y = cast_to(tx, (pfvm_dtype)99);
    CHECK(!y && fails_with("to"));
    drop(tx), drop(tu);
}

static void test_cast_strings(void)
{
    int64_t d8[1] = {8}, d6[1] = {6}, d3[1] = {3};
    float x[8] = {0.5f, 1.0f, 1e-5f, 123456789.0f, -0.1f, INFINITY, NAN, 0.47892547f};
    const char *want[8] = {"0.5", "1.0", "1e-05", "123456790.0", "-0.1", "INF", "NaN", "0.47892547"};
    const char *texts[6] = {"1e3", "-INF", "nan", "+inf", "0.47892547", "  2.5"};
    pfvm_tensor *tx = f32(1, d8, x), *ts, *y;
    int i;
    y = cast_to(tx, PFVM_STRING);
    CHECK(strings_are(y, want, 8));
    drop(y);
    ts = pfvm_tensor_new(PFVM_STRING, 1, d6, NULL);
    for (i = 0; i < 6; i++)
        pfvm_tensor_set_string(ts, i, texts[i], NULL);
    ts->owns_strings = 1;
    {
        double w[6] = {1000, -INFINITY, NAN, INFINITY, 0.47892547f, 2.5};
        y = cast_to(ts, PFVM_FLOAT);
        CHECK(y && y->dtype == PFVM_FLOAT && all_are(y, w, 6));
        drop(y);
    }
    {
        int64_t iv[3] = {-42, 0, INT64_MAX};
        const char *iw[3] = {"-42", "0", "9223372036854775807"};
        pfvm_tensor *ti = tens(PFVM_INT64, 1, d3, iv), *back;
        y = cast_to(ti, PFVM_STRING);
        CHECK(strings_are(y, iw, 3));
        back = y ? cast_to(y, PFVM_INT64) : NULL;
        CHECK(back && ((int64_t *)back->data)[0] == -42 && ((int64_t *)back->data)[2] == INT64_MAX);
        drop(back), drop(y), drop(ti);
    }
    {
        double dv[3] = {0.1, 1e16, 2.5e-7};
        const char *dw[3] = {"0.1", "1e+16", "2.5e-07"};
        pfvm_tensor *td = tens(PFVM_DOUBLE, 1, d3, dv);
        y = cast_to(td, PFVM_STRING);
        CHECK(strings_are(y, dw, 3));
        drop(y), drop(td);
    }
    drop(tx), drop(ts);
}

static void test_castlike(void)
{
    int64_t d2[1] = {2};
    float x[2] = {1.9f, -1.9f};
    int16_t like = 0;
    pfvm_tensor *tx = f32(1, d2, x), *tl = tens(PFVM_INT16, 0, NULL, &like), *y;
    double w[2] = {1, -1};
    y = run2("CastLike", 15, NO_ATTRS, tx, tl);
    CHECK(y && y->dtype == PFVM_INT16 && all_are(y, w, 2));
    drop(y), drop(tx), drop(tl);
}

int main(void)
{
    test_engine_runs();
    test_broadcast_binary_helper();
    test_add_broadcast();
    test_rows_by_value();
    test_legacy_broadcast();
    test_integer_arith();
    test_unsigned_64();
    test_pow_types();
    test_bitshift();
    test_unary_float();
    test_sigmoid_kernel();
    test_unary_other_types();
    test_predicates();
    test_variadic();
    test_compare_logic();
    test_prelu();
    test_where();
    test_clip();
    test_cast_numeric();
    test_cast_strings();
    test_castlike();
    return CHECK_END();
}
