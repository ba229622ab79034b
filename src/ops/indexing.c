/* ops/indexing: element-level gathers and scatters, and the operators whose
 * output is an index pattern — GatherElements, GatherND, ScatterElements
 * (and the older Scatter), ScatterND, OneHot, EyeLike, Compress, NonZero,
 * DepthToSpace, SpaceToDepth, ReverseSequence.
 *
 * Shared helpers: index normalisation with bounds checks (every index read
 * from a tensor is checked; a bad one is an error naming it), element copy
 * by byte size, and a multi-index walker. */
#include "ops_common.h"

/* ---- helpers ------------------------------------------------------------------------ */

static void pfvm__ix_strides(const pfvm_tensor *t, int64_t *st)
{
    int64_t s = 1;
    int d;
    for (d = t->rank - 1; d >= 0; d--) {
        st[d] = s;
        s *= t->dims[d];
    }
}

/* Advances a row-major multi-index over dims; 0 when it wraps around. */
static int pfvm__ix_next(int64_t *idx, const int64_t *dims, int rank)
{
    int d;
    for (d = rank - 1; d >= 0; d--) {
        if (++idx[d] < dims[d])
            return 1;
        idx[d] = 0;
    }
    return 0;
}

/* Index i of tensor t, negative values counted from `dim`; -1 if out of range. */
static int64_t pfvm__ix_index(const pfvm_tensor *t, int64_t i, int64_t dim)
{
    int64_t v = pfvm_tensor_get_i64(t, i);
    if (v < 0)
        v += dim;
    return v >= 0 && v < dim ? v : -1;
}

static void pfvm__ix_copy(pfvm_tensor *dst, int64_t di, const pfvm_tensor *src, int64_t si)
{
    size_t es = pfvm_dtype_size(src->dtype);
    if (src->dtype == PFVM_STRING) {
        const char *s = ((char *const *)src->data)[si];
        char **d = &((char **)dst->data)[di];
        pfvm__free(*d);
        *d = pfvm__strdup(s ? s : "");
        return;
    }
    memcpy((char *)dst->data + (size_t)di * es, (const char *)src->data + (size_t)si * es, es);
}

static void pfvm__ix_copy_all(pfvm_tensor *dst, const pfvm_tensor *src)
{
    int64_t i, n = pfvm_tensor_numel(src);
    if (src->dtype != PFVM_STRING) {
        if (src->nbytes)
            memcpy(dst->data, src->data, (size_t)n * pfvm_dtype_size(src->dtype));
        return;
    }
    for (i = 0; i < n; i++)
        pfvm__ix_copy(dst, i, src, i);
}

static pfvm_code pfvm__ix_bad_index(pfvm_kctx *k, const pfvm_tensor *ix, int64_t i, int64_t dim)
{
    return pfvm__op_fail(k->st, k->node, PFVM_ERR_RANGE, "index %lld is out of range for a dimension of %lld",
                         (long long)pfvm_tensor_get_i64(ix, i), (long long)dim);
}

/* ---- GatherElements, ScatterElements ------------------------------------------------- */

static pfvm_code pfvm__ix_infer_gather_elements(pfvm_ictx *c)
{
    pfvm_ival_set_tensor(c->out[0], c->in[0]->type.dtype, &c->in[1]->type.shape);
    return PFVM_OK;
}

static pfvm_code pfvm__ix_k_gather_elements(pfvm_kctx *k)
{
    const pfvm_tensor *X = k->in[0], *I = k->in[1];
    int a = pfvm__axis(pfvm_node_attr_int(k->node, "axis", 0), X->rank), d;
    int64_t xs[PFVM_MAX_RANK], idx[PFVM_MAX_RANK] = {0}, n = pfvm_tensor_numel(I), i;
    if (a < 0 || I->rank != X->rank)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "axis out of range or index rank differs from data rank");
    pfvm__ix_strides(X, xs);
    for (i = 0; i < n; i++, pfvm__ix_next(idx, I->dims, I->rank)) {
        int64_t j = pfvm__ix_index(I, i, X->dims[a]), src = 0;
        if (j < 0)
            return pfvm__ix_bad_index(k, I, i, X->dims[a]);
        for (d = 0; d < X->rank; d++) {
            int64_t p = d == a ? j : idx[d];
            if (p >= X->dims[d])
                return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "indices are larger than data on axis %d", d);
            src += p * xs[d];
        }
        pfvm__ix_copy(k->out[0], i, X, src);
    }
    return PFVM_OK;
}

