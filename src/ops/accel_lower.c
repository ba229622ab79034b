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

#include <math.h>
#include <stdio.h>

/* The streamed lowerings (pfvm_accel_ctx.stream) of the hooks below, for
 * the operators whose rows carry PFVM__OP_ACCEL_STREAMED (the table in
 * pfvm_acl_streamed). */
static pfvm_code pfvm__acl_conv_stream(pfvm_accel_ctx *c);
static pfvm_code pfvm__acl_maxpool_stream(pfvm_accel_ctx *c);
static pfvm_code pfvm__acl_gpool_stream(pfvm_accel_ctx *c);
static pfvm_code pfvm__acl_copy_stream(pfvm_accel_ctx *c);
static pfvm_code pfvm__acl_concat_stream(pfvm_accel_ctx *c);
static pfvm_code pfvm__acl_matmul_stream(pfvm_accel_ctx *c);

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

/* Slice as a strided view: y[o] = x[*base + sum o_a * xs[a]] (elements);
 * split: x's first axis is split over the PEs (it must stay whole). */
static pfvm_code pfvm__acl_slice_map(pfvm_accel_ctx *c, int split, int64_t *base, int64_t *xs)
{
    const pfvm_accel_arg *x = &c->in[0], *y = &c->out[0];
    const int64_t *starts, *ends, *axes, *steps;
    int ns = pfvm__acl_ints(c->node, 1, "starts", &starts), ne = pfvm__acl_ints(c->node, 2, "ends", &ends);
    int na = pfvm__acl_ints(c->node, 3, "axes", &axes), nst = pfvm__acl_ints(c->node, 4, "steps", &steps);
    int64_t st[PFVM_MAX_RANK], stp[PFVM_MAX_RANK];
    int r = x->rank, i;
    (void)ends;
    if (ns < 0 || ne != ns || (na >= 0 && na != ns && na != 0) || (nst > 0 && nst != ns) || nst < 0 || na < 0 ||
        r < 1 || y->rank != r)
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
        if (a == 0 && split && (s0 != 0 || step != 1 || y->dims[0] != x->dims[0]))
            return pfvm__acl_unsupported(c, "Slice of the first axis (split over the PEs) only when whole");
        st[a] = s0;
        stp[a] = step;
    }
    xs[r - 1] = 1;
    for (i = r - 2; i >= 0; i--)
        xs[i] = xs[i + 1] * x->dims[i + 1];
    for (*base = 0, i = 0; i < r; i++) {
        *base += st[i] * xs[i];
        xs[i] *= stp[i];
    }
    for (i = 0; i < r && y->dims[i] > 0; i++)
        ;
    for (ns = 0; i == r && ns < r; ns++)
        if (stp[ns] < 0) /* an empty result needs no steps */
            return pfvm__acl_unsupported(c, "Slice with positive steps");
    return PFVM_OK;
}

