/* The recompute pass: which activations to keep, an exact simulation of
 * the rewritten schedule's memory, and the rewrite itself. */
#include "recompute.h"
#include "../plan/symplan.h"

#include <math.h>
#include <string.h>

/* More cuts than this are thinned (every k-th kept as a candidate): the DP
 * tables grow with the square of the count. */
#define PFVM__RC_MAX_CUTS 600
/* Non-dominated (kept bytes, extra operations) pairs kept per DP state. */
#define PFVM__RC_FRONT 48
/* Internal-budget refinements of the DP against the exact simulation. */
#define PFVM__RC_REFINE 28

/* (file scope rather than nested, for C++) */
struct pfvm__rc_inplace {
    int step, x, x_clone, y;
};

typedef struct pfvm__rc {
    pfvm_graph *g;
    const pfvm_binding *b;
    pfvm_status *st;
    int nn, nf, nv;
    double *bytes;          /* by value id: arena bytes (0: constant, dynamic, input, initializer) */
    unsigned char *konst;   /* by value id: known before running */
    unsigned char *fwd;     /* by value id: made by a forward node */
    unsigned char *forced;  /* by value id: always kept */
    unsigned char *bwd;     /* by value id: read by a node after the forward pass */
    int *prod;              /* by value id: producing node index, -1 for inputs and initializers */
    double *flops;          /* by node */
    pfvm_value ***deps;     /* by node: the values it reads (stb_ds arrays, captures included) */
    int *cut;               /* value ids of the cuts, in forward order */
    const int *order;       /* node indices in schedule order: the forward nodes, then the backward ones in the
                               order pfvm__rc_sink_order chose (not owned) */
    int n_cuts;
    /* simulation */
    int *step_of;           /* by node: its step in the schedule */
    int *clone_step;        /* by value id: step of its recomputation, -1 when none */
    int *last_orig, *last_clone;
    pfvm_value **clone_val; /* by value id, when rewriting */
    int n_steps;
    struct pfvm__rc_inplace *in_place; /* stb_ds: in-place nodes of the schedule (pfvm__node_in_place) */
    int rewriting;
    int peak_step;          /* step of the last simulated schedule's peak */
    pfvm_code rc;
} pfvm__rc;

/* ---- analysis ---------------------------------------------------------------------------- */

static int pfvm__rc_has_subgraph(const pfvm_node *n)
{
    int j;
    for (j = 0; j < n->n_attrs; j++)
        if (n->attrs[j].type == PFVM_ATTR_GRAPH || n->attrs[j].type == PFVM_ATTR_GRAPHS)
            return 1;
    return 0;
}

/* Sizes under the binding; fails naming a value whose size the binding
 * leaves open. */
static pfvm_code pfvm__rc_sizes(pfvm__rc *R)
{
    int i;
    for (i = 0; i < R->nv; i++) {
        const pfvm_value *v = R->g->values[i];
        const pfvm_sym *s;
        int64_t x;
        if (!v->producer || R->konst[i] || !(s = pfvm__symplan_bytes(R->g->model->syms, &v->type)))
            continue;
        if (!pfvm_sym_eval(s, R->b, &x)) {
            char ty[128];
            pfvm_type_print(&v->type, ty, sizeof ty);
            return pfvm__fail(R->st, PFVM_ERR_INVALID,
                              "recompute: the size of '%s' (%s) depends on dims the binding leaves open: bind them",
                              v->name, ty);
        }
        R->bytes[i] = (double)x;
    }
    return PFVM_OK;
}

static pfvm_code pfvm__rc_analyse(pfvm__rc *R)
{
    int i, j;
    R->nn = (int)stbds_arrlen(R->g->nodes);
    R->nv = (int)stbds_arrlen(R->g->values);
    R->bytes = (double *)pfvm__calloc((size_t)R->nv + 1, sizeof *R->bytes);
    R->fwd = (unsigned char *)pfvm__calloc((size_t)R->nv + 1, 1);
    R->forced = (unsigned char *)pfvm__calloc((size_t)R->nv + 1, 1);
    R->bwd = (unsigned char *)pfvm__calloc((size_t)R->nv + 1, 1);
    R->prod = (int *)pfvm__calloc((size_t)R->nv + 1, sizeof *R->prod);
    R->flops = (double *)pfvm__calloc((size_t)R->nn + 1, sizeof *R->flops);
    R->deps = (pfvm_value ***)pfvm__calloc((size_t)R->nn + 1, sizeof *R->deps);
    R->konst = pfvm__symplan_constants(R->g);
    if (!R->bytes || !R->fwd || !R->forced || !R->bwd || !R->prod || !R->flops || !R->deps || !R->konst)
        return pfvm__fail(R->st, PFVM_ERR_NOMEM, "recompute: out of memory");
    for (i = 0; i < R->nv; i++)
        R->prod[i] = -1;
    for (i = 0; i < R->nn; i++) {
        const pfvm_node *n = R->g->nodes[i];
        int keep = i < R->nf && (!n->op || (n->op->flags & PFVM_OP_NONDETERMINISTIC) || pfvm__rc_has_subgraph(n));
        double f = pfvm_node_flops(n, R->b);
        R->flops[i] = f > 0 ? f : 0;
        if (!pfvm__node_data_deps(n, &R->deps[i]))
            return pfvm__fail(R->st, PFVM_ERR_NOMEM, "recompute: out of memory");
        for (j = 0; j < n->n_outputs; j++) {
            const pfvm_value *v = n->outputs[j];
            if (!v)
                continue;
            R->prod[v->id] = i;
            R->fwd[v->id] = i < R->nf && !R->konst[v->id];
            R->forced[v->id] = keep || v->is_output;
        }
        if (i >= R->nf)
            for (j = 0; j < (int)stbds_arrlen(R->deps[i]); j++)
                if (R->deps[i][j]->graph == R->g)
                    R->bwd[R->deps[i][j]->id] = 1;
    }
    return pfvm__rc_sizes(R);
}

