/* A program's own operators (pfvm_op_register) through the optimization
 * passes, the planner and autodiff: opaque unless their definition says
 * otherwise (examples/custom_op.c's Scale, y = alpha * x). */
#include "ops/ops_common.h"
#include "passes/autodiff.h"
#include "exec/exec.h"
#include "check.h"

#include <string.h>

static int scale_runs;

static pfvm_code scale_infer(pfvm_ictx *c)
{
    return pfvm_infer_same_as_first(c);
}

static pfvm_code scale_kernel(pfvm_kctx *k)
{
    const pfvm_tensor *x = k->in[0];
    pfvm_tensor *y = k->out[0];
    float alpha = pfvm_node_attr_float(k->node, "alpha", 1.0f);
    int64_t i, n = pfvm_tensor_numel(x);
    if (!strcmp(k->node->op_type, "Scale"))
        scale_runs++; /* the opaque one's runs */
    for (i = 0; i < n; i++)
        ((float *)y->data)[i] = alpha * ((const float *)x->data)[i];
    return PFVM_OK;
}

/* element-wise, but without a fuse hook: must stay out of fused groups */
static const pfvm_op_def scale_op = {
    "Scale", "my.ops", 1, 0, 1, 1, 1, 1, scale_infer, scale_kernel, NULL, PFVM_FUSE_ELEMENTWISE,
    "float", NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
static const pfvm_op_def scale_pure_op = {
    "ScalePure", "my.ops", 1, 0, 1, 1, 1, 1, scale_infer, scale_kernel, NULL, PFVM_FUSE_ELEMENTWISE,
    "float", NULL, PFVM_OP_PURE, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL};

static int count_op(const pfvm_graph *g, const char *op_type)
{
    int i, n = 0;
    for (i = 0; i < pfvm_graph_num_nodes(g); i++)
        if (!strcmp(g->nodes[i]->op_type, op_type))
            n++;
    return n;
}

static pfvm_value *add(pfvm_graph *g, const char *op, const char *dom, pfvm_value *a, pfvm_value *b, const char *out,
                       pfvm_status *st)
{
    pfvm_value *in[2], *y = pfvm_graph_value(g, out, st);
    pfvm_node *n;
    in[0] = a;
    in[1] = b;
    if (!y || !(n = pfvm_graph_add_node(g, op, dom, out, in, b ? 2 : 1, &y, 1, st)))
        return NULL;
    if (!strcmp(dom, "my.ops") && pfvm_node_set_attr_float(n, "alpha", 2.0f, st))
        return NULL;
    return y;
}

static pfvm_model *new_model(pfvm_graph **g, pfvm_status *st)
{
    pfvm_model *m = pfvm_model_new(st);
    if (!m || !(*g = pfvm_graph_new(m, NULL, "g", st)) || pfvm_model_set_opset(m, "", 17, st) ||
        pfvm_model_set_opset(m, "my.ops", 1, st))
        return NULL;
    return m;
}

static pfvm_value *const_init(pfvm_graph *g, const char *name, const float *data, pfvm_status *st)
{
    int64_t dims[1] = {4};
    pfvm_value *v = pfvm_graph_value(g, name, st);
    pfvm_tensor *t = v ? pfvm_model_tensor(g->model, PFVM_FLOAT, 1, dims, NULL, st) : NULL;
    if (!t || pfvm_graph_add_init(g, v, t, st))
        return NULL;
    memcpy(t->data, data, sizeof(float) * 4);
    return v;
}

/* z = Relu(Scale(x) + Scale(c)) + ScalePure(c), c constant */
static void test_optimize_and_run(void)
{
    static const float c_data[4] = {1, 2, 3, 4}, x_data[4] = {-1, 0.5f, -2, 3};
    int64_t dims[1] = {4};
    pfvm_status st;
    pfvm_graph *g = NULL;
    pfvm_model *m = new_model(&g, &st);
    pfvm_value *x, *c, *sx, *sc, *sp, *s, *r, *z;
    pfvm_opt_report rep;
    pfvm_exec *e = NULL;
    pfvm_tensor *in = NULL;
    const pfvm_tensor *out;
    int i;
    CHECK(m != NULL);
    if (!m)
        return;
    const pfvm_sym *four = pfvm_sym_const(m->syms, 4);
    x = pfvm_graph_value(g, "x", &st);
    CHECK(x && pfvm_value_set_tensor_type(x, PFVM_FLOAT, 1, &four, &st) == PFVM_OK);
    CHECK(pfvm_graph_add_input(g, x, &st) == PFVM_OK);
    c = const_init(g, "c", c_data, &st);
    sx = add(g, "Scale", "my.ops", x, NULL, "sx", &st);
    sc = add(g, "Scale", "my.ops", c, NULL, "sc", &st);
    sp = add(g, "ScalePure", "my.ops", c, NULL, "sp", &st);
    s = add(g, "Add", "", sx, sc, "s", &st);
    r = add(g, "Relu", "", s, NULL, "r", &st);
    z = add(g, "Add", "", r, sp, "z", &st);
    CHECK_MSG(z != NULL, "%s", st.msg);
    if (!z)
        goto done;
    CHECK(pfvm_graph_add_output(g, z, &st) == PFVM_OK);

    scale_runs = 0;
    CHECK_MSG(pfvm_optimize(m, NULL, &rep, &st) == PFVM_OK, "%s", st.msg);
    /* the opaque Scale never ran: not folded, not merged; the pure one was folded */
    CHECK_MSG(scale_runs == 0, "Scale ran %d times while optimizing", scale_runs);
    CHECK_MSG(count_op(g, "Scale") == 2, "%d Scale nodes left", count_op(g, "Scale"));
    CHECK(count_op(g, "ScalePure") == 0);

    scale_runs = 0;
    CHECK_MSG((e = pfvm_exec_new(m, NULL, &st)) != NULL, "%s", st.msg);
    in = pfvm_tensor_view(PFVM_FLOAT, 1, dims, (void *)x_data, &st);
    CHECK(e && in && pfvm_exec_bind_one(e, in, &st) == PFVM_OK);
    CHECK_MSG(e && pfvm_exec_run(e, &st) == PFVM_OK, "%s", st.msg);
    /* both Scale nodes run with the model, none at plan time */
    CHECK_MSG(scale_runs == 2, "Scale ran %d times in one run", scale_runs);
    out = e ? pfvm_exec_output(e, 0) : NULL;
    CHECK(out != NULL);
    for (i = 0; out && i < 4; i++) {
        float sum = 2 * x_data[i] + 2 * c_data[i];
        float want = (sum > 0 ? sum : 0) + 2 * c_data[i];
        CHECK_MSG(((const float *)out->data)[i] == want, "z[%d] = %g, want %g", i, ((const float *)out->data)[i], want);
    }
done:
    pfvm_tensor_free(in);
    pfvm_exec_free(e);
    pfvm_model_free(m);
}

/* loss = ReduceSum(Scale(w)): no gradient hook, a clear error */
static void test_autodiff(void)
{
    static const float w_data[4] = {1, 2, 3, 4};
    pfvm_status st;
    pfvm_graph *g = NULL;
    pfvm_model *m = new_model(&g, &st);
    pfvm_value *w, *y, *loss;
    pfvm_autodiff_opts o;
    pfvm_code rc;
    CHECK(m != NULL);
    if (!m)
        return;
    w = const_init(g, "w", w_data, &st);
    y = add(g, "Scale", "my.ops", w, NULL, "y", &st);
    loss = add(g, "ReduceSum", "", y, NULL, "loss", &st);
    CHECK(loss && pfvm_graph_add_output(g, loss, &st) == PFVM_OK);
    memset(&o, 0, sizeof o);
    o.loss = "loss";
    rc = pfvm_autodiff(m, NULL, &o, NULL, &st);
    CHECK(rc == PFVM_ERR_UNSUPPORTED);
    CHECK_MSG(strstr(st.msg, "'y'") && strstr(st.msg, "Scale") && strstr(st.msg, "no gradient"), "%s", st.msg);
    pfvm_model_free(m);
}

int main(void)
{
    pfvm_status st;
    CHECK(pfvm_op_register(&scale_op, &st) == PFVM_OK);
    CHECK(pfvm_op_register(&scale_pure_op, &st) == PFVM_OK);
    test_optimize_and_run();
    test_autodiff();
    return CHECK_END();
}
