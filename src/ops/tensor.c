/* ops/tensor: shape manipulation and data movement — Reshape, Flatten,
 * Transpose, Squeeze, Unsqueeze, Concat, Split, Slice, Gather, Expand, Tile,
 * Pad, Shape, Size, Constant, ConstantOfShape, Range, Trilu, Identity,
 * Dropout (inference).
 *
 * Kernels move element bytes without looking at the element type; string
 * tensors copy their strings. Inference is symbolic and propagates the
 * contents of small integer tensors (Shape -> Gather -> Concat -> Reshape). */
#include "ops_common.h"
#include "../shape/infer.h"

#include <math.h>
#include <stdlib.h>

#define PFVM__TN_MAXV 64 /* longest integer vector read from an input (shapes, axes) */

/* ---- helpers ---------------------------------------------------------------------- */

static int64_t pfvm__tn_numel(const pfvm_tensor *t)
{
    return pfvm_tensor_numel(t);
}

/* Copies n elements from src[si] to dst[di]; strings are duplicated. */
static void pfvm__tn_copy(pfvm_tensor *dst, int64_t di, const pfvm_tensor *src, int64_t si, int64_t n)
{
    size_t es = pfvm_dtype_size(src->dtype);
    if (src->dtype == PFVM_STRING) {
        int64_t i;
        for (i = 0; i < n; i++) {
            const char *s = ((char *const *)src->data)[si + i];
            char **d = &((char **)dst->data)[di + i];
            pfvm__free(*d);
            *d = pfvm__strdup(s ? s : "");
        }
        return;
    }
    if (n > 0)
        memcpy((char *)dst->data + (size_t)di * es, (const char *)src->data + (size_t)si * es, (size_t)n * es);
}

/* Row-major strides of a tensor. */
static void pfvm__tn_strides(const pfvm_tensor *t, int64_t *st)
{
    int d;
    int64_t s = 1;
    for (d = t->rank - 1; d >= 0; d--) {
        st[d] = s;
        s *= t->dims[d];
    }
}

/* Integers of input i (value known at plan time) or -1. */
static int pfvm__tn_in_ints(pfvm_ictx *c, int i, int64_t *out)
{
    if (i >= c->n_in || !c->in[i])
        return -1;
    return pfvm_ival_ints(c->in[i], out, PFVM__TN_MAXV);
}

/* Integers of a run-time input tensor. */
static int pfvm__tn_kints(const pfvm_tensor *t, int64_t *out, int cap)
{
    int64_t i, n;
    if (!t)
        return -1;
    n = pfvm__tn_numel(t);
    if (n > cap)
        return -1;
    for (i = 0; i < n; i++)
        out[i] = pfvm_tensor_get_i64(t, i);
    return (int)n;
}

/* Shape of `sym` contents: a vector whose entries are the given dims. */
static pfvm_code pfvm__tn_set_vector(pfvm_ictx *c, pfvm_ival *o, const pfvm_sym *const *v, int n)
{
    pfvm_shape s;
    s.rank = 1;
    s.dims[0] = pfvm_sym_const(c->syms, n);
    pfvm_ival_set_tensor(o, PFVM_INT64, &s);
    return pfvm_ival_set_sym(c, o, v, n);
}

/* ---- Identity, Dropout -------------------------------------------------------------- */

static pfvm_code pfvm__tn_infer_identity(pfvm_ictx *c)
{
    c->out[0]->type = c->in[0]->type;
    if (c->in[0]->sym)
        return pfvm_ival_set_sym(c, c->out[0], c->in[0]->sym, c->in[0]->n_sym);
    return PFVM_OK;
}

static pfvm_code pfvm__tn_k_identity(pfvm_kctx *k)
{
    const pfvm_tensor *x = k->in[0];
    pfvm_tensor *y = k->out[0];
    if (x->kind != PFVM_KIND_TENSOR) {
        int i;
        pfvm_tensor_release(y);
        y->kind = x->kind;
        y->elem_dtype = x->elem_dtype;
        y->dtype = x->dtype;
        y->has_value = x->has_value;
        for (i = 0; i < (int)stbds_arrlen(x->elems); i++) {
            pfvm_tensor *e = pfvm_tensor_clone(x->elems[i], k->st);
            if (!e)
                return k->st ? k->st->code : PFVM_ERR_NOMEM;
            stbds_arrput(y->elems, e);
        }
        return PFVM_OK;
    }
    if (!y->data && pfvm_kctx_output(k, 0, x->dtype, x->rank, x->dims))
        return k->st ? k->st->code : PFVM_ERR_NOMEM;
    pfvm__tn_copy(y, 0, x, 0, pfvm__tn_numel(x));
    return PFVM_OK;
}

static pfvm_code pfvm__tn_infer_dropout(pfvm_ictx *c)
{
    c->out[0]->type = c->in[0]->type;
    if (c->n_out > 1 && c->out[1])
        pfvm_ival_set_tensor(c->out[1], PFVM_BOOL, &c->in[0]->type.shape);
    return PFVM_OK;
}

static pfvm_code pfvm__tn_k_dropout(pfvm_kctx *k)
{
    int training = k->n_in > 2 && k->in[2] && pfvm_tensor_get_i64(k->in[2], 0);
    double ratio = k->n_in > 1 && k->in[1] ? pfvm_tensor_get_f64(k->in[1], 0) : 0.5;
    const pfvm_tensor *x = k->in[0];
    pfvm_tensor *y = k->out[0], *mask = k->n_out > 1 ? k->out[1] : NULL;
    int64_t i, n = pfvm__tn_numel(x);
    if (k->node->opset < 12) {
        training = pfvm_node_attr_int(k->node, "is_test", 1) == 0 && k->node->opset < 7;
        ratio = pfvm_node_attr_float(k->node, "ratio", 0.5f);
    }
    if (!training || ratio == 0) {
        pfvm__tn_copy(y, 0, x, 0, n);
        if (mask && mask->data)
            memset(mask->data, 1, (size_t)pfvm__tn_numel(mask));
        return PFVM_OK;
    }
    if (!(ratio >= 0 && ratio < 1))
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_RANGE, "ratio %g is outside [0, 1)", ratio);
    /* training: keep each element with probability 1 - ratio, scaled up */
    {
        const pfvm_attr *seed = pfvm_node_attr(k->node, "seed");
        if (seed)
            pfvm_kctx_seed(k, (uint64_t)seed->i);
    }
    for (i = 0; i < n; i++) {
        double u = (double)(pfvm_kctx_random(k) >> 11) * (1.0 / 9007199254740992.0);
        int keep = u >= ratio;
        double v = keep ? pfvm_tensor_get_f64(x, i) / (1 - ratio) : 0;
        if (y->dtype == PFVM_DOUBLE)
            ((double *)y->data)[i] = v;
        else if (y->dtype == PFVM_FLOAT16)
            ((uint16_t *)y->data)[i] = pfvm_float_to_half((float)v);
        else
            ((float *)y->data)[i] = (float)v;
        if (mask && mask->data)
            ((uint8_t *)mask->data)[i] = (uint8_t)keep;
    }
    return PFVM_OK;
}

/* ---- Shape, Size, Constant, ConstantOfShape ------------------------------------------ */

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
    if (s->rank < 0) {
        pfvm_ival_set_tensor(c->out[0], PFVM_INT64, NULL);
        return pfvm_infer_unknown(c, 0, PFVM_INT64, 1);
    }
    pfvm__tn_shape_range(c->node, s->rank, &a, &b);
    return pfvm__tn_set_vector(c, c->out[0], s->dims + a, b - a);
}

static pfvm_code pfvm__tn_k_shape(pfvm_kctx *k)
{
    int a, b, i;
    int64_t n;
    pfvm__tn_shape_range(k->node, k->in[0]->rank, &a, &b);
    n = b - a;
    if (!k->out[0]->data && pfvm_kctx_output(k, 0, PFVM_INT64, 1, &n))
        return k->st ? k->st->code : PFVM_ERR_NOMEM;
    for (i = a; i < b; i++)
        ((int64_t *)k->out[0]->data)[i - a] = k->in[0]->dims[i];
    return PFVM_OK;
}

static pfvm_code pfvm__tn_infer_size(pfvm_ictx *c)
{
    const pfvm_shape *s = &c->in[0]->type.shape;
    const pfvm_sym *n = pfvm_sym_const(c->syms, 1);
    pfvm_shape scalar;
    int i;
    scalar.rank = 0;
    pfvm_ival_set_tensor(c->out[0], PFVM_INT64, &scalar);
    if (s->rank < 0)
        return PFVM_OK;
    for (i = 0; i < s->rank; i++)
        n = pfvm_sym_mul(c->syms, n, s->dims[i]);
    return pfvm_ival_set_sym(c, c->out[0], &n, 1);
}

