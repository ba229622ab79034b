/* accel lowerings (pfvm_accel_fn) of the convolution, pooling,
 * normalization and data-movement operators: each op's table entry in
 * its family's file names its function here, so that the families' own
 * code stays untouched by the accel back end.
 *
 * Every hook sees its tensors as pfvm_accel_arg: a byte offset that is the
 * same on every PE, the element count a PE holds (elems), the global dims
 * and whether the tensor is whole on every PE (replicated). Unreplicated
 * tensors have their first axis split over the PEs and every other axis
 * whole in the PE (the emitter's rows plan, src/accel/emit.h), so a PE
 * holds `elems / (d1 * d2 * ...)` leading slices, contiguous, row-major. The
 * instructions are those of README.md, "accel", "Programs". */
#include "ops_common.h"

#include <stdio.h>

/* Elements of one slice along the first axis (the product of dims 1..). */
static int64_t pfvm__acl_slice(const pfvm_accel_arg *a)
{
    int64_t n = 1;
    int i;
    for (i = 1; i < a->rank; i++)
        n *= a->dims[i];
    return n;
}

/* Slices of the first axis this PE holds. */
static int64_t pfvm__acl_lead(const pfvm_accel_arg *a)
{
    int64_t s = pfvm__acl_slice(a);
    return s > 0 ? a->elems / s : 0;
}

static pfvm_code pfvm__acl_unsupported(pfvm_accel_ctx *c, const char *what)
{
    return pfvm__fail(c->st, PFVM_ERR_UNSUPPORTED, "node %s (%s): accel lowers %s", c->node->name,
                      c->node->op_type, what);
}

static pfvm_code pfvm__acl_nomem(pfvm_accel_ctx *c)
{
    return pfvm__fail(c->st, PFVM_ERR_NOMEM, "node %s (%s): no PE memory left for the temporaries of even one tile",
                      c->node->name, c->node->op_type);
}

/* ---- windows: the geometry Conv and the pools share ---- */

typedef struct pfvm__acl_win {
    int64_t k[2], s[2], d[2], pad0[2], pad1[2]; /* kernel, stride, dilation, leading and trailing pads */
    int64_t in[2], out[2];                     /* spatial sizes */
} pfvm__acl_win;

/* Reads kernel_shape (or the weight's dims), strides, dilations, pads and
 * auto_pad for a 2-D window over x (NCHW) producing y. */
static pfvm_code pfvm__acl_window(pfvm_accel_ctx *c, const pfvm_accel_arg *x, const pfvm_accel_arg *y,
                                  const int64_t *kernel, pfvm__acl_win *w)
{
    const pfvm_node *n = c->node;
    const int64_t *ks, *ss, *ds, *ps;
    const char *ap = pfvm_node_attr_string(n, "auto_pad", "NOTSET");
    int nk = pfvm_node_attr_ints(n, "kernel_shape", &ks), ns = pfvm_node_attr_ints(n, "strides", &ss);
    int nd = pfvm_node_attr_ints(n, "dilations", &ds), np = pfvm_node_attr_ints(n, "pads", &ps), i;
    if (x->rank != 4 || y->rank != 4 || (nk >= 0 && nk != 2) || (ns >= 0 && ns != 2) || (nd >= 0 && nd != 2) ||
        (np >= 0 && np != 4))
        return pfvm__acl_unsupported(c, "2-D windows (NCHW) only");
    for (i = 0; i < 2; i++) {
        w->k[i] = nk == 2 ? ks[i] : kernel ? kernel[i] : 0;
        w->s[i] = ns == 2 ? ss[i] : 1;
        w->d[i] = nd == 2 ? ds[i] : 1;
        w->in[i] = x->dims[2 + i];
        w->out[i] = y->dims[2 + i];
        w->pad0[i] = np == 4 ? ps[i] : 0;
        w->pad1[i] = np == 4 ? ps[i + 2] : 0;
        if (w->k[i] < 1 || w->s[i] < 1 || w->d[i] < 1)
            return pfvm__acl_unsupported(c, "windows with a known kernel_shape, strides and dilations >= 1");
        if (strcmp(ap, "NOTSET") && strcmp(ap, "VALID")) {
            int64_t total = (w->out[i] - 1) * w->s[i] + (w->k[i] - 1) * w->d[i] + 1 - w->in[i];
            if (total < 0)
                total = 0;
            w->pad0[i] = !strcmp(ap, "SAME_LOWER") ? total - total / 2 : total / 2;
            w->pad1[i] = total - w->pad0[i];
        } else if (!strcmp(ap, "VALID")) {
            w->pad0[i] = w->pad1[i] = 0;
        }
    }
    return PFVM_OK;
}

/* The outputs o in [o0, o1) whose tap t (0 <= t < k) reads an input inside
 * [lo, hi): *first..*last (empty when *first > *last). */
