/* ops/reduce: the Reduce family, ArgMax/ArgMin, TopK, CumSum and the
 * losses NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss.
 *
 * One reduction engine serves the ten Reduce operators: the input's axes
 * are split into kept and reduced ones (adjacent axes of the same kind
 * merged, unit axes dropped) and each output element folds its reduced
 * sub-block into a local accumulator — double for floating types, 64-bit
 * integers for integer types, so integer sums are exact and wrap like
 * numpy's. Nothing but the output is written, so no scratch memory is
 * needed. The single-axis operators (ArgMax/ArgMin, TopK, CumSum) view
 * their input as (outer, axis, inner) blocks. */
#include "ops_common.h"

#include <math.h>

/* ---- element conversion ------------------------------------------------------------------ */

static int64_t pfvm__red_clampi(int64_t v, int64_t lo, int64_t hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* double -> int64 without undefined conversions: NaN gives 0, and values
 * beyond the range saturate. */
static int64_t pfvm__red_f2i(double v)
{
    if (v != v)
        return 0;
    if (v >= 0x1p63)
        return INT64_MAX;
    if (v <= -0x1p63)
        return INT64_MIN;
    return (int64_t)v;
}

/* Two's complement reinterpretation without implementation-defined casts. */
static int64_t pfvm__red_u2s(uint64_t u)
{
    return u <= (uint64_t)INT64_MAX ? (int64_t)u : -(int64_t)(~u) - 1;
}

/* Declared in ops_common.h for the other families. */
PFVM_INTERNAL void pfvm_red_store(pfvm_tensor *t, int64_t i, double v)
{
    void *d = t->data;
    size_t size = pfvm_dtype_size(t->dtype);
    /* outside the storage: nothing (see pfvm_tensor_get_f64) */
    if (!d || i < 0 || !size || (uint64_t)i >= t->nbytes / size)
        return;
    switch (t->dtype) {
    case PFVM_FLOAT: ((float *)d)[i] = (float)v; break;
    case PFVM_DOUBLE: ((double *)d)[i] = v; break;
    case PFVM_FLOAT16: ((uint16_t *)d)[i] = pfvm_float_to_half((float)v); break;
    case PFVM_BFLOAT16: ((uint16_t *)d)[i] = pfvm_float_to_bf16((float)v); break;
    case PFVM_BOOL: ((uint8_t *)d)[i] = v != 0; break;
    case PFVM_INT8: ((int8_t *)d)[i] = (int8_t)pfvm__red_clampi(pfvm__red_f2i(v), INT8_MIN, INT8_MAX); break;
    case PFVM_UINT8: ((uint8_t *)d)[i] = (uint8_t)pfvm__red_clampi(pfvm__red_f2i(v), 0, UINT8_MAX); break;
    case PFVM_INT16: ((int16_t *)d)[i] = (int16_t)pfvm__red_clampi(pfvm__red_f2i(v), INT16_MIN, INT16_MAX); break;
    case PFVM_UINT16: ((uint16_t *)d)[i] = (uint16_t)pfvm__red_clampi(pfvm__red_f2i(v), 0, UINT16_MAX); break;
    case PFVM_INT32: ((int32_t *)d)[i] = (int32_t)pfvm__red_clampi(pfvm__red_f2i(v), INT32_MIN, INT32_MAX); break;
    case PFVM_UINT32: ((uint32_t *)d)[i] = (uint32_t)pfvm__red_clampi(pfvm__red_f2i(v), 0, UINT32_MAX); break;
    case PFVM_INT64: ((int64_t *)d)[i] = pfvm__red_f2i(v); break;
    case PFVM_UINT64: ((uint64_t *)d)[i] = v != v || v <= 0 ? 0 : v >= 0x1p64 ? UINT64_MAX : (uint64_t)v; break;
    default: break;
    }
}

/* Stores the low bits of an integer result (wrapping, as numpy does) into
 * an integer or bool element. */
static void pfvm__red_store_bits(pfvm_tensor *t, int64_t i, uint64_t u)
{
    void *d = t->data;
    switch (t->dtype) {
    case PFVM_BOOL: ((uint8_t *)d)[i] = u != 0; break;
    case PFVM_INT8: case PFVM_UINT8: ((uint8_t *)d)[i] = (uint8_t)u; break;
    case PFVM_INT16: case PFVM_UINT16: ((uint16_t *)d)[i] = (uint16_t)u; break;
    case PFVM_INT32: case PFVM_UINT32: ((uint32_t *)d)[i] = (uint32_t)u; break;
    case PFVM_INT64: case PFVM_UINT64: ((uint64_t *)d)[i] = u; break;
    default: pfvm_red_store(t, i, (double)pfvm__red_u2s(u)); break;
    }
}

static int pfvm__red_is_intlike(pfvm_dtype t)
{
    return pfvm_dtype_is_int(t) || t == PFVM_BOOL;
}

static int pfvm__red_numeric(pfvm_dtype t)
{
    return pfvm__red_is_intlike(t) || pfvm_dtype_is_float(t);
}

/* Orders elements i and j of X (-1, 0, 1). 64-bit integers compare
 * exactly; NaN sorts above every number when nan_high, below otherwise,
 * and equal to NaN. */
static int pfvm__red_cmp(const pfvm_tensor *X, int64_t i, int64_t j, int nan_high)
{
    if (pfvm__red_is_intlike(X->dtype)) {
        if (X->dtype == PFVM_UINT64) {
            uint64_t a = ((const uint64_t *)X->data)[i], b = ((const uint64_t *)X->data)[j];
            return (a > b) - (a < b);
        } else {
            int64_t a = pfvm_tensor_get_i64(X, i), b = pfvm_tensor_get_i64(X, j);
            return (a > b) - (a < b);
        }
    } else {
        double a = pfvm_tensor_get_f64(X, i), b = pfvm_tensor_get_f64(X, j);
        int na = a != a, nb = b != b;
        if (na || nb)
            return (na - nb) * (nan_high ? 1 : -1);
        return (a > b) - (a < b);
    }
}

/* Splits X around axis a: outer blocks, the axis' length, inner stride. */
static void pfvm__red_split(const pfvm_tensor *X, int a, int64_t *outer, int64_t *len, int64_t *inner)
{
    int d;
    *outer = 1;
    *inner = 1;
    for (d = 0; d < a; d++)
        *outer *= X->dims[d];
    for (d = a + 1; d < X->rank; d++)
        *inner *= X->dims[d];
    *len = X->dims[a];
}

static pfvm_code pfvm__red_code(const pfvm_status *st)
{
    return st && st->code ? st->code : PFVM_ERR_INVALID;
}

/* ---- axes ------------------------------------------------------------------------------------ */

/* ReduceSum takes its axes as an input from opset 13, the others from 18. */
static int pfvm__red_axes_from_input(const pfvm_node *n)
{
    return !strcmp(n->op_type, "ReduceSum") ? n->opset >= 13 : n->opset >= 18;
}

#define PFVM__RED_MAX_AXES (PFVM_MAX_RANK * 2)

/* Reduced-axis mask from a list of axes (an empty list: every axis).
 * Returns 0 on a bad axis with the status set (no node prefix: inference
 * adds it, kernels call pfvm__red_kmask). */
static int pfvm__red_mask(const int64_t *axes, int cnt, int rank, unsigned char *mask, pfvm_status *st)
{
    int i;
    memset(mask, cnt > 0 ? 0 : 1, PFVM_MAX_RANK);
    for (i = 0; i < cnt; i++) {
        int a = pfvm__axis(axes[i], rank);
        if (a < 0)
            return pfvm__fail(st, PFVM_ERR_INVALID, "axis %lld is out of range for rank %d", (long long)axes[i], rank), 0;
        mask[a] = 1;
    }
    return 1;
}

/* Axes for inference: the count, -1 when absent, -2 when not known yet. */
static int pfvm__red_iaxes(pfvm_ictx *c, int64_t *axes)
{
    const int64_t *a;
    int cnt, i;
    if (pfvm__red_axes_from_input(c->node)) {
        if (c->n_in < 2 || !c->in[1])
            return -1;
        cnt = pfvm_ival_ints(c->in[1], axes, PFVM__RED_MAX_AXES);
        return cnt < 0 ? -2 : cnt;
    }
    cnt = pfvm_node_attr_ints(c->node, "axes", &a);
    if (cnt > PFVM__RED_MAX_AXES)
        return pfvm__fail(c->st, PFVM_ERR_INVALID, "%d axes for a tensor of rank at most %d", cnt, PFVM_MAX_RANK), -3;
    for (i = 0; i < cnt; i++)
        axes[i] = a[i];
    return cnt;
}

/* Axes for a kernel: the count, -1 when absent; -3 with the status set. */
static int pfvm__red_kaxes(const pfvm_kctx *k, int64_t *axes)
{
    const int64_t *a;
    int64_t n;
    int cnt, i;
    if (pfvm__red_axes_from_input(k->node)) {
        if (k->n_in < 2 || !k->in[1])
            return -1;
        n = pfvm_tensor_numel(k->in[1]);
        if (!pfvm__red_is_intlike(k->in[1]->dtype) || n > PFVM__RED_MAX_AXES)
            return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "axes must be at most %d integers", PFVM__RED_MAX_AXES),
                   -3;
        for (i = 0; i < n; i++)
            axes[i] = pfvm_tensor_get_i64(k->in[1], i);
        return (int)n;
    }
    cnt = pfvm_node_attr_ints(k->node, "axes", &a);
    if (cnt > PFVM__RED_MAX_AXES)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "%d axes for rank %d", cnt, k->in[0]->rank), -3;
    for (i = 0; i < cnt; i++)
        axes[i] = a[i];
    return cnt;
}

