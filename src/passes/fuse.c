/* passes/fuse: groups element-wise and broadcast nodes into fused loops.
 *
 * A node may join a group when its operator's fuse hook accepts it (the
 * registry decides: see src/ops/fused.h) and its output has the group's
 * shape, proven from the symbolic shapes: every value computed inside a
 * group has one shape S, and every input from outside broadcasts to S
 * (each of its dims is 1 or proven equal to S's dim), dynamic dims
 * included. Nodes are visited in topological order; each joins the groups
 * of its producers that have its shape, as long as the merged group stays
 * acyclic (no path leaves the group and comes back). A group of two or
 * more nodes becomes one node of domain `pfvm` (FusedElementwise_N) that
 * calls a model-local function holding the nodes, so the saved model is
 * plain ONNX; the executor runs the call with the fused-loop engine. The
 * values inside a group are never materialised. */
#include "passes.h"
#include "../ops/fused.h"

#include <string.h>

typedef struct pfvm__fuse_state {
    pfvm_graph *g;
    int n;
    unsigned char *cand;   /* per node: may join a group */
    unsigned char *red;    /* per node: a reduction (its outputs cannot be read in its group) */
    unsigned *used;        /* per node: inputs read element by element */
    const pfvm_shape **shape; /* per node: the shape its group walks */
    int *group;            /* per node: group id or -1 */
    int **members;         /* stb_ds per group: node indices, ascending */
    int *visit;            /* per node: search stamp */
    int stamp;
    unsigned char *in_u;   /* per node: in the set being checked */
    int oom;               /* a list could not grow: the pass fails */
} pfvm__fuse_state;

static int pfvm__fuse_same_shape(const pfvm_shape *a, const pfvm_shape *b)
{
    int d;
    if (a->rank < 0 || a->rank != b->rank)
        return 0;
    for (d = 0; d < a->rank; d++)
        if (!pfvm_sym_proven_eq(a->dims[d], b->dims[d]))
            return 0;
    return 1;
}

/* Proven: a value of shape `in` broadcasts to `s` (dims 1 or equal). */
static int pfvm__fuse_broadcasts(const pfvm_shape *in, const pfvm_shape *s)
{
    int d, off;
    int64_t v;
    if (in->rank < 0 || s->rank < 0 || in->rank > s->rank)
        return 0;
    off = s->rank - in->rank;
    for (d = 0; d < in->rank; d++)
        if (!(pfvm_sym_is_const(in->dims[d], &v) && v == 1) && !pfvm_sym_proven_eq(in->dims[d], s->dims[off + d]))
            return 0;
    return 1;
}

static int pfvm__fuse_has_subgraph(const pfvm_node *n)
{
    int j;
    for (j = 0; j < n->n_attrs; j++)
        if (n->attrs[j].type == PFVM_ATTR_GRAPH || n->attrs[j].type == PFVM_ATTR_GRAPHS)
            return 1;
    return 0;
}

/* May node i be part of a group? Its hook accepts it for its input types
 * (and the contents of constant inputs), and it has one shape to walk: its
 * outputs' (all equal), or for a reduction its input's. */