static pfvm_code pfvm__tn_k_size(pfvm_kctx *k)
{
    *(int64_t *)k->out[0]->data = pfvm__tn_numel(k->in[0]);
    return PFVM_OK;
}

/* The tensor a Constant node holds; built in the model on first use for the
 * scalar and list forms. */
static const pfvm_tensor *pfvm__tn_constant_value(const pfvm_node *n, pfvm_status *st)
{
    const pfvm_attr *a = n->n_attrs == 1 ? &n->attrs[0] : NULL;
    pfvm_model *m = n->graph->model;
    pfvm_tensor *t;
    int64_t len;
    int i;
    if (!a)
        return pfvm__op_fail(st, n, PFVM_ERR_INVALID, "needs exactly one attribute"), (const pfvm_tensor *)NULL;
    if (a->t && (!strcmp(a->name, "value") || !strcmp(a->name, "sparse_value")))
        return a->t;
    /* the scalar and list forms: made once, cached in the attribute */
    if (!strcmp(a->name, "value_float") && a->type == PFVM_ATTR_FLOAT) {
        t = pfvm_model_tensor(m, PFVM_FLOAT, 0, NULL, NULL, st);
        if (t)
            *(float *)t->data = a->f;
    } else if (!strcmp(a->name, "value_int") && a->type == PFVM_ATTR_INT) {
        t = pfvm_model_tensor(m, PFVM_INT64, 0, NULL, NULL, st);
        if (t)
            *(int64_t *)t->data = a->i;
    } else if (!strcmp(a->name, "value_floats") && a->type == PFVM_ATTR_FLOATS) {
        len = a->n;
        t = pfvm_model_tensor(m, PFVM_FLOAT, 1, &len, NULL, st);
        if (t && len)
            memcpy(t->data, a->floats, sizeof(float) * (size_t)len);
    } else if (!strcmp(a->name, "value_ints") && a->type == PFVM_ATTR_INTS) {
        len = a->n;
        t = pfvm_model_tensor(m, PFVM_INT64, 1, &len, NULL, st);
        if (t && len)
            memcpy(t->data, a->ints, sizeof(int64_t) * (size_t)len);
    } else if (!strcmp(a->name, "value_string") && a->type == PFVM_ATTR_STRING) {
        t = pfvm_model_tensor(m, PFVM_STRING, 0, NULL, NULL, st);
        if (t)
            ((const char **)t->data)[0] = pfvm_model_strdup(m, a->s);
    } else if (!strcmp(a->name, "value_strings") && a->type == PFVM_ATTR_STRINGS) {
        len = a->n;
        t = pfvm_model_tensor(m, PFVM_STRING, 1, &len, NULL, st);
        for (i = 0; t && i < a->n; i++)
            ((const char **)t->data)[i] = a->strings[i];
    } else {
        return pfvm__op_fail(st, n, PFVM_ERR_UNSUPPORTED, "attribute '%s' is not supported", a->name),
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
        return k->st ? k->st->code : PFVM_ERR_INVALID;
    if (!k->out[0]->data && pfvm_kctx_output(k, 0, t->dtype, t->rank, t->dims))
        return k->st ? k->st->code : PFVM_ERR_NOMEM;
    pfvm__tn_copy(k->out[0], 0, t, 0, pfvm__tn_numel(t));
    return PFVM_OK;
}

static pfvm_code pfvm__tn_infer_cos(pfvm_ictx *c)
{
    const pfvm_attr *a = pfvm_node_attr(c->node, "value");
    pfvm_dtype dt = a && a->t ? a->t->dtype : PFVM_FLOAT;
    int64_t v[PFVM__TN_MAXV];
    int n = pfvm__tn_in_ints(c, 0, v), i;
    const pfvm_ival *in = c->in[0];
    pfvm_shape s;
    if (n >= 0) {
        if (pfvm_shape_from_dims(c->syms, &s, n, v, c->st))
            return c->st ? c->st->code : PFVM_ERR_NOMEM;
    } else if (in->sym && in->n_sym <= PFVM_MAX_RANK) {
        s.rank = in->n_sym;
        for (i = 0; i < in->n_sym; i++)
            s.dims[i] = in->sym[i];
    } else {
        int64_t len;
        if (in->type.shape.rank == 1 && pfvm_sym_is_const(in->type.shape.dims[0], &len))
            return pfvm_infer_unknown(c, 0, dt, (int)len);
        return pfvm_infer_unknown(c, 0, dt, -1);
    }
    for (i = 0; i < s.rank; i++) {
        int64_t d;
        if (pfvm_sym_is_const(s.dims[i], &d) && d < 0)
            return pfvm__fail(c->st, PFVM_ERR_SHAPE, "negative dimension %lld", (long long)d);
    }
    pfvm_ival_set_tensor(c->out[0], dt, &s);
    return PFVM_OK;
}

static pfvm_code pfvm__tn_k_cos(pfvm_kctx *k)
{
    const pfvm_attr *a = pfvm_node_attr(k->node, "value");
    int64_t dims[PFVM__TN_MAXV], i, n;
    int r = pfvm__tn_kints(k->in[0], dims, PFVM__TN_MAXV);
    pfvm_dtype dt = a && a->t ? a->t->dtype : PFVM_FLOAT;
    size_t es;
    if (r < 0 || r > PFVM_MAX_RANK)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_UNSUPPORTED, "shape input is too long");
    if (pfvm_kctx_output(k, 0, dt, r, dims))
        return k->st ? k->st->code : PFVM_ERR_NOMEM;
    es = pfvm_dtype_size(dt);
    n = pfvm__tn_numel(k->out[0]);
    for (i = 0; i < n; i++) {
        if (a && a->t)
            memcpy((char *)k->out[0]->data + (size_t)i * es, a->t->data, es);
        else
            ((float *)k->out[0]->data)[i] = 0;
    }
    return PFVM_OK;
}

/* ---- Reshape, Flatten, Squeeze, Unsqueeze: same bytes, new shape --------------------- */

static pfvm_code pfvm__tn_k_copy_all(pfvm_kctx *k)
{
    const pfvm_tensor *x = k->in[0];
    if (!k->out[0]->data)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "output shape unknown");
    if (pfvm__tn_numel(x) != pfvm__tn_numel(k->out[0]))
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "element count changes");
    pfvm__tn_copy(k->out[0], 0, x, 0, pfvm__tn_numel(x));
    return PFVM_OK;
}

/* Reshape's data-dependent form, when the planner could not know the shape. */
static pfvm_code pfvm__tn_reshape_dims(const pfvm_node *n, const pfvm_tensor *x, const pfvm_tensor *shape, int64_t *dims,
                                       int *rank, pfvm_status *st)
{
    int r = pfvm__tn_kints(shape, dims, PFVM_MAX_RANK), i, neg = -1;
    int64_t known = 1, total = pfvm__tn_numel(x);
    int allowzero = (int)pfvm_node_attr_int(n, "allowzero", 0);
    if (r < 0)
        return pfvm__op_fail(st, n, PFVM_ERR_UNSUPPORTED, "target rank exceeds PFVM_MAX_RANK");
    for (i = 0; i < r; i++) {
        if (dims[i] == 0 && !allowzero) {
            if (i >= x->rank)
                return pfvm__op_fail(st, n, PFVM_ERR_SHAPE, "0 at dimension %d copies a dimension the input lacks", i);
            dims[i] = x->dims[i];
        }
        if (dims[i] == -1) {
            if (neg >= 0)
                return pfvm__op_fail(st, n, PFVM_ERR_SHAPE, "more than one -1 in the shape");
            neg = i;
        } else if (dims[i] < 0) {
            return pfvm__op_fail(st, n, PFVM_ERR_SHAPE, "invalid dimension %lld", (long long)dims[i]);
        } else {
            known *= dims[i];
        }
    }
    if (neg >= 0) {
        if (known == 0 || total % known)
            return pfvm__op_fail(st, n, PFVM_ERR_SHAPE, "cannot infer -1: %lld elements into %lld", (long long)total,
                                 (long long)known);
        dims[neg] = total / known;
        known *= dims[neg];
    }
    if (known != total)
        return pfvm__op_fail(st, n, PFVM_ERR_SHAPE, "cannot reshape %lld elements into %lld", (long long)total,
                             (long long)known);
    *rank = r;
    return PFVM_OK;
}

