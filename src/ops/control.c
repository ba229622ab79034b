/* ops/control: control flow (If, Loop, Scan), sequences (SequenceEmpty,
 * SequenceConstruct, SequenceInsert, SequenceErase, SequenceAt,
 * SequenceLength, SplitToSequence, ConcatFromSequence, SequenceMap) and
 * optionals (Optional, OptionalHasElement, OptionalGetElement).
 *
 * Subgraphs run through the executor (pfvm_kctx_subgraph), which plans a
 * child executor whose outer-scope values resolve to the caller's. Their
 * outputs, sequences and optionals are heap values: the sizes of what
 * control flow produces are known only while running. */
#include "ops_common.h"

/* ---- helpers --------------------------------------------------------------------------- */

/* Output dst becomes src, which is consumed. When the planner gave dst
 * storage (its shape was inferred), the data is copied there; otherwise
 * the heap value moves in (dst is a run-time value the executor frees). */
static pfvm_code pfvm__cf_move_out(pfvm_kctx *k, pfvm_tensor *dst, pfvm_tensor *src)
{
    if (dst->data && !dst->owns_data && dst->kind == PFVM_KIND_TENSOR) {
        pfvm_code rc = PFVM_OK;
        if (src->kind != PFVM_KIND_TENSOR || src->dtype != dst->dtype || src->rank != dst->rank ||
            memcmp(src->dims, dst->dims, sizeof(int64_t) * (size_t)(src->rank > 0 ? src->rank : 0)) ||
            src->dtype == PFVM_STRING)
            rc = pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "a subgraph output differs from the planned shape");
        else if (dst->nbytes)
            memcpy(dst->data, src->data, dst->nbytes);
        pfvm_tensor_free(src);
        return rc;
    }
    pfvm_tensor_release(dst);
    *dst = *src;
    dst->name = NULL;
    pfvm__free(src);
    return PFVM_OK;
}

static void pfvm__cf_free_all(pfvm_tensor **ts, int n)
{
    int i;
    for (i = 0; i < n; i++) {
        pfvm_tensor_free(ts[i]);
        ts[i] = NULL;
    }
}

/* Output i becomes an empty sequence of dtype. */
static pfvm_tensor *pfvm__cf_seq_out(pfvm_kctx *k, int i, pfvm_dtype dtype)
{
    pfvm_tensor *t = k->out[i];
    pfvm_tensor_release(t);
    memset(t, 0, sizeof *t);
    t->kind = PFVM_KIND_SEQUENCE;
    t->rank = -1;
    t->elem_dtype = t->dtype = dtype;
    return t;
}

static pfvm_code pfvm__cf_seq_push(pfvm_kctx *k, pfvm_tensor *seq, const pfvm_tensor *x)
{
    pfvm_tensor *c = pfvm_tensor_clone(x, k->st);
    if (!c)
        return k->st ? k->st->code : PFVM_ERR_NOMEM;
    if (!pfvm__arrpush(seq->elems, c)) {
        pfvm_tensor_free(c);
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_NOMEM, "out of memory");
    }
    if (x->kind == PFVM_KIND_TENSOR)
        seq->elem_dtype = seq->dtype = x->dtype;
    return PFVM_OK;
}

static pfvm_type *pfvm__cf_type(pfvm_ictx *c, const pfvm_type *like)
{
    pfvm_type *t = (pfvm_type *)pfvm_ictx_alloc(c, sizeof *t);
    if (t) {
        if (like)
            *t = *like;
        else
            pfvm_shape_unknown(&t->shape);
    }
    return t;
}

/* Output `out` is a sequence whose elements have type `elem`. */
static pfvm_code pfvm__cf_set_seq(pfvm_ictx *c, int out, const pfvm_type *elem)
{
    pfvm_ival *o = out < c->n_out ? c->out[out] : NULL;
    if (!o)
        return PFVM_OK;
    memset(&o->type, 0, sizeof o->type);
    o->type.kind = PFVM_KIND_SEQUENCE;
    pfvm_shape_unknown(&o->type.shape);
    o->type.elem = pfvm__cf_type(c, elem);
    if (!o->type.elem)
        return pfvm__fail(c->st, PFVM_ERR_NOMEM, "out of memory");
    o->type.dtype = elem ? elem->dtype : PFVM_UNDEFINED;
    return PFVM_OK;
}

/* Outputs whose kind is known but whose sizes come only when running. */
static void pfvm__cf_set_dynamic(pfvm_ictx *c, int out, const pfvm_type *like)
{
    pfvm_ival *o = out < c->n_out ? c->out[out] : NULL;
    if (!o)
        return;
    if (like && like->kind != PFVM_KIND_UNKNOWN) {
        o->type = *like;
        if (like->kind == PFVM_KIND_TENSOR)
            pfvm_shape_unknown(&o->type.shape);
    } else {
        memset(&o->type, 0, sizeof o->type);
        o->type.kind = PFVM_KIND_TENSOR;
        pfvm_shape_unknown(&o->type.shape);
    }
}

/* Element `i` of x along axis 0..: a copy of the slice at index `at` along `axis`. */
static pfvm_tensor *pfvm__cf_slice(pfvm_kctx *k, const pfvm_tensor *x, int axis, int64_t at, int keep)
{
    int64_t dims[PFVM_MAX_RANK], outer = 1, inner = 1, o;
    int d, r = 0;
    size_t es = pfvm_dtype_size(x->dtype);
    pfvm_tensor *t;
    for (d = 0; d < x->rank; d++) {
        if (d == axis && !keep)
            continue;
        dims[r++] = d == axis ? 1 : x->dims[d];
    }
    for (d = 0; d < axis; d++)
        outer *= x->dims[d];
    for (d = axis + 1; d < x->rank; d++)
        inner *= x->dims[d];
    t = pfvm_tensor_new(x->dtype, r, dims, k->st);
    if (!t)
        return NULL;
    for (o = 0; o < outer; o++) {
        int64_t src = (o * x->dims[axis] + at) * inner, e;
        if (x->dtype == PFVM_STRING)
            for (e = 0; e < inner; e++)
                ((char **)t->data)[o * inner + e] = pfvm__strdup(((char *const *)x->data)[src + e]);
        else if (inner)
            memcpy((char *)t->data + (size_t)(o * inner) * es, (const char *)x->data + (size_t)src * es, (size_t)inner * es);
    }
    return t;
}

/* Stacks n equal-shaped tensors along a new axis into output i. */
/* Makes a string tensor whose elements were copied as pointers own copies
 * of them (two owners would free them twice); on failure no pointer is
 * left shared. */
static pfvm_code pfvm__cf_own_strings(pfvm_kctx *k, pfvm_tensor *t)
{
    int64_t i, n = pfvm_tensor_numel(t);
    char **s = (char **)t->data;
    for (i = 0; i < n; i++) {
        const char *shared = s[i];
        if (!(s[i] = pfvm__strdup(shared ? shared : ""))) {
            for (; i < n; i++)
                s[i] = NULL;
            return pfvm__op_fail(k->st, k->node, PFVM_ERR_NOMEM, "out of memory");
        }
    }
    return PFVM_OK;
}

static pfvm_code pfvm__cf_stack(pfvm_kctx *k, int i, pfvm_tensor *const *parts, int64_t n, int axis, pfvm_dtype dtype)
{
    int64_t dims[PFVM_MAX_RANK], outer = 1, inner = 1, o, p;
    int d, r;
    size_t es;
    if (n == 0) {
        int64_t zero = 0;
        return pfvm_kctx_output(k, i, dtype, 1, &zero);
    }
    r = parts[0]->rank + 1;
    if (r > PFVM_MAX_RANK || axis < 0 || axis >= r)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "cannot stack along axis %d", axis);
    for (p = 0; p < n; p++)
        if (parts[p]->kind != PFVM_KIND_TENSOR || (!parts[p]->data && pfvm_tensor_numel(parts[p])))
            return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "scan output %d is not a tensor in every iteration", i);
    for (p = 1; p < n; p++)
        if (parts[p]->dtype != parts[0]->dtype || parts[p]->rank != parts[0]->rank || memcmp(parts[p]->dims, parts[0]->dims, sizeof(int64_t) * (size_t)parts[0]->rank))
            return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "per-iteration outputs differ in shape");
    for (d = 0, o = 0; d < r; d++)
        dims[d] = d == axis ? n : parts[0]->dims[o++];
    if (!(k->out[i]->data && !k->out[i]->owns_data)) { /* not planned: a run-time value */
        pfvm_tensor_release(k->out[i]);
        memset(k->out[i], 0, sizeof *k->out[i]);
    }
    if (pfvm_kctx_output(k, i, parts[0]->dtype, r, dims))
        return k->st ? k->st->code : PFVM_ERR_NOMEM;
    for (d = 0; d < axis; d++)
        outer *= parts[0]->dims[d];
    for (d = axis; d < parts[0]->rank; d++)
        inner *= parts[0]->dims[d];
    es = pfvm_dtype_size(parts[0]->dtype);
    for (o = 0; o < outer; o++)
        for (p = 0; p < n; p++) {
            int64_t dst = (o * n + p) * inner, src = o * inner, e;
            if (parts[0]->dtype == PFVM_STRING)
                for (e = 0; e < inner; e++) {
                    const char *str = ((char *const *)parts[p]->data)[src + e];
                    if (!(((char **)k->out[i]->data)[dst + e] = pfvm__strdup(str ? str : "")))
                        return pfvm__op_fail(k->st, k->node, PFVM_ERR_NOMEM, "out of memory");
                }
            else if (inner)
                memcpy((char *)k->out[i]->data + (size_t)dst * es, (const char *)parts[p]->data + (size_t)src * es,
                       (size_t)inner * es);
        }
    return PFVM_OK;
}

/* ---- If ---------------------------------------------------------------------------------- */

/* If's outputs merge the branches' output types (inferred before the node
 * by the driver): a dim equal in both is kept, a differing one becomes a
 * fresh symbol named after the output; other kinds stay dynamic. A
 * condition known before running (a constant, or a symbolic `T == 1` the
 * case analysis assumes) picks its branch's types. A branch whose
 * inference fails with an error of the model (shape, invalid, range)
 * cannot run without failing, so the outputs, whenever they exist, have
 * the other branch's types. */
static void pfvm__cf_if_take(pfvm_ictx *c, const pfvm_attr *taken)
{
    int j;
    for (j = 0; j < c->n_out; j++)
        if (c->out[j] && taken && taken->g && j < (int)stbds_arrlen(taken->g->outputs))
            c->out[j]->type = taken->g->outputs[j]->type;
}

/* Errors that say the model cannot run that way (not pfvm's limits). */
static int pfvm__cf_model_error(pfvm_code rc)
{
    return rc == PFVM_ERR_SHAPE || rc == PFVM_ERR_INVALID || rc == PFVM_ERR_RANGE;
}

