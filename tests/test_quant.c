/* int8 quantization (src/ops/quant.c, src/quantize/quantize.c, src/passes/qlinear.c):
 * fixed-point requantization against exact and double references,
 * saturation and zero points; QLinearConv's fast path (AVX2 and portable
 * kernels, dense, strided, padded, grouped and depthwise, per-tensor and
 * per-channel weight scales) against a double reference; pfvm_quantize and
 * the qlinear pass on a small Conv-Relu-Conv model. */
#include "exec/exec.h"
#include "ops/quant.h"
#include "quantize/quantize.h"
#include "shape/infer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static uint64_t rng_state = 88172645463325252ull;

static uint32_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 11);
}

/* round(p / 2^s) half up (toward +infinity) by long division, without
 * shifts of negative numbers: the reference for pfvm_q_scale. */
static int64_t ref_shift_up(int64_t p, int s)
{
    int64_t d = (int64_t)1 << s, q = p / d, r = p % d; /* C99: truncates toward zero */
    if (r < 0) {
        q -= 1;
        r += d;
    }
    if (2 * r >= d)
        q++;
    return q;
}

static void test_multiplier(void)
{
    int i, bad = 0;
    for (i = 0; i < 20000; i++) {
        double real = ldexp(1.0 + (rnd() % 1000000) / 1e6, -(int)(rnd() % 30)) * 0.5;
        int32_t m;
        int s;
        pfvm_q_multiplier(real, &m, &s);
        if (m < (1 << 30) || fabs(ldexp((double)m, -s) - real) > real * ldexp(1.0, -31))
            bad++;
    }
    CHECK_MSG(bad == 0, "%d multipliers off", bad);
    {
        int32_t m;
        int s;
        pfvm_q_multiplier(0.0, &m, &s);
        CHECK(m == 0);
        pfvm_q_multiplier(0.5, &m, &s);
        CHECK(m == 1 << 30 && s == 31);
    }
}

static void test_scale_exact(void)
{
    int i, bad = 0, ties = 0;
    for (i = 0; i < 200000; i++) {
        int64_t acc = (int64_t)(rnd() % 2000001) - 1000000;
        int32_t m = (int32_t)((1u << 30) + rnd() % (1u << 30));
        int s = 31 + (int)(rnd() % 20);
        if (i % 4 == 0) { /* an exact tie: acc * m = (2k + 1) * 2^(s-1) */
            m = 1 << 30;
            s = 31 + (int)(rnd() % 8);
            acc = (int64_t)(2 * (int64_t)(rnd() % 1000) - 999) * ((int64_t)1 << (s - 31));
            ties++;
        }
        if (pfvm_q_scale(acc, m, s) != ref_shift_up(acc * m, s))
            bad++;
    }
    CHECK_MSG(bad == 0, "%d of 200000 differ from the exact reference (%d ties)", bad, ties);
    CHECK(pfvm_q_scale(3, 1 << 30, 32) == 1);   /* 0.75 -> 1 */
    CHECK(pfvm_q_scale(2, 1 << 30, 32) == 1);   /* 0.5 -> 1 (half up) */
    CHECK(pfvm_q_scale(6, 1 << 30, 32) == 2);   /* 1.5 -> 2 */
    CHECK(pfvm_q_scale(-2, 1 << 30, 32) == 0);  /* -0.5 -> 0 */
    CHECK(pfvm_q_scale(-6, 1 << 30, 32) == -1); /* -1.5 -> -1 */
    CHECK(pfvm_q_scale(-10, 1 << 30, 32) == -2); /* -2.5 -> -2 */
    CHECK(pfvm_q_scale(-5, 1 << 30, 32) == -1); /* -1.25 -> -1 */
    CHECK(pfvm_q_scale(-7, 1 << 30, 32) == -2); /* -1.75 -> -2 */
}

/* Against the double formula the ONNX reference uses: equal except where
 * acc * real lies within the multiplier's 2^-31 error of a half. */
static void test_scale_double(void)
{
    int i, bad = 0, near = 0;
    for (i = 0; i < 100000; i++) {
        double real = (rnd() % 100000 + 1) / 1e5 * 0.02;
        int32_t acc = (int32_t)(rnd() % 400001) - 200000, m;
        int s;
        double want = acc * real, r = floor(want + 0.5);
        if (r - want == 0.5 && fmod(r, 2.0) != 0)
            r -= 1;
        pfvm_q_multiplier(real, &m, &s);
        if (fabs(want - floor(want) - 0.5) < 1e-6) {
            near++;
            continue;
        }
        if ((double)pfvm_q_scale(acc, m, s) != r)
            bad++;
    }
    CHECK_MSG(bad == 0, "%d differ from round(acc * real) (%d near halves skipped)", bad, near);
}

/* The 32-bit requantization (high word of the product) against the 64-bit
 * one, at every shift it takes, on random sums and multipliers, at halves
 * and at the ends of the ranges. */
static void test_scale_hi(void)
{
    static const int32_t accs[] = {0, 1, -1, 2, -2, 3, INT32_MAX, INT32_MIN, INT32_MIN + 1, 1 << 30, -(1 << 30)};
    int s, i, bad = 0;
    for (s = 1; s <= 30; s++) {
        for (i = 0; i < 20000; i++) {
            int32_t mult = (int32_t)((1u << 30) + rnd() % (1u << 30)), acc;
            if (i < (int)(sizeof accs / sizeof accs[0]))
                acc = accs[i];
            else if (i % 3 == 0) /* exact halves and their neighbours */
                acc = (int32_t)((int64_t)((rnd() % 2001) - 1000) << (s < 20 ? s : 20)) + (int32_t)(rnd() % 3) - 1, mult = 1 << 30;
            else
                acc = (int32_t)rnd();
            if (pfvm_q_scale_hi(acc, mult, s) != pfvm_q_scale(acc, mult, 32 + s))
                bad++;
        }
    }
    CHECK_MSG(bad == 0, "pfvm_q_scale_hi differs from pfvm_q_scale %d times", bad);
}

static void test_requantize(void)
{
    int32_t m;
    int s;
    pfvm_q_multiplier(0.01, &m, &s);
    CHECK(pfvm_q_requantize(1000, m, s, 128, 0, 255) == 138);
    CHECK(pfvm_q_requantize(-1000, m, s, 128, 0, 255) == 118);
    CHECK(pfvm_q_requantize(100000, m, s, 128, 0, 255) == 255);   /* saturates high */
    CHECK(pfvm_q_requantize(-100000, m, s, 128, 0, 255) == 0);    /* and low */
    CHECK(pfvm_q_requantize(100000, m, s, 0, -128, 127) == 127);
    CHECK(pfvm_q_requantize(-100000, m, s, 0, -128, 127) == -128);
    CHECK(pfvm_q_requantize(2147483647, m, s, 0, -128, 127) == 127); /* no overflow at the extremes */
    CHECK(pfvm_q_requantize(-2147483647 - 1, m, s, 0, -128, 127) == -128);
    pfvm_q_multiplier(0.25, &m, &s); /* exact: ties are ties */
    CHECK(pfvm_q_requantize(2, m, s, -3, -128, 127) == -3 + 1); /* 0.5 -> 1 (half up), then the zero point */
    CHECK(pfvm_q_requantize(6, m, s, -3, -128, 127) == -3 + 2); /* 1.5 -> 2 */
    CHECK(pfvm_q_requantize(-10, m, s, 7, -128, 127) == 7 - 2); /* -2.5 -> -2 */
    CHECK(pfvm_q_requantize(-6, m, s, 7, -128, 127) == 7 - 1);  /* -1.5 -> -1 */
}

/* ---- QLinearConv: fast path against a double reference ------------------------------------- */

typedef struct conv_case {
    int64_t N, C, H, W, M, KH, KW, group, sh, sw, pt, pl, pb, pr, dh, dw;
    int per_channel, y_int8, bias;
    int extreme; /* x at 255 and zero point 0, w at -128 with zero point 127: the largest products,
                    where a kernel adding u8 x s8 pairs in int16 (vpmaddubsw) saturates */
    int wz0;     /* weight zero points 0 (symmetric, as pfvm_quantize makes them): the VNNI path's
                    weights; with extreme, w at -128 and -127 */
} conv_case;

/* 1: the weights, scales and zero points are graph inputs instead of
 * initializers, so QLinearConv packs its weights on each run (no state
 * made at bind). */
static int consts_as_inputs;

/* Declares v a graph input of type dt and the given shape. */
static void add_typed_input(pfvm_model *m, pfvm_graph *g, pfvm_value *v, pfvm_dtype dt, int rank, const int64_t *dims)
{
    pfvm_status st;
    v->type.kind = PFVM_KIND_TENSOR;
    v->type.dtype = dt;
    pfvm_shape_from_dims(m->syms, &v->type.shape, rank, dims, &st);
    v->has_type_info = 1;
    pfvm_graph_add_input(g, v, &st);
}

static pfvm_tensor *new_tensor(pfvm_dtype dt, int rank, const int64_t *dims)
{
    pfvm_status st;
    return pfvm_tensor_new(dt, rank, dims, &st);
}

static pfvm_tensor *scalar_f(float v)
{
    pfvm_tensor *t = new_tensor(PFVM_FLOAT, 0, NULL);
    *(float *)t->data = v;
    return t;
}

static pfvm_tensor *scalar_u8(pfvm_dtype dt, int v)
{
    pfvm_tensor *t = new_tensor(dt, 0, NULL);
    if (dt == PFVM_UINT8)
        *(uint8_t *)t->data = (uint8_t)v;
    else
        *(int8_t *)t->data = (int8_t)v;
    return t;
}

/* One QLinearConv node run by the executor: the output. */
static pfvm_tensor *run_qconv(const conv_case *cc, pfvm_tensor *const *ins, int n_in)
{
    pfvm_status st;
    pfvm_model *m = pfvm_model_new(&st);
    pfvm_graph *g = pfvm_graph_new(m, NULL, "g", &st);
    pfvm_value *iv[9], *y;
    pfvm_node *n;
    pfvm_exec *e;
    pfvm_tensor *out = NULL;
    int64_t v[4];
    int i;
    pfvm_model_set_opset(m, "", 13, &st);
    for (i = 0; i < n_in; i++) {
        char name[16];
        snprintf(name, sizeof name, "x%d", i);
        iv[i] = pfvm_graph_value(g, name, &st);
        if (i == 0 || consts_as_inputs) {
            add_typed_input(m, g, iv[i], ins[i]->dtype, ins[i]->rank, ins[i]->dims);
        } else
            pfvm_graph_add_init(g, iv[i], pfvm_model_tensor(m, ins[i]->dtype, ins[i]->rank, ins[i]->dims, ins[i]->data, &st),
                                &st); /* a view: ins outlives the model */
    }
    y = pfvm_graph_value(g, "y", &st);
    n = pfvm_graph_add_node(g, "QLinearConv", "", "qconv", iv, n_in, &y, 1, &st);
    pfvm_graph_add_output(g, y, &st);
    pfvm_node_set_attr_int(n, "group", cc->group, &st);
    v[0] = cc->sh, v[1] = cc->sw;
    pfvm_node_set_attr_ints(n, "strides", v, 2, &st);
    v[0] = cc->dh, v[1] = cc->dw;
    pfvm_node_set_attr_ints(n, "dilations", v, 2, &st);
    v[0] = cc->pt, v[1] = cc->pl, v[2] = cc->pb, v[3] = cc->pr;
    pfvm_node_set_attr_ints(n, "pads", v, 4, &st);
    if (pfvm_infer_shapes(g, 0, &st) == PFVM_OK && (e = pfvm_exec_new(m, g, &st)) != NULL) {
        if (pfvm_exec_bind(e, (const pfvm_tensor *const *)ins, consts_as_inputs ? n_in : 1, &st) == PFVM_OK &&
            pfvm_exec_run(e, &st) == PFVM_OK)
            out = pfvm_tensor_clone(pfvm_exec_output(e, 0), &st);
        else
            fprintf(stderr, "run: %s\n", st.msg);
        pfvm_exec_free(e);
    } else
        fprintf(stderr, "setup: %s\n", st.msg);
    pfvm_model_free(m);
    return out;
}

