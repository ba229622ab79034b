/* Symbolic shape inference of single operators, built with the IR builder:
 * results are compared as printed shapes; error cases must name the node
 * and the op.
 */
#include "exec/exec.h"
#include "passes/passes.h"
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

/* A value of graph g with a declared tensor type (dims as text). */
static pfvm_value *fx_typed(fixture *f, pfvm_graph *g, const char *name, pfvm_dtype dt, int rank, const char *const *dims)
{
    pfvm_value *v = pfvm_graph_value(g, name, &f->st);
    int i;
    v->type.kind = PFVM_KIND_TENSOR;
    v->type.dtype = dt;
    v->type.shape.rank = rank;
    for (i = 0; i < rank; i++) {
        char *end;
        long long x = strtoll(dims[i], &end, 10);
        v->type.shape.dims[i] = *end ? pfvm_sym_var(f->m->syms, dims[i], 1) : pfvm_sym_const(f->m->syms, x);
    }
    v->has_type_info = rank >= 0;
    return v;
}

/* A graph input with dims given as text: "batch", "3", ... */
static pfvm_value *fx_input(fixture *f, const char *name, pfvm_dtype dt, int rank, const char *const *dims)
{
    pfvm_value *v = fx_typed(f, f->g, name, dt, rank, dims);
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

static pfvm_graph *fx_subgraph(fixture *f, pfvm_node *owner, const char *attr)
{
    pfvm_graph *g = pfvm_graph_new(f->m, owner->graph, attr, &f->st);
    pfvm_attr *a = pfvm_node_add_attr(owner, attr, PFVM_ATTR_GRAPH, &f->st);
    g->owner = owner;
    a->g = g;
    return g;
}

/* Loop whose carried state keeps its shape (x + c) and one that grows
 * (Concat along axis 0): the first keeps [n,4], the second's growing dim
 * becomes the loop's own symbol; scan outputs stack over M when nothing
 * else can stop the loop, over a trip-count symbol otherwise. */
static void test_loop_fixpoint(void)
{
    fixture f;
    static const char *xd[] = {"n", "4"}, *rd[] = {"1", "4"}, *none[] = {""};
    static int64_t five = 5; /* viewed by the model tensor */
    pfvm_value *in[4], *outs[3], *bi[4], *bo[4], *x, *r, *m, *tmp[2];
    pfvm_node *loop;
    pfvm_graph *body;
    fx_init(&f, 17);
    x = fx_input(&f, "x", PFVM_FLOAT, 2, xd);
    r = fx_input(&f, "r", PFVM_FLOAT, 2, rd);
    m = pfvm_graph_value(f.g, "M", &f.st);
    pfvm_graph_add_init(f.g, m, pfvm_model_tensor(f.m, PFVM_INT64, 0, NULL, &five, &f.st), &f.st);
    in[0] = m;
    in[1] = NULL;
    in[2] = x;
    in[3] = r;
    outs[0] = pfvm_graph_value(f.g, "x_final", &f.st);
    outs[1] = pfvm_graph_value(f.g, "r_final", &f.st);
    outs[2] = pfvm_graph_value(f.g, "x_scan", &f.st);
    loop = pfvm_graph_add_node(f.g, "Loop", "", "loop", in, 4, outs, 3, &f.st);
    body = fx_subgraph(&f, loop, "body");
    bi[0] = fx_typed(&f, body, "i", PFVM_INT64, 0, none);
    bi[1] = fx_typed(&f, body, "cond", PFVM_BOOL, 0, none);
    bi[2] = fx_typed(&f, body, "xb", PFVM_FLOAT, -1, none);
    bi[3] = fx_typed(&f, body, "rb", PFVM_FLOAT, -1, none);
    for (int i = 0; i < 4; i++)
        pfvm_graph_add_input(body, bi[i], &f.st);
    bo[0] = bi[1];
    bo[1] = pfvm_graph_value(body, "xn", &f.st);
    tmp[0] = bi[2];
    tmp[1] = bi[2];
    pfvm_graph_add_node(body, "Add", "", "add", tmp, 2, &bo[1], 1, &f.st);
    bo[2] = pfvm_graph_value(body, "rn", &f.st);
    tmp[0] = bi[3];
    tmp[1] = r; /* outer scope */
    pfvm_node_set_attr_int(pfvm_graph_add_node(body, "Concat", "", "cat", tmp, 2, &bo[2], 1, &f.st), "axis", 0, &f.st);
    bo[3] = pfvm_graph_value(body, "xs", &f.st);
    pfvm_graph_add_node(body, "Identity", "", "id", &bo[1], 1, &bo[3], 1, &f.st);
    for (int i = 0; i < 4; i++)
        pfvm_graph_add_output(body, bo[i], &f.st);
    for (int i = 0; i < 3; i++)
        pfvm_graph_add_output(f.g, outs[i], &f.st);
    CHECK_MSG(pfvm_infer_shapes(f.g, 1, &f.st) == PFVM_OK, "%s", f.st.msg);
    CHECK(shape_is(outs[0], "[n,4]"));
    CHECK(shape_is(outs[1], "[loop_c1_d0,4]"));
    CHECK(shape_is(outs[2], "[5,n,4]"));
    CHECK(shape_is(bo[2], "[loop_c1_d0+1,4]"));
    /* with a condition input the loop may stop early */
    in[1] = fx_input(&f, "keep_going", PFVM_BOOL, 0, none);
    loop->inputs[1] = in[1];
    CHECK_MSG(pfvm_infer_shapes(f.g, 1, &f.st) == PFVM_OK, "%s", f.st.msg);
    CHECK(shape_is(outs[2], "[loop_trips,n,4]"));
    pfvm_model_free(f.m);
}

/* Scan (opset 16): the body sees slices without the scan axis; scan
 * outputs stack along their axis with the inputs' length. */
static void test_scan_shapes(void)
{
    fixture f;
    static const char *sd[] = {"3"}, *xd[] = {"t", "3"}, *none[] = {""};
    int64_t axes[1] = {1};
    pfvm_value *in[2], *outs[2], *bi[2], *bo[2], *tmp[2];
    pfvm_node *scan;
    pfvm_graph *body;
    fx_init(&f, 16);
    in[0] = fx_input(&f, "s0", PFVM_FLOAT, 1, sd);
    in[1] = fx_input(&f, "xs", PFVM_FLOAT, 2, xd);
    outs[0] = pfvm_graph_value(f.g, "s", &f.st);
    outs[1] = pfvm_graph_value(f.g, "ys", &f.st);
    scan = pfvm_graph_add_node(f.g, "Scan", "", "scan", in, 2, outs, 2, &f.st);
    pfvm_node_set_attr_int(scan, "num_scan_inputs", 1, &f.st);
    pfvm_node_set_attr_ints(scan, "scan_output_axes", axes, 1, &f.st);
    body = fx_subgraph(&f, scan, "body");
    bi[0] = fx_typed(&f, body, "acc", PFVM_FLOAT, -1, none);
    bi[1] = fx_typed(&f, body, "x", PFVM_FLOAT, -1, none);
    pfvm_graph_add_input(body, bi[0], &f.st);
    pfvm_graph_add_input(body, bi[1], &f.st);
    bo[0] = pfvm_graph_value(body, "acc2", &f.st);
    tmp[0] = bi[0];
    tmp[1] = bi[1];
    pfvm_graph_add_node(body, "Add", "", "add", tmp, 2, &bo[0], 1, &f.st);
    bo[1] = pfvm_graph_value(body, "y", &f.st);
    pfvm_graph_add_node(body, "Identity", "", "id", &bo[0], 1, &bo[1], 1, &f.st);
    pfvm_graph_add_output(body, bo[0], &f.st);
    pfvm_graph_add_output(body, bo[1], &f.st);
    pfvm_graph_add_output(f.g, outs[0], &f.st);
    pfvm_graph_add_output(f.g, outs[1], &f.st);
    CHECK_MSG(pfvm_infer_shapes(f.g, 1, &f.st) == PFVM_OK, "%s", f.st.msg);
    CHECK(shape_is(bi[1], "[3]"));
    CHECK(shape_is(outs[0], "[3]"));
    CHECK(shape_is(outs[1], "[3,t]"));
    pfvm_model_free(f.m);
}

/* If(seq == 1) then Squeeze(x, 1) else Identity(x): the rank depends on
 * seq, so it is unknown until seq is bound; specialized to seq = 1 the
 * else branch is dead, and to seq = 3 the then branch (whose Squeeze
 * would fail) is: neither is an error. */
static pfvm_model *build_rank_if(fixture *f, pfvm_value **out)
{
    static const char *xd[] = {"b", "seq"};
    static int64_t one = 1, idx = 1, ax[1] = {1}; /* viewed by the model tensors */
    pfvm_value *x, *sh, *dim, *c1, *eq, *ax1, *tmp[2], *yt, *ye, *y;
    pfvm_node *n;
    pfvm_graph *tb, *eb;
    fx_init(f, 17);
    x = fx_input(f, "x", PFVM_FLOAT, 2, xd);
    sh = pfvm_graph_value(f->g, "sh", &f->st);
    pfvm_graph_add_node(f->g, "Shape", "", "shape", &x, 1, &sh, 1, &f->st);
    c1 = pfvm_graph_value(f->g, "one", &f->st);
    pfvm_graph_add_init(f->g, c1, pfvm_model_tensor(f->m, PFVM_INT64, 0, NULL, &one, &f->st), &f->st);
    tmp[1] = pfvm_graph_value(f->g, "idx", &f->st);
    pfvm_graph_add_init(f->g, tmp[1], pfvm_model_tensor(f->m, PFVM_INT64, 0, NULL, &idx, &f->st), &f->st);
    tmp[0] = sh;
    dim = pfvm_graph_value(f->g, "dim", &f->st);
    pfvm_graph_add_node(f->g, "Gather", "", "gather", tmp, 2, &dim, 1, &f->st);
    tmp[0] = dim;
    tmp[1] = c1;
    eq = pfvm_graph_value(f->g, "eq", &f->st);
    pfvm_graph_add_node(f->g, "Equal", "", "equal", tmp, 2, &eq, 1, &f->st);
    ax1 = fx_const_ints(f, "ax1", ax, 1);
    y = pfvm_graph_value(f->g, "y", &f->st);
    n = pfvm_graph_add_node(f->g, "If", "", "if", &eq, 1, &y, 1, &f->st);
    tb = fx_subgraph(f, n, "then_branch");
    eb = fx_subgraph(f, n, "else_branch");
    yt = pfvm_graph_value(tb, "yt", &f->st);
    tmp[0] = x;
    tmp[1] = ax1;
    pfvm_graph_add_node(tb, "Squeeze", "", "squeeze", tmp, 2, &yt, 1, &f->st);
    pfvm_graph_add_output(tb, yt, &f->st);
    ye = pfvm_graph_value(eb, "ye", &f->st);
    pfvm_graph_add_node(eb, "Identity", "", "ident", &x, 1, &ye, 1, &f->st);
    pfvm_graph_add_output(eb, ye, &f->st);
    pfvm_graph_add_output(f->g, y, &f->st);
    *out = y;
    return f->m;
}

static void test_specialize(void)
{
    static const int64_t seqs[2] = {1, 3};
    static const char *want[2] = {"[b]", "[b,3]"};
    fixture f;
    pfvm_value *y;
    int k;
    build_rank_if(&f, &y);
    CHECK_MSG(pfvm_infer_shapes(f.g, 1, &f.st) == PFVM_OK, "%s", f.st.msg);
    CHECK(shape_is(y, "?"));
    pfvm_model_free(f.m);
    for (k = 0; k < 2; k++) {
        pfvm_binding b;
        memset(&b, 0, sizeof b);
        build_rank_if(&f, &y);
        CHECK(pfvm_infer_shapes(f.g, 1, &f.st) == PFVM_OK);
        CHECK(pfvm_binding_set(&b, pfvm_symtab_find(f.m->syms, "seq"), seqs[k], &f.st) == PFVM_OK);
        CHECK_MSG(pfvm_infer_shapes_bound(f.g, &b, 1, &f.st) == PFVM_OK, "%s", f.st.msg);
        CHECK(shape_is(y, want[k]));
        pfvm_binding_free(&b);
        pfvm_model_free(f.m);
    }
}

/* A declared dim replaces only a symbol inference made up: an unnamed
 * graph-input dim (`x_d0`, made by the reader) stays, while NonZero's
 * fresh count takes the name the model declares. */
static void test_declared_merge(void)
{
    static const char *yd[] = {"declared_n"}, *zd[] = {"1", "declared_k"};
    fixture f;
    pfvm_value *x, *y, *z;
    fx_init(&f, 17);
    x = pfvm_graph_value(f.g, "x", &f.st);
    x->type.kind = PFVM_KIND_TENSOR;
    x->type.dtype = PFVM_FLOAT;
    x->type.shape.rank = 1;
    x->type.shape.dims[0] = pfvm_sym_fresh(f.m->syms, "x_d0");
    x->has_type_info = 1;
    pfvm_graph_add_input(f.g, x, &f.st);
    y = fx_typed(&f, f.g, "y", PFVM_FLOAT, 1, yd);
    z = fx_typed(&f, f.g, "z", PFVM_INT64, 2, zd);
    pfvm_graph_add_node(f.g, "Identity", "", "ident", &x, 1, &y, 1, &f.st);
    pfvm_graph_add_node(f.g, "NonZero", "", "nz", &x, 1, &z, 1, &f.st);
    pfvm_graph_add_output(f.g, y, &f.st);
    pfvm_graph_add_output(f.g, z, &f.st);
    CHECK_MSG(pfvm_infer_shapes(f.g, 1, &f.st) == PFVM_OK, "%s", f.st.msg);
    CHECK(shape_is(y, "[x_d0]"));
    CHECK(shape_is(z, "[1,declared_k]"));
    CHECK(!pfvm_symtab_find(f.m->syms, "x_d0")->inferred);
    pfvm_model_free(f.m);
}

static int cases_is(const pfvm_shape_cases *c, const pfvm_value *v, const char *want)
{
    char buf[512];
    pfvm_shape_cases_print(c, v, buf, sizeof buf);
    if (strcmp(buf, want))
        fprintf(stderr, "  %s: got %s, expected %s\n", v->name, buf, want);
    return !strcmp(buf, want);
}

/* The rank-polymorphic If: inferred per case of `seq == 1`, its output
 * prints as a case shape, while the graph keeps the plain unknown rank
 * (what the planner and the passes see). */
static void test_cases(void)
{
    fixture f;
    pfvm_value *y, *z, *w;
    pfvm_shape_cases *c = NULL;
    pfvm_shape sh;
    pfvm_node *n;
    static const int64_t perm[2] = {1, 0};
    build_rank_if(&f, &y);
    CHECK_MSG(pfvm_infer_shape_cases(f.g, &c, &f.st) == PFVM_OK, "%s", f.st.msg);
    CHECK(c != NULL);
    CHECK(shape_is(y, "?"));
    CHECK(cases_is(c, y, "seq==1 ? [b] : [b,seq]"));
    CHECK(!pfvm_shape_cases_shape(c, y, &sh));
    CHECK(cases_is(c, f.g->inputs[0], "[b,seq]"));
    CHECK(pfvm_shape_cases_shape(c, f.g->inputs[0], &sh) && sh.rank == 2);
    pfvm_shape_cases_free(c);
    pfvm_model_free(f.m);

    /* a consumer that needs rank 2 (Transpose with a 2-long perm) makes the
     * seq == 1 case fail: every run that succeeds has seq != 1, so y and z
     * have one shape */
    build_rank_if(&f, &y);
    z = pfvm_graph_value(f.g, "z", &f.st);
    n = pfvm_graph_add_node(f.g, "Transpose", "", "tr", &y, 1, &z, 1, &f.st);
    pfvm_node_set_attr_ints(n, "perm", perm, 2, &f.st);
    pfvm_graph_add_output(f.g, z, &f.st);
    CHECK_MSG(pfvm_infer_shape_cases(f.g, &c, &f.st) == PFVM_OK, "%s", f.st.msg);
    CHECK(shape_is(y, "?"));
    CHECK(cases_is(c, y, "[b,seq]"));
    CHECK(cases_is(c, z, "[seq,b]"));
    CHECK(pfvm_shape_cases_shape(c, z, &sh) && sh.rank == 2);
    pfvm_shape_cases_free(c);
    pfvm_model_free(f.m);

    /* no undecided condition: no cases, plain shapes */
    {
        static const char *xd[] = {"b", "3"};
        fx_init(&f, 17);
        y = fx_input(&f, "x", PFVM_FLOAT, 2, xd);
        w = pfvm_graph_value(f.g, "w", &f.st);
        pfvm_graph_add_node(f.g, "Relu", "", "relu", &y, 1, &w, 1, &f.st);
        pfvm_graph_add_output(f.g, w, &f.st);
        CHECK(pfvm_infer_shape_cases(f.g, &c, &f.st) == PFVM_OK && c == NULL);
        CHECK(cases_is(NULL, w, "[b,3]"));
        pfvm_model_free(f.m);
    }
}

/* An If on a value (not decidable): a branch whose inference fails with a
 * shape error cannot run, so the outputs take the other branch's type
 * instead of failing the whole inference. */
static void test_if_branch_error(void)
{
    static const char *xd[] = {"b", "seq"}, *cd[] = {NULL};
    static const int64_t perm[3] = {0, 1, 2};
    fixture f;
    pfvm_value *x, *cond, *y, *yt, *ye;
    pfvm_node *n, *t;
    pfvm_graph *tb, *eb;
    fx_init(&f, 17);
    x = fx_input(&f, "x", PFVM_FLOAT, 2, xd);
    cond = fx_input(&f, "cond", PFVM_BOOL, 0, cd);
    y = pfvm_graph_value(f.g, "y", &f.st);
    n = pfvm_graph_add_node(f.g, "If", "", "if", &cond, 1, &y, 1, &f.st);
    tb = fx_subgraph(&f, n, "then_branch");
    eb = fx_subgraph(&f, n, "else_branch");
    yt = pfvm_graph_value(tb, "yt", &f.st);
    t = pfvm_graph_add_node(tb, "Transpose", "", "bad", &x, 1, &yt, 1, &f.st);
    pfvm_node_set_attr_ints(t, "perm", perm, 3, &f.st); /* rank 3 perm on a rank-2 x */
    pfvm_graph_add_output(tb, yt, &f.st);
    ye = pfvm_graph_value(eb, "ye", &f.st);
    pfvm_graph_add_node(eb, "Identity", "", "ident", &x, 1, &ye, 1, &f.st);
    pfvm_graph_add_output(eb, ye, &f.st);
    pfvm_graph_add_output(f.g, y, &f.st);
    CHECK_MSG(pfvm_infer_shapes(f.g, 1, &f.st) == PFVM_OK, "%s", f.st.msg);
    CHECK(shape_is(y, "[b,seq]"));
    pfvm_model_free(f.m);
}

/* ---- data propagation through comparisons and selection ---------------------------------- */

static pfvm_value *fx_op(fixture *f, const char *op, pfvm_value *a, pfvm_value *b, const char *name)
{
    pfvm_value *in[2], *y = pfvm_graph_value(f->g, name, &f->st);
    in[0] = a;
    in[1] = b;
    pfvm_graph_add_node(f->g, op, "", name, in, b ? 2 : 1, &y, 1, &f->st);
    return y;
}

/* A value whose shape shows v's contents: ConstantOfShape(Cast(v, int64)). */
static pfvm_value *fx_show(fixture *f, pfvm_value *v, const char *name)
{
    char buf[64];
    pfvm_value *c, *y = pfvm_graph_value(f->g, name, &f->st);
    snprintf(buf, sizeof buf, "%s_i", name);
    c = pfvm_graph_value(f->g, buf, &f->st);
    pfvm_node_set_attr_int(pfvm_graph_add_node(f->g, "Cast", "", buf, &v, 1, &c, 1, &f->st), "to", PFVM_INT64, &f->st);
    pfvm_graph_add_node(f->g, "ConstantOfShape", "", name, &c, 1, &y, 1, &f->st);
    return y;
}

/* Shape values flow through Equal, Where, Not, And/Or/Xor,
 * Greater/Less(OrEqual), Max/Min, Abs, Neg and Mul by constants: torch's
 * opset-11 Expand target (ConstantOfShape, Mul by -1, Equal, Where over
 * the shape vector) resolves, and so does the Reshape after it. */
static void test_data_prop_select(void)
{
    fixture f;
    static const char *xd[] = {"batch", "N"}, *yd[] = {"batch", "1"};
    static const int64_t k01[2] = {0, 1}, k10[2] = {1, 0}, k11[2] = {1, 1}, k00[2] = {0, 0}, k22[2] = {2, 2},
                         k30[2] = {3, 0}, kneg[1] = {-1}, kflat[1] = {-1};
    pfvm_value *x, *y, *s, *u, *ones, *m1, *e, *w, *ex, *r, *ne, *v[16], *shows[16], *in[3];
    int i = 0;
    fx_init(&f, 13);
    x = fx_input(&f, "x", PFVM_FLOAT, 2, xd);
    y = fx_input(&f, "y", PFVM_INT64, 2, yd);
    s = fx_op(&f, "Shape", x, NULL, "s");
    /* u = s * [0,1] - [1,0] = [-1, N]: Mul and Sub by constants */
    u = fx_op(&f, "Sub", fx_op(&f, "Mul", s, fx_const_ints(&f, "k01", k01, 2), "s01"), fx_const_ints(&f, "k10", k10, 2),
              "u");
    ones = fx_const_ints(&f, "ones", k11, 2);
    m1 = fx_op(&f, "Mul", ones, fx_const_ints(&f, "neg", kneg, 1), "m1");
    e = fx_op(&f, "Equal", u, m1, "e"); /* [1, 0]: N is a dim_param, never -1 */
    in[0] = e;
    in[1] = ones;
    in[2] = u;
    w = pfvm_graph_value(f.g, "w", &f.st);
    pfvm_graph_add_node(f.g, "Where", "", "where", in, 3, &w, 1, &f.st);
    ex = fx_op(&f, "Expand", y, w, "ex");
    r = fx_op(&f, "Reshape", ex, fx_const_ints(&f, "flat", kflat, 1), "r");
    ne = fx_op(&f, "Not", e, NULL, "ne");
    v[i++] = e;
    v[i++] = ne;
    v[i++] = fx_op(&f, "And", e, ne, "and");
    v[i++] = fx_op(&f, "Or", e, ne, "or");
    v[i++] = fx_op(&f, "Xor", e, e, "xor");
    v[i++] = fx_op(&f, "Greater", s, fx_const_ints(&f, "k00", k00, 2), "gt");
    v[i++] = fx_op(&f, "Less", s, fx_const_ints(&f, "k00b", k00, 2), "lt");
    v[i++] = fx_op(&f, "GreaterOrEqual", s, ones, "ge");
    v[i++] = fx_op(&f, "LessOrEqual", s, fx_const_ints(&f, "k00c", k00, 2), "le");
    v[i++] = fx_op(&f, "Max", s, fx_const_ints(&f, "k30", k30, 2), "max");
    v[i++] = fx_op(&f, "Min", s, fx_const_ints(&f, "k30b", k30, 2), "min");
    v[i++] = fx_op(&f, "Abs", fx_op(&f, "Neg", s, NULL, "neg_s"), NULL, "abs");
    v[i++] = fx_op(&f, "Abs", u, NULL, "abs_u");
    v[i++] = fx_op(&f, "Greater", s, fx_const_ints(&f, "k22", k22, 2), "gt2");
    for (int j = 0; j < i; j++) {
        char name[32];
        snprintf(name, sizeof name, "show%d", j);
        shows[j] = fx_show(&f, v[j], name);
        pfvm_graph_add_output(f.g, shows[j], &f.st);
    }
    pfvm_graph_add_output(f.g, r, &f.st);
    CHECK_MSG(pfvm_infer_shapes(f.g, 1, &f.st) == PFVM_OK, "%s", f.st.msg);
    CHECK(shape_is(ex, "[batch,N]"));
    CHECK(shape_is(r, "[N*batch]"));
    CHECK(shape_is(shows[0], "[1,0]"));  /* Equal */
    CHECK(shape_is(shows[1], "[0,1]"));  /* Not */
    CHECK(shape_is(shows[2], "[0,0]"));  /* And */
    CHECK(shape_is(shows[3], "[1,1]"));  /* Or */
    CHECK(shape_is(shows[4], "[0,0]"));  /* Xor */
    CHECK(shape_is(shows[5], "[1,1]"));  /* Greater: dims are >= 1 */
    CHECK(shape_is(shows[6], "[0,0]"));  /* Less */
    CHECK(shape_is(shows[7], "[1,1]"));  /* GreaterOrEqual */
    CHECK(shape_is(shows[8], "[0,0]"));  /* LessOrEqual */
    CHECK(shape_is(shows[9], "[max(3,batch),N]"));
    CHECK(shape_is(shows[10], "[min(3,batch),0]"));
    CHECK(shape_is(shows[11], "[batch,N]")); /* Abs(Neg(s)) */
    CHECK(shape_is(shows[12], "[1,N]"));     /* Abs([-1, N]) */
    CHECK(shape_is(shows[13], "[min(1,max(0,batch-2)),min(1,max(0,N-2))]")); /* undecided: symbolic */
    pfvm_model_free(f.m);
}

/* ---- loop-carried shapes that change between iterations ----------------------------------- */

static pfvm_value *g_corrupt; /* what the test pass below breaks */

static pfvm_code corrupt_pass(pfvm_model *m, pfvm_graph *g, pfvm_pass_stats *stats, pfvm_status *st)
{
    (void)g;
    (void)stats;
    (void)st;
    g_corrupt->type.shape.dims[1] = pfvm_sym_const(m->syms, 0); /* the first iteration's width */
    return PFVM_OK;
}

/* toks starts [batch,0] and grows by a column per iteration (Concat); the
 * body declares its input [t0,t1]. Inference widens dim 1 to the loop's
 * symbol and keeps it over repeated runs (as the passes run it), never
 * [batch,0]; the guard notices a body input narrowed to one iteration,
 * and the executor's shape check sees it at the second iteration. */
static void test_loop_growing(void)
{
    fixture f;
    static const char *xd[] = {"batch", "0"}, *cd[] = {"batch", "1"}, *bd[] = {"t0", "t1"}, *none[] = {""};
    static int64_t three = 3;
    static const pfvm_pass bad = {"corrupt", "test pass", corrupt_pass, 0};
    const pfvm_pass *list[1];
    pfvm_value *in[3], *out, *bi[3], *bo[2], *x, *col, *m, *tmp[2];
    pfvm_tensor *ti[2];
    pfvm_node *loop;
    pfvm_graph *body;
    pfvm_exec *e;
    char msg[320];
    int count = -1, k;
    fx_init(&f, 17);
    x = fx_input(&f, "x", PFVM_FLOAT, 2, xd);
    col = fx_input(&f, "col", PFVM_FLOAT, 2, cd);
    m = pfvm_graph_value(f.g, "M", &f.st);
    pfvm_graph_add_init(f.g, m, pfvm_model_tensor(f.m, PFVM_INT64, 0, NULL, &three, &f.st), &f.st);
    in[0] = m;
    in[1] = NULL;
    in[2] = x;
    out = pfvm_graph_value(f.g, "toks", &f.st);
    loop = pfvm_graph_add_node(f.g, "Loop", "", "loop", in, 3, &out, 1, &f.st);
    body = fx_subgraph(&f, loop, "body");
    bi[0] = fx_typed(&f, body, "i", PFVM_INT64, 0, none);
    bi[1] = fx_typed(&f, body, "cond", PFVM_BOOL, 0, none);
    bi[2] = fx_typed(&f, body, "tb", PFVM_FLOAT, 2, bd);
    for (k = 0; k < 3; k++)
        pfvm_graph_add_input(body, bi[k], &f.st);
    bo[0] = bi[1];
    bo[1] = pfvm_graph_value(body, "tn", &f.st);
    tmp[0] = bi[2];
    tmp[1] = col; /* outer scope */
    pfvm_node_set_attr_int(pfvm_graph_add_node(body, "Concat", "", "cat", tmp, 2, &bo[1], 1, &f.st), "axis", 1, &f.st);
    pfvm_graph_add_output(body, bo[0], &f.st);
    pfvm_graph_add_output(body, bo[1], &f.st);
    pfvm_graph_add_output(f.g, out, &f.st);
    for (k = 0; k < 3; k++) {
        CHECK_MSG(pfvm_infer_shapes(f.g, 1, &f.st) == PFVM_OK, "%s", f.st.msg);
        CHECK(shape_is(bi[2], "[batch,loop_c0_d1]"));
        CHECK(shape_is(bo[1], "[batch,loop_c0_d1+1]"));
        CHECK(shape_is(out, "[batch,loop_c0_d1]"));
    }
    /* the guard: nothing wrong now, then a body input fixed to width 0 */
    CHECK(pfvm_infer_check_subgraph_inputs(f.g, &count, msg, sizeof msg, &f.st) == PFVM_OK && count == 0);
    bi[2]->type.shape.dims[1] = pfvm_sym_const(f.m->syms, 0);
    CHECK(pfvm_infer_check_subgraph_inputs(f.g, &count, msg, sizeof msg, &f.st) == PFVM_OK && count == 1);
    CHECK_MSG(strstr(msg, "'tb'") && strstr(msg, "[batch,0]") && strstr(msg, "loop_c0_d1"), "%s", msg);
    /* ... which repaired it: inference never keeps a narrowed dim */
    CHECK(shape_is(bi[2], "[batch,loop_c0_d1]"));
    /* the pass manager names the pass that breaks it */
    g_corrupt = bi[2];
    list[0] = &bad;
    CHECK(pfvm_run_passes(f.m, list, 1, 1, NULL, &f.st) == PFVM_ERR_SHAPE);
    CHECK_MSG(strstr(f.st.msg, "pass 'corrupt'") && strstr(f.st.msg, "'tb'"), "%s", f.st.msg);
    CHECK(pfvm_run_passes(f.m, list, 1, 0, NULL, &f.st) == PFVM_OK); /* unguarded */
    CHECK(pfvm_run_passes(NULL, list, 1, 1, NULL, &f.st) == PFVM_ERR_INVALID);
    list[0] = NULL;
    CHECK(pfvm_run_passes(f.m, list, 1, 1, NULL, &f.st) == PFVM_ERR_INVALID && strstr(f.st.msg, "pass 0"));
    /* the executor's per-iteration check: sound types pass every iteration */
    CHECK_MSG(pfvm_infer_shapes(f.g, 1, &f.st) == PFVM_OK, "%s", f.st.msg);
    {
        int64_t d0[2] = {2, 0}, d1[2] = {2, 1};
        ti[0] = pfvm_tensor_new(PFVM_FLOAT, 2, d0, &f.st);
        ti[1] = pfvm_tensor_new(PFVM_FLOAT, 2, d1, &f.st);
    }
    e = pfvm_exec_new(f.m, NULL, &f.st);
    CHECK(e != NULL);
    if (e) {
        pfvm_exec_check_shapes(e, 1);
        CHECK_MSG(pfvm_exec_bind(e, pfvm_tensors_const(ti), 2, &f.st) == PFVM_OK &&
                      pfvm_exec_run(e, &f.st) == PFVM_OK,
                  "%s", f.st.msg);
        CHECK(pfvm_exec_output(e, 0)->dims[1] == 3);
        /* a body value typed for the first iteration only fails at the second */
        bo[1]->type.shape.dims[1] = pfvm_sym_const(f.m->syms, 1);
        CHECK(pfvm_exec_run(e, &f.st) == PFVM_ERR_SHAPE);
        CHECK_MSG(strstr(f.st.msg, "'tn'") && strstr(f.st.msg, "'cat'") && strstr(f.st.msg, "run 2 of graph 'body'"),
                  "%s", f.st.msg);
        pfvm_exec_check_shapes(e, 0);
        CHECK_MSG(pfvm_exec_run(e, &f.st) == PFVM_OK, "%s", f.st.msg);
        pfvm_exec_free(e);
    }
    pfvm_tensor_free(ti[0]);
    pfvm_tensor_free(ti[1]);
    pfvm_model_free(f.m);
}

int main(void)
{
    test_loop_growing();
    test_data_prop_select();
    test_cases();
    test_if_branch_error();
    test_declared_merge();
    test_conv_pool();
    test_reshape_shape_chain();
    test_errors();
    test_broadcast_symbolic();
    test_loop_fixpoint();
    test_scan_shapes();
    test_specialize();
    return CHECK_END();
}
