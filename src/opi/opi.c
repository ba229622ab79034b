/* opi: what operators are written against, beyond their definition
 * (opi.h): running one node's inference, the kernel context's functions
 * (which reach the executor through pfvm_kctx.services, when there is
 * one), the inference context's calls into the driver (through
 * pfvm_ictx.services), and saved types for fixed points. */
#include "opi.h"

#include <string.h>

/* ---- inference of one node ------------------------------------------------------- */

/* An operator's inference that computed a negative constant dim (a
 * ConvTranspose whose strides outgrow an empty input, say) describes no
 * tensor: an error here, before the type is saved into a model that would
 * not load again. */
static pfvm_code pfvm__dims_nonnegative(const pfvm_node *n, pfvm_ival *const *out, pfvm_status *st)
{
    int j, d;
    int64_t v;
    char lb[96];
    for (j = 0; j < n->n_outputs; j++) {
        const pfvm_shape *s = out[j] ? &out[j]->type.shape : NULL;
        if (!s || out[j]->type.kind != PFVM_KIND_TENSOR)
            continue;
        for (d = 0; d < s->rank; d++)
            if (s->dims[d] && pfvm_sym_is_const(s->dims[d], &v) && v < 0)
                return pfvm__fail(st, PFVM_ERR_SHAPE, "node '%s' (%s): output %d's dim %d would be %lld",
                                  pfvm__node_label(n, lb, sizeof lb), n->op_type, j, d, (long long)v);
    }
    return PFVM_OK;
}

/* An operator without PFVM_OP_SEQUENCES takes tensors only: a sequence or
 * an optional input (by inferred type, `in`, or by value, `vals`) is an
 * error naming it, before the operator's own code would read it as a tensor. */
PFVM_INTERNAL pfvm_code pfvm__takes_kinds(const pfvm_node *n, pfvm_status *st, const pfvm_ival *const *in,
                                          const pfvm_tensor *const *vals)
{
    int j;
    char lb[96];
    if (!n->op || (n->op->flags & PFVM_OP_SEQUENCES))
        return PFVM_OK;
    for (j = 0; j < n->n_inputs; j++) {
        pfvm_kind kind = in ? (in[j] ? in[j]->type.kind : PFVM_KIND_UNKNOWN) : vals[j] ? vals[j]->kind : PFVM_KIND_UNKNOWN;
        if (kind != PFVM_KIND_UNKNOWN && kind != PFVM_KIND_TENSOR)
            return pfvm__fail(st, PFVM_ERR_INVALID, "node '%s' (%s): input %d is a %s; the operator takes tensors",
                              pfvm__node_label(n, lb, sizeof lb), n->op_type, j,
                              kind == PFVM_KIND_SEQUENCE ? "sequence" : kind == PFVM_KIND_OPTIONAL ? "optional" : "map");
    }
    return PFVM_OK;
}

PFVM_INTERNAL pfvm_code pfvm__infer_node_in(const pfvm_node *n, const pfvm_ival *const *in, pfvm_ival *const *out,
                                            pfvm_symtab *syms, pfvm_arena *arena, struct pfvm__infer_driver *driver,
                                            const pfvm__ictx_services *services, pfvm_status *st)
{
    pfvm_ictx c;
    char lb[96];
    if (!n->op)
        return pfvm__fail(st, PFVM_ERR_UNSUPPORTED, "node '%s' (%s): operator not supported at opset %d",
                          pfvm__node_label(n, lb, sizeof lb), n->op_type, n->opset);
    if (!n->op->infer) /* PFVM_NO_SHAPE_INFERENCE makes every table's hook NULL */
        return pfvm__fail(st, PFVM_ERR_UNSUPPORTED, "node '%s' (%s): no shape inference in this build (PFVM_NO_SHAPE_INFERENCE)",
                          pfvm__node_label(n, lb, sizeof lb), n->op_type);
    c.node = n;
    c.syms = syms;
    c.n_in = n->n_inputs;
    c.n_out = n->n_outputs;
    c.in = in;
    c.out = out;
    c.st = st;
    c.arena = arena;
    c.driver = driver;
    c.services = services;
    if (pfvm__takes_kinds(n, st, in, NULL))
        return st ? st->code : PFVM_ERR_INVALID;
    if (n->op->infer(&c))
        return pfvm__name_node(n, st, PFVM_ERR_SHAPE);
    return pfvm__dims_nonnegative(n, out, st);
}

