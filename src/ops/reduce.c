/* ops/reduce: the Reduce family, ArgMax/ArgMin, TopK, CumSum and the
 * losses NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss.
 *
 * One reduction engine: the input is viewed as (outer, reduced, inner)
 * blocks after moving the reduced axes' extent into a mask, and each output
 * element folds the inputs that map onto it in double precision. */
#include "ops_common.h"

#include <math.h>

/* ---- axes ---------------------------------------------------------------------------- */

/* Reduced-axis mask from a list of axes (none: every axis). Returns 0 on a
 * bad axis, with the status set. */
static int pfvm__red_mask(const pfvm_node *n, const int64_t *axes, int cnt, int rank, unsigned char *mask, pfvm_status *st)
{
    int i;
    if (cnt < 0 || cnt == 0) {
        for (i = 0; i < rank; i++)
            mask[i] = 1;
        return 1;
    }
    memset(mask, 0, (size_t)(rank > 0 ? rank : 1));
    for (i = 0; i < cnt; i++) {
        int a = pfvm__axis(axes[i], rank);
        if (a < 0)
            return pfvm__op_fail(st, n, PFVM_ERR_INVALID, "axis %lld is out of range for rank %d", (long long)axes[i], rank),
                   0;
        mask[a] = 1;
    }
    return 1;
}

static int pfvm__red_axes_from_input(const pfvm_node *n)
{
    return !strcmp(n->op_type, "ReduceSum") ? n->opset >= 13 : n->opset >= 18;
}

/* Axes for inference; -2 when unknown. */
static int pfvm__red_iaxes(pfvm_ictx *c, int64_t *axes)
{
    const int64_t *a;
    int cnt, i;
    if (pfvm__red_axes_from_input(c->node)) {
        if (c->n_in < 2 || !c->in[1])
            return -1;
        cnt = pfvm_ival_ints(c->in[1], axes, PFVM_MAX_RANK * 2);
        return cnt < 0 ? -2 : cnt;
    }
    cnt = pfvm_node_attr_ints(c->node, "axes", &a);
    for (i = 0; i < cnt && i < PFVM_MAX_RANK * 2; i++)
        axes[i] = a[i];
    return cnt;
}

static int pfvm__red_kaxes(const pfvm_kctx *k, int64_t *axes)
{
    const int64_t *a;
    int cnt, i;
    if (pfvm__red_axes_from_input(k->node)) {
        int64_t n;
        if (k->n_in < 2 || !k->in[1])
            return -1;
        n = pfvm_tensor_numel(k->in[1]);
        if (n > PFVM_MAX_RANK * 2)
            return -1;
        for (i = 0; i < n; i++)
            axes[i] = pfvm_tensor_get_i64(k->in[1], i);
        return (int)n;
    }
    cnt = pfvm_node_attr_ints(k->node, "axes", &a);
    for (i = 0; i < cnt && i < PFVM_MAX_RANK * 2; i++)
        axes[i] = a[i];
    return cnt;
}

static pfvm_code pfvm__red_infer(pfvm_ictx *c)
{
    const pfvm_shape *x = &c->in[0]->type.shape;
    int64_t axes[PFVM_MAX_RANK * 2];
    int cnt = pfvm__red_iaxes(c, axes), keep = (int)pfvm_node_attr_int(c->node, "keepdims", 1), i;
    int noop = (int)pfvm_node_attr_int(c->node, "noop_with_empty_axes", 0);
    unsigned char mask[PFVM_MAX_RANK];
    pfvm_shape out;
    if (x->rank < 0 || cnt == -2)
        return pfvm_infer_unknown(c, 0, c->in[0]->type.dtype, x->rank >= 0 && keep ? x->rank : -1);
    if (cnt <= 0 && noop) {
        c->out[0]->type = c->in[0]->type;
        return PFVM_OK;
    }
    if (!pfvm__red_mask(c->node, axes, cnt, x->rank, mask, c->st))
        return c->st ? c->st->code : PFVM_ERR_INVALID;
    out.rank = 0;
    for (i = 0; i < x->rank; i++) {
        if (!mask[i])
            out.dims[out.rank++] = x->dims[i];
        else if (keep)
            out.dims[out.rank++] = pfvm_sym_const(c->syms, 1);
    }
    pfvm_ival_set_tensor(c->out[0], c->in[0]->type.dtype, &out);
    return PFVM_OK;
}

