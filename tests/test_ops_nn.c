/* The linear-algebra and nn families (src/ops/linalg.c, src/ops/nn.c):
 * symbolic inference of single nodes, known values from the ONNX spec's
 * examples and by hand, the float fast paths checked against the double
 * reference loops on random data over many window configurations, and
 * malformed nodes failing with a message instead of reading out of bounds. */
#include "exec/exec.h"
#include "shape/infer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

/* ---- single-node graphs ------------------------------------------------------------ */

typedef struct tcase {
    pfvm_model *m;
    pfvm_graph *g;
    pfvm_node *n;
    pfvm_exec *e;
    pfvm_status st;
    int n_in, n_out;
    const pfvm_tensor *in[8];
} tcase;

/* One node of `op` whose inputs are graph inputs shaped like the tensors
 * (NULL = omitted optional input); outputs y0.. are graph outputs. */
static void tc_begin(tcase *t, const char *op, int opset, pfvm_tensor *const *ins, int n_in, int n_out)
{
    pfvm_value *iv[8], *ov[8];
    char name[16];
    int i;
    memset(t, 0, sizeof *t);
    t->m = pfvm_model_new(&t->st);
    t->g = pfvm_graph_new(t->m, NULL, "g", &t->st);
    pfvm_model_set_opset(t->m, "", opset, &t->st);
    for (i = 0; i < n_in; i++) {
        iv[i] = NULL;
        if (!ins[i])
            continue;
        snprintf(name, sizeof name, "x%d", i);
        iv[i] = pfvm_graph_value(t->g, name, &t->st);
        iv[i]->type.kind = PFVM_KIND_TENSOR;
        iv[i]->type.dtype = ins[i]->dtype;
        pfvm_shape_from_dims(t->m->syms, &iv[i]->type.shape, ins[i]->rank, ins[i]->dims, &t->st);
        iv[i]->has_type_info = 1;
        pfvm_graph_add_input(t->g, iv[i], &t->st);
        t->in[t->n_in++] = ins[i];
    }
    for (i = 0; i < n_out; i++) {
        snprintf(name, sizeof name, "y%d", i);
        ov[i] = pfvm_graph_value(t->g, name, &t->st);
    }
    t->n = pfvm_graph_add_node(t->g, op, "", "node", iv, n_in, ov, n_out, &t->st);
    for (i = 0; i < n_out; i++)
        pfvm_graph_add_output(t->g, ov[i], &t->st);
    t->n_out = n_out;
}

static pfvm_code tc_run(tcase *t)
{
    t->e = pfvm_exec_new(t->m, NULL, &t->st);
    if (!t->e)
        return t->st.code ? t->st.code : PFVM_ERR_RUNTIME;
    if (pfvm_exec_bind(t->e, t->in, t->n_in, &t->st) || pfvm_exec_run(t->e, &t->st))
        return t->st.code;
    return PFVM_OK;
}

static const pfvm_tensor *tc_out(tcase *t, int i)
{
    return t->e ? pfvm_exec_output(t->e, i) : NULL;
}

static void tc_end(tcase *t)
{
    if (t->e)
        pfvm_exec_free(t->e);
    pfvm_model_free(t->m);
}

static void attr_ints(pfvm_node *node, const char *name, int64_t a, int64_t b, int64_t c, int64_t d, int n)
{
    pfvm_status st;
    int64_t v[4];
    v[0] = a;
    v[1] = b;
    v[2] = c;
    v[3] = d;
    pfvm_node_set_attr_ints(node, name, v, n, &st);
}

/* ---- tensors ------------------------------------------------------------------------ */

static pfvm_tensor *tensor(pfvm_dtype dt, int rank, int64_t d0, int64_t d1, int64_t d2, int64_t d3, int64_t d4)
{
    int64_t dims[5];
    pfvm_status st;
    dims[0] = d0;
    dims[1] = d1;
    dims[2] = d2;
    dims[3] = d3;
    dims[4] = d4;
    return pfvm_tensor_new(dt, rank, dims, &st);
}

static pfvm_tensor *floats(int rank, int64_t d0, int64_t d1, int64_t d2, int64_t d3, const float *v)
{
    pfvm_tensor *t = tensor(PFVM_FLOAT, rank, d0, d1, d2, d3, 1);
    if (t && v)
        memcpy(t->data, v, sizeof(float) * (size_t)pfvm_tensor_numel(t));
    return t;
}

static unsigned rng_state = 12345u;

static float frand(void)
{
    rng_state = rng_state * 1103515245u + 12345u;
    return (float)((rng_state >> 8) & 0xFFFF) / 32768.0f - 1.0f;
}

static pfvm_tensor *random_floats(int rank, const int64_t *dims)
{
    pfvm_status st;
    pfvm_tensor *t = pfvm_tensor_new(PFVM_FLOAT, rank, dims, &st);
    int64_t i;
    for (i = 0; t && i < pfvm_tensor_numel(t); i++)
        ((float *)t->data)[i] = frand();
    return t;
}

static pfvm_tensor *as_double(const pfvm_tensor *f)
{
    pfvm_status st;
    pfvm_tensor *t = pfvm_tensor_new(PFVM_DOUBLE, f->rank, f->dims, &st);
    int64_t i;
    for (i = 0; t && i < pfvm_tensor_numel(t); i++)
        ((double *)t->data)[i] = ((const float *)f->data)[i];
    return t;
}

static int near(double got, double want, double tol)
{
    return fabs(got - want) <= tol * (1 + fabs(want));
}

/* Every element of float tensor a is near double tensor b. */
static int same_values(const pfvm_tensor *a, const pfvm_tensor *b, double tol)
{
    int64_t i, n;
    if (!a || !b || a->rank != b->rank || memcmp(a->dims, b->dims, sizeof(int64_t) * (size_t)a->rank))
        return 0;
    n = pfvm_tensor_numel(a);
    for (i = 0; i < n; i++)
        if (!near(pfvm_tensor_get_f64(a, i), pfvm_tensor_get_f64(b, i), tol)) {
            fprintf(stderr, "  element %lld: %g vs %g\n", (long long)i, pfvm_tensor_get_f64(a, i), pfvm_tensor_get_f64(b, i));
            return 0;
        }
    return 1;
}

static int values_are(const pfvm_tensor *t, const float *want, int64_t n)
{
    int64_t i;
    if (!t || pfvm_tensor_numel(t) != n)
        return 0;
    for (i = 0; i < n; i++)
        if (!near(pfvm_tensor_get_f64(t, i), want[i], 1e-5)) {
            fprintf(stderr, "  element %lld: %g, expected %g\n", (long long)i, pfvm_tensor_get_f64(t, i), want[i]);
            return 0;
        }
    return 1;
}

/* ---- symbolic inference ------------------------------------------------------------------ */

typedef struct sfix {
    pfvm_model *m;
    pfvm_graph *g;
    pfvm_status st;
} sfix;

static void sf_init(sfix *f, int opset)
{
    f->m = pfvm_model_new(&f->st);
    f->g = pfvm_graph_new(f->m, NULL, "g", &f->st);
    pfvm_model_set_opset(f->m, "", opset, &f->st);
}

/* A graph input with dims given as text: "batch", "3", ... */
static pfvm_value *sf_input(sfix *f, const char *name, int rank, const char *const *dims)
{
    pfvm_value *v = pfvm_graph_value(f->g, name, &f->st);
    int i;
    v->type.kind = PFVM_KIND_TENSOR;
    v->type.dtype = PFVM_FLOAT;
    v->type.shape.rank = rank;
    for (i = 0; i < rank; i++) {
        char *end;
        long long x = strtoll(dims[i], &end, 10);
        v->type.shape.dims[i] = *end ? pfvm_sym_var(f->m->syms, dims[i], 1) : pfvm_sym_const(f->m->syms, x);
    }
    v->has_type_info = 1;
    pfvm_graph_add_input(f->g, v, &f->st);
    return v;
}

static pfvm_node *sf_node(sfix *f, const char *op, pfvm_value **ins, int n_in, pfvm_value **out)
{
    pfvm_node *n;
    *out = pfvm_graph_new_value(f->g, "y", &f->st);
    n = pfvm_graph_add_node(f->g, op, "", op, ins, n_in, out, 1, &f->st);
    pfvm_graph_add_output(f->g, *out, &f->st);
    return n;
}

static int shape_is(const pfvm_value *v, const char *want)
{
    char buf[256];
    pfvm_shape_print(&v->type.shape, buf, sizeof buf);
    if (strcmp(buf, want))
        fprintf(stderr, "  %s: got %s, expected %s\n", v->name, buf, want);
    return !strcmp(buf, want);
}

