/* ops/image: resampling — Resize (nearest, n-linear, cubic; every
 * coordinate transformation), Upsample (its older form), GridSample and
 * RoiAlign — and detection: NonMaxSuppression.
 *
 * Resize interpolation is separable: for each output coordinate along each
 * axis the engine finds the source taps (indices, edge-clamped like the
 * ONNX reference, and weights), then sums over the product of the axes'
 * taps. Taps are recomputed only for the axes whose output coordinate
 * changed, and zero-weight taps are dropped, so unscaled axes and nearest
 * mode cost one tap. */
#include "ops_common.h"

#include <math.h>

#define PFVM__IMG_TAPS 4

/* A string attribute, or def when absent (or a function's reference). */
static const char *pfvm__img_str(const pfvm_node *n, const char *name, const char *def)
{
    const pfvm_attr *a = pfvm_node_attr(n, name);
    return a && !a->ref_attr_name && a->type == PFVM_ATTR_STRING && a->s ? a->s : def;
}

static int pfvm__img_pick(const char *s, const char *const *names, int n)
{
    int i;
    for (i = 0; i < n; i++)
        if (!strcmp(s, names[i]))
            return i;
    return -1;
}

/* ---- Resize and Upsample: attributes ---------------------------------------------------- */

enum { PFVM__IMG_NEAREST, PFVM__IMG_LINEAR, PFVM__IMG_CUBIC };
enum { PFVM__IMG_HALF_PIXEL, PFVM__IMG_ASYMMETRIC, PFVM__IMG_ALIGN_CORNERS, PFVM__IMG_PYTORCH_HALF_PIXEL,
       PFVM__IMG_TF_CROP_AND_RESIZE, PFVM__IMG_TF_HALF_PIXEL_FOR_NN, PFVM__IMG_HALF_PIXEL_SYMMETRIC };
enum { PFVM__IMG_ROUND_PREFER_FLOOR, PFVM__IMG_ROUND_PREFER_CEIL, PFVM__IMG_FLOOR, PFVM__IMG_CEIL };
enum { PFVM__IMG_STRETCH, PFVM__IMG_NOT_LARGER, PFVM__IMG_NOT_SMALLER };

typedef struct pfvm__img_cfg {
    int mode, coord, nearest, policy, exclude_outside;
    double cubic_a, extrapolation;
    double scale[PFVM_MAX_RANK];
    int64_t out[PFVM_MAX_RANK];
    double roi_start[PFVM_MAX_RANK], roi_end[PFVM_MAX_RANK];
} pfvm__img_cfg;

static int pfvm__img_is_upsample(const pfvm_node *n)
{
    return !strcmp(n->op_type, "Upsample");
}