static int pfvm__fuse_candidate(pfvm__fuse_state *s, int i)
{
    const pfvm_node *n = s->g->nodes[i];
    pfvm_dtype dt[16];
    const pfvm_tensor *cs[16];
    pfvm_fuse_info info;
    int j;
    if (!n->op || !n->op->fuse || n->n_inputs > 16 || n->n_outputs < 1 || pfvm__fuse_has_subgraph(n))
        return 0;
    for (j = 0; j < n->n_outputs; j++) {
        const pfvm_value *v = n->outputs[j];
        if (!v || v->type.kind != PFVM_KIND_TENSOR || v->type.shape.rank < 0)
            return 0;
    }
    for (j = 0; j < n->n_inputs; j++) {
        const pfvm_value *v = n->inputs[j];
        dt[j] = PFVM_UNDEFINED;
        cs[j] = NULL;
        if (!v)
            continue;
        if (v->type.kind != PFVM_KIND_TENSOR || v->type.dtype == PFVM_UNDEFINED || v->type.shape.rank < 0)
            return 0;
        dt[j] = v->type.dtype;
        cs[j] = v->init;
    }
    if (!pfvm_fuse_accepts(n, dt, cs, &info))
        return 0;
    s->red[i] = (unsigned char)info.reduction;
    s->used[i] = info.used;
    if (info.reduction) {
        if (info.iter_input < 0 || info.iter_input >= n->n_inputs || !n->inputs[info.iter_input])
            return 0;
        s->shape[i] = &n->inputs[info.iter_input]->type.shape;
        return 1;
    }
    s->shape[i] = &n->outputs[0]->type.shape;
    for (j = 1; j < n->n_outputs; j++)
        if (!pfvm__fuse_same_shape(&n->outputs[j]->type.shape, s->shape[i]))
            return 0;
    return 1;
}

/* The node of g producing v, or -1 (inputs, initializers, outer values). */
static int pfvm__fuse_producer(const pfvm__fuse_state *s, const pfvm_value *v)
{
    /* nodes added since the analysis (calls of groups built) are outside */
    if (!v || !v->producer || v->producer->graph != s->g || v->producer->id < 0 || v->producer->id >= s->n ||
        s->g->nodes[v->producer->id] != v->producer)
        return -1;
    return v->producer->id;
}

/* Does node q depend on a node marked in_u? Searches producers backwards,
 * not below `lo` (nothing there depends on the set). */
static int pfvm__fuse_reaches(pfvm__fuse_state *s, int q, int lo, int **stack)
{
    pfvm_value **deps = NULL;
    int found = 0, j;
    pfvm__arrtrunc(*stack, 0);
    if (!pfvm__arrpush(*stack, q)) {
        s->oom = 1;
        return 1; /* "reaches": nothing merges */
    }
    s->visit[q] = s->stamp;
    while (!found && stbds_arrlen(*stack)) {
        int x = stbds_arrpop(*stack);
        if (!pfvm__node_deps(s->g->nodes[x], &deps)) {
            s->oom = found = 1;
            break;
        }
        for (j = 0; j < (int)stbds_arrlen(deps); j++) {
            int p = pfvm__fuse_producer(s, deps[j]);
            if (p < lo || s->visit[p] == s->stamp)
                continue;
            if (s->in_u[p]) {
                found = 1;
                break;
            }
            s->visit[p] = s->stamp;
            if (!pfvm__arrpush(*stack, p)) {
                s->oom = found = 1;
                break;
            }
        }
    }
    stbds_arrfree(deps);
    return found;
}

/* Can node i join the union of groups gs[0..ng)? Its inputs from outside
 * must broadcast to its shape, and the union must stay acyclic. */
