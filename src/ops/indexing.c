/* ops/indexing: element-level gathers and scatters, and the operators whose
 * output is an index pattern — GatherElements, GatherND, ScatterElements
 * (and the older Scatter), ScatterND, OneHot, EyeLike, Compress, NonZero,
 * DepthToSpace, SpaceToDepth, ReverseSequence. The tensor family's second
 * file: it uses tensor.c's element copies, strided walk and index checks
 * (ops_common.h).
 *
 * Every index read from a tensor is checked before it is used; a bad one
 * is an error that names it. Shapes are checked in the kernels as well as
 * in inference, since kernels also run on shapes the planner never saw. */
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

static pfvm_code pfvm__ix_code(pfvm_kctx *k, pfvm_code fallback)
{
    return k->st && k->st->code ? k->st->code : fallback;
}

static pfvm_code pfvm__ix_bad_index(pfvm_kctx *k, const pfvm_tensor *ix, int64_t i, int64_t dim)
{
    return pfvm__op_fail(k->st, k->node, PFVM_ERR_RANGE, "index %lld is out of range for a dimension of %lld",
                         (long long)pfvm_tensor_get_i64(ix, i), (long long)dim);
}

/* Output 0 = a copy of input 0 (the scatters start from the data). */
static pfvm_code pfvm__ix_copy_data(pfvm_kctx *k)
{
    const pfvm_tensor *x = k->in[0];
    if (pfvm_tn_output(k, 0, x->dtype, x->rank, x->dims))
        return pfvm__ix_code(k, PFVM_ERR_NOMEM);
    if (k->out[0]->data != x->data)
        pfvm_tn_copy(k->out[0], 0, x, 0, pfvm_tensor_numel(x));
    return PFVM_OK;
}

/* Whether element i is nonzero (strings: non-empty; NaN counts). */
static int pfvm__ix_nonzero(const pfvm_tensor *t, int64_t i)
{
    if (t->dtype == PFVM_STRING) {
        const char *s = ((char *const *)t->data)[i];
        return s && s[0];
    }
    if (pfvm_dtype_is_int(t->dtype) || t->dtype == PFVM_BOOL)
        return pfvm_tensor_get_i64(t, i) != 0;
    return pfvm_tensor_get_f64(t, i) != 0;
}

/* ---- GatherElements, ScatterElements ------------------------------------------------- */

/* Checks the indices (and updates) against the data: same rank, the
 * indices no longer than the data on the other axes. */
static pfvm_code pfvm__ix_elements_check(pfvm_kctx *k, int *axis)
{
    const pfvm_tensor *X = k->in[0], *I = k->in[1], *U = k->n_in > 2 ? k->in[2] : NULL;
    int a = pfvm__axis(pfvm_node_attr_int(k->node, "axis", 0), X->rank), d;
    if (pfvm_tn_check_inputs(k))
        return pfvm__ix_code(k, PFVM_ERR_INVALID);
    if (a < 0 || I->rank != X->rank || !pfvm_dtype_is_int(I->dtype))
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "axis out of range, or indices of another rank or not integers");
    for (d = 0; d < X->rank; d++)
        if (d != a && I->dims[d] > X->dims[d])
            return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "indices are larger than the data on axis %d", d);
    if (U && (U->rank != I->rank || memcmp(U->dims, I->dims, sizeof(int64_t) * (size_t)I->rank) || U->dtype != X->dtype))
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "updates must have the indices' shape and the data's type");
    *axis = a;
    return PFVM_OK;
}

static pfvm_code pfvm__ix_infer_gather_elements(pfvm_ictx *c)
{
    const pfvm_shape *x = &c->in[0]->type.shape, *i = &c->in[1]->type.shape;
    if (x->rank >= 0 && i->rank >= 0 && x->rank != i->rank)
        return pfvm__fail(c->st, PFVM_ERR_SHAPE, "indices have rank %d, data %d", i->rank, x->rank);
    if (x->rank >= 0 && pfvm__axis(pfvm_node_attr_int(c->node, "axis", 0), x->rank) < 0)
        return pfvm__fail(c->st, PFVM_ERR_INVALID, "axis is out of range for rank %d", x->rank);
    pfvm_ival_set_tensor(c->out[0], c->in[0]->type.dtype, i);
    return PFVM_OK;
}

static pfvm_code pfvm__ix_k_gather_elements(pfvm_kctx *k)
{
    const pfvm_tensor *X = k->in[0], *I = k->in[1];
    int64_t xs[PFVM_MAX_RANK], idx[PFVM_MAX_RANK] = {0}, n = pfvm_tensor_numel(I), i;
    int a, d;
    if (pfvm__ix_elements_check(k, &a) || pfvm_tn_output(k, 0, X->dtype, I->rank, I->dims))
        return pfvm__ix_code(k, PFVM_ERR_SHAPE);
    pfvm__ix_strides(X, xs);
    for (i = 0; i < n; i++, pfvm__ix_next(idx, I->dims, I->rank)) {
        int64_t j = pfvm_tn_index(I, i, X->dims[a]), src = 0;
        if (j < 0)
            return pfvm__ix_bad_index(k, I, i, X->dims[a]);
        for (d = 0; d < X->rank; d++)
            src += (d == a ? j : idx[d]) * xs[d];
        pfvm_tn_copy(k->out[0], i, X, src, 1);
    }
    return PFVM_OK;
}

enum { PFVM__IX_NONE, PFVM__IX_ADD, PFVM__IX_MUL, PFVM__IX_MAX, PFVM__IX_MIN };

/* The `reduction` attribute (opset 16: add, mul; 18: max, min); -1 if invalid. */
static int pfvm__ix_reduction(pfvm_kctx *k)
{
    const char *r = pfvm_node_attr_string(k->node, "reduction", "none");
    int v = !strcmp(r, "none") ? PFVM__IX_NONE
          : !strcmp(r, "add")  ? PFVM__IX_ADD
          : !strcmp(r, "mul")  ? PFVM__IX_MUL
          : !strcmp(r, "max")  ? PFVM__IX_MAX
          : !strcmp(r, "min")  ? PFVM__IX_MIN
                               : -1;
    if (v < 0)
        pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "reduction '%s' is not valid", r);
    else if (v != PFVM__IX_NONE && k->in[0]->dtype == PFVM_STRING)
        pfvm__op_fail(k->st, k->node, PFVM_ERR_UNSUPPORTED, "reduction '%s' on strings", r), v = -1;
    return v;
}

/* Y[at] = Y[at] (reduction) U[ui]: integers exactly (wrapping), floats in
 * double. */