static void test_infer_conv(void)
{
    static const char *xd[] = {"n", "4", "h", "w"}, *wd[] = {"6", "2", "3", "3"}, *td[] = {"4", "3", "3", "3"};
    int64_t v2[2] = {2, 2}, d2[2] = {2, 2}, pads[4] = {1, 0, 1, 0};
    sfix f;
    pfvm_value *in[2], *y;
    pfvm_node *n;

    /* grouped, strided, dilated, asymmetric pads */
    sf_init(&f, 17);
    in[0] = sf_input(&f, "x", 4, xd);
    in[1] = sf_input(&f, "wt", 4, wd);
    n = sf_node(&f, "Conv", in, 2, &y);
    pfvm_node_set_attr_int(n, "group", 2, &f.st);
    pfvm_node_set_attr_ints(n, "strides", v2, 2, &f.st);
    pfvm_node_set_attr_ints(n, "dilations", d2, 2, &f.st);
    pfvm_node_set_attr_ints(n, "pads", pads, 4, &f.st);
    CHECK_MSG(pfvm_infer_shapes(f.g, 1, &f.st) == PFVM_OK, "%s", f.st.msg);
    /* floor((h + 2 - 5)/2) + 1 = floor((h-1)/2); floor((w - 5)/2) + 1 = floor((w-3)/2) */
    CHECK(shape_is(y, "[n,6,(h+1)/2-1,(w+1)/2-2]"));
    pfvm_model_free(f.m);

    /* ConvTranspose: stride 2, pads 1: 2*(h-1) + 3 - 2 = 2*h - 1; SAME: 2*h */
    sf_init(&f, 17);
    in[0] = sf_input(&f, "x", 4, xd);
    in[1] = sf_input(&f, "wt", 4, td);
    n = sf_node(&f, "ConvTranspose", in, 2, &y);
    pfvm_node_set_attr_ints(n, "strides", v2, 2, &f.st);
    attr_ints(n, "pads", 1, 1, 1, 1, 4);
    CHECK_MSG(pfvm_infer_shapes(f.g, 1, &f.st) == PFVM_OK, "%s", f.st.msg);
    CHECK(shape_is(y, "[n,3,2*h-1,2*w-1]"));
    pfvm_model_free(f.m);

    sf_init(&f, 17);
    in[0] = sf_input(&f, "x", 4, xd);
    in[1] = sf_input(&f, "wt", 4, td);
    n = sf_node(&f, "ConvTranspose", in, 2, &y);
    pfvm_node_set_attr_ints(n, "strides", v2, 2, &f.st);
    pfvm_node_set_attr_int(n, "group", 2, &f.st);
    pfvm_node_set_attr_string(n, "auto_pad", "SAME_UPPER", &f.st);
    CHECK_MSG(pfvm_infer_shapes(f.g, 1, &f.st) == PFVM_OK, "%s", f.st.msg);
    CHECK(shape_is(y, "[n,6,2*h,2*w]"));
    pfvm_model_free(f.m);

    /* channels that do not fit the group are a proven error */
    sf_init(&f, 17);
    in[0] = sf_input(&f, "x", 4, xd);
    in[1] = sf_input(&f, "wt", 4, wd);
    n = sf_node(&f, "Conv", in, 2, &y);
    CHECK(pfvm_infer_shapes(f.g, 1, &f.st) == PFVM_ERR_SHAPE && strstr(f.st.msg, "Conv"));
    pfvm_model_free(f.m);

    /* kernel_shape must agree with the weight */
    sf_init(&f, 17);
    in[0] = sf_input(&f, "x", 4, xd);
    in[1] = sf_input(&f, "wt", 4, wd);
    n = sf_node(&f, "Conv", in, 2, &y);
    pfvm_node_set_attr_int(n, "group", 2, &f.st);
    attr_ints(n, "kernel_shape", 5, 5, 0, 0, 2);
    CHECK(pfvm_infer_shapes(f.g, 1, &f.st) == PFVM_ERR_SHAPE && strstr(f.st.msg, "kernel_shape"));
    pfvm_model_free(f.m);
}

static void test_infer_pool(void)
{
    static const char *xd[] = {"n", "3", "h", "w"}, *small[] = {"1", "1", "2", "2"}, *rd[] = {"r", "5"};
    sfix f;
    pfvm_value *y, *x, *in[2];
    pfvm_node *n;

    /* ceil_mode: ceil((h - 3)/2) + 1 */
    sf_init(&f, 17);
    x = sf_input(&f, "x", 4, xd);
    n = sf_node(&f, "MaxPool", &x, 1, &y);
    attr_ints(n, "kernel_shape", 3, 3, 0, 0, 2);
    attr_ints(n, "strides", 2, 2, 0, 0, 2);
    pfvm_node_set_attr_int(n, "ceil_mode", 1, &f.st);
    CHECK_MSG(pfvm_infer_shapes(f.g, 1, &f.st) == PFVM_OK, "%s", f.st.msg);
    CHECK(shape_is(y, "[n,3,h/2,w/2]"));
    pfvm_model_free(f.m);

    /* SAME_LOWER average pooling: ceil(h/3) */
    sf_init(&f, 17);
    x = sf_input(&f, "x", 4, xd);
    n = sf_node(&f, "AveragePool", &x, 1, &y);
    attr_ints(n, "kernel_shape", 2, 2, 0, 0, 2);
    attr_ints(n, "strides", 3, 3, 0, 0, 2);
    pfvm_node_set_attr_string(n, "auto_pad", "SAME_LOWER", &f.st);
    CHECK_MSG(pfvm_infer_shapes(f.g, 1, &f.st) == PFVM_OK, "%s", f.st.msg);
    CHECK(shape_is(y, "[n,3,(h+2)/3,(w+2)/3]"));
    pfvm_model_free(f.m);

    /* LpPool with VALID padding */
    sf_init(&f, 11);
    x = sf_input(&f, "x", 4, xd);
    n = sf_node(&f, "LpPool", &x, 1, &y);
    attr_ints(n, "kernel_shape", 2, 2, 0, 0, 2);
    pfvm_node_set_attr_string(n, "auto_pad", "VALID", &f.st);
    CHECK_MSG(pfvm_infer_shapes(f.g, 1, &f.st) == PFVM_OK, "%s", f.st.msg);
    CHECK(shape_is(y, "[n,3,h-1,w-1]"));
    pfvm_model_free(f.m);

    /* MaxUnpool without output_shape: (h - 1)*2 + 2 */
    sf_init(&f, 11);
    in[0] = sf_input(&f, "x", 4, xd);
    in[1] = sf_input(&f, "i", 4, xd);
    n = sf_node(&f, "MaxUnpool", in, 2, &y);
    attr_ints(n, "kernel_shape", 2, 2, 0, 0, 2);
    attr_ints(n, "strides", 2, 2, 0, 0, 2);
    CHECK_MSG(pfvm_infer_shapes(f.g, 1, &f.st) == PFVM_OK, "%s", f.st.msg);
    CHECK(shape_is(y, "[n,3,2*h,2*w]"));
    pfvm_model_free(f.m);

    /* MaxRoiPool: rois' count, input channels, pooled_shape */
    sf_init(&f, 11);
    in[0] = sf_input(&f, "x", 4, xd);
    in[1] = sf_input(&f, "rois", 2, rd);
    n = sf_node(&f, "MaxRoiPool", in, 2, &y);
    attr_ints(n, "pooled_shape", 2, 3, 0, 0, 2);
    CHECK_MSG(pfvm_infer_shapes(f.g, 1, &f.st) == PFVM_OK, "%s", f.st.msg);
    CHECK(shape_is(y, "[r,3,2,3]"));
    pfvm_model_free(f.m);

    /* GlobalLpPool keeps N and C */
    sf_init(&f, 11);
    x = sf_input(&f, "x", 4, xd);
    sf_node(&f, "GlobalLpPool", &x, 1, &y);
    CHECK_MSG(pfvm_infer_shapes(f.g, 1, &f.st) == PFVM_OK, "%s", f.st.msg);
    CHECK(shape_is(y, "[n,3,1,1]"));
    pfvm_model_free(f.m);

    /* a window larger than the input is an error, not a negative size */
    sf_init(&f, 11);
    x = sf_input(&f, "x", 4, small);
    n = sf_node(&f, "MaxPool", &x, 1, &y);
    attr_ints(n, "kernel_shape", 5, 5, 0, 0, 2);
    CHECK(pfvm_infer_shapes(f.g, 1, &f.st) == PFVM_ERR_SHAPE && strstr(f.st.msg, "window"));
    pfvm_model_free(f.m);

    /* pooling without kernel_shape */
    sf_init(&f, 11);
    x = sf_input(&f, "x", 4, xd);
    sf_node(&f, "AveragePool", &x, 1, &y);
    CHECK(pfvm_infer_shapes(f.g, 1, &f.st) == PFVM_ERR_INVALID && strstr(f.st.msg, "kernel_shape"));
    pfvm_model_free(f.m);
}

/* ---- fast paths against the reference ---------------------------------------------------------- */

typedef struct convcfg {
    int nsp;
    int64_t n, c, m, group, in[3], k[3], s[3], d[3], pb[3], pe[3];
    const char *auto_pad;
    int bias;
} convcfg;

