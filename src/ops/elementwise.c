/* ops/elementwise: unary math and activations, broadcasting binary and
 * variadic operators, comparisons and logic, Where, Clip, Cast.
 *
 * One engine serves them all: pfvm__ew_map walks the output once, computing
 * each input's offset from broadcast strides, and hands element runs to a
 * per-operator function. Values travel as double (floats) or int64 (ints)
 * between the load and store of each element type, so one scalar function
 * per operator covers every dtype. */
#include "ops_common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define PFVM__EW_MAX_IN 8

/* ---- element loads and stores ------------------------------------------------- */

static double pfvm__ew_ld(const void *p, pfvm_dtype t, int64_t i)
{
    return pfvm_tensor_get_f64(&(pfvm_tensor){.dtype = t, .data = (void *)p}, i);
}

static int64_t pfvm__ew_ldi(const void *p, pfvm_dtype t, int64_t i)
{
    return pfvm_tensor_get_i64(&(pfvm_tensor){.dtype = t, .data = (void *)p}, i);
}

static void pfvm__ew_st(void *p, pfvm_dtype t, int64_t i, double v)
{
    switch (t) {
    case PFVM_FLOAT: ((float *)p)[i] = (float)v; break;
    case PFVM_DOUBLE: ((double *)p)[i] = v; break;
    case PFVM_FLOAT16: ((uint16_t *)p)[i] = pfvm_float_to_half((float)v); break;
    case PFVM_BFLOAT16: ((uint16_t *)p)[i] = pfvm_float_to_bf16((float)v); break;
    case PFVM_BOOL: ((uint8_t *)p)[i] = v != 0; break;
    default: break;
    }
}

static void pfvm__ew_sti(void *p, pfvm_dtype t, int64_t i, int64_t v)
{
    switch (t) {
    case PFVM_INT64: ((int64_t *)p)[i] = v; break;
    case PFVM_INT32: ((int32_t *)p)[i] = (int32_t)v; break;
    case PFVM_INT16: ((int16_t *)p)[i] = (int16_t)v; break;
    case PFVM_INT8: ((int8_t *)p)[i] = (int8_t)v; break;
    case PFVM_UINT64: ((uint64_t *)p)[i] = (uint64_t)v; break;
    case PFVM_UINT32: ((uint32_t *)p)[i] = (uint32_t)v; break;
    case PFVM_UINT16: ((uint16_t *)p)[i] = (uint16_t)v; break;
    case PFVM_UINT8: ((uint8_t *)p)[i] = (uint8_t)v; break;
    case PFVM_BOOL: ((uint8_t *)p)[i] = v != 0; break;
    default: pfvm__ew_st(p, t, i, (double)v); break;
    }
}

/* ---- the broadcasting engine ---------------------------------------------------- */

/* Per-operator scalar functions. `p` carries the node's attributes. */
typedef struct pfvm__ew_params {
    double alpha, beta, gamma;
    int64_t mode;
} pfvm__ew_params;

typedef double (*pfvm__ew_f)(const double *x, const pfvm__ew_params *p);
typedef int64_t (*pfvm__ew_i)(const int64_t *x, const pfvm__ew_params *p, int is_unsigned);

/* Output element type rules. */
enum { PFVM__EW_SAME = 0, PFVM__EW_BOOL = 1 };

typedef struct pfvm__ew_op {
    pfvm__ew_f f;      /* float path (also used for ints when i is NULL) */
    pfvm__ew_i i;      /* integer path */
    int out;           /* PFVM__EW_SAME or PFVM__EW_BOOL */
    int compare_in_float; /* comparisons of ints go through i with bool out */
} pfvm__ew_op;

/* Strides of input `t` broadcast to an output of `rank` dims. */
static void pfvm__ew_strides(const pfvm_tensor *t, const pfvm_tensor *out, int64_t *st)
{
    int d, off = out->rank - t->rank;
    int64_t s = 1;
    for (d = out->rank - 1; d >= 0; d--) {
        int64_t dim = d >= off ? t->dims[d - off] : 1;
        st[d] = dim == 1 ? 0 : s;
        s *= dim;
    }
}

PFVM_INTERNAL pfvm_code pfvm_ew_apply(pfvm_kctx *k, const pfvm_tensor *const *in, int n, pfvm_tensor *out,
                                      pfvm_ew_fn fn, void *user)
{
    int64_t st[PFVM__EW_MAX_IN][PFVM_MAX_RANK], idx[PFVM_MAX_RANK], off[PFVM__EW_MAX_IN];
    int64_t total = pfvm_tensor_numel(out), pos = 0, inner;
    int j, d, r = out->rank;
    (void)k;
    if (n > PFVM__EW_MAX_IN)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_UNSUPPORTED, "too many inputs");
    for (j = 0; j < n; j++)
        pfvm__ew_strides(in[j], out, st[j]);
    memset(idx, 0, sizeof idx);
    inner = r ? out->dims[r - 1] : 1;
    if (total == 0)
        return PFVM_OK;
    while (pos < total) {
        int64_t istride[PFVM__EW_MAX_IN];
        for (j = 0; j < n; j++) {
            off[j] = 0;
            for (d = 0; d < r; d++)
                off[j] += idx[d] * st[j][d];
            istride[j] = r ? st[j][r - 1] : 0;
        }
        fn(user, pos, inner, off, istride);
        pos += inner;
        for (d = r - 2; d >= 0; d--) {
            if (++idx[d] < out->dims[d])
                break;
            idx[d] = 0;
        }
    }
    return PFVM_OK;
}

/* Run state of a generic element-wise kernel. */
typedef struct pfvm__ew_run {
    const pfvm_tensor *const *in;
    int n;
    pfvm_tensor *out;
    const pfvm__ew_op *op;
    pfvm__ew_params p;
    int int_path, is_unsigned;
} pfvm__ew_run;

static void pfvm__ew_span(void *user, int64_t pos, int64_t len, const int64_t *off, const int64_t *stride)
{
    pfvm__ew_run *r = (pfvm__ew_run *)user;
    int64_t e;
    int j;
    if (r->n == 1 && !r->int_path && r->in[0]->dtype == PFVM_FLOAT && r->out->dtype == PFVM_FLOAT) {
        /* the common case, without per-element dtype dispatch */
        const float *a = (const float *)r->in[0]->data + off[0];
        float *o = (float *)r->out->data + pos;
        for (e = 0; e < len; e++) {
            double x = a[e * stride[0]];
            o[e] = (float)r->op->f(&x, &r->p);
        }
        return;
    }
    if (r->n == 2 && !r->int_path && r->in[0]->dtype == PFVM_FLOAT && r->in[1]->dtype == PFVM_FLOAT &&
        r->out->dtype == PFVM_FLOAT) {
        const float *a = (const float *)r->in[0]->data + off[0], *b = (const float *)r->in[1]->data + off[1];
        float *o = (float *)r->out->data + pos;
        for (e = 0; e < len; e++) {
            double x[2];
            x[0] = a[e * stride[0]];
            x[1] = b[e * stride[1]];
            o[e] = (float)r->op->f(x, &r->p);
        }
        return;
    }
    for (e = 0; e < len; e++) {
        if (r->int_path) {
            int64_t x[PFVM__EW_MAX_IN], v;
            for (j = 0; j < r->n; j++)
                x[j] = pfvm__ew_ldi(r->in[j]->data, r->in[j]->dtype, off[j] + e * stride[j]);
            v = r->op->i(x, &r->p, r->is_unsigned);
            pfvm__ew_sti(r->out->data, r->out->dtype, pos + e, v);
        } else {
            double x[PFVM__EW_MAX_IN], v;
            for (j = 0; j < r->n; j++)
                x[j] = pfvm__ew_ld(r->in[j]->data, r->in[j]->dtype, off[j] + e * stride[j]);
            v = r->op->f(x, &r->p);
            if (pfvm_dtype_is_float(r->out->dtype) || r->out->dtype == PFVM_BOOL)
                pfvm__ew_st(r->out->data, r->out->dtype, pos + e, v);
            else
                pfvm__ew_sti(r->out->data, r->out->dtype, pos + e, (int64_t)v);
        }
    }
}