PFVM_INTERNAL pfvm_code pfvm__infer_node(const pfvm_node *n, const pfvm_ival *const *in, pfvm_ival *const *out,
                                         pfvm_symtab *syms, pfvm_arena *arena, pfvm_status *st)
{
    return pfvm__infer_node_in(n, in, out, syms, arena, NULL, NULL, st);
}

PFVM_INTERNAL int pfvm__ival_materialize(pfvm_ival *v, pfvm_arena *arena)
{
    int64_t dims[PFVM_MAX_RANK], n = 1;
    int i;
    pfvm_tensor *t;
    if (v->value)
        return 1;
    if (!v->sym || v->type.kind != PFVM_KIND_TENSOR || v->type.shape.rank < 0)
        return 0;
    if (!pfvm_dtype_is_int(v->type.dtype) && v->type.dtype != PFVM_BOOL)
        return 0;
    for (i = 0; i < v->type.shape.rank; i++) {
        if (!pfvm_sym_is_const(v->type.shape.dims[i], &dims[i]))
            return 0;
        n *= dims[i];
    }
    if (n != v->n_sym)
        return 0;
    for (i = 0; i < v->n_sym; i++)
        if (!pfvm_sym_is_const(v->sym[i], NULL))
            return 0;
    t = (pfvm_tensor *)pfvm__arena_alloc(arena, sizeof *t);
    if (!t)
        return 0;
    t->kind = PFVM_KIND_TENSOR;
    t->dtype = v->type.dtype;
    t->rank = v->type.shape.rank;
    for (i = 0; i < t->rank; i++)
        t->dims[i] = dims[i];
    t->nbytes = (size_t)n * pfvm_dtype_size(t->dtype);
    t->data = pfvm__arena_alloc(arena, t->nbytes);
    if (!t->data)
        return 0;
    for (i = 0; i < n; i++) {
        int64_t x = 0;
        pfvm_sym_is_const(v->sym[i], &x);
        switch (t->dtype) {
        case PFVM_INT64: ((int64_t *)t->data)[i] = x; break;
        case PFVM_INT32: ((int32_t *)t->data)[i] = (int32_t)x; break;
        case PFVM_UINT64: ((uint64_t *)t->data)[i] = (uint64_t)x; break;
        case PFVM_UINT32: ((uint32_t *)t->data)[i] = (uint32_t)x; break;
        case PFVM_INT16: ((int16_t *)t->data)[i] = (int16_t)x; break;
        case PFVM_UINT16: ((uint16_t *)t->data)[i] = (uint16_t)x; break;
        case PFVM_INT8: ((int8_t *)t->data)[i] = (int8_t)x; break;
        default: ((uint8_t *)t->data)[i] = (uint8_t)x; break;
        }
    }
    v->value = t;
    return 1;
}

/* ---- the inference context's calls into the driver -------------------------------- */

pfvm_code pfvm_ictx_infer_graph(pfvm_ictx *c, pfvm_graph *g, const pfvm_type *const *in_types, int n)
{
    return c->driver && c->services ? c->services->infer_graph(c, g, in_types, n, 1) : PFVM_OK;
}

pfvm_code pfvm_ictx_infer_body(pfvm_ictx *c, pfvm_graph *g, const pfvm_type *const *in_types, int n)
{
    return c->driver && c->services ? c->services->infer_graph(c, g, in_types, n, 0) : PFVM_OK;
}

void pfvm_ictx_fed(pfvm_ictx *c, const pfvm_graph *g, int i, const pfvm_type *decl, const pfvm_type *fed)
{
    if (c->driver && c->services)
        c->services->fed(c, g, i, decl, fed);
}

int pfvm_ictx_decide(pfvm_ictx *c, const pfvm_sym *cond, int64_t *v)
{
    if (!cond)
        return 0;
    if (pfvm_sym_is_const(cond, v)) {
        *v = *v != 0;
        return 1;
    }
    return c->driver && c->services ? c->services->decide(c, cond, v) : 0;
}

