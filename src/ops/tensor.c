/* ops/tensor: shape manipulation and data movement — Identity, Dropout,
 * Shape, Size, Constant, ConstantOfShape, Reshape, Flatten, Squeeze,
 * Unsqueeze, Transpose, Concat, Split, Slice, Gather, Expand, Tile, Pad,
 * Range, Trilu. (Element-level gathers and scatters are ops/indexing.c.)
 *
 * Kernels move element bytes without looking at the element type; string
 * tensors duplicate their strings. Every strided movement is one walk of
 * the shared engine (pfvm_tn_copy_walk), which checks that it stays inside
 * the source before it reads anything.
 *
 * Inference is symbolic: dims are pfvm_sym expressions and every output
 * dim is built with pfvm_sym_* so that the same function serves analysis
 * (named dims) and planning (constant dims). Small integer tensors carry
 * their contents as symbolic vectors (`sym`), so Shape -> Gather ->
 * Unsqueeze -> Concat -> Reshape chains resolve before anything runs. */
#include "ops_common.h"

#include <math.h>
#include <stdlib.h>

#define PFVM__TN_MAXV 64 /* longest integer vector read from an input (shapes, axes, pads) */

/* ---- element copies and kernel helpers ---------------------------------------------- */

PFVM_INTERNAL void pfvm_tn_copy(pfvm_tensor *dst, int64_t di, const pfvm_tensor *src, int64_t si, int64_t n)
{
    size_t es = pfvm_dtype_size(src->dtype);
    int64_t i;
    if (n <= 0)
        return;
    if (src->dtype == PFVM_STRING) {
        char *const *s = (char *const *)src->data + si;
        char **d = (char **)dst->data + di;
        for (i = 0; i < n; i++) {
            char *c = pfvm__strdup(s[i] ? s[i] : "");
            pfvm__free(d[i]);
            d[i] = c;
        }
        return;
    }
    memmove((char *)dst->data + (size_t)di * es, (const char *)src->data + (size_t)si * es, (size_t)n * es);
}

PFVM_INTERNAL pfvm_code pfvm_tn_output(pfvm_kctx *k, int i, pfvm_dtype dtype, int rank, const int64_t *dims)
{
    pfvm_tensor *t = i >= 0 && i < k->n_out ? k->out[i] : NULL;
    if (!t)
        return PFVM_OK;
    if (t->data && t->kind == PFVM_KIND_TENSOR && t->dtype == dtype && t->rank == rank &&
        (rank == 0 || !memcmp(t->dims, dims, sizeof(int64_t) * (size_t)rank)))
        return PFVM_OK;
    return pfvm_kctx_output(k, i, dtype, rank, dims);
}

PFVM_INTERNAL pfvm_code pfvm_tn_check_inputs(pfvm_kctx *k)
{
    int j;
    for (j = 0; j < k->n_in; j++) {
        const pfvm_tensor *t = k->in[j];
        int64_t n;
        if (!t)
            continue;
        if (t->kind != PFVM_KIND_TENSOR)
            return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "input %d is not a tensor", j);
        n = pfvm_tensor_numel(t);
        if (n < 0 || (n > 0 && (!t->data || !pfvm_dtype_size(t->dtype))))
            return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "input %d has no data for its %lld elements", j,
                                 (long long)n);
    }
    return PFVM_OK;
}

PFVM_INTERNAL int64_t pfvm_tn_index(const pfvm_tensor *t, int64_t i, int64_t dim)
{
    int64_t v = pfvm_tensor_get_i64(t, i);
    if (v < 0 && v >= -dim)
        v += dim;
    return v >= 0 && v < dim ? v : -1;
}

PFVM_INTERNAL void pfvm_tn_store_i64(pfvm_tensor *t, int64_t i, int64_t v)
{
    void *d = t->data;
    uint64_t u = (uint64_t)v;
    switch (t->dtype) {
    case PFVM_INT64: ((int64_t *)d)[i] = v; break;
    case PFVM_UINT64: ((uint64_t *)d)[i] = u; break;
    case PFVM_INT32: case PFVM_UINT32: {
        uint32_t w = (uint32_t)u;
        memcpy((uint32_t *)d + i, &w, 4);
        break;
    }
    case PFVM_INT16: case PFVM_UINT16: {
        uint16_t w = (uint16_t)u;
        memcpy((uint16_t *)d + i, &w, 2);
        break;
    }
    case PFVM_INT8: case PFVM_UINT8: ((uint8_t *)d)[i] = (uint8_t)u; break;
    case PFVM_BOOL: ((uint8_t *)d)[i] = v != 0; break;
    default: pfvm_red_store(t, i, (double)v); break;
    }
}

/* Row-major strides of concrete dims. */
static void pfvm__tn_strides(const int64_t *dims, int rank, int64_t *st)
{
    int d;
    int64_t s = 1;
    for (d = rank - 1; d >= 0; d--) {
        st[d] = s;
        s *= dims[d];
    }
}

/* Contents of a run-time integer tensor (shapes, axes, pads): the count, or
 * -1 when it is not an integer tensor or has more than cap entries. */
static int pfvm__tn_kints(const pfvm_tensor *t, int64_t *out, int cap)
{
    int64_t i, n;
    if (!t || t->kind != PFVM_KIND_TENSOR || !pfvm_dtype_is_int(t->dtype))
        return -1;
    n = pfvm_tensor_numel(t);
    if (n < 0 || n > cap)
        return -1;
    for (i = 0; i < n; i++)
        out[i] = pfvm_tensor_get_i64(t, i);
    return (int)n;
}

static pfvm_code pfvm__tn_code(pfvm_kctx *k, pfvm_code fallback)
{
    return k->st && k->st->code ? k->st->code : fallback;
}

/* ---- the strided walk ------------------------------------------------------------------ */

/* 1 when every element the walk reads lies in [0, numel). */
static int pfvm__tn_walk_fits(const pfvm_tn_walk *w, int64_t numel)
{
    int64_t lo = w->off, hi = w->off, span;
    int d;
    for (d = 0; d < w->rank; d++)
        if (w->dims[d] <= 0)
            return w->dims[d] == 0; /* an empty box reads nothing */
    for (d = 0; d < w->rank; d++) {
        if (!pfvm__mul_i64(w->dims[d] - 1, w->stride[d], &span))
            return 0;
        if (!pfvm__add_i64(span < 0 ? lo : hi, span, span < 0 ? &lo : &hi))
            return 0;
    }
    return lo >= 0 && hi < numel;
}

/* Drops unit dims and merges neighbours that are contiguous in the source,
 * so that the innermost run is as long as the layout allows. */
static void pfvm__tn_walk_simplify(pfvm_tn_walk *w)
{
    int d, r = 0;
    for (d = 0; d < w->rank; d++) {
        if (w->dims[d] == 1)
            continue;
        if (r > 0 && w->stride[r - 1] == w->stride[d] * w->dims[d]) {
            w->dims[r - 1] *= w->dims[d];
            w->stride[r - 1] = w->stride[d];
            continue;
        }
        w->dims[r] = w->dims[d];
        w->stride[r] = w->stride[d];
        r++;
    }
    w->rank = r;
}

/* n elements src[si + e*step] -> dst[di + e]. Fixed-size memcpy compiles to
 * plain loads and stores without aliasing trouble. */
static void pfvm__tn_copy_run(pfvm_tensor *dst, int64_t di, const pfvm_tensor *src, int64_t si, int64_t n, int64_t step)
{
    size_t es = pfvm_dtype_size(src->dtype);
    char *d = (char *)dst->data + (size_t)di * es;
    const char *s = (const char *)src->data + (ptrdiff_t)si * (ptrdiff_t)es;
    int64_t e;
    ptrdiff_t bstep = (ptrdiff_t)step * (ptrdiff_t)es;
    if (src->dtype == PFVM_STRING) {
        for (e = 0; e < n; e++)
            pfvm_tn_copy(dst, di + e, src, si + e * step, 1);
        return;
    }
    if (step == 1) {
        memcpy(d, s, (size_t)n * es);
        return;
    }
    switch (es) {
    case 1: for (e = 0; e < n; e++, s += bstep) d[e] = *s; break;
    case 2: for (e = 0; e < n; e++, s += bstep) memcpy(d + e * 2, s, 2); break;
    case 4: for (e = 0; e < n; e++, s += bstep) memcpy(d + e * 4, s, 4); break;
    case 8: for (e = 0; e < n; e++, s += bstep) memcpy(d + e * 8, s, 8); break;
    default: for (e = 0; e < n; e++, s += bstep) memcpy(d + (size_t)e * es, s, es); break;
    }
}

#ifdef PFVM_NO_THREADS
#define pfvm__tn_walk_split(k, dst, o, src, w, count) ((void)(k), 0)
#else
/* Copy walks (Transpose, Slice, SpaceToDepth, ...) cut over the threads
 * from this many elements: part i copies the outermost dim's indices
 * [dims0*i/parts, dims0*(i+1)/parts), the rest of the walk whole. */
#define PFVM__TN_WALK_PAR_MIN 32768
typedef struct pfvm__tn_wpar {
    pfvm_tensor *dst;
    const pfvm_tensor *src;
    const pfvm_tn_walk *w;
    int64_t o, inner; /* where the copy starts in dst; elements per index of the outermost dim */
    int parts;
} pfvm__tn_wpar;

static void pfvm__tn_walk_part(void *ctx, int i)
{
    const pfvm__tn_wpar *a = (const pfvm__tn_wpar *)ctx;
    const pfvm_tn_walk *w = a->w;
    int64_t i0 = w->dims[0] * i / a->parts, i1 = w->dims[0] * (i + 1) / a->parts, idx[PFVM_TN_WALK_MAX] = {0};
    int64_t o = a->o + i0 * a->inner, so = w->off + i0 * w->stride[0], n;
    int r = w->rank, d;
    if (i0 >= i1)
        return;
    if (r == 1) { /* one run: its share */
        pfvm__tn_copy_run(a->dst, o, a->src, so, i1 - i0, w->stride[0]);
        return;
    }
    for (n = i0; n < i1;) { /* the rows of indices i0..i1 of dim 0, as pfvm_tn_copy_walk walks them */
        pfvm__tn_copy_run(a->dst, o, a->src, so, w->dims[r - 1], w->stride[r - 1]);
        o += w->dims[r - 1];
        for (d = r - 2; d >= 0; d--) {
            so += w->stride[d];
            if (d == 0 || ++idx[d] < w->dims[d])
                break;
            so -= w->stride[d] * w->dims[d];
            idx[d] = 0;
        }
        if (d <= 0)
            n++;
    }
}

/* 1 when the copy ran cut over k's threads, 0 when the caller runs it:
 * fixed-size elements (strings allocate), count of PFVM__TN_WALK_PAR_MIN
 * and more, and no overlap of the tensors (in place: the order matters). */
static int pfvm__tn_walk_split(pfvm_kctx *k, pfvm_tensor *dst, int64_t o, const pfvm_tensor *src,
                               const pfvm_tn_walk *w, int64_t count)
{
    pfvm__tn_wpar a;
    int threads = PFVM__KTHREADS(k);
    size_t es = pfvm_dtype_size(src->dtype);
    const char *d0 = (const char *)dst->data, *s0 = (const char *)src->data;
    if (threads <= 1 || count < PFVM__TN_WALK_PAR_MIN || src->dtype == PFVM_STRING || w->dims[0] < 2 || !d0 ||
        !s0 || (d0 < s0 + (size_t)pfvm_tensor_numel(src) * es && s0 < d0 + (size_t)pfvm_tensor_numel(dst) * es))
        return 0;
    a.dst = dst, a.src = src, a.w = w, a.o = o, a.inner = count / w->dims[0];
    a.parts = threads < 64 ? threads : 64;
    if (a.parts > w->dims[0])
        a.parts = (int)w->dims[0];
    pfvm_kctx_parallel(k, a.parts, pfvm__tn_walk_part, &a);
    return 1;
}
#endif

PFVM_INTERNAL pfvm_code pfvm_tn_copy_walk(pfvm_kctx *k, pfvm_tensor *dst, int64_t dst_off, const pfvm_tensor *src,
                                          const pfvm_tn_walk *walk)
{
    pfvm_tn_walk w;
    int64_t idx[PFVM_TN_WALK_MAX] = {0}, count = 1, so, o = dst_off, dn = pfvm_tensor_numel(dst);
    int d, r;
    if (walk->rank < 0 || walk->rank > PFVM_TN_WALK_MAX || src->dtype != dst->dtype)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "internal: bad copy walk");
    for (d = 0; d < walk->rank; d++)
        if (walk->dims[d] < 0 || !pfvm__mul_i64(count, walk->dims[d], &count))
            return pfvm__op_fail(k->st, k->node, PFVM_ERR_RANGE, "copy is too large");
    if (count == 0)
        return PFVM_OK;
    if (!pfvm__tn_walk_fits(walk, pfvm_tensor_numel(src)) || dst_off < 0 || dn < 0 || count > dn - dst_off)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_RANGE, "copy would leave its tensors (shapes disagree)");
    w = *walk;
    pfvm__tn_walk_simplify(&w);
    if (w.rank == 0) {
        pfvm_tn_copy(dst, o, src, w.off, 1);
        return PFVM_OK;
    }
    if (pfvm__tn_walk_split(k, dst, o, src, &w, count))
        return PFVM_OK;
    r = w.rank;
    so = w.off;
    for (;;) {
        pfvm__tn_copy_run(dst, o, src, so, w.dims[r - 1], w.stride[r - 1]);
        o += w.dims[r - 1];
        for (d = r - 2; d >= 0; d--) {
            so += w.stride[d];
            if (++idx[d] < w.dims[d])
                break;
            so -= w.stride[d] * w.dims[d];
            idx[d] = 0;
        }
        if (d < 0)
            return PFVM_OK;
    }
}

/* The walk that reads all of x in its own order, with strides per dim. */
static void pfvm__tn_walk_init(pfvm_tn_walk *w, int rank, const int64_t *dims)
{
    int d;
    memset(w, 0, sizeof *w);
    w->rank = rank;
    for (d = 0; d < rank; d++)
        w->dims[d] = dims[d];
}

/* ---- inference helpers ------------------------------------------------------------------ */

/* Output i becomes a tensor of shape s after checking that every dim was
 * built (sym constructors return NULL on overflow) and that no constant
 * dim is negative. */
static pfvm_code pfvm__tn_set(pfvm_ictx *c, int i, pfvm_dtype dtype, const pfvm_shape *s)
{
    int d;
    if (i >= c->n_out || !c->out[i])
        return PFVM_OK;
    for (d = 0; d < s->rank; d++) {
        int64_t v;
        if (!s->dims[d])
            return pfvm__fail(c->st, PFVM_ERR_RANGE, "output %d: dimension %d overflows", i, d);
        if (pfvm_sym_is_const(s->dims[d], &v) && v < 0)
            return pfvm__fail(c->st, PFVM_ERR_SHAPE, "output %d: dimension %d would be %lld", i, d, (long long)v);
    }
    pfvm_ival_set_tensor(c->out[i], dtype, s);
    return PFVM_OK;
}

static pfvm_code pfvm__tn_unknown(pfvm_ictx *c, int i, int rank)
{
    return pfvm_infer_unknown(c, i, c->in[0]->type.dtype, rank);
}

/* Contents of input i as symbolic scalars: constants when its value is
 * known, else the propagated dims; -1 when unknown or longer than cap. */
static int pfvm__tn_in_syms(pfvm_ictx *c, int i, const pfvm_sym **out, int cap)
{
    int64_t v[PFVM__TN_MAXV];
    const pfvm_ival *x = i < c->n_in ? c->in[i] : NULL;
    int n, j;
    if (!x)
        return -1;
    if (cap > PFVM__TN_MAXV)
        cap = PFVM__TN_MAXV;
    n = pfvm_ival_ints(x, v, cap);
    if (n >= 0) {
        for (j = 0; j < n; j++)
            if (!(out[j] = pfvm_sym_const(c->syms, v[j])))
                return -1;
        return n;
    }
    if (!x->sym || x->n_sym > cap)
        return -1;
    for (j = 0; j < x->n_sym; j++)
        out[j] = x->sym[j];
    return x->n_sym;
}

/* Known integer contents of input i (all constant), or -1. */
static int pfvm__tn_in_ints(pfvm_ictx *c, int i, int64_t *out)
{
    if (i >= c->n_in || !c->in[i])
        return -1;
    return pfvm_ival_ints(c->in[i], out, PFVM__TN_MAXV);
}

/* A 1-D int64 output of n entries whose contents are v. */
static pfvm_code pfvm__tn_set_vector(pfvm_ictx *c, pfvm_ival *o, const pfvm_sym *const *v, int n)
{
    pfvm_shape s;
    s.rank = 1;
    s.dims[0] = pfvm_sym_const(c->syms, n);
    if (!s.dims[0])
        return pfvm__fail(c->st, PFVM_ERR_NOMEM, "out of memory");
    pfvm_ival_set_tensor(o, PFVM_INT64, &s);
    return pfvm_ival_set_sym(c, o, v, n);
}

/* Output 0 keeps input 0's symbolic contents (the same elements in a new
 * shape: Reshape, Flatten, Squeeze, Unsqueeze, Identity). */
static pfvm_code pfvm__tn_keep_sym(pfvm_ictx *c)
{
    if (c->in[0]->sym && c->out[0] && c->out[0]->type.kind == PFVM_KIND_TENSOR)
        return pfvm_ival_set_sym(c, c->out[0], c->in[0]->sym, c->in[0]->n_sym);
    return PFVM_OK;
}

/* Product of a shape's dims. */
static const pfvm_sym *pfvm__tn_prod(pfvm_ictx *c, const pfvm_shape *s, int from, int to)
{
    const pfvm_sym *p = pfvm_sym_const(c->syms, 1);
    int d;
    for (d = from; d < to && p; d++)
        p = pfvm_sym_mul(c->syms, p, s->dims[d]);
    return p;
}

/* Length of 1-D input i when its shape is known, else -1 (the count of
 * axes whose values are not known). */
static int pfvm__tn_vec_len(pfvm_ictx *c, int i)
{
    const pfvm_shape *s = i < c->n_in && c->in[i] ? &c->in[i]->type.shape : NULL;
    int64_t n;
    if (!s || s->rank != 1 || !pfvm_sym_is_const(s->dims[0], &n) || n > PFVM__TN_MAXV)
        return -1;
    return (int)n;
}

/* Axes from the `axes` attribute (older opsets) or from input i (newer):
 * the count, -1 when absent, -2 when the input's contents are unknown. */
static int pfvm__tn_axes(pfvm_ictx *c, int from_input, int i, int64_t *axes)
{
    const int64_t *a;
    int n, j;
    if (!from_input) {
        n = pfvm_node_attr_ints(c->node, "axes", &a);
        if (n > PFVM__TN_MAXV)
            return -2;
        for (j = 0; j < n; j++)
            axes[j] = a[j];
        return n;
    }
    if (i >= c->n_in || !c->in[i])
        return -1;
    n = pfvm__tn_in_ints(c, i, axes);
    return n < 0 ? -2 : n;
}

/* Same for a kernel. */
static int pfvm__tn_kaxes(pfvm_kctx *k, int from_input, int i, int64_t *axes)
{
    const int64_t *a;
    int n, j;
    if (!from_input) {
        n = pfvm_node_attr_ints(k->node, "axes", &a);
        if (n > PFVM__TN_MAXV)
            return -2;
        for (j = 0; j < n; j++)
            axes[j] = a[j];
        return n;
    }
    if (i >= k->n_in || !k->in[i])
        return -1;
    n = pfvm__tn_kints(k->in[i], axes, PFVM__TN_MAXV);
    return n < 0 ? -2 : n;
}

/* ---- Identity, Dropout ---------------------------------------------------------------------- */

static pfvm_code pfvm__tn_infer_identity(pfvm_ictx *c)
{
    c->out[0]->type = c->in[0]->type;
    if (c->in[0]->type.kind == PFVM_KIND_TENSOR)
        c->out[0]->value = c->in[0]->value; /* the same contents, used in place when known */
    return pfvm__tn_keep_sym(c);
}

/* Sequences and optionals: a deep copy of the elements. */
static pfvm_code pfvm__tn_clone_container(pfvm_kctx *k, const pfvm_tensor *x, pfvm_tensor *y)
{
    int i;
    pfvm_tensor_release(y);
    y->kind = x->kind;
    y->elem_dtype = x->elem_dtype;
    y->dtype = x->dtype;
    y->rank = x->rank;
    y->has_value = x->has_value;
    for (i = 0; i < (int)stbds_arrlen(x->elems); i++) {
        pfvm_tensor *e = pfvm_tensor_clone(x->elems[i], k->st);
        if (!e)
            return pfvm__tn_code(k, PFVM_ERR_NOMEM);
        if (!pfvm__arrpush(y->elems, e)) {
            pfvm_tensor_free(e);
            return pfvm__op_fail(k->st, k->node, PFVM_ERR_NOMEM, "out of memory");
        }
    }
    return PFVM_OK;
}

