/* accel layout planner (see plan.h). */
#include "plan.h"

#include "../opi/opi.h"
#include "../passes/passes.h"
#include "../shape/infer.h"

#include <stdlib.h>

/* The root memory, as the source of model inputs and weights and the sink
 * of model outputs (never a node's choice). */
#define ACCEL_PL_ROOT PFVM_ACL_NL
/* The exact search gives up past this many states at one node. */
#define ACCEL_PL_MAX_STATES 100000
/* Live producers a state can name (3 bits each in a 64-bit key). */
#define ACCEL_PL_MAX_LIVE 21
#define ACCEL_PL_BRUTE_MAX 4e6 /* assignments */

typedef struct accel_pl_opt {
    int kind;
    double cost; /* compute cycles */
    int in_kind[PFVM_ACCEL_MAX_ARGS];
} accel_pl_opt;

typedef struct accel_pl {
    const pfvm_accel_target *t;
    pfvm_graph *g;
    pfvm_status *st;
    int nn;
    int64_t pes;
    accel_pl_opt (*opts)[PFVM_ACL_NL]; /* per node */
    int *nopts;
    pfvm_accel_arg *va; /* per value id: rank and dims */
    double *bytes;      /* per value id */
    int *prod;          /* per value id: producing node, or -1 (input, weight) */
    int *last;          /* per node: the last node reading one of its outputs, or -1 */
} accel_pl;

/* One state of the exact search at one node. */
typedef struct accel_pl_state {
    uint64_t key; /* the classes of the live producers, 3 bits each in order */
    double cost;
    int parent, kind;
} accel_pl_state;

static int64_t accel_pl_used(const accel_pl *p, int kind, const pfvm_accel_arg *v)
{
    int64_t d;
    if (kind == PFVM_ACL_L_FIRST && v->rank >= 1)
        d = v->dims[0];
    else if (kind == PFVM_ACL_L_SECOND && v->rank >= 3)
        d = v->dims[1];
    else if (kind == PFVM_ACL_L_LAST && v->rank >= 2)
        d = v->dims[v->rank - 1];
    else
        return 1;
    return d < p->pes ? (d > 0 ? d : 1) : p->pes;
}

/* The share of the tensor the instance j (PEs [j*q, (j+1)*q)) holds in a
 * class spread over `used` PEs. */
static double accel_pl_held(int kind, int64_t used, int64_t j, int64_t q)
{
    int64_t lo = j * q, hi = lo + q;
    if (kind == PFVM_ACL_L_REPL)
        return 1;
    if (kind == PFVM_ACL_L_PE0)
        return j == 0;
    if (kind == ACCEL_PL_ROOT)
        return 0;
    if (hi > used)
        hi = used;
    return hi > lo ? (double)(hi - lo) / (double)used : 0;
}

/* The cycles of converting value v from class a to class b: per level,
 * the busiest instance's link (what it lacks of what it needs coming
 * down, what others need of what it holds going up), the slowest level
 * setting the time (the links of all levels run at once). Blocks of two
 * splits along one axis line up; along different axes they overlap in
 * proportion. */
static double accel_pl_convert(const accel_pl *p, int a, int b, const pfvm_accel_arg *v, double bytes)
{
    const pfvm_accel_target *t = p->t;
    int64_t ua = accel_pl_used(p, a, v), ub = accel_pl_used(p, b, v);
    double worst = 0;
    int k;
    if (a == b || bytes <= 0)
        return 0;
    if (a == PFVM_ACL_L_REPL && b == ACCEL_PL_ROOT)
        a = PFVM_ACL_L_PE0, ua = 1; /* one copy goes up */
    for (k = 1; k < t->nlevels; k++) {
        int64_t inst = pfvm_accel_target_instances(t, k), q = p->pes / inst, js[3], ji;
        const pfvm_accel_level *l = &t->levels[k];
        js[0] = 0, js[1] = inst > 1 ? 1 : 0, js[2] = inst - 1;
        for (ji = 0; ji < 3; ji++) {
            double hs = accel_pl_held(a, ua, js[ji], q), hn = accel_pl_held(b, ub, js[ji], q), both, in, out;
            if (b == ACCEL_PL_ROOT)
                hn = 0;
            if (a == PFVM_ACL_L_REPL || a == PFVM_ACL_L_PE0 || b == PFVM_ACL_L_REPL || b == PFVM_ACL_L_PE0 ||
                a == ACCEL_PL_ROOT || b == ACCEL_PL_ROOT)
                both = hs < hn ? hs : hn;
            else if (a == b)
                both = hs < hn ? hs : hn;
            else
                both = hs * hn;
            in = hn - both;
            out = a == PFVM_ACL_L_REPL ? 0 : b == PFVM_ACL_L_REPL ? (inst > 1 ? hs : 0) : hs - both;
            if (in * bytes / l->down > worst)
                worst = in * bytes / l->down;
            if (out * bytes / l->up > worst)
                worst = out * bytes / l->up;
        }
    }
    return worst;
}

