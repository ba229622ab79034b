#include "base.h"

#include <limits.h>
#include <stdio.h>
#include <math.h>

/* ---- allocator ---------------------------------------------------------- */

static pfvm_allocator pfvm__alloc_hook;
static PFVM_THREAD_LOCAL const pfvm_allocator *pfvm__alloc_scope;

void pfvm_set_allocator(const pfvm_allocator *a)
{
    if (a)
        pfvm__alloc_hook = *a;
    else
        memset(&pfvm__alloc_hook, 0, sizeof pfvm__alloc_hook);
}

PFVM_INTERNAL void pfvm__scope_enter(pfvm__scope *s, const pfvm_allocator *a)
{
    s->prev = pfvm__alloc_scope;
    s->a = *a;
    pfvm__alloc_scope = &s->a;
}

PFVM_INTERNAL void pfvm__scope_leave(pfvm__scope *s)
{
    pfvm__alloc_scope = s->prev;
}

/* PFVM_REALLOC/PFVM_FREE as a pfvm_allocator, so that a block or object
 * made while they were the default keeps them. */
static void *pfvm__std_realloc(void *user, void *p, size_t size)
{
    (void)user;
    if (size == 0) {
        PFVM_FREE(p);
        return NULL;
    }
    return PFVM_REALLOC(p, size);
}

PFVM_INTERNAL pfvm_allocator pfvm__alloc_current(void)
{
    pfvm_allocator a;
    if (pfvm__alloc_scope && pfvm__alloc_scope->realloc)
        return *pfvm__alloc_scope;
    if (pfvm__alloc_hook.realloc)
        return pfvm__alloc_hook;
    a.realloc = pfvm__std_realloc;
    a.user = NULL;
    return a;
}

/* Every block starts with the allocator that made it (rounded up to 16
 * bytes, so the caller's block keeps malloc's alignment): frees and resizes
 * go back to it whatever the current allocator is. */
typedef union pfvm__blockhdr {
    pfvm_allocator a;
    unsigned char pad[(sizeof(pfvm_allocator) + 15) & ~(size_t)15];
} pfvm__blockhdr;

PFVM_INTERNAL void *pfvm__realloc(void *p, size_t size)
{
    pfvm__blockhdr *h;
    pfvm_allocator a;
    size_t total;
    if (!p) {
        if (size == 0 || !pfvm__add_size(size, sizeof *h, &total))
            return NULL;
        a = pfvm__alloc_current();
        h = (pfvm__blockhdr *)a.realloc(a.user, NULL, total);
        if (!h)
            return NULL;
        h->a = a;
        return h + 1;
    }
    h = (pfvm__blockhdr *)p - 1;
    a = h->a;
    if (size == 0) {
        a.realloc(a.user, h, 0);
        return NULL;
    }
    if (!pfvm__add_size(size, sizeof *h, &total))
        return NULL;
    h = (pfvm__blockhdr *)a.realloc(a.user, h, total);
    return h ? h + 1 : NULL;
}

PFVM_INTERNAL void pfvm__free(void *p)
{
    if (p)
        pfvm__realloc(p, 0);
}

PFVM_INTERNAL void *pfvm__malloc(size_t size)
{
    return pfvm__realloc(NULL, size ? size : 1);
}

PFVM_INTERNAL void *pfvm__calloc(size_t n, size_t size)
{
    size_t total;
    void *p;
    if (!pfvm__mul_size(n, size, &total))
        return NULL;
    p = pfvm__malloc(total);
    if (p)
        memset(p, 0, total ? total : 1);
    return p;
}

/* Tensor data and the executor's arena start on a cache line (and an
 * AVX-512 vector): malloc's 16-byte alignment makes every 64-byte vector
 * access of a float loop span two lines, which on Zen 5 made the fused
 * x * sigmoid(x) loop over 64M floats about 25% slower. The byte before
 * the block holds its distance from what the allocator returned (1..64). */
PFVM_INTERNAL void *pfvm__data_alloc(size_t size, int zero)
{
    size_t total;
    unsigned char *raw, *p;
    if (!pfvm__add_size(size ? size : 1, PFVM_DATA_ALIGN, &total))
        return NULL;
    raw = (unsigned char *)pfvm__malloc(total);
    if (!raw)
        return NULL;
    p = raw + PFVM_DATA_ALIGN - ((uintptr_t)raw & (PFVM_DATA_ALIGN - 1));
    p[-1] = (unsigned char)(p - raw);
    if (zero)
        memset(p, 0, size);
    return p;
}

PFVM_INTERNAL void pfvm__data_free(void *p)
{
    if (p)
        pfvm__free((unsigned char *)p - ((unsigned char *)p)[-1]);
}

PFVM_INTERNAL char *pfvm__strndup(const char *s, size_t n)
{
    char *r = (char *)pfvm__malloc(n + 1);
    if (!r)
        return NULL;
    if (n)
        memcpy(r, s, n);
    r[n] = 0;
    return r;
}

