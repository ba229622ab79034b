#include "sym.h"

#include <stdio.h>

/* Hash-consing: every node is keyed by (kind, value, a, b); symbols by name.
 * Operands of commutative operators are ordered deterministically so that
 * a+b and b+a are the same node. */

typedef struct pfvm__symkey {
    int kind;
    int64_t value;
    const pfvm_sym *a, *b;
} pfvm__symkey;


struct pfvm_symtab {
    pfvm_arena arena;
    pfvm_sym **slots;      /* open addressing by hash; chains hold equal hashes */
    size_t n_slots, n_nodes;
    pfvm__map names;       /* name -> variable (keys: the symbols' names) */
    pfvm_sym **vars;       /* stb_ds array: id -> symbol */
    pfvm_sym *consts;      /* PFVM_PLANNED_ONLY: the constants, chained by next */
    pfvm_allocator alloc;  /* the current allocator when the table was made */
};

pfvm_symtab *pfvm_symtab_new(void)
{
    pfvm_symtab *t = (pfvm_symtab *)pfvm__calloc(1, sizeof *t);
    if (!t)
        return NULL;
    pfvm__map_init(&t->names, 1);
    t->alloc = pfvm__alloc_current();
    return t;
}

void pfvm_symtab_free(pfvm_symtab *t)
{
    if (!t)
        return;
    pfvm__free(t->slots);
    pfvm__map_free(&t->names);
    stbds_arrfree(t->vars);
    pfvm__arena_free(&t->arena);
    pfvm__free(t);
}

static uint64_t pfvm__symhash(const pfvm__symkey *k)
{
    uint64_t h = (uint64_t)k->kind * 0x9E3779B97F4A7C15ull;
    h ^= (uint64_t)k->value + 0x632BE59BD9B4E019ull + (h << 6) + (h >> 2);
    if (k->a)
        h ^= k->a->hash + 0x85EBCA77u + (h << 6) + (h >> 2);
    if (k->b)
        h ^= k->b->hash + 0xC2B2AE3Du + (h << 6) + (h >> 2);
    return h ^ (h >> 29);
}

/* Deterministic total order on nodes, used to sort commutative operands. */
static int pfvm__symcmp(const pfvm_sym *x, const pfvm_sym *y)
{
    int c;
    if (x == y)
        return 0;
    if (x->kind != y->kind)
        return x->kind < y->kind ? -1 : 1;
    switch (x->kind) {
    case PFVM_SYM_CONST:
        return x->value < y->value ? -1 : 1;
    case PFVM_SYM_VAR:
        return strcmp(x->name, y->name);
    default:
        c = pfvm__symcmp(x->a, y->a);
        return c ? c : pfvm__symcmp(x->b, y->b);
    }
}

/* The chain head for hash h: the slot holding h's chain, or the empty slot
 * where it would start. */
static pfvm_sym **pfvm__sym_slot(pfvm_symtab *t, uint64_t h)
{
    size_t mask = t->n_slots - 1, i = (size_t)h & mask;
    while (t->slots[i] && t->slots[i]->full_hash != h)
        i = (i + 1) & mask;
    return &t->slots[i];
}

/* The symbol functions are called from everywhere (and by users with a
 * model's table), so the table's own allocator is put in scope where it
 * allocates, not at each of its entry points. */
static void *pfvm__sym_calloc(pfvm_symtab *t, size_t n, size_t size)
{
    pfvm__scope sc;
    void *p;
    pfvm__scope_enter(&sc, &t->alloc);
    p = pfvm__calloc(n, size);
    pfvm__scope_leave(&sc);
    return p;
}

static void *pfvm__sym_arena_alloc(pfvm_symtab *t, size_t size)
{
    pfvm__scope sc;
    void *p;
    pfvm__scope_enter(&sc, &t->alloc);
    p = pfvm__arena_alloc(&t->arena, size);
    pfvm__scope_leave(&sc);
    return p;
}

static int pfvm__sym_grow(pfvm_symtab *t)
{
    size_t n = t->n_slots ? t->n_slots * 2 : 256, i, old = t->n_slots;
    pfvm_sym **slots = (pfvm_sym **)pfvm__sym_calloc(t, n, sizeof *slots), **prev = t->slots;
    if (!slots)
        return 0;
    t->slots = slots;
    t->n_slots = n;
    for (i = 0; i < old; i++)
        if (prev[i])
            *pfvm__sym_slot(t, prev[i]->full_hash) = prev[i];
    pfvm__free(prev);
    return 1;
}

static const pfvm_sym *pfvm__intern(pfvm_symtab *t, pfvm_sym_kind kind, int64_t value,
                                     const pfvm_sym *a, const pfvm_sym *b)
{
    pfvm__symkey key;
    pfvm_sym *s, **slot;
    uint64_t h;
    memset(&key, 0, sizeof key);
    key.kind = (int)kind;
    key.value = value;
    key.a = a;
    key.b = b;
    h = pfvm__symhash(&key);
    if (t->n_nodes * 2 >= t->n_slots && !pfvm__sym_grow(t))
        return NULL;
    slot = pfvm__sym_slot(t, h);
    for (s = *slot; s; s = s->next)
        if (s->kind == kind && s->value == value && s->a == a && s->b == b)
            return s;
    s = (pfvm_sym *)pfvm__sym_arena_alloc(t, sizeof *s);
    if (!s)
        return NULL;
    s->kind = kind;
    s->value = value;
    s->a = a;
    s->b = b;
    s->hash = (unsigned)h;
    s->full_hash = h;
    s->next = *slot;
    switch (kind) {
    case PFVM_SYM_CONST:
        s->nonneg = value >= 0;
        s->pos = value >= 1;
        break;
    case PFVM_SYM_ADD:
        s->nonneg = a->nonneg && b->nonneg;
        s->pos = s->nonneg && (a->pos || b->pos);
        break;
    case PFVM_SYM_MUL:
        s->nonneg = a->nonneg && b->nonneg;
        s->pos = a->pos && b->pos;
        break;
    case PFVM_SYM_DIV:
        s->nonneg = a->nonneg && b->pos;
        break;
    case PFVM_SYM_MOD:
        s->nonneg = b->pos;
        break;
    case PFVM_SYM_MIN:
        s->nonneg = a->nonneg && b->nonneg;
        s->pos = a->pos && b->pos;
        break;
    case PFVM_SYM_MAX:
        s->nonneg = a->nonneg || b->nonneg;
        s->pos = a->pos || b->pos;
        break;
    case PFVM_SYM_VAR:
        break;
    }
    *slot = s;
    t->n_nodes++;
    return s;
}

