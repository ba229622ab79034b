/* ir: the graph IR — tensors, types, values, nodes, attributes, graphs,
 * functions and models — plus the builder, verifier and text dump.
 *
 * Ownership: a pfvm_model owns everything reachable from it (one arena for
 * names, nodes, attributes and tensors, plus stb_ds lists per graph); free
 * it with pfvm_model_free. Tensor data either lives in the arena / heap or
 * is a view into bytes the caller keeps alive (zero-copy weights). */
#ifndef PFVM_IR_H
#define PFVM_IR_H

#include "../base/base.h"
#include "../sym/sym.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pfvm_model pfvm_model;
typedef struct pfvm_graph pfvm_graph;
typedef struct pfvm_node pfvm_node;
typedef struct pfvm_value pfvm_value;
typedef struct pfvm_op_def pfvm_op_def;

/* ---- tensors (concrete data) -------------------------------------------- */

typedef enum pfvm_kind {
    PFVM_KIND_UNKNOWN = 0,
    PFVM_KIND_TENSOR,
    PFVM_KIND_SEQUENCE,
    PFVM_KIND_OPTIONAL,
    PFVM_KIND_MAP,
    PFVM_KIND_SPARSE
} pfvm_kind;

/* A run-time value. For PFVM_KIND_TENSOR: dtype, rank, dims, data. Strings
 * are stored as `char *` per element (NUL-terminated, each owned by the
 * tensor when owns_strings). Sequences hold `elems`; an optional holds zero
 * or one elem (`has_value`). */
typedef struct pfvm_tensor pfvm_tensor;
struct pfvm_tensor {
    pfvm_kind kind;
    pfvm_dtype dtype;
    int rank;
    int64_t dims[PFVM_MAX_RANK];
    void *data;
    size_t nbytes;         /* capacity of data in bytes */
    unsigned owns_data : 1;    /* data was allocated for this tensor */
    unsigned owns_strings : 1; /* string elements are owned */
    unsigned has_value : 1;    /* optionals */
    pfvm_tensor **elems;   /* sequence/optional elements (stb_ds array) */
    pfvm_dtype elem_dtype; /* sequence/optional: element dtype when empty */
    const char *name;      /* optional */
};

/* Number of elements (product of dims; 1 for a scalar). Returns 0 and sets
 * *ok=0 on overflow if ok is given. */
PFVM_API int64_t pfvm_tensor_numel(const pfvm_tensor *t);
/* Sets shape (rank <= PFVM_MAX_RANK, dims >= 0). */
PFVM_API pfvm_code pfvm_tensor_set_shape(pfvm_tensor *t, int rank, const int64_t *dims, pfvm_status *st);
/* Heap tensor of the given type and shape with zeroed data. A string
 * tensor owns its strings: set them with pfvm_tensor_set_string (pfvm frees
 * them through its allocator, which tags every block, so a string from the
 * program's own malloc must not be stored into its data). */
PFVM_API pfvm_tensor *pfvm_tensor_new(pfvm_dtype dtype, int rank, const int64_t *dims, pfvm_status *st);
/* Heap tensor that views `data` (not copied, not freed). */
PFVM_API pfvm_tensor *pfvm_tensor_view(pfvm_dtype dtype, int rank, const int64_t *dims, void *data, pfvm_status *st);
/* A heap tensor described field by field; a zero-initialized desc is a
 * float scalar from the default allocator. */
typedef struct pfvm_tensor_desc {
    pfvm_dtype dtype;          /* PFVM_UNDEFINED: PFVM_FLOAT */
    int rank;
    const int64_t *dims;       /* rank entries (may be NULL for rank 0) */
    void *data;                /* NULL: zeroed data the tensor owns; else viewed (not copied, not freed) */
    pfvm_allocator allocator;  /* serves the tensor and its data; zero: the default */
} pfvm_tensor_desc;
PFVM_API pfvm_tensor *pfvm_tensor_make(const pfvm_tensor_desc *d, pfvm_status *st);
/* Deep copy (strings and sequence elements included; NULL t: an error), from the default
 * allocator (or the model's, inside a model's kernels and passes). */
PFVM_API pfvm_tensor *pfvm_tensor_clone(const pfvm_tensor *t, pfvm_status *st);
/* Sets element i of a string tensor that owns its strings (pfvm_tensor_new
 * of PFVM_STRING) to a copy of s, freeing the old one. */