/* Cuts: forward values that the backward pass reads and that are, once
 * made, the only non-constant forward value a later forward node still
 * reads. (A value the backward pass never reads is no candidate: keeping
 * it would cost its bytes for nothing but a shorter recomputation.) */
static pfvm_code pfvm__rc_find_cuts(pfvm__rc *R)
{
    int *lastf = (int *)pfvm__calloc((size_t)R->nv + 1, sizeof *lastf);
    int *cross = (int *)pfvm__calloc((size_t)R->nf + 2, sizeof *cross);
    int i, j, k, n = 0, thin;
    if (!lastf || !cross) {
        pfvm__free(lastf);
        pfvm__free(cross);
        return pfvm__fail(R->st, PFVM_ERR_NOMEM, "recompute: out of memory");
    }
    for (i = 0; i < R->nv; i++)
        lastf[i] = -1;
    for (i = 0; i < R->nf; i++)
        for (j = 0; j < (int)stbds_arrlen(R->deps[i]); j++)
            if (R->deps[i][j]->graph == R->g)
                lastf[R->deps[i][j]->id] = i;
    for (i = 0; i < R->nv; i++)
        if (R->fwd[i] && lastf[i] > R->prod[i]) {
            cross[R->prod[i]]++;
            cross[lastf[i]]--;
        }
    for (i = 1; i < R->nf; i++)
        cross[i] += cross[i - 1];
    R->cut = (int *)pfvm__calloc((size_t)R->nf + 1, sizeof *R->cut);
    if (!R->cut) {
        pfvm__free(lastf);
        pfvm__free(cross);
        return pfvm__fail(R->st, PFVM_ERR_NOMEM, "recompute: out of memory");
    }
    for (i = 0; i < R->nf; i++) {
        const pfvm_node *nd = R->g->nodes[i];
        if (cross[i] != 1)
            continue;
        for (j = 0; j < nd->n_outputs; j++) {
            const pfvm_value *v = nd->outputs[j];
            if (v && R->fwd[v->id] && R->bwd[v->id] && lastf[v->id] > i) {
                R->cut[n++] = v->id;
                break;
            }
        }
    }
    /* thin very long chains: the DP is quadratic in the cuts */
    thin = (n + PFVM__RC_MAX_CUTS - 1) / PFVM__RC_MAX_CUTS;
    for (i = 0, k = 0; i < n && thin > 1; i++)
        if ((i + 1) % thin == 0 || R->forced[R->cut[i]])
            R->cut[k++] = R->cut[i];
    R->n_cuts = thin > 1 ? k : n;
    pfvm__free(lastf);
    pfvm__free(cross);
    return PFVM_OK;
}

/* ---- the schedule --------------------------------------------------------------------------
 *
 * Forward nodes run first; before each later node, every dropped forward
 * value it reads is recomputed (with what that recomputation reads, in
 * turn) unless an earlier node already had it recomputed. The simulation
 * and the rewrite walk the same schedule. */

static int pfvm__rc_dropped(const pfvm__rc *R, const unsigned char *kept, const pfvm_value *v)
{
    return v->graph == R->g && R->fwd[v->id] && !R->forced[v->id] && !kept[v->id];
}

/* The value a node of the backward pass (or a recomputation) reads for v. */
static pfvm_value *pfvm__rc_read(pfvm__rc *R, const unsigned char *kept, pfvm_value *v, int step)
{
    if (v->graph != R->g)
        return v;
    if (pfvm__rc_dropped(R, kept, v)) {
        R->last_clone[v->id] = step;
        return R->clone_val ? R->clone_val[v->id] : v;
    }
    R->last_orig[v->id] = step;
    return v;
}

/* Redirects node n's reads of `from` (its inputs and its subgraphs'
 * captures) to `to`. */
static void pfvm__rc_redirect(pfvm_node *n, const pfvm_value *from, pfvm_value *to)
{
    int i, j, k;
    for (i = 0; i < n->n_inputs; i++)
        if (n->inputs[i] == from)
            n->inputs[i] = to;
    for (i = 0; i < n->n_attrs; i++) {
        pfvm_attr *a = &n->attrs[i];
        int ng = a->type == PFVM_ATTR_GRAPH ? 1 : a->type == PFVM_ATTR_GRAPHS ? (int)a->n : 0;
        for (j = 0; j < ng; j++) {
            pfvm_graph *sg = a->type == PFVM_ATTR_GRAPH ? a->g : a->graphs[j];
            for (k = 0; sg && k < (int)stbds_arrlen(sg->nodes); k++)
                pfvm__rc_redirect(sg->nodes[k], from, to);
            for (k = 0; sg && k < (int)stbds_arrlen(sg->outputs); k++)
                if (sg->outputs[k] == from)
                    sg->outputs[k] = to;
        }
    }
}

