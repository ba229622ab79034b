/* The fused-loop engine: compiling a function body into a block program,
 * running it over the output block by block, and the definition every
 * call of a model-local function resolves to. See fused.h. */
#include "fused.h"
#include "ops_common.h"

#include <limits.h>
#include <math.h>
#include <string.h>

#define PFVM__FZ_TMP0 8192     /* operand of temporary k: PFVM__FZ_TMP0 + k */
#define PFVM__FZ_MAX_NODE_OUT 8 /* outputs of one fused node */
#define PFVM__FZ_MAX_TMP 64     /* temporaries of one fused node */
#define PFVM__FZ_MAX_DEPTH 16   /* nested function calls */
/* PFVM_NO_FUSION: no hook to compile with, so every call runs its body
 * node by node and the compiler and block interpreter are never linked
 * (a group of only a head and a tail, which needs no hook, runs node by
 * node too) */
#ifdef PFVM_NO_FUSION
#define PFVM__FZ_NO_ENGINE 1
#else
#define PFVM__FZ_NO_ENGINE 0
#endif

/* ---- programs --------------------------------------------------------------------- */

typedef struct pfvm__fz_ins {
    pfvm_fuse_kernel fn;
    pfvm_fuse_kernel fn_c;     /* fn when s[1] is one value (pfvm_fuse_variant), or NULL */
    pfvm_fuse_kernel run;      /* what this run calls: fn or fn_c */
    int uop;                   /* PFVM_FUSE_U_*: the micro-op it also is, or PFVM_FUSE_U_NONE */
    pfvm_fuse_kernel fn_gelu;  /* erf: its GELU form (pfvm_fuse_gelu_form), or NULL */
    int fold;                  /* this run: GELU's five steps from here run as one call (PFVM__FUSE_FOLD) */
    int chain;                 /* this run: instructions run as one micro-op chain from here (0, 1: none) */
    int s1_fixed;              /* this run: s[1] is one value for the whole run (a fixed input) */
    int d, n_src;              /* slots while compiling, registers after */
    int s[PFVM_FUSE_MAX_SRC];
    union {
        double d[PFVM_FUSE_PARAM_BYTES / 8];
        int64_t i[PFVM_FUSE_PARAM_BYTES / 8];
    } p;
} pfvm__fz_ins;

/* A reduction ending the group. */
typedef struct pfvm__fz_sink {
    int src;                   /* slot, then register, of the values folded */
    int slot;                  /* the result's slot */
    pfvm_fuse_reducer r;
    int64_t axes[PFVM_MAX_RANK];
    int n_axes, keepdims;
    /* run time */
    int out;                   /* the group output it makes */
    int64_t st[PFVM_MAX_RANK]; /* strides of the result over the walk (0 on reduced axes) */
    int64_t off;               /* offset at the walk's current row */
    double *acc;
    int64_t n_acc, count;
} pfvm__fz_sink;

/* A compiled group: slots 0..n_in-1 are the group's inputs; every value
 * computed gets a slot; slots map to registers. */
typedef struct pfvm__fz_prog {
    pfvm__fz_ins *ins;    /* stb_ds */
    pfvm__fz_sink *sinks; /* stb_ds */
    int *slot_sink;       /* stb_ds per slot: sink index or -1 */
    int n_slots, n_in, n_out, n_regs;
    int n_ld;             /* values loaded block by block: the inputs, then the head's result */
    const pfvm_node *head; /* an out-fusable node (Conv, Gemm, MatMul) run first, or NULL */
    int *head_in;         /* per input of the head: the group input it reads, or -1 */
    void *head_state;     /* what the head's prepare hook made at bind (its k->state), or NULL */
    void (*head_state_free)(void *);
    const pfvm_tensor **inp; /* n_ld: what each loaded value is read from, this run */
    pfvm_tensor head_buf; /* the head's result: one of the group's outputs, until overwritten */
    const pfvm_node *tail; /* an in-place row op (Softmax) run last on its output, or NULL */
    int tail_out;         /* the group output it makes */
    pfvm_dtype *in_dtype; /* the input types it was compiled for */
    int *in_reg;          /* per input: register, -1 when unused */
    int *out_reg;         /* per output: register, -1 for a reduction */
    int *out_sink;        /* per output: sink index or -1 */
    float *regs;          /* n_regs * PFVM_FUSE_BLOCK, 64-byte aligned within regs_mem */
    void *regs_mem;
    float **ptr;          /* per register: its storage for the block being run */
    unsigned char *out_direct; /* per output: its register may live in the output */
    int head_in_place;    /* a full block may read the head's result where it lies (pfvm__fz_head_in_place) */
    /* run-time scratch, sized at compile time so that runs allocate nothing */
    int64_t *st;          /* n_in * PFVM_MAX_RANK strides */
    int64_t *off;         /* n_in offsets */
    unsigned char *fixed; /* n_in: the input is one value for the whole run */
    void **in_copy;       /* n_in: contents of inputs the hooks read (the program assumes them), or NULL */
    size_t *in_copy_size;
    int n_chunks;         /* runs of the block being filled (reductions) */
    int n_steps;          /* this run: kernel calls per block (a chain is one) */
    int64_t *chunk_at, *chunk_len, *chunk_off; /* PFVM_FUSE_BLOCK each; offs per sink */
#ifndef PFVM_NO_THREADS
    pfvm__fz_sink *walk_sinks; /* the sinks a walk folds into: `sinks`, or a part's copy (pfvm__fz_part) */
#endif
    /* the last run's walk, reused while the shapes stay (pfvm__fz_same_shapes):
     * programs without reductions */
    int32_t *memo_sig;    /* (n_in + n_out) * PFVM__FZ_SIG_WORDS: each tensor's kind, type, rank, dims
                           * (32-bit: a group's shapes are kept for the run's life; dscnn's heap) */
    int memo_ok;          /* memo_* below hold the walk of the shapes in memo_sig */
    int dry;              /* pfvm__fz_run at bind: the walk's setup only, no data read or written */
    int memo_rank, memo_r;
    int64_t memo_S[PFVM_MAX_RANK], memo_D[PFVM_MAX_RANK], memo_inner, memo_total;
} pfvm__fz_prog;

#define PFVM__FZ_SIG_WORDS (1 + PFVM_MAX_RANK)

static void pfvm__fz_prog_free(pfvm__fz_prog *p)
{
    int i;
    if (!p)
        return;
    stbds_arrfree(p->ins);
    stbds_arrfree(p->sinks);
    stbds_arrfree(p->slot_sink);
    pfvm__free(p->in_dtype);
    pfvm__free(p->head_in);
    if (p->head_state && p->head_state_free)
        p->head_state_free(p->head_state);
    pfvm__free(p->inp);
    pfvm__free(p->in_reg);
    pfvm__free(p->out_reg);
    pfvm__free(p->out_sink);
    pfvm__free(p->regs_mem);
    pfvm__free(p->ptr);
    pfvm__free(p->out_direct);
    pfvm__free(p->st);
    pfvm__free(p->off);
    pfvm__free(p->fixed);
    pfvm__free(p->memo_sig);
    for (i = 0; p->in_copy && i < p->n_in; i++)
        pfvm__free(p->in_copy[i]);
    pfvm__free(p->in_copy);
    pfvm__free(p->in_copy_size);
    pfvm__free(p->chunk_at);
    pfvm__free(p->chunk_len);
    pfvm__free(p->chunk_off);
    pfvm__free(p);
}

/* ---- the hooks' side ------------------------------------------------------------------- */

struct pfvm_fuse_ctx {
    const pfvm_node *node;
    const pfvm_dtype *in_dtype;      /* per node input */
    const pfvm_tensor *const *in_const; /* per node input, or NULL */
    const int *in_slot;              /* per node input (compiling) */
    int out_slot[PFVM__FZ_MAX_NODE_OUT];
    unsigned out_sink;               /* bit j: output j is a reduction */
    int tmp_slot[PFVM__FZ_MAX_TMP];
    int n_tmp;
    int n_slots;                     /* slots made while only checking */
    pfvm__fz_prog *prog;             /* NULL: only checking */
    const char *why;                 /* a refusal's reason */
    unsigned const_used;             /* bit i: the hook read input i's contents */
    pfvm_fuse_info info;
};

PFVM_INTERNAL pfvm_dtype pfvm_fuse_dtype(const pfvm_fuse_ctx *f, int i)
{
    if (i < 0 || i >= f->node->n_inputs || !f->node->inputs[i])
        return PFVM_UNDEFINED;
    return f->in_dtype[i];
}

PFVM_INTERNAL const pfvm_tensor *pfvm_fuse_const(const pfvm_fuse_ctx *f, int i)
{
    const pfvm_tensor *t;
    if (i < 0 || i >= f->node->n_inputs || !f->node->inputs[i] || !f->in_const)
        return NULL;
    t = f->in_const[i];
    if (!t || t->kind != PFVM_KIND_TENSOR || (!t->data && pfvm_tensor_numel(t)) || t->dtype == PFVM_STRING || i >= 32)
        return NULL;
    ((pfvm_fuse_ctx *)f)->const_used |= 1u << i;
    return t;
}

PFVM_INTERNAL int pfvm_fuse_tmp(pfvm_fuse_ctx *f)
{
    if (f->n_tmp >= PFVM__FZ_MAX_TMP)
        return -1;
    f->tmp_slot[f->n_tmp] = -1;
    return PFVM__FZ_TMP0 + f->n_tmp++;
}

PFVM_INTERNAL pfvm_code pfvm_fuse_refuse(pfvm_fuse_ctx *f, const char *why)
{
    if (!f->why)
        f->why = why;
    return PFVM_ERR_UNSUPPORTED;
}

/* The slot an operand reads, or -1 when it names nothing defined (or a
 * reduction's result, which the group cannot read). */
static int pfvm__fz_src_slot(pfvm_fuse_ctx *f, int o)
{
    const pfvm_node *n = f->node;
    int s = -1;
    if (o >= 0 && o < n->n_inputs) {
        if (!n->inputs[o])
            return -1;
        if (o < 32)
            f->info.used |= 1u << o;
        s = f->prog ? f->in_slot[o] : 0;
    } else if (o >= PFVM_FUSE_OUT(0) && o < PFVM_FUSE_OUT(0) + n->n_outputs &&
               o - PFVM_FUSE_OUT(0) < PFVM__FZ_MAX_NODE_OUT) {
        if (f->out_sink & (1u << (o - PFVM_FUSE_OUT(0))))
            return -1;
        s = f->out_slot[o - PFVM_FUSE_OUT(0)];
    } else if (o >= PFVM__FZ_TMP0 && o < PFVM__FZ_TMP0 + f->n_tmp) {
        s = f->tmp_slot[o - PFVM__FZ_TMP0];
    }
    if (s >= 0 && f->prog && (s >= (int)stbds_arrlen(f->prog->slot_sink) || f->prog->slot_sink[s] >= 0))
        return -1;
    return s;
}

/* Where a destination's slot is recorded, or NULL when it is not a fresh
 * output or temporary. */
static int *pfvm__fz_dst(pfvm_fuse_ctx *f, int o)
{
    const pfvm_node *n = f->node;
    int *d = NULL;
    if (o >= PFVM_FUSE_OUT(0) && o < PFVM_FUSE_OUT(0) + n->n_outputs && o - PFVM_FUSE_OUT(0) < PFVM__FZ_MAX_NODE_OUT &&
        n->outputs[o - PFVM_FUSE_OUT(0)])
        d = &f->out_slot[o - PFVM_FUSE_OUT(0)];
    else if (o >= PFVM__FZ_TMP0 && o < PFVM__FZ_TMP0 + f->n_tmp)
        d = &f->tmp_slot[o - PFVM__FZ_TMP0];
    return d && *d < 0 ? d : NULL;
}

/* A new slot (sink: the index of the reduction making it, or -1); -1
 * when out of memory. */
static int pfvm__fz_new_slot(pfvm_fuse_ctx *f, int sink)
{
    if (!f->prog)
        return f->n_slots++;
    if (!pfvm__arrpush(f->prog->slot_sink, sink))
        return -1;
    return f->prog->n_slots++;
}

PFVM_INTERNAL pfvm_code pfvm_fuse_emit(pfvm_fuse_ctx *f, pfvm_fuse_kernel fn, const void *params, size_t size, int d,
                                       int n_src, const int *src)
{
    pfvm__fz_ins ins;
    int *dst = pfvm__fz_dst(f, d), j;
    if (!fn || !dst || n_src < 0 || n_src > PFVM_FUSE_MAX_SRC || size > PFVM_FUSE_PARAM_BYTES || (size && !params))
        return pfvm_fuse_refuse(f, "malformed instruction");
    memset(&ins, 0, sizeof ins);
    ins.fn = fn;
    ins.n_src = n_src;
    for (j = 0; j < n_src; j++)
        if ((ins.s[j] = pfvm__fz_src_slot(f, src[j])) < 0)
            return pfvm_fuse_refuse(f, "instruction reads an undefined operand");
    if (size)
        memcpy(&ins.p, params, size);
    if (f->prog && !pfvm__arrreserve(f->prog->ins, (size_t)stbds_arrlen(f->prog->ins) + 1))
        return pfvm_fuse_refuse(f, "out of memory");
    if ((*dst = pfvm__fz_new_slot(f, -1)) < 0)
        return pfvm_fuse_refuse(f, "out of memory");
    if (f->prog) {
        ins.d = *dst;
        stbds_arrput(f->prog->ins, ins); /* reserved above */
    }
    return PFVM_OK;
}

PFVM_INTERNAL pfvm_code pfvm_fuse_variant(pfvm_fuse_ctx *f, pfvm_fuse_kernel fn)
{
    if (!fn)
        return pfvm_fuse_refuse(f, "malformed variant");
    if (f->prog && stbds_arrlen(f->prog->ins)) {
        pfvm__fz_ins *in = &f->prog->ins[stbds_arrlen(f->prog->ins) - 1];
        if (in->n_src != 2)
            return pfvm_fuse_refuse(f, "malformed variant");
        in->fn_c = fn;
    }
    return PFVM_OK;
}

PFVM_INTERNAL pfvm_code pfvm_fuse_gelu_form(pfvm_fuse_ctx *f, pfvm_fuse_kernel fn)
{
    if (!fn)
        return pfvm_fuse_refuse(f, "malformed GELU form");
    if (f->prog && stbds_arrlen(f->prog->ins)) {
        pfvm__fz_ins *in = &f->prog->ins[stbds_arrlen(f->prog->ins) - 1];
        if (in->n_src != 1)
            return pfvm_fuse_refuse(f, "malformed GELU form");
        in->fn_gelu = fn;
    }
    return PFVM_OK;
}

PFVM_INTERNAL pfvm_code pfvm_fuse_uop(pfvm_fuse_ctx *f, int uop)
{
    int binary = uop >= PFVM_FUSE_U_ADD && uop <= PFVM_FUSE_U_MIN;
    if (uop <= PFVM_FUSE_U_NONE || uop >= PFVM_FUSE_U_COUNT)
        return pfvm_fuse_refuse(f, "malformed micro-op");
    if (f->prog && stbds_arrlen(f->prog->ins)) {
        pfvm__fz_ins *in = &f->prog->ins[stbds_arrlen(f->prog->ins) - 1];
        if (in->n_src != (binary ? 2 : 1))
            return pfvm_fuse_refuse(f, "malformed micro-op");
        in->uop = uop;
    }
    return PFVM_OK;
}

