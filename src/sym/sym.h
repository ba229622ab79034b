/* sym: symbolic integer expressions for tensor dimensions.
 *
 * A dimension is a `const pfvm_sym *`: an integer constant, a named symbol
 * (an ONNX dim_param or a fresh unknown) or an expression over them. The
 * nodes are hash-consed in a pfvm_symtab, so two structurally equal
 * expressions are the same pointer and equality is pointer comparison.
 * Constructors fold constants and apply the simplifications that hold for
 * every binding; the canonical form is a sum of products with integer
 * coefficients, with floor division, modulo, min and max as atoms. */
#ifndef PFVM_SYM_H
#define PFVM_SYM_H

#include "../base/base.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum pfvm_sym_kind {
    PFVM_SYM_CONST,
    PFVM_SYM_VAR,
    PFVM_SYM_ADD,  /* a + b */
    PFVM_SYM_MUL,  /* a * b */
    PFVM_SYM_DIV,  /* floor(a / b) */
    PFVM_SYM_MOD,  /* a - b*floor(a/b) (sign of b, like Python) */
    PFVM_SYM_MIN,
    PFVM_SYM_MAX
} pfvm_sym_kind;

typedef struct pfvm_sym pfvm_sym;
struct pfvm_sym {
    pfvm_sym_kind kind;
    int64_t value;       /* CONST: the value; VAR: the symbol's id */
    const char *name;    /* VAR: the symbol's name */
    const pfvm_sym *a, *b;
    unsigned hash;
    uint64_t full_hash;
    pfvm_sym *next;      /* hash-consing chain of equal full_hash */
    unsigned nonneg : 1; /* proven >= 0 for every binding */
    unsigned pos : 1;    /* proven >= 1 */
    unsigned inferred : 1; /* VAR made by inference for a dim it could not
                            * derive (pfvm_sym_unknown), not a model's name */
};

typedef struct pfvm_symtab pfvm_symtab;

/* A table owns every expression made in it; freeing it frees them all. */
PFVM_API pfvm_symtab *pfvm_symtab_new(void);
PFVM_API void pfvm_symtab_free(pfvm_symtab *t);

/* Constructors return NULL only when out of memory or on overflow of a
 * constant fold. */
PFVM_API const pfvm_sym *pfvm_sym_const(pfvm_symtab *t, int64_t v);
/* The symbol named `name` (created on first use). A symbol is at least
 * `min` (0 for an unknown dim, 1 for a dim_param by ONNX convention). */
PFVM_API const pfvm_sym *pfvm_sym_var(pfvm_symtab *t, const char *name, int64_t min);
/* The symbol `name` for a dim that inference could not derive: like
 * pfvm_sym_var(t, name, 0), but a symbol it creates is marked `inferred`,
 * so that a name the model declares may replace it (graph-input dims and
 * dim_params never are). */
PFVM_API const pfvm_sym *pfvm_sym_unknown(pfvm_symtab *t, const char *name);
/* A fresh symbol `base`, or `base_2`, `base_3`... if the name is taken. */
PFVM_API const pfvm_sym *pfvm_sym_fresh(pfvm_symtab *t, const char *base);
PFVM_API const pfvm_sym *pfvm_sym_add(pfvm_symtab *t, const pfvm_sym *a, const pfvm_sym *b);
PFVM_API const pfvm_sym *pfvm_sym_sub(pfvm_symtab *t, const pfvm_sym *a, const pfvm_sym *b);
PFVM_API const pfvm_sym *pfvm_sym_mul(pfvm_symtab *t, const pfvm_sym *a, const pfvm_sym *b);
PFVM_API const pfvm_sym *pfvm_sym_div(pfvm_symtab *t, const pfvm_sym *a, const pfvm_sym *b);   /* floor */
PFVM_API const pfvm_sym *pfvm_sym_ceildiv(pfvm_symtab *t, const pfvm_sym *a, const pfvm_sym *b);
PFVM_API const pfvm_sym *pfvm_sym_mod(pfvm_symtab *t, const pfvm_sym *a, const pfvm_sym *b);
PFVM_API const pfvm_sym *pfvm_sym_min(pfvm_symtab *t, const pfvm_sym *a, const pfvm_sym *b);
PFVM_API const pfvm_sym *pfvm_sym_max(pfvm_symtab *t, const pfvm_sym *a, const pfvm_sym *b);
/* Convenience: a op constant. */
PFVM_API const pfvm_sym *pfvm_sym_addi(pfvm_symtab *t, const pfvm_sym *a, int64_t b);
PFVM_API const pfvm_sym *pfvm_sym_muli(pfvm_symtab *t, const pfvm_sym *a, int64_t b);

