/* The rewrite context: facts kept from inference, the helpers hooks use to
 * read and edit, and the end of a round (removing forwarded nodes). The
 * whole-model inference that gives the facts is the caller's
 * (pfvm_rw_begin in src/passes/passes.c). */
#include "rewrite.h"

#include <string.h>

/* ---- facts ------------------------------------------------------------------- */

/* Adds g to a list of graphs unless it is there; 0 when out of memory. */
static int pfvm__rw_note_graph(pfvm_graph ***gs, pfvm_graph *g)
{
    int i;
    for (i = 0; i < (int)stbds_arrlen(*gs); i++)
        if ((*gs)[i] == g)
            return 1;
    return pfvm__arrpush(*gs, g);
}

static pfvm__rw_graph_facts *pfvm__rw_entry(const pfvm_rewrite *rw, const pfvm_graph *g)
{
    int i;
    for (i = 0; i < (int)stbds_arrlen(rw->known); i++)
        if (rw->known[i].g == g)
            return &rw->known[i];
    return NULL;
}

PFVM_INTERNAL const pfvm_ival *pfvm__rw_fact(const pfvm_rewrite *rw, const pfvm_value *v)
{
    const pfvm__rw_graph_facts *e;
    if (!v || !(e = pfvm__rw_entry(rw, v->graph)))
        return NULL;
    if (v->id < 0 || v->id >= (int)stbds_arrlen(e->facts) || e->facts[v->id].v != v)
        return NULL;
    return &e->facts[v->id].iv;
}

PFVM_INTERNAL pfvm_code pfvm__rw_set_fact(pfvm_rewrite *rw, const pfvm_value *v, const pfvm_ival *iv)
{
    pfvm__rw_graph_facts *e = pfvm__rw_entry(rw, v->graph);
    int old;
    if (!e) {
        pfvm__rw_graph_facts ne;
        ne.g = v->graph;
        ne.facts = NULL;
        if (!pfvm__arrpush(rw->known, ne)) {
            rw->oom = 1;
            return PFVM_ERR_NOMEM;
        }
        e = &rw->known[stbds_arrlen(rw->known) - 1];
    }
    old = (int)stbds_arrlen(e->facts);
    if (v->id >= old) {
        if (!pfvm__arrsetlen(e->facts, v->id + 1)) {
            rw->oom = 1;
            return PFVM_ERR_NOMEM;
        }
        memset(&e->facts[old], 0, sizeof(pfvm__rw_slot) * (size_t)(v->id + 1 - old));
    }
    e->facts[v->id].v = v;
    e->facts[v->id].iv = *iv;
    return PFVM_OK;
}

static void pfvm__rw_keep(void *user, const pfvm_graph *g, const pfvm_ival *iv, int n)
{
    pfvm_rewrite *rw = (pfvm_rewrite *)user;
    int i;
    for (i = 0; i < n && i < (int)stbds_arrlen(g->values); i++)
        pfvm__rw_set_fact(rw, g->values[i], &iv[i]);
}

/* An initializer that is also a graph input is a default the caller may
 * replace. Inference treats it as known; the contents it computes from
 * one are not constants. */
static int pfvm__rw_overridable(const pfvm_value *v)
{
    return v->is_input && v->init && !v->producer;
}

static pfvm__rw_slot *pfvm__rw_fact_mut(pfvm_rewrite *rw, const pfvm_value *v)
{
    pfvm__rw_graph_facts *e;
    if (!v || !(e = pfvm__rw_entry(rw, v->graph)))
        return NULL;
    if (v->id < 0 || v->id >= (int)stbds_arrlen(e->facts) || e->facts[v->id].v != v)
        return NULL;
    return &e->facts[v->id];
}

