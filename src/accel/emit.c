/* accel emitter (see emit.h). */
#include "emit.h"

#include "../opi/opi.h"
#include "../passes/passes.h"
#include "../shape/infer.h"
#include "layout.h"
#include "sim.h"

#include <stdio.h>
#include <stdlib.h>

/* Where one value lives on the PEs. */
typedef struct accel_em_place {
    int placed, replicated, whole; /* whole: the whole tensor on PE 0 only (the fallback) */
    int64_t off, bytes, elems;
    int last_use; /* index of the last node reading it; graph outputs: past the end */
    /* streamed: how many consumers down the chain its producer applied
     * (each a view): its single consumer 1, also that one's consumer 2... */
    int activated;
    int chained; /* streamed: computed in the tiles of a chain's first node (pfvm_accel_ctx.chain): a view */
    /* streamed: a strided view of its producer's input (pfvm_acl_view_of),
     * read only by its readers' maps: pfvm_accel_arg's vrank, vdims, vstr */
    int vrank;
    int64_t vdims[PFVM_MAX_RANK], vstr[PFVM_MAX_RANK];
    double vscale; /* pfvm_accel_arg's: the view scaled (pfvm_acl_view_scale) */
    char layout[256];
} accel_em_place;

/* Streamed: the part of a pooled Concat a node computes
 * (accel_em_ppart_find). */
typedef struct accel_em_ppart {
    const pfvm_node *r, *q, *qpost; /* the Concat, the pool and the pool's activation */
    pfvm_accel_arg pin, pout;       /* the part's shapes at the pool's input and output */
    int64_t qoff;                   /* the pool output part's first element */
    int64_t qall;                   /* the pool output's elements */
} accel_em_ppart;

/* A free range of PE memory. */
typedef struct accel_em_hole {
    int64_t off, size;
} accel_em_hole;

typedef struct accel_em_emitter {
    const pfvm_accel_target *t;
    pfvm_graph *g;
    accel_em_place *places; /* by value id */
    accel_em_hole *holes;   /* stb_ds, sorted by offset */
    int64_t *scratch;    /* stb_ds: (offset, size) pairs taken for the current node */
    char *text;          /* stb_ds */
    int64_t peak;
    pfvm_status *st;
    char on[512];        /* the current `on` line */
    int64_t dram_top;    /* streamed plan: the root memory in use (a bump allocator) */
    int naive;           /* the baseline: each node on as many PEs as its output's first axis, no fusion */
    const pfvm_node *post_node; /* streamed: the consumer the current node applies (pfvm_accel_ctx.post) */
    const pfvm_node *res_node;  /* streamed: the two-activation consumer it applies (pfvm_accel_ctx.res) */
    int res_vi;                 /* the current node's output is res_node's input res_vi */
    const pfvm_node *vec_node;  /* streamed: the constant-vector consumer it applies (pfvm_accel_ctx.vec) */
    int vec_vi;                 /* the current node's output is vec_node's input vec_vi */
    const pfvm_node *row_node;  /* streamed: the row consumer it applies (pfvm_accel_ctx.row) */
    int64_t row_at;             /* the row consumer's next temporary (accel_em_row_scratch) */
    pfvm_accel_ctx chain[2];    /* streamed: the nodes the current node may run in its tiles (pfvm_accel_ctx.chain) */
    const pfvm_node *chain_post[2]; /* their activations */
    accel_em_ppart ppart; /* streamed: the current node's pooled part, to pool after it (ppart_on) */
    int ppart_on;
    struct accel_em_keep *keeps; /* stb_ds: streamed, the weights read again (pfvm_accel_ctx.keep_dram) */
    int64_t keep_top;            /* bytes at the top of every PE their regions take */
    int64_t *keep_pend;          /* the current node's tags (pfvm_accel_ctx.keep_tag), kept when it is lowered */
    int keep_cur;                /* the current node's region in keeps, -1 none */
} accel_em_emitter;

/* A weight whose bytes more than one node reads (an initializer and its
 * equal copies: a layer's weights shared with the next) and its region at
 * the top of every PE, which outlives the nodes (pfvm_accel_ctx.keep_off). */
typedef struct accel_em_keep {
    const pfvm_tensor *data;
    int64_t off, bytes;
    int64_t *tag; /* per PE: the tile the region holds (pfvm_accel_ctx.keep_tag), -1 none */
    int used, readers;
} accel_em_keep;

static pfvm_code accel_em_put(accel_em_emitter *e, const char *fmt, va_list ap)
{
    char line[1024];
    int n = pfvm__vsnprintf(line, sizeof line, fmt, ap);
    char *dst;
    if (n < 0 || (size_t)n >= sizeof line - 1)
        return pfvm__fail(e->st, PFVM_ERR_INVALID, "accel: a program line longer than 1022 characters");
    line[n++] = '\n';
    if (!(dst = pfvm__arraddn(e->text, (size_t)n)))
        return pfvm__fail(e->st, PFVM_ERR_NOMEM, "accel: out of memory for the program text");
    memcpy(dst, line, (size_t)n);
    return PFVM_OK;
}

static pfvm_code accel_em_line(accel_em_emitter *e, const char *fmt, ...)
{
    va_list ap;
    pfvm_code rc;
    va_start(ap, fmt);
    rc = accel_em_put(e, fmt, ap);
    va_end(ap);
    return rc;
}

/* First fit; -1 when nothing is large enough. */
static int64_t accel_em_alloc(accel_em_emitter *e, int64_t bytes)
{
    size_t i, n = (size_t)stbds_arrlen(e->holes);
    bytes = (bytes + 15) / 16 * 16;
    if (bytes == 0)
        bytes = 16;
    for (i = 0; i < n; i++)
        if (e->holes[i].size >= bytes) {
            int64_t off = e->holes[i].off;
            e->holes[i].off += bytes;
            e->holes[i].size -= bytes;
            if (off + bytes > e->peak)
                e->peak = off + bytes;
            return off;
        }
    return -1;
}

static pfvm_code accel_em_release(accel_em_emitter *e, int64_t off, int64_t bytes)
{
    size_t i, n = (size_t)stbds_arrlen(e->holes);
    accel_em_hole h;
    bytes = (bytes + 15) / 16 * 16;
    if (bytes == 0)
        bytes = 16;
    for (i = 0; i < n && e->holes[i].off < off; i++)
        ;
    h.off = off;
    h.size = bytes;
    if (!pfvm__arrpush(e->holes, h))
        return pfvm__fail(e->st, PFVM_ERR_NOMEM, "accel: out of memory");
    memmove(e->holes + i + 1, e->holes + i, (n - i) * sizeof h);
    e->holes[i] = h;
    /* merge neighbours */
    for (i = 0; i + 1 < (size_t)stbds_arrlen(e->holes);) {
        if (e->holes[i].off + e->holes[i].size == e->holes[i + 1].off) {
            e->holes[i].size += e->holes[i + 1].size;
            memmove(e->holes + i + 1, e->holes + i + 2, ((size_t)stbds_arrlen(e->holes) - i - 2) * sizeof h);
            stbds_arrsetlen(e->holes, stbds_arrlen(e->holes) - 1);
        } else {
            i++;
        }
    }
    return PFVM_OK;
}

static pfvm_code accel_em_ctx_emit(pfvm_accel_ctx *c, const char *fmt, ...)
{
    va_list ap;
    pfvm_code rc;
    va_start(ap, fmt);
    rc = accel_em_put((accel_em_emitter *)c->user, fmt, ap);
    va_end(ap);
    return rc;
}

static int64_t accel_em_ctx_scratch(pfvm_accel_ctx *c, int64_t bytes)
{
    accel_em_emitter *e = (accel_em_emitter *)c->user;
    int64_t off = accel_em_alloc(e, bytes);
    if (off >= 0 && (!pfvm__arrpush(e->scratch, off) || !pfvm__arrpush(e->scratch, bytes)))
        return -1;
    return off;
}

/* The static dims of v, or an error naming it. */
static pfvm_code accel_em_dims(accel_em_emitter *e, const pfvm_value *v, int *rank, int64_t *dims)
{
    int i;
    if (v->type.kind != PFVM_KIND_TENSOR || v->type.shape.rank < 0)
        return pfvm__fail(e->st, PFVM_ERR_UNSUPPORTED, "value %s: not a tensor of known rank", v->name);
    if (v->type.dtype != PFVM_FLOAT)
        return pfvm__fail(e->st, PFVM_ERR_UNSUPPORTED, "value %s: %s (accel lowers float32 only)", v->name,
                          pfvm_dtype_name(v->type.dtype));
    *rank = v->type.shape.rank;
    for (i = 0; i < *rank; i++)
        if (!pfvm_sym_is_const(v->type.shape.dims[i], &dims[i])) {
            char sym[64];
            pfvm_sym_print(v->type.shape.dims[i], sym, sizeof sym);
            return pfvm__fail(e->st, PFVM_ERR_INVALID,
                              "value %s: dim %d is symbolic (%s); bind it (pfvm_infer_shapes_bound, interp accel "
                              "--dim NAME=VALUE)",
                              v->name, i, sym);
        }
    return PFVM_OK;
}

/* The rows layout of a first axis of size d0: as many PEs as divide it,
 * innermost levels first. Writes its first-axis factors into text. */
static int64_t accel_em_rows(const pfvm_accel_target *t, int64_t d0, char *text, size_t size)
{
    int64_t f[PFVM_ACCEL_MAX_LEVELS], rest = d0, pes = 1;
    size_t len = 0;
    int k;
    for (k = t->nlevels - 1; k >= 1; k--) {
        int64_t best = 1, x;
        for (x = t->levels[k].fanout; x > 1; x--)
            if (rest % x == 0) {
                best = x;
                break;
            }
        f[k] = best;
        rest /= best;
        pes *= best;
    }
    text[0] = 0;
    for (k = 1; k < t->nlevels; k++)
        if (f[k] > 1)
            len += (size_t)pfvm__snprintf(text + len, size - len, "%s:%lld*", t->levels[k].name, (long long)f[k]);
    pfvm__snprintf(text + len, size - len, "local:%lld", (long long)rest);
    return pes;
}

/* How a value is placed: its first axis over the PEs (rows), whole on
 * every PE (replicated: weights, and what only they feed), or whole on PE 0
 * (the fallback for nodes whose lowering does not take a split input). */
enum { ACCEL_EM_ROWS, ACCEL_EM_REPLICATED, ACCEL_EM_WHOLE };

/* The layout text of v placed in `mode`, and its elements per PE. */
static pfvm_code accel_em_layout_text(accel_em_emitter *e, const pfvm_value *v, int mode, char *text, size_t size,
                                      int64_t *elems_out)
{
    int rank, i, k;
    int64_t dims[PFVM_MAX_RANK], elems = 1;
    size_t len = 0;
    pfvm_code rc;
    if ((rc = accel_em_dims(e, v, &rank, dims)) != PFVM_OK)
        return rc;
    text[0] = 0;
    if (rank == 0) {
        len += (size_t)pfvm__snprintf(text, size, "-");
        if (mode == ACCEL_EM_ROWS)
            mode = ACCEL_EM_REPLICATED;
    }
    for (i = 0; i < rank; i++) {
        if (i == 0 && mode == ACCEL_EM_ROWS) {
            char rows[128];
            int64_t pes = accel_em_rows(e->t, dims[0], rows, sizeof rows);
            len += (size_t)pfvm__snprintf(text + len, size - len, "%s", rows);
            elems *= dims[0] / pes;
        } else {
            len += (size_t)pfvm__snprintf(text + len, size - len, "%slocal:%lld", i ? ", " : "", (long long)dims[i]);
            elems *= dims[i];
        }
        if (len >= size - 1)
            break;
    }
    if (mode == ACCEL_EM_REPLICATED)
        for (k = 1; k < e->t->nlevels && len < size - 1; k++)
            len += (size_t)pfvm__snprintf(text + len, size - len, "%s%s", k == 1 ? " | rep " : " ",
                                          e->t->levels[k].name);
    if (len >= size - 1)
        return pfvm__fail(e->st, PFVM_ERR_UNSUPPORTED, "value %s: layout text too long", v->name);
    *elems_out = elems;
    return PFVM_OK;
}

/* Places v in `mode` and writes its layout text. */
static pfvm_code accel_em_place_value(accel_em_emitter *e, const pfvm_value *v, int mode)
{
    accel_em_place *p = &e->places[v->id];
    pfvm_code rc;
    if ((rc = accel_em_layout_text(e, v, mode, p->layout, sizeof p->layout, &p->elems)) != PFVM_OK)
        return rc;
    p->replicated = mode == ACCEL_EM_REPLICATED || (mode == ACCEL_EM_ROWS && v->type.shape.rank == 0);
    p->whole = mode == ACCEL_EM_WHOLE;
    p->bytes = p->elems * 4;
    if ((p->off = accel_em_alloc(e, p->bytes)) < 0)
        return pfvm__fail(e->st, PFVM_ERR_NOMEM,
                          "value %s: %lld bytes per PE do not fit in the %lld bytes of a %s (%s; tiling and spills "
                          "are not implemented yet)",
                          v->name, (long long)p->bytes, (long long)e->t->levels[e->t->nlevels - 1].mem_bytes,
                          e->t->levels[e->t->nlevels - 1].name, p->layout);
    p->placed = 1;
    return PFVM_OK;
}

/* `input`/`weight`/`output` need the shape as d0xd1x... ("scalar"). */
static void accel_em_shape_text(const pfvm_value *v, char *buf, size_t size)
{
    int i;
    size_t len = 0;
    int64_t d = 0;
    if (v->type.shape.rank == 0)
        pfvm__snprintf(buf, size, "scalar");
    for (i = 0; i < v->type.shape.rank; i++) {
        pfvm_sym_is_const(v->type.shape.dims[i], &d);
        len += (size_t)pfvm__snprintf(buf + len, size - len, "%s%lld", i ? "x" : "", (long long)d);
    }
}

/* The `on` line for the PEs that hold a rows tensor (all PEs if replicated). */
static pfvm_code accel_em_on(accel_em_emitter *e, const accel_em_place *p, const pfvm_value *v)
{
    char buf[512];
    size_t len;
    int64_t npes = pfvm_accel_target_pes(e->t), pe, start = -1, c[PFVM_ACCEL_MAX_LEVELS];
    int64_t f[PFVM_ACCEL_MAX_LEVELS];
    int k;
    len = (size_t)pfvm__snprintf(buf, sizeof buf, "on");
    for (k = 0; k < e->t->nlevels; k++)
        f[k] = e->t->levels[k].fanout;
    if (!p->replicated) {
        pfvm_accel_layout l;
        int rank;
        int64_t dims[PFVM_MAX_RANK];
        if (accel_em_dims(e, v, &rank, dims) || pfvm_accel_layout_parse(p->layout, e->t, rank, dims, &l, e->st))
            return e->st ? e->st->code : PFVM_ERR_INVALID;
        for (k = 0; k < e->t->nlevels; k++)
            f[k] = pfvm_accel_layout_spread(&l, k);
    }
    for (pe = 0; pe <= npes; pe++) {
        int in = pe < npes;
        if (in) {
            pfvm_accel_pe_coords(e->t, pe, c);
            for (k = 0; k < e->t->nlevels; k++)
                if (c[k] >= f[k])
                    in = 0;
        }
        if (in && start < 0)
            start = pe;
        if (!in && start >= 0) {
            len += (size_t)pfvm__snprintf(buf + len, sizeof buf > len ? sizeof buf - len : 0, " %lld %lld",
                                          (long long)start, (long long)(pe - 1));
            start = -1;
        }
    }
    if (len >= sizeof buf)
        return pfvm__fail(e->st, PFVM_ERR_UNSUPPORTED, "value %s: its PEs form too many ranges", v->name);
    if (!strcmp(buf, e->on))
        return PFVM_OK;
    strcpy(e->on, buf);
    return accel_em_line(e, "%s", buf);
}

