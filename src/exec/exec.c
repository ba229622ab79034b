#include "exec.h"
#include "../plan/symplan.h"
#include "../passes/autodiff.h"
#include "../ops/fused.h"

/* Outputs at most this many elements are folded at plan time when all of a
 * node's inputs are known: shape arithmetic, not tensor math. */
#ifndef PFVM_FOLD_LIMIT
#define PFVM_FOLD_LIMIT 4096
#endif

enum { PFVM__V_ARENA = 0, PFVM__V_KNOWN = 1, PFVM__V_DYNAMIC = 2, PFVM__V_EXTERNAL = 3 };
/* pfvm_exec.touch's mark: this node's count is taken at each run */
#define PFVM__TOUCH_RUN UINT64_MAX

/* Training state: initializer `state` takes output `next` after each run. */
typedef struct pfvm__feedback {
    pfvm_value *state, *next;
} pfvm__feedback;

typedef struct pfvm__child {
    const pfvm_graph *g;
    pfvm_exec *e;
} pfvm__child;

struct pfvm_exec {
    pfvm_model *m;
    pfvm_graph *g;
    pfvm_exec *parent;
    int nv, nn;
    pfvm_value **ins;          /* stb_ds: caller-provided inputs */
    unsigned char *varying;    /* per input: contents never read at plan time */
    pfvm_tensor *vals;         /* run-time tensor per value id */
    pfvm_ival *iv;             /* inference result per value id */
    unsigned char *vkind;      /* PFVM__V_* per value id */
    unsigned char *skip;       /* per node: all outputs known, nothing to run */
    uint64_t *touch;           /* per node: pfvm__touched's count, fixed at bind (PFVM__TOUCH_RUN: counted per run) */
    const pfvm_tensor **bound; /* stb_ds: bound inputs */
    const pfvm_tensor **given; /* stb_ds: inputs from pfvm_exec_set_input, for the next bind */
    int64_t *sig;              /* stb_ds: signature of the planned binding */
    int planned;
    pfvm_arena plan_arena;     /* folded constants and inference storage */
    unsigned char *arena;
    size_t arena_size;
    int arena_owned;
    unsigned char *user_arena;
    size_t user_arena_size;
    pfvm_plan_entry *entries;  /* stb_ds */
    size_t lower_bound, folded_bytes;
    pfvm_limits limits;        /* resolved: no 0 fields */
    size_t dynamic_bytes;      /* tensors sized by kernels while running (owned by vals) */
    uint64_t operations;       /* root executor: counted in this bind or run (max_run_operations) */
    int n_folded;
    pfvm__child *children;     /* stb_ds */
    pfvm__feedback *feedback;  /* stb_ds: training state carried between runs */
    pfvm_node *running;        /* node whose kernel runs (for subgraphs) */
    int random_used;           /* a kernel drew random numbers in the last run */
    uint64_t rng;              /* state of the executor's generator */
    pfvm_parallel par;         /* the caller's parallel-for (pfvm_exec_set_parallel); threads 0: none */
    pfvm_node_hook hook;       /* pfvm_exec_set_node_hook */
    void *hook_user;
    void *scratch;             /* kernel workspace, grown on first need */
    size_t scratch_size;
    void **state;              /* per node: kernel state (pfvm_kctx_set_state) */
    void (**state_free)(void *);
    /* scratch for kernel calls */
    const pfvm_tensor **kin;
    pfvm_tensor **kout;
    const pfvm_ival **iin;
    pfvm_ival **iout;
    /* pfvm_exec_check_shapes: the symbols' values in the current run */
    int check_shapes;
    int runs;
    pfvm_binding check_b;
};

/* ---- setup ----------------------------------------------------------------- */

static pfvm_code pfvm__exec_init(pfvm_exec *e, pfvm_model *m, pfvm_graph *g, pfvm_exec *parent, pfvm_status *st)
{
    int i, maxio = 1;
    e->m = m;
    e->g = g;
    e->parent = parent;
    if (parent)
        e->limits = parent->limits;
    else
        pfvm_exec_set_limits(e, NULL);
    e->nv = (int)stbds_arrlen(g->values);
    e->nn = (int)stbds_arrlen(g->nodes);
    for (i = 0; i < (int)stbds_arrlen(g->inputs); i++)
        if (!g->inputs[i]->init && !pfvm__arrpush(e->ins, g->inputs[i]))
            return pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
    e->varying = (unsigned char *)pfvm__calloc((size_t)stbds_arrlen(e->ins) + 1, 1);
    e->vals = (pfvm_tensor *)pfvm__calloc((size_t)e->nv + 1, sizeof *e->vals);
    e->iv = (pfvm_ival *)pfvm__calloc((size_t)e->nv + 1, sizeof *e->iv);
    e->vkind = (unsigned char *)pfvm__calloc((size_t)e->nv + 1, 1);
    e->skip = (unsigned char *)pfvm__calloc((size_t)e->nn + 1, 1);
    e->touch = (uint64_t *)pfvm__calloc((size_t)e->nn + 1, sizeof *e->touch);
    e->state = (void **)pfvm__calloc((size_t)e->nn + 1, sizeof *e->state);
    e->state_free = (void (**)(void *))pfvm__calloc((size_t)e->nn + 1, sizeof *e->state_free);
    for (i = 0; i < e->nn; i++) {
        if (g->nodes[i]->n_inputs > maxio)
            maxio = g->nodes[i]->n_inputs;
        if (g->nodes[i]->n_outputs > maxio)
            maxio = g->nodes[i]->n_outputs;
    }
    e->kin = (const pfvm_tensor **)pfvm__calloc((size_t)maxio, sizeof *e->kin);
    e->kout = (pfvm_tensor **)pfvm__calloc((size_t)maxio, sizeof *e->kout);
#ifndef PFVM_NO_SHAPE_INFERENCE /* inference's node io: at bind and for dynamic outputs */
    e->iin = (const pfvm_ival **)pfvm__calloc((size_t)maxio, sizeof *e->iin);
    e->iout = (pfvm_ival **)pfvm__calloc((size_t)maxio, sizeof *e->iout);
    if (!e->iin || !e->iout)
        return pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
#endif
    if (!e->varying || !e->vals || !e->iv || !e->vkind || !e->skip || !e->touch || !e->state || !e->state_free || !e->kin || !e->kout)
        return pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
    for (i = 0; i < e->nn; i++)
        e->touch[i] = PFVM__TOUCH_RUN; /* until a bind fixes them (pfvm__touch_at_bind) */
    return PFVM_OK;
}

static pfvm_exec *pfvm__scoped_exec_new(pfvm_model *m, pfvm_graph *g, pfvm_status *st)
{
    pfvm_exec *e;
    if (!g)
        g = m->graph;
    if (!g) {
        pfvm__fail(st, PFVM_ERR_INVALID, "model has no graph");
        return NULL;
    }
    if (pfvm_graph_toposort(g, st) || (!PFVM__TOPOSORT_VERIFIES && pfvm_graph_verify(g, st)) ||
        pfvm_graph_resolve_ops(g, 1, st))
        return NULL;
    e = (pfvm_exec *)pfvm__calloc(1, sizeof *e);
    if (!e) {
        pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
        return NULL;
    }
    if (pfvm__exec_init(e, m, g, NULL, st)) {
        pfvm_exec_free(e);
        return NULL;
    }
    return e;
}

pfvm_exec *pfvm_exec_new(pfvm_model *m, pfvm_graph *g, pfvm_status *st)
{
    PFVM__SCOPED(pfvm_exec *, pfvm__model_allocator(m), pfvm__scoped_exec_new(m, g, st));
}

static void pfvm__release_dynamic(pfvm_exec *e)
{
    int i;
    for (i = 0; e->vkind && i < e->nv; i++)
        if (e->vkind[i] == PFVM__V_DYNAMIC)
            pfvm_tensor_release(&e->vals[i]);
    e->dynamic_bytes = 0;
}

/* ---- resource limits ------------------------------------------------------------ */

pfvm_limits pfvm_limits_default(void)
{
    pfvm_limits l;
    l.max_arena_bytes = PFVM_MAX_ARENA_BYTES;
    l.max_tensor_bytes = PFVM_MAX_TENSOR_BYTES;
    l.max_total_bytes = PFVM_MAX_TOTAL_BYTES;
    l.max_loop_iterations = PFVM_MAX_LOOP_ITERATIONS;
    l.max_run_operations = PFVM_MAX_RUN_OPERATIONS;
    return l;
}

pfvm_limits pfvm_limits_max(size_t bytes)
{
    pfvm_limits l = pfvm_limits_default();
    if (l.max_arena_bytes > bytes)
        l.max_arena_bytes = bytes;
    if (l.max_tensor_bytes > bytes)
        l.max_tensor_bytes = bytes;
    if (l.max_total_bytes > bytes)
        l.max_total_bytes = bytes;
    return l;
}

void pfvm_exec_set_limits(pfvm_exec *e, const pfvm_limits *limits)
{
    pfvm_limits d = pfvm_limits_default();
    e->limits = d;
    if (limits) {
        if (limits->max_arena_bytes)
            e->limits.max_arena_bytes = limits->max_arena_bytes;
        if (limits->max_tensor_bytes)
            e->limits.max_tensor_bytes = limits->max_tensor_bytes;
        if (limits->max_total_bytes)
            e->limits.max_total_bytes = limits->max_total_bytes;
        if (limits->max_loop_iterations)
            e->limits.max_loop_iterations = limits->max_loop_iterations;
        if (limits->max_run_operations)
            e->limits.max_run_operations = limits->max_run_operations;
    }
    e->planned = 0;
}

pfvm_limits pfvm_exec_limits(const pfvm_exec *e)
{
    return e->limits;
}

uint64_t pfvm_exec_operations(const pfvm_exec *e)
{
    return e ? e->operations : 0;
}

/* Counts `ops` against the budget of the run, which the root executor
 * keeps for every subgraph run under it. */
static pfvm_code pfvm__spend(pfvm_exec *e, const pfvm_node *n, uint64_t ops, pfvm_status *st)
{
    pfvm_exec *r = e;
    char lb[96];
    while (r->parent)
        r = r->parent;
    r->operations = ops > UINT64_MAX - r->operations ? UINT64_MAX : r->operations + ops;
    if (r->operations <= r->limits.max_run_operations)
        return PFVM_OK;
    return pfvm__fail(st, PFVM_ERR_RUNTIME,
                      "node '%s' (%s): the run passed its budget of %llu operations (pfvm_limits.max_run_operations)",
                      pfvm__node_label(n, lb, sizeof lb), n->op_type, (unsigned long long)r->limits.max_run_operations);
}

/* What the executor counts for one kernel call: the elements of its
 * inputs and of its outputs sized before the call. */
static uint64_t pfvm__touched(const pfvm_tensor *const *t, int n)
{
    uint64_t sum = 0;
    int i, j;
    for (i = 0; i < n; i++)
        if (t[i] && t[i]->kind == PFVM_KIND_TENSOR) {
            uint64_t c = 1;
            for (j = 0; j < t[i]->rank; j++) {
                uint64_t d = t[i]->dims[j] > 0 ? (uint64_t)t[i]->dims[j] : 0;
                /* 32 x 32 bits cannot overflow: one multiply on a 32-bit core */
                c = (c | d) >> 32 ? pfvm__sat_mul(c, d) : (uint64_t)(uint32_t)c * (uint32_t)d;
            }
            sum = c > UINT64_MAX - sum ? UINT64_MAX : sum + c;
        } else if (t[i]) {
            sum += t[i]->kind == PFVM_KIND_SEQUENCE ? (uint64_t)stbds_arrlen(t[i]->elems) : 1;
        }
    return sum;
}

/* Fails unless a tensor of `bytes` for value v fits the per-tensor limit
 * and, with `committed` bytes already held, the total. */
static pfvm_code pfvm__limit_tensor(const pfvm_exec *e, const pfvm_value *v, size_t bytes, size_t committed,
                                    pfvm_status *st)
{
    char lb[64];
    const char *who = v && v->producer ? pfvm__node_label(v->producer, lb, sizeof lb) : "";
    const char *op = v && v->producer ? v->producer->op_type : "";
    const char *name = v && v->name ? v->name : "?";
    if (bytes > e->limits.max_tensor_bytes)
        return pfvm__fail(st, PFVM_ERR_NOMEM,
                          "node '%s' (%s): output '%s' needs %zu bytes, over the limit of %zu bytes per tensor", who, op,
                          name, bytes, e->limits.max_tensor_bytes);
    if (committed > e->limits.max_total_bytes || bytes > e->limits.max_total_bytes - committed)
        return pfvm__fail(st, PFVM_ERR_NOMEM,
                          "node '%s' (%s): output '%s' needs %zu bytes with %zu held, over the limit of %zu bytes in all",
                          who, op, name, bytes, committed, e->limits.max_total_bytes);
    return PFVM_OK;
}

