/* accel layout planner: the exact search is optimal (equal to brute force
 * over every assignment on the small fixtures), the heuristic is within
 * 5% of it on the bench models (bench/accel.sh's), and bad requests get
 * one clear error. Run from the repository root. */
#include "accel/plan.h"
#include "onnx/onnx_io.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"

static pfvm_model *load(const char *name)
{
    char path[512];
    pfvm_status st;
    pfvm_model *m;
    snprintf(path, sizeof path, "tests/models/%s/model.onnx", name);
    m = pfvm_onnx_load_file(path, 0, &st);
    if (!m)
        printf("  %s: %s\n", path, st.msg);
    return m;
}

static double plan_cost(const char *name, const pfvm_accel_target *t, int method, pfvm_accel_layout_plan *out)
{
    pfvm_model *m = load(name);
    pfvm_status st;
    pfvm_accel_layout_plan plan;
    double c = -1;
    CHECK(m != NULL);
    if (!m)
        return -1;
    if (pfvm_accel_plan_layouts(m, t, method, &plan, &st) == PFVM_OK) {
        c = plan.cost;
        if (out)
            *out = plan;
        else
            pfvm_accel_plan_free(&plan);
    } else
        printf("  %s: %s\n", name, st.msg);
    pfvm_model_free(m);
    return c;
}

static pfvm_value *weight(pfvm_model *m, pfvm_graph *g, const char *name, int64_t r, int64_t c, pfvm_status *st)
{
    int64_t dims[2], k;
    pfvm_value *v = pfvm_graph_value(g, name, st);
    pfvm_tensor *t;
    dims[0] = r, dims[1] = c;
    t = pfvm_model_tensor(m, PFVM_FLOAT, 2, dims, NULL, st);
    for (k = 0; k < r * c; k++)
        ((float *)t->data)[k] = (float)(k % 7) * 0.125f;
    pfvm_graph_add_init(g, v, t, st);
    return v;
}

/* A graph that is not a chain: x feeds a MatMul and the residual Add
 * after it; Softmax, Transpose, a second MatMul. */
static pfvm_model *branchy(int64_t b, int64_t s, int64_t d, pfvm_status *st)
{
    pfvm_model *m = pfvm_model_new(st);
    pfvm_graph *g = pfvm_graph_new(m, NULL, "g", st);
    pfvm_value *x = pfvm_graph_value(g, "x", st), *v[8], *in[2];
    const pfvm_sym *sx[3];
    static const int64_t perm[3] = {0, 2, 1};
    const char *names[] = {"mm", "res", "soft", "tr", "y"};
    int i;
    pfvm_model_set_opset(m, "", 17, st);
    sx[0] = pfvm_sym_const(m->syms, b), sx[1] = pfvm_sym_const(m->syms, s), sx[2] = pfvm_sym_const(m->syms, d);
    pfvm_value_set_tensor_type(x, PFVM_FLOAT, 3, sx, st);
    pfvm_graph_add_input(g, x, st);
    for (i = 0; i < 5; i++)
        v[i] = pfvm_graph_value(g, names[i], st);
    in[0] = x, in[1] = weight(m, g, "w1", d, d, st);
    pfvm_graph_add_node(g, "MatMul", "", "mm", in, 2, &v[0], 1, st);
    in[0] = v[0], in[1] = x;
    pfvm_graph_add_node(g, "Add", "", "res", in, 2, &v[1], 1, st);
    pfvm_graph_add_node(g, "Softmax", "", "soft", &v[1], 1, &v[2], 1, st);
    pfvm_node_set_attr_ints(pfvm_graph_add_node(g, "Transpose", "", "tr", &v[2], 1, &v[3], 1, st), "perm", perm, 3,
                            st);
    in[0] = v[3], in[1] = weight(m, g, "w2", s, s, st);
    pfvm_graph_add_node(g, "MatMul", "", "mm2", in, 2, &v[4], 1, st);
    pfvm_graph_add_output(g, v[4], st);
    return m;
}

