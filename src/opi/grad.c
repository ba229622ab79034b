/* opi/grad: the helpers gradient builders use (emitting backward nodes,
 * reading types and known contents, accumulating gradients, control-flow
 * bodies). The sweep that runs the builders is src/passes/autodiff.c. */
#include "grad.h"
#include "../ops/ops_common.h"

#include <math.h>
#include <stdio.h>

/* ---- bookkeeping ---------------------------------------------------------------- */

/* Grows the per-value table to the graph's value count (out of memory:
 * fails g, and values past the table get NULL). */
PFVM_INTERNAL pfvm__grad_val *pfvm__gv(pfvm_grad_ctx *g, const pfvm_value *v)
{
    ptrdiff_t n = stbds_arrlen(g->g->values), have = stbds_arrlen(g->vals);
    if (have < n) {
        if (pfvm__arrsetlen(g->vals, n))
            memset(g->vals + have, 0, sizeof(pfvm__grad_val) * (size_t)(n - have));
        else if (g->st->code == PFVM_OK)
            pfvm__fail(g->st, PFVM_ERR_NOMEM, "autodiff: out of memory");
        n = stbds_arrlen(g->vals);
    }
    if (!v || v->graph != g->g || v->id < 0 || v->id >= n)
        return NULL;
    return &g->vals[v->id];
}

PFVM_INTERNAL int pfvm__grad_failed(const pfvm_grad_ctx *g)
{
    return g->st->code != PFVM_OK;
}

PFVM_INTERNAL const char *pfvm__grad_label(const pfvm_node *n, char *buf, size_t size)
{
    return pfvm__node_label(n, buf, size);
}

pfvm_code pfvm_grad_fail(pfvm_grad_ctx *g, const char *fmt, ...)
{
    char msg[PFVM_STATUS_MSG], lb[96];
    va_list ap;
    va_start(ap, fmt);
    pfvm__vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (g->node)
        return pfvm__fail(g->st, PFVM_ERR_UNSUPPORTED, "node '%s' (%s): gradient: %s",
                          pfvm__grad_label(g->node, lb, sizeof lb), g->node->op_type, msg);
    return pfvm__fail(g->st, PFVM_ERR_UNSUPPORTED, "gradient: %s", msg);
}

PFVM_INTERNAL int pfvm__is_float_tensor(const pfvm_type *t)
{
    return t->kind == PFVM_KIND_TENSOR && pfvm_dtype_is_float(t->dtype);
}

/* ---- inference of emitted nodes -------------------------------------------------- */

static pfvm_ival *pfvm__grad_ival(pfvm_grad_ctx *g, const pfvm_value *v, pfvm_ival *tmp)
{
    pfvm__grad_val *gv = pfvm__gv(g, v);
    if (!gv) {
        memset(tmp, 0, sizeof *tmp);
        tmp->type = v->type;
        tmp->value = v->init;
        return tmp;
    }
    if (!gv->has_iv) {
        memset(&gv->iv, 0, sizeof gv->iv);
        gv->iv.type = v->type;
        gv->iv.value = v->init;
        gv->has_iv = 1;
    }
    return &gv->iv;
}

/* Infers node n (of g->g) and records its outputs' types and contents.
 * Forward nodes (`keep_types`) keep their values' types as the whole-graph
 * inference left them: only the contents are of interest. */
PFVM_INTERNAL pfvm_code pfvm__grad_infer(pfvm_grad_ctx *g, pfvm_node *n, int keep_types)
{
    pfvm_ival *tmps;
    int j;
    pfvm_code rc;
    pfvm__gv(g, NULL);
    tmps = (pfvm_ival *)pfvm__arena_alloc(&g->arena, sizeof(pfvm_ival) * (size_t)(n->n_inputs + 1));
    if (!tmps || !pfvm__arrsetlen(g->tmp_in, n->n_inputs + 1) || !pfvm__arrsetlen(g->tmp_out, n->n_outputs + 1))
        return pfvm__fail(g->st, PFVM_ERR_NOMEM, "out of memory");
    for (j = 0; j < n->n_inputs; j++)
        g->tmp_in[j] = n->inputs[j] ? pfvm__grad_ival(g, n->inputs[j], &tmps[j]) : NULL;
    for (j = 0; j < n->n_outputs; j++) {
        pfvm__grad_val *gv = n->outputs[j] ? pfvm__gv(g, n->outputs[j]) : NULL;
        g->tmp_out[j] = NULL;
        if (!gv)
            continue;
        memset(&gv->iv, 0, sizeof gv->iv);
        gv->iv.type.shape.rank = -1;
        g->tmp_out[j] = &gv->iv;
    }
    rc = pfvm__infer_node(n, g->tmp_in, g->tmp_out, g->m->syms, &g->arena, g->st);
    for (j = 0; j < n->n_outputs; j++) {
        pfvm__grad_val *gv = n->outputs[j] ? pfvm__gv(g, n->outputs[j]) : NULL;
        if (!gv)
            continue;
        if (rc) {
            gv->has_iv = 0;
            continue;
        }
        pfvm__ival_materialize(&gv->iv, &g->arena);
        gv->has_iv = 1;
        if (keep_types && n->outputs[j]->type.kind != PFVM_KIND_UNKNOWN)
            gv->iv.type = n->outputs[j]->type;
        else
            n->outputs[j]->type = gv->iv.type;
    }
    return rc;
}

/* Infers the emitted nodes up to and including g->g->nodes[upto]. */
PFVM_INTERNAL pfvm_code pfvm__grad_flush(pfvm_grad_ctx *g, int upto)
{
    int n = (int)stbds_arrlen(g->g->nodes);
    if (upto >= n)
        upto = n - 1;
    while (g->inferred <= upto) {
        pfvm_node *nd = g->g->nodes[g->inferred++];
        if (pfvm__grad_infer(g, nd, 0))
            return g->st->code;
    }
    return PFVM_OK;
}