/* Runs op on float inputs and on their double copies; the float path
 * (matrix engine) must match the double path (reference loops). */
static void check_float_vs_double(const char *what, const char *op, int opset, pfvm_tensor **fin, int n_in,
                                  void (*set)(tcase *, const void *), const void *cfg)
{
    pfvm_tensor *din[8];
    tcase a, b;
    int i;
    pfvm_code ra, rb;
    for (i = 0; i < n_in; i++)
        din[i] = fin[i] ? as_double(fin[i]) : NULL;
    tc_begin(&a, op, opset, fin, n_in, 1);
    tc_begin(&b, op, opset, din, n_in, 1);
    set(&a, cfg);
    set(&b, cfg);
    ra = tc_run(&a);
    rb = tc_run(&b);
    CHECK_MSG(ra == PFVM_OK && rb == PFVM_OK, "%s: %s / %s", what, a.st.msg, b.st.msg);
    if (ra == PFVM_OK && rb == PFVM_OK)
        CHECK_MSG(same_values(tc_out(&a, 0), tc_out(&b, 0), 1e-4), "%s", what);
    tc_end(&a);
    tc_end(&b);
    for (i = 0; i < n_in; i++)
        pfvm_tensor_free(din[i]);
}

static void set_conv(tcase *t, const void *p)
{
    const convcfg *c = (const convcfg *)p;
    int64_t v[6];
    int i;
    pfvm_node_set_attr_int(t->n, "group", c->group, &t->st);
    pfvm_node_set_attr_ints(t->n, "strides", c->s, c->nsp, &t->st);
    pfvm_node_set_attr_ints(t->n, "dilations", c->d, c->nsp, &t->st);
    if (c->auto_pad) {
        pfvm_node_set_attr_string(t->n, "auto_pad", c->auto_pad, &t->st);
    } else {
        for (i = 0; i < c->nsp; i++) {
            v[i] = c->pb[i];
            v[i + c->nsp] = c->pe[i];
        }
        pfvm_node_set_attr_ints(t->n, "pads", v, 2 * c->nsp, &t->st);
    }
}

static void run_conv_cfg(const convcfg *c, int transpose)
{
    int64_t xd[5], wd[5], bd[1];
    pfvm_tensor *in[3];
    char what[64];
    int i;
    xd[0] = c->n;
    xd[1] = c->c;
    wd[0] = transpose ? c->c : c->m;
    wd[1] = transpose ? c->m / c->group : c->c / c->group;
    for (i = 0; i < c->nsp; i++) {
        xd[i + 2] = c->in[i];
        wd[i + 2] = c->k[i];
    }
    bd[0] = c->m;
    in[0] = random_floats(c->nsp + 2, xd);
    in[1] = random_floats(c->nsp + 2, wd);
    in[2] = c->bias ? random_floats(1, bd) : NULL;
    snprintf(what, sizeof what, "%s %dD group %lld k %lld s %lld", transpose ? "ConvTranspose" : "Conv", c->nsp,
             (long long)c->group, (long long)c->k[0], (long long)c->s[0]);
    check_float_vs_double(what, transpose ? "ConvTranspose" : "Conv", 17, in, c->bias ? 3 : 2, set_conv, c);
    for (i = 0; i < 3; i++)
        pfvm_tensor_free(in[i]);
}

static void test_conv_paths(void)
{
    static const convcfg cfgs[] = {
        /* nsp  n  c  m grp  in           k          s          d          pb         pe */
        {2, 2, 3, 4, 1, {7, 6, 0}, {3, 3, 0}, {1, 1, 0}, {1, 1, 0}, {1, 1, 0}, {1, 1, 0}, NULL, 1},
        {2, 1, 4, 6, 2, {9, 8, 0}, {3, 2, 0}, {2, 1, 0}, {1, 2, 0}, {0, 1, 0}, {2, 0, 0}, NULL, 1},
        {2, 1, 5, 5, 5, {8, 9, 0}, {3, 3, 0}, {2, 2, 0}, {1, 1, 0}, {1, 1, 0}, {1, 1, 0}, NULL, 0},  /* depthwise */
        {2, 1, 4, 4, 4, {6, 7, 0}, {3, 3, 0}, {1, 1, 0}, {2, 2, 0}, {2, 2, 0}, {2, 2, 0}, NULL, 1},  /* dilated depthwise */
        /* depthwise rows wider than a block of the interior: strides 1, 2, 3, 3x3 and 5x5, pads
         * wider than the kernel (whole rows and columns in the padding), 1-D */
        {2, 2, 6, 6, 6, {9, 45, 0}, {3, 3, 0}, {1, 1, 0}, {1, 1, 0}, {1, 1, 0}, {1, 1, 0}, NULL, 1},
        {2, 1, 3, 3, 3, {12, 53, 0}, {3, 3, 0}, {2, 2, 0}, {1, 1, 0}, {1, 1, 0}, {1, 1, 0}, NULL, 1},
        {2, 1, 3, 3, 3, {12, 70, 0}, {5, 5, 0}, {3, 3, 0}, {1, 2, 0}, {2, 0, 0}, {1, 3, 0}, NULL, 0},
        {2, 1, 2, 2, 2, {9, 40, 0}, {3, 3, 0}, {1, 2, 0}, {1, 1, 0}, {4, 5, 0}, {6, 7, 0}, NULL, 1},
        {2, 1, 2, 2, 2, {3, 20, 0}, {3, 3, 0}, {1, 1, 0}, {1, 1, 0}, {0, 0, 0}, {0, 0, 0}, "SAME_UPPER", 1},
        {1, 1, 4, 4, 4, {50, 0, 0}, {3, 0, 0}, {1, 0, 0}, {1, 0, 0}, {1, 0, 0}, {1, 0, 0}, NULL, 1},
        {2, 2, 8, 40, 1, {5, 7, 0}, {1, 1, 0}, {1, 1, 0}, {1, 1, 0}, {0, 0, 0}, {0, 0, 0}, NULL, 1}, /* pointwise */
        {2, 1, 130, 9, 1, {6, 6, 0}, {2, 2, 0}, {1, 1, 0}, {1, 1, 0}, {0, 0, 0}, {0, 0, 0}, NULL, 0}, /* k > one panel */
        {2, 1, 3, 5, 1, {10, 7, 0}, {4, 3, 0}, {3, 2, 0}, {1, 1, 0}, {0, 0, 0}, {0, 0, 0}, "SAME_UPPER", 1},
        {2, 1, 3, 5, 1, {10, 7, 0}, {4, 3, 0}, {3, 2, 0}, {1, 1, 0}, {0, 0, 0}, {0, 0, 0}, "SAME_LOWER", 0},
        {2, 1, 3, 2, 1, {9, 9, 0}, {3, 3, 0}, {2, 2, 0}, {1, 1, 0}, {0, 0, 0}, {0, 0, 0}, "VALID", 1},
        {1, 3, 2, 3, 1, {40, 0, 0}, {5, 0, 0}, {3, 0, 0}, {2, 0, 0}, {4, 0, 0}, {1, 0, 0}, NULL, 1},
        {3, 1, 2, 4, 2, {5, 4, 6}, {3, 2, 3}, {1, 2, 2}, {1, 1, 1}, {1, 0, 1}, {1, 1, 0}, NULL, 1},
        /* im2col panels (16 columns) across output rows and into the padding, at stride 1: rows
         * of 14, 23, 7 and 3 columns, 16 filters (packed at bind), dilation, 1x7 and 7x1 windows */
        {2, 1, 3, 16, 1, {14, 14, 0}, {3, 3, 0}, {1, 1, 0}, {1, 1, 0}, {1, 1, 0}, {1, 1, 0}, NULL, 1},
        {2, 2, 5, 16, 1, {9, 23, 0}, {3, 3, 0}, {1, 1, 0}, {1, 1, 0}, {1, 1, 0}, {1, 1, 0}, NULL, 1},
        {2, 1, 4, 13, 1, {7, 7, 0}, {5, 5, 0}, {1, 1, 0}, {1, 1, 0}, {2, 2, 0}, {2, 2, 0}, NULL, 0},
        {2, 1, 4, 16, 1, {11, 19, 0}, {3, 3, 0}, {1, 1, 0}, {2, 3, 0}, {2, 3, 0}, {1, 4, 0}, NULL, 1},
        {2, 1, 3, 16, 1, {5, 3, 0}, {3, 3, 0}, {2, 1, 0}, {1, 1, 0}, {1, 1, 0}, {1, 1, 0}, NULL, 1},
        {2, 1, 6, 16, 1, {9, 17, 0}, {1, 7, 0}, {1, 1, 0}, {1, 1, 0}, {0, 3, 0}, {0, 3, 0}, NULL, 1},
        {2, 1, 6, 16, 1, {17, 9, 0}, {7, 1, 0}, {1, 1, 0}, {1, 1, 0}, {3, 0, 0}, {3, 0, 0}, NULL, 1},
        /* the same at stride 2 (whole segments from even columns, the others gathered): the stem's
         * 3x3 pads 1 on rows of 32 and 33 columns (16 and 17 outputs), rows of 7 and 3 outputs,
         * pads wider than the kernel, dilation, 1x7 */
        {2, 1, 3, 16, 1, {12, 32, 0}, {3, 3, 0}, {2, 2, 0}, {1, 1, 0}, {1, 1, 0}, {1, 1, 0}, NULL, 1},
        {2, 2, 3, 16, 1, {9, 33, 0}, {3, 3, 0}, {2, 2, 0}, {1, 1, 0}, {1, 1, 0}, {1, 1, 0}, NULL, 1},
        {2, 1, 4, 16, 1, {13, 14, 0}, {3, 3, 0}, {2, 2, 0}, {1, 1, 0}, {0, 0, 0}, {1, 1, 0}, NULL, 0},
        {2, 1, 2, 16, 1, {6, 6, 0}, {3, 3, 0}, {2, 2, 0}, {1, 1, 0}, {3, 4, 0}, {2, 5, 0}, NULL, 1},
        {2, 1, 3, 16, 1, {11, 40, 0}, {3, 3, 0}, {2, 2, 0}, {2, 2, 0}, {2, 2, 0}, {2, 2, 0}, NULL, 1},
        {2, 1, 5, 16, 1, {9, 37, 0}, {1, 7, 0}, {1, 2, 0}, {1, 1, 0}, {0, 3, 0}, {0, 3, 0}, NULL, 1},
    };
    size_t i;
    for (i = 0; i < sizeof cfgs / sizeof cfgs[0]; i++) {
        convcfg t;
        run_conv_cfg(&cfgs[i], 0);
        /* the same geometry transposed (channel counts swap roles) */
        t = cfgs[i];
        if (t.auto_pad && !strcmp(t.auto_pad, "VALID"))
            t.auto_pad = NULL;
        run_conv_cfg(&t, 1);
    }
}