static void pfvm__ew_read_params(const pfvm_node *n, pfvm__ew_params *p, double alpha, double beta)
{
    p->alpha = pfvm_node_attr_float(n, "alpha", (float)alpha);
    p->beta = pfvm_node_attr_float(n, "beta", (float)beta);
    p->gamma = pfvm_node_attr_float(n, "gamma", 1.0507009873554804934193349852946f);
    p->mode = 0;
}

/* Opsets before 7 broadcast B against A with an explicit `axis`: B's dims
 * line up with A's starting there. Returns a view of B with A's rank. */
static const pfvm_tensor *pfvm__ew_legacy_view(const pfvm_node *n, const pfvm_tensor *a, const pfvm_tensor *b,
                                               pfvm_tensor *view)
{
    int64_t axis;
    int d;
    if (n->opset >= 7 || !pfvm_node_attr_int(n, "broadcast", 0) || !pfvm_node_attr(n, "axis"))
        return b;
    axis = pfvm_node_attr_int(n, "axis", 0);
    if (axis < 0)
        axis += a->rank;
    if (axis < 0 || axis + b->rank > a->rank)
        return b;
    *view = *b;
    view->rank = a->rank;
    for (d = 0; d < a->rank; d++)
        view->dims[d] = d >= axis && d < axis + b->rank ? b->dims[d - axis] : 1;
    return view;
}

static pfvm_code pfvm__ew_run_op(pfvm_kctx *k, const pfvm__ew_op *op, const pfvm__ew_params *p)
{
    pfvm__ew_run r;
    const pfvm_tensor *ins[PFVM__EW_MAX_IN];
    pfvm_tensor legacy;
    int j, n = 0;
    pfvm_dtype in_t;
    for (j = 0; j < k->n_in && n < PFVM__EW_MAX_IN; j++)
        if (k->in[j])
            ins[n++] = k->in[j];
    if (n == 2)
        ins[1] = pfvm__ew_legacy_view(k->node, ins[0], ins[1], &legacy);
    if (!n || !k->out[0])
        return PFVM_OK;
    in_t = ins[0]->dtype;
    if (in_t == PFVM_STRING)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_UNSUPPORTED, "string inputs are not supported");
    r.in = ins;
    r.n = n;
    r.out = k->out[0];
    r.op = op;
    r.p = *p;
    r.int_path = op->i && !pfvm_dtype_is_float(in_t);
    r.is_unsigned = !pfvm_dtype_is_signed(in_t);
    if (!r.int_path && !op->f)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_UNSUPPORTED, "element type %s is not supported",
                             pfvm_dtype_name(in_t));
    return pfvm_ew_apply(k, ins, n, k->out[0], pfvm__ew_span, &r);
}

/* ---- inference ----------------------------------------------------------------- */

static pfvm_code pfvm__ew_infer_unary(pfvm_ictx *c)
{
    return pfvm_infer_same_as(c, 0, 0);
}

PFVM_INTERNAL pfvm_code pfvm_ew_infer_broadcast_to(pfvm_ictx *c, pfvm_dtype dtype)
{
    const pfvm_shape *shapes[PFVM__EW_MAX_IN];
    pfvm_shape out;
    int j, n = 0;
    for (j = 0; j < c->n_in && n < PFVM__EW_MAX_IN; j++)
        if (c->in[j])
            shapes[n++] = &c->in[j]->type.shape;
    if (!n)
        return pfvm__fail(c->st, PFVM_ERR_INVALID, "no inputs");
    if (pfvm_infer_broadcast(c, shapes, n, &out))
        return c->st ? c->st->code : PFVM_ERR_SHAPE;
    if (c->out[0])
        pfvm_ival_set_tensor(c->out[0], dtype, &out);
    return PFVM_OK;
}

static pfvm_code pfvm__ew_infer_bcast(pfvm_ictx *c)
{
    int j;
    /* before opset 7 the output has A's shape (B broadcasts into it) */
    if (c->node->opset < 7 && c->n_in == 2 && pfvm_node_attr_int(c->node, "broadcast", 0))
        return pfvm_infer_same_as(c, 0, 0);
    for (j = 0; j < c->n_in; j++)
        if (c->in[j])
            return pfvm_ew_infer_broadcast_to(c, c->in[j]->type.dtype);
    return pfvm__fail(c->st, PFVM_ERR_INVALID, "no inputs");
}

/* Symbolic contents of input i as n entries (a scalar repeats), or 0. */
static int pfvm__ew_sym_vec(pfvm_ictx *c, int i, int n, const pfvm_sym **out)
{
    const pfvm_ival *v = c->in[i];
    int64_t tmp[64];
    int k, m;
    if (v->sym) {
        if (v->n_sym != n && v->n_sym != 1)
            return 0;
        for (k = 0; k < n; k++)
            out[k] = v->sym[v->n_sym == 1 ? 0 : k];
        return 1;
    }
    m = pfvm_ival_ints(v, tmp, 64);
    if (m < 0 || (m != n && m != 1))
        return 0;
    for (k = 0; k < n; k++)
        out[k] = pfvm_sym_const(c->syms, tmp[m == 1 ? 0 : k]);
    return 1;
}

/* Shape arithmetic: Add/Sub/Mul/Div of small integer vectors whose
 * contents are known symbolically (Shape -> Gather -> Mul -> Concat). */
static pfvm_code pfvm__ew_infer_arith(pfvm_ictx *c)
{
    pfvm_code rc = pfvm__ew_infer_bcast(c);
    const char *op = c->node->op_type;
    const pfvm_sym *a[64], *b[64], *r[64];
    int n = -1, k;
    if (rc || c->n_in != 2 || !c->out[0] || !pfvm_dtype_is_int(c->out[0]->type.dtype))
        return rc;
    if (!(c->in[0]->sym || c->in[0]->value) || !(c->in[1]->sym || c->in[1]->value))
        return PFVM_OK;
    n = c->in[0]->sym ? c->in[0]->n_sym : c->in[1]->sym ? c->in[1]->n_sym : 0;
    if (c->in[1]->sym && c->in[1]->n_sym > n)
        n = c->in[1]->n_sym;
    if (n < 1 || n > 64 || !pfvm__ew_sym_vec(c, 0, n, a) || !pfvm__ew_sym_vec(c, 1, n, b))
        return PFVM_OK;
    for (k = 0; k < n; k++) {
        if (!strcmp(op, "Add"))
            r[k] = pfvm_sym_add(c->syms, a[k], b[k]);
        else if (!strcmp(op, "Sub"))
            r[k] = pfvm_sym_sub(c->syms, a[k], b[k]);
        else if (!strcmp(op, "Mul"))
            r[k] = pfvm_sym_mul(c->syms, a[k], b[k]);
        else if (pfvm_sym_proven_nonneg(a[k]) && pfvm_sym_is_const(b[k], NULL) && b[k]->value > 0)
            r[k] = pfvm_sym_div(c->syms, a[k], b[k]); /* truncation = floor for non-negative values */
        else
            return PFVM_OK;
        if (!r[k])
            return PFVM_OK;
    }
    return pfvm_ival_set_sym(c, c->out[0], r, n);
}

