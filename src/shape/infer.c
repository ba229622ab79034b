#include "infer.h"

/* Folds a node whose inputs are all known and whose outputs are small
 * tensors of known shape, by running its kernel on the spot: shape
 * arithmetic the operators do not propagate symbolically (ConstantOfShape,
 * Transpose, reversed Slices of pads...) still becomes known contents.
 * Failures only mean "not folded". */
#define PFVM__INFER_FOLD_LIMIT 4096
static void pfvm__infer_fold(const pfvm_node *n, const pfvm_ival *const *in, pfvm_ival *const *out, pfvm_arena *arena)
{
    const pfvm_tensor *kin[16];
    pfvm_tensor *kout[16];
    pfvm_kctx k;
    pfvm_status st;
    int j, d;
    if (!n->op || !n->op->kernel || (n->op->flags & PFVM_OP_NONDETERMINISTIC) || n->n_inputs > 16 || n->n_outputs > 16 ||
        n->n_inputs == 0)
        return;
    for (j = 0; j < n->n_attrs; j++)
        if (n->attrs[j].type == PFVM_ATTR_GRAPH || n->attrs[j].type == PFVM_ATTR_GRAPHS)
            return;
    for (j = 0; j < n->n_inputs; j++) {
        kin[j] = NULL;
        if (!in[j])
            continue;
        if (!in[j]->value && !pfvm__ival_materialize((pfvm_ival *)in[j], arena))
            return;
        if (in[j]->value->kind != PFVM_KIND_TENSOR || in[j]->value->dtype == PFVM_STRING)
            return;
        kin[j] = in[j]->value;
    }
    for (j = 0; j < n->n_outputs; j++) {
        const pfvm_type *t;
        int64_t dims[PFVM_MAX_RANK], numel = 1;
        pfvm_tensor *o;
        kout[j] = NULL;
        if (!out[j])
            continue;
        if (out[j]->value)
            return; /* already known */
        t = &out[j]->type;
        if (t->kind != PFVM_KIND_TENSOR || t->shape.rank < 0 || t->dtype == PFVM_STRING || !pfvm_dtype_size(t->dtype))
            return;
        for (d = 0; d < t->shape.rank; d++)
            if (!pfvm_sym_is_const(t->shape.dims[d], &dims[d]) || dims[d] < 0 || !pfvm__mul_i64(numel, dims[d], &numel))
                return;
        if (numel > PFVM__INFER_FOLD_LIMIT)
            return;
        o = (pfvm_tensor *)pfvm__arena_alloc(arena, sizeof *o);
        if (!o)
            return;
        o->kind = PFVM_KIND_TENSOR;
        o->dtype = t->dtype;
        pfvm_tensor_set_shape(o, t->shape.rank, dims, NULL);
        o->nbytes = (size_t)numel * pfvm_dtype_size(t->dtype);
        o->data = pfvm__arena_alloc(arena, o->nbytes ? o->nbytes : 1);
        if (!o->data)
            return;
        kout[j] = o;
    }
    memset(&k, 0, sizeof k);
    k.node = n;
    k.n_in = n->n_inputs;
    k.n_out = n->n_outputs;
    k.in = kin;
    k.out = kout;
    k.st = &st;
    if (n->op->kernel(&k))
        return;
    for (j = 0; j < n->n_outputs; j++)
        if (out[j] && kout[j] && kout[j]->data && !kout[j]->owns_data)
            out[j]->value = kout[j];
}

/* The case analysis' state during one inference run: the conditions it
 * assumes, the undecided ones met (candidates to split on, in the order
 * met) and the subgraphs whose inference failed (their values do not exist
 * in this case). */
#define PFVM__CASE_MAX_ASSUMED 4
#define PFVM__CASE_MAX_SEEN 16
typedef struct pfvm__infer_cases {
    const pfvm_sym *assumed[PFVM__CASE_MAX_ASSUMED];
    int value[PFVM__CASE_MAX_ASSUMED];
    int n_assumed;
    const pfvm_sym *seen[PFVM__CASE_MAX_SEEN];
    int n_seen;
    const pfvm_graph **failed; /* stb_ds array */
    int nomem;                 /* `failed` could not grow */
} pfvm__infer_cases;

/* The inference state of one graph; subgraphs see their parents' frames,
 * so outer-scope values keep their known contents (constants, shapes). */
typedef struct pfvm__infer_frame {
    const pfvm_graph *g;
    pfvm_ival *iv;
    const struct pfvm__infer_frame *up;
    pfvm_infer_keep_fn keep; /* or NULL */
    void *user;
    pfvm__infer_cases *cases; /* or NULL */
    struct pfvm__infer_fedcheck *fed; /* or NULL: pfvm_infer_check_subgraph_inputs' record */
} pfvm__infer_frame;