/* A 2-D depthwise Conv (explicit pads) gives the bits of the plain loop
 * that adds, in float, the bias and then each kernel position inside the
 * input in order: the order the firmware build and the reference share. */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif
static void depthwise_order(const convcfg *c)
{
    int64_t xd[4], wd[4], bd[1], n, ch, oh, ow, kh, kw, OH, OW, H = c->in[0], W = c->in[1];
    pfvm_tensor *in[3];
    const float *x, *w, *b, *y;
    tcase t;
    int bad = 0;
    xd[0] = c->n;
    xd[1] = c->c;
    xd[2] = H;
    xd[3] = W;
    wd[0] = c->c;
    wd[1] = 1;
    wd[2] = c->k[0];
    wd[3] = c->k[1];
    bd[0] = c->c;
    in[0] = random_floats(4, xd);
    in[1] = random_floats(4, wd);
    in[2] = c->bias ? random_floats(1, bd) : NULL;
    OH = (H + c->pb[0] + c->pe[0] - (c->k[0] - 1) * c->d[0] - 1) / c->s[0] + 1;
    OW = (W + c->pb[1] + c->pe[1] - (c->k[1] - 1) * c->d[1] - 1) / c->s[1] + 1;
    tc_begin(&t, "Conv", 17, in, c->bias ? 3 : 2, 1);
    set_conv(&t, c);
    CHECK_MSG(tc_run(&t) == PFVM_OK, "depthwise: %s", t.st.msg);
    x = (const float *)in[0]->data;
    w = (const float *)in[1]->data;
    b = in[2] ? (const float *)in[2]->data : NULL;
    y = tc_out(&t, 0) ? (const float *)tc_out(&t, 0)->data : NULL;
    for (n = 0; y && n < c->n; n++)
        for (ch = 0; ch < c->c; ch++)
            for (oh = 0; oh < OH; oh++)
                for (ow = 0; ow < OW; ow++) {
                    float s = b ? b[ch] : 0.0f;
                    for (kh = 0; kh < c->k[0]; kh++)
                        for (kw = 0; kw < c->k[1]; kw++) {
                            int64_t ih = oh * c->s[0] - c->pb[0] + kh * c->d[0], iw = ow * c->s[1] - c->pb[1] + kw * c->d[1];
                            if (ih >= 0 && ih < H && iw >= 0 && iw < W)
                                s += w[(ch * c->k[0] + kh) * c->k[1] + kw] * x[((n * c->c + ch) * H + ih) * W + iw];
                        }
                    bad += memcmp(&s, &y[((n * c->c + ch) * OH + oh) * OW + ow], sizeof s) != 0;
                }
    CHECK_MSG(y && bad == 0, "depthwise %lldx%lld stride %lld: %d outputs differ from the ordered loop",
              (long long)c->k[0], (long long)c->k[1], (long long)c->s[0], bad);
    tc_end(&t);
    pfvm_tensor_free(in[0]);
    pfvm_tensor_free(in[1]);
    pfvm_tensor_free(in[2]);
}
#if defined(__clang__)
#pragma STDC FP_CONTRACT DEFAULT
#endif

