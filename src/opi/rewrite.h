/* rewrite: the context of the operators' `simplify` hooks (pfvm_op_def)
 * and the helpers a hook uses to read what is known about values and to
 * edit the graph.
 *
 * A pass that runs hooks (simplify, bnfold) infers the model's types
 * first and keeps what inference learned: every value's type and
 * symbolic shape, and for small integer tensors their contents (constant,
 * or symbolic from data propagation: Shape -> Gather -> Concat gives
 * [batch, seq, 64]). A hook reads those facts, proves that a cheaper form
 * computes the same values (symbolic shape equality included), and edits
 * with the helpers: forward an output to an existing value, or build new
 * nodes and constants and forward to their outputs. Nodes whose outputs
 * were all forwarded are removed by the pass; it re-infers and runs the
 * hooks again until nothing changes.
 *
 * A hook does nothing when a proof fails: an unknown shape or value means
 * "leave it". Helpers that edit return a pfvm_code; a declined edit (the
 * types differ, the output must keep its producer) returns PFVM_OK and
 * changes nothing, so hooks can `return pfvm_rw_forward(...)`. */
#ifndef PFVM_REWRITE_H
#define PFVM_REWRITE_H

#include "opi.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What a pass asks of the hooks (pfvm_rw_mode). */
#define PFVM_RW_SIMPLIFY 1u /* local rewrites: x*1 -> x, Reshape to the same shape -> its input, ... */
#define PFVM_RW_AFFINE 2u   /* fold per-channel scale/shift nodes (BatchNormalization) into their producer */
#define PFVM_RW_COMPOSE 4u  /* decomposed operators become one node again (an exported LayerNorm's nine
                               nodes -> LayerNormalization): the compose pass, not in the default pipeline */

/* A request to absorb y = out * scale + shift (per channel along `axis`
 * of the node's output 0) into the node that makes out (pfvm_rw_absorb). */
typedef struct pfvm_rw_affine {
    int axis;            /* normalised axis of output 0 */
    int n;               /* channels: output 0's size along axis */
    const double *scale; /* n entries */
    const double *shift; /* n entries, or NULL for no shift */
    pfvm_value *result;  /* set by the absorbing hook (pfvm_rw_answer) */
} pfvm_rw_affine;

/* Facts about one value, from inference. */
typedef struct pfvm__rw_slot {
    const pfvm_value *v;
    pfvm_ival iv;
    int tainted; /* computed from an overridable initializer: contents not constant */
} pfvm__rw_slot;

typedef struct pfvm__rw_graph_facts {
    const pfvm_graph *g;
    pfvm__rw_slot *facts; /* stb_ds array indexed by value id */
} pfvm__rw_graph_facts;

/* The context. Hooks use the functions below, not the fields. */
struct pfvm_rewrite {
    pfvm_model *m;
    pfvm_graph *g;              /* graph being rewritten (main graph or a subgraph) */
    unsigned mode;              /* PFVM_RW_* */
    pfvm_status *st;
    pfvm__rw_graph_facts *known; /* stb_ds array, one entry per graph inference visited */
    pfvm_uses uses;             /* consumer lists of g, rebuilt after edits when asked */
    int uses_valid;
    pfvm_rw_affine *request;    /* pending pfvm_rw_absorb, or NULL */
    int changes;                /* edits made (forwards, new nodes) */
    pfvm_node **forwarded;      /* stb_ds: nodes with an output forwarded, removed when unused */
    pfvm_graph **edited;        /* stb_ds: graphs with new nodes or forwards (re-sorted at the end) */
    int n_new;                  /* nodes added */
    int oom;                    /* a list could not grow: pfvm_rw_end fails */
};

/* ---- context (for passes) --------------------------------------------------- */

/* Starts rw on m: `infer` infers the model's types (not strict) handing
 * each graph's facts to its keep function (the shape layer's
 * pfvm__infer_shapes_keep: passes call pfvm_rw_begin, src/passes/passes.h).
 * rw is then ready for the main graph; pfvm_rw_set_graph moves it to a
 * subgraph. */
PFVM_INTERNAL pfvm_code pfvm__rw_begin_with(pfvm_rewrite *rw, pfvm_model *m, unsigned mode, pfvm_infer_keep_all_fn infer,
                                           pfvm_status *st);
/* Works on g (a graph of the model) from now on. */
PFVM_INTERNAL void pfvm_rw_set_graph(pfvm_rewrite *rw, pfvm_graph *g);
/* Removes the forwarded nodes of every graph that have no reader left,
 * re-sorts edited graphs and frees the facts. Adds the removed nodes to
 * *removed when given. */
PFVM_INTERNAL pfvm_code pfvm_rw_end(pfvm_rewrite *rw, int *removed);
/* Frees the context without editing (after an error). */
PFVM_INTERNAL void pfvm_rw_free(pfvm_rewrite *rw);
/* Calls node->op->simplify when it has one; returns its code. */
PFVM_INTERNAL pfvm_code pfvm_rw_run_hook(pfvm_rewrite *rw, pfvm_node *node);

