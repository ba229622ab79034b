/* Symbolic shape inference of single operators, built with the IR builder:
 * results are compared as printed shapes; error cases must name the node
 * and the op. */
#include "shape/infer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

typedef struct fixture {
    pfvm_model *m;
    pfvm_graph *g;
    pfvm_status st;
} fixture;

static void fx_init(fixture *f, int opset)
{
    f->m = pfvm_model_new(&f->st);
    f->g = pfvm_graph_new(f->m, NULL, "g", &f->st);
    pfvm_model_set_opset(f->m, "", opset, &f->st);
}

/* A graph input with dims given as text: "batch", "3", ... */
static pfvm_value *fx_input(fixture *f, const char *name, pfvm_dtype dt, int rank, const char *const *dims)
{
    pfvm_value *v = pfvm_graph_value(f->g, name, &f->st);
    int i;
    v->type.kind = PFVM_KIND_TENSOR;
    v->type.dtype = dt;
    v->type.shape.rank = rank;
    for (i = 0; i < rank; i++) {
        char *end;
        long long x = strtoll(dims[i], &end, 10);
        v->type.shape.dims[i] = *end ? pfvm_sym_var(f->m->syms, dims[i], 1) : pfvm_sym_const(f->m->syms, x);
    }
    v->has_type_info = 1;
    pfvm_graph_add_input(f->g, v, &f->st);
    return v;
}

static pfvm_value *fx_const_ints(fixture *f, const char *name, const int64_t *vals, int n)
{
    int64_t dims[1];
    pfvm_value *v = pfvm_graph_value(f->g, name, &f->st);
    pfvm_tensor *t;
    dims[0] = n;
    t = pfvm_model_tensor(f->m, PFVM_INT64, 1, dims, NULL, &f->st);
    memcpy(t->data, vals, sizeof(int64_t) * (size_t)n);
    pfvm_graph_add_init(f->g, v, t, &f->st);
    return v;
}

static int shape_is(const pfvm_value *v, const char *want)
{
    char buf[256];
    pfvm_shape_print(&v->type.shape, buf, sizeof buf);
    if (strcmp(buf, want))
        fprintf(stderr, "  %s: got %s, expected %s\n", v->name, buf, want);
    return !strcmp(buf, want);
}

static void test_conv_pool(void)
{
    fixture f;
    static const char *xd[] = {"batch", "3", "h", "w"}, *wd[] = {"8", "3", "3", "3"};
    pfvm_value *in[2], *y, *p;
    pfvm_node *n;
    int64_t pads[4] = {1, 1, 1, 1}, strides[2] = {2, 2}, k[2] = {3, 3};
    fx_init(&f, 17);
    in[0] = fx_input(&f, "x", PFVM_FLOAT, 4, xd);
    in[1] = fx_input(&f, "wt", PFVM_FLOAT, 4, wd);
    y = pfvm_graph_value(f.g, "y", &f.st);
    n = pfvm_graph_add_node(f.g, "Conv", "", "conv", in, 2, &y, 1, &f.st);
    pfvm_node_set_attr_ints(n, "pads", pads, 4, &f.st);
    pfvm_node_set_attr_ints(n, "strides", strides, 2, &f.st);
    p = pfvm_graph_value(f.g, "p", &f.st);
    n = pfvm_graph_add_node(f.g, "MaxPool", "", "pool", &y, 1, &p, 1, &f.st);
    pfvm_node_set_attr_ints(n, "kernel_shape", k, 2, &f.st);
    pfvm_node_set_attr_ints(n, "strides", strides, 2, &f.st);
    pfvm_node_set_attr_string(n, "auto_pad", "SAME_UPPER", &f.st);
    pfvm_graph_add_output(f.g, p, &f.st);
    CHECK_MSG(pfvm_infer_shapes(f.g, 1, &f.st) == PFVM_OK, "%s", f.st.msg);
    /* floor((h+2-3)/2)+1, in canonical form (remainders in [0, d)) */
    CHECK(shape_is(y, "[batch,8,(h+1)/2,(w+1)/2]"));
    /* SAME_UPPER: ceil(h'/2) = floor((h'+1)/2) = floor((h+3)/4) */
    CHECK(shape_is(p, "[batch,8,(h+3)/4,(w+3)/4]"));
    pfvm_model_free(f.m);
}