/* ---- the engine ------------------------------------------------------------------------- */

enum { PFVM__RED_SUM, PFVM__RED_MEAN, PFVM__RED_MAX, PFVM__RED_MIN, PFVM__RED_PROD, PFVM__RED_L1, PFVM__RED_L2,
       PFVM__RED_LOGSUM, PFVM__RED_LOGSUMEXP, PFVM__RED_SUMSQ };

static void pfvm__red_store(pfvm_tensor *t, int64_t i, double v)
{
    switch (t->dtype) {
    case PFVM_FLOAT: ((float *)t->data)[i] = (float)v; break;
    case PFVM_DOUBLE: ((double *)t->data)[i] = v; break;
    case PFVM_FLOAT16: ((uint16_t *)t->data)[i] = pfvm_float_to_half((float)v); break;
    case PFVM_BFLOAT16: ((uint16_t *)t->data)[i] = pfvm_float_to_bf16((float)v); break;
    case PFVM_INT64: ((int64_t *)t->data)[i] = (int64_t)v; break;
    case PFVM_INT32: ((int32_t *)t->data)[i] = (int32_t)v; break;
    case PFVM_UINT32: ((uint32_t *)t->data)[i] = (uint32_t)v; break;
    case PFVM_UINT64: ((uint64_t *)t->data)[i] = (uint64_t)v; break;
    case PFVM_INT8: ((int8_t *)t->data)[i] = (int8_t)v; break;
    case PFVM_UINT8: ((uint8_t *)t->data)[i] = (uint8_t)v; break;
    case PFVM_BOOL: ((uint8_t *)t->data)[i] = v != 0; break;
    default: break;
    }
}

static pfvm_code pfvm__red_run(pfvm_kctx *k, int kind)
{
    const pfvm_tensor *X = k->in[0];
    pfvm_tensor *Y = k->out[0];
    int64_t axes[PFVM_MAX_RANK * 2], xs[PFVM_MAX_RANK], idx[PFVM_MAX_RANK] = {0};
    int64_t total = pfvm_tensor_numel(X), ny = pfvm_tensor_numel(Y), i, cnt_red = 1, o;
    int cnt = pfvm__red_kaxes(k, axes), d, r = X->rank;
    unsigned char mask[PFVM_MAX_RANK];
    if (cnt <= 0 && pfvm_node_attr_int(k->node, "noop_with_empty_axes", 0)) {
        memcpy(Y->data, X->data, X->nbytes < Y->nbytes ? X->nbytes : Y->nbytes);
        return PFVM_OK;
    }
    if (!pfvm__red_mask(k->node, axes, cnt, r, mask, k->st))
        return k->st ? k->st->code : PFVM_ERR_INVALID;
    /* output strides indexed by input dims (0 on reduced dims) */
    {
        int64_t s = 1;
        for (d = r - 1; d >= 0; d--) {
            xs[d] = mask[d] ? 0 : s;
            if (!mask[d])
                s *= X->dims[d];
            else
                cnt_red *= X->dims[d];
        }
    }
    /* the output holds the accumulators: kernels get no scratch memory */
    for (o = 0; o < ny; o++) {
        double init = kind == PFVM__RED_MAX ? -INFINITY : kind == PFVM__RED_MIN ? INFINITY : kind == PFVM__RED_PROD ? 1 : 0;
        pfvm__red_store(Y, o, init);
    }
    for (i = 0; i < total; i++) {
        int64_t at = 0;
        double v = pfvm_tensor_get_f64(X, i), cur;
        for (d = 0; d < r; d++)
            at += idx[d] * xs[d];
        cur = pfvm_tensor_get_f64(Y, at);
        switch (kind) {
        case PFVM__RED_MAX: cur = v > cur || isnan(v) ? v : cur; break;
        case PFVM__RED_MIN: cur = v < cur || isnan(v) ? v : cur; break;
        case PFVM__RED_PROD: cur *= v; break;
        case PFVM__RED_L1: cur += fabs(v); break;
        case PFVM__RED_L2: case PFVM__RED_SUMSQ: cur += v * v; break;
        case PFVM__RED_LOGSUMEXP: cur += exp(v); break;
        default: cur += v; break;
        }
        pfvm__red_store(Y, at, cur);
        for (d = r - 1; d >= 0; d--) {
            if (++idx[d] < X->dims[d])
                break;
            idx[d] = 0;
        }
    }
    for (o = 0; o < ny; o++) {
        double v = pfvm_tensor_get_f64(Y, o);
        switch (kind) {
        case PFVM__RED_MEAN: v = cnt_red ? v / (double)cnt_red : NAN; break;
        case PFVM__RED_L2: v = sqrt(v); break;
        case PFVM__RED_LOGSUM: case PFVM__RED_LOGSUMEXP: v = log(v); break;
        default: continue;
        }
        pfvm__red_store(Y, o, v);
    }
    return PFVM_OK;
}

