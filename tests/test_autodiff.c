/* Autodiff (src/passes/autodiff.c and every operator's gradient builder):
 * each builder is checked against central finite differences of
 * f(x) = sum_j <y_j, w_j> for fixed random weights w_j (the seeds), in
 * float64 where the operator's kernel has it and float32 otherwise, on
 * random inputs away from kinks. Also: sum_to emits a reduction only where
 * symbolic shapes cannot prove it away, gradient accumulation, zero
 * gradients for unreachable parameters, the loss form, the optimizers, and
 * errors that name the node. */
#include "exec/exec.h"
#include "onnx/onnx_io.h"
#include "ops/ops_common.h"
#include "passes/autodiff.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

/* ---- random numbers ------------------------------------------------------------------ */


/* An allocator that frees but never gives memory. */
static void *refuse_realloc(void *user, void *ptr, size_t size)
{
    (void)user;
    if (!size)
        free(ptr);
    return NULL;
}

static uint64_t rng = 0x1234567887654321ull;

static double urand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0;
}

/* ---- a model under construction ------------------------------------------------------ */

#define TB_MAX 24

typedef struct tb {
    const char *label;
    pfvm_model *m;
    pfvm_graph *g;
    pfvm_status st;
    pfvm_tensor *ins[TB_MAX];   /* data of the graph inputs, in order */
    int n_ins;
    const char *wrt[TB_MAX];
    int n_wrt;
    int n_nodes;
    double rtol, atol;
    int verbose;
} tb;

static void tb_begin(tb *t, const char *label, int opset)
{
    memset(t, 0, sizeof *t);
    t->label = label;
    t->m = pfvm_model_new(&t->st);
    t->g = pfvm_graph_new(t->m, NULL, "g", &t->st);
    pfvm_model_set_opset(t->m, "", opset, &t->st);
    t->rtol = 1e-5;
    t->atol = 1e-6;
}

/* Parses "2,3,n:4": constant dims, and named dims (symbol n, bound to 4
 * when running). */
static int tb_shape(tb *t, const char *s, pfvm_shape *shape, int64_t *dims)
{
    int r = 0;
    while (*s) {
        char name[32];
        int k = 0;
        while (*s && *s != ',' && *s != ':' && k < 31)
            name[k++] = *s++;
        name[k] = 0;
        if (*s == ':') {
            s++;
            dims[r] = strtoll(s, (char **)&s, 10);
            shape->dims[r] = pfvm_sym_var(t->m->syms, name, 1);
        } else {
            dims[r] = strtoll(name, NULL, 10);
            shape->dims[r] = pfvm_sym_const(t->m->syms, dims[r]);
        }
        r++;
        if (*s == ',')
            s++;
    }
    shape->rank = r;
    return r;
}

static void tb_fill(pfvm_tensor *x, double lo, double hi)
{
    int64_t i, n = pfvm_tensor_numel(x);
    for (i = 0; i < n; i++) {
        double v = lo + (hi - lo) * urand();
        /* away from the kink at 0 of relu-like functions */
        if (lo < 0 && hi > 0 && fabs(v) < 0.05 * (hi - lo))
            v += v < 0 ? -0.1 * (hi - lo) : 0.1 * (hi - lo);
        if (x->dtype == PFVM_FLOAT)
            ((float *)x->data)[i] = (float)v;
        else if (x->dtype == PFVM_DOUBLE)
            ((double *)x->data)[i] = v;
        else
            pfvm_red_store(x, i, floor(v));
    }
}

/* A graph input with random data in [lo, hi]; differentiated when diff. */
static pfvm_value *tb_in(tb *t, const char *name, pfvm_dtype dt, const char *shape, double lo, double hi, int diff)
{
    pfvm_value *v = pfvm_graph_value(t->g, name, &t->st);
    int64_t dims[PFVM_MAX_RANK];
    int r;
    v->type.kind = PFVM_KIND_TENSOR;
    v->type.dtype = dt;
    r = tb_shape(t, shape, &v->type.shape, dims);
    v->has_type_info = 1;
    pfvm_graph_add_input(t->g, v, &t->st);
    t->ins[t->n_ins] = pfvm_tensor_new(dt, r, dims, &t->st);
    tb_fill(t->ins[t->n_ins], lo, hi);
    t->n_ins++;
    if (diff)
        t->wrt[t->n_wrt++] = v->name;
    return v;
}

/* A graph input holding the given integers. */
static pfvm_value *tb_in_ints(tb *t, const char *name, pfvm_dtype dt, const char *shape, const int64_t *vals)
{
    pfvm_value *v = tb_in(t, name, dt, shape, 0, 0, 0);
    pfvm_tensor *x = t->ins[t->n_ins - 1];
    int64_t i;
    for (i = 0; i < pfvm_tensor_numel(x); i++)
        pfvm_red_store(x, i, (double)vals[i]);
    return v;
}

/* An int64 initializer (shapes, axes, pads...). */
static pfvm_value *tb_ints(tb *t, const char *name, const int64_t *vals, int n)
{
    pfvm_value *v = pfvm_graph_value(t->g, name, &t->st);
    int64_t dim = n;
    pfvm_tensor *x = pfvm_model_tensor(t->m, PFVM_INT64, 1, &dim, NULL, &t->st);
    memcpy(x->data, vals, sizeof(int64_t) * (size_t)n);
    pfvm_graph_add_init(t->g, v, x, &t->st);
    return v;
}

/* A float initializer of fixed random values (a parameter). */
static pfvm_value *tb_param(tb *t, const char *name, pfvm_dtype dt, const char *shape, double lo, double hi)
{
    pfvm_value *v = pfvm_graph_value(t->g, name, &t->st);
    pfvm_shape s;
    int64_t dims[PFVM_MAX_RANK];
    int r = tb_shape(t, shape, &s, dims);
    pfvm_tensor *x = pfvm_model_tensor(t->m, dt, r, dims, NULL, &t->st);
    tb_fill(x, lo, hi);
    pfvm_graph_add_init(t->g, v, x, &t->st);
    return v;
}

/* A node with n_out new outputs (names y<k>). */
static pfvm_node *tb_node(tb *t, const char *op, pfvm_value **in, int n_in, int n_out)
{
    pfvm_value *outs[8];
    char name[32];
    int i;
    for (i = 0; i < n_out; i++) {
        snprintf(name, sizeof name, "t%d", t->n_nodes * 8 + i);
        outs[i] = pfvm_graph_value(t->g, name, &t->st);
    }
    snprintf(name, sizeof name, "n%d", t->n_nodes++);
    return pfvm_graph_add_node(t->g, op, "", name, in, n_in, outs, n_out, &t->st);
}

static void tb_out(tb *t, pfvm_value *v)
{
    pfvm_graph_add_output(t->g, v, &t->st);
}

/* One node whose outputs are all graph outputs. */
static pfvm_node *tb_op(tb *t, const char *op, pfvm_value **in, int n_in, int n_out)
{
    pfvm_node *n = tb_node(t, op, in, n_in, n_out);
    int i;
    for (i = 0; n && i < n_out; i++)
        tb_out(t, n->outputs[i]);
    return n;
}

static void tb_ints_attr(pfvm_node *n, const char *name, const int64_t *v, int count)
{
    pfvm_node_set_attr_ints(n, name, v, count, NULL);
}

static int64_t tb_count_op(const pfvm_graph *g, const char *op, int from)
{
    int i, c = 0;
    for (i = from; i < pfvm_graph_num_nodes(g); i++)
        if (!strcmp(g->nodes[i]->op_type, op))
            c++;
    return c;
}

/* sum_j <y_j, w_j> over the float outputs y_j, read from the executor. */
static double tb_objective(pfvm_exec *e, int n_y, pfvm_tensor *const *w)
{
    double f = 0;
    int j;
    for (j = 0; j < n_y; j++) {
        const pfvm_tensor *y = pfvm_exec_output(e, j);
        int64_t i, n;
        if (!w[j])
            continue;
        n = pfvm_tensor_numel(y);
        for (i = 0; i < n; i++)
            f += pfvm_tensor_get_f64(y, i) * pfvm_tensor_get_f64(w[j], i);
    }
    return f;
}

static void tb_set(pfvm_tensor *x, int64_t i, double v)
{
    pfvm_red_store(x, i, v);
}

/* Differentiates the graph's float outputs w.r.t. t->wrt with random
 * seeds and compares with central differences. Frees the model. */