/* Combines an update into a destination element per the reduction mode. */
static pfvm_code pfvm__ix_combine(pfvm_kctx *k, pfvm_tensor *Y, int64_t at, const pfvm_tensor *U, int64_t ui,
                                  const char *red)
{
    double a, b, r;
    if (!strcmp(red, "none")) {
        pfvm__ix_copy(Y, at, U, ui);
        return PFVM_OK;
    }
    if (Y->dtype == PFVM_STRING)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_UNSUPPORTED, "reduction on strings");
    a = pfvm_tensor_get_f64(Y, at);
    b = pfvm_tensor_get_f64(U, ui);
    if (!strcmp(red, "add"))
        r = a + b;
    else if (!strcmp(red, "mul"))
        r = a * b;
    else if (!strcmp(red, "max"))
        r = a > b ? a : b;
    else if (!strcmp(red, "min"))
        r = a < b ? a : b;
    else
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "reduction '%s' is not valid", red);
    switch (Y->dtype) {
    case PFVM_FLOAT: ((float *)Y->data)[at] = (float)r; break;
    case PFVM_DOUBLE: ((double *)Y->data)[at] = r; break;
    case PFVM_FLOAT16: ((uint16_t *)Y->data)[at] = pfvm_float_to_half((float)r); break;
    case PFVM_INT64: ((int64_t *)Y->data)[at] = (int64_t)r; break;
    case PFVM_INT32: ((int32_t *)Y->data)[at] = (int32_t)r; break;
    default: return pfvm__op_fail(k->st, k->node, PFVM_ERR_UNSUPPORTED, "reduction on %s", pfvm_dtype_name(Y->dtype));
    }
    return PFVM_OK;
}

static pfvm_code pfvm__ix_k_scatter_elements(pfvm_kctx *k)
{
    const pfvm_tensor *X = k->in[0], *I = k->in[1], *U = k->in[2];
    int a = pfvm__axis(pfvm_node_attr_int(k->node, "axis", 0), X->rank), d;
    const char *red = pfvm_node_attr_string(k->node, "reduction", "none");
    int64_t xs[PFVM_MAX_RANK], idx[PFVM_MAX_RANK] = {0}, n = pfvm_tensor_numel(I), i;
    if (a < 0 || I->rank != X->rank || U->rank != I->rank)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "axis out of range or ranks differ");
    pfvm__ix_copy_all(k->out[0], X);
    pfvm__ix_strides(X, xs);
    for (i = 0; i < n; i++, pfvm__ix_next(idx, I->dims, I->rank)) {
        int64_t j = pfvm__ix_index(I, i, X->dims[a]), at = 0;
        if (j < 0)
            return pfvm__ix_bad_index(k, I, i, X->dims[a]);
        for (d = 0; d < X->rank; d++) {
            int64_t p = d == a ? j : idx[d];
            if (p >= X->dims[d])
                return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "indices are larger than data on axis %d", d);
            at += p * xs[d];
        }
        if (pfvm__ix_combine(k, k->out[0], at, U, i, red))
            return k->st ? k->st->code : PFVM_ERR_INVALID;
    }
    return PFVM_OK;
}

/* ---- GatherND, ScatterND -------------------------------------------------------------- */

static pfvm_code pfvm__ix_infer_gather_nd(pfvm_ictx *c)
{
    const pfvm_shape *x = &c->in[0]->type.shape, *ix = &c->in[1]->type.shape;
    int b = (int)pfvm_node_attr_int(c->node, "batch_dims", 0), i;
    int64_t last;
    pfvm_shape out;
    if (x->rank < 0 || ix->rank < 1 || !pfvm_sym_is_const(ix->dims[ix->rank - 1], &last))
        return pfvm_infer_unknown(c, 0, c->in[0]->type.dtype, -1);
    if (last < 1 || b + last > x->rank)
        return pfvm__fail(c->st, PFVM_ERR_SHAPE, "index tuples of length %lld do not fit rank %d", (long long)last, x->rank);
    out.rank = 0;
    for (i = 0; i < ix->rank - 1; i++)
        out.dims[out.rank++] = ix->dims[i];
    for (i = b + (int)last; i < x->rank; i++) {
        if (out.rank >= PFVM_MAX_RANK)
            return pfvm__fail(c->st, PFVM_ERR_UNSUPPORTED, "output rank exceeds PFVM_MAX_RANK");
        out.dims[out.rank++] = x->dims[i];
    }
    pfvm_ival_set_tensor(c->out[0], c->in[0]->type.dtype, &out);
    return PFVM_OK;
}

