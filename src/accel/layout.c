/* accel layout: the notation, index math both ways, conversions as moves
 * (see layout.h). */
#include "layout.h"

#include <stdlib.h>

static pfvm_code accel_layout_bad(pfvm_status *st, const char *text, const char *what, const char *at, size_t n)
{
    return pfvm__fail(st, PFVM_ERR_PARSE, "layout '%s': %s '%.*s'", text, what, (int)n, at);
}

int64_t pfvm_accel_layout_spread(const pfvm_accel_layout *l, int level)
{
    int64_t p = 1;
    int a, f;
    for (a = 0; a < l->rank; a++)
        for (f = 0; f < l->nfactors[a]; f++)
            if (l->factors[a][f].level == level)
                p *= l->factors[a][f].size;
    return p;
}

int64_t pfvm_accel_layout_local_elems(const pfvm_accel_layout *l)
{
    return pfvm_accel_layout_spread(l, PFVM_ACCEL_LOCAL);
}

pfvm_code pfvm_accel_layout_check(const pfvm_accel_layout *l, const pfvm_accel_target *t, pfvm_status *st)
{
    int a, f, k;
    if (l->rank < 0 || l->rank > PFVM_MAX_RANK)
        return pfvm__fail(st, PFVM_ERR_INVALID, "layout: rank %d out of range", l->rank);
    if (l->replicate >> t->nlevels)
        return pfvm__fail(st, PFVM_ERR_INVALID, "layout: replicates over a level the target %s lacks", t->name);
    for (a = 0; a < l->rank; a++) {
        double prod = 1;
        if (l->nfactors[a] < 1 || l->nfactors[a] > PFVM_ACCEL_MAX_FACTORS)
            return pfvm__fail(st, PFVM_ERR_INVALID, "layout: axis %d has %d factors (1 to %d)", a, l->nfactors[a],
                              PFVM_ACCEL_MAX_FACTORS);
        for (f = 0; f < l->nfactors[a]; f++) {
            const pfvm_accel_factor *x = &l->factors[a][f];
            if (x->size < 1 || (x->level != PFVM_ACCEL_LOCAL && (x->level < 0 || x->level >= t->nlevels)))
                return pfvm__fail(st, PFVM_ERR_INVALID, "layout: axis %d factor %d is not LEVEL:N with N >= 1", a, f);
            prod *= (double)x->size;
        }
        if (prod < (double)l->dims[a] || prod > 4e18)
            return pfvm__fail(st, PFVM_ERR_INVALID, "layout: the factors of axis %d multiply to %.0f, %s its size %lld",
                              a, prod, prod > 4e18 ? "too far above" : "below", (long long)l->dims[a]);
    }
    for (k = 0; k < t->nlevels; k++) {
        int64_t p = pfvm_accel_layout_spread(l, k);
        if (p > t->levels[k].fanout)
            return pfvm__fail(st, PFVM_ERR_INVALID, "layout: level %s gets %lld instances, its fan-out is %lld",
                              t->levels[k].name, (long long)p, (long long)t->levels[k].fanout);
    }
    return PFVM_OK;
}

static int accel_is_space(char c)
{
    return c == ' ' || c == '\t';
}

/* Reads a level name (or "local") at *s; returns its index, PFVM_ACCEL_LOCAL,
 * or -2 when there is no such level. */
static int accel_read_level(const char **s, const pfvm_accel_target *t)
{
    char name[PFVM_ACCEL_NAME];
    size_t n = 0;
    const char *p = *s;
    while ((p[n] >= 'a' && p[n] <= 'z') || (p[n] >= 'A' && p[n] <= 'Z') || p[n] == '_' ||
           (n && p[n] >= '0' && p[n] <= '9'))
        n++;
    if (n == 0 || n >= sizeof name)
        return -2;
    memcpy(name, p, n);
    name[n] = 0;
    *s = p + n;
    if (!strcmp(name, "local"))
        return PFVM_ACCEL_LOCAL;
    return pfvm_accel_target_level(t, name) >= 0 ? pfvm_accel_target_level(t, name) : -2;
}