static pfvm_code pfvm__rw_taint_graph(void *user, pfvm_graph *g)
{
    pfvm_rewrite *rw = (pfvm_rewrite *)user;
    pfvm_value **deps = NULL;
    int i, j;
    for (i = 0; i < (int)stbds_arrlen(g->nodes); i++) {
        pfvm_node *n = g->nodes[i];
        int tainted = 0;
        if (!pfvm__node_deps(n, &deps)) {
            stbds_arrfree(deps);
            return pfvm__fail(rw->st, PFVM_ERR_NOMEM, "out of memory");
        }
        for (j = 0; j < (int)stbds_arrlen(deps); j++) {
            const pfvm__rw_slot *f = pfvm__rw_fact_mut(rw, deps[j]);
            tainted |= pfvm__rw_overridable(deps[j]) || (f && f->tainted);
        }
        for (j = 0; tainted && j < n->n_outputs; j++) {
            pfvm__rw_slot *f = pfvm__rw_fact_mut(rw, n->outputs[j]);
            if (f) {
                f->tainted = 1;
                f->iv.value = NULL;
                f->iv.sym = NULL;
                f->iv.n_sym = 0;
            }
        }
    }
    stbds_arrfree(deps);
    return PFVM_OK;
}

static pfvm_code pfvm__rw_has_overridable(void *user, pfvm_graph *g)
{
    int i;
    for (i = 0; i < (int)stbds_arrlen(g->inputs); i++)
        if (pfvm__rw_overridable(g->inputs[i]))
            *(int *)user = 1;
    return PFVM_OK;
}

PFVM_INTERNAL pfvm_code pfvm__rw_begin_with(pfvm_rewrite *rw, pfvm_model *m, unsigned mode, pfvm_infer_keep_all_fn infer,
                                           pfvm_status *st)
{
    int any = 0;
    memset(rw, 0, sizeof *rw);
    rw->m = m;
    rw->g = m->graph;
    rw->mode = mode;
    rw->st = st;
    if (infer(m->graph, pfvm__rw_keep, rw, st) || rw->oom) {
        pfvm_rw_free(rw);
        return rw->oom ? pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory") : st ? st->code : PFVM_ERR_SHAPE;
    }
    pfvm__for_graphs(m->graph, pfvm__rw_has_overridable, &any);
    if (any && pfvm__for_graphs(m->graph, pfvm__rw_taint_graph, rw)) {
        pfvm_rw_free(rw);
        return st ? st->code : PFVM_ERR_NOMEM;
    }
    return PFVM_OK;
}

void pfvm_rw_set_graph(pfvm_rewrite *rw, pfvm_graph *g)
{
    if (rw->g != g) {
        pfvm_uses_free(&rw->uses);
        rw->uses_valid = 0;
        rw->g = g;
    }
}

void pfvm_rw_free(pfvm_rewrite *rw)
{
    int i;
    for (i = 0; i < (int)stbds_arrlen(rw->known); i++)
        stbds_arrfree(rw->known[i].facts);
    stbds_arrfree(rw->known);
    stbds_arrfree(rw->forwarded);
    stbds_arrfree(rw->edited);
    pfvm_uses_free(&rw->uses);
    rw->uses_valid = 0;
}