static void pfvm__ix_combine(pfvm_tensor *Y, int64_t at, const pfvm_tensor *U, int64_t ui, int red)
{
    if (red == PFVM__IX_NONE) {
        pfvm_tn_copy(Y, at, U, ui, 1);
    } else if (Y->dtype == PFVM_UINT64) {
        uint64_t a = (uint64_t)pfvm_tensor_get_i64(Y, at), b = (uint64_t)pfvm_tensor_get_i64(U, ui);
        uint64_t r = red == PFVM__IX_ADD ? a + b : red == PFVM__IX_MUL ? a * b : red == PFVM__IX_MAX ? (a > b ? a : b) : (a < b ? a : b);
        ((uint64_t *)Y->data)[at] = r;
    } else if (pfvm_dtype_is_int(Y->dtype) || Y->dtype == PFVM_BOOL) {
        int64_t a = pfvm_tensor_get_i64(Y, at), b = pfvm_tensor_get_i64(U, ui);
        uint64_t r = red == PFVM__IX_ADD ? (uint64_t)a + (uint64_t)b
                   : red == PFVM__IX_MUL ? (uint64_t)a * (uint64_t)b
                   : (uint64_t)(red == PFVM__IX_MAX ? (a > b ? a : b) : (a < b ? a : b));
        pfvm_tn_store_i64(Y, at, r <= (uint64_t)INT64_MAX ? (int64_t)r : -(int64_t)(~r) - 1);
    } else {
        double a = pfvm_tensor_get_f64(Y, at), b = pfvm_tensor_get_f64(U, ui);
        double r = red == PFVM__IX_ADD ? a + b : red == PFVM__IX_MUL ? a * b : red == PFVM__IX_MAX ? (a > b || a != a ? a : b) : (a < b || a != a ? a : b);
        pfvm_red_store(Y, at, r);
    }
}

static pfvm_code pfvm__ix_infer_scatter(pfvm_ictx *c)
{
    const pfvm_shape *x = &c->in[0]->type.shape, *i = &c->in[1]->type.shape, *u = &c->in[2]->type.shape;
    if (!strcmp(c->node->op_type, "ScatterND")) {
        int64_t last;
        if (i->rank == 0)
            return pfvm__fail(c->st, PFVM_ERR_SHAPE, "indices must have rank >= 1");
        if (x->rank >= 0 && i->rank > 0 && pfvm_sym_is_const(i->dims[i->rank - 1], &last) && (last < 1 || last > x->rank))
            return pfvm__fail(c->st, PFVM_ERR_SHAPE, "index tuples of length %lld do not fit rank %d", (long long)last, x->rank);
        /* updates: indices.shape[:-1] + data.shape[last:] */
        if (x->rank >= 0 && i->rank > 0 && u->rank >= 0 && pfvm_sym_is_const(i->dims[i->rank - 1], &last)) {
            int d;
            if (u->rank != i->rank - 1 + x->rank - (int)last)
                return pfvm__fail(c->st, PFVM_ERR_SHAPE, "updates have rank %d, expected %d", u->rank,
                                  i->rank - 1 + x->rank - (int)last);
            for (d = 0; d < u->rank; d++)
                if (pfvm_infer_check_eq(c, u->dims[d], d < i->rank - 1 ? i->dims[d] : x->dims[d - (i->rank - 1) + last],
                                        "updates and indices/data dims"))
                    return c->st ? c->st->code : PFVM_ERR_SHAPE;
        }
    } else {
        const char *r = pfvm_node_attr_string(c->node, "reduction", "none");
        int d;
        if (strcmp(r, "none") && strcmp(r, "add") && strcmp(r, "mul") && strcmp(r, "max") && strcmp(r, "min"))
            return pfvm__fail(c->st, PFVM_ERR_INVALID, "reduction '%s' is not valid", r);
        for (d = 0; i->rank >= 0 && i->rank == u->rank && d < i->rank; d++)
            if (pfvm_infer_check_eq(c, i->dims[d], u->dims[d], "indices and updates dims"))
                return c->st ? c->st->code : PFVM_ERR_SHAPE;
        if ((x->rank >= 0 && i->rank >= 0 && x->rank != i->rank) || (i->rank >= 0 && u->rank >= 0 && i->rank != u->rank))
            return pfvm__fail(c->st, PFVM_ERR_SHAPE, "data, indices and updates must have one rank");
        if (x->rank >= 0 && pfvm__axis(pfvm_node_attr_int(c->node, "axis", 0), x->rank) < 0)
            return pfvm__fail(c->st, PFVM_ERR_INVALID, "axis is out of range for rank %d", x->rank);
    }
    return pfvm_infer_same_as_first(c);
}

static pfvm_code pfvm__ix_k_scatter_elements(pfvm_kctx *k)
{
    const pfvm_tensor *X = k->in[0], *I = k->in[1], *U = k->in[2];
    int64_t xs[PFVM_MAX_RANK], idx[PFVM_MAX_RANK] = {0}, n = pfvm_tensor_numel(I), i;
    int a, d, red;
    if (pfvm__ix_elements_check(k, &a) || (red = pfvm__ix_reduction(k)) < 0)
        return pfvm__ix_code(k, PFVM_ERR_SHAPE);
    for (i = 0; i < n; i++)
        if (pfvm_tn_index(I, i, X->dims[a]) < 0)
            return pfvm__ix_bad_index(k, I, i, X->dims[a]);
    if (pfvm__ix_copy_data(k))
        return pfvm__ix_code(k, PFVM_ERR_NOMEM);
    pfvm__ix_strides(X, xs);
    for (i = 0; i < n; i++, pfvm__ix_next(idx, I->dims, I->rank)) {
        int64_t j = pfvm_tn_index(I, i, X->dims[a]), at = 0;
        for (d = 0; d < X->rank; d++)
            at += (d == a ? j : idx[d]) * xs[d];
        pfvm__ix_combine(k->out[0], at, U, i, red);
    }
    return PFVM_OK;
}

/* ---- GatherND, ScatterND -------------------------------------------------------------- */

static pfvm_code pfvm__ix_infer_gather_nd(pfvm_ictx *c)
{
    const pfvm_shape *x = &c->in[0]->type.shape, *ix = &c->in[1]->type.shape;
    int64_t b = pfvm_node_attr_int(c->node, "batch_dims", 0), last;
    pfvm_shape out;
    int i;
    if (x->rank < 0 || ix->rank < 0)
        return pfvm_infer_unknown(c, 0, c->in[0]->type.dtype, -1);
    if (b < 0 || b >= x->rank || b >= ix->rank)
        return pfvm__fail(c->st, PFVM_ERR_INVALID, "batch_dims %lld must be below both ranks (%d, %d)", (long long)b,
                          x->rank, ix->rank);
    if (!pfvm_sym_is_const(ix->dims[ix->rank - 1], &last))
        return pfvm_infer_unknown(c, 0, c->in[0]->type.dtype, -1);
    if (last < 1 || b + last > x->rank)
        return pfvm__fail(c->st, PFVM_ERR_SHAPE, "index tuples of length %lld do not fit rank %d", (long long)last, x->rank);
    if (ix->rank - 1 + x->rank - b - last > PFVM_MAX_RANK)
        return pfvm__fail(c->st, PFVM_ERR_UNSUPPORTED, "output rank exceeds PFVM_MAX_RANK");
    out.rank = 0;
    for (i = 0; i < ix->rank - 1; i++)
        out.dims[out.rank++] = ix->dims[i];
    for (i = (int)(b + last); i < x->rank; i++)
        out.dims[out.rank++] = x->dims[i];
    pfvm_ival_set_tensor(c->out[0], c->in[0]->type.dtype, &out);
    return PFVM_OK;
}