static void pfvm__acl_taps(const pfvm__acl_win *w, int ax, int64_t t, int64_t lo, int64_t hi, int64_t o0, int64_t o1,
                           int64_t *first, int64_t *last)
{
    int64_t base = t * w->d[ax] - w->pad0[ax], s = w->s[ax], f, l;
    /* o*s + base >= lo  <=>  o >= ceil((lo - base) / s) */
    f = lo - base <= 0 ? 0 : (lo - base + s - 1) / s;
    /* o*s + base <= hi - 1  <=>  o <= floor((hi - 1 - base) / s) */
    l = hi - 1 - base < 0 ? -1 : (hi - 1 - base) / s;
    *first = f > o0 ? f : o0;
    *last = l < o1 - 1 ? l : o1 - 1;
}

/* Gathers tap (kh, kw) of output rows [o0, o0 + rows) of one channel plane
 * at src (H x W) into dst (rows x OW), `fill` where the tap reads padding. */
static pfvm_code pfvm__acl_gather(pfvm_accel_ctx *c, const pfvm__acl_win *w, int64_t kh, int64_t kw, int64_t o0,
                                  int64_t rows, int64_t src, int64_t dst, const char *fill)
{
    int64_t h0, h1, w0, w1, ow = w->out[1];
    pfvm_code rc;
    pfvm__acl_taps(w, 0, kh, 0, w->in[0], o0, o0 + rows, &h0, &h1);
    pfvm__acl_taps(w, 1, kw, 0, w->in[1], 0, ow, &w0, &w1);
    if ((h0 > o0 || h1 < o0 + rows - 1 || w0 > 0 || w1 < ow - 1) &&
        (rc = c->emit(c, "fill %lld %s %lld", (long long)dst, fill, (long long)(rows * ow))) != PFVM_OK)
        return rc;
    if (h0 > h1 || w0 > w1)
        return PFVM_OK;
    {
        int64_t ih = h0 * w->s[0] - w->pad0[0] + kh * w->d[0], iw = w0 * w->s[1] - w->pad0[1] + kw * w->d[1];
        return c->emit(c, "mov %lld %lld %lld %lld %lld 1 %lld %lld", (long long)(dst + ((h0 - o0) * ow + w0) * 4),
                       (long long)(src + (ih * w->in[1] + iw) * 4), (long long)(h1 - h0 + 1),
                       (long long)(w1 - w0 + 1), (long long)ow, (long long)(w->s[0] * w->in[1]),
                       (long long)w->s[1]);
    }
}

/* ---- Conv: im2col into PE memory, then one gemm per group and tile ---- */

PFVM_INTERNAL pfvm_code pfvm_acl_conv(pfvm_accel_ctx *c)
{
    const pfvm_accel_arg *x = &c->in[0], *wt = &c->in[1], *y = &c->out[0];
    const pfvm_accel_arg *b = c->n_in > 2 && c->in[2].rank >= 0 ? &c->in[2] : NULL;
    int64_t group = pfvm_node_attr_int(c->node, "group", 1), C, OC, Cg, OCg, K, P, th, col = -1, tmp = -1;
    int64_t n, g, o0, ci, kh, kw, lead;
    pfvm__acl_win w;
    pfvm_code rc;
    if (x->rank != 4 || wt->rank != 4 || !wt->replicated || (b && !b->replicated))
        return pfvm__acl_unsupported(c, "2-D Conv with its weights and bias on every PE only");
    if ((rc = pfvm__acl_window(c, x, y, wt->dims + 2, &w)) != PFVM_OK)
        return rc;
    C = x->dims[1];
    OC = y->dims[1];
    if (group < 1 || C % group || OC % group || wt->dims[1] != C / group || wt->dims[0] != OC)
        return pfvm__acl_unsupported(c, "Conv whose weight matches its input's channels and group");
    Cg = C / group;
    OCg = OC / group;
    K = Cg * w.k[0] * w.k[1];
    P = w.out[0] * w.out[1];
    lead = pfvm__acl_lead(x);
    /* the largest band of output rows whose im2col (and, when tiled, the
     * gemm's output) fits next to what the PE already holds */
    for (th = w.out[0]; th >= 1 && col < 0; th = th == 1 ? 0 : (th + 1) / 2) {
        int64_t col_bytes = K * th * w.out[1] * 4, out_bytes = th == w.out[0] ? 0 : OCg * th * w.out[1] * 4;
        if ((col = c->scratch(c, col_bytes + out_bytes)) >= 0) {
            tmp = col + col_bytes;
            break;
        }
    }
    if (col < 0)
        return pfvm__acl_nomem(c);
    for (n = 0; n < lead; n++)
        for (g = 0; g < group; g++)
            for (o0 = 0; o0 < w.out[0]; o0 += th) {
                int64_t rows = w.out[0] - o0 < th ? w.out[0] - o0 : th;
                int64_t yoff = y->off + ((n * OC + g * OCg) * P + o0 * w.out[1]) * 4;
                for (ci = 0; ci < Cg; ci++)
                    for (kh = 0; kh < w.k[0]; kh++)
                        for (kw = 0; kw < w.k[1]; kw++) {
                            int64_t row = (ci * w.k[0] + kh) * w.k[1] + kw;
                            int64_t src = x->off + (n * C + g * Cg + ci) * w.in[0] * w.in[1] * 4;
                            if ((rc = pfvm__acl_gather(c, &w, kh, kw, o0, rows, src, col + row * rows * w.out[1] * 4,
                                                       "0")) != PFVM_OK)
                                return rc;
                        }
                if ((rc = c->emit(c, "gemm %lld %lld %lld %lld %lld %lld 0",
                                  (long long)(rows == w.out[0] ? yoff : tmp),
                                  (long long)(wt->off + g * OCg * K * 4), (long long)col, (long long)OCg,
                                  (long long)(rows * w.out[1]), (long long)K)) != PFVM_OK)
                    return rc;
                if (rows != w.out[0] &&
                    (rc = c->emit(c, "mov %lld %lld %lld %lld %lld 1 %lld 1", (long long)yoff, (long long)tmp,
                                  (long long)OCg, (long long)(rows * w.out[1]), (long long)P,
                                  (long long)(rows * w.out[1]))) != PFVM_OK)
                    return rc;
            }
    if (b)
        for (n = 0; n < lead; n++)
            if ((rc = c->emit(c, "row add %lld %lld %lld %lld %lld", (long long)(y->off + n * OC * P * 4),
                              (long long)(y->off + n * OC * P * 4), (long long)b->off, (long long)OC,
                              (long long)P)) != PFVM_OK)
                return rc;
    return PFVM_OK;
}