static void tb_check(tb *t)
{
    pfvm_autodiff_opts o;
    pfvm_autodiff_result res;
    pfvm_exec *e = NULL;
    pfvm_tensor *w[TB_MAX], *all[2 * TB_MAX], *out_shape[TB_MAX], out_shape_buf[TB_MAX];
    int n_y = pfvm_graph_num_outputs(t->g), n_all, i, j, k, bad = 0;
    char what[160];
    memset(w, 0, sizeof w);
    if (t->st.code) {
        CHECK_MSG(0, "%s: building the model: %s", t->label, t->st.msg);
        pfvm_model_free(t->m);
        return;
    }
    /* the forward outputs' shapes, for the seeds */
    memset(out_shape, 0, sizeof out_shape);
    e = pfvm_exec_new(t->m, NULL, &t->st);
    if (!e || pfvm_exec_bind(e, pfvm_tensors_const(t->ins), t->n_ins, &t->st) || pfvm_exec_run(e, &t->st)) {
        CHECK_MSG(0, "%s: running the forward graph: %s", t->label, t->st.msg);
        goto done;
    }
    for (j = 0; j < n_y && j < TB_MAX; j++) {
        const pfvm_tensor *y = pfvm_exec_output(e, j);
        if (y && y->kind == PFVM_KIND_TENSOR) {
            out_shape[j] = &out_shape_buf[j];
            memset(out_shape[j], 0, sizeof *out_shape[j]);
            pfvm_tensor_set_shape(out_shape[j], y->rank, y->dims, NULL);
        }
    }
    pfvm_exec_free(e);
    e = NULL;
    memset(&o, 0, sizeof o);
    o.wrt = t->wrt;
    o.n_wrt = t->n_wrt;
    if (pfvm_autodiff(t->m, NULL, &o, &res, &t->st)) {
        CHECK_MSG(0, "%s: autodiff: %s", t->label, t->st.msg);
        goto done;
    }
    if (t->verbose)
        pfvm_graph_dump(t->g, stderr);
    /* seeds: one per float output, in output order (inputs after ours) */
    n_all = t->n_ins;
    for (i = 0; i < t->n_ins; i++)
        all[i] = t->ins[i];
    e = pfvm_exec_new(t->m, NULL, &t->st);
    if (!e) {
        CHECK_MSG(0, "%s: exec: %s", t->label, t->st.msg);
        goto done;
    }
    for (k = 0; k < res.n_seeds; k++) {
        for (j = 0; j < n_y; j++)
            if (t->g->outputs[j] == res.ys[k])
                break;
        if (j == n_y || !out_shape[j]) {
            CHECK_MSG(0, "%s: no forward shape for the seed '%s'", t->label, res.seeds[k]->name);
            goto done;
        }
        all[n_all] = pfvm_tensor_new(res.seeds[k]->type.dtype, out_shape[j]->rank, out_shape[j]->dims, &t->st);
        tb_fill(all[n_all], -1, 1);
        w[j] = all[n_all];
        n_all++;
    }
    if (pfvm_exec_bind(e, pfvm_tensors_const(all), n_all, &t->st) || pfvm_exec_run(e, &t->st)) {
        CHECK_MSG(0, "%s: running the training graph: %s", t->label, t->st.msg);
        goto free_seeds;
    }
    {
        double h_rel = 1e-6, *ans[TB_MAX];
        int64_t n;
        memset(ans, 0, sizeof ans);
        /* every analytic gradient first: the finite differences rerun the graph */
        for (k = 0; k < res.n_wrt && k < TB_MAX && !bad; k++) {
            const pfvm_tensor *gt = NULL;
            pfvm_tensor *x = NULL;
            for (i = 0; i < t->n_ins; i++)
                if (pfvm_exec_input(e, i) == res.wrt[k])
                    x = t->ins[i];
            for (j = 0; j < pfvm_exec_num_outputs(e); j++)
                if (pfvm_exec_output_value(e, j) == res.grads[k])
                    gt = pfvm_exec_output(e, j);
            if (!x || !gt) {
                CHECK_MSG(0, "%s: gradient of '%s' not found", t->label, res.wrt[k]->name);
                bad = 1;
                break;
            }
            n = pfvm_tensor_numel(x);
            if (pfvm_tensor_numel(gt) != n || gt->rank != x->rank) {
                CHECK_MSG(0, "%s: gradient of '%s' has %lld elements, not %lld", t->label, res.wrt[k]->name,
                          (long long)pfvm_tensor_numel(gt), (long long)n);
                bad = 1;
                break;
            }
            ans[k] = (double *)malloc(sizeof(double) * (size_t)(n + 1));
            for (i = 0; i < n; i++)
                ans[k][i] = pfvm_tensor_get_f64(gt, i);
        }
        for (k = 0; k < res.n_wrt && k < TB_MAX && !bad; k++) {
            pfvm_tensor *x = NULL;
            double *an = ans[k];
            for (i = 0; i < t->n_ins; i++)
                if (pfvm_exec_input(e, i) == res.wrt[k])
                    x = t->ins[i];
            n = pfvm_tensor_numel(x);
            h_rel = x->dtype == PFVM_DOUBLE ? 1e-6 : 1e-3;
            for (i = 0; i < n && !bad; i++) {
                double x0 = pfvm_tensor_get_f64(x, i), h = h_rel * (fabs(x0) > 1 ? fabs(x0) : 1), fp, fm, num;
                tb_set(x, i, x0 + h);
                h = pfvm_tensor_get_f64(x, i) - x0;
                if (pfvm_exec_bind(e, pfvm_tensors_const(all), n_all, &t->st) || pfvm_exec_run(e, &t->st))
                    break;
                fp = tb_objective(e, n_y, w);
                tb_set(x, i, x0 - h);
                if (pfvm_exec_bind(e, pfvm_tensors_const(all), n_all, &t->st) || pfvm_exec_run(e, &t->st))
                    break;
                fm = tb_objective(e, n_y, w);
                tb_set(x, i, x0);
                num = (fp - fm) / (2 * h);
                if (!(fabs(an[i] - num) <= t->atol + t->rtol * fabs(num))) {
                    snprintf(what, sizeof what, "%s: d/d%s[%lld]: autodiff %.9g, finite differences %.9g", t->label,
                             res.wrt[k]->name, (long long)i, an[i], num);
                    CHECK_MSG(0, "%s", what);
                    bad = 1;
                }
            }
            if (t->st.code) {
                CHECK_MSG(0, "%s: %s", t->label, t->st.msg);
                bad = 1;
            }
        }
        for (k = 0; k < TB_MAX; k++)
            free(ans[k]);
        if (!bad)
            CHECK(1);
    }
free_seeds:
    for (i = t->n_ins; i < n_all; i++)
        pfvm_tensor_free(all[i]);
done:
    pfvm_exec_free(e);
    for (i = 0; i < t->n_ins; i++)
        pfvm_tensor_free(t->ins[i]);
    pfvm_model_free(t->m);
}

/* ---- element-wise --------------------------------------------------------------------- */

static void unary_at(const char *op, int opset, double lo, double hi, const char *sattr, const char *sval)
{
    pfvm_dtype dts[2] = {PFVM_DOUBLE, PFVM_FLOAT};
    int d;
    for (d = 0; d < 2; d++) {
        tb t;
        pfvm_value *x;
        pfvm_node *n;
        char label[64];
        snprintf(label, sizeof label, "%s %s (%s)", op, sval ? sval : "", d ? "float" : "double");
        tb_begin(&t, label, opset);
        if (d) {
            t.rtol = 2e-2;
            t.atol = 2e-3;
        }
        x = tb_in(&t, "x", dts[d], "2,3", lo, hi, 1);
        n = tb_op(&t, op, &x, 1, 1);
        if (sattr)
            pfvm_node_set_attr_string(n, sattr, sval, NULL);
        tb_check(&t);
    }
}

/* Gelu's values: x * Phi(x) at 1 and -0.5, and the tanh form. */
static void gelu_values(void)
{
    static const char *modes[2] = {"none", "tanh"};
    static const double want[2][2] = {{0.8413447460685429, -0.15426876936299344}, {0.8411919906082768, -0.15428599017485606}};
    int m;
    for (m = 0; m < 2; m++) {
        tb t;
        pfvm_value *x;
        pfvm_node *n;
        pfvm_exec *e;
        tb_begin(&t, "Gelu values", 20);
        x = tb_in(&t, "x", PFVM_DOUBLE, "2", 0, 0, 0);
        ((double *)t.ins[0]->data)[0] = 1;
        ((double *)t.ins[0]->data)[1] = -0.5;
        n = tb_op(&t, "Gelu", &x, 1, 1);
        pfvm_node_set_attr_string(n, "approximate", modes[m], NULL);
        e = pfvm_exec_new(t.m, NULL, &t.st);
        CHECK(e && !pfvm_exec_bind(e, pfvm_tensors_const(t.ins), 1, &t.st) && !pfvm_exec_run(e, &t.st));
        if (e) {
            const double *y = (const double *)pfvm_exec_output(e, 0)->data;
            CHECK_MSG(fabs(y[0] - want[m][0]) < 1e-12 && fabs(y[1] - want[m][1]) < 1e-12, "gelu %s: %.17g %.17g", modes[m],
                      y[0], y[1]);
        }
        pfvm_exec_free(e);
        pfvm_tensor_free(t.ins[0]);
        pfvm_model_free(t.m);
    }
}

static void unary(const char *op, double lo, double hi, const char *attr, double av)
{
    pfvm_dtype dts[2] = {PFVM_DOUBLE, PFVM_FLOAT};
    int d;
    for (d = 0; d < 2; d++) {
        tb t;
        pfvm_value *x;
        pfvm_node *n;
        char label[64];
        snprintf(label, sizeof label, "%s (%s)", op, d ? "float" : "double");
        tb_begin(&t, label, 18);
        if (d) {
            t.rtol = 2e-2;
            t.atol = 2e-3;
        }
        x = tb_in(&t, "x", dts[d], "2,3", lo, hi, 1);
        n = tb_op(&t, op, &x, 1, 1);
        if (attr)
            pfvm_node_set_attr_float(n, attr, (float)av, NULL);
        tb_check(&t);
    }
}

static void binary(const char *op, const char *sa, const char *sb, double lo, double hi, double lo2, double hi2)
{
    tb t;
    pfvm_value *in[2];
    char label[64];
    snprintf(label, sizeof label, "%s [%s] [%s]", op, sa, sb);
    tb_begin(&t, label, 18);
    in[0] = tb_in(&t, "a", PFVM_DOUBLE, sa, lo, hi, 1);
    in[1] = tb_in(&t, "b", PFVM_DOUBLE, sb, lo2, hi2, 1);
    tb_op(&t, op, in, 2, 1);
    tb_check(&t);
}

static void test_elementwise(void)
{
    unary("Abs", -2, 2, NULL, 0);
    unary("Neg", -2, 2, NULL, 0);
    unary("Exp", -2, 2, NULL, 0);
    unary("Log", 0.5, 3, NULL, 0);
    unary("Sqrt", 0.5, 3, NULL, 0);
    unary("Reciprocal", 0.5, 3, NULL, 0);
    unary("Floor", 0.1, 0.9, NULL, 0);
    unary("Ceil", 0.1, 0.9, NULL, 0);
    unary("Round", 0.1, 0.4, NULL, 0);
    unary("Sign", 0.5, 3, NULL, 0);
    unary("Sin", -2, 2, NULL, 0);
    unary("Cos", -2, 2, NULL, 0);
    unary("Tan", -1, 1, NULL, 0);
    unary("Asin", -0.8, 0.8, NULL, 0);
    unary("Acos", -0.8, 0.8, NULL, 0);
    unary("Atan", -2, 2, NULL, 0);
    unary("Sinh", -2, 2, NULL, 0);
    unary("Cosh", -2, 2, NULL, 0);
    unary("Tanh", -2, 2, NULL, 0);
    unary("Asinh", -2, 2, NULL, 0);
    unary("Acosh", 1.2, 3, NULL, 0);
    unary("Atanh", -0.8, 0.8, NULL, 0);
    unary("Erf", -2, 2, NULL, 0);
    unary("Sigmoid", -3, 3, NULL, 0);
    unary("Relu", -2, 2, NULL, 0);
    unary("LeakyRelu", -2, 2, "alpha", 0.1);
    unary("Elu", -2, 2, "alpha", 0.7);
    unary("Selu", -2, 2, NULL, 0);
    unary("Celu", -2, 2, "alpha", 1.5);
    unary("HardSigmoid", -4, 4, NULL, 0);
    unary("HardSwish", -5, 5, NULL, 0);
    unary("Softplus", -3, 3, NULL, 0);
    unary("Softsign", -3, 3, NULL, 0);
    unary("Mish", -3, 3, NULL, 0);
    unary("ThresholdedRelu", -2, 2, "alpha", 0.5);
    unary("Shrink", -2, 2, "lambd", 0.7);
    unary_at("Gelu", 20, -3, 3, NULL, NULL);
    unary_at("Gelu", 20, -3, 3, "approximate", "tanh");
    gelu_values();
    binary("Add", "2,3", "2,3", -2, 2, -2, 2);
    binary("Add", "2,3", "3", -2, 2, -2, 2);
    binary("Add", "2,1", "1,3", -2, 2, -2, 2);
    binary("Sub", "2,3", "1", -2, 2, -2, 2);
    binary("Mul", "2,3", "2,3", -2, 2, -2, 2);
    binary("Mul", "4,1,3", "2,1", -2, 2, -2, 2);
    binary("Div", "2,3", "3", -2, 2, 0.5, 2);
    binary("Pow", "2,3", "2,3", 0.5, 2, -2, 2);
    binary("Pow", "2,3", "", 0.5, 2, 1, 3);
    binary("PRelu", "2,3", "3", -2, 2, 0.1, 0.5);
    binary("Max", "2,3", "2,3", -2, 2, -2, 2);
    binary("Min", "2,3", "3", -2, 2, -2, 2);
    binary("Sum", "2,3", "3", -2, 2, -2, 2);
    binary("Mean", "2,3", "2,1", -2, 2, -2, 2);
    {
        tb t;
        pfvm_value *in[3];
        pfvm_node *n;
        tb_begin(&t, "Mod fmod", 18);
        in[0] = tb_in(&t, "a", PFVM_DOUBLE, "2,3", 1, 5, 1);
        in[1] = tb_in(&t, "b", PFVM_DOUBLE, "3", 0.7, 1.3, 1);
        n = tb_op(&t, "Mod", in, 2, 1);
        pfvm_node_set_attr_int(n, "fmod", 1, NULL);
        tb_check(&t);
        tb_begin(&t, "Max of three", 18);
        in[0] = tb_in(&t, "a", PFVM_DOUBLE, "2,3", -2, 2, 1);
        in[1] = tb_in(&t, "b", PFVM_DOUBLE, "3", -2, 2, 1);
        in[2] = tb_in(&t, "c", PFVM_DOUBLE, "2,1", -2, 2, 1);
        tb_op(&t, "Max", in, 3, 1);
        tb_check(&t);
        tb_begin(&t, "Sum of three", 18);
        in[0] = tb_in(&t, "a", PFVM_DOUBLE, "2,3", -2, 2, 1);
        in[1] = tb_in(&t, "b", PFVM_DOUBLE, "3", -2, 2, 1);
        in[2] = tb_in(&t, "c", PFVM_DOUBLE, "2,1", -2, 2, 1);
        tb_op(&t, "Sum", in, 3, 1);
        tb_check(&t);
        tb_begin(&t, "Where", 18);
        {
            static const int64_t c[6] = {1, 0, 1, 1, 0, 0};
            in[0] = tb_in_ints(&t, "c", PFVM_BOOL, "2,3", c);
        }
        in[1] = tb_in(&t, "a", PFVM_DOUBLE, "2,3", -2, 2, 1);
        in[2] = tb_in(&t, "b", PFVM_DOUBLE, "3", -2, 2, 1);
        tb_op(&t, "Where", in, 3, 1);
        tb_check(&t);
        tb_begin(&t, "Clip (inputs)", 18);
        in[0] = tb_in(&t, "x", PFVM_DOUBLE, "2,3", -2, 2, 1);
        in[1] = tb_in(&t, "lo", PFVM_DOUBLE, "", -0.5, -0.5, 1);
        in[2] = tb_in(&t, "hi", PFVM_DOUBLE, "", 0.7, 0.7, 1);
        tb_op(&t, "Clip", in, 3, 1);
        tb_check(&t);
        tb_begin(&t, "Clip (attributes)", 9);
        in[0] = tb_in(&t, "x", PFVM_FLOAT, "2,3", -2, 2, 1);
        t.rtol = 1e-2;
        t.atol = 1e-3;
        n = tb_op(&t, "Clip", in, 1, 1);
        pfvm_node_set_attr_float(n, "min", -0.5f, NULL);
        pfvm_node_set_attr_float(n, "max", 0.6f, NULL);
        tb_check(&t);
        tb_begin(&t, "Cast float to double", 18);
        t.rtol = 1e-2;
        t.atol = 1e-3;
        in[0] = tb_in(&t, "x", PFVM_FLOAT, "2,3", -2, 2, 1);
        n = tb_op(&t, "Cast", in, 1, 1);
        pfvm_node_set_attr_int(n, "to", PFVM_DOUBLE, NULL);
        tb_check(&t);
    }
}

