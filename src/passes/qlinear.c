/* The qlinear pass: QDQ patterns (what pfvm_quantize and onnxruntime's
 * quantizer write) become integer operators, so a quantized model runs on
 * int8 tensors between its quantized layers (see quantize.h).
 *
 *   DQ(x) , DQ(w) [, DQ(b) or b] -> Conv   [-> Relu | Clip] -> Q  =>  QLinearConv
 *   DQ(x) , DQ(w)                -> MatMul [-> Relu | Clip] -> Q  =>  QLinearMatMul
 *   DQ(x) , DQ(w) [, DQ(b) or b] -> Gemm (transB) [-> Relu | Clip] -> Q
 *       =>  Reshape [N,K,1,1] -> QLinearConv (1x1) -> Reshape [N,M]
 *   DQ(x) , DQ(w) [, DQ(b) or b] -> Gemm (transB), no Q after it  =>  com.microsoft QGemm (float y)
 *   DQ(x) -> AveragePool | GlobalAveragePool -> Q  =>  com.microsoft QLinear(Global)AveragePool
 *   DQ(x) -> MaxPool | Flatten | Reshape -> Q (same scale, zero point)  =>  that op on x
 *   DQ(a) , DQ(b) -> Add [-> Relu | Clip] -> Q  =>  com.microsoft QLinearAdd
 *
 * MatMul's weights must be per tensor (QLinearMatMul's kernel reads one
 * b_scale). The activation is absorbed only when the output's saturation already
 * clamps at least as tightly (Relu with the zero point at the type's
 * minimum, Clip whose bounds quantize outside [qmin, qmax]), so results
 * equal the QDQ graph's up to the integer requantization. The pass
 * matches the standard operators by name: they are the QDQ format's
 * vocabulary, which this pass owns, not a property of pfvm's kernels. */

#include "passes.h"

#include <math.h>
#include <string.h>

static int pfvm__ql_is(const pfvm_node *n, const char *op)
{
    return n && (!n->domain || !n->domain[0] || !strcmp(n->domain, "ai.onnx")) && !strcmp(n->op_type, op);
}

static const pfvm_tensor *pfvm__ql_init(const pfvm_value *v)
{
    return v && v->init && v->init->kind == PFVM_KIND_TENSOR && v->init->data ? v->init : NULL;
}

static int pfvm__ql_is_q8(pfvm_dtype dt)
{
    return dt == PFVM_UINT8 || dt == PFVM_INT8;
}

/* The one node reading v (NULL when v has other readers or is an output). */
static pfvm_node *pfvm__ql_only_reader(const pfvm_uses *u, const pfvm_value *v)
{
    int count;
    const pfvm_use *us = pfvm_uses_of(u, v, &count);
    return count == 1 && us[0].node && us[0].node->graph == v->graph ? us[0].node : NULL;
}

/* A DequantizeLinear with per-tensor constant scale and zero point. */
typedef struct pfvm__ql_q {
    pfvm_node *node;
    pfvm_value *data, *scale, *zp; /* zp may be NULL: 0 of uint8 */
    double s;
    int z;
    pfvm_dtype dtype;
} pfvm__ql_q;

static int pfvm__ql_match_q(pfvm_node *n, const char *op, pfvm__ql_q *q)
{
    const pfvm_tensor *s, *z;
    if (!pfvm__ql_is(n, op) || n->n_inputs < 2 || !(s = pfvm__ql_init(n->inputs[1])) || pfvm_tensor_numel(s) != 1)
        return 0;
    z = n->n_inputs > 2 ? pfvm__ql_init(n->inputs[2]) : NULL;
    if (n->n_inputs > 2 && n->inputs[2] && (!z || pfvm_tensor_numel(z) != 1))
        return 0;
    if (pfvm_node_attr_int(n, "block_size", 0) || pfvm_node_attr_int(n, "saturate", 1) != 1)
        return 0;
    q->node = n;
    q->data = n->inputs[0];
    q->scale = n->inputs[1];
    q->zp = z ? n->inputs[2] : NULL;
    q->s = pfvm_tensor_get_f64(s, 0);
    q->z = z ? (int)pfvm_tensor_get_i64(z, 0) : 0;
    q->dtype = z ? z->dtype : PFVM_UINT8;
    return pfvm__ql_is_q8(q->dtype) && q->s > 0 && s->dtype == PFVM_FLOAT;
}

