/* ops/nn: convolution, pooling, normalisation and softmax.
 *
 * Spatial operators share one window description (kernel, strides, pads,
 * dilations over up to three spatial dims, with auto_pad and ceil_mode) used
 * by both the symbolic inference and the kernels. Kernels compute in float
 * (double accumulators where precision matters) and handle float, double
 * and float16 through one load/store pair. */
#include "ops_common.h"

#include <math.h>

#define PFVM__NN_SP 3 /* spatial dims handled */

/* ---- element access ------------------------------------------------------------- */

static float pfvm__nn_ld(const pfvm_tensor *t, int64_t i)
{
    switch (t->dtype) {
    case PFVM_FLOAT: return ((const float *)t->data)[i];
    case PFVM_DOUBLE: return (float)((const double *)t->data)[i];
    case PFVM_FLOAT16: return pfvm_half_to_float(((const uint16_t *)t->data)[i]);
    case PFVM_BFLOAT16: return pfvm_bf16_to_float(((const uint16_t *)t->data)[i]);
    default: return (float)pfvm_tensor_get_f64(t, i);
    }
}

static double pfvm__nn_ldd(const pfvm_tensor *t, int64_t i)
{
    return t->dtype == PFVM_DOUBLE ? ((const double *)t->data)[i] : (double)pfvm__nn_ld(t, i);
}

static void pfvm__nn_st(pfvm_tensor *t, int64_t i, double v)
{
    switch (t->dtype) {
    case PFVM_FLOAT: ((float *)t->data)[i] = (float)v; break;
    case PFVM_DOUBLE: ((double *)t->data)[i] = v; break;
    case PFVM_FLOAT16: ((uint16_t *)t->data)[i] = pfvm_float_to_half((float)v); break;
    case PFVM_BFLOAT16: ((uint16_t *)t->data)[i] = pfvm_float_to_bf16((float)v); break;
    case PFVM_INT8: ((int8_t *)t->data)[i] = (int8_t)v; break;
    case PFVM_UINT8: ((uint8_t *)t->data)[i] = (uint8_t)v; break;
    case PFVM_INT32: ((int32_t *)t->data)[i] = (int32_t)v; break;
    case PFVM_INT64: ((int64_t *)t->data)[i] = (int64_t)v; break;
    default: break;
    }
}

/* ---- windows --------------------------------------------------------------------- */

typedef struct pfvm__nn_win {
    int n;                                 /* spatial dims */
    int64_t k[PFVM__NN_SP], s[PFVM__NN_SP], d[PFVM__NN_SP];
    int64_t pb[PFVM__NN_SP], pe[PFVM__NN_SP]; /* pads at begin and end (explicit ones) */
    int auto_pad;                          /* 0 NOTSET/VALID-explicit, 1 SAME_UPPER, 2 SAME_LOWER, 3 VALID */
    int ceil_mode;
} pfvm__nn_win;

/* Reads kernel_shape (or the weight's dims), strides, dilations, pads. */
static pfvm_code pfvm__nn_window(const pfvm_node *node, int nsp, const int64_t *wdims, pfvm__nn_win *w, pfvm_status *st)
{
    const int64_t *a;
    int cnt, i;
    const char *ap = pfvm_node_attr_string(node, "auto_pad", "NOTSET");
    if (nsp < 1 || nsp > PFVM__NN_SP)
        return pfvm__fail(st, PFVM_ERR_UNSUPPORTED, "%d spatial dimensions (1 to %d supported)", nsp, PFVM__NN_SP);
    memset(w, 0, sizeof *w);
    w->n = nsp;
    cnt = pfvm_node_attr_ints(node, "kernel_shape", &a);
    for (i = 0; i < nsp; i++) {
        w->k[i] = cnt == nsp ? a[i] : wdims ? wdims[i] : 0;
        w->s[i] = w->d[i] = 1;
    }
    if (cnt >= 0 && cnt != nsp)
        return pfvm__fail(st, PFVM_ERR_INVALID, "kernel_shape has %d entries for %d spatial dims", cnt, nsp);
    if ((cnt = pfvm_node_attr_ints(node, "strides", &a)) >= 0) {
        if (cnt != nsp)
            return pfvm__fail(st, PFVM_ERR_INVALID, "strides has %d entries for %d spatial dims", cnt, nsp);
        for (i = 0; i < nsp; i++)
            w->s[i] = a[i];
    }
    if ((cnt = pfvm_node_attr_ints(node, "dilations", &a)) >= 0) {
        if (cnt != nsp)
            return pfvm__fail(st, PFVM_ERR_INVALID, "dilations has %d entries for %d spatial dims", cnt, nsp);
        for (i = 0; i < nsp; i++)
            w->d[i] = a[i];
    }
    if ((cnt = pfvm_node_attr_ints(node, "pads", &a)) >= 0) {
        if (cnt != 2 * nsp)
            return pfvm__fail(st, PFVM_ERR_INVALID, "pads has %d entries for %d spatial dims", cnt, nsp);
        for (i = 0; i < nsp; i++) {
            w->pb[i] = a[i];
            w->pe[i] = a[i + nsp];
        }
    }
    for (i = 0; i < nsp; i++)
        if (w->k[i] < 1 || w->s[i] < 1 || w->d[i] < 1 || w->pb[i] < 0 || w->pe[i] < 0)
            return pfvm__fail(st, PFVM_ERR_INVALID, "kernel, strides and dilations must be positive, pads non-negative");
    w->auto_pad = !strcmp(ap, "SAME_UPPER") ? 1 : !strcmp(ap, "SAME_LOWER") ? 2 : !strcmp(ap, "VALID") ? 3 : 0;
    if (!w->auto_pad && strcmp(ap, "NOTSET"))
        return pfvm__fail(st, PFVM_ERR_INVALID, "auto_pad '%s' is not valid", ap);
    w->ceil_mode = (int)pfvm_node_attr_int(node, "ceil_mode", 0);
    return PFVM_OK;
}

/* Output size along dim i, symbolic. */
static const pfvm_sym *pfvm__nn_out_sym(pfvm_symtab *t, const pfvm__nn_win *w, int i, const pfvm_sym *in)
{
    int64_t ext = w->d[i] * (w->k[i] - 1) + 1;
    const pfvm_sym *s = pfvm_sym_const(t, w->s[i]);
    if (w->auto_pad == 1 || w->auto_pad == 2)
        return pfvm_sym_ceildiv(t, in, s);
    if (w->auto_pad == 3)
        return pfvm_sym_addi(t, pfvm_sym_div(t, pfvm_sym_addi(t, in, -ext), s), 1);
    {
        const pfvm_sym *num = pfvm_sym_addi(t, in, w->pb[i] + w->pe[i] - ext);
        const pfvm_sym *q = w->ceil_mode ? pfvm_sym_ceildiv(t, num, s) : pfvm_sym_div(t, num, s);
        return pfvm_sym_addi(t, q, 1);
    }
}