/* What pfvm_infer_check_subgraph_inputs collects: subgraph inputs whose stored type
 * is not implied by what their node feeds them over every iteration. */
typedef struct pfvm__infer_fedcheck {
    int count;
    const pfvm_value **seen; /* stb_ds: the inputs counted (each once, however many rounds infer it) */
    char first[320];
    const pfvm_sym **outer; /* stb_ds: the symbols of the main graph's inputs */
} pfvm__infer_fedcheck;

/* Whether every symbol of s is a name of the model (a graph-input dim or a
 * dim_param), not one inference made up: only conditions over those are
 * worth a case split. */
static int pfvm__sym_named(const pfvm_sym *s)
{
    if (!s)
        return 0;
    if (s->kind == PFVM_SYM_VAR)
        return !s->inferred;
    return (!s->a || pfvm__sym_named(s->a)) && (!s->b || pfvm__sym_named(s->b));
}


static pfvm_code pfvm__infer_graph_in(pfvm_graph *g, int strict, pfvm_arena *arena, const pfvm__infer_frame *up,
                                      pfvm_status *st);

/* What a node's inference needs to infer its subgraphs: the frame of the
 * graph holding the node, and which subgraphs it has inferred. */
#define PFVM__INFER_MAX_VISITED 16
struct pfvm__infer_driver {
    const pfvm__infer_frame *frame;
    pfvm_arena *arena;
    int strict;
    const pfvm_graph *visited[PFVM__INFER_MAX_VISITED];
    int n_visited;
};

/* pfvm__ictx_services.decide (pfvm_ictx_decide decided constants) */
static int pfvm__driver_decide(pfvm_ictx *c, const pfvm_sym *cond, int64_t *v)
{
    pfvm__infer_cases *k = c->driver && c->driver->frame ? c->driver->frame->cases : NULL;
    int i;
    if (!cond)
        return 0;
    if (pfvm_sym_is_const(cond, v)) {
        *v = *v != 0;
        return 1;
    }
    if (!k)
        return 0;
    for (i = 0; i < k->n_assumed; i++) {
        if (k->assumed[i] == cond) {
            *v = k->value[i];
            return 1;
        }
        if (pfvm_sym_not(c->syms, k->assumed[i]) == cond) {
            *v = !k->value[i];
            return 1;
        }
    }
    for (i = 0; i < k->n_seen && k->seen[i] != cond; i++) {
    }
    if (i == k->n_seen && k->n_seen < PFVM__CASE_MAX_SEEN && pfvm__sym_named(cond))
        k->seen[k->n_seen++] = cond;
    return 0;
}

/* Whether a declared dim should survive a type handed to a subgraph input:
 * a number the model wrote down beats a symbol inference made up. */
static int pfvm__infer_keep_declared(const pfvm_sym *declared, const pfvm_sym *given)
{
    return declared && given && pfvm_sym_is_const(declared, NULL) && !pfvm_sym_is_const(given, NULL) &&
           given->inferred;
}

static pfvm_code pfvm__ictx_infer_graph(pfvm_ictx *c, pfvm_graph *g, const pfvm_type *const *in_types, int n,
                                        int merge)
{
    struct pfvm__infer_driver *d = c->driver;
    int i, k;
    if (!d || !g)
        return PFVM_OK;
    for (i = 0; i < n && i < (int)stbds_arrlen(g->inputs); i++) {
        pfvm_value *v = g->inputs[i];
        pfvm_type t;
        if (!in_types || !in_types[i] || in_types[i]->kind == PFVM_KIND_UNKNOWN)
            continue;
        t = *in_types[i];
        if (merge && v->has_type_info && v->type.kind == PFVM_KIND_TENSOR && t.kind == PFVM_KIND_TENSOR &&
            v->type.shape.rank == t.shape.rank)
            for (k = 0; k < t.shape.rank; k++)
                if (pfvm__infer_keep_declared(v->type.shape.dims[k], t.shape.dims[k]))
                    t.shape.dims[k] = v->type.shape.dims[k];
        v->type = t;
    }
    for (i = 0; i < d->n_visited && d->visited[i] != g; i++) {
    }
    if (i == d->n_visited && d->n_visited < PFVM__INFER_MAX_VISITED)
        d->visited[d->n_visited++] = g;
    {
        pfvm_code rc = pfvm__infer_graph_in(g, d->strict, d->arena, d->frame, c->st);
        if (rc && d->frame->cases && !pfvm__arrpush(d->frame->cases->failed, g))
            return pfvm__fail(c->st, PFVM_ERR_NOMEM, "out of memory");
        return rc;
    }
}