static pfvm_code pfvm__cf_infer_if(pfvm_ictx *c)
{
    const pfvm_attr *tb = pfvm_node_attr(c->node, "then_branch"), *eb = pfvm_node_attr(c->node, "else_branch");
    int j, d;
    int64_t cond;
    pfvm_code rt = PFVM_OK, re = PFVM_OK;
    pfvm_status keep;
    memset(&keep, 0, sizeof keep);
    /* a condition known before running picks its branch's types; the
     * other branch is dead code */
    if (pfvm_ival_ints(c->in[0], &cond, 1) == 1 ||
        (c->in[0] && c->in[0]->sym && c->in[0]->n_sym == 1 && pfvm_ictx_decide(c, c->in[0]->sym[0], &cond))) {
        const pfvm_attr *taken = cond ? tb : eb;
        if (taken && pfvm_ictx_infer_graph(c, taken->g, NULL, 0))
            return c->st ? c->st->code : PFVM_ERR_SHAPE;
        pfvm__cf_if_take(c, taken);
        return PFVM_OK;
    }
    if (c->st)
        keep = *c->st;
    if (tb && (rt = pfvm_ictx_infer_graph(c, tb->g, NULL, 0)) != PFVM_OK && !pfvm__cf_model_error(rt))
        return rt;
    if (rt && c->st)
        *c->st = keep;
    if (eb && (re = pfvm_ictx_infer_graph(c, eb->g, NULL, 0)) != PFVM_OK && (!pfvm__cf_model_error(re) || rt))
        return re;
    if (rt || re) {
        if (c->st)
            *c->st = keep;
        pfvm__cf_if_take(c, rt ? eb : tb);
        return PFVM_OK;
    }
    for (j = 0; j < c->n_out; j++) {
        const pfvm_type *a = tb && tb->g && j < (int)stbds_arrlen(tb->g->outputs) ? &tb->g->outputs[j]->type : NULL;
        const pfvm_type *b = eb && eb->g && j < (int)stbds_arrlen(eb->g->outputs) ? &eb->g->outputs[j]->type : NULL;
        pfvm__cf_set_dynamic(c, j, a);
        if (!c->out[j] || !a || !b || a->kind != PFVM_KIND_TENSOR || b->kind != PFVM_KIND_TENSOR || a->shape.rank < 0 ||
            a->shape.rank != b->shape.rank || (a->dtype && b->dtype && a->dtype != b->dtype))
            continue;
        if (pfvm_infer_unknown(c, j, a->dtype ? a->dtype : b->dtype, a->shape.rank))
            return c->st ? c->st->code : PFVM_ERR_NOMEM;
        for (d = 0; d < a->shape.rank; d++)
            if (pfvm_sym_proven_eq(a->shape.dims[d], b->shape.dims[d]))
                c->out[j]->type.shape.dims[d] = a->shape.dims[d];
    }
    return PFVM_OK;
}

static pfvm_code pfvm__cf_k_if(pfvm_kctx *k)
{
    const pfvm_tensor *c = k->in[0];
    int cond, j;
    const pfvm_attr *a;
    pfvm_tensor *outs[64];
    /* a sequence or optional has no data to read (its numel is 1) */
    if (!c || c->kind != PFVM_KIND_TENSOR || c->dtype == PFVM_STRING)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "cond is not a numeric or bool tensor");
    cond = pfvm_tensor_numel(c) > 0 && pfvm_tensor_get_i64(c, 0) != 0;
    a = pfvm_node_attr(k->node, cond ? "then_branch" : "else_branch");
    if (!a || !a->g)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "the %s branch is missing", cond ? "then" : "else");
    if (k->n_out > 64)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_UNSUPPORTED, "more than 64 outputs");
    if (pfvm_kctx_subgraph(k, a->g, NULL, 0, outs, k->n_out, k->st))
        return k->st ? k->st->code : PFVM_ERR_RUNTIME;
    {
        pfvm_code rc = PFVM_OK;
        for (j = 0; j < k->n_out; j++) {
            if (k->out[j] && !rc)
                rc = pfvm__cf_move_out(k, k->out[j], outs[j]);
            else
                pfvm_tensor_free(outs[j]);
        }
        return rc;
    }
}

/* ---- Loop --------------------------------------------------------------------------------- */

/* Joins the type a loop-carried value had before an iteration (`cur`) with
 * the one the body gives it (`next`): dims provably equal stay, others
 * become the loop's own symbol for that dim (`Loop_3_c0_d1`, and widened[d]
 * is set), a rank that changes becomes unknown. Returns 1 when cur
 * changed. */
static int pfvm__cf_join(pfvm_ictx *c, pfvm_type *cur, const pfvm_type *next, const char *tag, int j,
                         unsigned char *widened)
{
    int d, changed = 0;
    char suffix[48];
    if (cur->kind != PFVM_KIND_TENSOR || cur->shape.rank < 0)
        return 0;
    if (next->kind != PFVM_KIND_TENSOR || next->shape.rank != cur->shape.rank) {
        pfvm_shape_unknown(&cur->shape);
        return 1;
    }
    for (d = 0; d < cur->shape.rank; d++) {
        const pfvm_sym *x;
        if (pfvm_sym_proven_eq(cur->shape.dims[d], next->shape.dims[d]))
            continue;
        pfvm__snprintf(suffix, sizeof suffix, "%s%d_d%d", tag, j, d);
        x = pfvm_infer_node_sym(c, suffix);
        if (x && x != cur->shape.dims[d]) {
            cur->shape.dims[d] = x;
            changed = 1;
        }
        widened[d] = 1;
    }
    return changed;
}

/* The type a body input gets in one round: what the loop feeds it (`fed`),
 * except that a dim the graph declares as a number stays where inference
 * made up a symbol it could not derive, unless the loop widened that dim
 * (it changes between iterations, so no number holds). Named dims the
 * body declares are never narrowed: fed is sound for every round. */
static void pfvm__cf_merge(pfvm_type *out, const pfvm_type *fed, const pfvm_type *decl, const unsigned char *widened)
{
    int d;
    *out = *fed;
    if (!decl || decl->kind != PFVM_KIND_TENSOR || out->kind != PFVM_KIND_TENSOR ||
        decl->shape.rank != out->shape.rank)
        return;
    for (d = 0; d < out->shape.rank; d++) {
        const pfvm_sym *x = out->shape.dims[d], *y = decl->shape.dims[d];
        if (y && x && pfvm_sym_is_const(y, NULL) && x->kind == PFVM_SYM_VAR && x->inferred && !(widened && widened[d]))
            out->shape.dims[d] = y;
    }
}

/* Iterates the body's inference until the carried types stop changing
 * (each dim can only turn into the loop's symbol once, so this ends).
 * `tin` holds the types the node feeds the body inputs; carried state
 * starts at tin[skip]. Each round starts from the types the body had
 * before (what the model declared, or a previous analysis proved for
 * every iteration), so nothing one round assumed about the first
 * iterations survives into the next; the last round's types, the fixed
 * point, stay in the graph. */
#define PFVM__CF_FIXPOINT_ROUNDS 4
static pfvm_code pfvm__cf_fixpoint(pfvm_ictx *c, pfvm_graph *body, pfvm_type *tin, const pfvm_type **ptr, int n_in,
                                   int skip, int out_skip, int n_carried)
{
    int round, j, n_bin = (int)stbds_arrlen(body->inputs);
    pfvm_types_saved *saved;
    pfvm_type *decl, *given;
    unsigned char *widened;
    pfvm_code rc = PFVM_OK;
    decl = (pfvm_type *)pfvm_ictx_alloc(c, sizeof *decl * (size_t)(n_in + 1));
    given = (pfvm_type *)pfvm_ictx_alloc(c, sizeof *given * (size_t)(n_in + 1));
    widened = (unsigned char *)pfvm_ictx_alloc(c, (size_t)(n_in + 1) * PFVM_MAX_RANK);
    if (!decl || !given || !widened || !(saved = pfvm_types_save(body)))
        return pfvm__fail(c->st, PFVM_ERR_NOMEM, "out of memory");
    memset(widened, 0, (size_t)(n_in + 1) * PFVM_MAX_RANK);
    for (j = 0; j < n_in; j++) {
        if (j < n_bin)
            decl[j] = body->inputs[j]->type;
        else
            memset(&decl[j], 0, sizeof decl[j]);
        ptr[j] = &given[j];
    }
    for (round = 0; round <= PFVM__CF_FIXPOINT_ROUNDS; round++) {
        int changed = 0;
        if (round == PFVM__CF_FIXPOINT_ROUNDS) {
            /* not settled (cannot happen with the joins above): say nothing */
            for (j = 0; j < n_carried; j++)
                pfvm_shape_unknown(&tin[skip + j].shape);
        }
        pfvm_types_restore(saved);
        for (j = 0; j < n_in; j++)
            pfvm__cf_merge(&given[j], &tin[j], &decl[j], widened + (size_t)j * PFVM_MAX_RANK);
        if (pfvm_ictx_infer_body(c, body, ptr, n_in)) {
            rc = c->st ? c->st->code : PFVM_ERR_SHAPE;
            break;
        }
        if (round == PFVM__CF_FIXPOINT_ROUNDS)
            break;
        for (j = 0; j < n_carried && out_skip + j < (int)stbds_arrlen(body->outputs); j++)
            changed |= pfvm__cf_join(c, &tin[skip + j], &body->outputs[out_skip + j]->type, "c", j,
                                     widened + (size_t)(skip + j) * PFVM_MAX_RANK);
        if (!changed)
            break;
    }
    if (!rc)
        for (j = 0; j < n_in && j < n_bin; j++)
            pfvm_ictx_fed(c, body, j, &decl[j], &given[j]);
    pfvm_types_saved_free(saved);
    return rc;
}

/* A scan output: the body's per-iteration type stacked along `axis` with
 * `len` iterations. */
static void pfvm__cf_stacked(pfvm_ictx *c, int out, const pfvm_type *elem, int axis, const pfvm_sym *len)
{
    pfvm_ival *o = out < c->n_out ? c->out[out] : NULL;
    int r, d;
    if (!o)
        return;
    pfvm__cf_set_dynamic(c, out, elem);
    if (!elem || elem->kind != PFVM_KIND_TENSOR || elem->shape.rank < 0 || elem->shape.rank >= PFVM_MAX_RANK || !len)
        return;
    r = elem->shape.rank + 1;
    axis = pfvm__axis(axis, r);
    if (axis < 0)
        return;
    o->type.shape.rank = r;
    for (d = 0; d < r; d++)
        o->type.shape.dims[d] = d < axis ? elem->shape.dims[d] : d == axis ? len : elem->shape.dims[d - 1];
}