static pfvm_code pfvm__ew_infer_bool(pfvm_ictx *c)
{
    return pfvm_ew_infer_broadcast_to(c, PFVM_BOOL);
}

/* Equal on shape values: true when provably equal, false when both are
 * different constants; anything else stays unknown. */
static pfvm_code pfvm__ew_infer_equal(pfvm_ictx *c)
{
    pfvm_code rc = pfvm_ew_infer_broadcast_to(c, PFVM_BOOL);
    const pfvm_sym *a[64], *b[64], *r[64];
    int n, k;
    if (rc || c->n_in != 2 || !c->out[0] || !(c->in[0]->sym || c->in[1]->sym))
        return rc;
    if (!pfvm_dtype_is_int(c->in[0]->type.dtype))
        return PFVM_OK;
    n = c->in[0]->sym ? c->in[0]->n_sym : c->in[1]->n_sym;
    if (c->in[1]->sym && c->in[1]->n_sym > n)
        n = c->in[1]->n_sym;
    if (n < 1 || n > 64 || !pfvm__ew_sym_vec(c, 0, n, a) || !pfvm__ew_sym_vec(c, 1, n, b))
        return PFVM_OK;
    for (k = 0; k < n; k++) {
        int64_t x, y;
        if (pfvm_sym_proven_eq(a[k], b[k]))
            r[k] = pfvm_sym_const(c->syms, 1);
        else if (pfvm_sym_is_const(a[k], &x) && pfvm_sym_is_const(b[k], &y))
            r[k] = pfvm_sym_const(c->syms, x == y);
        else if ((pfvm_sym_is_const(a[k], &x) && x == 0 && b[k]->pos) || (pfvm_sym_is_const(b[k], &y) && y == 0 && a[k]->pos))
            r[k] = pfvm_sym_const(c->syms, 0); /* a dim_param is >= 1 */
        else
            return PFVM_OK;
    }
    return pfvm_ival_set_sym(c, c->out[0], r, n);
}

/* ---- scalar functions --------------------------------------------------------- */

#define PFVM__EW_F(name, expr) \
    static double pfvm__ew_f_##name(const double *x, const pfvm__ew_params *p) { (void)p; return (expr); }
#define PFVM__EW_I(name, expr) \
    static int64_t pfvm__ew_i_##name(const int64_t *x, const pfvm__ew_params *p, int u) { (void)p; (void)u; return (expr); }

static double pfvm__ew_round_even(double v)
{
    double r = floor(v + 0.5);
    if (r - v == 0.5 && fmod(r, 2.0) != 0)
        r -= 1.0;
    return r;
}

static double pfvm__ew_sigmoid(double v)
{
    return v >= 0 ? 1.0 / (1.0 + exp(-v)) : exp(v) / (1.0 + exp(v));
}

static double pfvm__ew_softplus(double v)
{
    return v > 0 ? v + log1p(exp(-v)) : log1p(exp(v));
}

PFVM__EW_F(abs, fabs(x[0]))
PFVM__EW_I(abs, x[0] < 0 ? -x[0] : x[0])
PFVM__EW_F(neg, -x[0])
PFVM__EW_I(neg, -x[0])
PFVM__EW_F(exp, exp(x[0]))
PFVM__EW_F(log, log(x[0]))
PFVM__EW_F(sqrt, sqrt(x[0]))
PFVM__EW_F(reciprocal, 1.0 / x[0])
PFVM__EW_F(floor, floor(x[0]))
PFVM__EW_F(ceil, ceil(x[0]))
PFVM__EW_F(round, pfvm__ew_round_even(x[0]))
PFVM__EW_F(sign, x[0] > 0 ? 1.0 : x[0] < 0 ? -1.0 : 0.0)
PFVM__EW_I(sign, x[0] > 0 ? 1 : x[0] < 0 ? -1 : 0)
PFVM__EW_F(sin, sin(x[0]))
PFVM__EW_F(cos, cos(x[0]))
PFVM__EW_F(tan, tan(x[0]))
PFVM__EW_F(asin, asin(x[0]))
PFVM__EW_F(acos, acos(x[0]))
PFVM__EW_F(atan, atan(x[0]))
PFVM__EW_F(sinh, sinh(x[0]))
PFVM__EW_F(cosh, cosh(x[0]))
PFVM__EW_F(tanh, tanh(x[0]))
PFVM__EW_F(asinh, asinh(x[0]))
PFVM__EW_F(acosh, acosh(x[0]))
PFVM__EW_F(atanh, atanh(x[0]))
PFVM__EW_F(erf, erf(x[0]))
PFVM__EW_F(sigmoid, pfvm__ew_sigmoid(x[0]))
PFVM__EW_F(relu, x[0] > 0 ? x[0] : 0.0)
PFVM__EW_I(relu, x[0] > 0 ? x[0] : 0)
PFVM__EW_F(leakyrelu, x[0] >= 0 ? x[0] : p->alpha * x[0])
PFVM__EW_F(elu, x[0] >= 0 ? x[0] : p->alpha * (exp(x[0]) - 1.0))
PFVM__EW_F(selu, x[0] > 0 ? p->gamma * x[0] : p->gamma * (p->alpha * exp(x[0]) - p->alpha))
PFVM__EW_F(celu, (x[0] > 0 ? x[0] : 0.0) + fmin(0.0, p->alpha * (exp(x[0] / p->alpha) - 1.0)))
PFVM__EW_F(hardsigmoid, fmax(0.0, fmin(1.0, p->alpha * x[0] + p->beta)))
PFVM__EW_F(hardswish, x[0] * fmax(0.0, fmin(1.0, x[0] / 6.0 + 0.5)))
PFVM__EW_F(softplus, pfvm__ew_softplus(x[0]))
PFVM__EW_F(softsign, x[0] / (1.0 + fabs(x[0])))
PFVM__EW_F(mish, x[0] * tanh(pfvm__ew_softplus(x[0])))
PFVM__EW_F(thresholdedrelu, x[0] > p->alpha ? x[0] : 0.0)
PFVM__EW_F(shrink, x[0] < -p->alpha ? x[0] + p->beta : x[0] > p->alpha ? x[0] - p->beta : 0.0)
PFVM__EW_F(isnan, isnan(x[0]) ? 1.0 : 0.0)
PFVM__EW_F(isinf, isinf(x[0]) && ((x[0] > 0 && p->alpha != 0) || (x[0] < 0 && p->beta != 0)) ? 1.0 : 0.0)
PFVM__EW_I(not, !x[0])

PFVM__EW_F(add, x[0] + x[1])
PFVM__EW_I(add, (int64_t)((uint64_t)x[0] + (uint64_t)x[1]))
PFVM__EW_F(sub, x[0] - x[1])
PFVM__EW_I(sub, (int64_t)((uint64_t)x[0] - (uint64_t)x[1]))
PFVM__EW_F(mul, x[0] * x[1])
PFVM__EW_I(mul, (int64_t)((uint64_t)x[0] * (uint64_t)x[1]))
PFVM__EW_F(div, x[0] / x[1])
PFVM__EW_F(pow, pow(x[0], x[1]))
PFVM__EW_F(max, isnan(x[0]) || isnan(x[1]) ? NAN : fmax(x[0], x[1]))
PFVM__EW_F(min, isnan(x[0]) || isnan(x[1]) ? NAN : fmin(x[0], x[1]))
PFVM__EW_F(prelu, x[0] < 0 ? x[1] * x[0] : x[0])
PFVM__EW_F(equal, x[0] == x[1])
PFVM__EW_I(equal, x[0] == x[1])
PFVM__EW_F(greater, x[0] > x[1])
PFVM__EW_F(less, x[0] < x[1])
PFVM__EW_F(greater_equal, x[0] >= x[1])
PFVM__EW_F(less_equal, x[0] <= x[1])
PFVM__EW_I(and, x[0] && x[1])
PFVM__EW_I(or, x[0] || x[1])
PFVM__EW_I(xor, !x[0] != !x[1])
PFVM__EW_I(bitand, x[0] & x[1])
PFVM__EW_I(bitor, x[0] | x[1])
PFVM__EW_I(bitxor, x[0] ^ x[1])
PFVM__EW_I(bitnot, ~x[0])

