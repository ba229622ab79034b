/* The input segment's backward pass in channel slices (see recompute.h).
 *
 * A CNN's stem (Conv of the image, ReLU, MaxPool) makes the largest
 * tensors of the network, and its backward pass holds several of them at
 * once: the gradient arriving at the convolution, its transpose for the
 * weight gradient, MaxPool's scatter target and the ReLU output. Keeping
 * or dropping activations cannot shrink that working set; computing it a
 * group of channels at a time can. Every operator of the segment makes
 * channel c of its output from channel c of its input (pooling, ReLU) or,
 * for the convolution, from row c of its weights, so for channels [a, b)
 *
 *     c_k = MaxPool(Relu(Conv(x, W[a:b], B[a:b])))
 *
 * is exactly channels [a, b) of the segment's output, and differentiating
 * c_k with the seed Slice(gy, [a, b), axis 1) gives rows [a, b) of the
 * weight and bias gradients, which a Concat joins. The segment's forward
 * pass runs once more (the slices' copies), and each slice's tensors are
 * 1/K of the originals. */
#include "recompute.h"
#include "autodiff.h"
#include "../plan/symplan.h"

#include <string.h>

#define PFVM__RCS_MAX_CHAIN 16
#define PFVM__RCS_MAX_PARAMS 4
#define PFVM__RCS_MAX_OUTPUTS 8

typedef struct pfvm__rcs {
    pfvm_graph *g;
    const pfvm_binding *b;
    pfvm_status *st;
    int nf;
    pfvm_node *chain[PFVM__RCS_MAX_CHAIN];
    int n_chain;
    pfvm_value *cut;                          /* the segment's output: output 0 of the last chain node */
    pfvm_value *seed;                         /* its gradient, made outside the segment's backward pass */
    pfvm_value *param[PFVM__RCS_MAX_PARAMS];  /* inputs 1.. of chain[0] */
    pfvm_value *grad[PFVM__RCS_MAX_PARAMS];   /* the segment's contributions to their gradients */
    int n_param;
    int64_t channels;
    unsigned char *in_bwd;                    /* by node index: the segment's backward pass */
    pfvm_uses uses;                           /* consumer lists of g before any edit */
} pfvm__rcs;

static int pfvm__rcs_per_channel(const pfvm_node *n)
{
    int i, ins = 0;
    if (!n->op || !n->op->grad || (n->op->flags & PFVM_OP_NONDETERMINISTIC) ||
        n->n_inputs > PFVM__RCS_MAX_PARAMS + 1 || n->n_outputs > PFVM__RCS_MAX_OUTPUTS)
        return 0;
    for (i = 0; i < n->n_inputs; i++)
        ins += n->inputs[i] != NULL;
    return ins == 1 && n->inputs[0] &&
           ((n->op->flags & PFVM_OP_PER_CHANNEL) || n->op->fusion == PFVM_FUSE_ELEMENTWISE);
}

/* Forward nodes that read v (each once), from the consumer lists; *only
 * receives the last of them. */
static int pfvm__rcs_forward_readers(const pfvm__rcs *S, const pfvm_value *v, pfvm_node **only)
{
    int n_uses, k, n = 0;
    const pfvm_use *u = pfvm_uses_of(&S->uses, v, &n_uses);
    for (k = 0; k < n_uses; k++)
        if (u[k].top && u[k].top->id < S->nf && (k == 0 || u[k].top != u[k - 1].top)) {
            n++;
            if (only)
                *only = u[k].top;
        }
    return n;
}

/* The segment: a forward Conv-like node (PFVM_OP_CHANNEL_ROWS, without
 * groups) of a graph input read by nothing else, whose other inputs are
 * parameters (initializers or inputs, rows = output channels), then
 * per-channel nodes each the only forward reader of the one before. Every
 * operator has a gradient builder, so that differentiating a slice cannot
 * fail once the graph is being edited. */