/* ---- what a subgraph is fed ------------------------------------------------------- */

static int pfvm__sym_outer(const pfvm__infer_fedcheck *f, const pfvm_sym *s)
{
    int i;
    if (!s)
        return 0;
    if (s->kind == PFVM_SYM_VAR) {
        for (i = 0; i < (int)stbds_arrlen(f->outer); i++)
            if (f->outer[i] == s)
                return 1;
        return 0;
    }
    return pfvm__sym_outer(f, s->a) || pfvm__sym_outer(f, s->b);
}

/* Whether `decl` (a subgraph input's stored type) holds for every value of
 * type `fed`: same kind and element type, same rank, and each dim proven
 * equal, unless the stored dim is a free name (a symbol of no main-graph
 * input, which any value may take). */
static int pfvm__fed_implies(const pfvm__infer_fedcheck *f, const pfvm_type *decl, const pfvm_type *fed, int *bad_dim)
{
    int d;
    *bad_dim = -1;
    if (decl->kind != PFVM_KIND_TENSOR || decl->shape.rank < 0)
        return 1;
    if (fed->kind != PFVM_KIND_TENSOR)
        return fed->kind == PFVM_KIND_UNKNOWN;
    if (decl->dtype && fed->dtype && decl->dtype != fed->dtype)
        return 0;
    if (fed->shape.rank != decl->shape.rank)
        return 0;
    for (d = 0; d < decl->shape.rank; d++) {
        const pfvm_sym *x = decl->shape.dims[d], *y = fed->shape.dims[d];
        if (!x || pfvm_sym_proven_eq(x, y))
            continue;
        if (x->kind == PFVM_SYM_VAR && !pfvm__sym_outer(f, x))
            continue;
        *bad_dim = d;
        return 0;
    }
    return 1;
}

static void pfvm__driver_fed(pfvm_ictx *c, const pfvm_graph *g, int i, const pfvm_type *decl, const pfvm_type *fed)
{
    pfvm__infer_fedcheck *f = c->driver && c->driver->frame ? c->driver->frame->fed : NULL;
    int bad, k;
    if (!f || !g || i >= (int)stbds_arrlen(g->inputs) || pfvm__fed_implies(f, decl, fed, &bad))
        return;
    for (k = 0; k < (int)stbds_arrlen(f->seen); k++)
        if (f->seen[k] == g->inputs[i])
            return;
    if (!pfvm__arrpush(f->seen, g->inputs[i])) {
        /* out of memory: still a violation (it may count twice) */
    }
    if (!f->count++) {
        char a[128], b[128], lb[96];
        pfvm_type_print(decl, a, sizeof a);
        pfvm_type_print(fed, b, sizeof b);
        pfvm__snprintf(f->first, sizeof f->first, "input '%s' of node '%s' (%s) is declared %s, but it is fed %s",
                       g->inputs[i]->name, pfvm__node_label(c->node, lb, sizeof lb), c->node->op_type, a, b);
    }
}

/* Infers the subgraphs of n its operator did not ask for. They are dead
 * code under what inference knows (or the operator has no use for their
 * types), so their errors are not the model's: they are dropped. */
/* What the driver does for operators' inference (pfvm_ictx.services). */
static const pfvm__ictx_services pfvm__driver_services = {pfvm__ictx_infer_graph, pfvm__driver_fed, pfvm__driver_decide};

static void pfvm__infer_rest(const pfvm_node *n, const struct pfvm__infer_driver *d)
{
    int j, k, i;
    for (j = 0; j < n->n_attrs; j++) {
        const pfvm_attr *a = &n->attrs[j];
        int cnt = a->type == PFVM_ATTR_GRAPHS ? a->n : (a->g ? 1 : 0);
        for (k = 0; k < cnt; k++) {
            pfvm_graph *g = a->type == PFVM_ATTR_GRAPHS ? a->graphs[k] : a->g;
            pfvm_status ignored;
            for (i = 0; i < d->n_visited && d->visited[i] != g; i++) {
            }
            if (i == d->n_visited && pfvm__infer_graph_in(g, d->strict, d->arena, d->frame, &ignored) &&
                d->frame->cases && !pfvm__arrpush(d->frame->cases->failed, g))
                d->frame->cases->nomem = 1; /* reported by the case explorer */
        }
    }
}

static pfvm_code pfvm__infer_graph(pfvm_graph *g, int strict, pfvm_arena *arena, pfvm_infer_keep_fn keep, void *user,
                                   pfvm__infer_cases *cases, pfvm_status *st)
{
    pfvm__infer_frame top;
    top.g = NULL; /* matches no value's graph: only carries keep and cases */
    top.iv = NULL;
    top.up = NULL;
    top.keep = keep;
    top.user = user;
    top.cases = cases;
    top.fed = NULL;
    return pfvm__infer_graph_in(g, strict, arena, &top, st);
}