/* ---- facts ------------------------------------------------------------------ */

/* What the running pass asks for: PFVM_RW_SIMPLIFY or PFVM_RW_AFFINE. */
PFVM_INTERNAL unsigned pfvm_rw_mode(const pfvm_rewrite *rw);
PFVM_INTERNAL pfvm_model *pfvm_rw_model(const pfvm_rewrite *rw);
PFVM_INTERNAL pfvm_symtab *pfvm_rw_symtab(const pfvm_rewrite *rw);
/* The graph being rewritten. */
PFVM_INTERNAL pfvm_graph *pfvm_rw_graph(const pfvm_rewrite *rw);
/* Opset in effect for a domain ("" = ONNX). */
PFVM_INTERNAL int64_t pfvm_rw_opset(const pfvm_rewrite *rw, const char *domain);

/* The inferred type of v; NULL when v is NULL or its kind is unknown. */
PFVM_INTERNAL const pfvm_type *pfvm_rw_type(const pfvm_rewrite *rw, const pfvm_value *v);
/* v's symbolic shape when v is a tensor of known rank, else NULL. */
PFVM_INTERNAL const pfvm_shape *pfvm_rw_shape(const pfvm_rewrite *rw, const pfvm_value *v);
/* v's contents when they are a known constant: an initializer, a Constant,
 * or what inference computed (small shape arithmetic). NULL otherwise. The
 * tensor lives as long as the model; never modify it. */
PFVM_INTERNAL const pfvm_tensor *pfvm_rw_value(const pfvm_rewrite *rw, const pfvm_value *v);
/* v's contents as int64s (an integer or bool tensor with known constant
 * contents, symbolic ones included when they are constants): the count,
 * or -1 when unknown or longer than cap. */
PFVM_INTERNAL int pfvm_rw_ints(const pfvm_rewrite *rw, const pfvm_value *v, int64_t *out, int cap);
/* v's contents as symbolic scalars (data propagation; constants become
 * constant symbols): the count, or -1 when unknown or longer than cap. */
PFVM_INTERNAL int pfvm_rw_syms(const pfvm_rewrite *rw, const pfvm_value *v, const pfvm_sym **out, int cap);
/* 1 when v is a known constant of a numeric type whose every element
 * equals x (an empty tensor does not qualify). */
PFVM_INTERNAL int pfvm_rw_is_all(const pfvm_rewrite *rw, const pfvm_value *v, double x);
/* Number of readers of v (node inputs, subgraph captures, graph outputs);
 * v must belong to the graph being rewritten or an enclosing one (readers
 * counted in that graph). */
PFVM_INTERNAL int pfvm_rw_readers(pfvm_rewrite *rw, const pfvm_value *v);
/* The node that makes v, or NULL (inputs, initializers). */
PFVM_INTERNAL pfvm_node *pfvm_rw_producer(const pfvm_rewrite *rw, const pfvm_value *v);
/* The readers of v (a value of the graph being rewritten): returns their
 * number, graph outputs and subgraph captures included, and stores up to
 * cap of the reading nodes in out (NULL for a graph output or a reader
 * inside a subgraph: not a node of this graph to match). */
PFVM_INTERNAL int pfvm_rw_reader_nodes(pfvm_rewrite *rw, const pfvm_value *v, pfvm_node **out, int cap);
/* 1 when v's only reader is a node of this graph: stores it in *node. */
PFVM_INTERNAL int pfvm_rw_only_reader(pfvm_rewrite *rw, const pfvm_value *v, pfvm_node **node);
/* Makes the model import the default ONNX domain at `opset` at least, so
 * that pfvm_rw_add_node can add an operator that version introduced: 1
 * when it does (already or now), 0 when it declines because some node of
 * the model would resolve to another registry definition at `opset` than
 * at its own (the registry splits an operator's definitions where its
 * meaning changes: since/until). Nodes keep their own opset. */
PFVM_INTERNAL int pfvm_rw_require_opset(pfvm_rewrite *rw, int64_t opset);
/* 1 when a node's output i is absent or has no reader. */
PFVM_INTERNAL int pfvm_rw_output_unused(pfvm_rewrite *rw, const pfvm_node *node, int i);

/* ---- proofs ------------------------------------------------------------------ */

/* 1 when both shapes have known, equal ranks and every pair of dims is
 * proven equal for every binding of the symbols. */
PFVM_INTERNAL int pfvm_rw_same_shape(const pfvm_shape *a, const pfvm_shape *b);
/* 1 when a and b are tensors of the same element type and proven equal
 * shapes: one can stand for the other. */
PFVM_INTERNAL int pfvm_rw_same_type(const pfvm_rewrite *rw, const pfvm_value *a, const pfvm_value *b);

/* ---- edits -------------------------------------------------------------------- */