#define PFVM__RED_KERNEL(name, kind) \
    static pfvm_code pfvm__red_k_##name(pfvm_kctx *k) { return pfvm__red_run(k, kind); }
PFVM__RED_KERNEL(sum, PFVM__RED_SUM)
PFVM__RED_KERNEL(mean, PFVM__RED_MEAN)
PFVM__RED_KERNEL(max, PFVM__RED_MAX)
PFVM__RED_KERNEL(min, PFVM__RED_MIN)
PFVM__RED_KERNEL(prod, PFVM__RED_PROD)
PFVM__RED_KERNEL(l1, PFVM__RED_L1)
PFVM__RED_KERNEL(l2, PFVM__RED_L2)
PFVM__RED_KERNEL(logsum, PFVM__RED_LOGSUM)
PFVM__RED_KERNEL(logsumexp, PFVM__RED_LOGSUMEXP)
PFVM__RED_KERNEL(sumsq, PFVM__RED_SUMSQ)

/* ---- ArgMax, ArgMin ---------------------------------------------------------------------- */

static pfvm_code pfvm__red_infer_arg(pfvm_ictx *c)
{
    const pfvm_shape *x = &c->in[0]->type.shape;
    int keep = (int)pfvm_node_attr_int(c->node, "keepdims", 1), a, i;
    pfvm_shape out;
    if (x->rank < 0)
        return pfvm_infer_unknown(c, 0, PFVM_INT64, -1);
    a = pfvm__axis(pfvm_node_attr_int(c->node, "axis", 0), x->rank);
    if (a < 0)
        return pfvm__fail(c->st, PFVM_ERR_INVALID, "axis is out of range for rank %d", x->rank);
    out.rank = 0;
    for (i = 0; i < x->rank; i++) {
        if (i != a)
            out.dims[out.rank++] = x->dims[i];
        else if (keep)
            out.dims[out.rank++] = pfvm_sym_const(c->syms, 1);
    }
    pfvm_ival_set_tensor(c->out[0], PFVM_INT64, &out);
    return PFVM_OK;
}