PFVM_INTERNAL char *pfvm__strdup(const char *s)
{
    return s ? pfvm__strndup(s, strlen(s)) : NULL;
}

/* Bump allocator: each block carries its size in front so realloc can copy. */
void pfvm_bump_init(pfvm_bump *b, void *buf, size_t size)
{
    b->buf = (unsigned char *)buf;
    b->size = size;
    b->used = 0;
    b->last = (size_t)-1;
}

static void *pfvm__bump_realloc(void *user, void *ptr, size_t size)
{
    pfvm_bump *b = (pfvm_bump *)user;
    size_t old = 0, need, start;
    unsigned char *p;
    if (ptr)
        memcpy(&old, (unsigned char *)ptr - 16, sizeof old);
    if (size == 0) {
        if (ptr && (size_t)((unsigned char *)ptr - b->buf) == b->last + 16) {
            b->used = b->last;
            b->last = (size_t)-1;
        }
        return NULL;
    }
    start = (b->used + 15) & ~(size_t)15;
    if (!pfvm__add_size(start, 16, &need) || !pfvm__add_size(need, size, &need) || need > b->size)
        return NULL;
    p = b->buf + start + 16;
    memcpy(p - 16, &size, sizeof size);
    if (ptr)
        memmove(p, ptr, old < size ? old : size);
    b->last = start;
    b->used = need;
    return p;
}

pfvm_allocator pfvm_bump_allocator(pfvm_bump *b)
{
    pfvm_allocator a;
    a.realloc = pfvm__bump_realloc;
    a.user = b;
    return a;
}

/* ---- status ------------------------------------------------------------- */

const char *pfvm_code_name(pfvm_code c)
{
    switch (c) {
    case PFVM_OK: return "ok";
    case PFVM_ERR_INVALID: return "invalid";
    case PFVM_ERR_PARSE: return "parse error";
    case PFVM_ERR_UNSUPPORTED: return "unsupported";
    case PFVM_ERR_SHAPE: return "shape error";
    case PFVM_ERR_NOMEM: return "out of memory";
    case PFVM_ERR_IO: return "i/o error";
    case PFVM_ERR_RANGE: return "out of range";
    case PFVM_ERR_RUNTIME: return "runtime error";
    }
    return "error";
}

/* ---- message formatting ---- */

/* Appends s (len bytes) to buf[*at..n), truncating; *at counts every byte
 * asked for, as snprintf's result does. */
static void pfvm__fmt_put(char *buf, size_t n, size_t *at, const char *s, size_t len)
{
    size_t i;
    for (i = 0; i < len; i++, (*at)++)
        if (*at + 1 < n)
            buf[*at] = s[i];
}

/* The decimal number at *p (a width or a precision), *p moved past it. */
static int pfvm__fmt_number(const char **p)
{
    int v = 0;
    for (; **p >= '0' && **p <= '9'; (*p)++)
        v = v * 10 + (**p - '0');
    return v;
}

#ifdef PFVM_TERSE_MESSAGES
/* PFVM_TERSE_MESSAGES: what is left to format (names, the node prefix,
 * the code and line, pfvm_status_set's messages) takes a small formatter,
 * and no printf of the C library is linked: integers (d i u x X o, any
 * length), %s (with its precision), %c and %%; flags, width and an
 * integer's precision are read and ignored, any other conversion is
 * written as it is (its argument passed over, so that the next ones stay
 * in place). */