static pfvm_code accel_em_weight(accel_em_emitter *e, const pfvm_value *v)
{
    char shape[128];
    pfvm_code rc;
    if (strpbrk(v->name, " \t#") || !v->name[0])
        return pfvm__fail(e->st, PFVM_ERR_UNSUPPORTED, "initializer '%s': a name with spaces or '#'", v->name);
    if ((rc = accel_em_place_value(e, v, ACCEL_EM_REPLICATED)) != PFVM_OK)
        return rc;
    accel_em_shape_text(v, shape, sizeof shape);
    return accel_em_line(e, "weight %s %lld %s %s", v->name, (long long)e->places[v->id].off, shape,
                      e->places[v->id].layout);
}

/* A copy of input v (placed in rows) whole on PE 0, in scratch memory of
 * the current node: the moves between the two layouts (pfvm_accel_moves)
 * as `copy` lines, in a phase of their own. */
static pfvm_code accel_em_gather(accel_em_emitter *e, const pfvm_node *n, const pfvm_value *v, int64_t *off,
                                 int64_t *elems)
{
    accel_em_place *p = &e->places[v->id];
    char text[256];
    pfvm_accel_layout src, dst;
    pfvm_accel_move *moves = NULL;
    int rank;
    int64_t dims[PFVM_MAX_RANK];
    size_t i, count;
    pfvm_code rc;
    if ((rc = accel_em_layout_text(e, v, ACCEL_EM_WHOLE, text, sizeof text, elems)) != PFVM_OK ||
        (rc = accel_em_dims(e, v, &rank, dims)) != PFVM_OK ||
        (rc = pfvm_accel_layout_parse(p->layout, e->t, rank, dims, &src, e->st)) != PFVM_OK ||
        (rc = pfvm_accel_layout_parse(text, e->t, rank, dims, &dst, e->st)) != PFVM_OK)
        return rc;
    if ((*off = accel_em_alloc(e, *elems * 4)) < 0 || !pfvm__arrpush(e->scratch, *off) ||
        !pfvm__arrpush(e->scratch, *elems * 4))
        return pfvm__fail(e->st, PFVM_ERR_NOMEM, "node %s (%s): input %s whole (%lld bytes) does not fit on PE 0",
                          n->name, n->op_type, v->name, (long long)(*elems * 4));
    if ((rc = pfvm_accel_moves(e->t, &src, &dst, &moves, &count, e->st)) != PFVM_OK)
        return rc;
    rc = accel_em_line(e, "# gather %s -> %s (fallback: the lowering of %s takes it whole)", v->name, text, n->name);
    for (i = 0; rc == PFVM_OK && i < count; i++)
        rc = accel_em_line(e, "copy %lld %lld %lld %lld %lld", (long long)moves[i].src_pe,
                           (long long)(p->off + moves[i].src_off * 4), (long long)moves[i].dst_pe,
                           (long long)(*off + moves[i].dst_off * 4), (long long)(moves[i].count * 4));
    pfvm_accel_moves_free(moves);
    return rc == PFVM_OK ? accel_em_line(e, "barrier") : rc;
}

/* Lowers node n (index: its position); fallback: its inputs placed in rows
 * are gathered whole to PE 0 first, and it runs there. */
static pfvm_code accel_em_node_try(accel_em_emitter *e, const pfvm_node *n, int index, int fallback)
{
    pfvm_accel_ctx c;
    int i, all_rep = 1, any_whole = fallback;
    pfvm_code rc;
    memset(&c, 0, sizeof c);
    c.node = n;
    c.n_in = n->n_inputs;
    c.n_out = n->n_outputs;
    c.simd = e->t->simd;
    c.user = e;
    c.emit = accel_em_ctx_emit;
    c.scratch = accel_em_ctx_scratch;
    c.st = e->st;
    for (i = 0; i < n->n_inputs; i++) {
        const pfvm_value *v = n->inputs[i];
        accel_em_place *p;
        c.in[i].rank = -1;
        if (!v)
            continue;
        p = &e->places[v->id];
        /* integer constants (Reshape's shape, axes) are read by the hooks
         * from the node's initializers, never from PE memory */
        if (v->init && v->type.dtype != PFVM_FLOAT)
            continue;
        if (!p->placed && v->init && (rc = accel_em_weight(e, v)) != PFVM_OK)
            return rc;
        if (!p->placed)
            return pfvm__fail(e->st, PFVM_ERR_INVALID, "node %s (%s): input %s is not computed before it", n->name,
                              n->op_type, v->name);
        if ((rc = accel_em_dims(e, v, &c.in[i].rank, c.in[i].dims)) != PFVM_OK)
            return rc;
        c.in[i].off = p->off;
        c.in[i].elems = p->elems;
        c.in[i].replicated = p->replicated || p->whole;
        if (fallback && !p->replicated && !p->whole) {
            if ((rc = accel_em_gather(e, n, v, &c.in[i].off, &c.in[i].elems)) != PFVM_OK)
                return rc;
            c.in[i].replicated = 1;
        }
        all_rep &= c.in[i].replicated;
        any_whole |= p->whole;
    }
    for (i = 0; i < n->n_outputs; i++) {
        const pfvm_value *v = n->outputs[i];
        int mode = !all_rep ? ACCEL_EM_ROWS : any_whole ? ACCEL_EM_WHOLE : ACCEL_EM_REPLICATED;
        c.out[i].rank = -1;
        if (!v)
            continue;
        if ((rc = accel_em_place_value(e, v, mode)) != PFVM_OK) {
            pfvm__prefix(e->st, "node %s (%s)", n->name, n->op_type);
            return rc;
        }
        c.out[i].off = e->places[v->id].off;
        c.out[i].elems = e->places[v->id].elems;
        c.out[i].replicated = all_rep;
        if ((rc = accel_em_dims(e, v, &c.out[i].rank, c.out[i].dims)) != PFVM_OK)
            return rc;
    }
    if (n->n_outputs && n->outputs[0] &&
        (rc = accel_em_on(e, &e->places[n->outputs[0]->id], n->outputs[0])) != PFVM_OK)
        return rc;
    if ((rc = accel_em_line(e, "# node %s (%s) -> %s", n->name, n->op_type,
                            n->n_outputs && n->outputs[0] ? e->places[n->outputs[0]->id].layout : "-")) != PFVM_OK ||
        (rc = n->op->accel(&c)) != PFVM_OK ||
        (rc = accel_em_line(e, "barrier")) != PFVM_OK)
        return rc;
    for (i = 0; i + 1 < (int)stbds_arrlen(e->scratch); i += 2)
        if ((rc = accel_em_release(e, e->scratch[i], e->scratch[i + 1])) != PFVM_OK)
            return rc;
    stbds_arrsetlen(e->scratch, 0);
    for (i = 0; i < n->n_inputs; i++) {
        const pfvm_value *v = n->inputs[i];
        accel_em_place *p = v ? &e->places[v->id] : NULL;
        if (p && p->placed && p->last_use == index) {
            if ((rc = accel_em_release(e, p->off, p->bytes)) != PFVM_OK)
                return rc;
            p->placed = 0;
        }
    }
    return PFVM_OK;
}

/* Undoes a failed try: its program text, its scratch and its outputs. */
static void accel_em_undo(accel_em_emitter *e, const pfvm_node *n, size_t mark, const char *on)
{
    int i;
    stbds_arrsetlen(e->text, mark);
    strcpy(e->on, on);
    for (i = 0; i + 1 < (int)stbds_arrlen(e->scratch); i += 2)
        accel_em_release(e, e->scratch[i], e->scratch[i + 1]);
    stbds_arrsetlen(e->scratch, 0);
    for (i = 0; i < n->n_outputs; i++) {
        accel_em_place *p = n->outputs[i] ? &e->places[n->outputs[i]->id] : NULL;
        if (p && p->placed) {
            accel_em_release(e, p->off, p->bytes);
            p->placed = 0;
        }
    }
}

/* A node whose lowering refuses its inputs split over the PEs runs whole
 * on PE 0 instead (the fallback; its gathers are in the program and the
 * report, so their cost is visible), when that fits. */
static pfvm_code accel_em_node(accel_em_emitter *e, const pfvm_node *n, int index, pfvm_accel_stats *stats)
{
    size_t mark = (size_t)stbds_arrlen(e->text);
    char on[sizeof e->on];
    int i, split = 0;
    pfvm_code rc;
    if (!n->op || !n->op->accel)
        return pfvm__fail(e->st, PFVM_ERR_UNSUPPORTED,
                          "node %s (%s): no accel lowering (the operator's definition in src/ops has no accel hook)",
                          n->name, n->op_type);
    if (n->n_inputs > PFVM_ACCEL_MAX_ARGS || n->n_outputs > PFVM_ACCEL_MAX_ARGS)
        return pfvm__fail(e->st, PFVM_ERR_UNSUPPORTED, "node %s (%s): too many inputs or outputs", n->name,
                          n->op_type);
    /* weights first, outside what a failed try undoes */
    for (i = 0; i < n->n_inputs; i++) {
        const pfvm_value *v = n->inputs[i];
        if (v && v->init && v->type.dtype == PFVM_FLOAT && !e->places[v->id].placed &&
            (rc = accel_em_weight(e, v)) != PFVM_OK)
            return rc;
    }
    mark = (size_t)stbds_arrlen(e->text);
    strcpy(on, e->on);
    rc = accel_em_node_try(e, n, index, 0);
    for (i = 0; i < n->n_inputs; i++)
        split |= n->inputs[i] && e->places[n->inputs[i]->id].placed && !e->places[n->inputs[i]->id].replicated &&
                 !e->places[n->inputs[i]->id].whole;
    if (rc == PFVM_ERR_UNSUPPORTED && split) {
        char first[256];
        pfvm__snprintf(first, sizeof first, "%s", e->st ? e->st->msg : "");
        accel_em_undo(e, n, mark, on);
        if ((rc = accel_em_node_try(e, n, index, 1)) != PFVM_OK) {
            pfvm__prefix(e->st, "%s; whole on PE 0", first);
            return rc;
        }
        if (stats)
            stats->fallbacks++;
    }
    if (rc != PFVM_OK)
        return rc;
    if (stats) {
        double fl = pfvm_node_flops(n, NULL);
        stats->nodes++;
        if (fl > 0)
            stats->flops += fl;
    }
    return PFVM_OK;
}

/* ==== the streamed plan (the scheduler for graphs whose tensors do not fit) ====
 *
 * Every value lives in the root level's memory (DRAM), row-major, at an
 * offset of its own (nothing is freed: the root memory is the large one);
 * each node is cut into tiles that fit one PE and run in waves over all
 * PEs (see pfvm_acl_streamed in src/ops/accel_lower.c). The emitter itself
 * streams element-wise nodes (chunks of the flat tensors), makes
 * reshapes views of their input, and runs any other node whole on PE 0
 * when its tensors fit there (reported as a fallback). */

static int64_t accel_em_numel(int rank, const int64_t *dims)
{
    int64_t n = 1;
    int i;
    for (i = 0; i < rank; i++)
        n *= dims[i];
    return n;
}

/* Room for v in the root memory. */
/* 1 when two initializers hold the same dtype, dims and bytes. */
static int accel_em_same_data(const pfvm_tensor *a, const pfvm_tensor *b)
{
    if (a == b)
        return a != NULL;
    if (!a || !b || a->kind != PFVM_KIND_TENSOR || b->kind != PFVM_KIND_TENSOR || !a->data || !b->data ||
        a->dtype != b->dtype || a->rank != b->rank || memcmp(a->dims, b->dims, (size_t)a->rank * sizeof *a->dims))
        return 0;
    return !memcmp(a->data, b->data, (size_t)pfvm_tensor_numel(a) * pfvm_dtype_size(a->dtype));
}

/* An initializer placed in the root memory that holds v's data, or NULL:
 * v then shares its bytes (no second `dweight`). */
static const pfvm_value *accel_em_placed_twin(const accel_em_emitter *e, const pfvm_value *v)
{
    int i;
    for (i = 0; i < pfvm_graph_num_initializers(e->g); i++) {
        const pfvm_value *u = pfvm_graph_initializer(e->g, i);
        if (u != v && e->places[u->id].placed && accel_em_same_data(u->init, v->init))
            return u;
    }
    return NULL;
}

static pfvm_code accel_em_dram(accel_em_emitter *e, const pfvm_value *v)
{
    accel_em_place *p = &e->places[v->id];
    int rank;
    int64_t dims[PFVM_MAX_RANK];
    pfvm_code rc;
    if ((rc = accel_em_dims(e, v, &rank, dims)) != PFVM_OK)
        return rc;
    p->elems = accel_em_numel(rank, dims);
    p->bytes = p->elems * 4;
    p->off = e->dram_top;
    e->dram_top += (p->bytes + 15) / 16 * 16;
    if (e->dram_top > e->t->levels[0].mem_bytes)
        return pfvm__fail(e->st, PFVM_ERR_NOMEM, "value %s: the %s's %lld bytes are full", v->name,
                          e->t->levels[0].name, (long long)e->t->levels[0].mem_bytes);
    p->placed = 1;
    pfvm__snprintf(p->layout, sizeof p->layout, "%s:%lld", e->t->levels[0].name, (long long)p->off);
    return PFVM_OK;
}

static void accel_em_pe_reset(accel_em_emitter *e)
{
    accel_em_hole whole;
    whole.off = 0;
    whole.size = e->t->levels[e->t->nlevels - 1].mem_bytes / 16 * 16 - e->keep_top;
    stbds_arrsetlen(e->holes, 0);
    stbds_arrsetlen(e->scratch, 0);
    pfvm__arrpush(e->holes, whole); /* cannot fail: the array had room for one */
}

/* A `load` of n contiguous elements into PEs first..last. */
static pfvm_code accel_em_load_flat(accel_em_emitter *e, int64_t first, int64_t last, int64_t d, int64_t a, int64_t n)
{
    return accel_em_line(e, "load %lld %lld %lld %lld 1 1 %lld 0 0 0 0", (long long)first, (long long)last,
                         (long long)d, (long long)a, (long long)n);
}

/* An element-wise node whose float inputs all have the output's shape or
 * one element: chunks of the flat tensors, one per PE and wave, computed
 * by the operator's own (resident) lowering on the chunk. */
typedef struct accel_em_ew {
    pfvm_accel_ctx c;
    int64_t chunk;
} accel_em_ew;

static int accel_em_ew_ok(const pfvm_node *n, const pfvm_accel_ctx *c)
{
    int64_t ny = accel_em_numel(c->out[0].rank, c->out[0].dims);
    int i;
    if ((n->op->fusion != PFVM_FUSE_ELEMENTWISE && n->op->fusion != PFVM_FUSE_BROADCAST) || c->n_out != 1)
        return 0;
    for (i = 0; i < c->n_in; i++) {
        int64_t ni;
        if (c->in[i].rank < 0)
            continue;
        ni = accel_em_numel(c->in[i].rank, c->in[i].dims);
        if (ni != 1 && (c->in[i].rank != c->out[0].rank ||
                        memcmp(c->in[i].dims, c->out[0].dims, (size_t)c->out[0].rank * sizeof(int64_t))))
            return 0;
    }
    return ny > 0;
}