static pfvm_code pfvm__red_arg(pfvm_kctx *k, int is_max)
{
    const pfvm_tensor *X = k->in[0];
    int a = pfvm__axis(pfvm_node_attr_int(k->node, "axis", 0), X->rank), d;
    int last = (int)pfvm_node_attr_int(k->node, "select_last_index", 0);
    int64_t outer = 1, len, inner = 1, o, j, i;
    if (a < 0)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "axis is out of range");
    len = X->dims[a];
    for (d = 0; d < a; d++)
        outer *= X->dims[d];
    for (d = a + 1; d < X->rank; d++)
        inner *= X->dims[d];
    for (o = 0; o < outer; o++)
        for (j = 0; j < inner; j++) {
            int64_t best = 0;
            double bv = 0;
            for (i = 0; i < len; i++) {
                double v = pfvm_tensor_get_f64(X, (o * len + i) * inner + j);
                int better = i == 0 || (is_max ? (last ? v >= bv : v > bv) : (last ? v <= bv : v < bv));
                if (better) {
                    bv = v;
                    best = i;
                }
            }
            ((int64_t *)k->out[0]->data)[o * inner + j] = best;
        }
    return PFVM_OK;
}

static pfvm_code pfvm__red_k_argmax(pfvm_kctx *k)
{
    return pfvm__red_arg(k, 1);
}

static pfvm_code pfvm__red_k_argmin(pfvm_kctx *k)
{
    return pfvm__red_arg(k, 0);
}

/* ---- CumSum ------------------------------------------------------------------------------- */

static pfvm_code pfvm__red_k_cumsum(pfvm_kctx *k)
{
    const pfvm_tensor *X = k->in[0];
    int a = pfvm__axis(pfvm_tensor_get_i64(k->in[1], 0), X->rank), d;
    int excl = (int)pfvm_node_attr_int(k->node, "exclusive", 0), rev = (int)pfvm_node_attr_int(k->node, "reverse", 0);
    int64_t outer = 1, len, inner = 1, o, j, i;
    if (a < 0)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "axis is out of range");
    len = X->dims[a];
    for (d = 0; d < a; d++)
        outer *= X->dims[d];
    for (d = a + 1; d < X->rank; d++)
        inner *= X->dims[d];
    for (o = 0; o < outer; o++)
        for (j = 0; j < inner; j++) {
            double s = 0;
            int64_t is = 0;
            for (i = 0; i < len; i++) {
                int64_t ii = rev ? len - 1 - i : i, at = (o * len + ii) * inner + j;
                double v = pfvm_tensor_get_f64(X, at);
                int64_t iv = pfvm_tensor_get_i64(X, at);
                if (pfvm_dtype_is_float(X->dtype)) {
                    if (excl) {
                        pfvm__red_store(k->out[0], at, s);
                        s += v;
                    } else {
                        s += v;
                        pfvm__red_store(k->out[0], at, s);
                    }
                } else {
                    if (excl) {
                        pfvm__red_store(k->out[0], at, (double)is);
                        is += iv;
                    } else {
                        is += iv;
                        pfvm__red_store(k->out[0], at, (double)is);
                    }
                }
            }
        }
    return PFVM_OK;
}

/* ---- TopK ---------------------------------------------------------------------------------- */

static pfvm_code pfvm__red_infer_topk(pfvm_ictx *c)
{
    const pfvm_shape *x = &c->in[0]->type.shape;
    int64_t kv[1];
    int a;
    pfvm_shape out;
    if (x->rank < 0) {
        pfvm_infer_unknown(c, 0, c->in[0]->type.dtype, -1);
        return pfvm_infer_unknown(c, 1, PFVM_INT64, -1);
    }
    a = pfvm__axis(pfvm_node_attr_int(c->node, "axis", -1), x->rank);
    if (a < 0)
        return pfvm__fail(c->st, PFVM_ERR_INVALID, "axis is out of range for rank %d", x->rank);
    out = *x;
    if (c->node->opset < 10)
        out.dims[a] = pfvm_sym_const(c->syms, pfvm_node_attr_int(c->node, "k", 0));
    else if (pfvm_ival_ints(c->in[1], kv, 1) == 1)
        out.dims[a] = pfvm_sym_const(c->syms, kv[0]);
    else {
        pfvm_infer_unknown(c, 0, c->in[0]->type.dtype, x->rank);
        return pfvm_infer_unknown(c, 1, PFVM_INT64, x->rank);
    }
    pfvm_ival_set_tensor(c->out[0], c->in[0]->type.dtype, &out);
    pfvm_ival_set_tensor(c->out[1], PFVM_INT64, &out);
    return PFVM_OK;
}