PFVM_INTERNAL pfvm_code pfvm_fuse_alias(pfvm_fuse_ctx *f, int d, int src)
{
    int *dst = pfvm__fz_dst(f, d), s = pfvm__fz_src_slot(f, src);
    if (!dst || s < 0)
        return pfvm_fuse_refuse(f, "malformed alias");
    *dst = s;
    return PFVM_OK;
}

PFVM_INTERNAL pfvm_code pfvm_fuse_reduce(pfvm_fuse_ctx *f, int d, int src, const pfvm_fuse_reducer *r,
                                         const int64_t *axes, int n_axes, int keepdims)
{
    int j = d - PFVM_FUSE_OUT(0), s = pfvm__fz_src_slot(f, src), *dst = pfvm__fz_dst(f, d);
    pfvm__fz_sink k;
    if (!r || !r->accum || j < 0 || j >= f->node->n_outputs || !dst || s < 0 || n_axes < 0 || n_axes > PFVM_MAX_RANK)
        return pfvm_fuse_refuse(f, "malformed reduction");
    if (!PFVM__F64) /* pfvm__fz_run's sinks accumulate and store in double */
        return pfvm_fuse_refuse(f, "reductions accumulate in double (not in a PFVM_FLOAT32_ONLY build)");
    f->info.reduction = 1;
    f->info.iter_input = src >= 0 && src < f->node->n_inputs ? src : -1;
    f->out_sink |= 1u << j;
    memset(&k, 0, sizeof k);
    k.src = s;
    k.r = *r;
    if (n_axes)
        memcpy(k.axes, axes, sizeof(int64_t) * (size_t)n_axes);
    k.n_axes = n_axes;
    k.keepdims = keepdims != 0;
    if (f->prog && !pfvm__arrreserve(f->prog->sinks, (size_t)stbds_arrlen(f->prog->sinks) + 1))
        return pfvm_fuse_refuse(f, "out of memory");
    k.slot = *dst = pfvm__fz_new_slot(f, f->prog ? (int)stbds_arrlen(f->prog->sinks) : 0);
    if (*dst < 0)
        return pfvm_fuse_refuse(f, "out of memory");
    if (f->prog)
        stbds_arrput(f->prog->sinks, k); /* reserved above */
    return PFVM_OK;
}

/* Runs n's hook. in_slot NULL and prog NULL: only checking. */
static pfvm_code pfvm__fz_node(pfvm_fuse_ctx *f, const pfvm_node *n, const pfvm_dtype *in_dtype,
                               const pfvm_tensor *const *in_const, const int *in_slot, pfvm__fz_prog *prog)
{
    pfvm_code rc;
    int j;
    memset(f, 0, sizeof *f);
    f->node = n;
    f->in_dtype = in_dtype;
    f->in_const = in_const;
    f->in_slot = in_slot;
    f->prog = prog;
    f->info.iter_input = -1;
    for (j = 0; j < PFVM__FZ_MAX_NODE_OUT; j++)
        f->out_slot[j] = -1;
    if (!n->op || !n->op->fuse || n->n_outputs > PFVM__FZ_MAX_NODE_OUT)
        return pfvm_fuse_refuse(f, "no fuse hook");
    if ((rc = n->op->fuse(f, n)) != PFVM_OK)
        return rc;
    for (j = 0; j < n->n_outputs; j++)
        if (n->outputs[j] && f->out_slot[j] < 0)
            return pfvm_fuse_refuse(f, "an output is not computed");
    /* a reduction's other outputs would have the walk's shape: keep it simple */
    if (f->info.reduction && (f->out_sink != (1u << n->n_outputs) - 1u || f->info.iter_input < 0))
        return pfvm_fuse_refuse(f, "a reduction with other outputs");
    return PFVM_OK;
}

PFVM_INTERNAL int pfvm_fuse_accepts(const pfvm_node *n, const pfvm_dtype *in_dtypes, const pfvm_tensor *const *consts,
                                    pfvm_fuse_info *info)
{
    pfvm_fuse_ctx f;
    int ok = pfvm__fz_node(&f, n, in_dtypes, consts, NULL, NULL) == PFVM_OK;
    if (info)
        *info = f.info;
    return ok;
}

/* ---- compiling --------------------------------------------------------------------- */

const pfvm_function *pfvm_model_function(const pfvm_model *m, const char *domain, const char *name)
{
    int i;
    if (!m || !name)
        return NULL;
    for (i = 0; i < (int)stbds_arrlen(m->functions); i++) {
        const pfvm_function *f = m->functions[i];
        if (f->name && !strcmp(f->name, name) && !strcmp(f->domain ? f->domain : "", domain ? domain : ""))
            return f;
    }
    return NULL;
}

/* Element types of the body's values for the given input types, with each
 * node's inference over unknown shapes. 0 when something is unknown. */
#ifdef PFVM_NO_SHAPE_INFERENCE
/* Without inference: the types the stored plan gave the body's values
 * (pfvm_exec_store_plan's `d` records); 0 when one is missing. */
static int pfvm__fz_dtypes(const pfvm_graph *body, const pfvm_dtype *in_dtype, pfvm_dtype *vdt, pfvm_symtab *syms)
{
    int nv = (int)stbds_arrlen(body->values), i, j;
    (void)syms;
    for (i = 0; i < nv; i++) {
        const pfvm_type *ty = &body->values[i]->type;
        vdt[i] = ty->kind == PFVM_KIND_TENSOR ? ty->dtype : PFVM_UNDEFINED;
    }
    for (i = 0; i < (int)stbds_arrlen(body->inputs); i++)
        vdt[body->inputs[i]->id] = in_dtype[i];
    for (i = 0; i < (int)stbds_arrlen(body->nodes); i++)
        for (j = 0; j < body->nodes[i]->n_outputs; j++)
            if (body->nodes[i]->outputs[j] && vdt[body->nodes[i]->outputs[j]->id] == PFVM_UNDEFINED)
                return 0;
    return 1;
}
#else
static int pfvm__fz_dtypes(const pfvm_graph *body, const pfvm_dtype *in_dtype, pfvm_dtype *vdt, pfvm_symtab *syms)
{
    pfvm_arena arena;
    pfvm_ival *iv;
    const pfvm_ival **in = NULL;
    pfvm_ival **out = NULL;
    pfvm_status st;
    int nv = (int)stbds_arrlen(body->values), i, j, ok = 1;
    memset(&arena, 0, sizeof arena);
    arena.chunk = 1024; /* one per group at bind: small blocks (pfvm_arena) */
    iv = (pfvm_ival *)pfvm__arena_alloc(&arena, sizeof *iv * (size_t)(nv + 1));
    if (!iv) {
        pfvm__arena_free(&arena);
        return 0;
    }
    memset(iv, 0, sizeof *iv * (size_t)(nv + 1));
    for (i = 0; i < (int)stbds_arrlen(body->inputs); i++) {
        pfvm_ival *v = &iv[body->inputs[i]->id];
        pfvm_ival_set_tensor(v, in_dtype[i], NULL);
    }
    for (i = 0; ok && i < (int)stbds_arrlen(body->nodes); i++) {
        const pfvm_node *n = body->nodes[i];
        if (!pfvm__arrsetlen(in, n->n_inputs) || !pfvm__arrsetlen(out, n->n_outputs)) {
            ok = 0;
            break;
        }
        for (j = 0; j < n->n_inputs; j++)
            in[j] = n->inputs[j] && n->inputs[j]->graph == body ? &iv[n->inputs[j]->id] : NULL;
        for (j = 0; j < n->n_outputs; j++)
            out[j] = n->outputs[j] ? &iv[n->outputs[j]->id] : NULL;
        if (!n->op || pfvm__infer_node(n, in, out, syms, &arena, &st))
            ok = 0;
    }
    for (i = 0; i < nv; i++)
        vdt[i] = iv[i].type.kind == PFVM_KIND_TENSOR ? iv[i].type.dtype : PFVM_UNDEFINED;
    stbds_arrfree(in);
    stbds_arrfree(out);
    pfvm__arena_free(&arena);
    return ok;
}
#endif

PFVM_INTERNAL int pfvm__fz_value_dtypes(const pfvm_graph *body, const pfvm_dtype *in_dtype, pfvm_dtype *vdt,
                                        pfvm_symtab *syms)
{
    return pfvm__fz_dtypes(body, in_dtype, vdt, syms);
}

/* 1 when a full block may read the head's result in place (it lies in an
 * output's storage) instead of copying it first: every instruction that
 * reads it runs before the first one that writes a register living in an
 * output (out_direct), so no position is overwritten before it is read.
 * Input registers, the head's included, are never written (regalloc never
 * frees them), and no reduction may fold it. A GELU folded for this run
 * (pfvm__fz_chains) is one step that reads each value before it writes
 * it (its kernel may write over s[0]) and writes only its last
 * instruction's register: its temporaries, which regalloc may give the
 * output's register, are never stored. Steps count twice, a read at 2i
 * (a fold's) or 2i + 1, a write at 2i + 1. */
static int pfvm__fz_head_in_place(const pfvm__fz_prog *p)
{
    int n = (int)stbds_arrlen(p->ins), i, j, m, hr, step, last = -1, first = INT_MAX;
    if (!p->head || p->n_ld <= p->n_in || (hr = p->in_reg[p->n_in]) < 0)
        return 0;
    for (j = 0; j < (int)stbds_arrlen(p->sinks); j++)
        if (p->sinks[j].src == hr)
            return 0;
    for (j = 0; j < p->n_out; j++)
        if (p->out_reg[j] == hr)
            return 0;
    for (i = 0; i < n; i += step) {
#ifdef PFVM__FUSE_FOLD
        step = p->ins[i].fold ? p->ins[i].fold : 1;
#else
        step = 1;
#endif
        for (m = i; m < i + step; m++)
            for (j = 0; j < p->ins[m].n_src; j++)
                if (p->ins[m].s[j] == hr)
                    last = 2 * i + (step == 1);
        for (j = 0; j < p->n_out; j++)
            if (p->out_direct[j] && p->ins[i + step - 1].d == p->out_reg[j] && 2 * i + 1 < first)
                first = 2 * i + 1;
    }
    return last < first;
}

/* Maps slots to registers: inputs keep theirs for the whole program (a
 * fixed input is loaded once per run), outputs and the values reductions
 * fold to the end, everything else from its instruction to its last
 * reader. A destination never shares a register with a source of its own
 * instruction. */
static pfvm_code pfvm__fz_regalloc(pfvm__fz_prog *p, const int *out_slot, pfvm_status *st)
{
    int n = (int)stbds_arrlen(p->ins), i, j, n_free = 0;
    int *last = (int *)pfvm__calloc((size_t)p->n_slots + 1, sizeof *last);
    int *reg = (int *)pfvm__calloc((size_t)p->n_slots + 1, sizeof *reg);
    int *free_regs = (int *)pfvm__calloc((size_t)p->n_slots + 1, sizeof *free_regs);
    if (!last || !reg || !free_regs) {
        pfvm__free(last);
        pfvm__free(reg);
        pfvm__free(free_regs);
        return pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
    }
    for (i = 0; i < p->n_slots; i++) {
        last[i] = -1;
        reg[i] = -1;
    }
    for (i = 0; i < n; i++)
        for (j = 0; j < p->ins[i].n_src; j++)
            last[p->ins[i].s[j]] = i;
    for (j = 0; j < p->n_out; j++)
        last[out_slot[j]] = INT_MAX;
    for (j = 0; j < (int)stbds_arrlen(p->sinks); j++)
        last[p->sinks[j].src] = INT_MAX;
    p->n_regs = 0;
    for (j = 0; j < p->n_ld; j++)
        if (last[j] >= 0 && p->slot_sink[j] < 0) {
            last[j] = INT_MAX;
            reg[j] = p->n_regs++;
        }
    for (i = 0; i < n; i++) {
        pfvm__fz_ins *in = &p->ins[i];
        int d = in->d;
        reg[d] = n_free ? free_regs[--n_free] : p->n_regs++;
        for (j = 0; j < in->n_src; j++) {
            int s = in->s[j];
            in->s[j] = reg[s];
            if (last[s] == i) {
                free_regs[n_free++] = reg[s];
                last[s] = -2; /* freed once, even when read twice */
            }
        }
        in->d = reg[d];
        if (last[d] == -1)
            free_regs[n_free++] = reg[d]; /* nobody reads it */
    }
    for (j = 0; j < p->n_ld; j++)
        p->in_reg[j] = reg[j];
    for (j = 0; j < p->n_out; j++) {
        p->out_sink[j] = p->slot_sink[out_slot[j]];
        p->out_reg[j] = p->out_sink[j] >= 0 ? -1 : reg[out_slot[j]];
    }
    for (j = 0; j < (int)stbds_arrlen(p->sinks); j++) {
        int k2;
        p->sinks[j].src = reg[p->sinks[j].src];
        p->sinks[j].out = -1;
        for (k2 = 0; k2 < p->n_out; k2++)
            if (p->out_sink[k2] == j && p->sinks[j].out < 0)
                p->sinks[j].out = k2;
    }
    pfvm__free(last);
    pfvm__free(reg);
    pfvm__free(free_regs);
    for (j = 0; j < (int)stbds_arrlen(p->sinks); j++)
        if (p->sinks[j].out < 0 || p->sinks[j].src < 0)
            return pfvm__fail(st, PFVM_ERR_INVALID, "fused group: a reduction that is not an output");
    /* registers on cache lines of their own: vector loads and stores of
     * a block never straddle two lines */
    p->regs_mem = pfvm__calloc((size_t)(p->n_regs ? p->n_regs : 1) * PFVM_FUSE_BLOCK + 16, sizeof(float));
    if (p->regs_mem)
        p->regs = (float *)((char *)p->regs_mem + (64 - (size_t)((uintptr_t)p->regs_mem % 64)) % 64);
    p->ptr = (float **)pfvm__calloc((size_t)p->n_regs + 1, sizeof *p->ptr);
    p->out_direct = (unsigned char *)pfvm__calloc((size_t)p->n_out + 1, 1);
    p->chunk_at = (int64_t *)pfvm__calloc(PFVM_FUSE_BLOCK, sizeof *p->chunk_at);
    p->chunk_len = (int64_t *)pfvm__calloc(PFVM_FUSE_BLOCK, sizeof *p->chunk_len);
    p->chunk_off = (int64_t *)pfvm__calloc((size_t)PFVM_FUSE_BLOCK * (stbds_arrlen(p->sinks) + 1), sizeof *p->chunk_off);
    if (!p->regs || !p->ptr || !p->out_direct || !p->chunk_at || !p->chunk_len || !p->chunk_off)
        return pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
    for (j = 0; j < p->n_regs; j++)
        p->ptr[j] = p->regs + (size_t)j * PFVM_FUSE_BLOCK;
    /* A full block can compute an output's register in the output itself
     * (what its register holds earlier in the block is overwritten by the
     * time the block ends), unless the register is an input's, another
     * output's, or folded by a reduction. */
    for (j = 0; j < p->n_out; j++) {
        int r = p->out_reg[j], k2, ok = r >= 0;
        for (k2 = 0; k2 < p->n_ld; k2++)
            ok &= p->in_reg[k2] != r;
        for (k2 = 0; k2 < j; k2++)
            ok &= p->out_reg[k2] != r;
        for (k2 = 0; k2 < (int)stbds_arrlen(p->sinks); k2++)
            ok &= p->sinks[k2].src != r;
        p->out_direct[j] = (unsigned char)ok;
    }
    p->head_in_place = pfvm__fz_head_in_place(p);
    return PFVM_OK;
}