static int get_q(const pfvm_tensor *t, int64_t i)
{
    return t->dtype == PFVM_UINT8 ? ((const uint8_t *)t->data)[i] : ((const int8_t *)t->data)[i];
}

/* |fast - double reference| <= 1 everywhere, equal away from halves; the
 * AVX2 and portable kernels agree exactly. */
static void check_conv(const conv_case *cc)
{
    int64_t xd[4] = {cc->N, cc->C, cc->H, cc->W}, wd[4] = {cc->M, cc->C / cc->group, cc->KH, cc->KW}, md = cc->M;
    int64_t OH = (cc->H + cc->pt + cc->pb - cc->dh * (cc->KH - 1) - 1) / cc->sh + 1;
    int64_t OW = (cc->W + cc->pl + cc->pr - cc->dw * (cc->KW - 1) - 1) / cc->sw + 1;
    int64_t i, nws = cc->per_channel ? cc->M : 1, n, m, oh, ow, c, kh, kw, worst = 0, unequal = 0;
    pfvm_tensor *ins[9], *fast, *portable, *per_run, *dsp, *avx2, *narrow, *tile_pos, *tile_ch;
    int xz = cc->extreme ? 0 : 1 + (int)(rnd() % 250), yz = cc->y_int8 ? (int)(rnd() % 20) - 10 : 100 + (int)(rnd() % 40);
    float xs = 0.02f, ys = cc->y_int8 ? 0.35f : 0.2f;
    ins[0] = new_tensor(PFVM_UINT8, 4, xd);
    for (i = 0; i < pfvm_tensor_numel(ins[0]); i++)
        ((uint8_t *)ins[0]->data)[i] = (uint8_t)(cc->extreme ? 255 - rnd() % 2 : rnd());
    ins[1] = scalar_f(xs);
    ins[2] = scalar_u8(PFVM_UINT8, xz);
    ins[3] = new_tensor(PFVM_INT8, 4, wd);
    for (i = 0; i < pfvm_tensor_numel(ins[3]); i++)
        ((int8_t *)ins[3]->data)[i] = (int8_t)(cc->extreme ? -128 + (int)(rnd() % 2) : (int)(rnd() % 255) - 127);
    ins[4] = new_tensor(PFVM_FLOAT, cc->per_channel ? 1 : 0, &md);
    ins[5] = new_tensor(PFVM_INT8, cc->per_channel ? 1 : 0, &md);
    for (i = 0; i < nws; i++) {
        ((float *)ins[4]->data)[i] = cc->extreme ? 1e-6f * (float)(1 + rnd() % 20) : 0.001f * (float)(1 + rnd() % 20);
        ((int8_t *)ins[5]->data)[i] = (int8_t)(cc->wz0 ? 0 : cc->extreme ? 127 : (int)(rnd() % 7) - 3);
    }
    ins[6] = scalar_f(ys);
    ins[7] = scalar_u8(cc->y_int8 ? PFVM_INT8 : PFVM_UINT8, yz);
    ins[8] = new_tensor(PFVM_INT32, 1, &md);
    for (i = 0; i < cc->M; i++)
        ((int32_t *)ins[8]->data)[i] = (int32_t)(rnd() % 20001) - 10000;
    fast = run_qconv(cc, ins, cc->bias ? 9 : 8);
    pfvm_q_force_portable(1);
    portable = run_qconv(cc, ins, cc->bias ? 9 : 8);
    pfvm_q_force_portable(0);
    pfvm_q_force_dsp(1);
    dsp = run_qconv(cc, ins, cc->bias ? 9 : 8);
    pfvm_q_force_dsp(0);
    pfvm_q_force_no_vnni(1);
    avx2 = run_qconv(cc, ins, cc->bias ? 9 : 8);
    pfvm_q_force_no_vnni(0);
    pfvm_q_force_vnni_narrow(1);
    narrow = run_qconv(cc, ins, cc->bias ? 9 : 8);
    pfvm_q_force_vnni_narrow(0);
    pfvm_q_force_direct_tile(1);
    tile_pos = run_qconv(cc, ins, cc->bias ? 9 : 8);
    pfvm_q_force_direct_tile(2);
    tile_ch = run_qconv(cc, ins, cc->bias ? 9 : 8);
    pfvm_q_force_direct_tile(0);
    consts_as_inputs = 1;
    per_run = run_qconv(cc, ins, cc->bias ? 9 : 8);
    consts_as_inputs = 0;
    CHECK(fast && portable && per_run && dsp && avx2 && narrow && tile_pos && tile_ch);
    if (!fast || !portable || !per_run || !dsp || !avx2 || !narrow || !tile_pos || !tile_ch)
        return;
    CHECK_MSG(!memcmp(tile_pos->data, portable->data, (size_t)pfvm_tensor_numel(tile_pos)),
              "the direct path's position tile and the portable kernel differ (C%lld M%lld)", (long long)cc->C,
              (long long)cc->M);
    CHECK_MSG(!memcmp(tile_ch->data, portable->data, (size_t)pfvm_tensor_numel(tile_ch)),
              "the direct path's channel tile and the portable kernel differ (C%lld M%lld)", (long long)cc->C,
              (long long)cc->M);
    CHECK_MSG(!memcmp(narrow->data, portable->data, (size_t)pfvm_tensor_numel(narrow)),
              "the 4x16 VNNI tile alone and the portable kernel differ (C%lld M%lld)", (long long)cc->C,
              (long long)cc->M);
    CHECK_MSG(!memcmp(avx2->data, portable->data, (size_t)pfvm_tensor_numel(avx2)),
              "the AVX2 kernel (VNNI off) and the portable kernel differ (C%lld M%lld)", (long long)cc->C,
              (long long)cc->M);
    CHECK_MSG(!memcmp(dsp->data, portable->data, (size_t)pfvm_tensor_numel(dsp)),
              "the SMLAD tile and the portable kernel differ (C%lld M%lld)", (long long)cc->C, (long long)cc->M);
    CHECK(fast->dims[2] == OH && fast->dims[3] == OW);
    CHECK(!memcmp(fast->data, portable->data, (size_t)pfvm_tensor_numel(fast)));
    CHECK_MSG(!memcmp(fast->data, per_run->data, (size_t)pfvm_tensor_numel(fast)),
              "weights packed at bind and per run differ (C%lld M%lld)", (long long)cc->C, (long long)cc->M);
    for (n = 0; n < cc->N; n++)
        for (m = 0; m < cc->M; m++) {
            int64_t gg = m / (cc->M / cc->group), CG = cc->C / cc->group;
            double ws = ((float *)ins[4]->data)[cc->per_channel ? m : 0];
            int wz = ((int8_t *)ins[5]->data)[cc->per_channel ? m : 0];
            for (oh = 0; oh < OH; oh++)
                for (ow = 0; ow < OW; ow++) {
                    double acc = cc->bias ? ((int32_t *)ins[8]->data)[m] : 0, v, r;
                    int64_t got, want, lo = cc->y_int8 ? -128 : 0, hi = cc->y_int8 ? 127 : 255;
                    for (c = 0; c < CG; c++)
                        for (kh = 0; kh < cc->KH; kh++)
                            for (kw = 0; kw < cc->KW; kw++) {
                                int64_t ih = oh * cc->sh - cc->pt + kh * cc->dh, iw = ow * cc->sw - cc->pl + kw * cc->dw;
                                if (ih < 0 || ih >= cc->H || iw < 0 || iw >= cc->W)
                                    continue;
                                acc += (double)(((uint8_t *)ins[0]->data)[((n * cc->C + gg * CG + c) * cc->H + ih) * cc->W + iw] - xz) *
                                       (((int8_t *)ins[3]->data)[((m * CG + c) * cc->KH + kh) * cc->KW + kw] - wz);
                            }
                    v = acc * (double)xs * ws / (double)ys;
                    r = floor(v + 0.5);
                    if (r - v == 0.5 && fmod(r, 2.0) != 0)
                        r -= 1;
                    want = (int64_t)r + yz;
                    want = want < lo ? lo : want > hi ? hi : want;
                    got = get_q(fast, ((n * cc->M + m) * OH + oh) * OW + ow);
                    if (llabs(got - want) > worst)
                        worst = llabs(got - want);
                    if (got != want && fabs(v - floor(v) - 0.5) > 1e-6)
                        unequal++;
                }
        }
    CHECK_MSG(worst <= 1 && unequal == 0, "conv C%lld M%lld k%lldx%lld g%lld s%lld p%lld: worst %lld, %lld off away from halves",
              (long long)cc->C, (long long)cc->M, (long long)cc->KH, (long long)cc->KW, (long long)cc->group,
              (long long)cc->sh, (long long)cc->pt, (long long)worst, (long long)unequal);
    for (i = 0; i < 9; i++)
        pfvm_tensor_free(ins[i]);
    pfvm_tensor_free(fast);
    pfvm_tensor_free(portable);
    pfvm_tensor_free(per_run);
    pfvm_tensor_free(dsp);
    pfvm_tensor_free(avx2);
    pfvm_tensor_free(narrow);
    pfvm_tensor_free(tile_pos);
    pfvm_tensor_free(tile_ch);
}