static pfvm_code accel_em_stream_ew(accel_em_emitter *e, const pfvm_node *n, pfvm_accel_ctx *c)
{
    int64_t total = accel_em_numel(c->out[0].rank, c->out[0].dims), npes = c->pes, per, wave, i, big = 1, top = 0;
    int64_t simd = e->t->simd > 0 ? e->t->simd : 1;
    int j, nbig = 1;
    pfvm_accel_ctx r = *c;
    pfvm_code rc;
    for (j = 0; j < c->n_in; j++)
        if (c->in[j].rank >= 0 && accel_em_numel(c->in[j].rank, c->in[j].dims) != 1)
            nbig++;
    /* scalars first, on every PE that works */
    for (j = 0; j < c->n_in; j++)
        if (c->in[j].rank >= 0 && accel_em_numel(c->in[j].rank, c->in[j].dims) == 1) {
            r.in[j].off = top;
            r.in[j].elems = 1;
            r.in[j].replicated = 1;
            top += 16;
        }
    per = (total + npes - 1) / npes;
    per = (per + simd - 1) / simd * simd;
    big = (c->pe_mem - top) / nbig / 16 * 4; /* elements, 16-byte aligned */
    if (big < 1)
        return pfvm__fail(e->st, PFVM_ERR_NOMEM, "node %s (%s): not one element of each operand fits in a PE",
                          n->name, n->op_type);
    if (per > big)
        per = big;
    if (per > total)
        per = total;
    for (j = 0; j < c->n_in; j++)
        if (c->in[j].rank >= 0 && accel_em_numel(c->in[j].rank, c->in[j].dims) == 1 &&
            (rc = accel_em_load_flat(e, 0, (total + per - 1) / per < npes ? (total + per - 1) / per - 1 : npes - 1,
                                     r.in[j].off, c->in[j].dram, 1)) != PFVM_OK)
            return rc;
    for (j = 0; j < c->n_in; j++)
        if (c->in[j].rank >= 0 && accel_em_numel(c->in[j].rank, c->in[j].dims) != 1) {
            r.in[j].off = top;
            r.in[j].replicated = 1;
            top += (per * 4 + 15) / 16 * 16;
        }
    r.out[0].off = top;
    r.out[0].replicated = 1;
    r.stream = 0;
    r.post = NULL;
    c->post_done = c->post != NULL;
    for (wave = 0; wave < total; wave += npes * per) {
        int64_t end = wave + npes * per < total ? wave + npes * per : total, full = (end - wave) / per;
        int64_t tail = (end - wave) % per;
        for (i = 0; wave + i * per < end; i++)
            for (j = 0; j < c->n_in; j++)
                if (c->in[j].rank >= 0 && accel_em_numel(c->in[j].rank, c->in[j].dims) != 1 &&
                    (rc = accel_em_load_flat(e, i, i, r.in[j].off, c->in[j].dram + (wave + i * per) * 4,
                                             end - (wave + i * per) < per ? end - (wave + i * per) : per)) != PFVM_OK)
                    return rc;
        for (i = 0; i < 2; i++) {
            int64_t len = i ? tail : per, k;
            if (!len || (!i && !full))
                continue;
            for (j = 0; j < c->n_in; j++)
                if (c->in[j].rank >= 0 && accel_em_numel(c->in[j].rank, c->in[j].dims) != 1) {
                    r.in[j].rank = 1;
                    r.in[j].dims[0] = len;
                    r.in[j].elems = len;
                }
            r.out[0].rank = 1;
            r.out[0].dims[0] = len;
            r.out[0].elems = len;
            if (i)
                rc = accel_em_line(e, "on %lld %lld", (long long)full, (long long)full);
            else
                rc = accel_em_line(e, "on 0 %lld", (long long)(full - 1));
            if (rc != PFVM_OK || (rc = n->op->accel(&r)) != PFVM_OK ||
                (c->post && (rc = c->post(c, r.out[0].off, len)) != PFVM_OK))
                return rc;
            for (k = i ? full : 0; k < (i ? full + 1 : full); k++)
                if ((rc = accel_em_line(e, "store %lld %lld %lld 1 1 %lld 0 0 0 0", (long long)k,
                                        (long long)(c->out[0].dram + (wave + k * per) * 4), (long long)r.out[0].off,
                                        (long long)len)) != PFVM_OK)
                    return rc;
        }
        if ((rc = accel_em_line(e, "barrier")) != PFVM_OK)
            return rc;
    }
    strcpy(e->on, "");
    return PFVM_OK;
}

/* Places argument a whole on PE 0 (replicated layout) for the fallback. */
static pfvm_code accel_em_place_whole(accel_em_emitter *e, const pfvm_node *n, const pfvm_accel_ctx *c,
                                      const pfvm_accel_arg *a, pfvm_accel_arg *r)
{
    r->elems = accel_em_numel(a->rank, a->dims);
    r->replicated = 1;
    if ((r->off = accel_em_alloc(e, r->elems * 4)) < 0)
        return pfvm__fail(e->st, PFVM_ERR_NOMEM,
                          "node %s (%s): no streamed lowering, and its tensors do not fit whole in one %s (%lld "
                          "bytes)",
                          n->name, n->op_type, e->t->levels[e->t->nlevels - 1].name, (long long)c->pe_mem);
    return PFVM_OK;
}

/* Any other node: its inputs loaded whole onto PE 0, its lowering run
 * there, its outputs stored back (the streamed plan's fallback). */
static pfvm_code accel_em_stream_whole(accel_em_emitter *e, const pfvm_node *n, pfvm_accel_ctx *c)
{
    pfvm_accel_ctx r = *c;
    int j;
    pfvm_code rc;
    r.stream = 0;
    for (j = 0; j < c->n_in; j++) {
        if (c->in[j].rank < 0)
            continue;
        if ((rc = accel_em_place_whole(e, n, c, &c->in[j], &r.in[j])) != PFVM_OK)
            return rc;
        if ((rc = accel_em_load_flat(e, 0, 0, r.in[j].off, c->in[j].dram, r.in[j].elems)) != PFVM_OK)
            return rc;
    }
    for (j = 0; j < c->n_out; j++) {
        if (c->out[j].rank < 0)
            continue;
        if ((rc = accel_em_place_whole(e, n, c, &c->out[j], &r.out[j])) != PFVM_OK)
            return rc;
    }
    if ((rc = accel_em_line(e, "on 0 0")) != PFVM_OK || (rc = n->op->accel(&r)) != PFVM_OK)
        return rc;
    strcpy(e->on, "");
    for (j = 0; j < c->n_out; j++)
        if (c->out[j].rank >= 0 &&
            (rc = accel_em_line(e, "store 0 %lld %lld 1 1 %lld 0 0 0 0", (long long)c->out[j].dram,
                                (long long)r.out[j].off, (long long)r.out[j].elems)) != PFVM_OK)
            return rc;
    return accel_em_line(e, "barrier");
}

/* The target's links for the streamed lowerings' cost models. */
static void accel_em_links(const pfvm_accel_target *t, pfvm_accel_ctx *c)
{
    int k;
    c->nlinks = t->nlevels - 1 < 8 ? t->nlevels - 1 : 8;
    for (k = 0; k < c->nlinks; k++) {
        int j;
        c->link_pes[k] = 1;
        for (j = k + 2; j < t->nlevels; j++)
            c->link_pes[k] *= t->levels[j].fanout;
        c->link_down[k] = t->levels[k + 1].down;
        c->link_up[k] = t->levels[k + 1].up;
        c->link_bcast[k] = k + 2 < t->nlevels ? t->levels[k + 2].broadcast : 0;
    }
    c->macs = pfvm_accel_target_macs(t, PFVM_FLOAT);
    if (c->macs <= 0)
        c->macs = 1;
}

/* A dry run's emit: refuses a line that uses an offset of -1 (the
 * constant inputs accel_em_run_post does not place). */
static pfvm_code accel_em_discard(pfvm_accel_ctx *c, const char *fmt, ...)
{
    char line[1024];
    size_t n;
    va_list ap;
    va_start(ap, fmt);
    pfvm__vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    n = strlen(line);
    if (strstr(line, " -1 ") || (n >= 3 && !strcmp(line + n - 3, " -1")))
        return pfvm__fail(c->st, PFVM_ERR_UNSUPPORTED, "an unplaced operand");
    return PFVM_OK;
}

static int64_t accel_em_no_scratch(pfvm_accel_ctx *c, int64_t bytes)
{
    (void)c;
    (void)bytes;
    return -1;
}

/* Calls node r's resident hook on the in-place context rc, which emits
 * into e's program (or, when dry, only tries). */
static pfvm_code accel_em_call_resident(accel_em_emitter *e, const pfvm_node *r, pfvm_accel_ctx *rc, int dry)
{
    rc->simd = e->t->simd;
    rc->user = e;
    rc->emit = dry ? accel_em_discard : accel_em_ctx_emit;
    rc->scratch = accel_em_no_scratch;
    rc->st = e->st;
    return r->op->accel(rc);
}

/* Runs element-wise node r's resident hook in place on n elements at PE
 * byte offset off (emitting, or only trying when dry). */
static pfvm_code accel_em_run_post(accel_em_emitter *e, const pfvm_node *r, int64_t off, int64_t n, int dry)
{
    pfvm_accel_ctx rc;
    int i;
    memset(&rc, 0, sizeof rc);
    rc.node = r;
    rc.n_in = r->n_inputs;
    rc.n_out = 1;
    for (i = 0; i < r->n_inputs; i++) {
        rc.in[i].rank = -1; /* constants: read from the node by the hook, never placed */
        rc.in[i].off = -1;
        rc.in[i].elems = -1;
    }
    rc.in[0].rank = 1;
    rc.in[0].dims[0] = n;
    rc.in[0].off = off;
    rc.in[0].elems = n;
    rc.in[0].replicated = 1;
    rc.out[0] = rc.in[0];
    return accel_em_call_resident(e, r, &rc, dry);
}

static pfvm_code accel_em_post_emit(pfvm_accel_ctx *c, int64_t off, int64_t n)
{
    accel_em_emitter *e = (accel_em_emitter *)c->user;
    return accel_em_run_post(e, e->post_node, off, n, 0);
}

/* The only node reading value v (once), or NULL (none, several, or v a
 * graph output). */
static const pfvm_node *accel_em_consumer(const pfvm_graph *g, const pfvm_value *v)
{
    const pfvm_node *r = NULL;
    int i, j;
    for (i = 0; i < pfvm_graph_num_outputs(g); i++)
        if (pfvm_graph_output(g, i) == v)
            return NULL;
    for (i = 0; i < pfvm_graph_num_nodes(g); i++) {
        const pfvm_node *u = pfvm_graph_node(g, i);
        for (j = 0; j < u->n_inputs; j++)
            if (u->inputs[j] == v) {
                if (r)
                    return NULL;
                r = u;
            }
    }
    return r;
}

/* Runs the two-input element-wise node r's resident hook in place on n
 * elements at PE byte offset off (its input vi), the other input's at
 * roff (emitting, or only trying when dry). */
static pfvm_code accel_em_run_res(accel_em_emitter *e, const pfvm_node *r, int vi, int64_t off, int64_t roff,
                                  int64_t n, int dry)
{
    pfvm_accel_ctx rc;
    int i;
    memset(&rc, 0, sizeof rc);
    rc.node = r;
    rc.n_in = 2;
    rc.n_out = 1;
    for (i = 0; i < 2; i++) {
        rc.in[i].rank = 1;
        rc.in[i].dims[0] = n;
        rc.in[i].off = i == vi ? off : roff;
        rc.in[i].elems = n;
        rc.in[i].replicated = 1;
    }
    rc.out[0] = rc.in[vi];
    return accel_em_call_resident(e, r, &rc, dry);
}

static pfvm_code accel_em_res_emit(pfvm_accel_ctx *c, int64_t off, int64_t roff, int64_t n)
{
    accel_em_emitter *e = (accel_em_emitter *)c->user;
    return accel_em_run_res(e, e->res_node, e->res_vi, off, roff, n, 0);
}

/* Node n's float output's single consumer when that is a lowered
 * element-wise or broadcasting op of two inputs and one output; *vi: which
 * of its inputs n's output is. NULL otherwise. */
static const pfvm_node *accel_em_binary_consumer(accel_em_emitter *e, const pfvm_node *n, int *vi)
{
    const pfvm_value *v;
    const pfvm_node *r;
    if (n->n_outputs != 1 || !(v = n->outputs[0]) || v->type.dtype != PFVM_FLOAT ||
        !(r = accel_em_consumer(e->g, v)) || !r->op || !r->op->accel ||
        (r->op->fusion != PFVM_FUSE_ELEMENTWISE && r->op->fusion != PFVM_FUSE_BROADCAST) || r->n_inputs != 2 ||
        r->n_outputs != 1 || !r->outputs[0] || !r->inputs[0] || !r->inputs[1])
        return NULL;
    *vi = r->inputs[0] == v ? 0 : 1;
    return r;
}

/* The consumer n's producer may apply to its output tiles beside a second
 * activation (pfvm_accel_ctx.res: a residual Add): the single consumer of
 * n's only output, an element-wise operator of two inputs of the output's
 * shape whose other input is already in the root memory and whose
 * resident hook lowers it in place without scratch memory; NULL if none.
 * Sets e->res_vi and c->res_dram. */
static const pfvm_node *accel_em_residual(accel_em_emitter *e, const pfvm_node *n, pfvm_accel_ctx *c)
{
    const pfvm_value *v, *o;
    const pfvm_node *r;
    pfvm_status quiet, *keep = e->st;
    int64_t vd[PFVM_MAX_RANK], od[PFVM_MAX_RANK], yd[PFVM_MAX_RANK];
    int vr, orank, yr, vi;
    pfvm_code rc;
    if (!(r = accel_em_binary_consumer(e, n, &vi)))
        return NULL;
    v = n->outputs[0];
    o = r->inputs[1 - vi];
    if (o == v || o->init || o->type.dtype != PFVM_FLOAT || !e->places[o->id].placed ||
        r->outputs[0]->type.dtype != PFVM_FLOAT)
        return NULL;
    e->st = &quiet;
    rc = accel_em_dims(e, v, &vr, vd);
    if (rc == PFVM_OK)
        rc = accel_em_dims(e, o, &orank, od);
    if (rc == PFVM_OK)
        rc = accel_em_dims(e, r->outputs[0], &yr, yd);
    if (rc == PFVM_OK && (vr != orank || vr != yr || memcmp(vd, od, (size_t)vr * sizeof *vd) ||
                          memcmp(vd, yd, (size_t)vr * sizeof *vd)))
        rc = PFVM_ERR_UNSUPPORTED;
    if (rc == PFVM_OK)
        rc = accel_em_run_res(e, r, vi, 0, 16, 4, 1);
    e->st = keep;
    if (rc != PFVM_OK)
        return NULL;
    e->res_vi = vi;
    c->res_dram = e->places[o->id].off;
    return r;
}

/* Runs the two-input node r's resident hook in place on a tile of rows x
 * cols at PE byte offset off (its input vi), the constant vector's cols
 * elements at voff (emitting, or only trying when dry). */
static pfvm_code accel_em_run_vec(accel_em_emitter *e, const pfvm_node *r, int vi, int64_t off, int64_t voff,
                                  int64_t rows, int64_t cols, int dry)
{
    pfvm_accel_ctx rc;
    memset(&rc, 0, sizeof rc);
    rc.node = r;
    rc.n_in = 2;
    rc.n_out = 1;
    rc.in[vi].rank = 2;
    rc.in[vi].dims[0] = rows;
    rc.in[vi].dims[1] = cols;
    rc.in[vi].off = off;
    rc.in[vi].elems = rows * cols;
    rc.in[vi].replicated = 1;
    rc.in[1 - vi].rank = 1;
    rc.in[1 - vi].dims[0] = cols;
    rc.in[1 - vi].off = voff;
    rc.in[1 - vi].elems = cols;
    rc.in[1 - vi].replicated = 1;
    rc.out[0] = rc.in[vi];
    return accel_em_call_resident(e, r, &rc, dry);
}