static int pfvm__rcs_find_chain(pfvm__rcs *S)
{
    int i, j;
    for (i = 0; i < S->nf; i++) {
        pfvm_node *n = S->g->nodes[i], *next;
        const pfvm_type *x, *w;
        S->n_chain = S->n_param = 0;
        if (!n->op || !(n->op->flags & PFVM_OP_CHANNEL_ROWS) || !n->op->grad || n->n_inputs < 2 ||
            n->n_outputs > PFVM__RCS_MAX_OUTPUTS || !n->inputs[0] ||
            !n->inputs[1] || n->inputs[0]->producer || n->n_outputs < 1 || !n->outputs[0])
            continue;
        x = &n->inputs[0]->type;
        w = &n->inputs[1]->type;
        if (x->shape.rank < 3 || w->shape.rank < 2 || !pfvm_sym_is_const(w->shape.dims[0], &S->channels) ||
            !pfvm_sym_proven_eq(x->shape.dims[1], w->shape.dims[1]) ||
            pfvm__rcs_forward_readers(S, n->inputs[0], NULL) != 1)
            continue;
        for (j = 1; j < n->n_inputs && j <= PFVM__RCS_MAX_PARAMS; j++) {
            pfvm_value *p = n->inputs[j];
            int64_t rows;
            if (!p || p->producer || !pfvm_dtype_is_float(p->type.dtype) || p->type.shape.rank < 1 ||
                !pfvm_sym_is_const(p->type.shape.dims[0], &rows) || rows != S->channels)
                break;
            S->param[S->n_param++] = p;
        }
        if (j < n->n_inputs || S->channels < 2)
            continue;
        S->chain[S->n_chain++] = n;
        /* per-channel successors, each the only forward reader of the last */
        while (S->n_chain < PFVM__RCS_MAX_CHAIN) {
            pfvm_node *last = S->chain[S->n_chain - 1];
            next = NULL;
            if (pfvm__rcs_forward_readers(S, last->outputs[0], &next) != 1 || !pfvm__rcs_per_channel(next) ||
                next->inputs[0] != last->outputs[0] || !next->outputs[0])
                break;
            for (j = 1; j < last->n_outputs; j++)
                if (last->outputs[j] && pfvm__rcs_forward_readers(S, last->outputs[j], NULL))
                    break;
            if (j < last->n_outputs)
                break;
            S->chain[S->n_chain++] = next;
        }
        S->cut = S->chain[S->n_chain - 1]->outputs[0];
        return 1;
    }
    return 0;
}

static int pfvm__rcs_is_param(const pfvm__rcs *S, const pfvm_value *v)
{
    int i;
    for (i = 0; i < S->n_param; i++)
        if (v == S->param[i])
            return 1;
    return 0;
}

/* The input and the values the segment makes inside (not its output). */
static int pfvm__rcs_in_segment(const pfvm__rcs *S, const pfvm_value *v)
{
    int i, j;
    if (v == S->chain[0]->inputs[0])
        return 1;
    for (i = 0; i < S->n_chain; i++)
        for (j = 0; j < S->chain[i]->n_outputs; j++)
            if (v == S->chain[i]->outputs[j] && v != S->cut)
                return 1;
    return 0;
}

static int pfvm__rcs_same_type(const pfvm_type *a, const pfvm_type *b)
{
    int i;
    if (a->dtype != b->dtype || a->shape.rank != b->shape.rank)
        return 0;
    for (i = 0; i < a->shape.rank; i++)
        if (!a->shape.dims[i] || !b->shape.dims[i] || !pfvm_sym_proven_eq(a->shape.dims[i], b->shape.dims[i]))
            return 0;
    return 1;
}

/* Exit v of the segment's backward pass is the gradient contribution of
 * the one parameter of its type; 0 when no parameter or several have it,
 * or when that parameter already has another. */