/* Element offset in X of index tuple t (its first `b` coordinates are the
 * batch); -1 when a coordinate is out of range. */
static int64_t pfvm__ix_tuple(const pfvm_tensor *X, const pfvm_tensor *I, int64_t t, int64_t last, int b, int64_t batch,
                              const int64_t *xs)
{
    int64_t off = b ? batch * xs[b - 1] : 0, q;
    for (q = 0; q < last; q++) {
        int64_t j = pfvm_tn_index(I, t * last + q, X->dims[b + q]);
        if (j < 0)
            return -1;
        off += j * xs[b + q];
    }
    return off;
}

static pfvm_code pfvm__ix_k_gather_nd(pfvm_kctx *k)
{
    const pfvm_tensor *X = k->in[0], *I = k->in[1];
    int64_t b = pfvm_node_attr_int(k->node, "batch_dims", 0), last, xs[PFVM_MAX_RANK], dims[PFVM_MAX_RANK];
    int64_t tuples, inner = 1, per_batch = 1, t;
    int d, r = 0;
    if (pfvm_tn_check_inputs(k))
        return pfvm__ix_code(k, PFVM_ERR_INVALID);
    if (I->rank < 1 || b < 0 || b >= X->rank || b >= I->rank || !pfvm_dtype_is_int(I->dtype))
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "indices must be integers and batch_dims below both ranks");
    last = I->dims[I->rank - 1];
    if (last < 1 || b + last > X->rank || I->rank - 1 + X->rank - b - last > PFVM_MAX_RANK)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "index tuples of length %lld do not fit rank %d",
                             (long long)last, X->rank);
    for (d = 0; d < b; d++)
        if (I->dims[d] != X->dims[d])
            return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "batch dimension %d differs between data and indices", d);
    for (d = 0; d < I->rank - 1; d++)
        dims[r++] = I->dims[d];
    for (d = (int)(b + last); d < X->rank; d++)
        inner *= (dims[r++] = X->dims[d]);
    if (pfvm_tn_output(k, 0, X->dtype, r, dims))
        return pfvm__ix_code(k, PFVM_ERR_NOMEM);
    pfvm__ix_strides(X, xs);
    tuples = pfvm_tensor_numel(I) / last;
    for (d = (int)b; d < I->rank - 1; d++)
        per_batch *= I->dims[d];
    for (t = 0; t < tuples; t++) {
        int64_t off = pfvm__ix_tuple(X, I, t, last, (int)b, per_batch ? t / per_batch : 0, xs);
        if (off < 0)
            return pfvm__op_fail(k->st, k->node, PFVM_ERR_RANGE, "index tuple %lld is out of range", (long long)t);
        pfvm_tn_copy(k->out[0], t * inner, X, off, inner);
    }
    return PFVM_OK;
}

static pfvm_code pfvm__ix_k_scatter_nd(pfvm_kctx *k)
{
    const pfvm_tensor *X = k->in[0], *I = k->in[1], *U = k->in[2];
    int64_t last, xs[PFVM_MAX_RANK], tuples, inner = 1, t, e;
    int d, red;
    if (pfvm_tn_check_inputs(k) || (red = pfvm__ix_reduction(k)) < 0)
        return pfvm__ix_code(k, PFVM_ERR_INVALID);
    if (I->rank < 1 || !pfvm_dtype_is_int(I->dtype) || U->dtype != X->dtype)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "indices must be integers of rank >= 1, updates of the data's type");
    last = I->dims[I->rank - 1];
    if (last < 1 || last > X->rank)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "index tuples of length %lld do not fit rank %d",
                             (long long)last, X->rank);
    /* updates: indices.shape[:-1] + data.shape[last:] */
    if (U->rank != I->rank - 1 + X->rank - (int)last)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "updates have rank %d, expected %d", U->rank,
                             I->rank - 1 + X->rank - (int)last);
    for (d = 0; d < U->rank; d++) {
        int64_t want = d < I->rank - 1 ? I->dims[d] : X->dims[d - (I->rank - 1) + last];
        if (U->dims[d] != want)
            return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "updates dimension %d is %lld, expected %lld", d,
                                 (long long)U->dims[d], (long long)want);
    }
    pfvm__ix_strides(X, xs);
    for (d = (int)last; d < X->rank; d++)
        inner *= X->dims[d];
    tuples = pfvm_tensor_numel(I) / last;
    for (t = 0; t < tuples; t++)
        if (pfvm__ix_tuple(X, I, t, last, 0, 0, xs) < 0)
            return pfvm__op_fail(k->st, k->node, PFVM_ERR_RANGE, "index tuple %lld is out of range", (long long)t);
    if (pfvm__ix_copy_data(k))
        return pfvm__ix_code(k, PFVM_ERR_NOMEM);
    for (t = 0; t < tuples; t++) {
        int64_t off = pfvm__ix_tuple(X, I, t, last, 0, 0, xs);
        for (e = 0; e < inner; e++)
            pfvm__ix_combine(k->out[0], off + e, U, t * inner + e, red);
    }
    return PFVM_OK;
}

/* ---- OneHot, EyeLike ----------------------------------------------------------------------- */

/* OneHot's depth from a one-element numeric tensor; -1 when not valid. */
static int64_t pfvm__ix_depth(const pfvm_tensor *t)
{
    double v;
    if (!t || t->kind != PFVM_KIND_TENSOR || pfvm_tensor_numel(t) != 1 || t->dtype == PFVM_STRING)
        return -1;
    v = pfvm_tensor_get_f64(t, 0);
    return v >= 1 && v < 9.0e15 ? (int64_t)v : -1;
}

static pfvm_code pfvm__ix_infer_onehot(pfvm_ictx *c)
{
    const pfvm_shape *ix = &c->in[0]->type.shape;
    pfvm_dtype dt = c->in[2]->type.dtype;
    int64_t depth = -1;
    int a, i, j;
    pfvm_shape out;
    if (ix->rank < 0 || ix->rank + 1 > PFVM_MAX_RANK)
        return pfvm_infer_unknown(c, 0, dt, -1);
    a = pfvm__axis(pfvm_node_attr_int(c->node, "axis", -1), ix->rank + 1);
    if (a < 0)
        return pfvm__fail(c->st, PFVM_ERR_INVALID, "axis is out of range for rank %d", ix->rank + 1);
    if (c->in[2]->type.shape.rank > 1 ||
        (c->in[2]->type.shape.rank == 1 && pfvm_sym_proven_ne(c->syms, c->in[2]->type.shape.dims[0], pfvm_sym_const(c->syms, 2))))
        return pfvm__fail(c->st, PFVM_ERR_SHAPE, "values must hold two elements (off, on)");
    if (c->in[1]->value) {
        if ((depth = pfvm__ix_depth(c->in[1]->value)) < 0)
            return pfvm__fail(c->st, PFVM_ERR_INVALID, "depth must be one positive number");
    } else if (pfvm_ival_ints(c->in[1], &depth, 1) != 1) {
        depth = -1;
    }
    if (depth < 1)
        return pfvm_infer_unknown(c, 0, dt, ix->rank + 1);
    out.rank = ix->rank + 1;
    for (i = 0, j = 0; i < out.rank; i++)
        out.dims[i] = i == a ? pfvm_sym_const(c->syms, depth) : ix->dims[j++];
    pfvm_ival_set_tensor(c->out[0], dt, &out);
    return PFVM_OK;
}

