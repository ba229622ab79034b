/* shape: the inference driver. It walks a graph in topological order and
 * asks each node's operator definition for its outputs' types, shapes and
 * (for small integer tensors) symbolic contents. The same walk serves the
 * static analysis (symbolic dims) and the executor's bind-time planning
 * (constant dims), so every operator has exactly one inference function. */
#ifndef PFVM_INFER_H
#define PFVM_INFER_H

#include "../ops/registry.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Infers the type of every value of g (and its subgraphs) symbolically and
 * stores it in value->type. Graph inputs keep their declared types; dims
 * without a value or a name become named symbols. Unsupported operators
 * leave their outputs with unknown types unless `strict`. */
PFVM_API pfvm_code pfvm_infer_shapes(pfvm_graph *g, int strict, pfvm_status *st);

/* Specializes g (a main graph) to a binding of some of its dim symbols:
 * every bound symbol in the graph inputs' shapes becomes its value, and
 * the graph's types are inferred again. Shapes that depend on a bound dim
 * through control flow (an If on `seq == 1`, a rank that a condition
 * picks) resolve once the condition is decided; dims still unbound stay
 * symbolic. The model keeps the specialized input types (load the model
 * again for another binding). For users who know a dim ("n = 100000"). */
PFVM_API pfvm_code pfvm_infer_shapes_bound(pfvm_graph *g, const pfvm_binding *b, int strict, pfvm_status *st);

/* Receives what inference learned about the values of one graph (g itself
 * or a subgraph): iv[i] describes g->values[i] (type and, when known,
 * contents: a constant tensor or symbolic scalars), n entries. The tensors
 * and symbol arrays it points to live in the model's arena; iv itself is
 * freed when keep returns, so copy the entries. */
typedef void (*pfvm_infer_keep_fn)(void *user, const pfvm_graph *g, const pfvm_ival *iv, int n);

/* pfvm_infer_shapes (not strict) that also hands each graph's knowledge to
 * keep: passes read known contents (shape values, folded constants) this
 * way. */
PFVM_INTERNAL pfvm_code pfvm__infer_shapes_keep(pfvm_graph *g, pfvm_infer_keep_fn keep, void *user, pfvm_status *st);

/* Runs one node's inference: in/out are indexed like node->inputs and
 * node->outputs (NULL entries for omitted values). Errors are prefixed with
 * the node's name and op. */
PFVM_INTERNAL pfvm_code pfvm__infer_node(const pfvm_node *n, const pfvm_ival *const *in, pfvm_ival *const *out,
                                         pfvm_symtab *syms, pfvm_arena *arena, pfvm_status *st);

/* When an ival has fully constant symbolic contents (or the shape is known
 * and the value is a scalar), materialises them as a value tensor in the
 * arena so that kernels can read them. Returns 1 if ival->value is set. */
PFVM_INTERNAL int pfvm__ival_materialize(pfvm_ival *v, pfvm_arena *arena);

#ifdef __cplusplus
}
#endif
#endif /* PFVM_INFER_H */
