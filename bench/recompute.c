/* recompute: the peak-memory vs extra-compute curve of the checkpointing
 * policies (src/passes/recompute.h) on deep training graphs, as markdown.
 *
 *   cc -O2 -I. bench/recompute.c -o recompute -lprotobuf-nanopb -lm
 *   ./recompute [RESNET18.onnx]        (bench/recompute.sh does both)
 *
 * Models: a 50-layer MLP (width 256, softmax cross-entropy
 * loss) built in C (batch N bound to 1024), and torchvision's resnet18 (tests/models/resnet18,
 * batch made the symbol N, bound to 16; the output's seed is an input;
 * opset raised from 13 to 16, which changes none of its operators, so
 * that MaxPool's gradient is one ScatterElements add instead of the
 * one-hot masks opset 13 allows, whose transients dominate the peak).
 * For each: Chen et al.'s sqrt(n) plan, Chen's stride swept, and the DP
 * plan at budgets from 90% down to 10% of the peak without recomputation;
 * where no plan of the graph fits, the DP again on a fresh graph that the
 * pass may rewrite (slicing the input segment's backward pass).
 * Only planning: nothing runs. */
#define PFVM_IMPLEMENTATION
#include "pfvm_onnx.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "tests/nets.h"

static double mb(double b)
{
    return b / 1048576.0;
}

/* The model being measured, rebuilt for each plan that rewrites the graph
 * (slicing the input segment is a rewrite: PLAN_ONLY plans never slice). */
static pfvm_model *(*fresh_model)(pfvm_status *st);
static const char *fresh_loss;
static int64_t fresh_n;

static int differentiate(pfvm_model *m, const char *loss, pfvm_autodiff_result *res);

/* A DP plan that rewrites a fresh training graph (so that the input
 * segment may be sliced), or 0. */
static int rewritten(double budget, pfvm_recompute_report *r)
{
    pfvm_status st;
    pfvm_model *m = fresh_model(&st);
    pfvm_autodiff_result res;
    pfvm_recompute_opts o;
    pfvm_binding b;
    int ok = 0;
    memset(&b, 0, sizeof b);
    if (m && differentiate(m, fresh_loss, &res) && !pfvm_binding_set(&b, pfvm_symtab_find(m->syms, "N"), fresh_n, &st)) {
        memset(&o, 0, sizeof o);
        o.policy = PFVM_RECOMPUTE_DP;
        o.n_forward = res.n_forward;
        o.budget = budget;
        o.binding = &b;
        ok = !pfvm_recompute(m, NULL, &o, r, &st);
        if (!ok)
            fprintf(stderr, "recompute: %s\n", st.msg);
    }
    pfvm_binding_free(&b);
    pfvm_model_free(m);
    return ok;
}

static int plan(pfvm_model *m, int n_forward, const pfvm_binding *b, pfvm_recompute_policy policy, double budget,
                int stride, pfvm_recompute_report *r)
{
    pfvm_status st;
    if (nets_plan(m, n_forward, b, policy, budget, stride, r, &st)) {
        fprintf(stderr, "recompute: %s\n", st.msg);
        return 0;
    }
    return 1;
}

static void row(const char *policy, const char *param, const pfvm_recompute_report *r, double budget)
{
    printf("| %s | %s | %.1f | %.2f | %d | %d | %.1f%% | %s |\n", policy, param, mb(r->peak_after),
           r->peak_after / r->peak_before, r->n_kept, r->n_recomputed,
           r->flops_forward > 0 ? 100.0 * r->extra_flops / r->flops_forward : 0.0,
           budget <= 0 ? "" : r->within_budget ? "yes" : "no");
}