/* Integer functions that depend on signedness. */
static int64_t pfvm__ew_i_div(const int64_t *x, const pfvm__ew_params *p, int u)
{
    (void)p;
    if (x[1] == 0)
        return 0; /* ONNX leaves it undefined; pfvm must not trap */
    if (u)
        return (int64_t)((uint64_t)x[0] / (uint64_t)x[1]);
    if (x[0] == INT64_MIN && x[1] == -1)
        return INT64_MIN;
    return x[0] / x[1];
}

static int64_t pfvm__ew_i_cmp(int64_t a, int64_t b, int u)
{
    if (u)
        return (uint64_t)a < (uint64_t)b ? -1 : (uint64_t)a > (uint64_t)b;
    return a < b ? -1 : a > b;
}

static int64_t pfvm__ew_i_greater(const int64_t *x, const pfvm__ew_params *p, int u) { (void)p; return pfvm__ew_i_cmp(x[0], x[1], u) > 0; }
static int64_t pfvm__ew_i_less(const int64_t *x, const pfvm__ew_params *p, int u) { (void)p; return pfvm__ew_i_cmp(x[0], x[1], u) < 0; }
static int64_t pfvm__ew_i_greater_equal(const int64_t *x, const pfvm__ew_params *p, int u) { (void)p; return pfvm__ew_i_cmp(x[0], x[1], u) >= 0; }
static int64_t pfvm__ew_i_less_equal(const int64_t *x, const pfvm__ew_params *p, int u) { (void)p; return pfvm__ew_i_cmp(x[0], x[1], u) <= 0; }
static int64_t pfvm__ew_i_max(const int64_t *x, const pfvm__ew_params *p, int u) { (void)p; return pfvm__ew_i_cmp(x[0], x[1], u) >= 0 ? x[0] : x[1]; }
static int64_t pfvm__ew_i_min(const int64_t *x, const pfvm__ew_params *p, int u) { (void)p; return pfvm__ew_i_cmp(x[0], x[1], u) <= 0 ? x[0] : x[1]; }

static int64_t pfvm__ew_i_pow(const int64_t *x, const pfvm__ew_params *p, int u)
{
    int64_t r = 1, b = x[0], e = x[1];
    (void)p;
    (void)u;
    if (e < 0)
        return b == 1 ? 1 : b == -1 ? (e % 2 ? -1 : 1) : 0;
    while (e) {
        if (e & 1)
            r = (int64_t)((uint64_t)r * (uint64_t)b);
        b = (int64_t)((uint64_t)b * (uint64_t)b);
        e >>= 1;
    }
    return r;
}

static int64_t pfvm__ew_i_mod(const int64_t *x, const pfvm__ew_params *p, int u)
{
    int64_t r;
    if (x[1] == 0)
        return 0;
    if (u)
        return (int64_t)((uint64_t)x[0] % (uint64_t)x[1]);
    if (x[1] == -1)
        return 0;
    r = x[0] % x[1];
    /* fmod=0: the sign of the divisor, like Python */
    if (!p->mode && r != 0 && ((r < 0) != (x[1] < 0)))
        r += x[1];
    return r;
}

static double pfvm__ew_f_mod(const double *x, const pfvm__ew_params *p)
{
    double r = fmod(x[0], x[1]);
    if (!p->mode && r != 0 && ((r < 0) != (x[1] < 0)))
        r += x[1];
    return r;
}

static int64_t pfvm__ew_i_bitshift(const int64_t *x, const pfvm__ew_params *p, int u)
{
    uint64_t v = (uint64_t)x[0], s = (uint64_t)x[1];
    (void)u;
    if (s >= 64)
        return 0;
    return (int64_t)(p->mode ? v >> s : v << s);
}

/* ---- kernels -------------------------------------------------------------------- */

#define PFVM__EW_KERNEL(name, fpath, ipath, alpha, beta)                              \
    static pfvm_code pfvm__ew_k_##name(pfvm_kctx *k)                                   \
    {                                                                                  \
        static const pfvm__ew_op op = {fpath, ipath, 0, 0};                             \
        pfvm__ew_params p;                                                             \
        pfvm__ew_read_params(k->node, &p, alpha, beta);                                \
        return pfvm__ew_run_op(k, &op, &p);                                            \
    }