/* Adds the copy of forward node p that recomputes its outputs. */
static pfvm_code pfvm__rc_copy_node(pfvm__rc *R, const unsigned char *kept, int p, int step, pfvm_node ***order)
{
    const pfvm_node *src = R->g->nodes[p];
    pfvm_value **in = NULL, **out = NULL;
    pfvm_node *c;
    char name[256];
    int i;
    if (!pfvm__arrsetlen(in, src->n_inputs + 1) || !pfvm__arrsetlen(out, src->n_outputs + 1)) {
        stbds_arrfree(in);
        stbds_arrfree(out);
        return pfvm__fail(R->st, PFVM_ERR_NOMEM, "recompute: out of memory");
    }
    for (i = 0; i < src->n_inputs; i++)
        in[i] = src->inputs[i] ? pfvm__rc_read(R, kept, src->inputs[i], step) : NULL;
    for (i = 0; i < src->n_outputs; i++) {
        out[i] = NULL;
        if (!src->outputs[i])
            continue;
        if (!(out[i] = pfvm_graph_new_value(R->g, src->outputs[i]->name, R->st))) {
            stbds_arrfree(in);
            stbds_arrfree(out);
            return pfvm__fail(R->st, PFVM_ERR_NOMEM, "recompute: out of memory");
        }
        out[i]->type = src->outputs[i]->type;
        R->clone_val[src->outputs[i]->id] = out[i];
    }
    pfvm__snprintf(name, sizeof name, "%s_recompute", src->name && *src->name ? src->name : src->op_type);
    c = pfvm_graph_add_node(R->g, src->op_type, src->domain, name, in, src->n_inputs, out, src->n_outputs, R->st);
    stbds_arrfree(in);
    stbds_arrfree(out);
    if (!c)
        return pfvm__fail(R->st, PFVM_ERR_NOMEM, "node '%s' (%s): recompute: cannot copy the node", name, src->op_type);
    for (i = 0; i < src->n_attrs; i++) {
        pfvm_attr *a = pfvm_node_add_attr(c, src->attrs[i].name, src->attrs[i].type, R->st);
        if (!a)
            return pfvm__fail(R->st, PFVM_ERR_NOMEM, "recompute: out of memory");
        *a = src->attrs[i];
    }
    c->doc = PFVM_RECOMPUTE_DOC;
    c->op = src->op;
    c->opset = src->opset;
    c->overload = src->overload;
    if (!pfvm__arrpush(*order, c))
        return pfvm__fail(R->st, PFVM_ERR_NOMEM, "recompute: out of memory");
    return PFVM_OK;
}

/* Notes node n at `step` when its output 0 may take input 0's storage;
 * pfvm__rc_schedule decides once the input's last reader is known. */
static void pfvm__rc_note_in_place(pfvm__rc *R, const unsigned char *kept, const pfvm_node *n, int step,
                                   int reads_clones)
{
    struct pfvm__rc_inplace e;
    if (!pfvm__node_in_place(n) || R->bytes[n->inputs[0]->id] <= 0 ||
        R->bytes[n->inputs[0]->id] != R->bytes[n->outputs[0]->id])
        return;
    e.step = step;
    e.x = n->inputs[0]->id;
    e.x_clone = reads_clones && pfvm__rc_dropped(R, kept, n->inputs[0]);
    e.y = n->outputs[0]->id;
    if (!pfvm__arrpush(R->in_place, e) && !R->rc)
        R->rc = pfvm__fail(R->st, PFVM_ERR_NOMEM, "recompute: out of memory");
}

/* Recomputes dropped value v (and, first, what its producer reads). */
static void pfvm__rc_ensure(pfvm__rc *R, const unsigned char *kept, const pfvm_value *v, pfvm_node ***order,
                            double *extra, int *copies)
{
    int p = R->prod[v->id], j, s;
    const pfvm_node *n;
    if (R->clone_step[v->id] >= 0 || R->rc)
        return;
    n = R->g->nodes[p];
    for (j = 0; j < (int)stbds_arrlen(R->deps[p]); j++)
        if (pfvm__rc_dropped(R, kept, R->deps[p][j]))
            pfvm__rc_ensure(R, kept, R->deps[p][j], order, extra, copies);
    s = R->n_steps++;
    pfvm__rc_note_in_place(R, kept, n, s, 1);
    if (R->rewriting)
        R->rc = pfvm__rc_copy_node(R, kept, p, s, order);
    else
        for (j = 0; j < (int)stbds_arrlen(R->deps[p]); j++)
            (void)pfvm__rc_read(R, kept, R->deps[p][j], s);
    for (j = 0; j < n->n_outputs; j++)
        if (n->outputs[j])
            R->clone_step[n->outputs[j]->id] = s;
    *extra += R->flops[p];
    (*copies)++;
}

/* Walks the schedule of `kept`: its exact peak of live bytes (as the
 * symbolic planner counts them), the operations recomputed and the number
 * of copies. With R->rewriting, also builds the copies and returns the new
 * node order in *order. */
static double pfvm__rc_schedule(pfvm__rc *R, const unsigned char *kept, double *extra, int *copies,
                                pfvm_node ***order)
{
    double *delta, live = 0, peak = 0;
    int i, j, k, total;
    *extra = 0;
    *copies = 0;
    R->n_steps = 0;
    pfvm__arrtrunc(R->in_place, 0);
    for (i = 0; i < R->nv; i++) {
        R->clone_step[i] = -1;
        R->last_orig[i] = R->last_clone[i] = -1;
    }
    for (k = 0; k < R->nn && !R->rc; k++) {
        pfvm_node *n = R->g->nodes[i = R->order[k]];
        if (i >= R->nf)
            for (j = 0; j < (int)stbds_arrlen(R->deps[i]); j++)
                if (pfvm__rc_dropped(R, kept, R->deps[i][j]))
                    pfvm__rc_ensure(R, kept, R->deps[i][j], order, extra, copies);
        R->step_of[i] = R->n_steps++;
        pfvm__rc_note_in_place(R, kept, n, R->step_of[i], i >= R->nf);
        for (j = 0; j < (int)stbds_arrlen(R->deps[i]); j++) {
            pfvm_value *v = R->deps[i][j], *r;
            if (i < R->nf) {
                if (v->graph == R->g)
                    R->last_orig[v->id] = R->step_of[i];
                continue;
            }
            r = pfvm__rc_read(R, kept, v, R->step_of[i]);
            if (R->rewriting && r != v)
                pfvm__rc_redirect(n, v, r);
        }
        if (R->rewriting && !pfvm__arrpush(*order, n) && !R->rc)
            R->rc = pfvm__fail(R->st, PFVM_ERR_NOMEM, "recompute: out of memory");
    }
    if (R->rc)
        return -1;
    total = R->n_steps;
    for (i = 0; i < (int)stbds_arrlen(R->g->outputs); i++)
        if (R->g->outputs[i]->graph == R->g)
            R->last_orig[R->g->outputs[i]->id] = total;
    delta = (double *)pfvm__calloc((size_t)total + 2, sizeof *delta);
    if (!delta) {
        R->rc = pfvm__fail(R->st, PFVM_ERR_NOMEM, "recompute: out of memory");
        return -1;
    }
    for (i = 0; i < R->nv; i++) {
        int first, last;
        if (R->prod[i] < 0 || R->bytes[i] <= 0)
            continue;
        first = R->step_of[R->prod[i]];
        last = R->last_orig[i] < first ? first : R->last_orig[i];
        delta[first] += R->bytes[i];
        delta[last + 1] -= R->bytes[i];
        if ((first = R->clone_step[i]) >= 0) {
            last = R->last_clone[i] < first ? first : R->last_clone[i];
            delta[first] += R->bytes[i];
            delta[last + 1] -= R->bytes[i];
        }
    }
    /* an output stored over its input: one buffer at that step */
    for (i = 0; i < (int)stbds_arrlen(R->in_place); i++) {
        const struct pfvm__rc_inplace *p = &R->in_place[i];
        int x_last = p->x_clone ? R->last_clone[p->x] : R->last_orig[p->x];
        if (x_last == p->step) {
            delta[p->step] -= R->bytes[p->y];
            delta[p->step + 1] += R->bytes[p->y];
        }
    }
    R->peak_step = 0;
    for (i = 0; i <= total; i++) {
        live += delta[i];
        if (live > peak) {
            peak = live;
            R->peak_step = i;
        }
    }
    pfvm__free(delta);
    return peak;
}

