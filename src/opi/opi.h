/* ops: the operator registry. Everything pfvm knows about an operator lives
 * in its pfvm_op_def: name, domain and opset range, arity, type and shape
 * inference, reference kernel, and fusion kind. Passes and the executor ask
 * the registry; they never switch on op names.
 *
 * Each operator family is one file (src/ops/elementwise.c, nn.c, ...) that
 * exports a table; registry.c lists the tables. */
#ifndef PFVM_OPI_H
#define PFVM_OPI_H

#include "../ir/ir.h"

#ifdef __cplusplus
extern "C" {
#endif

/* TVM-style fusion categories. */
typedef enum pfvm_fusion_kind {
    PFVM_FUSE_OPAQUE = 0,
    PFVM_FUSE_ELEMENTWISE,
    PFVM_FUSE_BROADCAST,
    PFVM_FUSE_INJECTIVE,
    PFVM_FUSE_REDUCTION,
    PFVM_FUSE_OUT_FUSABLE /* Conv/Gemm/MatMul: accept element-wise epilogues */
} pfvm_fusion_kind;

/* ---- inference ------------------------------------------------------------ */

/* What inference knows about one value: its type and, for small integer
 * tensors whose contents are known before running, the contents. `value`
 * is a concrete tensor (constant, initializer, bound input, or folded at
 * plan time); `sym` is the same as symbolic scalars (data propagation),
 * n_sym entries in row-major order, or NULL. */
typedef struct pfvm_ival {
    pfvm_type type;
    const pfvm_tensor *value;
    const pfvm_sym **sym;
    int n_sym;
} pfvm_ival;

typedef struct pfvm_ictx {
    const pfvm_node *node;
    pfvm_symtab *syms;
    int n_in, n_out;
    const pfvm_ival *const *in; /* n_in entries; NULL for omitted optional inputs */
    pfvm_ival *const *out;      /* n_out entries; NULL for omitted optional outputs */
    pfvm_status *st;
    pfvm_arena *arena;          /* storage for `sym` arrays, freed with the results */
    struct pfvm__infer_driver *driver; /* the whole-graph analysis (src/shape), or NULL at bind time */
    const struct pfvm__ictx_services *services; /* the driver's, with it */
} pfvm_ictx;

/* Receives what inference learned about the values of one graph (g itself
 * or a subgraph): iv[i] describes g->values[i] (type and, when known,
 * contents: a constant tensor or symbolic scalars), n entries. The tensors
 * and symbol arrays it points to live in the model's arena; iv itself is
 * freed when keep returns, so copy the entries. */
typedef void (*pfvm_infer_keep_fn)(void *user, const pfvm_graph *g, const pfvm_ival *iv, int n);

/* pfvm:internal-begin */
/* Whole-model inference that hands each graph's knowledge to keep
 * (pfvm__infer_shapes_keep, src/shape): what helpers get it through. */
typedef pfvm_code (*pfvm_infer_keep_all_fn)(pfvm_graph *g, pfvm_infer_keep_fn keep, void *user, pfvm_status *st);
/* pfvm:internal-end */

/* Sets the types (and, where it can, symbolic values) of ctx->out. Called
 * with symbolic input shapes while analysing and with constant shapes at
 * bind time, so one function serves both. Returns an error naming the
 * problem (the caller prefixes node and op). */
typedef pfvm_code (*pfvm_infer_fn)(pfvm_ictx *ctx);

/* ---- kernels ------------------------------------------------------------------ */

/* Default bounds on what kernels allocate (pfvm_limits, src/exec/exec.h). */
#ifndef PFVM_MAX_TENSOR_BYTES
#define PFVM_MAX_TENSOR_BYTES ((size_t)(SIZE_MAX > 0xffffffffu ? (uint64_t)4 << 30 : SIZE_MAX / 2))
#endif
#ifndef PFVM_MAX_ARENA_BYTES
#define PFVM_MAX_ARENA_BYTES ((size_t)(SIZE_MAX > 0xffffffffu ? (uint64_t)8 << 30 : SIZE_MAX / 2))
#endif
#ifndef PFVM_MAX_TOTAL_BYTES
#define PFVM_MAX_TOTAL_BYTES ((size_t)(SIZE_MAX > 0xffffffffu ? (uint64_t)16 << 30 : SIZE_MAX / 2))
#endif
#ifndef PFVM_MAX_LOOP_ITERATIONS
#define PFVM_MAX_LOOP_ITERATIONS ((size_t)-1)
#endif
#ifndef PFVM_MAX_RUN_OPERATIONS
#define PFVM_MAX_RUN_OPERATIONS UINT64_MAX
#endif


typedef struct pfvm_exec pfvm_exec;

typedef struct pfvm_kctx {
    const pfvm_node *node;
    int n_in, n_out;
    const pfvm_tensor *const *in; /* NULL for omitted optional inputs */
    pfvm_tensor *const *out;      /* NULL for omitted optional outputs */
    pfvm_status *st;
    pfvm_exec *exec;              /* for subgraphs and dynamic outputs */
    void *state;                  /* per-node state kept with pfvm_kctx_set_state, or NULL */
    size_t max_total_bytes;       /* the executor's bound on what it allocates (pfvm_limits); 0: the default */
    size_t max_loop_iterations;   /* the executor's bound on one Loop's iterations (pfvm_limits); 0: the default */
    const struct pfvm__kctx_services *services; /* the executor's (src/exec), or NULL: none */
} pfvm_kctx;

/* Computes the outputs. Output tensors arrive with dtype, shape and storage
 * set by the planner when their shapes are known at bind time; otherwise
 * (data-dependent shapes) the kernel calls pfvm_kctx_output to get storage. */
typedef pfvm_code (*pfvm_kernel_fn)(pfvm_kctx *ctx);

/* Optional: validates attributes once per node. */
typedef pfvm_code (*pfvm_check_fn)(const pfvm_node *node, pfvm_status *st);

/* Attribute schema entry, for validation and documentation. */
typedef struct pfvm_attr_spec {
    const char *name;
    pfvm_attr_type type;
    int required;
} pfvm_attr_spec;

/* ---- hooks owned by passes ------------------------------------------------ */

/* Contexts defined by the modules that call the hooks: src/passes/simplify
 * (pfvm_rewrite), src/passes/autodiff (pfvm_grad_ctx), src/ops/fused
 * (pfvm_fuse_ctx). An operator's definition fills the hooks that apply. */
typedef struct pfvm_rewrite pfvm_rewrite;
typedef struct pfvm_grad_ctx pfvm_grad_ctx;
typedef struct pfvm_fuse_ctx pfvm_fuse_ctx;

/* Rewrites `node` into something cheaper when that is proven equal (a
 * Reshape to its input's shape becomes its input, x*1 becomes x, ...);
 * leaves it alone otherwise. */
typedef pfvm_code (*pfvm_simplify_fn)(pfvm_rewrite *rw, pfvm_node *node);
/* Emits the backward nodes of `node`: reads the gradients of its outputs
 * and adds to the gradients of its inputs. */
typedef pfvm_code (*pfvm_grad_fn)(pfvm_grad_ctx *g, const pfvm_node *node);
/* Emits the fused-loop code of `node` inside a fused group. */
typedef pfvm_code (*pfvm_fuse_fn)(pfvm_fuse_ctx *f, const pfvm_node *node);

/* Concrete dims of one input or output, for cost hooks (rank -1: unknown). */
typedef struct pfvm_dims {
    int rank;
    int64_t d[PFVM_MAX_RANK];
} pfvm_dims;

/* Arithmetic operations one run of `node` performs, given the concrete
 * dims of its inputs and outputs (omitted ones have rank -1), or -1 when
 * they do not say. A multiply-add counts 2. Operators whose work is not
 * about one operation per output element (contractions: MatMul, Gemm,
 * Conv...) define it; pfvm_node_flops counts the others. Used to weigh
 * recomputation against memory (src/passes/recompute). */
typedef double (*pfvm_flops_fn)(const pfvm_node *node, const pfvm_dims *in, int n_in, const pfvm_dims *out,
                                int n_out);

/* pfvm_op_def.flags */
#define PFVM_OP_NONDETERMINISTIC 1u /* random generators: never folded */
#define PFVM_OP_IN_PLACE 2u /* the kernel is right with output 0 in input 0's storage (a fused group
                               computes a row op's input into its output, then runs it there; the
                               memory planners store output 0 over a dead input 0 of the same size:
                               Softmax, the Scatter family, and Reshape and its family as views) */