/* The class option o needs its input s in (a node with more inputs than
 * the rules see runs on PE 0 only). */
static int accel_pl_need(const accel_pl_opt *o, int s)
{
    return s < PFVM_ACCEL_MAX_ARGS ? o->in_kind[s] : PFVM_ACL_L_PE0;
}

/* Cycles of node i's inputs and outputs in option o, its producers'
 * classes given by kinds (node index -> class). */
static double accel_pl_edges(const accel_pl *p, int i, const accel_pl_opt *o, const int *kinds)
{
    const pfvm_node *n = pfvm_graph_node(p->g, i);
    double c = 0;
    int s;
    for (s = 0; s < n->n_inputs; s++) {
        const pfvm_value *v = n->inputs[s];
        int from;
        if (!v || p->va[v->id].rank < 0)
            continue;
        from = p->prod[v->id] < 0 ? ACCEL_PL_ROOT : kinds[p->prod[v->id]];
        c += accel_pl_convert(p, from, accel_pl_need(o, s), &p->va[v->id], p->bytes[v->id]);
    }
    for (s = 0; s < n->n_outputs; s++) {
        const pfvm_value *v = n->outputs[s];
        if (v && v->is_output && p->va[v->id].rank >= 0)
            c += accel_pl_convert(p, o->kind, ACCEL_PL_ROOT, &p->va[v->id], p->bytes[v->id]);
    }
    return c;
}

static const accel_pl_opt *accel_pl_find(const accel_pl *p, int i, int kind)
{
    int k;
    for (k = 0; k < p->nopts[i]; k++)
        if (p->opts[i][k].kind == kind)
            return &p->opts[i][k];
    return NULL;
}

/* The whole plan's cycles, and its parts. */
static double accel_pl_eval(const accel_pl *p, const int *kinds, double *compute, double *convert, int *conversions)
{
    double cp = 0, cv = 0;
    int i, s, nc = 0;
    for (i = 0; i < p->nn; i++) {
        const accel_pl_opt *o = accel_pl_find(p, i, kinds[i]);
        const pfvm_node *n = pfvm_graph_node(p->g, i);
        if (!o)
            return 1e300;
        cp += o->cost;
        cv += accel_pl_edges(p, i, o, kinds);
        for (s = 0; s < n->n_inputs; s++)
            if (n->inputs[s] && p->prod[n->inputs[s]->id] >= 0 && p->va[n->inputs[s]->id].rank >= 0 &&
                kinds[p->prod[n->inputs[s]->id]] != accel_pl_need(o, s))
                nc++;
    }
    if (compute)
        *compute = cp;
    if (convert)
        *convert = cv;
    if (conversions)
        *conversions = nc;
    return cp + cv;
}

static pfvm_code accel_pl_value(accel_pl *p, const pfvm_value *v)
{
    pfvm_accel_arg *a = &p->va[v->id];
    double numel = 1;
    int i;
    if (v->type.kind != PFVM_KIND_TENSOR || v->type.shape.rank < 0)
        return PFVM_OK; /* rank -1: not counted */
    a->rank = v->type.shape.rank;
    for (i = 0; i < a->rank; i++) {
        if (!pfvm_sym_is_const(v->type.shape.dims[i], &a->dims[i])) {
            char sym[64];
            pfvm_sym_print(v->type.shape.dims[i], sym, sizeof sym);
            return pfvm__fail(p->st, PFVM_ERR_INVALID,
                              "value %s: dim %d is symbolic (%s); bind it (interp accel --dim NAME=VALUE)", v->name,
                              i, sym);
        }
        numel *= (double)a->dims[i];
    }
    p->bytes[v->id] = numel * (double)pfvm_dtype_size(v->type.dtype);
    return PFVM_OK;
}