static pfvm_code pfvm__cf_infer_loop(pfvm_ictx *c)
{
    const pfvm_attr *g = pfvm_node_attr(c->node, "body");
    pfvm_graph *body = g ? g->g : NULL;
    int j, n_carried = c->n_in - 2, n_body_out;
    pfvm_type *tin;
    const pfvm_type **ptr;
    const pfvm_sym *trip = NULL;
    int64_t m;
    pfvm_code rc;
    /* M and cond are optional but keep their slots (empty names) */
    if (c->n_in < 2)
        return pfvm__fail(c->st, PFVM_ERR_INVALID, "needs the M and cond input slots (either may be empty), got %d inputs",
                          c->n_in);
    if (!c->driver || !body) {
        /* bind time: sizes come when the loop runs */
        for (j = 0; j < c->n_out; j++) {
            const pfvm_type *t = NULL;
            if (j < n_carried && c->in[2 + j])
                t = &c->in[2 + j]->type;
            else if (body && j + 1 < (int)stbds_arrlen(body->outputs))
                t = &body->outputs[j + 1]->type;
            pfvm__cf_set_dynamic(c, j, t);
        }
        return PFVM_OK;
    }
    tin = (pfvm_type *)pfvm_ictx_alloc(c, sizeof *tin * (size_t)(n_carried + 2));
    ptr = (const pfvm_type **)pfvm_ictx_alloc(c, sizeof *ptr * (size_t)(n_carried + 2));
    if (!tin || !ptr)
        return pfvm__fail(c->st, PFVM_ERR_NOMEM, "out of memory");
    memset(tin, 0, sizeof *tin * (size_t)(n_carried + 2));
    tin[0].kind = tin[1].kind = PFVM_KIND_TENSOR;
    tin[0].dtype = PFVM_INT64;
    tin[1].dtype = PFVM_BOOL;
    for (j = 0; j < n_carried; j++)
        if (c->in[2 + j])
            tin[2 + j] = c->in[2 + j]->type;
        else
            pfvm_shape_unknown(&tin[2 + j].shape);
    if ((rc = pfvm__cf_fixpoint(c, body, tin, ptr, n_carried + 2, 2, 1, n_carried)) != PFVM_OK)
        return rc;
    for (j = 0; j < n_carried && j < c->n_out; j++)
        if (c->out[j])
            c->out[j]->type = tin[2 + j];
    /* the trip count is M when nothing else can stop the loop: no
     * condition input, and the body hands its condition straight back */
    n_body_out = (int)stbds_arrlen(body->outputs);
    if (c->in[0] && !c->in[1] && n_body_out > 0 && stbds_arrlen(body->inputs) > 1 && body->outputs[0] == body->inputs[1]) {
        if (c->in[0]->sym && c->in[0]->n_sym == 1)
            trip = c->in[0]->sym[0];
        else if (pfvm_ival_ints(c->in[0], &m, 1) == 1)
            trip = pfvm_sym_const(c->syms, m);
    }
    if (!trip && !(trip = pfvm_infer_node_sym(c, "trips")))
        return pfvm__fail(c->st, PFVM_ERR_NOMEM, "out of memory");
    for (j = n_carried; j < c->n_out; j++)
        pfvm__cf_stacked(c, j, j + 1 < n_body_out ? &body->outputs[j + 1]->type : NULL, 0, trip);
    return PFVM_OK;
}

/* M and cond are read as numbers: a sequence, a string tensor or a tensor
 * without storage would be read through a wild or NULL pointer. */
static int pfvm__cf_is_scalar_number(const pfvm_tensor *t)
{
    return t->kind == PFVM_KIND_TENSOR && t->dtype != PFVM_STRING && (t->data || !pfvm_tensor_numel(t));
}

static pfvm_code pfvm__cf_k_loop(pfvm_kctx *k)
{
    const pfvm_attr *a = pfvm_node_attr(k->node, "body");
    const pfvm_graph *body = a ? a->g : NULL;
    int n_carried = k->n_in - 2, n_scan, j;
    int64_t max_trip = INT64_MAX, it;
    int cond = 1;
    pfvm_tensor **cur = NULL, **outs = NULL, ***scans = NULL;
    const pfvm_tensor **ins = NULL;
    pfvm_tensor iter_t, cond_t;
    int64_t iter_v = 0;
    uint8_t cond_v = 1;
    pfvm_code rc = PFVM_OK;
    /* the scan outputs kept so far count against the executor's total */
    size_t kept = 0, limit = k->max_total_bytes ? k->max_total_bytes : PFVM_MAX_TOTAL_BYTES;
    size_t max_iterations = k->max_loop_iterations ? k->max_loop_iterations : PFVM_MAX_LOOP_ITERATIONS;
    if (!body || n_carried < 0)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "the body or the M and cond input slots are missing");
    for (j = 0; j < 2; j++)
        if (k->in[j] && !pfvm__cf_is_scalar_number(k->in[j]))
            return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "input %d (%s) is not a numeric tensor", j,
                                 j ? "cond" : "M");
    if (k->in[0] && pfvm_tensor_numel(k->in[0]))
        max_trip = pfvm_tensor_get_i64(k->in[0], 0);
    if (k->in[1] && pfvm_tensor_numel(k->in[1]))
        cond = pfvm_tensor_get_i64(k->in[1], 0) != 0;
    n_scan = (int)stbds_arrlen(body->outputs) - 1 - n_carried;
    if (n_scan < 0 || k->n_out != n_carried + n_scan)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "the body's outputs do not match the loop");
    if (!pfvm__arrsetlen(cur, n_carried) || !pfvm__arrsetlen(outs, 1 + n_carried + n_scan) ||
        !pfvm__arrsetlen(ins, 2 + n_carried) || !pfvm__arrsetlen(scans, n_scan)) {
        stbds_arrfree(cur);
        stbds_arrfree(outs);
        stbds_arrfree(ins);
        stbds_arrfree(scans);
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_NOMEM, "out of memory");
    }
    for (j = 0; j < n_scan; j++)
        scans[j] = NULL;
    for (j = 0; j < n_carried; j++)
        cur[j] = NULL;
    for (j = 0; j < n_carried && !rc; j++)
        if (!k->in[2 + j])
            rc = pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "loop-carried input %d is missing", 2 + j);
        else if (!(cur[j] = pfvm_tensor_clone(k->in[2 + j], k->st)))
            rc = k->st ? k->st->code : PFVM_ERR_NOMEM;
    memset(&iter_t, 0, sizeof iter_t);
    iter_t.kind = PFVM_KIND_TENSOR;
    iter_t.dtype = PFVM_INT64;
    iter_t.data = &iter_v;
    iter_t.nbytes = 8;
    cond_t = iter_t;
    cond_t.dtype = PFVM_BOOL;
    cond_t.data = &cond_v;
    cond_t.nbytes = 1;
    for (it = 0; !rc && it < max_trip && cond; it++) {
        if ((uint64_t)it >= (uint64_t)max_iterations) {
            rc = pfvm__op_fail(k->st, k->node, PFVM_ERR_RUNTIME,
                               "ran past the limit of %zu iterations (pfvm_limits.max_loop_iterations)", max_iterations);
            break;
        }
        iter_v = it;
        cond_v = (uint8_t)cond;
        ins[0] = &iter_t;
        ins[1] = &cond_t;
        for (j = 0; j < n_carried; j++)
            ins[2 + j] = cur[j];
        rc = pfvm_kctx_subgraph(k, body, ins, 2 + n_carried, outs, 1 + n_carried + n_scan, k->st);
        if (rc)
            break;
        cond = pfvm_tensor_numel(outs[0]) ? pfvm_tensor_get_i64(outs[0], 0) != 0 : 0;
        pfvm_tensor_free(outs[0]);
        for (j = 0; j < n_carried; j++) {
            pfvm_tensor_free(cur[j]);
            cur[j] = outs[1 + j];
        }
        for (j = 0; j < n_scan; j++) {
            pfvm_tensor *y = outs[1 + n_carried + j];
            if (rc || !pfvm__arrpush(scans[j], y)) {
                pfvm_tensor_free(y);
                if (!rc)
                    rc = pfvm__op_fail(k->st, k->node, PFVM_ERR_NOMEM, "out of memory after %lld iterations",
                                       (long long)it);
                continue;
            }
            if (!pfvm__add_size(kept, y->nbytes, &kept) || kept > limit)
                rc = pfvm__op_fail(k->st, k->node, PFVM_ERR_NOMEM,
                                   "the scan outputs of %lld iterations take more than the limit of %zu bytes in all",
                                   (long long)it + 1, limit);
        }
    }
    for (j = 0; !rc && j < n_carried; j++) {
        if (k->out[j]) {
            rc = pfvm__cf_move_out(k, k->out[j], cur[j]);
            cur[j] = NULL;
        }
    }
    for (j = 0; !rc && j < n_scan; j++)
        if (k->out[n_carried + j]) {
            pfvm_dtype dt = body->outputs[1 + n_carried + j]->type.dtype;
            rc = pfvm__cf_stack(k, n_carried + j, scans[j], (int64_t)stbds_arrlen(scans[j]), 0, dt ? dt : PFVM_FLOAT);
        }
    pfvm__cf_free_all(cur, n_carried);
    for (j = 0; j < n_scan; j++) {
        pfvm__cf_free_all(scans[j], (int)stbds_arrlen(scans[j]));
        stbds_arrfree(scans[j]);
    }
    stbds_arrfree(scans);
    stbds_arrfree(cur);
    stbds_arrfree(outs);
    stbds_arrfree(ins);
    return rc;
}

/* ---- Scan (opset 9+) ----------------------------------------------------------------------------- */

static int64_t pfvm__cf_attr_at(const pfvm_node *n, const char *name, int i, int64_t def);

/* num_scan_inputs, checked against the node's inputs (the attribute is an
 * int64 that a model may set to anything): -1 when it does not fit. */
static int pfvm__cf_num_scan(const pfvm_node *n, int n_in)
{
    int64_t m = pfvm_node_attr_int(n, "num_scan_inputs", 0);
    return m >= 1 && m <= n_in ? (int)m : -1;
}

