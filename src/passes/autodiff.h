/* autodiff: reverse-mode differentiation of ONNX graphs into plain ONNX.
 *
 * pfvm_autodiff appends the backward graph of a model's graph to the same
 * graph: for a scalar loss (seed 1) or for given seeds of graph outputs, it
 * adds the nodes that compute the gradient of every chosen value (by
 * default every floating-point initializer) and, unless told otherwise,
 * makes those gradients graph outputs named `<value>_grad`. The backward
 * nodes are ordinary ONNX operators of the default domain at the model's
 * opset (no custom ops), so the training graph saves as ONNX that onnx's
 * checker accepts and other runtimes run.
 *
 * How it works. The forward nodes that lie on a path from a chosen value
 * to a seeded value are visited in reverse topological order; for each,
 * its operator's gradient builder (pfvm_op_def.grad, written next to the
 * operator's kernel in src/ops) reads the gradients of the node's outputs
 * and adds gradients to its inputs through the pfvm_grad_* helpers below.
 * The gradients a value receives from several readers are summed (Add for
 * two, Sum for more) when the value's own producer asks for them. Every
 * emitted node is type-inferred on the spot, so builders see symbolic
 * shapes and pfvm_grad_sum_to emits a reduction only where the shapes
 * cannot be proven equal.
 *
 * Conventions (what callers can rely on):
 * - Backward nodes are appended after the forward nodes, already in a valid
 *   topological order: g->nodes[res.n_forward ..] are the backward nodes
 *   (the recompute pass and the planner use this split).
 * - A gradient has its value's element type and shape.
 * - A chosen value the seeds do not depend on gets a zero gradient
 *   (ConstantOfShape of its shape), so a training graph always has one
 *   gradient output per parameter, whatever the loss reads.
 * - Only floating-point values carry gradients: integer and boolean inputs
 *   (indices, shapes, masks) are never differentiated, and a node whose
 *   outputs are not floating point stops the backward flow.
 * - Integer outputs (MaxPool's indices, Dropout's mask before opset 10
 *   aside) carry no gradient; statistics outputs that are functions of the
 *   input do (BatchNormalization's running and saved statistics,
 *   LayerNormalization's mean and inverse standard deviation), when
 *   something reads them.
 * - Errors name the forward node and operator: a node on the path whose
 *   operator has no gradient builder, or a builder that needs something
 *   the model's opset or shapes do not offer. */
#ifndef PFVM_AUTODIFF_H
#define PFVM_AUTODIFF_H

#include "passes.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the pass --------------------------------------------------------------- */

/* pfvm_autodiff_opts.flags */
#define PFVM_AUTODIFF_NO_OUTPUTS 1u /* do not add the gradients as graph outputs */

typedef struct pfvm_autodiff_opts {
    /* What to differentiate (in this order of precedence):
     * - `loss`: the name of a value with one element (a scalar loss); its
     *   seed is 1;
     * - `ys`/`seeds` (n_ys pairs): seed values given by the caller, each
     *   shaped like its y (the gradient of some scalar with respect to y);
     * - neither: every floating-point graph output y gets a new graph input
     *   `<y>_grad` of y's type as its seed (inputs are appended in output
     *   order). */
    const char *loss;
    pfvm_value *const *ys;
    pfvm_value *const *seeds;
    int n_ys;
    /* Names of the values to differentiate with respect to (initializers,
     * graph inputs or intermediates), or NULL for every floating-point
     * initializer in initializer order. */
    const char *const *wrt;
    int n_wrt;
    unsigned flags; /* PFVM_AUTODIFF_* */
} pfvm_autodiff_opts;

