/* ops/quant: linear quantization — QuantizeLinear, DequantizeLinear,
 * DynamicQuantizeLinear, MatMulInteger, ConvInteger, QLinearMatMul,
 * QLinearConv.
 *
 * Quantized values are uint8 or int8 (zero point's type, uint8 by default);
 * rounding is half to even and results saturate, as the spec says. Scales
 * and zero points are per tensor, or per slice along `axis` when 1-D. */
#include "ops_common.h"

#include <math.h>

static double pfvm__q_round(double v)
{
    double r = floor(v + 0.5);
    if (r - v == 0.5 && fmod(r, 2.0) != 0)
        r -= 1.0;
    return r;
}

/* Parameter of element i: scalar, or indexed by its coordinate on axis. */
static double pfvm__q_param(const pfvm_tensor *p, int64_t i, int64_t inner, int64_t axis_len, double def)
{
    int64_t n;
    if (!p)
        return def;
    n = pfvm_tensor_numel(p);
    if (n <= 1)
        return n ? pfvm_tensor_get_f64(p, 0) : def;
    return pfvm_tensor_get_f64(p, (i / inner) % axis_len);
}

/* Inner size and length of the quantization axis for x. */
static void pfvm__q_axis(const pfvm_node *n, const pfvm_tensor *x, int64_t *inner, int64_t *len)
{
    int a = pfvm__axis(pfvm_node_attr_int(n, "axis", 1), x->rank > 0 ? x->rank : 1), d;
    *inner = 1;
    *len = a >= 0 && a < x->rank ? x->dims[a] : 1;
    for (d = a + 1; d < x->rank; d++)
        *inner *= x->dims[d];
}

/* Input j (a scale or zero point), when present and of known rank, is a
 * scalar, a 1-element vector or, when `per` is given, a 1-D [per]. */
static pfvm_code pfvm__q_check_zp(pfvm_ictx *c, int j, const pfvm_sym *per, const char *what)
{
    const pfvm_ival *v = j < c->n_in ? c->in[j] : NULL;
    const pfvm_shape *s;
    if (!v || v->type.kind != PFVM_KIND_TENSOR || v->type.shape.rank < 0)
        return PFVM_OK;
    s = &v->type.shape;
    if (s->rank > 1)
        return pfvm__fail(c->st, PFVM_ERR_SHAPE, "%s must be a scalar or 1-D, not rank %d", what, s->rank);
    if (s->rank == 1 && !pfvm_sym_is_const(s->dims[0], NULL))
        return PFVM_OK;
    if (s->rank == 1 && s->dims[0]->value != 1 && !per)
        return pfvm__fail(c->st, PFVM_ERR_SHAPE, "%s must have one element, not %lld", what, (long long)s->dims[0]->value);
    if (s->rank == 1 && s->dims[0]->value != 1)
        return pfvm_infer_check_eq(c, s->dims[0], per, what);
    return PFVM_OK;
}

/* x, its scale (input 1) and zero point (input 2): per tensor (scalar
 * scale) or, from opset 13, per axis (1-D scale of x's size along
 * `axis`); the zero point has the scale's shape. Blocked quantization
 * (block_size, opset 21) is left to the kernel. */
static pfvm_code pfvm__q_check_params(pfvm_ictx *c, const char *scale, const char *zp)
{
    const pfvm_shape *x = &c->in[0]->type.shape, *sc = &c->in[1]->type.shape;
    const pfvm_sym *per = NULL;
    char what[64];
    if (pfvm_node_attr_int(c->node, "block_size", 0))
        return PFVM_OK;
    if (sc->rank == 1 && x->rank >= 0 && c->node->opset >= 13) {
        int ax = pfvm__axis(pfvm_node_attr_int(c->node, "axis", 1), x->rank);
        if (ax < 0)
            return pfvm__fail(c->st, PFVM_ERR_INVALID, "axis %lld is out of range for rank %d",
                              (long long)pfvm_node_attr_int(c->node, "axis", 1), x->rank);
        per = x->dims[ax];
    }
    if (pfvm__q_check_zp(c, 1, per, scale) || pfvm__q_check_zp(c, 2, per, zp))
        return c->st ? c->st->code : PFVM_ERR_SHAPE;
    snprintf(what, sizeof what, "the sizes of %s and %s", scale, zp);
    if (c->n_in > 2 && c->in[2] && sc->rank >= 0 && c->in[2]->type.shape.rank >= 0 &&
        (sc->rank != c->in[2]->type.shape.rank ||
         (sc->rank == 1 && pfvm_infer_check_eq(c, sc->dims[0], c->in[2]->type.shape.dims[0], what))))
        return pfvm__fail(c->st, PFVM_ERR_SHAPE, "%s must have %s's shape", zp, scale);
    return PFVM_OK;
}