static void curve(const char *title, pfvm_model *m, int n_forward, const pfvm_binding *b)
{
    pfvm_recompute_report r, none;
    char param[64];
    int s, pct, sqrt_n;
    if (!plan(m, n_forward, b, PFVM_RECOMPUTE_NONE, 0, 0, &none))
        return;
    printf("### %s\n\n", title);
    printf("%d nodes (%d forward), %d cuts; peak without recomputation %.1f MB; forward pass %.3g operations, "
           "training step %.3g.",
           (int)stbds_arrlen(m->graph->nodes), n_forward, none.n_cuts, mb(none.peak_before), none.flops_forward,
           none.flops_total);
    if (plan(m, n_forward, b, PFVM_RECOMPUTE_DP, 0, 0, &r) && r.n_moved)
        printf(" Chen and DP plans first move %d backward nodes (weight-gradient tail chains) to the end: "
               "%.1f MB (%.2f of none) before any recomputation.",
               r.n_moved, mb(r.peak_reordered), r.peak_reordered / none.peak_before);
    else
        printf(" No tail chain is worth moving: Chen and DP plans keep autodiff's backward order.");
    printf("\n\n");
    printf("| policy | parameter | peak MB | peak / none | cuts kept | nodes recomputed | extra ops (%% of forward) "
           "| within budget |\n| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |\n");
    row("none", "", &none, 0);
    sqrt_n = (int)ceil(sqrt((double)none.n_cuts));
    if (plan(m, n_forward, b, PFVM_RECOMPUTE_CHEN, 0, 0, &r)) {
        sprintf(param, "sqrt(n): stride %d", sqrt_n);
        row("Chen", param, &r, 0);
    }
    for (s = 1; s <= none.n_cuts + 1; s += s < 4 ? 1 : s < 16 ? 2 : 8) {
        if (s == sqrt_n || !plan(m, n_forward, b, PFVM_RECOMPUTE_CHEN, 0, s, &r))
            continue;
        sprintf(param, "stride %d", s);
        row("Chen", param, &r, 0);
    }
    for (pct = 90; pct >= 10; pct -= 10) {
        double budget = none.peak_before * pct / 100.0;
        sprintf(param, "budget %d%%", pct);
        if (plan(m, n_forward, b, PFVM_RECOMPUTE_CHEN, budget, 0, &r)) {
            char p2[80];
            sprintf(p2, "%s (best stride %d)", param, r.stride);
            row("Chen", p2, &r, budget);
        }
        if (plan(m, n_forward, b, PFVM_RECOMPUTE_DP, budget, 0, &r))
            row("DP", param, &r, budget);
        if (!r.within_budget && rewritten(budget, &r) && r.n_slices) {
            char p2[80];
            sprintf(p2, "%s, stem in %d slices", param, r.n_slices);
            row("DP", p2, &r, budget);
        }
    }
    if (plan(m, n_forward, b, PFVM_RECOMPUTE_DP, 0, 0, &r))
        row("DP", "smallest peak", &r, 0);
    printf("\n");
}

/* The executor's own plan (bind only, nothing runs), or 0 on failure. */
static int exec_arena(pfvm_model *m, const pfvm_binding *b, pfvm_plan_info *info)
{
    pfvm_status st;
    if (nets_exec_plan(m, b, info, &st)) {
        fprintf(stderr, "bind: %s\n", st.msg);
        return 0;
    }
    return 1;
}

/* The symbolic peak of the rewritten graph at a 50% budget, and the
 * executor's arena before and after. */