void pfvm_exec_free(pfvm_exec *e)
{
    int i;
    if (!e)
        return;
    if (e->vals)
        pfvm__release_dynamic(e);
    for (i = 0; e->state && e->state_free && i < e->nn; i++)
        if (e->state[i] && e->state_free[i])
            e->state_free[i](e->state[i]);
    pfvm__free(e->state);
    pfvm__free(e->state_free);
    for (i = 0; i < (int)stbds_arrlen(e->children); i++)
        pfvm_exec_free(e->children[i].e);
    stbds_arrfree(e->children);
    stbds_arrfree(e->feedback);
    stbds_arrfree(e->ins);
    pfvm__free(e->varying);
    stbds_arrfree(e->bound);
    stbds_arrfree(e->given);
    stbds_arrfree(e->sig);
    stbds_arrfree(e->entries);
    pfvm__free(e->vals);
    pfvm__free(e->iv);
    pfvm__free(e->vkind);
    pfvm__free(e->skip);
    pfvm__free(e->touch);
    pfvm__free(e->kin);
    pfvm__free(e->kout);
    pfvm__free(e->iin);
    pfvm__free(e->iout);
    pfvm_binding_free(&e->check_b);
    if (e->arena_owned)
        pfvm__data_free(e->arena);
    pfvm__free(e->scratch);
    pfvm__arena_free(&e->plan_arena);
    pfvm__free(e);
}

int pfvm_exec_num_inputs(const pfvm_exec *e)
{
    return (int)stbds_arrlen(e->ins);
}

const pfvm_value *pfvm_exec_input(const pfvm_exec *e, int i)
{
    return i >= 0 && i < (int)stbds_arrlen(e->ins) ? e->ins[i] : NULL;
}

int pfvm_exec_num_outputs(const pfvm_exec *e)
{
    return (int)stbds_arrlen(e->g->outputs);
}

const pfvm_value *pfvm_exec_output_value(const pfvm_exec *e, int i)
{
    return i >= 0 && i < pfvm_exec_num_outputs(e) ? e->g->outputs[i] : NULL;
}

static pfvm_code pfvm__scoped_exec_set_input_varying(pfvm_exec *e, int i, int varying, pfvm_status *st)
{
    if (i < 0 || i >= pfvm_exec_num_inputs(e))
        return pfvm__fail(st, PFVM_ERR_INVALID, "graph '%s' has no input %d (%d inputs)", e->g->name, i,
                          pfvm_exec_num_inputs(e));
    if (e->varying[i] != (varying != 0))
        e->planned = 0;
    e->varying[i] = varying != 0;
    return PFVM_OK;
}

pfvm_code pfvm_exec_set_input_varying(pfvm_exec *e, int i, int varying, pfvm_status *st)
{
    PFVM__SCOPED(pfvm_code, pfvm__model_allocator(e ? e->m : NULL),
                 pfvm__scoped_exec_set_input_varying(e, i, varying, st));
}

void pfvm_exec_set_arena(pfvm_exec *e, void *buf, size_t size)
{
    e->user_arena = (unsigned char *)buf;
    e->user_arena_size = size;
    e->planned = 0;
}

/* ---- value lookup across scopes ------------------------------------------- */

static pfvm_exec *pfvm__scope_of(pfvm_exec *e, const pfvm_value *v)
{
    while (e && e->g != v->graph)
        e = e->parent;
    return e;
}

static pfvm_tensor *pfvm__tensor_of(pfvm_exec *e, const pfvm_value *v)
{
    pfvm_exec *s = pfvm__scope_of(e, v);
    return s ? &s->vals[v->id] : NULL;
}

static const pfvm_ival *pfvm__ival_of(pfvm_exec *e, const pfvm_value *v)
{
    pfvm_exec *s = pfvm__scope_of(e, v);
    return s ? &s->iv[v->id] : NULL;
}

/* ---- binding ---------------------------------------------------------------- */

#ifndef PFVM_NO_SHAPE_INFERENCE /* the signature: inference may fold small integer inputs */
static int pfvm__small_int(const pfvm_tensor *t)
{
    return t->kind == PFVM_KIND_TENSOR && (pfvm_dtype_is_int(t->dtype) || t->dtype == PFVM_BOOL) &&
           pfvm_tensor_numel(t) <= PFVM_FOLD_LIMIT;
}

/* 1 when the plan reads input i's contents: a small integer tensor not
 * declared varying. */
static int pfvm__input_known(const pfvm_exec *e, int i, const pfvm_tensor *t)
{
    return pfvm__small_int(t) && !e->varying[i];
}

/* The signature decides whether a new binding can reuse the plan: input
 * kinds, dtypes and dims, and the contents the plan read (small integer
 * inputs: the plan may have folded them). */
static int pfvm__signature(const pfvm_exec *e, const pfvm_tensor *const *in, int n, int64_t **sig)
{
    int i, d, ok;
    pfvm__arrtrunc(*sig, 0);
    ok = pfvm__arrpush(*sig, (int64_t)n); /* never empty */
    for (i = 0; i < n && ok; i++) {
        const pfvm_tensor *t = in[i];
        ok &= pfvm__arrpush(*sig, (int64_t)t->kind);
        if (t->kind != PFVM_KIND_TENSOR) {
            /* sequences and optionals: replan each time (rare, cheap graphs) */
            ok &= pfvm__arrpush(*sig, (int64_t)(intptr_t)t);
            ok &= pfvm__arrpush(*sig, -7);
            continue;
        }
        ok &= pfvm__arrpush(*sig, (int64_t)t->dtype);
        ok &= pfvm__arrpush(*sig, (int64_t)t->rank);
        for (d = 0; d < t->rank; d++)
            ok &= pfvm__arrpush(*sig, t->dims[d]);
        if (pfvm__input_known(e, i, t)) {
            int64_t k, numel = pfvm_tensor_numel(t);
            for (k = 0; k < numel && ok; k++)
                ok &= pfvm__arrpush(*sig, pfvm__tensor_int_at(t, k)); /* integers only: no double linked */
        }
    }
    return ok;
}
#endif

#ifdef PFVM_NO_SHAPE_INFERENCE
/* Without inference the plan reads no input's contents (nothing folds at
 * bind), only its type and dims: it stays while every input is a tensor
 * of the element type and dims of the one bound before (kept in vals). */
static int pfvm__same_binding(const pfvm_exec *e, const pfvm_tensor *const *in, int n)
{
    int i;
    for (i = 0; i < n; i++) {
        const pfvm_tensor *a = &e->vals[e->ins[i]->id], *b = in[i];
        if (a->kind != PFVM_KIND_TENSOR || b->kind != PFVM_KIND_TENSOR || a->dtype != b->dtype || a->rank != b->rank ||
            (b->rank > 0 && memcmp(a->dims, b->dims, sizeof(int64_t) * (size_t)b->rank)))
            return 0;
    }
    return 1;
}
#endif

static pfvm_code pfvm__check_input(const pfvm_value *v, const pfvm_tensor *t, pfvm_status *st)
{
    const pfvm_type *ty = &v->type;
    int d;
    if (!t)
        return pfvm__fail(st, PFVM_ERR_INVALID, "input '%s' is not given", v->name);
    if (ty->kind == PFVM_KIND_UNKNOWN)
        return PFVM_OK;
    /* a value where an optional is declared is a present optional */
    if (ty->kind == PFVM_KIND_OPTIONAL && t->kind != PFVM_KIND_OPTIONAL)
        return PFVM_OK;
    if (ty->kind != t->kind)
        return pfvm__fail(st, PFVM_ERR_INVALID, "input '%s': expected a %s, got a %s", v->name,
                          ty->kind == PFVM_KIND_TENSOR ? "tensor" : ty->kind == PFVM_KIND_SEQUENCE ? "sequence" : "optional",
                          t->kind == PFVM_KIND_TENSOR ? "tensor" : t->kind == PFVM_KIND_SEQUENCE ? "sequence" : "optional");
    if (t->kind != PFVM_KIND_TENSOR)
        return PFVM_OK;
    if (ty->dtype && ty->dtype != t->dtype)
        return pfvm__fail(st, PFVM_ERR_INVALID, "input '%s': expected element type %s, got %s", v->name,
                          pfvm_dtype_name(ty->dtype), pfvm_dtype_name(t->dtype));
    if (ty->shape.rank >= 0) {
        if (ty->shape.rank != t->rank)
            return pfvm__fail(st, PFVM_ERR_SHAPE, "input '%s': expected rank %d, got %d", v->name, ty->shape.rank,
                              t->rank);
        for (d = 0; d < t->rank; d++) {
            int64_t want;
            if (pfvm_sym_is_const(ty->shape.dims[d], &want) && want != t->dims[d])
                return pfvm__fail(st, PFVM_ERR_SHAPE, "input '%s': dimension %d is %lld, expected %lld", v->name, d,
                                  (long long)t->dims[d], (long long)want);
        }
    }
    return PFVM_OK;
}

static pfvm_code pfvm__plan(pfvm_exec *e, pfvm_status *st);
static void pfvm__node_io(pfvm_exec *e, const pfvm_node *n);

/* Compiles every fused group's loop program at bind, for the planned
 * input types, so that pfvm_exec_run allocates nothing (issue 19). Only
 * inputs known at plan time count as constants for the compiler. */
/* Concrete dims of a value from its type (rank -1 when not all known). */
static void pfvm__type_dims(const pfvm_type *t, pfvm_dims *d)
{
    int i;
    d->rank = -1;
    if (!t || t->kind != PFVM_KIND_TENSOR || t->shape.rank < 0 || t->shape.rank > PFVM_MAX_RANK)
        return;
    for (i = 0; i < t->shape.rank; i++)
        if (!pfvm_sym_is_const(t->shape.dims[i], &d->d[i]))
            return;
    d->rank = t->shape.rank;
}

/* The workspace node n asks for (pfvm_workspace_fn); a body node of a
 * fused call (call != NULL) takes its inputs' dims from the call's. */
static size_t pfvm__node_workspace(pfvm_exec *e, const pfvm_node *n, const pfvm_node *call)
{
    pfvm_dims in[16], out[8];
    int n_in = n->n_inputs < 16 ? n->n_inputs : 16, n_out = n->n_outputs < 8 ? n->n_outputs : 8, i, j;
    if (!n->op || !n->op->workspace)
        return 0;
    for (i = 0; i < n_in + n_out; i++) {
        const pfvm_value *v = i < n_in ? n->inputs[i] : n->outputs[i - n_in];
        pfvm_dims *d = i < n_in ? &in[i] : &out[i - n_in];
        d->rank = -1;
        if (!v)
            continue;
        if (!call) {
            pfvm__type_dims(&e->iv[v->id].type, d);
            continue;
        }
        pfvm__type_dims(&v->type, d);
        for (j = 0; j < (int)stbds_arrlen(v->graph->inputs) && j < call->n_inputs; j++)
            if (v->graph->inputs[j] == v && call->inputs[j])
                pfvm__type_dims(&e->iv[call->inputs[j]->id].type, d);
    }
    return n->op->workspace(n, in, n_in, out, n_out);
}

/* The executor whose pfvm_parallel serves e's kernels: the outermost
 * (subgraph executors run with their parent's threads). */
static const pfvm_exec *pfvm__exec_root(const pfvm_exec *e)
{
    for (; e->parent; e = e->parent) {
    }
    return e;
}

static int pfvm__exec_threads(const pfvm_exec *e)
{
#ifdef PFVM_NO_THREADS
    (void)e;
    return 1;
#else
    const pfvm_exec *r = pfvm__exec_root(e);
    return r->par.parallel_for && r->par.threads > 1 ? r->par.threads : 1;
#endif
}

/* Reserves, when binding, the largest workspace a node's kernel will ask
 * for (a hook's bytes per thread: kernels that split their work give each
 * part a workspace of its own), so that running does not allocate it. */
static pfvm_code pfvm__reserve_workspace(pfvm_exec *e, pfvm_status *st)
{
    size_t most = 0;
    int i, j;
    for (i = 0; i < e->nn; i++) {
        const pfvm_node *n = e->g->nodes[i];
        size_t w;
        if (e->skip[i])
            continue;
        w = pfvm__node_workspace(e, n, NULL);
        most = w > most ? w : most;
        if (pfvm__fz_is_call(n)) {
            const pfvm_function *f = pfvm_model_function(n->graph->model, n->domain, n->op_type);
            for (j = 0; f && f->body && j < (int)stbds_arrlen(f->body->nodes); j++) {
                w = pfvm__node_workspace(e, f->body->nodes[j], n);
                most = w > most ? w : most;
            }
        }
    }
    if (!pfvm__mul_size(most, (size_t)pfvm__exec_threads(e), &most))
        most = (size_t)-1;
    if (most > e->scratch_size) {
        void *p;
        if (most > e->limits.max_tensor_bytes)
            return PFVM_OK; /* the kernel asks, and is refused, when it runs */
        if (!(p = pfvm__realloc(e->scratch, most)))
            return pfvm__fail(st, PFVM_ERR_NOMEM, "cannot allocate %lu bytes of kernel workspace", (unsigned long)most);
        e->scratch = p;
        e->scratch_size = most;
    }
    return PFVM_OK;
}

static const pfvm__kctx_services *pfvm__exec_services(void);

/* The kernel context for node n of e over e's node io (pfvm__node_io):
 * for its kernel, its prepare hook and the sizing of dynamic outputs. */
static void pfvm__kctx_of(pfvm_exec *e, pfvm_node *n, pfvm_kctx *k, pfvm_status *st)
{
    k->node = n;
    k->n_in = n->n_inputs;
    k->n_out = n->n_outputs;
    k->in = e->kin;
    k->out = e->kout;
    k->st = st;
    k->exec = e;
    k->services = pfvm__exec_services();
    k->max_total_bytes = e->limits.max_total_bytes;
    k->max_loop_iterations = e->limits.max_loop_iterations;
    k->state = n->id >= 0 && n->id < e->nn && e->g->nodes[n->id] == n ? e->state[n->id] : NULL;
}