pfvm_code pfvm_accel_layout_parse(const char *text, const pfvm_accel_target *t, int rank, const int64_t *dims,
                                  pfvm_accel_layout *l, pfvm_status *st)
{
    const char *s = text;
    int a = 0, i;
    memset(l, 0, sizeof *l);
    if (rank < 0 || rank > PFVM_MAX_RANK)
        return pfvm__fail(st, PFVM_ERR_INVALID, "layout '%s': rank %d out of range", text, rank);
    l->rank = rank;
    for (i = 0; i < rank; i++)
        l->dims[i] = dims[i];
    while (accel_is_space(*s))
        s++;
    if (rank == 0) {
        if (*s != '-')
            return accel_layout_bad(st, text, "a scalar's layout is '-', not", s, strlen(s));
        s++;
    }
    while (a < rank) {
        for (;;) {
            const char *start = s;
            char *end;
            long long n;
            int lv = accel_read_level(&s, t);
            if (lv == -2)
                return accel_layout_bad(st, text, "expected local:N or LEVEL:N (a level of the target) at", start,
                                        strcspn(start, ",*| "));
            if (*s != ':' || s[1] < '0' || s[1] > '9')
                return accel_layout_bad(st, text, "expected ':N' after the level at", start, strcspn(start, ",*| "));
            n = strtoll(s + 1, &end, 10);
            if (n < 1 || n > ((long long)1 << 40))
                return accel_layout_bad(st, text, "factor out of range (1 to 2^40):", start, (size_t)(end - start));
            if (l->nfactors[a] == PFVM_ACCEL_MAX_FACTORS)
                return accel_layout_bad(st, text, "more than 6 factors on the axis at", start, (size_t)(end - start));
            l->factors[a][l->nfactors[a]].level = lv;
            l->factors[a][l->nfactors[a]++].size = n;
            s = end;
            if (*s != '*')
                break;
            s++;
        }
        a++;
        while (accel_is_space(*s))
            s++;
        if (a < rank) {
            if (*s != ',')
                return accel_layout_bad(st, text, a == rank ? "" : "fewer axes than the tensor's rank; expected ',' at",
                                        s, strlen(s) ? strlen(s) : 0);
            s++;
            while (accel_is_space(*s))
                s++;
        }
    }
    while (accel_is_space(*s))
        s++;
    if (*s == '|') {
        s++;
        while (accel_is_space(*s))
            s++;
        if (strncmp(s, "rep", 3) || !accel_is_space(s[3]))
            return accel_layout_bad(st, text, "expected 'rep LEVEL...' after '|' at", s, strlen(s));
        s += 3;
        while (accel_is_space(*s))
            s++;
        do {
            const char *start = s;
            int lv = accel_read_level(&s, t);
            if (lv < 0)
                return accel_layout_bad(st, text, "not a level of the target to replicate over:", start,
                                        strcspn(start, " "));
            if (l->replicate & (1u << lv))
                return accel_layout_bad(st, text, "level replicated twice:", start, (size_t)(s - start));
            l->replicate |= 1u << lv;
            while (accel_is_space(*s))
                s++;
        } while (*s);
    }
    if (*s)
        return accel_layout_bad(st, text, *s == ',' ? "more axes than the tensor's rank at" : "unexpected text at", s,
                                strlen(s));
    if (pfvm_accel_layout_check(l, t, st)) {
        pfvm__prefix(st, "layout '%s'", text);
        return st ? st->code : PFVM_ERR_INVALID;
    }
    pfvm__ok(st);
    return PFVM_OK;
}

static void accel_lput(char *buf, size_t size, size_t *len, const char *fmt, ...)
{
    va_list ap;
    int n;
    va_start(ap, fmt);
    n = pfvm__vsnprintf(*len < size ? buf + *len : NULL, *len < size ? size - *len : 0, fmt, ap);
    va_end(ap);
    if (n > 0)
        *len += (size_t)n;
}