static pfvm_code pfvm__q_infer_quantize(pfvm_ictx *c)
{
    pfvm_dtype dt = c->n_in > 2 && c->in[2] ? c->in[2]->type.dtype : PFVM_UINT8;
    if (pfvm__q_check_params(c, "y_scale", "y_zero_point"))
        return c->st ? c->st->code : PFVM_ERR_SHAPE;
    pfvm_ival_set_tensor(c->out[0], dt, &c->in[0]->type.shape);
    return PFVM_OK;
}

static pfvm_code pfvm__q_k_quantize(pfvm_kctx *k)
{
    const pfvm_tensor *x = k->in[0], *s = k->in[1], *z = k->n_in > 2 ? k->in[2] : NULL;
    int64_t i, n = pfvm_tensor_numel(x), inner, len;
    pfvm__q_axis(k->node, x, &inner, &len);
    for (i = 0; i < n; i++) {
        double sc = pfvm__q_param(s, i, inner, len, 1), zp = pfvm__q_param(z, i, inner, len, 0);
        if (sc == 0)
            return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "scale is 0");
        /* float32 division, as the reference, so that halves round alike */
        double q = x->dtype == PFVM_FLOAT ? (double)((float)pfvm_tensor_get_f64(x, i) / (float)sc) : pfvm_tensor_get_f64(x, i) / sc;
        pfvm_red_store(k->out[0], i, pfvm__q_round(q) + zp);
    }
    return PFVM_OK;
}

static pfvm_code pfvm__q_infer_dequantize(pfvm_ictx *c)
{
    if (pfvm__q_check_params(c, "x_scale", "x_zero_point"))
        return c->st ? c->st->code : PFVM_ERR_SHAPE;
    pfvm_ival_set_tensor(c->out[0], c->in[1]->type.dtype ? c->in[1]->type.dtype : PFVM_FLOAT, &c->in[0]->type.shape);
    return PFVM_OK;
}

static pfvm_code pfvm__q_k_dequantize(pfvm_kctx *k)
{
    const pfvm_tensor *x = k->in[0], *s = k->in[1], *z = k->n_in > 2 ? k->in[2] : NULL;
    int64_t i, n = pfvm_tensor_numel(x), inner, len;
    /* the output has the scale's type: float, double, float16 or bfloat16
     * (another type from a malformed model must not be written as float) */
    if (!pfvm_dtype_is_float(k->out[0]->dtype))
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_UNSUPPORTED, "output type %s (the scale's) is not a float type",
                             pfvm_dtype_name(k->out[0]->dtype));
    pfvm__q_axis(k->node, x, &inner, &len);
    for (i = 0; i < n; i++) {
        double v = (pfvm_tensor_get_f64(x, i) - pfvm__q_param(z, i, inner, len, 0)) * pfvm__q_param(s, i, inner, len, 1);
        if (k->out[0]->dtype == PFVM_DOUBLE)
            ((double *)k->out[0]->data)[i] = v;
        else if (k->out[0]->dtype == PFVM_FLOAT)
            ((float *)k->out[0]->data)[i] = (float)v;
        else
            pfvm_red_store(k->out[0], i, v);
    }
    return PFVM_OK;
}

static pfvm_code pfvm__q_infer_dynamic(pfvm_ictx *c)
{
    pfvm_shape scalar;
    pfvm_dtype dt = c->in[0]->type.dtype;
    if (dt != PFVM_UNDEFINED && !pfvm_dtype_is_float(dt))
        return pfvm__fail(c->st, PFVM_ERR_INVALID, "x must be float, not %s", pfvm_dtype_name(dt));
    scalar.rank = 0;
    pfvm_ival_set_tensor(c->out[0], PFVM_UINT8, &c->in[0]->type.shape);
    pfvm_ival_set_tensor(c->out[1], PFVM_FLOAT, &scalar);
    pfvm_ival_set_tensor(c->out[2], PFVM_UINT8, &scalar);
    return PFVM_OK;
}