#define PFVM_OP_SHAPE_ONLY 4u /* reads only its inputs' types and shapes, never their elements: once the
                                 shapes are bound it is folded, and its inputs' storage need not outlive
                                 their last other reader (src/plan/symplan: pfvm__node_data_deps) */
#define PFVM_OP_PER_CHANNEL 8u /* channel c (axis 1) of each output is made from channel c of input 0 alone
                                  (pooling; an element-wise op with one input is per channel without the
                                  flag): src/passes/recompute_slice.c slices chains of them by channel */
#define PFVM_OP_CHANNEL_ROWS 16u /* channel c (axis 1) of output 0 is made from all of input 0 and row c
                                    (axis 0) of each other input, when input 1's axis 1 spans input 0's
                                    (no channel groups): Conv */
#define PFVM_OP_PURE 32u /* a program's operator (pfvm_op_register) whose kernel is a function of its inputs and
                            attributes alone: the passes may fold and merge its nodes like pfvm's own */
#define PFVM_OP_SEQUENCES 64u /* takes sequences and optionals as inputs (the Sequence and Optional operators,
                                 Identity, control flow); an operator without the flag given one fails
                                 inference and running with an error naming the input */

/* pfvm:internal-begin */
/* Operator selection. The amalgamation (amalgamate.py) writes every entry
 * of the operator tables as PFVM__OP_SEL(Name, entry): the entry itself,
 * or, when PFVM_OPS_SELECTED is defined, only where PFVM_OP_<Name> is
 * defined as 1 (`interp ops --config MODEL...` writes such a header), so
 * that the linker drops the other operators' kernels and hooks. */
#ifdef PFVM_OPS_SELECTED
#define PFVM__SEL_SECOND(a, b, ...) b
#define PFVM__SEL_SECOND_X(...) PFVM__SEL_SECOND(__VA_ARGS__)
#define PFVM__SEL_PROBE_1 ~, 1
#define PFVM__SEL_ON_(v) PFVM__SEL_SECOND_X(PFVM__SEL_PROBE_##v, 0, ~)
#define PFVM__SEL_ON(v) PFVM__SEL_ON_(v)
#define PFVM__SEL_KEEP_1(...) __VA_ARGS__,
#define PFVM__SEL_KEEP_0(...)
#define PFVM__SEL_IF_(c, ...) PFVM__SEL_KEEP_##c(__VA_ARGS__)
#define PFVM__SEL_IF(c, ...) PFVM__SEL_IF_(c, __VA_ARGS__)
#define PFVM__OP_SEL(name, ...) PFVM__SEL_IF(PFVM__SEL_ON(PFVM_OP_##name), __VA_ARGS__)
#else
#define PFVM__OP_SEL(name, ...) __VA_ARGS__,
#endif
/* PFVM_NO_SHAPE_INFERENCE (devices that bind models with a stored plan,
 * pfvm_exec_store_plan): the amalgamation defines every table's inference
 * hooks (and the simplify, flops and accel hooks, which only inference's
 * users call) as NULL like the hooks below; other definitions use this
 * macro. */
#ifdef PFVM_NO_SHAPE_INFERENCE
#define PFVM__NO_INFERENCE 1
#define PFVM__INFER_HOOK(f) NULL
#else
#define PFVM__NO_INFERENCE 0
#define PFVM__INFER_HOOK(f) f
#endif
/* PFVM_NO_AUTODIFF and PFVM_NO_FUSION: the amalgamation defines the
 * tables' gradient builders (X_grad) and fusion hooks (X_fuse) as NULL
 * around each table. What is left out leaves static functions unused. */
#if (defined(PFVM_OPS_SELECTED) || defined(PFVM_NO_AUTODIFF) || defined(PFVM_NO_FUSION) || defined(PFVM_NO_SHAPE_INFERENCE) || \
     defined(PFVM_FLOAT32_ONLY) || defined(PFVM_TERSE_MESSAGES)) && \
    defined(__GNUC__)
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wunused-const-variable"
#endif
/* PFVM_TERSE_MESSAGES: functions that only messages called are named in
 * unevaluated sizeofs only */