pfvm_code pfvm_rw_end(pfvm_rewrite *rw, int *removed)
{
    pfvm_graph **gs = NULL;
    pfvm_node **dead = NULL;
    pfvm_code rc = PFVM_OK;
    int i, j, k;
    if (rw->oom)
        rc = pfvm__fail(rw->st, PFVM_ERR_NOMEM, "out of memory");
    for (i = 0; !rc && i < (int)stbds_arrlen(rw->edited); i++)
        if (!pfvm__rw_note_graph(&gs, rw->edited[i]))
            rc = pfvm__fail(rw->st, PFVM_ERR_NOMEM, "out of memory");
    pfvm_uses_free(&rw->uses);
    rw->uses_valid = 0;
    for (i = 0; !rc && i < (int)stbds_arrlen(gs); i++) {
        pfvm_uses u;
        pfvm_graph *g = gs[i];
        pfvm__arrtrunc(dead, 0);
        if ((rc = pfvm_uses_build(&u, g, rw->st)) != PFVM_OK)
            break;
        for (j = 0; j < (int)stbds_arrlen(rw->forwarded); j++) {
            pfvm_node *n = rw->forwarded[j];
            int used = 0, seen = 0;
            if (n->graph != g)
                continue;
            for (k = 0; k < (int)stbds_arrlen(dead); k++)
                seen |= dead[k] == n;
            for (k = 0; k < n->n_outputs; k++)
                if (n->outputs[k] && pfvm_uses_count(&u, n->outputs[k]))
                    used = 1;
            if (!used && !seen && !pfvm__arrpush(dead, n))
                rc = pfvm__fail(rw->st, PFVM_ERR_NOMEM, "out of memory");
        }
        pfvm_uses_free(&u);
        if (!rc && stbds_arrlen(dead)) {
            rc = pfvm_graph_remove_nodes(g, dead, (int)stbds_arrlen(dead), rw->st);
            if (removed)
                *removed += (int)stbds_arrlen(dead);
        }
        if (!rc)
            rc = pfvm_graph_toposort(g, rw->st);
    }
    stbds_arrfree(gs);
    stbds_arrfree(dead);
    pfvm_rw_free(rw);
    return rc;
}

pfvm_code pfvm_rw_run_hook(pfvm_rewrite *rw, pfvm_node *node)
{
    if (!node->op || !node->op->simplify)
        return PFVM_OK;
    return node->op->simplify(rw, node);
}

unsigned pfvm_rw_mode(const pfvm_rewrite *rw)
{
    return rw->mode;
}

pfvm_model *pfvm_rw_model(const pfvm_rewrite *rw)
{
    return rw->m;
}

pfvm_symtab *pfvm_rw_symtab(const pfvm_rewrite *rw)
{
    return rw->m->syms;
}

pfvm_graph *pfvm_rw_graph(const pfvm_rewrite *rw)
{
    return rw->g;
}

int64_t pfvm_rw_opset(const pfvm_rewrite *rw, const char *domain)
{
    int64_t v = pfvm_model_opset(rw->m, domain);
    return v ? v : 1;
}

const pfvm_type *pfvm_rw_type(const pfvm_rewrite *rw, const pfvm_value *v)
{
    const pfvm_ival *f = pfvm__rw_fact(rw, v);
    const pfvm_type *t = f ? &f->type : v ? &v->type : NULL;
    return t && t->kind != PFVM_KIND_UNKNOWN ? t : NULL;
}

const pfvm_shape *pfvm_rw_shape(const pfvm_rewrite *rw, const pfvm_value *v)
{
    const pfvm_type *t = pfvm_rw_type(rw, v);
    return t && t->kind == PFVM_KIND_TENSOR && t->shape.rank >= 0 ? &t->shape : NULL;
}

const pfvm_tensor *pfvm_rw_value(const pfvm_rewrite *rw, const pfvm_value *v)
{
    const pfvm_ival *f = pfvm__rw_fact(rw, v);
    const pfvm_tensor *t = f ? f->value : v ? v->init : NULL;
    if (v && !t)
        t = v->init;
    if (!t || t->kind != PFVM_KIND_TENSOR || pfvm__rw_overridable(v))
        return NULL;
    return t->data || !pfvm_tensor_numel(t) ? t : NULL;
}

int pfvm_rw_ints(const pfvm_rewrite *rw, const pfvm_value *v, int64_t *out, int cap)
{
    const pfvm_tensor *t = pfvm_rw_value(rw, v);
    const pfvm_ival *f = pfvm__rw_fact(rw, v);
    int i;
    if (t) {
        int64_t n = pfvm_tensor_numel(t);
        if ((!pfvm_dtype_is_int(t->dtype) && t->dtype != PFVM_BOOL) || n > cap)
            return -1;
        for (i = 0; i < n; i++)
            out[i] = pfvm_tensor_get_i64(t, i);
        return (int)n;
    }
    if (f && f->sym && f->n_sym <= cap) {
        for (i = 0; i < f->n_sym; i++)
            if (!pfvm_sym_is_const(f->sym[i], &out[i]))
                return -1;
        return f->n_sym;
    }
    return -1;
}