#ifdef PFVM_PLANNED_ONLY
/* PFVM_PLANNED_ONLY: the reader makes no symbols and nothing infers, so
 * the dims are all constants, and a planned model has few distinct ones:
 * one list, searched in order, in place of the hash table (whose code is
 * then not linked; the same node for the same value, as interned). */
const pfvm_sym *pfvm_sym_const(pfvm_symtab *t, int64_t v)
{
    pfvm_sym *s;
    for (s = t->consts; s; s = s->next)
        if (s->value == v)
            return s;
    s = (pfvm_sym *)pfvm__sym_arena_alloc(t, sizeof *s);
    if (!s)
        return NULL;
    memset(s, 0, sizeof *s);
    s->kind = PFVM_SYM_CONST;
    s->value = v;
    s->full_hash = ((uint64_t)v + 0x632BE59BD9B4E019ull) * 0x9E3779B97F4A7C15ull;
    s->hash = (unsigned)(s->full_hash >> 32);
    s->nonneg = v >= 0;
    s->pos = v >= 1;
    s->next = t->consts;
    t->consts = s;
    return s;
}
#else
const pfvm_sym *pfvm_sym_const(pfvm_symtab *t, int64_t v)
{
    return pfvm__intern(t, PFVM_SYM_CONST, v, NULL, NULL);
}
#endif

static const pfvm_sym *pfvm__scoped_sym_var(pfvm_symtab *t, const char *name, int64_t min)
{
    void *found;
    pfvm_sym *s;
    if (pfvm__map_get(&t->names, name, &found))
        return (const pfvm_sym *)found;
    s = (pfvm_sym *)pfvm__arena_alloc(&t->arena, sizeof *s);
    if (!s)
        return NULL;
    s->kind = PFVM_SYM_VAR;
    s->value = stbds_arrlen(t->vars);
    s->name = pfvm__arena_strdup(&t->arena, name);
    if (!s->name)
        return NULL;
    {
        unsigned h = 2166136261u;
        const char *p;
        for (p = name; *p; p++)
            h = (h ^ (unsigned char)*p) * 16777619u;
        s->hash = h;
    }
    s->nonneg = 1;
    s->pos = min >= 1;
    if (!pfvm__arrreserve(t->vars, (size_t)stbds_arrlen(t->vars) + 1) || !pfvm__map_put(&t->names, s->name, s))
        return NULL;
    stbds_arrput(t->vars, s);
    return s;
}

const pfvm_sym *pfvm_sym_var(pfvm_symtab *t, const char *name, int64_t min)
{
    PFVM__SCOPED(const pfvm_sym *, &t->alloc, pfvm__scoped_sym_var(t, name, min));
}

const pfvm_sym *pfvm_sym_unknown(pfvm_symtab *t, const char *name)
{
    int known = pfvm__map_get(&t->names, name, NULL);
    pfvm_sym *s = (pfvm_sym *)pfvm_sym_var(t, name, 0);
    if (s && !known)
        s->inferred = 1;
    return s;
}

const pfvm_sym *pfvm_sym_fresh(pfvm_symtab *t, const char *base)
{
    char buf[256];
    int i;
    if (!pfvm__map_get(&t->names, base, NULL))
        return pfvm_sym_var(t, base, 0);
    for (i = 2;; i++) {
        /* the base is cut so that the suffix always fits (else every
         * candidate would be the same name and this would never end) */
        pfvm__snprintf(buf, sizeof buf, "%.200s_%d", base, i);
        if (!pfvm__map_get(&t->names, buf, NULL))
            return pfvm_sym_var(t, buf, 0);
    }
}

int pfvm_sym_is_const(const pfvm_sym *s, int64_t *out)
{
    if (s && s->kind == PFVM_SYM_CONST) {
        if (out)
            *out = s->value;
        return 1;
    }
    return 0;
}

static int64_t pfvm__floordiv(int64_t a, int64_t b)
{
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0)))
        q--;
    return q;
}

static int64_t pfvm__floormod(int64_t a, int64_t b)
{
    int64_t r = a % b;
    if (r != 0 && ((r < 0) != (b < 0)))
        r += b;
    return r;
}

/* Splits s into (rest, constant) when s = rest + c. */
static const pfvm_sym *pfvm__split_const(const pfvm_sym *s, int64_t *c)
{
    if (s->kind == PFVM_SYM_ADD && s->a->kind == PFVM_SYM_CONST) {
        *c = s->a->value;
        return s->b;
    }
    *c = 0;
    return s;
}

/* Splits s into (coefficient, rest) when s = k * rest. */
static const pfvm_sym *pfvm__split_coef(const pfvm_sym *s, int64_t *k)
{
    if (s->kind == PFVM_SYM_MUL && s->a->kind == PFVM_SYM_CONST) {
        *k = s->a->value;
        return s->b;
    }
    *k = 1;
    return s;
}

static const pfvm_sym *pfvm__comm(pfvm_symtab *t, pfvm_sym_kind kind, const pfvm_sym *a,
                                   const pfvm_sym *b)
{
    if (pfvm__symcmp(a, b) > 0) {
        const pfvm_sym *x = a;
        a = b;
        b = x;
    }
    return pfvm__intern(t, kind, 0, a, b);
}