/* Bind-time preparation: fused calls compile their loops, operators with
 * a prepare hook precompute from their constant inputs. */
static pfvm_code pfvm__prepare_nodes(pfvm_exec *e, pfvm_status *st)
{
    int i, j;
    for (i = 0; i < e->nn; i++) {
        pfvm_node *n = e->g->nodes[i];
        pfvm_dtype dt[64];
        const pfvm_tensor *consts[64], *known[64];
        pfvm_kctx k;
        pfvm_code rc;
        int fused = pfvm__fz_is_call(n);
        if (e->skip[i] || (!fused && !(n->op && n->op->prepare)) || n->n_inputs > 64)
            continue;
        pfvm__node_io(e, n);
        for (j = 0; j < n->n_inputs; j++) {
            const pfvm_value *v = n->inputs[j];
            const pfvm_ival *iv = v ? &e->iv[v->id] : NULL;
            dt[j] = iv && iv->type.kind == PFVM_KIND_TENSOR ? iv->type.dtype : PFVM_UNDEFINED;
            consts[j] = v && e->vkind[v->id] == PFVM__V_KNOWN ? e->kin[j] : NULL;
            /* prepare hooks also see initializers (not trained variables) and inputs held constant */
            known[j] = consts[j] || (iv && iv->value) ? e->kin[j] : NULL;
        }
        pfvm__kctx_of(e, n, &k, st);
        if (fused) {
            /* the loop bakes in what is known at bind, initializers too (as
             * Conv packs its weights): LayerNorm's Pow(x, 2.0) becomes x*x */
            rc = pfvm__fz_prepare(&k, dt, known, known);
        } else {
            void *ns = k.state;
            void (*nf)(void *) = e->state_free[i];
            rc = n->op->prepare(&k, known, &ns, &nf);
            if (ns != k.state || nf != e->state_free[i])
                pfvm_kctx_set_state(&k, ns, nf);
        }
        if (rc != PFVM_OK) {
            pfvm__name_node(n, st, rc);
            return rc;
        }
    }
    return PFVM_OK;
}

/* 1 when value v's tensor keeps its kind and dims from run to run of one
 * bind: a tensor of this graph whose size the plan fixed (an outer
 * scope's value changes with each iteration of the loop that runs this
 * graph; a dynamic one is sized by its kernel). */
static int pfvm__fixed_between_runs(const pfvm_exec *e, const pfvm_value *v)
{
    return !v || (v->graph == e->g && e->vkind[v->id] != PFVM__V_DYNAMIC && e->vals[v->id].kind == PFVM_KIND_TENSOR);
}

/* What pfvm__touched counts for each node, once per bind where that
 * cannot change between its runs: the inputs' views a same-plan bind
 * gives keep their dims (the binding's signature). The nodes that read an
 * outer scope or a dynamic value, and a loop body's (its executor binds
 * elsewhere), count at each run. */
static void pfvm__touch_at_bind(pfvm_exec *e)
{
    int i, j;
    for (i = 0; i < e->nn; i++) {
        const pfvm_node *n = e->g->nodes[i];
        int fixed = !e->skip[i] && !e->parent;
        for (j = 0; fixed && j < n->n_inputs; j++)
            fixed = pfvm__fixed_between_runs(e, n->inputs[j]);
        for (j = 0; fixed && j < n->n_outputs; j++)
            fixed = pfvm__fixed_between_runs(e, n->outputs[j]);
        e->touch[i] = PFVM__TOUCH_RUN;
        if (!fixed)
            continue;
        pfvm__node_io(e, n);
        /* saturated (the mark's value): counted per run, as before */
        e->touch[i] = pfvm__touched(e->kin, n->n_inputs) +
                      pfvm__touched((const pfvm_tensor *const *)e->kout, n->n_outputs);
    }
}

/* One slot per input for pfvm_exec_set_input, NULL until given. */
static int pfvm__given_reserve(pfvm_exec *e)
{
    size_t i, old = (size_t)stbds_arrlen(e->given), n = (size_t)pfvm_exec_num_inputs(e);
    if (old >= n)
        return 1;
    if (!pfvm__arrsetlen(e->given, n))
        return 0;
    for (i = old; i < n; i++)
        e->given[i] = NULL;
    return 1;
}

static pfvm_code pfvm__scoped_exec_bind(pfvm_exec *e, const pfvm_tensor *const *inputs, int n, pfvm_status *st)
{
    int i;
    int64_t *sig = NULL;
    pfvm_code rc;
    if (!inputs && n == 0 && pfvm_exec_num_inputs(e) > 0) {
        if (!pfvm__given_reserve(e))
            return pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
        inputs = e->given;
        n = pfvm_exec_num_inputs(e);
    }
    if (n != pfvm_exec_num_inputs(e))
        return pfvm__fail(st, PFVM_ERR_INVALID, "graph '%s' takes %d inputs, %d given", e->g->name,
                          pfvm_exec_num_inputs(e), n);
    for (i = 0; i < n; i++)
        if ((rc = pfvm__check_input(e->ins[i], inputs[i], st)) != PFVM_OK)
            return rc;
    if (!pfvm__arrsetlen(e->bound, n))
        return pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
    for (i = 0; i < n; i++)
        e->bound[i] = inputs[i];
#ifdef PFVM_NO_SHAPE_INFERENCE
    if (e->planned && pfvm__same_binding(e, inputs, n)) {
        for (i = 0; i < n; i++)
            e->vals[e->ins[i]->id] = *inputs[i];
        return PFVM_OK;
    }
    (void)sig;
#else
    if (!pfvm__signature(e, inputs, n, &sig) || !sig) {
        stbds_arrfree(sig);
        e->planned = 0;
        return pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
    }
    if (e->planned && stbds_arrlen(sig) == stbds_arrlen(e->sig) &&
        !memcmp(sig, e->sig, sizeof(int64_t) * stbds_arrlen(sig))) {
        stbds_arrfree(sig);
        /* same plan: only the input views change */
        for (i = 0; i < n; i++)
            e->vals[e->ins[i]->id] = *inputs[i];
        return PFVM_OK;
    }
    stbds_arrfree(e->sig);
    e->sig = sig;
#endif
    e->planned = 0;
    if (!e->parent)
        e->operations = 0;
    rc = pfvm__plan(e, st);
    if (!rc)
        rc = pfvm__prepare_nodes(e, st);
    if (!rc)
        rc = pfvm__reserve_workspace(e, st);
    if (!rc) {
        pfvm__touch_at_bind(e);
        e->planned = 1;
    }
    return rc;
}

pfvm_code pfvm_exec_bind(pfvm_exec *e, const pfvm_tensor *const *inputs, int n, pfvm_status *st)
{
    PFVM__SCOPED(pfvm_code, pfvm__model_allocator(e ? e->m : NULL), pfvm__scoped_exec_bind(e, inputs, n, st));
}

/* ---- planning ---------------------------------------------------------------- */

static void pfvm__ival_from_tensor(pfvm_exec *e, pfvm_ival *iv, const pfvm_tensor *t, int known)
{
    memset(iv, 0, sizeof *iv);
    iv->type.kind = t->kind;
    iv->type.dtype = t->kind == PFVM_KIND_TENSOR ? t->dtype : t->elem_dtype;
    if (t->kind == PFVM_KIND_TENSOR)
        pfvm_shape_from_dims(e->m->syms, &iv->type.shape, t->rank, t->dims, NULL);
    else
        pfvm_shape_unknown(&iv->type.shape);
    if (known)
        iv->value = t;
}

static int pfvm__shape_const(const pfvm_type *ty, int64_t *dims)
{
    int i;
    if (ty->kind != PFVM_KIND_TENSOR || ty->shape.rank < 0)
        return 0;
    for (i = 0; i < ty->shape.rank; i++)
        if (!pfvm_sym_is_const(ty->shape.dims[i], &dims[i]) || dims[i] < 0)
            return 0;
    return 1;
}

static pfvm_code pfvm__call_kernel(pfvm_exec *e, pfvm_node *n, pfvm_status *st);

/* Gives the node's input and output scratch pointers. */
static void pfvm__node_io(pfvm_exec *e, const pfvm_node *n)
{
    int j;
    for (j = 0; j < n->n_inputs; j++)
        e->kin[j] = n->inputs[j] ? pfvm__tensor_of(e, n->inputs[j]) : NULL;
    for (j = 0; j < n->n_outputs; j++)
        e->kout[j] = n->outputs[j] ? &e->vals[n->outputs[j]->id] : NULL;
}

#ifndef PFVM_NO_SHAPE_INFERENCE /* bind-time inference, folding and the planner */
/* Runs a node whose inputs are all known, at plan time, into the plan arena. */
static pfvm_code pfvm__fold_node(pfvm_exec *e, pfvm_node *n, pfvm_status *st)
{
    int j;
    for (j = 0; j < n->n_outputs; j++) {
        pfvm_value *v = n->outputs[j];
        pfvm_tensor *t;
        int64_t dims[PFVM_MAX_RANK];
        size_t bytes;
        if (!v)
            continue;
        t = &e->vals[v->id];
        memset(t, 0, sizeof *t);
        t->kind = PFVM_KIND_TENSOR;
        t->dtype = e->iv[v->id].type.dtype;
        pfvm__shape_const(&e->iv[v->id].type, dims);
        pfvm_tensor_set_shape(t, e->iv[v->id].type.shape.rank, dims, NULL);
        if (!pfvm__mul_size((size_t)pfvm_tensor_numel(t), pfvm_dtype_size(t->dtype), &bytes))
            bytes = (size_t)-1;
        if (pfvm__limit_tensor(e, v, bytes, e->folded_bytes, st))
            return st ? st->code : PFVM_ERR_NOMEM;
        t->data = pfvm__arena_alloc(&e->plan_arena, bytes ? bytes : 1);
        if (!t->data)
            return pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
        t->nbytes = bytes;
        e->folded_bytes += bytes;
    }
    if (pfvm__call_kernel(e, n, st))
        return st ? st->code : PFVM_ERR_RUNTIME;
    for (j = 0; j < n->n_outputs; j++)
        if (n->outputs[j]) {
            e->iv[n->outputs[j]->id].value = &e->vals[n->outputs[j]->id];
            e->vkind[n->outputs[j]->id] = PFVM__V_KNOWN;
        }
    e->skip[n->id] = 1;
    e->n_folded++;
    return PFVM_OK;
}

static int pfvm__has_subgraph(const pfvm_node *n)
{
    int j;
    for (j = 0; j < n->n_attrs; j++)
        if (n->attrs[j].type == PFVM_ATTR_GRAPH || n->attrs[j].type == PFVM_ATTR_GRAPHS)
            return 1;
    return 0;
}

static int pfvm__foldable(pfvm_exec *e, const pfvm_node *n)
{
    int j;
    if (!n->op->kernel || (n->op->flags & PFVM_OP_NONDETERMINISTIC) || pfvm__has_subgraph(n))
        return 0;
    for (j = 0; j < n->n_inputs; j++) {
        const pfvm_ival *iv;
        if (!n->inputs[j])
            continue;
        iv = pfvm__ival_of(e, n->inputs[j]);
        if (!iv || !iv->value || iv->value->kind != PFVM_KIND_TENSOR || iv->value->dtype == PFVM_STRING)
            return 0;
    }
    for (j = 0; j < n->n_outputs; j++) {
        int64_t dims[PFVM_MAX_RANK], numel = 1;
        int d;
        const pfvm_type *ty;
        if (!n->outputs[j])
            continue;
        ty = &e->iv[n->outputs[j]->id].type;
        if (!pfvm__shape_const(ty, dims) || ty->dtype == PFVM_STRING || !pfvm_dtype_size(ty->dtype))
            return 0;
        for (d = 0; d < ty->shape.rank; d++)
            if (!pfvm__mul_i64(numel, dims[d], &numel))
                return 0;
        if (numel > PFVM_FOLD_LIMIT)
            return 0;
    }
    return 1;
}