static void test_depthwise_order(void)
{
    static const convcfg cfgs[] = {
        /* nsp  n  c  m grp  in           k          s          d          pb         pe */
        {2, 2, 4, 4, 4, {9, 45, 0}, {3, 3, 0}, {1, 1, 0}, {1, 1, 0}, {1, 1, 0}, {1, 1, 0}, NULL, 1},
        {2, 1, 3, 3, 3, {12, 53, 0}, {3, 3, 0}, {2, 2, 0}, {1, 1, 0}, {1, 1, 0}, {1, 1, 0}, NULL, 1},
        {2, 1, 3, 3, 3, {12, 70, 0}, {5, 5, 0}, {3, 3, 0}, {1, 2, 0}, {2, 0, 0}, {1, 3, 0}, NULL, 0},
        {2, 1, 2, 2, 2, {10, 7, 0}, {10, 4, 0}, {1, 1, 0}, {1, 1, 0}, {4, 1, 0}, {5, 2, 0}, NULL, 1},
        /* interiors of 8 to 16 columns, and under 8 (blocks of 8, one column at a time) */
        {2, 1, 3, 3, 3, {7, 21, 0}, {3, 3, 0}, {2, 2, 0}, {1, 1, 0}, {1, 1, 0}, {1, 1, 0}, NULL, 1},
        {2, 1, 3, 3, 3, {7, 12, 0}, {3, 3, 0}, {1, 1, 0}, {1, 1, 0}, {1, 1, 0}, {1, 1, 0}, NULL, 1},
        {2, 1, 3, 3, 3, {7, 15, 0}, {3, 3, 0}, {2, 2, 0}, {1, 1, 0}, {1, 1, 0}, {1, 1, 0}, NULL, 0},
        {2, 1, 3, 3, 3, {8, 8, 0}, {3, 3, 0}, {1, 1, 0}, {1, 1, 0}, {1, 1, 0}, {1, 1, 0}, NULL, 1},
        {2, 1, 3, 3, 3, {9, 61, 0}, {3, 3, 0}, {2, 2, 0}, {2, 2, 0}, {2, 2, 0}, {2, 2, 0}, NULL, 1},
        /* whole rows in vectors with masked borders: planes of mobilenet's sizes, rows under 8
         * columns and of 1 or 2, rows narrower than the window, dilated stride 2, odd pads */
        {2, 1, 5, 5, 5, {7, 7, 0}, {3, 3, 0}, {1, 1, 0}, {1, 1, 0}, {1, 1, 0}, {1, 1, 0}, NULL, 1},
        {2, 1, 5, 5, 5, {14, 14, 0}, {3, 3, 0}, {2, 2, 0}, {1, 1, 0}, {1, 1, 0}, {1, 1, 0}, NULL, 1},
        {2, 1, 5, 5, 5, {14, 14, 0}, {3, 3, 0}, {1, 1, 0}, {1, 1, 0}, {0, 1, 0}, {1, 0, 0}, NULL, 1},
        {2, 2, 3, 3, 3, {3, 3, 0}, {3, 3, 0}, {1, 1, 0}, {1, 1, 0}, {1, 1, 0}, {1, 1, 0}, NULL, 1},
        {2, 1, 3, 3, 3, {4, 1, 0}, {3, 3, 0}, {1, 1, 0}, {1, 1, 0}, {1, 1, 0}, {1, 1, 0}, NULL, 1},
        {2, 1, 3, 3, 3, {4, 2, 0}, {3, 3, 0}, {2, 2, 0}, {1, 1, 0}, {1, 2, 0}, {1, 2, 0}, NULL, 0},
        {2, 1, 3, 3, 3, {6, 5, 0}, {3, 3, 0}, {2, 2, 0}, {1, 1, 0}, {1, 1, 0}, {1, 1, 0}, NULL, 1},
        {2, 1, 3, 3, 3, {6, 9, 0}, {5, 5, 0}, {1, 1, 0}, {1, 1, 0}, {2, 6, 0}, {2, 7, 0}, NULL, 1},
        {2, 1, 3, 3, 3, {9, 33, 0}, {3, 3, 0}, {2, 2, 0}, {2, 3, 0}, {1, 3, 0}, {2, 1, 0}, NULL, 1},
        {2, 1, 3, 3, 3, {10, 17, 0}, {3, 3, 0}, {2, 2, 0}, {1, 1, 0}, {0, 0, 0}, {1, 1, 0}, NULL, 1},
        {2, 1, 2, 2, 2, {5, 23, 0}, {1, 7, 0}, {1, 2, 0}, {1, 1, 0}, {0, 3, 0}, {0, 3, 0}, NULL, 1},
        /* four planes per pass: channel counts past a multiple of four (the last pass repeats
         * planes), batches whose planes straddle two passes, stride-1 rows with interiors of 32
         * columns and a remainder (blocks of 8 over four planes), stride-2 rows of mobilenet's
         * widths, windows whose middle columns lie inside the row (unmasked loads in a border
         * block), border blocks narrower than 8 */
        {2, 3, 7, 7, 7, {9, 56, 0}, {3, 3, 0}, {1, 1, 0}, {1, 1, 0}, {1, 1, 0}, {1, 1, 0}, NULL, 1},
        {2, 2, 5, 5, 5, {11, 14, 0}, {3, 3, 0}, {1, 1, 0}, {1, 1, 0}, {1, 1, 0}, {1, 1, 0}, NULL, 1},
        {2, 1, 9, 9, 9, {7, 7, 0}, {3, 3, 0}, {1, 1, 0}, {1, 1, 0}, {1, 1, 0}, {1, 1, 0}, NULL, 0},
        {2, 1, 6, 6, 6, {15, 28, 0}, {3, 3, 0}, {2, 2, 0}, {1, 1, 0}, {1, 1, 0}, {1, 1, 0}, NULL, 1},
        {2, 1, 5, 5, 5, {13, 57, 0}, {3, 3, 0}, {2, 2, 0}, {1, 1, 0}, {0, 0, 0}, {1, 1, 0}, NULL, 1},
        {2, 2, 3, 3, 3, {12, 41, 0}, {5, 5, 0}, {1, 1, 0}, {1, 1, 0}, {2, 2, 0}, {2, 2, 0}, NULL, 1},
        {2, 1, 5, 5, 5, {10, 75, 0}, {5, 5, 0}, {2, 2, 0}, {1, 1, 0}, {2, 2, 0}, {2, 2, 0}, NULL, 1},
        {2, 1, 6, 6, 6, {8, 20, 0}, {3, 3, 0}, {1, 1, 0}, {1, 2, 0}, {1, 2, 0}, {1, 2, 0}, NULL, 1},
        /* AVX-512's blocks of 16 columns: rows of exactly 16, 17 (the last block overlapping),
         * 31 and 112 outputs at strides 1 and 2, 5x5 with pads 2, dilation at stride 2, rows
         * past its 16 blocks (the AVX2 loops) */
        {2, 1, 5, 5, 5, {6, 16, 0}, {3, 3, 0}, {1, 1, 0}, {1, 1, 0}, {1, 1, 0}, {1, 1, 0}, NULL, 1},
        {2, 1, 5, 5, 5, {6, 33, 0}, {3, 3, 0}, {2, 2, 0}, {1, 1, 0}, {1, 1, 0}, {1, 1, 0}, NULL, 1},
        {2, 1, 3, 3, 3, {5, 31, 0}, {5, 5, 0}, {1, 1, 0}, {1, 1, 0}, {2, 2, 0}, {2, 2, 0}, NULL, 1},
        {2, 1, 6, 6, 6, {9, 224, 0}, {5, 5, 0}, {2, 2, 0}, {1, 1, 0}, {2, 2, 0}, {2, 2, 0}, NULL, 1},
        {2, 1, 5, 5, 5, {4, 112, 0}, {3, 3, 0}, {1, 1, 0}, {1, 1, 0}, {1, 1, 0}, {1, 1, 0}, NULL, 0},
        {2, 1, 3, 3, 3, {9, 40, 0}, {3, 3, 0}, {2, 2, 0}, {2, 2, 0}, {2, 2, 0}, {2, 2, 0}, NULL, 1},
        {2, 1, 3, 3, 3, {7, 34, 0}, {3, 3, 0}, {2, 2, 0}, {1, 1, 0}, {0, 0, 0}, {1, 1, 0}, NULL, 1},
        {2, 1, 3, 3, 3, {5, 300, 0}, {3, 3, 0}, {1, 1, 0}, {1, 1, 0}, {1, 1, 0}, {1, 1, 0}, NULL, 1},
        /* AVX-512's two-row bodies on border rows (padding rows skipped): a pair with padding above
         * and below, 5x5 pads 2 on efficientnet's 7x7 and 14x14, pads past the window (rows of
         * bias alone), stride 2 with an odd height, an odd row count (the last row alone) */
        {2, 1, 5, 5, 5, {2, 16, 0}, {3, 3, 0}, {1, 1, 0}, {1, 1, 0}, {1, 1, 0}, {1, 1, 0}, NULL, 1},
        {2, 1, 5, 5, 5, {7, 7, 0}, {5, 5, 0}, {1, 1, 0}, {1, 1, 0}, {2, 2, 0}, {2, 2, 0}, NULL, 1},
        {2, 1, 4, 4, 4, {14, 14, 0}, {5, 5, 0}, {1, 1, 0}, {1, 1, 0}, {2, 2, 0}, {2, 2, 0}, NULL, 0},
        {2, 1, 4, 4, 4, {5, 18, 0}, {3, 3, 0}, {1, 1, 0}, {1, 1, 0}, {4, 1, 0}, {3, 1, 0}, NULL, 1},
        {2, 1, 5, 5, 5, {9, 30, 0}, {5, 5, 0}, {2, 2, 0}, {1, 1, 0}, {2, 2, 0}, {2, 2, 0}, NULL, 1},
        {2, 1, 5, 5, 5, {14, 14, 0}, {3, 3, 0}, {2, 2, 0}, {1, 1, 0}, {0, 0, 0}, {1, 1, 0}, NULL, 1},
    };
    size_t i;
    for (i = 0; i < sizeof cfgs / sizeof cfgs[0]; i++)
        depthwise_order(&cfgs[i]);
}

typedef struct poolcfg {
    int64_t n, c, in[2], k[2], s[2], d[2], pb[2], pe[2];
    int ceil;
} poolcfg;

static void set_pool(tcase *t, const void *p)
{
    const poolcfg *c = (const poolcfg *)p;
    int64_t pads[4];
    pads[0] = c->pb[0];
    pads[1] = c->pb[1];
    pads[2] = c->pe[0];
    pads[3] = c->pe[1];
    pfvm_node_set_attr_ints(t->n, "kernel_shape", c->k, 2, &t->st);
    pfvm_node_set_attr_ints(t->n, "strides", c->s, 2, &t->st);
    pfvm_node_set_attr_ints(t->n, "dilations", c->d, 2, &t->st);
    pfvm_node_set_attr_ints(t->n, "pads", pads, 4, &t->st);
    pfvm_node_set_attr_int(t->n, "ceil_mode", c->ceil, &t->st);
}

/* 2-D float MaxPool (row kernel) against the double loops: rows wider than
 * a block, strides 1 to 3, dilation, pads, ceil mode's overhang. */
static void test_maxpool_paths(void)
{
    static const poolcfg cfgs[] = {
        /* n  c   in         k       s       d       pb      pe   ceil */
        {1, 3, {55, 55}, {3, 3}, {2, 2}, {1, 1}, {0, 0}, {0, 0}, 1},
        {2, 2, {40, 37}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, 0},
        {1, 2, {20, 50}, {2, 3}, {1, 1}, {1, 1}, {0, 1}, {1, 0}, 0},
        {1, 2, {20, 70}, {3, 2}, {3, 3}, {2, 2}, {2, 1}, {1, 2}, 1},
        {1, 1, {5, 9}, {5, 5}, {1, 1}, {1, 1}, {4, 4}, {4, 4}, 0},
        /* AVX-512's blocks of 16 at stride 2: squeezenet's 111 -> 55 (ceil), interiors of
         * exactly 16 and of 17 (the last block overlapping), dilated columns */
        {1, 2, {9, 111}, {3, 3}, {2, 2}, {1, 1}, {0, 0}, {0, 0}, 1},
        {1, 1, {5, 33}, {3, 3}, {2, 2}, {1, 1}, {0, 0}, {0, 0}, 0},
        {1, 1, {5, 37}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, 0},
        {1, 1, {6, 45}, {2, 3}, {2, 2}, {1, 2}, {0, 1}, {1, 1}, 1},
    };
    size_t i;
    for (i = 0; i < sizeof cfgs / sizeof cfgs[0]; i++) {
        const poolcfg *c = &cfgs[i];
        int64_t xd[4];
        pfvm_tensor *in[1];
        char what[64];
        xd[0] = c->n;
        xd[1] = c->c;
        xd[2] = c->in[0];
        xd[3] = c->in[1];
        in[0] = random_floats(4, xd);
        snprintf(what, sizeof what, "MaxPool k %lldx%lld s %lld", (long long)c->k[0], (long long)c->k[1],
                 (long long)c->s[1]);
        check_float_vs_double(what, "MaxPool", 12, in, 1, set_pool, c);
        pfvm_tensor_free(in[0]);
    }
}

