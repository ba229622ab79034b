/* accel simulator (see sim.h; the program format is in README.md). */
#include "sim.h"

#include <math.h>
#include <stdlib.h>

#define ACCEL_SIM_TOKENS 48
#define ACCEL_SIM_MAX_OUTPUTS 64

struct pfvm_accel_sim {
    pfvm_accel_target t;
    int64_t npes, words; /* PEs, float32 words per PE */
    float *mem;          /* npes * words */
    unsigned char *written;
    double *link[PFVM_ACCEL_MAX_LEVELS][2]; /* bytes per instance this phase: [0] down, [1] up */
    double *pe_cycles;                      /* this phase */
    double *carry;                          /* npes: scratch of accel_sim_load_cost */
    double cycles, transfer_cycles;
    double *phases; /* stb_ds: cycles of each phase of the last run */
    pfvm_tensor *outputs[ACCEL_SIM_MAX_OUTPUTS];
    int noutputs;
    unsigned char *active; /* PEs that run compute instructions (`on`) */
    /* the root level's memory (DRAM), grown as the program touches it, up
     * to the level's mem */
    float *dram;
    unsigned char *dram_written;
    int64_t dram_words, dram_limit, dram_peak;
};

typedef struct accel_sim_ctx {
    pfvm_accel_sim *s;
    int line;
    pfvm_status *st;
    char *tok[ACCEL_SIM_TOKENS];
    int n;
} accel_sim_ctx;

static pfvm_code accel_sim_bad(accel_sim_ctx *c, pfvm_code code, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    pfvm__vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return pfvm__fail(c->st, code, "program line %d (%s): %s", c->line, c->n ? c->tok[0] : "", msg);
}

pfvm_accel_sim *pfvm_accel_sim_new(const pfvm_accel_target *t, pfvm_status *st)
{
    pfvm_accel_sim *s = (pfvm_accel_sim *)pfvm__calloc(1, sizeof *s);
    size_t cells;
    int k;
    if (!s) {
        pfvm__fail(st, PFVM_ERR_NOMEM, "accel simulator: out of memory");
        return NULL;
    }
    s->t = *t;
    s->npes = pfvm_accel_target_pes(t);
    s->words = t->levels[t->nlevels - 1].mem_bytes / 4;
    if (!pfvm__mul_size((size_t)s->npes, (size_t)s->words, &cells) || cells > ((size_t)1 << 32))
        goto nomem;
    s->mem = (float *)pfvm__malloc(cells * sizeof *s->mem + 1);
    s->written = (unsigned char *)pfvm__calloc(cells + 1, 1);
    s->pe_cycles = (double *)pfvm__calloc((size_t)s->npes, sizeof *s->pe_cycles);
    s->carry = (double *)pfvm__calloc((size_t)s->npes, sizeof *s->carry);
    s->active = (unsigned char *)pfvm__calloc((size_t)s->npes, 1);
    s->dram_limit = t->levels[0].mem_bytes / 4;
    if (!s->mem || !s->written || !s->pe_cycles || !s->carry || !s->active)
        goto nomem;
    for (k = 0; k < t->nlevels; k++) {
        size_t n = (size_t)pfvm_accel_target_instances(t, k);
        if (!(s->link[k][0] = (double *)pfvm__calloc(n, sizeof(double))) ||
            !(s->link[k][1] = (double *)pfvm__calloc(n, sizeof(double))))
            goto nomem;
    }
    return s;
nomem:
    pfvm__fail(st, PFVM_ERR_NOMEM, "accel simulator: out of memory for %lld PEs of %lld bytes", (long long)s->npes,
               (long long)t->levels[t->nlevels - 1].mem_bytes);
    pfvm_accel_sim_free(s);
    return NULL;
}

static void accel_sim_clear_outputs(pfvm_accel_sim *s)
{
    int i;
    for (i = 0; i < s->noutputs; i++)
        pfvm_tensor_free(s->outputs[i]);
    memset(s->outputs, 0, sizeof s->outputs);
    s->noutputs = 0;
}

void pfvm_accel_sim_free(pfvm_accel_sim *s)
{
    int k;
    if (!s)
        return;
    accel_sim_clear_outputs(s);
    for (k = 0; k < PFVM_ACCEL_MAX_LEVELS; k++) {
        pfvm__free(s->link[k][0]);
        pfvm__free(s->link[k][1]);
    }
    pfvm__free(s->mem);
    pfvm__free(s->written);
    pfvm__free(s->pe_cycles);
    pfvm__free(s->carry);
    pfvm__free(s->active);
    pfvm__free(s->dram);
    pfvm__free(s->dram_written);
    stbds_arrfree(s->phases);
    pfvm__free(s);
}

const pfvm_tensor *pfvm_accel_sim_output(const pfvm_accel_sim *s, int k)
{
    return k >= 0 && k < s->noutputs ? s->outputs[k] : NULL;
}

int pfvm_accel_sim_noutputs(const pfvm_accel_sim *s)
{
    return s->noutputs;
}

double pfvm_accel_sim_cycles(const pfvm_accel_sim *s)
{
    return s->cycles;
}

double pfvm_accel_sim_transfer_cycles(const pfvm_accel_sim *s)
{
    return s->transfer_cycles;
}

int64_t pfvm_accel_sim_dram_bytes(const pfvm_accel_sim *s)
{
    return s->dram_peak * 4;
}

int pfvm_accel_sim_phases(const pfvm_accel_sim *s)
{
    return (int)stbds_arrlen(s->phases);
}

double pfvm_accel_sim_phase_cycles(const pfvm_accel_sim *s, int i)
{
    return i >= 0 && i < (int)stbds_arrlen(s->phases) ? s->phases[i] : 0;
}