/* Makes every reader of node's output i read v instead (v must have the
 * same type: pfvm_rw_same_type). Declines (PFVM_OK, nothing changed) when
 * the types are not proven equal, when v is the output itself, or when the
 * output is a graph output and v could not take its place without an
 * extra Identity (v is a graph input, initializer or another output, or v
 * is not made inside a subgraph whose output it would become). */
PFVM_INTERNAL pfvm_code pfvm_rw_forward(pfvm_rewrite *rw, pfvm_node *node, int i, pfvm_value *v);
/* Adds a node of the default ONNX domain (at the model's opset) reading
 * `inputs` (NULL entries for omitted optionals), with n_out fresh outputs
 * named after like's outputs (like may be NULL), and infers its outputs
 * right away. Copy attributes with pfvm_rw_copy_attrs or set them with
 * pfvm_node_set_attr_*, then call pfvm_rw_infer_node. NULL when the
 * operator is unknown at the model's opset (the status is untouched) or on
 * failure (the status says why: pfvm_rw_failed). */
PFVM_INTERNAL pfvm_node *pfvm_rw_add_node(pfvm_rewrite *rw, const char *op_type, pfvm_value *const *inputs, int n_in,
                                     int n_out, const pfvm_node *like);
/* Copies src's attributes to dst, except those named in `skip`
 * (NULL-terminated list, or NULL). */
PFVM_INTERNAL pfvm_code pfvm_rw_copy_attrs(pfvm_rewrite *rw, pfvm_node *dst, const pfvm_node *src, const char *const *skip);
/* (Re)infers the outputs of a node added with pfvm_rw_add_node after its
 * attributes are set. */
PFVM_INTERNAL pfvm_code pfvm_rw_infer_node(pfvm_rewrite *rw, pfvm_node *node);
/* A new initializer of the graph being rewritten holding a copy of t (a
 * dense tensor; strings copied too). NULL on failure. */
PFVM_INTERNAL pfvm_value *pfvm_rw_const(pfvm_rewrite *rw, const pfvm_tensor *t, const char *hint);
/* A new zero-filled initializer of this type and shape; *data receives its
 * tensor to fill in. */
PFVM_INTERNAL pfvm_value *pfvm_rw_const_new(pfvm_rewrite *rw, pfvm_dtype dtype, int rank, const int64_t *dims,
                                       const char *hint, pfvm_tensor **data);
/* A new 1-D int64 initializer. */
PFVM_INTERNAL pfvm_value *pfvm_rw_const_ints(pfvm_rewrite *rw, const int64_t *v, int n, const char *hint);
/* 1 when the last helper failed (the status holds the error). */
PFVM_INTERNAL int pfvm_rw_failed(const pfvm_rewrite *rw);
/* The code to return from a hook after a helper returned NULL: the error,
 * or PFVM_OK when the helper only declined. */
PFVM_INTERNAL pfvm_code pfvm_rw_code(const pfvm_rewrite *rw);

/* ---- absorbing per-channel affine maps (bnfold) --------------------------------- */

/* Asks `producer` (through its simplify hook) to build a value equal to
 * its output 0 times a->scale plus a->shift along a->axis. On return
 * a->result is that value, or NULL when the producer cannot absorb it. The
 * caller checks that the producer's output has no other reader. */
PFVM_INTERNAL pfvm_code pfvm_rw_absorb(pfvm_rewrite *rw, pfvm_node *producer, pfvm_rw_affine *a);
/* Inside a hook: the pending absorb request for this node, or NULL (then
 * the hook does its ordinary work). */
PFVM_INTERNAL pfvm_rw_affine *pfvm_rw_request(const pfvm_rewrite *rw);

/* ---- for passes that edit without hooks (cse, fold) --------------------------- */

/* pfvm_graph_replace_uses(g, old, repl) unless old is an output of g (or
 * of the main graph) that repl cannot replace without an extra Identity:
 * then nothing happens and *done is 0. */
PFVM_INTERNAL pfvm_code pfvm__rw_replace_value(pfvm_graph *g, pfvm_value *old, pfvm_value *repl, int *done,
                                               pfvm_status *st);
/* Notes that a pass adds initializers that are not graph inputs (the
 * model's IR version becomes at least 4, which allows them). */
PFVM_INTERNAL void pfvm__rw_new_init(pfvm_model *m);
/* Facts about v kept by pfvm_rw_begin, or NULL. */
PFVM_INTERNAL const pfvm_ival *pfvm__rw_fact(const pfvm_rewrite *rw, const pfvm_value *v);
/* Stores facts about v (a new value). */
PFVM_INTERNAL pfvm_code pfvm__rw_set_fact(pfvm_rewrite *rw, const pfvm_value *v, const pfvm_ival *iv);
/* Calls f on g and every graph nested in it, outer graphs first. */
PFVM_INTERNAL pfvm_code pfvm__for_graphs(pfvm_graph *g, pfvm_code (*f)(void *user, pfvm_graph *g), void *user);

#ifdef __cplusplus
}
#endif
#endif /* PFVM_REWRITE_H */