/* The activation between the product and its QuantizeLinear is implied by
 * y's saturation. */
static int pfvm__ql_clamp_implied(const pfvm_node *act, const pfvm__ql_q *y)
{
    int qmin = y->dtype == PFVM_UINT8 ? 0 : -128, qmax = y->dtype == PFVM_UINT8 ? 255 : 127;
    double lo = -INFINITY, hi = INFINITY;
    if (pfvm__ql_is(act, "Relu"))
        lo = 0;
    else if (pfvm__ql_is(act, "Clip") && act->opset >= 11) {
        const pfvm_tensor *a = act->n_inputs > 1 && act->inputs[1] ? pfvm__ql_init(act->inputs[1]) : NULL;
        const pfvm_tensor *b = act->n_inputs > 2 && act->inputs[2] ? pfvm__ql_init(act->inputs[2]) : NULL;
        if ((act->n_inputs > 1 && act->inputs[1] && !a) || (act->n_inputs > 2 && act->inputs[2] && !b))
            return 0;
        lo = a ? pfvm_tensor_get_f64(a, 0) : lo;
        hi = b ? pfvm_tensor_get_f64(b, 0) : hi;
    } else
        return 0;
    return floor(lo / y->s + 0.5) + y->z <= qmin && (hi == INFINITY || floor(hi / y->s + 0.5) + y->z >= qmax);
}

/* The QuantizeLinear that ends a product: directly, or after an activation
 * it absorbs. Fills the nodes to remove. */
static int pfvm__ql_match_tail(const pfvm_uses *u, pfvm_node *prod, pfvm__ql_q *y, pfvm_node **dead, int *n_dead)
{
    pfvm_node *r = pfvm__ql_only_reader(u, prod->outputs[0]);
    if (!r)
        return 0;
    if (pfvm__ql_match_q(r, "QuantizeLinear", y)) {
        dead[(*n_dead)++] = r;
        return 1;
    }
    if (r->n_outputs != 1 || (!pfvm__ql_is(r, "Relu") && !pfvm__ql_is(r, "Clip")))
        return 0;
    dead[(*n_dead)++] = r;
    r = pfvm__ql_only_reader(u, r->outputs[0]);
    if (!r || !pfvm__ql_match_q(r, "QuantizeLinear", y) || !pfvm__ql_clamp_implied(dead[*n_dead - 1], y))
        return 0;
    dead[(*n_dead)++] = r;
    return 1;
}

/* The constant quantized weight of a product: DQ(int8/uint8 initializer)
 * with scale and zero point per tensor or per channel along `axis`. */
typedef struct pfvm__ql_w {
    pfvm_value *data, *scale, *zp;
    const pfvm_tensor *s;
    int64_t n_scales;
} pfvm__ql_w;

static int pfvm__ql_match_weight(const pfvm_value *v, int axis, pfvm__ql_w *w)
{
    pfvm_node *n = v ? v->producer : NULL;
    const pfvm_tensor *q, *s, *z;
    int64_t ns, len;
    int ax;
    if (!pfvm__ql_is(n, "DequantizeLinear") || n->n_inputs < 2 || !(q = pfvm__ql_init(n->inputs[0])) ||
        !(s = pfvm__ql_init(n->inputs[1])) || !pfvm__ql_is_q8(q->dtype) || s->dtype != PFVM_FLOAT)
        return 0;
    z = n->n_inputs > 2 && n->inputs[2] ? pfvm__ql_init(n->inputs[2]) : NULL;
    if ((n->n_inputs > 2 && n->inputs[2] && !z) || pfvm_node_attr_int(n, "block_size", 0))
        return 0;
    ns = pfvm_tensor_numel(s);
    ax = (int)pfvm_node_attr_int(n, "axis", 1);
    ax = ax < 0 ? ax + q->rank : ax;
    len = ax >= 0 && ax < q->rank ? q->dims[ax] : -1;
    if (ns != 1 && (ax != axis || ns != len || s->rank != 1))
        return 0;
    if (z && pfvm_tensor_numel(z) != ns)
        return 0;
    w->data = n->inputs[0];
    w->scale = n->inputs[1];
    w->zp = z ? n->inputs[2] : NULL;
    w->s = s;
    w->n_scales = ns;
    return 1;
}

