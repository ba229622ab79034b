/* The symbolic memory planner: lifetimes from the node order, sizes from
 * the symbolic shapes, slots reused only where a proof says they fit. */
#include "symplan.h"

#include <string.h>

const pfvm_sym *pfvm__symplan_bytes(pfvm_symtab *t, const pfvm_type *ty)
{
    const pfvm_sym *n;
    int d;
    size_t es;
    if (ty->kind != PFVM_KIND_TENSOR || ty->shape.rank < 0 || ty->dtype == PFVM_STRING ||
        !(es = pfvm_dtype_size(ty->dtype)))
        return NULL;
    n = pfvm_sym_const(t, (int64_t)es);
    for (d = 0; d < ty->shape.rank && n; d++)
        n = pfvm_sym_mul(t, n, ty->shape.dims[d]);
    return n ? pfvm_sym_muli(t, pfvm_sym_ceildiv(t, n, pfvm_sym_const(t, PFVM_SYMPLAN_ALIGN)), PFVM_SYMPLAN_ALIGN) : NULL;
}

/* 1 when a >= b for every binding. */
static int pfvm__symplan_ge(pfvm_symtab *t, const pfvm_sym *a, const pfvm_sym *b)
{
    const pfvm_sym *d = pfvm_sym_sub(t, a, b);
    return d && pfvm_sym_proven_nonneg(d);
}

int pfvm__node_data_deps(const pfvm_node *n, pfvm_value ***out)
{
    int j;
    if (!pfvm__node_deps(n, out))
        return 0;
    if (!n->op || !(n->op->flags & PFVM_OP_SHAPE_ONLY))
        return 1;
    for (j = 0; j < (int)stbds_arrlen(*out);)
        if ((*out)[j]->type.kind == PFVM_KIND_TENSOR && (*out)[j]->type.shape.rank >= 0)
            stbds_arrdel(*out, j);
        else
            j++;
    return 1;
}

/* Element count (hash-consed: equal counts are the same pointer). */
static const pfvm_sym *pfvm__symplan_numel(pfvm_symtab *t, const pfvm_type *ty)
{
    const pfvm_sym *n = pfvm_sym_const(t, 1);
    int d;
    for (d = 0; d < ty->shape.rank && n; d++)
        n = pfvm_sym_mul(t, n, ty->shape.dims[d]);
    return n;
}

int pfvm__node_in_place(const pfvm_node *n)
{
    const pfvm_value *x, *y;
    int j;
    if (!n->op || !(n->op->flags & PFVM_OP_IN_PLACE) || n->n_inputs < 1 || n->n_outputs < 1 ||
        !(x = n->inputs[0]) || !(y = n->outputs[0]) || !x->producer || x->graph != n->graph || x->is_output ||
        x->type.kind != PFVM_KIND_TENSOR || y->type.kind != PFVM_KIND_TENSOR || x->type.dtype != y->type.dtype ||
        x->type.dtype == PFVM_STRING || x->type.shape.rank < 0 || y->type.shape.rank < 0 ||
        pfvm__symplan_numel(n->graph->model->syms, &x->type) != pfvm__symplan_numel(n->graph->model->syms, &y->type) ||
        !pfvm__symplan_numel(n->graph->model->syms, &x->type))
        return 0;
    for (j = 1; j < n->n_inputs; j++)
        if (n->inputs[j] == x)
            return 0;
    return 1;
}

#if PFVM__HAVE_JOIN
int pfvm__node_join_axis(const pfvm_node *n, int rank)
{
    int64_t a;
    if (!n->op || !(n->op->flags & PFVM__OP_JOIN) || n->n_outputs < 1 || rank < 1)
        return -1;
    a = pfvm_node_attr_int(n, "axis", n->opset < 4 ? 1 : 0);
    if (a < 0)
        a += rank;
    return a >= 0 && a < rank ? (int)a : -1;
}
#endif

/* Index of the last node of g that reads each value of g (graph outputs
 * count as read after the last node); -1 when never read. */
