/* ops/image: resampling — Resize (nearest, n-linear, cubic; every
 * coordinate transformation), Upsample (its older form) and GridSample —
 * and detection: NonMaxSuppression.
 *
 * Interpolation is separable: for each output coordinate along each axis
 * the engine finds up to four source indices and weights (edge-clamped like
 * the ONNX reference), then sums over their product. */
#include "ops_common.h"

#include <math.h>

#define PFVM__IMG_TAPS 4

typedef struct pfvm__img_cfg {
    int mode;             /* 0 nearest, 1 linear, 2 cubic */
    int coord;            /* 0 half_pixel, 1 asymmetric, 2 align_corners, 3 pytorch_half_pixel, 4 tf_crop_and_resize, 5 tf_half_pixel_for_nn */
    int nearest;          /* 0 round_prefer_floor, 1 round_prefer_ceil, 2 floor, 3 ceil */
    double cubic_a, extrapolation;
    int exclude_outside;
    double scale[PFVM_MAX_RANK];
    double roi_start[PFVM_MAX_RANK], roi_end[PFVM_MAX_RANK];
} pfvm__img_cfg;

static int pfvm__img_pick(const char *s, const char *const *names, int n)
{
    int i;
    for (i = 0; i < n; i++)
        if (!strcmp(s, names[i]))
            return i;
    return -1;
}