/* Ends a phase: it lasts as long as its busiest link or PE. */
static pfvm_code accel_sim_phase(pfvm_accel_sim *s, pfvm_status *st)
{
    double link = 0, pe = 0;
    int k, d;
    int64_t i;
    for (k = 1; k < s->t.nlevels; k++) {
        int64_t n = pfvm_accel_target_instances(&s->t, k);
        for (d = 0; d < 2; d++) {
            double bw = d ? s->t.levels[k].up : s->t.levels[k].down;
            for (i = 0; i < n; i++) {
                if (s->link[k][d][i] / bw > link)
                    link = s->link[k][d][i] / bw;
                s->link[k][d][i] = 0;
            }
        }
    }
    for (i = 0; i < s->npes; i++) {
        if (s->pe_cycles[i] > pe)
            pe = s->pe_cycles[i];
        s->pe_cycles[i] = 0;
    }
    s->cycles += ceil(link > pe ? link : pe);
    s->transfer_cycles += ceil(link);
    if (!pfvm__arrpush(s->phases, ceil(link > pe ? link : pe)))
        return pfvm__fail(st, PFVM_ERR_NOMEM, "accel simulator: out of memory");
    return PFVM_OK;
}

/* Instance of level k that holds PE pe. */
static int64_t accel_sim_instance(const pfvm_accel_sim *s, int64_t pe, int k)
{
    int j;
    for (j = s->t.nlevels - 1; j > k; j--)
        pe /= s->t.levels[j].fanout;
    return pe;
}

/* Bytes from PE a to PE b (a or b < 0: the root's memory) over the links
 * below their common ancestor. */
static void accel_sim_route(pfvm_accel_sim *s, int64_t a, int64_t b, double bytes)
{
    int k, lca = 0;
    if (a >= 0 && b >= 0) {
        for (lca = s->t.nlevels - 1; lca > 0; lca--)
            if (accel_sim_instance(s, a, lca) == accel_sim_instance(s, b, lca))
                break;
        /* lca is the deepest shared level; links below it are used */
        for (k = lca + 1; k < s->t.nlevels; k++) {
            s->link[k][1][accel_sim_instance(s, a, k)] += bytes;
            s->link[k][0][accel_sim_instance(s, b, k)] += bytes;
        }
        return;
    }
    for (k = 1; k < s->t.nlevels; k++) {
        if (a >= 0)
            s->link[k][1][accel_sim_instance(s, a, k)] += bytes;
        if (b >= 0)
            s->link[k][0][accel_sim_instance(s, b, k)] += bytes;
    }
}

static int accel_sim_int(accel_sim_ctx *c, int i, int64_t lo, int64_t hi, int64_t *out)
{
    char *end;
    long long v;
    if (i >= c->n)
        return accel_sim_bad(c, PFVM_ERR_PARSE, "missing operand %d", i), 0;
    v = strtoll(c->tok[i], &end, 10);
    if (*end || end == c->tok[i] || v < lo || v > hi)
        return accel_sim_bad(c, PFVM_ERR_PARSE, "operand %d '%s' is not an integer from %lld to %lld", i, c->tok[i],
                             (long long)lo, (long long)hi),
               0;
    *out = v;
    return 1;
}

/* A byte offset of `words` float32 words inside a PE's memory. */
static int accel_sim_span(accel_sim_ctx *c, int i, int64_t words, int64_t *word)
{
    int64_t off;
    if (!accel_sim_int(c, i, 0, INT64_MAX / 2, &off))
        return 0;
    if (off % 4)
        return accel_sim_bad(c, PFVM_ERR_PARSE, "offset %lld is not a multiple of 4", (long long)off), 0;
    if (words < 0 || off / 4 + words > c->s->words)
        return accel_sim_bad(c, PFVM_ERR_RANGE, "%lld bytes at offset %lld overflow a PE's %lld bytes",
                             (long long)(words * 4), (long long)off, (long long)(c->s->words * 4)),
               0;
    *word = off / 4;
    return 1;
}

static float *accel_sim_read(accel_sim_ctx *c, int64_t pe, int64_t word, int64_t words)
{
    int64_t i, base = pe * c->s->words + word;
    for (i = 0; i < words; i++)
        if (!c->s->written[base + i]) {
            accel_sim_bad(c, PFVM_ERR_RUNTIME, "PE %lld reads byte %lld, which nothing has written", (long long)pe,
                          (long long)((word + i) * 4));
            return NULL;
        }
    return c->s->mem + base;
}

static float *accel_sim_write(accel_sim_ctx *c, int64_t pe, int64_t word, int64_t words)
{
    int64_t base = pe * c->s->words + word;
    memset(c->s->written + base, 1, (size_t)words);
    return c->s->mem + base;
}

/* DIMS (d0xd1x..., or "scalar") and the layout in the rest of the line. */
static int accel_sim_layout(accel_sim_ctx *c, int i, pfvm_accel_layout *l)
{
    int64_t dims[PFVM_MAX_RANK];
    int rank = 0, j, len = 0;
    char text[512];
    const char *p = i < c->n ? c->tok[i] : "";
    if (strcmp(p, "scalar")) {
        while (*p) {
            char *end;
            long long d = strtoll(p, &end, 10);
            if (end == p || d < 1 || rank == PFVM_MAX_RANK || (*end && *end != 'x'))
                return accel_sim_bad(c, PFVM_ERR_PARSE, "'%s' is not a shape (d0xd1x... or scalar)",
                                     i < c->n ? c->tok[i] : ""),
                       0;
            dims[rank++] = d;
            p = *end ? end + 1 : end;
        }
        if (!rank)
            return accel_sim_bad(c, PFVM_ERR_PARSE, "missing shape"), 0;
    }
    text[0] = 0;
    for (j = i + 1; j < c->n; j++)
        len += pfvm__snprintf(text + len, sizeof text - (size_t)len, "%s%s", j > i + 1 ? " " : "", c->tok[j]);
    if (pfvm_accel_layout_parse(text, &c->s->t, rank, dims, l, c->st)) {
        pfvm__prefix(c->st, "program line %d (%s)", c->line, c->tok[0]);
        return 0;
    }
    return 1;
}

static int64_t accel_sim_flat(const pfvm_accel_layout *l, const int64_t *idx)
{
    int64_t f = 0;
    int a;
    for (a = 0; a < l->rank; a++)
        f = f * l->dims[a] + idx[a];
    return f;
}

/* Link bytes of a host -> PEs transfer in which PE p needs the flat
 * elements need[p][0..count[p]) (elements, 4 bytes each): the link into an
 * instance of level k carries, when its children's links broadcast, each
 * element its subtree needs once, else what its children's links carry. */
