/* ops/training: the ai.onnx.preview.training optimizers Adagrad, Momentum
 * and Adam, and the Gradient operator (through src/passes/autodiff). Each updates n tensors at once: inputs are the learning rate R,
 * the step count T, then n parameters, n gradients and n (or 2n for Adam)
 * accumulators; outputs are the new parameters then the new accumulators,
 * each shaped like its parameter. */
#include "ops_common.h"

#include <math.h>

#define PFVM__TR_DOMAIN "ai.onnx.preview.training"

/* Number of tensors updated: inputs are 2 + groups * n. */
static int pfvm__tr_count(int n_in, int groups)
{
    return (n_in - 2) % groups ? -1 : (n_in - 2) / groups;
}

static pfvm_code pfvm__tr_infer(pfvm_ictx *c, int groups)
{
    int n = pfvm__tr_count(c->n_in, groups), j;
    if (n < 1 || c->n_out != n * (groups - 1))
        return pfvm__fail(c->st, PFVM_ERR_INVALID, "%d inputs and %d outputs do not describe %d-tensor groups", c->n_in,
                          c->n_out, groups);
    /* every input is required (the lists are variadic, not optional) */
    for (j = 0; j < c->n_in; j++)
        if (!c->in[j])
            return pfvm__fail(c->st, PFVM_ERR_INVALID, "input %d is missing", j);
    if (pfvm_infer_check_rank(c, 0, 0, "R") || pfvm_infer_check_rank(c, 1, 0, "T"))
        return c->st ? c->st->code : PFVM_ERR_SHAPE;
    for (j = 2 + n; j < c->n_in; j++) { /* gradients and states have their tensor's shape */
        const pfvm_shape *x = &c->in[2 + (j - 2) % n]->type.shape, *y = &c->in[j]->type.shape;
        char what[80];
        int d;
        if (x->rank < 0 || y->rank < 0)
            continue;
        if (x->rank != y->rank)
            return pfvm__fail(c->st, PFVM_ERR_SHAPE, "input %d has rank %d, its tensor (input %d) rank %d", j, y->rank,
                              2 + (j - 2) % n, x->rank);
        snprintf(what, sizeof what, "the shapes of input %d and its tensor (input %d)", j, 2 + (j - 2) % n);
        for (d = 0; d < x->rank; d++)
            if (pfvm_infer_check_eq(c, x->dims[d], y->dims[d], what))
                return c->st ? c->st->code : PFVM_ERR_SHAPE;
    }
    for (j = 0; j < c->n_out; j++)
        if (c->out[j])
            c->out[j]->type = c->in[2 + j % n]->type;
    return PFVM_OK;
}

static pfvm_code pfvm__tr_infer_adagrad(pfvm_ictx *c) { return pfvm__tr_infer(c, 3); }
static pfvm_code pfvm__tr_infer_momentum(pfvm_ictx *c)
{
    const char *mode = pfvm_node_attr_string(c->node, "mode", "standard");
    if (strcmp(mode, "standard") && strcmp(mode, "nesterov"))
        return pfvm__fail(c->st, PFVM_ERR_INVALID, "mode '%s' is not 'standard' or 'nesterov'", mode);
    return pfvm__tr_infer(c, 3);
}
static pfvm_code pfvm__tr_infer_adam(pfvm_ictx *c) { return pfvm__tr_infer(c, 4); }

/* The kernels read every input: each must be there, and be a tensor. */
static pfvm_code pfvm__tr_check_inputs(pfvm_kctx *k)
{
    int j;
    for (j = 0; j < k->n_in; j++)
        if (!k->in[j] || k->in[j]->kind != PFVM_KIND_TENSOR)
            return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "input %d is missing or not a tensor", j);
    return PFVM_OK;
}

static pfvm_code pfvm__tr_k_adagrad_run(pfvm_kctx *k)
{
    int n = pfvm__tr_count(k->n_in, 3), j;
    double R = pfvm_tensor_get_f64(k->in[0], 0), T = (double)pfvm_tensor_get_i64(k->in[1], 0);
    double decay = pfvm_node_attr_float(k->node, "decay_factor", 0), eps = pfvm_node_attr_float(k->node, "epsilon", 0);
    double norm = pfvm_node_attr_float(k->node, "norm_coefficient", 0), r = R / (1 + T * decay);
    for (j = 0; j < n; j++) {
        const pfvm_tensor *X = k->in[2 + j], *G = k->in[2 + n + j], *Hs = k->in[2 + 2 * n + j];
        int64_t i, m = pfvm_tensor_numel(X);
        if (pfvm_tensor_numel(G) != m || pfvm_tensor_numel(Hs) != m)
            return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "group %d: shapes differ", j);
        for (i = 0; i < m; i++) {
            double x = pfvm_tensor_get_f64(X, i), g = norm * x + pfvm_tensor_get_f64(G, i), h = pfvm_tensor_get_f64(Hs, i) + g * g;
            pfvm_red_store(k->out[j], i, x - r * g / (sqrt(h) + eps));
            pfvm_red_store(k->out[n + j], i, h);
        }
    }
    return PFVM_OK;
}