#if defined(PFVM_TERSE_MESSAGES) && defined(__clang__)
#pragma clang diagnostic ignored "-Wunneeded-internal-declaration"
#endif
/* pfvm:internal-end */
/* Lowering of one node for pfvm_accel.h (src/accel): the accel layer has
 * placed every input and output in each PE's memory (arg: byte offset,
 * elements per PE, shape; `replicated`: the whole tensor on every PE, else
 * rows: the first axis block-split over the PEs in use, the other axes in
 * the PE) and calls the hook, which writes per-PE instructions of the accel
 * program format (README.md, "accel programs") through emit and takes
 * temporary space from scratch. It returns PFVM_ERR_UNSUPPORTED, naming the
 * node, for a case it does not lower. The ops layer sees only this struct,
 * so it never links against src/accel. */
typedef struct pfvm_accel_arg {
    int64_t off;   /* byte offset in each PE's memory */
    int64_t elems; /* elements per PE */
    int rank;
    int64_t dims[PFVM_MAX_RANK];
    int replicated;
    int64_t dram; /* streamed (ctx.stream): byte offset of the whole tensor, row-major, in the root memory */
    /* streamed: vrank > 0 when the tensor is a strided view (a Slice's
     * output read through its reader's map, pfvm_acl_view_of): the
     * element of row-major index f in the view's dims vdims[0..vrank) is at
     * element dram / 4 + sum idx_i * vstr[i] of the root memory, idx the
     * digits of f in vdims (any reshape keeps f); 0: row-major at dram */
    int vrank;
    int64_t vdims[PFVM_MAX_RANK], vstr[PFVM_MAX_RANK];
    /* streamed, with vrank > 0: the view's elements are scaled by vscale
     * (0 or 1: not scaled), a constant factor its reader applies
     * (pfvm_acl_view_scale: the queries' Div before the attention MatMul) */
    double vscale;
} pfvm_accel_arg;
#define PFVM_ACCEL_MAX_ARGS 8
typedef struct pfvm_accel_ctx pfvm_accel_ctx;
struct pfvm_accel_ctx {
    const pfvm_node *node;
    pfvm_accel_arg in[PFVM_ACCEL_MAX_ARGS], out[PFVM_ACCEL_MAX_ARGS];
    int n_in, n_out;
    int simd;     /* the PE's SIMD width (for cost-aware choices) */
    void *user;   /* the accel layer's state */
    pfvm_code (*emit)(pfvm_accel_ctx *c, const char *fmt, ...);
    int64_t (*scratch)(pfvm_accel_ctx *c, int64_t bytes); /* byte offset, or -1: memory full */
    pfvm_status *st;
    /* streamed (the scheduler's plan when tensors do not fit in the PEs):
     * every tensor is in the root level's memory (arg.dram), the hook owns
     * bytes [0, pe_mem) of each of the `pes` PEs and writes the whole
     * node's program (`load`, `on`, compute, `store`, `barrier`); off and
     * elems are unused */
    int stream;
    int64_t pes, pe_mem;
    int64_t pe_used; /* set by a streamed hook: the most PE bytes it uses */
    /* the links below the root, outermost first, for cost-aware tilings
     * (streamed): link k enters each of the instances of the target's
     * level k + 1, which holds link_pes[k] PEs; link_down/link_up are its
     * bytes per cycle; link_bcast[k]: the links below it broadcast (it
     * carries data once for all the PEs under it); macs: float MACs per
     * cycle of one PE */
    int nlinks;
    int link_bcast[8];
    /* streamed: when not NULL, emits the node's single consumer (an
     * element-wise operator, through its own resident hook) on n elements
     * at PE byte offset off, in place; a hook that calls it on each output
     * tile before storing sets post_done (the consumer is then a view) */
    pfvm_code (*post)(pfvm_accel_ctx *c, int64_t off, int64_t n);
    int post_done;
    int64_t link_pes[8];
    double link_down[8], link_up[8];
    double macs;
    /* streamed: when not NULL, emits the node's single consumer that takes
     * a second activation of the output's shape (a residual Add), through
     * its own resident hook, on n elements at PE byte offset off, the
     * other operand's matching elements at res_off, in place (before
     * post, which is then that consumer's consumer); the other operand is
     * row-major at root byte res_dram. A hook that loads the other
     * operand's box beside each output tile and calls res on it sets
     * res_done; one that does not leaves it 0 and the emitter lowers the
     * node again without res. */
    pfvm_code (*res)(pfvm_accel_ctx *c, int64_t off, int64_t res_off, int64_t n);
    int res_done;
    int64_t res_dram;
    /* streamed: when not NULL, emits the node's single consumer that
     * takes a constant vector along the output's last axis (a bias Add),
     * through its own resident hook, on a tile of rows x cols at PE byte
     * offset off, the vector's elements for the tile's columns at vec_off
     * (before res and post, which then belong to that consumer's
     * consumers); the whole vector is row-major at root byte vec_dram. A
     * hook that loads the slice beside each output tile and calls vec sets
     * vec_done; one that does not leaves it 0 and the emitter lowers the
     * node again without vec. */
    pfvm_code (*vec)(pfvm_accel_ctx *c, int64_t off, int64_t vec_off, int64_t rows, int64_t cols);
    int vec_done;
    int64_t vec_dram;
    /* streamed: set by a hook around its waves: 0, a wave smaller than
     * the machine is dealt over the instances under the slowest links
     * only (the default); 1, over the instances of every level (a small
     * wave of tiles that each read little, Gemm's, spread over all L1B
     * links instead of crowding a few) */
    int deal_all;
    /* streamed, with deal_all: runs of this many consecutive tiles (> 1)
     * stay on consecutive PEs, the runs dealt over every level (a split
     * row's chunks under one link, so that what they all read is one
     * broadcast line); the hook checks that the runs do not overlap
     * (pfvm__acl_runs_fit) */
    int deal_run;
    /* streamed: the nodes after this one that its lowering may run in the
     * same tiles, so that their inputs never go to the root memory (a
     * chain: chain[k] is the single consumer of chain[k - 1]'s output, or
     * of this node's for k = 0, past the activation each one's post
     * applies; in[0] is that input, never stored; the other inputs are in
     * the root memory; chain[k].post applies chain[k]'s activation; only
     * the last one's output is stored, at its out[0].dram, after res when
     * res is set: res then applies to that output). A hook that runs all of
     * them sets chain_done; one that does not leaves it 0 and the emitter
     * lowers the node again without the chain. */
    int n_chain, chain_done;
    struct pfvm_accel_ctx *chain;
    /* streamed: a weight whose bytes later nodes read again (the same data
     * at root byte keep_dram: a layer's weights shared with the next),
     * with a region of keep_bytes at PE byte keep_off (above pe_mem) that
     * outlives the node on every PE; keep_bytes 0: none. A hook may load
     * its tiles of that weight into the region, skipping a tile's load on
     * a PE whose keep_tag[pe] names that tile already (it sets keep_tag[pe]
     * when it loads one), so that only the first reader brings it in. */
    int64_t keep_dram, keep_off, keep_bytes;
    int64_t *keep_tag;
    int keep_readers; /* the nodes that read the kept weight (a tiling may count its share) */
    /* streamed: when not NULL, emits the row consumer of the value the
     * tiles leave (after res and post: a LayerNormalization or Softmax
     * over the last axis whose other inputs are constant rows; taken by
     * the strided copy and by Gemm/MatMul), through its own
     * resident hook, in place on a tile of whole rows, rows x row_cols at
     * PE byte offset off: its row_par constant rows (row_cols elements
     * each, input k + 1 at root byte row_dram[k]) loaded by the hook at
     * par_off, par_off + row_cols * 4, ..., and row_tmp(c, rows) bytes of
     * temporaries at tmp_off (row_cycles(c, rows): the PE cycles it
     * takes, as the simulator counts them; -1: it does not lower). The consumer is then a view and the value
     * before it never reaches the root memory. A hook that applies it
     * sets row_done; one that does not leaves it 0 and the emitter lowers
     * the node again without. */
    pfvm_code (*row)(pfvm_accel_ctx *c, int64_t off, int64_t rows, int64_t par_off, int64_t tmp_off);
    int64_t (*row_tmp)(pfvm_accel_ctx *c, int64_t rows);
    double (*row_cycles)(pfvm_accel_ctx *c, int64_t rows);
    int row_done, row_par;
    int64_t row_cols, row_dram[2];
};
typedef pfvm_code (*pfvm_accel_fn)(pfvm_accel_ctx *c);

