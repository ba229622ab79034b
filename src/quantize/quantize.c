/* Post-training static quantization: calibration, scales, and the QDQ
 * rewrite (pfvm_quantize; see quantize.h).
 *
 * Which operators are quantized, and which of their inputs are weights, is
 * the quantizer's own knowledge (the table below), the way onnxruntime's
 * quantizer keeps its registry: it names standard ONNX operators whose
 * QDQ form every runtime reads, not a property of pfvm's kernels. */
#include "quantize.h"
#include "../exec/exec.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>

/* One quantizable operator: its weight input (-1: none), where a weight's
 * output channels are (axis with and without transB, -1: last), its bias
 * input (-1: none), and whether every input is an activation (Add, Concat)
 * or only input 0. */
typedef struct pfvm__qrole {
    const char *op;
    int weight, axis, axis_trans, bias, all_inputs;
} pfvm__qrole;

static const pfvm__qrole pfvm__qroles[] = {
    {"Conv", 1, 0, 0, 2, 0},
    {"MatMul", 1, -1, -1, -1, 0},
    {"Gemm", 1, 1, 0, 2, 0},
    {"Add", -1, 0, 0, -1, 1},
    {"Concat", -1, 0, 0, -1, 1},
    {"MaxPool", -1, 0, 0, -1, 0},
    {"AveragePool", -1, 0, 0, -1, 0},
    {"GlobalAveragePool", -1, 0, 0, -1, 0},
    {"Relu", -1, 0, 0, -1, 0},
    {"Clip", -1, 0, 0, -1, 0},
    {"Flatten", -1, 0, 0, -1, 0},
    {"Reshape", -1, 0, 0, -1, 0},
    {"Pad", -1, 0, 0, -1, 0},
    {NULL, 0, 0, 0, 0, 0}
};

/* Activation functions whose input need not be quantized when they are its
 * only reader: the producer's integer form clamps them into its output. */
static int pfvm__q_is_activation(const pfvm_node *n)
{
    return !strcmp(n->op_type, "Relu") || !strcmp(n->op_type, "Clip");
}

#define PFVM__Q_BINS 2048

/* Calibration statistics of one value. */
typedef struct pfvm__qstat {
    double lo, hi;
    int seen;
    uint32_t *hist; /* PFVM__Q_BINS counts over [lo, hi] (percentile method) */
    uint64_t count;
} pfvm__qstat;

typedef struct pfvm__qparams {
    float scale;
    int zp;
    pfvm_dtype dtype;
    int set;
} pfvm__qparams;

/* One operand the rewrite redirected: node->inputs[slot] reads qv (a
 * DequantizeLinear's output) in place of fv. The sensitivity analysis
 * switches them back and forth; group is the activation's value id, -1 for
 * weights and biases. */
typedef struct pfvm__qsub {
    pfvm_node *node;
    int slot, group;
    pfvm_value *fv, *qv;
} pfvm__qsub;

typedef struct pfvm__quantizer {
    pfvm_model *m;
    pfvm_graph *g;
    const pfvm_quant_options *opt;
    pfvm_quant_report rep;
    pfvm__qstat *stats;     /* by value id */
    pfvm__qparams *params;  /* by value id */
    unsigned char *quant;   /* by node id: quantized node */
    unsigned char *mark;    /* by value id: activation to quantize */
    unsigned char *left_float; /* by value id: activation auto_exclude left float */
    pfvm__qsub *subs;       /* stb array: every redirected operand */
    int n_values, n_nodes;
    pfvm_status *st;
} pfvm__quantizer;

static const pfvm__qrole *pfvm__q_role(const pfvm_node *n)
{
    const pfvm__qrole *r;
    if (n->domain && n->domain[0] && strcmp(n->domain, "ai.onnx"))
        return NULL;
    for (r = pfvm__qroles; r->op; r++)
        if (!strcmp(r->op, n->op_type))
            return r;
    return NULL;
}

static int pfvm__q_excluded(const char *list, const char *name)
{
    size_t len = name ? strlen(name) : 0;
    const char *s = list;
    if (!s || !len)
        return 0;
    while (*s) {
        const char *e = strchr(s, ',');
        size_t l = e ? (size_t)(e - s) : strlen(s);
        if (l == len && !strncmp(s, name, len))
            return 1;
        s += l + (e ? 1 : 0);
    }
    return 0;
}

static int pfvm__q_is_float_activation(const pfvm_value *v)
{
    return v && !v->init && v->type.kind == PFVM_KIND_TENSOR && v->type.dtype == PFVM_FLOAT;
}

/* ---- calibration ------------------------------------------------------------------------ */

static void pfvm__q_observe(pfvm__qstat *s, const pfvm_tensor *t, int histogram)
{
    int64_t i, n = pfvm_tensor_numel(t);
    const float *x = (const float *)t->data;
    if (t->kind != PFVM_KIND_TENSOR || t->dtype != PFVM_FLOAT || !x)
        return;
    if (!histogram) {
        for (i = 0; i < n; i++) {
            double v = x[i];
            if (v != v)
                continue;
            if (!s->seen || v < s->lo)
                s->lo = v;
            if (!s->seen || v > s->hi)
                s->hi = v;
            s->seen = 1;
        }
        return;
    }
    if (!s->hist || s->hi <= s->lo)
        return;
    for (i = 0; i < n; i++) {
        double v = x[i];
        int b;
        if (v != v)
            continue;
        b = (int)((v - s->lo) / (s->hi - s->lo) * PFVM__Q_BINS);
        b = b < 0 ? 0 : b >= PFVM__Q_BINS ? PFVM__Q_BINS - 1 : b;
        s->hist[b]++;
        s->count++;
    }
}