static void peak_expression(pfvm_model *m, int n_forward, const pfvm_binding *b)
{
    pfvm_plan_info before, after;
    pfvm_recompute_opts o;
    pfvm_recompute_report r, none;
    pfvm_status st;
    char buf[512];
    if (!plan(m, n_forward, b, PFVM_RECOMPUTE_NONE, 0, 0, &none) || !exec_arena(m, b, &before))
        return;
    memset(&o, 0, sizeof o);
    o.policy = PFVM_RECOMPUTE_DP;
    o.n_forward = n_forward;
    o.budget = none.peak_before * 0.5;
    o.binding = b;
    if (pfvm_recompute(m, NULL, &o, &r, &st) || !r.peak_expr) {
        fprintf(stderr, "recompute: %s\n", st.msg);
        return;
    }
    if (pfvm_sym_print(r.peak_expr, buf, sizeof buf) < 400) {
        printf("Peak of the DP plan at a 50%% budget, for every batch N: `%s` bytes.\n\n", buf);
    } else {
        static const int64_t ns[] = {1, 16, 256, 1024, 4096};
        int k;
        buf[200] = 0;
        printf("Peak of the DP plan at a 50%% budget, for every batch N: an expression of %d characters, `%s...`; "
               "evaluated:", pfvm_sym_print(r.peak_expr, NULL, 0), buf);
        for (k = 0; k < 5; k++) {
            pfvm_binding e;
            int64_t v = 0;
            memset(&e, 0, sizeof e);
            pfvm_binding_set(&e, pfvm_symtab_find(m->syms, "N"), ns[k], &st);
            pfvm_sym_eval(r.peak_expr, &e, &v);
            printf("%s N = %lld: %.1f MB", k ? "," : "", (long long)ns[k], mb((double)v));
            pfvm_binding_free(&e);
        }
        printf(".\n\n");
    }
    if (exec_arena(m, b, &after))
        printf("The executor's own plan (pfvm_exec_bind, no optimization passes): arena %.1f MB -> %.1f MB, "
               "its peak of live bytes %.1f MB -> %.1f MB.\n\n",
               mb((double)before.arena_bytes), mb((double)after.arena_bytes), mb((double)before.lower_bound),
               mb((double)after.lower_bound));
}

static int differentiate(pfvm_model *m, const char *loss, pfvm_autodiff_result *res)
{
    pfvm_autodiff_opts o;
    pfvm_status st;
    memset(&o, 0, sizeof o);
    o.loss = loss;
    if (pfvm_infer_shapes(m->graph, 0, &st) || pfvm_autodiff(m, NULL, &o, res, &st)) {
        fprintf(stderr, "autodiff: %s\n", st.msg);
        return 0;
    }
    return 1;
}

static void bench(const char *title, pfvm_model *m, const char *loss, int64_t n)
{
    fresh_loss = loss;
    fresh_n = n;
    pfvm_autodiff_result res;
    pfvm_binding b;
    pfvm_status st;
    memset(&b, 0, sizeof b);
    if (!differentiate(m, loss, &res) || pfvm_binding_set(&b, pfvm_symtab_find(m->syms, "N"), n, &st))
        return;
    curve(title, m, res.n_forward, &b);
    peak_expression(m, res.n_forward, &b);
    pfvm_binding_free(&b);
}

static const char *resnet_path = "tests/models/resnet18/model.onnx";

static pfvm_model *make_mlp(pfvm_status *st)
{
    return nets_mlp(50, 256, st);
}

static pfvm_model *make_resnet(pfvm_status *st)
{
    pfvm_model *m = pfvm_onnx_load_file(resnet_path, 0, st);
    if (m) {
        nets_batch_symbol(m, "N");
        pfvm_model_set_opset(m, "", 16, st);
    }
    return m;
}

int main(int argc, char **argv)
{
    pfvm_status st;
    pfvm_model *m;
    if (argc > 1)
        resnet_path = argv[1];
    fresh_model = make_mlp;
    if (!(m = make_mlp(&st))) {
        fprintf(stderr, "mlp: %s\n", st.msg);
        return 1;
    }
    bench("50-layer MLP (width 256, batch N = 1024)", m, "loss", 1024);
    pfvm_model_free(m);
    fresh_model = make_resnet;
    if (!(m = make_resnet(&st))) {
        fprintf(stderr, "%s: %s\n", resnet_path, st.msg);
        return 1;
    }
    bench("resnet18 (224x224, batch N = 16)", m, NULL, 16);
    pfvm_model_free(m);
    return 0;
}