/* Bytes of workspace (pfvm_kctx_scratch) one run of `node` asks for, given
 * concrete dims as for pfvm_flops_fn. The executor reserves the largest
 * when it binds, so that running allocates nothing; a kernel that asks
 * for more than its hook said still gets it, by growing the workspace. */
typedef size_t (*pfvm_workspace_fn)(const pfvm_node *node, const pfvm_dims *in, int n_in, const pfvm_dims *out,
                                    int n_out);

/* Runs once per node when an executor plans the graph (pfvm_exec_bind with
 * new shapes), before any run, also for a node that a fused group runs
 * first (its head): k->in[j] holds input j's type and shape where the
 * planner knows it, its data only where consts[j] is non-NULL (an
 * initializer or a folded constant). It may precompute from the constants
 * (Conv packs its weights) into a state it returns in *state with its
 * *free_fn (both start as k->state and its free function: leaving them
 * keeps the state), which later runs find in k->state. The kernel must
 * still work without it (no executor, other inputs at run time). */
typedef pfvm_code (*pfvm_prepare_fn)(const pfvm_kctx *k, const pfvm_tensor *const *consts, void **state,
                                     void (**free_fn)(void *));

/* A kernel variant that a firmware build may leave out: `interp ops
 * --config` writes `#define <macro> 1` (with `why` as its comment) when
 * the models use the operator but no node of theirs needs the variant.
 * `needed` sees the node and its inputs as the values they stand for
 * (through the parameters of function bodies); it answers 1 when the
 * variant may run, also when a type or shape it looks at is not known. */
typedef struct pfvm_op_variant {
    const char *macro;
    const char *why;
    int (*needed)(const pfvm_node *node, const pfvm_value *const *inputs);
} pfvm_op_variant;

struct pfvm_op_def {
    const char *name;
    const char *domain;      /* "" = default ONNX domain */
    int since, until;        /* opset range, inclusive; until 0 = open */
    int min_inputs, max_inputs;   /* max -1 = variadic */
    int min_outputs, max_outputs;
    pfvm_infer_fn infer;
    pfvm_kernel_fn kernel;
    pfvm_check_fn check;
    pfvm_fusion_kind fusion;
    const char *types;       /* element types the kernel supports, for docs */
    const pfvm_attr_spec *attrs; /* NULL-name terminated, or NULL */
    unsigned flags;          /* PFVM_OP_* */
    pfvm_simplify_fn simplify; /* or NULL */
    pfvm_grad_fn grad;         /* or NULL: not differentiable (yet) */
    pfvm_fuse_fn fuse;         /* or NULL: never inside a fused group */
    pfvm_flops_fn flops;       /* or NULL: the default count (see pfvm_flops_fn) */
    pfvm_accel_fn accel;       /* or NULL: no accel lowering (pfvm_accel.h's fallback) */
    pfvm_workspace_fn workspace; /* or NULL: the kernel asks for no pfvm_kctx_scratch */
    pfvm_prepare_fn prepare;     /* or NULL: nothing to do at bind */
    const pfvm_op_variant *variants; /* NULL-macro terminated, or NULL: none */
};

/* The streamed lowering (pfvm_accel_ctx.stream) of an operator whose
 * tensors do not fit in the PEs' memories (src/ops/accel_lower.c), or NULL
 * when it has none. */
PFVM_INTERNAL pfvm_accel_fn pfvm_acl_streamed(const pfvm_op_def *op);
/* Whether input i of node n (the shapes of its inputs in[0..n_in) and of
 * its output out) may be written by its producer straight into n's output
 * in the root memory: the input is then the output's elements [*off,
 * *off + its size), row-major (Concat with every axis before its axis of
 * size 1), and n, once all its inputs are there, is a view (streamed
 * plan; src/ops/accel_lower.c). 0: the input has a buffer of its own. */
PFVM_INTERNAL int pfvm_acl_input_part(const pfvm_node *n, const pfvm_accel_arg *in, int n_in,
                                      const pfvm_accel_arg *out, int i, int64_t *off);
/* Whether node n (its input 0's and output's shapes in, out) computes the
 * part of its output from the part of its input 0 holding elements [off,
 * off + count) alone, both parts row-major and contiguous: then *pin and
 * *pout are the parts' shapes and *poff the output part's first element,
 * and n may run on each part of its input where that part is computed
 * (a MaxPool after a channel Concat: squeezenet; streamed plan,
 * src/ops/accel_lower.c). */
PFVM_INTERNAL int pfvm_acl_part_through(const pfvm_node *n, const pfvm_accel_arg *in, const pfvm_accel_arg *out,
                                        int64_t off, int64_t count, pfvm_accel_arg *pin, pfvm_accel_arg *pout,
                                        int64_t *poff);