static pfvm_code pfvm__red_infer(pfvm_ictx *c)
{
    const pfvm_shape *x = &c->in[0]->type.shape;
    int64_t axes[PFVM__RED_MAX_AXES];
    int cnt = pfvm__red_iaxes(c, axes), keep = pfvm_node_attr_int(c->node, "keepdims", 1) != 0, i;
    int noop = pfvm_node_attr_int(c->node, "noop_with_empty_axes", 0) != 0;
    unsigned char mask[PFVM_MAX_RANK];
    pfvm_shape out;
    if (cnt == -3)
        return pfvm__red_code(c->st);
    if (c->n_in > 1 && pfvm_infer_check_rank(c, 1, 1, "axes"))
        return pfvm__red_code(c->st);
    if (x->rank < 0 || cnt == -2)
        return pfvm_infer_unknown(c, 0, c->in[0]->type.dtype, x->rank >= 0 && keep ? x->rank : -1);
    if (cnt <= 0 && noop) {
        c->out[0]->type = c->in[0]->type;
        return PFVM_OK;
    }
    if (!pfvm__red_mask(axes, cnt, x->rank, mask, c->st))
        return pfvm__red_code(c->st);
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

/* ---- the reduction engine --------------------------------------------------------------------- */

enum { PFVM__RED_SUM, PFVM__RED_MEAN, PFVM__RED_MAX, PFVM__RED_MIN, PFVM__RED_PROD, PFVM__RED_L1, PFVM__RED_L2,
       PFVM__RED_LOGSUM, PFVM__RED_LOGSUMEXP, PFVM__RED_SUMSQ,
       PFVM__RED_EXPSUM /* LogSumExp's second pass: sum of exp(v - shift) */ };

/* The input's axes as merged kept and reduced runs (outermost first). */
typedef struct pfvm__red_walk {
    int nk, nr;
    int64_t kdim[PFVM_MAX_RANK], kstr[PFVM_MAX_RANK];
    int64_t rdim[PFVM_MAX_RANK], rstr[PFVM_MAX_RANK];
    int64_t nred; /* elements folded into each output */
} pfvm__red_walk;

static void pfvm__red_walk_init(pfvm__red_walk *w, const pfvm_tensor *X, const unsigned char *mask)
{
    int64_t st[PFVM_MAX_RANK], s = 1;
    int d, last = -1;
    for (d = X->rank - 1; d >= 0; d--) {
        st[d] = s;
        s *= X->dims[d];
    }
    w->nk = w->nr = 0;
    w->nred = 1;
    for (d = 0; d < X->rank; d++) {
        int red = mask[d] != 0;
        if (red)
            w->nred *= X->dims[d];
        if (X->dims[d] == 1)
            continue; /* contributes nothing, and its neighbours still merge */
        if (red == last) {
            /* row-major: the previous run's stride is this axis' extent */
            int64_t *dim = red ? &w->rdim[w->nr - 1] : &w->kdim[w->nk - 1];
            int64_t *str = red ? &w->rstr[w->nr - 1] : &w->kstr[w->nk - 1];
            *dim *= X->dims[d];
            *str = st[d];
        } else if (red) {
            w->rdim[w->nr] = X->dims[d];
            w->rstr[w->nr++] = st[d];
        } else {
            w->kdim[w->nk] = X->dims[d];
            w->kstr[w->nk++] = st[d];
        }
        last = red;
    }
}

typedef struct pfvm__red_acc {
    int kind;
    int is_int;      /* fold 64-bit integers in `u` (else doubles in `f`) */
    int is_unsigned; /* compare `u` as unsigned */
    double f, shift;
    uint64_t u;
    int any;         /* an element was folded (integer max/min start from it) */
} pfvm__red_acc;

static void pfvm__red_fold_int(pfvm__red_acc *a, uint64_t v)
{
    switch (a->kind) {
    case PFVM__RED_MAX:
    case PFVM__RED_MIN: {
        int gt = a->is_unsigned ? v > a->u : pfvm__red_u2s(v) > pfvm__red_u2s(a->u);
        int lt = a->is_unsigned ? v < a->u : pfvm__red_u2s(v) < pfvm__red_u2s(a->u);
        if (!a->any || (a->kind == PFVM__RED_MAX ? gt : lt))
            a->u = v;
        break;
    }
    case PFVM__RED_PROD: a->u *= v; break;
    case PFVM__RED_L1: a->u += !a->is_unsigned && pfvm__red_u2s(v) < 0 ? 0 - v : v; break;
    case PFVM__RED_SUMSQ: a->u += v * v; break;
    default: a->u += v; break; /* sum, mean */
    }
    a->any = 1;
}

static void pfvm__red_fold_float(pfvm__red_acc *a, double v)
{
    switch (a->kind) {
    case PFVM__RED_MAX: a->f = v > a->f || v != v ? v : a->f; break;
    case PFVM__RED_MIN: a->f = v < a->f || v != v ? v : a->f; break;
    case PFVM__RED_PROD: a->f *= v; break;
    case PFVM__RED_L1: a->f += fabs(v); break;
    case PFVM__RED_L2: case PFVM__RED_SUMSQ: a->f += v * v; break;
    case PFVM__RED_EXPSUM: a->f += exp(v - a->shift); break;
    default: a->f += v; break; /* sum, mean, log-sum */
    }
    a->any = 1;
}

/* Folds `len` elements of X from `off`, `stride` apart. */
static void pfvm__red_fold_run(pfvm__red_acc *a, const pfvm_tensor *X, int64_t off, int64_t len, int64_t stride)
{
    int64_t e;
    if (!a->is_int && X->dtype == PFVM_FLOAT && len > 0 &&
        (a->kind == PFVM__RED_SUM || a->kind == PFVM__RED_MEAN || a->kind == PFVM__RED_LOGSUM ||
         a->kind == PFVM__RED_SUMSQ || a->kind == PFVM__RED_L2)) {
        /* float32 sums: the same double folds in the same order, without a
         * conversion call per element */
        const float *x = (const float *)X->data + off;
        double f = a->f;
        if (a->kind == PFVM__RED_SUMSQ || a->kind == PFVM__RED_L2)
            for (e = 0; e < len; e++) {
                double v = x[e * stride];
                f += v * v;
            }
        else
            for (e = 0; e < len; e++)
                f += x[e * stride];
        a->f = f;
        a->any = 1;
        return;
    }
    if (a->is_int) {
        for (e = 0; e < len; e++, off += stride)
            pfvm__red_fold_int(a, X->dtype == PFVM_UINT64 ? ((const uint64_t *)X->data)[off]
                                                           : (uint64_t)pfvm_tensor_get_i64(X, off));
    } else {
        for (e = 0; e < len; e++, off += stride)
            pfvm__red_fold_float(a, pfvm_tensor_get_f64(X, off));
    }
}

/* Folds the reduced sub-block starting at input offset `base`. */
static void pfvm__red_fold(const pfvm__red_walk *w, const pfvm_tensor *X, int64_t base, pfvm__red_acc *a)
{
    int64_t idx[PFVM_MAX_RANK] = {0}, off = base;
    int d;
    if (w->nred == 0)
        return;
    if (w->nr == 0) {
        pfvm__red_fold_run(a, X, base, 1, 0);
        return;
    }
    for (;;) {
        pfvm__red_fold_run(a, X, off, w->rdim[w->nr - 1], w->rstr[w->nr - 1]);
        for (d = w->nr - 2; d >= 0; d--) {
            off += w->rstr[d];
            if (++idx[d] < w->rdim[d])
                break;
            off -= w->rstr[d] * w->rdim[d];
            idx[d] = 0;
        }
        if (d < 0)
            return;
    }
}

static void pfvm__red_acc_init(pfvm__red_acc *a, int kind, pfvm_dtype dt)
{
    memset(a, 0, sizeof *a);
    a->kind = kind;
    /* L2 and the logarithms are real-valued even for integer inputs */
    a->is_int = pfvm__red_is_intlike(dt) && kind != PFVM__RED_L2 && kind != PFVM__RED_LOGSUM &&
                kind != PFVM__RED_LOGSUMEXP && kind != PFVM__RED_EXPSUM;
    a->is_unsigned = dt == PFVM_UINT8 || dt == PFVM_UINT16 || dt == PFVM_UINT32 || dt == PFVM_UINT64;
    a->f = kind == PFVM__RED_MAX ? -INFINITY : kind == PFVM__RED_MIN ? INFINITY : kind == PFVM__RED_PROD ? 1 : 0;
    a->u = kind == PFVM__RED_PROD;
}

/* Reduces one output element and stores it as Y[o]. */
static void pfvm__red_one(const pfvm__red_walk *w, const pfvm_tensor *X, int64_t base, int kind, pfvm_tensor *Y, int64_t o)
{
    pfvm__red_acc a;
    double r;
    if (kind == PFVM__RED_LOGSUMEXP) {
        /* max first, so that exp cannot overflow */
        pfvm__red_acc_init(&a, PFVM__RED_MAX, PFVM_DOUBLE);
        pfvm__red_fold(w, X, base, &a);
        if (a.f != a.f || isinf(a.f)) {
            pfvm_red_store(Y, o, a.f);
            return;
        }
        r = a.f;
        pfvm__red_acc_init(&a, PFVM__RED_EXPSUM, PFVM_DOUBLE);
        a.shift = r;
        pfvm__red_fold(w, X, base, &a);
        pfvm_red_store(Y, o, r + log(a.f));
        return;
    }
    pfvm__red_acc_init(&a, kind, X->dtype);
    pfvm__red_fold(w, X, base, &a);
    if (a.is_int) {
        if (!a.any && (kind == PFVM__RED_MAX || kind == PFVM__RED_MIN)) {
            /* the empty set: the type's lowest (max) or highest (min) value */
            if (Y->dtype == PFVM_BOOL)
                pfvm__red_store_bits(Y, o, kind == PFVM__RED_MIN);
            else
                pfvm_red_store(Y, o, kind == PFVM__RED_MAX ? -INFINITY : INFINITY);
            return;
        }
        if (kind == PFVM__RED_MEAN) {
            if (!w->nred)
                a.u = 0;
            else if (a.is_unsigned)
                a.u /= (uint64_t)w->nred;
            else
                a.u = (uint64_t)(pfvm__red_u2s(a.u) / w->nred);
        }
        pfvm__red_store_bits(Y, o, a.u);
        return;
    }
    switch (kind) {
    case PFVM__RED_MEAN: r = w->nred ? a.f / (double)w->nred : NAN; break;
    case PFVM__RED_L2: r = sqrt(a.f); break;
    case PFVM__RED_LOGSUM: r = log(a.f); break;
    default: r = a.f; break;
    }
    pfvm_red_store(Y, o, r);
}

static pfvm_code pfvm__red_run(pfvm_kctx *k, int kind)
{
    const pfvm_tensor *X = k->in[0];
    pfvm_tensor *Y = k->out[0];
    int64_t axes[PFVM__RED_MAX_AXES], dims[PFVM_MAX_RANK], idx[PFVM_MAX_RANK] = {0}, base = 0, o, ny;
    int cnt = pfvm__red_kaxes(k, axes), keep = pfvm_node_attr_int(k->node, "keepdims", 1) != 0, d, rank = 0;
    unsigned char mask[PFVM_MAX_RANK];
    pfvm__red_walk w;
    if (cnt == -3)
        return pfvm__red_code(k->st);
    if (!pfvm__red_numeric(X->dtype))
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_UNSUPPORTED, "element type %s", pfvm_dtype_name(X->dtype));
    if (cnt <= 0 && pfvm_node_attr_int(k->node, "noop_with_empty_axes", 0)) {
        if (pfvm_kctx_output(k, 0, X->dtype, X->rank, X->dims))
            return pfvm__red_code(k->st);
        memcpy(Y->data, X->data, (size_t)pfvm_tensor_numel(X) * pfvm_dtype_size(X->dtype));
        return PFVM_OK;
    }
    if (!pfvm__red_mask(axes, cnt, X->rank, mask, k->st))
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "%s", k->st ? k->st->msg : "bad axis");
    for (d = 0; d < X->rank; d++)
        if (!mask[d] || keep)
            dims[rank++] = mask[d] ? 1 : X->dims[d];
    /* checks the planned shape too: the writes below trust it */
    if (pfvm_kctx_output(k, 0, X->dtype, rank, dims))
        return pfvm__red_code(k->st);
    pfvm__red_walk_init(&w, X, mask);
    ny = pfvm_tensor_numel(Y);
    for (o = 0; o < ny; o++) {
        pfvm__red_one(&w, X, base, kind, Y, o);
        for (d = w.nk - 1; d >= 0; d--) {
            base += w.kstr[d];
            if (++idx[d] < w.kdim[d])
                break;
            base -= w.kstr[d] * w.kdim[d];
            idx[d] = 0;
        }
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

/* ---- in fused groups: an element-wise prologue folded as it is computed ------------------ */

/* Accumulators in double, folded in the kernel's order: one running value
 * per output element (inc 0: the run belongs to one element). */
#define PFVM__RED_ZACC(name, step)                                                    \
    static void pfvm__red_z_##name(double *acc, int64_t inc, const float *v, int64_t n) \
    {                                                                                 \
        int64_t e;                                                                    \
        if (!inc) {                                                                   \
            double a = acc[0];                                                        \
            for (e = 0; e < n; e++) {                                                 \
                double x = v[e];                                                      \
                a = (step);                                                           \
            }                                                                         \
            acc[0] = a;                                                               \
            return;                                                                   \
        }                                                                             \
        for (e = 0; e < n; e++) {                                                     \
            double x = v[e], a = acc[e * inc];                                        \
            acc[e * inc] = (step);                                                    \
        }                                                                             \
    }
PFVM__RED_ZACC(sum, a + x)
PFVM__RED_ZACC(sumsq, a + x * x)
PFVM__RED_ZACC(l1, a + fabs(x))
PFVM__RED_ZACC(prod, a * x)
PFVM__RED_ZACC(max, x > a || x != x ? x : a)
PFVM__RED_ZACC(min, x < a || x != x ? x : a)

static double pfvm__red_z_mean(double a, int64_t count)
{
    return count ? a / (double)count : NAN;
}

static double pfvm__red_z_sqrt(double a, int64_t count)
{
    (void)count;
    return sqrt(a);
}

static double pfvm__red_z_log(double a, int64_t count)
{
    (void)count;
    return log(a);
}

/* A float32 reduction over constant axes ends a fused group. */
static pfvm_code pfvm__red_fuse(pfvm_fuse_ctx *f, const pfvm_node *n, const pfvm_fuse_reducer *r)
{
    int64_t axes[PFVM__RED_MAX_AXES];
    int cnt = 0, i;
    if (pfvm_fuse_dtype(f, 0) != PFVM_FLOAT)
        return pfvm_fuse_refuse(f, "float32 only");
    if (pfvm__red_axes_from_input(n)) {
        if (n->n_inputs > 1 && n->inputs[1]) {
            const pfvm_tensor *t = pfvm_fuse_const(f, 1);
            int64_t m;
            if (!t || !pfvm__red_is_intlike(t->dtype) || (m = pfvm_tensor_numel(t)) > PFVM__RED_MAX_AXES)
                return pfvm_fuse_refuse(f, "axes not constant");
            for (i = 0; i < (int)m; i++)
                axes[i] = pfvm_tensor_get_i64(t, i);
            cnt = (int)m;
        }
    } else {
        const int64_t *a;
        cnt = pfvm_node_attr_ints(n, "axes", &a);
        if (cnt > PFVM__RED_MAX_AXES)
            return pfvm_fuse_refuse(f, "axes");
        for (i = 0; i < cnt; i++)
            axes[i] = a[i];
        cnt = cnt < 0 ? 0 : cnt;
    }
    if (!cnt && pfvm_node_attr_int(n, "noop_with_empty_axes", 0))
        return pfvm_fuse_refuse(f, "no-op reduction");
    if (cnt > PFVM_MAX_RANK)
        return pfvm_fuse_refuse(f, "axes");
    return pfvm_fuse_reduce(f, PFVM_FUSE_OUT(0), PFVM_FUSE_IN(0), r, axes, cnt,
                            pfvm_node_attr_int(n, "keepdims", 1) != 0);
}

#define PFVM__RED_FUSE(name, init, acc, finish)                                  \
    static pfvm_code pfvm__red_k_##name##_fuse(pfvm_fuse_ctx *f, const pfvm_node *n) \
    {                                                                            \
        static const pfvm_fuse_reducer r = {init, pfvm__red_z_##acc, finish};      \
        return pfvm__red_fuse(f, n, &r);                                         \
    }
PFVM__RED_FUSE(sum, 0.0, sum, NULL)
PFVM__RED_FUSE(mean, 0.0, sum, pfvm__red_z_mean)
PFVM__RED_FUSE(max, -INFINITY, max, NULL)
PFVM__RED_FUSE(min, INFINITY, min, NULL)
PFVM__RED_FUSE(prod, 1.0, prod, NULL)
PFVM__RED_FUSE(l1, 0.0, l1, NULL)
PFVM__RED_FUSE(l2, 0.0, sumsq, pfvm__red_z_sqrt)
PFVM__RED_FUSE(logsum, 0.0, sum, pfvm__red_z_log)
PFVM__RED_FUSE(sumsq, 0.0, sumsq, NULL)

/* LogSumExp takes two passes (the maximum first): not in a single walk. */
static pfvm_code pfvm__red_k_logsumexp_fuse(pfvm_fuse_ctx *f, const pfvm_node *n)
{
    (void)n;
    return pfvm_fuse_refuse(f, "two passes");
}

/* ---- ArgMax, ArgMin ----------------------------------------------------------------------------- */

static pfvm_code pfvm__red_infer_arg(pfvm_ictx *c)
{
    const pfvm_shape *x = &c->in[0]->type.shape;
    int keep = pfvm_node_attr_int(c->node, "keepdims", 1) != 0, a, i;
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

/* Index of the greatest (sign 1) or least (sign -1) element along the
 * axis; NaN counts as the extreme, as in numpy. Ties go to the first
 * index, or the last with select_last_index. */
static pfvm_code pfvm__red_arg(pfvm_kctx *k, int sign)
{
    const pfvm_tensor *X = k->in[0];
    int a = pfvm__axis(pfvm_node_attr_int(k->node, "axis", 0), X->rank), d, rank = 0;
    int last = pfvm_node_attr_int(k->node, "select_last_index", 0) != 0;
    int keep = pfvm_node_attr_int(k->node, "keepdims", 1) != 0;
    int64_t outer, len, inner, o, j, i, dims[PFVM_MAX_RANK];
    if (a < 0)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "axis is out of range for rank %d", X->rank);
    if (!pfvm__red_numeric(X->dtype))
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_UNSUPPORTED, "element type %s", pfvm_dtype_name(X->dtype));
    for (d = 0; d < X->rank; d++)
        if (d != a || keep)
            dims[rank++] = d == a ? 1 : X->dims[d];
    if (pfvm_kctx_output(k, 0, PFVM_INT64, rank, dims))
        return pfvm__red_code(k->st);
    pfvm__red_split(X, a, &outer, &len, &inner);
    if (len == 0 && outer * inner > 0)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "the reduced axis %d is empty", a);
    for (o = 0; o < outer; o++)
        for (j = 0; j < inner; j++) {
            int64_t best = 0, at = o * len * inner + j;
            for (i = 1; i < len; i++) {
                int c = pfvm__red_cmp(X, at + i * inner, at + best * inner, sign > 0) * sign;
                if (c > 0 || (last && c == 0))
                    best = i;
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
    return pfvm__red_arg(k, -1);
}

/* ---- CumSum ---------------------------------------------------------------------------------------- */

static pfvm_code pfvm__red_k_cumsum(pfvm_kctx *k)
{
    const pfvm_tensor *X = k->in[0], *A = k->in[1];
    pfvm_tensor *Y = k->out[0];
    int excl = pfvm_node_attr_int(k->node, "exclusive", 0) != 0, rev = pfvm_node_attr_int(k->node, "reverse", 0) != 0;
    int is_int = pfvm__red_is_intlike(X->dtype), a;
    int64_t outer, len, inner, o, j, i;
    if (!pfvm__red_is_intlike(A->dtype) || pfvm_tensor_numel(A) != 1)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "axis must be one integer");
    a = pfvm__axis(pfvm_tensor_get_i64(A, 0), X->rank);
    if (a < 0)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "axis %lld is out of range for rank %d",
                             (long long)pfvm_tensor_get_i64(A, 0), X->rank);
    if (!pfvm__red_numeric(X->dtype))
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_UNSUPPORTED, "element type %s", pfvm_dtype_name(X->dtype));
    if (pfvm_kctx_output(k, 0, X->dtype, X->rank, X->dims))
        return pfvm__red_code(k->st);
    pfvm__red_split(X, a, &outer, &len, &inner);
    for (o = 0; o < outer; o++)
        for (j = 0; j < inner; j++) {
            double s = 0;
            uint64_t u = 0; /* integer sums wrap, as numpy's */
            for (i = 0; i < len; i++) {
                int64_t at = (o * len + (rev ? len - 1 - i : i)) * inner + j;
                if (is_int) {
                    uint64_t v = (uint64_t)pfvm_tensor_get_i64(X, at);
                    u += excl ? 0 : v;
                    pfvm__red_store_bits(Y, at, u);
                    u += excl ? v : 0;
                } else {
                    double v = pfvm_tensor_get_f64(X, at);
                    s += excl ? 0 : v;
                    pfvm_red_store(Y, at, s);
                    s += excl ? v : 0;
                }
            }
        }
    return PFVM_OK;
}

