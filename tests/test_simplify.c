/* Unit tests of the optimization passes (fold, simplify, cse, bnfold, dce)
 * and of the operators' simplify hooks. Each case builds a small graph
 * twice with the IR builder, optimizes one copy, checks what is left, and
 * runs both with the same inputs: the outputs must agree. Cases that must
 * not be rewritten (x*1 where broadcasting enlarges x, a reversing Slice,
 * Dropout in training...) check that the node stays. The model fixtures
 * (tests/models, tests/shapes) are checked for leftover no-op Reshapes and
 * unfolded shape arithmetic. */
#include "passes/passes.h"
#include "exec/exec.h"
#include "onnx/onnx_io.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

typedef struct fx {
    pfvm_model *m;
    pfvm_graph *g;
    pfvm_status st;
} fx;

static void fx_init(fx *f, int opset)
{
    memset(f, 0, sizeof *f);
    f->m = pfvm_model_new(&f->st);
    f->g = pfvm_graph_new(f->m, NULL, "g", &f->st);
    pfvm_model_set_opset(f->m, "", opset, &f->st);
}

static void fx_free(fx *f)
{
    pfvm_model_free(f->m);
    f->m = NULL;
}

/* A graph input; dims as text, "batch,seq,64". */
static pfvm_value *in_(fx *f, const char *name, pfvm_dtype dt, const char *dims)
{
    pfvm_value *v = pfvm_graph_value(f->g, name, &f->st);
    char buf[128], *tok, *save = NULL;
    v->type.kind = PFVM_KIND_TENSOR;
    v->type.dtype = dt;
    v->type.shape.rank = 0;
    snprintf(buf, sizeof buf, "%s", dims);
    for (tok = buf; *dims && tok; tok = save) {
        char *end, *comma = strchr(tok, ',');
        long long x;
        if (comma)
            *comma = 0;
        save = comma ? comma + 1 : NULL;
        x = strtoll(tok, &end, 10);
        v->type.shape.dims[v->type.shape.rank++] = *end ? pfvm_sym_var(f->m->syms, tok, 1) : pfvm_sym_const(f->m->syms, x);
    }
    v->has_type_info = 1;
    pfvm_graph_add_input(f->g, v, &f->st);
    return v;
}

/* A float initializer; data NULL fills i*0.1 - 0.3 patterns. */
static pfvm_value *cf(fx *f, const char *name, int rank, const int64_t *dims, const float *data)
{
    pfvm_value *v = pfvm_graph_value(f->g, name, &f->st);
    pfvm_tensor *t = pfvm_model_tensor(f->m, PFVM_FLOAT, rank, dims, NULL, &f->st);
    int64_t i, n = pfvm_tensor_numel(t);
    for (i = 0; i < n; i++)
        ((float *)t->data)[i] = data ? data[i] : (float)(0.5 + 0.25 * sin((double)i * 1.7 + (double)strlen(name)));
    pfvm_graph_add_init(f->g, v, t, &f->st);
    return v;
}

static pfvm_value *cfs(fx *f, const char *name, float x)
{
    return cf(f, name, 0, NULL, &x);
}

static pfvm_value *ci(fx *f, const char *name, int n, const int64_t *vals)
{
    int64_t dims[1];
    pfvm_value *v = pfvm_graph_value(f->g, name, &f->st);
    pfvm_tensor *t;
    dims[0] = n;
    t = pfvm_model_tensor(f->m, PFVM_INT64, 1, dims, NULL, &f->st);
    if (n)
        memcpy(t->data, vals, sizeof(int64_t) * (size_t)n);
    pfvm_graph_add_init(f->g, v, t, &f->st);
    return v;
}

static pfvm_value *ci1(fx *f, const char *name, int64_t x)
{
    return ci(f, name, 1, &x);
}

/* A node with n_in inputs (NULL for omitted ones) and one output `out`. */
static pfvm_node *nd(fx *f, const char *op, const char *out, int n_in, ...)
{
    pfvm_value *ins[8], *o = pfvm_graph_value(f->g, out, &f->st);
    va_list ap;
    int i;
    va_start(ap, n_in);
    for (i = 0; i < n_in; i++)
        ins[i] = va_arg(ap, pfvm_value *);
    va_end(ap);
    return pfvm_graph_add_node(f->g, op, "", out, ins, n_in, &o, 1, &f->st);
}

static pfvm_value *op(fx *f, const char *o, const char *out, int n_in, pfvm_value *a, pfvm_value *b, pfvm_value *c)
{
    return nd(f, o, out, n_in, a, b, c)->outputs[0];
}

static void out_(fx *f, pfvm_value *v)
{
    pfvm_graph_add_output(f->g, v, &f->st);
}

static int count(const pfvm_graph *g, const char *o)
{
    int i, n = 0;
    for (i = 0; i < pfvm_graph_num_nodes(g); i++)
        n += !strcmp(g->nodes[i]->op_type, o);
    return n;
}

static pfvm_node *find(const pfvm_graph *g, const char *o)
{
    int i;
    for (i = 0; i < pfvm_graph_num_nodes(g); i++)
        if (!strcmp(g->nodes[i]->op_type, o))
            return g->nodes[i];
    return NULL;
}

/* Deterministic inputs for every graph input, shaped by its declared type
 * with the symbols bound by `binds` ("batch=2,seq=3"). */
static pfvm_tensor **make_inputs(pfvm_exec *e, pfvm_model *m, const char *binds, int *n)
{
    pfvm_binding b;
    pfvm_tensor **ins;
    char buf[128], *tok, *save;
    int i;
    int64_t k;
    memset(&b, 0, sizeof b);
    snprintf(buf, sizeof buf, "%s", binds ? binds : "");
    for (tok = buf; *tok; tok = save) {
        char *comma = strchr(tok, ','), *eq;
        save = comma ? comma + 1 : tok + strlen(tok);
        if (comma)
            *comma = 0;
        if ((eq = strchr(tok, '=')) != NULL) {
            *eq = 0;
            if (pfvm_symtab_find(m->syms, tok))
                pfvm_binding_set(&b, pfvm_symtab_find(m->syms, tok), atoll(eq + 1), NULL);
        }
    }
    *n = pfvm_exec_num_inputs(e);
    ins = (pfvm_tensor **)calloc((size_t)*n + 1, sizeof *ins);
    for (i = 0; i < *n; i++) {
        const pfvm_value *v = pfvm_exec_input(e, i);
        int64_t dims[PFVM_MAX_RANK];
        if (!pfvm_shape_eval(&v->type.shape, &b, dims))
            continue;
        ins[i] = pfvm_tensor_new(v->type.dtype, v->type.shape.rank, dims, NULL);
        for (k = 0; ins[i] && k < pfvm_tensor_numel(ins[i]); k++) {
            if (v->type.dtype == PFVM_FLOAT)
                ((float *)ins[i]->data)[k] = (float)sin((double)(k * 7 + i * 3) * 0.37);
            else if (v->type.dtype == PFVM_INT64)
                ((int64_t *)ins[i]->data)[k] = (k * 3 + i) % 5;
        }
    }
    pfvm_binding_free(&b);
    return ins;
}