/* ---- canonical sums of products ---------------------------------------------
 *
 * A sum is a right-nested chain of ADD nodes over its terms: the constant
 * first, then the other terms ordered by their monomial (pfvm__symcmp). A
 * term is k*m, stored as MUL(k, m) (or m when k = 1); a monomial is a
 * right-nested chain of MUL nodes over its atoms (symbols, floor
 * divisions, modulos, min, max) in the same order. Like terms merge, so
 * equal polynomials are the same node. */

#define PFVM__SYM_MAX_TERMS 64

static int pfvm__factors(const pfvm_sym *s, int64_t *coef, const pfvm_sym **f, int *n, int cap);

typedef struct pfvm__term {
    int64_t k;
    const pfvm_sym *m; /* NULL for the constant term */
} pfvm__term;

/* Appends the terms of s times `mult`; 0 on overflow or too many terms. */
static int pfvm__terms(const pfvm_sym *s, int64_t mult, pfvm__term *out, int *n)
{
    int64_t k;
    const pfvm_sym *m;
    if (s->kind == PFVM_SYM_ADD)
        return pfvm__terms(s->a, mult, out, n) && pfvm__terms(s->b, mult, out, n);
    if (*n >= PFVM__SYM_MAX_TERMS)
        return 0;
    if (s->kind == PFVM_SYM_CONST) {
        k = s->value;
        m = NULL;
    } else {
        m = pfvm__split_coef(s, &k);
    }
    if (!pfvm__mul_i64(k, mult, &out[*n].k))
        return 0;
    out[(*n)++].m = m;
    return 1;
}

static int pfvm__termcmp(const pfvm__term *x, const pfvm__term *y)
{
    if (x->m == y->m)
        return 0;
    if (!x->m || !y->m)
        return x->m ? 1 : -1;
    return pfvm__symcmp(x->m, y->m);
}

/* The canonical sum of terms (merged, zero terms dropped, sorted). */
static const pfvm_sym *pfvm__sum_of(pfvm_symtab *t, pfvm__term *tm, int n)
{
    int i, j, w = 0;
    const pfvm_sym *acc = NULL;
    /* insertion sort: sums are short */
    for (i = 1; i < n; i++) {
        pfvm__term x = tm[i];
        for (j = i - 1; j >= 0 && pfvm__termcmp(&tm[j], &x) > 0; j--)
            tm[j + 1] = tm[j];
        tm[j + 1] = x;
    }
    for (i = 0; i < n; i++) {
        if (w > 0 && tm[w - 1].m == tm[i].m) {
            if (!pfvm__add_i64(tm[w - 1].k, tm[i].k, &tm[w - 1].k))
                return NULL;
        } else {
            tm[w++] = tm[i];
        }
        if (tm[w - 1].k == 0)
            w--;
    }
    if (w == 0)
        return pfvm_sym_const(t, 0);
    for (i = w - 1; i >= 0; i--) {
        const pfvm_sym *term;
        if (!tm[i].m)
            term = pfvm_sym_const(t, tm[i].k);
        else if (tm[i].k == 1)
            term = tm[i].m;
        else
            term = pfvm__intern(t, PFVM_SYM_MUL, 0, pfvm_sym_const(t, tm[i].k), tm[i].m);
        if (!term)
            return NULL;
        acc = acc ? pfvm__intern(t, PFVM_SYM_ADD, 0, term, acc) : term;
        if (!acc)
            return NULL;
    }
    return acc;
}

const pfvm_sym *pfvm_sym_add(pfvm_symtab *t, const pfvm_sym *a, const pfvm_sym *b)
{
    pfvm__term tm[2 * PFVM__SYM_MAX_TERMS];
    int n = 0;
    int64_t r;
    if (!a || !b)
        return NULL;
    if (a->kind == PFVM_SYM_CONST && b->kind == PFVM_SYM_CONST)
        return pfvm__add_i64(a->value, b->value, &r) ? pfvm_sym_const(t, r) : NULL;
    if (!pfvm__terms(a, 1, tm, &n) || !pfvm__terms(b, 1, tm, &n))
        return NULL;
    return pfvm__sum_of(t, tm, n);
}

/* The canonical product of two monomials (either may be NULL for 1). */
static const pfvm_sym *pfvm__monomial_mul(pfvm_symtab *t, const pfvm_sym *x, const pfvm_sym *y)
{
    const pfvm_sym *f[32], *acc = NULL;
    int64_t coef = 1;
    int n = 0, i, j;
    if (!x || !y)
        return x ? x : y;
    if (!pfvm__factors(x, &coef, f, &n, 32) || !pfvm__factors(y, &coef, f, &n, 32) || coef != 1)
        return pfvm__comm(t, PFVM_SYM_MUL, x, y); /* too many factors: still correct */
    for (i = 1; i < n; i++) {
        const pfvm_sym *v = f[i];
        for (j = i - 1; j >= 0 && pfvm__symcmp(f[j], v) > 0; j--)
            f[j + 1] = f[j];
        f[j + 1] = v;
    }
    for (i = n - 1; i >= 0; i--)
        if (!(acc = acc ? pfvm__intern(t, PFVM_SYM_MUL, 0, f[i], acc) : f[i]))
            return NULL;
    return acc;
}

const pfvm_sym *pfvm_sym_mul(pfvm_symtab *t, const pfvm_sym *a, const pfvm_sym *b)
{
    pfvm__term ta[PFVM__SYM_MAX_TERMS], tb[PFVM__SYM_MAX_TERMS], tr[PFVM__SYM_MAX_TERMS];
    int na = 0, nb = 0, n = 0, i, j;
    int64_t r;
    if (!a || !b)
        return NULL;
    if (a->kind == PFVM_SYM_CONST && b->kind == PFVM_SYM_CONST)
        return pfvm__mul_i64(a->value, b->value, &r) ? pfvm_sym_const(t, r) : NULL;
    if (!pfvm__terms(a, 1, ta, &na) || !pfvm__terms(b, 1, tb, &nb))
        return NULL;
    if (na * nb > PFVM__SYM_MAX_TERMS)
        return pfvm__comm(t, PFVM_SYM_MUL, a, b); /* too big to distribute: still correct */
    /* distribute: products of sums are sums of products */
    for (i = 0; i < na; i++)
        for (j = 0; j < nb; j++) {
            if (!pfvm__mul_i64(ta[i].k, tb[j].k, &tr[n].k))
                return NULL;
            tr[n].m = pfvm__monomial_mul(t, ta[i].m, tb[j].m);
            if ((ta[i].m || tb[j].m) && !tr[n].m)
                return NULL;
            n++;
        }
    return pfvm__sum_of(t, tr, n);
}