/* Compiles the body of `fn` for inputs of the given types (and contents,
 * for hooks that read constants). *out is NULL (and PFVM_OK returned) when
 * the body cannot be compiled. */
static pfvm_code pfvm__fz_compile(const pfvm_function *fn, const pfvm_dtype *in_dtype,
                                  const pfvm_tensor *const *in_tensors, int n_in, pfvm_symtab *syms,
                                  pfvm__fz_prog **out, pfvm_status *st)
{
    const pfvm_graph *body = fn->body;
    int nv = (int)stbds_arrlen(body->values), i, j, ok = 1;
    int *vslot = NULL, *in_slot = NULL, *out_slot = NULL;
    pfvm_dtype *vdt = NULL, *ndt = NULL;
    const pfvm_tensor **nconst = NULL;
    pfvm__fz_prog *p;
    pfvm_code rc = PFVM_OK;
    *out = NULL;
    if (fn->n_attr_names || fn->n_attr_defaults || n_in != (int)stbds_arrlen(body->inputs) ||
        !stbds_arrlen(body->outputs))
        return PFVM_OK;
    p = (pfvm__fz_prog *)pfvm__calloc(1, sizeof *p);
    vslot = (int *)pfvm__calloc((size_t)nv + 1, sizeof *vslot);
    vdt = (pfvm_dtype *)pfvm__calloc((size_t)nv + 1, sizeof *vdt);
    if (!p || !vslot || !vdt) {
        rc = pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
        goto done;
    }
    p->n_in = p->n_ld = n_in;
    p->n_out = (int)stbds_arrlen(body->outputs);
    p->in_dtype = (pfvm_dtype *)pfvm__calloc((size_t)n_in + 2, sizeof *p->in_dtype);
    p->in_reg = (int *)pfvm__calloc((size_t)n_in + 2, sizeof *p->in_reg);
    p->inp = (const pfvm_tensor **)pfvm__calloc((size_t)n_in + 2, sizeof *p->inp);
    p->out_reg = (int *)pfvm__calloc((size_t)p->n_out + 1, sizeof *p->out_reg);
    p->out_sink = (int *)pfvm__calloc((size_t)p->n_out + 1, sizeof *p->out_sink);
    p->st = (int64_t *)pfvm__calloc((size_t)(n_in + 1) * PFVM_MAX_RANK + 1, sizeof *p->st);
    p->off = (int64_t *)pfvm__calloc((size_t)n_in + 2, sizeof *p->off);
    p->fixed = (unsigned char *)pfvm__calloc((size_t)n_in + 2, 1);
    p->memo_sig = (int32_t *)pfvm__calloc((size_t)(n_in + p->n_out) * PFVM__FZ_SIG_WORDS + 1, sizeof *p->memo_sig);
    p->in_copy = (void **)pfvm__calloc((size_t)n_in + 1, sizeof *p->in_copy);
    p->in_copy_size = (size_t *)pfvm__calloc((size_t)n_in + 1, sizeof *p->in_copy_size);
    out_slot = (int *)pfvm__calloc((size_t)p->n_out + 1, sizeof *out_slot);
    if (!p->in_dtype || !p->in_reg || !p->inp || !p->out_reg || !p->out_sink || !p->st || !p->off || !p->fixed ||
        !p->memo_sig || !out_slot || !p->in_copy || !p->in_copy_size) {
        rc = pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
        goto done;
    }
    memcpy(p->in_dtype, in_dtype, sizeof *in_dtype * (size_t)n_in);
    if (!pfvm__fz_dtypes(body, in_dtype, vdt, syms)) {
        ok = 0;
        goto done;
    }
    for (i = 0; i < nv; i++)
        vslot[i] = -1;
    for (i = 0; i < n_in; i++) {
        vslot[body->inputs[i]->id] = i;
        if (!pfvm__arrpush(p->slot_sink, -1)) {
            rc = pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
            goto done;
        }
    }
    p->n_slots = n_in;
    /* a head: one out-fusable node without a hook that reads only group
     * inputs; its float32 result is loaded like an input */
    for (i = 0; ok && i < (int)stbds_arrlen(body->nodes); i++) {
        const pfvm_node *n = body->nodes[i];
        int all_in = n->n_outputs == 1 && n->outputs[0];
        if (!n->op || n->op->fuse || n->op->fusion != PFVM_FUSE_OUT_FUSABLE || !n->op->kernel)
            continue;
        for (j = 0; all_in && j < n->n_inputs; j++)
            all_in = !n->inputs[j] || (n->inputs[j]->graph == body && vslot[n->inputs[j]->id] >= 0 &&
                                        vslot[n->inputs[j]->id] < n_in);
        if (!all_in || p->head || vdt[n->outputs[0]->id] != PFVM_FLOAT) {
            ok = 0;
            break;
        }
        p->head = n;
        p->head_in = (int *)pfvm__calloc((size_t)n->n_inputs + 1, sizeof *p->head_in);
        if (!p->head_in) {
            rc = pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
            goto done;
        }
        for (j = 0; j < n->n_inputs; j++)
            p->head_in[j] = n->inputs[j] ? vslot[n->inputs[j]->id] : -1;
        vslot[n->outputs[0]->id] = n_in;
        p->in_dtype[n_in] = PFVM_FLOAT;
        if (!pfvm__arrpush(p->slot_sink, -1)) {
            rc = pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
            goto done;
        }
        p->n_slots = p->n_ld = n_in + 1;
    }
    for (i = 0; ok && i < (int)stbds_arrlen(body->nodes); i++) {
        const pfvm_node *n = body->nodes[i];
        pfvm_fuse_ctx f;
        if (n == p->head)
            continue;
        /* a tail: the last node, an in-place row op over a value of the
         * group; the group stores that value into the tail's output */
        if (n->op && !n->op->fuse && (n->op->flags & PFVM_OP_IN_PLACE) && n->op->kernel && !p->tail &&
            i == (int)stbds_arrlen(body->nodes) - 1 && n->n_inputs == 1 && n->n_outputs == 1 && n->inputs[0] &&
            n->outputs[0] && n->inputs[0]->graph == body && vslot[n->inputs[0]->id] >= p->n_ld &&
            p->slot_sink[vslot[n->inputs[0]->id]] < 0 && vdt[n->inputs[0]->id] == PFVM_FLOAT &&
            vdt[n->outputs[0]->id] == PFVM_FLOAT) {
            p->tail = n;
            vslot[n->outputs[0]->id] = vslot[n->inputs[0]->id];
            continue;
        }
        if (!pfvm__arrsetlen(in_slot, n->n_inputs + 1) || !pfvm__arrsetlen(ndt, n->n_inputs + 1) ||
            !pfvm__arrsetlen(nconst, n->n_inputs + 1)) {
            rc = pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
            goto done;
        }
        for (j = 0; j < n->n_inputs; j++) {
            const pfvm_value *v = n->inputs[j];
            int local = v && v->graph == body;
            in_slot[j] = local ? vslot[v->id] : -1;
            ndt[j] = local ? vdt[v->id] : PFVM_UNDEFINED;
            nconst[j] = local && in_slot[j] >= 0 && in_slot[j] < n_in && in_tensors ? in_tensors[in_slot[j]] : NULL;
            if (v && (!local || in_slot[j] < 0))
                ok = 0;
        }
        if (!ok || pfvm__fz_node(&f, n, ndt, nconst, in_slot, p) != PFVM_OK) {
            ok = 0;
            break;
        }
        for (j = 0; j < n->n_outputs; j++)
            if (n->outputs[j])
                vslot[n->outputs[j]->id] = f.out_slot[j];
        /* the program now assumes these inputs' contents: keep a copy */
        for (j = 0; j < n->n_inputs && j < 32; j++) {
            const pfvm_tensor *t = nconst[j];
            int g = in_slot[j];
            size_t bytes;
            if (!(f.const_used & (1u << j)) || !t || p->in_copy[g])
                continue;
            bytes = (size_t)pfvm_tensor_numel(t) * pfvm_dtype_size(t->dtype);
            if (!(p->in_copy[g] = pfvm__malloc(bytes ? bytes : 1))) {
                rc = pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
                goto done;
            }
            if (bytes)
                memcpy(p->in_copy[g], t->data, bytes);
            p->in_copy_size[g] = bytes;
        }
    }
    for (j = 0; ok && j < p->n_out; j++)
        if ((out_slot[j] = vslot[body->outputs[j]->id]) < 0)
            ok = 0;
    if (ok && p->tail) {
        /* its output once, its input never: a group output */
        p->tail_out = -1;
        for (j = 0; j < p->n_out; j++) {
            if (body->outputs[j] == p->tail->inputs[0] || (body->outputs[j] == p->tail->outputs[0] && p->tail_out >= 0))
                ok = 0;
            if (body->outputs[j] == p->tail->outputs[0])
                p->tail_out = j;
        }
        ok &= p->tail_out >= 0;
    }
    if (ok)
        rc = pfvm__fz_regalloc(p, out_slot, st);
done:
    pfvm__free(vslot);
    pfvm__free(vdt);
    pfvm__free(out_slot);
    stbds_arrfree(in_slot);
    stbds_arrfree(ndt);
    stbds_arrfree(nconst);
    if (rc == PFVM_OK && ok) {
        *out = p;
        return PFVM_OK;
    }
    pfvm__fz_prog_free(p);
    return rc;
}

/* ---- running --------------------------------------------------------------------------- */

static int pfvm__fz_loadable(pfvm_dtype t)
{
    return (pfvm_dtype_is_float(t) && (t != PFVM_DOUBLE || PFVM__F64)) || pfvm_dtype_is_int(t) || t == PFVM_BOOL;
}

static int pfvm__fz_storable(pfvm_dtype t)
{
    return t == PFVM_FLOAT || (t == PFVM_DOUBLE && PFVM__F64) || t == PFVM_FLOAT16 || t == PFVM_BFLOAT16 || t == PFVM_BOOL;
}

#define PFVM__FZ_GATHER(T, expr)                               \
    do {                                                       \
        const T *s_ = (const T *)t->data + off;                \
        for (e = 0; e < m; e++) {                              \
            T v = s_[e * st];                                  \
            d[e] = (float)(expr);                              \
        }                                                      \
    } while (0)

/* d[e] = t[off + e*st] as float, e < m. */
static void pfvm__fz_load(float *PFVM_RESTRICT d, const pfvm_tensor *t, int64_t off, int64_t st, int64_t m)
{
    int64_t e;
    switch (t->dtype) {
    case PFVM_FLOAT: {
        const float *s = (const float *)t->data + off;
        if (st == 1)
            memcpy(d, s, sizeof(float) * (size_t)m);
        else if (st == 0)
            for (e = 0; e < m; e++)
                d[e] = s[0];
        else
            for (e = 0; e < m; e++)
                d[e] = s[e * st];
        break;
    }
#if PFVM__F64 /* else not loadable */
    case PFVM_DOUBLE: PFVM__FZ_GATHER(double, v); break;
#endif
    case PFVM_FLOAT16: PFVM__FZ_GATHER(uint16_t, pfvm_half_to_float(v)); break;
    case PFVM_BFLOAT16: PFVM__FZ_GATHER(uint16_t, pfvm_bf16_to_float(v)); break;
    case PFVM_BOOL: PFVM__FZ_GATHER(uint8_t, v != 0); break;
    case PFVM_INT8: PFVM__FZ_GATHER(int8_t, v); break;
    case PFVM_INT16: PFVM__FZ_GATHER(int16_t, v); break;
    case PFVM_INT32: PFVM__FZ_GATHER(int32_t, v); break;
    case PFVM_INT64: PFVM__FZ_GATHER(int64_t, v); break;
    case PFVM_UINT8: PFVM__FZ_GATHER(uint8_t, v); break;
    case PFVM_UINT16: PFVM__FZ_GATHER(uint16_t, v); break;
    case PFVM_UINT32: PFVM__FZ_GATHER(uint32_t, v); break;
    case PFVM_UINT64: PFVM__FZ_GATHER(uint64_t, v); break;
    default:
        for (e = 0; e < m; e++)
            d[e] = 0;
        break;
    }
}

/* t[pos + e] = s[e] in t's type, e < m. */
static void pfvm__fz_store(pfvm_tensor *t, int64_t pos, const float *PFVM_RESTRICT s, int64_t m)
{
    int64_t e;
    switch (t->dtype) {
    case PFVM_FLOAT: memcpy((float *)t->data + pos, s, sizeof(float) * (size_t)m); break;
#if PFVM__F64 /* else not storable */
    case PFVM_DOUBLE: {
        double *d = (double *)t->data + pos;
        for (e = 0; e < m; e++)
            d[e] = s[e];
        break;
    }
#endif
    case PFVM_FLOAT16: {
        uint16_t *d = (uint16_t *)t->data + pos;
        for (e = 0; e < m; e++)
            d[e] = pfvm_float_to_half(s[e]);
        break;
    }
    case PFVM_BFLOAT16: {
        uint16_t *d = (uint16_t *)t->data + pos;
        for (e = 0; e < m; e++)
            d[e] = pfvm_float_to_bf16(s[e]);
        break;
    }
    case PFVM_BOOL: {
        uint8_t *d = (uint8_t *)t->data + pos;
        for (e = 0; e < m; e++)
            d[e] = s[e] != 0;
        break;
    }
    default: break;
    }
}

/* ---- micro-op chains ------------------------------------------------------------------ */

#define PFVM__FZ_MAX_CHAIN 16 /* instructions in one chain */
#define PFVM__FZ_UCHUNK 128   /* floats a chain carries through all its ops at once */

/* One micro-op of a chain: s1 is b[e], or k when b is NULL (a scalar, and
 * unary ops). */
typedef struct pfvm__fz_uop {
    int code;
    float k;
    const float *b;
} pfvm__fz_uop;

/* The chain kernel exists where PFVM_DISPATCH does (x86-64 glibc, gcc or
 * clang), for AVX-512 only: generic vectors (a compiler extension), eight
 * 16-float values a chunk, which the compiler keeps in CPU registers from
 * op to op. It is picked at run time when the CPU has AVX-512; elsewhere
 * (and with PFVM_NO_DISPATCH, or blocks that are not whole chunks)
 * instructions run one by one, as always.
 * (gcc 12 scalarizes comparisons of such vectors in target_clones
 * versions, hence one target and a check of our own.) */
#if !defined(PFVM_NO_DISPATCH) && !defined(PFVM_NO_UCHAIN) && defined(__x86_64__) && defined(__GNUC__) && \
    defined(__linux__) && defined(__GLIBC__) && defined(__has_attribute)