static int pfvm__fuse_can_merge(pfvm__fuse_state *s, int i, const int *gs, int ng)
{
    const pfvm_node *n = s->g->nodes[i];
    const pfvm_shape *S = s->shape[i];
    int *stack = NULL, k, m, j, lo = i, ok = 1;
    s->in_u[i] = 1;
    for (k = 0; k < ng; k++)
        for (m = 0; m < (int)stbds_arrlen(s->members[gs[k]]); m++) {
            int x = s->members[gs[k]][m];
            s->in_u[x] = 1;
            if (x < lo)
                lo = x;
        }
    for (j = 0; ok && j < n->n_inputs; j++) {
        int p = pfvm__fuse_producer(s, n->inputs[j]);
        int used = j >= 32 || (s->used[i] & (1u << j));
        if (n->inputs[j] && used && (p < 0 || !s->in_u[p]) && !pfvm__fuse_broadcasts(&n->inputs[j]->type.shape, S))
            ok = 0;
        /* a reduction's result exists only once the group has run */
        if (n->inputs[j] && p >= 0 && s->in_u[p] && s->red[p])
            ok = 0;
    }
    /* acyclic: no input from outside depends on the union */
    s->stamp++;
    for (k = -1; ok && k < ng; k++) {
        int cnt = k < 0 ? 1 : (int)stbds_arrlen(s->members[gs[k]]);
        for (m = 0; ok && m < cnt; m++) {
            const pfvm_node *x = s->g->nodes[k < 0 ? i : s->members[gs[k]][m]];
            for (j = 0; ok && j < x->n_inputs; j++) {
                int p = pfvm__fuse_producer(s, x->inputs[j]);
                if (p < 0 || s->in_u[p] || p < lo || s->visit[p] == s->stamp)
                    continue;
                if (pfvm__fuse_reaches(s, p, lo, &stack))
                    ok = 0;
            }
        }
    }
    s->in_u[i] = 0;
    for (k = 0; k < ng; k++)
        for (m = 0; m < (int)stbds_arrlen(s->members[gs[k]]); m++)
            s->in_u[s->members[gs[k]][m]] = 0;
    stbds_arrfree(stack);
    return ok;
}

static int pfvm__fuse_cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return x < y ? -1 : x > y;
}

/* Puts node i in a group: with every producer group of its shape when
 * that is valid, else with the largest one that is, else alone (when its
 * own inputs broadcast to its shape). */
static pfvm_code pfvm__fuse_place(pfvm__fuse_state *s, int i, pfvm_status *st)
{
    const pfvm_node *n = s->g->nodes[i];
    const pfvm_shape *S = s->shape[i];
    int gs[64], ng = 0, j, k, target = -1;
    for (j = 0; j < n->n_inputs && ng < 64; j++) {
        int p = pfvm__fuse_producer(s, n->inputs[j]), gp, dup = 0;
        if (p < 0 || (gp = s->group[p]) < 0 || s->red[p])
            continue;
        if (!pfvm__fuse_same_shape(s->shape[s->members[gp][0]], S))
            continue;
        for (k = 0; k < ng; k++)
            dup |= gs[k] == gp;
        if (!dup)
            gs[ng++] = gp;
    }
    if (ng && pfvm__fuse_can_merge(s, i, gs, ng)) {
        target = gs[0];
        for (k = 1; k < ng; k++) {
            int m;
            for (m = 0; m < (int)stbds_arrlen(s->members[gs[k]]); m++) {
                int x = s->members[gs[k]][m];
                if (!pfvm__arrpush(s->members[target], x))
                    return pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
                s->group[x] = target;
            }
            stbds_arrfree(s->members[gs[k]]);
            s->members[gs[k]] = NULL;
        }
        qsort(s->members[target], (size_t)stbds_arrlen(s->members[target]), sizeof(int), pfvm__fuse_cmp_int);
    } else {
        int best = -1;
        for (k = 0; k < ng; k++)
            if ((best < 0 || stbds_arrlen(s->members[gs[k]]) > stbds_arrlen(s->members[gs[best]])) &&
                pfvm__fuse_can_merge(s, i, &gs[k], 1))
                best = k;
        if (best >= 0)
            target = gs[best];
        else if (pfvm__fuse_can_merge(s, i, NULL, 0)) {
            target = (int)stbds_arrlen(s->members);
            if (!pfvm__arrpush(s->members, NULL))
                return pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
        } else
            return PFVM_OK;
    }
    if (!pfvm__arrpush(s->members[target], i))
        return pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
    s->group[i] = target;
    return PFVM_OK;
}

/* ---- heads: out-fusable producers ------------------------------------------------------- */

/* Does some member of group m (not a reduction) make a float32 value of
 * the group's shape that is read outside it? (The head computes into that
 * output's storage.) */