static pfvm_code pfvm__cf_infer_scan(pfvm_ictx *c)
{
    int first = c->node->opset < 9; /* opset 8 starts with sequence_lens and has a batch axis */
    int m = pfvm__cf_num_scan(c->node, c->n_in - first);
    int j, d, n_state = c->n_in - first - m, n_body_out;
    const pfvm_attr *g = pfvm_node_attr(c->node, "body");
    pfvm_graph *body = g ? g->g : NULL;
    pfvm_type *tin;
    const pfvm_type **ptr;
    const pfvm_sym *len = NULL;
    pfvm_code rc;
    if (m < 0)
        return pfvm__fail(c->st, PFVM_ERR_INVALID, "num_scan_inputs %lld does not fit the %d inputs",
                             (long long)pfvm_node_attr_int(c->node, "num_scan_inputs", 0), c->n_in - first);
    if (!c->driver || !body || first || n_state < 0 || m < 1) {
        for (j = 0; j < c->n_out; j++)
            pfvm__cf_set_dynamic(c, j, j < n_state && c->in[first + j] ? &c->in[first + j]->type : NULL);
        return PFVM_OK;
    }
    tin = (pfvm_type *)pfvm_ictx_alloc(c, sizeof *tin * (size_t)(n_state + m));
    ptr = (const pfvm_type **)pfvm_ictx_alloc(c, sizeof *ptr * (size_t)(n_state + m));
    if (!tin || !ptr)
        return pfvm__fail(c->st, PFVM_ERR_NOMEM, "out of memory");
    memset(tin, 0, sizeof *tin * (size_t)(n_state + m));
    for (j = 0; j < n_state + m; j++) {
        const pfvm_ival *x = c->in[j];
        if (x)
            tin[j] = x->type;
        else
            pfvm_shape_unknown(&tin[j].shape);
    }
    /* a scan input's slice drops its scan axis; every scan input has the
     * same length along it */
    for (j = 0; j < m; j++) {
        pfvm_type *t = &tin[n_state + j];
        int r = t->shape.rank, ax;
        if (t->kind != PFVM_KIND_TENSOR || r < 1)
            continue;
        ax = pfvm__axis(pfvm__cf_attr_at(c->node, "scan_input_axes", j, 0), r);
        if (ax < 0)
            return pfvm__fail(c->st, PFVM_ERR_INVALID, "scan_input_axes[%d] is out of range for rank %d", j, r);
        if (len && !pfvm_sym_proven_eq(len, t->shape.dims[ax]) && pfvm_sym_is_const(len, NULL) &&
            pfvm_sym_is_const(t->shape.dims[ax], NULL))
            return pfvm__fail(c->st, PFVM_ERR_SHAPE, "scan inputs differ in length");
        if (!len)
            len = t->shape.dims[ax];
        for (d = ax; d + 1 < r; d++)
            t->shape.dims[d] = t->shape.dims[d + 1];
        t->shape.rank = r - 1;
    }
    if ((rc = pfvm__cf_fixpoint(c, body, tin, ptr, n_state + m, 0, 0, n_state)) != PFVM_OK)
        return rc;
    for (j = 0; j < n_state && j < c->n_out; j++)
        if (c->out[j])
            c->out[j]->type = tin[j];
    if (!len && !(len = pfvm_infer_node_sym(c, "len")))
        return pfvm__fail(c->st, PFVM_ERR_NOMEM, "out of memory");
    n_body_out = (int)stbds_arrlen(body->outputs);
    for (j = n_state; j < c->n_out; j++)
        pfvm__cf_stacked(c, j, j < n_body_out ? &body->outputs[j]->type : NULL,
                         (int)pfvm__cf_attr_at(c->node, "scan_output_axes", j - n_state, 0), len);
    return PFVM_OK;
}

static int64_t pfvm__cf_attr_at(const pfvm_node *n, const char *name, int i, int64_t def)
{
    const int64_t *v;
    int cnt = pfvm_node_attr_ints(n, name, &v);
    return i < cnt ? v[i] : def;
}

static pfvm_code pfvm__cf_k_scan(pfvm_kctx *k)
{
    const pfvm_attr *a = pfvm_node_attr(k->node, "body");
    const pfvm_graph *body = a ? a->g : NULL;
    int m = pfvm__cf_num_scan(k->node, k->n_in), n = k->n_in - m, n_out_scan = k->n_out - n, j;
    int64_t T = -1, t;
    pfvm_tensor **state = NULL, **outs = NULL, ***scans = NULL, **slices = NULL;
    const pfvm_tensor **ins = NULL;
    pfvm_code rc = PFVM_OK;
    if (!body || m < 1 || n < 0 || n_out_scan < 0)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "body or num_scan_inputs does not fit the inputs");
    for (j = 0; j < m; j++) {
        const pfvm_tensor *x = k->in[n + j];
        int ax;
        if (!x || x->kind != PFVM_KIND_TENSOR)
            return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "scan input %d is missing or not a tensor", j);
        ax = pfvm__axis(pfvm__cf_attr_at(k->node, "scan_input_axes", j, 0), x->rank);
        if (ax < 0)
            return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "scan input axis is out of range");
        if (T >= 0 && x->dims[ax] != T)
            return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "scan inputs differ in length");
        T = x->dims[ax];
    }
    if (!pfvm__arrsetlen(state, n) || !pfvm__arrsetlen(outs, n + n_out_scan) || !pfvm__arrsetlen(ins, n + m) ||
        !pfvm__arrsetlen(slices, m) || !pfvm__arrsetlen(scans, n_out_scan)) {
        stbds_arrfree(state);
        stbds_arrfree(outs);
        stbds_arrfree(ins);
        stbds_arrfree(slices);
        stbds_arrfree(scans);
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_NOMEM, "out of memory");
    }
    for (j = 0; j < n_out_scan; j++)
        scans[j] = NULL;
    for (j = 0; j < m; j++)
        slices[j] = NULL;
    for (j = 0; j < n; j++)
        state[j] = NULL;
    for (j = 0; j < n && !rc; j++)
        if (!k->in[j])
            rc = pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "state input %d is missing", j);
        else if (!(state[j] = pfvm_tensor_clone(k->in[j], k->st)))
            rc = k->st ? k->st->code : PFVM_ERR_NOMEM;
    for (t = 0; !rc && t < T; t++) {
        for (j = 0; j < m && !rc; j++) {
            const pfvm_tensor *x = k->in[n + j];
            int ax = pfvm__axis(pfvm__cf_attr_at(k->node, "scan_input_axes", j, 0), x->rank);
            int64_t at = pfvm__cf_attr_at(k->node, k->node->opset < 9 ? "directions" : "scan_input_directions", j, 0) ? T - 1 - t : t;
            pfvm_tensor_free(slices[j]);
            if (!(slices[j] = pfvm__cf_slice(k, x, ax, at, 0)))
                rc = k->st ? k->st->code : PFVM_ERR_NOMEM;
        }
        if (rc)
            break;
        for (j = 0; j < n; j++)
            ins[j] = state[j];
        for (j = 0; j < m; j++)
            ins[n + j] = slices[j];
        rc = pfvm_kctx_subgraph(k, body, ins, n + m, outs, n + n_out_scan, k->st);
        if (rc)
            break;
        for (j = 0; j < n; j++) {
            pfvm_tensor_free(state[j]);
            state[j] = outs[j];
        }
        for (j = 0; j < n_out_scan; j++)
            if (!pfvm__arrpush(scans[j], outs[n + j])) {
                pfvm_tensor_free(outs[n + j]);
                rc = pfvm__op_fail(k->st, k->node, PFVM_ERR_NOMEM, "out of memory");
            }
    }
    for (j = 0; !rc && j < n; j++)
        if (k->out[j]) {
            rc = pfvm__cf_move_out(k, k->out[j], state[j]);
            state[j] = NULL;
        }
    for (j = 0; !rc && j < n_out_scan; j++) {
        int64_t cnt = (int64_t)stbds_arrlen(scans[j]), p;
        int ax = (int)pfvm__cf_attr_at(k->node, "scan_output_axes", j, 0);
        if (pfvm__cf_attr_at(k->node, "scan_output_directions", j, 0))
            for (p = 0; p < cnt / 2; p++) {
                pfvm_tensor *x = scans[j][p];
                scans[j][p] = scans[j][cnt - 1 - p];
                scans[j][cnt - 1 - p] = x;
            }
        if (ax < 0 && cnt)
            ax += scans[j][0]->rank + 1;
        if (k->out[n + j])
            rc = pfvm__cf_stack(k, n + j, scans[j], cnt, ax, body->outputs[n + j]->type.dtype);
    }
    pfvm__cf_free_all(state, n);
    pfvm__cf_free_all(slices, m);
    for (j = 0; j < n_out_scan; j++) {
        pfvm__cf_free_all(scans[j], (int)stbds_arrlen(scans[j]));
        stbds_arrfree(scans[j]);
    }
    stbds_arrfree(scans);
    stbds_arrfree(state);
    stbds_arrfree(slices);
    stbds_arrfree(outs);
    stbds_arrfree(ins);
    return rc;
}

/* Scan before opset 9: every input and output has a batch axis 0 and input
 * 0 is the optional sequence_lens. Each batch entry runs as an opset-9
 * scan over its slices; the results are stacked back along axis 0. */
static pfvm_code pfvm__cf_k_scan8(pfvm_kctx *k)
{
    const pfvm_tensor *lens = k->in[0];
    int64_t B, b;
    int j, n_in = k->n_in - 1;
    pfvm_tensor **slices = NULL, **results = NULL;
    pfvm_code rc = PFVM_OK;
    if (n_in < 1 || !k->in[1] || k->in[1]->rank < 1)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "needs inputs with a batch axis");
    B = k->in[1]->dims[0];
    /* the results are stacked from at most 4096 parts (below) */
    if (B > 4096)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_UNSUPPORTED, "batch of %lld larger than 4096", (long long)B);
    if (B < 0 || !pfvm__arrsetlen(slices, n_in) || !pfvm__arrsetlen(results, (size_t)(B * k->n_out))) {
        stbds_arrfree(slices);
        stbds_arrfree(results);
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_NOMEM, "out of memory");
    }
    if (B > 0) /* an empty batch leaves results NULL */
        memset(results, 0, sizeof(pfvm_tensor *) * (size_t)(B * k->n_out));
    for (j = 0; j < n_in; j++)
        slices[j] = NULL;
    for (b = 0; !rc && b < B; b++) {
        pfvm_kctx sub = *k;
        pfvm_tensor *outs[64];
        if (lens && pfvm_tensor_numel(lens) > b) {
            /* scan inputs come last, as [batch, sequence, ...] */
            const pfvm_tensor *last = k->in[k->n_in - 1];
            int64_t want = pfvm_tensor_get_i64(lens, b), full = last && last->rank >= 2 ? last->dims[1] : want;
            if (want != full) {
                rc = pfvm__op_fail(k->st, k->node, PFVM_ERR_UNSUPPORTED, "sequence_lens shorter than the sequence");
                break;
            }
        }
        if (k->n_out > 64) {
            rc = pfvm__op_fail(k->st, k->node, PFVM_ERR_UNSUPPORTED, "more than 64 outputs");
            break;
        }
        for (j = 0; j < n_in && !rc; j++) {
            pfvm_tensor_free(slices[j]);
            if (!k->in[1 + j] || k->in[1 + j]->rank < 1 || k->in[1 + j]->dims[0] != B || !(slices[j] = pfvm__cf_slice(k, k->in[1 + j], 0, b, 0)))
                rc = k->st && k->st->code ? k->st->code
                                          : pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "input %d has no batch entry %lld", 1 + j, (long long)b);
        }
        if (rc)
            break;
        for (j = 0; j < k->n_out; j++) {
            outs[j] = (pfvm_tensor *)pfvm__calloc(1, sizeof(pfvm_tensor));
            if (!outs[j]) {
                rc = pfvm__op_fail(k->st, k->node, PFVM_ERR_NOMEM, "out of memory");
                break;
            }
            outs[j]->rank = -1;
            outs[j]->dtype = k->out[j] ? k->out[j]->dtype : PFVM_FLOAT;
            results[b * k->n_out + j] = outs[j];
        }
        if (rc)
            break;
        sub.in = (const pfvm_tensor *const *)slices;
        sub.n_in = n_in;
        sub.out = outs;
        rc = pfvm__cf_k_scan(&sub);
    }
    for (j = 0; !rc && j < k->n_out; j++) {
        pfvm_tensor *parts[4096];
        for (b = 0; b < B; b++)
            parts[b] = results[b * k->n_out + j];
        if (k->out[j])
            rc = pfvm__cf_stack(k, j, parts, B, 0, k->out[j]->dtype);
    }
    pfvm__cf_free_all(slices, n_in);
    pfvm__cf_free_all(results, (int)(B * k->n_out));
    stbds_arrfree(slices);
    stbds_arrfree(results);
    return rc;
}