/* The value below which `share` of the histogram's values lie. */
static double pfvm__q_quantile(const pfvm__qstat *s, double share)
{
    uint64_t want = (uint64_t)(share * (double)s->count), acc = 0;
    int b;
    for (b = 0; b < PFVM__Q_BINS; b++) {
        acc += s->hist[b];
        if (acc > want)
            return s->lo + (s->hi - s->lo) * (b + 1) / PFVM__Q_BINS;
    }
    return s->hi;
}

/* Back to the graph's first n_out0 outputs after a run that read
 * activations as extra outputs (a value listed twice keeps its mark). */
static void pfvm__q_drop_extra_outputs(pfvm_graph *g, int n_out0)
{
    int i;
    for (i = n_out0; i < (int)stbds_arrlen(g->outputs); i++)
        g->outputs[i]->is_output = 0;
    stbds_arrsetlen(g->outputs, n_out0);
    for (i = 0; i < n_out0; i++)
        g->outputs[i]->is_output = 1;
}

/* Runs every input set once with every float activation as an extra graph
 * output, feeding each to pfvm__q_observe. */
static pfvm_code pfvm__q_run_sets(pfvm__quantizer *q, const pfvm_tensor *const *inputs, int n_sets, int histogram)
{
    pfvm_graph *g = q->g;
    int n_out0 = (int)stbds_arrlen(g->outputs), i, s, n_in;
    pfvm_exec *e = NULL;
    pfvm_code rc = PFVM_OK;
    for (i = 0; i < q->n_values && !rc; i++) {
        pfvm_value *v = g->values[i];
        if (pfvm__q_is_float_activation(v) && v->producer && !v->is_output)
            rc = pfvm_graph_add_output(g, v, q->st);
    }
    if (!rc && !(e = pfvm_exec_new(q->m, g, q->st)))
        rc = q->st ? q->st->code : PFVM_ERR_INVALID;
    n_in = e ? pfvm_exec_num_inputs(e) : 0;
    for (s = 0; s < n_sets && !rc; s++) {
        const pfvm_tensor *const *set = inputs + (size_t)s * (size_t)n_in;
        if ((rc = pfvm_exec_bind(e, set, n_in, q->st)) != PFVM_OK || (rc = pfvm_exec_run(e, q->st)) != PFVM_OK) {
            pfvm_status_prefix(q->st, "calibration set %d", s);
            break;
        }
        for (i = 0; i < n_in; i++)
            pfvm__q_observe(&q->stats[pfvm_exec_input(e, i)->id], set[i], histogram);
        for (i = 0; i < pfvm_exec_num_outputs(e); i++)
            pfvm__q_observe(&q->stats[pfvm_exec_output_value(e, i)->id], pfvm_exec_output(e, i), histogram);
    }
    pfvm_exec_free(e);
    pfvm__q_drop_extra_outputs(g, n_out0);
    return rc;
}

/* Expected squared error of an 8-bit grid on [a, b] (uniform rounding
 * noise step^2 / 12 inside, the distance to the nearest end outside) over
 * the histogram's bin centres. */
static double pfvm__q_grid_error(const pfvm__qstat *s, double a, double b, double steps)
{
    double w = (s->hi - s->lo) / PFVM__Q_BINS, step = (b - a) / steps, noise = step * step / 12, e = 0;
    int k;
    for (k = 0; k < PFVM__Q_BINS; k++) {
        double x = s->lo + (k + 0.5) * w, d = x > b ? x - b : x < a ? a - x : 0;
        if (s->hist[k])
            e += (double)s->hist[k] * (d > 0 ? d * d : noise);
    }
    return e;
}

/* The end of [lo, hi] (side 1: hi, 0: lo), shrunk by the factor (1 to
 * 0.05, geometric steps of 2%) whose grid errs least, the other end fixed. */
static double pfvm__q_mse_end(const pfvm__qstat *s, double lo, double hi, int side, double steps)
{
    double best = -1, t, bt = 1;
    for (t = 1; t > 0.05; t *= 0.98) {
        double e = side ? pfvm__q_grid_error(s, lo, hi * t, steps) : pfvm__q_grid_error(s, lo * t, hi, steps);
        if (best < 0 || e < best)
            best = e, bt = t;
    }
    return (side ? hi : lo) * bt;
}

/* MSE-optimal range from the observed one (with 0): each end shrunk in
 * turn (top, bottom, top again) to the grid that errs least; a symmetric
 * grid shrinks the larger magnitude, used on both sides. */
static void pfvm__q_mse_range(pfvm__qstat *s, int symmetric)
{
    double lo = s->lo < 0 ? s->lo : 0, hi = s->hi > 0 ? s->hi : 0, best = -1, t, bt = 1;
    double m = -lo > hi ? -lo : hi;
    if (symmetric) {
        for (t = 1; t > 0.05; t *= 0.98) {
            double e = pfvm__q_grid_error(s, -m * t, m * t, 254);
            if (best < 0 || e < best)
                best = e, bt = t;
        }
        s->lo = -m * bt;
        s->hi = m * bt;
        return;
    }
    if (hi > 0)
        hi = pfvm__q_mse_end(s, lo, hi, 1, 255);
    if (lo < 0)
        lo = pfvm__q_mse_end(s, lo, hi, 0, 255);
    if (hi > 0 && lo < 0)
        hi = pfvm__q_mse_end(s, lo, hi, 1, 255);
    s->lo = lo;
    s->hi = hi;
}