static double pfvm__rc_simulate(pfvm__rc *R, const unsigned char *kept, double *extra, int *copies)
{
    return pfvm__rc_schedule(R, kept, extra, copies, NULL);
}

/* ---- the backward order ------------------------------------------------------------------
 *
 * pfvm_autodiff emits each weight gradient right where the gradient flowing
 * through its layer is made, so the gradients of the last layers (graph
 * outputs, alive to the end) are held through the whole backward pass.
 * Where a gradient weighs more than what computing it reads (layer 4 of a
 * resnet: 9 MB of weights from 1.5 MB activations), computing it last
 * lowers the peak. A "tail chain" is the set of backward nodes whose
 * outputs reach one graph output and nothing else (a weight gradient with
 * its transposes, an optimizer update); it moves to the end when its
 * outputs outweigh the values it reads from outside.
 * Moving nodes changes no arithmetic, only when it happens. */

/* The tail chain a node belongs to: -1 when its outputs reach no graph
 * output, -2 when they reach several, else the index of the node making
 * the one graph output they reach. */
static int pfvm__rc_merge(int a, int b)
{
    return b == -1 ? a : a == -1 ? b : a == b ? a : -2;
}

/* Fills order[] with the forward nodes, then the backward nodes that stay,
 * then the tail chains worth moving; returns how many nodes moved. */
static int pfvm__rc_sink_order(pfvm__rc *R, int *order)
{
    int *chain = (int *)pfvm__calloc((size_t)R->nn + 1, sizeof *chain);
    double *out_b = (double *)pfvm__calloc((size_t)R->nn + 1, sizeof *out_b);
    double *in_b = (double *)pfvm__calloc((size_t)R->nn + 1, sizeof *in_b);
    int i, j, k, n = 0, moved = 0;
    if (!chain || !out_b || !in_b) {
        R->rc = pfvm__fail(R->st, PFVM_ERR_NOMEM, "recompute: out of memory");
        goto done;
    }
    for (i = 0; i < R->nn; i++)
        chain[i] = -1;
    /* readers come later: walking backwards, a node's chain is known when
       it is reached, and passes on to the producers of what it reads */
    for (i = R->nn - 1; i >= R->nf; i--) {
        const pfvm_node *nd = R->g->nodes[i];
        for (j = 0; j < nd->n_outputs; j++)
            if (nd->outputs[j] && nd->outputs[j]->is_output)
                chain[i] = pfvm__rc_merge(chain[i], i);
        if (!nd->op || (nd->op->flags & PFVM_OP_NONDETERMINISTIC))
            chain[i] = -2;
        for (j = 0; j < (int)stbds_arrlen(R->deps[i]); j++) {
            int p = R->deps[i][j]->graph == R->g ? R->prod[R->deps[i][j]->id] : -1;
            if (p >= R->nf)
                chain[p] = pfvm__rc_merge(chain[p], chain[i]);
        }
    }
    for (i = R->nf; i < R->nn; i++) {
        const pfvm_node *nd = R->g->nodes[i];
        int c = chain[i];
        if (c < 0)
            continue;
        for (j = 0; j < nd->n_outputs; j++)
            if (nd->outputs[j] && nd->outputs[j]->is_output)
                out_b[c] += R->bytes[nd->outputs[j]->id];
        for (j = 0; j < (int)stbds_arrlen(R->deps[i]); j++) {
            const pfvm_value *v = R->deps[i][j];
            int p = v->graph == R->g ? R->prod[v->id] : -1;
            if (p >= 0 && (p < R->nf || chain[p] != c))
                in_b[c] += R->bytes[v->id];
        }
    }
    for (i = 0; i < R->nn; i++)
        if (i < R->nf || chain[i] < 0 || out_b[chain[i]] <= in_b[chain[i]])
            order[n++] = i;
    for (k = n, i = R->nf; i < R->nn; i++)
        if (chain[i] >= 0 && out_b[chain[i]] > in_b[chain[i]])
            order[n++] = i;
    moved = n - k;
done:
    pfvm__free(chain);
    pfvm__free(out_b);
    pfvm__free(in_b);
    return moved;
}

/* ---- policies -------------------------------------------------------------------------------- */

/* kept[] for a set of chosen cuts (chosen[k] for cut k). */
static void pfvm__rc_keep_cuts(const pfvm__rc *R, const unsigned char *chosen, unsigned char *kept)
{
    int k;
    memset(kept, 0, (size_t)R->nv + 1);
    for (k = 0; k < R->n_cuts; k++)
        kept[R->cut[k]] = chosen[k];
}