/* ---- MaxPool / AveragePool: one gathered plane per tap, combined ---- */

PFVM_INTERNAL pfvm_code pfvm_acl_pool(pfvm_accel_ctx *c)
{
    const pfvm_accel_arg *x = &c->in[0], *y = &c->out[0];
    int is_max = !strcmp(c->node->op_type, "MaxPool");
    int include_pad = (int)pfvm_node_attr_int(c->node, "count_include_pad", 0);
    int64_t C, P, lead, n, ci, kh, kw, t, cnt = -1, ones = -1, tmp, one;
    const char *fill = is_max ? "-inf" : "0", *op = is_max ? "max" : "add";
    pfvm__acl_win w;
    pfvm_code rc;
    int uniform = 1;
    if (c->n_out > 1 && c->out[1].rank >= 0)
        return pfvm__acl_unsupported(c, "MaxPool without its Indices output");
    if ((rc = pfvm__acl_window(c, x, y, NULL, &w)) != PFVM_OK)
        return rc;
    if (!is_max && (w.d[0] != 1 || w.d[1] != 1))
        return pfvm__acl_unsupported(c, "AveragePool without dilations");
    C = x->dims[1];
    P = w.out[0] * w.out[1];
    lead = pfvm__acl_lead(x);
    if ((tmp = c->scratch(c, P * 4)) < 0)
        return pfvm__acl_nomem(c);
    if (!is_max) {
        /* the divisor of every output: taps inside the input (or inside the
         * padded input with count_include_pad), counted on a plane of ones */
        int64_t lo0 = include_pad ? -w.pad0[0] : 0, lo1 = include_pad ? -w.pad0[1] : 0;
        int64_t hi0 = w.in[0] + (include_pad ? w.pad1[0] : 0), hi1 = w.in[1] + (include_pad ? w.pad1[1] : 0);
        for (kh = 0; kh < w.k[0]; kh++)
            for (kw = 0; kw < w.k[1]; kw++) {
                int64_t a0, a1, b0, b1;
                pfvm__acl_taps(&w, 0, kh, lo0, hi0, 0, w.out[0], &a0, &a1);
                pfvm__acl_taps(&w, 1, kw, lo1, hi1, 0, w.out[1], &b0, &b1);
                uniform &= a0 == 0 && a1 == w.out[0] - 1 && b0 == 0 && b1 == w.out[1] - 1;
            }
        if (!uniform) {
            pfvm__acl_win padded = w;
            if ((cnt = c->scratch(c, P * 4)) < 0 || (ones = c->scratch(c, (hi0 - lo0) * (hi1 - lo1) * 4)) < 0)
                return pfvm__acl_nomem(c);
            /* ones over the counted region, read with the counted region's origin */
            padded.in[0] = hi0 - lo0;
            padded.in[1] = hi1 - lo1;
            padded.pad0[0] += lo0;
            padded.pad0[1] += lo1;
            if ((rc = c->emit(c, "fill %lld 1 %lld", (long long)ones, (long long)((hi0 - lo0) * (hi1 - lo1)))) !=
                PFVM_OK)
                return rc;
            for (kh = 0; kh < w.k[0]; kh++)
                for (kw = 0; kw < w.k[1]; kw++) {
                    int64_t dst = kh || kw ? tmp : cnt;
                    if ((rc = pfvm__acl_gather(c, &padded, kh, kw, 0, w.out[0], ones, dst, "0")) != PFVM_OK ||
                        ((kh || kw) && (rc = c->emit(c, "bin add %lld %lld %lld %lld", (long long)cnt, (long long)cnt,
                                                     (long long)tmp, (long long)P)) != PFVM_OK))
                        return rc;
                }
        }
    }
    one = C * P * 4;
    for (n = 0; n < lead; n++)
        for (t = 0; t < w.k[0] * w.k[1]; t++) {
            kh = t / w.k[1];
            kw = t % w.k[1];
            for (ci = 0; ci < C; ci++) {
                int64_t src = x->off + (n * C + ci) * w.in[0] * w.in[1] * 4;
                int64_t dst = t == 0 ? y->off + n * one + ci * P * 4 : tmp;
                if ((rc = pfvm__acl_gather(c, &w, kh, kw, 0, w.out[0], src, dst, fill)) != PFVM_OK)
                    return rc;
                if (t > 0 && (rc = c->emit(c, "bin %s %lld %lld %lld %lld", op, (long long)(y->off + n * one + ci * P * 4),
                                           (long long)(y->off + n * one + ci * P * 4), (long long)tmp,
                                           (long long)P)) != PFVM_OK)
                    return rc;
            }
        }
    if (is_max)
        return PFVM_OK;
    if (uniform)
        return c->emit(c, "imm mul %lld %lld %.9g %lld", (long long)y->off, (long long)y->off,
                       1.0 / (double)(w.k[0] * w.k[1]), (long long)y->elems);
    return c->emit(c, "col div %lld %lld %lld %lld %lld", (long long)y->off, (long long)y->off, (long long)cnt,
                   (long long)(y->elems / P), (long long)P);
}

