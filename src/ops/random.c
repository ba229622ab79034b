/* ops/random: random generators — RandomUniform, RandomNormal, their
 * *Like forms, Bernoulli, Multinomial — drawing from the executor's
 * generator (pfvm_kctx_random; the `seed` attribute restarts it). They are
 * flagged nondeterministic, so the planner never folds them, and a run that
 * used them reports it (pfvm_exec_was_random). */
#include "ops_common.h"

#include <math.h>

static double pfvm__rnd_unit(pfvm_kctx *k)
{
    return (double)(pfvm_kctx_random(k) >> 11) * (1.0 / 9007199254740992.0);
}

static double pfvm__rnd_normal(pfvm_kctx *k)
{
    double u = pfvm__rnd_unit(k), v = pfvm__rnd_unit(k);
    return sqrt(-2.0 * log(u > 0 ? u : 1e-300)) * cos(2 * 3.14159265358979323846 * v);
}

static uint32_t pfvm__rnd_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static void pfvm__rnd_seed(pfvm_kctx *k)
{
    const pfvm_attr *s = pfvm_node_attr(k->node, "seed");
    if (s && s->type == PFVM_ATTR_FLOAT)
        /* the float's value as an integer seed; one outside int64's range
         * (or NaN) would be an undefined conversion, so it seeds by its bits */
        pfvm_kctx_seed(k, s->f >= -9.2e18f && s->f <= 9.2e18f ? (uint64_t)(int64_t)s->f : (uint64_t)pfvm__rnd_bits(s->f));
}

/* dtype attribute, or the input's (Like forms), or float. */
static pfvm_dtype pfvm__rnd_dtype(const pfvm_node *n, pfvm_dtype like)
{
    int64_t d = pfvm_node_attr_int(n, "dtype", 0);
    return d > 0 && d < PFVM_DTYPE_COUNT ? (pfvm_dtype)d : like ? like : PFVM_FLOAT;
}

static pfvm_code pfvm__rnd_infer_shape_attr(pfvm_ictx *c)
{
    const int64_t *s;
    int n = pfvm_node_attr_ints(c->node, "shape", &s), i;
    pfvm_shape out;
    if (n < 0 || n > PFVM_MAX_RANK)
        return pfvm__fail(c->st, PFVM_ERR_INVALID, "attribute 'shape' is missing or too long");
    for (i = 0; i < n; i++)
        if (s[i] < 0)
            return pfvm__fail(c->st, PFVM_ERR_INVALID, "negative dimension in 'shape'");
    if (pfvm_shape_from_dims(c->syms, &out, n, s, c->st))
        return c->st ? c->st->code : PFVM_ERR_NOMEM;
    pfvm_ival_set_tensor(c->out[0], pfvm__rnd_dtype(c->node, PFVM_UNDEFINED), &out);
    return PFVM_OK;
}

static pfvm_code pfvm__rnd_infer_like(pfvm_ictx *c)
{
    pfvm_ival_set_tensor(c->out[0], pfvm__rnd_dtype(c->node, c->in[0]->type.dtype), &c->in[0]->type.shape);
    return PFVM_OK;
}

/* Bernoulli: the input holds probabilities (a float type). */
static pfvm_code pfvm__rnd_infer_bernoulli(pfvm_ictx *c)
{
    pfvm_dtype dt = c->in[0]->type.dtype;
    if (dt != PFVM_UNDEFINED && !pfvm_dtype_is_float(dt))
        return pfvm__fail(c->st, PFVM_ERR_INVALID, "input must be a float type, not %s", pfvm_dtype_name(dt));
    return pfvm__rnd_infer_like(c);
}

static pfvm_code pfvm__rnd_fill(pfvm_kctx *k, int normal)
{
    int64_t i, n = pfvm_tensor_numel(k->out[0]);
    double a = pfvm_node_attr_float(k->node, normal ? "mean" : "low", 0.0f);
    double b = pfvm_node_attr_float(k->node, normal ? "scale" : "high", 1.0f);
    pfvm__rnd_seed(k);
    for (i = 0; i < n; i++)
        pfvm_red_store(k->out[0], i, normal ? a + b * pfvm__rnd_normal(k) : a + (b - a) * pfvm__rnd_unit(k));
    return PFVM_OK;
}

static pfvm_code pfvm__rnd_k_uniform(pfvm_kctx *k) { return pfvm__rnd_fill(k, 0); }
static pfvm_code pfvm__rnd_k_normal(pfvm_kctx *k) { return pfvm__rnd_fill(k, 1); }