static void pfvm__rc_stride(const pfvm__rc *R, int s, unsigned char *chosen)
{
    int k;
    for (k = 0; k < R->n_cuts; k++)
        chosen[k] = (unsigned char)((k + 1) % s == 0);
}

/* The DP's estimates for a group of forward nodes between kept cuts i and
 * j (cut 0 is the start, cut n+1 the end): bytes its recomputed values hold
 * during its backward pass, and the operations recomputing them. */
typedef struct pfvm__rc_tables {
    int n;          /* cuts + 2 */
    double *mem, *ops; /* [i * n + j]; mem < 0: the group cannot be formed (a forced cut inside) */
    double *size;   /* bytes of cut k */
    int *pos;       /* forward position of cut k */
} pfvm__rc_tables;

static pfvm_code pfvm__rc_tables_build(pfvm__rc *R, pfvm__rc_tables *T)
{
    int n = R->n_cuts + 2, i, j, p, k, stamp = 0;
    int *demand = (int *)pfvm__calloc((size_t)R->nv + 1, sizeof *demand);
    T->n = n;
    T->mem = (double *)pfvm__calloc((size_t)n * (size_t)n, sizeof *T->mem);
    T->ops = (double *)pfvm__calloc((size_t)n * (size_t)n, sizeof *T->ops);
    T->size = (double *)pfvm__calloc((size_t)n, sizeof *T->size);
    T->pos = (int *)pfvm__calloc((size_t)n, sizeof *T->pos);
    if (!demand || !T->mem || !T->ops || !T->size || !T->pos) {
        pfvm__free(demand);
        return pfvm__fail(R->st, PFVM_ERR_NOMEM, "recompute: out of memory");
    }
    T->pos[0] = -1;
    for (k = 1; k <= R->n_cuts; k++) {
        T->pos[k] = R->prod[R->cut[k - 1]];
        T->size[k] = R->bytes[R->cut[k - 1]];
    }
    T->pos[n - 1] = R->nf - 1;
    for (i = 0; i < n * n; i++)
        T->mem[i] = -1;
    for (j = 1; j < n; j++) {
        double mem = 0, ops = 0;
        int right = j <= R->n_cuts ? R->cut[j - 1] : -1, blocked = 0;
        stamp++;
        for (i = j - 1; i >= 0 && !blocked; i--) {
            /* extend the group over segment i+1: positions (pos[i], pos[i+1]] */
            for (p = T->pos[i + 1]; p > T->pos[i]; p--) {
                const pfvm_node *nd = R->g->nodes[p];
                int need = 0;
                for (k = 0; k < nd->n_outputs && !need; k++) {
                    const pfvm_value *v = nd->outputs[k];
                    need = v && R->fwd[v->id] && !R->forced[v->id] && v->id != right &&
                           (R->bwd[v->id] || demand[v->id] == stamp);
                }
                if (!need)
                    continue;
                ops += R->flops[p];
                for (k = 0; k < nd->n_outputs; k++) {
                    const pfvm_value *v = nd->outputs[k];
                    if (v && R->bwd[v->id] && v->id != right)
                        mem += R->bytes[v->id];
                }
                for (k = 0; k < (int)stbds_arrlen(R->deps[p]); k++)
                    if (R->deps[p][k]->graph == R->g)
                        demand[R->deps[p][k]->id] = stamp;
            }
            T->mem[i * n + j] = mem;
            T->ops[i * n + j] = ops;
            /* a forced cut cannot lie inside a group that reaches further left */
            blocked = i >= 1 && R->forced[R->cut[i - 1]];
        }
    }
    pfvm__free(demand);
    return PFVM_OK;
}

static void pfvm__rc_tables_free(pfvm__rc_tables *T)
{
    pfvm__free(T->mem);
    pfvm__free(T->ops);
    pfvm__free(T->size);
    pfvm__free(T->pos);
}

typedef struct pfvm__rc_state {
    double kept;  /* bytes of the cuts kept so far */
    double ops;   /* operations recomputed so far */
    int from, at; /* previous cut and its entry */
} pfvm__rc_state;

/* Keeps the non-dominated states (less kept memory or fewer operations),
 * at most PFVM__RC_FRONT of them, spread over the memory range. */
static void pfvm__rc_prune(pfvm__rc_state **front)
{
    pfvm__rc_state *f = *front;
    int n = (int)stbds_arrlen(f), i, j, k = 0;
    for (i = 1; i < n; i++) { /* insertion sort by kept bytes, then operations */
        pfvm__rc_state x = f[i];
        for (j = i - 1; j >= 0 && (f[j].kept > x.kept || (f[j].kept == x.kept && f[j].ops > x.ops)); j--)
            f[j + 1] = f[j];
        f[j + 1] = x;
    }
    for (i = 0; i < n; i++)
        if (!k || f[i].ops < f[k - 1].ops)
            f[k++] = f[i];
    if (k > PFVM__RC_FRONT) {
        int m = 0;
        for (i = 0; i < PFVM__RC_FRONT; i++)
            f[m++] = f[(int)((double)i * (k - 1) / (PFVM__RC_FRONT - 1))];
        k = m;
    }
    pfvm__arrtrunc(*front, k);
}

/* The cuts to keep so that every group's estimate fits `limit`, with the
 * fewest recomputed operations; 0 when none does. */