/* ---- linear algebra -------------------------------------------------------------------- */

static void matmul(const char *sa, const char *sb)
{
    tb t;
    pfvm_value *in[2];
    char label[64];
    snprintf(label, sizeof label, "MatMul [%s] [%s]", sa, sb);
    tb_begin(&t, label, 18);
    in[0] = tb_in(&t, "a", PFVM_DOUBLE, sa, -1, 1, 1);
    in[1] = tb_in(&t, "b", PFVM_DOUBLE, sb, -1, 1, 1);
    tb_op(&t, "MatMul", in, 2, 1);
    tb_check(&t);
}

static void gemm(int opset, int ta, int tb_, const char *sc, double alpha, double beta)
{
    tb t;
    pfvm_value *in[3];
    pfvm_node *n;
    char label[64];
    snprintf(label, sizeof label, "Gemm opset %d transA %d transB %d C [%s]", opset, ta, tb_, sc ? sc : "-");
    tb_begin(&t, label, opset);
    in[0] = tb_in(&t, "a", PFVM_DOUBLE, ta ? "4,3" : "3,4", -1, 1, 1);
    in[1] = tb_in(&t, "b", PFVM_DOUBLE, tb_ ? "5,4" : "4,5", -1, 1, 1);
    if (sc)
        in[2] = tb_in(&t, "c", PFVM_DOUBLE, sc, -1, 1, 1);
    n = tb_op(&t, "Gemm", in, sc ? 3 : 2, 1);
    pfvm_node_set_attr_int(n, "transA", ta, NULL);
    pfvm_node_set_attr_int(n, "transB", tb_, NULL);
    pfvm_node_set_attr_float(n, "alpha", (float)alpha, NULL);
    pfvm_node_set_attr_float(n, "beta", (float)beta, NULL);
    tb_check(&t);
}

static void test_linalg(void)
{
    matmul("3,4", "4,5");
    matmul("2,3,4", "4,5");
    matmul("2,1,3,4", "3,4,2");
    matmul("4", "4,5");
    matmul("2,3,4", "4");
    matmul("4", "4");
    gemm(13, 0, 0, "5", 1, 1);
    gemm(13, 1, 0, "3,5", 0.5, 2);
    gemm(13, 0, 1, "3,1", 1, 1);
    gemm(13, 1, 1, NULL, 1.5, 1);
    gemm(9, 1, 1, "5", 1.5, 0.5);
}

/* ---- shapes and data movement ------------------------------------------------------------ */

static void test_tensor(void)
{
    tb t;
    pfvm_value *in[6], *v;
    pfvm_node *n;
    static const int64_t shape34[2] = {3, 4}, axes0[1] = {0}, axes1[1] = {1};

    tb_begin(&t, "Identity", 18);
    in[0] = tb_in(&t, "x", PFVM_DOUBLE, "2,3", -1, 1, 1);
    tb_op(&t, "Identity", in, 1, 1);
    tb_check(&t);

    tb_begin(&t, "Reshape", 18);
    in[0] = tb_in(&t, "x", PFVM_DOUBLE, "2,6", -1, 1, 1);
    in[1] = tb_ints(&t, "s", shape34, 2);
    tb_op(&t, "Reshape", in, 2, 1);
    tb_check(&t);

    tb_begin(&t, "Reshape (symbolic)", 18);
    in[0] = tb_in(&t, "x", PFVM_DOUBLE, "n:2,6", -1, 1, 1);
    {
        static const int64_t s[2] = {-1, 3};
        in[1] = tb_ints(&t, "s", s, 2);
    }
    tb_op(&t, "Reshape", in, 2, 1);
    tb_check(&t);

    tb_begin(&t, "Flatten", 18);
    in[0] = tb_in(&t, "x", PFVM_DOUBLE, "2,3,2", -1, 1, 1);
    n = tb_op(&t, "Flatten", in, 1, 1);
    pfvm_node_set_attr_int(n, "axis", 2, NULL);
    tb_check(&t);

    tb_begin(&t, "Squeeze", 18);
    in[0] = tb_in(&t, "x", PFVM_DOUBLE, "2,1,3", -1, 1, 1);
    in[1] = tb_ints(&t, "a", axes1, 1);
    tb_op(&t, "Squeeze", in, 2, 1);
    tb_check(&t);

    tb_begin(&t, "Unsqueeze (opset 11)", 11);
    in[0] = tb_in(&t, "x", PFVM_DOUBLE, "2,3", -1, 1, 1);
    n = tb_op(&t, "Unsqueeze", in, 1, 1);
    tb_ints_attr(n, "axes", axes0, 1);
    tb_check(&t);

    tb_begin(&t, "Transpose", 18);
    in[0] = tb_in(&t, "x", PFVM_DOUBLE, "2,3,4", -1, 1, 1);
    n = tb_op(&t, "Transpose", in, 1, 1);
    {
        static const int64_t perm[3] = {1, 2, 0};
        tb_ints_attr(n, "perm", perm, 3);
    }
    tb_check(&t);

    tb_begin(&t, "Concat", 18);
    in[0] = tb_in(&t, "a", PFVM_DOUBLE, "2,3", -1, 1, 1);
    in[1] = tb_in(&t, "b", PFVM_DOUBLE, "2,1", -1, 1, 1);
    in[2] = tb_in(&t, "c", PFVM_DOUBLE, "2,2", -1, 1, 1);
    n = tb_op(&t, "Concat", in, 3, 1);
    pfvm_node_set_attr_int(n, "axis", -1, NULL);
    tb_check(&t);

    tb_begin(&t, "Concat (symbolic)", 18);
    in[0] = tb_in(&t, "a", PFVM_DOUBLE, "n:2,3", -1, 1, 1);
    in[1] = tb_in(&t, "b", PFVM_DOUBLE, "m:3,3", -1, 1, 1);
    in[2] = tb_in(&t, "c", PFVM_DOUBLE, "1,3", -1, 1, 1);
    n = tb_op(&t, "Concat", in, 3, 1);
    pfvm_node_set_attr_int(n, "axis", 0, NULL);
    tb_check(&t);

    tb_begin(&t, "Split (one output unread)", 18);
    in[0] = tb_in(&t, "x", PFVM_DOUBLE, "2,6", -1, 1, 1);
    {
        static const int64_t sp[3] = {1, 3, 2};
        in[1] = tb_ints(&t, "s", sp, 3);
    }
    n = tb_node(&t, "Split", in, 2, 3);
    pfvm_node_set_attr_int(n, "axis", 1, NULL);
    tb_out(&t, n->outputs[0]);
    tb_out(&t, n->outputs[2]);
    tb_check(&t);

    tb_begin(&t, "Slice", 18);
    in[0] = tb_in(&t, "x", PFVM_DOUBLE, "4,5", -1, 1, 1);
    {
        static const int64_t st[2] = {1, -4}, en[2] = {3, 100}, ax[2] = {0, 1};
        in[1] = tb_ints(&t, "s", st, 2);
        in[2] = tb_ints(&t, "e", en, 2);
        in[3] = tb_ints(&t, "a", ax, 2);
    }
    tb_op(&t, "Slice", in, 4, 1);
    tb_check(&t);

    tb_begin(&t, "Slice (steps)", 18);
    in[0] = tb_in(&t, "x", PFVM_DOUBLE, "4,5", -1, 1, 1);
    {
        static const int64_t st[2] = {3, 0}, en[2] = {-100, 5}, ax[2] = {0, 1}, sp[2] = {-2, 2};
        in[1] = tb_ints(&t, "s", st, 2);
        in[2] = tb_ints(&t, "e", en, 2);
        in[3] = tb_ints(&t, "a", ax, 2);
        in[4] = tb_ints(&t, "p", sp, 2);
    }
    tb_op(&t, "Slice", in, 5, 1);
    tb_check(&t);

    tb_begin(&t, "Slice (opset 9)", 9);
    in[0] = tb_in(&t, "x", PFVM_DOUBLE, "4,5", -1, 1, 1);
    n = tb_op(&t, "Slice", in, 1, 1);
    {
        static const int64_t st[1] = {1}, en[1] = {-1};
        tb_ints_attr(n, "starts", st, 1);
        tb_ints_attr(n, "ends", en, 1);
        tb_ints_attr(n, "axes", axes1, 1);
    }
    tb_check(&t);

    {
        static const int64_t idx[5] = {2, 0, 2, -1, 1};
        int opsets[2] = {13, 18}, i;
        for (i = 0; i < 2; i++) {
            tb_begin(&t, opsets[i] == 13 ? "Gather axis 0 (one-hot)" : "Gather axis 0 (ScatterND)", opsets[i]);
            in[0] = tb_in(&t, "x", PFVM_DOUBLE, "4,3", -1, 1, 1);
            in[1] = tb_in_ints(&t, "i", PFVM_INT64, "5", idx);
            tb_op(&t, "Gather", in, 2, 1);
            tb_check(&t);
        }
        tb_begin(&t, "Gather axis 1, 2-D indices", 18);
        in[0] = tb_in(&t, "x", PFVM_DOUBLE, "2,4,3", -1, 1, 1);
        in[1] = tb_in_ints(&t, "i", PFVM_INT64, "2,2", idx);
        n = tb_op(&t, "Gather", in, 2, 1);
        pfvm_node_set_attr_int(n, "axis", 1, NULL);
        tb_check(&t);
        tb_begin(&t, "Gather scalar index", 18);
        in[0] = tb_in(&t, "x", PFVM_DOUBLE, "4,3", -1, 1, 1);
        in[1] = tb_in_ints(&t, "i", PFVM_INT64, "", idx);
        n = tb_op(&t, "Gather", in, 2, 1);
        pfvm_node_set_attr_int(n, "axis", 1, NULL);
        tb_check(&t);
    }

    tb_begin(&t, "Expand", 18);
    in[0] = tb_in(&t, "x", PFVM_DOUBLE, "3,1", -1, 1, 1);
    {
        static const int64_t s[3] = {2, 3, 4};
        in[1] = tb_ints(&t, "s", s, 3);
    }
    tb_op(&t, "Expand", in, 2, 1);
    tb_check(&t);

    tb_begin(&t, "Tile", 18);
    in[0] = tb_in(&t, "x", PFVM_DOUBLE, "2,3", -1, 1, 1);
    {
        static const int64_t r[2] = {3, 2};
        in[1] = tb_ints(&t, "r", r, 2);
    }
    tb_op(&t, "Tile", in, 2, 1);
    tb_check(&t);

    {
        static const char *modes[4] = {"constant", "edge", "reflect", "wrap"};
        int i;
        for (i = 0; i < 4; i++) {
            static const int64_t pads[4] = {1, 2, 2, 1}, crop[4] = {-1, 2, 1, -2};
            char label[64];
            snprintf(label, sizeof label, "Pad %s", modes[i]);
            tb_begin(&t, label, 18);
            in[0] = tb_in(&t, "x", PFVM_DOUBLE, "3,4", -1, 1, 1);
            in[1] = tb_ints(&t, "p", pads, 4);
            n = tb_op(&t, "Pad", in, 2, 1);
            pfvm_node_set_attr_string(n, "mode", modes[i], NULL);
            tb_check(&t);
            if (i)
                continue;
            tb_begin(&t, "Pad (crops)", 18);
            in[0] = tb_in(&t, "x", PFVM_DOUBLE, "3,4", -1, 1, 1);
            in[1] = tb_ints(&t, "p", crop, 4);
            tb_op(&t, "Pad", in, 2, 1);
            tb_check(&t);
            tb_begin(&t, "Pad (opset 2)", 2);
            in[0] = tb_in(&t, "x", PFVM_FLOAT, "3,4", -1, 1, 1);
            t.rtol = 1e-2;
            t.atol = 1e-3;
            n = tb_op(&t, "Pad", in, 1, 1);
            tb_ints_attr(n, "pads", pads, 4);
            tb_check(&t);
            tb_begin(&t, "Pad (value differentiated)", 18);
            in[0] = tb_in(&t, "x", PFVM_DOUBLE, "3,4", -1, 1, 1);
            in[1] = tb_ints(&t, "p", crop, 4);
            in[2] = tb_in(&t, "v", PFVM_DOUBLE, "", -1, 1, 1);
            tb_op(&t, "Pad", in, 3, 1);
            tb_check(&t);
            tb_begin(&t, "Pad (pads at run time)", 18);
            in[0] = tb_in(&t, "x", PFVM_DOUBLE, "3,4", -1, 1, 1);
            in[1] = tb_in_ints(&t, "p", PFVM_INT64, "4", pads);
            in[2] = tb_in(&t, "v", PFVM_DOUBLE, "", -1, 1, 1);
            tb_op(&t, "Pad", in, 3, 1);
            tb_check(&t);
        }
    }

    tb_begin(&t, "Tile (repeats at run time)", 18);
    in[0] = tb_in(&t, "x", PFVM_DOUBLE, "2,3", -1, 1, 1);
    {
        static const int64_t r[2] = {2, 3};
        in[1] = tb_in_ints(&t, "r", PFVM_INT64, "2", r);
    }
    tb_op(&t, "Tile", in, 2, 1);
    tb_check(&t);

    tb_begin(&t, "Trilu", 18);
    in[0] = tb_in(&t, "x", PFVM_DOUBLE, "3,4", -1, 1, 1);
    n = tb_op(&t, "Trilu", in, 1, 1);
    pfvm_node_set_attr_int(n, "upper", 0, NULL);
    tb_check(&t);

    tb_begin(&t, "Dropout (training, seeded)", 18);
    in[0] = tb_in(&t, "x", PFVM_DOUBLE, "3,4", -1, 1, 1);
    in[1] = tb_in(&t, "r", PFVM_DOUBLE, "", 0.3, 0.3, 0);
    {
        static const int64_t one[1] = {1};
        in[2] = tb_in_ints(&t, "m", PFVM_BOOL, "", one);
    }
    n = tb_op(&t, "Dropout", in, 3, 1);
    pfvm_node_set_attr_int(n, "seed", 7, NULL);
    tb_check(&t);

    tb_begin(&t, "Dropout (inference)", 18);
    in[0] = tb_in(&t, "x", PFVM_DOUBLE, "3,4", -1, 1, 1);
    tb_op(&t, "Dropout", in, 1, 1);
    tb_check(&t);

    /* a chain: accumulation through two readers */
    tb_begin(&t, "x*x + sin(x)", 18);
    in[0] = tb_in(&t, "x", PFVM_DOUBLE, "3", -1, 1, 1);
    in[1] = in[0];
    n = tb_node(&t, "Mul", in, 2, 1);
    v = n->outputs[0];
    n = tb_node(&t, "Sin", in, 1, 1);
    in[2] = v;
    in[3] = n->outputs[0];
    tb_op(&t, "Add", in + 2, 2, 1);
    tb_check(&t);
}