/* Offset in X of index tuple t (batch entry bi); -1 when out of range. */
static int64_t pfvm__ix_tuple(const pfvm_tensor *X, const pfvm_tensor *I, int64_t t, int64_t last, int b, int64_t bi,
                              const int64_t *xs)
{
    int64_t off = 0, q, rest = bi;
    int d;
    for (d = b - 1; d >= 0; d--) {
        off += (rest % X->dims[d]) * xs[d];
        rest /= X->dims[d];
    }
    for (q = 0; q < last; q++) {
        int64_t j = pfvm__ix_index(I, t * last + q, X->dims[b + q]);
        if (j < 0)
            return -1;
        off += j * xs[b + q];
    }
    return off;
}

static pfvm_code pfvm__ix_k_gather_nd(pfvm_kctx *k)
{
    const pfvm_tensor *X = k->in[0], *I = k->in[1];
    int b = (int)pfvm_node_attr_int(k->node, "batch_dims", 0), d;
    int64_t last = I->dims[I->rank - 1], xs[PFVM_MAX_RANK], tuples, inner = 1, per_batch = 1, t, e;
    pfvm__ix_strides(X, xs);
    for (d = b + (int)last; d < X->rank; d++)
        inner *= X->dims[d];
    tuples = last ? pfvm_tensor_numel(I) / last : 0;
    for (d = b; d < I->rank - 1; d++)
        per_batch *= I->dims[d];
    for (t = 0; t < tuples; t++) {
        int64_t off = pfvm__ix_tuple(X, I, t, last, b, per_batch ? t / per_batch : 0, xs);
        if (off < 0)
            return pfvm__op_fail(k->st, k->node, PFVM_ERR_RANGE, "index tuple %lld is out of range", (long long)t);
        for (e = 0; e < inner; e++)
            pfvm__ix_copy(k->out[0], t * inner + e, X, off + e);
    }
    return PFVM_OK;
}

static pfvm_code pfvm__ix_k_scatter_nd(pfvm_kctx *k)
{
    const pfvm_tensor *X = k->in[0], *I = k->in[1], *U = k->in[2];
    const char *red = pfvm_node_attr_string(k->node, "reduction", "none");
    int64_t last = I->dims[I->rank - 1], xs[PFVM_MAX_RANK], tuples, inner = 1, t, e;
    int d;
    if (last < 1 || last > X->rank)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "index tuples do not fit the data rank");
    pfvm__ix_copy_all(k->out[0], X);
    pfvm__ix_strides(X, xs);
    for (d = (int)last; d < X->rank; d++)
        inner *= X->dims[d];
    tuples = pfvm_tensor_numel(I) / last;
    if (pfvm_tensor_numel(U) != tuples * inner)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "updates do not match the indices");
    for (t = 0; t < tuples; t++) {
        int64_t off = pfvm__ix_tuple(X, I, t, last, 0, 0, xs);
        if (off < 0)
            return pfvm__op_fail(k->st, k->node, PFVM_ERR_RANGE, "index tuple %lld is out of range", (long long)t);
        for (e = 0; e < inner; e++)
            if (pfvm__ix_combine(k, k->out[0], off + e, U, t * inner + e, red))
                return k->st ? k->st->code : PFVM_ERR_INVALID;
    }
    return PFVM_OK;
}

/* ---- OneHot, EyeLike ----------------------------------------------------------------------- */