static int pfvm__rc_dp(const pfvm__rc_tables *T, double limit, unsigned char *chosen)
{
    int n = T->n, i, j, e, best = -1, ok = 0, oom = 0;
    pfvm__rc_state **front = (pfvm__rc_state **)pfvm__calloc((size_t)n, sizeof *front), s;
    if (!front)
        return 0;
    memset(&s, 0, sizeof s);
    s.from = -1;
    /* out of memory: no plan, as when none fits */
    oom = !pfvm__arrpush(front[0], s);
    for (j = 1; j < n && !oom; j++) {
        for (i = j - 1; i >= 0 && !oom; i--) {
            double mem = T->mem[i * n + j];
            if (mem < 0)
                break;
            for (e = 0; e < (int)stbds_arrlen(front[i]); e++) {
                const pfvm__rc_state *x = &front[i][e];
                if (x->kept + T->size[j] + mem > limit)
                    continue;
                s.kept = x->kept + T->size[j];
                s.ops = x->ops + T->ops[i * n + j];
                s.from = i;
                s.at = e;
                if (!pfvm__arrpush(front[j], s)) {
                    oom = 1;
                    break;
                }
            }
        }
        pfvm__rc_prune(&front[j]);
    }
    for (e = 0; !oom && e < (int)stbds_arrlen(front[n - 1]); e++)
        if (best < 0 || front[n - 1][e].ops < front[n - 1][best].ops)
            best = e;
    if (best >= 0) {
        memset(chosen, 0, (size_t)n);
        for (j = n - 1, e = best; j > 0;) {
            const pfvm__rc_state *x = &front[j][e];
            if (j < n - 1)
                chosen[j - 1] = 1;
            j = x->from;
            e = x->at;
        }
        ok = 1;
    }
    for (i = 0; i < n; i++)
        stbds_arrfree(front[i]);
    pfvm__free(front);
    return ok;
}

/* A candidate plan and what the simulation says of it. */
typedef struct pfvm__rc_plan {
    unsigned char *chosen;
    double peak, extra;
    int valid, stride;
} pfvm__rc_plan;

/* Better than (peak, extra) for the budget: fits when the other does not,
 * else fewer operations among fitting plans, else a smaller peak. */
static int pfvm__rc_better(double budget, double peak, double extra, double peak0, double extra0)
{
    int fits = budget <= 0 || peak <= budget, fits0 = budget <= 0 || peak0 <= budget;
    if (fits != fits0)
        return fits;
    if (fits && budget > 0)
        return extra < extra0 || (extra == extra0 && peak < peak0);
    return peak < peak0 || (peak == peak0 && extra < extra0);
}

/* Keeps `cand` in `best` when it is better: within the budget with fewer
 * operations (then a smaller peak), else a smaller peak. */
static void pfvm__rc_consider(const pfvm__rc *R, double budget, pfvm__rc_plan *best, const unsigned char *chosen,
                              double peak, double extra, int stride)
{
    if (best->valid && !pfvm__rc_better(budget, peak, extra, best->peak, best->extra))
        return;
    memcpy(best->chosen, chosen, (size_t)R->n_cuts + 1);
    best->peak = peak;
    best->extra = extra;
    best->stride = stride;
    best->valid = 1;
}

static double pfvm__rc_eval(pfvm__rc *R, const unsigned char *chosen, unsigned char *kept, double *extra)
{
    int copies;
    pfvm__rc_keep_cuts(R, chosen, kept);
    return pfvm__rc_simulate(R, kept, extra, &copies);
}

/* Chen's plans for strides lo..hi, each weighed against the budget. */
static void pfvm__rc_strides(pfvm__rc *R, int lo, int hi, double budget, unsigned char *chosen, unsigned char *kept,
                             pfvm__rc_plan *best)
{
    double extra, peak;
    int s;
    for (s = lo < 1 ? 1 : lo; s <= hi && !R->rc; s++) {
        pfvm__rc_stride(R, s, chosen);
        peak = pfvm__rc_eval(R, chosen, kept, &extra);
        pfvm__rc_consider(R, budget, best, chosen, peak, extra, s);
    }
}

static pfvm_code pfvm__rc_policy_chen(pfvm__rc *R, const pfvm_recompute_opts *o, unsigned char *chosen,
                                      unsigned char *kept, pfvm__rc_plan *best)
{
    if (o->stride > 0 || o->budget <= 0) {
        int s = o->stride > 0 ? o->stride : (int)ceil(sqrt((double)R->n_cuts));
        pfvm__rc_strides(R, s, s, 0, chosen, kept, best);
    } else {
        pfvm__rc_strides(R, 1, R->n_cuts + 1, o->budget, chosen, kept, best);
    }
    return R->rc;
}

static pfvm_code pfvm__rc_policy_dp(pfvm__rc *R, const pfvm_recompute_opts *o, unsigned char *chosen,
                                    unsigned char *kept, pfvm__rc_plan *best, double unconstrained)
{
    pfvm__rc_tables T;
    double lo = 0, hi, extra, peak;
    int it;
    memset(&T, 0, sizeof T);
    if ((R->rc = pfvm__rc_tables_build(R, &T)) != PFVM_OK) {
        pfvm__rc_tables_free(&T);
        return R->rc;
    }
    if (o->budget > 0) {
        /* the largest internal limit whose plan's exact peak fits */
        hi = o->budget;
        for (it = 0; it < PFVM__RC_REFINE && !R->rc; it++) {
            double mid = it ? 0.5 * (lo + hi) : hi;
            if (!pfvm__rc_dp(&T, mid, chosen)) {
                lo = mid;
                continue;
            }
            peak = pfvm__rc_eval(R, chosen, kept, &extra);
            pfvm__rc_consider(R, o->budget, best, chosen, peak, extra, 0);
            if (peak <= o->budget) {
                if (!it)
                    break;
                lo = mid;
            } else
                hi = mid;
        }
    }
    /* never worse than Chen's plans: every stride is a candidate too */
    pfvm__rc_strides(R, 1, R->n_cuts + 1, o->budget, chosen, kept, best);
    if (o->budget <= 0 || !best->valid || best->peak > o->budget) {
        /* no budget, or none fits: the smallest exact peak over a sweep of
           internal limits */
        for (it = 0; it <= PFVM__RC_REFINE && !R->rc; it++) {
            double limit = unconstrained * pow(0.01, 1.0 - (double)it / PFVM__RC_REFINE);
            if (!pfvm__rc_dp(&T, limit, chosen))
                continue;
            peak = pfvm__rc_eval(R, chosen, kept, &extra);
            pfvm__rc_consider(R, o->budget, best, chosen, peak, extra, 0);
        }
    }
    pfvm__rc_tables_free(&T);
    return R->rc;
}

