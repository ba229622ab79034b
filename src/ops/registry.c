#include "fused.h"

#include <stdio.h>

/* The operator families. Each file of src/ops defines one table, ended by
 * an entry whose name is NULL. Adding a family adds one line here. */
#define PFVM__FAMILIES(X) \
    X(elementwise)        \
    X(linalg)             \
    X(nn)                 \
    X(reduce)             \
    X(tensor)             \
    X(indexing)           \
    X(image)              \
    X(control)            \
    X(quant)              \
    X(misc)               \
    X(rnn)                \
    X(training)           \
    X(einsum)             \
    X(random)             \
    X(signal)

/* (The amalgamation defines the tables, static, before this file.) */
#ifndef PFVM__AMALGAMATION
#define PFVM__DECLARE(f) extern const pfvm_op_def pfvm__ops_##f[];
PFVM__FAMILIES(PFVM__DECLARE)
#undef PFVM__DECLARE
#endif

/* (In the amalgamation a family the operator selection empties is left
 * out: PFVM__FAMILY_<f>, written by amalgamate.py before each table.) */
#ifdef PFVM__AMALGAMATION
#define PFVM__LIST(f) PFVM__FAMILY_##f(pfvm__ops_##f, )
#else
#define PFVM__LIST(f) pfvm__ops_##f,
#endif
static const pfvm_op_def *const pfvm__families[] = {PFVM__FAMILIES(PFVM__LIST) NULL};
#undef PFVM__LIST

static int pfvm__domain_eq(const char *a, const char *b)
{
    if (!a || !strcmp(a, "ai.onnx"))
        a = "";
    if (!b || !strcmp(b, "ai.onnx"))
        b = "";
    return !strcmp(a, b);
}

/* Operators the program registered (pfvm_op_register), searched first. */
#ifndef PFVM_MAX_USER_OPS
#define PFVM_MAX_USER_OPS 64
#endif
static const pfvm_op_def *pfvm__user_ops[PFVM_MAX_USER_OPS];
/* Their definitions as the passes see them: opaque unless PFVM_OP_PURE. */
static pfvm_op_def pfvm__user_defs[PFVM_MAX_USER_OPS];
static int pfvm__n_user_ops;

pfvm_code pfvm_op_register(const pfvm_op_def *def, pfvm_status *st)
{
    if (!def || !def->name || !def->name[0] || (!def->infer && !PFVM__NO_INFERENCE) || !def->kernel)
        return pfvm__fail(st, PFVM_ERR_INVALID, "pfvm_op_register: an operator needs a name, infer and kernel");
    if (pfvm__n_user_ops == PFVM_MAX_USER_OPS)
        return pfvm__fail(st, PFVM_ERR_NOMEM, "pfvm_op_register: more than %d operators (PFVM_MAX_USER_OPS)",
                          PFVM_MAX_USER_OPS);
    pfvm__user_defs[pfvm__n_user_ops] = *def;
    /* a kernel pfvm knows nothing of may have effects or state: never
     * run it at optimization, inference or plan time, never merge or
     * recompute its nodes (what the nondeterministic flag means) */
    if (!(def->flags & PFVM_OP_PURE))
        pfvm__user_defs[pfvm__n_user_ops].flags |= PFVM_OP_NONDETERMINISTIC;
    pfvm__user_ops[pfvm__n_user_ops] = &pfvm__user_defs[pfvm__n_user_ops];
    pfvm__n_user_ops++;
    pfvm__ok(st);
    return PFVM_OK;
}

const pfvm_op_def *pfvm_op_at(int index)
{
    int f;
    for (f = 0; pfvm__families[f]; f++) {
        const pfvm_op_def *d = pfvm__families[f];
        for (; d->name; d++)
            if (index-- == 0)
                return d;
    }
    return index < pfvm__n_user_ops ? pfvm__user_ops[index] : NULL;
}

const pfvm_op_def *pfvm_op_find(const char *domain, const char *name, int64_t opset)
{
    int f;
    for (f = pfvm__n_user_ops - 1; f >= 0; f--) {
        const pfvm_op_def *d = pfvm__user_ops[f];
        if (!strcmp(d->name, name) && pfvm__domain_eq(d->domain, domain) && opset >= d->since &&
            (d->until == 0 || opset <= d->until))
            return d;
    }
    for (f = 0; pfvm__families[f]; f++) {
        const pfvm_op_def *d;
        for (d = pfvm__families[f]; d->name; d++)
            if (!strcmp(d->name, name) && pfvm__domain_eq(d->domain, domain) && opset >= d->since &&
                (d->until == 0 || opset <= d->until))
                return d;
    }
    return NULL;
}