PFVM_INTERNAL int pfvm__vsnprintf(char *buf, size_t n, const char *fmt, va_list ap)
{
    size_t at = 0;
    const char *p = fmt;
    while (*p) {
        const char *start = p;
        int prec = -1, len = 0; /* length: 1 h/hh, 3 l, 4 ll/j, 5 z, 6 t, 7 L */
        char conv;
        if (*p != '%') {
            pfvm__fmt_put(buf, n, &at, p++, 1);
            continue;
        }
        for (p++; *p && strchr("-+ #0123456789", *p); p++)
            ;
        if (*p == '*') {
            (void)va_arg(ap, int);
            p++;
        }
        if (*p == '.') {
            p++;
            if (*p == '*') {
                prec = va_arg(ap, int);
                p++;
            } else
                prec = pfvm__fmt_number(&p);
        }
        for (; *p && strchr("hljztL", *p); p++)
            len = *p == 'l' ? (len == 3 ? 4 : 3) : *p == 'j' ? 4 : *p == 'z' ? 5 : *p == 't' ? 6 : *p == 'L' ? 7 : 1;
        conv = *p ? *p++ : 0;
        if (conv && strchr("diuxXo", conv)) {
            char digits[24];
            unsigned base = conv == 'x' || conv == 'X' ? 16u : conv == 'o' ? 8u : 10u;
            size_t nd = 0;
            uint64_t mag;
            if (conv == 'd' || conv == 'i') {
                int64_t v = len == 4 ? (int64_t)va_arg(ap, long long) : len == 5 || len == 6 ? (int64_t)va_arg(ap, ptrdiff_t)
                            : len == 3 ? (int64_t)va_arg(ap, long) : (int64_t)va_arg(ap, int);
                if (v < 0)
                    pfvm__fmt_put(buf, n, &at, "-", 1);
                mag = v < 0 ? 0u - (uint64_t)v : (uint64_t)v;
            } else {
                mag = len == 4 ? (uint64_t)va_arg(ap, unsigned long long) : len == 5 ? (uint64_t)va_arg(ap, size_t)
                      : len == 6 ? (uint64_t)va_arg(ap, ptrdiff_t) : len == 3 ? (uint64_t)va_arg(ap, unsigned long)
                                                                 : (uint64_t)va_arg(ap, unsigned);
            }
            do {
                digits[sizeof digits - 1 - nd++] = (conv == 'X' ? "0123456789ABCDEF" : "0123456789abcdef")[mag % base];
                mag /= base;
            } while (mag);
            pfvm__fmt_put(buf, n, &at, digits + sizeof digits - nd, nd);
        } else if (conv == 's') {
            const char *str = va_arg(ap, const char *);
            size_t sl = 0;
            if (!str)
                str = "(null)";
            while ((prec < 0 || sl < (size_t)prec) && str[sl]) /* precision first: %.*s may not end in NUL */
                sl++;
            pfvm__fmt_put(buf, n, &at, str, sl);
        } else if (conv == 'c') {
            char c = (char)va_arg(ap, int);
            pfvm__fmt_put(buf, n, &at, &c, 1);
        } else {
            if (conv == 'p')
                (void)va_arg(ap, void *);
            else if (conv && strchr("fFeEgGaA", conv) && len == 7)
                (void)va_arg(ap, long double);
            else if (conv && strchr("fFeEgGaA", conv))
                (void)va_arg(ap, double);
            pfvm__fmt_put(buf, n, &at, conv == '%' ? "%" : start, conv == '%' ? 1 : (size_t)(p - start));
        }
    }
    if (n)
        buf[at < n ? at : n - 1] = 0;
    return at > (size_t)INT_MAX ? INT_MAX : (int)at;
}
#else
/* One 64-bit integer conversion (d i u x X o) with its flags, width and
 * precision, formatted here: newlib-nano prints %lld and %zu literally. */
static void pfvm__fmt_int(char *buf, size_t n, size_t *at, const char *flags, int width, int prec, char conv,
                          uint64_t mag, int neg)
{
    char digits[72], pre[4];
    const char *set = conv == 'X' ? "0123456789ABCDEF" : "0123456789abcdef";
    unsigned base = conv == 'x' || conv == 'X' ? 16u : conv == 'o' ? 8u : 10u;
    size_t nd = 0, np = 0, len, pad, zeros = 0;
    int left = strchr(flags, '-') != NULL, zero = strchr(flags, '0') != NULL && prec < 0 && !left;
    while (mag) {
        digits[sizeof digits - 1 - nd++] = set[mag % base];
        mag /= base;
    }
    if (prec < 0 && nd == 0)
        digits[sizeof digits - 1 - nd++] = '0';
    if (neg)
        pre[np++] = '-';
    else if (conv == 'd' || conv == 'i')
        if (strchr(flags, '+') || strchr(flags, ' '))
            pre[np++] = strchr(flags, '+') ? '+' : ' ';
    if (prec > 0 && (size_t)prec > nd)
        zeros = (size_t)prec - nd;
    len = np + zeros + nd;
    pad = width > 0 && (size_t)width > len ? (size_t)width - len : 0;
    if (zero) {
        zeros += pad;
        pad = 0;
    }
    for (; !left && pad; pad--)
        pfvm__fmt_put(buf, n, at, " ", 1);
    pfvm__fmt_put(buf, n, at, pre, np);
    for (; zeros; zeros--)
        pfvm__fmt_put(buf, n, at, "0", 1);
    pfvm__fmt_put(buf, n, at, digits + sizeof digits - nd, nd);
    for (; pad; pad--)
        pfvm__fmt_put(buf, n, at, " ", 1);
}

/* vsnprintf whose 64-bit and size conversions (ll, z, j, t) are formatted
 * by pfvm itself, so messages read the same with newlib-nano as with glibc;
 * every other conversion goes to the C library one at a time. */