/* Local search over single activations, against the exact simulation:
 * keeping one more value or dropping one the cuts kept (the DP only
 * chooses among cuts; a value inside a group, such as MaxPool's indices,
 * can be worth keeping on its own). Sweeps until nothing improves. */
static void pfvm__rc_refine(pfvm__rc *R, double budget, unsigned char *kept, double *peak, double *extra)
{
    int sweep, i, copies, improved = 1;
    for (sweep = 0; sweep < 4 && improved && !R->rc; sweep++) {
        improved = 0;
        for (i = 0; i < R->nv && !R->rc; i++) {
            double p, e;
            if (!R->fwd[i] || R->forced[i] || R->bytes[i] <= 0 || !R->bwd[i])
                continue;
            kept[i] = !kept[i];
            p = pfvm__rc_simulate(R, kept, &e, &copies);
            if (!R->rc && pfvm__rc_better(budget, p, e, *peak, *extra)) {
                *peak = p;
                *extra = e;
                improved = 1;
            } else {
                kept[i] = !kept[i];
            }
        }
    }
}

/* ---- the pass ------------------------------------------------------------------------------ */

int pfvm_node_is_recompute(const pfvm_node *n)
{
    return n && n->doc && !strcmp(n->doc, PFVM_RECOMPUTE_DOC);
}

static pfvm_code pfvm__rc_rewrite(pfvm__rc *R, const unsigned char *kept)
{
    pfvm_node **order = NULL;
    double extra;
    int copies, i;
    R->clone_val = (pfvm_value **)pfvm__calloc((size_t)R->nv + 1, sizeof *R->clone_val);
    if (!R->clone_val)
        return pfvm__fail(R->st, PFVM_ERR_NOMEM, "recompute: out of memory");
    R->rewriting = 1;
    pfvm__rc_schedule(R, kept, &extra, &copies, &order);
    R->rewriting = 0;
    if (!R->rc && (int)stbds_arrlen(order) != (int)stbds_arrlen(R->g->nodes))
        R->rc = pfvm__fail(R->st, PFVM_ERR_RUNTIME, "recompute: the schedule lost nodes");
    if (!R->rc) {
        for (i = 0; i < (int)stbds_arrlen(order); i++) {
            R->g->nodes[i] = order[i];
            order[i]->id = i;
        }
        R->rc = pfvm_graph_toposort(R->g, R->st);
    }
    stbds_arrfree(order);
    if (!R->rc)
        R->rc = pfvm_infer_shapes(R->g, 0, R->st);
    return R->rc;
}

static void pfvm__rc_free(pfvm__rc *R)
{
    int i;
    for (i = 0; i < R->nn && R->deps; i++)
        stbds_arrfree(R->deps[i]);
    pfvm__free(R->deps);
    pfvm__free(R->bytes);
    pfvm__free(R->konst);
    pfvm__free(R->fwd);
    pfvm__free(R->forced);
    pfvm__free(R->bwd);
    pfvm__free(R->prod);
    pfvm__free(R->flops);
    pfvm__free(R->cut);
    pfvm__free(R->step_of);
    pfvm__free(R->clone_step);
    pfvm__free(R->last_orig);
    pfvm__free(R->last_clone);
    pfvm__free(R->clone_val);
    stbds_arrfree(R->in_place);
}

/* No plan fits: slices the input segment's backward pass when there is
 * one and the best plan's peak lies in it (peak_at, the node at the peak
 * step; elsewhere slicing could only add work), and plans the sliced
 * graph (*sliced). rep keeps the unconstrained numbers of
 * the graph as given; the slices' copies count as recomputation. */
static pfvm_code pfvm__rc_plan_sliced(pfvm_model *m, pfvm_graph *g, const pfvm_recompute_opts *opts,
                                      const pfvm_node *peak_at, pfvm_recompute_report *rep, int *sliced,
                                      pfvm_status *st)
{
    pfvm__rc_sliced sl;
    pfvm_recompute_opts o = *opts;
    pfvm_recompute_report r;
    pfvm_code rc = pfvm__rc_slice_input(g, opts->n_forward, opts->binding, peak_at, &sl, st);
    if (rc || !(*sliced = sl.slices > 0))
        return rc;
    o.flags |= PFVM__RECOMPUTE_SLICED;
    if ((rc = pfvm_recompute(m, g, &o, &r, st)) != PFVM_OK)
        return rc;
    r.peak_before = rep->peak_before;
    r.flops_forward = rep->flops_forward;
    r.flops_total = rep->flops_total;
    r.extra_flops += sl.extra_flops;
    r.n_recomputed += sl.n_copies;
    r.n_slices = sl.slices;
    *rep = r;
    return PFVM_OK;
}