/* ---- sequences ------------------------------------------------------------------------------------ */

static const pfvm_type *pfvm__cf_elem_of(const pfvm_ival *v)
{
    return v && v->type.kind == PFVM_KIND_SEQUENCE ? v->type.elem : NULL;
}

static pfvm_code pfvm__cf_infer_seq_same(pfvm_ictx *c)
{
    const pfvm_type *e = pfvm__cf_elem_of(c->in[0]);
    if (c->in[0]->type.kind != PFVM_KIND_UNKNOWN && c->in[0]->type.kind != PFVM_KIND_SEQUENCE)
        return pfvm__fail(c->st, PFVM_ERR_INVALID, "input 0 must be a sequence");
    return pfvm__cf_set_seq(c, 0, e);
}

/* SequenceInsert: the tensor's element type is the sequence's. */
static pfvm_code pfvm__cf_infer_seq_insert(pfvm_ictx *c)
{
    const pfvm_type *e = pfvm__cf_elem_of(c->in[0]);
    if (e && e->dtype != PFVM_UNDEFINED && c->in[1]->type.kind == PFVM_KIND_TENSOR &&
        c->in[1]->type.dtype != PFVM_UNDEFINED && c->in[1]->type.dtype != e->dtype)
        return pfvm__fail(c->st, PFVM_ERR_INVALID, "the tensor is %s, the sequence holds %s",
                          pfvm_dtype_name(c->in[1]->type.dtype), pfvm_dtype_name(e->dtype));
    if (c->n_in > 2 && c->in[2] && c->in[2]->type.kind == PFVM_KIND_TENSOR) { /* a scalar (the tests also use [1]) */
        const pfvm_shape *p = &c->in[2]->type.shape;
        int64_t len;
        if (p->rank > 1 || (p->rank == 1 && pfvm_sym_is_const(p->dims[0], &len) && len != 1))
            return pfvm__fail(c->st, PFVM_ERR_SHAPE, "position must be a scalar (or one element), not rank %d", p->rank);
    }
    return pfvm__cf_infer_seq_same(c);
}

static pfvm_code pfvm__cf_infer_seq_of_input(pfvm_ictx *c)
{
    pfvm_type t;
    if (!c->n_in)
        return pfvm__cf_set_seq(c, 0, NULL);
    t = c->in[0]->type;
    pfvm_shape_unknown(&t.shape); /* elements may differ in shape */
    return pfvm__cf_set_seq(c, 0, &t);
}

/* SplitToSequence: axis within x's rank; split a positive scalar or a
 * 1-D list of sizes that sum to the axis' length. */
static pfvm_code pfvm__cf_infer_split_to_seq(pfvm_ictx *c)
{
    const pfvm_shape *x = &c->in[0]->type.shape;
    const pfvm_ival *sp = c->n_in > 1 ? c->in[1] : NULL;
    int64_t v[PFVM_MAX_RANK * 16], sum = 0, len;
    int a = 0, n, i;
    if (x->rank >= 0 && pfvm_infer_axis(c, pfvm_node_attr_int(c->node, "axis", 0), x->rank, &a))
        return c->st ? c->st->code : PFVM_ERR_INVALID;
    if (sp && sp->type.kind == PFVM_KIND_TENSOR && sp->type.shape.rank > 1)
        return pfvm__fail(c->st, PFVM_ERR_SHAPE, "split must be a scalar or 1-D, not rank %d", sp->type.shape.rank);
    n = sp && sp->type.shape.rank >= 0 ? pfvm_ival_ints(sp, v, (int)(sizeof v / sizeof v[0])) : -1;
    for (i = 0; i < n; i++) {
        if (v[i] < 0 || (sp->type.shape.rank == 0 && v[i] == 0))
            return pfvm__fail(c->st, PFVM_ERR_INVALID, "split must be positive, not %lld", (long long)v[i]);
        sum += v[i];
    }
    if (n >= 0 && sp->type.shape.rank == 1 && x->rank >= 0 && pfvm_sym_is_const(x->dims[a], &len) && sum != len)
        return pfvm__fail(c->st, PFVM_ERR_SHAPE, "split sums to %lld, axis %d has length %lld", (long long)sum, a,
                          (long long)len);
    return pfvm__cf_infer_seq_of_input(c);
}

/* SequenceConstruct: every input has one element type. */
static pfvm_code pfvm__cf_infer_seq_construct(pfvm_ictx *c)
{
    int j;
    for (j = 1; j < c->n_in; j++)
        if (c->in[j] && c->in[j]->type.dtype != PFVM_UNDEFINED && c->in[0]->type.dtype != PFVM_UNDEFINED &&
            c->in[j]->type.dtype != c->in[0]->type.dtype)
            return pfvm__fail(c->st, PFVM_ERR_INVALID, "input %d is %s, input 0 is %s", j,
                              pfvm_dtype_name(c->in[j]->type.dtype), pfvm_dtype_name(c->in[0]->type.dtype));
    return pfvm__cf_infer_seq_of_input(c);
}

static pfvm_code pfvm__cf_infer_seq_empty(pfvm_ictx *c)
{
    pfvm_type t;
    int64_t dt = pfvm_node_attr_int(c->node, "dtype", PFVM_FLOAT);
    if (dt <= 0 || dt >= PFVM_DTYPE_COUNT)
        return pfvm__fail(c->st, PFVM_ERR_INVALID, "attribute 'dtype' is not a valid element type (%lld)", (long long)dt);
    memset(&t, 0, sizeof t);
    t.kind = PFVM_KIND_TENSOR;
    t.dtype = (pfvm_dtype)dt;
    pfvm_shape_unknown(&t.shape);
    return pfvm__cf_set_seq(c, 0, &t);
}

static pfvm_code pfvm__cf_k_seq_empty(pfvm_kctx *k)
{
    pfvm__cf_seq_out(k, 0, (pfvm_dtype)pfvm_node_attr_int(k->node, "dtype", PFVM_FLOAT));
    return PFVM_OK;
}

static pfvm_code pfvm__cf_k_seq_construct(pfvm_kctx *k)
{
    pfvm_tensor *s;
    int j;
    for (j = 0; j < k->n_in; j++)
        if (!k->in[j] || k->in[j]->kind != PFVM_KIND_TENSOR)
            return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "input %d is missing or not a tensor", j);
    s = pfvm__cf_seq_out(k, 0, k->in[0]->dtype);
    for (j = 0; j < k->n_in; j++)
        if (pfvm__cf_seq_push(k, s, k->in[j]))
            return k->st ? k->st->code : PFVM_ERR_NOMEM;
    return PFVM_OK;
}

/* Position input (optional) normalised into [0, len] (insert) or [0, len). */
static int pfvm__cf_position(const pfvm_tensor *p, int64_t len, int64_t def, int inclusive, int64_t *out)
{
    int64_t v = p && pfvm_tensor_numel(p) ? pfvm_tensor_get_i64(p, 0) : def;
    if (v < 0)
        v += len;
    if (v < 0 || v > len || (!inclusive && v == len))
        return 0;
    *out = v;
    return 1;
}

static pfvm_code pfvm__cf_k_seq_insert(pfvm_kctx *k)
{
    const pfvm_tensor *in = k->in[0];
    int64_t len = (int64_t)stbds_arrlen(in->elems), at, i;
    pfvm_tensor *s;
    if (!pfvm__cf_position(k->n_in > 2 ? k->in[2] : NULL, len, len, 1, &at))
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_RANGE, "position is out of range");
    s = pfvm__cf_seq_out(k, 0, in->elem_dtype);
    for (i = 0; i <= len; i++) {
        const pfvm_tensor *x = i == at ? k->in[1] : in->elems[i < at ? i : i - 1];
        if (pfvm__cf_seq_push(k, s, x))
            return k->st ? k->st->code : PFVM_ERR_NOMEM;
    }
    return PFVM_OK;
}

static pfvm_code pfvm__cf_k_seq_erase(pfvm_kctx *k)
{
    const pfvm_tensor *in = k->in[0];
    int64_t len = (int64_t)stbds_arrlen(in->elems), at, i;
    pfvm_tensor *s;
    if (!pfvm__cf_position(k->n_in > 1 ? k->in[1] : NULL, len, len - 1, 0, &at))
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_RANGE, "position is out of range");
    s = pfvm__cf_seq_out(k, 0, in->elem_dtype);
    for (i = 0; i < len; i++)
        if (i != at && pfvm__cf_seq_push(k, s, in->elems[i]))
            return k->st ? k->st->code : PFVM_ERR_NOMEM;
    return PFVM_OK;
}

static pfvm_code pfvm__cf_infer_seq_at(pfvm_ictx *c)
{
    const pfvm_type *e = pfvm__cf_elem_of(c->in[0]);
    if (c->in[0]->type.kind != PFVM_KIND_UNKNOWN && c->in[0]->type.kind != PFVM_KIND_SEQUENCE)
        return pfvm__fail(c->st, PFVM_ERR_INVALID, "input 0 must be a sequence");
    pfvm__cf_set_dynamic(c, 0, e);
    return PFVM_OK;
}