static pfvm_code accel_em_vec_emit(pfvm_accel_ctx *c, int64_t off, int64_t voff, int64_t rows, int64_t cols)
{
    accel_em_emitter *e = (accel_em_emitter *)c->user;
    return accel_em_run_vec(e, e->vec_node, e->vec_vi, off, voff, rows, cols, 0);
}

/* v's rank and dims where y has the same (both known, rank at least 1),
 * asked quietly: 0 where not (a consumer that does not fit is no error). */
static int accel_em_same_dims(accel_em_emitter *e, const pfvm_value *v, const pfvm_value *y, int *rank, int64_t *dims)
{
    pfvm_status quiet, *keep = e->st;
    int64_t yd[PFVM_MAX_RANK];
    int yr = 0;
    pfvm_code rc;
    e->st = &quiet;
    rc = accel_em_dims(e, v, rank, dims);
    if (rc == PFVM_OK)
        rc = accel_em_dims(e, y, &yr, yd);
    e->st = keep;
    return rc == PFVM_OK && *rank >= 1 && *rank == yr && !memcmp(dims, yd, (size_t)yr * sizeof *yd);
}

/* The consumer n's producer may apply to its output tiles with a constant
 * vector along the last axis (pfvm_accel_ctx.vec: a bias Add): the single
 * consumer of n's only output, an element-wise operator of two inputs
 * whose other input is a float initializer of the last dim's elements
 * (its other dims 1), whose output has n's output's shape and whose
 * resident hook lowers it in place without scratch memory; NULL if none.
 * Puts the vector in the root memory; sets e->vec_vi and c->vec_dram. */
static const pfvm_node *accel_em_vector(accel_em_emitter *e, const pfvm_node *n, pfvm_accel_ctx *c)
{
    const pfvm_value *v, *o;
    const pfvm_node *r;
    pfvm_status quiet, *keep = e->st;
    int64_t vd[PFVM_MAX_RANK], last;
    int vr, vi, i;
    pfvm_code rc;
    if (!(r = accel_em_binary_consumer(e, n, &vi)))
        return NULL;
    v = n->outputs[0];
    o = r->inputs[1 - vi];
    if (o == v || !o->init || o->init->dtype != PFVM_FLOAT || r->outputs[0]->type.dtype != PFVM_FLOAT)
        return NULL;
    if (!accel_em_same_dims(e, v, r->outputs[0], &vr, vd))
        return NULL;
    last = vd[vr - 1];
    if (o->init->rank > vr || pfvm_tensor_numel(o->init) != last || last < 1)
        return NULL;
    for (i = 0; i + 1 < o->init->rank; i++)
        if (o->init->dims[i] != 1)
            return NULL;
    e->st = &quiet;
    rc = accel_em_run_vec(e, r, vi, 0, 64, 2, 4, 1);
    e->st = keep;
    if (rc != PFVM_OK)
        return NULL;
    if (!e->places[o->id].placed) {
        if (strpbrk(o->name, " \t#") || !o->name[0])
            return NULL;
        if (accel_em_dram(e, o) != PFVM_OK ||
            accel_em_line(e, "dweight %s %lld", o->name, (long long)e->places[o->id].off) != PFVM_OK)
            return NULL;
    }
    e->vec_vi = vi;
    c->vec_dram = e->places[o->id].off;
    return r;
}

/* The row consumer's temporaries: taken in turn from row_at. */
static int64_t accel_em_row_scratch(pfvm_accel_ctx *c, int64_t bytes)
{
    accel_em_emitter *e = (accel_em_emitter *)c->user;
    int64_t off = e->row_at;
    e->row_at += (bytes + 15) / 16 * 16;
    return off;
}

/* Runs row consumer r's resident hook in place on a tile of rows x cols at
 * PE byte offset off, its constant rows (inputs 1...) at par_off, par_off
 * + cols * 4..., its temporaries from tmp_off (emitting, or only trying
 * when dry); *tmp: the temporaries' bytes. */
static pfvm_code accel_em_run_row(accel_em_emitter *e, const pfvm_node *r, int64_t off, int64_t rows, int64_t cols,
                                  int64_t par_off, int64_t tmp_off, int dry, int64_t *tmp)
{
    pfvm_accel_ctx rc;
    pfvm_code code;
    int i, k = 0;
    memset(&rc, 0, sizeof rc);
    rc.node = r;
    rc.n_in = r->n_inputs;
    rc.n_out = 1;
    for (i = 0; i < r->n_inputs; i++) {
        pfvm_accel_arg *a = &rc.in[i];
        a->rank = -1, a->off = -1, a->elems = -1;
        if (!r->inputs[i])
            continue;
        a->replicated = 1;
        if (i == 0) {
            a->rank = 2, a->dims[0] = rows, a->dims[1] = cols, a->off = off, a->elems = rows * cols;
        } else {
            a->rank = 1, a->dims[0] = cols, a->off = par_off + 4 * cols * k++, a->elems = cols;
        }
    }
    rc.out[0] = rc.in[0];
    rc.simd = e->t->simd;
    rc.user = e;
    rc.emit = dry ? accel_em_discard : accel_em_ctx_emit;
    rc.scratch = accel_em_row_scratch;
    rc.st = e->st;
    e->row_at = tmp_off;
    code = r->op->accel(&rc);
    *tmp = e->row_at - tmp_off;
    return code;
}

static pfvm_code accel_em_row_emit(pfvm_accel_ctx *c, int64_t off, int64_t rows, int64_t par_off, int64_t tmp_off)
{
    accel_em_emitter *e = (accel_em_emitter *)c->user;
    int64_t tmp;
    return accel_em_run_row(e, e->row_node, off, rows, c->row_cols, par_off, tmp_off, 0, &tmp);
}

static int64_t accel_em_row_tmp(pfvm_accel_ctx *c, int64_t rows)
{
    accel_em_emitter *e = (accel_em_emitter *)c->user;
    pfvm_status quiet, *keep = e->st;
    int64_t tmp = 0;
    pfvm_code rc;
    e->st = &quiet;
    rc = accel_em_run_row(e, e->row_node, 0, rows, c->row_cols, 0, 0, 1, &tmp);
    e->st = keep;
    return rc == PFVM_OK ? tmp : -1;
}

/* The PE cycles of the row consumer on a tile of rows x row_cols, as the
 * simulator counts them: its lines run on a one-PE copy of the target
 * (after a phase that fills the memory), so that a tiling weighs the
 * consumer's compute exactly; -1 when it does not lower. */
static double accel_em_row_cycles(pfvm_accel_ctx *c, int64_t rows)
{
    accel_em_emitter *e = (accel_em_emitter *)c->user;
    pfvm_status quiet, *keep = e->st;
    size_t mark = (size_t)stbds_arrlen(e->text), len;
    int64_t cols = c->row_cols, par = (rows * cols * 4 + 15) / 16 * 16, toff, tmp = 0;
    pfvm_accel_target one = *e->t;
    pfvm_accel_sim *s = NULL;
    char *prog = NULL, head[160];
    double cyc = -1;
    int hl;
    pfvm_code rc;
    toff = par + (c->row_par * cols * 4 + 15) / 16 * 16;
    e->st = &quiet;
    rc = accel_em_run_row(e, e->row_node, 0, rows, cols, par, toff, 0, &tmp);
    len = (size_t)stbds_arrlen(e->text) - mark;
    one.nlevels = 2;
    one.levels[1] = e->t->levels[e->t->nlevels - 1];
    one.levels[1].fanout = 1;
    hl = pfvm__snprintf(head, sizeof head, "program %s\nfill 0 1 %lld\nbarrier\n", one.name,
                        (long long)((toff + tmp) / 4));
    if (rc == PFVM_OK && (toff + tmp) <= one.levels[1].mem_bytes && (prog = (char *)pfvm__malloc(len + (size_t)hl + 16))) {
        memcpy(prog, head, (size_t)hl);
        memcpy(prog + hl, e->text + mark, len);
        strcpy(prog + hl + len, "barrier\n");
        if ((s = pfvm_accel_sim_new(&one, &quiet)) && pfvm_accel_sim_run(s, prog, NULL, 0, NULL, NULL, &quiet) == PFVM_OK)
            cyc = pfvm_accel_sim_phase_cycles(s, 1);
    }
    stbds_arrsetlen(e->text, mark);
    pfvm_accel_sim_free(s);
    pfvm__free(prog);
    e->st = keep;
    return cyc;
}

/* The row consumer a node's tiles may apply to value v, the value they
 * leave (pfvm_accel_ctx.row): v's single reader, a reduction-kind
 * operator (LayerNormalization) whose output 0 alone is used and has v's
 * shape, whose other inputs are float initializers of v's last dim's
 * elements (at most two) and whose resident hook lowers a tile of whole
 * rows in place (tried on two rows); NULL if none. Puts the constant
 * rows in the root memory; sets c->row_cols, row_par and row_dram. */
static const pfvm_node *accel_em_row(accel_em_emitter *e, const pfvm_value *v, pfvm_accel_ctx *c)
{
    const pfvm_node *r;
    pfvm_status quiet, *keep = e->st;
    int64_t vd[PFVM_MAX_RANK], cols, tmp;
    int vr, i, k = 0;
    pfvm_code rc;
    if (!v || v->type.dtype != PFVM_FLOAT || !(r = accel_em_consumer(e->g, v)) || !r->op || !r->op->accel ||
        r->op->fusion != PFVM_FUSE_REDUCTION || r->inputs[0] != v || r->n_inputs > 3 || !r->outputs[0] ||
        r->outputs[0]->type.dtype != PFVM_FLOAT)
        return NULL;
    for (i = 1; i < r->n_outputs; i++)
        if (r->outputs[i])
            return NULL;
    if (!accel_em_same_dims(e, v, r->outputs[0], &vr, vd) || vd[vr - 1] < 1)
        return NULL;
    cols = vd[vr - 1];
    for (i = 1; i < r->n_inputs; i++) {
        const pfvm_value *o = r->inputs[i];
        int j;
        if (!o)
            continue;
        if (!o->init || o->init->dtype != PFVM_FLOAT || pfvm_tensor_numel(o->init) != cols || strpbrk(o->name, " \t#") ||
            !o->name[0])
            return NULL;
        for (j = 0; j + 1 < o->init->rank; j++)
            if (o->init->dims[j] != 1)
                return NULL;
    }
    e->st = &quiet;
    rc = accel_em_run_row(e, r, 0, 2, cols, 2 * cols * 4, 4 * cols * 4, 1, &tmp);
    e->st = keep;
    if (rc != PFVM_OK)
        return NULL;
    for (i = 1; i < r->n_inputs; i++) {
        const pfvm_value *o = r->inputs[i];
        if (!o)
            continue;
        if (!e->places[o->id].placed && !e->naive && accel_em_placed_twin(e, o))
            e->places[o->id] = e->places[accel_em_placed_twin(e, o)->id]; /* an equal weight's bytes */
        if (!e->places[o->id].placed &&
            (accel_em_dram(e, o) != PFVM_OK ||
             accel_em_line(e, "dweight %s %lld", o->name, (long long)e->places[o->id].off) != PFVM_OK))
            return NULL;
        c->row_dram[k++] = e->places[o->id].off;
    }
    c->row_par = k;
    c->row_cols = cols;
    return r;
}

/* The consumer n's producer may apply to its output tiles: the single
 * consumer of n's only output (not a graph output), an element-wise
 * operator whose other inputs are constants and whose resident hook
 * lowers it in place without scratch memory; NULL if none. */
static const pfvm_node *accel_em_post(accel_em_emitter *e, const pfvm_node *n)
{
    const pfvm_value *v;
    const pfvm_node *r;
    pfvm_status quiet;
    int j;
    if (n->n_outputs != 1 || !(v = n->outputs[0]) || v->type.dtype != PFVM_FLOAT)
        return NULL;
    r = accel_em_consumer(e->g, v);
    if (!r || !r->op || !r->op->accel ||
        (r->op->fusion != PFVM_FUSE_ELEMENTWISE && r->op->fusion != PFVM_FUSE_BROADCAST) || r->n_outputs != 1 ||
        r->inputs[0] != v || r->n_inputs > PFVM_ACCEL_MAX_ARGS)
        return NULL;
    for (j = 1; j < r->n_inputs; j++)
        if (r->inputs[j] && (!r->inputs[j]->init || pfvm_tensor_numel(r->inputs[j]->init) != 1))
            return NULL;
    {
        pfvm_status *keep = e->st;
        pfvm_code rc;
        e->st = &quiet;
        rc = accel_em_run_post(e, r, 0, 4, 1);
        e->st = keep;
        return rc == PFVM_OK ? r : NULL;
    }
}

/* Frees the kept weights' regions (accel_em_keep). */
static void accel_em_keep_free(accel_em_emitter *e)
{
    size_t k;
    for (k = 0; k < (size_t)stbds_arrlen(e->keeps); k++)
        pfvm__free(e->keeps[k].tag);
    stbds_arrfree(e->keeps);
    pfvm__free(e->keep_pend);
    e->keeps = NULL;
    e->keep_pend = NULL;
    e->keep_top = 0;
    e->keep_cur = -1;
}

/* Nodes reading an initializer that holds `data`'s bytes (any input). */
static int accel_em_readers(const accel_em_emitter *e, const pfvm_tensor *data)
{
    int i, j, n = 0;
    for (i = 0; i < pfvm_graph_num_nodes(e->g); i++) {
        const pfvm_node *nd = pfvm_graph_node(e->g, i);
        for (j = 0; j < nd->n_inputs; j++)
            if (nd->inputs[j] && nd->inputs[j]->init && accel_em_same_data(nd->inputs[j]->init, data)) {
                n++;
                break;
            }
    }
    return n;
}

/* The current node's tags start again from the kept ones. */
static void accel_em_keep_reset(accel_em_emitter *e, const pfvm_accel_ctx *c)
{
    if (e->keep_cur >= 0 && e->keep_pend && c->keep_tag == e->keep_pend)
        memcpy(e->keep_pend, e->keeps[e->keep_cur].tag, (size_t)pfvm_accel_target_pes(e->t) * sizeof *e->keep_pend);
}

/* The current node is lowered: its tags are kept. */
static void accel_em_keep_commit(accel_em_emitter *e)
{
    if (e->keep_cur >= 0)
        memcpy(e->keeps[e->keep_cur].tag, e->keep_pend, (size_t)pfvm_accel_target_pes(e->t) * sizeof *e->keep_pend);
    e->keep_cur = -1;
}

/* The streamed plan's kept weights: each matrix (rank 2 or more) whose
 * bytes two or more nodes read gets a region at the top of every PE, a
 * share of a quarter of the PE's memory (at most its own size), which
 * every node's pe_mem leaves out; a hook loads its tiles of the weight
 * there once and later readers find them (pfvm_accel_ctx.keep_dram). A
 * graph without such weights keeps the whole PE for its nodes. */