static pfvm_code accel_sim_fanout_cost(accel_sim_ctx *c, const int64_t *need, const int64_t *count, int64_t block,
                                       int64_t numel)
{
    pfvm_accel_sim *s = c->s;
    int nl = s->t.nlevels, k;
    int64_t pe, i, span = 1;
    double *carried = (double *)pfvm__calloc((size_t)s->npes + 1, sizeof(double)); /* per instance of level k+1 */
    unsigned char *seen = (unsigned char *)pfvm__calloc((size_t)numel + 1, 1);
    if (!carried || !seen) {
        pfvm__free(carried);
        pfvm__free(seen);
        return accel_sim_bad(c, PFVM_ERR_NOMEM, "out of memory");
    }
    for (pe = 0; pe < s->npes; pe++) {
        carried[pe] = (double)count[pe] * 4;
        s->link[nl - 1][0][pe] += carried[pe];
    }
    for (k = nl - 2; k >= 1; k--) {
        int64_t n = pfvm_accel_target_instances(&s->t, k), fan = s->t.levels[k + 1].fanout, inst;
        span *= fan; /* PEs under one instance of level k */
        for (inst = 0; inst < n; inst++) {
            double bytes = 0;
            if (s->t.levels[k + 1].broadcast) {
                int64_t distinct = 0;
                for (pe = inst * span; pe < (inst + 1) * span; pe++)
                    for (i = 0; i < count[pe]; i++)
                        if (!seen[need[pe * block + i]]) {
                            seen[need[pe * block + i]] = 1;
                            distinct++;
                        }
                for (pe = inst * span; pe < (inst + 1) * span; pe++)
                    for (i = 0; i < count[pe]; i++)
                        seen[need[pe * block + i]] = 0;
                bytes = (double)distinct * 4;
            } else {
                for (i = 0; i < fan; i++)
                    bytes += carried[inst * fan + i];
            }
            carried[inst] = bytes; /* children's entries are no longer needed */
            s->link[k][0][inst] += bytes;
        }
    }
    pfvm__free(carried);
    pfvm__free(seen);
    return PFVM_OK;
}

/* input / weight: the host's tensor into every PE's block at the offset. */
static pfvm_code accel_sim_scatter(accel_sim_ctx *c, const pfvm_tensor *x, int first_layout_tok)
{
    pfvm_accel_layout l;
    int64_t word, block, pe, off, coords[PFVM_ACCEL_MAX_LEVELS], idx[PFVM_MAX_RANK], *need, *count;
    pfvm_code rc;
    int a;
    if (!accel_sim_layout(c, first_layout_tok, &l))
        return c->st ? c->st->code : PFVM_ERR_PARSE;
    block = pfvm_accel_layout_local_elems(&l);
    if (!accel_sim_span(c, 2, block, &word))
        return c->st ? c->st->code : PFVM_ERR_RANGE;
    if (x->kind != PFVM_KIND_TENSOR || x->dtype != PFVM_FLOAT || x->rank != l.rank)
        return accel_sim_bad(c, PFVM_ERR_INVALID, "the tensor is not float32 of rank %d", l.rank);
    for (a = 0; a < l.rank; a++)
        if (x->dims[a] != l.dims[a])
            return accel_sim_bad(c, PFVM_ERR_SHAPE, "the tensor's axis %d has size %lld, the program says %lld", a,
                                 (long long)x->dims[a], (long long)l.dims[a]);
    need = (int64_t *)pfvm__malloc(((size_t)(c->s->npes * block) + 1) * sizeof *need);
    count = (int64_t *)pfvm__calloc((size_t)c->s->npes + 1, sizeof *count);
    if (!need || !count) {
        pfvm__free(need);
        pfvm__free(count);
        return accel_sim_bad(c, PFVM_ERR_NOMEM, "out of memory");
    }
    for (pe = 0; pe < c->s->npes; pe++) {
        pfvm_accel_pe_coords(&c->s->t, pe, coords);
        for (off = 0; off < block; off++)
            if (pfvm_accel_layout_element(&l, &c->s->t, coords, off, idx)) {
                int64_t f = accel_sim_flat(&l, idx);
                *accel_sim_write(c, pe, word + off, 1) = ((const float *)x->data)[f];
                need[pe * block + count[pe]++] = f;
            }
    }
    rc = accel_sim_fanout_cost(c, need, count, block, pfvm_tensor_numel(x));
    pfvm__free(need);
    pfvm__free(count);
    return rc;
}

static pfvm_code accel_sim_output(accel_sim_ctx *c)
{
    pfvm_accel_layout l;
    int64_t k, word, block, pe, off, coords[PFVM_ACCEL_MAX_LEVELS], idx[PFVM_MAX_RANK], i, n;
    pfvm_tensor *y;
    unsigned char *got;
    if (!accel_sim_int(c, 1, 0, ACCEL_SIM_MAX_OUTPUTS - 1, &k) || !accel_sim_layout(c, 3, &l))
        return c->st ? c->st->code : PFVM_ERR_PARSE;
    block = pfvm_accel_layout_local_elems(&l);
    if (!accel_sim_span(c, 2, block, &word))
        return c->st ? c->st->code : PFVM_ERR_RANGE;
    if (c->s->outputs[k])
        return accel_sim_bad(c, PFVM_ERR_INVALID, "output %lld written twice", (long long)k);
    if (!(y = pfvm_tensor_new(PFVM_FLOAT, l.rank, l.dims, c->st)))
        return c->st ? c->st->code : PFVM_ERR_NOMEM;
    c->s->outputs[k] = y;
    if (k >= c->s->noutputs)
        c->s->noutputs = (int)k + 1;
    n = pfvm_tensor_numel(y);
    if (!(got = (unsigned char *)pfvm__calloc((size_t)n + 1, 1)))
        return accel_sim_bad(c, PFVM_ERR_NOMEM, "out of memory");
    for (pe = 0; pe < c->s->npes; pe++) {
        int64_t held = 0;
        pfvm_accel_pe_coords(&c->s->t, pe, coords);
        for (off = 0; off < block; off++) {
            int64_t f;
            const float *v;
            if (!pfvm_accel_layout_element(&l, &c->s->t, coords, off, idx))
                continue;
            f = accel_sim_flat(&l, idx);
            if (got[f])
                continue; /* a replica: the host reads one copy */
            if (!(v = accel_sim_read(c, pe, word + off, 1))) {
                pfvm__free(got);
                return c->st ? c->st->code : PFVM_ERR_RUNTIME;
            }
            ((float *)y->data)[f] = *v;
            got[f] = 1;
            held++;
        }
        if (held)
            accel_sim_route(c->s, pe, -1, (double)held * 4);
    }
    for (i = 0; i < n && got[i]; i++)
        ;
    pfvm__free(got);
    if (i < n)
        return accel_sim_bad(c, PFVM_ERR_INVALID, "the layout leaves element %lld of output %lld in no PE",
                             (long long)i, (long long)k);
    return PFVM_OK;
}