static double solve(pfvm_model *m, const pfvm_accel_target *t, int method)
{
    pfvm_status st;
    pfvm_accel_layout_plan plan;
    double c = -1;
    if (pfvm_accel_plan_layouts(m, t, method, &plan, &st) == PFVM_OK)
        c = plan.cost, pfvm_accel_plan_free(&plan);
    else
        printf("  %s\n", st.msg);
    return c;
}

/* the hand-made branching graph at a few sizes on both targets */
static void check_branchy(void)
{
    static const int64_t sizes[][3] = {{8, 16, 32}, {1, 5, 64}, {64, 4, 8}, {2, 128, 16}};
    const char *targets[] = {"targets/tiny.txt", "targets/mncore2.txt"};
    int i, k;
    for (k = 0; k < 2; k++) {
        pfvm_accel_target t;
        pfvm_status st;
        CHECK(pfvm_accel_target_load(targets[k], &t, &st) == PFVM_OK);
        for (i = 0; i < 4; i++) {
            pfvm_model *m = branchy(sizes[i][0], sizes[i][1], sizes[i][2], &st);
            double brute = solve(m, &t, PFVM_ACCEL_PLAN_BRUTE), exact = solve(m, &t, PFVM_ACCEL_PLAN_EXACT),
                   heur = solve(m, &t, PFVM_ACCEL_PLAN_HEURISTIC);
            printf("  branchy %lldx%lldx%lld on %s: brute force %.1f, exact %.1f, heuristic %.1f cycles\n",
                   (long long)sizes[i][0], (long long)sizes[i][1], (long long)sizes[i][2], t.name, brute, exact, heur);
            CHECK(brute > 0 && fabs(brute - exact) <= 1e-9 * brute);
            CHECK(heur >= exact * (1 - 1e-12));
            pfvm_model_free(m);
        }
    }
}

/* brute force == exact, and the heuristic no better than either */
static void check_optimal(const char *name, const char *tfile)
{
    pfvm_accel_target t;
    pfvm_status st;
    double brute, exact, heur;
    CHECK(pfvm_accel_target_load(tfile, &t, &st) == PFVM_OK);
    brute = plan_cost(name, &t, PFVM_ACCEL_PLAN_BRUTE, NULL);
    exact = plan_cost(name, &t, PFVM_ACCEL_PLAN_EXACT, NULL);
    heur = plan_cost(name, &t, PFVM_ACCEL_PLAN_HEURISTIC, NULL);
    printf("  %s on %s: brute force %.1f, exact %.1f, heuristic %.1f cycles\n", name, t.name, brute, exact, heur);
    CHECK(brute > 0 && exact > 0 && heur > 0);
    CHECK(fabs(brute - exact) <= 1e-9 * brute);
    CHECK(heur >= exact * (1 - 1e-12));
}

/* AUTO runs both; the exact search finishes and the heuristic is within
 * 5% of it */
static void check_gap(const char *name, const char *tfile)
{
    pfvm_accel_target t;
    pfvm_status st;
    pfvm_accel_layout_plan plan;
    int i, split = 0;
    CHECK(pfvm_accel_target_load(tfile, &t, &st) == PFVM_OK);
    if (plan_cost(name, &t, PFVM_ACCEL_PLAN_AUTO, &plan) < 0) {
        CHECK(0);
        return;
    }
    for (i = 0; i < plan.nnodes; i++)
        split += plan.kind[i] <= PFVM_ACCEL_KIND_LAST;
    printf("  %s on %s: %d nodes (%d split), exact %s (%lld states at most) %.1f, heuristic %.1f cycles (gap "
           "%.2f%%), %d conversions\n",
           name, t.name, plan.nnodes, split, plan.exact_done ? "finished" : "gave up", (long long)plan.states,
           plan.exact_cost, plan.heuristic_cost,
           plan.exact_done ? 100 * (plan.heuristic_cost / plan.exact_cost - 1) : -1.0, plan.conversions);
    CHECK(plan.exact_done);
    CHECK(plan.method == PFVM_ACCEL_PLAN_EXACT);
    CHECK(plan.heuristic_cost <= 1.05 * plan.exact_cost);
    CHECK(plan.exact_cost <= plan.heuristic_cost * (1 + 1e-12));
    CHECK(fabs(plan.cost - plan.exact_cost) <= 1e-9 * plan.cost);
    CHECK(fabs(plan.compute + plan.convert - plan.cost) <= 1e-9 * plan.cost);
    pfvm_accel_plan_free(&plan);
}