int pfvm_rw_syms(const pfvm_rewrite *rw, const pfvm_value *v, const pfvm_sym **out, int cap)
{
    const pfvm_tensor *t = pfvm_rw_value(rw, v);
    const pfvm_ival *f = pfvm__rw_fact(rw, v);
    int i;
    if (f && f->sym && !pfvm__rw_overridable(v)) {
        if (f->n_sym > cap)
            return -1;
        for (i = 0; i < f->n_sym; i++)
            out[i] = f->sym[i];
        return f->n_sym;
    }
    if (t) {
        int64_t n = pfvm_tensor_numel(t);
        if (!pfvm_dtype_is_int(t->dtype) || n > cap)
            return -1;
        for (i = 0; i < n; i++)
            if (!(out[i] = pfvm_sym_const(rw->m->syms, pfvm_tensor_get_i64(t, i))))
                return -1;
        return (int)n;
    }
    return -1;
}

int pfvm_rw_is_all(const pfvm_rewrite *rw, const pfvm_value *v, double x)
{
    const pfvm_tensor *t = pfvm_rw_value(rw, v);
    int64_t i, n;
    if (!t || t->dtype == PFVM_STRING || !pfvm_dtype_size(t->dtype) || (n = pfvm_tensor_numel(t)) < 1)
        return 0;
    for (i = 0; i < n; i++)
        if (pfvm_tensor_get_f64(t, i) != x)
            return 0;
    return 1;
}

int pfvm_rw_readers(pfvm_rewrite *rw, const pfvm_value *v)
{
    pfvm_uses u;
    int n;
    if (!v)
        return 0;
    if (v->graph == rw->g) {
        if (!rw->uses_valid) {
            pfvm_uses_free(&rw->uses);
            if (pfvm_uses_build(&rw->uses, rw->g, NULL))
                return 1 << 30; /* unknown: as if read everywhere */
            rw->uses_valid = 1;
        }
        return pfvm_uses_count(&rw->uses, v);
    }
    if (pfvm_uses_build(&u, v->graph, NULL))
        return 1 << 30;
    n = pfvm_uses_count(&u, v);
    pfvm_uses_free(&u);
    return n;
}

pfvm_node *pfvm_rw_producer(const pfvm_rewrite *rw, const pfvm_value *v)
{
    (void)rw;
    return v ? v->producer : NULL;
}

int pfvm_rw_reader_nodes(pfvm_rewrite *rw, const pfvm_value *v, pfvm_node **out, int cap)
{
    const pfvm_use *u;
    int n, i;
    if (!v || v->graph != rw->g || pfvm_rw_readers(rw, v) >= 1 << 30)
        return -1;
    u = pfvm_uses_of(&rw->uses, v, &n);
    for (i = 0; i < n && i < cap; i++)
        out[i] = u[i].node && u[i].graph == rw->g ? u[i].node : NULL;
    return n;
}

int pfvm_rw_only_reader(pfvm_rewrite *rw, const pfvm_value *v, pfvm_node **node)
{
    *node = NULL;
    return pfvm_rw_reader_nodes(rw, v, node, 1) == 1 && *node;
}

/* pfvm_rw_require_opset's check over one graph: user points at the
 * wanted opset; the code is PFVM_ERR_UNSUPPORTED at the first node whose
 * definition would change. */
static pfvm_code pfvm__rw_same_def_at(void *user, pfvm_graph *g)
{
    int64_t opset = *(const int64_t *)user;
    int i;
    for (i = 0; i < (int)stbds_arrlen(g->nodes); i++) {
        const pfvm_node *n = g->nodes[i];
        if ((!n->domain || !n->domain[0] || !strcmp(n->domain, "ai.onnx")) &&
            pfvm_op_find("", n->op_type, n->opset) != pfvm_op_find("", n->op_type, opset))
            return PFVM_ERR_UNSUPPORTED;
    }
    return PFVM_OK;
}