static pfvm_code pfvm__ix_k_onehot(pfvm_kctx *k)
{
    const pfvm_tensor *I = k->in[0], *V = k->in[2];
    pfvm_tensor *Y;
    int64_t depth = pfvm__ix_depth(k->in[1]), outer = 1, inner = 1, o, j, c, dims[PFVM_MAX_RANK];
    int a = pfvm__axis(pfvm_node_attr_int(k->node, "axis", -1), I->rank + 1), d;
    if (pfvm_tn_check_inputs(k))
        return pfvm__ix_code(k, PFVM_ERR_INVALID);
    if (a < 0 || depth < 1 || pfvm_tensor_numel(V) != 2 || I->rank + 1 > PFVM_MAX_RANK || I->dtype == PFVM_STRING)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "needs an axis in range, a positive depth and two values");
    for (d = 0, j = 0; d <= I->rank; d++)
        dims[d] = d == a ? depth : I->dims[j++];
    if (pfvm_tn_output(k, 0, V->dtype, I->rank + 1, dims))
        return pfvm__ix_code(k, PFVM_ERR_NOMEM);
    Y = k->out[0];
    for (d = 0; d < a; d++)
        outer *= I->dims[d];
    for (d = a; d < I->rank; d++)
        inner *= I->dims[d];
    /* exact comparison with each class, like the reference's comparison
     * with arange(depth): a fractional index selects nothing */
    for (o = 0; o < outer; o++)
        for (c = 0; c < depth; c++)
            for (j = 0; j < inner; j++) {
                double v = pfvm_tensor_get_f64(I, o * inner + j);
                if (v < 0)
                    v += (double)depth;
                pfvm_tn_copy(Y, (o * depth + c) * inner + j, V, v == (double)c ? 1 : 0, 1);
            }
    return PFVM_OK;
}

/* EyeLike's output type: the dtype attribute, else the input's. */
static pfvm_dtype pfvm__ix_eye_dtype(const pfvm_node *n, pfvm_dtype in)
{
    int64_t dt = pfvm_node_attr_int(n, "dtype", in);
    if (dt <= 0 || dt >= PFVM_DTYPE_COUNT || dt == PFVM_STRING || !pfvm_dtype_size((pfvm_dtype)dt))
        return PFVM_UNDEFINED;
    return (pfvm_dtype)dt;
}

static pfvm_code pfvm__ix_infer_eyelike(pfvm_ictx *c)
{
    pfvm_dtype dt = pfvm__ix_eye_dtype(c->node, c->in[0]->type.dtype);
    if (dt == PFVM_UNDEFINED && c->in[0]->type.dtype != PFVM_UNDEFINED)
        return pfvm__fail(c->st, PFVM_ERR_INVALID, "dtype %lld is not a numeric type",
                          (long long)pfvm_node_attr_int(c->node, "dtype", 0));
    if (c->in[0]->type.shape.rank >= 0 && c->in[0]->type.shape.rank != 2)
        return pfvm__fail(c->st, PFVM_ERR_SHAPE, "input must be 2-D, has rank %d", c->in[0]->type.shape.rank);
    pfvm_ival_set_tensor(c->out[0], dt, &c->in[0]->type.shape);
    return PFVM_OK;
}

static pfvm_code pfvm__ix_k_eyelike(pfvm_kctx *k)
{
    const pfvm_tensor *X = k->in[0];
    pfvm_dtype dt = pfvm__ix_eye_dtype(k->node, X->dtype);
    pfvm_tensor *Y;
    int64_t kk = pfvm_node_attr_int(k->node, "k", 0), r;
    if (pfvm_tn_check_inputs(k))
        return pfvm__ix_code(k, PFVM_ERR_INVALID);
    if (X->rank != 2 || dt == PFVM_UNDEFINED)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "needs a 2-D input and a numeric dtype");
    if (pfvm_tn_output(k, 0, dt, 2, X->dims))
        return pfvm__ix_code(k, PFVM_ERR_NOMEM);
    Y = k->out[0];
    memset(Y->data, 0, (size_t)pfvm_tensor_numel(Y) * pfvm_dtype_size(dt));
    for (r = 0; r < Y->dims[0]; r++) {
        /* column r + k, compared without overflowing for any k */
        if (kk >= Y->dims[1] || kk <= -Y->dims[0] || r + kk < 0 || r + kk >= Y->dims[1])
            continue;
        pfvm_tn_store_i64(Y, r * Y->dims[1] + r + kk, 1);
    }
    return PFVM_OK;
}

/* ---- Compress, NonZero: data-dependent sizes ----------------------------------------------- */

/* Largest input whose contents inference counts itself. */
#define PFVM__IX_COUNT_LIMIT 65536

static pfvm_code pfvm__ix_infer_compress(pfvm_ictx *c)
{
    const pfvm_shape *x = &c->in[0]->type.shape;
    const pfvm_attr *ax = pfvm_node_attr(c->node, "axis");
    const pfvm_tensor *cond = c->in[1]->value;
    pfvm_shape out;
    int64_t kept = 0, i, n;
    int a = -1;
    if (c->in[1]->type.shape.rank > 1)
        return pfvm__fail(c->st, PFVM_ERR_SHAPE, "condition must be 1-D");
    if (ax && x->rank >= 0 && (a = pfvm__axis(ax->i, x->rank)) < 0)
        return pfvm__fail(c->st, PFVM_ERR_INVALID, "axis is out of range for rank %d", x->rank);
    if (!cond || (ax && x->rank < 0) || (n = pfvm_tensor_numel(cond)) > PFVM__IX_COUNT_LIMIT || n < 0 ||
        cond->dtype == PFVM_STRING) {
        /* unknown count along the axis; the other dims stay */
        if (pfvm_infer_unknown(c, 0, c->in[0]->type.dtype, ax ? x->rank : 1))
            return c->st ? c->st->code : PFVM_ERR_NOMEM;
        if (ax && x->rank >= 0) {
            out = c->out[0]->type.shape;
            for (i = 0; i < x->rank; i++)
                if (i != a)
                    out.dims[i] = x->dims[i];
            pfvm_ival_set_tensor(c->out[0], c->in[0]->type.dtype, &out);
        }
        return PFVM_OK;
    }
    /* a known condition gives the exact count */
    for (i = 0; i < n; i++)
        kept += pfvm__ix_nonzero(cond, i);
    if (ax)
        out = *x;
    else
        out.rank = 1;
    out.dims[ax ? a : 0] = pfvm_sym_const(c->syms, kept);
    pfvm_ival_set_tensor(c->out[0], c->in[0]->type.dtype, &out);
    return PFVM_OK;
}