static pfvm_code pfvm__q_k_dynamic(pfvm_kctx *k)
{
    const pfvm_tensor *x = k->in[0];
    int64_t i, n = pfvm_tensor_numel(x);
    double lo = 0, hi = 0, zp;
    float scale; /* the reference computes in float32: so do we, for equal rounding */
    for (i = 0; i < n; i++) {
        double v = pfvm_tensor_get_f64(x, i);
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
    }
    scale = (float)((float)hi - (float)lo) / 255.0f;
    zp = scale != 0 ? pfvm__q_round((float)(0.0f - (float)lo / scale)) : 0;
    zp = zp < 0 ? 0 : zp > 255 ? 255 : zp;
    *(float *)k->out[1]->data = scale;
    *(uint8_t *)k->out[2]->data = (uint8_t)zp;
    for (i = 0; i < n; i++)
        pfvm_red_store(k->out[0], i, scale != 0 ? pfvm__q_round((float)pfvm_tensor_get_f64(x, i) / scale) + zp : zp);
    return PFVM_OK;
}

/* ---- integer and quantized matrix products ---------------------------------------------- */

/* (A - azp) @ (B - bzp) for 2-D operands with optional batch dims that
 * match; zero points per row of A / per column of B when 1-D. post gets
 * each result. */
typedef void (*pfvm__q_post)(void *user, int64_t idx, double acc);

static pfvm_code pfvm__q_matmul(pfvm_kctx *k, const pfvm_tensor *A, const pfvm_tensor *azp, const pfvm_tensor *B,
                                const pfvm_tensor *bzp, pfvm__q_post post, void *user)
{
    int64_t M = A->rank >= 2 ? A->dims[A->rank - 2] : 1, K = A->dims[A->rank - 1];
    int64_t N = B->rank >= 2 ? B->dims[B->rank - 1] : 1, KB = B->rank >= 2 ? B->dims[B->rank - 2] : B->dims[0];
    int64_t batch = pfvm_tensor_numel(A) / (M * K != 0 ? M * K : 1), bb = pfvm_tensor_numel(B) / (KB * N != 0 ? KB * N : 1), t, i, j, p;
    int64_t na = azp ? pfvm_tensor_numel(azp) : 0, nb = bzp ? pfvm_tensor_numel(bzp) : 0;
    if (K != KB || (bb != 1 && bb != batch))
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "operands do not multiply");
    if (!k->out[0]->data) {
        int64_t dims[PFVM_MAX_RANK];
        int d;
        for (d = 0; d < A->rank - 1; d++)
            dims[d] = A->dims[d];
        dims[A->rank - 1] = N;
        if (pfvm_kctx_output(k, 0, k->out[0]->dtype, A->rank, dims))
            return k->st ? k->st->code : PFVM_ERR_NOMEM;
    }
    for (t = 0; t < batch; t++)
        for (i = 0; i < M; i++)
            for (j = 0; j < N; j++) {
                double acc = 0, za = na ? pfvm_tensor_get_f64(azp, na == 1 ? 0 : i % na) : 0;
                double zb = nb ? pfvm_tensor_get_f64(bzp, nb == 1 ? 0 : j % nb) : 0;
                for (p = 0; p < K; p++)
                    acc += (pfvm_tensor_get_f64(A, (t * M + i) * K + p) - za) *
                           (pfvm_tensor_get_f64(B, ((bb == 1 ? 0 : t) * KB + p) * N + j) - zb);
                post(user, (t * M + i) * N + j, acc);
            }
    return PFVM_OK;
}

static void pfvm__q_post_int32(void *user, int64_t idx, double acc)
{
    ((int32_t *)((pfvm_tensor *)user)->data)[idx] = (int32_t)acc;
}

/* A [..,N,K] x B [..,K,M] (numpy matmul rules) -> int32; a zero point is a
 * scalar or, per row of A / column of B, [N] / [M]. */