/* MaxPool's Indices output sends 8-bit inputs through the general loop
 * (doubles, 64-bit indices); without it they take the 8-bit plane kernel.
 * in[1] == 0: a 1-D window (k[0], s[0], d[0], pb[0], pe[0]). */
static void set_pool_nd(tcase *t, const void *p)
{
    const poolcfg *c = (const poolcfg *)p;
    int64_t pads[2];
    if (c->in[1]) {
        set_pool(t, p);
        return;
    }
    pads[0] = c->pb[0];
    pads[1] = c->pe[0];
    pfvm_node_set_attr_ints(t->n, "kernel_shape", c->k, 1, &t->st);
    pfvm_node_set_attr_ints(t->n, "strides", c->s, 1, &t->st);
    pfvm_node_set_attr_ints(t->n, "dilations", c->d, 1, &t->st);
    pfvm_node_set_attr_ints(t->n, "pads", pads, 2, &t->st);
    pfvm_node_set_attr_int(t->n, "ceil_mode", c->ceil, &t->st);
}

static void maxpool8_case(const poolcfg *c, pfvm_dtype dt)
{
    int64_t xd[4], i, n;
    pfvm_tensor *in[1];
    tcase a, b;
    pfvm_code ra, rb;
    char what[96];
    xd[0] = c->n;
    xd[1] = c->c;
    xd[2] = c->in[0];
    xd[3] = c->in[1];
    in[0] = tensor(dt, c->in[1] ? 4 : 3, xd[0], xd[1], xd[2], xd[3], 1);
    n = pfvm_tensor_numel(in[0]);
    for (i = 0; i < n; i++) {
        rng_state = rng_state * 1103515245u + 12345u;
        ((unsigned char *)in[0]->data)[i] = (unsigned char)(rng_state >> 16);
    }
    snprintf(what, sizeof what, "%s MaxPool %lldx%lld k %lldx%lld s %lld d %lld pads %lld,%lld", pfvm_dtype_name(dt),
             (long long)c->in[0], (long long)c->in[1], (long long)c->k[0], (long long)c->k[1], (long long)c->s[0],
             (long long)c->d[0], (long long)c->pb[0], (long long)c->pe[1]);
    tc_begin(&a, "MaxPool", 12, in, 1, 1);
    tc_begin(&b, "MaxPool", 12, in, 1, 2);
    set_pool_nd(&a, c);
    set_pool_nd(&b, c);
    ra = tc_run(&a);
    rb = tc_run(&b);
    CHECK_MSG(ra == PFVM_OK && rb == PFVM_OK, "%s: %s / %s", what, a.st.msg, b.st.msg);
    if (ra == PFVM_OK && rb == PFVM_OK) {
        const pfvm_tensor *ya = tc_out(&a, 0), *yb = tc_out(&b, 0);
        CHECK_MSG(ya->dtype == dt && pfvm_tensor_numel(ya) == pfvm_tensor_numel(yb) &&
                      memcmp(ya->data, yb->data, (size_t)pfvm_tensor_numel(ya)) == 0,
                  "%s: the 8-bit kernel differs from the general loop", what);
    }
    tc_end(&a);
    tc_end(&b);
    pfvm_tensor_free(in[0]);
}

/* 8-bit MaxPool (quantized models): the plane kernel against the general
 * loop on random bytes, both signs: 2x2 and 3x3 windows (unrolled), others,
 * strides, dilation, pads, ceil mode's overhang, windows wholly in the
 * padding (the type's lowest value), 1-D; 2x2 at stride 2 unpadded (the
 * whole-plane kernel), odd widths and heights. */
static void test_maxpool8_paths(void)
{
    static const poolcfg cfgs[] = {
        /* n  c   in         k       s       d       pb      pe   ceil */
        {1, 32, {8, 8}, {2, 2}, {2, 2}, {1, 1}, {0, 0}, {0, 0}, 0},
        {2, 3, {9, 11}, {2, 2}, {2, 2}, {1, 1}, {0, 0}, {0, 0}, 1},
        {1, 2, {7, 10}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, 0},
        {1, 3, {15, 17}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, 0},
        {1, 2, {13, 13}, {3, 3}, {2, 2}, {1, 1}, {0, 0}, {0, 0}, 1},
        {1, 2, {9, 112}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, 0}, /* resnet's: 16 outputs a step (x86) */
        {1, 3, {12, 75}, {3, 3}, {2, 2}, {1, 1}, {1, 0}, {0, 1}, 0},  /* 37 outputs: steps and a tail */
        {1, 2, {11, 67}, {3, 3}, {2, 2}, {1, 1}, {0, 0}, {0, 0}, 1},  /* ceil mode's overhang after the steps */
        {1, 2, {12, 9}, {3, 3}, {1, 1}, {1, 1}, {0, 0}, {2, 2}, 0},
        {1, 2, {20, 50}, {2, 3}, {1, 1}, {1, 1}, {0, 1}, {1, 0}, 0},
        {1, 2, {20, 70}, {3, 2}, {3, 3}, {2, 2}, {2, 1}, {1, 2}, 1},
        {1, 1, {5, 9}, {5, 5}, {1, 1}, {1, 1}, {4, 4}, {4, 4}, 0},
        {1, 2, {11, 12}, {2, 2}, {2, 3}, {2, 2}, {1, 0}, {1, 2}, 0},
        {1, 1, {1, 1}, {2, 2}, {1, 1}, {2, 2}, {1, 1}, {1, 1}, 0}, /* the only window is padding */
        {1, 2, {1, 6}, {2, 2}, {1, 2}, {2, 1}, {1, 0}, {1, 1}, 0}, /* every row's window is */
        {2, 3, {25, 0}, {3, 0}, {2, 0}, {1, 0}, {1, 0}, {1, 0}, 0}, /* 1-D */
        {1, 2, {9, 0}, {2, 0}, {3, 0}, {2, 0}, {2, 0}, {2, 0}, 1},
        /* 2x2 at stride 2 inside the plane (the whole-plane kernel) */
        {1, 8, {16, 16}, {2, 2}, {2, 2}, {1, 1}, {0, 0}, {0, 0}, 0}, /* digits' */
        {2, 3, {10, 14}, {2, 2}, {2, 2}, {1, 1}, {0, 0}, {0, 0}, 0}, /* odd output width */
        {1, 3, {9, 11}, {2, 2}, {2, 2}, {1, 1}, {0, 0}, {0, 0}, 0},  /* a row and a column left over */
        {1, 2, {5, 2}, {2, 2}, {2, 2}, {1, 1}, {0, 0}, {0, 0}, 0},   /* one output column */
    };
    size_t i;
    for (i = 0; i < sizeof cfgs / sizeof cfgs[0]; i++) {
        maxpool8_case(&cfgs[i], PFVM_UINT8);
        maxpool8_case(&cfgs[i], PFVM_INT8);
    }
}

static void set_gemm(tcase *t, const void *p)
{
    const int *tr = (const int *)p;
    pfvm_node_set_attr_int(t->n, "transA", tr[0], &t->st);
    pfvm_node_set_attr_int(t->n, "transB", tr[1], &t->st);
    pfvm_node_set_attr_float(t->n, "alpha", 0.5f, &t->st);
    pfvm_node_set_attr_float(t->n, "beta", 2.0f, &t->st);
}

static void set_nothing(tcase *t, const void *p)
{
    (void)t;
    (void)p;
}