/* Runs a and b on the same inputs; 1 when every output agrees. */
static int same_outputs(fx *a, fx *b, const char *binds)
{
    pfvm_status st;
    pfvm_exec *ea = pfvm_exec_new(a->m, NULL, &st), *eb;
    pfvm_tensor **ia, **ib;
    int na, nb, i, ok = 1;
    int64_t k;
    if (!ea) {
        fprintf(stderr, "  reference: %s\n", st.msg);
        return 0;
    }
    if (!(eb = pfvm_exec_new(b->m, NULL, &st))) {
        fprintf(stderr, "  optimized: %s\n", st.msg);
        pfvm_exec_free(ea);
        return 0;
    }
    ia = make_inputs(ea, a->m, binds, &na);
    ib = make_inputs(eb, b->m, binds, &nb);
    if (na != nb || pfvm_exec_bind(ea, pfvm_tensors_const(ia), na, &st) || pfvm_exec_run(ea, &st) ||
        pfvm_exec_bind(eb, pfvm_tensors_const(ib), nb, &st) || pfvm_exec_run(eb, &st)) {
        fprintf(stderr, "  run: %s\n", st.msg);
        ok = 0;
    }
    for (i = 0; ok && i < pfvm_exec_num_outputs(ea); i++) {
        const pfvm_tensor *x = pfvm_exec_output(ea, i), *y = pfvm_exec_output(eb, i);
        if (x->dtype != y->dtype || x->rank != y->rank || memcmp(x->dims, y->dims, sizeof(int64_t) * (size_t)x->rank)) {
            fprintf(stderr, "  output %d: type or shape differs\n", i);
            ok = 0;
            break;
        }
        for (k = 0; k < pfvm_tensor_numel(x); k++) {
            double p = pfvm_tensor_get_f64(x, k), q = pfvm_tensor_get_f64(y, k);
            if (fabs(p - q) > 1e-5 + 1e-4 * fabs(p)) {
                fprintf(stderr, "  output %d element %lld: %.9g vs %.9g\n", i, (long long)k, p, q);
                ok = 0;
                break;
            }
        }
    }
    for (i = 0; i < na; i++)
        pfvm_tensor_free(ia[i]);
    for (i = 0; i < nb; i++)
        pfvm_tensor_free(ib[i]);
    free(ia);
    free(ib);
    pfvm_exec_free(ea);
    pfvm_exec_free(eb);
    return ok;
}

typedef void (*build_fn)(fx *f);

/* The passes of this file, without fusion (which changes what is counted). */
#define PIPELINE "fold,simplify,cse,bnfold,dce"

/* Builds the case twice, optimizes the second copy with `passes`, checks
 * that the graph stays valid and computes the same outputs. The optimized
 * copy is left in *o (free it). */
static void run_case(build_fn build, int opset, const char *passes, const char *binds, fx *o)
{
    fx ref;
    fx_init(&ref, opset);
    fx_init(o, opset);
    build(&ref);
    build(o);
    CHECK_MSG(pfvm_optimize(o->m, passes, NULL, &o->st) == PFVM_OK, "%s", o->st.msg);
    CHECK_MSG(pfvm_graph_verify(o->g, &o->st) == PFVM_OK, "%s", o->st.msg);
    CHECK(same_outputs(&ref, o, binds));
    fx_free(&ref);
}

/* ---- symbolic shapes ------------------------------------------------------------ */

/* y = Reshape(r, Concat(Shape(r)[0], Shape(r)[1], 64)) with r [batch,seq,64]. */
static pfvm_value *shape_chain(fx *f, pfvm_value *r, const char *tag, int64_t d2, int64_t d3)
{
    char nm[64];
    int64_t last[2];
    pfvm_value *s, *g0, *g1, *u0, *u1, *c, *tail;
    snprintf(nm, sizeof nm, "%s_s", tag);
    s = op(f, "Shape", nm, 1, r, NULL, NULL);
    last[0] = d2;
    last[1] = d3;
    snprintf(nm, sizeof nm, "%s_g0b", tag);
    g0 = op(f, "Gather", nm, 2, s, pfvm_graph_find(f->g, "zero"), NULL);
    snprintf(nm, sizeof nm, "%s_g1", tag);
    g1 = op(f, "Gather", nm, 2, s, pfvm_graph_find(f->g, "one"), NULL);
    snprintf(nm, sizeof nm, "%s_u0", tag);
    u0 = op(f, "Unsqueeze", nm, 2, g0, pfvm_graph_find(f->g, "axes0"), NULL);
    snprintf(nm, sizeof nm, "%s_u1", tag);
    u1 = op(f, "Unsqueeze", nm, 2, g1, pfvm_graph_find(f->g, "axes0"), NULL);
    snprintf(nm, sizeof nm, "%s_tail", tag);
    tail = ci(f, nm, d3 ? 2 : 1, last);
    snprintf(nm, sizeof nm, "%s_c", tag);
    c = nd(f, "Concat", nm, 3, u0, u1, tail)->outputs[0];
    pfvm_node_set_attr_int(c->producer, "axis", 0, &f->st);
    snprintf(nm, sizeof nm, "%s_y", tag);
    return op(f, "Reshape", nm, 2, r, c, NULL);
}

static void scalar_indices(fx *f)
{
    int64_t z = 0, o = 1;
    pfvm_value *v;
    pfvm_tensor *t;
    v = pfvm_graph_value(f->g, "zero", &f->st);
    t = pfvm_model_tensor(f->m, PFVM_INT64, 0, NULL, NULL, &f->st);
    memcpy(t->data, &z, sizeof z);
    pfvm_graph_add_init(f->g, v, t, &f->st);
    v = pfvm_graph_value(f->g, "one", &f->st);
    t = pfvm_model_tensor(f->m, PFVM_INT64, 0, NULL, NULL, &f->st);
    memcpy(t->data, &o, sizeof o);
    pfvm_graph_add_init(f->g, v, t, &f->st);
    ci1(f, "axes0", 0);
}