static pfvm_code pfvm__q_infer_int_matmul(pfvm_ictx *c)
{
    const pfvm_shape *a = &c->in[0]->type.shape, *b = &c->in[1]->type.shape;
    if (pfvm_infer_matmul(c, a, b, PFVM_INT32))
        return c->st ? c->st->code : PFVM_ERR_SHAPE;
    if (pfvm__q_check_zp(c, 2, a->rank >= 2 ? a->dims[a->rank - 2] : NULL, "a_zero_point") ||
        pfvm__q_check_zp(c, 3, b->rank >= 2 ? b->dims[b->rank - 1] : NULL, "b_zero_point"))
        return c->st ? c->st->code : PFVM_ERR_SHAPE;
    return PFVM_OK;
}

static pfvm_code pfvm__q_k_matmul_integer(pfvm_kctx *k)
{
    return pfvm__q_matmul(k, k->in[0], k->n_in > 2 ? k->in[2] : NULL, k->in[1], k->n_in > 3 ? k->in[3] : NULL,
                          pfvm__q_post_int32, k->out[0]);
}

typedef struct pfvm__q_requant {
    pfvm_tensor *y;
    double mult, zp;
    const pfvm_tensor *bias, *ws, *ys;
    double xs;
    int64_t nws;
} pfvm__q_requant;

static void pfvm__q_post_requant(void *user, int64_t idx, double acc)
{
    pfvm__q_requant *r = (pfvm__q_requant *)user;
    pfvm_red_store(r->y, idx, pfvm__q_round(acc * r->mult) + r->zp);
}

/* a [..,N,K] (scale, zero point), b [..,K,M] (scale, zero point), y's
 * scale and zero point -> y's type, numpy matmul shape. Scales and zero
 * points are per tensor or per row of a (a's, y's) / column of b (b's). */
static pfvm_code pfvm__q_infer_qlinear_matmul(pfvm_ictx *c)
{
    const pfvm_shape *a = &c->in[0]->type.shape, *b = &c->in[3]->type.shape;
    int j;
    if (pfvm_infer_matmul(c, a, b, c->in[7]->type.dtype))
        return c->st ? c->st->code : PFVM_ERR_SHAPE;
    for (j = 0; j < 8; j++) {
        static const char *const names[8] = {"", "a_scale", "a_zero_point", "", "b_scale", "b_zero_point", "y_scale", "y_zero_point"};
        const pfvm_sym *per = j == 1 || j == 2 || j == 6 || j == 7 ? (a->rank >= 2 ? a->dims[a->rank - 2] : NULL)
                              : j == 4 || j == 5 ? (b->rank >= 2 ? b->dims[b->rank - 1] : NULL) : NULL;
        if (names[j][0] && pfvm__q_check_zp(c, j, per, names[j]))
            return c->st ? c->st->code : PFVM_ERR_SHAPE;
    }
    return PFVM_OK;
}

static pfvm_code pfvm__q_k_qlinear_matmul(pfvm_kctx *k)
{
    pfvm__q_requant r;
    memset(&r, 0, sizeof r);
    r.y = k->out[0];
    r.mult = pfvm_tensor_get_f64(k->in[1], 0) * pfvm_tensor_get_f64(k->in[4], 0) / pfvm_tensor_get_f64(k->in[6], 0);
    r.zp = pfvm_tensor_get_f64(k->in[7], 0);
    return pfvm__q_matmul(k, k->in[0], k->in[2], k->in[3], k->in[5], pfvm__q_post_requant, &r);
}

/* ---- quantized convolutions ------------------------------------------------------------------ */

static void pfvm__q_conv_int32(void *user, int64_t idx, int64_t channel, double acc)
{
    (void)channel;
    ((int32_t *)((pfvm_tensor *)user)->data)[idx] = (int32_t)acc;
}

static void pfvm__q_conv_requant(void *user, int64_t idx, int64_t channel, double acc)
{
    pfvm__q_requant *r = (pfvm__q_requant *)user;
    double ws = pfvm_tensor_get_f64(r->ws, r->nws == 1 ? 0 : channel % r->nws);
    if (r->bias)
        acc += pfvm_tensor_get_f64(r->bias, channel);
    pfvm_red_store(r->y, idx, pfvm__q_round(acc * r->xs * ws / pfvm_tensor_get_f64(r->ys, 0)) + r->zp);
}