static pfvm_code pfvm__tn_k_identity(pfvm_kctx *k)
{
    const pfvm_tensor *x = k->in[0];
    pfvm_tensor *y = k->out[0];
    if (x->kind != PFVM_KIND_TENSOR)
        return pfvm__tn_clone_container(k, x, y);
    if (pfvm_tn_check_inputs(k) || pfvm_tn_output(k, 0, x->dtype, x->rank, x->dims))
        return pfvm__tn_code(k, PFVM_ERR_INVALID);
    if (y->data != x->data)
        pfvm_tn_copy(y, 0, x, 0, pfvm_tensor_numel(x));
    return PFVM_OK;
}

/* Before opset 10 the mask has the data's type; from 10 on it is bool. */
static pfvm_dtype pfvm__tn_mask_dtype(const pfvm_node *n, pfvm_dtype data)
{
    return n->opset < 10 ? data : PFVM_BOOL;
}

static pfvm_code pfvm__tn_infer_dropout(pfvm_ictx *c)
{
    const pfvm_ival *x = c->in[0];
    if (!pfvm_dtype_is_float(x->type.dtype) && x->type.dtype != PFVM_UNDEFINED)
        return pfvm__fail(c->st, PFVM_ERR_INVALID, "data must be a float tensor, not %s", pfvm_dtype_name(x->type.dtype));
    if (c->n_in > 1 && c->in[1] && c->in[1]->type.shape.rank > 0)
        return pfvm__fail(c->st, PFVM_ERR_SHAPE, "ratio must be a scalar");
    if (c->n_in > 2 && c->in[2] && c->in[2]->type.shape.rank > 0)
        return pfvm__fail(c->st, PFVM_ERR_SHAPE, "training_mode must be a scalar");
    pfvm_ival_set_tensor(c->out[0], x->type.dtype, &x->type.shape);
    if (c->n_out > 1 && c->out[1])
        pfvm_ival_set_tensor(c->out[1], pfvm__tn_mask_dtype(c->node, x->type.dtype), &x->type.shape);
    return PFVM_OK;
}

/* Whether this run drops elements, and with what ratio. */
static pfvm_code pfvm__tn_dropout_mode(pfvm_kctx *k, int *training, double *ratio)
{
    const pfvm_node *n = k->node;
    *training = 0;
    *ratio = 0.5;
    if (n->opset < 12) {
        *ratio = pfvm_node_attr_float(n, "ratio", 0.5f);
        /* only opsets 1 and 6 had a training form, asked for with an
         * explicit is_test = 0 (runtimes treat the default as inference) */
        *training = n->opset < 7 && pfvm_node_attr_int(n, "is_test", 1) == 0;
    } else {
        if (k->n_in > 1 && k->in[1]) {
            if (pfvm_tensor_numel(k->in[1]) != 1 || !pfvm_dtype_is_float(k->in[1]->dtype))
                return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "ratio must be one float");
            *ratio = pfvm_tensor_get_f64(k->in[1], 0);
        }
        if (k->n_in > 2 && k->in[2]) {
            if (pfvm_tensor_numel(k->in[2]) != 1)
                return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "training_mode must be one bool");
            *training = pfvm_tensor_get_i64(k->in[2], 0) != 0;
        }
    }
    if (*training && !(*ratio >= 0 && *ratio < 1))
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_RANGE, "ratio %g is outside [0, 1)", *ratio);
    return PFVM_OK;
}

static pfvm_code pfvm__tn_k_dropout(pfvm_kctx *k)
{
    const pfvm_tensor *x = k->in[0];
    pfvm_tensor *y = k->out[0], *mask = k->n_out > 1 ? k->out[1] : NULL;
    int64_t i, n = pfvm_tensor_numel(x);
    int training;
    double ratio;
    pfvm_dtype mdt = pfvm__tn_mask_dtype(k->node, x->dtype);
    if (pfvm_tn_check_inputs(k) || pfvm__tn_dropout_mode(k, &training, &ratio) ||
        pfvm_tn_output(k, 0, x->dtype, x->rank, x->dims) || pfvm_tn_output(k, 1, mdt, x->rank, x->dims))
        return pfvm__tn_code(k, PFVM_ERR_INVALID);
    if (!pfvm_dtype_is_float(x->dtype))
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_UNSUPPORTED, "%s data", pfvm_dtype_name(x->dtype));
    if (!training || ratio == 0) {
        if (y->data != x->data)
            pfvm_tn_copy(y, 0, x, 0, n);
        for (i = 0; mask && i < n; i++)
            pfvm_tn_store_i64(mask, i, 1);
        return PFVM_OK;
    }
    /* training: keep each element with probability 1 - ratio, scaled up */
    {
        const pfvm_attr *seed = pfvm_node_attr(k->node, "seed");
        if (seed && seed->type == PFVM_ATTR_INT)
            pfvm_kctx_seed(k, (uint64_t)seed->i);
    }
    for (i = 0; i < n; i++) {
        double u = (double)(pfvm_kctx_random(k) >> 11) * (1.0 / 9007199254740992.0);
        int keep = u >= ratio;
        pfvm_red_store(y, i, keep ? pfvm_tensor_get_f64(x, i) / (1 - ratio) : 0);
        if (mask)
            pfvm_tn_store_i64(mask, i, keep);
    }
    return PFVM_OK;
}

/* ---- Shape, Size, Constant, ConstantOfShape ---------------------------------------------- */

/* Shape's [start, end) (opset 15 attributes; clamped like Python slices). */
static void pfvm__tn_shape_range(const pfvm_node *n, int rank, int *start, int *end)
{
    int64_t s = pfvm_node_attr_int(n, "start", 0), e = pfvm_node_attr_int(n, "end", rank);
    if (s < 0)
        s += rank;
    if (e < 0)
        e += rank;
    s = s < 0 ? 0 : s > rank ? rank : s;
    e = e < 0 ? 0 : e > rank ? rank : e;
    *start = (int)s;
    *end = (int)(e < s ? s : e);
}

static pfvm_code pfvm__tn_infer_shape(pfvm_ictx *c)
{
    const pfvm_shape *s = &c->in[0]->type.shape;
    int a, b;
    if (c->in[0]->type.kind != PFVM_KIND_TENSOR && c->in[0]->type.kind != PFVM_KIND_UNKNOWN)
        return pfvm__fail(c->st, PFVM_ERR_INVALID, "input is not a tensor");
    if (s->rank < 0)
        return pfvm_infer_unknown(c, 0, PFVM_INT64, 1);
    pfvm__tn_shape_range(c->node, s->rank, &a, &b);
    return pfvm__tn_set_vector(c, c->out[0], s->dims + a, b - a);
}

static pfvm_code pfvm__tn_k_shape(pfvm_kctx *k)
{
    int a, b, i;
    int64_t n;
    if (k->in[0]->kind != PFVM_KIND_TENSOR)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "input is not a tensor");
    pfvm__tn_shape_range(k->node, k->in[0]->rank, &a, &b);
    n = b - a;
    if (pfvm_tn_output(k, 0, PFVM_INT64, 1, &n))
        return pfvm__tn_code(k, PFVM_ERR_NOMEM);
    for (i = a; i < b; i++)
        ((int64_t *)k->out[0]->data)[i - a] = k->in[0]->dims[i];
    return PFVM_OK;
}

static pfvm_code pfvm__tn_infer_size(pfvm_ictx *c)
{
    const pfvm_shape *s = &c->in[0]->type.shape;
    const pfvm_sym *n;
    pfvm_shape scalar;
    scalar.rank = 0;
    pfvm_ival_set_tensor(c->out[0], PFVM_INT64, &scalar);
    if (s->rank < 0)
        return PFVM_OK;
    n = pfvm__tn_prod(c, s, 0, s->rank);
    return n ? pfvm_ival_set_sym(c, c->out[0], &n, 1) : PFVM_OK;
}

static pfvm_code pfvm__tn_k_size(pfvm_kctx *k)
{
    int64_t n = pfvm_tensor_numel(k->in[0]);
    if (k->in[0]->kind != PFVM_KIND_TENSOR || n < 0)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "input is not a tensor");
    if (pfvm_tn_output(k, 0, PFVM_INT64, 0, NULL))
        return pfvm__tn_code(k, PFVM_ERR_NOMEM);
    *(int64_t *)k->out[0]->data = n;
    return PFVM_OK;
}

/* The tensor a Constant node holds. The scalar and list forms are turned
 * into a model tensor on first use and cached in the attribute (which then
 * reads as `value`), so every later use is zero-copy. */
static const pfvm_tensor *pfvm__tn_constant_value(const pfvm_node *n, pfvm_status *st)
{
    const pfvm_attr *a = n->n_attrs == 1 ? &n->attrs[0] : NULL;
    pfvm_model *m = n->graph->model;
    pfvm_tensor *t;
    int64_t len;
    int i;
    if (!a)
        return pfvm__op_fail(st, n, PFVM_ERR_INVALID, "needs exactly one attribute, has %d", n->n_attrs),
               (const pfvm_tensor *)NULL;
    if ((!strcmp(a->name, "value") || !strcmp(a->name, "sparse_value")) && a->t) {
        if (a->t->kind != PFVM_KIND_TENSOR)
            return pfvm__op_fail(st, n, PFVM_ERR_UNSUPPORTED, "'%s' is not a dense tensor", a->name),
                   (const pfvm_tensor *)NULL;
        return a->t;
    }
    len = a->n;
    if (!strcmp(a->name, "value_float") && a->type == PFVM_ATTR_FLOAT) {
        if ((t = pfvm_model_tensor(m, PFVM_FLOAT, 0, NULL, NULL, st)) != NULL)
            *(float *)t->data = a->f;
    } else if (!strcmp(a->name, "value_int") && a->type == PFVM_ATTR_INT) {
        if ((t = pfvm_model_tensor(m, PFVM_INT64, 0, NULL, NULL, st)) != NULL)
            *(int64_t *)t->data = a->i;
    } else if (!strcmp(a->name, "value_floats") && a->type == PFVM_ATTR_FLOATS) {
        if ((t = pfvm_model_tensor(m, PFVM_FLOAT, 1, &len, NULL, st)) != NULL && len)
            memcpy(t->data, a->floats, sizeof(float) * (size_t)len);
    } else if (!strcmp(a->name, "value_ints") && a->type == PFVM_ATTR_INTS) {
        if ((t = pfvm_model_tensor(m, PFVM_INT64, 1, &len, NULL, st)) != NULL && len)
            memcpy(t->data, a->ints, sizeof(int64_t) * (size_t)len);
    } else if (!strcmp(a->name, "value_string") && a->type == PFVM_ATTR_STRING) {
        if ((t = pfvm_model_tensor(m, PFVM_STRING, 0, NULL, NULL, st)) != NULL)
            ((const char **)t->data)[0] = pfvm_model_strdup(m, a->s ? a->s : "");
    } else if (!strcmp(a->name, "value_strings") && a->type == PFVM_ATTR_STRINGS) {
        t = pfvm_model_tensor(m, PFVM_STRING, 1, &len, NULL, st);
        for (i = 0; t && i < a->n; i++)
            ((const char **)t->data)[i] = a->strings[i] ? a->strings[i] : "";
    } else {
        return pfvm__op_fail(st, n, PFVM_ERR_UNSUPPORTED, "attribute '%s' is not a Constant form", a->name),
               (const pfvm_tensor *)NULL;
    }
    if (t) {
        pfvm_attr *w = (pfvm_attr *)a;
        w->name = "value";
        w->type = PFVM_ATTR_TENSOR;
        w->t = t;
    }
    return t;
}

static pfvm_code pfvm__tn_infer_constant(pfvm_ictx *c)
{
    const pfvm_tensor *t = pfvm__tn_constant_value(c->node, c->st);
    pfvm_shape s;
    if (!t)
        return c->st ? c->st->code : PFVM_ERR_INVALID;
    if (pfvm_shape_from_dims(c->syms, &s, t->rank, t->dims, c->st))
        return c->st ? c->st->code : PFVM_ERR_NOMEM;
    pfvm_ival_set_tensor(c->out[0], t->dtype, &s);
    c->out[0]->value = t; /* the planner uses it in place */
    return PFVM_OK;
}

static pfvm_code pfvm__tn_k_constant(pfvm_kctx *k)
{
    const pfvm_tensor *t = pfvm__tn_constant_value(k->node, k->st);
    if (!t)
        return pfvm__tn_code(k, PFVM_ERR_INVALID);
    if (pfvm_tn_output(k, 0, t->dtype, t->rank, t->dims))
        return pfvm__tn_code(k, PFVM_ERR_NOMEM);
    pfvm_tn_copy(k->out[0], 0, t, 0, pfvm_tensor_numel(t));
    return PFVM_OK;
}

/* ConstantOfShape's fill value: the `value` attribute (one element, any
 * numeric type) or NULL for float 0. */
static const pfvm_tensor *pfvm__tn_cos_value(const pfvm_node *n, pfvm_status *st, int *bad)
{
    const pfvm_attr *a = pfvm_node_attr(n, "value");
    *bad = 0;
    if (!a)
        return NULL;
    if (!a->t || a->t->kind != PFVM_KIND_TENSOR || pfvm_tensor_numel(a->t) != 1 || a->t->dtype == PFVM_STRING ||
        !pfvm_dtype_size(a->t->dtype)) {
        *bad = 1;
        pfvm__op_fail(st, n, PFVM_ERR_INVALID, "value must be a one-element numeric tensor");
        return NULL;
    }
    return a->t;
}

static pfvm_code pfvm__tn_infer_cos(pfvm_ictx *c)
{
    const pfvm_sym *v[PFVM__TN_MAXV];
    int bad, n, i;
    const pfvm_tensor *val = pfvm__tn_cos_value(c->node, c->st, &bad);
    pfvm_dtype dt = val ? val->dtype : PFVM_FLOAT;
    const pfvm_shape *in = &c->in[0]->type.shape;
    pfvm_shape s;
    if (bad)
        return c->st ? c->st->code : PFVM_ERR_INVALID;
    if (in->rank > 1)
        return pfvm__fail(c->st, PFVM_ERR_SHAPE, "the shape input must be 1-D");
    n = pfvm__tn_in_syms(c, 0, v, PFVM_MAX_RANK);
    if (n < 0) {
        int64_t len;
        if (in->rank == 1 && pfvm_sym_is_const(in->dims[0], &len))
            return pfvm_infer_unknown(c, 0, dt, len <= PFVM_MAX_RANK ? (int)len : -1);
        return pfvm_infer_unknown(c, 0, dt, -1);
    }
    s.rank = n;
    for (i = 0; i < n; i++)
        s.dims[i] = v[i];
    return pfvm__tn_set(c, 0, dt, &s);
}

static pfvm_code pfvm__tn_k_cos(pfvm_kctx *k)
{
    int64_t dims[PFVM_MAX_RANK], i, n;
    int bad, r;
    const pfvm_tensor *val = pfvm__tn_cos_value(k->node, k->st, &bad);
    pfvm_dtype dt = val ? val->dtype : PFVM_FLOAT;
    size_t es = pfvm_dtype_size(dt);
    if (bad || pfvm_tn_check_inputs(k))
        return pfvm__tn_code(k, PFVM_ERR_INVALID);
    r = pfvm__tn_kints(k->in[0], dims, PFVM_MAX_RANK);
    if (r < 0 || k->in[0]->rank > 1)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "the shape input must be a 1-D integer tensor of at most %d entries",
                             PFVM_MAX_RANK);
    if (pfvm_tn_output(k, 0, dt, r, dims))
        return pfvm__tn_code(k, PFVM_ERR_NOMEM);
    n = pfvm_tensor_numel(k->out[0]);
    if (!val) {
        memset(k->out[0]->data, 0, (size_t)n * es);
        return PFVM_OK;
    }
    for (i = 0; i < n; i++)
        memcpy((char *)k->out[0]->data + (size_t)i * es, val->data, es);
    return PFVM_OK;
}

/* ---- Reshape, Flatten, Squeeze, Unsqueeze: the same elements in a new shape ---------- */

/* Copies all of input 0 into output 0 once it has the given shape. */
static pfvm_code pfvm__tn_reshaped_copy(pfvm_kctx *k, int rank, const int64_t *dims)
{
    const pfvm_tensor *x = k->in[0];
    pfvm_tensor *y;
    if (pfvm_tn_output(k, 0, x->dtype, rank, dims))
        return pfvm__tn_code(k, PFVM_ERR_SHAPE);
    y = k->out[0];
    if (pfvm_tensor_numel(x) != pfvm_tensor_numel(y))
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "%lld elements cannot become %lld",
                             (long long)pfvm_tensor_numel(x), (long long)pfvm_tensor_numel(y));
    if (y->data != x->data)
        pfvm_tn_copy(y, 0, x, 0, pfvm_tensor_numel(x));
    return PFVM_OK;
}

static int pfvm__tn_allowzero(const pfvm_node *n)
{
    return n->opset >= 14 && pfvm_node_attr_int(n, "allowzero", 0) != 0;
}

/* Reshape's target as symbolic entries: the `shape` input (opset 5 on) or
 * attribute (before); -1 unknown, -2 missing. */
static int pfvm__tn_reshape_target(pfvm_ictx *c, const pfvm_sym **v)
{
    if (c->node->opset < 5) {
        const int64_t *a;
        int n = pfvm_node_attr_ints(c->node, "shape", &a), i;
        if (n < 0)
            return -2;
        for (i = 0; i < n && i < PFVM__TN_MAXV; i++)
            if (!(v[i] = pfvm_sym_const(c->syms, a[i])))
                return -1;
        return n;
    }
    if (c->n_in < 2 || !c->in[1])
        return -2;
    return pfvm__tn_in_syms(c, 1, v, PFVM__TN_MAXV);
}

static pfvm_code pfvm__tn_infer_reshape(pfvm_ictx *c)
{
    const pfvm_shape *xs = &c->in[0]->type.shape;
    const pfvm_sym *v[PFVM__TN_MAXV], *known = pfvm_sym_const(c->syms, 1), *total;
    int allowzero = pfvm__tn_allowzero(c->node), r, i, neg = -1, zero = 0, copies = 0;
    pfvm_dtype dt = c->in[0]->type.dtype;
    pfvm_shape out;
    int64_t kv, tv;
    if (c->n_in > 1 && c->in[1] && c->in[1]->type.shape.rank >= 0 && c->in[1]->type.shape.rank != 1)
        return pfvm__fail(c->st, PFVM_ERR_SHAPE, "the shape input must be 1-D, not rank %d", c->in[1]->type.shape.rank);
    r = pfvm__tn_reshape_target(c, v);
    if (r == -2)
        return pfvm__fail(c->st, PFVM_ERR_INVALID, "needs a target shape");
    if (r > PFVM_MAX_RANK)
        return pfvm__fail(c->st, PFVM_ERR_UNSUPPORTED, "target rank %d exceeds PFVM_MAX_RANK", r);
    if (r < 0) {
        const pfvm_shape *ss = c->n_in > 1 && c->in[1] ? &c->in[1]->type.shape : NULL;
        int64_t len;
        if (ss && ss->rank == 1 && pfvm_sym_is_const(ss->dims[0], &len) && len <= PFVM_MAX_RANK)
            return pfvm__tn_unknown(c, 0, (int)len);
        return pfvm__tn_unknown(c, 0, -1);
    }
    out.rank = r;
    for (i = 0; i < r; i++) {
        int64_t d;
        out.dims[i] = v[i];
        if (!pfvm_sym_is_const(v[i], &d)) {
            known = known ? pfvm_sym_mul(c->syms, known, v[i]) : NULL;
            continue;
        }
        if (d == -1) {
            if (neg >= 0)
                return pfvm__fail(c->st, PFVM_ERR_SHAPE, "more than one -1 in the target shape");
            neg = i;
            continue;
        }
        if (d < -1)
            return pfvm__fail(c->st, PFVM_ERR_SHAPE, "invalid target dimension %lld", (long long)d);
        if (d == 0 && !allowzero) {
            /* 0 copies the input's dimension */
            if (xs->rank >= 0 && i >= xs->rank)
                return pfvm__fail(c->st, PFVM_ERR_SHAPE, "0 at dimension %d copies a dimension the input lacks", i);
            copies = 1;
            if (xs->rank >= 0)
                out.dims[i] = xs->dims[i];
        } else if (d == 0) {
            zero = 1;
        }
        known = known ? pfvm_sym_mul(c->syms, known, out.dims[i]) : NULL;
    }
    if (zero && neg >= 0)
        return pfvm__fail(c->st, PFVM_ERR_SHAPE, "allowzero with both 0 and -1 in the target shape");
    if (xs->rank < 0 && (copies || neg >= 0)) {
        /* the dims the target states stay; the others are unknowns */
        pfvm_shape keep = out;
        if (pfvm__tn_unknown(c, 0, r))
            return c->st ? c->st->code : PFVM_ERR_NOMEM;
        for (i = 0; i < r; i++) {
            int64_t d;
            if (i != neg && !(pfvm_sym_is_const(keep.dims[i], &d) && d == 0 && !allowzero))
                c->out[0]->type.shape.dims[i] = keep.dims[i];
        }
        return PFVM_OK;
    }
    if (xs->rank < 0)
        return pfvm__tn_set(c, 0, dt, &out);
    total = pfvm__tn_prod(c, xs, 0, xs->rank);
    if (!known || !total)
        return pfvm__fail(c->st, PFVM_ERR_RANGE, "element count overflows");
    if (neg >= 0) {
        if (pfvm_sym_is_const(known, &kv) && pfvm_sym_is_const(total, &tv) && (kv == 0 ? tv != 0 : tv % kv != 0))
            return pfvm__fail(c->st, PFVM_ERR_SHAPE, "cannot reshape %lld elements with the other dims' product %lld",
                              (long long)tv, (long long)kv);
        /* 0 elements and a 0 among the other dims: -1 stays 0 (like numpy
         * refuses; onnx's reference gives 0) */
        out.dims[neg] = pfvm_sym_is_const(known, &kv) && kv == 0 ? pfvm_sym_const(c->syms, 0)
                                                                    : pfvm_sym_div(c->syms, total, known);
    } else if (pfvm_sym_is_const(known, &kv) && pfvm_sym_is_const(total, &tv) && kv != tv) {
        return pfvm__fail(c->st, PFVM_ERR_SHAPE, "cannot reshape %lld elements into %lld", (long long)tv, (long long)kv);
    }
    if (pfvm__tn_set(c, 0, dt, &out))
        return c->st ? c->st->code : PFVM_ERR_SHAPE;
    return pfvm__tn_keep_sym(c);
}