const pfvm_sym *pfvm_sym_sub(pfvm_symtab *t, const pfvm_sym *a, const pfvm_sym *b)
{
    return pfvm_sym_add(t, a, pfvm_sym_muli(t, b, -1));
}

const pfvm_sym *pfvm_sym_addi(pfvm_symtab *t, const pfvm_sym *a, int64_t b)
{
    return pfvm_sym_add(t, a, pfvm_sym_const(t, b));
}

const pfvm_sym *pfvm_sym_muli(pfvm_symtab *t, const pfvm_sym *a, int64_t b)
{
    return pfvm_sym_mul(t, a, pfvm_sym_const(t, b));
}

/* 1 when every term of s is a multiple of d (constant d > 0). */
static int pfvm__divisible(const pfvm_sym *s, int64_t d)
{
    int64_t k;
    if (s->kind == PFVM_SYM_CONST)
        return s->value % d == 0;
    if (s->kind == PFVM_SYM_ADD)
        return pfvm__divisible(s->a, d) && pfvm__divisible(s->b, d);
    pfvm__split_coef(s, &k);
    return k % d == 0;
}

/* s / d for s divisible by d. */
static const pfvm_sym *pfvm__exact_div(pfvm_symtab *t, const pfvm_sym *s, int64_t d)
{
    int64_t k;
    const pfvm_sym *rest;
    if (s->kind == PFVM_SYM_CONST)
        return pfvm_sym_const(t, s->value / d);
    if (s->kind == PFVM_SYM_ADD)
        return pfvm_sym_add(t, pfvm__exact_div(t, s->a, d), pfvm__exact_div(t, s->b, d));
    rest = pfvm__split_coef(s, &k);
    return pfvm_sym_muli(t, rest, k / d);
}

/* Flattens a product into a coefficient and factors (up to cap); 0 when
 * s is not a product of atoms (a sum, say). */
static int pfvm__factors(const pfvm_sym *s, int64_t *coef, const pfvm_sym **f, int *n, int cap)
{
    if (s->kind == PFVM_SYM_CONST) {
        return pfvm__mul_i64(*coef, s->value, coef);
    }
    if (s->kind == PFVM_SYM_MUL)
        return pfvm__factors(s->a, coef, f, n, cap) && pfvm__factors(s->b, coef, f, n, cap);
    if (s->kind == PFVM_SYM_ADD || *n >= cap)
        return 0;
    f[(*n)++] = s;
    return 1;
}

static const pfvm_sym *pfvm__monomial_div(pfvm_symtab *t, const pfvm_sym *a, const pfvm_sym *b)
{
    const pfvm_sym *fa[16], *fb[16];
    int na = 0, nb = 0, i, j;
    int64_t ca = 1, cb = 1;
    const pfvm_sym *r;
    if (!pfvm__factors(a, &ca, fa, &na, 16) || !pfvm__factors(b, &cb, fb, &nb, 16) || cb <= 0 || ca % cb)
        return NULL;
    for (j = 0; j < nb; j++) {
        if (!fb[j]->pos)
            return NULL; /* a factor that may be 0 cannot cancel */
        for (i = 0; i < na && fa[i] != fb[j]; i++) {
        }
        if (i == na)
            return NULL;
        fa[i] = fa[--na];
    }
    r = pfvm_sym_const(t, ca / cb);
    for (i = 0; i < na && r; i++)
        r = pfvm_sym_mul(t, r, fa[i]);
    return r;
}

const pfvm_sym *pfvm_sym_div(pfvm_symtab *t, const pfvm_sym *a, const pfvm_sym *b)
{
    int64_t c;
    if (!a || !b)
        return NULL;
    if (b->kind == PFVM_SYM_CONST) {
        if (b->value == 0)
            return NULL;
        if (a->kind == PFVM_SYM_CONST)
            return pfvm_sym_const(t, pfvm__floordiv(a->value, b->value));
        if (b->value == 1)
            return a;
        if (b->value > 0) {
            const pfvm_sym *rest;
            int64_t m, cp;
            if (pfvm__divisible(a, b->value))
                return pfvm__exact_div(t, a, b->value);
            /* floor(floor(x/p)/q) = floor(x/(p*q)) for positive p, q */
            if (a->kind == PFVM_SYM_DIV && a->b->kind == PFVM_SYM_CONST && a->b->value > 0 &&
                pfvm__mul_i64(a->b->value, b->value, &m))
                return pfvm_sym_div(t, a->a, pfvm_sym_const(t, m));
            /* (x*d + c) / d = x + c/d when x*d is divisible */
            rest = pfvm__split_const(a, &c);
            /* floor((floor(x/p) + c)/q) = floor((x + c*p)/(p*q)) */
            /* (cp, not c: a product that overflows must leave c as it was for the rules below) */
            if (rest != a && rest->kind == PFVM_SYM_DIV && rest->b->kind == PFVM_SYM_CONST && rest->b->value > 0 &&
                pfvm__mul_i64(rest->b->value, b->value, &m) && pfvm__mul_i64(c, rest->b->value, &cp))
                return pfvm_sym_div(t, pfvm_sym_addi(t, rest->a, cp), pfvm_sym_const(t, m));
            if (rest != a && pfvm__divisible(rest, b->value))
                return pfvm_sym_addi(t, pfvm__exact_div(t, rest, b->value),
                                     pfvm__floordiv(c, b->value));
            /* (x + q*d + r) / d = (x + r)/d + q: whole multiples leave the floor */
            if (rest != a && (c < 0 || c >= b->value)) {
                int64_t q = pfvm__floordiv(c, b->value);
                /* c - q*d is floormod(c, d), without the product that can overflow */
                return pfvm_sym_addi(t, pfvm_sym_div(t, pfvm_sym_addi(t, rest, pfvm__floormod(c, b->value)), b), q);
            }
        }
    }
    if (a == b && b->pos)
        return pfvm_sym_const(t, 1);
    {
        /* monomials: k1*x*y / (k2*x) = (k1/k2)*y when k2 divides k1 (the
         * divisor's symbols are >= 1 for dims; guarded by pos) */
        const pfvm_sym *q = pfvm__monomial_div(t, a, b);
        if (q)
            return q;
    }
    return pfvm__intern(t, PFVM_SYM_DIV, 0, a, b);
}