static pfvm_code pfvm__q_calibrate(pfvm__quantizer *q, const pfvm_tensor *const *inputs, int n_sets)
{
    double keep = q->opt->percentile > 0 ? q->opt->percentile / 100.0 : 0.9999;
    int i;
    if (pfvm__q_run_sets(q, inputs, n_sets, 0))
        return q->st ? q->st->code : PFVM_ERR_INVALID;
    if (q->opt->method != PFVM_QUANT_PERCENTILE && q->opt->method != PFVM_QUANT_MSE)
        return PFVM_OK;
    if (q->opt->method == PFVM_QUANT_PERCENTILE && (keep <= 0 || keep > 1))
        return pfvm__fail(q->st, PFVM_ERR_INVALID, "quantize: percentile %g is not in (0, 100]", q->opt->percentile);
    for (i = 0; i < q->n_values; i++)
        if (q->mark[i] && q->stats[i].seen &&
            !(q->stats[i].hist = (uint32_t *)PFVM_REALLOC(NULL, PFVM__Q_BINS * sizeof(uint32_t))))
            return pfvm__fail(q->st, PFVM_ERR_NOMEM, "out of memory");
        else if (q->stats[i].hist)
            memset(q->stats[i].hist, 0, PFVM__Q_BINS * sizeof(uint32_t));
    if (pfvm__q_run_sets(q, inputs, n_sets, 1))
        return q->st ? q->st->code : PFVM_ERR_INVALID;
    for (i = 0; i < q->n_values; i++) {
        pfvm__qstat *s = &q->stats[i];
        double lo, hi;
        if (!s->hist || !s->count)
            continue;
        if (q->opt->method == PFVM_QUANT_MSE) {
            pfvm__q_mse_range(s, q->opt->symmetric);
            continue;
        }
        /* a range that starts at 0 (after Relu) keeps it: only the top is cut */
        lo = s->lo >= 0 ? s->lo : pfvm__q_quantile(s, (1 - keep) / 2);
        hi = pfvm__q_quantile(s, s->lo >= 0 ? keep : 1 - (1 - keep) / 2);
        s->lo = lo;
        s->hi = hi;
    }
    return PFVM_OK;
}

/* ---- which nodes and activations ----------------------------------------------------------- */

/* v's only reader is a quantized activation function (its producer's
 * integer form absorbs it, so v itself stays unquantized). */
static int pfvm__q_feeds_activation(pfvm__quantizer *q, const pfvm_uses *u, const pfvm_value *v)
{
    int count;
    const pfvm_use *us = pfvm_uses_of(u, v, &count);
    return count == 1 && us[0].node && us[0].node->graph == q->g && q->quant[us[0].node->id] &&
           pfvm__q_is_activation(us[0].node);
}

static pfvm_code pfvm__q_select(pfvm__quantizer *q)
{
    pfvm_uses u;
    int i, j;
    if (pfvm_uses_build(&u, q->g, q->st))
        return q->st ? q->st->code : PFVM_ERR_NOMEM;
    for (i = 0; i < q->n_nodes; i++) {
        const pfvm_node *n = q->g->nodes[i];
        q->quant[i] = pfvm__q_role(n) && !pfvm__q_excluded(q->opt->exclude, n->name) && n->n_outputs == 1 &&
                      n->n_inputs > 0 && pfvm__q_is_float_activation(n->inputs[0]);
    }
    for (i = 0; i < q->n_nodes; i++) {
        const pfvm_node *n = q->g->nodes[i];
        const pfvm__qrole *r = pfvm__q_role(n);
        const pfvm_value *y = n->outputs[0];
        if (!q->quant[i])
            continue;
        q->rep.nodes++;
        for (j = 0; j < (r->all_inputs ? n->n_inputs : 1); j++) {
            const pfvm_value *x = n->inputs[j];
            /* a quantized producer's output that only this activation reads stays float */
            if (pfvm__q_is_float_activation(x) &&
                !(x->producer && q->quant[x->producer->id] && pfvm__q_feeds_activation(q, &u, x)))
                q->mark[x->id] = 1;
        }
        if (pfvm__q_is_float_activation(y) && !y->is_output && !pfvm__q_feeds_activation(q, &u, y))
            q->mark[y->id] = 1;
    }
    pfvm_uses_free(&u);
    return PFVM_OK;
}

/* ---- scales and zero points ------------------------------------------------------------------ */

static void pfvm__q_act_params(const pfvm__qstat *s, int symmetric, pfvm__qparams *p)
{
    double lo = s->seen && s->lo < 0 ? s->lo : 0, hi = s->seen && s->hi > 0 ? s->hi : 0;
    p->set = 1;
    if (symmetric) {
        double a = -lo > hi ? -lo : hi;
        p->dtype = PFVM_INT8;
        p->zp = 0;
        p->scale = a > 0 ? (float)(a / 127.0) : 1.0f;
        return;
    }
    p->dtype = PFVM_UINT8;
    if (hi - lo <= 0) {
        p->scale = 1.0f;
        p->zp = 0;
        return;
    }
    p->scale = (float)((hi - lo) / 255.0);
    p->zp = (int)floor(-lo / p->scale + 0.5);
    p->zp = p->zp < 0 ? 0 : p->zp > 255 ? 255 : p->zp;
}

static double pfvm__q_round_even(double v)
{
    double r = floor(v + 0.5);
    if (r - v == 0.5 && fmod(r, 2.0) != 0)
        r -= 1.0;
    return r;
}

/* ---- graph building ---------------------------------------------------------------------------- */

static pfvm_value *pfvm__q_const(pfvm__quantizer *q, const char *base, const char *suffix, pfvm_dtype dt, int rank,
                                 const int64_t *dims, void **data)
{
    char name[512];
    pfvm_tensor *t;
    pfvm_value *v;
    pfvm__snprintf(name, sizeof name, "%s%s", base, suffix);
    if (!(t = pfvm_model_tensor(q->m, dt, rank, dims, NULL, q->st)) || !(v = pfvm_graph_new_value(q->g, name, q->st)) ||
        pfvm_graph_add_init(q->g, v, t, q->st))
        return NULL;
    *data = t->data;
    return v;
}