static void test_matmul_paths(void)
{
    static const int64_t shapes[][2][4] = {
        /* rank-4 broadcast batch */
        {{2, 1, 5, 70}, {1, 3, 70, 33}},
        /* vector times matrix, matrix times vector */
        {{37, 0, 0, 0}, {37, 5, 0, 0}},
        {{6, 200, 0, 0}, {200, 0, 0, 0}},
        /* the matrix engine's blocks: more rows than one block of A (144)
         * and deeper than one panel (256); more columns than one block of
         * B (2048); two rows (the matrix-vector path) */
        {{150, 300, 0, 0}, {300, 70, 0, 0}},
        {{13, 20, 0, 0}, {20, 2081, 0, 0}},
        {{2, 77, 0, 0}, {77, 45, 0, 0}},
    };
    static const int ranks[][2] = {{4, 4}, {1, 2}, {2, 1}, {2, 2}, {2, 2}, {2, 2}};
    int i, tr[2], big;
    for (i = 0; i < (int)(sizeof ranks / sizeof ranks[0]); i++) {
        pfvm_tensor *in[2];
        in[0] = random_floats(ranks[i][0], shapes[i][0]);
        in[1] = random_floats(ranks[i][1], shapes[i][1]);
        check_float_vs_double("MatMul", "MatMul", 13, in, 2, set_nothing, NULL);
        pfvm_tensor_free(in[0]);
        pfvm_tensor_free(in[1]);
    }
    /* small (edge tiles only), one row (matrix-vector), several tiles */
    for (big = 0; big < 3; big++) {
        for (tr[0] = 0; tr[0] < 2; tr[0]++)
            for (tr[1] = 0; tr[1] < 2; tr[1]++) {
                int64_t m = big == 0 ? 7 : big == 1 ? 1 : 29, kk = big == 2 ? 140 : 9, n = big == 2 ? 50 : 35;
                int64_t ad[2], bd[2], cd[2];
                pfvm_tensor *in[3];
                cd[0] = 1;
                cd[1] = n;
                ad[0] = tr[0] ? kk : m;
                ad[1] = tr[0] ? m : kk;
                bd[0] = tr[1] ? n : kk;
                bd[1] = tr[1] ? kk : n;
                in[0] = random_floats(2, ad);
                in[1] = random_floats(2, bd);
                in[2] = random_floats(2, cd);
                check_float_vs_double("Gemm", "Gemm", 13, in, 3, set_gemm, tr);
                pfvm_tensor_free(in[0]);
                pfvm_tensor_free(in[1]);
                pfvm_tensor_free(in[2]);
            }
    }
}

static void set_axis(tcase *t, const void *p)
{
    pfvm_node_set_attr_int(t->n, "axis", *(const int64_t *)p, &t->st);
}

static void test_softmax_paths(void)
{
    static const char *ops[] = {"Softmax", "LogSoftmax", "Hardmax"};
    int64_t dims[3] = {3, 4, 5}, axes[3] = {0, 1, -1};
    int o, a, opset;
    for (o = 0; o < 3; o++)
        for (opset = 11; opset <= 13; opset += 2)
            for (a = 0; a < 3; a++) {
                pfvm_tensor *x = random_floats(3, dims);
                check_float_vs_double(ops[o], ops[o], opset, &x, 1, set_axis, &axes[a]);
                pfvm_tensor_free(x);
            }
}

/* GlobalAveragePool's float planes (32 running sums from 64 elements on)
 * against the double path: planes under, at and past 64, past a multiple
 * of 32, and of mobilenet's 112 x 112. */
static void test_gap_paths(void)
{
    static const int64_t hw[][2] = {{1, 1}, {7, 9}, {8, 8}, {5, 13}, {3, 32}, {9, 11}, {112, 112}};
    size_t i;
    for (i = 0; i < sizeof hw / sizeof hw[0]; i++) {
        int64_t dims[4];
        pfvm_tensor *x;
        dims[0] = 2;
        dims[1] = 3;
        dims[2] = hw[i][0];
        dims[3] = hw[i][1];
        x = random_floats(4, dims);
        check_float_vs_double("GlobalAveragePool", "GlobalAveragePool", 13, &x, 1, set_nothing, NULL);
        pfvm_tensor_free(x);
    }
}

/* ---- known values ----------------------------------------------------------------------------- */

static void test_lp_ops(void)
{
    static const float x4[] = {1, -2, 3, 4}, vec[] = {3, 4, 0, 0, -6, 8};
    pfvm_tensor *x;
    tcase t;

    /* LpPool p=2, kernel 2, stride 2 over [1,-2,3,4]: sqrt(5), 5 */
    x = floats(3, 1, 1, 4, 0, x4);
    tc_begin(&t, "LpPool", 11, &x, 1, 1);
    attr_ints(t.n, "kernel_shape", 2, 0, 0, 0, 1);
    attr_ints(t.n, "strides", 2, 0, 0, 0, 1);
    CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
    {
        static const float want[] = {2.2360680f, 5};
        CHECK(values_are(tc_out(&t, 0), want, 2));
    }
    tc_end(&t);

    /* p=1 with padding: |x| sums, the pad adds nothing */
    tc_begin(&t, "LpPool", 11, &x, 1, 1);
    attr_ints(t.n, "kernel_shape", 3, 0, 0, 0, 1);
    attr_ints(t.n, "pads", 1, 1, 0, 0, 2);
    pfvm_node_set_attr_int(t.n, "p", 1, &t.st);
    CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
    {
        static const float want[] = {3, 6, 9, 7};
        CHECK(values_are(tc_out(&t, 0), want, 4));
    }
    tc_end(&t);

    /* GlobalLpPool */
    tc_begin(&t, "GlobalLpPool", 2, &x, 1, 1);
    pfvm_node_set_attr_int(t.n, "p", 1, &t.st);
    CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
    {
        static const float want[] = {10};
        CHECK(values_are(tc_out(&t, 0), want, 1));
        CHECK(tc_out(&t, 0) && tc_out(&t, 0)->rank == 3 && tc_out(&t, 0)->dims[2] == 1);
    }
    tc_end(&t);
    pfvm_tensor_free(x);

    /* LpNormalization along the last axis; a zero row stays zero */
    x = floats(2, 3, 2, 0, 0, vec);
    tc_begin(&t, "LpNormalization", 1, &x, 1, 1);
    CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
    {
        static const float want[] = {0.6f, 0.8f, 0, 0, -0.6f, 0.8f};
        CHECK(values_are(tc_out(&t, 0), want, 6));
    }
    tc_end(&t);
    tc_begin(&t, "LpNormalization", 1, &x, 1, 1);
    pfvm_node_set_attr_int(t.n, "p", 1, &t.st);
    pfvm_node_set_attr_int(t.n, "axis", 0, &t.st);
    CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
    {
        /* columns: |3|+|0|+|-6| = 9, |4|+|0|+|8| = 12 */
        static const float want[] = {3.0f / 9, 4.0f / 12, 0, 0, -6.0f / 9, 8.0f / 12};
        CHECK(values_are(tc_out(&t, 0), want, 6));
    }
    tc_end(&t);
    tc_begin(&t, "LpNormalization", 1, &x, 1, 1);
    pfvm_node_set_attr_int(t.n, "p", 3, &t.st);
    CHECK(tc_run(&t) == PFVM_ERR_INVALID && strstr(t.st.msg, "p must be"));
    tc_end(&t);
    pfvm_tensor_free(x);
}

static void test_roipool(void)
{
    float xv[32];
    static const float rois[] = {0, 0, 0, 3, 3, 1, 1.4f, 0.6f, 2.6f, 3.4f, 0, 2, 2, 9, 9};
    pfvm_tensor *in[2];
    tcase t;
    int i;
    for (i = 0; i < 32; i++)
        xv[i] = (float)i;
    in[0] = floats(4, 2, 1, 4, 4, xv);
    in[1] = floats(2, 3, 5, 0, 0, rois);
    tc_begin(&t, "MaxRoiPool", 1, in, 2, 1);
    attr_ints(t.n, "pooled_shape", 2, 2, 0, 0, 2);
    CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
    {
        /* roi 0: the whole first image in quadrants;
         * roi 1 (image 1): box x 1..3, y 1..3 (rounded), bins of 1.5;
         * roi 2: box 2..9 clipped to 2..3, bins of 4 cells, only the first holds input */
        static const float want[] = {5, 7, 13, 15, 16 + 10, 16 + 11, 16 + 14, 16 + 15, 15, 0, 0, 0};
        CHECK(values_are(tc_out(&t, 0), want, 12));
    }
    tc_end(&t);
    /* a batch index outside the input */
    ((float *)in[1]->data)[0] = 5;
    tc_begin(&t, "MaxRoiPool", 1, in, 2, 1);
    attr_ints(t.n, "pooled_shape", 2, 2, 0, 0, 2);
    CHECK(tc_run(&t) == PFVM_ERR_RANGE && strstr(t.st.msg, "batch"));
    tc_end(&t);
    pfvm_tensor_free(in[0]);
    pfvm_tensor_free(in[1]);
}