static void test_qlinear_conv(void)
{
    static const conv_case cases[] = {
        /* N  C  H   W   M  KH KW g  sh sw pt pl pb pr dh dw pc y8 bias */
        {1, 3, 9, 11, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 0, 0},   /* dense 3x3, padded, per channel */
        {2, 5, 7, 7, 6, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 0, 0, 1, 0, 0}, /* pointwise, per tensor, 2 images */
        {1, 16, 10, 9, 21, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0}, /* pointwise, int8 output, no bias */
        {1, 4, 12, 12, 7, 3, 3, 1, 2, 2, 1, 1, 0, 0, 1, 1, 1, 0, 1, 0, 0},  /* strided, asymmetric pads */
        {1, 8, 9, 9, 8, 3, 3, 8, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 0, 0},    /* depthwise */
        {1, 8, 11, 11, 8, 3, 3, 8, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0},  /* depthwise strided */
        {1, 6, 8, 8, 4, 3, 3, 2, 1, 1, 2, 2, 2, 2, 2, 2, 1, 0, 1, 0, 0},    /* grouped, dilated */
        {1, 33, 5, 5, 5, 5, 5, 1, 1, 1, 2, 2, 2, 2, 1, 1, 1, 0, 1, 0, 0},   /* odd reduction length */
        {1, 6, 13, 10, 6, 3, 3, 6, 2, 2, 2, 1, 0, 2, 2, 2, 1, 0, 1, 0, 0}, /* depthwise dilated, strided, uneven pads */
        {2, 4, 7, 9, 4, 5, 3, 4, 3, 3, 1, 2, 1, 0, 1, 1, 0, 1, 1, 0, 0},  /* depthwise 5x3, stride 3, 2 images */
        {1, 4, 20, 37, 4, 3, 3, 4, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 0, 0}, /* depthwise, rows of 16 and a tail */
        {1, 4, 9, 70, 4, 3, 3, 4, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0},  /* depthwise strided, rows of 16 */
        {1, 2, 12, 20, 2, 9, 9, 2, 1, 1, 4, 4, 4, 4, 1, 1, 1, 0, 1, 0, 0}, /* depthwise 9x9: over 64 positions */
        {1, 3, 16, 16, 8, 3, 3, 1, 2, 2, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 0}, /* mobilenet's stem at the extremes */
        {1, 64, 6, 6, 8, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 0, 1, 1, 0}, /* pointwise at the extremes */
        {1, 8, 9, 9, 8, 3, 3, 8, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 0},  /* depthwise at the extremes */
        {1, 3, 20, 37, 8, 7, 7, 1, 2, 2, 3, 3, 3, 3, 1, 1, 1, 0, 1, 0, 0}, /* 7x7/2 stem: phase planes, odd left pad */
        {1, 5, 11, 40, 6, 3, 3, 1, 2, 2, 0, 0, 1, 1, 1, 1, 1, 1, 1, 0, 0}, /* stride 2, even left pad */
        {1, 3, 7, 23, 5, 3, 3, 1, 3, 3, 1, 1, 1, 1, 1, 1, 0, 0, 1, 0, 0},  /* stride 3 */
        {1, 3, 40, 40, 3, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 0, 0}, /* depthwise: narrow rows in two runs */
        {1, 2, 5, 80, 2, 3, 3, 2, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 0, 0},  /* depthwise: wide rows and a tail */
        /* weight zero points 0: the VNNI path where the CPU has it (u8 panels, s8 weights) */
        {1, 3, 9, 11, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 0, 1},    /* dense 3x3, padded */
        {2, 13, 7, 7, 6, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 0, 0, 1, 0, 1},    /* pointwise, K % 4, 2 images, odd columns */
        {1, 16, 10, 9, 21, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 1},  /* pointwise, int8 output, rows % 4 */
        {1, 64, 6, 6, 8, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 0, 1, 1, 1},    /* pointwise at the extremes */
        {1, 5, 12, 13, 7, 3, 3, 1, 2, 2, 1, 0, 0, 1, 1, 1, 1, 0, 1, 0, 1},   /* strided, asymmetric pads */
        {1, 6, 8, 8, 10, 3, 3, 2, 1, 1, 2, 2, 2, 2, 2, 2, 1, 1, 1, 0, 1},    /* grouped, dilated */
        {1, 3, 20, 37, 9, 7, 7, 1, 2, 2, 3, 3, 3, 3, 1, 1, 1, 0, 1, 0, 1},   /* 7x7/2 stem */
        {1, 33, 5, 5, 5, 5, 5, 1, 1, 1, 2, 2, 2, 2, 1, 1, 1, 0, 0, 1, 1},    /* odd K at the extremes */
        {1, 7, 17, 19, 12, 3, 3, 1, 3, 2, 0, 2, 1, 0, 1, 1, 0, 1, 1, 0, 1},  /* strides 3 and 2 */
        {1, 40, 4, 4, 16, 3, 3, 1, 1, 1, 5, 5, 5, 5, 1, 1, 1, 0, 1, 0, 1},   /* pads wider than the input */
        {1, 3, 17, 70, 8, 3, 3, 1, 2, 2, 1, 1, 1, 1, 1, 1, 1, 0, 1, 0, 1},   /* stride 2, wide rows (vector copy) */
        /* depthwise with weight zero points 0: the AVX-512 VBMI path where the CPU has it (u8 plane, vpermb) */
        {1, 8, 9, 9, 8, 3, 3, 8, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 0, 1},     /* depthwise 3x3 */
        {1, 8, 11, 11, 8, 3, 3, 8, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1},   /* strided, int8 output */
        {1, 4, 20, 37, 4, 3, 3, 4, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 0, 1},   /* 37 columns: 3 vectors, a tail */
        {1, 3, 9, 130, 3, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 1},   /* two steps of 64 and a tail, no bias */
        {1, 3, 10, 113, 3, 3, 3, 3, 2, 2, 0, 1, 1, 0, 1, 1, 1, 1, 1, 0, 1},  /* stride 2, 56 columns, uneven pads */
        {1, 6, 13, 10, 6, 3, 3, 6, 2, 2, 2, 1, 0, 2, 2, 2, 1, 0, 1, 0, 1},   /* dilated, strided, uneven pads */
        {2, 4, 7, 9, 4, 5, 3, 4, 3, 3, 1, 2, 1, 0, 1, 1, 0, 1, 1, 0, 1},     /* 5x3, stride 3, 2 images */
        {1, 2, 12, 20, 2, 9, 9, 2, 1, 1, 4, 4, 4, 4, 1, 1, 1, 0, 1, 0, 1},   /* 9x9: three tap groups a row */
        {1, 8, 9, 9, 8, 3, 3, 8, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1},     /* at the extremes (sums stored) */
        {1, 5, 7, 7, 5, 3, 3, 5, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1, 0, 1},     /* 7x7, per tensor */
        {1, 2, 11, 40, 2, 3, 3, 2, 5, 5, 1, 1, 1, 1, 1, 1, 1, 0, 1, 0, 1},   /* stride 5: past one load (AVX2) */
        /* narrow planes: whole output rows a vector (the AVX-512 depthwise kernel's row sets) */
        {1, 7, 14, 14, 7, 3, 3, 7, 2, 2, 1, 1, 1, 1, 1, 1, 1, 0, 1, 0, 1},   /* 14 -> 7, stride 2: 2 rows a vector */
        {1, 6, 7, 7, 6, 3, 3, 6, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1},     /* 7x7 at the extremes (sums stored) */
        {2, 5, 11, 3, 5, 3, 3, 5, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 0, 1},    /* 3 columns: 5 rows a vector, 2 images */
        {1, 4, 23, 5, 4, 3, 3, 4, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 0, 0, 1},    /* 5 columns, 23 rows: steps and a tail */
        {1, 3, 9, 8, 3, 5, 5, 3, 1, 1, 2, 2, 2, 2, 1, 1, 1, 0, 1, 0, 1},     /* 8 columns, 5x5 */
        {1, 3, 19, 10, 3, 3, 3, 3, 3, 2, 1, 0, 2, 1, 2, 1, 1, 0, 1, 0, 1},   /* strides 3, 2, dilated rows: fewer rows fit */
        {1, 2, 1, 6, 2, 3, 3, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 0, 1},     /* one input row, 6 columns */
        {1, 3, 40, 2, 3, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1},    /* 2 columns: 8 rows a vector, 2 steps */
        {1, 5, 14, 14, 5, 3, 3, 5, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 0, 1},   /* 14x14: a row a vector, 4 rows a step */
        {1, 3, 13, 16, 3, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1},   /* 16 columns at the extremes (sums stored) */
        {1, 4, 29, 23, 4, 3, 3, 4, 2, 2, 1, 1, 1, 1, 1, 1, 0, 0, 1, 0, 1},   /* 12 columns at stride 2, 15 rows */
    };
    size_t i;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_conv(&cases[i]);
}

/* One column (a Gemm lowered to a 1x1 QLinearConv): the SMLAD path's
 * 4x1 matrix-vector tile against the portable kernel.
 * Run last: its random draws would change the later tests' data. */
static void test_qlinear_gemv(void)
{
    static const conv_case cases[] = {
        /* N  C  H  W  M KH KW g sh sw pt pl pb pr dh dw pc y8 bias extreme */
        {1, 512, 1, 1, 64, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 0, 1, 0, 0}, /* digits' 512 -> 64 */
        {2, 37, 1, 1, 10, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 0, 1, 1, 0, 0},  /* odd K, rows % 4, 2 images */
        {1, 14, 1, 1, 7, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 0, 0, 0, 0},   /* pairs % 4 == 3, no bias */
        {1, 12, 1, 1, 6, 1, 1, 2, 1, 1, 0, 0, 0, 0, 1, 1, 1, 0, 1, 0, 0},   /* grouped */
        {1, 300, 1, 1, 9, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 0}, /* at the extremes */
    };
    size_t i;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_conv(&cases[i]);
}

/* The VNNI path's 8x32 tiles (AVX-512, pairs of 16-column panels by
 * pairs of 4-row weight blocks) with the rows and a panel left over as
 * 4x16 tiles, against the portable kernel (check_conv compares every
 * path). Run last: its random draws would change the later tests' data. */
static void test_qlinear_conv_wide(void)
{
    static const conv_case cases[] = {
        /* N  C  H  W  M KH KW g sh sw pt pl pb pr dh dw pc y8 bias extreme wz0 */
        {1, 64, 16, 16, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 0, 1}, /* K 576, 16 panels, 2 row pairs */
        {1, 9, 9, 7, 13, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1},   /* 63 columns: an odd panel; rows 8 + 4 + 1 */
        {2, 30, 6, 11, 12, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 1},  /* pointwise K % 4 = 2, 66 columns, 2 images */
        {1, 12, 11, 13, 20, 3, 3, 2, 2, 1, 1, 0, 1, 2, 1, 1, 1, 0, 1, 0, 1}, /* grouped 10 rows each, strides 2 and 1 */
        {1, 40, 8, 8, 5, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 1, 0, 1},    /* 5 rows: the second block one row */
        {1, 33, 9, 9, 11, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1},   /* at the extremes (tiles not fused) */
        /* an odd panel as 16x16 tiles, a last panel of 1 to 4 columns as 16-row column vectors */
        {1, 96, 7, 7, 40, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 0, 1, 0, 1},  /* 7x7: panels 0-1, 2, a column; rows 16+16+8 */
        {2, 37, 14, 14, 21, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 1, 0, 1}, /* 14x14: 4 columns left, K % 4, int8, 2 images */
        {1, 64, 2, 2, 19, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 1},  /* 2x2: the columns alone, no bias */
        {1, 5, 5, 10, 33, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 0, 1},  /* 3x3, 50 columns: 2 left; 33 rows */
        {1, 8, 9, 7, 16, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 0, 1, 0, 1},   /* 63 columns: 16x16 tile on the odd panel */
        /* stride 1, windows over 1x1: the direct path (no im2col; xi planes, flat output) */
        {2, 20, 23, 37, 24, 3, 3, 1, 1, 1, 1, 0, 2, 1, 1, 1, 1, 1, 1, 0, 1}, /* uneven pads, C % 4, 2 images */
        {1, 64, 14, 14, 36, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 0, 1}, /* resnet's layer3 shape, rows 32 + 4 */
        {1, 7, 7, 7, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1},    /* 7x7, per tensor, no bias */
        {1, 35, 15, 17, 16, 3, 3, 1, 2, 2, 1, 1, 1, 1, 1, 1, 1, 0, 1, 0, 1},  /* stride 2, C % 4 (phase planes) */
        {2, 16, 23, 29, 12, 3, 3, 1, 2, 2, 1, 1, 0, 0, 1, 1, 1, 1, 1, 0, 1},  /* stride 2, uneven pads, 2 images */
        {1, 20, 19, 26, 9, 7, 5, 1, 3, 2, 3, 2, 1, 2, 1, 2, 1, 0, 1, 0, 1},   /* 7x5, strides 3 and 2, dilated */
        {1, 8, 14, 14, 8, 2, 2, 1, 2, 2, 0, 0, 0, 0, 1, 1, 0, 0, 1, 0, 1},     /* 2x2 stride 2 */
        {1, 10, 12, 19, 9, 5, 5, 1, 1, 1, 4, 1, 0, 3, 2, 1, 1, 0, 1, 0, 1},  /* 5x5 dilated 2x1, pads 4 1 0 3 */
        {1, 16, 9, 40, 8, 1, 3, 1, 1, 1, 0, 1, 0, 1, 1, 1, 1, 1, 1, 0, 1},   /* 1x3 */
        {1, 12, 6, 70, 12, 3, 3, 3, 1, 1, 0, 0, 0, 0, 1, 1, 1, 0, 1, 0, 1},  /* grouped 4 channels each, no pads, 70 wide */
        {1, 5, 3, 3, 8, 3, 3, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 0, 1, 0, 1},     /* one output position */
    };
    size_t i;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_conv(&cases[i]);
}

/* ---- pfvm_quantize and the qlinear pass ------------------------------------------------------- */