static void build_reshape_same(fx *f)
{
    pfvm_value *x = in_(f, "x", PFVM_FLOAT, "batch,seq,64"), *r, *y;
    scalar_indices(f);
    r = op(f, "Relu", "r", 1, x, NULL, NULL);
    y = shape_chain(f, r, "a", 64, 0);
    out_(f, op(f, "Neg", "out", 1, y, NULL, NULL));
}

static void build_reshape_split(fx *f)
{
    pfvm_value *x = in_(f, "x", PFVM_FLOAT, "batch,seq,64"), *r, *y;
    scalar_indices(f);
    r = op(f, "Relu", "r", 1, x, NULL, NULL);
    y = shape_chain(f, r, "a", 8, 8);
    out_(f, op(f, "Neg", "out", 1, y, NULL, NULL));
}

static void test_symbolic_reshape(void)
{
    fx o;
    pfvm_node *r;
    /* Reshape to [batch, seq, 64] of a [batch, seq, 64] tensor: gone, and
     * its shape arithmetic with it */
    run_case(build_reshape_same, 17, PIPELINE, "batch=2,seq=3", &o);
    CHECK(count(o.g, "Reshape") == 0 && count(o.g, "Shape") == 0 && count(o.g, "Concat") == 0 &&
          count(o.g, "Gather") == 0 && count(o.g, "Unsqueeze") == 0);
    CHECK(pfvm_graph_num_nodes(o.g) == 2 && !strcmp(o.g->outputs[0]->name, "out"));
    fx_free(&o);
    /* simplify alone removes the Reshape (dce then the chain) */
    run_case(build_reshape_same, 17, "simplify", "batch=2,seq=3", &o);
    CHECK(count(o.g, "Reshape") == 0);
    fx_free(&o);
    /* to [batch, seq, 8, 8]: one Reshape with the constant target [0, 0, 8, 8] */
    run_case(build_reshape_split, 17, PIPELINE, "batch=3,seq=2", &o);
    r = find(o.g, "Reshape");
    CHECK(count(o.g, "Reshape") == 1 && count(o.g, "Shape") == 0 && count(o.g, "Concat") == 0);
    CHECK(r && r->inputs[1]->init && pfvm_tensor_numel(r->inputs[1]->init) == 4 &&
          ((int64_t *)r->inputs[1]->init->data)[0] == 0 && ((int64_t *)r->inputs[1]->init->data)[1] == 0 &&
          ((int64_t *)r->inputs[1]->init->data)[2] == 8 && ((int64_t *)r->inputs[1]->init->data)[3] == 8);
    fx_free(&o);
}

/* [batch*seq, 32] -> [seq, batch, 32] cannot be written with constants: the
 * shape arithmetic stays. */
static void build_reshape_needs_runtime(fx *f)
{
    pfvm_value *x = in_(f, "x", PFVM_FLOAT, "seq,batch,32"), *r, *flat, *y;
    int64_t fs[2] = {-1, 32};
    scalar_indices(f);
    r = op(f, "Relu", "r", 1, x, NULL, NULL);
    flat = op(f, "Reshape", "flat", 2, r, ci(f, "fs", 2, fs), NULL);
    flat = op(f, "Neg", "neg", 1, flat, NULL, NULL);
    {
        /* back to Shape(r) = [seq, batch, 32] */
        pfvm_value *s = op(f, "Shape", "s", 1, r, NULL, NULL);
        y = op(f, "Reshape", "y", 2, flat, s, NULL);
    }
    out_(f, y);
}

static void test_reshape_runtime_kept(void)
{
    fx o;
    run_case(build_reshape_needs_runtime, 17, PIPELINE, "batch=2,seq=3", &o);
    CHECK(count(o.g, "Reshape") == 2 && count(o.g, "Shape") == 1);
    fx_free(&o);
}

/* Reshape(Reshape(x, [6, 4]), [2, 12]) is one Reshape; Unsqueeze of
 * Squeeze on the same axes is x; Flatten of a matrix is the matrix. */
static void build_reshape_chains(fx *f)
{
    pfvm_value *x = in_(f, "x", PFVM_FLOAT, "4,6"), *y = in_(f, "y", PFVM_FLOAT, "1,3,1,4");
    pfvm_value *z = in_(f, "z", PFVM_FLOAT, "n,6"), *a, *b, *c;
    int64_t s1[2] = {6, 4}, s2[2] = {2, 12}, ax[2] = {0, 2};
    a = op(f, "Reshape", "a", 2, x, ci(f, "s1", 2, s1), NULL);
    a = op(f, "Reshape", "a2", 2, a, ci(f, "s2", 2, s2), NULL);
    out_(f, op(f, "Neg", "oa", 1, a, NULL, NULL));
    b = op(f, "Squeeze", "b", 2, y, ci(f, "ax", 2, ax), NULL);
    b = op(f, "Unsqueeze", "b2", 2, b, pfvm_graph_find(f->g, "ax"), NULL);
    out_(f, op(f, "Neg", "ob", 1, b, NULL, NULL));
    c = op(f, "Flatten", "c", 1, z, NULL, NULL);
    out_(f, op(f, "Neg", "oc", 1, c, NULL, NULL));
}

static void test_reshape_chains(void)
{
    fx o;
    pfvm_node *r;
    run_case(build_reshape_chains, 17, PIPELINE, "n=3", &o);
    r = find(o.g, "Reshape");
    CHECK(count(o.g, "Reshape") == 1 && r && r->inputs[0] == pfvm_graph_find(o.g, "x"));
    CHECK(count(o.g, "Squeeze") == 0 && count(o.g, "Unsqueeze") == 0 && count(o.g, "Flatten") == 0);
    fx_free(&o);
}

/* ---- element-wise identities ------------------------------------------------------- */