/* What pfvm_autodiff did. Arrays are owned by the model. */
typedef struct pfvm_autodiff_result {
    int n_forward;        /* nodes of g before the call: g->nodes[n_forward..] are backward */
    int n_wrt;
    pfvm_value **wrt;     /* the values differentiated with respect to */
    pfvm_value **grads;   /* grads[i]: gradient of wrt[i] (a graph output `<wrt>_grad` unless NO_OUTPUTS) */
    int n_seeds;
    pfvm_value **ys;      /* the seeded values */
    pfvm_value **seeds;   /* their seeds (a Constant 1 for a loss, the new `<y>_grad` inputs, or the caller's) */
    int n_unreachable;    /* wrt values that got zero gradients */
} pfvm_autodiff_result;

/* Appends the backward graph of g (the model's main graph when NULL) to g.
 * Infers shapes first and after. `res` may be NULL. On error the graph may
 * hold part of the backward nodes. */
PFVM_API pfvm_code pfvm_autodiff(pfvm_model *m, pfvm_graph *g, const pfvm_autodiff_opts *opts,
                                 pfvm_autodiff_result *res, pfvm_status *st);

/* The forward values the backward nodes read: the activations a training
 * run keeps alive from the forward pass to the backward one (what the
 * recompute pass trades for recomputation). Values made by forward nodes
 * only (not inputs or initializers), each once, in forward order; fills
 * out[0..cap) and returns the count (which may exceed cap), or -1 when out
 * of memory. Valid while g->nodes[res->n_forward..] are still the backward
 * nodes. */
PFVM_API int pfvm_autodiff_saved(const pfvm_graph *g, const pfvm_autodiff_result *res, pfvm_value **out, int cap);

/* ---- optimizers (training graphs) --------------------------------------------- */

typedef enum pfvm_optimizer_kind {
    PFVM_OPTIMIZER_SGD = 1, /* p_new = p - lr * g */
    PFVM_OPTIMIZER_ADAM     /* Kingma & Ba, bias-corrected */
} pfvm_optimizer_kind;

typedef struct pfvm_optimizer_opts {
    pfvm_optimizer_kind kind;
    double lr;
    double beta1, beta2, epsilon; /* Adam; 0 means the defaults 0.9, 0.999, 1e-8 */
} pfvm_optimizer_opts;

/* Appends the update of every res->wrt[i] with its gradient as plain ONNX
 * arithmetic, and graph outputs after the existing ones:
 *   SGD:  `<p>_new` for each parameter p, in res->wrt order;
 *   Adam: `<p>_new` for each p, then `<p>_adam_m_new` and `<p>_adam_v_new`
 *         for each p, then `adam_step_new`.
 * Adam's state is new float initializers of the graph, zero at the start:
 * `<p>_adam_m` and `<p>_adam_v` (shaped like p, p's element type) and the
 * scalar `adam_step` (float, the number of steps taken). The convention
 * for every training state S (parameters included) is the same: one
 * training step runs the graph and replaces S by the output `S_new`. */
PFVM_API pfvm_code pfvm_autodiff_optimizer(pfvm_model *m, pfvm_graph *g, const pfvm_autodiff_result *res,
                                           const pfvm_optimizer_opts *opts, pfvm_status *st);

/* pfvm:internal-begin */
/* ---- the context gradient builders use ---------------------------------------- */

/* Builders (pfvm_grad_fn in an operator's definition) receive the context
 * and the forward node. They read the gradients of the node's outputs with
 * pfvm_grad_out, emit backward nodes with the helpers below and hand each
 * input's gradient to pfvm_grad_add. Helpers that make a value return NULL
 * on failure with the status set; every helper accepts NULL operands and
 * then returns NULL without a new message, so a builder can chain calls
 * and check once (pfvm_grad_add reports the failure). Fields other than
 * those documented are internal. */
struct pfvm_grad_ctx {
    pfvm_model *m;
    pfvm_graph *g;
    pfvm_status *st;
    const pfvm_node *node; /* the forward node whose builder runs */
    int opset;             /* the model's default-domain opset */
    /* internal */
    struct pfvm__grad_val *vals; /* stb_ds, by value id */
    pfvm_arena arena;
    int n_forward_values;
    int inferred;          /* g->nodes before this index are inferred */
    int n_emitted;
    unsigned flags;
    const char *name_prefix; /* names of nodes made outside any builder */
    pfvm_status own_st;    /* used when the caller passes no status */
    const pfvm_ival **tmp_in;
    pfvm_ival **tmp_out;
};
/* pfvm:internal-end */

