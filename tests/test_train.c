/* Training loops (src/exec): pfvm_exec_feedback carries training state
 * from run to run — outputs copied into initializers after each run, the
 * state never folded, caller memory never written — and, with autodiff's
 * optimizers, a whole training loop on one executor converges; inputs
 * declared varying (labels) are never read at plan time. */
#include "exec/exec.h"
#include "passes/autodiff.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"

static pfvm_status st;

/* A float initializer of g holding `data` (copied into model storage), or
 * viewing `view` when given. */
static pfvm_value *init(pfvm_model *m, pfvm_graph *g, const char *name, int rank, const int64_t *dims,
                        const float *data, float *view)
{
    pfvm_value *v = pfvm_graph_value(g, name, &st);
    pfvm_tensor *t = pfvm_model_tensor(m, PFVM_FLOAT, rank, dims, view, &st);
    if (!view)
        memcpy(t->data, data, sizeof(float) * (size_t)pfvm_tensor_numel(t));
    pfvm_graph_add_init(g, v, t, &st);
    return v;
}

/* A float graph input; dims < 0 become the symbol n. */
static pfvm_value *input(pfvm_model *m, pfvm_graph *g, const char *name, int rank, const int64_t *dims)
{
    pfvm_value *v = pfvm_graph_value(g, name, &st);
    int i;
    v->type.kind = PFVM_KIND_TENSOR;
    v->type.dtype = PFVM_FLOAT;
    v->type.shape.rank = rank;
    for (i = 0; i < rank; i++)
        v->type.shape.dims[i] = dims[i] < 0 ? pfvm_sym_var(m->syms, "n", 1) : pfvm_sym_const(m->syms, dims[i]);
    v->has_type_info = 1;
    pfvm_graph_add_input(g, v, &st);
    return v;
}

static pfvm_value *node2(pfvm_graph *g, const char *op, pfvm_value *a, pfvm_value *b, const char *out)
{
    pfvm_value *in[2], *y = out ? pfvm_graph_value(g, out, &st) : pfvm_graph_new_value(g, op, &st);
    in[0] = a;
    in[1] = b;
    pfvm_graph_add_node(g, op, "", NULL, in, b ? 2 : 1, &y, 1, &st);
    return y;
}

static float f(const pfvm_value *v, int i)
{
    return ((const float *)v->init->data)[i];
}

/* count_new = count + one: folded at plan time as a constant, carried
 * from run to run as a state. */
static void test_counter(void)
{
    pfvm_model *m = pfvm_model_new(&st);
    pfvm_graph *g = pfvm_graph_new(m, NULL, "g", &st);
    float zero = 0, one = 1;
    pfvm_value *count, *next;
    pfvm_exec *e;
    pfvm_plan_info info;
    int k;
    pfvm_model_set_opset(m, "", 17, &st);
    count = init(m, g, "count", 0, NULL, &zero, NULL);
    next = node2(g, "Add", count, init(m, g, "one", 0, NULL, &one, NULL), "count_new");
    pfvm_graph_add_output(g, next, &st);

    /* without feedback: a constant, the same every run */
    e = pfvm_exec_new(m, NULL, &st);
    CHECK(e && !pfvm_exec_bind(e, NULL, 0, &st) && !pfvm_exec_run(e, &st) && !pfvm_exec_run(e, &st));
    CHECK(e && pfvm_tensor_get_f64(pfvm_exec_output(e, 0), 0) == 1 && f(count, 0) == 0);
    CHECK(e && !pfvm_exec_plan_info(e, &info, &st) && info.n_folded == 1);
    pfvm_exec_free(e);

    /* with it: counts, and nothing is folded */
    e = pfvm_exec_new(m, NULL, &st);
    CHECK(e && pfvm_exec_feedback_all(e, &st) == 1);
    CHECK(e && !pfvm_exec_bind(e, NULL, 0, &st));
    for (k = 1; e && k <= 3; k++) {
        CHECK(!pfvm_exec_run(e, &st));
        CHECK_MSG(pfvm_tensor_get_f64(pfvm_exec_output(e, 0), 0) == k && f(count, 0) == k, "run %d: %g, count %g", k,
                  pfvm_tensor_get_f64(pfvm_exec_output(e, 0), 0), f(count, 0));
    }
    /* binding again keeps the plan and the state */
    CHECK(e && !pfvm_exec_bind(e, NULL, 0, &st) && !pfvm_exec_run(e, &st) && f(count, 0) == 4);
    CHECK(e && !pfvm_exec_plan_info(e, &info, &st) && info.n_folded == 0);
    pfvm_exec_free(e);
    pfvm_model_free(m);
}