static void build_neutral(fx *f)
{
    pfvm_value *x = in_(f, "x", PFVM_FLOAT, "n,3"), *t;
    int64_t d1[1] = {3}, d2[2] = {2, 3};
    float ones[6] = {1, 1, 1, 1, 1, 1}, zeros[3] = {0, 0, 0};
    t = op(f, "Mul", "m1", 2, x, cfs(f, "one", 1.0f), NULL);    /* x*1 */
    t = op(f, "Mul", "m2", 2, cf(f, "ones3", 1, d1, ones), t, NULL); /* 1*x, [3] broadcast: same shape */
    t = op(f, "Add", "a1", 2, t, cf(f, "zeros3", 1, d1, zeros), NULL);
    t = op(f, "Add", "a2", 2, pfvm_graph_find(f->g, "zeros3"), t, NULL);
    t = op(f, "Sub", "s1", 2, t, pfvm_graph_find(f->g, "zeros3"), NULL);
    t = op(f, "Div", "d1", 2, t, pfvm_graph_find(f->g, "one"), NULL);
    t = op(f, "Pow", "p1", 2, t, pfvm_graph_find(f->g, "one"), NULL);
    out_(f, op(f, "Relu", "out", 1, t, NULL, NULL));
    /* must stay: broadcasting enlarges x (n,3 * 2,3 is not x when n = 1),
     * 0 - x, x / 2, x ** 2 */
    out_(f, op(f, "Mul", "big", 2, in_(f, "v", PFVM_FLOAT, "3"), cf(f, "ones23", 2, d2, ones), NULL));
    out_(f, op(f, "Sub", "neg", 2, pfvm_graph_find(f->g, "zeros3"), x, NULL));
    out_(f, op(f, "Div", "half", 2, x, cfs(f, "two", 2.0f), NULL));
    out_(f, op(f, "Pow", "sq", 2, x, pfvm_graph_find(f->g, "two"), NULL));
}

static void test_neutral(void)
{
    fx o;
    run_case(build_neutral, 17, "simplify,dce", "n=2", &o);
    CHECK(count(o.g, "Mul") == 1 && count(o.g, "Add") == 0 && count(o.g, "Sub") == 1 && count(o.g, "Div") == 1 &&
          count(o.g, "Pow") == 1);
    CHECK(find(o.g, "Mul") && !strcmp(find(o.g, "Mul")->outputs[0]->name, "big"));
    CHECK(find(o.g, "Relu") && find(o.g, "Relu")->inputs[0] == pfvm_graph_find(o.g, "x"));
    fx_free(&o);
}

/* Identity, Cast to the same type, Dropout in inference, Pad by zeros,
 * Slice of everything, one-input Concat/Sum/Max/Min/Mean, Expand to the
 * same shape, Tile by ones: all their input. */
static void build_noops(fx *f)
{
    pfvm_value *x = in_(f, "x", PFVM_FLOAT, "n,4"), *t;
    int64_t pads[4] = {0, 0, 0, 0}, st[2] = {0, 0}, en[2] = {INT64_MAX, 4}, ones[2] = {1, 1}, shp[2] = {1, 4};
    t = op(f, "Identity", "i", 1, x, NULL, NULL);
    t = nd(f, "Cast", "c", 1, t)->outputs[0];
    pfvm_node_set_attr_int(t->producer, "to", PFVM_FLOAT, &f->st);
    t = op(f, "Dropout", "d", 1, t, NULL, NULL);
    t = op(f, "Pad", "p", 2, t, ci(f, "pads", 4, pads), NULL);
    t = op(f, "Slice", "s", 3, t, ci(f, "st", 2, st), ci(f, "en", 2, en));
    t = nd(f, "Concat", "cc", 1, t)->outputs[0];
    pfvm_node_set_attr_int(t->producer, "axis", 1, &f->st);
    t = op(f, "Sum", "su", 1, t, NULL, NULL);
    t = op(f, "Max", "mx", 1, t, NULL, NULL);
    t = op(f, "Min", "mn", 1, t, NULL, NULL);
    t = op(f, "Mean", "me", 1, t, NULL, NULL);
    t = op(f, "Expand", "e", 2, t, ci(f, "shp", 2, shp), NULL);
    t = op(f, "Tile", "tl", 2, t, ci(f, "ones", 2, ones), NULL);
    out_(f, op(f, "Relu", "out", 1, t, NULL, NULL));
}

static void test_noops(void)
{
    fx o;
    run_case(build_noops, 17, "simplify,dce", "n=3", &o);
    CHECK(pfvm_graph_num_nodes(o.g) == 1 && count(o.g, "Relu") == 1);
    fx_free(&o);
}

/* Those that must stay: Cast to another type, Dropout in training or with
 * its mask read, a reversing Slice, Pad that crops one side and pads the
 * other, Expand that broadcasts. */
static void build_not_noops(fx *f)
{
    pfvm_value *x = in_(f, "x", PFVM_FLOAT, "3,4"), *t, *d, *ins[3], *outs[2];
    int64_t pads[4] = {0, 1, 0, -1}, st[1] = {-1}, en[1] = {INT64_MIN}, ax[1] = {1}, step[1] = {-1}, shp[3] = {2, 3, 4};
    t = nd(f, "Cast", "c", 1, x)->outputs[0];
    pfvm_node_set_attr_int(t->producer, "to", PFVM_DOUBLE, &f->st);
    out_(f, t);
    {
        pfvm_value *b = pfvm_graph_value(f->g, "train", &f->st);
        pfvm_tensor *bt = pfvm_model_tensor(f->m, PFVM_BOOL, 0, NULL, NULL, &f->st);
        *(uint8_t *)bt->data = 1;
        pfvm_graph_add_init(f->g, b, bt, &f->st);
        ins[0] = x;
        ins[1] = cfs(f, "ratio", 0.0f); /* ratio 0: deterministic even in training */
        ins[2] = b;
        outs[0] = pfvm_graph_value(f->g, "dt", &f->st);
        pfvm_graph_add_node(f->g, "Dropout", "", "dt", ins, 3, outs, 1, &f->st);
        out_(f, outs[0]);
        outs[0] = pfvm_graph_value(f->g, "dm", &f->st);
        outs[1] = pfvm_graph_value(f->g, "mask", &f->st);
        pfvm_graph_add_node(f->g, "Dropout", "", "dm", ins, 1, outs, 2, &f->st);
        out_(f, outs[0]);
        out_(f, outs[1]);
    }
    d = op(f, "Slice", "rev", 3, x, ci(f, "st", 1, st), ci(f, "en", 1, en));
    {
        pfvm_value *sin_[5];
        sin_[0] = x;
        sin_[1] = pfvm_graph_find(f->g, "st");
        sin_[2] = pfvm_graph_find(f->g, "en");
        sin_[3] = ci(f, "ax", 1, ax);
        sin_[4] = ci(f, "step", 1, step);
        outs[0] = pfvm_graph_value(f->g, "rev2", &f->st);
        pfvm_graph_add_node(f->g, "Slice", "", "rev2", sin_, 5, outs, 1, &f->st);
        out_(f, outs[0]);
    }
    out_(f, d);
    out_(f, op(f, "Pad", "crop", 2, x, ci(f, "pads", 4, pads), NULL));
    out_(f, op(f, "Expand", "ex", 2, x, ci(f, "shp", 3, shp), NULL));
}