static pfvm_code pfvm__tr_k_adagrad(pfvm_kctx *k)
{
    pfvm_code rc = pfvm__tr_check_inputs(k);
    return rc ? rc : pfvm__tr_k_adagrad_run(k);
}

static pfvm_code pfvm__tr_k_momentum_run(pfvm_kctx *k)
{
    int n = pfvm__tr_count(k->n_in, 3), j;
    double R = pfvm_tensor_get_f64(k->in[0], 0), T = (double)pfvm_tensor_get_i64(k->in[1], 0);
    double alpha = pfvm_node_attr_float(k->node, "alpha", 0), beta = pfvm_node_attr_float(k->node, "beta", 0);
    double norm = pfvm_node_attr_float(k->node, "norm_coefficient", 0), badj = T > 0 ? beta : 1;
    const char *mode = pfvm_node_attr_string(k->node, "mode", "standard");
    int nesterov = !strcmp(mode, "nesterov");
    if (!nesterov && strcmp(mode, "standard"))
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "mode '%s' is not valid", mode);
    for (j = 0; j < n; j++) {
        const pfvm_tensor *X = k->in[2 + j], *G = k->in[2 + n + j], *V = k->in[2 + 2 * n + j];
        int64_t i, m = pfvm_tensor_numel(X);
        if (pfvm_tensor_numel(G) != m || pfvm_tensor_numel(V) != m)
            return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "group %d: shapes differ", j);
        for (i = 0; i < m; i++) {
            double x = pfvm_tensor_get_f64(X, i), g = norm * x + pfvm_tensor_get_f64(G, i), v = alpha * pfvm_tensor_get_f64(V, i) + badj * g;
            pfvm_red_store(k->out[j], i, nesterov ? x - R * (g + alpha * v) : x - R * v);
            pfvm_red_store(k->out[n + j], i, v);
        }
    }
    return PFVM_OK;
}

static pfvm_code pfvm__tr_k_momentum(pfvm_kctx *k)
{
    pfvm_code rc = pfvm__tr_check_inputs(k);
    return rc ? rc : pfvm__tr_k_momentum_run(k);
}

static pfvm_code pfvm__tr_k_adam_run(pfvm_kctx *k)
{
    int n = pfvm__tr_count(k->n_in, 4), j;
    double R = pfvm_tensor_get_f64(k->in[0], 0), T = (double)pfvm_tensor_get_i64(k->in[1], 0);
    double alpha = pfvm_node_attr_float(k->node, "alpha", 0.9f), beta = pfvm_node_attr_float(k->node, "beta", 0.999f);
    double eps = pfvm_node_attr_float(k->node, "epsilon", 1e-6f), norm = pfvm_node_attr_float(k->node, "norm_coefficient", 0);
    double post = pfvm_node_attr_float(k->node, "norm_coefficient_post", 0);
    double radj = T > 0 ? R * sqrt(1 - pow(beta, T)) / (1 - pow(alpha, T)) : R;
    for (j = 0; j < n; j++) {
        const pfvm_tensor *X = k->in[2 + j], *G = k->in[2 + n + j], *V = k->in[2 + 2 * n + j], *Hs = k->in[2 + 3 * n + j];
        int64_t i, m = pfvm_tensor_numel(X);
        if (pfvm_tensor_numel(G) != m || pfvm_tensor_numel(V) != m || pfvm_tensor_numel(Hs) != m)
            return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "group %d: shapes differ", j);
        for (i = 0; i < m; i++) {
            double x = pfvm_tensor_get_f64(X, i), g = norm * x + pfvm_tensor_get_f64(G, i);
            double v = alpha * pfvm_tensor_get_f64(V, i) + (1 - alpha) * g, h = beta * pfvm_tensor_get_f64(Hs, i) + (1 - beta) * g * g;
            double xn = x - radj * (v / (sqrt(h) + eps));
            pfvm_red_store(k->out[j], i, (1 - post) * xn);
            pfvm_red_store(k->out[n + j], i, v);
            pfvm_red_store(k->out[2 * n + j], i, h);
        }
    }
    return PFVM_OK;
}