/* Reads and validates the attributes (no node prefix in the message). */
static pfvm_code pfvm__img_config(const pfvm_node *node, pfvm__img_cfg *c, pfvm_status *st)
{
    static const char *const modes[] = {"nearest", "linear", "cubic"};
    static const char *const coords[] = {"half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel",
                                         "tf_crop_and_resize", "tf_half_pixel_for_nn", "half_pixel_symmetric"};
    static const char *const nearest[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
    static const char *const policies[] = {"stretch", "not_larger", "not_smaller"};
    const char *m = pfvm__img_str(node, "mode", "nearest"), *s;
    /* Upsample and Resize-10 map coordinates asymmetrically and floor */
    int old = pfvm__img_is_upsample(node) || node->opset < 11;
    memset(c, 0, sizeof *c);
    c->mode = pfvm__img_pick(m, modes, 3);
    if (pfvm__img_is_upsample(node) && !strcmp(m, "bilinear"))
        c->mode = PFVM__IMG_LINEAR;
    if (c->mode < 0 || (old && c->mode == PFVM__IMG_CUBIC))
        return pfvm__fail(st, PFVM_ERR_INVALID, "mode '%s' is not valid", m);
    s = pfvm__img_str(node, "coordinate_transformation_mode", "half_pixel");
    c->coord = old ? PFVM__IMG_ASYMMETRIC : pfvm__img_pick(s, coords, node->opset >= 19 ? 7 : 6);
    if (c->coord < 0)
        return pfvm__fail(st, PFVM_ERR_INVALID, "coordinate_transformation_mode '%s' is not valid", s);
    s = pfvm__img_str(node, "nearest_mode", "round_prefer_floor");
    c->nearest = old ? PFVM__IMG_FLOOR : pfvm__img_pick(s, nearest, 4);
    if (c->nearest < 0)
        return pfvm__fail(st, PFVM_ERR_INVALID, "nearest_mode '%s' is not valid", s);
    s = pfvm__img_str(node, "keep_aspect_ratio_policy", "stretch");
    c->policy = node->opset >= 18 ? pfvm__img_pick(s, policies, 3) : PFVM__IMG_STRETCH;
    if (c->policy < 0)
        return pfvm__fail(st, PFVM_ERR_INVALID, "keep_aspect_ratio_policy '%s' is not valid", s);
    if (node->opset >= 18 && pfvm_node_attr_int(node, "antialias", 0))
        return pfvm__fail(st, PFVM_ERR_UNSUPPORTED, "antialias is not supported");
    c->cubic_a = pfvm_node_attr_float(node, "cubic_coeff_a", -0.75f);
    c->extrapolation = pfvm_node_attr_float(node, "extrapolation_value", 0.0f);
    c->exclude_outside = pfvm_node_attr_int(node, "exclude_outside", 0) != 0;
    return PFVM_OK;
}

static pfvm_code pfvm__img_check_resize(const pfvm_node *node, pfvm_status *st)
{
    pfvm__img_cfg c;
    return pfvm__img_config(node, &c, st);
}

/* The axes that scales, sizes and roi list (opset 18's `axes`; before it,
 * every axis). Returns the count, or -1 with the status set. */
static int pfvm__img_axes(const pfvm_node *node, int rank, int *axes, pfvm_status *st)
{
    const int64_t *a;
    int n = node->opset >= 18 ? pfvm_node_attr_ints(node, "axes", &a) : -1, i, j;
    if (n < 0) {
        for (i = 0; i < rank; i++)
            axes[i] = i;
        return rank;
    }
    if (n > rank)
        return pfvm__fail(st, PFVM_ERR_INVALID, "%d axes for rank %d", n, rank), -1;
    for (i = 0; i < n; i++) {
        axes[i] = pfvm__axis(a[i], rank);
        if (axes[i] < 0)
            return pfvm__fail(st, PFVM_ERR_INVALID, "axis %lld is out of range for rank %d", (long long)a[i], rank), -1;
        for (j = 0; j < i; j++)
            if (axes[j] == axes[i])
                return pfvm__fail(st, PFVM_ERR_INVALID, "axis %d is repeated", axes[i]), -1;
    }
    return n;
}

/* Input slots of scales and sizes (-1: none; Upsample-7 has an attribute). */
static int pfvm__img_scales_at(const pfvm_node *n)
{
    if (pfvm__img_is_upsample(n))
        return n->opset < 9 ? -1 : 1;
    return n->opset < 11 ? 1 : 2;
}

static int pfvm__img_sizes_at(const pfvm_node *n)
{
    return pfvm__img_is_upsample(n) || n->opset < 11 ? -1 : 3;
}

/* Output sizes and per-axis scales from known inputs: `sc` holds n_sc
 * scales and `sz` n_sz sizes for the listed axes (a count of 0: absent).
 * Fails (without node prefix) on a request that cannot be met. */
static pfvm_code pfvm__img_plan(int rank, const int64_t *dims, const int *axes, int n_ax, int policy, const double *sc,
                                int n_sc, const int64_t *sz, int n_sz, double *scale, int64_t *out, pfvm_status *st)
{
    int i;
    for (i = 0; i < rank; i++) {
        scale[i] = 1;
        out[i] = dims[i];
    }
    if (n_sz > 0) {
        double keep = policy == PFVM__IMG_NOT_LARGER ? INFINITY : 0;
        if (n_sz != n_ax)
            return pfvm__fail(st, PFVM_ERR_INVALID, "%d sizes for %d axes", n_sz, n_ax);
        for (i = 0; i < n_ax; i++) {
            int64_t d = dims[axes[i]];
            if (sz[i] < 0)
                return pfvm__fail(st, PFVM_ERR_INVALID, "size %lld is negative", (long long)sz[i]);
            out[axes[i]] = sz[i];
            scale[axes[i]] = d ? (double)sz[i] / (double)d : 1.0;
            if (policy == PFVM__IMG_NOT_LARGER)
                keep = fmin(keep, scale[axes[i]]);
            else if (policy == PFVM__IMG_NOT_SMALLER)
                keep = fmax(keep, scale[axes[i]]);
        }
        if (policy != PFVM__IMG_STRETCH)
            for (i = 0; i < n_ax; i++) {
                /* one scale for every axis; sizes round half up */
                double o = keep * (double)dims[axes[i]] + 0.5;
                if (!(o < 0x1p62))
                    return pfvm__fail(st, PFVM_ERR_INVALID, "output size is too large");
                scale[axes[i]] = keep;
                out[axes[i]] = (int64_t)o;
            }
        return PFVM_OK;
    }
    if (n_sc <= 0)
        return pfvm__fail(st, PFVM_ERR_INVALID, "neither scales nor sizes are given");
    if (n_sc != n_ax)
        return pfvm__fail(st, PFVM_ERR_INVALID, "%d scales for %d axes", n_sc, n_ax);
    for (i = 0; i < n_ax; i++) {
        double o = sc[i] * (double)dims[axes[i]];
        if (!(sc[i] > 0) || !(o < 0x1p62))
            return pfvm__fail(st, PFVM_ERR_INVALID, "scale %g is not a usable positive number", sc[i]);
        scale[axes[i]] = sc[i];
        out[axes[i]] = (int64_t)o; /* truncation, as the reference */
    }
    return PFVM_OK;
}

/* floor(d * s) as a symbolic expression when s is a dyadic rational
 * p / 2^k with small p and k (every float scale is; 2, 0.5, 1.5 are
 * small), NULL otherwise. Exact: the reference multiplies in double. */
static const pfvm_sym *pfvm__img_sym_scale(pfvm_symtab *t, const pfvm_sym *d, double s)
{
    int k;
    for (k = 0; k <= 16; k++) {
        double p = ldexp(s, k);
        if (p == floor(p) && p >= 1 && p < 0x1p31) {
            const pfvm_sym *m = pfvm_sym_muli(t, d, (int64_t)p);
            return k ? pfvm_sym_div(t, m, pfvm_sym_const(t, (int64_t)1 << k)) : m;
        }
    }
    return NULL;
}

/* Whether an optional tensor input is provably present but empty. */
static int pfvm__img_ival_empty(const pfvm_ival *v)
{
    int64_t n;
    return v && v->type.shape.rank == 1 && pfvm_sym_is_const(v->type.shape.dims[0], &n) && n == 0;
}

/* Scales the inference knows (an attribute, or a constant input): the
 * count, 0 when absent, -1 when given but not known before running. */
static int pfvm__img_iscales(pfvm_ictx *c, int si, double *scv)
{
    const pfvm_ival *sc = si >= 0 && si < c->n_in ? c->in[si] : NULL;
    int64_t n;
    int i;
    if (si < 0) {
        const float *f;
        int cnt = pfvm_node_attr_floats(c->node, "scales", &f);
        for (i = 0; i < cnt && i < PFVM_MAX_RANK; i++)
            scv[i] = f[i];
        return cnt < 0 ? 0 : cnt > PFVM_MAX_RANK ? PFVM_MAX_RANK + 1 : cnt;
    }
    if (!sc || pfvm__img_ival_empty(sc))
        return 0;
    if (!sc->value || sc->value->kind != PFVM_KIND_TENSOR || !pfvm_dtype_is_float(sc->value->dtype))
        return -1;
    n = pfvm_tensor_numel(sc->value);
    for (i = 0; i < n && i < PFVM_MAX_RANK; i++)
        scv[i] = pfvm_tensor_get_f64(sc->value, i);
    return n > PFVM_MAX_RANK ? PFVM_MAX_RANK + 1 : (int)n;
}

static pfvm_code pfvm__img_infer(pfvm_ictx *c)
{
    const pfvm_shape *x = &c->in[0]->type.shape;
    const pfvm_ival *sz = NULL;
    const pfvm_sym *unknown[PFVM_MAX_RANK];
    pfvm_dtype dt = c->in[0]->type.dtype;
    pfvm__img_cfg cfg;
    int axes[PFVM_MAX_RANK], n_ax, zi = pfvm__img_sizes_at(c->node), i, n_sc, n_sz = 0, all_const = 1;
    int64_t dims[PFVM_MAX_RANK], szv[PFVM_MAX_RANK], out[PFVM_MAX_RANK];
    double scv[PFVM_MAX_RANK], scale[PFVM_MAX_RANK];
    pfvm_shape *os;
    if (pfvm__img_config(c->node, &cfg, c->st))
        return c->st ? c->st->code : PFVM_ERR_INVALID;
    if (x->rank < 0)
        return pfvm_infer_unknown(c, 0, dt, -1);
    if ((n_ax = pfvm__img_axes(c->node, x->rank, axes, c->st)) < 0)
        return c->st ? c->st->code : PFVM_ERR_INVALID;
    /* resized dims start as named unknowns, the others as the input's */
    if (pfvm_infer_unknown(c, 0, dt, x->rank))
        return c->st ? c->st->code : PFVM_ERR_INVALID;
    os = &c->out[0]->type.shape;
    for (i = 0; i < x->rank; i++) {
        dims[i] = 0;
        all_const &= pfvm_sym_is_const(x->dims[i], &dims[i]);
        unknown[i] = os->dims[i];
        os->dims[i] = x->dims[i];
    }
    for (i = 0; i < n_ax; i++)
        os->dims[axes[i]] = unknown[axes[i]];
    if (zi >= 0 && zi < c->n_in && c->in[zi] && !pfvm__img_ival_empty(c->in[zi])) {
        sz = c->in[zi];
        n_sz = pfvm_ival_ints(sz, szv, PFVM_MAX_RANK);
        if (n_sz < 0 && sz->sym && sz->n_sym == n_ax && cfg.policy == PFVM__IMG_STRETCH) {
            /* sizes built from shapes (Shape -> Gather -> Concat) stay symbolic */
            for (i = 0; i < n_ax; i++)
                os->dims[axes[i]] = sz->sym[i];
            return PFVM_OK;
        }
        if (n_sz > 0 && !all_const && cfg.policy == PFVM__IMG_STRETCH) {
            if (n_sz != n_ax)
                return pfvm__fail(c->st, PFVM_ERR_INVALID, "%d sizes for %d axes", n_sz, n_ax);
            for (i = 0; i < n_ax; i++) {
                if (szv[i] < 0)
                    return pfvm__fail(c->st, PFVM_ERR_INVALID, "size %lld is negative", (long long)szv[i]);
                os->dims[axes[i]] = pfvm_sym_const(c->syms, szv[i]);
            }
            return PFVM_OK;
        }
        if (n_sz < 0 || (n_sz > 0 && !all_const))
            return PFVM_OK; /* known when the node runs */
    }
    n_sc = n_sz > 0 ? 0 : pfvm__img_iscales(c, pfvm__img_scales_at(c->node), scv);
    if (n_sc < 0)
        return PFVM_OK;
    if (all_const || n_sz > 0 || n_sc != n_ax) {
        /* everything is known, or the request is provably wrong */
        if (pfvm__img_plan(x->rank, dims, axes, n_ax, cfg.policy, scv, n_sc, szv, n_sz, scale, out, c->st))
            return c->st ? c->st->code : PFVM_ERR_INVALID;
        if (all_const)
            return pfvm_shape_from_dims(c->syms, os, x->rank, out, c->st);
    }
    for (i = 0; i < n_ax; i++) {
        const pfvm_sym *d = x->dims[axes[i]], *o;
        int64_t dv;
        if (!(scv[i] > 0) || !(scv[i] < 0x1p31))
            return pfvm__fail(c->st, PFVM_ERR_INVALID, "scale %g is not a usable positive number", scv[i]);
        if (pfvm_sym_is_const(d, &dv))
            o = scv[i] * (double)dv < 0x1p62 ? pfvm_sym_const(c->syms, (int64_t)(scv[i] * (double)dv)) : NULL;
        else
            o = pfvm__img_sym_scale(c->syms, d, scv[i]);
        if (o)
            os->dims[axes[i]] = o;
    }
    return PFVM_OK;
}

/* ---- Resize and Upsample: the kernel ------------------------------------------------------ */

/* Source coordinate of output coordinate x along an axis (the ONNX
 * reference's mapping); `outside` is set when a crop box misses the input. */
static double pfvm__img_source(const pfvm__img_cfg *c, int axis, int64_t x, int64_t in, int *outside)
{
    double s = c->scale[axis], out_w = s * (double)in, xo, rs = c->roi_start[axis], re = c->roi_end[axis];
    *outside = 0;
    switch (c->coord) {
    case PFVM__IMG_ALIGN_CORNERS: return out_w == 1 ? 0 : (double)x * (double)(in - 1) / (out_w - 1);
    case PFVM__IMG_ASYMMETRIC: return (double)x / s;
    case PFVM__IMG_PYTORCH_HALF_PIXEL: return out_w == 1 ? -0.5 : ((double)x + 0.5) / s - 0.5;
    case PFVM__IMG_TF_HALF_PIXEL_FOR_NN: return ((double)x + 0.5) / s;
    case PFVM__IMG_HALF_PIXEL_SYMMETRIC: {
        /* centres the output on the input when the size was rounded */
        double adjust = (double)c->out[axis] / out_w;
        return (double)in / 2 * (1 - adjust) + ((double)x + 0.5) / s - 0.5;
    }
    case PFVM__IMG_TF_CROP_AND_RESIZE:
        xo = out_w == 1 ? (re - rs) * (double)(in - 1) / 2 : (double)x * (re - rs) * (double)(in - 1) / (out_w - 1);
        xo += rs * (double)(in - 1);
        *outside = !(xo >= 0 && xo <= (double)(in - 1));
        return xo;
    default: return ((double)x + 0.5) / s - 0.5;
    }
}

/* Source taps along one axis for output coordinate x: indices into the
 * input (edge-clamped) and weights, zero weights dropped. Returns the tap
 * count, or 0 when the point lies outside a tf_crop_and_resize box. */
static int pfvm__img_taps(const pfvm__img_cfg *c, int axis, int64_t x, int64_t in, int64_t *idx, double *w)
{
    int outside, n, i, pad, kept;
    double xo = pfvm__img_source(c, axis, x, in, &outside), ratio, lo;
    int64_t start, lim;
    if (outside || xo != xo)
        return 0;
    ratio = xo == floor(xo) ? 1.0 : xo - floor(xo);
    if (c->mode == PFVM__IMG_CUBIC) {
        double a = c->cubic_a, r = ratio;
        n = 4;
        w[0] = ((a * (r + 1) - 5 * a) * (r + 1) + 8 * a) * (r + 1) - 4 * a;
        w[1] = ((a + 2) * r - (a + 3)) * r * r + 1;
        w[2] = ((a + 2) * (1 - r) - (a + 3)) * (1 - r) * (1 - r) + 1;
        w[3] = ((a * ((1 - r) + 1) - 5 * a) * ((1 - r) + 1) + 8 * a) * ((1 - r) + 1) - 4 * a;
    } else if (c->mode == PFVM__IMG_LINEAR) {
        n = 2;
        w[0] = 1 - ratio;
        w[1] = ratio;
    } else {
        int hi;
        if (ratio == 1.0)
            hi = 1;
        else if (c->nearest == PFVM__IMG_ROUND_PREFER_FLOOR)
            hi = ratio > 0.5;
        else if (c->nearest == PFVM__IMG_ROUND_PREFER_CEIL)
            hi = ratio >= 0.5;
        else
            hi = c->nearest == PFVM__IMG_CEIL;
        n = 2;
        w[0] = !hi;
        w[1] = hi;
    }
    /* the n nearest positions to xo in the edge-padded axis, smaller first;
     * xo is clamped first so that the integer conversion stays defined
     * (the start is clamped to the same range anyway) */
    pad = (n + 1) / 2;
    lim = in + 2 * pad;
    lo = xo < -(double)pad - 1 ? -(double)pad - 1 : xo > (double)(in + pad) ? (double)(in + pad) : xo;
    start = (int64_t)ceil(lo + pad) - n / 2;
    if (start > lim - n)
        start = lim - n;
    if (start < 0)
        start = 0;
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
    for (i = kept = 0; i < n; i++)
        if (w[i] != 0) {
            idx[kept] = idx[i];
            w[kept++] = w[i];
        }
    if (!kept) {
        w[0] = 0;
        kept = 1;
    }
    return kept;
}

/* Fills cfg's scales, sizes and roi from the inputs. */
static pfvm_code pfvm__img_kplan(pfvm_kctx *k, pfvm__img_cfg *c)
{
    const pfvm_tensor *X = k->in[0];
    int si = pfvm__img_scales_at(k->node), zi = pfvm__img_sizes_at(k->node), axes[PFVM_MAX_RANK], n_ax, i, n_sc = 0, n_sz = 0;
    int r = X->rank;
    double scv[PFVM_MAX_RANK];
    int64_t szv[PFVM_MAX_RANK];
    const pfvm_tensor *sc = si >= 0 && si < k->n_in ? k->in[si] : NULL, *sz = zi >= 0 && zi < k->n_in ? k->in[zi] : NULL;
    if ((n_ax = pfvm__img_axes(k->node, r, axes, k->st)) < 0)
        return k->st ? k->st->code : PFVM_ERR_INVALID;
    if (sz && pfvm_tensor_numel(sz) > 0) {
        if (!pfvm_dtype_is_int(sz->dtype) || pfvm_tensor_numel(sz) != n_ax)
            return pfvm__fail(k->st, PFVM_ERR_INVALID, "sizes must be %d integers", n_ax);
        n_sz = n_ax;
        for (i = 0; i < n_sz; i++)
            szv[i] = pfvm_tensor_get_i64(sz, i);
    } else if (si < 0) {
        const float *f;
        n_sc = pfvm_node_attr_floats(k->node, "scales", &f);
        if (n_sc != n_ax)
            return pfvm__fail(k->st, PFVM_ERR_INVALID, "scales must be %d floats", n_ax);
        for (i = 0; i < n_sc; i++)
            scv[i] = f[i];
    } else if (sc && pfvm_tensor_numel(sc) > 0) {
        if (!pfvm_dtype_is_float(sc->dtype) || pfvm_tensor_numel(sc) != n_ax)
            return pfvm__fail(k->st, PFVM_ERR_INVALID, "scales must be %d floats", n_ax);
        n_sc = n_ax;
        for (i = 0; i < n_sc; i++)
            scv[i] = pfvm_tensor_get_f64(sc, i);
    }
    if (pfvm__img_plan(r, X->dims, axes, n_ax, c->policy, scv, n_sc, szv, n_sz, c->scale, c->out, k->st))
        return k->st ? k->st->code : PFVM_ERR_INVALID;
    for (i = 0; i < r; i++) {
        c->roi_start[i] = 0;
        c->roi_end[i] = 1;
    }
    if (c->coord == PFVM__IMG_TF_CROP_AND_RESIZE) {
        const pfvm_tensor *roi = k->n_in > 1 ? k->in[1] : NULL;
        if (!roi || pfvm_tensor_numel(roi) != 2 * n_ax || !pfvm_dtype_is_float(roi->dtype))
            return pfvm__fail(k->st, PFVM_ERR_INVALID, "tf_crop_and_resize needs a roi of %d floats", 2 * n_ax);
        for (i = 0; i < n_ax; i++) {
            c->roi_start[axes[i]] = pfvm_tensor_get_f64(roi, i);
            c->roi_end[axes[i]] = pfvm_tensor_get_f64(roi, i + n_ax);
        }
    }
    return PFVM_OK;
}

static pfvm_code pfvm__img_k_resize(pfvm_kctx *k)
{
    const pfvm_tensor *X = k->in[0];
    pfvm_tensor *Y;
    pfvm__img_cfg c;
    int64_t xs[PFVM_MAX_RANK], idx[PFVM_MAX_RANK] = {0}, total, o;
    int64_t tidx[PFVM_MAX_RANK][PFVM__IMG_TAPS];
    double tw[PFVM_MAX_RANK][PFVM__IMG_TAPS];
    int ntap[PFVM_MAX_RANK], r = X->rank, d, changed = 0, outside = 0;
    if (pfvm__img_config(k->node, &c, k->st) || pfvm__img_kplan(k, &c))
        return pfvm__op_fail(k->st, k->node, k->st ? k->st->code : PFVM_ERR_INVALID, "%s", k->st ? k->st->msg : "bad input");
    if (pfvm_tensor_numel(X) == 0) {
        for (d = 0; d < r; d++)
            if (c.out[d] == 0)
                break;
        if (d == r)
            return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "cannot resize an empty tensor to a non-empty one");
    }
    if (!pfvm_dtype_is_float(X->dtype) && !pfvm_dtype_is_int(X->dtype))
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_UNSUPPORTED, "element type %s", pfvm_dtype_name(X->dtype));
    if (pfvm_kctx_output(k, 0, X->dtype, r, c.out))
        return k->st ? k->st->code : PFVM_ERR_INVALID;
    Y = k->out[0];
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
        int t[PFVM_MAX_RANK] = {0};
        /* only the axes at and after the odometer's carry moved */
        for (d = changed; d < r; d++)
            ntap[d] = pfvm__img_taps(&c, d, idx[d], X->dims[d], tidx[d], tw[d]);
        for (d = outside = 0; d < r; d++)
            outside |= !ntap[d];
        if (outside) {
            acc = c.extrapolation;
        } else {
            for (;;) {
                double w = 1;
                int64_t src = 0;
                for (d = 0; d < r; d++) {
                    w *= tw[d][t[d]];
                    src += tidx[d][t[d]] * xs[d];
                }
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
        pfvm_red_store(Y, o, acc);
        for (d = r - 1; d >= 0; d--) {
            if (++idx[d] < Y->dims[d])
                break;
            idx[d] = 0;
        }
        changed = d < 0 ? 0 : d;
    }
    return PFVM_OK;
}