static void test_not_noops(void)
{
    fx o;
    run_case(build_not_noops, 17, "simplify,dce", "", &o);
    CHECK(count(o.g, "Cast") == 1 && count(o.g, "Dropout") == 2 && count(o.g, "Slice") == 2 && count(o.g, "Pad") == 1 &&
          count(o.g, "Expand") == 1);
    fx_free(&o);
}

/* ---- Transpose ------------------------------------------------------------------- */

static void build_transposes(fx *f)
{
    pfvm_value *x = in_(f, "x", PFVM_FLOAT, "2,3,4"), *a, *b;
    int64_t p1[3] = {1, 0, 2}, p2[3] = {1, 2, 0}, id[3] = {0, 1, 2};
    a = nd(f, "Transpose", "a", 1, x)->outputs[0];
    pfvm_node_set_attr_ints(a->producer, "perm", p1, 3, &f->st);
    a = nd(f, "Transpose", "a2", 1, a)->outputs[0]; /* undoes a */
    pfvm_node_set_attr_ints(a->producer, "perm", p1, 3, &f->st);
    a = nd(f, "Transpose", "a3", 1, a)->outputs[0]; /* identity */
    pfvm_node_set_attr_ints(a->producer, "perm", id, 3, &f->st);
    out_(f, op(f, "Neg", "oa", 1, a, NULL, NULL));
    b = nd(f, "Transpose", "b", 1, x)->outputs[0];
    pfvm_node_set_attr_ints(b->producer, "perm", p2, 3, &f->st);
    b = nd(f, "Transpose", "b2", 1, b)->outputs[0]; /* composes to [2,0,1] */
    pfvm_node_set_attr_ints(b->producer, "perm", p2, 3, &f->st);
    out_(f, op(f, "Neg", "ob", 1, b, NULL, NULL));
}

static void test_transposes(void)
{
    fx o;
    pfvm_node *t;
    const int64_t *perm;
    run_case(build_transposes, 17, PIPELINE, "", &o);
    t = find(o.g, "Transpose");
    CHECK(count(o.g, "Transpose") == 1 && t && t->inputs[0] == pfvm_graph_find(o.g, "x"));
    CHECK(t && pfvm_node_attr_ints(t, "perm", &perm) == 3 && perm[0] == 2 && perm[1] == 0 && perm[2] == 1);
    fx_free(&o);
}

/* ---- fold -------------------------------------------------------------------------- */

/* Constant arithmetic, a Constant node, shape arithmetic of a static
 * shape, and what must not fold: random generators and big expansions. */
static void build_fold(fx *f)
{
    pfvm_value *x = in_(f, "x", PFVM_FLOAT, "2,3,4"), *k, *s, *c, *r;
    int64_t d3[1] = {3}, big[2] = {2000, 2000};
    pfvm_node *cn;
    float v3[3] = {1, 2, 3};
    k = op(f, "Add", "k", 2, cf(f, "a", 1, d3, v3), cfs(f, "b", 4.0f), NULL);
    cn = nd(f, "Constant", "kc", 0);
    {
        pfvm_attr *a = pfvm_node_add_attr(cn, "value_float", PFVM_ATTR_FLOAT, &f->st);
        a->f = 0.5f;
    }
    k = op(f, "Mul", "k2", 2, k, cn->outputs[0], NULL);
    out_(f, op(f, "Add", "y", 2, x, op(f, "Unsqueeze", "k3", 2, k, ci1(f, "ax1", 1), NULL), NULL));
    /* static shape arithmetic: Reshape(x, Concat(Shape(x)[0], [-1])) */
    scalar_indices(f);
    s = op(f, "Shape", "s", 1, x, NULL, NULL);
    s = op(f, "Gather", "s0", 2, s, pfvm_graph_find(f->g, "zero"), NULL);
    s = op(f, "Unsqueeze", "s1", 2, s, pfvm_graph_find(f->g, "axes0"), NULL);
    c = nd(f, "Concat", "sc", 2, s, ci1(f, "m1", -1))->outputs[0];
    pfvm_node_set_attr_int(c->producer, "axis", 0, &f->st);
    r = op(f, "Reshape", "r", 2, x, c, NULL);
    out_(f, op(f, "Neg", "rn", 1, r, NULL, NULL));
    /* not folded: RandomNormal (nondeterministic) read by a Mul by 0 */
    r = nd(f, "RandomNormal", "rnd", 0)->outputs[0];
    pfvm_node_set_attr_ints(r->producer, "shape", d3, 1, &f->st);
    out_(f, op(f, "Mul", "rz", 2, r, cfs(f, "zero_f", 0.0f), NULL));
    /* not folded: 4M elements from a 2-element shape */
    r = op(f, "ConstantOfShape", "cos", 1, ci(f, "big", 2, big), NULL, NULL);
    out_(f, op(f, "ReduceSum", "sum", 1, r, NULL, NULL));
}

static void test_fold(void)
{
    fx o;
    run_case(build_fold, 17, PIPELINE, "", &o);
    CHECK(count(o.g, "Constant") == 0 && count(o.g, "Shape") == 0 && count(o.g, "Concat") == 0 &&
          count(o.g, "Gather") == 0 && count(o.g, "Unsqueeze") == 0);
    CHECK(count(o.g, "Add") == 1 && count(o.g, "Mul") == 1 && count(o.g, "Reshape") == 1);
    CHECK(count(o.g, "RandomNormal") == 1 && count(o.g, "ConstantOfShape") == 1);
    /* the folded Reshape target is the constant [2, -1] */
    CHECK(find(o.g, "Reshape") && find(o.g, "Reshape")->inputs[1]->init);
    fx_free(&o);
}

