/* Deep models for the recompute tests and bench/recompute.c, built in C
 * with the IR API (no fixture files): an MLP of any depth with a symbolic
 * batch, a small CNN with a resnet-like stem, and a loaded model whose
 * batch dim becomes a symbol. Include after
 * the pfvm headers. */
#ifndef PFVM_TESTS_NETS_H
#define PFVM_TESTS_NETS_H

#include <string.h>

static uint64_t nets_rng = 0x9e3779b97f4a7c15ull;

static double nets_urand(void)
{
    nets_rng ^= nets_rng << 13;
    nets_rng ^= nets_rng >> 7;
    nets_rng ^= nets_rng << 17;
    return (double)(nets_rng >> 11) / 9007199254740992.0;
}

static pfvm_value *nets_value(pfvm_graph *g, const char *name, pfvm_dtype dt, int rank, const pfvm_sym *const *dims,
                              pfvm_status *st)
{
    pfvm_value *v = pfvm_graph_value(g, name, st);
    int i;
    if (!v)
        return NULL;
    v->type.kind = PFVM_KIND_TENSOR;
    v->type.dtype = dt;
    v->type.shape.rank = rank;
    for (i = 0; i < rank; i++)
        v->type.shape.dims[i] = dims[i];
    v->has_type_info = 1;
    return v;
}

/* A float initializer of the given dims, uniform in [-scale, scale]. */
static pfvm_value *nets_param(pfvm_graph *g, const char *name, int rank, const int64_t *dims, double scale,
                              pfvm_status *st)
{
    const pfvm_sym *sd[4];
    pfvm_tensor *t = pfvm_model_tensor(g->model, PFVM_FLOAT, rank, dims, NULL, st);
    pfvm_value *v;
    int64_t i, n;
    int k;
    if (!t)
        return NULL;
    n = pfvm_tensor_numel(t);
    for (i = 0; i < n; i++)
        ((float *)t->data)[i] = (float)((2 * nets_urand() - 1) * scale);
    for (k = 0; k < rank; k++)
        sd[k] = pfvm_sym_const(g->model->syms, dims[k]);
    v = nets_value(g, name, PFVM_FLOAT, rank, sd, st);
    if (!v || pfvm_graph_add_init(g, v, t, st))
        return NULL;
    return v;
}

/* x [N, width] -> `layers` x (Gemm width x width, Relu) -> Gemm to 10
 * classes -> SoftmaxCrossEntropyLoss with labels [N] (int64): the scalar
 * output `loss`. Opset 13; the batch is the symbol N. NULL on failure. */
static pfvm_model *nets_mlp(int layers, int width, pfvm_status *st)
{
    pfvm_model *m = pfvm_model_new(st);
    pfvm_graph *g;
    const pfvm_sym *dims[2];
    pfvm_value *h, *lab, *loss;
    int64_t wd[2], bd[1];
    char name[64];
    int l;
    if (!m || !(g = pfvm_graph_new(m, NULL, "mlp", st)) || pfvm_model_set_opset(m, "", 13, st))
        return NULL;
    m->graph = g;
    dims[0] = pfvm_sym_var(m->syms, "N", 1);
    dims[1] = pfvm_sym_const(m->syms, width);
    if (!(h = nets_value(g, "x", PFVM_FLOAT, 2, dims, st)) || pfvm_graph_add_input(g, h, st) ||
        !(lab = nets_value(g, "labels", PFVM_INT64, 1, dims, st)) || pfvm_graph_add_input(g, lab, st))
        return NULL;
    for (l = 0; l <= layers; l++) {
        pfvm_value *in[3], *out;
        int last = l == layers;
        wd[0] = last ? 10 : width;
        wd[1] = width;
        bd[0] = wd[0];
        sprintf(name, "w%d", l);
        in[0] = h;
        in[1] = nets_param(g, name, 2, wd, 1.4 / sqrt((double)width), st);
        sprintf(name, "b%d", l);
        in[2] = nets_param(g, name, 1, bd, 0.1, st);
        sprintf(name, "h%d", l);
        if (!in[1] || !in[2] || !(out = pfvm_graph_value(g, name, st)))
            return NULL;
        sprintf(name, "fc%d", l);
        {
            pfvm_node *n = pfvm_graph_add_node(g, "Gemm", "", name, in, 3, &out, 1, st);
            if (!n || pfvm_node_set_attr_int(n, "transB", 1, st))
                return NULL;
        }
        h = out;
        if (!last) {
            sprintf(name, "a%d", l);
            if (!(out = pfvm_graph_value(g, name, st)))
                return NULL;
            sprintf(name, "relu%d", l);
            if (!pfvm_graph_add_node(g, "Relu", "", name, &h, 1, &out, 1, st))
                return NULL;
            h = out;
        }
    }
    {
        pfvm_value *in[2];
        in[0] = h;
        in[1] = lab;
        if (!(loss = pfvm_graph_value(g, "loss", st)) ||
            !pfvm_graph_add_node(g, "SoftmaxCrossEntropyLoss", "", "xent", in, 2, &loss, 1, st) ||
            pfvm_graph_add_output(g, loss, st))
            return NULL;
    }
    return m;
}

