/* exec: the planner and the executor.
 *
 * An executor runs one graph. Binding inputs plans the run: the inference
 * driver gives every value a concrete shape, small integer tensors whose
 * contents are known (shape arithmetic) are folded right away, and every
 * other intermediate tensor gets an offset in one arena, reused between
 * values whose lifetimes do not overlap. Running then executes the kernels
 * in order and allocates nothing, except for outputs whose size depends on
 * data (NonZero, Unique, ...), strings, and sequences. The plan is kept
 * until the input shapes (or the contents of small integer inputs) change. */
#ifndef PFVM_EXEC_H
#define PFVM_EXEC_H

#include "../shape/infer.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Creates an executor for g (NULL: the model's main graph). Resolves every
 * node's operator; an operator pfvm does not know is an error here. The
 * model must outlive the executor. */
PFVM_API pfvm_exec *pfvm_exec_new(pfvm_model *m, pfvm_graph *g, pfvm_status *st);
PFVM_API void pfvm_exec_free(pfvm_exec *e);

/* The inputs a caller provides: graph inputs that are not initializers, in
 * graph order. */
PFVM_API int pfvm_exec_num_inputs(const pfvm_exec *e);
PFVM_API const pfvm_value *pfvm_exec_input(const pfvm_exec *e, int i);
PFVM_API int pfvm_exec_num_outputs(const pfvm_exec *e);
PFVM_API const pfvm_value *pfvm_exec_output_value(const pfvm_exec *e, int i);

/* Declares that input i's contents change from run to run and that no
 * shape depends on them (labels, token ids): the plan never reads them, so
 * binding new contents keeps the plan. By default the contents of small
 * integer inputs (up to PFVM_FOLD_LIMIT elements) are read when planning,
 * as they may be shapes or axes, and binding other contents plans again. A
 * varying input that does feed a shape still works: the shapes it decides
 * are found while running (as for data-dependent sizes). Changing the
 * setting drops the plan. */
PFVM_API pfvm_code pfvm_exec_set_input_varying(pfvm_exec *e, int i, int varying, pfvm_status *st);

/* Uses caller memory as the arena (for heap-free runs); it must hold at
 * least the planned arena size, 64-byte aligned. NULL returns to an arena
 * the executor allocates. */
PFVM_API void pfvm_exec_set_arena(pfvm_exec *e, void *buf, size_t size);

/* Lets kernels split their work over threads: par's parallel_for (see
 * pfvm_parallel in src/opi/opi.h) with par->threads workers; NULL (the
 * default) runs everything on the calling thread. pfvm owns no threads:
 * the caller keeps the pool alive while the executor runs and runs one
 * executor's pfvm_exec_run at a time. Results are bit-identical with any
 * number of threads. The workspace reserved at bind grows with the
 * thread count, so this drops the plan. Subgraph executors (If, Loop,
 * Scan bodies) use their parent's. interp.c (--threads N) shows a
 * pthreads pool. */
PFVM_API void pfvm_exec_set_parallel(pfvm_exec *e, const pfvm_parallel *par);
/* Calls fn(user, n, 0) before and fn(user, n, 1) after the kernel of every
 * node the executor runs (not the nodes folded at plan time, nor those of
 * subgraphs, which count in their If/Loop/Scan node). For profilers: pfvm
 * reads no clock itself, the hook does (interp bench --profile times each
 * op type this way). NULL removes the hook. */
typedef void (*pfvm_node_hook)(void *user, const pfvm_node *n, int done);
PFVM_API void pfvm_exec_set_node_hook(pfvm_exec *e, pfvm_node_hook fn, void *user);
/* The threads kernels split their work over: par->threads of the
 * parallel-for in force, or 1. */
PFVM_API int pfvm_exec_threads(const pfvm_exec *e);