#if __has_attribute(target) && __has_attribute(vector_size) && PFVM_FUSE_BLOCK % PFVM__FZ_UCHUNK == 0
#define PFVM__FZ_UCHAIN 1
#endif
#endif
#ifdef PFVM__FZ_UCHAIN
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF /* rounds like the kernels: no fused multiply-adds */
#define PFVM__FZ_AVX512 __attribute__((target("avx512f")))
#else
#define PFVM__FZ_AVX512 __attribute__((target("avx512f"), optimize("fp-contract=off")))
#endif
typedef float pfvm__fz_vf __attribute__((vector_size(64)));
typedef int32_t pfvm__fz_vi __attribute__((vector_size(64)));
#define PFVM__FZ_SEL(m, a, b) ((pfvm__fz_vf)(((m) & (pfvm__fz_vi)(a)) | (~(m) & (pfvm__fz_vi)(b))))
#define PFVM__FZ_ADD(x, b) ((x) + (b))
#define PFVM__FZ_SUB(x, b) ((x) - (b))
#define PFVM__FZ_MUL(x, b) ((x) * (b))
#define PFVM__FZ_DIV(x, b) ((x) / (b))
#define PFVM__FZ_MAX(x, b) PFVM__FZ_SEL(((b) != (b)) | ((b) > (x)), (b), (x))
#define PFVM__FZ_MIN(x, b) PFVM__FZ_SEL(((b) != (b)) | ((b) < (x)), (b), (x))
#define PFVM__FZ_RELU(x, b) PFVM__FZ_SEL((x) > zero, (x), zero)
#define PFVM__FZ_NEG(x, b) ((pfvm__fz_vf)((pfvm__fz_vi)(x) ^ sign))
#define PFVM__FZ_ABS(x, b) ((pfvm__fz_vf)((pfvm__fz_vi)(x) & ~sign))
#define PFVM__FZ_ALL8(F)          \
    do {                          \
        x0 = F(x0, b0);           \
        x1 = F(x1, b1);           \
        x2 = F(x2, b2);           \
        x3 = F(x3, b3);           \
        x4 = F(x4, b4);           \
        x5 = F(x5, b5);           \
        x6 = F(x6, b6);           \
        x7 = F(x7, b7);           \
    } while (0)
#define PFVM__FZ_CASE(U, F) \
    case U: PFVM__FZ_ALL8(F); break;
PFVM__FZ_AVX512 static void pfvm__fz_uchain(float *d, const float *a, const pfvm__fz_uop *u, int n)
{
    const pfvm__fz_vf zero = {0};
    const pfvm__fz_vi sign = (pfvm__fz_vi){0} + (int32_t)(-2147483647 - 1);
    int c, i;
    for (c = 0; c < PFVM_FUSE_BLOCK; c += PFVM__FZ_UCHUNK) {
        pfvm__fz_vf x0, x1, x2, x3, x4, x5, x6, x7, b0, b1, b2, b3, b4, b5, b6, b7;
        memcpy(&x0, a + c, sizeof x0);
        memcpy(&x1, a + c + 16, sizeof x1);
        memcpy(&x2, a + c + 32, sizeof x2);
        memcpy(&x3, a + c + 48, sizeof x3);
        memcpy(&x4, a + c + 64, sizeof x4);
        memcpy(&x5, a + c + 80, sizeof x5);
        memcpy(&x6, a + c + 96, sizeof x6);
        memcpy(&x7, a + c + 112, sizeof x7);
        for (i = 0; i < n; i++) {
            const pfvm__fz_uop *o = &u[i];
            if (o->b) {
                memcpy(&b0, o->b + c, sizeof b0);
                memcpy(&b1, o->b + c + 16, sizeof b1);
                memcpy(&b2, o->b + c + 32, sizeof b2);
                memcpy(&b3, o->b + c + 48, sizeof b3);
                memcpy(&b4, o->b + c + 64, sizeof b4);
                memcpy(&b5, o->b + c + 80, sizeof b5);
                memcpy(&b6, o->b + c + 96, sizeof b6);
                memcpy(&b7, o->b + c + 112, sizeof b7);
            } else {
                b0 = zero + o->k;
                b1 = b2 = b3 = b4 = b5 = b6 = b7 = b0;
            }
            switch (o->code) {
                PFVM__FZ_CASE(PFVM_FUSE_U_ADD, PFVM__FZ_ADD)
                PFVM__FZ_CASE(PFVM_FUSE_U_SUB, PFVM__FZ_SUB)
                PFVM__FZ_CASE(PFVM_FUSE_U_MUL, PFVM__FZ_MUL)
                PFVM__FZ_CASE(PFVM_FUSE_U_DIV, PFVM__FZ_DIV)
                PFVM__FZ_CASE(PFVM_FUSE_U_MAX, PFVM__FZ_MAX)
                PFVM__FZ_CASE(PFVM_FUSE_U_MIN, PFVM__FZ_MIN)
                PFVM__FZ_CASE(PFVM_FUSE_U_RELU, PFVM__FZ_RELU)
                PFVM__FZ_CASE(PFVM_FUSE_U_NEG, PFVM__FZ_NEG)
                PFVM__FZ_CASE(PFVM_FUSE_U_ABS, PFVM__FZ_ABS)
            default: break;
            }
        }
        memcpy(d + c, &x0, sizeof x0);
        memcpy(d + c + 16, &x1, sizeof x1);
        memcpy(d + c + 32, &x2, sizeof x2);
        memcpy(d + c + 48, &x3, sizeof x3);
        memcpy(d + c + 64, &x4, sizeof x4);
        memcpy(d + c + 80, &x5, sizeof x5);
        memcpy(d + c + 96, &x6, sizeof x6);
        memcpy(d + c + 112, &x7, sizeof x7);
    }
}

#if defined(__clang__)
#pragma STDC FP_CONTRACT DEFAULT
#endif

#endif

/* 1 when the chain kernel is compiled in and the CPU runs AVX-512 code. */
static int pfvm__fz_uchain_ok(void)
{
#ifdef PFVM__FZ_UCHAIN
    return pfvm__have_avx512();
#else
    return 0;
#endif
}

PFVM_INTERNAL int pfvm__have_avx512(void)
{
#if defined(PFVM_AVX512_KERNELS) || defined(PFVM__FZ_UCHAIN)
    static int ok = -1;
    if (ok < 0) {
        __builtin_cpu_init();
        ok = __builtin_cpu_supports("avx512f") != 0;
    }
    return ok;
#else
    return 0;
#endif
}

/* Does register r hold a value nobody reads after instruction i (it is
 * overwritten first, or never read again and no output or reduction's)? */
static int pfvm__fz_dead_after(const pfvm__fz_prog *p, int r, int i)
{
    int n = (int)stbds_arrlen(p->ins), m, j;
    for (m = i + 1; m < n; m++) {
        for (j = 0; j < p->ins[m].n_src; j++)
            if (p->ins[m].s[j] == r)
                return 0;
        if (p->ins[m].d == r)
            return 1;
    }
    for (j = 0; j < p->n_out; j++)
        if (p->out_reg[j] == r)
            return 0;
    for (j = 0; j < (int)stbds_arrlen(p->sinks); j++)
        if (p->sinks[j].src == r)
            return 0;
    for (j = 0; j < p->n_ld; j++)
        if (p->in_reg[j] == r)
            return 0;
    return 1;
}

/* Can instruction `in` run in a chain with the same results as alone? Add
 * and Mul of two NaNs give one of them, and which one depends on the
 * operand order the compiler picked for each kernel (the operations
 * commute); so they chain only with a second operand that is one value
 * for the run and not NaN. Sub, Div (ordered), the selects of Max, Min and
 * Relu, and the sign-bit ops give one answer. */
static int pfvm__fz_uop_ok(const pfvm__fz_prog *p, const pfvm__fz_ins *in)
{
    int j;
    if (!in->uop || in->uop == PFVM_FUSE_U_SIGMOID) /* a tag only: the chain kernel has no exp */
        return 0;
    if (in->uop != PFVM_FUSE_U_ADD && in->uop != PFVM_FUSE_U_MUL)
        return 1;
    for (j = 0; j < p->n_ld; j++)
        if (p->in_reg[j] == in->s[1] && p->fixed[j])
            return p->ptr[in->s[1]][0] == p->ptr[in->s[1]][0];
    return 0;
}

#ifdef PFVM__FUSE_FOLD
/* Register r, written before instruction w reads it, is read by nothing
 * after w (w overwrites it, or nobody reads it again). */
static int pfvm__fz_last_read(const pfvm__fz_prog *p, int r, int w)
{
    return p->ins[w].d == r || pfvm__fz_dead_after(p, r, w);
}

/* Do ins[i..i+4] compute GELU as torch writes it out: t1 = x / a,
 * t2 = erf(t1), t3 = t2 + b, t4 = x * t3 (or t3 * x), y = t4 * c, with
 * a, b and c fixed inputs (one value this run) and t1..t4 read by nothing
 * else? Then pfvm__fz_exec_block runs the Erf hook's GELU form instead. */
static int pfvm__fz_gelu_at(const pfvm__fz_prog *p, int i)
{
    const pfvm__fz_ins *dv = &p->ins[i], *ef = dv + 1, *ad = dv + 2, *mu = dv + 3, *sc = dv + 4;
    int x = dv->s[0];
    if (dv->uop != PFVM_FUSE_U_DIV || !dv->s1_fixed || !ef->fn_gelu || ef->n_src != 1 || ef->s[0] != dv->d)
        return 0;
    if (ad->uop != PFVM_FUSE_U_ADD || !ad->s1_fixed || ad->s[0] != ef->d || sc->uop != PFVM_FUSE_U_MUL ||
        !sc->s1_fixed || sc->s[0] != mu->d || mu->uop != PFVM_FUSE_U_MUL || mu->n_src != 2 || mu->s1_fixed)
        return 0;
    if (!((mu->s[0] == x && mu->s[1] == ad->d) || (mu->s[0] == ad->d && mu->s[1] == x)))
        return 0;
    /* x still x at the Mul; the temporaries nobody else's */
    if (dv->d == x || ef->d == x || ad->d == x || dv->s[1] == x)
        return 0;
    return pfvm__fz_last_read(p, dv->d, i + 1) && pfvm__fz_last_read(p, ef->d, i + 2) &&
           pfvm__fz_last_read(p, ad->d, i + 3) && pfvm__fz_last_read(p, mu->d, i + 4);
}

/* Runs the GELU folded at ins[i] (pfvm__fz_gelu_at) over the block. */
static void pfvm__fz_exec_gelu(pfvm__fz_prog *p, int i)
{
    const pfvm__fz_ins *dv = &p->ins[i];
    const float *src[1];
    pfvm_fuse_gelu_params g;
    g.a = p->ptr[dv->s[1]][0];
    g.b = p->ptr[dv[2].s[1]][0];
    g.c = p->ptr[dv[4].s[1]][0];
    g.x_second = dv[3].s[1] == dv->s[0];
    src[0] = p->ptr[dv->s[0]];
    dv[1].fn_gelu(p->ptr[dv[4].d], src, &g);
}
#endif

/* Marks this run's chains: runs of micro-op instructions where each result
 * is the next one's first source and read by nothing else. */
static void pfvm__fz_chains(pfvm__fz_prog *p)
{
    int n = (int)stbds_arrlen(p->ins), i, len;
    for (i = 0; i < n; i++)
        p->ins[i].chain = p->ins[i].fold = 0;
    p->n_steps = n;
#ifdef PFVM__FUSE_FOLD
    for (i = 0; i + 5 <= n; i++)
        if (pfvm__fz_gelu_at(p, i)) {
            p->ins[i].fold = 5;
            p->n_steps -= 4;
            i += 4;
        }
#endif
    if (!pfvm__fz_uchain_ok())
        return;
    for (i = 0; i < n; i += len) {
        len = p->ins[i].fold ? p->ins[i].fold : 1;
        if (p->ins[i].fold || !pfvm__fz_uop_ok(p, &p->ins[i]))
            continue;
        while (i + len < n && len < PFVM__FZ_MAX_CHAIN) {
            const pfvm__fz_ins *a = &p->ins[i + len - 1], *b = &p->ins[i + len];
            if (!pfvm__fz_uop_ok(p, b) || b->s[0] != a->d || (b->n_src > 1 && b->s[1] == a->d) ||
                !pfvm__fz_dead_after(p, a->d, i + len))
                break;
            len++;
        }
        p->ins[i].chain = len;
        p->n_steps -= len - 1;
    }
}

/* Runs the chain of `len` instructions from ins[i]. */
static void pfvm__fz_exec_chain(pfvm__fz_prog *p, int i, int len)
{
#ifdef PFVM__FZ_UCHAIN
    pfvm__fz_uop u[PFVM__FZ_MAX_CHAIN];
    int j;
    for (j = 0; j < len; j++) {
        const pfvm__fz_ins *in = &p->ins[i + j];
        u[j].code = in->uop;
        u[j].k = in->s1_fixed ? p->ptr[in->s[1]][0] : 0.0f;
        u[j].b = in->n_src > 1 && !in->s1_fixed ? p->ptr[in->s[1]] : NULL;
    }
    pfvm__fz_uchain(p->ptr[p->ins[i + len - 1].d], p->ptr[p->ins[i].s[0]], u, len);
#else
    (void)p;
    (void)i;
    (void)len;
#endif
}

/* The sinks a walk folds into and moves along: a part of a walk cut over
 * threads has copies of its own (their offsets), in the same order. */
#ifdef PFVM_NO_THREADS
#define PFVM__FZ_WSINKS(p) ((p)->sinks)
#else
#define PFVM__FZ_WSINKS(p) ((p)->walk_sinks)
#endif

/* Runs the instructions over the block, then folds the block's chunks
 * (runs of one row each) into the reductions. */
static void pfvm__fz_exec_block(pfvm__fz_prog *p)
{
    const float *src[PFVM_FUSE_MAX_SRC];
    int n = (int)stbds_arrlen(p->ins), ns = (int)stbds_arrlen(p->sinks), i, j, c;
    for (i = 0; i < n; i++) {
        const pfvm__fz_ins *in = &p->ins[i];
#ifdef PFVM__FUSE_FOLD
        if (in->fold) {
            pfvm__fz_exec_gelu(p, i);
            i += in->fold - 1;
            continue;
        }
#endif
        if (in->chain > 1) {
            pfvm__fz_exec_chain(p, i, in->chain);
            i += in->chain - 1;
            continue;
        }
        for (j = 0; j < in->n_src; j++)
            src[j] = p->ptr[in->s[j]];
        in->run(p->ptr[in->d], src, &in->p);
    }
    for (j = 0; j < ns; j++) {
        const pfvm__fz_sink *k = &PFVM__FZ_WSINKS(p)[j];
        const float *v = p->ptr[k->src];
        for (c = 0; c < p->n_chunks; c++)
            k->r.accum(k->acc + p->chunk_off[(size_t)j * PFVM_FUSE_BLOCK + c], k->st[0], v + p->chunk_at[c],
                       p->chunk_len[c]);
    }
    p->n_chunks = 0;
}

/* Records a chunk of the block being filled: m values from position `at`,
 * from column c of the current row (r merged dims). */
static void pfvm__fz_chunk(pfvm__fz_prog *p, int64_t at, int64_t m, int64_t c)
{
    int j, ns = (int)stbds_arrlen(p->sinks);
    for (j = 0; j < ns; j++)
        p->chunk_off[(size_t)j * PFVM_FUSE_BLOCK + p->n_chunks] = PFVM__FZ_WSINKS(p)[j].off + c * PFVM__FZ_WSINKS(p)[j].st[0];
    p->chunk_at[p->n_chunks] = at;
    p->chunk_len[p->n_chunks] = m;
    p->n_chunks++;
}

static void pfvm__fz_store_block(pfvm__fz_prog *p, pfvm_kctx *k, int64_t pos, int64_t m)
{
    int j;
    for (j = 0; j < p->n_out; j++)
        if (k->out[j] && p->out_reg[j] >= 0)
            pfvm__fz_store(k->out[j], pos, p->ptr[p->out_reg[j]], m);
}