static pfvm_code pfvm__ix_infer_onehot(pfvm_ictx *c)
{
    const pfvm_shape *ix = &c->in[0]->type.shape;
    int64_t depth[1];
    int a, i, j;
    pfvm_shape out;
    if (ix->rank < 0 || ix->rank + 1 > PFVM_MAX_RANK)
        return pfvm_infer_unknown(c, 0, c->in[2]->type.dtype, -1);
    a = pfvm__axis(pfvm_node_attr_int(c->node, "axis", -1), ix->rank + 1);
    if (a < 0)
        return pfvm__fail(c->st, PFVM_ERR_INVALID, "axis is out of range");
    if (pfvm_ival_ints(c->in[1], depth, 1) != 1 && !(c->in[1]->value && pfvm_tensor_numel(c->in[1]->value) == 1))
        return pfvm_infer_unknown(c, 0, c->in[2]->type.dtype, ix->rank + 1);
    if (c->in[1]->value)
        depth[0] = (int64_t)pfvm_tensor_get_f64(c->in[1]->value, 0);
    out.rank = ix->rank + 1;
    for (i = 0, j = 0; i < out.rank; i++)
        out.dims[i] = i == a ? pfvm_sym_const(c->syms, depth[0]) : ix->dims[j++];
    pfvm_ival_set_tensor(c->out[0], c->in[2]->type.dtype, &out);
    return PFVM_OK;
}

static pfvm_code pfvm__ix_k_onehot(pfvm_kctx *k)
{
    const pfvm_tensor *I = k->in[0], *V = k->in[2];
    pfvm_tensor *Y = k->out[0];
    int64_t depth = (int64_t)pfvm_tensor_get_f64(k->in[1], 0), outer = 1, inner = 1, o, j, c;
    int a = pfvm__axis(pfvm_node_attr_int(k->node, "axis", -1), I->rank + 1), d;
    if (a < 0 || depth < 1 || pfvm_tensor_numel(V) != 2)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "bad axis, depth or values");
    if (!Y->data) {
        int64_t dims[PFVM_MAX_RANK];
        for (d = 0, j = 0; d <= I->rank; d++)
            dims[d] = d == a ? depth : I->dims[j++];
        if (pfvm_kctx_output(k, 0, V->dtype, I->rank + 1, dims))
            return k->st ? k->st->code : PFVM_ERR_NOMEM;
    }
    for (d = 0; d < a; d++)
        outer *= I->dims[d];
    for (d = a; d < I->rank; d++)
        inner *= I->dims[d];
    for (o = 0; o < outer; o++)
        for (c = 0; c < depth; c++)
            for (j = 0; j < inner; j++) {
                double v = pfvm_tensor_get_f64(I, o * inner + j);
                int64_t cls = (int64_t)v < 0 ? (int64_t)v + depth : (int64_t)v;
                pfvm__ix_copy(Y, (o * depth + c) * inner + j, V, cls == c ? 1 : 0);
            }
    return PFVM_OK;
}

static pfvm_code pfvm__ix_infer_eyelike(pfvm_ictx *c)
{
    int64_t dt = pfvm_node_attr_int(c->node, "dtype", c->in[0]->type.dtype);
    if (dt <= 0 || dt >= PFVM_DTYPE_COUNT)
        return pfvm__fail(c->st, PFVM_ERR_INVALID, "dtype %lld is not valid", (long long)dt);
    pfvm_ival_set_tensor(c->out[0], (pfvm_dtype)dt, &c->in[0]->type.shape);
    return PFVM_OK;
}

static pfvm_code pfvm__ix_k_eyelike(pfvm_kctx *k)
{
    pfvm_tensor *Y = k->out[0];
    int64_t kk = pfvm_node_attr_int(k->node, "k", 0), r, c;
    size_t es = pfvm_dtype_size(Y->dtype);
    if (Y->rank != 2)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "input must be 2-D");
    memset(Y->data, 0, Y->nbytes);
    for (r = 0; r < Y->dims[0]; r++) {
        c = r + kk;
        if (c < 0 || c >= Y->dims[1])
            continue;
        switch (Y->dtype) {
        case PFVM_FLOAT: ((float *)Y->data)[r * Y->dims[1] + c] = 1; break;
        case PFVM_DOUBLE: ((double *)Y->data)[r * Y->dims[1] + c] = 1; break;
        case PFVM_FLOAT16: ((uint16_t *)Y->data)[r * Y->dims[1] + c] = 0x3c00; break;
        case PFVM_INT64: ((int64_t *)Y->data)[r * Y->dims[1] + c] = 1; break;
        case PFVM_INT32: ((int32_t *)Y->data)[r * Y->dims[1] + c] = 1; break;
        default: memset((char *)Y->data + (size_t)(r * Y->dims[1] + c) * es, 0, es); ((uint8_t *)Y->data)[(size_t)(r * Y->dims[1] + c) * es] = 1; break;
        }
    }
    return PFVM_OK;
}