PFVM_API pfvm_code pfvm_tensor_set_string(pfvm_tensor *t, int64_t i, const char *s, pfvm_status *st);
/* The same array, as the `const pfvm_tensor *const *` that pfvm_exec_bind,
 * pfvm_quantize and pfvm_accel_sim_run take: C converts `pfvm_tensor **`
 * to it only with a cast (C++ does it implicitly). */
PFVM_API const pfvm_tensor *const *pfvm_tensors_const(pfvm_tensor *const *tensors);
/* Frees a heap tensor made by the calls above (and what it owns). */
PFVM_API void pfvm_tensor_free(pfvm_tensor *t);
/* Releases what t owns (data, strings, elements) without freeing t. */
PFVM_API void pfvm_tensor_release(pfvm_tensor *t);
/* Element i as double / int64 (any numeric dtype; bool as 0/1); 0 when i
 * is outside the tensor's storage. */
PFVM_API double pfvm_tensor_get_f64(const pfvm_tensor *t, int64_t i);
PFVM_API int64_t pfvm_tensor_get_i64(const pfvm_tensor *t, int64_t i);
/* Writes "float[2,3]" into buf. */
PFVM_API int pfvm_tensor_describe(const pfvm_tensor *t, char *buf, size_t n);

/* ---- types (static, symbolic) ------------------------------------------- */

/* A symbolic shape: rank -1 means unknown rank. dims[i] is never NULL when
 * rank >= 0: unknown dims are fresh symbols. */
typedef struct pfvm_shape {
    int rank;
    const pfvm_sym *dims[PFVM_MAX_RANK];
} pfvm_shape;

/* Static type of a value. Sequences and optionals point at an element type. */
typedef struct pfvm_type pfvm_type;
struct pfvm_type {
    pfvm_kind kind;      /* UNKNOWN when not inferred yet */
    pfvm_dtype dtype;    /* tensor element type (or of the innermost tensor) */
    pfvm_shape shape;
    pfvm_type *elem;     /* sequence / optional element type (arena) */
    pfvm_dtype key_dtype; /* maps */
};

/* ---- attributes ---------------------------------------------------------- */

typedef enum pfvm_attr_type {
    PFVM_ATTR_UNDEFINED = 0,
    PFVM_ATTR_FLOAT = 1,
    PFVM_ATTR_INT = 2,
    PFVM_ATTR_STRING = 3,
    PFVM_ATTR_TENSOR = 4,
    PFVM_ATTR_GRAPH = 5,
    PFVM_ATTR_FLOATS = 6,
    PFVM_ATTR_INTS = 7,
    PFVM_ATTR_STRINGS = 8,
    PFVM_ATTR_TENSORS = 9,
    PFVM_ATTR_GRAPHS = 10,
    PFVM_ATTR_SPARSE_TENSOR = 11,
    PFVM_ATTR_SPARSE_TENSORS = 12,
    PFVM_ATTR_TYPE_PROTO = 13,
    PFVM_ATTR_TYPE_PROTOS = 14
} pfvm_attr_type;

/* One attribute. Strings carry their length (ONNX strings are bytes). */
typedef struct pfvm_attr {
    const char *name;
    pfvm_attr_type type;
    const char *ref_attr_name; /* inside functions: refers to a caller attr */
    const char *doc;
    float f;
    int64_t i;
    const char *s;
    size_t s_len;
    pfvm_tensor *t;
    pfvm_graph *g;
    pfvm_type *tp;
    int n;              /* element count of the list forms */
    float *floats;
    int64_t *ints;
    const char **strings;
    size_t *strings_len;
    pfvm_tensor **tensors;
    pfvm_graph **graphs;
    pfvm_type **tps;
} pfvm_attr;

/* ---- values, nodes, graphs ---------------------------------------------- */

struct pfvm_value {
    const char *name;
    pfvm_type type;
    pfvm_graph *graph;      /* graph that defines it */
    pfvm_node *producer;    /* NULL for inputs and initializers */
    int producer_index;     /* output slot of producer */
    pfvm_tensor *init;      /* initializer data (constant) or NULL */
    const char *doc;
    int id;                 /* index in graph->values */
    unsigned is_input : 1;
    unsigned is_output : 1;
    unsigned has_type_info : 1; /* type came from the model (input/output/value_info) */
    unsigned has_value_info : 1;
};