static pfvm_code pfvm__q_record(pfvm__quantizer *q, pfvm_node *n, int slot, pfvm_value *fv, pfvm_value *qv, int group)
{
    pfvm__qsub sub;
    sub.node = n;
    sub.slot = slot;
    sub.group = group;
    sub.fv = fv;
    sub.qv = qv;
    if (!pfvm__arrpush(q->subs, sub))
        return pfvm__fail(q->st, PFVM_ERR_NOMEM, "out of memory");
    return PFVM_OK;
}

/* scale and zero point initializers for one activation */
static pfvm_code pfvm__q_param_consts(pfvm__quantizer *q, const pfvm_value *v, pfvm_value **scale, pfvm_value **zp)
{
    const pfvm__qparams *p = &q->params[v->id];
    void *d;
    if (!(*scale = pfvm__q_const(q, v->name, "_scale", PFVM_FLOAT, 0, NULL, &d)))
        return q->st ? q->st->code : PFVM_ERR_NOMEM;
    *(float *)d = p->scale;
    if (!(*zp = pfvm__q_const(q, v->name, "_zero_point", p->dtype, 0, NULL, &d)))
        return q->st ? q->st->code : PFVM_ERR_NOMEM;
    if (p->dtype == PFVM_UINT8)
        *(uint8_t *)d = (uint8_t)p->zp;
    else
        *(int8_t *)d = (int8_t)p->zp;
    return PFVM_OK;
}

/* The node is named after its output, a fresh value: node names stay
 * unique (onnxruntime requires it) even when one weight feeds two nodes. */
static pfvm_node *pfvm__q_add(pfvm__quantizer *q, const char *op, pfvm_value **ins, int n_in, pfvm_value *out)
{
    return pfvm_graph_add_node(q->g, op, "", out->name, ins, n_in, &out, 1, q->st);
}

/* v -> QuantizeLinear -> DequantizeLinear, read by every node that read v. */
static pfvm_code pfvm__q_insert_qdq(pfvm__quantizer *q, pfvm_value *v, int n_nodes)
{
    pfvm_value *ins[3], *vq, *vdq;
    pfvm_node *qn, *dqn;
    int i, j;
    ins[0] = v;
    char name[512];
    pfvm__snprintf(name, sizeof name, "%s_QuantizeLinear", v->name);
    if (pfvm__q_param_consts(q, v, &ins[1], &ins[2]) || !(vq = pfvm_graph_new_value(q->g, name, q->st)) ||
        !pfvm__snprintf(name, sizeof name, "%s_DequantizeLinear", v->name) ||
        !(vdq = pfvm_graph_new_value(q->g, name, q->st)) ||
        !(qn = pfvm__q_add(q, "QuantizeLinear", ins, 3, vq)))
        return q->st ? q->st->code : PFVM_ERR_NOMEM;
    ins[0] = vq;
    if (!(dqn = pfvm__q_add(q, "DequantizeLinear", ins, 3, vdq)))
        return q->st ? q->st->code : PFVM_ERR_NOMEM;
    /* the original nodes only (the ones just added read v on purpose) */
    for (i = 0; i < n_nodes; i++)
        for (j = 0; j < q->g->nodes[i]->n_inputs; j++)
            if (q->g->nodes[i]->inputs[j] == v) {
                q->g->nodes[i]->inputs[j] = vdq;
                if (pfvm__q_record(q, q->g->nodes[i], j, v, vdq, v->id))
                    return PFVM_ERR_NOMEM;
            }
    (void)qn;
    q->rep.activations++;
    return PFVM_OK;
}

/* Per-channel (or per-tensor) symmetric int8 scales of weight w along axis.
 * Weights and biases leave out DequantizeLinear's zero point (optional,
 * 0 by default): per channel it would cost 1 byte (weights) and 4 bytes
 * (biases) per output channel of file for nothing. */
static pfvm_code pfvm__q_weight(pfvm__quantizer *q, pfvm_node *n, int slot, int axis, float **scales_out, int *n_scales)
{
    pfvm_value *wv = n->inputs[slot], *ins[3], *wdq;
    const pfvm_tensor *w = wv->init;
    int64_t total = pfvm_tensor_numel(w), len, inner = 1, i, c;
    int d, per = q->opt->per_channel;
    float *scales;
    int8_t *wq;
    void *data;
    pfvm_node *dq;
    char base[400];
    axis = axis < 0 ? w->rank + axis : axis;
    len = per && axis >= 0 && axis < w->rank ? w->dims[axis] : 1;
    for (d = axis + 1; per && d < w->rank; d++)
        inner *= w->dims[d];
    pfvm__snprintf(base, sizeof base, "%s", wv->name);
    if (!(ins[1] = pfvm__q_const(q, base, "_scale", PFVM_FLOAT, per ? 1 : 0, &len, &data)))
        return q->st ? q->st->code : PFVM_ERR_NOMEM;
    scales = (float *)data;
    if (!(ins[0] = pfvm__q_const(q, base, "_quantized", PFVM_INT8, w->rank, w->dims, &data)))
        return q->st ? q->st->code : PFVM_ERR_NOMEM;
    wq = (int8_t *)data;
    for (c = 0; c < len; c++)
        scales[c] = 0;
    for (i = 0; i < total; i++) {
        double a = fabs(pfvm_tensor_get_f64(w, i));
        c = (i / inner) % len;
        if (a > scales[c])
            scales[c] = (float)a;
    }
    for (c = 0; c < len; c++)
        scales[c] = scales[c] > 0 ? scales[c] / 127.0f : 1.0f;
    for (i = 0; i < total; i++) {
        double v = pfvm__q_round_even(pfvm_tensor_get_f64(w, i) / scales[(i / inner) % len]);
        wq[i] = (int8_t)(v < -127 ? -127 : v > 127 ? 127 : v);
    }
    pfvm__snprintf(base, sizeof base, "%s_DequantizeLinear", wv->name);
    if (!(wdq = pfvm_graph_new_value(q->g, base, q->st)) ||
        !(dq = pfvm__q_add(q, "DequantizeLinear", ins, 2, wdq)))
        return q->st ? q->st->code : PFVM_ERR_NOMEM;
    if (per && pfvm_node_set_attr_int(dq, "axis", axis, q->st))
        return q->st->code;
    n->inputs[slot] = wdq;
    if (pfvm__q_record(q, n, slot, wv, wdq, -1))
        return PFVM_ERR_NOMEM;
    *scales_out = scales;
    *n_scales = (int)len;
    q->rep.weights++;
    return PFVM_OK;
}