static int *pfvm__symplan_last_use(const pfvm_graph *g, int n_nodes)
{
    int nv = (int)stbds_arrlen(g->values), i, j;
    int *last = (int *)pfvm__calloc((size_t)nv + 1, sizeof *last);
    pfvm_value **deps = NULL;
    if (!last)
        return NULL;
    for (i = 0; i < nv; i++)
        last[i] = -1;
    for (i = 0; i < n_nodes; i++) {
        if (!pfvm__node_data_deps(g->nodes[i], &deps)) {
            stbds_arrfree(deps);
            pfvm__free(last);
            return NULL;
        }
        for (j = 0; j < (int)stbds_arrlen(deps); j++)
            if (deps[j]->graph == g)
                last[deps[j]->id] = i;
    }
    stbds_arrfree(deps);
    for (i = 0; i < (int)stbds_arrlen(g->outputs); i++)
        if (g->outputs[i]->graph == g)
            last[g->outputs[i]->id] = n_nodes;
    return last;
}

typedef struct pfvm__symslot {
    const pfvm_sym *size;
    int busy_until; /* last step of its current tenant */
} pfvm__symslot;

/* Picks a slot for an entry: a free one that provably holds it, or a free
 * one it provably outgrows (the slot grows to it), or a new one. */
static int pfvm__symplan_place(pfvm_symtab *t, pfvm__symslot **slots, pfvm_symplan_entry *e)
{
    int k, n = (int)stbds_arrlen(*slots), grow = -1;
    pfvm__symslot s;
    for (k = 0; k < n; k++) {
        pfvm__symslot *x = &(*slots)[k];
        if (x->busy_until >= e->first)
            continue;
        if (pfvm__symplan_ge(t, x->size, e->bytes)) {
            x->busy_until = e->last;
            return k;
        }
        if (grow < 0 && pfvm__symplan_ge(t, e->bytes, x->size))
            grow = k;
    }
    if (grow >= 0) {
        (*slots)[grow].size = e->bytes;
        (*slots)[grow].busy_until = e->last;
        return grow;
    }
    s.size = e->bytes;
    s.busy_until = e->last;
    if (!pfvm__arrpush(*slots, s))
        return -1;
    return n;
}

/* max over the live sums, keeping only sums no other one provably covers. */
static const pfvm_sym *pfvm__symplan_peak(pfvm_symtab *t, const pfvm_symplan *p)
{
    const pfvm_sym **cand = NULL, *peak = pfvm_sym_const(t, 0);
    int step, i, j;
    for (step = 0; step <= p->n_nodes; step++) {
        const pfvm_sym *live = pfvm_sym_const(t, 0);
        int covered = 0;
        for (i = 0; i < p->n_entries && live; i++)
            if (p->entries[i].first + p->entries[i].in_place <= step && step <= p->entries[i].last)
                live = pfvm_sym_add(t, live, p->entries[i].bytes);
        if (!live)
            break;
        for (j = 0; j < (int)stbds_arrlen(cand) && !covered; j++)
            covered = pfvm__symplan_ge(t, cand[j], live);
        if (covered)
            continue;
        for (j = 0; j < (int)stbds_arrlen(cand);)
            if (pfvm__symplan_ge(t, live, cand[j]))
                stbds_arrdel(cand, j);
            else
                j++;
        if (!pfvm__arrpush(cand, live)) {
            peak = NULL;
            break;
        }
    }
    for (j = 0; j < (int)stbds_arrlen(cand) && peak; j++)
        peak = pfvm_sym_max(t, peak, cand[j]);
    stbds_arrfree(cand);
    return peak;
}

unsigned char *pfvm__symplan_constants(const pfvm_graph *g)
{
    int nv = (int)stbds_arrlen(g->values), i, j;
    unsigned char *known = (unsigned char *)pfvm__calloc((size_t)nv + 1, 1);
    if (!known)
        return NULL;
    for (i = 0; i < nv; i++)
        known[i] = g->values[i]->init != NULL && !g->values[i]->is_input;
    for (i = 0; i < (int)stbds_arrlen(g->nodes); i++) {
        const pfvm_node *n = g->nodes[i];
        int all = !n->op || !(n->op->flags & PFVM_OP_NONDETERMINISTIC);
        for (j = 0; j < n->n_attrs && all; j++)
            all = n->attrs[j].type != PFVM_ATTR_GRAPH && n->attrs[j].type != PFVM_ATTR_GRAPHS;
        for (j = 0; j < n->n_inputs && all; j++)
            all = !n->inputs[j] || (n->inputs[j]->graph == g && known[n->inputs[j]->id]);
        for (j = 0; j < n->n_outputs && all; j++)
            if (n->outputs[j])
                known[n->outputs[j]->id] = 1;
    }
    return known;
}