/* Infers every node for the bound shapes; folds what can be folded. */
static pfvm_code pfvm__plan_types(pfvm_exec *e, pfvm_status *st)
{
    int i, j;
    for (i = 0; i < e->nv; i++) {
        pfvm_value *v = e->g->values[i];
        memset(&e->iv[i], 0, sizeof e->iv[i]);
        memset(&e->vals[i], 0, sizeof e->vals[i]);
        e->vkind[i] = PFVM__V_ARENA;
        if (v->init) {
            e->vals[i] = *v->init;
            e->vals[i].owns_data = e->vals[i].owns_strings = 0;
            pfvm__ival_from_tensor(e, &e->iv[i], v->init, 1);
            e->vkind[i] = PFVM__V_EXTERNAL;
        }
    }
    /* training state: a variable, never folded */
    for (i = 0; i < (int)stbds_arrlen(e->feedback); i++)
        pfvm__ival_from_tensor(e, &e->iv[e->feedback[i].state->id], e->feedback[i].state->init, 0);
    for (i = 0; i < (int)stbds_arrlen(e->ins); i++) {
        pfvm_value *v = e->ins[i];
        const pfvm_tensor *t = e->bound[i];
        e->vals[v->id] = *t;
        e->vals[v->id].owns_data = e->vals[v->id].owns_strings = 0;
        pfvm__ival_from_tensor(e, &e->iv[v->id], t, pfvm__input_known(e, i, t));
        e->vkind[v->id] = PFVM__V_EXTERNAL;
    }
    /* subgraph inputs without a binding (child executors bind all) */
    for (i = 0; i < e->nn; i++) {
        pfvm_node *n = e->g->nodes[i];
        e->skip[i] = 0;
        for (j = 0; j < n->n_inputs; j++)
            e->iin[j] = n->inputs[j] ? pfvm__ival_of(e, n->inputs[j]) : NULL;
        for (j = 0; j < n->n_outputs; j++)
            e->iout[j] = n->outputs[j] ? &e->iv[n->outputs[j]->id] : NULL;
        if (pfvm__infer_node(n, e->iin, e->iout, e->m->syms, &e->plan_arena, st))
            return st ? st->code : PFVM_ERR_SHAPE;
        {
            int all_known = 1;
            for (j = 0; j < n->n_outputs; j++) {
                pfvm_ival *o = e->iout[j];
                if (!o)
                    continue;
                if (!pfvm__ival_materialize(o, &e->plan_arena))
                    all_known = 0;
            }
            if (all_known) {
                /* inference knew the contents (Constant, Shape, ...) */
                for (j = 0; j < n->n_outputs; j++)
                    if (n->outputs[j]) {
                        e->vals[n->outputs[j]->id] = *e->iout[j]->value;
                        e->vals[n->outputs[j]->id].owns_data = 0;
                        e->vals[n->outputs[j]->id].owns_strings = 0;
                        e->vkind[n->outputs[j]->id] = PFVM__V_KNOWN;
                    }
                e->skip[i] = 1;
                e->n_folded++;
                continue;
            }
        }
        if (pfvm__foldable(e, n) && pfvm__fold_node(e, n, st))
            return st ? st->code : PFVM_ERR_RUNTIME;
    }
    return PFVM_OK;
}

/* Marks the arena entries stored over their node's input 0
 * (pfvm__node_in_place, that input read last by the node, the same
 * size). span[k] becomes, for a root entry, the last step of it and of the
 * chain stored over it, and for an in-place entry, its root's index.
 * entry_of: scratch of e->nv ints. */
static void pfvm__plan_in_place(pfvm_exec *e, int *span, int *entry_of)
{
    int n = (int)stbds_arrlen(e->entries), k, step;
    for (k = 0; k < e->nv; k++)
        entry_of[k] = -1;
    for (k = 0; k < n; k++) {
        pfvm_plan_entry *pe = &e->entries[k];
        if (pe->kind == 0 && pe->last < 0)
            pe->last = pe->first; /* unused output: still written */
        pe->in_place = 0;
        span[k] = pe->last;
        if (pe->value->graph == e->g)
            entry_of[pe->value->id] = k;
    }
    /* entries follow value order; chains need node order */
    for (step = 0; step < e->nn; step++) {
        const pfvm_node *nd = e->g->nodes[step];
        int ky, kx;
        if (e->skip[step] || !pfvm__node_in_place(nd))
            continue;
        ky = entry_of[nd->outputs[0]->id];
        kx = entry_of[nd->inputs[0]->id];
        if (ky < 0 || kx < 0 || e->entries[ky].kind != 0 || e->entries[kx].kind != 0 || e->entries[kx].last != step ||
            e->entries[kx].bytes != e->entries[ky].bytes)
            continue;
        if (e->entries[kx].in_place)
            kx = span[kx];
        e->entries[ky].in_place = 1;
        span[kx] = span[ky] > span[kx] ? span[ky] : span[kx];
        span[ky] = kx;
    }
}

#if PFVM__HAVE_JOIN
/* Whether arena entry kx may be stored in a slice of a join's output at
 * step: read last by that node, once, and no root or member of a chain
 * stored in place, nor a join's output with slices of its own (start). */
static int pfvm__plan_join_input(const pfvm_exec *e, const pfvm_node *nd, int j, int kx, const int *span,
                                 const int *start, int step)
{
    const pfvm_plan_entry *px = &e->entries[kx];
    int i;
    if (px->kind != 0 || px->in_place || px->last != step || span[kx] != step || start[kx] != px->first)
        return 0;
    for (i = 0; i < nd->n_inputs; i++)
        if (i != j && nd->inputs[i] == nd->inputs[j])
            return 0;
    return 1;
}

/* Stores the inputs of a joining node (PFVM__OP_JOIN: Concat) in their
 * slices of its output where each slice is one contiguous, aligned range
 * (every axis before the join's has extent 1, as a batch of one on the
 * channel axis) and the node reads the input last: the join then copies
 * nothing. Such an entry becomes in_place 2, span[k] its output's entry and
 * at[k] its byte offset there; the output's storage lives from the first
 * of them on (start). entry_of: pfvm__plan_in_place's. */
static void pfvm__plan_joins(pfvm_exec *e, int *span, int *start, const int *entry_of, size_t *at)
{
    int step, j, d;
    for (step = 0; step < e->nn; step++) {
        const pfvm_node *nd = e->g->nodes[step];
        const pfvm_tensor *y;
        size_t off = 0;
        int a, ky;
        int64_t outer = 1;
        if (e->skip[step] || nd->n_outputs < 1 || !nd->outputs[0] || nd->outputs[0]->graph != e->g ||
            (ky = entry_of[nd->outputs[0]->id]) < 0 || e->entries[ky].kind != 0 || e->entries[ky].in_place)
            continue;
        y = &e->vals[nd->outputs[0]->id];
        if (y->dtype == PFVM_STRING || (a = pfvm__node_join_axis(nd, y->rank)) < 0)
            continue;
        for (d = 0; d < a; d++)
            outer *= y->dims[d];
        for (j = 0; j < nd->n_inputs && outer == 1; j++) {
            const pfvm_value *x = nd->inputs[j];
            int kx = x && x->graph == e->g ? entry_of[x->id] : -1;
            if (kx < 0 || e->entries[kx].kind == 2 || e->vals[x->id].dtype != y->dtype || e->vals[x->id].rank < 0)
                break; /* no slice known from here on (a size known only when running) */
            if (off % PFVM_DATA_ALIGN == 0 && pfvm__plan_join_input(e, nd, j, kx, span, start, step)) {
                e->entries[kx].in_place = 2;
                span[kx] = ky;
                at[kx] = off;
                if (e->entries[kx].first < start[ky])
                    start[ky] = e->entries[kx].first;
            }
            off += (size_t)pfvm_tensor_numel(&e->vals[x->id]) * pfvm_dtype_size(y->dtype);
        }
    }
}
#endif

/* Chooses arena or dynamic storage, computes lifetimes and offsets. */
static pfvm_code pfvm__plan_memory(pfvm_exec *e, pfvm_status *st)
{
    int i, j, k, n_arena = 0;
    int *last;
    pfvm_value **deps = NULL;
    int *order, *span, *start;
    size_t peak = 0, *at;
    pfvm__arrtrunc(e->entries, 0);
    last = (int *)pfvm__calloc((size_t)e->nv + 1, sizeof *last);
    if (!last)
        return pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
    for (i = 0; i < e->nv; i++)
        last[i] = -1;
    for (i = 0; i < e->nn; i++) {
        if (e->skip[i])
            continue; /* folded while binding: reads nothing when running */
        if (!pfvm__node_deps(e->g->nodes[i], &deps)) {
            stbds_arrfree(deps);
            pfvm__free(last);
            return pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
        }
        for (j = 0; j < (int)stbds_arrlen(deps); j++)
            if (deps[j]->graph == e->g)
                last[deps[j]->id] = i;
    }
    stbds_arrfree(deps);
    for (i = 0; i < (int)stbds_arrlen(e->g->outputs); i++)
        if (e->g->outputs[i]->graph == e->g)
            last[e->g->outputs[i]->id] = e->nn;
    for (i = 0; i < e->nv; i++) {
        pfvm_value *v = e->g->values[i];
        pfvm_plan_entry pe;
        int64_t dims[PFVM_MAX_RANK];
        memset(&pe, 0, sizeof pe);
        pe.value = v;
        pe.first = v->producer ? v->producer->id : -1;
        pe.last = last[i];
        if (e->vkind[i] == PFVM__V_EXTERNAL || e->vkind[i] == PFVM__V_KNOWN) {
            pe.kind = e->vkind[i] == PFVM__V_KNOWN ? 1 : 3;
            pe.bytes = e->vals[i].nbytes;
            if (!pfvm__arrpush(e->entries, pe)) {
                pfvm__free(last);
                return pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
            }
            continue;
        }
        if (!v->producer)
            continue; /* unused name */
        {
            const pfvm_type *ty = &e->iv[i].type;
            pfvm_tensor *t = &e->vals[i];
            size_t bytes = 0;
            int fixed = pfvm__shape_const(ty, dims) && ty->dtype != PFVM_STRING && pfvm_dtype_size(ty->dtype);
            memset(t, 0, sizeof *t);
            t->kind = ty->kind == PFVM_KIND_UNKNOWN ? PFVM_KIND_TENSOR : ty->kind;
            t->dtype = ty->dtype;
            t->rank = -1;
            if (fixed) {
                /* a size known now is checked now: too large (or past
                 * size_t) fails the bind before anything is allocated */
                int64_t numel = 1;
                int over = 0;
                for (k = 0; k < ty->shape.rank; k++)
                    if (dims[k] < 0)
                        fixed = 0; /* left to the kernel, which rejects it */
                    else if (!pfvm__mul_i64(numel, dims[k], &numel))
                        over = 1;
                if (!fixed)
                    bytes = 0;
                else if (over || (uint64_t)numel > SIZE_MAX || !pfvm__mul_size((size_t)numel, pfvm_dtype_size(ty->dtype), &bytes) ||
                    ((size_t)-1) - bytes < PFVM_DATA_ALIGN)
                    bytes = (size_t)-1;
                if (pfvm__limit_tensor(e, v, bytes, 0, st)) {
                    pfvm__free(last);
                    return st ? st->code : PFVM_ERR_NOMEM;
                }
            }
            if (fixed) {
                pfvm_tensor_set_shape(t, ty->shape.rank, dims, NULL);
                t->nbytes = bytes;
                pe.bytes = (bytes + PFVM_DATA_ALIGN - 1) & ~(size_t)(PFVM_DATA_ALIGN - 1);
                pe.kind = 0;
                e->vkind[i] = PFVM__V_ARENA;
                n_arena++;
            } else {
                if (ty->kind == PFVM_KIND_TENSOR && ty->shape.rank >= 0 && pfvm__shape_const(ty, dims))
                    pfvm_tensor_set_shape(t, ty->shape.rank, dims, NULL); /* strings: shape known */
                pe.kind = 2;
                e->vkind[i] = PFVM__V_DYNAMIC;
            }
            if (!pfvm__arrpush(e->entries, pe)) {
                pfvm__free(last);
                return pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
            }
        }
    }
    pfvm__free(last);
    order = (int *)pfvm__calloc(2 * (size_t)stbds_arrlen(e->entries) + 1, sizeof *order);
    span = (int *)pfvm__calloc((size_t)stbds_arrlen(e->entries) + (size_t)e->nv + 1, sizeof *span);
    at = (size_t *)pfvm__calloc((size_t)stbds_arrlen(e->entries) + 1, sizeof *at);
    if (!order || !span || !at) {
        pfvm__free(order);
        pfvm__free(span);
        pfvm__free(at);
        return pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
    }
    start = order + stbds_arrlen(e->entries);
    pfvm__plan_in_place(e, span, span + stbds_arrlen(e->entries));
    for (i = 0; i < (int)stbds_arrlen(e->entries); i++)
        start[i] = e->entries[i].first;
#if PFVM__HAVE_JOIN
    pfvm__plan_joins(e, span, start, span + stbds_arrlen(e->entries), at);
#endif
    /* offsets: largest first, each at the lowest offset that does not overlap
     * a placed tensor whose lifetime overlaps; a tensor stored in place
     * takes its input's offset, whose lifetime (span) it extends */
    n_arena = 0;
    for (i = 0; i < (int)stbds_arrlen(e->entries); i++)
        if (e->entries[i].kind == 0 && !e->entries[i].in_place)
            order[n_arena++] = i;
    /* insertion sort by size, descending (stable, deterministic) */
    for (i = 1; i < n_arena; i++) {
        int x = order[i];
        for (j = i - 1; j >= 0 && e->entries[order[j]].bytes < e->entries[x].bytes; j--)
            order[j + 1] = order[j];
        order[j + 1] = x;
    }
    e->arena_size = 0;
    for (i = 0; i < n_arena; i++) {
        pfvm_plan_entry *pi = &e->entries[order[i]];
        size_t off = 0;
        int moved = 1;
        while (moved) {
            moved = 0;
            for (j = 0; j < i; j++) {
                pfvm_plan_entry *pj = &e->entries[order[j]];
                int overlap_time = !(span[order[j]] < start[order[i]] || span[order[i]] < start[order[j]]);
                if (overlap_time && off < pj->offset + pj->bytes && pj->offset < off + pi->bytes) {
                    off = pj->offset + pj->bytes;
                    moved = 1;
                }
            }
        }
        pi->offset = off;
        if (off + pi->bytes > e->arena_size)
            e->arena_size = off + pi->bytes;
    }
    for (i = 0; i < (int)stbds_arrlen(e->entries); i++)
        if (e->entries[i].in_place) /* span: the root entry, or the join's output */
            e->entries[i].offset = e->entries[span[i]].offset + at[i];
    if (e->arena_size > e->limits.max_arena_bytes || e->arena_size > e->limits.max_total_bytes ||
        e->folded_bytes > e->limits.max_total_bytes - e->arena_size) {
        pfvm__free(order);
        pfvm__free(span);
        pfvm__free(at);
        if (e->arena_size > e->limits.max_arena_bytes)
            return pfvm__fail(st, PFVM_ERR_NOMEM, "graph '%s': the plan needs an arena of %zu bytes, over the limit of %zu",
                              e->g->name ? e->g->name : "", e->arena_size, e->limits.max_arena_bytes);
        return pfvm__fail(st, PFVM_ERR_NOMEM,
                          "graph '%s': the plan needs %zu bytes (arena %zu, folded constants %zu), over the limit of %zu in all",
                          e->g->name ? e->g->name : "", e->arena_size + e->folded_bytes, e->arena_size, e->folded_bytes,
                          e->limits.max_total_bytes);
    }
    /* lower bound: the largest sum of sizes live at one step */
    for (k = 0; k <= e->nn; k++) {
        size_t live = 0;
        for (i = 0; i < n_arena; i++) {
            pfvm_plan_entry *pi = &e->entries[order[i]];
            if (start[order[i]] <= k && k <= span[order[i]])
                live += pi->bytes;
        }
        if (live > peak)
            peak = live;
    }
    e->lower_bound = peak;
    pfvm__free(order);
    pfvm__free(span);
    pfvm__free(at);
    return PFVM_OK;
}