static int pfvm__rcs_claim(pfvm__rcs *S, pfvm_value *v)
{
    int q, mine = -1;
    for (q = 0; q < S->n_param; q++)
        if (pfvm__rcs_same_type(&v->type, &S->param[q]->type))
            mine = mine == -1 ? q : -2;
    if (mine < 0 || (S->grad[mine] && S->grad[mine] != v))
        return 0;
    S->grad[mine] = v;
    return 1;
}

/* The segment's backward pass: walking the backward nodes in order, a node
 * belongs to it when it reads the segment's values or what such nodes
 * made (a graph output among those, a parameter's gradient, ends it: an
 * optimizer's update reads it), and otherwise only constants, parameters
 * and one gradient from outside: the gradient of the cut, which the first
 * such node (MaxPool's gradient) names. What the rest of the graph reads from it (its exits) must be
 * one gradient contribution per parameter: the parameter's gradient
 * output, or the term autodiff sums with the contributions of the
 * parameter's other readers. */
static int pfvm__rcs_find_backward(pfvm__rcs *S, const unsigned char *konst)
{
    int nn = (int)stbds_arrlen(S->g->nodes), i, j, q, ok = 1;
    pfvm_value **deps = NULL;
    S->seed = NULL;
    for (i = S->nf; i < nn; i++) {
        pfvm_value *other = NULL;
        int touch = 0, n_other = 0;
        if (!pfvm__node_deps(S->g->nodes[i], &deps)) { /* out of memory: not sliced */
            stbds_arrfree(deps);
            return 0;
        }
        for (j = 0; j < (int)stbds_arrlen(deps); j++) {
            pfvm_value *v = deps[j];
            const pfvm_node *p = v->graph == S->g ? v->producer : NULL;
            if (pfvm__rcs_in_segment(S, v) || (p && S->in_bwd[p->id] && !v->is_output))
                touch = 1;
            else if (v->graph == S->g && !konst[v->id] && v != S->cut && v != other && !pfvm__rcs_is_param(S, v) &&
                     !(p && S->in_bwd[p->id])) {
                other = v;
                n_other++;
            }
        }
        if (!touch || n_other > 1 || (n_other && S->seed && other != S->seed))
            continue;
        if (n_other && !S->seed) {
            if (other->producer && other->producer->id < S->nf)
                continue; /* a forward activation: not a gradient */
            S->seed = other;
        }
        S->in_bwd[i] = 1;
    }
    /* a node that only reshapes the gradient for the segment's use (Reshape(gy, [-1]) in MaxPool's) is
       part of it: the seed moves up to what it reads */
    while (S->seed && S->seed->producer && S->seed->producer->graph == S->g && S->seed->producer->id >= S->nf &&
           !pfvm__rcs_same_type(&S->seed->type, &S->cut->type)) {
        pfvm_node *p = S->seed->producer;
        pfvm_value *up = NULL;
        int n_up = 0, n_uses, k;
        for (j = 0; j < p->n_outputs && ok; j++) {
            const pfvm_use *u = p->outputs[j] ? pfvm_uses_of(&S->uses, p->outputs[j], &n_uses) : NULL;
            for (k = 0; u && k < n_uses && ok; k++)
                ok = !u[k].top || S->in_bwd[u[k].top->id];
        }
        if (!pfvm__node_deps(p, &deps)) { /* out of memory: not sliced */
            stbds_arrfree(deps);
            return 0;
        }
        for (j = 0; j < (int)stbds_arrlen(deps); j++)
            if (deps[j]->graph == S->g && !konst[deps[j]->id] && deps[j] != up) {
                up = deps[j];
                n_up++;
            }
        if (!ok || n_up != 1 || p->n_outputs != 1)
            break;
        S->in_bwd[p->id] = 1;
        S->seed = up;
    }
    /* exits: values of the segment's backward pass read outside it */
    for (q = 0; q < S->n_param; q++)
        S->grad[q] = NULL;
    for (i = S->nf; i < nn && ok; i++) {
        const pfvm_node *nd = S->g->nodes[i];
        if (!pfvm__node_deps(nd, &deps)) { /* out of memory: not sliced */
            stbds_arrfree(deps);
            return 0;
        }
        for (j = 0; j < (int)stbds_arrlen(deps) && ok; j++) {
            pfvm_value *v = deps[j];
            if (!S->in_bwd[i] && v->graph == S->g && v->producer && S->in_bwd[v->producer->id])
                ok = pfvm__rcs_claim(S, v);
        }
        for (j = 0; ok && S->in_bwd[i] && j < nd->n_outputs; j++)
            if (nd->outputs[j] && nd->outputs[j]->is_output)
                ok = pfvm__rcs_claim(S, nd->outputs[j]);
    }
    stbds_arrfree(deps);
    for (q = 0, i = 0; q < S->n_param; q++)
        i += S->grad[q] != NULL; /* a parameter without an exit (a bias summed from the seed alone) keeps its nodes */
    return ok && i > 0 && S->seed && pfvm__rcs_same_type(&S->seed->type, &S->cut->type);
}