static pfvm_code pfvm__tr_k_adam(pfvm_kctx *k)
{
    pfvm_code rc = pfvm__tr_check_inputs(k);
    return rc ? rc : pfvm__tr_k_adam_run(k);
}

/* ---- Gradient -------------------------------------------------------------------------
 *
 * Gradient(xs, zs, y) computes dy/dx for each x of xs, where y is computed
 * from xs and zs by other nodes of the same graph (the node's inputs carry
 * the values of xs then zs). At run time the kernel copies the nodes
 * between them into a model of its own, seeds y with ones (so a non-scalar
 * y gives the gradient of its sum), and has the executor build the backward
 * graph with pfvm_autodiff and run it (pfvm_kctx_gradient). */

static int pfvm__tr_in_list(const pfvm_attr *a, const char *name)
{
    int i;
    for (i = 0; a && i < a->n; i++)
        if (a->strings[i] && !strcmp(a->strings[i], name))
            return 1;
    return 0;
}

static pfvm_code pfvm__tr_infer_gradient(pfvm_ictx *c)
{
    const pfvm_attr *xs = pfvm_node_attr(c->node, "xs");
    int j;
    if (!xs || xs->type != PFVM_ATTR_STRINGS || xs->n != c->n_out || c->n_in < xs->n)
        return pfvm__fail(c->st, PFVM_ERR_INVALID, "needs one output per name in xs, and xs's values as the first inputs");
    for (j = 0; j < c->n_in; j++)
        if (!c->in[j])
            return pfvm__fail(c->st, PFVM_ERR_INVALID, "input %d is missing", j);
    for (j = 0; j < c->n_out; j++)
        if (c->out[j])
            c->out[j]->type = c->in[j]->type;
    return PFVM_OK;
}

/* Marks the nodes of g that y needs, stopping at xs, zs and initializers. */
static pfvm_code pfvm__tr_mark(pfvm_kctx *k, const pfvm_value *v, const pfvm_attr *xs, const pfvm_attr *zs,
                               unsigned char *mark)
{
    const pfvm_node *p;
    int j;
    if (!v || pfvm__tr_in_list(xs, v->name) || pfvm__tr_in_list(zs, v->name) || v->init)
        return PFVM_OK;
    p = v->producer;
    if (!p || p->graph != k->node->graph)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "y depends on '%s', which is in neither xs nor zs", v->name);
    if (mark[p->id])
        return PFVM_OK;
    mark[p->id] = 1;
    for (j = 0; j < p->n_attrs; j++)
        if (p->attrs[j].type == PFVM_ATTR_GRAPH || p->attrs[j].type == PFVM_ATTR_GRAPHS)
            return pfvm__op_fail(k->st, k->node, PFVM_ERR_UNSUPPORTED, "node '%s' with a subgraph between xs and y",
                                 p->name);
    for (j = 0; j < p->n_inputs; j++)
        if (pfvm__tr_mark(k, p->inputs[j], xs, zs, mark))
            return k->st->code;
    return PFVM_OK;
}

/* The value of g named `name` for source value s (an initializer of the
 * source is viewed in place). */
static pfvm_value *pfvm__tr_copy_value(pfvm_model *m, pfvm_graph *g, const pfvm_value *s, const char *name, pfvm_status *st)
{
    pfvm_value *v = pfvm_graph_value(g, name, st);
    if (v && s->init && !v->init && !v->is_input) {
        pfvm_tensor *t = pfvm_model_tensor(m, s->init->dtype, s->init->rank, s->init->dims, s->init->data, st);
        if (!t || pfvm_graph_add_init(g, v, t, st))
            return NULL;
    }
    return v;
}

/* Copies node n of the source into g with the given input and output
 * values; calls of model-local functions (fused groups) are inlined, their
 * inner values named "<call>/<value>". Attributes are shared, read-only. */