static pfvm_code pfvm__rnd_k_bernoulli(pfvm_kctx *k)
{
    int64_t i, n = pfvm_tensor_numel(k->in[0]);
    pfvm__rnd_seed(k);
    for (i = 0; i < n; i++) {
        double p = pfvm_tensor_get_f64(k->in[0], i);
        if (!(p >= 0 && p <= 1))
            return pfvm__op_fail(k->st, k->node, PFVM_ERR_RANGE, "probability %g is outside [0, 1]", p);
        pfvm_red_store(k->out[0], i, pfvm__rnd_unit(k) < p ? 1.0 : 0.0);
    }
    return PFVM_OK;
}

static pfvm_code pfvm__rnd_infer_multinomial(pfvm_ictx *c)
{
    const pfvm_shape *x = &c->in[0]->type.shape;
    pfvm_shape out;
    pfvm_code rc = pfvm_infer_check_rank(c, 0, 2, "input");
    if (rc)
        return rc;
    if (x->rank != 2)
        return pfvm_infer_unknown(c, 0, pfvm__rnd_dtype(c->node, PFVM_INT32), 2);
    out.rank = 2;
    out.dims[0] = x->dims[0];
    out.dims[1] = pfvm_sym_const(c->syms, pfvm_node_attr_int(c->node, "sample_size", 1));
    pfvm_ival_set_tensor(c->out[0], (pfvm_dtype)pfvm_node_attr_int(c->node, "dtype", PFVM_INT32), &out);
    return PFVM_OK;
}

static pfvm_code pfvm__rnd_k_multinomial(pfvm_kctx *k)
{
    const pfvm_tensor *x = k->in[0];
    int64_t B = x->dims[0], C = x->dims[1], S = k->out[0]->dims[1], b, s, c;
    pfvm__rnd_seed(k);
    for (b = 0; b < B; b++) {
        double mx = -INFINITY, sum = 0;
        for (c = 0; c < C; c++)
            mx = fmax(mx, pfvm_tensor_get_f64(x, b * C + c));
        for (c = 0; c < C; c++)
            sum += exp(pfvm_tensor_get_f64(x, b * C + c) - mx);
        for (s = 0; s < S; s++) {
            double u = pfvm__rnd_unit(k) * sum, acc = 0;
            for (c = 0; c < C - 1; c++) {
                acc += exp(pfvm_tensor_get_f64(x, b * C + c) - mx);
                if (u < acc)
                    break;
            }
            pfvm_red_store(k->out[0], b * S + s, (double)c);
        }
    }
    return PFVM_OK;
}

#define PFVM__RND PFVM_OP_NONDETERMINISTIC

PFVM_INTERNAL const pfvm_op_def pfvm__ops_random[] = {
    {"RandomUniform", "", 1, 0, 0, 0, 1, 1, pfvm__rnd_infer_shape_attr, pfvm__rnd_k_uniform, NULL, PFVM_FUSE_OPAQUE, "float,double,float16", NULL, PFVM__RND, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
    {"RandomNormal", "", 1, 0, 0, 0, 1, 1, pfvm__rnd_infer_shape_attr, pfvm__rnd_k_normal, NULL, PFVM_FUSE_OPAQUE, "float,double,float16", NULL, PFVM__RND, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
    {"RandomUniformLike", "", 1, 0, 1, 1, 1, 1, pfvm__rnd_infer_like, pfvm__rnd_k_uniform, NULL, PFVM_FUSE_OPAQUE, "float,double,float16", NULL, PFVM__RND, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
    {"RandomNormalLike", "", 1, 0, 1, 1, 1, 1, pfvm__rnd_infer_like, pfvm__rnd_k_normal, NULL, PFVM_FUSE_OPAQUE, "float,double,float16", NULL, PFVM__RND, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
    {"Bernoulli", "", 15, 0, 1, 1, 1, 1, pfvm__rnd_infer_bernoulli, pfvm__rnd_k_bernoulli, NULL, PFVM_FUSE_OPAQUE, "float,double -> numeric,bool", NULL, PFVM__RND, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
    {"Multinomial", "", 7, 0, 1, 1, 1, 1, pfvm__rnd_infer_multinomial, pfvm__rnd_k_multinomial, NULL, PFVM_FUSE_OPAQUE, "float,double -> int32,int64", NULL, PFVM__RND, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
    {NULL, NULL, 0, 0, 0, 0, 0, 0, NULL, NULL, NULL, PFVM_FUSE_OPAQUE, NULL, NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL}
};