#endif /* PFVM_NO_SHAPE_INFERENCE */

static pfvm_code pfvm__plan_arena(pfvm_exec *e, pfvm_status *st)
{
    int i;
    if (e->user_arena) {
        if (e->user_arena_size < e->arena_size)
            return pfvm__fail(st, PFVM_ERR_NOMEM, "the arena given holds %zu bytes, the plan needs %zu",
                              e->user_arena_size, e->arena_size);
        if (e->arena_owned)
            pfvm__data_free(e->arena);
        e->arena = e->user_arena;
        e->arena_owned = 0;
    } else if (!e->arena_owned || e->arena_size > 0) {
        if (e->arena_owned)
            pfvm__data_free(e->arena);
        e->arena = (unsigned char *)pfvm__data_alloc(e->arena_size, 0);
        e->arena_owned = 1;
        if (!e->arena)
            return pfvm__fail(st, PFVM_ERR_NOMEM, "cannot allocate an arena of %zu bytes", e->arena_size);
    }
    for (i = 0; i < (int)stbds_arrlen(e->entries); i++) {
        pfvm_plan_entry *pe = &e->entries[i];
        if (pe->kind == 0)
            e->vals[pe->value->id].data = e->arena + pe->offset;
    }
    return PFVM_OK;
}

/* ---- stored plans ------------------------------------------------------------- */

/* A plan stored in the model by pfvm_exec_store_plan, under this metadata
 * key: lines of tab-separated fields,
 *   pfvm-plan 1
 *   arena     BYTES
 *   a         OFFSET BYTES VALUE                 a value of the main graph in the arena
 *   d         DOMAIN FUNCTION VALUE DTYPE        element type of a fused body's value
 * Values' shapes are the graph's value_info; every other value a node
 * produces is sized by its kernel when it runs. Binding a model that holds
 * one needs neither inference nor the planner (PFVM_NO_SHAPE_INFERENCE). */
#define PFVM__PLAN_KEY "pfvm.plan"
#define PFVM__PLAN_FIELD 256

static const char *pfvm__stored_plan(const pfvm_exec *e)
{
    int i;
    if (e->parent || !e->m || e->g != e->m->graph)
        return NULL;
    for (i = 0; i < (int)stbds_arrlen(e->m->metadata); i++)
        if (e->m->metadata[i].key && !strcmp(e->m->metadata[i].key, PFVM__PLAN_KEY))
            return e->m->metadata[i].value ? e->m->metadata[i].value : "";
    return NULL;
}

/* Splits the next line of *p into tab-separated fields copied into f (at
 * most max kept): the number of fields, 0 at the end of the text, -1 when
 * one is too long. */
static int pfvm__plan_line(const char **p, char (*f)[PFVM__PLAN_FIELD], int max)
{
    const char *s = *p;
    int n = 0;
    size_t len = 0;
    if (!*s)
        return 0;
    for (;; s++) {
        char c = *s;
        if (c == '\t' || c == '\n' || !c) {
            if (n < max)
                f[n][len] = 0;
            n++;
            len = 0;
            if (c == '\t')
                continue;
            if (c)
                s++;
            break;
        }
        if (n < max) {
            if (len + 1 >= PFVM__PLAN_FIELD)
                return -1;
            f[n][len++] = c;
        }
    }
    *p = s;
    return n;
}

/* A decimal size without sign, overflow or other characters. */
static int pfvm__plan_size(const char *s, size_t *out)
{
    size_t v = 0;
    if (!*s)
        return 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9' || v > (SIZE_MAX - 9) / 10)
            return 0;
        v = v * 10 + (size_t)(*s - '0');
    }
    *out = v;
    return 1;
}

/* Bytes of a value's stored type, 0 when it is not a tensor of known
 * shape and fixed-size elements (or its size overflows). */
static size_t pfvm__planned_bytes(const pfvm_type *ty, int64_t *dims)
{
    int64_t numel = 1;
    size_t bytes;
    int k;
    if (ty->kind != PFVM_KIND_TENSOR || ty->dtype == PFVM_STRING || !pfvm_dtype_size(ty->dtype) ||
        !pfvm__shape_const(ty, dims))
        return 0;
    for (k = 0; k < ty->shape.rank; k++)
        if (!pfvm__mul_i64(numel, dims[k], &numel))
            return 0;
    if ((uint64_t)numel > SIZE_MAX || !pfvm__mul_size((size_t)numel, pfvm_dtype_size(ty->dtype), &bytes))
        return 0;
    return bytes ? bytes : 1;
}

/* An `a` record: value `name` at `off` in the arena. */
static pfvm_code pfvm__plan_stored_value(pfvm_exec *e, int line, const char *name, size_t off, size_t bytes,
                                         pfvm_status *st)
{
    pfvm_value *v = pfvm_graph_find_local(e->g, name);
    int64_t dims[PFVM_MAX_RANK];
    size_t need;
    pfvm_plan_entry pe;
    if (!v || !v->producer || v->init)
        return pfvm__fail(st, PFVM_ERR_INVALID, "stored plan, line %d: '%s' is no value a node of graph '%s' computes",
                          line, name, e->g->name ? e->g->name : "");
    if (e->vkind[v->id] == PFVM__V_ARENA)
        return pfvm__fail(st, PFVM_ERR_INVALID, "stored plan, line %d: '%s' is placed twice", line, name);
    need = pfvm__planned_bytes(&v->type, dims);
    if (!need)
        return pfvm__fail(st, PFVM_ERR_INVALID, "stored plan, line %d: '%s' has no fixed shape in the model's value_info",
                          line, name);
    if (off % PFVM_DATA_ALIGN || bytes < need || off > e->arena_size || bytes > e->arena_size - off)
        return pfvm__fail(st, PFVM_ERR_INVALID,
                          "stored plan, line %d: '%s' (%lu bytes) at offset %lu, %lu bytes, does not fit an arena of %lu bytes "
                          "at %d-byte alignment",
                          line, name, (unsigned long)need, (unsigned long)off, (unsigned long)bytes,
                          (unsigned long)e->arena_size, PFVM_DATA_ALIGN);
    pfvm_tensor_set_shape(&e->vals[v->id], v->type.shape.rank, dims, NULL);
    e->vals[v->id].nbytes = need == 1 && !pfvm_tensor_numel(&e->vals[v->id]) ? 0 : need;
    e->vkind[v->id] = PFVM__V_ARENA;
    memset(&pe, 0, sizeof pe);
    pe.value = v;
    pe.offset = off;
    pe.bytes = bytes;
    pe.first = v->producer->id;
    pe.last = -1;
    if (!pfvm__arrpush(e->entries, pe))
        return pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
    return PFVM_OK;
}

/* A `d` record: the element type of a fused body's value, which the fused
 * loop compiler would otherwise infer. */
static pfvm_code pfvm__plan_stored_dtype(pfvm_exec *e, int line, char (*f)[PFVM__PLAN_FIELD], pfvm_status *st)
{
    const pfvm_function *fn = pfvm_model_function(e->m, f[1], f[2]);
    pfvm_value *v = fn && fn->body ? pfvm_graph_find_local(fn->body, f[3]) : NULL;
    size_t dt;
    if (!v)
        return pfvm__fail(st, PFVM_ERR_INVALID, "stored plan, line %d: function '%s' has no value '%s'", line, f[2], f[3]);
    if (!pfvm__plan_size(f[4], &dt) || dt == PFVM_UNDEFINED || dt > 64 || !pfvm_dtype_size((pfvm_dtype)dt))
        return pfvm__fail(st, PFVM_ERR_INVALID, "stored plan, line %d: '%s' is no element type", line, f[4]);
    if (v->type.kind != PFVM_KIND_UNKNOWN && (v->type.kind != PFVM_KIND_TENSOR || v->type.dtype != (pfvm_dtype)dt))
        return pfvm__fail(st, PFVM_ERR_INVALID, "stored plan, line %d: value '%s' of function '%s' is typed otherwise",
                          line, f[3], f[2]);
    v->type.kind = PFVM_KIND_TENSOR;
    v->type.dtype = (pfvm_dtype)dt;
    return PFVM_OK;
}

/* The values' storage as the stored plan gives it: initializers and
 * inputs as given (inputs of the planned shapes only), arena values at
 * their offsets, the rest sized by their kernels. */
static pfvm_code pfvm__plan_stored_values(pfvm_exec *e, pfvm_status *st)
{
    int i;
    for (i = 0; i < e->nn; i++)
        e->skip[i] = 0;
    for (i = 0; i < e->nv; i++) {
        pfvm_value *v = e->g->values[i];
        memset(&e->iv[i], 0, sizeof e->iv[i]);
        memset(&e->vals[i], 0, sizeof e->vals[i]);
        e->vkind[i] = PFVM__V_DYNAMIC;
        if (v->init) {
            e->vals[i] = *v->init;
            e->vals[i].owns_data = e->vals[i].owns_strings = 0;
            pfvm__ival_from_tensor(e, &e->iv[i], v->init, 1);
            e->vkind[i] = PFVM__V_EXTERNAL;
            continue;
        }
        e->iv[i].type = v->type;
        e->vals[i].kind = v->type.kind == PFVM_KIND_UNKNOWN ? PFVM_KIND_TENSOR : v->type.kind;
        e->vals[i].dtype = v->type.dtype;
        e->vals[i].rank = -1;
    }
    for (i = 0; i < (int)stbds_arrlen(e->feedback); i++)
        pfvm__ival_from_tensor(e, &e->iv[e->feedback[i].state->id], e->feedback[i].state->init, 0);
    for (i = 0; i < (int)stbds_arrlen(e->ins); i++) {
        pfvm_value *v = e->ins[i];
        int64_t dims[PFVM_MAX_RANK];
        if (v->type.kind == PFVM_KIND_TENSOR && !pfvm__shape_const(&v->type, dims))
            return pfvm__fail(st, PFVM_ERR_INVALID, "stored plan: input '%s' has no fixed shape in the model", v->name);
        e->vals[v->id] = *e->bound[i];
        e->vals[v->id].owns_data = e->vals[v->id].owns_strings = 0;
        pfvm__ival_from_tensor(e, &e->iv[v->id], e->bound[i], 0);
        e->vkind[v->id] = PFVM__V_EXTERNAL;
    }
    return PFVM_OK;
}

static pfvm_code pfvm__plan_stored(pfvm_exec *e, const char *text, pfvm_status *st)
{
    char f[5][PFVM__PLAN_FIELD];
    const char *p = text;
    int n, line = 1, have_arena = 0;
    size_t a, b;
    pfvm_code rc;
    pfvm__arrtrunc(e->entries, 0);
    e->arena_size = 0;
    if ((rc = pfvm__plan_stored_values(e, st)) != PFVM_OK)
        return rc;
    if (pfvm__plan_line(&p, f, 5) != 2 || strcmp(f[0], "pfvm-plan") || strcmp(f[1], "1"))
        return pfvm__fail(st, PFVM_ERR_INVALID, "stored plan: not a 'pfvm-plan 1' (made by a newer pfvm?)");
    while ((n = pfvm__plan_line(&p, f, 5)) != 0) {
        line++;
        if (n < 0)
            return pfvm__fail(st, PFVM_ERR_INVALID, "stored plan, line %d: a field is %d bytes or longer", line,
                              PFVM__PLAN_FIELD);
        if (n == 2 && !strcmp(f[0], "arena") && !have_arena && pfvm__plan_size(f[1], &a)) {
            if (a > e->limits.max_arena_bytes || a > e->limits.max_total_bytes)
                return pfvm__fail(st, PFVM_ERR_NOMEM, "stored plan: an arena of %lu bytes is over the limit of %lu",
                                  (unsigned long)a, (unsigned long)e->limits.max_arena_bytes);
            e->arena_size = a;
            have_arena = 1;
        } else if (n == 4 && !strcmp(f[0], "a") && have_arena && pfvm__plan_size(f[1], &a) && pfvm__plan_size(f[2], &b)) {
            if ((rc = pfvm__plan_stored_value(e, line, f[3], a, b, st)) != PFVM_OK)
                return rc;
        } else if (n == 5 && !strcmp(f[0], "d") && !PFVM__NO_FUNCTIONS) {
            if ((rc = pfvm__plan_stored_dtype(e, line, f, st)) != PFVM_OK)
                return rc;
        } else {
            return pfvm__fail(st, PFVM_ERR_INVALID, "stored plan, line %d: unknown or malformed record '%s'", line, f[0]);
        }
    }
    if (!have_arena)
        return pfvm__fail(st, PFVM_ERR_INVALID, "stored plan: no arena size");
    e->lower_bound = e->arena_size;
    return PFVM_OK;
}