static pfvm_code accel_sim_copy(accel_sim_ctx *c)
{
    int64_t sp, sw, dp, dw, bytes;
    float *src, *dst;
    if (!accel_sim_int(c, 1, 0, c->s->npes - 1, &sp) || !accel_sim_int(c, 3, 0, c->s->npes - 1, &dp) ||
        !accel_sim_int(c, 5, 4, INT64_MAX / 2, &bytes))
        return c->st ? c->st->code : PFVM_ERR_PARSE;
    if (bytes % 4)
        return accel_sim_bad(c, PFVM_ERR_PARSE, "byte count %lld is not a multiple of 4", (long long)bytes);
    if (!accel_sim_span(c, 2, bytes / 4, &sw) || !accel_sim_span(c, 4, bytes / 4, &dw) ||
        !(src = accel_sim_read(c, sp, sw, bytes / 4)))
        return c->st ? c->st->code : PFVM_ERR_RANGE;
    dst = accel_sim_write(c, dp, dw, bytes / 4);
    memmove(dst, src, (size_t)bytes);
    if (sp != dp)
        accel_sim_route(c->s, sp, dp, (double)bytes);
    else
        c->s->pe_cycles[sp] += ceil((double)bytes / 4 / c->s->t.simd);
    return PFVM_OK;
}

/* fill D VALUE N: D[i] = VALUE. */
static pfvm_code accel_sim_fill(accel_sim_ctx *c)
{
    int64_t pe, dw, n, i;
    double v;
    char *end;
    if (!accel_sim_int(c, 3, 1, INT64_MAX / 8, &n))
        return c->st->code;
    if (c->n < 3 || (v = strtod(c->tok[2], &end), *end))
        return accel_sim_bad(c, PFVM_ERR_PARSE, "operand 2 is not a number");
    if (!accel_sim_span(c, 1, n, &dw))
        return c->st->code;
    for (pe = 0; pe < c->s->npes; pe++) {
        float *d;
        if (!c->s->active[pe])
            continue;
        d = accel_sim_write(c, pe, dw, n);
        for (i = 0; i < n; i++)
            d[i] = (float)v;
        c->s->pe_cycles[pe] += ceil((double)n / c->s->t.simd);
    }
    return PFVM_OK;
}

/* mov D A R C DR DC AR AC: D[r*DR + c*DC] = A[r*AR + c*AC] (strides in
 * elements, 0 allowed: a broadcast read). The PE's address generator walks
 * one row per step: a row of unit strides moves SIMD-wide, any other row
 * one element per cycle. Reads complete before writes (D may overlap A). */
static pfvm_code accel_sim_mov(accel_sim_ctx *c)
{
    int64_t pe, dw, aw, r, cc, st[4], i, j, dext, aext;
    float *tmp;
    if (!accel_sim_int(c, 3, 1, 1 << 30, &r) || !accel_sim_int(c, 4, 1, 1 << 30, &cc))
        return c->st->code;
    for (i = 0; i < 4; i++)
        if (!accel_sim_int(c, 5 + (int)i, 0, 1 << 30, &st[i]))
            return c->st->code;
    dext = (r - 1) * st[0] + (cc - 1) * st[1] + 1;
    aext = (r - 1) * st[2] + (cc - 1) * st[3] + 1;
    if (!accel_sim_span(c, 1, dext, &dw) || !accel_sim_span(c, 2, aext, &aw))
        return c->st->code;
    if (!(tmp = (float *)pfvm__malloc((size_t)(r * cc) * sizeof *tmp + 1)))
        return accel_sim_bad(c, PFVM_ERR_NOMEM, "out of memory");
    for (pe = 0; pe < c->s->npes; pe++) {
        const float *mem = c->s->mem + pe * c->s->words;
        const unsigned char *wr = c->s->written + pe * c->s->words;
        float *dm = c->s->mem + pe * c->s->words;
        unsigned char *dwr = c->s->written + pe * c->s->words;
        if (!c->s->active[pe])
            continue;
        for (i = 0; i < r; i++) {
            int64_t at = aw + i * st[2];
            for (j = 0; j < cc; j++, at += st[3]) {
                if (!wr[at]) {
                    pfvm__free(tmp);
                    accel_sim_read(c, pe, at, 1); /* the error naming the byte */
                    return c->st->code;
                }
                tmp[i * cc + j] = mem[at];
            }
        }
        for (i = 0; i < r; i++) {
            int64_t at = dw + i * st[0];
            for (j = 0; j < cc; j++, at += st[1]) {
                dm[at] = tmp[i * cc + j];
                dwr[at] = 1;
            }
        }
        c->s->pe_cycles[pe] += (st[1] == 1 && st[3] == 1) ? (double)r * ceil((double)cc / c->s->t.simd)
                                                          : (double)(r * cc);
    }
    pfvm__free(tmp);
    return PFVM_OK;
}

static float accel_un(int op, float x)
{
    switch (op) {
    case 0: return x > 0 ? x : 0;
    case 1: return -x;
    case 2: return expf(x);
    case 3: return logf(x);
    case 4: return sqrtf(x);
    case 5: return 1.0f / x;
    case 6: return erff(x);
    case 7: return tanhf(x);
    case 8: return 1.0f / (1.0f + expf(-x));
    case 9: return fabsf(x);
    default: return x;
    }
}

static float accel_bin(int op, float a, float b)
{
    switch (op) {
    case 0: return a + b;
    case 1: return a - b;
    case 2: return a * b;
    case 3: return a / b;
    case 4: return a > b ? a : b;
    case 5: return a < b ? a : b;
    default: return powf(a, b);
    }
}

