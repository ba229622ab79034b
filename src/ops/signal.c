/* ops/signal: spectral operators — DFT, STFT and MelWeightMatrix.
 *
 * Transforms are direct O(n^2) sums in double (exact enough for the
 * expected values, no scratch memory); signals are [batch, length, 1]
 * (real) or [batch, length, 2] (complex) and results are complex pairs. */
#include "ops_common.h"

#include <math.h>

#define PFVM__SG_PI 3.14159265358979323846

/* ---- DFT ---------------------------------------------------------------------------- */

/* The transform length and output bins for a node and input. */
static int pfvm__sg_dft_sizes(const pfvm_node *n, int64_t signal_len, const pfvm_tensor *len_t, int64_t *len, int64_t *bins)
{
    *len = len_t && pfvm_tensor_numel(len_t) ? pfvm_tensor_get_i64(len_t, 0) : signal_len;
    if (*len < 1)
        return 0;
    *bins = pfvm_node_attr_int(n, "onesided", 0) ? *len / 2 + 1 : *len;
    return 1;
}

/* The signal's last dim: 1 (real) or 2 (complex), when known. */
static pfvm_code pfvm__sg_check_signal(pfvm_ictx *c, const pfvm_shape *x, int exact_rank)
{
    int64_t comp;
    if (x->rank >= 0 && (exact_rank ? x->rank != 3 : x->rank < 3))
        return pfvm__fail(c->st, PFVM_ERR_SHAPE, "the signal must be %s[batch, length, 1 or 2], not rank %d",
                          exact_rank ? "" : "at least ", x->rank);
    if (x->rank >= 3 && pfvm_sym_is_const(x->dims[x->rank - 1], &comp) && comp != 1 && comp != 2)
        return pfvm__fail(c->st, PFVM_ERR_SHAPE, "the signal's last dim must be 1 (real) or 2 (complex), not %lld",
                          (long long)comp);
    return PFVM_OK;
}

/* [batch, ..., n, ..., 1 or 2] -> the same with n -> bins along `axis` and
 * 2 last; bins = dft_length (n when absent), halved plus one when
 * onesided. Symbolic in n when dft_length is absent. */
static pfvm_code pfvm__sg_infer_dft(pfvm_ictx *c)
{
    const pfvm_shape *x = &c->in[0]->type.shape;
    int a;
    int64_t len, bins;
    const pfvm_sym *b;
    pfvm_shape out;
    if (pfvm__sg_check_signal(c, x, 0))
        return c->st ? c->st->code : PFVM_ERR_SHAPE;
    if (x->rank < 3)
        return pfvm_infer_unknown(c, 0, c->in[0]->type.dtype, x->rank);
    a = pfvm__axis(pfvm_node_attr_int(c->node, "axis", 1), x->rank);
    if (a < 1 || a == x->rank - 1)
        return pfvm__fail(c->st, PFVM_ERR_INVALID, "axis must be a signal dimension");
    if (c->n_in > 1 && c->in[1]) {
        if (!c->in[1]->value)
            return pfvm_infer_unknown(c, 0, c->in[0]->type.dtype, x->rank);
        if (!pfvm__sg_dft_sizes(c->node, 1, c->in[1]->value, &len, &bins))
            return pfvm__fail(c->st, PFVM_ERR_INVALID, "dft_length must be positive");
        b = pfvm_sym_const(c->syms, bins);
    } else {
        b = x->dims[a];
        if (pfvm_node_attr_int(c->node, "onesided", 0))
            b = pfvm_sym_addi(c->syms, pfvm_sym_div(c->syms, b, pfvm_sym_const(c->syms, 2)), 1);
    }
    out = *x;
    out.dims[a] = b;
    out.dims[x->rank - 1] = pfvm_sym_const(c->syms, 2);
    if (!b)
        return pfvm__fail(c->st, PFVM_ERR_NOMEM, "out of memory");
    pfvm_ival_set_tensor(c->out[0], c->in[0]->type.dtype, &out);
    return PFVM_OK;
}

