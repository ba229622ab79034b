/* opi/grad: the context of the operators' gradient builders
 * (pfvm_op_def.grad) and the helpers they emit backward nodes with. The
 * sweep that calls the builders is src/passes/autodiff.c; what a helper
 * needs of it (differentiating a subgraph's copy, inferring a new
 * subgraph) it reaches through the context's services, so the helpers
 * and the operators that call them link without the passes. */
#ifndef PFVM_GRAD_H
#define PFVM_GRAD_H

#include "opi.h"

#ifdef __cplusplus
extern "C" {
#endif

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
    /* The sweep's services (set by pfvm_autodiff): differentiate dst with
     * respect to the values wrt[0..n_wrt), seeds[i] seeding ys[i], the
     * gradients into grads (pfvm_grad_body); sort and infer a graph made
     * by a builder (pfvm_grad_infer_graph). */
    pfvm_code (*differentiate)(pfvm_grad_ctx *g, pfvm_graph *dst, pfvm_value *const *ys, pfvm_value *const *seeds,
                               int n_ys, pfvm_value *const *wrt, int n_wrt, pfvm_value **grads);
    pfvm_code (*infer_graph)(pfvm_graph *sub, pfvm_status *st);
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
/* Sorts and infers sub (a graph a builder made, such as a backward body)
 * the way the sweep infers graphs. */
PFVM_INTERNAL pfvm_code pfvm_grad_infer_graph(pfvm_grad_ctx *g, pfvm_graph *sub);
/* v copied into graph dst by an Identity named after hint (v's type). */
PFVM_INTERNAL pfvm_value *pfvm_grad_identity_in(pfvm_grad_ctx *g, pfvm_graph *dst, pfvm_value *v, const char *hint);

/* Fails with "node 'n' (Op): gradient: <message>" and returns the code. */
PFVM_INTERNAL pfvm_code pfvm_grad_fail(pfvm_grad_ctx *g, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;


/* ---- between the sweep (src/passes/autodiff.c) and the helpers ------------------ */

/* pfvm:internal-begin */
/* What the sweep knows about one value of the graph (by value id). */
typedef struct pfvm__grad_val {
    pfvm_value **contrib;  /* stb_ds: gradients added so far (summed on first read) */
    pfvm_ival iv;          /* type and known contents */
    pfvm_value *shape;     /* pfvm_grad_shape's value, made once */
    unsigned char has_iv, from_wrt, to_seed;
} pfvm__grad_val;
/* pfvm:internal-end */
/* The sweep's record of v (a value of g->g), the table grown to the graph's
 * values first; NULL for other values or when out of memory (g failed). */
PFVM_INTERNAL pfvm__grad_val *pfvm__gv(pfvm_grad_ctx *g, const pfvm_value *v);
/* 1 once g's status holds an error. */
PFVM_INTERNAL int pfvm__grad_failed(const pfvm_grad_ctx *g);
PFVM_INTERNAL const char *pfvm__grad_label(const pfvm_node *n, char *buf, size_t size);
PFVM_INTERNAL int pfvm__is_float_tensor(const pfvm_type *t);
/* Infers node n (of g->g) and records its outputs' types and contents;
 * `keep_types`: n is a forward node whose types stay as inferred. */
PFVM_INTERNAL pfvm_code pfvm__grad_infer(pfvm_grad_ctx *g, pfvm_node *n, int keep_types);
/* Infers the emitted nodes up to and including g->g->nodes[upto]. */
PFVM_INTERNAL pfvm_code pfvm__grad_flush(pfvm_grad_ctx *g, int upto);
/* 1 when v lies between a chosen value and a seed (pfvm_grad_needed). */
PFVM_INTERNAL int pfvm__grad_val_needed(const pfvm_grad_ctx *g, const pfvm_value *v);
/* v's gradient so far, its contributions summed; NULL when none. */
PFVM_INTERNAL pfvm_value *pfvm__grad_collect(pfvm_grad_ctx *g, const pfvm_value *v);

#ifdef __cplusplus
}
#endif
#endif /* PFVM_GRAD_H */