/* Node i's options: every class its lowering's rule accepts, with its
 * compute cycles on the PEs that class uses. */
static void accel_pl_options(accel_pl *p, int i)
{
    const pfvm_node *n = pfvm_graph_node(p->g, i);
    pfvm_accel_arg in[PFVM_ACCEL_MAX_ARGS], out[PFVM_ACCEL_MAX_ARGS], none;
    double fl = pfvm_node_flops(n, NULL), macs = pfvm_accel_target_macs(p->t, PFVM_FLOAT);
    int k, s, mac;
    memset(&none, 0, sizeof none);
    none.rank = -1;
    for (s = 0; s < PFVM_ACCEL_MAX_ARGS; s++) {
        const pfvm_value *vi = s < n->n_inputs ? n->inputs[s] : NULL, *vo = s < n->n_outputs ? n->outputs[s] : NULL;
        in[s] = vi ? p->va[vi->id] : none;
        out[s] = vo ? p->va[vo->id] : none;
    }
    p->nopts[i] = 0;
    for (k = 0; k < PFVM_ACL_NL; k++) {
        accel_pl_opt *o = &p->opts[i][p->nopts[i]];
        double work;
        if (n->n_inputs > PFVM_ACCEL_MAX_ARGS || n->n_outputs > PFVM_ACCEL_MAX_ARGS) {
            if (k != PFVM_ACL_L_PE0)
                continue;
            for (s = 0; s < PFVM_ACCEL_MAX_ARGS; s++)
                o->in_kind[s] = PFVM_ACL_L_PE0;
            mac = 0;
        } else if (!pfvm_acl_layout_rule(n, in, out, k, o->in_kind, &mac))
            continue;
        if (fl <= 0) /* data movement: an element per lane per cycle */
            fl = out[0].rank >= 0 && n->outputs[0] ? p->bytes[n->outputs[0]->id] / 4 : 0;
        work = mac && macs > 0 ? fl / (2 * macs) : fl / (p->t->simd > 0 ? p->t->simd : 1);
        o->kind = k;
        o->cost = work / (double)(out[0].rank >= 0 ? accel_pl_used(p, k, &out[0]) : 1);
        p->nopts[i]++;
    }
}

/* Each node in order picks its cheapest option given its producers'; then
 * sweeps move one node at a time to the option that lowers the total,
 * until none does. */
static void accel_pl_heuristic(const accel_pl *p, int *kinds)
{
    int i, k, sweep, changed = 1;
    double best;
    for (i = 0; i < p->nn; i++) {
        best = 0;
        for (k = 0; k < p->nopts[i]; k++) {
            const accel_pl_opt *o = &p->opts[i][k];
            double c = o->cost + accel_pl_edges(p, i, o, kinds);
            if (k == 0 || c < best)
                best = c, kinds[i] = o->kind;
        }
    }
    best = accel_pl_eval(p, kinds, NULL, NULL, NULL);
    for (sweep = 0; sweep < 50 && changed; sweep++) {
        changed = 0;
        for (i = 0; i < p->nn; i++) {
            int keep = kinds[i];
            for (k = 0; k < p->nopts[i]; k++) {
                double c;
                if (p->opts[i][k].kind == keep)
                    continue;
                kinds[i] = p->opts[i][k].kind;
                c = accel_pl_eval(p, kinds, NULL, NULL, NULL);
                if (c < best * (1 - 1e-12)) {
                    best = c, keep = kinds[i], changed = 1;
                }
            }
            kinds[i] = keep;
        }
    }
}

static int accel_pl_state_cmp(const void *pa, const void *pb)
{
    const accel_pl_state *a = (const accel_pl_state *)pa, *b = (const accel_pl_state *)pb;
    if (a->key != b->key)
        return a->key < b->key ? -1 : 1;
    return a->cost < b->cost ? -1 : a->cost > b->cost;
}

/* The live producers after node i (read by a later node), in order. */
static int accel_pl_live(const accel_pl *p, int i, int *live)
{
    int j, n = 0;
    for (j = 0; j <= i; j++)
        if (p->last[j] > i)
            live[n++] = j;
    return n;
}