/* Concrete output sizes and begin pads for input dims. */
static void pfvm__nn_resolve(pfvm__nn_win *w, const int64_t *in, int64_t *out)
{
    int i;
    for (i = 0; i < w->n; i++) {
        int64_t ext = w->d[i] * (w->k[i] - 1) + 1;
        if (w->auto_pad == 1 || w->auto_pad == 2) {
            int64_t o = (in[i] + w->s[i] - 1) / w->s[i], total = (o - 1) * w->s[i] + ext - in[i];
            if (total < 0)
                total = 0;
            w->pb[i] = w->auto_pad == 1 ? total / 2 : total - total / 2;
            w->pe[i] = total - w->pb[i];
            out[i] = o;
        } else if (w->auto_pad == 3) {
            w->pb[i] = w->pe[i] = 0;
            out[i] = (in[i] - ext) / w->s[i] + 1;
        } else {
            int64_t num = in[i] + w->pb[i] + w->pe[i] - ext;
            out[i] = (w->ceil_mode ? (num + w->s[i] - 1) / w->s[i] : num / w->s[i]) + 1;
            /* ceil mode: the last window must start inside the input or left pad */
            if (w->ceil_mode && (out[i] - 1) * w->s[i] >= in[i] + w->pb[i])
                out[i]--;
        }
        if (out[i] < 0)
            out[i] = 0;
    }
}

/* ---- Conv --------------------------------------------------------------------------- */

static pfvm_code pfvm__nn_infer_conv(pfvm_ictx *c)
{
    const pfvm_shape *x = &c->in[0]->type.shape, *wt = &c->in[1]->type.shape;
    pfvm__nn_win w;
    pfvm_shape out;
    int64_t kd[PFVM__NN_SP];
    int i, nsp;
    if (x->rank < 0 || wt->rank < 0)
        return pfvm_infer_unknown(c, 0, c->in[0]->type.dtype, x->rank >= 0 ? x->rank : wt->rank);
    if (x->rank < 3 || wt->rank != x->rank)
        return pfvm__fail(c->st, PFVM_ERR_SHAPE, "input rank %d and weight rank %d do not fit a convolution", x->rank,
                          wt->rank);
    nsp = x->rank - 2;
    for (i = 0; i < nsp && i < PFVM__NN_SP; i++)
        if (!pfvm_sym_is_const(wt->dims[i + 2], &kd[i]))
            kd[i] = 0;
    if (pfvm__nn_window(c->node, nsp, kd, &w, c->st))
        return c->st ? c->st->code : PFVM_ERR_INVALID;
    out.rank = x->rank;
    out.dims[0] = x->dims[0];
    out.dims[1] = wt->dims[0];
    for (i = 0; i < nsp; i++)
        out.dims[i + 2] = pfvm__nn_out_sym(c->syms, &w, i, x->dims[i + 2]);
    pfvm_ival_set_tensor(c->out[0], c->in[0]->type.dtype, &out);
    return PFVM_OK;
}

/* Dims padded to three spatial dims (missing ones are 1). */
static void pfvm__nn_sp3(const pfvm_tensor *t, int64_t *sp)
{
    int i;
    for (i = 0; i < PFVM__NN_SP; i++)
        sp[i] = i + 2 < t->rank ? t->dims[i + 2] : 1;
}

static void pfvm__nn_win3(pfvm__nn_win *w)
{
    int i;
    for (i = w->n; i < PFVM__NN_SP; i++) {
        w->k[i] = w->s[i] = w->d[i] = 1;
        w->pb[i] = w->pe[i] = 0;
    }
}

/* Range of outputs o with lo <= o*s + off < hi. */
static void pfvm__nn_valid(int64_t n_out, int64_t s, int64_t off, int64_t hi, int64_t *o0, int64_t *o1)
{
    int64_t a = off >= 0 ? 0 : (-off + s - 1) / s, b = hi - off <= 0 ? 0 : (hi - off + s - 1) / s;
    *o0 = a < n_out ? a : n_out;
    *o1 = b < n_out ? b : n_out;
    if (*o1 < *o0)
        *o1 = *o0;
}