static pfvm_code accel_em_keep_plan(accel_em_emitter *e)
{
    int i;
    size_t k, nk;
    int64_t mem = e->t->levels[e->t->nlevels - 1].mem_bytes / 16 * 16, pes = pfvm_accel_target_pes(e->t), each, top;
    accel_em_keep_free(e);
    if (e->naive)
        return PFVM_OK;
    for (i = 0; i < pfvm_graph_num_initializers(e->g); i++) {
        const pfvm_tensor *d = pfvm_graph_initializer(e->g, i)->init;
        accel_em_keep kp;
        if (!d || d->kind != PFVM_KIND_TENSOR || d->dtype != PFVM_FLOAT || d->rank < 2)
            continue;
        for (k = 0; k < (size_t)stbds_arrlen(e->keeps) && !accel_em_same_data(e->keeps[k].data, d); k++)
            ;
        if (k < (size_t)stbds_arrlen(e->keeps) || accel_em_readers(e, d) < 2)
            continue;
        memset(&kp, 0, sizeof kp);
        kp.data = d;
        kp.readers = accel_em_readers(e, d);
        kp.bytes = (pfvm_tensor_numel(d) * 4 + 15) / 16 * 16;
        if (!pfvm__arrpush(e->keeps, kp))
            return pfvm__fail(e->st, PFVM_ERR_NOMEM, "accel: out of memory");
    }
    nk = (size_t)stbds_arrlen(e->keeps);
    each = nk ? mem / 4 / (int64_t)nk / 16 * 16 : 0;
    for (top = mem, k = 0; k < nk; k++) {
        accel_em_keep *kp = &e->keeps[k];
        int64_t p, r = kp->data->dims[kp->data->rank - 2], cl = kp->data->dims[kp->data->rank - 1];
        kp->bytes = kp->bytes < each ? kp->bytes : each;
        /* a share that cannot hold four rows or columns of the matrix
         * (either orientation) would only shrink the other nodes' tiles */
        if (kp->bytes < (int64_t)pfvm_tensor_numel(kp->data) * 4 && kp->bytes < 16 * (r > cl ? r : cl))
            kp->bytes = 0;
        top -= kp->bytes;
        kp->off = top;
        if (!(kp->tag = (int64_t *)pfvm__malloc((size_t)pes * sizeof *kp->tag)))
            return pfvm__fail(e->st, PFVM_ERR_NOMEM, "accel: out of memory");
        for (p = 0; p < pes; p++)
            kp->tag[p] = -1;
    }
    e->keep_top = mem - top;
    if (nk && !(e->keep_pend = (int64_t *)pfvm__malloc((size_t)pes * sizeof *e->keep_pend)))
        return pfvm__fail(e->st, PFVM_ERR_NOMEM, "accel: out of memory");
    return PFVM_OK;
}

/* Points c at the region of the kept weight node n reads, if any: the
 * hook sets tags in a copy (keep_pend), which each try of a lowering
 * starts from the kept tags (accel_em_stream_try) and the node's lowering
 * keeps (accel_em_keep_commit), so that a try whose lines are dropped
 * leaves no tags behind. */
static void accel_em_keep_args(accel_em_emitter *e, const pfvm_node *n, pfvm_accel_ctx *c)
{
    int i;
    size_t k;
    e->keep_cur = -1;
    for (i = 0; i < n->n_inputs; i++) {
        const pfvm_value *v = n->inputs[i];
        if (!v || !v->init || !e->places[v->id].placed)
            continue;
        for (k = 0; k < (size_t)stbds_arrlen(e->keeps); k++)
            if (e->keeps[k].bytes > 0 && accel_em_same_data(e->keeps[k].data, v->init)) {
                c->keep_dram = e->places[v->id].off;
                c->keep_off = e->keeps[k].off;
                c->keep_bytes = e->keeps[k].bytes;
                c->keep_tag = e->keep_pend;
                c->keep_readers = e->keeps[k].readers;
                e->keeps[k].used = 1;
                e->keep_cur = (int)k;
                return;
            }
    }
}

/* Runs streamed lowering f; when it does not lower this case
 * (PFVM_ERR_UNSUPPORTED) whatever it emitted is dropped, so that the
 * caller can try the next plan. */
static pfvm_code accel_em_stream_try(accel_em_emitter *e, pfvm_accel_ctx *c, pfvm_accel_fn f)
{
    size_t mark = (size_t)stbds_arrlen(e->text);
    pfvm_code rc;
    c->pe_used = 0;
    c->post_done = 0;
    accel_em_keep_reset(e, c);
    rc = f(c);
    if (rc != PFVM_OK)
        accel_em_keep_reset(e, c);
    if (rc == PFVM_ERR_UNSUPPORTED) {
        stbds_arrsetlen(e->text, mark);
        c->post_done = 0;
        return rc;
    }
    if (c->pe_used > e->peak)
        e->peak = c->pe_used;
    return rc;
}

/* Fills c's args for streamed node n: its inputs' and outputs' dims, the
 * inputs' root offsets (weights placed there, by `dweight` lines, on
 * their first use); pending (a chain's input, not in the root memory)
 * gets its dims only, at offset -1. */
static pfvm_code accel_em_stream_args(accel_em_emitter *e, const pfvm_node *n, pfvm_accel_ctx *c,
                                      const pfvm_value *pending)
{
    int i;
    pfvm_code rc;
    for (i = 0; i < n->n_inputs; i++) {
        const pfvm_value *v = n->inputs[i];
        accel_em_place *p;
        char shape[128];
        c->in[i].rank = -1;
        if (!v || (v->init && v->type.dtype != PFVM_FLOAT))
            continue;
        if (v == pending) {
            c->in[i].dram = c->in[i].off = -1;
            if ((rc = accel_em_dims(e, v, &c->in[i].rank, c->in[i].dims)) != PFVM_OK)
                return rc;
            continue;
        }
        p = &e->places[v->id];
        if (!p->placed && v->init && !e->naive && accel_em_placed_twin(e, v))
            *p = e->places[accel_em_placed_twin(e, v)->id]; /* an equal weight's bytes */
        if (!p->placed && v->init) {
            if (strpbrk(v->name, " \t#") || !v->name[0])
                return pfvm__fail(e->st, PFVM_ERR_UNSUPPORTED, "initializer '%s': a name with spaces or '#'",
                                  v->name);
            accel_em_shape_text(v, shape, sizeof shape);
            if ((rc = accel_em_dram(e, v)) != PFVM_OK ||
                (rc = accel_em_line(e, "dweight %s %lld", v->name, (long long)p->off)) != PFVM_OK)
                return rc;
        }
        if (!p->placed)
            return pfvm__fail(e->st, PFVM_ERR_INVALID, "node %s (%s): input %s is not computed before it", n->name,
                              n->op_type, v->name);
        if ((rc = accel_em_dims(e, v, &c->in[i].rank, c->in[i].dims)) != PFVM_OK)
            return rc;
        c->in[i].dram = p->off;
        c->in[i].off = -1;
        c->in[i].vrank = p->vrank;
        memcpy(c->in[i].vdims, p->vdims, sizeof p->vdims);
        memcpy(c->in[i].vstr, p->vstr, sizeof p->vstr);
        c->in[i].vscale = p->vscale;
    }
    for (i = 0; i < n->n_outputs; i++) {
        const pfvm_value *v = n->outputs[i];
        c->out[i].rank = -1;
        if (!v)
            continue;
        if ((rc = accel_em_dims(e, v, &c->out[i].rank, c->out[i].dims)) != PFVM_OK)
            return rc;
    }
    return PFVM_OK;
}

static pfvm_code accel_em_chain_post_emit(pfvm_accel_ctx *c, int64_t off, int64_t n)
{
    accel_em_emitter *e = (accel_em_emitter *)c->user;
    return accel_em_run_post(e, e->chain_post[c == &e->chain[0] ? 0 : 1], off, n, 0);
}

/* The value a node's tiles leave when they apply its activation p (or
 * none): p's output, else the node's. */
static const pfvm_value *accel_em_after(const pfvm_node *n, const pfvm_node *p)
{
    return p ? p->outputs[0] : n->outputs[0];
}

/* Collects into e->chain the nodes n's lowering may run in its tiles
 * (pfvm_accel_ctx.chain): up to 2 single consumers in a row, each past
 * the activation its producer applies, each with an accel hook and one
 * output. Returns how many. */
static int accel_em_chain_collect(accel_em_emitter *e, const pfvm_node *n, const pfvm_node **post,
                                  const pfvm_value **vals)
{
    const pfvm_node *cur = n, *pc = *post;
    int k;
    for (k = 0; k < 2; k++) {
        const pfvm_value *v = accel_em_after(cur, pc);
        const pfvm_node *r = accel_em_consumer(e->g, v);
        if (!r || !r->op || !r->op->accel || r->n_outputs != 1 || !r->outputs[0] || r->inputs[0] != v ||
            r->outputs[0]->type.dtype != PFVM_FLOAT || r->n_inputs > PFVM_ACCEL_MAX_ARGS)
            break;
        vals[k] = v;
        e->chain[k].node = r;
        e->chain_post[k] = accel_em_post(e, r);
        cur = r;
        pc = e->chain_post[k];
    }
    return k;
}

/* Marks every value the chain of n computed in its tiles (n's output, the
 * chain nodes', their activations' and the residual consumer's) as a view
 * of the stored one, *last. */
static void accel_em_chain_mark(accel_em_emitter *e, const pfvm_node *n, const pfvm_node *post, int k,
                                const pfvm_node *res, const accel_em_place *last)
{
    const pfvm_value *vs[7];
    int nv = 0, i;
    vs[nv++] = n->outputs[0];
    if (post)
        vs[nv++] = post->outputs[0];
    for (i = 0; i < k; i++) {
        vs[nv++] = e->chain[i].node->outputs[0];
        if (e->chain_post[i])
            vs[nv++] = e->chain_post[i]->outputs[0];
    }
    if (res)
        vs[nv++] = res->outputs[0];
    for (i = 0; i < nv; i++) {
        accel_em_place *p = &e->places[vs[i]->id];
        *p = *last;
        p->chained = 1;
        p->activated = 0;
    }
}

/* Streamed node n with the k nodes after it (e->chain, their inputs
 * vals; post: n's activation) run in its tiles by its lowering f
 * (pfvm_accel_ctx.chain), their intermediate values never in the root
 * memory; PFVM_ERR_UNSUPPORTED (and nothing emitted or placed) when f
 * does not run them. */
static pfvm_code accel_em_chain_k(accel_em_emitter *e, const pfvm_node *n, pfvm_accel_ctx *c, pfvm_accel_fn f,
                                  pfvm_accel_stats *stats, int k, const pfvm_value *const *vals, const pfvm_node *post)
{
    size_t mark = (size_t)stbds_arrlen(e->text);
    int64_t top = e->dram_top;
    const pfvm_value *last;
    const pfvm_node *res;
    pfvm_status quiet, *keep = e->st;
    int i, ok = 0;
    int64_t placed_ids[2 * PFVM_ACCEL_MAX_ARGS + 1];
    int nplaced = 0;
    pfvm_code rc = PFVM_OK;
    e->st = &quiet;
    for (i = 0; i < k && rc == PFVM_OK; i++) {
        pfvm_accel_ctx *ch = &e->chain[i];
        const pfvm_node *r = ch->node;
        int j;
        memset(ch, 0, sizeof *ch);
        ch->node = r;
        ch->n_in = r->n_inputs;
        ch->n_out = 1;
        ch->user = e;
        ch->st = &quiet;
        ch->post = e->chain_post[i] ? accel_em_chain_post_emit : NULL;
        for (j = 0; j < r->n_inputs; j++)
            if (r->inputs[j] && r->inputs[j]->init && !e->places[r->inputs[j]->id].placed)
                placed_ids[nplaced++] = r->inputs[j]->id;
        rc = accel_em_stream_args(e, r, ch, vals[i]);
    }
    res = rc == PFVM_OK ? accel_em_residual(e, e->chain[k - 1].node, c) : NULL;
    if (res && accel_em_post(e, res))
        res = NULL; /* the chain applies no activation after the residual consumer */
    last = res ? res->outputs[0] : accel_em_after(e->chain[k - 1].node, e->chain_post[k - 1]);
    if (rc == PFVM_OK && (rc = accel_em_dram(e, last)) == PFVM_OK) {
        e->chain[k - 1].out[0].dram = e->places[last->id].off;
        rc = accel_em_line(e, "# node %s (%s) -> %s", n->name, n->op_type, e->places[last->id].layout);
    }
    if (rc == PFVM_OK) {
        strcpy(e->on, "");
        e->post_node = post;
        e->res_node = res;
        c->post = post ? accel_em_post_emit : NULL;
        c->res = res ? accel_em_res_emit : NULL;
        c->res_done = 0;
        c->chain = e->chain;
        c->n_chain = k;
        c->chain_done = 0;
        rc = accel_em_stream_try(e, c, f);
        ok = rc == PFVM_OK && c->chain_done && (!res || c->res_done) && (!post || c->post_done);
    }
    e->st = keep;
    c->chain = NULL;
    c->n_chain = 0;
    c->res = NULL;
    e->res_node = NULL;
    if (!ok) {
        stbds_arrsetlen(e->text, mark);
        e->dram_top = top;
        e->places[last->id].placed = 0;
        for (i = 0; i < nplaced; i++)
            e->places[placed_ids[i]].placed = 0;
        return PFVM_ERR_UNSUPPORTED; /* the node's own lowering reports what is wrong, if anything */
    }
    accel_em_chain_mark(e, n, post, k, res, &e->places[last->id]);
    if (stats)
        for (i = 0; i < k; i++) {
            double fl = pfvm_node_flops(e->chain[i].node, NULL);
            if (fl > 0)
                stats->flops += fl;
        }
    return PFVM_OK;
}

/* The chain of n (accel_em_chain_collect) run by n's lowering f, its two
 * nodes or else the first one alone; PFVM_ERR_UNSUPPORTED when f runs
 * neither. */
static pfvm_code accel_em_chain(accel_em_emitter *e, const pfvm_node *n, pfvm_accel_ctx *c, pfvm_accel_fn f,
                                pfvm_accel_stats *stats)
{
    const pfvm_value *vals[2];
    const pfvm_node *post = accel_em_post(e, n);
    int k;
    pfvm_code rc = PFVM_ERR_UNSUPPORTED;
    if (n->n_outputs != 1 || !n->outputs[0])
        return rc;
    for (k = accel_em_chain_collect(e, n, &post, vals); k >= 1 && rc == PFVM_ERR_UNSUPPORTED; k--)
        rc = accel_em_chain_k(e, n, c, f, stats, k, vals, post);
    return rc;
}

/* Shapes of node r's inputs and output as accel args (for
 * pfvm_acl_input_part); 0 when one is not a static float tensor. */
static int accel_em_part_args(accel_em_emitter *e, const pfvm_node *r, pfvm_accel_arg *in, pfvm_accel_arg *out)
{
    pfvm_status quiet, *keep = e->st;
    int j, ok = r->n_inputs <= PFVM_ACCEL_MAX_ARGS && r->n_outputs == 1 && r->outputs[0];
    memset(in, 0, PFVM_ACCEL_MAX_ARGS * sizeof *in);
    memset(out, 0, sizeof *out);
    e->st = &quiet;
    for (j = 0; ok && j < r->n_inputs; j++)
        ok = r->inputs[j] && accel_em_dims(e, r->inputs[j], &in[j].rank, in[j].dims) == PFVM_OK;
    ok = ok && accel_em_dims(e, r->outputs[0], &out->rank, out->dims) == PFVM_OK;
    e->st = keep;
    return ok;
}

/* Where in the root memory the streamed plan writes v, the output of a
 * node being lowered: by default a buffer of its own; but when v's only
 * consumer (past element-wise consumers of v alone, which are applied by
 * v's producer or else run in place: each tile loads its elements, then
 * stores them where it read them) takes it as a part of its output
 * (pfvm_acl_input_part: squeezenet's Concat of its expand Convs), in that
 * part of the consumer's output, placed now if it is not yet, so that the
 * consumer becomes a view (accel_em_part_view). */