int pfvm_rw_require_opset(pfvm_rewrite *rw, int64_t opset)
{
    pfvm_model *m = rw->m;
    int i;
    if (pfvm_rw_opset(rw, "") >= opset)
        return 1;
    if (pfvm__for_graphs(m->graph, pfvm__rw_same_def_at, &opset))
        return 0;
    for (i = 0; i < (int)stbds_arrlen(m->opsets); i++)
        if (!m->opsets[i].domain[0] || !strcmp(m->opsets[i].domain, "ai.onnx")) {
            m->opsets[i].version = opset;
            return 1;
        }
    return 0; /* no default-domain import to raise */
}

int pfvm_rw_output_unused(pfvm_rewrite *rw, const pfvm_node *node, int i)
{
    return i >= node->n_outputs || !node->outputs[i] || pfvm_rw_readers(rw, node->outputs[i]) == 0;
}

/* ---- proofs ------------------------------------------------------------------ */

int pfvm_rw_same_shape(const pfvm_shape *a, const pfvm_shape *b)
{
    int i;
    if (!a || !b || a->rank < 0 || a->rank != b->rank)
        return 0;
    for (i = 0; i < a->rank; i++)
        if (a->dims[i] != b->dims[i] && !pfvm_sym_proven_eq(a->dims[i], b->dims[i]))
            return 0;
    return 1;
}

int pfvm_rw_same_type(const pfvm_rewrite *rw, const pfvm_value *a, const pfvm_value *b)
{
    const pfvm_type *ta = pfvm_rw_type(rw, a), *tb = pfvm_rw_type(rw, b);
    if (!ta || !tb || ta->kind != PFVM_KIND_TENSOR || tb->kind != PFVM_KIND_TENSOR || ta->dtype != tb->dtype ||
        ta->dtype == PFVM_UNDEFINED)
        return 0;
    return pfvm_rw_same_shape(&ta->shape, &tb->shape);
}

/* ---- edits -------------------------------------------------------------------- */

PFVM_INTERNAL pfvm_code pfvm__rw_replace_value(pfvm_graph *g, pfvm_value *old, pfvm_value *repl, int *done,
                                               pfvm_status *st)
{
    pfvm_graph *og = old->graph;
    int i, is_out = 0;
    *done = 0;
    if (old == repl)
        return PFVM_OK;
    for (i = 0; i < (int)stbds_arrlen(og->outputs); i++)
        if (og->outputs[i] == old)
            is_out = 1;
    /* an output keeps its place only when repl is made by a node of the
     * same graph and is no output itself (no extra Identity, no output
     * named twice) */
    if (is_out && (repl->graph != og || !repl->producer || repl->is_input || repl->is_output || repl->init))
        return PFVM_OK;
    *done = 1;
    return pfvm_graph_replace_uses(g, old, repl, st);
}

pfvm_code pfvm_rw_forward(pfvm_rewrite *rw, pfvm_node *node, int i, pfvm_value *v)
{
    pfvm_value *old = i >= 0 && i < node->n_outputs ? node->outputs[i] : NULL;
    int done;
    pfvm_code rc;
    if (!old || !v || old == v || !pfvm_rw_same_type(rw, old, v))
        return PFVM_OK;
    rc = pfvm__rw_replace_value(node->graph, old, v, &done, rw->st);
    if (rc || !done)
        return rc;
    rw->changes++;
    rw->uses_valid = 0;
    if (!pfvm__arrpush(rw->forwarded, node) || !pfvm__rw_note_graph(&rw->edited, node->graph))
        rw->oom = 1;
    return PFVM_OK;
}

int pfvm_rw_failed(const pfvm_rewrite *rw)
{
    return rw->st && rw->st->code != PFVM_OK;
}

pfvm_code pfvm_rw_code(const pfvm_rewrite *rw)
{
    return rw->st ? rw->st->code : PFVM_OK;
}