/* Reshape's concrete target for this run. */
static pfvm_code pfvm__tn_reshape_dims(pfvm_kctx *k, int64_t *dims, int *rank)
{
    const pfvm_tensor *x = k->in[0];
    int allowzero = pfvm__tn_allowzero(k->node), r, i, neg = -1, zero = 0;
    int64_t known = 1, total = pfvm_tensor_numel(x);
    if (k->node->opset < 5) {
        const int64_t *a;
        r = pfvm_node_attr_ints(k->node, "shape", &a);
        if (r > PFVM_MAX_RANK)
            r = -1;
        for (i = 0; i < r; i++)
            dims[i] = a[i];
    } else {
        r = pfvm__tn_kints(k->n_in > 1 ? k->in[1] : NULL, dims, PFVM_MAX_RANK);
    }
    if (r < 0)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "the target must be at most %d integers", PFVM_MAX_RANK);
    for (i = 0; i < r; i++) {
        if (dims[i] == 0 && !allowzero) {
            if (i >= x->rank)
                return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "0 at dimension %d copies a dimension the input lacks", i);
            dims[i] = x->dims[i];
        } else if (dims[i] == 0) {
            zero = 1;
        }
        if (dims[i] == -1) {
            if (neg >= 0)
                return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "more than one -1 in the target shape");
            neg = i;
        } else if (dims[i] < 0) {
            return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "invalid target dimension %lld", (long long)dims[i]);
        } else if (!pfvm__mul_i64(known, dims[i], &known)) {
            return pfvm__op_fail(k->st, k->node, PFVM_ERR_RANGE, "target element count overflows");
        }
    }
    if (zero && neg >= 0)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "allowzero with both 0 and -1 in the target shape");
    if (neg >= 0) {
        if (known == 0 ? total != 0 : total % known != 0)
            return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "cannot reshape %lld elements with the other dims' product %lld",
                                 (long long)total, (long long)known);
        dims[neg] = known ? total / known : 0;
        known *= dims[neg];
    }
    if (known != total)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "cannot reshape %lld elements into %lld", (long long)total,
                             (long long)known);
    *rank = r;
    return PFVM_OK;
}

static pfvm_code pfvm__tn_k_reshape(pfvm_kctx *k)
{
    int64_t dims[PFVM_MAX_RANK];
    int r = 0;
    if (pfvm_tn_check_inputs(k) || pfvm__tn_reshape_dims(k, dims, &r))
        return pfvm__tn_code(k, PFVM_ERR_SHAPE);
    return pfvm__tn_reshaped_copy(k, r, dims);
}

/* Flatten's axis in [0, rank], or -1. */
static int pfvm__tn_flatten_axis(const pfvm_node *n, int rank)
{
    int64_t a = pfvm_node_attr_int(n, "axis", 1);
    if (a < 0)
        a += rank;
    return a >= 0 && a <= rank ? (int)a : -1;
}

static pfvm_code pfvm__tn_infer_flatten(pfvm_ictx *c)
{
    const pfvm_shape *s = &c->in[0]->type.shape;
    pfvm_shape out;
    int a;
    if (s->rank < 0)
        return pfvm__tn_unknown(c, 0, 2);
    if ((a = pfvm__tn_flatten_axis(c->node, s->rank)) < 0)
        return pfvm__fail(c->st, PFVM_ERR_INVALID, "axis %lld is out of range for rank %d",
                          (long long)pfvm_node_attr_int(c->node, "axis", 1), s->rank);
    out.rank = 2;
    out.dims[0] = pfvm__tn_prod(c, s, 0, a);
    out.dims[1] = pfvm__tn_prod(c, s, a, s->rank);
    if (pfvm__tn_set(c, 0, c->in[0]->type.dtype, &out))
        return c->st ? c->st->code : PFVM_ERR_SHAPE;
    return pfvm__tn_keep_sym(c);
}

static pfvm_code pfvm__tn_k_flatten(pfvm_kctx *k)
{
    const pfvm_tensor *x = k->in[0];
    int64_t dims[2] = {1, 1};
    int a, d;
    if (pfvm_tn_check_inputs(k))
        return pfvm__tn_code(k, PFVM_ERR_INVALID);
    if ((a = pfvm__tn_flatten_axis(k->node, x->rank)) < 0)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "axis is out of range for rank %d", x->rank);
    for (d = 0; d < x->rank; d++)
        dims[d >= a] *= x->dims[d];
    return pfvm__tn_reshaped_copy(k, 2, dims);
}

/* Marks the dims Squeeze drops; fails on a bad axis or a dim that is not 1
 * (dims: constant values or -1 when symbolic). */
static pfvm_code pfvm__tn_squeeze_drop(pfvm_status *st, const int64_t *axes, int n, const int64_t *dims, int rank, int *drop)
{
    int i;
    memset(drop, 0, sizeof(int) * PFVM_MAX_RANK);
    for (i = 0; i < n; i++) {
        int a = pfvm__axis(axes[i], rank);
        if (a < 0 || drop[a])
            return pfvm__fail(st, PFVM_ERR_INVALID, "axis %lld is out of range for rank %d or repeated", (long long)axes[i],
                              rank);
        if (dims[a] >= 0 && dims[a] != 1)
            return pfvm__fail(st, PFVM_ERR_SHAPE, "cannot squeeze dimension %d of size %lld", a, (long long)dims[a]);
        drop[a] = 1;
    }
    return PFVM_OK;
}

static pfvm_code pfvm__tn_infer_squeeze(pfvm_ictx *c)
{
    const pfvm_shape *s = &c->in[0]->type.shape;
    int64_t axes[PFVM__TN_MAXV], dims[PFVM_MAX_RANK];
    int n = pfvm__tn_axes(c, c->node->opset >= 13, 1, axes), i, j, drop[PFVM_MAX_RANK];
    pfvm_shape out;
    if (n == -2 || s->rank < 0) {
        /* the rank is still known when the number of axes is */
        int k = n == -2 ? pfvm__tn_vec_len(c, 1) : -1;
        return pfvm__tn_unknown(c, 0, s->rank >= 0 && k >= 0 && k <= s->rank ? s->rank - k : -1);
    }
    for (i = 0; i < s->rank; i++)
        if (!pfvm_sym_is_const(s->dims[i], &dims[i]))
            dims[i] = -1;
    if (n < 0) {
        /* no axes: every dim of size 1, which must then be known */
        for (i = 0; i < s->rank; i++) {
            if (dims[i] < 0)
                return pfvm__tn_unknown(c, 0, -1);
            drop[i] = dims[i] == 1;
        }
    } else if (pfvm__tn_squeeze_drop(c->st, axes, n, dims, s->rank, drop)) {
        return c->st ? c->st->code : PFVM_ERR_INVALID;
    }
    for (i = 0, j = 0; i < s->rank; i++)
        if (!drop[i])
            out.dims[j++] = s->dims[i];
    out.rank = j;
    if (pfvm__tn_set(c, 0, c->in[0]->type.dtype, &out))
        return c->st ? c->st->code : PFVM_ERR_SHAPE;
    return pfvm__tn_keep_sym(c);
}

static pfvm_code pfvm__tn_k_squeeze(pfvm_kctx *k)
{
    const pfvm_tensor *x = k->in[0];
    int64_t axes[PFVM__TN_MAXV], dims[PFVM_MAX_RANK];
    int n, i, j, drop[PFVM_MAX_RANK];
    if (pfvm_tn_check_inputs(k))
        return pfvm__tn_code(k, PFVM_ERR_INVALID);
    n = pfvm__tn_kaxes(k, k->node->opset >= 13, 1, axes);
    if (n == -2)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "axes must be a 1-D integer tensor");
    if (n < 0) {
        for (i = 0; i < x->rank; i++)
            drop[i] = x->dims[i] == 1;
    } else if (pfvm__tn_squeeze_drop(k->st, axes, n, x->dims, x->rank, drop)) {
        return pfvm__tn_code(k, PFVM_ERR_INVALID);
    }
    for (i = 0, j = 0; i < x->rank; i++)
        if (!drop[i])
            dims[j++] = x->dims[i];
    return pfvm__tn_reshaped_copy(k, j, dims);
}

/* Marks where Unsqueeze inserts its 1s in the output of rank `r`. */
static pfvm_code pfvm__tn_unsqueeze_ins(pfvm_status *st, const int64_t *axes, int n, int r, int *ins)
{
    int i;
    if (r > PFVM_MAX_RANK)
        return pfvm__fail(st, PFVM_ERR_UNSUPPORTED, "rank %d exceeds PFVM_MAX_RANK", r);
    memset(ins, 0, sizeof(int) * PFVM_MAX_RANK);
    for (i = 0; i < n; i++) {
        int a = pfvm__axis(axes[i], r);
        if (a < 0 || ins[a])
            return pfvm__fail(st, PFVM_ERR_INVALID, "axis %lld is out of range for rank %d or repeated", (long long)axes[i], r);
        ins[a] = 1;
    }
    return PFVM_OK;
}

static pfvm_code pfvm__tn_infer_unsqueeze(pfvm_ictx *c)
{
    const pfvm_shape *s = &c->in[0]->type.shape;
    int64_t axes[PFVM__TN_MAXV];
    int n = pfvm__tn_axes(c, c->node->opset >= 13, 1, axes), i, j, ins[PFVM_MAX_RANK];
    pfvm_shape out;
    if (n == -1)
        return pfvm__fail(c->st, PFVM_ERR_INVALID, "needs axes");
    if (n < 0 || s->rank < 0) {
        /* the rank is still known when the number of axes is */
        int k = n >= 0 ? n : pfvm__tn_vec_len(c, 1);
        return pfvm__tn_unknown(c, 0, k >= 0 && s->rank >= 0 && s->rank + k <= PFVM_MAX_RANK ? s->rank + k : -1);
    }
    if (pfvm__tn_unsqueeze_ins(c->st, axes, n, s->rank + n, ins))
        return c->st ? c->st->code : PFVM_ERR_INVALID;
    out.rank = s->rank + n;
    for (i = 0, j = 0; i < out.rank; i++)
        out.dims[i] = ins[i] ? pfvm_sym_const(c->syms, 1) : s->dims[j++];
    if (pfvm__tn_set(c, 0, c->in[0]->type.dtype, &out))
        return c->st ? c->st->code : PFVM_ERR_SHAPE;
    return pfvm__tn_keep_sym(c);
}

static pfvm_code pfvm__tn_k_unsqueeze(pfvm_kctx *k)
{
    const pfvm_tensor *x = k->in[0];
    int64_t axes[PFVM__TN_MAXV], dims[PFVM_MAX_RANK];
    int n, i, j, ins[PFVM_MAX_RANK];
    if (pfvm_tn_check_inputs(k))
        return pfvm__tn_code(k, PFVM_ERR_INVALID);
    n = pfvm__tn_kaxes(k, k->node->opset >= 13, 1, axes);
    if (n < 0)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "axes must be a 1-D integer tensor");
    if (pfvm__tn_unsqueeze_ins(k->st, axes, n, x->rank + n, ins))
        return pfvm__tn_code(k, PFVM_ERR_INVALID);
    for (i = 0, j = 0; i < x->rank + n; i++)
        dims[i] = ins[i] ? 1 : x->dims[j++];
    return pfvm__tn_reshaped_copy(k, x->rank + n, dims);
}

/* ---- Transpose --------------------------------------------------------------------------- */

/* perm (default: reversed axes); 0 when it is not a permutation of rank axes. */
static int pfvm__tn_perm(const pfvm_node *n, int rank, int *perm)
{
    const int64_t *p;
    int cnt = pfvm_node_attr_ints(n, "perm", &p), i, seen[PFVM_MAX_RANK] = {0};
    if (cnt < 0) {
        for (i = 0; i < rank; i++)
            perm[i] = rank - 1 - i;
        return 1;
    }
    if (cnt != rank)
        return 0;
    for (i = 0; i < rank; i++) {
        if (p[i] < 0 || p[i] >= rank || seen[p[i]])
            return 0;
        seen[p[i]] = 1;
        perm[i] = (int)p[i];
    }
    return 1;
}

static pfvm_code pfvm__tn_infer_transpose(pfvm_ictx *c)
{
    const pfvm_shape *s = &c->in[0]->type.shape;
    int perm[PFVM_MAX_RANK], i;
    pfvm_shape out;
    if (s->rank < 0) {
        const int64_t *p;
        int cnt = pfvm_node_attr_ints(c->node, "perm", &p);
        return pfvm__tn_unknown(c, 0, cnt >= 0 && cnt <= PFVM_MAX_RANK ? cnt : -1);
    }
    if (!pfvm__tn_perm(c->node, s->rank, perm))
        return pfvm__fail(c->st, PFVM_ERR_INVALID, "perm is not a permutation of %d axes", s->rank);
    out.rank = s->rank;
    for (i = 0; i < s->rank; i++)
        out.dims[i] = s->dims[perm[i]];
    return pfvm__tn_set(c, 0, c->in[0]->type.dtype, &out);
}

static pfvm_code pfvm__tn_k_transpose(pfvm_kctx *k)
{
    const pfvm_tensor *x = k->in[0];
    int perm[PFVM_MAX_RANK], d;
    int64_t xs[PFVM_MAX_RANK], dims[PFVM_MAX_RANK];
    pfvm_tn_walk w;
    if (pfvm_tn_check_inputs(k))
        return pfvm__tn_code(k, PFVM_ERR_INVALID);
    if (!pfvm__tn_perm(k->node, x->rank, perm))
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "perm is not a permutation of %d axes", x->rank);
    pfvm__tn_strides(x->dims, x->rank, xs);
    for (d = 0; d < x->rank; d++)
        dims[d] = x->dims[perm[d]];
    if (pfvm_tn_output(k, 0, x->dtype, x->rank, dims))
        return pfvm__tn_code(k, PFVM_ERR_NOMEM);
    pfvm__tn_walk_init(&w, x->rank, dims);
    for (d = 0; d < x->rank; d++)
        w.stride[d] = xs[perm[d]];
    return pfvm_tn_copy_walk(k, k->out[0], 0, x, &w);
}

/* ---- Concat, Split ------------------------------------------------------------------------ */

/* Concat's axis attribute; opsets 1-3 default to 1. */
static int64_t pfvm__tn_concat_axis(const pfvm_node *n)
{
    return pfvm_node_attr_int(n, "axis", n->opset < 4 ? 1 : 0);
}

static pfvm_code pfvm__tn_infer_concat(pfvm_ictx *c)
{
    int64_t axis = pfvm__tn_concat_axis(c->node);
    const pfvm_shape *s0 = &c->in[0]->type.shape;
    pfvm_shape out;
    int j, d, a, rank = -1, n_sym = 0;
    const pfvm_sym *syms[PFVM__TN_MAXV];
    for (j = 0; j < c->n_in; j++) {
        if (!c->in[j])
            return pfvm__fail(c->st, PFVM_ERR_INVALID, "input %d is missing", j);
        if (c->in[j]->type.shape.rank >= 0)
            rank = c->in[j]->type.shape.rank;
    }
    for (j = 0; j < c->n_in; j++)
        if (c->in[j]->type.shape.rank < 0)
            return pfvm__tn_unknown(c, 0, rank);
    a = pfvm__axis(axis, s0->rank);
    if (a < 0)
        return pfvm__fail(c->st, PFVM_ERR_INVALID, "axis %lld is out of range for rank %d", (long long)axis, s0->rank);
    out = *s0;
    for (j = 1; j < c->n_in; j++) {
        const pfvm_shape *s = &c->in[j]->type.shape;
        if (s->rank != s0->rank)
            return pfvm__fail(c->st, PFVM_ERR_SHAPE, "input %d has rank %d, input 0 has %d", j, s->rank, s0->rank);
        for (d = 0; d < s->rank; d++) {
            int64_t x, y;
            if (d == a) {
                out.dims[d] = out.dims[d] ? pfvm_sym_add(c->syms, out.dims[d], s->dims[d]) : NULL;
            } else if (pfvm_sym_is_const(out.dims[d], &x) && pfvm_sym_is_const(s->dims[d], &y)) {
                if (x != y)
                    return pfvm__fail(c->st, PFVM_ERR_SHAPE, "dimension %d differs: %lld in input 0, %lld in input %d", d,
                                      (long long)x, (long long)y, j);
            } else if (pfvm_infer_check_eq(c, out.dims[d], s->dims[d], "dims outside the axis")) {
                return c->st ? c->st->code : PFVM_ERR_SHAPE;
            } else if (pfvm_sym_is_const(s->dims[d], NULL)) {
                out.dims[d] = s->dims[d]; /* a constant says more than a name */
            }
        }
    }
    if (pfvm__tn_set(c, 0, c->in[0]->type.dtype, &out))
        return c->st ? c->st->code : PFVM_ERR_SHAPE;
    /* shape vectors being assembled */
    if (s0->rank != 1 || !pfvm_dtype_is_int(c->in[0]->type.dtype))
        return PFVM_OK;
    for (j = 0; j < c->n_in; j++) {
        int n = pfvm__tn_in_syms(c, j, syms + n_sym, PFVM__TN_MAXV - n_sym);
        if (n < 0)
            return PFVM_OK;
        n_sym += n;
    }
    return pfvm_ival_set_sym(c, c->out[0], syms, n_sym);
}

#ifndef PFVM_NO_THREADS
/* Concat's copies cut over the threads by output position (part i writes
 * elements [total*i/parts, total*(i+1)/parts), in whole cache lines): for
 * outputs of PFVM__TN_CAT_PAR_MIN elements and more, of fixed-size
 * elements, with no input inside the output's memory. */
#define PFVM__TN_CAT_PAR_MIN 32768
typedef struct pfvm__tn_cat {
    pfvm_kctx *k;
    pfvm_tensor *y;
    int a, parts;
    int64_t outer, inner, total;
} pfvm__tn_cat;

static void pfvm__tn_cat_part(void *ctx, int i)
{
    const pfvm__tn_cat *c = (const pfvm__tn_cat *)ctx;
    int64_t lines = (c->total + 15) / 16, e0 = lines * i / c->parts * 16, e1 = lines * (i + 1) / c->parts * 16;
    int64_t row = c->y->dims[c->a] * c->inner, o;
    int j;
    e1 = e1 < c->total ? e1 : c->total;
    for (o = e0 / row; o < c->outer && o * row < e1; o++) {
        int64_t at = 0;
        for (j = 0; j < c->k->n_in; j++) {
            const pfvm_tensor *x = c->k->in[j];
            int64_t chunk = x->dims[c->a] * c->inner, y0 = o * row + at * c->inner;
            int64_t lo = y0 > e0 ? y0 : e0, hi = y0 + chunk < e1 ? y0 + chunk : e1;
            if (lo < hi)
                pfvm_tn_copy(c->y, lo, x, o * chunk + (lo - y0), hi - lo);
            at += x->dims[c->a];
        }
    }
}