static pfvm_code accel_em_dram_out(accel_em_emitter *e, const pfvm_value *v)
{
    const pfvm_value *u = v;
    int depth, j;
    if (e->ppart_on)
        return accel_em_dram(e, v); /* pooled from its own buffer into the pool's part */
    for (depth = 0; !e->naive && v->producer && depth < 4; depth++) {
        const pfvm_node *r = accel_em_consumer(e->g, u);
        pfvm_accel_arg in[PFVM_ACCEL_MAX_ARGS], out;
        int64_t off;
        if (!r || !r->op || r->n_outputs != 1 || !r->outputs[0] || !accel_em_part_args(e, r, in, &out))
            break;
        for (j = 0; j < r->n_inputs && r->inputs[j] != u; j++)
            ;
        if (pfvm_acl_input_part(r, in, r->n_inputs, &out, j, &off)) {
            accel_em_place *o = &e->places[r->outputs[0]->id], *p = &e->places[v->id];
            pfvm_code rc;
            if (!o->placed && (rc = accel_em_dram_out(e, r->outputs[0])) != PFVM_OK)
                return rc;
            if (o->whole || o->replicated || accel_em_numel(in[j].rank, in[j].dims) + off > o->elems)
                break;
            p->elems = accel_em_numel(in[j].rank, in[j].dims);
            p->bytes = p->elems * 4;
            p->off = o->off + off * 4;
            p->placed = 1;
            pfvm__snprintf(p->layout, sizeof p->layout, "%s:%lld", e->t->levels[0].name, (long long)p->off);
            return PFVM_OK;
        }
        /* an element-wise consumer of u alone (constant scalars aside) keeps the bytes where they are */
        if (j != 0 || !r->op->accel || r->op->fusion != PFVM_FUSE_ELEMENTWISE)
            break;
        for (j = 1; j < r->n_inputs; j++)
            if (r->inputs[j] && (!r->inputs[j]->init || pfvm_tensor_numel(r->inputs[j]->init) != 1))
                break;
        if (j < r->n_inputs || accel_em_numel(in[0].rank, in[0].dims) != accel_em_numel(out.rank, out.dims))
            break;
        u = r->outputs[0];
    }
    return accel_em_dram(e, v);
}

/* Whether node n's inputs are all where its output's parts are
 * (accel_em_dram_out), so that n writes nothing: a view. */
static int accel_em_part_view(accel_em_emitter *e, const pfvm_node *n)
{
    pfvm_accel_arg in[PFVM_ACCEL_MAX_ARGS], out;
    const accel_em_place *o;
    int j, k;
    if (e->naive || !accel_em_part_args(e, n, in, &out) || !(o = &e->places[n->outputs[0]->id])->placed)
        return 0;
    for (j = 0; j < n->n_inputs; j++) {
        int64_t off;
        const accel_em_place *p = &e->places[n->inputs[j]->id];
        for (k = 0; k < j; k++)
            if (n->inputs[k] == n->inputs[j])
                return 0;
        if (!pfvm_acl_input_part(n, in, n->n_inputs, &out, j, &off) || !p->placed || p->whole || p->replicated ||
            p->off != o->off + off * 4)
            return 0;
    }
    return 1;
}

/* Whether value v, a strided view (its map in view, its scale in
 * view->vscale), is read through that map by its one reader past
 * reshapes (views keeping the row-major index) and scalings by a
 * constant (pfvm_acl_view_scale, each a view too: their factors
 * multiplied into the reader's input): pfvm_acl_view_reader (a strided
 * copy, Gemm or MatMul). */
static int accel_em_view_read(accel_em_emitter *e, const pfvm_value *v, pfvm_accel_arg view)
{
    pfvm_accel_arg in[PFVM_ACCEL_MAX_ARGS], out;
    int depth, i, j;
    for (depth = 0; depth < 5; depth++) {
        const pfvm_node *r = accel_em_consumer(e->g, v);
        pfvm_status quiet, *keep = e->st;
        int ok = 1;
        if (!r || !r->op || r->n_outputs != 1 || !r->outputs[0] || r->n_inputs > PFVM_ACCEL_MAX_ARGS)
            return 0;
        for (j = -1, i = 0; i < r->n_inputs; i++)
            if (r->inputs[i] == v) {
                if (j >= 0)
                    return 0;
                j = i;
            }
        if (j < 0)
            return 0;
        memset(in, 0, sizeof in);
        memset(&out, 0, sizeof out);
        e->st = &quiet; /* shapes only */
        for (i = 0; ok && i < r->n_inputs; i++) {
            in[i].rank = -1;
            if (r->inputs[i] && (!r->inputs[i]->init || r->inputs[i]->type.dtype == PFVM_FLOAT))
                ok = accel_em_dims(e, r->inputs[i], &in[i].rank, in[i].dims) == PFVM_OK;
        }
        ok = ok && accel_em_dims(e, r->outputs[0], &out.rank, out.dims) == PFVM_OK;
        e->st = keep;
        if (!ok)
            return 0;
        if (j == 0 && r->op->fusion == PFVM_FUSE_INJECTIVE && (r->op->flags & PFVM_OP_IN_PLACE) &&
            accel_em_numel(in[0].rank, in[0].dims) == accel_em_numel(out.rank, out.dims)) {
            v = r->outputs[0]; /* a reshape: the same row-major index */
            continue;
        }
        {
            double k;
            if (pfvm_acl_view_scale(r, in, r->n_inputs, &out, j, &k)) {
                view.vscale = (view.vscale != 0 ? view.vscale : 1) * k;
                v = r->outputs[0]; /* x * constant: the same index, scaled */
                continue;
            }
        }
        view.rank = in[j].rank;
        memcpy(view.dims, in[j].dims, sizeof view.dims);
        in[j] = view;
        return pfvm_acl_view_reader(r, in, r->n_inputs, &out, j);
    }
    return 0;
}

/* Whether the streamed node n (args c) need not run: its output is a
 * strided view of its input (pfvm_acl_view_of: a Slice or Transpose, of a
 * row-major tensor or of another such view) that its reader reads
 * through the view's map (accel_em_view_read; the TransformerEncoder's
 * Slice -> Reshape -> Transpose of Q, K and V, the Transposes before its
 * attention MatMuls, the queries' through their Div, and before its
 * out_proj Gemm). Then n's output is placed as that view. */
static int accel_em_strided_view(accel_em_emitter *e, const pfvm_node *n, const pfvm_accel_ctx *c)
{
    pfvm_accel_arg view;
    const pfvm_value *v = n->outputs[0];
    const accel_em_place *x = &e->places[n->inputs[0]->id];
    accel_em_place *p;
    int64_t base;
    if (e->naive || n->n_outputs != 1 || !v || c->in[0].rank < 1 || c->out[0].rank < 1 ||
        !pfvm_acl_view_of(n, c->in, c->n_in, &c->out[0], &view, &base))
        return 0;
    view.vscale = 0;
    if ((x->vrank > 0 && x->vscale != 0 && x->vscale != 1) || !accel_em_view_read(e, v, view))
        return 0;
    p = &e->places[n->outputs[0]->id];
    *p = *x;
    p->last_use = 0;
    p->activated = 0;
    p->off = x->off + base * 4;
    p->elems = accel_em_numel(c->out[0].rank, c->out[0].dims);
    p->bytes = p->elems * 4;
    p->vrank = view.vrank;
    memcpy(p->vdims, view.vdims, sizeof p->vdims);
    memcpy(p->vstr, view.vstr, sizeof p->vstr);
    p->vscale = 0;
    pfvm__snprintf(p->layout, sizeof p->layout, "%s:%lld strided", e->t->levels[0].name, (long long)p->off);
    return 1;
}

/* Whether the streamed node n (args c) need not run: an input is a
 * strided view and its output that view times a constant
 * (pfvm_acl_view_scale), read by its reader through the map
 * (accel_em_view_read, the check that made its input a view). */
static int accel_em_scaled_view(accel_em_emitter *e, const pfvm_node *n, const pfvm_accel_ctx *c)
{
    pfvm_accel_arg view;
    const accel_em_place *x;
    accel_em_place *p;
    double k;
    int i = c->n_in == 2 && c->in[1].rank >= 0 && c->in[1].vrank > 0;
    if (e->naive || n->n_outputs != 1 || !n->outputs[0] || n->n_inputs != 2 || !n->inputs[i] ||
        c->in[i].vrank < 1 || c->out[0].rank < 0 || !pfvm_acl_view_scale(n, c->in, c->n_in, &c->out[0], i, &k))
        return 0;
    x = &e->places[n->inputs[i]->id];
    view = c->out[0];
    view.vrank = x->vrank;
    memcpy(view.vdims, x->vdims, sizeof view.vdims);
    memcpy(view.vstr, x->vstr, sizeof view.vstr);
    view.vscale = (x->vscale != 0 ? x->vscale : 1) * k;
    if (!accel_em_view_read(e, n->outputs[0], view))
        return 0;
    p = &e->places[n->outputs[0]->id];
    *p = *x;
    p->last_use = 0;
    p->activated = 0;
    p->vscale = view.vscale;
    pfvm__snprintf(p->layout, sizeof p->layout, "%s:%lld strided, scaled by %.9g", e->t->levels[0].name,
                   (long long)p->off, view.vscale);
    return 1;
}

/* Whether one of c's inputs is a strided view (only its reader's own
 * streamed lowering reads it). */
static int accel_em_reads_view(const pfvm_accel_ctx *c)
{
    int i;
    for (i = 0; i < c->n_in; i++)
        if (c->in[i].rank >= 0 && c->in[i].vrank > 0)
            return 1;
    return 0;
}

/* Whether node n's output, past its activation post, is a part of a
 * node r's output (pfvm_acl_input_part: squeezenet's Concat of its expand
 * Convs) that r's single consumer q computes alone (pfvm_acl_part_through:
 * the MaxPool after the Concat), every input of r being the output of
 * a streamed node of its own (each runs q on its part, so that r and q
 * are views); then *pp says where. */
static int accel_em_ppart_find(accel_em_emitter *e, const pfvm_node *n, const pfvm_node *post, accel_em_ppart *pp)
{
    pfvm_accel_arg in[PFVM_ACCEL_MAX_ARGS], out, qin[PFVM_ACCEL_MAX_ARGS], qout;
    const pfvm_value *v = accel_em_after(n, post);
    const pfvm_node *r = accel_em_consumer(e->g, v), *q;
    int64_t off;
    int i, j = -1, k;
    if (!r || !r->op || r->n_outputs != 1 || !r->outputs[0] || !accel_em_part_args(e, r, in, &out))
        return 0;
    for (i = 0; i < r->n_inputs; i++) {
        const pfvm_value *x = r->inputs[i];
        const pfvm_node *p = x ? x->producer : NULL;
        if (p && p->n_inputs >= 1 && p->inputs[0] && p->inputs[0]->producer &&
            accel_em_post(e, p->inputs[0]->producer) == p)
            p = p->inputs[0]->producer; /* x is the activation its producer applies */
        for (k = 0; k < i; k++)
            if (r->inputs[k] == x)
                return 0;
        if (!p || x->init || p->n_outputs != 1 || !p->op || !pfvm_acl_streamed(p->op) ||
            accel_em_consumer(e->g, x) != r || accel_em_after(p, accel_em_post(e, p)) != x)
            return 0;
        if (x == v)
            j = i;
    }
    if (j < 0 || !pfvm_acl_input_part(r, in, r->n_inputs, &out, j, &off))
        return 0;
    q = accel_em_consumer(e->g, r->outputs[0]);
    if (!q || !q->op || q->n_outputs != 1 || !q->outputs[0] || q->inputs[0] != r->outputs[0] ||
        !accel_em_part_args(e, q, qin, &qout))
        return 0;
    if (!pfvm_acl_part_through(q, &qin[0], &qout, off, accel_em_numel(in[j].rank, in[j].dims), &pp->pin, &pp->pout,
                               &pp->qoff))
        return 0;
    pp->r = r, pp->q = q, pp->qpost = accel_em_post(e, q);
    pp->qall = accel_em_numel(qout.rank, qout.dims);
    return 1;
}

/* Marks the values of a pooled Concat (r's, q's and its activation's
 * outputs; n's and its activation's when n ran q in its tiles) as views
 * of the pool's stored output; adds q's flops on the part to stats. */
static void accel_em_ppart_mark(accel_em_emitter *e, const pfvm_node *n, const pfvm_node *post,
                                const accel_em_ppart *pp, pfvm_accel_stats *stats)
{
    const pfvm_value *vs[5];
    accel_em_place last = e->places[accel_em_after(pp->q, pp->qpost)->id];
    int nv = 0, i;
    vs[nv++] = pp->r->outputs[0];
    vs[nv++] = pp->q->outputs[0];
    if (pp->qpost)
        vs[nv++] = pp->qpost->outputs[0];
    if (n) {
        vs[nv++] = n->outputs[0];
        if (post)
            vs[nv++] = post->outputs[0];
    }
    for (i = 0; i < nv; i++) {
        accel_em_place *p = &e->places[vs[i]->id];
        *p = last;
        p->chained = 1;
        p->activated = 0;
    }
    if (stats) {
        double fl = pfvm_node_flops(pp->q, NULL);
        if (fl > 0 && pp->qall > 0)
            stats->flops += fl * (double)accel_em_numel(pp->pout.rank, pp->pout.dims) / (double)pp->qall;
    }
}

/* The pool's args on the part (accel_em_ppart_find) into ch, its output
 * placed (once, by the first part). */
static pfvm_code accel_em_ppart_args(accel_em_emitter *e, const accel_em_ppart *pp, pfvm_accel_ctx *ch)
{
    const pfvm_value *last = accel_em_after(pp->q, pp->qpost);
    pfvm_code rc;
    if (!e->places[last->id].placed && (rc = accel_em_dram(e, last)) != PFVM_OK)
        return rc;
    ch->node = pp->q;
    ch->n_in = pp->q->n_inputs;
    ch->n_out = 1;
    if ((rc = accel_em_stream_args(e, pp->q, ch, pp->q->inputs[0])) != PFVM_OK)
        return rc;
    ch->in[0] = pp->pin;
    ch->in[0].dram = ch->in[0].off = -1;
    ch->out[0] = pp->pout;
    ch->out[0].dram = e->places[last->id].off + pp->qoff * 4;
    ch->out[0].off = -1;
    return PFVM_OK;
}

/* Streamed node n (args c, lowering f) whose output is a pooled part
 * (accel_em_ppart_find): the pool run in n's tiles on its part
 * (pfvm_accel_ctx.chain), storing the pooled part into the pool's
 * output, so that neither n's output nor the Concat's goes to the root
 * memory; PFVM_ERR_UNSUPPORTED (nothing emitted) when f does not. */
static pfvm_code accel_em_ppart_fused(accel_em_emitter *e, const pfvm_node *n, pfvm_accel_ctx *c, pfvm_accel_fn f,
                                      const accel_em_ppart *pp, pfvm_accel_stats *stats)
{
    const pfvm_node *post = accel_em_post(e, n);
    pfvm_accel_ctx *ch = &e->chain[0];
    pfvm_status quiet, *keep = e->st;
    size_t mark;
    int ok = 0;
    pfvm_code rc;
    memset(ch, 0, sizeof *ch);
    ch->user = e;
    ch->st = &quiet;
    e->chain_post[0] = pp->qpost;
    ch->post = pp->qpost ? accel_em_chain_post_emit : NULL;
    if ((rc = accel_em_ppart_args(e, pp, ch)) != PFVM_OK)
        return rc;
    mark = (size_t)stbds_arrlen(e->text);
    if ((rc = accel_em_line(e, "# node %s (%s) -> %s (pooled by %s into its part)", n->name, n->op_type,
                            e->places[accel_em_after(pp->q, pp->qpost)->id].layout, pp->q->name)) != PFVM_OK)
        return rc;
    e->st = &quiet;
    strcpy(e->on, "");
    e->post_node = post;
    c->post = post ? accel_em_post_emit : NULL;
    c->res = NULL;
    c->chain = e->chain;
    c->n_chain = 1;
    c->chain_done = 0;
    rc = accel_em_stream_try(e, c, f);
    ok = rc == PFVM_OK && c->chain_done && (!post || c->post_done);
    e->st = keep;
    c->chain = NULL;
    c->n_chain = 0;
    if (!ok) {
        stbds_arrsetlen(e->text, mark);
        c->post = NULL;
        c->post_done = 0;
        return PFVM_ERR_UNSUPPORTED;
    }
    accel_em_ppart_mark(e, n, post, pp, stats);
    return PFVM_OK;
}