static pfvm_code pfvm__img_config(const pfvm_node *node, pfvm__img_cfg *c, pfvm_status *st)
{
    static const char *modes[] = {"nearest", "linear", "cubic"};
    static const char *coords[] = {"half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel",
                                   "tf_crop_and_resize", "tf_half_pixel_for_nn"};
    static const char *nearest[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
    int upsample = !strcmp(node->op_type, "Upsample");
    const char *m = pfvm_node_attr_string(node, "mode", "nearest");
    memset(c, 0, sizeof *c);
    c->mode = pfvm__img_pick(m, modes, 3);
    if (upsample && !strcmp(m, "bilinear"))
        c->mode = 1;
    /* Upsample and Resize-10 map coordinates asymmetrically and floor */
    c->coord = upsample || node->opset < 11 ? 1
                                            : pfvm__img_pick(pfvm_node_attr_string(node, "coordinate_transformation_mode",
                                                                                   "half_pixel"), coords, 6);
    c->nearest = upsample || node->opset < 11 ? 2
                                              : pfvm__img_pick(pfvm_node_attr_string(node, "nearest_mode", "round_prefer_floor"),
                                                               nearest, 4);
    c->cubic_a = pfvm_node_attr_float(node, "cubic_coeff_a", -0.75f);
    c->extrapolation = pfvm_node_attr_float(node, "extrapolation_value", 0.0f);
    c->exclude_outside = (int)pfvm_node_attr_int(node, "exclude_outside", 0);
    if (c->mode < 0 || c->coord < 0 || c->nearest < 0)
        return pfvm__fail(st, PFVM_ERR_INVALID, "mode '%s', coordinate transformation or nearest mode is not valid", m);
    return PFVM_OK;
}

/* Scales (as given) and output sizes for input dims, from scales or sizes. */
static int pfvm__img_sizes(const pfvm_node *node, const pfvm_tensor *const *in, int n_in, int rank, const int64_t *dims,
                           double *scale, int64_t *out)
{
    const pfvm_tensor *scales = NULL, *sizes = NULL;
    int i;
    if (!strcmp(node->op_type, "Upsample") && node->opset < 9) {
        const float *f;
        if (pfvm_node_attr_floats(node, "scales", &f) != rank)
            return 0;
        for (i = 0; i < rank; i++)
            scale[i] = f[i];
    } else {
        int si = !strcmp(node->op_type, "Upsample") || node->opset < 11 ? 1 : 2;
        scales = si < n_in ? in[si] : NULL;
        sizes = n_in > 3 ? in[3] : NULL;
        if (scales && pfvm_tensor_numel(scales) == 0)
            scales = NULL;
        if (sizes && pfvm_tensor_numel(sizes) == 0)
            sizes = NULL;
        if (sizes) {
            if (pfvm_tensor_numel(sizes) != rank)
                return 0;
            for (i = 0; i < rank; i++) {
                out[i] = pfvm_tensor_get_i64(sizes, i);
                scale[i] = dims[i] ? (double)out[i] / (double)dims[i] : 1.0;
            }
            return 1;
        }
        if (!scales || pfvm_tensor_numel(scales) != rank)
            return 0;
        for (i = 0; i < rank; i++)
            scale[i] = pfvm_tensor_get_f64(scales, i);
    }
    for (i = 0; i < rank; i++) {
        if (!(scale[i] > 0))
            return 0;
        out[i] = (int64_t)((double)dims[i] * scale[i]); /* truncation, as the reference */
    }
    return 1;
}

static pfvm_code pfvm__img_infer(pfvm_ictx *c)
{
    const pfvm_shape *x = &c->in[0]->type.shape;
    const pfvm_tensor *vals[4] = {NULL, NULL, NULL, NULL};
    int64_t dims[PFVM_MAX_RANK], out[PFVM_MAX_RANK];
    double scale[PFVM_MAX_RANK];
    int i;
    pfvm_shape s;
    if (x->rank < 0)
        return pfvm_infer_unknown(c, 0, c->in[0]->type.dtype, -1);
    for (i = 0; i < c->n_in && i < 4; i++)
        vals[i] = c->in[i] ? c->in[i]->value : NULL;
    for (i = 0; i < x->rank; i++)
        if (!pfvm_sym_is_const(x->dims[i], &dims[i]))
            return pfvm_infer_unknown(c, 0, c->in[0]->type.dtype, x->rank);
    if (!pfvm__img_sizes(c->node, vals, c->n_in, x->rank, dims, scale, out))
        return pfvm_infer_unknown(c, 0, c->in[0]->type.dtype, x->rank);
    if (pfvm_shape_from_dims(c->syms, &s, x->rank, out, c->st))
        return c->st ? c->st->code : PFVM_ERR_NOMEM;
    pfvm_ival_set_tensor(c->out[0], c->in[0]->type.dtype, &s);
    return PFVM_OK;
}

/* Source taps along one axis for output coordinate x: indices into the
 * input (edge-clamped) and weights. Returns the tap count, or 0 when the
 * point lies outside a tf_crop_and_resize box. */
static int pfvm__img_taps(const pfvm__img_cfg *c, int axis, int64_t x, int64_t in, int64_t *idx, double *w)
{
    double s = c->scale[axis], out_w = s * (double)in, xo, ratio;
    int n, i, pad;
    int64_t start, lim;
    switch (c->coord) {
    case 2: xo = out_w == 1 ? 0 : (double)x * (double)(in - 1) / (out_w - 1); break;
    case 1: xo = (double)x / s; break;
    case 4:
        xo = out_w == 1 ? (c->roi_end[axis] - c->roi_start[axis]) * (double)(in - 1) / 2
                        : (double)x * (c->roi_end[axis] - c->roi_start[axis]) * (double)(in - 1) / (out_w - 1);
        xo += c->roi_start[axis] * (double)(in - 1);
        if (xo < 0 || xo > (double)(in - 1))
            return 0;
        break;
    case 3: xo = out_w == 1 ? -0.5 : ((double)x + 0.5) / s - 0.5; break;
    case 5: xo = ((double)x + 0.5) / s; break;
    default: xo = ((double)x + 0.5) / s - 0.5; break;
    }
    ratio = xo == floor(xo) ? 1.0 : xo - floor(xo);
    if (c->mode == 2) {
        double a = c->cubic_a, r = ratio;
        n = 4;
        w[0] = ((a * (r + 1) - 5 * a) * (r + 1) + 8 * a) * (r + 1) - 4 * a;
        w[1] = ((a + 2) * r - (a + 3)) * r * r + 1;
        w[2] = ((a + 2) * (1 - r) - (a + 3)) * (1 - r) * (1 - r) + 1;
        w[3] = ((a * ((1 - r) + 1) - 5 * a) * ((1 - r) + 1) + 8 * a) * ((1 - r) + 1) - 4 * a;
    } else {
        n = 2;
        if (c->mode == 1) {
            w[0] = 1 - ratio;
            w[1] = ratio;
        } else {
            int hi;
            if (ratio == 1.0)
                hi = 1;
            else if (c->nearest == 0)
                hi = ratio > 0.5;
            else if (c->nearest == 1)
                hi = ratio >= 0.5;
            else
                hi = c->nearest == 3;
            w[0] = !hi;
            w[1] = hi;
        }
    }
    /* the n nearest positions to xo in the edge-padded axis, smaller first */
    pad = (n + 1) / 2;
    lim = in + 2 * pad;
    start = (int64_t)ceil(xo + pad) - n / 2;
    if (start < 0)
        start = 0;
    if (start > lim - n)
        start = lim - n;
    for (i = 0; i < n; i++) {
        int64_t orig = start + i - pad;
        if (c->exclude_outside && (orig < 0 || orig >= in))
            w[i] = 0;
        idx[i] = orig < 0 ? 0 : orig >= in ? in - 1 : orig;
    }
    if (c->exclude_outside) {
        double sum = 0;
        for (i = 0; i < n; i++)
            sum += w[i];
        for (i = 0; i < n && sum != 0; i++)
            w[i] /= sum;
    }
    return n;
}

static pfvm_code pfvm__img_k_resize(pfvm_kctx *k)
{
    const pfvm_tensor *X = k->in[0];
    pfvm_tensor *Y = k->out[0];
    pfvm__img_cfg c;
    int64_t out[PFVM_MAX_RANK], xs[PFVM_MAX_RANK], idx[PFVM_MAX_RANK] = {0}, total, o;
    int64_t tidx[PFVM_MAX_RANK][PFVM__IMG_TAPS];
    double tw[PFVM_MAX_RANK][PFVM__IMG_TAPS];
    int ntap[PFVM_MAX_RANK], r = X->rank, d;
    if (pfvm__img_config(k->node, &c, k->st))
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "%s", k->st ? k->st->msg : "bad attributes");
    if (!pfvm__img_sizes(k->node, k->in, k->n_in, r, X->dims, c.scale, out))
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "scales or sizes are missing or do not match the rank");
    for (d = 0; d < r; d++) {
        c.roi_start[d] = 0;
        c.roi_end[d] = 1;
    }
    if (c.coord == 4 && k->n_in > 1 && k->in[1] && pfvm_tensor_numel(k->in[1]) == 2 * r)
        for (d = 0; d < r; d++) {
            c.roi_start[d] = pfvm_tensor_get_f64(k->in[1], d);
            c.roi_end[d] = pfvm_tensor_get_f64(k->in[1], d + r);
        }
    if (!Y->data && pfvm_kctx_output(k, 0, X->dtype, r, out))
        return k->st ? k->st->code : PFVM_ERR_NOMEM;
    {
        int64_t s = 1;
        for (d = r - 1; d >= 0; d--) {
            xs[d] = s;
            s *= X->dims[d];
        }
    }
    total = pfvm_tensor_numel(Y);
    for (o = 0; o < total; o++) {
        double acc = 0;
        int outside = 0, t[PFVM_MAX_RANK] = {0};
        for (d = 0; d < r; d++) {
            ntap[d] = pfvm__img_taps(&c, d, idx[d], X->dims[d], tidx[d], tw[d]);
            if (!ntap[d])
                outside = 1;
        }
        if (outside) {
            acc = c.extrapolation;
        } else {
            /* sum over every combination of taps */
            for (;;) {
                double w = 1;
                int64_t src = 0;
                for (d = 0; d < r; d++) {
                    w *= tw[d][t[d]];
                    src += tidx[d][t[d]] * xs[d];
                }
                if (w != 0)
                    acc += w * pfvm_tensor_get_f64(X, src);
                for (d = r - 1; d >= 0; d--) {
                    if (++t[d] < ntap[d])
                        break;
                    t[d] = 0;
                }
                if (d < 0)
                    break;
            }
        }
        switch (Y->dtype) {
        case PFVM_FLOAT: ((float *)Y->data)[o] = (float)acc; break;
        case PFVM_DOUBLE: ((double *)Y->data)[o] = acc; break;
        case PFVM_FLOAT16: ((uint16_t *)Y->data)[o] = pfvm_float_to_half((float)acc); break;
        case PFVM_UINT8: ((uint8_t *)Y->data)[o] = (uint8_t)(acc < 0 ? 0 : acc > 255 ? 255 : floor(acc + 0.5)); break;
        case PFVM_INT8: ((int8_t *)Y->data)[o] = (int8_t)(acc < -128 ? -128 : acc > 127 ? 127 : floor(acc + 0.5)); break;
        case PFVM_INT32: ((int32_t *)Y->data)[o] = (int32_t)floor(acc + 0.5); break;
        case PFVM_INT64: ((int64_t *)Y->data)[o] = (int64_t)floor(acc + 0.5); break;
        default: return pfvm__op_fail(k->st, k->node, PFVM_ERR_UNSUPPORTED, "element type %s", pfvm_dtype_name(Y->dtype));
        }
        for (d = r - 1; d >= 0; d--) {
            if (++idx[d] < Y->dims[d])
                break;
            idx[d] = 0;
        }
    }
    return PFVM_OK;
}