static const char *const accel_un_ops[] = {"relu", "neg", "exp", "log", "sqrt", "recip", "erf", "tanh", "sigmoid",
                                           "abs", "copy", NULL};
static const char *const accel_bin_ops[] = {"add", "sub", "mul", "div", "max", "min", "pow", NULL};
static const char *const accel_red_ops[] = {"sum", "max", NULL};

static int accel_sim_opname(accel_sim_ctx *c, const char *const *names)
{
    int i;
    for (i = 0; c->n > 1 && names[i]; i++)
        if (!strcmp(c->tok[1], names[i]))
            return i;
    accel_sim_bad(c, PFVM_ERR_PARSE, "unknown operation '%s'", c->n > 1 ? c->tok[1] : "");
    return -1;
}

/* un/bin/imm/row/col/red/gemm on every active PE. */
static pfvm_code accel_sim_compute(accel_sim_ctx *c)
{
    const char *k = c->tok[0];
    int is_un = !strcmp(k, "un"), is_bin = !strcmp(k, "bin"), is_imm = !strcmp(k, "imm");
    int is_row = !strcmp(k, "row"), is_col = !strcmp(k, "col"), is_red = !strcmp(k, "red");
    int is_gemm = !strcmp(k, "gemm") || !strcmp(k, "gemma");
    int64_t pe, dw, aw, bw = 0, n = 0, rows = 0, cols = 0, m = 0, nn = 0, kk = 0, i, j, l, tb = 0;
    int op = 0, opnd = is_gemm ? 1 : 2; /* index of the first offset */
    double imm = 0, cyc;
    if (!is_gemm && (op = accel_sim_opname(c, is_un ? accel_un_ops : is_red ? accel_red_ops : accel_bin_ops)) < 0)
        return c->st ? c->st->code : PFVM_ERR_PARSE;
    if (is_un || is_imm) {
        if (!accel_sim_int(c, opnd + 2 + is_imm, 1, INT64_MAX / 8, &n))
            return c->st->code;
    } else if (is_bin) {
        if (!accel_sim_int(c, opnd + 3, 1, INT64_MAX / 8, &n))
            return c->st->code;
    } else if (is_row || is_col) {
        if (!accel_sim_int(c, opnd + 3, 1, INT64_MAX / 8, &rows) || !accel_sim_int(c, opnd + 4, 1, INT64_MAX / 8, &cols))
            return c->st->code;
        n = rows * cols;
    } else if (is_red) {
        if (!accel_sim_int(c, opnd + 2, 1, INT64_MAX / 8, &rows) || !accel_sim_int(c, opnd + 3, 1, INT64_MAX / 8, &cols))
            return c->st->code;
    } else {
        if (!accel_sim_int(c, 4, 1, 1 << 30, &m) || !accel_sim_int(c, 5, 1, 1 << 30, &nn) ||
            !accel_sim_int(c, 6, 1, 1 << 30, &kk) || (c->n > 7 && !accel_sim_int(c, 7, 0, 1, &tb)))
            return c->st->code;
    }
    if (is_imm) {
        char *end;
        if (opnd + 2 >= c->n || (imm = strtod(c->tok[opnd + 2], &end), *end))
            return accel_sim_bad(c, PFVM_ERR_PARSE, "operand %d is not a number", opnd + 2);
    }
    if (is_red) {
        if (!accel_sim_span(c, opnd, rows, &dw) || !accel_sim_span(c, opnd + 1, rows * cols, &aw))
            return c->st->code;
    } else if (is_gemm) {
        if (!accel_sim_span(c, 1, m * nn, &dw) || !accel_sim_span(c, 2, m * kk, &aw) ||
            !accel_sim_span(c, 3, kk * nn, &bw))
            return c->st->code;
    } else {
        if (!accel_sim_span(c, opnd, n, &dw) || !accel_sim_span(c, opnd + 1, n, &aw) ||
            ((is_bin || is_row || is_col) &&
             !accel_sim_span(c, opnd + 2, is_bin ? n : is_row ? rows : cols, &bw)))
            return c->st->code;
    }
    if (is_gemm)
        cyc = ceil((double)m * (double)nn * (double)kk / pfvm_accel_target_macs(&c->s->t, PFVM_FLOAT));
    else
        cyc = ceil((double)(is_red ? rows * cols : n) / c->s->t.simd);
    for (pe = 0; pe < c->s->npes; pe++) {
        const float *a, *b = NULL;
        float *d;
        if (!c->s->active[pe])
            continue;
        if (is_gemm) {
            float *tmp;
            int acc = !strcmp(k, "gemma");
            if (!(a = accel_sim_read(c, pe, aw, m * kk)) || !(b = accel_sim_read(c, pe, bw, kk * nn)) ||
                (acc && !accel_sim_read(c, pe, dw, m * nn)))
                return c->st->code;
            if (!(tmp = (float *)pfvm__malloc((size_t)(m * nn) * sizeof *tmp)))
                return accel_sim_bad(c, PFVM_ERR_NOMEM, "out of memory");
            for (i = 0; i < m; i++)
                for (j = 0; j < nn; j++) {
                    double s = acc ? c->s->mem[pe * c->s->words + dw + i * nn + j] : 0.0;
                    for (l = 0; l < kk; l++)
                        s += (double)a[i * kk + l] * (tb ? b[j * kk + l] : b[l * nn + j]);
                    tmp[i * nn + j] = (float)s;
                }
            memcpy(accel_sim_write(c, pe, dw, m * nn), tmp, (size_t)(m * nn) * sizeof *tmp);
            pfvm__free(tmp);
        } else if (is_red) {
            if (!(a = accel_sim_read(c, pe, aw, rows * cols)))
                return c->st->code;
            d = accel_sim_write(c, pe, dw, rows);
            for (i = 0; i < rows; i++) {
                float s = a[i * cols];
                for (j = 1; j < cols; j++)
                    s = op ? (a[i * cols + j] > s ? a[i * cols + j] : s) : s + a[i * cols + j];
                d[i] = s;
            }
        } else {
            if (!(a = accel_sim_read(c, pe, aw, n)) ||
                ((is_bin || is_row || is_col) && !(b = accel_sim_read(c, pe, bw, is_bin ? n : is_row ? rows : cols))))
                return c->st->code;
            d = accel_sim_write(c, pe, dw, n);
            for (i = 0; i < n; i++) {
                if (is_un)
                    d[i] = accel_un(op, a[i]);
                else if (is_imm)
                    d[i] = accel_bin(op, a[i], (float)imm);
                else
                    d[i] = accel_bin(op, a[i], b[is_bin ? i : is_row ? i / cols : i % cols]);
            }
        }
        c->s->pe_cycles[pe] += cyc;
    }
    return PFVM_OK;
}