static pfvm_code pfvm__infer_graph_in(pfvm_graph *g, int strict, pfvm_arena *arena, const pfvm__infer_frame *up,
                                      pfvm_status *st)
{
    int nv = (int)stbds_arrlen(g->values), i, j;
    pfvm_ival *iv;
    pfvm__infer_frame me;
    const pfvm_ival **ins = NULL;
    pfvm_ival **outs = NULL;
    pfvm_code rc = PFVM_OK;
    iv = (pfvm_ival *)pfvm__calloc((size_t)nv + 1, sizeof *iv);
    if (!iv)
        return pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
    for (i = 0; i < nv; i++) {
        pfvm_value *v = g->values[i];
        iv[i].type = v->type;
        iv[i].value = v->init;
    }
    me.g = g;
    me.iv = iv;
    me.up = up;
    me.keep = up ? up->keep : NULL;
    me.user = up ? up->user : NULL;
    me.cases = up ? up->cases : NULL;
    me.fed = up ? up->fed : NULL;
    for (i = 0; i < (int)stbds_arrlen(g->nodes) && !rc; i++) {
        pfvm_node *n = g->nodes[i];
        if (!pfvm__arrsetlen(ins, n->n_inputs) || !pfvm__arrsetlen(outs, n->n_outputs)) {
            rc = pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
            break;
        }
        for (j = 0; j < n->n_inputs; j++) {
            pfvm_value *v = n->inputs[j];
            ins[j] = NULL;
            if (!v)
                continue;
            if (v->graph == g) {
                ins[j] = &iv[v->id];
            } else {
                /* outer-scope value: the enclosing frame knows it, contents included */
                const pfvm__infer_frame *f;
                for (f = up; f && f->g != v->graph; f = f->up) {
                }
                if (f) {
                    ins[j] = &f->iv[v->id];
                } else {
                    pfvm_ival *o = (pfvm_ival *)pfvm__arena_alloc(arena, sizeof *o);
                    if (!o) {
                        rc = pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
                        break;
                    }
                    o->type = v->type;
                    o->value = v->init;
                    ins[j] = o;
                }
            }
        }
        if (rc)
            break;
        for (j = 0; j < n->n_outputs; j++)
            outs[j] = n->outputs[j] ? &iv[n->outputs[j]->id] : NULL;
        {
            /* operators with subgraphs infer the ones they need through
             * pfvm_ictx_infer_graph; the rest follow */
            struct pfvm__infer_driver drv;
            drv.frame = &me;
            drv.arena = arena;
            drv.strict = strict;
            drv.n_visited = 0;
            if (!n->op || !n->op->infer) {
                if (strict)
                    rc = pfvm__infer_node_in(n, ins, outs, g->model->syms, arena, &drv, &pfvm__driver_services, st);
                pfvm__infer_rest(n, &drv);
                continue;
            }
            rc = pfvm__infer_node_in(n, ins, outs, g->model->syms, arena, &drv, &pfvm__driver_services, st);
            pfvm__infer_rest(n, &drv);
        }
        if (rc)
            break;
        pfvm__infer_fold(n, ins, outs, arena);
        for (j = 0; j < n->n_outputs; j++)
            if (outs[j]) {
                pfvm_value *v = n->outputs[j];
                pfvm__ival_materialize(outs[j], arena);
                /* a declared type wins over a vaguer inferred one (another
                 * kind, or an unknown rank) */
                if (v->has_type_info && v->type.kind != PFVM_KIND_UNKNOWN &&
                    (outs[j]->type.kind != v->type.kind ||
                     (v->type.kind == PFVM_KIND_TENSOR && outs[j]->type.shape.rank < 0)))
                    continue;
                /* dims inference could not derive (its fresh unknowns, not
                 * graph-input dims) take what the model declared */
                if (v->has_type_info && v->type.kind == PFVM_KIND_TENSOR &&
                    v->type.shape.rank == outs[j]->type.shape.rank) {
                    int d;
                    for (d = 0; d < v->type.shape.rank; d++) {
                        const pfvm_sym *x = outs[j]->type.shape.dims[d];
                        if (x && x->inferred)
                            outs[j]->type.shape.dims[d] = v->type.shape.dims[d];
                    }
                }
                v->type = outs[j]->type;
            }
    }
    if (!rc && me.keep)
        me.keep(me.user, g, iv, nv);
    stbds_arrfree(ins);
    stbds_arrfree(outs);
    pfvm__free(iv);
    return rc;
}

