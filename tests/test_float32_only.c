/* PFVM_FLOAT32_ONLY (the float32-only firmware switch): one-node graphs of
 * Relu, Add, Gemm, Conv and MaxPool (and a fused Relu(Add)) run on float32
 * tensors to the expected values in every build; on double tensors they
 * run in a plain build and, in a PFVM_FLOAT32_ONLY build, fail with an
 * error naming the node and the switch (never a crash, never a wrong
 * value). MaxPool of int8/uint8 windows wholly in the padding gives the
 * type's lowest value in both. With PFVM_UNARY_F32_ONLY (the unary
 * operators without the general element-wise engine) Relu maps float32
 * to the same values and refuses double and int8 tensors naming the node
 * and that switch. Max pooling over a 3x3 window with padding (the plane
 * loops) gives the largest value inside each window in every build; over a
 * 3-D window (the generic loop) too, but in a build with both
 * PFVM_POOL_PLANES_ONLY and PFVM_FLOAT32_ONLY, where it fails naming the
 * node and PFVM_POOL_PLANES_ONLY. A max pooling window whose extent is
 * past 2^31 runs, but with PFVM_LEAN_KERNELS or PFVM_SMALL_KERNELS (32-bit
 * windows), where it fails naming the node. Run from the repository root:
 *
 *   build/tests/test_float32_only
 *
 * Built from the amalgamated header with FLOAT32_ONLY_AMALGAMATED and
 * -DPFVM_FLOAT32_ONLY it checks the refusals (tests/switches.sh):
 *
 *   cc -DFLOAT32_ONLY_AMALGAMATED -DPFVM_FLOAT32_ONLY -I. -Itests tests/test_float32_only.c -lprotobuf-nanopb -lm
 *
 * and with -DPFVM_UNARY_F32_ONLY (alone or with it) those of that switch,
 * with -DPFVM_POOL_PLANES_ONLY (and -DPFVM_LEAN_KERNELS) those of that one.
 */
#ifdef FLOAT32_ONLY_AMALGAMATED
#define PFVM_IMPLEMENTATION
#include "pfvm.h"
#else
#include "exec/exec.h"
#include "passes/passes.h"
#endif

#include <stdio.h>
#include <string.h>

#include "check.h"

#ifdef PFVM_FLOAT32_ONLY
#define DOUBLES_RUN 0
#else
#define DOUBLES_RUN 1
#endif
#if defined(PFVM_POOL_PLANES_ONLY) && defined(PFVM_FLOAT32_ONLY)
#define POOL_GENERIC 0
#else
#define POOL_GENERIC 1
#endif
#ifdef PFVM_UNARY_F32_ONLY
#define UNARY_GENERAL 0
#else
#define UNARY_GENERAL 1
#endif

/* A graph of one node `op` over inputs x (rank 2 or 4 dims given) and
 * constant-free extra inputs of the same type; returns its executor bound
 * and run, or the error in st. */
typedef struct one_node {
    const char *op;
    int n_in;
    pfvm_dtype dtype;
    int rank[3];
    int64_t dims[3][5];
    const double *vals[3];
    void (*attrs)(pfvm_node *n, pfvm_status *st);
    int fuse; /* Relu(Add(...)) through the fuse pass */
} one_node;

static void pool_attrs(pfvm_node *n, pfvm_status *st)
{
    int64_t k[2] = {2, 2}, s[2] = {2, 2};
    pfvm_node_set_attr_ints(n, "kernel_shape", k, 2, st);
    pfvm_node_set_attr_ints(n, "strides", s, 2, st);
}

/* a 3-D window (1x2x2, stride 1x2x2): the generic loop */
static void pool3_attrs(pfvm_node *n, pfvm_status *st)
{
    int64_t k[3] = {1, 2, 2}, s[3] = {1, 2, 2};
    pfvm_node_set_attr_ints(n, "kernel_shape", k, 3, st);
    pfvm_node_set_attr_ints(n, "strides", s, 3, st);
}