/* Bytes of v under the binding, 0 when unknown. */
static double pfvm__rcs_bytes(const pfvm__rcs *S, const pfvm_value *v)
{
    const pfvm_sym *s = pfvm__symplan_bytes(S->g->model->syms, &v->type);
    int64_t x;
    return s && pfvm_sym_eval(s, S->b, &x) ? (double)x : 0;
}

/* Slices so that the segment's largest tensor, cut in K, is no larger
 * than its output: the slices then weigh what one layer does. */
static int pfvm__rcs_count(const pfvm__rcs *S)
{
    double big = 0, cut = pfvm__rcs_bytes(S, S->cut);
    int i, j, k;
    for (i = 0; i < S->n_chain; i++)
        for (j = 0; j < S->chain[i]->n_outputs; j++)
            if (S->chain[i]->outputs[j]) {
                double x = pfvm__rcs_bytes(S, S->chain[i]->outputs[j]);
                big = x > big ? x : big;
            }
    for (k = 2; k < S->channels && S->channels % (2 * k) == 0 && cut > 0 && big / k > cut; k *= 2)
        ;
    return S->channels % k == 0 ? k : 1;
}

static pfvm_value *pfvm__rcs_ints(pfvm__rcs *S, int64_t a, const char *hint)
{
    int64_t one = 1;
    pfvm_tensor *t = pfvm_model_tensor(S->g->model, PFVM_INT64, 1, &one, NULL, S->st);
    pfvm_value *v = t ? pfvm_graph_new_value(S->g, hint, S->st) : NULL;
    if (!v || pfvm_graph_add_init(S->g, v, t, S->st))
        return NULL;
    *(int64_t *)t->data = a;
    return v;
}

/* A node of the default domain; a NULL out[0] becomes a new value. */
static pfvm_node *pfvm__rcs_node(pfvm__rcs *S, const char *op, const char *name, pfvm_value **in, int n_in,
                                 pfvm_value **out, int n_out)
{
    if (!out[0] && !(out[0] = pfvm_graph_new_value(S->g, name, S->st)))
        return NULL;
    return pfvm_graph_add_node(S->g, op, "", name, in, n_in, out, n_out, S->st);
}

/* Slice(v, [a], [b], axes [axis]). */
static pfvm_value *pfvm__rcs_slice(pfvm__rcs *S, pfvm_value *v, int64_t a, int64_t b, int axis)
{
    pfvm_value *in[4], *out = NULL;
    char name[256];
    pfvm__snprintf(name, sizeof name, "%s_ch%lld_%lld", v->name, (long long)a, (long long)b);
    in[0] = v;
    in[1] = pfvm__rcs_ints(S, a, "slice_start");
    in[2] = pfvm__rcs_ints(S, b, "slice_end");
    in[3] = pfvm__rcs_ints(S, axis, "slice_axis");
    if (!in[1] || !in[2] || !in[3] || !pfvm__rcs_node(S, "Slice", name, in, 4, &out, 1))
        return NULL;
    return out;
}