typedef struct pfvm__ql_ctx {
    pfvm_model *m;
    pfvm_graph *g;
    pfvm_uses u;
    pfvm_node **dead; /* stb_ds */
    pfvm_status *st;
    int rewritten;
} pfvm__ql_ctx;

static pfvm_value *pfvm__ql_const(pfvm__ql_ctx *c, const char *hint, pfvm_dtype dt, int rank, const int64_t *dims,
                                  void **data)
{
    pfvm_tensor *t;
    pfvm_value *v;
    if (!(t = pfvm_model_tensor(c->m, dt, rank, dims, NULL, c->st)) || !(v = pfvm_graph_new_value(c->g, hint, c->st)) ||
        pfvm_graph_add_init(c->g, v, t, c->st))
        return NULL;
    *data = t->data;
    return v;
}

/* A zero point (of w's type, w's scale's shape) for a DQ that has none. */
static pfvm_value *pfvm__ql_zero_zp(pfvm__ql_ctx *c, const pfvm__ql_w *w)
{
    void *d;
    int64_t n = w->n_scales;
    pfvm_value *v = pfvm__ql_const(c, "zero_point", w->data->init->dtype, w->s->rank, &n, &d);
    if (v)
        memset(d, 0, (size_t)n);
    return v;
}

static pfvm_value *pfvm__ql_zero_u8(pfvm__ql_ctx *c)
{
    void *d;
    pfvm_value *v = pfvm__ql_const(c, "zero_point", PFVM_UINT8, 0, NULL, &d);
    if (v)
        *(uint8_t *)d = 0;
    return v;
}

/* Bias of a Conv as int32 at scale xs * ws[c]: an int32 DQ with that scale
 * (what pfvm_quantize writes) is taken as it is, a float one is rounded. */
static pfvm_value *pfvm__ql_bias(pfvm__ql_ctx *c, pfvm_value *b, double xs, const pfvm__ql_w *w, int64_t M, int *ok)
{
    pfvm_node *dq = b->producer;
    const pfvm_tensor *t, *s, *z;
    int64_t i;
    int32_t *out;
    void *d;
    pfvm_value *v;
    *ok = 0;
    if (pfvm__ql_is(dq, "DequantizeLinear") && dq->n_inputs >= 2 && (t = pfvm__ql_init(dq->inputs[0])) &&
        (s = pfvm__ql_init(dq->inputs[1])) && t->dtype == PFVM_INT32 && pfvm_tensor_numel(t) == M) {
        int64_t ns = pfvm_tensor_numel(s);
        z = dq->n_inputs > 2 && dq->inputs[2] ? pfvm__ql_init(dq->inputs[2]) : NULL;
        if (dq->n_inputs > 2 && dq->inputs[2] && !z)
            return NULL;
        for (i = 0; i < M; i++) {
            double want = xs * pfvm_tensor_get_f64(w->s, w->n_scales == 1 ? 0 : i);
            double have = pfvm_tensor_get_f64(s, ns == 1 ? 0 : i);
            if ((ns != 1 && ns != M) || fabs(have - want) > 1e-6 * fabs(want) ||
                (z && pfvm_tensor_get_i64(z, pfvm_tensor_numel(z) == 1 ? 0 : i) != 0))
                return NULL;
        }
        *ok = 1;
        return dq->inputs[0];
    }
    if (!(t = pfvm__ql_init(b)) || t->dtype != PFVM_FLOAT || pfvm_tensor_numel(t) != M ||
        !(v = pfvm__ql_const(c, "bias_quantized", PFVM_INT32, 1, &M, &d)))
        return NULL;
    out = (int32_t *)d;
    for (i = 0; i < M; i++) {
        double r = floor(pfvm_tensor_get_f64(t, i) / (xs * pfvm_tensor_get_f64(w->s, w->n_scales == 1 ? 0 : i)) + 0.5);
        out[i] = (int32_t)(r < -2147483647.0 ? -2147483647.0 : r > 2147483647.0 ? 2147483647.0 : r);
    }
    *ok = 1;
    return v;
}