PFVM__EW_KERNEL(abs, pfvm__ew_f_abs, pfvm__ew_i_abs, 0, 0)
PFVM__EW_KERNEL(neg, pfvm__ew_f_neg, pfvm__ew_i_neg, 0, 0)
PFVM__EW_KERNEL(exp, pfvm__ew_f_exp, NULL, 0, 0)
PFVM__EW_KERNEL(log, pfvm__ew_f_log, NULL, 0, 0)
PFVM__EW_KERNEL(sqrt, pfvm__ew_f_sqrt, NULL, 0, 0)
PFVM__EW_KERNEL(reciprocal, pfvm__ew_f_reciprocal, NULL, 0, 0)
PFVM__EW_KERNEL(floor, pfvm__ew_f_floor, NULL, 0, 0)
PFVM__EW_KERNEL(ceil, pfvm__ew_f_ceil, NULL, 0, 0)
PFVM__EW_KERNEL(round, pfvm__ew_f_round, NULL, 0, 0)
PFVM__EW_KERNEL(sign, pfvm__ew_f_sign, pfvm__ew_i_sign, 0, 0)
PFVM__EW_KERNEL(sin, pfvm__ew_f_sin, NULL, 0, 0)
PFVM__EW_KERNEL(cos, pfvm__ew_f_cos, NULL, 0, 0)
PFVM__EW_KERNEL(tan, pfvm__ew_f_tan, NULL, 0, 0)
PFVM__EW_KERNEL(asin, pfvm__ew_f_asin, NULL, 0, 0)
PFVM__EW_KERNEL(acos, pfvm__ew_f_acos, NULL, 0, 0)
PFVM__EW_KERNEL(atan, pfvm__ew_f_atan, NULL, 0, 0)
PFVM__EW_KERNEL(sinh, pfvm__ew_f_sinh, NULL, 0, 0)
PFVM__EW_KERNEL(cosh, pfvm__ew_f_cosh, NULL, 0, 0)
PFVM__EW_KERNEL(tanh, pfvm__ew_f_tanh, NULL, 0, 0)
PFVM__EW_KERNEL(asinh, pfvm__ew_f_asinh, NULL, 0, 0)
PFVM__EW_KERNEL(acosh, pfvm__ew_f_acosh, NULL, 0, 0)
PFVM__EW_KERNEL(atanh, pfvm__ew_f_atanh, NULL, 0, 0)
PFVM__EW_KERNEL(erf, pfvm__ew_f_erf, NULL, 0, 0)
PFVM__EW_KERNEL(sigmoid, pfvm__ew_f_sigmoid, NULL, 0, 0)
PFVM__EW_KERNEL(relu, pfvm__ew_f_relu, pfvm__ew_i_relu, 0, 0)
PFVM__EW_KERNEL(leakyrelu, pfvm__ew_f_leakyrelu, NULL, 0.01, 0)
PFVM__EW_KERNEL(elu, pfvm__ew_f_elu, NULL, 1.0, 0)
PFVM__EW_KERNEL(selu, pfvm__ew_f_selu, NULL, 1.67326319217681884765625, 0)
PFVM__EW_KERNEL(celu, pfvm__ew_f_celu, NULL, 1.0, 0)
PFVM__EW_KERNEL(hardsigmoid, pfvm__ew_f_hardsigmoid, NULL, 0.2, 0.5)
PFVM__EW_KERNEL(hardswish, pfvm__ew_f_hardswish, NULL, 0, 0)
PFVM__EW_KERNEL(softplus, pfvm__ew_f_softplus, NULL, 0, 0)
PFVM__EW_KERNEL(softsign, pfvm__ew_f_softsign, NULL, 0, 0)
PFVM__EW_KERNEL(mish, pfvm__ew_f_mish, NULL, 0, 0)
PFVM__EW_KERNEL(thresholdedrelu, pfvm__ew_f_thresholdedrelu, NULL, 1.0, 0)
PFVM__EW_KERNEL(not, NULL, pfvm__ew_i_not, 0, 0)
PFVM__EW_KERNEL(bitnot, NULL, pfvm__ew_i_bitnot, 0, 0)
PFVM__EW_KERNEL(add, pfvm__ew_f_add, pfvm__ew_i_add, 0, 0)
PFVM__EW_KERNEL(sub, pfvm__ew_f_sub, pfvm__ew_i_sub, 0, 0)
PFVM__EW_KERNEL(mul, pfvm__ew_f_mul, pfvm__ew_i_mul, 0, 0)
PFVM__EW_KERNEL(div, pfvm__ew_f_div, pfvm__ew_i_div, 0, 0)
PFVM__EW_KERNEL(equal, pfvm__ew_f_equal, pfvm__ew_i_equal, 0, 0)
PFVM__EW_KERNEL(greater, pfvm__ew_f_greater, pfvm__ew_i_greater, 0, 0)
PFVM__EW_KERNEL(less, pfvm__ew_f_less, pfvm__ew_i_less, 0, 0)
PFVM__EW_KERNEL(greater_equal, pfvm__ew_f_greater_equal, pfvm__ew_i_greater_equal, 0, 0)
PFVM__EW_KERNEL(less_equal, pfvm__ew_f_less_equal, pfvm__ew_i_less_equal, 0, 0)
PFVM__EW_KERNEL(and, NULL, pfvm__ew_i_and, 0, 0)
PFVM__EW_KERNEL(or, NULL, pfvm__ew_i_or, 0, 0)
PFVM__EW_KERNEL(xor, NULL, pfvm__ew_i_xor, 0, 0)
PFVM__EW_KERNEL(bitand, NULL, pfvm__ew_i_bitand, 0, 0)
PFVM__EW_KERNEL(bitor, NULL, pfvm__ew_i_bitor, 0, 0)
PFVM__EW_KERNEL(bitxor, NULL, pfvm__ew_i_bitxor, 0, 0)

/* PRelu before opset 7 takes one slope per channel (dim 1); later opsets
 * broadcast the slope numpy-style. */
static pfvm_code pfvm__ew_k_prelu(pfvm_kctx *k)
{
    static const pfvm__ew_op op = {pfvm__ew_f_prelu, NULL, 0, 0};
    const pfvm_tensor *x = k->in[0], *slope = k->in[1];
    pfvm_tensor view;
    pfvm__ew_params p;
    pfvm_kctx k2 = *k;
    const pfvm_tensor *ins[2];
    memset(&p, 0, sizeof p);
    if (k->node->opset < 7 && slope->rank == 1 && x->rank >= 2 && slope->dims[0] == x->dims[1]) {
        int d;
        view = *slope;
        view.rank = x->rank - 1;
        for (d = 0; d < view.rank; d++)
            view.dims[d] = d == 0 ? slope->dims[0] : 1;
        ins[0] = x;
        ins[1] = &view;
        k2.in = ins;
    }
    return pfvm__ew_run_op(&k2, &op, &p);
}

static pfvm_code pfvm__ew_k_shrink(pfvm_kctx *k)
{
    static const pfvm__ew_op op = {pfvm__ew_f_shrink, NULL, 0, 0};
    pfvm__ew_params p;
    pfvm__ew_read_params(k->node, &p, 0, 0);
    p.alpha = pfvm_node_attr_float(k->node, "lambd", 0.5f);
    p.beta = pfvm_node_attr_float(k->node, "bias", 0.0f);
    return pfvm__ew_run_op(k, &op, &p);
}

static pfvm_code pfvm__ew_k_isnan(pfvm_kctx *k)
{
    static const pfvm__ew_op op = {pfvm__ew_f_isnan, NULL, 0, 0};
    pfvm__ew_params p;
    pfvm__ew_read_params(k->node, &p, 0, 0);
    return pfvm__ew_run_op(k, &op, &p);
}

static pfvm_code pfvm__ew_k_isinf(pfvm_kctx *k)
{
    static const pfvm__ew_op op = {pfvm__ew_f_isinf, NULL, 0, 0};
    pfvm__ew_params p;
    pfvm__ew_read_params(k->node, &p, 0, 0);
    p.alpha = (double)pfvm_node_attr_int(k->node, "detect_positive", 1);
    p.beta = (double)pfvm_node_attr_int(k->node, "detect_negative", 1);
    return pfvm__ew_run_op(k, &op, &p);
}

static pfvm_code pfvm__ew_k_pow(pfvm_kctx *k)
{
    /* integer path only when the base is an integer: 2 ** 0.5 is a float */
    static const pfvm__ew_op fop = {pfvm__ew_f_pow, NULL, 0, 0}, iop = {pfvm__ew_f_pow, pfvm__ew_i_pow, 0, 0};
    pfvm__ew_params p;
    pfvm__ew_read_params(k->node, &p, 0, 0);
    return pfvm__ew_run_op(k, pfvm_dtype_is_float(k->in[1]->dtype) ? &fop : &iop, &p);
}

static pfvm_code pfvm__ew_k_mod(pfvm_kctx *k)
{
    static const pfvm__ew_op op = {pfvm__ew_f_mod, pfvm__ew_i_mod, 0, 0};
    pfvm__ew_params p;
    pfvm__ew_read_params(k->node, &p, 0, 0);
    p.mode = pfvm_node_attr_int(k->node, "fmod", 0);
    return pfvm__ew_run_op(k, &op, &p);
}

static pfvm_code pfvm__ew_k_bitshift(pfvm_kctx *k)
{
    static const pfvm__ew_op op = {NULL, pfvm__ew_i_bitshift, 0, 0};
    pfvm__ew_params p;
    const char *dir = pfvm_node_attr_string(k->node, "direction", "");
    pfvm__ew_read_params(k->node, &p, 0, 0);
    if (strcmp(dir, "LEFT") && strcmp(dir, "RIGHT"))
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "direction must be LEFT or RIGHT");
    p.mode = !strcmp(dir, "RIGHT");
    return pfvm__ew_run_op(k, &op, &p);
}

/* Variadic Sum/Mean/Max/Min: fold the inputs pairwise into the output, the
 * first step reading input 0 and 1, later steps the output and input j. */