/* ---- GridSample (opset 16, as torch's grid_sample) -------------------------------- */

typedef struct pfvm__img_gs {
    int mode, pad, align; /* mode 0 bilinear, 1 nearest, 2 bicubic; pad 0 zeros, 1 border, 2 reflection */
} pfvm__img_gs;

static double pfvm__img_reflect(double x, double twice_lo, double twice_hi)
{
    double lo, span, extra, flips;
    if (twice_lo == twice_hi)
        return 0;
    lo = twice_lo / 2;
    span = (twice_hi - twice_lo) / 2;
    x = fabs(x - lo);
    extra = fmod(x, span);
    flips = floor(x / span);
    return fmod(flips, 2) == 0 ? extra + lo : span - extra + lo;
}

/* Source coordinate after the padding mode (border and reflection pull it
 * into the image). */
static double pfvm__img_gs_pad(const pfvm__img_gs *g, double x, int64_t size)
{
    if (g->pad == 1) {
        x = x < 0 ? 0 : x > (double)(size - 1) ? (double)(size - 1) : x;
    } else if (g->pad == 2) {
        x = g->align ? pfvm__img_reflect(x, 0, 2.0 * (double)(size - 1)) : pfvm__img_reflect(x, -1, 2.0 * (double)size - 1);
        x = x < 0 ? 0 : x > (double)(size - 1) ? (double)(size - 1) : x;
    }
    return x;
}