/* A full block whose inputs are all within one row: float32 inputs read
 * in place (stride 1), float32 outputs computed in place. */
#if defined(__GNUC__)
#define PFVM__FZ_PREFETCH(a, w) __builtin_prefetch((a), (w))
#else
#define PFVM__FZ_PREFETCH(a, w) ((void)(a))
#endif

/* Asks for the cache lines of the block after the one at `a` (reading, or
 * writing with w = 1) while this block computes: the loop's compute and
 * its memory traffic then overlap. Only for walks of 256K elements or more
 * (beyond a core's L2; smaller ones stay cached and would pay for nothing)
 * and programs of PFVM__FZ_PREFETCH_STEPS kernel calls a block or more:
 * lighter ones are bound by memory, which the CPU's own prefetchers
 * already stream, and the prefetch instructions only cost (measured on
 * Zen 5, 4M floats: GELU's five calls 3.8 -> 3.3 ms with them; an 8-op
 * chain 0.79 -> 1.08 ms and swish's two calls 1.84 -> 2.20 ms). */
#define PFVM__FZ_PREFETCH_STEPS 4
static void pfvm__fz_prefetch_next(const float *a, int w)
{
    int e;
    for (e = 0; e < PFVM_FUSE_BLOCK; e += 16) {
        if (w)
            PFVM__FZ_PREFETCH(a + PFVM_FUSE_BLOCK + e, 1);
        else
            PFVM__FZ_PREFETCH(a + PFVM_FUSE_BLOCK + e, 0);
    }
}

/* `ahead`: the row holds another full block after this one. */
static void pfvm__fz_direct_block(pfvm__fz_prog *p, pfvm_kctx *k, int r, int64_t c, int64_t bpos, int ahead)
{
    int j;
    for (j = 0; j < p->n_ld; j++) {
        int64_t sj;
        float *reg;
        if (p->in_reg[j] < 0 || p->fixed[j])
            continue;
        sj = p->st[(size_t)j * PFVM_MAX_RANK + r - 1];
        reg = p->regs + (size_t)p->in_reg[j] * PFVM_FUSE_BLOCK;
        /* (the head's result shares an output's storage: copied first,
         * unless pfvm__fz_head_in_place) */
        if (sj == 1 && p->inp[j]->dtype == PFVM_FLOAT && (j < p->n_in || p->head_in_place)) {
            p->ptr[p->in_reg[j]] = (float *)p->inp[j]->data + p->off[j] + c;
            if (ahead)
                pfvm__fz_prefetch_next(p->ptr[p->in_reg[j]], 0);
        } else {
            p->ptr[p->in_reg[j]] = reg;
            pfvm__fz_load(reg, p->inp[j], p->off[j] + c * sj, sj, PFVM_FUSE_BLOCK);
        }
    }
    for (j = 0; j < p->n_out; j++)
        if (p->out_direct[j] && k->out[j] && k->out[j]->dtype == PFVM_FLOAT) {
            p->ptr[p->out_reg[j]] = (float *)k->out[j]->data + bpos;
            if (ahead)
                pfvm__fz_prefetch_next(p->ptr[p->out_reg[j]], 1);
        }
    pfvm__fz_chunk(p, 0, PFVM_FUSE_BLOCK, c);
    pfvm__fz_exec_block(p);
    for (j = 0; j < p->n_out; j++)
        if (k->out[j] && p->out_reg[j] >= 0 && !(p->out_direct[j] && k->out[j]->dtype == PFVM_FLOAT))
            pfvm__fz_store(k->out[j], bpos, p->ptr[p->out_reg[j]], PFVM_FUSE_BLOCK);
    for (j = 0; j < p->n_regs; j++)
        p->ptr[j] = p->regs + (size_t)j * PFVM_FUSE_BLOCK;
}

/* The shape of reduction k's result over the walk's shape S, and its
 * strides over S (0 along reduced axes); 0 when an axis is out of range. */
static int pfvm__fz_sink_shape(pfvm__fz_sink *k, const int64_t *S, int rank, int64_t *dims, int *out_rank,
                               int64_t *full_st)
{
    unsigned char mask[PFVM_MAX_RANK];
    int64_t s = 1;
    int i, d, r = 0;
    memset(mask, k->n_axes ? 0 : 1, sizeof mask);
    for (i = 0; i < k->n_axes; i++) {
        int64_t a = k->axes[i] < 0 ? k->axes[i] + rank : k->axes[i];
        if (a < 0 || a >= rank)
            return 0;
        mask[a] = 1;
    }
    k->count = 1;
    for (d = 0; d < rank; d++) {
        if (mask[d])
            k->count *= S[d];
        if (!mask[d] || k->keepdims)
            dims[r++] = mask[d] ? 1 : S[d];
    }
    *out_rank = r;
    for (d = rank - 1; d >= 0; d--) {
        full_st[d] = mask[d] || S[d] == 1 ? 0 : s;
        if (!mask[d])
            s *= S[d];
    }
    return 1;
}

/* Walks are cut inside rows only where threads split them: a build
 * without threads compiles the plain walk over whole rows. */
#ifdef PFVM_NO_THREADS
#define PFVM__FZ_CUT 0
#else
#define PFVM__FZ_CUT 1
#endif

/* Walks the flattened output positions [e0, e1) of the walk's shape
 * (r merged dims D, the last `inner` long): loads the inputs block by
 * block, runs the program and stores (or folds into the reductions).
 * Every element is computed by the same block kernels wherever a block
 * starts, so any cut of [0, total) gives the same bits. */
static void pfvm__fz_walk(pfvm__fz_prog *p, pfvm_kctx *k, int r, const int64_t *D, int64_t (*sst)[PFVM_MAX_RANK],
                          int64_t inner, int64_t total, int64_t e0, int64_t e1)
{
    /* a walk from 0 (every walk but a thread's part): no 64-bit division
     * (a library call on 32-bit cores) */
    int64_t idx[PFVM_MAX_RANK], row = PFVM__FZ_CUT && inner && e0 ? e0 / inner : 0;
    int64_t c0 = PFVM__FZ_CUT ? e0 - row * inner : 0, fill = 0, bpos = e0, pos, c, m;
    int ns = (int)stbds_arrlen(p->sinks), j, d;
    for (d = 0; d + 1 < r; d++) /* the row indices over D[0..r-2] */
        idx[d] = 0;
    for (d = r - 2; d >= 0 && row; d--) { /* the row e0 is in, as indices over D[0..r-2] */
        idx[d] = row % D[d];
        row /= D[d];
        for (j = 0; j < p->n_ld; j++)
            if (p->in_reg[j] >= 0)
                p->off[j] += idx[d] * p->st[(size_t)j * PFVM_MAX_RANK + d];
        for (j = 0; j < ns; j++)
            PFVM__FZ_WSINKS(p)[j].off += idx[d] * sst[j][d];
    }
    for (pos = e0 - c0; pos < e1; pos += inner) {
        int64_t end = PFVM__FZ_CUT && e1 - pos < inner ? e1 - pos : inner;
        for (c = PFVM__FZ_CUT && pos + c0 == e0 ? c0 : 0; c < end; c += m) {
            if (fill == 0 && end - c >= PFVM_FUSE_BLOCK) {
                m = PFVM_FUSE_BLOCK;
                pfvm__fz_direct_block(p, k, r, c, bpos,
                                      end - c >= 2 * PFVM_FUSE_BLOCK && total >= (1 << 18) &&
                                          p->n_steps >= PFVM__FZ_PREFETCH_STEPS);
                bpos += m;
                continue;
            }
            m = end - c < PFVM_FUSE_BLOCK - fill ? end - c : PFVM_FUSE_BLOCK - fill;
            for (j = 0; j < p->n_ld && r > 0; j++) {
                int64_t sj;
                if (p->in_reg[j] < 0 || p->fixed[j])
                    continue;
                sj = p->st[(size_t)j * PFVM_MAX_RANK + r - 1];
                pfvm__fz_load(p->regs + (size_t)p->in_reg[j] * PFVM_FUSE_BLOCK + fill, p->inp[j], p->off[j] + c * sj,
                              sj, m);
            }
            pfvm__fz_chunk(p, fill, m, c);
            fill += m;
            if (fill == PFVM_FUSE_BLOCK) {
                pfvm__fz_exec_block(p);
                pfvm__fz_store_block(p, k, bpos, fill);
                bpos += fill;
                fill = 0;
            }
        }
        c0 = 0;
        for (d = r - 2; d >= 0; d--) {
            for (j = 0; j < p->n_ld; j++)
                if (p->in_reg[j] >= 0)
                    p->off[j] += p->st[(size_t)j * PFVM_MAX_RANK + d];
            for (j = 0; j < ns; j++)
                PFVM__FZ_WSINKS(p)[j].off += sst[j][d];
            if (++idx[d] < D[d])
                break;
            for (j = 0; j < p->n_ld; j++)
                if (p->in_reg[j] >= 0)
                    p->off[j] -= p->st[(size_t)j * PFVM_MAX_RANK + d] * D[d];
            for (j = 0; j < ns; j++)
                PFVM__FZ_WSINKS(p)[j].off -= sst[j][d] * D[d];
            idx[d] = 0;
        }
    }
    if (fill) {
        pfvm__fz_exec_block(p);
        pfvm__fz_store_block(p, k, bpos, fill);
    }
}

#ifdef PFVM_NO_THREADS
#define pfvm__fz_walk_split(p, k, r, D, sst, inner, total, mem) ((void)(p), (void)(k), 0)
#define pfvm__fz_parts_bytes(p, k) ((void)(p), (void)(k), (size_t)0)
#else
/* Element-steps (positions x kernel calls per block) from which a walk is
 * cut over the threads: below, the region's cost (waking a worker, the
 * parts' registers) is more than half the work. */
#define PFVM__FZ_PAR_MIN 32768
#define PFVM__FZ_MAX_PARTS 64
/* The walk cut over the threads: part i walks [pfvm__fz_cut(a, i),
 * pfvm__fz_cut(a, i + 1)) in a copy of the program with registers,
 * pointers and offsets of its own (part 0 in the program itself). */
typedef struct pfvm__fz_par {
    pfvm__fz_prog *p;
    pfvm_kctx *k;
    int r;
    const int64_t *D;
    int64_t (*sst)[PFVM_MAX_RANK]; /* the reductions' strides over D */
    int64_t inner, total;
    char *mem;   /* parts 1..: their state, `per` bytes each, 64-byte aligned */
    size_t per;
    int parts;
    int64_t unit;  /* cuts fall on multiples of it: PFVM_FUSE_BLOCK, or a reduction's group */
    int64_t units; /* of `unit` positions, the last maybe partial */
} pfvm__fz_par;

/* Where part i starts (i = parts: the end), in whole units: blocks, so
 * each part's blocks are those one thread computes, or with reductions
 * whole groups of positions that fold into accumulators of their own.
 * Computed, not stored: an array of cuts would sit in the run's frame
 * (0.5 KB of a Cortex-M's stack) in every build with the thread hook. */
static int64_t pfvm__fz_cut(const pfvm__fz_par *a, int i)
{
    return i == a->parts ? a->total : a->units * i / a->parts * a->unit;
}

/* With reductions: the positions of a group fold into accumulators no
 * other group touches, so parts of whole groups fold each accumulator in
 * the order one thread does (the same bits). A group is the walk's
 * innermost dims that every reduction sums over (stride 0), where each
 * reduction keeps every dim outside its own such dims (stride not 0):
 * ReduceMean over H and W of N x C x H x W, a group H x W. 0: no such
 * cut (a reduction over an outer dim, or over everything). */
static int64_t pfvm__fz_sink_group(const pfvm__fz_prog *p, int r, const int64_t *D, int64_t (*sst)[PFVM_MAX_RANK])
{
    int ns = (int)stbds_arrlen(p->sinks), j, d, d0 = r;
    int64_t g = 1;
    for (j = 0; j < ns; j++) {
        int z = r;
        while (z > 0 && sst[j][z - 1] == 0)
            z--;
        for (d = 0; d < z; d++)
            if (sst[j][d] == 0)
                return 0;
        d0 = z < d0 ? z : d0;
    }
    if (d0 == 0)
        return 0;
    for (d = d0; d < r; d++)
        g *= D[d];
    return g;
}

/* The bytes of a part's state (registers, pointers, offsets, chunks), a
 * multiple of 64. */
static size_t pfvm__fz_part_bytes(const pfvm__fz_prog *p)
{
    size_t ns = (size_t)stbds_arrlen(p->sinks);
    size_t b = (size_t)(p->n_regs ? p->n_regs : 1) * PFVM_FUSE_BLOCK * sizeof(float) +
               sizeof(float *) * (size_t)(p->n_regs + 1) +
               sizeof(int64_t) * ((size_t)p->n_in + 2 + (2 + ns) * PFVM_FUSE_BLOCK) + sizeof(pfvm__fz_sink) * ns;
    return (b + 63) / 64 * 64;
}

/* Part i's state (i > 0) in a->mem, laid out as pfvm__fz_part_bytes
 * counts: registers, pointers, offsets, chunks, the sinks' copies. */
static void pfvm__fz_part_layout(const pfvm__fz_par *a, int i, pfvm__fz_prog *q)
{
    char *m = a->mem + a->per * (size_t)(i - 1);
    size_t regs = (size_t)(q->n_regs ? q->n_regs : 1) * PFVM_FUSE_BLOCK * sizeof(float);
    q->regs = (float *)m;
    q->ptr = (float **)(m + regs);
    q->off = (int64_t *)(q->ptr + q->n_regs + 1);
    q->chunk_at = q->off + q->n_in + 2;
    q->chunk_len = q->chunk_at + PFVM_FUSE_BLOCK;
    q->chunk_off = q->chunk_len + PFVM_FUSE_BLOCK;
    q->walk_sinks = (pfvm__fz_sink *)(q->chunk_off + PFVM_FUSE_BLOCK * stbds_arrlen(q->sinks));
}

static void pfvm__fz_part(void *ctx, int i)
{
    pfvm__fz_par *a = (pfvm__fz_par *)ctx;
    pfvm__fz_prog q = *a->p;
    int j;
    if (i > 0) {
        pfvm__fz_part_layout(a, i, &q); /* the sinks copied there by pfvm__fz_walk_split */
        for (j = 0; j < q.n_regs; j++)
            q.ptr[j] = q.regs + (size_t)j * PFVM_FUSE_BLOCK;
        for (j = 0; j < q.n_ld; j++) /* one-value inputs are loaded once per run */
            if (q.in_reg[j] >= 0 && q.fixed[j])
                memcpy(q.ptr[q.in_reg[j]], a->p->regs + (size_t)q.in_reg[j] * PFVM_FUSE_BLOCK,
                       PFVM_FUSE_BLOCK * sizeof(float));
    }
    for (j = 0; j < q.n_ld; j++)
        q.off[j] = 0;
    q.n_chunks = 0;
    pfvm__fz_walk(&q, a->k, a->r, a->D, a->sst, a->inner, a->total, pfvm__fz_cut(a, i), pfvm__fz_cut(a, i + 1));
}

/* The bytes of the parts' state of a walk cut over k's threads (64 to
 * align them), 0 with one thread. */
static size_t pfvm__fz_parts_bytes(const pfvm__fz_prog *p, pfvm_kctx *k)
{
    int parts = PFVM__KTHREADS(k) < PFVM__FZ_MAX_PARTS ? PFVM__KTHREADS(k) : PFVM__FZ_MAX_PARTS;
    return parts > 1 ? pfvm__fz_part_bytes(p) * (size_t)(parts - 1) + 64 : 0;
}