static pfvm_code pfvm__tn_k_reshape(pfvm_kctx *k)
{
    if (!k->out[0]->data) {
        int64_t dims[PFVM_MAX_RANK];
        int r = 0;
        if (pfvm__tn_reshape_dims(k->node, k->in[0], k->in[1], dims, &r, k->st) ||
            pfvm_kctx_output(k, 0, k->in[0]->dtype, r, dims))
            return k->st ? k->st->code : PFVM_ERR_SHAPE;
    }
    return pfvm__tn_k_copy_all(k);
}

static pfvm_code pfvm__tn_infer_reshape(pfvm_ictx *c)
{
    const pfvm_ival *x = c->in[0], *sh = c->in[1];
    pfvm_shape out;
    const pfvm_sym *known = pfvm_sym_const(c->syms, 1), *total = pfvm_sym_const(c->syms, 1);
    int r = -1, i, neg = -1, allowzero = (int)pfvm_node_attr_int(c->node, "allowzero", 0);
    pfvm_dtype dt = x->type.dtype;
    /* the target: constants, or symbolic contents (Shape -> Concat chains) */
    if (sh->value || (sh->sym && sh->n_sym <= PFVM_MAX_RANK)) {
        int64_t tmp[PFVM__TN_MAXV];
        if (sh->value) {
            r = pfvm_ival_ints(sh, tmp, PFVM__TN_MAXV);
            if (r > PFVM_MAX_RANK)
                return pfvm__fail(c->st, PFVM_ERR_UNSUPPORTED, "target rank exceeds PFVM_MAX_RANK");
            for (i = 0; i < r; i++)
                out.dims[i] = pfvm_sym_const(c->syms, tmp[i]);
        } else {
            r = sh->n_sym;
            for (i = 0; i < r; i++)
                out.dims[i] = sh->sym[i];
        }
    }
    if (r < 0) {
        int64_t len;
        if (sh->type.shape.rank == 1 && pfvm_sym_is_const(sh->type.shape.dims[0], &len))
            return pfvm_infer_unknown(c, 0, dt, (int)len);
        return pfvm_infer_unknown(c, 0, dt, -1);
    }
    out.rank = r;
    for (i = 0; i < r; i++) {
        int64_t d;
        if (pfvm_sym_is_const(out.dims[i], &d)) {
            if (d == 0 && !allowzero) {
                if (x->type.shape.rank < 0)
                    return pfvm_infer_unknown(c, 0, dt, r);
                if (i >= x->type.shape.rank)
                    return pfvm__fail(c->st, PFVM_ERR_SHAPE, "0 at dimension %d copies a dimension the input lacks", i);
                out.dims[i] = x->type.shape.dims[i];
            } else if (d == -1) {
                if (neg >= 0)
                    return pfvm__fail(c->st, PFVM_ERR_SHAPE, "more than one -1 in the shape");
                neg = i;
                continue;
            } else if (d < 0) {
                return pfvm__fail(c->st, PFVM_ERR_SHAPE, "invalid dimension %lld", (long long)d);
            }
        }
        known = pfvm_sym_mul(c->syms, known, out.dims[i]);
    }
    if (neg >= 0) {
        int64_t kv, tv;
        if (x->type.shape.rank < 0)
            return pfvm_infer_unknown(c, 0, dt, r);
        for (i = 0; i < x->type.shape.rank; i++)
            total = pfvm_sym_mul(c->syms, total, x->type.shape.dims[i]);
        if (pfvm_sym_is_const(known, &kv) && pfvm_sym_is_const(total, &tv) && (kv == 0 || tv % kv))
            return pfvm__fail(c->st, PFVM_ERR_SHAPE, "cannot reshape %lld elements with the known dims' product %lld",
                              (long long)tv, (long long)kv);
        out.dims[neg] = pfvm_sym_div(c->syms, total, known);
        if (!out.dims[neg])
            return pfvm_infer_unknown(c, 0, dt, r);
    }
    pfvm_ival_set_tensor(c->out[0], dt, &out);
    if (x->sym)
        return pfvm_ival_set_sym(c, c->out[0], x->sym, x->n_sym);
    return PFVM_OK;
}

static pfvm_code pfvm__tn_infer_flatten(pfvm_ictx *c)
{
    const pfvm_shape *s = &c->in[0]->type.shape;
    int64_t axis = pfvm_node_attr_int(c->node, "axis", 1);
    pfvm_shape out;
    int i;
    if (s->rank < 0)
        return pfvm_infer_unknown(c, 0, c->in[0]->type.dtype, 2);
    if (axis < 0)
        axis += s->rank;
    if (axis < 0 || axis > s->rank)
        return pfvm__fail(c->st, PFVM_ERR_INVALID, "axis %lld is out of range for rank %d",
                          (long long)pfvm_node_attr_int(c->node, "axis", 1), s->rank);
    out.rank = 2;
    out.dims[0] = out.dims[1] = pfvm_sym_const(c->syms, 1);
    for (i = 0; i < s->rank; i++)
        out.dims[i >= axis] = pfvm_sym_mul(c->syms, out.dims[i >= axis], s->dims[i]);
    pfvm_ival_set_tensor(c->out[0], c->in[0]->type.dtype, &out);
    return PFVM_OK;
}

static pfvm_code pfvm__tn_infer_squeeze(pfvm_ictx *c)
{
    const pfvm_shape *s = &c->in[0]->type.shape;
    int64_t axes[PFVM__TN_MAXV];
    const int64_t *aa;
    int n = -1, i, j, drop[PFVM_MAX_RANK] = {0};
    pfvm_shape out;
    if (c->node->opset < 13) {
        n = pfvm_node_attr_ints(c->node, "axes", &aa);
        for (i = 0; i < n && i < PFVM__TN_MAXV; i++)
            axes[i] = aa[i];
    } else if (c->n_in > 1 && c->in[1]) {
        n = pfvm__tn_in_ints(c, 1, axes);
        if (n < 0)
            return pfvm_infer_unknown(c, 0, c->in[0]->type.dtype, -1);
    }
    if (s->rank < 0)
        return pfvm_infer_unknown(c, 0, c->in[0]->type.dtype, -1);
    if (n < 0) { /* no axes: every dim of size 1, which must be known */
        for (i = 0; i < s->rank; i++) {
            int64_t d;
            if (!pfvm_sym_is_const(s->dims[i], &d))
                return pfvm_infer_unknown(c, 0, c->in[0]->type.dtype, -1);
            drop[i] = d == 1;
        }
    } else {
        for (i = 0; i < n; i++) {
            int a = pfvm__axis(axes[i], s->rank);
            int64_t d;
            if (a < 0)
                return pfvm__fail(c->st, PFVM_ERR_INVALID, "axis %lld is out of range", (long long)axes[i]);
            if (pfvm_sym_is_const(s->dims[a], &d) && d != 1)
                return pfvm__fail(c->st, PFVM_ERR_SHAPE, "cannot squeeze dimension %d of size %lld", a, (long long)d);
            drop[a] = 1;
        }
    }
    for (i = 0, j = 0; i < s->rank; i++)
        if (!drop[i])
            out.dims[j++] = s->dims[i];
    out.rank = j;
    pfvm_ival_set_tensor(c->out[0], c->in[0]->type.dtype, &out);
    if (c->in[0]->sym)
        return pfvm_ival_set_sym(c, c->out[0], c->in[0]->sym, c->in[0]->n_sym);
    return PFVM_OK;
}

static pfvm_code pfvm__tn_infer_unsqueeze(pfvm_ictx *c)
{
    const pfvm_shape *s = &c->in[0]->type.shape;
    int64_t axes[PFVM__TN_MAXV];
    const int64_t *aa;
    int n, i, j, r, ins[PFVM_MAX_RANK] = {0};
    pfvm_shape out;
    if (c->node->opset < 13) {
        n = pfvm_node_attr_ints(c->node, "axes", &aa);
        for (i = 0; i < n && i < PFVM__TN_MAXV; i++)
            axes[i] = aa[i];
    } else {
        n = pfvm__tn_in_ints(c, 1, axes);
    }
    if (n < 0 || s->rank < 0)
        return pfvm_infer_unknown(c, 0, c->in[0]->type.dtype, -1);
    r = s->rank + n;
    if (r > PFVM_MAX_RANK)
        return pfvm__fail(c->st, PFVM_ERR_UNSUPPORTED, "rank %d exceeds PFVM_MAX_RANK", r);
    for (i = 0; i < n; i++) {
        int a = pfvm__axis(axes[i], r);
        if (a < 0 || ins[a])
            return pfvm__fail(c->st, PFVM_ERR_INVALID, "axis %lld is out of range or repeated", (long long)axes[i]);
        ins[a] = 1;
    }
    for (i = 0, j = 0; i < r; i++)
        out.dims[i] = ins[i] ? pfvm_sym_const(c->syms, 1) : s->dims[j++];
    out.rank = r;
    pfvm_ival_set_tensor(c->out[0], c->in[0]->type.dtype, &out);
    if (c->in[0]->sym)
        return pfvm_ival_set_sym(c, c->out[0], c->in[0]->sym, c->in[0]->n_sym);
    return PFVM_OK;
}