const pfvm_type *pfvm_grad_type(pfvm_grad_ctx *g, const pfvm_value *v)
{
    if (!v)
        return NULL;
    if (v->producer && v->graph == g->g && v->producer->id >= g->inferred && v->producer->id < (int)stbds_arrlen(g->g->nodes) &&
        g->g->nodes[v->producer->id] == v->producer)
        pfvm__grad_flush(g, v->producer->id);
    return &v->type;
}

pfvm_dtype pfvm_grad_dtype(pfvm_grad_ctx *g, const pfvm_value *v)
{
    const pfvm_type *t = pfvm_grad_type(g, v);
    return t ? t->dtype : PFVM_UNDEFINED;
}

static int pfvm__shapes_equal(const pfvm_shape *a, const pfvm_shape *b)
{
    int i;
    if (a->rank < 0 || a->rank != b->rank)
        return 0;
    for (i = 0; i < a->rank; i++)
        if (!pfvm_sym_proven_eq(a->dims[i], b->dims[i]))
            return 0;
    return 1;
}

int pfvm_grad_same_shape(pfvm_grad_ctx *g, const pfvm_value *a, const pfvm_value *b)
{
    const pfvm_type *ta = pfvm_grad_type(g, a), *tb = pfvm_grad_type(g, b);
    return ta && tb && pfvm__shapes_equal(&ta->shape, &tb->shape);
}

int pfvm_grad_known_ints(pfvm_grad_ctx *g, const pfvm_value *v, int64_t *out, int cap)
{
    pfvm_ival tmp, *iv;
    if (!v)
        return -1;
    pfvm_grad_type(g, v);
    iv = pfvm__grad_ival(g, v, &tmp);
    return pfvm_ival_ints(iv, out, cap);
}

const pfvm_tensor *pfvm_grad_known_value(pfvm_grad_ctx *g, const pfvm_value *v)
{
    pfvm_ival tmp, *iv;
    if (!v)
        return NULL;
    pfvm_grad_type(g, v);
    iv = pfvm__grad_ival(g, v, &tmp);
    if (iv == &tmp)
        return v->init;
    pfvm__ival_materialize(iv, &g->arena);
    return iv->value;
}

/* ---- emitting nodes ------------------------------------------------------------- */

static pfvm_value *pfvm__grad_new_value(pfvm_grad_ctx *g)
{
    char hint[128];
    const char *base = "grad";
    if (g->node && g->node->n_outputs > 0 && g->node->outputs[0])
        base = g->node->outputs[0]->name;
    pfvm__snprintf(hint, sizeof hint, "%.100s_g", base);
    return pfvm_graph_new_value(g->g, hint, g->st);
}

pfvm_node *pfvm_grad_node_in(pfvm_grad_ctx *g, pfvm_graph *dst, const char *op_type, pfvm_value *const *in, int n_in,
                             int n_out)
{
    pfvm_value *outs[16];
    char name[160], lb[96];
    pfvm_node *n;
    int j;
    if (pfvm__grad_failed(g))
        return NULL;
    if (n_out < 0 || n_out > 16) {
        pfvm_grad_fail(g, "%d outputs for %s", n_out, op_type);
        return NULL;
    }
    for (j = 0; j < n_out; j++) {
        if (dst == g->g)
            outs[j] = pfvm__grad_new_value(g);
        else
            outs[j] = pfvm_graph_new_value(dst, "bwd", g->st);
        if (!outs[j])
            return NULL;
    }
    if (g->node)
        pfvm__snprintf(name, sizeof name, "%.100s/grad%d", pfvm__grad_label(g->node, lb, sizeof lb), g->n_emitted);
    else
        pfvm__snprintf(name, sizeof name, "%s%d", g->name_prefix ? g->name_prefix : "grad", g->n_emitted);
    g->n_emitted++;
    n = pfvm_graph_add_node(dst, op_type, "", name, (pfvm_value **)in, n_in, outs, n_out, g->st);
    if (!n)
        return NULL;
    n->opset = g->opset;
    n->op = pfvm_op_find("", op_type, g->opset);
    if (!n->op) {
        pfvm_grad_fail(g, "needs operator %s, which opset %d does not have", op_type, g->opset);
        return NULL;
    }
    if (n_in < n->op->min_inputs || (n->op->max_inputs >= 0 && n_in > n->op->max_inputs)) {
        pfvm_grad_fail(g, "emitted %s with %d inputs", op_type, n_in);
        return NULL;
    }
    for (j = 0; j < n->op->min_inputs; j++)
        if (!in[j]) {
            pfvm_grad_fail(g, "emitted %s without its input %d", op_type, j);
            return NULL;
        }
    pfvm__gv(g, NULL);
    return n;
}

pfvm_node *pfvm_grad_node(pfvm_grad_ctx *g, const char *op_type, pfvm_value *const *in, int n_in, int n_out)
{
    return pfvm_grad_node_in(g, g->g, op_type, in, n_in, n_out);
}

pfvm_value *pfvm_grad_op1(pfvm_grad_ctx *g, const char *op_type, pfvm_value *a)
{
    pfvm_node *n = pfvm_grad_node(g, op_type, &a, 1, 1);
    return n ? n->outputs[0] : NULL;
}

pfvm_value *pfvm_grad_op2(pfvm_grad_ctx *g, const char *op_type, pfvm_value *a, pfvm_value *b)
{
    pfvm_value *in[2];
    pfvm_node *n;
    in[0] = a;
    in[1] = b;
    n = pfvm_grad_node(g, op_type, in, 2, 1);
    return n ? n->outputs[0] : NULL;
}

pfvm_value *pfvm_grad_op3(pfvm_grad_ctx *g, const char *op_type, pfvm_value *a, pfvm_value *b, pfvm_value *c)
{
    pfvm_value *in[3];
    pfvm_node *n;
    in[0] = a;
    in[1] = b;
    in[2] = c;
    n = pfvm_grad_node(g, op_type, in, 3, 1);
    return n ? n->outputs[0] : NULL;
}

/* ---- constants ------------------------------------------------------------------ */