static pfvm_code pfvm__ql_copy_attrs(pfvm__ql_ctx *c, pfvm_node *dst, const pfvm_node *src)
{
    int i;
    for (i = 0; src && i < src->n_attrs; i++) {
        pfvm_attr *a = pfvm_node_add_attr(dst, src->attrs[i].name, src->attrs[i].type, c->st);
        const char *name;
        if (!a)
            return c->st ? c->st->code : PFVM_ERR_NOMEM;
        name = a->name;
        *a = src->attrs[i];
        a->name = name;
    }
    return PFVM_OK;
}

/* Puts `made` in place of the pattern ending at y->node (with src's
 * attributes, src may be NULL): its output takes over every reader of y's
 * output. */
static pfvm_code pfvm__ql_finish(pfvm__ql_ctx *c, pfvm_node *made, const pfvm_node *src, const pfvm__ql_q *y,
                                 pfvm_node *const *dead, int n_dead)
{
    int i;
    if (!made || pfvm__ql_copy_attrs(c, made, src) ||
        pfvm_graph_replace_uses(c->g, y->node->outputs[0], made->outputs[0], c->st))
        return c->st ? c->st->code : PFVM_ERR_NOMEM;
    for (i = 0; i < n_dead; i++)
        if (!pfvm__arrpush(c->dead, dead[i]))
            return pfvm__fail(c->st, PFVM_ERR_NOMEM, "out of memory");
    c->rewritten++;
    return PFVM_OK;
}

/* A node named after src and op (and tag: nodes of one pattern with the
 * same op need distinct names). */
static pfvm_node *pfvm__ql_add_in(pfvm__ql_ctx *c, const char *op, const char *domain, const char *tag,
                                  const pfvm_node *src, pfvm_value **ins, int n_in)
{
    char name[512];
    pfvm_value *out = pfvm_graph_new_value(c->g, src->outputs[0]->name, c->st);
    pfvm__snprintf(name, sizeof name, "%s_%s%s", src->name && src->name[0] ? src->name : src->outputs[0]->name, op, tag);
    return out ? pfvm_graph_add_node(c->g, op, domain, name, ins, n_in, &out, 1, c->st) : NULL;
}

static pfvm_node *pfvm__ql_add(pfvm__ql_ctx *c, const char *op, const pfvm_node *src, pfvm_value **ins, int n_in)
{
    return pfvm__ql_add_in(c, op, "", "", src, ins, n_in);
}