/* Cuts a walk over k's threads where its work pays for it (with
 * reductions: in whole groups, pfvm__fz_sink_group): 1 done, 0 not cut
 * (the caller walks it whole), -1 no memory for the parts (k->st says
 * why). mem: pfvm__fz_parts_bytes for the parts' state, or NULL to take
 * the executor's workspace (the kernel's one buffer: a walk with
 * reductions has its accumulators there, and the parts' state after). */
static int pfvm__fz_walk_split(pfvm__fz_prog *p, pfvm_kctx *k, int r, const int64_t *D,
                               int64_t (*sst)[PFVM_MAX_RANK], int64_t inner, int64_t total, char *mem)
{
    pfvm__fz_par a;
    int parts = PFVM__KTHREADS(k);
    if (parts <= 1 || (float)total * (float)(p->n_steps + 1) < (float)PFVM__FZ_PAR_MIN)
        return 0;
    if (parts > PFVM__FZ_MAX_PARTS)
        parts = PFVM__FZ_MAX_PARTS;
    a.unit = stbds_arrlen(p->sinks) ? pfvm__fz_sink_group(p, r, D, sst) : PFVM_FUSE_BLOCK;
    if (a.unit <= 0)
        return 0;
    a.units = (total + a.unit - 1) / a.unit;
    if (parts > a.units)
        parts = (int)a.units;
    if (parts <= 1)
        return 0;
    a.per = pfvm__fz_part_bytes(p);
    a.mem = mem ? mem : (char *)pfvm_kctx_scratch(k, a.per * (size_t)(parts - 1) + 64);
    if (!a.mem)
        return -1; /* k->st says why */
    a.mem += (64 - (size_t)((uintptr_t)a.mem % 64)) % 64;
    a.p = p, a.k = k, a.r = r, a.D = D, a.sst = sst, a.inner = inner, a.total = total;
    a.parts = parts;
    if (stbds_arrlen(p->sinks)) { /* each part moves offsets of its own, from 0 (set by pfvm__fz_run) */
        pfvm__fz_prog q = *p;
        int i;
        for (i = 1; i < parts; i++) {
            pfvm__fz_part_layout(&a, i, &q);
            memcpy(q.walk_sinks, p->sinks, sizeof(pfvm__fz_sink) * (size_t)stbds_arrlen(p->sinks));
        }
    }
    pfvm_kctx_parallel(k, parts, pfvm__fz_part, &a);
    return 1;
}
#endif

/* Runs p over the output. Returns PFVM_OK with *fallback set (and nothing
 * written) when this call is outside what the program handles: outputs of
 * unexpected shapes or of types it cannot store, inputs that do not
 * broadcast to the walk's shape. */
/* Does the head read group input j? */
static int pfvm__fz_head_reads(const pfvm__fz_prog *p, int j)
{
    int i;
    for (i = 0; i < p->head->n_inputs; i++)
        if (p->head_in[i] == j)
            return 1;
    return 0;
}

/* Are the instructions from i0 a clamp of register src into the one
 * output (Conv + Clip with bounds of one value each): a MAX micro-op, a
 * MIN micro-op or MAX then MIN, each on the result before it and a
 * one-value input that is not NaN, or one RELU micro-op, or nothing (src
 * is the output)? Then lohi gets the bounds (-inf, inf for a missing one)
 * and the form (lohi[2], as pfvm__kctx_services.clamp), and *clamped
 * whether there is a clamp. */
#if defined(PFVM__STORE_CLAMP) || defined(PFVM__STORE_RESIDUAL)
static int pfvm__fz_clamp_from(const pfvm__fz_prog *p, const pfvm_kctx *k, int i0, int src, float *lohi, int *clamped)
{
    int i, j, n = (int)stbds_arrlen(p->ins);
    lohi[0] = -INFINITY;
    lohi[1] = INFINITY;
    lohi[2] = 0.0f;
    *clamped = n > i0;
    if (n - i0 > 2)
        return 0;
    if (n - i0 == 1 && p->ins[i0].uop == PFVM_FUSE_U_RELU && p->ins[i0].n_src == 1 && p->ins[i0].s[0] == src) {
        lohi[0] = 0.0f; /* Relu (Conv + Relu): Relu's form, NaN and -0 become +0 */
        lohi[2] = 1.0f;
        return p->ins[i0].d == p->out_reg[0];
    }
    for (i = i0; i < n; i++) {
        const pfvm__fz_ins *in = &p->ins[i];
        const pfvm_tensor *b = NULL;
        float v;
        if ((in->uop != PFVM_FUSE_U_MAX && in->uop != PFVM_FUSE_U_MIN) || in->n_src != 2 || in->s[0] != src ||
            (i == i0 + 1 && (p->ins[i0].uop != PFVM_FUSE_U_MAX || in->uop != PFVM_FUSE_U_MIN)))
            return 0;
        for (j = 0; j < p->n_in; j++)
            if (p->in_reg[j] == in->s[1])
                b = k->in[j];
        if (!b || b->dtype != PFVM_FLOAT || pfvm_tensor_numel(b) != 1 || !b->data || b->nbytes < sizeof(float))
            return 0;
        memcpy(&v, b->data, sizeof v);
        if (v != v)
            return 0;
        lohi[in->uop == PFVM_FUSE_U_MIN] = v;
        src = in->d;
    }
    return src == p->out_reg[0];
}

/* The checks both store epilogues share: a head with the operator flag
 * `flag` whose result is the group's one float output, n instructions
 * after it (at least one). */
static int pfvm__fz_head_stores(const pfvm__fz_prog *p, const pfvm_kctx *k, unsigned flag, int n)
{
    return p->head && p->head->op && (p->head->op->flags & flag) && !p->tail && !stbds_arrlen(p->sinks) &&
           p->n_out == 1 && n >= 1 && k->services && p->n_ld > p->n_in && k->out[0] &&
           k->out[0]->data == p->head_buf.data && k->out[0]->dtype == PFVM_FLOAT;
}
#endif

/* Is everything after the head a clamp of its result into the one output
 * it writes (pfvm__fz_clamp_from)? Then the head can clamp as it stores.
 * Builds with PFVM__STORE_CLAMP only (src/ops/fused.h). */
static int pfvm__fz_head_clamp(const pfvm__fz_prog *p, const pfvm_kctx *k, float *lohi)
{
#ifdef PFVM__STORE_CLAMP
    int clamped;
    if (!pfvm__fz_head_stores(p, k, PFVM__OP_STORE_CLAMP, (int)stbds_arrlen(p->ins)))
        return 0;
    return pfvm__fz_clamp_from(p, k, 0, p->in_reg[p->n_in], lohi, &clamped) && clamped;
#else
    (void)p;
    (void)k;
    (void)lohi;
    return 0;
#endif
}

/* Is everything after the head an Add of a group input of the output's
 * shape (a residual connection: ADD micro-op on the head's result and
 * that input, either order), then nothing or a clamp (pfvm__fz_clamp_from)?
 * Then *res is that input's data, which the head adds as it stores,
 * lohi the clamp and *clamped whether there is one. The input must not
 * overlap the output (the head's stores would overwrite entries it has
 * yet to add). Builds with PFVM__STORE_RESIDUAL only. */
static int pfvm__fz_head_residual(const pfvm__fz_prog *p, const pfvm_kctx *k, float *lohi, int *clamped,
                                  const float **res)
{
#ifdef PFVM__STORE_RESIDUAL
    const pfvm__fz_ins *add = p->ins;
    const pfvm_tensor *o = k->out[0], *r = NULL;
    int j, hr, other;
    if (!pfvm__fz_head_stores(p, k, PFVM__OP_STORE_RESIDUAL, (int)stbds_arrlen(p->ins)) ||
        add->uop != PFVM_FUSE_U_ADD || add->n_src != 2)
        return 0;
    hr = p->in_reg[p->n_in];
    if (add->s[0] != hr && add->s[1] != hr)
        return 0;
    other = add->s[0] == hr ? add->s[1] : add->s[0];
    if (other == hr)
        return 0; /* the head's result added to itself */
    for (j = 0; j < p->n_in; j++)
        if (p->in_reg[j] >= 0 && p->in_reg[j] == other)
            r = k->in[j];
    if (!r || r->kind != PFVM_KIND_TENSOR || r->dtype != PFVM_FLOAT || !r->data || r->rank != o->rank ||
        (o->rank && memcmp(r->dims, o->dims, sizeof(int64_t) * (size_t)o->rank)) || r->nbytes < o->nbytes ||
        ((const char *)r->data < (const char *)o->data + o->nbytes &&
         (const char *)o->data < (const char *)r->data + o->nbytes))
        return 0;
    if (!pfvm__fz_clamp_from(p, k, 1, add->d, lohi, clamped))
        return 0;
    *res = (const float *)r->data;
    return 1;
#else
    (void)p;
    (void)k;
    (void)lohi;
    (void)clamped;
    (void)res;
    return 0;
#endif
}

/* Is everything after the head x * sigmoid(x) of its result x into the
 * one output (a SIGMOID micro-op on the head's result, then a MUL
 * micro-op of the head's result and that, either order: efficientnet's
 * SiLU)? Then the head stores that as it stores its result. Builds with
 * PFVM__STORE_SILU only. */
static int pfvm__fz_head_silu(const pfvm__fz_prog *p, const pfvm_kctx *k)
{
#ifdef PFVM__STORE_SILU
    const pfvm__fz_ins *sg = p->ins, *mul = p->ins + 1;
    int hr;
    if (!pfvm__fz_head_stores(p, k, PFVM__OP_STORE_SILU, (int)stbds_arrlen(p->ins)) || stbds_arrlen(p->ins) != 2)
        return 0;
    hr = p->in_reg[p->n_in];
    if (sg->uop != PFVM_FUSE_U_SIGMOID || sg->n_src != 1 || sg->s[0] != hr || sg->d == hr)
        return 0;
    if (mul->uop != PFVM_FUSE_U_MUL || mul->n_src != 2 || mul->d != p->out_reg[0])
        return 0;
    return (mul->s[0] == hr && mul->s[1] == sg->d) || (mul->s[0] == sg->d && mul->s[1] == hr);
#else
    (void)p;
    (void)k;
    return 0;
#endif
}

/* Runs the head's own kernel into head_buf (an output's storage); clamp:
 * NULL, or the bounds it clamps to as it stores (pfvm__fz_head_clamp);
 * res: NULL, or the residual it adds before (pfvm__fz_head_residual);
 * silu: nonzero, x * sigmoid(x) stored instead (pfvm__fz_head_silu). */
static pfvm_code pfvm__fz_run_head(pfvm__fz_prog *p, pfvm_kctx *k, const float *clamp, const float *res, int silu)
{
    const pfvm_tensor *in[16];
    pfvm_tensor *out[1];
    pfvm_kctx kk;
    pfvm__kctx_services sv;
    int i;
    if (p->head->n_inputs > 16)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_UNSUPPORTED, "fused head with %d inputs", p->head->n_inputs);
    for (i = 0; i < p->head->n_inputs; i++)
        in[i] = p->head_in[i] >= 0 ? k->in[p->head_in[i]] : NULL;
    out[0] = &p->head_buf;
    memset(&kk, 0, sizeof kk);
    kk.node = p->head;
    kk.n_in = p->head->n_inputs;
    kk.n_out = 1;
    kk.in = in;
    kk.out = out;
    kk.st = k->st;
    kk.exec = k->exec;
    kk.services = k->services;
    if ((clamp || res || silu) && k->services) {
        sv = *k->services;
        sv.clamp = clamp;
        sv.residual = res;
        sv.silu = silu;
        kk.services = &sv;
    }
    kk.max_total_bytes = k->max_total_bytes;
    kk.state = p->head_state;
    return p->head->op->kernel(&kk);
}

/* The head's prepare hook at bind, on the group's inputs and constants;
 * its state stays with the program. */
static pfvm_code pfvm__fz_prepare_head(pfvm__fz_prog *p, const pfvm_kctx *k, const pfvm_tensor *const *consts)
{
    const pfvm_tensor *in[16], *hc[16];
    pfvm_kctx kk;
    int i;
    if (!p || !p->head || !p->head->op || !p->head->op->prepare || p->head->n_inputs > 16)
        return PFVM_OK;
    for (i = 0; i < p->head->n_inputs; i++) {
        in[i] = p->head_in[i] >= 0 && p->head_in[i] < k->n_in ? k->in[p->head_in[i]] : NULL;
        hc[i] = p->head_in[i] >= 0 && p->head_in[i] < k->n_in && consts ? consts[p->head_in[i]] : NULL;
    }
    memset(&kk, 0, sizeof kk);
    kk.node = p->head;
    kk.n_in = p->head->n_inputs;
    kk.n_out = 1;
    kk.in = in;
    kk.st = k->st;
    kk.exec = k->exec;
    kk.services = k->services;
    kk.max_total_bytes = k->max_total_bytes;
    return p->head->op->prepare(&kk, hc, &p->head_state, &p->head_state_free);
}

/* Does some reader take the whole block of register r, a fixed input's
 * (one value for the run)? The variants of instructions whose second
 * source it is (fn_c, set for this run) read its first element only: a
 * group of constants (GELU's three) then fills one float each, not a
 * block each, at every run (on a Cortex-M4, 256 x 7 instructions apiece,
 * more than the mlp's GELU computes). */
static int pfvm__fz_fixed_read_all(const pfvm__fz_prog *p, int r)
{
    int n = (int)stbds_arrlen(p->ins), i, j;
    for (i = 0; i < n; i++) {
        const pfvm__fz_ins *in = &p->ins[i];
        for (j = 0; j < in->n_src; j++)
            if (in->s[j] == r && !(j == 1 && in->s1_fixed && in->fn_c && in->run == in->fn_c))
                return 1;
    }
    for (j = 0; j < p->n_out; j++)
        if (p->out_reg[j] == r)
            return 1;
    for (j = 0; j < (int)stbds_arrlen(p->sinks); j++)
        if (p->sinks[j].src == r)
            return 1;
    return 0;
}

/* Compares this run's shapes (each input's and output's presence, kind,
 * type, rank and dims, and whether the output is already allocated: all
 * that the walk's setup in pfvm__fz_run reads) with the last run's,
 * storing them: 1 when equal and that run's walk is kept (p->memo_ok). */
static int pfvm__fz_same_shapes(pfvm__fz_prog *p, const pfvm_kctx *k)
{
    int32_t *s = p->memo_sig, w, *head;
    int same = p->memo_ok, j, d, n = p->n_in + p->n_out;
    for (j = 0; j < n; j++) {
        const pfvm_tensor *t = j < p->n_in ? k->in[j] : k->out[j - p->n_in];
        int rank = t && t->rank > 0 && t->rank <= PFVM_MAX_RANK ? t->rank : 0;
        /* one word: kind, type, storage present, rank (-1..8 in 4 bits) */
        w = t ? (((int32_t)t->kind * 1024 + (int32_t)t->dtype) * 2 + (t->data != NULL)) * 16 + (t->rank & 15) : -1;
        head = s;
        same &= *s == w;
        *s++ = w;
        if (t && (t->rank < -1 || t->rank > 15)) /* beyond the word's 4 bits: not kept */
            *head = -2, same = 0;
        for (d = 0; d < rank; d++) {
            int64_t v = t->dims[d];
            if (v < 0 || v > INT32_MAX) { /* does not fit: not kept (no later run matches) */
                *head = -2;
                same = 0;
            }
            same &= *s == (int32_t)v;
            *s++ = (int32_t)v;
        }
    }
    return same;
}