pfvm_value *pfvm_grad_tensor(pfvm_grad_ctx *g, pfvm_dtype dtype, int rank, const int64_t *dims, const void *data)
{
    pfvm_tensor *t;
    pfvm_node *n;
    pfvm_attr *a;
    if (pfvm__grad_failed(g))
        return NULL;
    t = pfvm_model_tensor(g->m, dtype, rank, dims, NULL, g->st);
    if (!t)
        return NULL;
    if (data && t->nbytes)
        memcpy(t->data, data, t->nbytes);
    n = pfvm_grad_node(g, "Constant", NULL, 0, 1);
    if (!n)
        return NULL;
    a = pfvm_node_add_attr(n, "value", PFVM_ATTR_TENSOR, g->st);
    if (!a)
        return NULL;
    a->t = t;
    return n->outputs[0];
}

pfvm_value *pfvm_grad_scalar(pfvm_grad_ctx *g, pfvm_dtype dtype, double v)
{
    unsigned char buf[16];
    pfvm_tensor t;
    if (!pfvm_dtype_size(dtype) || pfvm_dtype_size(dtype) > sizeof buf || dtype == PFVM_STRING) {
        if (!pfvm__grad_failed(g))
            pfvm_grad_fail(g, "no scalar of element type %s", pfvm_dtype_name(dtype));
        return NULL;
    }
    memset(&t, 0, sizeof t);
    t.kind = PFVM_KIND_TENSOR;
    t.dtype = dtype;
    t.data = buf;
    t.nbytes = sizeof buf;
    pfvm_red_store(&t, 0, v);
    return pfvm_grad_tensor(g, dtype, 0, NULL, buf);
}

pfvm_value *pfvm_grad_scalar_like(pfvm_grad_ctx *g, const pfvm_value *like, double v)
{
    if (!like || pfvm__grad_failed(g))
        return NULL;
    return pfvm_grad_scalar(g, pfvm_grad_dtype(g, like), v);
}

pfvm_value *pfvm_grad_ints(pfvm_grad_ctx *g, const int64_t *v, int n)
{
    int64_t dim = n;
    return pfvm_grad_tensor(g, PFVM_INT64, 1, &dim, v);
}

/* ---- shapes --------------------------------------------------------------------- */

pfvm_value *pfvm_grad_shape(pfvm_grad_ctx *g, pfvm_value *v)
{
    const pfvm_type *t;
    pfvm__grad_val *gv;
    pfvm_value *s;
    int64_t dims[PFVM_MAX_RANK];
    int i, known = 1;
    if (!v || pfvm__grad_failed(g))
        return NULL;
    gv = pfvm__gv(g, v);
    if (gv && gv->shape)
        return gv->shape;
    t = pfvm_grad_type(g, v);
    if (t->kind != PFVM_KIND_TENSOR || t->shape.rank < 0)
        known = 0;
    for (i = 0; known && i < t->shape.rank; i++)
        if (!pfvm_sym_is_const(t->shape.dims[i], &dims[i]))
            known = 0;
    s = known ? pfvm_grad_ints(g, dims, t->shape.rank) : pfvm_grad_op1(g, "Shape", v);
    gv = pfvm__gv(g, v);
    if (gv)
        gv->shape = s;
    return s;
}

pfvm_value *pfvm_grad_fill(pfvm_grad_ctx *g, pfvm_value *shape, pfvm_dtype dt, double fill)
{
    pfvm_node *n;
    pfvm_attr *a;
    int64_t one = 1;
    if (!shape || pfvm__grad_failed(g))
        return NULL;
    n = pfvm_grad_node(g, "ConstantOfShape", &shape, 1, 1);
    if (!n)
        return NULL;
    a = pfvm_node_add_attr(n, "value", PFVM_ATTR_TENSOR, g->st);
    if (!a || !(a->t = pfvm_model_tensor(g->m, dt, 1, &one, NULL, g->st)))
        return NULL;
    pfvm_red_store(a->t, 0, fill);
    return n->outputs[0];
}

static pfvm_value *pfvm__grad_fill_like(pfvm_grad_ctx *g, pfvm_value *v, double fill)
{
    pfvm_dtype dt;
    if (!v || pfvm__grad_failed(g))
        return NULL;
    dt = pfvm_grad_dtype(g, v);
    if (g->opset < 9) /* no ConstantOfShape: v * 0 + fill (v is a finite forward value) */
        return pfvm_grad_op2(g, "Add", pfvm_grad_op2(g, "Mul", v, pfvm_grad_scalar(g, dt, 0)), pfvm_grad_scalar(g, dt, fill));
    return pfvm_grad_fill(g, pfvm_grad_shape(g, v), dt, fill);
}

pfvm_value *pfvm_grad_numel(pfvm_grad_ctx *g, pfvm_value *v)
{
    const pfvm_type *t = pfvm_grad_type(g, v);
    int64_t n = 1, d, minus1 = -1;
    int i;
    if (!t || pfvm__grad_failed(g))
        return NULL;
    for (i = 0; i < t->shape.rank && n >= 0; i++)
        n = pfvm_sym_is_const(t->shape.dims[i], &d) && pfvm__mul_i64(n, d, &n) ? n : -1;
    if (t->shape.rank >= 0 && n >= 0)
        return pfvm_grad_ints(g, &n, 1);
    return pfvm_grad_op2(g, "Reshape", pfvm_grad_op1(g, "Size", v), pfvm_grad_ints(g, &minus1, 1));
}

pfvm_value *pfvm_grad_zeros_like(pfvm_grad_ctx *g, pfvm_value *v)
{
    return pfvm__grad_fill_like(g, v, 0);
}

pfvm_value *pfvm_grad_ones_like(pfvm_grad_ctx *g, pfvm_value *v)
{
    return pfvm__grad_fill_like(g, v, 1);
}

pfvm_value *pfvm_grad_reshape_like(pfvm_grad_ctx *g, pfvm_value *x, pfvm_value *like)
{
    pfvm_value *r;
    if (!x || !like || pfvm__grad_failed(g))
        return NULL;
    if (pfvm_grad_same_shape(g, x, like))
        return x;
    r = pfvm_grad_op2(g, "Reshape", x, pfvm_grad_shape(g, like));
    /* the target is a real shape: a 0 in it is a 0, not "copy" */
    if (r && g->opset >= 14 && pfvm_node_set_attr_int(r->producer, "allowzero", 1, g->st))
        return NULL;
    return r;
}