/* Bias b as int32 at scale x_scale * w_scale[c], zero point 0. */
static pfvm_code pfvm__q_bias(pfvm__quantizer *q, pfvm_node *n, int slot, float xs, const float *ws, int nws)
{
    pfvm_value *bv = n->inputs[slot], *ins[3], *bdq;
    const pfvm_tensor *b = bv->init;
    int64_t len = pfvm_tensor_numel(b), i;
    float *scales;
    int32_t *bq;
    void *data;
    pfvm_node *dq;
    if (b->rank != 1 || (nws != 1 && nws != len))
        return PFVM_OK; /* stays float */
    if (!(ins[1] = pfvm__q_const(q, bv->name, "_scale", PFVM_FLOAT, 1, &len, &data)))
        return q->st ? q->st->code : PFVM_ERR_NOMEM;
    scales = (float *)data;
    if (!(ins[0] = pfvm__q_const(q, bv->name, "_quantized", PFVM_INT32, 1, &len, &data)))
        return q->st ? q->st->code : PFVM_ERR_NOMEM;
    bq = (int32_t *)data;
    for (i = 0; i < len; i++) {
        double v;
        scales[i] = xs * ws[nws == 1 ? 0 : i];
        v = pfvm__q_round_even(pfvm_tensor_get_f64(b, i) / scales[i]);
        bq[i] = (int32_t)(v < -2147483647.0 ? -2147483647.0 : v > 2147483647.0 ? 2147483647.0 : v);
    }
    char name[512];
    pfvm__snprintf(name, sizeof name, "%s_DequantizeLinear", bv->name);
    if (!(bdq = pfvm_graph_new_value(q->g, name, q->st)) ||
        !(dq = pfvm__q_add(q, "DequantizeLinear", ins, 2, bdq)) ||
        pfvm_node_set_attr_int(dq, "axis", 0, q->st))
        return q->st ? q->st->code : PFVM_ERR_NOMEM;
    n->inputs[slot] = bdq;
    if (pfvm__q_record(q, n, slot, bv, bdq, -1))
        return PFVM_ERR_NOMEM;
    q->rep.biases++;
    return PFVM_OK;
}

/* Weight and bias of quantized node n (input 0 already has its params). */
static pfvm_code pfvm__q_node_weights(pfvm__quantizer *q, pfvm_node *n)
{
    const pfvm__qrole *r = pfvm__q_role(n);
    float *ws = NULL;
    int nws = 0, axis;
    const pfvm_value *x = n->inputs[0];
    pfvm_value *w = r->weight >= 0 && r->weight < n->n_inputs ? n->inputs[r->weight] : NULL;
    if (!w || !w->init || w->init->dtype != PFVM_FLOAT || w->init->rank < 1)
        return PFVM_OK;
    if (!strcmp(n->op_type, "Gemm") &&
        (pfvm_node_attr_int(n, "transA", 0) || w->init->rank != 2))
        return PFVM_OK;
    if (!strcmp(n->op_type, "MatMul") && w->init->rank != 2)
        return PFVM_OK;
    axis = pfvm_node_attr_int(n, "transB", 0) ? r->axis_trans : r->axis;
    if (pfvm__q_weight(q, n, r->weight, axis, &ws, &nws))
        return q->st ? q->st->code : PFVM_ERR_NOMEM;
    if (r->bias >= 0 && r->bias < n->n_inputs && n->inputs[r->bias] && n->inputs[r->bias]->init &&
        n->inputs[r->bias]->init->dtype == PFVM_FLOAT && q->params[x->id].set &&
        (strcmp(n->op_type, "Gemm") || pfvm_node_attr_float(n, "beta", 1.0f) == 1.0f) &&
        (strcmp(n->op_type, "Gemm") || pfvm_node_attr_float(n, "alpha", 1.0f) == 1.0f))
        return pfvm__q_bias(q, n, r->bias, q->params[x->id].scale, ws, nws);
    return PFVM_OK;
}

/* Operators that only move or pick values: their output keeps their input's
 * scale and zero point (a percentile range of a MaxPool's output is not its
 * input's), so that the integer form runs them on the quantized tensor. */
static int pfvm__q_moves_values(const pfvm_node *n)
{
    return !strcmp(n->op_type, "MaxPool") || !strcmp(n->op_type, "Flatten") || !strcmp(n->op_type, "Reshape");
}