static void test_quantize_model(void)
{
    pfvm_status st;
    pfvm_model *m = pfvm_model_new(&st);
    pfvm_graph *g = pfvm_graph_new(m, NULL, "g", &st);
    pfvm_value *x = pfvm_graph_value(g, "x", &st), *w1 = pfvm_graph_value(g, "w1", &st);
    pfvm_value *b1 = pfvm_graph_value(g, "b1", &st), *c1 = pfvm_graph_value(g, "c1", &st);
    pfvm_value *r1 = pfvm_graph_value(g, "r1", &st), *w2 = pfvm_graph_value(g, "w2", &st);
    pfvm_value *y = pfvm_graph_value(g, "y", &st), *ins[3];
    int64_t xd[4] = {1, 2, 6, 6}, w1d[4] = {4, 2, 3, 3}, w2d[4] = {3, 4, 1, 1}, bd = 4, pads[4] = {1, 1, 1, 1};
    pfvm_tensor *t, *calib[4], *probe;
    pfvm_quant_options opt;
    pfvm_quant_report rep;
    pfvm_exec *e;
    const pfvm_tensor *before;
    float *ref = NULL;
    int i, j, n_qconv = 0, n_conv = 0, n_wdq = 0;
    int64_t k, ny;
    pfvm_model_set_opset(m, "", 13, &st);
    add_typed_input(m, g, x, PFVM_FLOAT, 4, xd);
    t = pfvm_model_tensor(m, PFVM_FLOAT, 4, w1d, NULL, &st);
    for (k = 0; k < pfvm_tensor_numel(t); k++)
        ((float *)t->data)[k] = (float)((int)(rnd() % 200) - 100) / 150.0f;
    pfvm_graph_add_init(g, w1, t, &st);
    t = pfvm_model_tensor(m, PFVM_FLOAT, 1, &bd, NULL, &st);
    for (k = 0; k < 4; k++)
        ((float *)t->data)[k] = 0.1f * (float)k - 0.15f;
    pfvm_graph_add_init(g, b1, t, &st);
    t = pfvm_model_tensor(m, PFVM_FLOAT, 4, w2d, NULL, &st);
    for (k = 0; k < pfvm_tensor_numel(t); k++)
        ((float *)t->data)[k] = (float)((int)(rnd() % 200) - 100) / 100.0f;
    pfvm_graph_add_init(g, w2, t, &st);
    ins[0] = x, ins[1] = w1, ins[2] = b1;
    pfvm_node_set_attr_ints(pfvm_graph_add_node(g, "Conv", "", "conv1", ins, 3, &c1, 1, &st), "pads", pads, 4, &st);
    pfvm_graph_add_node(g, "Relu", "", "relu1", &c1, 1, &r1, 1, &st);
    ins[0] = r1, ins[1] = w2;
    pfvm_graph_add_node(g, "Conv", "", "conv2", ins, 2, &y, 1, &st);
    pfvm_graph_add_output(g, y, &st);
    CHECK(pfvm_infer_shapes(g, 0, &st) == PFVM_OK);
    for (i = 0; i < 4; i++) {
        calib[i] = pfvm_tensor_new(PFVM_FLOAT, 4, xd, &st);
        for (k = 0; k < 72; k++)
            ((float *)calib[i]->data)[k] = (float)((int)(rnd() % 2001) - 1000) / 1000.0f;
    }
    probe = calib[1];
    e = pfvm_exec_new(m, g, &st);
    CHECK(e && !pfvm_exec_bind_one(e, probe, &st) && !pfvm_exec_run(e, &st));
    before = e ? pfvm_exec_output(e, 0) : NULL;
    ny = before ? pfvm_tensor_numel(before) : 0;
    ref = (float *)malloc((size_t)(ny + 1) * sizeof *ref);
    for (k = 0; k < ny; k++)
        ref[k] = ((const float *)before->data)[k];
    pfvm_exec_free(e);

    memset(&opt, 0, sizeof opt);
    opt.per_channel = 1;
    CHECK_MSG(pfvm_quantize(m, pfvm_tensors_const(calib), 4, &opt, &rep, &st) == PFVM_OK, "%s", st.msg);
    CHECK(rep.nodes == 3 && rep.weights == 2 && rep.biases == 1);
    /* c1 feeds only the Relu: quantized after it, not before; y is the graph output: float */
    CHECK(rep.activations == 2);
    /* weights and biases leave out the zero point (0 by default): 5 bytes a channel of file */
    for (i = 0; i < pfvm_graph_num_nodes(g); i++)
        if (!strcmp(g->nodes[i]->op_type, "DequantizeLinear") && g->nodes[i]->inputs[0]->init)
            n_wdq += g->nodes[i]->n_inputs == 2;
    CHECK_MSG(n_wdq == 3, "%d of 3 weight/bias DequantizeLinear without zero point", n_wdq);
    CHECK(pfvm_optimize(m, "qlinear,fold,dce", NULL, &st) == PFVM_OK);
    for (i = 0; i < pfvm_graph_num_nodes(g); i++) {
        n_qconv += !strcmp(g->nodes[i]->op_type, "QLinearConv");
        n_conv += !strcmp(g->nodes[i]->op_type, "Conv");
    }
    /* conv1+relu1 becomes QLinearConv (uint8 output with zero point 0
     * clamps like the Relu); conv2 makes the float output, stays Conv */
    CHECK_MSG(n_qconv == 1 && n_conv == 1, "%d QLinearConv, %d Conv", n_qconv, n_conv);
    e = pfvm_exec_new(m, g, &st);
    CHECK(e && !pfvm_exec_bind_one(e, probe, &st) && !pfvm_exec_run(e, &st));
    if (e && ny) {
        const float *got = (const float *)pfvm_exec_output(e, 0)->data;
        double worst = 0, span = 0;
        for (k = 0; k < ny; k++) {
            worst = fabs(got[k] - ref[k]) > worst ? fabs(got[k] - ref[k]) : worst;
            span = fabs(ref[k]) > span ? fabs(ref[k]) : span;
        }
        CHECK_MSG(worst < 0.05 * span, "int8 model off by %g (outputs up to %g)", worst, span);
    }
    pfvm_exec_free(e);
    for (j = 0; j < 4; j++)
        pfvm_tensor_free(calib[j]);
    free(ref);
    pfvm_model_free(m);
}

/* ---- QLinearAveragePool / QLinearGlobalAveragePool against a double reference ---------------- */

typedef struct pool_case {
    int64_t N, C, H, W, KH, KW, sh, sw, pt, pl, pb, pr;
    int global, include_pad, s8;
} pool_case;

static void check_pool(const pool_case *pc)
{
    pfvm_status st;
    pfvm_model *m = pfvm_model_new(&st);
    pfvm_graph *g = pfvm_graph_new(m, NULL, "g", &st);
    pfvm_value *iv[5], *y;
    pfvm_node *n;
    pfvm_exec *e;
    pfvm_tensor *x;
    int64_t xd[4] = {pc->N, pc->C, pc->H, pc->W}, v[4], i, c, oh, ow, h, w, OH, OW, worst = 0, unequal = 0, checked = 0;
    float xs = 0.05f, ys = pc->s8 ? 0.03f : 0.04f;
    int xz = pc->s8 ? -5 : 120, yz = pc->s8 ? 3 : 100, lo = pc->s8 ? -128 : 0, hi = pc->s8 ? 127 : 255;
    pfvm_dtype dt = pc->s8 ? PFVM_INT8 : PFVM_UINT8;
    pfvm_tensor *consts[5];
    pfvm_model_set_opset(m, "", 13, &st);
    pfvm_model_set_opset(m, "com.microsoft", 1, &st);
    x = new_tensor(dt, 4, xd);
    for (i = 0; i < pfvm_tensor_numel(x); i++)
        ((uint8_t *)x->data)[i] = (uint8_t)rnd();
    consts[1] = scalar_f(xs);
    consts[2] = scalar_u8(dt, xz);
    consts[3] = scalar_f(ys);
    consts[4] = scalar_u8(dt, yz);
    for (i = 0; i < 5; i++) {
        char name[16];
        snprintf(name, sizeof name, "x%d", (int)i);
        iv[i] = pfvm_graph_value(g, name, &st);
        if (i == 0) {
            add_typed_input(m, g, iv[i], dt, 4, xd);
        } else
            pfvm_graph_add_init(g, iv[i], pfvm_model_tensor(m, consts[i]->dtype, 0, NULL, consts[i]->data, &st), &st);
    }
    y = pfvm_graph_value(g, "y", &st);
    n = pfvm_graph_add_node(g, pc->global ? "QLinearGlobalAveragePool" : "QLinearAveragePool", "com.microsoft", "pool", iv,
                            5, &y, 1, &st);
    CHECK_MSG(n != NULL, "add node: %s", st.msg);
    pfvm_graph_add_output(g, y, &st);
    if (n && !pc->global) {
        v[0] = pc->KH, v[1] = pc->KW;
        pfvm_node_set_attr_ints(n, "kernel_shape", v, 2, &st);
        v[0] = pc->sh, v[1] = pc->sw;
        pfvm_node_set_attr_ints(n, "strides", v, 2, &st);
        v[0] = pc->pt, v[1] = pc->pl, v[2] = pc->pb, v[3] = pc->pr;
        pfvm_node_set_attr_ints(n, "pads", v, 4, &st);
        pfvm_node_set_attr_int(n, "count_include_pad", pc->include_pad, &st);
    }
    OH = pc->global ? 1 : (pc->H + pc->pt + pc->pb - pc->KH) / pc->sh + 1;
    OW = pc->global ? 1 : (pc->W + pc->pl + pc->pr - pc->KW) / pc->sw + 1;
    e = n && pfvm_infer_shapes(g, 0, &st) == PFVM_OK ? pfvm_exec_new(m, g, &st) : NULL;
    CHECK_MSG(e && !pfvm_exec_bind_one(e, x, &st) && !pfvm_exec_run(e, &st), "pool: %s", st.msg);
    if (e && pfvm_exec_output(e, 0)) {
        const pfvm_tensor *out = pfvm_exec_output(e, 0);
        CHECK(out->dtype == dt && out->dims[2] == OH && out->dims[3] == OW);
        for (i = 0; i < pc->N * pc->C && out->dims[2] == OH && out->dims[3] == OW; i++)
            for (oh = 0; oh < OH; oh++)
                for (ow = 0; ow < OW; ow++) {
                    int64_t kh = pc->global ? pc->H : pc->KH, kw = pc->global ? pc->W : pc->KW, count = 0, got, want;
                    int64_t h0 = pc->global ? 0 : oh * pc->sh - pc->pt, w0 = pc->global ? 0 : ow * pc->sw - pc->pl;
                    double sum = 0, val, r;
                    for (h = h0; h < h0 + kh; h++)
                        for (w = w0; w < w0 + kw; w++) {
                            if (h < 0 || h >= pc->H || w < 0 || w >= pc->W) {
                                count += pc->include_pad;
                                continue;
                            }
                            c = (i * pc->H + h) * pc->W + w;
                            sum += get_q(x, c) - xz;
                            count++;
                        }
                    val = sum * xs / ((double)count * ys);
                    r = floor(val + 0.5) + yz;
                    want = (int64_t)(r < lo ? lo : r > hi ? hi : r);
                    got = get_q(out, (i * OH + oh) * OW + ow);
                    worst = llabs(got - want) > worst ? llabs(got - want) : worst;
                    unequal += got != want && fabs(val - floor(val) - 0.5) > 1e-6;
                    checked++;
                }
        CHECK_MSG(checked == pc->N * pc->C * OH * OW && worst <= 1 && unequal == 0,
                  "pool %lldx%lld g%d: worst %lld, %lld off away from halves", (long long)pc->KH, (long long)pc->KW,
                  pc->global, (long long)worst, (long long)unequal);
    }
    pfvm_exec_free(e);
    pfvm_tensor_free(x);
    for (i = 1; i < 5; i++)
        pfvm_tensor_free(consts[i]);
    pfvm_model_free(m);
}

static void test_qlinear_avgpool(void)
{
    static const pool_case cases[] = {
        /* N  C  H   W  KH KW sh sw pt pl pb pr global pad s8 */
        {1, 4, 25, 5, 25, 5, 25, 5, 0, 0, 0, 0, 0, 0, 0}, /* DS-CNN's pool: the whole plane */
        {2, 3, 7, 7, 1, 1, 1, 1, 0, 0, 0, 0, 1, 0, 0},    /* global, 2 images */
        {1, 3, 8, 9, 2, 2, 2, 2, 0, 0, 0, 0, 0, 0, 1},    /* 2x2 stride 2, int8 */
        {1, 2, 6, 7, 3, 3, 1, 1, 1, 1, 1, 1, 0, 0, 0},    /* padded: edge windows count fewer */
        {1, 2, 6, 7, 3, 3, 2, 1, 1, 1, 1, 1, 0, 1, 1},    /* padded, padding counted */
    };
    size_t i;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_pool(&cases[i]);
}

