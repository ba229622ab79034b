/* ops/elementwise: unary math and activations (Gelu included), broadcasting
 * binary and variadic operators, comparisons and logic, Where, Clip, Cast.
 *
 * One engine serves them all. pfvm_ew_apply walks the output once with
 * every input's broadcast strides, after dropping size-1 dims and merging
 * dims that every input walks contiguously (so equal shapes are one run and
 * a scalar operand is a zero stride), and hands element runs to a span
 * function. Each operator is one scalar expression, written once: the
 * macros below turn it into a float32 loop the compiler inlines (the common
 * case: no per-element calls or dtype switches), a double function and,
 * where integers need their own rules, an int64 function. Other element
 * types are converted in small chunks to double or int64 and back, with one
 * dtype switch per chunk. */
#include "ops_common.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Kernels round the same in every version PFVM_DISPATCH builds: no
 * contraction into fused multiply-adds (clang's default; gcc's is set in
 * PFVM_DISPATCH). Restored to the command line's at the end of the file. */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

#define PFVM__EW_MAX_IN 8 /* inputs pfvm_ew_apply walks together */
#define PFVM__EW_ARITY 2  /* inputs of one scalar function */
#define PFVM__EW_CHUNK 32 /* elements converted per step on generic paths (stack use) */

/* ---- the broadcasting engine ---------------------------------------------------- */

/* The output's dims after dropping 1s and merging, and each input's stride
 * (in elements) along them; 0 where the input broadcasts. */
typedef struct pfvm__ew_iter {
    int rank;
    int64_t dims[PFVM_MAX_RANK];
    int64_t st[PFVM__EW_MAX_IN][PFVM_MAX_RANK];
} pfvm__ew_iter;

static pfvm_code pfvm__ew_fail(pfvm_kctx *k, pfvm_code code, const char *msg)
{
    return pfvm__op_fail(k->st, k->node, code, "%s", msg);
}

/* Input t's strides over out's dims; fails when t does not broadcast. */
static pfvm_code pfvm__ew_full_strides(pfvm_kctx *k, int j, const pfvm_tensor *t, const pfvm_tensor *out, int64_t *st)
{
    int d, off = out->rank - t->rank;
    int64_t s = 1;
    if (t->rank < 0 || t->rank > out->rank)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "input %d has rank %d, more than the output's %d", j,
                             t->rank, out->rank);
    for (d = out->rank - 1; d >= 0; d--) {
        int64_t dim = d >= off ? t->dims[d - off] : 1;
        if (dim != 1 && dim != out->dims[d])
            return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE,
                                 "input %d (dim %d = %lld) does not broadcast to the output (%lld)", j, d - off,
                                 (long long)dim, (long long)out->dims[d]);
        st[d] = dim == 1 ? 0 : s;
        s *= dim;
    }
    return PFVM_OK;
}

/* Kept out of pfvm_ew_apply: inlined, its full strides (512 bytes) would
 * stay on the stack under every element-wise loop. */
#if defined(__GNUC__)
#define PFVM__EW_NOINLINE __attribute__((noinline))
#else
#define PFVM__EW_NOINLINE
#endif

PFVM__EW_NOINLINE static pfvm_code pfvm__ew_iter_init(pfvm_kctx *k, pfvm__ew_iter *it, const pfvm_tensor *const *in,
                                                      int n, const pfvm_tensor *out)
{
    int64_t full[PFVM__EW_MAX_IN][PFVM_MAX_RANK];
    int j, d, r = 0;
    it->rank = 0;
    if (n < 0 || n > PFVM__EW_MAX_IN)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_UNSUPPORTED, "%d broadcast inputs (at most %d)", n,
                             PFVM__EW_MAX_IN);
    if (!out || out->rank < 0 || out->rank > PFVM_MAX_RANK)
        return pfvm__ew_fail(k, PFVM_ERR_SHAPE, "output has no shape");
    for (j = 0; j < n; j++) {
        if (!in[j])
            return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "broadcast input %d is missing", j);
        if (pfvm__ew_full_strides(k, j, in[j], out, full[j]))
            return k->st ? k->st->code : PFVM_ERR_SHAPE;
    }
    for (d = 0; d < out->rank; d++) {
        int merge = r > 0;
        if (out->dims[d] == 1)
            continue;
        /* dims a (outer) and b merge when every input's stride along a is
         * its stride along b times b's size */
        for (j = 0; j < n && merge; j++)
            merge = it->st[j][r - 1] == full[j][d] * out->dims[d];
        if (merge) {
            it->dims[r - 1] *= out->dims[d];
            for (j = 0; j < n; j++)
                it->st[j][r - 1] = full[j][d];
        } else {
            it->dims[r] = out->dims[d];
            for (j = 0; j < n; j++)
                it->st[j][r] = full[j][d];
            r++;
        }
    }
    it->rank = r;
    return PFVM_OK;
}

/* Spans are cut inside rows only where threads split a walk: a build
 * without threads compiles the plain walk over whole rows. */
#ifdef PFVM_NO_THREADS
#define PFVM__EW_CUT 0
#else
#define PFVM__EW_CUT 1
#endif

/* Calls fn over the output positions [e0, e1) of the walk `it` over n
 * inputs: one span per row of the merged dims, the first and last cut at
 * e0 and e1. */
static void pfvm__ew_walk(const pfvm__ew_iter *it, int n, pfvm_ew_fn fn, void *user, int64_t e0, int64_t e1)
{
    int64_t idx[PFVM_MAX_RANK], off[PFVM__EW_MAX_IN], at[PFVM__EW_MAX_IN], inner_st[PFVM__EW_MAX_IN], inner, row, c0,
        pos;
    int j, d;
    inner = it->rank ? it->dims[it->rank - 1] : 1;
    row = PFVM__EW_CUT ? e0 / inner : 0;
    c0 = PFVM__EW_CUT ? e0 - row * inner : 0;
    for (j = 0; j < n; j++) {
        off[j] = 0;
        inner_st[j] = it->rank ? it->st[j][it->rank - 1] : 0;
    }
    memset(idx, 0, sizeof idx);
    for (d = it->rank - 2; d >= 0 && row; d--) { /* the row e0 is in, as indices over the outer dims */
        idx[d] = row % it->dims[d];
        row /= it->dims[d];
        for (j = 0; j < n; j++)
            off[j] += idx[d] * it->st[j][d];
    }
    for (pos = e0 - c0; pos < e1; pos += inner) {
        int64_t end = PFVM__EW_CUT && e1 - pos < inner ? e1 - pos : inner;
        for (j = 0; PFVM__EW_CUT && j < n; j++)
            at[j] = off[j] + c0 * inner_st[j];
        fn(user, pos + c0, end - c0, PFVM__EW_CUT ? at : off, inner_st);
        c0 = 0;
        for (d = it->rank - 2; d >= 0; d--) {
            for (j = 0; j < n; j++)
                off[j] += it->st[j][d];
            if (++idx[d] < it->dims[d])
                break;
            for (j = 0; j < n; j++)
                off[j] -= it->st[j][d] * it->dims[d];
            idx[d] = 0;
        }
    }
}

#ifndef PFVM_NO_THREADS
/* Elements from which a float32 map is cut over the threads: below, waking
 * a worker costs more than half the work saves. Cuts fall on multiples of
 * PFVM__EW_PAR_ALIGN elements (whole cache lines: no line written by two
 * threads). */
#define PFVM__EW_PAR_MIN 32768
#define PFVM__EW_PAR_ALIGN 1024
#define PFVM__EW_MAX_PARTS 64

typedef struct pfvm__ew_par {
    const pfvm__ew_iter *it;
    int n, parts;
    pfvm_ew_fn fn;
    void *user;
    int64_t total;
} pfvm__ew_par;

static void pfvm__ew_part(void *ctx, int i)
{
    const pfvm__ew_par *a = (const pfvm__ew_par *)ctx;
    int64_t units = (a->total + PFVM__EW_PAR_ALIGN - 1) / PFVM__EW_PAR_ALIGN;
    int64_t e0 = units * i / a->parts * PFVM__EW_PAR_ALIGN, e1 = units * (i + 1) / a->parts * PFVM__EW_PAR_ALIGN;
    pfvm__ew_walk(a->it, a->n, a->fn, a->user, e0, e1 < a->total ? e1 : a->total);
}
#endif

/* pfvm_ew_apply, cut over k's threads where `split` and the size allow:
 * fn must then write only the span it is given (a pure element-wise
 * function). The spans' cuts never change an element's bits: fn computes
 * each element alone. */
static pfvm_code pfvm__ew_apply_split(pfvm_kctx *k, const pfvm_tensor *const *in, int n, pfvm_tensor *out,
                                      pfvm_ew_fn fn, void *user, int split)
{
    pfvm__ew_iter it;
    int64_t total;
    if (pfvm__ew_iter_init(k, &it, in, n, out))
        return k->st ? k->st->code : PFVM_ERR_SHAPE;
    total = pfvm_tensor_numel(out);
    if (total <= 0)
        return PFVM_OK;
#ifndef PFVM_NO_THREADS
    if (split && total >= PFVM__EW_PAR_MIN && PFVM__KTHREADS(k) > 1) {
        pfvm__ew_par a;
        int64_t units = (total + PFVM__EW_PAR_ALIGN - 1) / PFVM__EW_PAR_ALIGN;
        a.it = &it, a.n = n, a.fn = fn, a.user = user, a.total = total;
        a.parts = PFVM__KTHREADS(k) < PFVM__EW_MAX_PARTS ? PFVM__KTHREADS(k) : PFVM__EW_MAX_PARTS;
        a.parts = units < a.parts ? (int)units : a.parts;
        pfvm_kctx_parallel(k, a.parts, pfvm__ew_part, &a);
        return PFVM_OK;
    }
#else
    (void)split;
#endif
    pfvm__ew_walk(&it, n, fn, user, 0, total);
    return PFVM_OK;
}

PFVM_INTERNAL pfvm_code pfvm_ew_apply(pfvm_kctx *k, const pfvm_tensor *const *in, int n, pfvm_tensor *out,
                                      pfvm_ew_fn fn, void *user)
{
    return pfvm__ew_apply_split(k, in, n, out, fn, user, 0);
}

PFVM_INTERNAL pfvm_code pfvm_ew_broadcast_dims(pfvm_kctx *k, const pfvm_tensor *const *in, int n, int *rank,
                                               int64_t *dims)
{
    int j, d, r = 0;
    for (j = 0; j < n; j++) {
        if (!in[j] || in[j]->rank < 0 || in[j]->rank > PFVM_MAX_RANK)
            return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "input %d has no shape", j);
        if (in[j]->rank > r)
            r = in[j]->rank;
    }
    for (d = 0; d < r; d++)
        dims[d] = 1;
    for (j = 0; j < n; j++) {
        int off = r - in[j]->rank;
        for (d = 0; d < in[j]->rank; d++) {
            int64_t v = in[j]->dims[d];
            if (v == 1)
                continue;
            if (dims[off + d] != 1 && dims[off + d] != v)
                return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "cannot broadcast dimension %d: %lld vs %lld",
                                     off + d, (long long)dims[off + d], (long long)v);
            dims[off + d] = v;
        }
    }
    *rank = r;
    return PFVM_OK;
}

/* Gives output `out` (one of k->out) the broadcast shape of `in` when the
 * planner could not (data-dependent or string outputs). */
static pfvm_code pfvm__ew_shape_output(pfvm_kctx *k, pfvm_tensor *out, const pfvm_tensor *const *in, int n,
                                       pfvm_dtype dtype)
{
    int64_t dims[PFVM_MAX_RANK];
    int rank = 0, i;
    if (out->data)
        return PFVM_OK;
    for (i = 0; i < k->n_out && k->out[i] != out; i++) {
    }
    if (i == k->n_out)
        return pfvm__ew_fail(k, PFVM_ERR_INVALID, "output has no storage");
    if (pfvm_ew_broadcast_dims(k, in, n, &rank, dims))
        return k->st ? k->st->code : PFVM_ERR_SHAPE;
    return pfvm_kctx_output(k, i, dtype, rank, dims);
}

/* ---- element conversion (generic paths) ------------------------------------------ */

/* double -> int64 without undefined behaviour: NaN is 0, out of range saturates. */
static int64_t pfvm__ew_f2i(double v)
{
    if (v != v)
        return 0;
    if (v >= 9223372036854775807.0)
        return INT64_MAX;
    if (v <= -9223372036854775808.0)
        return INT64_MIN;
    return (int64_t)v;
}

static uint64_t pfvm__ew_f2u(double v)
{
    if (v >= 18446744073709551615.0)
        return UINT64_MAX;
    if (v >= 9223372036854775808.0)
        return (uint64_t)v;
    return (uint64_t)pfvm__ew_f2i(v); /* negative values wrap, like C's integer conversions */
}

static int pfvm__ew_numeric(pfvm_dtype t)
{
    return pfvm_dtype_is_float(t) || pfvm_dtype_is_int(t) || t == PFVM_BOOL;
}

#define PFVM__EW_GATHER(T, expr)                                  \
    do {                                                          \
        const T *s_ = (const T *)t->data + off;                   \
        for (e = 0; e < n; e++) {                                 \
            T v = s_[e * st];                                     \
            x[e] = (expr);                                        \
        }                                                         \
    } while (0)

/* x[e] = t[off + e*st] as double, e < n. */
static void pfvm__ew_load_f64(const pfvm_tensor *t, int64_t off, int64_t st, int64_t n, double *x)
{
    int64_t e;
    switch (t->dtype) {
    case PFVM_FLOAT: PFVM__EW_GATHER(float, (double)v); break;
    case PFVM_DOUBLE: PFVM__EW_GATHER(double, v); break;
    case PFVM_FLOAT16: PFVM__EW_GATHER(uint16_t, (double)pfvm_half_to_float(v)); break;
    case PFVM_BFLOAT16: PFVM__EW_GATHER(uint16_t, (double)pfvm_bf16_to_float(v)); break;
    case PFVM_INT8: PFVM__EW_GATHER(int8_t, (double)v); break;
    case PFVM_INT16: PFVM__EW_GATHER(int16_t, (double)v); break;
    case PFVM_INT32: PFVM__EW_GATHER(int32_t, (double)v); break;
    case PFVM_INT64: PFVM__EW_GATHER(int64_t, (double)v); break;
    case PFVM_UINT8: PFVM__EW_GATHER(uint8_t, (double)v); break;
    case PFVM_UINT16: PFVM__EW_GATHER(uint16_t, (double)v); break;
    case PFVM_UINT32: PFVM__EW_GATHER(uint32_t, (double)v); break;
    case PFVM_UINT64: PFVM__EW_GATHER(uint64_t, (double)v); break;
    case PFVM_BOOL: PFVM__EW_GATHER(uint8_t, v != 0 ? 1.0 : 0.0); break;
    default:
        for (e = 0; e < n; e++)
            x[e] = 0;
        break;
    }
}

/* x[e] = t[off + e*st] as int64 (uint64 keeps its bits), e < n. */
static void pfvm__ew_load_i64(const pfvm_tensor *t, int64_t off, int64_t st, int64_t n, int64_t *x)
{
    int64_t e;
    switch (t->dtype) {
    case PFVM_INT8: PFVM__EW_GATHER(int8_t, (int64_t)v); break;
    case PFVM_INT16: PFVM__EW_GATHER(int16_t, (int64_t)v); break;
    case PFVM_INT32: PFVM__EW_GATHER(int32_t, (int64_t)v); break;
    case PFVM_INT64: PFVM__EW_GATHER(int64_t, v); break;
    case PFVM_UINT8: PFVM__EW_GATHER(uint8_t, (int64_t)v); break;
    case PFVM_UINT16: PFVM__EW_GATHER(uint16_t, (int64_t)v); break;
    case PFVM_UINT32: PFVM__EW_GATHER(uint32_t, (int64_t)v); break;
    case PFVM_UINT64: PFVM__EW_GATHER(uint64_t, (int64_t)v); break;
    case PFVM_BOOL: PFVM__EW_GATHER(uint8_t, (int64_t)(v != 0)); break;
#if PFVM__F64 /* the integer path never sees floats (pfvm__ew_choose_path) */
    case PFVM_FLOAT: PFVM__EW_GATHER(float, pfvm__ew_f2i(v)); break;
    case PFVM_DOUBLE: PFVM__EW_GATHER(double, pfvm__ew_f2i(v)); break;
    case PFVM_FLOAT16: PFVM__EW_GATHER(uint16_t, pfvm__ew_f2i(pfvm_half_to_float(v))); break;
    case PFVM_BFLOAT16: PFVM__EW_GATHER(uint16_t, pfvm__ew_f2i(pfvm_bf16_to_float(v))); break;
#endif
    default:
        for (e = 0; e < n; e++)
            x[e] = 0;
        break;
    }
}

#define PFVM__EW_SCATTER(VT, T, expr)                             \
    do {                                                          \
        T *d_ = (T *)t->data + pos;                               \
        for (e = 0; e < n; e++) {                                 \
            VT v = x[e];                                          \
            d_[e] = (expr);                                       \
        }                                                         \
    } while (0)

/* t[pos + e] = x[e] converted to t's type, e < n. */
static void pfvm__ew_store_f64(pfvm_tensor *t, int64_t pos, int64_t n, const double *x)
{
    int64_t e;
    switch (t->dtype) {
    case PFVM_FLOAT: PFVM__EW_SCATTER(double, float, (float)v); break;
    case PFVM_DOUBLE: PFVM__EW_SCATTER(double, double, v); break;
    case PFVM_FLOAT16: PFVM__EW_SCATTER(double, uint16_t, pfvm_float_to_half((float)v)); break;
    case PFVM_BFLOAT16: PFVM__EW_SCATTER(double, uint16_t, pfvm_float_to_bf16((float)v)); break;
    case PFVM_INT8: PFVM__EW_SCATTER(double, int8_t, (int8_t)pfvm__ew_f2i(v)); break;
    case PFVM_INT16: PFVM__EW_SCATTER(double, int16_t, (int16_t)pfvm__ew_f2i(v)); break;
    case PFVM_INT32: PFVM__EW_SCATTER(double, int32_t, (int32_t)pfvm__ew_f2i(v)); break;
    case PFVM_INT64: PFVM__EW_SCATTER(double, int64_t, pfvm__ew_f2i(v)); break;
    case PFVM_UINT8: PFVM__EW_SCATTER(double, uint8_t, (uint8_t)pfvm__ew_f2i(v)); break;
    case PFVM_UINT16: PFVM__EW_SCATTER(double, uint16_t, (uint16_t)pfvm__ew_f2i(v)); break;
    case PFVM_UINT32: PFVM__EW_SCATTER(double, uint32_t, (uint32_t)pfvm__ew_f2i(v)); break;
    case PFVM_UINT64: PFVM__EW_SCATTER(double, uint64_t, pfvm__ew_f2u(v)); break;
    case PFVM_BOOL: PFVM__EW_SCATTER(double, uint8_t, v != 0); break;
    default: break;
    }
}

/* Same for int64 values; `u`: they are uint64 bit patterns. */
static void pfvm__ew_store_i64(pfvm_tensor *t, int64_t pos, int64_t n, const int64_t *x, int u)
{
    int64_t e;
    (void)u; /* PFVM_FLOAT32_ONLY: the float cases that read it are left out */
    switch (t->dtype) {
    case PFVM_INT8: PFVM__EW_SCATTER(int64_t, int8_t, (int8_t)v); break;
    case PFVM_INT16: PFVM__EW_SCATTER(int64_t, int16_t, (int16_t)v); break;
    case PFVM_INT32: PFVM__EW_SCATTER(int64_t, int32_t, (int32_t)v); break;
    case PFVM_INT64: PFVM__EW_SCATTER(int64_t, int64_t, v); break;
    case PFVM_UINT8: PFVM__EW_SCATTER(int64_t, uint8_t, (uint8_t)v); break;
    case PFVM_UINT16: PFVM__EW_SCATTER(int64_t, uint16_t, (uint16_t)v); break;
    case PFVM_UINT32: PFVM__EW_SCATTER(int64_t, uint32_t, (uint32_t)v); break;
    case PFVM_UINT64: PFVM__EW_SCATTER(int64_t, uint64_t, (uint64_t)v); break;
    case PFVM_BOOL: PFVM__EW_SCATTER(int64_t, uint8_t, v != 0); break;
#if PFVM__F64
    case PFVM_FLOAT: PFVM__EW_SCATTER(int64_t, float, u ? (float)(uint64_t)v : (float)v); break;
    case PFVM_DOUBLE: PFVM__EW_SCATTER(int64_t, double, u ? (double)(uint64_t)v : (double)v); break;
    case PFVM_FLOAT16: PFVM__EW_SCATTER(int64_t, uint16_t, pfvm_float_to_half(u ? (float)(uint64_t)v : (float)v)); break;
    case PFVM_BFLOAT16: PFVM__EW_SCATTER(int64_t, uint16_t, pfvm_float_to_bf16(u ? (float)(uint64_t)v : (float)v)); break;
#endif
    default: break;
    }
}

/* Strings are owned by their tensor: replaces element i with a copy of s. */
static pfvm_code pfvm__ew_set_string(pfvm_kctx *k, pfvm_tensor *t, int64_t i, const char *s)
{
    char **p = (char **)t->data + i;
    char *c = pfvm__strdup(s ? s : "");
    if (!c)
        return pfvm__ew_fail(k, PFVM_ERR_NOMEM, "out of memory");
    if (*p && t->owns_strings)
        pfvm__free(*p);
    *p = c;
    t->owns_strings = 1;
    return PFVM_OK;
}

/* ---- operators as scalar expressions ---------------------------------------------- */

/* Node attributes and bounds a scalar expression may use. */
/* The attributes' type: float in PFVM_FLOAT32_ONLY builds (float32 loops
 * read fa, fb, fg; only the double functions read these). */
#if PFVM__F64
typedef double pfvm__ew_real;
#else
typedef float pfvm__ew_real;
#endif

typedef struct pfvm__ew_params {
    pfvm__ew_real alpha, beta, gamma;
    int64_t lo, hi; /* Clip's integer bounds */
    int mode;       /* Mod: fmod; BitShift: right; Clip: 1 = has lo, 2 = has hi */
    float fa, fb, fg; /* alpha, beta, gamma for the float32 loops (pfvm__ew_params_floats) */
} pfvm__ew_params;

/* Fills the float copies, once per node, so that float32 loops convert
 * nothing from double per element (soft-float calls on Cortex-M4F). */
static void pfvm__ew_params_floats(pfvm__ew_params *p)
{
    p->fa = (float)p->alpha;
    p->fb = (float)p->beta;
    p->fg = (float)p->gamma;
}

typedef double (*pfvm__ew_f)(const double *x, const pfvm__ew_params *p);
/* `u`: the inputs are unsigned (their int64 values are uint64 bit patterns) */
typedef int64_t (*pfvm__ew_i)(const int64_t *x, const pfvm__ew_params *p, int u);
/* float32 loop: o[e] = op(a[e*sa], b[e*sb]) for e < len; o is float or bool */
typedef void (*pfvm__ew_s)(void *o, const float *a, int64_t sa, const float *b, int64_t sb, int64_t len,
                           const pfvm__ew_params *p);

typedef struct pfvm__ew_op {
    pfvm__ew_f f;      /* floats; integers too when i is NULL */
    pfvm__ew_i i;      /* integers and bools, when every input is one */
    pfvm__ew_s s;      /* float32 inputs and an s_out output */
    pfvm_dtype s_out;  /* PFVM_FLOAT or PFVM_BOOL */
    pfvm_fuse_kernel z; /* fused-loop kernel over z_in inputs, or NULL */
    pfvm_dtype z_in;   /* PFVM_FLOAT (float32 math) or PFVM_BOOL (logic) */
    pfvm_fuse_kernel zc; /* binary: z with a second operand that is one value (read from s[1][0]), or NULL */
    int uop;           /* the micro-op z is (PFVM_FUSE_U_*, src/ops/fused.h), or 0 */
    pfvm_fuse_kernel zg; /* Erf: z's GELU form (pfvm_fuse_gelu_form), or NULL */
} pfvm__ew_op;

/* One scalar expression over x0 (and x1) becomes three functions: the double
 * function pfvm__ew_f_NAME, the float32 loop pfvm__ew_s_NAME with output
 * type OT, and the fused-loop kernel pfvm__ew_z_NAME (src/ops/fused.h),
 * which computes one register block (bools as 0/1). CT is the type the
 * float32 loop and the kernel compute in: double in general, so a float32
 * result is the double result rounded once; float for the operators whose
 * float result is that same value (one IEEE operation on float operands,
 * comparisons, selections), which lets compilers vectorize them. An
 * expression names its compute type pfvm__ew_ct (for constants). */
/* The float32 loop of an operator computed in float: the fused kernel
 * over blocks gathered from the operands (a scalar operand filled once), so
 * that the loop vectorizes and gives exactly what a fused group gives (runs
 * shorter than 32 elements evaluate the same expression one by one). `o`
 * holds float or (osize 1) bool; it may be the first operand itself (then
 * each block is computed aside and copied). */
static void pfvm__ew_blocks(void *o, size_t osize, const float *a, int64_t sa, const float *b, int64_t sb, int64_t len,
                            const void *p, pfvm_fuse_kernel z, pfvm_fuse_kernel zc, int n_in)
{
    float xa[PFVM_FUSE_BLOCK], xb[PFVM_FUSE_BLOCK], y[PFVM_FUSE_BLOCK];
    const float *src[2];
    int64_t e0, e, n;
    /* a first operand of one value (sa 0: Mul(scale, x) of a
     * squeeze-excite) fills its block once, as the second does */
    int in_place = (sa == 1 || sa == 0) && (n_in < 2 || sb == 0 || sb == 1) && osize == sizeof(float) &&
                   (sa == 0 || (float *)o != a) && (n_in < 2 || sb == 0 || (float *)o != b);
    src[0] = xa;
    src[1] = xb;
    if (sa == 0)
        for (e = 0; e < PFVM_FUSE_BLOCK; e++)
            xa[e] = a[0];
    if (n_in > 1 && sb == 0 && zc) {
        z = zc; /* the same values, without reading a block of copies */
        xb[0] = b[0]; /* all zc reads: no block to fill (a broadcast row calls this once per row) */
    } else if (n_in < 2 || sb == 0)
        for (e = 0; e < PFVM_FUSE_BLOCK; e++)
            xb[e] = n_in < 2 ? 0.0f : b[0];
    for (e0 = 0; e0 < len; e0 += n) {
        n = len - e0 < PFVM_FUSE_BLOCK ? len - e0 : PFVM_FUSE_BLOCK;
        /* a full block of contiguous operands and a float32 output that is
         * not one of them: read and written in place; the last part of a
         * span longer than a block too, as the block ending with the span
         * (the elements it repeats get the same values again) */
        if (in_place && (n == PFVM_FUSE_BLOCK || len >= PFVM_FUSE_BLOCK)) {
            const float *d[2];
            int64_t at = n == PFVM_FUSE_BLOCK ? e0 : len - PFVM_FUSE_BLOCK;
            d[0] = sa ? a + at : xa;
            d[1] = n_in > 1 && sb == 1 ? b + at : xb;
            z((float *)o + at, d, p);
            continue;
        }
        if (sa == 1)
            memcpy(xa, a + e0, sizeof(float) * (size_t)n);
        else if (sa != 0)
            for (e = 0; e < n; e++)
                xa[e] = a[(e0 + e) * sa];
        if (n_in > 1 && sb != 0) {
            if (sb == 1)
                memcpy(xb, b + e0, sizeof(float) * (size_t)n);
            else
                for (e = 0; e < n; e++)
                    xb[e] = b[(e0 + e) * sb];
        }
        for (e = n; e < PFVM_FUSE_BLOCK && (sa != 0 || (n_in > 1 && sb != 0)); e++) { /* defined values in the unused lanes */
            if (sa != 0)
                xa[e] = 0.0f;
            if (n_in > 1 && sb != 0)
                xb[e] = 0.0f;
        }
        z(y, src, p);
        if (osize == sizeof(float))
            memcpy((float *)o + e0, y, sizeof(float) * (size_t)n);
        else
            for (e = 0; e < n; e++)
                ((uint8_t *)o)[e0 + e] = y[e] != 0;
    }
}

/* FAST: a pfvm_fuse_kernel for AVX-512 giving the same bits as expr, run
 * in place of the loop where the CPU has it, or NULL. */