static pfvm_code pfvm__sg_k_dft(pfvm_kctx *k)
{
    const pfvm_tensor *X = k->in[0];
    int a = pfvm__axis(pfvm_node_attr_int(k->node, "axis", 1), X->rank), d;
    int inverse = (int)pfvm_node_attr_int(k->node, "inverse", 0);
    int64_t len, bins, outer = 1, inner = 1, o, e, f, t, comp, sl;
    if (X->rank < 3 || a < 1 || a == X->rank - 1 || (X->dims[X->rank - 1] != 1 && X->dims[X->rank - 1] != 2))
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "input must be [batch, ..., 1 or 2] with axis a signal dim");
    comp = X->dims[X->rank - 1];
    sl = X->dims[a];
    if (!pfvm__sg_dft_sizes(k->node, sl, k->n_in > 1 ? k->in[1] : NULL, &len, &bins))
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "dft_length must be positive");
    {
        /* through pfvm_kctx_output even when planned: it checks the plan's shape */
        int64_t dims[PFVM_MAX_RANK];
        memcpy(dims, X->dims, sizeof(int64_t) * (size_t)X->rank);
        dims[a] = bins;
        dims[X->rank - 1] = 2;
        if (pfvm_kctx_output(k, 0, X->dtype, X->rank, dims))
            return k->st ? k->st->code : PFVM_ERR_NOMEM;
    }
    for (d = 0; d < a; d++)
        outer *= X->dims[d];
    for (d = a + 1; d < X->rank - 1; d++)
        inner *= X->dims[d];
    for (o = 0; o < outer; o++)
        for (e = 0; e < inner; e++)
            for (f = 0; f < bins; f++) {
                double re = 0, im = 0, sign = inverse ? 1 : -1;
                for (t = 0; t < len && t < sl; t++) {
                    int64_t at = ((o * sl + t) * inner + e) * comp;
                    double xr = pfvm_tensor_get_f64(X, at), xi = comp == 2 ? pfvm_tensor_get_f64(X, at + 1) : 0;
                    double ang = sign * 2 * PFVM__SG_PI * (double)((f * t) % len) / (double)len;
                    re += xr * cos(ang) - xi * sin(ang);
                    im += xr * sin(ang) + xi * cos(ang);
                }
                if (inverse) {
                    re /= (double)len;
                    im /= (double)len;
                }
                pfvm_red_store(k->out[0], ((o * bins + f) * inner + e) * 2, re);
                pfvm_red_store(k->out[0], ((o * bins + f) * inner + e) * 2 + 1, im);
            }
    return PFVM_OK;
}

/* ---- STFT ---------------------------------------------------------------------------- */

static int pfvm__sg_stft_sizes(const pfvm_node *n, int64_t sl, const pfvm_tensor *step_t, const pfvm_tensor *win,
                               const pfvm_tensor *len_t, int64_t *step, int64_t *flen, int64_t *frames, int64_t *bins)
{
    *step = pfvm_tensor_get_i64(step_t, 0);
    *flen = len_t && pfvm_tensor_numel(len_t) ? pfvm_tensor_get_i64(len_t, 0) : win ? pfvm_tensor_numel(win) : 0;
    if (*step < 1 || *flen < 1 || *flen > sl || (win && pfvm_tensor_numel(win) != *flen))
        return 0;
    *frames = (sl - *flen) / *step + 1;
    *bins = pfvm_node_attr_int(n, "onesided", 1) ? *flen / 2 + 1 : *flen;
    return 1;
}

/* [batch, n, 1 or 2] -> [batch, frames, bins, 2]: the frame length fl is
 * frame_length or the window's length (equal when both are given),
 * frames = (n - fl) / frame_step + 1 (symbolic in n), bins = fl/2+1 when
 * onesided (the default), else fl. */