/* Conv -> Relu -> AveragePool -> Flatten -> Gemm -> Relu -> Gemm, quantized:
 * the qlinear pass makes QLinearConv, QLinearAveragePool and a 1x1
 * QLinearConv between Reshapes of the first Gemm; the last Gemm (a float
 * output) becomes QGemm; the result stays near the float model's. */
static void test_quantize_gemm_pool(void)
{
    pfvm_status st;
    pfvm_model *m = pfvm_model_new(&st);
    pfvm_graph *g = pfvm_graph_new(m, NULL, "g", &st);
    static const char *const names[] = {"x", "w1", "b1", "c1", "r1", "p1", "f1", "w2", "b2", "g2", "r2", "w3", "y"};
    pfvm_value *v[13], *ins[3];
    int64_t xd[4] = {1, 2, 6, 6}, w1d[4] = {4, 2, 3, 3}, b1d = 4, w2d[2] = {5, 36}, b2d = 5, w3d[2] = {3, 5};
    int64_t pads[4] = {1, 1, 1, 1}, ks[2] = {2, 2}, k, ny;
    pfvm_tensor *t, *calib[4];
    pfvm_quant_options opt;
    pfvm_exec *e;
    float ref[3];
    int i, n_qconv = 0, n_pool = 0, n_gemm = 0, n_qgemm = 0;
    pfvm_node *n;
    pfvm_model_set_opset(m, "", 13, &st);
    for (i = 0; i < 13; i++)
        v[i] = pfvm_graph_value(g, names[i], &st);
    add_typed_input(m, g, v[0], PFVM_FLOAT, 4, xd);
#define INIT(idx, rank, dims, scale)                                                        \
    t = pfvm_model_tensor(m, PFVM_FLOAT, rank, dims, NULL, &st);                            \
    for (k = 0; k < pfvm_tensor_numel(t); k++)                                              \
        ((float *)t->data)[k] = (float)((int)(rnd() % 200) - 100) / (scale);                \
    pfvm_graph_add_init(g, v[idx], t, &st)
    INIT(1, 4, w1d, 150.0f);
    INIT(2, 1, &b1d, 500.0f);
    INIT(7, 2, w2d, 300.0f);
    INIT(8, 1, &b2d, 500.0f);
    INIT(11, 2, w3d, 100.0f);
#undef INIT
    ins[0] = v[0], ins[1] = v[1], ins[2] = v[2];
    pfvm_node_set_attr_ints(pfvm_graph_add_node(g, "Conv", "", "conv", ins, 3, &v[3], 1, &st), "pads", pads, 4, &st);
    pfvm_graph_add_node(g, "Relu", "", "relu1", &v[3], 1, &v[4], 1, &st);
    n = pfvm_graph_add_node(g, "AveragePool", "", "pool", &v[4], 1, &v[5], 1, &st);
    pfvm_node_set_attr_ints(n, "kernel_shape", ks, 2, &st);
    pfvm_node_set_attr_ints(n, "strides", ks, 2, &st);
    pfvm_graph_add_node(g, "Flatten", "", "flat", &v[5], 1, &v[6], 1, &st);
    ins[0] = v[6], ins[1] = v[7], ins[2] = v[8];
    pfvm_node_set_attr_int(pfvm_graph_add_node(g, "Gemm", "", "gemm2", ins, 3, &v[9], 1, &st), "transB", 1, &st);
    pfvm_graph_add_node(g, "Relu", "", "relu2", &v[9], 1, &v[10], 1, &st);
    ins[0] = v[10], ins[1] = v[11];
    pfvm_node_set_attr_int(pfvm_graph_add_node(g, "Gemm", "", "gemm3", ins, 2, &v[12], 1, &st), "transB", 1, &st);
    pfvm_graph_add_output(g, v[12], &st);
    CHECK_MSG(pfvm_infer_shapes(g, 0, &st) == PFVM_OK, "%s", st.msg);
    for (i = 0; i < 4; i++) {
        calib[i] = pfvm_tensor_new(PFVM_FLOAT, 4, xd, &st);
        for (k = 0; k < 72; k++)
            ((float *)calib[i]->data)[k] = (float)((int)(rnd() % 2001) - 1000) / 1000.0f;
    }
    e = pfvm_exec_new(m, g, &st);
    CHECK(e && !pfvm_exec_bind_one(e, calib[2], &st) && !pfvm_exec_run(e, &st));
    ny = e && pfvm_exec_output(e, 0) ? pfvm_tensor_numel(pfvm_exec_output(e, 0)) : 0;
    CHECK_MSG(ny == 3, "%lld outputs", (long long)ny);
    for (k = 0; k < ny && k < 3; k++)
        ref[k] = ((const float *)pfvm_exec_output(e, 0)->data)[k];
    pfvm_exec_free(e);
    memset(&opt, 0, sizeof opt);
    opt.per_channel = 1;
    CHECK_MSG(pfvm_quantize(m, pfvm_tensors_const(calib), 4, &opt, NULL, &st) == PFVM_OK, "%s", st.msg);
    CHECK_MSG(pfvm_optimize(m, "qlinear,fold,dce", NULL, &st) == PFVM_OK, "%s", st.msg);
    for (i = 0; i < pfvm_graph_num_nodes(g); i++) {
        n_qconv += !strcmp(g->nodes[i]->op_type, "QLinearConv");
        n_pool += !strcmp(g->nodes[i]->op_type, "QLinearAveragePool");
        n_gemm += !strcmp(g->nodes[i]->op_type, "Gemm");
        n_qgemm += !strcmp(g->nodes[i]->op_type, "QGemm");
    }
    CHECK_MSG(n_qconv == 2 && n_pool == 1 && n_gemm == 0 && n_qgemm == 1,
              "%d QLinearConv, %d QLinearAveragePool, %d Gemm, %d QGemm", n_qconv, n_pool, n_gemm, n_qgemm);
    e = pfvm_exec_new(m, g, &st);
    CHECK_MSG(e && !pfvm_exec_bind_one(e, calib[2], &st) && !pfvm_exec_run(e, &st), "%s", st.msg);
    if (e && pfvm_exec_output(e, 0) && ny == 3) {
        const float *got = (const float *)pfvm_exec_output(e, 0)->data;
        double worst = 0, span = 0;
        for (k = 0; k < 3; k++) {
            worst = fabs(got[k] - ref[k]) > worst ? fabs(got[k] - ref[k]) : worst;
            span = fabs(ref[k]) > span ? fabs(ref[k]) : span;
        }
        CHECK_MSG(worst < 0.1 * span, "int8 model off by %g (outputs up to %g)", worst, span);
    }
    pfvm_exec_free(e);
    for (i = 0; i < 4; i++)
        pfvm_tensor_free(calib[i]);
    pfvm_model_free(m);
}

/* MaxPool and Flatten only move values: under a percentile range (here the
 * median, which differs between a MaxPool's input and output) their outputs
 * still get their input's scale and zero point, so the integer form can
 * run them on the quantized tensor. */
static void test_quantize_shared_params(void)
{
    pfvm_status st;
    pfvm_model *m = pfvm_model_new(&st);
    pfvm_graph *g = pfvm_graph_new(m, NULL, "g", &st);
    const char *names[6] = {"x", "r", "p", "f", "w", "y"};
    pfvm_value *v[6], *ins[2];
    int64_t xd[4] = {1, 1, 4, 4}, wd[2] = {2, 4}, ks[2] = {2, 2}, k;
    pfvm_tensor *t, *calib[2];
    pfvm_quant_options opt;
    pfvm_node *n;
    float scales[3] = {0, 0, 0};
    int i, j;
    pfvm_model_set_opset(m, "", 13, &st);
    for (i = 0; i < 6; i++)
        v[i] = pfvm_graph_value(g, names[i], &st);
    add_typed_input(m, g, v[0], PFVM_FLOAT, 4, xd);
    t = pfvm_model_tensor(m, PFVM_FLOAT, 2, wd, NULL, &st);
    for (k = 0; k < 8; k++)
        ((float *)t->data)[k] = 0.25f * (float)(k - 3);
    pfvm_graph_add_init(g, v[4], t, &st);
    pfvm_graph_add_node(g, "Relu", "", "relu", &v[0], 1, &v[1], 1, &st);
    n = pfvm_graph_add_node(g, "MaxPool", "", "pool", &v[1], 1, &v[2], 1, &st);
    pfvm_node_set_attr_ints(n, "kernel_shape", ks, 2, &st);
    pfvm_node_set_attr_ints(n, "strides", ks, 2, &st);
    pfvm_graph_add_node(g, "Flatten", "", "flat", &v[2], 1, &v[3], 1, &st);
    ins[0] = v[3], ins[1] = v[4];
    pfvm_node_set_attr_int(pfvm_graph_add_node(g, "Gemm", "", "gemm", ins, 2, &v[5], 1, &st), "transB", 1, &st);
    pfvm_graph_add_output(g, v[5], &st);
    CHECK_MSG(pfvm_infer_shapes(g, 0, &st) == PFVM_OK, "%s", st.msg);
    for (i = 0; i < 2; i++) {
        calib[i] = pfvm_tensor_new(PFVM_FLOAT, 4, xd, &st);
        for (k = 0; k < 16; k++) /* 0 .. 1.5 on the first set, up to 3 on the second */
            ((float *)calib[i]->data)[k] = (float)k * 0.1f * (float)(i + 1);
    }
    memset(&opt, 0, sizeof opt);
    opt.per_channel = 1;
    opt.method = PFVM_QUANT_PERCENTILE;
    opt.percentile = 50;
    CHECK_MSG(pfvm_quantize(m, pfvm_tensors_const(calib), 2, &opt, NULL, &st) == PFVM_OK, "%s", st.msg);
    for (i = 0; i < pfvm_graph_num_nodes(g); i++) {
        n = g->nodes[i];
        for (j = 1; j < 4; j++)
            if (!strcmp(n->op_type, "QuantizeLinear") && n->inputs[0] == v[j] && n->inputs[1]->init)
                scales[j - 1] = ((const float *)n->inputs[1]->init->data)[0];
    }
    CHECK_MSG(scales[0] > 0 && scales[1] == scales[0] && scales[2] == scales[0], "Relu %g, MaxPool %g, Flatten %g",
              scales[0], scales[1], scales[2]);
    for (i = 0; i < 2; i++)
        pfvm_tensor_free(calib[i]);
    pfvm_model_free(m);
}

static void test_quantize_errors(void)
{
    pfvm_status st;
    pfvm_model *m = pfvm_model_new(&st);
    pfvm_quant_options opt;
    pfvm_graph_new(m, NULL, "g", &st);
    memset(&opt, 0, sizeof opt);
    pfvm_model_set_opset(m, "", 9, &st);
    CHECK(pfvm_quantize(m, NULL, 0, &opt, NULL, &st) == PFVM_ERR_UNSUPPORTED && strstr(st.msg, "opset 9"));
    pfvm_model_set_opset(m, "", 11, &st);
    opt.per_channel = 1;
    CHECK(pfvm_quantize(m, NULL, 0, &opt, NULL, &st) == PFVM_ERR_UNSUPPORTED && strstr(st.msg, "per-channel"));
    opt.per_channel = 0;
    CHECK(pfvm_quantize(m, NULL, 0, &opt, NULL, &st) == PFVM_ERR_INVALID && strstr(st.msg, "calibration"));
    pfvm_model_free(m);
}

/* One node (op of domain, no attributes but axis) on graph inputs ins
 * (at most 8): the output. */
