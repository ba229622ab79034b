/* recompute: automatic checkpointing of training graphs. A training graph
 * (pfvm_autodiff's forward nodes followed by its backward nodes) keeps
 * every activation the backward pass reads alive from the forward pass to
 * the backward one, so its peak memory grows with depth. This pass drops
 * some of them after their forward use and recomputes them from a kept
 * activation (a checkpoint) just before the backward nodes that read
 * them, trading extra forward operations for memory. The rewritten graph
 * computes the same values with the same operators in the same order of
 * arithmetic, so gradients do not change (bit for bit).
 *
 * Where it can cut. A checkpoint candidate (a "cut") is a forward value
 * that is, when its producer has run, the only non-constant forward value
 * still waiting for a forward reader: keeping it is enough to recompute
 * everything after it up to the next kept cut. Chains (MLPs, transformer
 * layers) have a cut after nearly every node, residual networks one per
 * block. Outputs of random operators, of nodes with subgraphs and graph
 * outputs are always kept.
 *
 * Policies. Chen et al. 2016 (arXiv:1604.06174): keep every s-th cut,
 * s = ceil(sqrt(n)) for n cuts (O(sqrt n) memory for one extra forward
 * pass). DP: dynamic programming over the prefixes the cuts delimit (the
 * lower sets of a chain, as in Kusumoto et al. 2019, arXiv:1911.13214):
 * among all sets of kept cuts whose estimated peak fits the budget, the
 * one with the fewest recomputed operations; its estimate is then checked
 * against the exact peak of the rewritten schedule and the DP re-run with
 * a tighter internal budget until the exact peak fits.
 *
 * Backward order. Before choosing, the pass may move "tail chains" to the
 * end of the schedule: backward nodes whose outputs only feed each other
 * or graph outputs (a weight gradient and its transposes), when their
 * outputs outweigh the values they read from outside. pfvm_autodiff makes
 * each weight gradient where its layer's gradient is made, so without this
 * the last layers' gradients stay alive through the whole backward pass.
 * The order is kept only when it lowers the peak without recomputation
 * (report->peak_reordered); it changes when values are made, not how.
 *
 * Slicing the input segment. When no plan fits the budget and the graph
 * is to be rewritten, the pass looks for the input segment of a CNN: a
 * Conv of a graph input (PFVM_OP_CHANNEL_ROWS) followed by per-channel
 * nodes (PFVM_OP_PER_CHANNEL, one-input element-wise ops), such as the
 * stem Conv, ReLU, MaxPool. Its backward pass holds the network's largest
 * tensors at once, whatever is kept. It is replaced by K slices over the
 * convolution's output channels: each recomputes the segment for its
 * channels and differentiates that alone (pfvm_autodiff with the sliced
 * gradient as seed); a Concat joins the rows of the weight and bias
 * gradients. K is the smallest power of two that makes the segment's
 * largest tensor no larger than its output. It is done only when the best
 * plan peaks inside that backward pass. The slices' copies count as
 * recomputed nodes; every value computed is the same arithmetic on the
 * same operands. Then the plan is chosen again on the sliced graph.
 *
 * Memory is what the symbolic planner (src/plan/symplan) counts: the peak
 * of live intermediate bytes over the node order (inputs and initializers
 * aside; graph outputs live to the end), evaluated under a binding of the
 * dim symbols when shapes are dynamic. Operations come from
 * pfvm_node_flops. */
#ifndef PFVM_RECOMPUTE_H
#define PFVM_RECOMPUTE_H

#include "passes.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum pfvm_recompute_policy {
    PFVM_RECOMPUTE_NONE = 0, /* keep every activation: measure only */
    PFVM_RECOMPUTE_CHEN,     /* every s-th cut (opts.stride; 0: sqrt(n), or with a budget the stride with the
                                fewest extra operations that fits) */
    PFVM_RECOMPUTE_DP        /* the fewest extra operations within the budget */
} pfvm_recompute_policy;