pfvm_value *pfvm_grad_expand(pfvm_grad_ctx *g, pfvm_value *x, pfvm_value *like)
{
    if (!x || !like || pfvm__grad_failed(g))
        return NULL;
    if (pfvm_grad_same_shape(g, x, like))
        return x;
    if (g->opset < 8) /* no Expand: broadcast by adding like * 0 (a finite forward value) */
        return pfvm_grad_op2(g, "Add", x, pfvm_grad_cast(g, pfvm_grad_op2(g, "Mul", like, pfvm_grad_scalar_like(g, like, 0)),
                                                            pfvm_grad_dtype(g, x)));
    return pfvm_grad_op2(g, "Expand", x, pfvm_grad_shape(g, like));
}

pfvm_value *pfvm_grad_cast(pfvm_grad_ctx *g, pfvm_value *x, pfvm_dtype dtype)
{
    pfvm_node *n;
    if (!x || pfvm__grad_failed(g))
        return NULL;
    if (pfvm_grad_dtype(g, x) == dtype)
        return x;
    n = pfvm_grad_node(g, "Cast", &x, 1, 1);
    if (!n || pfvm_node_set_attr_int(n, "to", (int64_t)dtype, g->st))
        return NULL;
    return n->outputs[0];
}

/* Reductions take axes as an input from opset 18 (ReduceSum from 13). */
static int pfvm__grad_axes_input(const pfvm_grad_ctx *g, const char *op)
{
    return g->opset >= 18 || (g->opset >= 13 && !strcmp(op, "ReduceSum"));
}

pfvm_value *pfvm_grad_reduce(pfvm_grad_ctx *g, const char *op, pfvm_value *x, const int64_t *axes, int n_axes,
                             int keepdims)
{
    pfvm_node *n;
    pfvm_value *in[2];
    if (!x || pfvm__grad_failed(g))
        return NULL;
    if (n_axes <= 0) {
        pfvm_grad_fail(g, "%s over no axes", op);
        return NULL;
    }
    in[0] = x;
    if (pfvm__grad_axes_input(g, op)) {
        in[1] = pfvm_grad_ints(g, axes, n_axes);
        n = pfvm_grad_node(g, op, in, 2, 1);
    } else {
        n = pfvm_grad_node(g, op, in, 1, 1);
        if (n && pfvm_node_set_attr_ints(n, "axes", axes, n_axes, g->st))
            return NULL;
    }
    if (!n || pfvm_node_set_attr_int(n, "keepdims", keepdims, g->st))
        return NULL;
    return n->outputs[0];
}

static pfvm_value *pfvm__grad_axes_op(pfvm_grad_ctx *g, const char *op, pfvm_value *x, const int64_t *axes,
                                      int n_axes)
{
    pfvm_node *n;
    pfvm_value *in[2];
    if (!x || pfvm__grad_failed(g))
        return NULL;
    if (n_axes <= 0)
        return x;
    in[0] = x;
    if (g->opset >= 13) {
        in[1] = pfvm_grad_ints(g, axes, n_axes);
        n = pfvm_grad_node(g, op, in, 2, 1);
    } else {
        n = pfvm_grad_node(g, op, in, 1, 1);
        if (n && pfvm_node_set_attr_ints(n, "axes", axes, n_axes, g->st))
            return NULL;
    }
    return n ? n->outputs[0] : NULL;
}

pfvm_value *pfvm_grad_unsqueeze(pfvm_grad_ctx *g, pfvm_value *x, const int64_t *axes, int n_axes)
{
    return pfvm__grad_axes_op(g, "Unsqueeze", x, axes, n_axes);
}

pfvm_value *pfvm_grad_squeeze(pfvm_grad_ctx *g, pfvm_value *x, const int64_t *axes, int n_axes)
{
    return pfvm__grad_axes_op(g, "Squeeze", x, axes, n_axes);
}

pfvm_value *pfvm_grad_transpose(pfvm_grad_ctx *g, pfvm_value *x, const int64_t *perm, int rank)
{
    pfvm_node *n;
    int i, id = 1;
    if (!x || pfvm__grad_failed(g))
        return NULL;
    for (i = 0; i < rank; i++)
        if (perm[i] != i)
            id = 0;
    if (id)
        return x;
    n = pfvm_grad_node(g, "Transpose", &x, 1, 1);
    if (!n || pfvm_node_set_attr_ints(n, "perm", perm, rank, g->st))
        return NULL;
    return n->outputs[0];
}

pfvm_value *pfvm_grad_slice(pfvm_grad_ctx *g, pfvm_value *x, const int64_t *starts, const int64_t *ends,
                            const int64_t *axes, int n)
{
    pfvm_node *nd;
    if (!x || pfvm__grad_failed(g))
        return NULL;
    if (n <= 0)
        return x;
    if (g->opset >= 10) {
        pfvm_value *in[4];
        in[0] = x;
        in[1] = pfvm_grad_ints(g, starts, n);
        in[2] = pfvm_grad_ints(g, ends, n);
        in[3] = pfvm_grad_ints(g, axes, n);
        nd = pfvm_grad_node(g, "Slice", in, 4, 1);
    } else {
        nd = pfvm_grad_node(g, "Slice", &x, 1, 1);
        if (nd && (pfvm_node_set_attr_ints(nd, "starts", starts, n, g->st) ||
                   pfvm_node_set_attr_ints(nd, "ends", ends, n, g->st) ||
                   pfvm_node_set_attr_ints(nd, "axes", axes, n, g->st)))
            return NULL;
    }
    return nd ? nd->outputs[0] : NULL;
}