#define PFVM__EW_UNARY_CT(name, OT, CT, expr) PFVM__EW_UNARY_CTF(name, OT, CT, expr, NULL)
#define PFVM__EW_UNARY_CTF(name, OT, CT, expr, FAST)                                                        \
    static double pfvm__ew_f_##name(const double *x, const pfvm__ew_params *p)                               \
    {                                                                                                        \
        typedef double pfvm__ew_ct;                                                                          \
        double x0 = x[0];                                                                                    \
        (void)p;                                                                                             \
        (void)sizeof(pfvm__ew_ct);                                                                           \
        return (double)(expr);                                                                               \
    }                                                                                                        \
    PFVM_DISPATCH static void pfvm__ew_z_##name(float *PFVM_RESTRICT y, const float *const *s, const void *pv) \
    {                                                                                                        \
        typedef CT pfvm__ew_ct;                                                                              \
        const float *a = s[0];                                                                               \
        const pfvm__ew_params *p = (const pfvm__ew_params *)pv;                                              \
        pfvm_fuse_kernel fast = FAST;                                                                        \
        int e;                                                                                               \
        (void)p;                                                                                             \
        (void)sizeof(pfvm__ew_ct);                                                                           \
        if (fast && pfvm__have_avx512()) {                                                                   \
            fast(y, s, pv);                                                                                  \
            return;                                                                                          \
        }                                                                                                    \
        for (e = 0; e < PFVM_FUSE_BLOCK; e++) {                                                              \
            CT x0 = a[e];                                                                                    \
            y[e] = (float)(expr);                                                                            \
        }                                                                                                    \
    }                                                                                                        \
    static void pfvm__ew_s_##name(void *o, const float *a, int64_t sa, const float *b, int64_t sb, int64_t len, \
                                  const pfvm__ew_params *p)                                                  \
    {                                                                                                        \
        typedef CT pfvm__ew_ct;                                                                              \
        OT *y = (OT *)o;                                                                                     \
        int64_t e;                                                                                           \
        (void)b;                                                                                             \
        (void)sb;                                                                                            \
        (void)p;                                                                                             \
        (void)sizeof(pfvm__ew_ct);                                                                           \
        if (sizeof(CT) == sizeof(float) && len >= 32) {                                                      \
            pfvm__ew_blocks(o, sizeof(OT), a, sa, b, sb, len, p, pfvm__ew_z_##name, NULL, 1);                      \
            return;                                                                                          \
        }                                                                                                    \
        if (sa == 1) {                                                                                       \
            for (e = 0; e < len; e++) {                                                                      \
                CT x0 = a[e];                                                                                \
                y[e] = (OT)(expr);                                                                           \
            }                                                                                                \
        } else {                                                                                             \
            for (e = 0; e < len; e++) {                                                                      \
                CT x0 = a[e * sa];                                                                           \
                y[e] = (OT)(expr);                                                                           \
            }                                                                                                \
        }                                                                                                    \
    }

/* A binary operator's span shorter than this runs its plain loop (the same
 * expression, so the same result): a block kernel always computes
 * PFVM_FUSE_BLOCK elements, and broadcasting rows (LayerNorm's [.., 32] by
 * [.., 1]) would pay for 1024 elements, padding included, per row. */
#define PFVM__EW_BLOCKS_MIN (PFVM_FUSE_BLOCK / 4)

/* A row and one value (Mul's squeeze-excite scale, [C, H, W] by [C, 1, 1]
 * either way round: rows of 49 or 196, under PFVM__EW_BLOCKS_MIN) in
 * chunks of 16 through local arrays, which compilers vectorize (the plain
 * loop, whose y may alias the row, stays scalar); the same expression per
 * element, the same bits. left: the value is the first operand (a[0], the
 * row b), else the second (the row a, b[0]). x86 only (where the kernels
 * dispatch): firmware keeps the plain loop. Returns the elements done. */
#ifdef PFVM_DISPATCH_CLONES
#define PFVM__EW_ROWSC(name, OT, CT, expr)                                                                    \
    PFVM_DISPATCH static int64_t pfvm__ew_r_##name(OT *y, const float *a, const float *b, int64_t len, int left, \
                                                   const pfvm__ew_params *p)                                  \
    {                                                                                                        \
        typedef CT pfvm__ew_ct;                                                                              \
        const float *row = left ? b : a;                                                                     \
        const CT one = left ? a[0] : b[0];                                                                   \
        int64_t e;                                                                                           \
        (void)p;                                                                                             \
        (void)sizeof(pfvm__ew_ct);                                                                           \
        for (e = 0; e + 16 <= len; e += 16) {                                                                \
            float t[16];                                                                                     \
            OT v[16];                                                                                        \
            int q;                                                                                           \
            memcpy(t, row + e, sizeof t);                                                                    \
            if (left)                                                                                        \
                for (q = 0; q < 16; q++) {                                                                   \
                    CT x0 = one, x1 = t[q];                                                                  \
                    v[q] = (OT)(expr);                                                                       \
                }                                                                                            \
            else                                                                                             \
                for (q = 0; q < 16; q++) {                                                                   \
                    CT x0 = t[q], x1 = one;                                                                  \
                    v[q] = (OT)(expr);                                                                       \
                }                                                                                            \
            memcpy(y + e, v, sizeof v);                                                                      \
        }                                                                                                    \
        return e;                                                                                            \
    }
#define PFVM__EW_ROWSC_RUN(name, y, a, b, len, left, p) pfvm__ew_r_##name(y, a, b, len, left, p)
#else
#define PFVM__EW_ROWSC(name, OT, CT, expr)
#define PFVM__EW_ROWSC_RUN(name, y, a, b, len, left, p) 0
#endif