PFVM_INTERNAL int pfvm__vsnprintf(char *buf, size_t n, const char *fmt, va_list ap)
{
    size_t at = 0;
    const char *p = fmt;
    while (*p) {
        char spec[32], flags[8], piece[400];
        const char *start = p;
        int nf = 0, width = -1, prec = -1, len = 0, r = 0;
        char conv;
        if (*p != '%') {
            const char *q = strchr(p, '%');
            size_t lit = q ? (size_t)(q - p) : strlen(p);
            pfvm__fmt_put(buf, n, &at, p, lit);
            p += lit;
            continue;
        }
        p++;
        while (*p && strchr("-+ #0", *p)) {
            if (nf < (int)sizeof flags - 1)
                flags[nf++] = *p;
            p++;
        }
        flags[nf] = 0;
        if (*p == '*') {
            width = va_arg(ap, int);
            p++;
        } else if (*p >= '0' && *p <= '9')
            width = pfvm__fmt_number(&p);
        if (*p == '.') {
            p++;
            if (*p == '*') {
                prec = va_arg(ap, int);
                p++;
            } else
                prec = pfvm__fmt_number(&p);
        }
        /* length: 1 h, 2 hh, 3 l, 4 ll/j, 5 z, 6 t, 7 L */
        if (p[0] == 'h') {
            len = p[1] == 'h' ? 2 : 1;
            p += len;
        } else if (p[0] == 'l') {
            len = p[1] == 'l' ? 4 : 3;
            p += len - 2;
        } else if (*p == 'j' || *p == 'z' || *p == 't' || *p == 'L') {
            len = *p == 'j' ? 4 : *p == 'z' ? 5 : *p == 't' ? 6 : 7;
            p++;
        }
        conv = *p ? *p++ : 0;
        if (strchr("diuxXo", conv) && conv && len >= 4 && len <= 6) {
            uint64_t mag;
            int neg = 0;
            if (conv == 'd' || conv == 'i') {
                int64_t v = len == 4 ? (int64_t)va_arg(ap, long long) : len == 5 ? (int64_t)va_arg(ap, ptrdiff_t)
                            : len == 6 ? (int64_t)va_arg(ap, ptrdiff_t) : len == 3 ? (int64_t)va_arg(ap, long)
                                                                         : (int64_t)va_arg(ap, int);
                neg = v < 0;
                mag = neg ? 0u - (uint64_t)v : (uint64_t)v;
            } else {
                mag = len == 4 ? (uint64_t)va_arg(ap, unsigned long long)
                      : len == 5 ? (uint64_t)va_arg(ap, size_t) : len == 6 ? (uint64_t)va_arg(ap, ptrdiff_t)
                      : len == 3 ? (uint64_t)va_arg(ap, unsigned long) : (uint64_t)va_arg(ap, unsigned);
            }
            pfvm__fmt_int(buf, n, &at, flags, width, prec, conv, mag, neg);
            continue;
        }
        if (conv == 's') { /* any length, without the piece buffer */
            const char *str = va_arg(ap, const char *);
            size_t sl = 0, pad;
            if (!str)
                str = "(null)";
            while ((prec < 0 || sl < (size_t)prec) && str[sl]) /* precision first: %.*s may not end in NUL */
                sl++;
            pad = width > 0 && (size_t)width > sl ? (size_t)width - sl : 0;
            for (; !strchr(flags, '-') && pad; pad--)
                pfvm__fmt_put(buf, n, &at, " ", 1);
            pfvm__fmt_put(buf, n, &at, str, sl);
            for (; pad; pad--)
                pfvm__fmt_put(buf, n, &at, " ", 1);
            continue;
        }
        /* one conversion through the C library, width and precision written out */
        if (conv == 0 || (size_t)(p - start) + 24 > sizeof spec) {
            pfvm__fmt_put(buf, n, &at, start, (size_t)(p - start));
            continue;
        }
        {
            char *w = spec + 1;
            spec[0] = '%';
            memcpy(w, flags, (size_t)nf);
            w += nf;
            if (width >= 0)
                w += sprintf(w, "%d", width);
            if (prec >= 0)
                w += sprintf(w, ".%d", prec);
            if (len == 1 || len == 2) {
                *w++ = 'h';
                if (len == 2)
                    *w++ = 'h';
            } else if (len == 3) {
                *w++ = 'l';
            } else if (len == 7) {
                *w++ = 'L';
            }
            *w++ = conv;
            *w = 0;
        }
        switch (conv) {
        case 'd': case 'i': case 'c':
            r = len == 3 ? snprintf(piece, sizeof piece, spec, va_arg(ap, long)) : snprintf(piece, sizeof piece, spec, va_arg(ap, int));
            break;
        case 'u': case 'x': case 'X': case 'o':
            r = len == 3 ? snprintf(piece, sizeof piece, spec, va_arg(ap, unsigned long))
                         : snprintf(piece, sizeof piece, spec, va_arg(ap, unsigned));
            break;
        case 'f': case 'F': case 'e': case 'E': case 'g': case 'G': case 'a': case 'A':
            r = len == 7 ? snprintf(piece, sizeof piece, spec, va_arg(ap, long double))
                         : snprintf(piece, sizeof piece, spec, va_arg(ap, double));
            break;
        case 'p': r = snprintf(piece, sizeof piece, spec, va_arg(ap, void *)); break;
        case '%': r = snprintf(piece, sizeof piece, "%%"); break;
        default: /* unknown: printed as written, its argument (if any) left alone */
            pfvm__fmt_put(buf, n, &at, start, (size_t)(p - start));
            continue;
        }
        if (r > 0)
            pfvm__fmt_put(buf, n, &at, piece, (size_t)r < sizeof piece ? (size_t)r : sizeof piece - 1);
    }
    if (n)
        buf[at < n ? at : n - 1] = 0;
    return at > (size_t)INT_MAX ? INT_MAX : (int)at;
}
#endif /* PFVM_TERSE_MESSAGES */