/* ---- Transpose ------------------------------------------------------------------------ */

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
    if (s->rank < 0)
        return pfvm_infer_unknown(c, 0, c->in[0]->type.dtype, -1);
    if (!pfvm__tn_perm(c->node, s->rank, perm))
        return pfvm__fail(c->st, PFVM_ERR_INVALID, "perm is not a permutation of %d axes", s->rank);
    out.rank = s->rank;
    for (i = 0; i < s->rank; i++)
        out.dims[i] = s->dims[perm[i]];
    pfvm_ival_set_tensor(c->out[0], c->in[0]->type.dtype, &out);
    return PFVM_OK;
}

/* Copies x into y where y's dim i walks x's dim perm[i]. */
static void pfvm__tn_permute(pfvm_tensor *y, const pfvm_tensor *x, const int *perm)
{
    int64_t xs[PFVM_MAX_RANK], st[PFVM_MAX_RANK], idx[PFVM_MAX_RANK] = {0}, total = pfvm__tn_numel(y), o, inner;
    int d, r = y->rank;
    size_t es = pfvm_dtype_size(x->dtype);
    pfvm__tn_strides(x, xs);
    for (d = 0; d < r; d++)
        st[d] = xs[perm[d]];
    inner = r ? y->dims[r - 1] : 1;
    for (o = 0; o < total; o += inner) {
        int64_t src = 0, e;
        for (d = 0; d < r - 1; d++)
            src += idx[d] * st[d];
        if (x->dtype == PFVM_STRING || es != 4) {
            for (e = 0; e < inner; e++)
                pfvm__tn_copy(y, o + e, x, src + e * (r ? st[r - 1] : 0), 1);
        } else {
            const uint32_t *sp = (const uint32_t *)x->data + src;
            uint32_t *dp = (uint32_t *)y->data + o;
            int64_t s1 = r ? st[r - 1] : 0;
            for (e = 0; e < inner; e++)
                dp[e] = sp[e * s1];
        }
        for (d = r - 2; d >= 0; d--) {
            if (++idx[d] < y->dims[d])
                break;
            idx[d] = 0;
        }
    }
}

static pfvm_code pfvm__tn_k_transpose(pfvm_kctx *k)
{
    int perm[PFVM_MAX_RANK];
    if (!pfvm__tn_perm(k->node, k->in[0]->rank, perm))
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "perm is not a permutation");
    pfvm__tn_permute(k->out[0], k->in[0], perm);
    return PFVM_OK;
}

/* ---- Concat, Split ------------------------------------------------------------------------ */

static pfvm_code pfvm__tn_infer_concat(pfvm_ictx *c)
{
    int64_t axis = pfvm_node_attr_int(c->node, "axis", 0);
    const pfvm_shape *s0 = &c->in[0]->type.shape;
    pfvm_shape out;
    int j, d, a, all_sym = 1, n_sym = 0;
    const pfvm_sym *syms[PFVM__TN_MAXV];
    for (j = 0; j < c->n_in; j++)
        if (c->in[j]->type.shape.rank < 0)
            return pfvm_infer_unknown(c, 0, c->in[0]->type.dtype, s0->rank >= 0 ? s0->rank : -1);
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
                out.dims[d] = pfvm_sym_add(c->syms, out.dims[d], s->dims[d]);
            } else if (pfvm_sym_is_const(out.dims[d], &x) && pfvm_sym_is_const(s->dims[d], &y) && x != y) {
                return pfvm__fail(c->st, PFVM_ERR_SHAPE, "dimension %d differs: %lld vs %lld", d, (long long)x, (long long)y);
            } else if (!pfvm_sym_is_const(out.dims[d], NULL) && pfvm_sym_is_const(s->dims[d], NULL)) {
                out.dims[d] = s->dims[d];
            }
        }
    }
    pfvm_ival_set_tensor(c->out[0], c->in[0]->type.dtype, &out);
    /* shape vectors being assembled */
    for (j = 0; j < c->n_in && all_sym; j++) {
        const pfvm_ival *v = c->in[j];
        int64_t tmp[PFVM__TN_MAXV];
        int k, n;
        if (s0->rank != 1) {
            all_sym = 0;
        } else if (v->sym && n_sym + v->n_sym <= PFVM__TN_MAXV) {
            for (k = 0; k < v->n_sym; k++)
                syms[n_sym++] = v->sym[k];
        } else if ((n = pfvm_ival_ints(v, tmp, PFVM__TN_MAXV)) >= 0 && n_sym + n <= PFVM__TN_MAXV) {
            for (k = 0; k < n; k++)
                syms[n_sym++] = pfvm_sym_const(c->syms, tmp[k]);
        } else {
            all_sym = 0;
        }
    }
    if (all_sym && pfvm_dtype_is_int(c->in[0]->type.dtype))
        return pfvm_ival_set_sym(c, c->out[0], syms, n_sym);
    return PFVM_OK;
}

/* Copies `in` into `out` at offset `at` along axis a (outer x axis x inner). */
static void pfvm__tn_concat_one(pfvm_tensor *out, const pfvm_tensor *in, int a, int64_t at)
{
    int64_t outer = 1, inner = 1, o;
    int d;
    for (d = 0; d < a; d++)
        outer *= in->dims[d];
    for (d = a + 1; d < in->rank; d++)
        inner *= in->dims[d];
    for (o = 0; o < outer; o++)
        pfvm__tn_copy(out, (o * out->dims[a] + at) * inner, in, o * in->dims[a] * inner, in->dims[a] * inner);
}

static pfvm_code pfvm__tn_k_concat(pfvm_kctx *k)
{
    int a = pfvm__axis(pfvm_node_attr_int(k->node, "axis", 0), k->out[0]->rank), j;
    int64_t at = 0;
    if (a < 0)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "axis is out of range");
    for (j = 0; j < k->n_in; j++) {
        if (k->in[j]->rank != k->out[0]->rank)
            return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "input %d has the wrong rank", j);
        pfvm__tn_concat_one(k->out[0], k->in[j], a, at);
        at += k->in[j]->dims[a];
    }
    return PFVM_OK;
}

/* Sizes of Split's outputs along the axis; -1 when unknown. */
static int pfvm__tn_split_sizes(const pfvm_node *n, int n_out, const pfvm_ival *split_in, const pfvm_tensor *split_t,
                                int64_t *sizes)
{
    const int64_t *a;
    int cnt = pfvm_node_attr_ints(n, "split", &a), i;
    if (cnt >= 0) {
        if (cnt != n_out)
            return -2;
        for (i = 0; i < cnt; i++)
            sizes[i] = a[i];
        return cnt;
    }
    if (split_in) {
        cnt = pfvm_ival_ints(split_in, sizes, PFVM__TN_MAXV);
        return cnt < 0 ? -1 : cnt != n_out ? -2 : cnt;
    }
    if (split_t) {
        cnt = pfvm__tn_kints(split_t, sizes, PFVM__TN_MAXV);
        return cnt != n_out ? -2 : cnt;
    }
    return 0; /* equal parts */
}

static pfvm_code pfvm__tn_infer_split(pfvm_ictx *c)
{
    const pfvm_shape *s = &c->in[0]->type.shape;
    int64_t sizes[PFVM__TN_MAXV], total;
    int a, j, cnt;
    if (c->n_out > PFVM__TN_MAXV)
        return pfvm__fail(c->st, PFVM_ERR_UNSUPPORTED, "too many outputs");
    if (s->rank < 0) {
        for (j = 0; j < c->n_out; j++)
            pfvm_infer_unknown(c, j, c->in[0]->type.dtype, -1);
        return PFVM_OK;
    }
    a = pfvm__axis(pfvm_node_attr_int(c->node, "axis", 0), s->rank);
    if (a < 0)
        return pfvm__fail(c->st, PFVM_ERR_INVALID, "axis is out of range for rank %d", s->rank);
    cnt = pfvm__tn_split_sizes(c->node, c->n_out, c->n_in > 1 ? c->in[1] : NULL, NULL, sizes);
    if (cnt == -2)
        return pfvm__fail(c->st, PFVM_ERR_INVALID, "split has %d entries for %d outputs", cnt, c->n_out);
    for (j = 0; j < c->n_out; j++) {
        pfvm_shape o = *s;
        if (cnt < 0) {
            pfvm_infer_unknown(c, j, c->in[0]->type.dtype, s->rank);
            continue;
        }
        if (cnt == 0) {
            /* equal parts: symbolic when the axis divides evenly */
            if (pfvm_sym_is_const(s->dims[a], &total) && total % c->n_out)
                return pfvm__fail(c->st, PFVM_ERR_SHAPE, "%lld does not split into %d equal parts", (long long)total,
                                  c->n_out);
            o.dims[a] = pfvm_sym_div(c->syms, s->dims[a], pfvm_sym_const(c->syms, c->n_out));
        } else {
            o.dims[a] = pfvm_sym_const(c->syms, sizes[j]);
        }
        if (c->out[j])
            pfvm_ival_set_tensor(c->out[j], c->in[0]->type.dtype, &o);
    }
    return PFVM_OK;
}