static pfvm_code pfvm__cf_k_seq_at(pfvm_kctx *k)
{
    const pfvm_tensor *in = k->in[0];
    int64_t len = (int64_t)stbds_arrlen(in->elems), at;
    pfvm_tensor *c;
    if (!pfvm__cf_position(k->in[1], len, 0, 0, &at))
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_RANGE, "position is out of range for %lld elements", (long long)len);
    c = pfvm_tensor_clone(in->elems[at], k->st);
    if (!c)
        return k->st ? k->st->code : PFVM_ERR_NOMEM;
    return pfvm__cf_move_out(k, k->out[0], c);
}

static pfvm_code pfvm__cf_infer_seq_len(pfvm_ictx *c)
{
    pfvm_shape s;
    if (c->in[0]->type.kind != PFVM_KIND_UNKNOWN && c->in[0]->type.kind != PFVM_KIND_SEQUENCE)
        return pfvm__fail(c->st, PFVM_ERR_INVALID, "input 0 must be a sequence");
    s.rank = 0;
    pfvm_ival_set_tensor(c->out[0], PFVM_INT64, &s);
    return PFVM_OK;
}

static pfvm_code pfvm__cf_k_seq_len(pfvm_kctx *k)
{
    if (!k->out[0]->data && pfvm_kctx_output(k, 0, PFVM_INT64, 0, NULL))
        return k->st ? k->st->code : PFVM_ERR_NOMEM;
    *(int64_t *)k->out[0]->data = (int64_t)stbds_arrlen(k->in[0]->elems);
    return PFVM_OK;
}

static pfvm_code pfvm__cf_k_split_to_seq(pfvm_kctx *k)
{
    const pfvm_tensor *x = k->in[0], *sp = k->n_in > 1 ? k->in[1] : NULL;
    int a = pfvm__axis(pfvm_node_attr_int(k->node, "axis", 0), x->rank);
    int keep = (int)pfvm_node_attr_int(k->node, "keepdims", 1);
    int64_t len, at = 0, i, n;
    pfvm_tensor *s;
    if (a < 0)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "axis is out of range");
    len = x->dims[a];
    s = pfvm__cf_seq_out(k, 0, x->dtype);
    n = !sp ? len : sp->rank == 0 ? (pfvm_tensor_get_i64(sp, 0) > 0 ? (len + pfvm_tensor_get_i64(sp, 0) - 1) / pfvm_tensor_get_i64(sp, 0) : -1)
                                  : pfvm_tensor_numel(sp);
    if (n < 0)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "split must be positive");
    for (i = 0; i < n; i++) {
        int64_t size = !sp ? 1 : sp->rank == 0 ? pfvm_tensor_get_i64(sp, 0) : pfvm_tensor_get_i64(sp, i), p;
        int64_t dims[PFVM_MAX_RANK], outer = 1, inner = 1, o;
        pfvm_tensor *part;
        int d, r = 0;
        size_t es = pfvm_dtype_size(x->dtype);
        if (size > len - at)
            size = len - at;
        if (size < 0)
            return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "split sizes exceed the axis");
        for (d = 0; d < x->rank; d++) {
            if (d == a && !sp && !keep)
                continue;
            dims[r++] = d == a ? size : x->dims[d];
        }
        for (d = 0; d < a; d++)
            outer *= x->dims[d];
        for (d = a + 1; d < x->rank; d++)
            inner *= x->dims[d];
        part = pfvm_tensor_new(x->dtype, r, dims, k->st);
        if (!part)
            return k->st ? k->st->code : PFVM_ERR_NOMEM;
        for (o = 0; o < outer; o++)
            for (p = 0; p < size; p++) {
                int64_t to = (o * size + p) * inner, from = (o * len + at + p) * inner, e;
                if (x->dtype == PFVM_STRING) {
                    /* the part owns its strings: copies, not the input's pointers (freed twice) */
                    for (e = 0; e < inner; e++)
                        if (((char *const *)x->data)[from + e] &&
                            !(((char **)part->data)[to + e] = pfvm__strdup(((char *const *)x->data)[from + e]))) {
                            pfvm_tensor_free(part);
                            return pfvm__op_fail(k->st, k->node, PFVM_ERR_NOMEM, "out of memory");
                        }
                } else {
                    memcpy((char *)part->data + (size_t)to * es, (const char *)x->data + (size_t)from * es,
                           (size_t)inner * es);
                }
            }
        if (!pfvm__arrpush(s->elems, part)) {
            pfvm_tensor_free(part);
            return pfvm__op_fail(k->st, k->node, PFVM_ERR_NOMEM, "out of memory");
        }
        at += size;
    }
    return PFVM_OK;
}

static pfvm_code pfvm__cf_infer_concat_seq(pfvm_ictx *c)
{
    const pfvm_type *e = pfvm__cf_elem_of(c->in[0]);
    int new_axis = pfvm_node_attr_int(c->node, "new_axis", 0) != 0, a;
    if (e && e->kind == PFVM_KIND_TENSOR && e->shape.rank >= 0 &&
        pfvm_infer_axis(c, pfvm_node_attr_int(c->node, "axis", 0), e->shape.rank + new_axis, &a))
        return c->st ? c->st->code : PFVM_ERR_INVALID;
    pfvm__cf_set_dynamic(c, 0, e);
    if (e)
        c->out[0]->type.dtype = e->dtype;
    return PFVM_OK;
}

static pfvm_code pfvm__cf_k_concat_seq(pfvm_kctx *k)
{
    const pfvm_tensor *in = k->in[0];
    int64_t n = (int64_t)stbds_arrlen(in->elems), i, total = 0, dims[PFVM_MAX_RANK], outer = 1, inner = 1, o, at = 0;
    int new_axis = (int)pfvm_node_attr_int(k->node, "new_axis", 0), a, d, r;
    size_t es;
    if (n == 0)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "the sequence is empty");
    if (new_axis) {
        a = pfvm__axis(pfvm_node_attr_int(k->node, "axis", 0), in->elems[0]->rank + 1);
        if (a < 0)
            return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "axis is out of range");
        return pfvm__cf_stack(k, 0, in->elems, n, a, in->elems[0]->dtype);
    }
    r = in->elems[0]->rank;
    a = pfvm__axis(pfvm_node_attr_int(k->node, "axis", 0), r);
    if (a < 0)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "axis is out of range");
    for (i = 0; i < n; i++) {
        if (in->elems[i]->rank != r || in->elems[i]->dtype != in->elems[0]->dtype)
            return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "elements differ in rank or type");
        total += in->elems[i]->dims[a];
    }
    memcpy(dims, in->elems[0]->dims, sizeof(int64_t) * (size_t)r);
    dims[a] = total;
    if (pfvm_kctx_output(k, 0, in->elems[0]->dtype, r, dims))
        return k->st ? k->st->code : PFVM_ERR_NOMEM;
    for (d = 0; d < a; d++)
        outer *= dims[d];
    for (d = a + 1; d < r; d++)
        inner *= dims[d];
    es = pfvm_dtype_size(in->elems[0]->dtype);
    for (i = 0; i < n; i++) {
        const pfvm_tensor *e = in->elems[i];
        for (d = 0; d < r; d++)
            if (d != a && e->dims[d] != dims[d])
                return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "elements differ in shape");
        for (o = 0; o < outer; o++)
            memcpy((char *)k->out[0]->data + (size_t)((o * total + at) * inner) * es,
                   (const char *)e->data + (size_t)(o * e->dims[a] * inner) * es, (size_t)(e->dims[a] * inner) * es);
        at += e->dims[a];
    }
    return in->elems[0]->dtype == PFVM_STRING ? pfvm__cf_own_strings(k, k->out[0]) : PFVM_OK;
}

/* SequenceMap: the body runs once per element; sequence inputs give their
 * i-th element, tensor inputs are passed whole. */
static pfvm_code pfvm__cf_infer_seq_map(pfvm_ictx *c)
{
    const pfvm_attr *g = pfvm_node_attr(c->node, "body");
    int j;
    if (g && pfvm_ictx_infer_graph(c, g->g, NULL, 0))
        return c->st ? c->st->code : PFVM_ERR_SHAPE;
    for (j = 0; j < c->n_out; j++) {
        pfvm_type t;
        memset(&t, 0, sizeof t);
        t.kind = PFVM_KIND_TENSOR;
        pfvm_shape_unknown(&t.shape);
        if (g && g->g && j < (int)stbds_arrlen(g->g->outputs))
            t.dtype = g->g->outputs[j]->type.dtype;
        if (pfvm__cf_set_seq(c, j, &t))
            return c->st ? c->st->code : PFVM_ERR_NOMEM;
    }
    return PFVM_OK;
}

static pfvm_code pfvm__cf_k_seq_map(pfvm_kctx *k)
{
    const pfvm_attr *a = pfvm_node_attr(k->node, "body");
    int64_t n = (int64_t)stbds_arrlen(k->in[0]->elems), i;
    int j;
    const pfvm_tensor *ins[64];
    pfvm_tensor *outs[64];
    if (!a || !a->g || k->n_in > 64 || k->n_out > 64)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "body missing or too many inputs");
    for (j = 0; j < k->n_out; j++)
        pfvm__cf_seq_out(k, j, a->g->outputs[j]->type.dtype);
    for (i = 0; i < n; i++) {
        for (j = 0; j < k->n_in; j++) {
            const pfvm_tensor *x = k->in[j];
            if (x->kind == PFVM_KIND_SEQUENCE) {
                if (i >= (int64_t)stbds_arrlen(x->elems))
                    return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "input sequences differ in length");
                ins[j] = x->elems[i];
            } else {
                ins[j] = x;
            }
        }
        if (pfvm_kctx_subgraph(k, a->g, ins, k->n_in, outs, k->n_out, k->st))
            return k->st ? k->st->code : PFVM_ERR_RUNTIME;
        for (j = 0; j < k->n_out; j++) {
            k->out[j]->elem_dtype = k->out[j]->dtype = outs[j]->dtype;
            if (!pfvm__arrpush(k->out[j]->elems, outs[j])) {
                for (; j < k->n_out; j++)
                    pfvm_tensor_free(outs[j]);
                return pfvm__op_fail(k->st, k->node, PFVM_ERR_NOMEM, "out of memory");
            }
        }
    }
    return PFVM_OK;
}

/* ---- optionals ------------------------------------------------------------------------------------- */

static pfvm_code pfvm__cf_infer_optional(pfvm_ictx *c)
{
    const pfvm_attr *tp = pfvm_node_attr(c->node, "type");
    pfvm_ival *o = c->out[0];
    if ((!c->n_in || !c->in[0]) && !(tp && tp->tp))
        return pfvm__fail(c->st, PFVM_ERR_INVALID, "without an input, attribute 'type' is required");
    memset(&o->type, 0, sizeof o->type);
    o->type.kind = PFVM_KIND_OPTIONAL;
    pfvm_shape_unknown(&o->type.shape);
    o->type.elem = pfvm__cf_type(c, c->n_in && c->in[0] ? &c->in[0]->type : tp ? tp->tp : NULL);
    return o->type.elem ? PFVM_OK : pfvm__fail(c->st, PFVM_ERR_NOMEM, "out of memory");
}