/* ---- the root memory (DRAM): host placement, load and store ---- */

/* Words [word, word + words) of the root memory, grown on first touch;
 * NULL (an error naming the line) past the level's memory. */
static float *accel_sim_dram(accel_sim_ctx *c, int64_t word, int64_t words)
{
    pfvm_accel_sim *s = c->s;
    int64_t end = word + words;
    if (word < 0 || words < 0 || end > s->dram_limit) {
        accel_sim_bad(c, PFVM_ERR_RANGE, "%lld bytes at offset %lld overflow the %s's %lld bytes",
                      (long long)(words * 4), (long long)(word * 4), s->t.levels[0].name,
                      (long long)(s->dram_limit * 4));
        return NULL;
    }
    if (end > s->dram_words) {
        int64_t n = s->dram_words ? s->dram_words : 1024;
        float *m;
        unsigned char *w;
        while (n < end)
            n *= 2;
        if (n > s->dram_limit)
            n = s->dram_limit;
        if (!(m = (float *)pfvm__realloc(s->dram, (size_t)n * sizeof *m)) ) {
            accel_sim_bad(c, PFVM_ERR_NOMEM, "out of memory for %lld bytes of %s", (long long)(n * 4),
                          s->t.levels[0].name);
            return NULL;
        }
        s->dram = m;
        if (!(w = (unsigned char *)pfvm__realloc(s->dram_written, (size_t)n))) {
            accel_sim_bad(c, PFVM_ERR_NOMEM, "out of memory for %lld bytes of %s", (long long)(n * 4),
                          s->t.levels[0].name);
            return NULL;
        }
        memset(w + s->dram_words, 0, (size_t)(n - s->dram_words));
        s->dram_written = w;
        s->dram_words = n;
    }
    if (end > s->dram_peak)
        s->dram_peak = end;
    return s->dram + word;
}

/* A byte offset (multiple of 4) in the root memory, as a word. */
static int accel_sim_dram_off(accel_sim_ctx *c, int i, int64_t *word)
{
    int64_t off;
    if (!accel_sim_int(c, i, 0, INT64_MAX / 2, &off))
        return 0;
    if (off % 4)
        return accel_sim_bad(c, PFVM_ERR_PARSE, "offset %lld is not a multiple of 4", (long long)off), 0;
    *word = off / 4;
    return 1;
}

/* dinput K OFF / dweight NAME OFF: the host's tensor, row-major, into the
 * root memory before the program runs (not counted in cycles). */
static pfvm_code accel_sim_dplace(accel_sim_ctx *c, const pfvm_tensor *x)
{
    int64_t word, n;
    float *d;
    if (!accel_sim_dram_off(c, 2, &word))
        return c->st->code;
    if (x->kind != PFVM_KIND_TENSOR || x->dtype != PFVM_FLOAT)
        return accel_sim_bad(c, PFVM_ERR_INVALID, "the tensor is not float32");
    n = pfvm_tensor_numel(x);
    if (!(d = accel_sim_dram(c, word, n)))
        return c->st->code;
    memcpy(d, x->data, (size_t)n * sizeof *d);
    memset(c->s->dram_written + word, 1, (size_t)n);
    return PFVM_OK;
}

/* doutput K OFF SHAPE: the host reads output K, row-major, from the root
 * memory after the program (not counted in cycles). */
static pfvm_code accel_sim_doutput(accel_sim_ctx *c)
{
    pfvm_accel_layout l;
    int64_t k, word, n, i;
    const float *src;
    pfvm_tensor *y;
    char *save;
    int keep = c->n;
    if (!accel_sim_int(c, 1, 0, ACCEL_SIM_MAX_OUTPUTS - 1, &k) || !accel_sim_dram_off(c, 2, &word))
        return c->st->code;
    /* the shape alone: a layout of one local factor per axis */
    if (c->n != 4)
        return accel_sim_bad(c, PFVM_ERR_PARSE, "expected doutput K OFF SHAPE");
    save = c->tok[3];
    {
        char text[256];
        size_t len = 0;
        const char *p = save;
        int rank = 0;
        int64_t dims[PFVM_MAX_RANK];
        if (strcmp(p, "scalar"))
            while (*p) {
                char *end;
                long long d = strtoll(p, &end, 10);
                if (end == p || d < 1 || rank == PFVM_MAX_RANK || (*end && *end != 'x'))
                    return accel_sim_bad(c, PFVM_ERR_PARSE, "'%s' is not a shape (d0xd1x... or scalar)", save);
                dims[rank++] = d;
                p = *end ? end + 1 : end;
            }
        text[0] = 0;
        for (i = 0; i < rank && len < sizeof text; i++)
            len += (size_t)pfvm__snprintf(text + len, sizeof text - len, "%slocal:%lld", i ? ", " : "",
                                          (long long)dims[i]);
        if (!rank)
            pfvm__snprintf(text, sizeof text, "-");
        if (pfvm_accel_layout_parse(text, &c->s->t, rank, dims, &l, c->st))
            return c->st->code;
    }
    c->n = keep;
    if (c->s->outputs[k])
        return accel_sim_bad(c, PFVM_ERR_INVALID, "output %lld written twice", (long long)k);
    if (!(y = pfvm_tensor_new(PFVM_FLOAT, l.rank, l.dims, c->st)))
        return c->st ? c->st->code : PFVM_ERR_NOMEM;
    c->s->outputs[k] = y;
    if (k >= c->s->noutputs)
        c->s->noutputs = (int)k + 1;
    n = pfvm_tensor_numel(y);
    if (!(src = accel_sim_dram(c, word, n)))
        return c->st->code;
    for (i = 0; i < n; i++)
        if (!c->s->dram_written[word + i])
            return accel_sim_bad(c, PFVM_ERR_RUNTIME, "the host reads %s byte %lld, which nothing has written",
                                 c->s->t.levels[0].name, (long long)((word + i) * 4));
    memcpy(y->data, src, (size_t)n * sizeof *src);
    return PFVM_OK;
}