static pfvm_code pfvm__tn_k_split(pfvm_kctx *k)
{
    const pfvm_tensor *x = k->in[0];
    int a = pfvm__axis(pfvm_node_attr_int(k->node, "axis", 0), x->rank), j, d;
    int64_t at = 0, outer = 1, inner = 1, o, sizes[PFVM__TN_MAXV];
    int cnt = pfvm__tn_split_sizes(k->node, k->n_out, NULL, k->n_in > 1 ? k->in[1] : NULL, sizes);
    if (a < 0 || cnt < 0 || k->n_out > PFVM__TN_MAXV)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "bad axis or split");
    for (d = 0; d < a; d++)
        outer *= x->dims[d];
    for (d = a + 1; d < x->rank; d++)
        inner *= x->dims[d];
    for (j = 0; j < k->n_out; j++) {
        int64_t len = cnt ? sizes[j] : x->dims[a] / k->n_out;
        if (len < 0 || at + len > x->dims[a])
            return pfvm__op_fail(k->st, k->node, PFVM_ERR_RANGE, "split sizes exceed the axis");
        if (k->out[j]) {
            if (!k->out[j]->data) {
                int64_t dims[PFVM_MAX_RANK];
                memcpy(dims, x->dims, sizeof(int64_t) * (size_t)x->rank);
                dims[a] = len;
                if (pfvm_kctx_output(k, j, x->dtype, x->rank, dims))
                    return k->st ? k->st->code : PFVM_ERR_NOMEM;
            }
            for (o = 0; o < outer; o++)
                pfvm__tn_copy(k->out[j], o * len * inner, x, (o * x->dims[a] + at) * inner, len * inner);
        }
        at += len;
    }
    return PFVM_OK;
}

/* ---- Slice -------------------------------------------------------------------------------- */

typedef struct pfvm__tn_slice {
    int64_t start[PFVM_MAX_RANK], step[PFVM_MAX_RANK], len[PFVM_MAX_RANK];
} pfvm__tn_slice;

/* Resolves starts/ends/axes/steps against concrete dims. */
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
        int a = pfvm__axis(axes ? axes[i] : i, rank);
        int64_t d, s, e, step = steps ? steps[i] : 1;
        if (a < 0 || seen[a])
            return pfvm__fail(st, PFVM_ERR_INVALID, "slice axis %lld is out of range or repeated",
                              (long long)(axes ? axes[i] : i));
        if (step == 0)
            return pfvm__fail(st, PFVM_ERR_INVALID, "slice step is 0");
        seen[a] = 1;
        d = dims[a];
        s = starts[i];
        e = ends[i];
        if (s < 0)
            s += d;
        if (e < 0)
            e += d;
        if (step > 0) {
            s = s < 0 ? 0 : s > d ? d : s;
            e = e < 0 ? 0 : e > d ? d : e;
            p->len[a] = e > s ? (e - s + step - 1) / step : 0;
        } else {
            s = s < 0 ? -1 : s > d - 1 ? d - 1 : s;
            e = e < -1 ? -1 : e > d - 1 ? d - 1 : e;
            p->len[a] = s > e ? (s - e + (-step) - 1) / (-step) : 0;
        }
        p->start[a] = s;
        p->step[a] = step;
    }
    return PFVM_OK;
}

/* Slice's parameters from attributes (opset < 10) or inputs. */
static int pfvm__tn_slice_args(const pfvm_node *n, const pfvm_tensor *const *in, int n_in, int64_t *starts,
                               int64_t *ends, int64_t *axes, int64_t *steps, int *has_axes, int *has_steps)
{
    int cnt, c2;
    *has_axes = *has_steps = 0;
    if (n->opset < 10) {
        const int64_t *a;
        int i;
        cnt = pfvm_node_attr_ints(n, "starts", &a);
        if (cnt < 0 || cnt > PFVM__TN_MAXV)
            return -1;
        for (i = 0; i < cnt; i++)
            starts[i] = a[i];
        if (pfvm_node_attr_ints(n, "ends", &a) != cnt)
            return -1;
        for (i = 0; i < cnt; i++)
            ends[i] = a[i];
        if (pfvm_node_attr_ints(n, "axes", &a) == cnt) {
            for (i = 0; i < cnt; i++)
                axes[i] = a[i];
            *has_axes = 1;
        }
        return cnt;
    }
    cnt = pfvm__tn_kints(in[1], starts, PFVM__TN_MAXV);
    if (cnt < 0 || pfvm__tn_kints(in[2], ends, PFVM__TN_MAXV) != cnt)
        return -1;
    if (n_in > 3 && in[3]) {
        if ((c2 = pfvm__tn_kints(in[3], axes, PFVM__TN_MAXV)) != cnt)
            return -1;
        *has_axes = 1;
    }
    if (n_in > 4 && in[4]) {
        if ((c2 = pfvm__tn_kints(in[4], steps, PFVM__TN_MAXV)) != cnt)
            return -1;
        *has_steps = 1;
    }
    return cnt;
}

static pfvm_code pfvm__tn_infer_slice(pfvm_ictx *c)
{
    const pfvm_shape *s = &c->in[0]->type.shape;
    const pfvm_tensor *vals[5] = {NULL, NULL, NULL, NULL, NULL};
    int64_t starts[PFVM__TN_MAXV], ends[PFVM__TN_MAXV], axes[PFVM__TN_MAXV], steps[PFVM__TN_MAXV];
    int64_t dims[PFVM_MAX_RANK];
    int i, n, ha, hs, all_const = 1;
    pfvm__tn_slice p;
    pfvm_shape out;
    if (s->rank < 0)
        return pfvm_infer_unknown(c, 0, c->in[0]->type.dtype, -1);
    for (i = 1; i < c->n_in && i < 5; i++) {
        if (!c->in[i])
            continue;
        if (!c->in[i]->value && !pfvm__ival_materialize((pfvm_ival *)c->in[i], c->arena))
            return pfvm_infer_unknown(c, 0, c->in[0]->type.dtype, s->rank);
        vals[i] = c->in[i]->value;
    }
    n = pfvm__tn_slice_args(c->node, vals, c->n_in, starts, ends, axes, steps, &ha, &hs);
    if (n < 0)
        return pfvm__fail(c->st, PFVM_ERR_INVALID, "starts, ends, axes and steps must have equal lengths");
    for (i = 0; i < s->rank; i++)
        if (!pfvm_sym_is_const(s->dims[i], &dims[i]))
            all_const = 0;
    if (!all_const) {
        /* symbolic dims: the untouched ones pass through; sliced ones are
         * exact for the common non-negative, in-range, step-1 case */
        out = *s;
        for (i = 0; i < n; i++) {
            int a = pfvm__axis(ha ? axes[i] : i, s->rank);
            int64_t st0 = starts[i], en = ends[i], step = hs ? steps[i] : 1;
            if (a < 0)
                return pfvm__fail(c->st, PFVM_ERR_INVALID, "slice axis is out of range");
            if (step == 1 && st0 >= 0 && en >= INT64_MAX / 2) {
                out.dims[a] = pfvm_sym_max(c->syms, pfvm_sym_const(c->syms, 0),
                                           pfvm_sym_sub(c->syms, s->dims[a], pfvm_sym_const(c->syms, st0)));
            } else if (step == 1 && st0 >= 0 && en >= 0) {
                out.dims[a] = pfvm_sym_max(c->syms, pfvm_sym_const(c->syms, 0),
                                           pfvm_sym_sub(c->syms, pfvm_sym_min(c->syms, s->dims[a], pfvm_sym_const(c->syms, en)),
                                                        pfvm_sym_min(c->syms, s->dims[a], pfvm_sym_const(c->syms, st0))));
            } else {
                return pfvm_infer_unknown(c, 0, c->in[0]->type.dtype, s->rank);
            }
        }
        pfvm_ival_set_tensor(c->out[0], c->in[0]->type.dtype, &out);
        return PFVM_OK;
    }
    if (pfvm__tn_slice_plan(dims, s->rank, starts, ends, ha ? axes : NULL, hs ? steps : NULL, n, &p, c->st))
        return c->st ? c->st->code : PFVM_ERR_INVALID;
    if (pfvm_shape_from_dims(c->syms, &out, s->rank, p.len, c->st))
        return c->st ? c->st->code : PFVM_ERR_NOMEM;
    pfvm_ival_set_tensor(c->out[0], c->in[0]->type.dtype, &out);
    /* slices of shape vectors keep their symbolic contents */
    if (c->in[0]->sym && s->rank == 1) {
        const pfvm_sym *v[PFVM__TN_MAXV];
        int64_t j;
        for (j = 0; j < p.len[0] && j < PFVM__TN_MAXV; j++)
            v[j] = c->in[0]->sym[p.start[0] + j * p.step[0]];
        return pfvm_ival_set_sym(c, c->out[0], v, (int)p.len[0]);
    }
    return PFVM_OK;
}