/* 3x3, stride 1, pads 1: the plane loops */
static void pool33_attrs(pfvm_node *n, pfvm_status *st)
{
    int64_t k[2] = {3, 3}, p[4] = {1, 1, 1, 1};
    pfvm_node_set_attr_ints(n, "kernel_shape", k, 2, st);
    pfvm_node_set_attr_ints(n, "pads", p, 4, st);
}

static void pad_pool_attrs(pfvm_node *n, pfvm_status *st)
{
    int64_t k[2] = {1, 1}, p[4] = {1, 1, 1, 1};
    pfvm_node_set_attr_ints(n, "kernel_shape", k, 2, st);
    pfvm_node_set_attr_ints(n, "pads", p, 4, st);
}

/* 3x3 with dilation 2^30 along H and pads 2^30 + 2 there: the window's
 * extent past 2^31, the pads within the input plus it (valid; 8 x 2 outputs) */
static void wide_pool_attrs(pfvm_node *n, pfvm_status *st)
{
    int64_t k[2] = {3, 3}, d[2] = {(int64_t)1 << 30, 1}, p[4] = {((int64_t)1 << 30) + 2, 0, ((int64_t)1 << 30) + 2, 0};
    pfvm_node_set_attr_ints(n, "kernel_shape", k, 2, st);
    pfvm_node_set_attr_ints(n, "dilations", d, 2, st);
    pfvm_node_set_attr_ints(n, "pads", p, 4, st);
}

static void *fill(pfvm_dtype t, const double *v, int64_t numel, void *buf)
{
    int64_t i;
    for (i = 0; i < numel; i++) {
        switch (t) {
        case PFVM_FLOAT: ((float *)buf)[i] = (float)v[i]; break;
        case PFVM_DOUBLE: ((double *)buf)[i] = v[i]; break;
        case PFVM_INT8: ((int8_t *)buf)[i] = (int8_t)v[i]; break;
        default: ((uint8_t *)buf)[i] = (uint8_t)(int)v[i]; break;
        }
    }
    return buf;
}

static double get(const pfvm_tensor *t, int64_t i)
{
    switch (t->dtype) {
    case PFVM_FLOAT: return ((const float *)t->data)[i];
    case PFVM_DOUBLE: return ((const double *)t->data)[i];
    case PFVM_INT8: return ((const int8_t *)t->data)[i];
    default: return ((const uint8_t *)t->data)[i];
    }
}

/* Runs c; returns 0 and the outputs in out (up to cap values) or the code,
 * with the message in st. */
static pfvm_code run(const one_node *c, double *out, int cap, int *n_out, pfvm_status *st)
{
    static double bufs[3][64];
    pfvm_model *m = pfvm_model_new(st);
    pfvm_graph *g = m ? pfvm_graph_new(m, NULL, "g", st) : NULL;
    pfvm_value *in[3], *y = g ? pfvm_graph_value(g, "y", st) : NULL, *mid = NULL;
    pfvm_tensor *t[3] = {NULL, NULL, NULL};
    pfvm_exec *e = NULL;
    pfvm_node *n;
    pfvm_code rc = PFVM_ERR_INVALID;
    char name[16];
    int j;
    if (!y)
        goto done;
    pfvm_model_set_opset(m, "", 17, st);
    for (j = 0; j < c->n_in; j++) {
        int64_t numel = 1;
        int d;
        snprintf(name, sizeof name, "x%d", j);
        in[j] = pfvm_graph_value(g, name, st);
        pfvm_graph_add_input(g, in[j], st);
        for (d = 0; d < c->rank[j]; d++)
            numel *= c->dims[j][d];
        t[j] = pfvm_tensor_view(c->dtype, c->rank[j], c->dims[j], fill(c->dtype, c->vals[j], numel, bufs[j]), st);
        if (!t[j])
            goto done;
    }
    if (c->fuse) {
        mid = pfvm_graph_value(g, "mid", st);
        pfvm_graph_add_node(g, "Add", "", "add", in, 2, &mid, 1, st);
        n = pfvm_graph_add_node(g, "Relu", "", "relu", &mid, 1, &y, 1, st);
    } else {
        n = pfvm_graph_add_node(g, c->op, "", "node", in, c->n_in, &y, 1, st);
    }
    if (!n)
        goto done;
    if (c->attrs)
        c->attrs(n, st);
    pfvm_graph_add_output(g, y, st);
    if (c->fuse && (rc = pfvm_optimize(m, NULL, NULL, st)) != PFVM_OK)
        goto done;
    if (!(e = pfvm_exec_new(m, NULL, st)))
        goto done;
    if ((rc = pfvm_exec_bind(e, (const pfvm_tensor *const *)t, c->n_in, st)) == PFVM_OK &&
        (rc = pfvm_exec_run(e, st)) == PFVM_OK) {
        const pfvm_tensor *o = pfvm_exec_output(e, 0);
        int64_t i, numel = pfvm_tensor_numel(o);
        *n_out = (int)numel;
        for (i = 0; i < numel && i < cap; i++)
            out[i] = get(o, i);
    }
done:
    for (j = 0; j < 3; j++)
        pfvm_tensor_free(t[j]);
    pfvm_exec_free(e);
    pfvm_model_free(m);
    return rc;
}