/* Gradient of output i of the node (the sum of what its readers added), or
 * NULL when nothing reads it (its gradient is zero). */
PFVM_INTERNAL pfvm_value *pfvm_grad_out(pfvm_grad_ctx *g, int i);
/* The same, but zeros of the output's shape instead of NULL. */
PFVM_INTERNAL pfvm_value *pfvm_grad_out_or_zeros(pfvm_grad_ctx *g, int i);
/* 1 when value v (an input of the node) needs a gradient: builders may skip
 * work for inputs that do not. */
PFVM_INTERNAL int pfvm_grad_needed(const pfvm_grad_ctx *g, const pfvm_value *v);
/* Adds dv to the gradient of v. dv must have v's shape (use
 * pfvm_grad_sum_to after broadcasting). Ignored when v needs no gradient.
 * Returns the status code: an error when dv is NULL (a failed helper). */
PFVM_INTERNAL pfvm_code pfvm_grad_add(pfvm_grad_ctx *g, const pfvm_value *v, pfvm_value *dv);

/* Emits a node of the default domain reading `in` (NULL entries: omitted
 * optional inputs) with n_out new outputs (node->outputs). Set its
 * attributes with pfvm_node_set_attr_* right away: the node is inferred
 * when a type is first asked for, so attributes must be complete before
 * any helper that needs types (pfvm_grad_type, _sum_to, _shape...) runs. */
PFVM_INTERNAL pfvm_node *pfvm_grad_node(pfvm_grad_ctx *g, const char *op_type, pfvm_value *const *in, int n_in,
                                   int n_out);
/* The same in another graph dst (a subgraph being built: its nodes are
 * inferred when that graph is, not on demand). */
PFVM_INTERNAL pfvm_node *pfvm_grad_node_in(pfvm_grad_ctx *g, pfvm_graph *dst, const char *op_type, pfvm_value *const *in,
                                      int n_in, int n_out);
/* One-output nodes without attributes. */
PFVM_INTERNAL pfvm_value *pfvm_grad_op1(pfvm_grad_ctx *g, const char *op_type, pfvm_value *a);
PFVM_INTERNAL pfvm_value *pfvm_grad_op2(pfvm_grad_ctx *g, const char *op_type, pfvm_value *a, pfvm_value *b);
PFVM_INTERNAL pfvm_value *pfvm_grad_op3(pfvm_grad_ctx *g, const char *op_type, pfvm_value *a, pfvm_value *b,
                                   pfvm_value *c);
/* The (inferred) type of a value, or NULL when v is NULL. */
PFVM_INTERNAL const pfvm_type *pfvm_grad_type(pfvm_grad_ctx *g, const pfvm_value *v);
/* Element type of v's tensors (PFVM_UNDEFINED when v is NULL). */
PFVM_INTERNAL pfvm_dtype pfvm_grad_dtype(pfvm_grad_ctx *g, const pfvm_value *v);
/* 1 when a and b have proven-equal shapes (symbolic dims included). */
PFVM_INTERNAL int pfvm_grad_same_shape(pfvm_grad_ctx *g, const pfvm_value *a, const pfvm_value *b);

/* Constants (Constant nodes, never initializers). */
PFVM_INTERNAL pfvm_value *pfvm_grad_scalar(pfvm_grad_ctx *g, pfvm_dtype dtype, double v);
/* A scalar of like's element type. */
PFVM_INTERNAL pfvm_value *pfvm_grad_scalar_like(pfvm_grad_ctx *g, const pfvm_value *like, double v);
/* A 1-D int64 constant. */
PFVM_INTERNAL pfvm_value *pfvm_grad_ints(pfvm_grad_ctx *g, const int64_t *v, int n);
/* A constant tensor of any shape (data copied; dtype's element size). */
PFVM_INTERNAL pfvm_value *pfvm_grad_tensor(pfvm_grad_ctx *g, pfvm_dtype dtype, int rank, const int64_t *dims,
                                      const void *data);