#define PFVM__EW_BINARY_CT(name, OT, CT, expr)                                                               \
    PFVM__EW_ROWSC(name, OT, CT, expr)                                                                       \
    static double pfvm__ew_f_##name(const double *x, const pfvm__ew_params *p)                               \
    {                                                                                                        \
        typedef double pfvm__ew_ct;                                                                          \
        double x0 = x[0], x1 = x[1];                                                                         \
        (void)p;                                                                                             \
        (void)sizeof(pfvm__ew_ct);                                                                           \
        return (double)(expr);                                                                               \
    }                                                                                                        \
    PFVM_DISPATCH static void pfvm__ew_z_##name(float *PFVM_RESTRICT y, const float *const *s, const void *pv) \
    {                                                                                                        \
        typedef CT pfvm__ew_ct;                                                                              \
        const float *a = s[0];                                                                               \
        const float *b = s[1];                                                                               \
        const pfvm__ew_params *p = (const pfvm__ew_params *)pv;                                              \
        int e;                                                                                               \
        (void)p;                                                                                             \
        (void)sizeof(pfvm__ew_ct);                                                                           \
        for (e = 0; e < PFVM_FUSE_BLOCK; e++) {                                                              \
            CT x0 = a[e], x1 = b[e];                                                                         \
            y[e] = (float)(expr);                                                                            \
        }                                                                                                    \
    }                                                                                                        \
    PFVM_DISPATCH static void pfvm__ew_zc_##name(float *PFVM_RESTRICT y, const float *const *s, const void *pv) \
    {                                                                                                         \
        typedef CT pfvm__ew_ct;                                                                               \
        const float *a = s[0];                                                                                \
        const CT x1 = s[1][0];                                                                                \
        const pfvm__ew_params *p = (const pfvm__ew_params *)pv;                                               \
        int e;                                                                                                \
        (void)p;                                                                                              \
        (void)sizeof(pfvm__ew_ct);                                                                            \
        for (e = 0; e < PFVM_FUSE_BLOCK; e++) {                                                               \
            CT x0 = a[e];                                                                                     \
            y[e] = (float)(expr);                                                                             \
        }                                                                                                     \
    }                                                                                                         \
    static void pfvm__ew_s_##name(void *o, const float *a, int64_t sa, const float *b, int64_t sb, int64_t len, \
                                  const pfvm__ew_params *p)                                                  \
    {                                                                                                        \
        typedef CT pfvm__ew_ct;                                                                              \
        OT *y = (OT *)o;                                                                                     \
        int64_t e;                                                                                           \
        (void)p;                                                                                             \
        (void)sizeof(pfvm__ew_ct);                                                                           \
        if (sizeof(CT) == sizeof(float) && len >= PFVM__EW_BLOCKS_MIN) {                                     \
            pfvm__ew_blocks(o, sizeof(OT), a, sa, b, sb, len, p, pfvm__ew_z_##name, pfvm__ew_zc_##name, 2);                      \
            return;                                                                                          \
        }                                                                                                    \
        if (sa == 1 && sb == 1) {                                                                            \
            for (e = 0; e < len; e++) {                                                                      \
                CT x0 = a[e], x1 = b[e];                                                                     \
                y[e] = (OT)(expr);                                                                           \
            }                                                                                                \
        } else if (sa == 1 && sb == 0) {                                                                     \
            CT x1 = b[0];                                                                                    \
            for (e = PFVM__EW_ROWSC_RUN(name, y, a, b, len, 0, p); e < len; e++) {                              \
                CT x0 = a[e];                                                                                \
                y[e] = (OT)(expr);                                                                           \
            }                                                                                                \
        } else if (sa == 0 && sb == 1) {                                                                     \
            CT x0 = a[0];                                                                                    \
            for (e = PFVM__EW_ROWSC_RUN(name, y, a, b, len, 1, p); e < len; e++) {                           \
                CT x1 = b[e];                                                                                \
                y[e] = (OT)(expr);                                                                           \
            }                                                                                                \
        } else {                                                                                             \
            for (e = 0; e < len; e++) {                                                                      \
                CT x0 = a[e * sa], x1 = b[e * sb];                                                           \
                y[e] = (OT)(expr);                                                                           \
            }                                                                                                \
        }                                                                                                    \
    }

/* Computed in double, or (X) in float where that gives the same result. */
#define PFVM__EW_UNARY(name, OT, expr) PFVM__EW_UNARY_CT(name, OT, double, expr)
#define PFVM__EW_UNARY_X(name, OT, expr) PFVM__EW_UNARY_CT(name, OT, float, expr)
#define PFVM__EW_BINARY(name, OT, expr) PFVM__EW_BINARY_CT(name, OT, double, expr)
#define PFVM__EW_BINARY_X(name, OT, expr) PFVM__EW_BINARY_CT(name, OT, float, expr)

/* Integer expressions over int64 x0 (and x1), with `u` for unsigned inputs. */
#define PFVM__EW_INT1(name, expr)                                                       \
    static int64_t pfvm__ew_i_##name(const int64_t *x, const pfvm__ew_params *p, int u) \
    {                                                                                   \
        int64_t x0 = x[0];                                                              \
        (void)p;                                                                        \
        (void)u;                                                                        \
        return (int64_t)(expr);                                                         \
    }
#define PFVM__EW_INT2(name, expr)                                                       \
    static int64_t pfvm__ew_i_##name(const int64_t *x, const pfvm__ew_params *p, int u) \
    {                                                                                   \
        int64_t x0 = x[0], x1 = x[1];                                                   \
        (void)p;                                                                        \
        (void)u;                                                                        \
        return (int64_t)(expr);                                                         \
    }

/* Negation through uint64: INT64_MIN wraps instead of trapping. */
#define PFVM__EW_NEG(v) ((int64_t)(0u - (uint64_t)(v)))
#define PFVM__EW_LT(a, b) (u ? (uint64_t)(a) < (uint64_t)(b) : (a) < (b))

static double pfvm__ew_round_even(double v)
{
    double r = floor(v), d = v - r; /* exact: d in [0, 1) */
    if (d > 0.5 || (d == 0.5 && fmod(r, 2.0) != 0))
        r += 1.0;
    return r;
}

static double pfvm__ew_sigmoid(double v)
{
    return v >= 0 ? 1.0 / (1.0 + exp(-v)) : exp(v) / (1.0 + exp(v));
}

static double pfvm__ew_softplus(double v)
{
    return v > 0 ? v + log1p(exp(-v)) : log1p(exp(v));
}

static double pfvm__ew_fmod(double a, double b, int c_style)
{
    double r = fmod(a, b);
    /* fmod=0 takes the divisor's sign, like Python's % */
    if (!c_style && r != 0 && ((r < 0) != (b < 0)))
        r += b;
    return r;
}

/* NaN stays NaN; lo > hi gives hi, like numpy's clip */
static double pfvm__ew_clamp(double v, double lo, double hi)
{
    v = v < lo ? lo : v;
    return v > hi ? hi : v;
}

/* float32 exp, erf, tanh and sigmoid for the float32 loops and the fused
 * kernels: branch-free (selects only) so compilers vectorize them, within
 * 1.4 ulp of the correctly rounded result (sigmoid 2.5), with inf, NaN,
 * signed zeros and subnormal results handled. exp is Cephes' polynomial
 * after a Cody-Waite reduction, scaled by 2^k in two steps (subnormal
 * results round once); erf and tanh are odd polynomials near 0 and
 * 1 - exp(...) beyond (erf's coefficients are those of onnxruntime's
 * MLAS). The polynomials are evaluated in Estrin's form (powers r^2, r^4
 * and independent pairs) rather than Horner's: half the dependent steps,
 * so the vector loops are not bound by latency; each step is a fused
 * multiply-add (PFVM__EW_FMA), which on Zen 5 with AVX-512 makes erf 0.52
 * -> 0.33 ns per element in cache and x * sigmoid(x) 0.41 -> 0.31 (0.29
 * with sigmoid's one-step subnormal scaling, pfvm__ew_expnegf). Worst errors
 * against libm's double, over all 2^32 floats (tools/ulp_check.c): exp
 * 1.03 ulp, erf 1.10, tanh 1.33, sigmoid 2.40 (2.83 before it divided
 * e by 1 + e instead of multiplying e by 1 / (1 + e)); rounding every step
 * instead, over every 211th float: exp 0.995, erf 1.26, tanh 1.33. erf and sigmoid call exp through pfvm__ew_expneg*f, the same computation
 * specialized to the arguments they pass (no clamps or NaN selects they do
 * not need, 2^k from the rounding constant's bits): same results as
 * pfvm__ew_expf for every float (NaN payloads aside). Selects go through
 * pfvm__ew_sel: gcc does not if-convert a ?: whose arm it rewrote into
 * arithmetic that may trap, and then vectorizes nothing. */
#if defined(__GNUC__)
#define PFVM__EW_INLINE inline __attribute__((always_inline))
#else
#define PFVM__EW_INLINE inline
#endif

/* a * b + c rounded once, where that is one instruction (and in every
 * version PFVM_DISPATCH builds: the baseline one calls libm's fmaf, exact
 * too, so all of them give the same bits); a * b + c rounded twice on
 * targets without it (PFVM_EXACT_FMA asks for fmaf there as well: the same
 * bits as everywhere else, slowly). */
#if defined(PFVM_DISPATCH_CLONES) || defined(__FMA__) || defined(__ARM_FEATURE_FMA) || defined(PFVM_EXACT_FMA)
#if defined(__GNUC__)
#define PFVM__EW_FMA(a, b, c) __builtin_fmaf(a, b, c)
#else
#define PFVM__EW_FMA(a, b, c) fmaf(a, b, c)
#endif
#else
#define PFVM__EW_FMA(a, b, c) ((a) * (b) + (c))
#endif

static PFVM__EW_INLINE float pfvm__ew_bits_f(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* c ? a : b on the bits: both sides are computed, so compilers that keep
 * floating-point traps (the default) still see no control flow. */
static PFVM__EW_INLINE float pfvm__ew_sel(int c, float a, float b)
{
    uint32_t ua, ub, m = 0u - (uint32_t)(c != 0);
    memcpy(&ua, &a, sizeof ua);
    memcpy(&ub, &b, sizeof ub);
    return pfvm__ew_bits_f((ua & m) | (ub & ~m));
}

/* exp's constants, shared by the C functions and the AVX-512 sigmoid
 * kernel (which must give the same bits): log2(e), ln(2) in two parts
 * (Cody-Waite: HI has few bits, so k * HI is exact), and Cephes'
 * polynomial for |r| <= ln(2)/2, highest degree first. */
#define PFVM__EW_LOG2E 1.44269504088896341f
#define PFVM__EW_LN2_HI 0.693359375f
#define PFVM__EW_LN2_LO (-2.12194440e-4f)
#define PFVM__EW_EXP_P0 1.9875691500e-4f
#define PFVM__EW_EXP_P1 1.3981999507e-3f
#define PFVM__EW_EXP_P2 8.3334519073e-3f
#define PFVM__EW_EXP_P3 4.1665795894e-2f
#define PFVM__EW_EXP_P4 1.6666665459e-1f
#define PFVM__EW_EXP_P5 5.0000001201e-1f

/* exp(r) for |r| <= ln(2)/2: Cephes' polynomial in Estrin's form. */
static PFVM__EW_INLINE float pfvm__ew_exp_poly(float r)
{
    float r2 = r * r, p;
    p = PFVM__EW_FMA(PFVM__EW_FMA(PFVM__EW_EXP_P0, r, PFVM__EW_EXP_P1), r2,
                     PFVM__EW_FMA(PFVM__EW_EXP_P2, r, PFVM__EW_EXP_P3));
    p = PFVM__EW_FMA(p, r2, PFVM__EW_FMA(PFVM__EW_EXP_P4, r, PFVM__EW_EXP_P5));
    return PFVM__EW_FMA(p, r2, r) + 1.0f;
}

static PFVM__EW_INLINE float pfvm__ew_expf(float x)
{
    int nan = x != x;
    float xc = pfvm__ew_sel(nan, 0.0f, x), kf, r, p;
    int32_t k, k1;
    xc = pfvm__ew_sel(xc > 89.0f, 89.0f, xc);
    xc = pfvm__ew_sel(xc < -104.0f, -104.0f, xc);
    kf = PFVM__EW_FMA(xc, PFVM__EW_LOG2E, 12582912.0f); /* round to an integer */
    kf -= 12582912.0f;
    r = PFVM__EW_FMA(-kf, PFVM__EW_LN2_HI, xc);
    r = PFVM__EW_FMA(-kf, PFVM__EW_LN2_LO, r);
    p = pfvm__ew_exp_poly(r);
    k = (int32_t)kf; /* -150..129 */
    k1 = k / 2;
    p = p * pfvm__ew_bits_f((uint32_t)(k1 + 127) << 23) * pfvm__ew_bits_f((uint32_t)(k - k1 + 127) << 23);
    return pfvm__ew_sel(nan, x, p);
}

/* exp(-t) = p * 2^k with pfvm__ew_expf's reduction and polynomial: returns
 * p, and leaves c + k in *kb (c: a rounding constant 1.5 * 2^23 + bias, so
 * that the low bits of *kb hold k + bias). */
static PFVM__EW_INLINE float pfvm__ew_expneg_poly(float t, float c, float *kb)
{
    float kf, r;
    *kb = PFVM__EW_FMA(t, -PFVM__EW_LOG2E, c);
    kf = *kb - c;
    r = PFVM__EW_FMA(kf, -PFVM__EW_LN2_HI, -t);
    r = PFVM__EW_FMA(kf, -PFVM__EW_LN2_LO, r);
    return pfvm__ew_exp_poly(r);
}

/* exp(-t) for 0 <= t <= 104 (or NaN), as pfvm__ew_expf(-t) computes it
 * (the same reduction, polynomial and scaling, so the same results) with
 * what that range does not need left out: no clamps, no NaN select, and 2^k
 * read from the rounding constant's low bits instead of a conversion to
 * int. k is -150..0, so p * 2^k may be subnormal: p * 2^(k + 65) is
 * exact (normal), and the multiplication by 2^-65 rounds once, as
 * pfvm__ew_expf's two steps do. The constant is 1.5 * 2^23 + 192: even,
 * like expf's, so that ties round to the same k. */
#define PFVM__EW_EXPNEG_ROUND 12583104.0f
static PFVM__EW_INLINE float pfvm__ew_expnegf(float t)
{
    float kb, p = pfvm__ew_expneg_poly(t, PFVM__EW_EXPNEG_ROUND, &kb); /* 1.5 * 2^23 + 192 + k */
    uint32_t kk;
    memcpy(&kk, &kb, sizeof kk);
    /* the low 9 bits are 192 + k (42..192; NaN: anything, p is NaN): 2^(k + 65) */
    return p * pfvm__ew_bits_f(kk << 23) * 0x1p-65f;
}

/* exp(-t) for 0 <= t <= 18 (erf's tail): one scale step, 2^k straight from
 * the biased rounding constant (1.5 * 2^23 + 127 + k). Same results as
 * pfvm__ew_expf(-t). */
static PFVM__EW_INLINE float pfvm__ew_expneg18f(float t)
{
    float kb, p = pfvm__ew_expneg_poly(t, 12583039.0f, &kb);
    uint32_t kk;
    memcpy(&kk, &kb, sizeof kk);
    return p * pfvm__ew_bits_f(kk << 23);
}

/* |x| <= 0.921875: an odd polynomial; beyond, 1 - exp(-e(|x|)) with |x|
 * clamped to 3.925 (where that is 1.0f) and x's sign put on. A NaN goes
 * through the polynomial. */
static PFVM__EW_INLINE float pfvm__ew_erff(float x)
{
    float ax = fabsf(x), r = x * x, r2, p, q, q2, e;
    uint32_t ux, ue;
    r2 = r * r;
    p = PFVM__EW_FMA(PFVM__EW_FMA(-5.99104969e-4f, r, 4.99339588e-3f), r2,
                     PFVM__EW_FMA(-2.67667342e-2f, r, 1.12818025e-1f));
    p = PFVM__EW_FMA(p, r2, PFVM__EW_FMA(-3.76124859e-1f, r, 1.28379151e-1f));
    p = PFVM__EW_FMA(p, x, x);
#if defined(__arm__) && !defined(__aarch64__)
    /* scalar code (no lanes to keep in step): the tail only where it is
     * taken, the same result as the select below */
    if (!(ax > 0.921875f))
        return p;
#endif
    q = pfvm__ew_sel(ax <= 3.925f, ax, 3.925f); /* NaN: 3.925 */
    q2 = q * q;
    e = PFVM__EW_FMA(1.72948930e-5f, q2, PFVM__EW_FMA(-3.83208680e-4f, q, 3.88393435e-3f));
    e = PFVM__EW_FMA(e, q2 * q2,
                     PFVM__EW_FMA(PFVM__EW_FMA(-2.42545605e-2f, q, 1.06777847e-1f), q2,
                                  PFVM__EW_FMA(6.34846687e-1f, q, 1.28717512e-1f)));
    e = PFVM__EW_FMA(e, q, q);
    e = 1.0f - pfvm__ew_expneg18f(e);
    memcpy(&ux, &x, sizeof ux);
    memcpy(&ue, &e, sizeof ue);
    e = pfvm__ew_bits_f(ue | (ux & 0x80000000u));
    return pfvm__ew_sel(ax > 0.921875f, e, p);
}

static PFVM__EW_INLINE float pfvm__ew_tanhf(float x)
{
    float ax = fabsf(x), z = x * x, z2, p, t;
    z2 = z * z;
    p = PFVM__EW_FMA(PFVM__EW_FMA(-5.70498872745e-3f, z, 2.06390887954e-2f), z2,
                     PFVM__EW_FMA(-5.37397155531e-2f, z, 1.33314422036e-1f));
    p = PFVM__EW_FMA(p, z, -3.33332819422e-1f);
    p = PFVM__EW_FMA(p * z, x, x);
    p = pfvm__ew_sel(x == 0, x, p); /* keeps -0 */
    t = 1.0f - 2.0f / (pfvm__ew_expf(2.0f * ax) + 1.0f);
    t = pfvm__ew_sel(x < 0, -t, t);
    t = pfvm__ew_sel(x != x, x, t);
    return pfvm__ew_sel(ax < 0.625f, p, t);
}

/* sigmoid's |x| clamp, shared with the AVX-512 kernel */
#define PFVM__EW_SIGMOID_CLAMP 104.0f

/* 1 / (1 + e) for x >= 0, e / (1 + e) below, e = exp(-|x|): one division
 * either way (a select picks the numerator). NaN goes through exp(-|x|)
 * (not clamped: the comparison is false). */
static PFVM__EW_INLINE float pfvm__ew_sigmoidf(float x)
{
    float ax = fabsf(x), e;
    e = pfvm__ew_expnegf(pfvm__ew_sel(ax > PFVM__EW_SIGMOID_CLAMP, PFVM__EW_SIGMOID_CLAMP, ax));
    return pfvm__ew_sel(x < 0, e, 1.0f) / (1.0f + e);
}

/* float32 sigmoid over a block with AVX-512 intrinsics, the same steps as
 * pfvm__ew_sigmoidf in the same order, so the same bits (NaN payloads
 * aside; tools/ulp_check.c compares every float): gcc vectorizes the C
 * into about 0.22 ns per element on Zen 5, this takes about 0.16, mostly
 * because vscalefps scales by 2^k with one rounding in one instruction
 * where the C needs a shift and two multiplications (exact to 2^(k+65),
 * then 2^-65), and the clamp is one vminps. */
#if defined(PFVM_AVX512_KERNELS) && PFVM_FUSE_BLOCK % 16 == 0
#include <immintrin.h>
/* sigmoid of 16 floats (the kernel's body) */
__attribute__((target("avx512f"))) static inline __m512 pfvm__ew_sigmoid16_avx512(__m512 x)
{
    const __m512 one = _mm512_set1_ps(1.0f), c = _mm512_set1_ps(PFVM__EW_EXPNEG_ROUND);
    __m512 t, kf, r, r2, p, ex;
    __mmask16 neg = _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_LT_OQ);
    t = _mm512_min_ps(_mm512_set1_ps(PFVM__EW_SIGMOID_CLAMP), _mm512_abs_ps(x)); /* a NaN |x| stays */
    kf = _mm512_sub_ps(_mm512_fmadd_ps(t, _mm512_set1_ps(-PFVM__EW_LOG2E), c), c);
    r = _mm512_fmsub_ps(kf, _mm512_set1_ps(-PFVM__EW_LN2_HI), t);
    r = _mm512_fmadd_ps(kf, _mm512_set1_ps(-PFVM__EW_LN2_LO), r);
    r2 = _mm512_mul_ps(r, r);
    p = _mm512_fmadd_ps(_mm512_fmadd_ps(_mm512_set1_ps(PFVM__EW_EXP_P0), r, _mm512_set1_ps(PFVM__EW_EXP_P1)), r2,
                        _mm512_fmadd_ps(_mm512_set1_ps(PFVM__EW_EXP_P2), r, _mm512_set1_ps(PFVM__EW_EXP_P3)));
    p = _mm512_fmadd_ps(p, r2, _mm512_fmadd_ps(_mm512_set1_ps(PFVM__EW_EXP_P4), r, _mm512_set1_ps(PFVM__EW_EXP_P5)));
    p = _mm512_add_ps(_mm512_fmadd_ps(p, r2, r), one);
    ex = _mm512_scalef_ps(p, kf); /* p * 2^k, k = kf, rounded once */
    return _mm512_div_ps(_mm512_mask_blend_ps(neg, one, ex), _mm512_add_ps(one, ex));
}

__attribute__((target("avx512f"))) static void pfvm__ew_z_sigmoid_avx512(float *PFVM_RESTRICT y,
                                                                          const float *const *s, const void *pv)
{
    const float *a = s[0];
    int e;
    (void)pv;
    for (e = 0; e < PFVM_FUSE_BLOCK; e += 16)
        _mm512_storeu_ps(y + e, pfvm__ew_sigmoid16_avx512(_mm512_loadu_ps(a + e)));
}
#define PFVM__EW_SIGMOID_FAST pfvm__ew_z_sigmoid_avx512
#else
#define PFVM__EW_SIGMOID_FAST NULL
#endif

#ifdef PFVM__STORE_SILU
/* y[0..n) = y * sigmoid(y) in place (a SiLU after a Conv, which the
 * Conv's stores took over from the fused-loop engine,
 * pfvm__kctx_services.silu): the bits of Sigmoid then Mul with
 * pfvm__ew_sigmoidf (portable, AVX2), or within a few ulp of them with
 * AVX-512 (pfvm__ew_silu16_avx512, masked ends). */
#if defined(PFVM_AVX512_KERNELS) && PFVM_FUSE_BLOCK % 16 == 0
/* x * sigmoid(x) of 16 floats as x / (1 + exp(-x)): exp(-x) by the
 * steps of pfvm__ew_sigmoid16_avx512's exp(-|x|) on x itself, clamped to
 * +-104 (an exp(104) overflows to inf: x / inf is -0 below about -88.7,
 * where the true value is under 1e-36), then one division. No |x|, sign
 * mask, select or product: 17 operations where Sigmoid then Mul takes 21,
 * about 8% less time per element on this host. Within 2 ulp of
 * x / (1 + exp(-x)) in double over -80..80 (tests/test_gemm.c allows 4),
 * within a few of Sigmoid then Mul (tests/test_fused.c): not its bits. */
__attribute__((target("avx512f"))) static inline __m512 pfvm__ew_silu16_avx512(__m512 x)
{
    const __m512 one = _mm512_set1_ps(1.0f), c = _mm512_set1_ps(PFVM__EW_EXPNEG_ROUND);
    __m512 t, kf, r, r2, p, ex;
    /* max then min with x second: a NaN x stays NaN */
    t = _mm512_min_ps(_mm512_set1_ps(PFVM__EW_SIGMOID_CLAMP),
                      _mm512_max_ps(_mm512_set1_ps(-PFVM__EW_SIGMOID_CLAMP), x));
    kf = _mm512_sub_ps(_mm512_fmadd_ps(t, _mm512_set1_ps(-PFVM__EW_LOG2E), c), c);
    r = _mm512_fnmsub_ps(kf, _mm512_set1_ps(PFVM__EW_LN2_HI), t); /* -t - k ln2, in two parts */
    r = _mm512_fnmadd_ps(kf, _mm512_set1_ps(PFVM__EW_LN2_LO), r);
    r2 = _mm512_mul_ps(r, r);
    p = _mm512_fmadd_ps(_mm512_fmadd_ps(_mm512_set1_ps(PFVM__EW_EXP_P0), r, _mm512_set1_ps(PFVM__EW_EXP_P1)), r2,
                        _mm512_fmadd_ps(_mm512_set1_ps(PFVM__EW_EXP_P2), r, _mm512_set1_ps(PFVM__EW_EXP_P3)));
    p = _mm512_fmadd_ps(p, r2, _mm512_fmadd_ps(_mm512_set1_ps(PFVM__EW_EXP_P4), r, _mm512_set1_ps(PFVM__EW_EXP_P5)));
    p = _mm512_add_ps(_mm512_fmadd_ps(p, r2, r), one);
    ex = _mm512_scalef_ps(p, kf); /* exp(-x) */
    return _mm512_div_ps(x, _mm512_add_ps(one, ex));
}

__attribute__((target("avx512f"))) static void pfvm__ew_silu_avx512(float *y, ptrdiff_t n)
{
    ptrdiff_t e;
    for (e = 0; e + 32 <= n; e += 32) { /* two independent chains */
        __m512 x0 = _mm512_loadu_ps(y + e), x1 = _mm512_loadu_ps(y + e + 16);
        _mm512_storeu_ps(y + e, pfvm__ew_silu16_avx512(x0));
        _mm512_storeu_ps(y + e + 16, pfvm__ew_silu16_avx512(x1));
    }
    for (; e + 16 <= n; e += 16)
        _mm512_storeu_ps(y + e, pfvm__ew_silu16_avx512(_mm512_loadu_ps(y + e)));
    if (e < n) {
        __mmask16 mk = (__mmask16)((1u << (n - e)) - 1u);
        _mm512_mask_storeu_ps(y + e, mk, pfvm__ew_silu16_avx512(_mm512_maskz_loadu_ps(mk, y + e)));
    }
}
#endif

PFVM_DISPATCH static void pfvm__ew_silu_c(float *y, ptrdiff_t n)
{
    ptrdiff_t e = 0;
    int j;
    for (; e + 16 <= n; e += 16) /* blocks of fixed length, which compilers vectorize */
        for (j = 0; j < 16; j++)
            y[e + j] = y[e + j] * pfvm__ew_sigmoidf(y[e + j]);
    for (; e < n; e++)
        y[e] = y[e] * pfvm__ew_sigmoidf(y[e]);
}

#if defined(PFVM_AVX512_KERNELS) && PFVM_FUSE_BLOCK % 16 == 0
/* A GEMM tile's rows of 32 (its full width): two vectors per row, the
 * rows' chains independent, in one loop (the division's latency overlaps
 * across rows rather than ending each call). */
__attribute__((target("avx512f"))) static void pfvm__ew_silu_rows32_avx512(float *y, int64_t ld, int64_t rows)
{
    int64_t i;
    for (i = 0; i < rows; i++) {
        float *r = y + i * ld;
        __m512 x0 = _mm512_loadu_ps(r), x1 = _mm512_loadu_ps(r + 16);
        _mm512_storeu_ps(r, pfvm__ew_silu16_avx512(x0));
        _mm512_storeu_ps(r + 16, pfvm__ew_silu16_avx512(x1));
    }
}
#endif

PFVM_INTERNAL void pfvm_ew_silu_rows(float *y, int64_t ld, int64_t rows, ptrdiff_t n)
{
    int64_t i;
#if defined(PFVM_AVX512_KERNELS) && PFVM_FUSE_BLOCK % 16 == 0
    if (pfvm__have_avx512()) {
        if (n == 32) {
            pfvm__ew_silu_rows32_avx512(y, ld, rows);
            return;
        }
        for (i = 0; i < rows; i++)
            pfvm__ew_silu_avx512(y + i * ld, n);
        return;
    }
#endif
    for (i = 0; i < rows; i++)
        pfvm__ew_silu_c(y + i * ld, n);
}
#endif

/* f(x) in the compute type: the float32 version above, or libm's double. */
#define PFVM__EW_MATH(ff, df, x) \
    (sizeof(pfvm__ew_ct) == sizeof(float) ? (pfvm__ew_ct)pfvm__ew_##ff((float)(x)) : (pfvm__ew_ct)df((double)(x)))
#define PFVM__EW_MATH2(ff, df, x, y)                                                                    \
    (sizeof(pfvm__ew_ct) == sizeof(float) ? (pfvm__ew_ct)pfvm__ew_##ff((float)(x), (float)(y))         \
                                          : (pfvm__ew_ct)df((double)(x), (double)(y)))
/* a constant, and the node's alpha, beta, gamma, in the compute type */
#define PFVM__EW_C(c) ((pfvm__ew_ct)(c))
#define PFVM__EW_P(f, d) (sizeof(pfvm__ew_ct) == sizeof(float) ? (pfvm__ew_ct)p->f : (pfvm__ew_ct)p->d)
#define PFVM__EW_PA PFVM__EW_P(fa, alpha)
#define PFVM__EW_PB PFVM__EW_P(fb, beta)
#define PFVM__EW_PG PFVM__EW_P(fg, gamma)

/* libm's float functions where they are exact (sqrtf, floorf, ceilf, fmodf,
 * fminf, fmaxf: the same bits everywhere) or the only float32 version pfvm
 * has (the rest, not bit-identical between C libraries: glibc 2.36's worst
 * over every 2111th float, tools/ulp_check.c: logf 0.76 ulp, sinf/cosf
 * 0.56, tanf 0.91, asinf/acosf/atanf 0.85, sinhf/coshf 1.62, asinhf 1.48,
 * acoshf 1.80, atanhf 1.55, expm1f 0.76; softplus below 1.48). */
static float pfvm__ew_sqrtf(float x) { return sqrtf(x); }
static float pfvm__ew_floorf(float x) { return floorf(x); }
static float pfvm__ew_ceilf(float x) { return ceilf(x); }
static float pfvm__ew_fabsf(float x) { return fabsf(x); }
static float pfvm__ew_logf(float x) { return logf(x); }
static float pfvm__ew_sinf(float x) { return sinf(x); }
static float pfvm__ew_cosf(float x) { return cosf(x); }
static float pfvm__ew_tanf(float x) { return tanf(x); }
static float pfvm__ew_asinf(float x) { return asinf(x); }
static float pfvm__ew_acosf(float x) { return acosf(x); }
static float pfvm__ew_atanf(float x) { return atanf(x); }
static float pfvm__ew_sinhf(float x) { return sinhf(x); }
static float pfvm__ew_coshf(float x) { return coshf(x); }
static float pfvm__ew_asinhf(float x) { return asinhf(x); }
static float pfvm__ew_acoshf(float x) { return acoshf(x); }
static float pfvm__ew_atanhf(float x) { return atanhf(x); }
static float pfvm__ew_expm1f(float x) { return expm1f(x); }
static float pfvm__ew_fminf(float x, float y) { return fminf(x, y); }
static float pfvm__ew_fmaxf(float x, float y) { return fmaxf(x, y); }
/* x^2 is x*x (correctly rounded, as the exact square rounded once), not
 * libm's powf, which may miss by an ulp: the fused loops square with a
 * multiply (pfvm__ew_k_pow_fuse), and both paths must give the same bits. */
static float pfvm__ew_powf(float x, float y) { return y == 2.0f ? x * x : powf(x, y); }

PFVM_INTERNAL float pfvm_ew_expf(float x)
{
    return pfvm__ew_expf(x);
}

PFVM_INTERNAL float pfvm_ew_logf(float x)
{
    return logf(x);
}

/* round half to even: floorf and the subtraction are exact */
static float pfvm__ew_round_evenf(float v)
{
    float r = floorf(v), d = v - r;
    if (d > 0.5f || (d == 0.5f && fmodf(r, 2.0f) != 0))
        r += 1.0f;
    return r;
}

static float pfvm__ew_softplusf(float v)
{
    return v > 0 ? v + log1pf(pfvm__ew_expf(-v)) : log1pf(pfvm__ew_expf(v));
}

static float pfvm__ew_fmodf(float a, float b, int c_style)
{
    float r = fmodf(a, b);
    if (!c_style && r != 0 && ((r < 0) != (b < 0)))
        r += b;
    return r;
}

static float pfvm__ew_clampf(float v, float lo, float hi)
{
    v = v < lo ? lo : v;
    return v > hi ? hi : v;
}

/* NaN wins, as in numpy's maximum/minimum; a on ties. Written so that
 * compilers use max/min instructions (b > a ? b : a is maxps, which gives
 * a when either is NaN), then a NaN b goes through. */
#define PFVM__EW_MAX(a, b) ((b) != (b) ? (b) : (b) > (a) ? (b) : (a))
#define PFVM__EW_MIN(a, b) ((b) != (b) ? (b) : (b) < (a) ? (b) : (a))

PFVM__EW_UNARY_X(abs, float, fabs(x0))
PFVM__EW_INT1(abs, u || x0 >= 0 ? x0 : PFVM__EW_NEG(x0))
PFVM__EW_UNARY_X(neg, float, -x0)
PFVM__EW_INT1(neg, PFVM__EW_NEG(x0))
PFVM__EW_UNARY_X(exp, float, PFVM__EW_MATH(expf, exp, x0))
PFVM__EW_UNARY_X(log, float, PFVM__EW_MATH(logf, log, x0))
PFVM__EW_UNARY_X(sqrt, float, PFVM__EW_MATH(sqrtf, sqrt, x0))
PFVM__EW_UNARY_X(reciprocal, float, (pfvm__ew_ct)1 / x0)
PFVM__EW_UNARY_X(floor, float, PFVM__EW_MATH(floorf, floor, x0))
PFVM__EW_UNARY_X(ceil, float, PFVM__EW_MATH(ceilf, ceil, x0))
PFVM__EW_UNARY_X(round, float, PFVM__EW_MATH(round_evenf, pfvm__ew_round_even, x0))
PFVM__EW_UNARY_X(sign, float, x0 > 0 ? (pfvm__ew_ct)1 : x0 < 0 ? (pfvm__ew_ct)-1 : x0)
PFVM__EW_INT1(sign, x0 == 0 ? 0 : u || x0 > 0 ? 1 : -1)
PFVM__EW_UNARY_X(sin, float, PFVM__EW_MATH(sinf, sin, x0))
PFVM__EW_UNARY_X(cos, float, PFVM__EW_MATH(cosf, cos, x0))
PFVM__EW_UNARY_X(tan, float, PFVM__EW_MATH(tanf, tan, x0))
PFVM__EW_UNARY_X(asin, float, PFVM__EW_MATH(asinf, asin, x0))
PFVM__EW_UNARY_X(acos, float, PFVM__EW_MATH(acosf, acos, x0))
PFVM__EW_UNARY_X(atan, float, PFVM__EW_MATH(atanf, atan, x0))
PFVM__EW_UNARY_X(sinh, float, PFVM__EW_MATH(sinhf, sinh, x0))
PFVM__EW_UNARY_X(cosh, float, PFVM__EW_MATH(coshf, cosh, x0))
PFVM__EW_UNARY_X(tanh, float, PFVM__EW_MATH(tanhf, tanh, x0))
PFVM__EW_UNARY_X(asinh, float, PFVM__EW_MATH(asinhf, asinh, x0))
PFVM__EW_UNARY_X(acosh, float, PFVM__EW_MATH(acoshf, acosh, x0))
PFVM__EW_UNARY_X(atanh, float, PFVM__EW_MATH(atanhf, atanh, x0))
PFVM__EW_UNARY_X(erf, float, PFVM__EW_MATH(erff, erf, x0))
#ifdef PFVM__FUSE_FOLD
/* Erf's GELU form (src/ops/fused.h): the steps of the Div, Erf, Add and
 * two Mul kernels (pfvm__ew_zc_div, pfvm__ew_z_erf, pfvm__ew_zc_add,
 * pfvm__ew_z_mul, pfvm__ew_zc_mul) value by value, each rounded as there:
 * the same bits, one pass. d may be s[0] (each value read first). */
#if defined(__GNUC__) && defined(__thumb2__) && defined(__ARM_FP) && (__ARM_FP & 4) && defined(__ARM_FEATURE_FMA) && \
    !defined(__ARM_ARCH_ISA_A64) && !defined(PFVM_NO_ASM) && PFVM_FUSE_BLOCK % 2 == 0
/* 32-bit Arm with a single-precision FPU: GELU two values a step in
 * assembly, erf's polynomial constants (pfvm__ew_erff's, highest first)
 * in registers, and the values whose erf takes the tail (|v / a| >
 * 0.921875, or NaN: the pair's bits, sign dropped, above 0.921875's) left
 * to the C below: the same operations in the same order, so the same bits
 * (v * t or t * v: a product's bits do not depend on the order). Returns
 * the values done, up to the first pair that has a tail value. */
#define PFVM__EW_GELU_ASM 1
static const float pfvm__ew_gelu_k[6] = {-5.99104969e-4f, 4.99339588e-3f, -2.67667342e-2f,
                                         1.12818025e-1f,  -3.76124859e-1f, 1.28379151e-1f};
static int pfvm__ew_gelu_pairs(float *y, const float *x, int n, float a, float b, float c)
{
    const float *p = x, *end = x + n;
    float *q = y;
    uint32_t t0, t1;
    __asm__ volatile("vldmia %[k], {s16-s21}\n"
                     "1:\n\t"
                     "vldmia %[p]!, {s0-s1}\n\t"
                     "vdiv.f32 s2, s0, %[a]\n\t"
                     "vdiv.f32 s3, s1, %[a]\n\t"
                     "vmov %[t0], %[t1], s2, s3\n\t"
                     "lsl %[t0], %[t0], #1\n\t"
                     "lsl %[t1], %[t1], #1\n\t"
                     "cmp %[t0], %[thr]\n\t"
                     "it ls\n\t"
                     "cmpls %[t1], %[thr]\n\t"
                     "bhi 2f\n\t"
                     "vmul.f32 s4, s2, s2\n\t" /* r */
                     "vmul.f32 s5, s3, s3\n\t"
                     "vmul.f32 s6, s4, s4\n\t" /* r^2 */
                     "vmul.f32 s7, s5, s5\n\t"
                     "vmov.f32 s8, s17\n\tvfma.f32 s8, s16, s4\n\t" /* fma(k0, r, k1) */
                     "vmov.f32 s9, s17\n\tvfma.f32 s9, s16, s5\n\t"
                     "vmov.f32 s10, s19\n\tvfma.f32 s10, s18, s4\n\t" /* fma(k2, r, k3) */
                     "vmov.f32 s11, s19\n\tvfma.f32 s11, s18, s5\n\t"
                     "vfma.f32 s10, s8, s6\n\t"
                     "vfma.f32 s11, s9, s7\n\t"
                     "vmov.f32 s12, s21\n\tvfma.f32 s12, s20, s4\n\t" /* fma(k4, r, k5) */
                     "vmov.f32 s13, s21\n\tvfma.f32 s13, s20, s5\n\t"
                     "vfma.f32 s12, s10, s6\n\t"
                     "vfma.f32 s13, s11, s7\n\t"
                     "vfma.f32 s2, s12, s2\n\t" /* erf = fma(p, z, z) */
                     "vfma.f32 s3, s13, s3\n\t"
                     "vadd.f32 s2, s2, %[b]\n\t"
                     "vadd.f32 s3, s3, %[b]\n\t"
                     "vmul.f32 s2, s2, s0\n\t"
                     "vmul.f32 s3, s3, s1\n\t"
                     "vmul.f32 s2, s2, %[c]\n\t"
                     "vmul.f32 s3, s3, %[c]\n\t"
                     "vstmia %[q]!, {s2-s3}\n\t"
                     "cmp %[p], %[end]\n\t"
                     "blo 1b\n"
                     "2:\n\t"
                     : [p] "+r"(p), [q] "+r"(q), [t0] "=&r"(t0), [t1] "=&r"(t1)
                     : [end] "r"(end), [k] "r"(pfvm__ew_gelu_k), [thr] "r"(0x7ed80000u), [a] "t"(a), [b] "t"(b),
                       [c] "t"(c)
                     : "s0", "s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9", "s10", "s11", "s12", "s13", "s16",
                       "s17", "s18", "s19", "s20", "s21", "cc", "memory");
    (void)t0, (void)t1;
    return (int)(q - y);
}
#endif

static void pfvm__ew_zg_erf(float *y, const float *const *s, const void *pv)
{
    const pfvm_fuse_gelu_params *g = (const pfvm_fuse_gelu_params *)pv;
    const float *x = s[0];
    const float a = g->a, b = g->b, c = g->c;
    int e;
#ifdef PFVM__EW_GELU_ASM
    /* the pairs without a tail in assembly; each pair with one here */
    for (e = 0; e < PFVM_FUSE_BLOCK; e += 2) {
        int i;
        e += pfvm__ew_gelu_pairs(y + e, x + e, PFVM_FUSE_BLOCK - e, a, b, c);
        for (i = e; i < e + 2 && i < PFVM_FUSE_BLOCK; i++) {
            float v = x[i], t = pfvm__ew_erff(v / a) + b;
            y[i] = g->x_second ? (t * v) * c : (v * t) * c;
        }
    }
#else
    if (g->x_second)
        for (e = 0; e < PFVM_FUSE_BLOCK; e++) {
            float v = x[e], t = pfvm__ew_erff(v / a) + b;
            y[e] = (t * v) * c;
        }
    else
        for (e = 0; e < PFVM_FUSE_BLOCK; e++) {
            float v = x[e], t = pfvm__ew_erff(v / a) + b;
            y[e] = (v * t) * c;
        }
#endif
}
#endif
PFVM__EW_UNARY_CTF(sigmoid, float, float, PFVM__EW_MATH(sigmoidf, pfvm__ew_sigmoid, x0), PFVM__EW_SIGMOID_FAST)
PFVM__EW_UNARY_X(relu, float, x0 > 0 ? x0 : (pfvm__ew_ct)0)
PFVM__EW_INT1(relu, u || x0 > 0 ? x0 : 0)
PFVM__EW_UNARY_X(leakyrelu, float, x0 >= 0 ? x0 : PFVM__EW_PA * x0)
PFVM__EW_UNARY_X(elu, float, x0 >= 0 ? x0 : PFVM__EW_PA * PFVM__EW_MATH(expm1f, expm1, x0))
PFVM__EW_UNARY_X(selu, float, x0 > 0 ? PFVM__EW_PG * x0 : PFVM__EW_PG * (PFVM__EW_PA * PFVM__EW_MATH(expf, exp, x0) - PFVM__EW_PA))
PFVM__EW_UNARY_X(celu, float,
                 (x0 > 0 ? x0 : PFVM__EW_C(0)) +
                     PFVM__EW_MATH2(fminf, fmin, 0, PFVM__EW_PA * PFVM__EW_MATH(expm1f, expm1, x0 / PFVM__EW_PA)))
PFVM__EW_UNARY_X(hardsigmoid, float, PFVM__EW_MATH2(fmaxf, fmax, 0, PFVM__EW_MATH2(fminf, fmin, 1, PFVM__EW_PA * x0 + PFVM__EW_PB)))
PFVM__EW_UNARY_X(hardswish, float,
                 x0 * PFVM__EW_MATH2(fmaxf, fmax, 0, PFVM__EW_MATH2(fminf, fmin, 1, x0 / PFVM__EW_C(6) + PFVM__EW_C(0.5))))
PFVM__EW_UNARY_X(softplus, float, PFVM__EW_MATH(softplusf, pfvm__ew_softplus, x0))
PFVM__EW_UNARY_X(softsign, float, x0 / (PFVM__EW_C(1) + PFVM__EW_MATH(fabsf, fabs, x0)))
PFVM__EW_UNARY_X(mish, float, x0 * PFVM__EW_MATH(tanhf, tanh, PFVM__EW_MATH(softplusf, pfvm__ew_softplus, x0)))
PFVM__EW_UNARY_X(thresholdedrelu, float, x0 > PFVM__EW_PA ? x0 : (pfvm__ew_ct)0)
PFVM__EW_UNARY_X(shrink, float, x0 < -PFVM__EW_PA ? x0 + PFVM__EW_PB : x0 > PFVM__EW_PA ? x0 - PFVM__EW_PB : PFVM__EW_C(0))
/* Gelu (opset 20): x * Phi(x), or with approximate = "tanh" (mode 1)
 * 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) */
PFVM__EW_UNARY(gelu, float,
               p->mode ? 0.5 * x0 * (1.0 + tanh(0.7978845608028654 * (x0 + 0.044715 * x0 * x0 * x0)))
                       : 0.5 * x0 * (1.0 + erf(x0 * 0.7071067811865476)))
PFVM__EW_UNARY_X(isnan, uint8_t, x0 != x0)
PFVM__EW_UNARY_X(isinf, uint8_t, isinf(x0) && (x0 > 0 ? PFVM__EW_PA != 0 : PFVM__EW_PB != 0))
PFVM__EW_UNARY_X(divby, float, x0 / PFVM__EW_PA)
/* Clip: lower bound first, so that min > max gives max (numpy's clip) */
PFVM__EW_UNARY_X(clip, float,
                 sizeof(pfvm__ew_ct) == sizeof(float) ? (pfvm__ew_ct)pfvm__ew_clampf((float)x0, p->fa, p->fb)
                                                      : (pfvm__ew_ct)pfvm__ew_clamp((double)x0, p->alpha, p->beta))
PFVM__EW_INT1(not, !x0)
PFVM__EW_INT1(bitnot, ~x0)

PFVM__EW_BINARY_X(add, float, x0 + x1)
PFVM__EW_INT2(add, (uint64_t)x0 + (uint64_t)x1)
PFVM__EW_BINARY_X(sub, float, x0 - x1)
PFVM__EW_INT2(sub, (uint64_t)x0 - (uint64_t)x1)
PFVM__EW_BINARY_X(mul, float, x0 * x1)
PFVM__EW_INT2(mul, (uint64_t)x0 * (uint64_t)x1)
PFVM__EW_BINARY_X(div, float, x0 / x1)
PFVM__EW_BINARY_X(pow, float, PFVM__EW_MATH2(powf, pow, x0, x1))
PFVM__EW_BINARY_X(mod, float,
                  sizeof(pfvm__ew_ct) == sizeof(float) ? (pfvm__ew_ct)pfvm__ew_fmodf((float)x0, (float)x1, p->mode)
                                                       : (pfvm__ew_ct)pfvm__ew_fmod((double)x0, (double)x1, p->mode))
PFVM__EW_BINARY_X(max, float, PFVM__EW_MAX(x0, x1))
PFVM__EW_INT2(max, PFVM__EW_LT(x0, x1) ? x1 : x0)
PFVM__EW_BINARY_X(min, float, PFVM__EW_MIN(x0, x1))
PFVM__EW_INT2(min, PFVM__EW_LT(x1, x0) ? x1 : x0)
PFVM__EW_BINARY_X(prelu, float, x0 < 0 ? x1 * x0 : x0)
PFVM__EW_INT2(prelu, u || x0 >= 0 ? x0 : (int64_t)((uint64_t)x1 * (uint64_t)x0))
PFVM__EW_BINARY_X(equal, uint8_t, x0 == x1)
PFVM__EW_INT2(equal, x0 == x1)
PFVM__EW_BINARY_X(greater, uint8_t, x0 > x1)
PFVM__EW_INT2(greater, PFVM__EW_LT(x1, x0))
PFVM__EW_BINARY_X(less, uint8_t, x0 < x1)
PFVM__EW_INT2(less, PFVM__EW_LT(x0, x1))
PFVM__EW_BINARY_X(greater_equal, uint8_t, x0 >= x1)
PFVM__EW_INT2(greater_equal, !PFVM__EW_LT(x0, x1))
PFVM__EW_BINARY_X(less_equal, uint8_t, x0 <= x1)
PFVM__EW_INT2(less_equal, !PFVM__EW_LT(x1, x0))
PFVM__EW_INT2(and, x0 && x1)
PFVM__EW_INT2(or, x0 || x1)
PFVM__EW_INT2(xor, !x0 != !x1)
PFVM__EW_INT2(bitand, x0 & x1)
PFVM__EW_INT2(bitor, x0 | x1)
PFVM__EW_INT2(bitxor, x0 ^ x1)

/* Fused kernels of the logic operators over 0/1 registers. */
#define PFVM__EW_ZL(name, n_in, expr)                                           \
    PFVM_DISPATCH static void pfvm__ew_z_##name(float *PFVM_RESTRICT y, const float *const *s, const void *pv) \
    {                                                                           \
        const float *a = s[0];                                    \
        const float *b = s[n_in - 1];                             \
        int e;                                                                  \
        (void)pv;                                                               \
        (void)b;                                                                \
        for (e = 0; e < PFVM_FUSE_BLOCK; e++)                                   \
            y[e] = (expr) ? 1.0f : 0.0f;                                        \
    }
PFVM__EW_ZL(not, 1, a[e] == 0)
PFVM__EW_ZL(and, 2, (a[e] != 0) & (b[e] != 0))
PFVM__EW_ZL(or, 2, (a[e] != 0) | (b[e] != 0))
PFVM__EW_ZL(xor, 2, (a[e] != 0) != (b[e] != 0))

/* Integer division truncates (C, and onnxruntime); x / 0 is 0 rather
 * than a trap, since ONNX leaves it undefined. */
static int64_t pfvm__ew_i_div(const int64_t *x, const pfvm__ew_params *p, int u)
{
    (void)p;
    if (x[1] == 0)
        return 0;
    if (u)
        return (int64_t)((uint64_t)x[0] / (uint64_t)x[1]);
    if (x[1] == -1)
        return PFVM__EW_NEG(x[0]);
    return x[0] / x[1];
}

static int64_t pfvm__ew_i_mod(const int64_t *x, const pfvm__ew_params *p, int u)
{
    int64_t r;
    if (x[1] == 0)
        return 0;
    if (u)
        return (int64_t)((uint64_t)x[0] % (uint64_t)x[1]);
    if (x[1] == -1)
        return 0;
    r = x[0] % x[1];
    if (!p->mode && r != 0 && ((r < 0) != (x[1] < 0)))
        r += x[1];
    return r;
}

/* Integer powers by squaring, wrapping; negative exponents give what
 * truncating 1/b^-e gives. */
static int64_t pfvm__ew_i_pow(const int64_t *x, const pfvm__ew_params *p, int u)
{
    uint64_t r = 1, b = (uint64_t)x[0];
    int64_t e = x[1];
    (void)p;
    if (e < 0 && !u)
        return x[0] == 1 ? 1 : x[0] == -1 ? ((e & 1) ? -1 : 1) : 0;
    for (; e; e = (int64_t)((uint64_t)e >> 1)) {
        if (e & 1)
            r *= b;
        b *= b;
    }
    return (int64_t)r;
}

static int64_t pfvm__ew_i_bitshift(const int64_t *x, const pfvm__ew_params *p, int u)
{
    uint64_t v = (uint64_t)x[0], s = (uint64_t)x[1];
    (void)u;
    if (s >= 64)
        return 0;
    return (int64_t)(p->mode ? v >> s : v << s);
}

static int64_t pfvm__ew_i_clip(const int64_t *x, const pfvm__ew_params *p, int u)
{
    int64_t v = x[0];
    if ((p->mode & 1) && PFVM__EW_LT(v, p->lo))
        v = p->lo;
    if ((p->mode & 2) && PFVM__EW_LT(p->hi, v))
        v = p->hi;
    return v;
}

/* ---- running an operator ----------------------------------------------------------- */

enum { PFVM__EW_PATH_F32, PFVM__EW_PATH_F64, PFVM__EW_PATH_INT };

typedef struct pfvm__ew_run {
    const pfvm_tensor *in[PFVM__EW_ARITY];
    int n;
    pfvm_tensor *out;
    const pfvm__ew_op *op;
    const pfvm__ew_params *p;
    int path, is_unsigned;
    size_t out_size;
} pfvm__ew_run;

static void pfvm__ew_span_f32(pfvm__ew_run *r, int64_t pos, int64_t len, const int64_t *off, const int64_t *stride)
{
    const float *a = (const float *)r->in[0]->data + off[0];
    const float *b = r->n > 1 ? (const float *)r->in[1]->data + off[1] : a;
    r->op->s((char *)r->out->data + (size_t)pos * r->out_size, a, stride[0], b, r->n > 1 ? stride[1] : 0, len, r->p);
}

static void pfvm__ew_span_generic(pfvm__ew_run *r, int64_t pos, int64_t len, const int64_t *off, const int64_t *stride)
{
    int64_t done, c, e;
    int j;
    for (done = 0; done < len; done += c) {
        c = len - done < PFVM__EW_CHUNK ? len - done : PFVM__EW_CHUNK;
        if (r->path == PFVM__EW_PATH_INT) {
            int64_t xs[PFVM__EW_ARITY][PFVM__EW_CHUNK], ys[PFVM__EW_CHUNK], x[PFVM__EW_ARITY] = {0};
            for (j = 0; j < r->n; j++)
                pfvm__ew_load_i64(r->in[j], off[j] + done * stride[j], stride[j], c, xs[j]);
            for (e = 0; e < c; e++) {
                for (j = 0; j < r->n; j++)
                    x[j] = xs[j][e];
                ys[e] = r->op->i(x, r->p, r->is_unsigned);
            }
            pfvm__ew_store_i64(r->out, pos + done, c, ys, r->is_unsigned);
        } else if (PFVM__F64) {
            double xs[PFVM__EW_ARITY][PFVM__EW_CHUNK], ys[PFVM__EW_CHUNK], x[PFVM__EW_ARITY] = {0};
            for (j = 0; j < r->n; j++)
                pfvm__ew_load_f64(r->in[j], off[j] + done * stride[j], stride[j], c, xs[j]);
            for (e = 0; e < c; e++) {
                for (j = 0; j < r->n; j++)
                    x[j] = xs[j][e];
                ys[e] = r->op->f(x, r->p);
            }
            pfvm__ew_store_f64(r->out, pos + done, c, ys);
        }
    }
}

static void pfvm__ew_span(void *user, int64_t pos, int64_t len, const int64_t *off, const int64_t *stride)
{
    pfvm__ew_run *r = (pfvm__ew_run *)user;
    if (r->path == PFVM__EW_PATH_F32)
        pfvm__ew_span_f32(r, pos, len, off, stride);
    else
        pfvm__ew_span_generic(r, pos, len, off, stride);
}

/* Picks the path for the inputs' and output's element types. */
static pfvm_code pfvm__ew_choose_path(pfvm_kctx *k, pfvm__ew_run *r)
{
    int j, all_f32 = r->out->dtype == r->op->s_out, any_float = 0;
    if (!pfvm__ew_numeric(r->out->dtype))
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_UNSUPPORTED, "output element type %s is not supported",
                             pfvm_dtype_name(r->out->dtype));
    for (j = 0; j < r->n; j++) {
        pfvm_dtype t = r->in[j]->dtype;
        if (!pfvm__ew_numeric(t))
            return pfvm__op_fail(k->st, k->node, PFVM_ERR_UNSUPPORTED, "element type %s is not supported",
                                 pfvm_dtype_name(t));
        all_f32 &= t == PFVM_FLOAT;
        any_float |= pfvm_dtype_is_float(t);
    }
    r->is_unsigned = !pfvm_dtype_is_signed(r->in[0]->dtype);
    if (r->op->s && all_f32)
        r->path = PFVM__EW_PATH_F32;
    else if (r->op->i && !any_float)
        r->path = PFVM__EW_PATH_INT;
    else if (r->op->f && PFVM__F64)
        r->path = PFVM__EW_PATH_F64;
    else if (!PFVM__F64)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_UNSUPPORTED,
                             "%s inputs with a %s output need the double-precision paths (not in a PFVM_FLOAT32_ONLY build)",
                             pfvm_dtype_name(r->in[0]->dtype), pfvm_dtype_name(r->out->dtype));
    else
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_UNSUPPORTED, "floating-point inputs are not supported");
    return PFVM_OK;
}