static pfvm_code pfvm__tn_k_slice(pfvm_kctx *k)
{
    const pfvm_tensor *x = k->in[0];
    int64_t starts[PFVM__TN_MAXV], ends[PFVM__TN_MAXV], axes[PFVM__TN_MAXV], steps[PFVM__TN_MAXV];
    int64_t xs[PFVM_MAX_RANK], idx[PFVM_MAX_RANK] = {0}, total, o;
    int n, ha, hs, d, r = x->rank;
    pfvm__tn_slice p;
    n = pfvm__tn_slice_args(k->node, k->in, k->n_in, starts, ends, axes, steps, &ha, &hs);
    if (n < 0)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "starts, ends, axes and steps must have equal lengths");
    if (pfvm__tn_slice_plan(x->dims, r, starts, ends, ha ? axes : NULL, hs ? steps : NULL, n, &p, k->st))
        return k->st ? k->st->code : PFVM_ERR_INVALID;
    if (!k->out[0]->data && pfvm_kctx_output(k, 0, x->dtype, r, p.len))
        return k->st ? k->st->code : PFVM_ERR_NOMEM;
    pfvm__tn_strides(x, xs);
    total = pfvm__tn_numel(k->out[0]);
    for (o = 0; o < total; o++) {
        int64_t src = 0;
        for (d = 0; d < r; d++)
            src += (p.start[d] + idx[d] * p.step[d]) * xs[d];
        pfvm__tn_copy(k->out[0], o, x, src, 1);
        for (d = r - 1; d >= 0; d--) {
            if (++idx[d] < p.len[d])
                break;
            idx[d] = 0;
        }
    }
    return PFVM_OK;
}

/* ---- Gather --------------------------------------------------------------------------------- */

static pfvm_code pfvm__tn_infer_gather(pfvm_ictx *c)
{
    const pfvm_shape *s = &c->in[0]->type.shape, *is = &c->in[1]->type.shape;
    pfvm_shape out;
    int a, i, r;
    if (s->rank < 0 || is->rank < 0)
        return pfvm_infer_unknown(c, 0, c->in[0]->type.dtype, -1);
    a = pfvm__axis(pfvm_node_attr_int(c->node, "axis", 0), s->rank);
    if (a < 0)
        return pfvm__fail(c->st, PFVM_ERR_INVALID, "axis is out of range for rank %d", s->rank);
    r = s->rank - 1 + is->rank;
    if (r > PFVM_MAX_RANK)
        return pfvm__fail(c->st, PFVM_ERR_UNSUPPORTED, "rank %d exceeds PFVM_MAX_RANK", r);
    out.rank = 0;
    for (i = 0; i < a; i++)
        out.dims[out.rank++] = s->dims[i];
    for (i = 0; i < is->rank; i++)
        out.dims[out.rank++] = is->dims[i];
    for (i = a + 1; i < s->rank; i++)
        out.dims[out.rank++] = s->dims[i];
    pfvm_ival_set_tensor(c->out[0], c->in[0]->type.dtype, &out);
    /* picking entries of a shape vector */
    if (c->in[0]->sym && s->rank == 1) {
        int64_t idx[PFVM__TN_MAXV];
        const pfvm_sym *v[PFVM__TN_MAXV];
        int n = pfvm_ival_ints(c->in[1], idx, PFVM__TN_MAXV);
        for (i = 0; i < n; i++) {
            int64_t j = idx[i] < 0 ? idx[i] + c->in[0]->n_sym : idx[i];
            if (j < 0 || j >= c->in[0]->n_sym)
                return pfvm__fail(c->st, PFVM_ERR_RANGE, "index %lld is out of range", (long long)idx[i]);
            v[i] = c->in[0]->sym[j];
        }
        if (n >= 0)
            return pfvm_ival_set_sym(c, c->out[0], v, n);
    }
    return PFVM_OK;
}

static pfvm_code pfvm__tn_k_gather(pfvm_kctx *k)
{
    const pfvm_tensor *x = k->in[0], *ix = k->in[1];
    int a = pfvm__axis(pfvm_node_attr_int(k->node, "axis", 0), x->rank), d;
    int64_t outer = 1, inner = 1, n = pfvm__tn_numel(ix), o, i, dim;
    if (a < 0)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "axis is out of range");
    dim = x->dims[a];
    for (d = 0; d < a; d++)
        outer *= x->dims[d];
    for (d = a + 1; d < x->rank; d++)
        inner *= x->dims[d];
    for (o = 0; o < outer; o++)
        for (i = 0; i < n; i++) {
            int64_t j = pfvm_tensor_get_i64(ix, i);
            if (j < 0)
                j += dim;
            if (j < 0 || j >= dim)
                return pfvm__op_fail(k->st, k->node, PFVM_ERR_RANGE, "index %lld is out of range for a dimension of %lld",
                                     (long long)pfvm_tensor_get_i64(ix, i), (long long)dim);
            pfvm__tn_copy(k->out[0], (o * n + i) * inner, x, (o * dim + j) * inner, inner);
        }
    return PFVM_OK;
}

/* ---- Expand, Tile --------------------------------------------------------------------------- */

static pfvm_code pfvm__tn_infer_expand(pfvm_ictx *c)
{
    int64_t v[PFVM__TN_MAXV];
    int n = pfvm__tn_in_ints(c, 1, v), i;
    pfvm_shape target;
    const pfvm_shape *shapes[2];
    pfvm_shape out;
    if (n < 0 && c->in[1]->sym && c->in[1]->n_sym <= PFVM_MAX_RANK) {
        target.rank = c->in[1]->n_sym;
        for (i = 0; i < target.rank; i++)
            target.dims[i] = c->in[1]->sym[i];
    } else if (n < 0 || n > PFVM_MAX_RANK) {
        return pfvm_infer_unknown(c, 0, c->in[0]->type.dtype, -1);
    } else if (pfvm_shape_from_dims(c->syms, &target, n, v, c->st)) {
        return c->st ? c->st->code : PFVM_ERR_NOMEM;
    }
    shapes[0] = &c->in[0]->type.shape;
    shapes[1] = &target;
    if (pfvm_infer_broadcast(c, shapes, 2, &out))
        return c->st ? c->st->code : PFVM_ERR_SHAPE;
    pfvm_ival_set_tensor(c->out[0], c->in[0]->type.dtype, &out);
    return PFVM_OK;
}

typedef struct pfvm__tn_bc {
    const pfvm_tensor *x;
    pfvm_tensor *y;
} pfvm__tn_bc;

static void pfvm__tn_bc_span(void *user, int64_t pos, int64_t len, const int64_t *off, const int64_t *stride)
{
    pfvm__tn_bc *b = (pfvm__tn_bc *)user;
    int64_t e;
    if (stride[0] == 1) {
        pfvm__tn_copy(b->y, pos, b->x, off[0], len);
        return;
    }
    for (e = 0; e < len; e++)
        pfvm__tn_copy(b->y, pos + e, b->x, off[0] + e * stride[0], 1);
}