static pfvm_code pfvm__scoped_infer_shapes(pfvm_graph *g, int strict, pfvm_status *st)
{
    pfvm_code rc = pfvm_graph_resolve_ops(g, 0, st);
    /* types may point at storage made during inference (sequence element
     * types): keep it with the model */
    if (!rc)
        rc = pfvm__infer_graph(g, strict, &g->model->arena, NULL, NULL, NULL, st);
    return rc;
}

pfvm_code pfvm_infer_shapes(pfvm_graph *g, int strict, pfvm_status *st)
{
    PFVM__SCOPED(pfvm_code, pfvm__graph_allocator(g), pfvm__scoped_infer_shapes(g, strict, st));
}

PFVM_INTERNAL pfvm_code pfvm__infer_shapes_keep(pfvm_graph *g, pfvm_infer_keep_fn keep, void *user, pfvm_status *st)
{
    pfvm_code rc = pfvm_graph_resolve_ops(g, 0, st);
    if (!rc)
        rc = pfvm__infer_graph(g, 0, &g->model->arena, keep, user, NULL, st);
    return rc;
}

static pfvm_code pfvm__scoped_infer_check_subgraph_inputs(pfvm_graph *g, int *count, char *first, size_t n,
                                                          pfvm_status *st)
{
    pfvm__infer_frame top;
    pfvm__infer_fedcheck f;
    pfvm_code rc = PFVM_OK;
    int i, d;
    memset(&f, 0, sizeof f);
    *count = 0;
    if (n)
        first[0] = 0;
    if (!g || !g->model)
        return pfvm__fail(st, PFVM_ERR_INVALID, "check subgraph inputs: no graph");
    for (i = 0; !rc && i < (int)stbds_arrlen(g->inputs); i++) {
        const pfvm_type *t = &g->inputs[i]->type;
        if (t->kind == PFVM_KIND_TENSOR)
            for (d = 0; !rc && d < t->shape.rank; d++)
                if (t->shape.dims[d] && t->shape.dims[d]->kind == PFVM_SYM_VAR &&
                    !pfvm__arrpush(f.outer, t->shape.dims[d]))
                    rc = pfvm__fail(st, PFVM_ERR_NOMEM, "check subgraph inputs: out of memory");
    }
    memset(&top, 0, sizeof top);
    top.fed = &f;
    if (!rc)
        rc = pfvm_graph_resolve_ops(g, 0, st);
    if (!rc)
        rc = pfvm__infer_graph_in(g, 0, &g->model->arena, &top, st);
    *count = f.count;
    if (n)
        pfvm__snprintf(first, n, "%s", f.first);
    stbds_arrfree(f.outer);
    stbds_arrfree(f.seen);
    return rc;
}

pfvm_code pfvm_infer_check_subgraph_inputs(pfvm_graph *g, int *count, char *first, size_t n, pfvm_status *st)
{
    PFVM__SCOPED(pfvm_code, pfvm__graph_allocator(g), pfvm__scoped_infer_check_subgraph_inputs(g, count, first, n, st));
}

static pfvm_code pfvm__scoped_infer_shapes_bound(pfvm_graph *g, const pfvm_binding *b, int strict, pfvm_status *st)
{
    int i, d;
    if (g->parent)
        return pfvm__fail(st, PFVM_ERR_INVALID, "graph '%s': only a main graph can be specialized", g->name ? g->name : "");
    for (i = 0; i < (int)stbds_arrlen(g->inputs); i++) {
        pfvm_type *t = &g->inputs[i]->type;
        if (g->inputs[i]->init || t->kind != PFVM_KIND_TENSOR)
            continue;
        for (d = 0; d < t->shape.rank; d++) {
            const pfvm_sym *x = pfvm_sym_subst(g->model->syms, t->shape.dims[d], b);
            if (!x)
                return pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
            t->shape.dims[d] = x;
        }
    }
    return pfvm_infer_shapes(g, strict, st);
}

pfvm_code pfvm_infer_shapes_bound(pfvm_graph *g, const pfvm_binding *b, int strict, pfvm_status *st)
{
    PFVM__SCOPED(pfvm_code, pfvm__graph_allocator(g), pfvm__scoped_infer_shapes_bound(g, b, strict, st));
}

/* ---- case analysis ------------------------------------------------------------- */

/* A node of the case tree: a split on `cond` (child[1] when it holds,
 * child[0] when not) or a leaf (an inference run under the assumptions on
 * the path; `leaf` indexes the snapshots, -1 for a run that failed). */
typedef struct pfvm__case_node {
    const pfvm_sym *cond;
    int child[2];
    int leaf;
} pfvm__case_node;

#define PFVM__CASE_MAX_LEAVES 16