/* ---- Compress, NonZero: data-dependent sizes ----------------------------------------------- */

static pfvm_code pfvm__ix_infer_compress(pfvm_ictx *c)
{
    const pfvm_shape *x = &c->in[0]->type.shape;
    const pfvm_attr *ax = pfvm_node_attr(c->node, "axis");
    return pfvm_infer_unknown(c, 0, c->in[0]->type.dtype, ax ? x->rank : 1);
}

static pfvm_code pfvm__ix_k_compress(pfvm_kctx *k)
{
    const pfvm_tensor *X = k->in[0], *C = k->in[1];
    const pfvm_attr *ax = pfvm_node_attr(k->node, "axis");
    int64_t nc = pfvm_tensor_numel(C), kept = 0, i, outer = 1, inner = 1, len, o, e, at = 0;
    int64_t dims[PFVM_MAX_RANK];
    int a, d;
    if (!ax) {
        len = pfvm_tensor_numel(X);
        for (i = 0; i < nc && i < len; i++)
            kept += pfvm_tensor_get_i64(C, i) != 0;
        if (pfvm_kctx_output(k, 0, X->dtype, 1, &kept))
            return k->st ? k->st->code : PFVM_ERR_NOMEM;
        for (i = 0; i < nc && i < len; i++)
            if (pfvm_tensor_get_i64(C, i))
                pfvm__ix_copy(k->out[0], at++, X, i);
        return PFVM_OK;
    }
    a = pfvm__axis(ax->i, X->rank);
    if (a < 0)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "axis is out of range");
    len = X->dims[a];
    if (nc > len)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "condition is longer than the axis");
    for (i = 0; i < nc; i++)
        kept += pfvm_tensor_get_i64(C, i) != 0;
    memcpy(dims, X->dims, sizeof(int64_t) * (size_t)X->rank);
    dims[a] = kept;
    if (pfvm_kctx_output(k, 0, X->dtype, X->rank, dims))
        return k->st ? k->st->code : PFVM_ERR_NOMEM;
    for (d = 0; d < a; d++)
        outer *= X->dims[d];
    for (d = a + 1; d < X->rank; d++)
        inner *= X->dims[d];
    for (o = 0; o < outer; o++)
        for (i = 0; i < nc; i++)
            if (pfvm_tensor_get_i64(C, i))
                for (e = 0; e < inner; e++)
                    pfvm__ix_copy(k->out[0], at++, X, (o * len + i) * inner + e);
    return PFVM_OK;
}

static pfvm_code pfvm__ix_infer_nonzero(pfvm_ictx *c)
{
    pfvm_shape s;
    const pfvm_shape *x = &c->in[0]->type.shape;
    if (x->rank < 0)
        return pfvm_infer_unknown(c, 0, PFVM_INT64, 2);
    /* [rank, count]: the count is a named unknown (`NonZero_3_o0_d1`) */
    if (pfvm_infer_unknown(c, 0, PFVM_INT64, 2))
        return c->st ? c->st->code : PFVM_ERR_NOMEM;
    s = c->out[0]->type.shape;
    s.dims[0] = pfvm_sym_const(c->syms, x->rank);
    c->out[0]->type.shape = s;
    return PFVM_OK;
}