/* ---- GlobalAveragePool / GlobalMaxPool: a row reduction per channel ---- */

PFVM_INTERNAL pfvm_code pfvm_acl_global_pool(pfvm_accel_ctx *c)
{
    const pfvm_accel_arg *x = &c->in[0], *y = &c->out[0];
    int is_max = !strcmp(c->node->op_type, "GlobalMaxPool");
    int64_t spatial = 1, rows;
    int i;
    pfvm_code rc;
    if (x->rank < 3)
        return pfvm__acl_unsupported(c, "inputs of rank 3 or more");
    for (i = 2; i < x->rank; i++)
        spatial *= x->dims[i];
    rows = x->elems / spatial;
    if ((rc = c->emit(c, "red %s %lld %lld %lld %lld", is_max ? "max" : "sum", (long long)y->off, (long long)x->off,
                      (long long)rows, (long long)spatial)) != PFVM_OK || is_max)
        return rc;
    return c->emit(c, "imm mul %lld %lld %.9g %lld", (long long)y->off, (long long)y->off, 1.0 / (double)spatial,
                   (long long)rows);
}

/* ---- BatchNormalization (inference): per-channel scale and shift ---- */

PFVM_INTERNAL pfvm_code pfvm_acl_batchnorm(pfvm_accel_ctx *c)
{
    const pfvm_accel_arg *x = &c->in[0], *y = &c->out[0];
    const pfvm_accel_arg *scale = &c->in[1], *bias = &c->in[2], *mean = &c->in[3], *var = &c->in[4];
    float eps = pfvm_node_attr_float(c->node, "epsilon", 1e-5f);
    int64_t C, P, lead, n, inv;
    int i;
    pfvm_code rc;
    if (x->rank < 2 || c->n_in < 5 || (c->n_out > 1 && c->out[1].rank >= 0) ||
        pfvm_node_attr_int(c->node, "training_mode", 0))
        return pfvm__acl_unsupported(c, "inference BatchNormalization (Y only)");
    for (i = 1; i < 5; i++)
        if (c->in[i].rank < 0 || !c->in[i].replicated || c->in[i].elems != x->dims[1])
            return pfvm__acl_unsupported(c, "BatchNormalization with its per-channel parameters on every PE");
    C = x->dims[1];
    P = pfvm__acl_slice(x) / C;
    lead = pfvm__acl_lead(x);
    if ((inv = c->scratch(c, C * 4)) < 0)
        return pfvm__acl_nomem(c);
    if ((rc = c->emit(c, "imm add %lld %lld %.9g %lld", (long long)inv, (long long)var->off, (double)eps,
                      (long long)C)) != PFVM_OK ||
        (rc = c->emit(c, "un sqrt %lld %lld %lld", (long long)inv, (long long)inv, (long long)C)) != PFVM_OK ||
        (rc = c->emit(c, "bin div %lld %lld %lld %lld", (long long)inv, (long long)scale->off, (long long)inv,
                      (long long)C)) != PFVM_OK)
        return rc;
    for (n = 0; n < lead; n++) {
        long long Y = y->off + n * C * P * 4, X = x->off + n * C * P * 4;
        if ((rc = c->emit(c, "row sub %lld %lld %lld %lld %lld", Y, X, (long long)mean->off, (long long)C,
                          (long long)P)) != PFVM_OK ||
            (rc = c->emit(c, "row mul %lld %lld %lld %lld %lld", Y, Y, (long long)inv, (long long)C, (long long)P)) !=
                PFVM_OK ||
            (rc = c->emit(c, "row add %lld %lld %lld %lld %lld", Y, Y, (long long)bias->off, (long long)C,
                          (long long)P)) != PFVM_OK)
            return rc;
    }
    return PFVM_OK;
}