static double pfvm__img_gs_px(const pfvm_tensor *X, int64_t base, int64_t H, int64_t W, int64_t y, int64_t x)
{
    return y >= 0 && y < H && x >= 0 && x < W ? pfvm_tensor_get_f64(X, base + y * W + x) : 0;
}

static void pfvm__img_cubic(double t, double *w)
{
    const double a = -0.75;
    double x1 = t + 1, x2 = t, x3 = 1 - t, x4 = 2 - t;
    w[0] = ((a * x1 - 5 * a) * x1 + 8 * a) * x1 - 4 * a;
    w[1] = ((a + 2) * x2 - (a + 3)) * x2 * x2 + 1;
    w[2] = ((a + 2) * x3 - (a + 3)) * x3 * x3 + 1;
    w[3] = ((a * x4 - 5 * a) * x4 + 8 * a) * x4 - 4 * a;
}

static double pfvm__img_gs_sample(const pfvm__img_gs *g, const pfvm_tensor *X, int64_t base, int64_t H, int64_t W, double gx,
                                  double gy)
{
    double x = g->align ? (gx + 1) / 2 * (double)(W - 1) : ((gx + 1) * (double)W - 1) / 2;
    double y = g->align ? (gy + 1) / 2 * (double)(H - 1) : ((gy + 1) * (double)H - 1) / 2;
    if (g->mode == 2) {
        double wx[4], wy[4], acc = 0, x0 = floor(x), y0 = floor(y);
        int i, j;
        pfvm__img_cubic(x - x0, wx);
        pfvm__img_cubic(y - y0, wy);
        for (j = 0; j < 4; j++)
            for (i = 0; i < 4; i++) {
                double tx = pfvm__img_gs_pad(g, x0 - 1 + i, W), ty = pfvm__img_gs_pad(g, y0 - 1 + j, H);
                acc += wx[i] * wy[j] * pfvm__img_gs_px(X, base, H, W, (int64_t)ty, (int64_t)tx);
            }
        return acc;
    }
    x = pfvm__img_gs_pad(g, x, W);
    y = pfvm__img_gs_pad(g, y, H);
    if (g->mode == 1)
        return pfvm__img_gs_px(X, base, H, W, (int64_t)nearbyint(y), (int64_t)nearbyint(x));
    {
        double x0 = floor(x), y0 = floor(y), tx = x - x0, ty = y - y0;
        int64_t ix = (int64_t)x0, iy = (int64_t)y0;
        return pfvm__img_gs_px(X, base, H, W, iy, ix) * (1 - tx) * (1 - ty) + pfvm__img_gs_px(X, base, H, W, iy, ix + 1) * tx * (1 - ty) +
               pfvm__img_gs_px(X, base, H, W, iy + 1, ix) * (1 - tx) * ty + pfvm__img_gs_px(X, base, H, W, iy + 1, ix + 1) * tx * ty;
    }
}