static pfvm_code pfvm__q_rewrite(pfvm__quantizer *q)
{
    int i, n_nodes = q->n_nodes;
    for (i = 0; i < q->n_values; i++)
        if (q->mark[i])
            pfvm__q_act_params(&q->stats[i], q->opt->symmetric, &q->params[i]);
    for (i = 0; i < n_nodes; i++) { /* in topological order: chains pass the input's parameters on */
        const pfvm_node *n = q->g->nodes[i];
        if (q->quant[i] && pfvm__q_moves_values(n) && q->mark[n->inputs[0]->id] && q->mark[n->outputs[0]->id])
            q->params[n->outputs[0]->id] = q->params[n->inputs[0]->id];
    }
    for (i = 0; i < n_nodes; i++)
        if (q->quant[i] && pfvm__q_node_weights(q, q->g->nodes[i]))
            return q->st ? q->st->code : PFVM_ERR_NOMEM;
    for (i = 0; i < q->n_values; i++)
        if (q->mark[i] && pfvm__q_insert_qdq(q, q->g->values[i], n_nodes))
            return q->st ? q->st->code : PFVM_ERR_NOMEM;
    return pfvm_graph_toposort(q->g, q->st);
}

/* ---- sensitivity analysis and automatic mixed precision --------------------------------------- */

#define PFVM__Q_SENSE_SETS 8 /* sets the analysis runs (the first ones) */
#define PFVM__Q_SQNR_SETS 2  /* of which the per-activation SQNR keeps float copies of */

/* Which operands read their quantized form: mode -1 all (but the
 * activations left float), -2 none, g >= 0 only activation g's. */
static void pfvm__q_switch(pfvm__quantizer *q, int mode)
{
    int i;
    for (i = 0; i < (int)stbds_arrlen(q->subs); i++) {
        const pfvm__qsub *u = &q->subs[i];
        int quant = mode == -1 ? (u->group < 0 || !q->left_float[u->group]) : mode >= 0 && u->group == mode;
        u->node->inputs[u->slot] = quant ? u->qv : u->fv;
    }
}

/* State of one analysis: float references and accumulated errors. */
typedef struct pfvm__qsense {
    pfvm_value **acts;   /* the quantized activations (float values), n */
    float **ref;         /* [set * (n + n_out) + j]: float copies (activations of the first sets, outputs) */
    double *sig, *err;   /* per activation: sum of squares of the reference and of the difference */
    double out_sig, out_err;
    int n, n_out, k;
} pfvm__qsense;

static double pfvm__q_db(double sig, double err)
{
    return err > 0 ? 10 * log10(sig / err) : 999;
}

static pfvm_code pfvm__q_keep(pfvm__quantizer *q, float **slot, const pfvm_tensor *t)
{
    int64_t n = t ? pfvm_tensor_numel(t) : 0, i;
    if (!t || t->dtype != PFVM_FLOAT || !t->data)
        return PFVM_OK;
    if (!(*slot = (float *)PFVM_REALLOC(NULL, (size_t)(n + 1) * sizeof(float))))
        return pfvm__fail(q->st, PFVM_ERR_NOMEM, "out of memory");
    for (i = 0; i < n; i++)
        (*slot)[i] = ((const float *)t->data)[i];
    return PFVM_OK;
}

static void pfvm__q_compare(const float *ref, const pfvm_tensor *t, double *sig, double *err)
{
    int64_t n = t ? pfvm_tensor_numel(t) : 0, i;
    if (!ref || !t || t->dtype != PFVM_FLOAT || !t->data)
        return;
    for (i = 0; i < n; i++) {
        double r = ref[i], d = ((const float *)t->data)[i] - r;
        *sig += r * r;
        *err += d * d;
    }
}

/* Runs the first k sets on the graph as switched, with the values of
 * `extra` (NULL or n_extra) as added outputs: keep != 0 stores float copies
 * into a->ref, otherwise the outputs are compared with them (into a->sig
 * and a->err for activations, a->out_sig and a->out_err for outputs). A
 * graph input among extra is read from the set itself. */
static pfvm_code pfvm__q_sense_run(pfvm__quantizer *q, pfvm__qsense *a, const pfvm_tensor *const *inputs, pfvm_value **extra,
                                   int keep)
{
    pfvm_graph *g = q->g;
    int n_out0 = (int)stbds_arrlen(g->outputs), i, s, n_in, w = a->n + a->n_out;
    pfvm_exec *e = NULL;
    pfvm_code rc = PFVM_OK;
    int *where = (int *)PFVM_REALLOC(NULL, (size_t)(a->n + 1) * sizeof(int)); /* output index, or -1 - input index */
    if (!where)
        return pfvm__fail(q->st, PFVM_ERR_NOMEM, "out of memory");
    for (i = 0; extra && i < a->n && !rc; i++) {
        where[i] = -1000000;
        if (extra[i]->producer && !extra[i]->is_output) {
            where[i] = (int)stbds_arrlen(g->outputs);
            rc = pfvm_graph_add_output(g, extra[i], q->st);
        }
    }
    if (!rc && !(e = pfvm_exec_new(q->m, g, q->st)))
        rc = q->st ? q->st->code : PFVM_ERR_INVALID;
    n_in = e ? pfvm_exec_num_inputs(e) : 0;
    for (i = 0; extra && e && i < a->n; i++) {
        int j;
        for (j = 0; j < n_in && where[i] == -1000000; j++)
            if (pfvm_exec_input(e, j) == extra[i] || pfvm_exec_input(e, j) == a->acts[i])
                where[i] = -1 - j;
    }
    for (s = 0; s < a->k && !rc; s++) {
        const pfvm_tensor *const *set = inputs + (size_t)s * (size_t)n_in;
        float **ref = a->ref + (size_t)s * (size_t)w;
        if ((rc = pfvm_exec_bind(e, set, n_in, q->st)) != PFVM_OK || (rc = pfvm_exec_run(e, q->st)) != PFVM_OK) {
            pfvm_status_prefix(q->st, "quantize: sensitivity set %d", s);
            break;
        }
        for (i = 0; extra && s < PFVM__Q_SQNR_SETS && i < a->n && !rc; i++) {
            const pfvm_tensor *t = where[i] >= 0 ? pfvm_exec_output(e, where[i])
                                   : where[i] > -1000000 ? set[-1 - where[i]] : NULL;
            if (keep)
                rc = pfvm__q_keep(q, &ref[i], t);
            else
                pfvm__q_compare(ref[i], t, &a->sig[i], &a->err[i]);
        }
        for (i = 0; i < a->n_out && !rc; i++) {
            if (keep)
                rc = pfvm__q_keep(q, &ref[a->n + i], pfvm_exec_output(e, i));
            else
                pfvm__q_compare(ref[a->n + i], pfvm_exec_output(e, i), &a->out_sig, &a->out_err);
        }
    }
    pfvm_exec_free(e);
    PFVM_FREE(where);
    pfvm__q_drop_extra_outputs(g, n_out0);
    return rc;
}