static pfvm_code pfvm__ix_k_compress(pfvm_kctx *k)
{
    const pfvm_tensor *X = k->in[0], *C = k->in[1];
    const pfvm_attr *ax = pfvm_node_attr(k->node, "axis");
    int64_t nc = pfvm_tensor_numel(C), kept = 0, i, outer = 1, inner = 1, len, o, at = 0, dims[PFVM_MAX_RANK];
    int a = 0, d, rank = 1;
    if (pfvm_tn_check_inputs(k))
        return pfvm__ix_code(k, PFVM_ERR_INVALID);
    if (C->rank > 1 || C->dtype == PFVM_STRING || (ax && (a = pfvm__axis(ax->i, X->rank)) < 0))
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "needs a 1-D condition and an axis in range");
    if (ax) {
        rank = X->rank;
        memcpy(dims, X->dims, sizeof(int64_t) * (size_t)rank);
        for (d = 0; d < a; d++)
            outer *= X->dims[d];
        for (d = a + 1; d < X->rank; d++)
            inner *= X->dims[d];
        len = X->dims[a];
    } else {
        len = pfvm_tensor_numel(X);
    }
    /* a condition longer than the axis may only add false entries */
    for (i = 0; i < nc; i++)
        if (pfvm__ix_nonzero(C, i)) {
            if (i >= len)
                return pfvm__op_fail(k->st, k->node, PFVM_ERR_RANGE, "condition selects entry %lld of %lld", (long long)i,
                                     (long long)len);
            kept++;
        }
    dims[ax ? a : 0] = kept;
    if (pfvm_tn_output(k, 0, X->dtype, rank, dims))
        return pfvm__ix_code(k, PFVM_ERR_NOMEM);
    for (o = 0; o < outer; o++)
        for (i = 0; i < nc && i < len; i++)
            if (pfvm__ix_nonzero(C, i)) {
                pfvm_tn_copy(k->out[0], at, X, (o * len + i) * inner, inner);
                at += inner;
            }
    return PFVM_OK;
}

static pfvm_code pfvm__ix_infer_nonzero(pfvm_ictx *c)
{
    const pfvm_shape *x = &c->in[0]->type.shape;
    const pfvm_tensor *v = c->in[0]->value;
    int64_t n, i, cnt = 0;
    /* [rank, count]: a known input is counted, else the count is a named
     * unknown (`NonZero_3_o0_d1`) the run fills in */
    if (pfvm_infer_unknown(c, 0, PFVM_INT64, 2))
        return c->st ? c->st->code : PFVM_ERR_NOMEM;
    if (x->rank >= 0)
        c->out[0]->type.shape.dims[0] = pfvm_sym_const(c->syms, x->rank);
    if (v && v->kind == PFVM_KIND_TENSOR && (n = pfvm_tensor_numel(v)) >= 0 && n <= PFVM__IX_COUNT_LIMIT) {
        for (i = 0; i < n; i++)
            cnt += pfvm__ix_nonzero(v, i);
        c->out[0]->type.shape.dims[1] = pfvm_sym_const(c->syms, cnt);
    }
    if (!c->out[0]->type.shape.dims[0] || !c->out[0]->type.shape.dims[1])
        return pfvm__fail(c->st, PFVM_ERR_NOMEM, "out of memory");
    return PFVM_OK;
}

static pfvm_code pfvm__ix_k_nonzero(pfvm_kctx *k)
{
    const pfvm_tensor *X = k->in[0];
    int64_t n = pfvm_tensor_numel(X), cnt = 0, i, at = 0, dims[2], idx[PFVM_MAX_RANK] = {0};
    int d;
    if (pfvm_tn_check_inputs(k))
        return pfvm__ix_code(k, PFVM_ERR_INVALID);
    for (i = 0; i < n; i++)
        cnt += pfvm__ix_nonzero(X, i);
    dims[0] = X->rank;
    dims[1] = cnt;
    if (pfvm_tn_output(k, 0, PFVM_INT64, 2, dims))
        return pfvm__ix_code(k, PFVM_ERR_NOMEM);
    for (i = 0; i < n; i++, pfvm__ix_next(idx, X->dims, X->rank)) {
        if (!pfvm__ix_nonzero(X, i))
            continue;
        for (d = 0; d < X->rank; d++)
            ((int64_t *)k->out[0]->data)[d * cnt + at] = idx[d];
        at++;
    }
    return PFVM_OK;
}

/* ---- DepthToSpace, SpaceToDepth ------------------------------------------------------------- */

static int pfvm__ix_to_space(const pfvm_node *n)
{
    return !strcmp(n->op_type, "DepthToSpace");
}

static pfvm_code pfvm__ix_infer_d2s(pfvm_ictx *c)
{
    const pfvm_shape *x = &c->in[0]->type.shape;
    int64_t b = pfvm_node_attr_int(c->node, "blocksize", 0), v;
    const char *mode = pfvm_node_attr_string(c->node, "mode", "DCR");
    pfvm_shape out;
    int d;
    if (b < 1 || b > ((int64_t)1 << 20) || (strcmp(mode, "DCR") && strcmp(mode, "CRD")))
        return pfvm__fail(c->st, PFVM_ERR_INVALID, "needs a positive blocksize and mode DCR or CRD");
    if (x->rank < 0)
        return pfvm_infer_unknown(c, 0, c->in[0]->type.dtype, 4);
    if (x->rank != 4)
        return pfvm__fail(c->st, PFVM_ERR_SHAPE, "needs a 4-D input, has rank %d", x->rank);
    out = *x;
    if (pfvm__ix_to_space(c->node)) {
        if (pfvm_sym_is_const(x->dims[1], &v) && v % (b * b))
            return pfvm__fail(c->st, PFVM_ERR_SHAPE, "%lld channels do not divide by blocksize^2", (long long)v);
        out.dims[1] = pfvm_sym_div(c->syms, x->dims[1], pfvm_sym_const(c->syms, b * b));
        out.dims[2] = pfvm_sym_muli(c->syms, x->dims[2], b);
        out.dims[3] = pfvm_sym_muli(c->syms, x->dims[3], b);
    } else {
        for (d = 2; d < 4; d++)
            if (pfvm_sym_is_const(x->dims[d], &v) && v % b)
                return pfvm__fail(c->st, PFVM_ERR_SHAPE, "dimension %d (%lld) does not divide by blocksize", d, (long long)v);
        out.dims[1] = pfvm_sym_muli(c->syms, x->dims[1], b * b);
        out.dims[2] = pfvm_sym_div(c->syms, x->dims[2], pfvm_sym_const(c->syms, b));
        out.dims[3] = pfvm_sym_div(c->syms, x->dims[3], pfvm_sym_const(c->syms, b));
    }
    for (d = 1; d < 4; d++)
        if (!out.dims[d])
            return pfvm__fail(c->st, PFVM_ERR_RANGE, "dimension %d overflows", d);
    pfvm_ival_set_tensor(c->out[0], c->in[0]->type.dtype, &out);
    return PFVM_OK;
}