static pfvm_code pfvm__cf_k_optional(pfvm_kctx *k)
{
    pfvm_tensor *t = k->out[0];
    pfvm_tensor_release(t);
    memset(t, 0, sizeof *t);
    t->kind = PFVM_KIND_OPTIONAL;
    t->rank = -1;
    if (k->n_in && k->in[0]) {
        t->has_value = 1;
        return pfvm__cf_seq_push(k, t, k->in[0]);
    }
    return PFVM_OK;
}

static pfvm_code pfvm__cf_infer_has(pfvm_ictx *c)
{
    pfvm_shape s;
    s.rank = 0;
    pfvm_ival_set_tensor(c->out[0], PFVM_BOOL, &s);
    return PFVM_OK;
}

static pfvm_code pfvm__cf_k_has(pfvm_kctx *k)
{
    const pfvm_tensor *x = k->n_in ? k->in[0] : NULL;
    int has = x && (x->kind != PFVM_KIND_OPTIONAL || x->has_value);
    if (!k->out[0]->data && pfvm_kctx_output(k, 0, PFVM_BOOL, 0, NULL))
        return k->st ? k->st->code : PFVM_ERR_NOMEM;
    *(uint8_t *)k->out[0]->data = (uint8_t)has;
    return PFVM_OK;
}

static pfvm_code pfvm__cf_infer_get(pfvm_ictx *c)
{
    const pfvm_type *t = &c->in[0]->type;
    pfvm__cf_set_dynamic(c, 0, t->kind == PFVM_KIND_OPTIONAL ? t->elem : t);
    return PFVM_OK;
}

static pfvm_code pfvm__cf_k_get(pfvm_kctx *k)
{
    const pfvm_tensor *x = k->in[0], *e = x;
    pfvm_tensor *c;
    if (x->kind == PFVM_KIND_OPTIONAL) {
        if (!x->has_value || !stbds_arrlen(x->elems))
            return pfvm__op_fail(k->st, k->node, PFVM_ERR_RUNTIME, "the optional is empty");
        e = x->elems[0];
    }
    c = pfvm_tensor_clone(e, k->st);
    if (!c)
        return k->st ? k->st->code : PFVM_ERR_NOMEM;
    return pfvm__cf_move_out(k, k->out[0], c);
}

/* ---- gradients ---------------------------------------------------------------------------- */

#define PFVM__CF_MAX_CAPS 256

/* If: the gradient flows to the outer values the branches read. The
 * backward node is an If on the same condition whose branches recompute
 * their forward branch and return the gradients of those values (zeros
 * where a branch does not read one). */
static pfvm_code pfvm__cf_g_if(pfvm_grad_ctx *g, const pfvm_node *n)
{
    const pfvm_attr *tb = pfvm_node_attr(n, "then_branch"), *eb = pfvm_node_attr(n, "else_branch");
    pfvm_value *caps[PFVM__CF_MAX_CAPS], **seeds = NULL;
    pfvm_graph *tg, *eg;
    pfvm_node *nd;
    pfvm_attr *a;
    int n_caps, i;
    if (!tb || !tb->g || !eb || !eb->g)
        return pfvm_grad_fail(g, "branches missing");
    if ((n_caps = pfvm_grad_captures(g, caps, PFVM__CF_MAX_CAPS)) < 0)
        return pfvm_grad_fail(g, "more than %d captured values", PFVM__CF_MAX_CAPS);
    if (!n_caps)
        return PFVM_OK;
    for (i = 0; i < n->n_outputs; i++)
        if (!pfvm__arrpush(seeds, pfvm_grad_out(g, i))) {
            stbds_arrfree(seeds);
            return pfvm_grad_fail(g, "out of memory");
        }
    tg = pfvm_grad_subgraph(g, tb->g, seeds, caps, n_caps);
    eg = tg ? pfvm_grad_subgraph(g, eb->g, seeds, caps, n_caps) : NULL;
    stbds_arrfree(seeds);
    if (!eg)
        return g->st->code;
    nd = pfvm_grad_node(g, "If", n->inputs, 1, n_caps);
    if (!nd || !(a = pfvm_node_add_attr(nd, "then_branch", PFVM_ATTR_GRAPH, g->st)))
        return g->st->code;
    a->g = tg;
    tg->owner = nd;
    if (!(a = pfvm_node_add_attr(nd, "else_branch", PFVM_ATTR_GRAPH, g->st)))
        return g->st->code;
    a->g = eg;
    eg->owner = nd;
    for (i = 0; i < n_caps; i++)
        if (pfvm_grad_add(g, caps[i], nd->outputs[i]))
            return g->st->code;
    return PFVM_OK;
}

/* Loop: reverse mode over the iterations. The forward node also stacks
 * each iteration's carried inputs and iteration number as extra scan
 * outputs (a tape; the node gets those outputs). The backward node is a
 * Loop of T (the iterations run) steps going from the last iteration back:
 * step i recomputes forward iteration t = T-1-i from the stacked state,
 * seeds its carried outputs with the carried gradients and its scan
 * outputs with row t of theirs, and carries on the gradients of the
 * carried inputs, accumulating those of the captured outer values. */