static pfvm_code pfvm__tn_k_expand(pfvm_kctx *k)
{
    pfvm__tn_bc b;
    if (!k->out[0]->data) {
        int64_t v[PFVM_MAX_RANK], dims[PFVM_MAX_RANK];
        int n = pfvm__tn_kints(k->in[1], v, PFVM_MAX_RANK), r, d;
        if (n < 0)
            return pfvm__op_fail(k->st, k->node, PFVM_ERR_UNSUPPORTED, "shape is too long");
        r = n > k->in[0]->rank ? n : k->in[0]->rank;
        for (d = 0; d < r; d++) {
            int64_t a = d - (r - k->in[0]->rank) >= 0 ? k->in[0]->dims[d - (r - k->in[0]->rank)] : 1;
            int64_t c = d - (r - n) >= 0 ? v[d - (r - n)] : 1;
            if (a != c && a != 1 && c != 1)
                return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "cannot broadcast %lld to %lld", (long long)a,
                                     (long long)c);
            dims[d] = a == 1 ? c : a;
        }
        if (pfvm_kctx_output(k, 0, k->in[0]->dtype, r, dims))
            return k->st ? k->st->code : PFVM_ERR_NOMEM;
    }
    b.x = k->in[0];
    b.y = k->out[0];
    return pfvm_ew_apply(k, k->in, 1, k->out[0], pfvm__tn_bc_span, &b);
}

static pfvm_code pfvm__tn_infer_tile(pfvm_ictx *c)
{
    const pfvm_shape *s = &c->in[0]->type.shape;
    int64_t v[PFVM__TN_MAXV];
    int n = pfvm__tn_in_ints(c, 1, v), i;
    pfvm_shape out;
    if (s->rank < 0 || n < 0)
        return pfvm_infer_unknown(c, 0, c->in[0]->type.dtype, s->rank);
    if (n != s->rank)
        return pfvm__fail(c->st, PFVM_ERR_SHAPE, "repeats has %d entries for rank %d", n, s->rank);
    out = *s;
    for (i = 0; i < n; i++) {
        if (v[i] < 0)
            return pfvm__fail(c->st, PFVM_ERR_INVALID, "negative repeat");
        out.dims[i] = pfvm_sym_muli(c->syms, s->dims[i], v[i]);
    }
    pfvm_ival_set_tensor(c->out[0], c->in[0]->type.dtype, &out);
    return PFVM_OK;
}

static pfvm_code pfvm__tn_k_tile(pfvm_kctx *k)
{
    const pfvm_tensor *x = k->in[0];
    pfvm_tensor *y = k->out[0];
    int64_t xs[PFVM_MAX_RANK], idx[PFVM_MAX_RANK] = {0}, total = pfvm__tn_numel(y), o;
    int d, r = y->rank;
    pfvm__tn_strides(x, xs);
    for (o = 0; o < total; o++) {
        int64_t src = 0;
        for (d = 0; d < r; d++)
            src += (x->dims[d] ? idx[d] % x->dims[d] : 0) * xs[d];
        pfvm__tn_copy(y, o, x, src, 1);
        for (d = r - 1; d >= 0; d--) {
            if (++idx[d] < y->dims[d])
                break;
            idx[d] = 0;
        }
    }
    return PFVM_OK;
}

/* ---- Pad ------------------------------------------------------------------------------------- */

static int pfvm__tn_pads(const pfvm_node *n, const pfvm_tensor *pads_t, int rank, int64_t *pads)
{
    const int64_t *a;
    int cnt, i;
    if (n->opset < 11) {
        cnt = pfvm_node_attr_ints(n, "pads", &a);
        if (cnt != 2 * rank)
            return 0;
        for (i = 0; i < cnt; i++)
            pads[i] = a[i];
        return 1;
    }
    return pads_t && pfvm__tn_kints(pads_t, pads, 2 * PFVM_MAX_RANK) == 2 * rank;
}

static pfvm_code pfvm__tn_infer_pad(pfvm_ictx *c)
{
    const pfvm_shape *s = &c->in[0]->type.shape;
    int64_t pads[2 * PFVM_MAX_RANK];
    pfvm_shape out;
    int i;
    if (s->rank < 0)
        return pfvm_infer_unknown(c, 0, c->in[0]->type.dtype, -1);
    if (c->node->opset < 11) {
        if (!pfvm__tn_pads(c->node, NULL, s->rank, pads))
            return pfvm__fail(c->st, PFVM_ERR_INVALID, "pads must have 2*rank entries");
    } else if (pfvm_ival_ints(c->in[1], pads, 2 * PFVM_MAX_RANK) != 2 * s->rank) {
        return pfvm_infer_unknown(c, 0, c->in[0]->type.dtype, s->rank);
    }
    out = *s;
    for (i = 0; i < s->rank; i++)
        out.dims[i] = pfvm_sym_addi(c->syms, s->dims[i], pads[i] + pads[i + s->rank]);
    pfvm_ival_set_tensor(c->out[0], c->in[0]->type.dtype, &out);
    return PFVM_OK;
}

static pfvm_code pfvm__tn_k_pad(pfvm_kctx *k)
{
    const pfvm_tensor *x = k->in[0];
    pfvm_tensor *y = k->out[0];
    int64_t pads[2 * PFVM_MAX_RANK], xs[PFVM_MAX_RANK], idx[PFVM_MAX_RANK] = {0}, total = pfvm__tn_numel(y), o;
    int d, r = x->rank;
    const char *mode = pfvm_node_attr_string(k->node, "mode", "constant");
    size_t es = pfvm_dtype_size(x->dtype);
    unsigned char cval[16] = {0};
    if (!pfvm__tn_pads(k->node, k->n_in > 1 ? k->in[1] : NULL, r, pads))
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "pads must have 2*rank entries");
    if (k->node->opset < 11) {
        float f = pfvm_node_attr_float(k->node, "value", 0);
        if (x->dtype == PFVM_FLOAT)
            memcpy(cval, &f, 4);
    } else if (k->n_in > 2 && k->in[2] && k->in[2]->data && es <= sizeof cval) {
        memcpy(cval, k->in[2]->data, es);
    }
    if (strcmp(mode, "constant") && strcmp(mode, "reflect") && strcmp(mode, "edge"))
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_UNSUPPORTED, "mode '%s' is not supported", mode);
    if (x->dtype == PFVM_STRING)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_UNSUPPORTED, "string tensors are not supported");
    pfvm__tn_strides(x, xs);
    for (o = 0; o < total; o++) {
        int64_t src = 0;
        int outside = 0;
        for (d = 0; d < r; d++) {
            int64_t i = idx[d] - pads[d], n = x->dims[d];
            if (i < 0 || i >= n) {
                if (mode[0] == 'c' || n == 0) {
                    outside = 1;
                    break;
                }
                if (mode[0] == 'e') {
                    i = i < 0 ? 0 : n - 1;
                } else { /* reflect, without repeating the edge */
                    int64_t period = n > 1 ? 2 * (n - 1) : 1;
                    i = i < 0 ? -i : i;
                    i %= period;
                    if (i >= n)
                        i = period - i;
                }
            }
            src += i * xs[d];
        }
        if (outside)
            memcpy((char *)y->data + (size_t)o * es, cval, es);
        else
            memcpy((char *)y->data + (size_t)o * es, (const char *)x->data + (size_t)src * es, es);
        for (d = r - 1; d >= 0; d--) {
            if (++idx[d] < y->dims[d])
                break;
            idx[d] = 0;
        }
    }
    return PFVM_OK;
}

/* ---- Range, Trilu ------------------------------------------------------------------------------ */

static pfvm_code pfvm__tn_infer_range(pfvm_ictx *c)
{
    pfvm_dtype dt = c->in[0]->type.dtype;
    const pfvm_tensor *a = c->in[0]->value, *b = c->in[1]->value, *d = c->in[2]->value;
    pfvm_shape s;
    if (!(a && b && d) && pfvm_dtype_is_int(dt)) {
        /* integer ranges over symbolic bounds: ceil((limit - start) / delta) */
        const pfvm_sym *v[3];
        int i, ok = 1;
        for (i = 0; i < 3 && ok; i++) {
            int64_t x;
            if (c->in[i]->sym && c->in[i]->n_sym == 1)
                v[i] = c->in[i]->sym[0];
            else if (pfvm_ival_ints(c->in[i], &x, 1) == 1)
                v[i] = pfvm_sym_const(c->syms, x);
            else
                ok = 0;
        }
        if (ok && pfvm_sym_is_const(v[2], NULL) && v[2]->value > 0) {
            const pfvm_sym *len = pfvm_sym_ceildiv(c->syms, pfvm_sym_sub(c->syms, v[1], v[0]), v[2]);
            s.rank = 1;
            s.dims[0] = pfvm_sym_max(c->syms, pfvm_sym_const(c->syms, 0), len);
            if (s.dims[0]) {
                pfvm_ival_set_tensor(c->out[0], dt, &s);
                return PFVM_OK;
            }
        }
    }
    if (a && b && d) {
        double start = pfvm_tensor_get_f64(a, 0), limit = pfvm_tensor_get_f64(b, 0), delta = pfvm_tensor_get_f64(d, 0);
        double n;
        if (delta == 0)
            return pfvm__fail(c->st, PFVM_ERR_INVALID, "delta is 0");
        n = ceil((limit - start) / delta);
        s.rank = 1;
        s.dims[0] = pfvm_sym_const(c->syms, n > 0 ? (int64_t)n : 0);
        pfvm_ival_set_tensor(c->out[0], dt, &s);
        return PFVM_OK;
    }
    return pfvm_infer_unknown(c, 0, dt, 1);
}