/* Conv or MatMul on DQ operands, ending in Q. */
static pfvm_code pfvm__ql_product(pfvm__ql_ctx *c, pfvm_node *n, int conv)
{
    pfvm__ql_q x, y;
    pfvm__ql_w w;
    pfvm_node *dead[4], *made;
    pfvm_value *ins[9];
    int n_dead = 0, n_in = 8, ok = 1;
    if (n->n_inputs < 2 || n->n_outputs != 1 || !n->inputs[0] || !n->inputs[1] ||
        !pfvm__ql_match_q(n->inputs[0]->producer, "DequantizeLinear", &x) || !pfvm__ql_match_weight(n->inputs[1], conv ? 0 : 1, &w) ||
        (!conv && (w.data->init->rank != 2 || n->inputs[0]->type.shape.rank < 2 || w.n_scales != 1)) ||
        !pfvm__ql_match_tail(&c->u, n, &y, dead, &n_dead))
        return PFVM_OK;
    dead[n_dead++] = n;
    ins[0] = x.data;
    ins[1] = x.scale;
    ins[2] = x.zp;
    ins[3] = w.data;
    ins[4] = w.scale;
    ins[5] = w.zp;
    ins[6] = y.scale;
    ins[7] = y.zp;
    if (conv && n->n_inputs > 2 && n->inputs[2]) {
        ins[8] = pfvm__ql_bias(c, n->inputs[2], x.s, &w, w.data->init->dims[0], &ok);
        n_in = 9;
    }
    if (!ok)
        return c->st && c->st->code ? c->st->code : PFVM_OK;
    if ((!ins[2] && !(ins[2] = pfvm__ql_zero_u8(c))) || (!ins[5] && !(ins[5] = pfvm__ql_zero_zp(c, &w))) ||
        (!ins[7] && !(ins[7] = pfvm__ql_zero_u8(c))))
        return c->st ? c->st->code : PFVM_ERR_NOMEM;
    made = pfvm__ql_add(c, conv ? "QLinearConv" : "QLinearMatMul", n, ins, n_in);
    return pfvm__ql_finish(c, made, conv ? n : NULL, &y, dead, n_dead);
}

/* An order-preserving data movement between equal DQ and Q parameters runs
 * on the quantized tensor. */
static pfvm_code pfvm__ql_passthrough(pfvm__ql_ctx *c, pfvm_node *n)
{
    pfvm__ql_q x, y;
    pfvm_node *r, *dead[2], *made;
    pfvm_value *ins[2];
    int i, n_in = n->n_inputs < 2 ? n->n_inputs : 2;
    if (n->n_outputs != 1 || n_in < 1 || !n->inputs[0] ||
        !pfvm__ql_match_q(n->inputs[0]->producer, "DequantizeLinear", &x) ||
        !(r = pfvm__ql_only_reader(&c->u, n->outputs[0])) || !pfvm__ql_match_q(r, "QuantizeLinear", &y) ||
        x.s != y.s || x.z != y.z || x.dtype != y.dtype)
        return PFVM_OK;
    if (pfvm__ql_is(n, "MaxPool") && (pfvm_model_opset(c->m, "") < 12 || pfvm_node_attr_int(n, "ceil_mode", 0)))
        return PFVM_OK;
    ins[0] = x.data;
    for (i = 1; i < n_in; i++)
        ins[i] = n->inputs[i];
    dead[0] = r;
    dead[1] = n;
    made = pfvm__ql_add(c, n->op_type, n, ins, n_in);
    return pfvm__ql_finish(c, made, n, &y, dead, 2);
}

/* An int64 vector constant. */
static pfvm_value *pfvm__ql_shape(pfvm__ql_ctx *c, const int64_t *v, int64_t n)
{
    void *d;
    pfvm_value *s = pfvm__ql_const(c, "shape", PFVM_INT64, 1, &n, &d);
    if (s)
        memcpy(d, v, (size_t)n * sizeof(int64_t));
    return s;
}

/* The com.microsoft domain, declared once, for onnxruntime's QLinear ops. */
static pfvm_code pfvm__ql_use_ms(pfvm__ql_ctx *c)
{
    if (pfvm_model_opset(c->m, "com.microsoft") < 1 && pfvm_model_set_opset(c->m, "com.microsoft", 1, c->st))
        return c->st ? c->st->code : PFVM_ERR_NOMEM;
    return PFVM_OK;
}

/* Gemm(DQ(x), DQ(w) (transB), bias) with a float output (no Q after it:
 * logits) is com.microsoft QGemm without y_scale: integer sums on the
 * 8-bit weights, scaled to float once. */
