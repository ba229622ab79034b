/* accel lowerings one operator at a time: a one-node graph per case (the
 * operator, its attributes, float32 weights and an optional int64 shape
 * input), emitted and simulated on tiny and mncore2, gives the
 * interpreter's output (rtol 1e-4, atol 1e-6). Cases cover the attributes
 * the lowerings handle (pads, strides, dilations, groups, auto_pad,
 * ceil_mode, count_include_pad) and a Conv big enough to be banded on
 * tiny; unsupported cases get one error naming the node. Run from the
 * repository root. */
#include "accel/emit.h"
#include "accel/sim.h"
#include "exec/exec.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

typedef struct op_case {
    const char *op;
    int opset;
    int rank;
    int64_t dims[5];
    int nw;              /* float initializers, inputs 1..nw */
    int wrank[4];
    int64_t wdims[4][4];
    int nshape;          /* > 0: an int64 initializer input after the weights */
    int64_t shape[4];
    const char *attrs;   /* "name=v;name=a,b;name=1.5;name=TEXT"; "name=a," forces a list */
} op_case;

static const pfvm_tensor *find_weight(void *user, const char *name)
{
    const pfvm_value *v = pfvm_graph_find(((pfvm_model *)user)->graph, name);
    return v ? v->init : NULL;
}

/* Deterministic values in [-1, 1) (BatchNormalization's variance: (0.5, 1.5)). */
static float value_at(int64_t i, int stream, int positive)
{
    uint32_t h = (uint32_t)(i * 2654435761u) ^ (uint32_t)(stream * 40503u + 17u);
    float v;
    h ^= h >> 13;
    h *= 0x5bd1e995u;
    h ^= h >> 15;
    v = (float)(h % 20000u) / 10000.0f - 1.0f;
    return positive ? 1.0f + 0.5f * v : v;
}

static void set_attrs(pfvm_node *n, const char *spec, pfvm_status *st)
{
    char buf[256], *item, *next;
    if (!spec)
        return;
    snprintf(buf, sizeof buf, "%s", spec);
    for (item = buf; item; item = next) {
        char *eq = strchr(item, '='), *v;
        if ((next = strchr(item, ';')) != NULL)
            *next++ = 0;
        *eq = 0;
        v = eq + 1;
        if (strchr(v, ',')) {
            int64_t ints[8];
            int k = 0;
            char *p = v;
            while (*p && k < 8) {
                ints[k++] = strtoll(p, &p, 10);
                if (*p == ',')
                    p++;
            }
            pfvm_node_set_attr_ints(n, item, ints, k, st);
        } else if (v[0] >= 'A' && v[0] <= 'Z')
            pfvm_node_set_attr_string(n, item, v, st);
        else if (strchr(v, '.'))
            pfvm_node_set_attr_float(n, item, (float)atof(v), st);
        else
            pfvm_node_set_attr_int(n, item, atoll(v), st);
    }
}

static pfvm_model *build(const op_case *c, pfvm_status *st)
{
    pfvm_model *m = pfvm_model_new(st);
    pfvm_graph *g = pfvm_graph_new(m, NULL, "g", st);
    pfvm_value *ins[6], *y;
    const pfvm_sym *sx[5];
    int i, n = 0, w;
    pfvm_model_set_opset(m, "", c->opset, st);
    ins[n] = pfvm_graph_value(g, "x", st);
    for (i = 0; i < c->rank; i++)
        sx[i] = pfvm_sym_const(m->syms, c->dims[i]);
    pfvm_value_set_tensor_type(ins[n], PFVM_FLOAT, c->rank, sx, st);
    pfvm_graph_add_input(g, ins[n++], st);
    for (w = 0; w < c->nw; w++) {
        char name[16];
        int64_t k, numel = 1;
        pfvm_tensor *t;
        snprintf(name, sizeof name, "w%d", w);
        ins[n] = pfvm_graph_value(g, name, st);
        t = pfvm_model_tensor(m, PFVM_FLOAT, c->wrank[w], c->wdims[w], NULL, st);
        for (i = 0; i < c->wrank[w]; i++)
            numel *= c->wdims[w][i];
        for (k = 0; k < numel; k++)
            ((float *)t->data)[k] = !strcmp(c->op, "Pow") ? 2.0f /* a real power of any base */
                                                          : value_at(k, w + 1, !strcmp(c->op, "BatchNormalization") && w == 3);
        pfvm_graph_add_init(g, ins[n++], t, st);
    }
    if (!strcmp(c->op, "Concat") && c->nw == 0)
        ins[n] = ins[n - 1], n++; /* x with itself: inputs split like the output */
    if (c->nshape) {
        int64_t d = c->nshape;
        pfvm_tensor *t = pfvm_model_tensor(m, PFVM_INT64, 1, &d, NULL, st);
        memcpy(t->data, c->shape, (size_t)d * sizeof(int64_t));
        ins[n] = pfvm_graph_value(g, "shape", st);
        pfvm_graph_add_init(g, ins[n++], t, st);
    }
    y = pfvm_graph_value(g, "y", st);
    set_attrs(pfvm_graph_add_node(g, c->op, "", "node", ins, n, &y, 1, st), c->attrs, st);
    pfvm_graph_add_output(g, y, st);
    return m;
}