/* ---- GridSample (opset 16, as torch's grid_sample) -------------------------------------- */

typedef struct pfvm__img_gs {
    int mode, pad, align; /* mode 0 bilinear, 1 nearest, 2 bicubic; pad 0 zeros, 1 border, 2 reflection */
    const pfvm_tensor *X;
    int64_t base, H, W;
} pfvm__img_gs;

/* Modes and padding modes; opset 20 renamed bilinear/bicubic to linear/cubic. */
static pfvm_code pfvm__img_gs_config(const pfvm_node *n, pfvm__img_gs *g, pfvm_status *st)
{
    static const char *const modes[] = {"bilinear", "nearest", "bicubic", "linear", "cubic"};
    static const char *const pads[] = {"zeros", "border", "reflection"};
    const char *m = pfvm__img_str(n, "mode", n->opset >= 20 ? "linear" : "bilinear");
    const char *p = pfvm__img_str(n, "padding_mode", "zeros");
    g->mode = pfvm__img_pick(m, modes, 5);
    g->mode = g->mode == 3 ? 0 : g->mode == 4 ? 2 : g->mode;
    g->pad = pfvm__img_pick(p, pads, 3);
    g->align = pfvm_node_attr_int(n, "align_corners", 0) != 0;
    if (g->mode < 0)
        return pfvm__fail(st, PFVM_ERR_INVALID, "mode '%s' is not valid", m);
    if (g->pad < 0)
        return pfvm__fail(st, PFVM_ERR_INVALID, "padding_mode '%s' is not valid", p);
    return PFVM_OK;
}