static pfvm_tensor *run_node_in(const char *domain, const char *op, pfvm_tensor *const *ins, int n_in, pfvm_dtype out_dt)
{
    pfvm_status st;
    pfvm_model *m = pfvm_model_new(&st);
    pfvm_graph *g = pfvm_graph_new(m, NULL, "g", &st);
    pfvm_value *iv[8], *y;
    pfvm_exec *e;
    pfvm_tensor *out = NULL;
    int i;
    pfvm_model_set_opset(m, "", 13, &st);
    if (domain[0])
        pfvm_model_set_opset(m, domain, 1, &st);
    for (i = 0; i < n_in; i++) {
        char name[16];
        snprintf(name, sizeof name, "x%d", i);
        iv[i] = pfvm_graph_value(g, name, &st);
        add_typed_input(m, g, iv[i], ins[i]->dtype, ins[i]->rank, ins[i]->dims);
    }
    y = pfvm_graph_value(g, "y", &st);
    pfvm_node_set_attr_int(pfvm_graph_add_node(g, op, domain, "n", iv, n_in, &y, 1, &st), "axis", 1, &st);
    pfvm_graph_add_output(g, y, &st);
    if (pfvm_infer_shapes(g, 0, &st) == PFVM_OK && (e = pfvm_exec_new(m, g, &st)) != NULL) {
        if (pfvm_exec_bind(e, (const pfvm_tensor *const *)ins, n_in, &st) == PFVM_OK && pfvm_exec_run(e, &st) == PFVM_OK)
            out = pfvm_tensor_clone(pfvm_exec_output(e, 0), &st);
        else
            fprintf(stderr, "run: %s\n", st.msg);
        pfvm_exec_free(e);
    } else
        fprintf(stderr, "setup: %s\n", st.msg);
    pfvm_model_free(m);
    CHECK(out && out->dtype == out_dt);
    return out;
}

static pfvm_tensor *run_node(const char *op, pfvm_tensor *const *ins, int n_in, pfvm_dtype out_dt)
{
    return run_node_in("", op, ins, n_in, out_dt);
}

/* QuantizeLinear and DequantizeLinear: the vectorized runs (AVX2 where
 * the CPU has it) equal the portable C and a scalar reference, on odd
 * lengths, per-channel scales and zero points, halves, NaN and
 * infinities. */
static void test_quantize_vectors(void)
{
    int64_t xd[3] = {2, 3, 37}, cd = 3, i, n = 2 * 3 * 37;
    int t;
    for (t = 0; t < 2; t++) {
        pfvm_dtype qt = t ? PFVM_INT8 : PFVM_UINT8;
        pfvm_tensor *ins[3], *q, *qp, *dq, *dqp;
        int bad = 0;
        ins[0] = new_tensor(PFVM_FLOAT, 3, xd);
        ins[1] = new_tensor(PFVM_FLOAT, 1, &cd);
        ins[2] = new_tensor(qt, 1, &cd);
        for (i = 0; i < cd; i++) {
            ((float *)ins[1]->data)[i] = 0.01f * (float)(1 + rnd() % 50);
            if (t)
                ((int8_t *)ins[2]->data)[i] = (int8_t)((int)(rnd() % 41) - 20);
            else
                ((uint8_t *)ins[2]->data)[i] = (uint8_t)(rnd() % 256);
        }
        for (i = 0; i < n; i++) {
            float sc = ((float *)ins[1]->data)[i / 37 % 3], *x = (float *)ins[0]->data + i;
            switch (rnd() % 6) {
            case 0: *x = ((float)((int)(rnd() % 301) - 150) + 0.5f) * sc; break; /* halves */
            case 1: *x = (float)((int)(rnd() % 2001) - 1000) * 0.37f; break;      /* saturates */
            default: *x = (float)((int)(rnd() % 20001) - 10000) * 1e-3f; break;
            }
        }
        ((float *)ins[0]->data)[5] = NAN;
        ((float *)ins[0]->data)[40] = INFINITY;
        ((float *)ins[0]->data)[41] = -INFINITY;
        q = run_node("QuantizeLinear", ins, 3, qt);
        pfvm_q_force_portable(1);
        qp = run_node("QuantizeLinear", ins, 3, qt);
        pfvm_q_force_portable(0);
        if (!q || !qp)
            return;
        CHECK_MSG(!memcmp(q->data, qp->data, (size_t)n), "QuantizeLinear: fast and portable differ (%s)",
                  t ? "int8" : "uint8");
        for (i = 0; i < n; i++) {
            float v = ((float *)ins[0]->data)[i], sc = ((float *)ins[1]->data)[i / 37 % 3];
            float r = rintf(v / sc) + (float)get_q(ins[2], i / 37 % 3), lo = t ? -128.0f : 0.0f, hi = t ? 127.0f : 255.0f;
            r = r != r ? 0.0f : r < lo ? lo : r > hi ? hi : r;
            bad += get_q(q, i) != (int)r;
        }
        CHECK_MSG(bad == 0, "QuantizeLinear: %d values differ from the reference", bad);
        pfvm_tensor_free(ins[0]);
        ins[0] = q;
        dq = run_node("DequantizeLinear", ins, 3, PFVM_FLOAT);
        pfvm_q_force_portable(1);
        dqp = run_node("DequantizeLinear", ins, 3, PFVM_FLOAT);
        pfvm_q_force_portable(0);
        if (dq && dqp) {
            CHECK(!memcmp(dq->data, dqp->data, (size_t)n * sizeof(float)));
            for (i = 0, bad = 0; i < n; i++)
                bad += ((float *)dq->data)[i] !=
                       (float)(get_q(q, i) - get_q(ins[2], i / 37 % 3)) * ((float *)ins[1]->data)[i / 37 % 3];
            CHECK_MSG(bad == 0, "DequantizeLinear: %d values differ from the reference", bad);
        }
        pfvm_tensor_free(dq);
        pfvm_tensor_free(dqp);
        pfvm_tensor_free(qp);
        for (i = 0; i < 3; i++)
            pfvm_tensor_free(ins[i]);
    }
}

/* ---- QLinearAdd: the fixed point against exact and double references -------------------------- */

/* A scale 10^u, u uniform in [-3, 0]. */
static double rnd_scale(void)
{
    return pow(10.0, -3.0 * (double)(rnd() % 10000) / 10000.0);
}

/* pfvm_q_add_params and pfvm_q_add on random scales, zero points and
 * operands (saturation included): equal to the documented integer formula
 * (rounding half up by long division) and within 1 of the float
 * reference Q(DQ(a) + DQ(b)). */
static void test_qadd_scalar(void)
{
    int i, bad_params = 0, bad_exact = 0, bad_double = 0, saturated = 0;
    int32_t ma, mb;
    int shift;
    for (i = 0; i < 50000; i++) {
        double sa = rnd_scale(), sb = rnd_scale(), sc = rnd_scale(), ra = sa / sc, rb = sb / sc, r;
        int s8 = (int)(rnd() % 2), lo = s8 ? -128 : 0, hi = s8 ? 127 : 255;
        int32_t da = (int32_t)(rnd() % 511) - 255, db = (int32_t)(rnd() % 511) - 255, zc = lo + (int32_t)(rnd() % 256);
        int32_t got, want;
        int64_t big;
        if (!pfvm_q_add_params(ra, rb, &ma, &mb, &shift)) {
            bad_params++;
            continue;
        }
        big = ma > mb ? ma : mb;
        if ((shift < 31 && (big < (1 << 20) || big > (1 << 21))) || fabs(ldexp(ra, shift) - ma) > 0.5 ||
            fabs(ldexp(rb, shift) - mb) > 0.5)
            bad_params++;
        got = pfvm_q_add(da, db, ma, mb, shift, zc, lo, hi);
        want = (int32_t)(zc + ref_shift_up((int64_t)da * ma + (int64_t)db * mb, shift));
        want = want < lo ? lo : want > hi ? hi : want;
        bad_exact += got != want;
        r = rint((sa * da + sb * db) / sc) + zc;
        r = r < lo ? lo : r > hi ? hi : r;
        bad_double += fabs(got - r) > 1;
        saturated += r == lo || r == hi;
    }
    CHECK_MSG(bad_params == 0 && bad_exact == 0 && bad_double == 0,
              "QLinearAdd fixed point: %d bad parameters, %d off the integer formula, %d more than 1 off the float one",
              bad_params, bad_exact, bad_double);
    CHECK_MSG(saturated > 1000, "only %d saturated cases", saturated);
    /* tiny ratios: the shift stops at 31; huge ones are refused */
    CHECK(pfvm_q_add_params(1e-7, 2e-7, &ma, &mb, &shift) && shift == 31 && mb == (int32_t)floor(ldexp(2e-7, 31) + 0.5));
    CHECK(!pfvm_q_add_params(4194304.0, 1.0, &ma, &mb, &shift) && ma == 0);
    CHECK(!pfvm_q_add_params(0.0, 1.0, &ma, &mb, &shift));
    CHECK(pfvm_q_add_params(1048576.0, 1.0, &ma, &mb, &shift) && shift == 0 && ma == 1048576 && mb == 1);
    CHECK(pfvm_q_add(255, 255, 1 << 21, 1 << 21, 0, 0, -128, 127) == 127);
}

static void fill_q(pfvm_tensor *t)
{
    int64_t i;
    for (i = 0; i < pfvm_tensor_numel(t); i++)
        ((uint8_t *)t->data)[i] = (uint8_t)rnd();
}

/* The QLinearAdd kernel (AVX2 where the CPU has it, and the portable C) on
 * odd lengths and broadcasts: equal to pfvm_q_add element by element. */
static void test_qadd_kernel(void)
{
    static const struct {
        int ra, rb;
        int64_t ad[4], bd[4];
        int s8;
    } cases[] = {
        {3, 3, {2, 3, 37}, {2, 3, 37}, 0},   /* odd length: vector blocks and a tail */
        {4, 4, {1, 5, 7, 9}, {1, 5, 7, 9}, 1},
        {3, 2, {2, 3, 37}, {3, 1}, 0},       /* B broadcast along rows */
        {2, 0, {4, 33}, {0}, 1},             /* B a scalar */
        {1, 1, {1}, {53}, 0},                /* A broadcast */
    };
    size_t c;
    for (c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        pfvm_dtype dt = cases[c].s8 ? PFVM_INT8 : PFVM_UINT8;
        int lo = cases[c].s8 ? -128 : 0, hi = cases[c].s8 ? 127 : 255, rep, j;
        for (rep = 0; rep < 3; rep++) {
            pfvm_tensor *ins[8], *fast, *port;
            int32_t ma, mb, za, zb, zc;
            int shift, bad = 0, i;
            double sc = rep == 2 ? 0.001 : rnd_scale(); /* rep 2 saturates */
            ins[0] = new_tensor(dt, cases[c].ra, cases[c].ad);
            ins[3] = new_tensor(dt, cases[c].rb, cases[c].bd);
            fill_q(ins[0]);
            fill_q(ins[3]);
            ins[1] = scalar_f((float)rnd_scale());
            ins[4] = scalar_f((float)rnd_scale());
            ins[6] = scalar_f((float)sc);
            ins[2] = scalar_u8(dt, lo + (int)(rnd() % 256));
            ins[5] = scalar_u8(dt, lo + (int)(rnd() % 256));
            ins[7] = scalar_u8(dt, lo + (int)(rnd() % 256));
            fast = run_node_in("com.microsoft", "QLinearAdd", ins, 8, dt);
            pfvm_q_force_portable(1);
            port = run_node_in("com.microsoft", "QLinearAdd", ins, 8, dt);
            pfvm_q_force_portable(0);
            za = get_q(ins[2], 0), zb = get_q(ins[5], 0), zc = get_q(ins[7], 0);
            CHECK(pfvm_q_add_params((double)*(float *)ins[1]->data / *(float *)ins[6]->data,
                                    (double)*(float *)ins[4]->data / *(float *)ins[6]->data, &ma, &mb, &shift));
            if (fast && port) {
                int64_t n = pfvm_tensor_numel(fast), na = pfvm_tensor_numel(ins[0]), nb = pfvm_tensor_numel(ins[3]);
                /* the cases broadcast one operand over the other's leading rows or as a whole */
                for (i = 0; i < n; i++) {
                    int64_t ia = na == n ? i : nb == n && na > 1 ? i % na : 0, ib = nb == n ? i : i / (n / nb) % nb;
                    int32_t want;
                    if (cases[c].rb == 2) /* [2,3,37] + [3,1] */
                        ib = i / 37 % 3;
                    want = pfvm_q_add(get_q(ins[0], ia) - za, get_q(ins[3], ib) - zb, ma, mb, shift, zc, lo, hi);
                    bad += get_q(fast, i) != want || get_q(port, i) != want;
                }
                CHECK_MSG(bad == 0, "QLinearAdd case %d.%d: %d of %lld elements off", (int)c, rep, bad, (long long)n);
            }
            pfvm_tensor_free(fast);
            pfvm_tensor_free(port);
            for (j = 0; j < 8; j++)
                pfvm_tensor_free(ins[j]);
        }
    }
}