static pfvm_code pfvm__scoped_recompute(pfvm_model *m, pfvm_graph *g, const pfvm_recompute_opts *opts,
                         pfvm_recompute_report *report, pfvm_status *st)
{
    pfvm__rc R;
    pfvm_recompute_report rep;
    pfvm__rc_plan best;
    unsigned char *chosen = NULL, *kept = NULL, *all = NULL;
    int *ident = NULL, *sunk = NULL;
    double extra;
    int i, copies, reordered = 0;
    memset(&R, 0, sizeof R);
    memset(&rep, 0, sizeof rep);
    memset(&best, 0, sizeof best);
    g = g ? g : (m ? m->graph : NULL);
    if (!g || !opts)
        return pfvm__fail(st, PFVM_ERR_INVALID, "recompute: no graph or no options");
    if (opts->n_forward <= 0 || opts->n_forward > (int)stbds_arrlen(g->nodes))
        return pfvm__fail(st, PFVM_ERR_INVALID,
                          "recompute: n_forward (%d) must split the graph's %d nodes into forward and backward",
                          opts->n_forward, (int)stbds_arrlen(g->nodes));
    R.g = g;
    R.b = opts->binding;
    R.st = st;
    R.nf = opts->n_forward;
    if ((R.rc = pfvm__rc_analyse(&R)) != PFVM_OK || (R.rc = pfvm__rc_find_cuts(&R)) != PFVM_OK)
        goto done;
    R.step_of = (int *)pfvm__calloc((size_t)R.nn + 1, sizeof *R.step_of);
    R.clone_step = (int *)pfvm__calloc((size_t)R.nv + 1, sizeof *R.clone_step);
    R.last_orig = (int *)pfvm__calloc((size_t)R.nv + 1, sizeof *R.last_orig);
    R.last_clone = (int *)pfvm__calloc((size_t)R.nv + 1, sizeof *R.last_clone);
    chosen = (unsigned char *)pfvm__calloc((size_t)R.n_cuts + 2, 1);
    best.chosen = (unsigned char *)pfvm__calloc((size_t)R.n_cuts + 2, 1);
    kept = (unsigned char *)pfvm__calloc((size_t)R.nv + 1, 1);
    all = (unsigned char *)pfvm__calloc((size_t)R.nv + 1, 1);
    ident = (int *)pfvm__calloc((size_t)R.nn + 1, sizeof *ident);
    sunk = (int *)pfvm__calloc((size_t)R.nn + 1, sizeof *sunk);
    if (!ident || !sunk || !R.step_of || !R.clone_step || !R.last_orig || !R.last_clone || !chosen || !best.chosen || !kept || !all) {
        R.rc = pfvm__fail(st, PFVM_ERR_NOMEM, "recompute: out of memory");
        goto done;
    }
    memset(all, 1, (size_t)R.nv + 1);
    rep.n_cuts = R.n_cuts;
    for (i = 0; i < R.nn; i++)
        ident[i] = i;
    R.order = ident;
    rep.peak_before = rep.peak_reordered = pfvm__rc_simulate(&R, all, &extra, &copies);
    if (opts->policy != PFVM_RECOMPUTE_NONE && (reordered = pfvm__rc_sink_order(&R, sunk)) > 0) {
        R.order = sunk;
        rep.peak_reordered = pfvm__rc_simulate(&R, all, &extra, &copies);
        if (rep.peak_reordered >= rep.peak_before) { /* no better: the autodiff order stays */
            R.order = ident;
            rep.peak_reordered = rep.peak_before;
            reordered = 0;
        }
    }
    if (R.rc)
        goto done;
    rep.n_moved = reordered;
    for (i = 0; i < R.nn; i++)
            if (i < R.nf)
            rep.flops_forward += R.flops[i];
        else
            rep.flops_total += R.flops[i];
    rep.flops_total += rep.flops_forward;
    if (opts->policy == PFVM_RECOMPUTE_CHEN)
        pfvm__rc_policy_chen(&R, opts, chosen, kept, &best);
    else if (opts->policy == PFVM_RECOMPUTE_DP)
        pfvm__rc_policy_dp(&R, opts, chosen, kept, &best, rep.peak_before);
    else if (opts->policy != PFVM_RECOMPUTE_NONE)
        R.rc = pfvm__fail(st, PFVM_ERR_INVALID, "recompute: unknown policy %d", (int)opts->policy);
    if (R.rc)
        goto done;
    if (best.valid)
        pfvm__rc_keep_cuts(&R, best.chosen, kept);
    else
        memcpy(kept, all, (size_t)R.nv + 1);
    rep.peak_after = pfvm__rc_simulate(&R, kept, &rep.extra_flops, &rep.n_recomputed);
    if (opts->policy == PFVM_RECOMPUTE_DP) {
        pfvm__rc_refine(&R, opts->budget, kept, &rep.peak_after, &rep.extra_flops);
        rep.peak_after = pfvm__rc_simulate(&R, kept, &rep.extra_flops, &rep.n_recomputed);
    }
    for (i = 0; i < R.n_cuts; i++)
        rep.n_kept += kept[R.cut[i]];
    rep.stride = best.stride;
    rep.within_budget = opts->budget <= 0 || rep.peak_after <= opts->budget;
    if (!rep.within_budget && opts->policy != PFVM_RECOMPUTE_NONE &&
        !(opts->flags & (PFVM_RECOMPUTE_PLAN_ONLY | PFVM_RECOMPUTE_NO_SLICE | PFVM__RECOMPUTE_SLICED))) {
        const pfvm_node *at = NULL;
        int sliced = 0;
        for (i = 0; i < R.nn; i++)
            if (R.step_of[i] == R.peak_step)
                at = g->nodes[i];
        if ((R.rc = pfvm__rc_plan_sliced(m, g, opts, at, &rep, &sliced, st)) != PFVM_OK || sliced)
            goto done;
    }
    if (!(opts->flags & PFVM_RECOMPUTE_PLAN_ONLY) &&
        (rep.n_recomputed || reordered || (opts->flags & PFVM__RECOMPUTE_SLICED))) {
        pfvm_symplan plan;
        if ((rep.n_recomputed || reordered) && (R.rc = pfvm__rc_rewrite(&R, kept)) != PFVM_OK)
            goto done;
        if (!(R.rc = pfvm_symplan_build(g, &plan, st))) {
            rep.peak_expr = plan.peak;
            pfvm_symplan_free(&plan);
        }
    }
done:
    pfvm__free(chosen);
    pfvm__free(ident);
    pfvm__free(sunk);
    pfvm__free(best.chosen);
    pfvm__free(kept);
    pfvm__free(all);
    pfvm__rc_free(&R);
    if (report)
        *report = rep;
    return R.rc;
}

pfvm_code pfvm_recompute(pfvm_model *m, pfvm_graph *g, const pfvm_recompute_opts *opts,
                         pfvm_recompute_report *report, pfvm_status *st)
{
    PFVM__SCOPED(pfvm_code, pfvm__model_allocator(m), pfvm__scoped_recompute(m, g, opts, report, st));
}