/* ---- Clip: bounds that are constants (attributes or initializers) ---- */

/* The float value of optional input i when it is a constant; *present 0
 * when the input is absent. */
static int pfvm__acl_const(const pfvm_node *n, int i, float *v, int *present)
{
    const pfvm_value *in = i < n->n_inputs ? n->inputs[i] : NULL;
    *present = in != NULL;
    if (!in)
        return 1;
    if (!in->init || in->init->dtype != PFVM_FLOAT || pfvm_tensor_numel(in->init) != 1)
        return 0;
    *v = ((const float *)in->init->data)[0];
    return 1;
}

PFVM_INTERNAL pfvm_code pfvm_acl_clip(pfvm_accel_ctx *c)
{
    const pfvm_accel_arg *x = &c->in[0], *y = &c->out[0];
    float lo = pfvm_node_attr_float(c->node, "min", 0), hi = pfvm_node_attr_float(c->node, "max", 0);
    int has_lo = pfvm_node_attr(c->node, "min") != NULL, has_hi = pfvm_node_attr(c->node, "max") != NULL;
    int64_t src = x->off;
    pfvm_code rc;
    if (c->node->opset >= 11 &&
        (!pfvm__acl_const(c->node, 1, &lo, &has_lo) || !pfvm__acl_const(c->node, 2, &hi, &has_hi)))
        return pfvm__acl_unsupported(c, "Clip with constant scalar bounds only");
    if (has_lo) {
        if ((rc = c->emit(c, "imm max %lld %lld %.9g %lld", (long long)y->off, (long long)src, (double)lo,
                          (long long)y->elems)) != PFVM_OK)
            return rc;
        src = y->off;
    }
    if (has_hi)
        return c->emit(c, "imm min %lld %lld %.9g %lld", (long long)y->off, (long long)src, (double)hi,
                       (long long)y->elems);
    return has_lo ? PFVM_OK
                  : c->emit(c, "un copy %lld %lld %lld", (long long)y->off, (long long)src, (long long)y->elems);
}

/* ---- Reshape, Flatten, Squeeze, Unsqueeze, Identity, Dropout: views ---- */

/* The bytes stay in the same order; each PE's part is the same when both
 * tensors keep the first axis (so the same rows split) or are whole on
 * every PE. A change of the first axis would need moves between PEs. */
PFVM_INTERNAL pfvm_code pfvm_acl_view(pfvm_accel_ctx *c)
{
    const pfvm_accel_arg *x = &c->in[0], *y = &c->out[0];
    if (c->n_out > 1 && c->out[1].rank >= 0)
        return pfvm__acl_unsupported(c, "its first output only");
    if (x->elems != y->elems || x->replicated != y->replicated ||
        (!x->replicated && (x->rank < 1 || y->rank < 1 || x->dims[0] != y->dims[0])))
        return pfvm__acl_unsupported(c, "reshapes that keep the first axis (split over the PEs) only");
    return c->emit(c, "un copy %lld %lld %lld", (long long)y->off, (long long)x->off, (long long)y->elems);
}

/* ---- Transpose: moves inside the PE, the first axis kept ---- */

PFVM_INTERNAL pfvm_code pfvm_acl_transpose(pfvm_accel_ctx *c)
{
    const pfvm_accel_arg *x = &c->in[0], *y = &c->out[0];
    const int64_t *perm;
    int np = pfvm_node_attr_ints(c->node, "perm", &perm), r = x->rank, i;
    int64_t p[PFVM_MAX_RANK], xs[PFVM_MAX_RANK], lead_dims[PFVM_MAX_RANK], idx[PFVM_MAX_RANK], outer = 1, o;
    pfvm_code rc;
    for (i = 0; i < r; i++)
        p[i] = np == r ? perm[i] : r - 1 - i;
    if (r < 1 || (!x->replicated && p[0] != 0))
        return pfvm__acl_unsupported(c, "Transpose that keeps the first axis (split over the PEs) first");
    if (r == 1 || (r == 2 && !x->replicated)) /* p[0] == 0: the identity */
        return c->emit(c, "un copy %lld %lld %lld", (long long)y->off, (long long)x->off, (long long)y->elems);
    xs[r - 1] = 1;
    for (i = r - 2; i >= 0; i--)
        xs[i] = xs[i + 1] * x->dims[i + 1];
    /* the local first axis is this PE's slices; the last two output axes
     * are one 2-D mov, the others a loop of movs */
    for (i = 0; i < r - 2; i++) {
        lead_dims[i] = i == 0 ? (x->replicated ? y->dims[0] : pfvm__acl_lead(x)) : y->dims[i];
        outer *= lead_dims[i];
    }
    for (o = 0; o < outer; o++) {
        int64_t rem = o, src = 0, dst = 0, ys = y->dims[r - 1] * y->dims[r - 2];
        for (i = r - 3; i >= 0; i--) {
            idx[i] = rem % lead_dims[i];
            rem /= lead_dims[i];
        }
        for (i = 0; i < r - 2; i++) {
            src += idx[i] * xs[p[i]];
            dst = dst * y->dims[i] + idx[i];
        }
        dst *= ys;
        if ((rc = c->emit(c, "mov %lld %lld %lld %lld %lld 1 %lld %lld", (long long)(y->off + dst * 4),
                          (long long)(x->off + src * 4), (long long)y->dims[r - 2], (long long)y->dims[r - 1],
                          (long long)y->dims[r - 1], (long long)xs[p[r - 2]], (long long)xs[p[r - 1]])) != PFVM_OK)
            return rc;
    }
    return PFVM_OK;
}