/* ---- torch's gradients (tests/grad, made by tools/make_grad_fixtures.py) ------------------- */

static void torch_fixture(const char *name)
{
    char path[512], wrt_buf[4096], *names[64], *s;
    pfvm_status st;
    pfvm_model *m;
    pfvm_autodiff_opts o;
    pfvm_autodiff_result res;
    pfvm_exec *e = NULL;
    pfvm_tensor *ins[2] = {NULL, NULL};
    FILE *f;
    int n_wrt = 0, i, n_out, bad = 0;
    size_t len;
    snprintf(path, sizeof path, "tests/grad/%s/wrt.txt", name);
    f = fopen(path, "rb");
    CHECK_MSG(f != NULL, "%s: no wrt.txt", name);
    if (!f)
        return;
    len = fread(wrt_buf, 1, sizeof wrt_buf - 1, f);
    fclose(f);
    wrt_buf[len] = 0;
    for (s = wrt_buf; *s && n_wrt < 64;) {
        char *e2 = s + strcspn(s, ",\n");
        int end = *e2 == 0;
        *e2 = 0;
        if (*s)
            names[n_wrt++] = s;
        s = end ? e2 : e2 + 1;
    }
    snprintf(path, sizeof path, "tests/grad/%s/model.onnx", name);
    m = pfvm_onnx_load_file(path, 0, &st);
    CHECK_MSG(m != NULL, "%s: %s", name, st.msg);
    if (!m)
        return;
    memset(&o, 0, sizeof o);
    o.wrt = (const char *const *)names;
    o.n_wrt = n_wrt;
    if (pfvm_autodiff(m, NULL, &o, &res, &st)) {
        CHECK_MSG(0, "%s: autodiff: %s", name, st.msg);
        goto done;
    }
    for (i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "tests/grad/%s/test_data_set_0/input_%d.pb", name, i);
        ins[i] = pfvm_onnx_read_value_file(path, PFVM_KIND_TENSOR, &st);
        CHECK_MSG(ins[i] != NULL, "%s: %s", path, st.msg);
        if (!ins[i])
            goto done;
    }
    e = pfvm_exec_new(m, NULL, &st);
    if (!e || pfvm_exec_bind(e, pfvm_tensors_const(ins), 2, &st) || pfvm_exec_run(e, &st)) {
        CHECK_MSG(0, "%s: %s", name, st.msg);
        goto done;
    }
    n_out = pfvm_exec_num_outputs(e);
    CHECK_MSG(n_out == n_wrt + 1, "%s: %d outputs for %d parameters", name, n_out, n_wrt);
    for (i = 0; i < n_out && i <= n_wrt; i++) {
        const pfvm_tensor *got = pfvm_exec_output(e, i);
        pfvm_tensor *want;
        int64_t j, n;
        double worst = 0;
        snprintf(path, sizeof path, "tests/grad/%s/test_data_set_0/output_%d.pb", name, i);
        want = pfvm_onnx_read_value_file(path, PFVM_KIND_TENSOR, &st);
        if (!want || pfvm_tensor_numel(want) != pfvm_tensor_numel(got)) {
            CHECK_MSG(0, "%s: output %d: %s", name, i, want ? "element counts differ" : st.msg);
            pfvm_tensor_free(want);
            bad = 1;
            continue;
        }
        n = pfvm_tensor_numel(want);
        for (j = 0; j < n; j++) {
            double a = pfvm_tensor_get_f64(got, j), b = pfvm_tensor_get_f64(want, j);
            double err = fabs(a - b) / (1e-5 + 1e-3 * fabs(b));
            if (!(err <= worst))
                worst = err;
        }
        if (!(worst <= 1)) {
            CHECK_MSG(0, "%s: %s differs from torch's (%.2f times the tolerance)", name,
                      i ? res.wrt[i - 1]->name : "the output", worst);
            bad = 1;
        }
        pfvm_tensor_free(want);
    }
    if (!bad)
        CHECK(1);
done:
    pfvm_tensor_free(ins[0]);
    pfvm_tensor_free(ins[1]);
    pfvm_exec_free(e);
    pfvm_model_free(m);
}

static void test_torch(void)
{
    torch_fixture("mlp");
    torch_fixture("cnn_bn_train");
    torch_fixture("transformer_encoder");
}

/* ---- every model of the ONNX node suite ------------------------------------------------ */

/* Differentiates each node-suite model with respect to its floating-point
 * inputs: autodiff either succeeds, and the training graph verifies and
 * runs on the case's inputs (seeds of ones), or fails with a message that
 * names the node. Never a crash (the ASan build runs this too). */