/* A state viewing caller memory is copied, never written; errors. */
static void test_view_and_errors(void)
{
    pfvm_model *m = pfvm_model_new(&st);
    pfvm_graph *g = pfvm_graph_new(m, NULL, "g", &st);
    float buf[2] = {1, 2}, buf3[3] = {0, 0, 0}, two = 2;
    int64_t d2 = 2, d3 = 3, dn = -1;
    pfvm_value *w, *z;
    pfvm_tensor *zt;
    const pfvm_tensor *in[1];
    pfvm_exec *e;
    int k;
    pfvm_model_set_opset(m, "", 17, &st);
    z = input(m, g, "z", 1, &dn);
    w = init(m, g, "w", 1, &d2, NULL, buf);
    pfvm_graph_add_output(g, node2(g, "Mul", w, init(m, g, "two", 0, NULL, &two, NULL), "w_new"), &st);
    pfvm_graph_add_output(g, node2(g, "Identity", z, NULL, "z_copy"), &st);
    pfvm_graph_add_output(g, node2(g, "Identity", init(m, g, "w3", 1, &d3, NULL, buf3), NULL, "w3_wide"), &st);
    CHECK(!pfvm_infer_shapes(g, 1, &st)); /* static shapes are checked at once */
    e = pfvm_exec_new(m, NULL, &st);
    CHECK(e != NULL);
    if (!e) {
        pfvm_model_free(m);
        return;
    }
    /* what a state and its next value must be */
    CHECK(pfvm_exec_feedback(e, "nope", "w_new", &st) == PFVM_ERR_INVALID && strstr(st.msg, "'nope'"));
    CHECK(pfvm_exec_feedback(e, "z", "w_new", &st) == PFVM_ERR_INVALID && strstr(st.msg, "not an initializer"));
    CHECK(pfvm_exec_feedback(e, "w", "two", &st) == PFVM_ERR_INVALID && strstr(st.msg, "'two'"));
    CHECK(pfvm_exec_feedback(e, "w", "w3_wide", &st) == PFVM_ERR_SHAPE);
    CHECK_MSG(strstr(st.msg, "float[2]") && strstr(st.msg, "float[3]"), "%s", st.msg);
    CHECK(buf[0] == 1 && w->init->data == buf); /* nothing copied on error */

    /* caller memory: copied once, never written */
    CHECK(pfvm_exec_feedback_all(e, &st) == 1);
    CHECK(w->init->data != buf && f(w, 0) == 1 && f(w, 1) == 2);
    d2 = 2;
    zt = pfvm_tensor_new(PFVM_FLOAT, 1, &d2, &st);
    in[0] = zt;
    CHECK(!pfvm_exec_bind(e, in, 1, &st));
    for (k = 0; k < 2; k++)
        CHECK(!pfvm_exec_run(e, &st));
    CHECK_MSG(f(w, 0) == 4 && f(w, 1) == 8 && buf[0] == 1 && buf[1] == 2, "w %g %g, buf %g %g", f(w, 0), f(w, 1),
              buf[0], buf[1]);

    /* a shape known only when running is checked after the run */
    CHECK(pfvm_exec_feedback(e, "w", "z_copy", &st) == PFVM_OK);
    CHECK(!pfvm_exec_bind(e, in, 1, &st) && !pfvm_exec_run(e, &st) && f(w, 0) == 0);
    pfvm_tensor_free(zt);
    d3 = 3;
    zt = pfvm_tensor_new(PFVM_FLOAT, 1, &d3, &st);
    in[0] = zt;
    CHECK(!pfvm_exec_bind(e, in, 1, &st) && pfvm_exec_run(e, &st) == PFVM_ERR_SHAPE);
    CHECK_MSG(strstr(st.msg, "'w'") && strstr(st.msg, "'z_copy'") && strstr(st.msg, "float[3]"), "%s", st.msg);
    pfvm_tensor_free(zt);
    pfvm_exec_free(e);
    pfvm_model_free(m);
}