pfvm_node *pfvm_rw_add_node(pfvm_rewrite *rw, const char *op_type, pfvm_value *const *inputs, int n_in, int n_out,
                            const pfvm_node *like)
{
    pfvm_graph *g = rw->g;
    int64_t opset = pfvm_rw_opset(rw, "");
    const pfvm_op_def *def = pfvm_op_find("", op_type, opset);
    pfvm_value *outs[8], *ins[16];
    pfvm_node *n;
    char name[256];
    int i;
    if (!def || n_out > 8 || n_in > 16 || n_out < 1)
        return NULL;
    for (i = 0; i < n_in; i++)
        ins[i] = inputs[i];
    for (i = 0; i < n_out; i++) {
        const pfvm_value *l = like && i < like->n_outputs ? like->outputs[i] : NULL;
        pfvm__snprintf(name, sizeof name, "%.200s", l ? l->name : op_type);
        if (!(outs[i] = pfvm_graph_new_value(g, name, rw->st)))
            return NULL;
    }
    pfvm__snprintf(name, sizeof name, "%.200s%s%s", like && like->name[0] ? like->name : op_type,
                   like && like->name[0] ? "/" : "", like && like->name[0] ? op_type : "");
    n = pfvm_graph_add_node(g, op_type, "", name, ins, n_in, outs, n_out, rw->st);
    if (!n)
        return NULL;
    n->op = def;
    n->opset = (int)opset;
    rw->n_new++;
    if (!pfvm__rw_note_graph(&rw->edited, g))
        rw->oom = 1;
    return n;
}

pfvm_code pfvm_rw_copy_attrs(pfvm_rewrite *rw, pfvm_node *dst, const pfvm_node *src, const char *const *skip)
{
    int i, j;
    for (i = 0; i < src->n_attrs; i++) {
        const pfvm_attr *a = &src->attrs[i];
        pfvm_attr *b;
        int skipped = 0;
        for (j = 0; skip && skip[j]; j++)
            skipped |= !strcmp(skip[j], a->name);
        if (skipped)
            continue;
        if (!(b = pfvm_node_add_attr(dst, a->name, a->type, rw->st)))
            return rw->st ? rw->st->code : PFVM_ERR_NOMEM;
        *b = *a;
    }
    return PFVM_OK;
}

pfvm_code pfvm_rw_infer_node(pfvm_rewrite *rw, pfvm_node *node)
{
    pfvm_ival tin[16], tout[8];
    const pfvm_ival *ins[16];
    pfvm_ival *outs[8];
    pfvm_code rc;
    int i;
    if (node->n_inputs > 16 || node->n_outputs > 8)
        return pfvm__fail(rw->st, PFVM_ERR_UNSUPPORTED, "node '%s' (%s): too many inputs or outputs to rewrite",
                          node->name, node->op_type);
    memset(tin, 0, sizeof tin);
    memset(tout, 0, sizeof tout);
    for (i = 0; i < node->n_inputs; i++) {
        const pfvm_value *v = node->inputs[i];
        const pfvm_ival *f = pfvm__rw_fact(rw, v);
        ins[i] = NULL;
        if (!v)
            continue;
        if (f) {
            ins[i] = f;
        } else {
            tin[i].type = v->type;
            tin[i].value = v->init;
            ins[i] = &tin[i];
        }
    }
    for (i = 0; i < node->n_outputs; i++) {
        tout[i].type.shape.rank = -1;
        outs[i] = node->outputs[i] ? &tout[i] : NULL;
    }
    rc = pfvm__infer_node(node, ins, outs, rw->m->syms, &rw->m->arena, rw->st);
    if (rc)
        return rc;
    for (i = 0; i < node->n_outputs; i++)
        if (node->outputs[i]) {
            node->outputs[i]->type = tout[i].type;
            pfvm__ival_materialize(&tout[i], &rw->m->arena);
            pfvm__rw_set_fact(rw, node->outputs[i], &tout[i]);
        }
    rw->uses_valid = 0;
    return PFVM_OK;
}