static pfvm_code pfvm__q_k_conv_integer(pfvm_kctx *k)
{
    return pfvm_nn_conv_ref(k, k->in[0], k->in[1], k->n_in > 2 ? k->in[2] : NULL, k->n_in > 3 ? k->in[3] : NULL,
                            pfvm__q_conv_int32, k->out[0]);
}

static pfvm_code pfvm__q_k_qlinear_conv(pfvm_kctx *k)
{
    pfvm__q_requant r;
    memset(&r, 0, sizeof r);
    r.y = k->out[0];
    r.xs = pfvm_tensor_get_f64(k->in[1], 0);
    r.ws = k->in[4];
    r.nws = pfvm_tensor_numel(k->in[4]);
    r.ys = k->in[6];
    r.zp = pfvm_tensor_get_f64(k->in[7], 0);
    r.bias = k->n_in > 8 ? k->in[8] : NULL;
    return pfvm_nn_conv_ref(k, k->in[0], k->in[3], k->in[2], k->in[5], pfvm__q_conv_requant, &r);
}

/* Conv-shaped inference through a view of the node's Conv attributes. */
static pfvm_code pfvm__q_infer_conv(pfvm_ictx *c, int x, int w, pfvm_dtype dt)
{
    const pfvm_op_def *conv = pfvm_op_find("", "Conv", 11);
    pfvm_ictx c2 = *c;
    const pfvm_ival *ins[2];
    pfvm_code rc;
    ins[0] = c->in[x];
    ins[1] = c->in[w];
    c2.in = ins;
    c2.n_in = 2;
    if (!conv)
        return pfvm_infer_unknown(c, 0, dt, c->in[x]->type.shape.rank);
    rc = conv->infer(&c2);
    if (!rc)
        c->out[0]->type.dtype = dt;
    return rc;
}

static pfvm_code pfvm__q_infer_conv_integer(pfvm_ictx *c)
{
    return pfvm__q_infer_conv(c, 0, 1, PFVM_INT32);
}

static pfvm_code pfvm__q_infer_qlinear_conv(pfvm_ictx *c)
{
    return pfvm__q_infer_conv(c, 0, 3, c->in[7]->type.dtype);
}

PFVM_INTERNAL const pfvm_op_def pfvm__ops_quant[] = {
    {"QuantizeLinear", "", 10, 0, 2, 3, 1, 1, pfvm__q_infer_quantize, pfvm__q_k_quantize, NULL, PFVM_FUSE_ELEMENTWISE, "float,int32 -> uint8,int8", NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL},
    {"DequantizeLinear", "", 10, 0, 2, 3, 1, 1, pfvm__q_infer_dequantize, pfvm__q_k_dequantize, NULL, PFVM_FUSE_ELEMENTWISE, "uint8,int8,int32 -> float", NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL},
    {"DynamicQuantizeLinear", "", 11, 0, 1, 1, 3, 3, pfvm__q_infer_dynamic, pfvm__q_k_dynamic, NULL, PFVM_FUSE_OPAQUE, "float -> uint8", NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL},
    {"MatMulInteger", "", 10, 0, 2, 4, 1, 1, pfvm__q_infer_int_matmul, pfvm__q_k_matmul_integer, NULL, PFVM_FUSE_OPAQUE, "uint8,int8 -> int32", NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL},
    {"QLinearMatMul", "", 10, 0, 8, 8, 1, 1, pfvm__q_infer_qlinear_matmul, pfvm__q_k_qlinear_matmul, NULL, PFVM_FUSE_OPAQUE, "uint8,int8", NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL},
    {"ConvInteger", "", 10, 0, 2, 4, 1, 1, pfvm__q_infer_conv_integer, pfvm__q_k_conv_integer, NULL, PFVM_FUSE_OPAQUE, "uint8,int8 -> int32", NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL},
    {"QLinearConv", "", 10, 0, 8, 9, 1, 1, pfvm__q_infer_qlinear_conv, pfvm__q_k_qlinear_conv, NULL, PFVM_FUSE_OPAQUE, "uint8,int8", NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL},
    {NULL, NULL, 0, 0, 0, 0, 0, 0, NULL, NULL, NULL, PFVM_FUSE_OPAQUE, NULL, NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL}
};