/* Whether node n's output (its inputs' and output's shapes in[0..n_in),
 * out; in[0] may itself be a strided view) is a strided view of its input
 * 0 in the streamed plan: then *view is out with vrank, vdims and vstr
 * set and *base the view's first element (elements from in[0].dram), and
 * the node need not run when its reader accepts the view (Slice,
 * Transpose; src/ops/accel_lower.c). */
PFVM_INTERNAL int pfvm_acl_view_of(const pfvm_node *n, const pfvm_accel_arg *in, int n_in, const pfvm_accel_arg *out,
                                   pfvm_accel_arg *view, int64_t *base);
/* Whether node n's streamed lowering reads its input i (in[i], a strided
 * view: vrank > 0) through the view's map, so that the view needs no copy
 * of its own (Transpose and Slice as input 0, Gemm and MatMul as A or B;
 * src/ops/accel_lower.c). */
PFVM_INTERNAL int pfvm_acl_view_reader(const pfvm_node *n, const pfvm_accel_arg *in, int n_in,
                                       const pfvm_accel_arg *out, int i);
/* Whether node n's output is its input i times a constant scalar (its
 * other input), by n's own accel lowering (one `imm mul` or `imm div` by
 * the constant: x * c, c * x, x / c): then *scale is the factor and, when
 * input i is a strided view, n's output is that view scaled, read by a
 * reader that applies the factor (pfvm_acl_view_reader with
 * in[i].vscale: Gemm's and MatMul's alpha; src/ops/accel_lower.c). */
PFVM_INTERNAL int pfvm_acl_view_scale(const pfvm_node *n, const pfvm_accel_arg *in, int n_in,
                                      const pfvm_accel_arg *out, int i, double *scale);
/* The streamed plan's lowering of a row-wise node (element-wise, broadcast
 * or reduction operator over the last axis: its inputs of the output's
 * leading dims or small vectors along the last axis) by its own resident
 * hook on tiles of rows (src/ops/accel_lower.c); PFVM_ERR_UNSUPPORTED,
 * having emitted nothing, when the node is not such. */
PFVM_INTERNAL pfvm_code pfvm_acl_stream_rows(pfvm_accel_ctx *c);

/* Layout classes of the accel layout planner (src/accel/plan.c): a tensor
 * with one axis block-split over the PEs (the first; the second, rank >= 3;
 * the last, rank >= 2), whole on every PE, or whole on PE 0 (the
 * fallback). */
/* pfvm:internal-begin */
#define PFVM_ACL_L_FIRST 0
#define PFVM_ACL_L_SECOND 1
#define PFVM_ACL_L_LAST 2
#define PFVM_ACL_L_REPL 3
#define PFVM_ACL_L_PE0 4
#define PFVM_ACL_NL 5
/* pfvm:internal-end */
/* Whether node n's accel lowering can produce its outputs in layout class
 * `kind` (in/out: the inputs' and outputs' ranks and dims; rank -1 for an
 * absent one); if so, sets in_kind[i], the class each input must be in,
 * and *mac: 1 when the node's flops run on the MAC unit (a gemm), 0 when
 * on the SIMD lanes (src/ops/accel_lower.c). */
PFVM_INTERNAL int pfvm_acl_layout_rule(const pfvm_node *n, const pfvm_accel_arg *in, const pfvm_accel_arg *out,
                                       int kind, int *in_kind, int *mac);

/* Finds the definition for (domain, name) at an opset version; NULL when
 * pfvm has none. */
PFVM_API const pfvm_op_def *pfvm_op_find(const char *domain, const char *name, int64_t opset);
/* Iterates over every definition (for docs): returns NULL past the end. */
PFVM_API const pfvm_op_def *pfvm_op_at(int index);

/* Registers a program's own operator (the definition must outlive its
 * use; typically a static const). It is found before pfvm's own, by domain,
 * name and opset range, when models are loaded or nodes added afterwards.
 * Its hooks: `infer` (pfvm_infer_same_as_first, or pfvm_ival_set_tensor on
 * c->out[i]) and `kernel` (outputs arrive shaped and with storage when the
 * planner knows their shapes; otherwise pfvm_kctx_output); the other hooks
 * (simplify, grad, fuse) may be NULL. The passes treat it as opaque: a
 * node is simplified, fused or differentiated only through the hook its
 * definition gives (without `grad`, pfvm_autodiff through it fails with
 * "no gradient for this operator"), and unless `flags` has PFVM_OP_PURE
 * its kernel never runs before the model does (no folding at optimization,
 * inference or plan time) and its nodes are never merged or recomputed:
 * the registry keeps a copy of the definition with
 * PFVM_OP_NONDETERMINISTIC added. Process-wide, not thread-safe: call
 * it before building or loading models. At most PFVM_MAX_USER_OPS (64)
 * registrations. */
PFVM_API pfvm_code pfvm_op_register(const pfvm_op_def *def, pfvm_status *st);
/* Operations one run of node n performs with its value types evaluated
 * under binding b (NULL: constant shapes only): the operator's flops hook,
 * else one per element of the largest output, or of the largest input for
 * reductions. -1 when a shape it needs is not known. */
PFVM_API double pfvm_node_flops(const pfvm_node *n, const pfvm_binding *b);
/* Elements of d (1 for rank 0), or -1 when the rank is unknown. */
PFVM_API double pfvm_dims_numel(const pfvm_dims *d);
/* Resolves node->op and node->opset for every node of g and its subgraphs.
 * Unknown ops are an error only when `strict`. */
PFVM_API pfvm_code pfvm_graph_resolve_ops(pfvm_graph *g, int strict, pfvm_status *st);

/* ---- helpers for operator implementations (internal) ----------------------- */

/* Gives output i the shape `dims` and storage for this run (for outputs
 * whose shape the planner could not know). */
PFVM_API pfvm_code pfvm_kctx_output(pfvm_kctx *k, int i, pfvm_dtype dtype, int rank, const int64_t *dims);

/* Workspace for a kernel that needs one (recurrent state, ...): valid
 * until the kernel returns. The executor keeps one buffer, grown on first
 * need, so runs after the first allocate nothing. NULL on failure (the
 * status says why). */
PFVM_API void *pfvm_kctx_scratch(pfvm_kctx *k, size_t bytes);