static pfvm_code pfvm__ix_k_nonzero(pfvm_kctx *k)
{
    const pfvm_tensor *X = k->in[0];
    int64_t n = pfvm_tensor_numel(X), cnt = 0, i, at = 0, dims[2], idx[PFVM_MAX_RANK] = {0};
    int d;
    for (i = 0; i < n; i++)
        cnt += pfvm_tensor_get_f64(X, i) != 0;
    dims[0] = X->rank;
    dims[1] = cnt;
    if (pfvm_kctx_output(k, 0, PFVM_INT64, 2, dims))
        return k->st ? k->st->code : PFVM_ERR_NOMEM;
    for (i = 0; i < n; i++, pfvm__ix_next(idx, X->dims, X->rank)) {
        if (pfvm_tensor_get_f64(X, i) == 0)
            continue;
        for (d = 0; d < X->rank; d++)
            ((int64_t *)k->out[0]->data)[d * cnt + at] = idx[d];
        at++;
    }
    return PFVM_OK;
}

/* ---- DepthToSpace, SpaceToDepth ------------------------------------------------------------- */

static pfvm_code pfvm__ix_infer_d2s(pfvm_ictx *c)
{
    const pfvm_shape *x = &c->in[0]->type.shape;
    int64_t b = pfvm_node_attr_int(c->node, "blocksize", 0);
    int to_space = !strcmp(c->node->op_type, "DepthToSpace");
    pfvm_shape out;
    if (x->rank < 0)
        return pfvm_infer_unknown(c, 0, c->in[0]->type.dtype, 4);
    if (x->rank != 4 || b < 1)
        return pfvm__fail(c->st, PFVM_ERR_SHAPE, "needs a 4-D input and a positive blocksize");
    out = *x;
    if (to_space) {
        out.dims[1] = pfvm_sym_div(c->syms, x->dims[1], pfvm_sym_const(c->syms, b * b));
        out.dims[2] = pfvm_sym_muli(c->syms, x->dims[2], b);
        out.dims[3] = pfvm_sym_muli(c->syms, x->dims[3], b);
    } else {
        out.dims[1] = pfvm_sym_muli(c->syms, x->dims[1], b * b);
        out.dims[2] = pfvm_sym_div(c->syms, x->dims[2], pfvm_sym_const(c->syms, b));
        out.dims[3] = pfvm_sym_div(c->syms, x->dims[3], pfvm_sym_const(c->syms, b));
    }
    pfvm_ival_set_tensor(c->out[0], c->in[0]->type.dtype, &out);
    return PFVM_OK;
}

/* Both directions as one index map between (n, c, h, w) of the deep tensor
 * and (n, c', h*b+i, w*b+j) of the wide one. */
static pfvm_code pfvm__ix_k_d2s(pfvm_kctx *k)
{
    int to_space = !strcmp(k->node->op_type, "DepthToSpace");
    const pfvm_tensor *X = k->in[0];
    pfvm_tensor *Y = k->out[0];
    const pfvm_tensor *deep = to_space ? X : Y;
    int64_t b = pfvm_node_attr_int(k->node, "blocksize", 0), N, C, H, W, n, c, h, w, i, j;
    int crd = !strcmp(pfvm_node_attr_string(k->node, "mode", "DCR"), "CRD");
    if (b < 1 || X->rank != 4)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "needs a 4-D input and a positive blocksize");
    N = deep->dims[0];
    C = deep->dims[1] / (b * b);
    H = deep->dims[2];
    W = deep->dims[3];
    if (deep->dims[1] % (b * b))
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "channels are not divisible by blocksize^2");
    for (n = 0; n < N; n++)
        for (c = 0; c < C; c++)
            for (h = 0; h < H; h++)
                for (w = 0; w < W; w++)
                    for (i = 0; i < b; i++)
                        for (j = 0; j < b; j++) {
                            /* SpaceToDepth always uses the DCR channel order */
                            int64_t dc = crd && to_space ? c * b * b + i * b + j : (i * b + j) * C + c;
                            int64_t di = ((n * deep->dims[1] + dc) * H + h) * W + w;
                            int64_t wi = ((n * C + c) * H * b + h * b + i) * W * b + w * b + j;
                            if (to_space)
                                pfvm__ix_copy(Y, wi, X, di);
                            else
                                pfvm__ix_copy(Y, di, X, wi);
                        }
    return PFVM_OK;
}

/* ---- ReverseSequence --------------------------------------------------------------------------- */