static void pfvm__q_log(pfvm__quantizer *q, const char *fmt, ...)
{
    char line[768];
    va_list ap;
    if (!q->opt->log)
        return;
    va_start(ap, fmt);
    pfvm__vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    q->opt->log(q->opt->log_ctx, line);
}

/* The outputs' SQNR with the operands switched as they are. */
static pfvm_code pfvm__q_out_db(pfvm__quantizer *q, pfvm__qsense *a, const pfvm_tensor *const *inputs, double *db)
{
    pfvm_code rc;
    a->out_sig = a->out_err = 0;
    rc = pfvm__q_sense_run(q, a, inputs, NULL, 0);
    *db = pfvm__q_db(a->out_sig, a->out_err);
    return rc;
}

static pfvm_code pfvm__q_analyse(pfvm__quantizer *q, pfvm__qsense *a, const pfvm_tensor *const *inputs, int n_sets)
{
    pfvm_value **dq;
    double *alone = NULL, db;
    int i, j, x;
    pfvm_code rc;
    for (i = 0; i < (int)stbds_arrlen(q->subs); i++)
        if (q->subs[i].group >= 0 && (!a->n || a->acts[a->n - 1] != q->subs[i].fv)) {
            for (j = 0; j < a->n && a->acts[j] != q->subs[i].fv; j++)
                ;
            if (j == a->n)
                a->acts[a->n++] = q->subs[i].fv;
        }
    a->n_out = (int)stbds_arrlen(q->g->outputs);
    a->k = n_sets < PFVM__Q_SENSE_SETS ? n_sets : PFVM__Q_SENSE_SETS;
    if (!(a->ref = (float **)PFVM_REALLOC(NULL, (size_t)a->k * (size_t)(a->n + a->n_out) * sizeof(float *) + 1)) ||
        !(a->sig = (double *)PFVM_REALLOC(NULL, (size_t)(a->n + 1) * sizeof(double))) ||
        !(a->err = (double *)PFVM_REALLOC(NULL, (size_t)(a->n + 1) * sizeof(double))) ||
        !(alone = (double *)PFVM_REALLOC(NULL, (size_t)(a->n + 1) * sizeof(double))))
        return pfvm__fail(q->st, PFVM_ERR_NOMEM, "out of memory");
    memset(a->ref, 0, (size_t)a->k * (size_t)(a->n + a->n_out) * sizeof(float *));
    for (i = 0; i < a->n; i++)
        a->sig[i] = a->err[i] = 0, alone[i] = 999;
    /* the float model's activations and outputs */
    pfvm__q_switch(q, -2);
    if ((rc = pfvm__q_sense_run(q, a, inputs, a->acts, 1)) != PFVM_OK)
        goto done;
    /* the QDQ model's dequantized activations against them */
    if (!(dq = (pfvm_value **)PFVM_REALLOC(NULL, (size_t)(a->n + 1) * sizeof *dq))) {
        rc = pfvm__fail(q->st, PFVM_ERR_NOMEM, "out of memory");
        goto done;
    }
    for (i = 0; i < a->n; i++)
        for (j = 0; j < (int)stbds_arrlen(q->subs); j++)
            if (q->subs[j].fv == a->acts[i])
                dq[i] = q->subs[j].qv;
    pfvm__q_switch(q, -1);
    rc = pfvm__q_sense_run(q, a, inputs, dq, 0);
    PFVM_FREE(dq);
    if (rc)
        goto done;
    q->rep.out_sqnr_db = pfvm__q_db(a->out_sig, a->out_err);
    /* each activation quantized alone (weights float) */
    for (i = 0; i < a->n && q->opt->auto_exclude > 0 && !rc; i++) {
        pfvm__q_switch(q, a->acts[i]->id);
        rc = pfvm__q_out_db(q, a, inputs, &alone[i]);
    }
    if (rc)
        goto done;
    pfvm__q_log(q, "sensitivity on %d sets (SQNR in dB: activation = the QDQ model's dequantized value against "
                "the float model's, on %d sets; alone = the outputs with only this activation quantized)",
                a->k, a->k < PFVM__Q_SQNR_SETS ? a->k : PFVM__Q_SQNR_SETS);
    for (i = 0; i < a->n; i++) {
        const pfvm_node *p = a->acts[i]->producer;
        char al[32];
        if (q->opt->auto_exclude > 0)
            pfvm__snprintf(al, sizeof al, "%.1f", alone[i]);
        else
            pfvm__snprintf(al, sizeof al, "-");
        pfvm__q_log(q, "  %-40s %-18s activation %6.1f  alone %6s", a->acts[i]->name, p ? p->op_type : "(input)",
                    pfvm__q_db(a->sig[i], a->err[i]), al);
    }
    pfvm__q_log(q, "outputs, everything quantized: %.1f dB", q->rep.out_sqnr_db);
    /* the most sensitive activations stay float */
    for (x = 0; x < q->opt->auto_exclude && x < a->n; x++) {
        int worst = -1;
        for (i = 0; i < a->n; i++)
            if (!q->left_float[a->acts[i]->id] && (worst < 0 || alone[i] < alone[worst]))
                worst = i;
        q->left_float[a->acts[worst]->id] = 1;
        q->rep.excluded++;
        q->rep.activations--;
        pfvm__q_log(q, "auto-exclude: %s left float (alone %.1f dB)", a->acts[worst]->name, alone[worst]);
    }
    pfvm__q_switch(q, -1);
    if (q->rep.excluded) {
        rc = pfvm__q_out_db(q, a, inputs, &db);
        q->rep.out_sqnr_db = db;
        pfvm__q_log(q, "outputs, %d activations left float: %.1f dB", q->rep.excluded, db);
    }
done:
    PFVM_FREE(alone);
    return rc;
}