/* Symbolic booleans (If conditions on dims). eq(a,b) is 1 when a == b and
 * 0 otherwise, built in the same algebra as `1-min(1,max(a-b,b-a))` (a
 * constant when provably equal or different; eq(a,b) and eq(b,a) are the
 * same node); not(s) is `1-s`. */
PFVM_API const pfvm_sym *pfvm_sym_eq(pfvm_symtab *t, const pfvm_sym *a, const pfvm_sym *b);
PFVM_API const pfvm_sym *pfvm_sym_not(pfvm_symtab *t, const pfvm_sym *s);
/* Prints a symbolic boolean: `L==R` or `L!=R` for eq/not-eq forms (the
 * difference's positive terms on the left, negative ones on the right:
 * `(h+1)/2==1`), otherwise `EXPR!=0`. Returns the length it needed. */
PFVM_API int pfvm_sym_print_cond(pfvm_symtab *t, const pfvm_sym *s, char *buf, size_t n);

/* 1 and *out set when s is a constant. */
PFVM_API int pfvm_sym_is_const(const pfvm_sym *s, int64_t *out);

/* Values for symbols, indexed by symbol id. */
typedef struct pfvm_binding {
    int64_t *vals;
    unsigned char *set;
    int n;
} pfvm_binding;

PFVM_API pfvm_code pfvm_binding_set(pfvm_binding *b, const pfvm_sym *var, int64_t v, pfvm_status *st);
PFVM_API void pfvm_binding_clear(pfvm_binding *b);
PFVM_API void pfvm_binding_free(pfvm_binding *b);
/* Evaluates s; 0 when a symbol is unbound, a division by zero or overflow
 * (or out of memory: a large shared DAG is walked with a map of results).
 * Time is linear in the number of distinct subexpressions. */
PFVM_API int pfvm_sym_eval(const pfvm_sym *s, const pfvm_binding *b, int64_t *out);
/* Substitutes bound symbols by their values and re-simplifies, visiting
 * each distinct subexpression once; NULL when out of memory. */
PFVM_API const pfvm_sym *pfvm_sym_subst(pfvm_symtab *t, const pfvm_sym *s, const pfvm_binding *b);

/* Prints s in pfvm's grammar (`batch*64`, `(h+1)/2`, `min(a,b)`); returns
 * the length it needed, like snprintf, up to about 4 KiB: printing stops
 * there (shared subexpressions can make a small expression's text
 * exponentially long). */
PFVM_API int pfvm_sym_print(const pfvm_sym *s, char *buf, size_t n);

/* Proofs from the facts known to the table (dims >= 0, dim_params >= 1). */
PFVM_API int pfvm_sym_proven_nonneg(const pfvm_sym *s);
PFVM_API int pfvm_sym_proven_eq(const pfvm_sym *a, const pfvm_sym *b);
/* s >= v for every binding (lower bounds from the same facts). */
PFVM_API int pfvm_sym_proven_ge(pfvm_symtab *t, const pfvm_sym *s, int64_t v);
/* a != b for every binding: a - b is proven >= 1 or <= -1 (two dims that
 * can never match, e.g. n and n+1, or n and 2*n). */
PFVM_API int pfvm_sym_proven_ne(pfvm_symtab *t, const pfvm_sym *a, const pfvm_sym *b);

/* Number of symbols in the table and the symbol with a given id or name. */
PFVM_API int pfvm_symtab_count(const pfvm_symtab *t);
PFVM_API const pfvm_sym *pfvm_symtab_get(const pfvm_symtab *t, int id);
PFVM_API const pfvm_sym *pfvm_symtab_find(const pfvm_symtab *t, const char *name);

#ifdef __cplusplus
}
#endif
#endif /* PFVM_SYM_H */