PFVM_INTERNAL pfvm_code pfvm_nn_conv_ref(pfvm_kctx *k, const pfvm_tensor *X, const pfvm_tensor *W, const pfvm_tensor *xzp,
                                         const pfvm_tensor *wzp, pfvm_nn_post_fn post, void *user)
{
    int64_t group = pfvm_node_attr_int(k->node, "group", 1), in_sp[PFVM__NN_SP], out_sp[PFVM__NN_SP], kd[PFVM__NN_SP];
    int64_t C = X->dims[1], M = W->dims[0], CG, MG, ci, k0, k1, k2, total, idx;
    double xz = xzp && pfvm_tensor_numel(xzp) ? pfvm_tensor_get_f64(xzp, 0) : 0;
    int64_t nwz = wzp ? pfvm_tensor_numel(wzp) : 0;
    pfvm__nn_win w;
    int i, nsp = X->rank - 2;
    if (nsp < 1 || nsp > PFVM__NN_SP || W->rank != X->rank)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "input and weight ranks do not fit a convolution");
    for (i = 0; i < nsp; i++)
        kd[i] = W->dims[i + 2];
    if (pfvm__nn_window(k->node, nsp, kd, &w, k->st))
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "%s", k->st ? k->st->msg : "bad window");
    if (group < 1 || C % group || M % group || W->dims[1] * group != C)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "channels, weight and group do not fit");
    pfvm__nn_sp3(X, in_sp);
    pfvm__nn_resolve(&w, in_sp, out_sp);
    pfvm__nn_win3(&w);
    if (!k->out[0]->data) {
        int64_t dims[PFVM_MAX_RANK];
        dims[0] = X->dims[0];
        dims[1] = M;
        for (i = 0; i < nsp; i++)
            dims[i + 2] = out_sp[i];
        if (pfvm_kctx_output(k, 0, k->out[0]->dtype ? k->out[0]->dtype : X->dtype, X->rank, dims))
            return k->st ? k->st->code : PFVM_ERR_NOMEM;
    }
    pfvm__nn_sp3(k->out[0], out_sp);
    CG = C / group;
    MG = M / group;
    total = pfvm_tensor_numel(k->out[0]);
    for (idx = 0; idx < total; idx++) {
        int64_t rest = idx, op[PFVM__NN_SP], nn, mm, gg;
        double s = 0, wz;
        op[2] = rest % out_sp[2]; rest /= out_sp[2];
        op[1] = rest % out_sp[1]; rest /= out_sp[1];
        op[0] = rest % out_sp[0]; rest /= out_sp[0];
        mm = rest % M;
        nn = rest / M;
        gg = mm / MG;
        wz = nwz == 0 ? 0 : pfvm_tensor_get_f64(wzp, nwz == 1 ? 0 : mm % nwz);
        for (ci = 0; ci < CG; ci++)
            for (k0 = 0; k0 < w.k[0]; k0++)
                for (k1 = 0; k1 < w.k[1]; k1++)
                    for (k2 = 0; k2 < w.k[2]; k2++) {
                        int64_t p0 = op[0] * w.s[0] - w.pb[0] + k0 * w.d[0], p1 = op[1] * w.s[1] - w.pb[1] + k1 * w.d[1];
                        int64_t p2 = op[2] * w.s[2] - w.pb[2] + k2 * w.d[2];
                        if (p0 < 0 || p0 >= in_sp[0] || p1 < 0 || p1 >= in_sp[1] || p2 < 0 || p2 >= in_sp[2])
                            continue; /* padding holds the zero point: contributes nothing */
                        s += (pfvm_tensor_get_f64(X, ((nn * C + gg * CG + ci) * in_sp[0] + p0) * in_sp[1] * in_sp[2] + p1 * in_sp[2] + p2) - xz) *
                             (pfvm_tensor_get_f64(W, (((mm * CG + ci) * w.k[0] + k0) * w.k[1] + k1) * w.k[2] + k2) - wz);
                    }
        post(user, idx, mm, s);
    }
    return PFVM_OK;
}

typedef struct pfvm__nn_store_ctx {
    pfvm_tensor *y;
    const pfvm_tensor *b;
} pfvm__nn_store_ctx;

static void pfvm__nn_store_post(void *user, int64_t idx, int64_t channel, double acc)
{
    pfvm__nn_store_ctx *c = (pfvm__nn_store_ctx *)user;
    pfvm__nn_st(c->y, idx, acc + (c->b ? pfvm__nn_ldd(c->b, channel) : 0));
}

static pfvm_code pfvm__nn_k_conv(pfvm_kctx *k)
{
    const pfvm_tensor *X = k->in[0], *W = k->in[1], *B = k->n_in > 2 ? k->in[2] : NULL;
    pfvm_tensor *Y = k->out[0];
    int64_t group = pfvm_node_attr_int(k->node, "group", 1), in_sp[PFVM__NN_SP], out_sp[PFVM__NN_SP], kd[PFVM__NN_SP];
    int64_t N = X->dims[0], C = X->dims[1], M = W->dims[0], CG, MG, n, g, m, ci, k0, k1, k2, o0, o1, o2;
    int64_t in_plane, out_plane;
    pfvm__nn_win w;
    int i, nsp = X->rank - 2;
    float *acc;
    for (i = 0; i < nsp && i < PFVM__NN_SP; i++)
        kd[i] = W->dims[i + 2];
    if (pfvm__nn_window(k->node, nsp, kd, &w, k->st))
        return pfvm__op_fail(k->st, k->node, k->st ? k->st->code : PFVM_ERR_INVALID, "%s", k->st ? k->st->msg : "");
    if (group < 1 || C % group || M % group || W->dims[1] * group != C)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "channels %lld, weight %lldx%lld and group %lld do not fit",
                             (long long)C, (long long)M, (long long)W->dims[1], (long long)group);
    pfvm__nn_sp3(X, in_sp);
    pfvm__nn_resolve(&w, in_sp, out_sp);
    pfvm__nn_win3(&w);
    pfvm__nn_sp3(Y, out_sp);
    CG = C / group;
    MG = M / group;
    in_plane = in_sp[0] * in_sp[1] * in_sp[2];
    out_plane = out_sp[0] * out_sp[1] * out_sp[2];
    if (Y->dtype != PFVM_FLOAT || X->dtype != PFVM_FLOAT || W->dtype != PFVM_FLOAT) {
        /* other element types: the reference loops, through double */
        pfvm__nn_store_ctx sc;
        sc.y = Y;
        sc.b = B;
        return pfvm_nn_conv_ref(k, X, W, NULL, NULL, pfvm__nn_store_post, &sc);
    }
    /* float: accumulate whole output rows with contiguous inner loops */
    for (n = 0; n < N; n++)
        for (g = 0; g < group; g++)
            for (m = 0; m < MG; m++) {
                int64_t oc = g * MG + m;
                acc = (float *)Y->data + (n * M + oc) * out_plane;
                for (o0 = 0; o0 < out_plane; o0++)
                    acc[o0] = B ? ((const float *)B->data)[oc] : 0.0f;
                for (ci = 0; ci < CG; ci++) {
                    const float *xin = (const float *)X->data + (n * C + g * CG + ci) * in_plane;
                    const float *wk = (const float *)W->data + (oc * CG + ci) * w.k[0] * w.k[1] * w.k[2];
                    for (k0 = 0; k0 < w.k[0]; k0++)
                        for (k1 = 0; k1 < w.k[1]; k1++)
                            for (k2 = 0; k2 < w.k[2]; k2++) {
                                float wv = wk[(k0 * w.k[1] + k1) * w.k[2] + k2];
                                int64_t a0, b0, a1, b1, a2, b2, off2 = k2 * w.d[2] - w.pb[2];
                                pfvm__nn_valid(out_sp[0], w.s[0], k0 * w.d[0] - w.pb[0], in_sp[0], &a0, &b0);
                                pfvm__nn_valid(out_sp[1], w.s[1], k1 * w.d[1] - w.pb[1], in_sp[1], &a1, &b1);
                                pfvm__nn_valid(out_sp[2], w.s[2], off2, in_sp[2], &a2, &b2);
                                if (wv == 0.0f)
                                    continue;
                                for (o0 = a0; o0 < b0; o0++)
                                    for (o1 = a1; o1 < b1; o1++) {
                                        const float *row = xin + ((o0 * w.s[0] + k0 * w.d[0] - w.pb[0]) * in_sp[1] +
                                                                  (o1 * w.s[1] + k1 * w.d[1] - w.pb[1])) * in_sp[2] + off2;
                                        float *orow = acc + (o0 * out_sp[1] + o1) * out_sp[2];
                                        if (w.s[2] == 1)
                                            for (o2 = a2; o2 < b2; o2++)
                                                orow[o2] += wv * row[o2];
                                        else
                                            for (o2 = a2; o2 < b2; o2++)
                                                orow[o2] += wv * row[o2 * w.s[2]];
                                    }
                            }
                }
            }
    return PFVM_OK;
}