static int pfvm__fuse_has_buffer(pfvm__fuse_state *s, const pfvm_uses *u, const int *mem, int cnt)
{
    int i, j, k, found = 0;
    for (i = 0; i < cnt; i++)
        s->in_u[mem[i]] = 1;
    for (i = 0; !found && i < cnt; i++) {
        const pfvm_node *n = s->g->nodes[mem[i]];
        if (s->red[mem[i]])
            continue;
        for (j = 0; !found && j < n->n_outputs; j++) {
            const pfvm_value *v = n->outputs[j];
            const pfvm_use *us;
            int cu;
            if (!v || v->type.dtype != PFVM_FLOAT)
                continue;
            us = pfvm_uses_of(u, v, &cu);
            for (k = 0; k < cu; k++)
                found |= !us[k].top || !s->in_u[us[k].top->id];
        }
    }
    for (i = 0; i < cnt; i++)
        s->in_u[mem[i]] = 0;
    return found;
}

/* A Conv, Gemm or MatMul (fusion kind out-fusable) whose float32 result of
 * the group's shape is read only by the group joins it: its kernel runs
 * first, into the storage of one of the group's outputs, and the group's
 * loop reads it from there (bias, activation and residual epilogues). One
 * per group. */
static void pfvm__fuse_heads(pfvm__fuse_state *s, const pfvm_uses *u)
{
    int gi, i, j, k, *stack = NULL;
    for (gi = 0; gi < (int)stbds_arrlen(s->members); gi++) {
        int *mem = s->members[gi], cnt = (int)stbds_arrlen(mem), done = 0;
        const pfvm_shape *S;
        if (!cnt || !pfvm__fuse_has_buffer(s, u, mem, cnt))
            continue;
        S = s->shape[mem[0]];
        for (i = 0; i < cnt && !done; i++) {
            const pfvm_node *x = s->g->nodes[mem[i]];
            for (j = 0; j < x->n_inputs && j < 32 && !done; j++) {
                const pfvm_value *v = x->inputs[j];
                const pfvm_node *h;
                const pfvm_use *us;
                int hp = pfvm__fuse_producer(s, v), cu, only = 1, lo = mem[0], ok = 1;
                if (!v || !(s->used[mem[i]] & (1u << j)) || hp < 0 || s->group[hp] >= 0)
                    continue;
                h = s->g->nodes[hp];
                if (!h->op || h->op->fuse || h->op->fusion != PFVM_FUSE_OUT_FUSABLE || !h->op->kernel ||
                    h->n_outputs != 1 || pfvm__fuse_has_subgraph(h) || v->type.kind != PFVM_KIND_TENSOR ||
                    v->type.dtype != PFVM_FLOAT || !pfvm__fuse_same_shape(&v->type.shape, S) || h->n_inputs > 16)
                    continue;
                for (k = 0; k < cnt; k++)
                    s->in_u[mem[k]] = 1;
                us = pfvm_uses_of(u, v, &cu);
                for (k = 0; k < cu; k++)
                    only &= us[k].node && us[k].top == us[k].node && s->in_u[us[k].top->id];
                /* nothing the head reads may depend on the group */
                s->stamp++;
                for (k = 0; ok && only && k < h->n_inputs; k++) {
                    int q = pfvm__fuse_producer(s, h->inputs[k]);
                    if (q < 0 || q < lo)
                        continue;
                    if (s->in_u[q] || pfvm__fuse_reaches(s, q, lo, &stack))
                        ok = 0;
                }
                for (k = 0; k < cnt; k++)
                    s->in_u[mem[k]] = 0;
                if (!only || !ok)
                    continue;
                if (!pfvm__arrpush(s->members[gi], hp)) {
                    s->oom = 1;
                    return;
                }
                s->group[hp] = gi;
                mem = s->members[gi];
                qsort(mem, (size_t)stbds_arrlen(mem), sizeof(int), pfvm__fuse_cmp_int);
                done = 1;
            }
        }
    }
    stbds_arrfree(stack);
}

/* ---- tails: in-place row operators -------------------------------------------------------- */