static const double X8[8] = {-1, 2, -3, 4, 5, -6, 7, -8}, W8[8] = {1, 0, 2, 1, -1, 3, 0, 1};
static const double X16[16] = {1, -2, 3, 0, 5, 6, -7, 8, 9, -10, 11, 12, -13, 14, 15, -16};
static const double W4[4] = {1, 2, -1, 1};

/* Refused for its Relu in a PFVM_UNARY_F32_ONLY build: Relu, and Relu(Add)
 * on doubles (not fused: the fused engine takes float32) */
static int unary_refused(const one_node *c)
{
    return !UNARY_GENERAL && (c->fuse || !strcmp(c->op, "Relu"));
}

static void check_case(const char *what, one_node c, const double *want, int n_want)
{
    pfvm_dtype types[2] = {PFVM_FLOAT, PFVM_DOUBLE};
    int ti;
    for (ti = 0; ti < 2; ti++) {
        pfvm_status st;
        double out[64];
        int n_out = 0, i, same = 1;
        pfvm_code rc;
        memset(&st, 0, sizeof st);
        c.dtype = types[ti];
        rc = run(&c, out, 64, &n_out, &st);
        if (types[ti] != PFVM_FLOAT && unary_refused(&c)) {
            /* (with PFVM_FLOAT32_ONLY too, Relu(Add)'s Add refuses first) */
            CHECK_MSG(rc != PFVM_OK && (strstr(st.msg, "PFVM_UNARY_F32_ONLY") || strstr(st.msg, "PFVM_FLOAT32_ONLY")) &&
                          strstr(st.msg, "node"),
                      "%s double: rc %d, message \"%s\"", what, (int)rc, st.msg);
        } else if (types[ti] == PFVM_FLOAT || DOUBLES_RUN) {
            CHECK_MSG(rc == PFVM_OK, "%s %s: %s", what, pfvm_dtype_name(c.dtype), st.msg);
            for (i = 0; i < n_want && rc == PFVM_OK; i++)
                same &= i < n_out && out[i] == want[i];
            CHECK_MSG(rc != PFVM_OK || (same && n_out == n_want), "%s %s: wrong values", what, pfvm_dtype_name(c.dtype));
        } else {
            CHECK_MSG(rc != PFVM_OK && strstr(st.msg, "PFVM_FLOAT32_ONLY") && (c.fuse || strstr(st.msg, "node")),
                      "%s double: rc %d, message \"%s\"", what, (int)rc, st.msg);
        }
    }
}