/* ---- ConvTranspose ----------------------------------------------------------------------- */

static int pfvm__nn_convt_shape(const pfvm_node *node, int nsp, const int64_t *in, const int64_t *kd, pfvm__nn_win *w,
                                int64_t *out, pfvm_status *st)
{
    const int64_t *os, *op;
    int cnt_os, cnt_op, i;
    if (pfvm__nn_window(node, nsp, kd, w, st))
        return 0;
    cnt_os = pfvm_node_attr_ints(node, "output_shape", &os);
    cnt_op = pfvm_node_attr_ints(node, "output_padding", &op);
    for (i = 0; i < nsp; i++) {
        int64_t ext = w->d[i] * (w->k[i] - 1) + 1, opad = cnt_op == nsp ? op[i] : 0;
        int64_t full = w->s[i] * (in[i] - 1) + opad + ext;
        if (cnt_os >= nsp) {
            int64_t total;
            out[i] = os[cnt_os - nsp + i];
            total = full - out[i];
            if (total < 0)
                total = 0;
            if (w->auto_pad == 2) {
                w->pb[i] = total - total / 2;
                w->pe[i] = total / 2;
            } else {
                w->pb[i] = total / 2;
                w->pe[i] = total - total / 2;
            }
        } else if (w->auto_pad == 1 || w->auto_pad == 2) {
            int64_t total;
            out[i] = in[i] * w->s[i];
            total = full - out[i];
            if (total < 0)
                total = 0;
            w->pb[i] = w->auto_pad == 1 ? total / 2 : total - total / 2;
            w->pe[i] = total - w->pb[i];
        } else {
            out[i] = full - w->pb[i] - w->pe[i];
        }
    }
    return 1;
}

static pfvm_code pfvm__nn_infer_convt(pfvm_ictx *c)
{
    const pfvm_shape *x = &c->in[0]->type.shape, *wt = &c->in[1]->type.shape;
    int64_t in[PFVM__NN_SP], kd[PFVM__NN_SP], out[PFVM__NN_SP], ch;
    pfvm__nn_win w;
    pfvm_shape o;
    int i, nsp;
    int64_t group = pfvm_node_attr_int(c->node, "group", 1);
    if (x->rank < 3 || wt->rank != x->rank)
        return pfvm_infer_unknown(c, 0, c->in[0]->type.dtype, x->rank);
    nsp = x->rank - 2;
    if (nsp > PFVM__NN_SP)
        return pfvm__fail(c->st, PFVM_ERR_UNSUPPORTED, "too many spatial dims");
    for (i = 0; i < nsp; i++)
        if (!pfvm_sym_is_const(x->dims[i + 2], &in[i]) || !pfvm_sym_is_const(wt->dims[i + 2], &kd[i]))
            return pfvm_infer_unknown(c, 0, c->in[0]->type.dtype, x->rank);
    if (!pfvm__nn_convt_shape(c->node, nsp, in, kd, &w, out, c->st))
        return c->st ? c->st->code : PFVM_ERR_INVALID;
    o.rank = x->rank;
    o.dims[0] = x->dims[0];
    o.dims[1] = pfvm_sym_is_const(wt->dims[1], &ch) ? pfvm_sym_const(c->syms, ch * group) : pfvm_sym_muli(c->syms, wt->dims[1], group);
    for (i = 0; i < nsp; i++)
        o.dims[i + 2] = pfvm_sym_const(c->syms, out[i]);
    pfvm_ival_set_tensor(c->out[0], c->in[0]->type.dtype, &o);
    return PFVM_OK;
}