/* A node with more inputs than the lowerings take (Concat of 10) runs on
 * PE 0, its inputs gathered there. */
static void check_many_inputs(void)
{
    pfvm_status st;
    pfvm_accel_target t;
    pfvm_accel_layout_plan plan;
    pfvm_model *m = pfvm_model_new(&st);
    pfvm_graph *g = pfvm_graph_new(m, NULL, "g", &st);
    pfvm_value *x = pfvm_graph_value(g, "x", &st), *r = pfvm_graph_value(g, "r", &st), *y = pfvm_graph_value(g, "y", &st);
    pfvm_value *in[10];
    const pfvm_sym *sx[2];
    int i;
    pfvm_model_set_opset(m, "", 17, &st);
    sx[0] = pfvm_sym_const(m->syms, 4), sx[1] = pfvm_sym_const(m->syms, 8);
    pfvm_value_set_tensor_type(x, PFVM_FLOAT, 2, sx, &st);
    pfvm_graph_add_input(g, x, &st);
    pfvm_graph_add_node(g, "Relu", "", "relu", &x, 1, &r, 1, &st);
    for (i = 0; i < 10; i++)
        in[i] = r;
    pfvm_node_set_attr_int(pfvm_graph_add_node(g, "Concat", "", "cat", in, 10, &y, 1, &st), "axis", 0, &st);
    pfvm_graph_add_output(g, y, &st);
    CHECK(pfvm_accel_target_load("targets/tiny.txt", &t, &st) == PFVM_OK);
    CHECK_MSG(pfvm_accel_plan_layouts(m, &t, PFVM_ACCEL_PLAN_AUTO, &plan, &st) == PFVM_OK, "%s", st.msg);
    CHECK(plan.nnodes == 2 && plan.kind && plan.kind[1] == PFVM_ACCEL_KIND_PE0 && plan.exact_done);
    pfvm_accel_plan_free(&plan);
    pfvm_model_free(m);
}

static void test_errors(void)
{
    pfvm_accel_target t;
    pfvm_status st;
    pfvm_accel_layout_plan plan;
    pfvm_model *m;
    CHECK(pfvm_accel_target_load("targets/tiny.txt", &t, &st) == PFVM_OK);
    m = load("resnet18");
    CHECK(m && pfvm_accel_plan_layouts(m, &t, PFVM_ACCEL_PLAN_BRUTE, &plan, &st) == PFVM_ERR_UNSUPPORTED);
    CHECK(strstr(st.msg, "brute force takes at most 4000000 assignments") != NULL);
    CHECK(plan.kind == NULL);
    CHECK(pfvm_accel_plan_layouts(m, &t, 9, &plan, &st) == PFVM_ERR_INVALID);
    CHECK(strstr(st.msg, "unknown method 9") != NULL);
    CHECK(pfvm_accel_plan_layouts(NULL, &t, 0, &plan, &st) == PFVM_ERR_INVALID);
    pfvm_model_free(m);
    CHECK(!strcmp(pfvm_accel_kind_name(PFVM_ACCEL_KIND_REPL), "repl"));
    CHECK(pfvm_accel_kind_name(7) == NULL);
}

int main(void)
{
    check_optimal("mlp", "targets/tiny.txt");
    check_optimal("mlp", "targets/mncore2.txt");
    check_optimal("mlp_mnist", "targets/tiny.txt");
    check_optimal("cnn_stem", "targets/tiny.txt");
    check_branchy();
    check_gap("mlp", "targets/mncore2.txt");
    check_gap("cnn_small", "targets/mncore2.txt");
    check_gap("transformer_encoder", "targets/mncore2.txt");
    check_gap("squeezenet1_1", "targets/mncore2.txt");
    check_gap("resnet18", "targets/mncore2.txt");
    check_gap("mobilenet_v2", "targets/mncore2.txt");
    check_gap("transformer_encoder", "targets/tiny.txt");
    check_many_inputs();
    test_errors();
    return CHECK_END();
}