struct pfvm_node {
    const char *name;
    const char *op_type;
    const char *domain;     /* "" for the default ONNX domain */
    const char *doc;
    pfvm_value **inputs;    /* n_inputs entries; NULL for an omitted optional input */
    int n_inputs;
    pfvm_value **outputs;   /* n_outputs entries; NULL for an omitted optional output */
    int n_outputs;
    pfvm_attr *attrs;
    int n_attrs;
    const pfvm_op_def *op;  /* resolved operator definition, NULL if none */
    int opset;              /* opset version in effect for the node's domain */
    pfvm_graph *graph;
    int id;                 /* index in graph->nodes */
    const char *overload;   /* ONNX NodeProto.overload, rarely used */
};

struct pfvm_graph {
    const char *name;
    const char *doc;
    pfvm_model *model;
    pfvm_graph *parent;         /* enclosing graph for subgraphs (outer scope) */
    pfvm_node *owner;           /* node whose attribute holds this subgraph */
    pfvm_node **nodes;          /* stb_ds array, topological order once sorted */
    pfvm_value **values;        /* stb_ds array of every value defined here */
    pfvm_value **inputs;        /* stb_ds array */
    pfvm_value **outputs;       /* stb_ds array */
    pfvm_value **inits;         /* stb_ds array: values with initializers */
    pfvm_value **value_infos;   /* stb_ds array: values named in value_info */
    pfvm__map by_name;          /* name -> value (keys: the values' names) */
    pfvm_graph **subgraphs;     /* stb_ds array, freed with the graph */
    int next_auto_name;
};

typedef struct pfvm_opset_import {
    const char *domain;
    int64_t version;
} pfvm_opset_import;

typedef struct pfvm_string_pair {
    const char *key;
    const char *value;
} pfvm_string_pair;

/* A model-local function (FunctionProto). Its body is a graph whose inputs
 * and outputs are the formal parameters. */
typedef struct pfvm_function {
    const char *name;
    const char *domain;
    const char *doc;
    pfvm_graph *body;
    const char **attr_names;    /* attributes without defaults */
    int n_attr_names;
    pfvm_attr *attr_defaults;   /* attribute_proto (with defaults) */
    int n_attr_defaults;
    pfvm_opset_import *opsets;
    int n_opsets;
} pfvm_function;

struct pfvm_model {
    int64_t ir_version;
    const char *producer_name, *producer_version, *domain, *doc;
    int64_t model_version;
    pfvm_opset_import *opsets;  /* stb_ds array */
    pfvm_string_pair *metadata; /* stb_ds array */
    pfvm_function **functions;  /* stb_ds array */
    pfvm_graph *graph;
    pfvm_symtab *syms;          /* every symbolic dim of the model */
    pfvm_arena arena;
    const char *dir;            /* directory of the model file (external data) */
    void *owned_bytes;          /* model bytes when pfvm owns them */
    void **owned_blocks;        /* stb_ds: heap blocks freed with the model */
    pfvm_allocator allocator;   /* serves everything of the model (read-only) */
};

/* How to make a model; a zero-initialized desc gives the defaults. */
typedef struct pfvm_model_desc {
    /* Serves the model, its graphs and symbol table, the executors made
     * for it, the passes run on it and the bytes saved from it. Zero: the
     * default allocator in effect now (pfvm_set_allocator's, else
     * PFVM_REALLOC/PFVM_FREE), kept for the model's life. */
    pfvm_allocator allocator;
} pfvm_model_desc;

/* ---- model and graph building -------------------------------------------- */

/* An empty model (pfvm_model_new: with a zero desc; desc may be NULL). */
PFVM_API pfvm_model *pfvm_model_new_desc(const pfvm_model_desc *desc, pfvm_status *st);
PFVM_API pfvm_model *pfvm_model_new(pfvm_status *st);
PFVM_API void pfvm_model_free(pfvm_model *m);
/* Opset version imported for a domain ("" or "ai.onnx" for the default);
 * 0 when not imported. */
PFVM_API int64_t pfvm_model_opset(const pfvm_model *m, const char *domain);
PFVM_API pfvm_code pfvm_model_set_opset(pfvm_model *m, const char *domain, int64_t version, pfvm_status *st);