static pfvm_code pfvm__ql_qgemm(pfvm__ql_ctx *c, pfvm_node *n, const pfvm__ql_q *x, const pfvm__ql_w *w)
{
    pfvm__ql_q out;
    pfvm_node *made;
    pfvm_value *ins[7];
    int n_in = 6, ok = 1;
    if (w->data->init->dims[1] > 33025) /* QGemm's int32 sums: K * 255 * 255 < 2^31 */
        return PFVM_OK;
    ins[0] = x->data;
    ins[1] = x->scale;
    ins[2] = x->zp;
    ins[3] = w->data;
    ins[4] = w->scale;
    ins[5] = w->zp;
    if (n->n_inputs > 2 && n->inputs[2]) {
        ins[6] = pfvm__ql_bias(c, n->inputs[2], x->s, w, w->data->init->dims[0], &ok);
        n_in = 7;
    }
    if (!ok)
        return c->st && c->st->code ? c->st->code : PFVM_OK;
    if (pfvm__ql_use_ms(c) || (!ins[2] && !(ins[2] = pfvm__ql_zero_u8(c))) || (!ins[5] && !(ins[5] = pfvm__ql_zero_zp(c, w))))
        return c->st ? c->st->code : PFVM_ERR_NOMEM;
    memset(&out, 0, sizeof out);
    out.node = n;
    made = pfvm__ql_add_in(c, "QGemm", "com.microsoft", "", n, ins, n_in);
    if (made && pfvm_node_set_attr_int(made, "transB", 1, c->st))
        return c->st ? c->st->code : PFVM_ERR_NOMEM;
    return pfvm__ql_finish(c, made, NULL, &out, &n, 1);
}

/* Gemm(DQ(x) [N,K], DQ(w) [M,K] (transB), bias) -> Q is a 1x1 QLinearConv
 * on x viewed as [N,K,1,1], its output viewed back as [N,M]: the
 * convolution's integer kernels, per-channel weights included. */
static pfvm_code pfvm__ql_gemm(pfvm__ql_ctx *c, pfvm_node *n)
{
    static const int64_t to4[4] = {0, -1, 1, 1}, to2[2] = {0, -1};
    pfvm__ql_q x, y;
    pfvm__ql_w w;
    pfvm_node *dead[4], *r4, *conv, *r2;
    pfvm_value *ins[9], *v2[2], *w4;
    const pfvm_tensor *wt;
    int64_t dims[4];
    void *d;
    int n_dead = 0, n_in = 8, ok = 1;
    if (n->n_inputs < 2 || n->n_outputs != 1 || !n->inputs[0] || !n->inputs[1] ||
        pfvm_node_attr_float(n, "alpha", 1.0f) != 1.0f || pfvm_node_attr_float(n, "beta", 1.0f) != 1.0f ||
        pfvm_node_attr_int(n, "transA", 0) || !pfvm_node_attr_int(n, "transB", 0) ||
        n->inputs[0]->type.shape.rank != 2 || !pfvm__ql_match_q(n->inputs[0]->producer, "DequantizeLinear", &x) ||
        !pfvm__ql_match_weight(n->inputs[1], 0, &w) || w.data->init->rank != 2 ||
        (n->n_inputs > 2 && n->inputs[2] && n->inputs[2]->type.shape.rank != 1))
        return PFVM_OK;
    if (!pfvm__ql_match_tail(&c->u, n, &y, dead, &n_dead))
        return pfvm__ql_qgemm(c, n, &x, &w);
    dead[n_dead++] = n;
    wt = w.data->init;
    ins[0] = NULL;
    ins[1] = x.scale;
    ins[2] = x.zp;
    ins[4] = w.scale;
    ins[5] = w.zp;
    ins[6] = y.scale;
    ins[7] = y.zp;
    if (n->n_inputs > 2 && n->inputs[2]) {
        ins[8] = pfvm__ql_bias(c, n->inputs[2], x.s, &w, wt->dims[0], &ok);
        n_in = 9;
    }
    if (!ok)
        return c->st && c->st->code ? c->st->code : PFVM_OK;
    dims[0] = wt->dims[0], dims[1] = wt->dims[1], dims[2] = dims[3] = 1;
    if (!(w4 = pfvm__ql_const(c, "weight_1x1", wt->dtype, 4, dims, &d)))
        return c->st ? c->st->code : PFVM_ERR_NOMEM;
    memcpy(d, wt->data, (size_t)(dims[0] * dims[1]));
    ins[3] = w4;
    if ((!ins[2] && !(ins[2] = pfvm__ql_zero_u8(c))) || (!ins[5] && !(ins[5] = pfvm__ql_zero_zp(c, &w))) ||
        (!ins[7] && !(ins[7] = pfvm__ql_zero_u8(c))) || !(v2[1] = pfvm__ql_shape(c, to4, 4)))
        return c->st ? c->st->code : PFVM_ERR_NOMEM;
    v2[0] = x.data;
    if (!(r4 = pfvm__ql_add(c, "Reshape", n, v2, 2)))
        return c->st ? c->st->code : PFVM_ERR_NOMEM;
    ins[0] = r4->outputs[0];
    if (!(conv = pfvm__ql_add(c, "QLinearConv", n, ins, n_in)) || !(v2[1] = pfvm__ql_shape(c, to2, 2)))
        return c->st ? c->st->code : PFVM_ERR_NOMEM;
    v2[0] = conv->outputs[0];
    r2 = pfvm__ql_add_in(c, "Reshape", "", "_2d", n, v2, 2);
    return pfvm__ql_finish(c, r2, NULL, &y, dead, n_dead);
}