static pfvm_code pfvm__ew_fold(pfvm_kctx *k, const pfvm__ew_op *op, int mean)
{
    pfvm__ew_run r;
    const pfvm_tensor *pair[2];
    pfvm_tensor *out = k->out[0];
    int j;
    memset(&r, 0, sizeof r);
    r.out = out;
    r.op = op;
    r.int_path = op->i && !pfvm_dtype_is_float(out->dtype);
    r.is_unsigned = !pfvm_dtype_is_signed(out->dtype);
    r.n = 2;
    r.in = pair;
    if (k->n_in == 1) {
        /* one input: the output is that input (same shape by inference) */
        if (out->nbytes && k->in[0]->nbytes == out->nbytes)
            memcpy(out->data, k->in[0]->data, out->nbytes);
    } else {
        pair[0] = k->in[0];
        pair[1] = k->in[1];
        if (pfvm_ew_apply(k, pair, 2, out, pfvm__ew_span, &r))
            return k->st ? k->st->code : PFVM_ERR_RUNTIME;
        for (j = 2; j < k->n_in; j++) {
            pair[0] = out;
            pair[1] = k->in[j];
            if (pfvm_ew_apply(k, pair, 2, out, pfvm__ew_span, &r))
                return k->st ? k->st->code : PFVM_ERR_RUNTIME;
        }
    }
    if (mean) {
        int64_t i, n = pfvm_tensor_numel(out);
        for (i = 0; i < n; i++)
            pfvm__ew_st(out->data, out->dtype, i, pfvm__ew_ld(out->data, out->dtype, i) / k->n_in);
    }
    return PFVM_OK;
}

static pfvm_code pfvm__ew_k_sum(pfvm_kctx *k)
{
    static const pfvm__ew_op op = {pfvm__ew_f_add, pfvm__ew_i_add, 0, 0};
    return pfvm__ew_fold(k, &op, 0);
}

static pfvm_code pfvm__ew_k_mean(pfvm_kctx *k)
{
    static const pfvm__ew_op op = {pfvm__ew_f_add, pfvm__ew_i_add, 0, 0};
    return pfvm__ew_fold(k, &op, 1);
}

static pfvm_code pfvm__ew_k_max(pfvm_kctx *k)
{
    static const pfvm__ew_op op = {pfvm__ew_f_max, pfvm__ew_i_max, 0, 0};
    return pfvm__ew_fold(k, &op, 0);
}

static pfvm_code pfvm__ew_k_min(pfvm_kctx *k)
{
    static const pfvm__ew_op op = {pfvm__ew_f_min, pfvm__ew_i_min, 0, 0};
    return pfvm__ew_fold(k, &op, 0);
}

/* ---- Where, Clip ------------------------------------------------------------------- */

typedef struct pfvm__ew_where {
    const pfvm_tensor *const *in;
    pfvm_tensor *out;
    size_t es;
} pfvm__ew_where;

static void pfvm__ew_where_span(void *user, int64_t pos, int64_t len, const int64_t *off, const int64_t *stride)
{
    pfvm__ew_where *w = (pfvm__ew_where *)user;
    const uint8_t *c = (const uint8_t *)w->in[0]->data;
    int64_t e;
    for (e = 0; e < len; e++) {
        int pick = c[off[0] + e * stride[0]] ? 1 : 2;
        int64_t src = off[pick] + e * stride[pick];
        if (w->out->dtype == PFVM_STRING) {
            const char *s = ((char *const *)w->in[pick]->data)[src];
            ((char **)w->out->data)[pos + e] = pfvm__strdup(s ? s : "");
        } else {
            memcpy((char *)w->out->data + (size_t)(pos + e) * w->es, (const char *)w->in[pick]->data + (size_t)src * w->es,
                   w->es);
        }
    }
}

static pfvm_code pfvm__ew_k_where(pfvm_kctx *k)
{
    pfvm__ew_where w;
    w.in = k->in;
    w.out = k->out[0];
    w.es = pfvm_dtype_size(k->out[0]->dtype);
    return pfvm_ew_apply(k, k->in, 3, k->out[0], pfvm__ew_where_span, &w);
}

static pfvm_code pfvm__ew_infer_where(pfvm_ictx *c)
{
    return pfvm_ew_infer_broadcast_to(c, c->in[1]->type.dtype);
}

static pfvm_code pfvm__ew_k_clip(pfvm_kctx *k)
{
    const pfvm_tensor *x = k->in[0];
    pfvm_tensor *out = k->out[0];
    int64_t i, n = pfvm_tensor_numel(x);
    int is_f = pfvm_dtype_is_float(x->dtype);
    double lo = -INFINITY, hi = INFINITY;
    int64_t ilo = INT64_MIN, ihi = INT64_MAX;
    if (k->node->opset < 11) {
        lo = pfvm_node_attr_float(k->node, "min", -3.402823e+38f);
        hi = pfvm_node_attr_float(k->node, "max", 3.402823e+38f);
    } else {
        if (k->n_in > 1 && k->in[1] && pfvm_tensor_numel(k->in[1]) > 0) {
            lo = pfvm_tensor_get_f64(k->in[1], 0);
            ilo = pfvm_tensor_get_i64(k->in[1], 0);
        }
        if (k->n_in > 2 && k->in[2] && pfvm_tensor_numel(k->in[2]) > 0) {
            hi = pfvm_tensor_get_f64(k->in[2], 0);
            ihi = pfvm_tensor_get_i64(k->in[2], 0);
        }
    }
    for (i = 0; i < n; i++) {
        if (is_f) {
            double v = pfvm__ew_ld(x->data, x->dtype, i);
            v = v < lo ? lo : v > hi ? hi : v;
            pfvm__ew_st(out->data, out->dtype, i, v);
        } else {
            int64_t v = pfvm__ew_ldi(x->data, x->dtype, i);
            if (pfvm_dtype_is_signed(x->dtype) || x->dtype == PFVM_BOOL) {
                v = v < ilo ? ilo : v > ihi ? ihi : v;
            } else {
                if (ilo != INT64_MIN && (uint64_t)v < (uint64_t)ilo)
                    v = ilo;
                if (ihi != INT64_MAX && (uint64_t)v > (uint64_t)ihi)
                    v = ihi;
            }
            pfvm__ew_sti(out->data, out->dtype, i, v);
        }
    }
    return PFVM_OK;
}

/* ---- Cast ---------------------------------------------------------------------------- */

/* Shortest text that reads back as the same float (numpy's str()). */
static void pfvm__ew_float_text(double v, int is_double, char *buf, size_t n)
{
    int prec;
    if (isnan(v)) {
        snprintf(buf, n, "NaN");
        return;
    }
    if (isinf(v)) {
        snprintf(buf, n, v > 0 ? "INF" : "-INF");
        return;
    }
    for (prec = 1; prec <= 17; prec++) {
        snprintf(buf, n, "%.*g", prec, v);
        if (is_double ? strtod(buf, NULL) == v : (float)strtod(buf, NULL) == (float)v)
            break;
    }
}