static pfvm_code pfvm__tr_copy_node(pfvm_model *m, pfvm_graph *g, const pfvm_node *n, pfvm_value **in, pfvm_value **out,
                                    int depth, pfvm_status *st)
{
    const pfvm_function *f = NULL;
    pfvm_node *c;
    int i, j, l;
    if (!pfvm_op_find(n->domain, n->op_type, n->opset ? n->opset : 1))
        f = pfvm_model_function(n->graph->model, n->domain, n->op_type);
    if (f && f->body) {
        const pfvm_graph *b = f->body;
        if (depth > 16)
            return pfvm__fail(st, PFVM_ERR_UNSUPPORTED, "functions nest too deep");
        for (i = 0; i < (int)stbds_arrlen(b->nodes); i++) {
            const pfvm_node *bn = b->nodes[i];
            pfvm_value *bin[64], *bout[64];
            if (bn->n_inputs > 64 || bn->n_outputs > 64)
                return pfvm__fail(st, PFVM_ERR_UNSUPPORTED, "a function node with too many inputs");
            for (l = 0; l < bn->n_attrs; l++)
                if (bn->attrs[l].ref_attr_name)
                    return pfvm__fail(st, PFVM_ERR_UNSUPPORTED, "function attributes");
            for (l = 0; l < bn->n_inputs + bn->n_outputs; l++) {
                const pfvm_value *v = l < bn->n_inputs ? bn->inputs[l] : bn->outputs[l - bn->n_inputs];
                pfvm_value *to = NULL;
                char name[256];
                if (v) {
                    for (j = 0; j < (int)stbds_arrlen(b->inputs) && !to; j++)
                        if (b->inputs[j] == v)
                            to = j < n->n_inputs ? in[j] : NULL;
                    for (j = 0; j < (int)stbds_arrlen(b->outputs) && !to; j++)
                        if (b->outputs[j] == v)
                            to = j < n->n_outputs ? out[j] : NULL;
                    if (!to) {
                        pfvm__snprintf(name, sizeof name, "%s/%s", n->name && n->name[0] ? n->name : n->op_type, v->name);
                        if (!(to = pfvm__tr_copy_value(m, g, v, name, st)))
                            return st->code;
                    }
                }
                if (l < bn->n_inputs)
                    bin[l] = to;
                else
                    bout[l - bn->n_inputs] = to;
            }
            if (pfvm__tr_copy_node(m, g, bn, bin, bout, depth + 1, st))
                return st->code;
        }
        return PFVM_OK;
    }
    if (!(c = pfvm_graph_add_node(g, n->op_type, n->domain, n->name, in, n->n_inputs, out, n->n_outputs, st)))
        return st->code;
    c->attrs = n->attrs; /* read-only, alive while the source model is */
    c->n_attrs = n->n_attrs;
    return PFVM_OK;
}