PFVM_INTERNAL int pfvm__snprintf(char *buf, size_t n, const char *fmt, ...)
{
    va_list ap;
    int r;
    va_start(ap, fmt);
    r = pfvm__vsnprintf(buf, n, fmt, ap);
    va_end(ap);
    return r;
}

/* The one place a status is filled (pfvm__fail inside, pfvm_status_set for
 * programs). */
static void pfvm__status_vset(pfvm_status *st, pfvm_code code, const char *fmt, va_list ap)
{
    st->code = code;
    pfvm__vsnprintf(st->msg, sizeof st->msg, fmt, ap);
}

/* (the name in parentheses: not PFVM_TERSE_MESSAGES's macro) */
PFVM_INTERNAL pfvm_code(pfvm__fail)(pfvm_status *st, pfvm_code code, const char *fmt, ...)
{
    if (st) {
        va_list ap;
        va_start(ap, fmt);
        pfvm__status_vset(st, code, fmt, ap);
        va_end(ap);
    }
    return code;
}

#ifdef PFVM_TERSE_MESSAGES
PFVM_INTERNAL pfvm_code pfvm__fail_at(pfvm_status *st, pfvm_code code, const char *file, int line)
{
    return (pfvm__fail)(st, code, "%s (%s:%d)", pfvm_code_name(code), file, line);
}
#endif

PFVM_INTERNAL void pfvm__ok(pfvm_status *st)
{
    if (st) {
        st->code = PFVM_OK;
        st->msg[0] = 0;
    }
}

PFVM_INTERNAL void pfvm__prefix(pfvm_status *st, const char *fmt, ...)
{
    char pre[PFVM_STATUS_MSG], old[PFVM_STATUS_MSG];
    va_list ap;
    if (!st)
        return;
    va_start(ap, fmt);
    pfvm__vsnprintf(pre, sizeof pre, fmt, ap);
    va_end(ap);
    memcpy(old, st->msg, sizeof old);
    {
        size_t lp = strlen(pre);
        if (lp + 2 >= sizeof st->msg)
            lp = sizeof st->msg - 3;
        memcpy(st->msg, pre, lp);
        memcpy(st->msg + lp, ": ", 2);
        lp += 2;
        memcpy(st->msg + lp, old, sizeof st->msg - lp - 1);
        st->msg[sizeof st->msg - 1] = 0;
    }
}

/* ---- checked arithmetic -------------------------------------------------- */

PFVM_INTERNAL /* Without a division: a 64-bit one is a library call on 32-bit cores,
 * and this runs once per kernel call. */
uint64_t pfvm__sat_mul(uint64_t a, uint64_t b)
{
    uint64_t ah = a >> 32, al = a & 0xffffffffu, bh = b >> 32, bl = b & 0xffffffffu, mid, lo;
    if (ah && bh)
        return UINT64_MAX;
    mid = ah * bl + al * bh; /* one term is 0: each fits */
    if (mid >> 32)
        return UINT64_MAX;
    lo = al * bl;
    mid <<= 32;
    return lo > UINT64_MAX - mid ? UINT64_MAX : lo + mid;
}

int pfvm__mul_size(size_t a, size_t b, size_t *out)
{
    if (a && b > (size_t)-1 / a)
        return 0;
    *out = a * b;
    return 1;
}

PFVM_INTERNAL int pfvm__add_size(size_t a, size_t b, size_t *out)
{
    if (b > (size_t)-1 - a)
        return 0;
    *out = a + b;
    return 1;
}

#if defined(__OPTIMIZE_SIZE__) && (defined(__GNUC__) || defined(__clang__)) && UINTPTR_MAX == 0xffffffffu
/* -Os on 32-bit cores: gcc's checked 64-bit product (the builtin below)
 * is a long sequence there, inlined into every caller; this one takes the
 * product of the magnitudes in 32-bit halves (pfvm__sat_mul: no division)
 * and stays out of line, one copy. */