PFVM_INTERNAL void pfvm__rw_new_init(pfvm_model *m)
{
    /* before IR version 4 every initializer had to be a graph input too */
    if (m->ir_version && m->ir_version < 4)
        m->ir_version = 4;
}

pfvm_value *pfvm_rw_const_new(pfvm_rewrite *rw, pfvm_dtype dtype, int rank, const int64_t *dims, const char *hint,
                              pfvm_tensor **data)
{
    pfvm__rw_new_init(rw->m);
    pfvm_tensor *t = pfvm_model_tensor(rw->m, dtype, rank, dims, NULL, rw->st);
    pfvm_value *v;
    pfvm_ival iv;
    if (!t || !(v = pfvm_graph_new_value(rw->g, hint ? hint : "const", rw->st)))
        return NULL;
    if (pfvm_graph_add_init(rw->g, v, t, rw->st))
        return NULL;
    memset(&iv, 0, sizeof iv);
    iv.type = v->type;
    iv.value = t;
    pfvm__rw_set_fact(rw, v, &iv);
    if (data)
        *data = t;
    return v;
}

pfvm_value *pfvm_rw_const(pfvm_rewrite *rw, const pfvm_tensor *t, const char *hint)
{
    pfvm_tensor *d;
    pfvm_value *v;
    int64_t i, n = pfvm_tensor_numel(t);
    if (t->kind != PFVM_KIND_TENSOR) {
        pfvm__fail(rw->st, PFVM_ERR_UNSUPPORTED, "only dense tensors become initializers");
        return NULL;
    }
    if (!(v = pfvm_rw_const_new(rw, t->dtype, t->rank, t->dims, hint, &d)))
        return NULL;
    if (t->dtype == PFVM_STRING) {
        for (i = 0; i < n; i++) {
            const char *s = ((char *const *)t->data)[i];
            if (!(((const char **)d->data)[i] = pfvm_model_strdup(rw->m, s ? s : ""))) {
                pfvm__fail(rw->st, PFVM_ERR_NOMEM, "out of memory");
                return NULL;
            }
        }
    } else if (n) {
        memcpy(d->data, t->data, d->nbytes);
    }
    return v;
}

pfvm_value *pfvm_rw_const_ints(pfvm_rewrite *rw, const int64_t *vals, int n, const char *hint)
{
    int64_t len = n;
    pfvm_tensor *d;
    pfvm_value *v = pfvm_rw_const_new(rw, PFVM_INT64, 1, &len, hint, &d);
    if (v && n)
        memcpy(d->data, vals, sizeof(int64_t) * (size_t)n);
    return v;
}

/* ---- absorbing ---------------------------------------------------------------- */

pfvm_code pfvm_rw_absorb(pfvm_rewrite *rw, pfvm_node *producer, pfvm_rw_affine *a)
{
    pfvm_rw_affine *saved = rw->request;
    pfvm_code rc = PFVM_OK;
    a->result = NULL;
    if (!producer || !producer->op || !producer->op->simplify)
        return PFVM_OK;
    rw->request = a;
    rc = producer->op->simplify(rw, producer);
    rw->request = saved;
    return rc;
}

pfvm_rw_affine *pfvm_rw_request(const pfvm_rewrite *rw)
{
    return rw->request;
}

PFVM_INTERNAL pfvm_code pfvm__for_graphs(pfvm_graph *g, pfvm_code (*f)(void *user, pfvm_graph *g), void *user)
{
    pfvm_code rc = f(user, g);
    int i, j, k;
    for (i = 0; !rc && i < (int)stbds_arrlen(g->nodes); i++) {
        pfvm_node *n = g->nodes[i];
        for (j = 0; !rc && j < n->n_attrs; j++) {
            pfvm_attr *a = &n->attrs[j];
            if (a->type == PFVM_ATTR_GRAPH && a->g)
                rc = pfvm__for_graphs(a->g, f, user);
            for (k = 0; !rc && a->type == PFVM_ATTR_GRAPHS && k < a->n; k++)
                rc = pfvm__for_graphs(a->graphs[k], f, user);
        }
    }
    return rc;
}