static void test_node_suite(void)
{
    const char *dir = getenv("PFVM_TESTDATA") ? getenv("PFVM_TESTDATA") : "/usr/share/libonnx-testdata/data";
    char path[1024];
    DIR *d;
    struct dirent *de;
    int ok = 0, refused = 0, bad = 0;
    snprintf(path, sizeof path, "%s/node", dir);
    if (!(d = opendir(path)))
        return;
    while ((de = readdir(d))) {
        pfvm_status st;
        pfvm_model *m;
        pfvm_exec *e = NULL;
        pfvm_tensor *ins[32], *seeds[32], *all[64];
        const char *wrt[32];
        pfvm_autodiff_opts o;
        pfvm_autodiff_result res;
        int n_in = 0, n_wrt = 0, i, j, n_all, good = 1;
        if (de->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "%s/node/%s/model.onnx", dir, de->d_name);
        if (!(m = pfvm_onnx_load_file(path, 0, &st)))
            continue;
        memset(seeds, 0, sizeof seeds);
        for (i = 0; i < pfvm_graph_num_inputs(m->graph) && n_in < 32 && good; i++) {
            pfvm_value *v = m->graph->inputs[i];
            if (v->init)
                continue;
            snprintf(path, sizeof path, "%s/node/%s/test_data_set_0/input_%d.pb", dir, de->d_name, n_in);
            ins[n_in] = pfvm_onnx_read_value_file(path, v->type.kind, &st);
            if (!ins[n_in] || ins[n_in]->kind != PFVM_KIND_TENSOR) {
                pfvm_tensor_free(ins[n_in]);
                good = 0;
                break;
            }
            if (pfvm_dtype_is_float(ins[n_in]->dtype))
                wrt[n_wrt++] = v->name;
            n_in++;
        }
        if (!good || !n_wrt || pfvm_graph_num_outputs(m->graph) > 32)
            goto next;
        /* the outputs' shapes, for the seeds */
        e = pfvm_exec_new(m, NULL, &st);
        if (!e || pfvm_exec_bind(e, pfvm_tensors_const(ins), n_in, &st) || pfvm_exec_run(e, &st))
            goto next;
        for (j = 0; j < pfvm_exec_num_outputs(e); j++) {
            const pfvm_tensor *y = pfvm_exec_output(e, j);
            if (y->kind == PFVM_KIND_TENSOR && pfvm_dtype_is_float(y->dtype)) {
                seeds[j] = pfvm_tensor_new(y->dtype, y->rank, y->dims, &st);
                for (i = 0; seeds[j] && i < pfvm_tensor_numel(y); i++)
                    pfvm_red_store(seeds[j], i, 1.0);
            }
        }
        pfvm_exec_free(e);
        e = NULL;
        memset(&o, 0, sizeof o);
        o.wrt = wrt;
        o.n_wrt = n_wrt;
        if (pfvm_autodiff(m, NULL, &o, &res, &st)) {
            if (!strstr(st.msg, "node '") && !strstr(st.msg, "gradient")) {
                CHECK_MSG(0, "%s: autodiff failed without naming the node: %s", de->d_name, st.msg);
                bad++;
            } else {
                refused++;
            }
            goto next;
        }
        if (pfvm_graph_verify(m->graph, &st)) {
            CHECK_MSG(0, "%s: the training graph does not verify: %s", de->d_name, st.msg);
            bad++;
            goto next;
        }
        n_all = n_in;
        for (i = 0; i < n_in; i++)
            all[i] = ins[i];
        for (i = 0; i < res.n_seeds; i++) {
            for (j = 0; j < pfvm_graph_num_outputs(m->graph); j++)
                if (m->graph->outputs[j] == res.ys[i])
                    break;
            all[n_all++] = j < 32 ? seeds[j] : NULL;
        }
        e = pfvm_exec_new(m, NULL, &st);
        if (!e || pfvm_exec_bind(e, pfvm_tensors_const(all), n_all, &st) || pfvm_exec_run(e, &st)) {
            CHECK_MSG(0, "%s: the training graph does not run: %s", de->d_name, st.msg);
            bad++;
            goto next;
        }
        ok++;
    next:
        pfvm_exec_free(e);
        for (i = 0; i < n_in; i++)
            pfvm_tensor_free(ins[i]);
        for (i = 0; i < 32; i++)
            pfvm_tensor_free(seeds[i]);
        pfvm_model_free(m);
    }
    closedir(d);
    printf("node suite: %d training graphs built and run, %d refused with a message, %d bad\n", ok, refused, bad);
    CHECK(bad == 0 && ok > 600);
}

/* ---- the API: loss form, default parameters, zeros, names, optimizers, errors ------------- */

static const pfvm_tensor *find_output(pfvm_exec *e, const char *name)
{
    int j;
    for (j = 0; j < pfvm_exec_num_outputs(e); j++)
        if (!strcmp(pfvm_exec_output_value(e, j)->name, name))
            return pfvm_exec_output(e, j);
    return NULL;
}

/* y = x @ W + b, loss = ReduceSum(y * y); U is a parameter nothing reads. */
static void api_model(tb *t, int opset)
{
    pfvm_value *in[2], *x, *W, *b, *y;
    pfvm_node *n;
    static const int64_t all[2] = {0, 1};
    tb_begin(t, "api", opset);
    x = tb_in(t, "x", PFVM_DOUBLE, "2,3", -1, 1, 0);
    W = tb_param(t, "W", PFVM_DOUBLE, "3,4", -1, 1);
    b = tb_param(t, "b", PFVM_DOUBLE, "4", -1, 1);
    tb_param(t, "U", PFVM_DOUBLE, "2", -1, 1);
    in[0] = x;
    in[1] = W;
    n = tb_node(t, "MatMul", in, 2, 1);
    in[0] = n->outputs[0];
    in[1] = b;
    n = tb_node(t, "Add", in, 2, 1);
    y = n->outputs[0];
    tb_out(t, y);
    in[0] = y;
    in[1] = y;
    n = tb_node(t, "Mul", in, 2, 1);
    in[0] = n->outputs[0];
    in[1] = tb_ints(t, "axes", all, 2);
    n = tb_node(t, "ReduceSum", in, 2, 1);
    pfvm_node_set_attr_int(n, "keepdims", 0, NULL);
    pfvm_value_rename(n->outputs[0], "loss", NULL);
    tb_out(t, n->outputs[0]);
}

static double run_loss(pfvm_exec *e, const pfvm_tensor *x, pfvm_status *st)
{
    if (pfvm_exec_bind(e, &x, 1, st) || pfvm_exec_run(e, st))
        return NAN;
    return pfvm_tensor_get_f64(find_output(e, "loss"), 0);
}

static void test_api(void)
{
    tb t;
    pfvm_autodiff_opts o;
    pfvm_autodiff_result res;
    pfvm_optimizer_opts oo;
    pfvm_exec *e;
    const pfvm_tensor *gw, *gu, *wn;
    pfvm_tensor *W;
    int i, kind;

    /* loss form, every float initializer, U unreachable */
    api_model(&t, 18);
    memset(&o, 0, sizeof o);
    o.loss = "loss";
    CHECK(pfvm_autodiff(t.m, NULL, &o, &res, &t.st) == PFVM_OK);
    CHECK(res.n_wrt == 3 && res.n_unreachable == 1 && res.n_seeds == 1);
    CHECK(res.n_wrt == 3 && !strcmp(res.grads[0]->name, "W_grad") && !strcmp(res.grads[2]->name, "U_grad"));
    CHECK(pfvm_graph_num_outputs(t.g) == 5);
    CHECK(pfvm_graph_num_inputs(t.g) == 1); /* no seed inputs with a loss */
    e = pfvm_exec_new(t.m, NULL, &t.st);
    CHECK(e != NULL);
    if (e) {
        double l0 = run_loss(e, t.ins[0], &t.st), worst = 0;
        gw = find_output(e, "W_grad");
        gu = find_output(e, "U_grad");
        CHECK(gw && gu && pfvm_tensor_numel(gu) == 2 && pfvm_tensor_get_f64(gu, 0) == 0);
        W = pfvm_graph_find(t.g, "W")->init;
        for (i = 0; gw && i < 12; i++) {
            double w0 = pfvm_tensor_get_f64(W, i), an = pfvm_tensor_get_f64(gw, i), fp, fm;
            ((double *)W->data)[i] = w0 + 1e-6;
            fp = run_loss(e, t.ins[0], &t.st);
            ((double *)W->data)[i] = w0 - 1e-6;
            fm = run_loss(e, t.ins[0], &t.st);
            ((double *)W->data)[i] = w0;
            /* the run overwrote W_grad's storage: read it again first */
            run_loss(e, t.ins[0], &t.st);
            gw = find_output(e, "W_grad");
            an = pfvm_tensor_get_f64(gw, i);
            if (fabs(an - (fp - fm) / 2e-6) > worst)
                worst = fabs(an - (fp - fm) / 2e-6);
        }
        CHECK_MSG(worst < 1e-5 && l0 == l0, "loss gradient off by %g", worst);
        pfvm_exec_free(e);
    }
    pfvm_tensor_free(t.ins[0]);
    pfvm_model_free(t.m);

    /* optimizers: one step from the initial state */
    for (kind = PFVM_OPTIMIZER_SGD; kind <= PFVM_OPTIMIZER_ADAM; kind++) {
        api_model(&t, 18);
        memset(&o, 0, sizeof o);
        o.loss = "loss";
        memset(&oo, 0, sizeof oo);
        oo.kind = (pfvm_optimizer_kind)kind;
        oo.lr = 0.1;
        CHECK(pfvm_autodiff(t.m, NULL, &o, &res, &t.st) == PFVM_OK);
        CHECK(pfvm_autodiff_optimizer(t.m, NULL, &res, &oo, &t.st) == PFVM_OK);
        CHECK_MSG(pfvm_graph_num_outputs(t.g) == (kind == PFVM_OPTIMIZER_SGD ? 8 : 15), "%d outputs",
                  pfvm_graph_num_outputs(t.g));
        e = pfvm_exec_new(t.m, NULL, &t.st);
        CHECK(e != NULL);
        if (e) {
            double worst = 0;
            run_loss(e, t.ins[0], &t.st);
            gw = find_output(e, "W_grad");
            wn = find_output(e, "W_new");
            W = pfvm_graph_find(t.g, "W")->init;
            CHECK(gw && wn && (kind == PFVM_OPTIMIZER_SGD || (find_output(e, "W_adam_m_new") && find_output(e, "adam_step_new"))));
            for (i = 0; gw && wn && i < 12; i++) {
                double gi = pfvm_tensor_get_f64(gw, i), want;
                want = pfvm_tensor_get_f64(W, i) - 0.1 * (kind == PFVM_OPTIMIZER_SGD ? gi : gi / (fabs(gi) + 1e-8));
                if (fabs(pfvm_tensor_get_f64(wn, i) - want) > worst)
                    worst = fabs(pfvm_tensor_get_f64(wn, i) - want);
            }
            CHECK_MSG(worst < 1e-9, "optimizer %d off by %g", kind, worst);
            pfvm_exec_free(e);
        }
        pfvm_tensor_free(t.ins[0]);
        pfvm_model_free(t.m);
    }

    /* the activations the backward reads: y (Add's output) for the loss's
     * Mul, not MatMul's output (Add's gradient needs nothing) */
    {
        pfvm_value *saved[8];
        int n_saved;
        api_model(&t, 18);
        memset(&o, 0, sizeof o);
        o.loss = "loss";
        CHECK(pfvm_autodiff(t.m, NULL, &o, &res, &t.st) == PFVM_OK);
        n_saved = pfvm_autodiff_saved(t.g, &res, saved, 8);
        CHECK_MSG(n_saved == 1 && saved[0] == pfvm_graph_find(t.g, "t8"), "%d saved, first '%s'", n_saved,
                  n_saved ? saved[0]->name : "");
        /* out of memory is -1, never a shorter list */
        {
            pfvm_allocator none = {refuse_realloc, NULL};
            pfvm_set_allocator(&none);
            n_saved = pfvm_autodiff_saved(t.g, &res, saved, 8);
            pfvm_set_allocator(NULL);
            CHECK_MSG(n_saved == -1, "%d saved with no memory", n_saved);
        }
        pfvm_tensor_free(t.ins[0]);
        pfvm_model_free(t.m);
    }

    /* errors name the node and the operator */
    {
        pfvm_value *x;
        tb_begin(&t, "no builder", 18);
        x = tb_in(&t, "x", PFVM_DOUBLE, "2,2", -1, 1, 1);
        tb_op(&t, "Det", &x, 1, 1);
        memset(&o, 0, sizeof o);
        o.wrt = t.wrt;
        o.n_wrt = 1;
        CHECK(pfvm_autodiff(t.m, NULL, &o, &res, &t.st) == PFVM_ERR_UNSUPPORTED);
        CHECK_MSG(strstr(t.st.msg, "'n0'") && strstr(t.st.msg, "Det") && strstr(t.st.msg, "no gradient"), "%s", t.st.msg);
        pfvm_tensor_free(t.ins[0]);
        pfvm_model_free(t.m);
        tb_begin(&t, "bad loss", 18);
        x = tb_in(&t, "x", PFVM_DOUBLE, "2,2", -1, 1, 1);
        tb_op(&t, "Exp", &x, 1, 1);
        o.loss = "t0";
        CHECK(pfvm_autodiff(t.m, NULL, &o, &res, &t.st) == PFVM_ERR_INVALID);
        CHECK_MSG(strstr(t.st.msg, "one element") != NULL, "%s", t.st.msg);
        o.loss = "nothing";
        CHECK(pfvm_autodiff(t.m, NULL, &o, &res, &t.st) == PFVM_ERR_INVALID);
        pfvm_tensor_free(t.ins[0]);
        pfvm_model_free(t.m);
    }
}