/* Creates a graph owned by the model (the main graph when parent is NULL
 * and m->graph is empty, else a subgraph). */
PFVM_API pfvm_graph *pfvm_graph_new(pfvm_model *m, pfvm_graph *parent, const char *name, pfvm_status *st);

/* Finds a value by name in g, then in its enclosing graphs (outer scope). */
PFVM_API pfvm_value *pfvm_graph_find(const pfvm_graph *g, const char *name);
/* Finds a value by name in g only. */
PFVM_API pfvm_value *pfvm_graph_find_local(const pfvm_graph *g, const char *name);
/* Gets or creates the value `name` defined in g. */
PFVM_API pfvm_value *pfvm_graph_value(pfvm_graph *g, const char *name, pfvm_status *st);
/* A new value with a unique name derived from `hint`. */
PFVM_API pfvm_value *pfvm_graph_new_value(pfvm_graph *g, const char *hint, pfvm_status *st);
PFVM_API pfvm_code pfvm_graph_add_input(pfvm_graph *g, pfvm_value *v, pfvm_status *st);
PFVM_API pfvm_code pfvm_graph_add_output(pfvm_graph *g, pfvm_value *v, pfvm_status *st);
/* Makes v an initializer holding t, a tensor made with pfvm_model_tensor
 * (the model owns it). */
PFVM_API pfvm_code pfvm_graph_add_init(pfvm_graph *g, pfvm_value *v, pfvm_tensor *t, pfvm_status *st);
/* Appends a node; inputs may contain NULL for omitted optionals. The node's
 * outputs get v->producer set. Names are copied. */
PFVM_API pfvm_node *pfvm_graph_add_node(pfvm_graph *g, const char *op_type, const char *domain,
                                        const char *name, pfvm_value **inputs, int n_inputs,
                                        pfvm_value **outputs, int n_outputs, pfvm_status *st);
/* Adds an attribute to a node (the attribute's pointers are taken as they
 * are; use pfvm_model_alloc / pfvm_model_strdup for their storage). */
PFVM_API pfvm_attr *pfvm_node_add_attr(pfvm_node *n, const char *name, pfvm_attr_type type, pfvm_status *st);
PFVM_API pfvm_code pfvm_node_set_attr_int(pfvm_node *n, const char *name, int64_t v, pfvm_status *st);
PFVM_API pfvm_code pfvm_node_set_attr_float(pfvm_node *n, const char *name, float v, pfvm_status *st);
PFVM_API pfvm_code pfvm_node_set_attr_ints(pfvm_node *n, const char *name, const int64_t *v, int count, pfvm_status *st);
PFVM_API pfvm_code pfvm_node_set_attr_string(pfvm_node *n, const char *name, const char *s, pfvm_status *st);

/* Sorts g->nodes topologically (stable: the result is the valid order
 * closest to the given one, so a sorted graph keeps its order; nodes added
 * at the end move only as far up as they must). Kahn's algorithm over
 * consumer lists with a heap on the current position: O((N+E) log N).
 * Fails on cycles. Renumbers node ids. */
PFVM_API pfvm_code pfvm_graph_toposort(pfvm_graph *g, pfvm_status *st);
/* Checks structure: unique value names, every input defined before use
 * (outer scope included), outputs defined, node arity. Recurses into
 * subgraphs. */
PFVM_API pfvm_code pfvm_graph_verify(const pfvm_graph *g, pfvm_status *st);

/* ---- editing --------------------------------------------------------------
 *
 * Passes edit graphs with these calls. Values are referenced by pointer
 * everywhere (a node inside an If/Loop body that reads an outer value holds
 * that outer pfvm_value), so rewiring is pointer replacement; names only
 * matter in the saved model. The usual pattern: build the replacement
 * nodes with pfvm_graph_add_node (appended at the end), redirect readers
 * with pfvm_graph_replace_uses, drop dead nodes with pfvm_graph_remove_nodes
 * (or leave them to the dce pass), then pfvm_graph_toposort. */

/* One reader of a value. */
typedef struct pfvm_use {
    pfvm_node *node;   /* reading node (in g or in a subgraph nested in g); NULL: a graph output */
    int index;         /* input slot of node, or position in graph->outputs */
    pfvm_graph *graph; /* graph of node, or the graph whose output it is */
    pfvm_node *top;    /* node of g that holds the reader (== node when node->graph == g);
                          NULL for an output of g itself */
} pfvm_use;