static int close_enough(const pfvm_tensor *a, const pfvm_tensor *b, double *worst)
{
    int64_t i, n = pfvm_tensor_numel(a);
    int ok = n == pfvm_tensor_numel(b) && a->dtype == PFVM_FLOAT && b->dtype == PFVM_FLOAT;
    *worst = 0;
    for (i = 0; ok && i < n; i++) {
        double x = ((const float *)a->data)[i], y = ((const float *)b->data)[i], d = fabs(x - y);
        if (d > *worst || d != d)
            *worst = d;
        if (!(d <= 1e-6 + 1e-4 * fabs(y)))
            ok = 0;
    }
    return ok;
}

static int skipped;

/* want_error NULL: the simulation must match; else the emitter must fail
 * with a message containing it. may_not_fit: a case whose tensors do not
 * fit the target's PEs is counted as skipped (the tiny target's 1 KiB). */
static void check_case(const op_case *c, const char *tfile, const char *want_error, int may_not_fit)
{
    pfvm_status st;
    pfvm_accel_target t;
    pfvm_model *ref = build(c, &st), *m = build(c, &st);
    pfvm_exec *e = NULL;
    pfvm_accel_sim *s = NULL;
    pfvm_tensor *x;
    const pfvm_tensor *ins[1];
    char *prog = NULL;
    double worst = 0;
    int64_t i, numel = 1;
    CHECK_MSG(pfvm_accel_target_load(tfile, &t, &st) == PFVM_OK, "%s", st.msg);
    for (i = 0; i < c->rank; i++)
        numel *= c->dims[i];
    x = pfvm_tensor_new(PFVM_FLOAT, c->rank, c->dims, &st);
    for (i = 0; i < numel; i++)
        ((float *)x->data)[i] = value_at(i, 0, 0);
    if (want_error) {
        CHECK_MSG(pfvm_accel_emit(m, &t, &prog, NULL, &st) != PFVM_OK && strstr(st.msg, want_error),
                  "%s [%s] on %s: got '%s', want '%s'", c->op, c->attrs ? c->attrs : "", t.name, st.msg, want_error);
        goto done;
    }
    e = pfvm_exec_new(ref, NULL, &st);
    CHECK_MSG(e && !pfvm_exec_bind_one(e, x, &st) && !pfvm_exec_run(e, &st), "%s: %s", c->op, st.msg);
    if (pfvm_accel_emit(m, &t, &prog, NULL, &st) == PFVM_ERR_NOMEM && may_not_fit) {
        skipped++;
        goto done;
    }
    CHECK_MSG(prog != NULL, "%s [%s] on %s: %s", c->op,
              c->attrs ? c->attrs : "", t.name, st.msg);
    if (!prog || !e)
        goto done;
    s = pfvm_accel_sim_new(&t, &st);
    ins[0] = x;
    CHECK_MSG(s && pfvm_accel_sim_run(s, prog, ins, 1, find_weight, m, &st) == PFVM_OK, "%s [%s] on %s: %s", c->op,
              c->attrs ? c->attrs : "", t.name, st.msg);
    if (s && pfvm_accel_sim_output(s, 0))
        CHECK_MSG(close_enough(pfvm_accel_sim_output(s, 0), pfvm_exec_output(e, 0), &worst),
                  "%s [%s] on %s: differs from the interpreter by %g", c->op, c->attrs ? c->attrs : "", t.name, worst);
done:
    pfvm_accel_free(prog);
    pfvm_accel_sim_free(s);
    pfvm_exec_free(e);
    pfvm_tensor_free(x);
    pfvm_model_free(ref);
    pfvm_model_free(m);
}