/* An initializer that is also a graph input may be replaced by the
 * caller: not a constant. */
static void build_overridable(fx *f)
{
    pfvm_value *x = in_(f, "x", PFVM_FLOAT, "3"), *w = cfs(f, "w", 2.0f);
    pfvm_graph_add_input(f->g, w, &f->st);
    out_(f, op(f, "Mul", "y", 2, x, op(f, "Add", "w1", 2, w, cfs(f, "b", 1.0f), NULL), NULL));
}

static void test_overridable(void)
{
    fx o;
    run_case(build_overridable, 17, PIPELINE, "", &o);
    CHECK(count(o.g, "Add") == 1);
    fx_free(&o);
}

/* ---- cse and dce ----------------------------------------------------------------- */

static void build_cse(fx *f)
{
    pfvm_value *x = in_(f, "x", PFVM_FLOAT, "4"), *a, *b, *c, *d;
    int64_t d4[1] = {4};
    a = op(f, "Relu", "a", 1, x, NULL, NULL);
    b = op(f, "Relu", "b", 1, x, NULL, NULL);
    /* equal initializers by content */
    c = op(f, "Add", "c", 2, a, cf(f, "w1", 1, d4, NULL), NULL);
    d = op(f, "Add", "d", 2, b, cf(f, "w1_copy", 1, d4, ((float *)pfvm_graph_find(f->g, "w1")->init->data)), NULL);
    out_(f, op(f, "Mul", "y", 2, c, d, NULL));
    /* different attributes: both stay */
    a = nd(f, "LeakyRelu", "l1", 1, x)->outputs[0];
    pfvm_node_set_attr_float(a->producer, "alpha", 0.1f, &f->st);
    b = nd(f, "LeakyRelu", "l2", 1, x)->outputs[0];
    pfvm_node_set_attr_float(b->producer, "alpha", 0.2f, &f->st);
    out_(f, op(f, "Add", "l", 2, a, b, NULL));
    /* random generators are never merged */
    a = nd(f, "RandomUniformLike", "r1", 1, x)->outputs[0];
    b = nd(f, "RandomUniformLike", "r2", 1, x)->outputs[0];
    out_(f, op(f, "Sub", "r", 2, a, b, NULL));
    /* two graph outputs made by equal nodes: the names survive */
    out_(f, op(f, "Neg", "o1", 1, x, NULL, NULL));
    out_(f, op(f, "Neg", "o2", 1, x, NULL, NULL));
}

static void test_cse(void)
{
    fx o;
    fx_init(&o, 17);
    build_cse(&o);
    CHECK(pfvm_optimize(o.m, "cse,dce", NULL, &o.st) == PFVM_OK);
    CHECK(count(o.g, "Relu") == 1 && count(o.g, "Add") == 2 && pfvm_graph_num_initializers(o.g) == 1);
    CHECK(count(o.g, "LeakyRelu") == 2 && count(o.g, "RandomUniformLike") == 2);
    CHECK(pfvm_graph_find(o.g, "o1") && pfvm_graph_find(o.g, "o2") && pfvm_graph_num_outputs(o.g) == 5);
    CHECK(pfvm_graph_verify(o.g, &o.st) == PFVM_OK);
    fx_free(&o);
}

static void build_dce(fx *f)
{
    pfvm_value *x = in_(f, "x", PFVM_FLOAT, "4"), *c = in_(f, "c", PFVM_BOOL, ""), *r, *t, *e, *unused;
    pfvm_node *nif;
    pfvm_graph *then_g, *else_g;
    pfvm_attr *a;
    unused = op(f, "Exp", "dead1", 1, x, NULL, NULL);
    op(f, "Add", "dead2", 2, unused, cfs(f, "w_dead", 3.0f), NULL);
    op(f, "RandomNormalLike", "dead_rnd", 1, x, NULL, NULL);
    cfs(f, "w_unused", 1.0f);
    /* If whose branches compute something unused */
    r = pfvm_graph_value(f->g, "r", &f->st);
    nif = pfvm_graph_add_node(f->g, "If", "", "if", &c, 1, &r, 1, &f->st);
    then_g = pfvm_graph_new(f->m, f->g, "then", &f->st);
    else_g = pfvm_graph_new(f->m, f->g, "else", &f->st);
    then_g->owner = else_g->owner = nif;
    t = pfvm_graph_value(then_g, "t", &f->st);
    pfvm_graph_add_node(then_g, "Neg", "", "t", &x, 1, &t, 1, &f->st);
    e = pfvm_graph_value(then_g, "tdead", &f->st);
    pfvm_graph_add_node(then_g, "Exp", "", "tdead", &x, 1, &e, 1, &f->st);
    pfvm_graph_add_output(then_g, t, &f->st);
    e = pfvm_graph_value(else_g, "e", &f->st);
    pfvm_graph_add_node(else_g, "Relu", "", "e", &x, 1, &e, 1, &f->st);
    pfvm_graph_add_output(else_g, e, &f->st);
    a = pfvm_node_add_attr(nif, "then_branch", PFVM_ATTR_GRAPH, &f->st);
    a->g = then_g;
    a = pfvm_node_add_attr(nif, "else_branch", PFVM_ATTR_GRAPH, &f->st);
    a->g = else_g;
    out_(f, r);
}

static void test_dce(void)
{
    fx o;
    pfvm_node *nif;
    run_case(build_dce, 17, "dce", "", &o);
    nif = find(o.g, "If");
    CHECK(pfvm_graph_num_nodes(o.g) == 1 && nif && pfvm_graph_num_initializers(o.g) == 0 && pfvm_graph_num_inputs(o.g) == 2);
    CHECK(nif && pfvm_graph_num_nodes(pfvm_node_attr(nif, "then_branch")->g) == 1);
    fx_free(&o);
}

/* ---- bnfold ------------------------------------------------------------------------ */

static void bn(fx *f, const char *name, pfvm_value *x, int64_t C, pfvm_value **out)
{
    char nm[64];
    pfvm_value *ins[5];
    int j;
    const char *parts[4] = {"scale", "bias", "mean", "var"};
    ins[0] = x;
    for (j = 0; j < 4; j++) {
        float v[16];
        int64_t k;
        for (k = 0; k < C; k++)
            v[k] = j == 3 ? (float)(0.5 + 0.1 * (double)k) : (float)(0.3 * (double)(j + 1) - 0.07 * (double)k);
        snprintf(nm, sizeof nm, "%s_%s", name, parts[j]);
        ins[j + 1] = cf(f, nm, 1, &C, v);
    }
    *out = pfvm_graph_value(f->g, name, &f->st);
    pfvm_graph_add_node(f->g, "BatchNormalization", "", name, ins, 5, out, 1, &f->st);
}