pfvm_value *pfvm_grad_pad(pfvm_grad_ctx *g, pfvm_value *x, const int64_t *pads, int rank)
{
    pfvm_node *nd;
    int i, any = 0;
    if (!x || pfvm__grad_failed(g))
        return NULL;
    for (i = 0; i < 2 * rank; i++)
        if (pads[i])
            any = 1;
    if (!any)
        return x;
    if (g->opset >= 11) {
        pfvm_value *in[2];
        in[0] = x;
        in[1] = pfvm_grad_ints(g, pads, 2 * rank);
        nd = pfvm_grad_node(g, "Pad", in, 2, 1);
    } else {
        nd = pfvm_grad_node(g, "Pad", &x, 1, 1);
        if (nd && pfvm_node_set_attr_ints(nd, "pads", pads, 2 * rank, g->st))
            return NULL;
    }
    return nd ? nd->outputs[0] : NULL;
}

pfvm_value *pfvm_grad_concat(pfvm_grad_ctx *g, pfvm_value *const *xs, int n, int64_t axis)
{
    pfvm_node *nd;
    int i;
    if (pfvm__grad_failed(g))
        return NULL;
    for (i = 0; i < n; i++)
        if (!xs[i]) {
            pfvm_grad_fail(g, "Concat of a missing value");
            return NULL;
        }
    if (n == 1)
        return xs[0];
    nd = pfvm_grad_node(g, "Concat", xs, n, 1);
    if (!nd || pfvm_node_set_attr_int(nd, "axis", axis, g->st))
        return NULL;
    return nd->outputs[0];
}

pfvm_value *pfvm_grad_ge(pfvm_grad_ctx *g, pfvm_value *x, pfvm_value *y, int le)
{
    if (g->opset >= 12)
        return pfvm_grad_op2(g, le ? "LessOrEqual" : "GreaterOrEqual", x, y);
    return pfvm_grad_op1(g, "Not", pfvm_grad_op2(g, le ? "Greater" : "Less", x, y));
}

pfvm_value *pfvm_grad_sum_to(pfvm_grad_ctx *g, pfvm_value *dx, pfvm_value *target)
{
    const pfvm_type *td, *tt;
    int64_t axes[PFVM_MAX_RANK];
    int n_axes = 0, ones = 0, dyn = 0, lead, i;
    if (!dx || !target || pfvm__grad_failed(g))
        return NULL;
    td = pfvm_grad_type(g, dx);
    tt = pfvm_grad_type(g, target);
    if (td->shape.rank < 0 || tt->shape.rank < 0) {
        pfvm_grad_fail(g, "sum_to needs known ranks ('%s' and '%s')", dx->name, target->name);
        return NULL;
    }
    lead = td->shape.rank - tt->shape.rank;
    if (lead < 0) {
        pfvm_grad_fail(g, "cannot sum a rank-%d gradient to rank %d", td->shape.rank, tt->shape.rank);
        return NULL;
    }
    for (i = 0; i < lead; i++)
        axes[n_axes++] = i;
    for (i = 0; i < tt->shape.rank; i++) {
        const pfvm_sym *a = td->shape.dims[lead + i], *b = tt->shape.dims[i];
        int64_t ca = 0, cb = 0;
        int ka = pfvm_sym_is_const(a, &ca), kb = pfvm_sym_is_const(b, &cb);
        if (pfvm_sym_proven_eq(a, b) || (ka && ca == 1))
            continue;
        if (kb && cb == 1) {
            axes[n_axes++] = lead + i;
            ones++;
            continue;
        }
        if (ka && kb) {
            pfvm_grad_fail(g, "gradient dim %d (%lld) does not broadcast from %lld", lead + i, (long long)ca,
                           (long long)cb);
            return NULL;
        }
        dyn = 1;
    }
    if (!dyn) {
        pfvm_value *r;
        if (!n_axes)
            return dx;
        if (!ones)
            return pfvm_grad_reduce(g, "ReduceSum", dx, axes, n_axes, 0);
        r = pfvm_grad_reduce(g, "ReduceSum", dx, axes, n_axes, 1);
        return lead ? pfvm_grad_op2(g, "Reshape", r, pfvm_grad_shape(g, target)) : r;
    }
    /* Some axes are decided at run time: sum over every axis where the
     * target (padded with leading 1s) has size 1. */
    {
        pfvm_value *s, *in[2];
        pfvm_node *n;
        int64_t one = 1, minus1 = -1;
        if (g->opset < 13) {
            pfvm_grad_fail(g, "broadcast gradient with dims decided at run time needs opset 13 (model has %d)",
                           g->opset);
            return NULL;
        }
        s = pfvm_grad_shape(g, target);
        if (lead) {
            int64_t ones_v[PFVM_MAX_RANK];
            for (i = 0; i < lead; i++)
                ones_v[i] = 1;
            in[0] = pfvm_grad_ints(g, ones_v, lead);
            in[1] = s;
            n = pfvm_grad_node(g, "Concat", in, 2, 1);
            if (!n || pfvm_node_set_attr_int(n, "axis", 0, g->st))
                return NULL;
            s = n->outputs[0];
        }
        s = pfvm_grad_op2(g, "Equal", s, pfvm_grad_ints(g, &one, 1));
        s = pfvm_grad_op2(g, "Reshape", pfvm_grad_op1(g, "NonZero", s), pfvm_grad_ints(g, &minus1, 1));
        in[0] = dx;
        in[1] = s;
        n = pfvm_grad_node(g, "ReduceSum", in, 2, 1);
        if (!n || pfvm_node_set_attr_int(n, "keepdims", 1, g->st) ||
            pfvm_node_set_attr_int(n, "noop_with_empty_axes", 1, g->st))
            return NULL;
        return pfvm_grad_op2(g, "Reshape", n->outputs[0], pfvm_grad_shape(g, target));
    }
}

/* ---- gradients ------------------------------------------------------------------- */

PFVM_INTERNAL int pfvm__grad_val_needed(const pfvm_grad_ctx *g, const pfvm_value *v)
{
    const pfvm__grad_val *gv;
    if (!v || v->graph != g->g || v->id < 0 || v->id >= g->n_forward_values || v->id >= (int)stbds_arrlen(g->vals))
        return 0;
    gv = &g->vals[v->id];
    return gv->from_wrt && gv->to_seed && pfvm__is_float_tensor(&v->type);
}

int pfvm_grad_needed(const pfvm_grad_ctx *g, const pfvm_value *v)
{
    return pfvm__grad_val_needed(g, v);
}