/* Consumer lists of every value defined in one graph, indexed by value
 * id; readers inside nested subgraphs (outer-scope captures) count, with
 * `top` naming the node of g whose subgraph reads. A snapshot: rebuild it
 * after editing the graph. */
typedef struct pfvm_uses {
    const pfvm_graph *g;
    pfvm_use **by_value; /* n entries, each an stb_ds array */
    int n;
} pfvm_uses;

/* Builds the consumer lists of g's values (O(nodes + edges), subgraphs
 * included). Free with pfvm_uses_free. */
PFVM_API pfvm_code pfvm_uses_build(pfvm_uses *u, const pfvm_graph *g, pfvm_status *st);
PFVM_API void pfvm_uses_free(pfvm_uses *u);
/* Readers of v (a value of u->g): returns the array and sets *count. */
PFVM_API const pfvm_use *pfvm_uses_of(const pfvm_uses *u, const pfvm_value *v, int *count);
/* Number of readers of v, graph outputs included. */
PFVM_API int pfvm_uses_count(const pfvm_uses *u, const pfvm_value *v);

/* Makes every reader of `old` in g and in the subgraphs nested in g read
 * `repl` instead (node inputs and subgraph outputs). `repl` must be
 * visible wherever `old` is read (defined in g or an enclosing graph) and
 * have the same type. When `old` is an output of the main graph its name
 * must survive in the saved model: if `repl` is an intermediate of g (made
 * by a node, not an input, output or initializer) the two values swap
 * names and repl takes old's place in g->outputs (old keeps its producer
 * under the fresh name, to be removed as dead); otherwise old's producer
 * hands its output slot to a fresh value and a new node
 * `old = Identity(repl)` (appended to g) keeps the output. Subgraph
 * outputs are positional, so there they are simply replaced. */
PFVM_API pfvm_code pfvm_graph_replace_uses(pfvm_graph *g, pfvm_value *old, pfvm_value *repl, pfvm_status *st);

/* Removes `count` nodes of g (each node once). Their output values leave
 * the graph (g->values, names, value_info) and so must have no readers
 * left; a node whose output is a graph output cannot be removed (an
 * error). Their subgraphs are freed. Node and value ids are renumbered. */
PFVM_API pfvm_code pfvm_graph_remove_nodes(pfvm_graph *g, pfvm_node *const *nodes, int count, pfvm_status *st);
PFVM_API pfvm_code pfvm_graph_remove_node(pfvm_graph *g, pfvm_node *n, pfvm_status *st);
/* Removes initializer or unused producer-less values of g (not inputs or
 * outputs; they must have no readers). Ids are renumbered. */
PFVM_API pfvm_code pfvm_graph_remove_values(pfvm_graph *g, pfvm_value *const *values, int count, pfvm_status *st);
/* Renames v (a value of g) to a name no value in scope has. */
PFVM_API pfvm_code pfvm_value_rename(pfvm_value *v, const char *name, pfvm_status *st);

/* Attribute lookup (NULL when absent). */
PFVM_API const pfvm_attr *pfvm_node_attr(const pfvm_node *n, const char *name);
PFVM_API int64_t pfvm_node_attr_int(const pfvm_node *n, const char *name, int64_t def);
PFVM_API float pfvm_node_attr_float(const pfvm_node *n, const char *name, float def);
/* String attribute as a NUL-terminated string, or def. */
PFVM_API const char *pfvm_node_attr_string(const pfvm_node *n, const char *name, const char *def);
/* Ints attribute: count (or -1 when absent) and *out pointing at its data. */
PFVM_API int pfvm_node_attr_ints(const pfvm_node *n, const char *name, const int64_t **out);
PFVM_API int pfvm_node_attr_floats(const pfvm_node *n, const char *name, const float **out);

/* Model-owned storage for builders and readers. */
PFVM_API void *pfvm_model_alloc(pfvm_model *m, size_t size);
PFVM_API const char *pfvm_model_strdup(pfvm_model *m, const char *s);
PFVM_API const char *pfvm_model_strndup(pfvm_model *m, const char *s, size_t n);
/* A tensor owned by the model (its data too, unless `data` is given, in
 * which case it is viewed in place). String elements of model tensors are
 * allocated with pfvm_model_strdup. */