static void build_bn(fx *f)
{
    pfvm_value *x = in_(f, "x", PFVM_FLOAT, "n,3,5,5"), *y, *z, *m;
    int64_t wd[4] = {4, 3, 3, 3}, b4[1] = {4}, gd[2] = {6, 4}, gt[2] = {4, 6};
    pfvm_node *g;
    /* Conv + BN */
    y = op(f, "Conv", "conv", 3, x, cf(f, "W", 4, wd, NULL), cf(f, "B", 1, b4, NULL));
    bn(f, "bn1", y, 4, &z);
    out_(f, op(f, "Relu", "o1", 1, z, NULL, NULL));
    /* Gemm (transB, beta 0.5) + BN on [n, 4] */
    m = in_(f, "m", PFVM_FLOAT, "n,6");
    g = nd(f, "Gemm", "gemm", 3, m, cf(f, "G", 2, gt, NULL), cf(f, "GC", 1, b4, NULL));
    pfvm_node_set_attr_int(g, "transB", 1, &f->st);
    pfvm_node_set_attr_float(g, "beta", 0.5f, &f->st);
    bn(f, "bn2", g->outputs[0], 4, &z);
    out_(f, op(f, "Relu", "o2", 1, z, NULL, NULL));
    /* MatMul + Add + BN on [n, 4] */
    y = op(f, "MatMul", "mm", 2, m, cf(f, "M", 2, gd, NULL), NULL);
    y = op(f, "Add", "mmb", 2, y, cf(f, "MB", 1, b4, NULL), NULL);
    bn(f, "bn3", y, 4, &z);
    out_(f, op(f, "Relu", "o3", 1, z, NULL, NULL));
    /* Conv whose output something else reads: not folded */
    y = op(f, "Conv", "conv2", 2, x, pfvm_graph_find(f->g, "W"), NULL);
    bn(f, "bn4", y, 4, &z);
    out_(f, op(f, "Add", "o4", 2, z, y, NULL));
}

static void test_bnfold(void)
{
    fx o;
    run_case(build_bn, 17, PIPELINE, "n=2", &o);
    CHECK(count(o.g, "BatchNormalization") == 1 && count(o.g, "Conv") == 2 && count(o.g, "Gemm") == 1 &&
          count(o.g, "MatMul") == 1 && count(o.g, "Add") == 2);
    fx_free(&o);
    /* opset 9 (no training_mode, spatial gone) folds too */
    run_case(build_bn, 13, "bnfold,dce", "n=3", &o);
    CHECK(count(o.g, "BatchNormalization") == 1);
    fx_free(&o);
}

/* ---- compose: an exported LayerNorm becomes LayerNormalization ---------------------- */

/* PyTorch's LayerNorm below opset 17: ReduceMean, Sub, Pow, ReduceMean,
 * Add eps, Sqrt, Div [, Mul gamma [, Add beta]] over the last axis (axis:
 * the means' axis; extra: d gets a third reader). */
static pfvm_value *ln_pattern(fx *f, const char *tag, pfvm_value *x, int64_t axis, int affine, int extra)
{
    char nm[64];
    int64_t c = 8;
    pfvm_value *m, *d, *v, *y, *k;
    pfvm_node *n;
    /* each constant is made before the node that reads it: LN_NAME's one
     * buffer cannot serve two names in one call's arguments (their order
     * of evaluation is unspecified: aarch64's gcc named the Pow node after
     * its exponent) */
#define LN_NAME(s) (snprintf(nm, sizeof nm, "%s_%s", tag, s), nm)
    n = nd(f, "ReduceMean", LN_NAME("mean"), 1, x);
    pfvm_node_set_attr_ints(n, "axes", &axis, 1, &f->st);
    m = n->outputs[0];
    d = op(f, "Sub", LN_NAME("d"), 2, x, m, NULL);
    k = cfs(f, LN_NAME("two"), 2.0f);
    v = op(f, "Pow", LN_NAME("sq"), 2, d, k, NULL);
    n = nd(f, "ReduceMean", LN_NAME("var"), 1, v);
    pfvm_node_set_attr_ints(n, "axes", &axis, 1, &f->st);
    k = cfs(f, LN_NAME("eps"), 1e-5f);
    v = op(f, "Add", LN_NAME("veps"), 2, n->outputs[0], k, NULL);
    v = op(f, "Sqrt", LN_NAME("std"), 1, v, NULL, NULL);
    y = op(f, "Div", LN_NAME("norm"), 2, d, v, NULL);
    if (affine) {
        k = cf(f, LN_NAME("gamma"), 1, &c, NULL);
        y = op(f, "Mul", LN_NAME("scaled"), 2, k, y, NULL);
    }
    if (affine > 1) {
        k = cf(f, LN_NAME("beta"), 1, &c, NULL);
        y = op(f, "Add", LN_NAME("shifted"), 2, y, k, NULL);
    }
    if (extra)
        out_(f, op(f, "Relu", LN_NAME("dr"), 1, d, NULL, NULL));
#undef LN_NAME
    return y;
}

static void build_ln(fx *f)
{
    pfvm_value *x = in_(f, "x", PFVM_FLOAT, "n,5,8");
    out_(f, op(f, "Relu", "o1", 1, ln_pattern(f, "full", x, -1, 2, 0), NULL, NULL));
    out_(f, ln_pattern(f, "plain", x, 2, 0, 0));   /* no gamma: Scale of ones */
    out_(f, ln_pattern(f, "scaled", x, 2, 1, 0));  /* gamma, no beta */
    out_(f, ln_pattern(f, "axis1", x, 1, 2, 0));   /* the means over axis 1: kept */
    out_(f, ln_pattern(f, "shared", x, -1, 2, 1)); /* d read by a third node: kept */
}

/* At opset 12 Unsqueeze (axes attribute) has another definition than at 17: no raise. */
static void build_ln_unsqueeze(fx *f)
{
    int64_t ax = 0;
    pfvm_value *x = in_(f, "x", PFVM_FLOAT, "n,5,8");
    pfvm_node *u = nd(f, "Unsqueeze", "u", 1, x);
    pfvm_node_set_attr_ints(u, "axes", &ax, 1, &f->st);
    out_(f, u->outputs[0]);
    out_(f, ln_pattern(f, "full", x, -1, 2, 0));
}