size_t pfvm_accel_layout_format(const pfvm_accel_layout *l, const pfvm_accel_target *t, char *buf, size_t size)
{
    size_t len = 0;
    int a, f, k, first = 1;
    if (size)
        buf[0] = 0;
    if (l->rank == 0)
        accel_lput(buf, size, &len, "-");
    for (a = 0; a < l->rank; a++) {
        if (a)
            accel_lput(buf, size, &len, ", ");
        for (f = 0; f < l->nfactors[a]; f++) {
            const pfvm_accel_factor *x = &l->factors[a][f];
            accel_lput(buf, size, &len, "%s%s:%lld", f ? "*" : "",
                       x->level == PFVM_ACCEL_LOCAL ? "local" : t->levels[x->level].name, (long long)x->size);
        }
    }
    for (k = 0; k < t->nlevels; k++)
        if (l->replicate & (1u << k)) {
            accel_lput(buf, size, &len, "%s%s", first ? " | rep " : " ", t->levels[k].name);
            first = 0;
        }
    return len;
}

void pfvm_accel_layout_locate(const pfvm_accel_layout *l, const pfvm_accel_target *t, const int64_t *index,
                              int64_t *coords, int64_t *offset)
{
    int64_t digits[PFVM_MAX_RANK][PFVM_ACCEL_MAX_FACTORS];
    int a, f, k;
    for (a = 0; a < l->rank; a++) {
        int64_t i = index[a];
        for (f = l->nfactors[a] - 1; f >= 0; f--) {
            digits[a][f] = i % l->factors[a][f].size;
            i /= l->factors[a][f].size;
        }
    }
    for (k = 0; k < t->nlevels; k++)
        coords[k] = 0;
    *offset = 0;
    for (a = 0; a < l->rank; a++)
        for (f = 0; f < l->nfactors[a]; f++) {
            const pfvm_accel_factor *x = &l->factors[a][f];
            int64_t *c = x->level == PFVM_ACCEL_LOCAL ? offset : &coords[x->level];
            *c = *c * x->size + digits[a][f];
        }
}

int pfvm_accel_layout_element(const pfvm_accel_layout *l, const pfvm_accel_target *t, const int64_t *coords,
                              int64_t offset, int64_t *index)
{
    int64_t rest[PFVM_ACCEL_MAX_LEVELS];
    int64_t digits[PFVM_MAX_RANK][PFVM_ACCEL_MAX_FACTORS];
    int a, f, k;
    if (offset < 0 || offset >= pfvm_accel_layout_local_elems(l))
        return 0;
    for (k = 0; k < t->nlevels; k++) {
        int64_t p = pfvm_accel_layout_spread(l, k);
        rest[k] = coords[k];
        if (rest[k] >= p) {
            if (!(l->replicate & (1u << k)))
                return 0;
            rest[k] %= p;
        }
    }
    /* peel digits innermost first: the last factor in traversal order is the
     * least significant digit of its level's coordinate */
    for (a = l->rank - 1; a >= 0; a--)
        for (f = l->nfactors[a] - 1; f >= 0; f--) {
            const pfvm_accel_factor *x = &l->factors[a][f];
            int64_t *c = x->level == PFVM_ACCEL_LOCAL ? &offset : &rest[x->level];
            digits[a][f] = *c % x->size;
            *c /= x->size;
        }
    for (a = 0; a < l->rank; a++) {
        int64_t i = 0;
        for (f = 0; f < l->nfactors[a]; f++)
            i = i * l->factors[a][f].size + digits[a][f];
        if (i >= l->dims[a])
            return 0;
        index[a] = i;
    }
    return 1;
}

int64_t pfvm_accel_pe_number(const pfvm_accel_target *t, const int64_t *coords)
{
    int64_t n = 0;
    int k;
    for (k = 0; k < t->nlevels; k++)
        n = n * t->levels[k].fanout + coords[k];
    return n;
}

void pfvm_accel_pe_coords(const pfvm_accel_target *t, int64_t pe, int64_t *coords)
{
    int k;
    for (k = t->nlevels - 1; k >= 0; k--) {
        coords[k] = pe % t->levels[k].fanout;
        pe /= t->levels[k].fanout;
    }
}