PFVM_API pfvm_tensor *pfvm_model_tensor(pfvm_model *m, pfvm_dtype dtype, int rank, const int64_t *dims,
                                        void *data, pfvm_status *st);
/* A type owned by the model. */
PFVM_API pfvm_type *pfvm_model_type(pfvm_model *m, pfvm_status *st);
/* Registers a heap block from pfvm (pfvm_onnx_read_file's bytes, a tensor's
 * owned data) to free with the model; not memory from malloc. */
PFVM_API pfvm_code pfvm_model_own(pfvm_model *m, void *block, pfvm_status *st);

/* Shapes. */
PFVM_API void pfvm_shape_unknown(pfvm_shape *s);
PFVM_API pfvm_code pfvm_shape_from_dims(pfvm_symtab *t, pfvm_shape *s, int rank, const int64_t *dims, pfvm_status *st);
/* Concrete dims of a shape under a binding; 0 if some dim is unresolved. */
PFVM_API int pfvm_shape_eval(const pfvm_shape *s, const pfvm_binding *b, int64_t *dims);
/* Prints "[d0,d1]" ("?" for unknown rank). */
PFVM_API int pfvm_shape_print(const pfvm_shape *s, char *buf, size_t n);
/* Prints a type: "float[2,n]", "seq(float[?])", "optional(...)". */
PFVM_API int pfvm_type_print(const pfvm_type *t, char *buf, size_t n);

/* Text dump of a graph (one node per line), for debugging. */
#ifndef PFVM_NO_STDIO
#include <stdio.h>
PFVM_API void pfvm_graph_dump(const pfvm_graph *g, FILE *f);
#endif

/* Values a node reads: its inputs plus outer-scope values its subgraphs
 * capture (stb_ds array, reset first). 0 when out of memory. */
/* The allocator of the object's model (a zero one, meaning the default,
 * for NULL), for the scopes of entry points. */
PFVM_INTERNAL const pfvm_allocator *pfvm__model_allocator(const pfvm_model *m);
PFVM_INTERNAL const pfvm_allocator *pfvm__graph_allocator(const pfvm_graph *g);
PFVM_INTERNAL int pfvm__node_deps(const pfvm_node *n, pfvm_value ***out);
/* 1 where pfvm_graph_toposort also verifies the graph (PFVM_PLANNED_ONLY
 * with PFVM_NO_SHAPE_INFERENCE: the stored order is checked, not made) */
#if defined(PFVM_PLANNED_ONLY) && defined(PFVM_NO_SHAPE_INFERENCE)
#define PFVM__TOPOSORT_VERIFIES 1
#else
#define PFVM__TOPOSORT_VERIFIES 0
#endif

/* Name of a node for messages: its name, or "op_type#index". */
PFVM_INTERNAL const char *pfvm__node_label(const pfvm_node *n, char *buf, size_t size);
/* Prefixes st's message with "node 'LABEL' (OP)" unless it names a node
 * already (kernels' pfvm__op_fail does); returns st's code, or fallback
 * without a status. */
PFVM_INTERNAL pfvm_code pfvm__name_node(const pfvm_node *n, pfvm_status *st, pfvm_code fallback);
/* 1 when data is the storage of an initializer of n's model (of n's graph,
 * the graphs around it, or the main graph: a fused group's head reads the
 * main graph's): the model owns it for its life, unchanged from plan to
 * plan, so weights a prepare hook packed from it may be kept between plans
 * and found again by address. Other constants (B = W * s folded at bind
 * from an input) live in the plan's storage, which the next plan reuses:
 * the same address can then hold other weights. */
PFVM_INTERNAL int pfvm__model_owns(const pfvm_node *n, const void *data);
/* Element i of an integer or bool tensor as int64 (0 for other types or outside
 * the storage): pfvm_tensor_get_i64 without its floating-point cases. */
PFVM_INTERNAL int64_t pfvm__tensor_int_at(const pfvm_tensor *t, int64_t i);

/* ---- lists, counts and setters for programs (no stb_ds in user code) ---- */