/* ---- threads ------------------------------------------------------------------
 *
 * pfvm starts no threads: a program that wants kernels to use several cores
 * gives its executor a parallel-for (pfvm_exec_set_parallel, src/exec),
 * and the kernels that split their work (the matrix engine of MatMul, Gemm
 * and Conv, depthwise convolution, pooling, the fused and plain
 * element-wise loops, Concat) run their parts through it. Parts
 * write disjoint outputs and never split a sum, so results are the same
 * bits with any number of threads. */
typedef void (*pfvm_task_fn)(void *ctx, int i);
typedef struct pfvm_parallel {
    /* Runs fn(ctx, i) once for every i in [0, n) (n >= 1), on any threads,
     * possibly at the same time, and returns when all have returned. */
    void (*parallel_for)(void *user, int n, pfvm_task_fn fn, void *ctx);
    void *user;  /* parallel_for's first argument (a thread pool) */
    int threads; /* tasks it runs at once; 1 or less: the hook is not used */
} pfvm_parallel;

/* How many parts a kernel should split its work into: the executor's
 * pfvm_parallel threads, 1 without one (and without an executor). */
PFVM_API int pfvm_kctx_threads(const pfvm_kctx *k);
/* Runs fn(ctx, i) for i in [0, n) through the executor's parallel-for, or
 * in order on this thread without one (or when n is 1). The tasks must
 * write disjoint memory and call no pfvm_kctx_* function; a task that
 * needs a workspace takes part i of one asked for before (with n at most
 * pfvm_kctx_threads parts, so that what the executor reserves covers it:
 * it reserves a workspace hook's bytes once per thread). */
PFVM_API void pfvm_kctx_parallel(pfvm_kctx *k, int n, pfvm_task_fn fn, void *ctx);

/* Counts `operations` against the run's budget (pfvm_limits.max_run_operations)
 * for work a kernel does beyond reading its inputs and writing its outputs
 * once, which the executor counts before calling it: a kernel whose work an
 * attribute or the data multiplies (sampling grids, contractions) spends it
 * before doing it. Returns an error naming the node once the run is past
 * its budget (the kernel returns it); PFVM_OK without an executor. */
PFVM_API pfvm_code pfvm_kctx_spend(pfvm_kctx *k, uint64_t operations);

/* Keeps `state` for this node until the executor is freed, which calls
 * free_fn(state); later runs find it in k->state (compiled programs,
 * caches). Replaces and frees a previous state. Without an executor the
 * state is freed at once and k->state is NULL. */
PFVM_INTERNAL void pfvm_kctx_set_state(pfvm_kctx *k, void *state, void (*free_fn)(void *));

/* The executor's random generator (64 random bits); marks the run as
 * random. pfvm_kctx_seed restarts the sequence (the `seed` attribute). */
PFVM_INTERNAL uint64_t pfvm_kctx_random(pfvm_kctx *k);
PFVM_INTERNAL void pfvm_kctx_seed(pfvm_kctx *k, uint64_t seed);