static pfvm_code pfvm__img_check_gs(const pfvm_node *n, pfvm_status *st)
{
    pfvm__img_gs g;
    return pfvm__img_gs_config(n, &g, st);
}

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

/* Pixel at integral (y, x); 0 outside the image (or for NaN). The range is
 * checked in double so the conversion is always defined. */
static double pfvm__img_gs_px(const pfvm__img_gs *g, double y, double x)
{
    if (!(y >= 0 && y < (double)g->H && x >= 0 && x < (double)g->W))
        return 0;
    return pfvm_tensor_get_f64(g->X, g->base + (int64_t)y * g->W + (int64_t)x);
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

static double pfvm__img_gs_sample(const pfvm__img_gs *g, double gx, double gy)
{
    double W = (double)g->W, H = (double)g->H;
    double x = g->align ? (gx + 1) / 2 * (W - 1) : ((gx + 1) * W - 1) / 2;
    double y = g->align ? (gy + 1) / 2 * (H - 1) : ((gy + 1) * H - 1) / 2;
    if (g->mode == 2) {
        double wx[4], wy[4], acc = 0, x0 = floor(x), y0 = floor(y);
        int i, j;
        pfvm__img_cubic(x - x0, wx);
        pfvm__img_cubic(y - y0, wy);
        for (j = 0; j < 4; j++)
            for (i = 0; i < 4; i++)
                acc += wx[i] * wy[j] * pfvm__img_gs_px(g, pfvm__img_gs_pad(g, y0 - 1 + j, g->H), pfvm__img_gs_pad(g, x0 - 1 + i, g->W));
        return acc;
    }
    x = pfvm__img_gs_pad(g, x, g->W);
    y = pfvm__img_gs_pad(g, y, g->H);
    if (g->mode == 1)
        return pfvm__img_gs_px(g, nearbyint(y), nearbyint(x));
    {
        double x0 = floor(x), y0 = floor(y), tx = x - x0, ty = y - y0;
        return pfvm__img_gs_px(g, y0, x0) * (1 - tx) * (1 - ty) + pfvm__img_gs_px(g, y0, x0 + 1) * tx * (1 - ty) +
               pfvm__img_gs_px(g, y0 + 1, x0) * (1 - tx) * ty + pfvm__img_gs_px(g, y0 + 1, x0 + 1) * tx * ty;
    }
}

/* X [N,C,H,W], grid [N,Ho,Wo,2] -> [N,C,Ho,Wo]. */
static pfvm_code pfvm__img_infer_gs(pfvm_ictx *c)
{
    const pfvm_shape *x = &c->in[0]->type.shape, *g = &c->in[1]->type.shape;
    pfvm_shape out;
    if (x->rank >= 0 && x->rank != 4)
        return pfvm__fail(c->st, PFVM_ERR_SHAPE, "X must be 4-D [N,C,H,W], not rank %d", x->rank);
    if (g->rank >= 0 && g->rank != 4)
        return pfvm__fail(c->st, PFVM_ERR_SHAPE, "grid must be 4-D [N,Ho,Wo,2], not rank %d", g->rank);
    if (g->rank == 4 && pfvm_infer_check_eq(c, g->dims[3], pfvm_sym_const(c->syms, 2), "grid's last dim and 2"))
        return c->st ? c->st->code : PFVM_ERR_SHAPE;
    if (x->rank != 4 || g->rank != 4)
        return pfvm_infer_unknown(c, 0, c->in[0]->type.dtype, 4);
    if (pfvm_infer_check_eq(c, x->dims[0], g->dims[0], "the batch sizes of X and grid"))
        return c->st ? c->st->code : PFVM_ERR_SHAPE;
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
    const pfvm_tensor *X = k->in[0], *G = k->in[1];
    pfvm__img_gs g;
    int64_t N, C, Ho, Wo, n, c, i, j, dims[4];
    if (pfvm__img_gs_config(k->node, &g, k->st))
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "%s", k->st ? k->st->msg : "bad attributes");
    if (X->rank != 4 || G->rank != 4 || G->dims[3] != 2 || G->dims[0] != X->dims[0])
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "X must be [N,C,H,W] and grid [N,Ho,Wo,2]");
    if (!pfvm_dtype_is_float(G->dtype) || (!pfvm_dtype_is_float(X->dtype) && !pfvm_dtype_is_int(X->dtype)))
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_UNSUPPORTED, "element types %s and %s", pfvm_dtype_name(X->dtype),
                             pfvm_dtype_name(G->dtype));
    N = X->dims[0];
    C = X->dims[1];
    Ho = G->dims[1];
    Wo = G->dims[2];
    dims[0] = N;
    dims[1] = C;
    dims[2] = Ho;
    dims[3] = Wo;
    if (pfvm_kctx_output(k, 0, X->dtype, 4, dims))
        return k->st ? k->st->code : PFVM_ERR_INVALID;
    g.X = X;
    g.H = X->dims[2];
    g.W = X->dims[3];
    for (n = 0; n < N; n++)
        for (c = 0; c < C; c++) {
            g.base = (n * C + c) * g.H * g.W;
            for (i = 0; i < Ho; i++)
                for (j = 0; j < Wo; j++) {
                    int64_t gi = ((n * Ho + i) * Wo + j) * 2;
                    double v = pfvm__img_gs_sample(&g, pfvm_tensor_get_f64(G, gi), pfvm_tensor_get_f64(G, gi + 1));
                    pfvm_red_store(k->out[0], ((n * C + c) * Ho + i) * Wo + j, v);
                }
        }
    return PFVM_OK;
}