/* ---- the kernel context -------------------------------------------------------------- */

pfvm_code pfvm_kctx_output(pfvm_kctx *k, int i, pfvm_dtype dtype, int rank, const int64_t *dims)
{
    if (k->services)
        return k->services->output(k, i, dtype, rank, dims);
    /* no executor (a pass folding a node): the default limits */
    return pfvm__kctx_alloc_output(k, i, dtype, rank, dims, PFVM_MAX_TENSOR_BYTES, PFVM_MAX_TOTAL_BYTES, 0, NULL);
}

PFVM_INTERNAL pfvm_code pfvm__kctx_alloc_output(pfvm_kctx *k, int i, pfvm_dtype dtype, int rank, const int64_t *dims,
                                                size_t max_tensor, size_t max_total, size_t held, size_t *dynamic)
{
    pfvm_tensor *t;
    size_t bytes;
    int64_t numel = 1;
    int d;
    if (i < 0 || i >= k->n_out || !(t = k->out[i]))
        return PFVM_OK;
    if (rank < 0 || rank > PFVM_MAX_RANK)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_UNSUPPORTED, "output rank %d exceeds PFVM_MAX_RANK", rank);
    if (t->data && t->kind == PFVM_KIND_TENSOR && !t->owns_data) {
        /* planned storage: the kernel's shape must be the planned one (whose
         * dims were checked when planned: no products here; dims compared
         * in a loop, not by newlib-nano's bytewise memcmp, on the M4 about
         * 80 instructions a planned output less) */
        for (d = 0; d < rank && t->rank == rank && t->dims[d] == dims[d]; d++)
            ;
        if (t->dtype != dtype || t->rank != rank || d < rank)
            return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE,
                                 "output %d has a different shape or type than planned", i);
        return PFVM_OK;
    }
    for (d = 0; d < rank; d++)
        if (dims[d] < 0 || !pfvm__mul_i64(numel, dims[d], &numel))
            return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "invalid output dimension %lld", (long long)dims[d]);
    if (dynamic && t->owns_data && t->data)
        *dynamic -= t->nbytes < *dynamic ? t->nbytes : *dynamic;
    pfvm_tensor_release(t);
    if ((uint64_t)numel > SIZE_MAX || !pfvm__mul_size((size_t)numel, pfvm_dtype_size(dtype), &bytes))
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_NOMEM, "output %d is too large", i);
    if (dynamic && !pfvm__add_size(held, *dynamic, &held))
        held = (size_t)-1;
    if (bytes > max_tensor)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_NOMEM, "output %d needs %zu bytes, over the limit of %zu bytes per tensor",
                             i, bytes, max_tensor);
    if (held > max_total || bytes > max_total - held)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_NOMEM,
                             "output %d needs %zu bytes with %zu held, over the limit of %zu bytes in all", i, bytes, held,
                             max_total);
    t->kind = PFVM_KIND_TENSOR;
    t->dtype = dtype;
    pfvm_tensor_set_shape(t, rank, dims, NULL);
    t->data = pfvm__data_alloc(bytes, 1);
    if (!t->data)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_NOMEM, "cannot allocate %zu bytes for output %d", bytes, i);
    t->nbytes = bytes;
    t->owns_data = 1;
    t->owns_strings = dtype == PFVM_STRING;
    if (dynamic)
        *dynamic += bytes;
    return PFVM_OK;
}

uint64_t pfvm_kctx_random(pfvm_kctx *k)
{
    return k->services ? k->services->random(k) : 0x9E3779B97F4A7C15ull;
}

void pfvm_kctx_seed(pfvm_kctx *k, uint64_t seed)
{
    if (k->services)
        k->services->seed(k, seed);
}

void pfvm_kctx_set_state(pfvm_kctx *k, void *state, void (*free_fn)(void *))
{
    if (k->services) {
        k->services->set_state(k, state, free_fn);
        return;
    }
    if (state && free_fn)
        free_fn(state); /* nowhere to keep it */
    k->state = NULL;
}