/* Dynamic programming over the nodes in order: a state is the classes of
 * the producers whose outputs are still to be read, so the cost of the
 * rest depends on the state alone and the minimum over the states at the
 * end is the optimum. *states: the most states at one node; returns
 * PFVM_ERR_UNSUPPORTED past the state limit. */
static pfvm_code accel_pl_exact(const accel_pl *p, int *kinds, int64_t *states)
{
    accel_pl_state **steps = NULL, *cur = NULL;
    int *live_prev = NULL, *live = NULL, *kk = NULL, i, j, np = 0, nl;
    pfvm_code rc = PFVM_OK;
    accel_pl_state init;
    *states = 1;
    live_prev = (int *)pfvm__calloc((size_t)p->nn + 1, sizeof *live_prev);
    live = (int *)pfvm__calloc((size_t)p->nn + 1, sizeof *live);
    kk = (int *)pfvm__calloc((size_t)p->nn + 1, sizeof *kk);
    steps = (accel_pl_state **)pfvm__calloc((size_t)p->nn + 1, sizeof *steps);
    init.key = 0, init.cost = 0, init.parent = -1, init.kind = -1;
    if (!live_prev || !live || !kk || !steps || !pfvm__arrpush(cur, init)) {
        rc = pfvm__fail(p->st, PFVM_ERR_NOMEM, "accel layout planner: out of memory");
        goto done;
    }
    for (i = 0; i < p->nn && rc == PFVM_OK; i++) {
        accel_pl_state *next = NULL;
        size_t s, w;
        nl = accel_pl_live(p, i, live);
        if (nl > ACCEL_PL_MAX_LIVE) {
            rc = pfvm__fail(p->st, PFVM_ERR_UNSUPPORTED, "accel layout planner: %d values live at node %s", nl,
                            pfvm_graph_node(p->g, i)->name);
            break;
        }
        for (s = 0; s < (size_t)stbds_arrlen(cur) && rc == PFVM_OK; s++) {
            int k;
            for (j = 0; j < np; j++)
                kk[live_prev[j]] = (int)((cur[s].key >> (3 * j)) & 7);
            for (k = 0; k < p->nopts[i]; k++) {
                const accel_pl_opt *o = &p->opts[i][k];
                accel_pl_state ns;
                kk[i] = o->kind;
                ns.cost = cur[s].cost + o->cost + accel_pl_edges(p, i, o, kk);
                ns.key = 0;
                for (j = 0; j < nl; j++)
                    ns.key |= (uint64_t)kk[live[j]] << (3 * j);
                ns.parent = (int)s;
                ns.kind = o->kind;
                if (!pfvm__arrpush(next, ns)) {
                    rc = pfvm__fail(p->st, PFVM_ERR_NOMEM, "accel layout planner: out of memory");
                    break;
                }
            }
        }
        if (rc == PFVM_OK && stbds_arrlen(next) > 0) {
            qsort(next, (size_t)stbds_arrlen(next), sizeof *next, accel_pl_state_cmp);
            for (s = 1, w = 1; s < (size_t)stbds_arrlen(next); s++)
                if (next[s].key != next[w - 1].key)
                    next[w++] = next[s];
            stbds_arrsetlen(next, w);
            if ((int64_t)w > *states)
                *states = (int64_t)w;
            if (w > ACCEL_PL_MAX_STATES)
                rc = pfvm__fail(p->st, PFVM_ERR_UNSUPPORTED,
                                "accel layout planner: the exact search passes %d states at node %s",
                                ACCEL_PL_MAX_STATES, pfvm_graph_node(p->g, i)->name);
        }
        steps[i] = cur;
        cur = next;
        memcpy(live_prev, live, (size_t)nl * sizeof *live);
        np = nl;
    }
    if (rc == PFVM_OK && p->nn > 0) {
        /* nothing is live after the last node: one state, the optimum */
        int s = 0;
        accel_pl_state *at = cur;
        for (i = p->nn - 1; i >= 0; i--) {
            kinds[i] = at[s].kind;
            s = at[s].parent;
            at = steps[i];
        }
    }
done:
    if (steps) {
        for (i = 0; i < p->nn; i++)
            stbds_arrfree(steps[i]);
    }
    stbds_arrfree(cur);
    pfvm__free(steps);
    pfvm__free(live_prev);
    pfvm__free(live);
    pfvm__free(kk);
    return rc;
}