static pfvm_code pfvm__cf_g_loop(pfvm_grad_ctx *g, const pfvm_node *n)
{
    const pfvm_attr *ba = pfvm_node_attr(n, "body");
    pfvm_graph *body = ba ? ba->g : NULL, *bw;
    pfvm_value *caps[PFVM__CF_MAX_CAPS], **tape = NULL, **from = NULL, **to = NULL, **seeds = NULL, **wrt = NULL, **grads;
    pfvm_value **bin = NULL, **bout = NULL, *T, *t, *in[3];
    pfvm_node *nd;
    pfvm_attr *a;
    int n_caps, N = n->n_inputs - 2, K, i, j, n_float = 0;
    int64_t zero = 0;
    pfvm_code rc = PFVM_OK;
    char name[256];
    if (!body || N < 0 || (int)stbds_arrlen(body->inputs) != N + 2)
        return pfvm_grad_fail(g, "a body with %d inputs for %d carried values", body ? (int)stbds_arrlen(body->inputs) : 0, N);
    K = n->n_outputs - N;
    if (K < 0 || (int)stbds_arrlen(body->outputs) != 1 + N + K)
        return pfvm_grad_fail(g, "body outputs do not match the node's");
    if ((n_caps = pfvm_grad_captures(g, caps, PFVM__CF_MAX_CAPS)) < 0)
        return pfvm_grad_fail(g, "more than %d captured values", PFVM__CF_MAX_CAPS);
    for (j = 0; j < N; j++) {
        const pfvm_type *ty = pfvm_grad_type(g, n->inputs[2 + j]);
        if (!n->inputs[2 + j] || ty->kind != PFVM_KIND_TENSOR)
            return pfvm_grad_fail(g, "carried value %d is not a tensor", j);
    }
    /* the tape: forward body outputs v_in_j (j < N) then iteration_num */
    for (j = 0; j <= N; j++) {
        pfvm_value *src = body->inputs[j == N ? 0 : 2 + j], *v;
        pfvm__snprintf(name, sizeof name, "%s__tape", src->name);
        if (!(v = pfvm_grad_identity_in(g, body, src, name)) || pfvm_graph_add_output(body, v, g->st))
            return g->st->code ? g->st->code : PFVM_ERR_NOMEM;
        if (!pfvm__arrpush(tape, pfvm_grad_forward_output(g, N + K + j)))
            goto nomem;
        if (!tape[j])
            goto fail;
    }
    {
        /* stacked types: [trips, ...] */
        const pfvm_sym *trips = NULL;
        if (K > 0 && n->outputs[N] && n->outputs[N]->type.shape.rank > 0)
            trips = n->outputs[N]->type.shape.dims[0];
        if (!trips) {
            pfvm__snprintf(name, sizeof name, "%s_trips", n->outputs[0] ? n->outputs[0]->name : "loop");
            trips = pfvm_sym_fresh(g->m->syms, name);
        }
        for (j = 0; j <= N; j++) {
            const pfvm_type *src = j == N ? NULL : &n->inputs[2 + j]->type;
            pfvm_type *ty = &tape[j]->type;
            int d;
            memset(ty, 0, sizeof *ty);
            ty->kind = PFVM_KIND_TENSOR;
            ty->dtype = src ? src->dtype : PFVM_INT64;
            ty->shape.rank = src ? src->shape.rank + 1 : 1;
            ty->shape.dims[0] = trips;
            for (d = 0; src && d < src->shape.rank && d + 1 < PFVM_MAX_RANK; d++)
                ty->shape.dims[d + 1] = src->shape.dims[d];
        }
    }
    /* T, a scalar */
    T = pfvm_grad_op2(g, "Reshape", pfvm_grad_op1(g, "Shape", tape[N]), pfvm_grad_ints(g, NULL, 0));
    /* the backward body: (i, cond, dv_j for float carried j, acc_c) */
    pfvm__snprintf(name, sizeof name, "%s_grad", body->name && body->name[0] ? body->name : "body");
    if (!(bw = pfvm_graph_new(g->m, g->g, name, g->st)))
        goto fail;
    for (j = 0; j < N + 2 + n_caps; j++) {
        pfvm_value *v;
        int fl = j >= 2 && j < N + 2 && pfvm_dtype_is_float(n->inputs[j]->type.dtype);
        if (j >= 2 && j < N + 2 && !fl)
            continue;
        pfvm__snprintf(name, sizeof name, "%s__bwd_in%d", body->name ? body->name : "body", j);
        if (!(v = pfvm_graph_new_value(bw, name, g->st)))
            goto fail;
        if (j < 2) {
            v->type.kind = PFVM_KIND_TENSOR;
            v->type.dtype = j ? PFVM_BOOL : PFVM_INT64;
            v->type.shape.rank = 0;
        } else {
            v->type = j < N + 2 ? n->inputs[j]->type : caps[j - N - 2]->type;
        }
        v->has_type_info = 1;
        pfvm_graph_add_input(bw, v, g->st);
        if (!pfvm__arrpush(bin, v))
            goto nomem;
        n_float += fl;
    }
    /* t = T - 1 - i */
    in[0] = T;
    in[1] = pfvm_grad_scalar(g, PFVM_INT64, 1);
    nd = pfvm_grad_node_in(g, bw, "Sub", in, 2, 1);
    in[0] = nd ? nd->outputs[0] : NULL;
    in[1] = bin[0];
    nd = pfvm_grad_node_in(g, bw, "Sub", in, 2, 1);
    t = nd ? nd->outputs[0] : NULL;
    /* the forward body's inputs: t, true, the carried values of iteration t */
    if (!pfvm__arrpush(from, body->inputs[0]))
        goto nomem;
    if (!pfvm__arrpush(to, t))
        goto nomem;
    {
        pfvm_value *tr = pfvm_grad_identity_in(g, bw, pfvm_grad_cast(g, pfvm_grad_scalar(g, PFVM_INT64, 1), PFVM_BOOL), "loop_true");
        if (!pfvm__arrpush(from, body->inputs[1]))
            goto nomem;
        if (!pfvm__arrpush(to, tr))
            goto nomem;
    }
    for (j = 0; j < N; j++) {
        in[0] = tape[j];
        in[1] = t;
        nd = pfvm_grad_node_in(g, bw, "Gather", in, 2, 1);
        if (!nd)
            goto fail;
        nd->outputs[0]->type = n->inputs[2 + j]->type;
        if (!pfvm__arrpush(from, body->inputs[2 + j]))
            goto nomem;
        if (!pfvm__arrpush(to, nd->outputs[0]))
            goto nomem;
        if (pfvm_dtype_is_float(n->inputs[2 + j]->type.dtype))
            if (!pfvm__arrpush(wrt, nd->outputs[0]))
                goto nomem;
    }
    for (j = 0; j < n_caps; j++) {
        pfvm_value *l;
        pfvm__snprintf(name, sizeof name, "%s__local", caps[j]->name);
        if (!(l = pfvm_grad_identity_in(g, bw, caps[j], name)))
            goto fail;
        if (!pfvm__arrpush(from, caps[j]))
            goto nomem;
        if (!pfvm__arrpush(to, l))
            goto nomem;
        if (!pfvm__arrpush(wrt, l))
            goto nomem;
    }
    /* seeds: the carried gradients, and row t of the scan outputs' */
    if (!pfvm__arrpush(seeds, NULL))
        goto nomem;
    for (j = 0, i = 2; j < N; j++)
        if (!pfvm__arrpush(seeds, pfvm_dtype_is_float(n->inputs[2 + j]->type.dtype) ? bin[i++] : NULL))
            goto nomem;
    for (j = 0; j < K; j++) {
        pfvm_value *gs = pfvm_grad_out(g, N + j), *row = NULL;
        if (gs) {
            in[0] = gs;
            in[1] = t;
            nd = pfvm_grad_node_in(g, bw, "Gather", in, 2, 1);
            row = nd ? nd->outputs[0] : NULL;
            if (row)
                row->type = body->outputs[1 + N + j]->type;
        }
        if (!pfvm__arrpush(seeds, row))
            goto nomem;
    }
    for (j = 0; j <= N; j++) /* the tape outputs */
        if (!pfvm__arrpush(seeds, NULL))
            goto nomem;
    grads = (pfvm_value **)pfvm_model_alloc(g->m, sizeof(pfvm_value *) * (size_t)(stbds_arrlen(wrt) + 1));
    if (!grads || g->st->code)
        goto fail;
    if (pfvm_grad_body(g, bw, body, from, to, (int)stbds_arrlen(from), seeds, wrt, (int)stbds_arrlen(wrt), grads))
        goto fail;
    /* outputs: cond, the carried inputs' gradients, the accumulators */
    if (!pfvm__arrpush(bout, pfvm_grad_identity_in(g, bw, bin[1], "loop_cond")))
        goto nomem;
    for (j = 0; j < n_float; j++)
        if (!pfvm__arrpush(bout, pfvm_grad_identity_in(g, bw, grads[j], "loop_dv")))
            goto nomem;
    for (j = 0; j < n_caps; j++) {
        in[0] = bin[2 + n_float + j];
        in[1] = grads[n_float + j];
        nd = pfvm_grad_node_in(g, bw, "Add", in, 2, 1);
        if (!pfvm__arrpush(bout, nd ? nd->outputs[0] : NULL))
            goto nomem;
    }
    for (j = 0; j < (int)stbds_arrlen(bout); j++)
        if (!bout[j] || pfvm_graph_add_output(bw, bout[j], g->st))
            goto fail;
    if (pfvm_grad_infer_graph(g, bw))
        goto fail;
    /* the backward Loop: M = T, no condition, dv from the final values' gradients */
    {
        pfvm_value **lin = NULL;
        if (!pfvm__arrpush(lin, T))
            goto nomem;
        if (!pfvm__arrpush(lin, NULL))
            goto nomem;
        for (j = 0; j < N; j++)
            if (pfvm_dtype_is_float(n->inputs[2 + j]->type.dtype))
                if (!pfvm__arrpush(lin, pfvm_grad_out_or_zeros(g, j)))
                    goto nomem;
        for (j = 0; j < n_caps; j++)
            if (!pfvm__arrpush(lin, pfvm_grad_zeros_like(g, caps[j])))
                goto nomem;
        nd = pfvm_grad_node(g, "Loop", lin, (int)stbds_arrlen(lin), n_float + n_caps);
        stbds_arrfree(lin);
    }
    if (!nd || !(a = pfvm_node_add_attr(nd, "body", PFVM_ATTR_GRAPH, g->st)))
        goto fail;
    a->g = bw;
    bw->owner = nd;
    for (j = 0, i = 0; j < N; j++)
        if (pfvm_dtype_is_float(n->inputs[2 + j]->type.dtype) && pfvm_grad_add(g, n->inputs[2 + j], nd->outputs[i++]))
            goto fail;
    for (j = 0; j < n_caps; j++)
        if (pfvm_grad_add(g, caps[j], nd->outputs[n_float + j]))
            goto fail;
    (void)zero;
    goto done;
nomem:
    rc = pfvm_grad_fail(g, "out of memory");
    goto done;
fail:
    rc = g->st->code ? g->st->code : pfvm_grad_fail(g, "building the backward loop");
done:
    stbds_arrfree(tape);
    stbds_arrfree(from);
    stbds_arrfree(to);
    stbds_arrfree(seeds);
    stbds_arrfree(wrt);
    stbds_arrfree(bin);
    stbds_arrfree(bout);
    return rc;
}

PFVM_INTERNAL const pfvm_op_def pfvm__ops_control[] = {
    {"If", "", 1, 0, 1, 1, 1, -1, pfvm__cf_infer_if, pfvm__cf_k_if, NULL, PFVM_FUSE_OPAQUE, "any", NULL, PFVM_OP_SEQUENCES, NULL, pfvm__cf_g_if, NULL, NULL, NULL, NULL, NULL, NULL},
    {"Loop", "", 1, 0, 0, -1, 1, -1, pfvm__cf_infer_loop, pfvm__cf_k_loop, NULL, PFVM_FUSE_OPAQUE, "any", NULL, PFVM_OP_SEQUENCES, NULL, pfvm__cf_g_loop, NULL, NULL, NULL, NULL, NULL, NULL},
    {"Scan", "", 8, 8, 0, -1, 1, -1, pfvm__cf_infer_scan, pfvm__cf_k_scan8, NULL, PFVM_FUSE_OPAQUE, "any", NULL, PFVM_OP_SEQUENCES, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
    {"Scan", "", 9, 0, 1, -1, 1, -1, pfvm__cf_infer_scan, pfvm__cf_k_scan, NULL, PFVM_FUSE_OPAQUE, "any", NULL, PFVM_OP_SEQUENCES, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
    {"SequenceEmpty", "", 11, 0, 0, 0, 1, 1, pfvm__cf_infer_seq_empty, pfvm__cf_k_seq_empty, NULL, PFVM_FUSE_OPAQUE, "any", NULL, PFVM_OP_SEQUENCES, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
    {"SequenceConstruct", "", 11, 0, 1, -1, 1, 1, pfvm__cf_infer_seq_construct, pfvm__cf_k_seq_construct, NULL, PFVM_FUSE_OPAQUE, "any", NULL, PFVM_OP_SEQUENCES, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
    {"SequenceInsert", "", 11, 0, 2, 3, 1, 1, pfvm__cf_infer_seq_insert, pfvm__cf_k_seq_insert, NULL, PFVM_FUSE_OPAQUE, "any", NULL, PFVM_OP_SEQUENCES, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
    {"SequenceErase", "", 11, 0, 1, 2, 1, 1, pfvm__cf_infer_seq_same, pfvm__cf_k_seq_erase, NULL, PFVM_FUSE_OPAQUE, "any", NULL, PFVM_OP_SEQUENCES, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
    {"SequenceAt", "", 11, 0, 2, 2, 1, 1, pfvm__cf_infer_seq_at, pfvm__cf_k_seq_at, NULL, PFVM_FUSE_OPAQUE, "any", NULL, PFVM_OP_SEQUENCES, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
    {"SequenceLength", "", 11, 0, 1, 1, 1, 1, pfvm__cf_infer_seq_len, pfvm__cf_k_seq_len, NULL, PFVM_FUSE_OPAQUE, "any", NULL, PFVM_OP_SEQUENCES, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
    {"SplitToSequence", "", 11, 0, 1, 2, 1, 1, pfvm__cf_infer_split_to_seq, pfvm__cf_k_split_to_seq, NULL, PFVM_FUSE_OPAQUE, "any", NULL, PFVM_OP_SEQUENCES, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
    {"ConcatFromSequence", "", 11, 0, 1, 1, 1, 1, pfvm__cf_infer_concat_seq, pfvm__cf_k_concat_seq, NULL, PFVM_FUSE_OPAQUE, "any", NULL, PFVM_OP_SEQUENCES, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
    {"SequenceMap", "", 17, 0, 1, -1, 1, -1, pfvm__cf_infer_seq_map, pfvm__cf_k_seq_map, NULL, PFVM_FUSE_OPAQUE, "any", NULL, PFVM_OP_SEQUENCES, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
    {"Optional", "", 15, 0, 0, 1, 1, 1, pfvm__cf_infer_optional, pfvm__cf_k_optional, NULL, PFVM_FUSE_OPAQUE, "any", NULL, PFVM_OP_SEQUENCES, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
    {"OptionalHasElement", "", 15, 0, 0, 1, 1, 1, pfvm__cf_infer_has, pfvm__cf_k_has, NULL, PFVM_FUSE_OPAQUE, "any", NULL, PFVM_OP_SEQUENCES, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
    {"OptionalGetElement", "", 15, 0, 1, 1, 1, 1, pfvm__cf_infer_get, pfvm__cf_k_get, NULL, PFVM_FUSE_OPAQUE, "any", NULL, PFVM_OP_SEQUENCES, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
    {NULL, NULL, 0, 0, 0, 0, 0, 0, NULL, NULL, NULL, PFVM_FUSE_OPAQUE, NULL, NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL}
};