/* The copy in src nearest to the PE at dst (coords): on every replicated
 * level take the instance in dst's own block of spread instances when it
 * exists. */
static void accel_nearest(const pfvm_accel_layout *src, const pfvm_accel_target *t, const int64_t *dst,
                          int64_t *coords)
{
    int k;
    for (k = 0; k < t->nlevels; k++) {
        int64_t p = pfvm_accel_layout_spread(src, k);
        if (src->replicate & (1u << k)) {
            int64_t c = dst[k] - dst[k] % p + coords[k];
            if (c < t->levels[k].fanout)
                coords[k] = c;
        }
    }
}

static int accel_lca(const pfvm_accel_target *t, const int64_t *a, const int64_t *b)
{
    int k;
    for (k = 1; k < t->nlevels; k++)
        if (a[k] != b[k])
            return k - 1;
    return t->nlevels - 1;
}

pfvm_code pfvm_accel_moves(const pfvm_accel_target *t, const pfvm_accel_layout *src, const pfvm_accel_layout *dst,
                           pfvm_accel_move **moves, size_t *count, pfvm_status *st)
{
    int64_t npes = pfvm_accel_target_pes(t), block = pfvm_accel_layout_local_elems(dst), pe, off;
    int64_t dc[PFVM_ACCEL_MAX_LEVELS], sc[PFVM_ACCEL_MAX_LEVELS], index[PFVM_MAX_RANK];
    int a;
    *moves = NULL;
    *count = 0;
    if (src->rank != dst->rank)
        return pfvm__fail(st, PFVM_ERR_INVALID, "layout conversion: rank %d to rank %d", src->rank, dst->rank);
    for (a = 0; a < src->rank; a++)
        if (src->dims[a] != dst->dims[a])
            return pfvm__fail(st, PFVM_ERR_INVALID, "layout conversion: axis %d has size %lld and %lld", a,
                              (long long)src->dims[a], (long long)dst->dims[a]);
    for (pe = 0; pe < npes; pe++) {
        pfvm_accel_pe_coords(t, pe, dc);
        for (off = 0; off < block; off++) {
            int64_t soff, spe;
            pfvm_accel_move m, *last;
            if (!pfvm_accel_layout_element(dst, t, dc, off, index))
                continue;
            pfvm_accel_layout_locate(src, t, index, sc, &soff);
            accel_nearest(src, t, dc, sc);
            spe = pfvm_accel_pe_number(t, sc);
            last = stbds_arrlen(*moves) ? &(*moves)[stbds_arrlen(*moves) - 1] : NULL;
            if (last && last->src_pe == spe && last->dst_pe == pe && last->src_off + last->count == soff &&
                last->dst_off + last->count == off) {
                last->count++;
                continue;
            }
            m.src_pe = spe;
            m.src_off = soff;
            m.dst_pe = pe;
            m.dst_off = off;
            m.count = 1;
            m.lca = accel_lca(t, sc, dc);
            if (!pfvm__arrpush(*moves, m)) {
                pfvm_accel_moves_free(*moves);
                *moves = NULL;
                return pfvm__fail(st, PFVM_ERR_NOMEM, "layout conversion: out of memory for the move list");
            }
        }
    }
    *count = (size_t)stbds_arrlen(*moves);
    return PFVM_OK;
}

void pfvm_accel_moves_free(pfvm_accel_move *moves)
{
    stbds_arrfree(moves);
}

void pfvm_accel_moves_traffic(const pfvm_accel_target *t, const pfvm_accel_move *moves, size_t count,
                              size_t elem_bytes, double *up, double *down)
{
    size_t i, n = moves ? count : 0;
    int k;
    for (k = 0; k < t->nlevels; k++)
        up[k] = down[k] = 0;
    for (i = 0; i < n; i++) {
        double bytes = (double)moves[i].count * (double)elem_bytes;
        for (k = moves[i].lca + 1; k < t->nlevels; k++) {
            up[k] += bytes;
            down[k] += bytes;
        }
    }
}
