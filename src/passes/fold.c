/* The fold pass: constant folding. A node is constant when inference
 * already knows its outputs (Constant, shape arithmetic whose symbolic
 * values are all constants: Shape -> Gather -> Concat of static dims) or
 * when all its inputs are constants and running its reference kernel gives
 * outputs of reasonable size. Constant outputs read by a node that is not
 * itself constant become initializers; the constant nodes go. Random
 * generators and nodes with subgraphs are never folded. */
#include "passes.h"
#include "../opi/rewrite.h"

/* Outputs larger than this are never computed at optimization time, and
 * outputs larger than PFVM__FOLD_SMALL only when they do not expand their
 * inputs more than PFVM__FOLD_GROWTH times (ConstantOfShape, Tile, Expand
 * and Range would bloat the saved model). */
#ifndef PFVM_FOLD_MAX_ELEMS
#define PFVM_FOLD_MAX_ELEMS (1 << 20)
#endif
#define PFVM__FOLD_SMALL 4096
#define PFVM__FOLD_GROWTH 2

typedef struct pfvm__fold {
    pfvm_rewrite rw;
    pfvm_pass_stats *stats;
} pfvm__fold;

static int pfvm__fold_candidate(const pfvm_node *n)
{
    int j;
    if (!n->op || !n->op->kernel || (n->op->flags & PFVM_OP_NONDETERMINISTIC) || n->n_outputs > 16 ||
        n->n_inputs > 16)
        return 0;
    for (j = 0; j < n->n_attrs; j++)
        if (n->attrs[j].type == PFVM_ATTR_GRAPH || n->attrs[j].type == PFVM_ATTR_GRAPHS)
            return 0;
    for (j = 0; j < n->n_outputs; j++)
        if (n->outputs[j])
            return 1;
    return 0;
}

/* Runs n's kernel on constant inputs; 1 when its outputs are now known
 * (stored as facts, their data owned by the model). */
static int pfvm__fold_run(pfvm__fold *F, pfvm_node *n)
{
    pfvm_rewrite *rw = &F->rw;
    const pfvm_tensor *kin[16];
    pfvm_tensor kout_t[16], *kout[16];
    void *planned[16]; /* the storage handed to the kernel, which may replace it */
    int64_t max_in = 0;
    pfvm_kctx k;
    pfvm_status st;
    int i, d, ok = 1;
    for (i = 0; i < n->n_inputs; i++) {
        kin[i] = NULL;
        if (!n->inputs[i])
            continue;
        if (!(kin[i] = pfvm_rw_value(rw, n->inputs[i])))
            return 0;
        if (pfvm_tensor_numel(kin[i]) > max_in)
            max_in = pfvm_tensor_numel(kin[i]);
    }
    memset(kout_t, 0, sizeof kout_t);
    for (i = 0; i < n->n_outputs; i++) {
        kout[i] = NULL;
        planned[i] = NULL;
    }
    for (i = 0; i < n->n_outputs; i++) {
        const pfvm_shape *s = pfvm_rw_shape(rw, n->outputs[i]);
        const pfvm_type *t = pfvm_rw_type(rw, n->outputs[i]);
        int64_t dims[PFVM_MAX_RANK], numel = 1;
        size_t bytes;
        if (!n->outputs[i])
            continue;
        if (!s || t->dtype == PFVM_STRING || !pfvm_dtype_size(t->dtype))
            ok = 0;
        for (d = 0; ok && d < s->rank; d++)
            if (!pfvm_sym_is_const(s->dims[d], &dims[d]) || !pfvm__mul_i64(numel, dims[d], &numel))
                ok = 0;
        if (ok && (numel > PFVM_FOLD_MAX_ELEMS ||
                   (numel > PFVM__FOLD_SMALL && numel > PFVM__FOLD_GROWTH * max_in)))
            ok = 0;
        if (!ok)
            break;
        kout[i] = &kout_t[i];
        kout[i]->kind = PFVM_KIND_TENSOR;
        kout[i]->dtype = t->dtype;
        pfvm_tensor_set_shape(kout[i], s->rank, dims, NULL);
        bytes = (size_t)numel * pfvm_dtype_size(t->dtype);
        kout[i]->nbytes = bytes;
        /* not owned: the kernel sees planned storage */
        if (!(kout[i]->data = planned[i] = pfvm__calloc(1, bytes ? bytes : 1)))
            ok = 0;
    }
    if (ok) {
        memset(&k, 0, sizeof k);
        memset(&st, 0, sizeof st);
        k.node = n;
        k.n_in = n->n_inputs;
        k.n_out = n->n_outputs;
        k.in = kin;
        k.out = kout;
        k.st = &st;
        ok = n->op->kernel(&k) == PFVM_OK;
    }
    for (i = 0; i < n->n_outputs; i++) {
        pfvm_tensor *t;
        pfvm_ival iv;
        if (!kout[i])
            continue;
        if (!ok || kout_t[i].owns_data || kout_t[i].kind != PFVM_KIND_TENSOR ||
            !(t = pfvm_model_tensor(rw->m, kout_t[i].dtype, kout_t[i].rank, kout_t[i].dims, kout_t[i].data, NULL)) ||
            pfvm_model_own(rw->m, kout_t[i].data, NULL)) {
            ok = 0;
            if (kout_t[i].data != planned[i]) /* replaced, or the output became a sequence */
                pfvm__free(planned[i]);
            if (kout_t[i].owns_data || kout_t[i].kind != PFVM_KIND_TENSOR)
                pfvm_tensor_release(&kout_t[i]);
            else
                pfvm__free(kout_t[i].data);
            continue;
        }
        memset(&iv, 0, sizeof iv);
        iv.type = *pfvm_rw_type(rw, n->outputs[i]);
        iv.value = t;
        pfvm__rw_set_fact(rw, n->outputs[i], &iv);
    }
    return ok;
}