/* ---- reductions and losses ------------------------------------------------------------- */

static void reduce(const char *op, int opset, const int64_t *axes, int n_axes, int keepdims, double lo, double hi)
{
    tb t;
    pfvm_value *in[2];
    pfvm_node *n;
    char label[96];
    snprintf(label, sizeof label, "%s opset %d, %d axes, keepdims %d", op, opset, n_axes, keepdims);
    tb_begin(&t, label, opset);
    in[0] = tb_in(&t, "x", PFVM_DOUBLE, "2,3,4", lo, hi, 1);
    if (n_axes >= 0 && (opset >= 18 || (opset >= 13 && !strcmp(op, "ReduceSum")))) {
        in[1] = tb_ints(&t, "axes", axes, n_axes);
        n = tb_op(&t, op, in, 2, 1);
    } else {
        n = tb_op(&t, op, in, 1, 1);
        if (n_axes >= 0)
            tb_ints_attr(n, "axes", axes, n_axes);
    }
    pfvm_node_set_attr_int(n, "keepdims", keepdims, NULL);
    tb_check(&t);
}

static void loss(const char *op, int weights, int ignore, const char *reduction, int log_prob_out)
{
    tb t;
    pfvm_value *in[3];
    pfvm_node *n;
    char label[96];
    static const int64_t labels[6] = {1, 0, 3, 2, 3, 1};
    snprintf(label, sizeof label, "%s weights %d ignore %d %s%s", op, weights, ignore, reduction,
             log_prob_out ? " + log_prob" : "");
    tb_begin(&t, label, 13);
    in[0] = tb_in(&t, "x", PFVM_DOUBLE, "3,4,2", -2, 2, 1);
    in[1] = tb_in_ints(&t, "t", PFVM_INT64, "3,2", labels);
    if (weights)
        in[2] = tb_in(&t, "w", PFVM_DOUBLE, "4", 0.2, 2, 1);
    n = tb_op(&t, op, in, weights ? 3 : 2, log_prob_out ? 2 : 1);
    pfvm_node_set_attr_string(n, "reduction", reduction, NULL);
    if (ignore)
        pfvm_node_set_attr_int(n, "ignore_index", 3, NULL);
    tb_check(&t);
}

static void test_reduce(void)
{
    static const int64_t a1[1] = {1}, a02[2] = {0, -1}, all[3] = {0, 1, 2};
    static const char *ops[10] = {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd",
                                  "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"};
    int i;
    for (i = 0; i < 10; i++) {
        double lo = i >= 4 && i != 5 ? 0.3 : -2, hi = 2;
        reduce(ops[i], 13, a1, 1, 1, lo, hi);
        reduce(ops[i], 18, a02, 2, 0, lo, hi);
        reduce(ops[i], 11, all, -1, 0, lo, hi);
    }
    reduce("ReduceSum", 18, all, 0, 1, -1, 1);
    for (i = 0; i < 10; i++) {
        /* axes at run time */
        tb t;
        pfvm_value *in[2];
        pfvm_node *n;
        char label[96];
        double lo = i >= 4 && i != 5 ? 0.3 : -2;
        snprintf(label, sizeof label, "%s, axes at run time", ops[i]);
        tb_begin(&t, label, 18);
        in[0] = tb_in(&t, "x", PFVM_DOUBLE, "2,3,4", lo, 2, 1);
        in[1] = tb_in_ints(&t, "a", PFVM_INT64, "2", a02);
        n = tb_op(&t, ops[i], in, 2, 1);
        pfvm_node_set_attr_int(n, "keepdims", i % 2, NULL);
        tb_check(&t);
    }
    {
        tb t;
        pfvm_value *in[2];
        pfvm_node *n;
        tb_begin(&t, "CumSum reverse", 14);
        in[0] = tb_in(&t, "x", PFVM_DOUBLE, "3,4", -1, 1, 1);
        in[1] = tb_ints(&t, "a", a1, 1);
        n = tb_op(&t, "CumSum", in, 2, 1);
        pfvm_node_set_attr_int(n, "reverse", 1, NULL);
        tb_check(&t);
        tb_begin(&t, "CumSum exclusive", 14);
        in[0] = tb_in(&t, "x", PFVM_DOUBLE, "3,4", -1, 1, 1);
        in[1] = tb_ints(&t, "a", a1, 1);
        n = tb_op(&t, "CumSum", in, 2, 1);
        pfvm_node_set_attr_int(n, "exclusive", 1, NULL);
        tb_check(&t);
        tb_begin(&t, "TopK", 14);
        in[0] = tb_in(&t, "x", PFVM_DOUBLE, "3,5", -1, 1, 1);
        {
            static const int64_t k2[1] = {2};
            in[1] = tb_ints(&t, "k", k2, 1);
        }
        n = tb_node(&t, "TopK", in, 2, 2);
        tb_out(&t, n->outputs[0]);
        tb_check(&t);
    }
    for (i = 0; i < 2; i++) {
        const char *op = i ? "SoftmaxCrossEntropyLoss" : "NegativeLogLikelihoodLoss";
        loss(op, 0, 0, "mean", 0);
        loss(op, 1, 0, "mean", 0);
        loss(op, 0, 1, "mean", 0);
        loss(op, 1, 1, "sum", 0);
        loss(op, 1, 1, "none", 0);
    }
    loss("SoftmaxCrossEntropyLoss", 1, 1, "mean", 1);
}

/* ---- nn ------------------------------------------------------------------------------------ */

typedef struct win_attrs {
    const int64_t *k, *s, *d, *pads;
    int nsp;
    const char *auto_pad;
    int64_t group;
    int ceil, count_pad;
} win_attrs;

static void set_win(pfvm_node *n, const win_attrs *a, int kernel_shape)
{
    if (kernel_shape && a->k)
        tb_ints_attr(n, "kernel_shape", a->k, a->nsp);
    if (a->s)
        tb_ints_attr(n, "strides", a->s, a->nsp);
    if (a->d)
        tb_ints_attr(n, "dilations", a->d, a->nsp);
    if (a->pads)
        tb_ints_attr(n, "pads", a->pads, 2 * a->nsp);
    if (a->auto_pad)
        pfvm_node_set_attr_string(n, "auto_pad", a->auto_pad, NULL);
    if (a->group > 1)
        pfvm_node_set_attr_int(n, "group", a->group, NULL);
    if (a->ceil)
        pfvm_node_set_attr_int(n, "ceil_mode", 1, NULL);
    if (a->count_pad)
        pfvm_node_set_attr_int(n, "count_include_pad", 1, NULL);
}

static void conv(const char *label, const char *op, const char *sx, const char *sw, const char *sb, const win_attrs *a)
{
    tb t;
    pfvm_value *in[3];
    pfvm_node *n;
    tb_begin(&t, label, 18);
    in[0] = tb_in(&t, "x", PFVM_DOUBLE, sx, -1, 1, 1);
    in[1] = tb_in(&t, "w", PFVM_DOUBLE, sw, -1, 1, 1);
    if (sb)
        in[2] = tb_in(&t, "b", PFVM_DOUBLE, sb, -1, 1, 1);
    n = tb_op(&t, op, in, sb ? 3 : 2, 1);
    set_win(n, a, 0);
    tb_check(&t);
}

static void pool(const char *label, const char *op, int opset, const char *sx, const win_attrs *a)
{
    tb t;
    pfvm_value *x;
    pfvm_node *n;
    tb_begin(&t, label, opset);
    x = tb_in(&t, "x", PFVM_DOUBLE, sx, -1, 1, 1);
    n = tb_op(&t, op, &x, 1, 1);
    set_win(n, a, 1);
    tb_check(&t);
}