static pfvm_code pfvm__ew_cast(pfvm_kctx *k, pfvm_dtype to)
{
    const pfvm_tensor *x = k->in[0];
    pfvm_tensor *out = k->out[0];
    int64_t i, n = pfvm_tensor_numel(x);
    char buf[64];
    if (out->dtype != to)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "output type does not match 'to'");
    for (i = 0; i < n; i++) {
        if (x->dtype == PFVM_STRING) {
            const char *s = ((char *const *)x->data)[i];
            if (pfvm_dtype_is_float(to))
                pfvm__ew_st(out->data, to, i, strtod(s ? s : "", NULL));
            else if (to == PFVM_STRING)
                ((char **)out->data)[i] = pfvm__strdup(s ? s : "");
            else
                pfvm__ew_sti(out->data, to, i, strtoll(s ? s : "", NULL, 10));
        } else if (to == PFVM_STRING) {
            if (pfvm_dtype_is_float(x->dtype))
                pfvm__ew_float_text(pfvm__ew_ld(x->data, x->dtype, i), x->dtype == PFVM_DOUBLE, buf, sizeof buf);
            else if (x->dtype == PFVM_UINT64)
                snprintf(buf, sizeof buf, "%llu", (unsigned long long)pfvm__ew_ldi(x->data, x->dtype, i));
            else
                snprintf(buf, sizeof buf, "%lld", (long long)pfvm__ew_ldi(x->data, x->dtype, i));
            ((char **)out->data)[i] = pfvm__strdup(buf);
            if (!((char **)out->data)[i])
                return pfvm__op_fail(k->st, k->node, PFVM_ERR_NOMEM, "out of memory");
        } else if (pfvm_dtype_is_float(x->dtype)) {
            double v = pfvm__ew_ld(x->data, x->dtype, i);
            if (pfvm_dtype_is_float(to) || to == PFVM_BOOL)
                pfvm__ew_st(out->data, to, i, v);
            else
                pfvm__ew_sti(out->data, to, i, isnan(v) ? 0 : v >= 9.2e18 ? INT64_MAX : v <= -9.2e18 ? INT64_MIN : (int64_t)v);
        } else {
            int64_t v = pfvm__ew_ldi(x->data, x->dtype, i);
            if (pfvm_dtype_is_float(to))
                pfvm__ew_st(out->data, to, i, x->dtype == PFVM_UINT64 ? (double)(uint64_t)v : (double)v);
            else
                pfvm__ew_sti(out->data, to, i, v);
        }
    }
    return PFVM_OK;
}

static int pfvm__ew_supported_cast(pfvm_dtype t)
{
    return t != PFVM_UNDEFINED && t < PFVM_COMPLEX64 ? 1 : t == PFVM_BFLOAT16;
}

static pfvm_code pfvm__ew_k_cast(pfvm_kctx *k)
{
    pfvm_dtype to = (pfvm_dtype)pfvm_node_attr_int(k->node, "to", 0);
    if (!pfvm__ew_supported_cast(to) || !pfvm__ew_supported_cast(k->in[0]->dtype))
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_UNSUPPORTED, "cast from %s to %s is not supported",
                             pfvm_dtype_name(k->in[0]->dtype), pfvm_dtype_name(to));
    return pfvm__ew_cast(k, to);
}

static pfvm_code pfvm__ew_k_castlike(pfvm_kctx *k)
{
    return pfvm__ew_cast(k, k->in[1]->dtype);
}

static pfvm_code pfvm__ew_infer_cast(pfvm_ictx *c)
{
    int64_t to = pfvm_node_attr_int(c->node, "to", 0);
    if (to <= 0 || to >= PFVM_DTYPE_COUNT)
        return pfvm__fail(c->st, PFVM_ERR_INVALID, "attribute 'to' is not a valid element type (%lld)", (long long)to);
    pfvm_ival_set_tensor(c->out[0], (pfvm_dtype)to, &c->in[0]->type.shape);
    /* casts of shape values keep their symbolic contents */
    if (c->in[0]->sym && pfvm_dtype_is_int((pfvm_dtype)to))
        return pfvm_ival_set_sym(c, c->out[0], c->in[0]->sym, c->in[0]->n_sym);
    if (c->in[0]->sym && to == PFVM_BOOL && c->in[0]->n_sym <= 64) {
        const pfvm_sym *r[64];
        int k;
        for (k = 0; k < c->in[0]->n_sym; k++) {
            int64_t x;
            if (!pfvm_sym_is_const(c->in[0]->sym[k], &x))
                return PFVM_OK;
            r[k] = pfvm_sym_const(c->syms, x != 0);
        }
        return pfvm_ival_set_sym(c, c->out[0], r, c->in[0]->n_sym);
    }
    return PFVM_OK;
}

static pfvm_code pfvm__ew_infer_castlike(pfvm_ictx *c)
{
    pfvm_ival_set_tensor(c->out[0], c->in[1]->type.dtype, &c->in[0]->type.shape);
    return PFVM_OK;
}

/* ---- the table ------------------------------------------------------------------------- */

#define PFVM__EW_FLOATS "float,double,float16,bfloat16"
#define PFVM__EW_NUMERIC "float,double,float16,bfloat16,int8,int16,int32,int64,uint8,uint16,uint32,uint64"
#define PFVM__EW_U(name, since, kern, types) \
    {name, "", since, 0, 1, 1, 1, 1, pfvm__ew_infer_unary, kern, NULL, PFVM_FUSE_ELEMENTWISE, types, NULL, 0}
#define PFVM__EW_B(name, since, kern, infer, types) \
    {name, "", since, 0, 2, 2, 1, 1, infer, kern, NULL, PFVM_FUSE_BROADCAST, types, NULL, 0}
#define PFVM__EW_V(name, since, kern, types) \
    {name, "", since, 0, 1, -1, 1, 1, pfvm__ew_infer_bcast, kern, NULL, PFVM_FUSE_BROADCAST, types, NULL, 0}

