/* ops/nn: convolution, pooling, normalisation and softmax.
 *
 * Spatial operators share one window description (kernel, strides, pads,
 * dilations over up to three spatial dims, auto_pad, ceil_mode) and one
 * output-size rule, written twice: over symbols for inference and over
 * integers for the kernels, with the same formulas. Float convolution runs
 * on linalg.c's matrix-multiply engine with an implicit im2col (the packing
 * callback reads the input windows, so nothing is allocated); other element
 * types take reference loops through double. Everything else computes in
 * double through one load/store pair (float, double, float16, bfloat16;
 * integer stores saturate), with float fast paths where models spend time. */
#include "ops_common.h"

#include <math.h>

#ifdef PFVM_DISPATCH_CLONES
#include <immintrin.h>
#endif

#define PFVM__NN_SP 3 /* spatial dims handled */

/* The direct convolution loops of 32-bit Arm (see pfvm__nn_conv_direct). */
#if !defined(PFVM_DISPATCH_CLONES) && !defined(PFVM_CONV_NO_DIRECT) &&                                    \
    (defined(PFVM_CONV_DIRECT) || (defined(__arm__) && !defined(__aarch64__)))
#define PFVM__NN_DIRECT 1
#endif

#ifdef PFVM__NN_DIRECT
/* gcc -Os turns plain copy and zero loops into calls of newlib-nano's
 * memcpy and memset, which copy byte by byte: the band's loops below ask
 * for loops (GCC only; other compilers keep them as written). */
#if defined(__GNUC__) && !defined(__clang__)
#define PFVM__NN_LOOPS __attribute__((optimize("no-tree-loop-distribute-patterns")))
#else
#define PFVM__NN_LOOPS
#endif

/* dst[0..wp) = input row src's column q - pl, 0 outside [0, w) (src NULL:
 * a row in the padding, all zeros): the zeros, then the row 4 values a
 * step (a test per 4 values took 7 instructions per value on the M4). */
PFVM__NN_LOOPS static void pfvm__nn_pad_row(float *dst, const float *src, int32_t wp, int32_t pl, int32_t w)
{
    int32_t lo = pl < wp ? pl : wp, hi = w + pl < wp ? w + pl : wp, q;
    if (!src || hi < lo)
        lo = hi = wp;
    for (q = 0; q < lo; q++)
        dst[q] = 0.0f;
    for (; q + 4 <= hi; q += 4) {
        float v0 = src[q - pl], v1 = src[q - pl + 1], v2 = src[q - pl + 2], v3 = src[q - pl + 3];
        dst[q] = v0, dst[q + 1] = v1, dst[q + 2] = v2, dst[q + 3] = v3;
    }
    for (; q < hi; q++)
        dst[q] = src[q - pl];
    for (; q < wp; q++)
        dst[q] = 0.0f;
}
#endif

/* ---- element access ------------------------------------------------------------- */

static double pfvm__nn_ld(const pfvm_tensor *t, int64_t i)
{
    switch (t->dtype) {
    case PFVM_FLOAT: return ((const float *)t->data)[i];
    case PFVM_DOUBLE: return ((const double *)t->data)[i];
    case PFVM_FLOAT16: return pfvm_half_to_float(((const uint16_t *)t->data)[i]);
    case PFVM_BFLOAT16: return pfvm_bf16_to_float(((const uint16_t *)t->data)[i]);
    default: return pfvm_tensor_get_f64(t, i);
    }
}

static int pfvm__nn_is_f32(const pfvm_tensor *t)
{
    return t && t->dtype == PFVM_FLOAT;
}

/* Ceiling (up) or floor division by a positive divisor, for any sign:
 * C's quotient (toward zero) corrected by its remainder, so one division
 * (one __aeabi_ldivmod call on 32-bit Arm, where a sign test chose
 * between two) and no intermediate that can overflow. */
static int64_t pfvm__nn_div(int64_t a, int64_t b, int up)
{
    int64_t q = a / b, r = a % b;
    return up ? q + (r > 0) : q - (r < 0);
}

static int64_t pfvm__nn_cdiv(int64_t a, int64_t b)
{
    return pfvm__nn_div(a, b, 1);
}

/* PFVM_SMALL_KERNELS, PFVM_LEAN_KERNELS (32-bit firmware): the window's
 * output sizes and pads are resolved in 32-bit integers (on 32-bit cores a
 * 64-bit division is a library call with sign fix-ups, a 64-bit product a
 * sequence): the window attributes stay below 2^31 and each spatial dim's
 * size plus its pads plus the window's extent too, checked where the
 * window is resolved (pfvm__nn_resolve), else an error. */
#if PFVM__LA_SMALL || PFVM__LA_LEAN
#define PFVM__NN_WIN32 1
typedef int32_t pfvm__nn_wi;
static int32_t pfvm__nn_div32(int32_t a, int32_t b, int up)
{
    int32_t q = a / b, r = a % b;
    return up ? q + (r > 0) : q - (r < 0);
}
#define pfvm__nn_wdiv pfvm__nn_div32
#else
typedef int64_t pfvm__nn_wi;
#define pfvm__nn_wdiv pfvm__nn_div
#endif

/* Elements per (n, c) plane: the product of dims 2.. */
static int64_t pfvm__nn_plane(const pfvm_tensor *t)
{
    int64_t p = 1;
    int d;
    for (d = 2; d < t->rank; d++)
        p *= t->dims[d];
    return p;
}

/* Output 0 takes X's shape and element type (checked against the plan). */
static pfvm_code pfvm__nn_out_like(pfvm_kctx *k, int i, const pfvm_tensor *X)
{
    if (pfvm_kctx_output(k, i, X->dtype, X->rank, X->dims))
        return k->st ? k->st->code : PFVM_ERR_SHAPE;
    return PFVM_OK;
}

/* ---- windows --------------------------------------------------------------------- */

enum { PFVM__NN_NOTSET = 0, PFVM__NN_SAME_UPPER, PFVM__NN_SAME_LOWER, PFVM__NN_VALID };

typedef struct pfvm__nn_win {
    int n; /* spatial dims */
    int64_t k[PFVM__NN_SP], s[PFVM__NN_SP], d[PFVM__NN_SP];
    int64_t pb[PFVM__NN_SP], pe[PFVM__NN_SP]; /* pads at begin and end (resolved for auto_pad) */
    int auto_pad;
    int ceil_mode;
} pfvm__nn_win;

/* Reads a per-spatial-dim ints attribute; 1 if present. */
static int pfvm__nn_attr_dims(const pfvm_node *node, const char *name, int want, int64_t *out, pfvm_status *st, pfvm_code *rc)
{
    const int64_t *a;
    int cnt = pfvm_node_attr_ints(node, name, &a), i;
    if (cnt < 0)
        return 0;
    if (cnt != want) {
        *rc = pfvm__fail(st, PFVM_ERR_INVALID, "%s has %d entries, expected %d", name, cnt, want);
        return 0;
    }
    for (i = 0; i < want; i++)
        out[i] = a[i];
    return 1;
}

/* Reads kernel_shape (or the weight's spatial dims kd, 0 where unknown),
 * strides, dilations, pads, auto_pad and ceil_mode, and validates them. A
 * kernel dim left 0 means unknown (inference with a symbolic weight). */
/* Kernel sizes, strides, dilations and pads past this are rejected, so
 * that the window arithmetic (extents, padded sizes) cannot overflow. */
#ifdef PFVM__NN_WIN32
#define PFVM__NN_ATTR_MAX ((int64_t)INT32_MAX)
#else
#define PFVM__NN_ATTR_MAX ((int64_t)1 << 31)
#endif

static pfvm_code pfvm__nn_window(const pfvm_node *node, int nsp, const int64_t *kd, pfvm__nn_win *w, pfvm_status *st)
{
    const char *ap = pfvm_node_attr_string(node, "auto_pad", "NOTSET");
    int64_t pads[2 * PFVM__NN_SP];
    pfvm_code rc = PFVM_OK;
    int i;
    if (nsp < 1 || nsp > PFVM__NN_SP)
        return pfvm__fail(st, PFVM_ERR_UNSUPPORTED, "%d spatial dimensions (1 to %d supported)", nsp, PFVM__NN_SP);
    memset(w, 0, sizeof *w);
    w->n = nsp;
    for (i = 0; i < PFVM__NN_SP; i++) {
        w->k[i] = i < nsp && kd ? kd[i] : 1;
        w->s[i] = w->d[i] = 1;
    }
    if (pfvm__nn_attr_dims(node, "kernel_shape", nsp, w->k, st, &rc)) {
        for (i = 0; i < nsp; i++)
            if (kd && kd[i] > 0 && kd[i] != w->k[i])
                return pfvm__fail(st, PFVM_ERR_SHAPE, "kernel_shape %lld differs from the weight's %lld", (long long)w->k[i],
                                  (long long)kd[i]);
    } else if (!rc && !kd) {
        return pfvm__fail(st, PFVM_ERR_INVALID, "kernel_shape is required");
    }
    pfvm__nn_attr_dims(node, "strides", nsp, w->s, st, &rc);
    pfvm__nn_attr_dims(node, "dilations", nsp, w->d, st, &rc);
    if (pfvm__nn_attr_dims(node, "pads", 2 * nsp, pads, st, &rc))
        for (i = 0; i < nsp; i++) {
            w->pb[i] = pads[i];
            w->pe[i] = pads[i + nsp];
        }
    if (rc)
        return rc;
    for (i = 0; i < nsp; i++)
        if (w->k[i] < 0 || (w->k[i] == 0 && !kd) || w->s[i] < 1 || w->d[i] < 1 || w->pb[i] < 0 || w->pe[i] < 0)
            return pfvm__fail(st, PFVM_ERR_INVALID, "kernel, strides and dilations must be positive, pads non-negative");
        else if (w->k[i] > PFVM__NN_ATTR_MAX || w->s[i] > PFVM__NN_ATTR_MAX || w->d[i] > PFVM__NN_ATTR_MAX ||
                 w->pb[i] > PFVM__NN_ATTR_MAX || w->pe[i] > PFVM__NN_ATTR_MAX)
            return pfvm__fail(st, PFVM_ERR_RANGE, "spatial dim %d: kernel %lld, stride %lld, dilation %lld or pads %lld, %lld past 2^31",
                              i, (long long)w->k[i], (long long)w->s[i], (long long)w->d[i], (long long)w->pb[i],
                              (long long)w->pe[i]);
    w->auto_pad = !strcmp(ap, "SAME_UPPER")   ? PFVM__NN_SAME_UPPER
                  : !strcmp(ap, "SAME_LOWER") ? PFVM__NN_SAME_LOWER
                  : !strcmp(ap, "VALID")      ? PFVM__NN_VALID
                                              : PFVM__NN_NOTSET;
    if (w->auto_pad == PFVM__NN_NOTSET && strcmp(ap, "NOTSET"))
        return pfvm__fail(st, PFVM_ERR_INVALID, "auto_pad '%s' is not valid", ap);
    w->ceil_mode = pfvm_node_attr_int(node, "ceil_mode", 0) != 0;
    return PFVM_OK;
}

static int64_t pfvm__nn_extent(const pfvm__nn_win *w, int i)
{
    return w->d[i] * (w->k[i] - 1) + 1;
}

/* ceil_mode may let the last window start in the end padding; it must
 * start inside the input or the begin padding (torch's rule), which only
 * bites when the stride exceeds the extent left of the end padding. */
static int pfvm__nn_ceil_clamps(const pfvm__nn_win *w, int i)
{
    return w->ceil_mode && w->s[i] > pfvm__nn_extent(w, i) - w->pe[i];
}

/* A pad larger than the input plus the window's extent only adds outputs
 * whose windows see nothing but padding: pads of 2^31 made Conv and the
 * pools write millions of them (seconds) before any limit applied. Within
 * the bound the output stays within three times the unpadded one, and pads
 * wider than the kernel (whole rows of padding, which models and the tests
 * of the depthwise paths have) still run. in[i] < 0: not known yet. */
static pfvm_code pfvm__nn_check_pads(const pfvm__nn_win *w, const int64_t *in, pfvm_status *st)
{
    int i;
    if (w->auto_pad != PFVM__NN_NOTSET)
        return PFVM_OK;
    for (i = 0; i < w->n; i++) {
        int64_t ext = pfvm__nn_extent(w, i), lim;
        if (in[i] < 0 || w->k[i] <= 0 || ext < 1) /* not known, or refused by the window's own checks */
            continue;
        lim = in[i] < INT64_MAX - ext ? in[i] + ext : INT64_MAX;
        if (w->pb[i] > lim || w->pe[i] > lim)
            return pfvm__fail(st, PFVM_ERR_INVALID,
                              "spatial dim %d: pads %lld, %lld exceed the input size %lld plus the window extent %lld", i,
                              (long long)w->pb[i], (long long)w->pe[i], (long long)in[i], (long long)pfvm__nn_extent(w, i));
    }
    return PFVM_OK;
}

/* The spatial input sizes of a shape that are constants, -1 for the
 * others. */
static void pfvm__nn_const_sp(const pfvm_shape *x, int nsp, int64_t *in)
{
    int i;
    for (i = 0; i < nsp && i < PFVM__NN_SP; i++)
        if (!pfvm_sym_is_const(x->dims[i + 2], &in[i]))
            in[i] = -1;
}

/* Output size along spatial dim i over symbols (the kernels' rule below). */
static const pfvm_sym *pfvm__nn_out_sym(pfvm_symtab *t, const pfvm__nn_win *w, int i, const pfvm_sym *in)
{
    int64_t ext = pfvm__nn_extent(w, i);
    const pfvm_sym *s = pfvm_sym_const(t, w->s[i]), *num, *o;
    if (w->auto_pad == PFVM__NN_SAME_UPPER || w->auto_pad == PFVM__NN_SAME_LOWER)
        return pfvm_sym_ceildiv(t, in, s);
    if (w->auto_pad == PFVM__NN_VALID)
        return pfvm_sym_addi(t, pfvm_sym_div(t, pfvm_sym_addi(t, in, -ext), s), 1);
    num = pfvm_sym_addi(t, in, w->pb[i] + w->pe[i] - ext);
    o = pfvm_sym_addi(t, w->ceil_mode ? pfvm_sym_ceildiv(t, num, s) : pfvm_sym_div(t, num, s), 1);
    if (pfvm__nn_ceil_clamps(w, i))
        o = pfvm_sym_min(t, o, pfvm_sym_ceildiv(t, pfvm_sym_addi(t, in, w->pb[i]), s));
    return o;
}

/* A proven negative output size is an input smaller than the window. */
static pfvm_code pfvm__nn_check_len(pfvm_ictx *c, const pfvm_sym *len)
{
    int64_t v;
    if ((pfvm_sym_is_const(len, &v) && v < 0) || pfvm_sym_proven_ge(c->syms, pfvm_sym_muli(c->syms, len, -1), 1))
        return pfvm__fail(c->st, PFVM_ERR_SHAPE, "a spatial size is smaller than the window");
    return PFVM_OK;
}

/* Output sizes for concrete input sizes; resolves auto_pad's pads. Fails
 * when an input is smaller than the window. */
static pfvm_code pfvm__nn_resolve(pfvm__nn_win *w, const int64_t *in, int64_t *out, pfvm_status *st)
{
    int i;
#ifndef PFVM__NN_WIN32 /* else per dim below, in 32 bits */
    if (pfvm__nn_check_pads(w, in, st))
        return st ? st->code : PFVM_ERR_INVALID;
#endif
    for (i = 0; i < w->n; i++) {
        /* o = (a / s rounded up or down) + plus: one division site for
         * the three rules (a 64-bit division is a library call on 32-bit
         * cores, its sign fix-ups a sequence each) */
        int64_t ext64 = pfvm__nn_extent(w, i);
        pfvm__nn_wi ext, n, s, a, o;
        int same = w->auto_pad == PFVM__NN_SAME_UPPER || w->auto_pad == PFVM__NN_SAME_LOWER, up = same || w->ceil_mode;
        if (w->auto_pad == PFVM__NN_VALID) {
            w->pb[i] = w->pe[i] = 0;
            up = 0;
        }
#ifdef PFVM__NN_WIN32
        /* every term below is at most the size plus the pads plus the
         * extent (the attributes, the stride too, are below 2^31) */
        if (in[i] < 0 || in[i] > INT32_MAX - ext64 - w->pb[i] - w->pe[i])
            return pfvm__fail(st, PFVM_ERR_RANGE,
                              "spatial dim %d: size %lld, pads %lld, %lld and window extent %lld past 2^31 (a 32-bit window)",
                              i, (long long)in[i], (long long)w->pb[i], (long long)w->pe[i], (long long)ext64);
#endif
        ext = (pfvm__nn_wi)ext64;
        n = (pfvm__nn_wi)in[i];
        s = (pfvm__nn_wi)w->s[i];
#ifdef PFVM__NN_WIN32 /* pfvm__nn_check_pads' rule */
        if (w->auto_pad == PFVM__NN_NOTSET && ext > 0 && ((pfvm__nn_wi)w->pb[i] > n + ext || (pfvm__nn_wi)w->pe[i] > n + ext))
            return pfvm__fail(st, PFVM_ERR_INVALID, "spatial dim %d: pads %lld, %lld exceed the input size %lld plus the window extent %lld",
                              i, (long long)w->pb[i], (long long)w->pe[i], (long long)in[i], (long long)ext64);
#endif
        a = same ? n : n + (pfvm__nn_wi)w->pb[i] + (pfvm__nn_wi)w->pe[i] - ext;
        o = pfvm__nn_wdiv(a, s, up) + !same;
        if (same) {
            pfvm__nn_wi total = (o - 1) * s + ext - n;
            if (total < 0)
                total = 0;
            w->pb[i] = w->auto_pad == PFVM__NN_SAME_UPPER ? total / 2 : total - total / 2;
            w->pe[i] = total - w->pb[i];
        } else if (pfvm__nn_ceil_clamps(w, i)) {
            pfvm__nn_wi last = pfvm__nn_wdiv(n + (pfvm__nn_wi)w->pb[i], s, 1);
            if (o > last)
                o = last;
        }
        if (o < 0)
            return pfvm__fail(st, PFVM_ERR_SHAPE, "spatial size %lld is smaller than the window (%lld)", (long long)in[i],
                              (long long)ext64);
        out[i] = o;
    }
    for (; i < PFVM__NN_SP; i++)
        out[i] = 1;
    return PFVM_OK;
}

/* Spatial dims of t padded to three (missing ones are 1). */
static void pfvm__nn_sp3(const pfvm_tensor *t, int64_t *sp)
{
    int i;
    for (i = 0; i < PFVM__NN_SP; i++)
        sp[i] = i + 2 < t->rank ? t->dims[i + 2] : 1;
}

/* Kernel positions k in [0, K) with lo <= base + k*d < hi. */
static void pfvm__nn_krange(int64_t base, int64_t d, int64_t K, int64_t lo, int64_t hi, int64_t *ka, int64_t *kb)
{
    int64_t a = pfvm__nn_cdiv(lo - base, d), b = pfvm__nn_cdiv(hi - base, d);
    *ka = a < 0 ? 0 : a > K ? K : a;
    *kb = b < *ka ? *ka : b > K ? K : b;
}

/* Output positions o in [0, n_out) with 0 <= o*s + off < hi. */
static void pfvm__nn_valid(int64_t n_out, int64_t s, int64_t off, int64_t hi, int64_t *o0, int64_t *o1)
{
    int64_t a = pfvm__nn_cdiv(-off, s), b = pfvm__nn_cdiv(hi - off, s);
    *o0 = a < 0 ? 0 : a > n_out ? n_out : a;
    *o1 = b < *o0 ? *o0 : b > n_out ? n_out : b;
}

/* ---- Conv --------------------------------------------------------------------------- */

/* Window of a convolution-like node from its weight's spatial dims. */
static pfvm_code pfvm__nn_conv_window(const pfvm_node *node, const pfvm_shape *wt, int nsp, pfvm__nn_win *w, int *known,
                                      pfvm_status *st)
{
    int64_t kd[PFVM__NN_SP] = {0};
    int i;
    *known = 1;
    for (i = 0; i < nsp && i < PFVM__NN_SP; i++)
        if (!pfvm_sym_is_const(wt->dims[i + 2], &kd[i]))
            kd[i] = 0;
    if (pfvm__nn_window(node, nsp, kd, w, st))
        return st ? st->code : PFVM_ERR_INVALID;
    for (i = 0; i < nsp; i++)
        if (w->k[i] == 0)
            *known = 0;
    return PFVM_OK;
}

/* Conv is defined over one float type (ConvInteger and QLinearConv take
 * integers); a uint8 x with a float weight ran the slow reference path. */
static pfvm_code pfvm__nn_conv_types(pfvm_dtype x, pfvm_dtype w, pfvm_status *st)
{
    if ((x != PFVM_UNDEFINED && !pfvm_dtype_is_float(x)) || (w != PFVM_UNDEFINED && !pfvm_dtype_is_float(w)) ||
        (x != PFVM_UNDEFINED && w != PFVM_UNDEFINED && x != w))
        return pfvm__fail(st, PFVM_ERR_INVALID, "x (%s) and W (%s) must have the same float type", pfvm_dtype_name(x),
                          pfvm_dtype_name(w));
    return PFVM_OK;
}

static pfvm_code pfvm__nn_infer_conv(pfvm_ictx *c)
{
    const pfvm_shape *x = &c->in[0]->type.shape, *wt = &c->in[1]->type.shape;
    int64_t group = pfvm_node_attr_int(c->node, "group", 1), xc, wc, m;
    pfvm__nn_win w;
    pfvm_shape out;
    int i, nsp, known;
    if (pfvm__nn_conv_types(c->in[0]->type.dtype, c->in[1]->type.dtype, c->st))
        return c->st ? c->st->code : PFVM_ERR_INVALID;
    if (x->rank < 0 || wt->rank < 0)
        return pfvm_infer_unknown(c, 0, c->in[0]->type.dtype, x->rank >= 0 ? x->rank : wt->rank);
    if (x->rank < 3 || wt->rank != x->rank)
        return pfvm__fail(c->st, PFVM_ERR_SHAPE, "input rank %d and weight rank %d do not fit a convolution", x->rank,
                          wt->rank);
    if (group < 1)
        return pfvm__fail(c->st, PFVM_ERR_INVALID, "group %lld must be positive", (long long)group);
    if (pfvm_sym_is_const(wt->dims[1], &wc) && !pfvm__mul_i64(wc, group, &m))
        return pfvm__fail(c->st, PFVM_ERR_INVALID, "weight channels %lld x group %lld overflows",
                             (long long)wc, (long long)group);
    if (pfvm_sym_is_const(x->dims[1], &xc) && pfvm_sym_is_const(wt->dims[1], &wc) && xc != wc * group)
        return pfvm__fail(c->st, PFVM_ERR_SHAPE, "%lld input channels do not fit weight channels %lld x group %lld",
                          (long long)xc, (long long)wc, (long long)group);
    if (pfvm_infer_check_eq(c, x->dims[1], pfvm_sym_muli(c->syms, wt->dims[1], group), "input channels and weight channels x group"))
        return c->st ? c->st->code : PFVM_ERR_SHAPE;
    if (pfvm_sym_is_const(wt->dims[0], &m) && m % group)
        return pfvm__fail(c->st, PFVM_ERR_SHAPE, "%lld output channels are not a multiple of group %lld", (long long)m,
                          (long long)group);
    if (c->n_in > 2 && pfvm_infer_check_vec(c, 2, wt->dims[0], "bias length and output channels"))
        return c->st ? c->st->code : PFVM_ERR_SHAPE;
    nsp = x->rank - 2;
    if (pfvm__nn_conv_window(c->node, wt, nsp, &w, &known, c->st))
        return c->st ? c->st->code : PFVM_ERR_INVALID;
    if (!known) {
        if (pfvm_infer_unknown(c, 0, c->in[0]->type.dtype, x->rank))
            return c->st ? c->st->code : PFVM_ERR_NOMEM;
        out = c->out[0]->type.shape;
    } else {
        int64_t in[PFVM__NN_SP];
        pfvm__nn_const_sp(x, nsp, in);
        if (pfvm__nn_check_pads(&w, in, c->st))
            return c->st ? c->st->code : PFVM_ERR_INVALID;
        out.rank = x->rank;
        for (i = 0; i < nsp; i++)
            if (!(out.dims[i + 2] = pfvm__nn_out_sym(c->syms, &w, i, x->dims[i + 2])) ||
                pfvm__nn_check_len(c, out.dims[i + 2]))
                return c->st ? c->st->code : PFVM_ERR_SHAPE;
    }
    out.dims[0] = x->dims[0];
    out.dims[1] = wt->dims[0];
    pfvm_ival_set_tensor(c->out[0], c->in[0]->type.dtype, &out);
    return PFVM_OK;
}

/* A convolution's geometry from concrete tensors: window, sizes, groups. */
typedef struct pfvm__nn_geom {
    pfvm__nn_win w;
    int64_t in_sp[PFVM__NN_SP], out_sp[PFVM__NN_SP];
    int64_t N, C, M, group, CG, MG, in_plane, out_plane, kk;
} pfvm__nn_geom;

/* Checks X [N, C, spatial] against W [M, C/group, kernel], resolves the
 * window and shapes output 0 with element type dtype. */
static pfvm_code pfvm__nn_conv_setup(pfvm_kctx *k, const pfvm_tensor *X, const pfvm_tensor *W, pfvm_dtype dtype,
                                     pfvm__nn_geom *g)
{
    int64_t kd[PFVM__NN_SP], dims[PFVM_MAX_RANK], cg;
    int i, nsp = X->rank - 2;
    if (nsp < 1 || nsp > PFVM__NN_SP || W->rank != X->rank)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "input rank %d and weight rank %d do not fit a convolution",
                             X->rank, W->rank);
    for (i = 0; i < nsp; i++)
        kd[i] = W->dims[i + 2];
    g->N = X->dims[0];
    g->C = X->dims[1];
    g->M = W->dims[0];
    g->group = pfvm_node_attr_int(k->node, "group", 1);
    g->CG = W->dims[1]; /* C = CG x group exactly: no division for C's */
    if (g->group < 1 || g->M % g->group || !pfvm__mul_i64(g->CG, g->group, &cg) || cg != g->C)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "channels %lld, weight %lldx%lld and group %lld do not fit",
                             (long long)g->C, (long long)g->M, (long long)W->dims[1], (long long)g->group);
    for (i = 0; i < nsp; i++)
        if (kd[i] < 1)
            return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "empty kernel");
    if (pfvm__nn_window(k->node, nsp, kd, &g->w, k->st))
        return pfvm__op_fail(k->st, k->node, k->st ? k->st->code : PFVM_ERR_INVALID, "%s", k->st ? k->st->msg : "window");
    pfvm__nn_sp3(X, g->in_sp);
    if (pfvm__nn_resolve(&g->w, g->in_sp, g->out_sp, k->st))
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "%s", k->st ? k->st->msg : "window");
    dims[0] = g->N;
    dims[1] = g->M;
    for (i = 0; i < nsp; i++)
        dims[i + 2] = g->out_sp[i];
    if (pfvm_kctx_output(k, 0, dtype, X->rank, dims))
        return k->st ? k->st->code : PFVM_ERR_SHAPE;
    g->MG = g->M / g->group;
    g->in_plane = g->in_sp[0] * g->in_sp[1] * g->in_sp[2];
    g->out_plane = g->out_sp[0] * g->out_sp[1] * g->out_sp[2];
    g->kk = g->w.k[0] * g->w.k[1] * g->w.k[2];
    return PFVM_OK;
}

PFVM_INTERNAL pfvm_code pfvm_nn_conv_ref(pfvm_kctx *k, const pfvm_tensor *X, const pfvm_tensor *W, const pfvm_tensor *xzp,
                                         const pfvm_tensor *wzp, pfvm_nn_post_fn post, void *user)
{
    double xz = xzp && pfvm_tensor_numel(xzp) ? pfvm_tensor_get_f64(xzp, 0) : 0;
    int64_t nwz = wzp ? pfvm_tensor_numel(wzp) : 0, idx, total;
    pfvm__nn_geom g;
    const pfvm__nn_win *w = &g.w;
    if (pfvm__nn_conv_setup(k, X, W, k->out[0]->dtype ? k->out[0]->dtype : X->dtype, &g))
        return k->st ? k->st->code : PFVM_ERR_SHAPE;
    if (nwz > 1 && nwz != g.M)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "%lld weight zero points for %lld output channels",
                             (long long)nwz, (long long)g.M);
    total = pfvm_tensor_numel(k->out[0]);
    for (idx = 0; idx < total; idx++) {
        int64_t rest = idx, op[PFVM__NN_SP], ka[PFVM__NN_SP], kb[PFVM__NN_SP], org[PFVM__NN_SP], nn, mm, gg, ci, k0, k1, k2;
        double s = 0, wz;
        int i;
        for (i = PFVM__NN_SP - 1; i >= 0; i--) {
            op[i] = rest % g.out_sp[i];
            rest /= g.out_sp[i];
        }
        mm = rest % g.M;
        nn = rest / g.M;
        gg = mm / g.MG;
        wz = nwz == 0 ? 0 : pfvm_tensor_get_f64(wzp, nwz == 1 ? 0 : mm);
        /* positions in the padding hold the zero point: they add nothing */
        for (i = 0; i < PFVM__NN_SP; i++) {
            org[i] = op[i] * w->s[i] - w->pb[i];
            pfvm__nn_krange(org[i], w->d[i], w->k[i], 0, g.in_sp[i], &ka[i], &kb[i]);
        }
        for (ci = 0; ci < g.CG; ci++) {
            int64_t xbase = (nn * g.C + gg * g.CG + ci) * g.in_plane, wbase = (mm * g.CG + ci) * g.kk;
            for (k0 = ka[0]; k0 < kb[0]; k0++)
                for (k1 = ka[1]; k1 < kb[1]; k1++)
                    for (k2 = ka[2]; k2 < kb[2]; k2++) {
                        int64_t p0 = org[0] + k0 * w->d[0], p1 = org[1] + k1 * w->d[1], p2 = org[2] + k2 * w->d[2];
                        s += (pfvm_tensor_get_f64(X, xbase + (p0 * g.in_sp[1] + p1) * g.in_sp[2] + p2) - xz) *
                             (pfvm_tensor_get_f64(W, wbase + (k0 * w->k[1] + k1) * w->k[2] + k2) - wz);
                    }
        }
        post(user, idx, mm, s);
    }
    return PFVM_OK;
}

/* A 2-D convolution's window in 32-bit integers (1-D: W = 1). */
typedef struct pfvm__nn_2d {
    int32_t H, W, OH, OW, KH, KW, SH, SW, DH, DW, PT, PL;
} pfvm__nn_2d;

/* A 2-D (or 1-D) convolution's geometry in 32-bit integers, when every
 * index the plane kernels compute fits (the depthwise kernel, the 2-D
 * im2col packing). */
static int pfvm__nn_2d_win(const pfvm__nn_win *w, const int64_t *in_sp, const int64_t *out_sp, pfvm__nn_2d *d)
{
    const uint64_t lim = INT32_MAX;
    int i;
    if (w->k[2] != 1 || in_sp[2] != 1 || out_sp[2] != 1 || w->pb[2] || w->pe[2])
        return 0;
    for (i = 0; i < 2; i++) {
        /* sizes, steps and pads are not negative: one is past 2^31 - 1
         * when their bits together are; below, each is a 32-bit number
         * and a product of two exact in 64 bits (one multiply on 32-bit
         * cores, not a 64-bit product's sequence) */
        uint64_t reach;
        if ((uint64_t)(in_sp[i] | out_sp[i] | w->k[i] | w->s[i] | w->d[i] | w->pb[i]) > lim)
            return 0;
        reach = (uint64_t)(uint32_t)w->k[i] * (uint32_t)w->d[i] + (uint32_t)w->pb[i];
        if ((uint64_t)(uint32_t)out_sp[i] * (uint32_t)w->s[i] + reach > lim || reach + (uint32_t)in_sp[i] > lim)
            return 0;
    }
    if ((uint64_t)(uint32_t)in_sp[0] * (uint32_t)in_sp[1] > lim || (uint64_t)(uint32_t)out_sp[0] * (uint32_t)out_sp[1] > lim ||
        (uint64_t)(uint32_t)w->k[0] * (uint32_t)w->k[1] > lim)
        return 0;
    d->H = (int32_t)in_sp[0];
    d->W = (int32_t)in_sp[1];
    d->OH = (int32_t)out_sp[0];
    d->OW = (int32_t)out_sp[1];
    d->KH = (int32_t)w->k[0];
    d->KW = (int32_t)w->k[1];
    d->SH = (int32_t)w->s[0];
    d->SW = (int32_t)w->s[1];
    d->DH = (int32_t)w->d[0];
    d->DW = (int32_t)w->d[1];
    d->PT = (int32_t)w->pb[0];
    d->PL = (int32_t)w->pb[1];
    return 1;
}

static int pfvm__nn_2d_fits(const pfvm__nn_geom *g, pfvm__nn_2d *d)
{
    return g->CG * g->kk <= INT32_MAX && pfvm__nn_2d_win(&g->w, g->in_sp, g->out_sp, d);
}

/* The implicit im2col: row p of B is (input channel, kernel position),
 * column j an output position; entries in the padding are zero. */
/* A convolution's window in 32-bit integers over three spatial dims, the
 * given ones last (a 2-D window is 1 x H x W): for pfvm__nn_pack_conv32. */
typedef struct pfvm__nn_w32 {
    int32_t in[PFVM__NN_SP], out[PFVM__NN_SP], k[PFVM__NN_SP], s[PFVM__NN_SP], d[PFVM__NN_SP], pb[PFVM__NN_SP], kk;
} pfvm__nn_w32;

typedef struct pfvm__nn_cpack {
    const float *x; /* first input channel of this image and group */
    const pfvm__nn_geom *g;
    const pfvm__nn_2d *d;  /* for pfvm__nn_pack_conv2d */
    const pfvm__nn_w32 *v; /* for pfvm__nn_pack_conv32 */
} pfvm__nn_cpack;

#if PFVM__LA_SMALL || PFVM__LA_LEAN
/* The packing's geometry in 32 bits when every index it computes fits:
 * the input and output planes, the window's reach past either, the panel
 * rows (input channels x kernel positions). 0: it does not. */
static int pfvm__nn_w32_fits(const pfvm__nn_geom *g, pfvm__nn_w32 *v)
{
    const int64_t lim = INT32_MAX;
    int i, off = PFVM__NN_SP - g->w.n;
    if (g->in_plane > lim || g->out_plane > lim || g->CG * g->kk > lim)
        return 0;
    for (i = 0; i < PFVM__NN_SP; i++) { /* leading dims of 1 */
        v->in[i] = v->out[i] = v->k[i] = v->s[i] = v->d[i] = 1;
        v->pb[i] = 0;
    }
    for (i = 0; i < g->w.n; i++) {
        /* the planes' bounds keep these products in 64 bits; with sizes
         * and steps of at least 1 they bound every term by 2^31 */
        int64_t in = g->in_sp[i], out = g->out_sp[i], k = g->w.k[i], s = g->w.s[i], d = g->w.d[i], pb = g->w.pb[i];
        if (out * s + k * d + pb > lim || in + pb + k * d > lim)
            return 0;
        v->in[i + off] = (int32_t)in;
        v->out[i + off] = (int32_t)out;
        v->k[i + off] = (int32_t)k;
        v->s[i + off] = (int32_t)s;
        v->d[i + off] = (int32_t)d;
        v->pb[i + off] = (int32_t)pb;
    }
    v->kk = (int32_t)g->kk;
    return 1;
}

/* The implicit im2col of PFVM_SMALL_KERNELS and PFVM_LEAN_KERNELS for 1-,
 * 2- and 3-D windows in 32-bit index math: the panel's columns are cut
 * once into runs along one output row, so each row of the panel is a few
 * strided copies (plain copies at stride 1) with the padding's entries
 * zero, and the kernel position advances without divisions. */
static void pfvm__nn_pack_conv32(void *user, int64_t p0, int64_t kc, int64_t j0, int64_t nr, float *dst)
{
    const pfvm__nn_cpack *cp = (const pfvm__nn_cpack *)user;
    const pfvm__nn_w32 *v = cp->v;
    int32_t seg0[PFVM_LA_NB], seg1[PFVM_LA_NB], seg2[PFVM_LA_NB], seg_at[PFVM_LA_NB], seg_len[PFVM_LA_NB];
    int32_t nseg = 0, j, p, q = (int32_t)p0, c, k0, k1, k2, o0, o1, o2, W = v->in[2], plane = v->in[0] * v->in[1] * W;
    o2 = (int32_t)j0 % v->out[2];
    o1 = (int32_t)j0 / v->out[2] % v->out[1];
    o0 = (int32_t)j0 / v->out[2] / v->out[1];
    for (j = 0; j < (int32_t)nr; nseg++) {
        int32_t len = v->out[2] - o2 < (int32_t)nr - j ? v->out[2] - o2 : (int32_t)nr - j;
        seg0[nseg] = o0 * v->s[0] - v->pb[0];
        seg1[nseg] = o1 * v->s[1] - v->pb[1];
        seg2[nseg] = o2 * v->s[2] - v->pb[2];
        seg_at[nseg] = j;
        seg_len[nseg] = len;
        j += len;
        o2 = 0;
        if (++o1 == v->out[1]) {
            o1 = 0;
            o0++;
        }
    }
    c = q / v->kk;
    q %= v->kk;
    k2 = q % v->k[2];
    k1 = q / v->k[2] % v->k[1];
    k0 = q / v->k[2] / v->k[1];
    for (p = 0; p < (int32_t)kc; p++) {
        float *row = dst + p * PFVM_LA_NB;
        const float *xc = cp->x + (int64_t)c * plane;
        int32_t s, t;
        for (s = 0; s < nseg; s++) {
            int32_t i0 = seg0[s] + k0 * v->d[0], i1 = seg1[s] + k1 * v->d[1], iw = seg2[s] + k2 * v->d[2], len = seg_len[s];
            float *out = row + seg_at[s];
            if ((uint32_t)i0 >= (uint32_t)v->in[0] || (uint32_t)i1 >= (uint32_t)v->in[1]) {
                for (t = 0; t < len; t++)
                    out[t] = 0.0f;
            } else {
                const float *xr = xc + (i0 * v->in[1] + i1) * W;
                if (v->s[2] == 1 && iw >= 0 && iw + len <= W && len == PFVM_LA_NB)
                    memcpy(out, xr + iw, sizeof(float) * PFVM_LA_NB); /* a fixed size: a few moves */
                else if (v->s[2] == 1 && iw >= 0 && iw + len <= W)
                    for (t = 0; t < len; t++)
                        out[t] = xr[iw + t];
                else
                    for (t = 0; t < len; t++, iw += v->s[2])
                        out[t] = iw >= 0 && iw < W ? xr[iw] : 0.0f;
            }
        }
        for (j = (int32_t)nr; j < PFVM_LA_NB; j++)
            row[j] = 0.0f;
        if (++k2 == v->k[2]) {
            k2 = 0;
            if (++k1 == v->k[1]) {
                k1 = 0;
                if (++k0 == v->k[0]) {
                    k0 = 0;
                    c++;
                }
            }
        }
    }
}
#else
static void pfvm__nn_pack_conv(void *user, int64_t p0, int64_t kc, int64_t j0, int64_t nr, float *dst)
{
    const pfvm__nn_cpack *cp = (const pfvm__nn_cpack *)user;
    const pfvm__nn_geom *g = cp->g;
    const pfvm__nn_win *w = &g->w;
    int64_t org[PFVM__NN_SP][PFVM_LA_NB], o[PFVM__NN_SP], p, j;
    int i;
    o[2] = j0 % g->out_sp[2];
    o[1] = j0 / g->out_sp[2] % g->out_sp[1];
    o[0] = j0 / g->out_sp[2] / g->out_sp[1];
    for (j = 0; j < nr; j++) {
        for (i = 0; i < PFVM__NN_SP; i++)
            org[i][j] = o[i] * w->s[i] - w->pb[i];
        if (++o[2] == g->out_sp[2]) {
            o[2] = 0;
            if (++o[1] == g->out_sp[1]) {
                o[1] = 0;
                o[0]++;
            }
        }
    }
    for (p = 0; p < kc; p++) {
        int64_t q = p0 + p, kp = q % g->kk, k2 = kp % w->k[2], k1 = kp / w->k[2] % w->k[1], k0 = kp / w->k[2] / w->k[1];
        int64_t d0 = k0 * w->d[0], d1 = k1 * w->d[1], d2 = k2 * w->d[2];
        const float *xc = cp->x + q / g->kk * g->in_plane;
        float *row = dst + p * PFVM_LA_NB;
        for (j = 0; j < nr; j++) {
            int64_t y0 = org[0][j] + d0, y1 = org[1][j] + d1, y2 = org[2][j] + d2;
            row[j] = (uint64_t)y0 < (uint64_t)g->in_sp[0] && (uint64_t)y1 < (uint64_t)g->in_sp[1] &&
                             (uint64_t)y2 < (uint64_t)g->in_sp[2]
                         ? xc[(y0 * g->in_sp[1] + y1) * g->in_sp[2] + y2]
                         : 0.0f;
        }
        for (; j < PFVM_LA_NB; j++)
            row[j] = 0.0f;
    }
}

/* Cuts the panel's nr columns from j0 into runs along one output row:
 * each run's first input row and column (before the kernel offset), its
 * column in the panel and its length; returns how many. */
static int32_t pfvm__nn_pack_segs(const pfvm__nn_2d *d, int64_t j0, int64_t nr, int32_t *seg_oh, int32_t *seg_iw,
                                  int32_t *seg_at, int32_t *seg_len)
{
    int32_t nseg = 0, j, oh, ow;
    if (nr <= 0)
        return 0;
    oh = (int32_t)(j0 / d->OW);
    ow = (int32_t)(j0 % d->OW);
    for (j = 0; j < (int32_t)nr; nseg++) {
        int32_t len = d->OW - ow < (int32_t)nr - j ? d->OW - ow : (int32_t)nr - j;
        seg_oh[nseg] = oh * d->SH - d->PT;
        seg_iw[nseg] = ow * d->SW - d->PL;
        seg_at[nseg] = j;
        seg_len[nseg] = len;
        j += len;
        ow = 0;
        oh++;
    }
    return nseg;
}

/* The panel row p0's kernel tap (input channel c, window row kh and
 * column kw), then the next row's without a division. */
static void pfvm__nn_tap_first(const pfvm__nn_2d *d, int64_t p0, int32_t *c, int32_t *kh, int32_t *kw)
{
    int32_t q = (int32_t)p0, kk = d->KH * d->KW;
    *c = q / kk;
    *kh = q % kk / d->KW;
    *kw = q % d->KW;
}

static void pfvm__nn_tap_next(const pfvm__nn_2d *d, int32_t *c, int32_t *kh, int32_t *kw)
{
    if (++*kw == d->KW) {
        *kw = 0;
        if (++*kh == d->KH) {
            *kh = 0;
            ++*c;
        }
    }
}

/* pfvm__nn_pack_conv for 2-D (and 1-D) windows: the panel's columns are
 * cut once into runs along one output row, so each row of the panel is a
 * few strided copies (plain copies at stride 1) with the padding's
 * columns zero, and the kernel position advances without divisions. */
static void pfvm__nn_pack_conv2d(void *user, int64_t p0, int64_t kc, int64_t j0, int64_t nr, float *dst)
{
    const pfvm__nn_cpack *cp = (const pfvm__nn_cpack *)user;
    const pfvm__nn_2d *d = cp->d;
    int32_t seg_oh[PFVM_LA_NB], seg_iw[PFVM_LA_NB], seg_at[PFVM_LA_NB], seg_len[PFVM_LA_NB];
    int32_t nseg, j, p, c, kh, kw, plane = d->H * d->W;
    nseg = pfvm__nn_pack_segs(d, j0, nr, seg_oh, seg_iw, seg_at, seg_len);
    pfvm__nn_tap_first(d, p0, &c, &kh, &kw);
    for (p = 0; p < (int32_t)kc; p++) {
        float *row = dst + p * PFVM_LA_NB;
        const float *xc = cp->x + (int64_t)c * plane;
        int32_t s;
        for (s = 0; s < nseg; s++) {
            int32_t ih = seg_oh[s] + kh * d->DH, iw = seg_iw[s] + kw * d->DW, len = seg_len[s], t;
            float *out = row + seg_at[s];
            if (ih < 0 || ih >= d->H) {
                for (t = 0; t < len; t++)
                    out[t] = 0.0f;
            } else {
                const float *xr = xc + ih * d->W;
                if (d->SW == 1 && iw >= 0 && iw + len <= d->W && len == PFVM_LA_NB)
                    memcpy(out, xr + iw, sizeof(float) * PFVM_LA_NB); /* a fixed size: a few vector moves */
                else if (d->SW == 1 && iw >= 0 && iw + len <= d->W)
                    for (t = 0; t < len; t++)
                        out[t] = xr[iw + t];
                else
                    for (t = 0; t < len; t++, iw += d->SW)
                        out[t] = iw >= 0 && iw < d->W ? xr[iw] : 0.0f;
            }
        }
        for (j = (int32_t)nr; j < PFVM_LA_NB; j++)
            row[j] = 0.0f;
        pfvm__nn_tap_next(d, &c, &kh, &kw);
    }
}

#if defined(PFVM_DISPATCH_CLONES) && PFVM_LA_NB == 16
static int pfvm__nn_have_avx2(void);

/* pfvm__nn_pack_conv2d at stride 1 with AVX2: each panel row is built in
 * two vectors, every segment of it one pair of loads masked to the
 * segment's columns inside the input row (nothing outside it is read;
 * masked lanes load +0.0f, the padding's value), so segments that cross
 * output rows or touch the padding take no per-element loop. */
__attribute__((target("avx2"))) static void pfvm__nn_pack_conv2d_avx2(void *user, int64_t p0, int64_t kc, int64_t j0,
                                                                       int64_t nr, float *dst)
{
    const pfvm__nn_cpack *cp = (const pfvm__nn_cpack *)user;
    const pfvm__nn_2d *d = cp->d;
    const __m256i lane0 = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), lane1 = _mm256_setr_epi32(8, 9, 10, 11, 12, 13, 14, 15);
    int32_t seg_oh[PFVM_LA_NB], seg_iw[PFVM_LA_NB], seg_at[PFVM_LA_NB], seg_len[PFVM_LA_NB];
    int32_t nseg, p, c, kh, kw, plane = d->H * d->W;
    nseg = pfvm__nn_pack_segs(d, j0, nr, seg_oh, seg_iw, seg_at, seg_len);
    pfvm__nn_tap_first(d, p0, &c, &kh, &kw);
    for (p = 0; p < (int32_t)kc; p++) {
        const float *xc = cp->x + (int64_t)c * plane;
        __m256 lo = _mm256_setzero_ps(), hi = _mm256_setzero_ps();
        int32_t s;
        for (s = 0; s < nseg; s++) {
            int32_t ih = seg_oh[s] + kh * d->DH, iw = seg_iw[s] + kw * d->DW, at = seg_at[s];
            /* lane j reads input column iw + j - at: lanes [a, b) are in the segment and the row */
            int32_t a = at > at - iw ? at : at - iw, b = at + seg_len[s] < at - iw + d->W ? at + seg_len[s] : at - iw + d->W;
            const float *base;
            __m256i m0, m1, va, vb;
            if (ih < 0 || ih >= d->H || a >= b)
                continue;
            base = xc + ih * d->W + iw - at;
            if (a == 0 && b == 16) {
                lo = _mm256_loadu_ps(base);
                hi = _mm256_loadu_ps(base + 8);
                continue;
            }
            va = _mm256_set1_epi32(a - 1);
            vb = _mm256_set1_epi32(b);
            m0 = _mm256_and_si256(_mm256_cmpgt_epi32(lane0, va), _mm256_cmpgt_epi32(vb, lane0));
            m1 = _mm256_and_si256(_mm256_cmpgt_epi32(lane1, va), _mm256_cmpgt_epi32(vb, lane1));
            if (a < 8)
                lo = _mm256_or_ps(lo, _mm256_maskload_ps(base, m0));
            if (b > 8)
                hi = _mm256_or_ps(hi, _mm256_maskload_ps(base + 8, m1));
        }
        _mm256_storeu_ps(dst + p * PFVM_LA_NB, lo);
        _mm256_storeu_ps(dst + p * PFVM_LA_NB + 8, hi);
        pfvm__nn_tap_next(d, &c, &kh, &kw);
    }
}

/* pfvm__nn_pack_conv2d at stride 2 with AVX2 (the strided copies were
 * scalar: a 3x3 stride-2 stem's packing cost half its product). A segment
 * wholly inside its input row takes the even columns of two 15-float
 * windows (four loads, two shuffles, two permutes: nothing read past the
 * last column the window needs); a segment that meets the padding or the
 * row's end copies the lanes inside the row one by one into a zeroed row
 * (a masked gather was slower on Zen 4). */
__attribute__((target("avx2"))) static __m256 pfvm__nn_even8_avx2(const float *p)
{
    __m256 ev = _mm256_shuffle_ps(_mm256_loadu_ps(p), _mm256_loadu_ps(p + 7), 0xD8); /* x0 x2 x8 x10 | x4 x6 x12 x14 */
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(ev), 0xD8));
}

__attribute__((target("avx2"))) static void pfvm__nn_pack_conv2d_s2_avx2(void *user, int64_t p0, int64_t kc, int64_t j0,
                                                                          int64_t nr, float *dst)
{
    const pfvm__nn_cpack *cp = (const pfvm__nn_cpack *)user;
    const pfvm__nn_2d *d = cp->d;
    int32_t seg_oh[PFVM_LA_NB], seg_iw[PFVM_LA_NB], seg_at[PFVM_LA_NB], seg_len[PFVM_LA_NB];
    int32_t nseg, p, c, kh, kw, plane = d->H * d->W;
    nseg = pfvm__nn_pack_segs(d, j0, nr, seg_oh, seg_iw, seg_at, seg_len);
    pfvm__nn_tap_first(d, p0, &c, &kh, &kw);
    for (p = 0; p < (int32_t)kc; p++) {
        const float *xc = cp->x + (int64_t)c * plane;
        float *row = dst + p * PFVM_LA_NB;
        int32_t s, j, whole = 0;
        if (nseg == 1 && seg_len[0] == 16) {
            int32_t ih = seg_oh[0] + kh * d->DH, iw = seg_iw[0] + kw * d->DW;
            whole = ih >= 0 && ih < d->H && iw >= 0 && iw + 30 < d->W;
            if (whole) {
                _mm256_storeu_ps(row, pfvm__nn_even8_avx2(xc + ih * d->W + iw));
                _mm256_storeu_ps(row + 8, pfvm__nn_even8_avx2(xc + ih * d->W + iw + 16));
            }
        }
        if (!whole) {
            _mm256_storeu_ps(row, _mm256_setzero_ps());
            _mm256_storeu_ps(row + 8, _mm256_setzero_ps());
            for (s = 0; s < nseg; s++) {
                int32_t ih = seg_oh[s] + kh * d->DH, iw = seg_iw[s] + kw * d->DW, at = seg_at[s], len = seg_len[s];
                /* lane j reads input column iw + 2 (j - at): lanes [a, b) are in the segment and the row */
                int32_t a = iw >= 0 ? at : at + (1 - iw) / 2, b = iw < d->W ? at + (d->W - iw + 1) / 2 : at;
                const float *xr = xc + ih * d->W;
                a = a > at + len ? at + len : a;
                b = b > at + len ? at + len : b;
                if (ih < 0 || ih >= d->H)
                    continue;
                for (j = a; j < b; j++)
                    row[j] = xr[iw + 2 * (j - at)];
            }
        }
        pfvm__nn_tap_next(d, &c, &kh, &kw);
    }
}
#endif

/* The 2-D im2col packing for this geometry and CPU. */
static pfvm_la_pack_fn pfvm__nn_pack2d_fn(const pfvm__nn_2d *d)
{
#if defined(PFVM_DISPATCH_CLONES) && PFVM_LA_NB == 16
    if (d->SW == 1 && pfvm__nn_have_avx2())
        return pfvm__nn_pack_conv2d_avx2;
    if (d->SW == 2 && pfvm__nn_have_avx2())
        return pfvm__nn_pack_conv2d_s2_avx2;
#else
    (void)d;
#endif
    return pfvm__nn_pack_conv2d;
}
#endif

/* A 1x1 convolution with unit strides and no padding is a plain product. */
static int pfvm__nn_pointwise(const pfvm__nn_geom *g)
{
    int i;
    for (i = 0; i < PFVM__NN_SP; i++)
        if (g->w.k[i] != 1 || g->w.s[i] != 1 || g->w.pb[i] || g->w.pe[i])
            return 0;
    return 1;
}

#ifndef PFVM_CONV_NO_DEPTHWISE
/* Depthwise planes (one input channel per output channel): packing would
 * cost as much as the products, so each kernel position adds a shifted
 * input row to whole output rows. */
static void pfvm__nn_conv_depthwise(const pfvm__nn_geom *g, const float *x, const float *wt, float *y)
{
    const pfvm__nn_win *w = &g->w;
    int64_t k0, k1, k2, o0, o1, o2, a[PFVM__NN_SP], b[PFVM__NN_SP], off[PFVM__NN_SP];
    for (k0 = 0; k0 < w->k[0]; k0++)
        for (k1 = 0; k1 < w->k[1]; k1++)
            for (k2 = 0; k2 < w->k[2]; k2++) {
                float wv = wt[(k0 * w->k[1] + k1) * w->k[2] + k2];
                int i;
                off[0] = k0 * w->d[0] - w->pb[0];
                off[1] = k1 * w->d[1] - w->pb[1];
                off[2] = k2 * w->d[2] - w->pb[2];
                for (i = 0; i < PFVM__NN_SP; i++)
                    pfvm__nn_valid(g->out_sp[i], w->s[i], off[i], g->in_sp[i], &a[i], &b[i]);
                for (o0 = a[0]; o0 < b[0]; o0++)
                    for (o1 = a[1]; o1 < b[1]; o1++) {
                        const float *row =
                            x + ((o0 * w->s[0] + off[0]) * g->in_sp[1] + o1 * w->s[1] + off[1]) * g->in_sp[2] + off[2];
                        float *orow = y + (o0 * g->out_sp[1] + o1) * g->out_sp[2];
                        if (w->s[2] == 1)
                            for (o2 = a[2]; o2 < b[2]; o2++)
                                orow[o2] += wv * row[o2];
                        else
                            for (o2 = a[2]; o2 < b[2]; o2++)
                                orow[o2] += wv * row[o2 * w->s[2]];
                    }
            }
}
#endif

/* ---- depthwise 2-D convolution -------------------------------------------------------- */

/* One output row of a depthwise plane at a time, each output accumulated
 * in registers over the kernel positions in order (the bias first, then
 * row by row, position by position, skipping those in the padding): the
 * same additions, in the same order, in every path below, so columns at
 * the border, in the interior and in the tail round alike, and the
 * firmware build (the same C) gives the same bits. Index math is 32-bit
 * (pfvm__nn_2d_fits checks the plane). */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

#ifndef PFVM_CONV_NO_DEPTHWISE
/* Interior output columns [0, n): every kernel column inside the row. x
 * points to the first valid kernel row's input at output column 0, w to
 * that row's weights; nkh rows of rs floats apart. Blocks of B columns
 * (S, the column stride, and B are constants in the callers, so the
 * loads vectorize): 16, then one block ending at n (it recomputes some
 * columns, to the same bits); rows shorter than 16 take blocks of 8, and
 * shorter than 8 one column at a time. */
#define PFVM__NN_DW_BLK(S, B, o0)                                                               \
    {                                                                                           \
        float acc[B];                                                                           \
        for (j = 0; j < (B); j++)                                                               \
            acc[j] = b;                                                                         \
        for (r = 0; r < nkh; r++)                                                               \
            for (t = 0; t < kw; t++) {                                                          \
                const float wv = w[r * kw + t], *p = x + r * rs + t * dw + (o0) * (S);          \
                for (j = 0; j < (B); j++)                                                       \
                    acc[j] += wv * p[j * (S)];                                                  \
            }                                                                                   \
        for (j = 0; j < (B); j++)                                                               \
            y[(o0) + j] = acc[j];                                                               \
    }
#define PFVM__NN_DW_BODY(S)                                                                     \
    {                                                                                           \
        int32_t o, j, r, t;                                                                     \
        if (n >= 16) {                                                                          \
            for (o = 0; o + 16 <= n; o += 16)                                                   \
                PFVM__NN_DW_BLK(S, 16, o)                                                       \
            if (o < n)                                                                          \
                PFVM__NN_DW_BLK(S, 16, n - 16)                                                  \
        } else if (n >= 8) {                                                                    \
            PFVM__NN_DW_BLK(S, 8, 0)                                                            \
            PFVM__NN_DW_BLK(S, 8, n - 8)                                                        \
        } else {                                                                                \
            for (o = 0; o < n; o++)                                                             \
                PFVM__NN_DW_BLK(S, 1, o)                                                        \
        }                                                                                       \
    }

PFVM_DISPATCH static void pfvm__nn_dw_s1(float *PFVM_RESTRICT y, const float *PFVM_RESTRICT x, const float *w,
                                         int32_t nkh, int32_t rs, int32_t kw, int32_t dw, float b, int32_t n)
PFVM__NN_DW_BODY(1)

static void pfvm__nn_dw_s2(float *PFVM_RESTRICT y, const float *PFVM_RESTRICT x, const float *w, int32_t nkh,
                           int32_t rs, int32_t kw, int32_t dw, float b, int32_t n)
PFVM__NN_DW_BODY(2)

static void pfvm__nn_dw_sn(float *PFVM_RESTRICT y, const float *PFVM_RESTRICT x, const float *w, int32_t nkh,
                           int32_t rs, int32_t kw, int32_t dw, float b, int32_t n, int32_t sw)
PFVM__NN_DW_BODY(sw)

#if defined(PFVM_DISPATCH_CLONES) && !defined(PFVM_CONV_NO_DEPTHWISE)
/* Stride 2 with AVX2 (compilers leave the strided loads scalar): the even
 * columns of 15 floats from two loads and two shuffles, nothing read past
 * the last column the window needs; multiplies and adds rounded apart, as
 * in the portable body, so the bits are the same. */
__attribute__((target("avx2"))) static void pfvm__nn_dw_s2_avx2(float *y, const float *x, const float *w, int32_t nkh,
                                                                 int32_t rs, int32_t kw, int32_t dw, float b, int32_t n)
{
    int32_t o = 0, r, t;
    if (n < 8) {
        pfvm__nn_dw_s2(y, x, w, nkh, rs, kw, dw, b, n);
        return;
    }
    for (;;) {
        __m256 acc = _mm256_set1_ps(b);
        for (r = 0; r < nkh; r++)
            for (t = 0; t < kw; t++) {
                const float *p = x + r * rs + t * dw + 2 * o;
                __m256 lo = _mm256_loadu_ps(p), hi = _mm256_loadu_ps(p + 7);
                __m256 ev = _mm256_shuffle_ps(lo, hi, 0xD8); /* x0 x2 x8 x10 | x4 x6 x12 x14 */
                ev = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(ev), 0xD8));
                acc = _mm256_add_ps(acc, _mm256_mul_ps(_mm256_set1_ps(w[r * kw + t]), ev));
            }
        _mm256_storeu_ps(y + o, acc);
        if (o + 8 == n)
            return;
        o = o + 16 <= n ? o + 8 : n - 8;
    }
}
#endif
#endif

#ifdef PFVM_DISPATCH_CLONES
static int pfvm__nn_have_avx2(void)
{
    static int have = -1;
    if (have < 0) {
        __builtin_cpu_init();
        have = __builtin_cpu_supports("avx2");
    }
    return have;
}
#endif

#ifndef PFVM_CONV_NO_DEPTHWISE
#ifdef PFVM_DISPATCH_CLONES
#define PFVM__NN_DW_S2 (pfvm__nn_have_avx2() ? pfvm__nn_dw_s2_avx2 : pfvm__nn_dw_s2)
#else
#define PFVM__NN_DW_S2 pfvm__nn_dw_s2
#endif

/* One output column at the border: kernel columns in the padding are
 * skipped. */
static float pfvm__nn_dw_edge(const pfvm__nn_2d *d, const float *x, const float *w, int32_t kha, int32_t khb,
                              int32_t ih0, int32_t ow, float b)
{
    int32_t iw0 = ow * d->SW - d->PL, r, t;
    float s = b;
    for (r = kha; r < khb; r++) {
        const float *row = x + (ih0 + r * d->DH) * d->W;
        for (t = 0; t < d->KW; t++) {
            int32_t iw = iw0 + t * d->DW;
            if (iw >= 0 && iw < d->W)
                s += w[r * d->KW + t] * row[iw];
        }
    }
    return s;
}
#endif

/* First index i in [0, n) with i*s + off >= lo, and one past the last with
 * i*s + off < hi (32-bit pfvm__nn_valid). */
static void pfvm__nn_dw_range(int32_t n, int32_t s, int32_t off, int32_t lo, int32_t hi, int32_t *a, int32_t *b)
{
    int64_t x, z;
    if (s < (1 << 29) && off > -(1 << 29) && off < (1 << 29) && lo > -(1 << 29) && lo < (1 << 29) && hi > -(1 << 29) &&
        hi < (1 << 29)) { /* no overflow: 32-bit divisions (one instruction on a Cortex-M4, a library call in 64 bits) */
        int32_t x32 = lo - off > 0 ? (lo - off + s - 1) / s : 0, z32 = hi - off > 0 ? (hi - off + s - 1) / s : 0;
        *a = x32 > n ? n : x32;
        *b = z32 > n ? n : z32 < *a ? *a : z32;
        return;
    }
    /* 64-bit: a stride near INT32_MAX overflows the rounding-up sum */
    x = (int64_t)lo - off > 0 ? ((int64_t)lo - off + s - 1) / s : 0;
    z = (int64_t)hi - off > 0 ? ((int64_t)hi - off + s - 1) / s : 0;
    *a = x > n ? n : (int32_t)x;
    *b = z > n ? n : z < *a ? *a : (int32_t)z;
}

/* The output columns [*ia, *ib) whose whole window lies inside the row. */
static void pfvm__nn_inner_cols(const pfvm__nn_2d *d, int32_t *ia, int32_t *ib)
{
    int32_t a1, b1;
    pfvm__nn_dw_range(d->OW, d->SW, -d->PL, 0, d->W, ia, ib);
    pfvm__nn_dw_range(d->OW, d->SW, (d->KW - 1) * d->DW - d->PL, 0, d->W, &a1, &b1);
    *ia = *ia > a1 ? *ia : a1;
    *ib = *ib < b1 ? *ib : b1;
    *ib = *ib < *ia ? *ia : *ib;
}

#ifndef PFVM_CONV_NO_DEPTHWISE
#ifdef PFVM_DISPATCH_CLONES
/* Lanes l < 8 whose input column iw0 + l * s lies in [0, W), as a mask. */
__attribute__((target("avx2"))) static __m256i pfvm__nn_dw_lanes(int32_t iw0, int32_t s, int32_t W)
{
    __m256i iw = _mm256_add_epi32(_mm256_set1_epi32(iw0), _mm256_setr_epi32(0, s, 2 * s, 3 * s, 4 * s, 5 * s, 6 * s, 7 * s));
    __m256i ge0 = _mm256_cmpgt_epi32(iw, _mm256_set1_epi32(-1)), ltw = _mm256_cmpgt_epi32(_mm256_set1_epi32(W), iw);
    return _mm256_and_si256(ge0, ltw);
}

/* The interior of a stride-1 row (n >= 8 columns, pfvm__nn_dw_s1's
 * arguments) in blocks of 32 columns: four independent sums in flight
 * hide the adds' latency; then blocks of 8, the last ending at n. Each
 * output adds its kernel positions in the same order, rounded apart. */
/* The results clamped as Clip does, when cl (pfvm__kctx_services.clamp):
 * max(lo, x) and min(hi, x) keep a NaN x, as Clip's comparisons do; in
 * Relu's form (cl[2]) max(x, lo) gives lo for a NaN x and for -0 (maxps
 * returns its second operand then). */
__attribute__((target("avx2"), always_inline)) static inline __m256 pfvm__nn_dw_clamp(__m256 a, const float *cl)
{
    if (!cl)
        return a;
    a = cl[2] != 0.0f ? _mm256_max_ps(a, _mm256_set1_ps(cl[0])) : _mm256_max_ps(_mm256_set1_ps(cl[0]), a);
    return _mm256_min_ps(_mm256_set1_ps(cl[1]), a);
}

__attribute__((target("avx2"))) static void pfvm__nn_dw_s1_avx2(float *y, const float *x, const float *w, int32_t nkh,
                                                                int32_t rs, int32_t kw, int32_t dw, float b, int32_t n,
                                                                const float *cl)
{
    int32_t o = 0, r, t;
    for (; o + 32 <= n; o += 32) {
        __m256 a0 = _mm256_set1_ps(b), a1 = a0, a2 = a0, a3 = a0;
        for (r = 0; r < nkh; r++)
            for (t = 0; t < kw; t++) {
                const float *p = x + r * rs + t * dw + o;
                __m256 wv = _mm256_set1_ps(w[r * kw + t]);
                a0 = _mm256_add_ps(a0, _mm256_mul_ps(wv, _mm256_loadu_ps(p)));
                a1 = _mm256_add_ps(a1, _mm256_mul_ps(wv, _mm256_loadu_ps(p + 8)));
                a2 = _mm256_add_ps(a2, _mm256_mul_ps(wv, _mm256_loadu_ps(p + 16)));
                a3 = _mm256_add_ps(a3, _mm256_mul_ps(wv, _mm256_loadu_ps(p + 24)));
            }
        _mm256_storeu_ps(y + o, pfvm__nn_dw_clamp(a0, cl));
        _mm256_storeu_ps(y + o + 8, pfvm__nn_dw_clamp(a1, cl));
        _mm256_storeu_ps(y + o + 16, pfvm__nn_dw_clamp(a2, cl));
        _mm256_storeu_ps(y + o + 24, pfvm__nn_dw_clamp(a3, cl));
    }
    while (o < n) {
        int32_t oo = o + 8 <= n ? o : n - 8;
        __m256 acc = _mm256_set1_ps(b);
        for (r = 0; r < nkh; r++)
            for (t = 0; t < kw; t++)
                acc = _mm256_add_ps(acc, _mm256_mul_ps(_mm256_set1_ps(w[r * kw + t]),
                                                       _mm256_loadu_ps(x + r * rs + t * dw + oo)));
        _mm256_storeu_ps(y + oo, pfvm__nn_dw_clamp(acc, cl));
        o = oo + 8;
    }
}

/* Vector rows take kernels up to this wide, and up to this many border
 * blocks of 8 columns per row (their masks are made once per plane). */
#define PFVM__NN_DW_KWV 8
#define PFVM__NN_DW_NBV 4

/* The masks of a border block at output column o, per kernel column t:
 * [3t] and [3t + 1] the input lanes to load (stride 2: two loads, 7
 * columns apart), [3t + 2] the output lanes whose input column t is
 * inside the row. */
__attribute__((target("avx2"))) static unsigned pfvm__nn_dw_masks(const pfvm__nn_2d *d, int32_t o, int32_t n, __m256i *mk)
{
    int32_t t;
    unsigned full = 0;
    for (t = 0; t < d->KW; t++) {
        int32_t iw0 = o * d->SW - d->PL + t * d->DW;
        mk[3 * t] = pfvm__nn_dw_lanes(iw0, 1, d->W);
        mk[3 * t + 1] = pfvm__nn_dw_lanes(iw0 + 7, 1, d->W);
        mk[3 * t + 2] = pfvm__nn_dw_lanes(iw0, d->SW, d->W);
        /* bit t: kernel column t's input lies in the row on every lane (n of 8 stored: every
         * lane is still loaded, so only when the loads stay inside the row too) */
        if (n == 8 && _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_and_si256(
                          _mm256_and_si256(mk[3 * t], d->SW == 1 ? mk[3 * t] : mk[3 * t + 1]), mk[3 * t + 2]))) == 0xFF)
            full |= 1u << t;
    }
    return full;
}

/* The even columns of the 15 floats at p, as pfvm__nn_dw_s2_avx2 loads them. */
__attribute__((target("avx2"), always_inline)) static inline __m256 pfvm__nn_dw_even(const float *p)
{
    __m256 ev = _mm256_shuffle_ps(_mm256_loadu_ps(p), _mm256_loadu_ps(p + 7), 0xD8);
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(ev), 0xD8));
}

/* Four planes at once (their input, weights, bias and output), so that
 * blocks narrower than the interior's blocks of 32 columns (the borders,
 * the interior's last columns, whole rows of small planes, every stride-2
 * row) keep four independent sums in flight instead of one. */
typedef struct pfvm__nn_dw4 {
    const float *x[4], *w[4];
    float b[4];
    float *y[4];
    const float *cl; /* NULL, or the clamp of the results (pfvm__kctx_services.clamp) */
} pfvm__nn_dw4;

/* Output columns [o, o + 8) of row oh of the four planes (kernel rows
 * [kha, khb), top input row ih0): with masks mk (pfvm__nn_dw_masks),
 * loads and additions only where the input lies in the row, each output
 * taking the same additions in the same order as pfvm__nn_dw_edge (the
 * same bits); without (NULL), the whole window inside the row,
 * as the interior loops. n < 8: only n columns are stored. S: the column
 * stride, 1 or 2 (a constant in each caller). */
__attribute__((target("avx2"), always_inline)) static inline void
pfvm__nn_dw_vec4_body(const pfvm__nn_2d *d, const pfvm__nn_dw4 *q, int32_t kha, int32_t khb, int32_t ih0, int32_t oh,
                      int32_t o, int32_t n, const __m256i *mk, unsigned full, int32_t S, int masked)
{
    int32_t r, t, kw = d->KW, dw = d->DW, yo = oh * d->OW + o;
    const float *x0 = q->x[0], *x1 = q->x[1], *x2 = q->x[2], *x3 = q->x[3];
    const float *w0 = q->w[0] + kha * kw, *w1 = q->w[1] + kha * kw, *w2 = q->w[2] + kha * kw, *w3 = q->w[3] + kha * kw;
    ptrdiff_t off = (ptrdiff_t)(ih0 + kha * d->DH) * d->W + o * S - d->PL, rs = (ptrdiff_t)d->DH * d->W;
    __m256 a0 = _mm256_set1_ps(q->b[0]), a1 = _mm256_set1_ps(q->b[1]), a2 = _mm256_set1_ps(q->b[2]),
           a3 = _mm256_set1_ps(q->b[3]);
    for (r = kha; r < khb; r++, off += rs, w0 += kw, w1 += kw, w2 += kw, w3 += kw) {
        ptrdiff_t p = off;
        for (t = 0; t < kw; t++, p += dw) {
            __m256 v0, v1, v2, v3;
            if (masked && full >> t & 1) {
                /* the whole window column inside the row: the interior's loads, every lane adds */
                if (S == 1) {
                    v0 = _mm256_loadu_ps(x0 + p);
                    v1 = _mm256_loadu_ps(x1 + p);
                    v2 = _mm256_loadu_ps(x2 + p);
                    v3 = _mm256_loadu_ps(x3 + p);
                } else {
                    v0 = pfvm__nn_dw_even(x0 + p);
                    v1 = pfvm__nn_dw_even(x1 + p);
                    v2 = pfvm__nn_dw_even(x2 + p);
                    v3 = pfvm__nn_dw_even(x3 + p);
                }
                a0 = _mm256_add_ps(a0, _mm256_mul_ps(_mm256_set1_ps(w0[t]), v0));
                a1 = _mm256_add_ps(a1, _mm256_mul_ps(_mm256_set1_ps(w1[t]), v1));
                a2 = _mm256_add_ps(a2, _mm256_mul_ps(_mm256_set1_ps(w2[t]), v2));
                a3 = _mm256_add_ps(a3, _mm256_mul_ps(_mm256_set1_ps(w3[t]), v3));
                continue;
            }
            if (S == 1 && masked) {
                __m256i m = mk[3 * t];
                v0 = _mm256_maskload_ps(x0 + p, m);
                v1 = _mm256_maskload_ps(x1 + p, m);
                v2 = _mm256_maskload_ps(x2 + p, m);
                v3 = _mm256_maskload_ps(x3 + p, m);
            } else if (S == 1) {
                v0 = _mm256_loadu_ps(x0 + p);
                v1 = _mm256_loadu_ps(x1 + p);
                v2 = _mm256_loadu_ps(x2 + p);
                v3 = _mm256_loadu_ps(x3 + p);
            } else {
                /* the even columns of 15 floats, as pfvm__nn_dw_s2_avx2 */
#define PFVM__NN_DW_EV(lo, hi)                                                                                      \
    _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps((lo), (hi), 0xD8)), 0xD8))
#define PFVM__NN_DW_LD(xi)                                                                                          \
    (masked ? PFVM__NN_DW_EV(_mm256_maskload_ps((xi) + p, mk[3 * t]), _mm256_maskload_ps((xi) + p + 7, mk[3 * t + 1])) \
            : PFVM__NN_DW_EV(_mm256_loadu_ps((xi) + p), _mm256_loadu_ps((xi) + p + 7)))
                v0 = PFVM__NN_DW_LD(x0);
                v1 = PFVM__NN_DW_LD(x1);
                v2 = PFVM__NN_DW_LD(x2);
                v3 = PFVM__NN_DW_LD(x3);
#undef PFVM__NN_DW_LD
#undef PFVM__NN_DW_EV
            }
            v0 = _mm256_add_ps(a0, _mm256_mul_ps(_mm256_set1_ps(w0[t]), v0));
            v1 = _mm256_add_ps(a1, _mm256_mul_ps(_mm256_set1_ps(w1[t]), v1));
            v2 = _mm256_add_ps(a2, _mm256_mul_ps(_mm256_set1_ps(w2[t]), v2));
            v3 = _mm256_add_ps(a3, _mm256_mul_ps(_mm256_set1_ps(w3[t]), v3));
            if (masked) {
                __m256 m = _mm256_castsi256_ps(mk[3 * t + 2]);
                a0 = _mm256_blendv_ps(a0, v0, m);
                a1 = _mm256_blendv_ps(a1, v1, m);
                a2 = _mm256_blendv_ps(a2, v2, m);
                a3 = _mm256_blendv_ps(a3, v3, m);
            } else {
                a0 = v0;
                a1 = v1;
                a2 = v2;
                a3 = v3;
            }
        }
    }
    a0 = pfvm__nn_dw_clamp(a0, q->cl);
    a1 = pfvm__nn_dw_clamp(a1, q->cl);
    a2 = pfvm__nn_dw_clamp(a2, q->cl);
    a3 = pfvm__nn_dw_clamp(a3, q->cl);
    if (n < 8) {
        __m256i keep = pfvm__nn_dw_lanes(0, 1, n);
        _mm256_maskstore_ps(q->y[0] + yo, keep, a0);
        _mm256_maskstore_ps(q->y[1] + yo, keep, a1);
        _mm256_maskstore_ps(q->y[2] + yo, keep, a2);
        _mm256_maskstore_ps(q->y[3] + yo, keep, a3);
    } else {
        _mm256_storeu_ps(q->y[0] + yo, a0);
        _mm256_storeu_ps(q->y[1] + yo, a1);
        _mm256_storeu_ps(q->y[2] + yo, a2);
        _mm256_storeu_ps(q->y[3] + yo, a3);
    }
}

/* The four variants: stride 1 or 2, masked (mk) or the interior's. */
#define PFVM__NN_DW_VEC4(name, S, masked)                                                                           \
    __attribute__((target("avx2"))) static void name(const pfvm__nn_2d *d, const pfvm__nn_dw4 *q, int32_t kha,     \
                                                     int32_t khb, int32_t ih0, int32_t oh, int32_t o, int32_t n,   \
                                                     const __m256i *mk, unsigned full)                             \
    {                                                                                                               \
        pfvm__nn_dw_vec4_body(d, q, kha, khb, ih0, oh, o, n, mk, full, S, masked);                                  \
    }
PFVM__NN_DW_VEC4(pfvm__nn_dw_vec4_s1m, 1, 1)
PFVM__NN_DW_VEC4(pfvm__nn_dw_vec4_s1u, 1, 0)
PFVM__NN_DW_VEC4(pfvm__nn_dw_vec4_s2m, 2, 1)
PFVM__NN_DW_VEC4(pfvm__nn_dw_vec4_s2u, 2, 0)
#undef PFVM__NN_DW_VEC4

/* Four planes (pfvm__nn_dw4) row by row: the border columns in masked
 * blocks of 8 (the last ending at OW; columns computed twice come out the
 * same), and the interior of a stride-1 row in each plane's blocks of 32
 * columns first, when it holds one. Returns 0, computing nothing, past
 * PFVM__NN_DW_KWV kernel columns, PFVM__NN_DW_NBV blocks or strides other
 * than 1 and 2 (the portable loops then run). The one-plane loops use it
 * for every plane: the last four repeat the last plane. */
__attribute__((target("avx2"))) static int pfvm__nn_dw_planes4_avx2(const pfvm__nn_2d *d, const pfvm__nn_dw4 *q, int32_t ia,
                                                                    int32_t ib)
{
    __m256i mk[PFVM__NN_DW_NBV][3 * PFVM__NN_DW_KWV];
    /* rows of up to NBV blocks all in masked blocks (kernel columns inside the row load
     * unmasked there): fewer columns computed twice than around an interior */
    int32_t at[PFVM__NN_DW_NBV], nb = 0, o, oh, i, last = d->OW - 8,
                                 inner = ib - ia >= 16 && d->OW > 8 * PFVM__NN_DW_NBV;
    int32_t n = d->OW < 8 ? d->OW : 8, wide = d->SW == 1 && ib - ia >= 32 ? ia + (ib - ia) / 32 * 32 : ia;
    void (*vm)(const pfvm__nn_2d *, const pfvm__nn_dw4 *, int32_t, int32_t, int32_t, int32_t, int32_t, int32_t,
               const __m256i *, unsigned) = d->SW == 1 ? pfvm__nn_dw_vec4_s1m : pfvm__nn_dw_vec4_s2m;
    void (*vu)(const pfvm__nn_2d *, const pfvm__nn_dw4 *, int32_t, int32_t, int32_t, int32_t, int32_t, int32_t,
               const __m256i *, unsigned) = d->SW == 1 ? pfvm__nn_dw_vec4_s1u : pfvm__nn_dw_vec4_s2u;
    unsigned full[PFVM__NN_DW_NBV];
    if (d->KW > PFVM__NN_DW_KWV || (d->SW != 1 && d->SW != 2) || d->OW < 1)
        return 0;
    if (d->OW < 8)
        at[nb++] = 0;
    else
        for (o = 0; o < d->OW; o += 8) {
            int32_t s = o < last ? o : last;
            if (inner && s >= ia && s + 8 <= ib)
                continue; /* the unmasked loops' */
            if (nb == PFVM__NN_DW_NBV)
                return 0;
            at[nb++] = s;
        }
    for (o = 0; o < nb; o++)
        full[o] = pfvm__nn_dw_masks(d, at[o], n, mk[o]);
    for (oh = 0; oh < d->OH; oh++) {
        int32_t ih0 = oh * d->SH - d->PT, kha, khb;
        pfvm__nn_dw_range(d->KH, d->DH, ih0, 0, d->H, &kha, &khb);
        for (o = 0; o < nb; o++)
            vm(d, q, kha, khb, ih0, oh, at[o], n, mk[o], full[o]);
        if (!inner)
            continue;
        for (i = 0; i < 4 && wide > ia; i++) {
            const float *xr = q->x[i] + (ih0 + kha * d->DH) * d->W + ia - d->PL;
            pfvm__nn_dw_s1_avx2(q->y[i] + oh * d->OW + ia, xr, q->w[i] + kha * d->KW, khb - kha, d->DH * d->W, d->KW,
                                d->DW, q->b[i], wide - ia, q->cl);
        }
        for (o = wide; o < ib; o += 8)
            vu(d, q, kha, khb, ih0, oh, o + 8 <= ib ? o : ib - 8, 8, NULL, 0);
    }
    return 1;
}

#ifdef PFVM_AVX512_KERNELS
/* AVX-512: the four planes of pfvm__nn_dw4 in blocks of 16 output columns,
 * every block through one loop: masked loads (zeros where the input column
 * is in the padding) and masked additions (a lane adds only where its
 * input column lies in the row), so each output takes the additions of
 * pfvm__nn_dw_edge in the same order, multiplied and added apart: the
 * bits of the AVX2 and portable loops. A row's blocks start at 0, 16, ...,
 * the last ending at OW (columns computed twice come out the same); rows
 * narrower than 16 store OW lanes. */
#define PFVM__NN_DW16_NB 16 /* blocks of 16 columns per row, at most (wider rows: the AVX2 loops) */

/* Lanes [lo, hi) of 16, as a mask. */
static __mmask16 pfvm__nn_dw_m16(int64_t lo, int64_t hi)
{
    lo = lo < 0 ? 0 : lo;
    hi = hi > 16 ? 16 : hi;
    return hi <= lo ? (__mmask16)0 : (__mmask16)(((1u << hi) - 1u) & ~((1u << lo) - 1u));
}

/* The masks of the block at output column o, per kernel column t: [3t]
 * and [3t + 1] the input lanes to load at its first input column and 16
 * columns on (stride 2 reads 32), [3t + 2] the output lanes whose input
 * column lies in the row. */
static void pfvm__nn_dw16_masks(const pfvm__nn_2d *d, int32_t o, __mmask16 *mk)
{
    int32_t t;
    for (t = 0; t < d->KW; t++) {
        int64_t iw0 = (int64_t)o * d->SW - d->PL + (int64_t)t * d->DW;
        mk[3 * t] = pfvm__nn_dw_m16(-iw0, d->W - iw0);
        mk[3 * t + 1] = pfvm__nn_dw_m16(-iw0 - 16, d->W - iw0 - 16);
        mk[3 * t + 2] = d->SW == 1 ? mk[3 * t] : pfvm__nn_dw_m16(pfvm__nn_cdiv(-iw0, 2), pfvm__nn_cdiv(d->W - iw0, 2));
    }
}

/* pfvm__nn_dw_clamp's operand orders, 16 lanes. */
__attribute__((target("avx512f"), always_inline)) static inline __m512 pfvm__nn_dw16_clamp(__m512 a, const float *cl)
{
    if (!cl)
        return a;
    a = cl[2] != 0.0f ? _mm512_max_ps(a, _mm512_set1_ps(cl[0])) : _mm512_max_ps(_mm512_set1_ps(cl[0]), a);
    return _mm512_min_ps(_mm512_set1_ps(cl[1]), a);
}

/* 16 input columns at p, every S-th (S 1 or 2), zeros outside mk's lanes. */
__attribute__((target("avx512f"), always_inline)) static inline __m512 pfvm__nn_dw16_ld(const float *p, const __mmask16 *mk,
                                                                                        int32_t S, __m512i ev)
{
    if (S == 1)
        return _mm512_maskz_loadu_ps(mk[0], p);
    return _mm512_permutex2var_ps(_mm512_maskz_loadu_ps(mk[0], p), ev, _mm512_maskz_loadu_ps(mk[1], p + 16));
}

/* Output columns [o, o + 16) of row oh of the four planes (kernel rows
 * [kha, khb), top input row ih0; lanes `store` stored), masks mk
 * (pfvm__nn_dw16_masks). S: the column stride, a constant in each caller. */
__attribute__((target("avx512f"), always_inline)) static inline void
pfvm__nn_dw16_body(const pfvm__nn_2d *d, const pfvm__nn_dw4 *q, int32_t kha, int32_t khb, int32_t ih0, int32_t oh,
                   int32_t o, __mmask16 store, const __mmask16 *mk, int32_t S)
{
    int32_t r, t, kw = d->KW, dw = d->DW;
    ptrdiff_t yo = (ptrdiff_t)oh * d->OW + o;
    const float *x0 = q->x[0], *x1 = q->x[1], *x2 = q->x[2], *x3 = q->x[3];
    const float *w0 = q->w[0] + kha * kw, *w1 = q->w[1] + kha * kw, *w2 = q->w[2] + kha * kw, *w3 = q->w[3] + kha * kw;
    ptrdiff_t off = (ptrdiff_t)(ih0 + kha * d->DH) * d->W + (ptrdiff_t)o * S - d->PL, rs = (ptrdiff_t)d->DH * d->W;
    const __m512i ev = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    __m512 a0 = _mm512_set1_ps(q->b[0]), a1 = _mm512_set1_ps(q->b[1]), a2 = _mm512_set1_ps(q->b[2]),
           a3 = _mm512_set1_ps(q->b[3]);
    for (r = kha; r < khb; r++, off += rs, w0 += kw, w1 += kw, w2 += kw, w3 += kw) {
        ptrdiff_t p = off;
        for (t = 0; t < kw; t++, p += dw) {
            const __mmask16 *m = mk + 3 * t, in = m[2];
            a0 = _mm512_mask_add_ps(a0, in, a0, _mm512_mul_ps(_mm512_set1_ps(w0[t]), pfvm__nn_dw16_ld(x0 + p, m, S, ev)));
            a1 = _mm512_mask_add_ps(a1, in, a1, _mm512_mul_ps(_mm512_set1_ps(w1[t]), pfvm__nn_dw16_ld(x1 + p, m, S, ev)));
            a2 = _mm512_mask_add_ps(a2, in, a2, _mm512_mul_ps(_mm512_set1_ps(w2[t]), pfvm__nn_dw16_ld(x2 + p, m, S, ev)));
            a3 = _mm512_mask_add_ps(a3, in, a3, _mm512_mul_ps(_mm512_set1_ps(w3[t]), pfvm__nn_dw16_ld(x3 + p, m, S, ev)));
        }
    }
    _mm512_mask_storeu_ps(q->y[0] + yo, store, pfvm__nn_dw16_clamp(a0, q->cl));
    _mm512_mask_storeu_ps(q->y[1] + yo, store, pfvm__nn_dw16_clamp(a1, q->cl));
    _mm512_mask_storeu_ps(q->y[2] + yo, store, pfvm__nn_dw16_clamp(a2, q->cl));
    _mm512_mask_storeu_ps(q->y[3] + yo, store, pfvm__nn_dw16_clamp(a3, q->cl));
}

#define PFVM__NN_DW16(name, S)                                                                                      \
    __attribute__((target("avx512f"))) static void name(const pfvm__nn_2d *d, const pfvm__nn_dw4 *q, int32_t kha,   \
                                                        int32_t khb, int32_t ih0, int32_t oh, int32_t o,            \
                                                        __mmask16 store, const __mmask16 *mk)                       \
    {                                                                                                               \
        pfvm__nn_dw16_body(d, q, kha, khb, ih0, oh, o, store, mk, S);                                               \
    }
PFVM__NN_DW16(pfvm__nn_dw16_s1, 1)
PFVM__NN_DW16(pfvm__nn_dw16_s2, 2)
#undef PFVM__NN_DW16

/* Two output rows at once, oh and oh + 1 (no dilation of rows): each input
 * row of the two windows (KH + SH of them, top ih0) is loaded once and
 * multiplied into the sums of the rows whose window holds it, eight sums
 * in flight where the one-row body keeps four (the chains of additions,
 * not the loads, limited it: about 4.5 multiply-adds per cycle with the
 * planes in L2). Input rows outside the plane (the padding of the border
 * rows) are skipped, as the one-row body's kernel row range skips them.
 * Each output still takes its bias, then its kernel rows and columns in
 * order: the same bits. */
#define PFVM__NN_DW16_ACC(a, w, v) a = _mm512_mask_add_ps(a, in, a, _mm512_mul_ps(_mm512_set1_ps(w), v))
__attribute__((target("avx512f"), always_inline)) static inline void
pfvm__nn_dw16_body2(const pfvm__nn_2d *d, const pfvm__nn_dw4 *q, int32_t ih0, int32_t oh, int32_t o, __mmask16 store,
                    const __mmask16 *mk, int32_t S)
{
    int32_t i, t, kw = d->KW, dw = d->DW, kh = d->KH, sh = d->SH;
    ptrdiff_t yo = (ptrdiff_t)oh * d->OW + o, off = (ptrdiff_t)ih0 * d->W + (ptrdiff_t)o * S - d->PL;
    const float *x0 = q->x[0], *x1 = q->x[1], *x2 = q->x[2], *x3 = q->x[3];
    const float *w0 = q->w[0], *w1 = q->w[1], *w2 = q->w[2], *w3 = q->w[3]; /* (in registers, not reloaded) */
    const __m512i ev = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    __m512 a0 = _mm512_set1_ps(q->b[0]), a1 = _mm512_set1_ps(q->b[1]), a2 = _mm512_set1_ps(q->b[2]),
           a3 = _mm512_set1_ps(q->b[3]);
    __m512 c0 = a0, c1 = a1, c2 = a2, c3 = a3; /* row oh + 1 */
    for (i = 0; i < kh + sh; i++, off += d->W) {
        const int top = i < kh, low = i >= sh && i - sh < kh; /* kernel row i of oh, i - sh of oh + 1 */
        const ptrdiff_t wt = (ptrdiff_t)i * kw, wl = (ptrdiff_t)(i - sh) * kw;
        ptrdiff_t p = off;
        if (ih0 + i < 0 || ih0 + i >= d->H)
            continue; /* a padding row: no products (no address formed) */
        for (t = 0; t < kw; t++, p += dw) {
            const __mmask16 *m = mk + 3 * t, in = m[2];
            __m512 v0 = pfvm__nn_dw16_ld(x0 + p, m, S, ev), v1 = pfvm__nn_dw16_ld(x1 + p, m, S, ev);
            __m512 v2 = pfvm__nn_dw16_ld(x2 + p, m, S, ev), v3 = pfvm__nn_dw16_ld(x3 + p, m, S, ev);
            if (top) {
                PFVM__NN_DW16_ACC(a0, w0[wt + t], v0);
                PFVM__NN_DW16_ACC(a1, w1[wt + t], v1);
                PFVM__NN_DW16_ACC(a2, w2[wt + t], v2);
                PFVM__NN_DW16_ACC(a3, w3[wt + t], v3);
            }
            if (low) {
                PFVM__NN_DW16_ACC(c0, w0[wl + t], v0);
                PFVM__NN_DW16_ACC(c1, w1[wl + t], v1);
                PFVM__NN_DW16_ACC(c2, w2[wl + t], v2);
                PFVM__NN_DW16_ACC(c3, w3[wl + t], v3);
            }
        }
    }
    _mm512_mask_storeu_ps(q->y[0] + yo, store, pfvm__nn_dw16_clamp(a0, q->cl));
    _mm512_mask_storeu_ps(q->y[1] + yo, store, pfvm__nn_dw16_clamp(a1, q->cl));
    _mm512_mask_storeu_ps(q->y[2] + yo, store, pfvm__nn_dw16_clamp(a2, q->cl));
    _mm512_mask_storeu_ps(q->y[3] + yo, store, pfvm__nn_dw16_clamp(a3, q->cl));
    yo += d->OW;
    _mm512_mask_storeu_ps(q->y[0] + yo, store, pfvm__nn_dw16_clamp(c0, q->cl));
    _mm512_mask_storeu_ps(q->y[1] + yo, store, pfvm__nn_dw16_clamp(c1, q->cl));
    _mm512_mask_storeu_ps(q->y[2] + yo, store, pfvm__nn_dw16_clamp(c2, q->cl));
    _mm512_mask_storeu_ps(q->y[3] + yo, store, pfvm__nn_dw16_clamp(c3, q->cl));
}
#undef PFVM__NN_DW16_ACC

#define PFVM__NN_DW16X2(name, S)                                                                                    \
    __attribute__((target("avx512f"))) static void name(const pfvm__nn_2d *d, const pfvm__nn_dw4 *q, int32_t ih0,   \
                                                        int32_t oh, int32_t o, __mmask16 store, const __mmask16 *mk) \
    {                                                                                                               \
        pfvm__nn_dw16_body2(d, q, ih0, oh, o, store, mk, S);                                                        \
    }
PFVM__NN_DW16X2(pfvm__nn_dw16x2_s1, 1)
PFVM__NN_DW16X2(pfvm__nn_dw16x2_s2, 2)
#undef PFVM__NN_DW16X2

/* 1 where the blocks of 16 columns take this window: up to
 * PFVM__NN_DW_KWV kernel columns, PFVM__NN_DW16_NB blocks, strides 1
 * and 2. */
static int pfvm__nn_dw16_fits(const pfvm__nn_2d *d)
{
    return d->KW <= PFVM__NN_DW_KWV && (d->SW == 1 || d->SW == 2) && d->OW >= 1 &&
           (d->OW + 15) / 16 <= PFVM__NN_DW16_NB;
}

/* A row's blocks of 16 columns (a window that pfvm__nn_dw16_fits takes):
 * where each starts (the last ending at OW), its masks
 * (pfvm__nn_dw16_masks) and the lanes stored; made once a node, not per
 * four planes (a band of two rows of a 7 x 7 plane computes about as
 * long as its masks take). */
typedef struct pfvm__nn_dw16_plan {
    __mmask16 mk[PFVM__NN_DW16_NB][3 * PFVM__NN_DW_KWV];
    int32_t at[PFVM__NN_DW16_NB], nb;
    __mmask16 store;
} pfvm__nn_dw16_plan;

/* 0 where pfvm__nn_dw16_fits does not hold (nothing made). */
static int pfvm__nn_dw16_plan_make(const pfvm__nn_2d *d, pfvm__nn_dw16_plan *pl)
{
    int32_t o;
    if (!pfvm__nn_dw16_fits(d))
        return 0;
    pl->store = d->OW < 16 ? pfvm__nn_dw_m16(0, d->OW) : (__mmask16)0xFFFF;
    for (o = 0, pl->nb = 0; o < d->OW; o += 16, pl->nb++) {
        pl->at[pl->nb] = d->OW >= 16 && o + 16 > d->OW ? d->OW - 16 : o;
        pfvm__nn_dw16_masks(d, pl->at[pl->nb], pl->mk[pl->nb]);
    }
    return 1;
}

/* Four planes in blocks of 16 columns, two rows at a time where two
 * remain. */
static void pfvm__nn_dw16_rows(const pfvm__nn_2d *d, const pfvm__nn_dw4 *q, const pfvm__nn_dw16_plan *pl)
{
    int32_t o, oh;
    void (*fn)(const pfvm__nn_2d *, const pfvm__nn_dw4 *, int32_t, int32_t, int32_t, int32_t, int32_t, __mmask16,
               const __mmask16 *) = d->SW == 1 ? pfvm__nn_dw16_s1 : pfvm__nn_dw16_s2;
    void (*fn2)(const pfvm__nn_2d *, const pfvm__nn_dw4 *, int32_t, int32_t, int32_t, __mmask16, const __mmask16 *) =
        d->SW == 1 ? pfvm__nn_dw16x2_s1 : pfvm__nn_dw16x2_s2;
    for (oh = 0; oh < d->OH; oh++) {
        int32_t ih0 = oh * d->SH - d->PT, kha, khb;
        if (oh + 1 < d->OH && d->DH == 1) {
            /* rows oh and oh + 1 (border rows too: padding rows skipped) */
            for (o = 0; o < pl->nb; o++)
                fn2(d, q, ih0, oh, pl->at[o], pl->store, pl->mk[o]);
            oh++;
            continue;
        }
        pfvm__nn_dw_range(d->KH, d->DH, ih0, 0, d->H, &kha, &khb);
        for (o = 0; o < pl->nb; o++)
            fn(d, q, kha, khb, ih0, oh, pl->at[o], pl->store, pl->mk[o]);
    }
}
#endif
#endif

#if defined(PFVM__NN_DIRECT) && !defined(PFVM_CONV_NO_DEPTHWISE)
/* Depthwise planes on 32-bit Arm: the plane's rows copied with zeros in
 * the column padding (PFVM__NN_DWP_MAX floats on the stack, 1 KB), so that every
 * output column takes the same loop, four columns at a time in scalar
 * registers (the blocks above keep sixteen in memory at -Os). Adding
 * weight x 0 where the loops above skip a position gives their bits when
 * the weights are finite and the bias is not -0 (a sum that starts
 * elsewhere never becomes -0, and s + 0 = s): checked per plane. */
#ifndef PFVM__NN_DWP_MAX
#define PFVM__NN_DWP_MAX 256 /* a 49x10 keyword-spotting model's planes take 175 */
#endif
#define PFVM__NN_DWA4(name, S)                                                                                     \
    static void name(const float *x, const float *w, int32_t nkh, int32_t rs, int32_t kw, int32_t dw, float b,     \
                     float *y)                                                                                     \
    {                                                                                                              \
        float a0 = b, a1 = b, a2 = b, a3 = b;                                                                      \
        int32_t r, t;                                                                                              \
        for (r = 0; r < nkh; r++, x += rs, w += kw)                                                                \
            for (t = 0; t < kw; t++) {                                                                             \
                const float wv = w[t], *p = x + t * dw;                                                            \
                a0 += wv * p[0];                                                                                   \
                a1 += wv * p[S];                                                                                   \
                a2 += wv * p[2 * (S)];                                                                             \
                a3 += wv * p[3 * (S)];                                                                             \
            }                                                                                                      \
        y[0] = a0;                                                                                                 \
        y[1] = a1;                                                                                                 \
        y[2] = a2;                                                                                                 \
        y[3] = a3;                                                                                                 \
    }
PFVM__NN_DWA4(pfvm__nn_dwa4_s1, 1)
PFVM__NN_DWA4(pfvm__nn_dwa4_s2, 2)

static float pfvm__nn_dwa1(const float *x, const float *w, int32_t nkh, int32_t rs, int32_t kw, int32_t dw, float b)
{
    int32_t r, t;
    for (r = 0; r < nkh; r++, x += rs, w += kw)
        for (t = 0; t < kw; t++)
            b += w[t] * x[t * dw];
    return b;
}

/* 0 where it does not take the plane (the loops above then do). */
static int pfvm__nn_dw_plane_arm(const pfvm__nn_2d *d, const float *x, const float *w, float b, float *y)
{
    float buf[PFVM__NN_DWP_MAX];
    int32_t wp = (d->OW - 1) * d->SW + (d->KW - 1) * d->DW + 1, i, ih, oh, ow, lo, hi;
    if ((d->SW != 1 && d->SW != 2) || (int64_t)wp * d->H > PFVM__NN_DWP_MAX || (b == 0.0f && 1.0f / b < 0.0f))
        return 0;
    for (i = 0; i < d->KH * d->KW; i++)
        if (w[i] - w[i] != 0.0f) /* infinite or NaN */
            return 0;
    /* padded column j is input column j - PL: the whole buffer zeroed, then
     * each row's inner part copied (one call each, not three) */
    lo = d->PL < wp ? d->PL : wp;
    hi = d->W + d->PL < wp ? d->W + d->PL : wp;
    memset(buf, 0, sizeof(float) * (size_t)(wp * d->H));
    if (hi > lo)
        for (ih = 0; ih < d->H; ih++)
            memcpy(buf + ih * wp + lo, x + ih * d->W + (lo - d->PL), sizeof(float) * (size_t)(hi - lo));
    for (oh = 0; oh < d->OH; oh++) {
        int32_t ih0 = oh * d->SH - d->PT, kha = 0, khb = d->KH, nkh, rs = d->DH * wp;
        const float *xr, *wr = w;
        float *yr = y + oh * d->OW;
        if (ih0 < 0 || ih0 + (d->KH - 1) * d->DH >= d->H) /* else the whole window */
            pfvm__nn_dw_range(d->KH, d->DH, ih0, 0, d->H, &kha, &khb);
        nkh = khb - kha;
        xr = nkh > 0 ? buf + (ih0 + kha * d->DH) * wp : buf;
        wr += kha * d->KW;
        for (ow = 0; ow + 4 <= d->OW; ow += 4)
            (d->SW == 1 ? pfvm__nn_dwa4_s1 : pfvm__nn_dwa4_s2)(xr + ow * d->SW, wr, nkh, rs, d->KW, d->DW, b, yr + ow);
        for (; ow < d->OW; ow++)
            yr[ow] = pfvm__nn_dwa1(xr + ow * d->SW, wr, nkh, rs, d->KW, d->DW, b);
    }
    return 1;
}
#endif

/* One plane: y (OH x OW) = bias + the depthwise window sums of x (H x W). */
static void pfvm__nn_dw_plane(const pfvm__nn_2d *d, int32_t OH, const float *x, const float *w, float b, float *y)
{
    int32_t oh, ow, ia, ib;
    pfvm__nn_inner_cols(d, &ia, &ib);
    for (oh = 0; oh < OH; oh++) {
        int32_t ih0 = oh * d->SH - d->PT, kha, khb;
        float *yr = y + oh * d->OW;
        pfvm__nn_dw_range(d->KH, d->DH, ih0, 0, d->H, &kha, &khb);
        for (ow = 0; ow < ia; ow++)
            yr[ow] = pfvm__nn_dw_edge(d, x, w, kha, khb, ih0, ow, b);
        if (ib > ia) {
            const float *xr = x + (ih0 + kha * d->DH) * d->W + ia * d->SW - d->PL;
            const float *wr = w + kha * d->KW;
            int32_t nkh = khb - kha, rs = d->DH * d->W;
            if (d->SW == 1)
                pfvm__nn_dw_s1(yr + ia, xr, wr, nkh, rs, d->KW, d->DW, b, ib - ia);
            else if (d->SW == 2)
                PFVM__NN_DW_S2(yr + ia, xr, wr, nkh, rs, d->KW, d->DW, b, ib - ia);
            else
                pfvm__nn_dw_sn(yr + ia, xr, wr, nkh, rs, d->KW, d->DW, b, ib - ia, d->SW);
        }
        for (ow = ib; ow < d->OW; ow++)
            yr[ow] = pfvm__nn_dw_edge(d, x, w, kha, khb, ih0, ow, b);
    }
}
#endif

#if defined(__clang__)
#pragma STDC FP_CONTRACT DEFAULT
#endif

/* ---- direct convolution on 32-bit Arm ------------------------------------------------- */

/* On 32-bit Arm (PFVM_CONV_DIRECT forces it elsewhere, for tests) a 2-D
 * convolution with at most 4 output channels per group (grouped
 * convolutions with few channels per group: the engine would pack the
 * input for products of 1 or 2 rows, and take its 12 KB of blocks on the
 * stack), whose window holds at most PFVM_LA_KC weights per output
 * channel and whose column stride is 1 or 2, reads its input in place:
 * no im2col, no workspace, two output channels x 8 columns in registers. It rounds as the matrix engine does (each output is its
 * window's products summed by fused multiply-adds from zero, in the
 * engine's order: input channel, kernel row, kernel column, then added to
 * the bias once), so a Cortex-M gives the host's bits. Positions in the
 * padding are skipped where the engine adds weight x 0: the same bits
 * when every weight is finite and no bias is -0 (checked; otherwise the
 * engine runs). */

#ifdef PFVM__NN_DIRECT
#if defined(__FMA__) || defined(__ARM_FEATURE_FMA) || defined(PFVM_EXACT_FMA)
#if defined(__GNUC__)
#define PFVM__NN_FMA(a, b, c) __builtin_fmaf(a, b, c)
#else
#define PFVM__NN_FMA(a, b, c) fmaf(a, b, c)
#endif
#else
#define PFVM__NN_FMA(a, b, c) ((a) * (b) + (c)) /* as the portable matrix kernel rounds */
#endif

/* One kernel position of an output row's window: the input's offset from
 * the window's first valid row (at the block's first column) and the
 * weights of one or two output channels there. */
typedef struct pfvm__nn_dent {
    int32_t off;
    float w[2];
} pfvm__nn_dent;

/* The register blocks: CH output channels x COLS consecutive output
 * columns (S input columns apart) in scalar accumulators (-Os keeps an
 * array of them in memory), the window's positions e[0..n) in order;
 * y[c * ys + j] = b[c] + sum. */
#define PFVM__NN_DK_X8(S)                                                                                          \
    float x0 = xp[0], x1 = xp[S], x2 = xp[2 * (S)], x3 = xp[3 * (S)];                                              \
    float x4 = xp[4 * (S)], x5 = xp[5 * (S)], x6 = xp[6 * (S)], x7 = xp[7 * (S)];
#define PFVM__NN_DK_F4(c, w)                                                                                       \
    a##c##0 = PFVM__NN_FMA(w, x0, a##c##0);                                                                        \
    a##c##1 = PFVM__NN_FMA(w, x1, a##c##1);                                                                        \
    a##c##2 = PFVM__NN_FMA(w, x2, a##c##2);                                                                        \
    a##c##3 = PFVM__NN_FMA(w, x3, a##c##3);
#define PFVM__NN_DK_F8(c, w)                                                                                       \
    PFVM__NN_DK_F4(c, w)                                                                                           \
    a##c##4 = PFVM__NN_FMA(w, x4, a##c##4);                                                                        \
    a##c##5 = PFVM__NN_FMA(w, x5, a##c##5);                                                                        \
    a##c##6 = PFVM__NN_FMA(w, x6, a##c##6);                                                                        \
    a##c##7 = PFVM__NN_FMA(w, x7, a##c##7);
#define PFVM__NN_DK_D4(c) float a##c##0 = 0, a##c##1 = 0, a##c##2 = 0, a##c##3 = 0;
#define PFVM__NN_DK_D8(c) PFVM__NN_DK_D4(c) float a##c##4 = 0, a##c##5 = 0, a##c##6 = 0, a##c##7 = 0;
/* The sums: a = b[c] + a, then Relu's floor where lo (cl[0] of a Relu
 * with no upper bound: x > lo ? x : lo, what the clamp pass did after). */
#define PFVM__NN_DK_V4(c)                                                                                          \
    a##c##0 = b[c] + a##c##0;                                                                                      \
    a##c##1 = b[c] + a##c##1;                                                                                      \
    a##c##2 = b[c] + a##c##2;                                                                                      \
    a##c##3 = b[c] + a##c##3;
#define PFVM__NN_DK_V8(c)                                                                                          \
    PFVM__NN_DK_V4(c)                                                                                              \
    a##c##4 = b[c] + a##c##4;                                                                                      \
    a##c##5 = b[c] + a##c##5;                                                                                      \
    a##c##6 = b[c] + a##c##6;                                                                                      \
    a##c##7 = b[c] + a##c##7;
#define PFVM__NN_DK_R1(v) v = v > f ? v : f;
#define PFVM__NN_DK_R8(c)                                                                                          \
    PFVM__NN_DK_R1(a##c##0) PFVM__NN_DK_R1(a##c##1) PFVM__NN_DK_R1(a##c##2) PFVM__NN_DK_R1(a##c##3)                \
    PFVM__NN_DK_R1(a##c##4) PFVM__NN_DK_R1(a##c##5) PFVM__NN_DK_R1(a##c##6) PFVM__NN_DK_R1(a##c##7)
#define PFVM__NN_DK_S8(c)                                                                                          \
    y[c * ys + 0] = a##c##0;                                                                                       \
    y[c * ys + 1] = a##c##1;                                                                                       \
    y[c * ys + 2] = a##c##2;                                                                                       \
    y[c * ys + 3] = a##c##3;                                                                                       \
    y[c * ys + 4] = a##c##4;                                                                                       \
    y[c * ys + 5] = a##c##5;                                                                                       \
    y[c * ys + 6] = a##c##6;                                                                                       \
    y[c * ys + 7] = a##c##7;

typedef void (*pfvm__nn_dk_fn)(const pfvm__nn_dent *e, const pfvm__nn_dent *end, const float *x, float *y, int32_t ys,
                               const float *b, const float *lo);

/* The loops over the window's positions: C, or on a Cortex-M4/M7 with
 * single-precision FMA (Thumb-2, VFPv4 or later) for column stride 1, the
 * same fused multiply-adds in the same order in assembly, 8 inputs in one
 * vldm and the entry's off and weights in two loads: 22 instructions per
 * 16 multiply-adds where gcc -Os makes 33 of the C loop. */
#if defined(__GNUC__) && defined(__thumb2__) && defined(__ARM_FP) && (__ARM_FP & 4) && defined(__ARM_FEATURE_FMA) && \
    !defined(__ARM_ARCH_ISA_A64) && !defined(PFVM_NO_ASM)
#define PFVM__NN_DK_ASM 1
#define PFVM__NN_DK_M8(op, c, w)                                                                                   \
    op " %[a" #c "0], " w ", s16\n\t" op " %[a" #c "1], " w ", s17\n\t" op " %[a" #c "2], " w ", s18\n\t"          \
    op " %[a" #c "3], " w ", s19\n\t" op " %[a" #c "4], " w ", s20\n\t" op " %[a" #c "5], " w ", s21\n\t"          \
    op " %[a" #c "6], " w ", s22\n\t" op " %[a" #c "7], " w ", s23\n\t"
#define PFVM__NN_DK_A8(c, w) PFVM__NN_DK_M8("vfma.f32", c, w)
/* the accumulators are the asm's outputs only, set from %[z] inside (an
 * in-out operand counts twice against gcc's 30) */
#define PFVM__NN_DK_O8(c)                                                                                          \
    [a##c##0] "=&t"(a##c##0), [a##c##1] "=&t"(a##c##1), [a##c##2] "=&t"(a##c##2), [a##c##3] "=&t"(a##c##3),       \
        [a##c##4] "=&t"(a##c##4), [a##c##5] "=&t"(a##c##5), [a##c##6] "=&t"(a##c##6), [a##c##7] "=&t"(a##c##7)
#define PFVM__NN_DK_Z8(c, op)                                                                                      \
    op " %[a" #c "0], %[z]\n\t" op " %[a" #c "1], %[z]\n\t" op " %[a" #c "2], %[z]\n\t" op " %[a" #c "3], %[z]\n\t" \
    op " %[a" #c "4], %[z]\n\t" op " %[a" #c "5], %[z]\n\t" op " %[a" #c "6], %[z]\n\t" op " %[a" #c "7], %[z]\n\t"
#define PFVM__NN_DK_CLOB                                                                                           \
    "s16", "s17", "s18", "s19", "s20", "s21", "s22", "s23", "s24", "s25", "cc", "memory"
/* one accumulator row over the table: entries of 12 bytes (off, two
 * weights: the first is used), 8 inputs from x + off per entry; ACC8 is
 * the row's 8 multiply-adds with s24 */
#define PFVM__NN_DK_LOOP1(ACC8)                                                                                    \
    "cmp %[e], %[end]\n\t"                                                                                       \
    "bhs 2f\n"                                                                                                   \
    "1:\n\t"                                                                                                    \
    "ldr %[off], [%[e]], #12\n\t"                                                                               \
    "vldr s24, [%[e], #-8]\n\t"                                                                                 \
    "add %[p], %[x], %[off], lsl #2\n\t"                                                                        \
    "vldmia %[p], {s16-s23}\n\t" ACC8 "cmp %[e], %[end]\n\t"                                                  \
    "blo 1b\n"                                                                                                   \
    "2:\n\t"
static void pfvm__nn_dk28_s1(const pfvm__nn_dent *e, const pfvm__nn_dent *end, const float *x, float *y, int32_t ys,
                             const float *b, const float *lo)
{
    float a00, a01, a02, a03, a04, a05, a06, a07, a10, a11, a12, a13, a14, a15, a16, a17;
    const float *p;
    int32_t off;
    __asm__ volatile(PFVM__NN_DK_Z8(0, "vmov") PFVM__NN_DK_Z8(1, "vmov")
                     "cmp %[e], %[end]\n\t"
                     "bhs 2f\n"
                     "1:\n\t"
                     "ldr %[off], [%[e]], #4\n\t"
                     "vldmia %[e]!, {s24-s25}\n\t"
                     "add %[p], %[x], %[off], lsl #2\n\t"
                     "vldmia %[p], {s16-s23}\n\t" PFVM__NN_DK_A8(0, "s24") PFVM__NN_DK_A8(1, "s25")
                     "cmp %[e], %[end]\n\t"
                     "blo 1b\n"
                     "2:\n\t"
                     : [e] "+r"(e), [off] "=&r"(off), [p] "=&r"(p), PFVM__NN_DK_O8(0), PFVM__NN_DK_O8(1)
                     : [x] "r"(x), [end] "r"(end), [z] "r"(0)
                     : PFVM__NN_DK_CLOB);
    PFVM__NN_DK_V8(0) PFVM__NN_DK_V8(1)
    if (lo) {
        const float f = *lo;
        PFVM__NN_DK_R8(0) PFVM__NN_DK_R8(1)
    }
    PFVM__NN_DK_S8(0) PFVM__NN_DK_S8(1)
}
static void pfvm__nn_dk18_s1(const pfvm__nn_dent *e, const pfvm__nn_dent *end, const float *x, float *y, int32_t ys,
                             const float *b, const float *lo)
{
    float a00, a01, a02, a03, a04, a05, a06, a07;
    const float *p;
    int32_t off;
    (void)ys;
    __asm__ volatile(PFVM__NN_DK_Z8(0, "vmov") PFVM__NN_DK_LOOP1(PFVM__NN_DK_A8(0, "s24"))
                     : [e] "+r"(e), [off] "=&r"(off), [p] "=&r"(p), PFVM__NN_DK_O8(0)
                     : [x] "r"(x), [end] "r"(end), [z] "r"(0)
                     : PFVM__NN_DK_CLOB);
    PFVM__NN_DK_V8(0)
    if (lo) {
        const float f = *lo;
        PFVM__NN_DK_R8(0)
    }
    PFVM__NN_DK_S8(0)
}
#endif

#define PFVM__NN_DK28(name, S)                                                                                     \
    static void name(const pfvm__nn_dent *e, const pfvm__nn_dent *end, const float *x, float *y, int32_t ys,        \
                     const float *b, const float *lo)                                                              \
    {                                                                                                              \
        PFVM__NN_DK_D8(0) PFVM__NN_DK_D8(1)                                                                        \
        for (; e < end; e++) {                                                                                     \
            const float *xp = x + e->off;                                                                          \
            PFVM__NN_DK_X8(S)                                                                                      \
            PFVM__NN_DK_F8(0, e->w[0]) PFVM__NN_DK_F8(1, e->w[1])                                                  \
        }                                                                                                          \
        PFVM__NN_DK_V8(0) PFVM__NN_DK_V8(1)                                                                        \
        if (lo) {                                                                                                  \
            const float f = *lo;                                                                                   \
            PFVM__NN_DK_R8(0) PFVM__NN_DK_R8(1)                                                                    \
        }                                                                                                          \
        PFVM__NN_DK_S8(0) PFVM__NN_DK_S8(1)                                                                        \
    }
#define PFVM__NN_DK18(name, S)                                                                                     \
    static void name(const pfvm__nn_dent *e, const pfvm__nn_dent *end, const float *x, float *y, int32_t ys,        \
                     const float *b, const float *lo)                                                              \
    {                                                                                                              \
        PFVM__NN_DK_D8(0)                                                                                          \
        (void)ys;                                                                                                  \
        for (; e < end; e++) {                                                                                     \
            const float *xp = x + e->off;                                                                          \
            PFVM__NN_DK_X8(S)                                                                                      \
            PFVM__NN_DK_F8(0, e->w[0])                                                                             \
        }                                                                                                          \
        PFVM__NN_DK_V8(0)                                                                                          \
        if (lo) {                                                                                                  \
            const float f = *lo;                                                                                   \
            PFVM__NN_DK_R8(0)                                                                                      \
        }                                                                                                          \
        PFVM__NN_DK_S8(0)                                                                                          \
    }
#ifndef PFVM__NN_DK_ASM
PFVM__NN_DK28(pfvm__nn_dk28_s1, 1)
PFVM__NN_DK18(pfvm__nn_dk18_s1, 1)
#endif
PFVM__NN_DK28(pfvm__nn_dk28_s2, 2)
PFVM__NN_DK18(pfvm__nn_dk18_s2, 2)

#ifndef PFVM_CONV_NO_DEPTHWISE
/* Depthwise planes of column and row stride 1 on 32-bit Arm, as one
 * long row: the plane is copied into a buffer padded with zeros on every
 * side (wp columns a row), and the outputs are computed at every position
 * j = oh * wp + ow of that buffer, 8 consecutive ones at a time, each
 * window position one entry (offset, weight) of a table; the wp - OW
 * positions past a row's end are computed and dropped. Each block writes
 * its 8 outputs over the buffer's first 8 values, which no later block
 * reads (their windows start after them). Products are rounded, then
 * added from the bias in the window's order (vmla: the loops above's
 * a += w * x); adding weight x 0 in the padding gives their bits when the
 * weights are finite and the bias is not -0 (checked). About 1.7
 * instructions per multiply-add on dscnn's 25x5 planes where 4 columns at
 * a time and the fifth alone took 9. */
#ifndef PFVM__NN_DWT_MAX
#define PFVM__NN_DWT_MAX 32 /* window positions */
#endif
static void pfvm__nn_dwv8(const pfvm__nn_dent *e, const pfvm__nn_dent *end, float *x, float b)
{
#ifdef PFVM__NN_DK_ASM
    float a00, a01, a02, a03, a04, a05, a06, a07;
    const float *p;
    int32_t off;
    __asm__ volatile(PFVM__NN_DK_Z8(0, "vmov.f32") PFVM__NN_DK_LOOP1(PFVM__NN_DK_M8("vmla.f32", 0, "s24"))
                     : [e] "+r"(e), [off] "=&r"(off), [p] "=&r"(p), PFVM__NN_DK_O8(0)
                     : [x] "r"(x), [end] "r"(end), [z] "t"(b)
                     : PFVM__NN_DK_CLOB);
#else
    float a00 = b, a01 = b, a02 = b, a03 = b, a04 = b, a05 = b, a06 = b, a07 = b;
    for (; e < end; e++) {
        const float wv = e->w[0], *q = x + e->off;
        a00 += wv * q[0];
        a01 += wv * q[1];
        a02 += wv * q[2];
        a03 += wv * q[3];
        a04 += wv * q[4];
        a05 += wv * q[5];
        a06 += wv * q[6];
        a07 += wv * q[7];
    }
#endif
    x[0] = a00, x[1] = a01, x[2] = a02, x[3] = a03, x[4] = a04, x[5] = a05, x[6] = a06, x[7] = a07;
}

/* 0 where it does not take the plane; lo: Relu's floor, applied as the
 * outputs are copied out. */
PFVM__NN_LOOPS static int pfvm__nn_dw_plane_row(const pfvm__nn_2d *d, const float *x, const float *w, float b,
                                                float *y, const float *lo)
{
    float buf[PFVM__NN_DWP_MAX];
    pfvm__nn_dent tab[PFVM__NN_DWT_MAX];
    int32_t wp = d->OW + (d->KW - 1) * d->DW, hp = d->OH + (d->KH - 1) * d->DH, nv = d->OH * wp, n = 0, r, t, j;
    int32_t size = hp * wp + 8 + (d->KW - 1) * d->DW, nc = d->PL < wp ? (d->W < wp - d->PL ? d->W : wp - d->PL) : 0;
    if (d->SW != 1 || d->SH != 1 || d->KH * d->KW > PFVM__NN_DWT_MAX || (b == 0.0f && 1.0f / b < 0.0f) ||
        (int64_t)hp * wp + 8 + (d->KW - 1) * d->DW > PFVM__NN_DWP_MAX)
        return 0;
    for (r = 0; r < d->KH; r++)
        for (t = 0; t < d->KW; t++, n++) {
            if (w[n] - w[n] != 0.0f) /* infinite or NaN */
                return 0;
            tab[n].off = r * d->DH * wp + t * d->DW;
            tab[n].w[0] = tab[n].w[1] = w[n];
        }
    /* the buffer zeroed (past hp rows too: the last block's extra outputs
     * read there), then the plane's rows copied in: one loop each, no
     * call per row */
    for (j = 0; j + 4 <= size; j += 4)
        buf[j] = 0.0f, buf[j + 1] = 0.0f, buf[j + 2] = 0.0f, buf[j + 3] = 0.0f;
    for (; j < size; j++)
        buf[j] = 0.0f;
    for (r = d->PT; r < hp && r - d->PT < d->H; r++) {
        const float *src = x + (r - d->PT) * d->W;
        float *dst = buf + r * wp + d->PL;
        for (t = 0; t < nc; t++)
            dst[t] = src[t];
    }
    for (j = 0; j < nv; j += 8)
        pfvm__nn_dwv8(tab, tab + n, buf + j, b);
    for (r = 0; r < d->OH; r++, y += d->OW) {
        const float *v = buf + r * wp;
        if (lo) {
            const float f = *lo;
            for (t = 0; t < d->OW; t++)
                y[t] = v[t] > f ? v[t] : f;
        } else
            for (t = 0; t < d->OW; t++)
                y[t] = v[t];
    }
    return 1;
}
#endif

/* Whether the direct loops take a window: at most 4 output channels per
 * group (more share the engine's packed input well; up to 8 over at most
 * 3 input channels, a first convolution over an image's colours, whose
 * im2col costs the engine more than its products), at most PFVM_LA_KC
 * weights per output channel (one chain of the engine's), column stride 1
 * or 2, not a 1x1 product (the engine's plain product). */
static int pfvm__nn_direct_window(const pfvm__nn_win *w, int64_t mg, int64_t cg, int64_t kk)
{
    return (mg <= 4 || (mg <= 8 && cg <= 3)) && cg * kk <= PFVM_LA_KC && (w->s[1] == 1 || w->s[1] == 2) && w->k[2] == 1 &&
           !(kk == 1 && w->s[0] == 1 && w->s[1] == 1 && !w->pb[0] && !w->pb[1] && !w->pe[0] && !w->pe[1]);
}

/* Skipping the padding gives the engine's bits (see above). */
static int pfvm__nn_direct_exact(const pfvm__nn_geom *g, const float *wt, const float *bias)
{
    int64_t i, n = g->M * g->CG * g->kk;
    for (i = 0; i < n; i++)
        if (wt[i] - wt[i] != 0.0f) /* infinite or NaN */
            return 0;
    for (i = 0; bias && i < g->M; i++)
        if (bias[i] == 0.0f && 1.0f / bias[i] < 0.0f)
            return 0;
    return 1;
}

/* One output column (at the border, or of a row too narrow for a block)
 * of ch (1 or 2) channels, weights w and w + K: rows [kha, khb) of the
 * window, input row ih0; s[c] = the sums. */
static void pfvm__nn_direct_one(const pfvm__nn_2d *d, int32_t cg, const float *x, const float *w, int32_t K, int ch,
                                int32_t kha, int32_t khb, int32_t ih0, int32_t ow, float *s)
{
    int32_t iw0 = ow * d->SW - d->PL, kwa = 0, kwb = d->KW, c, r, t, plane = d->H * d->W;
    float s0 = 0.0f, s1 = 0.0f;
    if (iw0 < 0 || iw0 + (d->KW - 1) * d->DW >= d->W)
        pfvm__nn_dw_range(d->KW, d->DW, iw0, 0, d->W, &kwa, &kwb);
    for (c = 0; c < cg; c++)
        for (r = kha; r < khb; r++) {
            const float *row = x + c * plane + (ih0 + r * d->DH) * d->W + iw0, *wr = w + (c * d->KH + r) * d->KW;
            for (t = kwa; t < kwb; t++) {
                float v = row[t * d->DW];
                s0 = PFVM__NN_FMA(wr[t], v, s0);
                if (ch > 1)
                    s1 = PFVM__NN_FMA(wr[K + t], v, s1);
            }
        }
    s[0] = s0;
    s[1] = s1;
}

/* The window's positions in rows [kha, khb) for channels w[0..ch) (K
 * weights apart); returns their count. */
static int32_t pfvm__nn_direct_table(const pfvm__nn_2d *d, int32_t cg, const float *w, int32_t K, int ch, int32_t kha,
                                     int32_t khb, int32_t cs, int32_t rs, pfvm__nn_dent *e)
{
    int32_t c, r, t, n = 0;
    int i;
    for (c = 0; c < cg; c++) /* input channels cs apart, the window's rows rs apart */
        for (r = kha; r < khb; r++)
            for (t = 0; t < d->KW; t++, n++) {
                int32_t p = (c * d->KH + r) * d->KW + t;
                e[n].off = c * cs + (r - kha) * rs + t * d->DW;
                for (i = 0; i < 2; i++)
                    e[n].w[i] = i < ch ? w[i * K + p] : 0.0f;
            }
    return n;
}

/* Output channels [m0, m0 + ch) of one image and group: x its first input
 * channel, y the first of these channels' planes. Not inlined: its table
 * (1.5 KB) stays off the stack of convolutions that do not come here. */
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static void pfvm__nn_direct_block(const pfvm__nn_2d *d, int32_t cg, const float *x, const float *w, const float *bias,
                                  int ch, float *y, const float *lo)
{
    pfvm__nn_dent tab[PFVM_LA_KC];
    int32_t K = cg * d->KH * d->KW, oplane = d->OH * d->OW, ia, ib, oh, ow, n = 0, kha0 = -1, khb0 = -1, cols;
    pfvm__nn_dk_fn fn;
    float b[2];
    int c;
    for (c = 0; c < 2; c++)
        b[c] = c < ch && bias ? bias[c] : 0.0f;
    if (ch == 2)
        fn = d->SW == 1 ? pfvm__nn_dk28_s1 : pfvm__nn_dk28_s2;
    else
        fn = d->SW == 1 ? pfvm__nn_dk18_s1 : pfvm__nn_dk18_s2;
    cols = 8;
    pfvm__nn_inner_cols(d, &ia, &ib);
    if (ib - ia < cols) /* too narrow for a block: every column alone */
        ia = ib = d->OW;
    for (oh = 0; oh < d->OH; oh++) {
        int32_t ih0 = oh * d->SH - d->PT, kha = 0, khb = d->KH;
        float *yr = y + oh * d->OW, sum[2];
        if (ih0 < 0 || ih0 + (d->KH - 1) * d->DH >= d->H) /* else the whole window */
            pfvm__nn_dw_range(d->KH, d->DH, ih0, 0, d->H, &kha, &khb);
        for (ow = 0; ow < d->OW; ow++) {
            if (ow == ia) { /* the interior: blocks, the last one ending at ib (recomputing some columns) */
                int32_t row0 = khb > kha ? (ih0 + kha * d->DH) * d->W - d->PL : 0;
                if (kha != kha0 || khb != khb0) {
                    n = pfvm__nn_direct_table(d, cg, w, K, ch, kha, khb, d->H * d->W, d->DH * d->W, tab);
                    kha0 = kha;
                    khb0 = khb;
                }
                for (; ow < ib; ow += cols) {
                    int32_t o = ow + cols <= ib ? ow : ib - cols;
                    fn(tab, tab + n, x + (row0 + o * d->SW), yr + o, oplane, b, lo);
                }
                ow = ib - 1;
                continue;
            }
            pfvm__nn_direct_one(d, cg, x, w, K, ch, kha, khb, ih0, ow, sum);
            for (c = 0; c < ch; c++) {
                float v = b[c] + sum[c];
                yr[c * oplane + ow] = lo && !(v > *lo) ? *lo : v;
            }
        }
    }
}

/* The band of padded input rows (floats on the stack) */
#ifndef PFVM__NN_BAND
#define PFVM__NN_BAND 256
#endif

/* All mg output channels of one image and group, some output rows at a
 * time: the input rows those read (cg channels) are copied into a band
 * with the padding as zeros, left, right, above and below, so every
 * output column and row runs in the 8-column blocks with the whole
 * window (one table per channel pair for the whole convolution) and a
 * copy serves every channel pair and the band's output rows (an input
 * row is copied about once, not once per window row). Adding weight x 0
 * in the padding is what the engine does: its bits. The pairs' tables
 * must fit PFVM_LA_KC entries, the window's rows the band, and a row 8
 * columns: else 0. lo: Relu's floor, applied as the blocks store. */
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static int pfvm__nn_direct_band(const pfvm__nn_2d *d, int32_t cg, int32_t mg, const float *x, const float *w,
                                const float *bias, float *y, const float *lo)
{
    float band[PFVM__NN_BAND], b[8];
    pfvm__nn_dent tab[PFVM_LA_KC];
    int32_t K = cg * d->KH * d->KW, np = (mg + 1) / 2, wp = (d->OW - 1) * d->SW + (d->KW - 1) * d->DW + 1;
    int32_t wh = (d->KH - 1) * d->DH + 1, oplane = d->OH * d->OW, plane = d->H * d->W, nrow, step, oh0, oh, o, c, r, p;
    if (d->OW < 8 || mg > 8 || np * K > PFVM_LA_KC || wp > PFVM__NN_BAND / (cg * wh))
        return 0;
    nrow = PFVM__NN_BAND / (cg * wp); /* the band's rows per input channel */
    step = (nrow - wh) / d->SH + 1;   /* output rows per filling */
    for (c = 0; c < mg; c++)
        b[c] = bias ? bias[c] : 0.0f;
    for (p = 0; p < np; p++)
        pfvm__nn_direct_table(d, cg, w + 2 * p * K, K, mg - 2 * p >= 2 ? 2 : 1, 0, d->KH, nrow * wp, d->DH * wp,
                              tab + p * K);
    for (oh0 = 0; oh0 < d->OH; oh0 += step) {
        int32_t noh = d->OH - oh0 < step ? d->OH - oh0 : step, ih0 = oh0 * d->SH - d->PT;
        int32_t nin = (noh - 1) * d->SH + wh;
        for (c = 0; c < cg; c++)
            for (r = 0; r < nin; r++) {
                int32_t ih = ih0 + r;
                pfvm__nn_pad_row(band + (c * nrow + r) * wp, ih >= 0 && ih < d->H ? x + c * plane + ih * d->W : NULL,
                                 wp, d->PL, d->W);
            }
        for (oh = 0; oh < noh; oh++)
            for (p = 0; p < np; p++) {
                pfvm__nn_dk_fn fn = mg - 2 * p >= 2 ? (d->SW == 1 ? pfvm__nn_dk28_s1 : pfvm__nn_dk28_s2)
                                                    : (d->SW == 1 ? pfvm__nn_dk18_s1 : pfvm__nn_dk18_s2);
                const float *xr = band + oh * d->SH * wp;
                float *yr = y + 2 * p * oplane + (oh0 + oh) * d->OW;
                for (o = 0;; o += 8) { /* the last block ends at OW (recomputing some columns) */
                    int32_t oo = o + 8 <= d->OW ? o : d->OW - 8;
                    fn(tab + p * K, tab + (p + 1) * K, xr + oo * d->SW, yr + oo, oplane, b + 2 * p, lo);
                    if (oo + 8 >= d->OW)
                        break;
                }
            }
    }
    return 1;
}

/* The whole convolution, when the direct loops take it (0: the engine). */
static int pfvm__nn_conv_direct(const pfvm__nn_geom *g, const pfvm__nn_2d *d, const float *x, const float *wt,
                                const float *bias, float *y, const float *lo)
{
    int64_t n, gr, m;
    if (!pfvm__nn_direct_window(&g->w, g->MG, g->CG, g->kk) || !pfvm__nn_direct_exact(g, wt, bias))
        return 0;
    for (n = 0; n < g->N; n++)
        for (gr = 0; gr < g->group; gr++) {
            int64_t m0 = gr * g->MG;
            if (pfvm__nn_direct_band(d, (int32_t)g->CG, (int32_t)g->MG, x + (n * g->C + gr * g->CG) * g->in_plane,
                                     wt + m0 * g->CG * g->kk, bias ? bias + m0 : NULL, y + (n * g->M + m0) * g->out_plane,
                                     lo))
                continue;
            for (m = 0; m < g->MG;) {
                int ch = g->MG - m >= 2 ? 2 : 1;
                int64_t mm = gr * g->MG + m;
                pfvm__nn_direct_block(d, (int32_t)g->CG, x + (n * g->C + gr * g->CG) * g->in_plane, wt + mm * g->CG * g->kk,
                                      bias ? bias + mm : NULL, ch, y + (n * g->M + mm) * g->out_plane, lo);
                m += ch;
            }
        }
    return 1;
}
#endif

#ifdef PFVM__LA_CONV_S1
/* 1 when pfvm_la_conv_lanes (output channels in the lanes, tiles of 7
 * positions of an output row) should take this convolution: one group of
 * a multiple of 64 output channels, stride 1 or 2 and a small plane, where
 * the engine's 32-position tiles waste most (a 7x7 plane: 64 computed for
 * 49; 14x14: 224 for 196), the lanes' tiles computing no more positions
 * than the engine's (a 13x13 plane: 182 against 192; 11x11: 154 against
 * 128 stays on the engine), but not 1x1 windows at stride 1. Measured:
 * bench/speed.md, rounds 14, 15 and 17. */
#ifndef PFVM__NN_LANES_PLANE_MAX
#define PFVM__NN_LANES_PLANE_MAX 3136
#endif
#ifndef PFVM__NN_LANES_1X1_MAX
#define PFVM__NN_LANES_1X1_MAX 196
#endif
#ifndef PFVM__NN_LANES_LONG_MAX
#define PFVM__NN_LANES_LONG_MAX 12544
#endif
#ifndef PFVM__NN_LANES_LONG_K
#define PFVM__NN_LANES_LONG_K 128
#endif
/* The largest output plane the lanes kernel takes: up to 3136 positions
 * (resnet18's layer1, 56x56, 64 -> 64 channels: 1.26-1.67 against the
 * stride-1 kernel's 1.40-2.41 ms, whose tiles likely read K's 576 rows
 * through L2; layer2, 28x28: 5% less CPU time than the stride-1
 * kernel on its 3x3 Conv, 8% less than im2col on its 3x3/2 one; the
 * 55x55 and 27x27 planes of squeezenet's expands, where the stride-1
 * kernel is 4-9% faster, stay there by the positions rule); 1x1 windows
 * (stride 2) up to 196, their short K leaving the padded copy and the
 * transposed store too large a share (layer2's 1x1/2 downsample: 0.28
 * against the engine's 0.16 ms); larger planes (the stems, 112x112) run
 * slower than the engine unless K (input channels x taps) is long: up to
 * 112x112 with K of 128 or more (resnet18's 7x7/2 stem, K 147: 1.52-1.71
 * against 1.85-2.09 ms for the engine on an im2col made beforehand; K of
 * 72-75 about even, squeezenet's 3x3/2 stem, K 27, twice as slow).
 * Measured: bench/speed.md, rounds 15 and 17. */
static int64_t pfvm__nn_lanes_plane_max(int64_t taps, int64_t cg)
{
    if (taps == 1)
        return PFVM__NN_LANES_1X1_MAX;
    return taps * cg >= PFVM__NN_LANES_LONG_K ? PFVM__NN_LANES_LONG_MAX : PFVM__NN_LANES_PLANE_MAX;
}

static int pfvm__nn_lanes_pays(const pfvm__nn_2d *d, int64_t group, int64_t mg, int64_t cg)
{
    int64_t plane = (int64_t)d->OH * d->OW;
    int64_t lanes_pos = (int64_t)d->OH * ((d->OW + 6) / 7 * 7), engine_pos = (plane + 31) / 32 * 32;
    if (d->KH * d->KW == 1 && d->SH == 1)
        return 0; /* 1x1 stride 1: the engine reads B in place (lanes: 5% more CPU time on mobilenet_v2) */
    return group == 1 && mg % PFVM_LA_LANES_M == 0 && lanes_pos <= engine_pos && d->OW >= 1 &&
           plane <= pfvm__nn_lanes_plane_max((int64_t)d->KH * d->KW, cg) && d->SH == d->SW &&
           (d->SH == 1 || d->SH == 2) && pfvm__have_avx512();
}

/* pfvm__nn_lanes_pays at bind, from the input's dims and the node's window. */
static int pfvm__nn_lanes_at_bind(const pfvm_kctx *k, const pfvm_tensor *X, const pfvm_tensor *W)
{
    int64_t kd[PFVM__NN_SP] = {0}, in_sp[PFVM__NN_SP], out_sp[PFVM__NN_SP];
    pfvm__nn_win win;
    pfvm__nn_2d d;
    if (X->rank != 4 || W->rank != 4 || X->dims[0] < 1 || X->dims[2] < 1 || X->dims[3] < 1)
        return 0;
    kd[0] = W->dims[2];
    kd[1] = W->dims[3];
    if (pfvm__nn_window(k->node, 2, kd, &win, NULL))
        return 0;
    pfvm__nn_sp3(X, in_sp);
    if (pfvm__nn_resolve(&win, in_sp, out_sp, NULL) || !pfvm__nn_2d_win(&win, in_sp, out_sp, &d))
        return 0;
    return pfvm__nn_lanes_pays(&d, pfvm_node_attr_int(k->node, "group", 1), W->dims[0], W->dims[1]);
}
#endif

/* Conv's weights packed at bind (PFVM_PREPACK): one packed A per group,
 * for the weights at w with these sizes and the micro-kernel height mr. */
typedef struct pfvm__nn_packed {
    const void *w;
    int64_t M, K, group;
    size_t per_group; /* floats */
    int mr;
    int lanes; /* 1: packed for pfvm_la_conv_lanes (pfvm__nn_lanes_pays), not for the engine */
    float *a;
} pfvm__nn_packed;

static void pfvm__nn_packed_free(void *p)
{
    if (p)
        pfvm__free(((pfvm__nn_packed *)p)->a);
    pfvm__free(p);
}

/* The packed weights in k->state when they are W's, NULL otherwise. */
static const pfvm__nn_packed *pfvm__nn_packed_of(const pfvm_kctx *k, const pfvm_tensor *W, int64_t group)
{
    const pfvm__nn_packed *pk = (const pfvm__nn_packed *)k->state;
    if (!pk || pk->w != W->data || pk->M != W->dims[0] || pk->group != group || pk->mr != pfvm_la_packed_mr() ||
        pk->K * pk->M != pfvm_tensor_numel(W))
        return NULL;
    return pk;
}

/* Packs constant float weights for the matrix engine (not for depthwise
 * planes, nor for groups of at most 12 output channels, whose products
 * read the weights in place). Anything it cannot use it leaves to the
 * kernel, which reports it. */
static pfvm_code pfvm__nn_prep_conv(const pfvm_kctx *k, const pfvm_tensor *const *consts, void **state,
                                    void (**free_fn)(void *))
{
    const pfvm_tensor *W = k->n_in > 1 ? consts[1] : NULL, *X = k->in[0];
    int64_t group = pfvm_node_attr_int(k->node, "group", 1), M, K, i;
    pfvm__nn_packed *pk;
    size_t per;
    if (!PFVM_PREPACK)
        return PFVM_OK; /* no state is ever kept */
    if (*state) {
        if (W && W->dtype == PFVM_FLOAT && W->data && W->rank >= 3 && group >= 1 && pfvm__nn_packed_of(k, W, group) &&
            pfvm__model_owns(k->node, W->data))
            return PFVM_OK; /* packed when last bound, from the model's own weights */
        *state = NULL; /* the last plan's: other weights may sit at its address now (the executor frees it) */
    }
    if (!W || W->dtype != PFVM_FLOAT || !W->data || W->rank < 3 || !X || X->dtype != PFVM_FLOAT ||
        (k->n_in > 2 && k->in[2] && k->in[2]->dtype != PFVM_FLOAT) || group < 1 || W->dims[0] % group || W->dims[0] < 1)
        return PFVM_OK;
    M = W->dims[0];
    K = pfvm_tensor_numel(W) / M;
    if (M / group <= 12 || K < 1 || pfvm_tensor_numel(W) != M * K)
        return PFVM_OK;
#ifdef PFVM__LA_CONV_S1
    if (group == 1 && pfvm__nn_lanes_at_bind(k, X, W)) {
        pk = (pfvm__nn_packed *)pfvm__calloc(1, sizeof *pk);
        if (!pk || !(pk->a = (float *)pfvm__malloc((size_t)(M * K) * sizeof(float)))) {
            pfvm__free(pk);
            return pfvm__op_fail(k->st, k->node, PFVM_ERR_NOMEM, "cannot allocate %lu bytes for the packed weights",
                                 (unsigned long)((size_t)(M * K) * sizeof(float)));
        }
        pk->w = W->data;
        pk->M = M;
        pk->K = K;
        pk->group = 1;
        pk->per_group = (size_t)(M * K);
        pk->mr = pfvm_la_packed_mr();
        pk->lanes = 1;
        pfvm_la_pack_lanes(M, K, (const float *)W->data, pk->a);
        *state = pk;
        *free_fn = pfvm__nn_packed_free;
        return PFVM_OK;
    }
#endif
    per = pfvm_la_packed_floats(M / group, K);
    if (per > SIZE_MAX / sizeof(float) / (size_t)group)
        return PFVM_OK;
    pk = (pfvm__nn_packed *)pfvm__calloc(1, sizeof *pk);
    if (!pk || !(pk->a = (float *)pfvm__malloc(per * (size_t)group * sizeof(float)))) {
        pfvm__free(pk);
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_NOMEM, "cannot allocate %lu bytes for the packed weights",
                             (unsigned long)(per * (size_t)group * sizeof(float)));
    }
    pk->w = W->data;
    pk->M = M;
    pk->K = K;
    pk->group = group;
    pk->per_group = per;
    for (i = 0; i < group; i++)
        pk->mr = pfvm_la_pack_a_all(M / group, K, (const float *)W->data + i * (M / group) * K, K, 1, pk->a + i * per);
    *state = pk;
    *free_fn = pfvm__nn_packed_free;
    return PFVM_OK;
}

#ifndef PFVM_CONV_NO_DEPTHWISE /* its only user: the depthwise planes' bias */
/* y[0..n) = v, in blocks of fixed length (which compilers vectorize). */
PFVM_DISPATCH static void pfvm__nn_fill(float *y, int64_t n, float v)
{
    int64_t i, j;
    for (i = 0; i + 16 <= n; i += 16)
        for (j = 0; j < 16; j++)
            y[i + j] = v;
    for (; i < n; i++)
        y[i] = v;
}
#endif

#if defined(PFVM__STORE_CLAMP) || defined(PFVM__STORE_RESIDUAL)
/* y[0..n) clamped to [cl[0], cl[1]] as Clip or Relu does (cl[2]: pfvm__kctx_services.clamp,
 * which the fused-loop engine sets in PFVM__STORE_CLAMP builds: x86, 32-bit Arm; and
 * after a residual in PFVM__STORE_RESIDUAL builds: x86-64, aarch64). */
PFVM_DISPATCH static void pfvm__nn_clamp(float *y, int64_t n, const float *cl)
{
    const float lo = cl[0], hi = cl[1];
    int64_t i = 0;
    int j;
#ifndef PFVM_DISPATCH_CLONES
    if (cl[2] != 0.0f && hi == INFINITY) {
        /* Relu (no upper bound: v > hi is never true): cheaper on a
         * Cortex-M4 than the fused-loop engine's Relu and its block calls */
        pfvm_la_relu_floor(y, (ptrdiff_t)n, lo);
        return;
    }
#endif
    if (cl[2] != 0.0f) { /* Relu's form */
        for (; i + 16 <= n; i += 16)
            for (j = 0; j < 16; j++) {
                float v = y[i + j] > lo ? y[i + j] : lo;
                y[i + j] = v > hi ? hi : v;
            }
        for (; i < n; i++) {
            float v = y[i] > lo ? y[i] : lo;
            y[i] = v > hi ? hi : v;
        }
        return;
    }
    for (; i + 16 <= n; i += 16) /* blocks of fixed length, which compilers vectorize */
        for (j = 0; j < 16; j++) {
            float v = y[i + j] < lo ? lo : y[i + j];
            y[i + j] = v > hi ? hi : v;
        }
    for (; i < n; i++) {
        float v = y[i] < lo ? lo : y[i];
        y[i] = v > hi ? hi : v;
    }
}
#define PFVM__NN_CLAMP_OF(k) ((k)->services ? (k)->services->clamp : NULL)
#else
#define PFVM__NN_CLAMP_OF(k) ((void)(k), (const float *)NULL)
#endif

#ifdef PFVM__STORE_RESIDUAL
/* y[0..n) plus the residual r (pfvm__kctx_services.residual), then
 * clamped where cl: for the Conv paths whose stores do not add it (the
 * GEMM's tiles do). */
PFVM_DISPATCH static void pfvm__nn_add_residual(float *y, const float *r, int64_t n, const float *cl)
{
    int64_t i = 0;
    int j;
    for (; i + 16 <= n; i += 16) /* blocks of fixed length, which compilers vectorize */
        for (j = 0; j < 16; j++)
            y[i + j] += r[i + j];
    for (; i < n; i++)
        y[i] += r[i];
    if (cl)
        pfvm__nn_clamp(y, n, cl);
}
#define PFVM__NN_RESIDUAL_OF(k) ((k)->services ? (k)->services->residual : NULL)
#else
#define PFVM__NN_RESIDUAL_OF(k) ((void)(k), (const float *)NULL)
#endif

/* pfvm__kctx_services.silu: y = y * sigmoid(y) as Conv stores (PFVM__STORE_SILU builds) */
#ifdef PFVM__STORE_SILU
#define PFVM__NN_SILU_OF(k) ((k)->services ? (k)->services->silu : 0)
#else
#define PFVM__NN_SILU_OF(k) ((void)(k), 0)
#endif

/* Below this many multiply-adds depthwise planes stay on one thread. A
 * split pays where half the node's time exceeds a fork/join (about 1 us,
 * interp bench-pool) with room to spare: depthwise runs at about 6.5
 * multiply-adds a ns on one thread (shufflenet_v2's 96 planes of 7 x 7,
 * 42336 of them, took 6.5 us, the least of 300 runs), about six times
 * slower than a small product, so 16384 (2.5 us) splits about where the
 * products' PFVM__LA_PAR_MIN (1.8 us) does. MaxPool's planes split from
 * the same count (outside the depthwise code: PFVM_CONV_NO_DEPTHWISE keeps it). */
#ifndef PFVM__NN_DW_PAR_MIN
#define PFVM__NN_DW_PAR_MIN 16384.0f
#endif

#ifndef PFVM_CONV_NO_DEPTHWISE
/* Depthwise planes split over threads: the N x group planes in `chunks`
 * runs, which the tasks take from a shared counter (where gcc and clang
 * have lock-free atomics; elsewhere task i takes runs i, i + parts, ...). */
typedef struct pfvm__nn_dwpar {
    const pfvm__nn_geom *g;
    const pfvm__nn_2d *d; /* NULL: the general depthwise loops */
    const float *x, *wt, *bias;
    float *y;
    const float *cl; /* NULL, or the clamp of the results (pfvm__kctx_services.clamp) */
    int silu;        /* SiLU of each plane once computed, while in cache (pfvm__kctx_services.silu) */
    int parts, chunks, next;
    int unit; /* planes per unit of the split: the four-plane loops' group, so no chunk repeats a plane */
} pfvm__nn_dwpar;

#ifdef PFVM_DISPATCH_CLONES
/* Planes [q, q1) four at a time with AVX-512 or AVX2 (the last four
 * repeat the last plane: the same values stored twice); 0 where the
 * four-plane loops do not take this window. */
static int pfvm__nn_dw_planes4(const pfvm__nn_dwpar *p, int64_t q, int64_t q1)
{
    const pfvm__nn_geom *g = p->g;
    pfvm__nn_dw4 f;
    int32_t ia, ib;
    int i;
#ifdef PFVM_AVX512_KERNELS
    pfvm__nn_dw16_plan pl;
    int v16;
#endif
    if (!p->d || !pfvm__nn_have_avx2() || p->d->KW > PFVM__NN_DW_KWV || (p->d->SW != 1 && p->d->SW != 2))
        return 0;
#ifdef PFVM_AVX512_KERNELS
    v16 = pfvm__have_avx512() && pfvm__nn_dw16_plan_make(p->d, &pl);
#endif
    pfvm__nn_inner_cols(p->d, &ia, &ib);
    for (; q < q1; q += 4) {
        for (i = 0; i < 4; i++) {
            int64_t qi = q + i < q1 ? q + i : q1 - 1, gr = qi % g->group;
            f.x[i] = p->x + qi * g->in_plane;
            f.y[i] = p->y + qi * g->out_plane;
            f.w[i] = p->wt + gr * g->kk;
            f.b[i] = p->bias ? p->bias[gr] : 0.0f;
        }
        f.cl = p->cl;
#ifdef PFVM_AVX512_KERNELS
        if (v16)
            pfvm__nn_dw16_rows(p->d, &f, &pl);
        else
#endif
            if (!pfvm__nn_dw_planes4_avx2(p->d, &f, ia, ib))
            return 0; /* the first call already: nothing computed */
#ifdef PFVM__STORE_SILU
        for (i = 0; p->silu && i < 4 && q + i < q1; i++) /* each plane once */
            pfvm_ew_silu_rows(f.y[i], 0, 1, (ptrdiff_t)g->out_plane);
#endif
    }
    return 1;
}
#endif

static void pfvm__nn_dw_planes(const pfvm__nn_dwpar *p, int64_t q, int64_t q1)
{
    const pfvm__nn_geom *g = p->g;
#ifdef PFVM_DISPATCH_CLONES
    if (q < q1 && p->d && pfvm__nn_dw_planes4(p, q, q1))
        return;
#endif
    for (; q < q1; q++) {
        int64_t gr = q % g->group;
        const float *xg = p->x + q * g->in_plane; /* one input and one output channel per plane */
        float *yg = p->y + q * g->out_plane;
        float b = p->bias ? p->bias[gr] : 0.0f;
        const float *lo = NULL; /* Relu's floor when the plane's loop applied it */
        if (p->d) {
#ifdef PFVM__NN_DIRECT
            lo = p->cl && p->cl[2] != 0.0f && p->cl[1] == INFINITY ? p->cl : NULL;
            if (!pfvm__nn_dw_plane_row(p->d, xg, p->wt + gr * g->kk, b, yg, lo)) {
                lo = NULL;
                if (!pfvm__nn_dw_plane_arm(p->d, xg, p->wt + gr * g->kk, b, yg))
                    pfvm__nn_dw_plane(p->d, p->d->OH, xg, p->wt + gr * g->kk, b, yg);
            }
#else
            pfvm__nn_dw_plane(p->d, p->d->OH, xg, p->wt + gr * g->kk, b, yg);
#endif
        } else {
            pfvm__nn_fill(yg, g->out_plane, b);
            pfvm__nn_conv_depthwise(g, xg, p->wt + gr * g->kk, yg);
        }
#ifdef PFVM__STORE_CLAMP
        if (p->cl && !lo)
            pfvm__nn_clamp(yg, g->out_plane, p->cl);
#endif
#ifdef PFVM__STORE_SILU
        if (p->silu)
            pfvm_ew_silu_rows(yg, 0, 1, (ptrdiff_t)g->out_plane);
#endif
        (void)lo;
    }
}

#ifndef PFVM_NO_THREADS
/* Chunk c of the split: whole units of planes (the last may be short). */
static void pfvm__nn_dw_chunk(const pfvm__nn_dwpar *p, int64_t planes, int c)
{
    int64_t units = (planes + p->unit - 1) / p->unit, q0 = units * c / p->chunks * p->unit,
            q1 = units * (c + 1) / p->chunks * p->unit;
    pfvm__nn_dw_planes(p, q0, q1 < planes ? q1 : planes);
}
#endif

static void pfvm__nn_dw_part(void *ctx, int i)
{
    pfvm__nn_dwpar *p = (pfvm__nn_dwpar *)ctx;
    int64_t planes = p->g->N * p->g->group;
    int c;
#if defined(__GNUC__) && defined(__GCC_ATOMIC_INT_LOCK_FREE) && __GCC_ATOMIC_INT_LOCK_FREE == 2
    (void)i;
    for (c = __atomic_fetch_add(&p->next, 1, __ATOMIC_RELAXED); c < p->chunks;
         c = __atomic_fetch_add(&p->next, 1, __ATOMIC_RELAXED))
#else
    for (c = i; c < p->chunks; c += p->parts)
#endif
#ifdef PFVM_NO_THREADS /* one part, never called: the code stays as it was */
        pfvm__nn_dw_planes(p, planes * c / p->chunks, planes * (c + 1) / p->chunks);
#else
        pfvm__nn_dw_chunk(p, planes, c);
#endif
}


static void pfvm__nn_conv_dw(pfvm_kctx *k, const pfvm__nn_geom *g, const pfvm__nn_2d *d, const float *x, const float *wt,
                             const float *bias, float *y, const float *cl, int silu)
{
    pfvm__nn_dwpar p;
    int64_t planes = g->N * g->group, units;
    float work = (float)planes * (float)g->out_plane * (float)g->kk; /* float: no soft double on Cortex-M */
    p.g = g;
    p.d = d;
    p.x = x;
    p.wt = wt;
    p.bias = bias;
    p.y = y;
    p.cl = cl;
    p.silu = silu;
    p.parts = work < PFVM__NN_DW_PAR_MIN ? 1 : PFVM__KTHREADS(k);
    /* chunks in groups of the four-plane loops: a chunk of 6 planes would
     * compute 8 (the last group repeats its last plane), so cutting 96
     * planes in 16 chunks ran a third more work than one thread did */
#ifdef PFVM_DISPATCH_CLONES
    p.unit = 4;
#else
    p.unit = 1;
#endif
    units = (planes + p.unit - 1) / p.unit;
    if (p.parts > units)
        p.parts = (int)units;
    if (p.parts <= 1) {
        pfvm__nn_dw_planes(&p, 0, planes);
        return;
    }
    p.chunks = units < (int64_t)p.parts * 8 ? (int)units : p.parts * 8;
    p.next = 0;
#ifdef PFVM_DISPATCH_CLONES
    (void)pfvm__nn_have_avx2(); /* its cached answer, set before the threads read it */
    (void)pfvm__have_avx512();
#endif
    pfvm_kctx_parallel(k, p.parts, pfvm__nn_dw_part, &p);
}
#endif

#ifdef PFVM__LA_CONV_S1
/* 1 when the stride-1 convolution read in place (pfvm_la_conv_s1) beats
 * the im2col product on this geometry, as measured (bench/speed.md, round
 * 13): 3x3 windows on resnet18's planes (56x56 to 7x7) take 5-10% less
 * CPU time per Conv (28% on a 32-channel 17x17 plane); 1x1 products (whose B the engine
 * packs by a plain copy) about 3% more on mobilenet_v2, so they stay on
 * the engine (PFVM__NN_S1_POINTWISE 1 sends them here); windows over 9
 * taps are not measured (the kernel takes up to 25: test_gemm). */
static int pfvm__nn_s1_pays(const pfvm__nn_geom *g, const pfvm__nn_2d *d)
{
    if (d->SH != 1 || d->SW != 1 || d->OW != d->W || d->KH * d->KW > 9)
        return 0;
#ifndef PFVM__NN_S1_POINTWISE
#define PFVM__NN_S1_POINTWISE 0
#endif
    return (PFVM__NN_S1_POINTWISE || d->KH * d->KW > 1) && g->CG >= 1;
}

/* The direct kernels' geometry (pfvm_la_conv) of one group's window; the
 * caller sets its input x. */
static void pfvm__nn_la_conv_geom(const pfvm__nn_geom *g, const pfvm__nn_2d *d, pfvm_la_conv *cv)
{
    cv->x = NULL;
    cv->cin = g->CG;
    cv->h = d->H;
    cv->w = d->W;
    cv->oh = d->OH;
    cv->ow = d->OW;
    cv->kh = d->KH;
    cv->kw = d->KW;
    cv->dh = d->DH;
    cv->dw = d->DW;
    cv->sh = d->SH;
    cv->sw = d->SW;
    cv->pt = d->PT;
    cv->pl = d->PL;
}

/* The float convolution with no im2col where pfvm__nn_s1_pays (A packed at
 * bind): 1 when done, 0 to leave it to the engine. */
static int pfvm__nn_conv_s1(pfvm_kctx *k, const pfvm__nn_geom *g, const pfvm__nn_2d *d, const float *x, const float *bias,
                            float *y, const pfvm__nn_packed *pk, const float *cl, const float *res, int silu)
{
    int64_t n, gr;
    pfvm_la_conv cv;
    if (!pfvm__nn_s1_pays(g, d))
        return 0;
    pfvm__nn_la_conv_geom(g, d, &cv);
    for (n = 0; n < g->N; n++)
        for (gr = 0; gr < g->group; gr++) {
            pfvm_la_epi e; /* as the engine's (pfvm__nn_conv_f32) */
            e.bias = bias ? bias + gr * g->MG : NULL;
            e.cl = cl;
            e.res = res ? res + (n * g->M + gr * g->MG) * g->out_plane : NULL;
            e.silu = silu;
            cv.x = x + (n * g->C + gr * g->CG) * g->in_plane;
            /* every call takes its group alike: only the first can decline */
            if (!pfvm_la_conv_s1(k, &cv, g->MG, pk->a + gr * pk->per_group, y + (n * g->M + gr * g->MG) * g->out_plane,
                                 &e))
                return 0;
        }
    return 1;
}

/* The float convolution with output channels in the lanes, on weights
 * packed at bind for it (pfvm__nn_lanes_pays): 1 when done, 0 to leave it
 * to the engine (on the weights as they are). */
static int pfvm__nn_conv_lanes(pfvm_kctx *k, const pfvm__nn_geom *g, const pfvm__nn_2d *d, const float *x,
                               const float *bias, float *y, const pfvm__nn_packed *pk, const float *cl, const float *res,
                               int silu)
{
    int64_t n;
    pfvm_la_conv cv;
    if (g->group != 1 || !pfvm__nn_lanes_pays(d, g->group, g->MG, g->CG))
        return 0;
    pfvm__nn_la_conv_geom(g, d, &cv);
    for (n = 0; n < g->N; n++) {
        pfvm_la_epi e; /* as the engine's (pfvm__nn_conv_f32) */
        e.bias = bias;
        e.cl = cl;
        e.res = res ? res + n * g->M * g->out_plane : NULL;
        e.silu = silu;
        cv.x = x + n * g->C * g->in_plane;
        /* every image alike: only the first can decline */
        if (!pfvm_la_conv_lanes(k, &cv, g->MG, pk->a, y + n * g->M * g->out_plane, &e))
            return 0;
    }
    return 1;
}
#endif

/* 1 where a kernel conv_f32 may take reads the 32-bit 2-D window
 * (pfvm__nn_2d): the depthwise planes, the direct loops, the lanes, the
 * engine's 2-D packing; a lean or small build with none of the first
 * three packs from pfvm__nn_w32 and leaves the conversion out. */
#if !defined(PFVM_CONV_NO_DEPTHWISE) || defined(PFVM__NN_DIRECT) || defined(PFVM__LA_CONV_S1) || \
    !(PFVM__LA_SMALL || PFVM__LA_LEAN)
#define PFVM__NN_CONV_PLANES 1
#else
#define PFVM__NN_CONV_PLANES 0
#endif

/* cl: NULL, or the clamp of the results (pfvm__kctx_services.clamp); res:
 * NULL, or the residual added before it (pfvm__kctx_services.residual);
 * silu: nonzero, x * sigmoid(x) stored (pfvm__kctx_services.silu). */
static pfvm_code pfvm__nn_conv_f32(pfvm_kctx *k, const pfvm__nn_geom *g, const float *x, const float *wt, const float *bias,
                                   float *y, const pfvm__nn_packed *pk, const float *cl, const float *res, int silu)
{
    int64_t n, gr;
    int failed = 0, is2d, direct = 0;
    pfvm__nn_2d dw;
#if PFVM__LA_SMALL || PFVM__LA_LEAN
    pfvm__nn_w32 v32;
#endif
    float *ws;
    is2d = PFVM__NN_CONV_PLANES && pfvm__nn_2d_fits(g, &dw);
#ifndef PFVM_CONV_NO_DEPTHWISE /* else such planes are 1-row products */
    if (g->MG == 1 && g->CG == 1) {
        pfvm__nn_conv_dw(k, g, is2d ? &dw : NULL, x, wt, bias, y, res ? NULL : cl, silu);
#ifdef PFVM__STORE_RESIDUAL
        if (res) /* the residual, then the clamp, in a pass of their own */
            pfvm__nn_add_residual(y, res, g->N * g->M * g->out_plane, cl);
#endif
        return PFVM_OK;
    }
#endif
#ifdef PFVM__NN_DIRECT
    direct = pfvm__nn_direct_window(&g->w, g->MG, g->CG, g->kk);
    if (direct && is2d && !res && !silu) {
        /* Relu (no upper bound) as the blocks store; any other clamp after */
        const float *lo = cl && cl[2] != 0.0f && cl[1] == INFINITY ? cl : NULL;
        if (pfvm__nn_conv_direct(g, &dw, x, wt, bias, y, lo)) {
#ifdef PFVM__STORE_CLAMP
            if (cl && !lo)
                pfvm__nn_clamp(y, g->N * g->M * g->out_plane, cl);
#endif
            return PFVM_OK;
        }
    }
#endif
#ifdef PFVM__LA_CONV_S1
    if (pk && pk->lanes) { /* weights packed for the lanes: no engine's A */
        if (is2d && pfvm__nn_conv_lanes(k, g, &dw, x, bias, y, pk, cl, res, silu))
            return PFVM_OK;
        pk = NULL;
    }
    if (pk && is2d && pfvm__nn_conv_s1(k, g, &dw, x, bias, y, pk, cl, res, silu))
        return PFVM_OK;
#endif
#if PFVM__LA_SMALL || PFVM__LA_LEAN
    (void)is2d;
    if (!pfvm__nn_pointwise(g) && !pfvm__nn_w32_fits(g, &v32))
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_UNSUPPORTED,
                             "a window or plane past 2^31 positions (not in a PFVM_SMALL_KERNELS or PFVM_LEAN_KERNELS build)");
#endif
    /* a window the direct loops take has no workspace reserved (the hook):
     * when they decline it, the engine's blocks go on the stack */
    ws = direct ? NULL : pfvm_la_workspace(k, g->MG, g->out_plane, g->CG * g->kk, &failed);
    if (failed)
        return k->st ? k->st->code : PFVM_ERR_NOMEM;
    for (n = 0; n < g->N; n++)
        for (gr = 0; gr < g->group; gr++) {
            const float *xg = x + (n * g->C + gr * g->CG) * g->in_plane;
            float *yg = y + (n * g->M + gr * g->MG) * g->out_plane;
            const float *ap = pk && ws ? pk->a + gr * pk->per_group : NULL;
            pfvm_la_epi e; /* the bias and the clamp, applied by the engine as it stores */
            e.bias = bias ? bias + gr * g->MG : NULL;
            e.cl = cl;
            e.res = res ? res + (n * g->M + gr * g->MG) * g->out_plane : NULL; /* laid out as y */
            e.silu = silu;
            if (pfvm__nn_pointwise(g)) {
                pfvm_la_strided b;
                b.data = xg;
                b.s_k = g->in_plane;
                b.s_n = 1;
                pfvm_la_sgemm_epi_mt(k, g->MG, g->out_plane, g->CG, 1.0f, wt + gr * g->MG * g->CG, g->CG, 1, ap,
                                     pfvm_la_pack_strided, &b, yg, g->out_plane, ws, &e);
            } else {
                pfvm__nn_cpack cp;
                cp.x = xg;
                cp.g = g;
                cp.d = &dw;
#if PFVM__LA_SMALL || PFVM__LA_LEAN
                cp.v = &v32;
                pfvm_la_sgemm_epi_mt(k, g->MG, g->out_plane, g->CG * g->kk, 1.0f, wt + gr * g->MG * g->CG * g->kk,
                                     g->CG * g->kk, 1, ap, pfvm__nn_pack_conv32, &cp, yg, g->out_plane, ws, &e);
#else
                cp.v = NULL;
                pfvm_la_sgemm_epi_mt(k, g->MG, g->out_plane, g->CG * g->kk, 1.0f, wt + gr * g->MG * g->CG * g->kk,
                                     g->CG * g->kk, 1, ap, is2d ? pfvm__nn_pack2d_fn(&dw) : pfvm__nn_pack_conv, &cp, yg,
                                     g->out_plane, ws, &e);
#endif
            }
        }
    (void)cl;
    return PFVM_OK;
}

typedef struct pfvm__nn_store_ctx {
    pfvm_tensor *y;
    const pfvm_tensor *b;
} pfvm__nn_store_ctx;

static void pfvm__nn_store_post(void *user, int64_t idx, int64_t channel, double acc)
{
    pfvm__nn_store_ctx *c = (pfvm__nn_store_ctx *)user;
    pfvm_red_store(c->y, idx, acc + (c->b ? pfvm__nn_ld(c->b, channel) : 0));
}

static pfvm_code pfvm__nn_k_conv(pfvm_kctx *k)
{
    const pfvm_tensor *X = k->in[0], *W = k->in[1], *B = k->n_in > 2 ? k->in[2] : NULL;
    pfvm__nn_geom g;
    pfvm__nn_store_ctx sc;
    if (pfvm__nn_conv_types(X->dtype, W->dtype, k->st))
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "%s", k->st ? k->st->msg : "types");
    if (pfvm__nn_conv_setup(k, X, W, X->dtype, &g))
        return k->st ? k->st->code : PFVM_ERR_SHAPE;
    if (B && pfvm_tensor_numel(B) != g.M)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "bias has %lld entries for %lld output channels",
                             (long long)pfvm_tensor_numel(B), (long long)g.M);
    /* multiply-adds: every output meets one filter's weights */
    if (g.M > 0 && pfvm_kctx_spend(k, pfvm__sat_mul((uint64_t)pfvm_tensor_numel(k->out[0]),
                                                    (uint64_t)(pfvm_tensor_numel(W) / g.M))))
        return k->st ? k->st->code : PFVM_ERR_RUNTIME;
    if (pfvm__nn_is_f32(X) && pfvm__nn_is_f32(W) && (!B || pfvm__nn_is_f32(B)))
        return pfvm__nn_conv_f32(k, &g, (const float *)X->data, (const float *)W->data, B ? (const float *)B->data : NULL,
                                 (float *)k->out[0]->data, pfvm__nn_packed_of(k, W, g.group), PFVM__NN_CLAMP_OF(k),
                                 PFVM__NN_RESIDUAL_OF(k), PFVM__NN_SILU_OF(k));
    if (!PFVM__F64)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_UNSUPPORTED,
                             "%s inputs need the double-precision path (not in a PFVM_FLOAT32_ONLY build)",
                             pfvm_dtype_name(X->dtype));
    sc.y = k->out[0];
    sc.b = B;
#ifdef PFVM__STORE_RESIDUAL
    if (PFVM__NN_RESIDUAL_OF(k)) {
        /* the fused head's residual and clamp (a float output) after the reference loops */
        pfvm_code rc = pfvm_nn_conv_ref(k, X, W, NULL, NULL, pfvm__nn_store_post, &sc);
        if (rc == PFVM_OK && k->out[0]->dtype == PFVM_FLOAT && k->out[0]->data)
            pfvm__nn_add_residual((float *)k->out[0]->data, PFVM__NN_RESIDUAL_OF(k), pfvm_tensor_numel(k->out[0]),
                                  PFVM__NN_CLAMP_OF(k));
        else if (rc == PFVM_OK)
            return pfvm__op_fail(k->st, k->node, PFVM_ERR_UNSUPPORTED, "a residual added to a result of type %s",
                                 pfvm_dtype_name(k->out[0]->dtype));
        return rc;
    }
#endif
#ifdef PFVM__STORE_SILU
    if (PFVM__NN_SILU_OF(k)) {
        /* the fused head's SiLU (a float output) after the reference loops */
        pfvm_code rc = pfvm_nn_conv_ref(k, X, W, NULL, NULL, pfvm__nn_store_post, &sc);
        if (rc == PFVM_OK && k->out[0]->dtype == PFVM_FLOAT && k->out[0]->data)
            pfvm_ew_silu_rows((float *)k->out[0]->data, 0, 1, (ptrdiff_t)pfvm_tensor_numel(k->out[0]));
        else if (rc == PFVM_OK)
            return pfvm__op_fail(k->st, k->node, PFVM_ERR_UNSUPPORTED, "a SiLU stored into a result of type %s",
                                 pfvm_dtype_name(k->out[0]->dtype));
        return rc;
    }
#endif
#ifdef PFVM__STORE_CLAMP
    if (PFVM__NN_CLAMP_OF(k)) {
        /* the fused head's clamp (a float output) after the reference loops */
        pfvm_code rc = pfvm_nn_conv_ref(k, X, W, NULL, NULL, pfvm__nn_store_post, &sc);
        if (rc == PFVM_OK && k->out[0]->dtype == PFVM_FLOAT && k->out[0]->data)
            pfvm__nn_clamp((float *)k->out[0]->data, pfvm_tensor_numel(k->out[0]), PFVM__NN_CLAMP_OF(k));
        else if (rc == PFVM_OK)
            return pfvm__op_fail(k->st, k->node, PFVM_ERR_UNSUPPORTED, "a clamped result of type %s",
                                 pfvm_dtype_name(k->out[0]->dtype));
        return rc;
    }
#endif
    return pfvm_nn_conv_ref(k, X, W, NULL, NULL, pfvm__nn_store_post, &sc);
}

/* ---- ConvTranspose ----------------------------------------------------------------------- */

/* ConvTranspose's attributes beyond the window: output_padding and an
 * explicit output_shape (its last nsp entries; older models also list N
 * and C). */
typedef struct pfvm__nn_tattr {
    int64_t opad[PFVM__NN_SP], oshape[PFVM__NN_SP];
    int has_oshape;
} pfvm__nn_tattr;

static pfvm_code pfvm__nn_convt_attrs(const pfvm_node *node, int nsp, pfvm__nn_tattr *t, pfvm_status *st)
{
    const int64_t *a;
    int cnt, i;
    memset(t, 0, sizeof *t);
    if ((cnt = pfvm_node_attr_ints(node, "output_padding", &a)) >= 0) {
        if (cnt != nsp)
            return pfvm__fail(st, PFVM_ERR_INVALID, "output_padding has %d entries for %d spatial dims", cnt, nsp);
        for (i = 0; i < nsp; i++)
            if ((t->opad[i] = a[i]) < 0 || a[i] > PFVM__NN_ATTR_MAX)
                return pfvm__fail(st, PFVM_ERR_INVALID, "output_padding must be in [0, 2^31]");
    }
    if ((cnt = pfvm_node_attr_ints(node, "output_shape", &a)) >= 0) {
        if (cnt != nsp && cnt != nsp + 2)
            return pfvm__fail(st, PFVM_ERR_INVALID, "output_shape has %d entries for %d spatial dims", cnt, nsp);
        for (i = 0; i < nsp; i++)
            if ((t->oshape[i] = a[cnt - nsp + i]) < 0 || t->oshape[i] > ((int64_t)1 << 48))
                return pfvm__fail(st, PFVM_ERR_INVALID, "output_shape must be in [0, 2^48]");
        t->has_oshape = 1;
    }
    return PFVM_OK;
}

/* ONNX (and torch) want each output_padding below its stride or its
 * dilation; a larger one only appends zeros past the last window (10^6 of
 * them took seconds before any limit). */
static pfvm_code pfvm__nn_check_opad(const pfvm__nn_win *w, const pfvm__nn_tattr *t, pfvm_status *st)
{
    int i;
    for (i = 0; i < w->n; i++)
        if (t->opad[i] && t->opad[i] >= w->s[i] && t->opad[i] >= w->d[i])
            return pfvm__fail(st, PFVM_ERR_INVALID,
                              "spatial dim %d: output_padding %lld is not smaller than the stride %lld or the dilation %lld", i,
                              (long long)t->opad[i], (long long)w->s[i], (long long)w->d[i]);
    return PFVM_OK;
}

static int pfvm__nn_convt_same(const pfvm__nn_win *w)
{
    return w->auto_pad == PFVM__NN_SAME_UPPER || w->auto_pad == PFVM__NN_SAME_LOWER;
}

/* Output sizes and pads for concrete input sizes. An output_shape or
 * SAME padding fixes the size and the pads follow (SAME_LOWER puts the odd
 * pad at the begin); otherwise the explicit pads give the size. */
static pfvm_code pfvm__nn_convt_resolve(pfvm__nn_win *w, const pfvm__nn_tattr *t, const int64_t *in, int64_t *out,
                                        pfvm_status *st)
{
    int i;
    if (pfvm__nn_check_opad(w, t, st))
        return st ? st->code : PFVM_ERR_INVALID;
    for (i = 0; i < w->n; i++) {
        int64_t full;
        if (!pfvm__mul_i64(w->s[i], in[i] - 1, &full) || !pfvm__add_i64(full, t->opad[i] + pfvm__nn_extent(w, i), &full) ||
            !pfvm__mul_i64(in[i], w->s[i], &out[i]))
            return pfvm__fail(st, PFVM_ERR_RANGE, "spatial dim %d: the output size overflows", i);
        if (t->has_oshape || pfvm__nn_convt_same(w)) {
            int64_t total;
            out[i] = t->has_oshape ? t->oshape[i] : out[i];
            total = full - out[i];
            if (total < 0)
                total = 0;
            w->pb[i] = w->auto_pad == PFVM__NN_SAME_LOWER ? total - total / 2 : total / 2;
            w->pe[i] = total - w->pb[i];
        } else {
            out[i] = full - w->pb[i] - w->pe[i];
        }
        if (out[i] < 0)
            return pfvm__fail(st, PFVM_ERR_SHAPE, "pads leave a negative output size");
    }
    for (; i < PFVM__NN_SP; i++)
        out[i] = 1;
    return PFVM_OK;
}

static pfvm_code pfvm__nn_infer_convt(pfvm_ictx *c)
{
    const pfvm_shape *x = &c->in[0]->type.shape, *wt = &c->in[1]->type.shape;
    int64_t group = pfvm_node_attr_int(c->node, "group", 1), xc, wc;
    pfvm__nn_win w;
    pfvm__nn_tattr t;
    pfvm_shape o;
    int i, nsp, known;
    if (x->rank < 0 || wt->rank < 0)
        return pfvm_infer_unknown(c, 0, c->in[0]->type.dtype, x->rank >= 0 ? x->rank : wt->rank);
    if (x->rank < 3 || wt->rank != x->rank)
        return pfvm__fail(c->st, PFVM_ERR_SHAPE, "input rank %d and weight rank %d do not fit a convolution", x->rank,
                          wt->rank);
    if (group < 1)
        return pfvm__fail(c->st, PFVM_ERR_INVALID, "group %lld must be positive", (long long)group);
    if (pfvm_sym_is_const(x->dims[1], &xc) && pfvm_sym_is_const(wt->dims[0], &wc) && xc != wc)
        return pfvm__fail(c->st, PFVM_ERR_SHAPE, "%lld input channels, weight has %lld", (long long)xc, (long long)wc);
    nsp = x->rank - 2;
    if (pfvm__nn_conv_window(c->node, wt, nsp, &w, &known, c->st) || pfvm__nn_convt_attrs(c->node, nsp, &t, c->st) ||
        pfvm__nn_check_opad(&w, &t, c->st))
        return c->st ? c->st->code : PFVM_ERR_INVALID;
    if (!known && !t.has_oshape) {
        if (pfvm_infer_unknown(c, 0, c->in[0]->type.dtype, x->rank))
            return c->st ? c->st->code : PFVM_ERR_NOMEM;
        o = c->out[0]->type.shape;
    } else {
        o.rank = x->rank;
        for (i = 0; i < nsp; i++) {
            const pfvm_sym *in = x->dims[i + 2];
            if (t.has_oshape)
                o.dims[i + 2] = pfvm_sym_const(c->syms, t.oshape[i]);
            else if (pfvm__nn_convt_same(&w))
                o.dims[i + 2] = pfvm_sym_muli(c->syms, in, w.s[i]);
            else {
                /* attributes are any int64: bound them before the sum */
                const int64_t lim = (int64_t)1 << 40, ext = pfvm__nn_extent(&w, i);
                if (t.opad[i] < -lim || t.opad[i] > lim || ext < -lim || ext > lim || w.s[i] < -lim || w.s[i] > lim ||
                    w.pb[i] < -lim || w.pb[i] > lim || w.pe[i] < -lim || w.pe[i] > lim)
                    return pfvm__fail(c->st, PFVM_ERR_INVALID,
                                      "output_padding, kernel extent, strides or pads of axis %d exceed 2^40", i);
                o.dims[i + 2] = pfvm_sym_addi(c->syms, pfvm_sym_muli(c->syms, in, w.s[i]),
                                              t.opad[i] + ext - w.s[i] - w.pb[i] - w.pe[i]);
            }
        }
    }
    o.dims[0] = x->dims[0];
    o.dims[1] = pfvm_sym_muli(c->syms, wt->dims[1], group);
    pfvm_ival_set_tensor(c->out[0], c->in[0]->type.dtype, &o);
    return PFVM_OK;
}

/* y[i*ys] += wv * x[i] for a row of n inputs (scatter with stride ys). */
typedef void (*pfvm__nn_row_fn)(pfvm_tensor *y, int64_t yoff, int64_t ys, const pfvm_tensor *x, int64_t xoff, int64_t n,
                                double wv);

static void pfvm__nn_row_f32(pfvm_tensor *y, int64_t yoff, int64_t ys, const pfvm_tensor *x, int64_t xoff, int64_t n, double wv)
{
    float *yr = (float *)y->data + yoff, w = (float)wv;
    const float *xr = (const float *)x->data + xoff;
    int64_t i;
    for (i = 0; i < n; i++)
        yr[i * ys] += w * xr[i];
}

static void pfvm__nn_row_any(pfvm_tensor *y, int64_t yoff, int64_t ys, const pfvm_tensor *x, int64_t xoff, int64_t n, double wv)
{
    int64_t i;
    for (i = 0; i < n; i++)
        pfvm_red_store(y, yoff + i * ys, pfvm__nn_ld(y, yoff + i * ys) + wv * pfvm__nn_ld(x, xoff + i));
}

static pfvm_code pfvm__nn_k_convt(pfvm_kctx *k)
{
    const pfvm_tensor *X = k->in[0], *W = k->in[1], *B = k->n_in > 2 ? k->in[2] : NULL;
    pfvm_tensor *Y = k->out[0];
    int64_t group = pfvm_node_attr_int(k->node, "group", 1), in_sp[PFVM__NN_SP], out_sp[PFVM__NN_SP], kd[PFVM__NN_SP];
    int64_t dims[PFVM_MAX_RANK], N, C, CG, MG, M, n, ci, m, i0, i1, k0, k1, k2, t, out_plane, in_plane, kk;
    pfvm__nn_row_fn row;
    pfvm__nn_win w;
    pfvm__nn_tattr ta;
    int i, nsp = X->rank - 2;
    if (nsp < 1 || nsp > PFVM__NN_SP || W->rank != X->rank)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "input rank %d and weight rank %d do not fit a convolution",
                             X->rank, W->rank);
    N = X->dims[0];
    C = X->dims[1];
    if (group < 1 || C % group || W->dims[0] != C)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "%lld channels and group %lld do not fit the weight's %lld",
                             (long long)C, (long long)group, (long long)W->dims[0]);
    for (i = 0; i < nsp; i++)
        if ((kd[i] = W->dims[i + 2]) < 1)
            return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "empty kernel");
    pfvm__nn_sp3(X, in_sp);
    if (pfvm__nn_window(k->node, nsp, kd, &w, k->st) || pfvm__nn_convt_attrs(k->node, nsp, &ta, k->st) ||
        pfvm__nn_convt_resolve(&w, &ta, in_sp, out_sp, k->st))
        return pfvm__op_fail(k->st, k->node, k->st ? k->st->code : PFVM_ERR_INVALID, "%s", k->st ? k->st->msg : "window");
    CG = C / group;
    MG = W->dims[1];
    M = MG * group;
    if (B && pfvm_tensor_numel(B) != M)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "bias has %lld entries for %lld output channels",
                             (long long)pfvm_tensor_numel(B), (long long)M);
    dims[0] = N;
    dims[1] = M;
    for (i = 0; i < nsp; i++)
        dims[i + 2] = out_sp[i];
    if (pfvm_kctx_output(k, 0, X->dtype, X->rank, dims) ||
        pfvm_kctx_spend(k, pfvm__sat_mul((uint64_t)pfvm_tensor_numel(X), (uint64_t)(C > 0 ? pfvm_tensor_numel(W) / C : 0))))
        return k->st ? k->st->code : PFVM_ERR_SHAPE;
    out_plane = out_sp[0] * out_sp[1] * out_sp[2];
    in_plane = in_sp[0] * in_sp[1] * in_sp[2];
    kk = w.k[0] * w.k[1] * w.k[2];
    for (t = 0; t < N * M; t++)
        for (i0 = 0; i0 < out_plane; i0++)
            pfvm_red_store(Y, t * out_plane + i0, B ? pfvm__nn_ld(B, t % M) : 0.0);
    row = pfvm__nn_is_f32(X) && pfvm__nn_is_f32(W) && pfvm__nn_is_f32(Y) ? pfvm__nn_row_f32 : pfvm__nn_row_any;
    /* every input position scatters its kernel-sized patch: walk kernel
     * positions outside, rows of valid input positions inside */
    for (n = 0; n < N; n++)
        for (ci = 0; ci < C; ci++)
            for (m = 0; m < MG; m++) {
                int64_t ybase = (n * M + ci / CG * MG + m) * out_plane, xbase = (n * C + ci) * in_plane;
                int64_t wbase = (ci * MG + m) * kk;
                for (k0 = 0; k0 < w.k[0]; k0++)
                    for (k1 = 0; k1 < w.k[1]; k1++)
                        for (k2 = 0; k2 < w.k[2]; k2++) {
                            double wv = pfvm__nn_ld(W, wbase + (k0 * w.k[1] + k1) * w.k[2] + k2);
                            int64_t off0 = k0 * w.d[0] - w.pb[0], off1 = k1 * w.d[1] - w.pb[1], off2 = k2 * w.d[2] - w.pb[2];
                            int64_t a0, b0, a1, b1, a2, b2;
                            if (wv == 0)
                                continue;
                            pfvm__nn_valid(in_sp[0], w.s[0], off0, out_sp[0], &a0, &b0);
                            pfvm__nn_valid(in_sp[1], w.s[1], off1, out_sp[1], &a1, &b1);
                            pfvm__nn_valid(in_sp[2], w.s[2], off2, out_sp[2], &a2, &b2);
                            if (a2 >= b2)
                                continue;
                            for (i0 = a0; i0 < b0; i0++)
                                for (i1 = a1; i1 < b1; i1++)
                                    row(Y,
                                        ybase + ((i0 * w.s[0] + off0) * out_sp[1] + i1 * w.s[1] + off1) * out_sp[2] +
                                            a2 * w.s[2] + off2,
                                        w.s[2], X, xbase + (i0 * in_sp[1] + i1) * in_sp[2] + a2, b2 - a2, wv);
                        }
            }
    return PFVM_OK;
}

/* ---- pooling ------------------------------------------------------------------------------ */

static pfvm_code pfvm__nn_infer_pool(pfvm_ictx *c)
{
    const pfvm_shape *x = &c->in[0]->type.shape;
    pfvm__nn_win w;
    pfvm_shape out;
    int64_t in[PFVM__NN_SP];
    int i;
    if (x->rank < 0) {
        if (c->n_out > 1 && c->out[1] && pfvm_infer_unknown(c, 1, PFVM_INT64, -1))
            return c->st ? c->st->code : PFVM_ERR_NOMEM;
        return pfvm_infer_unknown(c, 0, c->in[0]->type.dtype, -1);
    }
    if (x->rank < 3)
        return pfvm__fail(c->st, PFVM_ERR_SHAPE, "input rank %d: pooling needs N, C and spatial dims", x->rank);
    if (pfvm__nn_window(c->node, x->rank - 2, NULL, &w, c->st))
        return c->st ? c->st->code : PFVM_ERR_INVALID;
    pfvm__nn_const_sp(x, w.n, in);
    if (pfvm__nn_check_pads(&w, in, c->st))
        return c->st ? c->st->code : PFVM_ERR_INVALID;
    out = *x;
    for (i = 0; i < w.n; i++)
        if (!(out.dims[i + 2] = pfvm__nn_out_sym(c->syms, &w, i, x->dims[i + 2])) || pfvm__nn_check_len(c, out.dims[i + 2]))
            return c->st ? c->st->code : PFVM_ERR_SHAPE;
    pfvm_ival_set_tensor(c->out[0], c->in[0]->type.dtype, &out);
    if (c->n_out > 1 && c->out[1])
        pfvm_ival_set_tensor(c->out[1], PFVM_INT64, &out);
    return PFVM_OK;
}

enum { PFVM__NN_MAX = 0, PFVM__NN_AVG, PFVM__NN_LP };

/* Max and average pooling of floats, in float: pfvm__nn_pool's loops with
 * each kernel row read through a pointer (no per-element index products). */
/* 2-D max pooling of one float plane, row by row like the depthwise
 * kernel: interior columns in blocks of 16 that compilers vectorize, the
 * rest one by one. Every output takes its window's first value inside the
 * input and then each later one that is greater, in order, as the general
 * loop does (so NaNs land alike); a window wholly in the padding gives
 * -inf. */
#define PFVM__NN_MAX_BLK(S, B, o0)                                                          \
    {                                                                                       \
        float acc[B];                                                                       \
        for (j = 0; j < (B); j++)                                                           \
            acc[j] = x[((o0) + j) * (S)];                                                   \
        for (r = 0; r < nkh; r++)                                                           \
            for (t = r ? 0 : 1; t < kw; t++) {                                              \
                const float *p = x + r * rs + t * dw + (o0) * (S);                          \
                for (j = 0; j < (B); j++)                                                   \
                    acc[j] = p[j * (S)] > acc[j] ? p[j * (S)] : acc[j];                     \
            }                                                                               \
        for (j = 0; j < (B); j++)                                                           \
            y[(o0) + j] = acc[j];                                                           \
    }
/* blocks as in PFVM__NN_DW_BODY: 16, one more ending at n, else one by one */
#define PFVM__NN_MAX_BODY(S)                                                                \
    {                                                                                       \
        int32_t o, j, r, t;                                                                 \
        if (n >= 16) {                                                                      \
            for (o = 0; o + 16 <= n; o += 16)                                               \
                PFVM__NN_MAX_BLK(S, 16, o)                                                  \
            if (o < n)                                                                      \
                PFVM__NN_MAX_BLK(S, 16, n - 16)                                             \
        } else {                                                                            \
            for (o = 0; o < n; o++)                                                         \
                PFVM__NN_MAX_BLK(S, 1, o)                                                   \
        }                                                                                   \
    }

PFVM_DISPATCH static void pfvm__nn_max_s1(float *PFVM_RESTRICT y, const float *PFVM_RESTRICT x, int32_t nkh,
                                          int32_t rs, int32_t kw, int32_t dw, int32_t n)
PFVM__NN_MAX_BODY(1)

static void pfvm__nn_max_sn(float *PFVM_RESTRICT y, const float *PFVM_RESTRICT x, int32_t nkh, int32_t rs,
                            int32_t kw, int32_t dw, int32_t n, int32_t sw)
PFVM__NN_MAX_BODY(sw)

#ifdef PFVM_DISPATCH_CLONES
/* Stride 2 with AVX2, the loads as in pfvm__nn_dw_s2_avx2; max(p, acc)
 * is p > acc ? p : acc, NaNs and signed zeros included. */
__attribute__((target("avx2"))) static void pfvm__nn_max_s2_avx2(float *y, const float *x, int32_t nkh, int32_t rs,
                                                                  int32_t kw, int32_t dw, int32_t n)
{
    int32_t o = 0, r, t;
    if (n < 8) {
        pfvm__nn_max_sn(y, x, nkh, rs, kw, dw, n, 2);
        return;
    }
    for (;;) {
        __m256 acc = _mm256_setzero_ps();
        for (r = 0; r < nkh; r++)
            for (t = 0; t < kw; t++) {
                const float *p = x + r * rs + t * dw + 2 * o;
                __m256 lo = _mm256_loadu_ps(p), hi = _mm256_loadu_ps(p + 7);
                __m256 ev = _mm256_shuffle_ps(lo, hi, 0xD8);
                ev = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(ev), 0xD8));
                acc = r || t ? _mm256_max_ps(ev, acc) : ev;
            }
        _mm256_storeu_ps(y + o, acc);
        if (o + 8 == n)
            return;
        o = o + 16 <= n ? o + 8 : n - 8;
    }
}
#endif

#ifdef PFVM_AVX512_KERNELS
/* pfvm__nn_max_s2_avx2 in blocks of 16 outputs (squeezenet's 3x3 stride-2
 * pools): the even columns of 31 floats from two loads (p[0..15] and
 * p[15..30]: nothing read past the last column the window needs) and one
 * permute, half the shuffles per output of the AVX2 loop; the same
 * comparisons in the same order (max(p, acc): p > acc ? p : acc). */
__attribute__((target("avx512f"))) static void pfvm__nn_max_s2_avx512(float *y, const float *x, int32_t nkh, int32_t rs,
                                                                    int32_t kw, int32_t dw, int32_t n)
{
    const __m512i ev = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 17, 19, 21, 23, 25, 27, 29, 31);
    int32_t o = 0, r, t;
    if (n < 16) {
        pfvm__nn_max_s2_avx2(y, x, nkh, rs, kw, dw, n);
        return;
    }
    for (;;) {
        __m512 acc = _mm512_setzero_ps();
        for (r = 0; r < nkh; r++)
            for (t = 0; t < kw; t++) {
                const float *p = x + r * rs + t * dw + 2 * o;
                __m512 e = _mm512_permutex2var_ps(_mm512_loadu_ps(p), ev, _mm512_loadu_ps(p + 15));
                acc = r || t ? _mm512_max_ps(e, acc) : e;
            }
        _mm512_storeu_ps(y + o, acc);
        if (o + 16 == n)
            return;
        o = o + 32 <= n ? o + 16 : n - 16;
    }
}
#endif

static float pfvm__nn_max_one(const pfvm__nn_2d *d, const float *x, int32_t kha, int32_t khb, int32_t ih0, int32_t ow)
{
    int32_t iw0 = ow * d->SW - d->PL, r, t, ta, tb, any = 0;
    float best = -INFINITY;
    /* only the kernel columns inside the row: a kernel of 10^6 columns
     * (SAME padding) cost 10^6 tests per output */
    pfvm__nn_dw_range(d->KW, d->DW, iw0, 0, d->W, &ta, &tb);
    for (r = kha; r < khb; r++) {
        const float *row = x + (ih0 + r * d->DH) * d->W;
        for (t = ta; t < tb; t++) {
            int32_t iw = iw0 + t * d->DW;
            if (!any || row[iw] > best) {
                best = row[iw];
                any = 1;
            }
        }
    }
    return best;
}

#if (!defined(PFVM_DISPATCH_CLONES) && (defined(PFVM_CONV_DIRECT) || (defined(__arm__) && !defined(__aarch64__)))) || \
    defined(PFVM_SMALL_KERNELS) || defined(PFVM_LEAN_KERNELS)
#define PFVM__NN_MAX_2X2 1
/* 2x2 windows, stride 2, no padding, none past the input (a CNN's usual
 * pooling) on 32-bit Arm and in PFVM_SMALL_KERNELS builds: the four values
 * compared in the general loop's order, about 17 instructions per output
 * on a Cortex-M4 where the one-column blocks took 80 (and the generic
 * loop about 500). 0: not such a window. */
static int pfvm__nn_max_2x2(const pfvm__nn_2d *d, const float *x, float *y)
{
    int32_t oh, ow, W = d->W;
    if (d->KH != 2 || d->KW != 2 || d->SH != 2 || d->SW != 2 || d->DH != 1 || d->DW != 1 || d->PT || d->PL ||
        2 * d->OH > d->H || 2 * d->OW > W)
        return 0;
    for (oh = 0; oh < d->OH; oh++) {
        const float *p = x + 2 * oh * W;
        for (ow = 0; ow < d->OW; ow++, p += 2) {
            float best = p[0];
            best = p[1] > best ? p[1] : best;
            best = p[W] > best ? p[W] : best;
            *y++ = p[W + 1] > best ? p[W + 1] : best;
        }
    }
    return 1;
}
#endif

static void pfvm__nn_max_plane(const pfvm__nn_2d *d, const float *x, float *y)
{
    int32_t oh, ow, ia, ib;
#if !defined(PFVM_DISPATCH_CLONES) && (defined(PFVM_CONV_DIRECT) || (defined(__arm__) && !defined(__aarch64__)))
    if (pfvm__nn_max_2x2(d, x, y))
        return;
#endif
    pfvm__nn_inner_cols(d, &ia, &ib);
    for (oh = 0; oh < d->OH; oh++) {
        int32_t ih0 = oh * d->SH - d->PT, kha, khb, done = ia;
        float *yr = y + oh * d->OW;
        pfvm__nn_dw_range(d->KH, d->DH, ih0, 0, d->H, &kha, &khb);
        if (khb > kha && ib > ia) {
            const float *xr = x + (ih0 + kha * d->DH) * d->W + ia * d->SW - d->PL;
            int32_t nkh = khb - kha, rs = d->DH * d->W;
            if (d->SW == 1)
                pfvm__nn_max_s1(yr + ia, xr, nkh, rs, d->KW, d->DW, ib - ia);
#ifdef PFVM_DISPATCH_CLONES
#ifdef PFVM_AVX512_KERNELS
            else if (d->SW == 2 && pfvm__have_avx512())
                pfvm__nn_max_s2_avx512(yr + ia, xr, nkh, rs, d->KW, d->DW, ib - ia);
#endif
            else if (d->SW == 2 && pfvm__nn_have_avx2())
                pfvm__nn_max_s2_avx2(yr + ia, xr, nkh, rs, d->KW, d->DW, ib - ia);
#endif
            else
                pfvm__nn_max_sn(yr + ia, xr, nkh, rs, d->KW, d->DW, ib - ia, d->SW);
            done = ib;
        }
        for (ow = 0; ow < ia; ow++)
            yr[ow] = pfvm__nn_max_one(d, x, kha, khb, ih0, ow);
        for (ow = done; ow < d->OW; ow++)
            yr[ow] = pfvm__nn_max_one(d, x, kha, khb, ih0, ow);
    }
}

#ifndef PFVM_POOL_NO_INT8 /* else 8-bit MaxPool runs the generic loop */
/* 2-D max pooling of 8-bit planes (the integer form of quantized models):
 * each output is its window's largest value inside the input, in 32-bit
 * index math. The output columns whose windows lie wholly inside the row
 * run through pfvm__nn_max8_row_* (2x2 and 3x3 windows unrolled), the
 * others find their kernel columns with pfvm__nn_krange32: no 64-bit
 * division per output (a libgcc call each on 32-bit cores, most of a
 * quantized CNN's pooling time). A window wholly in the padding stores
 * -inf saturated (the type's lowest value), as the general loop does. */

/* The kernel positions [*a, *b) of a window of k taps d apart starting at
 * off that land in [0, n). 32-bit division: pfvm__nn_2d_win bounds
 * n + pads + k * d by INT32_MAX, so the rounding-up sums fit. */
static void pfvm__nn_krange32(int32_t k, int32_t d, int32_t off, int32_t n, int32_t *a, int32_t *b)
{
    int32_t x = off < 0 ? (d - 1 - off) / d : 0;
    int32_t z = n - off > 0 ? (n - off + d - 1) / d : 0;
    *a = x > k ? k : x;
    *b = z > k ? k : z < *a ? *a : z;
}

/* best = the largest value of the window at p: nkh rows rs apart, kw
 * columns dw apart (at least one value) */
#define PFVM__NN_MAX8_WIN(p, nkh, rs, kw, dw, best)                                                 \
    {                                                                                               \
        int32_t r_, t_;                                                                             \
        best = (p)[0];                                                                              \
        for (r_ = 0; r_ < (nkh); r_++)                                                              \
            for (t_ = 0; t_ < (kw); t_++) {                                                         \
                int32_t v_ = (p)[r_ * (rs) + t_ * (dw)];                                            \
                best = v_ > best ? v_ : best;                                                       \
            }                                                                                       \
    }
#define PFVM__NN_MAX2(a, b) ((a) > (b) ? (a) : (b))
/* n outputs of a row whose windows (nkh rows rs apart, kw columns dw
 * apart) lie inside the input, sw apart, the first at p */
#define PFVM__NN_MAX8_ROW(T)                                                                        \
    {                                                                                               \
        int32_t o, best;                                                                            \
        if (nkh == 2 && kw == 2 && dw == 1) {                                                       \
            const T *q = p + rs;                                                                    \
            for (o = 0; o < n; o++, p += sw, q += sw) {                                             \
                int32_t a = PFVM__NN_MAX2(p[0], p[1]), b = PFVM__NN_MAX2(q[0], q[1]);               \
                y[o] = (T)PFVM__NN_MAX2(a, b);                                                      \
            }                                                                                       \
        } else if (nkh == 3 && kw == 3 && dw == 1) {                                                \
            const T *q = p + rs, *u = q + rs;                                                       \
            for (o = 0; o < n; o++, p += sw, q += sw, u += sw) {                                    \
                int32_t a = PFVM__NN_MAX2(p[0], p[1]), b = PFVM__NN_MAX2(q[0], q[1]);               \
                int32_t c = PFVM__NN_MAX2(u[0], u[1]);                                              \
                a = PFVM__NN_MAX2(a, p[2]), b = PFVM__NN_MAX2(b, q[2]), c = PFVM__NN_MAX2(c, u[2]); \
                a = PFVM__NN_MAX2(a, b);                                                            \
                y[o] = (T)PFVM__NN_MAX2(a, c);                                                      \
            }                                                                                       \
        } else {                                                                                    \
            for (o = 0; o < n; o++, p += sw) {                                                      \
                PFVM__NN_MAX8_WIN(p, nkh, rs, kw, dw, best)                                         \
                y[o] = (T)best;                                                                     \
            }                                                                                       \
        }                                                                                           \
    }
#if defined(PFVM_DISPATCH_CLONES) && defined(__SSE2__)
/* 3x3 windows at stride 2 (resnet's MaxPool after its stem), 16 outputs
 * a step: the three rows' maximum over 34 bytes (columns 2o .. 2o+33),
 * its even bytes, odd bytes and even bytes from 2 on (packus of 16-bit
 * lanes) are each output's three columns. Only while window o + 16
 * exists (its columns 2(o+16) .. +2 are read). Returns the outputs done. */
static int32_t pfvm__nn_max8_3x3s2_u8(uint8_t *y, const uint8_t *p, int32_t rs, int32_t n)
{
    const __m128i lo = _mm_set1_epi16(0xff);
    int32_t o;
    for (o = 0; o + 16 < n; o += 16, p += 32) {
#define PFVM__NN_MAX3ROWS(at)                                                                                    \
    _mm_max_epu8(_mm_max_epu8(_mm_loadu_si128((const __m128i *)(const void *)(p + (at))),                        \
                              _mm_loadu_si128((const __m128i *)(const void *)(p + rs + (at)))),                  \
                 _mm_loadu_si128((const __m128i *)(const void *)(p + 2 * rs + (at))))
        __m128i v0 = PFVM__NN_MAX3ROWS(0), v1 = PFVM__NN_MAX3ROWS(16);
        __m128i w0 = PFVM__NN_MAX3ROWS(2), w1 = PFVM__NN_MAX3ROWS(18);
#undef PFVM__NN_MAX3ROWS
        __m128i ev = _mm_packus_epi16(_mm_and_si128(v0, lo), _mm_and_si128(v1, lo));
        __m128i od = _mm_packus_epi16(_mm_srli_epi16(v0, 8), _mm_srli_epi16(v1, 8));
        __m128i e2 = _mm_packus_epi16(_mm_and_si128(w0, lo), _mm_and_si128(w1, lo));
        _mm_storeu_si128((__m128i *)(void *)(y + o), _mm_max_epu8(_mm_max_epu8(ev, od), e2));
    }
    return o;
}
#endif

static void pfvm__nn_max8_row_u8(uint8_t *y, const uint8_t *p, int32_t nkh, int32_t rs, int32_t kw, int32_t dw,
                                 int32_t sw, int32_t n)
{
#if defined(PFVM_DISPATCH_CLONES) && defined(__SSE2__)
    if (nkh == 3 && kw == 3 && dw == 1 && sw == 2) {
        int32_t done = pfvm__nn_max8_3x3s2_u8(y, p, rs, n);
        y += done, p += 2 * done, n -= done;
    }
#endif
    PFVM__NN_MAX8_ROW(uint8_t)
}

static void pfvm__nn_max8_row_s8(int8_t *y, const int8_t *p, int32_t nkh, int32_t rs, int32_t kw, int32_t dw,
                                 int32_t sw, int32_t n)
PFVM__NN_MAX8_ROW(int8_t)

/* One plane: [ia, ib) are the output columns whose windows lie inside the
 * row (the same for every plane: found once per node). */
#define PFVM__NN_MAX8_PLANE(T, ROW, LOWEST)                                                         \
    {                                                                                               \
        int32_t oh, ow, j;                                                                          \
        for (oh = 0; oh < d->OH; oh++) {                                                            \
            int32_t ih0 = oh * d->SH - d->PT, kha, khb, nkh, rs, best;                              \
            int32_t lo[2], hi[2];                                                                   \
            T *yr = y + oh * d->OW;                                                                 \
            const T *xr;                                                                            \
            pfvm__nn_krange32(d->KH, d->DH, ih0, d->H, &kha, &khb);                                 \
            if (kha == khb) {                                                                       \
                for (ow = 0; ow < d->OW; ow++)                                                      \
                    yr[ow] = (T)(LOWEST);                                                           \
                continue;                                                                           \
            }                                                                                       \
            nkh = khb - kha;                                                                        \
            rs = nkh > 1 ? d->DH * d->W : 0; /* rows inside: DH < H */                              \
            xr = x + (ih0 + kha * d->DH) * d->W;                                                    \
            if (ib > ia)                                                                            \
                ROW(yr + ia, xr + (ia * d->SW - d->PL), nkh, rs, d->KW, d->DW, d->SW, ib - ia);     \
            lo[0] = 0, hi[0] = ia, lo[1] = ib, hi[1] = d->OW;                                       \
            for (j = 0; j < 2; j++)                                                                 \
                for (ow = lo[j]; ow < hi[j]; ow++) {                                                \
                    int32_t iw0 = ow * d->SW - d->PL, kwa, kwb;                                     \
                    pfvm__nn_krange32(d->KW, d->DW, iw0, d->W, &kwa, &kwb);                         \
                    if (kwa == kwb) {                                                               \
                        yr[ow] = (T)(LOWEST);                                                       \
                        continue;                                                                   \
                    }                                                                               \
                    PFVM__NN_MAX8_WIN(xr + (iw0 + kwa * d->DW), nkh, rs, kwb - kwa, d->DW, best)    \
                    yr[ow] = (T)best;                                                               \
                }                                                                                   \
        }                                                                                           \
    }
static void pfvm__nn_max8_plane_u8(const pfvm__nn_2d *d, int32_t ia, int32_t ib, const uint8_t *x, uint8_t *y)
PFVM__NN_MAX8_PLANE(uint8_t, pfvm__nn_max8_row_u8, 0)

static void pfvm__nn_max8_plane_s8(const pfvm__nn_2d *d, int32_t ia, int32_t ib, const int8_t *x, int8_t *y)
PFVM__NN_MAX8_PLANE(int8_t, pfvm__nn_max8_row_s8, INT8_MIN)

/* 2x2 windows at stride 2 wholly inside the plane (no padding, no
 * dilation: digits' MaxPool): the whole plane in one loop over two row
 * pointers, no per-row window ranges. On the DSP extension (Cortex-M4/M7)
 * two outputs per step: USUB8/SSUB8 set a byte's GE flag where the top
 * row's byte is not below the bottom one's and SEL takes the larger bytes;
 * the same on the word and itself shifted by a byte pairs the columns
 * (bytes 0 and 2 hold the two outputs): 10 instructions for 2 outputs,
 * against about 49 per output through the row kernel. */
static int pfvm__nn_max8_is_2x2(const pfvm__nn_2d *d)
{
    return d->KH == 2 && d->KW == 2 && d->SH == 2 && d->SW == 2 && d->DH == 1 && d->DW == 1 && d->PT == 0 &&
           d->PL == 0 && 2 * d->OH <= d->H && 2 * d->OW <= d->W;
}

#if defined(__ARM_FEATURE_DSP) && defined(__GNUC__) && defined(__thumb2__)
/* the largest bytes of a and b, lane by lane (INS: usub8 or ssub8) */
#define PFVM__NN_MAX8X4(INS, a, b, r) __asm__(INS " %0, %1, %2\n\tsel %0, %1, %2" : "=&r"(r) : "r"(a), "r"(b) : "cc")
/* a word at any byte: LDR takes unaligned addresses on the M4 and M7 */
typedef uint32_t pfvm__nn_bword __attribute__((may_alias, aligned(1)));
#define PFVM__NN_MAX8_PAIRS(T, INS)                                                                 \
    for (; o + 2 <= OW; o += 2, p += 4, q += 4) {                                                   \
        uint32_t u = *(const pfvm__nn_bword *)(const void *)p, v = *(const pfvm__nn_bword *)(const void *)q, m, r; \
        PFVM__NN_MAX8X4(INS, u, v, m);                                                              \
        PFVM__NN_MAX8X4(INS, m, m >> 8, r);                                                         \
        y[o] = (T)(r & 0xffu);                                                                      \
        y[o + 1] = (T)((r >> 16) & 0xffu);                                                          \
    }
#else
#define PFVM__NN_MAX8_PAIRS(T, INS)
#endif
#define PFVM__NN_MAX8_2X2(T, INS)                                                                   \
    {                                                                                               \
        int32_t oh, o;                                                                              \
        for (oh = 0; oh < OH; oh++, y += OW) {                                                      \
            const T *p = x + 2 * oh * W, *q = p + W;                                                \
            o = 0;                                                                                  \
            PFVM__NN_MAX8_PAIRS(T, INS)                                                             \
            for (; o < OW; o++, p += 2, q += 2) {                                                   \
                int32_t a = PFVM__NN_MAX2(p[0], p[1]), b = PFVM__NN_MAX2(q[0], q[1]);               \
                y[o] = (T)PFVM__NN_MAX2(a, b);                                                      \
            }                                                                                       \
        }                                                                                           \
    }
static void pfvm__nn_max8_2x2_u8(const uint8_t *x, int32_t W, int32_t OH, int32_t OW, uint8_t *y)
PFVM__NN_MAX8_2X2(uint8_t, "usub8")

static void pfvm__nn_max8_2x2_s8(const int8_t *x, int32_t W, int32_t OH, int32_t OW, int8_t *y)
PFVM__NN_MAX8_2X2(int8_t, "ssub8")

static void pfvm__nn_max_planes_8(const pfvm__nn_2d *d, const pfvm_tensor *X, pfvm_tensor *Y, int64_t NC)
{
    int64_t c, in_plane = (int64_t)d->H * d->W, out_plane = (int64_t)d->OH * d->OW;
    int32_t ia, ib;
    if (pfvm__nn_max8_is_2x2(d)) {
        for (c = 0; c < NC; c++)
            if (X->dtype == PFVM_UINT8)
                pfvm__nn_max8_2x2_u8((const uint8_t *)X->data + c * in_plane, d->W, d->OH, d->OW,
                                     (uint8_t *)Y->data + c * out_plane);
            else
                pfvm__nn_max8_2x2_s8((const int8_t *)X->data + c * in_plane, d->W, d->OH, d->OW,
                                     (int8_t *)Y->data + c * out_plane);
        return;
    }
    pfvm__nn_inner_cols(d, &ia, &ib);
    for (c = 0; c < NC; c++)
        if (X->dtype == PFVM_UINT8)
            pfvm__nn_max8_plane_u8(d, ia, ib, (const uint8_t *)X->data + c * in_plane, (uint8_t *)Y->data + c * out_plane);
        else
            pfvm__nn_max8_plane_s8(d, ia, ib, (const int8_t *)X->data + c * in_plane, (int8_t *)Y->data + c * out_plane);
}
#endif

/* PFVM_POOL_PLANES_ONLY (written by `interp ops --config`): float MaxPool
 * and AveragePool run on 2-D (or 1-D) planes without the indices output
 * only, so the generic float loop below is left out. */
#ifdef PFVM_POOL_PLANES_ONLY
#define PFVM__POOL_PLANES_ONLY 1
#else
#define PFVM__POOL_PLANES_ONLY 0
static void pfvm__nn_pool_f32(const pfvm_tensor *X, pfvm_tensor *Y, pfvm_tensor *I, int kind, int64_t NC,
                              const int64_t *in_sp, const int64_t *out_sp, const pfvm__nn_win *w, int count_pad,
                              int storage)
{
    const float *x = (const float *)X->data;
    float *y = (float *)Y->data;
    int64_t c, o[PFVM__NN_SP], kp[PFVM__NN_SP], at = 0;
    int i;
    for (c = 0; c < NC; c++)
        for (o[0] = 0; o[0] < out_sp[0]; o[0]++)
            for (o[1] = 0; o[1] < out_sp[1]; o[1]++)
                for (o[2] = 0; o[2] < out_sp[2]; o[2]++, at++) {
                    int64_t org[PFVM__NN_SP], ka[PFVM__NN_SP], kb[PFVM__NN_SP], cnt = 1, arg = -1;
                    float best = 0, sum = 0;
                    for (i = 0; i < PFVM__NN_SP; i++) {
                        org[i] = o[i] * w->s[i] - w->pb[i];
                        pfvm__nn_krange(org[i], w->d[i], w->k[i], 0, in_sp[i], &ka[i], &kb[i]);
                        if (count_pad) {
                            int64_t pa, pz;
                            pfvm__nn_krange(org[i], w->d[i], w->k[i], -w->pb[i], in_sp[i] + w->pe[i], &pa, &pz);
                            cnt *= pz - pa;
                        } else {
                            cnt *= kb[i] - ka[i];
                        }
                    }
                    for (kp[0] = ka[0]; kp[0] < kb[0]; kp[0]++)
                        for (kp[1] = ka[1]; kp[1] < kb[1]; kp[1]++) {
                            int64_t q0 = org[0] + kp[0] * w->d[0], q1 = org[1] + kp[1] * w->d[1];
                            int64_t row = ((c * in_sp[0] + q0) * in_sp[1] + q1) * in_sp[2] + org[2];
                            const float *r = x + row;
                            int64_t d2 = w->d[2];
                            if (kind == PFVM__NN_MAX) {
                                for (kp[2] = ka[2]; kp[2] < kb[2]; kp[2]++) {
                                    float v = r[kp[2] * d2];
                                    if (arg < 0 || v > best) {
                                        int64_t q2 = org[2] + kp[2] * d2;
                                        best = v;
                                        arg = storage ? c * in_sp[0] * in_sp[1] * in_sp[2] + (q2 * in_sp[1] + q1) * in_sp[0] + q0
                                                      : row + kp[2] * d2;
                                    }
                                }
                            } else {
                                for (kp[2] = ka[2]; kp[2] < kb[2]; kp[2]++)
                                    sum += r[kp[2] * d2];
                            }
                        }
                    if (kind == PFVM__NN_MAX) {
                        y[at] = arg < 0 ? -INFINITY : best;
                        if (I)
                            ((int64_t *)I->data)[at] = arg < 0 ? 0 : arg;
                    } else {
                        y[at] = cnt ? sum / (float)cnt : 0.0f;
                    }
                }
}
#endif

/* ceil(diff / s) clamped to [0, n] where n * s <= INT32_MAX (a window's
 * reach, which pfvm__nn_2d_win bounds): one 32-bit division. */
static int32_t pfvm__nn_steps32(int64_t diff, int32_t s, int32_t n)
{
    if (diff <= 0)
        return 0;
    if (diff > (int64_t)n * s)
        return n;
    return (int32_t)(((uint32_t)diff + (uint32_t)s - 1) / (uint32_t)s); /* diff, s < 2^31: no wrap */
}

/* pfvm__nn_dw_range's kernel positions [*a, *b) for windows within
 * pfvm__nn_2d_win's bounds (the pads' sums may pass 2^31: 64-bit
 * differences, 32-bit divisions). */
static void pfvm__nn_range32(int32_t n, int32_t s, int32_t off, int64_t lo, int64_t hi, int32_t *a, int32_t *b)
{
    *a = pfvm__nn_steps32(lo - off, s, n);
    *b = pfvm__nn_steps32(hi - off, s, n);
    if (*b < *a)
        *b = *a;
}

/* 2-D float average (and, in PFVM_SMALL_KERNELS and PFVM_LEAN_KERNELS
 * builds, max) pooling in 32-bit index math (the loops above run theirs in
 * 64 bits for every element, through library divisions on a 32-bit core):
 * the same sums, in the same order, and the same counts; the same largest
 * value (the first of equals, NaN kept as the loop above keeps it). */
static void pfvm__nn_pool_planes(const pfvm__nn_2d *d, const pfvm__nn_win *w, int kind, int count_pad, const float *x,
                                 float *y, int64_t NC)
{
    int64_t c;
    int32_t oh, ow, r, t;
    for (c = 0; c < NC; c++, x += d->H * d->W)
        for (oh = 0; oh < d->OH; oh++) {
            int32_t ih0 = oh * d->SH - d->PT, ka, kb, pa, pz;
            pfvm__nn_range32(d->KH, d->DH, ih0, 0, d->H, &ka, &kb);
            pa = ka;
            pz = kb;
            if (count_pad) /* the padded input, not the window's overhang in ceil mode */
                pfvm__nn_range32(d->KH, d->DH, ih0, -d->PT, d->H + w->pe[0], &pa, &pz);
            for (ow = 0; ow < d->OW; ow++, y++) {
                int32_t iw0 = ow * d->SW - d->PL, ta, tb, qa, qz, cnt, any = 0;
                float sum = 0, best = -INFINITY;
                pfvm__nn_range32(d->KW, d->DW, iw0, 0, d->W, &ta, &tb);
                qa = ta;
                qz = tb;
                if (count_pad)
                    pfvm__nn_range32(d->KW, d->DW, iw0, -d->PL, d->W + w->pe[1], &qa, &qz);
                for (r = ka; r < kb; r++) {
                    const float *row = x + (ih0 + r * d->DH) * d->W;
                    for (t = ta; t < tb; t++) {
                        float v = row[iw0 + t * d->DW];
                        if (kind != PFVM__NN_MAX) {
                            sum += v;
                        } else if (!any || v > best) { /* a window wholly in the padding keeps -inf */
                            best = v;
                            any = 1;
                        }
                    }
                }
                cnt = (pz - pa) * (qz - qa);
                *y = kind == PFVM__NN_MAX ? best : cnt ? sum / (float)cnt : 0.0f;
            }
        }
}

/* 2-D float max pooling of NC planes, split over k's threads by planes
 * where the windows' work pays for a region (each plane is computed alone:
 * the same bits with any number of threads). */
typedef struct pfvm__nn_maxpar {
    const pfvm__nn_2d *d;
    const float *x;
    float *y;
    int64_t NC;
    int parts;
} pfvm__nn_maxpar;

static void pfvm__nn_max_range(const pfvm__nn_maxpar *p, int64_t c0, int64_t c1)
{
    int64_t c, in_plane = (int64_t)p->d->H * p->d->W, out_plane = (int64_t)p->d->OH * p->d->OW;
    for (c = c0; c < c1; c++)
        pfvm__nn_max_plane(p->d, p->x + c * in_plane, p->y + c * out_plane);
}

#if !defined(PFVM_NO_THREADS)
static void pfvm__nn_max_part(void *ctx, int i)
{
    const pfvm__nn_maxpar *p = (const pfvm__nn_maxpar *)ctx;
    pfvm__nn_max_range(p, p->NC * i / p->parts, p->NC * (i + 1) / p->parts);
}
#endif

static void pfvm__nn_max_planes(pfvm_kctx *k, const pfvm__nn_2d *d, const float *x, float *y, int64_t NC)
{
    pfvm__nn_maxpar p;
    p.d = d;
    p.x = x;
    p.y = y;
    p.NC = NC;
#if !defined(PFVM_NO_THREADS)
    {
        /* float: no soft double on Cortex-M */
        float work = (float)NC * (float)d->OH * (float)d->OW * (float)d->KH * (float)d->KW;
        p.parts = work < PFVM__NN_DW_PAR_MIN ? 1 : PFVM__KTHREADS(k);
        if (p.parts > NC)
            p.parts = (int)NC;
        if (p.parts > 1) {
#ifdef PFVM_DISPATCH_CLONES
            (void)pfvm__nn_have_avx2(); /* its cached answer, set before the threads read it */
#endif
            pfvm_kctx_parallel(k, p.parts, pfvm__nn_max_part, &p);
            return;
        }
    }
#else
    (void)k;
#endif
    pfvm__nn_max_range(&p, 0, NC);
}

/* Max, average and Lp pooling: for each output position, the kernel
 * positions that land in the input are found per dim first, so the inner
 * loops test nothing. */
static pfvm_code pfvm__nn_pool(pfvm_kctx *k, int kind)
{
    const pfvm_tensor *X = k->in[0];
    pfvm_tensor *Y, *I = k->n_out > 1 ? k->out[1] : NULL;
    int64_t in_sp[PFVM__NN_SP], out_sp[PFVM__NN_SP], dims[PFVM_MAX_RANK], NC, c, o[PFVM__NN_SP], kp[PFVM__NN_SP], at = 0;
    int count_pad = pfvm_node_attr_int(k->node, "count_include_pad", 0) != 0;
    int storage = pfvm_node_attr_int(k->node, "storage_order", 0) != 0;
    float p = pfvm_node_attr_float(k->node, "p", 2.0f);
    pfvm__nn_win w;
    pfvm__nn_2d d2;
    int i, nsp = X->rank - 2;
    if (nsp < 1)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "input rank %d: pooling needs N, C and spatial dims", X->rank);
    if (kind == PFVM__NN_LP && !(p > 0))
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "p must be positive");
    pfvm__nn_sp3(X, in_sp);
    if (pfvm__nn_window(k->node, nsp, NULL, &w, k->st) || pfvm__nn_resolve(&w, in_sp, out_sp, k->st))
        return pfvm__op_fail(k->st, k->node, k->st ? k->st->code : PFVM_ERR_INVALID, "%s", k->st ? k->st->msg : "window");
    dims[0] = X->dims[0];
    dims[1] = X->dims[1];
    for (i = 0; i < nsp; i++)
        dims[i + 2] = out_sp[i];
    if (pfvm_kctx_output(k, 0, X->dtype, X->rank, dims) || (I && pfvm_kctx_output(k, 1, PFVM_INT64, X->rank, dims)))
        return k->st ? k->st->code : PFVM_ERR_SHAPE;
    Y = k->out[0];
    NC = X->dims[0] * X->dims[1];
    /* PFVM_SMALL_KERNELS, PFVM_LEAN_KERNELS: float pooling takes
     * pfvm__nn_pool_f32 (the same values; the 2-D plane loops are not
     * compiled in), but for the 2x2 loop */
#if defined(PFVM__NN_MAX_2X2) && (PFVM__LA_SMALL || PFVM__LA_LEAN)
    if (kind == PFVM__NN_MAX && !I && X->dtype == PFVM_FLOAT && Y->dtype == PFVM_FLOAT &&
        pfvm__nn_2d_win(&w, in_sp, out_sp, &d2) && pfvm__nn_max_2x2(&d2, (const float *)X->data, (float *)Y->data)) {
        for (c = 1; c < NC; c++)
            pfvm__nn_max_2x2(&d2, (const float *)X->data + c * d2.H * d2.W, (float *)Y->data + c * d2.OH * d2.OW);
        return PFVM_OK;
    }
#endif
    if (!PFVM__LA_SMALL && !PFVM__LA_LEAN && kind == PFVM__NN_MAX && !I && X->dtype == PFVM_FLOAT &&
        Y->dtype == PFVM_FLOAT && pfvm__nn_2d_win(&w, in_sp, out_sp, &d2)) {
        pfvm__nn_max_planes(k, &d2, (const float *)X->data, (float *)Y->data, NC);
        return PFVM_OK;
    }
#ifndef PFVM_POOL_NO_INT8
    if (kind == PFVM__NN_MAX && !I && (X->dtype == PFVM_UINT8 || X->dtype == PFVM_INT8) && Y->dtype == X->dtype &&
        pfvm__nn_2d_win(&w, in_sp, out_sp, &d2)) {
        pfvm__nn_max_planes_8(&d2, X, Y, NC);
        return PFVM_OK;
    }
#endif
    /* float max pooling gets here in the small and lean builds only (the
     * test keeps the loop out of other builds' MaxPool-only images) */
    if ((kind == PFVM__NN_AVG || PFVM__LA_SMALL || PFVM__LA_LEAN) && !I && X->dtype == PFVM_FLOAT && Y->dtype == PFVM_FLOAT &&
        pfvm__nn_2d_win(&w, in_sp, out_sp, &d2) && w.pe[0] < INT32_MAX - in_sp[0] && w.pe[1] < INT32_MAX - in_sp[1]) {
        pfvm__nn_pool_planes(&d2, &w, kind, count_pad, (const float *)X->data, (float *)Y->data, NC);
        return PFVM_OK;
    }
#ifndef PFVM_POOL_PLANES_ONLY /* else such float pooling takes the double-precision loop below, or fails */
    if (kind != PFVM__NN_LP && X->dtype == PFVM_FLOAT && Y->dtype == PFVM_FLOAT) {
        pfvm__nn_pool_f32(X, Y, I, kind, NC, in_sp, out_sp, &w, count_pad, storage);
        return PFVM_OK;
    }
#endif
    if (!PFVM__F64)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_UNSUPPORTED,
                             PFVM__POOL_PLANES_ONLY && X->dtype == PFVM_FLOAT
                                 ? "this pooling of %s (3-D windows, the indices output or sizes past 2^31) is not in a "
                                   "PFVM_POOL_PLANES_ONLY build"
                                 : "this pooling of %s needs the double-precision path (not in a PFVM_FLOAT32_ONLY build)",
                             pfvm_dtype_name(X->dtype));
    for (c = 0; c < NC; c++)
        for (o[0] = 0; o[0] < out_sp[0]; o[0]++)
            for (o[1] = 0; o[1] < out_sp[1]; o[1]++)
                for (o[2] = 0; o[2] < out_sp[2]; o[2]++, at++) {
                    int64_t org[PFVM__NN_SP], ka[PFVM__NN_SP], kb[PFVM__NN_SP], cnt = 1, arg = -1;
                    double best = 0, sum = 0;
                    for (i = 0; i < PFVM__NN_SP; i++) {
                        org[i] = o[i] * w.s[i] - w.pb[i];
                        pfvm__nn_krange(org[i], w.d[i], w.k[i], 0, in_sp[i], &ka[i], &kb[i]);
                        if (count_pad) {
                            /* the padded input, not the window's overhang in ceil mode */
                            int64_t pa, pz;
                            pfvm__nn_krange(org[i], w.d[i], w.k[i], -w.pb[i], in_sp[i] + w.pe[i], &pa, &pz);
                            cnt *= pz - pa;
                        } else {
                            cnt *= kb[i] - ka[i];
                        }
                    }
                    for (kp[0] = ka[0]; kp[0] < kb[0]; kp[0]++)
                        for (kp[1] = ka[1]; kp[1] < kb[1]; kp[1]++)
                            for (kp[2] = ka[2]; kp[2] < kb[2]; kp[2]++) {
                                int64_t q0 = org[0] + kp[0] * w.d[0], q1 = org[1] + kp[1] * w.d[1], q2 = org[2] + kp[2] * w.d[2];
                                int64_t src = ((c * in_sp[0] + q0) * in_sp[1] + q1) * in_sp[2] + q2;
                                double v = pfvm__nn_ld(X, src);
                                if (kind == PFVM__NN_MAX) {
                                    if (arg < 0 || v > best) {
                                        best = v;
                                        arg = storage ? c * in_sp[0] * in_sp[1] * in_sp[2] + (q2 * in_sp[1] + q1) * in_sp[0] + q0
                                                      : src;
                                    }
                                } else {
                                    sum += kind == PFVM__NN_LP ? pow(fabs(v), p) : v;
                                }
                            }
                    if (kind == PFVM__NN_MAX) {
                        /* a window entirely in the padding sees only padding */
                        pfvm_red_store(Y, at, arg < 0 ? -INFINITY : best);
                        if (I)
                            ((int64_t *)I->data)[at] = arg < 0 ? 0 : arg;
                    } else if (kind == PFVM__NN_LP) {
                        pfvm_red_store(Y, at, pow(sum, 1.0 / p));
                    } else {
                        pfvm_red_store(Y, at, cnt ? sum / (double)cnt : 0.0);
                    }
                }
    return PFVM_OK;
}

static pfvm_code pfvm__nn_k_maxpool(pfvm_kctx *k)
{
    return pfvm__nn_pool(k, PFVM__NN_MAX);
}

static pfvm_code pfvm__nn_k_avgpool(pfvm_kctx *k)
{
    return pfvm__nn_pool(k, PFVM__NN_AVG);
}

static pfvm_code pfvm__nn_k_lppool(pfvm_kctx *k)
{
    return pfvm__nn_pool(k, PFVM__NN_LP);
}

static pfvm_code pfvm__nn_infer_global(pfvm_ictx *c)
{
    pfvm_shape out = c->in[0]->type.shape;
    int i;
    if (out.rank < 0)
        return pfvm_infer_unknown(c, 0, c->in[0]->type.dtype, -1);
    if (out.rank < 2)
        return pfvm__fail(c->st, PFVM_ERR_SHAPE, "input rank %d: global pooling needs N and C", out.rank);
    for (i = 2; i < out.rank; i++)
        out.dims[i] = pfvm_sym_const(c->syms, 1);
    pfvm_ival_set_tensor(c->out[0], c->in[0]->type.dtype, &out);
    return PFVM_OK;
}

/* 0 + the sum of x[0..n): planes of 64 and more in 32 running sums (x[i]
 * into sum i mod 32, each in order) added pairwise at the end, then the
 * last n mod 32 in order; one chain of dependent additions below. Plain C
 * of fixed-length blocks (compilers vectorize them): the same bits on
 * every target, in a fraction of the one chain's time on large planes. */
PFVM_DISPATCH static float pfvm__nn_sum_f32(const float *x, int64_t n)
{
    float s[32], t = 0;
    int64_t i = 0;
    int j, w;
    if (n >= 64) {
        for (j = 0; j < 32; j++)
            s[j] = 0.0f + x[j];
        for (i = 32; i + 32 <= n; i += 32)
            for (j = 0; j < 32; j++)
                s[j] += x[i + j];
        for (w = 16; w >= 1; w /= 2)
            for (j = 0; j < w; j++)
                s[j] += s[j + w];
        t = s[0];
    }
    for (; i < n; i++)
        t += x[i];
    return t;
}

#ifndef PFVM_NO_THREADS
/* Global average and max pooling of float32 planes, split by channels
 * (part i of `parts`: each channel is summed whole by one thread, so the
 * bits do not depend on the split; pfvm__nn_global's loop, per part). */
typedef struct pfvm__nn_gpool {
    const float *x;
    float *y;
    int64_t nc, plane;
    int kind, parts;
} pfvm__nn_gpool;

/* Elements from which global pooling is split: below, waking a thread
 * costs more than half the work. */
#define PFVM__NN_GPOOL_PAR_MIN 32768

static void pfvm__nn_gpool_part(void *ctx, int part)
{
    const pfvm__nn_gpool *g = (const pfvm__nn_gpool *)ctx;
    int64_t c, i, c1 = g->nc * (part + 1) / g->parts;
    for (c = g->nc * part / g->parts; c < c1; c++) {
        const float *x = g->x + c * g->plane;
        float acc = g->kind == PFVM__NN_MAX ? -INFINITY : 0;
        if (g->kind == PFVM__NN_AVG) {
            acc = pfvm__nn_sum_f32(x, g->plane);
        } else {
            for (i = 0; i < g->plane; i++)
                acc = x[i] > acc ? x[i] : acc;
        }
        g->y[c] = g->kind == PFVM__NN_AVG ? (g->plane ? acc / (float)g->plane : 0.0f) : acc;
    }
}
#endif

static pfvm_code pfvm__nn_global(pfvm_kctx *k, int kind)
{
    const pfvm_tensor *X = k->in[0];
    int64_t NC, plane, c, i, dims[PFVM_MAX_RANK];
    double p = pfvm_node_attr_float(k->node, "p", 2.0f);
    int d;
    if (X->rank < 2)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "input rank %d: global pooling needs N and C", X->rank);
    if (kind == PFVM__NN_LP && !(p > 0))
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "p must be positive");
    for (d = 0; d < X->rank; d++)
        dims[d] = d < 2 ? X->dims[d] : 1;
    if (pfvm_kctx_output(k, 0, X->dtype, X->rank, dims))
        return k->st ? k->st->code : PFVM_ERR_SHAPE;
    NC = X->dims[0] * X->dims[1];
    plane = pfvm__nn_plane(X);
    if (kind != PFVM__NN_LP && X->dtype == PFVM_FLOAT && k->out[0]->dtype == PFVM_FLOAT) {
#ifndef PFVM_NO_THREADS
        if ((float)NC * (float)plane >= (float)PFVM__NN_GPOOL_PAR_MIN && NC > 1 && PFVM__KTHREADS(k) > 1) {
            pfvm__nn_gpool g;
            g.x = (const float *)X->data, g.y = (float *)k->out[0]->data;
            g.nc = NC, g.plane = plane, g.kind = kind;
            g.parts = PFVM__KTHREADS(k) < NC ? PFVM__KTHREADS(k) : (int)NC;
            pfvm_kctx_parallel(k, g.parts, pfvm__nn_gpool_part, &g);
            return PFVM_OK;
        }
#endif
        for (c = 0; c < NC; c++) {
            const float *x = (const float *)X->data + c * plane;
            float acc = kind == PFVM__NN_MAX ? -INFINITY : 0;
            if (kind == PFVM__NN_AVG) {
                acc = pfvm__nn_sum_f32(x, plane);
            } else {
                for (i = 0; i < plane; i++)
                    acc = x[i] > acc ? x[i] : acc;
            }
            ((float *)k->out[0]->data)[c] = kind == PFVM__NN_AVG ? (plane ? acc / (float)plane : 0.0f) : acc;
        }
        return PFVM_OK;
    }
    for (c = 0; c < NC; c++) {
        double acc = kind == PFVM__NN_MAX ? -INFINITY : 0;
        for (i = 0; i < plane; i++) {
            double v = pfvm__nn_ld(X, c * plane + i);
            if (kind == PFVM__NN_MAX)
                acc = v > acc ? v : acc;
            else
                acc += kind == PFVM__NN_LP ? pow(fabs(v), p) : v;
        }
        if (kind == PFVM__NN_AVG)
            acc = plane ? acc / (double)plane : 0;
        else if (kind == PFVM__NN_LP)
            acc = pow(acc, 1.0 / p);
        pfvm_red_store(k->out[0], c, acc);
    }
    return PFVM_OK;
}

static pfvm_code pfvm__nn_k_gap(pfvm_kctx *k)
{
    return pfvm__nn_global(k, PFVM__NN_AVG);
}

static pfvm_code pfvm__nn_k_gmp(pfvm_kctx *k)
{
    return pfvm__nn_global(k, PFVM__NN_MAX);
}

static pfvm_code pfvm__nn_k_glp(pfvm_kctx *k)
{
    return pfvm__nn_global(k, PFVM__NN_LP);
}

/* ---- MaxRoiPool ----------------------------------------------------------------------------- */

static pfvm_code pfvm__nn_roi_shape(const pfvm_node *node, int64_t *ph, int64_t *pw, pfvm_status *st)
{
    const int64_t *a;
    if (pfvm_node_attr_ints(node, "pooled_shape", &a) != 2 || a[0] < 1 || a[1] < 1)
        return pfvm__fail(st, PFVM_ERR_INVALID, "pooled_shape must be two positive sizes");
    *ph = a[0];
    *pw = a[1];
    return PFVM_OK;
}

static pfvm_code pfvm__nn_infer_roipool(pfvm_ictx *c)
{
    const pfvm_shape *x = &c->in[0]->type.shape, *r = &c->in[1]->type.shape;
    int64_t ph, pw, five;
    pfvm_shape out;
    if (pfvm__nn_roi_shape(c->node, &ph, &pw, c->st))
        return c->st->code;
    if ((x->rank >= 0 && x->rank != 4) || (r->rank >= 0 && r->rank != 2))
        return pfvm__fail(c->st, PFVM_ERR_SHAPE, "MaxRoiPool takes a 4-D input and 2-D rois (ranks %d and %d)", x->rank,
                          r->rank);
    if (r->rank == 2 && pfvm_sym_is_const(r->dims[1], &five) && five != 5)
        return pfvm__fail(c->st, PFVM_ERR_SHAPE, "rois rows have %lld entries, expected 5", (long long)five);
    if (x->rank < 0 || r->rank < 0) {
        if (pfvm_infer_unknown(c, 0, c->in[0]->type.dtype, 4))
            return c->st ? c->st->code : PFVM_ERR_NOMEM;
        out = c->out[0]->type.shape;
        if (r->rank == 2)
            out.dims[0] = r->dims[0];
        if (x->rank == 4)
            out.dims[1] = x->dims[1];
    } else {
        out.rank = 4;
        out.dims[0] = r->dims[0];
        out.dims[1] = x->dims[1];
    }
    out.dims[2] = pfvm_sym_const(c->syms, ph);
    out.dims[3] = pfvm_sym_const(c->syms, pw);
    pfvm_ival_set_tensor(c->out[0], c->in[0]->type.dtype, &out);
    return PFVM_OK;
}

/* Caffe's ROI pooling: the box, scaled and rounded, is split into
 * pooled_shape bins (floor at the start, ceil at the end, clipped to the
 * input); an empty bin gives 0. */
static pfvm_code pfvm__nn_k_roipool(pfvm_kctx *k)
{
    const pfvm_tensor *X = k->in[0], *R = k->in[1];
    double scale = pfvm_node_attr_float(k->node, "spatial_scale", 1.0f);
    int64_t ph, pw, dims[4], nr, C, H, W, r, c, y, x, i, j;
    if (pfvm__nn_roi_shape(k->node, &ph, &pw, k->st))
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "%s", k->st ? k->st->msg : "pooled_shape");
    if (X->rank != 4 || R->rank != 2 || R->dims[1] != 5)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "MaxRoiPool takes a 4-D input and rois of shape [n, 5]");
    nr = R->dims[0];
    C = X->dims[1];
    H = X->dims[2];
    W = X->dims[3];
    dims[0] = nr;
    dims[1] = C;
    dims[2] = ph;
    dims[3] = pw;
    if (pfvm_kctx_output(k, 0, X->dtype, 4, dims))
        return k->st ? k->st->code : PFVM_ERR_SHAPE;
    for (r = 0; r < nr; r++) {
        double b = pfvm__nn_ld(R, r * 5), box[4], bh, bw;
        int64_t n, h0, w0;
        if (!(b >= 0 && b < (double)X->dims[0]))
            return pfvm__op_fail(k->st, k->node, PFVM_ERR_RANGE, "roi %lld names batch %g of %lld", (long long)r, b,
                                 (long long)X->dims[0]);
        n = (int64_t)b; /* after the check: a NaN or 1e30 batch has no int64 */
        for (i = 0; i < 4; i++) {
            double v = pfvm__nn_ld(R, r * 5 + 1 + i) * scale;
            /* rounded half away from zero, kept in int64 range */
            v = v != v ? 0 : v < -1e15 ? -1e15 : v > 1e15 ? 1e15 : v;
            box[i] = v >= 0 ? floor(v + 0.5) : -floor(-v + 0.5);
        }
        w0 = (int64_t)box[0];
        h0 = (int64_t)box[1];
        bw = (double)((int64_t)box[2] - w0 + 1 > 1 ? (int64_t)box[2] - w0 + 1 : 1) / (double)pw;
        bh = (double)((int64_t)box[3] - h0 + 1 > 1 ? (int64_t)box[3] - h0 + 1 : 1) / (double)ph;
        for (c = 0; c < C; c++)
            for (i = 0; i < ph; i++)
                for (j = 0; j < pw; j++) {
                    int64_t ys = h0 + (int64_t)floor((double)i * bh), ye = h0 + (int64_t)ceil((double)(i + 1) * bh);
                    int64_t xs = w0 + (int64_t)floor((double)j * bw), xe = w0 + (int64_t)ceil((double)(j + 1) * bw);
                    double best = -INFINITY;
                    ys = ys < 0 ? 0 : ys > H ? H : ys;
                    ye = ye < 0 ? 0 : ye > H ? H : ye;
                    xs = xs < 0 ? 0 : xs > W ? W : xs;
                    xe = xe < 0 ? 0 : xe > W ? W : xe;
                    for (y = ys; y < ye; y++)
                        for (x = xs; x < xe; x++) {
                            double v = pfvm__nn_ld(X, ((n * C + c) * H + y) * W + x);
                            best = v > best ? v : best;
                        }
                    pfvm_red_store(k->out[0], ((r * C + c) * ph + i) * pw + j, ye <= ys || xe <= xs ? 0.0 : best);
                }
    }
    return PFVM_OK;
}

/* ---- MaxUnpool ------------------------------------------------------------------------ */

/* The default output: (in - 1) * stride + kernel - pads, per spatial dim. */
static pfvm_code pfvm__nn_unpool_default(const pfvm_node *node, int rank, const int64_t *in, int64_t *out, pfvm_status *st)
{
    pfvm__nn_win w;
    int i;
    if (pfvm__nn_window(node, rank - 2, NULL, &w, st))
        return st ? st->code : PFVM_ERR_INVALID;
    out[0] = in[0];
    out[1] = in[1];
    for (i = 0; i < rank - 2; i++)
        if ((out[i + 2] = (in[i + 2] - 1) * w.s[i] + w.k[i] - w.pb[i] - w.pe[i]) < 0)
            return pfvm__fail(st, PFVM_ERR_SHAPE, "pads leave a negative output size");
    return PFVM_OK;
}

static pfvm_code pfvm__nn_infer_unpool(pfvm_ictx *c)
{
    const pfvm_shape *x = &c->in[0]->type.shape;
    int64_t os[PFVM_MAX_RANK];
    pfvm__nn_win w;
    pfvm_shape s;
    int i, n;
    if (x->rank < 0)
        return pfvm_infer_unknown(c, 0, c->in[0]->type.dtype, -1);
    if (x->rank < 3)
        return pfvm__fail(c->st, PFVM_ERR_SHAPE, "input rank %d: unpooling needs N, C and spatial dims", x->rank);
    if (pfvm__nn_window(c->node, x->rank - 2, NULL, &w, c->st))
        return c->st ? c->st->code : PFVM_ERR_INVALID;
    if (c->n_in > 2 && c->in[2]) {
        if ((n = pfvm_ival_ints(c->in[2], os, PFVM_MAX_RANK)) < 0)
            return pfvm_infer_unknown(c, 0, c->in[0]->type.dtype, x->rank);
        if (n != x->rank)
            return pfvm__fail(c->st, PFVM_ERR_SHAPE, "output_shape has %d entries for rank %d", n, x->rank);
        if (pfvm_shape_from_dims(c->syms, &s, n, os, c->st))
            return c->st ? c->st->code : PFVM_ERR_INVALID;
    } else {
        s = *x;
        for (i = 0; i < w.n; i++)
            s.dims[i + 2] = pfvm_sym_addi(c->syms, pfvm_sym_muli(c->syms, x->dims[i + 2], w.s[i]),
                                          w.k[i] - w.s[i] - w.pb[i] - w.pe[i]);
    }
    pfvm_ival_set_tensor(c->out[0], c->in[0]->type.dtype, &s);
    return PFVM_OK;
}

static pfvm_code pfvm__nn_k_unpool(pfvm_kctx *k)
{
    const pfvm_tensor *X = k->in[0], *I = k->in[1], *OS = k->n_in > 2 ? k->in[2] : NULL;
    pfvm_tensor *Y;
    int64_t n = pfvm_tensor_numel(X), total, i, out[PFVM_MAX_RANK], def[PFVM_MAX_RANK], dtotal = 1;
    int d;
    if (X->rank < 3)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "input must have N, C and spatial dims");
    if (pfvm__nn_unpool_default(k->node, X->rank, X->dims, def, k->st))
        return pfvm__op_fail(k->st, k->node, k->st ? k->st->code : PFVM_ERR_INVALID, "%s", k->st ? k->st->msg : "window");
    memcpy(out, def, sizeof out);
    if (OS) {
        if (pfvm_tensor_numel(OS) != X->rank)
            return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "output_shape has %lld entries for rank %d",
                                 (long long)pfvm_tensor_numel(OS), X->rank);
        for (d = 0; d < X->rank; d++)
            out[d] = pfvm_tensor_get_i64(OS, d);
    }
    if (pfvm_kctx_output(k, 0, X->dtype, X->rank, out))
        return k->st ? k->st->code : PFVM_ERR_SHAPE;
    Y = k->out[0];
    if (pfvm_tensor_numel(I) != n)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "indices do not match the input");
    /* indices address the default output's shape; an explicit output_shape
     * places the same coordinates in a larger tensor */
    for (d = 0; d < X->rank; d++)
        dtotal *= def[d];
    total = pfvm_tensor_numel(Y);
    if (Y->nbytes)
        memset(Y->data, 0, Y->nbytes);
    for (i = 0; i < n; i++) {
        int64_t at = pfvm_tensor_get_i64(I, i), rest, dst = 0, mul = 1;
        int inside = 1;
        if (at < 0 || at >= dtotal)
            return pfvm__op_fail(k->st, k->node, PFVM_ERR_RANGE, "index %lld is outside the output", (long long)at);
        rest = at;
        for (d = X->rank - 1; d >= 0; d--) {
            int64_t cidx = rest % def[d];
            rest /= def[d];
            if (cidx >= Y->dims[d])
                inside = 0;
            dst += cidx * mul;
            mul *= Y->dims[d];
        }
        if (inside && dst < total)
            pfvm_red_store(Y, dst, pfvm__nn_ld(X, i));
    }
    return PFVM_OK;
}

/* ---- normalisation --------------------------------------------------------------------------- */

/* Sum of len elements of t from off, and the sum of squared deviations. */
static double pfvm__nn_sum(const pfvm_tensor *t, int64_t off, int64_t len)
{
    double s = 0;
    int64_t i;
    if (t->dtype == PFVM_FLOAT) {
        const float *p = (const float *)t->data + off;
        for (i = 0; i < len; i++)
            s += p[i];
    } else {
        for (i = 0; i < len; i++)
            s += pfvm__nn_ld(t, off + i);
    }
    return s;
}

static double pfvm__nn_sqdev(const pfvm_tensor *t, int64_t off, int64_t len, double mean)
{
    double s = 0;
    int64_t i;
    for (i = 0; i < len; i++) {
        double d = (t->dtype == PFVM_FLOAT ? ((const float *)t->data)[off + i] : pfvm__nn_ld(t, off + i)) - mean;
        s += d * d;
    }
    return s;
}

/* y[off + i] = x[off + i] * a + b for i < len. */
static void pfvm__nn_affine(const pfvm_tensor *x, pfvm_tensor *y, int64_t off, int64_t len, double a, double b)
{
    int64_t i;
    if (x->dtype == PFVM_FLOAT && y->dtype == PFVM_FLOAT) {
        const float *xp = (const float *)x->data + off;
        float *yp = (float *)y->data + off, fa = (float)a, fb = (float)b;
        for (i = 0; i < len; i++)
            yp[i] = xp[i] * fa + fb;
    } else {
        for (i = 0; i < len; i++)
            pfvm_red_store(y, off + i, pfvm__nn_ld(x, off + i) * a + b);
    }
}

/* 32-bit Arm with a single-precision FPU: the normalizations' float32
 * loops in assembly (pfvm__nn_moments_f32, pfvm__nn_ln_row4) */
#if defined(__GNUC__) && defined(__thumb2__) && defined(__ARM_FP) && (__ARM_FP & 4) && !defined(PFVM_NO_ASM)
#define PFVM__NN_LN_ASM 1
#endif

/* Mean and 1 / sqrt(variance + eps) of len floats, in float (the
 * normalizations' float32 path: ONNX's stash type float). */
static void pfvm__nn_moments_f32(const float *x, int64_t len, float eps, float *mean, float *inv)
{
    ptrdiff_t i, nl = (ptrdiff_t)len; /* pointer-sized: no 64-bit compares on a 32-bit core */
    float s = 0, s2 = 0, m, n = (float)(nl ? nl : 1), d0, d1, d2, d3; /* n: no 64-bit conversion either */
#ifdef PFVM__NN_LN_ASM
    /* 32-bit Arm: both sums four a step with one vldm (the same operations
     * in the same order as the C below: the same bits) */
    const float *p = x, *end = x + nl / 4 * 4;
    __asm__ volatile("cmp %[p], %[end]\n\t"
                     "bhs 2f\n"
                     "1:\n\t"
                     "vldmia %[p]!, {s0-s3}\n\t"
                     "vadd.f32 %[s], %[s], s0\n\tvadd.f32 %[s], %[s], s1\n\t"
                     "vadd.f32 %[s], %[s], s2\n\tvadd.f32 %[s], %[s], s3\n\t"
                     "cmp %[p], %[end]\n\t"
                     "blo 1b\n"
                     "2:\n\t"
                     : [p] "+r"(p), [s] "+t"(s)
                     : [end] "r"(end)
                     : "s0", "s1", "s2", "s3", "cc", "memory");
    for (i = nl / 4 * 4; i < nl; i++)
        s += x[i];
    m = s / n;
    p = x;
    __asm__ volatile("cmp %[p], %[end]\n\t"
                     "bhs 2f\n"
                     "1:\n\t"
                     "vldmia %[p]!, {s0-s3}\n\t"
                     "vsub.f32 s0, s0, %[m]\n\tvsub.f32 s1, s1, %[m]\n\t"
                     "vsub.f32 s2, s2, %[m]\n\tvsub.f32 s3, s3, %[m]\n\t"
                     "vmla.f32 %[s2], s0, s0\n\tvmla.f32 %[s2], s1, s1\n\t"
                     "vmla.f32 %[s2], s2, s2\n\tvmla.f32 %[s2], s3, s3\n\t"
                     "cmp %[p], %[end]\n\t"
                     "blo 1b\n"
                     "2:\n\t"
                     : [p] "+r"(p), [s2] "+t"(s2)
                     : [end] "r"(end), [m] "t"(m)
                     : "s0", "s1", "s2", "s3", "cc", "memory");
    (void)d0, (void)d1, (void)d2, (void)d3;
#else
    /* four at a time, added in order (the same sums as one at a time):
     * a quarter of the loop steps on cores where -Os does not unroll */
    for (i = 0; i + 4 <= nl; i += 4)
        s = s + x[i] + x[i + 1] + x[i + 2] + x[i + 3];
    for (; i < nl; i++)
        s += x[i];
    m = s / n;
    for (i = 0; i + 4 <= nl; i += 4) {
        d0 = x[i] - m;
        d1 = x[i + 1] - m;
        d2 = x[i + 2] - m;
        d3 = x[i + 3] - m;
        s2 = s2 + d0 * d0 + d1 * d1 + d2 * d2 + d3 * d3;
    }
#endif
    for (i = nl / 4 * 4; i < nl; i++)
        s2 += (x[i] - m) * (x[i] - m);
    *mean = m;
    *inv = 1.0f / sqrtf(s2 / n + eps);
}

/* Output j (1 or more) of BatchNormalization: running or saved statistics,
 * typed like mean/var (outputs 1, 2) or scale (3, 4). */
/* InstanceNormalization: scale and B have one entry per channel. */
static pfvm_code pfvm__nn_infer_instnorm(pfvm_ictx *c)
{
    const pfvm_shape *x = &c->in[0]->type.shape;
    if (x->rank >= 0 && x->rank < 3)
        return pfvm__fail(c->st, PFVM_ERR_SHAPE, "X has rank %d, needs at least 3", x->rank);
    if (x->rank >= 3 && (pfvm_infer_check_vec(c, 1, x->dims[1], "scale length and channels") ||
                         pfvm_infer_check_vec(c, 2, x->dims[1], "bias length and channels")))
        return c->st ? c->st->code : PFVM_ERR_SHAPE;
    return pfvm_infer_same_as_first(c);
}

/* LRN: `size` is required and positive. */
static pfvm_code pfvm__nn_infer_lrn(pfvm_ictx *c)
{
    if (pfvm_node_attr_int(c->node, "size", 0) < 1)
        return pfvm__fail(c->st, PFVM_ERR_INVALID, "attribute 'size' must be a positive integer");
    return pfvm_infer_same_as_first(c);
}

/* The axis attribute (default `def`) must exist. */
static pfvm_code pfvm__nn_infer_axis_op(pfvm_ictx *c, int64_t def)
{
    int rank = c->in[0]->type.shape.rank, a;
    if (rank >= 0 && pfvm_infer_axis(c, pfvm_node_attr_int(c->node, "axis", def), rank > 0 ? rank : 1, &a))
        return c->st ? c->st->code : PFVM_ERR_INVALID;
    return pfvm_infer_same_as_first(c);
}

/* Softmax, LogSoftmax, Hardmax: default axis 1 before opset 13, -1 from it. */
static pfvm_code pfvm__nn_infer_softmax(pfvm_ictx *c)
{
    return pfvm__nn_infer_axis_op(c, c->node->opset >= 13 ? -1 : 1);
}

static pfvm_code pfvm__nn_infer_lpnorm(pfvm_ictx *c)
{
    return pfvm__nn_infer_axis_op(c, -1);
}

static pfvm_code pfvm__nn_infer_bn(pfvm_ictx *c)
{
    static const char *const what[5] = {"", "scale length and channels", "bias length and channels",
                                        "mean length and channels", "var length and channels"};
    int j;
    if (c->in[0]->type.shape.rank == 0 || c->in[0]->type.shape.rank == 1)
        return pfvm__fail(c->st, PFVM_ERR_SHAPE, "X has rank %d, needs a channel dim", c->in[0]->type.shape.rank);
    if (c->in[0]->type.shape.rank >= 2)
        for (j = 1; j < 5 && j < c->n_in; j++)
            if (pfvm_infer_check_vec(c, j, c->in[0]->type.shape.dims[1], what[j]))
                return c->st ? c->st->code : PFVM_ERR_SHAPE;
    c->out[0]->type = c->in[0]->type;
    for (j = 1; j < c->n_out; j++)
        if (c->out[j])
            c->out[j]->type = c->in[j < 3 ? j + 2 : 1]->type;
    return PFVM_OK;
}

static int pfvm__nn_bn_training(const pfvm_kctx *k)
{
    int opset = k->node->opset;
    if (opset >= 14)
        return pfvm_node_attr_int(k->node, "training_mode", 0) != 0;
    /* before 14 the statistics outputs mean training, unless is_test says otherwise */
    if (opset < 7 && pfvm_node_attr_int(k->node, "is_test", 0))
        return 0;
    return k->n_out > 1 && k->out[1];
}

/* Batch mean and variance of channel c over N and the plane. */
static void pfvm__nn_bn_stats(const pfvm_tensor *X, int64_t N, int64_t C, int64_t plane, int64_t c, double *mean, double *var)
{
    double cnt = (double)(N * plane), s = 0, s2 = 0;
    int64_t n;
    for (n = 0; n < N; n++)
        s += pfvm__nn_sum(X, (n * C + c) * plane, plane);
    s /= cnt > 0 ? cnt : 1;
    for (n = 0; n < N; n++)
        s2 += pfvm__nn_sqdev(X, (n * C + c) * plane, plane, s);
    *mean = s;
    *var = s2 / (cnt > 0 ? cnt : 1);
}

/* Outputs 1..4 at entry i: running mean and variance (updated with the
 * momentum when training), then the statistics used. */
static void pfvm__nn_bn_outputs(pfvm_kctx *k, int64_t i, int training, double run_mean, double run_var, double mean, double var)
{
    double mom = pfvm_node_attr_float(k->node, "momentum", 0.9f), v[5];
    int j;
    v[1] = training ? run_mean * mom + mean * (1 - mom) : run_mean;
    v[2] = training ? run_var * mom + var * (1 - mom) : run_var;
    v[3] = mean;
    v[4] = var;
    for (j = 1; j < k->n_out && j < 5; j++)
        if (k->out[j])
            pfvm_red_store(k->out[j], i, v[j]);
}

static pfvm_code pfvm__nn_k_bn(pfvm_kctx *k)
{
    const pfvm_tensor *X = k->in[0], *S = k->in[1], *B = k->in[2], *Mn = k->in[3], *V = k->in[4];
    double eps = pfvm_node_attr_float(k->node, "epsilon", 1e-5f);
    int spatial = k->node->opset >= 9 || pfvm_node_attr_int(k->node, "spatial", 1) != 0, training = pfvm__nn_bn_training(k);
    int64_t N, C, plane, np, n, c;
    int j;
    if (X->rank < 1)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "input must have a batch dimension");
    N = X->dims[0];
    C = X->rank > 1 ? X->dims[1] : 1;
    plane = pfvm__nn_plane(X);
    /* spatial=0 (opsets 6-8) keeps statistics per activation, not per channel */
    np = spatial ? C : C * plane;
    if (pfvm_tensor_numel(S) != np || pfvm_tensor_numel(B) != np || pfvm_tensor_numel(Mn) != np || pfvm_tensor_numel(V) != np)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "scale, bias, mean and var must have %lld entries", (long long)np);
    if (training && !spatial)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_UNSUPPORTED, "training with spatial=0");
    if (pfvm__nn_out_like(k, 0, X))
        return k->st->code;
    for (j = 1; j < k->n_out && j < 5; j++)
        if (pfvm_kctx_output(k, j, (j < 3 ? Mn : S)->dtype, (j < 3 ? Mn : S)->rank, (j < 3 ? Mn : S)->dims))
            return k->st ? k->st->code : PFVM_ERR_SHAPE;
    /* inference on floats: the per-channel scale and shift in float too */
    if (!training && pfvm__nn_is_f32(X) && pfvm__nn_is_f32(S) && pfvm__nn_is_f32(B) && pfvm__nn_is_f32(Mn) &&
        pfvm__nn_is_f32(V) && pfvm__nn_is_f32(k->out[0]) && k->n_out == 1) {
        float feps = pfvm_node_attr_float(k->node, "epsilon", 1e-5f);
        int64_t len = spatial ? plane : 1, stride = spatial ? C * plane : np, i;
        for (c = 0; c < np; c++) {
            float a = ((const float *)S->data)[c] / sqrtf(((const float *)V->data)[c] + feps);
            float b = ((const float *)B->data)[c] - ((const float *)Mn->data)[c] * a;
            for (n = 0; n < N; n++) {
                const float *xp = (const float *)X->data + n * stride + c * len;
                float *yp = (float *)k->out[0]->data + n * stride + c * len;
                for (i = 0; i < len; i++)
                    yp[i] = xp[i] * a + b;
            }
        }
        return PFVM_OK;
    }
    /* per channel, the whole plane; per activation, one element */
    for (c = 0; c < np; c++) {
        double run_mean = pfvm__nn_ld(Mn, c), run_var = pfvm__nn_ld(V, c), mean = run_mean, var = run_var, a, b;
        int64_t len = spatial ? plane : 1, stride = spatial ? C * plane : np;
        if (training)
            pfvm__nn_bn_stats(X, N, C, plane, c, &mean, &var);
        pfvm__nn_bn_outputs(k, c, training, run_mean, run_var, mean, var);
        a = pfvm__nn_ld(S, c) / sqrt(var + eps);
        b = pfvm__nn_ld(B, c) - mean * a;
        for (n = 0; n < N; n++)
            pfvm__nn_affine(X, k->out[0], n * stride + c * len, len, a, b);
    }
    return PFVM_OK;
}

static int pfvm__nn_stash_ok(pfvm_dtype t)
{
    return t == PFVM_FLOAT || t == PFVM_DOUBLE || t == PFVM_FLOAT16 || t == PFVM_BFLOAT16;
}

static pfvm_code pfvm__nn_infer_ln(pfvm_ictx *c)
{
    const pfvm_shape *x = &c->in[0]->type.shape;
    pfvm_dtype stash = (pfvm_dtype)pfvm_node_attr_int(c->node, "stash_type", 1);
    int j, a = 0;
    if (!pfvm__nn_stash_ok(stash))
        return pfvm__fail(c->st, PFVM_ERR_INVALID, "stash_type %d is not a floating-point type", (int)stash);
    c->out[0]->type = c->in[0]->type;
    if (x->rank >= 0 && (a = pfvm__axis(pfvm_node_attr_int(c->node, "axis", -1), x->rank)) < 0)
        return pfvm__fail(c->st, PFVM_ERR_INVALID, "axis is out of range for rank %d", x->rank);
    /* Scale and B broadcast into the normalised dims X[axis:] */
    for (j = 1; j < c->n_in && x->rank >= 0; j++) {
        const pfvm_shape *p = c->in[j] ? &c->in[j]->type.shape : NULL;
        int d;
        if (!p || p->rank < 0)
            continue;
        if (p->rank > x->rank - a)
            return pfvm__fail(c->st, PFVM_ERR_SHAPE, "%s has rank %d, more than the %d normalised dims",
                              j == 1 ? "Scale" : "B", p->rank, x->rank - a);
        for (d = 0; d < p->rank; d++) {
            const pfvm_sym *xd = x->dims[x->rank - p->rank + d];
            if (pfvm_sym_proven_ge(c->syms, p->dims[d], 2) && pfvm_sym_proven_ne(c->syms, p->dims[d], xd))
                return pfvm__fail(c->st, PFVM_ERR_SHAPE, "%s does not broadcast into the normalised dims",
                                  j == 1 ? "Scale" : "B");
        }
    }
    for (j = 1; j < c->n_out; j++) {
        pfvm_shape s = *x;
        int i;
        if (!c->out[j])
            continue;
        if (x->rank < 0) {
            if (pfvm_infer_unknown(c, j, stash, -1))
                return c->st ? c->st->code : PFVM_ERR_NOMEM;
            continue;
        }
        for (i = a; i < x->rank; i++)
            s.dims[i] = pfvm_sym_const(c->syms, 1);
        pfvm_ival_set_tensor(c->out[j], stash, &s);
    }
    return PFVM_OK;
}

/* Scale and bias of LayerNormalization apply along the normalised dims;
 * pfvm supports the forms that repeat every `numel` elements: shapes equal
 * to the trailing dims, with leading 1s. */
static int pfvm__nn_ln_param_ok(const pfvm_tensor *p, const pfvm_tensor *X, int axis)
{
    int d, off;
    if (!p)
        return 1;
    off = X->rank - p->rank;
    for (d = 0; d < p->rank; d++) {
        int xd = d + off;
        if (xd < axis ? p->dims[d] != 1 : p->dims[d] != X->dims[xd])
            return 0;
    }
    return 1;
}

#ifdef PFVM__NN_LN_ASM
/* LayerNormalization's row on 32-bit Arm with a single-precision FPU: y =
 * (x - m) * f * s + b for the first n4 values (a multiple of 4), four a
 * step with one vldm each for x, s and b and one vstm for y (5 to 6
 * instructions a value, 12.5 in gcc -Os's loop). vmla rounds the product
 * before it adds (not fused): the operations of the C loop in its order,
 * the same bits. */
static void pfvm__nn_ln_row4(float *y, const float *x, const float *s, const float *b, ptrdiff_t n4, float m, float f)
{
    const float *end = x + n4;
    __asm__ volatile("cmp %[x], %[end]\n\t"
                     "bhs 2f\n"
                     "1:\n\t"
                     "vldmia %[x]!, {s0-s3}\n\t"
                     "vldmia %[s]!, {s4-s7}\n\t"
                     "vldmia %[b]!, {s8-s11}\n\t"
                     "vsub.f32 s0, s0, %[m]\n\tvsub.f32 s1, s1, %[m]\n\t"
                     "vsub.f32 s2, s2, %[m]\n\tvsub.f32 s3, s3, %[m]\n\t"
                     "vmul.f32 s0, s0, %[f]\n\tvmul.f32 s1, s1, %[f]\n\t"
                     "vmul.f32 s2, s2, %[f]\n\tvmul.f32 s3, s3, %[f]\n\t"
                     "vmla.f32 s8, s0, s4\n\tvmla.f32 s9, s1, s5\n\t"
                     "vmla.f32 s10, s2, s6\n\tvmla.f32 s11, s3, s7\n\t"
                     "vstmia %[y]!, {s8-s11}\n\t"
                     "cmp %[x], %[end]\n\t"
                     "blo 1b\n"
                     "2:\n\t"
                     : [x] "+r"(x), [s] "+r"(s), [b] "+r"(b), [y] "+r"(y)
                     : [end] "r"(end), [m] "t"(m), [f] "t"(f)
                     : "s0", "s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9", "s10", "s11", "cc", "memory");
}
#endif

/* LayerNormalization's attributes, read at bind by its prepare hook: a
 * run reads none by name (on a Cortex-M4 the mlp's three lookups, strcmp
 * over the node's attributes, took about 300 instructions a run). */
typedef struct pfvm__nn_ln_st {
    const pfvm_node *node; /* whose attributes (as pfvm__la_gemm_st's) */
    int64_t axis;
    float eps;
    pfvm_dtype stash;
} pfvm__nn_ln_st;

static void pfvm__nn_ln_read(const pfvm_node *n, pfvm__nn_ln_st *a)
{
    a->node = n;
    a->axis = pfvm_node_attr_int(n, "axis", -1);
    a->eps = pfvm_node_attr_float(n, "epsilon", 1e-5f);
    a->stash = (pfvm_dtype)pfvm_node_attr_int(n, "stash_type", 1);
}

static pfvm_code pfvm__nn_prep_ln(const pfvm_kctx *k, const pfvm_tensor *const *consts, void **state,
                                  void (**free_fn)(void *))
{
    pfvm__nn_ln_st *a = (pfvm__nn_ln_st *)*state;
    (void)consts;
    if (!a || *free_fn != pfvm__free || a->node != k->node) {
        if (!(a = (pfvm__nn_ln_st *)pfvm__malloc(sizeof *a)))
            return pfvm__op_fail(k->st, k->node, PFVM_ERR_NOMEM, "out of memory for its attributes");
        *state = a;
        *free_fn = pfvm__free;
    }
    pfvm__nn_ln_read(k->node, a); /* once a plan: attributes set since the last one count */
    return PFVM_OK;
}

static pfvm_code pfvm__nn_k_ln(pfvm_kctx *k)
{
    const pfvm_tensor *X = k->in[0], *S = k->in[1], *B = k->n_in > 2 ? k->in[2] : NULL;
    const pfvm__nn_ln_st *kept = (const pfvm__nn_ln_st *)k->state;
    pfvm__nn_ln_st at;
    double eps;
    int a, d, j, f32;
    int64_t outer = 1, inner = 1, o, i, ns, nb, sdims[PFVM_MAX_RANK];
    pfvm_dtype stash;
    if (kept && kept->node == k->node)
        at = *kept;
    else
        pfvm__nn_ln_read(k->node, &at);
    eps = at.eps;
    a = pfvm__axis(at.axis, X->rank);
    stash = at.stash;
    if (a < 0)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "axis is out of range for rank %d", X->rank);
    if (!pfvm__nn_stash_ok(stash))
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "stash_type %d is not a floating-point type", (int)stash);
    if (!pfvm__nn_ln_param_ok(S, X, a) || !pfvm__nn_ln_param_ok(B, X, a))
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "scale and bias must have the normalised dims' shape");
    for (d = 0; d < X->rank; d++) {
        if (d < a)
            outer *= X->dims[d];
        else
            inner *= X->dims[d];
        sdims[d] = d < a ? X->dims[d] : 1;
    }
    ns = pfvm_tensor_numel(S);
    nb = B ? pfvm_tensor_numel(B) : 0;
    if (pfvm__nn_out_like(k, 0, X))
        return k->st->code;
    for (j = 1; j < k->n_out && j < 3; j++)
        if (pfvm_kctx_output(k, j, stash, X->rank, sdims))
            return k->st ? k->st->code : PFVM_ERR_SHAPE;
    /* the float32 path's test once, not per row */
    f32 = stash == PFVM_FLOAT && pfvm__nn_is_f32(X) && pfvm__nn_is_f32(S) && (!B || pfvm__nn_is_f32(B)) &&
          pfvm__nn_is_f32(k->out[0]);
    for (o = 0; o < outer; o++) {
        int64_t base = o * inner;
        double mean, inv;
        if (f32) {
            const float *xp = (const float *)X->data + base, *sp = (const float *)S->data;
            const float *bp = B ? (const float *)B->data : NULL;
            float *yp = (float *)k->out[0]->data + base, fm, fi;
            /* i % ns and i % nb, without a 64-bit division per element;
             * pointer-sized: no 64-bit arithmetic on a 32-bit core */
            ptrdiff_t q, nq = (ptrdiff_t)inner, is = 0, ib = 0, ns_ = (ptrdiff_t)ns, nb_ = (ptrdiff_t)nb;
            pfvm__nn_moments_f32(xp, inner, (float)eps, &fm, &fi); /* eps: the float attribute's value */
            if (ns_ == nq && bp && nb_ == nq) { /* scale and bias of the row's length: no wrapping (same bits) */
                /* four a step, like the moments: a quarter of the loop's
                 * steps where -Os unrolls nothing; each value as below */
#ifdef PFVM__NN_LN_ASM
                q = nq / 4 * 4;
                pfvm__nn_ln_row4(yp, xp, sp, bp, q, fm, fi);
#else
                for (q = 0; q + 4 <= nq; q += 4) {
                    yp[q] = (xp[q] - fm) * fi * sp[q] + bp[q];
                    yp[q + 1] = (xp[q + 1] - fm) * fi * sp[q + 1] + bp[q + 1];
                    yp[q + 2] = (xp[q + 2] - fm) * fi * sp[q + 2] + bp[q + 2];
                    yp[q + 3] = (xp[q + 3] - fm) * fi * sp[q + 3] + bp[q + 3];
                }
#endif
                for (; q < nq; q++)
                    yp[q] = (xp[q] - fm) * fi * sp[q] + bp[q];
            } else
                for (q = 0; q < nq; q++) {
                    yp[q] = (xp[q] - fm) * fi * sp[is] + (bp ? bp[ib] : 0.0f);
                    is = is + 1 == ns_ ? 0 : is + 1;
                    ib = ib + 1 == nb_ ? 0 : ib + 1;
                }
            if (k->n_out > 1 && k->out[1] && k->out[1]->dtype == PFVM_FLOAT)
                ((float *)k->out[1]->data)[o] = fm;
            if (k->n_out > 2 && k->out[2] && k->out[2]->dtype == PFVM_FLOAT)
                ((float *)k->out[2]->data)[o] = fi;
            continue;
        }
        mean = pfvm__nn_sum(X, base, inner) / (double)(inner ? inner : 1);
        inv = 1.0 / sqrt(pfvm__nn_sqdev(X, base, inner, mean) / (double)(inner ? inner : 1) + eps);
        {
            for (i = 0; i < inner; i++)
                pfvm_red_store(k->out[0], base + i,
                            (pfvm__nn_ld(X, base + i) - mean) * inv * pfvm__nn_ld(S, i % ns) + (B ? pfvm__nn_ld(B, i % nb) : 0));
        }
        if (k->n_out > 1 && k->out[1])
            pfvm_red_store(k->out[1], o, mean);
        if (k->n_out > 2 && k->out[2])
            pfvm_red_store(k->out[2], o, inv);
    }
    return PFVM_OK;
}

static pfvm_code pfvm__nn_k_instnorm(pfvm_kctx *k)
{
    const pfvm_tensor *X = k->in[0], *S = k->in[1], *B = k->in[2];
    double eps = pfvm_node_attr_float(k->node, "epsilon", 1e-5f);
    int64_t N, C, plane, n, c;
    if (X->rank < 2)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "input rank %d: needs N and C", X->rank);
    N = X->dims[0];
    C = X->dims[1];
    plane = pfvm__nn_plane(X);
    if (pfvm_tensor_numel(S) != C || pfvm_tensor_numel(B) != C)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "scale and bias must have %lld entries", (long long)C);
    if (pfvm__nn_out_like(k, 0, X))
        return k->st->code;
    for (n = 0; n < N; n++)
        for (c = 0; c < C; c++) {
            int64_t base = (n * C + c) * plane;
            double mean, a;
            if (pfvm__nn_is_f32(X) && pfvm__nn_is_f32(S) && pfvm__nn_is_f32(B) && pfvm__nn_is_f32(k->out[0])) {
                const float *xp = (const float *)X->data + base;
                float *yp = (float *)k->out[0]->data + base, fm, fi, fa, fb;
                int64_t i;
                pfvm__nn_moments_f32(xp, plane, pfvm_node_attr_float(k->node, "epsilon", 1e-5f), &fm, &fi);
                fa = ((const float *)S->data)[c] * fi;
                fb = ((const float *)B->data)[c] - fm * fa;
                for (i = 0; i < plane; i++)
                    yp[i] = xp[i] * fa + fb;
                continue;
            }
            mean = pfvm__nn_sum(X, base, plane) / (double)(plane ? plane : 1);
            a = pfvm__nn_ld(S, c) / sqrt(pfvm__nn_sqdev(X, base, plane, mean) / (double)(plane ? plane : 1) + eps);
            pfvm__nn_affine(X, k->out[0], base, plane, a, pfvm__nn_ld(B, c) - mean * a);
        }
    return PFVM_OK;
}

static pfvm_code pfvm__nn_k_lrn(pfvm_kctx *k)
{
    const pfvm_tensor *X = k->in[0];
    double alpha = pfvm_node_attr_float(k->node, "alpha", 1e-4f), beta = pfvm_node_attr_float(k->node, "beta", 0.75f);
    double bias = pfvm_node_attr_float(k->node, "bias", 1.0f);
    int64_t size = pfvm_node_attr_int(k->node, "size", 0), N, C, plane, n, c, i, j;
    if (size < 1)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "size must be positive");
    if (X->rank < 2)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "input rank %d: needs N and C", X->rank);
    if (pfvm__nn_out_like(k, 0, X))
        return k->st->code;
    N = X->dims[0];
    C = X->dims[1];
    plane = pfvm__nn_plane(X);
    /* channels c - floor((size-1)/2) .. c + ceil((size-1)/2) */
    for (n = 0; n < N; n++)
        for (c = 0; c < C; c++)
            for (i = 0; i < plane; i++) {
                double s = 0;
                int64_t lo = c - (size - 1) / 2, hi = c + size / 2;
                for (j = lo < 0 ? 0 : lo; j <= hi && j < C; j++) {
                    double v = pfvm__nn_ld(X, (n * C + j) * plane + i);
                    s += v * v;
                }
                pfvm_red_store(k->out[0], (n * C + c) * plane + i,
                            pfvm__nn_ld(X, (n * C + c) * plane + i) / pow(bias + alpha / (double)size * s, beta));
            }
    return PFVM_OK;
}

/* y = x / ||x||_p along axis (p 1 or 2); a zero vector stays zero. */
static pfvm_code pfvm__nn_k_lpnorm(pfvm_kctx *k)
{
    const pfvm_tensor *X = k->in[0];
    int64_t p = pfvm_node_attr_int(k->node, "p", 2), outer = 1, len, inner = 1, o, j, i;
    int a = pfvm__axis(pfvm_node_attr_int(k->node, "axis", -1), X->rank), d;
    if (p != 1 && p != 2)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "p must be 1 or 2, not %lld", (long long)p);
    if (a < 0)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "axis is out of range for rank %d", X->rank);
    if (pfvm__nn_out_like(k, 0, X))
        return k->st->code;
    for (d = 0; d < a; d++)
        outer *= X->dims[d];
    len = X->dims[a];
    for (d = a + 1; d < X->rank; d++)
        inner *= X->dims[d];
    for (o = 0; o < outer; o++)
        for (j = 0; j < inner; j++) {
            int64_t base = o * len * inner + j;
            double norm = 0;
            for (i = 0; i < len; i++) {
                double v = pfvm__nn_ld(X, base + i * inner);
                norm += p == 1 ? fabs(v) : v * v;
            }
            if (p == 2)
                norm = sqrt(norm);
            for (i = 0; i < len; i++)
                pfvm_red_store(k->out[0], base + i * inner, norm > 0 ? pfvm__nn_ld(X, base + i * inner) / norm : 0.0);
        }
    return PFVM_OK;
}

/* ---- Softmax family -------------------------------------------------------------------------- */

enum { PFVM__NN_SOFTMAX = 0, PFVM__NN_LOGSOFTMAX, PFVM__NN_HARDMAX };

/* One float vector of len elements at stride st: softmax with a single
 * exp per element (exps are kept in y). y may be x (the family is
 * PFVM_OP_IN_PLACE: every element is read before it is written). */
static void pfvm__nn_softmax_f32(const float *x, float *y, int64_t len, int64_t st, int kind)
{
    float mx = -INFINITY, sum = 0;
    int64_t i;
    for (i = 0; i < len; i++)
        mx = x[i * st] > mx ? x[i * st] : mx;
    if (kind == PFVM__NN_SOFTMAX) {
        float inv;
        for (i = 0; i < len; i++) {
            y[i * st] = pfvm_ew_expf(x[i * st] - mx);
            sum += y[i * st];
        }
        inv = 1.0f / sum;
        for (i = 0; i < len; i++)
            y[i * st] *= inv;
    } else {
        float lse;
        for (i = 0; i < len; i++)
            sum += pfvm_ew_expf(x[i * st] - mx);
        lse = pfvm_ew_logf(sum);
        for (i = 0; i < len; i++)
            y[i * st] = x[i * st] - mx - lse;
    }
}

/* Softmax variants. Opset < 13 flattens to 2-D at `axis` (default 1);
 * 13+ works along one axis (default -1). */
static pfvm_code pfvm__nn_softmax(pfvm_kctx *k, int kind)
{
    const pfvm_tensor *X = k->in[0];
    pfvm_tensor *Y;
    int old = k->node->opset < 13, a, d;
    int64_t outer = 1, len = 1, inner = 1, o, i, j;
    a = pfvm__axis(pfvm_node_attr_int(k->node, "axis", old ? 1 : -1), X->rank > 0 ? X->rank : 1);
    if (a < 0)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "axis is out of range for rank %d", X->rank);
    if (pfvm__nn_out_like(k, 0, X))
        return k->st->code;
    Y = k->out[0];
    for (d = 0; d < a; d++)
        outer *= X->dims[d];
    if (old) {
        for (d = a; d < X->rank; d++)
            len *= X->dims[d];
    } else {
        len = X->rank ? X->dims[a] : 1;
        for (d = a + 1; d < X->rank; d++)
            inner *= X->dims[d];
    }
    for (o = 0; o < outer; o++)
        for (j = 0; j < inner; j++) {
            int64_t base = o * len * inner + j, best = 0;
            double mx = -INFINITY, sum = 0;
            if (kind != PFVM__NN_HARDMAX && X->dtype == PFVM_FLOAT && Y->dtype == PFVM_FLOAT) {
                pfvm__nn_softmax_f32((const float *)X->data + base, (float *)Y->data + base, len, inner, kind);
                continue;
            }
            for (i = 0; i < len; i++) {
                double v = pfvm__nn_ld(X, base + i * inner);
                if (v > mx) {
                    mx = v;
                    best = i;
                }
            }
            if (kind == PFVM__NN_HARDMAX) {
                for (i = 0; i < len; i++)
                    pfvm_red_store(Y, base + i * inner, i == best ? 1.0 : 0.0);
                continue;
            }
            for (i = 0; i < len; i++)
                sum += exp(pfvm__nn_ld(X, base + i * inner) - mx);
            for (i = 0; i < len; i++) {
                double v = pfvm__nn_ld(X, base + i * inner) - mx;
                pfvm_red_store(Y, base + i * inner, kind == PFVM__NN_LOGSOFTMAX ? v - log(sum) : exp(v) / sum);
            }
        }
    return PFVM_OK;
}

static pfvm_code pfvm__nn_k_softmax(pfvm_kctx *k)
{
    return pfvm__nn_softmax(k, PFVM__NN_SOFTMAX);
}

static pfvm_code pfvm__nn_k_logsoftmax(pfvm_kctx *k)
{
    return pfvm__nn_softmax(k, PFVM__NN_LOGSOFTMAX);
}

static pfvm_code pfvm__nn_k_hardmax(pfvm_kctx *k)
{
    return pfvm__nn_softmax(k, PFVM__NN_HARDMAX);
}

/* ---- simplify hooks: BatchNormalization folded into its producer (bnfold) --------------- */

/* Conv(X, W, B) with W and B constants absorbs a per-channel scale and
 * shift of its output channels: Conv(X, W*scale, B*scale + shift). */
static pfvm_code pfvm__nn_simp_conv(pfvm_rewrite *rw, pfvm_node *n)
{
    pfvm_rw_affine *req = pfvm_rw_request(rw);
    const pfvm_tensor *W = pfvm_rw_value(rw, n->inputs[1]);
    const pfvm_tensor *B = n->n_inputs > 2 && n->inputs[2] ? pfvm_rw_value(rw, n->inputs[2]) : NULL;
    pfvm_value *in[3];
    pfvm_tensor *w, *b;
    pfvm_node *c;
    int64_t i, per, len;
    if (!req)
        return PFVM_OK;
    if (req->axis != 1 || !W || W->rank < 1 || W->dims[0] != req->n || !pfvm_dtype_is_float(W->dtype) ||
        (n->n_inputs > 2 && n->inputs[2] && (!B || pfvm_tensor_numel(B) != req->n)))
        return PFVM_OK;
    len = req->n;
    if (!(in[1] = pfvm_rw_const_new(rw, W->dtype, W->rank, W->dims, n->inputs[1]->name, &w)) ||
        !(in[2] = pfvm_rw_const_new(rw, W->dtype, 1, &len, "bias", &b)))
        return pfvm_rw_code(rw);
    per = req->n ? pfvm_tensor_numel(W) / req->n : 0;
    for (i = 0; i < per * req->n; i++)
        pfvm_red_store(w, i, pfvm_tensor_get_f64(W, i) * req->scale[i / per]);
    for (i = 0; i < req->n; i++)
        pfvm_red_store(b, i, (B ? pfvm_tensor_get_f64(B, i) : 0.0) * req->scale[i] + (req->shift ? req->shift[i] : 0));
    in[0] = n->inputs[0];
    if (!(c = pfvm_rw_add_node(rw, "Conv", in, 3, 1, n)) || pfvm_rw_copy_attrs(rw, c, n, NULL) ||
        pfvm_rw_infer_node(rw, c))
        return pfvm_rw_code(rw);
    req->result = c->outputs[0];
    return PFVM_OK;
}

/* BatchNormalization in inference form with constant parameters is
 * y = x*scale + shift per channel (axis 1), scale = gamma/sqrt(var+eps),
 * shift = beta - mean*scale: the node that makes x (read by nothing
 * else) absorbs it when it can. */
static pfvm_code pfvm__nn_simp_bn(pfvm_rewrite *rw, pfvm_node *n)
{
    const pfvm_tensor *p[4];
    const pfvm_shape *xs = pfvm_rw_shape(rw, n->inputs[0]);
    double eps = pfvm_node_attr_float(n, "epsilon", 1e-5f), *scale = NULL, *shift;
    pfvm_node *prod = pfvm_rw_producer(rw, n->inputs[0]);
    pfvm_rw_affine a;
    pfvm_code rc;
    int64_t C, c;
    int j;
    if (pfvm_rw_mode(rw) != PFVM_RW_AFFINE || pfvm_rw_request(rw) || !xs || xs->rank < 2 || !prod)
        return PFVM_OK;
    if (n->opset >= 14 ? pfvm_node_attr_int(n, "training_mode", 0) != 0
                       : !(n->opset < 7 && pfvm_node_attr_int(n, "is_test", 0)) && n->n_outputs > 1 && n->outputs[1])
        return PFVM_OK;
    if (n->opset < 9 && pfvm_node_attr_int(n, "spatial", 1) == 0)
        return PFVM_OK;
    for (j = 1; j < n->n_outputs; j++)
        if (!pfvm_rw_output_unused(rw, n, j))
            return PFVM_OK;
    if (!pfvm_sym_is_const(xs->dims[1], &C) || C < 1 || C > (1 << 24) || pfvm_rw_readers(rw, n->inputs[0]) != 1)
        return PFVM_OK;
    for (j = 0; j < 4; j++)
        if (!(p[j] = pfvm_rw_value(rw, n->inputs[j + 1])) || pfvm_tensor_numel(p[j]) != C ||
            !pfvm_dtype_is_float(p[j]->dtype))
            return PFVM_OK;
    if (!(scale = (double *)pfvm__malloc(sizeof(double) * 2 * (size_t)C)))
        return pfvm__fail(rw->st, PFVM_ERR_NOMEM, "out of memory");
    shift = scale + C;
    for (c = 0; c < C; c++) {
        scale[c] = pfvm_tensor_get_f64(p[0], c) / sqrt(pfvm_tensor_get_f64(p[3], c) + eps);
        shift[c] = pfvm_tensor_get_f64(p[1], c) - pfvm_tensor_get_f64(p[2], c) * scale[c];
    }
    a.axis = 1;
    a.n = (int)C;
    a.scale = scale;
    a.shift = shift;
    rc = pfvm_rw_absorb(rw, prod, &a);
    if (!rc && a.result)
        rc = pfvm_rw_forward(rw, n, 0, a.result);
    pfvm__free(scale);
    return rc;
}

#define PFVM__NN_F "float,double,float16,bfloat16"

/* ---- gradients ------------------------------------------------------------------------------ */

/* Constant dims of v (rank r): 0 when one is symbolic, with the status set
 * when `need`. dims[0] and dims[1] (batch, channels) may be symbolic when
 * spatial_only (they come back as -1). */
static int pfvm__nn_gdims(pfvm_grad_ctx *g, const pfvm_value *v, int64_t *dims, int *rank, int spatial_only)
{
    const pfvm_type *t = pfvm_grad_type(g, v);
    int i;
    if (!t || t->shape.rank < 3 || t->shape.rank > PFVM__NN_SP + 2)
        return pfvm_grad_fail(g, "'%s' must have rank 3 to %d", v ? v->name : "?", PFVM__NN_SP + 2), 0;
    *rank = t->shape.rank;
    for (i = 0; i < t->shape.rank; i++)
        if (!pfvm_sym_is_const(t->shape.dims[i], &dims[i])) {
            if (spatial_only && i < 2) {
                dims[i] = -1;
                continue;
            }
            return pfvm_grad_fail(g, "needs the %s dims of '%s' known", spatial_only ? "spatial" : "", v->name), 0;
        }
    return 1;
}

/* The axes of a rank-r tensor but one (`skip`). */
static int pfvm__nn_gaxes(int r, int skip, int64_t *axes)
{
    int i, n = 0;
    for (i = 0; i < r; i++)
        if (i != skip)
            axes[n++] = i;
    return n;
}

/* Sets strides, dilations, pads, group and output_padding on a conv-like
 * node (nsp spatial dims). */
static pfvm_code pfvm__nn_gwin_attrs(pfvm_grad_ctx *g, pfvm_node *nd, int nsp, const int64_t *s, const int64_t *d,
                                     const int64_t *pb, const int64_t *pe, int64_t group, const int64_t *opad)
{
    int64_t pads[2 * PFVM__NN_SP];
    int i, any = 0;
    if (!nd)
        return g->st->code;
    for (i = 0; i < nsp; i++) {
        pads[i] = pb[i];
        pads[nsp + i] = pe[i];
        if (opad && opad[i])
            any = 1;
    }
    if (pfvm_node_set_attr_ints(nd, "strides", s, nsp, g->st) || pfvm_node_set_attr_ints(nd, "dilations", d, nsp, g->st) ||
        pfvm_node_set_attr_ints(nd, "pads", pads, 2 * nsp, g->st) ||
        (group != 1 && pfvm_node_set_attr_int(nd, "group", group, g->st)) ||
        (any && pfvm_node_set_attr_ints(nd, "output_padding", opad, nsp, g->st)))
        return g->st->code;
    return PFVM_OK;
}

/* The transpose of a convolution with window w from an input of spatial
 * size `in` to `out`: ConvTranspose(dy, W) shaped back to `in` (the end pad
 * and output_padding absorb what floor or ceil division dropped). */
static pfvm_value *pfvm__nn_gconvt(pfvm_grad_ctx *g, pfvm_value *dy, pfvm_value *W, const pfvm__nn_win *w,
                                   const int64_t *in, const int64_t *out, int64_t group)
{
    int64_t pe[PFVM__NN_SP], opad[PFVM__NN_SP];
    pfvm_value *in2[2];
    pfvm_node *nd;
    int i;
    for (i = 0; i < w->n; i++) {
        int64_t total = (out[i] - 1) * w->s[i] + pfvm__nn_extent(w, i) - in[i];
        pe[i] = total - w->pb[i];
        opad[i] = 0;
        if (pe[i] < 0) {
            opad[i] = -pe[i];
            pe[i] = 0;
        }
    }
    in2[0] = dy;
    in2[1] = W;
    nd = pfvm_grad_node(g, "ConvTranspose", in2, 2, 1);
    if (pfvm__nn_gwin_attrs(g, nd, w->n, w->s, w->d, w->pb, pe, group, opad))
        return NULL;
    return nd->outputs[0];
}

/* A [C, N, ...] view of x [N, C, ...] grouped for a batched weight
 * gradient: [C/g, g*N, ...] (channel j*N + n of group j). */
static pfvm_value *pfvm__nn_gswap(pfvm_grad_ctx *g, pfvm_value *x, int r, int64_t C, int64_t group, const int64_t *sp)
{
    int64_t perm[PFVM_MAX_RANK + 1], shape[PFVM_MAX_RANK + 1];
    int i;
    if (group == 1) {
        for (i = 0; i < r; i++)
            perm[i] = i;
        perm[0] = 1;
        perm[1] = 0;
        return pfvm_grad_transpose(g, x, perm, r);
    }
    /* [N, g, C/g, sp] -> [C/g, g, N, sp] -> [C/g, g*N, sp] */
    shape[0] = 0;
    shape[1] = group;
    shape[2] = C / group;
    for (i = 2; i < r; i++)
        shape[i + 1] = sp[i];
    x = pfvm_grad_op2(g, "Reshape", x, pfvm_grad_ints(g, shape, r + 1));
    for (i = 0; i <= r; i++)
        perm[i] = i;
    perm[0] = 2;
    perm[2] = 0;
    x = pfvm_grad_transpose(g, x, perm, r + 1);
    shape[0] = C / group;
    shape[1] = -1;
    for (i = 2; i < r; i++)
        shape[i] = sp[i];
    return pfvm_grad_op2(g, "Reshape", x, pfvm_grad_ints(g, shape, r));
}

/* A correlation of a [B, g*N, ...] input with a [M, N, ...] weight
 * (strides and dilations swapped by the caller), cut to k spatially and
 * transposed to [M, B, k...]. */
static pfvm_value *pfvm__nn_gcorr(pfvm_grad_ctx *g, pfvm_value *in, pfvm_value *wt, int r, const int64_t *s,
                                  const int64_t *d, const int64_t *pb, const int64_t *pe, int64_t group, const int64_t *k)
{
    pfvm_value *in2[2], *res;
    pfvm_node *nd;
    int64_t starts[PFVM__NN_SP], axes[PFVM__NN_SP], perm[PFVM_MAX_RANK];
    int i, nsp = r - 2;
    in2[0] = in;
    in2[1] = wt;
    nd = pfvm_grad_node(g, "Conv", in2, 2, 1);
    if (pfvm__nn_gwin_attrs(g, nd, nsp, s, d, pb, pe, group, NULL))
        return NULL;
    res = nd->outputs[0];
    for (i = 0; i < nsp; i++) {
        starts[i] = 0;
        axes[i] = i + 2;
    }
    res = pfvm_grad_slice(g, res, starts, k, axes, nsp);
    for (i = 0; i < r; i++)
        perm[i] = i;
    perm[0] = 1;
    perm[1] = 0;
    return pfvm_grad_transpose(g, res, perm, r);
}

/* Conv: dX is the transposed convolution of dY with W; dW correlates X
 * with dY (strides and dilations trade places); dB sums dY. */
static pfvm_code pfvm__nn_k_conv_grad(pfvm_grad_ctx *g, const pfvm_node *n)
{
    pfvm_value *gy = pfvm_grad_out(g, 0), *x = n->inputs[0], *W = n->inputs[1], *b = n->n_inputs > 2 ? n->inputs[2] : NULL;
    int64_t xd[PFVM_MAX_RANK], wd[PFVM_MAX_RANK], yd[PFVM_MAX_RANK], in[PFVM__NN_SP], out[PFVM__NN_SP], axes[PFVM_MAX_RANK];
    int64_t group = pfvm_node_attr_int(n, "group", 1);
    pfvm__nn_win w;
    int r, rw, i;
    if (!gy)
        return PFVM_OK;
    if (!pfvm__nn_gdims(g, x, xd, &r, 1) || !pfvm__nn_gdims(g, W, wd, &rw, 0))
        return g->st->code;
    if (rw != r)
        return pfvm_grad_fail(g, "X and W ranks differ");
    if (pfvm__nn_window(n, r - 2, wd + 2, &w, g->st))
        return g->st->code;
    for (i = 0; i < r - 2; i++)
        in[i] = xd[i + 2];
    if (pfvm__nn_resolve(&w, in, out, g->st))
        return g->st->code;
    if (pfvm_grad_needed(g, x) && pfvm_grad_add(g, x, pfvm__nn_gconvt(g, gy, W, &w, in, out, group)))
        return g->st->code;
    if (pfvm_grad_needed(g, W)) {
        int64_t C = wd[1] * group;
        pfvm_value *xr = pfvm__nn_gswap(g, x, r, C, group, xd), *gyr;
        int64_t perm[PFVM_MAX_RANK], k[PFVM__NN_SP];
        for (i = 0; i < r; i++)
            perm[i] = i;
        perm[0] = 1;
        perm[1] = 0;
        gyr = pfvm_grad_transpose(g, gy, perm, r); /* [M, N, o...] */
        for (i = 0; i < r - 2; i++)
            k[i] = wd[i + 2];
        /* out [C/g, M, k...] -> [M, C/g, k...] */
        if (pfvm_grad_add(g, W, pfvm__nn_gcorr(g, xr, gyr, r, w.d, w.s, w.pb, w.pe, group, k)))
            return g->st->code;
    }
    if (b && pfvm_grad_needed(g, b))
        return pfvm_grad_add(g, b, pfvm_grad_reduce(g, "ReduceSum", gy, axes, pfvm__nn_gaxes(r, 1, axes), 0));
    (void)yd;
    return PFVM_OK;
}

/* ConvTranspose: dX convolves dY with W (same window); dW correlates dY
 * with X; dB sums dY. */
static pfvm_code pfvm__nn_k_convt_grad(pfvm_grad_ctx *g, const pfvm_node *n)
{
    pfvm_value *gy = pfvm_grad_out(g, 0), *x = n->inputs[0], *W = n->inputs[1], *b = n->n_inputs > 2 ? n->inputs[2] : NULL;
    int64_t xd[PFVM_MAX_RANK], wd[PFVM_MAX_RANK], in[PFVM__NN_SP], out[PFVM__NN_SP], axes[PFVM_MAX_RANK];
    int64_t group = pfvm_node_attr_int(n, "group", 1);
    pfvm__nn_win w;
    pfvm__nn_tattr ta;
    int r, rw, i;
    if (!gy)
        return PFVM_OK;
    if (!pfvm__nn_gdims(g, x, xd, &r, 1) || !pfvm__nn_gdims(g, W, wd, &rw, 0))
        return g->st->code;
    if (rw != r)
        return pfvm_grad_fail(g, "X and W ranks differ");
    if (pfvm__nn_window(n, r - 2, wd + 2, &w, g->st) || pfvm__nn_convt_attrs(n, r - 2, &ta, g->st))
        return g->st->code;
    for (i = 0; i < r - 2; i++)
        in[i] = xd[i + 2];
    if (pfvm__nn_convt_resolve(&w, &ta, in, out, g->st))
        return g->st->code;
    if (pfvm_grad_needed(g, x)) {
        pfvm_value *in2[2];
        pfvm_node *nd;
        int64_t pe[PFVM__NN_SP];
        /* the convolution with the same window gives back at least in[i]
         * positions: pad the end so that it gives exactly that many */
        int64_t starts[PFVM__NN_SP], ends[PFVM__NN_SP], axes2[PFVM__NN_SP];
        int n_crop = 0;
        for (i = 0; i < r - 2; i++) {
            pe[i] = (in[i] - 1) * w.s[i] + pfvm__nn_extent(&w, i) - out[i] - w.pb[i];
            if (pe[i] < 0) {
                /* output_padding made Y longer than the convolution reads */
                starts[n_crop] = 0;
                ends[n_crop] = out[i] + pe[i];
                axes2[n_crop++] = i + 2;
                pe[i] = 0;
            }
        }
        in2[0] = pfvm_grad_slice(g, gy, starts, ends, axes2, n_crop);
        in2[1] = W;
        nd = pfvm_grad_node(g, "Conv", in2, 2, 1);
        if (pfvm__nn_gwin_attrs(g, nd, r - 2, w.s, w.d, w.pb, pe, group, NULL) || pfvm_grad_add(g, x, nd->outputs[0]))
            return g->st->code;
    }
    if (pfvm_grad_needed(g, W)) {
        /* [C, M/g, k] = corr(dY grouped [M/g, g*N, o], X^T [C, N, i]) transposed */
        int64_t M = wd[1] * group, k[PFVM__NN_SP], perm[PFVM_MAX_RANK], yd[PFVM_MAX_RANK], pe[PFVM__NN_SP];
        pfvm_value *gyr, *xt;
        for (i = 0; i < r; i++)
            perm[i] = i;
        perm[0] = 1;
        perm[1] = 0;
        yd[0] = yd[1] = -1;
        for (i = 0; i < r - 2; i++) {
            yd[i + 2] = out[i];
            k[i] = wd[i + 2];
            pe[i] = w.pe[i] > 0 ? w.pe[i] : 0;
        }
        gyr = pfvm__nn_gswap(g, gy, r, M, group, yd);
        xt = pfvm_grad_transpose(g, x, perm, r);
        if (pfvm_grad_add(g, W, pfvm__nn_gcorr(g, gyr, xt, r, w.d, w.s, w.pb, pe, group, k)))
            return g->st->code;
    }
    if (b && pfvm_grad_needed(g, b))
        return pfvm_grad_add(g, b, pfvm_grad_reduce(g, "ReduceSum", gy, axes, pfvm__nn_gaxes(r, 1, axes), 0));
    return PFVM_OK;
}

/* MaxPool before opset 16 with overlapping windows (no scatter-add): for
 * each kernel offset q, the windows whose argmax sits at q send their
 * gradient to x[o*s + q*d - p], a map that is one to one for a fixed q.
 * Masks [N, C, K, O] select, per window, its argmax's offset (the in-plane
 * index Indices mod H*W against a constant map of each offset's position);
 * one depthwise ConvTranspose with a one-hot kernel per offset places and
 * sums them. Needs the spatial dims and C known. */
static pfvm_value *pfvm__nn_gmaxpool_onehot(pfvm_grad_ctx *g, pfvm_value *x, pfvm_value *gy, pfvm_value *idx,
                                            const pfvm__nn_win *w)
{
    int64_t xd[PFVM_MAX_RANK], in[PFVM__NN_SP], out[PFVM__NN_SP], o[PFVM__NN_SP], q[PFVM__NN_SP], K = 1, O = 1, plane = 1;
    int64_t dims[PFVM_MAX_RANK], two = 2, ax2 = 2, at, i;
    int r, nsp;
    int64_t *pos, *onehot;
    pfvm_value *posv, *wv, *irel, *mask, *z, *in2[2];
    pfvm_node *nd;
    pfvm__nn_win ww = *w;
    if (!pfvm__nn_gdims(g, x, xd, &r, 1))
        return NULL;
    if (xd[1] < 0) {
        pfvm_grad_fail(g, "needs the channel count of '%s' known", x->name);
        return NULL;
    }
    nsp = r - 2;
    for (i = 0; i < PFVM__NN_SP; i++)
        in[i] = i < nsp ? xd[i + 2] : 1;
    if (pfvm__nn_resolve(&ww, in, out, g->st))
        return NULL;
    for (i = 0; i < nsp; i++) {
        K *= ww.k[i];
        O *= out[i];
        plane *= in[i];
    }
    pos = (int64_t *)pfvm__malloc(sizeof(int64_t) * (size_t)(K * O + 1));
    onehot = (int64_t *)pfvm__malloc(sizeof(int64_t) * (size_t)(K * K + 1));
    if (!pos || !onehot) {
        pfvm__free(pos);
        pfvm__free(onehot);
        pfvm__fail(g->st, PFVM_ERR_NOMEM, "out of memory");
        return NULL;
    }
    /* pos[q, o]: in-plane index of x[o*s + q*d - p], -1 in the padding */
    at = 0;
    for (q[0] = 0; q[0] < ww.k[0]; q[0]++)
        for (q[1] = 0; q[1] < (nsp > 1 ? ww.k[1] : 1); q[1]++)
            for (q[2] = 0; q[2] < (nsp > 2 ? ww.k[2] : 1); q[2]++)
                for (o[0] = 0; o[0] < out[0]; o[0]++)
                    for (o[1] = 0; o[1] < out[1]; o[1]++)
                        for (o[2] = 0; o[2] < out[2]; o[2]++) {
                            int64_t flat = 0, ok = 1, d;
                            for (d = 0; d < PFVM__NN_SP; d++) {
                                int64_t c = d < nsp ? o[d] * ww.s[d] + q[d] * ww.d[d] - ww.pb[d] : 0;
                                if (c < 0 || c >= in[d])
                                    ok = 0;
                                flat = flat * in[d] + c;
                            }
                            pos[at++] = ok ? flat : -1;
                        }
    for (i = 0; i < K * K; i++)
        onehot[i] = i % (K + 1) == 0;
    dims[0] = K;
    for (i = 0; i < nsp; i++)
        dims[i + 1] = out[i];
    posv = pfvm_grad_tensor(g, PFVM_INT64, nsp + 1, dims, pos);
    /* kernel [C*K, 1, k...]: channel c*K + q is one at offset q */
    dims[0] = K;
    dims[1] = 1;
    for (i = 0; i < nsp; i++)
        dims[i + 2] = ww.k[i];
    wv = pfvm_grad_cast(g, pfvm_grad_tensor(g, PFVM_INT64, r, dims, onehot), pfvm_grad_dtype(g, x));
    pfvm__free(pos);
    pfvm__free(onehot);
    {
        int64_t reps[PFVM_MAX_RANK];
        for (i = 0; i < r; i++)
            reps[i] = i ? 1 : xd[1];
        wv = pfvm_grad_op2(g, "Tile", wv, pfvm_grad_ints(g, reps, r));
    }
    /* Indices mod H*W, then masks [N, C, K, O...] */
    {
        pfvm_value *hw = pfvm_grad_scalar(g, PFVM_INT64, (double)plane);
        irel = pfvm_grad_op2(g, "Sub", idx, pfvm_grad_op2(g, "Mul", pfvm_grad_op2(g, "Div", idx, hw), hw));
    }
    mask = pfvm_grad_op2(g, "Equal", pfvm_grad_unsqueeze(g, irel, &ax2, 1), posv);
    z = pfvm_grad_op2(g, "Mul", pfvm_grad_cast(g, mask, pfvm_grad_dtype(g, x)), pfvm_grad_unsqueeze(g, gy, &ax2, 1));
    dims[0] = 0;
    dims[1] = xd[1] * K;
    for (i = 0; i < nsp; i++)
        dims[i + 2] = out[i];
    z = pfvm_grad_op2(g, "Reshape", z, pfvm_grad_ints(g, dims, r));
    (void)two;
    in2[0] = z;
    in2[1] = wv;
    {
        /* the transposed convolution of a stride-s window, shaped back to in */
        int64_t pe[PFVM__NN_SP], opad[PFVM__NN_SP];
        for (i = 0; i < nsp; i++) {
            int64_t total = (out[i] - 1) * ww.s[i] + pfvm__nn_extent(&ww, i) - in[i];
            pe[i] = total - ww.pb[i];
            opad[i] = 0;
            if (pe[i] < 0) {
                opad[i] = -pe[i];
                pe[i] = 0;
            }
        }
        nd = pfvm_grad_node(g, "ConvTranspose", in2, 2, 1);
        if (pfvm__nn_gwin_attrs(g, nd, nsp, ww.s, ww.d, ww.pb, pe, xd[1], opad))
            return NULL;
    }
    return nd->outputs[0];
}

/* MaxPool: the gradient goes to the argmax of each window, read from the
 * forward node's Indices (flat, row-major): scattered back with
 * ScatterElements (reduction add for overlapping windows, opset 16), or
 * placed by a one-hot transposed convolution before that. */
static pfvm_code pfvm__nn_k_maxpool_grad(pfvm_grad_ctx *g, const pfvm_node *n)
{
    pfvm_value *gy = pfvm_grad_out(g, 0), *x = n->inputs[0], *idx, *in[3];
    pfvm_node *nd;
    int64_t minus1 = -1;
    pfvm__nn_win w;
    int r, i, overlap = 0;
    if (!gy)
        return PFVM_OK;
    r = pfvm_grad_type(g, x)->shape.rank;
    if (r < 3)
        return pfvm_grad_fail(g, "input of rank %d", r);
    if (n->opset < 8)
        return pfvm_grad_fail(g, "needs opset 8 (MaxPool's Indices)");
    if (pfvm_node_attr_int(n, "storage_order", 0))
        return pfvm_grad_fail(g, "column-major indices (storage_order 1)");
    if (pfvm__nn_window(n, r - 2, NULL, &w, g->st))
        return g->st->code;
    for (i = 0; i < w.n; i++)
        if (w.s[i] < pfvm__nn_extent(&w, i))
            overlap = 1;
    idx = pfvm_grad_forward_output(g, 1);
    if (g->opset < (overlap ? 16 : 11))
        return pfvm_grad_add(g, x, pfvm__nn_gmaxpool_onehot(g, x, gy, idx, &w));
    in[0] = pfvm_grad_fill(g, pfvm_grad_numel(g, x), pfvm_grad_dtype(g, x), 0);
    in[1] = pfvm_grad_op2(g, "Reshape", idx, pfvm_grad_ints(g, &minus1, 1));
    in[2] = pfvm_grad_op2(g, "Reshape", gy, pfvm_grad_ints(g, &minus1, 1));
    nd = pfvm_grad_node(g, "ScatterElements", in, 3, 1);
    if (!nd || (overlap && pfvm_node_set_attr_string(nd, "reduction", "add", g->st)))
        return g->st->code;
    return pfvm_grad_add(g, x, pfvm_grad_reshape_like(g, nd->outputs[0], x));
}

/* AveragePool: dY divided by each window's divisor (a constant map, the
 * kernel's counting rule), spread back over the window by a transposed
 * depthwise convolution with a kernel of ones. */
static pfvm_code pfvm__nn_k_avgpool_grad(pfvm_grad_ctx *g, const pfvm_node *n)
{
    pfvm_value *gy = pfvm_grad_out(g, 0), *x = n->inputs[0], *ones, *div;
    int64_t xd[PFVM_MAX_RANK], in[PFVM__NN_SP], out[PFVM__NN_SP], o[PFVM__NN_SP], kd[PFVM_MAX_RANK], dd[PFVM_MAX_RANK];
    int count_pad = pfvm_node_attr_int(n, "count_include_pad", 0) != 0;
    pfvm__nn_win w;
    int r, i;
    int64_t total = 1, at = 0;
    double *cnt;
    pfvm_dtype dt;
    if (!gy)
        return PFVM_OK;
    if (!pfvm__nn_gdims(g, x, xd, &r, 1))
        return g->st->code;
    if (xd[1] < 0)
        return pfvm_grad_fail(g, "needs the channel count of '%s' known", x->name);
    if (pfvm__nn_window(n, r - 2, NULL, &w, g->st))
        return g->st->code;
    for (i = 0; i < r - 2; i++)
        in[i] = xd[i + 2];
    for (; i < PFVM__NN_SP; i++)
        in[i] = 1;
    if (pfvm__nn_resolve(&w, in, out, g->st))
        return g->st->code;
    /* the divisor of each output position */
    dd[0] = dd[1] = 1;
    for (i = 0; i < r - 2; i++)
        total *= (dd[i + 2] = out[i]);
    cnt = (double *)pfvm__malloc(sizeof(double) * (size_t)(total + 1));
    if (!cnt)
        return pfvm__fail(g->st, PFVM_ERR_NOMEM, "out of memory");
    for (o[0] = 0; o[0] < out[0]; o[0]++)
        for (o[1] = 0; o[1] < out[1]; o[1]++)
            for (o[2] = 0; o[2] < out[2]; o[2]++) {
                int64_t c = 1, ka, kb;
                for (i = 0; i < PFVM__NN_SP; i++) {
                    int64_t org = o[i] * w.s[i] - w.pb[i];
                    if (count_pad)
                        pfvm__nn_krange(org, w.d[i], w.k[i], -w.pb[i], in[i] + w.pe[i], &ka, &kb);
                    else
                        pfvm__nn_krange(org, w.d[i], w.k[i], 0, in[i], &ka, &kb);
                    c *= kb - ka;
                }
                cnt[at++] = c ? 1.0 / (double)c : 0;
            }
    dt = pfvm_grad_dtype(g, x);
    {
        pfvm_tensor tmp;
        void *buf = pfvm__malloc(pfvm_dtype_size(dt) * (size_t)(total + 1));
        if (!buf) {
            pfvm__free(cnt);
            return pfvm__fail(g->st, PFVM_ERR_NOMEM, "out of memory");
        }
        memset(&tmp, 0, sizeof tmp);
        tmp.dtype = dt;
        tmp.data = buf;
        tmp.nbytes = pfvm_dtype_size(dt) * (size_t)(total + 1);
        for (i = 0; i < total; i++)
            pfvm_red_store(&tmp, i, cnt[i]);
        div = pfvm_grad_tensor(g, dt, r, dd, buf);
        pfvm__free(buf);
    }
    pfvm__free(cnt);
    /* ones [C, 1, k...] */
    kd[0] = xd[1];
    kd[1] = 1;
    for (i = 0; i < r - 2; i++)
        kd[i + 2] = w.k[i];
    ones = pfvm_grad_op1(g, "ConstantOfShape", pfvm_grad_ints(g, kd, r));
    if (ones) {
        pfvm_attr *a = pfvm_node_add_attr(ones->producer, "value", PFVM_ATTR_TENSOR, g->st);
        int64_t one = 1;
        if (!a || !(a->t = pfvm_model_tensor(g->m, dt, 1, &one, NULL, g->st)))
            return g->st->code;
        pfvm_red_store(a->t, 0, 1);
    }
    return pfvm_grad_add(g, x, pfvm__nn_gconvt(g, pfvm_grad_op2(g, "Mul", gy, div), ones, &w, in, out, xd[1]));
}

/* GlobalAveragePool: dY spread evenly; GlobalMaxPool: to the maxima,
 * shared on ties. */
static pfvm_code pfvm__nn_k_gap_grad(pfvm_grad_ctx *g, const pfvm_node *n)
{
    pfvm_value *gy = pfvm_grad_out(g, 0), *x = n->inputs[0];
    const pfvm_type *t;
    int64_t plane = 1, dim;
    int i;
    if (!gy)
        return PFVM_OK;
    t = pfvm_grad_type(g, x);
    for (i = 2; i < t->shape.rank && plane > 0; i++)
        plane = pfvm_sym_is_const(t->shape.dims[i], &dim) ? plane * dim : -1;
    gy = pfvm_grad_expand(g, gy, x);
    if (plane > 0)
        return pfvm_grad_add(g, x, pfvm_grad_op2(g, "Div", gy, pfvm_grad_scalar_like(g, x, (double)plane)));
    return pfvm_grad_add(g, x, pfvm_grad_op2(g, "Div", gy,
                                             pfvm_grad_cast(g, pfvm_grad_op2(g, "Div", pfvm_grad_op1(g, "Size", x),
                                                                             pfvm_grad_op1(g, "Size", n->outputs[0])),
                                                            pfvm_grad_dtype(g, x))));
}

static pfvm_code pfvm__nn_k_gmp_grad(pfvm_grad_ctx *g, const pfvm_node *n)
{
    pfvm_value *gy = pfvm_grad_out(g, 0), *x = n->inputs[0], *m;
    int64_t axes[PFVM_MAX_RANK];
    int r, i;
    if (!gy)
        return PFVM_OK;
    r = pfvm_grad_type(g, x)->shape.rank;
    if (r < 3)
        return pfvm_grad_fail(g, "input of rank %d", r);
    for (i = 2; i < r; i++)
        axes[i - 2] = i;
    m = pfvm_grad_cast(g, pfvm_grad_op2(g, "Equal", x, n->outputs[0]), pfvm_grad_dtype(g, x));
    return pfvm_grad_add(g, x, pfvm_grad_op2(g, "Div", pfvm_grad_op2(g, "Mul", m, gy),
                                             pfvm_grad_reduce(g, "ReduceSum", m, axes, r - 2, 1)));
}

/* The statistics of a normalisation over `axes` (kept as 1s): mean, x -
 * mean, 1/sqrt(var + eps), xhat, and the element count of one group. */
typedef struct pfvm__nn_gstats {
    pfvm_value *mean, *xc, *inv, *xhat, *count;
} pfvm__nn_gstats;

static void pfvm__nn_gstats_make(pfvm_grad_ctx *g, pfvm_value *x, const int64_t *axes, int n_axes, double eps,
                                 pfvm__nn_gstats *s)
{
    const pfvm_type *t = pfvm_grad_type(g, x);
    pfvm_value *var;
    int64_t count = 1, dim;
    int i;
    s->mean = pfvm_grad_reduce(g, "ReduceMean", x, axes, n_axes, 1);
    s->xc = pfvm_grad_op2(g, "Sub", x, s->mean);
    var = pfvm_grad_reduce(g, "ReduceMean", pfvm_grad_op2(g, "Mul", s->xc, s->xc), axes, n_axes, 1);
    s->inv = pfvm_grad_op1(g, "Reciprocal", pfvm_grad_op1(g, "Sqrt", pfvm_grad_op2(g, "Add", var, pfvm_grad_scalar_like(g, x, eps))));
    s->xhat = pfvm_grad_op2(g, "Mul", s->xc, s->inv);
    for (i = 0; t && i < n_axes && count > 0; i++)
        count = pfvm_sym_is_const(t->shape.dims[axes[i]], &dim) ? count * dim : -1;
    s->count = count > 0 ? pfvm_grad_scalar_like(g, x, (double)count)
                         : pfvm_grad_cast(g, pfvm_grad_op2(g, "Div", pfvm_grad_op1(g, "Size", x), pfvm_grad_op1(g, "Size", s->mean)),
                                          pfvm_grad_dtype(g, x));
}

/* dX of a normalisation y = xhat given h = dY * scale:
 * inv * (h - mean(h) - xhat * mean(h * xhat)); plus, for gradients of the
 * statistics themselves (kept shapes, NULL: none), gm / count for the mean
 * and gv * 2 (x - mean) / count for the variance. */
static pfvm_value *pfvm__nn_gnorm_dx(pfvm_grad_ctx *g, const pfvm__nn_gstats *s, pfvm_value *h, pfvm_value *gm,
                                     pfvm_value *gv, const int64_t *axes, int n_axes)
{
    pfvm_value *dx = NULL, *t;
    if (h) {
        t = pfvm_grad_op2(g, "Sub", h, pfvm_grad_reduce(g, "ReduceMean", h, axes, n_axes, 1));
        t = pfvm_grad_op2(g, "Sub", t, pfvm_grad_op2(g, "Mul", s->xhat, pfvm_grad_reduce(g, "ReduceMean", pfvm_grad_op2(g, "Mul", h, s->xhat), axes, n_axes, 1)));
        dx = pfvm_grad_op2(g, "Mul", s->inv, t);
    }
    if (gm) {
        t = pfvm_grad_op2(g, "Mul", pfvm_grad_op2(g, "Div", gm, s->count), pfvm_grad_ones_like(g, s->xc));
        dx = dx ? pfvm_grad_op2(g, "Add", dx, t) : t;
    }
    if (gv) {
        t = pfvm_grad_op2(g, "Mul", pfvm_grad_op2(g, "Div", pfvm_grad_op2(g, "Mul", gv, pfvm_grad_scalar_like(g, s->xc, 2)), s->count), s->xc);
        dx = dx ? pfvm_grad_op2(g, "Add", dx, t) : t;
    }
    return dx;
}

/* p ([C]) as [C, 1, ...] against a rank-r [N, C, ...] tensor. */
static pfvm_value *pfvm__nn_gchan(pfvm_grad_ctx *g, pfvm_value *p, int r)
{
    int64_t axes[PFVM_MAX_RANK];
    int i;
    for (i = 0; i < r - 2; i++)
        axes[i] = i + 1;
    return pfvm_grad_unsqueeze(g, p, axes, r - 2);
}

static int pfvm__nn_gbn_training(const pfvm_node *n)
{
    if (n->opset >= 14)
        return pfvm_node_attr_int(n, "training_mode", 0) != 0;
    if (n->opset < 7 && pfvm_node_attr_int(n, "is_test", 0))
        return 0;
    return n->n_outputs > 1 && n->outputs[1];
}

/* BatchNormalization. Training: Y normalises with the batch statistics,
 * functions of X; the running statistics out (1, 2) are
 * input * momentum + batch statistic * (1 - momentum), and before opset 14
 * outputs 3 and 4 are the batch mean and (biased) variance themselves.
 * Inference: the given mean and variance are inputs like the others. */
static pfvm_code pfvm__nn_k_bn_grad(pfvm_grad_ctx *g, const pfvm_node *n)
{
    pfvm_value *gy = pfvm_grad_out(g, 0), *x = n->inputs[0], *s = n->inputs[1], *b = n->inputs[2];
    pfvm_value *mean = n->inputs[3], *var = n->inputs[4], *xhat = NULL, *sc;
    double eps = pfvm_node_attr_float(n, "epsilon", 1e-5f), mom = pfvm_node_attr_float(n, "momentum", 0.9f);
    int64_t axes[PFVM_MAX_RANK];
    int r, na;
    r = pfvm_grad_type(g, x)->shape.rank;
    if (r < 2)
        return pfvm_grad_fail(g, "input of rank %d", r);
    if (n->opset < 9 && !pfvm_node_attr_int(n, "spatial", 1))
        return pfvm_grad_fail(g, "spatial=0");
    na = pfvm__nn_gaxes(r, 1, axes);
    sc = pfvm__nn_gchan(g, s, r);
    if (pfvm__nn_gbn_training(n)) {
        pfvm__nn_gstats st;
        pfvm_value *grm = pfvm_grad_out(g, 1), *grv = pfvm_grad_out(g, 2), *gm = NULL, *gv = NULL, *dx;
        pfvm_value *gsm = pfvm_grad_out(g, 3), *gsv = pfvm_grad_out(g, 4);
        pfvm_dtype dt = pfvm_grad_dtype(g, x);
        if (!gy && !grm && !grv && !gsm && !gsv)
            return PFVM_OK;
        pfvm__nn_gstats_make(g, x, axes, na, eps, &st);
        xhat = st.xhat;
        if (grm) {
            if (pfvm_grad_needed(g, mean) && pfvm_grad_add(g, mean, pfvm_grad_op2(g, "Mul", grm, pfvm_grad_scalar_like(g, grm, mom))))
                return g->st->code;
            gm = pfvm_grad_op2(g, "Mul", grm, pfvm_grad_scalar_like(g, grm, 1 - mom));
        }
        if (grv) {
            if (pfvm_grad_needed(g, var) && pfvm_grad_add(g, var, pfvm_grad_op2(g, "Mul", grv, pfvm_grad_scalar_like(g, grv, mom))))
                return g->st->code;
            gv = pfvm_grad_op2(g, "Mul", grv, pfvm_grad_scalar_like(g, grv, 1 - mom));
        }
        if (gsm)
            gm = gm ? pfvm_grad_op2(g, "Add", gm, gsm) : gsm;
        if (gsv)
            gv = gv ? pfvm_grad_op2(g, "Add", gv, gsv) : gsv;
        gm = gm ? pfvm__nn_gchan(g, pfvm_grad_cast(g, gm, dt), r) : NULL;
        gv = gv ? pfvm__nn_gchan(g, pfvm_grad_cast(g, gv, dt), r) : NULL;
        if (pfvm_grad_needed(g, x)) {
            dx = pfvm__nn_gnorm_dx(g, &st, gy ? pfvm_grad_op2(g, "Mul", gy, sc) : NULL, gm, gv, axes, na);
            if (pfvm_grad_add(g, x, dx))
                return g->st->code;
        }
        if (!gy)
            return PFVM_OK;
    } else {
        pfvm_value *inv, *xc, *gsum;
        if (!gy)
            return PFVM_OK;
        inv = pfvm__nn_gchan(g, pfvm_grad_op1(g, "Reciprocal", pfvm_grad_op1(g, "Sqrt", pfvm_grad_op2(g, "Add", var, pfvm_grad_scalar_like(g, var, eps)))), r);
        xc = pfvm_grad_op2(g, "Sub", x, pfvm__nn_gchan(g, mean, r));
        xhat = pfvm_grad_op2(g, "Mul", xc, inv);
        if (pfvm_grad_needed(g, x) && pfvm_grad_add(g, x, pfvm_grad_op2(g, "Mul", gy, pfvm_grad_op2(g, "Mul", sc, inv))))
            return g->st->code;
        gsum = pfvm_grad_reduce(g, "ReduceSum", gy, axes, na, 0);
        if (pfvm_grad_needed(g, mean) &&
            pfvm_grad_add(g, mean, pfvm_grad_op1(g, "Neg", pfvm_grad_op2(g, "Mul", gsum, pfvm_grad_op2(g, "Mul", s, pfvm_grad_reshape_like(g, inv, s))))))
            return g->st->code;
        if (pfvm_grad_needed(g, var)) {
            /* d/dvar of xc * s * (var + eps)^-1/2 = -xc * s * inv^3 / 2 */
            pfvm_value *i3 = pfvm_grad_op2(g, "Mul", inv, pfvm_grad_op2(g, "Mul", inv, inv));
            pfvm_value *t = pfvm_grad_reduce(g, "ReduceSum", pfvm_grad_op2(g, "Mul", pfvm_grad_op2(g, "Mul", gy, xc), i3), axes, na, 0);
            if (pfvm_grad_add(g, var, pfvm_grad_op2(g, "Mul", t, pfvm_grad_op2(g, "Mul", s, pfvm_grad_scalar_like(g, s, -0.5)))))
                return g->st->code;
        }
    }
    if (pfvm_grad_needed(g, s) &&
        pfvm_grad_add(g, s, pfvm_grad_reduce(g, "ReduceSum", pfvm_grad_op2(g, "Mul", gy, xhat), axes, na, 0)))
        return g->st->code;
    if (pfvm_grad_needed(g, b))
        return pfvm_grad_add(g, b, pfvm_grad_reduce(g, "ReduceSum", gy, axes, na, 0));
    return PFVM_OK;
}

/* LayerNormalization over the axes from `axis` on; its Mean and InvStdDev
 * outputs (stash type) are functions of X too: d inv / d var = -inv^3 / 2. */
static pfvm_code pfvm__nn_k_ln_grad(pfvm_grad_ctx *g, const pfvm_node *n)
{
    pfvm_value *gy = pfvm_grad_out(g, 0), *x = n->inputs[0], *s = n->inputs[1], *b = n->n_inputs > 2 ? n->inputs[2] : NULL;
    pfvm_value *gm = pfvm_grad_out(g, 1), *gi = pfvm_grad_out(g, 2), *gv = NULL, *dx;
    double eps = pfvm_node_attr_float(n, "epsilon", 1e-5f);
    int64_t axes[PFVM_MAX_RANK];
    pfvm__nn_gstats st;
    pfvm_dtype dt;
    int r, a, i;
    if (!gy && !gm && !gi)
        return PFVM_OK;
    r = pfvm_grad_type(g, x)->shape.rank;
    if (r < 1 || (a = pfvm__axis(pfvm_node_attr_int(n, "axis", -1), r)) < 0)
        return pfvm_grad_fail(g, "axis out of range");
    for (i = a; i < r; i++)
        axes[i - a] = i;
    dt = pfvm_grad_dtype(g, x);
    pfvm__nn_gstats_make(g, x, axes, r - a, eps, &st);
    if (gi && pfvm_grad_needed(g, x)) {
        pfvm_value *i3 = pfvm_grad_op2(g, "Mul", st.inv, pfvm_grad_op2(g, "Mul", st.inv, st.inv));
        gv = pfvm_grad_op2(g, "Mul", pfvm_grad_cast(g, gi, dt), pfvm_grad_op2(g, "Mul", i3, pfvm_grad_scalar_like(g, x, -0.5)));
    }
    if (pfvm_grad_needed(g, x)) {
        dx = pfvm__nn_gnorm_dx(g, &st, gy ? pfvm_grad_op2(g, "Mul", gy, s) : NULL, gm ? pfvm_grad_cast(g, gm, dt) : NULL, gv,
                               axes, r - a);
        if (pfvm_grad_add(g, x, dx))
            return g->st->code;
    }
    if (!gy)
        return PFVM_OK;
    if (pfvm_grad_needed(g, s) && pfvm_grad_add(g, s, pfvm_grad_sum_to(g, pfvm_grad_op2(g, "Mul", gy, st.xhat), s)))
        return g->st->code;
    if (b && pfvm_grad_needed(g, b))
        return pfvm_grad_add(g, b, pfvm_grad_sum_to(g, gy, b));
    return PFVM_OK;
}

/* InstanceNormalization: per sample and channel, over the spatial axes. */
static pfvm_code pfvm__nn_k_instnorm_grad(pfvm_grad_ctx *g, const pfvm_node *n)
{
    pfvm_value *gy = pfvm_grad_out(g, 0), *x = n->inputs[0], *s = n->inputs[1], *b = n->inputs[2];
    double eps = pfvm_node_attr_float(n, "epsilon", 1e-5f);
    int64_t axes[PFVM_MAX_RANK], ca[PFVM_MAX_RANK];
    pfvm__nn_gstats st;
    int r, i;
    if (!gy)
        return PFVM_OK;
    r = pfvm_grad_type(g, x)->shape.rank;
    if (r < 3)
        return pfvm_grad_fail(g, "input of rank %d", r);
    for (i = 2; i < r; i++)
        axes[i - 2] = i;
    pfvm__nn_gstats_make(g, x, axes, r - 2, eps, &st);
    if (pfvm_grad_needed(g, x) &&
        pfvm_grad_add(g, x, pfvm__nn_gnorm_dx(g, &st, pfvm_grad_op2(g, "Mul", gy, pfvm__nn_gchan(g, s, r)), NULL, NULL, axes, r - 2)))
        return g->st->code;
    if (pfvm_grad_needed(g, s) &&
        pfvm_grad_add(g, s, pfvm_grad_reduce(g, "ReduceSum", pfvm_grad_op2(g, "Mul", gy, st.xhat), ca, pfvm__nn_gaxes(r, 1, ca), 0)))
        return g->st->code;
    if (pfvm_grad_needed(g, b))
        return pfvm_grad_add(g, b, pfvm_grad_reduce(g, "ReduceSum", gy, ca, pfvm__nn_gaxes(r, 1, ca), 0));
    return PFVM_OK;
}

/* The axes Softmax and LogSoftmax normalise over: `axis` alone from opset
 * 13, every axis from `axis` on before (the 2-D coercion). */
static int pfvm__nn_gsoftmax_axes(pfvm_grad_ctx *g, const pfvm_node *n, int64_t *axes)
{
    int r = pfvm_grad_type(g, n->inputs[0])->shape.rank, a, i;
    int64_t axis = pfvm_node_attr_int(n, "axis", n->opset >= 13 ? -1 : 1);
    if (r < 0 || (a = pfvm__axis(axis, r)) < 0)
        return pfvm_grad_fail(g, "axis out of range"), -1;
    if (n->opset >= 13) {
        axes[0] = a;
        return 1;
    }
    for (i = a; i < r; i++)
        axes[i - a] = i;
    return r - a;
}

/* Softmax: dX = y * (dY - sum(dY * y)). */
static pfvm_code pfvm__nn_k_softmax_grad(pfvm_grad_ctx *g, const pfvm_node *n)
{
    pfvm_value *gy = pfvm_grad_out(g, 0), *y = n->outputs[0];
    int64_t axes[PFVM_MAX_RANK];
    int na;
    if (!gy)
        return PFVM_OK;
    if ((na = pfvm__nn_gsoftmax_axes(g, n, axes)) < 0)
        return g->st->code;
    return pfvm_grad_add(g, n->inputs[0],
                         pfvm_grad_op2(g, "Mul", y, pfvm_grad_op2(g, "Sub", gy, pfvm_grad_reduce(g, "ReduceSum", pfvm_grad_op2(g, "Mul", gy, y), axes, na, 1))));
}

/* LogSoftmax: dX = dY - exp(y) * sum(dY). */
static pfvm_code pfvm__nn_k_logsoftmax_grad(pfvm_grad_ctx *g, const pfvm_node *n)
{
    pfvm_value *gy = pfvm_grad_out(g, 0), *y = n->outputs[0];
    int64_t axes[PFVM_MAX_RANK];
    int na;
    if (!gy)
        return PFVM_OK;
    if ((na = pfvm__nn_gsoftmax_axes(g, n, axes)) < 0)
        return g->st->code;
    return pfvm_grad_add(g, n->inputs[0],
                         pfvm_grad_op2(g, "Sub", gy, pfvm_grad_op2(g, "Mul", pfvm_grad_op1(g, "Exp", y), pfvm_grad_reduce(g, "ReduceSum", gy, axes, na, 1))));
}

/* LpNormalization, y = x / |x|_p along axis: p = 2 gives
 * (dY - y sum(dY y)) / |x|, p = 1 gives (dY - sign(x) sum(dY y)) / |x|. */
static pfvm_code pfvm__nn_k_lpnorm_grad(pfvm_grad_ctx *g, const pfvm_node *n)
{
    pfvm_value *gy = pfvm_grad_out(g, 0), *x = n->inputs[0], *y = n->outputs[0], *norm, *s;
    int64_t p = pfvm_node_attr_int(n, "p", 2), axis;
    int r, a;
    if (!gy)
        return PFVM_OK;
    r = pfvm_grad_type(g, x)->shape.rank;
    if (r < 1 || (a = pfvm__axis(pfvm_node_attr_int(n, "axis", -1), r)) < 0)
        return pfvm_grad_fail(g, "axis out of range");
    if (p != 1 && p != 2)
        return pfvm_grad_fail(g, "p = %lld", (long long)p);
    axis = a;
    norm = pfvm_grad_reduce(g, p == 2 ? "ReduceL2" : "ReduceL1", x, &axis, 1, 1);
    s = pfvm_grad_reduce(g, "ReduceSum", pfvm_grad_op2(g, "Mul", gy, y), &axis, 1, 1);
    return pfvm_grad_add(g, x, pfvm_grad_op2(g, "Div", pfvm_grad_op2(g, "Sub", gy, pfvm_grad_op2(g, "Mul", p == 2 ? y : pfvm_grad_op1(g, "Sign", x), s)), norm));
}

/* ---- cost ------------------------------------------------------------------------------ */

/* Multiply-adds per element of `per` (Conv: each output reads one filter
 * slice; ConvTranspose: each input writes one), plus the bias. */
static double pfvm__nn_conv_cost(const pfvm_dims *in, int n_in, double per, double y)
{
    double w = n_in > 1 ? pfvm_dims_numel(&in[1]) : -1;
    if (per < 0 || w < 0 || y < 0 || in[1].rank < 1 || in[1].d[0] <= 0)
        return -1;
    return 2.0 * per * (w / (double)in[1].d[0]) + (n_in > 2 && in[2].rank >= 0 ? y : 0);
}

static double pfvm__nn_conv_flops(const pfvm_node *n, const pfvm_dims *in, int n_in, const pfvm_dims *out, int n_out)
{
    double y = n_out ? pfvm_dims_numel(&out[0]) : -1;
    (void)n;
    return pfvm__nn_conv_cost(in, n_in, y, y);
}

/* Workspace hook (pfvm_workspace_fn): the im2col products' blocks, as
 * the float kernel asks pfvm_la_workspace for them (none for depthwise). */
/* The output's spatial size from x's dims and the window: a Conv inside a
 * fused group of a model with a stored plan, which holds no shape for the
 * group's inner values (0 when unknown). Not in a PFVM_NO_FUSION build:
 * there every Conv's output has its shape when bound. */
#ifndef PFVM_NO_FUSION
static int64_t pfvm__nn_conv_out_plane(const pfvm_node *n, const pfvm_dims *x, const pfvm_dims *w)
{
    int64_t kd[PFVM__NN_SP] = {0}, in_sp[PFVM__NN_SP], out_sp[PFVM__NN_SP], plane = 1;
    pfvm__nn_win win;
    int i, nsp = w->rank - 2;
    if (x->rank != w->rank || nsp < 1 || nsp > PFVM__NN_SP)
        return 0;
    for (i = 0; i < PFVM__NN_SP; i++) {
        kd[i] = i < nsp ? w->d[i + 2] : 0;
        in_sp[i] = i < nsp ? x->d[i + 2] : 1;
    }
    if (pfvm__nn_window(n, nsp, kd, &win, NULL) || pfvm__nn_resolve(&win, in_sp, out_sp, NULL))
        return 0;
    for (i = 0; i < nsp; i++)
        plane *= out_sp[i];
    return plane;
}
#endif

/* Conv's workspace in floats: the engine's (`floats`), or more where the
 * lanes kernel may take the node (its padded input copy, AVX-512 hosts). */
static size_t pfvm__nn_conv_lanes_ws(const pfvm_node *n, const pfvm_dims *in, const pfvm_dims *out, int known_out,
                                     int64_t group, int64_t mg, size_t floats)
{
#ifdef PFVM__LA_CONV_S1
    int64_t kd[PFVM__NN_SP] = {0};
    pfvm__nn_win win;
    pfvm_la_conv cv;
    size_t lanes;
    if (!known_out || group != 1 || in[0].rank != 4 || in[1].rank != 4 || mg % PFVM_LA_LANES_M ||
        out[0].d[2] * out[0].d[3] > pfvm__nn_lanes_plane_max(in[1].d[2] * in[1].d[3], in[1].d[1]))
        return floats;
    kd[0] = in[1].d[2];
    kd[1] = in[1].d[3];
    if (pfvm__nn_window(n, 2, kd, &win, NULL))
        return floats;
    memset(&cv, 0, sizeof cv);
    cv.cin = in[1].d[1];
    cv.oh = out[0].d[2];
    cv.ow = out[0].d[3];
    cv.kh = (int)kd[0];
    cv.kw = (int)kd[1];
    cv.dh = (int)win.d[0];
    cv.dw = (int)win.d[1];
    cv.sh = (int)win.s[0];
    cv.sw = (int)win.s[1];
    lanes = pfvm_la_conv_lanes_ws_floats(&cv, mg);
    return lanes > floats ? lanes : floats;
#else
    (void)n, (void)in, (void)out, (void)known_out, (void)group, (void)mg;
    return floats;
#endif
}

static size_t pfvm__nn_conv_ws(const pfvm_node *n, const pfvm_dims *in, int n_in, const pfvm_dims *out, int n_out)
{
    int64_t group = pfvm_node_attr_int(n, "group", 1), mg, kk = 1, plane = 1;
    int i, known_out = n_out >= 1 && out[0].rank == in[1].rank;
    if (n_in < 2 || n_out < 1 || in[1].rank < 3 || group < 1)
        return 0;
    mg = in[1].d[0] / group;
    for (i = 2; i < in[1].rank; i++) {
        kk *= in[1].d[i];
        plane *= known_out ? out[0].d[i] : 1;
    }
#ifndef PFVM_NO_FUSION
    if (!known_out)
        plane = pfvm__nn_conv_out_plane(n, &in[0], &in[1]);
#endif
#ifndef PFVM_CONV_NO_DEPTHWISE
    if (mg == 1 && in[1].d[1] == 1) /* the depthwise kernel's planes */
        return 0;
#endif
    if (mg < 1 || kk < 1 || plane < 1)
        return 0;
#ifdef PFVM__NN_DIRECT
    {
        int64_t kd[PFVM__NN_SP] = {0};
        pfvm__nn_win win;
        int nsp = in[1].rank - 2;
        for (i = 0; i < nsp && i < PFVM__NN_SP; i++)
            kd[i] = in[1].d[i + 2];
        if (nsp <= 2 && !pfvm__nn_window(n, nsp, kd, &win, NULL) && pfvm__nn_direct_window(&win, mg, in[1].d[1], kk))
            return 0; /* the direct loops (their blocks on the stack, 2.5 KB) */
    }
#endif
    return pfvm__nn_conv_lanes_ws(n, in, out, known_out, group, mg, pfvm_la_sgemm_ws_floats(mg, plane, in[1].d[1] * kk)) *
           sizeof(float);
}

static double pfvm__nn_convt_flops(const pfvm_node *n, const pfvm_dims *in, int n_in, const pfvm_dims *out, int n_out)
{
    (void)n;
    return pfvm__nn_conv_cost(in, n_in, n_in ? pfvm_dims_numel(&in[0]) : -1, n_out ? pfvm_dims_numel(&out[0]) : -1);
}

/* ---- composing an exported LayerNorm (the compose pass) ---------------------- */

/* 1 when n is `op` reading `in` as input `at` (of two inputs), with the
 * other input in *other. */
static int pfvm__nn_ln_is(const pfvm_node *n, const char *op, const pfvm_value *in, int at, pfvm_value **other)
{
    if (!n || strcmp(n->op_type, op) || n->n_inputs != 2 || n->n_outputs < 1 || n->inputs[at] != in)
        return 0;
    if (other)
        *other = n->inputs[1 - at];
    return 1;
}

/* 1 when n is ReduceMean of `in` over its last axis alone, dims kept. */
static int pfvm__nn_ln_mean_last(pfvm_rewrite *rw, const pfvm_node *n, const pfvm_value *in, int rank)
{
    const int64_t *axes = NULL;
    int64_t ax[2];
    int count;
    if (!n || strcmp(n->op_type, "ReduceMean") || n->n_inputs < 1 || n->inputs[0] != in || n->n_outputs != 1 ||
        pfvm_node_attr_int(n, "keepdims", 1) != 1)
        return 0;
    if (n->n_inputs > 1 && n->inputs[1]) /* opset 18: axes as an input */
        count = pfvm_rw_ints(rw, n->inputs[1], ax, 2), axes = ax;
    else
        count = pfvm_node_attr_ints(n, "axes", &axes);
    return count == 1 && (axes[0] == rank - 1 || axes[0] == -1);
}

/* A float constant of n elements (1: a scalar of any rank) in *t. */
static int pfvm__nn_ln_const(pfvm_rewrite *rw, const pfvm_value *v, int64_t n, int vector, const pfvm_tensor **t)
{
    *t = v ? pfvm_rw_value(rw, v) : NULL;
    return *t && pfvm_dtype_is_float((*t)->dtype) && pfvm_tensor_numel(*t) == n && (!vector || (*t)->rank == 1);
}

/* The compose rule of LayerNormalization (PFVM_RW_COMPOSE, run from
 * ReduceMean's simplify hook: the pattern's first node). PyTorch exports
 * LayerNorm below opset 17 as nine nodes: m = ReduceMean(x), d = Sub(x,
 * m), v = ReduceMean(Pow(d, 2)), y = Div(d, Sqrt(Add(v, eps))) [, Mul(y,
 * gamma) [, Add(., beta)]], every intermediate read once (d twice: Pow
 * and Div), the means over the last axis alone. They become one
 * LayerNormalization(x, gamma or ones, beta) over axis -1 with that
 * epsilon: one row pass instead of nine tensors (accel streams it as one
 * rows-stream node). The model's default-domain import is raised to 17
 * when that changes no other node's definition (pfvm_rw_require_opset). */
PFVM_INTERNAL pfvm_code pfvm_nn_compose_ln(pfvm_rewrite *rw, pfvm_node *mean)
{
    pfvm_value *x = mean->n_inputs > 0 ? mean->inputs[0] : NULL, *eps_v = NULL, *two = NULL, *in[3];
    pfvm_node *sub, *pw = NULL, *div = NULL, *var, *add, *sq, *last, *mul, *badd, *rd[2];
    const pfvm_shape *xs = x ? pfvm_rw_shape(rw, x) : NULL;
    const pfvm_type *xt = x ? pfvm_rw_type(rw, x) : NULL;
    const pfvm_tensor *eps_t, *g_t = NULL, *b_t = NULL;
    pfvm_tensor *ones;
    pfvm_node *ln;
    int64_t c, i;
    int r;
    if (pfvm_rw_mode(rw) != PFVM_RW_COMPOSE || !xs || !xt || xs->rank < 1 || !pfvm_dtype_is_float(xt->dtype) ||
        !pfvm_sym_is_const(xs->dims[xs->rank - 1], &c) || c < 1 || !pfvm__nn_ln_mean_last(rw, mean, x, xs->rank))
        return PFVM_OK;
    if (!pfvm_rw_only_reader(rw, mean->outputs[0], &sub) || !pfvm__nn_ln_is(sub, "Sub", mean->outputs[0], 1, NULL) ||
        sub->inputs[0] != x || pfvm_rw_reader_nodes(rw, sub->outputs[0], rd, 2) != 2 || !rd[0] || !rd[1])
        return PFVM_OK;
    for (r = 0; r < 2; r++) {
        if (pfvm__nn_ln_is(rd[r], "Pow", sub->outputs[0], 0, &two))
            pw = rd[r];
        else if (pfvm__nn_ln_is(rd[r], "Div", sub->outputs[0], 0, NULL))
            div = rd[r];
    }
    if (!pw || !div || !pfvm_rw_is_all(rw, two, 2.0) || !pfvm_rw_only_reader(rw, pw->outputs[0], &var) ||
        !pfvm__nn_ln_mean_last(rw, var, pw->outputs[0], xs->rank) ||
        !pfvm_rw_only_reader(rw, var->outputs[0], &add) ||
        !(pfvm__nn_ln_is(add, "Add", var->outputs[0], 0, &eps_v) || pfvm__nn_ln_is(add, "Add", var->outputs[0], 1, &eps_v)) ||
        !pfvm__nn_ln_const(rw, eps_v, 1, 0, &eps_t) || !pfvm_rw_only_reader(rw, add->outputs[0], &sq) ||
        strcmp(sq->op_type, "Sqrt") || pfvm_rw_readers(rw, sq->outputs[0]) != 1 || div->inputs[1] != sq->outputs[0] ||
        !pfvm_rw_same_type(rw, div->outputs[0], x))
        return PFVM_OK;
    last = div;
    in[1] = in[2] = NULL;
    /* the affine tail: Mul by gamma, then Add of beta (either operand order) */
    if (pfvm_rw_only_reader(rw, div->outputs[0], &mul) &&
        ((pfvm__nn_ln_is(mul, "Mul", div->outputs[0], 0, &in[1]) || pfvm__nn_ln_is(mul, "Mul", div->outputs[0], 1, &in[1])) &&
         pfvm__nn_ln_const(rw, in[1], c, 1, &g_t) && pfvm_rw_same_type(rw, mul->outputs[0], x))) {
        last = mul;
        if (pfvm_rw_only_reader(rw, mul->outputs[0], &badd) &&
            (pfvm__nn_ln_is(badd, "Add", mul->outputs[0], 0, &in[2]) || pfvm__nn_ln_is(badd, "Add", mul->outputs[0], 1, &in[2])) &&
            pfvm__nn_ln_const(rw, in[2], c, 1, &b_t) && pfvm_rw_same_type(rw, badd->outputs[0], x) &&
            b_t->dtype == xt->dtype)
            last = badd;
        else
            in[2] = NULL;
    } else
        in[1] = NULL;
    if ((g_t && g_t->dtype != xt->dtype) || !pfvm_rw_require_opset(rw, 17))
        return PFVM_OK;
    if (!in[1]) { /* LayerNormalization's Scale is not optional: ones */
        if (!(in[1] = pfvm_rw_const_new(rw, xt->dtype, 1, &c, "ln_scale", &ones)))
            return pfvm_rw_code(rw);
        for (i = 0; i < c; i++)
            pfvm_red_store(ones, i, 1.0);
    }
    in[0] = x;
    if (!(ln = pfvm_rw_add_node(rw, "LayerNormalization", in, in[2] ? 3 : 2, 1, last)) ||
        pfvm_node_set_attr_int(ln, "axis", -1, rw->st) ||
        pfvm_node_set_attr_float(ln, "epsilon", (float)pfvm_tensor_get_f64(eps_t, 0), rw->st) ||
        pfvm_rw_infer_node(rw, ln))
        return pfvm_rw_code(rw);
    return pfvm_rw_forward(rw, last, 0, ln->outputs[0]);
}

/* At most this many rows on a PE: LayerNormalization's sum of squares is
 * one `gemm` (1 x 1 x cols, B transposed: the centred row with itself)
 * per row, ceil(cols / MACs) cycles each, instead of a `bin mul` and a
 * `red sum` over the tile (2 ceil(rows cols / simd)) and its temporary. */
#define PFVM__NN_LN_GEMM_ROWS 4

/* accel lowering (see pfvm_accel_fn) of LayerNormalization over the last
 * axis, each row whole on its PE: mean, centred square, variance, scale. */
PFVM_INTERNAL pfvm_code pfvm_acl_layernorm(pfvm_accel_ctx *c)
{
    const pfvm_node *n = c->node;
    const pfvm_accel_arg *x = &c->in[0], *y = &c->out[0];
    int64_t axis = pfvm_node_attr_int(n, "axis", -1), cols, rows, mean, var, tmp;
    float eps = pfvm_node_attr_float(n, "epsilon", 1e-5f);
    pfvm_code rc = PFVM_OK;
    int i;
    if (x->rank < 1 || (axis != -1 && axis != x->rank - 1) || c->n_out > 1 ||
        !c->in[1].replicated || (c->n_in > 2 && c->in[2].rank >= 0 && !c->in[2].replicated))
        return pfvm__fail(c->st, PFVM_ERR_UNSUPPORTED,
                          "node %s (LayerNormalization): accel lowers the last axis, Y only", n->name);
    cols = x->dims[x->rank - 1];
    rows = x->elems / cols;
    if (c->in[1].elems != cols || (c->n_in > 2 && c->in[2].rank >= 0 && c->in[2].elems != cols))
        return pfvm__fail(c->st, PFVM_ERR_UNSUPPORTED, "node %s (LayerNormalization): scale or bias is not one row",
                          n->name);
    mean = c->scratch(c, rows * 4);
    var = c->scratch(c, rows * 4);
    tmp = rows <= PFVM__NN_LN_GEMM_ROWS ? 0 : c->scratch(c, x->elems * 4);
    if (mean < 0 || var < 0 || tmp < 0)
        return pfvm__fail(c->st, PFVM_ERR_NOMEM, "node %s (LayerNormalization): no PE memory for temporaries", n->name);
    {
        const char *steps[] = {"red sum %lld %lld %lld %lld", "imm mul %lld %lld %.9g %lld",
                               "row sub %lld %lld %lld %lld %lld", "bin mul %lld %lld %lld %lld",
                               "red sum %lld %lld %lld %lld", "imm mul %lld %lld %.9g %lld",
                               "imm add %lld %lld %.9g %lld", "un sqrt %lld %lld %lld", "un recip %lld %lld %lld",
                               "row mul %lld %lld %lld %lld %lld", "col mul %lld %lld %lld %lld %lld",
                               "col add %lld %lld %lld %lld %lld"};
        long long Y = y->off, X = x->off, M = mean, V = var, T = tmp, R = rows, C = cols, E = x->elems, r;
        double inv = 1.0 / (double)cols;
        for (i = 0; i < 12 && rc == PFVM_OK; i++) {
            switch (i) {
            case 0: rc = c->emit(c, steps[i], M, X, R, C); break;
            case 1: rc = c->emit(c, steps[i], M, M, inv, R); break;
            case 2: rc = c->emit(c, steps[i], Y, X, M, R, C); break;
            case 3:
                if (rows > PFVM__NN_LN_GEMM_ROWS)
                    rc = c->emit(c, steps[i], T, Y, Y, E);
                break;
            case 4:
                if (rows > PFVM__NN_LN_GEMM_ROWS)
                    rc = c->emit(c, steps[i], V, T, R, C);
                for (r = 0; r < rows && rows <= PFVM__NN_LN_GEMM_ROWS && rc == PFVM_OK; r++)
                    rc = c->emit(c, "gemm %lld %lld %lld 1 1 %lld 1", V + 4 * r, Y + 4 * r * C, Y + 4 * r * C, C);
                break;
            case 5: rc = c->emit(c, steps[i], V, V, inv, R); break;
            case 6: rc = c->emit(c, steps[i], V, V, (double)eps, R); break;
            case 7: case 8: rc = c->emit(c, steps[i], V, V, R); break;
            case 9: rc = c->emit(c, steps[i], Y, Y, V, R, C); break;
            case 10: rc = c->emit(c, steps[i], Y, Y, (long long)c->in[1].off, R, C); break;
            default:
                if (c->n_in > 2 && c->in[2].rank >= 0)
                    rc = c->emit(c, steps[i], Y, Y, (long long)c->in[2].off, R, C);
            }
        }
    }
    return rc;
}

/* accel lowering (see pfvm_accel_fn) of Softmax over the last axis, each
 * row whole on its PE: row max, shifted exp, row sum, divide. */
static pfvm_code pfvm__nn_accel_softmax(pfvm_accel_ctx *c)
{
    const pfvm_node *n = c->node;
    const pfvm_accel_arg *x = &c->in[0], *y = &c->out[0];
    int64_t axis = pfvm_node_attr_int(n, "axis", n->opset >= 13 ? -1 : 1), cols, rows, red;
    long long Y, X, R, C;
    pfvm_code rc;
    if (x->rank < 1 || (axis < 0 ? axis + x->rank : axis) != x->rank - 1)
        return pfvm__fail(c->st, PFVM_ERR_UNSUPPORTED, "node %s (Softmax): accel lowers the last axis only",
                          n->name);
    cols = x->dims[x->rank - 1];
    rows = x->elems / cols;
    if ((red = c->scratch(c, rows * 4)) < 0)
        return pfvm__fail(c->st, PFVM_ERR_NOMEM, "node %s (Softmax): no PE memory for temporaries", n->name);
    Y = y->off, X = x->off, R = rows, C = cols;
    if ((rc = c->emit(c, "red max %lld %lld %lld %lld", (long long)red, X, R, C)) != PFVM_OK ||
        (rc = c->emit(c, "row sub %lld %lld %lld %lld %lld", Y, X, (long long)red, R, C)) != PFVM_OK ||
        (rc = c->emit(c, "un exp %lld %lld %lld", Y, Y, R * C)) != PFVM_OK ||
        (rc = c->emit(c, "red sum %lld %lld %lld %lld", (long long)red, Y, R, C)) != PFVM_OK)
        return rc;
    return c->emit(c, "row div %lld %lld %lld %lld %lld", Y, Y, (long long)red, R, C);
}

/* ---- kernel variants a firmware build may leave out (interp ops --config) ---------- */

/* The depthwise kernel may run: the weights' shape unknown, or one output
 * and one input channel per group. */
static int pfvm__nn_conv_needs_depthwise(const pfvm_node *n, const pfvm_value *const *in)
{
    const pfvm_value *w = n->n_inputs > 1 ? in[1] : NULL;
    int64_t group = pfvm_node_attr_int(n, "group", 1);
    if (!w || !w->init || w->init->rank < 2 || group < 1)
        return 1;
    return w->init->dims[0] / group == 1 && w->init->dims[1] == 1;
}

/* The direct loops of 32-bit Arm may run (pfvm__nn_conv_direct, and the
 * depthwise planes' blocks there): the weights' shape unknown, or at most
 * 4 output channels per group (8 over at most 3 input channels:
 * pfvm__nn_direct_window). */
static int pfvm__nn_conv_needs_direct(const pfvm_node *n, const pfvm_value *const *in)
{
    const pfvm_value *w = n->n_inputs > 1 ? in[1] : NULL;
    int64_t group = pfvm_node_attr_int(n, "group", 1);
    if (!w || !w->init || w->init->rank < 2 || group < 1)
        return 1;
    return w->init->dims[0] / group <= 4 || (w->init->dims[0] / group <= 8 && w->init->dims[1] <= 3);
}

/* The 8-bit planes may run: the input int8, uint8 or of a type not given. */
static int pfvm__nn_pool_needs_int8(const pfvm_node *n, const pfvm_value *const *in)
{
    const pfvm_value *x = n->n_inputs > 0 ? in[0] : NULL;
    if (!x || x->type.kind != PFVM_KIND_TENSOR)
        return 1;
    return x->type.dtype == PFVM_INT8 || x->type.dtype == PFVM_UINT8 || x->type.dtype == PFVM_UNDEFINED;
}

/* The generic float pooling loop may run: a float32 input (or one of a
 * type or rank not given) over other than 1 or 2 spatial dims, or
 * MaxPool's indices output asked for. */
static int pfvm__nn_pool_needs_generic(const pfvm_node *n, const pfvm_value *const *in)
{
    const pfvm_value *x = n->n_inputs > 0 ? in[0] : NULL;
    if (!x || x->type.kind != PFVM_KIND_TENSOR)
        return 1;
    if (x->type.dtype != PFVM_FLOAT && x->type.dtype != PFVM_UNDEFINED)
        return 0; /* other types take the double-precision loop in any case */
    return x->type.shape.rank < 3 || x->type.shape.rank > 4 || (n->n_outputs > 1 && n->outputs[1]);
}

/* Named "infer" so that PFVM_NO_SHAPE_INFERENCE builds (firmware, which
 * never writes a selection header) leave the tables out. */
static const pfvm_op_variant pfvm__nn_conv_infer_variants[] = {
    {"PFVM_CONV_NO_DEPTHWISE", "no Conv here has one channel per group", pfvm__nn_conv_needs_depthwise},
    {"PFVM_CONV_NO_DIRECT", "no Conv here has 4 or fewer output channels per group (8 over 3 or fewer input channels)", pfvm__nn_conv_needs_direct},
    {NULL, NULL, NULL}};
static const pfvm_op_variant pfvm__nn_maxpool_infer_variants[] = {
    {"PFVM_POOL_NO_INT8", "no MaxPool here reads 8-bit integers", pfvm__nn_pool_needs_int8},
    {"PFVM_POOL_PLANES_ONLY", "float pooling here is over 1 or 2 spatial dims, without indices", pfvm__nn_pool_needs_generic},
    {NULL, NULL, NULL}};
static const pfvm_op_variant pfvm__nn_avgpool_infer_variants[] = {
    {"PFVM_POOL_PLANES_ONLY", "float pooling here is over 1 or 2 spatial dims, without indices", pfvm__nn_pool_needs_generic},
    {NULL, NULL, NULL}};

PFVM_INTERNAL const pfvm_op_def pfvm__ops_nn[] = {
    {"Conv", "", 1, 0, 2, 3, 1, 1, pfvm__nn_infer_conv, pfvm__nn_k_conv, NULL, PFVM_FUSE_OUT_FUSABLE, PFVM__NN_F, NULL, PFVM_OP_CHANNEL_ROWS | PFVM__OP_STORE_CLAMP | PFVM__OP_STORE_RESIDUAL | PFVM__OP_STORE_SILU | PFVM__OP_ACCEL_STREAMED, pfvm__nn_simp_conv, pfvm__nn_k_conv_grad, NULL, pfvm__nn_conv_flops, pfvm_acl_conv, pfvm__nn_conv_ws, pfvm__nn_prep_conv, pfvm__nn_conv_infer_variants},
    {"ConvTranspose", "", 1, 0, 2, 3, 1, 1, pfvm__nn_infer_convt, pfvm__nn_k_convt, NULL, PFVM_FUSE_OUT_FUSABLE, PFVM__NN_F, NULL, 0, NULL, pfvm__nn_k_convt_grad, NULL, pfvm__nn_convt_flops, NULL, NULL, NULL, NULL},
    {"MaxPool", "", 1, 0, 1, 1, 1, 2, pfvm__nn_infer_pool, pfvm__nn_k_maxpool, NULL, PFVM_FUSE_OPAQUE, PFVM__NN_F ",int8,uint8", NULL, PFVM_OP_PER_CHANNEL | PFVM__OP_ACCEL_STREAMED, NULL, pfvm__nn_k_maxpool_grad, NULL, NULL, pfvm_acl_pool, NULL, NULL, pfvm__nn_maxpool_infer_variants},
    {"AveragePool", "", 1, 0, 1, 1, 1, 1, pfvm__nn_infer_pool, pfvm__nn_k_avgpool, NULL, PFVM_FUSE_OPAQUE, PFVM__NN_F, NULL, PFVM_OP_PER_CHANNEL, NULL, pfvm__nn_k_avgpool_grad, NULL, NULL, pfvm_acl_pool, NULL, NULL, pfvm__nn_avgpool_infer_variants},
    {"LpPool", "", 1, 0, 1, 1, 1, 1, pfvm__nn_infer_pool, pfvm__nn_k_lppool, NULL, PFVM_FUSE_OPAQUE, PFVM__NN_F, NULL, PFVM_OP_PER_CHANNEL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
    {"MaxUnpool", "", 9, 0, 2, 3, 1, 1, pfvm__nn_infer_unpool, pfvm__nn_k_unpool, NULL, PFVM_FUSE_OPAQUE, PFVM__NN_F, NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
    {"MaxRoiPool", "", 1, 0, 2, 2, 1, 1, pfvm__nn_infer_roipool, pfvm__nn_k_roipool, NULL, PFVM_FUSE_OPAQUE, PFVM__NN_F, NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
    {"GlobalAveragePool", "", 1, 0, 1, 1, 1, 1, pfvm__nn_infer_global, pfvm__nn_k_gap, NULL, PFVM_FUSE_REDUCTION, PFVM__NN_F, NULL, PFVM__OP_ACCEL_STREAMED, NULL, pfvm__nn_k_gap_grad, NULL, NULL, pfvm_acl_global_pool, NULL, NULL, NULL},
    {"GlobalMaxPool", "", 1, 0, 1, 1, 1, 1, pfvm__nn_infer_global, pfvm__nn_k_gmp, NULL, PFVM_FUSE_REDUCTION, PFVM__NN_F, NULL, PFVM__OP_ACCEL_STREAMED, NULL, pfvm__nn_k_gmp_grad, NULL, NULL, pfvm_acl_global_pool, NULL, NULL, NULL},
    {"GlobalLpPool", "", 1, 0, 1, 1, 1, 1, pfvm__nn_infer_global, pfvm__nn_k_glp, NULL, PFVM_FUSE_REDUCTION, PFVM__NN_F, NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
    {"BatchNormalization", "", 1, 13, 5, 5, 1, 5, pfvm__nn_infer_bn, pfvm__nn_k_bn, NULL, PFVM_FUSE_BROADCAST, PFVM__NN_F, NULL, 0, pfvm__nn_simp_bn, pfvm__nn_k_bn_grad, NULL, NULL, pfvm_acl_batchnorm, NULL, NULL, NULL},
    {"BatchNormalization", "", 14, 0, 5, 5, 1, 3, pfvm__nn_infer_bn, pfvm__nn_k_bn, NULL, PFVM_FUSE_BROADCAST, PFVM__NN_F, NULL, 0, pfvm__nn_simp_bn, pfvm__nn_k_bn_grad, NULL, NULL, pfvm_acl_batchnorm, NULL, NULL, NULL},
    {"LayerNormalization", "", 17, 0, 2, 3, 1, 3, pfvm__nn_infer_ln, pfvm__nn_k_ln, NULL, PFVM_FUSE_REDUCTION, PFVM__NN_F, NULL, PFVM__OP_ACCEL_STREAMED, NULL, pfvm__nn_k_ln_grad, NULL, NULL, pfvm_acl_layernorm, NULL, pfvm__nn_prep_ln, NULL},
    {"InstanceNormalization", "", 1, 0, 3, 3, 1, 1, pfvm__nn_infer_instnorm, pfvm__nn_k_instnorm, NULL, PFVM_FUSE_REDUCTION, PFVM__NN_F, NULL, 0, NULL, pfvm__nn_k_instnorm_grad, NULL, NULL, NULL, NULL, NULL, NULL},
    {"LRN", "", 1, 0, 1, 1, 1, 1, pfvm__nn_infer_lrn, pfvm__nn_k_lrn, NULL, PFVM_FUSE_OPAQUE, PFVM__NN_F, NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
    {"LpNormalization", "", 1, 0, 1, 1, 1, 1, pfvm__nn_infer_lpnorm, pfvm__nn_k_lpnorm, NULL, PFVM_FUSE_REDUCTION, PFVM__NN_F, NULL, 0, NULL, pfvm__nn_k_lpnorm_grad, NULL, NULL, NULL, NULL, NULL, NULL},
    {"Softmax", "", 1, 0, 1, 1, 1, 1, pfvm__nn_infer_softmax, pfvm__nn_k_softmax, NULL, PFVM_FUSE_REDUCTION, PFVM__NN_F, NULL, PFVM_OP_IN_PLACE, NULL, pfvm__nn_k_softmax_grad, NULL, NULL, pfvm__nn_accel_softmax, NULL, NULL, NULL},
    {"LogSoftmax", "", 1, 0, 1, 1, 1, 1, pfvm__nn_infer_softmax, pfvm__nn_k_logsoftmax, NULL, PFVM_FUSE_REDUCTION, PFVM__NN_F, NULL, PFVM_OP_IN_PLACE, NULL, pfvm__nn_k_logsoftmax_grad, NULL, NULL, pfvm_acl_logsoftmax, NULL, NULL, NULL},
    {"Hardmax", "", 1, 0, 1, 1, 1, 1, pfvm__nn_infer_softmax, pfvm__nn_k_hardmax, NULL, PFVM_FUSE_REDUCTION, PFVM__NN_F, NULL, PFVM_OP_IN_PLACE, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
    {NULL, NULL, 0, 0, 0, 0, 0, 0, NULL, NULL, NULL, PFVM_FUSE_OPAQUE, NULL, NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL}
};