/* out = op(in[0..n)) with broadcasting; n <= PFVM__EW_ARITY. */
static pfvm_code pfvm__ew_map(pfvm_kctx *k, const pfvm__ew_op *op, const pfvm__ew_params *p,
                              const pfvm_tensor *const *in, int n, pfvm_tensor *out)
{
    pfvm__ew_run r;
    pfvm__ew_params q;
    int j;
    memset(&r, 0, sizeof r);
    for (j = 0; j < n; j++)
        r.in[j] = in[j];
    r.n = n;
    r.out = out;
    r.op = op;
    q = *p;
    pfvm__ew_params_floats(&q);
    r.p = &q;
    if (pfvm__ew_choose_path(k, &r))
        return k->st ? k->st->code : PFVM_ERR_UNSUPPORTED;
    r.out_size = pfvm_dtype_size(out->dtype);
    /* the float32 loops compute each element alone: they may be cut */
    return pfvm__ew_apply_split(k, in, n, out, pfvm__ew_span, &r, r.path == PFVM__EW_PATH_F32);
}

/* Opsets before 7 broadcast B against A with an explicit `axis`: B's dims
 * line up with A's starting there. Returns a view of B with A's rank. */
static const pfvm_tensor *pfvm__ew_legacy_view(const pfvm_node *n, const pfvm_tensor *a, const pfvm_tensor *b,
                                               pfvm_tensor *view)
{
    int64_t axis;
    int d;
    if (n->opset >= 7 || !pfvm_node_attr_int(n, "broadcast", 0) || !pfvm_node_attr(n, "axis"))
        return b;
    axis = pfvm_node_attr_int(n, "axis", 0);
    if (axis < 0)
        axis += a->rank;
    if (axis < 0 || axis + b->rank > a->rank)
        return b;
    *view = *b;
    view->rank = a->rank;
    for (d = 0; d < a->rank; d++)
        view->dims[d] = d >= axis && d < axis + b->rank ? b->dims[d - axis] : 1;
    return view;
}

/* The kernel of a unary or binary operator: output 0 = op(inputs). */
static pfvm_code pfvm__ew_run_node(pfvm_kctx *k, const pfvm__ew_op *op, const pfvm__ew_params *p, pfvm_dtype out_t)
{
    const pfvm_tensor *ins[PFVM__EW_ARITY];
    pfvm_tensor legacy;
    pfvm_tensor *out = k->out[0];
    int j, n = 0;
    for (j = 0; j < k->n_in; j++) {
        if (!k->in[j])
            continue;
        if (n == PFVM__EW_ARITY)
            return pfvm__ew_fail(k, PFVM_ERR_INVALID, "too many inputs");
        ins[n++] = k->in[j];
    }
    if (!n)
        return pfvm__ew_fail(k, PFVM_ERR_INVALID, "no inputs");
    if (!out)
        return PFVM_OK;
    if (n == 2)
        ins[1] = pfvm__ew_legacy_view(k->node, ins[0], ins[1], &legacy);
    if (out_t == PFVM_UNDEFINED)
        out_t = ins[0]->dtype;
    if (k->node->opset < 7 && n == 2 && pfvm_node_attr_int(k->node, "broadcast", 0)) {
        if (!out->data && pfvm__ew_shape_output(k, out, ins, 1, out_t))
            return k->st->code;
    } else if (pfvm__ew_shape_output(k, out, ins, n, out_t)) {
        return k->st->code;
    }
    return pfvm__ew_map(k, op, p, ins, n, out);
}

#ifdef PFVM_UNARY_F32_ONLY
/* The output of a unary node on x: given storage of x's shape and float32,
 * or storage asked for with that shape. */
static pfvm_code pfvm__ew_unary_output(pfvm_kctx *k, const pfvm_tensor *x, pfvm_tensor *out)
{
    int d, same = out->dtype == PFVM_FLOAT && out->rank == x->rank;
    if (!out->data)
        return pfvm_kctx_output(k, 0, PFVM_FLOAT, x->rank, x->dims);
    for (d = 0; same && d < x->rank; d++)
        same = out->dims[d] == x->dims[d];
    return same ? PFVM_OK : pfvm__ew_fail(k, PFVM_ERR_SHAPE, "output is not float32 of the input's shape");
}
#endif

/* The kernel of a unary operator. PFVM_UNARY_F32_ONLY (`interp ops
 * --config` writes it when no unary node of the models reads other than
 * float32): the float32 loop over the whole tensor, without the general
 * engine (broadcasting iterator, integer and double paths, split), which a
 * firmware image with only unary element-wise operators then leaves out;
 * any other input fails naming the switch. Else the general engine. */
static pfvm_code pfvm__ew_run_unary(pfvm_kctx *k, const pfvm__ew_op *op, const pfvm__ew_params *p, pfvm_dtype out_t)
{
#ifdef PFVM_UNARY_F32_ONLY
    const pfvm_tensor *x = k->n_in == 1 ? k->in[0] : NULL;
    pfvm_tensor *out = k->n_out > 0 ? k->out[0] : NULL;
    pfvm__ew_params q;
    (void)out_t;
    if (!x)
        return pfvm__ew_fail(k, PFVM_ERR_INVALID, "needs one input");
    if (!out)
        return PFVM_OK;
    if (x->dtype != PFVM_FLOAT || !op->s || op->s_out != PFVM_FLOAT)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_UNSUPPORTED,
                             "%s input: this build maps float32 only (PFVM_UNARY_F32_ONLY)",
                             pfvm_dtype_name(x->dtype));
    if (pfvm__ew_unary_output(k, x, out))
        return k->st ? k->st->code : PFVM_ERR_SHAPE;
    q = *p;
    pfvm__ew_params_floats(&q);
    op->s(out->data, (const float *)x->data, 1, (const float *)x->data, 0, pfvm_tensor_numel(x), &q);
    return PFVM_OK;
#else
    return pfvm__ew_run_node(k, op, p, out_t);
#endif
}

static void pfvm__ew_read_params(const pfvm_node *n, pfvm__ew_params *p, float alpha, float beta)
{
    memset(p, 0, sizeof *p);
    p->alpha = pfvm_node_attr_float(n, "alpha", alpha);
    p->beta = pfvm_node_attr_float(n, "beta", beta);
    p->gamma = pfvm_node_attr_float(n, "gamma", 1.0507009873554804934193349852946f);
}

/* ---- kernels ------------------------------------------------------------------------ */

/* the double function, left out of PFVM_FLOAT32_ONLY builds */
#if PFVM__F64
#define PFVM__EW_FN(name) pfvm__ew_f_##name
#else
#define PFVM__EW_FN(name) NULL
#endif
#define PFVM__EW_OP_FI(name, out) {PFVM__EW_FN(name), pfvm__ew_i_##name, pfvm__ew_s_##name, out, pfvm__ew_z_##name, PFVM_FLOAT, NULL, 0, NULL}
#define PFVM__EW_OP_F(name, out) {PFVM__EW_FN(name), NULL, pfvm__ew_s_##name, out, pfvm__ew_z_##name, PFVM_FLOAT, NULL, 0, NULL}
/* Erf: with its GELU form where the engine folds GELU (PFVM__FUSE_FOLD) */
#ifdef PFVM__FUSE_FOLD
#define PFVM__EW_OP_FG(name, out) {PFVM__EW_FN(name), NULL, pfvm__ew_s_##name, out, pfvm__ew_z_##name, PFVM_FLOAT, NULL, 0, pfvm__ew_zg_##name}
#else
#define PFVM__EW_OP_FG(name, out) PFVM__EW_OP_F(name, out)
#endif
#define PFVM__EW_OP_FU(name, out, u) {PFVM__EW_FN(name), NULL, pfvm__ew_s_##name, out, pfvm__ew_z_##name, PFVM_FLOAT, NULL, u, NULL}
/* binary (PFVM__EW_BINARY): with the kernel for a second operand that is one value */
#define PFVM__EW_OP_FI2(name, out) {PFVM__EW_FN(name), pfvm__ew_i_##name, pfvm__ew_s_##name, out, pfvm__ew_z_##name, PFVM_FLOAT, pfvm__ew_zc_##name, 0, NULL}
/* the same, declaring the fused kernel micro-op u */
#define PFVM__EW_OP_FIU(name, out, u) {PFVM__EW_FN(name), pfvm__ew_i_##name, pfvm__ew_s_##name, out, pfvm__ew_z_##name, PFVM_FLOAT, NULL, u, NULL}
#define PFVM__EW_OP_FI2U(name, out, u) {PFVM__EW_FN(name), pfvm__ew_i_##name, pfvm__ew_s_##name, out, pfvm__ew_z_##name, PFVM_FLOAT, pfvm__ew_zc_##name, u, NULL}
#define PFVM__EW_OP_I(name) {NULL, pfvm__ew_i_##name, NULL, PFVM_UNDEFINED, NULL, PFVM_UNDEFINED, NULL, 0, NULL}
/* logic on bools, with a fused kernel over 0/1 registers */
#define PFVM__EW_OP_L(name) {NULL, pfvm__ew_i_##name, NULL, PFVM_UNDEFINED, pfvm__ew_z_##name, PFVM_BOOL, NULL, 0, NULL}

/* ---- fuse hooks ---------------------------------------------------------------------- */

/* Emits output 0 = op(inputs) into a fused group: the node's inputs must
 * all have the type the fused kernel takes, and opsets before 7 (explicit
 * `axis` broadcasting) stay out. */
static pfvm_code pfvm__ew_fuse_op(pfvm_fuse_ctx *f, const pfvm_node *n, const pfvm__ew_op *op,
                                  const pfvm__ew_params *p)
{
    pfvm__ew_params q;
    int src[PFVM__EW_ARITY], j, k = 0;
    pfvm_code rc;
    if (!op->z)
        return pfvm_fuse_refuse(f, "no fused kernel");
    if (n->opset < 7 && pfvm_node_attr_int(n, "broadcast", 0))
        return pfvm_fuse_refuse(f, "legacy broadcast");
    for (j = 0; j < n->n_inputs; j++) {
        if (!n->inputs[j])
            continue;
        if (k == PFVM__EW_ARITY || pfvm_fuse_dtype(f, j) != op->z_in)
            return pfvm_fuse_refuse(f, "input types");
        src[k++] = PFVM_FUSE_IN(j);
    }
    if (!k || n->n_outputs < 1 || !n->outputs[0])
        return pfvm_fuse_refuse(f, "arity");
    q = *p;
    pfvm__ew_params_floats(&q);
    if ((rc = pfvm_fuse_emit(f, op->z, &q, sizeof q, PFVM_FUSE_OUT(0), k, src)) != PFVM_OK)
        return rc;
    if (k == 2 && op->zc && (rc = pfvm_fuse_variant(f, op->zc)) != PFVM_OK)
        return rc;
    if (k == 1 && op->zg && (rc = pfvm_fuse_gelu_form(f, op->zg)) != PFVM_OK)
        return rc;
    return op->uop ? pfvm_fuse_uop(f, op->uop) : PFVM_OK;
}

/* A kernel whose output has the first input's type (out_t UNDEFINED) or
 * bool; alpha and beta are the attributes' defaults. */
#define PFVM__EW_KERNEL(name, opdef, out_t, alpha, beta) PFVM__EW_KERNEL_RUN(pfvm__ew_run_node, name, out_t, alpha, beta, opdef)
/* the same for a unary operator on floats (pfvm__ew_run_unary) */
#define PFVM__EW_KERNEL1(name, opdef, out_t, alpha, beta) PFVM__EW_KERNEL_RUN(pfvm__ew_run_unary, name, out_t, alpha, beta, opdef)
/* opdef last: expanded, its braces' commas make more arguments */
#define PFVM__EW_KERNEL_RUN(run, name, out_t, alpha, beta, ...)                   \
    static pfvm_code pfvm__ew_k_##name(pfvm_kctx *k)                              \
    {                                                                             \
        static const pfvm__ew_op op = __VA_ARGS__;                                \
        pfvm__ew_params p;                                                        \
        pfvm__ew_read_params(k->node, &p, alpha, beta);                           \
        return run(k, &op, &p, out_t);                                            \
    }                                                                             \
    static pfvm_code pfvm__ew_k_##name##_fuse(pfvm_fuse_ctx *f, const pfvm_node *n) \
    {                                                                             \
        static const pfvm__ew_op op = __VA_ARGS__;                                \
        pfvm__ew_params p;                                                        \
        pfvm__ew_read_params(n, &p, alpha, beta);                                 \
        return pfvm__ew_fuse_op(f, n, &op, &p);                                   \
    }

PFVM__EW_KERNEL1(abs, PFVM__EW_OP_FIU(abs, PFVM_FLOAT, PFVM_FUSE_U_ABS), PFVM_UNDEFINED, 0, 0)
PFVM__EW_KERNEL1(neg, PFVM__EW_OP_FIU(neg, PFVM_FLOAT, PFVM_FUSE_U_NEG), PFVM_UNDEFINED, 0, 0)
PFVM__EW_KERNEL1(exp, PFVM__EW_OP_F(exp, PFVM_FLOAT), PFVM_UNDEFINED, 0, 0)
PFVM__EW_KERNEL1(log, PFVM__EW_OP_F(log, PFVM_FLOAT), PFVM_UNDEFINED, 0, 0)
PFVM__EW_KERNEL1(sqrt, PFVM__EW_OP_F(sqrt, PFVM_FLOAT), PFVM_UNDEFINED, 0, 0)
PFVM__EW_KERNEL1(reciprocal, PFVM__EW_OP_F(reciprocal, PFVM_FLOAT), PFVM_UNDEFINED, 0, 0)
PFVM__EW_KERNEL1(floor, PFVM__EW_OP_F(floor, PFVM_FLOAT), PFVM_UNDEFINED, 0, 0)
PFVM__EW_KERNEL1(ceil, PFVM__EW_OP_F(ceil, PFVM_FLOAT), PFVM_UNDEFINED, 0, 0)
PFVM__EW_KERNEL1(round, PFVM__EW_OP_F(round, PFVM_FLOAT), PFVM_UNDEFINED, 0, 0)
PFVM__EW_KERNEL1(sign, PFVM__EW_OP_FI(sign, PFVM_FLOAT), PFVM_UNDEFINED, 0, 0)
PFVM__EW_KERNEL1(sin, PFVM__EW_OP_F(sin, PFVM_FLOAT), PFVM_UNDEFINED, 0, 0)
PFVM__EW_KERNEL1(cos, PFVM__EW_OP_F(cos, PFVM_FLOAT), PFVM_UNDEFINED, 0, 0)
PFVM__EW_KERNEL1(tan, PFVM__EW_OP_F(tan, PFVM_FLOAT), PFVM_UNDEFINED, 0, 0)
PFVM__EW_KERNEL1(asin, PFVM__EW_OP_F(asin, PFVM_FLOAT), PFVM_UNDEFINED, 0, 0)
PFVM__EW_KERNEL1(acos, PFVM__EW_OP_F(acos, PFVM_FLOAT), PFVM_UNDEFINED, 0, 0)
PFVM__EW_KERNEL1(atan, PFVM__EW_OP_F(atan, PFVM_FLOAT), PFVM_UNDEFINED, 0, 0)
PFVM__EW_KERNEL1(sinh, PFVM__EW_OP_F(sinh, PFVM_FLOAT), PFVM_UNDEFINED, 0, 0)
PFVM__EW_KERNEL1(cosh, PFVM__EW_OP_F(cosh, PFVM_FLOAT), PFVM_UNDEFINED, 0, 0)
PFVM__EW_KERNEL1(tanh, PFVM__EW_OP_F(tanh, PFVM_FLOAT), PFVM_UNDEFINED, 0, 0)
PFVM__EW_KERNEL1(asinh, PFVM__EW_OP_F(asinh, PFVM_FLOAT), PFVM_UNDEFINED, 0, 0)
PFVM__EW_KERNEL1(acosh, PFVM__EW_OP_F(acosh, PFVM_FLOAT), PFVM_UNDEFINED, 0, 0)
PFVM__EW_KERNEL1(atanh, PFVM__EW_OP_F(atanh, PFVM_FLOAT), PFVM_UNDEFINED, 0, 0)
PFVM__EW_KERNEL1(erf, PFVM__EW_OP_FG(erf, PFVM_FLOAT), PFVM_UNDEFINED, 0, 0)
PFVM__EW_KERNEL1(sigmoid, PFVM__EW_OP_FU(sigmoid, PFVM_FLOAT, PFVM_FUSE_U_SIGMOID), PFVM_UNDEFINED, 0, 0)
PFVM__EW_KERNEL1(relu, PFVM__EW_OP_FIU(relu, PFVM_FLOAT, PFVM_FUSE_U_RELU), PFVM_UNDEFINED, 0, 0)
PFVM__EW_KERNEL1(leakyrelu, PFVM__EW_OP_F(leakyrelu, PFVM_FLOAT), PFVM_UNDEFINED, 0.01, 0)
PFVM__EW_KERNEL1(elu, PFVM__EW_OP_F(elu, PFVM_FLOAT), PFVM_UNDEFINED, 1.0, 0)
PFVM__EW_KERNEL1(selu, PFVM__EW_OP_F(selu, PFVM_FLOAT), PFVM_UNDEFINED, 1.67326319217681884765625, 0)
PFVM__EW_KERNEL1(celu, PFVM__EW_OP_F(celu, PFVM_FLOAT), PFVM_UNDEFINED, 1.0, 0)
PFVM__EW_KERNEL1(hardsigmoid, PFVM__EW_OP_F(hardsigmoid, PFVM_FLOAT), PFVM_UNDEFINED, 0.2, 0.5)
PFVM__EW_KERNEL1(hardswish, PFVM__EW_OP_F(hardswish, PFVM_FLOAT), PFVM_UNDEFINED, 0, 0)
PFVM__EW_KERNEL1(softplus, PFVM__EW_OP_F(softplus, PFVM_FLOAT), PFVM_UNDEFINED, 0, 0)
PFVM__EW_KERNEL1(softsign, PFVM__EW_OP_F(softsign, PFVM_FLOAT), PFVM_UNDEFINED, 0, 0)
PFVM__EW_KERNEL1(mish, PFVM__EW_OP_F(mish, PFVM_FLOAT), PFVM_UNDEFINED, 0, 0)
PFVM__EW_KERNEL1(thresholdedrelu, PFVM__EW_OP_F(thresholdedrelu, PFVM_FLOAT), PFVM_UNDEFINED, 1.0, 0)
PFVM__EW_KERNEL(isnan, PFVM__EW_OP_F(isnan, PFVM_BOOL), PFVM_BOOL, 0, 0)
PFVM__EW_KERNEL(not, PFVM__EW_OP_L(not), PFVM_UNDEFINED, 0, 0)
PFVM__EW_KERNEL(bitnot, PFVM__EW_OP_I(bitnot), PFVM_UNDEFINED, 0, 0)
PFVM__EW_KERNEL(add, PFVM__EW_OP_FI2U(add, PFVM_FLOAT, PFVM_FUSE_U_ADD), PFVM_UNDEFINED, 0, 0)
PFVM__EW_KERNEL(sub, PFVM__EW_OP_FI2U(sub, PFVM_FLOAT, PFVM_FUSE_U_SUB), PFVM_UNDEFINED, 0, 0)
PFVM__EW_KERNEL(mul, PFVM__EW_OP_FI2U(mul, PFVM_FLOAT, PFVM_FUSE_U_MUL), PFVM_UNDEFINED, 0, 0)
PFVM__EW_KERNEL(div, PFVM__EW_OP_FI2U(div, PFVM_FLOAT, PFVM_FUSE_U_DIV), PFVM_UNDEFINED, 0, 0)
static pfvm_code pfvm__ew_k_pow(pfvm_kctx *k)
{
    static const pfvm__ew_op op = PFVM__EW_OP_FI2(pow, PFVM_FLOAT);
    pfvm__ew_params p;
    pfvm__ew_read_params(k->node, &p, 0, 0);
    return pfvm__ew_run_node(k, &op, &p, PFVM_UNDEFINED);
}

/* x^2 with a constant exponent 2 is x*x: pow of floats computed in double
 * and rounded once is the correctly rounded square, as is float x*x. */
static pfvm_code pfvm__ew_k_pow_fuse(pfvm_fuse_ctx *f, const pfvm_node *n)
{
    static const pfvm__ew_op op = PFVM__EW_OP_FI2(pow, PFVM_FLOAT);
    static const pfvm__ew_op mul = PFVM__EW_OP_FI2(mul, PFVM_FLOAT);
    const pfvm_tensor *e = pfvm_fuse_const(f, 1);
    pfvm__ew_params p;
    memset(&p, 0, sizeof p);
    if (e && pfvm_tensor_numel(e) == 1 && (pfvm_dtype_is_float(e->dtype) || pfvm_dtype_is_int(e->dtype)) &&
        pfvm_tensor_get_f64(e, 0) == 2.0 &&
        pfvm_fuse_dtype(f, 0) == PFVM_FLOAT && n->opset >= 7) {
        static const int src[2] = {PFVM_FUSE_IN(0), PFVM_FUSE_IN(0)};
        return pfvm_fuse_emit(f, mul.z, &p, sizeof p, PFVM_FUSE_OUT(0), 2, src);
    }
    return pfvm__ew_fuse_op(f, n, &op, &p);
}
PFVM__EW_KERNEL(equal, PFVM__EW_OP_FI2(equal, PFVM_BOOL), PFVM_BOOL, 0, 0)
PFVM__EW_KERNEL(greater, PFVM__EW_OP_FI2(greater, PFVM_BOOL), PFVM_BOOL, 0, 0)
PFVM__EW_KERNEL(less, PFVM__EW_OP_FI2(less, PFVM_BOOL), PFVM_BOOL, 0, 0)
PFVM__EW_KERNEL(greater_equal, PFVM__EW_OP_FI2(greater_equal, PFVM_BOOL), PFVM_BOOL, 0, 0)
PFVM__EW_KERNEL(less_equal, PFVM__EW_OP_FI2(less_equal, PFVM_BOOL), PFVM_BOOL, 0, 0)
PFVM__EW_KERNEL(and, PFVM__EW_OP_L(and), PFVM_BOOL, 0, 0)
PFVM__EW_KERNEL(or, PFVM__EW_OP_L(or), PFVM_BOOL, 0, 0)
PFVM__EW_KERNEL(xor, PFVM__EW_OP_L(xor), PFVM_BOOL, 0, 0)
PFVM__EW_KERNEL(bitand, PFVM__EW_OP_I(bitand), PFVM_UNDEFINED, 0, 0)
PFVM__EW_KERNEL(bitor, PFVM__EW_OP_I(bitor), PFVM_UNDEFINED, 0, 0)
PFVM__EW_KERNEL(bitxor, PFVM__EW_OP_I(bitxor), PFVM_UNDEFINED, 0, 0)

static pfvm_code pfvm__ew_k_shrink(pfvm_kctx *k)
{
    static const pfvm__ew_op op = PFVM__EW_OP_F(shrink, PFVM_FLOAT);
    pfvm__ew_params p;
    memset(&p, 0, sizeof p);
    p.alpha = pfvm_node_attr_float(k->node, "lambd", 0.5f);
    p.beta = pfvm_node_attr_float(k->node, "bias", 0.0f);
    return pfvm__ew_run_unary(k, &op, &p, PFVM_UNDEFINED);
}

static pfvm_code pfvm__ew_k_shrink_fuse(pfvm_fuse_ctx *f, const pfvm_node *n)
{
    static const pfvm__ew_op op = PFVM__EW_OP_F(shrink, PFVM_FLOAT);
    pfvm__ew_params p;
    memset(&p, 0, sizeof p);
    p.alpha = pfvm_node_attr_float(n, "lambd", 0.5f);
    p.beta = pfvm_node_attr_float(n, "bias", 0.0f);
    return pfvm__ew_fuse_op(f, n, &op, &p);
}

/* Gelu's `approximate`: "none" (0) or "tanh" (1); -1 otherwise. */
static int pfvm__ew_gelu_mode(const pfvm_node *n)
{
    const char *a = pfvm_node_attr_string(n, "approximate", "none");
    return !strcmp(a, "none") ? 0 : !strcmp(a, "tanh") ? 1 : -1;
}

static pfvm_code pfvm__ew_check_gelu(const pfvm_node *n, pfvm_status *st)
{
    if (pfvm__ew_gelu_mode(n) < 0)
        return pfvm__fail(st, PFVM_ERR_INVALID, "approximate must be none or tanh");
    return PFVM_OK;
}

static pfvm_code pfvm__ew_k_gelu(pfvm_kctx *k)
{
    static const pfvm__ew_op op = PFVM__EW_OP_F(gelu, PFVM_FLOAT);
    pfvm__ew_params p;
    memset(&p, 0, sizeof p);
    p.mode = pfvm__ew_gelu_mode(k->node) == 1;
    return pfvm__ew_run_unary(k, &op, &p, PFVM_UNDEFINED);
}

static pfvm_code pfvm__ew_k_gelu_fuse(pfvm_fuse_ctx *f, const pfvm_node *n)
{
    static const pfvm__ew_op op = PFVM__EW_OP_F(gelu, PFVM_FLOAT);
    pfvm__ew_params p;
    memset(&p, 0, sizeof p);
    p.mode = pfvm__ew_gelu_mode(n) == 1;
    return pfvm__ew_fuse_op(f, n, &op, &p);
}

static pfvm_code pfvm__ew_k_isinf(pfvm_kctx *k)
{
    static const pfvm__ew_op op = PFVM__EW_OP_F(isinf, PFVM_BOOL);
    pfvm__ew_params p;
    memset(&p, 0, sizeof p);
    p.alpha = (pfvm__ew_real)(pfvm_node_attr_int(k->node, "detect_positive", 1) != 0);
    p.beta = (pfvm__ew_real)(pfvm_node_attr_int(k->node, "detect_negative", 1) != 0);
    return pfvm__ew_run_node(k, &op, &p, PFVM_BOOL);
}

static pfvm_code pfvm__ew_k_isinf_fuse(pfvm_fuse_ctx *f, const pfvm_node *n)
{
    static const pfvm__ew_op op = PFVM__EW_OP_F(isinf, PFVM_BOOL);
    pfvm__ew_params p;
    memset(&p, 0, sizeof p);
    p.alpha = (pfvm__ew_real)(pfvm_node_attr_int(n, "detect_positive", 1) != 0);
    p.beta = (pfvm__ew_real)(pfvm_node_attr_int(n, "detect_negative", 1) != 0);
    return pfvm__ew_fuse_op(f, n, &op, &p);
}

static pfvm_code pfvm__ew_k_mod(pfvm_kctx *k)
{
    static const pfvm__ew_op op = PFVM__EW_OP_FI2(mod, PFVM_FLOAT);
    pfvm__ew_params p;
    memset(&p, 0, sizeof p);
    p.mode = pfvm_node_attr_int(k->node, "fmod", 0) != 0;
    return pfvm__ew_run_node(k, &op, &p, PFVM_UNDEFINED);
}