/* ---- Concat: each input a block of rows in the output, inside the PE ---- */

PFVM_INTERNAL pfvm_code pfvm_acl_concat(pfvm_accel_ctx *c)
{
    const pfvm_accel_arg *y = &c->out[0];
    int64_t axis = pfvm_node_attr_int(c->node, "axis", 0), inner_y = 1, rows, at = 0;
    int i;
    pfvm_code rc;
    if (axis < 0)
        axis += y->rank;
    if (axis < 0 || axis >= y->rank || (axis == 0 && !y->replicated))
        return pfvm__acl_unsupported(c, "Concat along an axis other than the first (split over the PEs)");
    for (i = (int)axis; i < y->rank; i++)
        inner_y *= y->dims[i];
    rows = y->elems / inner_y;
    for (i = 0; i < c->n_in; i++) {
        const pfvm_accel_arg *x = &c->in[i];
        int64_t inner = x->elems / rows;
        if (x->rank < 0 || x->elems == 0)
            continue;
        if (x->replicated != y->replicated)
            return pfvm__acl_unsupported(c, "Concat of inputs that are all split or all on every PE");
        if ((rc = c->emit(c, "mov %lld %lld %lld %lld %lld 1 %lld 1", (long long)(y->off + at * 4), (long long)x->off,
                          (long long)rows, (long long)inner, (long long)inner_y, (long long)inner)) != PFVM_OK)
            return rc;
        at += inner;
    }
    return PFVM_OK;
}

/* ---- LogSoftmax over the last axis, rows whole on their PE ---- */

PFVM_INTERNAL pfvm_code pfvm_acl_logsoftmax(pfvm_accel_ctx *c)
{
    const pfvm_accel_arg *x = &c->in[0], *y = &c->out[0];
    int64_t axis = pfvm_node_attr_int(c->node, "axis", c->node->opset >= 13 ? -1 : 1), rows, cols, red, tmp;
    long long Y, X, R, C, D, T;
    pfvm_code rc;
    if (x->rank < 1 || (axis < 0 ? axis + x->rank : axis) != x->rank - 1)
        return pfvm__acl_unsupported(c, "LogSoftmax over the last axis only");
    cols = x->dims[x->rank - 1];
    rows = x->elems / cols;
    if ((red = c->scratch(c, rows * 4)) < 0 || (tmp = c->scratch(c, x->elems * 4)) < 0)
        return pfvm__acl_nomem(c);
    Y = y->off, X = x->off, R = rows, C = cols, D = red, T = tmp;
    if ((rc = c->emit(c, "red max %lld %lld %lld %lld", D, X, R, C)) != PFVM_OK ||
        (rc = c->emit(c, "row sub %lld %lld %lld %lld %lld", Y, X, D, R, C)) != PFVM_OK ||
        (rc = c->emit(c, "un exp %lld %lld %lld", T, Y, R * C)) != PFVM_OK ||
        (rc = c->emit(c, "red sum %lld %lld %lld %lld", D, T, R, C)) != PFVM_OK ||
        (rc = c->emit(c, "un log %lld %lld %lld", D, D, R)) != PFVM_OK)
        return rc;
    return c->emit(c, "row sub %lld %lld %lld %lld %lld", Y, Y, D, R, C);
}

/* ---- MatMul: rows of A times a 2-D B on every PE, or batches whole ---- */