/* ---- resource limits ------------------------------------------------------------
 *
 * What one executor may allocate for a model's tensors, so that a small
 * hostile model cannot make pfvm allocate gigabytes. Checked when binding
 * plans (before the arena is allocated: a model that needs more fails
 * there with one error naming the value and the limit) and when a kernel
 * sizes an output at run time (data-dependent sizes, strings).
 *
 *   max_arena_bytes   the planned arena (every intermediate tensor whose
 *                     size is known when binding, offsets shared)
 *   max_tensor_bytes  any one tensor the executor stores: in the arena,
 *                     folded at plan time, or sized by a kernel while running
 *   max_total_bytes   the arena, the constants folded at plan time and the
 *                     tensors kernels size while running, together
 *   max_loop_iterations  iterations of one run of a Loop node, which a
 *                     model can make endless (no trip count, a condition
 *                     that stays true): past it the run fails with an error
 *                     naming the node
 *   max_run_operations   work of one bind or run: every kernel call counts
 *                     the elements of its inputs and outputs, and kernels
 *                     whose work an attribute or the data multiplies count
 *                     that too (pfvm_kctx_spend); Loop and Scan bodies count
 *                     per iteration. Past it the run fails with an error
 *                     naming the node, so a small model cannot make a run
 *                     take hours. A time bound in all but name: size it from
 *                     the models you trust (interp bench reports it)
 *
 * 0 in a field means its default: PFVM_MAX_ARENA_BYTES,
 * PFVM_MAX_TENSOR_BYTES, PFVM_MAX_TOTAL_BYTES (compile-time macros: 8, 4
 * and 16 GiB on 64-bit targets, half the address space on 32-bit ones;
 * define them smaller for firmware), PFVM_MAX_LOOP_ITERATIONS and
 * PFVM_MAX_RUN_OPERATIONS (no limit unless defined). (size_t)-1 (UINT64_MAX) means no limit. Subgraph
 * executors (If, Loop, Scan bodies) take their parent's limits, each on its
 * own. Inputs, initializers and the executor's bookkeeping are not counted;
 * use a run-time allocator (pfvm_set_allocator) to bound every byte. */
/* (The macros are defined in src/opi/opi.h: kernels that size outputs
 * without an executor check the defaults.) */

typedef struct pfvm_limits {
    size_t max_arena_bytes;
    size_t max_tensor_bytes;
    size_t max_total_bytes;
    size_t max_loop_iterations;
    uint64_t max_run_operations;
} pfvm_limits;

/* The defaults (the macros above). */
PFVM_API pfvm_limits pfvm_limits_default(void);
/* Limits with every field at most `bytes` (the defaults where they are
 * lower): what `interp --max-memory BYTES` sets. */
PFVM_API pfvm_limits pfvm_limits_max(size_t bytes);
/* Sets the executor's limits (NULL: the defaults; 0 fields: their
 * defaults). Drops the plan: the next bind checks the new limits. */
PFVM_API void pfvm_exec_set_limits(pfvm_exec *e, const pfvm_limits *limits);
/* The limits in force (0 fields resolved to their defaults). */
PFVM_API pfvm_limits pfvm_exec_limits(const pfvm_exec *e);
/* Operations the last bind or run counted against max_run_operations
 * (what a run of a trusted model needs, to size the limit). */
PFVM_API uint64_t pfvm_exec_operations(const pfvm_exec *e);

/* Binds inputs (viewed, not copied: they must stay alive during the run)
 * and plans if needed. n must equal pfvm_exec_num_inputs. With inputs NULL
 * and n 0, binds the inputs given one by one with pfvm_exec_set_input (a
 * program holding `pfvm_tensor *` arrays needs no cast to
 * `const pfvm_tensor *const *` that way; C converts `const pfvm_tensor **`
 * implicitly). */
PFVM_API pfvm_code pfvm_exec_bind(pfvm_exec *e, const pfvm_tensor *const *inputs, int n, pfvm_status *st);
/* pfvm_exec_bind for a graph of one input. */
PFVM_API pfvm_code pfvm_exec_bind_one(pfvm_exec *e, const pfvm_tensor *input, pfvm_status *st);
/* Gives input i (0 <= i < pfvm_exec_num_inputs), checked against its
 * declared type, for the next pfvm_exec_bind(e, NULL, 0, st); it is viewed
 * like bind's and stays given until replaced. */
PFVM_API pfvm_code pfvm_exec_set_input(pfvm_exec *e, int i, const pfvm_tensor *input, pfvm_status *st);
/* Runs the bound graph. */
PFVM_API pfvm_code pfvm_exec_run(pfvm_exec *e, pfvm_status *st);
/* Output i of the last run; valid until the next bind, run or free. */
PFVM_API const pfvm_tensor *pfvm_exec_output(const pfvm_exec *e, int i);

/* Checks shapes while running (for tests: `interp test` turns it on): after
 * each node, every output's shape must agree with the type inference left
 * in the graph (value->type, from pfvm_infer_shapes before the executor
 * was made), in this graph and in every subgraph at each of its runs, so a
 * loop body is checked at every iteration. Each run binds the symbols it
 * meets to the dims it sees first (graph inputs, then outer-scope values,
 * then outputs in order); a dim that then evaluates to another size fails
 * the run with a message naming the node, the value, both shapes and the
 * run. Off by default: it costs a binding per run (and may allocate). */
PFVM_API void pfvm_exec_check_shapes(pfvm_exec *e, int on);