/* 1 when the copies ran cut over the threads, 0 when the caller runs them. */
static int pfvm__tn_cat_split(pfvm_kctx *k, pfvm_tensor *y, int a, int64_t outer, int64_t inner)
{
    pfvm__tn_cat c;
    const char *y0 = (const char *)y->data, *y1;
    int j, threads = PFVM__KTHREADS(k);
    c.total = pfvm_tensor_numel(y);
    if (threads <= 1 || c.total < PFVM__TN_CAT_PAR_MIN || y->dtype == PFVM_STRING || !y0)
        return 0;
    y1 = y0 + (size_t)c.total * pfvm_dtype_size(y->dtype);
    for (j = 0; j < k->n_in; j++) {
        const char *x0 = (const char *)k->in[j]->data;
        if (x0 && x0 < y1 && x0 + (size_t)pfvm_tensor_numel(k->in[j]) * pfvm_dtype_size(y->dtype) > y0)
            return 0; /* in place: the copies' order matters */
    }
    c.k = k, c.y = y, c.a = a, c.outer = outer, c.inner = inner;
    c.parts = threads < 64 ? threads : 64;
    pfvm_kctx_parallel(k, c.parts, pfvm__tn_cat_part, &c);
    return 1;
}
#endif

static pfvm_code pfvm__tn_k_concat(pfvm_kctx *k)
{
    const pfvm_tensor *x0 = k->in[0];
    int r = x0->rank, a = pfvm__axis(pfvm__tn_concat_axis(k->node), r), j, d;
    int64_t dims[PFVM_MAX_RANK], outer = 1, inner = 1, at = 0, o;
    pfvm_tensor *y;
    if (pfvm_tn_check_inputs(k))
        return pfvm__tn_code(k, PFVM_ERR_INVALID);
    if (a < 0)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "axis is out of range for rank %d", r);
    memcpy(dims, x0->dims, sizeof(int64_t) * (size_t)r);
    dims[a] = 0;
    for (j = 0; j < k->n_in; j++) {
        const pfvm_tensor *x = k->in[j];
        if (!x || x->rank != r || x->dtype != x0->dtype)
            return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "input %d is missing or differs in rank or type", j);
        for (d = 0; d < r; d++)
            if (d != a && x->dims[d] != dims[d])
                return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "input %d: dimension %d is %lld, input 0 has %lld", j,
                                     d, (long long)x->dims[d], (long long)dims[d]);
        if (!pfvm__add_i64(dims[a], x->dims[a], &dims[a]))
            return pfvm__op_fail(k->st, k->node, PFVM_ERR_RANGE, "output is too large");
    }
    if (pfvm_tn_output(k, 0, x0->dtype, r, dims))
        return pfvm__tn_code(k, PFVM_ERR_NOMEM);
    y = k->out[0];
    for (d = 0; d < a; d++)
        outer *= dims[d];
    for (d = a + 1; d < r; d++)
        inner *= dims[d];
#ifndef PFVM_NO_THREADS
    if (pfvm__tn_cat_split(k, y, a, outer, inner))
        return PFVM_OK;
#endif
    for (j = 0; j < k->n_in; j++) {
        const pfvm_tensor *x = k->in[j];
        int64_t chunk = x->dims[a] * inner;
        /* the planner stored x in its slice of y (PFVM__OP_JOIN) */
        int placed = outer == 1 && x->data && x->data == (const char *)y->data + at * inner * (int64_t)pfvm_dtype_size(y->dtype);
        for (o = 0; o < outer && !placed; o++)
            pfvm_tn_copy(y, (o * dims[a] + at) * inner, x, o * chunk, chunk);
        at += x->dims[a];
    }
    return PFVM_OK;
}

/* Split sizes given by the `split` attribute (before opset 13) or input 1:
 * the count, -1 when none are given, -2 when the input's contents are
 * unknown (inference) or invalid. */
static int pfvm__tn_split_given(const pfvm_node *n, const pfvm_ival *iv, const pfvm_tensor *t, int64_t *sizes)
{
    const int64_t *a;
    int cnt = pfvm_node_attr_ints(n, "split", &a), i;
    if (cnt >= 0) {
        if (cnt > PFVM__TN_MAXV)
            return -2;
        for (i = 0; i < cnt; i++)
            sizes[i] = a[i];
        return cnt;
    }
    if (iv)
        return (cnt = pfvm_ival_ints(iv, sizes, PFVM__TN_MAXV)) < 0 ? -2 : cnt;
    if (t)
        return (cnt = pfvm__tn_kints(t, sizes, PFVM__TN_MAXV)) < 0 ? -2 : cnt;
    return -1;
}

/* Concrete sizes of the n parts of an axis of length dim. */
static pfvm_code pfvm__tn_split_sizes(const pfvm_node *n, int parts, const int64_t *given, int n_given, int64_t dim,
                                      int64_t *sizes, pfvm_status *st)
{
    int64_t sum = 0, chunk;
    int j;
    if (n_given >= 0) {
        if (n_given != parts)
            return pfvm__fail(st, PFVM_ERR_INVALID, "split has %d entries for %d outputs", n_given, parts);
        for (j = 0; j < parts; j++) {
            if (given[j] < 0 || !pfvm__add_i64(sum, given[j], &sum))
                return pfvm__fail(st, PFVM_ERR_INVALID, "split entry %d is %lld", j, (long long)given[j]);
            sizes[j] = given[j];
        }
        if (sum != dim)
            return pfvm__fail(st, PFVM_ERR_SHAPE, "split sizes add up to %lld, the axis has %lld", (long long)sum,
                              (long long)dim);
        return PFVM_OK;
    }
    if (n->opset >= 18 && pfvm_node_attr(n, "num_outputs")) {
        /* ceil(dim / parts) each, the last one smaller */
        if (pfvm_node_attr_int(n, "num_outputs", 0) != parts)
            return pfvm__fail(st, PFVM_ERR_INVALID, "num_outputs differs from the %d outputs", parts);
        chunk = (dim + parts - 1) / parts;
        for (j = 0; j < parts; j++) {
            sizes[j] = j < parts - 1 ? chunk : dim - chunk * (parts - 1);
            if (sizes[j] < 0)
                return pfvm__fail(st, PFVM_ERR_SHAPE, "%lld does not split into %d parts", (long long)dim, parts);
        }
        return PFVM_OK;
    }
    if (dim % parts)
        return pfvm__fail(st, PFVM_ERR_SHAPE, "%lld does not split into %d equal parts", (long long)dim, parts);
    for (j = 0; j < parts; j++)
        sizes[j] = dim / parts;
    return PFVM_OK;
}

static pfvm_code pfvm__tn_infer_split(pfvm_ictx *c)
{
    const pfvm_shape *s = &c->in[0]->type.shape;
    int64_t given[PFVM__TN_MAXV], sizes[PFVM__TN_MAXV], dim;
    int a, j, n_given, parts = c->n_out;
    pfvm_dtype dt = c->in[0]->type.dtype;
    if (parts > PFVM__TN_MAXV)
        return pfvm__fail(c->st, PFVM_ERR_UNSUPPORTED, "more than %d outputs", PFVM__TN_MAXV);
    if (s->rank < 0) {
        for (j = 0; j < parts; j++)
            if (pfvm__tn_unknown(c, j, -1))
                return c->st ? c->st->code : PFVM_ERR_NOMEM;
        return PFVM_OK;
    }
    a = pfvm__axis(pfvm_node_attr_int(c->node, "axis", 0), s->rank);
    if (a < 0)
        return pfvm__fail(c->st, PFVM_ERR_INVALID, "axis is out of range for rank %d", s->rank);
    n_given = pfvm__tn_split_given(c->node, c->n_in > 1 ? c->in[1] : NULL, NULL, given);
    if (n_given == -2) {
        for (j = 0; j < parts; j++)
            if (pfvm__tn_unknown(c, j, s->rank))
                return c->st ? c->st->code : PFVM_ERR_NOMEM;
        return PFVM_OK;
    }
    if (pfvm_sym_is_const(s->dims[a], &dim)) {
        if (pfvm__tn_split_sizes(c->node, parts, given, n_given, dim, sizes, c->st))
            return c->st ? c->st->code : PFVM_ERR_SHAPE;
    } else if (n_given >= 0 && n_given != parts) {
        return pfvm__fail(c->st, PFVM_ERR_INVALID, "split has %d entries for %d outputs", n_given, parts);
    }
    for (j = 0; j < parts; j++) {
        pfvm_shape o = *s;
        if (pfvm_sym_is_const(s->dims[a], NULL) || n_given >= 0) {
            o.dims[a] = pfvm_sym_const(c->syms, pfvm_sym_is_const(s->dims[a], NULL) ? sizes[j] : given[j]);
        } else if (c->node->opset >= 18 && pfvm_node_attr(c->node, "num_outputs")) {
            const pfvm_sym *chunk = pfvm_sym_ceildiv(c->syms, s->dims[a], pfvm_sym_const(c->syms, parts));
            o.dims[a] = j < parts - 1 ? chunk
                                      : pfvm_sym_sub(c->syms, s->dims[a], pfvm_sym_muli(c->syms, chunk, parts - 1));
        } else {
            o.dims[a] = pfvm_sym_div(c->syms, s->dims[a], pfvm_sym_const(c->syms, parts));
        }
        if (pfvm__tn_set(c, j, dt, &o))
            return c->st ? c->st->code : PFVM_ERR_SHAPE;
    }
    return PFVM_OK;
}

static pfvm_code pfvm__tn_k_split(pfvm_kctx *k)
{
    const pfvm_tensor *x = k->in[0];
    int64_t given[PFVM__TN_MAXV], sizes[PFVM__TN_MAXV], at = 0, outer = 1, inner = 1, o, dims[PFVM_MAX_RANK];
    int a = pfvm__axis(pfvm_node_attr_int(k->node, "axis", 0), x->rank), j, d, n_given;
    if (pfvm_tn_check_inputs(k))
        return pfvm__tn_code(k, PFVM_ERR_INVALID);
    if (a < 0 || k->n_out > PFVM__TN_MAXV)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "axis is out of range for rank %d", x->rank);
    n_given = pfvm__tn_split_given(k->node, NULL, k->n_in > 1 ? k->in[1] : NULL, given);
    if (n_given == -2)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "split must be a 1-D integer tensor");
    if (pfvm__tn_split_sizes(k->node, k->n_out, given, n_given, x->dims[a], sizes, k->st))
        return pfvm__tn_code(k, PFVM_ERR_SHAPE);
    for (d = 0; d < a; d++)
        outer *= x->dims[d];
    for (d = a + 1; d < x->rank; d++)
        inner *= x->dims[d];
    memcpy(dims, x->dims, sizeof(int64_t) * (size_t)x->rank);
    for (j = 0; j < k->n_out; j++) {
        dims[a] = sizes[j];
        if (k->out[j]) {
            if (pfvm_tn_output(k, j, x->dtype, x->rank, dims))
                return pfvm__tn_code(k, PFVM_ERR_NOMEM);
            for (o = 0; o < outer; o++)
                pfvm_tn_copy(k->out[j], o * sizes[j] * inner, x, (o * x->dims[a] + at) * inner, sizes[j] * inner);
        }
        at += sizes[j];
    }
    return PFVM_OK;
}

/* ---- Slice ---------------------------------------------------------------------------------- */

typedef struct pfvm__tn_slice {
    int64_t start[PFVM_MAX_RANK], step[PFVM_MAX_RANK], len[PFVM_MAX_RANK];
} pfvm__tn_slice;

/* Resolves starts/ends/axes/steps against concrete dims (Python slice
 * rules: negative counts from the end, then clamped). */
static pfvm_code pfvm__tn_slice_plan(const int64_t *dims, int rank, const int64_t *starts, const int64_t *ends,
                                     const int64_t *axes, const int64_t *steps, int n, pfvm__tn_slice *p,
                                     pfvm_status *st)
{
    int i, seen[PFVM_MAX_RANK] = {0};
    for (i = 0; i < rank; i++) {
        p->start[i] = 0;
        p->step[i] = 1;
        p->len[i] = dims[i];
    }
    for (i = 0; i < n; i++) {
        int a = pfvm__axis(axes[i], rank);
        int64_t d, s, e, step = steps[i];
        if (a < 0 || seen[a])
            return pfvm__fail(st, PFVM_ERR_INVALID, "axis %lld is out of range for rank %d or repeated", (long long)axes[i],
                              rank);
        if (step == 0 || step == INT64_MIN)
            return pfvm__fail(st, PFVM_ERR_INVALID, "step %lld is not valid", (long long)step);
        seen[a] = 1;
        d = dims[a];
        s = starts[i];
        e = ends[i];
        if (s < 0)
            s = s < -d ? -1 : s + d;
        if (e < 0)
            e = e < -d ? -1 : e + d;
        if (step > 0) {
            s = s < 0 ? 0 : s > d ? d : s;
            e = e < 0 ? 0 : e > d ? d : e;
            p->len[a] = e > s ? (e - s - 1) / step + 1 : 0;
        } else {
            s = s < 0 ? -1 : s > d - 1 ? d - 1 : s;
            e = e < -1 ? -1 : e > d - 1 ? d - 1 : e;
            p->len[a] = s > e ? (s - e - 1) / -step + 1 : 0;
        }
        p->start[a] = s;
        p->step[a] = step;
    }
    return PFVM_OK;
}

/* Huge constants are "to the end" / "from the start" markers. */
#define PFVM__TN_HUGE (INT64_MAX / 4)

/* A slice bound clamped into the axis: [0, D] walking forward, [-1, D-1]
 * walking backward; NULL when a symbolic bound's sign is unknown. */
static const pfvm_sym *pfvm__tn_slice_bound(pfvm_ictx *c, const pfvm_sym *D, const pfvm_sym *v, int fwd)
{
    pfvm_symtab *t = c->syms;
    const pfvm_sym *hi = fwd ? D : pfvm_sym_addi(t, D, -1);
    int64_t x;
    if (!hi || !v)
        return NULL;
    if (pfvm_sym_is_const(v, &x)) {
        if (x >= PFVM__TN_HUGE)
            return hi;
        if (x <= -PFVM__TN_HUGE)
            return pfvm_sym_const(t, fwd ? 0 : -1);
        if (x < 0) {
            const pfvm_sym *y = pfvm_sym_addi(t, D, x);
            return y ? pfvm_sym_max(t, pfvm_sym_const(t, fwd ? 0 : -1), y) : NULL;
        }
        return pfvm_sym_min(t, hi, v);
    }
    return pfvm_sym_proven_nonneg(v) ? pfvm_sym_min(t, hi, v) : NULL;
}

/* A bound that is known to be >= 0 and not an end marker. */
static int pfvm__tn_slice_plain(const pfvm_sym *v)
{
    int64_t x;
    if (!v)
        return 0;
    if (pfvm_sym_is_const(v, &x))
        return x >= 0 && x < PFVM__TN_HUGE;
    return pfvm_sym_proven_nonneg(v);
}

/* Length of one sliced axis of symbolic length D. */
static const pfvm_sym *pfvm__tn_slice_len(pfvm_ictx *c, const pfvm_sym *D, const pfvm_sym *s, const pfvm_sym *e,
                                          int64_t step)
{
    pfvm_symtab *t = c->syms;
    const pfvm_sym *lo, *hi, *diff;
    /* The lower bound needs no clamp when it is a plain index: the upper
     * one is clamped into the axis, so a lower bound past the end only
     * makes the difference negative, and max(0, .) handles that. */
    if (step > 0) {
        lo = pfvm__tn_slice_plain(s) ? s : pfvm__tn_slice_bound(c, D, s, 1);
        hi = pfvm__tn_slice_bound(c, D, e, 1);
    } else {
        lo = pfvm__tn_slice_plain(e) ? e : pfvm__tn_slice_bound(c, D, e, 0);
        hi = pfvm__tn_slice_bound(c, D, s, 0);
    }
    if (!lo || !hi)
        return NULL;
    diff = pfvm_sym_sub(t, hi, lo);
    if (diff && (step > 1 || step < -1))
        diff = pfvm_sym_ceildiv(t, diff, pfvm_sym_const(t, step > 0 ? step : -step));
    return diff ? pfvm_sym_max(t, pfvm_sym_const(t, 0), diff) : NULL;
}

/* Slice's parameters for inference (starts and ends may be symbolic, axes
 * and steps must be constants): the count, -1 when unknown, -2 invalid. */
static int pfvm__tn_slice_iargs(pfvm_ictx *c, const pfvm_sym **starts, const pfvm_sym **ends, int64_t *axes,
                                int64_t *steps)
{
    int n, m, i;
    if (c->node->opset < 10) {
        const int64_t *s, *e, *a;
        n = pfvm_node_attr_ints(c->node, "starts", &s);
        if (n < 0 || n > PFVM__TN_MAXV || pfvm_node_attr_ints(c->node, "ends", &e) != n)
            return -2;
        m = pfvm_node_attr_ints(c->node, "axes", &a);
        if (m >= 0 && m != n)
            return -2;
        for (i = 0; i < n; i++) {
            starts[i] = pfvm_sym_const(c->syms, s[i]);
            ends[i] = pfvm_sym_const(c->syms, e[i]);
            axes[i] = m >= 0 ? a[i] : i;
            steps[i] = 1;
        }
        return n;
    }
    n = pfvm__tn_in_syms(c, 1, starts, PFVM__TN_MAXV);
    m = pfvm__tn_in_syms(c, 2, ends, PFVM__TN_MAXV);
    if (n < 0 || m < 0)
        return -1;
    if (n != m)
        return -2;
    for (i = 0; i < n; i++) {
        axes[i] = i;
        steps[i] = 1;
    }
    if (c->n_in > 3 && c->in[3] && (m = pfvm__tn_in_ints(c, 3, axes)) != n)
        return m < 0 ? -1 : -2;
    if (c->n_in > 4 && c->in[4] && (m = pfvm__tn_in_ints(c, 4, steps)) != n)
        return m < 0 ? -1 : -2;
    return n;
}

/* Slices of shape vectors keep their symbolic contents. */
static pfvm_code pfvm__tn_slice_sym(pfvm_ictx *c, const pfvm_sym **starts, const pfvm_sym **ends, const int64_t *axes,
                                    const int64_t *steps, int n)
{
    const pfvm_sym *data[PFVM__TN_MAXV], *v[PFVM__TN_MAXV];
    int64_t s[PFVM__TN_MAXV], e[PFVM__TN_MAXV], dim, j;
    pfvm__tn_slice p;
    int len = pfvm__tn_in_syms(c, 0, data, PFVM__TN_MAXV), i;
    pfvm_status quiet;
    if (len < 0 || c->in[0]->type.shape.rank != 1 || !pfvm_dtype_is_int(c->in[0]->type.dtype))
        return PFVM_OK;
    for (i = 0; i < n; i++)
        if (!pfvm_sym_is_const(starts[i], &s[i]) || !pfvm_sym_is_const(ends[i], &e[i]))
            return PFVM_OK;
    dim = len;
    if (pfvm__tn_slice_plan(&dim, 1, s, e, axes, steps, n, &p, &quiet))
        return PFVM_OK;
    for (j = 0; j < p.len[0]; j++)
        v[j] = data[p.start[0] + j * p.step[0]];
    return pfvm_ival_set_sym(c, c->out[0], v, (int)p.len[0]);
}

static pfvm_code pfvm__tn_infer_slice(pfvm_ictx *c)
{
    const pfvm_shape *s = &c->in[0]->type.shape;
    const pfvm_sym *starts[PFVM__TN_MAXV], *ends[PFVM__TN_MAXV];
    int64_t axes[PFVM__TN_MAXV], steps[PFVM__TN_MAXV];
    int n, i, seen[PFVM_MAX_RANK] = {0};
    pfvm_shape out;
    if (s->rank < 0)
        return pfvm__tn_unknown(c, 0, -1);
    n = pfvm__tn_slice_iargs(c, starts, ends, axes, steps);
    if (n == -2)
        return pfvm__fail(c->st, PFVM_ERR_INVALID, "starts, ends, axes and steps must have equal lengths");
    if (n < 0)
        return pfvm__tn_unknown(c, 0, s->rank);
    out = *s;
    for (i = 0; i < n; i++) {
        int a = pfvm__axis(axes[i], s->rank);
        if (a < 0 || seen[a])
            return pfvm__fail(c->st, PFVM_ERR_INVALID, "axis %lld is out of range for rank %d or repeated",
                              (long long)axes[i], s->rank);
        if (steps[i] == 0 || steps[i] == INT64_MIN)
            return pfvm__fail(c->st, PFVM_ERR_INVALID, "step %lld is not valid", (long long)steps[i]);
        seen[a] = 1;
        out.dims[a] = pfvm__tn_slice_len(c, s->dims[a], starts[i], ends[i], steps[i]);
        if (!out.dims[a])
            return pfvm__tn_unknown(c, 0, s->rank);
    }
    if (pfvm__tn_set(c, 0, c->in[0]->type.dtype, &out))
        return c->st ? c->st->code : PFVM_ERR_SHAPE;
    return pfvm__tn_slice_sym(c, starts, ends, axes, steps, n);
}