PFVM_INTERNAL pfvm_code pfvm_acl_matmul(pfvm_accel_ctx *c)
{
    const pfvm_accel_arg *a = &c->in[0], *b = &c->in[1], *y = &c->out[0];
    int64_t k, m, n, batch, i;
    pfvm_code rc;
    if (a->rank < 1 || b->rank < 2 || !b->replicated || (b->rank > 2 && !a->replicated))
        return pfvm__acl_unsupported(c, "MatMul of A (split or whole) by a B whole on its PEs (batched: both whole)");
    k = a->dims[a->rank - 1];
    n = b->dims[b->rank - 1];
    if (b->dims[b->rank - 2] != k || k < 1)
        return pfvm__acl_unsupported(c, "MatMul whose inner dims agree");
    if (b->rank == 2)
        return c->emit(c, "gemm %lld %lld %lld %lld %lld %lld 0", (long long)y->off, (long long)a->off,
                       (long long)b->off, (long long)(a->elems / k), (long long)n, (long long)k);
    /* batched: Y's leading dims are the broadcast of A's and B's; each
     * operand either has them all or none (a shared 2-D matrix) */
    m = a->rank >= 2 ? a->dims[a->rank - 2] : 1;
    batch = y->elems / (m * n);
    for (i = 0; i < batch; i++) {
        int64_t ai = a->elems == batch * m * k ? i : 0, bi = b->elems == batch * k * n ? i : 0;
        if ((a->elems != m * k && ai != i) || (b->elems != k * n && bi != i))
            return pfvm__acl_unsupported(c, "batched MatMul whose operands have all of the batch dims or none");
        if ((rc = c->emit(c, "gemm %lld %lld %lld %lld %lld %lld 0", (long long)(y->off + i * m * n * 4),
                          (long long)(a->off + ai * m * k * 4), (long long)(b->off + bi * k * n * 4), (long long)m,
                          (long long)n, (long long)k)) != PFVM_OK)
            return rc;
    }
    return PFVM_OK;
}

/* y[o] = x[base + sum o_a * xs[a]] over the local output dims yd (row
 * major): one 2-D mov per combination of all but the last two axes. */
static pfvm_code pfvm__acl_strided(pfvm_accel_ctx *c, int64_t y_off, int64_t x_off, int rank, const int64_t *yd,
                                   const int64_t *xs, int64_t base)
{
    int64_t outer = 1, o, rows = rank >= 2 ? yd[rank - 2] : 1, cols = rank >= 1 ? yd[rank - 1] : 1;
    int64_t rs = rank >= 2 ? xs[rank - 2] : 0, cs = rank >= 1 ? xs[rank - 1] : 1;
    int i;
    pfvm_code rc;
    for (i = 0; i < rank - 2; i++)
        outer *= yd[i];
    for (o = 0; o < outer; o++) {
        int64_t rem = o, src = base;
        for (i = rank - 3; i >= 0; i--) {
            src += (rem % yd[i]) * xs[i];
            rem /= yd[i];
        }
        if ((rc = c->emit(c, "mov %lld %lld %lld %lld %lld 1 %lld %lld", (long long)(y_off + o * rows * cols * 4),
                          (long long)(x_off + src * 4), (long long)rows, (long long)cols, (long long)cols,
                          (long long)rs, (long long)cs)) != PFVM_OK)
            return rc;
    }
    return PFVM_OK;
}

/* The int64 constant input i of n (Slice's starts, ends, axes, steps), or
 * its attribute `name` before opset 10: count, or -1 when not constant. */
static int pfvm__acl_ints(const pfvm_node *n, int i, const char *name, const int64_t **out)
{
    const pfvm_value *v = i < n->n_inputs ? n->inputs[i] : NULL;
    if (n->opset < 10) {
        int k = pfvm_node_attr_ints(n, name, out);
        return k < 0 ? 0 : k; /* absent: axes all, steps 1 */
    }
    if (!v) {
        *out = NULL;
        return 0;
    }
    if (!v->init || v->init->dtype != PFVM_INT64 || v->init->rank != 1)
        return -1;
    *out = (const int64_t *)v->init->data;
    return (int)v->init->dims[0];
}

/* ---- Slice with constant starts, ends, axes and steps ---- */