/* Opset of a node's domain: the model's import, or for domains the model
 * does not import, the newest version pfvm knows (functions may omit). */
static int64_t pfvm__node_opset(const pfvm_model *m, const char *domain)
{
    int64_t v = pfvm_model_opset(m, domain);
    if (v)
        return v;
    if (!domain[0])
        return 1;
    return 1;
}

static pfvm_code pfvm__resolve_graph(pfvm_graph *g, int strict, pfvm_status *st)
{
    int i, j, k;
    char lb[96];
    for (i = 0; i < (int)stbds_arrlen(g->nodes); i++) {
        pfvm_node *n = g->nodes[i];
        n->opset = (int)pfvm__node_opset(g->model, n->domain);
        n->op = pfvm_op_find(n->domain, n->op_type, n->opset);
        /* a call of a model-local function (fused groups are such calls) */
        if (!n->op && !PFVM__NO_FUNCTIONS && pfvm_model_function(g->model, n->domain, n->op_type))
            n->op = &pfvm__op_function_call;
        if (!n->op && strict)
            return pfvm__fail(st, PFVM_ERR_UNSUPPORTED, "node '%s' (%s%s%s): operator not supported at opset %d",
                              pfvm__node_label(n, lb, sizeof lb), n->domain, n->domain[0] ? "." : "", n->op_type,
                              n->opset);
        if (n->op) {
            const pfvm_op_def *d = n->op;
            int present = n->n_inputs;
            if (n->n_inputs < d->min_inputs || (d->max_inputs >= 0 && n->n_inputs > d->max_inputs))
                return pfvm__fail(st, PFVM_ERR_INVALID, "node '%s' (%s): %d inputs, expected %d to %d",
                                  pfvm__node_label(n, lb, sizeof lb), n->op_type, present, d->min_inputs,
                                  d->max_inputs);
            if (n->n_outputs < d->min_outputs || (d->max_outputs >= 0 && n->n_outputs > d->max_outputs))
                return pfvm__fail(st, PFVM_ERR_INVALID, "node '%s' (%s): %d outputs, expected %d to %d",
                                  pfvm__node_label(n, lb, sizeof lb), n->op_type, n->n_outputs, d->min_outputs,
                                  d->max_outputs);
            for (j = 0; j < d->min_inputs && j < n->n_inputs; j++)
                if (!n->inputs[j])
                    return pfvm__fail(st, PFVM_ERR_INVALID, "node '%s' (%s): required input %d is missing",
                                      pfvm__node_label(n, lb, sizeof lb), n->op_type, j);
            for (j = 0; j < d->min_outputs && j < n->n_outputs; j++)
                if (!n->outputs[j])
                    return pfvm__fail(st, PFVM_ERR_INVALID, "node '%s' (%s): required output %d is missing",
                                      pfvm__node_label(n, lb, sizeof lb), n->op_type, j);
            if (d->attrs) {
                const pfvm_attr_spec *a;
                for (a = d->attrs; a->name; a++) {
                    const pfvm_attr *at = pfvm_node_attr(n, a->name);
                    if (!at && a->required)
                        return pfvm__fail(st, PFVM_ERR_INVALID, "node '%s' (%s): required attribute '%s' is missing",
                                          pfvm__node_label(n, lb, sizeof lb), n->op_type, a->name);
                    if (at && at->type != a->type && !at->ref_attr_name)
                        return pfvm__fail(st, PFVM_ERR_INVALID, "node '%s' (%s): attribute '%s' has the wrong type",
                                          pfvm__node_label(n, lb, sizeof lb), n->op_type, a->name);
                }
            }
            if (d->check && d->check(n, st)) {
                pfvm__prefix(st, "node '%s' (%s)", pfvm__node_label(n, lb, sizeof lb), n->op_type);
                return st ? st->code : PFVM_ERR_INVALID;
            }
        }
        for (j = 0; j < n->n_attrs; j++) {
            pfvm_attr *a = &n->attrs[j];
            if (a->g && pfvm__resolve_graph(a->g, strict, st))
                return st ? st->code : PFVM_ERR_INVALID;
            for (k = 0; k < (a->type == PFVM_ATTR_GRAPHS ? a->n : 0); k++)
                if (pfvm__resolve_graph(a->graphs[k], strict, st))
                    return st ? st->code : PFVM_ERR_INVALID;
        }
    }
    return PFVM_OK;
}