static pfvm_code pfvm__nn_k_convt(pfvm_kctx *k)
{
    const pfvm_tensor *X = k->in[0], *W = k->in[1], *B = k->n_in > 2 ? k->in[2] : NULL;
    pfvm_tensor *Y = k->out[0];
    int64_t group = pfvm_node_attr_int(k->node, "group", 1), in_sp[PFVM__NN_SP], out_sp[PFVM__NN_SP], kd[PFVM__NN_SP];
    int64_t N = X->dims[0], C = X->dims[1], CG, MG, M, n, ci, m, i0, i1, i2, k0, k1, k2, total = pfvm_tensor_numel(Y), t;
    pfvm__nn_win w;
    int i, nsp = X->rank - 2;
    for (i = 0; i < nsp; i++)
        kd[i] = W->dims[i + 2];
    pfvm__nn_sp3(X, in_sp);
    if (!pfvm__nn_convt_shape(k->node, nsp, in_sp, kd, &w, out_sp, k->st))
        return k->st ? k->st->code : PFVM_ERR_INVALID;
    pfvm__nn_win3(&w);
    pfvm__nn_sp3(Y, out_sp);
    if (group < 1 || C % group || W->dims[0] != C)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "channels and group do not fit the weight");
    CG = C / group;
    MG = W->dims[1];
    M = MG * group;
    for (t = 0; t < total; t++)
        pfvm__nn_st(Y, t, B ? pfvm__nn_ldd(B, (t / (out_sp[0] * out_sp[1] * out_sp[2])) % M) : 0.0);
    for (n = 0; n < N; n++)
        for (ci = 0; ci < C; ci++) {
            int64_t g = ci / CG;
            for (m = 0; m < MG; m++) {
                int64_t oc = g * MG + m;
                for (i0 = 0; i0 < in_sp[0]; i0++)
                    for (i1 = 0; i1 < in_sp[1]; i1++)
                        for (i2 = 0; i2 < in_sp[2]; i2++) {
                            double xv = pfvm__nn_ldd(X, (((n * C + ci) * in_sp[0] + i0) * in_sp[1] + i1) * in_sp[2] + i2);
                            for (k0 = 0; k0 < w.k[0]; k0++)
                                for (k1 = 0; k1 < w.k[1]; k1++)
                                    for (k2 = 0; k2 < w.k[2]; k2++) {
                                        int64_t p0 = i0 * w.s[0] + k0 * w.d[0] - w.pb[0];
                                        int64_t p1 = i1 * w.s[1] + k1 * w.d[1] - w.pb[1];
                                        int64_t p2 = i2 * w.s[2] + k2 * w.d[2] - w.pb[2], at;
                                        if (p0 < 0 || p0 >= out_sp[0] || p1 < 0 || p1 >= out_sp[1] || p2 < 0 || p2 >= out_sp[2])
                                            continue;
                                        at = (((n * M + oc) * out_sp[0] + p0) * out_sp[1] + p1) * out_sp[2] + p2;
                                        pfvm__nn_st(Y, at, pfvm__nn_ldd(Y, at) +
                                                               xv * pfvm__nn_ldd(W, (((ci * MG + m) * w.k[0] + k0) * w.k[1] + k1) * w.k[2] + k2));
                                    }
                        }
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
    int i, nsp;
    if (x->rank < 0)
        return pfvm_infer_unknown(c, 0, c->in[0]->type.dtype, -1);
    if (x->rank < 3)
        return pfvm__fail(c->st, PFVM_ERR_SHAPE, "input rank %d: pooling needs N, C and spatial dims", x->rank);
    nsp = x->rank - 2;
    if (pfvm__nn_window(c->node, nsp, NULL, &w, c->st))
        return c->st ? c->st->code : PFVM_ERR_INVALID;
    out = *x;
    /* ceil mode's last-window rule needs concrete dims */
    for (i = 0; i < nsp; i++)
        if (w.ceil_mode && !w.auto_pad && !pfvm_sym_is_const(x->dims[i + 2], NULL))
            return pfvm_infer_unknown(c, 0, c->in[0]->type.dtype, x->rank);
    {
        int64_t in[PFVM__NN_SP], o[PFVM__NN_SP];
        int all = 1;
        for (i = 0; i < nsp; i++)
            if (!pfvm_sym_is_const(x->dims[i + 2], &in[i]))
                all = 0;
        if (all) {
            pfvm__nn_resolve(&w, in, o);
            for (i = 0; i < nsp; i++)
                out.dims[i + 2] = pfvm_sym_const(c->syms, o[i]);
        } else {
            for (i = 0; i < nsp; i++)
                out.dims[i + 2] = pfvm__nn_out_sym(c->syms, &w, i, x->dims[i + 2]);
        }
    }
    pfvm_ival_set_tensor(c->out[0], c->in[0]->type.dtype, &out);
    if (c->n_out > 1 && c->out[1])
        pfvm_ival_set_tensor(c->out[1], PFVM_INT64, &out);
    return PFVM_OK;
}

static pfvm_code pfvm__nn_pool(pfvm_kctx *k, int is_max)
{
    const pfvm_tensor *X = k->in[0];
    pfvm_tensor *Y = k->out[0], *I = k->n_out > 1 ? k->out[1] : NULL;
    int64_t in_sp[PFVM__NN_SP], out_sp[PFVM__NN_SP], NC, c, o0, o1, o2, k0, k1, k2, at = 0;
    int count_pad = (int)pfvm_node_attr_int(k->node, "count_include_pad", 0);
    int storage = (int)pfvm_node_attr_int(k->node, "storage_order", 0);
    pfvm__nn_win w;
    int nsp = X->rank - 2;
    if (pfvm__nn_window(k->node, nsp, NULL, &w, k->st))
        return k->st ? k->st->code : PFVM_ERR_INVALID;
    pfvm__nn_sp3(X, in_sp);
    pfvm__nn_resolve(&w, in_sp, out_sp);
    pfvm__nn_win3(&w);
    pfvm__nn_sp3(Y, out_sp);
    NC = X->dims[0] * X->dims[1];
    for (c = 0; c < NC; c++)
        for (o0 = 0; o0 < out_sp[0]; o0++)
            for (o1 = 0; o1 < out_sp[1]; o1++)
                for (o2 = 0; o2 < out_sp[2]; o2++, at++) {
                    double best = -INFINITY, sum = 0;
                    int64_t cnt = 0, arg = 0;
                    for (k0 = 0; k0 < w.k[0]; k0++)
                        for (k1 = 0; k1 < w.k[1]; k1++)
                            for (k2 = 0; k2 < w.k[2]; k2++) {
                                int64_t p0 = o0 * w.s[0] - w.pb[0] + k0 * w.d[0], p1 = o1 * w.s[1] - w.pb[1] + k1 * w.d[1];
                                int64_t p2 = o2 * w.s[2] - w.pb[2] + k2 * w.d[2], src;
                                int inside = p0 >= 0 && p0 < in_sp[0] && p1 >= 0 && p1 < in_sp[1] && p2 >= 0 && p2 < in_sp[2];
                                if (!inside) {
                                    /* padding counts for the average only within the padded input */
                                    if (count_pad && p0 < in_sp[0] + w.pe[0] && p1 < in_sp[1] + w.pe[1] && p2 < in_sp[2] + w.pe[2])
                                        cnt++;
                                    continue;
                                }
                                src = ((c * in_sp[0] + p0) * in_sp[1] + p1) * in_sp[2] + p2;
                                {
                                    double v = pfvm__nn_ldd(X, src);
                                    if (v > best || (cnt == 0 && is_max && best == -INFINITY && v == -INFINITY)) {
                                        best = v;
                                        arg = storage ? c * in_sp[0] * in_sp[1] * in_sp[2] + (p2 * in_sp[1] + p1) * in_sp[0] + p0
                                                      : src;
                                    }
                                    sum += v;
                                    cnt++;
                                }
                            }
                    if (is_max) {
                        pfvm__nn_st(Y, at, best);
                        if (I && I->data)
                            ((int64_t *)I->data)[at] = arg;
                    } else {
                        pfvm__nn_st(Y, at, cnt ? sum / (double)cnt : 0.0);
                    }
                }
    return PFVM_OK;
}

static pfvm_code pfvm__nn_k_maxpool(pfvm_kctx *k)
{
    return pfvm__nn_pool(k, 1);
}

static pfvm_code pfvm__nn_k_avgpool(pfvm_kctx *k)
{
    return pfvm__nn_pool(k, 0);
}

static pfvm_code pfvm__nn_infer_global(pfvm_ictx *c)
{
    pfvm_shape out = c->in[0]->type.shape;
    int i;
    if (out.rank < 0)
        return pfvm_infer_unknown(c, 0, c->in[0]->type.dtype, -1);
    for (i = 2; i < out.rank; i++)
        out.dims[i] = pfvm_sym_const(c->syms, 1);
    pfvm_ival_set_tensor(c->out[0], c->in[0]->type.dtype, &out);
    return PFVM_OK;
}

static pfvm_code pfvm__nn_global(pfvm_kctx *k, int is_max)
{
    const pfvm_tensor *X = k->in[0];
    int64_t NC = X->dims[0] * X->dims[1], plane = 1, c, i;
    int d;
    for (d = 2; d < X->rank; d++)
        plane *= X->dims[d];
    for (c = 0; c < NC; c++) {
        double acc = is_max ? -INFINITY : 0;
        for (i = 0; i < plane; i++) {
            double v = pfvm__nn_ldd(X, c * plane + i);
            acc = is_max ? (v > acc ? v : acc) : acc + v;
        }
        pfvm__nn_st(k->out[0], c, is_max ? acc : plane ? acc / (double)plane : 0);
    }
    return PFVM_OK;
}

static pfvm_code pfvm__nn_k_gap(pfvm_kctx *k)
{
    return pfvm__nn_global(k, 0);
}

static pfvm_code pfvm__nn_k_gmp(pfvm_kctx *k)
{
    return pfvm__nn_global(k, 1);
}

/* ---- MaxUnpool ------------------------------------------------------------------------ */

static int pfvm__nn_unpool_dims(const pfvm_node *node, int rank, const int64_t *in, const pfvm_tensor *oshape, int64_t *out,
                                pfvm_status *st)
{
    pfvm__nn_win w;
    int i;
    if (oshape) {
        if (pfvm_tensor_numel(oshape) != rank)
            return 0;
        for (i = 0; i < rank; i++)
            out[i] = pfvm_tensor_get_i64(oshape, i);
        return 1;
    }
    if (pfvm__nn_window(node, rank - 2, NULL, &w, st))
        return 0;
    out[0] = in[0];
    out[1] = in[1];
    for (i = 0; i < rank - 2; i++)
        out[i + 2] = (in[i + 2] - 1) * w.s[i] + w.k[i] - w.pb[i] - w.pe[i];
    return 1;
}

static pfvm_code pfvm__nn_infer_unpool(pfvm_ictx *c)
{
    const pfvm_shape *x = &c->in[0]->type.shape;
    int64_t in[PFVM_MAX_RANK], out[PFVM_MAX_RANK];
    const pfvm_tensor *os = c->n_in > 2 && c->in[2] ? c->in[2]->value : NULL;
    pfvm_shape s;
    int i;
    if (x->rank < 3 || (c->n_in > 2 && c->in[2] && !os))
        return pfvm_infer_unknown(c, 0, c->in[0]->type.dtype, x->rank);
    for (i = 0; i < x->rank; i++)
        if (!pfvm_sym_is_const(x->dims[i], &in[i]))
            return pfvm_infer_unknown(c, 0, c->in[0]->type.dtype, x->rank);
    if (!pfvm__nn_unpool_dims(c->node, x->rank, in, os, out, c->st))
        return pfvm__fail(c->st, PFVM_ERR_INVALID, "output_shape or window attributes do not fit rank %d", x->rank);
    if (pfvm_shape_from_dims(c->syms, &s, x->rank, out, c->st))
        return c->st ? c->st->code : PFVM_ERR_NOMEM;
    pfvm_ival_set_tensor(c->out[0], c->in[0]->type.dtype, &s);
    return PFVM_OK;
}

static pfvm_code pfvm__nn_k_unpool(pfvm_kctx *k)
{
    const pfvm_tensor *X = k->in[0], *I = k->in[1];
    pfvm_tensor *Y = k->out[0];
    int64_t n = pfvm_tensor_numel(X), total, i;
    if (X->rank < 3 || X->rank > PFVM_MAX_RANK)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "input must have N, C and spatial dims");
    if (!Y->data) {
        int64_t out[PFVM_MAX_RANK];
        if (!pfvm__nn_unpool_dims(k->node, X->rank, X->dims, k->n_in > 2 ? k->in[2] : NULL, out, k->st) ||
            pfvm_kctx_output(k, 0, X->dtype, X->rank, out))
            return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "cannot shape the output");
    }
    int64_t def[PFVM_MAX_RANK], dtotal = 1;
    int d;
    total = pfvm_tensor_numel(Y);
    if (pfvm_tensor_numel(I) != n)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "indices do not match the input");
    /* indices address the pooled input's shape (the default output); an
     * explicit output_shape places the same coordinates in a larger tensor */
    if (!pfvm__nn_unpool_dims(k->node, X->rank, X->dims, NULL, def, k->st))
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "window attributes do not fit");
    for (d = 0; d < X->rank; d++)
        dtotal *= def[d];
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
            pfvm__nn_st(Y, dst, pfvm__nn_ldd(X, i));
    }
    return PFVM_OK;
}