static pfvm_code pfvm__red_k_topk(pfvm_kctx *k)
{
    const pfvm_tensor *X = k->in[0];
    int a = pfvm__axis(pfvm_node_attr_int(k->node, "axis", -1), X->rank), d;
    int largest = (int)pfvm_node_attr_int(k->node, "largest", 1);
    int64_t K = k->node->opset < 10 ? pfvm_node_attr_int(k->node, "k", 0) : pfvm_tensor_get_i64(k->in[1], 0);
    int64_t outer = 1, len, inner = 1, o, j, i, t;
    if (a < 0)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "axis is out of range");
    len = X->dims[a];
    if (K < 0 || K > len)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_RANGE, "k = %lld is outside 0..%lld", (long long)K, (long long)len);
    if (!k->out[0]->data) {
        int64_t dims[PFVM_MAX_RANK];
        memcpy(dims, X->dims, sizeof(int64_t) * (size_t)X->rank);
        dims[a] = K;
        if (pfvm_kctx_output(k, 0, X->dtype, X->rank, dims) || pfvm_kctx_output(k, 1, PFVM_INT64, X->rank, dims))
            return k->st ? k->st->code : PFVM_ERR_NOMEM;
    }
    for (d = 0; d < a; d++)
        outer *= X->dims[d];
    for (d = a + 1; d < X->rank; d++)
        inner *= X->dims[d];
    /* selection without scratch memory: the t-th pick is the best element
     * not better than the (t-1)-th, ties by lower index */
    for (o = 0; o < outer; o++)
        for (j = 0; j < inner; j++) {
            double pv = 0;
            int64_t pi = -1;
            for (t = 0; t < K; t++) {
                double bv = 0;
                int64_t bi = -1;
                for (i = 0; i < len; i++) {
                    double v = pfvm_tensor_get_f64(X, (o * len + i) * inner + j);
                    int after_prev = pi < 0 || (largest ? (v < pv || (v == pv && i > pi)) : (v > pv || (v == pv && i > pi)));
                    if (!after_prev)
                        continue;
                    if (bi < 0 || (largest ? v > bv : v < bv)) {
                        bv = v;
                        bi = i;
                    }
                }
                pv = bv;
                pi = bi;
                pfvm__red_store(k->out[0], (o * K + t) * inner + j, bv);
                if (!pfvm_dtype_is_float(X->dtype))
                    pfvm__red_store(k->out[0], (o * K + t) * inner + j,
                                    (double)pfvm_tensor_get_i64(X, (o * len + bi) * inner + j));
                ((int64_t *)k->out[1]->data)[(o * K + t) * inner + j] = bi;
            }
        }
    return PFVM_OK;
}

/* ---- losses --------------------------------------------------------------------------------- */

static pfvm_code pfvm__red_infer_loss(pfvm_ictx *c)
{
    const char *red = pfvm_node_attr_string(c->node, "reduction", "mean");
    pfvm_shape out;
    int is_sce = !strcmp(c->node->op_type, "SoftmaxCrossEntropyLoss");
    if (!strcmp(red, "none")) {
        const pfvm_shape *t = &c->in[1]->type.shape;
        out = *t;
    } else {
        out.rank = 0;
    }
    pfvm_ival_set_tensor(c->out[0], c->in[0]->type.dtype, &out);
    if (is_sce && c->n_out > 1 && c->out[1])
        c->out[1]->type = c->in[0]->type;
    return PFVM_OK;
}