/* One slice: the segment's forward copy for channels [a, b) and its
 * backward pass; grads[q] receives rows [a, b) of param q's gradient. */
static pfvm_code pfvm__rcs_one(pfvm__rcs *S, int64_t a, int64_t b, pfvm_value **grads, pfvm__rc_sliced *info)
{
    pfvm_value *prev = NULL, *wk[PFVM__RCS_MAX_PARAMS], *seed_k;
    const char *names[PFVM__RCS_MAX_PARAMS];
    pfvm_autodiff_opts o;
    pfvm_autodiff_result res;
    int i, j, n_wrt = 0;
    for (i = 0; i < S->n_param; i++) {
        if (!(wk[i] = pfvm__rcs_slice(S, S->param[i], a, b, 0)))
            return S->st->code;
        if (S->grad[i])
            names[n_wrt++] = wk[i]->name;
    }
    for (i = 0; i < S->n_chain; i++) {
        const pfvm_node *src = S->chain[i];
        pfvm_value *in[PFVM__RCS_MAX_PARAMS + 1], *out[PFVM__RCS_MAX_OUTPUTS] = {NULL};
        pfvm_node *c;
        char name[256];
        int n_out = src->n_outputs; /* at most PFVM__RCS_MAX_OUTPUTS (pfvm__rcs_find_chain) */
        for (j = 0; j < src->n_inputs && j <= PFVM__RCS_MAX_PARAMS; j++)
            in[j] = i ? (j ? src->inputs[j] : prev) : (j ? wk[j - 1] : src->inputs[0]);
        pfvm__snprintf(name, sizeof name, "%s_ch%lld_%lld", src->name && *src->name ? src->name : src->op_type,
                       (long long)a, (long long)b);
        for (j = 1; j < n_out; j++)
            if (!src->outputs[j])
                out[j] = NULL;
            else if (!(out[j] = pfvm_graph_new_value(S->g, name, S->st)))
                return S->st->code;
        if (!(c = pfvm__rcs_node(S, src->op_type, name, in, src->n_inputs, out, n_out)))
            return S->st->code;
        for (j = 0; j < src->n_attrs; j++) {
            pfvm_attr *at = pfvm_node_add_attr(c, src->attrs[j].name, src->attrs[j].type, S->st);
            if (!at)
                return S->st->code;
            *at = src->attrs[j];
        }
        c->doc = PFVM_RECOMPUTE_DOC;
        c->op = src->op;
        c->opset = src->opset;
        info->n_copies++;
        prev = c->outputs[0];
    }
    if (!(seed_k = pfvm__rcs_slice(S, S->seed, a, b, 1)) || pfvm_graph_resolve_ops(S->g, 0, S->st))
        return S->st->code;
    memset(&o, 0, sizeof o);
    o.ys = &prev;
    o.seeds = &seed_k;
    o.n_ys = 1;
    o.wrt = names;
    o.n_wrt = n_wrt;
    o.flags = PFVM_AUTODIFF_NO_OUTPUTS;
    if (pfvm_autodiff(S->g->model, S->g, &o, &res, S->st))
        return S->st->code;
    for (i = 0, j = 0; i < S->n_param; i++)
        grads[i] = S->grad[i] ? res.grads[j++] : NULL;
    return PFVM_OK;
}

/* Concat of the slices' rows, taking the place of the gradient output. */
static pfvm_code pfvm__rcs_join(pfvm__rcs *S, int q, pfvm_value **rows, int k)
{
    pfvm_value *out = NULL;
    pfvm_node *c;
    char name[256];
    pfvm__snprintf(name, sizeof name, "%s_sliced", S->grad[q]->name);
    if (!(c = pfvm__rcs_node(S, "Concat", name, rows, k, &out, 1)) || pfvm_node_set_attr_int(c, "axis", 0, S->st))
        return S->st->code;
    out->type = S->grad[q]->type; /* the rows' concatenation: inferred again at the end */
    return pfvm_graph_replace_uses(S->g, S->grad[q], out, S->st);
}