/* Both are a 6-D transpose (the reference's reshape-transpose-reshape),
 * done as one walk over the input. */
static pfvm_code pfvm__ix_k_d2s(pfvm_kctx *k)
{
    const pfvm_tensor *X = k->in[0];
    int64_t b = pfvm_node_attr_int(k->node, "blocksize", 0), N, C, H, W, dims[4];
    int crd = !strcmp(pfvm_node_attr_string(k->node, "mode", "DCR"), "CRD");
    pfvm_tn_walk w;
    if (pfvm_tn_check_inputs(k))
        return pfvm__ix_code(k, PFVM_ERR_INVALID);
    if (b < 1 || b > ((int64_t)1 << 20) || X->rank != 4)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "needs a 4-D input and a positive blocksize");
    N = X->dims[0];
    C = X->dims[1];
    H = X->dims[2];
    W = X->dims[3];
    memset(&w, 0, sizeof w);
    w.rank = 6;
    if (pfvm__ix_to_space(k->node)) {
        int64_t c = C / (b * b);
        if (C % (b * b))
            return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "%lld channels do not divide by blocksize^2", (long long)C);
        /* output order [N, c, H, b1, W, b2]; DCR reads x as [N, b1, b2, c, H, W], CRD as [N, c, b1, b2, H, W] */
        w.dims[0] = N, w.stride[0] = C * H * W;
        w.dims[1] = c, w.stride[1] = crd ? b * b * H * W : H * W;
        w.dims[2] = H, w.stride[2] = W;
        w.dims[3] = b, w.stride[3] = crd ? b * H * W : b * c * H * W;
        w.dims[4] = W, w.stride[4] = 1;
        w.dims[5] = b, w.stride[5] = crd ? H * W : c * H * W;
        dims[0] = N, dims[1] = c, dims[2] = H * b, dims[3] = W * b;
    } else {
        int64_t h = H / b, wd = W / b;
        if (H % b || W % b)
            return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "%lldx%lld does not divide by blocksize", (long long)H,
                                 (long long)W);
        /* x as [N, C, h, b1, w, b2]; output order [N, b1, b2, C, h, w] */
        w.dims[0] = N, w.stride[0] = C * H * W;
        w.dims[1] = b, w.stride[1] = W;
        w.dims[2] = b, w.stride[2] = 1;
        w.dims[3] = C, w.stride[3] = H * W;
        w.dims[4] = h, w.stride[4] = b * W;
        w.dims[5] = wd, w.stride[5] = b;
        dims[0] = N, dims[1] = C * b * b, dims[2] = h, dims[3] = wd;
    }
    if (pfvm_tn_output(k, 0, X->dtype, 4, dims))
        return pfvm__ix_code(k, PFVM_ERR_NOMEM);
    return pfvm_tn_copy_walk(k, k->out[0], 0, X, &w);
}

/* ---- ReverseSequence --------------------------------------------------------------------------- */

static pfvm_code pfvm__ix_revseq_axes(const pfvm_node *n, pfvm_status *st, int *ba, int *ta)
{
    int64_t b = pfvm_node_attr_int(n, "batch_axis", 1), t = pfvm_node_attr_int(n, "time_axis", 0);
    if ((b != 0 && b != 1) || (t != 0 && t != 1) || b == t)
        return pfvm__fail(st, PFVM_ERR_INVALID, "batch_axis and time_axis must be 0 and 1 in some order");
    *ba = (int)b;
    *ta = (int)t;
    return PFVM_OK;
}

static pfvm_code pfvm__ix_infer_revseq(pfvm_ictx *c)
{
    int ba, ta;
    if (pfvm__ix_revseq_axes(c->node, c->st, &ba, &ta))
        return c->st ? c->st->code : PFVM_ERR_INVALID;
    if (c->in[0]->type.shape.rank >= 0 && c->in[0]->type.shape.rank < 2)
        return pfvm__fail(c->st, PFVM_ERR_SHAPE, "input must have rank >= 2");
    if (c->in[1]->type.shape.rank >= 0 && c->in[1]->type.shape.rank != 1)
        return pfvm__fail(c->st, PFVM_ERR_SHAPE, "sequence_lens must be 1-D");
    if (c->in[0]->type.shape.rank > ba && c->in[0]->type.shape.rank > ta && c->in[1]->type.shape.rank == 1 &&
        pfvm_infer_check_eq(c, c->in[1]->type.shape.dims[0], c->in[0]->type.shape.dims[ba], "sequence_lens length and batch"))
        return c->st ? c->st->code : PFVM_ERR_SHAPE;
    return pfvm_infer_same_as_first(c);
}

static pfvm_code pfvm__ix_k_revseq(pfvm_kctx *k)
{
    const pfvm_tensor *X = k->in[0], *L = k->in[1];
    int64_t xs[PFVM_MAX_RANK], idx[PFVM_MAX_RANK] = {0}, n = pfvm_tensor_numel(X), i;
    int ba, ta, d;
    if (pfvm_tn_check_inputs(k) || pfvm__ix_revseq_axes(k->node, k->st, &ba, &ta))
        return pfvm__ix_code(k, PFVM_ERR_INVALID);
    if (X->rank < 2 || L->rank != 1 || L->dims[0] != X->dims[ba] || !pfvm_dtype_is_int(L->dtype))
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "sequence_lens must hold one integer per batch entry");
    for (i = 0; i < L->dims[0]; i++)
        if (pfvm_tensor_get_i64(L, i) < 0 || pfvm_tensor_get_i64(L, i) > X->dims[ta])
            return pfvm__op_fail(k->st, k->node, PFVM_ERR_RANGE, "sequence length %lld is out of range",
                                 (long long)pfvm_tensor_get_i64(L, i));
    if (pfvm_tn_output(k, 0, X->dtype, X->rank, X->dims))
        return pfvm__ix_code(k, PFVM_ERR_NOMEM);
    pfvm__ix_strides(X, xs);
    for (i = 0; i < n; i++, pfvm__ix_next(idx, X->dims, X->rank)) {
        int64_t len = pfvm_tensor_get_i64(L, idx[ba]), t = idx[ta], src = 0;
        for (d = 0; d < X->rank; d++)
            src += (d == ta && t < len ? len - 1 - t : idx[d]) * xs[d];
        pfvm_tn_copy(k->out[0], i, X, src, 1);
    }
    return PFVM_OK;
}

/* ---- the table ----------------------------------------------------------------------------------- */