#define W4(a, b, c, d) 4, {a, b, c, d}
#define W5(a, b, c, d, e) 5, {a, b, c, d, e}
static const op_case cases[] = {
    /* Conv: plain, padded, strided, dilated, grouped, depthwise, SAME_UPPER, no bias */
    {"Conv", 13, W4(2, 3, 6, 6), 2, {4, 1}, {{4, 3, 3, 3}, {4}}, 0, {0}, "pads=1,1,1,1"},
    {"Conv", 13, W4(2, 3, 7, 7), 2, {4, 1}, {{5, 3, 3, 3}, {5}}, 0, {0}, "strides=2,2;pads=1,0,1,2"},
    {"Conv", 13, W4(2, 2, 7, 7), 1, {4}, {{3, 2, 3, 2}}, 0, {0}, "dilations=2,1;pads=2,1,0,1"},
    {"Conv", 13, W4(2, 4, 5, 5), 2, {4, 1}, {{6, 2, 3, 3}, {6}}, 0, {0}, "group=2;pads=1,1,1,1"},
    {"Conv", 13, W4(2, 4, 6, 6), 2, {4, 1}, {{4, 1, 3, 3}, {4}}, 0, {0}, "group=4;strides=2,2;pads=1,1,1,1"},
    {"Conv", 13, W4(2, 3, 5, 5), 1, {4}, {{2, 3, 2, 2}}, 0, {0}, "auto_pad=SAME_UPPER;strides=2,2"},
    {"Conv", 13, W4(2, 3, 6, 6), 1, {4}, {{4, 3, 1, 1}}, 0, {0}, NULL},
    /* pools */
    {"MaxPool", 13, W4(2, 3, 6, 6), 0, {0}, {{0}}, 0, {0}, "kernel_shape=3,3;strides=2,2;pads=1,1,1,1"},
    {"MaxPool", 13, W4(2, 2, 7, 7), 0, {0}, {{0}}, 0, {0}, "kernel_shape=2,2;strides=2,2;ceil_mode=1"},
    {"MaxPool", 13, W4(2, 2, 7, 7), 0, {0}, {{0}}, 0, {0}, "kernel_shape=2,2;dilations=2,2"},
    {"AveragePool", 13, W4(2, 3, 6, 6), 0, {0}, {{0}}, 0, {0}, "kernel_shape=3,3;pads=1,1,1,1"},
    {"AveragePool", 13, W4(2, 3, 6, 6), 0, {0}, {{0}}, 0, {0}, "kernel_shape=3,3;pads=1,1,1,1;count_include_pad=1"},
    {"AveragePool", 13, W4(2, 3, 6, 6), 0, {0}, {{0}}, 0, {0}, "kernel_shape=2,2;strides=2,2"},
    {"GlobalAveragePool", 13, W4(2, 3, 5, 4), 0, {0}, {{0}}, 0, {0}, NULL},
    {"GlobalMaxPool", 13, W4(2, 3, 5, 4), 0, {0}, {{0}}, 0, {0}, NULL},
    /* normalization, element-wise, softmax */
    {"BatchNormalization", 13, W4(2, 3, 4, 4), 4, {1, 1, 1, 1}, {{3}, {3}, {3}, {3}}, 0, {0}, "epsilon=0.001"},
    /* LayerNormalization: 2 rows on a PE (its sum of squares one gemm per row), then 6 (bin mul + red sum) */
    {"LayerNormalization", 17, W4(4, 1, 2, 8), 2, {1, 1}, {{8}, {8}}, 0, {0}, "epsilon=0.001"},
    {"LayerNormalization", 17, W4(2, 3, 2, 8), 1, {1}, {{8}}, 0, {0}, NULL},
    {"Clip", 13, W4(2, 3, 4, 4), 2, {0, 0}, {{0}, {0}}, 0, {0}, NULL},
    {"Clip", 6, W4(2, 3, 4, 4), 0, {0}, {{0}}, 0, {0}, "min=-0.25;max=0.5"},
    {"LogSoftmax", 13, W4(2, 3, 4, 5), 0, {0}, {{0}}, 0, {0}, NULL},
    /* data movement */
    {"Flatten", 13, W4(2, 3, 4, 5), 0, {0}, {{0}}, 0, {0}, NULL},
    {"Reshape", 13, W4(2, 3, 4, 5), 0, {0}, {{0}}, 3, {2, 12, 5}, NULL},
    {"Transpose", 13, W4(2, 3, 4, 5), 0, {0}, {{0}}, 0, {0}, "perm=0,3,1,2"},
    {"Transpose", 13, W4(2, 3, 4, 5), 0, {0}, {{0}}, 0, {0}, "perm=0,2,3,1"},
    {"Concat", 13, W4(2, 3, 4, 5), 0, {0}, {{0}}, 0, {0}, "axis=1"},
    {"Concat", 13, W4(2, 3, 4, 5), 0, {0}, {{0}}, 0, {0}, "axis=-1"},
    {"Slice", 9, W4(2, 3, 4, 5), 0, {0}, {{0}}, 0, {0}, "starts=1,1;ends=3,5;axes=1,3"},
    {"Slice", 9, W4(2, 3, 4, 5), 0, {0}, {{0}}, 0, {0}, "starts=-3,0;ends=100,2;axes=-1,2"},
    /* reductions over trailing axes, with keepdims and without */
    {"ReduceMean", 13, W4(2, 3, 4, 5), 0, {0}, {{0}}, 0, {0}, "axes=3,"},
    {"ReduceSum", 11, W4(2, 3, 4, 5), 0, {0}, {{0}}, 0, {0}, "axes=2,3;keepdims=0"},
    {"ReduceMax", 13, W4(2, 3, 4, 5), 0, {0}, {{0}}, 0, {0}, "axes=-1,"},
    {"ReduceMin", 13, W4(2, 3, 4, 5), 0, {0}, {{0}}, 0, {0}, "axes=1,2,3"},
    /* element-wise additions: Pow by a scalar, Sqrt, one value per row */
    {"Pow", 13, W4(2, 3, 4, 5), 1, {0}, {{0}}, 0, {0}, NULL},
    {"Sub", 13, W4(2, 3, 4, 5), 1, {4}, {{2, 3, 4, 1}}, 0, {0}, NULL},
    /* the fallback: split inputs gathered whole to PE 0 */
    {"Transpose", 13, W4(2, 3, 4, 5), 0, {0}, {{0}}, 0, {0}, "perm=1,0,2,3"},
    {"Reshape", 13, W4(2, 3, 4, 5), 0, {0}, {{0}}, 2, {6, 20}, NULL},
    {"Concat", 13, W4(2, 3, 4, 5), 1, {4}, {{1, 3, 4, 5}}, 0, {0}, "axis=0"},
    {"MatMul", 13, W4(2, 3, 4, 5), 1, {4}, {{2, 3, 5, 2}}, 0, {0}, NULL},
    {"Slice", 9, W4(2, 3, 4, 5), 0, {0}, {{0}}, 0, {0}, "starts=1,;ends=2,;axes=0,"},
    {"ReduceMean", 13, W4(2, 3, 4, 5), 0, {0}, {{0}}, 0, {0}, "axes=0,1,2,3"},
};