static pfvm_code pfvm__tr_k_gradient(pfvm_kctx *k)
{
    const pfvm_attr *xs = pfvm_node_attr(k->node, "xs"), *zs = pfvm_node_attr(k->node, "zs");
    const char *yname = pfvm_node_attr_string(k->node, "y", "");
    const pfvm_graph *src = k->node->graph;
    const pfvm_value *y = pfvm_graph_find(src, yname);
    pfvm_model *m = NULL;
    pfvm_graph *g;
    unsigned char *mark = NULL;
    pfvm_status st;
    pfvm_value *y2, *seed;
    const char **names = NULL;
    int i, j, n_xs = xs ? xs->n : 0, n_zs = zs && zs->type == PFVM_ATTR_STRINGS ? zs->n : 0;
    pfvm_code rc = PFVM_OK;
    if (!xs || xs->type != PFVM_ATTR_STRINGS || k->n_in != n_xs + n_zs || k->n_out != n_xs)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "inputs must be the values of xs then zs, outputs one per x");
    if (!y)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "the graph has no value '%s' (attribute y)", yname);
    mark = (unsigned char *)pfvm__calloc(stbds_arrlen(src->nodes) + 1, 1);
    if (!mark)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_NOMEM, "out of memory");
    if (pfvm__tr_mark(k, y, xs, zs, mark))
        goto fail_keep;
    /* the differentiated subgraph as a model of its own */
    if (!(m = pfvm_model_new(&st)) || !(g = pfvm_graph_new(m, NULL, "gradient", &st)))
        goto fail;
    for (i = 0; i < (int)stbds_arrlen(src->model->opsets); i++)
        if (pfvm_model_set_opset(m, src->model->opsets[i].domain, src->model->opsets[i].version, &st))
            goto fail;
    for (i = 0; i < n_xs + n_zs; i++) {
        const char *name = i < n_xs ? xs->strings[i] : zs->strings[i - n_xs];
        const pfvm_tensor *t = k->in[i];
        pfvm_value *v = pfvm_graph_value(g, name, &st);
        if (!v || !t || t->kind != PFVM_KIND_TENSOR)
            goto fail;
        if (v->is_input) /* a name listed twice */
            continue;
        v->type.kind = PFVM_KIND_TENSOR;
        v->type.dtype = t->dtype;
        if (pfvm_shape_from_dims(m->syms, &v->type.shape, t->rank, t->dims, &st))
            goto fail;
        v->has_type_info = 1;
        pfvm_graph_add_input(g, v, &st);
    }
    for (i = 0; i < (int)stbds_arrlen(src->nodes); i++) {
        const pfvm_node *n = src->nodes[i];
        pfvm_value *in[64], *out[64];
        if (!mark[i])
            continue;
        if (n->n_inputs > 64 || n->n_outputs > 64) {
            rc = pfvm__op_fail(k->st, k->node, PFVM_ERR_UNSUPPORTED, "node '%s' has too many inputs", n->name);
            goto done;
        }
        for (j = 0; j < n->n_inputs; j++)
            if (n->inputs[j] && !(in[j] = pfvm__tr_copy_value(m, g, n->inputs[j], n->inputs[j]->name, &st)))
                goto fail;
            else if (!n->inputs[j])
                in[j] = NULL;
        for (j = 0; j < n->n_outputs; j++)
            if (!(out[j] = n->outputs[j] ? pfvm_graph_value(g, n->outputs[j]->name, &st) : NULL) && n->outputs[j])
                goto fail;
        if (pfvm__tr_copy_node(m, g, n, in, out, 0, &st))
            goto fail;
    }
    y2 = pfvm_graph_find_local(g, yname);
    if (!y2)
        goto fail;
    pfvm_graph_add_output(g, y2, &st);
    if (pfvm_kctx_infer_shapes(k, g, 1, &st))
        goto fail;
    {
        int64_t dims[PFVM_MAX_RANK], numel = 1;
        pfvm_tensor *t;
        for (i = 0; i < y2->type.shape.rank; i++)
            if (!pfvm_sym_is_const(y2->type.shape.dims[i], &dims[i]) || (numel *= dims[i]) < 0)
                break;
        if (y2->type.kind != PFVM_KIND_TENSOR || y2->type.shape.rank < 0 || i < y2->type.shape.rank ||
            !pfvm_dtype_is_float(y2->type.dtype)) {
            rc = pfvm__op_fail(k->st, k->node, PFVM_ERR_UNSUPPORTED, "y must be a floating-point tensor of known shape");
            goto done;
        }
        seed = pfvm_graph_value(g, "gradient_seed", &st);
        t = seed ? pfvm_model_tensor(m, y2->type.dtype, y2->type.shape.rank, dims, NULL, &st) : NULL;
        if (!t)
            goto fail;
        for (i = 0; i < numel; i++)
            pfvm_red_store(t, i, 1.0);
        if (pfvm_graph_add_init(g, seed, t, &st))
            goto fail;
    }
    for (i = 0; i < n_xs + n_zs; i++)
        if (!pfvm__arrpush(names, i < n_xs ? xs->strings[i] : zs->strings[i - n_xs])) {
            pfvm__fail(&st, PFVM_ERR_NOMEM, "out of memory");
            goto fail;
        }
    if (pfvm_kctx_gradient(k, m, y2, seed, names, n_xs, n_xs + n_zs, &st))
        goto fail;
    goto done;
fail:
    rc = pfvm__op_fail(k->st, k->node, st.code ? st.code : PFVM_ERR_NOMEM, "%s", st.msg[0] ? st.msg : "out of memory");
    goto done;
fail_keep:
    rc = k->st ? k->st->code : PFVM_ERR_INVALID;
done:
    stbds_arrfree(names);
    pfvm_model_free(m);
    pfvm__free(mark);
    return rc;
}

PFVM_INTERNAL const pfvm_op_def pfvm__ops_training[] = {
    {"Adagrad", PFVM__TR_DOMAIN, 1, 0, 5, -1, 2, -1, pfvm__tr_infer_adagrad, pfvm__tr_k_adagrad, NULL, PFVM_FUSE_OPAQUE, "float,double", NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
    {"Momentum", PFVM__TR_DOMAIN, 1, 0, 5, -1, 2, -1, pfvm__tr_infer_momentum, pfvm__tr_k_momentum, NULL, PFVM_FUSE_OPAQUE, "float,double", NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
    {"Adam", PFVM__TR_DOMAIN, 1, 0, 6, -1, 3, -1, pfvm__tr_infer_adam, pfvm__tr_k_adam, NULL, PFVM_FUSE_OPAQUE, "float,double", NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
    {"Gradient", PFVM__TR_DOMAIN, 1, 0, 1, -1, 1, -1, pfvm__tr_infer_gradient, pfvm__tr_k_gradient, NULL, PFVM_FUSE_OPAQUE, "float,double", NULL, PFVM_OP_NONDETERMINISTIC, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
    {NULL, NULL, 0, 0, 0, 0, 0, 0, NULL, NULL, NULL, PFVM_FUSE_OPAQUE, NULL, NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL}
};