/* 1 when the last run drew random numbers (random generators, Dropout in
 * training mode): its outputs are samples, comparable by shape and type. */
PFVM_API int pfvm_exec_was_random(const pfvm_exec *e);

/* ---- training state ------------------------------------------------------------
 *
 * A training graph (pfvm_autodiff_optimizer) reads its state S (the
 * parameters, the optimizer's moments and step count) from initializers
 * and computes the next state as graph outputs; a training step replaces
 * S by its output. pfvm_exec_feedback makes one executor carry that state
 * from run to run: after every successful pfvm_exec_run the output `next`
 * is copied into the initializer `state`, so the next run reads it and the
 * model holds the current values at every step (save the model, or view
 * the initializer's data, to use them). The plan treats such an
 * initializer as a variable: nothing that reads it is folded, so one plan
 * (one bind per new input shape) serves every step. The optimization
 * passes take initializers for constants: before pfvm_optimize on a
 * training graph, list its states as graph inputs too (initializers that
 * are inputs are defaults the passes leave alone; the executor still reads
 * them as initializers), as examples/train_digits.c does. */

/* Carries output `next` (made by a node) into initializer `state` (of the
 * executor's graph) after each run. Both must have one element type and
 * shape (checked now where the shapes are static, else after the run).
 * The initializer's data moves to storage the model owns and pfvm may
 * write (a copy, unless the model allocated it), so weights viewed in
 * caller memory are never written. Drops the plan: the next bind plans
 * again. Declaring a state again replaces its `next`. */
PFVM_API pfvm_code pfvm_exec_feedback(pfvm_exec *e, const char *state, const char *next, pfvm_status *st);
/* pfvm_exec_feedback for every graph output named `<S>_new` whose S is an
 * initializer of the graph (the convention of pfvm_autodiff_optimizer):
 * the number of pairs, or -1 on error (st set). */
PFVM_API int pfvm_exec_feedback_all(pfvm_exec *e, pfvm_status *st);

/* The memory plan of the current binding. */
typedef struct pfvm_plan_entry {
    const pfvm_value *value;
    size_t offset, bytes;
    int first, last;        /* node indices of definition and last use */
    int kind;               /* 0 arena, 1 folded constant, 2 dynamic (run time), 3 input/initializer */
    int in_place;           /* arena: 1 when stored over its node's input 0 (same offset), which that
                               node reads last (PFVM_OP_IN_PLACE kernels such as ScatterElements);
                               2 when stored in its slice of the output of a Concat that reads it last
                               (the Concat copies nothing) */
} pfvm_plan_entry;

typedef struct pfvm_plan_info {
    size_t arena_bytes;       /* the arena the plan needs */
    size_t lower_bound;       /* peak of live bytes: no plan can do better */
    size_t folded_bytes;      /* constants folded at plan time */
    int n_nodes, n_folded;    /* nodes, and nodes folded at plan time */
    const pfvm_plan_entry *entries;
    int n_entries;
} pfvm_plan_info;

/* Fills info for the current plan (after pfvm_exec_bind). */
PFVM_API pfvm_code pfvm_exec_plan_info(const pfvm_exec *e, pfvm_plan_info *info, pfvm_status *st);

/* Stores the current plan (after pfvm_exec_bind) in e's model, for
 * devices whose pfvm is built with PFVM_NO_SHAPE_INFERENCE: every value's
 * concrete type as value_info, and the arena size, each arena value's
 * offset and the element types of fused bodies' values in the metadata
 * entry "pfvm.plan" (still valid ONNX; `interp opt --planned` writes it).
 * A model holding a stored plan binds to it, without inference or
 * planner, inputs of the stored shapes only; pfvm_optimize drops it. Fails
 * when a node would be folded at bind (run the fold pass first), on
 * subgraph executors, or for names with tabs or newlines. */
PFVM_API pfvm_code pfvm_exec_store_plan(pfvm_exec *e, pfvm_status *st);

/* ---- internal: used by control-flow kernels -------------------------------- */

/* Runs subgraph g of the running node with the given inputs (g's formal
 * inputs, in order). Outer-scope values resolve to the caller's. Outputs
 * are deep copies the caller owns (free with pfvm_tensor_free). */
PFVM_INTERNAL pfvm_code pfvm__exec_subgraph(pfvm_exec *parent, const pfvm_graph *g, const pfvm_tensor *const *inputs,
                                            int n_inputs, pfvm_tensor **outputs, int n_outputs, pfvm_status *st);

#ifdef __cplusplus
}
#endif
#endif /* PFVM_EXEC_H */
