/* Fuzz target: the symbolic-expression engine (src/sym). The input is a
 * small stack program: each byte picks an operation (push a constant or a
 * symbol, apply a constructor to the top of the stack, dup, swap). Every
 * expression the constructors return is checked against plain integer
 * arithmetic under three bindings of the symbols (values that respect each
 * symbol's lower bound: dims >= 0, dim_params >= 1):
 *   - eval(op(x, y)) == op(eval x, eval y) when all three evaluate and the
 *     plain result neither overflows nor divides by zero;
 *   - what is proven holds: nonneg, >= 1, eq, ne, is_const;
 *   - subst under the binding gives the evaluated constant;
 *   - hash-consing: the same call twice, and a+b / b+a, a*b / b*a, give
 *     the same node;
 *   - printing fits its buffer (also a tiny one). */
#include "fuzz_common.h"

#define NB 3 /* bindings */

typedef struct entry {
    const pfvm_sym *s;
} entry;

static int64_t next_i64(const uint8_t **p, const uint8_t *end, int nbytes)
{
    uint64_t v = 0;
    int k;
    for (k = 0; k < nbytes && *p < end; k++, (*p)++)
        v |= (uint64_t)**p << (8 * k);
    if (nbytes == 1)
        return (int64_t)(int8_t)v;
    return (int64_t)v;
}

/* Plain floor division, modulo (sign of b) and ceil division; 0 when b is
 * 0 or the result overflows. */
static int ref_div(int64_t a, int64_t b, int64_t *out)
{
    int64_t q;
    if (b == 0 || (a == INT64_MIN && b == -1))
        return 0;
    q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0)))
        q--;
    *out = q;
    return 1;
}

static int ref_mod(int64_t a, int64_t b, int64_t *out)
{
    int64_t r;
    if (b == 0)
        return 0;
    if (b == -1) {
        *out = 0;
        return 1;
    }
    r = a % b;
    if (r != 0 && ((r < 0) != (b < 0)))
        r += b;
    *out = r;
    return 1;
}

static int ref_ceildiv(int64_t a, int64_t b, int64_t *out)
{
    int64_t q;
    if (b == 0 || (a == INT64_MIN && b == -1))
        return 0;
    q = a / b;
    if ((a % b != 0) && ((a < 0) == (b < 0)))
        q++;
    *out = q;
    return 1;
}

enum { OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_CEILDIV, OP_MOD, OP_MIN, OP_MAX, OP_EQ, OP_COUNT };

static const pfvm_sym *apply(pfvm_symtab *t, int op, const pfvm_sym *x, const pfvm_sym *y)
{
    switch (op) {
    case OP_ADD: return pfvm_sym_add(t, x, y);
    case OP_SUB: return pfvm_sym_sub(t, x, y);
    case OP_MUL: return pfvm_sym_mul(t, x, y);
    case OP_DIV: return pfvm_sym_div(t, x, y);
    case OP_CEILDIV: return pfvm_sym_ceildiv(t, x, y);
    case OP_MOD: return pfvm_sym_mod(t, x, y);
    case OP_MIN: return pfvm_sym_min(t, x, y);
    case OP_MAX: return pfvm_sym_max(t, x, y);
    default: return pfvm_sym_eq(t, x, y);
    }
}

static int ref(int op, int64_t a, int64_t b, int64_t *out)
{
    switch (op) {
    case OP_ADD: return !__builtin_add_overflow(a, b, out);
    case OP_SUB: return !__builtin_sub_overflow(a, b, out);
    case OP_MUL: return !__builtin_mul_overflow(a, b, out);
    case OP_DIV: return ref_div(a, b, out);
    case OP_CEILDIV: return ref_ceildiv(a, b, out);
    case OP_MOD: return ref_mod(a, b, out);
    case OP_MIN: *out = a < b ? a : b; return 1;
    case OP_MAX: *out = a > b ? a : b; return 1;
    default: *out = a == b; return 1;
    }
}