/* After node n wrote its pooled part to a buffer of its own (its
 * lowering did not run the pool, accel_em_ppart_fused): the pool's
 * streamed lowering on that part, into the pool's output. */
static pfvm_code accel_em_ppart_alone(accel_em_emitter *e, const pfvm_node *n, const pfvm_accel_ctx *c,
                                      const accel_em_ppart *pp, pfvm_accel_stats *stats)
{
    const accel_em_place *x = &e->places[n->outputs[0]->id];
    pfvm_accel_fn f = pfvm_acl_streamed(pp->q->op);
    pfvm_accel_ctx qc = *c;
    pfvm_code rc;
    if (accel_em_post(e, n) && !x->activated)
        return pfvm__fail(e->st, PFVM_ERR_UNSUPPORTED,
                          "node %s (%s): its part of %s is pooled by %s, but its activation was not applied", n->name,
                          n->op_type, pp->r->name, pp->q->name);
    memset(qc.in, 0, sizeof qc.in);
    memset(qc.out, 0, sizeof qc.out);
    qc.post = NULL, qc.res = NULL, qc.vec = NULL, qc.chain = NULL, qc.n_chain = 0;
    qc.post_done = qc.res_done = qc.vec_done = qc.chain_done = 0;
    if ((rc = accel_em_ppart_args(e, pp, &qc)) != PFVM_OK)
        return rc;
    qc.in[0].dram = x->off;
    if ((rc = accel_em_line(e, "# node %s (%s) on the part of %s -> %s", pp->q->name, pp->q->op_type, n->name,
                            e->places[accel_em_after(pp->q, pp->qpost)->id].layout)) != PFVM_OK)
        return rc;
    strcpy(e->on, "");
    accel_em_pe_reset(e);
    e->post_node = pp->qpost;
    qc.post = pp->qpost ? accel_em_post_emit : NULL;
    rc = f ? accel_em_stream_try(e, &qc, f) : PFVM_ERR_UNSUPPORTED;
    if (rc == PFVM_OK && pp->qpost && !qc.post_done)
        rc = PFVM_ERR_UNSUPPORTED;
    if (rc == PFVM_ERR_UNSUPPORTED)
        return pfvm__fail(e->st, rc, "node %s (%s): no streamed lowering of it on the part of %s", pp->q->name,
                          pp->q->op_type, n->name);
    if (rc == PFVM_OK)
        accel_em_ppart_mark(e, NULL, NULL, pp, stats);
    return rc;
}

/* Lowers node n by f with the row consumer of v, the value its tiles
 * leave after the residual and element-wise consumers set in c (each then
 * a view, as the row consumer: n's output marked with how many are
 * applied); PFVM_OK when f applied them all, else its lines are dropped
 * and c left without the row consumer for a try without it. */
static pfvm_code accel_em_with_row(accel_em_emitter *e, const pfvm_node *n, pfvm_accel_ctx *c, pfvm_accel_fn f,
                                   const pfvm_value *v)
{
    size_t mark;
    pfvm_code rc;
    if (!(e->row_node = accel_em_row(e, v, c)))
        return PFVM_ERR_UNSUPPORTED;
    c->row = accel_em_row_emit;
    c->row_tmp = accel_em_row_tmp;
    c->row_cycles = accel_em_row_cycles;
    c->res_done = c->row_done = c->post_done = 0;
    mark = (size_t)stbds_arrlen(e->text);
    rc = accel_em_stream_try(e, c, f);
    if (rc == PFVM_OK && (!c->res || c->res_done) && c->row_done && (!c->post || c->post_done))
        e->places[n->outputs[0]->id].activated = (c->res != NULL) + (c->post != NULL) + 1;
    else {
        stbds_arrsetlen(e->text, mark);
        rc = PFVM_ERR_UNSUPPORTED;
    }
    c->row = NULL;
    c->row_tmp = NULL;
    c->row_cycles = NULL;
    c->row_done = 0;
    e->row_node = NULL;
    return rc;
}

static pfvm_code accel_em_stream_node(accel_em_emitter *e, const pfvm_node *n, pfvm_accel_stats *stats)
{
    pfvm_accel_ctx c;
    pfvm_accel_fn f;
    int i;
    pfvm_code rc;
    if (!n->op || !n->op->accel)
        return pfvm__fail(e->st, PFVM_ERR_UNSUPPORTED,
                          "node %s (%s): no accel lowering (the operator's definition in src/ops has no accel hook)",
                          n->name, n->op_type);
    if (n->n_inputs > PFVM_ACCEL_MAX_ARGS || n->n_outputs > PFVM_ACCEL_MAX_ARGS)
        return pfvm__fail(e->st, PFVM_ERR_UNSUPPORTED, "node %s (%s): too many inputs or outputs", n->name,
                          n->op_type);
    memset(&c, 0, sizeof c);
    c.node = n;
    c.n_in = n->n_inputs;
    c.n_out = n->n_outputs;
    c.simd = e->t->simd;
    c.user = e;
    c.emit = accel_em_ctx_emit;
    c.scratch = accel_em_ctx_scratch;
    c.st = e->st;
    c.stream = 1;
    c.pes = pfvm_accel_target_pes(e->t);
    c.pe_mem = e->t->levels[e->t->nlevels - 1].mem_bytes / 16 * 16 - e->keep_top;
    accel_em_links(e->t, &c);
    accel_em_pe_reset(e);
    if (n->n_outputs == 1 && n->outputs[0] && e->places[n->outputs[0]->id].chained)
        return accel_em_line(e, "# view %s (%s) -> %s (run in the tiles of a chain)", n->name, n->op_type,
                             e->places[n->outputs[0]->id].layout);
    if ((rc = accel_em_stream_args(e, n, &c, NULL)) != PFVM_OK)
        return rc;
    accel_em_keep_args(e, n, &c);
    /* a consumer its input's producer applied: a view of that input */
    for (i = 0; n->n_outputs == 1 && n->outputs[0] && i < n->n_inputs; i++)
        if (n->inputs[i] && e->places[n->inputs[i]->id].activated) {
            accel_em_place *p = &e->places[n->outputs[0]->id];
            *p = e->places[n->inputs[i]->id];
            p->last_use = 0;
            p->activated = p->activated - 1;
            return accel_em_line(e, "# view %s (%s) -> %s (applied by its input's producer)", n->name, n->op_type,
                                 p->layout);
        }
    /* a reshape keeps the bytes: its output is a view of its input */
    if (n->op->fusion == PFVM_FUSE_INJECTIVE && (n->op->flags & PFVM_OP_IN_PLACE) && c.n_out == 1 &&
        c.in[0].rank >= 0 && c.out[0].rank >= 0 &&
        accel_em_numel(c.in[0].rank, c.in[0].dims) == accel_em_numel(c.out[0].rank, c.out[0].dims)) {
        accel_em_place *p = &e->places[n->outputs[0]->id];
        *p = e->places[n->inputs[0]->id];
        p->last_use = 0;
        return accel_em_line(e, "# view %s (%s) -> %s", n->name, n->op_type, p->layout);
    }
    if (accel_em_part_view(e, n))
        return accel_em_line(e, "# view %s (%s) -> %s (its inputs were written into their parts)", n->name,
                             n->op_type, e->places[n->outputs[0]->id].layout);
    if (accel_em_strided_view(e, n, &c))
        return accel_em_line(e, "# view %s (%s) -> %s (read through its reader's strided map)", n->name, n->op_type,
                             e->places[n->outputs[0]->id].layout);
    if (accel_em_scaled_view(e, n, &c))
        return accel_em_line(e, "# view %s (%s) -> %s (its factor applied by its reader)", n->name, n->op_type,
                             e->places[n->outputs[0]->id].layout);
    f = pfvm_acl_streamed(n->op);
    e->ppart_on = 0;
    if (f && !e->naive && n->n_outputs == 1 && accel_em_ppart_find(e, n, accel_em_post(e, n), &e->ppart)) {
        if ((rc = accel_em_ppart_fused(e, n, &c, f, &e->ppart, stats)) == PFVM_OK)
            goto lowered;
        if (rc != PFVM_ERR_UNSUPPORTED)
            return rc;
        e->ppart_on = 1; /* n alone into a buffer of its own, then the pool on it (accel_em_ppart_alone) */
    }
    if (f && !e->naive && !e->ppart_on && (rc = accel_em_chain(e, n, &c, f, stats)) == PFVM_OK)
        goto lowered;
    for (i = 0; i < n->n_outputs; i++)
        if (c.out[i].rank >= 0) {
            if ((rc = (n->n_outputs == 1 ? accel_em_dram_out : accel_em_dram)(e, n->outputs[i])) != PFVM_OK)
                return rc;
            c.out[i].dram = e->places[n->outputs[i]->id].off;
            c.out[i].off = -1;
        }
    if ((rc = accel_em_line(e, "# node %s (%s) -> %s", n->name, n->op_type,
                            c.n_out && c.out[0].rank >= 0 ? e->places[n->outputs[0]->id].layout : "-")) != PFVM_OK)
        return rc;
    strcpy(e->on, "");
    if (e->naive && c.n_out && c.out[0].rank >= 1 && c.out[0].dims[0] < c.pes)
        c.pes = c.out[0].dims[0] > 1 ? c.out[0].dims[0] : 1;
    rc = PFVM_ERR_UNSUPPORTED;
    e->vec_node = !e->naive ? accel_em_vector(e, n, &c) : NULL;
    if (e->vec_node) {
        /* the lowering (its own, else the rows stream) applies the vector
         * consumer, then that one's residual (own lowerings only) or
         * element-wise consumer (and the residual's); if it does not, it
         * runs again without */
        size_t mark = (size_t)stbds_arrlen(e->text);
        e->res_node = f ? accel_em_residual(e, e->vec_node, &c) : NULL;
        e->post_node = accel_em_post(e, e->res_node ? e->res_node : e->vec_node);
        c.vec = accel_em_vec_emit;
        c.res = e->res_node ? accel_em_res_emit : NULL;
        c.post = e->post_node ? accel_em_post_emit : NULL;
        c.vec_done = c.res_done = 0;
        rc = f ? accel_em_stream_try(e, &c, f) : PFVM_ERR_UNSUPPORTED;
        if (rc == PFVM_ERR_UNSUPPORTED && !c.res && !accel_em_reads_view(&c)) {
            c.vec_done = 0;
            rc = accel_em_stream_try(e, &c, pfvm_acl_stream_rows);
        }
        if (rc == PFVM_OK && c.vec_done && (!c.res || c.res_done)) {
            e->places[n->outputs[0]->id].activated = 1 + (c.res != NULL) + (c.post && c.post_done);
            goto lowered;
        }
        stbds_arrsetlen(e->text, mark);
        c.vec = NULL;
        c.res = NULL;
        c.post = NULL;
        c.vec_done = c.res_done = 0;
        e->vec_node = e->res_node = e->post_node = NULL;
        rc = PFVM_ERR_UNSUPPORTED;
    }
    e->res_node = f && !e->naive ? accel_em_residual(e, n, &c) : NULL;
    if (e->res_node) {
        /* the lowering applies the residual consumer (and that one's
         * consumer); if it does not, it runs again without */
        size_t mark;
        e->post_node = accel_em_post(e, e->res_node);
        c.post = e->post_node ? accel_em_post_emit : NULL;
        c.res = accel_em_res_emit;
        /* first with the row consumer of what the tiles leave (a
         * LayerNorm after the residual), then without */
        if ((rc = accel_em_with_row(e, n, &c, f, accel_em_after(e->res_node, e->post_node))) == PFVM_OK)
            goto lowered;
        mark = (size_t)stbds_arrlen(e->text);
        c.res_done = 0;
        rc = accel_em_stream_try(e, &c, f);
        if (rc == PFVM_OK && c.res_done) {
            e->places[n->outputs[0]->id].activated = c.post && c.post_done ? 2 : 1;
            goto lowered;
        }
        stbds_arrsetlen(e->text, mark);
        c.res = NULL;
        c.res_done = 0;
        e->res_node = NULL;
        rc = PFVM_ERR_UNSUPPORTED;
    }
    e->post_node = e->naive ? NULL : accel_em_post(e, n);
    c.post = e->post_node ? accel_em_post_emit : NULL;
    /* first with the row consumer of what the tiles leave (a Softmax
     * after the attention scores' MatMul), then without */
    if (f && !e->naive && n->n_outputs == 1 &&
        (rc = accel_em_with_row(e, n, &c, f, accel_em_after(n, e->post_node))) == PFVM_OK)
        goto lowered;
    rc = PFVM_ERR_UNSUPPORTED;
    if (f)
        rc = accel_em_stream_try(e, &c, f);
    if (rc == PFVM_ERR_UNSUPPORTED && accel_em_reads_view(&c))
        return pfvm__fail(e->st, PFVM_ERR_UNSUPPORTED,
                          "node %s (%s): an input is a strided view, but its streamed lowering failed", n->name,
                          n->op_type);
    if (rc == PFVM_ERR_UNSUPPORTED)
        rc = accel_em_stream_try(e, &c, pfvm_acl_stream_rows);
    if (rc == PFVM_ERR_UNSUPPORTED && accel_em_ew_ok(n, &c))
        rc = accel_em_stream_ew(e, n, &c);
    if (rc == PFVM_ERR_UNSUPPORTED) {
        c.post_done = 0;
        rc = accel_em_stream_whole(e, n, &c);
        if (rc == PFVM_OK && stats)
            stats->fallbacks++;
    }
    if (rc == PFVM_OK && c.post && c.post_done)
        e->places[n->outputs[0]->id].activated = 1;
lowered:
    if (rc == PFVM_OK)
        accel_em_keep_commit(e);
    if (rc == PFVM_OK && e->ppart_on)
        rc = accel_em_ppart_alone(e, n, &c, &e->ppart, stats);
    e->ppart_on = 0;
    if (rc == PFVM_OK && stats) {
        double fl = pfvm_node_flops(n, NULL);
        stats->nodes++;
        if (fl > 0)
            stats->flops += fl;
    }
    return rc;
}

/* 1 when initializer i holds the same dtype, dims and bytes as an earlier
 * placed one: a model that shares a weight between layers (ONNX Identity
 * nodes, folded into copies) needs its bytes brought in once, so the
 * traffic bound counts them once (pfvm_accel_stats.weight_distinct_bytes).
 * An earlier one counts when placed (streamed) or given bytes (resident). */
static int accel_em_weight_repeats(const accel_em_emitter *e, int i, int streamed)
{
    const pfvm_graph *g = e->g;
    int j;
    for (j = 0; j < i; j++) {
        const pfvm_value *w = pfvm_graph_initializer(g, j);
        if ((streamed ? e->places[w->id].placed : e->places[w->id].bytes != 0) &&
            accel_em_same_data(w->init, pfvm_graph_initializer(g, i)->init))
            return 1;
    }
    return 0;
}