/* Least squares with autodiff and Adam on one executor: y = x @ W + b
 * fitted to exact data converges to the true W and b. */
static void test_fit(void)
{
    pfvm_model *m = pfvm_model_new(&st);
    pfvm_graph *g = pfvm_graph_new(m, NULL, "g", &st);
    static const float w0[2] = {0, 0}, b0 = 0, wt[2] = {2, -3}, bt = 0.5f;
    int64_t dx[2] = {8, 2}, dw[2] = {2, 1}, dy[2] = {8, 1};
    pfvm_value *x, *y, *W, *b, *r, *loss;
    pfvm_tensor *xt, *yt;
    const pfvm_tensor *in[2];
    pfvm_autodiff_opts ao;
    pfvm_autodiff_result ar;
    pfvm_optimizer_opts oo;
    pfvm_exec *e;
    int i, k, n_state;
    float *xv, *yv;
    pfvm_model_set_opset(m, "", 17, &st);
    x = input(m, g, "x", 2, dx);
    y = input(m, g, "y", 2, dy);
    W = init(m, g, "W", 2, dw, w0, NULL);
    b = init(m, g, "b", 0, NULL, &b0, NULL);
    r = node2(g, "Sub", node2(g, "Add", node2(g, "MatMul", x, W, NULL), b, NULL), y, NULL);
    loss = node2(g, "ReduceMean", node2(g, "Mul", r, r, NULL), NULL, "loss");
    pfvm_node_set_attr_int(loss->producer, "keepdims", 0, &st);
    pfvm_graph_add_output(g, loss, &st);
    memset(&ao, 0, sizeof ao);
    ao.loss = "loss";
    memset(&oo, 0, sizeof oo);
    oo.kind = PFVM_OPTIMIZER_ADAM;
    oo.lr = 0.05;
    CHECK(!pfvm_autodiff(m, g, &ao, &ar, &st) && !pfvm_autodiff_optimizer(m, g, &ar, &oo, &st));
    e = pfvm_exec_new(m, NULL, &st);
    n_state = e ? pfvm_exec_feedback_all(e, &st) : -1;
    CHECK_MSG(n_state == 7, "%d states: %s", n_state, st.msg); /* W, b, their moments, adam_step */
    xt = pfvm_tensor_new(PFVM_FLOAT, 2, dx, &st);
    yt = pfvm_tensor_new(PFVM_FLOAT, 2, dy, &st);
    xv = (float *)xt->data;
    yv = (float *)yt->data;
    for (i = 0; i < 8; i++) {
        xv[2 * i] = (float)(i % 3) - 1;
        xv[2 * i + 1] = (float)(i % 4) * 0.5f - 0.7f;
        yv[i] = xv[2 * i] * wt[0] + xv[2 * i + 1] * wt[1] + bt;
    }
    in[0] = xt;
    in[1] = yt;
    CHECK(e && !pfvm_exec_bind(e, in, 2, &st));
    for (k = 0; e && k < 600; k++)
        if (pfvm_exec_run(e, &st))
            break;
    CHECK_MSG(k == 600, "step %d: %s", k, st.msg);
    CHECK_MSG(fabs(f(W, 0) - wt[0]) < 1e-3 && fabs(f(W, 1) - wt[1]) < 1e-3 && fabs(f(b, 0) - bt) < 1e-3,
              "W %g %g b %g", f(W, 0), f(W, 1), f(b, 0));
    CHECK_MSG(f(pfvm_graph_find(g, "adam_step"), 0) == 600, "adam_step %g", f(pfvm_graph_find(g, "adam_step"), 0));
    pfvm_tensor_free(xt);
    pfvm_tensor_free(yt);
    pfvm_exec_free(e);
    pfvm_model_free(m);
}