/* DQ(a) + DQ(b) -> Relu -> Q: the qlinear pass makes one QLinearAdd when
 * the output's zero point clamps like the Relu (and leaves the float Add
 * when it does not); the results stay within 1 of the QDQ graph's. */
static void check_qadd_pass(int yz, int want_qadd)
{
    pfvm_status st;
    pfvm_model *m = pfvm_model_new(&st);
    pfvm_graph *g = pfvm_graph_new(m, NULL, "g", &st);
    static const char *const names[] = {"a", "b", "sa", "za", "sb", "zb", "sy", "zy", "da", "db", "s", "r", "y"};
    pfvm_value *v[13], *ins[3];
    int64_t xd[4] = {1, 3, 5, 7};
    pfvm_tensor *in[2], *t;
    pfvm_exec *e;
    uint8_t before[105];
    int i, n_qadd = 0, n_add = 0, worst = 0;
    const float sc[3] = {0.02f, 0.035f, 0.03f};
    const int zp[3] = {128, 100, 0};
    for (i = 0; i < 13; i++)
        v[i] = pfvm_graph_value(g, names[i], &st);
    pfvm_model_set_opset(m, "", 13, &st);
    add_typed_input(m, g, v[0], PFVM_UINT8, 4, xd);
    add_typed_input(m, g, v[1], PFVM_UINT8, 4, xd);
    for (i = 0; i < 3; i++) {
        t = pfvm_model_tensor(m, PFVM_FLOAT, 0, NULL, NULL, &st);
        *(float *)t->data = sc[i];
        pfvm_graph_add_init(g, v[2 + 2 * i], t, &st);
        t = pfvm_model_tensor(m, PFVM_UINT8, 0, NULL, NULL, &st);
        *(uint8_t *)t->data = (uint8_t)(i == 2 ? yz : zp[i]);
        pfvm_graph_add_init(g, v[3 + 2 * i], t, &st);
    }
    for (i = 0; i < 2; i++) {
        ins[0] = v[i], ins[1] = v[2 + 2 * i], ins[2] = v[3 + 2 * i];
        pfvm_graph_add_node(g, "DequantizeLinear", "", i ? "dqb" : "dqa", ins, 3, &v[8 + i], 1, &st);
    }
    pfvm_graph_add_node(g, "Add", "", "add", &v[8], 2, &v[10], 1, &st);
    pfvm_graph_add_node(g, "Relu", "", "relu", &v[10], 1, &v[11], 1, &st);
    ins[0] = v[11], ins[1] = v[6], ins[2] = v[7];
    pfvm_graph_add_node(g, "QuantizeLinear", "", "q", ins, 3, &v[12], 1, &st);
    pfvm_graph_add_output(g, v[12], &st);
    CHECK(pfvm_infer_shapes(g, 0, &st) == PFVM_OK);
    for (i = 0; i < 2; i++) {
        in[i] = new_tensor(PFVM_UINT8, 4, xd);
        fill_q(in[i]);
    }
    e = pfvm_exec_new(m, g, &st);
    CHECK(e && !pfvm_exec_bind(e, pfvm_tensors_const(in), 2, &st) && !pfvm_exec_run(e, &st));
    if (e)
        memcpy(before, pfvm_exec_output(e, 0)->data, sizeof before);
    pfvm_exec_free(e);
    CHECK_MSG(pfvm_optimize(m, "qlinear,fold,dce", NULL, &st) == PFVM_OK, "%s", st.msg);
    for (i = 0; i < pfvm_graph_num_nodes(g); i++) {
        n_qadd += !strcmp(g->nodes[i]->op_type, "QLinearAdd");
        n_add += !strcmp(g->nodes[i]->op_type, "Add");
    }
    CHECK_MSG(n_qadd == want_qadd && n_add == !want_qadd, "zero point %d: %d QLinearAdd, %d Add", yz, n_qadd, n_add);
    e = pfvm_exec_new(m, g, &st);
    CHECK_MSG(e && !pfvm_exec_bind(e, pfvm_tensors_const(in), 2, &st) && !pfvm_exec_run(e, &st), "%s", st.msg);
    for (i = 0; e && i < 105; i++) {
        int d = abs((int)((uint8_t *)pfvm_exec_output(e, 0)->data)[i] - (int)before[i]);
        worst = d > worst ? d : worst;
    }
    CHECK_MSG(e && worst <= 1, "QLinearAdd off the QDQ graph by %d", worst);
    pfvm_exec_free(e);
    pfvm_tensor_free(in[0]);
    pfvm_tensor_free(in[1]);
    pfvm_model_free(m);
}

static void test_qadd_pass(void)
{
    check_qadd_pass(0, 1);
    check_qadd_pass(10, 0);
}

/* One QGemm (transB = 1) on graph inputs ins: the output. */
static pfvm_tensor *run_qgemm(pfvm_tensor *const *ins, int n_in)
{
    pfvm_status st;
    pfvm_model *m = pfvm_model_new(&st);
    pfvm_graph *g = pfvm_graph_new(m, NULL, "g", &st);
    pfvm_value *iv[7], *y;
    pfvm_exec *e;
    pfvm_tensor *out = NULL;
    int i;
    pfvm_model_set_opset(m, "", 13, &st);
    pfvm_model_set_opset(m, "com.microsoft", 1, &st);
    for (i = 0; i < n_in; i++) {
        char name[16];
        snprintf(name, sizeof name, "x%d", i);
        iv[i] = pfvm_graph_value(g, name, &st);
        add_typed_input(m, g, iv[i], ins[i]->dtype, ins[i]->rank, ins[i]->dims);
    }
    y = pfvm_graph_value(g, "y", &st);
    pfvm_node_set_attr_int(pfvm_graph_add_node(g, "QGemm", "com.microsoft", "n", iv, n_in, &y, 1, &st), "transB", 1, &st);
    pfvm_graph_add_output(g, y, &st);
    if (pfvm_infer_shapes(g, 0, &st) == PFVM_OK && (e = pfvm_exec_new(m, g, &st)) != NULL) {
        if (pfvm_exec_bind(e, (const pfvm_tensor *const *)ins, n_in, &st) == PFVM_OK && pfvm_exec_run(e, &st) == PFVM_OK)
            out = pfvm_tensor_clone(pfvm_exec_output(e, 0), &st);
        else
            fprintf(stderr, "run: %s\n", st.msg);
        pfvm_exec_free(e);
    } else
        fprintf(stderr, "setup: %s\n", st.msg);
    pfvm_model_free(m);
    return out;
}

/* QGemm (float output, transB): AVX2 where the CPU has it and the portable
 * C equal the exact int32 sums times a_scale * b_scale[n] in float, on odd
 * K, per-tensor and per-column scales, zero points of both types. */
static void test_qgemm(void)
{
    static const struct {
        int64_t M, K, N;
        int a_s8, b_u8, per_col, bias;
    } cases[] = {
        {1, 1285, 10, 0, 0, 1, 1}, /* mobilenet_v2's classifier, narrower */
        {3, 37, 5, 1, 0, 0, 1},
        {2, 16, 4, 0, 1, 1, 0},
        {1, 7, 3, 1, 1, 0, 0},
    };
    size_t c;
    for (c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        int64_t ad[2] = {cases[c].M, cases[c].K}, bd[2] = {cases[c].N, cases[c].K}, N = cases[c].N, M = cases[c].M;
        int64_t ns = cases[c].per_col ? N : 1, i, n, k;
        pfvm_dtype at = cases[c].a_s8 ? PFVM_INT8 : PFVM_UINT8, bt = cases[c].b_u8 ? PFVM_UINT8 : PFVM_INT8;
        pfvm_tensor *ins[7], *fast, *port;
        int n_in = cases[c].bias ? 7 : 6, bad = 0, j;
        ins[0] = new_tensor(at, 2, ad);
        ins[3] = new_tensor(bt, 2, bd);
        fill_q(ins[0]);
        fill_q(ins[3]);
        ins[1] = scalar_f((float)rnd_scale());
        ins[2] = scalar_u8(at, (int)(rnd() % 256) - (cases[c].a_s8 ? 128 : 0));
        ins[4] = new_tensor(PFVM_FLOAT, 1, &ns);
        ins[5] = new_tensor(bt, 1, &ns);
        for (i = 0; i < ns; i++)
            ((float *)ins[4]->data)[i] = (float)rnd_scale();
        fill_q(ins[5]);
        ins[6] = new_tensor(PFVM_INT32, 1, &N);
        for (i = 0; i < N; i++)
            ((int32_t *)ins[6]->data)[i] = (int32_t)(rnd() % 200001) - 100000;
        fast = run_qgemm(ins, n_in);
        pfvm_q_force_portable(1);
        port = run_qgemm(ins, n_in);
        pfvm_q_force_portable(0);
        if (fast && port) {
            for (i = 0; i < M; i++)
                for (n = 0; n < N; n++) {
                    int64_t s = n % ns;
                    int32_t acc = cases[c].bias ? ((int32_t *)ins[6]->data)[n] : 0;
                    float want;
                    for (k = 0; k < cases[c].K; k++)
                        acc += (get_q(ins[0], i * cases[c].K + k) - get_q(ins[2], 0)) *
                               (get_q(ins[3], n * cases[c].K + k) - get_q(ins[5], s));
                    want = (float)acc * (*(float *)ins[1]->data * ((float *)ins[4]->data)[s]);
                    bad += ((float *)fast->data)[i * N + n] != want || ((float *)port->data)[i * N + n] != want;
                }
            CHECK_MSG(bad == 0, "QGemm case %d: %d outputs off", (int)c, bad);
        } else
            CHECK_MSG(0, "QGemm case %d did not run", (int)c);
        pfvm_tensor_free(fast);
        pfvm_tensor_free(port);
        for (j = 0; j < 7; j++)
            pfvm_tensor_free(ins[j]);
    }
}

/* ---- calibration methods, sensitivity report and auto_exclude ------------------------------- */