/* Cases too large for tiny's resident plan: streamed there, each node by
 * its streamed lowering (no fallback to PE 0): batched MatMul, MatMul by a
 * 2-D B, the rows stream (Softmax, LogSoftmax, LayerNormalization, a
 * reduction, broadcasts along the last axis and per row, flat element-wise
 * nodes), LayerNormalization with its rows split over PEs, Transpose and
 * Slice as strided copies. */
static const op_case streamed[] = {
    {"MatMul", 13, W4(2, 3, 8, 8), 1, {4}, {{2, 3, 8, 5}}, 0, {0}, NULL},
    {"MatMul", 13, W4(2, 3, 8, 8), 1, {2}, {{8, 5}}, 0, {0}, NULL},
    {"Softmax", 13, W4(2, 3, 8, 8), 0, {0}, {{0}}, 0, {0}, NULL},
    {"LogSoftmax", 13, W4(2, 3, 8, 8), 0, {0}, {{0}}, 0, {0}, "axis=3"},
    {"LayerNormalization", 17, W4(2, 3, 8, 8), 2, {1, 1}, {{8}, {8}}, 0, {0}, "epsilon=0.001"},
    /* rows too long for one PE: each row split over PEs (the split LayerNorm lowering), with and without bias */
    {"LayerNormalization", 17, W4(1, 2, 1, 256), 2, {1, 1}, {{256}, {256}}, 0, {0}, "epsilon=0.001"},
    {"LayerNormalization", 17, W4(1, 1, 3, 128), 1, {1}, {{128}}, 0, {0}, NULL},
    {"ReduceMean", 13, W4(4, 6, 8, 8), 0, {0}, {{0}}, 0, {0}, "axes=-1,"},
    {"Add", 13, W4(2, 3, 8, 8), 1, {1}, {{8}}, 0, {0}, NULL},
    {"Sub", 13, W4(2, 3, 8, 8), 1, {4}, {{2, 3, 8, 1}}, 0, {0}, NULL},
    {"Mul", 13, W4(2, 3, 8, 8), 1, {4}, {{2, 3, 8, 8}}, 0, {0}, NULL},
    {"Pow", 13, W4(2, 3, 8, 8), 1, {0}, {{0}}, 0, {0}, NULL},
    {"Transpose", 13, W4(2, 3, 8, 8), 0, {0}, {{0}}, 0, {0}, "perm=1,0,2,3"},
    {"Transpose", 13, W4(2, 3, 8, 8), 0, {0}, {{0}}, 0, {0}, "perm=0,2,3,1"},
    {"Transpose", 13, W4(2, 3, 8, 8), 0, {0}, {{0}}, 0, {0}, "perm=3,1,2,0"},
    {"Slice", 9, W4(2, 3, 8, 8), 0, {0}, {{0}}, 0, {0}, "starts=1,2;ends=3,7;axes=1,3"},
    {"Slice", 9, W4(2, 3, 8, 8), 0, {0}, {{0}}, 0, {0}, "starts=1,0;ends=2,5;axes=0,-1"},
};