static pfvm_code pfvm__sg_infer_stft(pfvm_ictx *c)
{
    const pfvm_shape *x = &c->in[0]->type.shape;
    const pfvm_tensor *step = c->in[1]->value, *len = c->n_in > 3 && c->in[3] ? c->in[3]->value : NULL;
    const pfvm_ival *win = c->n_in > 2 ? c->in[2] : NULL;
    const pfvm_sym *wl = NULL, *fr;
    int64_t sl, st, fl = 0, w;
    pfvm_shape out;
    if (pfvm__sg_check_signal(c, x, 1))
        return c->st ? c->st->code : PFVM_ERR_SHAPE;
    if (win && win->type.kind == PFVM_KIND_TENSOR && win->type.shape.rank >= 0) {
        if (win->type.shape.rank != 1)
            return pfvm__fail(c->st, PFVM_ERR_SHAPE, "window must be 1-D, not rank %d", win->type.shape.rank);
        wl = win->type.shape.dims[0];
    }
    if (x->rank != 3 || !step || (c->n_in > 3 && c->in[3] && !len))
        return pfvm_infer_unknown(c, 0, c->in[0]->type.dtype, 4);
    st = pfvm_tensor_get_i64(step, 0);
    if (len && pfvm_tensor_numel(len))
        fl = pfvm_tensor_get_i64(len, 0);
    else if (wl && pfvm_sym_is_const(wl, &w))
        fl = w;
    else if (wl || !win)
        return wl ? pfvm_infer_unknown(c, 0, c->in[0]->type.dtype, 4)
                  : pfvm__fail(c->st, PFVM_ERR_INVALID, "neither a window nor frame_length gives the frame length");
    if (st < 1 || fl < 1)
        return pfvm__fail(c->st, PFVM_ERR_INVALID, "frame_step (%lld) and the frame length (%lld) must be positive",
                          (long long)st, (long long)fl);
    if (wl && pfvm_infer_check_eq(c, wl, pfvm_sym_const(c->syms, fl), "the window's length and frame_length"))
        return c->st ? c->st->code : PFVM_ERR_SHAPE;
    if (pfvm_sym_is_const(x->dims[1], &sl) && fl > sl)
        return pfvm__fail(c->st, PFVM_ERR_SHAPE, "the frame length %lld exceeds the signal length %lld", (long long)fl,
                          (long long)sl);
    fr = pfvm_sym_addi(c->syms, pfvm_sym_div(c->syms, pfvm_sym_addi(c->syms, x->dims[1], -fl), pfvm_sym_const(c->syms, st)), 1);
    if (!fr)
        return pfvm__fail(c->st, PFVM_ERR_NOMEM, "out of memory");
    out.rank = 4;
    out.dims[0] = x->dims[0];
    out.dims[1] = fr;
    out.dims[2] = pfvm_sym_const(c->syms, pfvm_node_attr_int(c->node, "onesided", 1) ? fl / 2 + 1 : fl);
    out.dims[3] = pfvm_sym_const(c->syms, 2);
    pfvm_ival_set_tensor(c->out[0], c->in[0]->type.dtype, &out);
    return PFVM_OK;
}

static pfvm_code pfvm__sg_k_stft(pfvm_kctx *k)
{
    const pfvm_tensor *X = k->in[0], *win = k->n_in > 2 ? k->in[2] : NULL, *len = k->n_in > 3 ? k->in[3] : NULL;
    int64_t step, fl, fr, bins, B, sl, comp, b, i, f, t;
    if (X->rank != 3 || (X->dims[2] != 1 && X->dims[2] != 2))
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "signal must be [batch, length, 1 or 2]");
    B = X->dims[0];
    sl = X->dims[1];
    comp = X->dims[2];
    if (!pfvm__sg_stft_sizes(k->node, sl, k->in[1], win, len, &step, &fl, &fr, &bins))
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "frame step, window or length does not fit the signal");
    {
        int64_t dims[4];
        dims[0] = B;
        dims[1] = fr;
        dims[2] = bins;
        dims[3] = 2;
        if (pfvm_kctx_output(k, 0, X->dtype, 4, dims))
            return k->st ? k->st->code : PFVM_ERR_NOMEM;
    }
    for (b = 0; b < B; b++)
        for (i = 0; i < fr; i++)
            for (f = 0; f < bins; f++) {
                double re = 0, im = 0;
                for (t = 0; t < fl; t++) {
                    int64_t at = (b * sl + i * step + t) * comp;
                    double w = win ? pfvm_tensor_get_f64(win, t) : 1;
                    double xr = pfvm_tensor_get_f64(X, at) * w, xi = comp == 2 ? pfvm_tensor_get_f64(X, at + 1) * w : 0;
                    double ang = -2 * PFVM__SG_PI * (double)((f * t) % fl) / (double)fl;
                    re += xr * cos(ang) - xi * sin(ang);
                    im += xr * sin(ang) + xi * cos(ang);
                }
                pfvm_red_store(k->out[0], ((b * fr + i) * bins + f) * 2, re);
                pfvm_red_store(k->out[0], ((b * fr + i) * bins + f) * 2 + 1, im);
            }
    return PFVM_OK;
}

/* ---- MelWeightMatrix ------------------------------------------------------------------- */

static pfvm_code pfvm__sg_infer_mel(pfvm_ictx *c)
{
    int64_t bins[1], dft[1];
    pfvm_dtype dt = (pfvm_dtype)pfvm_node_attr_int(c->node, "output_datatype", PFVM_FLOAT);
    pfvm_shape s;
    static const char *const names[] = {"num_mel_bins", "dft_length", "sample_rate", "lower_edge_hertz", "upper_edge_hertz"};
    int j;
    for (j = 0; j < 5 && j < c->n_in; j++) {
        pfvm_code rc = pfvm_infer_check_rank(c, j, 0, names[j]);
        if (rc)
            return rc;
    }
    if (pfvm_ival_ints(c->in[0], bins, 1) != 1 || pfvm_ival_ints(c->in[1], dft, 1) != 1)
        return pfvm_infer_unknown(c, 0, dt, 2);
    if (bins[0] < 1 || dft[0] < 1)
        return pfvm__fail(c->st, PFVM_ERR_INVALID, "num_mel_bins and dft_length must be positive");
    s.rank = 2;
    s.dims[0] = pfvm_sym_const(c->syms, dft[0] / 2 + 1);
    s.dims[1] = pfvm_sym_const(c->syms, bins[0]);
    pfvm_ival_set_tensor(c->out[0], dt, &s);
    return PFVM_OK;
}