/* NLL over log-probabilities L[N, C, d...] (read through `get`), labels T[N, d...]. */
static pfvm_code pfvm__red_nll(pfvm_kctx *k, const pfvm_tensor *L, const pfvm_tensor *T, const pfvm_tensor *W,
                               pfvm_tensor *out)
{
    const char *red = pfvm_node_attr_string(k->node, "reduction", "mean");
    int64_t ignore = pfvm_node_attr_int(k->node, "ignore_index", INT64_MIN);
    int has_ignore = pfvm_node_attr(k->node, "ignore_index") != NULL;
    int64_t N = L->dims[0], C = L->rank > 1 ? L->dims[1] : 1, D = 1, n, d, c;
    double sum = 0, wsum = 0;
    int dd;
    int none = !strcmp(red, "none"), mean = !strcmp(red, "mean");
    if (!none && !mean && strcmp(red, "sum"))
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "reduction '%s' is not valid", red);
    for (dd = 2; dd < L->rank; dd++)
        D *= L->dims[dd];
    if (pfvm_tensor_numel(T) != N * D)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "target shape does not fit the input");
    for (n = 0; n < N; n++)
        for (d = 0; d < D; d++) {
            double v = 0, w = 0;
            c = pfvm_tensor_get_i64(T, n * D + d);
            if (!(has_ignore && c == ignore)) {
                if (c < 0 || c >= C)
                    return pfvm__op_fail(k->st, k->node, PFVM_ERR_RANGE, "class %lld is outside 0..%lld", (long long)c,
                                         (long long)(C - 1));
                w = W ? pfvm_tensor_get_f64(W, c) : 1.0;
                v = -pfvm_tensor_get_f64(L, (n * C + c) * D + d) * w;
            }
            if (none)
                pfvm__red_store(out, n * D + d, v);
            sum += v;
            wsum += w;
        }
    if (!none)
        pfvm__red_store(out, 0, mean ? (wsum != 0 ? sum / wsum : 0) : sum);
    return PFVM_OK;
}

static pfvm_code pfvm__red_k_nll(pfvm_kctx *k)
{
    return pfvm__red_nll(k, k->in[0], k->in[1], k->n_in > 2 ? k->in[2] : NULL, k->out[0]);
}

static pfvm_code pfvm__red_k_sce(pfvm_kctx *k)
{
    const pfvm_tensor *X = k->in[0];
    pfvm_tensor *lp = k->n_out > 1 ? k->out[1] : NULL;
    int64_t N = X->dims[0], C = X->rank > 1 ? X->dims[1] : 1, D = 1, n, d, c;
    int dd;
    for (dd = 2; dd < X->rank; dd++)
        D *= X->dims[dd];
    if (lp) {
        for (n = 0; n < N; n++)
            for (d = 0; d < D; d++) {
                double mx = -INFINITY, s = 0;
                for (c = 0; c < C; c++) {
                    double v = pfvm_tensor_get_f64(X, (n * C + c) * D + d);
                    mx = v > mx ? v : mx;
                }
                for (c = 0; c < C; c++)
                    s += exp(pfvm_tensor_get_f64(X, (n * C + c) * D + d) - mx);
                for (c = 0; c < C; c++)
                    pfvm__red_store(lp, (n * C + c) * D + d, pfvm_tensor_get_f64(X, (n * C + c) * D + d) - mx - log(s));
            }
        return pfvm__red_nll(k, lp, k->in[1], k->n_in > 2 ? k->in[2] : NULL, k->out[0]);
    }
    /* no log_prob output and no scratch memory: the log-softmax of the
     * target class is computed on the fly per position */
    {
        const char *red = pfvm_node_attr_string(k->node, "reduction", "mean");
        int64_t ignore = pfvm_node_attr_int(k->node, "ignore_index", INT64_MIN);
        int has_ignore = pfvm_node_attr(k->node, "ignore_index") != NULL;
        const pfvm_tensor *T = k->in[1], *W = k->n_in > 2 ? k->in[2] : NULL;
        double sum = 0, wsum = 0;
        int none = !strcmp(red, "none"), mean = !strcmp(red, "mean");
        for (n = 0; n < N; n++)
            for (d = 0; d < D; d++) {
                double mx = -INFINITY, s = 0, v = 0, w = 0;
                int64_t t = pfvm_tensor_get_i64(T, n * D + d);
                for (c = 0; c < C; c++) {
                    double x = pfvm_tensor_get_f64(X, (n * C + c) * D + d);
                    mx = x > mx ? x : mx;
                }
                for (c = 0; c < C; c++)
                    s += exp(pfvm_tensor_get_f64(X, (n * C + c) * D + d) - mx);
                if (!(has_ignore && t == ignore)) {
                    if (t < 0 || t >= C)
                        return pfvm__op_fail(k->st, k->node, PFVM_ERR_RANGE, "class %lld is out of range", (long long)t);
                    w = W ? pfvm_tensor_get_f64(W, t) : 1.0;
                    v = -(pfvm_tensor_get_f64(X, (n * C + t) * D + d) - mx - log(s)) * w;
                }
                if (none)
                    pfvm__red_store(k->out[0], n * D + d, v);
                sum += v;
                wsum += w;
            }
        if (!none)
            pfvm__red_store(k->out[0], 0, mean ? (wsum != 0 ? sum / wsum : 0) : sum);
    }
    return PFVM_OK;
}