/* After the old backward nodes are gone, what only they read goes too:
 * initializers and nodes (autodiff's Constant and shape nodes) among
 * `cands`, the values they read, whose outputs nothing reads any more;
 * then what those read, and so on (backward nodes only: the forward pass
 * keeps its n_forward nodes). */
static pfvm_code pfvm__rcs_drop_unread(pfvm_graph *g, int n_forward, pfvm_value ***cands, pfvm_status *st)
{
    pfvm_code rc = PFVM_OK;
    int changed = 1;
    while (changed && !rc) {
        pfvm_uses u;
        pfvm_value **dead = NULL;
        pfvm_node **dead_nodes = NULL;
        int i, j, k;
        changed = 0;
        if ((rc = pfvm_uses_build(&u, g, st)) != PFVM_OK)
            break;
        for (i = 0; i < (int)stbds_arrlen(*cands); i++) {
            pfvm_value *v = (*cands)[i];
            pfvm_node *p = v ? v->producer : NULL;
            int unread = 1;
            if (!v || v->is_output || v->is_input || v->graph != g || (p && p->id < n_forward))
                continue;
            if (!p) {
                for (j = 0; j < (int)stbds_arrlen(dead) && dead[j] != v; j++)
                    ;
                if (j == (int)stbds_arrlen(dead) && v->init && pfvm_uses_count(&u, v) == 0 && !pfvm__arrpush(dead, v))
                    rc = PFVM_ERR_NOMEM;
                continue;
            }
            for (j = 0; j < p->n_outputs && unread; j++)
                unread = !p->outputs[j] || (!p->outputs[j]->is_output && pfvm_uses_count(&u, p->outputs[j]) == 0);
            for (j = 0; j < (int)stbds_arrlen(dead_nodes) && dead_nodes[j] != p; j++)
                ;
            if (unread && j == (int)stbds_arrlen(dead_nodes) && !pfvm__arrpush(dead_nodes, p))
                rc = PFVM_ERR_NOMEM;
        }
        pfvm_uses_free(&u);
        for (i = 0; i < (int)stbds_arrlen(dead_nodes); i++)
            for (k = 0; k < dead_nodes[i]->n_inputs; k++)
                if (dead_nodes[i]->inputs[k] && !pfvm__arrpush(*cands, dead_nodes[i]->inputs[k]))
                    rc = PFVM_ERR_NOMEM;
        for (i = 0; i < (int)stbds_arrlen(*cands); i++) {
            pfvm_value *v = (*cands)[i];
            for (j = 0; v && j < (int)stbds_arrlen(dead_nodes); j++)
                for (k = 0; k < dead_nodes[j]->n_outputs; k++)
                    if (dead_nodes[j]->outputs[k] == v)
                        (*cands)[i] = NULL;
            for (j = 0; v && j < (int)stbds_arrlen(dead); j++)
                if (dead[j] == v)
                    (*cands)[i] = NULL;
        }
        if (rc)
            rc = pfvm__fail(st, PFVM_ERR_NOMEM, "recompute: out of memory");
        changed = !rc && (stbds_arrlen(dead) || stbds_arrlen(dead_nodes));
        if (!rc && stbds_arrlen(dead_nodes))
            rc = pfvm_graph_remove_nodes(g, dead_nodes, (int)stbds_arrlen(dead_nodes), st);
        if (!rc && stbds_arrlen(dead))
            rc = pfvm_graph_remove_values(g, dead, (int)stbds_arrlen(dead), st);
        stbds_arrfree(dead);
        stbds_arrfree(dead_nodes);
    }
    return rc;
}