void *pfvm_kctx_scratch(pfvm_kctx *k, size_t bytes)
{
    if (k->services)
        return k->services->scratch(k, bytes);
    pfvm__op_fail(k->st, k->node, PFVM_ERR_RUNTIME, "no executor for workspace");
    return NULL;
}

int pfvm_kctx_threads(const pfvm_kctx *k)
{
    return k && k->services ? k->services->threads(k) : 1;
}

pfvm_code pfvm_kctx_spend(pfvm_kctx *k, uint64_t operations)
{
    return k && k->services ? k->services->spend(k, operations) : PFVM_OK;
}

void pfvm_kctx_parallel(pfvm_kctx *k, int n, pfvm_task_fn fn, void *ctx)
{
    int i;
    if (k && k->services && n > 1) {
        k->services->parallel(k, n, fn, ctx);
        return;
    }
    for (i = 0; i < n; i++)
        fn(ctx, i);
}

pfvm_code pfvm_kctx_subgraph(pfvm_kctx *k, const pfvm_graph *g, const pfvm_tensor *const *in, int n_in,
                             pfvm_tensor **out, int n_out, pfvm_status *st)
{
    if (k->services && k->services->subgraph)
        return k->services->subgraph(k, g, in, n_in, out, n_out, st);
    return pfvm__op_fail(st, k->node, PFVM_ERR_UNSUPPORTED, "subgraph '%s' needs an executor (with shape inference)",
                         g ? g->name : "");
}

pfvm_code pfvm_kctx_infer_shapes(pfvm_kctx *k, pfvm_graph *g, int strict, pfvm_status *st)
{
    if (k->services && k->services->infer_shapes)
        return k->services->infer_shapes(g, strict, st);
    return pfvm__fail(st, PFVM_ERR_UNSUPPORTED, "shape inference needs an executor");
}

pfvm_code pfvm_kctx_gradient(pfvm_kctx *k, pfvm_model *m, pfvm_value *y, pfvm_value *seed, const char *const *names,
                             int n_wrt, int n_names, pfvm_status *st)
{
    if (k->services && k->services->gradient)
        return k->services->gradient(k, m, y, seed, names, n_wrt, n_names, st);
    return pfvm__fail(st, PFVM_ERR_UNSUPPORTED, "differentiating needs an executor");
}

/* ---- saved types ----------------------------------------------------------------- */

struct pfvm_types_saved {
    pfvm_value **v;  /* stb_ds */
    pfvm_type *t;    /* stb_ds */
};

static void pfvm__types_collect(pfvm_types_saved *s, pfvm_graph *g, int depth)
{
    int i, j, k;
    if (!g || depth > 64)
        return;
    for (i = 0; i < (int)stbds_arrlen(g->values); i++) {
        stbds_arrput(s->v, g->values[i]);
        stbds_arrput(s->t, g->values[i]->type);
    }
    for (i = 0; i < (int)stbds_arrlen(g->nodes); i++) {
        const pfvm_node *n = g->nodes[i];
        for (j = 0; j < n->n_attrs; j++) {
            const pfvm_attr *a = &n->attrs[j];
            if (a->type == PFVM_ATTR_GRAPH)
                pfvm__types_collect(s, a->g, depth + 1);
            else if (a->type == PFVM_ATTR_GRAPHS)
                for (k = 0; k < a->n; k++)
                    pfvm__types_collect(s, a->graphs[k], depth + 1);
        }
    }
}

PFVM_INTERNAL pfvm_types_saved *pfvm_types_save(pfvm_graph *g)
{
    pfvm_types_saved *s = (pfvm_types_saved *)pfvm__calloc(1, sizeof *s);
    if (s)
        pfvm__types_collect(s, g, 0);
    return s;
}

PFVM_INTERNAL void pfvm_types_restore(const pfvm_types_saved *s)
{
    int i;
    for (i = 0; s && i < (int)stbds_arrlen(s->v); i++)
        s->v[i]->type = s->t[i];
}

PFVM_INTERNAL void pfvm_types_saved_free(pfvm_types_saved *s)
{
    if (!s)
        return;
    stbds_arrfree(s->v);
    stbds_arrfree(s->t);
    pfvm__free(s);
}