/* ---- normalisation --------------------------------------------------------------------------- */

static pfvm_code pfvm__nn_infer_bn(pfvm_ictx *c)
{
    int j;
    c->out[0]->type = c->in[0]->type;
    for (j = 1; j < c->n_out; j++)
        if (c->out[j])
            c->out[j]->type = c->in[j < 3 ? 3 + j - 1 : 1]->type;
    return PFVM_OK;
}

static pfvm_code pfvm__nn_k_bn(pfvm_kctx *k)
{
    const pfvm_tensor *X = k->in[0], *S = k->in[1], *B = k->in[2], *Mn = k->in[3], *V = k->in[4];
    double eps = pfvm_node_attr_float(k->node, "epsilon", 1e-5f), mom = pfvm_node_attr_float(k->node, "momentum", 0.9f);
    int training = (int)pfvm_node_attr_int(k->node, "training_mode", 0);
    int64_t N = X->dims[0], C = X->rank > 1 ? X->dims[1] : 1, plane = 1, n, c, i;
    int d;
    for (d = 2; d < X->rank; d++)
        plane *= X->dims[d];
    for (c = 0; c < C; c++) {
        double mean = pfvm__nn_ldd(Mn, c), var = pfvm__nn_ldd(V, c), scale, shift;
        if (training) {
            double s = 0, s2 = 0, cnt = (double)(N * plane);
            for (n = 0; n < N; n++)
                for (i = 0; i < plane; i++) {
                    double v = pfvm__nn_ldd(X, (n * C + c) * plane + i);
                    s += v;
                    s2 += v * v;
                }
            s /= cnt ? cnt : 1;
            s2 = s2 / (cnt ? cnt : 1) - s * s;
            if (k->n_out > 1 && k->out[1])
                pfvm__nn_st(k->out[1], c, mean * mom + s * (1 - mom));
            if (k->n_out > 2 && k->out[2])
                pfvm__nn_st(k->out[2], c, var * mom + s2 * (1 - mom));
            mean = s;
            var = s2;
        }
        scale = pfvm__nn_ldd(S, c) / sqrt(var + eps);
        shift = pfvm__nn_ldd(B, c) - mean * scale;
        for (n = 0; n < N; n++)
            for (i = 0; i < plane; i++) {
                int64_t at = (n * C + c) * plane + i;
                pfvm__nn_st(k->out[0], at, pfvm__nn_ldd(X, at) * scale + shift);
            }
    }
    return PFVM_OK;
}