/* ---- RoiAlign ------------------------------------------------------------------------------ */

/* More sampling points per bin than this is a malformed region. */
#define PFVM__IMG_ROI_MAX_GRID 65536

static pfvm_code pfvm__img_check_roialign(const pfvm_node *n, pfvm_status *st)
{
    const char *m = pfvm__img_str(n, "mode", "avg"), *t = pfvm__img_str(n, "coordinate_transformation_mode", "half_pixel");
    if (strcmp(m, "avg") && strcmp(m, "max"))
        return pfvm__fail(st, PFVM_ERR_INVALID, "mode '%s' is not valid", m);
    if (strcmp(t, "half_pixel") && strcmp(t, "output_half_pixel"))
        return pfvm__fail(st, PFVM_ERR_INVALID, "coordinate_transformation_mode '%s' is not valid", t);
    if (pfvm_node_attr_int(n, "output_height", 1) < 1 || pfvm_node_attr_int(n, "output_width", 1) < 1)
        return pfvm__fail(st, PFVM_ERR_INVALID, "output_height and output_width must be positive");
    if (pfvm_node_attr_int(n, "sampling_ratio", 0) < 0 || pfvm_node_attr_int(n, "sampling_ratio", 0) > PFVM__IMG_ROI_MAX_GRID)
        return pfvm__fail(st, PFVM_ERR_INVALID, "sampling_ratio must be in [0, %d]", PFVM__IMG_ROI_MAX_GRID);
    return PFVM_OK;
}