/* ---- TopK --------------------------------------------------------------------------------------------- */

/* CumSum: the axis (a scalar input) must exist. */
static pfvm_code pfvm__red_infer_cumsum(pfvm_ictx *c)
{
    const pfvm_shape *as = &c->in[1]->type.shape;
    int64_t ax;
    int a, rank = c->in[0]->type.shape.rank;
    if (as->rank > 1 || (as->rank == 1 && pfvm_sym_proven_ne(c->syms, as->dims[0], pfvm_sym_const(c->syms, 1))))
        return pfvm__fail(c->st, PFVM_ERR_SHAPE, "axis must be a scalar");
    if (rank >= 0 && pfvm_ival_ints(c->in[1], &ax, 1) == 1 && pfvm_infer_axis(c, ax, rank, &a))
        return c->st ? c->st->code : PFVM_ERR_INVALID;
    return pfvm_infer_same_as_first(c);
}

static pfvm_code pfvm__red_infer_topk(pfvm_ictx *c)
{
    const pfvm_shape *x = &c->in[0]->type.shape;
    const pfvm_sym *kd = NULL;
    int64_t kv[1], len;
    int a;
    pfvm_shape out;
    if (x->rank < 0) {
        pfvm_infer_unknown(c, 0, c->in[0]->type.dtype, -1);
        return pfvm_infer_unknown(c, 1, PFVM_INT64, -1);
    }
    a = pfvm__axis(pfvm_node_attr_int(c->node, "axis", -1), x->rank);
    if (a < 0)
        return pfvm__fail(c->st, PFVM_ERR_INVALID, "axis is out of range for rank %d", x->rank);
    if (c->node->opset >= 10 && c->n_in > 1 && c->in[1] && c->in[1]->type.shape.rank >= 0) {
        const pfvm_shape *ks = &c->in[1]->type.shape;
        if (ks->rank > 1 || (ks->rank == 1 && pfvm_sym_proven_ne(c->syms, ks->dims[0], pfvm_sym_const(c->syms, 1))))
            return pfvm__fail(c->st, PFVM_ERR_SHAPE, "K must hold a single value");
    }
    if (c->node->opset < 10) {
        kv[0] = pfvm_node_attr_int(c->node, "k", -1);
        kd = pfvm_sym_const(c->syms, kv[0]);
    } else if (c->n_in > 1 && c->in[1] && pfvm_ival_ints(c->in[1], kv, 1) == 1) {
        kd = pfvm_sym_const(c->syms, kv[0]);
    } else if (c->n_in > 1 && c->in[1] && c->in[1]->sym && c->in[1]->n_sym == 1) {
        kd = c->in[1]->sym[0]; /* a symbolic k, such as min(seq, 10) */
        kv[0] = 0;
    }
    if (!kd) {
        pfvm_infer_unknown(c, 0, c->in[0]->type.dtype, x->rank);
        return pfvm_infer_unknown(c, 1, PFVM_INT64, x->rank);
    }
    if (kv[0] < 0 || (pfvm_sym_is_const(x->dims[a], &len) && kv[0] > len))
        return pfvm__fail(c->st, PFVM_ERR_INVALID, "k = %lld does not fit axis %d", (long long)kv[0], a);
    out = *x;
    out.dims[a] = kd;
    pfvm_ival_set_tensor(c->out[0], c->in[0]->type.dtype, &out);
    pfvm_ival_set_tensor(c->out[1], PFVM_INT64, &out);
    return PFVM_OK;
}