/* A Softmax-like node (PFVM_OP_IN_PLACE, one input, one output) that alone
 * reads a float32 value of a group's shape joins the group: the group
 * stores that value into the node's output, where its kernel then runs in
 * place (an attention's scale and mask before Softmax). One per group. */
static void pfvm__fuse_tails(pfvm__fuse_state *s, const pfvm_uses *u)
{
    int gi, i, j, k;
    for (gi = 0; gi < (int)stbds_arrlen(s->members); gi++) {
        int *mem = s->members[gi], cnt = (int)stbds_arrlen(mem), done = 0;
        const pfvm_shape *S;
        if (!cnt)
            continue;
        S = NULL;
        for (k = 0; k < cnt; k++) {
            s->in_u[mem[k]] = 1;
            if (!S)
                S = s->shape[mem[k]]; /* (a head has none) */
        }
        for (i = 0; i < cnt && !done; i++) {
            const pfvm_node *x = s->g->nodes[mem[i]];
            if (s->red[mem[i]] || !s->shape[mem[i]])
                continue;
            for (j = 0; j < x->n_outputs && !done; j++) {
                const pfvm_value *v = x->outputs[j], *y;
                const pfvm_use *us;
                const pfvm_node *t;
                int cu, ti, inside = 0;
                if (!v || v->type.dtype != PFVM_FLOAT || !S)
                    continue;
                us = pfvm_uses_of(u, v, &cu);
                if (cu != 1 || !us[0].node || us[0].top != us[0].node || us[0].index != 0)
                    continue;
                t = us[0].node;
                ti = t->id;
                if (ti < 0 || ti >= s->n || s->group[ti] >= 0 || !t->op || t->op->fuse || !t->op->kernel ||
                    !(t->op->flags & PFVM_OP_IN_PLACE) || t->n_inputs != 1 || t->n_outputs != 1 || !(y = t->outputs[0]) ||
                    pfvm__fuse_has_subgraph(t) || y->type.kind != PFVM_KIND_TENSOR || y->type.dtype != PFVM_FLOAT ||
                    !pfvm__fuse_same_shape(&y->type.shape, S) || !pfvm__fuse_same_shape(&v->type.shape, S))
                    continue;
                /* its result is read outside the group only */
                us = pfvm_uses_of(u, y, &cu);
                for (k = 0; k < cu; k++)
                    inside |= us[k].top && s->in_u[us[k].top->id];
                if (inside)
                    continue;
                if (!pfvm__arrpush(s->members[gi], ti)) {
                    s->oom = 1;
                    return;
                }
                s->group[ti] = gi;
                s->in_u[ti] = 1;
                done = 1;
            }
        }
        mem = s->members[gi];
        cnt = (int)stbds_arrlen(mem);
        qsort(mem, (size_t)cnt, sizeof(int), pfvm__fuse_cmp_int);
        for (k = 0; k < cnt; k++)
            s->in_u[mem[k]] = 0;
    }
}

/* ---- turning a group into a function call ------------------------------------------ */

static int pfvm__fuse_value_bytes(const pfvm_value *v, int64_t *bytes)
{
    int64_t n = 1, d;
    int i;
    if (v->type.kind != PFVM_KIND_TENSOR || v->type.shape.rank < 0 || !pfvm_dtype_size(v->type.dtype))
        return 0;
    for (i = 0; i < v->type.shape.rank; i++)
        if (!pfvm_sym_is_const(v->type.shape.dims[i], &d) || !pfvm__mul_i64(n, d, &n))
            return 0;
    return pfvm__mul_i64(n, (int64_t)pfvm_dtype_size(v->type.dtype), bytes);
}

static pfvm_code pfvm__fuse_nomem(pfvm_status *st)
{
    return pfvm__fail(st, PFVM_ERR_NOMEM, "fuse: out of memory");
}