/* Slice's parameters for a run. */
static int pfvm__tn_slice_kargs(pfvm_kctx *k, int64_t *starts, int64_t *ends, int64_t *axes, int64_t *steps)
{
    int n, m, i;
    if (k->node->opset < 10) {
        const int64_t *s, *e, *a;
        n = pfvm_node_attr_ints(k->node, "starts", &s);
        if (n < 0 || n > PFVM__TN_MAXV || pfvm_node_attr_ints(k->node, "ends", &e) != n)
            return -1;
        m = pfvm_node_attr_ints(k->node, "axes", &a);
        if (m >= 0 && m != n)
            return -1;
        for (i = 0; i < n; i++) {
            starts[i] = s[i];
            ends[i] = e[i];
            axes[i] = m >= 0 ? a[i] : i;
            steps[i] = 1;
        }
        return n;
    }
    n = pfvm__tn_kints(k->in[1], starts, PFVM__TN_MAXV);
    if (n < 0 || pfvm__tn_kints(k->in[2], ends, PFVM__TN_MAXV) != n)
        return -1;
    for (i = 0; i < n; i++) {
        axes[i] = i;
        steps[i] = 1;
    }
    if (k->n_in > 3 && k->in[3] && pfvm__tn_kints(k->in[3], axes, PFVM__TN_MAXV) != n)
        return -1;
    if (k->n_in > 4 && k->in[4] && pfvm__tn_kints(k->in[4], steps, PFVM__TN_MAXV) != n)
        return -1;
    return n;
}

static pfvm_code pfvm__tn_k_slice(pfvm_kctx *k)
{
    const pfvm_tensor *x = k->in[0];
    int64_t starts[PFVM__TN_MAXV], ends[PFVM__TN_MAXV], axes[PFVM__TN_MAXV], steps[PFVM__TN_MAXV], xs[PFVM_MAX_RANK];
    int n, d;
    pfvm__tn_slice p;
    pfvm_tn_walk w;
    if (pfvm_tn_check_inputs(k))
        return pfvm__tn_code(k, PFVM_ERR_INVALID);
    n = pfvm__tn_slice_kargs(k, starts, ends, axes, steps);
    if (n < 0)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID,
                             "starts, ends, axes and steps must be integer vectors of equal lengths");
    if (pfvm__tn_slice_plan(x->dims, x->rank, starts, ends, axes, steps, n, &p, k->st))
        return pfvm__tn_code(k, PFVM_ERR_INVALID);
    if (pfvm_tn_output(k, 0, x->dtype, x->rank, p.len))
        return pfvm__tn_code(k, PFVM_ERR_NOMEM);
    pfvm__tn_strides(x->dims, x->rank, xs);
    pfvm__tn_walk_init(&w, x->rank, p.len);
    for (d = 0; d < x->rank; d++) {
        if (p.len[d] == 0)
            return PFVM_OK;
        w.off += p.start[d] * xs[d];
        /* a one-element axis never steps (its step may be huge) */
        w.stride[d] = p.len[d] > 1 ? p.step[d] * xs[d] : 0;
    }
    return pfvm_tn_copy_walk(k, k->out[0], 0, x, &w);
}

/* ---- Gather ------------------------------------------------------------------------------------ */

static pfvm_code pfvm__tn_infer_gather(pfvm_ictx *c)
{
    const pfvm_shape *s = &c->in[0]->type.shape, *is = &c->in[1]->type.shape;
    const pfvm_sym *data[PFVM__TN_MAXV], *v[PFVM__TN_MAXV];
    int64_t idx[PFVM__TN_MAXV], dim;
    pfvm_shape out;
    int a, i, n, len;
    if (c->in[1]->type.dtype != PFVM_UNDEFINED && c->in[1]->type.dtype != PFVM_INT64 && c->in[1]->type.dtype != PFVM_INT32)
        return pfvm__fail(c->st, PFVM_ERR_INVALID, "indices must be int32 or int64, not %s", pfvm_dtype_name(c->in[1]->type.dtype));
    if (s->rank < 0 || is->rank < 0)
        return pfvm__tn_unknown(c, 0, -1);
    a = pfvm__axis(pfvm_node_attr_int(c->node, "axis", 0), s->rank);
    if (a < 0)
        return pfvm__fail(c->st, PFVM_ERR_INVALID, "axis is out of range for rank %d", s->rank);
    if (s->rank - 1 + is->rank > PFVM_MAX_RANK)
        return pfvm__fail(c->st, PFVM_ERR_UNSUPPORTED, "rank %d exceeds PFVM_MAX_RANK", s->rank - 1 + is->rank);
    out.rank = 0;
    for (i = 0; i < a; i++)
        out.dims[out.rank++] = s->dims[i];
    for (i = 0; i < is->rank; i++)
        out.dims[out.rank++] = is->dims[i];
    for (i = a + 1; i < s->rank; i++)
        out.dims[out.rank++] = s->dims[i];
    n = pfvm__tn_in_ints(c, 1, idx);
    if (n >= 0 && pfvm_sym_is_const(s->dims[a], &dim))
        for (i = 0; i < n; i++)
            if (idx[i] < -dim || idx[i] >= dim)
                return pfvm__fail(c->st, PFVM_ERR_RANGE, "index %lld is out of range for a dimension of %lld",
                                  (long long)idx[i], (long long)dim);
    if (pfvm__tn_set(c, 0, c->in[0]->type.dtype, &out))
        return c->st ? c->st->code : PFVM_ERR_SHAPE;
    /* picking entries of a shape vector */
    if (s->rank != 1 || n < 0 || !pfvm_dtype_is_int(c->in[0]->type.dtype) ||
        (len = pfvm__tn_in_syms(c, 0, data, PFVM__TN_MAXV)) < 0)
        return PFVM_OK;
    for (i = 0; i < n; i++) {
        int64_t j = idx[i] < 0 ? idx[i] + len : idx[i];
        if (j < 0 || j >= len)
            return pfvm__fail(c->st, PFVM_ERR_RANGE, "index %lld is out of range for %d entries", (long long)idx[i], len);
        v[i] = data[j];
    }
    return pfvm_ival_set_sym(c, c->out[0], v, n);
}

static pfvm_code pfvm__tn_k_gather(pfvm_kctx *k)
{
    const pfvm_tensor *x = k->in[0], *ix = k->in[1];
    int a = pfvm__axis(pfvm_node_attr_int(k->node, "axis", 0), x->rank), d, r = 0;
    int64_t outer = 1, inner = 1, n = pfvm_tensor_numel(ix), o, i, dim, dims[PFVM_MAX_RANK];
    if (pfvm_tn_check_inputs(k))
        return pfvm__tn_code(k, PFVM_ERR_INVALID);
    if (a < 0 || !pfvm_dtype_is_int(ix->dtype) || x->rank - 1 + ix->rank > PFVM_MAX_RANK)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "axis out of range, indices not integers, or rank too large");
    dim = x->dims[a];
    for (d = 0; d < a; d++)
        outer *= (dims[r++] = x->dims[d]);
    for (d = 0; d < ix->rank; d++)
        dims[r++] = ix->dims[d];
    for (d = a + 1; d < x->rank; d++)
        inner *= (dims[r++] = x->dims[d]);
    if (pfvm_tn_output(k, 0, x->dtype, r, dims))
        return pfvm__tn_code(k, PFVM_ERR_NOMEM);
    for (i = 0; i < n; i++)
        if (pfvm_tn_index(ix, i, dim) < 0)
            return pfvm__op_fail(k->st, k->node, PFVM_ERR_RANGE, "index %lld is out of range for a dimension of %lld",
                                 (long long)pfvm_tensor_get_i64(ix, i), (long long)dim);
    for (o = 0; o < outer; o++)
        for (i = 0; i < n; i++)
            pfvm_tn_copy(k->out[0], (o * n + i) * inner, x, (o * dim + pfvm_tn_index(ix, i, dim)) * inner, inner);
    return PFVM_OK;
}

/* ---- Expand, Tile --------------------------------------------------------------------------- */

static pfvm_code pfvm__tn_infer_expand(pfvm_ictx *c)
{
    const pfvm_sym *v[PFVM__TN_MAXV];
    const pfvm_shape *shapes[2];
    pfvm_shape target, out;
    int n = pfvm__tn_in_syms(c, 1, v, PFVM__TN_MAXV), i;
    if (c->in[1]->type.shape.rank > 1)
        return pfvm__fail(c->st, PFVM_ERR_SHAPE, "the shape input must be 1-D");
    if (n > PFVM_MAX_RANK)
        return pfvm__fail(c->st, PFVM_ERR_UNSUPPORTED, "target rank %d exceeds PFVM_MAX_RANK", n);
    if (n < 0 || c->in[0]->type.shape.rank < 0)
        return pfvm__tn_unknown(c, 0, -1);
    target.rank = n;
    for (i = 0; i < n; i++)
        target.dims[i] = v[i];
    shapes[0] = &c->in[0]->type.shape;
    shapes[1] = &target;
    if (pfvm_infer_broadcast(c, shapes, 2, &out))
        return c->st ? c->st->code : PFVM_ERR_SHAPE;
    return pfvm__tn_set(c, 0, c->in[0]->type.dtype, &out);
}

static pfvm_code pfvm__tn_k_expand(pfvm_kctx *k)
{
    const pfvm_tensor *x = k->in[0];
    int64_t v[PFVM_MAX_RANK], dims[PFVM_MAX_RANK], xs[PFVM_MAX_RANK];
    int n, r, d;
    pfvm_tn_walk w;
    if (pfvm_tn_check_inputs(k))
        return pfvm__tn_code(k, PFVM_ERR_INVALID);
    n = pfvm__tn_kints(k->in[1], v, PFVM_MAX_RANK);
    if (n < 0)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "shape must be at most %d integers", PFVM_MAX_RANK);
    r = n > x->rank ? n : x->rank;
    pfvm__tn_strides(x->dims, x->rank, xs);
    memset(&w, 0, sizeof w);
    w.rank = r;
    for (d = 0; d < r; d++) {
        int xd = d - (r - x->rank), td = d - (r - n);
        int64_t a = xd >= 0 ? x->dims[xd] : 1, b = td >= 0 ? v[td] : 1;
        if (b < 0 || (a != b && a != 1 && b != 1))
            return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "cannot broadcast dimension %lld to %lld", (long long)a,
                                 (long long)b);
        w.dims[d] = dims[d] = a == 1 ? b : a;
        w.stride[d] = xd >= 0 && a != 1 ? xs[xd] : 0;
    }
    if (pfvm_tn_output(k, 0, x->dtype, r, dims))
        return pfvm__tn_code(k, PFVM_ERR_NOMEM);
    return pfvm_tn_copy_walk(k, k->out[0], 0, x, &w);
}

static pfvm_code pfvm__tn_infer_tile(pfvm_ictx *c)
{
    const pfvm_shape *s = &c->in[0]->type.shape;
    const pfvm_sym *v[PFVM__TN_MAXV];
    int n = pfvm__tn_in_syms(c, 1, v, PFVM__TN_MAXV), i;
    pfvm_shape out;
    if (s->rank < 0 || n < 0)
        return pfvm__tn_unknown(c, 0, s->rank);
    if (n != s->rank)
        return pfvm__fail(c->st, PFVM_ERR_SHAPE, "repeats has %d entries for rank %d", n, s->rank);
    out = *s;
    for (i = 0; i < n; i++) {
        int64_t r;
        if (pfvm_sym_is_const(v[i], &r) && r < 0)
            return pfvm__fail(c->st, PFVM_ERR_INVALID, "repeat %lld is negative", (long long)r);
        out.dims[i] = pfvm_sym_mul(c->syms, s->dims[i], v[i]);
    }
    return pfvm__tn_set(c, 0, c->in[0]->type.dtype, &out);
}

static pfvm_code pfvm__tn_k_tile(pfvm_kctx *k)
{
    const pfvm_tensor *x = k->in[0];
    int64_t rep[PFVM_MAX_RANK], dims[PFVM_MAX_RANK], xs[PFVM_MAX_RANK];
    int d, r = x->rank;
    pfvm_tn_walk w;
    if (pfvm_tn_check_inputs(k))
        return pfvm__tn_code(k, PFVM_ERR_INVALID);
    if (pfvm__tn_kints(k->in[1], rep, PFVM_MAX_RANK) != r)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "repeats must be %d integers", r);
    pfvm__tn_strides(x->dims, r, xs);
    /* each output dim walks (repeat, position): the repeat re-reads x */
    memset(&w, 0, sizeof w);
    w.rank = 2 * r;
    for (d = 0; d < r; d++) {
        if (rep[d] < 0 || !pfvm__mul_i64(x->dims[d], rep[d], &dims[d]))
            return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "repeat %lld is not valid", (long long)rep[d]);
        w.dims[2 * d] = rep[d];
        w.dims[2 * d + 1] = x->dims[d];
        w.stride[2 * d + 1] = xs[d];
    }
    if (pfvm_tn_output(k, 0, x->dtype, r, dims))
        return pfvm__tn_code(k, PFVM_ERR_NOMEM);
    return pfvm_tn_copy_walk(k, k->out[0], 0, x, &w);
}

/* ---- Pad --------------------------------------------------------------------------------------- */

enum { PFVM__TN_PAD_CONSTANT, PFVM__TN_PAD_EDGE, PFVM__TN_PAD_REFLECT, PFVM__TN_PAD_WRAP };

static int pfvm__tn_pad_mode(const pfvm_node *n)
{
    const char *m = pfvm_node_attr_string(n, "mode", "constant");
    return !strcmp(m, "constant") ? PFVM__TN_PAD_CONSTANT
         : !strcmp(m, "edge")     ? PFVM__TN_PAD_EDGE
         : !strcmp(m, "reflect")  ? PFVM__TN_PAD_REFLECT
         : !strcmp(m, "wrap")     ? PFVM__TN_PAD_WRAP
                                  : -1;
}

/* Spreads pads given for `axes` (opset 18) over every axis of a rank:
 * out[a] and out[a + rank] are the begin and end pads of axis a. */
static pfvm_code pfvm__tn_pad_spread(pfvm_status *st, const int64_t *axes, int n_axes, int rank, int *where)
{
    int i;
    for (i = 0; i < rank; i++)
        where[i] = -1;
    for (i = 0; i < n_axes; i++) {
        int a = pfvm__axis(axes[i], rank);
        if (a < 0 || where[a] >= 0)
            return pfvm__fail(st, PFVM_ERR_INVALID, "pad axis %lld is out of range for rank %d or repeated",
                              (long long)axes[i], rank);
        where[a] = i;
    }
    return PFVM_OK;
}

static pfvm_code pfvm__tn_infer_pad(pfvm_ictx *c)
{
    const pfvm_shape *s = &c->in[0]->type.shape;
    const pfvm_sym *pads[PFVM__TN_MAXV];
    int64_t axes[PFVM__TN_MAXV];
    int n, n_axes, i, where[PFVM_MAX_RANK];
    pfvm_shape out;
    if (pfvm__tn_pad_mode(c->node) < 0)
        return pfvm__fail(c->st, PFVM_ERR_UNSUPPORTED, "mode '%s' is not supported",
                          pfvm_node_attr_string(c->node, "mode", ""));
    if (s->rank < 0)
        return pfvm__tn_unknown(c, 0, -1);
    if (c->node->opset < 11) {
        const int64_t *a;
        n = pfvm_node_attr_ints(c->node, "pads", &a);
        for (i = 0; i < n && i < PFVM__TN_MAXV; i++)
            pads[i] = pfvm_sym_const(c->syms, a[i]);
    } else {
        n = pfvm__tn_in_syms(c, 1, pads, PFVM__TN_MAXV);
    }
    n_axes = s->rank;
    for (i = 0; i < s->rank; i++)
        axes[i] = i;
    if (c->n_in > 3 && c->in[3] && (n_axes = pfvm__tn_in_ints(c, 3, axes)) < 0)
        return pfvm__tn_unknown(c, 0, s->rank);
    if (n < 0 && c->node->opset >= 11)
        return pfvm__tn_unknown(c, 0, s->rank);
    if (n != 2 * n_axes)
        return pfvm__fail(c->st, PFVM_ERR_INVALID, "pads has %d entries for %d axes", n, n_axes);
    if (pfvm__tn_pad_spread(c->st, axes, n_axes, s->rank, where))
        return c->st ? c->st->code : PFVM_ERR_INVALID;
    out = *s;
    for (i = 0; i < s->rank; i++) {
        const pfvm_sym *sum;
        if (where[i] < 0)
            continue;
        sum = pads[where[i]] && pads[where[i] + n_axes] ? pfvm_sym_add(c->syms, pads[where[i]], pads[where[i] + n_axes])
                                                       : NULL;
        out.dims[i] = sum ? pfvm_sym_add(c->syms, s->dims[i], sum) : NULL;
    }
    return pfvm__tn_set(c, 0, c->in[0]->type.dtype, &out);
}

/* Source index of padded position i on an axis of n elements; -1 for the
 * constant. */
static int64_t pfvm__tn_pad_src(int64_t i, int64_t n, int mode)
{
    int64_t p;
    if (i >= 0 && i < n)
        return i;
    if (mode == PFVM__TN_PAD_CONSTANT || n == 0)
        return -1;
    if (mode == PFVM__TN_PAD_EDGE)
        return i < 0 ? 0 : n - 1;
    if (mode == PFVM__TN_PAD_WRAP) {
        i %= n;
        return i < 0 ? i + n : i;
    }
    if (n == 1)
        return 0;
    /* reflect without repeating the edge: period 2(n-1) */
    p = 2 * (n - 1);
    i %= p;
    if (i < 0)
        i += p;
    return i >= n ? p - i : i;
}

/* Every axis's begin/end pads for this run (pads[a], pads[a + rank]). */
static pfvm_code pfvm__tn_pad_kpads(pfvm_kctx *k, int rank, int64_t *pads)
{
    int64_t given[PFVM__TN_MAXV], axes[PFVM__TN_MAXV];
    int n, n_axes = rank, i, where[PFVM_MAX_RANK];
    if (k->node->opset < 11) {
        const int64_t *a;
        n = pfvm_node_attr_ints(k->node, "pads", &a);
        for (i = 0; i < n && i < PFVM__TN_MAXV; i++)
            given[i] = a[i];
    } else {
        n = pfvm__tn_kints(k->in[1], given, PFVM__TN_MAXV);
    }
    for (i = 0; i < rank; i++)
        axes[i] = i;
    if (k->n_in > 3 && k->in[3] && (n_axes = pfvm__tn_kints(k->in[3], axes, PFVM__TN_MAXV)) < 0)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "axes must be integers");
    if (n != 2 * n_axes)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "pads has %d entries for %d axes", n, n_axes);
    if (pfvm__tn_pad_spread(k->st, axes, n_axes, rank, where))
        return pfvm__tn_code(k, PFVM_ERR_INVALID);
    for (i = 0; i < rank; i++) {
        pads[i] = where[i] < 0 ? 0 : given[where[i]];
        pads[i + rank] = where[i] < 0 ? 0 : given[where[i] + n_axes];
        if (pads[i] < -((int64_t)1 << 48) || pads[i] > ((int64_t)1 << 48) || pads[i + rank] < -((int64_t)1 << 48) ||
            pads[i + rank] > ((int64_t)1 << 48))
            return pfvm__op_fail(k->st, k->node, PFVM_ERR_RANGE, "pads of axis %d are out of range", i);
    }
    return PFVM_OK;
}

/* One padding value of the data's type, viewed as a one-element tensor. */
typedef union pfvm__tn_scalar {
    double d;
    int64_t i;
    const char *s;
    unsigned char b[16];
} pfvm__tn_scalar;

static pfvm_code pfvm__tn_pad_value(pfvm_kctx *k, const pfvm_tensor *x, pfvm__tn_scalar *buf, pfvm_tensor *cv)
{
    const pfvm_tensor *v = k->node->opset >= 11 && k->n_in > 2 ? k->in[2] : NULL;
    size_t es = pfvm_dtype_size(x->dtype);
    memset(buf, 0, sizeof *buf);
    memset(cv, 0, sizeof *cv);
    cv->kind = PFVM_KIND_TENSOR;
    cv->dtype = x->dtype;
    cv->data = buf;
    cv->nbytes = sizeof *buf;
    buf->s = x->dtype == PFVM_STRING ? "" : NULL;
    if (es > sizeof *buf)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_UNSUPPORTED, "%s data", pfvm_dtype_name(x->dtype));
    if (k->node->opset < 11) {
        if (x->dtype != PFVM_STRING)
            pfvm_red_store(cv, 0, pfvm_node_attr_float(k->node, "value", 0));
        return PFVM_OK;
    }
    if (!v || pfvm_tensor_numel(v) == 0)
        return PFVM_OK;
    if (v->dtype != x->dtype || pfvm_tensor_numel(v) != 1)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "constant_value must be one element of the data's type");
    memcpy(buf, v->data, es);
    if (x->dtype == PFVM_STRING && !buf->s)
        buf->s = "";
    return PFVM_OK;
}