/* pfvm_recompute_opts.flags */
#define PFVM_RECOMPUTE_PLAN_ONLY 1u /* choose and report, leave the graph alone (no slicing, see above) */
#define PFVM_RECOMPUTE_NO_SLICE 2u  /* never run the input segment's backward pass in channel slices */

typedef struct pfvm_recompute_opts {
    pfvm_recompute_policy policy;
    int n_forward;       /* g->nodes[0..n_forward) are the forward pass (pfvm_autodiff_result.n_forward) */
    double budget;       /* peak bytes to stay within; 0: none (DP then returns the smallest peak it finds) */
    int stride;          /* CHEN: keep every stride-th cut; 0: see the policy */
    const pfvm_binding *binding; /* values of the dim symbols sizes depend on, or NULL */
    unsigned flags;      /* PFVM_RECOMPUTE_* */
} pfvm_recompute_opts;

typedef struct pfvm_recompute_report {
    double peak_before, peak_after;   /* live-bytes peak under the binding, without / with the plan */
    double peak_reordered;            /* without recomputation, in the backward order the plan uses (tail
                                         chains moved last, see below); peak_before when nothing moved */
    double flops_forward;             /* operations of the forward pass */
    double flops_total;               /* of the whole training graph before the pass */
    double extra_flops;               /* recomputed operations the plan adds */
    const pfvm_sym *peak_expr;        /* the rewritten graph's peak as an expression of the dim symbols
                                         (NULL with PLAN_ONLY) */
    int n_cuts;                       /* checkpoint candidates */
    int n_kept;                       /* cuts kept */
    int n_recomputed;                 /* forward nodes copied into the backward pass */
    int n_moved;                      /* backward nodes moved to the end (tail chains) */
    int n_slices;                     /* channel slices of the input segment's backward pass (0: none) */
    int stride;                       /* CHEN: the stride used */
    int within_budget;                /* 1 when there is no budget or peak_after fits it */
} pfvm_recompute_report;

/* Chooses the activations of training graph g to recompute under the
 * policy and, unless PLAN_ONLY, rewrites g: copies of the forward nodes
 * that recompute a dropped activation are inserted right before the first
 * backward node that reads it, and the backward nodes read the copies.
 * The copies carry the doc string PFVM_RECOMPUTE_DOC, which the cse pass
 * respects (it would otherwise merge them back). g's types must be
 * inferred. Errors: no forward/backward split, sizes that depend on dims
 * the binding leaves open (the message names the value). When no plan
 * fits the budget, the one with the smallest peak is applied and
 * report->within_budget is 0 (not an error). */
PFVM_API pfvm_code pfvm_recompute(pfvm_model *m, pfvm_graph *g, const pfvm_recompute_opts *opts,
                                  pfvm_recompute_report *report, pfvm_status *st);

/* pfvm:internal-begin */
/* internal: the input segment's backward pass in channel slices
 * (recompute_slice.c). Finds the segment (Conv of a graph input, then
 * per-channel nodes) and its backward pass; when both qualify, rewrites
 * the gradients of the segment's parameters as slices and removes the old
 * backward nodes, unless node peak_at (where the best plan peaks) is not
 * one of them. info->slices is 0 when nothing was done. */
typedef struct pfvm__rc_sliced {
    int slices, n_copies, n_removed;
    double extra_flops;
} pfvm__rc_sliced;
PFVM_INTERNAL pfvm_code pfvm__rc_slice_input(pfvm_graph *g, int n_forward, const pfvm_binding *b,
                                             const pfvm_node *peak_at, pfvm__rc_sliced *info, pfvm_status *st);
#define PFVM__RECOMPUTE_SLICED 0x100u /* internal: the graph was sliced before this plan */
/* pfvm:internal-end */

/* Doc string of the nodes pfvm_recompute adds, and a test for it. */
#define PFVM_RECOMPUTE_DOC "pfvm: recomputation of a dropped activation"
PFVM_API int pfvm_node_is_recompute(const pfvm_node *n);

#ifdef __cplusplus
}
#endif
#endif /* PFVM_RECOMPUTE_H */