/* A fresh initializer viewing t (model-lifetime data, never copied). */
static pfvm_value *pfvm__fold_init(pfvm_rewrite *rw, const pfvm_tensor *t, const char *hint)
{
    pfvm_tensor *c;
    pfvm_value *v;
    pfvm_ival iv;
    if (t->dtype == PFVM_STRING || !t->data)
        return pfvm_rw_const(rw, t, hint);
    pfvm__rw_new_init(rw->m);
    if (!(c = pfvm_model_tensor(rw->m, t->dtype, t->rank, t->dims, t->data, rw->st)) ||
        !(v = pfvm_graph_new_value(rw->g, hint, rw->st)) || pfvm_graph_add_init(rw->g, v, c, rw->st))
        return NULL;
    memset(&iv, 0, sizeof iv);
    iv.type = v->type;
    iv.value = c;
    pfvm__rw_set_fact(rw, v, &iv);
    return v;
}

static pfvm_code pfvm__fold_graph(void *user, pfvm_graph *g)
{
    pfvm__fold *F = (pfvm__fold *)user;
    pfvm_rewrite *rw = &F->rw;
    int n = (int)stbds_arrlen(g->nodes), i, j, k;
    unsigned char *folded = (unsigned char *)pfvm__calloc((size_t)n + 1, 1);
    pfvm_node **dead = NULL;
    pfvm_uses u;
    pfvm_code rc = PFVM_OK;
    if (!folded)
        return pfvm__fail(rw->st, PFVM_ERR_NOMEM, "out of memory");
    pfvm_rw_set_graph(rw, g);
    for (i = 0; i < n; i++) {
        pfvm_node *nd = g->nodes[i];
        int known = 1;
        nd->id = i;
        if (!pfvm__fold_candidate(nd))
            continue;
        for (j = 0; j < nd->n_outputs; j++)
            if (nd->outputs[j] && !pfvm_rw_value(rw, nd->outputs[j]))
                known = 0;
        folded[i] = (unsigned char)(known || pfvm__fold_run(F, nd));
    }
    /* constant outputs that something not folded reads become initializers */
    if ((rc = pfvm_uses_build(&u, g, rw->st)) != PFVM_OK) {
        pfvm__free(folded);
        return rc;
    }
    for (i = 0; i < n && !rc; i++) {
        pfvm_node *nd = g->nodes[i];
        if (!folded[i])
            continue;
        for (j = 0; j < nd->n_outputs && !rc; j++) {
            pfvm_value *out = nd->outputs[j], *c;
            const pfvm_use *us;
            int cnt, needed = 0, done;
            if (!out)
                continue;
            us = pfvm_uses_of(&u, out, &cnt);
            for (k = 0; k < cnt; k++)
                if (!us[k].top || !folded[us[k].top->id])
                    needed = 1;
            if (!needed)
                continue;
            if (!(c = pfvm__fold_init(rw, pfvm_rw_value(rw, out), out->name))) {
                rc = rw->st ? rw->st->code : PFVM_ERR_NOMEM;
                break;
            }
            rc = pfvm__rw_replace_value(g, out, c, &done, rw->st);
            if (!done)
                folded[i] = 0; /* a graph output keeps its node */
            else
                F->stats->rewritten++;
        }
    }
    pfvm_uses_free(&u);
    /* the folded nodes: nothing reads them now */
    if (!rc && (rc = pfvm_uses_build(&u, g, rw->st)) == PFVM_OK) {
        for (i = 0; i < n; i++) {
            pfvm_node *nd = g->nodes[i];
            int used = 0;
            if (!folded[i])
                continue;
            for (j = 0; j < nd->n_outputs; j++)
                if (nd->outputs[j] && pfvm_uses_count(&u, nd->outputs[j]))
                    used = 1;
            if (!used && !pfvm__arrpush(dead, nd)) {
                rc = pfvm__fail(rw->st, PFVM_ERR_NOMEM, "out of memory");
                break;
            }
        }
        pfvm_uses_free(&u);
        /* readers removed first would leave nothing stale: remove all at once */
        if (!rc && stbds_arrlen(dead)) {
            rc = pfvm_graph_remove_nodes(g, dead, (int)stbds_arrlen(dead), rw->st);
            F->stats->removed += (int)stbds_arrlen(dead);
        }
    }
    stbds_arrfree(dead);
    pfvm__free(folded);
    return rc;
}

PFVM_INTERNAL pfvm_code pfvm__pass_fold(pfvm_model *m, pfvm_graph *g, pfvm_pass_stats *stats, pfvm_status *st)
{
    pfvm__fold F;
    pfvm_code rc;
    (void)g;
    F.stats = stats;
    if ((rc = pfvm_rw_begin(&F.rw, m, PFVM_RW_SIMPLIFY, st)) != PFVM_OK)
        return rc;
    rc = pfvm__for_graphs(m->graph, pfvm__fold_graph, &F);
    pfvm_rw_free(&F.rw);
    return rc;
}