static pfvm_code pfvm__tn_k_pad(pfvm_kctx *k)
{
    const pfvm_tensor *x = k->in[0];
    pfvm_tensor *y, cv;
    pfvm__tn_scalar cbuf;
    int64_t pads[2 * PFVM_MAX_RANK], xs[PFVM_MAX_RANK], dims[PFVM_MAX_RANK] = {0}, idx[PFVM_MAX_RANK] = {0};
    int64_t rows, row, W, n, pb, j0, j1, j;
    int d, r = x->rank, mode = pfvm__tn_pad_mode(k->node);
    if (pfvm_tn_check_inputs(k) || pfvm__tn_pad_kpads(k, r, pads) || pfvm__tn_pad_value(k, x, &cbuf, &cv))
        return pfvm__tn_code(k, PFVM_ERR_INVALID);
    if (mode < 0)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_UNSUPPORTED, "mode '%s' is not supported",
                             pfvm_node_attr_string(k->node, "mode", ""));
    for (d = 0; d < r; d++) {
        dims[d] = x->dims[d] + pads[d] + pads[d + r];
        if (dims[d] < 0)
            return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "pads make dimension %d negative", d);
        if (dims[d] > 0 && x->dims[d] == 0 && mode != PFVM__TN_PAD_CONSTANT)
            return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "cannot pad an empty axis in this mode");
    }
    if (pfvm_tn_output(k, 0, x->dtype, r, dims))
        return pfvm__tn_code(k, PFVM_ERR_NOMEM);
    y = k->out[0];
    if (r == 0) {
        pfvm_tn_copy(y, 0, x, 0, 1);
        return PFVM_OK;
    }
    pfvm__tn_strides(x->dims, r, xs);
    W = dims[r - 1];
    n = x->dims[r - 1];
    pb = pads[r - 1];
    rows = W ? pfvm_tensor_numel(y) / W : 0;
    /* the run of a row that comes straight from x: [j0, j1) */
    j0 = pb < 0 ? 0 : pb > W ? W : pb;
    j1 = pb + n < 0 ? 0 : pb + n > W ? W : pb + n;
    if (j1 < j0)
        j1 = j0;
    for (row = 0; row < rows; row++) {
        int64_t base = 0, o = row * W;
        int outside = 0;
        for (d = 0; d < r - 1; d++) {
            int64_t s = pfvm__tn_pad_src(idx[d] - pads[d], x->dims[d], mode);
            if (s < 0) {
                outside = 1;
                break;
            }
            base += s * xs[d];
        }
        for (j = 0; j < W; j++) {
            int64_t s;
            if (!outside && j == j0 && j1 > j0) {
                pfvm_tn_copy(y, o + j, x, base + j - pb, j1 - j0);
                j = j1 - 1;
                continue;
            }
            s = outside ? -1 : pfvm__tn_pad_src(j - pb, n, mode);
            if (s < 0)
                pfvm_tn_copy(y, o + j, &cv, 0, 1);
            else
                pfvm_tn_copy(y, o + j, x, base + s, 1);
        }
        for (d = r - 2; d >= 0; d--) {
            if (++idx[d] < dims[d])
                break;
            idx[d] = 0;
        }
    }
    return PFVM_OK;
}

/* ---- Range, Trilu ------------------------------------------------------------------------------ */

/* Element count of an integer range: max(0, ceil((limit - start) / delta)),
 * without overflow (counts past INT64_MAX saturate, and then fail as too
 * large to allocate); -1 when delta is 0. */
static int64_t pfvm__tn_range_count(int64_t start, int64_t limit, int64_t delta)
{
    uint64_t span, step;
    if (delta == 0)
        return -1;
    if (delta > 0 ? limit <= start : limit >= start)
        return 0;
    span = delta > 0 ? (uint64_t)limit - (uint64_t)start : (uint64_t)start - (uint64_t)limit;
    step = delta > 0 ? (uint64_t)delta : (uint64_t)(-(delta + 1)) + 1;
    span = span / step + (span % step != 0);
    return span > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)span;
}

static pfvm_code pfvm__tn_infer_range(pfvm_ictx *c)
{
    pfvm_dtype dt = c->in[0]->type.dtype;
    const pfvm_sym *v[3];
    pfvm_shape s;
    int i;
    s.rank = 1;
    for (i = 1; i < 3; i++)
        if (c->in[i]->type.dtype != dt && c->in[i]->type.dtype != PFVM_UNDEFINED && dt != PFVM_UNDEFINED)
            return pfvm__fail(c->st, PFVM_ERR_INVALID, "start, limit and delta must have one type");
    for (i = 0; i < 3; i++)
        if (c->in[i]->type.shape.rank > 0)
            return pfvm__fail(c->st, PFVM_ERR_SHAPE, "%s must be a scalar", i == 0 ? "start" : i == 1 ? "limit" : "delta");
    if (pfvm_dtype_is_int(dt)) {
        int64_t a, b, d;
        for (i = 0; i < 3; i++)
            if (pfvm__tn_in_syms(c, i, &v[i], 1) != 1)
                return pfvm_infer_unknown(c, 0, dt, 1);
        if (pfvm_sym_is_const(v[0], &a) && pfvm_sym_is_const(v[1], &b) && pfvm_sym_is_const(v[2], &d)) {
            if (d == 0)
                return pfvm__fail(c->st, PFVM_ERR_INVALID, "delta is 0");
            s.dims[0] = pfvm_sym_const(c->syms, pfvm__tn_range_count(a, b, d));
        } else if (pfvm_sym_is_const(v[2], &d) && d != 0 && d != INT64_MIN) {
            /* symbolic bounds: ceil((limit - start) / delta), at least 0 */
            const pfvm_sym *span = d > 0 ? pfvm_sym_sub(c->syms, v[1], v[0]) : pfvm_sym_sub(c->syms, v[0], v[1]);
            const pfvm_sym *len = span ? pfvm_sym_ceildiv(c->syms, span, pfvm_sym_const(c->syms, d > 0 ? d : -d)) : NULL;
            s.dims[0] = len ? pfvm_sym_max(c->syms, pfvm_sym_const(c->syms, 0), len) : NULL;
        } else {
            return pfvm_infer_unknown(c, 0, dt, 1);
        }
        if (!s.dims[0])
            return pfvm_infer_unknown(c, 0, dt, 1);
        return pfvm__tn_set(c, 0, dt, &s);
    }
    if (c->in[0]->value && c->in[1]->value && c->in[2]->value) {
        double start, limit, delta, n;
        if (pfvm_tensor_numel(c->in[0]->value) != 1 || pfvm_tensor_numel(c->in[1]->value) != 1 ||
            pfvm_tensor_numel(c->in[2]->value) != 1)
            return pfvm__fail(c->st, PFVM_ERR_SHAPE, "start, limit and delta must be scalars");
        start = pfvm_tensor_get_f64(c->in[0]->value, 0);
        limit = pfvm_tensor_get_f64(c->in[1]->value, 0);
        delta = pfvm_tensor_get_f64(c->in[2]->value, 0);
        if (delta == 0 || delta != delta)
            return pfvm__fail(c->st, PFVM_ERR_INVALID, "delta is %g", delta);
        n = ceil((limit - start) / delta);
        if (n > 1e12)
            return pfvm__fail(c->st, PFVM_ERR_RANGE, "too many elements");
        s.dims[0] = pfvm_sym_const(c->syms, n > 0 ? (int64_t)n : 0);
        return pfvm__tn_set(c, 0, dt, &s);
    }
    return pfvm_infer_unknown(c, 0, dt, 1);
}

static pfvm_code pfvm__tn_k_range(pfvm_kctx *k)
{
    const pfvm_tensor *a = k->in[0], *b = k->in[1], *d = k->in[2];
    pfvm_dtype dt = a->dtype;
    int64_t n, i;
    if (pfvm_tn_check_inputs(k))
        return pfvm__tn_code(k, PFVM_ERR_INVALID);
    if (pfvm_tensor_numel(a) != 1 || pfvm_tensor_numel(b) != 1 || pfvm_tensor_numel(d) != 1 || b->dtype != dt ||
        d->dtype != dt || !(pfvm_dtype_is_int(dt) || pfvm_dtype_is_float(dt)))
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "start, limit and delta must be numeric scalars of one type");
    if (pfvm_dtype_is_int(dt)) {
        int64_t s0 = pfvm_tensor_get_i64(a, 0), step = pfvm_tensor_get_i64(d, 0);
        n = pfvm__tn_range_count(s0, pfvm_tensor_get_i64(b, 0), step);
        if (n < 0)
            return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "delta is 0");
        if (pfvm_tn_output(k, 0, dt, 1, &n))
            return pfvm__tn_code(k, PFVM_ERR_NOMEM);
        /* start + i*delta stays between start and limit; unsigned
         * arithmetic gives its bits without signed overflow on the way */
        for (i = 0; i < n; i++) {
            uint64_t u = (uint64_t)s0 + (uint64_t)i * (uint64_t)step;
            pfvm_tn_store_i64(k->out[0], i, u <= (uint64_t)INT64_MAX ? (int64_t)u : -(int64_t)(~u) - 1);
        }
        return PFVM_OK;
    }
    {
        double start = pfvm_tensor_get_f64(a, 0), limit = pfvm_tensor_get_f64(b, 0), delta = pfvm_tensor_get_f64(d, 0);
        double cnt = ceil((limit - start) / delta);
        if (delta == 0 || cnt != cnt || cnt > 1e12)
            return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "delta %g gives no valid element count", delta);
        n = cnt > 0 ? (int64_t)cnt : 0;
        if (pfvm_tn_output(k, 0, dt, 1, &n))
            return pfvm__tn_code(k, PFVM_ERR_NOMEM);
        for (i = 0; i < n; i++)
            pfvm_red_store(k->out[0], i, start + (double)i * delta);
    }
    return PFVM_OK;
}

static pfvm_code pfvm__tn_infer_trilu(pfvm_ictx *c)
{
    const pfvm_shape *s = &c->in[0]->type.shape;
    if (s->rank >= 0 && s->rank < 2)
        return pfvm__fail(c->st, PFVM_ERR_SHAPE, "input must have rank >= 2, has %d", s->rank);
    if (c->n_in > 1 && c->in[1] && c->in[1]->type.shape.rank > 0)
        return pfvm__fail(c->st, PFVM_ERR_SHAPE, "k must be a scalar");
    return pfvm_infer_same_as_first(c);
}

/* Zeroes n elements (strings become empty). */
static void pfvm__tn_zero(pfvm_tensor *t, int64_t at, int64_t n)
{
    int64_t i;
    if (n <= 0)
        return;
    if (t->dtype != PFVM_STRING) {
        memset((char *)t->data + (size_t)at * pfvm_dtype_size(t->dtype), 0, (size_t)n * pfvm_dtype_size(t->dtype));
        return;
    }
    for (i = 0; i < n; i++) {
        char **d = (char **)t->data + at + i;
        pfvm__free(*d);
        *d = pfvm__strdup("");
    }
}

static pfvm_code pfvm__tn_k_trilu(pfvm_kctx *k)
{
    const pfvm_tensor *x = k->in[0], *kt = k->n_in > 1 ? k->in[1] : NULL;
    pfvm_tensor *y;
    int upper = pfvm_node_attr_int(k->node, "upper", 1) != 0;
    int64_t rows, cols, mats, m, i, diag = 0, lim;
    if (pfvm_tn_check_inputs(k))
        return pfvm__tn_code(k, PFVM_ERR_INVALID);
    if (x->rank < 2)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "input must have rank >= 2, has %d", x->rank);
    if (kt) {
        if (pfvm_tensor_numel(kt) != 1 || !pfvm_dtype_is_int(kt->dtype))
            return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "k must be one integer");
        diag = pfvm_tensor_get_i64(kt, 0);
    }
    if (pfvm_tn_output(k, 0, x->dtype, x->rank, x->dims))
        return pfvm__tn_code(k, PFVM_ERR_NOMEM);
    y = k->out[0];
    rows = x->dims[x->rank - 2];
    cols = x->dims[x->rank - 1];
    mats = rows && cols ? pfvm_tensor_numel(x) / (rows * cols) : 0;
    /* past these the diagonal changes nothing; clamping keeps i + diag exact */
    lim = rows + cols + 1;
    diag = diag < -lim ? -lim : diag > lim ? lim : diag;
    for (m = 0; m < mats; m++)
        for (i = 0; i < rows; i++) {
            int64_t row = (m * rows + i) * cols;
            /* kept columns [c0, c1): j >= i + k (upper) or j <= i + k (lower) */
            int64_t c0 = upper ? i + diag : 0, c1 = upper ? cols : i + diag + 1;
            c0 = c0 < 0 ? 0 : c0 > cols ? cols : c0;
            c1 = c1 < c0 ? c0 : c1 > cols ? cols : c1;
            pfvm__tn_zero(y, row, c0);
            pfvm_tn_copy(y, row + c0, x, row + c0, c1 - c0);
            pfvm__tn_zero(y, row + c1, cols - c1);
        }
    return PFVM_OK;
}

/* ---- simplify hooks (src/opi/rewrite.h) --------------------------------------------------- */

/* 1 when the hook should do its ordinary local rewrites. */
static int pfvm__tn_simplifying(const pfvm_rewrite *rw)
{
    return pfvm_rw_mode(rw) == PFVM_RW_SIMPLIFY && !pfvm_rw_request(rw);
}

/* Identity, Expand to the input's shape, Tile with repeats of 1: output 0
 * is input 0 when their types are proven equal. */
static pfvm_code pfvm__tn_simp_same(pfvm_rewrite *rw, pfvm_node *n)
{
    if (!pfvm__tn_simplifying(rw) || n->n_inputs < 1)
        return PFVM_OK;
    return pfvm_rw_forward(rw, n, 0, n->inputs[0]);
}

/* Dropout in inference (no training_mode, or a constant false) whose mask
 * nobody reads is its input. */
static pfvm_code pfvm__tn_simp_dropout(pfvm_rewrite *rw, pfvm_node *n)
{
    int64_t training = 0;
    if (!pfvm__tn_simplifying(rw))
        return PFVM_OK;
    if (n->opset < 7 && pfvm_node_attr_int(n, "is_test", 1) == 0)
        return PFVM_OK;
    if (n->opset >= 12 && n->n_inputs > 2 && n->inputs[2] &&
        (pfvm_rw_ints(rw, n->inputs[2], &training, 1) != 1 || training != 0))
        return PFVM_OK;
    if (!pfvm_rw_output_unused(rw, n, 1))
        return PFVM_OK;
    return pfvm_rw_forward(rw, n, 0, n->inputs[0]);
}

/* Reshape, Flatten, Squeeze, Unsqueeze and Identity only reinterpret the
 * row-major order: a chain of them is one Reshape. */
static int pfvm__tn_is_reshape(const pfvm_node *n)
{
    pfvm_kernel_fn k = n && n->op ? n->op->kernel : NULL;
    return k && (k == pfvm__tn_k_reshape || k == pfvm__tn_k_flatten || k == pfvm__tn_k_squeeze ||
                 k == pfvm__tn_k_unsqueeze || k == pfvm__tn_k_identity) && n->n_inputs >= 1 && n->inputs[0];
}

/* Reshape's shape input for turning a tensor of shape x into one of shape
 * y, with constants, 0 (copy x's dim at the same position) and at most one
 * -1; 0 when y cannot be written so. */
static int pfvm__tn_reshape_spec(const pfvm_shape *x, const pfvm_shape *y, int64_t *spec)
{
    int i, free_dim = -1;
    for (i = 0; i < y->rank; i++) {
        int64_t c, d;
        if (pfvm_sym_is_const(y->dims[i], &c) && c != 0) {
            spec[i] = c;
        } else if (i < x->rank && pfvm_sym_proven_eq(y->dims[i], x->dims[i])) {
            spec[i] = 0;
        } else if (pfvm_sym_is_const(y->dims[i], &c) && i < x->rank && pfvm_sym_is_const(x->dims[i], &d) && d == 0) {
            spec[i] = 0;
        } else if (free_dim < 0) {
            free_dim = i;
            spec[i] = -1;
        } else {
            return 0;
        }
    }
    return 1;
}

static pfvm_code pfvm__tn_simp_reshape(pfvm_rewrite *rw, pfvm_node *n)
{
    pfvm_value *root = n->inputs[0], *in[2];
    const pfvm_shape *ys = pfvm_rw_shape(rw, n->outputs[0]), *rs;
    int64_t spec[PFVM_MAX_RANK], have[PFVM_MAX_RANK];
    int depth = 0, is_reshape = n->op->kernel == pfvm__tn_k_reshape, i, same;
    pfvm_node *r;
    if (!pfvm__tn_simplifying(rw) || !ys || !pfvm_rw_shape(rw, root))
        return PFVM_OK;
    /* the output equals the input, or the input of a reshape before it */
    for (;;) {
        pfvm_node *p = pfvm_rw_producer(rw, root);
        if (pfvm_rw_same_type(rw, n->outputs[0], root))
            return pfvm_rw_forward(rw, n, 0, root);
        if (!pfvm__tn_is_reshape(p) || !pfvm_rw_shape(rw, p->inputs[0]) || depth >= 64)
            break;
        root = p->inputs[0];
        depth++;
    }
    /* one Reshape with a constant target replaces the chain, or a shape
     * computed at run time (Shape -> Gather -> Concat) */
    if (pfvm_rw_opset(rw, "") < 5 || (!depth && !is_reshape) || (is_reshape && n->opset < 5))
        return PFVM_OK;
    rs = pfvm_rw_shape(rw, root);
    if (!pfvm__tn_reshape_spec(rs, ys, spec))
        return PFVM_OK;
    if (!depth) {
        same = pfvm_rw_ints(rw, n->inputs[1], have, PFVM_MAX_RANK) == ys->rank;
        for (i = 0; same && i < ys->rank; i++)
            same = have[i] == spec[i];
        if (same)
            return PFVM_OK;
    }
    in[0] = root;
    if (!(in[1] = pfvm_rw_const_ints(rw, spec, ys->rank, "shape")))
        return pfvm_rw_code(rw);
    if (!(r = pfvm_rw_add_node(rw, "Reshape", in, 2, 1, n)) || pfvm_rw_infer_node(rw, r))
        return pfvm_rw_code(rw);
    return pfvm_rw_forward(rw, n, 0, r->outputs[0]);
}

/* Transpose by the identity permutation is its input; two transposes are
 * one (or none). */
static pfvm_code pfvm__tn_simp_transpose(pfvm_rewrite *rw, pfvm_node *n)
{
    const pfvm_shape *s = pfvm_rw_shape(rw, n->inputs[0]);
    pfvm_node *p = pfvm_rw_producer(rw, n->inputs[0]), *t;
    int perm[PFVM_MAX_RANK], inner[PFVM_MAX_RANK], i, ident = 1;
    int64_t q[PFVM_MAX_RANK];
    if (!pfvm__tn_simplifying(rw) || !s || !pfvm__tn_perm(n, s->rank, perm))
        return PFVM_OK;
    for (i = 0; i < s->rank; i++)
        ident &= perm[i] == i;
    if (ident)
        return pfvm_rw_forward(rw, n, 0, n->inputs[0]);
    if (!p || !p->op || p->op->kernel != pfvm__tn_k_transpose || !pfvm__tn_perm(p, s->rank, inner))
        return PFVM_OK;
    ident = 1;
    for (i = 0; i < s->rank; i++) {
        q[i] = inner[perm[i]];
        ident &= q[i] == i;
    }
    if (ident)
        return pfvm_rw_forward(rw, n, 0, p->inputs[0]);
    if (!(t = pfvm_rw_add_node(rw, "Transpose", p->inputs, 1, 1, n)) ||
        pfvm_node_set_attr_ints(t, "perm", q, s->rank, rw->st) || pfvm_rw_infer_node(rw, t))
        return pfvm_rw_code(rw);
    return pfvm_rw_forward(rw, n, 0, t->outputs[0]);
}

/* Pad with all-zero pads is its input. */
static pfvm_code pfvm__tn_simp_pad(pfvm_rewrite *rw, pfvm_node *n)
{
    int64_t pads[2 * PFVM_MAX_RANK];
    const int64_t *a;
    int cnt, i;
    if (!pfvm__tn_simplifying(rw))
        return PFVM_OK;
    if (n->opset < 11) {
        if ((cnt = pfvm_node_attr_ints(n, "pads", &a)) < 0 || cnt > 2 * PFVM_MAX_RANK)
            return PFVM_OK;
        for (i = 0; i < cnt; i++)
            pads[i] = a[i];
    } else if (n->n_inputs < 2 || (cnt = pfvm_rw_ints(rw, n->inputs[1], pads, 2 * PFVM_MAX_RANK)) < 0) {
        return PFVM_OK;
    }
    for (i = 0; i < cnt; i++)
        if (pads[i])
            return PFVM_OK;
    return pfvm_rw_forward(rw, n, 0, n->inputs[0]);
}

/* A Slice with unit steps whose output has the input's shape took
 * everything. */