PFVM_INTERNAL pfvm_code pfvm_acl_slice(pfvm_accel_ctx *c)
{
    const pfvm_accel_arg *x = &c->in[0], *y = &c->out[0];
    int64_t xs[PFVM_MAX_RANK], yd[PFVM_MAX_RANK], base = 0;
    int r = x->rank, i;
    pfvm_code rc;
    if ((rc = pfvm__acl_slice_map(c, !x->replicated, &base, xs)) != PFVM_OK)
        return rc;
    for (i = 0; i < r; i++)
        yd[i] = y->dims[i];
    if (!x->replicated)
        yd[0] = pfvm__acl_lead(y);
    if (y->elems == 0)
        return PFVM_OK;
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

/* ==== streamed lowerings (pfvm_accel_ctx.stream) ====
 *
 * The tensors are in the root memory (arg.dram, row-major). A node is cut
 * into tiles, each small enough for one PE's memory (its inputs' boxes, its
 * weights' slice, its temporaries and its output box together); tile i of
 * a wave runs on PE i, the wave's `load`s bring each tile's boxes in, the
 * PEs compute, the `store`s write the output boxes back, and a barrier ends
 * the wave. Tiles of equal extents share one instruction stream (an `on`
 * line naming their PEs), so a wave costs one copy of the compute lines
 * per distinct tile shape. A box that reaches into padding is filled first
 * (0 for Conv, -inf for MaxPool), so tiles at the borders compute exactly
 * like inner ones. */

typedef struct pfvm__acl_tile {
    int64_t o[5], e[5]; /* origin and extent of the tile in its node's iteration space */
    int64_t cls;        /* tiles of equal extents whose compute differs (an inverted residual chain's padding) */
} pfvm__acl_tile;

typedef pfvm_code (*pfvm__acl_body_fn)(pfvm_accel_ctx *c, const pfvm__acl_tile *t, void *user);

/* Bytes rounded up to the emitter's 16-byte alignment. */
static int64_t pfvm__acl_al(int64_t bytes)
{
    return (bytes + 15) / 16 * 16;
}

static int pfvm__acl_same(const pfvm__acl_tile *a, const pfvm__acl_tile *b)
{
    return !memcmp(a->e, b->e, sizeof a->e) && a->cls == b->cls;
}

/* Whether pfvm__acl_pe deals tiles over the instances under link k: the
 * links whose instances together carry no more than the first link's
 * (on mncore2 the 4 group links, 512 bytes per cycle in all), or every
 * link when the hook set deal_all. */
static int pfvm__acl_spread(const pfvm_accel_ctx *c, int k)
{
    return c->link_pes[k] > 0 && c->pes / c->link_pes[k] >= 2 && c->pes % c->link_pes[k] == 0 &&
           (c->deal_all || c->link_down[k] * (double)(c->pes / c->link_pes[k]) <=
                               c->link_down[0] * (double)(c->pes / c->link_pes[0]));
}

/* PE of tile i of a wave of n tiles: a wave smaller than the machine is
 * dealt evenly over the instances under the slowest links (so that a few
 * tiles do not crowd one group's link), and fills the PEs below those in
 * order. */
static int64_t pfvm__acl_pe(const pfvm_accel_ctx *c, int64_t n, int64_t i)
{
    int64_t pe = 0, span = c->pes;
    int k;
    if (n >= c->pes)
        return i;
    if (c->deal_run > 1 && n % c->deal_run == 0) {
        pfvm_accel_ctx runs = *c;
        runs.deal_run = 0;
        return pfvm__acl_pe(&runs, n / c->deal_run, i / c->deal_run) + i % c->deal_run;
    }
    for (k = 0; k < c->nlinks && pfvm__acl_spread(c, k); k++) {
        int64_t f = span / c->link_pes[k], per = (n + f - 1) / f, child = i / per;
        pe += child * c->link_pes[k];
        i -= child * per;
        n = n - child * per < per ? n - child * per : per;
        span = c->link_pes[k];
    }
    return pe + i;
}

/* Whether runs of r consecutive tiles of a wave of n (deal_run = r) land
 * on PEs of their own: each run's first PE plus r at most the next's. */
static int pfvm__acl_runs_fit(pfvm_accel_ctx *c, int64_t n, int64_t r)
{
    int64_t i, end = 0;
    int fit = n < c->pes && r > 1 && n % r == 0;
    c->deal_run = 0;
    for (i = 0; fit && i < n / r; i++) {
        int64_t pe = pfvm__acl_pe(c, n / r, i);
        fit = pe >= end && pe + r <= c->pes;
        end = pe + r;
    }
    return fit;
}

/* Tiles of a wave of n that pfvm__acl_pe puts under the first instance
 * of link k. */
static int64_t pfvm__acl_first(const pfvm_accel_ctx *c, int64_t n, int k)
{
    int64_t span = c->pes;
    int j, spread = 1;
    if (n > c->pes)
        n = c->pes;
    for (j = 0; j <= k && j < c->nlinks; j++) {
        spread = spread && n < c->pes && pfvm__acl_spread(c, j);
        if (spread) {
            int64_t f = span / c->link_pes[j];
            n = (n + f - 1) / f;
        } else if (n > c->link_pes[j])
            n = c->link_pes[j];
        span = c->link_pes[j];
    }
    return n;
}

/* Runs body once per shape of tile in the wave (tile i on PE i), after an
 * `on` line naming the PEs with that shape (several lines and calls when
 * they form more than 20 ranges). */
static pfvm_code pfvm__acl_classes(pfvm_accel_ctx *c, const pfvm__acl_tile *tiles, int64_t n, pfvm__acl_body_fn body,
                                   void *user)
{
    unsigned char *done = (unsigned char *)pfvm__calloc((size_t)n + 1, 1);
    int64_t i, j;
    pfvm_code rc = PFVM_OK;
    if (!done)
        return pfvm__fail(c->st, PFVM_ERR_NOMEM, "node %s (%s): out of memory", c->node->name, c->node->op_type);
    for (i = 0; i < n && rc == PFVM_OK; i++) {
        if (done[i])
            continue;
        j = i;
        while (j < n && rc == PFVM_OK) {
            char line[512];
            size_t len = (size_t)pfvm__snprintf(line, sizeof line, "on");
            int ranges = 0;
            for (; j < n && ranges < 20; j++) {
                int64_t first;
                if (done[j] || !pfvm__acl_same(&tiles[i], &tiles[j]))
                    continue;
                first = j;
                while (j + 1 < n && !done[j + 1] && pfvm__acl_same(&tiles[i], &tiles[j + 1]) &&
                       pfvm__acl_pe(c, n, j + 1) == pfvm__acl_pe(c, n, j) + 1)
                    done[j++] = 1;
                done[j] = 1;
                len += (size_t)pfvm__snprintf(line + len, sizeof line - len, " %lld %lld",
                                              (long long)pfvm__acl_pe(c, n, first), (long long)pfvm__acl_pe(c, n, j));
                ranges++;
            }
            if (!ranges)
                break;
            if ((rc = c->emit(c, "%s", line)) == PFVM_OK)
                rc = body(c, &tiles[i], user);
        }
    }
    pfvm__free(done);
    return rc;
}

/* A queue of one kind of transfer for a wave: loads of the same data to
 * the same place in several PEs are gathered (whatever order the PEs come
 * in) and written as one `load F L` or `loads F L S` per arithmetic run of
 * PEs, sent once down links that broadcast; equal fills for a run of
 * consecutive PEs become one `on F L` + `fill`. */
typedef struct pfvm__acl_ld {
    int64_t v[9], pe;
} pfvm__acl_ld;

typedef struct pfvm__acl_q {
    int pending, is_fill;
    int64_t first, last, v[9];
    const char *value;            /* fill */
    pfvm__acl_ld *loads;          /* stb_ds: the queued loads */
    pfvm__acl_ld *pads;           /* stb_ds: the queued box paddings (pfvm__acl_pad_emit), of `value` */
} pfvm__acl_q;

static void pfvm__acl_qinit(pfvm__acl_q *q)
{
    memset(q, 0, 4 * sizeof *q);
}

/* Frees what the 4 queues at q hold (on an error, when nothing flushed them). */
static void pfvm__acl_qfree(pfvm__acl_q *q)
{
    int i;
    for (i = 0; i < 4; i++) {
        stbds_arrfree(q[i].loads);
        stbds_arrfree(q[i].pads);
        q[i].loads = q[i].pads = NULL;
    }
}

static int pfvm__acl_ld_cmp(const void *pa, const void *pb)
{
    const pfvm__acl_ld *a = (const pfvm__acl_ld *)pa, *b = (const pfvm__acl_ld *)pb;
    int i;
    for (i = 0; i < 9; i++)
        if (a->v[i] != b->v[i])
            return a->v[i] < b->v[i] ? -1 : 1;
    return a->pe < b->pe ? -1 : a->pe > b->pe;
}

static pfvm_code pfvm__acl_emit_load(pfvm_accel_ctx *c, const int64_t *v, int64_t first, int64_t last, int64_t step)
{
    char pes[64];
    if (step > 1 && last > first)
        pfvm__snprintf(pes, sizeof pes, "loads %lld %lld %lld", (long long)first, (long long)last, (long long)step);
    else
        pfvm__snprintf(pes, sizeof pes, "load %lld %lld", (long long)first, (long long)last);
    return c->emit(c, "%s %lld %lld %lld %lld %lld %lld %lld %lld %lld", pes, (long long)v[0], (long long)v[1],
                   (long long)v[2], (long long)v[3], (long long)v[4], (long long)v[5], (long long)v[6],
                   (long long)v[7], (long long)v[8]);
}

/* The line that pfvm__acl_flush_loads writes from sorted loads l[i..n):
 * the PEs l[i].pe, + *step, ... up to l[*j].pe; returns where the next
 * line starts. */
static int64_t pfvm__acl_ld_run(const pfvm__acl_ld *l, int64_t n, int64_t i, int64_t *j, int64_t *step)
{
    *step = 1;
    *j = i;
    if (i + 1 < n && !memcmp(l[i].v, l[i + 1].v, sizeof l[i].v) && l[i + 1].pe > l[i].pe) {
        *step = l[i + 1].pe - l[i].pe;
        *j = i + 1;
        while (*j + 1 < n && !memcmp(l[i].v, l[*j + 1].v, sizeof l[i].v) && l[*j + 1].pe - l[*j].pe == *step)
            (*j)++;
    }
    for (i = *j + 1; i < n && !memcmp(l[i].v, l[i - 1].v, sizeof l[i].v) && l[i].pe == l[i - 1].pe; i++)
        ; /* the same load twice to one PE */
    return i;
}

static pfvm_code pfvm__acl_flush_loads(pfvm_accel_ctx *c, pfvm__acl_q *q)
{
    pfvm__acl_ld *l = q->loads;
    int64_t n = (int64_t)stbds_arrlen(l), i = 0, j, step, next;
    pfvm_code rc = PFVM_OK;
    if (n > 1)
        qsort(l, (size_t)n, sizeof *l, pfvm__acl_ld_cmp);
    while (i < n && rc == PFVM_OK) {
        next = pfvm__acl_ld_run(l, n, i, &j, &step);
        rc = pfvm__acl_emit_load(c, l[i].v, l[i].pe, l[j].pe, step);
        i = next;
    }
    stbds_arrfree(q->loads);
    q->loads = NULL;
    return rc;
}

/* Link bytes of queued loads by the simulator's rule (each line that
 * pfvm__acl_flush_loads would write charged on its own; the link into an
 * instance carries a line's bytes once when its children's links
 * broadcast, else what they carry together): added to down[k][instance
 * of link k]; the queue is emptied, nothing emitted. inst and carry:
 * scratch of c->pes entries. */
static void pfvm__acl_loads_cost(const pfvm_accel_ctx *c, pfvm__acl_q *q, double **down, int64_t *inst,
                                 double *carry)
{
    pfvm__acl_ld *l = q->loads;
    int64_t n = (int64_t)stbds_arrlen(l), i = 0, j, step, next, pe, m, e, x;
    if (n > 1)
        qsort(l, (size_t)n, sizeof *l, pfvm__acl_ld_cmp);
    while (i < n) {
        double bytes = (double)(l[i].v[2] * l[i].v[3] * l[i].v[4]) * 4;
        int k;
        next = pfvm__acl_ld_run(l, n, i, &j, &step);
        for (m = 0, pe = l[i].pe; pe <= l[j].pe; pe += step, m++)
            inst[m] = pe, carry[m] = bytes; /* the PE links (link_pes 1) */
        for (k = c->nlinks - 1; k >= 0; k--) {
            /* merge the entries (sorted) into the instances of link k */
            for (e = 0, x = 0; x < m; e++) {
                int64_t id = inst[x] / c->link_pes[k];
                double sum = 0;
                for (; x < m && inst[x] / c->link_pes[k] == id; x++)
                    sum += carry[x];
                inst[e] = id * c->link_pes[k], carry[e] = c->link_bcast[k] ? bytes : sum;
                down[k][id] += carry[e];
            }
            m = e;
        }
        i = next;
    }
    stbds_arrfree(q->loads);
    q->loads = NULL;
}

/* Writes `value` into the padding of a box of ch planes of bh x bw
 * elements at PE byte xb (v: xb, ch, bh, bw, then the rows above and
 * below and the columns left and right of the valid part, then 1 when the
 * layout is [bh][ch][bw], 0 for [ch][bh][bw]), not the whole box: the top
 * and bottom rows by `fill` (one plane's, copied to the others by one
 * `mov`), the left and right columns of every row by one `mov` each from
 * a run already holding the value (R rows at one element per lane: a
 * fraction of filling the box). */
static pfvm_code pfvm__acl_pad_emit(pfvm_accel_ctx *c, const int64_t *v, const char *value)
{
    int64_t xb = v[0], ch = v[1], bh = v[2], bw = v[3], pt = v[4], pb = v[5], pl = v[6], pr = v[7];
    int outer = (int)v[8], k;
    int64_t z = -1, zlen = 0; /* a run of zlen elements at PE byte z holding value */
    pfvm_code rc;
    for (k = 0; k < 2; k++) {
        int64_t rows = k ? pb : pt, at = k ? bh - pb : 0, d;
        if (!rows)
            continue;
        /* [bh][ch][bw]: the rows are contiguous over all planes */
        d = xb + at * (outer ? ch : 1) * bw * 4;
        if ((rc = c->emit(c, "fill %lld %s %lld", (long long)d, value, (long long)(rows * bw * (outer ? ch : 1)))) !=
            PFVM_OK)
            return rc;
        if (!outer && ch > 1 &&
            (rc = c->emit(c, "mov %lld %lld %lld %lld %lld 1 0 1", (long long)(d + bh * bw * 4), (long long)d,
                          (long long)(ch - 1), (long long)(rows * bw), (long long)(bh * bw))) != PFVM_OK)
            return rc;
        z = d, zlen = rows * bw;
    }
    for (k = 0; k < 2; k++) {
        int64_t cols = k ? pr : pl, d = xb + (k ? bw - pr : 0) * 4;
        if (!cols)
            continue;
        if (zlen < cols) {
            if ((rc = c->emit(c, "fill %lld %s %lld", (long long)d, value, (long long)cols)) != PFVM_OK)
                return rc;
            z = d, zlen = cols;
        }
        /* every row of every plane: row i at xb + i * bw in both layouts */
        if ((rc = c->emit(c, "mov %lld %lld %lld %lld %lld 1 0 1", (long long)d, (long long)z, (long long)(ch * bh),
                          (long long)cols, (long long)bw)) != PFVM_OK)
            return rc;
    }
    return PFVM_OK;
}

/* PE cycles of pfvm__acl_pad_emit for v (the cost model's). */
static double pfvm__acl_pad_cycles(const pfvm_accel_ctx *c, const int64_t *v)
{
    double simd = c->simd > 0 ? c->simd : 1, rows = (double)(v[1] * v[2]);
    double top = (double)((v[4] + v[5]) * v[3] * v[1]);
    return ceil(top / simd) + rows * (ceil((double)v[6] / simd) + ceil((double)v[7] / simd));
}

/* Emits the queued paddings: per distinct padding, `on` lines naming its
 * PEs' runs (20 at most per line), each followed by its instructions. */
static pfvm_code pfvm__acl_flush_pads(pfvm_accel_ctx *c, pfvm__acl_q *q)
{
    pfvm__acl_ld *l = q->pads;
    int64_t n = (int64_t)stbds_arrlen(l), i = 0;
    pfvm_code rc = PFVM_OK;
    if (n > 1)
        qsort(l, (size_t)n, sizeof *l, pfvm__acl_ld_cmp);
    while (i < n && rc == PFVM_OK) {
        char line[512];
        size_t len = (size_t)pfvm__snprintf(line, sizeof line, "on");
        int ranges = 0;
        int64_t j = i;
        while (j < n && ranges < 20 && !memcmp(l[j].v, l[i].v, sizeof l[i].v)) {
            int64_t first = l[j].pe;
            while (j + 1 < n && !memcmp(l[j + 1].v, l[i].v, sizeof l[i].v) && l[j + 1].pe <= l[j].pe + 1)
                j++;
            len += (size_t)pfvm__snprintf(line + len, sizeof line - len, " %lld %lld", (long long)first,
                                          (long long)l[j].pe);
            ranges++;
            j++;
        }
        if ((rc = c->emit(c, "%s", line)) == PFVM_OK)
            rc = pfvm__acl_pad_emit(c, l[i].v, q->value);
        i = j;
    }
    stbds_arrfree(q->pads);
    q->pads = NULL;
    return rc;
}

static pfvm_code pfvm__acl_flush(pfvm_accel_ctx *c, pfvm__acl_q *q)
{
    pfvm_code rc;
    if (q->pads && (rc = pfvm__acl_flush_pads(c, q)) != PFVM_OK)
        return rc;
    if (q->loads)
        return pfvm__acl_flush_loads(c, q);
    if (!q->pending)
        return PFVM_OK;
    q->pending = 0;
    if (q->is_fill)
        return (rc = c->emit(c, "on %lld %lld", (long long)q->first, (long long)q->last)) != PFVM_OK
                   ? rc
                   : c->emit(c, "fill %lld %s %lld", (long long)q->v[0], q->value, (long long)q->v[1]);
    return pfvm__acl_emit_load(c, q->v, q->first, q->last, 1);
}

static pfvm_code pfvm__acl_queue(pfvm_accel_ctx *c, pfvm__acl_q *q, int64_t pe, const int64_t *v, int nv,
                                 const char *value)
{
    pfvm_code rc;
    if (!value) {
        pfvm__acl_ld l;
        memset(&l, 0, sizeof l);
        memcpy(l.v, v, (size_t)nv * sizeof *v);
        l.pe = pe;
        if (!pfvm__arrpush(q->loads, l))
            return pfvm__fail(c->st, PFVM_ERR_NOMEM, "node %s (%s): out of memory for loads", c->node->name,
                              c->node->op_type);
        return PFVM_OK;
    }
    if (q->pending && pe == q->last + 1 && !memcmp(q->v, v, (size_t)nv * sizeof *v) && !strcmp(value, q->value)) {
        q->last = pe;
        return PFVM_OK;
    }
    if ((rc = pfvm__acl_flush(c, q)) != PFVM_OK)
        return rc;
    q->pending = 1;
    q->is_fill = 1;
    q->value = value;
    q->first = q->last = pe;
    memset(q->v, 0, sizeof q->v);
    memcpy(q->v, v, (size_t)nv * sizeof *v);
    return PFVM_OK;
}

/* Queues the padding of a box (v as pfvm__acl_pad_emit's) with `value`
 * for PE pe; a queue holds the paddings of one value. */
static pfvm_code pfvm__acl_queue_pad(pfvm_accel_ctx *c, pfvm__acl_q *q, int64_t pe, const int64_t *v,
                                     const char *value)
{
    pfvm__acl_ld l;
    pfvm_code rc;
    if (q->pending && (rc = pfvm__acl_flush(c, q)) != PFVM_OK)
        return rc;
    if (q->pads && strcmp(q->value, value) && (rc = pfvm__acl_flush_pads(c, q)) != PFVM_OK)
        return rc;
    memcpy(l.v, v, sizeof l.v);
    l.pe = pe;
    q->value = value;
    if (!pfvm__arrpush(q->pads, l))
        return pfvm__fail(c->st, PFVM_ERR_NOMEM, "node %s (%s): out of memory for fills", c->node->name,
                          c->node->op_type);
    return PFVM_OK;
}

/* Loads into PE pe through queue q: D[n*DN + r*DR + c] = root[A + n*AN + r*AR + c]. */
static pfvm_code pfvm__acl_load(pfvm_accel_ctx *c, pfvm__acl_q *q, int64_t pe, int64_t d, int64_t a, int64_t n,
                                int64_t r, int64_t col, int64_t dn, int64_t dr, int64_t an, int64_t ar)
{
    int64_t v[9];
    if (n < 1 || r < 1 || col < 1)
        return PFVM_OK;
    v[0] = d, v[1] = a, v[2] = n, v[3] = r, v[4] = col, v[5] = dn, v[6] = dr, v[7] = an, v[8] = ar;
    return pfvm__acl_queue(c, q, pe, v, 9, NULL);
}

static pfvm_code pfvm__acl_store(pfvm_accel_ctx *c, int64_t pe, int64_t a, int64_t d, int64_t n, int64_t r,
                                 int64_t col, int64_t an, int64_t ar, int64_t dn, int64_t dr)
{
    return c->emit(c, "store %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld", (long long)pe, (long long)a,
                   (long long)d, (long long)n, (long long)r, (long long)col, (long long)an, (long long)ar,
                   (long long)dn, (long long)dr);
}

static pfvm_code pfvm__acl_stream_nomem(pfvm_accel_ctx *c, int64_t need)
{
    return pfvm__fail(c->st, PFVM_ERR_NOMEM,
                      "node %s (%s): the smallest tile needs %lld bytes, more than the %lld bytes of a PE",
                      c->node->name, c->node->op_type, (long long)need, (long long)c->pe_mem);
}

/* Tiles appended to *tiles (stb_ds) for an iteration space of `rank` axes
 * of sizes dims cut into steps of `step` (row-major order of tiles). */
static pfvm_code pfvm__acl_tiling(pfvm_accel_ctx *c, int rank, const int64_t *dims, const int64_t *step,
                                  pfvm__acl_tile **tiles)
{
    int64_t idx[5] = {0, 0, 0, 0, 0};
    int a;
    for (;;) {
        pfvm__acl_tile t;
        memset(&t, 0, sizeof t);
        for (a = 0; a < rank; a++) {
            t.o[a] = idx[a] * step[a];
            t.e[a] = dims[a] - t.o[a] < step[a] ? dims[a] - t.o[a] : step[a];
        }
        if (!pfvm__arrpush(*tiles, t))
            return pfvm__fail(c->st, PFVM_ERR_NOMEM, "node %s (%s): out of memory for tiles", c->node->name,
                              c->node->op_type);
        for (a = rank - 1; a >= 0; a--) {
            if (++idx[a] * step[a] < dims[a])
                break;
            idx[a] = 0;
        }
        if (a < 0)
            return PFVM_OK;
    }
}

static int64_t pfvm__acl_count(int rank, const int64_t *dims, const int64_t *step)
{
    int64_t n = 1;
    int a;
    for (a = 0; a < rank; a++)
        n *= (dims[a] + step[a] - 1) / step[a];
    return n;
}

/* ---- the wave driver: every streamed lowering's loop over its tiles ----
 *
 * Tiles go in waves of c->pes, tile i of a wave of n on pfvm__acl_pe(c, n,
 * i). Per wave and per chunk (a lowering that accumulates over slices of a
 * reduction axis, Conv's input channels, runs the wave once per slice):
 * `load` queues each tile's transfers (q[3..5] for fills, flushed first;
 * q[0..2] for loads), `body` runs once per tile shape
 * (pfvm__acl_classes), `store` writes each tile's output box back after
 * the last chunk, and a barrier ends the pass. */

#define PFVM__ACL_NQ 6

typedef struct pfvm__acl_waves {
    pfvm_code (*load)(pfvm_accel_ctx *c, pfvm__acl_q *q, const pfvm__acl_tile *t, int64_t pe, void *user);
    pfvm__acl_body_fn body; /* or NULL: a copy, nothing computed */
    pfvm_code (*store)(pfvm_accel_ctx *c, const pfvm__acl_tile *t, int64_t pe, void *user);
    void (*chunk)(void *user, int64_t j, int64_t nchunks); /* or NULL: called before chunk j */
    /* or NULL: after the last chunk's bodies, before the stores (the wave's
     * n tiles; an inverted residual chain's reduction of its parts) */
    pfvm_code (*finish)(pfvm_accel_ctx *c, const pfvm__acl_tile *tw, int64_t n, void *user);
    /* or NULL: the stores lag one wave, so that they cross the links while
     * the next wave computes: wave w's tile i stores in pass i % nchunks of
     * wave w + 1 (the last wave's in a phase of their own after it), the
     * output tiles in two buffers by wave parity: flip(user, parity)
     * selects the one the body writes and the store reads */
    void (*flip)(void *user, int parity);
    int64_t nchunks;
    void *user;
} pfvm__acl_waves;

/* The lagging stores (pfvm__acl_waves.flip) of the previous wave's tiles
 * pt[0..pn) (written into buffer parity) due in pass j of nch. */
static pfvm_code pfvm__acl_wave_lag(pfvm_accel_ctx *c, const pfvm__acl_waves *w, const pfvm__acl_tile *pt, int64_t pn,
                                    int parity, int64_t j, int64_t nch)
{
    int64_t i;
    pfvm_code rc = PFVM_OK;
    w->flip(w->user, parity);
    for (i = j; i < pn && rc == PFVM_OK; i += nch)
        rc = w->store(c, &pt[i], pfvm__acl_pe(c, pn, i), w->user);
    w->flip(w->user, !parity);
    return rc;
}

static pfvm_code pfvm__acl_wave_pass(pfvm_accel_ctx *c, const pfvm__acl_waves *w, pfvm__acl_q *q,
                                     const pfvm__acl_tile *tw, int64_t n, int64_t j, const pfvm__acl_tile *pt,
                                     int64_t pn, int parity)
{
    static const int order[PFVM__ACL_NQ] = {3, 4, 5, 0, 1, 2};
    int64_t i;
    int64_t nch = w->nchunks > 1 ? w->nchunks : 1;
    int k;
    pfvm_code rc;
    if (w->chunk)
        w->chunk(w->user, j, nch);
    for (i = 0; i < n; i++)
        if ((rc = w->load(c, q, &tw[i], pfvm__acl_pe(c, n, i), w->user)) != PFVM_OK)
            return rc;
    for (k = 0; k < PFVM__ACL_NQ; k++)
        if ((rc = pfvm__acl_flush(c, &q[order[k]])) != PFVM_OK)
            return rc;
    if (pn && (rc = pfvm__acl_wave_lag(c, w, pt, pn, !parity, j, nch)) != PFVM_OK)
        return rc;
    if (w->body && (rc = pfvm__acl_classes(c, tw, n, w->body, w->user)) != PFVM_OK)
        return rc;
    if (j == nch - 1 && w->finish && (rc = w->finish(c, tw, n, w->user)) != PFVM_OK)
        return rc;
    for (i = 0; j == nch - 1 && !w->flip && i < n; i++)
        if ((rc = w->store(c, &tw[i], pfvm__acl_pe(c, n, i), w->user)) != PFVM_OK)
            return rc;
    return c->emit(c, "barrier");
}

static pfvm_code pfvm__acl_run_waves(pfvm_accel_ctx *c, const pfvm__acl_tile *tiles, const pfvm__acl_waves *w)
{
    pfvm__acl_q q[PFVM__ACL_NQ];
    int64_t count = (int64_t)stbds_arrlen(tiles), wave, j, pn = 0;
    int k, parity = 0;
    pfvm_code rc = PFVM_OK;
    memset(q, 0, sizeof q);
    for (wave = 0; wave < count && rc == PFVM_OK; wave += c->pes) {
        int64_t n = count - wave < c->pes ? count - wave : c->pes;
        if (w->flip)
            w->flip(w->user, parity);
        for (j = 0; j < (w->nchunks > 1 ? w->nchunks : 1) && rc == PFVM_OK; j++)
            rc = pfvm__acl_wave_pass(c, w, q, tiles + wave, n, j, pn ? tiles + wave - pn : NULL, pn, parity);
        if (w->flip)
            pn = n, parity = !parity;
    }
    if (rc == PFVM_OK && pn) { /* the last wave's lagging stores */
        if ((rc = pfvm__acl_wave_lag(c, w, tiles + count - pn, pn, !parity, 0, 1)) == PFVM_OK)
            rc = c->emit(c, "barrier");
        w->flip(w->user, 0);
    }
    for (k = 0; k < PFVM__ACL_NQ; k++) {
        stbds_arrfree(q[k].loads);
        stbds_arrfree(q[k].pads);
    }
    return rc;
}

/* ---- windows (Conv, MaxPool) streamed: a box of input rows and columns per tile ---- */

/* The input box of output rows [o, o + e) along axis ax: its first input
 * index (may be negative: padding) and its size. */
static void pfvm__acl_box(const pfvm__acl_win *w, int ax, int64_t o, int64_t e, int64_t *first, int64_t *size)
{
    *first = o * w->s[ax] - w->pad0[ax];
    *size = (e - 1) * w->s[ax] + (w->k[ax] - 1) * w->d[ax] + 1;
}

/* Loads `ch` planes of x's box for output rows/cols of the tile into the
 * PE at xb (box layout [ch][bh][bw], or [bh][ch][bw] when rows_outer), or
 * (fill) queues the fill of the box with `pad` when it reaches outside the
 * input, to run before the loads. src: x's byte offset of the first plane. */
static pfvm_code pfvm__acl_load_box2(pfvm_accel_ctx *c, pfvm__acl_q *q, const pfvm__acl_win *w, int64_t pe,
                                     int64_t xb, int64_t src, int64_t ch, int64_t oh, int64_t th, int64_t ow,
                                     int64_t tw, const char *pad, int fill, int rows_outer)
{
    int64_t h0, bh, w0, bw, v0, v1, u0, u1;
    pfvm__acl_box(w, 0, oh, th, &h0, &bh);
    pfvm__acl_box(w, 1, ow, tw, &w0, &bw);
    v0 = h0 < 0 ? 0 : h0;
    v1 = h0 + bh > w->in[0] ? w->in[0] : h0 + bh;
    u0 = w0 < 0 ? 0 : w0;
    u1 = w0 + bw > w->in[1] ? w->in[1] : w0 + bw;
    if (fill) {
        int64_t f[9];
        if (v0 == h0 && v1 == h0 + bh && u0 == w0 && u1 == w0 + bw)
            return PFVM_OK;
        if (v1 <= v0 || u1 <= u0) { /* all padding */
            f[0] = xb, f[1] = ch * bh * bw;
            return pfvm__acl_queue(c, q, pe, f, 2, pad);
        }
        f[0] = xb, f[1] = ch, f[2] = bh, f[3] = bw, f[4] = v0 - h0, f[5] = h0 + bh - v1, f[6] = u0 - w0;
        f[7] = w0 + bw - u1, f[8] = rows_outer;
        return pfvm__acl_queue_pad(c, q, pe, f, pad);
    }
    if (v1 <= v0 || u1 <= u0)
        return PFVM_OK;
    if (rows_outer)
        return pfvm__acl_load(c, q, pe, xb + ((v0 - h0) * ch * bw + (u0 - w0)) * 4, src + (v0 * w->in[1] + u0) * 4,
                              ch, v1 - v0, u1 - u0, bw, ch * bw, w->in[0] * w->in[1], w->in[1]);
    return pfvm__acl_load(c, q, pe, xb + ((v0 - h0) * bw + (u0 - w0)) * 4, src + (v0 * w->in[1] + u0) * 4, ch, v1 - v0,
                          u1 - u0, bh * bw, bw, w->in[0] * w->in[1], w->in[1]);
}

static pfvm_code pfvm__acl_load_box(pfvm_accel_ctx *c, pfvm__acl_q *q, const pfvm__acl_win *w, int64_t pe,
                                    int64_t xb, int64_t src, int64_t ch, int64_t oh, int64_t th, int64_t ow, int64_t tw,
                                    const char *pad, int fill)
{
    return pfvm__acl_load_box2(c, q, w, pe, xb, src, ch, oh, th, ow, tw, pad, fill, 0);
}

typedef struct pfvm__acl_conv_plan {
    pfvm__acl_win w;
    int64_t C, OC, Cg, OCg, kk, oct, th, tw, icc;
    int64_t xb, wb, col, out, bb;
    int64_t ic0, icn; /* the chunk of input channels of this step */
    int direct, first, last, bias;
    int res;    /* pfvm_accel_ctx.res: the other operand's box at rb, like out's */
    int64_t rb;
    /* rows: stride 1, kernel wider than 1: the box is [rows][channels][cols]
     * and each output row is one gemm per tap over the box's full width
     * (no im2col; the columns past the tile's are computed and dropped) */
    int rows;
    double cost; /* the cost model's cycles for the chosen tile */
    /* a MaxPool run in the tiles (pfvm__acl_cp_stream), for the cost
     * model: elements each tile stores (0: its output tile) and the PE
     * cycles the pool adds to the last step */
    int64_t stored;
    double extra;
    /* strided im2col: the box's columns first split by their index modulo
     * the stride (pfvm__acl_conv_deint), at ph */
    int64_t simd, ph;
    /* lag: the stores lag one wave (pfvm__acl_waves.flip), the output tile
     * in two buffers (obuf; a Conv + MaxPool's pool output); j, nch: the
     * step and the steps (the residual box loads on step pe % nch) */
    int lag;
    int64_t obuf[2], j, nch;
} pfvm__acl_conv_plan;

/* Whether the im2col of a tile of th x tw outputs first splits the box's
 * columns by their index modulo the column stride (one `mov` per phase,
 * [channels][rows][phase][ceil(bw / stride)]), so that each tap's gather
 * reads contiguous columns (ceil(tw / simd) cycles per row instead of tw):
 * when the split costs less than it saves. */
static int pfvm__acl_conv_deint(const pfvm__acl_conv_plan *p, int64_t th, int64_t tw)
{
    int64_t bh = (th - 1) * p->w.s[0] + (p->w.k[0] - 1) * p->w.d[0] + 1;
    int64_t bw = (tw - 1) * p->w.s[1] + (p->w.k[1] - 1) * p->w.d[1] + 1, simd = p->simd > 0 ? p->simd : 1;
    return !p->direct && !p->rows && p->w.s[1] > 1 && p->kk * th * (tw - (tw + simd - 1) / simd) > bh * bw;
}

/* PE bytes of the split box (pfvm__acl_conv_deint) of icc channels. */
static int64_t pfvm__acl_conv_ph_bytes(const pfvm__acl_conv_plan *p, int64_t th, int64_t tw, int64_t icc)
{
    int64_t bh = (th - 1) * p->w.s[0] + (p->w.k[0] - 1) * p->w.d[0] + 1;
    int64_t bw = (tw - 1) * p->w.s[1] + (p->w.k[1] - 1) * p->w.d[1] + 1, s = p->w.s[1];
    return pfvm__acl_conv_deint(p, th, tw) ? pfvm__acl_al(icc * bh * s * ((bw + s - 1) / s) * 4) : 0;
}

/* Places a Conv tile's boxes in a PE's memory from offset 0 (a Conv run
 * with a pool in its tiles: input box, weights, im2col, phases, output
 * of out_elems per channel, bias) and returns the first free offset. */
static int64_t pfvm__acl_conv_places(pfvm__acl_conv_plan *cv, int64_t out_elems)
{
    int64_t ibh, ibw, h0, w0, top; /* the Conv's input box */
    pfvm__acl_box(&cv->w, 0, 0, cv->th, &h0, &ibh);
    pfvm__acl_box(&cv->w, 1, 0, cv->tw, &w0, &ibw);
    top = pfvm__acl_al(cv->icc * ibh * ibw * 4);
    cv->xb = 0;
    cv->wb = top, top += pfvm__acl_al(cv->oct * cv->icc * cv->kk * 4);
    cv->col = top, top += cv->direct ? 0 : pfvm__acl_al(cv->icc * cv->kk * cv->th * cv->tw * 4);
    cv->ph = top, top += pfvm__acl_conv_ph_bytes(cv, cv->th, cv->tw, cv->icc);
    cv->out = top, top += pfvm__acl_al(cv->oct * out_elems * 4);
    cv->bb = top, top += pfvm__acl_al(cv->oct * 4);
    return top;
}

/* Elements read past a rows-plan box (the last tap's shift). */
static int64_t pfvm__acl_conv_slack(const pfvm__acl_conv_plan *p)
{
    return p->rows ? (p->w.k[1] - 1) * p->w.d[1] : 0;
}

/* PE bytes of a Conv tile. */
static int64_t pfvm__acl_conv_bytes(const pfvm__acl_conv_plan *p, int64_t oct, int64_t th, int64_t tw, int64_t icc)
{
    int64_t bh = (th - 1) * p->w.s[0] + (p->w.k[0] - 1) * p->w.d[0] + 1;
    int64_t bw = (tw - 1) * p->w.s[1] + (p->w.k[1] - 1) * p->w.d[1] + 1;
    int64_t out = pfvm__acl_al(oct * th * (p->rows ? bw : tw) * 4);
    if (p->rows)
        return pfvm__acl_al((icc * bh * bw + pfvm__acl_conv_slack(p)) * 4) + pfvm__acl_al(oct * icc * p->kk * 4) +
               out * (p->res ? 2 : 1) + pfvm__acl_al(oct * 4);
    return pfvm__acl_al(icc * bh * bw * 4) + pfvm__acl_al(oct * icc * p->kk * 4) +
           (p->direct ? 0 : pfvm__acl_al(icc * p->kk * th * tw * 4)) + pfvm__acl_conv_ph_bytes(p, th, tw, icc) +
           out * (p->res ? 2 : 1) + pfvm__acl_al(oct * 4);
}

/* Distinct input boxes and weight slices among the first m tiles of a
 * wave, in the tile order x_major (n, g, rows, cols, output channels) or
 * not (n, g, output channels, rows, cols); nb: output channel blocks per
 * group, nhw: spatial tiles per image and group. */
static void pfvm__acl_conv_distinct(int64_t m, int64_t nb, int64_t nhw, int x_major, double *boxes, double *slices)
{
    if (x_major) {
        *boxes = (double)((m + nb - 1) / nb);
        *slices = (double)(m < nb ? m : nb) * (double)((m + nb * nhw - 1) / (nb * nhw));
    } else {
        *boxes = (double)(m < nhw ? m : nhw) * (double)((m + nb * nhw - 1) / (nb * nhw));
        *slices = (double)((m + nhw - 1) / nhw);
    }
}

/* Cycles of one wave of m tiles by the simulator's cost model (README.md,
 * "accel", "Programs"): each step of input channels is a phase lasting
 * its busiest link (the first instance under each link stands for all)
 * or its PE's compute; the last step also stores the outputs. */
static double pfvm__acl_conv_wave(const pfvm_accel_ctx *c, const pfvm__acl_conv_plan *p, int64_t m, int64_t oct,
                                  int64_t th, int64_t tw, int64_t icc, int x_major, int64_t nb, int64_t nhw,
                                  int64_t prev)
{
    int64_t bh = (th - 1) * p->w.s[0] + (p->w.k[0] - 1) * p->w.d[0] + 1;
    int64_t bw = (tw - 1) * p->w.s[1] + (p->w.k[1] - 1) * p->w.d[1] + 1;
    int64_t nchunks = (p->Cg + icc - 1) / icc, simd = c->simd > 0 ? c->simd : 1;
    double box = (double)(icc * bh * bw * 4), slice = (double)(oct * icc * p->kk * 4);
    double out = (double)((p->stored ? p->stored : oct * th * tw) * 4);
    double down = 0, up = 0, compute, phase, last, first, pad;
    int k;
    {
        /* the padding of the top left tile's box, written on the first step */
        int64_t v[9], a;
        v[1] = icc, v[2] = bh, v[3] = bw, v[8] = 0;
        for (a = 0; a < 2; a++) {
            int64_t lo = -p->w.pad0[a], sz = a ? bw : bh, hi = lo + sz > p->w.in[a] ? p->w.in[a] : lo + sz;
            v[4 + 2 * a] = lo < 0 ? -lo : 0;
            v[5 + 2 * a] = lo + sz - hi;
        }
        pad = v[4] + v[5] + v[6] + v[7] ? pfvm__acl_pad_cycles(c, v) : 0;
    }
    if (p->rows)
        compute = (double)(th * p->kk) * ceil((double)oct * (double)bw * (double)icc / c->macs);
    else
        compute = ceil((double)oct * (double)(th * tw) * (double)(icc * p->kk) / c->macs);
    if (pfvm__acl_conv_deint(p, th, tw))
        compute += (double)(icc * p->kk * th) * (double)((tw + simd - 1) / simd) + (double)(icc * bh * bw);
    else if (!p->direct && !p->rows)
        compute += (double)(icc * p->kk * th) * (double)(p->w.s[1] == 1 ? (tw + simd - 1) / simd : tw);
    for (k = 0; k < c->nlinks; k++) {
        int64_t mk = pfvm__acl_first(c, m, k);
        double boxes, slices, bytes, ub;
        if (c->link_bcast[k])
            pfvm__acl_conv_distinct(mk, nb, nhw, x_major, &boxes, &slices);
        else
            boxes = slices = (double)mk;
        /* the residual boxes, one per tile, spread over the steps */
        bytes = boxes * box + slices * slice + (p->res ? (double)mk * out / (double)nchunks : 0);
        ub = (double)mk * out;
        if (bytes / c->link_down[k] > down)
            down = bytes / c->link_down[k];
        if (ub / c->link_up[k] > up)
            up = ub / c->link_up[k];
        /* the previous wave's lagging stores, spread over the steps */
        ub = p->lag ? (double)pfvm__acl_first(c, prev, k) * out / (double)nchunks / c->link_up[k] : 0;
        if (ub > down)
            down = ub; /* the other direction, but in the same phases */
    }
    if (p->lag)
        up = 0; /* this wave's stores lag into the next */
    phase = down > compute ? down : compute;
    first = down > compute + pad ? down : compute + pad;
    if (nchunks == 1) {
        first = first > compute + pad + p->extra ? first : compute + pad + p->extra;
        return (first > up ? first : up) + 1;
    }
    last = phase > compute + p->extra ? phase : compute + p->extra;
    last = last > up ? last : up;
    return first + 1 + (double)(nchunks - 2) * (phase + 1) + last + 1;
}

/* Cycles of all the waves of `tiles` tiles (pfvm__acl_conv_wave); with
 * lagging stores (p->lag), each wave after the first carries the stores
 * of the one before, and the last wave's follow in a phase of their own. */
static double pfvm__acl_conv_waves(const pfvm_accel_ctx *c, const pfvm__acl_conv_plan *p, int64_t tiles, int64_t oct,
                                   int64_t th, int64_t tw, int64_t icc, int x_major, int64_t nb, int64_t nhw)
{
    int64_t full = tiles / c->pes, rest = tiles % c->pes, last = rest ? rest : c->pes;
    double cost, tail = 0, out = (double)((p->stored ? p->stored : oct * th * tw) * 4);
    int k;
    if (!p->lag) {
        cost = (double)full * pfvm__acl_conv_wave(c, p, c->pes, oct, th, tw, icc, x_major, nb, nhw, 0);
        return rest ? cost + pfvm__acl_conv_wave(c, p, rest, oct, th, tw, icc, x_major, nb, nhw, 0) : cost;
    }
    cost = pfvm__acl_conv_wave(c, p, c->pes, oct, th, tw, icc, x_major, nb, nhw, 0);
    if (full > 1)
        cost += (double)(full - 1) * pfvm__acl_conv_wave(c, p, c->pes, oct, th, tw, icc, x_major, nb, nhw, c->pes);
    if (rest)
        cost += pfvm__acl_conv_wave(c, p, rest, oct, th, tw, icc, x_major, nb, nhw, c->pes);
    for (k = 0; k < c->nlinks; k++) {
        double u = (double)pfvm__acl_first(c, last, k) * out / c->link_up[k];
        if (u > tail)
            tail = u;
    }
    return cost + ceil(tail) + 1;
}

/* The tile a Conv search candidate stands for: given the extents the
 * search halves (output channels, rows and columns of the tiled output,
 * input channels per step), the Conv tile's rows and columns (*th, *tw:
 * the same extents for a Conv alone, the pool box for a Conv + MaxPool)
 * and its PE bytes; it may set the plan's cost-model fields (stored,
 * extra) for the candidate. */
typedef int64_t (*pfvm__acl_conv_fit_fn)(const pfvm_accel_ctx *c, pfvm__acl_conv_plan *p, int64_t oct, int64_t oh,
                                         int64_t ow, int64_t icc, int64_t *th, int64_t *tw, void *user);

/* A Conv alone: the tile is the output tile. */
static int64_t pfvm__acl_conv_fit(const pfvm_accel_ctx *c, pfvm__acl_conv_plan *p, int64_t oct, int64_t oh, int64_t ow,
                                  int64_t icc, int64_t *th, int64_t *tw, void *user)
{
    int64_t cols = p->rows ? (ow - 1) * p->w.s[1] + (p->w.k[1] - 1) * p->w.d[1] + 1 : ow;
    (void)c, (void)user;
    *th = oh, *tw = ow;
    /* lagging stores: a second output buffer */
    return pfvm__acl_conv_bytes(p, oct, oh, ow, icc) + (p->lag ? pfvm__acl_al(oct * oh * cols * 4) : 0);
}

/* Chooses the tile (output channels, rows, columns, input channels per
 * step over dims: batch, group, output channels, rows, columns) and its
 * order that the cost model (pfvm__acl_conv_wave on the Conv tile fit
 * gives) finds fastest among those that fit a PE (each extent its size
 * halved 0, 1, 2... times): one search for a Conv alone and for a Conv
 * running a MaxPool in its tiles. Sets p's oct, th, tw (the Conv tile's),
 * icc, rows and cost, and out[0..1] (when not NULL) to the tiled output's
 * rows and columns; returns the cycles, or -1 when no tile fits. */
static double pfvm__acl_conv_search(const pfvm_accel_ctx *c, pfvm__acl_conv_plan *p, const int64_t *dims, int *x_major,
                                    pfvm__acl_conv_fit_fn fit, void *user, int64_t *out)
{
    int64_t oct, oh, ow, icc, th, tw;
    double best = -1;
    int order, rows, can_rows = p->rows, best_rows = 0, lag, best_lag = 0;
    for (lag = 0; lag <= 1; lag++)
    for (rows = 0; rows <= can_rows; rows++)
    for (oct = p->OCg;; oct = (oct + 1) / 2) {
        p->rows = rows, p->lag = lag;
        for (oh = dims[3];; oh = (oh + 1) / 2) {
            for (ow = dims[4];; ow = (ow + 1) / 2) {
                for (icc = p->Cg;; icc = (icc + 1) / 2) {
                    if (fit(c, p, oct, oh, ow, icc, &th, &tw, user) <= c->pe_mem) {
                        int64_t nb = (dims[2] + oct - 1) / oct;
                        int64_t nhw = ((dims[3] + oh - 1) / oh) * ((dims[4] + ow - 1) / ow);
                        int64_t tiles = dims[0] * dims[1] * nb * nhw;
                        for (order = 0; order < 3; order++) {
                            /* order 2: the output channels outside the
                             * batch, which then counts as spatial tiles */
                            int64_t sp = order == 2 ? nhw * dims[0] : nhw;
                            double cost;
                            if (order == 2 && dims[0] == 1)
                                continue; /* order 0 */
                            if (lag && tiles <= c->pes)
                                break; /* lagging stores: only behind a full wave */
                            cost = pfvm__acl_conv_waves(c, p, tiles, oct, th, tw, icc, order == 1, nb, sp);
                            /* the rows plan's estimate is the rougher (its
                             * dropped columns, a load per tap): it must win
                             * clearly */
                            if (rows && !best_rows)
                                cost *= 1.25;
                            if (best < 0 || cost < best) {
                                best = cost;
                                p->oct = oct, p->th = th, p->tw = tw, p->icc = icc;
                                if (out)
                                    out[0] = oh, out[1] = ow;
                                *x_major = order;
                                best_rows = rows, best_lag = lag;
                            }
                        }
                        break; /* fewer input channels per step only cost more */
                    }
                    if (icc == 1)
                        break;
                }
                if (ow == 1)
                    break;
            }
            if (oh == 1)
                break;
        }
        if (oct == 1)
            break;
    }
    p->rows = best_rows, p->lag = best_lag;
    p->cost = best;
    return best;
}

/* The rows plan's compute: out [th][oct][bw] = sum over taps of the tap's
 * weights [oct][icn] times the box's rows shifted by the tap. */
static pfvm_code pfvm__acl_conv_rows_body(pfvm_accel_ctx *c, const pfvm__acl_conv_plan *p, int64_t oct, int64_t th,
                                          int64_t bh, int64_t bw)
{
    int64_t r, kh, kw;
    pfvm_code rc;
    (void)bh;
    for (r = 0; r < th; r++) {
        long long d = (long long)(p->out + r * oct * bw * 4);
        for (kh = 0; kh < p->w.k[0]; kh++)
            for (kw = 0; kw < p->w.k[1]; kw++) {
                int64_t tap = kh * p->w.k[1] + kw;
                if ((rc = c->emit(c, "%s %lld %lld %lld %lld %lld %lld 0", p->first && !tap ? "gemm" : "gemma", d,
                                  (long long)(p->wb + tap * oct * p->icn * 4),
                                  (long long)(p->xb + ((r + kh * p->w.d[0]) * p->icn * bw + kw * p->w.d[1]) * 4),
                                  (long long)oct, (long long)bw, (long long)p->icn)) != PFVM_OK)
                    return rc;
            }
        if (p->last && p->bias &&
            (rc = c->emit(c, "row add %lld %lld %lld %lld %lld", d, d, (long long)p->bb, (long long)oct,
                          (long long)bw)) != PFVM_OK)
            return rc;
    }
    if (p->last && p->res && (rc = c->res(c, p->out, p->rb, oct * th * bw)) != PFVM_OK)
        return rc;
    if (p->last && c->post)
        return c->post(c, p->out, oct * th * bw);
    return PFVM_OK;
}

static pfvm_code pfvm__acl_conv_deint_body(pfvm_accel_ctx *c, const pfvm__acl_conv_plan *p, int64_t oct, int64_t th,
                                           int64_t tw, int64_t bh, int64_t bw);
static pfvm_code pfvm__acl_conv_gemm(pfvm_accel_ctx *c, const pfvm__acl_conv_plan *p, int64_t b, int64_t oct,
                                     int64_t n);

static pfvm_code pfvm__acl_conv_body(pfvm_accel_ctx *c, const pfvm__acl_tile *t, void *user)
{
    const pfvm__acl_conv_plan *p = (const pfvm__acl_conv_plan *)user;
    int64_t oct = t->e[2], th = t->e[3], tw = t->e[4], bh, bw, h0, w0, ci, kh, kw, b = p->col;
    pfvm_code rc;
    pfvm__acl_box(&p->w, 0, 0, th, &h0, &bh);
    pfvm__acl_box(&p->w, 1, 0, tw, &w0, &bw);
    if (p->rows)
        return pfvm__acl_conv_rows_body(c, p, oct, th, bh, bw);
    if (p->direct)
        b = p->xb;
    else if (pfvm__acl_conv_deint(p, th, tw) && pfvm__acl_conv_deint(p, p->th, p->tw)) /* its buffer is the full tile's */
        return pfvm__acl_conv_deint_body(c, p, oct, th, tw, bh, bw);
    else
        for (ci = 0; ci < p->icn; ci++)
            for (kh = 0; kh < p->w.k[0]; kh++)
                for (kw = 0; kw < p->w.k[1]; kw++) {
                    int64_t row = (ci * p->w.k[0] + kh) * p->w.k[1] + kw;
                    if ((rc = c->emit(c, "mov %lld %lld %lld %lld %lld 1 %lld %lld",
                                      (long long)(p->col + row * th * tw * 4),
                                      (long long)(p->xb + ((ci * bh + kh * p->w.d[0]) * bw + kw * p->w.d[1]) * 4),
                                      (long long)th, (long long)tw, (long long)tw, (long long)(p->w.s[0] * bw),
                                      (long long)p->w.s[1])) != PFVM_OK)
                        return rc;
                }
    return pfvm__acl_conv_gemm(c, p, b, oct, th * tw);
}

/* The im2col of a strided tile through the split box (pfvm__acl_conv_deint):
 * one `mov` per phase of columns for all the step's channels, then each
 * tap's gather reads contiguous columns of one phase. */
static pfvm_code pfvm__acl_conv_deint_body(pfvm_accel_ctx *c, const pfvm__acl_conv_plan *p, int64_t oct, int64_t th,
                                           int64_t tw, int64_t bh, int64_t bw)
{
    int64_t s = p->w.s[1], hw = (bw + s - 1) / s, ph, ci, kh, kw;
    pfvm_code rc;
    for (ph = 0; ph < s && ph < bw; ph++)
        if ((rc = c->emit(c, "mov %lld %lld %lld %lld %lld 1 %lld %lld", (long long)(p->ph + ph * hw * 4),
                          (long long)(p->xb + ph * 4), (long long)(p->icn * bh), (long long)((bw - ph + s - 1) / s),
                          (long long)(s * hw), (long long)bw, (long long)s)) != PFVM_OK)
            return rc;
    for (ci = 0; ci < p->icn; ci++)
        for (kh = 0; kh < p->w.k[0]; kh++)
            for (kw = 0; kw < p->w.k[1]; kw++) {
                int64_t row = (ci * p->w.k[0] + kh) * p->w.k[1] + kw, col = kw * p->w.d[1];
                if ((rc = c->emit(c, "mov %lld %lld %lld %lld %lld 1 %lld 1", (long long)(p->col + row * th * tw * 4),
                                  (long long)(p->ph + (((ci * bh + kh * p->w.d[0]) * s + col % s) * hw + col / s) * 4),
                                  (long long)th, (long long)tw, (long long)tw, (long long)(p->w.s[0] * s * hw))) !=
                    PFVM_OK)
                    return rc;
            }
    return pfvm__acl_conv_gemm(c, p, p->col, oct, th * tw);
}

/* The tile's gemm (B at b: its im2col or the box itself), then on the
 * last step its bias, residual and activation. */
static pfvm_code pfvm__acl_conv_gemm(pfvm_accel_ctx *c, const pfvm__acl_conv_plan *p, int64_t b, int64_t oct,
                                     int64_t n)
{
    pfvm_code rc;
    if ((rc = c->emit(c, "%s %lld %lld %lld %lld %lld %lld 0", p->first ? "gemm" : "gemma", (long long)p->out,
                      (long long)p->wb, (long long)b, (long long)oct, (long long)n, (long long)(p->icn * p->kk))) !=
        PFVM_OK)
        return rc;
    if (p->last && p->bias &&
        (rc = c->emit(c, "row add %lld %lld %lld %lld %lld", (long long)p->out, (long long)p->out, (long long)p->bb,
                      (long long)oct, (long long)n)) != PFVM_OK)
        return rc;
    if (p->last && p->res && (rc = c->res(c, p->out, p->rb, oct * n)) != PFVM_OK)
        return rc;
    if (p->last && c->post)
        return c->post(c, p->out, oct * n);
    return PFVM_OK;
}

/* Box width of a tile of tw output columns. */
static int64_t pfvm__acl_conv_bw(const pfvm__acl_conv_plan *p, int64_t tw)
{
    return (tw - 1) * p->w.s[1] + (p->w.k[1] - 1) * p->w.d[1] + 1;
}

/* Loads a tile's weights (oct output channels from root byte src, the
 * step's input channels): [oct][icn * kk] as stored, or for the rows plan
 * [tap][oct][icn], one load per tap. */
static pfvm_code pfvm__acl_conv_load_w(pfvm_accel_ctx *c, pfvm__acl_q *q, const pfvm__acl_conv_plan *p, int64_t pe,
                                       int64_t oct, int64_t src)
{
    int64_t tap;
    pfvm_code rc;
    if (!p->rows)
        return pfvm__acl_load(c, q, pe, p->wb, src, 1, oct, p->icn * p->kk, 0, p->icn * p->kk, 0, p->Cg * p->kk);
    for (tap = 0; tap < p->kk; tap++)
        if ((rc = pfvm__acl_load(c, q, pe, p->wb + tap * oct * p->icn * 4, src + tap * 4, oct, p->icn, 1, p->icn, 1,
                                 p->Cg * p->kk, p->kk)) != PFVM_OK)
            return rc;
    return PFVM_OK;
}

/* Conv: tiles over (batch, group, output channels, output rows, output
 * columns); each tile's input channels come in chunks accumulated by
 * gemma, so that neither the box nor the weights need to fit whole. */
/* Before input-channel chunk j: the chunk's channels; the box's padding
 * is filled on the first chunk only, except in the rows plan (whose box
 * moves its padding with the chunk's channels). */
static void pfvm__acl_conv_chunk(void *user, int64_t j, int64_t nchunks)
{
    pfvm__acl_conv_plan *p = (pfvm__acl_conv_plan *)user;
    p->ic0 = j * p->icc;
    p->icn = p->Cg - p->ic0 < p->icc ? p->Cg - p->ic0 : p->icc;
    p->first = j == 0;
    p->last = j == nchunks - 1;
    p->j = j, p->nch = nchunks;
}

/* Selects the output buffer of wave parity `parity` (lagging stores). */
static void pfvm__acl_conv_flip(void *user, int parity)
{
    pfvm__acl_conv_plan *p = (pfvm__acl_conv_plan *)user;
    p->out = p->obuf[parity != 0];
}

/* The residual operand's box of tile t (pfvm_accel_ctx.res) at rb, laid
 * out like the output tile (the rows plan's dropped columns filled, q[5],
 * so that the consumer reads only written bytes). */
static pfvm_code pfvm__acl_conv_load_res(pfvm_accel_ctx *c, pfvm__acl_q *q, const pfvm__acl_conv_plan *p,
                                         const pfvm__acl_tile *t, int64_t pe)
{
    int64_t oc = t->o[1] * p->OCg + t->o[2], bw = pfvm__acl_conv_bw(p, t->e[4]);
    int64_t src = c->res_dram + (((t->o[0] * p->OC + oc) * p->w.out[0] + t->o[3]) * p->w.out[1] + t->o[4]) * 4;
    pfvm_code rc;
    if (p->rows && bw > t->e[4]) {
        int64_t f[2];
        f[0] = p->rb, f[1] = t->e[2] * t->e[3] * bw;
        if ((rc = pfvm__acl_queue(c, &q[5], pe, f, 2, "0")) != PFVM_OK)
            return rc;
    }
    return pfvm__acl_load(c, &q[2], pe, p->rb, src, t->e[2], t->e[3], t->e[4], p->rows ? bw : t->e[3] * t->e[4],
                          p->rows ? t->e[2] * bw : t->e[4], p->w.out[0] * p->w.out[1], p->w.out[1]);
}

/* A tile's fills (q[3]: padding, q[4]: the rows plan's slack read past
 * the box by its last tap), its input box (q[0]), weights (q[1]) and
 * bias (q[2], first chunk). */
static pfvm_code pfvm__acl_conv_load(pfvm_accel_ctx *c, pfvm__acl_q *q, const pfvm__acl_tile *t, int64_t pe, void *user)
{
    const pfvm__acl_conv_plan *p = (const pfvm__acl_conv_plan *)user;
    const pfvm_accel_arg *x = &c->in[0], *wt = &c->in[1];
    const pfvm_accel_arg *b = c->n_in > 2 && c->in[2].rank >= 0 ? &c->in[2] : NULL;
    int64_t g = t->o[1], oc = g * p->OCg + t->o[2];
    int64_t src = x->dram + ((t->o[0] * p->C + g * p->Cg + p->ic0) * p->w.in[0] * p->w.in[1]) * 4;
    pfvm_code rc;
    if (p->first || (p->rows && p->icn != p->icc)) { /* equal chunks keep the padding where it was */
        int64_t f[2], bh, bw, h0, w0;
        if ((rc = pfvm__acl_load_box2(c, &q[3], &p->w, pe, p->xb, 0, p->icn, t->o[3], t->e[3], t->o[4], t->e[4], "0",
                                      1, p->rows)) != PFVM_OK)
            return rc;
        pfvm__acl_box(&p->w, 0, 0, t->e[3], &h0, &bh);
        pfvm__acl_box(&p->w, 1, 0, t->e[4], &w0, &bw);
        f[0] = p->xb + p->icn * bh * bw * 4, f[1] = pfvm__acl_conv_slack(p);
        if (f[1] && (rc = pfvm__acl_queue(c, &q[4], pe, f, 2, "0")) != PFVM_OK)
            return rc;
    }
    if ((rc = pfvm__acl_load_box2(c, &q[0], &p->w, pe, p->xb, src, p->icn, t->o[3], t->e[3], t->o[4], t->e[4], "0", 0,
                                  p->rows)) != PFVM_OK ||
        (rc = pfvm__acl_conv_load_w(c, &q[1], p, pe, t->e[2], wt->dram + (oc * p->Cg + p->ic0) * p->kk * 4)) != PFVM_OK)
        return rc;
    if (p->first && b && (rc = pfvm__acl_load(c, &q[2], pe, p->bb, b->dram + oc * 4, 1, 1, t->e[2], 0, 0, 0, 0)) != PFVM_OK)
        return rc;
    /* the residual boxes spread over the steps, the links' load with them */
    return p->res && pe % p->nch == p->j ? pfvm__acl_conv_load_res(c, q, p, t, pe) : PFVM_OK;
}

static pfvm_code pfvm__acl_conv_store(pfvm_accel_ctx *c, const pfvm__acl_tile *t, int64_t pe, void *user)
{
    const pfvm__acl_conv_plan *p = (const pfvm__acl_conv_plan *)user;
    int64_t oc = t->o[1] * p->OCg + t->o[2];
    int64_t dst = c->out[0].dram + (((t->o[0] * p->OC + oc) * p->w.out[0] + t->o[3]) * p->w.out[1] + t->o[4]) * 4;
    return pfvm__acl_store(c, pe, dst, p->out, t->e[2], t->e[3], t->e[4], p->w.out[0] * p->w.out[1], p->w.out[1],
                           p->rows ? pfvm__acl_conv_bw(p, t->e[4]) : t->e[3] * t->e[4],
                           p->rows ? t->e[2] * pfvm__acl_conv_bw(p, t->e[4]) : t->e[4]);
}

/* ---- inverted residual chain: 1x1 expand -> depthwise -> 1x1 project, per output tile ----
 *
 * A 1x1 Conv whose output (past its activation) feeds a depthwise Conv
 * whose output feeds a 1x1 Conv (pfvm_accel_ctx.chain: mobilenet_v2's
 * blocks) runs the three in one tiling of the projection's output, so
 * that the expanded tensor and the depthwise output never go to the root
 * memory. Per tile the PE loads the input box with the depthwise halo
 * once; per chunk of expanded channels it expands the box (gemm, bias,
 * activation), zeroes the box's positions in the depthwise padding (this
 * tile's class), runs the depthwise taps as 1x1 gemms over the box's full
 * width (the rows plan's trick: the columns past the tile are computed and
 * dropped), compacts the kept outputs, applies the depthwise's bias and
 * activation and accumulates the projection with gemma; the last chunk
 * adds the projection's bias, activation and residual and stores. */

static double pfvm__acl_conv_cost(const pfvm_accel_ctx *c, const pfvm_accel_ctx *d);

typedef struct pfvm__acl_ir_plan {
    pfvm__acl_win w; /* the depthwise window, over x's spatial dims */
    int64_t N, Cin, E, OC, kk, th, tw, ec, oct, zlen, slack;
    int64_t xb, we, be, ex, wd, bd, acc, wp, bp, out, rb, zb, rx; /* PE byte offsets */
    int64_t e0, en; /* the chunk of expanded channels, from the start of the tile's part */
    /* parts: the expanded channels split over that many neighbouring PEs
     * (ep each, tile axis 1): each part's PE accumulates its share of the
     * projection, the others copy theirs to the part 0 PE (at rx), which
     * adds them, applies the projection's bias, activation and residual
     * and stores; the first `rounds` steps of that reduction are a tree
     * (pfvm__acl_ir_finish) */
    int64_t parts, ep, rounds;
    /* lagging stores (pfvm__acl_waves.flip): the output tile in two
     * buffers, obuf[wave parity], so that a wave's stores cross the links
     * while the next wave computes (with more than one wave) */
    int lag;
    int64_t obuf[2];
    int first, last, res;
    int noexp;   /* no expansion: the chain starts at the depthwise Conv (mobilenet_v2's first block) */
    /* stem: the expansion is a Conv with a window (mobilenet_v2's 3x3/2
     * stem before its first block): the PE loads the raw box of x (Cin
     * planes of ibh x ibw, at raw; xw composes the two windows) and
     * im2cols it into xb ([K = Cin * ks][bh * bw]) on the first chunk;
     * a 1x1 expansion has K = Cin and multiplies the box directly */
    int stem;
    pfvm__acl_win sw, xw;
    int64_t K, ks, raw;
    double cost; /* the cost model's cycles for the chosen tile */
    const pfvm_accel_arg *b_e, *b_d, *b_p;
    pfvm_accel_ctx *dw, *pj;
} pfvm__acl_ir_plan;

static const pfvm_accel_arg *pfvm__acl_bias_arg(const pfvm_accel_ctx *c)
{
    return c->n_in > 2 && c->in[2].rank == 1 ? &c->in[2] : NULL;
}

/* Whether ctx d is a Conv of `group` groups whose weight is [oc][ic][k][k'] over its input of ic * group channels. */
static int pfvm__acl_ir_conv(const pfvm_accel_ctx *d, int64_t group, int64_t oc)
{
    const pfvm_accel_arg *x = &d->in[0], *w = &d->in[1], *b = d->n_in > 2 && d->in[2].rank >= 0 ? &d->in[2] : NULL;
    return !strcmp(d->node->op_type, "Conv") && !d->node->op->domain[0] && d->n_in >= 2 && x->rank == 4 &&
           w->rank == 4 && d->out[0].rank == 4 && pfvm_node_attr_int(d->node, "group", 1) == group &&
           w->dims[0] == oc && w->dims[1] * group == x->dims[1] && d->out[0].dims[1] == oc &&
           (!b || (b->rank == 1 && b->dims[0] == oc));
}

/* Whether Conv ctx d is a 1x1 Conv without stride, dilation or pads. */
static int pfvm__acl_ir_pointwise(pfvm_accel_ctx *d, pfvm__acl_win *w)
{
    return pfvm__acl_window(d, &d->in[0], &d->out[0], d->in[1].dims + 2, w) == PFVM_OK && w->k[0] == 1 &&
           w->k[1] == 1 && w->s[0] == 1 && w->s[1] == 1 && !w->pad0[0] && !w->pad0[1] && !w->pad1[0] && !w->pad1[1];
}

static int64_t pfvm__acl_ir_bh(const pfvm__acl_ir_plan *p, int64_t th)
{
    return (th - 1) * p->w.s[0] + (p->w.k[0] - 1) * p->w.d[0] + 1;
}

static int64_t pfvm__acl_ir_bw(const pfvm__acl_ir_plan *p, int64_t tw)
{
    return (tw - 1) * p->w.s[1] + (p->w.k[1] - 1) * p->w.d[1] + 1;
}

/* The raw box of x along axis ax behind an expanded box of b positions
 * (the stem's window; b itself for a 1x1 expansion). */
static int64_t pfvm__acl_ir_ib(const pfvm__acl_ir_plan *p, int ax, int64_t b)
{
    return p->stem ? (b - 1) * p->sw.s[ax] + (p->sw.k[ax] - 1) * p->sw.d[ax] + 1 : b;
}

/* Elements of the depthwise accumulator per channel: the computed rows at the box's full width. */
static int64_t pfvm__acl_ir_n(const pfvm__acl_ir_plan *p, int64_t th, int64_t tw)
{
    return ((th - 1) * p->w.s[0] + 1) * pfvm__acl_ir_bw(p, tw);
}

/* Zeros the padding rows/columns of the expanded box need (the widest band). */
static int64_t pfvm__acl_ir_zlen(const pfvm__acl_ir_plan *p, int64_t th, int64_t tw)
{
    int64_t bh = pfvm__acl_ir_bh(p, th), bw = pfvm__acl_ir_bw(p, tw);
    int64_t rows = p->w.pad0[0] > p->w.pad1[0] ? p->w.pad0[0] : p->w.pad1[0];
    int64_t cols = p->w.pad0[1] > p->w.pad1[1] ? p->w.pad0[1] : p->w.pad1[1], z;
    z = (rows < bh ? rows : bh) * bw;
    if (cols > z)
        z = cols;
    return z > 0 ? z : 1;
}

/* PE bytes of a tile (and, when lay, its offsets into p). */
static int64_t pfvm__acl_ir_bytes(pfvm__acl_ir_plan *p, int64_t oct, int64_t th, int64_t tw, int64_t ec, int lay)
{
    int64_t bh = pfvm__acl_ir_bh(p, th), bw = pfvm__acl_ir_bw(p, tw), top = 0, o[15], i;
    int64_t sz[15];
    sz[0] = p->noexp ? 0 : p->K * bh * bw, sz[1] = p->noexp ? 0 : ec * p->K, sz[2] = p->noexp ? 0 : ec;
    sz[3] = ec * bh * bw + p->slack, sz[4] = ec * p->kk;
    sz[5] = ec, sz[6] = ec * pfvm__acl_ir_n(p, th, tw), sz[7] = oct * ec, sz[8] = oct, sz[9] = oct * th * tw;
    sz[10] = p->res ? oct * th * tw : 0, sz[11] = pfvm__acl_ir_zlen(p, th, tw);
    /* the sums received: one per part left after the tree rounds, or one for the rounds */
    sz[12] = (p->parts >> p->rounds) > 2 ? ((p->parts >> p->rounds) - 1) * oct * th * tw
                                          : p->parts > 1 ? oct * th * tw : 0;
    sz[13] = p->stem ? p->Cin * pfvm__acl_ir_ib(p, 0, bh) * pfvm__acl_ir_ib(p, 1, bw) : 0;
    sz[14] = p->lag ? oct * th * tw : 0;
    for (i = 0; i < 15; i++) {
        o[i] = top;
        top += pfvm__acl_al(sz[i] * 4);
    }
    if (lay) {
        p->xb = o[0], p->we = o[1], p->be = o[2], p->ex = o[3], p->wd = o[4], p->bd = o[5], p->acc = o[6];
        p->wp = o[7], p->bp = o[8], p->out = o[9], p->rb = o[10], p->zb = o[11], p->rx = o[12];
        p->raw = o[13];
        p->obuf[0] = o[9], p->obuf[1] = p->lag ? o[14] : o[9];
    }
    return top;
}

/* Cycles of the parts' reduction in a wave of m tiles (each tile's
 * output out bytes, vec cycles per vector pass over it) by the
 * simulator's cost model: `rounds` tree phases (half the remaining parts
 * copy their sums to a neighbour at distance step, which adds them: a
 * link whose instances hold no more PEs than step carries one sum each
 * way per instance), then one phase in which the parts left copy their
 * sums to the part 0 PE (a link whose instance holds fewer PEs than the
 * parts carries the others' sums in and its own out), which adds them,
 * applies the epilogue and stores. The rounds are counted in one maximum
 * with the stores, though the simulator runs each as a phase of its own:
 * optimistic by a few hundred cycles per chain, but the plans it picks
 * win in the simulator (mobilenet_v2, bench/accel.md round 11). */
static double pfvm__acl_ir_red_cost(const pfvm_accel_ctx *c, const pfvm__acl_ir_plan *p, int64_t m, double out,
                                    double vec, int64_t rounds)
{
    double red = 0, stores = 0;
    int64_t step, T = (int64_t)1 << rounds, left = p->parts / T;
    int k;
    for (step = 1; step < T; step *= 2) {
        double r = vec;
        for (k = 0; k < c->nlinks; k++)
            if (c->link_pes[k] <= step) {
                if (out / c->link_down[k] > r)
                    r = out / c->link_down[k];
                if (out / c->link_up[k] > r)
                    r = out / c->link_up[k];
            }
        red += r + 1;
    }
    for (k = 0; k < c->nlinks && left > 1; k++)
        if (c->link_pes[k] < p->parts) {
            /* the senders left in one instance of link k (spaced T apart) */
            int64_t here = c->link_pes[k] / T > 1 ? c->link_pes[k] / T : 1;
            double in = (double)(left - here) * out / c->link_down[k];
            double from = (double)here * out / c->link_up[k];
            if (in > red)
                red = in;
            if (from > red)
                red = from;
        }
    red += (double)(left > 1 ? left + 2 : 2) * vec;
    for (k = 0; k < c->nlinks; k++) {
        int64_t mk = pfvm__acl_first(c, m, k);
        double u = (double)((mk + p->parts - 1) / p->parts) * out / c->link_up[k];
        if (u > stores)
            stores = u;
    }
    return (red > stores ? red : stores) + 1;
}

/* PE cycles of a chunk of ec expanded channels of a tile (oct x th x tw
 * outputs): the expansion, the depthwise taps over the box's full width,
 * the compaction, the depthwise's bias and activation and the
 * projection's gemm. */
static double pfvm__acl_ir_compute(const pfvm_accel_ctx *c, const pfvm__acl_ir_plan *p, int64_t oct, int64_t th,
                                   int64_t tw, int64_t ec)
{
    int64_t bh = pfvm__acl_ir_bh(p, th), bw = pfvm__acl_ir_bw(p, tw), simd = c->simd > 0 ? c->simd : 1;
    return (p->noexp ? 0
                     : ceil((double)(ec * bh * bw) * (double)p->K / c->macs) +
                           2.0 * (double)(ec * bh * bw) / (double)simd) +
           (double)(ec * p->kk) * ceil((double)pfvm__acl_ir_n(p, th, tw) / c->macs) +
           (double)(ec * th) * (double)((tw + simd - 1) / simd) + 2.0 * (double)(ec * th * tw) / (double)simd +
           ceil((double)(oct * th * tw) * (double)ec / c->macs);
}

/* Cycles of one wave of m tiles by the simulator's cost model: one phase
 * per chunk of expanded channels (the first also loads the boxes, the
 * last loads the residual and stores), the chunk's weights shared by all
 * tiles, the box by the tiles of one spatial position (noc of them). */
static double pfvm__acl_ir_wave(const pfvm_accel_ctx *c, const pfvm__acl_ir_plan *p, int64_t m, int64_t oct,
                                int64_t th, int64_t tw, int64_t ec, int64_t noc)
{
    int64_t bh = pfvm__acl_ir_bh(p, th), bw = pfvm__acl_ir_bw(p, tw), simd = c->simd > 0 ? c->simd : 1;
    int64_t nch = (p->ep + ec - 1) / ec, j, sh = noc * p->parts;
    double box = (double)((p->noexp ? ec : p->Cin) * pfvm__acl_ir_ib(p, 0, bh) * pfvm__acl_ir_ib(p, 1, bw) * 4);
    double out = (double)(oct * th * tw * 4);
    /* the expansion's and the depthwise's weights and biases (a part's,
     * whatever the output block), the projection's slice (one block's) */
    double wpart = (double)(ec * ((p->noexp ? 0 : p->K + 1) + p->kk + 1)) * 4, wts = (double)(oct * ec) * 4;
    double compute, total = 0;
    /* the stem's im2col (first chunk): K strided rows per box row, one element per cycle */
    double col = p->stem ? (double)(p->K * bh) * (double)(p->sw.s[1] > 1 ? bw : (bw + simd - 1) / simd) : 0;
    compute = pfvm__acl_ir_compute(c, p, oct, th, tw, ec);
    for (j = 0; j < nch; j++) {
        double down = 0, up = 0, phase;
        int k;
        for (k = 0; k < c->nlinks; k++) {
            int64_t mk = pfvm__acl_first(c, m, k);
            /* a box is shared by the sh tiles of one position (each part
             * its own channels of it without expansion), a projection
             * slice by the tiles of one output block and part, the other
             * weights by the tiles of one part */
            double boxes = c->link_bcast[k] ? (double)((mk + sh - 1) / sh) : (double)mk;
            double slices = c->link_bcast[k] ? (double)(mk < sh ? mk : sh) : (double)mk;
            double pslices = c->link_bcast[k] ? (double)(mk < p->parts ? mk : p->parts) : (double)mk;
            if (p->noexp && c->link_bcast[k])
                boxes *= (double)(mk < p->parts ? mk : p->parts);
            /* the residual box: only each tile's part 0 loads it */
            double bytes = slices * wts + pslices * wpart + (j == 0 || p->noexp ? boxes * box : 0) +
                           (j == nch - 1 && p->res ? (double)((mk + p->parts - 1) / p->parts) * out : 0);
            if (bytes / c->link_down[k] > down)
                down = bytes / c->link_down[k];
            if (j == nch - 1 && mk * out / c->link_up[k] > up)
                up = mk * out / c->link_up[k];
        }
        phase = down > compute + (j ? 0 : col) ? down : compute + (j ? 0 : col);
        total += (p->parts > 1 || phase > up ? phase : up) + 1;
    }
    if (p->parts > 1)
        total += pfvm__acl_ir_red_cost(c, p, m, out, (double)((oct * th * tw + simd - 1) / simd), p->rounds);
    return total;
}

/* A tile the search keeps (pfvm__acl_ir_search): its estimate and shape. */
typedef struct pfvm__acl_ir_cand {
    double cost;
    int64_t parts, rounds, oct, th, tw, ec;
} pfvm__acl_ir_cand;

#define PFVM__ACL_IR_TOP 32

/* Sets p's tile to candidate x (its cost the estimate). */
static void pfvm__acl_ir_take(pfvm__acl_ir_plan *p, const pfvm__acl_ir_cand *x)
{
    p->parts = x->parts, p->ep = p->E / x->parts, p->rounds = x->rounds;
    p->oct = x->oct, p->th = x->th, p->tw = x->tw, p->ec = x->ec;
    p->cost = x->cost;
    p->lag = 0;
}

/* Inserts candidate x into top[0..*n) (sorted by estimate, at most PFVM__ACL_IR_TOP). */
static void pfvm__acl_ir_keep(pfvm__acl_ir_cand *top, int *n, const pfvm__acl_ir_cand *x)
{
    int i = *n < PFVM__ACL_IR_TOP ? (*n)++ : PFVM__ACL_IR_TOP;
    for (; i > 0 && top[i - 1].cost > x->cost; i--)
        if (i < PFVM__ACL_IR_TOP)
            top[i] = top[i - 1];
    if (i < PFVM__ACL_IR_TOP)
        top[i] = *x;
}

/* The chain's tiles for p's tile (pfvm__acl_ir_tiles). */
static int64_t pfvm__acl_ir_count(const pfvm__acl_ir_plan *p)
{
    return p->N * ((p->OC + p->oct - 1) / p->oct) * ((p->w.out[0] + p->th - 1) / p->th) *
           ((p->w.out[1] + p->tw - 1) / p->tw) * p->parts;
}

/* The cheapest tiles by the estimate (output channels, rows, columns,
 * expanded channels per chunk: each its extent halved 0, 1, 2...
 * times) that fit a PE, best first in top[0..*ntop) (p set to the
 * first); 0 when none fits. */
static int pfvm__acl_ir_search(const pfvm_accel_ctx *c, pfvm__acl_ir_plan *p, pfvm__acl_ir_cand *top, int *ntop)
{
    int64_t oct, th, tw, ec, OH = p->w.out[0], OW = p->w.out[1], parts;
    *ntop = 0;
    /* parts of the expanded channels: 1, 2, 4 ... (dividing them and the
     * PEs, so that a wave holds every part of its tiles); no cap of its
     * own: past a MAB's or an L1B's PEs the reduction's copies cross
     * slower links, which its cost counts (mobilenet_v2's 14 x 14 and
     * 7 x 7 blocks take 32 parts at batch 8) */
    for (parts = 1; c->pes % parts == 0 && p->E % parts == 0; parts *= 2) {
    int64_t r;
    p->parts = parts, p->ep = p->E / parts;
    /* the reduction's tree rounds: 0 (every part sends to the first) up
     * to log2(parts) (fewer sums held at once) */
    for (r = 0; ((int64_t)1 << r) <= parts; r++) {
    p->rounds = r;
    for (oct = p->OC;; oct = (oct + 1) / 2) {
        for (th = OH;; th = (th + 1) / 2) {
            for (tw = OW;; tw = (tw + 1) / 2) {
                for (ec = p->ep;; ec = (ec + 1) / 2) {
                    if (pfvm__acl_ir_bytes(p, oct, th, tw, ec, 0) <= c->pe_mem) {
                        int64_t noc = (p->OC + oct - 1) / oct;
                        int64_t tiles = p->N * noc * ((OH + th - 1) / th) * ((OW + tw - 1) / tw) * parts;
                        pfvm__acl_ir_cand x;
                        x.cost = (double)(tiles / c->pes) * pfvm__acl_ir_wave(c, p, c->pes, oct, th, tw, ec, noc);
                        if (tiles % c->pes)
                            x.cost += pfvm__acl_ir_wave(c, p, tiles % c->pes, oct, th, tw, ec, noc);
                        x.parts = parts, x.rounds = r, x.oct = oct, x.th = th, x.tw = tw, x.ec = ec;
                        pfvm__acl_ir_keep(top, ntop, &x);
                        break; /* smaller chunks only cost more */
                    }
                    if (ec == 1)
                        break;
                }
                if (tw == 1)
                    break;
            }
            if (th == 1)
                break;
        }
        if (oct == 1)
            break;
    }
    if (parts == 1)
        break;
    }
    }
    if (*ntop)
        pfvm__acl_ir_take(p, &top[0]);
    return *ntop > 0;
}

/* The padding class of a tile: how many rows (top, bottom) and columns
 * (left, right) of its expanded box lie in the depthwise's padding, 16
 * bits each. */
static int64_t pfvm__acl_ir_cls(const pfvm__acl_ir_plan *p, const pfvm__acl_tile *t)
{
    int64_t v[4], r = 0;
    int ax, i;
    for (ax = 0; ax < 2; ax++) {
        int64_t first, size;
        pfvm__acl_box(&p->w, ax, t->o[3 + ax], t->e[3 + ax], &first, &size);
        v[2 * ax] = first < 0 ? (-first < size ? -first : size) : 0;
        v[2 * ax + 1] = first + size > p->w.in[ax] ? (first + size - p->w.in[ax] < size ? first + size - p->w.in[ax]
                                                                                         : size)
                                                   : 0;
    }
    for (i = 0; i < 4; i++)
        r |= v[i] << (16 * i);
    return r;
}

static void pfvm__acl_ir_chunk(void *user, int64_t j, int64_t nchunks)
{
    pfvm__acl_ir_plan *p = (pfvm__acl_ir_plan *)user;
    p->e0 = j * p->ec;
    p->en = p->ep - p->e0 < p->ec ? p->ep - p->e0 : p->ec;
    p->first = j == 0;
    p->last = j == nchunks - 1;
}

/* The expanded box's positions in the depthwise padding set to 0 (the
 * expansion of a zero input is its bias, through its activation). */
static pfvm_code pfvm__acl_ir_zero(pfvm_accel_ctx *c, const pfvm__acl_ir_plan *p, int64_t cls, int64_t bh, int64_t bw)
{
    int64_t pt = cls & 0xffff, pb = (cls >> 16) & 0xffff, pl = (cls >> 32) & 0xffff, pr = (cls >> 48) & 0xffff;
    long long ex = (long long)p->ex, zb = (long long)p->zb, en = (long long)p->en, hw = (long long)(bh * bw);
    pfvm_code rc;
    if (!cls)
        return PFVM_OK;
    if ((rc = c->emit(c, "fill %lld 0 %lld", zb, (long long)p->zlen)) != PFVM_OK ||
        (pt && (rc = c->emit(c, "mov %lld %lld %lld %lld %lld 1 0 1", ex, zb, en, (long long)(pt * bw), hw)) != PFVM_OK) ||
        (pb && (rc = c->emit(c, "mov %lld %lld %lld %lld %lld 1 0 1", ex + (long long)((bh - pb) * bw * 4), zb, en,
                             (long long)(pb * bw), hw)) != PFVM_OK) ||
        (pl && (rc = c->emit(c, "mov %lld %lld %lld %lld %lld 1 0 1", ex, zb, en * (long long)bh, (long long)pl,
                             (long long)bw)) != PFVM_OK) ||
        (pr && (rc = c->emit(c, "mov %lld %lld %lld %lld %lld 1 0 1", ex + (long long)((bw - pr) * 4), zb,
                             en * (long long)bh, (long long)pr, (long long)bw)) != PFVM_OK))
        return rc;
    return PFVM_OK;
}

static pfvm_code pfvm__acl_ir_epilogue(pfvm_accel_ctx *c, const pfvm__acl_ir_plan *p, int64_t oct, int64_t th,
                                       int64_t tw);

/* The stem's im2col: tap (ci, a, b) of the bh x bw expanded positions
 * gathered from the raw box into row ci * ks + a * kw + b of xb, one
 * strided `mov` each. */
static pfvm_code pfvm__acl_ir_im2col(pfvm_accel_ctx *c, const pfvm__acl_ir_plan *p, int64_t bh, int64_t bw)
{
    int64_t ibh = pfvm__acl_ir_ib(p, 0, bh), ibw = pfvm__acl_ir_ib(p, 1, bw), ci, a, b, row = 0;
    pfvm_code rc;
    for (ci = 0; ci < p->Cin; ci++)
        for (a = 0; a < p->sw.k[0]; a++)
            for (b = 0; b < p->sw.k[1]; b++, row++) {
                int64_t src = p->raw + ((ci * ibh + a * p->sw.d[0]) * ibw + b * p->sw.d[1]) * 4;
                if ((rc = c->emit(c, "mov %lld %lld %lld %lld %lld 1 %lld %lld", (long long)(p->xb + row * bh * bw * 4),
                                  (long long)src, (long long)bh, (long long)bw, (long long)bw,
                                  (long long)(p->sw.s[0] * ibw), (long long)p->sw.s[1])) != PFVM_OK)
                    return rc;
            }
    return PFVM_OK;
}

static pfvm_code pfvm__acl_ir_body(pfvm_accel_ctx *c, const pfvm__acl_tile *t, void *user)
{
    const pfvm__acl_ir_plan *p = (const pfvm__acl_ir_plan *)user;
    int64_t oct = t->e[2], th = t->e[3], tw = t->e[4], bh = pfvm__acl_ir_bh(p, th), bw = pfvm__acl_ir_bw(p, tw);
    int64_t n = pfvm__acl_ir_n(p, th, tw), hw = bh * bw, ch, kh, kw;
    pfvm_code rc;
    if (p->noexp) {
        if (p->slack && (rc = c->emit(c, "fill %lld 0 %lld", (long long)(p->ex + p->en * hw * 4),
                                      (long long)p->slack)) != PFVM_OK)
            return rc;
    } else if ((p->stem && p->first && (rc = pfvm__acl_ir_im2col(c, p, bh, bw)) != PFVM_OK) ||
               (rc = c->emit(c, "gemm %lld %lld %lld %lld %lld %lld 0", (long long)p->ex, (long long)p->we,
                             (long long)p->xb, (long long)p->en, (long long)hw, (long long)p->K)) != PFVM_OK ||
        (p->b_e && (rc = c->emit(c, "row add %lld %lld %lld %lld %lld", (long long)p->ex, (long long)p->ex,
                                 (long long)p->be, (long long)p->en, (long long)hw)) != PFVM_OK) ||
        (c->post && (rc = c->post(c, p->ex, p->en * hw)) != PFVM_OK) ||
        (rc = pfvm__acl_ir_zero(c, p, t->cls, bh, bw)) != PFVM_OK ||
        (p->slack && (rc = c->emit(c, "fill %lld 0 %lld", (long long)(p->ex + p->en * hw * 4), (long long)p->slack)) !=
                         PFVM_OK))
        return rc;
    for (ch = 0; ch < p->en; ch++)
        for (kh = 0; kh < p->w.k[0]; kh++)
            for (kw = 0; kw < p->w.k[1]; kw++) {
                int64_t tap = kh * p->w.k[1] + kw;
                if ((rc = c->emit(c, "%s %lld %lld %lld 1 %lld 1 0", tap ? "gemma" : "gemm",
                                  (long long)(p->acc + ch * n * 4), (long long)(p->wd + (ch * p->kk + tap) * 4),
                                  (long long)(p->ex + (ch * hw + kh * p->w.d[0] * bw + kw * p->w.d[1]) * 4),
                                  (long long)n)) != PFVM_OK)
                    return rc;
            }
    /* the kept outputs, compacted into the expanded box's place */
    for (ch = 0; ch < p->en; ch++)
        if ((rc = c->emit(c, "mov %lld %lld %lld %lld %lld 1 %lld %lld", (long long)(p->ex + ch * th * tw * 4),
                          (long long)(p->acc + ch * n * 4), (long long)th, (long long)tw, (long long)tw,
                          (long long)(p->w.s[0] * bw), (long long)p->w.s[1])) != PFVM_OK)
            return rc;
    if ((p->b_d && (rc = c->emit(c, "row add %lld %lld %lld %lld %lld", (long long)p->ex, (long long)p->ex,
                                 (long long)p->bd, (long long)p->en, (long long)(th * tw))) != PFVM_OK) ||
        (p->dw->post && (rc = p->dw->post(p->dw, p->ex, p->en * th * tw)) != PFVM_OK) ||
        (rc = c->emit(c, "%s %lld %lld %lld %lld %lld %lld 0", p->first ? "gemm" : "gemma", (long long)p->out,
                      (long long)p->wp, (long long)p->ex, (long long)oct, (long long)(th * tw), (long long)p->en)) !=
            PFVM_OK)
        return rc;
    if (!p->last || p->parts > 1)
        return PFVM_OK; /* the parts' sum finishes in pfvm__acl_ir_finish */
    return pfvm__acl_ir_epilogue(c, p, oct, th, tw);
}

/* The projection's bias, activation and residual on the tile's output. */
static pfvm_code pfvm__acl_ir_epilogue(pfvm_accel_ctx *c, const pfvm__acl_ir_plan *p, int64_t oct, int64_t th,
                                       int64_t tw)
{
    pfvm_code rc;
    if ((p->b_p && (rc = c->emit(c, "row add %lld %lld %lld %lld %lld", (long long)p->out, (long long)p->out,
                                 (long long)p->bp, (long long)oct, (long long)(th * tw))) != PFVM_OK) ||
        (p->pj->post && (rc = p->pj->post(p->pj, p->out, oct * th * tw)) != PFVM_OK))
        return rc;
    return p->res ? c->res(c, p->out, p->rb, oct * th * tw) : PFVM_OK;
}

/* A tile's loads: the input box with its halo (first chunk; q[3] fills
 * its padding), the chunk's weights and biases (shared by every tile),
 * the projection's bias (first chunk) and the residual box (last). */
static pfvm_code pfvm__acl_ir_load(pfvm_accel_ctx *c, pfvm__acl_q *q, const pfvm__acl_tile *t, int64_t pe, void *user)
{
    const pfvm__acl_ir_plan *p = (const pfvm__acl_ir_plan *)user;
    int64_t n0 = t->o[0], oc0 = t->o[2], oct = t->e[2], OH = p->w.out[0], OW = p->w.out[1];
    int64_t src = c->in[0].dram + n0 * p->Cin * c->in[0].dims[2] * c->in[0].dims[3] * 4, e0 = t->o[1] * p->ep + p->e0;
    int lead = t->o[1] == 0;
    pfvm_code rc;
    if (p->noexp) {
        src = c->in[0].dram + (n0 * p->E + e0) * p->w.in[0] * p->w.in[1] * 4;
        if ((rc = pfvm__acl_load_box(c, &q[3], &p->w, pe, p->ex, 0, p->en, t->o[3], t->e[3], t->o[4], t->e[4], "0",
                                     1)) != PFVM_OK ||
            (rc = pfvm__acl_load_box(c, &q[0], &p->w, pe, p->ex, src, p->en, t->o[3], t->e[3], t->o[4], t->e[4], "0",
                                     0)) != PFVM_OK)
            return rc;
    } else if (p->first) {
        /* the stem's raw box over x (the composed window), or the 1x1 expansion's box itself */
        const pfvm__acl_win *xw = p->stem ? &p->xw : &p->w;
        int64_t at = p->stem ? p->raw : p->xb;
        if ((rc = pfvm__acl_load_box(c, &q[3], xw, pe, at, 0, p->Cin, t->o[3], t->e[3], t->o[4], t->e[4], "0", 1)) !=
                PFVM_OK ||
            (rc = pfvm__acl_load_box(c, &q[0], xw, pe, at, src, p->Cin, t->o[3], t->e[3], t->o[4], t->e[4], "0", 0)) !=
                PFVM_OK)
            return rc;
    }
    if ((!p->noexp && (rc = pfvm__acl_load(c, &q[1], pe, p->we, c->in[1].dram + e0 * p->K * 4, 1, 1,
                                           p->en * p->K, 0, 0, 0, 0)) != PFVM_OK) ||
        (rc = pfvm__acl_load(c, &q[1], pe, p->wd, p->dw->in[1].dram + e0 * p->kk * 4, 1, 1, p->en * p->kk, 0, 0, 0,
                             0)) != PFVM_OK ||
        (rc = pfvm__acl_load(c, &q[1], pe, p->wp, p->pj->in[1].dram + (oc0 * p->E + e0) * 4, 1, oct, p->en, 0,
                             p->en, 0, p->E)) != PFVM_OK ||
        (p->b_e && (rc = pfvm__acl_load(c, &q[2], pe, p->be, p->b_e->dram + e0 * 4, 1, 1, p->en, 0, 0, 0, 0)) !=
                       PFVM_OK) ||
        (p->b_d && (rc = pfvm__acl_load(c, &q[2], pe, p->bd, p->b_d->dram + e0 * 4, 1, 1, p->en, 0, 0, 0, 0)) !=
                       PFVM_OK) ||
        (p->first && p->b_p && lead &&
         (rc = pfvm__acl_load(c, &q[2], pe, p->bp, p->b_p->dram + oc0 * 4, 1, 1, oct, 0, 0, 0, 0)) != PFVM_OK))
        return rc;
    if (p->last && p->res && lead)
        return pfvm__acl_load(c, &q[2], pe, p->rb, c->res_dram + ((n0 * p->OC + oc0) * OH * OW + t->o[3] * OW + t->o[4]) * 4,
                              oct, t->e[3], t->e[4], t->e[3] * t->e[4], t->e[4], OH * OW, OW);
    return PFVM_OK;
}

static pfvm_code pfvm__acl_ir_store(pfvm_accel_ctx *c, const pfvm__acl_tile *t, int64_t pe, void *user)
{
    const pfvm__acl_ir_plan *p = (const pfvm__acl_ir_plan *)user;
    int64_t OH = p->w.out[0], OW = p->w.out[1];
    int64_t dst = p->pj->out[0].dram + ((t->o[0] * p->OC + t->o[2]) * OH * OW + t->o[3] * OW + t->o[4]) * 4;
    if (t->o[1])
        return PFVM_OK; /* a part past the first: its sum went to the part 0 PE */
    return pfvm__acl_store(c, pe, dst, p->out, t->e[2], t->e[3], t->e[4], OH * OW, OW, t->e[3] * t->e[4], t->e[4]);
}

/* Selects the output buffer of wave parity `parity` (lagging stores). */
static void pfvm__acl_ir_flip(void *user, int parity)
{
    pfvm__acl_ir_plan *p = (pfvm__acl_ir_plan *)user;
    p->out = p->obuf[parity != 0];
}

/* Adds to up[k][instance] the bytes of the stores of tiles tw[i] of a
 * wave of n (the part 0 PEs'), i % every == j (every 1: all of them). */
static void pfvm__acl_ir_store_up(const pfvm_accel_ctx *c, const pfvm__acl_tile *tw, int64_t n, int64_t j,
                                  int64_t every, double **up)
{
    int64_t i;
    int k;
    for (i = j; i < n; i += every)
        for (k = 0; !tw[i].o[1] && k < c->nlinks; k++)
            up[k][pfvm__acl_pe(c, n, i) / c->link_pes[k]] += (double)(tw[i].e[2] * tw[i].e[3] * tw[i].e[4]) * 4;
}

/* The busiest link instance's cycles in down and up (per direction). */
static double pfvm__acl_ir_links(const pfvm_accel_ctx *c, double **down, double **up)
{
    double t = 0;
    int64_t x;
    int k;
    for (k = 0; k < c->nlinks; k++)
        for (x = 0; x < c->pes / c->link_pes[k]; x++) {
            double d = down[k][x] / c->link_down[k], u = up[k][x] / c->link_up[k];
            t = d > t ? d : t;
            t = u > t ? u : t;
        }
    return t;
}

/* A step of the parts' reduction for pfvm__acl_classes: each marked
 * tile (e[1] != 0) adds the sum received at rx (add), or, on the part 0
 * PE, adds the `left` sums gathered at rx and finishes the tile with the
 * projection's epilogue. */
typedef struct pfvm__acl_ir_red {
    const pfvm__acl_ir_plan *p;
    int add;
    int64_t left;
} pfvm__acl_ir_red;

static pfvm_code pfvm__acl_ir_lead_body(pfvm_accel_ctx *c, const pfvm__acl_tile *t, void *user)
{
    const pfvm__acl_ir_red *r = (const pfvm__acl_ir_red *)user;
    const pfvm__acl_ir_plan *p = r->p;
    int64_t n = t->e[2] * t->e[3] * t->e[4], s;
    pfvm_code rc;
    if (!t->e[1])
        return PFVM_OK;
    for (s = 0; s < (r->add ? 1 : r->left); s++)
        if ((rc = c->emit(c, "bin add %lld %lld %lld %lld", (long long)p->out, (long long)p->out,
                          (long long)(p->rx + s * n * 4), (long long)n)) != PFVM_OK)
            return rc;
    return r->add ? PFVM_OK : pfvm__acl_ir_epilogue(c, p, t->e[2], t->e[3], t->e[4]);
}

/* Runs pfvm__acl_ir_lead_body over the wave's tiles (mark: scratch of n),
 * e[1] marking those that act: with step > 0 the receivers of the tree
 * round at distance step, else the part 0 PEs (left: the sums gathered). */
static pfvm_code pfvm__acl_ir_red_pass(pfvm_accel_ctx *c, const pfvm__acl_ir_plan *p, const pfvm__acl_tile *tw,
                                       int64_t n, pfvm__acl_tile *mark, int64_t step, int64_t left)
{
    pfvm__acl_ir_red r;
    int64_t i;
    r.p = p, r.add = step > 0, r.left = left;
    for (i = 0; i < n; i++) {
        int64_t s = tw[i].o[1];
        mark[i] = tw[i];
        mark[i].cls = 0; /* the sums and the epilogue do not depend on the padding */
        mark[i].e[1] = step ? s % (2 * step) == 0 && s + step < p->parts : s == 0;
    }
    return pfvm__acl_classes(c, mark, n, pfvm__acl_ir_lead_body, &r);
}

/* With parts: the parts' sums reduced to the part 0 PE (the parts of a
 * tile are consecutive tiles of the wave). First p->rounds tree rounds,
 * each a phase: the parts at an odd multiple of step copy their sums to
 * the part step before them, which adds them. Then a phase in which the
 * parts left (every T = 2^rounds-th) copy their sums to the part 0 PE
 * (slot s / T - 1 at rx), which adds them up and finishes the tile (its
 * store follows). */
static pfvm_code pfvm__acl_ir_finish(pfvm_accel_ctx *c, const pfvm__acl_tile *tw, int64_t n, void *user)
{
    const pfvm__acl_ir_plan *p = (const pfvm__acl_ir_plan *)user;
    pfvm__acl_tile *mark = NULL;
    int64_t i, step, T = (int64_t)1 << p->rounds;
    pfvm_code rc = PFVM_OK;
    if (p->parts < 2)
        return PFVM_OK;
    if (!pfvm__arrreserve(mark, (size_t)n))
        return pfvm__acl_nomem(c);
    stbds_arrsetlen(mark, (size_t)n);
    for (step = 1; step <= p->parts && rc == PFVM_OK; step *= 2) {
        int last = step >= T; /* the gathering phase (no copies after a full tree) */
        if (!last || T < p->parts)
            rc = c->emit(c, "barrier");
        for (i = 0; i < n && rc == PFVM_OK; i++) {
            int64_t s = tw[i].o[1], bytes = tw[i].e[2] * tw[i].e[3] * tw[i].e[4] * 4;
            if (last ? s && s % T == 0 : s % (2 * step) == step)
                rc = c->emit(c, "copy %lld %lld %lld %lld %lld", (long long)pfvm__acl_pe(c, n, i),
                             (long long)p->out, (long long)pfvm__acl_pe(c, n, i - (last ? s : step)),
                             (long long)(p->rx + (last ? s / T - 1 : 0) * bytes), (long long)bytes);
        }
        if (rc == PFVM_OK)
            rc = pfvm__acl_ir_red_pass(c, p, tw, n, mark, last ? 0 : step, last ? p->parts / T - 1 : 0);
        if (last)
            break;
    }
    stbds_arrfree(mark);
    return rc;
}

/* The chain's tiles (batch, part, output channels, rows, columns in
 * o/e[0..4]): output channels, then parts innermost, so that the PEs
 * sharing an input box are neighbours, the parts of a tile under one MAB. */
static pfvm_code pfvm__acl_ir_tiles(pfvm_accel_ctx *c, const pfvm__acl_ir_plan *p, pfvm__acl_tile **tiles)
{
    int64_t dims[5], step[5], i;
    pfvm_code rc;
    dims[0] = p->N, dims[1] = p->w.out[0], dims[2] = p->w.out[1], dims[3] = p->OC, dims[4] = p->parts;
    step[0] = 1, step[1] = p->th, step[2] = p->tw, step[3] = p->oct, step[4] = 1;
    if ((rc = pfvm__acl_tiling(c, 5, dims, step, tiles)) != PFVM_OK)
        return rc;
    for (i = 0; i < (int64_t)stbds_arrlen(*tiles); i++) {
        pfvm__acl_tile t = (*tiles)[i];
        (*tiles)[i].o[1] = t.o[4], (*tiles)[i].e[1] = t.e[4];
        (*tiles)[i].o[2] = t.o[3], (*tiles)[i].e[2] = t.e[3];
        (*tiles)[i].o[3] = t.o[1], (*tiles)[i].e[3] = t.e[1];
        (*tiles)[i].o[4] = t.o[2], (*tiles)[i].e[4] = t.e[2];
        (*tiles)[i].cls = p->noexp ? 0 : pfvm__acl_ir_cls(p, &(*tiles)[i]);
    }
    return PFVM_OK;
}

static pfvm_code pfvm__acl_rows_discard(pfvm_accel_ctx *c, const char *fmt, ...);

/* Cycles of one wave (tiles tw[0..n)) of the chain by the simulator's
 * rules for the links: per chunk the load lines the wave would write
 * (pfvm__acl_loads_cost: a box, a depthwise weight slice or a projection
 * slice shared by several PEs crosses a broadcasting link once; an edge
 * tile's box is smaller and its padding is not loaded), against the
 * chunk's compute (its own channels: the last chunk may be short); the
 * stores in the last chunk's phase, or, with parts, after the parts'
 * reduction (pfvm__acl_ir_red_cost); with lagging stores (p->lag), the
 * stores of the previous wave's tiles pt[0..pn) instead, spread over the
 * chunks. ev: scratch as pfvm__acl_gemm_wave_exact's. c's emit must
 * discard (fills may flush). */
static pfvm_code pfvm__acl_ir_wave_exact(pfvm_accel_ctx *c, pfvm__acl_ir_plan *p, double **down, double **up,
                                         int64_t *inst, double *carry, const pfvm__acl_tile *tw, int64_t n,
                                         const pfvm__acl_tile *pt, int64_t pn, double *cycles)
{
    int64_t nch = (p->ep + p->ec - 1) / p->ec, j, i, x, simd = c->simd > 0 ? c->simd : 1;
    int64_t bh = pfvm__acl_ir_bh(p, p->th), bw = pfvm__acl_ir_bw(p, p->tw);
    double col = p->stem ? (double)(p->K * bh) * (double)(p->sw.s[1] > 1 ? bw : (bw + simd - 1) / simd) : 0;
    int k;
    pfvm_code rc = PFVM_OK;
    *cycles = 0;
    for (j = 0; j < nch && rc == PFVM_OK; j = j == 1 && nch > 3 ? nch - 1 : j + 1) {
        pfvm__acl_q q[PFVM__ACL_NQ];
        double t = 0, comp, pad = 0, times = j == 1 && nch > 3 ? (double)(nch - 2) : 1; /* the middle chunks cost the same */
        memset(q, 0, sizeof q);
        for (k = 0; k < c->nlinks; k++)
            for (x = 0; x < c->pes / c->link_pes[k]; x++)
                down[k][x] = up[k][x] = 0;
        pfvm__acl_ir_chunk(p, j, nch);
        for (i = 0; i < n && rc == PFVM_OK; i++)
            rc = pfvm__acl_ir_load(c, q, &tw[i], pfvm__acl_pe(c, n, i), p);
        if (p->lag && pt)
            pfvm__acl_ir_store_up(c, pt, pn, j, nch, up);
        else if (!p->lag && j == nch - 1 && p->parts == 1)
            pfvm__acl_ir_store_up(c, tw, n, 0, 1, up);
        for (k = 0; k < PFVM__ACL_NQ; k++) {
            int64_t e;
            /* the PEs fill their boxes' padding before computing: the slowest fill counts */
            for (e = 0; e < (int64_t)stbds_arrlen(q[k].pads); e++)
                pad = pfvm__acl_pad_cycles(c, q[k].pads[e].v) > pad ? pfvm__acl_pad_cycles(c, q[k].pads[e].v) : pad;
            if (rc == PFVM_OK)
                pfvm__acl_loads_cost(c, &q[k], down, inst, carry);
            stbds_arrfree(q[k].loads);
            stbds_arrfree(q[k].pads);
        }
        t = pfvm__acl_ir_links(c, down, up);
        comp = pfvm__acl_ir_compute(c, p, p->oct, p->th, p->tw, p->en) + (j ? 0 : col) + pad;
        *cycles += times * (ceil(t > comp ? t : comp) + 1);
    }
    if (p->parts > 1) /* with lagging stores, none in the reduction's phase */
        *cycles += pfvm__acl_ir_red_cost(c, p, p->lag ? 0 : n, (double)(p->oct * p->th * p->tw * 4),
                                         (double)((p->oct * p->th * p->tw + simd - 1) / simd), p->rounds);
    return rc;
}

/* The chain's cycles (the first full wave counted for every full wave),
 * by pfvm__acl_ir_wave_exact; -1 when out of memory. p's offsets laid out. */
static double pfvm__acl_ir_exact(const pfvm_accel_ctx *c, pfvm__acl_ir_plan *p)
{
    pfvm_accel_ctx t = *c;
    pfvm__acl_tile *tiles = NULL;
    double *down[8], *up[8], *carry, total = 0, w;
    int64_t *inst, count, full;
    int k, ok = c->nlinks > 0 && c->nlinks <= 8;
    pfvm_status quiet;
    t.emit = pfvm__acl_rows_discard;
    t.st = &quiet;
    memset(down, 0, sizeof down);
    memset(up, 0, sizeof up);
    inst = (int64_t *)pfvm__malloc((size_t)c->pes * sizeof *inst);
    carry = (double *)pfvm__malloc((size_t)c->pes * sizeof *carry);
    ok = ok && inst && carry;
    for (k = 0; k < c->nlinks && ok; k++) {
        down[k] = (double *)pfvm__malloc((size_t)(c->pes / c->link_pes[k]) * sizeof(double));
        up[k] = (double *)pfvm__malloc((size_t)(c->pes / c->link_pes[k]) * sizeof(double));
        ok = down[k] && up[k];
    }
    ok = ok && pfvm__acl_ir_tiles(&t, p, &tiles) == PFVM_OK;
    count = (int64_t)stbds_arrlen(tiles), full = count / c->pes;
    /* with lagging stores every wave but the first carries a full wave's
     * (counted for the first too), and the last wave's follow alone */
    if (ok && full &&
        (ok = pfvm__acl_ir_wave_exact(&t, p, down, up, inst, carry, tiles, c->pes, tiles, c->pes, &w) == PFVM_OK))
        total += (double)full * w;
    if (ok && count % c->pes &&
        (ok = pfvm__acl_ir_wave_exact(&t, p, down, up, inst, carry, tiles + full * c->pes, count % c->pes,
                                      full ? tiles : NULL, c->pes, &w) == PFVM_OK))
        total += w;
    if (ok && p->lag) {
        int64_t x, last = count % c->pes ? count % c->pes : c->pes;
        for (k = 0; k < c->nlinks; k++)
            for (x = 0; x < c->pes / c->link_pes[k]; x++)
                down[k][x] = up[k][x] = 0;
        pfvm__acl_ir_store_up(c, tiles + count - last, last, 0, 1, up);
        total += ceil(pfvm__acl_ir_links(c, down, up)) + 1;
    }
    for (k = 0; k < 8; k++) {
        pfvm__free(down[k]);
        pfvm__free(up[k]);
    }
    pfvm__free(inst);
    pfvm__free(carry);
    stbds_arrfree(tiles);
    return ok ? total : -1;
}

/* Of the search's best tiles top[0..n) by the estimate, the one whose
 * exact cost (pfvm__acl_ir_exact) is lowest set in p, its cost that; 0
 * when none has boxes the program can address. The estimate ranks the
 * tiles; the exact cost, a wave's load lines, is too slow for every
 * tile the search tries. */
static int pfvm__acl_ir_pick(const pfvm_accel_ctx *c, pfvm__acl_ir_plan *p, const pfvm__acl_ir_cand *top, int n)
{
    double best = -1, cost;
    int i, at = -1;
    for (i = 0; i < n; i++) {
        pfvm__acl_ir_take(p, &top[i]);
        if (pfvm__acl_ir_ib(p, 0, pfvm__acl_ir_bh(p, p->th)) >= 0x10000 ||
            pfvm__acl_ir_ib(p, 1, pfvm__acl_ir_bw(p, p->tw)) >= 0x10000)
            continue;
        pfvm__acl_ir_bytes(p, p->oct, p->th, p->tw, p->ec, 1);
        p->zlen = pfvm__acl_ir_zlen(p, p->th, p->tw);
        if ((cost = pfvm__acl_ir_exact(c, p)) < 0)
            cost = top[i].cost; /* out of memory for the scratch: the estimate */
        if (best < 0 || cost < best)
            best = cost, at = i;
    }
    if (at < 0)
        return 0;
    pfvm__acl_ir_take(p, &top[at]);
    p->cost = best;
    /* lagging stores on the chosen tile only (with more than one wave,
     * the second buffer fitting): compared on one tile, the exact costs'
     * errors mostly cancel; across tiles they picked slower lagged tiles
     * (accel_stem on 32 PEs of 4 KiB: 64856 -> 67075 cycles) */
    p->lag = pfvm__acl_ir_count(p) > c->pes;
    if (p->lag && pfvm__acl_ir_bytes(p, p->oct, p->th, p->tw, p->ec, 1) <= c->pe_mem &&
        (cost = pfvm__acl_ir_exact(c, p)) >= 0 && cost < best)
        p->cost = cost;
    else
        p->lag = 0;
    pfvm__acl_ir_bytes(p, p->oct, p->th, p->tw, p->ec, 1);
    return 1;
}

/* The chain c->chain[0..1] run in c's tiles; PFVM_ERR_UNSUPPORTED (and
 * nothing emitted) when it is not expand -> depthwise -> project. */
static pfvm_code pfvm__acl_ir_stream(pfvm_accel_ctx *c)
{
    pfvm__acl_ir_plan p;
    pfvm__acl_ir_cand top[PFVM__ACL_IR_TOP];
    int ntop;
    pfvm__acl_win hw;
    pfvm__acl_tile *tiles = NULL;
    pfvm__acl_waves wv;
    int64_t i;
    pfvm_code rc;
    memset(&p, 0, sizeof p);
    if (c->n_chain != 1 && c->n_chain != 2)
        return PFVM_ERR_UNSUPPORTED;
    p.noexp = c->n_chain == 1;
    p.dw = p.noexp ? c : &c->chain[0], p.pj = &c->chain[c->n_chain - 1];
    if (c->in[0].rank != 4 || c->in[1].rank != 4 || c->out[0].rank != 4)
        return PFVM_ERR_UNSUPPORTED;
    p.N = c->in[0].dims[0], p.Cin = c->in[0].dims[1], p.E = c->out[0].dims[1];
    if (!p.noexp && pfvm__acl_ir_conv(c, 1, p.E) && !pfvm__acl_ir_pointwise(c, &hw)) {
        /* a stem: the expansion has a window of its own */
        if (pfvm__acl_window(c, &c->in[0], &c->out[0], c->in[1].dims + 2, &p.sw) != PFVM_OK)
            return PFVM_ERR_UNSUPPORTED;
        p.stem = 1;
    }
    if ((!p.noexp && (!pfvm__acl_ir_conv(c, 1, p.E) || (!p.stem && !pfvm__acl_ir_pointwise(c, &hw)))) ||
        !pfvm__acl_ir_conv(p.dw, p.E, p.E) ||
        p.pj->in[0].rank != 4 || !pfvm__acl_ir_conv(p.pj, 1, p.pj->out[0].dims[1]) ||
        !pfvm__acl_ir_pointwise(p.pj, &hw) ||
        pfvm__acl_window(p.dw, &p.dw->in[0], &p.dw->out[0], p.dw->in[1].dims + 2, &p.w) != PFVM_OK)
        return PFVM_ERR_UNSUPPORTED;
    p.OC = p.pj->out[0].dims[1];
    p.kk = p.w.k[0] * p.w.k[1];
    p.ks = p.stem ? p.sw.k[0] * p.sw.k[1] : 1;
    p.K = p.Cin * p.ks;
    if (p.stem) {
        /* the raw box of x behind a tile of the projection's output: the
         * depthwise's window over the stem's (x's rows and columns) */
        for (i = 0; i < 2; i++) {
            p.xw.k[i] = (p.w.k[i] - 1) * p.w.d[i] * p.sw.s[i] + (p.sw.k[i] - 1) * p.sw.d[i] + 1;
            p.xw.s[i] = p.w.s[i] * p.sw.s[i], p.xw.d[i] = 1;
            p.xw.pad0[i] = p.w.pad0[i] * p.sw.s[i] + p.sw.pad0[i];
            p.xw.in[i] = p.sw.in[i], p.xw.out[i] = p.w.out[i];
            p.xw.pad1[i] = (p.xw.out[i] - 1) * p.xw.s[i] + p.xw.k[i] - p.xw.pad0[i] - p.xw.in[i];
        }
    }
    p.slack = (p.w.k[1] - 1) * p.w.d[1];
    p.res = c->res != NULL;
    p.b_e = p.noexp ? NULL : pfvm__acl_bias_arg(c), p.b_d = pfvm__acl_bias_arg(p.dw), p.b_p = pfvm__acl_bias_arg(p.pj);
    if (!pfvm__acl_ir_search(c, &p, top, &ntop) || !pfvm__acl_ir_pick(c, &p, top, ntop))
        return PFVM_ERR_UNSUPPORTED;
    {
        /* the chain recomputes the expansion of the halo and has fewer
         * tiles to spread: taken only when the cost model finds it
         * cheaper than the three Convs alone (the chosen tile's cost by
         * its load lines, which the search's estimate overstates on
         * small planes: edge tiles, shared depthwise weights) */
        const pfvm_accel_ctx *d[3];
        double alone = 0, part;
        d[0] = c, d[1] = p.dw, d[2] = p.pj;
        for (i = p.noexp; i < 3; i++) {
            if ((part = pfvm__acl_conv_cost(c, d[i])) < 0)
                return PFVM_ERR_UNSUPPORTED;
            alone += part;
        }
        if (p.cost >= alone)
            return PFVM_ERR_UNSUPPORTED;
    }
    c->pe_used = pfvm__acl_ir_bytes(&p, p.oct, p.th, p.tw, p.ec, 1);
    p.zlen = pfvm__acl_ir_zlen(&p, p.th, p.tw);
    if ((rc = pfvm__acl_ir_tiles(c, &p, &tiles)) != PFVM_OK)
        goto done;
    memset(&wv, 0, sizeof wv);
    wv.load = pfvm__acl_ir_load, wv.body = pfvm__acl_ir_body, wv.store = pfvm__acl_ir_store;
    wv.chunk = pfvm__acl_ir_chunk, wv.nchunks = (p.ep + p.ec - 1) / p.ec, wv.user = &p;
    wv.finish = pfvm__acl_ir_finish;
    wv.flip = p.lag ? pfvm__acl_ir_flip : NULL;
    if ((rc = pfvm__acl_run_waves(c, tiles, &wv)) == PFVM_OK) {
        c->post_done = c->post != NULL;
        c->res_done = p.res;
        c->chain_done = 1;
    }
done:
    stbds_arrfree(tiles);
    return rc;
}

/* Conv's streamed plan for c: the geometry and the tile the cost model
 * chooses (over dims: batch, group, output channels, rows, columns). */
static pfvm_code pfvm__acl_conv_plan_init(pfvm_accel_ctx *c, pfvm__acl_conv_plan *pp, int64_t *dims, int *x_major)
{
    const pfvm_accel_arg *x = &c->in[0], *wt = &c->in[1], *y = &c->out[0];
    const pfvm_accel_arg *b = c->n_in > 2 && c->in[2].rank >= 0 ? &c->in[2] : NULL;
    int64_t group = pfvm_node_attr_int(c->node, "group", 1);
    pfvm__acl_conv_plan p;
    pfvm_code rc;
    memset(&p, 0, sizeof p);
    if (x->rank != 4 || wt->rank != 4)
        return pfvm__acl_unsupported(c, "2-D Conv only");
    if ((rc = pfvm__acl_window(c, x, y, wt->dims + 2, &p.w)) != PFVM_OK)
        return rc;
    p.C = x->dims[1];
    p.OC = y->dims[1];
    if (group < 1 || p.C % group || p.OC % group || wt->dims[1] != p.C / group || wt->dims[0] != p.OC)
        return pfvm__acl_unsupported(c, "Conv whose weight matches its input's channels and group");
    p.Cg = p.C / group;
    p.OCg = p.OC / group;
    p.kk = p.w.k[0] * p.w.k[1];
    p.simd = c->simd > 0 ? c->simd : 1;
    p.bias = b != NULL;
    p.res = c->res != NULL;
    p.direct = p.kk == 1 && p.w.s[0] == 1 && p.w.s[1] == 1 && !p.w.pad0[0] && !p.w.pad0[1] && !p.w.pad1[0] &&
               !p.w.pad1[1];
    p.rows = !p.direct && p.w.s[0] == 1 && p.w.s[1] == 1;
    p.oct = p.OCg, p.th = p.w.out[0], p.tw = p.w.out[1], p.icc = p.Cg;
    dims[0] = y->dims[0], dims[1] = group, dims[2] = p.OCg, dims[3] = p.w.out[0], dims[4] = p.w.out[1];
    *x_major = 0;
    if (pfvm__acl_conv_search(c, &p, dims, x_major, pfvm__acl_conv_fit, NULL, NULL) < 0)
        rc = pfvm__acl_stream_nomem(c, pfvm__acl_conv_bytes(&p, 1, 1, 1, 1));
    *pp = p;
    return rc;
}

/* The cost model's cycles for Conv ctx d run alone (its own streamed
 * plan, on c's machine), or -1 when it has none. */
static double pfvm__acl_conv_cost(const pfvm_accel_ctx *c, const pfvm_accel_ctx *d)
{
    pfvm_accel_ctx t = *c;
    pfvm__acl_conv_plan p;
    pfvm_status quiet;
    int64_t dims[5];
    int x_major;
    t.node = d->node;
    memcpy(t.in, d->in, sizeof t.in);
    memcpy(t.out, d->out, sizeof t.out);
    t.n_in = d->n_in;
    t.n_out = d->n_out;
    t.res = NULL;
    t.st = &quiet;
    return pfvm__acl_conv_plan_init(&t, &p, dims, &x_major) == PFVM_OK ? p.cost : -1;
}

/* Conv's tiles over (batch, group, output channels, rows, columns) of
 * steps `step`, in the tile order x_major (pfvm__acl_conv_search): 1,
 * output channels innermost, so that the PEs sharing an input box are
 * consecutive; 2, (group, output channels, batch, rows, columns), so that
 * a wave's instances under the slow links split the weights (resnet18's
 * 7x7 Convs at batch 8), not the images; 0, the spatial tiles innermost. */
static pfvm_code pfvm__acl_conv_tiles(pfvm_accel_ctx *c, const int64_t *dims, const int64_t *step, int x_major,
                                      pfvm__acl_tile **tiles)
{
    int64_t d2[5], s2[5], nt;
    pfvm_code rc;
    memcpy(d2, dims, sizeof d2);
    memcpy(s2, step, sizeof s2);
    if (x_major == 1) {
        d2[2] = dims[3], d2[3] = dims[4], d2[4] = dims[2];
        s2[2] = step[3], s2[3] = step[4], s2[4] = step[2];
    } else if (x_major == 2) {
        d2[0] = dims[1], d2[1] = dims[2], d2[2] = dims[0];
        s2[0] = step[1], s2[1] = step[2], s2[2] = step[0];
    }
    if ((rc = pfvm__acl_tiling(c, 5, d2, s2, tiles)) != PFVM_OK)
        return rc;
    for (nt = 0; x_major == 2 && nt < (int64_t)stbds_arrlen(*tiles); nt++) {
        pfvm__acl_tile t = (*tiles)[nt];
        (*tiles)[nt].o[0] = t.o[2], (*tiles)[nt].e[0] = t.e[2];
        (*tiles)[nt].o[1] = t.o[0], (*tiles)[nt].e[1] = t.e[0];
        (*tiles)[nt].o[2] = t.o[1], (*tiles)[nt].e[2] = t.e[1];
    }
    for (nt = 0; x_major == 1 && nt < (int64_t)stbds_arrlen(*tiles); nt++) {
        pfvm__acl_tile t = (*tiles)[nt];
        (*tiles)[nt].o[2] = t.o[4], (*tiles)[nt].e[2] = t.e[4];
        (*tiles)[nt].o[3] = t.o[2], (*tiles)[nt].e[3] = t.e[2];
        (*tiles)[nt].o[4] = t.o[3], (*tiles)[nt].e[4] = t.e[3];
    }
    return PFVM_OK;
}

static pfvm_code pfvm__acl_cp_stream(pfvm_accel_ctx *c);
static pfvm_code pfvm__acl_cg_stream(pfvm_accel_ctx *c);
static pfvm_code pfvm__acl_conv_stream(pfvm_accel_ctx *c)
{
    int64_t dims[5], step[5];
    int x_major = 0;
    pfvm__acl_conv_plan p;
    pfvm__acl_tile *tiles = NULL;
    pfvm__acl_waves wv;
    pfvm_code rc;
    if (c->n_chain == 1 && !strcmp(c->chain[0].node->op_type, "MaxPool"))
        return pfvm__acl_cp_stream(c);
    if (c->n_chain == 1 && !strcmp(c->chain[0].node->op_type, "GlobalAveragePool"))
        return pfvm__acl_cg_stream(c);
    if (c->n_chain)
        return pfvm__acl_ir_stream(c);
    if ((rc = pfvm__acl_conv_plan_init(c, &p, dims, &x_major)) != PFVM_OK)
        return rc;
    step[0] = 1, step[1] = 1, step[2] = p.oct, step[3] = p.th, step[4] = p.tw;
    if ((rc = pfvm__acl_conv_tiles(c, dims, step, x_major, &tiles)) != PFVM_OK)
        goto done;
    {
        int64_t bh, bw, h0, w0, top;
        pfvm__acl_box(&p.w, 0, 0, p.th, &h0, &bh);
        pfvm__acl_box(&p.w, 1, 0, p.tw, &w0, &bw);
        p.xb = 0;
        top = pfvm__acl_al((p.icc * bh * bw + pfvm__acl_conv_slack(&p)) * 4);
        p.wb = top, top += pfvm__acl_al(p.oct * p.icc * p.kk * 4);
        p.col = top, top += p.direct || p.rows ? 0 : pfvm__acl_al(p.icc * p.kk * p.th * p.tw * 4);
        p.ph = top, top += pfvm__acl_conv_ph_bytes(&p, p.th, p.tw, p.icc);
        p.out = p.obuf[0] = p.obuf[1] = top, top += pfvm__acl_al(p.oct * p.th * (p.rows ? bw : p.tw) * 4);
        if (p.lag) /* the second output buffer of lagging stores */
            p.obuf[1] = top, top += pfvm__acl_al(p.oct * p.th * (p.rows ? bw : p.tw) * 4);
        p.bb = top;
        top += pfvm__acl_al(p.oct * 4);
        p.rb = top;
        c->pe_used = top + (p.res ? pfvm__acl_al(p.oct * p.th * (p.rows ? bw : p.tw) * 4) : 0);
    }
    c->post_done = c->post != NULL;
    c->res_done = p.res;
    memset(&wv, 0, sizeof wv);
    wv.load = pfvm__acl_conv_load, wv.body = pfvm__acl_conv_body, wv.store = pfvm__acl_conv_store;
    wv.chunk = pfvm__acl_conv_chunk, wv.nchunks = (p.Cg + p.icc - 1) / p.icc, wv.user = &p;
    wv.flip = p.lag ? pfvm__acl_conv_flip : NULL;
    rc = pfvm__acl_run_waves(c, tiles, &wv);
done:
    stbds_arrfree(tiles);
    return rc;
}

typedef struct pfvm__acl_pool_plan {
    pfvm__acl_win w;
    int64_t xb, col, out;
} pfvm__acl_pool_plan;

static pfvm_code pfvm__acl_pool_body(pfvm_accel_ctx *c, const pfvm__acl_tile *t, void *user)
{
    const pfvm__acl_pool_plan *p = (const pfvm__acl_pool_plan *)user;
    int64_t ct = t->e[1], th = t->e[2], tw = t->e[3], taps = p->w.k[0] * p->w.k[1], bh, bw, h0, w0, ci, kh, kw;
    pfvm_code rc;
    pfvm__acl_box(&p->w, 0, 0, th, &h0, &bh);
    pfvm__acl_box(&p->w, 1, 0, tw, &w0, &bw);
    for (ci = 0; ci < ct; ci++) {
        for (kh = 0; kh < p->w.k[0]; kh++)
            for (kw = 0; kw < p->w.k[1]; kw++)
                if ((rc = c->emit(c, "mov %lld %lld %lld %lld %lld %lld %lld %lld",
                                  (long long)(p->col + (kh * p->w.k[1] + kw) * 4),
                                  (long long)(p->xb + ((ci * bh + kh * p->w.d[0]) * bw + kw * p->w.d[1]) * 4),
                                  (long long)th, (long long)tw, (long long)(tw * taps), (long long)taps,
                                  (long long)(p->w.s[0] * bw), (long long)p->w.s[1])) != PFVM_OK)
                    return rc;
        if ((rc = c->emit(c, "red max %lld %lld %lld %lld", (long long)(p->out + ci * th * tw * 4), (long long)p->col,
                          (long long)(th * tw), (long long)taps)) != PFVM_OK)
            return rc;
    }
    return PFVM_OK;
}

/* MaxPool: tiles over (batch, channels, output rows, output columns); the
 * taps of each output gathered side by side and reduced by `red max`. */
/* A tile's box: its padding filled with -inf (q[3]), its input rows loaded (q[0]). */
static pfvm_code pfvm__acl_maxpool_load(pfvm_accel_ctx *c, pfvm__acl_q *q, const pfvm__acl_tile *t, int64_t pe,
                                        void *user)
{
    const pfvm__acl_pool_plan *p = (const pfvm__acl_pool_plan *)user;
    const pfvm_accel_arg *x = &c->in[0];
    int64_t src = x->dram + ((t->o[0] * x->dims[1] + t->o[1]) * p->w.in[0] * p->w.in[1]) * 4;
    pfvm_code rc;
    if ((rc = pfvm__acl_load_box(c, &q[3], &p->w, pe, p->xb, 0, t->e[1], t->o[2], t->e[2], t->o[3], t->e[3], "-inf",
                                 1)) != PFVM_OK)
        return rc;
    return pfvm__acl_load_box(c, &q[0], &p->w, pe, p->xb, src, t->e[1], t->o[2], t->e[2], t->o[3], t->e[3], "-inf", 0);
}

static pfvm_code pfvm__acl_maxpool_store(pfvm_accel_ctx *c, const pfvm__acl_tile *t, int64_t pe, void *user)
{
    const pfvm__acl_pool_plan *p = (const pfvm__acl_pool_plan *)user;
    const pfvm_accel_arg *y = &c->out[0];
    return pfvm__acl_store(c, pe,
                           y->dram + (((t->o[0] * y->dims[1] + t->o[1]) * p->w.out[0] + t->o[2]) * p->w.out[1] + t->o[3]) *
                                         4,
                           p->out, t->e[1], t->e[2], t->e[3], p->w.out[0] * p->w.out[1], p->w.out[1], t->e[2] * t->e[3],
                           t->e[3]);
}

/* Cycles of one MaxPool wave of m tiles of ct channels x th x tw outputs
 * (box bh x bw) by the simulator's cost model: one phase, the busiest
 * link (no box is shared by two tiles) against the PE's gathers (one
 * element per cycle) and `red max`. */
static double pfvm__acl_pool_wave(const pfvm_accel_ctx *c, const pfvm__acl_pool_plan *p, int64_t m, int64_t ct,
                                  int64_t th, int64_t tw, int64_t bh, int64_t bw)
{
    double taps = (double)(p->w.k[0] * p->w.k[1]), simd = c->simd > 0 ? c->simd : 1;
    double cost = (double)(ct * th * tw) * taps + (double)ct * ceil((double)(th * tw) * taps / simd);
    int k;
    for (k = 0; k < c->nlinks; k++) {
        double mk = (double)pfvm__acl_first(c, m, k);
        double down = mk * (double)(ct * bh * bw * 4) / c->link_down[k], up = mk * (double)(ct * th * tw * 4) / c->link_up[k];
        cost = cost > down ? cost : down;
        cost = cost > up ? cost : up;
    }
    return cost + 1;
}

/* The MaxPool tile (channels *ct, rows *th, columns *tw: each extent of
 * dims, (batch, channels, rows, columns), halved 0, 1, 2... times) the
 * cost model finds fastest, and its cycles; -1 when none fits (*least:
 * the smallest tile's bytes). The pool computes little, so its boxes'
 * halo (an input row read by two tiles) matters more than using every PE. */
static double pfvm__acl_pool_search(const pfvm_accel_ctx *c, const pfvm__acl_pool_plan *pp, const int64_t *dims,
                                    int64_t *ct, int64_t *th, int64_t *tw, int64_t *least)
{
    pfvm__acl_pool_plan p = *pp;
    int64_t c2, h2, w2, taps = p.w.k[0] * p.w.k[1], step[4];
    double best = -1;
    *least = -1;
    step[0] = 1;
    for (c2 = dims[1];; c2 = (c2 + 1) / 2) {
        for (h2 = dims[2];; h2 = (h2 + 1) / 2) {
            for (w2 = dims[3];; w2 = (w2 + 1) / 2) {
                int64_t bh, bw, h0, w0, bytes, n, full;
                pfvm__acl_box(&p.w, 0, 0, h2, &h0, &bh);
                pfvm__acl_box(&p.w, 1, 0, w2, &w0, &bw);
                bytes = pfvm__acl_al(c2 * bh * bw * 4) + pfvm__acl_al(h2 * w2 * taps * 4) +
                        pfvm__acl_al(c2 * h2 * w2 * 4);
                if (*least < 0 || bytes < *least)
                    *least = bytes;
                if (bytes <= c->pe_mem) {
                    double cost;
                    step[1] = c2, step[2] = h2, step[3] = w2;
                    n = pfvm__acl_count(4, dims, step);
                    full = n / c->pes;
                    cost = (double)full * pfvm__acl_pool_wave(c, &p, c->pes, c2, h2, w2, bh, bw);
                    if (n % c->pes)
                        cost += pfvm__acl_pool_wave(c, &p, n % c->pes, c2, h2, w2, bh, bw);
                    if (best < 0 || cost < best)
                        best = cost, *ct = c2, *th = h2, *tw = w2;
                }
                if (w2 == 1)
                    break;
            }
            if (h2 == 1)
                break;
        }
        if (c2 == 1)
            break;
    }
    return best;
}

static pfvm_code pfvm__acl_maxpool_stream(pfvm_accel_ctx *c)
{
    const pfvm_accel_arg *x = &c->in[0], *y = &c->out[0];
    int64_t dims[4], step[4], taps, ct = 1, th = 1, tw = 1;
    pfvm__acl_pool_plan p;
    pfvm__acl_tile *tiles = NULL;
    pfvm__acl_waves w;
    pfvm_code rc;
    if (strcmp(c->node->op_type, "MaxPool") || (c->n_out > 1 && c->out[1].rank >= 0))
        return pfvm__acl_unsupported(c, "streamed pooling: MaxPool without Indices only");
    if ((rc = pfvm__acl_window(c, x, y, NULL, &p.w)) != PFVM_OK)
        return rc;
    taps = p.w.k[0] * p.w.k[1];
    dims[0] = y->dims[0], dims[1] = x->dims[1], dims[2] = p.w.out[0], dims[3] = p.w.out[1];
    step[0] = 1;
    {
        int64_t least;
        if (pfvm__acl_pool_search(c, &p, dims, &ct, &th, &tw, &least) < 0)
            return pfvm__acl_stream_nomem(c, least);
        step[1] = ct, step[2] = th, step[3] = tw;
    }
    {
        int64_t bh, bw, h0, w0;
        pfvm__acl_box(&p.w, 0, 0, th, &h0, &bh);
        pfvm__acl_box(&p.w, 1, 0, tw, &w0, &bw);
        p.xb = 0;
        p.col = pfvm__acl_al(ct * bh * bw * 4);
        p.out = p.col + pfvm__acl_al(th * tw * taps * 4);
        c->pe_used = p.out + pfvm__acl_al(ct * th * tw * 4);
    }
    memset(&w, 0, sizeof w);
    w.load = pfvm__acl_maxpool_load, w.body = pfvm__acl_pool_body, w.store = pfvm__acl_maxpool_store, w.user = &p;
    if ((rc = pfvm__acl_tiling(c, 4, dims, step, &tiles)) == PFVM_OK)
        rc = pfvm__acl_run_waves(c, tiles, &w);
    stbds_arrfree(tiles);
    return rc;
}

/* ---- Conv + MaxPool: the pool run in the Conv's tiles ----
 *
 * A Conv (one group) whose output (past its activation) is the single
 * input of a MaxPool (pfvm_accel_ctx.chain of one node: resnet18's and
 * squeezenet's stems) may tile the pool's output instead: each tile
 * computes the Conv's outputs of its pool box (im2col; the box's rows and
 * columns shared with the neighbouring tiles are computed by both),
 * applies the Conv's activation, writes -inf where the box lies in the
 * pool's padding, pools and stores only the pool's output, so the Conv's
 * output never goes to the root memory and back. Taken when the cost
 * model finds it cheaper than the two nodes alone. */

typedef struct pfvm__acl_cp_plan {
    pfvm__acl_conv_plan cv; /* the Conv on tiles of pool boxes (cv.th x cv.tw) */
    pfvm__acl_pool_plan pl; /* the pool, its box the Conv's output tile */
    pfvm_accel_ctx *pool;   /* the MaxPool's ctx (c->chain[0]) */
    int64_t th, tw;         /* pool outputs per tile */
} pfvm__acl_cp_plan;

/* The Conv tile computing the pool box of pool tile t (output rows and
 * columns in the Conv's output, the first ones negative in the padding). */
static pfvm__acl_tile pfvm__acl_cp_conv_tile(const pfvm__acl_cp_plan *p, const pfvm__acl_tile *t)
{
    pfvm__acl_tile ct = *t;
    pfvm__acl_box(&p->pl.w, 0, t->o[3], t->e[3], &ct.o[3], &ct.e[3]);
    pfvm__acl_box(&p->pl.w, 1, t->o[4], t->e[4], &ct.o[4], &ct.e[4]);
    ct.cls = 0;
    return ct;
}

/* v (pfvm__acl_pad_emit's) for the pool box of tile t at out: the rows
 * above and below and the columns left and right of the Conv's output. */
static void pfvm__acl_cp_pads(const pfvm__acl_cp_plan *p, const pfvm__acl_tile *t, int64_t *v)
{
    pfvm__acl_tile ct = pfvm__acl_cp_conv_tile(p, t);
    int a;
    v[0] = p->cv.out, v[1] = t->e[2], v[2] = ct.e[3], v[3] = ct.e[4], v[8] = 0;
    for (a = 0; a < 2; a++) {
        int64_t lo = ct.o[3 + a], hi = lo + ct.e[3 + a], n = p->pl.w.in[a];
        v[4 + 2 * a] = lo < 0 ? -lo : 0;
        v[5 + 2 * a] = hi > n ? hi - n : 0;
    }
}

static pfvm_code pfvm__acl_cp_load(pfvm_accel_ctx *c, pfvm__acl_q *q, const pfvm__acl_tile *t, int64_t pe, void *user)
{
    pfvm__acl_cp_plan *p = (pfvm__acl_cp_plan *)user;
    pfvm__acl_tile ct = pfvm__acl_cp_conv_tile(p, t);
    return pfvm__acl_conv_load(c, q, &ct, pe, &p->cv);
}

/* The Conv on the box (with its bias and activation); after the last
 * step, -inf in the box's padding, the pool and the pool's activation. */
static pfvm_code pfvm__acl_cp_body(pfvm_accel_ctx *c, const pfvm__acl_tile *t, void *user)
{
    pfvm__acl_cp_plan *p = (pfvm__acl_cp_plan *)user;
    pfvm__acl_tile ct = pfvm__acl_cp_conv_tile(p, t), pt;
    int64_t v[9];
    pfvm_code rc;
    if ((rc = pfvm__acl_conv_body(c, &ct, &p->cv)) != PFVM_OK || !p->cv.last)
        return rc;
    pfvm__acl_cp_pads(p, t, v);
    if (v[4] + v[5] + v[6] + v[7] && (rc = pfvm__acl_pad_emit(c, v, "-inf")) != PFVM_OK)
        return rc;
    memset(&pt, 0, sizeof pt);
    pt.e[1] = t->e[2], pt.e[2] = t->e[3], pt.e[3] = t->e[4];
    if ((rc = pfvm__acl_pool_body(c, &pt, &p->pl)) != PFVM_OK)
        return rc;
    return p->pool->post ? p->pool->post(p->pool, p->pl.out, t->e[2] * t->e[3] * t->e[4]) : PFVM_OK;
}

static pfvm_code pfvm__acl_cp_store(pfvm_accel_ctx *c, const pfvm__acl_tile *t, int64_t pe, void *user)
{
    const pfvm__acl_cp_plan *p = (const pfvm__acl_cp_plan *)user;
    int64_t oc = t->o[1] * p->cv.OCg + t->o[2], oh = p->pl.w.out[0], ow = p->pl.w.out[1];
    return pfvm__acl_store(c, pe, p->pool->out[0].dram + (((t->o[0] * p->cv.OC + oc) * oh + t->o[3]) * ow + t->o[4]) * 4,
                           p->pl.out, t->e[2], t->e[3], t->e[4], oh * ow, ow, t->e[3] * t->e[4], t->e[4]);
}

/* Selects the pool output buffer of wave parity `parity` (lagging stores). */
static void pfvm__acl_cp_flip(void *user, int parity)
{
    pfvm__acl_cp_plan *p = (pfvm__acl_cp_plan *)user;
    p->pl.out = p->cv.obuf[parity != 0];
}

static void pfvm__acl_cp_chunk(void *user, int64_t j, int64_t nchunks)
{
    pfvm__acl_conv_chunk(&((pfvm__acl_cp_plan *)user)->cv, j, nchunks);
}

/* PE bytes of a tile of oct channels x th x tw pool outputs, icc input
 * channels per step. */
static int64_t pfvm__acl_cp_bytes(const pfvm__acl_cp_plan *p, int64_t oct, int64_t th, int64_t tw, int64_t icc)
{
    int64_t bh, bw, h0, w0, taps = p->pl.w.k[0] * p->pl.w.k[1];
    pfvm__acl_box(&p->pl.w, 0, 0, th, &h0, &bh);
    pfvm__acl_box(&p->pl.w, 1, 0, tw, &w0, &bw);
    return pfvm__acl_conv_bytes(&p->cv, oct, bh, bw, icc) + pfvm__acl_al(th * tw * taps * 4) +
           pfvm__acl_al(oct * th * tw * 4);
}

/* The Conv + MaxPool candidate (pfvm__acl_conv_fit_fn): oct channels x
 * oh x ow pool outputs, icc input channels per step; the Conv computes
 * the pool box (*th x *tw) and stores the pool's outputs, the pool's
 * gathers and `red max` added to its last step. */
static int64_t pfvm__acl_cp_fit(const pfvm_accel_ctx *c, pfvm__acl_conv_plan *cv, int64_t oct, int64_t oh,
                                int64_t ow, int64_t icc, int64_t *th, int64_t *tw, void *user)
{
    const pfvm__acl_cp_plan *p = (const pfvm__acl_cp_plan *)user;
    int64_t h0, w0, taps = p->pl.w.k[0] * p->pl.w.k[1];
    double simd = c->simd > 0 ? c->simd : 1;
    pfvm__acl_box(&p->pl.w, 0, 0, oh, &h0, th);
    pfvm__acl_box(&p->pl.w, 1, 0, ow, &w0, tw);
    cv->stored = oct * oh * ow;
    cv->extra = (double)(oct * oh * ow * taps) + (double)oct * ceil((double)(oh * ow * taps) / simd);
    return pfvm__acl_cp_bytes(p, oct, oh, ow, icc) + (cv->lag ? pfvm__acl_al(oct * oh * ow * 4) : 0);
}

static pfvm_code pfvm__acl_cp_stream(pfvm_accel_ctx *c)
{
    pfvm__acl_cp_plan p;
    pfvm_accel_ctx *pc = &c->chain[0], pt;
    pfvm_status quiet;
    int64_t dims[5], step[5], pdims[4], ct, th, tw, least, taps, i, top;
    double alone, pool, fused;
    int x_major = 0;
    pfvm__acl_tile *tiles = NULL;
    pfvm__acl_waves wv;
    pfvm_code rc;
    memset(&p, 0, sizeof p);
    if (c->n_chain != 1 || strcmp(pc->node->op_type, "MaxPool") || c->res || pc->out[0].rank != 4 ||
        pfvm_node_attr_int(c->node, "group", 1) != 1)
        return PFVM_ERR_UNSUPPORTED;
    if ((rc = pfvm__acl_conv_plan_init(c, &p.cv, dims, &x_major)) != PFVM_OK)
        return rc;
    /* the pool alone, as its own lowering would tile it */
    pt = *c;
    pt.node = pc->node;
    memcpy(pt.in, pc->in, sizeof pt.in);
    memcpy(pt.out, pc->out, sizeof pt.out);
    pt.n_in = pc->n_in, pt.n_out = pc->n_out;
    pt.st = &quiet;
    if (pfvm__acl_window(&pt, &pc->in[0], &pc->out[0], NULL, &p.pl.w) != PFVM_OK)
        return PFVM_ERR_UNSUPPORTED;
    pdims[0] = pc->out[0].dims[0], pdims[1] = pc->out[0].dims[1], pdims[2] = p.pl.w.out[0], pdims[3] = p.pl.w.out[1];
    pool = pfvm__acl_pool_search(&pt, &p.pl, pdims, &ct, &th, &tw, &least);
    alone = pool >= 0 ? p.cv.cost + pool : -1;
    p.cv.rows = 0; /* the box is [channels][rows][columns] */
    p.pool = pc;
    dims[3] = p.pl.w.out[0], dims[4] = p.pl.w.out[1];
    {
        int64_t pool_tile[2] = {0, 0};
        fused = pfvm__acl_conv_search(c, &p.cv, dims, &x_major, pfvm__acl_cp_fit, &p, pool_tile);
        p.th = pool_tile[0], p.tw = pool_tile[1];
    }
    if (fused < 0 || (alone >= 0 && fused >= alone))
        return PFVM_ERR_UNSUPPORTED;
    taps = p.pl.w.k[0] * p.pl.w.k[1];
    top = pfvm__acl_conv_places(&p.cv, p.cv.th * p.cv.tw);
    p.pl.xb = p.cv.out;
    p.pl.col = top, top += pfvm__acl_al(p.th * p.tw * taps * 4);
    p.pl.out = p.cv.obuf[0] = p.cv.obuf[1] = top, top += pfvm__acl_al(p.cv.oct * p.th * p.tw * 4);
    if (p.cv.lag) /* the second pool output buffer of lagging stores */
        p.cv.obuf[1] = top, top += pfvm__acl_al(p.cv.oct * p.th * p.tw * 4);
    c->pe_used = top;
    step[0] = 1, step[1] = 1, step[2] = p.cv.oct, step[3] = p.th, step[4] = p.tw;
    if ((rc = pfvm__acl_conv_tiles(c, dims, step, x_major, &tiles)) != PFVM_OK)
        goto done;
    /* tiles whose boxes reach into the pool's padding by different amounts
     * run different instructions: their own classes */
    for (i = 0; i < (int64_t)stbds_arrlen(tiles); i++) {
        int64_t v[9];
        pfvm__acl_cp_pads(&p, &tiles[i], v);
        if (v[4] > 255 || v[5] > 255 || v[6] > 255 || v[7] > 255 || v[4] + v[5] >= v[2] || v[6] + v[7] >= v[3]) {
            rc = PFVM_ERR_UNSUPPORTED; /* a box all padding: not a pool a Conv feeds */
            goto done;
        }
        tiles[i].cls = v[4] | v[5] << 8 | v[6] << 16 | v[7] << 24;
    }
    c->post_done = c->post != NULL;
    c->res_done = 0;
    c->chain_done = 1;
    memset(&wv, 0, sizeof wv);
    wv.load = pfvm__acl_cp_load, wv.body = pfvm__acl_cp_body, wv.store = pfvm__acl_cp_store;
    wv.chunk = pfvm__acl_cp_chunk, wv.nchunks = (p.cv.Cg + p.cv.icc - 1) / p.cv.icc, wv.user = &p;
    wv.flip = p.cv.lag ? pfvm__acl_cp_flip : NULL;
    rc = pfvm__acl_run_waves(c, tiles, &wv);
done:
    stbds_arrfree(tiles);
    return rc;
}

/* ---- Conv + GlobalAveragePool: the pool run in the Conv's tiles ----
 *
 * A Conv whose output (past its activation) is the single input of a
 * GlobalAveragePool (pfvm_accel_ctx.chain of one node: mobilenet_v2's
 * last Conv) may tile the pool's output instead: each tile computes its
 * output channels over the whole plane (input channels in steps, as a
 * Conv alone), applies the Conv's activation, sums each channel's plane
 * (`red sum`), scales by 1 / (rows x columns) and stores only the pooled
 * values, so the Conv's output never goes to the root memory and back.
 * Taken when the cost model finds it cheaper than the two nodes alone. */

typedef struct pfvm__acl_cg_plan {
    pfvm__acl_conv_plan cv; /* the Conv on tiles of whole planes (cv.th x cv.tw) */
    pfvm_accel_ctx *pool;   /* the pool's ctx (c->chain[0]) */
    int64_t pout;           /* the pooled values, oct of them */
    int res;                /* pfvm_accel_ctx.res: the other operand's oct values at rb, added to the pooled ones */
    int64_t rb;
} pfvm__acl_cg_plan;

/* The Conv tile of pool tile t: the whole plane of its channels. */
static pfvm__acl_tile pfvm__acl_cg_conv_tile(const pfvm__acl_cg_plan *p, const pfvm__acl_tile *t)
{
    pfvm__acl_tile ct = *t;
    ct.o[3] = 0, ct.e[3] = p->cv.w.out[0];
    ct.o[4] = 0, ct.e[4] = p->cv.w.out[1];
    return ct;
}

static pfvm_code pfvm__acl_cg_load(pfvm_accel_ctx *c, pfvm__acl_q *q, const pfvm__acl_tile *t, int64_t pe, void *user)
{
    pfvm__acl_cg_plan *p = (pfvm__acl_cg_plan *)user;
    pfvm__acl_tile ct = pfvm__acl_cg_conv_tile(p, t);
    int64_t oc = t->o[1] * p->cv.OCg + t->o[2];
    pfvm_code rc = pfvm__acl_conv_load(c, q, &ct, pe, &p->cv);
    if (rc != PFVM_OK || !p->res || !p->cv.last)
        return rc;
    return pfvm__acl_load(c, &q[2], pe, p->rb, c->res_dram + (t->o[0] * p->cv.OC + oc) * 4, 1, 1, t->e[2], 0, 0, 0, 0);
}

/* The Conv on the plane (with its bias and activation); after the last
 * step, each channel's sum, the scale, the residual and the pool's
 * activation. */
static pfvm_code pfvm__acl_cg_body(pfvm_accel_ctx *c, const pfvm__acl_tile *t, void *user)
{
    pfvm__acl_cg_plan *p = (pfvm__acl_cg_plan *)user;
    pfvm__acl_tile ct = pfvm__acl_cg_conv_tile(p, t);
    int64_t oct = t->e[2], hw = p->cv.w.out[0] * p->cv.w.out[1];
    pfvm_code rc;
    if ((rc = pfvm__acl_conv_body(c, &ct, &p->cv)) != PFVM_OK || !p->cv.last)
        return rc;
    if ((rc = c->emit(c, "red sum %lld %lld %lld %lld", (long long)p->pout, (long long)p->cv.out, (long long)oct,
                      (long long)hw)) != PFVM_OK ||
        (rc = c->emit(c, "imm mul %lld %lld %.9g %lld", (long long)p->pout, (long long)p->pout, 1.0 / (double)hw,
                      (long long)oct)) != PFVM_OK)
        return rc;
    if (p->res && (rc = c->res(c, p->pout, p->rb, oct)) != PFVM_OK)
        return rc;
    return p->pool->post ? p->pool->post(p->pool, p->pout, oct) : PFVM_OK;
}

static pfvm_code pfvm__acl_cg_store(pfvm_accel_ctx *c, const pfvm__acl_tile *t, int64_t pe, void *user)
{
    const pfvm__acl_cg_plan *p = (const pfvm__acl_cg_plan *)user;
    int64_t oc = t->o[1] * p->cv.OCg + t->o[2];
    return pfvm__acl_store(c, pe, p->pool->out[0].dram + (t->o[0] * p->cv.OC + oc) * 4, p->pout, 1, 1, t->e[2], 0, 0,
                           0, 0);
}

/* Selects the pooled values' buffer of wave parity `parity` (lagging stores). */
static void pfvm__acl_cg_flip(void *user, int parity)
{
    pfvm__acl_cg_plan *p = (pfvm__acl_cg_plan *)user;
    p->pout = p->cv.obuf[parity != 0];
}

static void pfvm__acl_cg_chunk(void *user, int64_t j, int64_t nchunks)
{
    pfvm__acl_conv_chunk(&((pfvm__acl_cg_plan *)user)->cv, j, nchunks);
}

/* The Conv + GlobalAveragePool candidate (pfvm__acl_conv_fit_fn): oct
 * channels of the pool's 1 x 1 output, icc input channels per step; the
 * Conv computes the whole plane (*th x *tw) and stores oct values, the
 * sums and the scale added to its last step. */
static int64_t pfvm__acl_cg_fit(const pfvm_accel_ctx *c, pfvm__acl_conv_plan *cv, int64_t oct, int64_t oh,
                                int64_t ow, int64_t icc, int64_t *th, int64_t *tw, void *user)
{
    int64_t hw = cv->w.out[0] * cv->w.out[1];
    double simd = c->simd > 0 ? c->simd : 1;
    (void)oh, (void)ow, (void)user;
    *th = cv->w.out[0], *tw = cv->w.out[1];
    cv->stored = oct;
    cv->extra = (double)oct * ceil((double)hw / simd) + ceil((double)oct / simd);
    return pfvm__acl_conv_bytes(cv, oct, *th, *tw, icc) + pfvm__acl_al(oct * 4) * (cv->lag ? 3 : 2);
}

/* The cost model's cycles of a GlobalAveragePool alone over rows planes of
 * cols elements (pfvm__acl_gpool_stream's tiles: one wave of ceil(rows /
 * PEs) planes per PE, bound by its loads or its sums). */
static double pfvm__acl_gpool_cost(const pfvm_accel_ctx *c, int64_t rows, int64_t cols)
{
    int64_t rt = (rows + c->pes - 1) / c->pes, tiles = (rows + rt - 1) / rt, m = tiles < c->pes ? tiles : c->pes;
    int64_t waves = (tiles + c->pes - 1) / c->pes;
    double simd = c->simd > 0 ? c->simd : 1, down = 0, up = 0;
    int k;
    for (k = 0; k < c->nlinks; k++) {
        double d = (double)pfvm__acl_first(c, m, k) * (double)(rt * cols * 4) / c->link_down[k];
        double u = (double)pfvm__acl_first(c, m, k) * (double)(rt * 4) / c->link_up[k];
        down = d > down ? d : down;
        up = u > up ? u : up;
    }
    return (double)waves * (down + (double)rt * ceil((double)cols / simd) + up + 2);
}

static pfvm_code pfvm__acl_cg_stream(pfvm_accel_ctx *c)
{
    pfvm__acl_cg_plan p;
    pfvm_accel_ctx *pc = &c->chain[0];
    int64_t dims[5], step[5], top, hw;
    double alone, fused;
    int x_major = 0;
    pfvm__acl_tile *tiles = NULL;
    pfvm__acl_waves wv;
    pfvm_code rc;
    memset(&p, 0, sizeof p);
    if (c->n_chain != 1 || strcmp(pc->node->op_type, "GlobalAveragePool") || pc->out[0].rank != 4 ||
        pc->in[0].rank != 4)
        return PFVM_ERR_UNSUPPORTED;
    if ((rc = pfvm__acl_conv_plan_init(c, &p.cv, dims, &x_major)) != PFVM_OK)
        return rc;
    p.res = c->res != NULL; /* the residual (a consumer of the pool's output) applies to the pooled values */
    p.cv.res = 0;
    hw = p.cv.w.out[0] * p.cv.w.out[1];
    alone = p.cv.cost + pfvm__acl_gpool_cost(c, dims[0] * p.cv.OC, hw);
    p.cv.rows = 0; /* the tile's output is [channels][rows][columns] */
    p.pool = pc;
    dims[3] = dims[4] = 1; /* the pool's output plane */
    fused = pfvm__acl_conv_search(c, &p.cv, dims, &x_major, pfvm__acl_cg_fit, &p, NULL);
    if (fused < 0 || fused >= alone)
        return PFVM_ERR_UNSUPPORTED;
    top = pfvm__acl_conv_places(&p.cv, hw);
    p.pout = p.cv.obuf[0] = p.cv.obuf[1] = top, top += pfvm__acl_al(p.cv.oct * 4);
    if (p.cv.lag) /* the second buffer of lagging stores */
        p.cv.obuf[1] = top, top += pfvm__acl_al(p.cv.oct * 4);
    p.rb = top, top += p.res ? pfvm__acl_al(p.cv.oct * 4) : 0;
    c->pe_used = top;
    step[0] = 1, step[1] = 1, step[2] = p.cv.oct, step[3] = 1, step[4] = 1;
    if ((rc = pfvm__acl_conv_tiles(c, dims, step, x_major, &tiles)) != PFVM_OK)
        goto done;
    c->post_done = c->post != NULL;
    c->res_done = p.res;
    c->chain_done = 1;
    memset(&wv, 0, sizeof wv);
    wv.load = pfvm__acl_cg_load, wv.body = pfvm__acl_cg_body, wv.store = pfvm__acl_cg_store;
    wv.chunk = pfvm__acl_cg_chunk, wv.nchunks = (p.cv.Cg + p.cv.icc - 1) / p.cv.icc, wv.user = &p;
    wv.flip = p.cv.lag ? pfvm__acl_cg_flip : NULL;
    rc = pfvm__acl_run_waves(c, tiles, &wv);
done:
    stbds_arrfree(tiles);
    return rc;
}

typedef struct pfvm__acl_rows_plan {
    int64_t cols, xb, out;
    int is_max;
} pfvm__acl_rows_plan;

static pfvm_code pfvm__acl_gpool_body(pfvm_accel_ctx *c, const pfvm__acl_tile *t, void *user)
{
    const pfvm__acl_rows_plan *p = (const pfvm__acl_rows_plan *)user;
    pfvm_code rc;
    if ((rc = c->emit(c, "red %s %lld %lld %lld %lld", p->is_max ? "max" : "sum", (long long)p->out, (long long)p->xb,
                      (long long)t->e[0], (long long)p->cols)) != PFVM_OK || p->is_max)
        return rc;
    return c->emit(c, "imm mul %lld %lld %.9g %lld", (long long)p->out, (long long)p->out, 1.0 / (double)p->cols,
                   (long long)t->e[0]);
}

static pfvm_code pfvm__acl_gpool_load(pfvm_accel_ctx *c, pfvm__acl_q *q, const pfvm__acl_tile *t, int64_t pe,
                                      void *user)
{
    const pfvm__acl_rows_plan *p = (const pfvm__acl_rows_plan *)user;
    return pfvm__acl_load(c, &q[0], pe, p->xb, c->in[0].dram + t->o[0] * p->cols * 4, 1, 1, t->e[0] * p->cols, 0, 0,
                          0, 0);
}

static pfvm_code pfvm__acl_gpool_store(pfvm_accel_ctx *c, const pfvm__acl_tile *t, int64_t pe, void *user)
{
    const pfvm__acl_rows_plan *p = (const pfvm__acl_rows_plan *)user;
    return pfvm__acl_store(c, pe, c->out[0].dram + t->o[0] * 4, p->out, 1, 1, t->e[0], 0, 0, 0, 0);
}

/* GlobalAverage/MaxPool: tiles of whole planes (rows of the spatial size). */
static pfvm_code pfvm__acl_gpool_stream(pfvm_accel_ctx *c)
{
    const pfvm_accel_arg *x = &c->in[0];
    int64_t rows = 1, cols = 1, rt;
    pfvm__acl_rows_plan p;
    pfvm__acl_tile *tiles = NULL;
    pfvm__acl_waves w;
    pfvm_code rc;
    int a;
    if (x->rank < 3)
        return pfvm__acl_unsupported(c, "inputs of rank 3 or more");
    for (a = 0; a < x->rank; a++)
        *(a < 2 ? &rows : &cols) *= x->dims[a];
    p.cols = cols;
    p.is_max = !strcmp(c->node->op_type, "GlobalMaxPool");
    rt = (rows + c->pes - 1) / c->pes;
    while (rt > 1 && pfvm__acl_al(rt * cols * 4) + pfvm__acl_al(rt * 4) > c->pe_mem)
        rt = (rt + 1) / 2;
    if (pfvm__acl_al(rt * cols * 4) + pfvm__acl_al(rt * 4) > c->pe_mem)
        return pfvm__acl_stream_nomem(c, pfvm__acl_al(cols * 4) + 16);
    p.xb = 0;
    p.out = pfvm__acl_al(rt * cols * 4);
    c->pe_used = p.out + pfvm__acl_al(rt * 4);
    memset(&w, 0, sizeof w);
    w.load = pfvm__acl_gpool_load, w.body = pfvm__acl_gpool_body, w.store = pfvm__acl_gpool_store, w.user = &p;
    if ((rc = pfvm__acl_tiling(c, 1, &rows, &rt, &tiles)) == PFVM_OK)
        rc = pfvm__acl_run_waves(c, tiles, &w);
    stbds_arrfree(tiles);
    return rc;
}

typedef struct pfvm__acl_gemm_plan {
    int64_t K, ab, bb, cb, out;
    int tb, bias; /* bias: 0 none, 1 a row of N, 2 M x N */
    double alpha, beta;
    int64_t batch, M, N;   /* Y is batch x M x N */
    int64_t abs, bbs;      /* elements from one batch of A (B) to the next; 0: shared by all batches */
    const pfvm_accel_arg *a, *b, *bv, *y; /* bv: the bias */
    int res;    /* pfvm_accel_ctx.res: the other operand's tile at rb */
    int64_t rb;
    int vec;    /* pfvm_accel_ctx.vec (no bias of its own): the vector's slice at cb */
    int keep;   /* B is a kept weight (pfvm_accel_ctx.keep_dram): its tiles at bb = keep_off */
    int row;    /* pfvm_accel_ctx.row: tiles of whole rows, the constant rows at poff, temporaries at toff */
    int64_t poff, toff;
} pfvm__acl_gemm_plan;

static pfvm_code pfvm__acl_gemm_body(pfvm_accel_ctx *c, const pfvm__acl_tile *t, void *user)
{
    const pfvm__acl_gemm_plan *p = (const pfvm__acl_gemm_plan *)user;
    long long O = p->out, mt = t->e[1], nt = t->e[2];
    pfvm_code rc;
    if ((rc = c->emit(c, "gemm %lld %lld %lld %lld %lld %lld %d", O, (long long)p->ab, (long long)p->bb, mt, nt,
                      (long long)p->K, p->tb)) != PFVM_OK ||
        (p->alpha != 1 && (rc = c->emit(c, "imm mul %lld %lld %.9g %lld", O, O, p->alpha, mt * nt)) != PFVM_OK))
        return rc;
    if (p->bias) {
        if (p->beta != 1 && (rc = c->emit(c, "imm mul %lld %lld %.9g %lld", (long long)p->cb, (long long)p->cb,
                                          p->beta, p->bias == 1 ? nt : mt * nt)) != PFVM_OK)
            return rc;
        rc = p->bias == 1 ? c->emit(c, "col add %lld %lld %lld %lld %lld", O, O, (long long)p->cb, mt, nt)
                          : c->emit(c, "bin add %lld %lld %lld %lld", O, O, (long long)p->cb, mt * nt);
        if (rc != PFVM_OK)
            return rc;
    }
    if (p->vec && (rc = c->vec(c, O, p->cb, mt, nt)) != PFVM_OK)
        return rc;
    if (p->res && (rc = c->res(c, O, p->rb, mt * nt)) != PFVM_OK)
        return rc;
    if (c->post && (rc = c->post(c, O, mt * nt)) != PFVM_OK)
        return rc;
    return p->row ? c->row(c, O, mt, p->poff, p->toff) : PFVM_OK; /* nt is N: whole rows */
}

/* PE bytes of a Gemm tile of mt x nt. */
static int64_t pfvm__acl_gemm_bytes(const pfvm__acl_gemm_plan *p, int64_t mt, int64_t nt)
{
    return pfvm__acl_al(mt * p->K * 4) + pfvm__acl_al(nt * p->K * 4) + (p->res ? 3 : 2) * pfvm__acl_al(mt * nt * 4);
}

/* Cycles of a wave of m Gemm tiles by the simulator's cost model: tiles
 * row-major over M x N (neighbours share A's rows; nb: tiles per row), or
 * column-major (n_major: neighbours share B's columns; nb: tiles per
 * column). */
static double pfvm__acl_gemm_wave(const pfvm_accel_ctx *c, const pfvm__acl_gemm_plan *p, int64_t m, int64_t mt,
                                  int64_t nt, int64_t nb, int n_major)
{
    double t = ceil((double)mt * (double)nt * (double)p->K / c->macs);
    int k;
    for (k = 0; k < c->nlinks; k++) {
        int64_t mk = pfvm__acl_first(c, m, k);
        double outer = c->link_bcast[k] ? (double)((mk + nb - 1) / nb) : (double)mk;
        double inner = c->link_bcast[k] ? (double)(mk < nb ? mk : nb) : (double)mk;
        double rows = n_major ? inner : outer, cols = n_major ? outer : inner;
        double down = (rows * (double)mt + cols * (double)nt) * (double)p->K * 4 / c->link_down[k];
        double up = (double)mk * (double)(mt * nt) * 4 / c->link_up[k];
        if (down > t)
            t = down;
        if (up > t)
            t = up;
    }
    return t + 1;
}

/* A candidate Gemm tile of mt x nt, its neighbours sharing B's columns
 * when n_major, for pfvm__acl_gemm_each. */
typedef pfvm_code (*pfvm__acl_gemm_try_fn)(pfvm_accel_ctx *c, pfvm__acl_gemm_plan *p, int64_t mt, int64_t nt,
                                           int n_major, void *user);

/* PE bytes the row consumer (ctx.row) of a Gemm tile of mt whole rows
 * takes past the tile's own: its constant rows and temporaries; 0 without
 * one, -1 when it does not lower on mt rows. */
static int64_t pfvm__acl_gemm_row_bytes(pfvm_accel_ctx *c, const pfvm__acl_gemm_plan *p, int64_t mt)
{
    int64_t tmp;
    if (!p->row)
        return 0;
    tmp = c->row_tmp(c, mt);
    return tmp < 0 ? -1 : pfvm__acl_al(c->row_par * c->row_cols * 4) + tmp;
}

/* Calls try for every Gemm tile that fits a PE (each extent halved 0, 1,
 * 2... times, both tile orders; with a row consumer, whole rows only),
 * stopping at its first error: the one tile loop of the model search and
 * the exact-cost deal search. */
static pfvm_code pfvm__acl_gemm_each(pfvm_accel_ctx *c, pfvm__acl_gemm_plan *p, pfvm__acl_gemm_try_fn try_tile,
                                     void *user)
{
    int64_t mt, nt, extra;
    int o;
    pfvm_code rc = PFVM_OK;
    for (mt = p->M; rc == PFVM_OK; mt = (mt + 1) / 2) {
        extra = pfvm__acl_gemm_row_bytes(c, p, mt);
        for (nt = p->N; rc == PFVM_OK && extra >= 0; nt = (nt + 1) / 2) {
            for (o = 0; o < 2 && rc == PFVM_OK && pfvm__acl_gemm_bytes(p, mt, nt) + extra <= c->pe_mem; o++)
                rc = try_tile(c, p, mt, nt, o, user);
            if (nt == 1 || p->row)
                break;
        }
        if (mt == 1)
            break;
    }
    return rc;
}

/* The best tile so far of a search: its cost (< 0: none yet), extents,
 * order, and for the deal search how its partial wave is dealt. */
typedef struct pfvm__acl_gemm_best {
    double cost;
    int64_t *step, gr;
    int *n_major, deal_all;
    struct pfvm__acl_gemm_eval *ev; /* the deal search's scratch */
} pfvm__acl_gemm_best;

/* pfvm__acl_gemm_search's candidate: its cost by the cost model's waves. */
static pfvm_code pfvm__acl_gemm_try_model(pfvm_accel_ctx *c, pfvm__acl_gemm_plan *p, int64_t mt, int64_t nt, int o,
                                          void *user)
{
    pfvm__acl_gemm_best *b = (pfvm__acl_gemm_best *)user;
    int64_t nbn = (p->N + nt - 1) / nt, nbm = (p->M + mt - 1) / mt, tiles = p->batch * nbm * nbn;
    double cost = (double)(tiles / c->pes) * pfvm__acl_gemm_wave(c, p, c->pes, mt, nt, o ? nbm : nbn, o);
    if (tiles % c->pes)
        cost += pfvm__acl_gemm_wave(c, p, tiles % c->pes, mt, nt, o ? nbm : nbn, o);
    if (b->cost < 0 || cost < b->cost) {
        b->cost = cost;
        b->step[1] = mt, b->step[2] = nt;
        *b->n_major = o;
    }
    return PFVM_OK;
}

/* The Gemm tile (each extent halved 0, 1, 2... times) that the cost model
 * finds fastest among those that fit a PE; returns its cost, < 0 when
 * none fits. */
static double pfvm__acl_gemm_search(pfvm_accel_ctx *c, pfvm__acl_gemm_plan *p, int64_t *step, int *n_major)
{
    pfvm__acl_gemm_best b;
    memset(&b, 0, sizeof b);
    b.cost = -1, b.step = step, b.n_major = n_major;
    (void)pfvm__acl_gemm_each(c, p, pfvm__acl_gemm_try_model, &b);
    step[0] = 1;
    return b.cost;
}

static pfvm_code pfvm__acl_load_view(pfvm_accel_ctx *c, pfvm__acl_q *q, int64_t pe, int64_t d,
                                     const pfvm_accel_arg *x, int64_t base, int64_t rows, int64_t cols, int64_t rs);

/* Tiles over (batch, rows of A, columns of the result), K whole, each
 * tile's rows of A and columns of B loaded into its PE; shared by Gemm
 * and MatMul. An operand that is a strided view (a Transpose's output
 * read in place, pfvm_acl_view_of) is loaded through its map. */
/* The tag of B's tile of columns [n0, n0 + nt) from root byte bd in a kept
 * weight's region (pfvm_accel_ctx.keep_tag): its first byte, width and
 * orientation. */
static int64_t pfvm__acl_keep_tag(const pfvm__acl_gemm_plan *p, int64_t bd, int64_t n0, int64_t nt)
{
    return ((bd + n0 * (p->tb ? p->K : 1) * 4) * 65536 + nt) * 2 + p->tb;
}

static pfvm_code pfvm__acl_gemm_load(pfvm_accel_ctx *c, pfvm__acl_q *q, const pfvm__acl_tile *t, int64_t pe, void *user)
{
    const pfvm__acl_gemm_plan *p = (const pfvm__acl_gemm_plan *)user;
    int64_t bi = t->o[0], m0 = t->o[1], n0 = t->o[2], mt = t->e[1], nt = t->e[2], N = p->N;
    int64_t ad = p->a->dram + (bi * p->abs + m0 * p->K) * 4, bd = p->b->dram + bi * p->bbs * 4;
    int k;
    pfvm_code rc;
    if (p->a->vrank > 0)
        rc = pfvm__acl_load_view(c, &q[0], pe, p->ab, p->a, bi * p->abs + m0 * p->K, mt, p->K, p->K);
    else
        rc = pfvm__acl_load(c, &q[0], pe, p->ab, ad, 1, 1, mt * p->K, 0, 0, 0, 0);
    if (rc != PFVM_OK)
        return rc;
    if (p->b->vrank > 0)
        rc = p->tb ? pfvm__acl_load_view(c, &q[1], pe, p->bb, p->b, bi * p->bbs + n0 * p->K, nt, p->K, p->K)
                   : pfvm__acl_load_view(c, &q[1], pe, p->bb, p->b, bi * p->bbs + n0, p->K, nt, N);
    else if (p->keep && c->keep_tag[pe] == pfvm__acl_keep_tag(p, bd, n0, nt))
        rc = PFVM_OK; /* the PE holds this tile of the weight from an earlier reader */
    else {
        rc = p->tb ? pfvm__acl_load(c, &q[1], pe, p->bb, bd + n0 * p->K * 4, 1, 1, nt * p->K, 0, 0, 0, 0)
                   : pfvm__acl_load(c, &q[1], pe, p->bb, bd + n0 * 4, 1, p->K, nt, 0, nt, 0, N);
        if (p->keep)
            c->keep_tag[pe] = pfvm__acl_keep_tag(p, bd, n0, nt);
    }
    if (rc != PFVM_OK)
        return rc;
    if (p->bias == 1 && (rc = pfvm__acl_load(c, &q[2], pe, p->cb, p->bv->dram + n0 * 4, 1, 1, nt, 0, 0, 0, 0)) != PFVM_OK)
        return rc;
    if (p->vec && (rc = pfvm__acl_load(c, &q[2], pe, p->cb, c->vec_dram + n0 * 4, 1, 1, nt, 0, 0, 0, 0)) != PFVM_OK)
        return rc;
    if (p->bias == 2 &&
        (rc = pfvm__acl_load(c, &q[2], pe, p->cb, p->bv->dram + (m0 * N + n0) * 4, 1, mt, nt, 0, nt, 0, N)) != PFVM_OK)
        return rc;
    for (k = 0; p->row && k < c->row_par && rc == PFVM_OK; k++) /* the row consumer's constant rows */
        rc = pfvm__acl_load(c, &q[3], pe, p->poff + k * N * 4, c->row_dram[k], 1, 1, N, 0, 0, 0, 0);
    if (rc != PFVM_OK)
        return rc;
    if (p->res)
        return pfvm__acl_load(c, &q[2], pe, p->rb, c->res_dram + ((bi * p->M + m0) * N + n0) * 4, 1, mt, nt, 0, nt, 0, N);
    return PFVM_OK;
}

static pfvm_code pfvm__acl_gemm_store(pfvm_accel_ctx *c, const pfvm__acl_tile *t, int64_t pe, void *user)
{
    const pfvm__acl_gemm_plan *p = (const pfvm__acl_gemm_plan *)user;
    return pfvm__acl_store(c, pe, p->y->dram + ((t->o[0] * p->M + t->o[1]) * p->N + t->o[2]) * 4, p->out, 1, t->e[1],
                           t->e[2], 0, p->N, 0, t->e[2]);
}

/* PE offsets of a Gemm tile of mt x nt: A's rows, B's columns, the
 * output, the bias (or vector), the residual and the row consumer's
 * constant rows and temporaries; returns the bytes used before those
 * temporaries. */
static int64_t pfvm__acl_gemm_offsets(const pfvm_accel_ctx *c, pfvm__acl_gemm_plan *p, int64_t mt, int64_t nt)
{
    p->ab = 0;
    p->bb = pfvm__acl_al(mt * p->K * 4);
    p->out = p->bb + pfvm__acl_al(nt * p->K * 4);
    p->cb = p->out + pfvm__acl_al(mt * nt * 4);
    p->rb = p->cb + pfvm__acl_al(mt * nt * 4);
    p->poff = p->rb + (p->res ? pfvm__acl_al(mt * nt * 4) : 0);
    p->toff = p->poff + (p->row ? pfvm__acl_al(c->row_par * c->row_cols * 4) : 0);
    return p->toff;
}

/* Instances under the first link (groups on mncore2). */
static int64_t pfvm__acl_groups(const pfvm_accel_ctx *c)
{
    return c->nlinks > 0 && c->link_pes[0] > 0 ? c->pes / c->link_pes[0] : 1;
}

/* Orders tiles by their key (then their place). */
typedef struct pfvm__acl_tkey {
    int64_t key, at;
} pfvm__acl_tkey;

static int pfvm__acl_tkey_cmp(const void *pa, const void *pb)
{
    const pfvm__acl_tkey *a = (const pfvm__acl_tkey *)pa, *b = (const pfvm__acl_tkey *)pb;
    if (a->key != b->key)
        return a->key < b->key ? -1 : 1;
    return a->at < b->at ? -1 : a->at > b->at;
}

/* The tiles of mt x nt over (batch, M, N), row-major, or column-major
 * (n_major: tiled over (batch, N, M), the axes swapped back); with gr > 1
 * (batch 1), reordered into gr x gc blocks of the M x N grid of tiles,
 * block by block (each block's tiles in the order above), so that the
 * wave driver deals each group a block: a group then reads 1/gr of A and
 * 1/gc of B instead of all of A or all of B. */
static pfvm_code pfvm__acl_gemm_tiles(pfvm_accel_ctx *c, const pfvm__acl_gemm_plan *p, int64_t mt, int64_t nt,
                                      int n_major, int64_t gr, int64_t gc, pfvm__acl_tile **tiles)
{
    int64_t sw[3], step[3], i, n, nbm = (p->M + mt - 1) / mt, nbn = (p->N + nt - 1) / nt;
    pfvm__acl_tkey *keys;
    pfvm__acl_tile *copy;
    pfvm_code rc;
    sw[0] = p->batch, sw[1] = n_major ? p->N : p->M, sw[2] = n_major ? p->M : p->N;
    step[0] = 1, step[1] = n_major ? nt : mt, step[2] = n_major ? mt : nt;
    if ((rc = pfvm__acl_tiling(c, 3, sw, step, tiles)) != PFVM_OK)
        return rc;
    n = (int64_t)stbds_arrlen(*tiles);
    for (i = 0; n_major && i < n; i++) {
        int64_t o1 = (*tiles)[i].o[1], e1 = (*tiles)[i].e[1];
        (*tiles)[i].o[1] = (*tiles)[i].o[2], (*tiles)[i].e[1] = (*tiles)[i].e[2];
        (*tiles)[i].o[2] = o1, (*tiles)[i].e[2] = e1;
    }
    if (gr * gc <= 1 || p->batch != 1 || n < 2)
        return PFVM_OK;
    keys = (pfvm__acl_tkey *)pfvm__malloc((size_t)n * sizeof *keys);
    copy = (pfvm__acl_tile *)pfvm__malloc((size_t)n * sizeof *copy);
    if (!keys || !copy) {
        pfvm__free(keys);
        pfvm__free(copy);
        return pfvm__acl_nomem(c);
    }
    for (i = 0; i < n; i++) {
        int64_t bi = (*tiles)[i].o[1] / mt * gr / nbm, bj = (*tiles)[i].o[2] / nt * gc / nbn;
        keys[i].key = bi * gc + bj, keys[i].at = i;
        copy[i] = (*tiles)[i];
    }
    qsort(keys, (size_t)n, sizeof *keys, pfvm__acl_tkey_cmp);
    for (i = 0; i < n; i++)
        (*tiles)[i] = copy[keys[i].at];
    pfvm__free(keys);
    pfvm__free(copy);
    return PFVM_OK;
}

/* Scratch of the exact wave cost: per link, its instances' bytes down and up. */
typedef struct pfvm__acl_gemm_eval {
    double *down[8], *up[8], *carry;
    int64_t *inst;
    double *save[8]; /* the links' load before B's lines (a kept weight's share) */
} pfvm__acl_gemm_eval;

/* Whether B's tiles of width nt go to the kept weight's region (see
 * pfvm_accel_ctx.keep_dram). */
static int pfvm__acl_gemm_keeps(const pfvm_accel_ctx *c, const pfvm__acl_gemm_plan *p, int64_t nt)
{
    return c->keep_bytes > 0 && c->keep_tag && p->b->vrank == 0 && p->b->dram == c->keep_dram && nt < 65536 &&
           pfvm__acl_al(nt * p->K * 4) <= c->keep_bytes;
}

/* Cycles of a wave of n Gemm tiles (tw) by the simulator's cost model,
 * from the load lines the wave would write (pfvm__acl_loads_cost); the
 * vector ops after the gemm are not counted. */
static pfvm_code pfvm__acl_gemm_wave_exact(pfvm_accel_ctx *c, pfvm__acl_gemm_plan *p, pfvm__acl_gemm_eval *ev,
                                           const pfvm__acl_tile *tw, int64_t n, double *cycles)
{
    pfvm__acl_q q[4];
    int64_t i, k, x;
    double t = 0;
    int share;
    pfvm_code rc = PFVM_OK;
    pfvm__acl_qinit(q);
    for (k = 0; k < c->nlinks; k++)
        for (x = 0; x < c->pes / c->link_pes[k]; x++)
            ev->down[k][x] = ev->up[k][x] = 0;
    for (i = 0; i < n && rc == PFVM_OK; i++) {
        int64_t pe = pfvm__acl_pe(c, n, i);
        double g = ceil((double)(tw[i].e[1] * tw[i].e[2]) * (double)p->K / c->macs);
        t = g > t ? g : t;
        rc = pfvm__acl_gemm_load(c, q, &tw[i], pe, p);
        for (k = 0; k < c->nlinks; k++)
            ev->up[k][pe / c->link_pes[k]] += (double)(tw[i].e[1] * tw[i].e[2]) * 4;
    }
    if (rc != PFVM_OK) {
        pfvm__acl_qfree(q);
        return rc;
    }
    pfvm__acl_loads_cost(c, &q[0], ev->down, ev->inst, ev->carry);
    pfvm__acl_loads_cost(c, &q[2], ev->down, ev->inst, ev->carry);
    if (p->row)
        pfvm__acl_loads_cost(c, &q[3], ev->down, ev->inst, ev->carry);
    /* a kept weight read by keep_readers nodes in the same tiles is loaded
     * by the first only: each counts its share of B's lines */
    share = c->keep_readers > 1 && pfvm__acl_gemm_keeps(c, p, tw[0].e[2]) && ev->save[0];
    for (k = 0; share && k < c->nlinks; k++)
        memcpy(ev->save[k], ev->down[k], (size_t)(c->pes / c->link_pes[k]) * sizeof(double));
    pfvm__acl_loads_cost(c, &q[1], ev->down, ev->inst, ev->carry);
    for (k = 0; share && k < c->nlinks; k++)
        for (x = 0; x < c->pes / c->link_pes[k]; x++)
            ev->down[k][x] = ev->save[k][x] + (ev->down[k][x] - ev->save[k][x]) / c->keep_readers;
    for (k = 0; k < c->nlinks; k++)
        for (x = 0; x < c->pes / c->link_pes[k]; x++) {
            double d = ev->down[k][x] / c->link_down[k], u = ev->up[k][x] / c->link_up[k];
            t = d > t ? d : t;
            t = u > t ? u : t;
        }
    *cycles = ceil(t) + 1;
    return PFVM_OK;
}

/* Cycles of the whole Gemm in tiles of mt x nt (the first full wave
 * counted for every full wave), dealt by deal_all. */
static pfvm_code pfvm__acl_gemm_exact(pfvm_accel_ctx *c, pfvm__acl_gemm_plan *p, pfvm__acl_gemm_eval *ev,
                                      int64_t mt, int64_t nt, int n_major, int deal_all, int64_t gr, double *cycles)
{
    pfvm__acl_tile *tiles = NULL;
    int64_t count, full;
    double w = 0;
    pfvm_code rc;
    pfvm__acl_gemm_offsets(c, p, mt, nt);
    if ((rc = pfvm__acl_gemm_tiles(c, p, mt, nt, n_major, gr, pfvm__acl_groups(c) / gr, &tiles)) != PFVM_OK) {
        stbds_arrfree(tiles);
        return rc;
    }
    count = (int64_t)stbds_arrlen(tiles), full = count / c->pes;
    c->deal_all = deal_all;
    *cycles = 0;
    if (full && (rc = pfvm__acl_gemm_wave_exact(c, p, ev, tiles, c->pes, &w)) == PFVM_OK)
        *cycles = (double)full * w;
    if (rc == PFVM_OK && count % c->pes &&
        (rc = pfvm__acl_gemm_wave_exact(c, p, ev, tiles + full * c->pes, count % c->pes, &w)) == PFVM_OK)
        *cycles += w;
    c->deal_all = 0;
    stbds_arrfree(tiles);
    return rc;
}

/* pfvm__acl_gemm_deal's candidate: its partial wave dealt over every
 * level's instances in each block shape gr x (groups / gr), by the exact
 * cost of its load lines. */
static pfvm_code pfvm__acl_gemm_try_deal(pfvm_accel_ctx *c, pfvm__acl_gemm_plan *p, int64_t mt, int64_t nt, int o,
                                         void *user)
{
    pfvm__acl_gemm_best *b = (pfvm__acl_gemm_best *)user;
    int64_t g, groups = pfvm__acl_groups(c);
    double cost = 0;
    pfvm_code rc = PFVM_OK;
    for (g = 1; g <= groups && rc == PFVM_OK; g *= 2)
        if (groups % g == 0 && (rc = pfvm__acl_gemm_exact(c, p, b->ev, mt, nt, o, 1, g, &cost)) == PFVM_OK &&
            cost < b->cost) {
            b->cost = cost;
            b->step[1] = mt, b->step[2] = nt;
            *b->n_major = o, b->deal_all = 1, b->gr = g;
        }
    return rc;
}

/* Whether a partial wave dealt over every level's instances (deal_all),
 * its tiles in gr x (groups / gr) blocks (*gr, pfvm__acl_gemm_tiles),
 * beats the searched tile (step, n_major, dealt the default way) by the
 * exact cost of their load lines: then the fastest such tile replaces it.
 * A full wave is dealt the same either way. */
static pfvm_code pfvm__acl_gemm_deal(pfvm_accel_ctx *c, pfvm__acl_gemm_plan *p, int64_t *step, int *n_major,
                                     int *deal_all, int64_t *gr)
{
    pfvm__acl_gemm_eval ev;
    pfvm__acl_gemm_best b;
    int64_t k;
    int ok = c->nlinks > 0 && c->nlinks <= 8;
    pfvm_code rc = PFVM_OK;
    *deal_all = 0, *gr = 1;
    if (p->batch * p->M * p->N >= c->pes * 4 || !ok)
        return PFVM_OK; /* mostly full waves: nothing to gain */
    memset(&ev, 0, sizeof ev);
    ev.inst = (int64_t *)pfvm__malloc((size_t)c->pes * sizeof *ev.inst);
    ev.carry = (double *)pfvm__malloc((size_t)c->pes * sizeof *ev.carry);
    ok = ev.inst && ev.carry;
    for (k = 0; k < c->nlinks && ok; k++) {
        ev.down[k] = (double *)pfvm__malloc((size_t)(c->pes / c->link_pes[k]) * sizeof(double));
        ev.up[k] = (double *)pfvm__malloc((size_t)(c->pes / c->link_pes[k]) * sizeof(double));
        ev.save[k] = c->keep_readers > 1 ? (double *)pfvm__malloc((size_t)(c->pes / c->link_pes[k]) * sizeof(double))
                                         : NULL;
        ok = ev.down[k] && ev.up[k] && (c->keep_readers <= 1 || ev.save[k]);
    }
    if (!ok)
        rc = pfvm__acl_nomem(c);
    memset(&b, 0, sizeof b);
    b.step = step, b.n_major = n_major, b.ev = &ev;
    if (rc == PFVM_OK)
        rc = pfvm__acl_gemm_exact(c, p, &ev, step[1], step[2], *n_major, 0, 1, &b.cost);
    if (rc == PFVM_OK)
        rc = pfvm__acl_gemm_each(c, p, pfvm__acl_gemm_try_deal, &b);
    *deal_all = b.deal_all, *gr = b.deal_all ? b.gr : 1;
    for (k = 0; k < 8; k++) {
        pfvm__free(ev.down[k]);
        pfvm__free(ev.up[k]);
        pfvm__free(ev.save[k]);
    }
    pfvm__free(ev.inst);
    pfvm__free(ev.carry);
    return rc;
}

static double pfvm__acl_spread_cost(const pfvm_accel_ctx *c, int64_t n, double in, double shared, double out);

/* Whether the Gemm applies its row consumer (ctx.row, the output's rows
 * whole, N of them per row): its tiles of whole rows, costed by the model
 * with the consumer's PE cycles (ctx.row_cycles) per wave, are estimated
 * cheaper than the best tiles without it followed by the consumer's own
 * traffic (each row in and out, its constant rows on every PE; its
 * compute left out: a lower estimate of the node it removes). Sets
 * p->row. */
static int pfvm__acl_gemm_row(pfvm_accel_ctx *c, pfvm__acl_gemm_plan *p)
{
    int64_t step[3] = {1, 1, 1}, rows = p->batch * p->M, waves;
    int n_major = 0;
    double fused, alone, pe;
    if (c->row_cols != p->N || !c->row_tmp || !c->row_cycles)
        return 0;
    p->row = 0;
    if ((alone = pfvm__acl_gemm_search(c, p, step, &n_major)) < 0)
        return 0;
    alone += pfvm__acl_spread_cost(c, rows, (double)p->N * 4, (double)c->row_par * p->N * 4, (double)p->N * 4);
    p->row = 1;
    if ((fused = pfvm__acl_gemm_search(c, p, step, &n_major)) < 0 || (pe = c->row_cycles(c, step[1])) < 0) {
        p->row = 0;
        return 0;
    }
    waves = (p->batch * ((p->M + step[1] - 1) / step[1]) + c->pes - 1) / c->pes;
    fused += pe * (double)waves;
    p->row = fused < alone;
    return p->row;
}

static pfvm_code pfvm__acl_gemm_run(pfvm_accel_ctx *c, pfvm__acl_gemm_plan *p, const pfvm_accel_arg *a,
                                    const pfvm_accel_arg *b, const pfvm_accel_arg *bias, const pfvm_accel_arg *y)
{
    int64_t step[3] = {1, 1, 1};
    pfvm__acl_tile *tiles = NULL;
    pfvm_code rc;
    int64_t gr = 1;
    int n_major = 0, deal_all = 0;
    p->res = c->res != NULL;
    p->vec = c->vec != NULL && !p->bias;
    p->a = a, p->b = b, p->bv = bias, p->y = y;
    /* a scaled view's factor (pfvm_acl_view_scale) scales A B: alpha */
    if (a->vrank > 0 && a->vscale != 0)
        p->alpha *= a->vscale;
    if (b->vrank > 0 && b->vscale != 0)
        p->alpha *= b->vscale;
    if (c->row && !pfvm__acl_gemm_row(c, p))
        return pfvm__acl_unsupported(c, "a Gemm's row consumer in whole rows only, where the model finds it cheaper");
    if (pfvm__acl_gemm_search(c, p, step, &n_major) < 0)
        return pfvm__acl_stream_nomem(c, pfvm__acl_gemm_bytes(p, 1, 1));
    if ((rc = pfvm__acl_gemm_deal(c, p, step, &n_major, &deal_all, &gr)) != PFVM_OK)
        return rc;
    c->pe_used = pfvm__acl_gemm_offsets(c, p, step[1], step[2]) + (p->row ? c->row_tmp(c, step[1]) : 0);
    /* a weight read again later: its tiles in the kept region, loaded
     * once (a tile's tag packs its width in 16 bits) */
    p->keep = pfvm__acl_gemm_keeps(c, p, step[2]);
    if (p->keep)
        p->bb = c->keep_off;
    c->post_done = c->post != NULL;
    c->res_done = p->res;
    c->vec_done = p->vec;
    c->row_done = p->row;
    if ((rc = pfvm__acl_gemm_tiles(c, p, step[1], step[2], n_major, gr, pfvm__acl_groups(c) / gr, &tiles)) ==
        PFVM_OK) {
        pfvm__acl_waves w;
        memset(&w, 0, sizeof w);
        w.load = pfvm__acl_gemm_load, w.body = pfvm__acl_gemm_body, w.store = pfvm__acl_gemm_store, w.user = p;
        c->deal_all = deal_all;
        rc = pfvm__acl_run_waves(c, tiles, &w);
        c->deal_all = 0;
    }
    stbds_arrfree(tiles);
    return rc;
}

/* Gemm (no transA). */
PFVM_INTERNAL pfvm_code pfvm_acl_gemm_stream(pfvm_accel_ctx *c)
{
    const pfvm_accel_arg *a = &c->in[0], *b = &c->in[1], *y = &c->out[0];
    const pfvm_accel_arg *bias = c->n_in > 2 && c->in[2].rank >= 0 ? &c->in[2] : NULL;
    pfvm__acl_gemm_plan p;
    memset(&p, 0, sizeof p);
    p.tb = (int)pfvm_node_attr_int(c->node, "transB", 0);
    p.alpha = pfvm_node_attr_float(c->node, "alpha", 1);
    p.beta = pfvm_node_attr_float(c->node, "beta", 1);
    if (a->rank != 2 || b->rank != 2 || y->rank != 2 || pfvm_node_attr_int(c->node, "transA", 0))
        return pfvm__acl_unsupported(c, "streamed Gemm without transA");
    p.batch = 1, p.M = y->dims[0], p.N = y->dims[1], p.K = a->dims[1];
    if (bias) {
        int64_t be = 1, i2;
        for (i2 = 0; i2 < bias->rank; i2++)
            be *= bias->dims[i2];
        if (be == p.N && (bias->rank == 1 || (bias->rank == 2 && bias->dims[0] == 1)))
            p.bias = 1;
        else if (bias->rank == 2 && bias->dims[0] == p.M && bias->dims[1] == p.N)
            p.bias = 2;
        else
            return pfvm__acl_unsupported(c, "streamed Gemm with a bias of N or M x N elements");
    }
    return pfvm__acl_gemm_run(c, &p, a, b, bias, y);
}

/* Elements of x's batch (its dims before the last two) from one batch to
 * the next in a MatMul whose result has y_batch batches of m x n: x's
 * matrix size when x has all of y's batch dims, 0 when it has none (one
 * matrix shared by every batch), -1 otherwise (a broadcast inside the
 * batch, not streamed). */
static int64_t pfvm__acl_mm_bstride(const pfvm_accel_arg *x, const pfvm_accel_arg *y)
{
    int i;
    if (x->rank <= 2)
        return 0;
    if (x->rank != y->rank)
        return -1;
    for (i = 0; i + 2 < y->rank; i++)
        if (x->dims[i] != y->dims[i])
            return -1;
    return x->dims[x->rank - 2] * x->dims[x->rank - 1];
}

/* MatMul: B 2-D (a weight or an activation): A's rows flattened, one Gemm;
 * batched (B with leading dims): tiles over (batch, rows, columns), each
 * operand with all of the result's batch dims or none. */
static pfvm_code pfvm__acl_matmul_stream(pfvm_accel_ctx *c)
{
    const pfvm_accel_arg *a = &c->in[0], *b = &c->in[1], *y = &c->out[0];
    pfvm__acl_gemm_plan p;
    int64_t i;
    memset(&p, 0, sizeof p);
    p.alpha = p.beta = 1;
    if (a->rank < 1 || b->rank < 2 || y->rank < 1)
        return pfvm__acl_unsupported(c, "streamed MatMul with B of rank 2 or more");
    p.K = a->dims[a->rank - 1];
    p.N = b->dims[b->rank - 1];
    if (b->dims[b->rank - 2] != p.K || p.K < 1 || p.N < 1)
        return pfvm__acl_unsupported(c, "streamed MatMul whose inner dims agree");
    for (p.batch = 1, i = 0; i + 2 < y->rank; i++)
        p.batch *= y->dims[i];
    if (b->rank == 2) { /* every row of A times one B */
        int64_t rows = 1;
        for (i = 0; i + 1 < a->rank; i++)
            rows *= a->dims[i];
        p.batch = 1, p.M = rows;
    } else {
        p.M = a->rank >= 2 ? a->dims[a->rank - 2] : 1;
        p.abs = pfvm__acl_mm_bstride(a, y);
        p.bbs = pfvm__acl_mm_bstride(b, y);
        if (p.abs < 0 || p.bbs < 0)
            return pfvm__acl_unsupported(c, "streamed MatMul whose operands have all of the batch dims or none");
    }
    if (p.batch < 1 || p.M < 1)
        return PFVM_OK; /* an empty result */
    return pfvm__acl_gemm_run(c, &p, a, b, NULL, y);
}

/* Concat: each input's rows (the axes before `axis`) copied through the
 * PEs into their columns of the output, in pieces of a PE's memory. */
static pfvm_code pfvm__acl_concat_stream(pfvm_accel_ctx *c)
{
    const pfvm_accel_arg *y = &c->out[0];
    int64_t axis = pfvm_node_attr_int(c->node, "axis", 0), outer = 1, inner_y = 1, at = 0, wave, i;
    pfvm__acl_tile *tiles = NULL;
    pfvm__acl_q q[4];
    pfvm_code rc = PFVM_OK;
    int a, k;
    if (axis < 0)
        axis += y->rank;
    if (axis < 0 || axis >= y->rank)
        return pfvm__acl_unsupported(c, "Concat along an axis of its output");
    for (a = 0; a < y->rank; a++)
        *(a < axis ? &outer : &inner_y) *= y->dims[a];
    /* tile: o[0] input, o[1] first row, o[2] first column, o[3] its column in y */
    pfvm__acl_qinit(q);
    for (k = 0; k < c->n_in; k++) {
        const pfvm_accel_arg *x = &c->in[k];
        int64_t inner = 1, dims[2], step[2], per, first = (int64_t)stbds_arrlen(tiles), j;
        if (x->rank < 0)
            continue;
        for (a = (int)axis; a < x->rank; a++)
            inner *= x->dims[a];
        if (!inner)
            continue;
        per = (outer * inner + c->pes - 1) / c->pes;
        if (per > c->pe_mem / 4)
            per = c->pe_mem / 4;
        if (per < 1) {
            rc = pfvm__acl_stream_nomem(c, 4);
            goto done;
        }
        if (per * 4 > c->pe_used)
            c->pe_used = per * 4;
        step[1] = inner < per ? inner : per;
        step[0] = per / step[1] > 0 ? per / step[1] : 1;
        dims[0] = outer, dims[1] = inner;
        if ((rc = pfvm__acl_tiling(c, 2, dims, step, &tiles)) != PFVM_OK)
            goto done;
        for (j = first; j < (int64_t)stbds_arrlen(tiles); j++) {
            tiles[j].o[2] = tiles[j].o[1], tiles[j].e[2] = tiles[j].e[1];
            tiles[j].o[1] = tiles[j].o[0], tiles[j].e[1] = tiles[j].e[0];
            tiles[j].o[0] = k, tiles[j].o[3] = at, tiles[j].o[4] = inner;
        }
        at += inner;
    }
    for (wave = 0; wave < (int64_t)stbds_arrlen(tiles); wave += c->pes) {
        int64_t n = (int64_t)stbds_arrlen(tiles) - wave < c->pes ? (int64_t)stbds_arrlen(tiles) - wave : c->pes;
        for (i = 0; i < n; i++) {
            const pfvm__acl_tile *t = &tiles[wave + i];
            int64_t inner = t->o[4], rows = t->e[1], cols = t->e[2];
            if ((rc = pfvm__acl_load(c, &q[0], i, 0, c->in[t->o[0]].dram + (t->o[1] * inner + t->o[2]) * 4, 1, rows,
                                     cols, 0, cols, 0, inner)) != PFVM_OK ||
                (rc = pfvm__acl_flush(c, &q[0])) != PFVM_OK ||
                (rc = pfvm__acl_store(c, i, y->dram + (t->o[1] * inner_y + t->o[3] + t->o[2]) * 4, 0, 1, rows, cols, 0,
                                      inner_y, 0, cols)) != PFVM_OK)
                goto done;
        }
        if ((rc = c->emit(c, "barrier")) != PFVM_OK)
            goto done;
    }
done:
    pfvm__acl_qfree(q);
    stbds_arrfree(tiles);
    return rc;
}

/* ---- Transpose and Slice streamed: a strided copy through the PEs ----
 *
 * y[o] = x[base + sum o_a * xs[a]] (elements) with y row-major: the output
 * is cut into boxes over its last three axes (after merging the axes that
 * stay contiguous), one box per PE, each brought in by one strided `load`
 * and written back by one `store`; no compute but the copy's consumers
 * applied to the box before the store (ctx.res: the residual's box loaded
 * beside it; ctx.post), so that they are views: the TransformerEncoder's
 * Transpose + residual Add after the attention, Transpose + Div by
 * sqrt(head dim) of the queries. */

typedef struct pfvm__acl_affine {
    int rank;
    int64_t yd[5], xs[5], ys[5], base;
    int64_t roff; /* PE byte offset of the residual's box (ctx.res), past the largest tile */
    int64_t poff, toff; /* the row consumer's constant rows and temporaries (ctx.row), past the boxes */
    const pfvm__acl_tile *tiles; /* the tiles, in wave order (a PE's first tile loads the constant rows) */
} pfvm__acl_affine;

/* Merges output axes that are contiguous in both x and y, and appends a
 * unit axis with stride 1 when the last axis is strided in x (the load's
 * innermost run must be contiguous); 0 when more than 5 axes remain. */
static int pfvm__acl_affine_init(pfvm__acl_affine *m, int rank, const int64_t *yd, const int64_t *xs, int64_t base)
{
    int64_t d[PFVM_MAX_RANK + 1], s[PFVM_MAX_RANK + 1];
    int n = 0, i;
    for (i = 0; i < rank; i++) {
        if (yd[i] == 1)
            continue;
        if (n > 0 && s[n - 1] == xs[i] * yd[i]) {
            d[n - 1] *= yd[i];
            s[n - 1] = xs[i];
        } else {
            d[n] = yd[i], s[n] = xs[i];
            n++;
        }
    }
    if (n == 0 || s[n - 1] != 1) {
        d[n] = 1, s[n] = 1;
        n++;
    }
    while (n < 3) { /* the load's (n, r, c) axes */
        memmove(d + 1, d, (size_t)n * sizeof *d);
        memmove(s + 1, s, (size_t)n * sizeof *s);
        d[0] = 1, s[0] = 0;
        n++;
    }
    if (n > 5)
        return 0;
    m->rank = n;
    m->base = base;
    for (i = 0; i < n; i++)
        m->yd[i] = d[i], m->xs[i] = s[i];
    m->ys[n - 1] = 1;
    for (i = n - 2; i >= 0; i--)
        m->ys[i] = m->ys[i + 1] * m->yd[i + 1];
    return 1;
}

static pfvm_code pfvm__acl_affine_load(pfvm_accel_ctx *c, pfvm__acl_q *q, const pfvm__acl_tile *t, int64_t pe,
                                       void *user)
{
    const pfvm__acl_affine *m = (const pfvm__acl_affine *)user;
    int r = m->rank, a;
    int64_t src = m->base, en = t->e[r - 3], er = t->e[r - 2], ec = t->e[r - 1];
    int64_t dst = 0;
    pfvm_code rc;
    for (a = 0; a < r; a++) {
        src += t->o[a] * m->xs[a];
        dst += t->o[a] * m->ys[a];
    }
    if ((rc = pfvm__acl_load(c, &q[0], pe, 0, c->in[0].dram + src * 4, en, er, ec, er * ec, ec, m->xs[r - 3],
                             m->xs[r - 2])) != PFVM_OK)
        return rc;
    /* the row consumer's constant rows (a LayerNorm's scale and bias), the
     * same on every PE: one line per run of PEs, in the first wave only
     * (nothing overwrites them: the later waves' tiles find them there) */
    for (a = 0; c->row && t - m->tiles < c->pes && a < c->row_par && rc == PFVM_OK; a++)
        rc = pfvm__acl_load(c, &q[2 + a], pe, m->poff + a * c->row_cols * 4, c->row_dram[a], 1, 1, c->row_cols,
                            c->row_cols, c->row_cols, 0, c->row_cols);
    if (rc != PFVM_OK || !c->res)
        return rc;
    /* the residual's box: the output tile's elements, from the other operand */
    return pfvm__acl_load(c, &q[1], pe, m->roff, c->res_dram + dst * 4, en, er, ec, er * ec, ec, m->ys[r - 3],
                          m->ys[r - 2]);
}

/* The copy's consumers, applied to the tile in the PE before it is stored:
 * the residual (ctx.res), then the element-wise one (ctx.post). */
static pfvm_code pfvm__acl_affine_body(pfvm_accel_ctx *c, const pfvm__acl_tile *t, void *user)
{
    const pfvm__acl_affine *m = (const pfvm__acl_affine *)user;
    int r = m->rank;
    int64_t n = t->e[r - 3] * t->e[r - 2] * t->e[r - 1];
    pfvm_code rc = PFVM_OK;
    if (c->res)
        rc = c->res(c, 0, m->roff, n);
    if (rc == PFVM_OK && c->post)
        rc = c->post(c, 0, n);
    if (rc == PFVM_OK && c->row) /* the tile holds whole rows (pfvm__acl_affine_stream) */
        rc = c->row(c, 0, n / c->row_cols, m->poff, m->toff);
    return rc;
}

static pfvm_code pfvm__acl_affine_store(pfvm_accel_ctx *c, const pfvm__acl_tile *t, int64_t pe, void *user)
{
    const pfvm__acl_affine *m = (const pfvm__acl_affine *)user;
    int r = m->rank, a;
    int64_t dst = 0, en = t->e[r - 3], er = t->e[r - 2], ec = t->e[r - 1];
    for (a = 0; a < r; a++)
        dst += t->o[a] * m->ys[a];
    return pfvm__acl_store(c, pe, c->out[0].dram + dst * 4, 0, en, er, ec, m->ys[r - 3], m->ys[r - 2], er * ec, ec);
}

/* Estimated cycles of n tiles dealt over every level's links (deal_all),
 * each bringing `in` bytes of its own and `shared` bytes that every tile
 * needs (sent once down a link whose links below broadcast) and sending
 * `out` bytes back: per wave, its busiest link, as the simulator charges a
 * phase (a rough model for choices between plans, not the simulator). */
static double pfvm__acl_spread_cost(const pfvm_accel_ctx *c, int64_t n, double in, double shared, double out)
{
    int64_t waves = (n + c->pes - 1) / c->pes, per = n < c->pes ? n : c->pes;
    double worst = 0;
    int k;
    for (k = 0; k < c->nlinks; k++) {
        int64_t inst = c->link_pes[k] > 0 ? c->pes / c->link_pes[k] : 1, t;
        double down, up;
        if (inst < 1)
            inst = 1;
        t = (per + inst - 1) / inst; /* tiles under the busiest instance */
        down = (double)t * in + (c->link_bcast[k] ? shared : (double)t * shared);
        up = (double)t * out;
        if (c->link_down[k] > 0 && down / c->link_down[k] > worst)
            worst = down / c->link_down[k];
        if (c->link_up[k] > 0 && up / c->link_up[k] > worst)
            worst = up / c->link_up[k];
    }
    return worst * (double)waves;
}

/* Whether the copy applies its row consumer (ctx.row): each tile is one
 * index of the merged last axis, whole (whole rows of the consumer), when
 * that fits a PE beside the residual's box, the constant rows and the
 * temporaries, and the fused tiles (their busiest link, or the PE's
 * cycles for the residual and the consumer, ctx.row_cycles, whichever is
 * longer) are estimated cheaper than the copy's small boxes followed by
 * the consumer's traffic alone (its rows in and out, one row per tile,
 * its constant rows on every PE; its compute left out, so that the
 * fusion is taken only where it wins against a lower estimate of the
 * node it removes). Sets step[] and m's offsets. */
static int pfvm__acl_affine_row(pfvm_accel_ctx *c, pfvm__acl_affine *m, int64_t total, int64_t cap, int64_t *step)
{
    int r = m->rank, a;
    int64_t cols = c->row_cols, box = m->yd[r - 1], rows, tmp;
    double in, fused, alone, nbox, pe;
    if (cols < 1 || box % cols || box * 4 > c->pe_mem || !c->row_tmp || !c->row_cycles)
        return 0;
    rows = box / cols;
    if ((tmp = c->row_tmp(c, rows)) < 0 || (pe = c->row_cycles(c, rows)) < 0)
        return 0;
    if (c->res)
        pe += (double)((box + c->simd - 1) / c->simd); /* the residual's add */
    m->roff = pfvm__acl_al(box * 4);
    m->poff = m->roff * (c->res ? 2 : 1);
    m->toff = m->poff + pfvm__acl_al(c->row_par * cols * 4);
    if (m->toff + tmp > c->pe_mem)
        return 0;
    in = (double)box * 4 * (c->res ? 2 : 1);
    /* the constant rows cross the links in the first wave only */
    fused = pfvm__acl_spread_cost(c, total / box, in, 0, (double)box * 4) +
            pfvm__acl_spread_cost(c, 1, 0, (double)c->row_par * cols * 4, 0);
    if (pe * (double)((total / box + c->pes - 1) / c->pes) > fused)
        fused = pe * (double)((total / box + c->pes - 1) / c->pes);
    nbox = (double)((total + cap - 1) / cap);
    alone = pfvm__acl_spread_cost(c, (int64_t)nbox, (double)cap * 4 * (c->res ? 2 : 1), 0, (double)cap * 4) +
            pfvm__acl_spread_cost(c, total / cols, (double)cols * 4, (double)c->row_par * cols * 4, (double)cols * 4);
    if (fused >= alone)
        return 0;
    for (a = 0; a < r; a++)
        step[a] = a == r - 1 ? box : 1;
    c->pe_used = m->toff + tmp;
    return 1;
}

static pfvm_code pfvm__acl_affine_stream(pfvm_accel_ctx *c, pfvm__acl_affine *m)
{
    int64_t step[5], total = 1, cap;
    int r = m->rank, a, row = 0;
    pfvm__acl_tile *tiles = NULL;
    pfvm__acl_waves w;
    pfvm_code rc = PFVM_OK;
    for (a = 0; a < r; a++) {
        total *= m->yd[a];
        step[a] = a < r - 3 ? 1 : m->yd[a];
    }
    if (total == 0)
        return PFVM_OK;
    /* boxes as small as one SIMD vector: a small copy's time is its
     * busiest PE link (16 bytes per cycle on mncore2), so spreading it
     * over more PEs shortens it (64-element boxes: 16 cycles per Slice of
     * the TransformerEncoder at batch 1, 4 elements: 5) */
    cap = (total + c->pes - 1) / c->pes;
    if (cap < c->simd)
        cap = c->simd;
    if (cap > c->pe_mem / 4 / (c->res ? 2 : 1)) /* with a residual, its box beside the tile */
        cap = c->pe_mem / 4 / (c->res ? 2 : 1);
    if (cap < 1)
        return pfvm__acl_stream_nomem(c, c->res ? 8 : 4);
    if (c->row && !(row = pfvm__acl_affine_row(c, m, total, cap, step)))
        return pfvm__acl_unsupported(c, "a strided copy's row consumer in whole rows only, where the model finds "
                                        "it cheaper");
    for (a = r - 3; a < r && !row; a++) /* halve n, then r, then c until the box fits */
        while (step[r - 3] * step[r - 2] * step[r - 1] > cap && step[a] > 1)
            step[a] = (step[a] + 1) / 2;
    if (!row) {
        m->roff = pfvm__acl_al(step[r - 3] * step[r - 2] * step[r - 1] * 4);
        c->pe_used = m->roff * (c->res ? 2 : 1);
    }
    memset(&w, 0, sizeof w);
    w.load = pfvm__acl_affine_load, w.store = pfvm__acl_affine_store, w.user = (void *)m;
    w.body = c->res || c->post || row ? pfvm__acl_affine_body : NULL;
    /* each tile reads its own box: dealt over every level's links (at
     * batch 8 a copy's 320 tiles under 16 L1Bs, not 4) */
    c->deal_all = 1;
    if ((rc = pfvm__acl_tiling(c, r, m->yd, step, &tiles)) == PFVM_OK) {
        m->tiles = tiles;
        rc = pfvm__acl_run_waves(c, tiles, &w);
    }
    c->deal_all = 0;
    stbds_arrfree(tiles);
    c->res_done = c->res != NULL;
    c->post_done = c->post != NULL;
    c->row_done = row;
    return rc;
}

/* Composes the copy's map y[o] = x[base + sum o_a * xs[a]] (x's row-major
 * index, over the output dims yd) with x's strided view (x->vrank > 0,
 * pfvm_accel_arg): each output axis is cut into factors (outer first) that
 * each step through one of the view's dims, so that the map addresses the
 * root memory (elements from x->dram) over the refined output dims, still
 * row-major. It is exact when no view digit carries: the base's digit plus
 * every factor's reach in each view dim stays below that dim (checked).
 * 0 when it does not compose or needs more than PFVM_MAX_RANK axes. */
static int pfvm__acl_compose(const pfvm_accel_arg *x, int *rank, int64_t *yd, int64_t *xs, int64_t *base)
{
    int64_t fs[PFVM_MAX_RANK], reach[PFVM_MAX_RANK], d[PFVM_MAX_RANK], s[PFVM_MAX_RANK], rem = *base, nb = 0;
    int q = x->vrank, n = 0, a, i, k;
    if (q < 1 || q > PFVM_MAX_RANK)
        return 0;
    for (i = q - 1; i >= 0; i--) {
        if (x->vdims[i] < 1)
            return 0;
        fs[i] = i == q - 1 ? 1 : fs[i + 1] * x->vdims[i + 1];
    }
    for (i = 0; i < q; i++) { /* the base's digits */
        reach[i] = rem / fs[i];
        nb += reach[i] * x->vstr[i];
        rem %= fs[i];
    }
    if (reach[0] >= x->vdims[0] || *base < 0)
        return 0;
    for (a = 0; a < *rank; a++) {
        int64_t fd[PFVM_MAX_RANK], fst[PFVM_MAX_RANK], left = yd[a], st = xs[a];
        int nf = 0;
        while (left > 1) { /* innermost factor first */
            int64_t step, m;
            for (i = 0; i < q && fs[i] > st; i++)
                ;
            if (st <= 0 || i == q || st % fs[i] || nf == PFVM_MAX_RANK)
                return 0;
            step = st / fs[i];
            m = x->vdims[i] / step;
            if (m < 1 || (left > m && (left % m || x->vdims[i] % step)))
                return 0;
            if (m > left)
                m = left;
            fd[nf] = m, fst[nf] = step * x->vstr[i];
            nf++;
            reach[i] += (m - 1) * step;
            left /= m;
            st *= m;
        }
        if (nf == 0) /* an axis of size 1 (or 0) stays */
            fd[nf] = yd[a], fst[nf] = 0, nf++;
        if (n + nf > PFVM_MAX_RANK)
            return 0;
        for (k = nf - 1; k >= 0; k--)
            d[n] = fd[k], s[n] = fst[k], n++;
    }
    for (i = 0; i < q; i++)
        if (reach[i] >= x->vdims[i])
            return 0;
    *rank = n;
    *base = nb;
    for (a = 0; a < n; a++)
        yd[a] = d[a], xs[a] = s[a];
    return 1;
}

/* The copy's map (Transpose's perm, Slice's starts and steps) over x's
 * row-major index, composed with x's strided view when it is one: the
 * output's dims (refined where the view needs) in yd[0..*rank), the root
 * elements from x's dram in xs and *base. */
static pfvm_code pfvm__acl_copy_axes(pfvm_accel_ctx *c, int *rank, int64_t *yd, int64_t *xs, int64_t *base)
{
    const pfvm_accel_arg *x = &c->in[0], *y = &c->out[0];
    int r = y->rank, i;
    pfvm_code rc;
    *base = 0;
    if (c->node->op && c->node->op->accel == pfvm_acl_transpose) {
        const int64_t *perm;
        int np = pfvm_node_attr_ints(c->node, "perm", &perm);
        int64_t s[PFVM_MAX_RANK];
        if (x->rank < 1 || r != x->rank)
            return pfvm__acl_unsupported(c, "streamed Transpose of rank 1 or more");
        s[r - 1] = 1;
        for (i = r - 2; i >= 0; i--)
            s[i] = s[i + 1] * x->dims[i + 1];
        for (i = 0; i < r; i++) {
            int64_t p = np == r ? perm[i] : r - 1 - i;
            if (p < 0 || p >= r)
                return pfvm__acl_unsupported(c, "Transpose with a valid perm");
            xs[i] = s[p];
        }
    } else if ((rc = pfvm__acl_slice_map(c, 0, base, xs)) != PFVM_OK) {
        return rc;
    }
    for (i = 0; i < r; i++)
        yd[i] = y->dims[i];
    *rank = r;
    if (x->vrank > 0 && !pfvm__acl_compose(x, rank, yd, xs, base))
        return pfvm__acl_unsupported(c, "a strided copy whose map composes with its input's strided view");
    return PFVM_OK;
}

/* The copy's map as m (pfvm__acl_copy_axes, its axes merged). */
static pfvm_code pfvm__acl_copy_map(pfvm_accel_ctx *c, pfvm__acl_affine *m)
{
    int64_t xs[PFVM_MAX_RANK], yd[PFVM_MAX_RANK], base;
    int r;
    pfvm_code rc;
    if ((rc = pfvm__acl_copy_axes(c, &r, yd, xs, &base)) != PFVM_OK)
        return rc;
    if (!pfvm__acl_affine_init(m, r, yd, xs, base))
        return pfvm__acl_unsupported(c, "streamed Transpose or Slice of at most 5 non-contiguous axes");
    return PFVM_OK;
}

static pfvm_code pfvm__acl_copy_stream(pfvm_accel_ctx *c)
{
    pfvm__acl_affine m;
    pfvm_code rc;
    if ((rc = pfvm__acl_copy_map(c, &m)) != PFVM_OK)
        return rc;
    return pfvm__acl_affine_stream(c, &m);
}

/* Loads rows x cols elements of x, a strided view (x->vrank > 0), from
 * row-major index base + r * rs + col, into PE byte d onwards (row-major):
 * the block through the view's map when it composes as one (a few load
 * lines), else row by row, else element by element (each composes). */
static pfvm_code pfvm__acl_load_view(pfvm_accel_ctx *c, pfvm__acl_q *q, int64_t pe, int64_t d,
                                     const pfvm_accel_arg *x, int64_t base, int64_t rows, int64_t cols, int64_t rs)
{
    int64_t yd[PFVM_MAX_RANK] = {rows, cols}, xs[PFVM_MAX_RANK] = {rs, 1}, b = base, o, outer = 1, i;
    int r = 2, a;
    pfvm__acl_affine m;
    pfvm_code rc;
    if (!pfvm__acl_compose(x, &r, yd, xs, &b) || !pfvm__acl_affine_init(&m, r, yd, xs, b)) {
        if (rows > 1) {
            for (i = 0; i < rows; i++)
                if ((rc = pfvm__acl_load_view(c, q, pe, d + i * cols * 4, x, base + i * rs, 1, cols, rs)) != PFVM_OK)
                    return rc;
            return PFVM_OK;
        }
        if (cols > 1) {
            for (i = 0; i < cols; i++)
                if ((rc = pfvm__acl_load_view(c, q, pe, d + i * 4, x, base + i, 1, 1, rs)) != PFVM_OK)
                    return rc;
            return PFVM_OK;
        }
        return pfvm__fail(c->st, PFVM_ERR_INVALID, "node %s (%s): an element of a strided view out of its bounds",
                          c->node->name, c->node->op_type);
    }
    r = m.rank;
    for (a = 0; a < r - 3; a++)
        outer *= m.yd[a];
    for (o = 0; o < outer; o++) {
        int64_t rem = o, src = m.base, dst = 0;
        for (a = r - 4; a >= 0; a--) {
            src += (rem % m.yd[a]) * m.xs[a];
            dst += (rem % m.yd[a]) * m.ys[a];
            rem /= m.yd[a];
        }
        if ((rc = pfvm__acl_load(c, q, pe, d + dst * 4, x->dram + src * 4, m.yd[r - 3], m.yd[r - 2], m.yd[r - 1],
                                 m.ys[r - 3], m.ys[r - 2], m.xs[r - 3], m.xs[r - 2])) != PFVM_OK)
            return rc;
    }
    return PFVM_OK;
}

/* A quiet context for node n's shapes (in[0..n_in), out), for the view
 * queries below. */
static void pfvm__acl_quiet_ctx(pfvm_accel_ctx *c, pfvm_status *quiet, const pfvm_node *n, const pfvm_accel_arg *in,
                                int n_in, const pfvm_accel_arg *out)
{
    memset(c, 0, sizeof *c);
    c->node = n;
    c->n_in = n_in;
    c->n_out = 1;
    memcpy(c->in, in, (size_t)n_in * sizeof *in);
    c->out[0] = *out;
    c->st = quiet;
}

int pfvm_acl_view_of(const pfvm_node *n, const pfvm_accel_arg *in, int n_in, const pfvm_accel_arg *out,
                     pfvm_accel_arg *view, int64_t *base)
{
    pfvm_accel_ctx c;
    pfvm_status quiet;
    int i;
    if (!n->op || (n->op->accel != pfvm_acl_slice && n->op->accel != pfvm_acl_transpose) || n_in < 1 ||
        n_in > PFVM_ACCEL_MAX_ARGS || in[0].rank < 1 || out->rank != in[0].rank)
        return 0;
    for (i = 0; i < out->rank; i++)
        if (out->dims[i] < 1)
            return 0;
    pfvm__acl_quiet_ctx(&c, &quiet, n, in, n_in, out);
    *view = *out;
    return pfvm__acl_copy_axes(&c, &view->vrank, view->vdims, view->vstr, base) == PFVM_OK;
}

/* Whether Gemm's or MatMul's streamed lowering takes its inputs' shapes
 * (the checks of pfvm_acl_gemm_stream and pfvm__acl_matmul_stream). */
static int pfvm__acl_gemm_shapes(const pfvm_accel_ctx *c)
{
    const pfvm_accel_arg *a = &c->in[0], *b = &c->in[1], *y = &c->out[0];
    if (c->n_in < 2)
        return 0;
    if (c->node->op->accel == pfvm_acl_matmul)
        return a->rank >= 1 && b->rank >= 2 && y->rank >= 1 && b->dims[b->rank - 2] == a->dims[a->rank - 1] &&
               (b->rank == 2 || (pfvm__acl_mm_bstride(a, y) >= 0 && pfvm__acl_mm_bstride(b, y) >= 0));
    return a->rank == 2 && b->rank == 2 && y->rank == 2 && !pfvm_node_attr_int(c->node, "transA", 0);
}

int pfvm_acl_view_reader(const pfvm_node *n, const pfvm_accel_arg *in, int n_in, const pfvm_accel_arg *out, int i)
{
    pfvm_accel_ctx c;
    pfvm_status quiet;
    pfvm__acl_affine m;
    pfvm_accel_fn f = pfvm_acl_streamed(n->op);
    if (!f || n_in < 1 || n_in > PFVM_ACCEL_MAX_ARGS || i < 0 || i >= n_in)
        return 0;
    pfvm__acl_quiet_ctx(&c, &quiet, n, in, n_in, out);
    if (n->op->accel == pfvm_acl_transpose || n->op->accel == pfvm_acl_slice)
        return i == 0 && (in[i].vscale == 0 || in[i].vscale == 1) && pfvm__acl_copy_map(&c, &m) == PFVM_OK;
    /* Gemm and MatMul load A's rows and B's columns through the view
     * (pfvm__acl_load_view), any block of them, and apply a scaled view's
     * factor as alpha */
    if (n->op->accel == pfvm_acl_gemm || n->op->accel == pfvm_acl_matmul)
        return i <= 1 && pfvm__acl_gemm_shapes(&c);
    return 0;
}

static int64_t pfvm__acl_elems(const pfvm_accel_arg *a);

/* The one line a lowering writes through pfvm__acl_capture_emit (more
 * than one: n > 1). */
typedef struct pfvm__acl_capture {
    char line[256];
    int n;
} pfvm__acl_capture;

static pfvm_code pfvm__acl_capture_emit(pfvm_accel_ctx *c, const char *fmt, ...)
{
    pfvm__acl_capture *cap = (pfvm__acl_capture *)c->user;
    va_list ap;
    va_start(ap, fmt);
    pfvm__vsnprintf(cap->line, sizeof cap->line, fmt, ap);
    va_end(ap);
    cap->n++;
    return PFVM_OK;
}

int pfvm_acl_view_scale(const pfvm_node *n, const pfvm_accel_arg *in, int n_in, const pfvm_accel_arg *out, int i,
                        double *scale)
{
    pfvm_accel_ctx c;
    pfvm_status quiet;
    pfvm__acl_capture cap;
    char op[16];
    long long d, a, cnt;
    double k;
    int64_t elems = pfvm__acl_elems(out);
    /* the lowering asked as an in-place consumer's (its constant input
     * unplaced, rank -1), on one PE holding the whole input i at byte 0 */
    if (!n->op || !n->op->accel || n_in != 2 || n->n_inputs != 2 || n->n_outputs != 1 || i < 0 || i > 1 ||
        in[i].rank < 0 || !n->inputs[1 - i] || !n->inputs[1 - i]->init || elems < 1 ||
        pfvm__acl_elems(&in[i]) != elems)
        return 0;
    pfvm__acl_quiet_ctx(&c, &quiet, n, in, n_in, out);
    memset(&cap, 0, sizeof cap);
    c.in[i].off = c.out[0].off = 0;
    c.in[i].elems = c.out[0].elems = elems;
    c.in[i].vrank = 0;
    c.in[1 - i].rank = -1;
    c.user = &cap;
    c.emit = pfvm__acl_capture_emit;
    if (n->op->accel(&c) != PFVM_OK || cap.n != 1 ||
        sscanf(cap.line, "imm %15s %lld %lld %lf %lld", op, &d, &a, &k, &cnt) != 5 || d != 0 || a != 0 ||
        cnt != elems || !(k == k) || k == 0)
        return 0;
    if (!strcmp(op, "mul"))
        *scale = k;
    else if (!strcmp(op, "div"))
        *scale = 1 / k;
    else
        return 0;
    return 1;
}

/* Elements of a (static) arg. */
static int64_t pfvm__acl_elems(const pfvm_accel_arg *a)
{
    int64_t n = 1;
    int i;
    for (i = 0; i < a->rank; i++)
        n *= a->dims[i];
    return n;
}

/* ---- LayerNormalization streamed with its rows split over PEs ----
 *
 * The rows stream gives each PE whole rows: with few rows (the
 * TransformerEncoder: 10 rows of 32 at batch 1, 40 at batch 8) a PE spends
 * about seven passes over its row while most PEs idle. Here each row is
 * cut into k chunks of cs columns, one per PE, and the PEs exchange
 * per-chunk partial sums through the root memory, in two phases: (1) each
 * chunk, shifted by the row's first element x0 (kept in the PE), and its
 * sum and sum of squares; (2) the row's shifted mean m and mean square from
 * the k pairs, the variance as their difference (shifting by a sample of
 * the row keeps that difference accurate: its error grows with the squared
 * distance of the mean from the shift over the variance, which x0 keeps
 * small, unlike E[x^2] - E[x]^2 on rows far from 0), the centred chunk
 * scaled by 1 / sqrt(var + eps), gamma and beta, and the store. One phase
 * (a barrier, the partials' round trip) fewer than centring first. The
 * partial sums live in the output's own bytes (rows x k floats each, 2k <=
 * cols) until phase 2's stores overwrite them, after every load of the
 * phase. Taken only when its estimate beats the rows stream's. */

typedef struct pfvm__acl_lnsplit {
    int64_t rows, cols, cs, k;      /* rows of cols, chunks of cs, k per row */
    int64_t x, q, w, s, g, b;       /* PE byte offsets: chunk, partial pairs, 1/cols, scalars, gamma, beta */
    double eps;
    int bias, phase;
} pfvm__acl_lnsplit;

/* The scalars at S: [0] the chunk's shifted sum, then the row's shifted
 * mean; [1] the chunk's sum of squares, then the row's mean square, then
 * 1 / sqrt(var + eps); [2] x0, then the mean's square. Phase 0 also fills
 * W with 1 / cols, so that one gemm of W by the row's k (sum, square)
 * pairs gives the mean and the mean square. */
static pfvm_code pfvm__acl_lnsplit_body(pfvm_accel_ctx *c, const pfvm__acl_tile *t, void *user)
{
    const pfvm__acl_lnsplit *p = (const pfvm__acl_lnsplit *)user;
    long long X = p->x, Q = p->q, W = p->w, S = p->s, K = p->k, CS = p->cs;
    pfvm_code rc;
    (void)t;
    if (p->phase == 0)
        return (rc = c->emit(c, "row sub %lld %lld %lld 1 %lld", X, X, S + 8, CS)) != PFVM_OK ||
                       (rc = c->emit(c, "red sum %lld %lld 1 %lld", S, X, CS)) != PFVM_OK ||
                       (rc = c->emit(c, "gemm %lld %lld %lld 1 1 %lld 1", S + 4, X, X, CS)) != PFVM_OK
                   ? rc
                   : c->emit(c, "fill %lld %.9g %lld", W, 1.0 / (double)p->cols, K);
    if ((rc = c->emit(c, "gemm %lld %lld %lld 1 2 %lld", S, W, Q, K)) != PFVM_OK ||
        (rc = c->emit(c, "bin mul %lld %lld %lld 1", S + 8, S, S)) != PFVM_OK ||
        (rc = c->emit(c, "bin sub %lld %lld %lld 1", S + 4, S + 4, S + 8)) != PFVM_OK ||
        (rc = c->emit(c, "imm add %lld %lld %.9g 1", S + 4, S + 4, p->eps)) != PFVM_OK ||
        (rc = c->emit(c, "imm pow %lld %lld -0.5 1", S + 4, S + 4)) != PFVM_OK ||
        (rc = c->emit(c, "row sub %lld %lld %lld 1 %lld", X, X, S, CS)) != PFVM_OK ||
        (rc = c->emit(c, "row mul %lld %lld %lld 1 %lld", X, X, S + 4, CS)) != PFVM_OK ||
        (rc = c->emit(c, "col mul %lld %lld %lld 1 %lld", X, X, (long long)p->g, CS)) != PFVM_OK)
        return rc;
    return p->bias ? c->emit(c, "col add %lld %lld %lld 1 %lld", X, X, (long long)p->b, CS) : PFVM_OK;
}

/* One phase of the split LayerNormalization over the n = rows * k tiles. */
static pfvm_code pfvm__acl_lnsplit_phase(pfvm_accel_ctx *c, pfvm__acl_lnsplit *p, const pfvm__acl_tile *tiles,
                                         int64_t n)
{
    pfvm__acl_q q[3];
    int64_t i, part = c->out[0].dram;
    pfvm_code rc = PFVM_OK;
    int k;
    memset(q, 0, sizeof q);
    for (i = 0; i < n && rc == PFVM_OK; i++) {
        int64_t pe = pfvm__acl_pe(c, n, i), r = tiles[i].o[0], c0 = tiles[i].o[1];
        if (p->phase == 0) {
            rc = pfvm__acl_load(c, &q[0], pe, p->x, c->in[0].dram + (r * p->cols + c0) * 4, 1, 1, p->cs, 0, 0, 0, 0);
            if (rc == PFVM_OK) /* the row's shift */
                rc = pfvm__acl_load(c, &q[1], pe, p->s + 8, c->in[0].dram + r * p->cols * 4, 1, 1, 1, 0, 0, 0, 0);
            continue;
        }
        rc = pfvm__acl_load(c, &q[0], pe, p->q, part + r * p->k * 8, 1, 1, 2 * p->k, 0, 0, 0, 0);
        if (rc == PFVM_OK)
            rc = pfvm__acl_load(c, &q[1], pe, p->g, c->in[1].dram + c0 * 4, 1, 1, p->cs, 0, 0, 0, 0);
        if (rc == PFVM_OK && p->bias)
            rc = pfvm__acl_load(c, &q[2], pe, p->b, c->in[2].dram + c0 * 4, 1, 1, p->cs, 0, 0, 0, 0);
    }
    for (k = 0; k < 3; k++)
        if (rc == PFVM_OK)
            rc = pfvm__acl_flush(c, &q[k]);
    for (k = 0; k < 3; k++)
        stbds_arrfree(q[k].loads);
    if (rc == PFVM_OK)
        rc = pfvm__acl_classes(c, tiles, n, pfvm__acl_lnsplit_body, p);
    for (i = 0; i < n && rc == PFVM_OK; i++) {
        int64_t pe = pfvm__acl_pe(c, n, i), r = tiles[i].o[0], j = tiles[i].o[1] / p->cs;
        if (p->phase == 1)
            rc = pfvm__acl_store(c, pe, c->out[0].dram + (r * p->cols + tiles[i].o[1]) * 4, p->x, 1, 1, p->cs, 0, 0,
                                 0, 0);
        else /* the (sum, square) pairs, row-major by row and chunk */
            rc = pfvm__acl_store(c, pe, part + (r * p->k + j) * 8, p->s, 1, 1, 2, 0, 0, 0, 0);
    }
    return rc == PFVM_OK ? c->emit(c, "barrier") : rc;
}

PFVM_INTERNAL pfvm_code pfvm_acl_ln_stream(pfvm_accel_ctx *c)
{
    const pfvm_node *n = c->node;
    const pfvm_accel_arg *x = &c->in[0];
    int64_t axis = pfvm_node_attr_int(n, "axis", -1), cols, rows, cs, best = -1, i;
    double best_cost = 0;
    pfvm__acl_lnsplit p;
    pfvm__acl_tile *tiles = NULL;
    pfvm_code rc = PFVM_OK;
    if (x->rank < 1 || (axis != -1 && axis != x->rank - 1) || c->n_out > 1 || c->n_in < 2 || c->in[1].rank < 0 ||
        c->vec || c->res || c->n_chain)
        return pfvm__acl_unsupported(c, "split LayerNormalization of the last axis, Y only");
    cols = x->dims[x->rank - 1];
    rows = cols > 0 ? pfvm__acl_elems(x) / cols : 0;
    if (rows < 1 || pfvm__acl_elems(&c->in[1]) != cols ||
        (c->n_in > 2 && c->in[2].rank >= 0 && pfvm__acl_elems(&c->in[2]) != cols))
        return pfvm__acl_unsupported(c, "split LayerNormalization with one row of scale and bias");
    /* chunks of cs columns (dividing cols, at least 2 per row, one wave),
     * the cheapest by PE passes; the rows stream's cost: 7 passes per row */
    for (cs = 1; cs <= cols / 2; cs++) {
        int64_t k = cols / cs;
        double cost;
        if (cols % cs || rows * k > c->pes || 2 * k > cols)
            continue;
        cost = 2 * (2 * ((k + c->simd - 1) / c->simd) + 6 * ((cs + c->simd - 1) / c->simd)) + 10;
        if (best < 0 || cost < best_cost)
            best = cs, best_cost = cost;
    }
    if (best < 0 || best_cost >= 7.0 * ((rows + c->pes - 1) / c->pes) * ((cols + c->simd - 1) / c->simd))
        return pfvm__acl_unsupported(c, "split LayerNormalization (the rows stream is cheaper)");
    memset(&p, 0, sizeof p);
    p.rows = rows, p.cols = cols, p.cs = best, p.k = cols / best;
    p.eps = (double)pfvm_node_attr_float(n, "epsilon", 1e-5f);
    p.bias = c->n_in > 2 && c->in[2].rank >= 0;
    p.x = 0;
    p.q = pfvm__acl_al(p.cs * 4);
    p.w = p.q + pfvm__acl_al(p.k * 8);
    p.s = p.w + pfvm__acl_al(p.k * 4);
    p.g = p.s + 16;
    p.b = p.g + pfvm__acl_al(p.cs * 4);
    c->pe_used = p.b + pfvm__acl_al(p.cs * 4);
    if (c->pe_used > c->pe_mem)
        return pfvm__acl_stream_nomem(c, c->pe_used);
    for (i = 0; i < rows * p.k; i++) {
        pfvm__acl_tile t;
        memset(&t, 0, sizeof t);
        t.o[0] = i / p.k, t.o[1] = i % p.k * p.cs;
        t.e[0] = 1, t.e[1] = p.cs;
        if (!pfvm__arrpush(tiles, t)) {
            stbds_arrfree(tiles);
            return pfvm__fail(c->st, PFVM_ERR_NOMEM, "node %s (%s): out of memory for tiles", n->name, n->op_type);
        }
    }
    /* chunks dealt over every level's links, a row's on consecutive PEs
     * (its partials one broadcast line, a chunk of gamma one line per run) */
    c->deal_all = 1;
    c->deal_run = pfvm__acl_runs_fit(c, rows * p.k, p.k) ? (int)p.k : 0;
    for (p.phase = 0; p.phase < 2 && rc == PFVM_OK; p.phase++)
        rc = pfvm__acl_lnsplit_phase(c, &p, tiles, rows * p.k);
    c->deal_all = 0, c->deal_run = 0;
    stbds_arrfree(tiles);
    return rc;
}

/* ---- any row-wise operator streamed by its resident lowering ----
 *
 * An element-wise, broadcast or reduction operator whose inputs are either
 * "split" (the output's rank and leading dims: every dim but the last) or
 * small vectors along the last axis (or scalars) runs on tiles of rows:
 * the leading dims flattened into one axis of R rows, a tile being rt
 * consecutive rows on one PE, the small inputs whole on every PE. Each
 * tile is exactly what the resident plan gives a PE of a tensor of dims
 * (R, 1, ..., 1, last): its first axis split, the rest whole. So the
 * operator's own resident hook lowers the tile, unchanged; it must (and
 * the existing ones do) refuse an axis attribute other than the last. */

typedef struct pfvm__acl_rows {
    pfvm_accel_ctx r;       /* first: the hook's ctx, cast back in the scratch callback */
    int64_t top, limit;     /* the scratch bump allocator in the tile's PE */
    int dry;                /* 1: only trying the tile size (no lines) */
    int64_t rowsz[PFVM_ACCEL_MAX_ARGS + 1]; /* split inputs: elements per row; -1 small (whole); 0 absent */
    int64_t yrow, base_top;
    pfvm_accel_ctx *outer;
    int64_t vec, vec_off; /* pfvm_accel_ctx.vec: the vector's elements (the output's last dim), or 0 */
    int64_t rt;           /* rows of a full tile: every tile's buffers at its offsets (loads and stores use them) */
} pfvm__acl_rows;

static int64_t pfvm__acl_rows_scratch(pfvm_accel_ctx *c, int64_t bytes)
{
    pfvm__acl_rows *s = (pfvm__acl_rows *)c;
    int64_t off = s->top;
    if (bytes < 0 || s->top + pfvm__acl_al(bytes) > s->limit)
        return -1;
    s->top += pfvm__acl_al(bytes > 0 ? bytes : 1);
    return off;
}

static pfvm_code pfvm__acl_rows_discard(pfvm_accel_ctx *c, const char *fmt, ...)
{
    (void)c;
    (void)fmt;
    return PFVM_OK;
}

/* The hook's arguments for a tile of rt rows (offsets as laid out by
 * pfvm__acl_rows_layout). */
static void pfvm__acl_rows_args(pfvm__acl_rows *s, int64_t rt)
{
    const pfvm_accel_ctx *c = s->outer;
    int i, k;
    for (i = 0; i <= c->n_in; i++) {
        pfvm_accel_arg *a = i < c->n_in ? &s->r.in[i] : &s->r.out[0];
        const pfvm_accel_arg *o = i < c->n_in ? &c->in[i] : &c->out[0];
        int64_t row = i < c->n_in ? s->rowsz[i] : s->yrow;
        if (o->rank < 0 || row <= 0)
            continue;
        a->rank = o->rank;
        a->dims[0] = 1;
        for (k = 0; k + 1 < o->rank; k++)
            a->dims[0] *= o->dims[k];
        for (k = 1; k + 1 < o->rank; k++)
            a->dims[k] = 1;
        if (o->rank >= 2)
            a->dims[o->rank - 1] = row;
        a->elems = rt * row;
        a->replicated = 0;
    }
}

/* Offsets of a tile of rt rows: small inputs, split inputs, the output,
 * then the hook's scratch; the bytes before the scratch. */
static int64_t pfvm__acl_rows_layout(pfvm__acl_rows *s, int64_t rt)
{
    const pfvm_accel_ctx *c = s->outer;
    int64_t top = 0;
    int i;
    for (i = 0; i < c->n_in; i++)
        if (s->rowsz[i] < 0) {
            s->r.in[i].off = top;
            top += pfvm__acl_al(s->r.in[i].elems * 4);
        }
    for (i = 0; i < c->n_in; i++)
        if (s->rowsz[i] > 0) {
            s->r.in[i].off = top;
            top += pfvm__acl_al(rt * s->rowsz[i] * 4);
        }
    s->r.out[0].off = top;
    top += pfvm__acl_al(rt * s->yrow * 4);
    s->vec_off = top;
    top += s->vec ? pfvm__acl_al(s->vec * 4) : 0;
    return top;
}

/* Whether the hook lowers a tile of rt rows within the PE's memory. */
static int pfvm__acl_rows_try(pfvm__acl_rows *s, int64_t rt)
{
    pfvm_status quiet, *keep = s->r.st;
    pfvm_code rc;
    pfvm__acl_rows_args(s, rt);
    s->base_top = s->top = pfvm__acl_rows_layout(s, rt);
    if (s->top > s->limit)
        return 0;
    s->dry = 1;
    s->r.emit = pfvm__acl_rows_discard;
    s->r.st = &quiet;
    rc = s->outer->node->op->accel(&s->r);
    s->r.st = keep;
    s->r.emit = s->outer->emit;
    s->dry = 0;
    if (s->top > s->outer->pe_used)
        s->outer->pe_used = s->top;
    return rc == PFVM_OK;
}

static pfvm_code pfvm__acl_rows_body(pfvm_accel_ctx *c, const pfvm__acl_tile *t, void *user)
{
    pfvm__acl_rows *s = (pfvm__acl_rows *)user;
    pfvm_code rc;
    (void)c;
    pfvm__acl_rows_args(s, t->e[0]);
    /* a smaller tile (the last rows) keeps a full tile's offsets: the
     * wave's loads and stores are at those */
    pfvm__acl_rows_layout(s, s->rt);
    s->top = s->base_top;
    if ((rc = s->outer->node->op->accel(&s->r)) != PFVM_OK)
        return rc;
    if (s->vec && (rc = s->outer->vec(s->outer, s->r.out[0].off, s->vec_off, t->e[0] * s->yrow / s->vec, s->vec)) !=
                      PFVM_OK)
        return rc;
    return s->outer->post ? s->outer->post(s->outer, s->r.out[0].off, t->e[0] * s->yrow) : PFVM_OK;
}

/* An element-wise node whose split inputs all have the output's shape and
 * whose small ones are scalars has no rows: its flat elements are cut into
 * rows of the largest divisor of their count up to a PE's share (at least
 * the SIMD width), so that tiles are spread over every PE. */
static void pfvm__acl_rows_flat(const pfvm_accel_ctx *c, pfvm__acl_rows *s, int64_t *rows)
{
    int64_t total = *rows * s->yrow, cap = (total + c->pes - 1) / c->pes, d;
    int i;
    for (i = 0; i < c->n_in; i++)
        if ((s->rowsz[i] > 0 && s->rowsz[i] != s->yrow) || (s->rowsz[i] < 0 && s->r.in[i].elems != 1))
            return;
    if (cap < c->simd)
        cap = c->simd;
    for (d = cap < total ? cap : total; d > 1 && total % d; d--)
        ;
    for (i = 0; i < c->n_in; i++)
        if (s->rowsz[i] > 0)
            s->rowsz[i] = d;
    s->yrow = d;
    *rows = total / d;
}

/* The row sizes of c's arguments; 0 when the node is not row-wise. */
static int pfvm__acl_rows_shape(pfvm_accel_ctx *c, pfvm__acl_rows *s, int64_t *rows)
{
    const pfvm_accel_arg *y = &c->out[0];
    int i, k, split = 0;
    pfvm_fusion_kind f = c->node->op->fusion;
    if ((f != PFVM_FUSE_ELEMENTWISE && f != PFVM_FUSE_BROADCAST && f != PFVM_FUSE_REDUCTION) || c->n_out < 1 ||
        y->rank < 1)
        return 0;
    for (i = 1; i < c->n_out; i++)
        if (c->out[i].rank >= 0)
            return 0;
    s->yrow = y->dims[y->rank - 1];
    for (*rows = 1, k = 0; k + 1 < y->rank; k++)
        *rows *= y->dims[k];
    for (i = 0; i < c->n_in; i++) {
        const pfvm_accel_arg *x = &c->in[i];
        int64_t n = 1;
        if (x->rank < 0)
            continue;
        for (k = 0; k < x->rank; k++)
            n *= x->dims[k];
        if (x->rank == y->rank && !memcmp(x->dims, y->dims, (size_t)(y->rank - 1) * sizeof *y->dims)) {
            s->rowsz[i] = x->dims[x->rank - 1];
            split++;
        } else if ((x->rank == 0 || n == x->dims[x->rank - 1]) && n * 4 <= c->pe_mem / 4) {
            s->rowsz[i] = -1;
            s->r.in[i].elems = n;
            s->r.in[i].replicated = 1;
        } else {
            return 0;
        }
    }
    if (split > 0 && *rows > 0 && s->yrow > 0 && f != PFVM_FUSE_REDUCTION)
        pfvm__acl_rows_flat(c, s, rows);
    return split > 0 && *rows > 0 && s->yrow > 0;
}

/* A tile's split inputs (q[1]) and the small ones whole (q[0]). */
static pfvm_code pfvm__acl_rows_load(pfvm_accel_ctx *c, pfvm__acl_q *q, const pfvm__acl_tile *t, int64_t pe, void *user)
{
    const pfvm__acl_rows *s = (const pfvm__acl_rows *)user;
    pfvm_code rc = PFVM_OK;
    int j;
    for (j = 0; j < c->n_in && rc == PFVM_OK; j++) {
        if (s->rowsz[j] < 0)
            rc = pfvm__acl_load(c, &q[0], pe, s->r.in[j].off, c->in[j].dram, 1, 1, s->r.in[j].elems, 0, 0, 0, 0);
        else if (s->rowsz[j] > 0)
            rc = pfvm__acl_load(c, &q[1], pe, s->r.in[j].off, c->in[j].dram + t->o[0] * s->rowsz[j] * 4, 1, 1,
                                t->e[0] * s->rowsz[j], 0, 0, 0, 0);
    }
    if (rc == PFVM_OK && s->vec)
        rc = pfvm__acl_load(c, &q[0], pe, s->vec_off, c->vec_dram, 1, 1, s->vec, 0, 0, 0, 0);
    return rc;
}

static pfvm_code pfvm__acl_rows_store(pfvm_accel_ctx *c, const pfvm__acl_tile *t, int64_t pe, void *user)
{
    const pfvm__acl_rows *s = (const pfvm__acl_rows *)user;
    return pfvm__acl_store(c, pe, c->out[0].dram + t->o[0] * s->yrow * 4, s->r.out[0].off, 1, 1, t->e[0] * s->yrow, 0,
                           0, 0, 0);
}

PFVM_INTERNAL pfvm_code pfvm_acl_stream_rows(pfvm_accel_ctx *c)
{
    pfvm__acl_rows s;
    int64_t R, rt;
    pfvm__acl_tile *tiles = NULL;
    pfvm__acl_waves w;
    pfvm_code rc = PFVM_OK;
    memset(&s, 0, sizeof s);
    s.r = *c;
    s.r.stream = 0;
    s.r.post = NULL;
    s.r.res = NULL;
    s.r.vec = NULL;
    s.r.scratch = pfvm__acl_rows_scratch;
    s.outer = c;
    s.limit = c->pe_mem;
    if (!pfvm__acl_rows_shape(c, &s, &R))
        return pfvm__acl_unsupported(c, "rows streamed: split inputs of the output's leading dims, others small");
    /* a vector consumer applies along the last axis: rows of whole last axes */
    if (c->vec && c->out[0].rank >= 1 && c->out[0].dims[c->out[0].rank - 1] > 0 &&
        s.yrow % c->out[0].dims[c->out[0].rank - 1] == 0)
        s.vec = c->out[0].dims[c->out[0].rank - 1];
    for (rt = (R + c->pes - 1) / c->pes; rt >= 1 && !pfvm__acl_rows_try(&s, rt); rt = rt > 1 ? rt / 2 : 0)
        ;
    if (rt < 1)
        return pfvm__acl_unsupported(c, "rows streamed: one row with its temporaries in a PE");
    {
        int64_t dims[1], step[1];
        dims[0] = R, step[0] = rt;
        if ((rc = pfvm__acl_tiling(c, 1, dims, step, &tiles)) != PFVM_OK)
            return rc;
    }
    pfvm__acl_rows_args(&s, rt);
    pfvm__acl_rows_layout(&s, rt);
    s.rt = rt;
    c->post_done = c->post != NULL;
    c->vec_done = s.vec > 0;
    memset(&w, 0, sizeof w);
    w.load = pfvm__acl_rows_load, w.body = pfvm__acl_rows_body, w.store = pfvm__acl_rows_store, w.user = &s;
    /* one partial wave (the attention's Softmax: a few hundred rows):
     * its tiles dealt over every level's links, so that no L1B's link
     * carries the rows of tens of PEs */
    c->deal_all = (int64_t)stbds_arrlen(tiles) < c->pes;
    rc = pfvm__acl_run_waves(c, tiles, &w);
    c->deal_all = 0;
    stbds_arrfree(tiles);
    return rc;
}

pfvm_accel_fn pfvm_acl_streamed(const pfvm_op_def *op)
{
    /* Which streamed lowering goes with which resident hook. The flag, not
     * the hook, says whether an operator has one (AveragePool shares
     * MaxPool's hook but not its streamed lowering). The hooks do not call
     * these themselves: only the emitter reaches this table, so a firmware
     * build whose operators keep their resident hooks links none of the
     * streamed code (about 40 KB on Cortex-M). */
    static const struct {
        pfvm_accel_fn hook, stream;
    } pairs[] = {{pfvm_acl_conv, pfvm__acl_conv_stream},          {pfvm_acl_pool, pfvm__acl_maxpool_stream},
                 {pfvm_acl_global_pool, pfvm__acl_gpool_stream},  {pfvm_acl_concat, pfvm__acl_concat_stream},
                 {pfvm_acl_gemm, pfvm_acl_gemm_stream},           {pfvm_acl_matmul, pfvm__acl_matmul_stream},
                 {pfvm_acl_transpose, pfvm__acl_copy_stream},     {pfvm_acl_slice, pfvm__acl_copy_stream},
                 {pfvm_acl_layernorm, pfvm_acl_ln_stream}};
    size_t i;
    if (!op || !op->accel || !(op->flags & PFVM__OP_ACCEL_STREAMED))
        return NULL;
    for (i = 0; i < sizeof pairs / sizeof pairs[0]; i++)
        if (pairs[i].hook == op->accel)
            return pairs[i].stream;
    return NULL;
}

/* Concat: input i is elements [off, off + its size) of the output, row
 * major, when every axis before the concatenated one has size 1. */
static int pfvm__acl_concat_part(const pfvm_node *n, const pfvm_accel_arg *in, int n_in, const pfvm_accel_arg *out,
                                 int i, int64_t *off)
{
    int64_t axis = pfvm_node_attr_int(n, "axis", 0), inner = 1, at = 0;
    int a, j;
    if (i >= n_in)
        return 0;
    if (axis < 0)
        axis += out->rank;
    if (axis < 0 || axis >= out->rank)
        return 0;
    for (a = 0; a < out->rank; a++)
        if (a < axis ? out->dims[a] != 1 : a > axis ? (inner *= out->dims[a], 0) : 0)
            return 0;
    for (j = 0; j <= i; j++) {
        if (in[j].rank != out->rank)
            return 0;
        if (j < i)
            at += in[j].dims[axis];
    }
    *off = at * inner;
    return 1;
}

int pfvm_acl_input_part(const pfvm_node *n, const pfvm_accel_arg *in, int n_in, const pfvm_accel_arg *out, int i,
                        int64_t *off)
{
    if (!n->op || n->n_outputs != 1 || i < 0 || i >= n_in)
        return 0;
    if (n->op->accel == pfvm_acl_concat)
        return pfvm__acl_concat_part(n, in, n_in, out, i, off);
    return 0;
}

/* MaxPool (4-D, batch 1, one output): the input's channels holding
 * elements [off, off + count), pooled alone, are the same channels of its
 * output (the window is spatial only). */
int pfvm_acl_part_through(const pfvm_node *n, const pfvm_accel_arg *in, const pfvm_accel_arg *out, int64_t off,
                          int64_t count, pfvm_accel_arg *pin, pfvm_accel_arg *pout, int64_t *poff)
{
    int64_t hw;
    if (!n->op || n->op->accel != pfvm_acl_pool || strcmp(n->op_type, "MaxPool") || n->n_outputs != 1 ||
        in->rank != 4 || out->rank != 4 || in->dims[0] != 1 || out->dims[0] != 1 || in->dims[1] != out->dims[1])
        return 0;
    hw = in->dims[2] * in->dims[3];
    if (hw <= 0 || off < 0 || count <= 0 || off % hw || count % hw || (off + count) / hw > in->dims[1])
        return 0;
    *pin = *in;
    *pout = *out;
    pin->dims[1] = pout->dims[1] = count / hw;
    *poff = off / hw * out->dims[2] * out->dims[3];
    return 1;
}

/* ---- layout classes each lowering accepts (the layout planner's rules) ---- */

/* The axis a split class names in a tensor of rank r, or -1. */
static int pfvm__acl_kind_axis(int kind, int r)
{
    if (kind == PFVM_ACL_L_FIRST && r >= 1)
        return 0;
    if (kind == PFVM_ACL_L_SECOND && r >= 3)
        return 1;
    if (kind == PFVM_ACL_L_LAST && r >= 2)
        return r - 1;
    return -1;
}

/* The split class of axis a of a rank-r tensor, or -1 when none names it. */
static int pfvm__acl_axis_kind(int a, int r)
{
    if (a == 0 && r >= 1)
        return PFVM_ACL_L_FIRST;
    if (a == r - 1 && r >= 2)
        return PFVM_ACL_L_LAST;
    if (a == 1 && r >= 3)
        return PFVM_ACL_L_SECOND;
    return -1;
}

/* Input x aligned to the output's trailing axes (numpy broadcasting): split
 * along the output's axis a when it has that axis in full, else whole on
 * every PE. -1: x has the axis in full but no class names it. */
static int pfvm__acl_bcast_kind(const pfvm_accel_arg *x, const pfvm_accel_arg *y, int a)
{
    int xa = a - (y->rank - x->rank);
    if (xa < 0 || x->dims[xa] != y->dims[a] || y->dims[a] == 1)
        return PFVM_ACL_L_REPL;
    return pfvm__acl_axis_kind(xa, x->rank);
}

/* MatMul and Gemm: an output split along a batch or row axis takes A split
 * the same way (B split too on a batch axis it has, else whole); along
 * the columns, B split along its columns and A whole. */
static int pfvm__acl_mm_rule(const pfvm_node *n, const pfvm_accel_arg *in, const pfvm_accel_arg *y, int a,
                             int *in_kind)
{
    const pfvm_accel_arg *A = &in[0], *B = &in[1];
    int gemm = n->n_inputs == 3 || !strcmp(n->op_type, "Gemm"), ta = 0, tb = 0, i;
    if (A->rank < 1 || B->rank < 1)
        return 0;
    if (gemm) {
        ta = (int)pfvm_node_attr_int(n, "transA", 0);
        tb = (int)pfvm_node_attr_int(n, "transB", 0);
    }
    for (i = 2; i < n->n_inputs; i++)
        in_kind[i] = PFVM_ACL_L_REPL;
    if (a == y->rank - 1) {
        in_kind[0] = PFVM_ACL_L_REPL;
        in_kind[1] = pfvm__acl_axis_kind(tb ? B->rank - 2 : B->rank - 1, B->rank);
    } else {
        int xa = a - (y->rank - A->rank), ba = a - (y->rank - B->rank);
        if (xa < 0)
            return 0;
        in_kind[0] = pfvm__acl_axis_kind(ta && a == y->rank - 2 ? A->rank - 1 : xa, A->rank);
        in_kind[1] = a < y->rank - 2 && ba >= 0 && B->dims[ba] == y->dims[a] ? pfvm__acl_axis_kind(ba, B->rank)
                                                                            : PFVM_ACL_L_REPL;
    }
    return in_kind[0] >= 0 && in_kind[1] >= 0;
}

int pfvm_acl_layout_rule(const pfvm_node *n, const pfvm_accel_arg *in, const pfvm_accel_arg *out, int kind,
                         int *in_kind, int *mac)
{
    const pfvm_op_def *op = n->op;
    const pfvm_accel_arg *y = &out[0];
    int i, a = pfvm__acl_kind_axis(kind, y->rank);
    *mac = op && (op->accel == pfvm_acl_matmul || op->accel == pfvm_acl_conv ||
                  op->accel == pfvm_acl_gemm);
    for (i = 0; i < n->n_inputs; i++)
        in_kind[i] = kind == PFVM_ACL_L_PE0 ? PFVM_ACL_L_PE0 : PFVM_ACL_L_REPL;
    if (kind == PFVM_ACL_L_PE0)
        return 1; /* the declared fallback: every operator, lowered or not */
    if (!op || !op->accel || n->n_inputs > PFVM_ACCEL_MAX_ARGS)
        return 0;
    if (kind == PFVM_ACL_L_REPL)
        return 1;
    if (a < 0 || y->rank < 0)
        return 0;
    for (i = 1; i < n->n_outputs; i++)
        if (out[i].rank >= 0 && pfvm__acl_kind_axis(kind, out[i].rank) != a)
            return 0;
    if (*mac && op->accel != pfvm_acl_conv)
        return n->n_inputs >= 2 && pfvm__acl_mm_rule(n, in, y, a, in_kind);
    if (op->accel == pfvm_acl_conv) {
        /* images split by batch, or output channels with whole images */
        if (a > 1)
            return 0;
        in_kind[0] = a == 0 ? PFVM_ACL_L_FIRST : PFVM_ACL_L_REPL;
        for (i = 1; i < n->n_inputs; i++)
            in_kind[i] = a == 0 ? PFVM_ACL_L_REPL : PFVM_ACL_L_FIRST;
        return 1;
    }
    if (op->accel == pfvm_acl_transpose) {
        const int64_t *perm;
        int np = pfvm_node_attr_ints(n, "perm", &perm);
        int xa = np == y->rank ? (int)perm[a] : y->rank - 1 - a;
        in_kind[0] = pfvm__acl_axis_kind(xa, in[0].rank);
        return in_kind[0] >= 0;
    }
    if (op->accel == pfvm_acl_view || (op->fusion == PFVM_FUSE_INJECTIVE && (op->flags & PFVM_OP_IN_PLACE))) {
        /* a reshape keeps the split when it keeps the leading axis */
        for (i = 1; i < n->n_inputs; i++)
            in_kind[i] = PFVM_ACL_L_REPL;
        in_kind[0] = kind;
        return a == 0 && in[0].rank >= 1 && in[0].dims[0] == y->dims[0] &&
               pfvm__acl_kind_axis(kind, in[0].rank) == 0;
    }
    if (op->accel == pfvm_acl_concat) {
        int64_t axis = pfvm_node_attr_int(n, "axis", 0);
        if (axis < 0)
            axis += y->rank;
        for (i = 0; i < n->n_inputs; i++)
            if (in[i].rank >= 0)
                in_kind[i] = kind;
        return axis != a;
    }
    if (op->fusion == PFVM_FUSE_REDUCTION || op->accel == pfvm_acl_slice) {
        /* reductions, softmax and normalizations over trailing axes keep
         * the leading ones whole on their PE; a slice keeps the unsliced */
        if (in[0].rank != y->rank || a == y->rank - 1 || in[0].dims[a] != y->dims[a])
            return 0;
        in_kind[0] = kind;
        return 1;
    }
    if (op->fusion == PFVM_FUSE_ELEMENTWISE || op->fusion == PFVM_FUSE_BROADCAST || op->accel == pfvm_acl_clip ||
        op->accel == pfvm_acl_batchnorm || op->accel == pfvm_acl_pool || op->accel == pfvm_acl_global_pool) {
        int window = op->accel == pfvm_acl_pool || op->accel == pfvm_acl_global_pool;
        if (window && a > 1)
            return 0; /* windows and whole planes over the spatial axes */
        for (i = 0; i < n->n_inputs; i++)
            if (in[i].rank >= 0 && (in_kind[i] = pfvm__acl_bcast_kind(&in[i], y, a)) < 0)
                return 0;
        if (op->accel == pfvm_acl_batchnorm)
            for (i = 1; i < n->n_inputs; i++)
                in_kind[i] = a == 1 ? PFVM_ACL_L_FIRST : PFVM_ACL_L_REPL;
        return 1;
    }
    return 0;
}