static void test_nn(void)
{
    static const int64_t k3[2] = {3, 3}, k2[2] = {2, 2}, s2[2] = {2, 2}, d2[2] = {2, 1}, p1[4] = {1, 1, 1, 1},
                         p12[4] = {1, 0, 2, 1}, k3_1[1] = {3}, s2_1[1] = {2}, p1_1[2] = {1, 0}, k2_3[3] = {2, 1, 2};
    win_attrs a;
    tb t;
    pfvm_value *in[6];
    pfvm_node *n;

    memset(&a, 0, sizeof a);
    a.nsp = 2;
    conv("Conv plain", "Conv", "2,3,5,5", "4,3,3,3", "4", &a);
    a.s = s2;
    a.pads = p12;
    conv("Conv stride 2, asymmetric pads", "Conv", "2,3,6,5", "4,3,3,2", "4", &a);
    a.s = NULL;
    a.pads = p1;
    a.d = d2;
    conv("Conv dilated", "Conv", "1,2,6,5", "3,2,2,3", NULL, &a);
    a.d = NULL;
    a.group = 2;
    a.s = s2;
    conv("Conv groups 2", "Conv", "2,4,5,6", "6,2,3,3", "6", &a);
    a.group = 4;
    a.pads = NULL;
    a.auto_pad = "SAME_UPPER";
    conv("Conv depthwise SAME_UPPER", "Conv", "1,4,5,5", "4,1,3,3", NULL, &a);
    memset(&a, 0, sizeof a);
    a.nsp = 1;
    a.s = s2_1;
    a.pads = p1_1;
    conv("Conv 1-D", "Conv", "2,2,7", "3,2,3", "3", &a);
    a.nsp = 3;
    a.s = NULL;
    a.pads = NULL;
    conv("Conv 3-D", "Conv", "1,2,3,4,3", "2,2,2,1,2", "2", &a);
    (void)k2_3;
    memset(&a, 0, sizeof a);
    a.nsp = 2;
    conv("ConvTranspose plain", "ConvTranspose", "2,3,3,4", "3,2,3,3", "2", &a);
    a.s = s2;
    a.pads = p12;
    conv("ConvTranspose stride 2, pads", "ConvTranspose", "1,2,3,3", "2,3,3,2", "3", &a);
    a.group = 2;
    a.pads = p1;
    a.d = d2;
    conv("ConvTranspose groups, dilated", "ConvTranspose", "1,4,3,3", "4,1,2,2", NULL, &a);
    {
        static const int64_t op1[2] = {1, 0};
        tb_begin(&t, "ConvTranspose output_padding", 18);
        in[0] = tb_in(&t, "x", PFVM_DOUBLE, "1,2,3,3", -1, 1, 1);
        in[1] = tb_in(&t, "w", PFVM_DOUBLE, "2,2,3,3", -1, 1, 1);
        n = tb_op(&t, "ConvTranspose", in, 2, 1);
        tb_ints_attr(n, "strides", s2, 2);
        tb_ints_attr(n, "output_padding", op1, 2);
        tb_check(&t);
    }
    memset(&a, 0, sizeof a);
    a.nsp = 3;
    conv("ConvTranspose 3-D", "ConvTranspose", "1,1,3,4,3", "1,2,2,3,2", NULL, &a);

    memset(&a, 0, sizeof a);
    a.nsp = 2;
    a.k = k2;
    a.s = s2;
    pool("MaxPool 2x2/2 (opset 13)", "MaxPool", 13, "2,2,4,6", &a);
    a.k = k3;
    a.pads = p1;
    pool("MaxPool 3x3/2 pad 1 (overlapping)", "MaxPool", 18, "1,2,5,6", &a);
    pool("MaxPool 3x3/2 pad 1 (overlapping, opset 13)", "MaxPool", 13, "2,3,5,6", &a);
    pool("MaxPool 3x3/2 pad 1 (overlapping, opset 9)", "MaxPool", 9, "1,2,5,6", &a);
    a.ceil = 1;
    a.pads = NULL;
    pool("MaxPool ceil_mode", "MaxPool", 18, "1,2,6,6", &a);
    pool("MaxPool ceil_mode (opset 13)", "MaxPool", 13, "1,2,6,6", &a);
    memset(&a, 0, sizeof a);
    a.nsp = 2;
    a.k = k3;
    a.s = s2;
    a.pads = p1;
    pool("AveragePool pad 1", "AveragePool", 13, "2,2,5,6", &a);
    a.count_pad = 1;
    pool("AveragePool count_include_pad", "AveragePool", 13, "2,2,5,6", &a);
    a.count_pad = 0;
    a.ceil = 1;
    a.pads = p12;
    pool("AveragePool ceil_mode", "AveragePool", 13, "1,3,6,7", &a);
    memset(&a, 0, sizeof a);
    a.nsp = 1;
    a.k = k3_1;
    a.s = s2_1;
    pool("AveragePool 1-D", "AveragePool", 13, "2,2,7", &a);
    pool("MaxPool 1-D overlapping (opset 12)", "MaxPool", 12, "2,2,7", &a);
    memset(&a, 0, sizeof a);
    pool("GlobalAveragePool", "GlobalAveragePool", 13, "2,3,4,3", &a);
    pool("GlobalMaxPool", "GlobalMaxPool", 13, "2,3,4,3", &a);

    /* normalisations */
    {
        int train, opset;
        for (opset = 13; opset <= 15; opset += 2)
            for (train = 0; train < 2; train++) {
                char label[64];
                snprintf(label, sizeof label, "BatchNormalization opset %d %s", opset, train ? "training" : "inference");
                tb_begin(&t, label, opset);
                in[0] = tb_in(&t, "x", PFVM_DOUBLE, "3,2,2,3", -1, 1, 1);
                in[1] = tb_in(&t, "s", PFVM_DOUBLE, "2", 0.5, 1.5, 1);
                in[2] = tb_in(&t, "b", PFVM_DOUBLE, "2", -1, 1, 1);
                in[3] = tb_in(&t, "m", PFVM_DOUBLE, "2", -0.5, 0.5, 1);
                in[4] = tb_in(&t, "v", PFVM_DOUBLE, "2", 0.5, 1.5, 1);
                if (train && opset >= 14) {
                    n = tb_op(&t, "BatchNormalization", in, 5, 3); /* running statistics read too */
                    pfvm_node_set_attr_int(n, "training_mode", 1, NULL);
                    pfvm_node_set_attr_float(n, "momentum", 0.7f, NULL);
                } else if (train) {
                    /* statistics outputs mean training before opset 14 */
                    n = tb_op(&t, "BatchNormalization", in, 5, 5);
                } else {
                    n = tb_op(&t, "BatchNormalization", in, 5, 1);
                }
                pfvm_node_set_attr_float(n, "epsilon", 1e-3f, NULL);
                tb_check(&t);
            }
    }
    tb_begin(&t, "LayerNormalization axis -1", 17);
    in[0] = tb_in(&t, "x", PFVM_DOUBLE, "2,3,4", -1, 1, 1);
    in[1] = tb_in(&t, "s", PFVM_DOUBLE, "4", 0.5, 1.5, 1);
    in[2] = tb_in(&t, "b", PFVM_DOUBLE, "4", -1, 1, 1);
    tb_op(&t, "LayerNormalization", in, 3, 1);
    tb_check(&t);
    tb_begin(&t, "LayerNormalization axis 1, statistics read", 17);
    in[0] = tb_in(&t, "x", PFVM_DOUBLE, "2,3,4", -1, 1, 1);
    in[1] = tb_in(&t, "s", PFVM_DOUBLE, "3,4", 0.5, 1.5, 1);
    n = tb_op(&t, "LayerNormalization", in, 2, 3);
    pfvm_node_set_attr_int(n, "axis", 1, NULL);
    pfvm_node_set_attr_int(n, "stash_type", PFVM_DOUBLE, NULL);
    tb_check(&t);
    tb_begin(&t, "LayerNormalization, float statistics", 17);
    in[0] = tb_in(&t, "x", PFVM_FLOAT, "2,3,4", -1, 1, 1);
    in[1] = tb_in(&t, "s", PFVM_FLOAT, "4", 0.5, 1.5, 1);
    t.rtol = 2e-2;
    t.atol = 2e-3;
    tb_op(&t, "LayerNormalization", in, 2, 3);
    tb_check(&t);
    tb_begin(&t, "InstanceNormalization", 13);
    in[0] = tb_in(&t, "x", PFVM_DOUBLE, "2,3,2,3", -1, 1, 1);
    in[1] = tb_in(&t, "s", PFVM_DOUBLE, "3", 0.5, 1.5, 1);
    in[2] = tb_in(&t, "b", PFVM_DOUBLE, "3", -1, 1, 1);
    tb_op(&t, "InstanceNormalization", in, 3, 1);
    tb_check(&t);
    {
        int p;
        for (p = 1; p <= 2; p++) {
            tb_begin(&t, p == 1 ? "LpNormalization p 1" : "LpNormalization p 2", 13);
            in[0] = tb_in(&t, "x", PFVM_DOUBLE, "3,4", -1, 1, 1);
            n = tb_op(&t, "LpNormalization", in, 1, 1);
            pfvm_node_set_attr_int(n, "p", p, NULL);
            pfvm_node_set_attr_int(n, "axis", 0, NULL);
            tb_check(&t);
        }
    }
    {
        static const char *ops[2] = {"Softmax", "LogSoftmax"};
        int i;
        for (i = 0; i < 2; i++) {
            char label[64];
            snprintf(label, sizeof label, "%s opset 13 axis 1", ops[i]);
            tb_begin(&t, label, 13);
            in[0] = tb_in(&t, "x", PFVM_DOUBLE, "2,3,4", -2, 2, 1);
            n = tb_op(&t, ops[i], in, 1, 1);
            pfvm_node_set_attr_int(n, "axis", 1, NULL);
            tb_check(&t);
            snprintf(label, sizeof label, "%s opset 11 (2-D coercion)", ops[i]);
            tb_begin(&t, label, 11);
            in[0] = tb_in(&t, "x", PFVM_DOUBLE, "2,3,4", -2, 2, 1);
            n = tb_op(&t, ops[i], in, 1, 1);
            pfvm_node_set_attr_int(n, "axis", 1, NULL);
            tb_check(&t);
        }
    }
}

/* ---- indexing ----------------------------------------------------------------------------- */

static void test_indexing(void)
{
    tb t;
    pfvm_value *in[3];
    pfvm_node *n;
    static const int64_t idx_e[6] = {2, 0, 1, 2, 2, 0}, idx_nd[4] = {1, 0, 0, 2}, idx_u[6] = {0, 2, 1, 3, 1, 0};
    int opset;
    for (opset = 13; opset <= 18; opset += 5) {
        char label[64];
        snprintf(label, sizeof label, "GatherElements axis 1 (opset %d)", opset);
        tb_begin(&t, label, opset);
        in[0] = tb_in(&t, "x", PFVM_DOUBLE, "2,3", -1, 1, 1);
        in[1] = tb_in_ints(&t, "i", PFVM_INT64, "2,3", idx_e);
        n = tb_op(&t, "GatherElements", in, 2, 1);
        pfvm_node_set_attr_int(n, "axis", 1, NULL);
        tb_check(&t);
    }
    tb_begin(&t, "GatherElements axis 0, fewer indices", 18);
    in[0] = tb_in(&t, "x", PFVM_DOUBLE, "3,3", -1, 1, 1);
    in[1] = tb_in_ints(&t, "i", PFVM_INT64, "2,2", idx_e);
    tb_op(&t, "GatherElements", in, 2, 1);
    tb_check(&t);
    tb_begin(&t, "ScatterElements", 18);
    in[0] = tb_in(&t, "x", PFVM_DOUBLE, "2,4", -1, 1, 1);
    in[1] = tb_in_ints(&t, "i", PFVM_INT64, "2,3", idx_u);
    in[2] = tb_in(&t, "u", PFVM_DOUBLE, "2,3", -1, 1, 1);
    n = tb_op(&t, "ScatterElements", in, 3, 1);
    pfvm_node_set_attr_int(n, "axis", 1, NULL);
    tb_check(&t);
    tb_begin(&t, "ScatterElements add", 18);
    in[0] = tb_in(&t, "x", PFVM_DOUBLE, "2,4", -1, 1, 1);
    in[1] = tb_in_ints(&t, "i", PFVM_INT64, "2,3", idx_e);
    in[2] = tb_in(&t, "u", PFVM_DOUBLE, "2,3", -1, 1, 1);
    n = tb_op(&t, "ScatterElements", in, 3, 1);
    pfvm_node_set_attr_int(n, "axis", 1, NULL);
    pfvm_node_set_attr_string(n, "reduction", "add", NULL);
    tb_check(&t);
    tb_begin(&t, "GatherND", 18);
    in[0] = tb_in(&t, "x", PFVM_DOUBLE, "2,3,2", -1, 1, 1);
    in[1] = tb_in_ints(&t, "i", PFVM_INT64, "2,2", idx_nd);
    tb_op(&t, "GatherND", in, 2, 1);
    tb_check(&t);
    tb_begin(&t, "ScatterND", 18);
    in[0] = tb_in(&t, "x", PFVM_DOUBLE, "2,3,2", -1, 1, 1);
    in[1] = tb_in_ints(&t, "i", PFVM_INT64, "2,2", idx_nd);
    in[2] = tb_in(&t, "u", PFVM_DOUBLE, "2,2", -1, 1, 1);
    tb_op(&t, "ScatterND", in, 3, 1);
    tb_check(&t);
    {
        static const char *modes[2] = {"DCR", "CRD"};
        int i;
        for (i = 0; i < 2; i++) {
            char label[64];
            snprintf(label, sizeof label, "DepthToSpace %s", modes[i]);
            tb_begin(&t, label, 13);
            in[0] = tb_in(&t, "x", PFVM_DOUBLE, "2,8,2,3", -1, 1, 1);
            n = tb_op(&t, "DepthToSpace", in, 1, 1);
            pfvm_node_set_attr_int(n, "blocksize", 2, NULL);
            pfvm_node_set_attr_string(n, "mode", modes[i], NULL);
            tb_check(&t);
        }
        tb_begin(&t, "SpaceToDepth", 13);
        in[0] = tb_in(&t, "x", PFVM_DOUBLE, "2,2,4,6", -1, 1, 1);
        n = tb_op(&t, "SpaceToDepth", in, 1, 1);
        pfvm_node_set_attr_int(n, "blocksize", 2, NULL);
        tb_check(&t);
    }
}