static void test_batchnorm(void)
{
    static const float xv[] = {1, 2, 3, 4, 5, 6, 7, 8}, sv[] = {1, 2}, bv[] = {0, 1}, mv[] = {0, 0}, vv[] = {1, 1};
    pfvm_tensor *in[5];
    tcase t;
    in[0] = floats(3, 2, 2, 2, 0, xv); /* N=2, C=2, L=2: channel 0 = 1,2,5,6; channel 1 = 3,4,7,8 */
    in[1] = floats(1, 2, 0, 0, 0, sv);
    in[2] = floats(1, 2, 0, 0, 0, bv);
    in[3] = floats(1, 2, 0, 0, 0, mv);
    in[4] = floats(1, 2, 0, 0, 0, vv);

    /* opset 9 with statistics outputs: training, batch statistics */
    tc_begin(&t, "BatchNormalization", 9, in, 5, 5);
    pfvm_node_set_attr_float(t.n, "epsilon", 0.0f, &t.st);
    pfvm_node_set_attr_float(t.n, "momentum", 0.5f, &t.st);
    CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
    {
        /* channel 0: mean 3.5, var 4.25; channel 1: mean 5.5, var 4.25 */
        double s = 1 / sqrt(4.25);
        float want[8];
        static const float rmean[] = {1.75f, 2.75f}, rvar[] = {2.625f, 2.625f}, mean[] = {3.5f, 5.5f}, var[] = {4.25f, 4.25f};
        want[0] = (float)((1 - 3.5) * s);
        want[1] = (float)((2 - 3.5) * s);
        want[2] = (float)(2 * (3 - 5.5) * s + 1);
        want[3] = (float)(2 * (4 - 5.5) * s + 1);
        want[4] = (float)((5 - 3.5) * s);
        want[5] = (float)((6 - 3.5) * s);
        want[6] = (float)(2 * (7 - 5.5) * s + 1);
        want[7] = (float)(2 * (8 - 5.5) * s + 1);
        CHECK(values_are(tc_out(&t, 0), want, 8));
        CHECK(values_are(tc_out(&t, 1), rmean, 2));
        CHECK(values_are(tc_out(&t, 2), rvar, 2));
        CHECK(values_are(tc_out(&t, 3), mean, 2));
        CHECK(values_are(tc_out(&t, 4), var, 2));
    }
    tc_end(&t);

    /* opset 15 inference mode: y = x * scale + bias with var 1 */
    tc_begin(&t, "BatchNormalization", 15, in, 5, 1);
    pfvm_node_set_attr_float(t.n, "epsilon", 0.0f, &t.st);
    CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
    {
        static const float want[] = {1, 2, 7, 9, 5, 6, 15, 17};
        CHECK(values_are(tc_out(&t, 0), want, 8));
    }
    tc_end(&t);

    /* a scale of the wrong size fails instead of reading past it */
    pfvm_tensor_free(in[1]);
    in[1] = floats(1, 1, 0, 0, 0, sv);
    tc_begin(&t, "BatchNormalization", 15, in, 5, 1);
    CHECK(tc_run(&t) == PFVM_ERR_SHAPE && strstr(t.st.msg, "BatchNormalization"));
    tc_end(&t);
    {
        int i;
        for (i = 0; i < 5; i++)
            pfvm_tensor_free(in[i]);
    }
}

static void test_layernorm_and_errors(void)
{
    static const float xv[] = {1, 2, 3, 4, 5, 6}, sv[] = {1, 1, 1}, big[] = {1, 1, 1, 1};
    pfvm_tensor *in[3];
    tcase t;
    in[0] = floats(2, 2, 3, 0, 0, xv);
    in[1] = floats(1, 3, 0, 0, 0, sv);
    in[2] = NULL;
    tc_begin(&t, "LayerNormalization", 17, in, 2, 3);
    pfvm_node_set_attr_float(t.n, "epsilon", 0.0f, &t.st);
    CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
    {
        float s = (float)sqrt(1.5), want[6], mean[] = {2, 5}, inv[2];
        want[0] = want[3] = -s;
        want[1] = want[4] = 0;
        want[2] = want[5] = s;
        inv[0] = inv[1] = (float)(1 / sqrt(2.0 / 3));
        CHECK(values_are(tc_out(&t, 0), want, 6));
        CHECK(values_are(tc_out(&t, 1), mean, 2));
        CHECK(values_are(tc_out(&t, 2), inv, 2));
        CHECK(tc_out(&t, 1) && tc_out(&t, 1)->rank == 2 && tc_out(&t, 1)->dims[1] == 1);
    }
    tc_end(&t);
    pfvm_tensor_free(in[1]);

    /* a scale that does not cover the normalised dims is refused */
    in[1] = floats(1, 4, 0, 0, 0, big);
    tc_begin(&t, "LayerNormalization", 17, in, 2, 1);
    CHECK(tc_run(&t) != PFVM_OK);
    tc_end(&t);
    pfvm_tensor_free(in[1]);

    /* Conv: bias of the wrong length, kernel_shape against the weight */
    {
        pfvm_tensor *c[3];
        static const float one[] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
        c[0] = floats(4, 1, 1, 3, 3, one);
        c[1] = floats(4, 1, 1, 3, 3, one);
        c[2] = floats(1, 2, 0, 0, 0, one);
        tc_begin(&t, "Conv", 17, c, 3, 1);
        CHECK(tc_run(&t) == PFVM_ERR_SHAPE && strstr(t.st.msg, "bias"));
        tc_end(&t);
        tc_begin(&t, "Conv", 17, c, 2, 1);
        attr_ints(t.n, "kernel_shape", 5, 5, 0, 0, 2);
        CHECK(tc_run(&t) != PFVM_OK && strstr(t.st.msg, "kernel_shape"));
        tc_end(&t);
        /* a correct one: the 3x3 sum with one pad = corner 4, edge 6, centre 9 */
        tc_begin(&t, "Conv", 17, c, 2, 1);
        attr_ints(t.n, "pads", 1, 1, 1, 1, 4);
        CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
        {
            static const float want[] = {4, 6, 4, 6, 9, 6, 4, 6, 4};
            CHECK(values_are(tc_out(&t, 0), want, 9));
        }
        tc_end(&t);
        pfvm_tensor_free(c[0]);
        pfvm_tensor_free(c[1]);
        pfvm_tensor_free(c[2]);
    }
    /* MatMul batch dims that do not broadcast */
    {
        pfvm_tensor *m[2];
        m[0] = tensor(PFVM_FLOAT, 3, 2, 3, 4, 0, 0);
        m[1] = tensor(PFVM_FLOAT, 3, 3, 4, 5, 0, 0);
        tc_begin(&t, "MatMul", 13, m, 2, 1);
        CHECK(tc_run(&t) == PFVM_ERR_SHAPE);
        tc_end(&t);
        pfvm_tensor_free(m[0]);
        pfvm_tensor_free(m[1]);
    }
    pfvm_tensor_free(in[0]);
}

static void test_pool_values(void)
{
    /* 1x1x3x3 = 1..9 */
    static const float xv[] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    pfvm_tensor *x = floats(4, 1, 1, 3, 3, xv);
    tcase t;
    /* ceil mode, kernel 2, stride 2: windows {1,2,4,5}, {3,6}, {7,8}, {9} */
    tc_begin(&t, "AveragePool", 17, &x, 1, 1);
    attr_ints(t.n, "kernel_shape", 2, 2, 0, 0, 2);
    attr_ints(t.n, "strides", 2, 2, 0, 0, 2);
    pfvm_node_set_attr_int(t.n, "ceil_mode", 1, &t.st);
    CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
    {
        static const float want[] = {3, 4.5f, 7.5f, 9};
        CHECK(values_are(tc_out(&t, 0), want, 4));
    }
    tc_end(&t);
    /* count_include_pad with pads 1: the corner window holds 1,2,4,5 over 9 cells */
    tc_begin(&t, "AveragePool", 17, &x, 1, 1);
    attr_ints(t.n, "kernel_shape", 3, 3, 0, 0, 2);
    attr_ints(t.n, "strides", 2, 2, 0, 0, 2);
    attr_ints(t.n, "pads", 1, 1, 1, 1, 4);
    pfvm_node_set_attr_int(t.n, "count_include_pad", 1, &t.st);
    CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
    {
        static const float want[] = {12.0f / 9, 16.0f / 9, 24.0f / 9, 28.0f / 9};
        CHECK(values_are(tc_out(&t, 0), want, 4));
    }
    tc_end(&t);
    /* MaxPool with indices, column-major storage */
    tc_begin(&t, "MaxPool", 12, &x, 1, 2);
    attr_ints(t.n, "kernel_shape", 2, 2, 0, 0, 2);
    pfvm_node_set_attr_int(t.n, "storage_order", 1, &t.st);
    CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
    {
        static const float want[] = {5, 6, 8, 9}, idx[] = {4, 7, 5, 8};
        CHECK(values_are(tc_out(&t, 0), want, 4));
        CHECK(values_are(tc_out(&t, 1), idx, 4));
    }
    tc_end(&t);
    pfvm_tensor_free(x);
}

int main(void)
{
    test_infer_conv();
    test_infer_pool();
    test_conv_paths();
    test_depthwise_order();
    test_gap_paths();
    test_maxpool_paths();
    test_maxpool8_paths();
    test_matmul_paths();
    test_softmax_paths();
    test_lp_ops();
    test_roipool();
    test_batchnorm();
    test_layernorm_and_errors();
    test_pool_values();
    return CHECK_END();
}
