/* shape: the inference driver. It walks a graph in topological order and
 * asks each node's operator definition for its outputs' types, shapes and
 * (for small integer tensors) symbolic contents. The same walk serves the
 * static analysis (symbolic dims) and the executor's bind-time planning
 * (constant dims), so every operator has exactly one inference function. */
#ifndef PFVM_INFER_H
#define PFVM_INFER_H

#include "../opi/opi.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Infers the type of every value of g (and its subgraphs) symbolically and
 * stores it in value->type. Graph inputs keep their declared types; dims
 * without a value or a name become named symbols. Unsupported operators
 * leave their outputs with unknown types unless `strict`. */
PFVM_API pfvm_code pfvm_infer_shapes(pfvm_graph *g, int strict, pfvm_status *st);

/* pfvm_infer_shapes (not strict) that also checks what every subgraph
 * input is fed: a Loop's or Scan's body input whose type, as stored in the
 * graph before this run, does not hold for every value its node feeds it
 * over all iterations (a dim fixed to the first iteration's size, a symbol
 * of the main graph that is not proven) counts in *count, and the first
 * is described in first (n bytes: "input 'tb' of node 'loop' (Loop) is
 * declared float[batch,0], but it is fed float[batch,loop_c0_d1]"). The
 * inference run widens the stored type. The guard of pfvm_run_passes; for a program's own
 * passes that edit subgraphs. */
PFVM_API pfvm_code pfvm_infer_check_subgraph_inputs(pfvm_graph *g, int *count, char *first, size_t n,
                                                    pfvm_status *st);

/* Specializes g (a main graph) to a binding of some of its dim symbols:
 * every bound symbol in the graph inputs' shapes becomes its value, and
 * the graph's types are inferred again. Shapes that depend on a bound dim
 * through control flow (an If on `seq == 1`, a rank that a condition
 * picks) resolve once the condition is decided; dims still unbound stay
 * symbolic. The model keeps the specialized input types (load the model
 * again for another binding). For users who know a dim ("n = 100000"). */
PFVM_API pfvm_code pfvm_infer_shapes_bound(pfvm_graph *g, const pfvm_binding *b, int strict, pfvm_status *st);

/* Shapes per case of a condition inference cannot decide. When an If's
 * condition compares dims whose equality depends on the input (`T == 1`
 * with T an expression of the input length: Squeeze when it holds,
 * Identity when not), a value's rank or dims can differ by case, and no
 * single shape is right. pfvm_infer_shape_cases infers g like
 * pfvm_infer_shapes and leaves the same plain types in the graph (an
 * unknown rank or fresh symbols where the branches differ: what passes,
 * the planner and autodiff use); then it infers g again under each outcome
 * of such conditions (conditions over the model's own dim names only,
 * nested up to 4 deep), the If decided each time, and keeps the results in
 * *out (NULL when no condition arose). A case in which inference proves
 * the run fails (an operator's shape error on the only path) is left out:
 * its values never reach the outputs. */
typedef struct pfvm_shape_cases pfvm_shape_cases;
PFVM_API pfvm_code pfvm_infer_shape_cases(pfvm_graph *g, pfvm_shape_cases **out, pfvm_status *st);
/* Prints v's shape over the cases, like pfvm_shape_print when every case
 * that has v agrees (or c is NULL, or v is in no case), else
 * `COND ? SHAPE : SHAPE` with COND printed by pfvm_sym_print_cond
 * (`(h+1)/2==1`) and a nested case form in parentheses. Returns the
 * length it needed, like snprintf. */
PFVM_API int pfvm_shape_cases_print(const pfvm_shape_cases *c, const pfvm_value *v, char *buf, size_t n);
/* The shape of v when every case that has v agrees (its plain shape when
 * c is NULL or v is in no case): 1 and *out; 0 when it differs by case. */
PFVM_API int pfvm_shape_cases_shape(const pfvm_shape_cases *c, const pfvm_value *v, pfvm_shape *out);
PFVM_API void pfvm_shape_cases_free(pfvm_shape_cases *c);

/* pfvm_infer_shapes (not strict) that also hands each graph's knowledge to
 * keep: passes read known contents (shape values, folded constants) this
 * way. */
PFVM_INTERNAL pfvm_code pfvm__infer_shapes_keep(pfvm_graph *g, pfvm_infer_keep_fn keep, void *user, pfvm_status *st);


#ifdef __cplusplus
}
#endif
#endif /* PFVM_INFER_H */