__attribute__((noinline)) PFVM_INTERNAL int pfvm__mul_i64(int64_t a, int64_t b, int64_t *out)
{
    int neg;
    uint64_t p;
    if (!(((uint64_t)a | (uint64_t)b) >> 31)) { /* both in [0, 2^31), the usual dims and counts: one 32 x 32 -> 64 multiply */
        *out = (int64_t)((uint64_t)(uint32_t)a * (uint32_t)b);
        return 1;
    }
    neg = (a < 0) != (b < 0);
    p = pfvm__sat_mul(a < 0 ? 0 - (uint64_t)a : (uint64_t)a, b < 0 ? 0 - (uint64_t)b : (uint64_t)b);
    if (p > (uint64_t)INT64_MAX + (uint64_t)neg) /* -2^63 is the one product past INT64_MAX that fits */
        return 0;
    *out = !neg || !p ? (int64_t)p : -(int64_t)(p - 1) - 1;
    return 1;
}
#else
PFVM_INTERNAL int pfvm__mul_i64(int64_t a, int64_t b, int64_t *out)
{
#if defined(__GNUC__) || defined(__clang__)
    return !__builtin_mul_overflow(a, b, out);
#else
    if (a > 0 ? (b > 0 ? a > INT64_MAX / b : b < INT64_MIN / a)
              : (b > 0 ? a < INT64_MIN / b : (a != 0 && b < INT64_MAX / a)))
        return 0;
    *out = a * b;
    return 1;
#endif
}
#endif

PFVM_INTERNAL int pfvm__add_i64(int64_t a, int64_t b, int64_t *out)
{
#if defined(__GNUC__) || defined(__clang__)
    return !__builtin_add_overflow(a, b, out);
#else
    if ((b > 0 && a > INT64_MAX - b) || (b < 0 && a < INT64_MIN - b))
        return 0;
    *out = a + b;
    return 1;
#endif
}

/* ---- checked stb_ds growth ------------------------------------------------ */

PFVM_INTERNAL void *pfvm__arr_grow(void *a, size_t elemsize, size_t mincap)
{
    size_t cap = stbds_arrcap(a), bytes;
    stbds_array_header *h;
    if (mincap <= cap)
        return a;
    if (cap <= (size_t)-1 / 2 && mincap < 2 * cap)
        mincap = 2 * cap;
    if (mincap < 4)
        mincap = 4;
    if (!pfvm__mul_size(elemsize, mincap, &bytes) || !pfvm__add_size(bytes, sizeof *h, &bytes))
        return a;
    h = (stbds_array_header *)pfvm__realloc(a ? (void *)stbds_header(a) : NULL, bytes);
    if (!h)
        return a;
    if (!a) {
        h->length = 0;
        h->hash_table = NULL;
        h->temp = 0;
    }
    h->capacity = mincap;
    return h + 1;
}

/* ---- hash map ------------------------------------------------------------- */

static const char pfvm__map_tomb = 0;

PFVM_INTERNAL void pfvm__map_init(pfvm__map *m, int strkeys)
{
    memset(m, 0, sizeof *m);
    m->strkeys = strkeys;
}

static size_t pfvm__map_hash(const pfvm__map *m, const void *key)
{
    uint64_t h;
    if (m->strkeys) {
        const unsigned char *p = (const unsigned char *)key;
        h = 14695981039346656037ull;
        for (; *p; p++)
            h = (h ^ *p) * 1099511628211ull;
    } else {
        h = (uint64_t)(uintptr_t)key * 0x9E3779B97F4A7C15ull;
        h ^= h >> 29;
    }
    return (size_t)h;
}

static int pfvm__map_eq(const pfvm__map *m, const void *a, const void *b)
{
    return a == b || (m->strkeys && !strcmp((const char *)a, (const char *)b));
}

/* The slot holding key, or -1. */
static ptrdiff_t pfvm__map_find(const pfvm__map *m, const void *key)
{
    size_t i, k;
    if (!m->cap)
        return -1;
    i = pfvm__map_hash(m, key) & (m->cap - 1);
    for (k = 0; k < m->cap; k++, i = (i + 1) & (m->cap - 1)) {
        const void *s = m->slots[i].key;
        if (!s)
            return -1;
        if (s != &pfvm__map_tomb && pfvm__map_eq(m, s, key))
            return (ptrdiff_t)i;
    }
    return -1;
}

PFVM_INTERNAL int pfvm__map_get(const pfvm__map *m, const void *key, void **val)
{
    ptrdiff_t at = pfvm__map_find(m, key);
    if (at < 0)
        return 0;
    if (val)
        *val = m->slots[at].val;
    return 1;
}

/* Puts into a map known to have a free slot and not to hold key. */
static void pfvm__map_insert(pfvm__map *m, const void *key, void *val)
{
    size_t i = pfvm__map_hash(m, key) & (m->cap - 1);
    while (m->slots[i].key && m->slots[i].key != &pfvm__map_tomb)
        i = (i + 1) & (m->cap - 1);
    if (!m->slots[i].key)
        m->used++;
    m->slots[i].key = key;
    m->slots[i].val = val;
    m->n++;
}