/* Offsets to the start, and the one-value inputs' registers: their value
 * (fixed 1), or a whole block of it where a reader takes the block (2). */
static void pfvm__fz_load_fixed(pfvm__fz_prog *p)
{
    int j;
    for (j = 0; j < p->n_ld; j++) {
        p->off[j] = 0;
        if (p->in_reg[j] >= 0 && p->fixed[j])
            pfvm__fz_load(p->regs + (size_t)p->in_reg[j] * PFVM_FUSE_BLOCK, p->inp[j], 0, 0,
                          p->fixed[j] == 2 ? PFVM_FUSE_BLOCK : 1);
    }
}

/* The tail, in place on its output. */
static pfvm_code pfvm__fz_run_tail(pfvm__fz_prog *p, pfvm_kctx *k)
{
    const pfvm_tensor *in[1];
    pfvm_tensor *out[1];
    pfvm_kctx kk;
    if (!p->tail)
        return PFVM_OK;
    in[0] = out[0] = k->out[p->tail_out];
    memset(&kk, 0, sizeof kk);
    kk.node = p->tail;
    kk.n_in = kk.n_out = 1;
    kk.in = in;
    kk.out = out;
    kk.st = k->st;
    kk.exec = k->exec;
    kk.services = k->services;
    kk.max_total_bytes = k->max_total_bytes;
    return p->tail->op->kernel(&kk);
}

/* The head's result goes to the first float32 output that has its
 * storage (a planned one): 0 when there is none. */
static int pfvm__fz_head_out(pfvm__fz_prog *p, const pfvm_kctx *k)
{
    int j;
    for (j = 0; j < p->n_out; j++)
        if (k->out[j] && p->out_sink[j] < 0 && k->out[j]->dtype == PFVM_FLOAT && k->out[j]->data)
            break;
    if (j == p->n_out)
        return 0;
    p->head_buf = *k->out[j];
    p->head_buf.owns_data = p->head_buf.owns_strings = 0;
    p->inp[p->n_in] = &p->head_buf;
    return 1;
}

/* Runs the head; *done when that was the whole group (its result clamped,
 * the residual added and clamped, or SiLU applied in its store) or it
 * failed. */
static pfvm_code pfvm__fz_head_step(pfvm__fz_prog *p, pfvm_kctx *k, int *done)
{
    float lohi[3];
    const float *res = NULL;
    int clamped = 0, silu = 0, stored = pfvm__fz_head_clamp(p, k, lohi);
    pfvm_code rc;
    if (stored)
        clamped = 1;
    else
        stored = pfvm__fz_head_residual(p, k, lohi, &clamped, &res);
    if (!stored)
        stored = silu = pfvm__fz_head_silu(p, k);
    rc = pfvm__fz_run_head(p, k, clamped ? lohi : NULL, res, silu);
    /* clamped, the residual added (and clamped) or SiLU stored: nothing left to run */
    *done = rc || stored;
    return rc;
}

/* A run with the last run's shapes (no reductions): the outputs, the head,
 * the fixed inputs and the walk as that run's setup left them. */
static pfvm_code pfvm__fz_run_memo(pfvm__fz_prog *p, pfvm_kctx *k, int *fallback)
{
    int j;
    if (p->head && !pfvm__fz_head_out(p, k))
        return PFVM_OK;
    *fallback = 0;
    for (j = 0; j < p->n_out; j++) {
        pfvm_tensor *t = k->out[j];
        if (t && !t->data && pfvm_kctx_output(k, j, t->dtype, p->memo_rank, p->memo_S))
            return k->st ? k->st->code : PFVM_ERR_NOMEM;
    }
    if (p->head) {
        pfvm_code rc = pfvm__fz_head_step(p, k, &j);
        if (j)
            return rc;
    }
    pfvm__fz_load_fixed(p);
    p->n_chunks = 0;
    j = pfvm__fz_walk_split(p, k, p->memo_r, p->memo_D, NULL, p->memo_inner, p->memo_total, NULL);
    if (j < 0)
        return k->st ? k->st->code : PFVM_ERR_NOMEM;
    if (!j)
        pfvm__fz_walk(p, k, p->memo_r, p->memo_D, NULL, p->memo_inner, p->memo_total, 0, p->memo_total);
    return pfvm__fz_run_tail(p, k);
}

static pfvm_code pfvm__fz_run(pfvm__fz_prog *p, pfvm_kctx *k, int *fallback)
{
    int64_t S[PFVM_MAX_RANK], D[PFVM_MAX_RANK], total = 1, inner, n_acc = 0;
    int64_t sst[PFVM_MAX_RANK][PFVM_MAX_RANK];
    int ns = (int)stbds_arrlen(p->sinks), rank = -1, r = 0, i, j, d, same;
    double *acc;
#ifndef PFVM_NO_THREADS
    size_t acc_bytes;
#endif
    *fallback = 1;
    if (k->n_in != p->n_in || k->n_out != p->n_out || ns > PFVM_MAX_RANK)
        return PFVM_OK;
    for (j = 0; j < p->n_ld; j++)
        p->inp[j] = j < p->n_in ? k->in[j] : NULL;
    /* the shapes of the last run: its walk (no 64-bit shape math per run) */
    same = !ns && pfvm__fz_same_shapes(p, k);
    p->memo_ok = 0;
    for (j = 0; j < p->n_in && !same; j++) {
        const pfvm_tensor *t = k->in[j];
        if (p->in_reg[j] < 0 && !(p->head && pfvm__fz_head_reads(p, j)))
            continue;
        if (!t || t->kind != PFVM_KIND_TENSOR || t->dtype != p->in_dtype[j] || !pfvm__fz_loadable(t->dtype) ||
            t->rank < 0 || t->rank > PFVM_MAX_RANK)
            return PFVM_OK;
    }
    for (j = 0; j < p->n_in && !p->dry; j++)
        if (p->in_copy[j] && (!k->in[j] || (size_t)pfvm_tensor_numel(k->in[j]) * pfvm_dtype_size(k->in[j]->dtype) !=
                                                 p->in_copy_size[j] ||
                              (p->in_copy_size[j] && memcmp(k->in[j]->data, p->in_copy[j], p->in_copy_size[j]))))
            return PFVM_OK;
    if (same && !p->dry) {
        p->memo_ok = 1;
        return pfvm__fz_run_memo(p, k, fallback);
    }
    /* the walk's shape: a planned element-wise output's, else the used
     * inputs' broadcast */
    for (j = 0; j < p->n_out; j++) {
        const pfvm_tensor *t = k->out[j];
        if (!t)
            continue;
        if (t->kind != PFVM_KIND_TENSOR || !pfvm__fz_storable(t->dtype) ||
            (p->out_sink[j] >= 0 && !pfvm_dtype_is_float(t->dtype)))
            return PFVM_OK;
        if (t->data && rank < 0 && p->out_sink[j] < 0) {
            rank = t->rank;
            memcpy(S, t->dims, sizeof(int64_t) * (size_t)rank);
        }
    }
    if (rank < 0 && p->head)
        return PFVM_OK; /* the head writes into a planned output */
    if (p->tail && (!k->out[p->tail_out] || k->out[p->tail_out]->dtype != PFVM_FLOAT))
        return PFVM_OK;
    if (rank < 0) {
        rank = 0;
        for (j = 0; j < p->n_in; j++)
            if (p->in_reg[j] >= 0 && k->in[j]->rank > rank)
                rank = k->in[j]->rank;
        for (d = 0; d < rank; d++)
            S[d] = 1;
        for (j = 0; j < p->n_in; j++) {
            const pfvm_tensor *t = k->in[j];
            if (p->in_reg[j] < 0)
                continue;
            for (d = 0; d < t->rank; d++) {
                int64_t v = t->dims[d], *o = &S[rank - t->rank + d];
                if (v == 1)
                    continue;
                if (*o != 1 && *o != v)
                    return PFVM_OK;
                *o = v;
            }
        }
    }
    for (j = 0; j < p->n_out; j++) {
        const pfvm_tensor *t = k->out[j];
        if (t && t->data && p->out_sink[j] < 0 &&
            (t->rank != rank || (rank && memcmp(t->dims, S, sizeof(int64_t) * (size_t)rank))))
            return PFVM_OK;
    }
    /* reductions: result shapes and strides */
    for (j = 0; j < ns; j++) {
        pfvm__fz_sink *kk = &p->sinks[j];
        const pfvm_tensor *t = k->out[kk->out];
        int64_t dims[PFVM_MAX_RANK];
        int orank;
        if (!t || !pfvm__fz_sink_shape(kk, S, rank, dims, &orank, sst[j]))
            return PFVM_OK;
        if (t->data && (t->rank != orank || (orank && memcmp(t->dims, dims, sizeof(int64_t) * (size_t)orank))))
            return PFVM_OK;
    }
    /* the head's result goes to the first float32 output of shape S */
    if (p->head && !pfvm__fz_head_out(p, k))
        return PFVM_OK;
    /* every used input's strides over S */
    for (j = 0; j < p->n_ld; j++) {
        const pfvm_tensor *t = p->inp[j];
        int64_t *st = p->st + (size_t)j * PFVM_MAX_RANK, s = 1;
        int o;
        if (p->in_reg[j] < 0)
            continue;
        o = rank - t->rank;
        if (o < 0)
            return PFVM_OK;
        for (d = rank - 1; d >= 0; d--) {
            int64_t dim = d >= o ? t->dims[d - o] : 1;
            if (dim != 1 && dim != S[d])
                return PFVM_OK;
            st[d] = dim == 1 ? 0 : s;
            s *= dim;
        }
    }
    *fallback = 0;
    for (j = 0; j < p->n_out && !p->dry; j++) {
        pfvm_tensor *t = k->out[j];
        if (!t || t->data)
            continue;
        if (p->out_sink[j] < 0) {
            if (pfvm_kctx_output(k, j, t->dtype, rank, S))
                return k->st ? k->st->code : PFVM_ERR_NOMEM;
        } else {
            int64_t dims[PFVM_MAX_RANK], tmp[PFVM_MAX_RANK];
            int orank;
            pfvm__fz_sink_shape(&p->sinks[p->out_sink[j]], S, rank, dims, &orank, tmp);
            if (pfvm_kctx_output(k, j, t->dtype, orank, dims))
                return k->st ? k->st->code : PFVM_ERR_NOMEM;
        }
    }
    for (d = 0; d < rank; d++)
        if (!pfvm__mul_i64(total, S[d], &total))
            return pfvm__op_fail(k->st, k->node, PFVM_ERR_NOMEM, "output too large");
    if (p->head && !p->dry) {
        int done;
        pfvm_code rc = pfvm__fz_head_step(p, k, &done);
        if (done)
            return rc;
    }
    /* accumulators (the executor's workspace), set to their initial value */
    for (j = 0; j < ns; j++) {
        p->sinks[j].n_acc = pfvm_tensor_numel(k->out[p->sinks[j].out]);
        n_acc += p->sinks[j].n_acc;
    }
#ifdef PFVM_NO_THREADS
    acc = ns ? (double *)pfvm_kctx_scratch(k, sizeof(double) * (size_t)(n_acc ? n_acc : 1)) : NULL;
#else
    /* the workspace is one buffer: the parts' state of a walk cut over the
     * threads (pfvm__fz_walk_split) after the accumulators */
    acc_bytes = (sizeof(double) * (size_t)(n_acc ? n_acc : 1) + 63) / 64 * 64;
    acc = ns ? (double *)pfvm_kctx_scratch(k, acc_bytes + pfvm__fz_parts_bytes(p, k)) : NULL;
#endif
    if (ns && !acc)
        return k->st ? k->st->code : PFVM_ERR_NOMEM;
    for (j = 0; j < ns; j++) {
        int64_t o;
        p->sinks[j].acc = acc;
        for (o = 0; o < p->sinks[j].n_acc; o++)
            acc[o] = p->sinks[j].r.init;
        acc += p->sinks[j].n_acc;
    }
    if (total > 0) {
        /* merge dims every input and reduction walks contiguously (in
         * place: D and the strides' first r entries) */
        for (d = 0; d < rank; d++) {
            int merge = r > 0;
            if (S[d] == 1)
                continue;
            for (j = 0; j < p->n_ld && merge; j++) {
                const int64_t *st = p->st + (size_t)j * PFVM_MAX_RANK;
                if (p->in_reg[j] >= 0)
                    merge = st[r - 1] == st[d] * S[d];
            }
            for (j = 0; j < ns && merge; j++)
                merge = sst[j][r - 1] == sst[j][d] * S[d];
            for (j = 0; j < p->n_ld; j++) {
                int64_t *st = p->st + (size_t)j * PFVM_MAX_RANK;
                if (p->in_reg[j] >= 0)
                    st[merge ? r - 1 : r] = st[d];
            }
            for (j = 0; j < ns; j++)
                sst[j][merge ? r - 1 : r] = sst[j][d];
            if (merge)
                D[r - 1] *= S[d];
            else
                D[r++] = S[d];
        }
        inner = r ? D[r - 1] : 1;
        for (j = 0; j < ns; j++) {
            p->sinks[j].off = 0;
            p->sinks[j].st[0] = r ? sst[j][r - 1] : 0;
        }
        for (j = 0; j < p->n_ld; j++) {
            const int64_t *st = p->st + (size_t)j * PFVM_MAX_RANK;
            int fixed = 1;
            p->off[j] = 0;
            if (p->in_reg[j] < 0)
                continue;
            for (d = 0; d < r; d++)
                fixed &= st[d] == 0;
            p->fixed[j] = (unsigned char)fixed;
        }
        /* instructions whose second source is a fixed input: their variant */
        for (i = 0; i < (int)stbds_arrlen(p->ins); i++) {
            pfvm__fz_ins *in = &p->ins[i];
            in->run = in->fn;
            in->s1_fixed = 0;
            for (j = 0; in->n_src > 1 && j < p->n_ld; j++)
                if (p->in_reg[j] == in->s[1] && p->fixed[j]) {
                    in->s1_fixed = 1;
                    if (in->fn_c)
                        in->run = in->fn_c;
                }
        }
        for (j = 0; j < p->n_ld; j++) /* its one value; the whole block if a reader needs it */
            if (p->in_reg[j] >= 0 && p->fixed[j] && pfvm__fz_fixed_read_all(p, p->in_reg[j]))
                p->fixed[j] = 2;
        pfvm__fz_chains(p);
        p->head_in_place = pfvm__fz_head_in_place(p); /* with this run's folds */
        if (!ns) { /* kept for the next runs of these shapes */
            p->memo_ok = 1;
            p->memo_rank = rank;
            p->memo_r = r;
            memcpy(p->memo_S, S, sizeof S);
            memcpy(p->memo_D, D, sizeof D);
            p->memo_inner = inner;
            p->memo_total = total;
        }
        if (p->dry)
            return PFVM_OK;
        pfvm__fz_load_fixed(p);
        p->n_chunks = 0;
#ifndef PFVM_NO_THREADS
        p->walk_sinks = p->sinks;
#endif
        j = pfvm__fz_walk_split(p, k, r, D, sst, inner, total, ns ? (char *)p->sinks[0].acc + acc_bytes : NULL);
        if (j < 0)
            return k->st ? k->st->code : PFVM_ERR_NOMEM;
        if (!j)
            pfvm__fz_walk(p, k, r, D, sst, inner, total, 0, total);
    }
    if (p->dry)
        return PFVM_OK;
    if (p->tail) {
        pfvm_code rc = pfvm__fz_run_tail(p, k);
        if (rc != PFVM_OK)
            return rc;
    }
    /* the reductions' results */
    for (j = 0; PFVM__F64 && j < ns; j++) { /* none without double (pfvm_fuse_reduce) */
        const pfvm__fz_sink *kk = &p->sinks[j];
        pfvm_tensor *t = k->out[kk->out];
        int64_t o;
        for (o = 0; o < kk->n_acc; o++) {
            double v = kk->r.finish ? kk->r.finish(kk->acc[o], kk->count) : kk->acc[o];
            pfvm_red_store(t, o, v);
        }
    }
    return PFVM_OK;
}