static pfvm_code pfvm__ew_k_mod_fuse(pfvm_fuse_ctx *f, const pfvm_node *n)
{
    static const pfvm__ew_op op = PFVM__EW_OP_FI2(mod, PFVM_FLOAT);
    pfvm__ew_params p;
    memset(&p, 0, sizeof p);
    p.mode = pfvm_node_attr_int(n, "fmod", 0) != 0;
    return pfvm__ew_fuse_op(f, n, &op, &p);
}

static pfvm_code pfvm__ew_k_bitshift(pfvm_kctx *k)
{
    static const pfvm__ew_op op = PFVM__EW_OP_I(bitshift);
    pfvm__ew_params p;
    memset(&p, 0, sizeof p);
    p.mode = !strcmp(pfvm_node_attr_string(k->node, "direction", ""), "RIGHT");
    return pfvm__ew_run_node(k, &op, &p, PFVM_UNDEFINED);
}

static pfvm_code pfvm__ew_k_bitshift_fuse(pfvm_fuse_ctx *f, const pfvm_node *n)
{
    (void)n;
    return pfvm_fuse_refuse(f, "integers only");
}

static pfvm_code pfvm__ew_check_bitshift(const pfvm_node *n, pfvm_status *st)
{
    const char *dir = pfvm_node_attr_string(n, "direction", "");
    if (strcmp(dir, "LEFT") && strcmp(dir, "RIGHT"))
        return pfvm__fail(st, PFVM_ERR_INVALID, "attribute 'direction' must be LEFT or RIGHT, not '%s'", dir);
    return PFVM_OK;
}

/* PRelu before opset 7 takes one slope per channel (dim 1); later opsets
 * broadcast the slope numpy-style into X's shape. */
static pfvm_code pfvm__ew_k_prelu(pfvm_kctx *k)
{
    static const pfvm__ew_op op = PFVM__EW_OP_FI2(prelu, PFVM_FLOAT);
    const pfvm_tensor *ins[2];
    pfvm_tensor view;
    pfvm__ew_params p;
    memset(&p, 0, sizeof p);
    ins[0] = k->in[0];
    ins[1] = k->in[1];
    if (!k->out[0])
        return PFVM_OK;
    if (k->node->opset < 7 && ins[1]->rank == 1 && ins[0]->rank >= 2 && ins[1]->dims[0] == ins[0]->dims[1]) {
        int d;
        view = *ins[1];
        view.rank = ins[0]->rank - 1;
        for (d = 0; d < view.rank; d++)
            view.dims[d] = d == 0 ? ins[1]->dims[0] : 1;
        ins[1] = &view;
    }
    if (pfvm__ew_shape_output(k, k->out[0], ins, 1, ins[0]->dtype))
        return k->st->code;
    return pfvm__ew_map(k, &op, &p, ins, 2, k->out[0]);
}

static pfvm_code pfvm__ew_k_prelu_fuse(pfvm_fuse_ctx *f, const pfvm_node *n)
{
    static const pfvm__ew_op op = PFVM__EW_OP_FI2(prelu, PFVM_FLOAT);
    pfvm__ew_params p;
    memset(&p, 0, sizeof p);
    if (n->opset < 7)
        return pfvm_fuse_refuse(f, "per-channel slope");
    return pfvm__ew_fuse_op(f, n, &op, &p);
}

/* ---- variadic Sum, Mean, Max, Min ---------------------------------------------------- */

/* Folds the inputs pairwise into the output: the first step reads two
 * inputs, later ones the output and the next input. The input that shares
 * the output's storage, if any, goes first, before anything overwrites it. */
static pfvm_code pfvm__ew_fold(pfvm_kctx *k, const pfvm__ew_op *op, int mean)
{
    static const pfvm__ew_op divby = PFVM__EW_OP_F(divby, PFVM_FLOAT);
    const pfvm_tensor *ins[2], *all[PFVM__EW_MAX_IN];
    pfvm_tensor *out = k->out[0];
    pfvm__ew_params p;
    int j, first = 0;
    memset(&p, 0, sizeof p);
    if (!out)
        return PFVM_OK;
    for (j = 0; j < k->n_in; j++) {
        if (!k->in[j])
            return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "input %d is missing", j);
        if (k->in[j]->data == out->data && k->in[j]->data)
            first = j;
    }
    if (!out->data) {
        /* the broadcast of every input, in batches the shape helper takes */
        int64_t dims[PFVM_MAX_RANK];
        pfvm_tensor acc;
        memset(&acc, 0, sizeof acc);
        acc.rank = 0;
        for (j = 0; j < k->n_in; j++) {
            all[0] = &acc;
            all[1] = k->in[j];
            if (pfvm_ew_broadcast_dims(k, all, 2, &acc.rank, dims))
                return k->st->code;
            memcpy(acc.dims, dims, sizeof dims);
        }
        if (pfvm_kctx_output(k, 0, k->in[0]->dtype, acc.rank, acc.dims))
            return k->st->code;
    }
    ins[0] = k->in[first];
    if (k->n_in == 1) {
        if (ins[0]->data == out->data)
            return PFVM_OK;
        /* copying string pointers would give the output strings it does
         * not own (freed twice); these operators are numeric only */
        if (ins[0]->dtype == PFVM_STRING || out->dtype == PFVM_STRING)
            return pfvm__op_fail(k->st, k->node, PFVM_ERR_UNSUPPORTED, "element type string");
        if (ins[0]->dtype == out->dtype && ins[0]->rank == out->rank &&
            !memcmp(ins[0]->dims, out->dims, sizeof(int64_t) * (size_t)out->rank)) {
            memcpy(out->data, ins[0]->data, (size_t)pfvm_tensor_numel(out) * pfvm_dtype_size(out->dtype));
            return PFVM_OK;
        }
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "output type or shape differs from the single input's");
    }
    for (j = 0; j < k->n_in; j++) {
        if (j == first)
            continue;
        ins[1] = k->in[j];
        if (pfvm__ew_map(k, op, &p, ins, 2, out))
            return k->st->code;
        ins[0] = out;
    }
    if (mean) {
        p.alpha = (pfvm__ew_real)k->n_in;
        ins[0] = out;
        return pfvm__ew_map(k, &divby, &p, ins, 1, out);
    }
    return PFVM_OK;
}

static pfvm_code pfvm__ew_k_sum(pfvm_kctx *k)
{
    static const pfvm__ew_op op = PFVM__EW_OP_FI2(add, PFVM_FLOAT);
    return pfvm__ew_fold(k, &op, 0);
}

static pfvm_code pfvm__ew_k_mean(pfvm_kctx *k)
{
    static const pfvm__ew_op op = PFVM__EW_OP_FI2(add, PFVM_FLOAT);
    return pfvm__ew_fold(k, &op, 1);
}

static pfvm_code pfvm__ew_k_max(pfvm_kctx *k)
{
    static const pfvm__ew_op op = PFVM__EW_OP_FI2(max, PFVM_FLOAT);
    return pfvm__ew_fold(k, &op, 0);
}

static pfvm_code pfvm__ew_k_min(pfvm_kctx *k)
{
    static const pfvm__ew_op op = PFVM__EW_OP_FI2(min, PFVM_FLOAT);
    return pfvm__ew_fold(k, &op, 0);
}

/* The variadic operators fold their inputs in order, like the kernels;
 * Mean then divides by the count. */
static pfvm_code pfvm__ew_fuse_fold(pfvm_fuse_ctx *f, const pfvm_node *n, const pfvm__ew_op *op, int mean)
{
    static const pfvm__ew_op divby = PFVM__EW_OP_F(divby, PFVM_FLOAT);
    pfvm__ew_params p;
    int j, acc, src[2];
    memset(&p, 0, sizeof p);
    for (j = 0; j < n->n_inputs; j++)
        if (!n->inputs[j] || pfvm_fuse_dtype(f, j) != PFVM_FLOAT)
            return pfvm_fuse_refuse(f, "input types");
    if (n->n_inputs < 1 || n->n_outputs < 1 || !n->outputs[0])
        return pfvm_fuse_refuse(f, "arity");
    if (n->n_inputs == 1)
        return pfvm_fuse_alias(f, PFVM_FUSE_OUT(0), PFVM_FUSE_IN(0));
    acc = PFVM_FUSE_IN(0);
    for (j = 1; j < n->n_inputs; j++) {
        int d = j == n->n_inputs - 1 && !mean ? PFVM_FUSE_OUT(0) : pfvm_fuse_tmp(f);
        pfvm_code rc;
        src[0] = acc;
        src[1] = PFVM_FUSE_IN(j);
        if ((rc = pfvm_fuse_emit(f, op->z, &p, sizeof p, d, 2, src)) != PFVM_OK ||
            (op->zc && (rc = pfvm_fuse_variant(f, op->zc)) != PFVM_OK) ||
            (op->uop && (rc = pfvm_fuse_uop(f, op->uop)) != PFVM_OK))
            return rc;
        acc = d;
    }
    if (!mean)
        return PFVM_OK;
    p.alpha = (pfvm__ew_real)n->n_inputs;
    pfvm__ew_params_floats(&p);
    return pfvm_fuse_emit(f, divby.z, &p, sizeof p, PFVM_FUSE_OUT(0), 1, &acc);
}

static pfvm_code pfvm__ew_k_sum_fuse(pfvm_fuse_ctx *f, const pfvm_node *n)
{
    static const pfvm__ew_op op = PFVM__EW_OP_FI2U(add, PFVM_FLOAT, PFVM_FUSE_U_ADD);
    return pfvm__ew_fuse_fold(f, n, &op, 0);
}

static pfvm_code pfvm__ew_k_mean_fuse(pfvm_fuse_ctx *f, const pfvm_node *n)
{
    static const pfvm__ew_op op = PFVM__EW_OP_FI2U(add, PFVM_FLOAT, PFVM_FUSE_U_ADD);
    return pfvm__ew_fuse_fold(f, n, &op, 1);
}

static pfvm_code pfvm__ew_k_max_fuse(pfvm_fuse_ctx *f, const pfvm_node *n)
{
    static const pfvm__ew_op op = PFVM__EW_OP_FI2U(max, PFVM_FLOAT, PFVM_FUSE_U_MAX);
    return pfvm__ew_fuse_fold(f, n, &op, 0);
}

static pfvm_code pfvm__ew_k_min_fuse(pfvm_fuse_ctx *f, const pfvm_node *n)
{
    static const pfvm__ew_op op = PFVM__EW_OP_FI2U(min, PFVM_FLOAT, PFVM_FUSE_U_MIN);
    return pfvm__ew_fuse_fold(f, n, &op, 0);
}

/* ---- the shared binary helper ---------------------------------------------------------- */

PFVM_INTERNAL pfvm_code pfvm_ew_broadcast_binary(pfvm_kctx *k, pfvm_ew_binop op, const pfvm_tensor *a,
                                                 const pfvm_tensor *b, pfvm_tensor *out)
{
    static const pfvm__ew_op ops[] = {
        PFVM__EW_OP_FI2(add, PFVM_FLOAT), PFVM__EW_OP_FI2(sub, PFVM_FLOAT),       PFVM__EW_OP_FI2(mul, PFVM_FLOAT),
        PFVM__EW_OP_FI2(div, PFVM_FLOAT), PFVM__EW_OP_FI2(pow, PFVM_FLOAT),       PFVM__EW_OP_FI2(max, PFVM_FLOAT),
        PFVM__EW_OP_FI2(min, PFVM_FLOAT), PFVM__EW_OP_FI2(equal, PFVM_BOOL),      PFVM__EW_OP_FI2(less, PFVM_BOOL),
        PFVM__EW_OP_FI2(greater, PFVM_BOOL)};
    const pfvm_tensor *ins[2];
    pfvm__ew_params p;
    if ((unsigned)op >= sizeof ops / sizeof ops[0])
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "unknown element-wise operator %d", (int)op);
    if (!a || !b || !out)
        return pfvm__ew_fail(k, PFVM_ERR_INVALID, "missing operand");
    memset(&p, 0, sizeof p);
    ins[0] = a;
    ins[1] = b;
    if (!out->data && pfvm__ew_shape_output(k, out, ins, 2, out->dtype ? out->dtype : a->dtype))
        return k->st->code;
    return pfvm__ew_map(k, &ops[op], &p, ins, 2, out);
}

/* ---- Where, Clip ------------------------------------------------------------------- */

typedef struct pfvm__ew_where {
    const pfvm_tensor *cond, *x, *y;
    pfvm_tensor *out;
    pfvm_kctx *k;
    pfvm_code rc;
} pfvm__ew_where;

#define PFVM__EW_SELECT(T)                                                                \
    do {                                                                                  \
        const T *x_ = (const T *)w->x->data, *y_ = (const T *)w->y->data;                  \
        T *o_ = (T *)w->out->data + pos;                                                   \
        for (e = 0; e < len; e++)                                                          \
            o_[e] = c[e * stride[0]] ? x_[off[1] + e * stride[1]] : y_[off[2] + e * stride[2]]; \
    } while (0)

static void pfvm__ew_where_span(void *user, int64_t pos, int64_t len, const int64_t *off, const int64_t *stride)
{
    pfvm__ew_where *w = (pfvm__ew_where *)user;
    const uint8_t *c = (const uint8_t *)w->cond->data + off[0];
    int64_t e;
    switch (w->out->dtype == PFVM_STRING ? 0 : pfvm_dtype_size(w->out->dtype)) {
    case 1: PFVM__EW_SELECT(uint8_t); break;
    case 2: PFVM__EW_SELECT(uint16_t); break;
    case 4: PFVM__EW_SELECT(uint32_t); break;
    case 8: PFVM__EW_SELECT(uint64_t); break;
    default:
        for (e = 0; e < len && !w->rc; e++) {
            const pfvm_tensor *src = c[e * stride[0]] ? w->x : w->y;
            int j = src == w->x ? 1 : 2;
            w->rc = pfvm__ew_set_string(w->k, w->out, pos + e, ((char *const *)src->data)[off[j] + e * stride[j]]);
        }
        break;
    }
}

static pfvm_code pfvm__ew_k_where(pfvm_kctx *k)
{
    pfvm__ew_where w;
    size_t es;
    if (!k->out[0])
        return PFVM_OK;
    w.cond = k->in[0];
    w.x = k->in[1];
    w.y = k->in[2];
    w.out = k->out[0];
    w.k = k;
    w.rc = PFVM_OK;
    if (w.cond->dtype != PFVM_BOOL)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "condition has type %s, not bool",
                             pfvm_dtype_name(w.cond->dtype));
    if (w.x->dtype != w.y->dtype)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "X is %s but Y is %s", pfvm_dtype_name(w.x->dtype),
                             pfvm_dtype_name(w.y->dtype));
    if (pfvm__ew_shape_output(k, w.out, k->in, 3, w.x->dtype))
        return k->st->code;
    es = pfvm_dtype_size(w.x->dtype);
    if (w.out->dtype != w.x->dtype || (w.x->dtype != PFVM_STRING && es != 1 && es != 2 && es != 4 && es != 8))
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_UNSUPPORTED, "element type %s is not supported",
                             pfvm_dtype_name(w.x->dtype));
    if (pfvm_ew_apply(k, k->in, 3, w.out, pfvm__ew_where_span, &w))
        return k->st->code;
    return w.rc;
}

PFVM_DISPATCH static void pfvm__ew_z_where(float *PFVM_RESTRICT y, const float *const *s, const void *pv)
{
    const float *c = s[0];
    const float *a = s[1];
    const float *b = s[2];
    int e;
    (void)pv;
    for (e = 0; e < PFVM_FUSE_BLOCK; e++)
        y[e] = c[e] != 0 ? a[e] : b[e];
}

static pfvm_code pfvm__ew_k_where_fuse(pfvm_fuse_ctx *f, const pfvm_node *n)
{
    static const int src[3] = {PFVM_FUSE_IN(0), PFVM_FUSE_IN(1), PFVM_FUSE_IN(2)};
    if (n->n_inputs != 3 || pfvm_fuse_dtype(f, 0) != PFVM_BOOL || pfvm_fuse_dtype(f, 1) != PFVM_FLOAT ||
        pfvm_fuse_dtype(f, 2) != PFVM_FLOAT)
        return pfvm_fuse_refuse(f, "input types");
    return pfvm_fuse_emit(f, pfvm__ew_z_where, NULL, 0, PFVM_FUSE_OUT(0), 3, src);
}

static int pfvm__ew_sym_vec(pfvm_ictx *c, int i, int n, const pfvm_sym **out);
static int pfvm__ew_sym_len_of(pfvm_ictx *c, int n_in);

/* Where on shape values (the exporters' `-1` idiom: Where(Equal(shape, -1),
 * ones, shape)): a decided condition picks its side, equal sides need no
 * condition, and an undecided symbolic boolean b gives b*x + (1-b)*y. */
static pfvm_code pfvm__ew_infer_where(pfvm_ictx *c)
{
    pfvm_dtype cd = c->in[0]->type.dtype, xd = c->in[1]->type.dtype, yd = c->in[2]->type.dtype;
    const pfvm_sym *b[64], *x[64], *y[64], *r[64];
    pfvm_code rc;
    int n, k;
    if (cd != PFVM_UNDEFINED && cd != PFVM_BOOL)
        return pfvm__fail(c->st, PFVM_ERR_INVALID, "condition has type %s, not bool", pfvm_dtype_name(cd));
    if (xd != PFVM_UNDEFINED && yd != PFVM_UNDEFINED && xd != yd)
        return pfvm__fail(c->st, PFVM_ERR_INVALID, "X is %s but Y is %s", pfvm_dtype_name(xd), pfvm_dtype_name(yd));
    rc = pfvm_ew_infer_broadcast_to(c, xd != PFVM_UNDEFINED ? xd : yd);
    if (rc || !(n = pfvm__ew_sym_len_of(c, 3)) || c->out[0]->type.shape.rank > 1 ||
        !pfvm_dtype_is_int(c->out[0]->type.dtype))
        return rc;
    if (!pfvm__ew_sym_vec(c, 0, n, b) || !pfvm__ew_sym_vec(c, 1, n, x) || !pfvm__ew_sym_vec(c, 2, n, y))
        return PFVM_OK;
    for (k = 0; k < n; k++) {
        int64_t v;
        if (pfvm_sym_is_const(b[k], &v))
            r[k] = v ? x[k] : y[k];
        else if (pfvm_sym_proven_eq(x[k], y[k]))
            r[k] = x[k];
        else
            r[k] = pfvm_sym_add(c->syms, pfvm_sym_mul(c->syms, b[k], x[k]),
                                pfvm_sym_mul(c->syms, pfvm_sym_not(c->syms, b[k]), y[k]));
        if (!r[k])
            return PFVM_OK;
    }
    return pfvm_ival_set_sym(c, c->out[0], r, n);
}

/* Clip's bound from input i (opset 11+): absent or empty means none. */
static pfvm_code pfvm__ew_clip_bound(pfvm_kctx *k, int i, pfvm__ew_real *f, int64_t *v, int *has)
{
    const pfvm_tensor *t = k->n_in > i ? k->in[i] : NULL;
    int64_t n;
    *has = 0;
    if (!t || (n = pfvm_tensor_numel(t)) == 0)
        return PFVM_OK;
    if (n != 1 || !pfvm__ew_numeric(t->dtype))
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "input %d (%s) must be a numeric scalar", i,
                             i == 1 ? "min" : "max");
    *f = (pfvm__ew_real)pfvm_tensor_get_f64(t, 0);
    *v = pfvm_tensor_get_i64(t, 0);
    *has = 1;
    return PFVM_OK;
}

static pfvm_code pfvm__ew_k_clip(pfvm_kctx *k)
{
    static const pfvm__ew_op op = PFVM__EW_OP_FI(clip, PFVM_FLOAT);
    pfvm__ew_params p;
    const pfvm_tensor *x = k->in[0];
    int has_lo, has_hi;
    memset(&p, 0, sizeof p);
    if (k->node->opset < 11) {
        p.alpha = pfvm_node_attr_float(k->node, "min", -FLT_MAX);
        p.beta = pfvm_node_attr_float(k->node, "max", FLT_MAX);
        p.lo = pfvm__ew_f2i(p.alpha);
        p.hi = pfvm__ew_f2i(p.beta);
        p.mode = 3;
    } else {
        p.alpha = -INFINITY;
        p.beta = INFINITY;
        if (pfvm__ew_clip_bound(k, 1, &p.alpha, &p.lo, &has_lo) || pfvm__ew_clip_bound(k, 2, &p.beta, &p.hi, &has_hi))
            return k->st->code;
        p.mode = has_lo | has_hi << 1;
    }
    if (!k->out[0])
        return PFVM_OK;
    if (pfvm__ew_shape_output(k, k->out[0], &x, 1, x->dtype))
        return k->st->code;
    return pfvm__ew_map(k, &op, &p, &x, 1, k->out[0]);
}

/* Clip's bounds from inputs, one at a time, in the kernel's order: the
 * lower bound first (NaN stays NaN). */
PFVM_DISPATCH static void pfvm__ew_z_clip_lo(float *PFVM_RESTRICT y, const float *const *s, const void *pv)
{
    const float *a = s[0];
    const float *lo = s[1];
    int e;
    (void)pv;
    for (e = 0; e < PFVM_FUSE_BLOCK; e++)
        y[e] = a[e] < lo[e] ? lo[e] : a[e];
}

PFVM_DISPATCH static void pfvm__ew_z_clip_hi(float *PFVM_RESTRICT y, const float *const *s, const void *pv)
{
    const float *a = s[0];
    const float *hi = s[1];
    int e;
    (void)pv;
    for (e = 0; e < PFVM_FUSE_BLOCK; e++)
        y[e] = a[e] > hi[e] ? hi[e] : a[e];
}

/* Is input i of the fused node known, and no entry NaN? Then a < b ? b : a
 * (Clip's lower bound b) is the micro-op max(a, b), and a > b ? b : a
 * min(a, b): they differ only when b is NaN. */
static int pfvm__ew_clip_bound_known(const pfvm_fuse_ctx *f, int i)
{
    const pfvm_tensor *t = pfvm_fuse_const(f, i);
    int64_t e, n;
    if (!t || !t->data || t->dtype != PFVM_FLOAT)
        return 0;
    n = pfvm_tensor_numel(t);
    if (n < 0 || (uint64_t)n > t->nbytes / sizeof(float))
        return 0;
    for (e = 0; e < n; e++) {
        float v = ((const float *)t->data)[e]; /* float: no soft double on Cortex-M */
        if (v != v)
            return 0;
    }
    return 1;
}

static pfvm_code pfvm__ew_k_clip_fuse(pfvm_fuse_ctx *f, const pfvm_node *n)
{
    static const pfvm__ew_op op = PFVM__EW_OP_FI(clip, PFVM_FLOAT);
    pfvm__ew_params p;
    int src[2], has_lo, has_hi, j;
    pfvm_code rc;
    memset(&p, 0, sizeof p);
    for (j = 0; j < n->n_inputs; j++)
        if (n->inputs[j] && pfvm_fuse_dtype(f, j) != PFVM_FLOAT)
            return pfvm_fuse_refuse(f, "input types");
    if (n->opset < 11) {
        p.alpha = pfvm_node_attr_float(n, "min", -FLT_MAX);
        p.beta = pfvm_node_attr_float(n, "max", FLT_MAX);
        return pfvm__ew_fuse_op(f, n, &op, &p);
    }
    has_lo = n->n_inputs > 1 && n->inputs[1];
    has_hi = n->n_inputs > 2 && n->inputs[2];
    if (!has_lo && !has_hi)
        return pfvm_fuse_alias(f, PFVM_FUSE_OUT(0), PFVM_FUSE_IN(0));
    src[0] = PFVM_FUSE_IN(0);
    if (has_lo) {
        int d = has_hi ? pfvm_fuse_tmp(f) : PFVM_FUSE_OUT(0);
        src[1] = PFVM_FUSE_IN(1);
        if ((rc = pfvm_fuse_emit(f, pfvm__ew_z_clip_lo, NULL, 0, d, 2, src)) != PFVM_OK ||
            (pfvm__ew_clip_bound_known(f, 1) && (rc = pfvm_fuse_uop(f, PFVM_FUSE_U_MAX)) != PFVM_OK))
            return rc;
        src[0] = d;
    }
    if (!has_hi)
        return PFVM_OK;
    src[1] = PFVM_FUSE_IN(2);
    if ((rc = pfvm_fuse_emit(f, pfvm__ew_z_clip_hi, NULL, 0, PFVM_FUSE_OUT(0), 2, src)) != PFVM_OK)
        return rc;
    return pfvm__ew_clip_bound_known(f, 2) ? pfvm_fuse_uop(f, PFVM_FUSE_U_MIN) : PFVM_OK;
}

/* ---- Cast ---------------------------------------------------------------------------- */

/* Does `s` read back as v in type t? */
static int pfvm__ew_reads_back(const char *s, double v, pfvm_dtype t)
{
    double r = strtod(s, NULL);
    switch (t) {
    case PFVM_DOUBLE: return r == v;
    case PFVM_FLOAT16: return pfvm_float_to_half((float)r) == pfvm_float_to_half((float)v);
    case PFVM_BFLOAT16: return pfvm_float_to_bf16((float)r) == pfvm_float_to_bf16((float)v);
    default: return (float)r == (float)v;
    }
}

/* A float as numpy's str() writes it: the fewest significant digits that
 * read back as the same value of its type, positional from 1e-4 to 1e16
 * ("0.5", "3.0", "123456790.0"), scientific outside ("1e-05", "1.5e+20");
 * the special values in the spelling Cast reads ("NaN", "INF", "-INF"). */
static void pfvm__ew_float_text(double v, pfvm_dtype t, char *buf, size_t n)
{
    char sci[40], digits[24];
    int prec, exp10, nd = 0, i;
    const char *p;
    size_t len = 0;
    if (v != v) {
        snprintf(buf, n, "NaN");
        return;
    }
    if (isinf(v)) {
        snprintf(buf, n, v > 0 ? "INF" : "-INF");
        return;
    }
    if (v == 0) {
        snprintf(buf, n, signbit(v) ? "-0.0" : "0.0");
        return;
    }
    for (prec = 1; prec < 17; prec++) {
        snprintf(sci, sizeof sci, "%.*e", prec - 1, v);
        if (pfvm__ew_reads_back(sci, v, t))
            break;
    }
    if (prec == 17)
        snprintf(sci, sizeof sci, "%.16e", v);
    /* sci is "[-]d.ddde[+-]xx": collect the digits, drop trailing zeros */
    for (p = sci; *p && *p != 'e'; p++)
        if (*p >= '0' && *p <= '9' && nd < (int)sizeof digits - 1)
            digits[nd++] = *p;
    exp10 = *p == 'e' ? atoi(p + 1) : 0;
    while (nd > 1 && digits[nd - 1] == '0')
        nd--;
    digits[nd] = 0;
#define PFVM__EW_PUT(c)       \
    do {                      \
        if (len + 1 < n)      \
            buf[len++] = (c); \
    } while (0)
    if (v < 0)
        PFVM__EW_PUT('-');
    if (fabs(v) >= 1e-4 && fabs(v) < 1e16) {
        if (exp10 < 0) {
            PFVM__EW_PUT('0');
            PFVM__EW_PUT('.');
            for (i = -1; i > exp10; i--)
                PFVM__EW_PUT('0');
            for (i = 0; i < nd; i++)
                PFVM__EW_PUT(digits[i]);
        } else {
            for (i = 0; i <= exp10; i++)
                PFVM__EW_PUT(i < nd ? digits[i] : '0');
            PFVM__EW_PUT('.');
            if (nd <= exp10 + 1)
                PFVM__EW_PUT('0');
            for (i = exp10 + 1; i < nd; i++)
                PFVM__EW_PUT(digits[i]);
        }
        buf[len] = 0;
    } else {
        PFVM__EW_PUT(digits[0]);
        if (nd > 1) {
            PFVM__EW_PUT('.');
            for (i = 1; i < nd; i++)
                PFVM__EW_PUT(digits[i]);
        }
        buf[len] = 0;
        snprintf(buf + len, n - len, "e%c%02d", exp10 < 0 ? '-' : '+', exp10 < 0 ? -exp10 : exp10);
    }
#undef PFVM__EW_PUT
}

static void pfvm__ew_to_text(const pfvm_tensor *x, int64_t i, char *buf, size_t n)
{
    double f;
    int64_t v;
    if (pfvm_dtype_is_float(x->dtype)) {
        pfvm__ew_load_f64(x, i, 0, 1, &f);
        pfvm__ew_float_text(f, x->dtype, buf, n);
        return;
    }
    pfvm__ew_load_i64(x, i, 0, 1, &v);
    if (x->dtype == PFVM_BOOL)
        snprintf(buf, n, v ? "True" : "False");
    else if (x->dtype == PFVM_UINT64)
        pfvm__snprintf(buf, n, "%llu", (unsigned long long)(uint64_t)v);
    else
        pfvm__snprintf(buf, n, "%lld", (long long)v);
}

/* Text to element i of a numeric tensor: integers exactly when the whole
 * text is one, otherwise through strtod ("1e3", "2.7", "INF", "NaN"). */