/* The gradient of v so far: its contributions summed (Add for two, Sum
 * for more), or NULL. */
PFVM_INTERNAL pfvm_value *pfvm__grad_collect(pfvm_grad_ctx *g, const pfvm_value *v)
{
    pfvm__grad_val *gv = pfvm__gv(g, v);
    pfvm_value *sum;
    int n;
    if (!gv || pfvm__grad_failed(g))
        return NULL;
    n = (int)stbds_arrlen(gv->contrib);
    if (n == 0)
        return NULL;
    if (n == 1)
        return gv->contrib[0];
    if (n == 2) {
        sum = pfvm_grad_op2(g, "Add", gv->contrib[0], gv->contrib[1]);
    } else {
        pfvm_node *nd = pfvm_grad_node(g, "Sum", gv->contrib, n, 1);
        sum = nd ? nd->outputs[0] : NULL;
    }
    if (!sum)
        return NULL;
    gv = pfvm__gv(g, v);
    if (!gv || !pfvm__arrsetlen(gv->contrib, 1)) {
        pfvm__fail(g->st, PFVM_ERR_NOMEM, "autodiff: out of memory");
        return NULL;
    }
    gv->contrib[0] = sum;
    return sum;
}

pfvm_value *pfvm_grad_out(pfvm_grad_ctx *g, int i)
{
    if (!g->node || i < 0 || i >= g->node->n_outputs || !g->node->outputs[i])
        return NULL;
    return pfvm__grad_collect(g, g->node->outputs[i]);
}

pfvm_value *pfvm_grad_out_or_zeros(pfvm_grad_ctx *g, int i)
{
    pfvm_value *d;
    if (pfvm__grad_failed(g))
        return NULL;
    d = pfvm_grad_out(g, i);
    if (d || pfvm__grad_failed(g))
        return d;
    if (!g->node || i < 0 || i >= g->node->n_outputs || !g->node->outputs[i]) {
        pfvm_grad_fail(g, "no output %d", i);
        return NULL;
    }
    return pfvm_grad_zeros_like(g, g->node->outputs[i]);
}

pfvm_code pfvm_grad_add(pfvm_grad_ctx *g, const pfvm_value *v, pfvm_value *dv)
{
    const pfvm_type *tv, *td;
    pfvm__grad_val *gv;
    int i;
    if (pfvm__grad_failed(g))
        return g->st->code;
    if (!dv)
        return pfvm_grad_fail(g, "no gradient value for '%s'", v ? v->name : "?");
    if (!v || !pfvm__grad_val_needed(g, v))
        return PFVM_OK;
    tv = &v->type;
    td = pfvm_grad_type(g, dv);
    if (pfvm__grad_failed(g))
        return g->st->code;
    if (td->dtype != tv->dtype)
        return pfvm_grad_fail(g, "a %s gradient for the %s value '%s'", pfvm_dtype_name(td->dtype),
                              pfvm_dtype_name(tv->dtype), v->name);
    if (td->shape.rank >= 0 && tv->shape.rank >= 0) {
        if (td->shape.rank != tv->shape.rank)
            return pfvm_grad_fail(g, "a rank-%d gradient for the rank-%d value '%s'", td->shape.rank,
                                  tv->shape.rank, v->name);
        for (i = 0; i < tv->shape.rank; i++) {
            int64_t a, b;
            if (pfvm_sym_is_const(td->shape.dims[i], &a) && pfvm_sym_is_const(tv->shape.dims[i], &b) && a != b)
                return pfvm_grad_fail(g, "gradient dim %d is %lld where '%s' has %lld", i, (long long)a, v->name,
                                      (long long)b);
        }
    }
    gv = pfvm__gv(g, v);
    if (!gv || !pfvm__arrpush(gv->contrib, dv))
        return pfvm__fail(g->st, PFVM_ERR_NOMEM, "autodiff: out of memory");
    return PFVM_OK;
}

pfvm_value *pfvm_grad_forward_output(pfvm_grad_ctx *g, int i)
{
    pfvm_node *n = (pfvm_node *)g->node;
    pfvm_value *v;
    if (!n || pfvm__grad_failed(g))
        return NULL;
    if (i < n->n_outputs && n->outputs[i])
        return n->outputs[i];
    if (i < 0 || !n->op || (n->op->max_outputs >= 0 && i >= n->op->max_outputs)) {
        pfvm_grad_fail(g, "the operator has no output %d", i);
        return NULL;
    }
    if (i >= n->n_outputs) {
        pfvm_value **outs = (pfvm_value **)pfvm_model_alloc(g->m, sizeof(pfvm_value *) * (size_t)(i + 1));
        if (!outs) {
            pfvm__fail(g->st, PFVM_ERR_NOMEM, "out of memory");
            return NULL;
        }
        memcpy(outs, n->outputs, sizeof(pfvm_value *) * (size_t)n->n_outputs);
        n->outputs = outs;
        n->n_outputs = i + 1;
    }
    {
        char hint[128];
        pfvm__snprintf(hint, sizeof hint, "%.100s_out%d", n->outputs[0] ? n->outputs[0]->name : n->op_type, i);
        v = pfvm_graph_new_value(g->g, hint, g->st);
    }
    if (!v)
        return NULL;
    v->producer = n;
    v->producer_index = i;
    n->outputs[i] = v;
    if (pfvm__grad_infer(g, n, 1))
        return NULL;
    return v;
}

/* ---- control flow: subgraphs -------------------------------------------------------- */

int pfvm_grad_captures(pfvm_grad_ctx *g, pfvm_value **out, int cap)
{
    pfvm_value **deps = NULL;
    int i, j, n = 0;
    if (!g->node)
        return 0;
    if (!pfvm__node_deps(g->node, &deps)) {
        stbds_arrfree(deps);
        pfvm__fail(g->st, PFVM_ERR_NOMEM, "autodiff: out of memory");
        return -1;
    }
    for (i = 0; i < (int)stbds_arrlen(deps); i++) {
        pfvm_value *v = deps[i];
        int dup = 0;
        for (j = 0; j < g->node->n_inputs && !dup; j++)
            dup = g->node->inputs[j] == v;
        for (j = 0; j < n && !dup; j++)
            dup = out[j] == v;
        if (dup || !pfvm__grad_val_needed(g, v))
            continue;
        if (n == cap) {
            stbds_arrfree(deps);
            return -1;
        }
        out[n++] = v;
    }
    stbds_arrfree(deps);
    return n;
}