PFVM_INTERNAL pfvm_code pfvm_acl_slice(pfvm_accel_ctx *c)
{
    const pfvm_accel_arg *x = &c->in[0], *y = &c->out[0];
    const int64_t *starts, *ends, *axes, *steps;
    int ns = pfvm__acl_ints(c->node, 1, "starts", &starts), ne = pfvm__acl_ints(c->node, 2, "ends", &ends);
    int na = pfvm__acl_ints(c->node, 3, "axes", &axes), nst = pfvm__acl_ints(c->node, 4, "steps", &steps);
    int64_t st[PFVM_MAX_RANK], stp[PFVM_MAX_RANK], xs[PFVM_MAX_RANK], yd[PFVM_MAX_RANK], base = 0;
    int r = x->rank, i;
    (void)ends;
    if (ns < 0 || ne != ns || (na >= 0 && na != ns && na != 0) || (nst > 0 && nst != ns) || nst < 0 || na < 0 ||
        r < 1)
        return pfvm__acl_unsupported(c, "Slice with constant starts, ends, axes and steps");
    for (i = 0; i < r; i++) {
        st[i] = 0;
        stp[i] = 1;
    }
    for (i = 0; i < ns; i++) {
        int64_t a = na > 0 ? axes[i] : i, d, s0, step = nst > 0 ? steps[i] : 1;
        if (a < 0)
            a += r;
        if (a < 0 || a >= r || step == 0)
            return pfvm__acl_unsupported(c, "Slice with valid axes and non-zero steps");
        d = x->dims[a];
        s0 = starts[i] < 0 ? starts[i] + d : starts[i];
        if (step > 0)
            s0 = s0 < 0 ? 0 : s0 > d ? d : s0;
        else
            s0 = s0 < 0 ? 0 : s0 > d - 1 ? d - 1 : s0;
        if (a == 0 && !x->replicated && (s0 != 0 || step != 1 || y->dims[0] != x->dims[0]))
            return pfvm__acl_unsupported(c, "Slice of the first axis (split over the PEs) only when whole");
        st[a] = s0;
        stp[a] = step;
    }
    xs[r - 1] = 1;
    for (i = r - 2; i >= 0; i--)
        xs[i] = xs[i + 1] * x->dims[i + 1];
    for (i = 0; i < r; i++) {
        yd[i] = y->dims[i];
        base += st[i] * xs[i];
        xs[i] *= stp[i];
    }
    if (!x->replicated)
        yd[0] = pfvm__acl_lead(y);
    if (y->elems == 0)
        return PFVM_OK;
    for (i = 0; i < r; i++)
        if (stp[i] < 0)
            return pfvm__acl_unsupported(c, "Slice with positive steps");
    return pfvm__acl_strided(c, y->off, x->off, r, yd, xs, base);
}

/* ---- ReduceSum / ReduceMean / ReduceMax / ReduceMin over trailing axes ---- */

PFVM_INTERNAL pfvm_code pfvm_acl_reduce(pfvm_accel_ctx *c)
{
    const pfvm_accel_arg *x = &c->in[0], *y = &c->out[0];
    const char *op = c->node->op_type;
    int is_sum = !strcmp(op, "ReduceSum"), is_mean = !strcmp(op, "ReduceMean"), is_max = !strcmp(op, "ReduceMax");
    int is_min = !strcmp(op, "ReduceMin"), na, i;
    int64_t axes_in_node = c->node->opset >= (is_sum ? 13 : 18), first = x->rank, cols = 1, rows, tmp;
    const int64_t *axes;
    unsigned mask = 0;
    pfvm_code rc;
    if (!is_sum && !is_mean && !is_max && !is_min)
        return pfvm__acl_unsupported(c, "ReduceSum, ReduceMean, ReduceMax and ReduceMin only");
    if (axes_in_node) {
        const pfvm_value *v = c->n_in > 1 ? c->node->inputs[1] : NULL;
        if (v && (!v->init || v->init->dtype != PFVM_INT64))
            return pfvm__acl_unsupported(c, "reductions over constant axes only");
        na = v ? (int)pfvm_tensor_numel(v->init) : 0;
        axes = v ? (const int64_t *)v->init->data : NULL;
    } else {
        na = pfvm_node_attr_ints(c->node, "axes", &axes);
    }
    if (na <= 0) {
        if (axes_in_node && pfvm_node_attr_int(c->node, "noop_with_empty_axes", 0))
            return c->emit(c, "un copy %lld %lld %lld", (long long)y->off, (long long)x->off, (long long)y->elems);
        first = 0;
        mask = (1u << x->rank) - 1;
    }
    for (i = 0; i < na; i++) {
        int64_t a = axes[i] < 0 ? axes[i] + x->rank : axes[i];
        if (a < 0 || a >= x->rank)
            return pfvm__acl_unsupported(c, "reductions over valid axes");
        mask |= 1u << a;
        if (a < first)
            first = a;
    }
    if (x->rank < 1 || mask != ((1u << x->rank) - 1) - ((1u << first) - 1) || (first == 0 && !x->replicated))
        return pfvm__acl_unsupported(c, "reductions over trailing axes (not the first, split over the PEs)");
    for (i = (int)first; i < x->rank; i++)
        cols *= x->dims[i];
    rows = x->elems / cols;
    if (is_min) {
        if ((tmp = c->scratch(c, x->elems * 4)) < 0)
            return pfvm__acl_nomem(c);
        if ((rc = c->emit(c, "un neg %lld %lld %lld", (long long)tmp, (long long)x->off, (long long)x->elems)) !=
                PFVM_OK ||
            (rc = c->emit(c, "red max %lld %lld %lld %lld", (long long)y->off, (long long)tmp, (long long)rows,
                          (long long)cols)) != PFVM_OK)
            return rc;
        return c->emit(c, "un neg %lld %lld %lld", (long long)y->off, (long long)y->off, (long long)rows);
    }
    if ((rc = c->emit(c, "red %s %lld %lld %lld %lld", is_max ? "max" : "sum", (long long)y->off, (long long)x->off,
                      (long long)rows, (long long)cols)) != PFVM_OK || !is_mean)
        return rc;
    return c->emit(c, "imm mul %lld %lld %.9g %lld", (long long)y->off, (long long)y->off, 1.0 / (double)cols,
                   (long long)rows);
}