/* Whether element i of the slice goes before element j (indices are
 * positions along the axis; `at` and `inner` place them in X). */
static int pfvm__red_topk_before(const pfvm_tensor *X, int64_t at, int64_t inner, int largest, int64_t i, int64_t j)
{
    int c = pfvm__red_cmp(X, at + i * inner, at + j * inner, 1);
    return largest ? c > 0 : c < 0;
}

/* Stable bottom-up merge sort of the positions 0..len-1 (ties keep the
 * lower index first, as TopK requires); `tmp` has len entries too.
 * Returns the array holding the result. */
static int64_t *pfvm__red_topk_sort(const pfvm_tensor *X, int64_t at, int64_t inner, int largest, int64_t len, int64_t *idx,
                                    int64_t *tmp)
{
    int64_t width, i;
    for (i = 0; i < len; i++)
        idx[i] = i;
    for (width = 1; width < len; width *= 2) {
        int64_t lo;
        for (lo = 0; lo < len; lo += 2 * width) {
            int64_t mid = lo + width < len ? lo + width : len, hi = lo + 2 * width < len ? lo + 2 * width : len;
            int64_t p = lo, q = mid, t = lo;
            while (p < mid && q < hi)
                tmp[t++] = pfvm__red_topk_before(X, at, inner, largest, idx[q], idx[p]) ? idx[q++] : idx[p++];
            while (p < mid)
                tmp[t++] = idx[p++];
            while (q < hi)
                tmp[t++] = idx[q++];
        }
        {
            int64_t *sw = idx;
            idx = tmp;
            tmp = sw;
        }
    }
    return idx;
}

/* Small K: the first K positions in TopK order by insertion into a sorted
 * buffer, in one pass and without workspace. A later element goes after
 * the equal ones already kept, so ties keep the lower index first. */
#define PFVM__RED_TOPK_SMALL 16

static void pfvm__red_topk_small(const pfvm_tensor *X, int64_t at, int64_t inner, int largest, int64_t len, int64_t K,
                                 int64_t *best)
{
    int64_t i, n = 0, p;
    for (i = 0; i < len; i++) {
        if (n == K && !pfvm__red_topk_before(X, at, inner, largest, i, best[n - 1]))
            continue;
        p = n < K ? n++ : K - 1; /* a full buffer drops its last */
        for (; p > 0 && pfvm__red_topk_before(X, at, inner, largest, i, best[p - 1]); p--)
            best[p] = best[p - 1];
        best[p] = i;
    }
}