double pfvm_dims_numel(const pfvm_dims *d)
{
    double n = 1;
    int i;
    if (d->rank < 0)
        return -1;
    for (i = 0; i < d->rank; i++)
        n *= (double)d->d[i];
    return n;
}

/* Concrete dims of an optional value under b (rank -1 when unknown). */
static void pfvm__value_dims(const pfvm_value *v, const pfvm_binding *b, pfvm_dims *d)
{
    d->rank = -1;
    if (v && v->type.kind == PFVM_KIND_TENSOR && pfvm_shape_eval(&v->type.shape, b, d->d))
        d->rank = v->type.shape.rank;
}

double pfvm_node_flops(const pfvm_node *n, const pfvm_binding *b)
{
    pfvm_dims in[16], out[8];
    int n_in = n->n_inputs < 16 ? n->n_inputs : 16, n_out = n->n_outputs < 8 ? n->n_outputs : 8, i;
    double most = -1;
    for (i = 0; i < n_in; i++)
        pfvm__value_dims(n->inputs[i], b, &in[i]);
    for (i = 0; i < n_out; i++)
        pfvm__value_dims(n->outputs[i], b, &out[i]);
    if (n->op && n->op->flops)
        return n->op->flops(n, in, n_in, out, n_out);
    /* a reduction does one operation per element it reads */
    if (n->op && n->op->fusion == PFVM_FUSE_REDUCTION)
        return n_in ? pfvm_dims_numel(&in[0]) : -1;
    for (i = 0; i < n_out; i++)
        if (n->outputs[i]) {
            double e = pfvm_dims_numel(&out[i]);
            if (e < 0)
                return -1;
            most = e > most ? e : most;
        }
    return most < 0 ? 0 : most;
}

static pfvm_code pfvm__scoped_graph_resolve_ops(pfvm_graph *g, int strict, pfvm_status *st)
{
    int i;
    /* with the main graph, the bodies of model-local functions (operators
     * they use that pfvm lacks matter only when they are called) */
    if (g && g->model && g == g->model->graph)
        for (i = 0; i < (int)stbds_arrlen(g->model->functions); i++)
            if (g->model->functions[i]->body && pfvm__resolve_graph(g->model->functions[i]->body, 0, st))
                return st ? st->code : PFVM_ERR_INVALID;
    return pfvm__resolve_graph(g, strict, st);
}

pfvm_code pfvm_graph_resolve_ops(pfvm_graph *g, int strict, pfvm_status *st)
{
    PFVM__SCOPED(pfvm_code, pfvm__graph_allocator(g), pfvm__scoped_graph_resolve_ops(g, strict, st));
}

/* ---- helpers for operator implementations --------------------------------- */

/* (the name in parentheses: not PFVM_TERSE_MESSAGES's macro) */
PFVM_INTERNAL pfvm_code(pfvm__op_fail)(pfvm_status *st, const pfvm_node *n, pfvm_code code, const char *fmt, ...)
{
    char msg[PFVM_STATUS_MSG], lb[96];
    va_list ap;
    va_start(ap, fmt);
    pfvm__vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return pfvm__fail(st, code, "node '%s' (%s): %s", pfvm__node_label(n, lb, sizeof lb), n->op_type, msg);
}

#ifdef PFVM_TERSE_MESSAGES
PFVM_INTERNAL pfvm_code pfvm__op_fail_at(pfvm_status *st, const pfvm_node *n, pfvm_code code, const char *file, int line)
{
    char lb[96];
    return (pfvm__fail)(st, code, "node '%s' (%s): %s (%s:%d)", pfvm__node_label(n, lb, sizeof lb), n->op_type,
                        pfvm_code_name(code), file, line);
}
#endif

PFVM_INTERNAL void *pfvm_ictx_alloc(pfvm_ictx *c, size_t size)
{
    return pfvm__arena_alloc(c->arena, size);
}

PFVM_INTERNAL pfvm_code pfvm_ival_set_sym(pfvm_ictx *c, pfvm_ival *out, const pfvm_sym *const *vals, int n)
{
    const pfvm_sym **s = (const pfvm_sym **)pfvm_ictx_alloc(c, sizeof(*s) * (size_t)(n + 1));
    int i;
    if (!s)
        return pfvm__fail(c->st, PFVM_ERR_NOMEM, "out of memory");
    for (i = 0; i < n; i++) {
        if (!vals[i])
            return PFVM_OK; /* an unknown element: leave the value unknown */
        s[i] = vals[i];
    }
    out->sym = s;
    out->n_sym = n;
    return PFVM_OK;
}