/* A node with one new output `out_name` (*out; in may point at *out). */
static pfvm_node *nets_node(pfvm_graph *g, const char *op, const char *name, pfvm_value **in, int n_in,
                            const char *out_name, pfvm_value **out, pfvm_status *st)
{
    pfvm_value *ins[4];
    int i;
    for (i = 0; i < n_in && i < 4; i++)
        ins[i] = in[i];
    if (!(*out = pfvm_graph_value(g, out_name, st)))
        return NULL;
    return pfvm_graph_add_node(g, op, "", name, ins, n_in, out, 1, st);
}

/* Relu(Conv(x, <name>_w, <name>_b)), 3x3 padded by 1: weights wd [C,Cin,3,3]
 * uniform in [-scale, scale], biases in [-0.1, 0.1]. */
static pfvm_value *nets_conv_relu(pfvm_graph *g, const char *name, pfvm_value *x, const int64_t *wd, double scale,
                                  pfvm_status *st)
{
    static const int64_t pads[] = {1, 1, 1, 1};
    pfvm_value *in[3], *h;
    pfvm_node *n;
    char buf[64];
    in[0] = x;
    sprintf(buf, "%s_w", name);
    in[1] = nets_param(g, buf, 4, wd, scale, st);
    sprintf(buf, "%s_b", name);
    in[2] = nets_param(g, buf, 1, wd, 0.1, st);
    sprintf(buf, "%s_out", name);
    if (!in[1] || !in[2] || !(n = nets_node(g, "Conv", name, in, 3, buf, &h, st)) ||
        pfvm_node_set_attr_ints(n, "pads", pads, 4, st))
        return NULL;
    sprintf(buf, "%s_relu", name);
    return nets_node(g, "Relu", buf, &h, 1, buf, &h, st) ? h : NULL;
}

/* A small CNN with a resnet-like stem: x [N,3,16,16] -> Conv 3x3 to 8
 * channels (pads 1) -> Relu -> MaxPool 2x2 -> Conv 3x3 to 8 -> Relu ->
 * GlobalAveragePool -> Flatten -> Gemm to 10 classes ->
 * SoftmaxCrossEntropyLoss with labels [N] (int64): the scalar output
 * `loss`. Opset 16 (MaxPool's gradient scatters with reduction add). */