/* Shape of v as a 1-D int64 value: a constant when every dim is known,
 * else Shape(v). */
PFVM_INTERNAL pfvm_value *pfvm_grad_shape(pfvm_grad_ctx *g, pfvm_value *v);
/* A tensor of the given shape (a 1-D int64 value) filled with v. */
PFVM_INTERNAL pfvm_value *pfvm_grad_fill(pfvm_grad_ctx *g, pfvm_value *shape, pfvm_dtype dtype, double v);
/* v's element count as a 1-element int64 value (a constant when v's shape
 * is known: no reader of v then). */
PFVM_INTERNAL pfvm_value *pfvm_grad_numel(pfvm_grad_ctx *g, pfvm_value *v);
/* Zeros / ones shaped like v, of v's element type. */
PFVM_INTERNAL pfvm_value *pfvm_grad_zeros_like(pfvm_grad_ctx *g, pfvm_value *v);
PFVM_INTERNAL pfvm_value *pfvm_grad_ones_like(pfvm_grad_ctx *g, pfvm_value *v);
/* x reshaped to like's shape (x itself when the shapes are proven equal). */
PFVM_INTERNAL pfvm_value *pfvm_grad_reshape_like(pfvm_grad_ctx *g, pfvm_value *x, pfvm_value *like);
/* x cast to dtype (x itself when it already is). */
PFVM_INTERNAL pfvm_value *pfvm_grad_cast(pfvm_grad_ctx *g, pfvm_value *x, pfvm_dtype dtype);

/* Known contents of an integer value (a constant, an initializer, or shape
 * arithmetic inference resolved): the count, or -1 when not known or
 * longer than cap. */
PFVM_INTERNAL int pfvm_grad_known_ints(pfvm_grad_ctx *g, const pfvm_value *v, int64_t *out, int cap);
/* The contents of v when known before running (a constant, an
 * initializer, or what inference folded), or NULL. Valid during the call. */
PFVM_INTERNAL const pfvm_tensor *pfvm_grad_known_value(pfvm_grad_ctx *g, const pfvm_value *v);
/* x broadcast to like's shape (Expand; x itself when already equal). */
PFVM_INTERNAL pfvm_value *pfvm_grad_expand(pfvm_grad_ctx *g, pfvm_value *x, pfvm_value *like);

/* Sums dx (shaped like a broadcast of target) down to target's shape:
 * ReduceSum over the broadcast axes, then Reshape when leading axes went.
 * Returns dx itself when the shapes are proven equal; axes whose sizes
 * cannot be decided symbolically are found at run time (Shape, Equal,
 * NonZero feeding ReduceSum's axes input, opset 13 and later). */
PFVM_INTERNAL pfvm_value *pfvm_grad_sum_to(pfvm_grad_ctx *g, pfvm_value *dx, pfvm_value *target);

/* Reductions and axis edits in the form the model's opset wants (axes as
 * an attribute or as an input). `op` is ReduceSum, ReduceMean, ReduceMax...
 * Negative axes count from the end. */
PFVM_INTERNAL pfvm_value *pfvm_grad_reduce(pfvm_grad_ctx *g, const char *op, pfvm_value *x, const int64_t *axes, int n_axes,
                                      int keepdims);