static pfvm_code pfvm__red_k_topk(pfvm_kctx *k)
{
    const pfvm_tensor *X = k->in[0];
    int a = pfvm__axis(pfvm_node_attr_int(k->node, "axis", -1), X->rank);
    int largest = pfvm_node_attr_int(k->node, "largest", 1) != 0;
    size_t es = pfvm_dtype_size(X->dtype), bytes;
    int64_t K, outer, len, inner, o, j, t, dims[PFVM_MAX_RANK], *idx = NULL, small[PFVM__RED_TOPK_SMALL];
    if (a < 0)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "axis is out of range for rank %d", X->rank);
    if (k->node->opset < 10)
        K = pfvm_node_attr_int(k->node, "k", -1);
    else if (k->n_in < 2 || !k->in[1] || !pfvm__red_is_intlike(k->in[1]->dtype) || pfvm_tensor_numel(k->in[1]) != 1)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "K must be one integer");
    else
        K = pfvm_tensor_get_i64(k->in[1], 0);
    if (!pfvm__red_numeric(X->dtype))
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_UNSUPPORTED, "element type %s", pfvm_dtype_name(X->dtype));
    pfvm__red_split(X, a, &outer, &len, &inner);
    if (K < 0 || K > len)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_RANGE, "k = %lld is outside 0..%lld", (long long)K, (long long)len);
    memcpy(dims, X->dims, sizeof(int64_t) * (size_t)X->rank);
    dims[a] = K;
    if (pfvm_kctx_output(k, 0, X->dtype, X->rank, dims) || pfvm_kctx_output(k, 1, PFVM_INT64, X->rank, dims))
        return pfvm__red_code(k->st);
    if (K == 0 || outer * inner == 0)
        return PFVM_OK;
    if (K > PFVM__RED_TOPK_SMALL &&
        (!pfvm__mul_size((size_t)len, 2 * sizeof(int64_t), &bytes) || !(idx = (int64_t *)pfvm_kctx_scratch(k, bytes))))
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_NOMEM, "no workspace to sort %lld elements", (long long)len);
    for (o = 0; o < outer; o++)
        for (j = 0; j < inner; j++) {
            int64_t at = o * len * inner + j;
            const int64_t *order = small;
            if (K <= PFVM__RED_TOPK_SMALL)
                pfvm__red_topk_small(X, at, inner, largest, len, K, small);
            else
                order = pfvm__red_topk_sort(X, at, inner, largest, len, idx, idx + len);
            for (t = 0; t < K; t++) {
                int64_t dst = (o * K + t) * inner + j;
                /* values are copied bit for bit, whatever the type */
                if (k->out[0])
                    memcpy((char *)k->out[0]->data + (size_t)dst * es, (const char *)X->data + (size_t)(at + order[t] * inner) * es,
                           es);
                if (k->out[1])
                    ((int64_t *)k->out[1]->data)[dst] = order[t];
            }
        }
    return PFVM_OK;
}

/* ---- losses -------------------------------------------------------------------------------------------- */

/* reduction: 0 none, 1 sum, 2 mean; -1 when not valid. */
static int pfvm__red_loss_reduction(const pfvm_node *n)
{
    const pfvm_attr *at = pfvm_node_attr(n, "reduction");
    const char *r;
    if (!at || at->ref_attr_name)
        return 2;
    r = at->type == PFVM_ATTR_STRING && at->s ? at->s : "";
    return !strcmp(r, "none") ? 0 : !strcmp(r, "sum") ? 1 : !strcmp(r, "mean") ? 2 : -1;
}

static pfvm_code pfvm__red_check_loss(const pfvm_node *n, pfvm_status *st)
{
    if (pfvm__red_loss_reduction(n) < 0)
        return pfvm__fail(st, PFVM_ERR_INVALID, "reduction must be none, sum or mean");
    return PFVM_OK;
}

/* Scores or log-probabilities [N, C, d1...], labels [N, d1...], and
 * weights [C] agree (where the dims are known). */
static pfvm_code pfvm__red_infer_loss(pfvm_ictx *c)
{
    const pfvm_shape *x = &c->in[0]->type.shape, *t = &c->in[1]->type.shape;
    const pfvm_ival *w = c->n_in > 2 ? c->in[2] : NULL;
    int red = pfvm__red_loss_reduction(c->node), i;
    pfvm_shape out;
    if (red < 0)
        return pfvm__fail(c->st, PFVM_ERR_INVALID, "reduction must be none, sum or mean");
    if (x->rank >= 0 && x->rank < 2)
        return pfvm__fail(c->st, PFVM_ERR_SHAPE, "the input must have rank 2 or more, not %d", x->rank);
    if (x->rank >= 0 && t->rank >= 0) {
        if (t->rank != x->rank - 1)
            return pfvm__fail(c->st, PFVM_ERR_SHAPE, "the target has rank %d for an input of rank %d", t->rank, x->rank);
        for (i = 0; i < t->rank; i++)
            if (pfvm_infer_check_eq(c, t->dims[i], x->dims[i ? i + 1 : 0], "target and input dims"))
                return c->st ? c->st->code : PFVM_ERR_SHAPE;
    }
    if (w && x->rank >= 2 && pfvm_infer_check_vec(c, 2, x->dims[1], "weight length and classes"))
        return c->st ? c->st->code : PFVM_ERR_SHAPE;
    if (red == 0) {
        if (t->rank < 0)
            pfvm_infer_unknown(c, 0, c->in[0]->type.dtype, x->rank >= 0 ? x->rank - 1 : -1);
        else
            pfvm_ival_set_tensor(c->out[0], c->in[0]->type.dtype, t);
    } else {
        out.rank = 0;
        pfvm_ival_set_tensor(c->out[0], c->in[0]->type.dtype, &out);
    }
    if (c->n_out > 1 && c->out[1])
        c->out[1]->type = c->in[0]->type;
    return PFVM_OK;
}

/* The loss inputs seen as [N, C, D] blocks. */
typedef struct pfvm__red_loss {
    const pfvm_tensor *X, *T, *W;
    int softmax; /* X holds scores: take the log-softmax on the fly */
    int64_t N, C, D;
} pfvm__red_loss;

/* log(sum_c exp(X[n, c, d])), computed stably. */
static double pfvm__red_lse_c(const pfvm__red_loss *l, int64_t n, int64_t d)
{
    double mx = -INFINITY, s = 0;
    int64_t c;
    for (c = 0; c < l->C; c++) {
        double v = pfvm_tensor_get_f64(l->X, (n * l->C + c) * l->D + d);
        mx = v > mx || v != v ? v : mx;
    }
    if (mx != mx || isinf(mx))
        return mx;
    for (c = 0; c < l->C; c++)
        s += exp(pfvm_tensor_get_f64(l->X, (n * l->C + c) * l->D + d) - mx);
    return mx + log(s);
}

/* Validates shapes and shapes the loss output. */
static pfvm_code pfvm__red_loss_setup(pfvm_kctx *k, pfvm__red_loss *l, int softmax, int red)
{
    const pfvm_tensor *X = k->in[0], *T = k->in[1], *W = k->n_in > 2 ? k->in[2] : NULL;
    int d;
    l->X = X;
    l->T = T;
    l->W = W;
    l->softmax = softmax;
    if (X->rank < 2 || T->rank != X->rank - 1)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "the input must be [N, C, d...] and the target [N, d...]");
    if (!pfvm_dtype_is_float(X->dtype) || !pfvm__red_is_intlike(T->dtype))
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_UNSUPPORTED, "input %s, target %s", pfvm_dtype_name(X->dtype),
                             pfvm_dtype_name(T->dtype));
    l->N = X->dims[0];
    l->C = X->dims[1];
    l->D = 1;
    for (d = 0; d < T->rank; d++)
        if (T->dims[d] != X->dims[d ? d + 1 : 0])
            return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "target dim %d is %lld where the input has %lld", d,
                                 (long long)T->dims[d], (long long)X->dims[d ? d + 1 : 0]);
    for (d = 2; d < X->rank; d++)
        l->D *= X->dims[d];
    if (W && (W->rank != 1 || W->dims[0] != l->C || !pfvm_dtype_is_float(W->dtype)))
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "the weights must be %lld floats", (long long)l->C);
    /* reduced losses are scalars: rank 0 (T->dims is just a valid pointer) */
    return pfvm_kctx_output(k, 0, X->dtype, red == 0 ? T->rank : 0, T->dims);
}

/* -w[t] * log p[n, t, d] per position (0 where ignored), reduced. */
static pfvm_code pfvm__red_loss_run(pfvm_kctx *k, const pfvm__red_loss *l, int red)
{
    const pfvm_attr *ia = pfvm_node_attr(k->node, "ignore_index");
    int has_ignore = ia && ia->type == PFVM_ATTR_INT;
    int64_t ignore = has_ignore ? ia->i : 0, n, d;
    double sum = 0, wsum = 0;
    for (n = 0; n < l->N; n++)
        for (d = 0; d < l->D; d++) {
            int64_t t = pfvm_tensor_get_i64(l->T, n * l->D + d);
            double v = 0, w = 0;
            if (!(has_ignore && t == ignore)) {
                if (t < 0 || t >= l->C)
                    return pfvm__op_fail(k->st, k->node, PFVM_ERR_RANGE, "class %lld is outside 0..%lld", (long long)t,
                                         (long long)(l->C - 1));
                w = l->W ? pfvm_tensor_get_f64(l->W, t) : 1.0;
                v = pfvm_tensor_get_f64(l->X, (n * l->C + t) * l->D + d);
                if (l->softmax)
                    v -= pfvm__red_lse_c(l, n, d);
                v = -v * w;
            }
            if (red == 0)
                pfvm_red_store(k->out[0], n * l->D + d, v);
            sum += v;
            wsum += w;
        }
    /* a mean over nothing (every label ignored) is NaN, as in numpy and torch */
    if (red)
        pfvm_red_store(k->out[0], 0, red == 1 ? sum : wsum != 0 ? sum / wsum : NAN);
    return PFVM_OK;
}