static pfvm_code pfvm__nn_infer_ln(pfvm_ictx *c)
{
    const pfvm_shape *x = &c->in[0]->type.shape;
    int j;
    c->out[0]->type = c->in[0]->type;
    for (j = 1; j < c->n_out; j++) {
        pfvm_shape s = *x;
        int a, i;
        if (!c->out[j])
            continue;
        if (x->rank < 0) {
            pfvm_infer_unknown(c, j, PFVM_FLOAT, -1);
            continue;
        }
        a = pfvm__axis(pfvm_node_attr_int(c->node, "axis", -1), x->rank);
        if (a < 0)
            return pfvm__fail(c->st, PFVM_ERR_INVALID, "axis is out of range");
        for (i = a; i < x->rank; i++)
            s.dims[i] = pfvm_sym_const(c->syms, 1);
        pfvm_ival_set_tensor(c->out[j], (pfvm_dtype)pfvm_node_attr_int(c->node, "stash_type", 1), &s);
    }
    return PFVM_OK;
}

static pfvm_code pfvm__nn_k_ln(pfvm_kctx *k)
{
    const pfvm_tensor *X = k->in[0], *S = k->in[1], *B = k->n_in > 2 ? k->in[2] : NULL;
    double eps = pfvm_node_attr_float(k->node, "epsilon", 1e-5f);
    int a = pfvm__axis(pfvm_node_attr_int(k->node, "axis", -1), X->rank), d;
    int64_t outer = 1, inner = 1, o, i, ns = pfvm_tensor_numel(S), nb = B ? pfvm_tensor_numel(B) : 0;
    if (a < 0)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "axis is out of range");
    for (d = 0; d < a; d++)
        outer *= X->dims[d];
    for (d = a; d < X->rank; d++)
        inner *= X->dims[d];
    if (ns < 1 || inner % ns || (B && (nb < 1 || inner % nb)))
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "scale or bias does not broadcast to the normalised dims");
    for (o = 0; o < outer; o++) {
        double mean = 0, var = 0, inv;
        for (i = 0; i < inner; i++)
            mean += pfvm__nn_ldd(X, o * inner + i);
        mean /= (double)(inner ? inner : 1);
        for (i = 0; i < inner; i++) {
            double dv = pfvm__nn_ldd(X, o * inner + i) - mean;
            var += dv * dv;
        }
        var /= (double)(inner ? inner : 1);
        inv = 1.0 / sqrt(var + eps);
        for (i = 0; i < inner; i++)
            pfvm__nn_st(k->out[0], o * inner + i,
                        (pfvm__nn_ldd(X, o * inner + i) - mean) * inv * pfvm__nn_ldd(S, i % ns) + (B ? pfvm__nn_ldd(B, i % nb) : 0));
        if (k->n_out > 1 && k->out[1])
            pfvm__nn_st(k->out[1], o, mean);
        if (k->n_out > 2 && k->out[2])
            pfvm__nn_st(k->out[2], o, inv);
    }
    return PFVM_OK;
}

static pfvm_code pfvm__nn_k_instnorm(pfvm_kctx *k)
{
    const pfvm_tensor *X = k->in[0], *S = k->in[1], *B = k->in[2];
    double eps = pfvm_node_attr_float(k->node, "epsilon", 1e-5f);
    int64_t N = X->dims[0], C = X->dims[1], plane = 1, n, c, i;
    int d;
    for (d = 2; d < X->rank; d++)
        plane *= X->dims[d];
    for (n = 0; n < N; n++)
        for (c = 0; c < C; c++) {
            int64_t base = (n * C + c) * plane;
            double mean = 0, var = 0, inv;
            for (i = 0; i < plane; i++)
                mean += pfvm__nn_ldd(X, base + i);
            mean /= (double)(plane ? plane : 1);
            for (i = 0; i < plane; i++)
                var += (pfvm__nn_ldd(X, base + i) - mean) * (pfvm__nn_ldd(X, base + i) - mean);
            var /= (double)(plane ? plane : 1);
            inv = 1.0 / sqrt(var + eps);
            for (i = 0; i < plane; i++)
                pfvm__nn_st(k->out[0], base + i, (pfvm__nn_ldd(X, base + i) - mean) * inv * pfvm__nn_ldd(S, c) + pfvm__nn_ldd(B, c));
        }
    return PFVM_OK;
}

static pfvm_code pfvm__nn_k_lrn(pfvm_kctx *k)
{
    const pfvm_tensor *X = k->in[0];
    double alpha = pfvm_node_attr_float(k->node, "alpha", 1e-4f), beta = pfvm_node_attr_float(k->node, "beta", 0.75f);
    double bias = pfvm_node_attr_float(k->node, "bias", 1.0f);
    int64_t size = pfvm_node_attr_int(k->node, "size", 0), N = X->dims[0], C = X->dims[1], plane = 1, n, c, i, j;
    int d;
    if (size < 1)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "size must be positive");
    for (d = 2; d < X->rank; d++)
        plane *= X->dims[d];
    for (n = 0; n < N; n++)
        for (c = 0; c < C; c++)
            for (i = 0; i < plane; i++) {
                double s = 0;
                int64_t lo = c - (size - 1) / 2, hi = c + size / 2;
                for (j = lo < 0 ? 0 : lo; j <= hi && j < C; j++) {
                    double v = pfvm__nn_ldd(X, (n * C + j) * plane + i);
                    s += v * v;
                }
                pfvm__nn_st(k->out[0], (n * C + c) * plane + i,
                            pfvm__nn_ldd(X, (n * C + c) * plane + i) / pow(bias + alpha / (double)size * s, beta));
            }
    return PFVM_OK;
}