/* Triangular filters between mel-spaced edges, as the ONNX reference. */
static pfvm_code pfvm__sg_k_mel(pfvm_kctx *k)
{
    int64_t nb = pfvm_tensor_get_i64(k->in[0], 0), dft = pfvm_tensor_get_i64(k->in[1], 0);
    int64_t rate = pfvm_tensor_get_i64(k->in[2], 0), spec = dft / 2 + 1, i, j;
    double lo = pfvm_tensor_get_f64(k->in[3], 0), hi = pfvm_tensor_get_f64(k->in[4], 0), lmel, hmel, step;
    pfvm_tensor *y = k->out[0];
    int64_t *bin;
    if (nb < 1 || dft < 1 || rate < 1)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "num_mel_bins, dft_length and sample_rate must be positive");
    /* the output holds spec x nb elements: bounded long before 2^40 */
    if (nb > ((int64_t)1 << 40) || dft > ((int64_t)1 << 40))
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_RANGE, "num_mel_bins %lld or dft_length %lld is too large",
                             (long long)nb, (long long)dft);
    if (!y->data) {
        int64_t dims[2];
        dims[0] = spec;
        dims[1] = nb;
        if (pfvm_kctx_output(k, 0, (pfvm_dtype)pfvm_node_attr_int(k->node, "output_datatype", PFVM_FLOAT), 2, dims))
            return k->st ? k->st->code : PFVM_ERR_NOMEM;
    }
    bin = (int64_t *)pfvm_kctx_scratch(k, sizeof(int64_t) * (size_t)(nb + 2));
    if (!bin)
        return k->st ? k->st->code : PFVM_ERR_NOMEM;
    lmel = 2595 * log10(1 + lo / 700);
    hmel = 2595 * log10(1 + hi / 700);
    step = (hmel - lmel) / (double)(nb + 2);
    for (i = 0; i < nb + 2; i++) {
        double f = 700 * (pow(10, ((double)i * step + lmel) / 2595) - 1);
        double b = floor(((double)dft + 1) * f / (double)rate);
        /* checked as a double: edges of NaN, infinite or huge hertz have
         * no int64 bin */
        if (!(b >= 0 && b <= (double)spec))
            return pfvm__op_fail(k->st, k->node, PFVM_ERR_RANGE,
                                 "mel edges %g..%g hertz fall outside the spectrum of %lld bins", lo, hi, (long long)spec);
        bin[i] = (int64_t)b;
    }
    for (i = 0; i < spec * nb; i++)
        pfvm_red_store(y, i, 0);
    for (i = 0; i < nb; i++) {
        int64_t l = bin[i], c = bin[i + 1], r = bin[i + 2];
        if (l < 0 || r >= spec + 1 || c >= spec)
            return pfvm__op_fail(k->st, k->node, PFVM_ERR_RANGE, "mel edges fall outside the spectrum");
        if (c == l)
            pfvm_red_store(y, c * nb + i, 1);
        else
            for (j = l; j <= c; j++)
                pfvm_red_store(y, j * nb + i, (double)(j - l) / (double)(c - l));
        for (j = c; r > c && j < r; j++)
            pfvm_red_store(y, j * nb + i, (double)(r - j) / (double)(r - c));
    }
    return PFVM_OK;
}

PFVM_INTERNAL const pfvm_op_def pfvm__ops_signal[] = {
    {"DFT", "", 17, 0, 1, 2, 1, 1, pfvm__sg_infer_dft, pfvm__sg_k_dft, NULL, PFVM_FUSE_OPAQUE, "float,double,float16", NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
    {"STFT", "", 17, 0, 2, 4, 1, 1, pfvm__sg_infer_stft, pfvm__sg_k_stft, NULL, PFVM_FUSE_OPAQUE, "float,double,float16", NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
    {"MelWeightMatrix", "", 17, 0, 5, 5, 1, 1, pfvm__sg_infer_mel, pfvm__sg_k_mel, NULL, PFVM_FUSE_OPAQUE, "-> float,double,float16", NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
    {NULL, NULL, 0, 0, 0, 0, 0, 0, NULL, NULL, NULL, PFVM_FUSE_OPAQUE, NULL, NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL}
};