/* X [N,C,H,W], rois [R,4], batch_indices [R] -> [R,C,oh,ow]. */
static pfvm_code pfvm__img_infer_roialign(pfvm_ictx *c)
{
    const pfvm_shape *x = &c->in[0]->type.shape, *r = &c->in[1]->type.shape, *bi = &c->in[2]->type.shape;
    pfvm_shape out;
    if (pfvm__img_check_roialign(c->node, c->st))
        return c->st ? c->st->code : PFVM_ERR_INVALID;
    if (x->rank >= 0 && x->rank != 4)
        return pfvm__fail(c->st, PFVM_ERR_SHAPE, "X must be 4-D [N,C,H,W], not rank %d", x->rank);
    if (r->rank >= 0 && r->rank != 2)
        return pfvm__fail(c->st, PFVM_ERR_SHAPE, "rois must be 2-D [R,4], not rank %d", r->rank);
    if (bi->rank >= 0 && bi->rank != 1)
        return pfvm__fail(c->st, PFVM_ERR_SHAPE, "batch_indices must be 1-D [R], not rank %d", bi->rank);
    if (r->rank == 2 && (pfvm_infer_check_eq(c, r->dims[1], pfvm_sym_const(c->syms, 4), "rois' second dim and 4") ||
                         (bi->rank == 1 && pfvm_infer_check_eq(c, r->dims[0], bi->dims[0], "the counts of rois and batch_indices"))))
        return c->st ? c->st->code : PFVM_ERR_SHAPE;
    if (x->rank != 4 || (r->rank != 2 && bi->rank != 1))
        return pfvm_infer_unknown(c, 0, c->in[0]->type.dtype, 4);
    out.rank = 4;
    out.dims[0] = r->rank == 2 ? r->dims[0] : bi->dims[0];
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
    if (!(y >= -1.0 && y <= (double)H && x >= -1.0 && x <= (double)W))
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
        /* as onnxruntime: the largest weighted corner */
        r = -INFINITY;
        for (i = 0; i < 4; i++)
            r = fmax(r, w[i] * v[i]);
        return r;
    }
    for (i = 0; i < 4; i++)
        r += w[i] * v[i];
    return r;
}

/* Sampling points per bin along one side: the attribute, or adaptive. */
static int64_t pfvm__img_roi_grid(int64_t ratio, double extent, int64_t bins)
{
    double g = ceil(extent / (double)bins);
    if (ratio > 0)
        return ratio;
    return g >= 1 && g <= PFVM__IMG_ROI_MAX_GRID ? (int64_t)g : g < 1 ? 0 : -1;
}

/* What one region's sampling costs the run's operation budget, charged
 * before sampling (saturating): a sample reads four corners and weighs
 * them, some 30 operations, counted as 32. */
static uint64_t pfvm__img_roi_work(int64_t bins, int64_t gh, int64_t gw)
{
    uint64_t w = pfvm__sat_mul(32, (uint64_t)(bins > 0 ? bins : 0));
    w = pfvm__sat_mul(w, gh > 0 ? (uint64_t)gh : 1);
    return pfvm__sat_mul(w, gw > 0 ? (uint64_t)gw : 1);
}