PFVM_INTERNAL int pfvm__map_put(pfvm__map *m, const void *key, void *val)
{
    ptrdiff_t at = pfvm__map_find(m, key);
    if (at >= 0) {
        m->slots[at].key = key;
        m->slots[at].val = val;
        return 1;
    }
    /* at most 3/4 full, tombstones included */
    if ((m->used + 1) > m->cap / 4 * 3) {
        size_t cap = 16, i;
        pfvm__map_slot *old = m->slots;
        size_t old_cap = m->cap;
        while (cap / 4 * 3 < (m->n + 1) * 2) {
            if (cap > (size_t)-1 / 2 / sizeof *old)
                return 0;
            cap *= 2;
        }
        m->slots = (pfvm__map_slot *)pfvm__calloc(cap, sizeof *m->slots);
        if (!m->slots) {
            m->slots = old;
            return 0;
        }
        m->cap = cap;
        m->used = m->n = 0;
        for (i = 0; i < old_cap; i++)
            if (old[i].key && old[i].key != &pfvm__map_tomb)
                pfvm__map_insert(m, old[i].key, old[i].val);
        pfvm__free(old);
    }
    pfvm__map_insert(m, key, val);
    return 1;
}

PFVM_INTERNAL void pfvm__map_del(pfvm__map *m, const void *key)
{
    ptrdiff_t at = pfvm__map_find(m, key);
    if (at < 0)
        return;
    m->slots[at].key = &pfvm__map_tomb;
    m->slots[at].val = NULL;
    m->n--;
}

PFVM_INTERNAL void pfvm__map_free(pfvm__map *m)
{
    pfvm__free(m->slots);
    m->slots = NULL;
    m->cap = m->used = m->n = 0;
}

/* ---- arena --------------------------------------------------------------- */

struct pfvm__chunk {
    pfvm__chunk *next;
    size_t size, used;
    /* data follows, 16-byte aligned */
};

#define PFVM__CHUNK_HDR ((sizeof(pfvm__chunk) + 15) & ~(size_t)15)
#define PFVM__CHUNK_MIN PFVM_ARENA_CHUNK

PFVM_INTERNAL void *pfvm__arena_alloc(pfvm_arena *a, size_t size)
{
    pfvm__chunk *c = a->head;
    size_t need = (size + 15) & ~(size_t)15, least = a->chunk ? a->chunk : PFVM__CHUNK_MIN;
    unsigned char *p;
    if (need < size)
        return NULL;
    if (!c || c->size - c->used < need) {
        size_t csize = need > least ? need : least, total;
        if (!pfvm__add_size(csize, PFVM__CHUNK_HDR, &total))
            return NULL;
        c = (pfvm__chunk *)pfvm__malloc(total);
        if (!c)
            return NULL;
        c->size = csize;
        c->used = 0;
        /* big blocks go behind the head so the head's free space survives */
        if (a->head && need > least) {
            c->next = a->head->next;
            a->head->next = c;
        } else {
            c->next = a->head;
            a->head = c;
        }
        a->total += total;
    }
    p = (unsigned char *)c + PFVM__CHUNK_HDR + c->used;
    c->used += need;
    memset(p, 0, need ? need : 0);
    return p;
}

PFVM_INTERNAL char *pfvm__arena_strndup(pfvm_arena *a, const char *s, size_t n)
{
    char *r = (char *)pfvm__arena_alloc(a, n + 1);
    if (!r)
        return NULL;
    if (n)
        memcpy(r, s, n);
    r[n] = 0;
    return r;
}

PFVM_INTERNAL char *pfvm__arena_strdup(pfvm_arena *a, const char *s)
{
    return pfvm__arena_strndup(a, s ? s : "", s ? strlen(s) : 0);
}

PFVM_INTERNAL void pfvm__arena_free(pfvm_arena *a)
{
    pfvm__chunk *c = a->head;
    while (c) {
        pfvm__chunk *n = c->next;
        pfvm__free(c);
        c = n;
    }
    a->head = NULL;
    a->total = 0;
}

/* ---- dtypes --------------------------------------------------------------- */

static const struct {
    const char *name;
    unsigned char size;
} pfvm__dtypes[PFVM_DTYPE_COUNT] = {
    {"undefined", 0}, {"float", 4},     {"uint8", 1},      {"int8", 1},
    {"uint16", 2},    {"int16", 2},     {"int32", 4},      {"int64", 8},
    {"string", sizeof(char *)},         {"bool", 1},       {"float16", 2},
    {"double", 8},    {"uint32", 4},    {"uint64", 8},     {"complex64", 8},
    {"complex128", 16}, {"bfloat16", 2}, {"float8e4m3fn", 1}, {"float8e4m3fnuz", 1},
    {"float8e5m2", 1}, {"float8e5m2fnuz", 1}, {"uint4", 1},  {"int4", 1},
};