/* Every assignment of options (an odometer over the nodes). */
static void accel_pl_brute(const accel_pl *p, int *kinds, int *idx)
{
    double best = -1;
    int i;
    for (i = 0; i < p->nn; i++)
        idx[i] = 0;
    for (;;) {
        int *k = idx + p->nn;
        double c;
        for (i = 0; i < p->nn; i++)
            k[i] = p->opts[i][idx[i]].kind;
        c = accel_pl_eval(p, k, NULL, NULL, NULL);
        if (best < 0 || c < best) {
            best = c;
            memcpy(kinds, k, (size_t)p->nn * sizeof *kinds);
        }
        for (i = p->nn - 1; i >= 0 && ++idx[i] == p->nopts[i]; i--)
            idx[i] = 0;
        if (i < 0)
            break;
    }
}

static pfvm_code accel_pl_setup(accel_pl *p, pfvm_model *m)
{
    pfvm_graph *g;
    pfvm_code rc;
    int i, s, nv;
    if ((rc = pfvm_optimize(m, "fold,dce", NULL, p->st)) != PFVM_OK ||
        (rc = pfvm_graph_toposort(m->graph, p->st)) != PFVM_OK || (rc = pfvm_infer_shapes(m->graph, 0, p->st)) != PFVM_OK)
        return rc;
    g = p->g = m->graph;
    p->nn = pfvm_graph_num_nodes(g);
    p->pes = pfvm_accel_target_pes(p->t);
    nv = (int)stbds_arrlen(g->values);
    p->opts = (accel_pl_opt(*)[PFVM_ACL_NL])pfvm__calloc((size_t)p->nn + 1, sizeof *p->opts);
    p->nopts = (int *)pfvm__calloc((size_t)p->nn + 1, sizeof *p->nopts);
    p->last = (int *)pfvm__calloc((size_t)p->nn + 1, sizeof *p->last);
    p->va = (pfvm_accel_arg *)pfvm__calloc((size_t)nv + 1, sizeof *p->va);
    p->bytes = (double *)pfvm__calloc((size_t)nv + 1, sizeof *p->bytes);
    p->prod = (int *)pfvm__calloc((size_t)nv + 1, sizeof *p->prod);
    if (!p->opts || !p->nopts || !p->last || !p->va || !p->bytes || !p->prod)
        return pfvm__fail(p->st, PFVM_ERR_NOMEM, "accel layout planner: out of memory");
    for (i = 0; i < nv; i++) {
        p->va[i].rank = -1;
        p->prod[i] = -1;
        if (g->values[i] && g->values[i]->graph == g && (rc = accel_pl_value(p, g->values[i])) != PFVM_OK)
            return rc;
    }
    for (i = 0; i < p->nn; i++) {
        const pfvm_node *n = pfvm_graph_node(g, i);
        p->last[i] = -1;
        for (s = 0; s < n->n_outputs; s++)
            if (n->outputs[s])
                p->prod[n->outputs[s]->id] = i;
        for (s = 0; s < n->n_inputs; s++)
            if (n->inputs[s] && n->inputs[s]->graph == g && p->prod[n->inputs[s]->id] >= 0)
                p->last[p->prod[n->inputs[s]->id]] = i;
    }
    for (i = 0; i < p->nn; i++) {
        accel_pl_options(p, i);
        if (p->nopts[i] == 0) /* cannot happen: every node accepts PE 0 */
            return pfvm__fail(p->st, PFVM_ERR_INVALID, "node %s (%s): no layout class", pfvm_graph_node(g, i)->name,
                              pfvm_graph_node(g, i)->op_type);
    }
    return PFVM_OK;
}