#define PFVM__GRAD_COPY_DEPTH 16

/* Copying a subgraph tree: src[k] is copied into dst[k]; values of the
 * copied graphs take the suffix, captures listed in caps read locals. */
typedef struct pfvm__grad_copy {
    pfvm_grad_ctx *g;
    const pfvm_graph *src[PFVM__GRAD_COPY_DEPTH];
    pfvm_graph *dst[PFVM__GRAD_COPY_DEPTH];
    int depth;
    pfvm_value *const *caps;
    pfvm_value **locals;
    int n_caps;
} pfvm__grad_copy;

static pfvm_value *pfvm__grad_copy_value(pfvm__grad_copy *c, const pfvm_value *v)
{
    char name[300];
    int i;
    if (!v)
        return NULL;
    for (i = 0; i < c->n_caps; i++)
        if (c->caps[i] == v)
            return c->locals[i];
    for (i = 0; i < c->depth; i++)
        if (v->graph == c->src[i]) {
            pfvm_value *w;
            pfvm__snprintf(name, sizeof name, "%s__bwd", v->name);
            w = pfvm_graph_value(c->dst[i], name, c->g->st);
            if (w && w->type.kind == PFVM_KIND_UNKNOWN) {
                w->type = v->type;
                w->has_type_info = v->has_type_info;
            }
            if (w && v->init && !w->init) {
                pfvm_tensor *t = pfvm_model_tensor(c->g->m, v->init->dtype, v->init->rank, v->init->dims, v->init->data,
                                                   c->g->st);
                if (!t || pfvm_graph_add_init(c->dst[i], w, t, c->g->st))
                    return NULL;
            }
            return w;
        }
    return (pfvm_value *)v; /* an outer value, visible from the copy too */
}

static pfvm_code pfvm__grad_copy_graph(pfvm__grad_copy *c, const pfvm_graph *src, pfvm_graph *dst, int outputs, int skip_inputs)
{
    pfvm_grad_ctx *g = c->g;
    int i, j, l;
    if (c->depth == PFVM__GRAD_COPY_DEPTH)
        return pfvm_grad_fail(g, "subgraphs nest too deep");
    c->src[c->depth] = src;
    c->dst[c->depth] = dst;
    c->depth++;
    for (i = 0; i < (int)stbds_arrlen(src->inputs) && !skip_inputs; i++) {
        pfvm_value *v = pfvm__grad_copy_value(c, src->inputs[i]);
        if (!v || pfvm_graph_add_input(dst, v, g->st))
            return g->st->code ? g->st->code : PFVM_ERR_NOMEM;
    }
    for (i = 0; i < (int)stbds_arrlen(src->inits); i++)
        if (!pfvm__grad_copy_value(c, src->inits[i]))
            return g->st->code;
    for (i = 0; i < (int)stbds_arrlen(src->nodes); i++) {
        const pfvm_node *n = src->nodes[i];
        pfvm_value **in = NULL, **out = NULL;
        pfvm_node *cn;
        char name[300];
        if (!pfvm__arrreserve(in, (size_t)n->n_inputs) || !pfvm__arrreserve(out, (size_t)n->n_outputs)) {
            stbds_arrfree(in);
            stbds_arrfree(out);
            return pfvm__fail(g->st, PFVM_ERR_NOMEM, "autodiff: out of memory");
        }
        for (j = 0; j < n->n_inputs; j++) /* reserved above */
            stbds_arrput(in, n->inputs[j] ? pfvm__grad_copy_value(c, n->inputs[j]) : NULL);
        for (j = 0; j < n->n_outputs; j++)
            stbds_arrput(out, n->outputs[j] ? pfvm__grad_copy_value(c, n->outputs[j]) : NULL);
        pfvm__snprintf(name, sizeof name, "%s__bwd", n->name ? n->name : "");
        cn = pfvm_graph_add_node(dst, n->op_type, n->domain, n->name && n->name[0] ? name : "", in, n->n_inputs, out,
                                 n->n_outputs, g->st);
        stbds_arrfree(in);
        stbds_arrfree(out);
        if (!cn)
            return g->st->code;
        cn->opset = n->opset;
        cn->op = n->op;
        if (n->n_attrs) {
            cn->attrs = (pfvm_attr *)pfvm_model_alloc(g->m, sizeof(pfvm_attr) * (size_t)n->n_attrs);
            if (!cn->attrs)
                return pfvm__fail(g->st, PFVM_ERR_NOMEM, "out of memory");
            memcpy(cn->attrs, n->attrs, sizeof(pfvm_attr) * (size_t)n->n_attrs);
            cn->n_attrs = n->n_attrs;
        }
        for (j = 0; j < cn->n_attrs; j++) {
            pfvm_attr *a = &cn->attrs[j];
            if (a->type == PFVM_ATTR_GRAPH && a->g) {
                pfvm_graph *sub = pfvm_graph_new(g->m, dst, a->g->name, g->st);
                if (!sub || pfvm__grad_copy_graph(c, a->g, sub, 1, 0))
                    return g->st->code;
                sub->owner = cn;
                a->g = sub;
            } else if (a->type == PFVM_ATTR_GRAPHS && a->n > 0) {
                pfvm_graph **gs = (pfvm_graph **)pfvm_model_alloc(g->m, sizeof(pfvm_graph *) * (size_t)a->n);
                if (!gs)
                    return pfvm__fail(g->st, PFVM_ERR_NOMEM, "out of memory");
                for (l = 0; l < a->n; l++) {
                    if (!(gs[l] = pfvm_graph_new(g->m, dst, a->graphs[l]->name, g->st)) ||
                        pfvm__grad_copy_graph(c, a->graphs[l], gs[l], 1, 0))
                        return g->st->code;
                    gs[l]->owner = cn;
                }
                a->graphs = gs;
            }
        }
    }
    for (i = 0; outputs && i < (int)stbds_arrlen(src->outputs); i++) {
        pfvm_value *v = pfvm__grad_copy_value(c, src->outputs[i]);
        if (!v || pfvm_graph_add_output(dst, v, g->st))
            return g->st->code ? g->st->code : PFVM_ERR_NOMEM;
    }
    c->depth--;
    return PFVM_OK;
}