static const pfvm_attr_spec pfvm__ix_a_axis[] = {{"axis", PFVM_ATTR_INT, 0}, {NULL, PFVM_ATTR_UNDEFINED, 0}};
static const pfvm_attr_spec pfvm__ix_a_scatter[] = {{"axis", PFVM_ATTR_INT, 0}, {"reduction", PFVM_ATTR_STRING, 0},
                                                    {NULL, PFVM_ATTR_UNDEFINED, 0}};
static const pfvm_attr_spec pfvm__ix_a_gather_nd[] = {{"batch_dims", PFVM_ATTR_INT, 0}, {NULL, PFVM_ATTR_UNDEFINED, 0}};
static const pfvm_attr_spec pfvm__ix_a_eyelike[] = {{"dtype", PFVM_ATTR_INT, 0}, {"k", PFVM_ATTR_INT, 0},
                                                    {NULL, PFVM_ATTR_UNDEFINED, 0}};
static const pfvm_attr_spec pfvm__ix_a_d2s[] = {{"blocksize", PFVM_ATTR_INT, 1}, {"mode", PFVM_ATTR_STRING, 0},
                                                {NULL, PFVM_ATTR_UNDEFINED, 0}};
static const pfvm_attr_spec pfvm__ix_a_revseq[] = {{"batch_axis", PFVM_ATTR_INT, 0}, {"time_axis", PFVM_ATTR_INT, 0},
                                                   {NULL, PFVM_ATTR_UNDEFINED, 0}};

/* ---- gradients ----------------------------------------------------------------------------- */

/* GatherElements: the gradient added back where each element came from
 * (ScatterElements with reduction add, opset 16); before that a one-hot
 * of the indices along a new axis, when the indices cover the data's
 * other axes (proven equal shapes). */
static pfvm_code pfvm__ix_g_gather_elements(pfvm_grad_ctx *g, const pfvm_node *n)
{
    pfvm_value *gy = pfvm_grad_out(g, 0), *x = n->inputs[0], *idx = n->inputs[1], *in[3];
    const pfvm_type *tx, *ti;
    pfvm_node *nd;
    int r, a, d;
    if (!gy)
        return PFVM_OK;
    tx = pfvm_grad_type(g, x);
    ti = pfvm_grad_type(g, idx);
    r = tx->shape.rank;
    if (r < 1 || (a = pfvm__axis(pfvm_node_attr_int(n, "axis", 0), r)) < 0)
        return pfvm_grad_fail(g, "axis out of range");
    if (g->opset >= 16) {
        in[0] = pfvm_grad_zeros_like(g, x);
        in[1] = idx;
        in[2] = gy;
        nd = pfvm_grad_node(g, "ScatterElements", in, 3, 1);
        if (!nd || pfvm_node_set_attr_int(nd, "axis", a, g->st) || pfvm_node_set_attr_string(nd, "reduction", "add", g->st))
            return g->st->code;
        return pfvm_grad_add(g, x, nd->outputs[0]);
    }
    for (d = 0; d < r; d++)
        if (d != a && (ti->shape.rank != r || !pfvm_sym_proven_eq(ti->shape.dims[d], tx->shape.dims[d])))
            return pfvm_grad_fail(g, "indices smaller than the data need opset 16 (ScatterElements with reduction)");
    {
        /* onehot [.., J, V, ..] (V after the axis) times gY, summed over J */
        int64_t v01[2] = {0, 1}, two = 2, a0 = a, a1 = a + 1, z = 0, ax1 = a + 1;
        pfvm_value *oh;
        in[0] = idx;
        in[1] = pfvm_grad_slice(g, pfvm_grad_shape(g, x), &a0, &a1, &z, 1);
        in[2] = pfvm_grad_cast(g, pfvm_grad_tensor(g, PFVM_INT64, 1, &two, v01), pfvm_grad_dtype(g, x));
        nd = pfvm_grad_node(g, "OneHot", in, 3, 1);
        if (!nd || pfvm_node_set_attr_int(nd, "axis", a + 1, g->st))
            return g->st->code;
        oh = pfvm_grad_op2(g, "Mul", nd->outputs[0], pfvm_grad_unsqueeze(g, gy, &ax1, 1));
        return pfvm_grad_add(g, x, pfvm_grad_reduce(g, "ReduceSum", oh, &a0, 1, 0));
    }
}

/* ScatterElements / ScatterND without a reduction: the data's gradient is
 * dY with the overwritten places zeroed, the updates' is dY gathered at
 * the indices; with reduction add, the data's is dY itself. */
static pfvm_code pfvm__ix_g_scatter(pfvm_grad_ctx *g, const pfvm_node *n, int nd_form)
{
    pfvm_value *gy = pfvm_grad_out(g, 0), *x = n->inputs[0], *idx = n->inputs[1], *u = n->inputs[2], *in[3];
    const char *red = pfvm_node_attr_string(n, "reduction", "none");
    int64_t axis = pfvm_node_attr_int(n, "axis", 0);
    pfvm_node *nd;
    if (!gy)
        return PFVM_OK;
    if (strcmp(red, "none") && strcmp(red, "add"))
        return pfvm_grad_fail(g, "reduction '%s'", red);
    if (pfvm_grad_needed(g, x)) {
        pfvm_value *dx = gy;
        if (!strcmp(red, "none")) {
            in[0] = gy;
            in[1] = idx;
            in[2] = pfvm_grad_zeros_like(g, u);
            nd = pfvm_grad_node(g, nd_form ? "ScatterND" : "ScatterElements", in, 3, 1);
            if (!nd || (!nd_form && pfvm_node_set_attr_int(nd, "axis", axis, g->st)))
                return g->st->code;
            dx = nd->outputs[0];
        }
        if (pfvm_grad_add(g, x, dx))
            return g->st->code;
    }
    if (pfvm_grad_needed(g, u)) {
        in[0] = gy;
        in[1] = idx;
        nd = pfvm_grad_node(g, nd_form ? "GatherND" : "GatherElements", in, 2, 1);
        if (!nd || (!nd_form && pfvm_node_set_attr_int(nd, "axis", axis, g->st)))
            return g->st->code;
        return pfvm_grad_add(g, u, nd->outputs[0]);
    }
    return PFVM_OK;
}

static pfvm_code pfvm__ix_g_scatter_elements(pfvm_grad_ctx *g, const pfvm_node *n)
{
    return pfvm__ix_g_scatter(g, n, 0);
}

static pfvm_code pfvm__ix_g_scatter_nd(pfvm_grad_ctx *g, const pfvm_node *n)
{
    return pfvm__ix_g_scatter(g, n, 1);
}