static pfvm_code accel_pl_solve(accel_pl *p, int method, pfvm_accel_layout_plan *plan)
{
    int *kinds = plan->kind, *other = NULL, *idx = NULL;
    pfvm_code rc = PFVM_OK;
    if (method == PFVM_ACCEL_PLAN_BRUTE) {
        double all = 1;
        int i;
        for (i = 0; i < p->nn; i++)
            all *= p->nopts[i];
        if (all > ACCEL_PL_BRUTE_MAX)
            return pfvm__fail(p->st, PFVM_ERR_UNSUPPORTED,
                              "accel layout planner: brute force takes at most %.0f assignments (the graph has %.3g)",
                              ACCEL_PL_BRUTE_MAX, all);
        if (!(idx = (int *)pfvm__calloc((size_t)p->nn * 2 + 1, sizeof *idx)))
            return pfvm__fail(p->st, PFVM_ERR_NOMEM, "accel layout planner: out of memory");
        accel_pl_brute(p, kinds, idx);
        pfvm__free(idx);
        plan->method = method;
        return PFVM_OK;
    }
    if (method == PFVM_ACCEL_PLAN_HEURISTIC || method == PFVM_ACCEL_PLAN_AUTO) {
        accel_pl_heuristic(p, kinds);
        plan->heuristic_cost = accel_pl_eval(p, kinds, NULL, NULL, NULL);
        plan->method = PFVM_ACCEL_PLAN_HEURISTIC;
    }
    if (method == PFVM_ACCEL_PLAN_EXACT || method == PFVM_ACCEL_PLAN_AUTO) {
        pfvm_status quiet, *keep = p->st;
        if (!(other = (int *)pfvm__calloc((size_t)p->nn + 1, sizeof *other)))
            return pfvm__fail(p->st, PFVM_ERR_NOMEM, "accel layout planner: out of memory");
        if (method == PFVM_ACCEL_PLAN_AUTO)
            p->st = &quiet;
        rc = accel_pl_exact(p, other, &plan->states);
        p->st = keep;
        if (rc == PFVM_OK) {
            plan->exact_done = 1;
            plan->exact_cost = accel_pl_eval(p, other, NULL, NULL, NULL);
            memcpy(kinds, other, (size_t)p->nn * sizeof *kinds);
            plan->method = PFVM_ACCEL_PLAN_EXACT;
        } else if (method == PFVM_ACCEL_PLAN_AUTO && rc == PFVM_ERR_UNSUPPORTED)
            rc = PFVM_OK; /* the heuristic's plan stands */
        pfvm__free(other);
    }
    return rc;
}

pfvm_code pfvm_accel_plan_layouts(pfvm_model *m, const pfvm_accel_target *t, int method,
                                  pfvm_accel_layout_plan *plan, pfvm_status *st)
{
    accel_pl p;
    pfvm_code rc;
    if (!plan)
        return pfvm__fail(st, PFVM_ERR_INVALID, "accel layout planner: no plan to fill");
    memset(plan, 0, sizeof *plan);
    plan->exact_cost = plan->heuristic_cost = -1;
    if (!m || !m->graph || !t)
        return pfvm__fail(st, PFVM_ERR_INVALID, "accel layout planner: needs a model and a target");
    if (method < PFVM_ACCEL_PLAN_AUTO || method > PFVM_ACCEL_PLAN_BRUTE)
        return pfvm__fail(st, PFVM_ERR_INVALID, "accel layout planner: unknown method %d", method);
    memset(&p, 0, sizeof p);
    p.t = t;
    p.st = st;
    rc = accel_pl_setup(&p, m);
    if (rc == PFVM_OK && !(plan->kind = (int *)pfvm__calloc((size_t)p.nn + 1, sizeof *plan->kind)))
        rc = pfvm__fail(st, PFVM_ERR_NOMEM, "accel layout planner: out of memory");
    if (rc == PFVM_OK) {
        plan->nnodes = p.nn;
        rc = accel_pl_solve(&p, method, plan);
    }
    if (rc == PFVM_OK) {
        plan->cost = accel_pl_eval(&p, plan->kind, &plan->compute, &plan->convert, &plan->conversions);
        pfvm__ok(st);
    } else
        pfvm_accel_plan_free(plan);
    pfvm__free(p.opts);
    pfvm__free(p.nopts);
    pfvm__free(p.last);
    pfvm__free(p.va);
    pfvm__free(p.bytes);
    pfvm__free(p.prod);
    return rc;
}

void pfvm_accel_plan_free(pfvm_accel_layout_plan *plan)
{
    if (!plan)
        return;
    pfvm__free(plan->kind);
    plan->kind = NULL;
    plan->nnodes = 0;
}

const char *pfvm_accel_kind_name(int kind)
{
    static const char *const names[] = {"first", "second", "last", "repl", "pe0"};
    return kind >= 0 && kind < PFVM_ACL_NL ? names[kind] : NULL;
}