static pfvm_code pfvm__img_infer_gs(pfvm_ictx *c)
{
    const pfvm_shape *x = &c->in[0]->type.shape, *g = &c->in[1]->type.shape;
    pfvm_shape out;
    if (x->rank != 4 || g->rank != 4)
        return pfvm_infer_unknown(c, 0, c->in[0]->type.dtype, 4);
    out.rank = 4;
    out.dims[0] = x->dims[0];
    out.dims[1] = x->dims[1];
    out.dims[2] = g->dims[1];
    out.dims[3] = g->dims[2];
    pfvm_ival_set_tensor(c->out[0], c->in[0]->type.dtype, &out);
    return PFVM_OK;
}

static pfvm_code pfvm__img_k_gs(pfvm_kctx *k)
{
    static const char *modes[] = {"bilinear", "nearest", "bicubic"}, *pads[] = {"zeros", "border", "reflection"};
    const pfvm_tensor *X = k->in[0], *G = k->in[1];
    pfvm__img_gs g;
    int64_t N, C, H, W, Ho, Wo, n, c, i, j;
    g.mode = pfvm__img_pick(pfvm_node_attr_string(k->node, "mode", "bilinear"), modes, 3);
    g.pad = pfvm__img_pick(pfvm_node_attr_string(k->node, "padding_mode", "zeros"), pads, 3);
    g.align = (int)pfvm_node_attr_int(k->node, "align_corners", 0);
    if (g.mode < 0 || g.pad < 0)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "mode or padding_mode is not valid");
    if (X->rank != 4 || G->rank != 4 || G->dims[3] != 2 || G->dims[0] != X->dims[0])
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "X must be [N,C,H,W] and grid [N,Ho,Wo,2]");
    N = X->dims[0];
    C = X->dims[1];
    H = X->dims[2];
    W = X->dims[3];
    Ho = G->dims[1];
    Wo = G->dims[2];
    for (n = 0; n < N; n++)
        for (c = 0; c < C; c++)
            for (i = 0; i < Ho; i++)
                for (j = 0; j < Wo; j++) {
                    int64_t gi = ((n * Ho + i) * Wo + j) * 2, o = ((n * C + c) * Ho + i) * Wo + j;
                    double v = pfvm__img_gs_sample(&g, X, (n * C + c) * H * W, H, W, pfvm_tensor_get_f64(G, gi),
                                                   pfvm_tensor_get_f64(G, gi + 1));
                    if (k->out[0]->dtype == PFVM_DOUBLE)
                        ((double *)k->out[0]->data)[o] = v;
                    else
                        ((float *)k->out[0]->data)[o] = (float)v;
                }
    return PFVM_OK;
}

/* ---- RoiAlign ----------------------------------------------------------------------- */