/* DQ(x) -> AveragePool | GlobalAveragePool -> Q (x's type) becomes
 * onnxruntime's QLinearAveragePool | QLinearGlobalAveragePool
 * (com.microsoft): 2-D windows, explicit pads, ceil_mode 0. */
static pfvm_code pfvm__ql_avgpool(pfvm__ql_ctx *c, pfvm_node *n, int global)
{
    pfvm__ql_q x, y;
    pfvm_node *r, *dead[2], *made;
    pfvm_value *ins[5];
    const char *ap = pfvm_node_attr_string(n, "auto_pad", "NOTSET");
    const int64_t *ks;
    if (n->n_outputs != 1 || n->n_inputs < 1 || !n->inputs[0] || n->inputs[0]->type.shape.rank != 4 ||
        !pfvm__ql_match_q(n->inputs[0]->producer, "DequantizeLinear", &x) ||
        !(r = pfvm__ql_only_reader(&c->u, n->outputs[0])) || !pfvm__ql_match_q(r, "QuantizeLinear", &y) ||
        x.dtype != y.dtype)
        return PFVM_OK;
    if (!global && ((strcmp(ap, "NOTSET") && strcmp(ap, "VALID")) || pfvm_node_attr_int(n, "ceil_mode", 0) ||
                    pfvm_node_attr_ints(n, "kernel_shape", &ks) != 2))
        return PFVM_OK;
    if (pfvm__ql_use_ms(c))
        return c->st ? c->st->code : PFVM_ERR_NOMEM;
    ins[0] = x.data;
    ins[1] = x.scale;
    ins[2] = x.zp;
    ins[3] = y.scale;
    ins[4] = y.zp;
    if ((!ins[2] && !(ins[2] = pfvm__ql_zero_u8(c))) || (!ins[4] && !(ins[4] = pfvm__ql_zero_u8(c))))
        return c->st ? c->st->code : PFVM_ERR_NOMEM;
    dead[0] = r;
    dead[1] = n;
    made = pfvm__ql_add_in(c, global ? "QLinearGlobalAveragePool" : "QLinearAveragePool", "com.microsoft", "", n, ins, 5);
    return pfvm__ql_finish(c, made, global ? NULL : n, &y, dead, 2);
}

/* DQ(a) + DQ(b) [-> Relu | Clip] -> Q, all of one 8-bit type, becomes
 * QLinearAdd: residual joins then keep only 8-bit tensors live. */