static void test_compose_ln(void)
{
    fx o;
    pfvm_node *ln;
    run_case(build_ln, 14, "fold,compose,dce", "n=3", &o);
    /* three composed; the two kept patterns keep their 2 ReduceMeans each */
    CHECK(count(o.g, "LayerNormalization") == 3 && count(o.g, "ReduceMean") == 4 && count(o.g, "Sqrt") == 2 &&
          count(o.g, "Pow") == 2 && count(o.g, "Mul") == 2 && pfvm_model_opset(o.m, "") == 17);
    ln = find(o.g, "LayerNormalization");
    CHECK(ln && pfvm_node_attr_int(ln, "axis", 0) == -1 && fabs(pfvm_node_attr_float(ln, "epsilon", 0) - 1e-5) < 1e-9);
    fx_free(&o);
    /* not in the default pipeline */
    run_case(build_ln, 14, NULL, "n=2", &o);
    CHECK(count(o.g, "LayerNormalization") == 0 && pfvm_model_opset(o.m, "") == 14);
    fx_free(&o);
    run_case(build_ln_unsqueeze, 12, "compose,dce", "n=2", &o);
    CHECK(count(o.g, "LayerNormalization") == 0 && count(o.g, "ReduceMean") == 2 && pfvm_model_opset(o.m, "") == 12);
    fx_free(&o);
}

/* ---- graph outputs and the pass manager -------------------------------------------- */

/* An Identity from a graph input to a graph output must stay (nothing to
 * forward to without another Identity): the passes end. */
static void build_io_identity(fx *f)
{
    pfvm_value *x = in_(f, "x", PFVM_FLOAT, "2");
    out_(f, op(f, "Identity", "y", 1, x, NULL, NULL));
    out_(f, op(f, "Identity", "z", 1, op(f, "Relu", "r", 1, x, NULL, NULL), NULL, NULL));
}

static void test_io_identity(void)
{
    fx o;
    run_case(build_io_identity, 17, PIPELINE, "", &o);
    CHECK(count(o.g, "Identity") == 1 && count(o.g, "Relu") == 1);
    CHECK(!strcmp(o.g->outputs[0]->name, "y") && !strcmp(o.g->outputs[1]->name, "z") &&
          o.g->outputs[1]->producer && !strcmp(o.g->outputs[1]->producer->op_type, "Relu"));
    fx_free(&o);
}

static void test_pass_manager(void)
{
    fx o;
    pfvm_opt_report r;
    int i;
    fx_init(&o, 17);
    build_neutral(&o);
    CHECK(pfvm_optimize(o.m, "fold,nonsense", &r, &o.st) != PFVM_OK && strstr(o.st.msg, "nonsense") &&
          strstr(o.st.msg, "bnfold"));
    CHECK(pfvm_optimize(o.m, NULL, &r, &o.st) == PFVM_OK);
    CHECK(r.n >= 6 && !strcmp(r.runs[0].name, "qlinear") && !strcmp(r.runs[1].name, "fold") &&
          !strcmp(r.runs[2].name, "simplify") && !strcmp(r.runs[3].name, "cse") && !strcmp(r.runs[4].name, "bnfold") &&
          !strcmp(r.runs[5].name, "dce"));
    for (i = 0; i < r.n; i++)
        CHECK(r.runs[i].stats.nodes_after <= r.runs[i].stats.nodes_before + r.runs[i].stats.rewritten);
    fx_free(&o);
}

/* ---- model fixtures ---------------------------------------------------------------- */

/* After the default passes: no Reshape whose output shape is its input's,
 * and no Shape arithmetic left where the target could be a constant. On
 * static models every Reshape target is an initializer; on dynamic ones
 * at most `runtime` Reshapes keep a computed target. */
static void check_model(const char *path, int runtime)
{
    pfvm_status st;
    pfvm_model *m = pfvm_onnx_load_file(path, 0, &st);
    int i, computed = 0, shapes_before = 0;
    if (!m) {
        printf("skipped %s: %s\n", path, st.msg);
        return;
    }
    shapes_before = count(m->graph, "Shape");
    CHECK_MSG(pfvm_optimize(m, NULL, NULL, &st) == PFVM_OK, "%s: %s", path, st.msg);
    for (i = 0; i < pfvm_graph_num_nodes(m->graph); i++) {
        const pfvm_node *n = m->graph->nodes[i];
        const pfvm_shape *a = &n->inputs[0]->type.shape, *b = &n->outputs[0]->type.shape;
        int d, same = a->rank == b->rank && a->rank >= 0;
        if (strcmp(n->op_type, "Reshape"))
            continue;
        for (d = 0; same && d < a->rank; d++)
            same = pfvm_sym_proven_eq(a->dims[d], b->dims[d]);
        CHECK_MSG(!same, "%s: Reshape '%s' keeps its input's shape", path, n->name);
        if (!n->inputs[1]->init)
            computed++;
    }
    CHECK_MSG(computed <= runtime, "%s: %d Reshapes with a computed target", path, computed);
    if (!runtime)
        CHECK_MSG(count(m->graph, "Shape") == 0 && count(m->graph, "Concat") == 0 && count(m->graph, "Unsqueeze") == 0,
                  "%s: shape arithmetic left", path);
    else
        CHECK_MSG(count(m->graph, "Shape") < shapes_before, "%s: shape arithmetic not reduced", path);
    pfvm_model_free(m);
}

static void test_models(void)
{
    check_model("tests/models/transformer_encoder/model.onnx", 0);
    check_model("tests/models/gpt_small/model.onnx", 0);
    /* [batch*seq, 32] -> [seq, batch, 32] needs the dims at run time */
    check_model("tests/shapes/encoder_dynamic.onnx", 2);
    check_model("tests/shapes/gpt_dynamic.onnx", 2);
}

int main(void)
{
    test_symbolic_reshape();
    test_reshape_runtime_kept();
    test_reshape_chains();
    test_neutral();
    test_noops();
    test_not_noops();
    test_transposes();
    test_fold();
    test_overridable();
    test_cse();
    test_dce();
    test_bnfold();
    test_compose_ln();
    test_io_identity();
    test_pass_manager();
    test_models();
    return CHECK_END();
}