pfvm_code pfvm__rc_slice_input(pfvm_graph *g, int n_forward, const pfvm_binding *b, const pfvm_node *peak_at,
                               pfvm__rc_sliced *info, pfvm_status *st)
{
    pfvm__rcs S;
    unsigned char *konst = NULL;
    pfvm_value **rows = NULL;
    pfvm_node **old = NULL;
    pfvm_value **consts = NULL;
    pfvm_code rc = PFVM_OK;
    int nn = (int)stbds_arrlen(g->nodes), k, q, i, n0;
    memset(info, 0, sizeof *info);
    memset(&S, 0, sizeof S);
    S.g = g;
    S.b = b;
    S.st = st;
    S.nf = n_forward;
    if ((rc = pfvm_uses_build(&S.uses, g, st)) != PFVM_OK)
        return rc;
    if (!pfvm__rcs_find_chain(&S))
        goto done;
    S.in_bwd = (unsigned char *)pfvm__calloc((size_t)nn + 1, 1);
    konst = pfvm__symplan_constants(g);
    if (!S.in_bwd || !konst) {
        rc = pfvm__fail(st, PFVM_ERR_NOMEM, "recompute: out of memory");
        goto done;
    }
    if (!pfvm__rcs_find_backward(&S, konst) || !peak_at || peak_at->graph != g || !S.in_bwd[peak_at->id] ||
        (info->slices = pfvm__rcs_count(&S)) < 2) {
        info->slices = 0;
        goto done;
    }
    for (i = n_forward; i < nn; i++)
        if (S.in_bwd[i] && !pfvm__arrpush(old, g->nodes[i]))
            rc = PFVM_ERR_NOMEM;
    if (rc || !pfvm__arrsetlen(rows, (size_t)info->slices * (size_t)S.n_param)) {
        rc = pfvm__fail(st, PFVM_ERR_NOMEM, "recompute: out of memory");
        goto done;
    }
    n0 = nn;
    for (k = 0; k < info->slices && !rc; k++) {
        pfvm_value *gr[PFVM__RCS_MAX_PARAMS];
        int64_t a = S.channels * k / info->slices, e = S.channels * (k + 1) / info->slices;
        if (!(rc = pfvm__rcs_one(&S, a, e, gr, info)))
            for (q = 0; q < S.n_param; q++)
                rows[q * info->slices + k] = gr[q];
    }
    for (q = 0; q < S.n_param && !rc; q++)
        if (S.grad[q])
            rc = pfvm__rcs_join(&S, q, rows + q * info->slices, info->slices);
    if (rc)
        goto done;
    for (i = n0; i < (int)stbds_arrlen(g->nodes); i++) {
        double f = pfvm_node_is_recompute(g->nodes[i]) ? pfvm_node_flops(g->nodes[i], b) : 0;
        info->extra_flops += f > 0 ? f : 0;
    }
    info->n_removed = (int)stbds_arrlen(old);
    for (i = 0; i < (int)stbds_arrlen(old); i++)
        for (k = 0; k < old[i]->n_inputs; k++)
            if (old[i]->inputs[k] && old[i]->inputs[k]->graph == g &&
                (!old[i]->inputs[k]->producer || old[i]->inputs[k]->producer->id >= n_forward) &&
                !pfvm__arrpush(consts, old[i]->inputs[k]))
                rc = pfvm__fail(st, PFVM_ERR_NOMEM, "recompute: out of memory");
    if (rc || (rc = pfvm_graph_resolve_ops(g, 0, st)) != PFVM_OK ||
        (rc = pfvm_graph_remove_nodes(g, old, (int)stbds_arrlen(old), st)) != PFVM_OK ||
        (rc = pfvm__rcs_drop_unread(g, n_forward, &consts, st)) != PFVM_OK || (rc = pfvm_graph_toposort(g, st)) != PFVM_OK)
        goto done;
    rc = pfvm_infer_shapes(g, 0, st);
done:
    pfvm_uses_free(&S.uses);
    stbds_arrfree(consts);
    stbds_arrfree(rows);
    stbds_arrfree(old);
    pfvm__free(konst);
    pfvm__free(S.in_bwd);
    return rc;
}