static pfvm_code pfvm__tn_k_range(pfvm_kctx *k)
{
    double start = pfvm_tensor_get_f64(k->in[0], 0), delta = pfvm_tensor_get_f64(k->in[2], 0);
    double limit = pfvm_tensor_get_f64(k->in[1], 0), cnt;
    int64_t n, i;
    pfvm_dtype dt = k->in[0]->dtype;
    if (delta == 0)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "delta is 0");
    cnt = ceil((limit - start) / delta);
    n = cnt > 0 ? (int64_t)cnt : 0;
    if (n > ((int64_t)1 << 40))
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_RANGE, "too many elements");
    if (!k->out[0]->data && pfvm_kctx_output(k, 0, dt, 1, &n))
        return k->st ? k->st->code : PFVM_ERR_NOMEM;
    for (i = 0; i < n; i++) {
        if (pfvm_dtype_is_float(dt)) {
            double v = start + (double)i * delta;
            if (dt == PFVM_FLOAT)
                ((float *)k->out[0]->data)[i] = (float)v;
            else
                ((double *)k->out[0]->data)[i] = v;
        } else {
            int64_t v = pfvm_tensor_get_i64(k->in[0], 0) + i * pfvm_tensor_get_i64(k->in[2], 0);
            switch (dt) {
            case PFVM_INT64: ((int64_t *)k->out[0]->data)[i] = v; break;
            case PFVM_INT32: ((int32_t *)k->out[0]->data)[i] = (int32_t)v; break;
            case PFVM_INT16: ((int16_t *)k->out[0]->data)[i] = (int16_t)v; break;
            default: return pfvm__op_fail(k->st, k->node, PFVM_ERR_UNSUPPORTED, "type %s", pfvm_dtype_name(dt));
            }
        }
    }
    return PFVM_OK;
}

static pfvm_code pfvm__tn_k_trilu(pfvm_kctx *k)
{
    const pfvm_tensor *x = k->in[0];
    int upper = (int)pfvm_node_attr_int(k->node, "upper", 1);
    int64_t diag = k->n_in > 1 && k->in[1] ? pfvm_tensor_get_i64(k->in[1], 0) : 0;
    int64_t rows, cols, mats, m, i, j, n = pfvm__tn_numel(x);
    size_t es = pfvm_dtype_size(x->dtype);
    if (x->rank < 2)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "input must have rank >= 2");
    rows = x->dims[x->rank - 2];
    cols = x->dims[x->rank - 1];
    mats = (rows * cols != 0) ? n / (rows * cols) : 0;
    memcpy(k->out[0]->data, x->data, (size_t)n * es);
    for (m = 0; m < mats; m++)
        for (i = 0; i < rows; i++)
            for (j = 0; j < cols; j++) {
                int keep = upper ? j - i >= diag : j - i <= diag;
                if (!keep)
                    memset((char *)k->out[0]->data + (size_t)((m * rows + i) * cols + j) * es, 0, es);
            }
    return PFVM_OK;
}

/* ---- the table ----------------------------------------------------------------------------------- */

#define PFVM__TN_ANY "any"

const pfvm_op_def pfvm__ops_tensor[] = {
    {"Identity", "", 1, 0, 1, 1, 1, 1, pfvm__tn_infer_identity, pfvm__tn_k_identity, NULL, PFVM_FUSE_ELEMENTWISE, PFVM__TN_ANY, NULL, 0},
    {"Dropout", "", 1, 0, 1, 3, 1, 2, pfvm__tn_infer_dropout, pfvm__tn_k_dropout, NULL, PFVM_FUSE_ELEMENTWISE, "float,double,float16", NULL, 0},
    {"Shape", "", 1, 0, 1, 1, 1, 1, pfvm__tn_infer_shape, pfvm__tn_k_shape, NULL, PFVM_FUSE_OPAQUE, PFVM__TN_ANY, NULL, 0},
    {"Size", "", 1, 0, 1, 1, 1, 1, pfvm__tn_infer_size, pfvm__tn_k_size, NULL, PFVM_FUSE_OPAQUE, PFVM__TN_ANY, NULL, 0},
    {"Constant", "", 1, 0, 0, 0, 1, 1, pfvm__tn_infer_constant, pfvm__tn_k_constant, NULL, PFVM_FUSE_OPAQUE, PFVM__TN_ANY, NULL, 0},
    {"ConstantOfShape", "", 9, 0, 1, 1, 1, 1, pfvm__tn_infer_cos, pfvm__tn_k_cos, NULL, PFVM_FUSE_OPAQUE, PFVM__TN_ANY, NULL, 0},
    {"Reshape", "", 5, 0, 2, 2, 1, 1, pfvm__tn_infer_reshape, pfvm__tn_k_reshape, NULL, PFVM_FUSE_INJECTIVE, PFVM__TN_ANY, NULL, 0},
    {"Flatten", "", 1, 0, 1, 1, 1, 1, pfvm__tn_infer_flatten, pfvm__tn_k_copy_all, NULL, PFVM_FUSE_INJECTIVE, PFVM__TN_ANY, NULL, 0},
    {"Squeeze", "", 1, 0, 1, 2, 1, 1, pfvm__tn_infer_squeeze, pfvm__tn_k_copy_all, NULL, PFVM_FUSE_INJECTIVE, PFVM__TN_ANY, NULL, 0},
    {"Unsqueeze", "", 1, 0, 1, 2, 1, 1, pfvm__tn_infer_unsqueeze, pfvm__tn_k_copy_all, NULL, PFVM_FUSE_INJECTIVE, PFVM__TN_ANY, NULL, 0},
    {"Transpose", "", 1, 0, 1, 1, 1, 1, pfvm__tn_infer_transpose, pfvm__tn_k_transpose, NULL, PFVM_FUSE_INJECTIVE, PFVM__TN_ANY, NULL, 0},
    {"Concat", "", 4, 0, 1, -1, 1, 1, pfvm__tn_infer_concat, pfvm__tn_k_concat, NULL, PFVM_FUSE_INJECTIVE, PFVM__TN_ANY, NULL, 0},
    {"Split", "", 2, 0, 1, 2, 1, -1, pfvm__tn_infer_split, pfvm__tn_k_split, NULL, PFVM_FUSE_INJECTIVE, PFVM__TN_ANY, NULL, 0},
    {"Slice", "", 1, 0, 1, 5, 1, 1, pfvm__tn_infer_slice, pfvm__tn_k_slice, NULL, PFVM_FUSE_INJECTIVE, PFVM__TN_ANY, NULL, 0},
    {"Gather", "", 1, 0, 2, 2, 1, 1, pfvm__tn_infer_gather, pfvm__tn_k_gather, NULL, PFVM_FUSE_INJECTIVE, PFVM__TN_ANY, NULL, 0},
    {"Expand", "", 8, 0, 2, 2, 1, 1, pfvm__tn_infer_expand, pfvm__tn_k_expand, NULL, PFVM_FUSE_BROADCAST, PFVM__TN_ANY, NULL, 0},
    {"Tile", "", 6, 0, 2, 2, 1, 1, pfvm__tn_infer_tile, pfvm__tn_k_tile, NULL, PFVM_FUSE_INJECTIVE, PFVM__TN_ANY, NULL, 0},
    {"Pad", "", 2, 0, 1, 3, 1, 1, pfvm__tn_infer_pad, pfvm__tn_k_pad, NULL, PFVM_FUSE_INJECTIVE, "numeric,bool", NULL, 0},
    {"Range", "", 11, 0, 3, 3, 1, 1, pfvm__tn_infer_range, pfvm__tn_k_range, NULL, PFVM_FUSE_OPAQUE, "float,double,int16,int32,int64", NULL, 0},
    {"Trilu", "", 14, 0, 1, 2, 1, 1, pfvm_infer_same_as_first, pfvm__tn_k_trilu, NULL, PFVM_FUSE_INJECTIVE, PFVM__TN_ANY, NULL, 0},
    {NULL, NULL, 0, 0, 0, 0, 0, 0, NULL, NULL, NULL, PFVM_FUSE_OPAQUE, NULL, NULL, 0}
};