static void pfvm__ew_from_text(const char *s, pfvm_tensor *out, int64_t i)
{
    char *end;
    double f;
    if (!s)
        s = "";
    if (out->dtype == PFVM_BOOL && (!strcmp(s, "True") || !strcmp(s, "true"))) {
        ((uint8_t *)out->data)[i] = 1;
        return;
    }
    if (pfvm_dtype_is_int(out->dtype) || out->dtype == PFVM_BOOL) {
        int64_t v;
        errno = 0;
        if (out->dtype == PFVM_UINT64 && s[0] != '-')
            v = (int64_t)strtoull(s, &end, 10);
        else
            v = strtoll(s, &end, 10);
        if (end != s && !*end && !errno) {
            pfvm__ew_store_i64(out, i, 1, &v, out->dtype == PFVM_UINT64);
            return;
        }
    }
    f = strtod(s, NULL);
    pfvm__ew_store_f64(out, i, 1, &f);
}

/* Numeric casts in chunks through double (float sources) or int64. */
static void pfvm__ew_cast_numeric(const pfvm_tensor *x, pfvm_tensor *out, int64_t n)
{
    int64_t i, c;
    int u = !pfvm_dtype_is_signed(x->dtype);
    if (x->dtype == out->dtype) {
        if (x->data != out->data)
            memcpy(out->data, x->data, (size_t)n * pfvm_dtype_size(x->dtype));
        return;
    }
    for (i = 0; i < n; i += c) {
        c = n - i < PFVM__EW_CHUNK ? n - i : PFVM__EW_CHUNK;
        if (pfvm_dtype_is_float(x->dtype)) {
            double v[PFVM__EW_CHUNK];
            pfvm__ew_load_f64(x, i, 1, c, v);
            pfvm__ew_store_f64(out, i, c, v);
        } else {
            int64_t v[PFVM__EW_CHUNK];
            pfvm__ew_load_i64(x, i, 1, c, v);
            pfvm__ew_store_i64(out, i, c, v, u);
        }
    }
}

static int pfvm__ew_castable(pfvm_dtype t)
{
    return pfvm__ew_numeric(t) || t == PFVM_STRING;
}

static pfvm_code pfvm__ew_cast(pfvm_kctx *k, pfvm_dtype to)
{
    const pfvm_tensor *x = k->in[0];
    pfvm_tensor *out = k->out[0];
    int64_t i, n = pfvm_tensor_numel(x);
    char buf[64];
    if (!pfvm__ew_castable(to) || !pfvm__ew_castable(x->dtype))
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_UNSUPPORTED, "cast from %s to %s is not supported",
                             pfvm_dtype_name(x->dtype), pfvm_dtype_name(to));
    if (!out)
        return PFVM_OK;
    if (pfvm__ew_shape_output(k, out, &x, 1, to))
        return k->st->code;
    if (out->dtype != to || pfvm_tensor_numel(out) != n)
        return pfvm__ew_fail(k, PFVM_ERR_INVALID, "output type or size does not match the cast");
    if (to == PFVM_STRING) {
        for (i = 0; i < n; i++) {
            const char *s = buf;
            if (x->dtype == PFVM_STRING)
                s = ((char *const *)x->data)[i];
            else
                pfvm__ew_to_text(x, i, buf, sizeof buf);
            if (pfvm__ew_set_string(k, out, i, s))
                return k->st->code;
        }
    } else if (x->dtype == PFVM_STRING) {
        for (i = 0; i < n; i++)
            pfvm__ew_from_text(((char *const *)x->data)[i], out, i);
    } else {
        pfvm__ew_cast_numeric(x, out, n);
    }
    return PFVM_OK;
}

static pfvm_code pfvm__ew_k_cast(pfvm_kctx *k)
{
    return pfvm__ew_cast(k, (pfvm_dtype)pfvm_node_attr_int(k->node, "to", 0));
}

static pfvm_code pfvm__ew_k_castlike(pfvm_kctx *k)
{
    return pfvm__ew_cast(k, k->in[1]->dtype);
}

/* Cast in a fused group. Registers hold float32: float16, bfloat16 and
 * bool values exactly, double and integer inputs as the float they round
 * to when loaded (what a cast to float computes). So casts to float are
 * free, casts to float16/bfloat16 round in place, casts to bool compare
 * with 0, and casts to double keep values that are exact in float; the
 * rest (to integers, from double to bool or double) stay out. */
PFVM_DISPATCH static void pfvm__ew_z_to_half(float *PFVM_RESTRICT y, const float *const *s, const void *pv)
{
    const float *a = s[0];
    int e;
    (void)pv;
    for (e = 0; e < PFVM_FUSE_BLOCK; e++)
        y[e] = pfvm_half_to_float(pfvm_float_to_half(a[e]));
}

PFVM_DISPATCH static void pfvm__ew_z_to_bf16(float *PFVM_RESTRICT y, const float *const *s, const void *pv)
{
    const float *a = s[0];
    int e;
    (void)pv;
    for (e = 0; e < PFVM_FUSE_BLOCK; e++)
        y[e] = pfvm_bf16_to_float(pfvm_float_to_bf16(a[e]));
}

PFVM_DISPATCH static void pfvm__ew_z_to_bool(float *PFVM_RESTRICT y, const float *const *s, const void *pv)
{
    const float *a = s[0];
    int e;
    (void)pv;
    for (e = 0; e < PFVM_FUSE_BLOCK; e++)
        y[e] = a[e] != 0 ? 1.0f : 0.0f;
}

static pfvm_code pfvm__ew_fuse_cast(pfvm_fuse_ctx *f, pfvm_dtype from, pfvm_dtype to)
{
    int exact = from == PFVM_FLOAT || from == PFVM_FLOAT16 || from == PFVM_BFLOAT16 || from == PFVM_BOOL;
    int rounded = from == PFVM_DOUBLE || pfvm_dtype_is_int(from);
    int src = PFVM_FUSE_IN(0);
    if (!exact && !rounded)
        return pfvm_fuse_refuse(f, "source type");
    switch (to) {
    case PFVM_FLOAT: return pfvm_fuse_alias(f, PFVM_FUSE_OUT(0), src);
    case PFVM_FLOAT16: return pfvm_fuse_emit(f, pfvm__ew_z_to_half, NULL, 0, PFVM_FUSE_OUT(0), 1, &src);
    case PFVM_BFLOAT16: return pfvm_fuse_emit(f, pfvm__ew_z_to_bf16, NULL, 0, PFVM_FUSE_OUT(0), 1, &src);
    case PFVM_BOOL:
        if (from == PFVM_DOUBLE)
            return pfvm_fuse_refuse(f, "double to bool");
        return from == PFVM_BOOL ? pfvm_fuse_alias(f, PFVM_FUSE_OUT(0), src)
                                 : pfvm_fuse_emit(f, pfvm__ew_z_to_bool, NULL, 0, PFVM_FUSE_OUT(0), 1, &src);
    case PFVM_DOUBLE:
        if (!exact)
            return pfvm_fuse_refuse(f, "not exact in float");
        return pfvm_fuse_alias(f, PFVM_FUSE_OUT(0), src);
    default: return pfvm_fuse_refuse(f, "target type");
    }
}

static pfvm_code pfvm__ew_k_cast_fuse(pfvm_fuse_ctx *f, const pfvm_node *n)
{
    return pfvm__ew_fuse_cast(f, pfvm_fuse_dtype(f, 0), (pfvm_dtype)pfvm_node_attr_int(n, "to", 0));
}

static pfvm_code pfvm__ew_k_castlike_fuse(pfvm_fuse_ctx *f, const pfvm_node *n)
{
    (void)n;
    return pfvm__ew_fuse_cast(f, pfvm_fuse_dtype(f, 0), pfvm_fuse_dtype(f, 1));
}

static pfvm_code pfvm__ew_check_cast(const pfvm_node *n, pfvm_status *st)
{
    int64_t to = pfvm_node_attr_int(n, "to", 0);
    if (to <= 0 || to >= PFVM_DTYPE_COUNT)
        return pfvm__fail(st, PFVM_ERR_INVALID, "attribute 'to' is not a valid element type (%lld)", (long long)to);
    return PFVM_OK;
}

/* ---- inference ----------------------------------------------------------------- */

static pfvm_code pfvm__ew_infer_unary(pfvm_ictx *c)
{
    return pfvm_infer_same_as(c, 0, 0);
}

/* PRelu: the slope broadcasts into X (one per channel before opset 7). */
static pfvm_code pfvm__ew_infer_prelu(pfvm_ictx *c)
{
    const pfvm_shape *x = &c->in[0]->type.shape, *sl = &c->in[1]->type.shape, *shapes[2];
    pfvm_shape out;
    int d;
    if (x->rank >= 0 && sl->rank >= 0) {
        if (sl->rank > x->rank)
            return pfvm__fail(c->st, PFVM_ERR_SHAPE, "slope has rank %d, more than X's %d", sl->rank, x->rank);
        if (c->node->opset >= 7 || sl->rank != 1 || x->rank < 2) {
            shapes[0] = x;
            shapes[1] = sl;
            if (pfvm_infer_broadcast(c, shapes, 2, &out))
                return c->st ? c->st->code : PFVM_ERR_SHAPE;
            for (d = 0; d < x->rank; d++)
                if (out.dims[d] != x->dims[d] && pfvm_sym_proven_ne(c->syms, out.dims[d], x->dims[d]))
                    return pfvm__fail(c->st, PFVM_ERR_SHAPE, "slope does not broadcast into X (dimension %d)", d);
        }
    }
    return pfvm_infer_same_as(c, 0, 0);
}

/* Clip (opset 11): min and max are scalars. */
static pfvm_code pfvm__ew_infer_clip(pfvm_ictx *c)
{
    int j, d;
    for (j = 1; j < c->n_in; j++) {
        const pfvm_shape *s = c->in[j] ? &c->in[j]->type.shape : NULL;
        if (!s || c->in[j]->type.kind != PFVM_KIND_TENSOR)
            continue;
        for (d = 0; d < s->rank; d++)
            if (pfvm_sym_proven_ge(c->syms, s->dims[d], 2))
                return pfvm__fail(c->st, PFVM_ERR_SHAPE, "%s must be a scalar", j == 1 ? "min" : "max");
    }
    return pfvm_infer_same_as(c, 0, 0);
}

PFVM_INTERNAL pfvm_code pfvm_ew_infer_broadcast_to(pfvm_ictx *c, pfvm_dtype dtype)
{
    const pfvm_shape **shapes;
    pfvm_shape out;
    int j, n = 0;
    shapes = (const pfvm_shape **)pfvm_ictx_alloc(c, sizeof *shapes * (size_t)(c->n_in + 1));
    if (!shapes)
        return pfvm__fail(c->st, PFVM_ERR_NOMEM, "out of memory");
    for (j = 0; j < c->n_in; j++)
        if (c->in[j])
            shapes[n++] = &c->in[j]->type.shape;
    if (!n)
        return pfvm__fail(c->st, PFVM_ERR_INVALID, "no inputs");
    if (pfvm_infer_broadcast(c, shapes, n, &out))
        return c->st ? c->st->code : PFVM_ERR_SHAPE;
    if (c->out[0])
        pfvm_ival_set_tensor(c->out[0], dtype, &out);
    return PFVM_OK;
}

static pfvm_code pfvm__ew_infer_bcast(pfvm_ictx *c)
{
    int j;
    /* before opset 7 the output has A's shape (B broadcasts into it) */
    if (c->node->opset < 7 && c->n_in == 2 && pfvm_node_attr_int(c->node, "broadcast", 0))
        return pfvm_infer_same_as(c, 0, 0);
    for (j = 0; j < c->n_in; j++)
        if (c->in[j])
            return pfvm_ew_infer_broadcast_to(c, c->in[j]->type.dtype);
    return pfvm__fail(c->st, PFVM_ERR_INVALID, "no inputs");
}

/* Symbolic contents of input i as n entries (a scalar repeats), or 0. */
static int pfvm__ew_sym_vec(pfvm_ictx *c, int i, int n, const pfvm_sym **out)
{
    const pfvm_ival *v = c->in[i];
    int64_t tmp[64];
    int k, m;
    if (v->sym) {
        if (v->n_sym != n && v->n_sym != 1)
            return 0;
        for (k = 0; k < n; k++)
            out[k] = v->sym[v->n_sym == 1 ? 0 : k];
        return 1;
    }
    m = pfvm_ival_ints(v, tmp, 64);
    if (m < 0 || (m != n && m != 1))
        return 0;
    for (k = 0; k < n; k++)
        out[k] = pfvm_sym_const(c->syms, tmp[m == 1 ? 0 : k]);
    return 1;
}

/* The length of the inputs' symbolic contents (the longest; the others
 * must match or be scalars, which pfvm__ew_sym_vec checks), or 0 when no
 * input of the n_in has symbolic contents. */
static int pfvm__ew_sym_len_of(pfvm_ictx *c, int n_in)
{
    int n = 0, j;
    if (c->n_in != n_in || !c->out[0])
        return 0;
    for (j = 0; j < n_in; j++)
        if (!c->in[j])
            return 0;
    for (j = 0; j < n_in; j++)
        if (c->in[j]->sym && c->in[j]->n_sym > n)
            n = c->in[j]->n_sym;
    return n >= 1 && n <= 64 ? n : 0;
}

/* The common length of two inputs' symbolic contents, or 0. */
static int pfvm__ew_sym_len(pfvm_ictx *c)
{
    return pfvm__ew_sym_len_of(c, 2);
}

/* Shape arithmetic: Add/Sub/Mul/Div of small integer vectors whose
 * contents are known symbolically (Shape -> Gather -> Mul -> Concat). Each
 * operator gives its symbolic form; NULL means "not known". */
typedef const pfvm_sym *(*pfvm__ew_sym_op)(pfvm_symtab *t, const pfvm_sym *a, const pfvm_sym *b);

static const pfvm_sym *pfvm__ew_sym_div(pfvm_symtab *t, const pfvm_sym *a, const pfvm_sym *b)
{
    /* integer Div truncates: equal to floor only for non-negative values */
    if (pfvm_sym_proven_nonneg(a) && pfvm_sym_is_const(b, NULL) && b->value > 0)
        return pfvm_sym_div(t, a, b);
    return NULL;
}

/* The output's symbolic contents: op over the two inputs' n symbolic
 * elements, or nothing (no error) when either has none or op gives up. */
static pfvm_code pfvm__ew_sym_apply(pfvm_ictx *c, int n, pfvm__ew_sym_op op)
{
    const pfvm_sym *a[64], *b[64], *r[64];
    int k;
    if (!pfvm__ew_sym_vec(c, 0, n, a) || !pfvm__ew_sym_vec(c, 1, n, b))
        return PFVM_OK;
    for (k = 0; k < n; k++)
        if (!(r[k] = op(c->syms, a[k], b[k])))
            return PFVM_OK;
    return pfvm_ival_set_sym(c, c->out[0], r, n);
}

static pfvm_code pfvm__ew_infer_arith(pfvm_ictx *c, pfvm__ew_sym_op op)
{
    pfvm_code rc = pfvm__ew_infer_bcast(c);
    int n;
    if (rc || !(n = pfvm__ew_sym_len(c)) || !pfvm_dtype_is_int(c->out[0]->type.dtype))
        return rc;
    if (!(c->in[0]->sym || c->in[0]->value) || !(c->in[1]->sym || c->in[1]->value))
        return PFVM_OK;
    return pfvm__ew_sym_apply(c, n, op);
}

static pfvm_code pfvm__ew_infer_add(pfvm_ictx *c) { return pfvm__ew_infer_arith(c, pfvm_sym_add); }
static pfvm_code pfvm__ew_infer_sub(pfvm_ictx *c) { return pfvm__ew_infer_arith(c, pfvm_sym_sub); }
static pfvm_code pfvm__ew_infer_mul(pfvm_ictx *c) { return pfvm__ew_infer_arith(c, pfvm_sym_mul); }
static pfvm_code pfvm__ew_infer_div(pfvm_ictx *c) { return pfvm__ew_infer_arith(c, pfvm__ew_sym_div); }

/* Comparisons and logic on shape values give symbolic booleans (0 or 1)
 * in the same algebra as pfvm_sym_eq: for integers a > b is
 * min(1, max(0, a-b)), a constant when the symbols' bounds decide it;
 * And/Or/Xor of booleans are min, max and max-min. */
static const pfvm_sym *pfvm__ew_sym_gt(pfvm_symtab *t, const pfvm_sym *a, const pfvm_sym *b)
{
    const pfvm_sym *d = pfvm_sym_sub(t, a, b);
    if (!d)
        return NULL;
    if (pfvm_sym_proven_ge(t, d, 1))
        return pfvm_sym_const(t, 1);
    if (pfvm_sym_proven_ge(t, pfvm_sym_muli(t, d, -1), 0))
        return pfvm_sym_const(t, 0);
    return pfvm_sym_min(t, pfvm_sym_const(t, 1), pfvm_sym_max(t, pfvm_sym_const(t, 0), d));
}
static const pfvm_sym *pfvm__ew_sym_lt(pfvm_symtab *t, const pfvm_sym *a, const pfvm_sym *b)
{
    return pfvm__ew_sym_gt(t, b, a);
}
static const pfvm_sym *pfvm__ew_sym_ge(pfvm_symtab *t, const pfvm_sym *a, const pfvm_sym *b)
{
    return pfvm__ew_sym_gt(t, pfvm_sym_addi(t, a, 1), b);
}
static const pfvm_sym *pfvm__ew_sym_le(pfvm_symtab *t, const pfvm_sym *a, const pfvm_sym *b)
{
    return pfvm__ew_sym_ge(t, b, a);
}
static const pfvm_sym *pfvm__ew_sym_xor(pfvm_symtab *t, const pfvm_sym *a, const pfvm_sym *b)
{
    return pfvm_sym_sub(t, pfvm_sym_max(t, a, b), pfvm_sym_min(t, a, b));
}

/* A comparison (or boolean logic when `logic`) of two inputs' symbolic
 * contents: integer operands for comparisons, bool ones for logic. */
static pfvm_code pfvm__ew_infer_cmp(pfvm_ictx *c, pfvm__ew_sym_op op, int logic)
{
    pfvm_code rc = pfvm_ew_infer_broadcast_to(c, PFVM_BOOL);
    pfvm_dtype dt;
    int n;
    if (rc || !(n = pfvm__ew_sym_len(c)) || c->out[0]->type.shape.rank > 1)
        return rc;
    dt = c->in[0]->type.dtype;
    if (logic ? dt != PFVM_BOOL : !pfvm_dtype_is_int(dt))
        return PFVM_OK;
    return pfvm__ew_sym_apply(c, n, op);
}

static pfvm_code pfvm__ew_infer_greater(pfvm_ictx *c) { return pfvm__ew_infer_cmp(c, pfvm__ew_sym_gt, 0); }
static pfvm_code pfvm__ew_infer_less(pfvm_ictx *c) { return pfvm__ew_infer_cmp(c, pfvm__ew_sym_lt, 0); }
static pfvm_code pfvm__ew_infer_greater_eq(pfvm_ictx *c) { return pfvm__ew_infer_cmp(c, pfvm__ew_sym_ge, 0); }
static pfvm_code pfvm__ew_infer_less_eq(pfvm_ictx *c) { return pfvm__ew_infer_cmp(c, pfvm__ew_sym_le, 0); }
static pfvm_code pfvm__ew_infer_and(pfvm_ictx *c) { return pfvm__ew_infer_cmp(c, pfvm_sym_min, 1); }
static pfvm_code pfvm__ew_infer_or(pfvm_ictx *c) { return pfvm__ew_infer_cmp(c, pfvm_sym_max, 1); }
static pfvm_code pfvm__ew_infer_xor(pfvm_ictx *c) { return pfvm__ew_infer_cmp(c, pfvm__ew_sym_xor, 1); }

/* Max/Min of shape values (any number of inputs). */
static pfvm_code pfvm__ew_infer_minmax(pfvm_ictx *c, pfvm__ew_sym_op op)
{
    pfvm_code rc = pfvm__ew_infer_bcast(c);
    const pfvm_sym *a[64], *r[64];
    int n = 0, j, k;
    if (rc || !c->out[0] || c->out[0]->type.shape.rank > 1 || !pfvm_dtype_is_int(c->out[0]->type.dtype))
        return rc;
    for (j = 0; j < c->n_in; j++) {
        if (!c->in[j])
            return PFVM_OK;
        if (c->in[j]->sym && c->in[j]->n_sym > n)
            n = c->in[j]->n_sym;
    }
    if (n < 1 || n > 64)
        return PFVM_OK;
    for (j = 0; j < c->n_in; j++) {
        if (!pfvm__ew_sym_vec(c, j, n, a))
            return PFVM_OK;
        for (k = 0; k < n; k++)
            if (!(r[k] = j ? op(c->syms, r[k], a[k]) : a[k]))
                return PFVM_OK;
    }
    return pfvm_ival_set_sym(c, c->out[0], r, n);
}

static pfvm_code pfvm__ew_infer_max(pfvm_ictx *c) { return pfvm__ew_infer_minmax(c, pfvm_sym_max); }
static pfvm_code pfvm__ew_infer_min(pfvm_ictx *c) { return pfvm__ew_infer_minmax(c, pfvm_sym_min); }

/* Abs and Neg of shape values. */
static pfvm_code pfvm__ew_infer_sign_op(pfvm_ictx *c, int neg)
{
    pfvm_code rc = pfvm__ew_infer_unary(c);
    const pfvm_sym *r[64];
    int k;
    if (rc || !c->out[0] || !c->in[0]->sym || c->in[0]->n_sym > 64 || !pfvm_dtype_is_int(c->in[0]->type.dtype))
        return rc;
    for (k = 0; k < c->in[0]->n_sym; k++) {
        const pfvm_sym *x = c->in[0]->sym[k], *m = pfvm_sym_muli(c->syms, x, -1);
        r[k] = neg ? m : pfvm_sym_proven_nonneg(x) ? x : pfvm_sym_max(c->syms, x, m);
        if (!r[k])
            return PFVM_OK;
    }
    return pfvm_ival_set_sym(c, c->out[0], r, c->in[0]->n_sym);
}

static pfvm_code pfvm__ew_infer_abs(pfvm_ictx *c) { return pfvm__ew_infer_sign_op(c, 0); }
static pfvm_code pfvm__ew_infer_neg(pfvm_ictx *c) { return pfvm__ew_infer_sign_op(c, 1); }


static pfvm_code pfvm__ew_infer_bool_unary(pfvm_ictx *c)
{
    pfvm_ival_set_tensor(c->out[0], PFVM_BOOL, &c->in[0]->type.shape);
    return PFVM_OK;
}

/* Equal on shape values: true when provably equal, false when provably
 * different; otherwise the symbolic boolean eq(a,b) (pfvm_sym_eq), which an
 * If on it can decide under an assumption (pfvm_ictx_decide). */
static pfvm_code pfvm__ew_infer_equal(pfvm_ictx *c)
{
    pfvm_code rc = pfvm_ew_infer_broadcast_to(c, PFVM_BOOL);
    const pfvm_sym *a[64], *b[64], *r[64];
    int n, k;
    if (rc || !(n = pfvm__ew_sym_len(c)) || !pfvm_dtype_is_int(c->in[0]->type.dtype))
        return rc;
    if (!pfvm__ew_sym_vec(c, 0, n, a) || !pfvm__ew_sym_vec(c, 1, n, b))
        return PFVM_OK;
    for (k = 0; k < n; k++) {
        int64_t x, y;
        if (pfvm_sym_proven_eq(a[k], b[k]))
            r[k] = pfvm_sym_const(c->syms, 1);
        else if (pfvm_sym_is_const(a[k], &x) && pfvm_sym_is_const(b[k], &y))
            r[k] = pfvm_sym_const(c->syms, x == y);
        else if ((pfvm_sym_is_const(a[k], &x) && x == 0 && b[k]->pos) || (pfvm_sym_is_const(b[k], &y) && y == 0 && a[k]->pos))
            r[k] = pfvm_sym_const(c->syms, 0); /* a dim_param is >= 1 */
        else if (!(r[k] = pfvm_sym_eq(c->syms, a[k], b[k])))
            return PFVM_OK;
    }
    return pfvm_ival_set_sym(c, c->out[0], r, n);
}

/* Not keeps symbolic booleans symbolic (1-x). */
static pfvm_code pfvm__ew_infer_not(pfvm_ictx *c)
{
    const pfvm_sym *r[64];
    int k;
    pfvm_code rc = pfvm_infer_same_as(c, 0, 0);
    if (rc || !c->in[0]->sym || c->in[0]->n_sym > 64 || c->in[0]->type.dtype != PFVM_BOOL)
        return rc;
    for (k = 0; k < c->in[0]->n_sym; k++)
        if (!(r[k] = pfvm_sym_not(c->syms, c->in[0]->sym[k])))
            return PFVM_OK;
    return pfvm_ival_set_sym(c, c->out[0], r, c->in[0]->n_sym);
}


static pfvm_code pfvm__ew_infer_cast(pfvm_ictx *c)
{
    int64_t to = pfvm_node_attr_int(c->node, "to", 0);
    if (to <= 0 || to >= PFVM_DTYPE_COUNT)
        return pfvm__fail(c->st, PFVM_ERR_INVALID, "attribute 'to' is not a valid element type (%lld)", (long long)to);
    pfvm_ival_set_tensor(c->out[0], (pfvm_dtype)to, &c->in[0]->type.shape);
    /* casts of shape values keep their symbolic contents */
    if (c->in[0]->sym && pfvm_dtype_is_int((pfvm_dtype)to))
        return pfvm_ival_set_sym(c, c->out[0], c->in[0]->sym, c->in[0]->n_sym);
    if (c->in[0]->sym && to == PFVM_BOOL && c->in[0]->n_sym <= 64) {
        const pfvm_sym *r[64];
        int k;
        for (k = 0; k < c->in[0]->n_sym; k++) {
            int64_t x;
            if (!pfvm_sym_is_const(c->in[0]->sym[k], &x))
                return PFVM_OK;
            r[k] = pfvm_sym_const(c->syms, x != 0);
        }
        return pfvm_ival_set_sym(c, c->out[0], r, c->in[0]->n_sym);
    }
    return PFVM_OK;
}

static pfvm_code pfvm__ew_infer_castlike(pfvm_ictx *c)
{
    pfvm_ival_set_tensor(c->out[0], c->in[1]->type.dtype, &c->in[0]->type.shape);
    return PFVM_OK;
}

/* ---- simplify hooks (src/opi/rewrite.h) ----------------------------------------------- */

static int pfvm__ew_simplifying(const pfvm_rewrite *rw)
{
    return pfvm_rw_mode(rw) == PFVM_RW_SIMPLIFY && !pfvm_rw_request(rw);
}

/* out = x when the other operand is the constant e everywhere and
 * broadcasting leaves x's shape and type as they are. */
static int pfvm__ew_neutral(pfvm_rewrite *rw, const pfvm_node *n, int x, double e)
{
    return pfvm_rw_is_all(rw, n->inputs[1 - x], e) && pfvm_rw_same_type(rw, n->outputs[0], n->inputs[x]);
}

/* Add(y, c) where y's producer can absorb a per-channel scale: the
 * request scale*(y + c) + shift becomes Add(scale*y, scale*c + shift). */
static pfvm_code pfvm__ew_absorb_add(pfvm_rewrite *rw, pfvm_node *n, pfvm_rw_affine *req)
{
    int x, i, d, rank, crank, ca;
    const pfvm_shape *os = pfvm_rw_shape(rw, n->outputs[0]);
    for (x = 0; x < 2 && os; x++) {
        pfvm_value *y = n->inputs[x], *cv, *in[2];
        const pfvm_tensor *c = pfvm_rw_value(rw, n->inputs[1 - x]);
        pfvm_rw_affine sub;
        pfvm_tensor *t;
        pfvm_node *add;
        int64_t dims[PFVM_MAX_RANK], cn;
        if (!c || !pfvm_dtype_is_float(c->dtype) || pfvm_rw_value(rw, y) || !pfvm_rw_same_type(rw, n->outputs[0], y) ||
            pfvm_rw_readers(rw, y) != 1)
            continue;
        /* c must be constant along every axis but the channels' */
        crank = c->rank;
        ca = req->axis - (os->rank - crank);
        for (d = 0; d < crank; d++)
            if (c->dims[d] != 1 && !(d == ca && c->dims[d] == req->n))
                break;
        if (d < crank)
            continue;
        sub = *req;
        sub.shift = NULL;
        if (pfvm_rw_absorb(rw, pfvm_rw_producer(rw, y), &sub) || !sub.result)
            return pfvm_rw_code(rw);
        /* c' has the channel dim (and c's rank, at least) */
        rank = crank > os->rank - req->axis ? crank : os->rank - req->axis;
        for (d = 0; d < rank; d++)
            dims[d] = 1;
        dims[req->axis - (os->rank - rank)] = req->n;
        if (!(cv = pfvm_rw_const_new(rw, c->dtype, rank, dims, "bias", &t)))
            return pfvm_rw_code(rw);
        cn = pfvm_tensor_numel(c);
        for (i = 0; i < req->n; i++)
            pfvm_red_store(t, i, pfvm_tensor_get_f64(c, cn == 1 ? 0 : i) * req->scale[i] + (req->shift ? req->shift[i] : 0));
        in[x] = sub.result;
        in[1 - x] = cv;
        if (!(add = pfvm_rw_add_node(rw, "Add", in, 2, 1, n)) || pfvm_rw_infer_node(rw, add))
            return pfvm_rw_code(rw);
        req->result = add->outputs[0];
        return PFVM_OK;
    }
    return PFVM_OK;
}