static pfvm_model *nets_stem_cnn(pfvm_status *st)
{
    static const int64_t w0[] = {8, 3, 3, 3}, w1[] = {8, 8, 3, 3}, w2[] = {10, 8}, c10[] = {10}, k2[] = {2, 2};
    pfvm_model *m = pfvm_model_new(st);
    pfvm_graph *g;
    const pfvm_sym *dims[4];
    pfvm_value *x, *lab, *in[3], *h;
    pfvm_node *n;
    if (!m || !(g = pfvm_graph_new(m, NULL, "stem_cnn", st)) || pfvm_model_set_opset(m, "", 16, st))
        return NULL;
    m->graph = g;
    dims[0] = pfvm_sym_var(m->syms, "N", 1);
    dims[1] = pfvm_sym_const(m->syms, 3);
    dims[2] = dims[3] = pfvm_sym_const(m->syms, 16);
    if (!(x = nets_value(g, "x", PFVM_FLOAT, 4, dims, st)) || pfvm_graph_add_input(g, x, st) ||
        !(lab = nets_value(g, "labels", PFVM_INT64, 1, dims, st)) || pfvm_graph_add_input(g, lab, st))
        return NULL;
    if (!(h = nets_conv_relu(g, "stem", x, w0, 0.4, st)) || !(n = nets_node(g, "MaxPool", "pool", &h, 1, "p0", &h, st)) ||
        pfvm_node_set_attr_ints(n, "kernel_shape", k2, 2, st) || pfvm_node_set_attr_ints(n, "strides", k2, 2, st) ||
        !(h = nets_conv_relu(g, "conv1", h, w1, 0.2, st)) ||
        !nets_node(g, "GlobalAveragePool", "gap", &h, 1, "gap", &h, st) ||
        !nets_node(g, "Flatten", "flat", &h, 1, "flat", &h, st))
        return NULL;
    in[0] = h;
    in[1] = nets_param(g, "w2", 2, w2, 0.5, st);
    in[2] = nets_param(g, "b2", 1, c10, 0.1, st);
    if (!in[1] || !in[2] || !(n = nets_node(g, "Gemm", "fc", in, 3, "logits", &h, st)) ||
        pfvm_node_set_attr_int(n, "transB", 1, st))
        return NULL;
    in[0] = h;
    in[1] = lab;
    if (!nets_node(g, "SoftmaxCrossEntropyLoss", "xent", in, 2, "loss", &h, st) || pfvm_graph_add_output(g, h, st))
        return NULL;
    return m;
}

/* Plans (PFVM_RECOMPUTE_PLAN_ONLY: the graph stays as it is) a training
 * graph under a policy into *r. */
static pfvm_code nets_plan(pfvm_model *m, int n_forward, const pfvm_binding *b, pfvm_recompute_policy policy,
                           double budget, int stride, pfvm_recompute_report *r, pfvm_status *st)
{
    pfvm_recompute_opts o;
    memset(&o, 0, sizeof o);
    memset(r, 0, sizeof *r);
    o.policy = policy;
    o.n_forward = n_forward;
    o.budget = budget;
    o.stride = stride;
    o.binding = b;
    o.flags = PFVM_RECOMPUTE_PLAN_ONLY;
    return pfvm_recompute(m, NULL, &o, r, st);
}

/* The executor's own plan of m for zero inputs shaped by b (bound, nothing
 * runs): arena, lower bound and entries in *info. */
static pfvm_code nets_exec_plan(pfvm_model *m, const pfvm_binding *b, pfvm_plan_info *info, pfvm_status *st)
{
    pfvm_exec *e = pfvm_exec_new(m, NULL, st);
    pfvm_tensor *ins[16] = {NULL};
    int i, n = e ? pfvm_exec_num_inputs(e) : 0;
    pfvm_code rc;
    if (!e)
        return st->code;
    if (n > 16) {
        pfvm_exec_free(e);
        return pfvm_status_set(st, PFVM_ERR_UNSUPPORTED, "more than 16 inputs");
    }
    for (i = 0; i < n; i++) {
        const pfvm_value *v = pfvm_exec_input(e, i);
        int64_t dims[PFVM_MAX_RANK];
        if (pfvm_shape_eval(&v->type.shape, b, dims))
            ins[i] = pfvm_tensor_new(v->type.dtype, v->type.shape.rank, dims, st);
    }
    rc = pfvm_exec_bind(e, (const pfvm_tensor *const *)ins, n, st);
    if (!rc)
        rc = pfvm_exec_plan_info(e, info, st);
    for (i = 0; i < n; i++)
        pfvm_tensor_free(ins[i]);
    pfvm_exec_free(e);
    return rc;
}

/* Makes dim 0 of every graph input and output the symbol `name` (a model
 * exported with a fixed batch, such as tests/models/resnet18). */
static void nets_batch_symbol(pfvm_model *m, const char *name)
{
    const pfvm_sym *n = pfvm_sym_var(m->syms, name, 1);
    int i;
    for (i = 0; i < pfvm_graph_num_inputs(m->graph); i++) {
        pfvm_value *v = pfvm_graph_input(m->graph, i);
        if (!v->init && v->type.shape.rank > 0)
            v->type.shape.dims[0] = n;
    }
    for (i = 0; i < pfvm_graph_num_outputs(m->graph); i++) {
        pfvm_value *v = pfvm_graph_output(m->graph, i);
        if (v->type.shape.rank > 0)
            v->type.shape.dims[0] = n;
    }
}

#endif /* PFVM_TESTS_NETS_H */