/* Appends s to the stb_ds text *buf (without its terminating 0). */
static int pfvm__plan_put(char **buf, const char *s)
{
    size_t n = strlen(s), at = (size_t)stbds_arrlen(*buf);
    if (!pfvm__arrsetlen(*buf, at + n))
        return 0;
    memcpy(*buf + at, s, n);
    return 1;
}

static int pfvm__plan_name_ok(const char *s)
{
    return s && strlen(s) < PFVM__PLAN_FIELD && !strchr(s, '\t') && !strchr(s, '\n');
}

/* `d` records of the fused call n: its body values' element types. */
static pfvm_code pfvm__store_plan_body(pfvm_exec *e, const pfvm_node *n, char **buf, pfvm_status *st)
{
    const pfvm_function *f = pfvm_model_function(e->m, n->domain, n->op_type);
    pfvm_dtype in_dt[64], *vdt;
    char line[4 * PFVM__PLAN_FIELD + 32];
    int i, nv, ok = 1;
    if (!f || !f->body || n->n_inputs > 64 || (int)stbds_arrlen(f->body->inputs) > n->n_inputs)
        return pfvm__fail(st, PFVM_ERR_INVALID, "store plan: fused node '%s' has no body", n->name ? n->name : "");
    nv = (int)stbds_arrlen(f->body->values);
    for (i = 0; i < n->n_inputs; i++)
        in_dt[i] = n->inputs[i] ? e->iv[n->inputs[i]->id].type.dtype : PFVM_UNDEFINED;
    if (!(vdt = (pfvm_dtype *)pfvm__calloc((size_t)nv + 1, sizeof *vdt)))
        return pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
    if (!pfvm__fz_value_dtypes(f->body, in_dt, vdt, e->m->syms))
        ok = 0;
    for (i = 0; ok && i < nv; i++) {
        const pfvm_value *v = f->body->values[i];
        if (vdt[i] == PFVM_UNDEFINED)
            continue;
        if (!pfvm__plan_name_ok(v->name) || !pfvm__plan_name_ok(f->name) || !pfvm__plan_name_ok(f->domain ? f->domain : "")) {
            ok = 0;
            break;
        }
        pfvm__snprintf(line, sizeof line, "d\t%s\t%s\t%s\t%d\n", f->domain ? f->domain : "", f->name, v->name, (int)vdt[i]);
        if (!pfvm__plan_put(buf, line)) {
            pfvm__free(vdt);
            return pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
        }
    }
    pfvm__free(vdt);
    if (!ok)
        return pfvm__fail(st, PFVM_ERR_INVALID, "store plan: fused function '%s': element types unknown, or a name with a tab or newline",
                          f->name);
    return PFVM_OK;
}

/* The plan's text (PFVM__PLAN_KEY) into *buf, 0-terminated. */
static pfvm_code pfvm__store_plan_text(pfvm_exec *e, char **buf, pfvm_status *st)
{
    char line[PFVM__PLAN_FIELD + 64];
    const pfvm_function **done = NULL;
    pfvm_code rc = PFVM_OK;
    int i, j;
    pfvm__snprintf(line, sizeof line, "pfvm-plan\t1\narena\t%lu\n", (unsigned long)e->arena_size);
    if (!pfvm__plan_put(buf, line))
        return pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
    for (i = 0; i < (int)stbds_arrlen(e->entries); i++) {
        const pfvm_plan_entry *pe = &e->entries[i];
        if (pe->kind != 0)
            continue;
        if (!pfvm__plan_name_ok(pe->value->name))
            return pfvm__fail(st, PFVM_ERR_INVALID, "store plan: value name '%s' has a tab or newline, or is too long",
                              pe->value->name);
        pfvm__snprintf(line, sizeof line, "a\t%lu\t%lu\t%s\n", (unsigned long)pe->offset, (unsigned long)pe->bytes,
                       pe->value->name);
        if (!pfvm__plan_put(buf, line))
            return pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
    }
    for (i = 0; !rc && i < e->nn; i++) {
        const pfvm_node *n = e->g->nodes[i];
        const pfvm_function *f;
        if (!pfvm__fz_is_call(n))
            continue;
        f = pfvm_model_function(e->m, n->domain, n->op_type);
        for (j = 0; j < (int)stbds_arrlen(done) && done[j] != f; j++)
            ;
        if (j < (int)stbds_arrlen(done))
            continue; /* one function per fused group: its types once */
        if (!pfvm__arrpush(done, f))
            rc = pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
        else
            rc = pfvm__store_plan_body(e, n, buf, st);
    }
    stbds_arrfree(done);
    if (!rc && !pfvm__arrpush(*buf, 0))
        rc = pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
    return rc;
}

static pfvm_code pfvm__scoped_exec_store_plan(pfvm_exec *e, pfvm_status *st)
{
    char *buf = NULL, lb[96];
    const char *text;
    pfvm_string_pair kv;
    pfvm_code rc;
    int i;
    if (!e->planned)
        return pfvm__fail(st, PFVM_ERR_INVALID, "store plan: no plan: bind inputs first");
    if (e->parent || e->g != e->m->graph)
        return pfvm__fail(st, PFVM_ERR_INVALID, "store plan: only the model's main graph stores a plan");
    for (i = 0; i < e->nn; i++)
        if (e->skip[i])
            return pfvm__fail(st, PFVM_ERR_INVALID,
                              "store plan: node '%s' (%s) is computed when binding (constant inputs): run the fold pass first",
                              pfvm__node_label(e->g->nodes[i], lb, sizeof lb), e->g->nodes[i]->op_type);
    if ((rc = pfvm__store_plan_text(e, &buf, st)) != PFVM_OK) {
        stbds_arrfree(buf);
        return rc;
    }
    text = pfvm__arena_strdup(&e->m->arena, buf);
    stbds_arrfree(buf);
    if (!text)
        return pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
    /* the types the plan was made for, as value_info */
    for (i = 0; i < e->nv; i++) {
        pfvm_value *v = e->g->values[i];
        if (v->init || e->iv[i].type.kind != PFVM_KIND_TENSOR)
            continue;
        v->type = e->iv[i].type;
        if (v->producer)
            v->has_value_info = 1;
    }
    for (i = 0; i < (int)stbds_arrlen(e->m->metadata); i++)
        if (e->m->metadata[i].key && !strcmp(e->m->metadata[i].key, PFVM__PLAN_KEY)) {
            e->m->metadata[i].value = text;
            return PFVM_OK;
        }
    kv.key = PFVM__PLAN_KEY;
    kv.value = text;
    if (!pfvm__arrpush(e->m->metadata, kv))
        return pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
    return PFVM_OK;
}

pfvm_code pfvm_exec_store_plan(pfvm_exec *e, pfvm_status *st)
{
    pfvm__scope sc;
    pfvm_code r;
    if (!e)
        return pfvm__fail(st, PFVM_ERR_INVALID, "store plan: no executor");
    pfvm__scope_enter(&sc, pfvm__model_allocator(e->m));
    r = pfvm__scoped_exec_store_plan(e, st);
    pfvm__scope_leave(&sc);
    return r;
}

static pfvm_code pfvm__plan(pfvm_exec *e, pfvm_status *st)
{
    pfvm_code rc;
    const char *stored = pfvm__stored_plan(e);
    pfvm__release_dynamic(e);
    pfvm__arena_free(&e->plan_arena);
    e->folded_bytes = 0;
    e->n_folded = 0;
#ifdef PFVM_NO_SHAPE_INFERENCE
    if (!stored)
        return pfvm__fail(st, PFVM_ERR_UNSUPPORTED,
                          "graph '%s': no stored plan, and pfvm is built with PFVM_NO_SHAPE_INFERENCE (prepare the model "
                          "with `interp opt --planned`)",
                          e->g->name ? e->g->name : "");
    rc = pfvm__plan_stored(e, stored, st);
#else
    if (stored) {
        rc = pfvm__plan_stored(e, stored, st);
    } else {
        rc = pfvm__plan_types(e, st);
        if (!rc)
            rc = pfvm__plan_memory(e, st);
    }
#endif
    if (!rc)
        rc = pfvm__plan_arena(e, st);
    return rc;
}

static pfvm_code pfvm__scoped_exec_plan_info(const pfvm_exec *e, pfvm_plan_info *info, pfvm_status *st)
{
    if (!e->planned)
        return pfvm__fail(st, PFVM_ERR_INVALID, "no plan: bind inputs first");
    memset(info, 0, sizeof *info);
    info->arena_bytes = e->arena_size;
    info->lower_bound = e->lower_bound;
    info->folded_bytes = e->folded_bytes;
    info->n_nodes = e->nn;
    info->n_folded = e->n_folded;
    info->entries = e->entries;
    info->n_entries = (int)stbds_arrlen(e->entries);
    return PFVM_OK;
}

pfvm_code pfvm_exec_plan_info(const pfvm_exec *e, pfvm_plan_info *info, pfvm_status *st)
{
    PFVM__SCOPED(pfvm_code, pfvm__model_allocator(e ? e->m : NULL), pfvm__scoped_exec_plan_info(e, info, st));
}

/* ---- running ------------------------------------------------------------------ */

/* The kernel context's services (pfvm__kctx_services, src/opi/opi.h). */

static pfvm_code pfvm__exec_kctx_output(pfvm_kctx *k, int i, pfvm_dtype dtype, int rank, const int64_t *dims)
{
    pfvm_exec *e = k->exec;
    size_t held;
    if (!e)
        return pfvm__kctx_alloc_output(k, i, dtype, rank, dims, PFVM_MAX_TENSOR_BYTES, PFVM_MAX_TOTAL_BYTES, 0, NULL);
    if (!pfvm__add_size(e->arena_size, e->folded_bytes, &held))
        held = (size_t)-1;
    return pfvm__kctx_alloc_output(k, i, dtype, rank, dims, e->limits.max_tensor_bytes, e->limits.max_total_bytes, held,
                                   &e->dynamic_bytes);
}