const pfvm_op_def pfvm__ops_elementwise[] = {
    PFVM__EW_U("Abs", 1, pfvm__ew_k_abs, PFVM__EW_NUMERIC),
    PFVM__EW_U("Neg", 1, pfvm__ew_k_neg, "float,double,float16,bfloat16,int8,int16,int32,int64"),
    PFVM__EW_U("Exp", 1, pfvm__ew_k_exp, PFVM__EW_FLOATS),
    PFVM__EW_U("Log", 1, pfvm__ew_k_log, PFVM__EW_FLOATS),
    PFVM__EW_U("Sqrt", 1, pfvm__ew_k_sqrt, PFVM__EW_FLOATS),
    PFVM__EW_U("Reciprocal", 1, pfvm__ew_k_reciprocal, PFVM__EW_FLOATS),
    PFVM__EW_U("Floor", 1, pfvm__ew_k_floor, PFVM__EW_FLOATS),
    PFVM__EW_U("Ceil", 1, pfvm__ew_k_ceil, PFVM__EW_FLOATS),
    PFVM__EW_U("Round", 11, pfvm__ew_k_round, PFVM__EW_FLOATS),
    PFVM__EW_U("Sign", 9, pfvm__ew_k_sign, PFVM__EW_NUMERIC),
    PFVM__EW_U("Sin", 7, pfvm__ew_k_sin, PFVM__EW_FLOATS),
    PFVM__EW_U("Cos", 7, pfvm__ew_k_cos, PFVM__EW_FLOATS),
    PFVM__EW_U("Tan", 7, pfvm__ew_k_tan, PFVM__EW_FLOATS),
    PFVM__EW_U("Asin", 7, pfvm__ew_k_asin, PFVM__EW_FLOATS),
    PFVM__EW_U("Acos", 7, pfvm__ew_k_acos, PFVM__EW_FLOATS),
    PFVM__EW_U("Atan", 7, pfvm__ew_k_atan, PFVM__EW_FLOATS),
    PFVM__EW_U("Sinh", 9, pfvm__ew_k_sinh, PFVM__EW_FLOATS),
    PFVM__EW_U("Cosh", 9, pfvm__ew_k_cosh, PFVM__EW_FLOATS),
    PFVM__EW_U("Tanh", 1, pfvm__ew_k_tanh, PFVM__EW_FLOATS),
    PFVM__EW_U("Asinh", 9, pfvm__ew_k_asinh, PFVM__EW_FLOATS),
    PFVM__EW_U("Acosh", 9, pfvm__ew_k_acosh, PFVM__EW_FLOATS),
    PFVM__EW_U("Atanh", 9, pfvm__ew_k_atanh, PFVM__EW_FLOATS),
    PFVM__EW_U("Erf", 9, pfvm__ew_k_erf, PFVM__EW_NUMERIC),
    PFVM__EW_U("Sigmoid", 1, pfvm__ew_k_sigmoid, PFVM__EW_FLOATS),
    PFVM__EW_U("Relu", 1, pfvm__ew_k_relu, "float,double,float16,bfloat16,int8,int16,int32,int64"),
    PFVM__EW_U("LeakyRelu", 1, pfvm__ew_k_leakyrelu, PFVM__EW_FLOATS),
    PFVM__EW_U("Elu", 1, pfvm__ew_k_elu, PFVM__EW_FLOATS),
    PFVM__EW_U("Selu", 1, pfvm__ew_k_selu, PFVM__EW_FLOATS),
    PFVM__EW_U("Celu", 12, pfvm__ew_k_celu, PFVM__EW_FLOATS),
    PFVM__EW_U("HardSigmoid", 1, pfvm__ew_k_hardsigmoid, PFVM__EW_FLOATS),
    PFVM__EW_U("HardSwish", 14, pfvm__ew_k_hardswish, PFVM__EW_FLOATS),
    PFVM__EW_U("Softplus", 1, pfvm__ew_k_softplus, PFVM__EW_FLOATS),
    PFVM__EW_U("Softsign", 1, pfvm__ew_k_softsign, PFVM__EW_FLOATS),
    PFVM__EW_U("Mish", 18, pfvm__ew_k_mish, PFVM__EW_FLOATS),
    PFVM__EW_U("ThresholdedRelu", 10, pfvm__ew_k_thresholdedrelu, PFVM__EW_FLOATS),
    PFVM__EW_U("Shrink", 9, pfvm__ew_k_shrink, PFVM__EW_NUMERIC),
    {"IsNaN", "", 9, 0, 1, 1, 1, 1, pfvm__ew_infer_bool, pfvm__ew_k_isnan, NULL, PFVM_FUSE_ELEMENTWISE, PFVM__EW_FLOATS, NULL, 0},
    {"IsInf", "", 10, 0, 1, 1, 1, 1, pfvm__ew_infer_bool, pfvm__ew_k_isinf, NULL, PFVM_FUSE_ELEMENTWISE, PFVM__EW_FLOATS, NULL, 0},
    PFVM__EW_U("Not", 1, pfvm__ew_k_not, "bool"),
    PFVM__EW_U("BitwiseNot", 18, pfvm__ew_k_bitnot, "int8,int16,int32,int64,uint8,uint16,uint32,uint64"),
    PFVM__EW_B("Add", 1, pfvm__ew_k_add, pfvm__ew_infer_arith, PFVM__EW_NUMERIC),
    PFVM__EW_B("Sub", 1, pfvm__ew_k_sub, pfvm__ew_infer_arith, PFVM__EW_NUMERIC),
    PFVM__EW_B("Mul", 1, pfvm__ew_k_mul, pfvm__ew_infer_arith, PFVM__EW_NUMERIC),
    PFVM__EW_B("Div", 1, pfvm__ew_k_div, pfvm__ew_infer_arith, PFVM__EW_NUMERIC),
    PFVM__EW_B("Pow", 1, pfvm__ew_k_pow, pfvm__ew_infer_bcast, PFVM__EW_NUMERIC),
    PFVM__EW_B("Mod", 10, pfvm__ew_k_mod, pfvm__ew_infer_bcast, PFVM__EW_NUMERIC),
    PFVM__EW_B("BitShift", 11, pfvm__ew_k_bitshift, pfvm__ew_infer_bcast, "uint8,uint16,uint32,uint64"),
    {"PRelu", "", 1, 0, 2, 2, 1, 1, pfvm_infer_same_as_first, pfvm__ew_k_prelu, NULL, PFVM_FUSE_BROADCAST, PFVM__EW_FLOATS, NULL, 0},
    PFVM__EW_B("Equal", 1, pfvm__ew_k_equal, pfvm__ew_infer_equal, "bool," PFVM__EW_NUMERIC),
    PFVM__EW_B("Greater", 1, pfvm__ew_k_greater, pfvm__ew_infer_bool, PFVM__EW_NUMERIC),
    PFVM__EW_B("Less", 1, pfvm__ew_k_less, pfvm__ew_infer_bool, PFVM__EW_NUMERIC),
    PFVM__EW_B("GreaterOrEqual", 12, pfvm__ew_k_greater_equal, pfvm__ew_infer_bool, PFVM__EW_NUMERIC),
    PFVM__EW_B("LessOrEqual", 12, pfvm__ew_k_less_equal, pfvm__ew_infer_bool, PFVM__EW_NUMERIC),
    PFVM__EW_B("And", 1, pfvm__ew_k_and, pfvm__ew_infer_bool, "bool"),
    PFVM__EW_B("Or", 1, pfvm__ew_k_or, pfvm__ew_infer_bool, "bool"),
    PFVM__EW_B("Xor", 1, pfvm__ew_k_xor, pfvm__ew_infer_bool, "bool"),
    PFVM__EW_B("BitwiseAnd", 18, pfvm__ew_k_bitand, pfvm__ew_infer_bcast, "int8,int16,int32,int64,uint8,uint16,uint32,uint64"),
    PFVM__EW_B("BitwiseOr", 18, pfvm__ew_k_bitor, pfvm__ew_infer_bcast, "int8,int16,int32,int64,uint8,uint16,uint32,uint64"),
    PFVM__EW_B("BitwiseXor", 18, pfvm__ew_k_bitxor, pfvm__ew_infer_bcast, "int8,int16,int32,int64,uint8,uint16,uint32,uint64"),
    PFVM__EW_V("Sum", 1, pfvm__ew_k_sum, PFVM__EW_FLOATS),
    PFVM__EW_V("Mean", 1, pfvm__ew_k_mean, PFVM__EW_FLOATS),
    PFVM__EW_V("Max", 1, pfvm__ew_k_max, PFVM__EW_NUMERIC),
    PFVM__EW_V("Min", 1, pfvm__ew_k_min, PFVM__EW_NUMERIC),
    {"Where", "", 9, 0, 3, 3, 1, 1, pfvm__ew_infer_where, pfvm__ew_k_where, NULL, PFVM_FUSE_BROADCAST, "any", NULL, 0},
    {"Clip", "", 6, 0, 1, 3, 1, 1, pfvm__ew_infer_unary, pfvm__ew_k_clip, NULL, PFVM_FUSE_ELEMENTWISE, PFVM__EW_NUMERIC, NULL, 0},
    {"Cast", "", 6, 0, 1, 1, 1, 1, pfvm__ew_infer_cast, pfvm__ew_k_cast, NULL, PFVM_FUSE_ELEMENTWISE, "bool,string," PFVM__EW_NUMERIC, NULL, 0},
    {"CastLike", "", 15, 0, 2, 2, 1, 1, pfvm__ew_infer_castlike, pfvm__ew_k_castlike, NULL, PFVM_FUSE_ELEMENTWISE, "bool,string," PFVM__EW_NUMERIC, NULL, 0},
    {NULL, NULL, 0, 0, 0, 0, 0, 0, NULL, NULL, NULL, PFVM_FUSE_OPAQUE, NULL, NULL, 0}
};