static pfvm_code pfvm__img_k_roialign(pfvm_kctx *k)
{
    const pfvm_tensor *X = k->in[0], *R = k->in[1], *BI = k->in[2];
    int64_t oh = pfvm_node_attr_int(k->node, "output_height", 1), ow = pfvm_node_attr_int(k->node, "output_width", 1);
    int64_t ratio = pfvm_node_attr_int(k->node, "sampling_ratio", 0), N, C, H, W, num, r, c, ph, pw, dims[4];
    double scale = pfvm_node_attr_float(k->node, "spatial_scale", 1.0f);
    int is_max = !strcmp(pfvm__img_str(k->node, "mode", "avg"), "max");
    int half = k->node->opset >= 16 && !strcmp(pfvm__img_str(k->node, "coordinate_transformation_mode", "half_pixel"),
                                               "half_pixel");
    if (pfvm__img_check_roialign(k->node, k->st))
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "%s", k->st ? k->st->msg : "bad attributes");
    if (X->rank != 4 || R->rank != 2 || R->dims[1] != 4 || pfvm_tensor_numel(BI) != R->dims[0])
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "X must be [N,C,H,W], rois [num,4], batch_indices [num]");
    if (!pfvm_dtype_is_float(X->dtype) || !pfvm_dtype_is_float(R->dtype) || !pfvm_dtype_is_int(BI->dtype))
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_UNSUPPORTED, "element types %s, %s, %s", pfvm_dtype_name(X->dtype),
                             pfvm_dtype_name(R->dtype), pfvm_dtype_name(BI->dtype));
    N = X->dims[0];
    C = X->dims[1];
    H = X->dims[2];
    W = X->dims[3];
    num = R->dims[0];
    dims[0] = num;
    dims[1] = C;
    dims[2] = oh;
    dims[3] = ow;
    if (pfvm_kctx_output(k, 0, X->dtype, 4, dims))
        return k->st ? k->st->code : PFVM_ERR_INVALID;
    if (H * W == 0 && num * C > 0)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "the feature map is empty");
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
        gh = pfvm__img_roi_grid(ratio, rh, oh);
        gw = pfvm__img_roi_grid(ratio, rw, ow);
        if (gh < 0 || gw < 0 || !isfinite(x1) || !isfinite(y1))
            return pfvm__op_fail(k->st, k->node, PFVM_ERR_RANGE, "region %lld is not finite or too large", (long long)r);
        if (pfvm_kctx_spend(k, pfvm__img_roi_work(C * oh * ow, gh, gw)))
            return k->st ? k->st->code : PFVM_ERR_RUNTIME;
        for (c = 0; c < C; c++)
            for (ph = 0; ph < oh; ph++)
                for (pw = 0; pw < ow; pw++) {
                    double acc = is_max ? -INFINITY : 0;
                    int64_t iy, ix, cnt = gh * gw > 0 ? gh * gw : 1;
                    for (iy = 0; iy < gh; iy++)
                        for (ix = 0; ix < gw; ix++) {
                            double y = y1 + (double)ph * bh + ((double)iy + 0.5) * bh / (double)gh;
                            double x = x1 + (double)pw * bw + ((double)ix + 0.5) * bw / (double)gw;
                            double v = pfvm__img_roi_sample(X, (b * C + c) * H * W, H, W, y, x, is_max);
                            acc = is_max ? fmax(acc, v) : acc + v;
                        }
                    if (!is_max)
                        acc /= (double)cnt;
                    pfvm_red_store(k->out[0], ((r * C + c) * oh + ph) * ow + pw, acc);
                }
    }
    return PFVM_OK;
}

/* ---- NonMaxSuppression ------------------------------------------------------------------ */

/* boxes [B, N, 4] and scores [B, C, N]. */
static pfvm_code pfvm__img_infer_nms(pfvm_ictx *c)
{
    const pfvm_shape *b = &c->in[0]->type.shape, *s = &c->in[1]->type.shape;
    pfvm_code rc;
    if ((rc = pfvm_infer_check_rank(c, 0, 3, "boxes")) || (rc = pfvm_infer_check_rank(c, 1, 3, "scores")))
        return rc;
    if (b->rank == 3 && ((rc = pfvm_infer_check_eq(c, b->dims[2], pfvm_sym_const(c->syms, 4), "the box size (boxes dim 2) and 4"))))
        return rc;
    if (b->rank == 3 && s->rank == 3 &&
        ((rc = pfvm_infer_check_eq(c, b->dims[0], s->dims[0], "the batch sizes of boxes and scores")) ||
         (rc = pfvm_infer_check_eq(c, b->dims[1], s->dims[2], "the box counts of boxes (dim 1) and scores (dim 2)"))))
        return rc;
    rc = pfvm_infer_unknown(c, 0, PFVM_INT64, 2);
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
    if (!(ih > 0 && iw > 0))
        return 0;
    inter = ih * iw;
    uni = (ay2 - ay1) * (ax2 - ax1) + (by2 - by1) * (bx2 - bx1) - inter;
    return uni > 0 ? inter / uni : 0;
}

/* An optional scalar input, or def when omitted or empty. */
static double pfvm__img_opt_scalar(const pfvm_kctx *k, int i, double def, int *present)
{
    int has = i < k->n_in && k->in[i] && pfvm_tensor_numel(k->in[i]) > 0;
    if (present)
        *present = has;
    return has ? pfvm_tensor_get_f64(k->in[i], 0) : def;
}

static pfvm_code pfvm__img_k_nms(pfvm_kctx *k)
{
    const pfvm_tensor *boxes = k->in[0], *scores = k->in[1];
    int64_t maxo = k->n_in > 2 && k->in[2] && pfvm_tensor_numel(k->in[2]) ? pfvm_tensor_get_i64(k->in[2], 0) : 0;
    double iou_t = pfvm__img_opt_scalar(k, 3, 0, NULL), score_t;
    int has_st, center = pfvm_node_attr_int(k->node, "center_point_box", 0) != 0;
    int64_t B, C, N, b, c, i, n_sel = 0, dims[2], most, cap;
    size_t bytes, state_bytes;
    unsigned char *state; /* per box: 0 candidate, 1 selected, 2 suppressed or below threshold */
    int64_t *sel;
    score_t = pfvm__img_opt_scalar(k, 4, 0, &has_st);
    if (boxes->rank != 3 || boxes->dims[2] != 4 || scores->rank != 3 || scores->dims[0] != boxes->dims[0] ||
        scores->dims[2] != boxes->dims[1])
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "boxes must be [B,N,4] and scores [B,C,N]");
    B = boxes->dims[0];
    N = boxes->dims[1];
    C = scores->dims[1];
    maxo = maxo < 0 ? 0 : maxo;
    most = maxo < N ? maxo : N;
    /* selections are collected first: the output's size depends on them */
    state_bytes = ((size_t)N + 15) & ~(size_t)15;
    if (!pfvm__mul_i64(B, C, &cap) || !pfvm__mul_i64(cap, most, &cap) || (uint64_t)cap > SIZE_MAX / 32 ||
        !pfvm__mul_size((size_t)cap + 1, 3 * sizeof(int64_t), &bytes) || !pfvm__add_size(bytes, state_bytes, &bytes))
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_NOMEM, "too many boxes");
    state = (unsigned char *)pfvm_kctx_scratch(k, bytes);
    if (!state)
        return k->st ? k->st->code : PFVM_ERR_NOMEM;
    sel = (int64_t *)(void *)(state + state_bytes);
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