/* GatherND (batch_dims 0): scattered back with ScatterND's reduction add. */
static pfvm_code pfvm__ix_g_gather_nd(pfvm_grad_ctx *g, const pfvm_node *n)
{
    pfvm_value *gy = pfvm_grad_out(g, 0), *in[3];
    pfvm_node *nd;
    if (!gy)
        return PFVM_OK;
    if (pfvm_node_attr_int(n, "batch_dims", 0))
        return pfvm_grad_fail(g, "batch_dims");
    if (g->opset < 16)
        return pfvm_grad_fail(g, "needs opset 16 (ScatterND with reduction)");
    in[0] = pfvm_grad_zeros_like(g, n->inputs[0]);
    in[1] = n->inputs[1];
    in[2] = gy;
    nd = pfvm_grad_node(g, "ScatterND", in, 3, 1);
    if (!nd || pfvm_node_set_attr_string(nd, "reduction", "add", g->st))
        return g->st->code;
    return pfvm_grad_add(g, n->inputs[0], nd->outputs[0]);
}

/* DepthToSpace and SpaceToDepth are a reshape, a 6-D transpose and a
 * reshape: the gradient undoes them in reverse (needs C, H, W known). */
static pfvm_code pfvm__ix_g_d2s(pfvm_grad_ctx *g, const pfvm_node *n)
{
    static const int64_t inv_dcr[6] = {0, 3, 5, 1, 2, 4}, inv_crd[6] = {0, 1, 3, 5, 2, 4}, inv_s2d[6] = {0, 3, 4, 1, 5, 2};
    pfvm_value *gy = pfvm_grad_out(g, 0), *x = n->inputs[0];
    const pfvm_type *ty;
    int64_t b = pfvm_node_attr_int(n, "blocksize", 0), yd[4], shape[6];
    int crd = !strcmp(pfvm_node_attr_string(n, "mode", "DCR"), "CRD"), to_space = pfvm__ix_to_space(n), i;
    if (!gy)
        return PFVM_OK;
    ty = pfvm_grad_type(g, gy);
    if (ty->shape.rank != 4 || b < 1)
        return pfvm_grad_fail(g, "needs a 4-D input and a positive blocksize");
    for (i = 1; i < 4; i++)
        if (!pfvm_sym_is_const(ty->shape.dims[i], &yd[i]))
            return pfvm_grad_fail(g, "needs C, H and W known");
    if (to_space) {
        /* gY [N, c, H*b, W*b] as [N, c, H, b, W, b] */
        shape[0] = 0, shape[1] = yd[1], shape[2] = yd[2] / b, shape[3] = b, shape[4] = yd[3] / b, shape[5] = b;
    } else {
        /* gY [N, C*b*b, h, w] as [N, b, b, C, h, w] */
        shape[0] = 0, shape[1] = b, shape[2] = b, shape[3] = yd[1] / (b * b), shape[4] = yd[2], shape[5] = yd[3];
    }
    gy = pfvm_grad_op2(g, "Reshape", gy, pfvm_grad_ints(g, shape, 6));
    gy = pfvm_grad_transpose(g, gy, to_space ? (crd ? inv_crd : inv_dcr) : inv_s2d, 6);
    return pfvm_grad_add(g, x, pfvm_grad_reshape_like(g, gy, x));
}

PFVM_INTERNAL const pfvm_op_def pfvm__ops_indexing[] = {
    {"GatherElements", "", 11, 0, 2, 2, 1, 1, pfvm__ix_infer_gather_elements, pfvm__ix_k_gather_elements, NULL, PFVM_FUSE_INJECTIVE, "any", pfvm__ix_a_axis, 0, NULL, pfvm__ix_g_gather_elements, NULL, NULL, NULL, NULL, NULL, NULL},
    {"ScatterElements", "", 11, 0, 3, 3, 1, 1, pfvm__ix_infer_scatter, pfvm__ix_k_scatter_elements, NULL, PFVM_FUSE_OPAQUE, "any (reductions: numeric)", pfvm__ix_a_scatter, PFVM_OP_IN_PLACE, NULL, pfvm__ix_g_scatter_elements, NULL, NULL, NULL, NULL, NULL, NULL},
    {"Scatter", "", 9, 10, 3, 3, 1, 1, pfvm__ix_infer_scatter, pfvm__ix_k_scatter_elements, NULL, PFVM_FUSE_OPAQUE, "any", pfvm__ix_a_axis, PFVM_OP_IN_PLACE, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
    {"GatherND", "", 11, 0, 2, 2, 1, 1, pfvm__ix_infer_gather_nd, pfvm__ix_k_gather_nd, NULL, PFVM_FUSE_INJECTIVE, "any", pfvm__ix_a_gather_nd, 0, NULL, pfvm__ix_g_gather_nd, NULL, NULL, NULL, NULL, NULL, NULL},
    {"ScatterND", "", 11, 0, 3, 3, 1, 1, pfvm__ix_infer_scatter, pfvm__ix_k_scatter_nd, NULL, PFVM_FUSE_OPAQUE, "any (reductions: numeric)", pfvm__ix_a_scatter, PFVM_OP_IN_PLACE, NULL, pfvm__ix_g_scatter_nd, NULL, NULL, NULL, NULL, NULL, NULL},
    {"OneHot", "", 9, 0, 3, 3, 1, 1, pfvm__ix_infer_onehot, pfvm__ix_k_onehot, NULL, PFVM_FUSE_OPAQUE, "any", pfvm__ix_a_axis, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
    {"EyeLike", "", 9, 0, 1, 1, 1, 1, pfvm__ix_infer_eyelike, pfvm__ix_k_eyelike, NULL, PFVM_FUSE_OPAQUE, "numeric,bool", pfvm__ix_a_eyelike, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
    {"Compress", "", 9, 0, 2, 2, 1, 1, pfvm__ix_infer_compress, pfvm__ix_k_compress, NULL, PFVM_FUSE_OPAQUE, "any", pfvm__ix_a_axis, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
    {"NonZero", "", 9, 0, 1, 1, 1, 1, pfvm__ix_infer_nonzero, pfvm__ix_k_nonzero, NULL, PFVM_FUSE_OPAQUE, "any", NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
    {"DepthToSpace", "", 1, 0, 1, 1, 1, 1, pfvm__ix_infer_d2s, pfvm__ix_k_d2s, NULL, PFVM_FUSE_INJECTIVE, "any", pfvm__ix_a_d2s, 0, NULL, pfvm__ix_g_d2s, NULL, NULL, NULL, NULL, NULL, NULL},
    {"SpaceToDepth", "", 1, 0, 1, 1, 1, 1, pfvm__ix_infer_d2s, pfvm__ix_k_d2s, NULL, PFVM_FUSE_INJECTIVE, "any", pfvm__ix_a_d2s, 0, NULL, pfvm__ix_g_d2s, NULL, NULL, NULL, NULL, NULL, NULL},
    {"ReverseSequence", "", 10, 0, 2, 2, 1, 1, pfvm__ix_infer_revseq, pfvm__ix_k_revseq, NULL, PFVM_FUSE_INJECTIVE, "any", pfvm__ix_a_revseq, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
    {NULL, NULL, 0, 0, 0, 0, 0, 0, NULL, NULL, NULL, PFVM_FUSE_OPAQUE, NULL, NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL}
};