int main(void)
{
    one_node c;
    static const double relu[8] = {0, 2, 0, 4, 5, 0, 7, 0}, add[8] = {0, 2, -1, 5, 4, -3, 7, -7},
                        add_relu[8] = {0, 2, 0, 5, 4, 0, 7, 0};
    /* Gemm: x [2, 4] * w [4, 2] (w8 as 4x2) */
    static const double gemm[4] = {-1 * 1 + 2 * 2 + -3 * -1 + 4 * 0, -1 * 0 + 2 * 1 + -3 * 3 + 4 * 1,
                                   5 * 1 + -6 * 2 + 7 * -1 + -8 * 0, 5 * 0 + -6 * 1 + 7 * 3 + -8 * 1};
    static const double pool[4] = {6, 8, 14, 15}, conv[9] = {1 - 4 - 5 + 6, -2 + 6 - 6 - 7, 3 + 0 + 7 + 8,
                                                            5 + 12 - 9 - 10, 6 - 14 + 10 + 11, -7 + 16 - 11 + 12,
                                                            9 - 20 + 13 + 14, -10 + 22 - 14 + 15, 11 + 24 - 15 - 16};
    memset(&c, 0, sizeof c);
    c.op = "Relu", c.n_in = 1, c.rank[0] = 2, c.dims[0][0] = 2, c.dims[0][1] = 4, c.vals[0] = X8;
    check_case("Relu", c, relu, 8);
    c.op = "Add", c.n_in = 2, c.rank[1] = 2, c.dims[1][0] = 2, c.dims[1][1] = 4, c.vals[1] = W8;
    /* add: X8 + W8 */
    check_case("Add", c, add, 8);
    c.fuse = 1;
    check_case("fused Relu(Add)", c, add_relu, 8);
    c.fuse = 0;
    c.op = "Gemm", c.dims[1][0] = 4, c.dims[1][1] = 2;
    check_case("Gemm", c, gemm, 4);
    memset(&c, 0, sizeof c);
    c.op = "MaxPool", c.n_in = 1, c.rank[0] = 4, c.dims[0][0] = 1, c.dims[0][1] = 1, c.dims[0][2] = 4, c.dims[0][3] = 4;
    c.vals[0] = X16, c.attrs = pool_attrs;
    check_case("MaxPool", c, pool, 4);
    c.op = "Conv", c.n_in = 2, c.attrs = NULL, c.rank[1] = 4, c.dims[1][0] = 1, c.dims[1][1] = 1, c.dims[1][2] = 2,
    c.dims[1][3] = 2, c.vals[1] = W4;
    check_case("Conv", c, conv, 9);
    {
        /* 8-bit MaxPool: a window wholly in the padding stores the type's lowest value */
        pfvm_dtype t8[2] = {PFVM_INT8, PFVM_UINT8};
        int ti;
        for (ti = 0; ti < 2; ti++) {
            pfvm_status st;
            double out[64];
            int n_out = 0;
            memset(&st, 0, sizeof st);
            memset(&c, 0, sizeof c);
            c.op = "MaxPool", c.n_in = 1, c.rank[0] = 4, c.dims[0][0] = 1, c.dims[0][1] = 1, c.dims[0][2] = 4,
            c.dims[0][3] = 4, c.vals[0] = X16, c.attrs = pad_pool_attrs, c.dtype = t8[ti];
            CHECK_MSG(run(&c, out, 64, &n_out, &st) == PFVM_OK, "MaxPool %s: %s", pfvm_dtype_name(t8[ti]), st.msg);
            CHECK(n_out == 36 && out[0] == (t8[ti] == PFVM_INT8 ? -128 : 0) && out[7] == (t8[ti] == PFVM_INT8 ? 1 : 1));
        }
    }
    {
        /* float MaxPool, 3x3 windows with padding: each window's largest value */
        double want[16];
        int oh, ow, r, t;
        for (oh = 0; oh < 4; oh++)
            for (ow = 0; ow < 4; ow++) {
                double best = -1e9;
                for (r = oh - 1; r <= oh + 1; r++)
                    for (t = ow - 1; t <= ow + 1; t++)
                        if (r >= 0 && r < 4 && t >= 0 && t < 4 && X16[r * 4 + t] > best)
                            best = X16[r * 4 + t];
                want[oh * 4 + ow] = best;
            }
        memset(&c, 0, sizeof c);
        c.op = "MaxPool", c.n_in = 1, c.rank[0] = 4, c.dims[0][0] = 1, c.dims[0][1] = 1, c.dims[0][2] = 4, c.dims[0][3] = 4;
        c.vals[0] = X16, c.attrs = pool33_attrs;
        check_case("MaxPool 3x3", c, want, 16);
    }
    {
        /* float MaxPool over a 3-D window: the generic loop, or a refusal */
        pfvm_status st;
        double out[64];
        int n_out = 0;
        pfvm_code rc;
        memset(&st, 0, sizeof st);
        memset(&c, 0, sizeof c);
        c.op = "MaxPool", c.n_in = 1, c.rank[0] = 5, c.dims[0][0] = 1, c.dims[0][1] = 1, c.dims[0][2] = 1, c.dims[0][3] = 4,
        c.dims[0][4] = 4, c.vals[0] = X16, c.attrs = pool3_attrs, c.dtype = PFVM_FLOAT;
        rc = run(&c, out, 64, &n_out, &st);
        if (POOL_GENERIC)
            CHECK_MSG(rc == PFVM_OK && n_out == 4 && out[0] == pool[0] && out[1] == pool[1] && out[2] == pool[2] &&
                          out[3] == pool[3],
                      "MaxPool 3-D: %s", st.msg);
        else
            CHECK_MSG(rc != PFVM_OK && strstr(st.msg, "PFVM_POOL_PLANES_ONLY") && strstr(st.msg, "node"),
                      "MaxPool 3-D: rc %d, message \"%s\"", (int)rc, st.msg);
    }
    {
        /* a window past 32 bits: PFVM_LEAN_KERNELS and PFVM_SMALL_KERNELS
         * resolve windows in 32-bit integers and refuse it naming the node,
         * other builds run it */
        pfvm_status st;
        double out[64];
        int n_out = 0;
        pfvm_code rc;
        memset(&st, 0, sizeof st);
        memset(&c, 0, sizeof c);
        c.op = "MaxPool", c.n_in = 1, c.rank[0] = 4, c.dims[0][0] = 1, c.dims[0][1] = 1, c.dims[0][2] = 4, c.dims[0][3] = 4;
        c.vals[0] = X16, c.attrs = wide_pool_attrs, c.dtype = PFVM_FLOAT;
        rc = run(&c, out, 64, &n_out, &st);
#if defined(PFVM_LEAN_KERNELS) || defined(PFVM_SMALL_KERNELS)
        CHECK_MSG(rc == PFVM_ERR_RANGE && strstr(st.msg, "2^31") && strstr(st.msg, "node"),
                  "MaxPool past 2^31: rc %d, message \"%s\"", (int)rc, st.msg);
#else
        CHECK_MSG(rc == PFVM_OK && n_out == 16, "MaxPool past 2^31: %s", st.msg);
#endif
    }
    {
        /* Relu on int8: the integer path, refused without the general engine */
        pfvm_status st;
        double out[64];
        int n_out = 0;
        pfvm_code rc;
        memset(&st, 0, sizeof st);
        memset(&c, 0, sizeof c);
        c.op = "Relu", c.n_in = 1, c.rank[0] = 2, c.dims[0][0] = 2, c.dims[0][1] = 4, c.vals[0] = X8, c.dtype = PFVM_INT8;
        rc = run(&c, out, 64, &n_out, &st);
        if (UNARY_GENERAL)
            CHECK_MSG(rc == PFVM_OK && n_out == 8 && out[0] == 0 && out[1] == 2 && out[7] == 0, "Relu int8: %s", st.msg);
        else
            CHECK_MSG(rc != PFVM_OK && strstr(st.msg, "PFVM_UNARY_F32_ONLY") && strstr(st.msg, "node"),
                      "Relu int8: rc %d, message \"%s\"", (int)rc, st.msg);
    }
    return CHECK_END();
}