/* x [1,2,6,6] -> Conv(w1, b1, pads 1) -> Relu -> Conv(w2) -> y */
static pfvm_model *small_conv_model(pfvm_status *st)
{
    pfvm_model *m = pfvm_model_new(st);
    pfvm_graph *g = pfvm_graph_new(m, NULL, "g", st);
    pfvm_value *x = pfvm_graph_value(g, "x", st), *w1 = pfvm_graph_value(g, "w1", st);
    pfvm_value *b1 = pfvm_graph_value(g, "b1", st), *c1 = pfvm_graph_value(g, "c1", st);
    pfvm_value *r1 = pfvm_graph_value(g, "r1", st), *w2 = pfvm_graph_value(g, "w2", st);
    pfvm_value *y = pfvm_graph_value(g, "y", st), *ins[3];
    int64_t xd[4] = {1, 2, 6, 6}, w1d[4] = {4, 2, 3, 3}, w2d[4] = {3, 4, 1, 1}, bd = 4, pads[4] = {1, 1, 1, 1}, k;
    pfvm_tensor *t;
    uint32_t seed = 7;
    pfvm_model_set_opset(m, "", 13, st);
    add_typed_input(m, g, x, PFVM_FLOAT, 4, xd);
    t = pfvm_model_tensor(m, PFVM_FLOAT, 4, w1d, NULL, st);
    for (k = 0; k < pfvm_tensor_numel(t); k++)
        ((float *)t->data)[k] = (float)((int)((seed = seed * 1103515245u + 12345u) >> 16) % 200 - 100) / 150.0f;
    pfvm_graph_add_init(g, w1, t, st);
    t = pfvm_model_tensor(m, PFVM_FLOAT, 1, &bd, NULL, st);
    for (k = 0; k < 4; k++)
        ((float *)t->data)[k] = 0.1f * (float)k - 0.15f;
    pfvm_graph_add_init(g, b1, t, st);
    t = pfvm_model_tensor(m, PFVM_FLOAT, 4, w2d, NULL, st);
    for (k = 0; k < pfvm_tensor_numel(t); k++)
        ((float *)t->data)[k] = (float)((int)((seed = seed * 1103515245u + 12345u) >> 16) % 200 - 100) / 100.0f;
    pfvm_graph_add_init(g, w2, t, st);
    ins[0] = x, ins[1] = w1, ins[2] = b1;
    pfvm_node_set_attr_ints(pfvm_graph_add_node(g, "Conv", "", "conv1", ins, 3, &c1, 1, st), "pads", pads, 4, st);
    pfvm_graph_add_node(g, "Relu", "", "relu1", &c1, 1, &r1, 1, st);
    ins[0] = r1, ins[1] = w2;
    pfvm_graph_add_node(g, "Conv", "", "conv2", ins, 2, &y, 1, st);
    pfvm_graph_add_output(g, y, st);
    return pfvm_infer_shapes(g, 0, st) == PFVM_OK ? m : NULL;
}

/* x [1,1,512,512] -> Relu -> y (x is quantized) */
static pfvm_model *relu_model(pfvm_status *st)
{
    pfvm_model *m = pfvm_model_new(st);
    pfvm_graph *g = pfvm_graph_new(m, NULL, "g", st);
    pfvm_value *x = pfvm_graph_value(g, "x", st), *y = pfvm_graph_value(g, "y", st);
    int64_t xd[4] = {1, 1, 512, 512};
    pfvm_model_set_opset(m, "", 13, st);
    add_typed_input(m, g, x, PFVM_FLOAT, 4, xd);
    pfvm_graph_add_node(g, "Relu", "", "relu", &x, 1, &y, 1, st);
    pfvm_graph_add_output(g, y, st);
    return pfvm_infer_shapes(g, 0, st) == PFVM_OK ? m : NULL;
}

/* calibration sets of a long-tailed input (u^5 * 10, u uniform in [-1, 1]) */
static void outlier_sets(pfvm_tensor **calib, int n)
{
    int64_t xd[4] = {1, 2, 6, 6}, k;
    pfvm_status st;
    uint32_t seed = 11; /* its own sequence: the other tests' rnd() draws stay as they were */
    int i;
    for (i = 0; i < n; i++) {
        calib[i] = pfvm_tensor_new(PFVM_FLOAT, 4, xd, &st);
        for (k = 0; k < 72; k++) {
            double u = (double)((int)(((seed = seed * 1103515245u + 12345u) >> 16) % 2001) - 1000) / 1000.0;
            ((float *)calib[i]->data)[k] = (float)(u * u * u * u * u * 10.0); /* most near 0, a tail to 10 */
        }
    }
}

static float input_scale(pfvm_model *m)
{
    int i;
    for (i = 0; i < pfvm_graph_num_nodes(m->graph); i++) {
        const pfvm_node *n = m->graph->nodes[i];
        if (!strcmp(n->op_type, "QuantizeLinear") && !strcmp(n->inputs[0]->name, "x") && n->inputs[1]->init)
            return ((const float *)n->inputs[1]->init->data)[0];
    }
    return -1.0f;
}

typedef struct log_lines {
    int n, excluded;
} log_lines;

static void count_log(void *ctx, const char *line)
{
    log_lines *l = (log_lines *)ctx;
    l->n++;
    l->excluded += !strncmp(line, "auto-exclude: ", 14);
}

static void test_quantize_mse_auto_exclude(void)
{
    pfvm_status st;
    pfvm_tensor *calib[8], *big[4];
    pfvm_quant_options opt;
    pfvm_quant_report rep, rep0;
    pfvm_model *m;
    log_lines lines;
    float s_minmax, s_mse;
    int i, n_q = 0;
    outlier_sets(calib, 8);
    /* a million values within [-1, 1] and one at 100: min/max spans it (101 / 255); the MSE range gives it up
     * for the bulk's resolution (a finer grid saves more squared error over the million than the clipped
     * value costs: MSE keeps about 42); the small sets keep nearly all of their tail */
    for (i = 0; i < 4; i++) {
        int64_t d[4] = {1, 1, 512, 512}, k;
        uint32_t seed = 5;
        big[i] = pfvm_tensor_new(PFVM_FLOAT, 4, d, &st);
        for (k = 0; k < 512 * 512; k++)
            ((float *)big[i]->data)[k] = (float)((int)(((seed = seed * 1103515245u + 12345u) >> 16) % 2001) - 1000) / 1000.0f;
    }
    ((float *)big[2]->data)[77] = 100.0f;
    memset(&opt, 0, sizeof opt);
    m = relu_model(&st);
    CHECK_MSG(m && pfvm_quantize(m, pfvm_tensors_const(big), 4, &opt, NULL, &st) == PFVM_OK, "%s", st.msg);
    s_minmax = input_scale(m);
    pfvm_model_free(m);
    opt.method = PFVM_QUANT_MSE;
    m = relu_model(&st);
    CHECK_MSG(m && pfvm_quantize(m, pfvm_tensors_const(big), 4, &opt, NULL, &st) == PFVM_OK, "%s", st.msg);
    s_mse = input_scale(m);
    pfvm_model_free(m);
    CHECK_MSG(s_minmax > 100.9f / 255 && s_minmax < 101.1f / 255, "min/max scale %g", s_minmax);
    CHECK_MSG(s_mse > 1.9f / 255 && s_mse < 0.5f * s_minmax, "MSE scale %g (min/max %g)", s_mse, s_minmax);
    opt.symmetric = 1;
    m = relu_model(&st);
    CHECK_MSG(m && pfvm_quantize(m, pfvm_tensors_const(big), 4, &opt, NULL, &st) == PFVM_OK, "%s", st.msg);
    CHECK_MSG(input_scale(m) > 0.9f / 127 && input_scale(m) < 0.5f * 100 / 127, "symmetric MSE scale %g",
              input_scale(m));
    pfvm_model_free(m);
    for (i = 0; i < 4; i++)
        pfvm_tensor_free(big[i]);
    opt.symmetric = 0;
    m = small_conv_model(&st);
    CHECK_MSG(m && pfvm_quantize(m, pfvm_tensors_const(calib), 8, &opt, NULL, &st) == PFVM_OK, "%s", st.msg);
    CHECK_MSG(input_scale(m) > 0.5f * 20.0f / 255 && input_scale(m) <= 20.1f / 255, "long tail, MSE scale %g",
              input_scale(m));
    pfvm_model_free(m);

    /* the report alone: every activation a line, nothing left float */
    memset(&opt, 0, sizeof opt);
    memset(&lines, 0, sizeof lines);
    opt.log = count_log;
    opt.log_ctx = &lines;
    m = small_conv_model(&st);
    CHECK_MSG(m && pfvm_quantize(m, pfvm_tensors_const(calib), 8, &opt, &rep0, &st) == PFVM_OK, "%s", st.msg);
    CHECK_MSG(rep0.excluded == 0 && rep0.activations == 2 && lines.n == 4, "%d excluded, %d lines", rep0.excluded,
              lines.n);
    CHECK_MSG(rep0.out_sqnr_db > 0 && rep0.out_sqnr_db < 100, "outputs %g dB", rep0.out_sqnr_db);
    pfvm_model_free(m);
    /* auto_exclude 1: the activation that costs the outputs most stays float */
    memset(&lines, 0, sizeof lines);
    opt.auto_exclude = 1;
    m = small_conv_model(&st);
    CHECK_MSG(m && pfvm_quantize(m, pfvm_tensors_const(calib), 8, &opt, &rep, &st) == PFVM_OK, "%s", st.msg);
    CHECK_MSG(rep.excluded == 1 && rep.activations == 1 && lines.excluded == 1, "%d excluded, %d lines", rep.excluded,
              lines.excluded);
    CHECK_MSG(rep.out_sqnr_db > rep0.out_sqnr_db + 3, "outputs %g dB, all quantized %g", rep.out_sqnr_db,
              rep0.out_sqnr_db);
    /* its pair is dead: dce drops it, the model runs and saves as before */
    CHECK(pfvm_optimize(m, "dce", NULL, &st) == PFVM_OK);
    for (i = 0; i < pfvm_graph_num_nodes(m->graph); i++)
        n_q += !strcmp(m->graph->nodes[i]->op_type, "QuantizeLinear");
    CHECK_MSG(n_q == 1, "%d QuantizeLinear left", n_q);
    CHECK(pfvm_graph_verify(m->graph, &st) == PFVM_OK);
    pfvm_model_free(m);
    for (i = 0; i < 8; i++)
        pfvm_tensor_free(calib[i]);
}

/* The direct path's two tiles (pfvm_q_force_direct_tile, compared in
 * check_conv) on the shapes where the channel tile is taken by itself
 * and on edge cases. Run last: its random draws would change the others'. */
static void test_qlinear_conv_direct_tiles(void)
{
    static const conv_case cases[] = {
        /* N  C  H   W   M  KH KW g  sh sw pt pl pb pr dh dw pc y8 bias extreme wz0 */
        {1, 64, 7, 7, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 0, 1},   /* resnet18's 7x7, per channel */
        {2, 20, 14, 14, 40, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 0, 1}, /* 14x14, 40 rows: 32 and 8 */
        {1, 13, 9, 11, 17, 3, 3, 1, 1, 1, 0, 1, 2, 0, 1, 1, 1, 0, 0, 0, 1},  /* odd sizes, C % 4, 17 rows */
        {1, 24, 3, 3, 48, 3, 3, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 0, 1, 0, 1},   /* one output position */
        {1, 16, 13, 13, 33, 3, 3, 1, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1}, /* stride 2: 7x7 out, 33 rows */
        {1, 8, 6, 9, 16, 5, 5, 1, 1, 1, 2, 2, 2, 2, 2, 1, 1, 0, 1, 0, 1},    /* 5x5 dilated rows, 16 rows */
        {1, 32, 5, 5, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1},   /* at the extremes (int32 wrap) */
        {1, 3, 20, 37, 9, 7, 7, 1, 2, 2, 3, 3, 3, 3, 1, 1, 1, 0, 1, 0, 1},   /* 7x7/2 stem, 9 rows */
        /* the phase planes' rows at strides over 1 (64 positions a step) */
        {1, 8, 9, 150, 8, 3, 3, 1, 2, 2, 1, 2, 0, 1, 1, 1, 1, 0, 1, 0, 1},   /* stride 2, 76 positions a row */
        {1, 12, 20, 31, 10, 3, 3, 1, 3, 3, 2, 0, 1, 2, 2, 2, 1, 1, 1, 0, 1}, /* stride 3, dilated, uneven pads */
    };
    size_t i;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_conv(&cases[i]);
}

int main(void)
{
    printf("int8 GEMM kernel: %s\n", pfvm_q_vnni()              ? "AVX-512 VNNI (AVX2 kept for the rest)"
                                      : pfvm_q_gemm_kind() == 2 ? "AVX2"
                                                                : "portable C");
    test_multiplier();
    test_scale_exact();
    test_scale_double();
    test_requantize();
    test_scale_hi();
    test_qlinear_conv();
    test_qlinear_avgpool();
    test_quantize_model();
    test_quantize_mse_auto_exclude();
    test_quantize_gemm_pool();
    test_quantize_shared_params();
    test_quantize_errors();
    test_qlinear_gemv();
    test_quantize_vectors();
    test_qadd_scalar();
    test_qadd_kernel();
    test_qadd_pass();
    test_qgemm();
    test_qlinear_conv_wide();
    test_qlinear_conv_direct_tiles();
    return CHECK_END();
}