static pfvm_code pfvm__tn_simp_slice(pfvm_rewrite *rw, pfvm_node *n)
{
    int64_t steps[PFVM__TN_MAXV];
    int cnt, i;
    if (!pfvm__tn_simplifying(rw))
        return PFVM_OK;
    if (n->opset >= 10 && n->n_inputs > 4 && n->inputs[4]) {
        if ((cnt = pfvm_rw_ints(rw, n->inputs[4], steps, PFVM__TN_MAXV)) < 0)
            return PFVM_OK;
        for (i = 0; i < cnt; i++)
            if (steps[i] != 1)
                return PFVM_OK;
    }
    return pfvm_rw_forward(rw, n, 0, n->inputs[0]);
}

/* One-input Concat. */
static pfvm_code pfvm__tn_simp_concat(pfvm_rewrite *rw, pfvm_node *n)
{
    if (!pfvm__tn_simplifying(rw) || n->n_inputs != 1)
        return PFVM_OK;
    return pfvm_rw_forward(rw, n, 0, n->inputs[0]);
}

/* ---- the table ----------------------------------------------------------------------------------- */

static const pfvm_attr_spec pfvm__tn_a_axis[] = {{"axis", PFVM_ATTR_INT, 0}, {NULL, PFVM_ATTR_UNDEFINED, 0}};
static const pfvm_attr_spec pfvm__tn_a_axis_req[] = {{"axis", PFVM_ATTR_INT, 1}, {NULL, PFVM_ATTR_UNDEFINED, 0}};
static const pfvm_attr_spec pfvm__tn_a_axes[] = {{"axes", PFVM_ATTR_INTS, 0}, {NULL, PFVM_ATTR_UNDEFINED, 0}};
static const pfvm_attr_spec pfvm__tn_a_unsqueeze1[] = {{"axes", PFVM_ATTR_INTS, 1}, {NULL, PFVM_ATTR_UNDEFINED, 0}};
static const pfvm_attr_spec pfvm__tn_a_reshape1[] = {{"shape", PFVM_ATTR_INTS, 0}, {NULL, PFVM_ATTR_UNDEFINED, 0}};
static const pfvm_attr_spec pfvm__tn_a_reshape[] = {{"allowzero", PFVM_ATTR_INT, 0}, {NULL, PFVM_ATTR_UNDEFINED, 0}};
static const pfvm_attr_spec pfvm__tn_a_transpose[] = {{"perm", PFVM_ATTR_INTS, 0}, {NULL, PFVM_ATTR_UNDEFINED, 0}};
static const pfvm_attr_spec pfvm__tn_a_split[] = {{"axis", PFVM_ATTR_INT, 0}, {"split", PFVM_ATTR_INTS, 0},
                                                  {"num_outputs", PFVM_ATTR_INT, 0}, {NULL, PFVM_ATTR_UNDEFINED, 0}};
static const pfvm_attr_spec pfvm__tn_a_slice1[] = {{"starts", PFVM_ATTR_INTS, 1}, {"ends", PFVM_ATTR_INTS, 1},
                                                   {"axes", PFVM_ATTR_INTS, 0}, {NULL, PFVM_ATTR_UNDEFINED, 0}};
static const pfvm_attr_spec pfvm__tn_a_shape[] = {{"start", PFVM_ATTR_INT, 0}, {"end", PFVM_ATTR_INT, 0},
                                                  {NULL, PFVM_ATTR_UNDEFINED, 0}};
static const pfvm_attr_spec pfvm__tn_a_pad2[] = {{"pads", PFVM_ATTR_INTS, 1}, {"mode", PFVM_ATTR_STRING, 0},
                                                 {"value", PFVM_ATTR_FLOAT, 0}, {NULL, PFVM_ATTR_UNDEFINED, 0}};
static const pfvm_attr_spec pfvm__tn_a_pad[] = {{"mode", PFVM_ATTR_STRING, 0}, {NULL, PFVM_ATTR_UNDEFINED, 0}};
static const pfvm_attr_spec pfvm__tn_a_trilu[] = {{"upper", PFVM_ATTR_INT, 0}, {NULL, PFVM_ATTR_UNDEFINED, 0}};
static const pfvm_attr_spec pfvm__tn_a_dropout[] = {{"ratio", PFVM_ATTR_FLOAT, 0}, {"is_test", PFVM_ATTR_INT, 0},
                                                    {"seed", PFVM_ATTR_INT, 0}, {NULL, PFVM_ATTR_UNDEFINED, 0}};
static const pfvm_attr_spec pfvm__tn_a_cos[] = {{"value", PFVM_ATTR_TENSOR, 0}, {NULL, PFVM_ATTR_UNDEFINED, 0}};

#define PFVM__TN_ANY "any"
#define PFVM__TN_END {NULL, NULL, 0, 0, 0, 0, 0, 0, NULL, NULL, NULL, PFVM_FUSE_OPAQUE, NULL, NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL}

/* ---- gradients ---------------------------------------------------------------------------- */

/* Rank of v, or -1 (failing) when unknown. */
static int pfvm__tn_grank(pfvm_grad_ctx *g, const pfvm_value *v)
{
    const pfvm_type *t = pfvm_grad_type(g, v);
    if (!t || t->shape.rank < 0) {
        pfvm_grad_fail(g, "'%s' has an unknown rank", v ? v->name : "?");
        return -1;
    }
    return t->shape.rank;
}

/* Constant dim d of v, or -1. */
static int64_t pfvm__tn_gdim(pfvm_grad_ctx *g, const pfvm_value *v, int d)
{
    const pfvm_type *t = pfvm_grad_type(g, v);
    int64_t x;
    if (!t || d < 0 || d >= t->shape.rank || !pfvm_sym_is_const(t->shape.dims[d], &x))
        return -1;
    return x;
}

static pfvm_code pfvm__tn_k_identity_grad(pfvm_grad_ctx *g, const pfvm_node *n)
{
    pfvm_value *gy = pfvm_grad_out(g, 0);
    return gy ? pfvm_grad_add(g, n->inputs[0], gy) : PFVM_OK;
}

/* Reshape, Flatten, Squeeze, Unsqueeze: the gradient takes x's shape back. */
static pfvm_code pfvm__tn_g_reshape(pfvm_grad_ctx *g, const pfvm_node *n)
{
    pfvm_value *gy = pfvm_grad_out(g, 0);
    return gy ? pfvm_grad_add(g, n->inputs[0], pfvm_grad_reshape_like(g, gy, n->inputs[0])) : PFVM_OK;
}

/* Dropout: y = x * mask * scale in training, y = x otherwise. The mask is
 * the forward node's (added as an output when the model left it out). */
static pfvm_code pfvm__tn_k_dropout_grad(pfvm_grad_ctx *g, const pfvm_node *n)
{
    pfvm_value *gy = pfvm_grad_out(g, 0), *x = n->inputs[0], *mask, *scale;
    pfvm_value *ratio = n->n_inputs > 1 ? n->inputs[1] : NULL, *mode = n->n_inputs > 2 ? n->inputs[2] : NULL;
    int64_t known[1];
    if (!gy)
        return PFVM_OK;
    if (n->opset < 12) {
        double r = pfvm_node_attr_float(n, "ratio", 0.5f);
        if (!(n->opset < 7 && pfvm_node_attr_int(n, "is_test", 1) == 0))
            return pfvm_grad_add(g, x, gy);
        mask = pfvm_grad_forward_output(g, 1);
        return pfvm_grad_add(g, x, pfvm_grad_op2(g, "Mul", pfvm_grad_op2(g, "Mul", gy, pfvm_grad_cast(g, mask, pfvm_grad_dtype(g, x))),
                                                 pfvm_grad_scalar_like(g, x, 1 / (1 - r))));
    }
    if (!mode || (pfvm_grad_known_ints(g, mode, known, 1) == 1 && !known[0]))
        return pfvm_grad_add(g, x, gy);
    mask = pfvm_grad_cast(g, pfvm_grad_forward_output(g, 1), pfvm_grad_dtype(g, x));
    /* 1 / (1 - ratio), ratio 0.5 by default */
    if (ratio)
        scale = pfvm_grad_op1(g, "Reciprocal", pfvm_grad_op2(g, "Sub", pfvm_grad_scalar_like(g, ratio, 1), ratio));
    else
        scale = pfvm_grad_scalar_like(g, x, 2);
    scale = pfvm_grad_cast(g, scale, pfvm_grad_dtype(g, x));
    if (pfvm_grad_known_ints(g, mode, known, 1) != 1) /* decided at run time */
        scale = pfvm_grad_op3(g, "Where", pfvm_grad_cast(g, mode, PFVM_BOOL), scale, pfvm_grad_scalar_like(g, x, 1));
    return pfvm_grad_add(g, x, pfvm_grad_op2(g, "Mul", pfvm_grad_op2(g, "Mul", gy, mask), scale));
}

static pfvm_code pfvm__tn_k_transpose_grad(pfvm_grad_ctx *g, const pfvm_node *n)
{
    pfvm_value *gy = pfvm_grad_out(g, 0);
    const int64_t *perm;
    int64_t inv[PFVM_MAX_RANK];
    int r, cnt, i;
    if (!gy || (r = pfvm__tn_grank(g, n->inputs[0])) < 0)
        return g->st->code;
    cnt = pfvm_node_attr_ints(n, "perm", &perm);
    for (i = 0; i < r; i++)
        inv[i] = r - 1 - i; /* the default reverses, its own inverse */
    if (cnt >= 0) {
        if (cnt != r)
            return pfvm_grad_fail(g, "perm has %d entries for rank %d", cnt, r);
        for (i = 0; i < r; i++) {
            if (perm[i] < 0 || perm[i] >= r)
                return pfvm_grad_fail(g, "bad perm");
            inv[perm[i]] = i;
        }
    }
    return pfvm_grad_add(g, n->inputs[0], pfvm_grad_transpose(g, gy, inv, r));
}

/* The 1-element int64 value holding dim `axis` of v. */
static pfvm_value *pfvm__tn_gdimv(pfvm_grad_ctx *g, pfvm_value *v, int axis)
{
    int64_t d = pfvm__tn_gdim(g, v, axis), a0 = axis, a1 = axis + 1, z = 0;
    if (d >= 0)
        return pfvm_grad_ints(g, &d, 1);
    if (g->opset < 10) {
        pfvm_grad_fail(g, "a symbolic dimension needs opset 10");
        return NULL;
    }
    return pfvm_grad_slice(g, pfvm_grad_shape(g, v), &a0, &a1, &z, 1);
}

/* Concat: each input gets its slice of the gradient. */
static pfvm_code pfvm__tn_k_concat_grad(pfvm_grad_ctx *g, const pfvm_node *n)
{
    pfvm_value *gy = pfvm_grad_out(g, 0), *off = NULL;
    int64_t axis = pfvm_node_attr_int(n, "axis", 0), at = 0, start;
    int r, i, a, fixed = 1;
    if (!gy || (r = pfvm__tn_grank(g, n->outputs[0])) < 0)
        return g->st->code;
    if ((a = pfvm__axis(axis, r)) < 0)
        return pfvm_grad_fail(g, "axis %lld out of range", (long long)axis);
    for (i = 0; i < n->n_inputs; i++) {
        pfvm_value *x = n->inputs[i];
        int64_t d = pfvm__tn_gdim(g, x, a), aa = a;
        if (d < 0)
            fixed = 0;
        if (pfvm_grad_needed(g, x)) {
            pfvm_value *part;
            if (fixed) {
                start = at;
                d += at;
                part = pfvm_grad_slice(g, gy, &start, &d, &aa, 1);
                d -= at;
            } else {
                /* offsets known at run time: Slice with computed bounds */
                pfvm_value *in[4], *s = off ? off : pfvm_grad_ints(g, &at, 1);
                pfvm_node *nd;
                in[0] = gy;
                in[1] = s;
                in[2] = pfvm_grad_op2(g, "Add", s, pfvm__tn_gdimv(g, x, a));
                in[3] = pfvm_grad_ints(g, &aa, 1);
                nd = pfvm_grad_node(g, "Slice", in, 4, 1);
                part = nd ? nd->outputs[0] : NULL;
            }
            if (pfvm_grad_add(g, x, part))
                return g->st->code;
        }
        if (fixed) {
            at += d;
        } else {
            pfvm_value *base = off ? off : pfvm_grad_ints(g, &at, 1);
            off = pfvm_grad_op2(g, "Add", base, pfvm__tn_gdimv(g, x, a));
        }
    }
    return g->st->code;
}

/* Split: the outputs' gradients (zeros for unread ones) concatenated. */
static pfvm_code pfvm__tn_k_split_grad(pfvm_grad_ctx *g, const pfvm_node *n)
{
    pfvm_value *parts[PFVM__TN_MAXV];
    int r, i;
    int64_t axis = pfvm_node_attr_int(n, "axis", 0);
    if (n->n_outputs > PFVM__TN_MAXV)
        return pfvm_grad_fail(g, "%d outputs", n->n_outputs);
    if ((r = pfvm__tn_grank(g, n->inputs[0])) < 0)
        return g->st->code;
    for (i = 0; i < n->n_outputs; i++)
        parts[i] = pfvm_grad_out_or_zeros(g, i);
    return pfvm_grad_add(g, n->inputs[0], pfvm_grad_concat(g, parts, n->n_outputs, axis));
}

/* The gradient of an injective op that only moves elements (each element of
 * x lands in at most one place of y when `unique`): apply the same op to the
 * element indices of x, then scatter the gradient back by index. The node
 * `n` is re-emitted on the index tensor with its other inputs unchanged. */
static pfvm_value *pfvm__tn_g_scatter_back(pfvm_grad_ctx *g, const pfvm_node *n, pfvm_value *gy, int unique,
                                           const char *fill_mode)
{
    pfvm_value *x = n->inputs[0], *in[8], *iota, *flat_n, *idx, *zeros, *res;
    pfvm_node *nd;
    int64_t minus1 = -1, one = 1, zero = 0;
    int j;
    (void)fill_mode;
    if (g->opset < (unique ? 11 : 16)) {
        pfvm_grad_fail(g, "needs opset %d (ScatterElements%s), the model has %d", unique ? 11 : 16,
                       unique ? "" : " with reduction", g->opset);
        return NULL;
    }
    if (n->n_inputs > 8)
        return NULL;
    flat_n = pfvm_grad_op1(g, "Size", x);
    in[0] = pfvm_grad_tensor(g, PFVM_INT64, 0, NULL, &zero);
    in[1] = flat_n;
    in[2] = pfvm_grad_tensor(g, PFVM_INT64, 0, NULL, &one);
    nd = pfvm_grad_node(g, "Range", in, 3, 1);
    iota = pfvm_grad_op2(g, "Reshape", nd ? nd->outputs[0] : NULL, pfvm_grad_shape(g, x));
    in[0] = iota;
    for (j = 1; j < n->n_inputs; j++)
        in[j] = n->inputs[j];
    nd = pfvm_grad_node(g, n->op_type, in, n->n_inputs, 1);
    if (!nd)
        return NULL;
    nd->attrs = n->attrs;
    nd->n_attrs = n->n_attrs;
    idx = pfvm_grad_op2(g, "Reshape", nd->outputs[0], pfvm_grad_ints(g, &minus1, 1));
    zeros = pfvm_grad_fill(g, pfvm_grad_numel(g, x), pfvm_grad_dtype(g, x), 0);
    in[0] = zeros;
    in[1] = idx;
    in[2] = pfvm_grad_op2(g, "Reshape", gy, pfvm_grad_ints(g, &minus1, 1));
    nd = pfvm_grad_node(g, "ScatterElements", in, 3, 1);
    if (!nd || (!unique && pfvm_node_set_attr_string(nd, "reduction", "add", g->st)))
        return NULL;
    res = nd->outputs[0];
    return pfvm_grad_reshape_like(g, res, x);
}

/* Slice: a zero pad around the gradient when the bounds are constants and
 * the steps 1; otherwise scatter back by index. */
static pfvm_code pfvm__tn_k_slice_grad(pfvm_grad_ctx *g, const pfvm_node *n)
{
    pfvm_value *gy = pfvm_grad_out(g, 0), *x = n->inputs[0];
    int64_t starts[PFVM__TN_MAXV], ends[PFVM__TN_MAXV], axes[PFVM__TN_MAXV], steps[PFVM__TN_MAXV], pads[2 * PFVM_MAX_RANK];
    int r, k, ke, i, ok = 1;
    if (!gy || (r = pfvm__tn_grank(g, x)) < 0)
        return g->st->code;
    if (n->opset < 10) {
        const int64_t *a;
        k = pfvm_node_attr_ints(n, "starts", &a);
        for (i = 0; i < k && i < PFVM__TN_MAXV; i++)
            starts[i] = a[i];
        ke = pfvm_node_attr_ints(n, "ends", &a);
        for (i = 0; i < ke && i < PFVM__TN_MAXV; i++)
            ends[i] = a[i];
        if (pfvm_node_attr_ints(n, "axes", &a) >= 0)
            for (i = 0; i < k && i < PFVM__TN_MAXV; i++)
                axes[i] = a[i];
        else
            for (i = 0; i < k && i < PFVM__TN_MAXV; i++)
                axes[i] = i;
        for (i = 0; i < k && i < PFVM__TN_MAXV; i++)
            steps[i] = 1;
    } else {
        k = pfvm_grad_known_ints(g, n->inputs[1], starts, PFVM__TN_MAXV);
        ke = pfvm_grad_known_ints(g, n->inputs[2], ends, PFVM__TN_MAXV);
        if (n->n_inputs > 3 && n->inputs[3]) {
            if (pfvm_grad_known_ints(g, n->inputs[3], axes, PFVM__TN_MAXV) != k)
                ok = 0;
        } else {
            for (i = 0; i < k && i < PFVM__TN_MAXV; i++)
                axes[i] = i;
        }
        if (n->n_inputs > 4 && n->inputs[4]) {
            if (pfvm_grad_known_ints(g, n->inputs[4], steps, PFVM__TN_MAXV) != k)
                ok = 0;
        } else {
            for (i = 0; i < k && i < PFVM__TN_MAXV; i++)
                steps[i] = 1;
        }
    }
    if (k < 0 || k != ke || k > PFVM__TN_MAXV)
        ok = 0;
    for (i = 0; i < 2 * r; i++)
        pads[i] = 0;
    for (i = 0; ok && i < k; i++) {
        int a = pfvm__axis(axes[i], r);
        int64_t d = a >= 0 ? pfvm__tn_gdim(g, x, a) : -1, s = starts[i], e = ends[i];
        if (a < 0 || d < 0 || steps[i] != 1) {
            ok = 0;
            break;
        }
        s = s < 0 ? s + d : s;
        e = e < 0 ? e + d : e;
        s = s < 0 ? 0 : s > d ? d : s;
        e = e < 0 ? 0 : e > d ? d : e;
        if (e < s)
            e = s;
        pads[a] = s;
        pads[r + a] = d - e;
    }
    if (ok)
        return pfvm_grad_add(g, x, pfvm_grad_pad(g, gy, pads, r));
    if (n->opset < 10)
        return pfvm_grad_fail(g, "bounds not known before opset 10");
    return pfvm_grad_add(g, x, pfvm__tn_g_scatter_back(g, n, gy, 1, NULL));
}

/* Gather: rows of the gradient added into the rows they came from. Axis 0
 * from opset 16: ScatterND with reduction add; otherwise a one-hot matrix
 * of the indices times the gradient (data [A, V, R], indices I:
 * dX[a, v, r] = sum_i onehot[i, v] gY[a, i, r]). */