/* A function name no function of domain pfvm has. */
static const char *pfvm__fuse_name(pfvm_model *m, char *buf, size_t size)
{
    int k = (int)stbds_arrlen(m->functions) + 1;
    do
        pfvm__snprintf(buf, size, "FusedElementwise_%d", k++);
    while (pfvm_model_function(m, "pfvm", buf));
    return buf;
}

/* The opset imports of the body: the model's, but pfvm's own. */
static pfvm_code pfvm__fuse_opsets(pfvm_model *m, pfvm_function *f, pfvm_status *st)
{
    int i, n = (int)stbds_arrlen(m->opsets);
    f->opsets = (pfvm_opset_import *)pfvm_model_alloc(m, sizeof *f->opsets * (size_t)(n + 1));
    if (!f->opsets)
        return pfvm__fuse_nomem(st);
    f->n_opsets = 0;
    for (i = 0; i < n; i++)
        if (strcmp(m->opsets[i].domain ? m->opsets[i].domain : "", "pfvm"))
            f->opsets[f->n_opsets++] = m->opsets[i];
    return PFVM_OK;
}

/* Builds the function for group `mem` and the node calling it; the
 * group's nodes are appended to `dead`. */
static pfvm_code pfvm__fuse_build(pfvm__fuse_state *s, pfvm_model *m, const pfvm_uses *u, const int *mem, int cnt,
                                  pfvm_node ***dead, pfvm_pass_stats *stats, pfvm_status *st)
{
    pfvm_graph *g = s->g;
    pfvm_value **ext = NULL, **outs = NULL, **call_outs = NULL;
    pfvm_function *f;
    pfvm_graph *body;
    pfvm_node *call;
    char name[64];
    int i, j, k;
    pfvm_code rc = PFVM_OK;
    int64_t avoided = 0;
    for (i = 0; i < cnt; i++)
        s->in_u[mem[i]] = 1;
    /* inputs from outside, in order of first use; outputs read outside */
    for (i = 0; i < cnt; i++) {
        const pfvm_node *n = g->nodes[mem[i]];
        for (j = 0; j < n->n_inputs; j++) {
            pfvm_value *v = n->inputs[j];
            int p = pfvm__fuse_producer(s, v), dup = 0;
            if (!v || (p >= 0 && s->in_u[p]))
                continue;
            for (k = 0; k < (int)stbds_arrlen(ext); k++)
                dup |= ext[k] == v;
            if (!dup && !pfvm__arrpush(ext, v))
                rc = PFVM_ERR_NOMEM;
        }
        for (j = 0; j < n->n_outputs; j++) {
            pfvm_value *v = n->outputs[j];
            int cu, outside = 0;
            const pfvm_use *us;
            int64_t b;
            if (!v)
                continue;
            us = pfvm_uses_of(u, v, &cu);
            for (k = 0; k < cu; k++)
                outside |= !us[k].top || !s->in_u[us[k].top->id];
            if (outside) {
                if (!pfvm__arrpush(outs, v))
                    rc = PFVM_ERR_NOMEM;
            } else if (pfvm__fuse_value_bytes(v, &b))
                avoided += b;
        }
    }
    for (i = 0; i < cnt; i++)
        s->in_u[mem[i]] = 0;
    if (rc || !pfvm__arrreserve(*dead, (size_t)stbds_arrlen(*dead) + (size_t)cnt)) {
        rc = pfvm__fuse_nomem(st);
        goto done;
    }
    if (!stbds_arrlen(outs))
        goto done; /* dead code: left to dce */
    f = (pfvm_function *)pfvm_model_alloc(m, sizeof *f);
    if (!f) {
        rc = pfvm__fuse_nomem(st);
        goto done;
    }
    memset(f, 0, sizeof *f);
    pfvm__fuse_name(m, name, sizeof name);
    f->name = pfvm_model_strdup(m, name);
    f->domain = pfvm_model_strdup(m, "pfvm");
    f->doc = pfvm_model_strdup(m, "fused element-wise loop (pfvm)");
    if (!f->name || !f->domain || !f->doc || (rc = pfvm__fuse_opsets(m, f, st)) != PFVM_OK ||
        !(body = pfvm_graph_new(m, NULL, name, st))) {
        rc = rc ? rc : st ? st->code : PFVM_ERR_NOMEM;
        goto done;
    }
    f->body = body;
    if (!pfvm__arrpush(m->functions, f)) {
        rc = pfvm__fuse_nomem(st);
        goto done;
    }
    /* the body: formal inputs, copies of the nodes, formal outputs */
    for (i = 0; !rc && i < (int)stbds_arrlen(ext); i++) {
        pfvm_value *v = pfvm_graph_value(body, ext[i]->name, st);
        if (!v || pfvm_graph_add_input(body, v, st))
            rc = st ? st->code : PFVM_ERR_NOMEM;
        else
            v->type = ext[i]->type;
    }
    for (i = 0; !rc && i < cnt; i++) {
        const pfvm_node *n = g->nodes[mem[i]];
        pfvm_value *bin[16], *bout[PFVM_FUSE_MAX_SRC + 8];
        pfvm_node *bn;
        if (n->n_inputs > 16 || n->n_outputs > PFVM_FUSE_MAX_SRC + 8) {
            rc = pfvm__fail(st, PFVM_ERR_INVALID, "fuse: too many inputs");
            break;
        }
        for (j = 0; j < n->n_inputs; j++)
            bin[j] = n->inputs[j] ? pfvm_graph_find_local(body, n->inputs[j]->name) : NULL;
        for (j = 0; j < n->n_outputs && !rc; j++) {
            bout[j] = NULL;
            if (!n->outputs[j])
                continue;
            if (!(bout[j] = pfvm_graph_value(body, n->outputs[j]->name, st)))
                rc = st ? st->code : PFVM_ERR_NOMEM;
            else
                bout[j]->type = n->outputs[j]->type;
        }
        if (rc || !(bn = pfvm_graph_add_node(body, n->op_type, n->domain, n->name, bin, n->n_inputs, bout,
                                              n->n_outputs, st))) {
            rc = rc ? rc : st ? st->code : PFVM_ERR_NOMEM;
            break;
        }
        bn->op = n->op;
        bn->opset = n->opset;
        bn->doc = n->doc;
        for (j = 0; j < n->n_attrs; j++) {
            pfvm_attr *a = pfvm_node_add_attr(bn, n->attrs[j].name, n->attrs[j].type, st);
            if (!a) {
                rc = st ? st->code : PFVM_ERR_NOMEM;
                break;
            }
            *a = n->attrs[j];
        }
    }
    for (i = 0; !rc && i < (int)stbds_arrlen(outs); i++)
        if (pfvm_graph_add_output(body, pfvm_graph_find_local(body, outs[i]->name), st))
            rc = st ? st->code : PFVM_ERR_NOMEM;
    /* the call, reading the outside values and making new ones */
    for (i = 0; !rc && i < (int)stbds_arrlen(outs); i++) {
        pfvm_value *v = pfvm_graph_new_value(g, outs[i]->name, st);
        if (!v) {
            rc = st ? st->code : PFVM_ERR_NOMEM;
            break;
        }
        v->type = outs[i]->type;
        if (!pfvm__arrpush(call_outs, v))
            rc = pfvm__fuse_nomem(st);
    }
    if (!rc && !(call = pfvm_graph_add_node(g, name, "pfvm", name, ext, (int)stbds_arrlen(ext), call_outs,
                                            (int)stbds_arrlen(call_outs), st)))
        rc = st ? st->code : PFVM_ERR_NOMEM;
    for (i = 0; !rc && i < (int)stbds_arrlen(outs); i++)
        rc = pfvm_graph_replace_uses(g, outs[i], call_outs[i], st);
    if (!rc) {
        for (i = 0; i < cnt; i++)
            stbds_arrput(*dead, g->nodes[mem[i]]); /* reserved above */
        stats->groups++;
        stats->removed += cnt;
        stats->bytes_avoided += avoided;
    }
done:
    stbds_arrfree(ext);
    stbds_arrfree(outs);
    stbds_arrfree(call_outs);
    return rc;
}