static pfvm_code pfvm__ql_add_op(pfvm__ql_ctx *c, pfvm_node *n)
{
    pfvm__ql_q a, b, y;
    pfvm_node *dead[4], *made;
    pfvm_value *ins[8];
    int n_dead = 0;
    if (n->n_inputs != 2 || n->n_outputs != 1 || n->opset < 7 || !n->inputs[0] || !n->inputs[1] ||
        !pfvm__ql_match_q(n->inputs[0]->producer, "DequantizeLinear", &a) ||
        !pfvm__ql_match_q(n->inputs[1]->producer, "DequantizeLinear", &b) ||
        !pfvm__ql_match_tail(&c->u, n, &y, dead, &n_dead) || a.dtype != y.dtype || b.dtype != y.dtype ||
        !(a.s / y.s < 2097152.0 && b.s / y.s < 2097152.0)) /* QLinearAdd's multipliers: ratios below 2^21 */
        return PFVM_OK;
    if (pfvm__ql_use_ms(c))
        return c->st ? c->st->code : PFVM_ERR_NOMEM;
    dead[n_dead++] = n;
    ins[0] = a.data;
    ins[1] = a.scale;
    ins[2] = a.zp;
    ins[3] = b.data;
    ins[4] = b.scale;
    ins[5] = b.zp;
    ins[6] = y.scale;
    ins[7] = y.zp;
    if ((!ins[2] && !(ins[2] = pfvm__ql_zero_u8(c))) || (!ins[5] && !(ins[5] = pfvm__ql_zero_u8(c))) ||
        (!ins[7] && !(ins[7] = pfvm__ql_zero_u8(c))))
        return c->st ? c->st->code : PFVM_ERR_NOMEM;
    made = pfvm__ql_add_in(c, "QLinearAdd", "com.microsoft", "", n, ins, 8);
    return pfvm__ql_finish(c, made, NULL, &y, dead, n_dead);
}

PFVM_INTERNAL pfvm_code pfvm__pass_qlinear(pfvm_model *m, pfvm_graph *g, pfvm_pass_stats *stats, pfvm_status *st)
{
    pfvm__ql_ctx c;
    int i, n;
    pfvm_code rc = PFVM_OK;
    if (pfvm_model_opset(m, "") < 10)
        return PFVM_OK;
    memset(&c, 0, sizeof c);
    c.m = m;
    c.g = g;
    c.st = st;
    if (pfvm_uses_build(&c.u, g, st))
        return st ? st->code : PFVM_ERR_NOMEM;
    n = (int)stbds_arrlen(g->nodes);
    for (i = 0; i < n && !rc; i++) {
        pfvm_node *nd = g->nodes[i];
        if (pfvm__ql_is(nd, "Conv"))
            rc = pfvm__ql_product(&c, nd, 1);
        else if (pfvm__ql_is(nd, "MatMul"))
            rc = pfvm__ql_product(&c, nd, 0);
        else if (pfvm__ql_is(nd, "Gemm"))
            rc = pfvm__ql_gemm(&c, nd);
        else if (pfvm__ql_is(nd, "AveragePool") || pfvm__ql_is(nd, "GlobalAveragePool"))
            rc = pfvm__ql_avgpool(&c, nd, pfvm__ql_is(nd, "GlobalAveragePool"));
        else if (pfvm__ql_is(nd, "Add"))
            rc = pfvm__ql_add_op(&c, nd);
        else if (pfvm__ql_is(nd, "MaxPool") || pfvm__ql_is(nd, "Flatten") || pfvm__ql_is(nd, "Reshape"))
            rc = pfvm__ql_passthrough(&c, nd);
    }
    pfvm_uses_free(&c.u);
    if (!rc && stbds_arrlen(c.dead))
        rc = pfvm_graph_remove_nodes(g, c.dead, (int)stbds_arrlen(c.dead), st);
    stbds_arrfree(c.dead);
    if (!rc && c.rewritten)
        rc = pfvm_graph_toposort(g, st);
    stats->rewritten += c.rewritten;
    return rc;
}