/* ---- calls of model-local functions --------------------------------------------------- */

static const pfvm_function *pfvm__fz_callee(const pfvm_node *n)
{
    return n && n->graph ? pfvm_model_function(n->graph->model, n->domain, n->op_type) : NULL;
}

/* How deep calls nest from `g` (0: no calls); -1 past the limit (which
 * recursion always reaches). */
static int pfvm__fz_depth(const pfvm_model *m, const pfvm_graph *g, int depth)
{
    int i, best = 0;
    if (depth > PFVM__FZ_MAX_DEPTH)
        return -1;
    for (i = 0; i < (int)stbds_arrlen(g->nodes); i++) {
        const pfvm_node *n = g->nodes[i];
        const pfvm_function *f = pfvm_model_function(m, n->domain, n->op_type);
        int dd;
        if (!f || !f->body || pfvm_op_find(n->domain, n->op_type, n->opset ? n->opset : 1))
            continue;
        if ((dd = pfvm__fz_depth(m, f->body, depth + 1)) < 0)
            return -1;
        if (dd + 1 > best)
            best = dd + 1;
    }
    return best;
}

#ifndef PFVM_NO_SHAPE_INFERENCE
/* Inference through the body: its inputs get the call's input types (and
 * known contents), each body node is inferred in order, and the call's
 * outputs get the body outputs' results. */
static pfvm_code pfvm__fz_infer(pfvm_ictx *c)
{
    const pfvm_function *f = pfvm__fz_callee(c->node);
    const pfvm_graph *body;
    pfvm_ival *iv;
    const pfvm_ival **in = NULL;
    pfvm_ival **out = NULL;
    int nv, i, j;
    pfvm_code rc = PFVM_OK;
    if (!f || !f->body)
        return pfvm__fail(c->st, PFVM_ERR_INVALID, "no function '%s' in domain '%s'", c->node->op_type,
                          c->node->domain);
    body = f->body;
    if (pfvm__fz_depth(c->node->graph->model, body, 1) < 0)
        return pfvm__fail(c->st, PFVM_ERR_UNSUPPORTED, "function calls nest deeper than %d (recursion?)",
                          PFVM__FZ_MAX_DEPTH);
    if (c->n_in > (int)stbds_arrlen(body->inputs) || c->n_out > (int)stbds_arrlen(body->outputs))
        return pfvm__fail(c->st, PFVM_ERR_INVALID, "function '%s' takes %d inputs and gives %d outputs", f->name,
                          (int)stbds_arrlen(body->inputs), (int)stbds_arrlen(body->outputs));
    nv = (int)stbds_arrlen(body->values);
    iv = (pfvm_ival *)pfvm_ictx_alloc(c, sizeof *iv * (size_t)(nv + 1));
    if (!iv)
        return pfvm__fail(c->st, PFVM_ERR_NOMEM, "out of memory");
    memset(iv, 0, sizeof *iv * (size_t)(nv + 1));
    for (i = 0; i < c->n_in; i++)
        if (c->in[i])
            iv[body->inputs[i]->id] = *c->in[i];
    for (i = 0; !rc && i < (int)stbds_arrlen(body->nodes); i++) {
        const pfvm_node *n = body->nodes[i];
        if (!pfvm__arrsetlen(in, n->n_inputs + 1) || !pfvm__arrsetlen(out, n->n_outputs + 1)) {
            rc = pfvm__fail(c->st, PFVM_ERR_NOMEM, "out of memory");
            break;
        }
        for (j = 0; j < n->n_inputs; j++)
            in[j] = n->inputs[j] && n->inputs[j]->graph == body ? &iv[n->inputs[j]->id] : NULL;
        for (j = 0; j < n->n_outputs; j++)
            out[j] = n->outputs[j] ? &iv[n->outputs[j]->id] : NULL;
        rc = pfvm__infer_node(n, in, out, c->syms, c->arena, c->st);
    }
    stbds_arrfree(in);
    stbds_arrfree(out);
    if (rc) {
        pfvm__prefix(c->st, "in function '%s'", f->name);
        return rc;
    }
    for (j = 0; j < c->n_out; j++)
        if (c->out[j])
            *c->out[j] = iv[body->outputs[j]->id];
    /* body values without a type (a function read from a file) take what
     * this call gives them, like value_info of the body */
    for (i = 0; i < nv; i++) {
        pfvm_value *v = body->values[i];
        if (v->type.kind == PFVM_KIND_UNKNOWN && iv[i].type.kind == PFVM_KIND_TENSOR && !iv[i].type.elem)
            v->type = iv[i].type;
    }
    return PFVM_OK;
}
#endif

/* A call's kernel state: the compiled program (NULL when the body runs as
 * a subgraph) and whether compiling was tried. */
typedef struct pfvm__fz_state {
    pfvm__fz_prog *prog;
    int tried;
} pfvm__fz_state;

static void pfvm__fz_state_free(void *s)
{
    pfvm__fz_state *x = (pfvm__fz_state *)s;
    if (x)
        pfvm__fz_prog_free(x->prog);
    pfvm__free(x);
}

/* Runs the body as a subgraph and moves its outputs into the call's. */
static pfvm_code pfvm__fz_run_body(pfvm_kctx *k, const pfvm_function *f)
{
    pfvm_tensor **outs;
    int j;
    pfvm_code rc;
    if (!k->exec)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_UNSUPPORTED, "function '%s' needs an executor", f->name);
    if (f->n_attr_names || f->n_attr_defaults)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_UNSUPPORTED, "function '%s' takes attributes (not supported)",
                             f->name);
    if (k->n_in != (int)stbds_arrlen(f->body->inputs) || k->n_out > (int)stbds_arrlen(f->body->outputs))
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "function '%s' takes %d inputs, %d given", f->name,
                             (int)stbds_arrlen(f->body->inputs), k->n_in);
    for (j = 0; j < k->n_in; j++)
        if (!k->in[j])
            return pfvm__op_fail(k->st, k->node, PFVM_ERR_UNSUPPORTED, "function '%s': omitted input %d", f->name, j);
    outs = (pfvm_tensor **)pfvm__calloc((size_t)stbds_arrlen(f->body->outputs) + 1, sizeof *outs);
    if (!outs)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_NOMEM, "out of memory");
    rc = pfvm_kctx_subgraph(k, f->body, k->in, k->n_in, outs, (int)stbds_arrlen(f->body->outputs), k->st);
    for (j = 0; !rc && j < k->n_out; j++) {
        pfvm_tensor *t = k->out[j], *r = outs[j];
        if (!t || !r)
            continue;
        if (t->data && !t->owns_data) {
            /* planned storage: same type and shape, copied */
            if (r->kind != PFVM_KIND_TENSOR || r->dtype != t->dtype || r->rank != t->rank ||
                (r->rank && memcmp(r->dims, t->dims, sizeof(int64_t) * (size_t)r->rank)) || r->dtype == PFVM_STRING)
                rc = pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "output %d has a different shape than planned", j);
            else if (r->nbytes)
                memcpy(t->data, r->data, r->nbytes < t->nbytes ? r->nbytes : t->nbytes);
        } else {
            const char *name = t->name;
            pfvm_tensor_release(t);
            *t = *r;
            t->name = name;
            memset(r, 0, sizeof *r); /* moved */
        }
    }
    for (j = 0; j < (int)stbds_arrlen(f->body->outputs); j++)
        pfvm_tensor_free(outs[j]);
    pfvm__free(outs);
    return rc;
}

/* Runs a program that no executor keeps (a kernel called on its own). */
static pfvm_code pfvm__fz_run_once(pfvm_kctx *k, const pfvm_function *f, pfvm__fz_prog *p)
{
    int fallback = 1;
    pfvm_code rc = p ? pfvm__fz_run(p, k, &fallback) : PFVM_OK;
    pfvm__fz_prog_free(p);
    if (rc)
        return rc;
    return fallback ? pfvm__fz_run_body(k, f) : PFVM_OK;
}

PFVM_INTERNAL pfvm_code pfvm__fz_prepare(pfvm_kctx *k, const pfvm_dtype *in_dtype, const pfvm_tensor *const *consts,
                                         const pfvm_tensor *const *known)
{
    const pfvm_function *f = pfvm__fz_callee(k->node);
    pfvm__fz_state *s;
    pfvm__fz_prog *p = NULL;
    pfvm_code rc;
    int j;
    if (!f || !f->body || k->n_in > 64 || PFVM__FZ_NO_ENGINE)
        return PFVM_OK; /* the kernel says why, when it runs */
    rc = pfvm__fz_compile(f, in_dtype, consts, k->n_in, k->node->graph->model->syms, &p, k->st);
    if (!rc)
        rc = pfvm__fz_prepare_head(p, k, known);
    if (rc) {
        pfvm__fz_prog_free(p);
        return rc;
    }
    s = (pfvm__fz_state *)pfvm__calloc(1, sizeof *s);
    if (!s) {
        pfvm__fz_prog_free(p);
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_NOMEM, "out of memory");
    }
    s->prog = p;
    s->tried = 1;
    pfvm_kctx_set_state(k, s, pfvm__fz_state_free);
    if (p && !stbds_arrlen(p->sinks)) {
        /* the walk over the shapes bound, set up here rather than at the
         * first run (kept while they stay: pfvm__fz_same_shapes); nothing
         * when they are not known yet */
        int fallback;
        p->dry = 1;
        rc = pfvm__fz_run(p, k, &fallback);
        p->dry = 0;
        if (rc)
            return rc;
    }
#ifndef PFVM_NO_THREADS
    /* the parts' state of a walk cut over the threads (pfvm__fz_walk_split),
     * reserved now so that runs allocate nothing */
    if (p && !stbds_arrlen(p->sinks) && PFVM__KTHREADS(k) > 1) {
        int parts = PFVM__KTHREADS(k) < PFVM__FZ_MAX_PARTS ? PFVM__KTHREADS(k) : PFVM__FZ_MAX_PARTS;
        if (!pfvm_kctx_scratch(k, pfvm__fz_part_bytes(p) * (size_t)(parts - 1) + 64))
            return k->st ? k->st->code : PFVM_ERR_NOMEM;
    }
#endif
    if (p && stbds_arrlen(p->sinks)) {
        /* the reductions' accumulators, as pfvm__fz_run asks for them */
        int64_t n_acc = 0;
        for (j = 0; j < (int)stbds_arrlen(p->sinks); j++) {
            const pfvm_tensor *t = p->sinks[j].out < k->n_out ? k->out[p->sinks[j].out] : NULL;
            if (!t || !t->data)
                return PFVM_OK; /* not planned: sized on the first run */
            n_acc += pfvm_tensor_numel(t);
        }
#ifdef PFVM_NO_THREADS
        if (!pfvm_kctx_scratch(k, sizeof(double) * (size_t)(n_acc ? n_acc : 1)))
#else /* and the parts' state after them (pfvm__fz_run) */
        if (!pfvm_kctx_scratch(k, (sizeof(double) * (size_t)(n_acc ? n_acc : 1) + 63) / 64 * 64 +
                                      pfvm__fz_parts_bytes(p, k)))
#endif
            return k->st ? k->st->code : PFVM_ERR_NOMEM;
    }
    return PFVM_OK;
}

/* The function called, or NULL after a failure reported in k->st. */
static const pfvm_function *pfvm__fz_callee_of(pfvm_kctx *k)
{
    const pfvm_function *f = pfvm__fz_callee(k->node);
    if (f && f->body)
        return f;
    pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "no function '%s' in domain '%s'", k->node->op_type,
                  k->node->domain);
    return NULL;
}

static pfvm_code pfvm__fz_kernel(pfvm_kctx *k)
{
    /* looked up by name (strcmp over the model's functions, about 80
     * instructions a run on a Cortex-M4) only to compile or to fall back
     * on its body, not when an earlier run's program runs */
    const pfvm_function *f = NULL;
    pfvm__fz_state *s = (pfvm__fz_state *)k->state;
    int j, fallback = 1;
    /* compiled for other input types: compile again */
    for (j = 0; s && s->prog && j < s->prog->n_in && j < k->n_in; j++)
        if (k->in[j] && k->in[j]->dtype != s->prog->in_dtype[j])
            s->tried = 0;
    if (PFVM__FZ_NO_ENGINE || !s || !s->tried) {
        pfvm_dtype dt[64];
        pfvm__fz_prog *p = NULL;
        pfvm_code rc = PFVM_OK;
        if (!(f = pfvm__fz_callee_of(k)))
            return k->st ? k->st->code : PFVM_ERR_INVALID;
        if (PFVM__FZ_NO_ENGINE)
            return pfvm__fz_run_body(k, f);
        if (k->n_in <= 64) {
            for (j = 0; j < k->n_in; j++)
                dt[j] = k->in[j] && k->in[j]->kind == PFVM_KIND_TENSOR ? k->in[j]->dtype : PFVM_UNDEFINED;
            rc = pfvm__fz_compile(f, dt, k->in, k->n_in, k->node->graph->model->syms, &p, k->st);
        }
        if (rc)
            return rc;
        if (!s) {
            s = (pfvm__fz_state *)pfvm__calloc(1, sizeof *s);
            if (!s) {
                pfvm__fz_prog_free(p);
                return pfvm__op_fail(k->st, k->node, PFVM_ERR_NOMEM, "out of memory");
            }
            pfvm_kctx_set_state(k, s, pfvm__fz_state_free);
            if (k->state != s) /* freed: no executor keeps state */
                return pfvm__fz_run_once(k, f, p);
        }
        pfvm__fz_prog_free(s->prog);
        s->prog = p;
        s->tried = 1;
    }
    if (s->prog) {
        pfvm_code rc = pfvm__fz_run(s->prog, k, &fallback);
        if (rc)
            return rc;
    }
    if (!fallback)
        return PFVM_OK;
    if (!f && !(f = pfvm__fz_callee_of(k)))
        return k->st ? k->st->code : PFVM_ERR_INVALID;
    return pfvm__fz_run_body(k, f);
}

PFVM_INTERNAL const pfvm_op_def pfvm__op_function_call = {
    "(model-local function)", "", 1, 0, 0, -1, 0, -1, PFVM__INFER_HOOK(pfvm__fz_infer), pfvm__fz_kernel, NULL, PFVM_FUSE_OPAQUE,
    "float,double,float16,bfloat16,bool", NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL};

PFVM_INTERNAL int pfvm__fz_is_call(const pfvm_node *n)
{
    if (PFVM__NO_FUNCTIONS) /* nothing resolves to the call operator */
        return 0;
    return n->op == &pfvm__op_function_call;
}