static pfvm_code pfvm__img_infer_roialign(pfvm_ictx *c)
{
    const pfvm_shape *x = &c->in[0]->type.shape, *r = &c->in[1]->type.shape;
    pfvm_shape out;
    if (x->rank != 4 || r->rank != 2)
        return pfvm_infer_unknown(c, 0, c->in[0]->type.dtype, 4);
    out.rank = 4;
    out.dims[0] = r->dims[0];
    out.dims[1] = x->dims[1];
    out.dims[2] = pfvm_sym_const(c->syms, pfvm_node_attr_int(c->node, "output_height", 1));
    out.dims[3] = pfvm_sym_const(c->syms, pfvm_node_attr_int(c->node, "output_width", 1));
    pfvm_ival_set_tensor(c->out[0], c->in[0]->type.dtype, &out);
    return PFVM_OK;
}

/* Bilinear sample at (y, x) with RoiAlign's edge rules; 0 outside. */
static double pfvm__img_roi_sample(const pfvm_tensor *X, int64_t base, int64_t H, int64_t W, double y, double x, int is_max)
{
    int64_t y0, x0, y1, x1;
    double ly, lx, v[4], w[4], r = 0;
    int i;
    if (y < -1.0 || y > (double)H || x < -1.0 || x > (double)W)
        return is_max ? -INFINITY : 0;
    y = y < 0 ? 0 : y;
    x = x < 0 ? 0 : x;
    y0 = (int64_t)y;
    x0 = (int64_t)x;
    if (y0 >= H - 1) {
        y0 = y1 = H - 1;
        y = (double)y0;
    } else {
        y1 = y0 + 1;
    }
    if (x0 >= W - 1) {
        x0 = x1 = W - 1;
        x = (double)x0;
    } else {
        x1 = x0 + 1;
    }
    ly = y - (double)y0;
    lx = x - (double)x0;
    v[0] = pfvm_tensor_get_f64(X, base + y0 * W + x0);
    v[1] = pfvm_tensor_get_f64(X, base + y0 * W + x1);
    v[2] = pfvm_tensor_get_f64(X, base + y1 * W + x0);
    v[3] = pfvm_tensor_get_f64(X, base + y1 * W + x1);
    w[0] = (1 - ly) * (1 - lx);
    w[1] = (1 - ly) * lx;
    w[2] = ly * (1 - lx);
    w[3] = ly * lx;
    if (is_max) {
        r = -INFINITY;
        for (i = 0; i < 4; i++)
            r = fmax(r, w[i] * v[i]);
        return r;
    }
    for (i = 0; i < 4; i++)
        r += w[i] * v[i];
    return r;
}

static pfvm_code pfvm__img_k_roialign(pfvm_kctx *k)
{
    const pfvm_tensor *X = k->in[0], *R = k->in[1], *BI = k->in[2];
    int64_t oh = pfvm_node_attr_int(k->node, "output_height", 1), ow = pfvm_node_attr_int(k->node, "output_width", 1);
    int64_t ratio = pfvm_node_attr_int(k->node, "sampling_ratio", 0), N, C, H, W, num, r, c, ph, pw;
    double scale = pfvm_node_attr_float(k->node, "spatial_scale", 1.0f);
    int is_max = !strcmp(pfvm_node_attr_string(k->node, "mode", "avg"), "max");
    int half = k->node->opset >= 16 && !strcmp(pfvm_node_attr_string(k->node, "coordinate_transformation_mode", "half_pixel"),
                                               "half_pixel");
    if (X->rank != 4 || R->rank != 2 || R->dims[1] != 4 || pfvm_tensor_numel(BI) != R->dims[0] || oh < 1 || ow < 1)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "X must be [N,C,H,W], rois [num,4], batch_indices [num]");
    N = X->dims[0];
    C = X->dims[1];
    H = X->dims[2];
    W = X->dims[3];
    num = R->dims[0];
    for (r = 0; r < num; r++) {
        int64_t b = pfvm_tensor_get_i64(BI, r), gh, gw;
        double off = half ? 0.5 : 0, x1 = pfvm_tensor_get_f64(R, r * 4) * scale - off, y1 = pfvm_tensor_get_f64(R, r * 4 + 1) * scale - off;
        double x2 = pfvm_tensor_get_f64(R, r * 4 + 2) * scale - off, y2 = pfvm_tensor_get_f64(R, r * 4 + 3) * scale - off;
        double rw = x2 - x1, rh = y2 - y1, bh, bw;
        if (b < 0 || b >= N)
            return pfvm__op_fail(k->st, k->node, PFVM_ERR_RANGE, "batch index %lld is out of range", (long long)b);
        if (!half) {
            rw = fmax(rw, 1);
            rh = fmax(rh, 1);
        }
        bh = rh / (double)oh;
        bw = rw / (double)ow;
        gh = ratio > 0 ? ratio : (int64_t)ceil(rh / (double)oh);
        gw = ratio > 0 ? ratio : (int64_t)ceil(rw / (double)ow);
        for (c = 0; c < C; c++)
            for (ph = 0; ph < oh; ph++)
                for (pw = 0; pw < ow; pw++) {
                    double acc = is_max ? -INFINITY : 0;
                    int64_t iy, ix, cnt = gh * gw > 0 ? gh * gw : 1, o = ((r * C + c) * oh + ph) * ow + pw;
                    for (iy = 0; iy < gh; iy++)
                        for (ix = 0; ix < gw; ix++) {
                            double y = y1 + (double)ph * bh + ((double)iy + 0.5) * bh / (double)gh;
                            double x = x1 + (double)pw * bw + ((double)ix + 0.5) * bw / (double)gw;
                            double v = pfvm__img_roi_sample(X, (b * C + c) * H * W, H, W, y, x, is_max);
                            acc = is_max ? fmax(acc, v) : acc + v;
                        }
                    if (!is_max)
                        acc /= (double)cnt;
                    if (k->out[0]->dtype == PFVM_DOUBLE)
                        ((double *)k->out[0]->data)[o] = acc;
                    else
                        ((float *)k->out[0]->data)[o] = (float)acc;
                }
    }
    return PFVM_OK;
}