/* A float constant initializer. */
static pfvm_value *tb_floats(tb *t, const char *name, const float *vals, int n)
{
    pfvm_value *v = pfvm_graph_value(t->g, name, &t->st);
    int64_t dim = n;
    pfvm_tensor *x = pfvm_model_tensor(t->m, PFVM_FLOAT, 1, &dim, NULL, &t->st);
    memcpy(x->data, vals, sizeof(float) * (size_t)n);
    pfvm_graph_add_init(t->g, v, x, &t->st);
    return v;
}

static void resize(const char *label, int opset, const char *sx, const char *mode, const char *coord,
                   const float *scales, const int64_t *sizes, const float *roi, int rank)
{
    tb t;
    pfvm_value *in[4];
    pfvm_node *n;
    tb_begin(&t, label, opset);
    in[0] = tb_in(&t, "x", PFVM_DOUBLE, sx, -1, 1, 1);
    if (opset < 11) {
        in[1] = tb_floats(&t, "scales", scales, rank);
        n = tb_op(&t, "Resize", in, 2, 1);
    } else {
        in[1] = roi ? tb_floats(&t, "roi", roi, 2 * rank) : NULL;
        in[2] = scales ? tb_floats(&t, "scales", scales, rank) : NULL;
        in[3] = sizes ? tb_ints(&t, "sizes", sizes, rank) : NULL;
        n = tb_op(&t, "Resize", in, sizes ? 4 : 3, 1);
    }
    pfvm_node_set_attr_string(n, "mode", mode, NULL);
    if (coord)
        pfvm_node_set_attr_string(n, "coordinate_transformation_mode", coord, NULL);
    if (roi)
        pfvm_node_set_attr_float(n, "extrapolation_value", 0.5f, NULL);
    tb_check(&t);
}

static void test_resize(void)
{
    static const float up2[4] = {1, 1, 2, 2}, down[4] = {1, 1, 0.6f, 0.8f}, up15[4] = {1, 1, 1.5f, 2.5f},
                       roi[8] = {0, 0, 0.2f, -0.1f, 1, 1, 0.9f, 1.2f};
    static const int64_t sz[4] = {1, 2, 5, 7};
    resize("Resize nearest x2", 13, "1,2,3,4", "nearest", NULL, up2, NULL, NULL, 4);
    resize("Resize linear x1.5/x2.5 half_pixel", 13, "1,2,3,4", "linear", "half_pixel", up15, NULL, NULL, 4);
    resize("Resize linear sizes align_corners", 13, "1,2,3,4", "linear", "align_corners", NULL, sz, NULL, 4);
    resize("Resize cubic downsample", 13, "1,2,5,5", "cubic", "pytorch_half_pixel", down, NULL, NULL, 4);
    resize("Resize tf_crop_and_resize", 13, "1,2,4,4", "linear", "tf_crop_and_resize", NULL, sz, roi, 4);
    resize("Resize nearest (opset 10)", 10, "1,2,3,4", "nearest", NULL, up2, NULL, NULL, 4);
}

/* ---- control flow ----------------------------------------------------------------------------- */

/* A subgraph node: out = op(a, b) (b NULL for one input), in graph sub. */
static pfvm_value *sub_op(pfvm_graph *sub, const char *op, pfvm_value *a, pfvm_value *b, const char *out_name)
{
    pfvm_value *in[2], *out = pfvm_graph_value(sub, out_name, NULL);
    in[0] = a;
    in[1] = b;
    pfvm_graph_add_node(sub, op, "", out_name, in, b ? 2 : 1, &out, 1, NULL);
    return out;
}

static void if_case(int cond_value)
{
    tb t;
    pfvm_value *x, *w, *c, *in[2], *y;
    pfvm_graph *tg, *eg;
    pfvm_node *n;
    pfvm_attr *a;
    int64_t cv = cond_value;
    char label[64];
    snprintf(label, sizeof label, "If (%s branch)", cond_value ? "then" : "else");
    tb_begin(&t, label, 13);
    x = tb_in(&t, "x", PFVM_DOUBLE, "2,3", -1, 1, 1);
    w = tb_in(&t, "w", PFVM_DOUBLE, "3", -1, 1, 1);
    c = tb_in_ints(&t, "c", PFVM_BOOL, "", &cv);
    /* then: sin(x * w); else: x + exp(x) (w unused) */
    tg = pfvm_graph_new(t.m, t.g, "then", NULL);
    pfvm_graph_add_output(tg, sub_op(tg, "Sin", sub_op(tg, "Mul", x, w, "tm"), NULL, "ts"), NULL);
    eg = pfvm_graph_new(t.m, t.g, "else", NULL);
    pfvm_graph_add_output(eg, sub_op(eg, "Add", x, sub_op(eg, "Exp", x, NULL, "ee"), "ea"), NULL);
    n = tb_node(&t, "If", &c, 1, 1);
    a = pfvm_node_add_attr(n, "then_branch", PFVM_ATTR_GRAPH, NULL);
    a->g = tg;
    tg->owner = n;
    a = pfvm_node_add_attr(n, "else_branch", PFVM_ATTR_GRAPH, NULL);
    a->g = eg;
    eg->owner = n;
    y = n->outputs[0];
    /* x is read outside the If too */
    in[0] = y;
    in[1] = x;
    tb_op(&t, "Mul", in, 2, 1);
    tb_check(&t);
}

/* v_{t+1} = v_t * w + sin(x) * t for M iterations (x, w captured); scan
 * output v_t * x. */
static void loop_case(int trips)
{
    tb t;
    pfvm_value *v0, *x, *w, *m, *in[4], *bi, *bc, *bv, *vn;
    pfvm_graph *b;
    pfvm_node *n;
    pfvm_attr *a;
    int64_t mv = trips;
    char label[64];
    snprintf(label, sizeof label, "Loop %d trips", trips);
    tb_begin(&t, label, 13);
    v0 = tb_in(&t, "v0", PFVM_DOUBLE, "2,3", -1, 1, 1);
    x = tb_in(&t, "x", PFVM_DOUBLE, "3", -1, 1, 1);
    w = tb_in(&t, "w", PFVM_DOUBLE, "2,1", -1, 1, 1);
    m = tb_in_ints(&t, "m", PFVM_INT64, "", &mv);
    b = pfvm_graph_new(t.m, t.g, "body", NULL);
    bi = pfvm_graph_value(b, "i", NULL);
    bi->type.kind = PFVM_KIND_TENSOR;
    bi->type.dtype = PFVM_INT64;
    bi->type.shape.rank = 0;
    bc = pfvm_graph_value(b, "cin", NULL);
    bc->type.kind = PFVM_KIND_TENSOR;
    bc->type.dtype = PFVM_BOOL;
    bc->type.shape.rank = 0;
    bv = pfvm_graph_value(b, "vin", NULL);
    bv->type = v0->type;
    pfvm_graph_add_input(b, bi, NULL);
    pfvm_graph_add_input(b, bc, NULL);
    pfvm_graph_add_input(b, bv, NULL);
    vn = sub_op(b, "Add", sub_op(b, "Mul", bv, w, "vw"), sub_op(b, "Mul", sub_op(b, "Sin", x, NULL, "sx"), sub_op(b, "Cast", bi, NULL, "fi"), "sxi"),
                "vnext");
    pfvm_node_set_attr_int(vn->producer->inputs[1]->producer->inputs[1]->producer, "to", PFVM_DOUBLE, NULL);
    pfvm_graph_add_output(b, bc, NULL);
    pfvm_graph_add_output(b, vn, NULL);
    pfvm_graph_add_output(b, sub_op(b, "Mul", bv, x, "scan"), NULL);
    in[0] = m;
    in[1] = NULL;
    in[2] = v0;
    n = tb_node(&t, "Loop", in, 3, 2);
    a = pfvm_node_add_attr(n, "body", PFVM_ATTR_GRAPH, NULL);
    a->g = b;
    b->owner = n;
    tb_out(&t, n->outputs[0]);
    tb_out(&t, n->outputs[1]);
    tb_check(&t);
}

static void test_control(void)
{
    if_case(1);
    if_case(0);
    loop_case(3);
    loop_case(1);
}

static void einsum(const char *eq, const char *sa, const char *sb)
{
    tb t;
    pfvm_value *in[2];
    pfvm_node *n;
    char label[64];
    snprintf(label, sizeof label, "Einsum %s", eq);
    tb_begin(&t, label, 13);
    in[0] = tb_in(&t, "a", PFVM_DOUBLE, sa, -1, 1, 1);
    if (sb)
        in[1] = tb_in(&t, "b", PFVM_DOUBLE, sb, -1, 1, 1);
    n = tb_op(&t, "Einsum", in, sb ? 2 : 1, 1);
    pfvm_node_set_attr_string(n, "equation", eq, NULL);
    tb_check(&t);
}

static void test_einsum(void)
{
    einsum("ij,jk->ik", "2,3", "3,4");
    einsum("bij,bjk->bik", "2,2,3", "2,3,2");
    einsum("ij,kj", "2,3", "4,3");
    einsum("ij->ji", "2,3", NULL);
    einsum("ijk->j", "2,3,2", NULL);
    einsum("ij,k->ik", "2,3", "4");
}

/* ---- sum_to ------------------------------------------------------------------------- */

/* y = max(a, b) with a, b of the given shapes: the number of ReduceSum
 * nodes autodiff emits, and the gradients checked numerically. */
static int sum_to_reductions(const char *sa, const char *sb)
{
    tb t;
    pfvm_value *in[2];
    pfvm_autodiff_opts o;
    pfvm_autodiff_result res;
    int c;
    char label[64];
    snprintf(label, sizeof label, "Max [%s] [%s]", sa, sb);
    tb_begin(&t, label, 18);
    in[0] = tb_in(&t, "a", PFVM_DOUBLE, sa, -2, 2, 1);
    in[1] = tb_in(&t, "b", PFVM_DOUBLE, sb, -2, 2, 1);
    tb_op(&t, "Max", in, 2, 1);
    memset(&o, 0, sizeof o);
    o.wrt = t.wrt;
    o.n_wrt = 2;
    if (pfvm_autodiff(t.m, NULL, &o, &res, &t.st)) {
        CHECK_MSG(0, "%s: %s", label, t.st.msg);
        c = -1;
    } else {
        c = (int)tb_count_op(t.g, "ReduceSum", res.n_forward);
    }
    pfvm_tensor_free(t.ins[0]);
    pfvm_tensor_free(t.ins[1]);
    pfvm_model_free(t.m);
    /* the same again, numerically */
    tb_begin(&t, label, 18);
    in[0] = tb_in(&t, "a", PFVM_DOUBLE, sa, -2, 2, 1);
    in[1] = tb_in(&t, "b", PFVM_DOUBLE, sb, -2, 2, 1);
    tb_op(&t, "Max", in, 2, 1);
    tb_check(&t);
    return c;
}

static void test_sum_to(void)
{
    CHECK(sum_to_reductions("n:3,4", "n:3,4") == 0);
    CHECK(sum_to_reductions("n:3,4", "4") == 1);
    CHECK(sum_to_reductions("n:3,4", "n:3,1") == 1);
    CHECK(sum_to_reductions("2,3", "2,3") == 0);
    CHECK(sum_to_reductions("n:3,m:2", "m:2") == 1);
    /* m against n: decided at run time (n may be 1) */
    CHECK(sum_to_reductions("n:3,4", "m:3,4") >= 1);
}

int main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    test_elementwise();
    test_linalg();
    test_tensor();
    test_reduce();
    test_nn();
    test_indexing();
    test_resize();
    test_control();
    test_einsum();
    test_sum_to();
    test_api();
    test_torch();
    test_node_suite();
    return CHECK_END();
}
