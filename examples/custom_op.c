/* A program's own operator: "Scale" in the domain "my.ops", y = alpha * x
 * for float tensors, registered with pfvm_op_register and run in a graph
 * built by hand. Uses the public API only.
 *
 *     cc -std=c99 -I. examples/custom_op.c -lm && ./a.out
 */
#define PFVM_IMPLEMENTATION
#include "pfvm.h"

#include <stdio.h>

/* Output 0 has input 0's type and shape. */
static pfvm_code scale_infer(pfvm_ictx *c)
{
    if (c->in[0]->type.kind == PFVM_KIND_TENSOR && c->in[0]->type.dtype != PFVM_FLOAT &&
        c->in[0]->type.dtype != PFVM_UNDEFINED)
        return pfvm_status_set(c->st, PFVM_ERR_UNSUPPORTED, "Scale takes float tensors");
    return pfvm_infer_same_as_first(c);
}

/* The planner gives the output its shape and storage. */
static pfvm_code scale_kernel(pfvm_kctx *k)
{
    const pfvm_tensor *x = k->in[0];
    pfvm_tensor *y = k->out[0];
    float alpha = pfvm_node_attr_float(k->node, "alpha", 1.0f);
    int64_t i, n = pfvm_tensor_numel(x);
    for (i = 0; i < n; i++)
        ((float *)y->data)[i] = alpha * ((const float *)x->data)[i];
    return PFVM_OK;
}

static const pfvm_attr_spec scale_attrs[] = {{"alpha", PFVM_ATTR_FLOAT, 0}, {NULL, PFVM_ATTR_UNDEFINED, 0}};
static const pfvm_op_def scale_op = {
    "Scale", "my.ops", 1, 0, 1, 1, 1, 1, scale_infer, scale_kernel, NULL, PFVM_FUSE_OPAQUE,
    "float", scale_attrs, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL};

int main(void)
{
    pfvm_status st;
    int64_t dims[1] = {4};
    float data[4] = {-1, 2, -3, 4};
    const float *out;
    pfvm_model *m;
    pfvm_graph *g;
    pfvm_value *x, *y;
    pfvm_node *n;
    pfvm_exec *e = NULL;
    pfvm_tensor *in = NULL;
    if (pfvm_op_register(&scale_op, &st) || !(m = pfvm_model_new(&st))) {
        fprintf(stderr, "error: %s\n", st.msg);
        return 1;
    }
    g = pfvm_graph_new(m, NULL, "g", &st);
    x = g ? pfvm_graph_value(g, "x", &st) : NULL;
    y = g ? pfvm_graph_value(g, "y", &st) : NULL;
    if (!x || !y || pfvm_model_set_opset(m, "", 17, &st) || pfvm_model_set_opset(m, "my.ops", 1, &st) ||
        pfvm_graph_add_input(g, x, &st) || !(n = pfvm_graph_add_node(g, "Scale", "my.ops", "scale", &x, 1, &y, 1, &st)) ||
        pfvm_node_set_attr_float(n, "alpha", 2.5f, &st) || pfvm_graph_add_output(g, y, &st) ||
        !(e = pfvm_exec_new(m, NULL, &st)) || !(in = pfvm_tensor_view(PFVM_FLOAT, 1, dims, data, &st)) ||
        pfvm_exec_bind_one(e, in, &st) || pfvm_exec_run(e, &st)) {
        fprintf(stderr, "error: %s\n", st.msg);
        return 1;
    }
    out = (const float *)pfvm_exec_output(e, 0)->data;
    printf("my.ops.Scale(alpha=2.5): %g %g %g %g\n", out[0], out[1], out[2], out[3]);
    pfvm_tensor_free(in);
    pfvm_exec_free(e);
    pfvm_model_free(m);
    return 0;
}