/* ---- NonMaxSuppression ------------------------------------------------------------- */

static pfvm_code pfvm__img_infer_nms(pfvm_ictx *c)
{
    pfvm_code rc = pfvm_infer_unknown(c, 0, PFVM_INT64, 2);
    if (!rc)
        c->out[0]->type.shape.dims[1] = pfvm_sym_const(c->syms, 3);
    return rc;
}

/* Corners (y1, x1, y2, x2) of box i, ordered, from either encoding. */
static void pfvm__img_box(const pfvm_tensor *b, int64_t i, int center, double *y1, double *x1, double *y2, double *x2)
{
    double a = pfvm_tensor_get_f64(b, i * 4), bb = pfvm_tensor_get_f64(b, i * 4 + 1);
    double c = pfvm_tensor_get_f64(b, i * 4 + 2), d = pfvm_tensor_get_f64(b, i * 4 + 3);
    if (center) { /* x_center, y_center, width, height */
        *x1 = a - c / 2;
        *x2 = a + c / 2;
        *y1 = bb - d / 2;
        *y2 = bb + d / 2;
        return;
    }
    *y1 = a < c ? a : c;
    *y2 = a < c ? c : a;
    *x1 = bb < d ? bb : d;
    *x2 = bb < d ? d : bb;
}

static double pfvm__img_iou(const pfvm_tensor *b, int64_t i, int64_t j, int center)
{
    double ay1, ax1, ay2, ax2, by1, bx1, by2, bx2, ih, iw, inter, uni;
    pfvm__img_box(b, i, center, &ay1, &ax1, &ay2, &ax2);
    pfvm__img_box(b, j, center, &by1, &bx1, &by2, &bx2);
    ih = fmin(ay2, by2) - fmax(ay1, by1);
    iw = fmin(ax2, bx2) - fmax(ax1, bx1);
    if (ih <= 0 || iw <= 0)
        return 0;
    inter = ih * iw;
    uni = (ay2 - ay1) * (ax2 - ax1) + (by2 - by1) * (bx2 - bx1) - inter;
    return uni > 0 ? inter / uni : 0;
}

