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
#include "../opi/grad.h"

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

#ifdef __cplusplus
}
#endif
#endif /* PFVM_AUTODIFF_H */