void pfvm_ival_set_tensor(pfvm_ival *v, pfvm_dtype dtype, const pfvm_shape *shape)
{
    v->type.kind = PFVM_KIND_TENSOR;
    v->type.dtype = dtype;
    if (shape)
        v->type.shape = *shape;
    else
        pfvm_shape_unknown(&v->type.shape);
}

pfvm_code pfvm_infer_same_as(pfvm_ictx *c, int out, int in)
{
    if (out >= c->n_out || !c->out[out])
        return PFVM_OK;
    if (in >= c->n_in || !c->in[in])
        return pfvm__fail(c->st, PFVM_ERR_INVALID, "input %d is missing", in);
    c->out[out]->type = c->in[in]->type;
    return PFVM_OK;
}

pfvm_code pfvm_infer_same_as_first(pfvm_ictx *c)
{
    return pfvm_infer_same_as(c, 0, 0);
}

/* s printed (for messages). */
static const char *pfvm__sym_str(const pfvm_sym *s, char *buf, size_t n)
{
    pfvm_sym_print(s, buf, n);
    return buf;
}

PFVM_INTERNAL pfvm_code pfvm_infer_broadcast(pfvm_ictx *c, const pfvm_shape *const *shapes, int n, pfvm_shape *out)
{
    char sb[96], sb2[96];
    int i, d, rank = 0;
    pfvm_symtab *t = c->syms;
    for (i = 0; i < n; i++) {
        if (shapes[i]->rank < 0) {
            pfvm_shape_unknown(out);
            return PFVM_OK;
        }
        if (shapes[i]->rank > rank)
            rank = shapes[i]->rank;
    }
    out->rank = rank;
    for (d = 0; d < rank; d++) {
        const pfvm_sym *r = NULL;
        int64_t rv = -1;
        for (i = 0; i < n; i++) {
            int off = rank - shapes[i]->rank;
            const pfvm_sym *s;
            int64_t v;
            if (d < off)
                continue;
            s = shapes[i]->dims[d - off];
            if (pfvm_sym_is_const(s, &v)) {
                if (v == 1)
                    continue;
                if (rv >= 0 && rv != v)
                    return pfvm__fail(c->st, PFVM_ERR_SHAPE,
                                      "cannot broadcast dimension %d: %lld vs %lld", d, (long long)rv, (long long)v);
                /* a symbol meets a constant: the constant wins (the symbol
                 * must equal it or be 1), unless it provably is neither */
                if (r && rv < 0 && pfvm_sym_proven_ge(t, r, 2) && pfvm_sym_proven_ne(t, r, s))
                    return pfvm__fail(c->st, PFVM_ERR_SHAPE, "cannot broadcast dimension %d: %s vs %lld", d,
                                      pfvm__sym_str(r, sb, sizeof sb), (long long)v);
                rv = v;
                r = s;
            } else if (!r) {
                r = s;
            } else if (r != s && pfvm_sym_proven_ge(t, s, 2) && (rv >= 0 || pfvm_sym_proven_ge(t, r, 2)) &&
                       pfvm_sym_proven_ne(t, r, s)) {
                /* neither can be 1 and they never match */
                return pfvm__fail(c->st, PFVM_ERR_SHAPE, "cannot broadcast dimension %d: %s vs %s", d,
                                  pfvm__sym_str(r, sb, sizeof sb), pfvm__sym_str(s, sb2, sizeof sb2));
            } else if (rv < 0 && r != s) {
                /* two different symbols: the result is max (each is 1 or equal) */
                r = pfvm_sym_max(t, r, s);
            }
        }
        out->dims[d] = r ? r : pfvm_sym_const(t, 1);
        if (!out->dims[d])
            return pfvm__fail(c->st, PFVM_ERR_NOMEM, "out of memory");
    }
    return PFVM_OK;
}

PFVM_INTERNAL pfvm_code pfvm_infer_check_eq(pfvm_ictx *c, const pfvm_sym *a, const pfvm_sym *b, const char *what)
{
    char sa[96], sb[96];
    if (!a || !b || !pfvm_sym_proven_ne(c->syms, a, b))
        return PFVM_OK;
    return pfvm__fail(c->st, PFVM_ERR_SHAPE, "%s differ: %s vs %s", what, pfvm__sym_str(a, sa, sizeof sa),
                      pfvm__sym_str(b, sb, sizeof sb));
}