static void test_reshape_shape_chain(void)
{
    fixture f;
    static const char *xd[] = {"batch", "seq", "32"};
    pfvm_value *x, *s, *g, *idx, *u, *ax, *c, *cst, *r, *ins[2];
    int64_t zero[1] = {0}, minus[2] = {4, -1}, uax[1] = {0};
    fx_init(&f, 17);
    x = fx_input(&f, "x", PFVM_FLOAT, 3, xd);
    s = pfvm_graph_value(f.g, "s", &f.st);
    pfvm_graph_add_node(f.g, "Shape", "", "shape", &x, 1, &s, 1, &f.st);
    idx = fx_const_ints(&f, "i0", zero, 1);
    g = pfvm_graph_value(f.g, "g", &f.st);
    ins[0] = s;
    ins[1] = idx;
    pfvm_graph_add_node(f.g, "Gather", "", "gather", ins, 2, &g, 1, &f.st);
    ax = fx_const_ints(&f, "ax", uax, 1);
    u = pfvm_graph_value(f.g, "u", &f.st);
    ins[0] = g;
    ins[1] = ax;
    pfvm_graph_add_node(f.g, "Identity", "", "id", &g, 1, &u, 1, &f.st);
    cst = fx_const_ints(&f, "rest", minus, 2);
    c = pfvm_graph_value(f.g, "c", &f.st);
    ins[0] = u;
    ins[1] = cst;
    pfvm_graph_add_node(f.g, "Concat", "", "concat", ins, 2, &c, 1, &f.st);
    pfvm_node_set_attr_int(c->producer, "axis", 0, &f.st);
    r = pfvm_graph_value(f.g, "r", &f.st);
    ins[0] = x;
    ins[1] = c;
    pfvm_graph_add_node(f.g, "Reshape", "", "reshape", ins, 2, &r, 1, &f.st);
    pfvm_graph_add_output(f.g, r, &f.st);
    CHECK_MSG(pfvm_infer_shapes(f.g, 1, &f.st) == PFVM_OK, "%s", f.st.msg);
    /* [batch, 4, -1]: -1 = batch*seq*32 / (batch*4) = seq*8 */
    CHECK(shape_is(r, "[batch,4,8*seq]") || shape_is(r, "[batch,4,seq*8]"));
    pfvm_model_free(f.m);
}

static void test_errors(void)
{
    fixture f;
    static const char *ad[] = {"2", "3"}, *bd[] = {"4", "3"};
    pfvm_value *in[2], *y;
    fx_init(&f, 17);
    in[0] = fx_input(&f, "a", PFVM_FLOAT, 2, ad);
    in[1] = fx_input(&f, "b", PFVM_FLOAT, 2, bd);
    y = pfvm_graph_value(f.g, "y", &f.st);
    pfvm_graph_add_node(f.g, "Add", "", "my_add", in, 2, &y, 1, &f.st);
    pfvm_graph_add_output(f.g, y, &f.st);
    CHECK(pfvm_infer_shapes(f.g, 1, &f.st) == PFVM_ERR_SHAPE);
    CHECK_MSG(strstr(f.st.msg, "my_add") && strstr(f.st.msg, "Add") && strstr(f.st.msg, "broadcast"), "%s", f.st.msg);
    pfvm_model_free(f.m);

    fx_init(&f, 17);
    in[0] = fx_input(&f, "a", PFVM_FLOAT, 2, ad);
    in[1] = fx_input(&f, "b", PFVM_FLOAT, 2, bd);
    y = pfvm_graph_value(f.g, "y", &f.st);
    pfvm_graph_add_node(f.g, "MatMul", "", "mm", in, 2, &y, 1, &f.st);
    pfvm_graph_add_output(f.g, y, &f.st);
    CHECK(pfvm_infer_shapes(f.g, 1, &f.st) == PFVM_ERR_SHAPE && strstr(f.st.msg, "'mm' (MatMul)"));
    pfvm_model_free(f.m);
}

static void test_broadcast_symbolic(void)
{
    fixture f;
    static const char *ad[] = {"n", "1", "d"}, *bd[] = {"k", "d"};
    pfvm_value *in[2], *y;
    fx_init(&f, 17);
    in[0] = fx_input(&f, "a", PFVM_FLOAT, 3, ad);
    in[1] = fx_input(&f, "b", PFVM_FLOAT, 2, bd);
    y = pfvm_graph_value(f.g, "y", &f.st);
    pfvm_graph_add_node(f.g, "Mul", "", "mul", in, 2, &y, 1, &f.st);
    pfvm_graph_add_output(f.g, y, &f.st);
    CHECK_MSG(pfvm_infer_shapes(f.g, 1, &f.st) == PFVM_OK, "%s", f.st.msg);
    CHECK(shape_is(y, "[n,k,d]"));
    pfvm_model_free(f.m);
}

int main(void)
{
    test_conv_pool();
    test_reshape_shape_chain();
    test_errors();
    test_broadcast_symbolic();
    return CHECK_END();
}