/* The entry (before i) whose storage entry i takes in place, or -1. */
static int pfvm__symplan_in_place_of(const pfvm_symplan_entry *entries, int i)
{
    const pfvm_node *n = entries[i].value->producer;
    int k;
    if (entries[i].value->producer_index != 0 || !pfvm__node_in_place(n))
        return -1;
    for (k = i - 1; k >= 0; k--)
        if (entries[k].value == n->inputs[0])
            return entries[k].last == entries[i].first && entries[k].bytes == entries[i].bytes ? k : -1;
    return -1;
}

static pfvm_code pfvm__scoped_symplan_build(const pfvm_graph *g, pfvm_symplan *p, pfvm_status *st)
{
    unsigned char *known;
    pfvm_symtab *t = g->model->syms;
    int n_nodes = (int)stbds_arrlen(g->nodes), i, j, k;
    int *last, oom = 0;
    pfvm__symslot *slots = NULL;
    const pfvm_sym **offsets = NULL;
    pfvm_symplan_entry *entries = NULL;
    memset(p, 0, sizeof *p);
    p->n_nodes = n_nodes;
    last = pfvm__symplan_last_use(g, n_nodes);
    known = pfvm__symplan_constants(g);
    if (!last || !known) {
        pfvm__free(last);
        pfvm__free(known);
        return pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
    }
    for (i = 0; i < n_nodes; i++) {
        const pfvm_node *n = g->nodes[i];
        for (j = 0; j < n->n_outputs; j++) {
            pfvm_symplan_entry e;
            const pfvm_value *v = n->outputs[j];
            if (!v)
                continue;
            if (known[v->id]) {
                p->n_constant++;
                continue;
            }
            memset(&e, 0, sizeof e);
            e.value = v;
            e.first = i;
            e.last = last[v->id] < i ? i : last[v->id]; /* an unread output is still written */
            if (!(e.bytes = pfvm__symplan_bytes(t, &v->type))) {
                p->n_dynamic++;
                continue;
            }
            if (!pfvm__arrpush(entries, e))
                oom = 1;
        }
    }
    pfvm__free(last);
    pfvm__free(known);
    for (i = 0; i < (int)stbds_arrlen(entries) && !oom; i++) {
        int x = pfvm__symplan_in_place_of(entries, i);
        if (x >= 0) {
            entries[i].in_place = 1;
            entries[i].slot = entries[x].slot;
            slots[entries[x].slot].busy_until = entries[i].last;
        } else if ((entries[i].slot = pfvm__symplan_place(t, &slots, &entries[i])) < 0) {
            oom = 1;
            break;
        }
    }
    /* slots are laid out in creation order: offsets are prefix sums */
    p->arena = oom ? NULL : pfvm_sym_const(t, 0);
    for (k = 0; k < (int)stbds_arrlen(slots) && p->arena; k++) {
        if (!pfvm__arrpush(offsets, p->arena)) {
            p->arena = NULL;
            break;
        }
        p->arena = pfvm_sym_add(t, p->arena, slots[k].size);
    }
    for (i = 0; i < (int)stbds_arrlen(entries) && p->arena; i++)
        entries[i].offset = offsets[entries[i].slot];
    p->n_slots = (int)stbds_arrlen(slots);
    p->n_entries = (int)stbds_arrlen(entries);
    stbds_arrfree(slots);
    stbds_arrfree(offsets);
    /* hand the caller a plain heap array */
    p->entries = (pfvm_symplan_entry *)pfvm__calloc((size_t)p->n_entries + 1, sizeof *p->entries);
    if (p->entries && p->n_entries)
        memcpy(p->entries, entries, sizeof *entries * (size_t)p->n_entries);
    stbds_arrfree(entries);
    if (!p->entries || !p->arena || !(p->peak = pfvm__symplan_peak(t, p))) {
        pfvm_symplan_free(p);
        return pfvm__fail(st, PFVM_ERR_NOMEM, "symbolic plan: out of memory or a size overflows");
    }
    return PFVM_OK;
}

pfvm_code pfvm_symplan_build(const pfvm_graph *g, pfvm_symplan *p, pfvm_status *st)
{
    PFVM__SCOPED(pfvm_code, pfvm__graph_allocator(g), pfvm__scoped_symplan_build(g, p, st));
}

void pfvm_symplan_free(pfvm_symplan *p)
{
    if (!p)
        return;
    pfvm__free(p->entries);
    memset(p, 0, sizeof *p);
}