/* The streamed plan of the whole graph into e->text. */
static pfvm_code accel_em_stream(accel_em_emitter *e, pfvm_accel_stats *stats)
{
    pfvm_graph *g = e->g;
    int i;
    pfvm_code rc;
    stbds_arrsetlen(e->text, 0);
    memset(e->places, 0, ((size_t)stbds_arrlen(g->values) + 1) * sizeof *e->places);
    e->dram_top = 0;
    e->peak = 0;
    if ((rc = accel_em_keep_plan(e)) != PFVM_OK)
        return rc;
    if (stats) {
        int fb = 0;
        memset(stats, 0, sizeof *stats);
        stats->fallbacks = fb;
    }
    if ((rc = accel_em_line(e, "program %s", e->t->name)) != PFVM_OK)
        return rc;
    for (i = 0; i < pfvm_graph_num_inputs(g); i++) {
        pfvm_value *v = pfvm_graph_input(g, i);
        if (v->init)
            continue;
        if ((rc = accel_em_dram(e, v)) != PFVM_OK ||
            (rc = accel_em_line(e, "dinput %d %lld", i, (long long)e->places[v->id].off)) != PFVM_OK)
            return rc;
    }
    for (i = 0; i < pfvm_graph_num_nodes(g); i++)
        if ((rc = accel_em_stream_node(e, pfvm_graph_node(g, i), stats)) != PFVM_OK)
            return rc;
    for (i = 0; i < pfvm_graph_num_outputs(g); i++) {
        pfvm_value *v = pfvm_graph_output(g, i);
        char shape[128];
        if (!e->places[v->id].placed)
            return pfvm__fail(e->st, PFVM_ERR_UNSUPPORTED, "output %s: not computed on the PEs", v->name);
        accel_em_shape_text(v, shape, sizeof shape);
        if ((rc = accel_em_line(e, "doutput %d %lld %s", i, (long long)e->places[v->id].off, shape)) != PFVM_OK)
            return rc;
    }
    for (i = 0; i < (int)stbds_arrlen(e->keeps); i++) { /* the regions a hook loaded stay in use */
        int64_t p, pes = pfvm_accel_target_pes(e->t);
        for (p = 0; e->keeps[i].used && p < pes && e->keeps[i].tag[p] < 0; p++)
            ;
        if (e->keeps[i].used && p < pes && e->keeps[i].off + e->keeps[i].bytes > e->peak)
            e->peak = e->keeps[i].off + e->keeps[i].bytes;
    }
    if (stats) {
        stats->streamed = 1;
        stats->dram_bytes = e->dram_top;
        stats->pes_used = pfvm_accel_target_pes(e->t);
        for (i = 0; i < pfvm_graph_num_initializers(g); i++) {
            pfvm_value *v = pfvm_graph_initializer(g, i);
            if (e->places[v->id].placed) {
                stats->weight_bytes += e->places[v->id].bytes;
                if (!accel_em_weight_repeats(e, i, 1))
                    stats->weight_distinct_bytes += e->places[v->id].bytes;
            }
        }
    }
    return PFVM_OK;
}

/* e holds a resident plan with fallbacks (its stats in *resident): the
 * streamed plan replaces it when it has none (else e's text is restored). */
static pfvm_code accel_em_prefer_stream(accel_em_emitter *e, const pfvm_accel_stats *resident,
                                        pfvm_accel_stats *stats)
{
    char *keep = NULL;
    size_t n = (size_t)stbds_arrlen(e->text), np = ((size_t)stbds_arrlen(e->g->values) + 1) * sizeof *e->places;
    accel_em_place *places = (accel_em_place *)pfvm__malloc(np);
    int64_t peak = e->peak;
    pfvm_accel_stats streamed;
    pfvm_code rc;
    if (!places || !pfvm__arraddn(keep, n)) {
        pfvm__free(places);
        return pfvm__fail(e->st, PFVM_ERR_NOMEM, "accel: out of memory for the program text");
    }
    memcpy(keep, e->text, n);
    memcpy(places, e->places, np);
    rc = accel_em_stream(e, &streamed);
    if (rc == PFVM_OK && !streamed.fallbacks) {
        if (stats)
            *stats = streamed;
    } else if (rc == PFVM_OK || rc == PFVM_ERR_UNSUPPORTED || rc == PFVM_ERR_NOMEM) {
        stbds_arrsetlen(e->text, 0);
        if (!pfvm__arraddn(e->text, n))
            rc = pfvm__fail(e->st, PFVM_ERR_NOMEM, "accel: out of memory for the program text");
        else {
            memcpy(e->text, keep, n);
            memcpy(e->places, places, np);
            e->peak = peak;
            accel_em_keep_free(e); /* the resident plan keeps no regions */
            rc = PFVM_OK;
            if (stats)
                *stats = *resident;
        }
    }
    stbds_arrfree(keep);
    pfvm__free(places);
    return rc;
}

static pfvm_code accel_em_emit(pfvm_model *m, const pfvm_accel_target *t, int naive, char **program,
                               pfvm_accel_stats *stats, pfvm_status *st)
{
    accel_em_emitter e;
    pfvm_graph *g;
    accel_em_hole whole;
    pfvm_code rc = PFVM_OK;
    int i, j, nv, streamed = 0;
    pfvm_accel_stats resident;
    *program = NULL;
    memset(&resident, 0, sizeof resident);
    if (stats)
        memset(stats, 0, sizeof *stats);
    if (!m || !m->graph)
        return pfvm__fail(st, PFVM_ERR_INVALID, "accel: no model");
    if ((rc = pfvm_optimize(m, "fold,compose,dce", NULL, st)) != PFVM_OK || (rc = pfvm_graph_toposort(m->graph, st)) != PFVM_OK ||
        (rc = pfvm_infer_shapes(m->graph, 0, st)) != PFVM_OK)
        return rc;
    g = m->graph;
    memset(&e, 0, sizeof e);
    e.t = t;
    e.g = g;
    e.st = st;
    e.naive = naive;
    streamed = naive;
    nv = (int)stbds_arrlen(g->values);
    e.places = (accel_em_place *)pfvm__calloc((size_t)nv + 1, sizeof *e.places);
    whole.off = 0;
    whole.size = t->levels[t->nlevels - 1].mem_bytes / 16 * 16;
    if (!e.places || !pfvm__arrpush(e.holes, whole)) {
        rc = pfvm__fail(st, PFVM_ERR_NOMEM, "accel: out of memory");
        goto done;
    }
    for (i = 0; i < pfvm_graph_num_nodes(g); i++) {
        pfvm_node *n = pfvm_graph_node(g, i);
        for (j = 0; j < n->n_inputs; j++)
            if (n->inputs[j] && n->inputs[j]->graph == g)
                e.places[n->inputs[j]->id].last_use = i;
    }
    for (i = 0; i < pfvm_graph_num_outputs(g); i++)
        e.places[pfvm_graph_output(g, i)->id].last_use = pfvm_graph_num_nodes(g);
    if ((rc = accel_em_line(&e, "program %s", t->name)) != PFVM_OK)
        goto done;
    for (i = 0; i < pfvm_graph_num_inputs(g) && !streamed; i++) {
        pfvm_value *v = pfvm_graph_input(g, i);
        char shape[128];
        if (v->init)
            continue;
        if ((rc = accel_em_place_value(&e, v, ACCEL_EM_ROWS)) != PFVM_OK) {
            streamed = rc == PFVM_ERR_NOMEM;
            break;
        }
        accel_em_shape_text(v, shape, sizeof shape);
        if ((rc = accel_em_line(&e, "input %d %lld %s %s", i, (long long)e.places[v->id].off, shape,
                             e.places[v->id].layout)) != PFVM_OK)
            goto done;
    }
    if (rc != PFVM_OK && !streamed)
        goto done;
    if (!streamed && (rc = accel_em_line(&e, "barrier")) != PFVM_OK)
        goto done;
    for (i = 0; i < pfvm_graph_num_nodes(g) && !streamed && rc == PFVM_OK; i++)
        rc = accel_em_node(&e, pfvm_graph_node(g, i), i, &resident);
    if (rc == PFVM_ERR_NOMEM || streamed) {
        /* some tensor does not fit in the PEs: the scheduler's plan */
        if ((rc = accel_em_stream(&e, stats)) != PFVM_OK)
            goto done;
        goto finish;
    }
    if (rc != PFVM_OK)
        goto done;
    if (stats)
        *stats = resident;
    for (i = 0; i < pfvm_graph_num_outputs(g); i++) {
        pfvm_value *v = pfvm_graph_output(g, i);
        char shape[128];
        if (!e.places[v->id].placed && v->init && (rc = accel_em_weight(&e, v)) != PFVM_OK)
            goto done;
        if (!e.places[v->id].placed) {
            rc = pfvm__fail(st, PFVM_ERR_UNSUPPORTED, "output %s: not computed on the PEs", v->name);
            goto done;
        }
        accel_em_shape_text(v, shape, sizeof shape);
        if ((rc = accel_em_line(&e, "output %d %lld %s %s", i, (long long)e.places[v->id].off, shape,
                             e.places[v->id].layout)) != PFVM_OK)
            goto done;
    }
    /* a resident plan that gathers some node whole onto PE 0 loses to the
     * streamed plan when that one runs every node over the PEs */
    if (resident.fallbacks > 0 && (rc = accel_em_prefer_stream(&e, &resident, stats)) != PFVM_OK)
        goto done;
finish:
    if (!pfvm__arrpush(e.text, '\0')) {
        rc = pfvm__fail(st, PFVM_ERR_NOMEM, "accel: out of memory for the program text");
        goto done;
    }
    if (!(*program = (char *)pfvm__malloc((size_t)stbds_arrlen(e.text)))) {
        rc = pfvm__fail(st, PFVM_ERR_NOMEM, "accel: out of memory for the program text");
        goto done;
    }
    memcpy(*program, e.text, (size_t)stbds_arrlen(e.text));
    if (stats && stats->streamed)
        stats->peak_bytes = e.peak > stats->peak_bytes ? e.peak : stats->peak_bytes;
    else if (stats) {
        stats->peak_bytes = e.peak;
        for (i = 0; i < pfvm_graph_num_initializers(g); i++) {
            pfvm_value *v = pfvm_graph_initializer(g, i);
            if (e.places[v->id].bytes) {
                stats->weight_bytes += e.places[v->id].bytes;
                if (!accel_em_weight_repeats(&e, i, 0))
                    stats->weight_distinct_bytes += e.places[v->id].bytes;
            }
        }
        stats->pes_used = pfvm_accel_target_pes(t);
    }
    pfvm__ok(st);
done:
    pfvm__free(e.places);
    accel_em_keep_free(&e);
    stbds_arrfree(e.holes);
    stbds_arrfree(e.scratch);
    stbds_arrfree(e.text);
    return rc;
}

pfvm_code pfvm_accel_emit(pfvm_model *m, const pfvm_accel_target *t, char **program, pfvm_accel_stats *stats,
                          pfvm_status *st)
{
    return accel_em_emit(m, t, 0, program, stats, st);
}

pfvm_code pfvm_accel_emit_naive(pfvm_model *m, const pfvm_accel_target *t, char **program, pfvm_accel_stats *stats,
                                pfvm_status *st)
{
    return accel_em_emit(m, t, 1, program, stats, st);
}

static pfvm_code accel_em_meta(pfvm_model *m, const char *key, const char *key2, const char *value,
                               pfvm_status *st)
{
    char k[512];
    pfvm_string_pair kv;
    pfvm__snprintf(k, sizeof k, "%s%s", key, key2);
    kv.key = pfvm_model_strdup(m, k);
    kv.value = pfvm_model_strdup(m, value);
    if (!kv.key || !kv.value || !pfvm__arrpush(m->metadata, kv))
        return pfvm__fail(st, PFVM_ERR_NOMEM, "accel: out of memory for the model's metadata");
    return PFVM_OK;
}

/* The value a program line places and its layout: `input K OFF SHAPE
 * LAYOUT`, `weight NAME OFF SHAPE LAYOUT`, `# node NAME (OP) -> LAYOUT`. */
static const pfvm_value *accel_em_placed(const pfvm_graph *g, const char *line, const char **layout)
{
    char name[512];
    const char *p;
    int i, k;
    if (!strncmp(line, "# node ", 7) && (p = strstr(line, " -> ")) != NULL) {
        const char *open = p;
        while (open > line + 7 && strncmp(open, " (", 2))
            open--;
        if ((size_t)(open - line - 7) >= sizeof name)
            return NULL;
        memcpy(name, line + 7, (size_t)(open - line - 7));
        name[open - line - 7] = 0;
        *layout = p + 4;
        for (i = 0; i < pfvm_graph_num_nodes(g); i++) {
            const pfvm_node *n = pfvm_graph_node(g, i);
            if (!strcmp(n->name, name) && n->n_outputs && n->outputs[0])
                return n->outputs[0];
        }
        return NULL;
    }
    if (strncmp(line, "input ", 6) && strncmp(line, "weight ", 7))
        return NULL;
    /* the layout follows the fourth word */
    for (p = line, k = 0; *p && k < 4; k++) {
        while (*p && *p != ' ')
            p++;
        while (*p == ' ')
            p++;
    }
    *layout = p;
    if (line[0] == 'w') {
        size_t len = strcspn(line + 7, " ");
        if (len >= sizeof name)
            return NULL;
        memcpy(name, line + 7, len);
        name[len] = 0;
        return pfvm_graph_find(g, name);
    }
    k = atoi(line + 6);
    return k >= 0 && k < pfvm_graph_num_inputs(g) ? pfvm_graph_input(g, k) : NULL;
}

static pfvm_code pfvm__scoped_accel_annotate(pfvm_model *m, const pfvm_accel_target *t, const char *program,
                                              pfvm_status *st);

/* In the model's allocator (the metadata it adds belongs to the model). */
pfvm_code pfvm_accel_annotate(pfvm_model *m, const pfvm_accel_target *t, const char *program, pfvm_status *st)
{
    pfvm__scope sc;
    pfvm_code r;
    if (!m)
        return pfvm__fail(st, PFVM_ERR_INVALID, "accel: annotate needs a model, a target and a program");
    pfvm__scope_enter(&sc, pfvm__model_allocator(m));
    r = pfvm__scoped_accel_annotate(m, t, program, st);
    pfvm__scope_leave(&sc);
    return r;
}

static pfvm_code pfvm__scoped_accel_annotate(pfvm_model *m, const pfvm_accel_target *t, const char *program,
                                              pfvm_status *st)
{
    const char *p = program;
    pfvm_code rc;
    if (!m || !m->graph || !t || !program)
        return pfvm__fail(st, PFVM_ERR_INVALID, "accel: annotate needs a model, a target and a program");
    if ((rc = accel_em_meta(m, "pfvm.accel.target", "", t->name, st)) != PFVM_OK)
        return rc;
    while (*p) {
        const char *e = strchr(p, '\n'), *layout = NULL;
        size_t len = e ? (size_t)(e - p) : strlen(p);
        char line[1024];
        const pfvm_value *v;
        if (len < sizeof line) {
            memcpy(line, p, len);
            line[len] = 0;
            if ((v = accel_em_placed(m->graph, line, &layout)) != NULL &&
                (rc = accel_em_meta(m, "pfvm.accel.layout.", v->name, layout, st)) != PFVM_OK)
                return rc;
        }
        p += len + (e != NULL);
    }
    pfvm__ok(st);
    return PFVM_OK;
}

void pfvm_accel_free(void *p)
{
    pfvm__free(p);
}