static pfvm_code pfvm__red_k_nll(pfvm_kctx *k)
{
    pfvm__red_loss l;
    int red = pfvm__red_loss_reduction(k->node);
    if (pfvm__red_loss_setup(k, &l, 0, red))
        return pfvm__red_code(k->st);
    return pfvm__red_loss_run(k, &l, red);
}

static pfvm_code pfvm__red_k_sce(pfvm_kctx *k)
{
    pfvm__red_loss l;
    pfvm_tensor *lp = k->n_out > 1 ? k->out[1] : NULL;
    int red = pfvm__red_loss_reduction(k->node);
    int64_t n, c, d;
    if (pfvm__red_loss_setup(k, &l, 1, red) || (lp && pfvm_kctx_output(k, 1, l.X->dtype, l.X->rank, l.X->dims)))
        return pfvm__red_code(k->st);
    if (lp)
        for (n = 0; n < l.N; n++)
            for (d = 0; d < l.D; d++) {
                double lse = pfvm__red_lse_c(&l, n, d);
                for (c = 0; c < l.C; c++) {
                    int64_t at = (n * l.C + c) * l.D + d;
                    pfvm_red_store(lp, at, pfvm_tensor_get_f64(l.X, at) - lse);
                }
            }
    /* the loss reads the scores, not log_prob, which may be float16 */
    return pfvm__red_loss_run(k, &l, red);
}

/* ---- gradients ------------------------------------------------------------------------------------------ */

/* The reduced axes of node n over an input of rank r, sorted: the count,
 * 0 for a no-op (empty axes with noop_with_empty_axes), -1 on failure. */
static int pfvm__red_gaxes(pfvm_grad_ctx *g, const pfvm_node *n, int r, int64_t *axes)
{
    int cnt, i, j;
    unsigned char mask[PFVM_MAX_RANK];
    if (r < 0)
        return pfvm_grad_fail(g, "input of unknown rank"), -1;
    if (pfvm__red_axes_from_input(n)) {
        cnt = n->n_inputs > 1 && n->inputs[1] ? pfvm_grad_known_ints(g, n->inputs[1], axes, PFVM__RED_MAX_AXES) : 0;
        if (cnt < 0)
            return -2; /* axes known only at run time */
    } else {
        const int64_t *a;
        cnt = pfvm_node_attr_ints(n, "axes", &a);
        if (cnt > PFVM__RED_MAX_AXES)
            return pfvm_grad_fail(g, "too many axes"), -1;
        for (i = 0; i < cnt; i++)
            axes[i] = a[i];
    }
    if (cnt <= 0 && pfvm_node_attr_int(n, "noop_with_empty_axes", 0))
        return 0;
    if (!pfvm__red_mask(axes, cnt > 0 ? cnt : 0, r, mask, g->st))
        return pfvm_grad_fail(g, "bad axes"), -1;
    for (i = 0, j = 0; i < r; i++)
        if (mask[i])
            axes[j++] = i;
    return j;
}

/* v (shaped like the output) with the reduced axes kept as 1s. */
static pfvm_value *pfvm__red_gkeep(pfvm_grad_ctx *g, const pfvm_node *n, pfvm_value *v, const int64_t *axes, int cnt)
{
    if (pfvm_node_attr_int(n, "keepdims", 1))
        return v;
    return pfvm_grad_unsqueeze(g, v, axes, cnt);
}

/* The reduction's gradient: dx = expand(gy) * factor(x, y) where `kind`
 * picks the factor. */
enum { PFVM__RED_G_SUM, PFVM__RED_G_MEAN, PFVM__RED_G_EXTREMUM, PFVM__RED_G_PROD, PFVM__RED_G_L1, PFVM__RED_G_L2,
       PFVM__RED_G_LOGSUM, PFVM__RED_G_LOGSUMEXP, PFVM__RED_G_SUMSQ };

/* The same with axes given at run time (an input): Unsqueeze and ReduceSum
 * take that input as it is. An empty list reduces everything (the kept
 * gradient is then a scalar Expand spreads) or, with
 * noop_with_empty_axes, nothing (then y = x and the rules hold as well,
 * Unsqueeze of no axes being the identity). */
static pfvm_code pfvm__red_grad_dynamic(pfvm_grad_ctx *g, const pfvm_node *n, int kind)
{
    pfvm_value *x = n->inputs[0], *axes = n->inputs[1], *gy = pfvm_grad_out(g, 0), *in[2], *gk, *yk, *d = NULL;
    int keep = pfvm_node_attr_int(n, "keepdims", 1) != 0;
    int uses_y = !(kind == PFVM__RED_G_SUM || kind == PFVM__RED_G_MEAN || kind == PFVM__RED_G_L1 || kind == PFVM__RED_G_SUMSQ);
    pfvm_node *nd;
    in[1] = axes;
    if (keep) {
        gk = gy;
        yk = n->outputs[0];
    } else {
        in[0] = gy;
        gk = (nd = pfvm_grad_node(g, "Unsqueeze", in, 2, 1)) ? nd->outputs[0] : NULL;
        in[0] = n->outputs[0];
        yk = !uses_y ? NULL : (nd = pfvm_grad_node(g, "Unsqueeze", in, 2, 1)) ? nd->outputs[0] : NULL;
    }
    gk = pfvm_grad_expand(g, gk, x);
    switch (kind) {
    case PFVM__RED_G_SUM: d = gk; break;
    case PFVM__RED_G_MEAN:
        d = pfvm_grad_op2(g, "Div", gk,
                          pfvm_grad_cast(g, pfvm_grad_op2(g, "Div", pfvm_grad_op1(g, "Size", x), pfvm_grad_op1(g, "Size", n->outputs[0])),
                                         pfvm_grad_dtype(g, x)));
        break;
    case PFVM__RED_G_EXTREMUM: {
        pfvm_value *m = pfvm_grad_cast(g, pfvm_grad_op2(g, "Equal", x, yk), pfvm_grad_dtype(g, x)), *cnt;
        in[0] = m;
        nd = pfvm_grad_node(g, "ReduceSum", in, 2, 1);
        if (!nd || pfvm_node_set_attr_int(nd, "keepdims", 1, g->st) ||
            pfvm_node_set_attr_int(nd, "noop_with_empty_axes", pfvm_node_attr_int(n, "noop_with_empty_axes", 0), g->st))
            return g->st->code;
        cnt = nd->outputs[0];
        d = pfvm_grad_op2(g, "Div", pfvm_grad_op2(g, "Mul", gk, m), cnt);
        break;
    }
    case PFVM__RED_G_PROD: d = pfvm_grad_op2(g, "Mul", gk, pfvm_grad_op2(g, "Div", yk, x)); break;
    case PFVM__RED_G_L1: d = pfvm_grad_op2(g, "Mul", gk, pfvm_grad_op1(g, "Sign", x)); break;
    case PFVM__RED_G_L2: d = pfvm_grad_op2(g, "Mul", gk, pfvm_grad_op2(g, "Div", x, yk)); break;
    case PFVM__RED_G_LOGSUM: d = pfvm_grad_op2(g, "Mul", gk, pfvm_grad_op1(g, "Exp", pfvm_grad_op1(g, "Neg", yk))); break;
    case PFVM__RED_G_LOGSUMEXP: d = pfvm_grad_op2(g, "Mul", gk, pfvm_grad_op1(g, "Exp", pfvm_grad_op2(g, "Sub", x, yk))); break;
    case PFVM__RED_G_SUMSQ: d = pfvm_grad_op2(g, "Mul", gk, pfvm_grad_op2(g, "Mul", x, pfvm_grad_scalar_like(g, x, 2))); break;
    }
    return pfvm_grad_add(g, x, d);
}