const pfvm_sym *pfvm_sym_ceildiv(pfvm_symtab *t, const pfvm_sym *a, const pfvm_sym *b)
{
    /* positive constant divisors: ceil(a/b) = floor((a + b - 1)/b), which
     * keeps the canonical form a floor division */
    if (a && b && b->kind == PFVM_SYM_CONST && b->value > 0)
        return pfvm_sym_div(t, pfvm_sym_addi(t, a, b->value - 1), b);
    /* ceil(a/b) = -floor(-a/b) */
    return pfvm_sym_muli(t, pfvm_sym_div(t, pfvm_sym_muli(t, a, -1), b), -1);
}

const pfvm_sym *pfvm_sym_mod(pfvm_symtab *t, const pfvm_sym *a, const pfvm_sym *b)
{
    if (!a || !b)
        return NULL;
    if (b->kind == PFVM_SYM_CONST) {
        if (b->value == 0)
            return NULL;
        if (a->kind == PFVM_SYM_CONST)
            return pfvm_sym_const(t, pfvm__floormod(a->value, b->value));
        if (b->value == 1 || (b->value > 0 && pfvm__divisible(a, b->value)))
            return pfvm_sym_const(t, 0);
    }
    if (a == b)
        return pfvm_sym_const(t, 0);
    return pfvm__intern(t, PFVM_SYM_MOD, 0, a, b);
}

static const pfvm_sym *pfvm__minmax(pfvm_symtab *t, pfvm_sym_kind kind, const pfvm_sym *a,
                                     const pfvm_sym *b)
{
    const pfvm_sym *d;
    int64_t c;
    if (!a || !b)
        return NULL;
    if (a == b)
        return a;
    d = pfvm_sym_sub(t, a, b);
    if (d && d->kind == PFVM_SYM_CONST) {
        c = d->value;
        return (kind == PFVM_SYM_MIN) == (c <= 0) ? a : b;
    }
    if (d && d->nonneg) /* a >= b */
        return kind == PFVM_SYM_MIN ? b : a;
    d = pfvm_sym_sub(t, b, a);
    if (d && d->nonneg) /* b >= a */
        return kind == PFVM_SYM_MIN ? a : b;
    return pfvm__comm(t, kind, a, b);
}

const pfvm_sym *pfvm_sym_min(pfvm_symtab *t, const pfvm_sym *a, const pfvm_sym *b)
{
    return pfvm__minmax(t, PFVM_SYM_MIN, a, b);
}

const pfvm_sym *pfvm_sym_max(pfvm_symtab *t, const pfvm_sym *a, const pfvm_sym *b)
{
    return pfvm__minmax(t, PFVM_SYM_MAX, a, b);
}

/* ---- bindings and evaluation -------------------------------------------- */

pfvm_code pfvm_binding_set(pfvm_binding *b, const pfvm_sym *var, int64_t v, pfvm_status *st)
{
    int id;
    if (!var || var->kind != PFVM_SYM_VAR)
        return pfvm__fail(st, PFVM_ERR_INVALID, "binding: not a symbol");
    id = (int)var->value;
    if (id >= b->n) {
        int n = id + 16, i;
        int64_t *vals = (int64_t *)pfvm__realloc(b->vals, (size_t)n * sizeof *vals);
        unsigned char *set;
        if (!vals)
            return pfvm__fail(st, PFVM_ERR_NOMEM, "binding: out of memory");
        b->vals = vals;
        set = (unsigned char *)pfvm__realloc(b->set, (size_t)n);
        if (!set)
            return pfvm__fail(st, PFVM_ERR_NOMEM, "binding: out of memory");
        b->set = set;
        for (i = b->n; i < n; i++)
            b->set[i] = 0;
        b->n = n;
    }
    b->vals[id] = v;
    b->set[id] = 1;
    return PFVM_OK;
}

void pfvm_binding_clear(pfvm_binding *b)
{
    if (b->set)
        memset(b->set, 0, (size_t)b->n);
}

void pfvm_binding_free(pfvm_binding *b)
{
    pfvm__free(b->vals);
    pfvm__free(b->set);
    b->vals = NULL;
    b->set = NULL;
    b->n = 0;
}

/* Expressions are DAGs: hash-consing shares equal subexpressions, so a
 * small one (each level using the one below twice) is exponentially large
 * as a tree. Evaluation first walks it as a tree within a small budget (the
 * common case, no allocation); past the budget it walks again visiting each
 * node once, remembering results in a map. Substitution always remembers. */
#define PFVM__SYM_TREE_BUDGET 4096L

static int pfvm__sym_apply(pfvm_sym_kind kind, int64_t x, int64_t y, int64_t *out)
{
    switch (kind) {
    case PFVM_SYM_ADD: return pfvm__add_i64(x, y, out);
    case PFVM_SYM_MUL: return pfvm__mul_i64(x, y, out);
    case PFVM_SYM_DIV:
        if (y == 0 || (x == INT64_MIN && y == -1))
            return 0;
        *out = pfvm__floordiv(x, y);
        return 1;
    case PFVM_SYM_MOD:
        if (y == 0 || (x == INT64_MIN && y == -1))
            return 0;
        *out = pfvm__floormod(x, y);
        return 1;
    case PFVM_SYM_MIN: *out = x < y ? x : y; return 1;
    case PFVM_SYM_MAX: *out = x > y ? x : y; return 1;
    default: return 0;
    }
}