pfvm_code pfvm_grad_body(pfvm_grad_ctx *g, pfvm_graph *dst, const pfvm_graph *body, pfvm_value *const *from,
                         pfvm_value *const *to, int n_map, pfvm_value *const *seeds, pfvm_value *const *wrt, int n_wrt,
                         pfvm_value **grads)
{
    pfvm__grad_copy c;
    pfvm_value **ys = NULL, **sd = NULL;
    char name[300];
    int i, n_out;
    pfvm_code rc = PFVM_OK;
    if (pfvm__grad_failed(g))
        return g->st->code;
    memset(&c, 0, sizeof c);
    c.g = g;
    c.caps = from;
    c.locals = (pfvm_value **)to;
    c.n_caps = n_map;
    if (pfvm__grad_copy_graph(&c, body, dst, 0, 1))
        goto fail;
    c.depth = 1; /* body's values map to the copy's again (src[0], dst[0]) */
    /* the seeds, as local copies */
    n_out = (int)stbds_arrlen(body->outputs);
    for (i = 0; i < n_out; i++) {
        pfvm_value *y, *s, *in;
        pfvm_node *nd;
        if (!seeds[i])
            continue;
        y = pfvm__grad_copy_value(&c, body->outputs[i]);
        if (!y || y->graph != dst)
            continue; /* an outer value that needs no gradient here */
        in = seeds[i];
        pfvm__snprintf(name, sizeof name, "%s__seed", y->name);
        s = pfvm_graph_new_value(dst, name, g->st);
        if (!s || !(nd = pfvm_graph_add_node(dst, "Identity", "", s->name, &in, 1, &s, 1, g->st)))
            goto fail;
        nd->opset = g->opset;
        nd->op = pfvm_op_find("", "Identity", g->opset);
        s->type = seeds[i]->type;
        if (!pfvm__arrpush(ys, y) || !pfvm__arrpush(sd, s)) {
            pfvm__fail(g->st, PFVM_ERR_NOMEM, "autodiff: out of memory");
            goto fail;
        }
    }
    if (!g->differentiate) {
        pfvm_grad_fail(g, "no sweep to differentiate the body of '%s'", body->name);
        goto fail;
    }
    if (g->differentiate(g, dst, ys, sd, (int)stbds_arrlen(ys), wrt, n_wrt, grads))
        goto fail;
    goto done;
fail:
    if (!g->st->code)
        pfvm_grad_fail(g, "building the backward subgraph of '%s'", body->name);
    rc = g->st->code;
done:
    stbds_arrfree(ys);
    stbds_arrfree(sd);
    return rc;
}

pfvm_value *pfvm_grad_identity_in(pfvm_grad_ctx *g, pfvm_graph *dst, pfvm_value *v, const char *hint)
{
    pfvm_node *nd;
    pfvm_value *out;
    if (!v || pfvm__grad_failed(g))
        return NULL;
    out = pfvm_graph_find(dst, hint) ? pfvm_graph_new_value(dst, hint, g->st) : pfvm_graph_value(dst, hint, g->st);
    if (!out || !(nd = pfvm_graph_add_node(dst, "Identity", "", out->name, &v, 1, &out, 1, g->st)))
        return NULL;
    nd->opset = g->opset;
    nd->op = pfvm_op_find("", "Identity", g->opset);
    out->type = v->type;
    return out;
}

pfvm_graph *pfvm_grad_subgraph(pfvm_grad_ctx *g, const pfvm_graph *body, pfvm_value *const *seeds,
                               pfvm_value *const *caps, int n_caps)
{
    pfvm_graph *dst;
    pfvm_value **locals, **grads;
    char name[300];
    int i;
    if (pfvm__grad_failed(g))
        return NULL;
    pfvm__snprintf(name, sizeof name, "%s_grad", body->name && body->name[0] ? body->name : "body");
    dst = pfvm_graph_new(g->m, g->g, name, g->st);
    locals = (pfvm_value **)pfvm_model_alloc(g->m, sizeof(pfvm_value *) * (size_t)(n_caps + 1));
    grads = (pfvm_value **)pfvm_model_alloc(g->m, sizeof(pfvm_value *) * (size_t)(n_caps + 1));
    if (!dst || !locals || !grads) {
        pfvm__fail(g->st, PFVM_ERR_NOMEM, "out of memory");
        return NULL;
    }
    /* local copies of the captured values: the values to differentiate */
    for (i = 0; i < n_caps; i++) {
        pfvm__snprintf(name, sizeof name, "%s__local", caps[i]->name);
        if (!(locals[i] = pfvm_grad_identity_in(g, dst, caps[i], name)))
            return NULL;
    }
    if (pfvm_grad_body(g, dst, body, caps, locals, n_caps, seeds, locals, n_caps, grads))
        return NULL;
    for (i = 0; i < n_caps; i++) {
        pfvm_value *v = grads[i];
        int j;
        /* each output its own value (ONNX outputs are names) */
        for (j = 0; j < i; j++)
            if (grads[j] == v)
                break;
        if (j < i || v->is_input || v->graph != dst)
            v = pfvm_grad_identity_in(g, dst, v, "grad_out");
        if (!v || pfvm_graph_add_output(dst, v, g->st))
            return NULL;
    }
    if (pfvm_grad_infer_graph(g, dst))
        return NULL;
    return dst;
}

pfvm_code pfvm_grad_infer_graph(pfvm_grad_ctx *g, pfvm_graph *sub)
{
    if (pfvm__grad_failed(g))
        return g->st->code;
    if (!g->infer_graph)
        return pfvm_grad_fail(g, "no sweep to infer the subgraph '%s'", sub->name);
    return g->infer_graph(sub, g->st);
}

