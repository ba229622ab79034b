/* accel layout planner: chooses, per node, the layout class of its outputs
 * among those its operator's lowering accepts (pfvm_acl_layout_rule in
 * src/ops/accel_lower.c), with the inputs it then needs, and counts a
 * conversion wherever a value's layout and its reader's disagree,
 * minimizing the planner's cost model (README.md, "accel", "Layout
 * planner"): each node's compute cycles on the PEs its split uses, plus
 * each conversion's cycles over the target's links (the busiest link of
 * each level, bytes over its bandwidth), model inputs and weights read
 * from the root memory and outputs written back to it.
 *
 * Classes: one axis block-split over the PEs (the first; the second, for
 * rank >= 3; the last, for rank >= 2), whole on every PE, whole on PE 0
 * (the fallback, which every node accepts).
 *
 * Solvers: exact (dynamic programming over the graph in order, a state
 * being the classes of the values still to be read: on a chain it is the
 * classic DP; it gives up beyond a state limit), heuristic (each node
 * greedily in order, then sweeps that change one node at a time while the
 * total falls), and brute force (every assignment; tests on graphs of a
 * few nodes). The plan is a cost-model result: pfvm_accel_emit does not
 * follow it yet. */
#ifndef PFVM_ACCEL_PLAN_H
#define PFVM_ACCEL_PLAN_H

#include "../ir/ir.h"
#include "target.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Solvers (pfvm_accel_plan_layouts' method). AUTO runs the heuristic and,
 * when it finishes within its state limit, the exact search, and keeps
 * the better plan (the exact one). */
#define PFVM_ACCEL_PLAN_AUTO 0
#define PFVM_ACCEL_PLAN_EXACT 1
#define PFVM_ACCEL_PLAN_HEURISTIC 2
#define PFVM_ACCEL_PLAN_BRUTE 3 /* every assignment; refused above 4 million */

/* Layout classes (pfvm_accel_layout_plan.kind). */
#define PFVM_ACCEL_KIND_FIRST 0  /* first axis block-split over the PEs */
#define PFVM_ACCEL_KIND_SECOND 1 /* second axis (rank >= 3) */
#define PFVM_ACCEL_KIND_LAST 2   /* last axis (rank >= 2) */
#define PFVM_ACCEL_KIND_REPL 3   /* whole on every PE */
#define PFVM_ACCEL_KIND_PE0 4    /* whole on PE 0 (the fallback) */

typedef struct pfvm_accel_layout_plan {
    int nnodes;
    int *kind;          /* per node in graph order: its outputs' class (pfvm_accel_plan_free) */
    double cost;        /* cycles by the cost model: compute + convert */
    double compute;     /* the nodes' compute cycles */
    double convert;     /* the conversions' cycles (root-memory reads and writes included) */
    int conversions;    /* node inputs whose class differs from their producer's */
    int method;         /* the solver whose plan this is */
    int exact_done;     /* 1: the exact search ran to the end (exact_cost is the optimum) */
    double exact_cost;  /* -1 when it did not run or gave up */
    double heuristic_cost; /* -1 when it did not run */
    int64_t states;     /* the exact search's largest number of states at one node */
} pfvm_accel_layout_plan;

/* Plans the layouts of m's main graph on target t by method. m is
 * optimized in place like pfvm_accel_emit does ("fold,dce", then
 * ordered and shapes inferred); shapes must be static. Errors name the
 * value or node (a symbolic dim, a graph too large for BRUTE, EXACT over
 * its state limit: PFVM_ERR_UNSUPPORTED). */
PFVM_API pfvm_code pfvm_accel_plan_layouts(pfvm_model *m, const pfvm_accel_target *t, int method,
                                           pfvm_accel_layout_plan *plan, pfvm_status *st);
/* Frees what pfvm_accel_plan_layouts put in plan. */
PFVM_API void pfvm_accel_plan_free(pfvm_accel_layout_plan *plan);
/* "first", "second", "last", "repl", "pe0" (NULL for another number). */
PFVM_API const char *pfvm_accel_kind_name(int kind);

#ifdef __cplusplus
}
#endif

#endif
