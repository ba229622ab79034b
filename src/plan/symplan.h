/* plan/symplan: the memory plan as expressions of the dim symbols. Before
 * any input is bound, it answers "how big an arena does this model need
 * for batch b and sequence s?" with one formula, valid for every binding:
 * each intermediate tensor's size, its offset in the arena, the arena
 * size, and the peak of live bytes (the lower bound no plan can beat).
 * The executor still plans each binding with numbers (pfvm_exec_bind);
 * this plan is what a user with dynamic axes budgets against, and what
 * checkpointing weighs when it trades memory for recomputation. */
#ifndef PFVM_SYMPLAN_H
#define PFVM_SYMPLAN_H

#include "../shape/infer.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pfvm_symplan_entry {
    const pfvm_value *value;
    const pfvm_sym *bytes;  /* size rounded up to the arena alignment */
    const pfvm_sym *offset; /* in the arena */
    int first, last;        /* index of the producing node and of the last reader (n_nodes: a graph output) */
    int slot;               /* arena slot; values sharing a slot never live at once */
    int in_place;           /* 1: stored over the storage of its node's input 0, which n reads last
                               (PFVM_OP_IN_PLACE, pfvm__node_in_place); counted from first + 1 */
} pfvm_symplan_entry;

typedef struct pfvm_symplan {
    const pfvm_sym *arena;  /* arena bytes */
    const pfvm_sym *peak;   /* largest sum of live bytes at one step: a lower bound for any plan */
    pfvm_symplan_entry *entries; /* one per planned tensor, in node order */
    int n_entries;
    int n_slots;
    int n_dynamic;          /* tensors without a size expression (unknown rank, strings, sequences):
                               allocated when they are produced, outside the arena */
    int n_constant;         /* node outputs known before running (folded when binding, no arena space) */
    int n_nodes;
} pfvm_symplan;

/* Alignment of every arena offset and size, in bytes (as the executor). */
#define PFVM_SYMPLAN_ALIGN PFVM_DATA_ALIGN

/* Plans g's intermediate tensors (node outputs; inputs and initializers
 * live outside the arena) from the types pfvm_infer_shapes gave them.
 * Outputs computable from constants alone are folded by the executor
 * and take no space here. Tensors share an arena slot when their lifetimes are disjoint and the
 * symbolic sizes prove that the slot fits for every binding, so the plan
 * is valid whatever the dims turn out to be. Free with pfvm_symplan_free. */
PFVM_API pfvm_code pfvm_symplan_build(const pfvm_graph *g, pfvm_symplan *p, pfvm_status *st);
PFVM_API void pfvm_symplan_free(pfvm_symplan *p);

/* internal, shared with the recompute pass (the same accounting) */
/* Bytes of a tensor type rounded up to the alignment, or NULL when the
 * type has no size expression. */
PFVM_INTERNAL const pfvm_sym *pfvm__symplan_bytes(pfvm_symtab *t, const pfvm_type *ty);
/* Flags (by value id, heap, pfvm__free) the values of g known before
 * running: initializers, and outputs of deterministic nodes without
 * subgraphs whose inputs are all known (Constant, weight casts, shape
 * arithmetic on constants). The executor folds these when it binds, so
 * they take no arena space. NULL when out of memory. */
PFVM_INTERNAL unsigned char *pfvm__symplan_constants(const pfvm_graph *g);
/* The values whose storage node n reads (into *out, an stb_ds array it
 * resets): pfvm__node_deps without the inputs of a PFVM_OP_SHAPE_ONLY node
 * (Shape, Size) whose rank is known, since binding the shapes folds such
 * a node before anything runs. A gradient's Shape(x) then no longer keeps
 * a large activation x alive. 0 when out of memory. */
PFVM_INTERNAL int pfvm__node_data_deps(const pfvm_node *n, pfvm_value ***out);
/* Whether n's output 0 may take the storage of its input 0 when n is the
 * last reader of that input: a PFVM_OP_IN_PLACE kernel (ScatterElements,
 * Softmax, Reshape as a view...), input 0 made by a node of the same graph,
 * not a graph output, read once by n, with output 0's dtype and provably
 * its element count.
 * The three planners (the executor's, the symbolic one and the recompute
 * simulation) apply the same rule, so that their numbers agree. */
PFVM_INTERNAL int pfvm__node_in_place(const pfvm_node *n);
/* The axis (in [0, rank)) along which n's output 0, of that rank, is its
 * inputs one after another (PFVM__OP_JOIN: Concat), or -1. The executor's
 * planner stores such inputs in their slices of the output where each is
 * one contiguous range of it; the symbolic planner and the recompute
 * simulation count them apart, so their peaks are upper bounds there. */
#if PFVM__HAVE_JOIN
PFVM_INTERNAL int pfvm__node_join_axis(const pfvm_node *n, int rank);
#endif

#ifdef __cplusplus
}
#endif
#endif /* PFVM_SYMPLAN_H */