struct pfvm_shape_cases {
    pfvm_symtab *syms;
    pfvm_value **vals;        /* every value of every graph, in walk order */
    pfvm__map index;          /* value -> position in vals, plus 1 */
    pfvm_type *types;         /* per leaf, per value */
    unsigned char *live;      /* per leaf, per value: exists in that case */
    int n_leaves;
    pfvm__case_node *nodes;   /* stb_ds array; nodes[0] is the root */
};

/* 0 when out of memory. */
static int pfvm__cases_collect(pfvm_shape_cases *c, pfvm_graph *g)
{
    int i, j, k;
    for (i = 0; i < (int)stbds_arrlen(g->values); i++)
        if (!pfvm__map_put(&c->index, g->values[i], (void *)(uintptr_t)(stbds_arrlen(c->vals) + 1)) ||
            !pfvm__arrpush(c->vals, g->values[i]))
            return 0;
    for (i = 0; i < (int)stbds_arrlen(g->nodes); i++)
        for (j = 0; j < g->nodes[i]->n_attrs; j++) {
            const pfvm_attr *a = &g->nodes[i]->attrs[j];
            if (a->type == PFVM_ATTR_GRAPH && a->g && !pfvm__cases_collect(c, a->g))
                return 0;
            for (k = 0; a->type == PFVM_ATTR_GRAPHS && k < a->n; k++)
                if (!pfvm__cases_collect(c, a->graphs[k]))
                    return 0;
        }
    return 1;
}

/* Position of v in c->vals, or -1. */
static ptrdiff_t pfvm__cases_at(const pfvm_shape_cases *c, const pfvm_value *v)
{
    void *p;
    return c && pfvm__map_get(&c->index, v, &p) ? (ptrdiff_t)(uintptr_t)p - 1 : -1;
}

static void pfvm__cases_save(const pfvm_shape_cases *c, pfvm_type *to)
{
    int i;
    for (i = 0; i < (int)stbds_arrlen(c->vals); i++)
        to[i] = c->vals[i]->type;
}

static void pfvm__cases_restore(const pfvm_shape_cases *c, const pfvm_type *from)
{
    int i;
    for (i = 0; i < (int)stbds_arrlen(c->vals); i++)
        c->vals[i]->type = from[i];
}

/* Marks dead the values of g and its subgraphs. */
static void pfvm__cases_kill(pfvm_shape_cases *c, const pfvm_graph *g, unsigned char *live)
{
    int i, j, k;
    for (i = 0; i < (int)stbds_arrlen(g->values); i++) {
        ptrdiff_t at = pfvm__cases_at(c, g->values[i]);
        if (at >= 0)
            live[at] = 0;
    }
    for (i = 0; i < (int)stbds_arrlen(g->nodes); i++)
        for (j = 0; j < g->nodes[i]->n_attrs; j++) {
            const pfvm_attr *a = &g->nodes[i]->attrs[j];
            if (a->type == PFVM_ATTR_GRAPH && a->g)
                pfvm__cases_kill(c, a->g, live);
            for (k = 0; a->type == PFVM_ATTR_GRAPHS && k < a->n; k++)
                pfvm__cases_kill(c, a->graphs[k], live);
        }
}

/* One inference run under k's assumptions, from the types `start`. */
static pfvm_code pfvm__cases_run(pfvm_shape_cases *c, pfvm_graph *g, const pfvm_type *start, pfvm__infer_cases *k,
                                 pfvm_status *st)
{
    pfvm__cases_restore(c, start);
    k->n_seen = 0;
    k->nomem = 0;
    pfvm__arrtrunc(k->failed, 0);
    return pfvm__infer_graph(g, 0, &g->model->arena, NULL, NULL, k, st);
}

/* Explores the cases under k's assumptions; returns the node's index, or
 * -1 with *rc set on an error that is not the model's (out of memory). */