static pfvm_code pfvm__img_k_nms(pfvm_kctx *k)
{
    const pfvm_tensor *boxes = k->in[0], *scores = k->in[1];
    int64_t maxo = k->n_in > 2 && k->in[2] && pfvm_tensor_numel(k->in[2]) ? pfvm_tensor_get_i64(k->in[2], 0) : 0;
    double iou_t = k->n_in > 3 && k->in[3] && pfvm_tensor_numel(k->in[3]) ? pfvm_tensor_get_f64(k->in[3], 0) : 0;
    int has_st = k->n_in > 4 && k->in[4] && pfvm_tensor_numel(k->in[4]);
    double score_t = has_st ? pfvm_tensor_get_f64(k->in[4], 0) : 0;
    int center = (int)pfvm_node_attr_int(k->node, "center_point_box", 0);
    int64_t B, C, N, b, c, i, n_sel = 0, dims[2];
    unsigned char *state; /* per box: 0 candidate, 1 selected, 2 suppressed or below threshold */
    int64_t *sel;
    if (boxes->rank != 3 || boxes->dims[2] != 4 || scores->rank != 3 || scores->dims[0] != boxes->dims[0] ||
        scores->dims[2] != boxes->dims[1])
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "boxes must be [B,N,4] and scores [B,C,N]");
    B = boxes->dims[0];
    N = boxes->dims[1];
    C = scores->dims[1];
    if (maxo < 0)
        maxo = 0;
    state = (unsigned char *)pfvm_kctx_scratch(k, (size_t)N + sizeof(int64_t) * 3 * (size_t)(B * C * (maxo < N ? maxo : N) + 1) + 16);
    if (!state)
        return k->st ? k->st->code : PFVM_ERR_NOMEM;
    sel = (int64_t *)(state + ((N + 15) & ~(int64_t)15));
    for (b = 0; b < B; b++)
        for (c = 0; c < C; c++) {
            int64_t picked = 0;
            const int64_t base = (b * C + c) * N;
            for (i = 0; i < N; i++)
                state[i] = has_st && !(pfvm_tensor_get_f64(scores, base + i) > score_t) ? 2 : 0;
            while (picked < maxo) {
                int64_t best = -1;
                double bs = 0;
                for (i = 0; i < N; i++)
                    if (!state[i] && (best < 0 || pfvm_tensor_get_f64(scores, base + i) > bs)) {
                        best = i;
                        bs = pfvm_tensor_get_f64(scores, base + i);
                    }
                if (best < 0)
                    break;
                state[best] = 1;
                sel[n_sel * 3] = b;
                sel[n_sel * 3 + 1] = c;
                sel[n_sel * 3 + 2] = best;
                n_sel++;
                picked++;
                for (i = 0; i < N; i++)
                    if (!state[i] && pfvm__img_iou(boxes, b * N + best, b * N + i, center) > iou_t)
                        state[i] = 2;
            }
        }
    dims[0] = n_sel;
    dims[1] = 3;
    if (pfvm_kctx_output(k, 0, PFVM_INT64, 2, dims))
        return k->st ? k->st->code : PFVM_ERR_NOMEM;
    if (n_sel)
        memcpy(k->out[0]->data, sel, sizeof(int64_t) * 3 * (size_t)n_sel);
    return PFVM_OK;
}

const pfvm_op_def pfvm__ops_image[] = {
    {"RoiAlign", "", 10, 0, 3, 3, 1, 1, pfvm__img_infer_roialign, pfvm__img_k_roialign, NULL, PFVM_FUSE_OPAQUE, "float,double", NULL, 0},
    {"GridSample", "", 16, 0, 2, 2, 1, 1, pfvm__img_infer_gs, pfvm__img_k_gs, NULL, PFVM_FUSE_OPAQUE, "float,double", NULL, 0},
    {"NonMaxSuppression", "", 10, 0, 2, 5, 1, 1, pfvm__img_infer_nms, pfvm__img_k_nms, NULL, PFVM_FUSE_OPAQUE, "float", NULL, 0},
    {"Resize", "", 10, 0, 1, 4, 1, 1, pfvm__img_infer, pfvm__img_k_resize, NULL, PFVM_FUSE_INJECTIVE,
     "float,double,float16,int8,uint8,int32,int64", NULL, 0},
    {"Upsample", "", 7, 0, 1, 2, 1, 1, pfvm__img_infer, pfvm__img_k_resize, NULL, PFVM_FUSE_INJECTIVE,
     "float,double,float16,int8,uint8,int32,int64", NULL, 0},
    {NULL, NULL, 0, 0, 0, 0, 0, 0, NULL, NULL, NULL, PFVM_FUSE_OPAQUE, NULL, NULL, 0}
};