PFVM_INTERNAL pfvm_code pfvm_infer_check_vec(pfvm_ictx *c, int j, const pfvm_sym *len, const char *what)
{
    const pfvm_ival *v = j < c->n_in ? c->in[j] : NULL;
    if (!v || v->type.kind != PFVM_KIND_TENSOR || v->type.shape.rank < 0)
        return PFVM_OK;
    if (v->type.shape.rank != 1)
        return pfvm__fail(c->st, PFVM_ERR_SHAPE, "%s must be 1-D, not rank %d", what, v->type.shape.rank);
    return pfvm_infer_check_eq(c, v->type.shape.dims[0], len, what);
}

PFVM_INTERNAL pfvm_code pfvm_infer_check_rank(pfvm_ictx *c, int j, int rank, const char *what)
{
    const pfvm_ival *v = j < c->n_in ? c->in[j] : NULL;
    if (!v || v->type.kind != PFVM_KIND_TENSOR || v->type.shape.rank < 0 || v->type.shape.rank == rank)
        return PFVM_OK;
    if (rank == 0)
        return pfvm__fail(c->st, PFVM_ERR_SHAPE, "%s must be a scalar, not rank %d", what, v->type.shape.rank);
    return pfvm__fail(c->st, PFVM_ERR_SHAPE, "%s must have rank %d, not %d", what, rank, v->type.shape.rank);
}

PFVM_INTERNAL pfvm_code pfvm_infer_axis(pfvm_ictx *c, int64_t axis, int rank, int *out)
{
    int a = pfvm__axis(axis, rank);
    if (a < 0)
        return pfvm__fail(c->st, PFVM_ERR_INVALID, "axis %lld is out of range for rank %d", (long long)axis, rank);
    *out = a;
    return PFVM_OK;
}

PFVM_INTERNAL int pfvm_ival_ints(const pfvm_ival *v, int64_t *out, int cap)
{
    int i;
    if (!v)
        return -1;
    if (v->value && v->value->kind == PFVM_KIND_TENSOR &&
        (pfvm_dtype_is_int(v->value->dtype) || v->value->dtype == PFVM_BOOL)) {
        int64_t n = pfvm_tensor_numel(v->value);
        if (n < 0 || n > cap)
            return -1;
        for (i = 0; i < n; i++)
            out[i] = pfvm_tensor_get_i64(v->value, i);
        return (int)n;
    }
    if (v->sym && v->n_sym <= cap) {
        for (i = 0; i < v->n_sym; i++)
            if (!pfvm_sym_is_const(v->sym[i], &out[i]))
                return -1;
        return v->n_sym;
    }
    return -1;
}

PFVM_INTERNAL int pfvm__axis(int64_t axis, int rank)
{
    if (axis < -rank || axis >= rank)
        return -1;
    return (int)(axis < 0 ? axis + rank : axis);
}

/* "<node label>_<suffix>" made an identifier. */
static void pfvm__infer_sym_name(const pfvm_ictx *c, const char *suffix, char *base, size_t n)
{
    char lb[96], *p;
    pfvm__snprintf(base, n, "%s_%s", pfvm__node_label(c->node, lb, sizeof lb), suffix);
    /* symbol names must be identifiers */
    for (p = base; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_'))
            *p = '_';
    if (base[0] >= '0' && base[0] <= '9')
        base[0] = '_';
}

PFVM_INTERNAL const pfvm_sym *pfvm_infer_node_sym(pfvm_ictx *c, const char *suffix)
{
    char base[200];
    pfvm__infer_sym_name(c, suffix, base, sizeof base);
    return pfvm_sym_unknown(c->syms, base);
}

pfvm_code pfvm_infer_unknown(pfvm_ictx *c, int out, pfvm_dtype dtype, int rank)
{
    pfvm_ival *o;
    char suffix[32];
    int i;
    if (out >= c->n_out || !(o = c->out[out]))
        return PFVM_OK;
    o->type.kind = PFVM_KIND_TENSOR;
    o->type.dtype = dtype;
    if (rank < 0 || rank > PFVM_MAX_RANK) {
        pfvm_shape_unknown(&o->type.shape);
        return PFVM_OK;
    }
    o->type.shape.rank = rank;
    for (i = 0; i < rank; i++) {
        pfvm__snprintf(suffix, sizeof suffix, "o%d_d%d", out, i);
        o->type.shape.dims[i] = pfvm_infer_node_sym(c, suffix);
        if (!o->type.shape.dims[i])
            return pfvm__fail(c->st, PFVM_ERR_NOMEM, "out of memory");
    }
    return PFVM_OK;
}
