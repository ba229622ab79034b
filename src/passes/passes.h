/* passes: graph transformations and the pass manager. A pass is a function
 * over a graph that reports what it did; the manager runs a named, ordered
 * list of them (the default pipeline, or the user's `--passes LIST`). Passes
 * ask the operator registry (src/ops) for per-operator knowledge — rewrites,
 * gradients, fusion kinds — and never switch on op names they do not own. */
#ifndef PFVM_PASSES_H
#define PFVM_PASSES_H

#include "../shape/infer.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What one pass did to a graph (and its subgraphs). */
typedef struct pfvm_pass_stats {
    int nodes_before, nodes_after;
    int removed;            /* nodes deleted */
    int rewritten;          /* nodes replaced by cheaper ones or changed */
    int groups;             /* fused groups formed */
    int64_t bytes_avoided;  /* intermediate bytes no longer materialised, when shapes are constant */
} pfvm_pass_stats;

/* A pass transforms g in place. The graph's value types are inferred before
 * each pass runs; a pass that changes the graph leaves it valid (toposorted,
 * every input produced). */
typedef pfvm_code (*pfvm_pass_fn)(pfvm_model *m, pfvm_graph *g, pfvm_pass_stats *stats, pfvm_status *st);

typedef struct pfvm_pass {
    const char *name;   /* as in --passes: "fold", "dce", "fuse", ... */
    const char *doc;    /* one line */
    pfvm_pass_fn run;
    int default_on;     /* part of the default pipeline */
} pfvm_pass;

/* The known passes, in pipeline order; NULL past the end. */
PFVM_API const pfvm_pass *pfvm_pass_at(int index);
PFVM_API const pfvm_pass *pfvm_pass_find(const char *name);

#define PFVM_OPT_MAX_RUNS 64

/* What pfvm_optimize did, one entry per pass run. */
typedef struct pfvm_opt_report {
    int n;
    struct {
        const char *name;
        pfvm_pass_stats stats;
    } runs[PFVM_OPT_MAX_RUNS];
} pfvm_opt_report;

/* Optimizes the model's main graph in place. `passes` is a comma-separated
 * list of pass names run in that order, NULL for the default pipeline, or
 * "" / "none" for nothing. Unknown names are an error that lists the known
 * ones. `report` may be NULL. The default pipeline checks, after each pass
 * on a model with subgraphs, that every subgraph input's type still holds
 * for what the outer graph feeds it (see pfvm_run_passes). */
PFVM_API pfvm_code pfvm_optimize(pfvm_model *m, const char *passes, pfvm_opt_report *report, pfvm_status *st);

/* Runs passes[0..n) on m like pfvm_optimize: the built-in ones
 * (pfvm_pass_find) or a program's own (types are inferred before each
 * pass; report may be NULL). With `guard` (the default pipeline's
 * setting) on a model with subgraphs, after each pass every subgraph
 * input's stored type must still hold for what its node feeds it over
 * every iteration (pfvm_infer_check_subgraph_inputs): a pass that breaks
 * one fails with a message naming the pass and the input. */
PFVM_API pfvm_code pfvm_run_passes(pfvm_model *m, const pfvm_pass *const *passes, int n, int guard,
                                   pfvm_opt_report *report, pfvm_status *st);

/* Starts a rewrite context (src/opi/rewrite.h) on m: infers the model's
 * types (pfvm_infer_shapes, not strict) and keeps the facts. */
PFVM_INTERNAL pfvm_code pfvm_rw_begin(pfvm_rewrite *rw, pfvm_model *m, unsigned mode, pfvm_status *st);

/* Counts nodes of g and its subgraphs. */
PFVM_API int pfvm_graph_count_nodes(const pfvm_graph *g);

/* The passes (each in its own file, listed in passes.c). */
/* The qlinear pass (passes.c): DequantizeLinear -> Conv/MatMul [-> Relu or
 * Clip] -> QuantizeLinear becomes QLinearConv/QLinearMatMul on the
 * quantized tensors (the activation clamp must be implied by the output's
 * saturation), and DequantizeLinear -> MaxPool -> QuantizeLinear with one
 * scale and zero point a MaxPool on the quantized tensor. */
PFVM_INTERNAL pfvm_code pfvm__pass_qlinear(pfvm_model *m, pfvm_graph *g, pfvm_pass_stats *stats, pfvm_status *st);
PFVM_INTERNAL pfvm_code pfvm__pass_fold(pfvm_model *m, pfvm_graph *g, pfvm_pass_stats *stats, pfvm_status *st);
PFVM_INTERNAL pfvm_code pfvm__pass_simplify(pfvm_model *m, pfvm_graph *g, pfvm_pass_stats *stats, pfvm_status *st);
PFVM_INTERNAL pfvm_code pfvm__pass_cse(pfvm_model *m, pfvm_graph *g, pfvm_pass_stats *stats, pfvm_status *st);
PFVM_INTERNAL pfvm_code pfvm__pass_bnfold(pfvm_model *m, pfvm_graph *g, pfvm_pass_stats *stats, pfvm_status *st);
/* The operators' compose rules (PFVM_RW_COMPOSE): a decomposed operator's
 * nodes become the operator again (src/passes/simplify.c). */
PFVM_INTERNAL pfvm_code pfvm__pass_compose(pfvm_model *m, pfvm_graph *g, pfvm_pass_stats *stats, pfvm_status *st);
PFVM_INTERNAL pfvm_code pfvm__pass_dce(pfvm_model *m, pfvm_graph *g, pfvm_pass_stats *stats, pfvm_status *st);
PFVM_INTERNAL pfvm_code pfvm__pass_fuse(pfvm_model *m, pfvm_graph *g, pfvm_pass_stats *stats, pfvm_status *st);

#ifdef __cplusplus
}
#endif
#endif /* PFVM_PASSES_H */