/* Fails with "node 'n' (Op): <message>". */
PFVM_INTERNAL pfvm_code pfvm__op_fail(pfvm_status *st, const pfvm_node *n, pfvm_code code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
/* pfvm:internal-begin */
#ifdef PFVM_TERSE_MESSAGES
/* pfvm__op_fail in a PFVM_TERSE_MESSAGES build: "node 'n' (Op): <code
 * name> (file:line)". */
PFVM_INTERNAL pfvm_code pfvm__op_fail_at(pfvm_status *st, const pfvm_node *n, pfvm_code code, const char *file, int line);
#define pfvm__op_fail(st, n, code, ...) pfvm__op_fail_at((st), (n), (code), __FILE__, PFVM__TERSE_LINE(__VA_ARGS__))
#endif
/* pfvm:internal-end */

/* Inference helpers. */
PFVM_INTERNAL void *pfvm_ictx_alloc(pfvm_ictx *c, size_t size);
/* Sets out->sym to n symbolic scalars (copied into the ictx arena). */
PFVM_INTERNAL pfvm_code pfvm_ival_set_sym(pfvm_ictx *c, pfvm_ival *out, const pfvm_sym *const *vals, int n);
PFVM_API void pfvm_ival_set_tensor(pfvm_ival *v, pfvm_dtype dtype, const pfvm_shape *shape);
/* Output 0 = input 0's type (an inference function for the table). */
PFVM_API pfvm_code pfvm_infer_same_as_first(pfvm_ictx *c);
/* Output i = input j's type. */
PFVM_API pfvm_code pfvm_infer_same_as(pfvm_ictx *c, int out, int in);
/* Numpy-style multidirectional broadcast of the shapes of inputs. */
PFVM_INTERNAL pfvm_code pfvm_infer_broadcast(pfvm_ictx *c, const pfvm_shape *const *shapes, int n, pfvm_shape *out);
/* Output 0 = numpy matmul of shapes a and b (1-D operands promoted, batch
 * dims broadcast, inner dims checked) with the given dtype. Defined in
 * src/ops/linalg.c (MatMul, MatMulInteger, QLinearMatMul). */
PFVM_INTERNAL pfvm_code pfvm_infer_matmul(pfvm_ictx *c, const pfvm_shape *a, const pfvm_shape *b, pfvm_dtype dtype);
/* Fails with "<what> differ: a vs b" (PFVM_ERR_SHAPE) when dims a and b
 * are provably different (3 vs 4, n vs n+1); PFVM_OK otherwise, unknown
 * included. */
PFVM_INTERNAL pfvm_code pfvm_infer_check_eq(pfvm_ictx *c, const pfvm_sym *a, const pfvm_sym *b, const char *what);
/* Input j, when present and of known rank, must be 1-D of length `len`
 * (a bias, scale, per-channel vector); fails naming `what` otherwise. */
PFVM_INTERNAL pfvm_code pfvm_infer_check_vec(pfvm_ictx *c, int j, const pfvm_sym *len, const char *what);
/* Input j, when present and of known rank, must have the given rank;
 * fails with "<what> must be a scalar" / "<what> must have rank R". */
PFVM_INTERNAL pfvm_code pfvm_infer_check_rank(pfvm_ictx *c, int j, int rank, const char *what);
/* Normalises an axis attribute for a rank into *out, failing with "axis
 * A is out of range for rank R" when it is not in [-rank, rank). */
PFVM_INTERNAL pfvm_code pfvm_infer_axis(pfvm_ictx *c, int64_t axis, int rank, int *out);
/* Known contents of input i as int64s (from value or sym); returns count
 * or -1 if not known. `out` holds at most `cap` entries. */
PFVM_INTERNAL int pfvm_ival_ints(const pfvm_ival *v, int64_t *out, int cap);
/* Normalises axis (negative counts from the end) for a rank; -1 on error. */
PFVM_INTERNAL int pfvm__axis(int64_t axis, int rank);
/* Output i gets dtype and an unknown shape of the given rank (symbols
 * named after the node, output and dim: `Node_o0_d1`, so the same unknown
 * is the same symbol everywhere), or unknown rank if rank < 0. */
PFVM_API pfvm_code pfvm_infer_unknown(pfvm_ictx *c, int out, pfvm_dtype dtype, int rank);
/* The symbol named after the node and `suffix` (`Loop_2_trip`): the same
 * symbol every time it is asked for; NULL when out of memory. */
PFVM_INTERNAL const pfvm_sym *pfvm_infer_node_sym(pfvm_ictx *c, const char *suffix);
/* Infers subgraph g (an attribute of the node being inferred) with the
 * node's outer scope visible, so control-flow operators infer the bodies
 * they need with the types they know: `in_types[i]`, when not NULL, is
 * the type of g's input i (loop-carried state, scan slices); a dim the
 * model declared as a number stays. Subgraphs the operator does not ask
 * for (an If branch a known condition rules out) are inferred afterwards
 * and their errors ignored: they never run. At bind time (c->driver NULL)
 * it does nothing and returns PFVM_OK: body types are those of the static
 * analysis. Defined in src/shape/infer.c. */
PFVM_INTERNAL pfvm_code pfvm_ictx_infer_graph(pfvm_ictx *c, pfvm_graph *g, const pfvm_type *const *in_types, int n);
/* pfvm_ictx_infer_graph that gives g's inputs exactly in_types (no dim
 * the graph declares is kept): for a loop's fixed point, which merges the
 * declared types itself. */
PFVM_INTERNAL pfvm_code pfvm_ictx_infer_body(pfvm_ictx *c, pfvm_graph *g, const pfvm_type *const *in_types, int n);
/* The types of every value of g and of its subgraphs, saved so that a
 * fixed-point iteration starts each round from what the graph declared,
 * not from the previous round's guesses. NULL when out of memory. */
typedef struct pfvm_types_saved pfvm_types_saved;
PFVM_INTERNAL pfvm_types_saved *pfvm_types_save(pfvm_graph *g);
PFVM_INTERNAL void pfvm_types_restore(const pfvm_types_saved *s);
PFVM_INTERNAL void pfvm_types_saved_free(pfvm_types_saved *s);
/* Tells the driver that input i of subgraph g, whose type was `decl`
 * before this inference, is fed values of type `fed` over all iterations
 * (the fixed point); the pass manager's guard (pfvm__infer_check_fed)
 * records the inputs whose decl does not hold for fed. */
PFVM_INTERNAL void pfvm_ictx_fed(pfvm_ictx *c, const pfvm_graph *g, int i, const pfvm_type *decl, const pfvm_type *fed);
/* Decides a control-flow condition `cond` (a symbolic boolean such as
 * pfvm_sym_eq's `T == 1`): returns 1 and *v (0 or 1) when it is a
 * constant or when the case analysis (pfvm_infer_shape_cases) assumes it;
 * otherwise records it as a condition to split on and returns 0. */
PFVM_INTERNAL int pfvm_ictx_decide(pfvm_ictx *c, const pfvm_sym *cond, int64_t *v);


/* ---- services of the layers above ---------------------------------------------
 *
 * What operator hooks need of the layers above the operators (the shape
 * inference driver, the executor, autodiff) comes through their contexts:
 * those layers fill in these tables, the functions above call through them
 * (dependency inversion), so src/opi and src/ops link without the layers
 * above. NULL tables mean "not available" (a kernel run to fold a node at
 * inference time has no executor), and each function says what it then
 * does. */

/* pfvm:internal-begin */
/* The inference driver's (src/shape/infer.c), through pfvm_ictx.services. */
typedef struct pfvm__ictx_services {
    /* pfvm_ictx_infer_graph (merge 1) and pfvm_ictx_infer_body (merge 0) */
    pfvm_code (*infer_graph)(pfvm_ictx *c, pfvm_graph *g, const pfvm_type *const *in_types, int n, int merge);
    void (*fed)(pfvm_ictx *c, const pfvm_graph *g, int i, const pfvm_type *decl, const pfvm_type *fed);
    int (*decide)(pfvm_ictx *c, const pfvm_sym *cond, int64_t *v); /* a non-constant cond */
} pfvm__ictx_services;

/* The executor's (src/exec/exec.c), through pfvm_kctx.services. */
typedef struct pfvm__kctx_services {
    pfvm_code (*output)(pfvm_kctx *k, int i, pfvm_dtype dtype, int rank, const int64_t *dims);
    void *(*scratch)(pfvm_kctx *k, size_t bytes);
    void (*set_state)(pfvm_kctx *k, void *state, void (*free_fn)(void *));
    uint64_t (*random)(pfvm_kctx *k);
    void (*seed)(pfvm_kctx *k, uint64_t seed);
    pfvm_code (*subgraph)(pfvm_kctx *k, const pfvm_graph *g, const pfvm_tensor *const *in, int n_in,
                          pfvm_tensor **out, int n_out, pfvm_status *st);
    /* pfvm_infer_shapes */
    pfvm_code (*infer_shapes)(pfvm_graph *g, int strict, pfvm_status *st);
    /* pfvm_kctx_gradient */
    pfvm_code (*gradient)(pfvm_kctx *k, pfvm_model *m, pfvm_value *y, pfvm_value *seed, const char *const *names,
                          int n_wrt, int n_names, pfvm_status *st);
    /* pfvm_kctx_threads and pfvm_kctx_parallel */
    int (*threads)(const pfvm_kctx *k);
    void (*parallel)(pfvm_kctx *k, int n, pfvm_task_fn fn, void *ctx);
    /* pfvm_kctx_spend */
    pfvm_code (*spend)(pfvm_kctx *k, uint64_t operations);
    /* NULL, or [lo, hi, form]: the kernel stores its result clamped as
     * Clip does (x < lo ? lo : x, then x > hi ? hi : x) when form is 0,
     * as Relu does (x > lo ? x : lo: NaN and -0 become lo, then the same
     * x > hi ? hi : x) when it is 1; the fused-loop engine sets it, in a
     * copy of the executor's services, for a head whose operator has
     * PFVM__OP_STORE_CLAMP and whose group is only that clamp or Relu */
    const float *clamp;
    /* NULL, or a float tensor of the output's shape that the kernel adds
     * to its result before the clamp (an Add of a residual connection,
     * then the clamp, as the fused-loop engine would run them after the
     * head); it does not overlap the output. Set like clamp, for a head
     * whose operator has PFVM__OP_STORE_RESIDUAL, in PFVM__STORE_RESIDUAL
     * builds (src/ops/fused.h). */
    const float *residual;
    /* nonzero: the kernel stores x * sigmoid(x) of its result x (SiLU,
     * with the bits of Sigmoid then Mul); never with clamp or residual.
     * Set like clamp, for a head whose operator has PFVM__OP_STORE_SILU,
     * in PFVM__STORE_SILU builds (src/ops/fused.h). */
    int silu;
} pfvm__kctx_services;
/* pfvm_op_def.flags, pfvm's own operators only: the float kernel honors
 * pfvm__kctx_services.clamp (Conv) */
#define PFVM__OP_STORE_CLAMP 0x40000000u
/* pfvm_op_def.flags, pfvm's own operators only: the float kernel honors
 * pfvm__kctx_services.residual (Conv) */
#define PFVM__OP_STORE_RESIDUAL 0x20000000u
/* pfvm_op_def.flags, pfvm's own operators only: the float kernel honors
 * pfvm__kctx_services.silu (Conv) */
#define PFVM__OP_STORE_SILU 0x10000000u
/* pfvm_op_def.flags, pfvm's own operators only: the operator has a
 * streamed lowering besides its resident accel hook (tiles through the root
 * memory, src/ops/accel_lower.c); pfvm_acl_streamed answers it, NULL for
 * operators without the flag */
#define PFVM__OP_ACCEL_STREAMED 0x08000000u
/* pfvm_op_def.flags, pfvm's own operators only: output 0 is the inputs one
 * after another along the axis the `axis` attribute names (1 before opset
 * 4), and the kernel leaves alone an input already in its place in output
 * 0; the executor's planner then stores inputs that are contiguous slices of
 * output 0 there (pfvm__node_join_slice): Concat */
#define PFVM__OP_JOIN 0x04000000u
/* 1 where an operator with PFVM__OP_JOIN is linked (always, unless
 * PFVM_OPS_SELECTED leaves Concat out): the planner's join slices are
 * compiled only then (flash-bound firmware without Concat) */
#if !defined(PFVM_OPS_SELECTED) || PFVM_OP_Concat + 0 == 1
#define PFVM__HAVE_JOIN 1
#else
#define PFVM__HAVE_JOIN 0
#endif
/* PFVM__STORE_CLAMP (the builds whose Conv honors the clamp) is defined in
 * src/ops/fused.h, after PFVM_DISPATCH_CLONES that it reads. */
/* pfvm:internal-end */

/* Runs subgraph g of the running node with the given inputs (g's formal
 * inputs, in order); outer-scope values resolve to the caller's. Outputs
 * are deep copies the caller owns (free with pfvm_tensor_free). Without an
 * executor: PFVM_ERR_UNSUPPORTED. */
PFVM_INTERNAL pfvm_code pfvm_kctx_subgraph(pfvm_kctx *k, const pfvm_graph *g, const pfvm_tensor *const *in, int n_in,
                                           pfvm_tensor **out, int n_out, pfvm_status *st);
/* Shape inference of a graph a kernel built (pfvm_infer_shapes). Without
 * an executor: PFVM_ERR_UNSUPPORTED. */
PFVM_INTERNAL pfvm_code pfvm_kctx_infer_shapes(pfvm_kctx *k, pfvm_graph *g, int strict, pfvm_status *st);
/* The Gradient operator's run: differentiates y of m's main graph (seeded
 * with the initializer `seed`) with respect to the values named
 * names[0..n_wrt), runs that with the graph inputs named names[i] bound to
 * k->in[i] (i < n_names), and gives k->out[i] the gradient of names[i].
 * Errors go to st (the caller names the node). Without an executor:
 * PFVM_ERR_UNSUPPORTED. */
PFVM_INTERNAL pfvm_code pfvm_kctx_gradient(pfvm_kctx *k, pfvm_model *m, pfvm_value *y, pfvm_value *seed,
                                           const char *const *names, int n_wrt, int n_names, pfvm_status *st);
/* pfvm_kctx_output's work for a caller that accounts for what it holds:
 * limits max_tensor and max_total, `held` bytes held besides *dynamic
 * (the bytes kernels sized so far, updated; NULL: none). */
PFVM_INTERNAL pfvm_code pfvm__kctx_alloc_output(pfvm_kctx *k, int i, pfvm_dtype dtype, int rank, const int64_t *dims,
                                                size_t max_tensor, size_t max_total, size_t held, size_t *dynamic);

/* Runs one node's inference: in/out are indexed like node->inputs and
 * node->outputs (NULL entries for omitted values). Errors are prefixed with
 * the node's name and op. */
/* Refuses a sequence or optional input to an operator without
 * PFVM_OP_SEQUENCES (by inferred types `in`, or by values `vals`). */
PFVM_INTERNAL pfvm_code pfvm__takes_kinds(const pfvm_node *n, pfvm_status *st, const pfvm_ival *const *in,
                                          const pfvm_tensor *const *vals);
PFVM_INTERNAL pfvm_code pfvm__infer_node(const pfvm_node *n, const pfvm_ival *const *in, pfvm_ival *const *out,
                                         pfvm_symtab *syms, pfvm_arena *arena, pfvm_status *st);
/* The same within the driver's walk (driver and services: its own, for
 * the node's pfvm_ictx). */
PFVM_INTERNAL pfvm_code pfvm__infer_node_in(const pfvm_node *n, const pfvm_ival *const *in, pfvm_ival *const *out,
                                            pfvm_symtab *syms, pfvm_arena *arena, struct pfvm__infer_driver *driver,
                                            const pfvm__ictx_services *services, pfvm_status *st);
/* When an ival has fully constant symbolic contents (or the shape is known
 * and the value is a scalar), materialises them as a value tensor in the
 * arena so that kernels can read them. Returns 1 if ival->value is set. */
PFVM_INTERNAL int pfvm__ival_materialize(pfvm_ival *v, pfvm_arena *arena);

#ifdef __cplusplus
}
#endif
#endif /* PFVM_OPI_H */