size_t pfvm_dtype_size(pfvm_dtype t)
{
    return (unsigned)t < PFVM_DTYPE_COUNT ? pfvm__dtypes[t].size : 0;
}

const char *pfvm_dtype_name(pfvm_dtype t)
{
    return (unsigned)t < PFVM_DTYPE_COUNT ? pfvm__dtypes[t].name : "unknown";
}

pfvm_dtype pfvm_dtype_from_name(const char *name)
{
    int i;
    for (i = 1; i < PFVM_DTYPE_COUNT; i++)
        if (!strcmp(name, pfvm__dtypes[i].name))
            return (pfvm_dtype)i;
    return PFVM_UNDEFINED;
}

int pfvm_dtype_is_float(pfvm_dtype t)
{
    return t == PFVM_FLOAT || t == PFVM_DOUBLE || t == PFVM_FLOAT16 || t == PFVM_BFLOAT16;
}

int pfvm_dtype_is_int(pfvm_dtype t)
{
    switch (t) {
    case PFVM_UINT8: case PFVM_INT8: case PFVM_UINT16: case PFVM_INT16: case PFVM_INT32:
    case PFVM_INT64: case PFVM_UINT32: case PFVM_UINT64:
        return 1;
    default:
        return 0;
    }
}

int pfvm_dtype_is_signed(pfvm_dtype t)
{
    return t == PFVM_INT8 || t == PFVM_INT16 || t == PFVM_INT32 || t == PFVM_INT64;
}

float pfvm_half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff, bits;
    float f;
    if (exp == 0) {
        if (man == 0) {
            bits = sign;
        } else { /* subnormal: normalise */
            exp = 127 - 15 + 1;
            while (!(man & 0x400)) {
                man <<= 1;
                exp--;
            }
            man &= 0x3ff;
            bits = sign | (exp << 23) | (man << 13);
        }
    } else if (exp == 31) {
        bits = sign | 0x7f800000u | (man << 13);
    } else {
        bits = sign | ((exp + 127 - 15) << 23) | (man << 13);
    }
    memcpy(&f, &bits, 4);
    return f;
}

uint16_t pfvm_float_to_half(float f)
{
    uint32_t x, sign, man;
    int32_t exp;
    memcpy(&x, &f, 4);
    sign = (x >> 16) & 0x8000;
    exp = (int32_t)((x >> 23) & 0xff);
    man = x & 0x7fffff;
    if (exp == 255) /* inf or nan */
        return (uint16_t)(sign | 0x7c00 | (man ? 0x200 | (man >> 13) : 0));
    exp = exp - 127 + 15;
    if (exp >= 31)
        return (uint16_t)(sign | 0x7c00);
    if (exp <= 0) {
        uint32_t shift, m, half, r;
        if (exp < -10)
            return (uint16_t)sign;
        m = man | 0x800000;
        shift = (uint32_t)(14 - exp);
        r = m >> shift;
        half = 1u << (shift - 1);
        if ((m & ((half << 1) - 1)) > half || ((m & ((half << 1) - 1)) == half && (r & 1)))
            r++;
        return (uint16_t)(sign | r);
    }
    {
        uint32_t r = ((uint32_t)exp << 10) | (man >> 13), rem = man & 0x1fff;
        if (rem > 0x1000 || (rem == 0x1000 && (r & 1)))
            r++; /* may carry into the exponent, which is right */
        return (uint16_t)(sign | r);
    }
}

float pfvm_bf16_to_float(uint16_t h)
{
    uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

uint16_t pfvm_float_to_bf16(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    if ((x & 0x7fffffff) > 0x7f800000)
        return (uint16_t)((x >> 16) | 0x40);
    x += 0x7fff + ((x >> 16) & 1);
    return (uint16_t)(x >> 16);
}

/* stb_ds's implementation lives here, once. In the amalgamation it is a
 * private (static, renamed) copy; the per-module build of src/ skips it when
 * PFVM_NO_STB_DS_IMPLEMENTATION is defined. */
#if defined(PFVM__AMALGAMATION) || !defined(PFVM_NO_STB_DS_IMPLEMENTATION)
#define STB_DS_IMPLEMENTATION
#include <stb/stb_ds.h>
#endif

/* ---- status for programs ------------------------------------------------- */

pfvm_code pfvm_status_set(pfvm_status *st, pfvm_code code, const char *fmt, ...)
{
    if (st) {
        va_list ap;
        va_start(ap, fmt);
        pfvm__status_vset(st, code, fmt, ap);
        va_end(ap);
    }
    return code;
}

void pfvm_status_prefix(pfvm_status *st, const char *fmt, ...)
{
    char pre[PFVM_STATUS_MSG];
    va_list ap;
    if (!st)
        return;
    va_start(ap, fmt);
    pfvm__vsnprintf(pre, sizeof pre, fmt, ap);
    va_end(ap);
    pfvm__prefix(st, "%s", pre);
}