static pfvm_code pfvm__ix_k_revseq(pfvm_kctx *k)
{
    const pfvm_tensor *X = k->in[0], *L = k->in[1];
    int ba = (int)pfvm_node_attr_int(k->node, "batch_axis", 1), ta = (int)pfvm_node_attr_int(k->node, "time_axis", 0);
    int64_t xs[PFVM_MAX_RANK], idx[PFVM_MAX_RANK] = {0}, n = pfvm_tensor_numel(X), i;
    int d;
    if (X->rank < 2 || ba < 0 || ta < 0 || ba >= X->rank || ta >= X->rank || ba == ta || pfvm_tensor_numel(L) != X->dims[ba])
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "axes or sequence lengths do not fit the input");
    pfvm__ix_strides(X, xs);
    for (i = 0; i < n; i++, pfvm__ix_next(idx, X->dims, X->rank)) {
        int64_t len = pfvm_tensor_get_i64(L, idx[ba]), t = idx[ta], src = 0;
        if (len < 0 || len > X->dims[ta])
            return pfvm__op_fail(k->st, k->node, PFVM_ERR_RANGE, "sequence length %lld is out of range", (long long)len);
        for (d = 0; d < X->rank; d++)
            src += (d == ta && t < len ? len - 1 - t : idx[d]) * xs[d];
        pfvm__ix_copy(k->out[0], i, X, src);
    }
    return PFVM_OK;
}

const pfvm_op_def pfvm__ops_indexing[] = {
    {"GatherElements", "", 11, 0, 2, 2, 1, 1, pfvm__ix_infer_gather_elements, pfvm__ix_k_gather_elements, NULL, PFVM_FUSE_INJECTIVE, "any", NULL, 0},
    {"ScatterElements", "", 11, 0, 3, 3, 1, 1, pfvm_infer_same_as_first, pfvm__ix_k_scatter_elements, NULL, PFVM_FUSE_OPAQUE, "any", NULL, 0},
    {"Scatter", "", 9, 10, 3, 3, 1, 1, pfvm_infer_same_as_first, pfvm__ix_k_scatter_elements, NULL, PFVM_FUSE_OPAQUE, "any", NULL, 0},
    {"GatherND", "", 11, 0, 2, 2, 1, 1, pfvm__ix_infer_gather_nd, pfvm__ix_k_gather_nd, NULL, PFVM_FUSE_INJECTIVE, "any", NULL, 0},
    {"ScatterND", "", 11, 0, 3, 3, 1, 1, pfvm_infer_same_as_first, pfvm__ix_k_scatter_nd, NULL, PFVM_FUSE_OPAQUE, "any", NULL, 0},
    {"OneHot", "", 9, 0, 3, 3, 1, 1, pfvm__ix_infer_onehot, pfvm__ix_k_onehot, NULL, PFVM_FUSE_OPAQUE, "any", NULL, 0},
    {"EyeLike", "", 9, 0, 1, 1, 1, 1, pfvm__ix_infer_eyelike, pfvm__ix_k_eyelike, NULL, PFVM_FUSE_OPAQUE, "float,double,float16,int32,int64", NULL, 0},
    {"Compress", "", 9, 0, 2, 2, 1, 1, pfvm__ix_infer_compress, pfvm__ix_k_compress, NULL, PFVM_FUSE_OPAQUE, "any", NULL, 0},
    {"NonZero", "", 9, 0, 1, 1, 1, 1, pfvm__ix_infer_nonzero, pfvm__ix_k_nonzero, NULL, PFVM_FUSE_OPAQUE, "numeric,bool", NULL, 0},
    {"DepthToSpace", "", 1, 0, 1, 1, 1, 1, pfvm__ix_infer_d2s, pfvm__ix_k_d2s, NULL, PFVM_FUSE_INJECTIVE, "any", NULL, 0},
    {"SpaceToDepth", "", 1, 0, 1, 1, 1, 1, pfvm__ix_infer_d2s, pfvm__ix_k_d2s, NULL, PFVM_FUSE_INJECTIVE, "any", NULL, 0},
    {"ReverseSequence", "", 10, 0, 2, 2, 1, 1, pfvm_infer_same_as_first, pfvm__ix_k_revseq, NULL, PFVM_FUSE_INJECTIVE, "any", NULL, 0},
    {NULL, NULL, 0, 0, 0, 0, 0, 0, NULL, NULL, NULL, PFVM_FUSE_OPAQUE, NULL, NULL, 0}
};