/* Labels whose contents change each step: a varying input is never read
 * at plan time (nothing folded from it), and one that feeds a shape still
 * gets the right shape while running. */
static void test_varying(void)
{
    pfvm_model *m = pfvm_model_new(&st);
    pfvm_graph *g = pfvm_graph_new(m, NULL, "g", &st);
    int64_t d23[2] = {2, 3}, d2 = 2;
    pfvm_value *x, *lab, *shp, *in2[1];
    pfvm_node *n;
    pfvm_tensor *xt, *lt, *st_;
    const pfvm_tensor *ins[3], *a, *r;
    pfvm_plan_info info;
    pfvm_exec *e;
    int k;
    pfvm_model_set_opset(m, "", 17, &st);
    x = input(m, g, "x", 2, d23);
    lab = input(m, g, "labels", 1, &d2);
    lab->type.dtype = PFVM_INT64;
    shp = input(m, g, "shape", 1, &d2);
    shp->type.dtype = PFVM_INT64;
    in2[0] = pfvm_graph_value(g, "a", &st);
    n = pfvm_graph_add_node(g, "Cast", "", NULL, &lab, 1, in2, 1, &st);
    pfvm_node_set_attr_int(n, "to", PFVM_FLOAT, &st);
    pfvm_graph_add_output(g, in2[0], &st);
    pfvm_graph_add_output(g, node2(g, "Reshape", x, shp, "r"), &st);
    xt = pfvm_tensor_new(PFVM_FLOAT, 2, d23, &st);
    lt = pfvm_tensor_new(PFVM_INT64, 1, &d2, &st);
    st_ = pfvm_tensor_new(PFVM_INT64, 1, &d2, &st);
    ((int64_t *)lt->data)[0] = 1;
    ((int64_t *)lt->data)[1] = 2;
    ((int64_t *)st_->data)[0] = 3;
    ((int64_t *)st_->data)[1] = 2;
    ins[0] = xt;
    ins[1] = lt;
    ins[2] = st_;
    e = pfvm_exec_new(m, NULL, &st);
    CHECK(e && !pfvm_exec_bind(e, ins, 3, &st) && !pfvm_exec_plan_info(e, &info, &st) && info.n_folded == 1);
    CHECK(e && pfvm_exec_set_input_varying(e, 3, 1, &st) == PFVM_ERR_INVALID && strstr(st.msg, "no input 3"));
    CHECK(e && !pfvm_exec_set_input_varying(e, 1, 1, &st) && !pfvm_exec_set_input_varying(e, 2, 1, &st));
    for (k = 0; e && k < 3; k++) {
        ((int64_t *)lt->data)[0] = 5 * k;
        ((int64_t *)lt->data)[1] = 7 * k;
        ((int64_t *)st_->data)[0] = k == 1 ? 2 : 3;
        ((int64_t *)st_->data)[1] = k == 1 ? 3 : 2;
        CHECK(!pfvm_exec_bind(e, ins, 3, &st) && !pfvm_exec_run(e, &st));
        a = pfvm_exec_output(e, 0);
        r = pfvm_exec_output(e, 1);
        CHECK_MSG(pfvm_tensor_get_f64(a, 0) == 5 * k && pfvm_tensor_get_f64(a, 1) == 7 * k, "step %d: %g %g", k,
                  pfvm_tensor_get_f64(a, 0), pfvm_tensor_get_f64(a, 1));
        CHECK_MSG(r->rank == 2 && r->dims[0] == (k == 1 ? 2 : 3) && r->dims[1] == (k == 1 ? 3 : 2), "step %d: r %lldx%lld",
                  k, (long long)r->dims[0], (long long)r->dims[1]);
    }
    CHECK(e && !pfvm_exec_plan_info(e, &info, &st) && info.n_folded == 0);
    pfvm_tensor_free(xt);
    pfvm_tensor_free(lt);
    pfvm_tensor_free(st_);
    pfvm_exec_free(e);
    pfvm_model_free(m);
}

int main(void)
{
    test_counter();
    test_view_and_errors();
    test_fit();
    test_varying();
    return CHECK_END();
}