PFVM_INTERNAL pfvm_code pfvm__pass_fuse(pfvm_model *m, pfvm_graph *g, pfvm_pass_stats *stats, pfvm_status *st)
{
    pfvm__fuse_state s;
    pfvm_uses u;
    pfvm_node **dead = NULL;
    int i, n, built = 0;
    pfvm_code rc;
    memset(&s, 0, sizeof s);
    memset(&u, 0, sizeof u);
    if ((rc = pfvm_graph_toposort(g, st)) != PFVM_OK || (rc = pfvm_graph_resolve_ops(g, 0, st)) != PFVM_OK)
        return rc;
    n = (int)stbds_arrlen(g->nodes);
    s.g = g;
    s.n = n;
    s.cand = (unsigned char *)pfvm__calloc((size_t)n + 1, 1);
    s.red = (unsigned char *)pfvm__calloc((size_t)n + 1, 1);
    s.used = (unsigned *)pfvm__calloc((size_t)n + 1, sizeof *s.used);
    s.shape = (const pfvm_shape **)pfvm__calloc((size_t)n + 1, sizeof *s.shape);
    s.group = (int *)pfvm__calloc((size_t)n + 1, sizeof *s.group);
    s.visit = (int *)pfvm__calloc((size_t)n + 1, sizeof *s.visit);
    s.in_u = (unsigned char *)pfvm__calloc((size_t)n + 1, 1);
    if (!s.cand || !s.red || !s.used || !s.shape || !s.group || !s.visit || !s.in_u) {
        rc = pfvm__fuse_nomem(st);
        goto done;
    }
    for (i = 0; i < n; i++) {
        s.group[i] = -1;
        s.cand[i] = (unsigned char)pfvm__fuse_candidate(&s, i);
    }
    for (i = 0; i < n && !rc; i++)
        if (s.cand[i])
            rc = pfvm__fuse_place(&s, i, st);
    if (rc || (rc = pfvm_uses_build(&u, g, st)) != PFVM_OK)
        goto done;
    pfvm__fuse_heads(&s, &u);
    if (!s.oom)
        pfvm__fuse_tails(&s, &u);
    if (s.oom) {
        rc = pfvm__fuse_nomem(st);
        goto done;
    }
    for (i = 0; !rc && i < (int)stbds_arrlen(s.members); i++)
        if (stbds_arrlen(s.members[i]) >= 2) {
            rc = pfvm__fuse_build(&s, m, &u, s.members[i], (int)stbds_arrlen(s.members[i]), &dead, stats, st);
            built = 1;
        }
    if (!rc && stbds_arrlen(dead))
        rc = pfvm_graph_remove_nodes(g, dead, (int)stbds_arrlen(dead), st);
    if (!rc && stats->groups) {
        rc = pfvm_model_set_opset(m, "pfvm", 1, st);
        if (m->ir_version < 8)
            m->ir_version = 8; /* model-local functions */
    }
    if (!rc && built)
        rc = pfvm_graph_toposort(g, st);
    if (!rc && built)
        rc = pfvm_graph_resolve_ops(g, 0, st);
done:
    pfvm_uses_free(&u);
    for (i = 0; i < (int)stbds_arrlen(s.members); i++)
        stbds_arrfree(s.members[i]);
    stbds_arrfree(s.members);
    stbds_arrfree(dead);
    pfvm__free(s.cand);
    pfvm__free(s.red);
    pfvm__free(s.used);
    pfvm__free(s.shape);
    pfvm__free(s.group);
    pfvm__free(s.visit);
    pfvm__free(s.in_u);
    return rc;
}