static pfvm_code pfvm__red_grad(pfvm_grad_ctx *g, const pfvm_node *n, int kind)
{
    pfvm_value *x = n->inputs[0], *gy = pfvm_grad_out(g, 0), *gk, *yk, *d = NULL;
    int64_t axes[PFVM__RED_MAX_AXES];
    int r, cnt;
    if (!gy)
        return PFVM_OK;
    r = pfvm_grad_type(g, x)->shape.rank;
    if ((cnt = pfvm__red_gaxes(g, n, r, axes)) == -2)
        return pfvm__red_grad_dynamic(g, n, kind);
    if (cnt < 0)
        return g->st->code;
    if (cnt == 0) /* no axes with noop_with_empty_axes: y = x */
        return pfvm_grad_add(g, x, gy);
    gk = pfvm_grad_expand(g, pfvm__red_gkeep(g, n, gy, axes, cnt), x);
    /* the output, kept, only for the rules that read it */
    yk = kind == PFVM__RED_G_SUM || kind == PFVM__RED_G_MEAN || kind == PFVM__RED_G_L1 || kind == PFVM__RED_G_SUMSQ
             ? NULL
             : pfvm__red_gkeep(g, n, n->outputs[0], axes, cnt);
    switch (kind) {
    case PFVM__RED_G_SUM:
        d = gk;
        break;
    case PFVM__RED_G_MEAN: {
        int64_t count = 1, dim;
        const pfvm_type *t = pfvm_grad_type(g, x);
        int i;
        for (i = 0; i < cnt && count > 0; i++)
            count = pfvm_sym_is_const(t->shape.dims[axes[i]], &dim) ? count * dim : -1;
        if (count > 0)
            d = pfvm_grad_op2(g, "Div", gk, pfvm_grad_scalar_like(g, x, (double)count));
        else
            d = pfvm_grad_op2(g, "Div", gk,
                              pfvm_grad_cast(g, pfvm_grad_op2(g, "Div", pfvm_grad_op1(g, "Size", x),
                                                              pfvm_grad_op1(g, "Size", n->outputs[0])),
                                             pfvm_grad_dtype(g, x)));
        break;
    }
    case PFVM__RED_G_EXTREMUM: {
        /* shared equally between the elements that reach the extremum */
        pfvm_value *m = pfvm_grad_cast(g, pfvm_grad_op2(g, "Equal", x, yk), pfvm_grad_dtype(g, x));
        d = pfvm_grad_op2(g, "Div", pfvm_grad_op2(g, "Mul", gk, m), pfvm_grad_reduce(g, "ReduceSum", m, axes, cnt, 1));
        break;
    }
    case PFVM__RED_G_PROD: /* y / x: inputs assumed non-zero */
        d = pfvm_grad_op2(g, "Mul", gk, pfvm_grad_op2(g, "Div", yk, x));
        break;
    case PFVM__RED_G_L1:
        d = pfvm_grad_op2(g, "Mul", gk, pfvm_grad_op1(g, "Sign", x));
        break;
    case PFVM__RED_G_L2:
        d = pfvm_grad_op2(g, "Mul", gk, pfvm_grad_op2(g, "Div", x, yk));
        break;
    case PFVM__RED_G_LOGSUM: /* 1 / sum = exp(-y) */
        d = pfvm_grad_op2(g, "Mul", gk, pfvm_grad_op1(g, "Exp", pfvm_grad_op1(g, "Neg", yk)));
        break;
    case PFVM__RED_G_LOGSUMEXP:
        d = pfvm_grad_op2(g, "Mul", gk, pfvm_grad_op1(g, "Exp", pfvm_grad_op2(g, "Sub", x, yk)));
        break;
    case PFVM__RED_G_SUMSQ:
        d = pfvm_grad_op2(g, "Mul", gk, pfvm_grad_op2(g, "Mul", x, pfvm_grad_scalar_like(g, x, 2)));
        break;
    }
    return pfvm_grad_add(g, x, d);
}

#define PFVM__RED_GRAD(kname, kind)                                     \
    static pfvm_code kname##_grad(pfvm_grad_ctx *g, const pfvm_node *n) \
    {                                                                   \
        return pfvm__red_grad(g, n, kind);                              \
    }
PFVM__RED_GRAD(pfvm__red_k_sum, PFVM__RED_G_SUM)
PFVM__RED_GRAD(pfvm__red_k_mean, PFVM__RED_G_MEAN)
PFVM__RED_GRAD(pfvm__red_k_max, PFVM__RED_G_EXTREMUM)
PFVM__RED_GRAD(pfvm__red_k_min, PFVM__RED_G_EXTREMUM)
PFVM__RED_GRAD(pfvm__red_k_prod, PFVM__RED_G_PROD)
PFVM__RED_GRAD(pfvm__red_k_l1, PFVM__RED_G_L1)
PFVM__RED_GRAD(pfvm__red_k_l2, PFVM__RED_G_L2)
PFVM__RED_GRAD(pfvm__red_k_logsum, PFVM__RED_G_LOGSUM)
PFVM__RED_GRAD(pfvm__red_k_logsumexp, PFVM__RED_G_LOGSUMEXP)
PFVM__RED_GRAD(pfvm__red_k_sumsq, PFVM__RED_G_SUMSQ)

/* CumSum's adjoint runs the other way. */
static pfvm_code pfvm__red_k_cumsum_grad(pfvm_grad_ctx *g, const pfvm_node *n)
{
    pfvm_value *gy = pfvm_grad_out(g, 0), *in[2];
    pfvm_node *nd;
    if (!gy)
        return PFVM_OK;
    in[0] = gy;
    in[1] = n->inputs[1];
    nd = pfvm_grad_node(g, "CumSum", in, 2, 1);
    if (!nd || pfvm_node_set_attr_int(nd, "reverse", !pfvm_node_attr_int(n, "reverse", 0), g->st) ||
        pfvm_node_set_attr_int(nd, "exclusive", pfvm_node_attr_int(n, "exclusive", 0), g->st))
        return g->st->code;
    return pfvm_grad_add(g, n->inputs[0], nd->outputs[0]);
}

/* TopK: the values' gradient goes back to where they came from. */
static pfvm_code pfvm__red_k_topk_grad(pfvm_grad_ctx *g, const pfvm_node *n)
{
    pfvm_value *gy = pfvm_grad_out(g, 0), *in[3];
    pfvm_node *nd;
    if (!gy)
        return PFVM_OK;
    if (g->opset < 11)
        return pfvm_grad_fail(g, "needs opset 11 (ScatterElements)");
    in[0] = pfvm_grad_zeros_like(g, n->inputs[0]);
    in[1] = pfvm_grad_forward_output(g, 1);
    in[2] = gy;
    nd = pfvm_grad_node(g, "ScatterElements", in, 3, 1);
    if (!nd || pfvm_node_set_attr_int(nd, "axis", pfvm_node_attr_int(n, "axis", -1), g->st))
        return g->st->code;
    return pfvm_grad_add(g, n->inputs[0], nd->outputs[0]);
}

/* The gradient of the loss with respect to the log-probabilities:
 * -w[t] * g at class t (0 where ignored), g divided by the sum of the
 * weights for the mean. Shape [N, C, d...]. */
static pfvm_value *pfvm__red_g_nll(pfvm_grad_ctx *g, const pfvm_node *n, pfvm_value *x, pfvm_value *gl)
{
    pfvm_value *t = n->inputs[1], *w = n->n_inputs > 2 ? n->inputs[2] : NULL, *wt, *coef, *in[3], *oh;
    const pfvm_attr *ia = pfvm_node_attr(n, "ignore_index");
    int red = pfvm__red_loss_reduction(n);
    pfvm_dtype dt = pfvm_grad_dtype(g, x);
    int64_t one = 1, v01[2] = {0, 1}, two = 2, c_axis = 0, c1 = 2;
    pfvm_node *nd;
    t = pfvm_grad_cast(g, t, PFVM_INT64);
    if (ia && ia->type == PFVM_ATTR_INT) {
        pfvm_value *ign = pfvm_grad_op2(g, "Equal", t, pfvm_grad_scalar(g, PFVM_INT64, (double)ia->i));
        t = pfvm_grad_op3(g, "Where", ign, pfvm_grad_scalar(g, PFVM_INT64, 0), t);
        wt = w ? pfvm_grad_op2(g, "Gather", w, t) : pfvm_grad_cast(g, pfvm_grad_ones_like(g, t), dt);
        wt = pfvm_grad_op2(g, "Mul", wt, pfvm_grad_cast(g, pfvm_grad_op1(g, "Not", ign), dt));
    } else {
        wt = w ? pfvm_grad_op2(g, "Gather", w, t) : NULL;
    }
    /* coef = -w[t] * g (/ sum w for the mean), shaped like the target */
    coef = pfvm_grad_op1(g, "Neg", gl);
    if (red == 2) {
        pfvm_value *den;
        if (wt) {
            int64_t axes[PFVM_MAX_RANK];
            int i, r = pfvm_grad_type(g, t)->shape.rank;
            for (i = 0; i < r; i++)
                axes[i] = i;
            den = pfvm_grad_reduce(g, "ReduceSum", wt, axes, r, 0);
        } else {
            den = pfvm_grad_cast(g, pfvm_grad_op1(g, "Size", t), dt);
        }
        coef = pfvm_grad_op2(g, "Div", coef, den);
    }
    coef = wt ? pfvm_grad_op2(g, "Mul", coef, wt) : pfvm_grad_expand(g, coef, pfvm_grad_cast(g, t, dt));
    /* times the one-hot of the target along the class axis */
    in[0] = t;
    in[1] = pfvm_grad_slice(g, pfvm_grad_shape(g, x), &one, &c1, &c_axis, 1);
    in[2] = pfvm_grad_cast(g, pfvm_grad_tensor(g, PFVM_INT64, 1, &two, v01), dt);
    nd = pfvm_grad_node(g, "OneHot", in, 3, 1);
    if (!nd || pfvm_node_set_attr_int(nd, "axis", 1, g->st))
        return NULL;
    oh = nd->outputs[0];
    return pfvm_grad_op2(g, "Mul", oh, pfvm_grad_unsqueeze(g, coef, &one, 1));
}

/* The weights' gradient: L = sum_p -w[t_p] lp_p (over kept positions p),
 * divided by W = sum_p w[t_p] for the mean. dL/dw_c sums, over the
 * positions of class c, g_p * -lp_p (none, sum) or g * (-lp_p - L) / W
 * (mean). lp_p is the log-probability of the target at p. */