/* Link bytes of one transfer of `bytes` from the root to the PEs first,
 * first + step, ... up to last (the same data): the link into an instance
 * carries it once when its children's links broadcast (and one of them
 * needs it), else what they carry together. */
static void accel_sim_load_cost(pfvm_accel_sim *s, int64_t first, int64_t last, int64_t step, double bytes)
{
    int nl = s->t.nlevels, k;
    int64_t lo = first, hi = last, i;
    double *carried = s->carry; /* per instance of level k + 1, from lo */
    for (i = lo; i <= hi; i++) {
        carried[i - lo] = (i - lo) % step ? 0 : bytes;
        s->link[nl - 1][0][i] += carried[i - lo];
    }
    for (k = nl - 2; k >= 1; k--) {
        int64_t fan = s->t.levels[k + 1].fanout, nlo = lo / fan, nhi = hi / fan, inst;
        for (inst = nlo; inst <= nhi; inst++) {
            double b = 0;
            int64_t ch;
            for (ch = inst * fan; ch < (inst + 1) * fan; ch++)
                if (ch >= lo && ch <= hi)
                    b += carried[ch - lo];
            if (s->t.levels[k + 1].broadcast && b > 0)
                b = bytes;
            carried[inst - nlo] = b;
            s->link[k][0][inst] += b;
        }
        lo = nlo;
        hi = nhi;
    }
}

/* load F L D A N R C DN DR AN AR: every PE of F..L gets (loads F L S ...:
 * the PEs F, F+S, ... up to L)
 * D[n*DN + r*DR + c] = root[A + n*AN + r*AR + c] (strides in elements);
 * store P A D N R C AN AR DN DR: root[A + n*AN + r*AR + c] = PE P's
 * D[n*DN + r*DR + c]. */
static pfvm_code accel_sim_loadstore(accel_sim_ctx *c)
{
    int strided = !strcmp(c->tok[0], "loads"), is_load = strided || !strcmp(c->tok[0], "load");
    int o = strided ? 4 : is_load ? 3 : 2, i;
    int64_t first, last, step = 1, pe, dw, aw, v[7], n, r, col, dext, aext, x, y;
    if (!accel_sim_int(c, 1, 0, c->s->npes - 1, &first) ||
        (is_load && !accel_sim_int(c, 2, first, c->s->npes - 1, &last)) ||
        (strided && !accel_sim_int(c, 3, 1, c->s->npes, &step)))
        return c->st->code;
    if (!is_load)
        last = first;
    for (i = 0; i < 7; i++)
        if (!accel_sim_int(c, o + 2 + i, i < 3 ? 1 : 0, 1 << 30, &v[i]))
            return c->st->code;
    if (c->n != o + 9)
        return accel_sim_bad(c, PFVM_ERR_PARSE, "expected %d operands", o + 8);
    n = v[0], r = v[1], col = v[2];
    /* PE strides come first for load (DN DR AN AR), root strides for store (AN AR DN DR) */
    {
        int64_t pn = is_load ? v[3] : v[5], pr = is_load ? v[4] : v[6];
        int64_t rn = is_load ? v[5] : v[3], rr = is_load ? v[6] : v[4];
        int64_t pw, rw;
        if (!accel_sim_dram_off(c, is_load ? o + 1 : o, &rw) || !accel_sim_int(c, is_load ? o : o + 1, 0, INT64_MAX / 2, &pw))
            return c->st->code;
        if (pw % 4)
            return accel_sim_bad(c, PFVM_ERR_PARSE, "offset %lld is not a multiple of 4", (long long)pw);
        dext = (n - 1) * pn + (r - 1) * pr + col;
        aext = (n - 1) * rn + (r - 1) * rr + col;
        if (!accel_sim_span(c, is_load ? o : o + 1, dext, &dw) || !accel_sim_dram(c, rw, aext))
            return c->st->code;
        aw = rw;
        for (pe = first; pe <= last; pe += step)
            for (x = 0; x < n; x++)
                for (y = 0; y < r; y++) {
                    int64_t pp = dw + x * pn + y * pr, rp = aw + x * rn + y * rr, j;
                    if (is_load) {
                        for (j = 0; j < col; j++)
                            if (!c->s->dram_written[rp + j])
                                return accel_sim_bad(c, PFVM_ERR_RUNTIME,
                                                     "PE %lld loads %s byte %lld, which nothing has written",
                                                     (long long)pe, c->s->t.levels[0].name,
                                                     (long long)((rp + j) * 4));
                        memcpy(accel_sim_write(c, pe, pp, col), c->s->dram + rp, (size_t)col * sizeof(float));
                    } else {
                        const float *src = accel_sim_read(c, pe, pp, col);
                        if (!src)
                            return c->st->code;
                        memcpy(c->s->dram + rp, src, (size_t)col * sizeof(float));
                        memset(c->s->dram_written + rp, 1, (size_t)col);
                    }
                }
    }
    if (is_load)
        accel_sim_load_cost(c->s, first, last, step, (double)(n * r * col) * 4);
    else
        accel_sim_route(c->s, first, -1, (double)(n * r * col) * 4);
    return PFVM_OK;
}