static void check_one(pfvm_symtab *t, const pfvm_sym *s, pfvm_binding *bs)
{
    char buf[4096], cond[4096], tiny[8];
    int64_t c, v;
    int k, len;
    len = pfvm_sym_print(s, buf, sizeof buf);
    FUZZ_CHECK(len >= 0, "print returned %d", len);
    if ((size_t)len < sizeof buf)
        FUZZ_CHECK(strlen(buf) == (size_t)len, "print's length %d, its text %zu", len, strlen(buf));
    pfvm_sym_print(s, tiny, sizeof tiny);
    FUZZ_CHECK(memchr(tiny, 0, sizeof tiny) != NULL, "print into 8 bytes is not terminated");
    pfvm_sym_print_cond(t, s, cond, sizeof cond);
    for (k = 0; k < NB; k++) {
        const pfvm_sym *sub;
        if (!pfvm_sym_eval(s, &bs[k], &v))
            continue;
        if (pfvm_sym_is_const(s, &c))
            FUZZ_CHECK(c == v, "%s: constant %lld evaluates to %lld", buf, (long long)c, (long long)v);
        if (pfvm_sym_proven_nonneg(s))
            FUZZ_CHECK(v >= 0, "%s: proven >= 0, evaluates to %lld", buf, (long long)v);
        if (pfvm_sym_proven_ge(t, s, 1))
            FUZZ_CHECK(v >= 1, "%s: proven >= 1, evaluates to %lld", buf, (long long)v);
        sub = pfvm_sym_subst(t, s, &bs[k]);
        if (sub && pfvm_sym_is_const(sub, &c))
            FUZZ_CHECK(c == v, "%s: subst gives %lld, eval %lld", buf, (long long)c, (long long)v);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const names[] = {"a", "b", "c", "d", "e", "f"};
    static const int64_t picks[] = {0, 1, 2, 3, 5, 7, 64, 1000, (int64_t)1 << 31, (int64_t)1 << 40};
    const uint8_t *p = data, *end = data + size;
    pfvm_symtab *t = pfvm_symtab_new();
    pfvm_binding bs[NB];
    const pfvm_sym *stack[64];
    int sp = 0, steps = 0, k, i;
    uint64_t h = fuzz_hash(data, size);
    if (!t)
        return 0;
    memset(bs, 0, sizeof bs);
    while (p < end && steps++ < 200) {
        int op = *p++ % 16;
        const pfvm_sym *x, *y, *r;
        switch (op) {
        case 0: case 1: /* constant: small, or 8 bytes */
            r = pfvm_sym_const(t, next_i64(&p, end, op == 0 ? 1 : 8));
            break;
        case 2: { /* symbol: a, b dims (>= 0); c, d dim_params (>= 1); e unknown; f fresh */
            int w = p < end ? *p++ % 6 : 0;
            if (w < 2)
                r = pfvm_sym_var(t, names[w], 0);
            else if (w < 4)
                r = pfvm_sym_var(t, names[w], 1);
            else if (w == 4)
                r = pfvm_sym_unknown(t, "e");
            else
                r = pfvm_sym_fresh(t, "f");
            break;
        }
        case 3: case 4: case 5: case 6: case 7: case 8: case 9: case 10: case 11: {
            int bop = op - 3, kk;
            if (sp < 2)
                continue;
            y = stack[--sp];
            x = stack[--sp];
            r = apply(t, bop, x, y);
            if (!r)
                continue;
            /* hash-consing and commutativity */
            FUZZ_CHECK(apply(t, bop, x, y) == r, "op %d twice gives two nodes", bop);
            if (bop == OP_ADD || bop == OP_MUL)
                FUZZ_CHECK(apply(t, bop, y, x) == r, "op %d is not commutative in canonical form", bop);
            if (pfvm_sym_proven_eq(x, y))
                for (kk = 0; kk < NB; kk++) {
                    int64_t ex, ey;
                    if (pfvm_sym_eval(x, &bs[kk], &ex) && pfvm_sym_eval(y, &bs[kk], &ey))
                        FUZZ_CHECK(ex == ey, "proven equal, %lld != %lld", (long long)ex, (long long)ey);
                }
            if (pfvm_sym_proven_ne(t, x, y))
                for (kk = 0; kk < NB; kk++) {
                    int64_t ex, ey;
                    if (pfvm_sym_eval(x, &bs[kk], &ex) && pfvm_sym_eval(y, &bs[kk], &ey))
                        FUZZ_CHECK(ex != ey, "proven different, both %lld", (long long)ex);
                }
            /* the value against plain arithmetic, in every binding */
            for (kk = 0; kk < NB; kk++) {
                int64_t ex, ey, er, want;
                if (pfvm_sym_eval(x, &bs[kk], &ex) && pfvm_sym_eval(y, &bs[kk], &ey) &&
                    pfvm_sym_eval(r, &bs[kk], &er) && ref(bop, ex, ey, &want) && er != want) {
                    /* printed only for the report: printing costs */
                    char bx[512], by[512], br[512];
                    pfvm_sym_print(x, bx, sizeof bx);
                    pfvm_sym_print(y, by, sizeof by);
                    pfvm_sym_print(r, br, sizeof br);
                    FUZZ_CHECK(er == want, "op %d: x=%s (%lld), y=%s (%lld): r=%s evaluates to %lld, want %lld",
                               bop, bx, (long long)ex, by, (long long)ey, br, (long long)er, (long long)want);
                }
            }
            break;
        }
        case 12: case 13: /* a op small constant */
            if (sp < 1)
                continue;
            x = stack[--sp];
            r = op == 12 ? pfvm_sym_addi(t, x, next_i64(&p, end, 1)) : pfvm_sym_muli(t, x, next_i64(&p, end, 1));
            if (!r)
                continue;
            break;
        case 14: /* not */
            if (sp < 1)
                continue;
            x = stack[--sp];
            if (!(r = pfvm_sym_not(t, x)))
                continue;
            for (k = 0; k < NB; k++) {
                int64_t ex, er;
                if (pfvm_sym_eval(x, &bs[k], &ex) && pfvm_sym_eval(r, &bs[k], &er) && ex > INT64_MIN + 1)
                    FUZZ_CHECK(er == 1 - ex, "not(%lld) evaluates to %lld", (long long)ex, (long long)er);
            }
            break;
        default: /* dup / swap */
            if (sp < 1 || sp >= 63)
                continue;
            if (op == 15 && sp >= 2) {
                x = stack[sp - 1];
                stack[sp - 1] = stack[sp - 2];
                stack[sp - 2] = x;
                continue;
            }
            r = stack[sp - 1];
            break;
        }
        if (!r)
            continue;
        /* bind every symbol made so far (new ones get values as they appear) */
        for (i = 0; i < pfvm_symtab_count(t); i++) {
            const pfvm_sym *v = pfvm_symtab_get(t, i);
            for (k = 0; k < NB; k++) {
                int64_t val;
                if (!v || (bs[k].n > v->value && bs[k].set[v->value]))
                    continue;
                val = picks[(h >> (8 * k + i % 8)) % (sizeof picks / sizeof picks[0])];
                if (v->pos && val < 1)
                    val = 1;
                pfvm_binding_set(&bs[k], v, val, NULL);
            }
        }
        check_one(t, r, bs);
        if (sp < 64)
            stack[sp++] = r;
    }
    for (k = 0; k < NB; k++)
        pfvm_binding_free(&bs[k]);
    pfvm_symtab_free(t);
    return 0;
}