/* A leaf's value: 1 (and *out) for a constant or a bound variable, 0 for an
 * unbound one, -1 for an interior node. */
static int pfvm__sym_leaf(const pfvm_sym *s, const pfvm_binding *b, int64_t *out)
{
    switch (s->kind) {
    case PFVM_SYM_CONST:
        *out = s->value;
        return 1;
    case PFVM_SYM_VAR:
        if (!b || s->value >= b->n || !b->set[s->value])
            return 0;
        *out = b->vals[s->value];
        return 1;
    default:
        return -1;
    }
}

static int pfvm__sym_eval_tree(const pfvm_sym *s, const pfvm_binding *b, int64_t *out, long *budget)
{
    int64_t x, y;
    int leaf;
    if (!s || --*budget < 0)
        return 0;
    leaf = pfvm__sym_leaf(s, b, out);
    if (leaf >= 0)
        return leaf;
    return pfvm__sym_eval_tree(s->a, b, &x, budget) && pfvm__sym_eval_tree(s->b, b, &y, budget) &&
           pfvm__sym_apply(s->kind, x, y, out);
}

/* One evaluation's remembered results: node -> 1 + index into vals. */
typedef struct pfvm__sym_evalmemo {
    pfvm__map seen;
    int64_t *vals; /* stb_ds array; a node that has no value is not remembered */
    int oom;
} pfvm__sym_evalmemo;

static int pfvm__sym_eval_dag(const pfvm_sym *s, const pfvm_binding *b, int64_t *out, pfvm__sym_evalmemo *m)
{
    int64_t x, y;
    void *at;
    int leaf;
    if (!s || m->oom)
        return 0;
    leaf = pfvm__sym_leaf(s, b, out);
    if (leaf >= 0)
        return leaf;
    if (pfvm__map_get(&m->seen, s, &at)) {
        *out = m->vals[(size_t)at - 1];
        return 1;
    }
    if (!pfvm__sym_eval_dag(s->a, b, &x, m) || !pfvm__sym_eval_dag(s->b, b, &y, m) ||
        !pfvm__sym_apply(s->kind, x, y, out))
        return 0;
    if (!pfvm__arrpush(m->vals, *out) || !pfvm__map_put(&m->seen, s, (void *)(size_t)stbds_arrlen(m->vals)))
        m->oom = 1;
    return !m->oom;
}

int pfvm_sym_eval(const pfvm_sym *s, const pfvm_binding *b, int64_t *out)
{
    long budget = PFVM__SYM_TREE_BUDGET;
    pfvm__sym_evalmemo m;
    int ok = pfvm__sym_eval_tree(s, b, out, &budget);
    if (ok || budget >= 0)
        return ok;
    memset(&m, 0, sizeof m);
    ok = pfvm__sym_eval_dag(s, b, out, &m);
    pfvm__map_free(&m.seen);
    stbds_arrfree(m.vals);
    return ok;
}

static const pfvm_sym *pfvm__sym_subst(pfvm_symtab *t, const pfvm_sym *s, const pfvm_binding *b, pfvm__map *seen)
{
    const pfvm_sym *x, *y, *r;
    void *at;
    int64_t v;
    int leaf;
    if (!s)
        return NULL;
    leaf = pfvm__sym_leaf(s, b, &v);
    if (leaf > 0)
        return s->kind == PFVM_SYM_CONST ? s : pfvm_sym_const(t, v);
    if (leaf == 0)
        return s;
    if (pfvm__map_get(seen, s, &at))
        return (const pfvm_sym *)at;
    x = pfvm__sym_subst(t, s->a, b, seen);
    y = x ? pfvm__sym_subst(t, s->b, b, seen) : NULL;
    if (!y)
        return NULL;
    switch (s->kind) {
    case PFVM_SYM_ADD: r = pfvm_sym_add(t, x, y); break;
    case PFVM_SYM_MUL: r = pfvm_sym_mul(t, x, y); break;
    case PFVM_SYM_DIV: r = pfvm_sym_div(t, x, y); break;
    case PFVM_SYM_MOD: r = pfvm_sym_mod(t, x, y); break;
    case PFVM_SYM_MIN: r = pfvm_sym_min(t, x, y); break;
    case PFVM_SYM_MAX: r = pfvm_sym_max(t, x, y); break;
    default: return NULL;
    }
    /* the cast drops const only to store the pointer; it is read back const */
    return r && pfvm__map_put(seen, s, (void *)(size_t)r) ? r : NULL;
}

static const pfvm_sym *pfvm__scoped_sym_subst(pfvm_symtab *t, const pfvm_sym *s, const pfvm_binding *b)
{
    pfvm__map seen;
    const pfvm_sym *r;
    memset(&seen, 0, sizeof seen);
    r = pfvm__sym_subst(t, s, b, &seen);
    pfvm__map_free(&seen);
    return r;
}

const pfvm_sym *pfvm_sym_subst(pfvm_symtab *t, const pfvm_sym *s, const pfvm_binding *b)
{
    PFVM__SCOPED(const pfvm_sym *, &t->alloc, pfvm__scoped_sym_subst(t, s, b));
}

/* ---- printing ------------------------------------------------------------- */

typedef struct pfvm__sbuf {
    char *buf;
    size_t n, len;
} pfvm__sbuf;

static void pfvm__sput(pfvm__sbuf *b, const char *s)
{
    size_t l = strlen(s);
    if (b->len < b->n) {
        size_t room = b->n - b->len - 1, c = l < room ? l : room;
        memcpy(b->buf + b->len, s, c);
        b->buf[b->len + c] = 0;
    }
    b->len += l;
}

/* precedence: 1 sum, 2 product/div/mod, 3 atom */
static int pfvm__prec(const pfvm_sym *s)
{
    switch (s->kind) {
    case PFVM_SYM_ADD: return 1;
    case PFVM_SYM_MUL: case PFVM_SYM_DIV: case PFVM_SYM_MOD: return 2;
    case PFVM_SYM_CONST: return s->value < 0 ? 1 : 3;
    default: return 3;
    }
}