static pfvm_code accel_sim_line(accel_sim_ctx *c, const pfvm_tensor *const *inputs, int ninputs,
                                pfvm_accel_weight_fn lookup, void *user)
{
    const char *k = c->tok[0];
    if (!strcmp(k, "program")) {
        if (c->line != 1 || c->n != 2 || strcmp(c->tok[1], c->s->t.name))
            return accel_sim_bad(c, PFVM_ERR_INVALID, "the first line must be 'program %s' (the target's name)",
                                 c->s->t.name);
        return PFVM_OK;
    }
    if (c->line == 1)
        return accel_sim_bad(c, PFVM_ERR_PARSE, "the first line must be 'program TARGET'");
    if (!strcmp(k, "barrier"))
        return accel_sim_phase(c->s, c->st);
    if (!strcmp(k, "on")) {
        int64_t a, b;
        int i;
        if (c->n < 3 || c->n % 2 == 0)
            return accel_sim_bad(c, PFVM_ERR_PARSE, "expected pairs FIRST LAST of PE numbers");
        memset(c->s->active, 0, (size_t)c->s->npes);
        for (i = 1; i < c->n; i += 2) {
            if (!accel_sim_int(c, i, 0, c->s->npes - 1, &a) || !accel_sim_int(c, i + 1, a, c->s->npes - 1, &b))
                return c->st->code;
            memset(c->s->active + a, 1, (size_t)(b - a + 1));
        }
        return PFVM_OK;
    }
    if (!strcmp(k, "input")) {
        int64_t i;
        if (!accel_sim_int(c, 1, 0, 1 << 20, &i))
            return c->st->code;
        if (i >= ninputs || !inputs[i])
            return accel_sim_bad(c, PFVM_ERR_INVALID, "input %lld not given (%d inputs)", (long long)i, ninputs);
        return accel_sim_scatter(c, inputs[i], 3);
    }
    if (!strcmp(k, "weight")) {
        const pfvm_tensor *w = c->n > 1 && lookup ? lookup(user, c->tok[1]) : NULL;
        if (!w)
            return accel_sim_bad(c, PFVM_ERR_INVALID, "no weight named '%s'", c->n > 1 ? c->tok[1] : "");
        return accel_sim_scatter(c, w, 3);
    }
    if (!strcmp(k, "output"))
        return accel_sim_output(c);
    if (!strcmp(k, "dinput")) {
        int64_t i;
        if (!accel_sim_int(c, 1, 0, 1 << 20, &i))
            return c->st->code;
        if (i >= ninputs || !inputs[i])
            return accel_sim_bad(c, PFVM_ERR_INVALID, "input %lld not given (%d inputs)", (long long)i, ninputs);
        return accel_sim_dplace(c, inputs[i]);
    }
    if (!strcmp(k, "dweight")) {
        const pfvm_tensor *w = c->n > 1 && lookup ? lookup(user, c->tok[1]) : NULL;
        if (!w)
            return accel_sim_bad(c, PFVM_ERR_INVALID, "no weight named '%s'", c->n > 1 ? c->tok[1] : "");
        return accel_sim_dplace(c, w);
    }
    if (!strcmp(k, "doutput"))
        return accel_sim_doutput(c);
    if (!strcmp(k, "load") || !strcmp(k, "loads") || !strcmp(k, "store"))
        return accel_sim_loadstore(c);
    if (!strcmp(k, "copy"))
        return accel_sim_copy(c);
    if (!strcmp(k, "fill"))
        return accel_sim_fill(c);
    if (!strcmp(k, "mov"))
        return accel_sim_mov(c);
    if (!strcmp(k, "un") || !strcmp(k, "bin") || !strcmp(k, "imm") || !strcmp(k, "row") || !strcmp(k, "col") ||
        !strcmp(k, "red") || !strcmp(k, "gemm") || !strcmp(k, "gemma"))
        return accel_sim_compute(c);
    return accel_sim_bad(c, PFVM_ERR_PARSE, "unknown instruction");
}

/* Zeroes the current phase's link bytes and PE cycles. */
static void accel_sim_reset_counts(pfvm_accel_sim *s)
{
    int k;
    for (k = 1; k < s->t.nlevels; k++) {
        size_t n = (size_t)pfvm_accel_target_instances(&s->t, k);
        memset(s->link[k][0], 0, n * sizeof(double));
        memset(s->link[k][1], 0, n * sizeof(double));
    }
    memset(s->pe_cycles, 0, (size_t)s->npes * sizeof *s->pe_cycles);
}

pfvm_code pfvm_accel_sim_run(pfvm_accel_sim *s, const char *program, const pfvm_tensor *const *inputs, int ninputs,
                             pfvm_accel_weight_fn lookup, void *user, pfvm_status *st)
{
    accel_sim_ctx c;
    pfvm_status local;
    const char *p = program;
    char line[1024];
    pfvm_code rc = PFVM_OK;
    memset(&c, 0, sizeof c);
    c.s = s;
    c.st = st ? st : &local;
    accel_sim_clear_outputs(s);
    memset(s->written, 0, (size_t)(s->npes * s->words));
    if (s->dram_written)
        memset(s->dram_written, 0, (size_t)s->dram_words);
    s->dram_peak = 0;
    s->cycles = s->transfer_cycles = 0;
    stbds_arrsetlen(s->phases, 0);
    memset(s->active, 1, (size_t)s->npes);
    accel_sim_reset_counts(s); /* a run that failed mid-phase left its bytes and cycles */
    while (*p && rc == PFVM_OK) {
        const char *e = strchr(p, '\n');
        size_t len = e ? (size_t)(e - p) : strlen(p), i;
        char *h;
        c.line++;
        c.n = 0;
        if (len >= sizeof line)
            return accel_sim_bad(&c, PFVM_ERR_PARSE, "line longer than 1023 characters");
        memcpy(line, p, len);
        line[len] = 0;
        if ((h = strchr(line, '#')) != NULL)
            *h = 0;
        for (i = 0; line[i];) {
            while (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')
                line[i++] = 0;
            if (!line[i])
                break;
            if (c.n == ACCEL_SIM_TOKENS)
                return accel_sim_bad(&c, PFVM_ERR_PARSE, "more than 48 words");
            c.tok[c.n++] = line + i;
            while (line[i] && line[i] != ' ' && line[i] != '\t' && line[i] != '\r')
                i++;
        }
        if (c.n)
            rc = accel_sim_line(&c, inputs, ninputs, lookup, user);
        else if (c.line == 1)
            rc = accel_sim_bad(&c, PFVM_ERR_PARSE, "the first line must be 'program TARGET'");
        p += len + (e != NULL);
    }
    if (rc == PFVM_OK && (rc = accel_sim_phase(s, c.st)) == PFVM_OK)
        pfvm__ok(st);
    return rc;
}