/* x+0, 0+x, x-0, x*1, 1*x, x/1, x**1 are x. (Which operator a node is,
 * the family knows by its kernel.) */
static pfvm_code pfvm__ew_simp_binary(pfvm_rewrite *rw, pfvm_node *n)
{
    pfvm_kernel_fn k = n->op->kernel;
    pfvm_rw_affine *req = pfvm_rw_request(rw);
    if (req)
        return k == pfvm__ew_k_add ? pfvm__ew_absorb_add(rw, n, req) : PFVM_OK;
    if (!pfvm__ew_simplifying(rw) || n->n_inputs != 2 || !n->inputs[0] || !n->inputs[1])
        return PFVM_OK;
    if (k == pfvm__ew_k_add || k == pfvm__ew_k_sub) {
        if (pfvm__ew_neutral(rw, n, 0, 0.0))
            return pfvm_rw_forward(rw, n, 0, n->inputs[0]);
        if (k == pfvm__ew_k_add && pfvm__ew_neutral(rw, n, 1, 0.0))
            return pfvm_rw_forward(rw, n, 0, n->inputs[1]);
    } else if (k == pfvm__ew_k_mul || k == pfvm__ew_k_div || k == pfvm__ew_k_pow) {
        if (pfvm__ew_neutral(rw, n, 0, 1.0))
            return pfvm_rw_forward(rw, n, 0, n->inputs[0]);
        if (k == pfvm__ew_k_mul && pfvm__ew_neutral(rw, n, 1, 1.0))
            return pfvm_rw_forward(rw, n, 0, n->inputs[1]);
    }
    return PFVM_OK;
}

/* Sum, Mean, Max, Min of one input. */
static pfvm_code pfvm__ew_simp_variadic(pfvm_rewrite *rw, pfvm_node *n)
{
    if (!pfvm__ew_simplifying(rw) || n->n_inputs != 1)
        return PFVM_OK;
    return pfvm_rw_forward(rw, n, 0, n->inputs[0]);
}

/* Cast to the type the input already has. */
static pfvm_code pfvm__ew_simp_cast(pfvm_rewrite *rw, pfvm_node *n)
{
    const pfvm_type *t = pfvm_rw_type(rw, n->inputs[0]);
    if (!pfvm__ew_simplifying(rw) || !t || t->kind != PFVM_KIND_TENSOR ||
        pfvm_node_attr_int(n, "to", 0) != (int64_t)t->dtype)
        return PFVM_OK;
    return pfvm_rw_forward(rw, n, 0, n->inputs[0]);
}

/* ---- gradients -------------------------------------------------------------------------- *
 *
 * The table's macros give every entry the builder `<kernel>_grad`, so each
 * operator's derivative sits here under its kernel's name; operators
 * without a derivative define theirs as NULL. Unary rules are dx = gy * D
 * with D built from x and y; broadcasting binary rules sum the gradient
 * back to each operand's shape (pfvm_grad_sum_to, a no-op when the shapes
 * are proven equal). */

static pfvm_value *pfvm__ew_g2(pfvm_grad_ctx *g, const char *op, pfvm_value *a, pfvm_value *b)
{
    return pfvm_grad_op2(g, op, a, b);
}

static pfvm_value *pfvm__ew_gk(pfvm_grad_ctx *g, const pfvm_value *like, double v)
{
    return pfvm_grad_scalar_like(g, like, v);
}

/* cond (bool) as 0/1 of like's element type */
static pfvm_value *pfvm__ew_gmask(pfvm_grad_ctx *g, pfvm_value *cond, const pfvm_value *like)
{
    return pfvm_grad_cast(g, cond, pfvm_grad_dtype(g, like));
}

/* x > v (or x < v when `less`) for a scalar v of x's type */
static pfvm_value *pfvm__ew_gcmp(pfvm_grad_ctx *g, pfvm_value *x, double v, int less)
{
    return pfvm_grad_op2(g, less ? "Less" : "Greater", x, pfvm__ew_gk(g, x, v));
}

/* Legacy (opset < 7) broadcasting with an axis is not numpy's: refuse it. */
static pfvm_code pfvm__ew_g_legacy(pfvm_grad_ctx *g, const pfvm_node *n)
{
    if (n->opset < 7 && pfvm_node_attr_int(n, "broadcast", 0) && pfvm_node_attr(n, "axis"))
        return pfvm_grad_fail(g, "legacy broadcasting with an axis");
    return PFVM_OK;
}

/* dx = gy * D for a unary operator. */
#define PFVM__EW_GRAD1(kname, D)                                                     \
    static pfvm_code kname##_grad(pfvm_grad_ctx *g, const pfvm_node *n)              \
    {                                                                                \
        pfvm_value *x = n->inputs[0], *y = n->outputs[0], *gy = pfvm_grad_out(g, 0); \
        (void)y;                                                                     \
        if (!gy)                                                                     \
            return PFVM_OK;                                                          \
        return pfvm_grad_add(g, x, pfvm__ew_g2(g, "Mul", gy, (D)));                  \
    }
/* Piecewise-constant functions: zero gradient almost everywhere. */
#define PFVM__EW_GRAD0(kname)                                           \
    static pfvm_code kname##_grad(pfvm_grad_ctx *g, const pfvm_node *n) \
    {                                                                   \
        (void)g;                                                        \
        (void)n;                                                        \
        return PFVM_OK;                                                 \
    }

#define PFVM__EW_MUL(a, b) pfvm__ew_g2(g, "Mul", a, b)
#define PFVM__EW_ADD(a, b) pfvm__ew_g2(g, "Add", a, b)
#define PFVM__EW_SUB(a, b) pfvm__ew_g2(g, "Sub", a, b)
#define PFVM__EW_DIV(a, b) pfvm__ew_g2(g, "Div", a, b)
#define PFVM__EW_F(op, a) pfvm_grad_op1(g, op, a)
#define PFVM__EW_K(v) pfvm__ew_gk(g, x, v)
#define PFVM__EW_ATTR(name, def) ((double)pfvm_node_attr_float(n, name, (float)(def)))

/* Sign from opset 9; (x > 0) - (x < 0) before */
PFVM__EW_GRAD1(pfvm__ew_k_abs, g->opset >= 9 ? PFVM__EW_F("Sign", x)
                                             : PFVM__EW_SUB(pfvm__ew_gmask(g, pfvm__ew_gcmp(g, x, 0, 0), x),
                                                            pfvm__ew_gmask(g, pfvm__ew_gcmp(g, x, 0, 1), x)))
PFVM__EW_GRAD1(pfvm__ew_k_neg, PFVM__EW_K(-1))
PFVM__EW_GRAD1(pfvm__ew_k_exp, y)
PFVM__EW_GRAD1(pfvm__ew_k_log, PFVM__EW_F("Reciprocal", x))
PFVM__EW_GRAD1(pfvm__ew_k_sqrt, PFVM__EW_DIV(PFVM__EW_K(0.5), y))
PFVM__EW_GRAD1(pfvm__ew_k_reciprocal, PFVM__EW_MUL(PFVM__EW_F("Neg", y), y))
PFVM__EW_GRAD0(pfvm__ew_k_floor)
PFVM__EW_GRAD0(pfvm__ew_k_ceil)
PFVM__EW_GRAD0(pfvm__ew_k_round)
PFVM__EW_GRAD0(pfvm__ew_k_sign)
PFVM__EW_GRAD1(pfvm__ew_k_sin, PFVM__EW_F("Cos", x))
PFVM__EW_GRAD1(pfvm__ew_k_cos, PFVM__EW_F("Neg", PFVM__EW_F("Sin", x)))
PFVM__EW_GRAD1(pfvm__ew_k_tan, PFVM__EW_ADD(PFVM__EW_K(1), PFVM__EW_MUL(y, y)))
PFVM__EW_GRAD1(pfvm__ew_k_asin, PFVM__EW_F("Reciprocal", PFVM__EW_F("Sqrt", PFVM__EW_SUB(PFVM__EW_K(1), PFVM__EW_MUL(x, x)))))
PFVM__EW_GRAD1(pfvm__ew_k_acos, PFVM__EW_DIV(PFVM__EW_K(-1), PFVM__EW_F("Sqrt", PFVM__EW_SUB(PFVM__EW_K(1), PFVM__EW_MUL(x, x)))))
PFVM__EW_GRAD1(pfvm__ew_k_atan, PFVM__EW_F("Reciprocal", PFVM__EW_ADD(PFVM__EW_K(1), PFVM__EW_MUL(x, x))))
PFVM__EW_GRAD1(pfvm__ew_k_sinh, PFVM__EW_F("Cosh", x))
PFVM__EW_GRAD1(pfvm__ew_k_cosh, PFVM__EW_F("Sinh", x))
PFVM__EW_GRAD1(pfvm__ew_k_tanh, PFVM__EW_SUB(PFVM__EW_K(1), PFVM__EW_MUL(y, y)))
PFVM__EW_GRAD1(pfvm__ew_k_asinh, PFVM__EW_F("Reciprocal", PFVM__EW_F("Sqrt", PFVM__EW_ADD(PFVM__EW_MUL(x, x), PFVM__EW_K(1)))))
PFVM__EW_GRAD1(pfvm__ew_k_acosh, PFVM__EW_F("Reciprocal", PFVM__EW_F("Sqrt", PFVM__EW_SUB(PFVM__EW_MUL(x, x), PFVM__EW_K(1)))))
PFVM__EW_GRAD1(pfvm__ew_k_atanh, PFVM__EW_F("Reciprocal", PFVM__EW_SUB(PFVM__EW_K(1), PFVM__EW_MUL(x, x))))
/* erf'(x) = 2/sqrt(pi) exp(-x^2) */
PFVM__EW_GRAD1(pfvm__ew_k_erf, PFVM__EW_MUL(PFVM__EW_K(1.1283791670955126), PFVM__EW_F("Exp", PFVM__EW_F("Neg", PFVM__EW_MUL(x, x)))))
PFVM__EW_GRAD1(pfvm__ew_k_sigmoid, PFVM__EW_MUL(y, PFVM__EW_SUB(PFVM__EW_K(1), y)))
/* where(y > 0, gy, 0): the mask reads the output, which the next layer
 * usually keeps anyway, so the input need not outlive the forward pass;
 * and a Where stores no float mask */
static pfvm_code pfvm__ew_k_relu_grad(pfvm_grad_ctx *g, const pfvm_node *n)
{
    pfvm_value *y = n->outputs[0], *gy = pfvm_grad_out(g, 0);
    if (!gy)
        return PFVM_OK;
    return pfvm_grad_add(g, n->inputs[0],
                         pfvm_grad_op3(g, "Where", pfvm__ew_gcmp(g, y, 0, 0), gy, pfvm_grad_scalar_like(g, gy, 0)));
}
/* x >= 0 ? 1 : alpha  ==  1 + (alpha - 1) * (x < 0) */
PFVM__EW_GRAD1(pfvm__ew_k_leakyrelu, PFVM__EW_ADD(PFVM__EW_K(1), PFVM__EW_MUL(PFVM__EW_K(PFVM__EW_ATTR("alpha", 0.01) - 1), pfvm__ew_gmask(g, pfvm__ew_gcmp(g, x, 0, 1), x))))
/* x >= 0 ? 1 : y + alpha */
PFVM__EW_GRAD1(pfvm__ew_k_elu, PFVM__EW_ADD(PFVM__EW_K(1), PFVM__EW_MUL(pfvm__ew_gmask(g, pfvm__ew_gcmp(g, x, 0, 1), x), PFVM__EW_SUB(PFVM__EW_ADD(y, PFVM__EW_K(PFVM__EW_ATTR("alpha", 1.0))), PFVM__EW_K(1)))))
/* x > 0 ? gamma : y + gamma*alpha */
PFVM__EW_GRAD1(pfvm__ew_k_selu, PFVM__EW_ADD(PFVM__EW_MUL(pfvm__ew_gmask(g, pfvm__ew_gcmp(g, x, 0, 0), x), PFVM__EW_K(PFVM__EW_ATTR("gamma", 1.0507009873554804934193349852946))),
                                             PFVM__EW_MUL(pfvm__ew_gmask(g, pfvm_grad_op1(g, "Not", pfvm__ew_gcmp(g, x, 0, 0)), x),
                                                          PFVM__EW_ADD(y, PFVM__EW_K(PFVM__EW_ATTR("gamma", 1.0507009873554804934193349852946) * PFVM__EW_ATTR("alpha", 1.67326319217681884765625))))))
/* x > 0 ? 1 : exp(x / alpha) */
PFVM__EW_GRAD1(pfvm__ew_k_celu, PFVM__EW_ADD(pfvm__ew_gmask(g, pfvm__ew_gcmp(g, x, 0, 0), x),
                                             PFVM__EW_MUL(pfvm__ew_gmask(g, pfvm_grad_op1(g, "Not", pfvm__ew_gcmp(g, x, 0, 0)), x),
                                                          PFVM__EW_F("Exp", PFVM__EW_DIV(x, PFVM__EW_K(PFVM__EW_ATTR("alpha", 1.0)))))))

/* alpha where 0 < alpha*x + beta < 1 */
static pfvm_code pfvm__ew_k_hardsigmoid_grad(pfvm_grad_ctx *g, const pfvm_node *n)
{
    pfvm_value *x = n->inputs[0], *gy = pfvm_grad_out(g, 0), *t;
    double alpha = PFVM__EW_ATTR("alpha", 0.2), beta = PFVM__EW_ATTR("beta", 0.5);
    if (!gy)
        return PFVM_OK;
    t = PFVM__EW_ADD(PFVM__EW_MUL(x, PFVM__EW_K(alpha)), PFVM__EW_K(beta));
    t = pfvm_grad_op2(g, "And", pfvm__ew_gcmp(g, t, 0, 0), pfvm__ew_gcmp(g, t, 1, 1));
    return pfvm_grad_add(g, x, PFVM__EW_MUL(gy, PFVM__EW_MUL(pfvm__ew_gmask(g, t, x), PFVM__EW_K(alpha))));
}

/* x < -3: 0; x > 3: 1; else x/3 + 1/2 */
static pfvm_code pfvm__ew_k_hardswish_grad(pfvm_grad_ctx *g, const pfvm_node *n)
{
    pfvm_value *x = n->inputs[0], *gy = pfvm_grad_out(g, 0), *mid, *hi, *d;
    if (!gy)
        return PFVM_OK;
    hi = pfvm__ew_gmask(g, pfvm__ew_gcmp(g, x, 3, 0), x);
    mid = pfvm__ew_gmask(g, pfvm_grad_op2(g, "And", pfvm_grad_op1(g, "Not", pfvm__ew_gcmp(g, x, -3, 1)),
                                          pfvm_grad_op1(g, "Not", pfvm__ew_gcmp(g, x, 3, 0))), x);
    d = PFVM__EW_ADD(hi, PFVM__EW_MUL(mid, PFVM__EW_ADD(PFVM__EW_DIV(x, PFVM__EW_K(3)), PFVM__EW_K(0.5))));
    return pfvm_grad_add(g, x, PFVM__EW_MUL(gy, d));
}

PFVM__EW_GRAD1(pfvm__ew_k_softplus, PFVM__EW_F("Sigmoid", x))
/* 1 / (1 + |x|)^2 */
PFVM__EW_GRAD1(pfvm__ew_k_softsign, PFVM__EW_F("Reciprocal", PFVM__EW_MUL(PFVM__EW_ADD(PFVM__EW_K(1), PFVM__EW_F("Abs", x)), PFVM__EW_ADD(PFVM__EW_K(1), PFVM__EW_F("Abs", x)))))

/* t = tanh(softplus(x)): t + x (1 - t^2) sigmoid(x) */
static pfvm_code pfvm__ew_k_mish_grad(pfvm_grad_ctx *g, const pfvm_node *n)
{
    pfvm_value *x = n->inputs[0], *gy = pfvm_grad_out(g, 0), *t, *d;
    if (!gy)
        return PFVM_OK;
    t = PFVM__EW_F("Tanh", PFVM__EW_F("Softplus", x));
    d = PFVM__EW_ADD(t, PFVM__EW_MUL(PFVM__EW_MUL(x, PFVM__EW_SUB(PFVM__EW_K(1), PFVM__EW_MUL(t, t))), PFVM__EW_F("Sigmoid", x)));
    return pfvm_grad_add(g, x, PFVM__EW_MUL(gy, d));
}

PFVM__EW_GRAD1(pfvm__ew_k_thresholdedrelu, pfvm__ew_gmask(g, pfvm__ew_gcmp(g, x, PFVM__EW_ATTR("alpha", 1.0), 0), x))

/* 1 outside [-lambd, lambd] */
static pfvm_code pfvm__ew_k_shrink_grad(pfvm_grad_ctx *g, const pfvm_node *n)
{
    pfvm_value *x = n->inputs[0], *gy = pfvm_grad_out(g, 0), *m;
    double l = PFVM__EW_ATTR("lambd", 0.5);
    if (!gy)
        return PFVM_OK;
    m = pfvm_grad_op2(g, "Or", pfvm__ew_gcmp(g, x, -l, 1), pfvm__ew_gcmp(g, x, l, 0));
    return pfvm_grad_add(g, x, PFVM__EW_MUL(gy, pfvm__ew_gmask(g, m, x)));
}

/* Gelu: Phi(x) + x phi(x); tanh form with u = c (x + a x^3), t = tanh(u):
 * 0.5 (1 + t) + 0.5 x (1 - t^2) c (1 + 3 a x^2) */
static pfvm_code pfvm__ew_k_gelu_grad(pfvm_grad_ctx *g, const pfvm_node *n)
{
    pfvm_value *x = n->inputs[0], *gy = pfvm_grad_out(g, 0), *d;
    if (!gy)
        return PFVM_OK;
    if (pfvm__ew_gelu_mode(n) == 1) {
        pfvm_value *x2 = PFVM__EW_MUL(x, x), *t;
        t = PFVM__EW_F("Tanh", PFVM__EW_MUL(PFVM__EW_K(0.7978845608028654), PFVM__EW_ADD(x, PFVM__EW_MUL(PFVM__EW_K(0.044715), PFVM__EW_MUL(x2, x)))));
        d = PFVM__EW_MUL(PFVM__EW_K(0.5), PFVM__EW_ADD(PFVM__EW_ADD(PFVM__EW_K(1), t),
                                                       PFVM__EW_MUL(PFVM__EW_MUL(x, PFVM__EW_SUB(PFVM__EW_K(1), PFVM__EW_MUL(t, t))),
                                                                    PFVM__EW_MUL(PFVM__EW_K(0.7978845608028654),
                                                                                 PFVM__EW_ADD(PFVM__EW_K(1), PFVM__EW_MUL(PFVM__EW_K(3 * 0.044715), x2))))));
    } else {
        pfvm_value *cdf = PFVM__EW_MUL(PFVM__EW_K(0.5), PFVM__EW_ADD(PFVM__EW_K(1), PFVM__EW_F("Erf", PFVM__EW_MUL(x, PFVM__EW_K(0.7071067811865476)))));
        pfvm_value *pdf = PFVM__EW_MUL(PFVM__EW_K(0.3989422804014327), PFVM__EW_F("Exp", PFVM__EW_MUL(PFVM__EW_MUL(x, x), PFVM__EW_K(-0.5))));
        d = PFVM__EW_ADD(cdf, PFVM__EW_MUL(x, pdf));
    }
    return pfvm_grad_add(g, x, PFVM__EW_MUL(gy, d));
}

#define pfvm__ew_k_isnan_grad NULL
#define pfvm__ew_k_isinf_grad NULL
#define pfvm__ew_k_not_grad NULL
#define pfvm__ew_k_bitnot_grad NULL
#define pfvm__ew_k_bitshift_grad NULL
#define pfvm__ew_k_equal_grad NULL
#define pfvm__ew_k_greater_grad NULL
#define pfvm__ew_k_less_grad NULL
#define pfvm__ew_k_greater_equal_grad NULL
#define pfvm__ew_k_less_equal_grad NULL
#define pfvm__ew_k_and_grad NULL
#define pfvm__ew_k_or_grad NULL
#define pfvm__ew_k_xor_grad NULL
#define pfvm__ew_k_bitand_grad NULL
#define pfvm__ew_k_bitor_grad NULL
#define pfvm__ew_k_bitxor_grad NULL

/* Binary rules: each operand's gradient, summed back to its shape. */
static pfvm_code pfvm__ew_k_add_grad(pfvm_grad_ctx *g, const pfvm_node *n)
{
    pfvm_value *gy = pfvm_grad_out(g, 0);
    if (!gy || pfvm__ew_g_legacy(g, n))
        return g->st->code;
    if (pfvm_grad_add(g, n->inputs[0], pfvm_grad_needed(g, n->inputs[0]) ? pfvm_grad_sum_to(g, gy, n->inputs[0]) : gy))
        return g->st->code;
    return pfvm_grad_add(g, n->inputs[1], pfvm_grad_needed(g, n->inputs[1]) ? pfvm_grad_sum_to(g, gy, n->inputs[1]) : gy);
}

static pfvm_code pfvm__ew_k_sub_grad(pfvm_grad_ctx *g, const pfvm_node *n)
{
    pfvm_value *gy = pfvm_grad_out(g, 0);
    if (!gy || pfvm__ew_g_legacy(g, n))
        return g->st->code;
    if (pfvm_grad_needed(g, n->inputs[0]) && pfvm_grad_add(g, n->inputs[0], pfvm_grad_sum_to(g, gy, n->inputs[0])))
        return g->st->code;
    if (pfvm_grad_needed(g, n->inputs[1]))
        return pfvm_grad_add(g, n->inputs[1], pfvm_grad_sum_to(g, pfvm_grad_op1(g, "Neg", gy), n->inputs[1]));
    return PFVM_OK;
}

static pfvm_code pfvm__ew_k_mul_grad(pfvm_grad_ctx *g, const pfvm_node *n)
{
    pfvm_value *gy = pfvm_grad_out(g, 0), *a = n->inputs[0], *b = n->inputs[1];
    if (!gy || pfvm__ew_g_legacy(g, n))
        return g->st->code;
    if (pfvm_grad_needed(g, a) && pfvm_grad_add(g, a, pfvm_grad_sum_to(g, PFVM__EW_MUL(gy, b), a)))
        return g->st->code;
    if (pfvm_grad_needed(g, b))
        return pfvm_grad_add(g, b, pfvm_grad_sum_to(g, PFVM__EW_MUL(gy, a), b));
    return PFVM_OK;
}

/* y = a / b: da = gy / b, db = -gy * y / b */
static pfvm_code pfvm__ew_k_div_grad(pfvm_grad_ctx *g, const pfvm_node *n)
{
    pfvm_value *gy = pfvm_grad_out(g, 0), *a = n->inputs[0], *b = n->inputs[1], *y = n->outputs[0];
    if (!gy || pfvm__ew_g_legacy(g, n))
        return g->st->code;
    if (pfvm_grad_needed(g, a) && pfvm_grad_add(g, a, pfvm_grad_sum_to(g, PFVM__EW_DIV(gy, b), a)))
        return g->st->code;
    if (pfvm_grad_needed(g, b))
        return pfvm_grad_add(g, b, pfvm_grad_sum_to(g, PFVM__EW_DIV(PFVM__EW_MUL(pfvm_grad_op1(g, "Neg", gy), y), b), b));
    return PFVM_OK;
}

/* y = a^b: da = gy * b * a^(b-1), db = gy * y * log(a) */
static pfvm_code pfvm__ew_k_pow_grad(pfvm_grad_ctx *g, const pfvm_node *n)
{
    pfvm_value *gy = pfvm_grad_out(g, 0), *a = n->inputs[0], *b = n->inputs[1], *y = n->outputs[0], *x = a, *bf;
    if (!gy || pfvm__ew_g_legacy(g, n))
        return g->st->code;
    if (pfvm_grad_needed(g, a)) {
        bf = pfvm_grad_cast(g, b, pfvm_grad_dtype(g, a));
        if (pfvm_grad_add(g, a, pfvm_grad_sum_to(g, PFVM__EW_MUL(gy, PFVM__EW_MUL(bf, pfvm__ew_g2(g, "Pow", a, PFVM__EW_SUB(bf, PFVM__EW_K(1))))), a)))
            return g->st->code;
    }
    if (pfvm_grad_needed(g, b))
        return pfvm_grad_add(g, b, pfvm_grad_sum_to(g, PFVM__EW_MUL(PFVM__EW_MUL(gy, y), PFVM__EW_F("Log", a)), b));
    return PFVM_OK;
}

/* y = a - b*q with q = trunc or floor of a/b, q = (a - y) / b:
 * da = gy, db = -gy * q */
static pfvm_code pfvm__ew_k_mod_grad(pfvm_grad_ctx *g, const pfvm_node *n)
{
    pfvm_value *gy = pfvm_grad_out(g, 0), *a = n->inputs[0], *b = n->inputs[1], *y = n->outputs[0], *q;
    if (!gy)
        return PFVM_OK;
    if (pfvm_grad_needed(g, a) && pfvm_grad_add(g, a, pfvm_grad_sum_to(g, gy, a)))
        return g->st->code;
    if (!pfvm_grad_needed(g, b))
        return PFVM_OK;
    q = PFVM__EW_F("Round", PFVM__EW_DIV(PFVM__EW_SUB(a, y), b));
    return pfvm_grad_add(g, b, pfvm_grad_sum_to(g, PFVM__EW_MUL(pfvm_grad_op1(g, "Neg", gy), q), b));
}

/* y = x < 0 ? s*x : x (before opset 7 a 1-D slope is per channel, dim 1) */
static pfvm_code pfvm__ew_k_prelu_grad(pfvm_grad_ctx *g, const pfvm_node *n)
{
    pfvm_value *gy = pfvm_grad_out(g, 0), *x = n->inputs[0], *s = n->inputs[1], *s2 = s, *neg;
    int rx = pfvm_grad_type(g, x)->shape.rank, rs = pfvm_grad_type(g, s)->shape.rank;
    if (!gy)
        return PFVM_OK;
    if (n->opset < 7 && rs == 1 && rx > 2) {
        int64_t axes[PFVM_MAX_RANK];
        int i;
        for (i = 0; i < rx - 2; i++)
            axes[i] = i + 1;
        s2 = pfvm_grad_unsqueeze(g, s, axes, rx - 2);
    }
    neg = pfvm__ew_gmask(g, pfvm__ew_gcmp(g, x, 0, 1), x);
    if (pfvm_grad_needed(g, x) &&
        pfvm_grad_add(g, x, PFVM__EW_MUL(gy, PFVM__EW_ADD(PFVM__EW_K(1), PFVM__EW_MUL(neg, PFVM__EW_SUB(s2, PFVM__EW_K(1)))))))
        return g->st->code;
    if (pfvm_grad_needed(g, s))
        return pfvm_grad_add(g, s, pfvm_grad_reshape_like(g, pfvm_grad_sum_to(g, PFVM__EW_MUL(PFVM__EW_MUL(gy, x), neg), s2), s));
    return PFVM_OK;
}

static pfvm_code pfvm__ew_k_sum_grad(pfvm_grad_ctx *g, const pfvm_node *n)
{
    pfvm_value *gy = pfvm_grad_out(g, 0);
    int i;
    if (!gy)
        return PFVM_OK;
    for (i = 0; i < n->n_inputs; i++)
        if (pfvm_grad_needed(g, n->inputs[i]) && pfvm_grad_add(g, n->inputs[i], pfvm_grad_sum_to(g, gy, n->inputs[i])))
            return g->st->code;
    return PFVM_OK;
}

static pfvm_code pfvm__ew_k_mean_grad(pfvm_grad_ctx *g, const pfvm_node *n)
{
    pfvm_value *gy = pfvm_grad_out(g, 0), *x = n->outputs[0];
    int i;
    if (!gy)
        return PFVM_OK;
    gy = PFVM__EW_DIV(gy, PFVM__EW_K((double)n->n_inputs));
    for (i = 0; i < n->n_inputs; i++)
        if (pfvm_grad_needed(g, n->inputs[i]) && pfvm_grad_add(g, n->inputs[i], pfvm_grad_sum_to(g, gy, n->inputs[i])))
            return g->st->code;
    return PFVM_OK;
}

/* Max/Min: the gradient goes to the inputs that equal the result, shared
 * equally on ties. Two inputs: gy' = where(a == b, gy/2, gy),
 * da = gy' * (a >= b), db = gy' * (a <= b) (<= and >= for Min). */