/* ---- the table ------------------------------------------------------------------------------ */

#define PFVM__IMG_T "float,double,float16,bfloat16,int8,uint8,int16,uint16,int32,uint32,int64,uint64"

/* ---- gradients ---------------------------------------------------------------------------- */

/* Resize and Upsample are separable: along each axis d the output is a
 * fixed matrix M_d [out_d, in_d] (the kernel's taps) applied to the input,
 * the extrapolated positions being rows of zeros. The gradient applies the
 * transposes, axis by axis: dX = dY x_d M_d, as a MatMul on dY with axis d
 * moved last. Needs the input's shape and the scales, sizes and roi known
 * before running. */
static pfvm_code pfvm__img_grad(pfvm_grad_ctx *g, const pfvm_node *n)
{
    pfvm_value *gy = pfvm_grad_out(g, 0), *x = n->inputs[0];
    const pfvm_type *tx;
    const pfvm_tensor *kin[8];
    pfvm_tensor xh;
    pfvm_kctx k;
    pfvm__img_cfg c;
    int r, d, j;
    if (!gy)
        return PFVM_OK;
    tx = pfvm_grad_type(g, x);
    r = tx->shape.rank;
    if (r < 1 || n->n_inputs > 8)
        return pfvm_grad_fail(g, "input of unknown rank");
    memset(&xh, 0, sizeof xh);
    xh.kind = PFVM_KIND_TENSOR;
    xh.dtype = tx->dtype;
    xh.rank = r;
    for (d = 0; d < r; d++)
        if (!pfvm_sym_is_const(tx->shape.dims[d], &xh.dims[d]))
            return pfvm_grad_fail(g, "needs the input's shape known");
    kin[0] = &xh;
    for (j = 1; j < n->n_inputs; j++) {
        kin[j] = NULL;
        if (n->inputs[j] && !(kin[j] = pfvm_grad_known_value(g, n->inputs[j])))
            return pfvm_grad_fail(g, "needs input %d (roi, scales or sizes) known before running", j);
    }
    memset(&k, 0, sizeof k);
    k.node = n;
    k.n_in = n->n_inputs;
    k.in = kin;
    k.st = g->st;
    if (pfvm__img_config(n, &c, g->st) || pfvm__img_kplan(&k, &c))
        return pfvm_grad_fail(g, "%s", g->st->msg);
    for (d = r - 1; d >= 0; d--) {
        int64_t in = xh.dims[d], out = c.out[d], o, tidx[PFVM__IMG_TAPS], dims[2], perm[PFVM_MAX_RANK], inv[PFVM_MAX_RANK];
        double tw[PFVM__IMG_TAPS];
        int identity = in == out, t, nt, i;
        pfvm_tensor *m;
        pfvm_value *mv;
        dims[0] = out;
        dims[1] = in;
        m = pfvm_tensor_new(PFVM_DOUBLE, 2, dims, g->st);
        if (!m)
            return g->st->code;
        for (o = 0; o < out; o++) {
            nt = pfvm__img_taps(&c, d, o, in, tidx, tw);
            if (nt != 1 || tidx[0] != o || tw[0] != 1)
                identity = 0;
            for (t = 0; t < nt; t++)
                ((double *)m->data)[o * in + tidx[t]] += tw[t];
        }
        if (identity) {
            pfvm_tensor_free(m);
            continue;
        }
        mv = pfvm_grad_cast(g, pfvm_grad_tensor(g, PFVM_DOUBLE, 2, dims, m->data), tx->dtype);
        pfvm_tensor_free(m);
        for (i = 0, j = 0; i < r; i++)
            if (i != d)
                perm[j++] = i;
        perm[r - 1] = d;
        for (i = 0; i < r; i++)
            inv[perm[i]] = i;
        gy = pfvm_grad_transpose(g, pfvm_grad_op2(g, "MatMul", pfvm_grad_transpose(g, gy, perm, r), mv), inv, r);
    }
    return pfvm_grad_add(g, x, gy);
}

PFVM_INTERNAL const pfvm_op_def pfvm__ops_image[] = {
    {"Resize", "", 10, 0, 1, 4, 1, 1, pfvm__img_infer, pfvm__img_k_resize, pfvm__img_check_resize, PFVM_FUSE_INJECTIVE,
     PFVM__IMG_T, NULL, 0, NULL, pfvm__img_grad, NULL, NULL, NULL, NULL, NULL, NULL},
    {"Upsample", "", 7, 0, 1, 2, 1, 1, pfvm__img_infer, pfvm__img_k_resize, pfvm__img_check_resize, PFVM_FUSE_INJECTIVE,
     PFVM__IMG_T, NULL, 0, NULL, pfvm__img_grad, NULL, NULL, NULL, NULL, NULL, NULL},
    {"GridSample", "", 16, 0, 2, 2, 1, 1, pfvm__img_infer_gs, pfvm__img_k_gs, pfvm__img_check_gs, PFVM_FUSE_OPAQUE,
     PFVM__IMG_T, NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
    {"RoiAlign", "", 10, 0, 3, 3, 1, 1, pfvm__img_infer_roialign, pfvm__img_k_roialign, pfvm__img_check_roialign,
     PFVM_FUSE_OPAQUE, "float,double,float16,bfloat16", NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
    {"NonMaxSuppression", "", 10, 0, 2, 5, 1, 1, pfvm__img_infer_nms, pfvm__img_k_nms, NULL, PFVM_FUSE_OPAQUE,
     "float,double,float16", NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
    {NULL, NULL, 0, 0, 0, 0, 0, 0, NULL, NULL, NULL, PFVM_FUSE_OPAQUE, NULL, NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL}
};