static void pfvm__q_sense_free(pfvm__qsense *a)
{
    int i;
    for (i = 0; a->ref && i < a->k * (a->n + a->n_out); i++)
        PFVM_FREE(a->ref[i]);
    PFVM_FREE(a->ref);
    PFVM_FREE(a->sig);
    PFVM_FREE(a->err);
    PFVM_FREE(a->acts);
}

static pfvm_code pfvm__q_check(pfvm_model *m, const pfvm_quant_options *opt, pfvm_status *st)
{
    int64_t opset = pfvm_model_opset(m, "");
    if (!m || !m->graph)
        return pfvm__fail(st, PFVM_ERR_INVALID, "quantize: no model");
    if (opset < 10)
        return pfvm__fail(st, PFVM_ERR_UNSUPPORTED, "quantize: opset %lld has no QuantizeLinear (10 or later needed)",
                          (long long)opset);
    if (opt->per_channel && opset < 13)
        return pfvm__fail(st, PFVM_ERR_UNSUPPORTED,
                          "quantize: per-channel weights need opset 13 (DequantizeLinear's axis), the model has %lld",
                          (long long)opset);
    return PFVM_OK;
}

static pfvm_code pfvm__scoped_quantize(pfvm_model *m, const pfvm_tensor *const *inputs, int n_sets, const pfvm_quant_options *opt,
                        pfvm_quant_report *report, pfvm_status *st)
{
    pfvm_quant_options defaults;
    pfvm__quantizer q;
    pfvm_code rc;
    int i;
    memset(&defaults, 0, sizeof defaults);
    memset(&q, 0, sizeof q);
    if (!opt)
        opt = &defaults;
    if ((rc = pfvm__q_check(m, opt, st)) != PFVM_OK)
        return rc;
    if (n_sets < 1 || !inputs)
        return pfvm__fail(st, PFVM_ERR_INVALID, "quantize: no calibration inputs");
    q.m = m;
    q.g = m->graph;
    q.opt = opt;
    q.st = st;
    q.n_values = (int)stbds_arrlen(q.g->values);
    q.n_nodes = (int)stbds_arrlen(q.g->nodes);
    q.stats = (pfvm__qstat *)PFVM_REALLOC(NULL, (size_t)(q.n_values + 1) * sizeof *q.stats);
    q.params = (pfvm__qparams *)PFVM_REALLOC(NULL, (size_t)(q.n_values + 1) * sizeof *q.params);
    q.mark = (unsigned char *)PFVM_REALLOC(NULL, (size_t)q.n_values + 1);
    q.quant = (unsigned char *)PFVM_REALLOC(NULL, (size_t)q.n_nodes + 1);
    q.left_float = (unsigned char *)PFVM_REALLOC(NULL, (size_t)q.n_values + 1);
    if (!q.stats || !q.params || !q.mark || !q.quant || !q.left_float)
        rc = pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
    if (!rc) {
        memset(q.stats, 0, (size_t)(q.n_values + 1) * sizeof *q.stats);
        memset(q.params, 0, (size_t)(q.n_values + 1) * sizeof *q.params);
        memset(q.mark, 0, (size_t)q.n_values + 1);
        memset(q.quant, 0, (size_t)q.n_nodes + 1);
        memset(q.left_float, 0, (size_t)q.n_values + 1);
        rc = pfvm__q_select(&q);
    }
    if (!rc)
        rc = pfvm__q_calibrate(&q, inputs, n_sets);
    if (!rc)
        rc = pfvm__q_rewrite(&q);
    if (!rc)
        rc = pfvm_infer_shapes(q.g, 0, st);
    if (!rc && (opt->log || opt->auto_exclude > 0)) {
        pfvm__qsense a;
        memset(&a, 0, sizeof a);
        if (!(a.acts = (pfvm_value **)PFVM_REALLOC(NULL, (size_t)(q.n_values + 1) * sizeof *a.acts)))
            rc = pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
        if (!rc)
            rc = pfvm__q_analyse(&q, &a, inputs, n_sets);
        pfvm__q_switch(&q, -1);
        pfvm__q_sense_free(&a);
    }
    if (q.stats)
        for (i = 0; i < q.n_values; i++)
            PFVM_FREE(q.stats[i].hist);
    PFVM_FREE(q.stats);
    PFVM_FREE(q.params);
    PFVM_FREE(q.mark);
    PFVM_FREE(q.quant);
    PFVM_FREE(q.left_float);
    stbds_arrfree(q.subs);
    if (!rc && report)
        *report = q.rep;
    return rc;
}

pfvm_code pfvm_quantize(pfvm_model *m, const pfvm_tensor *const *inputs, int n_sets, const pfvm_quant_options *opt,
                        pfvm_quant_report *report, pfvm_status *st)
{
    PFVM__SCOPED(pfvm_code, pfvm__model_allocator(m), pfvm__scoped_quantize(m, inputs, n_sets, opt, report, st));
}