/* Printing walks the expression as a tree, but it is a DAG (hash-consed
 * subexpressions are shared), so a small one can print exponentially long
 * (min(x,x+1) nested 30 deep): past this length printing stops, and the
 * length returned only says "at least this long". 4 KiB is far past any
 * dim a person reads, and keeps each print cheap (a fuzz input printing
 * 64 KiB texts a few hundred times took 0.6 s). */
#define PFVM__SYM_PRINT_MAX ((size_t)1 << 12)

static void pfvm__sprint(pfvm__sbuf *b, const pfvm_sym *s, int min_prec)
{
    char tmp[32];
    int paren;
    if (b->len > PFVM__SYM_PRINT_MAX)
        return;
    paren = pfvm__prec(s) < min_prec;
    if (paren)
        pfvm__sput(b, "(");
    switch (s->kind) {
    case PFVM_SYM_CONST:
        pfvm__snprintf(tmp, sizeof tmp, "%lld", (long long)s->value);
        pfvm__sput(b, tmp);
        break;
    case PFVM_SYM_VAR:
        pfvm__sput(b, s->name);
        break;
    case PFVM_SYM_ADD: {
        /* terms with positive coefficients first, then the negative ones,
         * the constant last: "n-h+1" */
        const pfvm_sym *x;
        int64_t c = 0, k;
        int pass, first = 1;
        for (pass = 0; pass < 2; pass++)
            for (x = s; x; x = x->kind == PFVM_SYM_ADD ? x->b : NULL) {
                const pfvm_sym *term = x->kind == PFVM_SYM_ADD ? x->a : x, *m;
                if (term->kind == PFVM_SYM_CONST) {
                    c = term->value;
                    continue;
                }
                m = pfvm__split_coef(term, &k);
                if ((k < 0) != (pass == 1))
                    continue;
                if (k < 0) {
                    pfvm__sput(b, "-");
                    if (k != -1) {
                        pfvm__snprintf(tmp, sizeof tmp, "%lld*", (long long)-k);
                        pfvm__sput(b, tmp);
                    }
                    pfvm__sprint(b, m, k != -1 ? 3 : 2);
                } else {
                    if (!first)
                        pfvm__sput(b, "+");
                    pfvm__sprint(b, term, 2);
                }
                first = 0;
            }
        if (c) {
            pfvm__snprintf(tmp, sizeof tmp, c < 0 ? "%lld" : "+%lld", (long long)c);
            pfvm__sput(b, tmp);
        }
        break;
    }
    case PFVM_SYM_MUL:
        if (s->a->kind == PFVM_SYM_CONST && s->a->value == -1) {
            pfvm__sput(b, "-");
            pfvm__sprint(b, s->b, 3);
            break;
        }
        pfvm__sprint(b, s->a, 2);
        pfvm__sput(b, "*");
        pfvm__sprint(b, s->b, 3);
        break;
    case PFVM_SYM_DIV:
    case PFVM_SYM_MOD:
        pfvm__sprint(b, s->a, 2);
        pfvm__sput(b, s->kind == PFVM_SYM_DIV ? "/" : "%");
        pfvm__sprint(b, s->b, 3);
        break;
    case PFVM_SYM_MIN:
    case PFVM_SYM_MAX:
        pfvm__sput(b, s->kind == PFVM_SYM_MIN ? "min(" : "max(");
        pfvm__sprint(b, s->a, 0);
        pfvm__sput(b, ",");
        pfvm__sprint(b, s->b, 0);
        pfvm__sput(b, ")");
        break;
    }
    if (paren)
        pfvm__sput(b, ")");
}

int pfvm_sym_print(const pfvm_sym *s, char *buf, size_t n)
{
    pfvm__sbuf b;
    b.buf = buf;
    b.n = n;
    b.len = 0;
    if (n)
        buf[0] = 0;
    if (!s)
        pfvm__sput(&b, "?");
    else
        pfvm__sprint(&b, s, 0);
    return (int)b.len;
}

/* A lower bound of s over every binding, from the facts (dims >= 0,
 * dim_params >= 1): 1 and *lb set when one is found. It walks the DAG as a
 * tree, so past a budget of nodes (or a depth) it gives up: a bound not
 * found only leaves a fact unproven. */
static int pfvm__sym_lb(const pfvm_sym *s, int64_t *lb, int depth, long *budget)
{
    int64_t x, y;
    if (!s || depth > 64 || --*budget < 0)
        return 0;
    switch (s->kind) {
    case PFVM_SYM_CONST:
        *lb = s->value;
        return 1;
    case PFVM_SYM_VAR:
        *lb = s->pos ? 1 : 0;
        return 1;
    case PFVM_SYM_ADD:
        if (!pfvm__sym_lb(s->a, &x, depth + 1, budget) || !pfvm__sym_lb(s->b, &y, depth + 1, budget) || !pfvm__add_i64(x, y, lb))
            return 0;
        return 1;
    case PFVM_SYM_MUL:
        if (s->a->kind == PFVM_SYM_CONST || s->b->kind == PFVM_SYM_CONST) {
            const pfvm_sym *k = s->a->kind == PFVM_SYM_CONST ? s->a : s->b, *o = k == s->a ? s->b : s->a;
            return k->value >= 0 && pfvm__sym_lb(o, &y, depth + 1, budget) && pfvm__mul_i64(k->value, y, lb);
        }
        return pfvm__sym_lb(s->a, &x, depth + 1, budget) && pfvm__sym_lb(s->b, &y, depth + 1, budget) && x >= 0 && y >= 0 &&
               pfvm__mul_i64(x, y, lb);
    case PFVM_SYM_DIV:
        if (s->b->kind != PFVM_SYM_CONST || s->b->value <= 0 || !pfvm__sym_lb(s->a, &x, depth + 1, budget))
            return 0;
        *lb = pfvm__floordiv(x, s->b->value); /* -x + d - 1 overflows near INT64_MIN */
        return 1;
    case PFVM_SYM_MOD:
        if (!s->b->pos)
            return 0;
        *lb = 0;
        return 1;
    case PFVM_SYM_MIN:
        if (!pfvm__sym_lb(s->a, &x, depth + 1, budget) || !pfvm__sym_lb(s->b, &y, depth + 1, budget))
            return 0;
        *lb = x < y ? x : y;
        return 1;
    case PFVM_SYM_MAX: {
        int ha = pfvm__sym_lb(s->a, &x, depth + 1, budget), hb = pfvm__sym_lb(s->b, &y, depth + 1, budget);
        if (!ha && !hb)
            return 0;
        *lb = !ha ? y : !hb ? x : x > y ? x : y;
        return 1;
    }
    }
    return 0;
}