/* Sizes of a graph's lists, and their elements (NULL when i is out of
 * range): nodes (topological order once sorted), graph inputs, graph
 * outputs, initializers. */
PFVM_API int pfvm_graph_num_nodes(const pfvm_graph *g);
PFVM_API pfvm_node *pfvm_graph_node(const pfvm_graph *g, int i);
PFVM_API int pfvm_graph_num_inputs(const pfvm_graph *g);
PFVM_API pfvm_value *pfvm_graph_input(const pfvm_graph *g, int i);
PFVM_API int pfvm_graph_num_outputs(const pfvm_graph *g);
PFVM_API pfvm_value *pfvm_graph_output(const pfvm_graph *g, int i);
PFVM_API int pfvm_graph_num_initializers(const pfvm_graph *g);
PFVM_API pfvm_value *pfvm_graph_initializer(const pfvm_graph *g, int i);
/* Elements of a sequence or optional tensor (0 / NULL for a plain tensor). */
PFVM_API int pfvm_tensor_num_elems(const pfvm_tensor *t);
PFVM_API pfvm_tensor *pfvm_tensor_elem(const pfvm_tensor *t, int i);
/* Every value defined in a graph (inputs, initializers, node outputs,
 * values named in value_info), in creation order. */
PFVM_API int pfvm_graph_num_values(const pfvm_graph *g);
PFVM_API pfvm_value *pfvm_graph_value_at(const pfvm_graph *g, int i);
/* A model's opset imports, metadata_props and model-local functions. */
PFVM_API int pfvm_model_num_opsets(const pfvm_model *m);
PFVM_API const pfvm_opset_import *pfvm_model_opset_at(const pfvm_model *m, int i);
PFVM_API int pfvm_model_num_metadata(const pfvm_model *m);
PFVM_API const pfvm_string_pair *pfvm_model_metadata_at(const pfvm_model *m, int i);
PFVM_API int pfvm_model_num_functions(const pfvm_model *m);
PFVM_API pfvm_function *pfvm_model_function_at(const pfvm_model *m, int i);

/* Sequence and optional values (heap, like pfvm_tensor_new; free with
 * pfvm_tensor_free, which frees their elements), as graph inputs and
 * outputs of those kinds take them. elem_dtype is the element type
 * (PFVM_UNDEFINED: taken from the first element); an empty optional has
 * no value. */
PFVM_API pfvm_tensor *pfvm_tensor_sequence_new(pfvm_dtype elem_dtype, pfvm_status *st);
PFVM_API pfvm_tensor *pfvm_tensor_optional_new(pfvm_dtype elem_dtype, pfvm_status *st);
/* Appends elem (a heap tensor, sequence or optional) to sequence t, or
 * makes it the value of optional t, which then owns it. Errors (t keeps
 * nothing, the caller still owns elem): t is not a container, the
 * optional has a value already, elem's element type differs from t's. */
PFVM_API pfvm_code pfvm_tensor_push_elem(pfvm_tensor *t, pfvm_tensor *elem, pfvm_status *st);

/* Adds a model-local function (FunctionProto) domain.name, as the ONNX
 * loader does: nodes of that domain and op_type call it (import the domain
 * with pfvm_model_set_opset). Its body is an empty graph of its own
 * (f->body, no parent): declare the formal inputs with
 * pfvm_graph_add_input, add nodes, then the formal outputs with
 * pfvm_graph_add_output. It imports the model's opsets as they are now
 * (saved as the function's opset_import) and has no attributes. The model
 * owns it; an existing domain.name is an error. */
PFVM_API pfvm_function *pfvm_model_add_function(pfvm_model *m, const char *domain, const char *name,
                                                pfvm_status *st);
/* The node's name, or "op_type#id" written into buf when it has none. */
PFVM_API const char *pfvm_node_label(const pfvm_node *n, char *buf, size_t size);
/* Declares v a tensor of dtype with the given dims (rank <= PFVM_MAX_RANK;
 * dims from pfvm_sym_const/pfvm_sym_var of the model's symbol table), as a
 * value_info or graph input of the model would. */
PFVM_API pfvm_code pfvm_value_set_tensor_type(pfvm_value *v, pfvm_dtype dtype, int rank, const pfvm_sym *const *dims,
                                              pfvm_status *st);

#ifdef __cplusplus
}
#endif
#endif /* PFVM_IR_H */