static int pfvm__cases_explore(pfvm_shape_cases *c, pfvm_graph *g, const pfvm_type *start, pfvm__infer_cases *k,
                               pfvm_code *rc, pfvm_status *st)
{
    pfvm__case_node node;
    pfvm_status ignored;
    pfvm_code r = pfvm__cases_run(c, g, start, k, &ignored);
    int me = (int)stbds_arrlen(c->nodes), i, v;
    node.cond = NULL;
    node.child[0] = node.child[1] = -1;
    node.leaf = -1;
    if (r == PFVM_ERR_NOMEM || k->nomem || !pfvm__arrreserve(c->nodes, (size_t)me + 1)) {
        *rc = pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
        return -1;
    }
    if (!r && k->n_seen && k->n_assumed < PFVM__CASE_MAX_ASSUMED && c->n_leaves + 2 <= PFVM__CASE_MAX_LEAVES) {
        node.cond = k->seen[0];
        stbds_arrput(c->nodes, node); /* reserved above */
        for (v = 1; v >= 0; v--) {
            int child;
            k->assumed[k->n_assumed] = node.cond;
            k->value[k->n_assumed++] = v;
            child = pfvm__cases_explore(c, g, start, k, rc, st);
            k->n_assumed--;
            if (child < 0)
                return -1;
            c->nodes[me].child[v] = child;
        }
        return me;
    }
    if (!r) {
        /* a leaf: snapshot the types and which values exist */
        int nv = (int)stbds_arrlen(c->vals), l = c->n_leaves;
        pfvm_type *t = (pfvm_type *)pfvm__realloc(c->types, sizeof *t * (size_t)nv * (size_t)(l + 1));
        unsigned char *lv;
        if (t)
            c->types = t;
        lv = t ? (unsigned char *)pfvm__realloc(c->live, (size_t)nv * (size_t)(l + 1)) : NULL;
        if (!lv) {
            *rc = pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
            return -1;
        }
        c->live = lv;
        pfvm__cases_save(c, c->types + (size_t)l * (size_t)nv);
        memset(c->live + (size_t)l * (size_t)nv, 1, (size_t)nv);
        for (i = 0; i < (int)stbds_arrlen(k->failed); i++)
            pfvm__cases_kill(c, k->failed[i], c->live + (size_t)l * (size_t)nv);
        node.leaf = c->n_leaves++;
    }
    stbds_arrput(c->nodes, node); /* reserved above */
    return me;
}

void pfvm_shape_cases_free(pfvm_shape_cases *c)
{
    if (!c)
        return;
    stbds_arrfree(c->vals);
    pfvm__map_free(&c->index);
    stbds_arrfree(c->nodes);
    pfvm__free(c->types);
    pfvm__free(c->live);
    pfvm__free(c);
}

static pfvm_code pfvm__scoped_infer_shape_cases(pfvm_graph *g, pfvm_shape_cases **out, pfvm_status *st)
{
    pfvm_shape_cases *c;
    pfvm__infer_cases k;
    pfvm_type *start = NULL, *plain = NULL;
    pfvm_code rc;
    int nv;
    *out = NULL;
    if ((rc = pfvm_graph_resolve_ops(g, 0, st)) != PFVM_OK)
        return rc;
    c = (pfvm_shape_cases *)pfvm__calloc(1, sizeof *c);
    if (!c)
        return pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
    memset(&k, 0, sizeof k);
    c->syms = g->model->syms;
    if (!pfvm__cases_collect(c, g)) {
        pfvm_shape_cases_free(c);
        return pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
    }
    nv = (int)stbds_arrlen(c->vals);
    start = (pfvm_type *)pfvm__malloc(sizeof *start * (size_t)(nv + 1));
    plain = (pfvm_type *)pfvm__malloc(sizeof *plain * (size_t)(nv + 1));
    if (!start || !plain) {
        rc = pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
        goto done;
    }
    pfvm__cases_save(c, start);
    /* the plain inference (what every other consumer sees) also finds the
     * conditions to split on */
    if ((rc = pfvm__cases_run(c, g, start, &k, st)) != PFVM_OK)
        goto done;
    pfvm__cases_save(c, plain);
    if (k.n_seen) {
        int root = pfvm__cases_explore(c, g, start, &k, &rc, st);
        pfvm__cases_restore(c, plain);
        if (root < 0)
            goto done;
        *out = c;
        c = NULL;
    }
done:
    stbds_arrfree(k.failed);
    pfvm__free(start);
    pfvm__free(plain);
    pfvm_shape_cases_free(c);
    return rc;
}

pfvm_code pfvm_infer_shape_cases(pfvm_graph *g, pfvm_shape_cases **out, pfvm_status *st)
{
    PFVM__SCOPED(pfvm_code, pfvm__graph_allocator(g), pfvm__scoped_infer_shape_cases(g, out, st));
}

static int pfvm__shape_same(const pfvm_type *a, const pfvm_type *b)
{
    int d;
    if (a->kind != b->kind || a->shape.rank != b->shape.rank)
        return 0;
    for (d = 0; d < a->shape.rank; d++)
        if (a->shape.dims[d] != b->shape.dims[d])
            return 0;
    return 1;
}

/* Whether the live types of value vi agree over the leaves under node n:
 * 0 when none is live, 1 when they agree (*first set), 2 when not. */