PFVM_INTERNAL pfvm_value *pfvm_grad_unsqueeze(pfvm_grad_ctx *g, pfvm_value *x, const int64_t *axes, int n_axes);
PFVM_INTERNAL pfvm_value *pfvm_grad_squeeze(pfvm_grad_ctx *g, pfvm_value *x, const int64_t *axes, int n_axes);
PFVM_INTERNAL pfvm_value *pfvm_grad_transpose(pfvm_grad_ctx *g, pfvm_value *x, const int64_t *perm, int rank);
/* x[starts:ends] along `axes` (step 1; constants), as Slice in the form
 * of the model's opset. */
PFVM_INTERNAL pfvm_value *pfvm_grad_slice(pfvm_grad_ctx *g, pfvm_value *x, const int64_t *starts, const int64_t *ends,
                                     const int64_t *axes, int n);
/* x padded with zeros: pads[a] before and pads[rank + a] after axis a
 * (non-negative), as Pad in the form of the opset. */
PFVM_INTERNAL pfvm_value *pfvm_grad_pad(pfvm_grad_ctx *g, pfvm_value *x, const int64_t *pads, int rank);
/* Concat of n values along axis. */
PFVM_INTERNAL pfvm_value *pfvm_grad_concat(pfvm_grad_ctx *g, pfvm_value *const *xs, int n, int64_t axis);
/* Element-wise x >= y (x <= y when `le`) as a bool value, in a form the
 * opset has. */
PFVM_INTERNAL pfvm_value *pfvm_grad_ge(pfvm_grad_ctx *g, pfvm_value *x, pfvm_value *y, int le);

/* Output i of the forward node, adding it to the node when the model left
 * it out (Dropout's mask, MaxPool's indices, LayerNormalization's
 * statistics): the builder then reads what the forward pass computed. */
PFVM_INTERNAL pfvm_value *pfvm_grad_forward_output(pfvm_grad_ctx *g, int i);

/* Control flow. The outer values the node's subgraphs read that need
 * gradients (its inputs excluded), deduplicated, into out[0..cap): the
 * count, or -1 when more than cap. */
PFVM_INTERNAL int pfvm_grad_captures(pfvm_grad_ctx *g, pfvm_value **out, int cap);
/* The backward graph of `body` (a subgraph of the node, such as an If
 * branch) as a new subgraph of the context's graph: it recomputes body
 * (a copy, reading local Identity copies of the captured values caps) and
 * returns the gradients of caps[0..n_caps) given seeds[i] for body's output
 * i (NULL: none), zeros where body does not use a capture. The caller sets
 * the graph's owner and puts it in an attribute. NULL on failure. */
PFVM_INTERNAL pfvm_graph *pfvm_grad_subgraph(pfvm_grad_ctx *g, const pfvm_graph *body, pfvm_value *const *seeds,
                                        pfvm_value *const *caps, int n_caps);

/* The general form under pfvm_grad_subgraph: copies body's nodes into dst
 * (a graph being built, whose nodes so far compute what the copy reads),
 * body's values from[i] read to[i] instead (its formal inputs, captured
 * values), seeds[i] (NULL: none) seeds body output i, and differentiates
 * dst with respect to wrt[0..n_wrt) (values of dst): grads[i] gets the
 * gradient of wrt[i], made in dst. Loop's builder uses it. */
PFVM_INTERNAL pfvm_code pfvm_grad_body(pfvm_grad_ctx *g, pfvm_graph *dst, const pfvm_graph *body, pfvm_value *const *from,
                                  pfvm_value *const *to, int n_map, pfvm_value *const *seeds, pfvm_value *const *wrt,
                                  int n_wrt, pfvm_value **grads);
/* v copied into graph dst by an Identity named after hint (v's type). */
PFVM_INTERNAL pfvm_value *pfvm_grad_identity_in(pfvm_grad_ctx *g, pfvm_graph *dst, pfvm_value *v, const char *hint);

/* Fails with "node 'n' (Op): gradient: <message>" and returns the code. */
PFVM_INTERNAL pfvm_code pfvm_grad_fail(pfvm_grad_ctx *g, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

#ifdef __cplusplus
}
#endif
#endif /* PFVM_AUTODIFF_H */