static pfvm_code pfvm__ew_g_extremum(pfvm_grad_ctx *g, const pfvm_node *n, int is_min)
{
    pfvm_value *gy = pfvm_grad_out(g, 0), *y = n->outputs[0], *x = y;
    int i;
    if (!gy)
        return PFVM_OK;
    if (n->n_inputs == 1)
        return pfvm_grad_add(g, n->inputs[0], gy);
    if (n->n_inputs == 2) {
        pfvm_value *a = n->inputs[0], *b = n->inputs[1], *eq, *g2;
        eq = pfvm__ew_gmask(g, pfvm_grad_op2(g, "Equal", a, b), y);
        /* gy * (1 - eq/2) is where(a == b, gy/2, gy) without a Where */
        g2 = PFVM__EW_MUL(gy, PFVM__EW_SUB(PFVM__EW_K(1), PFVM__EW_MUL(eq, PFVM__EW_K(0.5))));
        if (pfvm_grad_needed(g, a) &&
            pfvm_grad_add(g, a, pfvm_grad_sum_to(g, PFVM__EW_MUL(g2, pfvm__ew_gmask(g, pfvm_grad_ge(g, a, b, is_min), y)), a)))
            return g->st->code;
        if (pfvm_grad_needed(g, b))
            return pfvm_grad_add(g, b, pfvm_grad_sum_to(g, PFVM__EW_MUL(g2, pfvm__ew_gmask(g, pfvm_grad_ge(g, a, b, !is_min), y)), b));
        return PFVM_OK;
    }
    {
        pfvm_value *masks[64], *count;
        pfvm_node *s;
        if (n->n_inputs > 64)
            return pfvm_grad_fail(g, "more than 64 inputs");
        for (i = 0; i < n->n_inputs; i++)
            masks[i] = pfvm__ew_gmask(g, pfvm_grad_op2(g, "Equal", n->inputs[i], y), y);
        s = pfvm_grad_node(g, "Sum", masks, n->n_inputs, 1);
        count = s ? s->outputs[0] : NULL;
        gy = PFVM__EW_DIV(gy, count);
        for (i = 0; i < n->n_inputs; i++)
            if (pfvm_grad_needed(g, n->inputs[i]) &&
                pfvm_grad_add(g, n->inputs[i], pfvm_grad_sum_to(g, PFVM__EW_MUL(gy, masks[i]), n->inputs[i])))
                return g->st->code;
    }
    return PFVM_OK;
}

static pfvm_code pfvm__ew_k_max_grad(pfvm_grad_ctx *g, const pfvm_node *n)
{
    return pfvm__ew_g_extremum(g, n, 0);
}

static pfvm_code pfvm__ew_k_min_grad(pfvm_grad_ctx *g, const pfvm_node *n)
{
    return pfvm__ew_g_extremum(g, n, 1);
}

/* Where(c, a, b): a gets gy where c holds, b elsewhere. */
static pfvm_code pfvm__ew_k_where_grad(pfvm_grad_ctx *g, const pfvm_node *n)
{
    pfvm_value *gy = pfvm_grad_out(g, 0), *c = n->inputs[0], *a = n->inputs[1], *b = n->inputs[2], *z;
    if (!gy)
        return PFVM_OK;
    z = pfvm_grad_scalar_like(g, gy, 0);
    if (pfvm_grad_needed(g, a) && pfvm_grad_add(g, a, pfvm_grad_sum_to(g, pfvm_grad_op3(g, "Where", c, gy, z), a)))
        return g->st->code;
    if (pfvm_grad_needed(g, b))
        return pfvm_grad_add(g, b, pfvm_grad_sum_to(g, pfvm_grad_op3(g, "Where", c, z, gy), b));
    return PFVM_OK;
}

/* Clip: x passes where lo <= x <= hi; the bounds (opset 11 inputs) get the
 * gradient where they clip. */
static pfvm_code pfvm__ew_k_clip_grad(pfvm_grad_ctx *g, const pfvm_node *n)
{
    pfvm_value *gy = pfvm_grad_out(g, 0), *x = n->inputs[0], *lo = NULL, *hi = NULL, *pass = NULL;
    if (!gy)
        return PFVM_OK;
    if (n->opset < 11) {
        const pfvm_attr *a = pfvm_node_attr(n, "min"), *b = pfvm_node_attr(n, "max");
        lo = a ? PFVM__EW_K(a->f) : NULL;
        hi = b ? PFVM__EW_K(b->f) : NULL;
    } else {
        lo = n->n_inputs > 1 ? n->inputs[1] : NULL;
        hi = n->n_inputs > 2 ? n->inputs[2] : NULL;
    }
    if (lo)
        pass = pfvm_grad_ge(g, x, lo, 0);
    if (hi) {
        pfvm_value *h = pfvm_grad_ge(g, x, hi, 1);
        pass = pass ? pfvm_grad_op2(g, "And", pass, h) : h;
    }
    if (pfvm_grad_needed(g, x) && pfvm_grad_add(g, x, pass ? PFVM__EW_MUL(gy, pfvm__ew_gmask(g, pass, x)) : gy))
        return g->st->code;
    if (n->opset >= 11 && lo && pfvm_grad_needed(g, lo) &&
        pfvm_grad_add(g, lo, pfvm_grad_sum_to(g, PFVM__EW_MUL(gy, pfvm__ew_gmask(g, pfvm_grad_op2(g, "Less", x, lo), x)), lo)))
        return g->st->code;
    if (n->opset >= 11 && hi && pfvm_grad_needed(g, hi))
        return pfvm_grad_add(g, hi, pfvm_grad_sum_to(g, PFVM__EW_MUL(gy, pfvm__ew_gmask(g, pfvm_grad_op2(g, "Greater", x, hi), x)), hi));
    return PFVM_OK;
}

/* Cast between floating-point types: the gradient casts back. */
static pfvm_code pfvm__ew_k_cast_grad(pfvm_grad_ctx *g, const pfvm_node *n)
{
    pfvm_value *gy = pfvm_grad_out(g, 0);
    if (!gy)
        return PFVM_OK;
    return pfvm_grad_add(g, n->inputs[0], pfvm_grad_cast(g, gy, pfvm_grad_dtype(g, n->inputs[0])));
}

#define pfvm__ew_k_castlike_grad pfvm__ew_k_cast_grad

/* ---- the table ------------------------------------------------------------------------- */

static const pfvm_attr_spec pfvm__ew_a_alpha[] = {{"alpha", PFVM_ATTR_FLOAT, 0}, {NULL, PFVM_ATTR_UNDEFINED, 0}};
static const pfvm_attr_spec pfvm__ew_a_alpha_beta[] = {
    {"alpha", PFVM_ATTR_FLOAT, 0}, {"beta", PFVM_ATTR_FLOAT, 0}, {NULL, PFVM_ATTR_UNDEFINED, 0}};
static const pfvm_attr_spec pfvm__ew_a_selu[] = {
    {"alpha", PFVM_ATTR_FLOAT, 0}, {"gamma", PFVM_ATTR_FLOAT, 0}, {NULL, PFVM_ATTR_UNDEFINED, 0}};
static const pfvm_attr_spec pfvm__ew_a_gelu[] = {{"approximate", PFVM_ATTR_STRING, 0}, {NULL, PFVM_ATTR_UNDEFINED, 0}};
static const pfvm_attr_spec pfvm__ew_a_shrink[] = {
    {"lambd", PFVM_ATTR_FLOAT, 0}, {"bias", PFVM_ATTR_FLOAT, 0}, {NULL, PFVM_ATTR_UNDEFINED, 0}};
static const pfvm_attr_spec pfvm__ew_a_isinf[] = {
    {"detect_positive", PFVM_ATTR_INT, 0}, {"detect_negative", PFVM_ATTR_INT, 0}, {NULL, PFVM_ATTR_UNDEFINED, 0}};
static const pfvm_attr_spec pfvm__ew_a_mod[] = {{"fmod", PFVM_ATTR_INT, 0}, {NULL, PFVM_ATTR_UNDEFINED, 0}};
static const pfvm_attr_spec pfvm__ew_a_bitshift[] = {{"direction", PFVM_ATTR_STRING, 1}, {NULL, PFVM_ATTR_UNDEFINED, 0}};
static const pfvm_attr_spec pfvm__ew_a_cast[] = {{"to", PFVM_ATTR_INT, 1}, {NULL, PFVM_ATTR_UNDEFINED, 0}};
static const pfvm_attr_spec pfvm__ew_a_clip6[] = {
    {"min", PFVM_ATTR_FLOAT, 0}, {"max", PFVM_ATTR_FLOAT, 0}, {NULL, PFVM_ATTR_UNDEFINED, 0}};

#define PFVM__EW_FLOATS "float,double,float16,bfloat16"
#define PFVM__EW_INTS "int8,int16,int32,int64,uint8,uint16,uint32,uint64"
#define PFVM__EW_NUMERIC PFVM__EW_FLOATS "," PFVM__EW_INTS
#define PFVM__EW_SIGNED PFVM__EW_FLOATS ",int8,int16,int32,int64"
/* The general engine may run a unary node (pfvm__ew_run_unary): its input
 * not float32, or of a type not given. */
static int pfvm__ew_unary_needs_general(const pfvm_node *n, const pfvm_value *const *in)
{
    const pfvm_value *x = n->n_inputs > 0 ? in[0] : NULL;
    if (!x || x->type.kind != PFVM_KIND_TENSOR)
        return 1;
    return x->type.dtype != PFVM_FLOAT;
}

/* Named "infer" so that PFVM_NO_SHAPE_INFERENCE builds leave it out. */
static const pfvm_op_variant pfvm__ew_unary_infer_variants[] = {
    {"PFVM_UNARY_F32_ONLY", "no unary element-wise node here reads other than float32", pfvm__ew_unary_needs_general},
    {NULL, NULL, NULL}};

/* The family's hooks of kernel `kern`: `kern##_grad` (gradient builder, see
 * "gradients" above) and `kern##_fuse` (fused-loop code). */
#define PFVM__EW_U(name, since, kern, types, attrs) \
    {name, "", since, 0, 1, 1, 1, 1, pfvm__ew_infer_unary, kern, NULL, PFVM_FUSE_ELEMENTWISE, types, attrs, 0, NULL, kern##_grad, kern##_fuse, NULL, NULL, NULL, NULL, pfvm__ew_unary_infer_variants}
#define PFVM__EW_B(name, since, kern, infer, types, check, attrs) \
    {name, "", since, 0, 2, 2, 1, 1, infer, kern, check, PFVM_FUSE_BROADCAST, types, attrs, 0, pfvm__ew_simp_binary, kern##_grad, kern##_fuse, NULL, NULL, NULL, NULL, NULL}
#define PFVM__EW_V(name, since, kern, types) PFVM__EW_VI(name, since, kern, pfvm__ew_infer_bcast, types)
#define PFVM__EW_VI(name, since, kern, infer, types) \
    {name, "", since, 0, 1, -1, 1, 1, infer, kern, NULL, PFVM_FUSE_BROADCAST, types, NULL, 0, pfvm__ew_simp_variadic, kern##_grad, kern##_fuse, NULL, NULL, NULL, NULL, NULL}
/* a unary operator with its own inference (data propagation) */
#define PFVM__EW_UI(name, since, kern, infer, types, attrs) \
    {name, "", since, 0, 1, 1, 1, 1, infer, kern, NULL, PFVM_FUSE_ELEMENTWISE, types, attrs, 0, NULL, kern##_grad, kern##_fuse, NULL, NULL, NULL, NULL, pfvm__ew_unary_infer_variants}

/* accel lowering (see pfvm_accel_fn): one per-PE SIMD instruction. The
 * instruction's operation is the op's own name in the program format. */
static const char *pfvm__ew_accel_name(const char *op)
{
    static const char *const names[][2] = {{"Relu", "relu"}, {"Erf", "erf"}, {"Tanh", "tanh"},
                                           {"Sigmoid", "sigmoid"}, {"Add", "add"}, {"Sub", "sub"},
                                           {"Mul", "mul"}, {"Div", "div"}, {"Exp", "exp"},
                                           {"Log", "log"}, {"Sqrt", "sqrt"}, {"Reciprocal", "recip"},
                                           {"Pow", "pow"}};
    size_t i;
    for (i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(op, names[i][0]))
            return names[i][1];
    return NULL;
}

static pfvm_code pfvm__ew_accel_unary(pfvm_accel_ctx *c)
{
    const char *op = pfvm__ew_accel_name(c->node->op_type);
    if (!op)
        return pfvm__fail(c->st, PFVM_ERR_UNSUPPORTED, "node %s (%s): no accel instruction", c->node->name,
                          c->node->op_type);
    return c->emit(c, "un %s %lld %lld %lld", op, (long long)c->out[0].off, (long long)c->in[0].off,
                   (long long)c->out[0].elems);
}

/* Elements of the trailing dims of a that b (broadcast from the right) spans,
 * or 0 when b is not a's trailing dims with ones in front. */
static int64_t pfvm__ew_accel_tail(const pfvm_accel_arg *a, const pfvm_accel_arg *b)
{
    int64_t n = 1;
    int i, j;
    for (i = b->rank - 1, j = a->rank - 1; i >= 0; i--, j--) {
        if (j < 0 ? b->dims[i] != 1 : b->dims[i] != a->dims[j] && b->dims[i] != 1)
            return 0;
        if (j >= 0 && b->dims[i] == 1 && a->dims[j] != 1)
            return 0; /* a broadcast inside the tail: not one contiguous vector */
        n *= b->dims[i];
    }
    return n;
}

/* Same layout: bin; b a scalar or a's trailing dims on every PE: col. */
/* The constant scalar of input i when the emitter left it unplaced (rank
 * -1: an in-place consumer's context, pfvm_accel_ctx.post), in *v. */
static int pfvm__ew_accel_scalar(const pfvm_accel_ctx *c, int i, double *v)
{
    const pfvm_value *in = c->node->n_inputs > i ? c->node->inputs[i] : NULL;
    if (c->in[i].rank >= 0 || !in || !in->init || pfvm_tensor_numel(in->init) != 1)
        return 0;
    *v = pfvm_tensor_get_f64(in->init, 0);
    return 1;
}

static pfvm_code pfvm__ew_accel_binary(pfvm_accel_ctx *c)
{
    const char *op = pfvm__ew_accel_name(c->node->op_type);
    const pfvm_accel_arg *a = &c->in[0], *b = &c->in[1], *y = &c->out[0];
    int64_t cols;
    double k;
    /* x op constant scalar (constant op x for add and mul): one imm line */
    if (op && strcmp(op, "pow") && a->elems == y->elems && a->rank >= 0 && pfvm__ew_accel_scalar(c, 1, &k))
        return c->emit(c, "imm %s %lld %lld %.9g %lld", op, (long long)y->off, (long long)a->off, k, (long long)y->elems);
    if (op && (!strcmp(op, "add") || !strcmp(op, "mul")) && b->elems == y->elems && b->rank >= 0 &&
        pfvm__ew_accel_scalar(c, 0, &k))
        return c->emit(c, "imm %s %lld %lld %.9g %lld", op, (long long)y->off, (long long)b->off, k, (long long)y->elems);
    if (op && a->replicated == b->replicated && a->elems == y->elems && b->elems == y->elems)
        return c->emit(c, "bin %s %lld %lld %lld %lld", op, (long long)y->off, (long long)a->off, (long long)b->off,
                       (long long)y->elems);
    if (op && ((a->replicated && !b->replicated) || (b->replicated && a->elems != y->elems)) &&
        (!strcmp(op, "add") || !strcmp(op, "mul"))) {
        const pfvm_accel_arg *t = a;
        a = b;
        b = t;
    }
    if (op && a->replicated == b->replicated && a->rank == b->rank && a->rank >= 1 && a->elems == y->elems &&
        b->dims[b->rank - 1] == 1 && b->elems * a->dims[a->rank - 1] == a->elems) {
        int i, same = 1;
        for (i = 0; i + 1 < a->rank; i++)
            same &= a->dims[i] == b->dims[i];
        if (same) /* b one value per row of a (a reduction's keepdims result) */
            return c->emit(c, "row %s %lld %lld %lld %lld %lld", op, (long long)y->off, (long long)a->off,
                           (long long)b->off, (long long)b->elems, (long long)a->dims[a->rank - 1]);
    }
    if (op && b->replicated && a->elems == y->elems && (cols = pfvm__ew_accel_tail(a, b)) > 0 &&
        a->elems % cols == 0)
        return c->emit(c, "col %s %lld %lld %lld %lld %lld", op, (long long)y->off, (long long)a->off,
                       (long long)b->off, (long long)(a->elems / cols), (long long)cols);
    return pfvm__fail(c->st, PFVM_ERR_UNSUPPORTED,
                      "node %s (%s): accel lowers same-shape operands or a trailing-dims operand on every PE only",
                      c->node->name, c->node->op_type);
}

#define PFVM__EW_UA(name, since, kern, types, attrs) \
    {name, "", since, 0, 1, 1, 1, 1, pfvm__ew_infer_unary, kern, NULL, PFVM_FUSE_ELEMENTWISE, types, attrs, 0, NULL, kern##_grad, kern##_fuse, NULL, pfvm__ew_accel_unary, NULL, NULL, pfvm__ew_unary_infer_variants}
#define PFVM__EW_BA(name, since, kern, infer, types, check, attrs) \
    {name, "", since, 0, 2, 2, 1, 1, infer, kern, check, PFVM_FUSE_BROADCAST, types, attrs, 0, pfvm__ew_simp_binary, kern##_grad, kern##_fuse, NULL, pfvm__ew_accel_binary, NULL, NULL, NULL}
PFVM_INTERNAL const pfvm_op_def pfvm__ops_elementwise[] = {
    PFVM__EW_UI("Abs", 1, pfvm__ew_k_abs, pfvm__ew_infer_abs, PFVM__EW_NUMERIC, NULL),
    PFVM__EW_UI("Neg", 1, pfvm__ew_k_neg, pfvm__ew_infer_neg, PFVM__EW_SIGNED, NULL),
    PFVM__EW_UA("Exp", 1, pfvm__ew_k_exp, PFVM__EW_FLOATS, NULL),
    PFVM__EW_UA("Log", 1, pfvm__ew_k_log, PFVM__EW_FLOATS, NULL),
    PFVM__EW_UA("Sqrt", 1, pfvm__ew_k_sqrt, PFVM__EW_FLOATS, NULL),
    PFVM__EW_UA("Reciprocal", 1, pfvm__ew_k_reciprocal, PFVM__EW_FLOATS, NULL),
    PFVM__EW_U("Floor", 1, pfvm__ew_k_floor, PFVM__EW_FLOATS, NULL),
    PFVM__EW_U("Ceil", 1, pfvm__ew_k_ceil, PFVM__EW_FLOATS, NULL),
    PFVM__EW_U("Round", 11, pfvm__ew_k_round, PFVM__EW_FLOATS, NULL),
    PFVM__EW_U("Sign", 9, pfvm__ew_k_sign, PFVM__EW_NUMERIC, NULL),
    PFVM__EW_U("Sin", 7, pfvm__ew_k_sin, PFVM__EW_FLOATS, NULL),
    PFVM__EW_U("Cos", 7, pfvm__ew_k_cos, PFVM__EW_FLOATS, NULL),
    PFVM__EW_U("Tan", 7, pfvm__ew_k_tan, PFVM__EW_FLOATS, NULL),
    PFVM__EW_U("Asin", 7, pfvm__ew_k_asin, PFVM__EW_FLOATS, NULL),
    PFVM__EW_U("Acos", 7, pfvm__ew_k_acos, PFVM__EW_FLOATS, NULL),
    PFVM__EW_U("Atan", 7, pfvm__ew_k_atan, PFVM__EW_FLOATS, NULL),
    PFVM__EW_U("Sinh", 9, pfvm__ew_k_sinh, PFVM__EW_FLOATS, NULL),
    PFVM__EW_U("Cosh", 9, pfvm__ew_k_cosh, PFVM__EW_FLOATS, NULL),
    PFVM__EW_UA("Tanh", 1, pfvm__ew_k_tanh, PFVM__EW_FLOATS, NULL),
    PFVM__EW_U("Asinh", 9, pfvm__ew_k_asinh, PFVM__EW_FLOATS, NULL),
    PFVM__EW_U("Acosh", 9, pfvm__ew_k_acosh, PFVM__EW_FLOATS, NULL),
    PFVM__EW_U("Atanh", 9, pfvm__ew_k_atanh, PFVM__EW_FLOATS, NULL),
    PFVM__EW_UA("Erf", 9, pfvm__ew_k_erf, PFVM__EW_NUMERIC, NULL),
    PFVM__EW_UA("Sigmoid", 1, pfvm__ew_k_sigmoid, PFVM__EW_FLOATS, NULL),
    PFVM__EW_UA("Relu", 1, pfvm__ew_k_relu, PFVM__EW_SIGNED, NULL),
    PFVM__EW_U("LeakyRelu", 1, pfvm__ew_k_leakyrelu, PFVM__EW_FLOATS, pfvm__ew_a_alpha),
    PFVM__EW_U("Elu", 1, pfvm__ew_k_elu, PFVM__EW_FLOATS, pfvm__ew_a_alpha),
    PFVM__EW_U("Selu", 1, pfvm__ew_k_selu, PFVM__EW_FLOATS, pfvm__ew_a_selu),
    PFVM__EW_U("Celu", 12, pfvm__ew_k_celu, PFVM__EW_FLOATS, pfvm__ew_a_alpha),
    PFVM__EW_U("HardSigmoid", 1, pfvm__ew_k_hardsigmoid, PFVM__EW_FLOATS, pfvm__ew_a_alpha_beta),
    PFVM__EW_U("HardSwish", 14, pfvm__ew_k_hardswish, PFVM__EW_FLOATS, NULL),
    PFVM__EW_U("Softplus", 1, pfvm__ew_k_softplus, PFVM__EW_FLOATS, NULL),
    PFVM__EW_U("Softsign", 1, pfvm__ew_k_softsign, PFVM__EW_FLOATS, NULL),
    PFVM__EW_U("Mish", 18, pfvm__ew_k_mish, PFVM__EW_FLOATS, NULL),
    PFVM__EW_U("ThresholdedRelu", 10, pfvm__ew_k_thresholdedrelu, PFVM__EW_FLOATS, pfvm__ew_a_alpha),
    PFVM__EW_U("Shrink", 9, pfvm__ew_k_shrink, PFVM__EW_NUMERIC, pfvm__ew_a_shrink),
    {"Gelu", "", 20, 0, 1, 1, 1, 1, pfvm__ew_infer_unary, pfvm__ew_k_gelu, pfvm__ew_check_gelu, PFVM_FUSE_ELEMENTWISE,
     PFVM__EW_FLOATS, pfvm__ew_a_gelu, 0, NULL, pfvm__ew_k_gelu_grad, pfvm__ew_k_gelu_fuse, NULL, NULL, NULL, NULL, pfvm__ew_unary_infer_variants},
    {"IsNaN", "", 9, 0, 1, 1, 1, 1, pfvm__ew_infer_bool_unary, pfvm__ew_k_isnan, NULL, PFVM_FUSE_ELEMENTWISE,
     PFVM__EW_FLOATS, NULL, 0, NULL, NULL, pfvm__ew_k_isnan_fuse, NULL, NULL, NULL, NULL, NULL},
    {"IsInf", "", 10, 0, 1, 1, 1, 1, pfvm__ew_infer_bool_unary, pfvm__ew_k_isinf, NULL, PFVM_FUSE_ELEMENTWISE,
     PFVM__EW_FLOATS, pfvm__ew_a_isinf, 0, NULL, NULL, pfvm__ew_k_isinf_fuse, NULL, NULL, NULL, NULL, NULL},
    {"Not", "", 1, 0, 1, 1, 1, 1, pfvm__ew_infer_not, pfvm__ew_k_not, NULL, PFVM_FUSE_ELEMENTWISE, "bool", NULL, 0, NULL,
     pfvm__ew_k_not_grad, pfvm__ew_k_not_fuse, NULL, NULL, NULL, NULL, NULL},
    PFVM__EW_U("BitwiseNot", 18, pfvm__ew_k_bitnot, PFVM__EW_INTS, NULL),
    PFVM__EW_BA("Add", 1, pfvm__ew_k_add, pfvm__ew_infer_add, PFVM__EW_NUMERIC, NULL, NULL),
    PFVM__EW_BA("Sub", 1, pfvm__ew_k_sub, pfvm__ew_infer_sub, PFVM__EW_NUMERIC, NULL, NULL),
    PFVM__EW_BA("Mul", 1, pfvm__ew_k_mul, pfvm__ew_infer_mul, PFVM__EW_NUMERIC, NULL, NULL),
    PFVM__EW_BA("Div", 1, pfvm__ew_k_div, pfvm__ew_infer_div, PFVM__EW_NUMERIC, NULL, NULL),
    PFVM__EW_BA("Pow", 1, pfvm__ew_k_pow, pfvm__ew_infer_bcast, PFVM__EW_NUMERIC, NULL, NULL),
    PFVM__EW_B("Mod", 10, pfvm__ew_k_mod, pfvm__ew_infer_bcast, PFVM__EW_NUMERIC, NULL, pfvm__ew_a_mod),
    PFVM__EW_B("BitShift", 11, pfvm__ew_k_bitshift, pfvm__ew_infer_bcast, "uint8,uint16,uint32,uint64",
               pfvm__ew_check_bitshift, pfvm__ew_a_bitshift),
    PFVM__EW_B("PRelu", 1, pfvm__ew_k_prelu, pfvm__ew_infer_prelu, PFVM__EW_NUMERIC, NULL, NULL),
    PFVM__EW_B("Equal", 1, pfvm__ew_k_equal, pfvm__ew_infer_equal, "bool," PFVM__EW_NUMERIC, NULL, NULL),
    PFVM__EW_B("Greater", 1, pfvm__ew_k_greater, pfvm__ew_infer_greater, PFVM__EW_NUMERIC, NULL, NULL),
    PFVM__EW_B("Less", 1, pfvm__ew_k_less, pfvm__ew_infer_less, PFVM__EW_NUMERIC, NULL, NULL),
    PFVM__EW_B("GreaterOrEqual", 12, pfvm__ew_k_greater_equal, pfvm__ew_infer_greater_eq, PFVM__EW_NUMERIC, NULL, NULL),
    PFVM__EW_B("LessOrEqual", 12, pfvm__ew_k_less_equal, pfvm__ew_infer_less_eq, PFVM__EW_NUMERIC, NULL, NULL),
    PFVM__EW_B("And", 1, pfvm__ew_k_and, pfvm__ew_infer_and, "bool", NULL, NULL),
    PFVM__EW_B("Or", 1, pfvm__ew_k_or, pfvm__ew_infer_or, "bool", NULL, NULL),
    PFVM__EW_B("Xor", 1, pfvm__ew_k_xor, pfvm__ew_infer_xor, "bool", NULL, NULL),
    PFVM__EW_B("BitwiseAnd", 18, pfvm__ew_k_bitand, pfvm__ew_infer_bcast, PFVM__EW_INTS, NULL, NULL),
    PFVM__EW_B("BitwiseOr", 18, pfvm__ew_k_bitor, pfvm__ew_infer_bcast, PFVM__EW_INTS, NULL, NULL),
    PFVM__EW_B("BitwiseXor", 18, pfvm__ew_k_bitxor, pfvm__ew_infer_bcast, PFVM__EW_INTS, NULL, NULL),
    PFVM__EW_V("Sum", 1, pfvm__ew_k_sum, PFVM__EW_NUMERIC),
    PFVM__EW_V("Mean", 1, pfvm__ew_k_mean, PFVM__EW_FLOATS),
    PFVM__EW_VI("Max", 1, pfvm__ew_k_max, pfvm__ew_infer_max, PFVM__EW_NUMERIC),
    PFVM__EW_VI("Min", 1, pfvm__ew_k_min, pfvm__ew_infer_min, PFVM__EW_NUMERIC),
    {"Where", "", 9, 0, 3, 3, 1, 1, pfvm__ew_infer_where, pfvm__ew_k_where, NULL, PFVM_FUSE_BROADCAST,
     "bool,string," PFVM__EW_NUMERIC, NULL, 0, NULL, pfvm__ew_k_where_grad, pfvm__ew_k_where_fuse, NULL, NULL, NULL, NULL, NULL},
    {"Clip", "", 6, 10, 1, 1, 1, 1, pfvm__ew_infer_unary, pfvm__ew_k_clip, NULL, PFVM_FUSE_BROADCAST,
     PFVM__EW_FLOATS, pfvm__ew_a_clip6, 0, NULL, pfvm__ew_k_clip_grad, pfvm__ew_k_clip_fuse, NULL, pfvm_acl_clip, NULL, NULL, NULL},
    {"Clip", "", 11, 0, 1, 3, 1, 1, pfvm__ew_infer_clip, pfvm__ew_k_clip, NULL, PFVM_FUSE_BROADCAST,
     PFVM__EW_NUMERIC, NULL, 0, NULL, pfvm__ew_k_clip_grad, pfvm__ew_k_clip_fuse, NULL, pfvm_acl_clip, NULL, NULL, NULL},
    {"Cast", "", 6, 0, 1, 1, 1, 1, pfvm__ew_infer_cast, pfvm__ew_k_cast, pfvm__ew_check_cast, PFVM_FUSE_ELEMENTWISE,
     "bool,string," PFVM__EW_NUMERIC, pfvm__ew_a_cast, 0, pfvm__ew_simp_cast, pfvm__ew_k_cast_grad, pfvm__ew_k_cast_fuse, NULL, NULL, NULL, NULL, NULL},
    {"CastLike", "", 15, 0, 2, 2, 1, 1, pfvm__ew_infer_castlike, pfvm__ew_k_castlike, NULL, PFVM_FUSE_ELEMENTWISE,
     "bool,string," PFVM__EW_NUMERIC, NULL, 0, NULL, pfvm__ew_k_castlike_grad, pfvm__ew_k_castlike_fuse, NULL, NULL, NULL, NULL, NULL},
    {NULL, NULL, 0, 0, 0, 0, 0, 0, NULL, NULL, NULL, PFVM_FUSE_OPAQUE, NULL, NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL}
};

#if defined(__clang__)
#pragma STDC FP_CONTRACT DEFAULT
#endif