static uint64_t pfvm__exec_kctx_random(pfvm_kctx *k)
{
    pfvm_exec *e = k->exec;
    uint64_t x;
    if (!e)
        return 0x9E3779B97F4A7C15ull;
    for (; e->parent; e = e->parent) {
    }
    e->random_used = 1;
    /* splitmix64: small, fast, good enough for dropout masks and samples */
    x = (e->rng += 0x9E3779B97F4A7C15ull);
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

static void pfvm__exec_kctx_seed(pfvm_kctx *k, uint64_t seed)
{
    pfvm_exec *e = k->exec;
    if (!e)
        return;
    for (; e->parent; e = e->parent) {
    }
    e->rng = seed;
}

int pfvm_exec_was_random(const pfvm_exec *e)
{
    return e->random_used;
}

static void pfvm__exec_kctx_set_state(pfvm_kctx *k, void *state, void (*free_fn)(void *))
{
    pfvm_exec *e = k->exec;
    int id = k->node ? k->node->id : -1;
    if (!e || id < 0 || id >= e->nn || e->g->nodes[id] != k->node) {
        if (state && free_fn)
            free_fn(state); /* nowhere to keep it */
        k->state = NULL;
        return;
    }
    if (e->state[id] && e->state[id] != state && e->state_free[id])
        e->state_free[id](e->state[id]);
    e->state[id] = state;
    e->state_free[id] = free_fn;
    k->state = state;
}

static void *pfvm__exec_kctx_scratch(pfvm_kctx *k, size_t bytes)
{
    pfvm_exec *e = k->exec;
    if (!e) {
        pfvm__op_fail(k->st, k->node, PFVM_ERR_RUNTIME, "no executor for workspace");
        return NULL;
    }
    if (bytes > e->scratch_size) {
        void *p = pfvm__realloc(e->scratch, bytes);
        if (!p) {
            pfvm__op_fail(k->st, k->node, PFVM_ERR_NOMEM, "cannot allocate %zu bytes of workspace", bytes);
            return NULL;
        }
        e->scratch = p;
        e->scratch_size = bytes;
    }
    return e->scratch;
}

/* Dynamic outputs: infer again with the run-time inputs, which are all
 * concrete now, and allocate what that determines. */
static pfvm_code pfvm__prepare_dynamic(pfvm_exec *e, pfvm_node *n, pfvm_status *st)
{
    int j, any = 0;
    pfvm_ival *tmp_in, *tmp_out;
    pfvm_arena scratch;
    pfvm_code rc = PFVM_OK;
    for (j = 0; j < n->n_outputs; j++)
        if (n->outputs[j] && e->vkind[n->outputs[j]->id] == PFVM__V_DYNAMIC) {
            pfvm_tensor *t = &e->vals[n->outputs[j]->id];
            if (t->owns_data && t->data)
                e->dynamic_bytes -= t->nbytes < e->dynamic_bytes ? t->nbytes : e->dynamic_bytes;
            pfvm_tensor_release(t);
            any = 1;
        }
    if (!any)
        return PFVM_OK;
#ifdef PFVM_NO_SHAPE_INFERENCE
    (void)tmp_in, (void)tmp_out, (void)scratch, (void)rc, (void)st;
    return PFVM_OK; /* no inference linked: the kernel sizes its outputs (pfvm_kctx_output) */
#else
    memset(&scratch, 0, sizeof scratch);
    tmp_in = (pfvm_ival *)pfvm__arena_alloc(&scratch, sizeof(pfvm_ival) * (size_t)(n->n_inputs + 1));
    tmp_out = (pfvm_ival *)pfvm__arena_alloc(&scratch, sizeof(pfvm_ival) * (size_t)(n->n_outputs + 1));
    if (!tmp_in || !tmp_out) {
        pfvm__arena_free(&scratch);
        return pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
    }
    for (j = 0; j < n->n_inputs; j++) {
        const pfvm_tensor *t = e->kin[j];
        e->iin[j] = NULL;
        if (!t)
            continue;
        pfvm__ival_from_tensor(e, &tmp_in[j], t, pfvm__small_int(t));
        e->iin[j] = &tmp_in[j];
    }
    for (j = 0; j < n->n_outputs; j++)
        e->iout[j] = n->outputs[j] ? &tmp_out[j] : NULL;
    rc = pfvm__infer_node(n, e->iin, e->iout, e->m->syms, &scratch, st);
    for (j = 0; !rc && j < n->n_outputs; j++) {
        int64_t dims[PFVM_MAX_RANK];
        pfvm_tensor *t;
        if (!n->outputs[j] || e->vkind[n->outputs[j]->id] != PFVM__V_DYNAMIC)
            continue;
        t = &e->vals[n->outputs[j]->id];
        memset(t, 0, sizeof *t);
        t->kind = tmp_out[j].type.kind ? tmp_out[j].type.kind : PFVM_KIND_TENSOR;
        t->dtype = tmp_out[j].type.dtype;
        t->rank = -1;
        if (t->kind == PFVM_KIND_TENSOR && pfvm__shape_const(&tmp_out[j].type, dims) && pfvm_dtype_size(t->dtype)) {
            pfvm_kctx k;
            /* through the executor, so its limits and dynamic-bytes count apply */
            pfvm__kctx_of(e, n, &k, st);
            rc = pfvm_kctx_output(&k, j, t->dtype, tmp_out[j].type.shape.rank, dims);
        }
    }
    pfvm__arena_free(&scratch);
    return rc;
#endif
}

/* After a kernel: every tensor output it was to produce is there (not
 * produced: a kernel bug the run reports, naming the node), and no slot
 * the plan keeps for a tensor holds a sequence (or an optional), which a
 * kernel leaves when the model declares that output a tensor: only
 * dynamic slots are released later, so it is freed here and the run
 * fails, naming the node. One loop for both keeps one message site. */
static pfvm_code pfvm__check_outputs(pfvm_exec *e, const pfvm_node *n, pfvm_status *st)
{
    int j;
    char lb[96];
    for (j = 0; j < n->n_outputs; j++) {
        pfvm_tensor *t = e->kout[j];
        if (!t)
            continue;
        if (t->kind == PFVM_KIND_TENSOR) {
            if (!t->data && pfvm_tensor_numel(t) != 0)
                return pfvm__fail(st, PFVM_ERR_RUNTIME, "node '%s' (%s): output %d was not produced",
                                  pfvm__node_label(n, lb, sizeof lb), n->op_type, j);
        } else if (n->outputs[j] && e->vkind && e->vkind[n->outputs[j]->id] != PFVM__V_DYNAMIC) {
            const char *kind = t->kind == PFVM_KIND_SEQUENCE ? "sequence" : "optional";
            pfvm_tensor_release(t);
            t->kind = PFVM_KIND_TENSOR;
            return pfvm__fail(st, PFVM_ERR_INVALID, "node '%s' (%s): output '%s' is a %s, but the model declares it a tensor",
                              pfvm__node_label(n, lb, sizeof lb), n->op_type, n->outputs[j]->name, kind);
        }
    }
    return PFVM_OK;
}

/* The node's count for pfvm__spend: fixed at bind (pfvm__touch_at_bind),
 * else taken from its tensors as they are now. */
static uint64_t pfvm__node_touched(const pfvm_exec *e, const pfvm_node *n)
{
    if (n->id >= 0 && n->id < e->nn && e->g->nodes[n->id] == n && e->touch[n->id] != PFVM__TOUCH_RUN)
        return e->touch[n->id];
    return pfvm__touched(e->kin, n->n_inputs) + pfvm__touched((const pfvm_tensor *const *)e->kout, n->n_outputs);
}

static pfvm_code pfvm__call_kernel(pfvm_exec *e, pfvm_node *n, pfvm_status *st)
{
    pfvm_kctx k;
    pfvm_node *saved = e->running;
    pfvm_code rc;
    pfvm__node_io(e, n);
    if ((rc = pfvm__takes_kinds(n, st, NULL, (const pfvm_tensor *const *)e->kin)) != PFVM_OK ||
        (rc = pfvm__prepare_dynamic(e, n, st)) != PFVM_OK ||
        (rc = pfvm__spend(e, n, pfvm__node_touched(e, n), st)) != PFVM_OK)
        return rc;
    pfvm__kctx_of(e, n, &k, st);
    e->running = n;
    rc = n->op->kernel(&k);
    e->running = saved;
    if (rc)
        return pfvm__name_node(n, st, rc);
    return pfvm__check_outputs(e, n, st);
}

/* 1 when tensor t has initializer s's element type and dims. */
static int pfvm__same_layout(const pfvm_tensor *t, const pfvm_tensor *s)
{
    return t->kind == PFVM_KIND_TENSOR && t->dtype == s->dtype && t->rank == s->rank &&
           (!t->rank || !memcmp(t->dims, s->dims, sizeof(int64_t) * (size_t)t->rank));
}

/* Copies every fed-back output into its state (after a run). The outputs
 * live in the arena or in storage of their own, never in a state. */
static pfvm_code pfvm__feed_back(pfvm_exec *e, pfvm_status *st)
{
    int i;
    for (i = 0; i < (int)stbds_arrlen(e->feedback); i++) {
        const pfvm__feedback *f = &e->feedback[i];
        const pfvm_tensor *t = &e->vals[f->next->id];
        pfvm_tensor *s = f->state->init;
        char a[64], b[64];
        if (!pfvm__same_layout(t, s)) {
            if (PFVM__MSG_DETAIL) { /* a terse message does not show them */
                pfvm_tensor_describe(t, a, sizeof a);
                pfvm_tensor_describe(s, b, sizeof b);
            }
            return pfvm__fail(st, PFVM_ERR_SHAPE, "training state '%s' is %s, its next value '%s' is %s",
                              f->state->name, b, f->next->name, a);
        }
        if (t->data != s->data && pfvm_tensor_numel(s))
            memcpy(s->data, t->data, (size_t)pfvm_tensor_numel(s) * pfvm_dtype_size(s->dtype));
    }
    return PFVM_OK;
}

/* ---- shape checks (pfvm_exec_check_shapes) ------------------------------------ */

/* PFVM_PLANNED_ONLY: the shapes are the stored plan's, checked at bind, so
 * the run-time checks (and the symbolic evaluation and shape printing they
 * pull in) are left out; the compiler drops them behind this constant. */
#ifdef PFVM_PLANNED_ONLY
#define PFVM__CHECK_SHAPES 0
#else
#define PFVM__CHECK_SHAPES 1
#endif

void pfvm_exec_check_shapes(pfvm_exec *e, int on)
{
    int i;
    e->check_shapes = on != 0;
    for (i = 0; i < (int)stbds_arrlen(e->children); i++)
        pfvm_exec_check_shapes(e->children[i].e, on);
}

static int pfvm__check_bound(const pfvm_binding *b, const pfvm_sym *x)
{
    return x->value >= 0 && x->value < b->n && b->set[x->value];
}

/* Compares the shape of v's tensor t in this run with v's inferred type:
 * symbols met for the first time in this run take t's dims, every dim
 * that evaluates must equal t's. `n` is v's producer (NULL: an input). */
static pfvm_code pfvm__check_value(pfvm_exec *e, const pfvm_node *n, const pfvm_value *v, const pfvm_tensor *t,
                                   pfvm_status *st)
{
    const pfvm_type *ty = &v->type;
    int d, bad = -1;
    int64_t want = 0;
    if (!t || t->kind != PFVM_KIND_TENSOR || ty->kind != PFVM_KIND_TENSOR || ty->shape.rank < 0)
        return PFVM_OK;
    if (ty->shape.rank == t->rank) {
        for (d = 0; d < t->rank; d++) {
            const pfvm_sym *x = ty->shape.dims[d];
            if (x && x->kind == PFVM_SYM_VAR && !pfvm__check_bound(&e->check_b, x) &&
                pfvm_binding_set(&e->check_b, x, t->dims[d], st))
                return st ? st->code : PFVM_ERR_NOMEM;
        }
        for (d = 0; d < t->rank && bad < 0; d++)
            if (ty->shape.dims[d] && pfvm_sym_eval(ty->shape.dims[d], &e->check_b, &want) && want != t->dims[d])
                bad = d;
        if (bad < 0)
            return PFVM_OK;
    }
    {
        char a[160], b[128], lb[96], where[200];
        pfvm_shape_print(&ty->shape, a, sizeof a);
        pfvm_tensor_describe(t, b, sizeof b);
        if (n)
            pfvm__snprintf(where, sizeof where, "node '%s' (%s): output '%s'", pfvm__node_label(n, lb, sizeof lb),
                           n->op_type, v->name);
        else
            pfvm__snprintf(where, sizeof where, "input '%s'", v->name);
        if (bad < 0)
            return pfvm__fail(st, PFVM_ERR_SHAPE, "%s is %s, inference said %s (rank %d), in run %d of graph '%s'",
                              where, b, a, ty->shape.rank, e->runs, e->g->name);
        return pfvm__fail(st, PFVM_ERR_SHAPE,
                          "%s is %s, inference said %s (dim %d evaluates to %lld), in run %d of graph '%s'", where, b,
                          a, bad, (long long)want, e->runs, e->g->name);
    }
}

static pfvm_code pfvm__check_begin(pfvm_exec *e, pfvm_status *st)
{
    int i;
    e->runs++;
    /* a subgraph counts its runs (a loop's iterations) from here */
    for (i = 0; i < (int)stbds_arrlen(e->children); i++)
        e->children[i].e->runs = 0;
    pfvm_binding_clear(&e->check_b);
    for (i = 0; i < (int)stbds_arrlen(e->g->inputs); i++) {
        const pfvm_value *v = e->g->inputs[i];
        if (pfvm__check_value(e, NULL, v, pfvm__tensor_of(e, v), st))
            return st ? st->code : PFVM_ERR_SHAPE;
    }
    return PFVM_OK;
}

static pfvm_code pfvm__check_node(pfvm_exec *e, const pfvm_node *n, pfvm_status *st)
{
    int j;
    /* outer-scope values first: their symbols take this run's values */
    for (j = 0; j < n->n_inputs; j++)
        if (n->inputs[j] && n->inputs[j]->graph != e->g &&
            pfvm__check_value(e, NULL, n->inputs[j], pfvm__tensor_of(e, n->inputs[j]), st))
            return st ? st->code : PFVM_ERR_SHAPE;
    for (j = 0; j < n->n_outputs; j++)
        if (n->outputs[j] && pfvm__check_value(e, n, n->outputs[j], pfvm__tensor_of(e, n->outputs[j]), st))
            return st ? st->code : PFVM_ERR_SHAPE;
    return PFVM_OK;
}

static pfvm_code pfvm__scoped_exec_run(pfvm_exec *e, pfvm_status *st)
{
    int i;
    if (!e->planned)
        return pfvm__fail(st, PFVM_ERR_INVALID, "graph '%s': bind inputs before running", e->g->name);
    if (!e->parent) {
        e->random_used = 0;
        e->operations = 0;
    }
    if (PFVM__CHECK_SHAPES && e->check_shapes && pfvm__check_begin(e, st))
        return st ? st->code : PFVM_ERR_SHAPE;
    for (i = 0; i < e->nn; i++) {
        pfvm_node *n = e->g->nodes[i];
        if (e->skip[i]) {
            if (PFVM__CHECK_SHAPES && e->check_shapes && pfvm__check_node(e, n, st))
                return st ? st->code : PFVM_ERR_SHAPE;
            continue;
        }
        if (!n->op || !n->op->kernel) {
            char lb[96];
            return pfvm__fail(st, PFVM_ERR_UNSUPPORTED, "node '%s' (%s): no kernel", pfvm__node_label(n, lb, sizeof lb),
                              n->op_type);
        }
        if (e->hook)
            e->hook(e->hook_user, n, 0);
        if (pfvm__call_kernel(e, n, st))
            return st ? st->code : PFVM_ERR_RUNTIME;
        if (e->hook)
            e->hook(e->hook_user, n, 1);
        if (PFVM__CHECK_SHAPES && e->check_shapes && pfvm__check_node(e, n, st))
            return st ? st->code : PFVM_ERR_SHAPE;
    }
    return pfvm__feed_back(e, st);
}

void pfvm_exec_set_node_hook(pfvm_exec *e, pfvm_node_hook fn, void *user)
{
    if (!e)
        return;
    e->hook = fn;
    e->hook_user = user;
}

pfvm_code pfvm_exec_run(pfvm_exec *e, pfvm_status *st)
{
    PFVM__SCOPED(pfvm_code, pfvm__model_allocator(e ? e->m : NULL), pfvm__scoped_exec_run(e, st));
}

const pfvm_tensor *pfvm_exec_output(const pfvm_exec *e, int i)
{
    const pfvm_value *v = pfvm_exec_output_value(e, i);
    if (!v)
        return NULL;
    return pfvm__tensor_of((pfvm_exec *)e, v);
}

/* ---- training state ------------------------------------------------------------ */

static pfvm_code pfvm__scoped_exec_feedback(pfvm_exec *e, const char *state, const char *next, pfvm_status *st)
{
    pfvm_value *s = state ? pfvm_graph_find_local(e->g, state) : NULL;
    pfvm_value *n = next ? pfvm_graph_find_local(e->g, next) : NULL;
    pfvm_tensor *t;
    pfvm__feedback f;
    int64_t dims[PFVM_MAX_RANK];
    size_t bytes;
    int i, is_output = 0;
    if (!s || !s->init)
        return pfvm__fail(st, PFVM_ERR_INVALID, "training state '%s' is not an initializer of graph '%s'",
                          state ? state : "(null)", e->g->name);
    t = s->init;
    if (t->kind != PFVM_KIND_TENSOR || t->dtype == PFVM_STRING || !pfvm_dtype_size(t->dtype))
        return pfvm__fail(st, PFVM_ERR_UNSUPPORTED, "training state '%s': only numeric tensors", s->name);
    for (i = 0; n && i < (int)stbds_arrlen(e->g->outputs); i++)
        if (e->g->outputs[i] == n)
            is_output = 1;
    if (!n || !is_output || !n->producer)
        return pfvm__fail(st, PFVM_ERR_INVALID, "training state '%s': '%s' is not a graph output made by a node",
                          s->name, next ? next : "(null)");
    if (n->type.kind == PFVM_KIND_TENSOR &&
        ((n->type.dtype && n->type.dtype != t->dtype) ||
         (pfvm__shape_const(&n->type, dims) &&
          (n->type.shape.rank != t->rank || (t->rank && memcmp(dims, t->dims, sizeof(int64_t) * (size_t)t->rank)))))) {
        char a[64], b[64];
        pfvm_type_print(&n->type, a, sizeof a);
        pfvm_tensor_describe(t, b, sizeof b);
        return pfvm__fail(st, PFVM_ERR_SHAPE, "training state '%s' is %s, its next value '%s' is %s", s->name, b,
                          n->name, a);
    }
    /* the state is written after each run: into memory the model owns */
    bytes = (size_t)pfvm_tensor_numel(t) * pfvm_dtype_size(t->dtype);
    if (!t->owns_data) {
        int owned = 0;
        for (i = 0; i < (int)stbds_arrlen(e->m->owned_blocks); i++)
            if (e->m->owned_blocks[i] == t->data)
                owned = 1;
        if (!owned) {
            void *copy = pfvm__malloc(bytes ? bytes : 1);
            if (!copy || !pfvm__arrpush(e->m->owned_blocks, copy)) {
                pfvm__free(copy);
                return pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory copying training state '%s'", s->name);
            }
            if (bytes)
                memcpy(copy, t->data, bytes);
            t->data = copy;
            t->nbytes = bytes;
        }
    }
    e->planned = 0;
    for (i = 0; i < (int)stbds_arrlen(e->feedback); i++)
        if (e->feedback[i].state == s) {
            e->feedback[i].next = n;
            return PFVM_OK;
        }
    f.state = s;
    f.next = n;
    if (!pfvm__arrpush(e->feedback, f))
        return pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
    return PFVM_OK;
}

pfvm_code pfvm_exec_feedback(pfvm_exec *e, const char *state, const char *next, pfvm_status *st)
{
    PFVM__SCOPED(pfvm_code, pfvm__model_allocator(e ? e->m : NULL), pfvm__scoped_exec_feedback(e, state, next, st));
}

static int pfvm__scoped_exec_feedback_all(pfvm_exec *e, pfvm_status *st)
{
    int i, j, count = 0;
    for (i = 0; i < (int)stbds_arrlen(e->g->outputs); i++) {
        const char *name = e->g->outputs[i]->name;
        size_t len = strlen(name);
        if (len <= 4 || strcmp(name + len - 4, "_new"))
            continue;
        for (j = 0; j < (int)stbds_arrlen(e->g->inits); j++) {
            const char *s = e->g->inits[j]->name;
            if (strlen(s) != len - 4 || strncmp(s, name, len - 4))
                continue;
            if (pfvm_exec_feedback(e, s, name, st))
                return -1;
            count++;
            break;
        }
    }
    return count;
}

int pfvm_exec_feedback_all(pfvm_exec *e, pfvm_status *st)
{
    PFVM__SCOPED(int, pfvm__model_allocator(e ? e->m : NULL), pfvm__scoped_exec_feedback_all(e, st));
}

/* ---- subgraphs --------------------------------------------------------------- */

PFVM_INTERNAL pfvm_code pfvm__exec_subgraph(pfvm_exec *parent, const pfvm_graph *g, const pfvm_tensor *const *inputs,
                                            int n_inputs, pfvm_tensor **outputs, int n_outputs, pfvm_status *st)
{
    pfvm_exec *c = NULL;
    int i;
    pfvm_code rc;
    for (i = 0; i < (int)stbds_arrlen(parent->children); i++)
        if (parent->children[i].g == g)
            c = parent->children[i].e;
    if (!c) {
        pfvm__child ch;
        if (pfvm_graph_toposort((pfvm_graph *)g, st))
            return st ? st->code : PFVM_ERR_INVALID;
        c = (pfvm_exec *)pfvm__calloc(1, sizeof *c);
        if (!c)
            return pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
        if (pfvm__exec_init(c, parent->m, (pfvm_graph *)g, parent, st)) {
            pfvm_exec_free(c);
            return st ? st->code : PFVM_ERR_NOMEM;
        }
        c->check_shapes = parent->check_shapes;
        ch.g = g;
        ch.e = c;
        if (!pfvm__arrpush(parent->children, ch)) {
            pfvm_exec_free(c);
            return pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
        }
    }
    /* outer-scope values may change between calls (loop-carried): replan */
    c->planned = 0;
    rc = pfvm_exec_bind(c, inputs, n_inputs, st);
    if (!rc)
        rc = pfvm_exec_run(c, st);
    if (rc)
        return rc;
    if (n_outputs != pfvm_exec_num_outputs(c))
        return pfvm__fail(st, PFVM_ERR_INVALID, "subgraph '%s' has %d outputs, %d expected", g->name,
                          pfvm_exec_num_outputs(c), n_outputs);
    for (i = 0; i < n_outputs; i++) {
        outputs[i] = pfvm_tensor_clone(pfvm_exec_output(c, i), st);
        if (!outputs[i]) {
            while (i-- > 0) {
                pfvm_tensor_free(outputs[i]);
                outputs[i] = NULL;
            }
            return st ? st->code : PFVM_ERR_NOMEM;
        }
    }
    return PFVM_OK;
}

#ifndef PFVM_NO_SHAPE_INFERENCE
static pfvm_code pfvm__exec_kctx_subgraph(pfvm_kctx *k, const pfvm_graph *g, const pfvm_tensor *const *in, int n_in,
                                          pfvm_tensor **out, int n_out, pfvm_status *st)
{
    if (!k->exec)
        return pfvm__op_fail(st, k->node, PFVM_ERR_UNSUPPORTED, "subgraph '%s' needs an executor", g ? g->name : "");
    return pfvm__exec_subgraph(k->exec, g, in, n_in, out, n_out, st);
}
#endif

#ifndef PFVM_NO_AUTODIFF
static pfvm_code pfvm__exec_kctx_gradient(pfvm_kctx *k, pfvm_model *m, pfvm_value *y, pfvm_value *seed,
                                          const char *const *names, int n_wrt, int n_names, pfvm_status *st)
{
    pfvm_graph *g = y->graph;
    pfvm_autodiff_opts o;
    pfvm_autodiff_result res;
    pfvm_exec *e = NULL;
    const pfvm_tensor **ins = NULL;
    int i, j;
    pfvm_code rc = PFVM_OK;
    memset(&o, 0, sizeof o);
    o.ys = &y;
    o.seeds = &seed;
    o.n_ys = 1;
    o.wrt = names;
    o.n_wrt = n_wrt;
    o.flags = PFVM_AUTODIFF_NO_OUTPUTS;
    if (pfvm_autodiff(m, g, &o, &res, st))
        return st->code;
    for (i = 0; i < res.n_wrt; i++)
        if (pfvm_graph_add_output(g, res.grads[i], st))
            return st->code;
    if (!(e = pfvm_exec_new(m, NULL, st)))
        return st->code;
    for (i = 0; i < pfvm_exec_num_inputs(e); i++) {
        const pfvm_value *v = pfvm_exec_input(e, i);
        for (j = 0; j < n_names && strcmp(names[j], v->name); j++) {
        }
        if (!pfvm__arrpush(ins, j < n_names ? k->in[j] : NULL)) {
            rc = pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
            goto done;
        }
    }
    if (pfvm_exec_bind(e, ins, pfvm_exec_num_inputs(e), st) || pfvm_exec_run(e, st)) {
        rc = st->code;
        goto done;
    }
    for (i = 0; i < n_wrt && i < k->n_out; i++) {
        const pfvm_tensor *t = pfvm_exec_output(e, i + 1);
        if (!k->out[i])
            continue;
        if (!t || pfvm_kctx_output(k, i, t->dtype, t->rank, t->dims) || k->out[i]->nbytes < t->nbytes) {
            rc = pfvm__fail(st, PFVM_ERR_SHAPE, "gradient %d has an unexpected shape", i);
            goto done;
        }
        memcpy(k->out[i]->data, t->data, t->nbytes);
    }
done:
    stbds_arrfree(ins);
    pfvm_exec_free(e);
    return rc;
}
#endif

static int pfvm__exec_kctx_threads(const pfvm_kctx *k)
{
    return k->exec ? pfvm__exec_threads(k->exec) : 1;
}

static void pfvm__exec_kctx_parallel(pfvm_kctx *k, int n, pfvm_task_fn fn, void *ctx)
{
    int i;
    if (k->exec && n > 1 && pfvm__exec_threads(k->exec) > 1) {
        const pfvm_exec *r = pfvm__exec_root(k->exec);
        r->par.parallel_for(r->par.user, n, fn, ctx);
        return;
    }
    for (i = 0; i < n; i++)
        fn(ctx, i);
}

void pfvm_exec_set_parallel(pfvm_exec *e, const pfvm_parallel *par)
{
    if (!e)
        return;
    if (par)
        e->par = *par;
    else
        memset(&e->par, 0, sizeof e->par);
    e->planned = 0; /* the workspace reserved at bind scales with the threads */
}

int pfvm_exec_threads(const pfvm_exec *e)
{
    return e ? pfvm__exec_threads(e) : 1;
}

/* what is not linked in a device build is NULL here: kernels that ask for it fail */
#ifdef PFVM_NO_SHAPE_INFERENCE
#define PFVM__INFER_SERVICE NULL
/* a subgraph's executor binds through the planner, which is not linked */
#define PFVM__SUBGRAPH_SERVICE NULL
#else
#define PFVM__INFER_SERVICE pfvm_infer_shapes
#define PFVM__SUBGRAPH_SERVICE pfvm__exec_kctx_subgraph
#endif
#ifdef PFVM_NO_AUTODIFF
#define PFVM__GRADIENT_SERVICE NULL
#else
#define PFVM__GRADIENT_SERVICE pfvm__exec_kctx_gradient
#endif
static pfvm_code pfvm__exec_kctx_spend(pfvm_kctx *k, uint64_t operations)
{
    return k->exec ? pfvm__spend(k->exec, k->node, operations, k->st) : PFVM_OK;
}

static const pfvm__kctx_services *pfvm__exec_services(void)
{
    static const pfvm__kctx_services s = {pfvm__exec_kctx_output, pfvm__exec_kctx_scratch, pfvm__exec_kctx_set_state,
                                          pfvm__exec_kctx_random, pfvm__exec_kctx_seed,    PFVM__SUBGRAPH_SERVICE,
                                          PFVM__INFER_SERVICE,    PFVM__GRADIENT_SERVICE, pfvm__exec_kctx_threads,
                                          pfvm__exec_kctx_parallel, pfvm__exec_kctx_spend, NULL, NULL, 0};
    return &s;
}

pfvm_code pfvm_exec_bind_one(pfvm_exec *e, const pfvm_tensor *input, pfvm_status *st)
{
    return pfvm_exec_bind(e, &input, 1, st);
}

pfvm_code pfvm_exec_set_input(pfvm_exec *e, int i, const pfvm_tensor *input, pfvm_status *st)
{
    pfvm__scope sc;
    pfvm_code rc;
    if (i < 0 || i >= pfvm_exec_num_inputs(e))
        return pfvm__fail(st, PFVM_ERR_RANGE, "graph '%s' has no input %d (it takes %d)", e->g->name, i,
                          pfvm_exec_num_inputs(e));
    if ((rc = pfvm__check_input(e->ins[i], input, st)) != PFVM_OK)
        return rc;
    pfvm__scope_enter(&sc, &e->m->allocator);
    if (!pfvm__given_reserve(e))
        rc = pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
    else
        e->given[i] = input;
    pfvm__scope_leave(&sc);
    return rc;
}