#define PFVM__RED_T "float,double,float16,int32,int64,uint32,uint64"
#define PFVM__RED_OP(name, since, until, kern) \
    {name, "", since, until, 1, 2, 1, 1, pfvm__red_infer, kern, NULL, PFVM_FUSE_REDUCTION, PFVM__RED_T, NULL, 0}

const pfvm_op_def pfvm__ops_reduce[] = {
    PFVM__RED_OP("ReduceSum", 1, 0, pfvm__red_k_sum),
    PFVM__RED_OP("ReduceMean", 1, 0, pfvm__red_k_mean),
    PFVM__RED_OP("ReduceMax", 1, 0, pfvm__red_k_max),
    PFVM__RED_OP("ReduceMin", 1, 0, pfvm__red_k_min),
    PFVM__RED_OP("ReduceProd", 1, 0, pfvm__red_k_prod),
    PFVM__RED_OP("ReduceL1", 1, 0, pfvm__red_k_l1),
    PFVM__RED_OP("ReduceL2", 1, 0, pfvm__red_k_l2),
    PFVM__RED_OP("ReduceLogSum", 1, 0, pfvm__red_k_logsum),
    PFVM__RED_OP("ReduceLogSumExp", 1, 0, pfvm__red_k_logsumexp),
    PFVM__RED_OP("ReduceSumSquare", 1, 0, pfvm__red_k_sumsq),
    {"ArgMax", "", 1, 0, 1, 1, 1, 1, pfvm__red_infer_arg, pfvm__red_k_argmax, NULL, PFVM_FUSE_REDUCTION, PFVM__RED_T, NULL, 0},
    {"ArgMin", "", 1, 0, 1, 1, 1, 1, pfvm__red_infer_arg, pfvm__red_k_argmin, NULL, PFVM_FUSE_REDUCTION, PFVM__RED_T, NULL, 0},
    {"CumSum", "", 11, 0, 2, 2, 1, 1, pfvm_infer_same_as_first, pfvm__red_k_cumsum, NULL, PFVM_FUSE_OPAQUE, PFVM__RED_T, NULL, 0},
    {"TopK", "", 1, 0, 1, 2, 2, 2, pfvm__red_infer_topk, pfvm__red_k_topk, NULL, PFVM_FUSE_OPAQUE, PFVM__RED_T, NULL, 0},
    {"NegativeLogLikelihoodLoss", "", 12, 0, 2, 3, 1, 1, pfvm__red_infer_loss, pfvm__red_k_nll, NULL, PFVM_FUSE_OPAQUE, "float,double,float16", NULL, 0},
    {"SoftmaxCrossEntropyLoss", "", 12, 0, 2, 3, 1, 2, pfvm__red_infer_loss, pfvm__red_k_sce, NULL, PFVM_FUSE_OPAQUE, "float,double,float16", NULL, 0},
    {NULL, NULL, 0, 0, 0, 0, 0, 0, NULL, NULL, NULL, PFVM_FUSE_OPAQUE, NULL, NULL, 0}
};