/* The case is emitted by the streamed plan with no node whole on PE 0. */
static void check_streamed(const op_case *c, const char *tfile)
{
    pfvm_status st;
    pfvm_accel_target t;
    pfvm_accel_stats stats;
    pfvm_model *m = build(c, &st);
    char *prog = NULL;
    memset(&stats, 0, sizeof stats);
    CHECK_MSG(pfvm_accel_target_load(tfile, &t, &st) == PFVM_OK, "%s", st.msg);
    CHECK_MSG(pfvm_accel_emit(m, &t, &prog, &stats, &st) == PFVM_OK && stats.streamed && !stats.fallbacks,
              "%s [%s] on %s: streamed %d, fallbacks %d (%s)", c->op, c->attrs ? c->attrs : "", t.name,
              stats.streamed, stats.fallbacks, prog ? "" : st.msg);
    pfvm_accel_free(prog);
    pfvm_model_free(m);
}

/* Cases each lowering refuses, with the words of its error (when the
 * input is split, after the fallback to PE 0 refused it too). */
static const op_case refused[] = {
    {"Floor", 13, W4(2, 3, 4, 5), 0, {0}, {{0}}, 0, {0}, NULL},
    {"MaxPool", 13, W5(2, 3, 4, 5, 6), 0, {0}, {{0}}, 0, {0}, "kernel_shape=2,2,2"},
    {"ReduceL2", 13, W4(2, 3, 4, 5), 0, {0}, {{0}}, 0, {0}, "axes=3,"},
};
static const char *const refused_words[] = {
    "node node (Floor): no accel lowering (the operator's definition in src/ops has no accel hook)",
    "node node (MaxPool): accel lowers 2-D windows (NCHW) only",
    "(ReduceL2): accel lowers ReduceSum, ReduceMean, ReduceMax and ReduceMin only",
};

int main(void)
{
    size_t i;
    op_case big = cases[0];
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        check_case(&cases[i], "targets/tiny.txt", NULL, 1);
        check_case(&cases[i], "targets/mncore2.txt", NULL, 0);
    }
    for (i = 0; i < sizeof streamed / sizeof streamed[0]; i++) {
        check_case(&streamed[i], "targets/tiny.txt", NULL, 0);
        check_streamed(&streamed[i], "targets/tiny.txt");
    }
    for (i = 0; i < sizeof refused / sizeof refused[0]; i++)
        check_case(&refused[i], "targets/mncore2.txt", refused_words[i], 0);
    /* on tiny (1 KiB PEs) this Conv's im2col fits one output row at a time */
    big.dims[1] = 1;
    big.wdims[0][0] = 2;
    big.wdims[0][1] = 1;
    big.wdims[1][0] = 2;
    check_case(&big, "targets/tiny.txt", NULL, 0);
    printf("%d cases on tiny skipped (their tensors do not fit 1 KiB PEs)\n", skipped);
    return CHECK_END();
}