static int pfvm__cases_agree(const pfvm_shape_cases *c, int n, int vi, const pfvm_type **first)
{
    const pfvm__case_node *node = &c->nodes[n];
    size_t nv = stbds_arrlen(c->vals);
    if (node->cond) {
        const pfvm_type *a = NULL, *b = NULL;
        int ra = pfvm__cases_agree(c, node->child[1], vi, &a), rb = pfvm__cases_agree(c, node->child[0], vi, &b);
        if (ra == 2 || rb == 2)
            return 2;
        if (!ra || !rb) {
            *first = ra ? a : b;
            return ra | rb;
        }
        *first = a;
        return pfvm__shape_same(a, b) ? 1 : 2;
    }
    if (node->leaf < 0 || !c->live[(size_t)node->leaf * nv + (size_t)vi])
        return 0;
    *first = &c->types[(size_t)node->leaf * nv + (size_t)vi];
    return 1;
}

static void pfvm__cases_put(char *buf, size_t n, size_t *len, const char *s)
{
    size_t l = strlen(s);
    if (*len < n) {
        size_t room = n - *len - 1, k = l < room ? l : room;
        memcpy(buf + *len, s, k);
        buf[*len + k] = 0;
    }
    *len += l;
}

static void pfvm__cases_str(const pfvm_shape_cases *c, int n, int vi, char *buf, size_t cap, size_t *len)
{
    const pfvm_type *t = NULL;
    int r = pfvm__cases_agree(c, n, vi, &t);
    char tmp[1024];
    if (r == 1) {
        pfvm_shape_print(&t->shape, tmp, sizeof tmp);
        pfvm__cases_put(buf, cap, len, tmp);
        return;
    }
    /* r == 2: a split whose two sides both have live, different types */
    {
        const pfvm__case_node *node = &c->nodes[n];
        int s, ra = pfvm__cases_agree(c, node->child[1], vi, &t), rb = pfvm__cases_agree(c, node->child[0], vi, &t);
        if (!ra || !rb) {
            pfvm__cases_str(c, node->child[ra ? 1 : 0], vi, buf, cap, len);
            return;
        }
        {
            /* the two sides printed apart: equal text (the cases below
             * split on something else) prints once */
            char *side[2];
            size_t sl[2] = {0, 0}, need;
            for (s = 0; s < 2; s++) {
                pfvm__cases_str(c, node->child[s], vi, NULL, 0, &sl[s]);
                need = sl[s] + 1;
                side[s] = (char *)pfvm__malloc(need);
                if (!side[s]) {
                    if (s)
                        pfvm__free(side[0]);
                    return;
                }
                sl[s] = 0;
                side[s][0] = 0;
                pfvm__cases_str(c, node->child[s], vi, side[s], need, &sl[s]);
            }
            if (!strcmp(side[0], side[1])) {
                pfvm__cases_put(buf, cap, len, side[1]);
            } else {
                pfvm_sym_print_cond(c->syms, node->cond, tmp, sizeof tmp);
                pfvm__cases_put(buf, cap, len, tmp);
                pfvm__cases_put(buf, cap, len, " ? ");
                for (s = 1; s >= 0; s--) {
                    int nested = strstr(side[s], " ? ") != NULL;
                    if (nested)
                        pfvm__cases_put(buf, cap, len, "(");
                    pfvm__cases_put(buf, cap, len, side[s]);
                    if (nested)
                        pfvm__cases_put(buf, cap, len, ")");
                    if (s)
                        pfvm__cases_put(buf, cap, len, " : ");
                }
            }
            pfvm__free(side[0]);
            pfvm__free(side[1]);
        }
    }
}

int pfvm_shape_cases_print(const pfvm_shape_cases *c, const pfvm_value *v, char *buf, size_t n)
{
    ptrdiff_t at = pfvm__cases_at(c, v);
    const pfvm_type *t = NULL;
    size_t len = 0;
    if (n)
        buf[0] = 0;
    if (at < 0 || v->type.kind != PFVM_KIND_TENSOR || !pfvm__cases_agree(c, 0, (int)at, &t)) {
        char tmp[1024];
        pfvm_shape_print(&v->type.shape, tmp, sizeof tmp);
        pfvm__cases_put(buf, n, &len, tmp);
        return (int)len;
    }
    pfvm__cases_str(c, 0, (int)at, buf, n, &len);
    return (int)len;
}

int pfvm_shape_cases_shape(const pfvm_shape_cases *c, const pfvm_value *v, pfvm_shape *out)
{
    ptrdiff_t at = pfvm__cases_at(c, v);
    const pfvm_type *t = NULL;
    int r;
    *out = v->type.shape;
    if (at < 0 || v->type.kind != PFVM_KIND_TENSOR || !(r = pfvm__cases_agree(c, 0, (int)at, &t)))
        return 1;
    if (r == 2)
        return 0;
    *out = t->shape;
    return 1;
}