int pfvm_sym_proven_nonneg(const pfvm_sym *s)
{
    int64_t lb;
    long budget = PFVM__SYM_TREE_BUDGET;
    return s && (s->nonneg || (pfvm__sym_lb(s, &lb, 0, &budget) && lb >= 0));
}

int pfvm_sym_proven_ge(pfvm_symtab *t, const pfvm_sym *s, int64_t v)
{
    int64_t lb;
    long budget = PFVM__SYM_TREE_BUDGET;
    if (!s)
        return 0;
    if (pfvm__sym_lb(s, &lb, 0, &budget) && lb >= v)
        return 1;
    return pfvm_sym_proven_nonneg(pfvm_sym_addi(t, s, -v));
}

int pfvm_sym_proven_ne(pfvm_symtab *t, const pfvm_sym *a, const pfvm_sym *b)
{
    const pfvm_sym *d;
    if (!a || !b || a == b)
        return 0;
    d = pfvm_sym_sub(t, a, b);
    return d && (pfvm_sym_proven_ge(t, d, 1) || pfvm_sym_proven_ge(t, pfvm_sym_muli(t, d, -1), 1));
}

const pfvm_sym *pfvm_sym_eq(pfvm_symtab *t, const pfvm_sym *a, const pfvm_sym *b)
{
    const pfvm_sym *d, *one = pfvm_sym_const(t, 1);
    if (!a || !b || !one)
        return NULL;
    if (a == b)
        return one;
    if (pfvm_sym_proven_ne(t, a, b))
        return pfvm_sym_const(t, 0);
    d = pfvm_sym_sub(t, a, b);
    return pfvm_sym_sub(t, one, pfvm_sym_min(t, one, pfvm_sym_max(t, d, pfvm_sym_muli(t, d, -1))));
}

const pfvm_sym *pfvm_sym_not(pfvm_symtab *t, const pfvm_sym *s)
{
    return pfvm_sym_sub(t, pfvm_sym_const(t, 1), s);
}

/* d when s is min(1,max(d,-d)) (then s is `d != 0`), else NULL. */
static const pfvm_sym *pfvm__ne_form(pfvm_symtab *t, const pfvm_sym *s)
{
    const pfvm_sym *m;
    if (!s || s->kind != PFVM_SYM_MIN)
        return NULL;
    m = s->a->kind == PFVM_SYM_CONST ? s->b : s->a;
    if ((m == s->a ? s->b : s->a)->kind != PFVM_SYM_CONST || (m == s->a ? s->b : s->a)->value != 1 ||
        m->kind != PFVM_SYM_MAX || pfvm_sym_muli(t, m->a, -1) != m->b)
        return NULL;
    return m->a;
}

/* Adds to *l (coefficient > 0) or *r (< 0, negated) each term of d. */
static void pfvm__split_sides(pfvm_symtab *t, const pfvm_sym *d, const pfvm_sym **l, const pfvm_sym **r)
{
    int64_t k;
    const pfvm_sym *m;
    if (!d)
        return;
    if (d->kind == PFVM_SYM_ADD) {
        pfvm__split_sides(t, d->a, l, r);
        pfvm__split_sides(t, d->b, l, r);
        return;
    }
    if (d->kind == PFVM_SYM_CONST) {
        if (d->value >= 0)
            *l = pfvm_sym_add(t, *l, d);
        else
            *r = pfvm_sym_add(t, *r, pfvm_sym_muli(t, d, -1));
        return;
    }
    m = pfvm__split_coef(d, &k);
    if (k >= 0)
        *l = pfvm_sym_add(t, *l, d);
    else
        *r = pfvm_sym_add(t, *r, pfvm_sym_muli(t, m, -k));
}

int pfvm_sym_print_cond(pfvm_symtab *t, const pfvm_sym *s, char *buf, size_t n)
{
    const pfvm_sym *d = pfvm__ne_form(t, s), *l, *r;
    const char *op = "!=";
    pfvm__sbuf b;
    b.buf = buf;
    b.n = buf ? n : 0;
    b.len = 0;
    if (b.n)
        buf[0] = 0;
    if (!d && (d = pfvm__ne_form(t, pfvm_sym_not(t, s))) != NULL)
        op = "==";
    l = r = pfvm_sym_const(t, 0);
    if (d)
        pfvm__split_sides(t, d, &l, &r);
    if (!d || !l || !r) {
        l = s;
        r = pfvm_sym_const(t, 0);
        op = "!=";
    }
    if (!l || !r)
        return 0;
    pfvm__sprint(&b, l, 0);
    pfvm__sput(&b, op);
    pfvm__sprint(&b, r, 0);
    return (int)b.len;
}

int pfvm_sym_proven_eq(const pfvm_sym *a, const pfvm_sym *b)
{
    return a && a == b;
}

int pfvm_symtab_count(const pfvm_symtab *t)
{
    return (int)stbds_arrlen(t->vars);
}

const pfvm_sym *pfvm_symtab_get(const pfvm_symtab *t, int id)
{
    return id >= 0 && id < (int)stbds_arrlen(t->vars) ? t->vars[id] : NULL;
}

const pfvm_sym *pfvm_symtab_find(const pfvm_symtab *t, const char *name)
{
    void *found;
    return pfvm__map_get(&t->names, name, &found) ? (const pfvm_sym *)found : NULL;
}