/* ---- Softmax family -------------------------------------------------------------------------- */

/* Softmax variants: 0 softmax, 1 log-softmax, 2 hardmax. Opset < 13
 * flattens to 2-D at `axis` (default 1); 13+ works along one axis (-1). */
static pfvm_code pfvm__nn_softmax(pfvm_kctx *k, int kind)
{
    const pfvm_tensor *X = k->in[0];
    int old = k->node->opset < 13, a, d;
    int64_t outer = 1, len = 1, inner = 1, o, i, j;
    a = pfvm__axis(pfvm_node_attr_int(k->node, "axis", old ? 1 : -1), X->rank > 0 ? X->rank : 1);
    if (a < 0)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "axis is out of range");
    if (old) {
        for (d = 0; d < a; d++)
            outer *= X->dims[d];
        for (d = a; d < X->rank; d++)
            len *= X->dims[d];
    } else {
        for (d = 0; d < a; d++)
            outer *= X->dims[d];
        len = X->rank ? X->dims[a] : 1;
        for (d = a + 1; d < X->rank; d++)
            inner *= X->dims[d];
    }
    for (o = 0; o < outer; o++)
        for (j = 0; j < inner; j++) {
            int64_t base = o * len * inner + j, best = 0;
            double mx = -INFINITY, sum = 0;
            for (i = 0; i < len; i++) {
                double v = pfvm__nn_ldd(X, base + i * inner);
                if (v > mx) {
                    mx = v;
                    best = i;
                }
            }
            if (kind == 2) {
                for (i = 0; i < len; i++)
                    pfvm__nn_st(k->out[0], base + i * inner, i == best ? 1.0 : 0.0);
                continue;
            }
            for (i = 0; i < len; i++)
                sum += exp(pfvm__nn_ldd(X, base + i * inner) - mx);
            for (i = 0; i < len; i++) {
                double v = pfvm__nn_ldd(X, base + i * inner) - mx;
                pfvm__nn_st(k->out[0], base + i * inner, kind ? v - log(sum) : exp(v) / sum);
            }
        }
    return PFVM_OK;
}

static pfvm_code pfvm__nn_k_softmax(pfvm_kctx *k)
{
    return pfvm__nn_softmax(k, 0);
}

static pfvm_code pfvm__nn_k_logsoftmax(pfvm_kctx *k)
{
    return pfvm__nn_softmax(k, 1);
}

static pfvm_code pfvm__nn_k_hardmax(pfvm_kctx *k)
{
    return pfvm__nn_softmax(k, 2);
}

#define PFVM__NN_F "float,double,float16"

const pfvm_op_def pfvm__ops_nn[] = {
    {"Conv", "", 1, 0, 2, 3, 1, 1, pfvm__nn_infer_conv, pfvm__nn_k_conv, NULL, PFVM_FUSE_OUT_FUSABLE, PFVM__NN_F, NULL, 0},
    {"ConvTranspose", "", 1, 0, 2, 3, 1, 1, pfvm__nn_infer_convt, pfvm__nn_k_convt, NULL, PFVM_FUSE_OUT_FUSABLE, PFVM__NN_F, NULL, 0},
    {"MaxPool", "", 1, 0, 1, 1, 1, 2, pfvm__nn_infer_pool, pfvm__nn_k_maxpool, NULL, PFVM_FUSE_OPAQUE, PFVM__NN_F ",int8,uint8", NULL, 0},
    {"AveragePool", "", 1, 0, 1, 1, 1, 1, pfvm__nn_infer_pool, pfvm__nn_k_avgpool, NULL, PFVM_FUSE_OPAQUE, PFVM__NN_F, NULL, 0},
    {"MaxUnpool", "", 9, 0, 2, 3, 1, 1, pfvm__nn_infer_unpool, pfvm__nn_k_unpool, NULL, PFVM_FUSE_OPAQUE, PFVM__NN_F, NULL, 0},
    {"GlobalAveragePool", "", 1, 0, 1, 1, 1, 1, pfvm__nn_infer_global, pfvm__nn_k_gap, NULL, PFVM_FUSE_REDUCTION, PFVM__NN_F, NULL, 0},
    {"GlobalMaxPool", "", 1, 0, 1, 1, 1, 1, pfvm__nn_infer_global, pfvm__nn_k_gmp, NULL, PFVM_FUSE_REDUCTION, PFVM__NN_F, NULL, 0},
    {"BatchNormalization", "", 6, 0, 5, 5, 1, 3, pfvm__nn_infer_bn, pfvm__nn_k_bn, NULL, PFVM_FUSE_BROADCAST, PFVM__NN_F, NULL, 0},
    {"LayerNormalization", "", 17, 0, 2, 3, 1, 3, pfvm__nn_infer_ln, pfvm__nn_k_ln, NULL, PFVM_FUSE_REDUCTION, PFVM__NN_F, NULL, 0},
    {"InstanceNormalization", "", 6, 0, 3, 3, 1, 1, pfvm_infer_same_as_first, pfvm__nn_k_instnorm, NULL, PFVM_FUSE_REDUCTION, PFVM__NN_F, NULL, 0},
    {"LRN", "", 1, 0, 1, 1, 1, 1, pfvm_infer_same_as_first, pfvm__nn_k_lrn, NULL, PFVM_FUSE_OPAQUE, PFVM__NN_F, NULL, 0},
    {"Softmax", "", 1, 0, 1, 1, 1, 1, pfvm_infer_same_as_first, pfvm__nn_k_softmax, NULL, PFVM_FUSE_REDUCTION, PFVM__NN_F, NULL, 0},
    {"LogSoftmax", "", 1, 0, 1, 1, 1, 1, pfvm_infer_same_as_first, pfvm__nn_k_logsoftmax, NULL, PFVM_FUSE_REDUCTION, PFVM__NN_F, NULL, 0},
    {"Hardmax", "", 1, 0, 1, 1, 1, 1, pfvm_infer_same_as_first, pfvm__nn_k_hardmax, NULL, PFVM_FUSE_REDUCTION, PFVM__NN_F, NULL, 0},
    {NULL, NULL, 0, 0, 0, 0, 0, 0, NULL, NULL, NULL, PFVM_FUSE_OPAQUE, NULL, NULL, 0}
};