static pfvm_code pfvm__tn_k_gather_grad(pfvm_grad_ctx *g, const pfvm_node *n)
{
    pfvm_value *gy = pfvm_grad_out(g, 0), *x = n->inputs[0], *idx = n->inputs[1], *in[3], *depth, *oh, *gy3, *d;
    pfvm_node *nd;
    int r, a, i;
    int64_t axis = pfvm_node_attr_int(n, "axis", 0), minus1 = -1, lo, hi, v01[2], two = 2;
    if (!gy || (r = pfvm__tn_grank(g, x)) < 0)
        return g->st->code;
    if ((a = pfvm__axis(axis, r)) < 0)
        return pfvm_grad_fail(g, "axis %lld out of range", (long long)axis);
    depth = pfvm__tn_gdimv(g, x, a);
    if (a == 0 && g->opset >= 16) {
        /* negative indices count from the end */
        pfvm_value *ix = pfvm_grad_cast(g, idx, PFVM_INT64), *z = pfvm_grad_scalar(g, PFVM_INT64, 0);
        ix = pfvm_grad_op3(g, "Where", pfvm_grad_op2(g, "Less", ix, z), pfvm_grad_op2(g, "Add", ix, depth), ix);
        in[0] = pfvm_grad_zeros_like(g, x);
        in[1] = pfvm_grad_unsqueeze(g, ix, &minus1, 1);
        in[2] = gy;
        nd = pfvm_grad_node(g, "ScatterND", in, 3, 1);
        if (!nd || pfvm_node_set_attr_string(nd, "reduction", "add", g->st))
            return g->st->code;
        return pfvm_grad_add(g, x, nd->outputs[0]);
    }
    if (g->opset < 9)
        return pfvm_grad_fail(g, "needs opset 9 (OneHot)");
    v01[0] = 0;
    v01[1] = 1;
    in[0] = pfvm_grad_op2(g, "Reshape", idx, pfvm_grad_ints(g, &minus1, 1));
    in[1] = depth;
    in[2] = pfvm_grad_cast(g, pfvm_grad_tensor(g, PFVM_INT64, 1, &two, v01), pfvm_grad_dtype(g, x));
    nd = pfvm_grad_node(g, "OneHot", in, 3, 1);
    oh = nd ? nd->outputs[0] : NULL; /* [nI, V] */
    /* gY as [A, nI, R] */
    {
        pfvm_value *parts[3], *s = pfvm_grad_shape(g, x);
        int64_t z = 0, ka = a, ka1 = a + 1, kr = r, m1 = -1;
        lo = 1;
        hi = 1;
        for (i = 0; i < a; i++)
            lo = lo >= 0 && pfvm__tn_gdim(g, x, i) >= 0 ? lo * pfvm__tn_gdim(g, x, i) : -1;
        for (i = a + 1; i < r; i++)
            hi = hi >= 0 && pfvm__tn_gdim(g, x, i) >= 0 ? hi * pfvm__tn_gdim(g, x, i) : -1;
        parts[0] = lo >= 0 ? pfvm_grad_ints(g, &lo, 1)
                           : pfvm_grad_reduce(g, "ReduceProd", pfvm_grad_slice(g, s, &z, &ka, &z, 1), &z, 1, 1);
        parts[1] = pfvm_grad_ints(g, &m1, 1);
        parts[2] = hi >= 0 ? pfvm_grad_ints(g, &hi, 1)
                           : pfvm_grad_reduce(g, "ReduceProd", pfvm_grad_slice(g, s, &ka1, &kr, &z, 1), &z, 1, 1);
        gy3 = pfvm_grad_op2(g, "Reshape", gy, pfvm_grad_concat(g, parts, 3, 0));
    }
    {
        int64_t perm[2] = {1, 0};
        d = pfvm_grad_op2(g, "MatMul", pfvm_grad_transpose(g, oh, perm, 2), gy3);
    }
    return pfvm_grad_add(g, x, pfvm_grad_reshape_like(g, d, x));
}

static pfvm_code pfvm__tn_k_expand_grad(pfvm_grad_ctx *g, const pfvm_node *n)
{
    pfvm_value *gy = pfvm_grad_out(g, 0);
    return gy ? pfvm_grad_add(g, n->inputs[0], pfvm_grad_sum_to(g, gy, n->inputs[0])) : PFVM_OK;
}

/* Tile: gY as [r0, d0, r1, d1, ...] summed over the repeats (the even
 * axes, whatever the repeats are; read at run time when not known). */
static pfvm_code pfvm__tn_k_tile_grad(pfvm_grad_ctx *g, const pfvm_node *n)
{
    pfvm_value *gy = pfvm_grad_out(g, 0), *x = n->inputs[0], *parts[2 * PFVM_MAX_RANK], *s, *rv;
    int64_t reps[PFVM_MAX_RANK], axes[PFVM_MAX_RANK];
    int r, i, n_axes = 0, known;
    if (!gy || (r = pfvm__tn_grank(g, x)) < 0)
        return g->st->code;
    known = pfvm_grad_known_ints(g, n->inputs[1], reps, PFVM_MAX_RANK) == r;
    if (2 * r > PFVM_MAX_RANK)
        return pfvm_grad_fail(g, "rank %d is too large to fold the repeats", r);
    s = pfvm_grad_shape(g, x);
    rv = known ? NULL : pfvm_grad_cast(g, n->inputs[1], PFVM_INT64);
    for (i = 0; i < r; i++) {
        int64_t d = pfvm__tn_gdim(g, x, i), a0 = i, a1 = i + 1, z = 0;
        parts[2 * i] = known ? pfvm_grad_ints(g, &reps[i], 1) : pfvm_grad_slice(g, rv, &a0, &a1, &z, 1);
        parts[2 * i + 1] = d >= 0 ? pfvm_grad_ints(g, &d, 1) : pfvm_grad_slice(g, s, &a0, &a1, &z, 1);
        if (!known || reps[i] != 1)
            axes[n_axes++] = 2 * i;
    }
    if (!n_axes)
        return pfvm_grad_add(g, x, gy);
    gy = pfvm_grad_op2(g, "Reshape", gy, pfvm_grad_concat(g, parts, 2 * r, 0));
    return pfvm_grad_add(g, x, pfvm_grad_reshape_like(g, pfvm_grad_reduce(g, "ReduceSum", gy, axes, n_axes, 0), x));
}

/* Pad: constant mode slices the gradient back out (pads known, or read at
 * run time when non-negative); edge, reflect and wrap scatter it back by
 * index with reduction add. */
static pfvm_code pfvm__tn_k_pad_grad(pfvm_grad_ctx *g, const pfvm_node *n)
{
    pfvm_value *gy = pfvm_grad_out(g, 0), *x = n->inputs[0];
    int64_t pads[PFVM__TN_MAXV], full[2 * PFVM_MAX_RANK], axes[PFVM_MAX_RANK], starts[PFVM_MAX_RANK],
        ends[PFVM_MAX_RANK], crop[2 * PFVM_MAX_RANK];
    int r, cnt, i, n_axes, where[PFVM_MAX_RANK], mode = pfvm__tn_pad_mode(n), any_crop = 0;
    if (!gy || (r = pfvm__tn_grank(g, x)) < 0)
        return g->st->code;
    if (mode != PFVM__TN_PAD_CONSTANT) {
        if (n->opset < 11)
            return pfvm_grad_fail(g, "mode '%s' needs opset 16", pfvm_node_attr_string(n, "mode", ""));
        return pfvm_grad_add(g, x, pfvm__tn_g_scatter_back(g, n, gy, 0, NULL));
    }
    if (n->opset < 11) {
        const int64_t *a;
        cnt = pfvm_node_attr_ints(n, "pads", &a);
        for (i = 0; i < cnt && i < PFVM__TN_MAXV; i++)
            pads[i] = a[i];
    } else {
        cnt = pfvm_grad_known_ints(g, n->inputs[1], pads, PFVM__TN_MAXV);
    }
    n_axes = r;
    for (i = 0; i < r; i++)
        axes[i] = i;
    if (n->n_inputs > 3 && n->inputs[3]) {
        n_axes = pfvm_grad_known_ints(g, n->inputs[3], axes, PFVM_MAX_RANK);
        if (n_axes < 0)
            return pfvm_grad_fail(g, "pad axes not known");
    }
    if (pfvm__tn_pad_spread(g->st, axes, n_axes, r, where))
        return g->st->code;
    if (cnt < 0) {
        /* pads known at run time: slice from pads[begin] to pads[begin] + dim */
        pfvm_value *in[4], *p;
        pfvm_node *nd;
        int64_t z = 0, na = n_axes;
        if (n_axes != r)
            return pfvm_grad_fail(g, "pads and axes both unknown");
        p = pfvm_grad_cast(g, n->inputs[1], PFVM_INT64);
        in[0] = gy;
        in[1] = pfvm_grad_slice(g, p, &z, &na, &z, 1);
        in[2] = pfvm_grad_op2(g, "Add", in[1], pfvm_grad_shape(g, x));
        in[3] = pfvm_grad_ints(g, axes, n_axes);
        nd = pfvm_grad_node(g, "Slice", in, 4, 1);
        if (nd && n->n_inputs > 2 && n->inputs[2] && pfvm_grad_needed(g, n->inputs[2]) && r > 0) {
            /* the padding value: everything but the part that came from x */
            int64_t all[PFVM_MAX_RANK];
            for (i = 0; i < r; i++)
                all[i] = i;
            if (pfvm_grad_add(g, n->inputs[2],
                              pfvm_grad_reshape_like(g, pfvm_grad_op2(g, "Sub", pfvm_grad_reduce(g, "ReduceSum", gy, all, r, 0),
                                                                      pfvm_grad_reduce(g, "ReduceSum", nd->outputs[0], all, r, 0)),
                                                     n->inputs[2])))
                return g->st->code;
        }
        return pfvm_grad_add(g, x, nd ? nd->outputs[0] : NULL);
    }
    if (cnt != 2 * n_axes)
        return pfvm_grad_fail(g, "%d pads for %d axes", cnt, n_axes);
    for (i = 0; i < r; i++) {
        full[i] = where[i] >= 0 ? pads[where[i]] : 0;
        full[r + i] = where[i] >= 0 ? pads[n_axes + where[i]] : 0;
    }
    /* positive pads are sliced off the gradient, negative ones (crops of x)
     * come back as zeros */
    for (i = 0; i < r; i++) {
        int64_t b = full[i] > 0 ? full[i] : 0, e = full[r + i] > 0 ? full[r + i] : 0, d = pfvm__tn_gdim(g, gy, i);
        starts[i] = b;
        if (d >= 0)
            ends[i] = d - e;
        else if (e == 0)
            ends[i] = INT64_MAX;
        else
            ends[i] = -e;
        axes[i] = i;
        crop[i] = full[i] < 0 ? -full[i] : 0;
        crop[r + i] = full[r + i] < 0 ? -full[r + i] : 0;
        if (crop[i] || crop[r + i])
            any_crop = 1;
    }
    {
        pfvm_value *inner = pfvm_grad_slice(g, gy, starts, ends, axes, r), *v = n->opset >= 11 && n->n_inputs > 2 ? n->inputs[2] : NULL;
        if (v && pfvm_grad_needed(g, v)) {
            /* the padding value: everything but the part that came from x */
            int64_t all[PFVM_MAX_RANK];
            for (i = 0; i < r; i++)
                all[i] = i;
            if (pfvm_grad_add(g, v, pfvm_grad_reshape_like(g, r ? pfvm_grad_op2(g, "Sub", pfvm_grad_reduce(g, "ReduceSum", gy, all, r, 0),
                                                                                pfvm_grad_reduce(g, "ReduceSum", inner, all, r, 0))
                                                               : pfvm_grad_scalar_like(g, v, 0),
                                                           v)))
                return g->st->code;
        }
        if (any_crop)
            inner = pfvm_grad_pad(g, inner, crop, r);
        return pfvm_grad_add(g, x, inner);
    }
}

/* Trilu keeps a triangle: so does its gradient. */
static pfvm_code pfvm__tn_k_trilu_grad(pfvm_grad_ctx *g, const pfvm_node *n)
{
    pfvm_value *gy = pfvm_grad_out(g, 0);
    pfvm_node *nd;
    pfvm_value *in[2];
    if (!gy)
        return PFVM_OK;
    in[0] = gy;
    in[1] = n->n_inputs > 1 ? n->inputs[1] : NULL;
    nd = pfvm_grad_node(g, "Trilu", in, in[1] ? 2 : 1, 1);
    if (!nd || pfvm_node_set_attr_int(nd, "upper", pfvm_node_attr_int(n, "upper", 1), g->st))
        return g->st->code;
    return pfvm_grad_add(g, n->inputs[0], nd->outputs[0]);
}

PFVM_INTERNAL const pfvm_op_def pfvm__ops_tensor[] = {
    {"Identity", "", 1, 0, 1, 1, 1, 1, pfvm__tn_infer_identity, pfvm__tn_k_identity, NULL, PFVM_FUSE_ELEMENTWISE, "any; sequences, optionals", NULL, PFVM_OP_IN_PLACE | PFVM_OP_SEQUENCES, pfvm__tn_simp_same, pfvm__tn_k_identity_grad, NULL, NULL, pfvm_acl_view, NULL, NULL, NULL},
    {"Dropout", "", 1, 0, 1, 3, 1, 2, pfvm__tn_infer_dropout, pfvm__tn_k_dropout, NULL, PFVM_FUSE_ELEMENTWISE, "float,double,float16,bfloat16", pfvm__tn_a_dropout, 0, pfvm__tn_simp_dropout, pfvm__tn_k_dropout_grad, NULL, NULL, pfvm_acl_view, NULL, NULL, NULL},
    {"Shape", "", 1, 0, 1, 1, 1, 1, pfvm__tn_infer_shape, pfvm__tn_k_shape, NULL, PFVM_FUSE_OPAQUE, PFVM__TN_ANY, pfvm__tn_a_shape, PFVM_OP_SHAPE_ONLY, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
    {"Size", "", 1, 0, 1, 1, 1, 1, pfvm__tn_infer_size, pfvm__tn_k_size, NULL, PFVM_FUSE_OPAQUE, PFVM__TN_ANY, NULL, PFVM_OP_SHAPE_ONLY, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
    {"Constant", "", 1, 0, 0, 0, 1, 1, pfvm__tn_infer_constant, pfvm__tn_k_constant, NULL, PFVM_FUSE_OPAQUE, PFVM__TN_ANY, NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
    {"ConstantOfShape", "", 9, 0, 1, 1, 1, 1, pfvm__tn_infer_cos, pfvm__tn_k_cos, NULL, PFVM_FUSE_OPAQUE, "numeric,bool", pfvm__tn_a_cos, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
    {"Reshape", "", 1, 4, 1, 1, 1, 1, pfvm__tn_infer_reshape, pfvm__tn_k_reshape, NULL, PFVM_FUSE_INJECTIVE, PFVM__TN_ANY, pfvm__tn_a_reshape1, PFVM_OP_IN_PLACE, pfvm__tn_simp_reshape, pfvm__tn_g_reshape, NULL, NULL, pfvm_acl_view, NULL, NULL, NULL},
    {"Reshape", "", 5, 0, 2, 2, 1, 1, pfvm__tn_infer_reshape, pfvm__tn_k_reshape, NULL, PFVM_FUSE_INJECTIVE, PFVM__TN_ANY, pfvm__tn_a_reshape, PFVM_OP_IN_PLACE, pfvm__tn_simp_reshape, pfvm__tn_g_reshape, NULL, NULL, pfvm_acl_view, NULL, NULL, NULL},
    {"Flatten", "", 1, 0, 1, 1, 1, 1, pfvm__tn_infer_flatten, pfvm__tn_k_flatten, NULL, PFVM_FUSE_INJECTIVE, PFVM__TN_ANY, pfvm__tn_a_axis, PFVM_OP_IN_PLACE, pfvm__tn_simp_reshape, pfvm__tn_g_reshape, NULL, NULL, pfvm_acl_view, NULL, NULL, NULL},
    {"Squeeze", "", 1, 0, 1, 2, 1, 1, pfvm__tn_infer_squeeze, pfvm__tn_k_squeeze, NULL, PFVM_FUSE_INJECTIVE, PFVM__TN_ANY, pfvm__tn_a_axes, PFVM_OP_IN_PLACE, pfvm__tn_simp_reshape, pfvm__tn_g_reshape, NULL, NULL, pfvm_acl_view, NULL, NULL, NULL},
    {"Unsqueeze", "", 1, 12, 1, 1, 1, 1, pfvm__tn_infer_unsqueeze, pfvm__tn_k_unsqueeze, NULL, PFVM_FUSE_INJECTIVE, PFVM__TN_ANY, pfvm__tn_a_unsqueeze1, PFVM_OP_IN_PLACE, pfvm__tn_simp_reshape, pfvm__tn_g_reshape, NULL, NULL, pfvm_acl_view, NULL, NULL, NULL},
    {"Unsqueeze", "", 13, 0, 2, 2, 1, 1, pfvm__tn_infer_unsqueeze, pfvm__tn_k_unsqueeze, NULL, PFVM_FUSE_INJECTIVE, PFVM__TN_ANY, NULL, PFVM_OP_IN_PLACE, pfvm__tn_simp_reshape, pfvm__tn_g_reshape, NULL, NULL, pfvm_acl_view, NULL, NULL, NULL},
    {"Transpose", "", 1, 0, 1, 1, 1, 1, pfvm__tn_infer_transpose, pfvm__tn_k_transpose, NULL, PFVM_FUSE_INJECTIVE, PFVM__TN_ANY, pfvm__tn_a_transpose, PFVM__OP_ACCEL_STREAMED, pfvm__tn_simp_transpose, pfvm__tn_k_transpose_grad, NULL, NULL, pfvm_acl_transpose, NULL, NULL, NULL},
    {"Concat", "", 1, 3, 1, -1, 1, 1, pfvm__tn_infer_concat, pfvm__tn_k_concat, NULL, PFVM_FUSE_INJECTIVE, PFVM__TN_ANY, pfvm__tn_a_axis, PFVM__OP_ACCEL_STREAMED | PFVM__OP_JOIN, pfvm__tn_simp_concat, pfvm__tn_k_concat_grad, NULL, NULL, pfvm_acl_concat, NULL, NULL, NULL},
    {"Concat", "", 4, 0, 1, -1, 1, 1, pfvm__tn_infer_concat, pfvm__tn_k_concat, NULL, PFVM_FUSE_INJECTIVE, PFVM__TN_ANY, pfvm__tn_a_axis_req, PFVM__OP_ACCEL_STREAMED | PFVM__OP_JOIN, pfvm__tn_simp_concat, pfvm__tn_k_concat_grad, NULL, NULL, pfvm_acl_concat, NULL, NULL, NULL},
    {"Split", "", 1, 0, 1, 2, 1, -1, pfvm__tn_infer_split, pfvm__tn_k_split, NULL, PFVM_FUSE_INJECTIVE, PFVM__TN_ANY, pfvm__tn_a_split, 0, NULL, pfvm__tn_k_split_grad, NULL, NULL, NULL, NULL, NULL, NULL},
    {"Slice", "", 1, 9, 1, 1, 1, 1, pfvm__tn_infer_slice, pfvm__tn_k_slice, NULL, PFVM_FUSE_INJECTIVE, PFVM__TN_ANY, pfvm__tn_a_slice1, PFVM__OP_ACCEL_STREAMED, pfvm__tn_simp_slice, pfvm__tn_k_slice_grad, NULL, NULL, pfvm_acl_slice, NULL, NULL, NULL},
    {"Slice", "", 10, 0, 3, 5, 1, 1, pfvm__tn_infer_slice, pfvm__tn_k_slice, NULL, PFVM_FUSE_INJECTIVE, PFVM__TN_ANY, NULL, PFVM__OP_ACCEL_STREAMED, pfvm__tn_simp_slice, pfvm__tn_k_slice_grad, NULL, NULL, pfvm_acl_slice, NULL, NULL, NULL},
    {"Gather", "", 1, 0, 2, 2, 1, 1, pfvm__tn_infer_gather, pfvm__tn_k_gather, NULL, PFVM_FUSE_INJECTIVE, PFVM__TN_ANY, pfvm__tn_a_axis, 0, NULL, pfvm__tn_k_gather_grad, NULL, NULL, NULL, NULL, NULL, NULL},
    {"Expand", "", 8, 0, 2, 2, 1, 1, pfvm__tn_infer_expand, pfvm__tn_k_expand, NULL, PFVM_FUSE_BROADCAST, PFVM__TN_ANY, NULL, 0, pfvm__tn_simp_same, pfvm__tn_k_expand_grad, NULL, NULL, NULL, NULL, NULL, NULL},
    {"Tile", "", 6, 0, 2, 2, 1, 1, pfvm__tn_infer_tile, pfvm__tn_k_tile, NULL, PFVM_FUSE_INJECTIVE, PFVM__TN_ANY, NULL, 0, pfvm__tn_simp_same, pfvm__tn_k_tile_grad, NULL, NULL, NULL, NULL, NULL, NULL},
    {"Pad", "", 2, 10, 1, 1, 1, 1, pfvm__tn_infer_pad, pfvm__tn_k_pad, NULL, PFVM_FUSE_INJECTIVE, "float,double,float16", pfvm__tn_a_pad2, 0, pfvm__tn_simp_pad, pfvm__tn_k_pad_grad, NULL, NULL, NULL, NULL, NULL, NULL},
    {"Pad", "", 11, 0, 2, 4, 1, 1, pfvm__tn_infer_pad, pfvm__tn_k_pad, NULL, PFVM_FUSE_INJECTIVE, PFVM__TN_ANY, pfvm__tn_a_pad, 0, pfvm__tn_simp_pad, pfvm__tn_k_pad_grad, NULL, NULL, NULL, NULL, NULL, NULL},
    {"Range", "", 11, 0, 3, 3, 1, 1, pfvm__tn_infer_range, pfvm__tn_k_range, NULL, PFVM_FUSE_OPAQUE, "numeric", NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
    {"Trilu", "", 14, 0, 1, 2, 1, 1, pfvm__tn_infer_trilu, pfvm__tn_k_trilu, NULL, PFVM_FUSE_INJECTIVE, PFVM__TN_ANY, pfvm__tn_a_trilu, 0, NULL, pfvm__tn_k_trilu_grad, NULL, NULL, NULL, NULL, NULL, NULL},
    PFVM__TN_END
};