static pfvm_code pfvm__red_g_weights(pfvm_grad_ctx *g, const pfvm_node *n, pfvm_value *lp, pfvm_value *gl)
{
    pfvm_value *w = n->inputs[2], *t = pfvm_grad_cast(g, n->inputs[1], PFVM_INT64), *lpt, *v, *oh, *in[3], *keep = NULL;
    const pfvm_attr *ia = pfvm_node_attr(n, "ignore_index");
    int red = pfvm__red_loss_reduction(n), r, i;
    pfvm_dtype dt = pfvm_grad_dtype(g, w);
    int64_t one = 1, v01[2] = {0, 1}, two = 2, axes[PFVM_MAX_RANK], minus1 = -1;
    pfvm_node *nd;
    r = pfvm_grad_type(g, n->inputs[1])->shape.rank;
    if (r < 0 || r >= PFVM_MAX_RANK)
        return pfvm_grad_fail(g, "target of unknown rank");
    if (ia && ia->type == PFVM_ATTR_INT) {
        pfvm_value *ign = pfvm_grad_op2(g, "Equal", t, pfvm_grad_scalar(g, PFVM_INT64, (double)ia->i));
        t = pfvm_grad_op3(g, "Where", ign, pfvm_grad_scalar(g, PFVM_INT64, 0), t);
        keep = pfvm_grad_cast(g, pfvm_grad_op1(g, "Not", ign), dt);
    }
    /* lp at the target, shaped like the target */
    in[0] = lp;
    in[1] = pfvm_grad_unsqueeze(g, t, &one, 1);
    nd = pfvm_grad_node(g, "GatherElements", in, 2, 1);
    if (!nd || pfvm_node_set_attr_int(nd, "axis", 1, g->st))
        return g->st->code;
    lpt = pfvm_grad_squeeze(g, nd->outputs[0], &one, 1);
    v = pfvm_grad_op1(g, "Neg", lpt);
    for (i = 0; i < r; i++)
        axes[i] = i;
    if (red == 2) {
        pfvm_value *wt = pfvm_grad_op2(g, "Gather", w, t), *W;
        if (keep)
            wt = pfvm_grad_op2(g, "Mul", wt, keep);
        W = pfvm_grad_reduce(g, "ReduceSum", wt, axes, r, 0);
        v = pfvm_grad_op2(g, "Div", pfvm_grad_op2(g, "Sub", v, n->outputs[0]), W);
    }
    v = pfvm_grad_op2(g, "Mul", v, gl);
    if (keep)
        v = pfvm_grad_op2(g, "Mul", v, keep);
    /* summed per class: one-hot [..., C] times v */
    in[0] = t;
    in[1] = pfvm_grad_shape(g, w);
    in[2] = pfvm_grad_cast(g, pfvm_grad_tensor(g, PFVM_INT64, 1, &two, v01), dt);
    nd = pfvm_grad_node(g, "OneHot", in, 3, 1);
    if (!nd || pfvm_node_set_attr_int(nd, "axis", -1, g->st))
        return g->st->code;
    oh = pfvm_grad_op2(g, "Mul", nd->outputs[0], pfvm_grad_unsqueeze(g, v, &minus1, 1));
    oh = r ? pfvm_grad_reduce(g, "ReduceSum", oh, axes, r, 0) : oh;
    return pfvm_grad_add(g, w, oh);
}

static pfvm_code pfvm__red_k_nll_grad(pfvm_grad_ctx *g, const pfvm_node *n)
{
    pfvm_value *gl = pfvm_grad_out(g, 0);
    if (!gl)
        return PFVM_OK;
    if (g->opset < 9)
        return pfvm_grad_fail(g, "needs opset 9 (OneHot)");
    if (pfvm_grad_needed(g, n->inputs[0]) && pfvm_grad_add(g, n->inputs[0], pfvm__red_g_nll(g, n, n->inputs[0], gl)))
        return g->st->code;
    if (n->n_inputs > 2 && pfvm_grad_needed(g, n->inputs[2]))
        return pfvm__red_g_weights(g, n, n->inputs[0], gl);
    return PFVM_OK;
}

/* SoftmaxCrossEntropyLoss = NLL(LogSoftmax(scores, axis 1)): the
 * log-probabilities' gradient (the loss's, plus log_prob's own readers)
 * through LogSoftmax: d - softmax * sum_c d. */
static pfvm_code pfvm__red_k_sce_grad(pfvm_grad_ctx *g, const pfvm_node *n)
{
    pfvm_value *gl = pfvm_grad_out(g, 0), *glp = pfvm_grad_out(g, 1), *x = n->inputs[0], *lp, *d = NULL;
    int64_t one = 1;
    if (!gl && !glp)
        return PFVM_OK;
    if (g->opset < 9)
        return pfvm_grad_fail(g, "needs opset 9 (OneHot)");
    lp = pfvm_grad_forward_output(g, 1);
    if (gl)
        d = pfvm__red_g_nll(g, n, x, gl);
    if (glp)
        d = d ? pfvm_grad_op2(g, "Add", d, glp) : glp;
    d = pfvm_grad_op2(g, "Sub", d,
                      pfvm_grad_op2(g, "Mul", pfvm_grad_op1(g, "Exp", lp), pfvm_grad_reduce(g, "ReduceSum", d, &one, 1, 1)));
    if (pfvm_grad_add(g, x, d))
        return g->st->code;
    if (gl && n->n_inputs > 2 && pfvm_grad_needed(g, n->inputs[2]))
        return pfvm__red_g_weights(g, n, lp, gl);
    return PFVM_OK;
}

/* ---- the table ------------------------------------------------------------------------------------------ */

#define PFVM__RED_T "float,double,float16,bfloat16,int8,uint8,int16,uint16,int32,uint32,int64,uint64"
/* Every reduction takes the builder named after its kernel, `<kern>_grad`,
 * and the fuse hook `<kern>_fuse`. ReduceMean's simplify hook is
 * LayerNormalization's compose rule (the first node of an exported
 * LayerNorm; it acts in the compose pass only). */
#define PFVM__RED_OP(name, kern) \
    {name, "", 1, 0, 1, 2, 1, 1, pfvm__red_infer, kern, NULL, PFVM_FUSE_REDUCTION, PFVM__RED_T, NULL, 0, NULL, kern##_grad, kern##_fuse, NULL, pfvm_acl_reduce, NULL, NULL, NULL}

PFVM_INTERNAL const pfvm_op_def pfvm__ops_reduce[] = {
    PFVM__RED_OP("ReduceSum", pfvm__red_k_sum),
    {"ReduceMean", "", 1, 0, 1, 2, 1, 1, pfvm__red_infer, pfvm__red_k_mean, NULL, PFVM_FUSE_REDUCTION, PFVM__RED_T, NULL, 0,
     pfvm_nn_compose_ln, pfvm__red_k_mean_grad, pfvm__red_k_mean_fuse, NULL, pfvm_acl_reduce, NULL, NULL, NULL},
    PFVM__RED_OP("ReduceMax", pfvm__red_k_max),
    PFVM__RED_OP("ReduceMin", pfvm__red_k_min),
    PFVM__RED_OP("ReduceProd", pfvm__red_k_prod),
    PFVM__RED_OP("ReduceL1", pfvm__red_k_l1),
    PFVM__RED_OP("ReduceL2", pfvm__red_k_l2),
    PFVM__RED_OP("ReduceLogSum", pfvm__red_k_logsum),
    PFVM__RED_OP("ReduceLogSumExp", pfvm__red_k_logsumexp),
    PFVM__RED_OP("ReduceSumSquare", pfvm__red_k_sumsq),
    {"ArgMax", "", 1, 0, 1, 1, 1, 1, pfvm__red_infer_arg, pfvm__red_k_argmax, NULL, PFVM_FUSE_REDUCTION, PFVM__RED_T, NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
    {"ArgMin", "", 1, 0, 1, 1, 1, 1, pfvm__red_infer_arg, pfvm__red_k_argmin, NULL, PFVM_FUSE_REDUCTION, PFVM__RED_T, NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
    {"CumSum", "", 11, 0, 2, 2, 1, 1, pfvm__red_infer_cumsum, pfvm__red_k_cumsum, NULL, PFVM_FUSE_OPAQUE, PFVM__RED_T, NULL, 0, NULL, pfvm__red_k_cumsum_grad, NULL, NULL, NULL, NULL, NULL, NULL},
    {"TopK", "", 1, 0, 1, 2, 2, 2, pfvm__red_infer_topk, pfvm__red_k_topk, NULL, PFVM_FUSE_OPAQUE, PFVM__RED_T, NULL, 0, NULL, pfvm__red_k_topk_grad, NULL, NULL, NULL, NULL, NULL, NULL},
    {"NegativeLogLikelihoodLoss", "", 12, 0, 2, 3, 1, 1, pfvm__red_infer_loss, pfvm__red_k_nll, pfvm__red_check_loss,
     PFVM_FUSE_OPAQUE, "float,double,float16,bfloat16", NULL, 0, NULL, pfvm__red_k_nll_grad, NULL, NULL, NULL, NULL, NULL, NULL},
    {"SoftmaxCrossEntropyLoss", "", 12, 0, 2, 3, 1, 2, pfvm__red_infer_loss, pfvm__red_k_sce, pfvm__red_check_loss,
     PFVM_FUSE_OPAQUE, "float,double,float16,bfloat16", NULL, 0, NULL, pfvm__red_k_sce_grad, NULL, NULL, NULL, NULL, NULL, NULL},
    {NULL, NULL, 0, 0, 0, 0, 0, 0, NULL, NULL, NULL, PFVM_FUSE_OPAQUE, NULL, NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL}
};
