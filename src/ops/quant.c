/* ops/quant: linear quantization — QuantizeLinear, DequantizeLinear,
 * DynamicQuantizeLinear, MatMulInteger, ConvInteger, QLinearMatMul,
 * QLinearConv.
 *
 * Quantized values are uint8 or int8 (zero point's type, uint8 by default);
 * rounding is half to even and results saturate, as the spec says. Scales
 * and zero points are per tensor, or per slice along `axis` when 1-D. */
#include "ops_common.h"
#include "quant.h"

#include <math.h>

/* x86 with run-time dispatch: the AVX2 paths of the int8 kernels, taken
 * when the CPU has AVX2 and pfvm_q_gemm_kind() says 2 (the tests force
 * the portable C to compare). */
#if defined(PFVM_DISPATCH_CLONES)
#include <immintrin.h>
#define PFVM__QG_AVX2 1
static int pfvm__qg_have_avx2(void)
{
    static int ok = -1;
    if (ok < 0) {
        __builtin_cpu_init();
        ok = __builtin_cpu_supports("avx2") != 0;
    }
    return ok;
}

/* AVX-512 VNNI (with VL: its 256-bit form): vpdpbusd adds four u8 x s8
 * products to an int32 lane exactly (no int16 step that could saturate),
 * 32 multiply-adds per instruction where vpmaddwd does 16. */
static int pfvm__qv_have(void)
{
    static int ok = -1;
    if (ok < 0) {
        __builtin_cpu_init();
        ok = __builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("avx512vl");
    }
    return ok;
}

/* The 8x32 VNNI tile's zmm registers and the im2col rows' byte masks
 * (AVX-512 F and BW with the above). */
static int pfvm__qv_have512(void)
{
    static int ok = -1;
    if (ok < 0) {
        __builtin_cpu_init();
        ok = pfvm__qv_have() && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw");
    }
    return ok;
}
#endif

static double pfvm__q_round(double v)
{
    double r = floor(v + 0.5);
    if (r - v == 0.5 && fmod(r, 2.0) != 0)
        r -= 1.0;
    return r;
}

/* Parameter of element i: scalar, or indexed by its coordinate on axis. */
static double pfvm__q_param(const pfvm_tensor *p, int64_t i, int64_t inner, int64_t axis_len, double def)
{
    int64_t n;
    if (!p)
        return def;
    n = pfvm_tensor_numel(p);
    if (n <= 1)
        return n ? pfvm_tensor_get_f64(p, 0) : def;
    return pfvm_tensor_get_f64(p, (i / inner) % axis_len);
}

/* Inner size and length of the quantization axis for x. */
static void pfvm__q_axis(const pfvm_node *n, const pfvm_tensor *x, int64_t *inner, int64_t *len)
{
    int a = pfvm__axis(pfvm_node_attr_int(n, "axis", 1), x->rank > 0 ? x->rank : 1), d;
    *inner = 1;
    *len = a >= 0 && a < x->rank ? x->dims[a] : 1;
    for (d = a + 1; d < x->rank; d++)
        *inner *= x->dims[d];
}

/* Input j (a scale or zero point), when present and of known rank, is a
 * scalar, a 1-element vector or, when `per` is given, a 1-D [per]. */
static pfvm_code pfvm__q_check_zp(pfvm_ictx *c, int j, const pfvm_sym *per, const char *what)
{
    const pfvm_ival *v = j < c->n_in ? c->in[j] : NULL;
    const pfvm_shape *s;
    if (!v || v->type.kind != PFVM_KIND_TENSOR || v->type.shape.rank < 0)
        return PFVM_OK;
    s = &v->type.shape;
    if (s->rank > 1)
        return pfvm__fail(c->st, PFVM_ERR_SHAPE, "%s must be a scalar or 1-D, not rank %d", what, s->rank);
    if (s->rank == 1 && !pfvm_sym_is_const(s->dims[0], NULL))
        return PFVM_OK;
    if (s->rank == 1 && s->dims[0]->value != 1 && !per)
        return pfvm__fail(c->st, PFVM_ERR_SHAPE, "%s must have one element, not %lld", what, (long long)s->dims[0]->value);
    if (s->rank == 1 && s->dims[0]->value != 1)
        return pfvm_infer_check_eq(c, s->dims[0], per, what);
    return PFVM_OK;
}

/* x, its scale (input 1) and zero point (input 2): per tensor (scalar
 * scale) or, from opset 13, per axis (1-D scale of x's size along
 * `axis`); the zero point has the scale's shape. Blocked quantization
 * (block_size, opset 21) is left to the kernel. */
static pfvm_code pfvm__q_check_params(pfvm_ictx *c, const char *scale, const char *zp)
{
    const pfvm_shape *x = &c->in[0]->type.shape, *sc = &c->in[1]->type.shape;
    const pfvm_sym *per = NULL;
    char what[64];
    if (pfvm_node_attr_int(c->node, "block_size", 0))
        return PFVM_OK;
    if (sc->rank == 1 && x->rank >= 0 && c->node->opset >= 13) {
        int ax = pfvm__axis(pfvm_node_attr_int(c->node, "axis", 1), x->rank);
        if (ax < 0)
            return pfvm__fail(c->st, PFVM_ERR_INVALID, "axis %lld is out of range for rank %d",
                              (long long)pfvm_node_attr_int(c->node, "axis", 1), x->rank);
        per = x->dims[ax];
    }
    if (pfvm__q_check_zp(c, 1, per, scale) || pfvm__q_check_zp(c, 2, per, zp))
        return c->st ? c->st->code : PFVM_ERR_SHAPE;
    snprintf(what, sizeof what, "the sizes of %s and %s", scale, zp);
    if (c->n_in > 2 && c->in[2] && sc->rank >= 0 && c->in[2]->type.shape.rank >= 0 &&
        (sc->rank != c->in[2]->type.shape.rank ||
         (sc->rank == 1 && pfvm_infer_check_eq(c, sc->dims[0], c->in[2]->type.shape.dims[0], what))))
        return pfvm__fail(c->st, PFVM_ERR_SHAPE, "%s must have %s's shape", zp, scale);
    return PFVM_OK;
}

static pfvm_code pfvm__q_infer_quantize(pfvm_ictx *c)
{
    pfvm_dtype dt = c->n_in > 2 && c->in[2] ? c->in[2]->type.dtype : PFVM_UINT8;
    if (pfvm__q_check_params(c, "y_scale", "y_zero_point"))
        return c->st ? c->st->code : PFVM_ERR_SHAPE;
    pfvm_ival_set_tensor(c->out[0], dt, &c->in[0]->type.shape);
    return PFVM_OK;
}

/* Quantize/Dequantize fast path: float32 and 8-bit data, a per-tensor or
 * per-axis float32 scale; 1 when the tensors are such, with the channel
 * count of the parameters in *np. */
static int pfvm__q_simple(const pfvm_kctx *k, const pfvm_tensor *q8, int64_t len, int64_t *np)
{
    const pfvm_tensor *s = k->in[1], *z = k->n_in > 2 ? k->in[2] : NULL;
    int64_t ns = pfvm_tensor_numel(s);
    *np = ns;
    return q8 && (q8->dtype == PFVM_UINT8 || q8->dtype == PFVM_INT8) && s->dtype == PFVM_FLOAT && s->data &&
           (ns == 1 || ns == len) && (!z || (z->dtype == q8->dtype && pfvm_tensor_numel(z) == ns && z->data)) &&
           !pfvm_node_attr_int(k->node, "block_size", 0);
}

/* One run of QuantizeLinear: float32 division and half-to-even rounding,
 * as the reference (vectorized in the dispatched clones: the same IEEE
 * operations). */
#define PFVM__Q_QUANTIZE_RUN(T, LO, HI)                      \
    {                                                        \
        int64_t c;                                           \
        for (c = 0; c < n; c++) {                            \
            float v = rintf(x[c] / sc) + zp;                 \
            v = v < (LO) ? (LO) : v > (HI) ? (HI) : v;       \
            y[c] = (T)(v == v ? v : 0);                      \
        }                                                    \
    }
PFVM_DISPATCH static void pfvm__q_quantize_u8(const float *x, int64_t n, float sc, float zp, uint8_t *y)
PFVM__Q_QUANTIZE_RUN(uint8_t, 0.0f, 255.0f)
PFVM_DISPATCH static void pfvm__q_quantize_s8(const float *x, int64_t n, float sc, float zp, int8_t *y)
PFVM__Q_QUANTIZE_RUN(int8_t, -128.0f, 127.0f)
#undef PFVM__Q_QUANTIZE_RUN

/* One run of DequantizeLinear: x - zp is exact in float, so the one
 * rounding of the product is the double product's (no soft-double on
 * Cortex-M4F). */
PFVM_DISPATCH static void pfvm__q_dequantize_u8(const uint8_t *x, int64_t n, int32_t zp, float sc, float *y)
{
    int64_t c;
    for (c = 0; c < n; c++)
        y[c] = (float)(x[c] - zp) * sc;
}

PFVM_DISPATCH static void pfvm__q_dequantize_s8(const int8_t *x, int64_t n, int32_t zp, float sc, float *y)
{
    int64_t c;
    for (c = 0; c < n; c++)
        y[c] = (float)(x[c] - zp) * sc;
}

#ifdef PFVM__QG_AVX2
/* QuantizeLinear's run 8 at a time: the same IEEE division and
 * round-to-nearest-even (VROUNDPS is rintf in the default mode), NaN to
 * 0 before the clamp (MAXPS would turn it into the low bound), then
 * exact conversion and packing of values already in range. Returns how
 * many it wrote (a multiple of 8). */
__attribute__((target("avx2"))) static int64_t pfvm__q_quantize_avx2(const float *x, int64_t n, float sc, float zp,
                                                                      void *y, int u8)
{
    const __m256 vs = _mm256_set1_ps(sc), vz = _mm256_set1_ps(zp);
    const __m256 lo = _mm256_set1_ps(u8 ? 0.0f : -128.0f), hi = _mm256_set1_ps(u8 ? 255.0f : 127.0f);
    int64_t c;
    for (c = 0; c + 8 <= n; c += 8) {
        __m256 v = _mm256_div_ps(_mm256_loadu_ps(x + c), vs);
        __m128i q, p;
        v = _mm256_add_ps(_mm256_round_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), vz);
        v = _mm256_and_ps(v, _mm256_cmp_ps(v, v, _CMP_ORD_Q));
        v = _mm256_min_ps(_mm256_max_ps(v, lo), hi);
        q = _mm_packs_epi32(_mm256_castsi256_si128(_mm256_cvtps_epi32(v)), _mm256_extracti128_si256(_mm256_cvtps_epi32(v), 1));
        p = u8 ? _mm_packus_epi16(q, q) : _mm_packs_epi16(q, q);
        _mm_storel_epi64((__m128i *)(void *)((char *)y + c), p);
    }
    return c;
}

/* DequantizeLinear's run 8 at a time: (float)(x - zp) * sc, the same
 * exact conversion and one rounding of the product. */
__attribute__((target("avx2"))) static int64_t pfvm__q_dequantize_avx2(const void *x, int64_t n, int32_t zp, float sc,
                                                                        float *y, int u8)
{
    const __m256 vs = _mm256_set1_ps(sc);
    const __m256i vz = _mm256_set1_epi32(zp);
    int64_t c;
    for (c = 0; c + 8 <= n; c += 8) {
        __m128i b = _mm_loadl_epi64((const __m128i *)(const void *)((const char *)x + c));
        __m256i v = u8 ? _mm256_cvtepu8_epi32(b) : _mm256_cvtepi8_epi32(b);
        _mm256_storeu_ps(y + c, _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(v, vz)), vs));
    }
    return c;
}
#endif

static pfvm_code pfvm__q_quantize_f32(pfvm_kctx *k, int64_t inner, int64_t len, int64_t np)
{
    const float *x = (const float *)k->in[0]->data, *s = (const float *)k->in[1]->data;
    const pfvm_tensor *z = k->n_in > 2 ? k->in[2] : NULL;
    pfvm_tensor *y = k->out[0];
    int u8 = y->dtype == PFVM_UINT8;
    int64_t n = pfvm_tensor_numel(k->in[0]), i = 0;
    while (i < n) {
        int64_t ch = np == 1 ? 0 : (i / inner) % len, end = np == 1 ? n : i + inner;
        float sc = s[ch], zp = z ? (float)(u8 ? ((const uint8_t *)z->data)[ch] : ((const int8_t *)z->data)[ch]) : 0.0f;
        if (sc == 0)
            return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "scale is 0");
#ifdef PFVM__QG_AVX2
        if (pfvm_q_gemm_kind() == 2)
            i += pfvm__q_quantize_avx2(x + i, end - i, sc, zp, (char *)y->data + i, u8);
#endif
        if (u8)
            pfvm__q_quantize_u8(x + i, end - i, sc, zp, (uint8_t *)y->data + i);
        else
            pfvm__q_quantize_s8(x + i, end - i, sc, zp, (int8_t *)y->data + i);
        i = end;
    }
    return PFVM_OK;
}

static void pfvm__q_dequantize_8(pfvm_kctx *k, int64_t inner, int64_t len, int64_t np)
{
    const pfvm_tensor *x = k->in[0], *z = k->n_in > 2 ? k->in[2] : NULL;
    const float *s = (const float *)k->in[1]->data;
    float *y = (float *)k->out[0]->data;
    int u8 = x->dtype == PFVM_UINT8;
    int64_t n = pfvm_tensor_numel(x), i = 0;
    while (i < n) {
        int64_t ch = np == 1 ? 0 : (i / inner) % len, end = np == 1 ? n : i + inner;
        float sc = s[ch];
        int32_t zp = z ? (u8 ? ((const uint8_t *)z->data)[ch] : ((const int8_t *)z->data)[ch]) : 0;
#ifdef PFVM__QG_AVX2
        if (pfvm_q_gemm_kind() == 2)
            i += pfvm__q_dequantize_avx2((const char *)x->data + i, end - i, zp, sc, y + i, u8);
#endif
        if (u8)
            pfvm__q_dequantize_u8((const uint8_t *)x->data + i, end - i, zp, sc, y + i);
        else
            pfvm__q_dequantize_s8((const int8_t *)x->data + i, end - i, zp, sc, y + i);
        i = end;
    }
}

static pfvm_code pfvm__q_k_quantize(pfvm_kctx *k)
{
    const pfvm_tensor *x = k->in[0], *s = k->in[1], *z = k->n_in > 2 ? k->in[2] : NULL;
    int64_t i, n = pfvm_tensor_numel(x), inner, len, np;
    pfvm__q_axis(k->node, x, &inner, &len);
    if (x->dtype == PFVM_FLOAT && x->data && pfvm__q_simple(k, k->out[0], len, &np))
        return pfvm__q_quantize_f32(k, inner, len, np);
    for (i = 0; i < n; i++) {
        double sc = pfvm__q_param(s, i, inner, len, 1), zp = pfvm__q_param(z, i, inner, len, 0);
        if (sc == 0)
            return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "scale is 0");
        /* float32 division, as the reference, so that halves round alike */
        double q = x->dtype == PFVM_FLOAT ? (double)((float)pfvm_tensor_get_f64(x, i) / (float)sc) : pfvm_tensor_get_f64(x, i) / sc;
        pfvm_red_store(k->out[0], i, pfvm__q_round(q) + zp);
    }
    return PFVM_OK;
}

static pfvm_code pfvm__q_infer_dequantize(pfvm_ictx *c)
{
    if (pfvm__q_check_params(c, "x_scale", "x_zero_point"))
        return c->st ? c->st->code : PFVM_ERR_SHAPE;
    pfvm_ival_set_tensor(c->out[0], c->in[1]->type.dtype ? c->in[1]->type.dtype : PFVM_FLOAT, &c->in[0]->type.shape);
    return PFVM_OK;
}

static pfvm_code pfvm__q_k_dequantize(pfvm_kctx *k)
{
    const pfvm_tensor *x = k->in[0], *s = k->in[1], *z = k->n_in > 2 ? k->in[2] : NULL;
    int64_t i, n = pfvm_tensor_numel(x), inner, len, np;
    /* the output has the scale's type: float, double, float16 or bfloat16
     * (another type from a malformed model must not be written as float) */
    if (!pfvm_dtype_is_float(k->out[0]->dtype))
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_UNSUPPORTED, "output type %s (the scale's) is not a float type",
                             pfvm_dtype_name(k->out[0]->dtype));
    pfvm__q_axis(k->node, x, &inner, &len);
    if (k->out[0]->dtype == PFVM_FLOAT && x->data && pfvm__q_simple(k, x, len, &np)) {
        pfvm__q_dequantize_8(k, inner, len, np);
        return PFVM_OK;
    }
    for (i = 0; i < n; i++) {
        double v = (pfvm_tensor_get_f64(x, i) - pfvm__q_param(z, i, inner, len, 0)) * pfvm__q_param(s, i, inner, len, 1);
        if (k->out[0]->dtype == PFVM_DOUBLE)
            ((double *)k->out[0]->data)[i] = v;
        else if (k->out[0]->dtype == PFVM_FLOAT)
            ((float *)k->out[0]->data)[i] = (float)v;
        else
            pfvm_red_store(k->out[0], i, v);
    }
    return PFVM_OK;
}

static pfvm_code pfvm__q_infer_dynamic(pfvm_ictx *c)
{
    pfvm_shape scalar;
    pfvm_dtype dt = c->in[0]->type.dtype;
    if (dt != PFVM_UNDEFINED && !pfvm_dtype_is_float(dt))
        return pfvm__fail(c->st, PFVM_ERR_INVALID, "x must be float, not %s", pfvm_dtype_name(dt));
    scalar.rank = 0;
    pfvm_ival_set_tensor(c->out[0], PFVM_UINT8, &c->in[0]->type.shape);
    pfvm_ival_set_tensor(c->out[1], PFVM_FLOAT, &scalar);
    pfvm_ival_set_tensor(c->out[2], PFVM_UINT8, &scalar);
    return PFVM_OK;
}

static pfvm_code pfvm__q_k_dynamic(pfvm_kctx *k)
{
    const pfvm_tensor *x = k->in[0];
    int64_t i, n = pfvm_tensor_numel(x);
    double lo = 0, hi = 0, zp;
    float scale; /* the reference computes in float32: so do we, for equal rounding */
    for (i = 0; i < n; i++) {
        double v = pfvm_tensor_get_f64(x, i);
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
    }
    /* an infinite x makes the scale infinite and the zero point NaN,
     * which has no uint8 value */
    if (!isfinite((float)hi - (float)lo))
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "x holds an infinite value (or a range past float): no finite scale");
    scale = (float)((float)hi - (float)lo) / 255.0f;
    zp = scale != 0 ? pfvm__q_round((float)(0.0f - (float)lo / scale)) : 0;
    zp = zp < 0 ? 0 : zp > 255 ? 255 : zp;
    *(float *)k->out[1]->data = scale;
    *(uint8_t *)k->out[2]->data = (uint8_t)zp;
    for (i = 0; i < n; i++)
        pfvm_red_store(k->out[0], i, scale != 0 ? pfvm__q_round((float)pfvm_tensor_get_f64(x, i) / scale) + zp : zp);
    return PFVM_OK;
}

/* ---- integer and quantized matrix products ---------------------------------------------- */

/* (A - azp) @ (B - bzp) for 2-D operands with optional batch dims that
 * match; zero points per row of A / per column of B when 1-D. post gets
 * each result. */
typedef void (*pfvm__q_post)(void *user, int64_t idx, double acc);

static pfvm_code pfvm__q_matmul(pfvm_kctx *k, const pfvm_tensor *A, const pfvm_tensor *azp, const pfvm_tensor *B,
                                const pfvm_tensor *bzp, pfvm__q_post post, void *user)
{
    int64_t M = A->rank >= 2 ? A->dims[A->rank - 2] : 1, K = A->rank >= 1 ? A->dims[A->rank - 1] : 0;
    int64_t N = B->rank >= 2 ? B->dims[B->rank - 1] : 1, KB = B->rank >= 2 ? B->dims[B->rank - 2] : B->rank ? B->dims[0] : -1;
    int64_t batch = pfvm_tensor_numel(A) / (M * K != 0 ? M * K : 1), bb = pfvm_tensor_numel(B) / (KB * N != 0 ? KB * N : 1), t, i, j, p;
    int64_t na = azp ? pfvm_tensor_numel(azp) : 0, nb = bzp ? pfvm_tensor_numel(bzp) : 0;
    if (A->rank < 1 || B->rank < 1 || K != KB || (bb != 1 && bb != batch))
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "operands do not multiply");
    {
        int64_t dims[PFVM_MAX_RANK];
        int d;
        for (d = 0; d < A->rank - 1; d++)
            dims[d] = A->dims[d];
        dims[A->rank - 1] = N;
        if (pfvm_kctx_output(k, 0, k->out[0]->dtype, A->rank, dims))
            return k->st ? k->st->code : PFVM_ERR_NOMEM;
    }
    for (t = 0; t < batch; t++)
        for (i = 0; i < M; i++)
            for (j = 0; j < N; j++) {
                double acc = 0, za = na ? pfvm_tensor_get_f64(azp, na == 1 ? 0 : i % na) : 0;
                double zb = nb ? pfvm_tensor_get_f64(bzp, nb == 1 ? 0 : j % nb) : 0;
                for (p = 0; p < K; p++)
                    acc += (pfvm_tensor_get_f64(A, (t * M + i) * K + p) - za) *
                           (pfvm_tensor_get_f64(B, ((bb == 1 ? 0 : t) * KB + p) * N + j) - zb);
                post(user, (t * M + i) * N + j, acc);
            }
    return PFVM_OK;
}

static void pfvm__q_post_int32(void *user, int64_t idx, double acc)
{
    ((int32_t *)((pfvm_tensor *)user)->data)[idx] = (int32_t)acc;
}

/* A [..,N,K] x B [..,K,M] (numpy matmul rules) -> int32; a zero point is a
 * scalar or, per row of A / column of B, [N] / [M]. */
static pfvm_code pfvm__q_infer_int_matmul(pfvm_ictx *c)
{
    const pfvm_shape *a = &c->in[0]->type.shape, *b = &c->in[1]->type.shape;
    if (pfvm_infer_matmul(c, a, b, PFVM_INT32))
        return c->st ? c->st->code : PFVM_ERR_SHAPE;
    if (pfvm__q_check_zp(c, 2, a->rank >= 2 ? a->dims[a->rank - 2] : NULL, "a_zero_point") ||
        pfvm__q_check_zp(c, 3, b->rank >= 2 ? b->dims[b->rank - 1] : NULL, "b_zero_point"))
        return c->st ? c->st->code : PFVM_ERR_SHAPE;
    return PFVM_OK;
}

static pfvm_code pfvm__q_k_matmul_integer(pfvm_kctx *k)
{
    return pfvm__q_matmul(k, k->in[0], k->n_in > 2 ? k->in[2] : NULL, k->in[1], k->n_in > 3 ? k->in[3] : NULL,
                          pfvm__q_post_int32, k->out[0]);
}

typedef struct pfvm__q_requant {
    pfvm_tensor *y;
    double mult, zp;
    const pfvm_tensor *bias, *ws, *ys;
    double xs;
    int64_t nws;
} pfvm__q_requant;

static void pfvm__q_post_requant(void *user, int64_t idx, double acc)
{
    pfvm__q_requant *r = (pfvm__q_requant *)user;
    pfvm_red_store(r->y, idx, pfvm__q_round(acc * r->mult) + r->zp);
}

/* a [..,N,K] (scale, zero point), b [..,K,M] (scale, zero point), y's
 * scale and zero point -> y's type, numpy matmul shape. Scales and zero
 * points are per tensor or per row of a (a's, y's) / column of b (b's). */
static pfvm_code pfvm__q_infer_qlinear_matmul(pfvm_ictx *c)
{
    const pfvm_shape *a = &c->in[0]->type.shape, *b = &c->in[3]->type.shape;
    int j;
    if (pfvm_infer_matmul(c, a, b, c->in[7]->type.dtype))
        return c->st ? c->st->code : PFVM_ERR_SHAPE;
    for (j = 0; j < 8; j++) {
        static const char *const names[8] = {"", "a_scale", "a_zero_point", "", "b_scale", "b_zero_point", "y_scale", "y_zero_point"};
        const pfvm_sym *per = j == 1 || j == 2 || j == 6 || j == 7 ? (a->rank >= 2 ? a->dims[a->rank - 2] : NULL)
                              : j == 4 || j == 5 ? (b->rank >= 2 ? b->dims[b->rank - 1] : NULL) : NULL;
        if (names[j][0] && pfvm__q_check_zp(c, j, per, names[j]))
            return c->st ? c->st->code : PFVM_ERR_SHAPE;
    }
    return PFVM_OK;
}

static pfvm_code pfvm__q_k_qlinear_matmul(pfvm_kctx *k)
{
    pfvm__q_requant r;
    if (pfvm_tensor_numel(k->in[1]) < 1 || pfvm_tensor_numel(k->in[4]) < 1 || pfvm_tensor_numel(k->in[6]) < 1)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "a scale is empty");
    memset(&r, 0, sizeof r);
    r.y = k->out[0];
    r.mult = pfvm_tensor_get_f64(k->in[1], 0) * pfvm_tensor_get_f64(k->in[4], 0) / pfvm_tensor_get_f64(k->in[6], 0);
    r.zp = pfvm_tensor_get_f64(k->in[7], 0);
    return pfvm__q_matmul(k, k->in[0], k->in[2], k->in[3], k->in[5], pfvm__q_post_requant, &r);
}

/* ---- quantized convolutions ------------------------------------------------------------------ */

static void pfvm__q_conv_int32(void *user, int64_t idx, int64_t channel, double acc)
{
    (void)channel;
    ((int32_t *)((pfvm_tensor *)user)->data)[idx] = (int32_t)acc;
}

static void pfvm__q_conv_requant(void *user, int64_t idx, int64_t channel, double acc)
{
    pfvm__q_requant *r = (pfvm__q_requant *)user;
    double ws = pfvm_tensor_get_f64(r->ws, r->nws == 1 ? 0 : channel % r->nws);
    if (r->bias)
        acc += pfvm_tensor_get_f64(r->bias, channel);
    pfvm_red_store(r->y, idx, pfvm__q_round(acc * r->xs * ws / pfvm_tensor_get_f64(r->ys, 0)) + r->zp);
}

static pfvm_code pfvm__q_k_conv_integer(pfvm_kctx *k)
{
    return pfvm_nn_conv_ref(k, k->in[0], k->in[1], k->n_in > 2 ? k->in[2] : NULL, k->n_in > 3 ? k->in[3] : NULL,
                            pfvm__q_conv_int32, k->out[0]);
}

/* ---- fixed-point requantization ---------------------------------------------------------- */

PFVM_INTERNAL void pfvm_q_multiplier(double real, int32_t *mult, int *shift)
{
    int e;
    double f;
    int64_t m;
    if (!(real > 0) || !isfinite(real)) { /* an infinite one has no int32 mantissa */
        *mult = 0;
        *shift = 0;
        return;
    }
    f = frexp(real, &e); /* real = f * 2^e, f in [0.5, 1) */
    m = (int64_t)floor(f * 2147483648.0 + 0.5);
    if (m == ((int64_t)1 << 31)) {
        m >>= 1;
        e++;
    }
    *mult = (int32_t)m;
    *shift = 31 - e;
}

/* Right shifts of negative numbers are arithmetic here (as with every
 * compiler pfvm builds with: gcc, clang, MSVC, arm-none-eabi-gcc). Adding
 * half first rounds half up (toward +infinity), exactly: the one rounding
 * of the fast paths, which Cortex-M does in two instructions (SMMLA, ASR)
 * where half to even took eight. Ties need a multiplier with many low zero
 * bits (a power-of-two scale ratio); otherwise it is round to nearest. */
#define PFVM__Q_SHR_UP(p, s) (((p) + ((int64_t)1 << ((s) - 1))) >> (s))

PFVM_INTERNAL int64_t pfvm_q_scale(int64_t acc, int32_t mult, int shift)
{
    int64_t p = acc * mult;
    if (shift <= 0) /* a multiplier of 2^31 or more: no rounding, saturate */
        return shift < -31 ? (p < 0 ? INT64_MIN / 4 : INT64_MAX / 4) : p * ((int64_t)1 << -shift);
    if (shift > 62)
        return 0;
    return PFVM__Q_SHR_UP(p, shift);
}

PFVM_INTERNAL int32_t pfvm_q_requantize(int32_t acc, int32_t mult, int shift, int32_t zp, int32_t lo, int32_t hi)
{
    int64_t v = pfvm_q_scale(acc, mult, shift) + zp;
    return v < lo ? lo : v > hi ? hi : (int32_t)v;
}

/* ---- the int8 GEMM: int16 pairs, int32 sums ------------------------------------------------- *
 *
 * Operands are stored minus their zero points as int16 (|v| <= 255), and
 * reduction positions go in pairs: a product of two pairs is one AVX2
 * vpmaddwd lane (16 multiply-adds per instruction) or one SMLAD, which
 * cannot overflow (2 * 255 * 255 < 2^31). Weights, in blocks of
 * PFVM__QG_MR rows: wp[b][kp][r] = (w[4b+r][2kp], w[4b+r][2kp+1]) (one
 * load reads a pair of every row of the block); columns: panels of
 * PFVM__QG_NR columns, panel[kp][j] = (x[2kp][j], x[2kp+1][j]). The
 * kernel computes PFVM__QG_MR x PFVM__QG_NR sums. */
/* Index math of the fast path: pointer-sized, so 32-bit on Cortex-M (no
 * 64-bit multiplies and library divisions in the packing loops). */
typedef ptrdiff_t pfvm__qi;

#if defined(__SSE2__) || defined(_M_X64)
#include <emmintrin.h>
#define PFVM__Q_SSE2 1
#endif

#define PFVM__QG_MR 4
#define PFVM__QG_NR 16
/* the int16 of row r's pair kp in a weight block */
#define PFVM__QG_W(kp, r) (((kp) * PFVM__QG_MR + (r)) * 2)

static int pfvm__qg_portable, pfvm__qv_off, pfvm__qv_narrow;

PFVM_INTERNAL void pfvm_q_force_portable(int on)
{
    pfvm__qg_portable = on;
}

PFVM_INTERNAL void pfvm_q_force_no_vnni(int on)
{
    pfvm__qv_off = on;
}

PFVM_INTERNAL void pfvm_q_force_vnni_narrow(int on)
{
    pfvm__qv_narrow = on;
}

static int pfvm__qv_tile_force; /* 0: by the sums; 1: positions; 2: channels */

PFVM_INTERNAL void pfvm_q_force_direct_tile(int which)
{
    pfvm__qv_tile_force = which;
}

#if defined(PFVM_DISPATCH_CLONES)

/* The block's four rows are written out: in a loop over rows gcc keeps
 * the eight sums in memory, and the kernel then waits on stores. */
#define PFVM__QG_AVX2_ROW(c, kp, a0, a1)                                                         \
    {                                                                                           \
        int32_t pair;                                                                           \
        __m256i wv;                                                                             \
        memcpy(&pair, w + PFVM__QG_W(kp, c), sizeof pair);                                      \
        wv = _mm256_set1_epi32(pair);                                                           \
        a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(x0, wv));                                   \
        a1 = _mm256_add_epi32(a1, _mm256_madd_epi16(x1, wv));                                   \
    }
#define PFVM__QG_AVX2_STEP(kp)                                                                   \
    {                                                                                           \
        const __m256i x0 = _mm256_loadu_si256((const __m256i *)(const void *)(panel + (kp) * 2 * PFVM__QG_NR)); \
        const __m256i x1 = _mm256_loadu_si256((const __m256i *)(const void *)(panel + (kp) * 2 * PFVM__QG_NR + 16)); \
        PFVM__QG_AVX2_ROW(0, kp, a00, a01)                                                      \
        PFVM__QG_AVX2_ROW(1, kp, a10, a11)                                                      \
        PFVM__QG_AVX2_ROW(2, kp, a20, a21)                                                      \
        PFVM__QG_AVX2_ROW(3, kp, a30, a31)                                                      \
    }

/* Requantization of a block's sums inside the AVX2 kernel (instead of
 * storing them for pfvm__qc_store): each row's bias starts its sums, and
 * with shift = 32 + s, s in [1, 30], the result is the product's high
 * word plus 2^(s-1), shifted right by s (pfvm_q_scale_hi: exact), plus
 * the zero point; the packing instructions saturate to the output type
 * (the clamp is the type's whole range). */
typedef struct pfvm__qg_epi {
    int32_t bias[PFVM__QG_MR], mult[PFVM__QG_MR], rnd[PFVM__QG_MR], s[PFVM__QG_MR];
    void *y[PFVM__QG_MR]; /* the rows' first output (NULL: a padding row) */
    int32_t zp;
    int cols, u8;
} pfvm__qg_epi;

__attribute__((target("avx2"))) static __m256i pfvm__qg_requant8(__m256i a, __m256i vm, __m256i rnd, __m128i cnt, __m256i zp)
{
    __m256i pe = _mm256_mul_epi32(a, vm), po = _mm256_mul_epi32(_mm256_srli_epi64(a, 32), vm);
    __m256i hi = _mm256_blend_epi32(_mm256_srli_epi64(pe, 32), po, 0xAA);
    return _mm256_add_epi32(_mm256_sra_epi32(_mm256_add_epi32(hi, rnd), cnt), zp);
}

__attribute__((target("avx2"))) static void pfvm__qg_store_row(const pfvm__qg_epi *e, int c, __m256i a0, __m256i a1)
{
    const __m256i vm = _mm256_set1_epi32(e->mult[c]), rnd = _mm256_set1_epi32(e->rnd[c]), zp = _mm256_set1_epi32(e->zp);
    const __m128i cnt = _mm_cvtsi32_si128(e->s[c]);
    __m256i v0 = pfvm__qg_requant8(a0, vm, rnd, cnt, zp), v1 = pfvm__qg_requant8(a1, vm, rnd, cnt, zp);
    __m256i p16 = _mm256_packs_epi32(v0, v1); /* 0-3 8-11 4-7 12-15 */
    __m256i p8 = e->u8 ? _mm256_packus_epi16(p16, p16) : _mm256_packs_epi16(p16, p16);
    __m128i r = _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(p8, _mm256_setr_epi32(0, 4, 1, 5, 0, 0, 0, 0)));
    if (e->cols == PFVM__QG_NR)
        _mm_storeu_si128((__m128i *)e->y[c], r);
    else {
        char t[16];
        _mm_storeu_si128((__m128i *)(void *)t, r);
        memcpy(e->y[c], t, (size_t)e->cols);
    }
}

/* A 4x16 tile's int32 sums into acc ([row][column], rows PFVM__QG_NR
 * apart), for a caller that requantizes them itself. */
__attribute__((target("avx2"))) static void pfvm__qg_store_acc(int32_t *acc, __m256i a00, __m256i a01, __m256i a10,
                                                                __m256i a11, __m256i a20, __m256i a21, __m256i a30,
                                                                __m256i a31)
{
    _mm256_storeu_si256((__m256i *)(void *)(acc + 0 * PFVM__QG_NR), a00);
    _mm256_storeu_si256((__m256i *)(void *)(acc + 0 * PFVM__QG_NR + 8), a01);
    _mm256_storeu_si256((__m256i *)(void *)(acc + 1 * PFVM__QG_NR), a10);
    _mm256_storeu_si256((__m256i *)(void *)(acc + 1 * PFVM__QG_NR + 8), a11);
    _mm256_storeu_si256((__m256i *)(void *)(acc + 2 * PFVM__QG_NR), a20);
    _mm256_storeu_si256((__m256i *)(void *)(acc + 2 * PFVM__QG_NR + 8), a21);
    _mm256_storeu_si256((__m256i *)(void *)(acc + 3 * PFVM__QG_NR), a30);
    _mm256_storeu_si256((__m256i *)(void *)(acc + 3 * PFVM__QG_NR + 8), a31);
}

/* The sums of a weight block and a panel into acc ([row][column]), or,
 * with e, requantized into the rows' outputs. */
__attribute__((target("avx2"))) static void pfvm__qg_kernel_avx2(const int16_t *w, const int16_t *panel, int64_t K2,
                                                                  int32_t *acc, const pfvm__qg_epi *e)
{
    __m256i a00 = _mm256_setzero_si256(), a01 = a00, a10 = a00, a11 = a00, a20 = a00, a21 = a00, a30 = a00, a31 = a00;
    int64_t kp;
    if (e) {
        a00 = a01 = _mm256_set1_epi32(e->bias[0]);
        a10 = a11 = _mm256_set1_epi32(e->bias[1]);
        a20 = a21 = _mm256_set1_epi32(e->bias[2]);
        a30 = a31 = _mm256_set1_epi32(e->bias[3]);
    }
    /* one pair per iteration: unrolled twice, gcc's schedule needed more
     * than the 16 registers and spilled sums to the stack */
    for (kp = 0; kp < K2; kp++)
        PFVM__QG_AVX2_STEP(kp)
    if (e) {
        pfvm__qg_store_row(e, 0, a00, a01);
        if (e->y[1])
            pfvm__qg_store_row(e, 1, a10, a11);
        if (e->y[2])
            pfvm__qg_store_row(e, 2, a20, a21);
        if (e->y[3])
            pfvm__qg_store_row(e, 3, a30, a31);
        return;
    }
    pfvm__qg_store_acc(acc, a00, a01, a10, a11, a20, a21, a30, a31);
}
#undef PFVM__QG_AVX2_STEP
#undef PFVM__QG_AVX2_ROW
#endif

/* ---- the 4x2 SMLAD tile (Cortex-M4/M7 DSP extension) -----------------------------------------
 *
 * SMLAD adds the two products of two int16 pairs (one 32-bit word each) to
 * a 32-bit sum: one word of a weight row and one of a panel column are one
 * reduction pair. The tile is a weight block's 4 rows by 2 columns; per
 * reduction pair one LDRD of the two columns and two of the four rows'
 * words, and 8 SMLADs: 11 instructions for 16 multiply-adds, four pairs
 * per loop iteration. Eight sums, four operands and two pointers are the
 * 14 registers r0-r12 and lr, so the loop's bounds live on the stack. The
 * sums go out as [row][column] (8 words). Other targets build the same
 * tile in C (the unit tests check it against the portable kernel). */
static int pfvm__qg_dsp_forced;

PFVM_INTERNAL void pfvm_q_force_dsp(int on)
{
    pfvm__qg_dsp_forced = on;
}

#if defined(__ARM_FEATURE_DSP) && defined(__GNUC__) && defined(__thumb2__)
#include <arm_acle.h>
#define PFVM__QG_DSP 1
/* a word at any int16: LDR takes unaligned addresses on the M4 and M7 */
typedef uint32_t pfvm__qg_uword __attribute__((may_alias, aligned(2)));
#define PFVM__QG_UWORD(p) (*(const pfvm__qg_uword *)(const void *)(p))
/* a word at any byte */
typedef uint32_t pfvm__qg_bword __attribute__((may_alias, aligned(1)));
#define PFVM__QG_UWORD32(p) (*(const pfvm__qg_bword *)(const void *)(p))
#define PFVM__QG_SMLAD(a, b, acc) __smlad((int16x2_t)(a), (int16x2_t)(b), (acc))
#define PFVM__QG_SMUAD(a, b) __smuad((int16x2_t)(a), (int16x2_t)(b))
/* one reduction pair: x (r1) advances a panel row (64 bytes), w (r0) a
 * block's pair (16 bytes) */
#define PFVM__QG_ASM_PAIR                 \
    "ldrd r2, r3, [r1], #64\n\t"          \
    "ldrd r12, lr, [r0], #8\n\t"          \
    "smlad r4, r12, r2, r4\n\t"           \
    "smlad r5, r12, r3, r5\n\t"           \
    "smlad r6, lr, r2, r6\n\t"            \
    "smlad r7, lr, r3, r7\n\t"            \
    "ldrd r12, lr, [r0], #8\n\t"          \
    "smlad r8, r12, r2, r8\n\t"           \
    "smlad r9, r12, r3, r9\n\t"           \
    "smlad r10, lr, r2, r10\n\t"          \
    "smlad r11, lr, r3, r11\n\t"
typedef char pfvm__qg_nr_bytes_ok[PFVM__QG_NR == 16 && PFVM__QG_MR == 4 ? 1 : -1];
/* (w: r0, x: r1, pairs: r2, out: r3, init: [sp]) */
__attribute__((naked, noinline)) static void pfvm__qg_tile(const int16_t *w __attribute__((unused)),
                                                           const int16_t *x __attribute__((unused)),
                                                           pfvm__qi pairs __attribute__((unused)),
                                                           int32_t *out __attribute__((unused)),
                                                           const int32_t *init __attribute__((unused)))
{
    __asm__ volatile(
        "push {r4-r11, lr}\n\t"
        "ldr r12, [sp, #36]\n\t"
        "ldm r12, {r4-r11}\n\t"      /* the sums start at init (the biases) */
        "and r12, r2, #3\n\t"          /* pairs % 4: one at a time first */
        "add r12, r1, r12, lsl #6\n\t" /* where x is after them */
        "add r2, r1, r2, lsl #6\n\t"   /* where x ends */
        "push {r2, r3, r12}\n\t"       /* [sp]: the end, [sp, #4]: out, [sp, #8]: the single pairs' end */
        "b 2f\n"
        "1:\n\t" PFVM__QG_ASM_PAIR
        "2:\n\t"
        "ldr r3, [sp, #8]\n\t"
        "cmp r1, r3\n\t"
        "bne 1b\n\t"
        "ldr r3, [sp]\n\t"
        "cmp r1, r3\n\t"
        "beq 4f\n"
        "3:\n\t" PFVM__QG_ASM_PAIR PFVM__QG_ASM_PAIR PFVM__QG_ASM_PAIR PFVM__QG_ASM_PAIR
        "ldr r3, [sp]\n\t"
        "cmp r1, r3\n\t"
        "bne 3b\n"
        "4:\n\t"
        "ldr r3, [sp, #4]\n\t"
        "stm r3, {r4-r11}\n\t"
        "add sp, sp, #12\n\t"
        "pop {r4-r11, pc}\n\t");
}
#else
static uint32_t pfvm__qg_word_at(const int16_t *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* SMLAD in C: the bottom halves' product plus the top halves', added with
 * wraparound (as the instruction does). */
static int32_t pfvm__qg_smlad(uint32_t a, uint32_t b, int32_t acc)
{
    int32_t lo = (int32_t)(int16_t)(uint16_t)(a & 0xffffu) * (int16_t)(uint16_t)(b & 0xffffu);
    int32_t hi = (int32_t)(int16_t)(uint16_t)(a >> 16) * (int16_t)(uint16_t)(b >> 16);
    return (int32_t)((uint32_t)acc + (uint32_t)lo + (uint32_t)hi);
}
#define PFVM__QG_UWORD(p) pfvm__qg_word_at(p)
#define PFVM__QG_SMLAD(a, b, acc) pfvm__qg_smlad((a), (b), (acc))
#define PFVM__QG_SMUAD(a, b) pfvm__qg_smlad((a), (b), 0)

/* The same tile in C: what the unit tests check on the host. */
static void pfvm__qg_tile(const int16_t *w, const int16_t *x, pfvm__qi pairs, int32_t *out, const int32_t *init)
{
    pfvm__qi kp;
    int r;
    for (r = 0; r < 8; r++)
        out[r] = init[r];
    for (kp = 0; kp < pairs; kp++, x += 2 * PFVM__QG_NR, w += 2 * PFVM__QG_MR)
        for (r = 0; r < PFVM__QG_MR; r++) {
            out[2 * r] = PFVM__QG_SMLAD(PFVM__QG_UWORD(w + 2 * r), PFVM__QG_UWORD(x), out[2 * r]);
            out[2 * r + 1] = PFVM__QG_SMLAD(PFVM__QG_UWORD(w + 2 * r), PFVM__QG_UWORD(x + 2), out[2 * r + 1]);
        }
}
#endif

/* The block's sums as tiles: acc[jt][r][c], the 4x2 tile of columns 2jt
 * and 2jt + 1, starting from init ([r][c]: the rows' biases). */
static void pfvm__qg_kernel_dsp(const int16_t *w, const int16_t *panel, int64_t K2, int32_t *acc, int cols,
                                const int32_t *init)
{
    int jt;
    for (jt = 0; 2 * jt < cols; jt++)
        pfvm__qg_tile(w, panel + 4 * jt, (pfvm__qi)K2, acc + 8 * jt, init);
}

PFVM_INTERNAL int pfvm_q_gemm_kind(void)
{
    if (pfvm__qg_portable)
        return 0;
    if (pfvm__qg_dsp_forced)
        return 1;
#ifdef PFVM__QG_AVX2
    if (pfvm__qg_have_avx2())
        return 2;
#endif
#ifdef PFVM__QG_DSP
    return 1;
#else
    return 0;
#endif
}

PFVM_INTERNAL int pfvm_q_vnni(void)
{
#ifdef PFVM__QG_AVX2
    return !pfvm__qv_off && pfvm_q_gemm_kind() == 2 && pfvm__qv_have();
#else
    return 0;
#endif
}

PFVM_DISPATCH static void pfvm__qg_kernel_c(const int16_t *w, const int16_t *panel, int64_t K2, int32_t *acc)
{
    int64_t kp;
    int c, j;
    for (c = 0; c < PFVM__QG_MR * PFVM__QG_NR; c++)
        acc[c] = 0;
    for (kp = 0; kp < K2; kp++) {
        const int16_t *p = panel + kp * 2 * PFVM__QG_NR;
        for (c = 0; c < PFVM__QG_MR; c++) {
            int32_t w0 = w[PFVM__QG_W(kp, c)], w1 = w[PFVM__QG_W(kp, c) + 1];
            for (j = 0; j < PFVM__QG_NR; j++)
                acc[c * PFVM__QG_NR + j] += p[2 * j] * w0 + p[2 * j + 1] * w1;
        }
    }
}

/* The sums of a weight block and a panel: [row][column], or with the
 * SMLAD tile (kind 1) [column pair][row][2] (pfvm__qg_kernel_dsp) from
 * init (the block's biases, [row][2]), of the first cols columns at least. */
static void pfvm__qg_kernel(int kind, const int16_t *w, const int16_t *panel, int64_t K2, int32_t *acc, int cols,
                            const int32_t *init)
{
#ifdef PFVM__QG_AVX2
    if (kind == 2) {
        pfvm__qg_kernel_avx2(w, panel, K2, acc, NULL);
        return;
    }
#endif
    if (kind == 1) {
        pfvm__qg_kernel_dsp(w, panel, K2, acc, cols, init);
        return;
    }
    (void)cols, (void)init;
    pfvm__qg_kernel_c(w, panel, K2, acc);
}

/* One column (a Gemm lowered to a 1x1 QLinearConv: the matrix-vector
 * product): the 4x2 tile would waste its second column, so a 4x1 tile
 * reads the reduction pairs from one contiguous int16 vector x. The sums
 * go out in the tile's layout (out[2r], row r; the odd words are scratch).
 * On the DSP extension: per reduction pair one LDM of the block's four
 * row words and four SMLADs, x two pairs per LDRD, four pairs per loop
 * iteration: 24 instructions for 32 multiply-adds. */
#ifdef PFVM__QG_DSP
#define PFVM__QG_ASM_GEMV_PAIR(X)            \
    "ldm r0!, {r9, r11, r12, lr}\n\t"        \
    "smlad r4, r9, " X ", r4\n\t"            \
    "smlad r6, r11, " X ", r6\n\t"           \
    "smlad r8, r12, " X ", r8\n\t"           \
    "smlad r10, lr, " X ", r10\n\t"
/* (w: r0, x: r1, pairs: r2, out: r3, init: [sp]) */
__attribute__((naked, noinline)) static void pfvm__qg_gemv_tile(const int16_t *w __attribute__((unused)),
                                                                const int16_t *x __attribute__((unused)),
                                                                pfvm__qi pairs __attribute__((unused)),
                                                                int32_t *out __attribute__((unused)),
                                                                const int32_t *init __attribute__((unused)))
{
    __asm__ volatile(
        "push {r4-r11, lr}\n\t"
        "ldr r12, [sp, #36]\n\t"
        "ldm r12, {r4-r11}\n\t"        /* r4, r6, r8, r10: the rows' biases */
        "and r5, r2, #3\n\t"           /* pairs % 4: one at a time first */
        "add r5, r1, r5, lsl #2\n\t"   /* where x is after them */
        "add r7, r1, r2, lsl #2\n\t"   /* where x ends */
        "b 2f\n"
        "1:\n\t"
        "ldr r2, [r1], #4\n\t" PFVM__QG_ASM_GEMV_PAIR("r2")
        "2:\n\t"
        "cmp r1, r5\n\t"
        "bne 1b\n\t"
        "cmp r1, r7\n\t"
        "beq 4f\n"
        "3:\n\t"
        "ldrd r2, r5, [r1], #8\n\t" PFVM__QG_ASM_GEMV_PAIR("r2") PFVM__QG_ASM_GEMV_PAIR("r5")
        "ldrd r2, r5, [r1], #8\n\t" PFVM__QG_ASM_GEMV_PAIR("r2") PFVM__QG_ASM_GEMV_PAIR("r5")
        "cmp r1, r7\n\t"
        "bne 3b\n"
        "4:\n\t"
        "stm r3, {r4-r11}\n\t"
        "pop {r4-r11, pc}\n\t");
}
#else
/* The same in C: what the unit tests check on the host. */
static void pfvm__qg_gemv_tile(const int16_t *w, const int16_t *x, pfvm__qi pairs, int32_t *out, const int32_t *init)
{
    pfvm__qi kp;
    int r;
    for (r = 0; r < 8; r++)
        out[r] = init[r];
    for (kp = 0; kp < pairs; kp++, x += 2, w += 2 * PFVM__QG_MR)
        for (r = 0; r < PFVM__QG_MR; r++)
            out[2 * r] = PFVM__QG_SMLAD(PFVM__QG_UWORD(w + 2 * r), PFVM__QG_UWORD(x), out[2 * r]);
}
#endif

/* ---- QLinearConv, fast path: 2-D, explicit pads, per-tensor x and y ------------------------- */

typedef struct pfvm__qc_geom {
    pfvm__qi N, C, H, W, M, OH, OW, KH, KW, group, CG, MG, K, K2, Mp;
    pfvm__qi sh, sw, dh, dw, pt, pl;
} pfvm__qc_geom;

static int pfvm__qc_attr2(const pfvm_node *n, const char *name, int64_t def, int64_t *out, int count)
{
    const int64_t *v;
    int c = pfvm_node_attr_ints(n, name, &v), i;
    if (c < 0) {
        for (i = 0; i < count; i++)
            out[i] = def;
        return 1;
    }
    if (c != count)
        return 0;
    for (i = 0; i < count; i++)
        out[i] = v[i];
    return 1;
}

/* The geometry from x's and w's dims (y's, when given, must agree), when
 * the node is one the fast path takes. */
static int pfvm__qc_geom_dims(const pfvm_node *n, const int64_t *xd, const int64_t *wd, const int64_t *yd,
                              pfvm__qc_geom *g)
{
    const char *ap = pfvm_node_attr_string(n, "auto_pad", "NOTSET");
    int64_t s[2], d[2], p[4], ks[2];
    if (strcmp(ap, "NOTSET") || !pfvm__qc_attr2(n, "strides", 1, s, 2) || !pfvm__qc_attr2(n, "dilations", 1, d, 2) ||
        !pfvm__qc_attr2(n, "pads", 0, p, 4) || !pfvm__qc_attr2(n, "kernel_shape", 0, ks, 2))
        return 0;
    if (sizeof(pfvm__qi) < sizeof(int64_t) && yd && /* a 32-bit target: every index must fit */
        (xd[0] * xd[1] * xd[2] * xd[3] > PTRDIFF_MAX || yd[0] * yd[1] * yd[2] * yd[3] > PTRDIFF_MAX ||
         wd[0] * wd[1] * wd[2] * wd[3] > PTRDIFF_MAX / 2))
        return 0;
    g->N = xd[0], g->C = xd[1], g->H = xd[2], g->W = xd[3];
    g->M = wd[0], g->KH = wd[2], g->KW = wd[3];
    g->group = pfvm_node_attr_int(n, "group", 1);
    g->sh = s[0], g->sw = s[1], g->dh = d[0], g->dw = d[1], g->pt = p[0], g->pl = p[1];
    if ((ks[0] && ks[0] != g->KH) || (ks[1] && ks[1] != g->KW) || g->group < 1 || g->C % g->group ||
        g->M % g->group || wd[1] * g->group != g->C || s[0] < 1 || s[1] < 1 || d[0] < 1 || d[1] < 1 ||
        p[0] < 0 || p[1] < 0 || p[2] < 0 || p[3] < 0)
        return 0;
    g->OH = (g->H + p[0] + p[2] - d[0] * (g->KH - 1) - 1) / s[0] + 1;
    g->OW = (g->W + p[1] + p[3] - d[1] * (g->KW - 1) - 1) / s[1] + 1;
    if (g->OH < 1 || g->OW < 1 ||
        (yd && (yd[0] != g->N || yd[1] != g->M || yd[2] != g->OH || yd[3] != g->OW)))
        return 0;
    g->CG = g->C / g->group;
    g->MG = g->M / g->group;
    g->K = g->CG * g->KH * g->KW;
    g->K2 = (g->K + 1) / 2;
    g->Mp = (g->MG + PFVM__QG_MR - 1) / PFVM__QG_MR * PFVM__QG_MR;
    return 1;
}

static int pfvm__qc_geometry(const pfvm_kctx *k, pfvm__qc_geom *g)
{
    const pfvm_tensor *X = k->in[0], *W = k->in[3], *Y = k->out[0];
    return X->rank == 4 && W->rank == 4 && Y->data && Y->rank == 4 && pfvm__qc_geom_dims(k->node, X->dims, W->dims, Y->dims, g);
}

/* Depthwise: one input channel per group, one output channel per group. */
static int pfvm__qc_is_dw(const pfvm__qc_geom *g)
{
    return g->CG == 1 && g->MG == 1;
}

/* A 1x1 convolution whose columns are the input's rows. */
static int pfvm__qc_is_pointwise(const pfvm__qc_geom *g)
{
    return g->KH == 1 && g->KW == 1 && g->sh == 1 && g->sw == 1 && g->pt == 0 && g->pl == 0 && g->OH * g->OW == g->H * g->W;
}

/* Rows and (phase) columns of the padded plane. */
static void pfvm__qc_dw_dims(const pfvm__qc_geom *g, pfvm__qi *PH, pfvm__qi *PWs)
{
    pfvm__qi PW = (g->OW - 1) * g->sw + (g->KW - 1) * g->dw + 1;
    *PH = (g->OH - 1) * g->sh + (g->KH - 1) * g->dh + 1;
    *PWs = (PW + g->sw - 1) / g->sw;
}

/* Rows and columns of the padded planes pfvm__qc_pack reads windows from. */
static void pfvm__qc_plane_dims(const pfvm__qc_geom *g, pfvm__qi *PH, pfvm__qi *PW)
{
    *PH = (g->OH - 1) * g->sh + (g->KH - 1) * g->dh + 1;
    *PW = (g->OW - 1) * g->sw + (g->KW - 1) * g->dw + 1;
}

#ifdef PFVM__QG_AVX2
static int pfvm__qv_direct_shape(const pfvm__qc_geom *g);
static size_t pfvm__qv_direct_bytes(const pfvm__qc_geom *g);
#endif

/* Bytes of the buffers a run works in, besides the packed weights: the
 * padded plane and its sums (depthwise), or one group's column panels. */
static size_t pfvm__qc_work_bytes(const pfvm__qc_geom *g)
{
    pfvm__qi OHW = g->OH * g->OW, npan = (OHW + PFVM__QG_NR - 1) / PFVM__QG_NR, PH, PWs;
    size_t b;
    pfvm__qc_dw_dims(g, &PH, &PWs);
    b = pfvm__qc_is_dw(g) ? (size_t)OHW * sizeof(int32_t) + (size_t)(g->sw * PH * PWs) * sizeof(int16_t)
                          : (size_t)(g->group * g->Mp * 2) * sizeof(int32_t) +
                                (size_t)(npan * g->K2 * 2 * PFVM__QG_NR) * sizeof(int16_t);
    if (!pfvm__qc_is_dw(g) && !pfvm__qc_is_pointwise(g)) { /* the padded planes (phase planes: PW rounded up to sw) */
        pfvm__qi PPH, PPW;
        pfvm__qc_plane_dims(g, &PPH, &PPW);
        b += (size_t)(g->CG * PPH * ((PPW + g->sw - 1) / g->sw) * g->sw) * sizeof(int16_t);
    }
#ifdef PFVM__QG_AVX2
    if (!pfvm__qc_is_dw(g)) { /* the VNNI path's u8 panels, four im2col rows (pfvm__qv_pack), its rows' parameters */
        size_t v = (size_t)(g->group * g->Mp * 2 + 3 * g->Mp) * sizeof(int32_t) +
                   (size_t)(npan * ((g->K + 3) / 4 + 1) * 4 * PFVM__QG_NR);
        b = b > v ? b : v;
    }
    if (pfvm__qv_direct_shape(g)) { /* or the direct path's planes and flat output */
        size_t v = (size_t)(g->group * g->Mp * 2) * sizeof(int32_t) + pfvm__qv_direct_bytes(g);
        b = b > v ? b : v;
    }
#endif
    return (b + 64 + 15) / 16 * 16; /* what follows stays aligned */
}

static int pfvm__q_is8(const pfvm_tensor *t)
{
    return t && (t->dtype == PFVM_UINT8 || t->dtype == PFVM_INT8);
}

static int32_t pfvm__q_at(const pfvm_tensor *t, pfvm__qi i)
{
    return t->dtype == PFVM_UINT8 ? ((const uint8_t *)t->data)[i] : ((const int8_t *)t->data)[i];
}

/* Weights minus their zero points as int16 pairs, per group [Mp][2*K2]:
 * in blocks of PFVM__QG_MR rows (PFVM__QG_W) for the GEMM, row after row
 * for the depthwise kernels. */
static void pfvm__qc_weights(const pfvm_tensor *W, const pfvm_tensor *wz, const pfvm__qc_geom *g, int16_t *wp)
{
    pfvm__qi nwz = pfvm_tensor_numel(wz), gg, c, kk;
    int dw = pfvm__qc_is_dw(g);
    memset(wp, 0, (size_t)(g->group * g->Mp * 2 * g->K2) * sizeof(int16_t));
    for (gg = 0; gg < g->group; gg++)
        for (c = 0; c < g->MG; c++) {
            pfvm__qi m = gg * g->MG + c;
            int32_t z = nwz == 1 ? pfvm__q_at(wz, 0) : pfvm__q_at(wz, m);
            int16_t *blk = wp + (gg * g->Mp + c / PFVM__QG_MR * PFVM__QG_MR) * 2 * g->K2;
            for (kk = 0; kk < g->K; kk++) {
                int32_t v = W->dtype == PFVM_INT8 ? ((const int8_t *)W->data)[m * g->K + kk]
                                                  : ((const uint8_t *)W->data)[m * g->K + kk];
                if (dw)
                    wp[(gg * g->Mp + c) * 2 * g->K2 + kk] = (int16_t)(v - z);
                else
                    blk[PFVM__QG_W(kk / 2, c % PFVM__QG_MR) + (kk & 1)] = (int16_t)(v - z);
            }
        }
}

#if defined(__GNUC__)
/* kept out of line: inlined, gcc -Os spills the packing loops' registers */
#define PFVM__Q_NOINLINE __attribute__((noinline))
#else
#define PFVM__Q_NOINLINE
#endif

/* n elements of X from offset at, every s-th, minus xz, into every other
 * int16 of d (one panel row's run of columns). */
PFVM__Q_NOINLINE static void pfvm__qc_pack_run(const pfvm_tensor *X, pfvm__qi at, pfvm__qi s, pfvm__qi n, int32_t xz,
                                               int16_t *d)
{
    pfvm__qi i;
    if (X->dtype == PFVM_UINT8) {
        const uint8_t *x = (const uint8_t *)X->data + at;
        for (i = 0; i < n; i++, x += s)
            d[2 * i] = (int16_t)(*x - xz);
    } else {
        const int8_t *x = (const int8_t *)X->data + at;
        for (i = 0; i < n; i++, x += s)
            d[2 * i] = (int16_t)(*x - xz);
    }
}

/* n columns of two input rows (offsets a0 and a1 in X) minus xz as
 * int16 pairs into d (one panel row). */
PFVM__Q_NOINLINE static void pfvm__qc_pack_pairs(const pfvm_tensor *X, pfvm__qi a0, pfvm__qi a1, pfvm__qi n,
                                                 int32_t xz, int16_t *d)
{
    pfvm__qi j = 0;
    if (X->dtype == PFVM_UINT8) {
        const uint8_t *x0 = (const uint8_t *)X->data + a0, *x1 = (const uint8_t *)X->data + a1;
#ifdef PFVM__QG_DSP
        /* four columns of both rows per step: UXTB16 spreads bytes 0, 2
         * (1, 3) of a word into halves, SSUB16 takes the zero point off
         * both, PKHBT/PKHTB pair the rows: 18 instructions for 8 values */
        uint32_t zz = (uint32_t)(uint16_t)xz * 0x10001u, *o = (uint32_t *)(void *)d;
        for (; j + 4 <= n; j += 4, o += 4) {
            uint32_t u = PFVM__QG_UWORD32(x0 + j), v = PFVM__QG_UWORD32(x1 + j), u02, u13, v02, v13;
            __asm__("uxtb16 %0, %4\n\t"
                    "uxtb16 %1, %4, ror #8\n\t"
                    "uxtb16 %2, %5\n\t"
                    "uxtb16 %3, %5, ror #8\n\t"
                    "ssub16 %0, %0, %6\n\t"
                    "ssub16 %1, %1, %6\n\t"
                    "ssub16 %2, %2, %6\n\t"
                    "ssub16 %3, %3, %6\n\t"
                    : "=&r"(u02), "=&r"(u13), "=&r"(v02), "=&r"(v13)
                    : "r"(u), "r"(v), "r"(zz));
            __asm__("pkhbt %0, %2, %3, lsl #16\n\t"
                    "pkhtb %1, %3, %2, asr #16\n\t"
                    : "=&r"(o[0]), "=&r"(o[2])
                    : "r"(u02), "r"(v02));
            __asm__("pkhbt %0, %2, %3, lsl #16\n\t"
                    "pkhtb %1, %3, %2, asr #16\n\t"
                    : "=&r"(o[1]), "=&r"(o[3])
                    : "r"(u13), "r"(v13));
        }
#endif
#ifdef PFVM__Q_SSE2
        {
            const __m128i zero = _mm_setzero_si128(), z = _mm_set1_epi16((short)xz);
            for (; j + 8 <= n; j += 8) {
                __m128i a = _mm_sub_epi16(_mm_unpacklo_epi8(_mm_loadl_epi64((const __m128i *)(const void *)(x0 + j)), zero), z);
                __m128i b = _mm_sub_epi16(_mm_unpacklo_epi8(_mm_loadl_epi64((const __m128i *)(const void *)(x1 + j)), zero), z);
                _mm_storeu_si128((__m128i *)(void *)(d + 2 * j), _mm_unpacklo_epi16(a, b));
                _mm_storeu_si128((__m128i *)(void *)(d + 2 * j + 8), _mm_unpackhi_epi16(a, b));
            }
        }
#endif
        for (; j < n; j++) {
            d[2 * j] = (int16_t)(x0[j] - xz);
            d[2 * j + 1] = (int16_t)(x1[j] - xz);
        }
    } else {
        const int8_t *x0 = (const int8_t *)X->data + a0, *x1 = (const int8_t *)X->data + a1;
        for (j = 0; j < n; j++) {
            d[2 * j] = (int16_t)(x0[j] - xz);
            d[2 * j + 1] = (int16_t)(x1[j] - xz);
        }
    }
}

/* A 1x1 convolution's columns are the input's rows: no window to walk.
 * Two channels at a time fill one reduction pair of each panel (an odd
 * last channel pairs with zeros: the panels start zeroed). */
static void pfvm__qc_pack_pointwise(const pfvm__qc_geom *g, const pfvm_tensor *X, pfvm__qi base, int32_t xz,
                                    int16_t *panels)
{
    pfvm__qi HW = g->H * g->W, kp, jb, step = g->K2 * 2 * PFVM__QG_NR;
    for (kp = 0; kp < g->K2; kp++) {
        int two = 2 * kp + 1 < g->K;
        for (jb = 0; jb * PFVM__QG_NR < HW; jb++) {
            int16_t *d = panels + jb * step + kp * 2 * PFVM__QG_NR;
            pfvm__qi j0 = jb * PFVM__QG_NR, n = HW - j0 < PFVM__QG_NR ? HW - j0 : PFVM__QG_NR, at = base + 2 * kp * HW + j0;
            if (two)
                pfvm__qc_pack_pairs(X, at, at + HW, n, xz, d);
            else
                pfvm__qc_pack_run(X, at, 1, n, xz, d);
        }
    }
}

/* Column panels of one image and group: x minus its zero point, 0 in the
 * padding. */
#ifdef PFVM__QG_DSP
/* a word at any int16 */
typedef uint32_t pfvm__qg_hword __attribute__((may_alias, aligned(2)));
/* n bytes minus the zero point (both halves of zz) into int16: four per
 * step (UXTB16 spreads bytes 0, 2 and 1, 3 into halves, SSUB16, PKHBT and
 * PKHTB put them back in order). */
static void pfvm__qc_u8_row(const uint8_t *x, pfvm__qi n, uint32_t zz, int16_t *d)
{
    for (; n >= 4; n -= 4, x += 4, d += 4) {
        uint32_t u = PFVM__QG_UWORD32(x), u02, u13, lo, hi;
        __asm__("uxtb16 %0, %2\n\t"
                "uxtb16 %1, %2, ror #8\n\t"
                "ssub16 %0, %0, %3\n\t"
                "ssub16 %1, %1, %3\n\t"
                : "=&r"(u02), "=&r"(u13)
                : "r"(u), "r"(zz));
        __asm__("pkhbt %0, %2, %3, lsl #16\n\t"
                "pkhtb %1, %3, %2, asr #16\n\t"
                : "=&r"(lo), "=&r"(hi)
                : "r"(u02), "r"(u13));
        ((pfvm__qg_hword *)(void *)d)[0] = lo;
        ((pfvm__qg_hword *)(void *)d)[1] = hi;
    }
    for (; n > 0; n--)
        *d++ = (int16_t)(*x++ - (int32_t)(zz & 0xffffu));
}
#endif

#ifdef PFVM__QG_DSP
/* Kernel position kk's first value in pfvm__qc_pack_planes's planes. */
static const int16_t *pfvm__qc_tap(const pfvm__qc_geom *g, const int16_t *planes, pfvm__qi PH, pfvm__qi PW, pfvm__qi kk)
{
    pfvm__qi kh = kk / g->KW % g->KH, kw = kk % g->KW;
    return planes + (kk / (g->KH * g->KW) * PH + kh * g->dh) * PW + kw * g->dw;
}

/* n columns of two kernel positions (a's values in the low halves, b's in
 * the high) as the panel's pair words: two columns of each from one LDR,
 * paired by PKHBT/PKHTB, four columns per step (about 1.75 instructions
 * per value, against 5 one by one; out of line: inlined, gcc -Os spills
 * its pointers). */
#define PFVM__QC_PAIR2(u, v, o)                                 \
    __asm__("pkhbt %0, %2, %3, lsl #16\n\t"                     \
            "pkhtb %1, %3, %2, asr #16\n\t"                     \
            : "=&r"((o)[0]), "=&r"((o)[1])                      \
            : "r"(u), "r"(v))
PFVM__Q_NOINLINE static void pfvm__qc_pair_run_dsp(const int16_t *a, const int16_t *b, pfvm__qi n, uint32_t *o)
{
    const int16_t *end = a + (n & ~(pfvm__qi)3);
    for (; a != end; a += 4, b += 4, o += 4) {
        uint32_t u0 = PFVM__QG_UWORD(a), v0 = PFVM__QG_UWORD(b), u1 = PFVM__QG_UWORD(a + 2), v1 = PFVM__QG_UWORD(b + 2);
        PFVM__QC_PAIR2(u0, v0, o);
        PFVM__QC_PAIR2(u1, v1, o + 2);
    }
    for (n &= 3; n > 0; n--)
        *o++ = (uint32_t)(uint16_t)*a++ | (uint32_t)(uint16_t)*b++ << 16;
}

/* Kernel positions a and b (a pair's halves, stride 1) of every output
 * row rs apart into the panels' pair words (d: the first panel's, the
 * next step words on), a panel's share of a row per pfvm__qc_pair_run_dsp. */
PFVM__Q_NOINLINE static void pfvm__qc_pair_rows(const pfvm__qc_geom *g, const int16_t *a, const int16_t *b, pfvm__qi rs,
                                                uint32_t *d, pfvm__qi step)
{
    pfvm__qi oh, ow, n, jj = 0;
    for (oh = 0; oh < g->OH; oh++, a += rs, b += rs)
        for (ow = 0; ow < g->OW; ow += n) {
            n = g->OW - ow < PFVM__QG_NR - jj ? g->OW - ow : PFVM__QG_NR - jj;
            pfvm__qc_pair_run_dsp(a + ow, b + ow, n, d + jj);
            jj += n;
            if (jj == PFVM__QG_NR) {
                jj = 0;
                d += step;
            }
        }
}

/* pfvm__qc_pack for a window on Cortex-M: each input channel of the group
 * minus its zero point into a padded int16 plane (zero padding), then
 * every kernel position's columns straight from the planes, without
 * bounds checks or calls (the runs of a row are short: 8 columns in the
 * digits CNN). planes: CG planes of PH x PW (pfvm__qc_work_bytes). */
static void pfvm__qc_pack_planes(const pfvm__qc_geom *g, const pfvm_tensor *X, pfvm__qi base, int32_t xz,
                                 int16_t *panels, int16_t *planes)
{
    pfvm__qi PH = (g->OH - 1) * g->sh + (g->KH - 1) * g->dh + 1, PW = (g->OW - 1) * g->sw + (g->KW - 1) * g->dw + 1;
    pfvm__qi c, kk, oh, ow, i, y, step = g->K2 * 2 * PFVM__QG_NR, KHW = g->KH * g->KW;
    pfvm__qi y1 = PH - g->pt < g->H ? PH - g->pt : g->H, w1 = PW - g->pl < g->W ? PW - g->pl : g->W;
    uint32_t zz = (uint32_t)(uint16_t)xz * 0x10001u;
    memset(planes, 0, (size_t)(g->CG * PH * PW) * sizeof(int16_t));
    for (c = 0; c < g->CG && y1 > 0 && w1 > 0; c++) {
        int16_t *d = planes + (c * PH + g->pt) * PW + g->pl;
        for (y = 0; y < y1; y++, d += PW) {
            pfvm__qi at = base + (c * g->H + y) * g->W;
            if (X->dtype == PFVM_UINT8)
                pfvm__qc_u8_row((const uint8_t *)X->data + at, w1, zz, d);
            else
                for (i = 0; i < w1; i++)
                    d[i] = (int16_t)(((const int8_t *)X->data)[at + i] - xz);
        }
    }
    for (kk = 0; kk < g->K; kk++) {
        pfvm__qi kh = kk / g->KW % g->KH, kw = kk % g->KW, jj = 0;
        const int16_t *s0 = planes + (kk / KHW * PH + kh * g->dh) * PW + kw * g->dw;
        int16_t *d = panels + (kk >> 1) * 2 * PFVM__QG_NR + (kk & 1);
        if (g->sw == 1 && !(kk & 1) && kk + 1 < g->K) { /* both halves of the pair words at once */
            pfvm__qc_pair_rows(g, s0, pfvm__qc_tap(g, planes, PH, PW, kk + 1), g->sh * PW, (uint32_t *)(void *)d, step / 2);
            kk++;
            continue;
        }
        for (oh = 0; oh < g->OH; oh++, s0 += g->sh * PW) {
            const int16_t *s = s0;
            for (ow = 0; ow < g->OW;) { /* the row's columns, a panel's share at a time */
                pfvm__qi take = g->OW - ow < PFVM__QG_NR - jj ? g->OW - ow : PFVM__QG_NR - jj;
                int16_t *dd = d + 2 * jj, *end = dd + 2 * take;
                if (g->sw == 1)
                    for (; dd != end; dd += 2)
                        *dd = *s++;
                else
                    for (; dd != end; dd += 2, s += g->sw)
                        *dd = *s;
                ow += take;
                jj += take;
                if (jj == PFVM__QG_NR) {
                    jj = 0;
                    d += step;
                }
            }
        }
    }
}
#endif

/* n bytes minus xz into int16 (vectorized in the dispatched clones). */
PFVM_DISPATCH static void pfvm__qc_widen_u8(const uint8_t *x, pfvm__qi n, int32_t xz, int16_t *d)
{
    pfvm__qi i = 0;
#ifdef PFVM__Q_SSE2
    /* explicit: gcc -O2 left the clones' loop scalar */
    const __m128i zero = _mm_setzero_si128(), z = _mm_set1_epi16((short)xz);
    for (; i + 16 <= n; i += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(x + i));
        _mm_storeu_si128((__m128i *)(void *)(d + i), _mm_sub_epi16(_mm_unpacklo_epi8(v, zero), z));
        _mm_storeu_si128((__m128i *)(void *)(d + i + 8), _mm_sub_epi16(_mm_unpackhi_epi8(v, zero), z));
    }
#endif
    for (; i < n; i++)
        d[i] = (int16_t)(x[i] - xz);
}

/* n bytes minus xz split into the even (e) and odd (o) positions' int16
 * (a row into its two phase planes at stride 2). */
static void pfvm__qc_split2_u8(const uint8_t *x, pfvm__qi n, int32_t xz, int16_t *e, int16_t *o)
{
    pfvm__qi i = 0;
#ifdef PFVM__Q_SSE2
    const __m128i lo8 = _mm_set1_epi16(0xff), z = _mm_set1_epi16((short)xz);
    for (; i + 16 <= n; i += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(x + i));
        _mm_storeu_si128((__m128i *)(void *)(e + i / 2), _mm_sub_epi16(_mm_and_si128(v, lo8), z));
        _mm_storeu_si128((__m128i *)(void *)(o + i / 2), _mm_sub_epi16(_mm_srli_epi16(v, 8), z));
    }
#endif
    for (; i + 2 <= n; i += 2) {
        e[i / 2] = (int16_t)(x[i] - xz);
        o[i / 2] = (int16_t)(x[i + 1] - xz);
    }
    if (i < n)
        e[i / 2] = (int16_t)(x[i] - xz);
}

/* Two rows of n columns into one panel row's int16 pairs (s1 NULL: the
 * first halves only). Runs are short (at most a panel's 16 columns):
 * inline, and 8 columns per SSE2 interleave where there is SSE2. */
static void pfvm__qc_pair_run(const int16_t *s0, const int16_t *s1, pfvm__qi n, int16_t *d)
{
    pfvm__qi i = 0;
    if (!s1) {
        for (; i < n; i++)
            d[2 * i] = s0[i];
        return;
    }
#ifdef PFVM__Q_SSE2
    for (; i + 8 <= n; i += 8) {
        __m128i x = _mm_loadu_si128((const __m128i *)(const void *)(s0 + i));
        __m128i y = _mm_loadu_si128((const __m128i *)(const void *)(s1 + i));
        _mm_storeu_si128((__m128i *)(void *)(d + 2 * i), _mm_unpacklo_epi16(x, y));
        _mm_storeu_si128((__m128i *)(void *)(d + 2 * i + 8), _mm_unpackhi_epi16(x, y));
    }
#endif
    for (; i < n; i++) {
        d[2 * i] = s0[i];
        d[2 * i + 1] = s1[i];
    }
}

/* pfvm__qc_pack for a window (x86 and portable C): each input channel of
 * the group minus its zero point into a padded int16 plane, then every
 * reduction pair's columns from two planes' rows at once, without bounds
 * checks (the padding is in the planes). With a horizontal stride s each
 * plane is s phase planes (column c in phase c % s at c / s, as the
 * depthwise kernel's), so that every run is contiguous. An odd last
 * position leaves the second halves at zero (the panels start zeroed).
 * planes: CG x s phase planes of PH x PWs (pfvm__qc_work_bytes). */
static void pfvm__qc_pack_windows(const pfvm__qc_geom *g, const pfvm_tensor *X, pfvm__qi base, int32_t xz,
                                  int16_t *panels, int16_t *planes)
{
    pfvm__qi PH, PW, PWs, c, kp, oh, ow, y, i, ph, step = g->K2 * 2 * PFVM__QG_NR, KHW = g->KH * g->KW, sw = g->sw;
    pfvm__qi y1, w1, kk[2];
    pfvm__qc_plane_dims(g, &PH, &PW);
    PWs = (PW + sw - 1) / sw;
    y1 = PH - g->pt < g->H ? PH - g->pt : g->H, w1 = PW - g->pl < g->W ? PW - g->pl : g->W;
    memset(planes, 0, (size_t)(g->CG * sw * PH * PWs) * sizeof(int16_t));
    for (c = 0; c < g->CG && y1 > 0 && w1 > 0; c++)
        for (y = 0; y < y1; y++) {
            pfvm__qi at = base + (c * g->H + y) * g->W;
            int16_t *d = planes + (c * sw * PH + g->pt + y) * PWs;
            if (sw == 1 && X->dtype == PFVM_UINT8) {
                pfvm__qc_widen_u8((const uint8_t *)X->data + at, w1, xz, d + g->pl);
                continue;
            }
            if (sw == 2 && X->dtype == PFVM_UINT8) {
                pfvm__qc_split2_u8((const uint8_t *)X->data + at, w1, xz, d + g->pl % 2 * PH * PWs + g->pl / 2,
                                   d + (g->pl + 1) % 2 * PH * PWs + (g->pl + 1) / 2);
                continue;
            }
            for (ph = 0; ph < sw; ph++) { /* input columns i with (pl + i) % sw == ph */
                pfvm__qi i0 = ((ph - g->pl) % sw + sw) % sw;
                int16_t *o = d + ph * PH * PWs + (g->pl + i0) / sw;
                if (X->dtype == PFVM_UINT8)
                    for (i = i0; i < w1; i += sw)
                        *o++ = (int16_t)(((const uint8_t *)X->data)[at + i] - xz);
                else
                    for (i = i0; i < w1; i += sw)
                        *o++ = (int16_t)(((const int8_t *)X->data)[at + i] - xz);
            }
        }
    for (kp = 0; kp < g->K2; kp++) {
        const int16_t *r[2];
        pfvm__qi jj = 0, t;
        int16_t *d = panels + kp * 2 * PFVM__QG_NR;
        kk[0] = 2 * kp, kk[1] = 2 * kp + 1;
        for (t = 0; t < 2; t++) {
            pfvm__qi col = kk[t] % g->KW * g->dw;
            r[t] = kk[t] < g->K ? planes + ((kk[t] / KHW * sw + col % sw) * PH + kk[t] / g->KW % g->KH * g->dh) * PWs + col / sw
                                : NULL;
        }
        for (oh = 0; oh < g->OH; oh++, r[0] += g->sh * PWs, r[1] = r[1] ? r[1] + g->sh * PWs : NULL)
            for (ow = 0; ow < g->OW;) { /* the row's columns, a panel's share at a time */
                pfvm__qi take = g->OW - ow < PFVM__QG_NR - jj ? g->OW - ow : PFVM__QG_NR - jj;
                pfvm__qc_pair_run(r[0] + ow, r[1] ? r[1] + ow : NULL, take, d + 2 * jj);
                ow += take;
                jj += take;
                if (jj == PFVM__QG_NR) {
                    jj = 0;
                    d += step;
                }
            }
    }
}

static void pfvm__qc_pack(const pfvm__qc_geom *g, const pfvm_tensor *X, pfvm__qi base, int32_t xz, int16_t *panels)
{
    pfvm__qi OHW = g->OH * g->OW, kk, oh, ow, npan = (OHW + PFVM__QG_NR - 1) / PFVM__QG_NR;
    pfvm__qi step = g->K2 * 2 * PFVM__QG_NR, jb;
    if (pfvm__qc_is_pointwise(g) || pfvm_q_gemm_kind() != 1) {
        /* these packers write both halves of every pair of every column
         * below OHW (an odd K's last pair: the first halves): zeroing the
         * rest only saves a pass over megabytes of panels */
        if (OHW % PFVM__QG_NR)
            memset(panels + (npan - 1) * step, 0, (size_t)step * sizeof(int16_t));
        for (jb = 0; g->K % 2 && jb < npan; jb++)
            memset(panels + jb * step + (g->K2 - 1) * 2 * PFVM__QG_NR, 0, 2 * PFVM__QG_NR * sizeof(int16_t));
    } else
        memset(panels, 0, (size_t)(npan * step) * sizeof(int16_t));
    if (pfvm__qc_is_pointwise(g)) {
        pfvm__qc_pack_pointwise(g, X, base, xz, panels);
        return;
    }
#ifdef PFVM__QG_DSP
    if (pfvm_q_gemm_kind() == 1) {
        pfvm__qc_pack_planes(g, X, base, xz, panels, panels + npan * g->K2 * 2 * PFVM__QG_NR);
        return;
    }
#endif
    if (pfvm_q_gemm_kind() != 1) {
        pfvm__qc_pack_windows(g, X, base, xz, panels, panels + npan * g->K2 * 2 * PFVM__QG_NR);
        return;
    }
    /* per kernel position and output row, the valid columns are one run:
     * walk it with a running panel position instead of dividing */
    for (kk = 0; kk < g->K; kk++) {
        pfvm__qi c = kk / (g->KH * g->KW), kh = kk / g->KW % g->KH, kw = kk % g->KW;
        pfvm__qi t = g->pl - kw * g->dw, u = g->W - 1 + g->pl - kw * g->dw;
        pfvm__qi ow_lo = t <= 0 ? 0 : (t + g->sw - 1) / g->sw, ow_hi = u < 0 ? 0 : u / g->sw + 1;
        pfvm__qi plane = base + c * g->H * g->W;
        int16_t *col0 = panels + (kk / 2) * 2 * PFVM__QG_NR + (kk & 1);
        ow_hi = ow_hi < g->OW ? ow_hi : g->OW;
        for (oh = 0; oh < g->OH && ow_lo < ow_hi; oh++) {
            pfvm__qi ih = oh * g->sh - g->pt + kh * g->dh, j = oh * g->OW + ow_lo, jj = j % PFVM__QG_NR, at, take;
            int16_t *d = col0 + (j / PFVM__QG_NR) * step;
            if (ih < 0 || ih >= g->H)
                continue;
            at = plane + ih * g->W + ow_lo * g->sw - t;
            for (ow = ow_lo; ow < ow_hi; ow += take, at += take * g->sw, jj = 0, d += step) {
                take = ow_hi - ow < PFVM__QG_NR - jj ? ow_hi - ow : PFVM__QG_NR - jj;
                pfvm__qc_pack_run(X, at, g->sw, take, xz, d + 2 * jj);
            }
        }
    }
}

typedef struct pfvm__qc_out {
    const int32_t *mult, *bias;
    const int32_t *bias2; /* per group [Mp][2]: each bias twice, the SMLAD tiles' starting sums */
    const int *shift;
    int32_t zp, lo, hi;
    pfvm_tensor *Y;
} pfvm__qc_out;

#ifdef PFVM__QG_AVX2
/* pfvm_q_requantize on 8 lanes, for shifts in [31, 61] (the multiplier is
 * below 1, so results fit 32 bits): the products move up by 2^62 so that
 * logical shifts floor them, with the same half-up rounding. Returns how
 * many elements it stored (a multiple of 8). */
__attribute__((target("avx2"))) static int64_t pfvm__qc_store_avx2(const int32_t *acc, int64_t n, int32_t b, int32_t mult,
                                                                    int sh, int32_t zp, int32_t lo, int32_t hi, void *out,
                                                                    int u8)
{
    const __m256i vb = _mm256_set1_epi32(b), vm = _mm256_set1_epi32(mult);
    const __m256i off = _mm256_set1_epi64x(((int64_t)1 << 62) + ((int64_t)1 << (sh - 1)));
    const __m256i offs = _mm256_set1_epi64x((int64_t)1 << (62 - sh)), vzp = _mm256_set1_epi32(zp);
    const __m256i vlo = _mm256_set1_epi32(lo), vhi = _mm256_set1_epi32(hi);
    const __m128i cnt = _mm_cvtsi32_si128(sh);
    int64_t j;
    for (j = 0; j + 8 <= n; j += 8) {
        __m256i a = _mm256_add_epi32(_mm256_loadu_si256((const __m256i *)(const void *)(acc + j)), vb);
        __m256i qe = _mm256_srl_epi64(_mm256_add_epi64(_mm256_mul_epi32(a, vm), off), cnt);
        __m256i qo = _mm256_srl_epi64(_mm256_add_epi64(_mm256_mul_epi32(_mm256_srli_epi64(a, 32), vm), off), cnt);
        __m256i r = _mm256_blend_epi32(_mm256_sub_epi64(qe, offs), _mm256_slli_epi64(_mm256_sub_epi64(qo, offs), 32), 0xAA);
        __m256i r16, r8;
        int32_t w0, w1;
        r = _mm256_max_epi32(_mm256_min_epi32(_mm256_add_epi32(r, vzp), vhi), vlo);
        r16 = _mm256_packs_epi32(r, r);
        r8 = u8 ? _mm256_packus_epi16(r16, r16) : _mm256_packs_epi16(r16, r16);
        w0 = _mm256_extract_epi32(r8, 0);
        w1 = _mm256_extract_epi32(r8, 4);
        memcpy((char *)out + j, &w0, 4);
        memcpy((char *)out + j + 4, &w1, 4);
    }
    return j;
}
#endif

/* pfvm_q_scale(acc, mult, 32 + s) from the product's high word: adding
 * 2^(s-1) to that word adds the half of 2^(32+s) to the product, and the
 * low word cannot carry into the result. On the DSP extension one SMMLA
 * (the product's high word plus a word) and an ASR. A macro: the
 * requantization loops must not call per element. */
#ifdef PFVM__QG_DSP
static inline int32_t pfvm__q_smmla(int32_t a, int32_t b, int32_t c)
{
    int32_t r;
    __asm__("smmla %0, %1, %2, %3" : "=r"(r) : "r"(a), "r"(b), "r"(c));
    return r;
}
#define PFVM__Q_SCALE_HI(acc, mult, s, rnd) (pfvm__q_smmla((acc), (mult), (rnd)) >> (s))
#else
#define PFVM__Q_SCALE_HI(acc, mult, s, rnd) ((int32_t)(((int64_t)(acc) * (mult) + (int64_t)(rnd) * ((int64_t)1 << 32)) >> 32) >> (s))
#endif

PFVM_INTERNAL int32_t pfvm_q_scale_hi(int32_t acc, int32_t mult, int s)
{
    return PFVM__Q_SCALE_HI(acc, mult, s, 1 << (s - 1));
}

#ifdef PFVM__QG_DSP
#define PFVM__Q_SAT_U8(v) __usat((v), 8)
#define PFVM__Q_SAT_S8(v) __ssat((v), 8)
#else
#define PFVM__Q_SAT_U8(v) ((v) < 0 ? 0 : (v) > 255 ? 255 : (v))
#define PFVM__Q_SAT_S8(v) ((v) < -128 ? -128 : (v) > 127 ? 127 : (v))
#endif

/* Requantizes n sums into 8-bit outputs (the type's whole range), for
 * shifts in [33, 62] (s = shift - 32). The sums come in pairs: acc[0],
 * acc[1], then acc[step], acc[step + 1]... (step 2: contiguous; 8: a row
 * of the SMLAD tiles' sums). When it fits, the zero point rides in the
 * rounding term (adding zp * 2^s before the shift adds zp after it). */
#define PFVM__QC_STORE_PAIRS(T, SAT, ZP)                                                  \
    do {                                                                                  \
        T *y = (T *)out, *end = y + (n & ~(pfvm__qi)1);                                   \
        for (; y != end; y += 2, acc += step) {                                           \
            int32_t v0 = PFVM__Q_SCALE_HI(acc[0] + b, mult, s, rnd) ZP;                   \
            int32_t v1 = PFVM__Q_SCALE_HI(acc[1] + b, mult, s, rnd) ZP;                   \
            y[0] = (T)SAT(v0);                                                            \
            y[1] = (T)SAT(v1);                                                            \
        }                                                                                 \
        if (n & 1) {                                                                      \
            int32_t v0 = PFVM__Q_SCALE_HI(acc[0] + b, mult, s, rnd) ZP;                   \
            y[0] = (T)SAT(v0);                                                            \
        }                                                                                 \
    } while (0)
/* b == 0 (the SMLAD tiles' sums have their biases): one ADD less */
#define PFVM__QC_STORE_PAIRS_B(T, SAT, ZP)              \
    do {                                                \
        if (b) {                                        \
            PFVM__QC_STORE_PAIRS(T, SAT, ZP);           \
        } else {                                        \
            const int32_t b = 0;                        \
            PFVM__QC_STORE_PAIRS(T, SAT, ZP);           \
        }                                               \
    } while (0)

PFVM__Q_NOINLINE static void pfvm__qc_store_hi(const int32_t *acc, pfvm__qi step, pfvm__qi n, int32_t b, int32_t mult,
                                               int s, int32_t zp, void *out, int u8)
{
    int32_t rnd = 1 << (s - 1);
    if (s <= 21) { /* |rnd + zp * 2^s| + |acc * mult / 2^32| < 2^31 */
        rnd += (int32_t)((uint32_t)zp << s);
        if (u8)
            PFVM__QC_STORE_PAIRS_B(uint8_t, PFVM__Q_SAT_U8, );
        else
            PFVM__QC_STORE_PAIRS_B(int8_t, PFVM__Q_SAT_S8, );
    } else if (u8)
        PFVM__QC_STORE_PAIRS(uint8_t, PFVM__Q_SAT_U8, +zp);
    else
        PFVM__QC_STORE_PAIRS(int8_t, PFVM__Q_SAT_S8, +zp);
}

#ifdef PFVM__QG_AVX2
/* pfvm__qc_store_avx2 for shifts 32 + s, s in [1, 30], and the output
 * type's whole range: pfvm__qg_requant8 and saturating packs, 16 sums per
 * step. Returns how many it stored (a multiple of 16). */
__attribute__((target("avx2"))) static int64_t pfvm__qc_store_avx2_hi(const int32_t *acc, int64_t n, int32_t b, int32_t mult,
                                                                       int s, int32_t zp, void *out, int u8)
{
    const __m256i vb = _mm256_set1_epi32(b), vm = _mm256_set1_epi32(mult), rnd = _mm256_set1_epi32((int32_t)1 << (s - 1));
    const __m256i vzp = _mm256_set1_epi32(zp), order = _mm256_setr_epi32(0, 4, 1, 5, 0, 0, 0, 0);
    const __m128i cnt = _mm_cvtsi32_si128(s);
    int64_t j;
    for (j = 0; j + 16 <= n; j += 16) {
        __m256i a0 = _mm256_add_epi32(_mm256_loadu_si256((const __m256i *)(const void *)(acc + j)), vb);
        __m256i a1 = _mm256_add_epi32(_mm256_loadu_si256((const __m256i *)(const void *)(acc + j + 8)), vb);
        __m256i p16 = _mm256_packs_epi32(pfvm__qg_requant8(a0, vm, rnd, cnt, vzp), pfvm__qg_requant8(a1, vm, rnd, cnt, vzp));
        __m256i p8 = u8 ? _mm256_packus_epi16(p16, p16) : _mm256_packs_epi16(p16, p16);
        _mm_storeu_si128((__m128i *)(void *)((char *)out + j),
                         _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(p8, order)));
    }
    return j;
}
#endif

static void pfvm__qc_store(const pfvm__qc_out *o, pfvm__qi m, pfvm__qi at, const int32_t *acc, pfvm__qi n)
{
    pfvm__qi j;
    int32_t b = o->bias ? o->bias[m] : 0, lo = o->lo, hi = o->hi, zp = o->zp, mult = o->mult[m];
    int sh = o->shift[m];
#ifdef PFVM__QG_AVX2
    if (sh >= 33 && sh <= 62 && pfvm_q_gemm_kind() == 2) { /* lo, hi: the type's range (pfvm__qc_fast) */
        int64_t done = pfvm__qc_store_avx2_hi(acc, n, b, mult, sh - 32, zp, (char *)o->Y->data + at,
                                              o->Y->dtype == PFVM_UINT8);
        acc += done;
        at += done;
        n -= done;
    }
    if (sh >= 31 && sh <= 61 && pfvm_q_gemm_kind() == 2) {
        int64_t done = pfvm__qc_store_avx2(acc, n, b, mult, sh, zp, lo, hi,
                                           (char *)o->Y->data + at, o->Y->dtype == PFVM_UINT8);
        acc += done;
        at += done;
        n -= done;
    }
#endif
    if (sh >= 33 && sh <= 62) {
        pfvm__qc_store_hi(acc, 2, n, b, mult, sh - 32, zp, (char *)o->Y->data + at, o->Y->dtype == PFVM_UINT8);
        return;
    }
    if (sh < 1 || sh > 62) {
        for (j = 0; j < n; j++) {
            int32_t v = pfvm_q_requantize(acc[j] + b, mult, sh, zp, lo, hi);
            if (o->Y->dtype == PFVM_UINT8)
                ((uint8_t *)o->Y->data)[at + j] = (uint8_t)v;
            else
                ((int8_t *)o->Y->data)[at + j] = (int8_t)v;
        }
        return;
    }
    if (o->Y->dtype == PFVM_UINT8) {
        uint8_t *y = (uint8_t *)o->Y->data + at;
        for (j = 0; j < n; j++) {
            int64_t p = (int64_t)(acc[j] + b) * mult, v = PFVM__Q_SHR_UP(p, sh) + zp;
            y[j] = (uint8_t)(v < lo ? lo : v > hi ? hi : v);
        }
    } else {
        int8_t *y = (int8_t *)o->Y->data + at;
        for (j = 0; j < n; j++) {
            int64_t p = (int64_t)(acc[j] + b) * mult, v = PFVM__Q_SHR_UP(p, sh) + zp;
            y[j] = (int8_t)(v < lo ? lo : v > hi ? hi : v);
        }
    }
}

/* Requantizes row r of a block's sums in the SMLAD tile's layout
 * ([column pair][row][2], biases added), n columns, into y. */
static void pfvm__qc_store_tiles(const pfvm__qc_out *o, pfvm__qi m, pfvm__qi at, const int32_t *acc, int r, pfvm__qi n)
{
    int32_t row[PFVM__QG_NR];
    int sh = o->shift[m];
    pfvm__qi j;
    pfvm__qc_out nb;
    if (sh >= 33 && sh <= 62) {
        pfvm__qc_store_hi(acc + 2 * r, 8, n, 0, o->mult[m], sh - 32, o->zp, (char *)o->Y->data + at,
                          o->Y->dtype == PFVM_UINT8);
        return;
    }
    for (j = 0; j < n; j++)
        row[j] = acc[(j >> 1) * 8 + 2 * r + (j & 1)];
    nb = *o;
    nb.bias = NULL;
    pfvm__qc_store(&nb, m, at, row, n);
}

#ifdef PFVM__QG_AVX2
/* The AVX2 kernel's requantization of block mb of panel jb, when every
 * row's shift is one it takes (33 to 62). */
static int pfvm__qc_epi(const pfvm__qc_geom *g, const pfvm__qc_out *o, pfvm__qi n, pfvm__qi gg, pfvm__qi mb, pfvm__qi jb,
                        int cols, pfvm__qg_epi *e)
{
    pfvm__qi OHW = g->OH * g->OW;
    int c;
    e->zp = o->zp;
    e->cols = cols;
    e->u8 = o->Y->dtype == PFVM_UINT8;
    for (c = 0; c < PFVM__QG_MR; c++) {
        pfvm__qi m = gg * g->MG + mb + c;
        int sh;
        e->y[c] = NULL;
        e->bias[c] = e->mult[c] = e->rnd[c] = 0;
        e->s[c] = 1;
        if (mb + c >= g->MG)
            continue;
        sh = o->shift[m];
        if (sh < 33 || sh > 62)
            return 0;
        e->bias[c] = o->bias ? o->bias[m] : 0;
        e->mult[c] = o->mult[m];
        e->s[c] = sh - 32;
        e->rnd[c] = (int32_t)1 << (sh - 33);
        e->y[c] = (char *)o->Y->data + (n * g->M + m) * OHW + jb * PFVM__QG_NR;
    }
    return 1;
}
#endif

static void pfvm__qc_gemm(const pfvm__qc_geom *g, const int16_t *wp, const int16_t *panels, const pfvm__qc_out *o,
                          pfvm__qi n, pfvm__qi gg)
{
    pfvm__qi OHW = g->OH * g->OW, jb, mb, npan = (OHW + PFVM__QG_NR - 1) / PFVM__QG_NR;
    int kind = pfvm_q_gemm_kind(), c;
    int32_t acc[PFVM__QG_MR * PFVM__QG_NR];
    for (jb = 0; jb < npan; jb++) {
        pfvm__qi cols = OHW - jb * PFVM__QG_NR < PFVM__QG_NR ? OHW - jb * PFVM__QG_NR : PFVM__QG_NR;
        for (mb = 0; mb < g->MG; mb += PFVM__QG_MR) {
#ifdef PFVM__QG_AVX2
            pfvm__qg_epi e;
            if (kind == 2 && pfvm__qc_epi(g, o, n, gg, mb, jb, (int)cols, &e)) {
                pfvm__qg_kernel_avx2(wp + mb * 2 * g->K2, panels + jb * g->K2 * 2 * PFVM__QG_NR, g->K2, NULL, &e);
                continue;
            }
#endif
            pfvm__qg_kernel(kind, wp + mb * 2 * g->K2, panels + jb * g->K2 * 2 * PFVM__QG_NR, g->K2, acc, (int)cols,
                            o->bias2 + 2 * (gg * g->Mp + mb));
            for (c = 0; c < PFVM__QG_MR && mb + c < g->MG; c++) {
                pfvm__qi m = gg * g->MG + mb + c, at = (n * g->M + m) * OHW + jb * PFVM__QG_NR;
                if (kind == 1)
                    pfvm__qc_store_tiles(o, m, at, acc, c, cols);
                else
                    pfvm__qc_store(o, m, at, acc + c * PFVM__QG_NR, cols);
            }
        }
    }
}

/* ---- the VNNI GEMM: u8 panels, s8 weights, vpdpbusd ------------------------------------------ *
 *
 * Four reduction positions per int32 lane: weight blocks of PFVM__QG_MR
 * rows, wv[b][kq][r][4] = w[4b+r][4kq..4kq+3] minus the zero points (the
 * path needs them in [-128, 127]); panels of PFVM__QG_NR columns,
 * panel[kq][j][4] = x[4kq..4kq+3][j], the raw uint8 activations (padding:
 * their zero point). The zero point comes off through the weights' row
 * sums: sum (x - xz) w = sum x w - xz sum w, folded into each row's
 * starting sum (int32 wraparound, as the other kernels' sums). Positions
 * past K have zero weights. */
#ifdef PFVM__QG_AVX2
#define PFVM__QV 1
/* The shapes the direct path takes: a window wider than 1x1; at a
 * stride over 1 (a stem's few channels), only where padding the channels
 * to a multiple of 4 adds at most 1/8 to the sums. */
static int pfvm__qv_direct_shape(const pfvm__qc_geom *g)
{
    return g->KH * g->KW > 1 && !pfvm__qc_is_dw(g) &&
           ((g->sh == 1 && g->sw == 1) || (g->CG + 3) / 4 * 4 * 8 <= 9 * g->CG);
}

static int pfvm__qv_direct(const pfvm__qc_geom *g)
{
    return pfvm__qv_direct_shape(g) && pfvm__qv_have512() && !pfvm__qv_narrow;
}

/* Lanes of four reduction positions per weight row, in the order the
 * path's panels have. */
static pfvm__qi pfvm__qv_k4(const pfvm__qc_geom *g, int direct)
{
    return direct ? (g->CG + 3) / 4 * g->KH * g->KW : (g->K + 3) / 4;
}

/* Weight rows per group in wv: the direct path packs blocks of 16 rows
 * (pfvm__qv_weights), which both of its tiles read; the others Mp. */
static pfvm__qi pfvm__qv_rows(const pfvm__qc_geom *g, int direct)
{
    return direct ? (g->MG + 15) / 16 * 16 : g->Mp;
}

/* The VNNI kernels multiply signed bytes: every weight minus its row's
 * zero point (nwz: one per tensor or one per row of K) must fit int8. */
static int pfvm__qv_weights_fit(const pfvm__qc_geom *g, const pfvm_tensor *W, const pfvm_tensor *wz)
{
    pfvm__qi i, n = g->M * g->K, nwz = pfvm_tensor_numel(wz);
    if (nwz < 1)
        return 0;
    for (i = 0; i < n; i++) {
        int32_t v = pfvm__q_at(W, i) - pfvm__q_at(wz, nwz == 1 ? 0 : i / g->K);
        if (v < -128 || v > 127)
            return 0;
    }
    return 1;
}

static int pfvm__qv_usable(const pfvm__qc_geom *g, const pfvm_tensor *W, const pfvm_tensor *wz)
{
    return pfvm_q_vnni() && !pfvm__qc_is_dw(g) && g->K >= 8 && pfvm__qv_weights_fit(g, W, wz);
}

/* The reduction position kk (channel, kh, kw) in the direct order of
 * pfvm__qv_direct_conv: lane (channel/4, kh, kw), byte channel%4. */
static pfvm__qi pfvm__qv_direct_pos(const pfvm__qc_geom *g, pfvm__qi kk)
{
    pfvm__qi c = kk / (g->KH * g->KW), tap = kk % (g->KH * g->KW);
    return ((c / 4) * g->KH * g->KW + tap) * 4 + c % 4;
}

/* direct: in the order of the direct path (pfvm__qv_direct_pos), blocks
 * of 16 rows, wv[b][kq][16][4] (a zmm of 16 rows' words per kq for the
 * channel tile, pfvm__qv_kernel_ch); else the im2col panels', blocks of
 * PFVM__QG_MR rows. */
static void pfvm__qv_weights(const pfvm_tensor *W, const pfvm_tensor *wz, const pfvm__qc_geom *g, int direct, int8_t *wv,
                             int32_t *wsum)
{
    pfvm__qi nwz = pfvm_tensor_numel(wz), K4 = pfvm__qv_k4(g, direct), R = pfvm__qv_rows(g, direct), gg, c, kk;
    pfvm__qi br = direct ? 16 : PFVM__QG_MR; /* rows a block */
    memset(wv, 0, (size_t)(g->group * R * 4 * K4));
    for (gg = 0; gg < g->group; gg++)
        for (c = 0; c < g->Mp; c++) {
            pfvm__qi m = gg * g->MG + c;
            int8_t *blk = wv + (gg * R + c / br * br) * 4 * K4 + c % br * 4;
            int32_t z = c < g->MG ? pfvm__q_at(wz, nwz == 1 ? 0 : m) : 0, sum = 0;
            for (kk = 0; c < g->MG && kk < g->K; kk++) {
                int32_t v = pfvm__q_at(W, m * g->K + kk) - z;
                pfvm__qi at = direct ? pfvm__qv_direct_pos(g, kk) : kk;
                blk[at / 4 * 4 * br + at % 4] = (int8_t)v;
                sum += v;
            }
            wsum[gg * g->Mp + c] = sum;
        }
}

/* pfvm__qv_row at horizontal stride 1 with AVX-512 BW: each output row
 * 64 columns at a time as one masked load (the input's columns, the zero
 * point elsewhere: masked-off lanes read nothing) and one masked store,
 * where memset, memcpy and memset cost three library calls per row.
 * ih0: the input row of output row 0; t: the input column of output
 * column 0 negated; [ow_lo, ow_hi): the columns inside the input. */
__attribute__((target("avx2,avx512f,avx512bw"))) static void pfvm__qv_row_s1(const pfvm__qc_geom *g, const uint8_t *plane,
                                                                              pfvm__qi ih0, pfvm__qi t, pfvm__qi ow_lo,
                                                                              pfvm__qi ow_hi, uint8_t xz, uint8_t *d)
{
    const __m512i z = _mm512_set1_epi8((char)xz);
    pfvm__qi oh, o;
    for (oh = 0; oh < g->OH; oh++, d += g->OW) {
        pfvm__qi ih = ih0 + oh * g->sh;
        int inside = ih >= 0 && ih < g->H;
        for (o = 0; o < g->OW; o += 64) {
            pfvm__qi n = g->OW - o < 64 ? g->OW - o : 64, lo = ow_lo - o > 0 ? ow_lo - o : 0;
            pfvm__qi hi = ow_hi - o < n ? ow_hi - o : n;
            __mmask64 st = n == 64 ? ~(__mmask64)0 : ((__mmask64)1 << n) - 1, ld = 0;
            const uint8_t *s = d; /* any readable address when nothing is loaded */
            if (inside && hi > lo) {
                ld = (hi == 64 ? ~(__mmask64)0 : ((__mmask64)1 << hi) - 1) & ~(((__mmask64)1 << lo) - 1);
                s = plane + ih * g->W + (o - t);
            }
            _mm512_mask_storeu_epi8(d + o, st, _mm512_mask_loadu_epi8(z, ld, s));
        }
    }
}

/* One im2col row (reduction position kk) of one image and group: OH*OW
 * bytes, the zero point in the padding. */
static void pfvm__qv_row(const pfvm__qc_geom *g, const uint8_t *x, pfvm__qi kk, uint8_t xz, uint8_t *d)
{
    pfvm__qi c = kk / (g->KH * g->KW), kh = kk / g->KW % g->KH, kw = kk % g->KW, oh, i;
    pfvm__qi t = g->pl - kw * g->dw, u = g->W - 1 + g->pl - kw * g->dw;
    pfvm__qi ow_lo = t <= 0 ? 0 : (t + g->sw - 1) / g->sw, ow_hi = u < 0 ? 0 : u / g->sw + 1;
    const uint8_t *plane = x + c * g->H * g->W;
    ow_hi = ow_hi < g->OW ? ow_hi : g->OW;
    ow_lo = ow_lo < ow_hi ? ow_lo : ow_hi;
    if (g->sw == 1 && pfvm__qv_have512() && !pfvm__qv_narrow) {
        pfvm__qv_row_s1(g, plane, kh * g->dh - g->pt, t, ow_lo, ow_hi, xz, d);
        return;
    }
    for (oh = 0; oh < g->OH; oh++, d += g->OW) {
        pfvm__qi ih = oh * g->sh - g->pt + kh * g->dh;
        const uint8_t *s;
        if (ih < 0 || ih >= g->H || ow_lo == ow_hi) {
            memset(d, xz, (size_t)g->OW);
            continue;
        }
        memset(d, xz, (size_t)ow_lo);
        memset(d + ow_hi, xz, (size_t)(g->OW - ow_hi));
        s = plane + ih * g->W + ow_lo * g->sw - t;
        i = ow_lo;
        if (g->sw == 1) {
            memcpy(d + ow_lo, s, (size_t)(ow_hi - ow_lo));
            continue;
        }
        if (g->sw == 2) /* the even bytes of 32, while a later element is read (s + 32 is in the input) */
            for (; i + 16 < ow_hi; i += 16, s += 32) {
                const __m128i lo8 = _mm_set1_epi16(0xff);
                __m128i a = _mm_and_si128(_mm_loadu_si128((const __m128i *)(const void *)s), lo8);
                __m128i b = _mm_and_si128(_mm_loadu_si128((const __m128i *)(const void *)(s + 16)), lo8);
                _mm_storeu_si128((__m128i *)(void *)(d + i), _mm_packus_epi16(a, b));
            }
        for (; i < ow_hi; i++, s += g->sw)
            d[i] = *s;
    }
}

/* pfvm__qv_interleave's first columns, 64 at a time in zmm registers:
 * the bytes of the four rows interleaved within each 128-bit lane (lane
 * L: columns 16L.. in four 16-byte quarters q0..q3), then a 4x4 transpose
 * of the lanes puts each 16-column group's quarters together. Returns the
 * columns done (a multiple of 64). */
__attribute__((target("avx2,avx512f,avx512bw"))) static pfvm__qi
pfvm__qv_interleave64(const uint8_t *r0, const uint8_t *r1, const uint8_t *r2, const uint8_t *r3, pfvm__qi n, uint8_t *d,
                      pfvm__qi step)
{
    pfvm__qi j = 0;
    for (; j + 64 <= n; j += 64, d += 4 * step) {
        __m512i a = _mm512_loadu_si512((const void *)(r0 + j)), b = _mm512_loadu_si512((const void *)(r1 + j));
        __m512i c = _mm512_loadu_si512((const void *)(r2 + j)), e = _mm512_loadu_si512((const void *)(r3 + j));
        __m512i ab0 = _mm512_unpacklo_epi8(a, b), ab1 = _mm512_unpackhi_epi8(a, b);
        __m512i ce0 = _mm512_unpacklo_epi8(c, e), ce1 = _mm512_unpackhi_epi8(c, e);
        __m512i q0 = _mm512_unpacklo_epi16(ab0, ce0), q1 = _mm512_unpackhi_epi16(ab0, ce0);
        __m512i q2 = _mm512_unpacklo_epi16(ab1, ce1), q3 = _mm512_unpackhi_epi16(ab1, ce1);
        __m512i t0 = _mm512_shuffle_i32x4(q0, q1, 0x44), t1 = _mm512_shuffle_i32x4(q2, q3, 0x44); /* lanes 0, 1 */
        __m512i t2 = _mm512_shuffle_i32x4(q0, q1, 0xEE), t3 = _mm512_shuffle_i32x4(q2, q3, 0xEE); /* lanes 2, 3 */
        _mm512_storeu_si512((void *)d, _mm512_shuffle_i32x4(t0, t1, 0x88));
        _mm512_storeu_si512((void *)(d + step), _mm512_shuffle_i32x4(t0, t1, 0xDD));
        _mm512_storeu_si512((void *)(d + 2 * step), _mm512_shuffle_i32x4(t2, t3, 0x88));
        _mm512_storeu_si512((void *)(d + 3 * step), _mm512_shuffle_i32x4(t2, t3, 0xDD));
    }
    return j;
}

/* Four rows of n bytes as one panel row per PFVM__QG_NR columns
 * (panel[j][4]), step bytes between panels; past n, zeros. */
static void pfvm__qv_interleave(const uint8_t *r0, const uint8_t *r1, const uint8_t *r2, const uint8_t *r3, pfvm__qi n,
                                uint8_t *d, pfvm__qi step)
{
    pfvm__qi j = 0, i;
    if (n >= 64 && pfvm__qv_have512() && !pfvm__qv_narrow) {
        j = pfvm__qv_interleave64(r0, r1, r2, r3, n, d, step);
        d += j / PFVM__QG_NR * step;
    }
    for (; j + 16 <= n; j += 16, d += step) {
        __m128i a = _mm_loadu_si128((const __m128i *)(const void *)(r0 + j));
        __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(r1 + j));
        __m128i c = _mm_loadu_si128((const __m128i *)(const void *)(r2 + j));
        __m128i e = _mm_loadu_si128((const __m128i *)(const void *)(r3 + j));
        __m128i ab0 = _mm_unpacklo_epi8(a, b), ab1 = _mm_unpackhi_epi8(a, b);
        __m128i ce0 = _mm_unpacklo_epi8(c, e), ce1 = _mm_unpackhi_epi8(c, e);
        _mm_storeu_si128((__m128i *)(void *)d, _mm_unpacklo_epi16(ab0, ce0));
        _mm_storeu_si128((__m128i *)(void *)(d + 16), _mm_unpackhi_epi16(ab0, ce0));
        _mm_storeu_si128((__m128i *)(void *)(d + 32), _mm_unpacklo_epi16(ab1, ce1));
        _mm_storeu_si128((__m128i *)(void *)(d + 48), _mm_unpackhi_epi16(ab1, ce1));
    }
    if (j < n) {
        memset(d, 0, 4 * PFVM__QG_NR);
        for (i = 0; j + i < n; i++) {
            d[4 * i] = r0[j + i];
            d[4 * i + 1] = r1[j + i];
            d[4 * i + 2] = r2[j + i];
            d[4 * i + 3] = r3[j + i];
        }
    }
}

/* The u8 panels of one image and group (x: its first channel). rows: room
 * for four im2col rows (4 * OH*OW bytes); a 1x1 convolution reads its
 * input's rows where they are. */
static void pfvm__qv_pack(const pfvm__qc_geom *g, const uint8_t *x, uint8_t xz, uint8_t *panels, uint8_t *rows)
{
    pfvm__qi OHW = g->OH * g->OW, K4 = (g->K + 3) / 4, kq, t;
    int pw = pfvm__qc_is_pointwise(g);
    if (g->K % 4) /* positions past K: any value (zero weights); the others are written or read in place */
        memset(rows, 0, (size_t)(4 * OHW));
    for (kq = 0; kq < K4; kq++) {
        const uint8_t *r[4];
        for (t = 0; t < 4; t++) {
            pfvm__qi kk = 4 * kq + t;
            if (kk >= g->K)
                r[t] = rows + t * OHW;
            else if (pw)
                r[t] = x + kk * OHW;
            else {
                pfvm__qv_row(g, x, kk, xz, rows + t * OHW);
                r[t] = rows + t * OHW;
            }
        }
        pfvm__qv_interleave(r[0], r[1], r[2], r[3], OHW, panels + kq * 4 * PFVM__QG_NR, K4 * 4 * PFVM__QG_NR);
    }
}

/* The requantization of the VNNI kernel: per row of the block its
 * multiplier, shift and first output (NULL: a padding row), the output's
 * zero point and type; made once per group (pfvm__qv_gemm). */
typedef struct pfvm__qv_epi {
    const int32_t *mult, *shift; /* the block's rows' (shift 33 to 62) */
    uint8_t *y;                  /* row 0's first output; row r's at y + r * ys */
    pfvm__qi ys;
    int32_t zp;
    int rows, cols, u8; /* rows: of the block's PFVM__QG_MR, those in the output */
} pfvm__qv_epi;

/* pfvm__qg_requant8 of two rows' 16 sums each, packed with saturation
 * and stored (row r1 only when y1). */
__attribute__((target("avx2"), always_inline)) static inline void pfvm__qv_store2(const pfvm__qv_epi *e, int r0, __m256i a0,
                                                                                  __m256i a1, __m256i b0, __m256i b1)
{
    const __m256i zp = _mm256_set1_epi32(e->zp);
    const __m256i m0 = _mm256_set1_epi32(e->mult[r0]), m1 = _mm256_set1_epi32(e->mult[r0 + 1]);
    const __m256i rd0 = _mm256_set1_epi32((int32_t)1 << (e->shift[r0] - 33));
    const __m256i rd1 = _mm256_set1_epi32((int32_t)1 << (e->shift[r0 + 1] - 33));
    const __m128i c0 = _mm_cvtsi32_si128(e->shift[r0] - 32), c1 = _mm_cvtsi32_si128(e->shift[r0 + 1] - 32);
    __m256i p0 = _mm256_packs_epi32(pfvm__qg_requant8(a0, m0, rd0, c0, zp), pfvm__qg_requant8(a1, m0, rd0, c0, zp));
    __m256i p1 = _mm256_packs_epi32(pfvm__qg_requant8(b0, m1, rd1, c1, zp), pfvm__qg_requant8(b1, m1, rd1, c1, zp));
    __m256i p8 = e->u8 ? _mm256_packus_epi16(p0, p1) : _mm256_packs_epi16(p0, p1);
    p8 = _mm256_permutevar8x32_epi32(p8, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
    if (e->cols == PFVM__QG_NR) {
        _mm_storeu_si128((__m128i *)(void *)(e->y + r0 * e->ys), _mm256_castsi256_si128(p8));
        if (r0 + 1 < e->rows)
            _mm_storeu_si128((__m128i *)(void *)(e->y + (r0 + 1) * e->ys), _mm256_extracti128_si256(p8, 1));
    } else {
        uint8_t t[32];
        _mm256_storeu_si256((__m256i *)(void *)t, p8);
        memcpy(e->y + r0 * e->ys, t, (size_t)e->cols);
        if (r0 + 1 < e->rows)
            memcpy(e->y + (r0 + 1) * e->ys, t + 16, (size_t)e->cols);
    }
}

/* The sums of a weight block and a panel (from init, the rows' starting
 * sums) into acc ([row][column]), or, with e, requantized into the rows'
 * outputs. */
#define PFVM__QV_ROW(r, a0, a1)                                                                         \
    {                                                                                                   \
        int32_t q;                                                                                      \
        __m256i wq;                                                                                     \
        memcpy(&q, w + kq * 4 * PFVM__QG_MR + 4 * (r), sizeof q);                                       \
        wq = _mm256_set1_epi32(q);                                                                      \
        a0 = _mm256_dpbusd_epi32(a0, x0, wq);                                                           \
        a1 = _mm256_dpbusd_epi32(a1, x1, wq);                                                           \
    }
__attribute__((target("avx2,avx512vl,avx512vnni"))) static void pfvm__qv_kernel(const int8_t *w, const uint8_t *panel,
                                                                                 pfvm__qi K4, const int32_t *init,
                                                                                 int32_t *acc, const pfvm__qv_epi *e)
{
    __m256i a00 = _mm256_set1_epi32(init[0]), a01 = a00, a10 = _mm256_set1_epi32(init[1]), a11 = a10;
    __m256i a20 = _mm256_set1_epi32(init[2]), a21 = a20, a30 = _mm256_set1_epi32(init[3]), a31 = a30;
    pfvm__qi kq;
    for (kq = 0; kq < K4; kq++) {
        const __m256i x0 = _mm256_loadu_si256((const __m256i *)(const void *)(panel + kq * 4 * PFVM__QG_NR));
        const __m256i x1 = _mm256_loadu_si256((const __m256i *)(const void *)(panel + kq * 4 * PFVM__QG_NR + 32));
        PFVM__QV_ROW(0, a00, a01)
        PFVM__QV_ROW(1, a10, a11)
        PFVM__QV_ROW(2, a20, a21)
        PFVM__QV_ROW(3, a30, a31)
    }
    if (e) {
        pfvm__qv_store2(e, 0, a00, a01, a10, a11);
        if (e->rows > 2)
            pfvm__qv_store2(e, 2, a20, a21, a30, a31);
        return;
    }
    pfvm__qg_store_acc(acc, a00, a01, a10, a11, a20, a21, a30, a31);
}
#undef PFVM__QV_ROW

/* A block's requantization in zmm registers: per row its multiplier,
 * rounding term and shift (pfvm__qg_requant8's, 16 lanes at a time). */
typedef struct pfvm__qv_rq {
    __m512i vm[PFVM__QG_MR], rnd[PFVM__QG_MR];
    __m128i cnt[PFVM__QG_MR];
} pfvm__qv_rq;

__attribute__((target("avx2,avx512f,avx512bw,avx512vl"), always_inline)) static inline void
pfvm__qv_rq_of(const pfvm__qv_epi *e, pfvm__qv_rq *p)
{
#define PFVM__QV_RQ_ROW(r)                                                                              \
    p->vm[r] = _mm512_set1_epi32(e->mult[r]);                                                           \
    p->rnd[r] = _mm512_set1_epi32((int32_t)1 << (e->shift[r] - 33));                                    \
    p->cnt[r] = _mm_cvtsi32_si128(e->shift[r] - 32);
    PFVM__QV_RQ_ROW(0)
    PFVM__QV_RQ_ROW(1)
    PFVM__QV_RQ_ROW(2)
    PFVM__QV_RQ_ROW(3)
#undef PFVM__QV_RQ_ROW
}

/* pfvm__qg_requant8 on 16 lanes. */
__attribute__((target("avx2,avx512f,avx512bw,avx512vl"), always_inline)) static inline __m512i
pfvm__qv_rq16(__m512i a, __m512i vm, __m512i rnd, __m128i cnt, __m512i zp)
{
    __m512i pe = _mm512_mul_epi32(a, vm), po = _mm512_mul_epi32(_mm512_srli_epi64(a, 32), vm);
    __m512i hi = _mm512_mask_blend_epi32(0xAAAA, _mm512_srli_epi64(pe, 32), po);
    return _mm512_add_epi32(_mm512_sra_epi32(_mm512_add_epi32(hi, rnd), cnt), zp);
}

/* The block's four rows of 16 sums (a0..a3) requantized in zmm registers,
 * packed with saturation into one register (row r's bytes in its 128-bit
 * lane r) and stored a row at a time (masked where the panel is short):
 * half the instructions of pfvm__qv_store2 on the ymm halves, the same
 * bytes. */
__attribute__((target("avx2,avx512f,avx512bw,avx512vl"), always_inline)) static inline void
pfvm__qv_store4z(const pfvm__qv_epi *e, const pfvm__qv_rq *p, __m512i a0, __m512i a1, __m512i a2, __m512i a3)
{
    const __m512i zp = _mm512_set1_epi32(e->zp);
    const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    __m512i p01, p23, p8;
    a0 = pfvm__qv_rq16(a0, p->vm[0], p->rnd[0], p->cnt[0], zp);
    a1 = pfvm__qv_rq16(a1, p->vm[1], p->rnd[1], p->cnt[1], zp);
    a2 = pfvm__qv_rq16(a2, p->vm[2], p->rnd[2], p->cnt[2], zp);
    a3 = pfvm__qv_rq16(a3, p->vm[3], p->rnd[3], p->cnt[3], zp);
    p01 = _mm512_packs_epi32(a0, a1), p23 = _mm512_packs_epi32(a2, a3);
    p8 = _mm512_permutexvar_epi32(order, e->u8 ? _mm512_packus_epi16(p01, p23) : _mm512_packs_epi16(p01, p23));
    if (e->cols == PFVM__QG_NR) {
        _mm_storeu_si128((__m128i *)(void *)e->y, _mm512_castsi512_si128(p8));
        if (e->rows > 1)
            _mm_storeu_si128((__m128i *)(void *)(e->y + e->ys), _mm512_extracti32x4_epi32(p8, 1));
        if (e->rows > 2)
            _mm_storeu_si128((__m128i *)(void *)(e->y + 2 * e->ys), _mm512_extracti32x4_epi32(p8, 2));
        if (e->rows > 3)
            _mm_storeu_si128((__m128i *)(void *)(e->y + 3 * e->ys), _mm512_extracti32x4_epi32(p8, 3));
    } else {
        const __mmask16 m = (__mmask16)((1u << e->cols) - 1);
        _mm_mask_storeu_epi8(e->y, m, _mm512_castsi512_si128(p8));
        if (e->rows > 1)
            _mm_mask_storeu_epi8(e->y + e->ys, m, _mm512_extracti32x4_epi32(p8, 1));
        if (e->rows > 2)
            _mm_mask_storeu_epi8(e->y + 2 * e->ys, m, _mm512_extracti32x4_epi32(p8, 2));
        if (e->rows > 3)
            _mm_mask_storeu_epi8(e->y + 3 * e->ys, m, _mm512_extracti32x4_epi32(p8, 3));
    }
}

/* The 8x32 tile: two weight blocks (rows 0-3 at w0, 4-7 at w1) against
 * two panels (columns 0-15 at p0, 16-31 at p1), 16 zmm sums (of the 32
 * registers AVX-512 has): per four reduction positions 2 panel loads and
 * 8 weight broadcasts feed 16 vpdpbusd, where the 4x16 tile's 6 feed 8
 * (ymm). Always requantized (e[b][p]: block b, panel p), in zmm registers
 * (pfvm__qv_store4z): the 4x16 tile's bytes. */
#define PFVM__QV_R8(wb, r, a0, a1)                                                                      \
    {                                                                                                   \
        int32_t q;                                                                                      \
        __m512i wq;                                                                                     \
        memcpy(&q, (wb) + kq * 4 * PFVM__QG_MR + 4 * (r), sizeof q);                                    \
        wq = _mm512_set1_epi32(q);                                                                      \
        a0 = _mm512_dpbusd_epi32(a0, x0, wq);                                                           \
        a1 = _mm512_dpbusd_epi32(a1, x1, wq);                                                           \
    }
__attribute__((target("avx2,avx512f,avx512bw,avx512vl,avx512vnni"))) static void
pfvm__qv_kernel8(const int8_t *w0, const int8_t *w1, const uint8_t *p0, const uint8_t *p1, pfvm__qi K4,
                 const int32_t *init, const pfvm__qv_epi *e00, const pfvm__qv_epi *e01, const pfvm__qv_epi *e10,
                 const pfvm__qv_epi *e11)
{
    __m512i a00 = _mm512_set1_epi32(init[0]), a01 = a00, a10 = _mm512_set1_epi32(init[1]), a11 = a10;
    __m512i a20 = _mm512_set1_epi32(init[2]), a21 = a20, a30 = _mm512_set1_epi32(init[3]), a31 = a30;
    __m512i a40 = _mm512_set1_epi32(init[4]), a41 = a40, a50 = _mm512_set1_epi32(init[5]), a51 = a50;
    __m512i a60 = _mm512_set1_epi32(init[6]), a61 = a60, a70 = _mm512_set1_epi32(init[7]), a71 = a70;
    pfvm__qi kq;
    for (kq = 0; kq < K4; kq++) {
        const __m512i x0 = _mm512_loadu_si512((const void *)(p0 + kq * 4 * PFVM__QG_NR));
        const __m512i x1 = _mm512_loadu_si512((const void *)(p1 + kq * 4 * PFVM__QG_NR));
        PFVM__QV_R8(w0, 0, a00, a01)
        PFVM__QV_R8(w0, 1, a10, a11)
        PFVM__QV_R8(w0, 2, a20, a21)
        PFVM__QV_R8(w0, 3, a30, a31)
        PFVM__QV_R8(w1, 0, a40, a41)
        PFVM__QV_R8(w1, 1, a50, a51)
        PFVM__QV_R8(w1, 2, a60, a61)
        PFVM__QV_R8(w1, 3, a70, a71)
    }
    {
        pfvm__qv_rq p;
        pfvm__qv_rq_of(e00, &p);
        pfvm__qv_store4z(e00, &p, a00, a10, a20, a30);
        pfvm__qv_store4z(e01, &p, a01, a11, a21, a31);
        pfvm__qv_rq_of(e10, &p);
        pfvm__qv_store4z(e10, &p, a40, a50, a60, a70);
        pfvm__qv_store4z(e11, &p, a41, a51, a61, a71);
    }
}
#define PFVM__QV_R16(wb, r, a)                                                                          \
    {                                                                                                   \
        int32_t q;                                                                                      \
        memcpy(&q, (wb) + kq * 4 * PFVM__QG_MR + 4 * (r), sizeof q);                                    \
        a = _mm512_dpbusd_epi32(a, x0, _mm512_set1_epi32(q));                                           \
    }
/* The 16x16 tile: four weight blocks (rows 0-15 from w, blocks bs bytes
 * apart) against one panel, 16 zmm sums: an odd panel at the 8x32 tile's
 * rate (per four reduction positions 1 panel load and 16 broadcasts feed
 * 16 vpdpbusd), where 4x16 tiles run at half of it. */
__attribute__((target("avx2,avx512f,avx512bw,avx512vl,avx512vnni"))) static void
pfvm__qv_kernel16(const int8_t *w, pfvm__qi bs, const uint8_t *p0, pfvm__qi K4, const int32_t *init,
                  const pfvm__qv_epi *e0, const pfvm__qv_epi *e1, const pfvm__qv_epi *e2, const pfvm__qv_epi *e3)
{
    const int8_t *w0 = w, *w1 = w + bs, *w2 = w + 2 * bs, *w3 = w + 3 * bs;
    __m512i a00 = _mm512_set1_epi32(init[0]), a10 = _mm512_set1_epi32(init[1]), a20 = _mm512_set1_epi32(init[2]);
    __m512i a30 = _mm512_set1_epi32(init[3]), a01 = _mm512_set1_epi32(init[4]), a11 = _mm512_set1_epi32(init[5]);
    __m512i a21 = _mm512_set1_epi32(init[6]), a31 = _mm512_set1_epi32(init[7]), a02 = _mm512_set1_epi32(init[8]);
    __m512i a12 = _mm512_set1_epi32(init[9]), a22 = _mm512_set1_epi32(init[10]), a32 = _mm512_set1_epi32(init[11]);
    __m512i a03 = _mm512_set1_epi32(init[12]), a13 = _mm512_set1_epi32(init[13]), a23 = _mm512_set1_epi32(init[14]);
    __m512i a33 = _mm512_set1_epi32(init[15]);
    pfvm__qi kq;
    for (kq = 0; kq < K4; kq++) {
        const __m512i x0 = _mm512_loadu_si512((const void *)(p0 + kq * 4 * PFVM__QG_NR));
        PFVM__QV_R16(w0, 0, a00)
        PFVM__QV_R16(w0, 1, a10)
        PFVM__QV_R16(w0, 2, a20)
        PFVM__QV_R16(w0, 3, a30)
        PFVM__QV_R16(w1, 0, a01)
        PFVM__QV_R16(w1, 1, a11)
        PFVM__QV_R16(w1, 2, a21)
        PFVM__QV_R16(w1, 3, a31)
        PFVM__QV_R16(w2, 0, a02)
        PFVM__QV_R16(w2, 1, a12)
        PFVM__QV_R16(w2, 2, a22)
        PFVM__QV_R16(w2, 3, a32)
        PFVM__QV_R16(w3, 0, a03)
        PFVM__QV_R16(w3, 1, a13)
        PFVM__QV_R16(w3, 2, a23)
        PFVM__QV_R16(w3, 3, a33)
    }
    {
        pfvm__qv_rq p;
        pfvm__qv_rq_of(e0, &p);
        pfvm__qv_store4z(e0, &p, a00, a10, a20, a30);
        pfvm__qv_rq_of(e1, &p);
        pfvm__qv_store4z(e1, &p, a01, a11, a21, a31);
        pfvm__qv_rq_of(e2, &p);
        pfvm__qv_store4z(e2, &p, a02, a12, a22, a32);
        pfvm__qv_rq_of(e3, &p);
        pfvm__qv_store4z(e3, &p, a03, a13, a23, a33);
    }
}
#undef PFVM__QV_R16
#undef PFVM__QV_R8

/* What the VNNI tiles of one image and group share (pfvm__qv_gemm). */
typedef struct pfvm__qv_run {
    const pfvm__qc_geom *g;
    const int8_t *wv;
    const uint8_t *panels;
    const int32_t *init, *mult, *shift;
    uint8_t *y0; /* the group's first output */
    const pfvm__qc_out *nb; /* o without bias (the unfused store) */
    pfvm__qi OHW, K4, npan, n, gg;
    int32_t zp;
    int fused, u8;
} pfvm__qv_run;

/* The requantization of rows mb.. (a block) at panel jb. */
static void pfvm__qv_epi_at(const pfvm__qv_run *q, pfvm__qi mb, pfvm__qi jb, pfvm__qv_epi *e)
{
    pfvm__qi left = q->OHW - jb * PFVM__QG_NR, rows = q->g->MG - mb;
    e->zp = q->zp;
    e->u8 = q->u8;
    e->cols = (int)(left < PFVM__QG_NR ? left : PFVM__QG_NR);
    e->rows = (int)(rows < PFVM__QG_MR ? rows : PFVM__QG_MR);
    e->mult = q->mult + mb, e->shift = q->shift + mb;
    e->y = q->y0 + mb * q->OHW + jb * PFVM__QG_NR, e->ys = q->OHW;
}

/* The 4x16 tile of rows mb.. and panel jb. */
static void pfvm__qv_tile4(const pfvm__qv_run *q, pfvm__qi mb, pfvm__qi jb)
{
    const pfvm__qc_geom *g = q->g;
    const int8_t *w = q->wv + mb * 4 * q->K4;
    const uint8_t *panel = q->panels + jb * q->K4 * 4 * PFVM__QG_NR;
    int32_t acc[PFVM__QG_MR * PFVM__QG_NR];
    pfvm__qv_epi e;
    pfvm__qi c;
    pfvm__qv_epi_at(q, mb, jb, &e);
    if (q->fused) {
        pfvm__qv_kernel(w, panel, q->K4, q->init + mb, NULL, &e);
        return;
    }
    pfvm__qv_kernel(w, panel, q->K4, q->init + mb, acc, NULL);
    for (c = 0; c < PFVM__QG_MR && mb + c < g->MG; c++) {
        pfvm__qi m = q->gg * g->MG + mb + c;
        pfvm__qc_store(q->nb, m, (q->n * g->M + m) * q->OHW + jb * PFVM__QG_NR, acc + c * PFVM__QG_NR, e.cols);
    }
}

/* The 8x32 tile of rows mb.. (two blocks, the second with a row) and
 * panels jb, jb + 1 (the first full). */
static void pfvm__qv_tile8(const pfvm__qv_run *q, pfvm__qi mb, pfvm__qi jb)
{
    const int8_t *w = q->wv + mb * 4 * q->K4;
    const uint8_t *panel = q->panels + jb * q->K4 * 4 * PFVM__QG_NR;
    pfvm__qv_epi e00, e01, e10, e11;
    pfvm__qv_epi_at(q, mb, jb, &e00);
    pfvm__qv_epi_at(q, mb, jb + 1, &e01);
    pfvm__qv_epi_at(q, mb + PFVM__QG_MR, jb, &e10);
    pfvm__qv_epi_at(q, mb + PFVM__QG_MR, jb + 1, &e11);
    pfvm__qv_kernel8(w, w + PFVM__QG_MR * 4 * q->K4, panel, panel + q->K4 * 4 * PFVM__QG_NR, q->K4, q->init + mb,
                     &e00, &e01, &e10, &e11);
}

/* The 16x16 tile of rows mb.. (four blocks, the last with a row) and panel jb. */
static void pfvm__qv_tile16(const pfvm__qv_run *q, pfvm__qi mb, pfvm__qi jb)
{
    pfvm__qv_epi e[4];
    int b;
    for (b = 0; b < 4; b++)
        pfvm__qv_epi_at(q, mb + b * PFVM__QG_MR, jb, &e[b]);
    pfvm__qv_kernel16(q->wv + mb * 4 * q->K4, PFVM__QG_MR * 4 * q->K4, q->panels + jb * q->K4 * 4 * PFVM__QG_NR, q->K4,
                      q->init + mb, &e[0], &e[1], &e[2], &e[3]);
}

/* pfvm__qg_requant8 of 16 sums with each lane's own multiplier vm and
 * shift s (shift - 32: 1 to 30), the zero point zp added and clamped to
 * [lo, hi] (what pfvm__qv_store2's packs saturate to): 16 bytes. */
__attribute__((target("avx2,avx512f,avx512bw,avx512vl"), always_inline)) static inline __m128i
pfvm__qv_requant16(__m512i a, __m512i vm, __m512i s, __m512i zp, __m512i lo, __m512i hi)
{
    __m512i pe = _mm512_mul_epi32(a, vm), po = _mm512_mul_epi32(_mm512_srli_epi64(a, 32), _mm512_srli_epi64(vm, 32));
    __m512i rnd = _mm512_sllv_epi32(_mm512_set1_epi32(1), _mm512_sub_epi32(s, _mm512_set1_epi32(1)));
    __m512i v = _mm512_mask_blend_epi32(0xAAAA, _mm512_srli_epi64(pe, 32), po);
    v = _mm512_add_epi32(_mm512_srav_epi32(_mm512_add_epi32(v, rnd), s), zp);
    return _mm512_cvtepi32_epi8(_mm512_min_epi32(_mm512_max_epi32(v, lo), hi));
}

#define PFVM__QV_FEW 4 /* a last panel of at most this many columns: pfvm__qv_columns */
#define PFVM__QV_COL(c, a)                                                                              \
    if ((c) < cols) {                                                                                   \
        int32_t xq;                                                                                     \
        memcpy(&xq, x + 4 * (c), sizeof xq);                                                            \
        a = _mm512_dpbusd_epi32(a, _mm512_set1_epi32(xq), wq);                                          \
    }

/* The last panel's few columns (at most PFVM__QV_FEW: the 7x7 and 14x14
 * layers' 49 and 196 leave 1 and 4) for rows mb.. (up to 16): the rows in
 * the lanes, their four weight blocks' words gathered per four reduction
 * positions, one vpdpbusd a column against its broadcast bytes, where a
 * 16-column tile would spend 16 on mostly empty lanes. Requantized per
 * lane as pfvm__qv_store2 (the rows' own multipliers and shifts, the
 * clamp: what its packs saturate to), stored byte by byte. */
__attribute__((target("avx2,avx512f,avx512bw,avx512vl,avx512vnni"))) static void
pfvm__qv_columns(const pfvm__qv_run *q, pfvm__qi mb, pfvm__qi jb)
{
    const pfvm__qi K4 = q->K4, bs = PFVM__QG_MR * 4 * K4, left = q->g->MG - mb;
    const int rows = (int)(left < 16 ? left : 16), cols = (int)(q->OHW - jb * PFVM__QG_NR), blocks = (rows + 3) / 4;
    const __mmask16 live = (__mmask16)((1u << rows) - 1);
    const int8_t *w = q->wv + mb * 4 * K4;
    const uint8_t *x = q->panels + jb * K4 * 4 * PFVM__QG_NR;
    const __m512i init = _mm512_maskz_loadu_epi32(live, q->init + mb);
    __m512i a0 = init, a1 = init, a2 = init, a3 = init, vm, s, lo, hi;
    uint8_t out[16];
    pfvm__qi kq;
    int r;
    for (kq = 0; kq < K4; kq++, x += 4 * PFVM__QG_NR) {
        const int8_t *wk = w + kq * 4 * PFVM__QG_MR;
        __m512i wq = _mm512_castsi128_si512(_mm_loadu_si128((const __m128i *)(const void *)wk));
        if (blocks > 1)
            wq = _mm512_inserti32x4(wq, _mm_loadu_si128((const __m128i *)(const void *)(wk + bs)), 1);
        if (blocks > 2)
            wq = _mm512_inserti32x4(wq, _mm_loadu_si128((const __m128i *)(const void *)(wk + 2 * bs)), 2);
        if (blocks > 3)
            wq = _mm512_inserti32x4(wq, _mm_loadu_si128((const __m128i *)(const void *)(wk + 3 * bs)), 3);
        PFVM__QV_COL(0, a0)
        PFVM__QV_COL(1, a1)
        PFVM__QV_COL(2, a2)
        PFVM__QV_COL(3, a3)
    }
    vm = _mm512_maskz_loadu_epi32(live, q->mult + mb);
    s = _mm512_sub_epi32(_mm512_maskz_loadu_epi32(live, q->shift + mb), _mm512_set1_epi32(32)); /* 1 to 30 */
    lo = _mm512_set1_epi32(q->u8 ? 0 : -128), hi = _mm512_set1_epi32(q->u8 ? 255 : 127);
    for (r = 0; r < cols; r++) {
        __m512i a = r == 0 ? a0 : r == 1 ? a1 : r == 2 ? a2 : a3;
        pfvm__qi m;
        _mm_storeu_si128((__m128i *)(void *)out, pfvm__qv_requant16(a, vm, s, _mm512_set1_epi32(q->zp), lo, hi));
        for (m = 0; m < rows; m++)
            q->y0[(mb + m) * q->OHW + jb * PFVM__QG_NR + r] = out[m];
    }
}
#undef PFVM__QV_COL

/* pfvm__qc_gemm on the VNNI kernels: wv, wsum of this group; rp: room
 * for 3 * Mp int32 (the rows' starting sums, multipliers and shifts).
 * With AVX-512 (pfvm__qv_have512) and requantization in the tile, pairs
 * of panels go through 8x32 tiles, the rows left over and a last odd
 * panel through 4x16 ones. */
static void pfvm__qv_gemm(const pfvm__qc_geom *g, const int8_t *wv, const int32_t *wsum, int32_t xz,
                          const uint8_t *panels, const pfvm__qc_out *o, pfvm__qi n, pfvm__qi gg, int32_t *rp)
{
    pfvm__qi jb, mb, r, c;
    int32_t *init = rp, *mult = rp + g->Mp, *shift = rp + 2 * g->Mp;
    pfvm__qc_out nb = *o;
    pfvm__qv_run q;
    pfvm__qi full;
    int wide;
    nb.bias = NULL;
    q.fused = 1;
    for (c = 0; c < g->Mp; c++) { /* padding rows: zero sums, any valid shift */
        pfvm__qi m = gg * g->MG + c;
        uint32_t b = o->bias && c < g->MG ? (uint32_t)o->bias[m] : 0;
        init[c] = (int32_t)(b - (uint32_t)xz * (uint32_t)wsum[c]);
        mult[c] = c < g->MG ? o->mult[m] : 0;
        shift[c] = c < g->MG ? o->shift[m] : 33;
        q.fused &= shift[c] >= 33 && shift[c] <= 62; /* the lanes' range (pfvm__qg_requant8) */
    }
    q.g = g, q.wv = wv, q.panels = panels, q.init = init, q.mult = mult, q.shift = shift, q.nb = &nb;
    q.OHW = g->OH * g->OW, q.K4 = (g->K + 3) / 4, q.npan = (q.OHW + PFVM__QG_NR - 1) / PFVM__QG_NR;
    q.n = n, q.gg = gg, q.zp = o->zp, q.u8 = o->Y->dtype == PFVM_UINT8;
    q.y0 = (uint8_t *)o->Y->data + (n * g->M + gg * g->MG) * q.OHW;
    wide = q.fused && pfvm__qv_have512() && !pfvm__qv_narrow;
    /* with a last panel of few columns, the tiles stop before it */
    full = wide && q.OHW - (q.npan - 1) * PFVM__QG_NR <= PFVM__QV_FEW ? q.npan - 1 : q.npan;
    for (jb = 0; jb < full; jb++) {
        mb = 0;
        if (wide && jb + 1 < full) {
            for (; mb + PFVM__QG_MR < g->MG; mb += 2 * PFVM__QG_MR)
                pfvm__qv_tile8(&q, mb, jb);
            for (r = mb; r < g->MG; r += PFVM__QG_MR)
                pfvm__qv_tile4(&q, r, jb + 1);
        } else if (wide) /* an odd panel */
            for (; mb + 3 * PFVM__QG_MR < g->MG; mb += 4 * PFVM__QG_MR)
                pfvm__qv_tile16(&q, mb, jb);
        for (; mb < g->MG; mb += PFVM__QG_MR)
            pfvm__qv_tile4(&q, mb, jb);
        if (wide && jb + 1 < full)
            jb++;
    }
    for (mb = 0; full < q.npan && mb < g->MG; mb += 16)
        pfvm__qv_columns(&q, mb, full);
}

/* ---- the VNNI direct convolution: stride 1, no im2col ----------------------------------------- *
 *
 * For a KHxKW (> 1x1) convolution at stride 1 the panels of the im2col
 * GEMM are copies of the input: each output column reads, per tap, the
 * input at a fixed offset from its own position. With the reduction in
 * the order (channel/4, kh, kw, channel%4) (pfvm__qv_weights, direct
 * order) four channels at one tap are one int32 lane, and with the input
 * once per run as channel-interleaved padded planes, xi[c/4][ph][pw][c%4]
 * (the zero point in the padding, Hp = OH + (KH-1)dh rows and
 * Wp = OW + (KW-1)dw columns), the 16 lanes of output positions
 * q .. q+15, counted over the padded width (q = oh*Wp + ow), read 64
 * contiguous bytes at xi + 4 (q + off[kq]), off = c4*Hp*Wp + kh*dh*Wp +
 * kw*dw: the 8x32 tile loads its panels straight from xi. Positions with
 * ow >= OW are computed and dropped: the tile stores a flat output of
 * Wp-wide rows, copied to Y's OW-wide rows. The integers summed are those
 * of the im2col path (wrapping int32 sums in any order): same bytes.
 * At strides sh, sw the planes split into sh*sw phase planes of
 * Hs x Ws = ceil(Hp/sh) x ceil(Wp/sw) (pfvm__qv_direct_fill): a tap
 * reads phase plane (kh*dh % sh, kw*dw % sw) at (kh*dh/sh, kw*dw/sw), and
 * the flat positions count over Ws. */

/* The direct path's buffers: xi (its planes, then 32 positions of slack
 * the last tiles read past them), the flat output (Mp rows), 64-byte
 * aligned. */
static void pfvm__qv_direct_dims(const pfvm__qc_geom *g, pfvm__qi *Hs, pfvm__qi *Ws, pfvm__qi *npair, size_t *xib,
                                 size_t *yb)
{
    pfvm__qi nq, Hp = (g->OH - 1) * g->sh + (g->KH - 1) * g->dh + 1, Wp = (g->OW - 1) * g->sw + (g->KW - 1) * g->dw + 1;
    *Hs = (Hp + g->sh - 1) / g->sh;
    *Ws = (Wp + g->sw - 1) / g->sw;
    nq = (g->OH - 1) * *Ws + g->OW;
    *npair = (nq + 2 * PFVM__QG_NR - 1) / (2 * PFVM__QG_NR);
    *xib = ((size_t)(4 * ((g->CG + 3) / 4) * g->sh * g->sw * *Hs * *Ws) + 4 * 2 * PFVM__QG_NR + 63) / 64 * 64;
    *yb = ((size_t)(g->Mp * *npair * 2 * PFVM__QG_NR) + 63) / 64 * 64;
}

static size_t pfvm__qv_direct_bytes(const pfvm__qc_geom *g)
{
    pfvm__qi Hp, Wp, np;
    size_t xib, yb;
    pfvm__qv_direct_dims(g, &Hp, &Wp, &np, &xib, &yb);
    return xib + yb + (size_t)(3 * g->Mp + pfvm__qv_k4(g, 1)) * sizeof(int32_t);
}

/* One padded row of xi from four input rows (NULL: a padding channel,
 * any bytes), 16 columns per step: masked loads and stores touch only
 * the row's own bytes. */
__attribute__((target("avx2,avx512f,avx512bw,avx512vl"))) static void
pfvm__qv_direct_row(const uint8_t *const *r, pfvm__qi W, pfvm__qi pl, pfvm__qi pr, uint8_t xz, uint8_t *d)
{
    uint8_t *row = d;
    pfvm__qi j;
    memset(row, xz, (size_t)(4 * pl));
    memset(row + 4 * (pl + W), xz, (size_t)(4 * pr));
    d += 4 * pl;
    for (j = 0; j < W; j += 16, d += 64) {
        pfvm__qi n = W - j < 16 ? W - j : 16;
        __mmask16 m = (__mmask16)(n == 16 ? 0xFFFF : (1u << n) - 1);
        __m128i a = r[0] ? _mm_maskz_loadu_epi8(m, r[0] + j) : _mm_setzero_si128();
        __m128i b = r[1] ? _mm_maskz_loadu_epi8(m, r[1] + j) : _mm_setzero_si128();
        __m128i c = r[2] ? _mm_maskz_loadu_epi8(m, r[2] + j) : _mm_setzero_si128();
        __m128i e = r[3] ? _mm_maskz_loadu_epi8(m, r[3] + j) : _mm_setzero_si128();
        __m128i ab0 = _mm_unpacklo_epi8(a, b), ab1 = _mm_unpackhi_epi8(a, b);
        __m128i ce0 = _mm_unpacklo_epi8(c, e), ce1 = _mm_unpackhi_epi8(c, e);
        __m512i v = _mm512_castsi128_si512(_mm_unpacklo_epi16(ab0, ce0));
        v = _mm512_inserti32x4(v, _mm_unpackhi_epi16(ab0, ce0), 1);
        v = _mm512_inserti32x4(v, _mm_unpacklo_epi16(ab1, ce1), 2);
        v = _mm512_inserti32x4(v, _mm_unpackhi_epi16(ab1, ce1), 3);
        _mm512_mask_storeu_epi8(d, n == 16 ? ~(__mmask64)0 : ((__mmask64)1 << (4 * n)) - 1, v);
    }
}

/* One row of a phase plane (columns b, b + sw, ... of the padded row)
 * at a stride sw > 1: the positions [lo, hi) inside the input, 64 at a
 * time, gathered from each row into a stack row, then interleaved as at
 * stride 1 (a position at a time cost the stride-2 layers ~2% of
 * resnet18's time); the zero point elsewhere. */
static void pfvm__qv_direct_phase_row(const uint8_t *const *r, const pfvm__qc_geom *g, pfvm__qi b, pfvm__qi Ws, uint8_t xz,
                                      uint8_t *d)
{
    const pfvm__qi sw = g->sw, a = g->pl - b, e = g->W + g->pl - b; /* s * sw in [a, e): inside */
    pfvm__qi lo = a <= 0 ? 0 : (a + sw - 1) / sw, hi = e <= 0 ? 0 : (e + sw - 1) / sw, s, j;
    uint8_t tmp[4][64];
    const uint8_t *tr[4];
    int t;
    hi = hi < Ws ? hi : Ws;
    lo = lo < hi ? lo : hi;
    memset(d, xz, (size_t)(4 * lo));
    memset(d + 4 * hi, xz, (size_t)(4 * (Ws - hi)));
    for (s = lo; s < hi; s += 64) {
        pfvm__qi n = hi - s < 64 ? hi - s : 64;
        for (t = 0; t < 4; t++) {
            const uint8_t *src = r[t] ? r[t] + s * sw - a : NULL;
            tr[t] = src ? tmp[t] : NULL;
            for (j = 0; src && j < n; j++)
                tmp[t][j] = src[j * sw];
        }
        pfvm__qv_direct_row(tr, n, 0, 0, xz, d + 4 * s);
    }
}

/* xi of one image and group (x: its first channel) and its slack: at
 * strides sh, sw the padded planes split in sh * sw phase planes
 * (rows a, a + sh, ..., columns b, b + sw, ...), [c/4][a][b][Hs][Ws][4]. */
static void pfvm__qv_direct_fill(const pfvm__qc_geom *g, const uint8_t *x, uint8_t xz, uint8_t *xi)
{
    pfvm__qi Hs, Ws, np, c4, a, b, ph, t, Hp = (g->OH - 1) * g->sh + (g->KH - 1) * g->dh + 1;
    size_t xib, yb;
    pfvm__qv_direct_dims(g, &Hs, &Ws, &np, &xib, &yb);
    for (c4 = 0; c4 < (g->CG + 3) / 4; c4++)
        for (a = 0; a < g->sh; a++)
            for (ph = 0; ph < Hs; ph++) {
                pfvm__qi ih = ph * g->sh + a - g->pt;
                int inside = ih >= 0 && ih < g->H && ph * g->sh + a < Hp;
                const uint8_t *r[4];
                for (t = 0; t < 4; t++)
                    r[t] = inside && 4 * c4 + t < g->CG ? x + ((4 * c4 + t) * g->H + ih) * g->W : NULL;
                for (b = 0; b < g->sw; b++) {
                    uint8_t *d = xi + 4 * ((((c4 * g->sh + a) * g->sw + b) * Hs + ph) * Ws);
                    pfvm__qi lo = g->pl < Ws ? g->pl : Ws, n = Ws - lo < g->W ? Ws - lo : g->W;
                    if (!inside)
                        memset(d, xz, (size_t)(4 * Ws));
                    else if (g->sw == 1)
                        pfvm__qv_direct_row(r, n, lo, Ws - lo - n, xz, d);
                    else
                        pfvm__qv_direct_phase_row(r, g, b, Ws, xz, d);
                }
            }
    memset(xi + 4 * ((g->CG + 3) / 4) * g->sh * g->sw * Hs * Ws, xz, 4 * 2 * PFVM__QG_NR);
}

/* The 8x32 tile of the direct path: pfvm__qv_kernel8 with the panels at
 * x + off[kq] (x: the tile's first position in xi) and the weights in
 * 16-row blocks (64 bytes a kq), the second block's rows stored only
 * when e10->rows > 0 (w1 may repeat w0). */
#define PFVM__QV_R8(wb, r, a0, a1)                                                                      \
    {                                                                                                   \
        int32_t q;                                                                                      \
        __m512i wq;                                                                                     \
        memcpy(&q, (wb) + kq * 64 + 4 * (r), sizeof q);                                                 \
        wq = _mm512_set1_epi32(q);                                                                      \
        a0 = _mm512_dpbusd_epi32(a0, x0, wq);                                                           \
        a1 = _mm512_dpbusd_epi32(a1, x1, wq);                                                           \
    }
#define PFVM__QV_LO(a) _mm512_castsi512_si256(a)
#define PFVM__QV_HI(a) _mm512_extracti64x4_epi64(a, 1)
#define PFVM__QV_ST(e, r0, a, b) pfvm__qv_store2(e, r0, PFVM__QV_LO(a), PFVM__QV_HI(a), PFVM__QV_LO(b), PFVM__QV_HI(b))
__attribute__((target("avx2,avx512f,avx512vl,avx512vnni"))) static void
pfvm__qv_kernel8d(const int8_t *w0, const int8_t *w1, const uint8_t *x, const int32_t *off, pfvm__qi K4,
                  const int32_t *init, const pfvm__qv_epi *e00, const pfvm__qv_epi *e01, const pfvm__qv_epi *e10,
                  const pfvm__qv_epi *e11)
{
    __m512i a00 = _mm512_set1_epi32(init[0]), a01 = a00, a10 = _mm512_set1_epi32(init[1]), a11 = a10;
    __m512i a20 = _mm512_set1_epi32(init[2]), a21 = a20, a30 = _mm512_set1_epi32(init[3]), a31 = a30;
    __m512i a40 = _mm512_set1_epi32(init[4]), a41 = a40, a50 = _mm512_set1_epi32(init[5]), a51 = a50;
    __m512i a60 = _mm512_set1_epi32(init[6]), a61 = a60, a70 = _mm512_set1_epi32(init[7]), a71 = a70;
    pfvm__qi kq;
    for (kq = 0; kq < K4; kq++) {
        const uint8_t *p = x + off[kq];
        const __m512i x0 = _mm512_loadu_si512((const void *)p);
        const __m512i x1 = _mm512_loadu_si512((const void *)(p + 4 * PFVM__QG_NR));
        PFVM__QV_R8(w0, 0, a00, a01)
        PFVM__QV_R8(w0, 1, a10, a11)
        PFVM__QV_R8(w0, 2, a20, a21)
        PFVM__QV_R8(w0, 3, a30, a31)
        PFVM__QV_R8(w1, 0, a40, a41)
        PFVM__QV_R8(w1, 1, a50, a51)
        PFVM__QV_R8(w1, 2, a60, a61)
        PFVM__QV_R8(w1, 3, a70, a71)
    }
    PFVM__QV_ST(e00, 0, a00, a10);
    PFVM__QV_ST(e01, 0, a01, a11);
    if (e00->rows > 2) {
        PFVM__QV_ST(e00, 2, a20, a30);
        PFVM__QV_ST(e01, 2, a21, a31);
    }
    if (e10->rows <= 0)
        return;
    PFVM__QV_ST(e10, 0, a40, a50);
    PFVM__QV_ST(e11, 0, a41, a51);
    if (e10->rows > 2) {
        PFVM__QV_ST(e10, 2, a60, a70);
        PFVM__QV_ST(e11, 2, a61, a71);
    }
}
#undef PFVM__QV_ST
#undef PFVM__QV_HI
#undef PFVM__QV_LO
#undef PFVM__QV_R8

/* The direct path's requantization of rows mb.. at flat columns j..j+15
 * of yf (rows ys apart): every store 16 bytes. */
static void pfvm__qv_direct_epi(const pfvm__qv_run *q, uint8_t *yf, pfvm__qi ys, pfvm__qi mb, pfvm__qi j, pfvm__qv_epi *e)
{
    pfvm__qi rows = q->g->MG - mb;
    e->zp = q->zp;
    e->u8 = q->u8;
    e->cols = PFVM__QG_NR;
    e->rows = (int)(rows < 0 ? 0 : rows < PFVM__QG_MR ? rows : PFVM__QG_MR);
    e->mult = q->mult + mb, e->shift = q->shift + mb;
    e->y = yf + mb * ys + j, e->ys = ys;
}

/* One tile of the direct path: rows mb.. (8, or 4 and a repeat), flat
 * columns 32 jp.. */
static void pfvm__qv_direct_tile(const pfvm__qv_run *q, const uint8_t *xi, const int32_t *off, uint8_t *yf,
                                 pfvm__qi ys, pfvm__qi mb, pfvm__qi jp)
{
    const int8_t *w0 = q->wv + mb / 16 * 16 * 4 * q->K4 + mb % 16 * 4; /* (mb % 8 == 0: both in one block) */
    const int8_t *w1 = mb + PFVM__QG_MR < q->g->MG ? w0 + 4 * PFVM__QG_MR : w0;
    pfvm__qi j = jp * 2 * PFVM__QG_NR;
    pfvm__qv_epi e00, e01, e10, e11;
    pfvm__qv_direct_epi(q, yf, ys, mb, j, &e00);
    pfvm__qv_direct_epi(q, yf, ys, mb, j + PFVM__QG_NR, &e01);
    pfvm__qv_direct_epi(q, yf, ys, mb + PFVM__QG_MR, j, &e10);
    pfvm__qv_direct_epi(q, yf, ys, mb + PFVM__QG_MR, j + PFVM__QG_NR, &e11);
    pfvm__qv_kernel8d(w0, w1, xi + 4 * j, off, q->K4, q->init + mb, &e00, &e01, &e10, &e11);
}

/* ---- the direct path's channel tile ----------------------------------------------------------- *
 *
 * On small planes (resnet18's 14x14 and 7x7) the position tile's flat
 * positions waste sums: the padding columns of each row and the round up
 * to 32 (64 positions computed for 49 at 7x7). The channel tile puts 32
 * output channels in the lanes of two zmm (the 16-row weight blocks of
 * pfvm__qv_weights: one 64-byte load a block and kq) against
 * PFVM__QV_CP output positions, each one's four channels at a tap one
 * word of xi broadcast: any positions, none of them padding. The last
 * tile of a plane repeats its last position; sums are those of the other
 * tiles (same bytes). pfvm__qv_direct_conv picks the tile per node by
 * counting the sums each computes. */
#define PFVM__QV_CP 7 /* positions a channel tile: 49, 196, 784 and 3136 are multiples */

#define PFVM__QV_CB(p)                                                                                  \
    {                                                                                                   \
        int32_t xq;                                                                                     \
        __m512i b;                                                                                      \
        memcpy(&xq, x##p + o, sizeof xq);                                                               \
        b = _mm512_set1_epi32(xq);                                                                      \
        c##p = _mm512_dpbusd_epi32(c##p, b, wa);                                                        \
        d##p = _mm512_dpbusd_epi32(d##p, b, wb);                                                        \
    }
/* The sums of two 16-row blocks w0, w1 (from their starting sums i0,
 * i1) at the positions xp[0..6] of xi, into acc[0..6] (w0) and acc[7..13]. */
__attribute__((target("avx2,avx512f,avx512vl,avx512vnni"))) static void
pfvm__qv_kernel_ch(const int8_t *w0, const int8_t *w1, const uint8_t *const *xp, const int32_t *off, pfvm__qi K4,
                   const int32_t *i0, const int32_t *i1, __mmask16 live0, __mmask16 live1, __m512i *acc)
{
    const uint8_t *x0 = xp[0], *x1 = xp[1], *x2 = xp[2], *x3 = xp[3], *x4 = xp[4], *x5 = xp[5], *x6 = xp[6];
    __m512i c0 = _mm512_maskz_loadu_epi32(live0, i0), c1 = c0, c2 = c0, c3 = c0, c4 = c0, c5 = c0, c6 = c0;
    __m512i d0 = _mm512_maskz_loadu_epi32(live1, i1), d1 = d0, d2 = d0, d3 = d0, d4 = d0, d5 = d0, d6 = d0;
    pfvm__qi kq;
    for (kq = 0; kq < K4; kq++, w0 += 64, w1 += 64) {
        const int32_t o = off[kq];
        const __m512i wa = _mm512_loadu_si512((const void *)w0), wb = _mm512_loadu_si512((const void *)w1);
        PFVM__QV_CB(0)
        PFVM__QV_CB(1)
        PFVM__QV_CB(2)
        PFVM__QV_CB(3)
        PFVM__QV_CB(4)
        PFVM__QV_CB(5)
        PFVM__QV_CB(6)
    }
    acc[0] = c0, acc[1] = c1, acc[2] = c2, acc[3] = c3, acc[4] = c4, acc[5] = c5, acc[6] = c6;
    acc[7] = d0, acc[8] = d1, acc[9] = d2, acc[10] = d3, acc[11] = d4, acc[12] = d5, acc[13] = d6;
}
#undef PFVM__QV_CB

/* Requantizes one block's sums at np consecutive positions (p0: the
 * first one's index in the plane) into rows mb.. of y (rows OHW apart):
 * the 7 vectors of 16 rows' bytes transposed by two vpermt2b (VBMI) into
 * 16 rows of 8 bytes, one masked store of np bytes a row. */
__attribute__((target("avx2,avx512f,avx512bw,avx512vl,avx512vbmi"))) static void
pfvm__qv_store_ch(const pfvm__qv_run *q, const __m512i *acc, pfvm__qi mb, pfvm__qi p0, int np, uint8_t *y)
{
    const pfvm__qi left = q->g->MG - mb, OHW = q->g->OH * q->g->OW;
    const int rows = (int)(left < 16 ? left : 16);
    const __mmask16 live = (__mmask16)((1u << rows) - 1), cols = (__mmask16)((1u << np) - 1);
    const __m512i vm = _mm512_maskz_loadu_epi32(live, q->mult + mb), zp = _mm512_set1_epi32(q->zp);
    const __m512i s = _mm512_sub_epi32(_mm512_maskz_loadu_epi32(live, q->shift + mb), _mm512_set1_epi32(32));
    const __m512i lo = _mm512_set1_epi32(q->u8 ? 0 : -128), hi = _mm512_set1_epi32(q->u8 ? 255 : 127);
    /* row (8 h + i)'s byte of position k at 64 h + 8 i + k: index 16 k + 8 h + i */
    static const uint8_t ix[2][64] = {
        {0, 16, 32, 48, 64, 80, 96, 112, 1, 17, 33, 49, 65, 81, 97, 113, 2, 18, 34, 50, 66, 82, 98, 114, 3, 19, 35, 51, 67, 83, 99, 115,
         4, 20, 36, 52, 68, 84, 100, 116, 5, 21, 37, 53, 69, 85, 101, 117, 6, 22, 38, 54, 70, 86, 102, 118, 7, 23, 39, 55, 71, 87, 103, 119},
        {8, 24, 40, 56, 72, 88, 104, 120, 9, 25, 41, 57, 73, 89, 105, 121, 10, 26, 42, 58, 74, 90, 106, 122, 11, 27, 43, 59, 75, 91, 107, 123,
         12, 28, 44, 60, 76, 92, 108, 124, 13, 29, 45, 61, 77, 93, 109, 125, 14, 30, 46, 62, 78, 94, 110, 126, 15, 31, 47, 63, 79, 95, 111, 127}};
    __m128i b[8];
    __m512i z0, z1;
    uint8_t t[128], *ym = y + mb * OHW + p0;
    int p, r;
    for (p = 0; p < PFVM__QV_CP; p++)
        b[p] = pfvm__qv_requant16(acc[p], vm, s, zp, lo, hi);
    b[PFVM__QV_CP] = b[PFVM__QV_CP - 1];
    /* z0, z1: position p's 16 rows at byte 16 p of the pair */
    z0 = _mm512_inserti32x4(_mm512_castsi128_si512(b[0]), b[1], 1);
    z0 = _mm512_inserti64x4(z0, _mm256_inserti128_si256(_mm256_castsi128_si256(b[2]), b[3], 1), 1);
    z1 = _mm512_inserti32x4(_mm512_castsi128_si512(b[4]), b[5], 1);
    z1 = _mm512_inserti64x4(z1, _mm256_inserti128_si256(_mm256_castsi128_si256(b[6]), b[7], 1), 1);
    for (r = 0; r < 2; r++)
        _mm512_storeu_si512((void *)(t + 64 * r),
                            _mm512_permutex2var_epi8(z0, _mm512_loadu_si512((const void *)ix[r]), z1));
    for (r = 0; r < rows; r++)
        _mm_mask_storeu_epi8(ym + r * OHW, cols, _mm_loadl_epi64((const __m128i *)(const void *)(t + 8 * r)));
}

/* One channel tile: rows mb.. (32, or 16 and a repeat), positions
 * PFVM__QV_CP t.. of the plane (Ws: xi's row length), into y. */
static void pfvm__qv_ch_tile(const pfvm__qv_run *q, const uint8_t *xi, const int32_t *off, pfvm__qi Ws, uint8_t *y,
                             pfvm__qi mb, pfvm__qi t)
{
    const pfvm__qc_geom *g = q->g;
    const pfvm__qi OHW = g->OH * g->OW, left = g->MG - mb;
    const int8_t *w0 = q->wv + mb * 4 * q->K4, *w1 = left > 16 ? w0 + 16 * 4 * q->K4 : w0;
    const uint8_t *xp[PFVM__QV_CP];
    __m512i acc[2 * PFVM__QV_CP];
    int p, np = 0;
    for (p = 0; p < PFVM__QV_CP; p++) {
        pfvm__qi at = t * PFVM__QV_CP + p;
        np += at < OHW;
        at = at < OHW ? at : OHW - 1;
        xp[p] = xi + 4 * (at / g->OW * Ws + at % g->OW);
    }
    pfvm__qv_kernel_ch(w0, w1, xp, off, q->K4, q->init + mb, q->init + mb + 16,
                       (__mmask16)(left >= 16 ? 0xFFFF : (1u << left) - 1),
                       (__mmask16)(left >= 32 ? 0xFFFF : left > 16 ? (1u << (left - 16)) - 1 : 0), acc);
    pfvm__qv_store_ch(q, acc, mb, t * PFVM__QV_CP, np, y);
    if (left > 16)
        pfvm__qv_store_ch(q, acc + PFVM__QV_CP, mb + 16, t * PFVM__QV_CP, np, y);
}

/* 1 when the channel tile computes fewer sums than the position tile's
 * 8 rows by 32 flat positions (npair pairs of 16): resnet18's 7x7 and
 * 14x14 layers, 28x28 and 56x56 too. Needs VBMI (its store). */
static int pfvm__qd_have(void);

static int pfvm__qv_use_ch(const pfvm__qc_geom *g, pfvm__qi npair)
{
    pfvm__qi OHW = g->OH * g->OW;
    long long ch = (long long)((g->MG + 31) / 32 * 32) * ((OHW + PFVM__QV_CP - 1) / PFVM__QV_CP * PFVM__QV_CP);
    long long ps = (long long)((g->MG + 7) / 8 * 8) * (npair * 2 * PFVM__QG_NR);
    if (!pfvm__qd_have()) /* (VBMI: pfvm__qv_store_ch) */
        return 0;
    if (pfvm__qv_tile_force)
        return pfvm__qv_tile_force == 2;
    return ch < ps;
}

/* pfvm__qv_gemm's direct form for one image and group (x: its first
 * channel; wv, wsum: the group's, in direct order; buf: room for
 * pfvm__qv_direct_bytes). Requantization in the tile needs every shift
 * in [33, 62] (pfvm__qg_requant8, pfvm__qv_shifts_fit). */
static void pfvm__qv_direct_conv(const pfvm__qc_geom *g, const int8_t *wv, const int32_t *wsum, int32_t xz,
                                const uint8_t *x, const pfvm__qc_out *o, pfvm__qi n, pfvm__qi gg, uint8_t *buf)
{
    pfvm__qi Hs, Ws, npair, c, jp, mb, oh, c4, kh, kw, ys;
    size_t xib, yb;
    uint8_t *xi = buf, *yf, *y;
    int32_t *init, *mult, *shift, *off;
    pfvm__qv_run q;
    pfvm__qv_direct_dims(g, &Hs, &Ws, &npair, &xib, &yb);
    yf = buf + xib;
    init = (int32_t *)(void *)(yf + yb), mult = init + g->Mp, shift = mult + g->Mp;
    for (c = 0; c < g->Mp; c++) {
        pfvm__qi m = gg * g->MG + c;
        uint32_t b = o->bias && c < g->MG ? (uint32_t)o->bias[m] : 0;
        init[c] = (int32_t)(b - (uint32_t)xz * (uint32_t)wsum[c]);
        mult[c] = c < g->MG ? o->mult[m] : 0;
        shift[c] = c < g->MG ? o->shift[m] : 33;
    }
    memset(&q, 0, sizeof q);
    q.g = g, q.wv = wv, q.init = init, q.mult = mult, q.shift = shift;
    q.K4 = pfvm__qv_k4(g, 1), q.zp = o->zp, q.u8 = o->Y->dtype == PFVM_UINT8;
    /* the taps' offsets (bytes) after the flat output: int32 (xi is small) */
    off = (int32_t *)(void *)(shift + g->Mp);
    for (c4 = 0; c4 < (g->CG + 3) / 4; c4++)
        for (kh = 0; kh < g->KH; kh++)
            for (kw = 0; kw < g->KW; kw++)
                *off++ = (int32_t)(4 * ((((c4 * g->sh + kh * g->dh % g->sh) * g->sw + kw * g->dw % g->sw) * Hs +
                                         kh * g->dh / g->sh) * Ws + kw * g->dw / g->sw));
    off -= q.K4;
    pfvm__qv_direct_fill(g, x, (uint8_t)xz, xi);
    y = (uint8_t *)o->Y->data + (n * g->M + gg * g->MG) * g->OH * g->OW;
    if (pfvm__qv_use_ch(g, npair)) { /* straight into y; the same loop order */
        pfvm__qi t, nt = (g->OH * g->OW + PFVM__QV_CP - 1) / PFVM__QV_CP;
        if (xib <= (size_t)(g->Mp * 4 * q.K4)) {
            for (mb = 0; mb < g->MG; mb += 32)
                for (t = 0; t < nt; t++)
                    pfvm__qv_ch_tile(&q, xi, off, Ws, y, mb, t);
        } else {
            for (t = 0; t < nt; t++)
                for (mb = 0; mb < g->MG; mb += 32)
                    pfvm__qv_ch_tile(&q, xi, off, Ws, y, mb, t);
        }
        return;
    }
    ys = npair * 2 * PFVM__QG_NR;
    /* loop order: the smaller of xi and the weights is read again per tile */
    if (xib <= (size_t)(g->Mp * 4 * q.K4)) {
        for (mb = 0; mb < g->MG; mb += 2 * PFVM__QG_MR)
            for (jp = 0; jp < npair; jp++)
                pfvm__qv_direct_tile(&q, xi, off, yf, ys, mb, jp);
    } else {
        for (jp = 0; jp < npair; jp++)
            for (mb = 0; mb < g->MG; mb += 2 * PFVM__QG_MR)
                pfvm__qv_direct_tile(&q, xi, off, yf, ys, mb, jp);
    }
    for (c = 0; c < g->MG; c++)
        for (oh = 0; oh < g->OH; oh++, y += g->OW)
            memcpy(y, yf + c * ys + oh * Ws, (size_t)g->OW);
}
#endif

/* A 1x1 convolution of one column (a Gemm after the qlinear pass) on the
 * SMLAD path: the column minus its zero point as one int16 vector (no
 * panels to zero and fill: most of the time of digits' 512 -> 64 Gemm
 * went there), then pfvm__qg_gemv_tile per block of rows. */
static int pfvm__qc_is_gemv(const pfvm__qc_geom *g)
{
    return pfvm_q_gemm_kind() == 1 && pfvm__qc_is_pointwise(g) && g->H * g->W == 1;
}

/* v: 2 * K2 int16 (the panels' room is more) */
static void pfvm__qc_gemv(const pfvm__qc_geom *g, const pfvm_tensor *X, pfvm__qi base, int32_t xz, const int16_t *wp,
                          int16_t *v, const pfvm__qc_out *o, pfvm__qi n, pfvm__qi gg)
{
    int32_t acc[2 * PFVM__QG_MR];
    pfvm__qi kk, mb;
    int c;
#ifdef PFVM__QG_DSP
    if (X->dtype == PFVM_UINT8) {
        pfvm__qc_u8_row((const uint8_t *)X->data + base, g->K, (uint32_t)(uint16_t)xz * 0x10001u, v);
        kk = g->K;
    } else
        kk = 0;
#else
    kk = 0;
#endif
    for (; kk < g->K; kk++)
        v[kk] = (int16_t)(pfvm__q_at(X, base + kk) - xz);
    if (g->K & 1)
        v[g->K] = 0; /* the last pair's other half (its weight is 0 too) */
    for (mb = 0; mb < g->MG; mb += PFVM__QG_MR) {
        pfvm__qg_gemv_tile(wp + mb * 2 * g->K2, v, g->K2, acc, o->bias2 + 2 * (gg * g->Mp + mb));
        for (c = 0; c < PFVM__QG_MR && mb + c < g->MG; c++) {
            /* as pfvm__qc_store_tiles does (not called: a second caller
             * keeps gcc -Os from inlining it into pfvm__qc_gemm) */
            pfvm__qi m = gg * g->MG + mb + c, at = n * g->M + m;
            int sh = o->shift[m];
            if (sh >= 33 && sh <= 62) {
                pfvm__qc_store_hi(acc + 2 * c, 8, 1, 0, o->mult[m], sh - 32, o->zp, (char *)o->Y->data + at,
                                  o->Y->dtype == PFVM_UINT8);
            } else {
                pfvm__qc_out nb = *o;
                nb.bias = NULL;
                pfvm__qc_store(&nb, m, at, acc + 2 * c, 1);
            }
        }
    }
}

/* ---- QLinearConv, depthwise: one input and one output channel per group ---------------------- *
 *
 * Each channel's plane, minus its zero point and padded, is stored as
 * sw phase planes (column c in plane c % sw at c / sw), so that every
 * kernel position reads a contiguous row for any horizontal stride: the
 * sums vectorize (int16 x int16 -> int32, exact) in the dispatched clones. */


/* Channel plane (offset `plane` in X) into P, minus xz. The padding is
 * not written: the same positions for every channel, zeroed once by the
 * caller. */
static void pfvm__qc_dw_fill(const pfvm__qc_geom *g, const pfvm_tensor *X, pfvm__qi plane, int32_t xz, int16_t *P)
{
    pfvm__qi PH, PWs, ih, iw, s = g->sw;
    pfvm__qc_dw_dims(g, &PH, &PWs);
#ifdef PFVM__QG_DSP
    if (s == 1 && X->dtype == PFVM_UINT8) {
        /* input rows y in [y0, y1) at plane rows y + pt, columns [0, w1) at pl.. */
        pfvm__qi y0 = g->pt < 0 ? -g->pt : 0, y1 = PH - g->pt < g->H ? PH - g->pt : g->H;
        pfvm__qi w1 = PWs - g->pl < g->W ? PWs - g->pl : g->W, y;
        const uint8_t *x = (const uint8_t *)X->data + plane + y0 * g->W;
        int16_t *d = P + (y0 + g->pt) * PWs + g->pl;
        uint32_t zz = (uint32_t)(uint16_t)xz * 0x10001u;
        for (y = y0; y < y1 && w1 > 0; y++, x += g->W, d += PWs)
            pfvm__qc_u8_row(x, w1, zz, d);
        return;
    }
#endif
    for (ih = 0; ih < PH; ih++) {
        pfvm__qi y = ih - g->pt, lo = g->pl, hi = g->pl + g->W < s * PWs ? g->pl + g->W : s * PWs;
        int16_t *row = P + ih * PWs;
        if (y < 0 || y >= g->H)
            continue;
        if (X->dtype == PFVM_UINT8) {
            const uint8_t *x = (const uint8_t *)X->data + plane + y * g->W - g->pl;
            pfvm__qi ph;
            if (s == 1) {
                if (hi > lo)
                    pfvm__qc_widen_u8(x + lo, hi - lo, xz, row + lo);
                continue;
            }
            if (s == 2) {
                if (hi > lo)
                    pfvm__qc_split2_u8(x + lo, hi - lo, xz, row + lo % 2 * PH * PWs + lo / 2,
                                       row + (lo + 1) % 2 * PH * PWs + (lo + 1) / 2);
                continue;
            }
            for (ph = 0; ph < s; ph++) { /* phase plane ph: columns ph, ph + s, ... (no division per column) */
                pfvm__qi first = lo + ((ph - lo) % s + s) % s;
                int16_t *d = row + ph * PH * PWs + first / s;
                for (iw = first; iw < hi; iw += s)
                    *d++ = (int16_t)(x[iw] - xz);
            }
        } else {
            const int8_t *x = (const int8_t *)X->data + plane + y * g->W - g->pl;
            for (iw = lo; iw < hi; iw++)
                row[(iw % s) * PH * PWs + iw / s] = (int16_t)(x[iw] - xz);
        }
    }
}

/* One output row: a[ow] = sum over taps t of w[t] * rows[t][ow]. */
PFVM_DISPATCH static void pfvm__qc_dw_row_c(const int16_t *const *rows, const int32_t *w, int taps, pfvm__qi OW,
                                            int32_t *a)
{
    pfvm__qi ow;
    int t;
    for (ow = 0; ow < OW; ow++)
        a[ow] = 0;
    for (t = 0; t < taps; t++)
        for (ow = 0; ow < OW; ow++)
            a[ow] += w[t] * rows[t][ow];
}

#define PFVM__QC_DW_TAPS 64

#ifdef PFVM__QG_AVX2
/* The same, 16 columns at a time in registers: two taps' rows interleaved
 * (columns 0-3 and 8-11, 4-7 and 12-15 of the two 128-bit halves) meet
 * the two taps' weights as one int16 pair in VPMADDWD (an odd last tap
 * pairs with a zero weight). */
__attribute__((target("avx2"))) static void pfvm__qc_dw_row_avx2(const int16_t *const *rows, const int32_t *w, int taps,
                                                                  int64_t OW, int32_t *a, const pfvm__qg_epi *e)
{
    int32_t wq[(PFVM__QC_DW_TAPS + 1) / 2], last[16];
    int64_t ow;
    int t;
    pfvm__qg_epi r;
    __m256i vb = _mm256_setzero_si256();
    if (e) { /* requantized into e->y[0] (row 0 of the epilogue), 16 columns at a time */
        r = *e;
        vb = _mm256_set1_epi32(e->bias[0]);
    }
    for (t = 0; t < taps; t += 2)
        wq[t / 2] = (int32_t)((uint32_t)(uint16_t)w[t] | (uint32_t)(uint16_t)(t + 1 < taps ? w[t + 1] : 0) << 16);
    for (ow = 0; ow < OW; ow += 16) {
        __m256i lo = _mm256_setzero_si256(), hi = lo;
        for (t = 0; t < taps; t += 2) {
            const __m256i wv = _mm256_set1_epi32(wq[t / 2]);
            const __m256i x = _mm256_loadu_si256((const __m256i *)(const void *)(rows[t] + ow));
            const __m256i y = t + 1 < taps ? _mm256_loadu_si256((const __m256i *)(const void *)(rows[t + 1] + ow)) : x;
            lo = _mm256_add_epi32(lo, _mm256_madd_epi16(_mm256_unpacklo_epi16(x, y), wv));
            hi = _mm256_add_epi32(hi, _mm256_madd_epi16(_mm256_unpackhi_epi16(x, y), wv));
        }
        if (e) {
            r.y[0] = (char *)e->y[0] + ow;
            r.cols = OW - ow < 16 ? (int)(OW - ow) : 16;
            pfvm__qg_store_row(&r, 0, _mm256_add_epi32(_mm256_permute2x128_si256(lo, hi, 0x20), vb),
                               _mm256_add_epi32(_mm256_permute2x128_si256(lo, hi, 0x31), vb));
            continue;
        }
        if (ow + 16 > OW) { /* the last columns: all 16 lanes read, the row's share kept */
            _mm256_storeu_si256((__m256i *)(void *)last, _mm256_permute2x128_si256(lo, hi, 0x20));
            _mm256_storeu_si256((__m256i *)(void *)(last + 8), _mm256_permute2x128_si256(lo, hi, 0x31));
            memcpy(a + ow, last, (size_t)(OW - ow) * sizeof(int32_t));
            break;
        }
        _mm256_storeu_si256((__m256i *)(void *)(a + ow), _mm256_permute2x128_si256(lo, hi, 0x20));
        _mm256_storeu_si256((__m256i *)(void *)(a + ow + 8), _mm256_permute2x128_si256(lo, hi, 0x31));
    }
}

/* pfvm__qc_dw_plane's sums on AVX2 (at most PFVM__QC_DW_TAPS positions);
 * with o (a shift of 33 to 62), rows taken one at a time are requantized
 * into the output as they are summed (returns 1: stored).
 * A row's last block reads up to 15 int16 past its columns (the work
 * buffer's slack after the plane); at stride 1, rows narrower than 64
 * columns go several at a time as one run over the plane's rows (the
 * columns between them computed and dropped), so that 7 or 14 columns
 * still fill the vectors. */
static int pfvm__qc_dw_plane_avx2(const pfvm__qc_geom *g, const int16_t *P, const int16_t *w, int32_t *acc,
                                  const pfvm__qc_out *o, pfvm__qi m, pfvm__qi at)
{
    enum { RUN = 1024 };
    const int16_t *rows[PFVM__QC_DW_TAPS];
    int32_t wt[PFVM__QC_DW_TAPS], run[RUN];
    pfvm__qi PH, PWs, kh, kw, oh, OW = g->OW, t, rs, r, i, off[PFVM__QC_DW_TAPS];
    pfvm__qg_epi e;
    if (o) {
        memset(&e, 0, sizeof e);
        e.bias[0] = o->bias ? o->bias[m] : 0;
        e.mult[0] = o->mult[m];
        e.s[0] = o->shift[m] - 32;
        e.rnd[0] = (int32_t)1 << (o->shift[m] - 33);
        e.zp = o->zp;
        e.u8 = o->Y->dtype == PFVM_UINT8;
    }
    pfvm__qc_dw_dims(g, &PH, &PWs);
    rs = g->sh * PWs; /* plane positions between output rows */
    r = g->sh == 1 && OW < 64 && OW + 16 <= RUN ? (RUN - OW) / rs + 1 : 1;
    if (r > 1) /* runs of narrow rows: the plane's sums, requantized by the caller in one pass */
        o = NULL;
    for (t = 0, kh = 0; kh < g->KH; kh++)
        for (kw = 0; kw < g->KW; kw++, t++) {
            pfvm__qi col = kw * g->dw;
            off[t] = (col % g->sw) * PH * PWs + kh * g->dh * PWs + col / g->sw;
            wt[t] = w[t];
        }
    for (oh = 0; oh < g->OH; oh += r) {
        pfvm__qi rows_now = g->OH - oh < r ? g->OH - oh : r;
        for (i = 0; i < t; i++)
            rows[i] = P + oh * rs + off[i];
        if (rows_now == 1) {
            e.y[0] = o ? (char *)o->Y->data + at + oh * OW : NULL;
            pfvm__qc_dw_row_avx2(rows, wt, (int)t, OW, acc + oh * OW, o ? &e : NULL);
            continue;
        }
        pfvm__qc_dw_row_avx2(rows, wt, (int)t, (rows_now - 1) * rs + OW, run, NULL);
        for (i = 0; i < rows_now; i++)
            memcpy(acc + (oh + i) * OW, run + i * rs, (size_t)OW * sizeof(int32_t));
    }
    return o != NULL;
}
#endif


/* Depthwise 3x3 at stride and dilation 1 on the SMLAD terms (kind 1): per
 * kernel row, taps 0 and 1 are one word of two adjacent int16 (unaligned
 * on odd columns) and tap 2 a word whose second half meets a zero weight:
 * 6 SMLADs for 9 multiply-adds, the sum in a register. Reads one int16
 * past a row's last column (times 0; the work buffer has 64 bytes of
 * slack after the plane). wq: the 6 weight words; dims: the bytes of a
 * plane row, of an output row's columns (OW int16) and of OH plane rows.
 * Writes the OH x OW sums to a. */
#ifdef PFVM__QG_DSP
/* In assembly: 15 instructions per output (6 LDR, 6 SMLAD, STR and the
 * loop) with the weights, three row pointers, the sum, two loads and the
 * row's end in the 14 registers; the row step and the plane's end on the
 * stack. (P: r0, wq: r1, dims: r2, a: r3) */
__attribute__((naked, noinline)) static void pfvm__qc_dw3_rows(const int16_t *P __attribute__((unused)),
                                                               const uint32_t *wq __attribute__((unused)),
                                                               const int32_t *dims __attribute__((unused)),
                                                               int32_t *a __attribute__((unused)))
{
    __asm__ volatile(
        "push {r4-r11, lr}\n\t"
        "ldm r1, {r4-r9}\n\t"
        "ldm r2, {r10, r11, r12}\n\t" /* row bytes, output row bytes, plane bytes */
        "sub lr, r10, r11\n\t"        /* from a row's end to the next row */
        "add r12, r0, r12\n\t"        /* where row 0 ends up */
        "push {r10, r12, lr}\n\t"     /* [sp]: row bytes, [sp, #4]: plane end, [sp, #8]: row step */
        "add r12, r0, r11\n\t"        /* this row's end */
        "add r1, r0, r10\n\t"
        "add r2, r1, r10\n"
        "1:\n\t"
        "ldr r11, [r0, #4]\n\t"
        "ldr r10, [r0], #2\n\t"
        "smuad r10, r10, r4\n\t"
        "smlad r10, r11, r5, r10\n\t"
        "ldr r11, [r1, #4]\n\t"
        "ldr lr, [r1], #2\n\t"
        "smlad r10, lr, r6, r10\n\t"
        "smlad r10, r11, r7, r10\n\t"
        "ldr r11, [r2, #4]\n\t"
        "ldr lr, [r2], #2\n\t"
        "smlad r10, lr, r8, r10\n\t"
        "smlad r10, r11, r9, r10\n\t"
        "str r10, [r3], #4\n\t"
        "cmp r0, r12\n\t"
        "bne 1b\n\t"
        "ldr r10, [sp, #8]\n\t"
        "add r0, r0, r10\n\t"
        "add r1, r1, r10\n\t"
        "add r2, r2, r10\n\t"
        "ldr r10, [sp]\n\t"
        "add r12, r12, r10\n\t"
        "ldr r10, [sp, #4]\n\t"
        "cmp r0, r10\n\t"
        "bne 1b\n\t"
        "add sp, sp, #12\n\t"
        "pop {r4-r11, pc}\n\t");
}

/* Two output rows at a time (dims[2]: how many pairs of rows, >= 1): the
 * four input rows' words are each loaded once for both, 27 instructions
 * per two outputs. Registers: the weights, four row pointers, two sums,
 * a load and the output; the second output row's pointer, the row's end
 * and the steps on the stack. */
__attribute__((naked, noinline)) static void pfvm__qc_dw3_rows2(const int16_t *P __attribute__((unused)),
                                                                const uint32_t *wq __attribute__((unused)),
                                                                const int32_t *dims __attribute__((unused)),
                                                                int32_t *a __attribute__((unused)))
{
    __asm__ volatile(
        "push {r4-r11, lr}\n\t"
        "ldm r1, {r4-r9}\n\t"
        "ldm r2, {r10, r11, r12}\n\t" /* row bytes, output row bytes (2 OW), row pairs */
        "sub sp, sp, #24\n\t"
        "str r12, [sp, #16]\n\t"      /* [sp, #16]: row pairs left */
        "str r11, [sp, #12]\n\t"      /* [sp, #12]: 2 OW */
        "add r12, r0, r11\n\t"
        "str r12, [sp]\n\t"           /* [sp]: where this row's p0 ends */
        "lsl r12, r10, #1\n\t"
        "sub r12, r12, r11\n\t"
        "str r12, [sp, #8]\n\t"       /* [sp, #8]: from a row's end to the next pair's start */
        "lsl r11, r11, #1\n\t"
        "str r11, [sp, #20]\n\t"      /* [sp, #20]: 4 OW, an output row */
        "add r12, r3, r11\n\t"
        "str r12, [sp, #4]\n\t"       /* [sp, #4]: the second output row */
        "add r1, r0, r10\n\t"
        "add r2, r1, r10\n\t"
        "add r10, r2, r10\n"
        "1:\n\t"
        "ldr lr, [r0], #2\n\t"
        "smuad r11, lr, r4\n\t"
        "ldr lr, [r0, #2]\n\t"
        "smlad r11, lr, r5, r11\n\t"
        "ldr lr, [r1], #2\n\t"
        "smlad r11, lr, r6, r11\n\t"
        "smuad r12, lr, r4\n\t"
        "ldr lr, [r1, #2]\n\t"
        "smlad r11, lr, r7, r11\n\t"
        "smlad r12, lr, r5, r12\n\t"
        "ldr lr, [r2], #2\n\t"
        "smlad r11, lr, r8, r11\n\t"
        "smlad r12, lr, r6, r12\n\t"
        "ldr lr, [r2, #2]\n\t"
        "smlad r11, lr, r9, r11\n\t"
        "smlad r12, lr, r7, r12\n\t"
        "ldr lr, [r10], #2\n\t"
        "smlad r12, lr, r8, r12\n\t"
        "ldr lr, [r10, #2]\n\t"
        "smlad r12, lr, r9, r12\n\t"
        "str r11, [r3], #4\n\t"
        "ldr lr, [sp, #4]\n\t"
        "str r12, [lr], #4\n\t"
        "str lr, [sp, #4]\n\t"
        "ldr lr, [sp]\n\t"
        "cmp r0, lr\n\t"
        "bne 1b\n\t"
        "ldr lr, [sp, #8]\n\t"
        "add r0, r0, lr\n\t"
        "add r1, r1, lr\n\t"
        "add r2, r2, lr\n\t"
        "add r10, r10, lr\n\t"
        "ldr lr, [sp, #20]\n\t"
        "add r3, r3, lr\n\t"
        "ldr r11, [sp, #4]\n\t"
        "add r11, r11, lr\n\t"
        "str r11, [sp, #4]\n\t"
        "ldr r11, [sp, #12]\n\t"
        "add r11, r0, r11\n\t"
        "str r11, [sp]\n\t"
        "ldr r11, [sp, #16]\n\t"
        "subs r11, r11, #1\n\t"
        "str r11, [sp, #16]\n\t"
        "bne 1b\n\t"
        "add sp, sp, #24\n\t"
        "pop {r4-r11, pc}\n\t");
}
#else
static void pfvm__qc_dw3_rows(const int16_t *P, const uint32_t *wq, const int32_t *dims, int32_t *a)
{
    pfvm__qi PWs = dims[0] / 2, OW = dims[1] / 2, OH = dims[2] / dims[0], oh, ow;
    for (oh = 0; oh < OH; oh++, P += PWs)
        for (ow = 0; ow < OW; ow++) {
            const int16_t *r0 = P + ow, *r1 = r0 + PWs, *r2 = r1 + PWs;
            int32_t v = PFVM__QG_SMUAD(PFVM__QG_UWORD(r0), wq[0]);
            v = PFVM__QG_SMLAD(PFVM__QG_UWORD(r0 + 2), wq[1], v);
            v = PFVM__QG_SMLAD(PFVM__QG_UWORD(r1), wq[2], v);
            v = PFVM__QG_SMLAD(PFVM__QG_UWORD(r1 + 2), wq[3], v);
            v = PFVM__QG_SMLAD(PFVM__QG_UWORD(r2), wq[4], v);
            *a++ = PFVM__QG_SMLAD(PFVM__QG_UWORD(r2 + 2), wq[5], v);
        }
}
#endif

static uint32_t pfvm__qc_pair(int16_t lo, int16_t hi)
{
    return (uint32_t)(uint16_t)lo | (uint32_t)(uint16_t)hi << 16;
}

/* pfvm__qc_dw_plane for 3x3 kernels at strides and dilations 1 with the SMLAD rows. */
static int pfvm__qc_dw3_plane(const pfvm__qc_geom *g, const int16_t *P, const int16_t *w, int32_t *acc)
{
    pfvm__qi PH, PWs;
    uint32_t wq[6];
    int32_t dims[3];
    int r;
    if (g->KH != 3 || g->KW != 3 || g->sh != 1 || g->sw != 1 || g->dh != 1 || g->dw != 1)
        return 0;
    pfvm__qc_dw_dims(g, &PH, &PWs);
    for (r = 0; r < 3; r++) {
        wq[2 * r] = pfvm__qc_pair(w[3 * r], w[3 * r + 1]);
        wq[2 * r + 1] = pfvm__qc_pair(w[3 * r + 2], 0);
    }
    dims[0] = (int32_t)(PWs * 2);
    dims[1] = (int32_t)(g->OW * 2);
#ifdef PFVM__QG_DSP
    if (g->OH >= 2) {
        dims[2] = (int32_t)(g->OH / 2);
        pfvm__qc_dw3_rows2(P, wq, dims, acc);
        if (!(g->OH & 1))
            return 1;
        P += (g->OH - 1) * PWs;
        acc += (g->OH - 1) * g->OW;
        dims[2] = dims[0];
        pfvm__qc_dw3_rows(P, wq, dims, acc);
        return 1;
    }
#endif
    dims[2] = (int32_t)(g->OH * PWs * 2);
    pfvm__qc_dw3_rows(P, wq, dims, acc);
    return 1;
}

/* acc (the channel's OH x OW sums) = each kernel position's weight times
 * its shifted rows of P, summed; kernels of more than PFVM__QC_DW_TAPS
 * positions add one position at a time. */
static int pfvm__qc_dw_plane(const pfvm__qc_geom *g, const int16_t *P, const int16_t *w, int32_t *acc,
                             const pfvm__qc_out *o, pfvm__qi m, pfvm__qi at)
{
    const int16_t *rows[PFVM__QC_DW_TAPS];
    int32_t wt[PFVM__QC_DW_TAPS];
    pfvm__qi PH, PWs, kh, kw, oh, OW = g->OW, taps = g->KH * g->KW, t;
    int kind = pfvm_q_gemm_kind();
    (void)o, (void)m, (void)at; /* used by the AVX2 path */
    if (kind == 1 && pfvm__qc_dw3_plane(g, P, w, acc))
        return 0;
#ifdef PFVM__QG_AVX2
    if (kind == 2 && taps <= PFVM__QC_DW_TAPS) {
        /* shifts of 33 to 62 (pfvm__qc_store's AVX2 range, the same
         * bytes): requantized as the rows are summed, no second pass */
        return pfvm__qc_dw_plane_avx2(g, P, w, acc, o->shift[m] >= 33 && o->shift[m] <= 62 ? o : NULL, m, at);
    }
#endif
    pfvm__qc_dw_dims(g, &PH, &PWs);
    for (oh = 0; oh < g->OH; oh++) {
        int32_t *a = acc + oh * OW;
        for (t = 0, kh = 0; kh < g->KH; kh++)
            for (kw = 0; kw < g->KW; kw++, t++) {
                pfvm__qi col = kw * g->dw;
                const int16_t *row = P + (col % g->sw) * PH * PWs + (oh * g->sh + kh * g->dh) * PWs + col / g->sw;
                if (taps > PFVM__QC_DW_TAPS) {
                    int32_t wv = w[t];
                    pfvm__qi ow;
                    if (!t)
                        for (ow = 0; ow < OW; ow++)
                            a[ow] = 0;
                    for (ow = 0; ow < OW; ow++)
                        a[ow] += wv * row[ow];
                    continue;
                }
                rows[t] = row;
                wt[t] = w[t];
            }
        if (taps > PFVM__QC_DW_TAPS)
            continue;
        pfvm__qc_dw_row_c(rows, wt, (int)taps, OW, a);
    }
    return 0;
}

#ifdef PFVM__QV
/* ---- depthwise on AVX-512 VBMI and VNNI: u8 plane, vpermb windows, vpdpbusd ----------------- *
 *
 * One channel's padded plane as raw uint8 (the padding: the input's zero
 * point), 16 output columns per zmm: per kernel row one 64-byte load of
 * the plane row, and per four taps of it (a tap group) one vpermb that
 * gathers each lane's four window bytes (lane i: bytes s*i + t*dw) and one
 * vpdpbusd against the group's int8 weights (minus their zero point; a
 * missing fourth tap has weight 0). A 3x3 kernel is 3 loads, 3 vpermb and
 * 3 vpdpbusd per 16 outputs, where the AVX2 path takes 10 loads, 10
 * unpacks, 10 vpmaddwd and 10 adds. The input's zero point comes off
 * through the weights' sum (sum (x - xz) w = sum x w - xz sum w, as the
 * VNNI GEMM does), folded with the bias into the starting sum; the sums
 * are exact, so the bytes equal the portable kernel's. Needs the window
 * of 16 lanes in one load: 15 s + (KW - 1) dw <= 63. */
#define PFVM__QD_GROUPS 4 /* tap groups per kernel row (KW <= 16) */
#define PFVM__QD_TAPS 64  /* kernel rows times tap groups */

static int pfvm__qd_have(void)
{
    static int ok = -1;
    if (ok < 0) {
        __builtin_cpu_init();
        ok = pfvm__qv_have512() && __builtin_cpu_supports("avx512vbmi");
    }
    return ok;
}

/* The run-time switch: the VNNI paths on (pfvm_q_force_no_vnni and the
 * narrow switch turn this one off too) and the CPU has VBMI. */
static int pfvm__qd_on(void)
{
    return pfvm_q_vnni() && !pfvm__qv_narrow && pfvm__qd_have();
}

static pfvm__qi pfvm__qd_groups(const pfvm__qc_geom *g)
{
    return (g->KW + 3) / 4;
}

/* The geometry and weights the path takes (at bind: the weights' part of g). */
static int pfvm__qd_usable(const pfvm__qc_geom *g, const pfvm_tensor *W, const pfvm_tensor *wz)
{
    return pfvm__qd_on() && pfvm__qc_is_dw(g) && g->KW <= 4 * PFVM__QD_GROUPS &&
           g->KH * pfvm__qd_groups(g) <= PFVM__QD_TAPS && 15 * g->sw + (g->KW - 1) * g->dw <= 63 &&
           pfvm__qv_weights_fit(g, W, wz);
}

/* Bytes of the weights (wd) for pfvm__qd_weights. */
static size_t pfvm__qd_bytes(const pfvm__qc_geom *g)
{
    return (size_t)(g->M * g->KH * pfvm__qd_groups(g) * 4);
}

/* wd[c][kh][q][4]: channel c's taps 4q.. of kernel row kh minus the zero
 * point (zeros past KW); wsum[c]: their sum. */
static void pfvm__qd_weights(const pfvm_tensor *W, const pfvm_tensor *wz, const pfvm__qc_geom *g, int8_t *wd,
                             int32_t *wsum)
{
    pfvm__qi nwz = pfvm_tensor_numel(wz), G = pfvm__qd_groups(g), c, kh, kw;
    memset(wd, 0, pfvm__qd_bytes(g));
    for (c = 0; c < g->M; c++) {
        int32_t z = pfvm__q_at(wz, nwz == 1 ? 0 : c), sum = 0;
        for (kh = 0; kh < g->KH; kh++)
            for (kw = 0; kw < g->KW; kw++) {
                int32_t v = pfvm__q_at(W, (c * g->KH + kh) * g->KW + kw) - z;
                wd[((c * g->KH + kh) * G + kw / 4) * 4 + kw % 4] = (int8_t)v;
                sum += v;
            }
        wsum[c] = sum;
    }
}

/* What the channels of one node share: the geometry in locals (the
 * kernel's byte stores would make the compiler reload g's fields), the
 * vpermb indices and, per channel, the requantization. */
typedef struct pfvm__qd_run {
    pfvm__qi OH, OW, KH, G, sw, rs, ks; /* rs, ks: plane bytes between output rows, kernel rows */
    pfvm__qi R;                         /* output rows per vector (up to 16 / OW), or 0: 16 columns a vector */
    int V;                              /* vectors per step (1 to 4) */
    uint8_t idx[PFVM__QD_GROUPS][64];   /* tap group q, lane i, byte j: (i / OW) rs + (i % OW) s + (4q + j) dw
                                         * with R rows a vector, s i + (4q + j) dw with columns (a missing tap: any) */
    uint8_t out[64];                    /* byte b of a step's output: its byte in the packed vectors */
    uint8_t *y;                         /* the channel's first output, or NULL: its sums into acc */
    int32_t mult, s, zp, u8;
} pfvm__qd_run;

#define PFVM__QD_TARGET __attribute__((target("avx2,avx512f,avx512bw,avx512vl,avx512vnni,avx512vbmi")))

/* The geometry pfvm__qd_sum reads, in locals: the output's byte stores
 * would make the compiler reload r's fields in every step. */
typedef struct pfvm__qd_taps {
    pfvm__qi KH, G, ks;
    int three; /* one tap group, 3 kernel rows: written out */
} pfvm__qd_taps;

/* The window sums of 16 lanes from p (the plane at their first window). */
PFVM__QD_TARGET __attribute__((always_inline)) static inline __m512i
pfvm__qd_sum(const pfvm__qd_taps *r, const uint8_t *p, const __m512i *idx, const int32_t *w, __m512i a)
{
    pfvm__qi kh, q;
    if (r->three) { /* 3x3 and the like */
        const __m512i r0 = _mm512_loadu_si512((const void *)p), r1 = _mm512_loadu_si512((const void *)(p + r->ks));
        const __m512i r2 = _mm512_loadu_si512((const void *)(p + 2 * r->ks));
        a = _mm512_dpbusd_epi32(a, _mm512_permutexvar_epi8(idx[0], r0), _mm512_set1_epi32(w[0]));
        a = _mm512_dpbusd_epi32(a, _mm512_permutexvar_epi8(idx[0], r1), _mm512_set1_epi32(w[1]));
        return _mm512_dpbusd_epi32(a, _mm512_permutexvar_epi8(idx[0], r2), _mm512_set1_epi32(w[2]));
    }
    for (kh = 0; kh < r->KH; kh++) {
        const __m512i x = _mm512_loadu_si512((const void *)(p + kh * r->ks));
        for (q = 0; q < r->G; q++)
            a = _mm512_dpbusd_epi32(a, _mm512_permutexvar_epi8(idx[q], x), _mm512_set1_epi32(w[kh * r->G + q]));
    }
    return a;
}

/* pfvm__qg_requant8 on 16 lanes (shift 32 + s, s in [1, 30]). */
PFVM__QD_TARGET __attribute__((always_inline)) static inline __m512i pfvm__qd_requant(__m512i a, __m512i vm, __m512i rnd,
                                                                                      __m128i cnt, __m512i zp)
{
    __m512i pe = _mm512_mul_epi32(a, vm), po = _mm512_mul_epi32(_mm512_srli_epi64(a, 32), vm);
    __m512i v = _mm512_mask_blend_epi32(0xAAAA, _mm512_srli_epi64(pe, 32), po);
    return _mm512_add_epi32(_mm512_sra_epi32(_mm512_add_epi32(v, rnd), cnt), zp);
}

/* The requantized bytes of the V vectors of a step (v), packed with
 * saturation (the clamp: the type's whole range) and put in output order
 * (r->out: 4 lanes per 128-bit lane and vector after the packs). */
PFVM__QD_TARGET __attribute__((always_inline)) static inline __m512i
pfvm__qd_pack(const __m512i *v, __m512i vm, __m512i rnd, __m128i cnt, __m512i zp, __m512i out, int u8, const int V)
{
    __m512i a0 = pfvm__qd_requant(v[0], vm, rnd, cnt, zp);
    __m512i a1 = V > 1 ? pfvm__qd_requant(v[1], vm, rnd, cnt, zp) : a0;
    __m512i a2 = V > 2 ? pfvm__qd_requant(v[2], vm, rnd, cnt, zp) : a0;
    __m512i a3 = V > 3 ? pfvm__qd_requant(v[3], vm, rnd, cnt, zp) : a0;
    __m512i p01 = _mm512_packs_epi32(a0, a1), p23 = _mm512_packs_epi32(a2, a3); /* per 128-bit lane */
    return _mm512_permutexvar_epi8(out, u8 ? _mm512_packus_epi16(p01, p23) : _mm512_packs_epi16(p01, p23));
}

/* pfvm__qd_rows for planes of at most 16 columns: each vector R whole
 * output rows (lane i: row i / OW, column i % OW), a step V vectors of R
 * rows, stored as one run of up to 64 bytes (the rows are adjacent in the
 * output). */
PFVM__QD_TARGET __attribute__((always_inline)) static inline void
pfvm__qd_rowsets(const pfvm__qd_run *r, const uint8_t *P, const int32_t *w, int32_t init, int32_t *acc, const int V)
{
    __m512i idx[PFVM__QD_GROUPS], v[4];
    const __m512i vinit = _mm512_set1_epi32(init), vm = _mm512_set1_epi32(r->mult);
    const __m512i rnd = _mm512_set1_epi32(r->y ? (int32_t)1 << (r->s - 1) : 0), zp = _mm512_set1_epi32(r->zp);
    const __m512i out = _mm512_loadu_si512((const void *)r->out);
    const __m128i cnt = _mm_cvtsi32_si128(r->s);
    const pfvm__qi OH = r->OH, OW = r->OW, R = r->R, rs = r->rs, rows = V * R;
    const int u8 = r->u8;
    uint8_t *y = r->y;
    pfvm__qi q, oh;
    int j;
    pfvm__qd_taps tp;
    tp.KH = r->KH, tp.G = r->G, tp.ks = r->ks, tp.three = r->G == 1 && r->KH == 3;
    for (q = 0; q < r->G; q++)
        idx[q] = _mm512_loadu_si512((const void *)r->idx[q]);
    for (oh = 0; oh < OH; oh += rows) {
        pfvm__qi left = OH - oh, n = (left < rows ? left : rows) * OW;
        for (j = 0; j < V; j++)
            v[j] = j * R < left ? pfvm__qd_sum(&tp, P + (oh + j * R) * rs, idx, w, vinit) : vinit;
        if (!y) {
            for (j = 0; j < V && j * R < left; j++) {
                pfvm__qi m = (left - j * R < R ? left - j * R : R) * OW;
                _mm512_mask_storeu_epi32(acc + (oh + j * R) * OW, (__mmask16)((1u << m) - 1), v[j]);
            }
            continue;
        }
        _mm512_mask_storeu_epi8(y + oh * OW, n == 64 ? ~(__mmask64)0 : ((__mmask64)1 << n) - 1,
                                pfvm__qd_pack(v, vm, rnd, cnt, zp, out, u8, V));
    }
}

/* One channel's sums, V vectors of 16 columns per step (a constant in
 * each copy: the vectors stay in registers): P the padded u8 plane (up
 * to 63 bytes past its end are read: the work buffer's slack; a vector
 * past the row's end reads nothing), w the channel's weight words. With
 * r->y, requantized into the output, the vectors packed with saturation
 * (the clamp: the type's whole range) into one masked store of up to 64
 * bytes; else the sums go to acc. */
PFVM__QD_TARGET __attribute__((always_inline)) static inline void
pfvm__qd_rows(const pfvm__qd_run *r, const uint8_t *P, const int32_t *w, int32_t init, int32_t *acc, const int V)
{
    __m512i idx[PFVM__QD_GROUPS], v[4];
    const __m512i vinit = _mm512_set1_epi32(init), vm = _mm512_set1_epi32(r->mult);
    const __m512i rnd = _mm512_set1_epi32(r->y ? (int32_t)1 << (r->s - 1) : 0), zp = _mm512_set1_epi32(r->zp);
    const __m512i out = _mm512_loadu_si512((const void *)r->out);
    const __m128i cnt = _mm_cvtsi32_si128(r->s);
    const pfvm__qi OH = r->OH, OW = r->OW, sw = r->sw, rs = r->rs, step = 16 * V;
    const int u8 = r->u8;
    uint8_t *y = r->y;
    pfvm__qi q, oh, ow;
    int j;
    pfvm__qd_taps tp;
    tp.KH = r->KH, tp.G = r->G, tp.ks = r->ks, tp.three = r->G == 1 && r->KH == 3;
    for (q = 0; q < r->G; q++)
        idx[q] = _mm512_loadu_si512((const void *)r->idx[q]);
    for (oh = 0; oh < OH; oh++, P += rs) {
        for (ow = 0; ow < OW; ow += step) {
            pfvm__qi n = OW - ow < step ? OW - ow : step;
            for (j = 0; j < V; j++)
                v[j] = 16 * j < n ? pfvm__qd_sum(&tp, P + (ow + 16 * j) * sw, idx, w, vinit) : vinit;
            if (!y) {
                for (j = 0; j < V && 16 * j < n; j++)
                    _mm512_mask_storeu_epi32(acc + oh * OW + ow + 16 * j,
                                             n - 16 * j >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (n - 16 * j)) - 1),
                                             v[j]);
                continue;
            }
            _mm512_mask_storeu_epi8(y + oh * OW + ow, n == 64 ? ~(__mmask64)0 : ((__mmask64)1 << n) - 1,
                                    pfvm__qd_pack(v, vm, rnd, cnt, zp, out, u8, V));
        }
    }
}

/* One copy of KERNEL per vector count V (a constant in each: its vectors
 * stay in registers), for row sets (r->R) and for rows. */
#define PFVM__QD_BY_V(KERNEL)                                                                           \
    switch (r->V) {                                                                                     \
    case 1:                                                                                             \
        KERNEL(r, P, w, init, acc, 1);                                                                  \
        break;                                                                                          \
    case 2:                                                                                             \
        KERNEL(r, P, w, init, acc, 2);                                                                  \
        break;                                                                                          \
    case 3:                                                                                             \
        KERNEL(r, P, w, init, acc, 3);                                                                  \
        break;                                                                                          \
    default:                                                                                            \
        KERNEL(r, P, w, init, acc, 4);                                                                  \
    }
PFVM__QD_TARGET static void pfvm__qd_plane(const pfvm__qd_run *r, const uint8_t *P, const int32_t *w, int32_t init,
                                           int32_t *acc)
{
    if (r->R) {
        PFVM__QD_BY_V(pfvm__qd_rowsets)
    } else {
        PFVM__QD_BY_V(pfvm__qd_rows)
    }
}
#undef PFVM__QD_BY_V

/* The u8 padded plane of channel plane (its first element) of X; the
 * padding, written once per node by the caller, is left alone. */
PFVM__QD_TARGET static void pfvm__qd_fill(const pfvm__qc_geom *g, const uint8_t *x, uint8_t *P, pfvm__qi PH, pfvm__qi PW)
{
    pfvm__qi y0 = g->pt < 0 ? -g->pt : 0, y1 = PH - g->pt < g->H ? PH - g->pt : g->H;
    pfvm__qi w1 = PW - g->pl < g->W ? PW - g->pl : g->W, y;
    if (w1 <= 0)
        return;
    if (w1 <= 64) { /* narrow rows: one masked move each, not a library call */
        const __mmask64 m = w1 == 64 ? ~(__mmask64)0 : ((__mmask64)1 << w1) - 1;
        for (y = y0; y < y1; y++)
            _mm512_mask_storeu_epi8(P + (y + g->pt) * PW + g->pl, m, _mm512_maskz_loadu_epi8(m, x + y * g->W));
        return;
    }
    for (y = y0; y < y1; y++)
        memcpy(P + (y + g->pt) * PW + g->pl, x + y * g->W, (size_t)w1);
}

/* pfvm__qc_depthwise on this path: wd, wsum from pfvm__qd_weights; P: the
 * work buffer's plane room (at least PH * PW + 64 bytes). */
static void pfvm__qd_depthwise(const pfvm__qc_geom *g, const pfvm_tensor *X, int32_t xz, const int8_t *wd,
                               const int32_t *wsum, const pfvm__qc_out *o, uint8_t *P, int32_t *acc, pfvm__qi n)
{
    pfvm__qi c, OHW = g->OH * g->OW, PH, PW, G = pfvm__qd_groups(g), q, t;
    pfvm__qd_run r;
    pfvm__qc_plane_dims(g, &PH, &PW);
    r.OH = g->OH, r.OW = g->OW, r.KH = g->KH, r.G = G, r.sw = g->sw, r.rs = g->sh * PW, r.ks = g->dh * PW;
    r.V = g->OW > 48 ? 4 : (int)((g->OW + 15) / 16);
    r.zp = o->zp, r.u8 = o->Y->dtype == PFVM_UINT8;
    /* planes of at most 16 columns: as many whole rows a vector as fit its
     * 16 lanes and one load's 64 bytes, 4 vectors a step (14 columns: 56
     * bytes a store, where a step of columns stores 14) */
    r.R = g->OW <= 16 && g->OH > 1 ? 16 / g->OW : 0; /* 0: steps of columns */
    while (r.R > 1 && (r.R - 1) * r.rs + (g->OW - 1) * g->sw + (g->KW - 1) * g->dw > 63)
        r.R--;
    if (r.R) {
        pfvm__qi vecs = (g->OH + r.R - 1) / r.R;
        r.V = vecs > 4 ? 4 : (int)vecs;
    }
    for (q = 0; q < G; q++)
        for (t = 0; t < 64; t++) {
            pfvm__qi tap = 4 * q + t % 4, i = t / 4, at = (tap < g->KW ? tap : 4 * q) * g->dw;
            if (!r.R)
                at += i * g->sw;
            else if (i < r.R * g->OW)
                at += i / g->OW * r.rs + i % g->OW * g->sw;
            r.idx[q][t] = (uint8_t)at;
        }
    for (t = 0; t < 64; t++) { /* lane i of vector j: byte 16 (i / 4) + 4 j + i % 4 after the packs */
        pfvm__qi per = r.R ? r.R * g->OW : 16, j = t / per, i = t % per;
        r.out[t] = (uint8_t)(j < r.V ? 16 * (i / 4) + 4 * j + i % 4 : 0);
    }
    memset(P, (uint8_t)xz, (size_t)(PH * PW));
    for (c = 0; c < g->C; c++) {
        int32_t w[PFVM__QD_TAPS];
        uint32_t b = o->bias ? (uint32_t)o->bias[c] : 0;
        int sh = o->shift[c];
        memcpy(w, wd + c * g->KH * G * 4, (size_t)(g->KH * G * 4)); /* the words' bytes in order */
        pfvm__qd_fill(g, (const uint8_t *)X->data + (n * g->C + c) * g->H * g->W, P, PH, PW);
        r.y = sh >= 33 && sh <= 62 ? (uint8_t *)o->Y->data + (n * g->M + c) * OHW : NULL;
        r.mult = o->mult[c], r.s = sh - 32;
        pfvm__qd_plane(&r, P, w, (int32_t)(b - (uint32_t)xz * (uint32_t)wsum[c]), acc);
        if (!r.y) { /* the sums have the bias: stored without it */
            pfvm__qc_out nb = *o;
            nb.bias = NULL;
            pfvm__qc_store(&nb, c, (n * g->M + c) * OHW, acc, OHW);
        }
    }
}
#endif

static void pfvm__qc_depthwise(const pfvm__qc_geom *g, const pfvm_tensor *X, int32_t xz, const int16_t *wp,
                               const pfvm__qc_out *o, int16_t *P, int32_t *acc, pfvm__qi n)
{
    pfvm__qi c, OHW = g->OH * g->OW, PH, PWs;
    pfvm__qc_dw_dims(g, &PH, &PWs);
    memset(P, 0, (size_t)(g->sw * PH * PWs) * sizeof(int16_t));
    for (c = 0; c < g->C; c++) {
        pfvm__qc_dw_fill(g, X, (n * g->C + c) * g->H * g->W, xz, P);
        if (!pfvm__qc_dw_plane(g, P, wp + c * g->Mp * 2 * g->K2, acc, o, c, (n * g->M + c) * OHW))
            pfvm__qc_store(o, c, (n * g->M + c) * OHW, acc, OHW);
    }
}

/* Float scales the fixed-point multipliers can represent: finite and
 * positive (an infinite or zero scale takes the reference path, whose
 * double arithmetic saturates). */
static int pfvm__qc_scales_ok(const pfvm_tensor *s)
{
    int64_t i, n = pfvm_tensor_numel(s);
    for (i = 0; i < n; i++) {
        float v = ((const float *)s->data)[i];
        if (!(v > 0) || !isfinite(v))
            return 0;
    }
    return 1;
}

/* The constants of the fast path (weights, scales, zero points) are ones
 * it takes. ws_checked: the weight scales are the ones bind checked (the
 * per-channel scan skipped on every run). */
static int pfvm__qc_consts_ok(const pfvm_kctx *k, int ws_checked)
{
    const pfvm_tensor *xs = k->in[1], *xz = k->in[2], *W = k->in[3], *ws = k->in[4], *wz = k->in[5];
    const pfvm_tensor *ys = k->in[6], *yz = k->in[7], *B = k->n_in > 8 ? k->in[8] : NULL;
    int64_t nws;
    if (!pfvm__q_is8(W) || !pfvm__q_is8(xz) || !pfvm__q_is8(wz) || !pfvm__q_is8(yz) || !xs || !ys || !ws ||
        W->rank != 4 || pfvm_tensor_numel(xs) != 1 || pfvm_tensor_numel(xz) != 1 || pfvm_tensor_numel(ys) != 1 ||
        pfvm_tensor_numel(yz) != 1 || xs->dtype != PFVM_FLOAT || ys->dtype != PFVM_FLOAT || ws->dtype != PFVM_FLOAT ||
        (B && B->dtype != PFVM_INT32))
        return 0;
    nws = pfvm_tensor_numel(ws);
    return (nws == 1 || nws == W->dims[0]) && pfvm_tensor_numel(wz) == nws && (!B || pfvm_tensor_numel(B) == W->dims[0]) &&
           pfvm__qc_scales_ok(xs) && (ws_checked || pfvm__qc_scales_ok(ws)) && pfvm__qc_scales_ok(ys);
}

/* Packed weights and requantization multipliers: made at bind
 * (the prepare hook) when the weights, scales and zero points are
 * constants, and used by every run whose inputs are the ones they were
 * made from. */
typedef struct pfvm__qc_state {
    const void *w, *ws, *wz;
    float xs, ys;
    int64_t M, K2, Mp, group;
    int32_t *mult; /* [M] */
    int *shift;    /* [M] */
    int16_t *wp;   /* [group][Mp][2*K2] */
    int32_t *wsum; /* [group][Mp]: the rows' sums of weights minus zero points (VNNI) */
    int8_t *wv;    /* [group][Mp][4*K4] in blocks (pfvm__qv_weights), or NULL: no VNNI path;
                    * depthwise: pfvm__qd_weights' words and sums (wsum[c]) */
    int direct;    /* wv in the direct path's order (pfvm__qv_direct_conv) */
} pfvm__qc_state;

#ifndef PFVM_QLINEAR_PACK_PER_RUN
static void pfvm__qc_state_free(void *p)
{
    pfvm__free(p);
}
#endif

static void pfvm__qc_multipliers(const pfvm_kctx *k, int64_t M, int32_t *mult, int *shift)
{
    const float xs = *(const float *)k->in[1]->data, ys = *(const float *)k->in[6]->data;
    const float *ws = (const float *)k->in[4]->data;
    int64_t nws = pfvm_tensor_numel(k->in[4]), m;
    for (m = 0; m < M; m++)
        pfvm_q_multiplier((double)xs * ws[nws == 1 ? 0 : m] / ys, &mult[m], &shift[m]);
}

/* k->state when it was made from this run's constants. */
static const pfvm__qc_state *pfvm__qc_state_of(const pfvm_kctx *k, const pfvm__qc_geom *g)
{
    const pfvm__qc_state *s = (const pfvm__qc_state *)k->state;
    return s && s->w == k->in[3]->data && s->ws == k->in[4]->data && s->wz == k->in[5]->data &&
                   s->xs == *(const float *)k->in[1]->data && s->ys == *(const float *)k->in[6]->data &&
                   s->M == g->M && s->K2 == g->K2 && s->Mp == g->Mp && s->group == g->group
               ? s
               : NULL;
}

#ifdef PFVM__QV
/* Every row's requantization in the VNNI tile's lanes (shift 33 to 62,
 * pfvm__qg_requant8), which the direct path needs (it has no other store). */
static int pfvm__qv_shifts_fit(const pfvm_kctx *k, int64_t M)
{
    const float xs = *(const float *)k->in[1]->data, ys = *(const float *)k->in[6]->data;
    const float *ws = (const float *)k->in[4]->data;
    int64_t nws = pfvm_tensor_numel(k->in[4]), m;
    for (m = 0; m < M; m++) {
        int32_t mult;
        int shift;
        pfvm_q_multiplier((double)xs * ws[nws == 1 ? 0 : m] / ys, &mult, &shift);
        if (shift < 33 || shift > 62)
            return 0;
    }
    return 1;
}
#endif

#ifndef PFVM_QLINEAR_PACK_PER_RUN
/* The prepare hook (at bind): packs the constant weights into the node's
 * state. */
static pfvm_code pfvm__qc_prepare(const pfvm_kctx *k, const pfvm_tensor *const *consts, void **state,
                                  void (**free_fn)(void *))
{
    const pfvm_tensor *W = k->in[3];
    pfvm__qc_geom g;
    pfvm__qc_state *s;
    int64_t xd[4];
    size_t nwp, nwv, bytes;
    char *p;
    int direct = 0;
    if (k->n_in < 8 || !consts[1] || !consts[3] || !consts[4] || !consts[5] || !consts[6] || !k->in[1]->data ||
        !W->data || !k->in[4]->data || !k->in[5]->data || !k->in[6]->data || !pfvm__qc_consts_ok(k, 0))
        return PFVM_OK; /* not constants, or not the fast path: nothing to keep */
    /* an input large enough for any window: only the weights' part of g counts */
    xd[0] = 1, xd[1] = W->dims[1] * pfvm_node_attr_int(k->node, "group", 1), xd[2] = xd[3] = (int64_t)1 << 20;
    if (xd[1] < 1)
        return PFVM_OK;
    if (!pfvm__qc_geom_dims(k->node, xd, W->dims, NULL, &g) || (k->state && pfvm__qc_state_of(k, &g)))
        return PFVM_OK;
    nwp = (size_t)(g.group * g.Mp * 2 * g.K2);
    bytes = sizeof *s + (size_t)g.M * (sizeof(int32_t) + sizeof(int)) + nwp * sizeof(int16_t);
#ifdef PFVM__QV
    direct = pfvm__qv_usable(&g, W, k->in[5]) && pfvm__qv_direct(&g) && pfvm__qv_shifts_fit(k, g.M);
    nwv = pfvm__qv_usable(&g, W, k->in[5]) ? (size_t)(g.group * pfvm__qv_rows(&g, direct) * 4 * pfvm__qv_k4(&g, direct)) : 0;
    if (pfvm__qd_usable(&g, W, k->in[5])) /* (wsum's group * Mp words hold the M channels' sums) */
        nwv = pfvm__qd_bytes(&g);
#else
    nwv = 0;
#endif
    bytes += nwv ? (size_t)(g.group * g.Mp) * sizeof(int32_t) + nwv : 0;
    if (!(p = (char *)pfvm__malloc(bytes)))
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_NOMEM, "out of memory packing %lu bytes of weights",
                             (unsigned long)bytes);
    s = (pfvm__qc_state *)(void *)p;
    s->mult = (int32_t *)(void *)(p + sizeof *s);
    s->shift = (int *)(void *)(s->mult + g.M);
    s->wp = (int16_t *)(void *)(s->shift + g.M);
    s->wsum = nwv ? (int32_t *)(void *)(s->wp + nwp) : NULL; /* wp's size is a multiple of 8 int16 */
    s->wv = nwv ? (int8_t *)(void *)(s->wsum + g.group * g.Mp) : NULL;
    s->w = W->data;
    s->ws = k->in[4]->data;
    s->wz = k->in[5]->data;
    s->xs = *(const float *)k->in[1]->data;
    s->ys = *(const float *)k->in[6]->data;
    s->M = g.M, s->K2 = g.K2, s->Mp = g.Mp, s->group = g.group;
    s->direct = direct;
    pfvm__qc_weights(W, k->in[5], &g, s->wp);
#ifdef PFVM__QV
    if (nwv && pfvm__qc_is_dw(&g))
        pfvm__qd_weights(W, k->in[5], &g, s->wv, s->wsum);
    else if (nwv)
        pfvm__qv_weights(W, k->in[5], &g, direct, s->wv, s->wsum);
#endif
    pfvm__qc_multipliers(k, g.M, s->mult, s->shift);
    *state = s;
    *free_fn = pfvm__qc_state_free;
    return PFVM_OK;
}
#endif

/* 1 when the fast path ran (or failed: *rc), 0 when the node is not one it takes. */
static int pfvm__qc_fast(pfvm_kctx *k, pfvm_code *rc)
{
    const pfvm_tensor *X = k->in[0], *xz = k->in[2], *yz = k->in[7], *B = k->n_in > 8 ? k->in[8] : NULL;
    const pfvm__qc_state *s;
    pfvm__qc_geom g;
    pfvm__qc_out o;
    pfvm__qi n, gg;
    const int32_t *mult;
    const int *shift;
    const int16_t *wp;
    int32_t *acc;
    int16_t *buf;
    size_t need, nwp;
    char *scratch;
    int ws_checked = 0;
#ifdef PFVM__QV
    int vnni, direct = 0;
    pfvm__qi npan, K4;
    size_t nwv = 0;
    const int8_t *wv = NULL;
    const int32_t *wsum = NULL;
#endif
    *rc = PFVM_OK;
    /* a state made at bind: its weight scales passed pfvm__qc_scales_ok there
     * (x86 only: the Cortex-M builds keep their instruction counts) */
    s = (const pfvm__qc_state *)k->state;
#ifdef PFVM__QV
    ws_checked = s && k->in[4] && s->ws == k->in[4]->data;
#endif
    if (!pfvm__q_is8(X) || !pfvm__q_is8(k->out[0]) || !pfvm__qc_consts_ok(k, ws_checked) || !pfvm__qc_geometry(k, &g))
        return 0;
    s = pfvm__qc_state_of(k, &g);
    nwp = (size_t)(g.group * g.Mp * 2 * g.K2);
    need = pfvm__qc_work_bytes(&g);
    if (!s) /* weights packed for this run only */
        need += (size_t)g.M * (sizeof(int32_t) + sizeof(int)) + nwp * sizeof(int16_t);
#ifdef PFVM__QV
    /* the VNNI path: uint8 activations, weights packed for it at bind or,
     * when they fit int8, for this run */
    npan = (g.OH * g.OW + PFVM__QG_NR - 1) / PFVM__QG_NR;
    /* (depthwise: the AVX-512 VBMI kernel, pfvm__qd_weights' layout) */
    vnni = X->dtype == PFVM_UINT8 && (pfvm__qc_is_dw(&g) ? pfvm__qd_on() : pfvm_q_vnni());
    if (vnni && s && s->wv)
        wv = s->wv, wsum = s->wsum, direct = s->direct;
    else if (vnni && !s &&
             (pfvm__qc_is_dw(&g) ? pfvm__qd_usable(&g, k->in[3], k->in[5]) : pfvm__qv_usable(&g, k->in[3], k->in[5]))) {
        /* (with s, bind decided) */
        direct = pfvm__qv_direct(&g) && pfvm__qv_shifts_fit(k, g.M);
        nwv = pfvm__qc_is_dw(&g) ? pfvm__qd_bytes(&g)
                                   : (size_t)(g.group * pfvm__qv_rows(&g, direct) * 4 * pfvm__qv_k4(&g, direct));
        need += (size_t)(g.group * g.Mp) * sizeof(int32_t) + nwv;
    } else
        vnni = 0;
    K4 = pfvm__qv_k4(&g, direct);
#endif
    if (!(scratch = (char *)pfvm_kctx_scratch(k, need)))
        return *rc = k->st ? k->st->code : PFVM_ERR_NOMEM, 1;
    /* int32 first: every part stays aligned */
    acc = (int32_t *)(void *)scratch;
    buf = (int16_t *)(void *)(acc + (pfvm__qc_is_dw(&g) ? g.OH * g.OW : g.group * g.Mp * 2));
    if (s) {
        mult = s->mult, shift = s->shift, wp = s->wp;
    } else {
        int32_t *m2 = (int32_t *)(void *)(scratch + pfvm__qc_work_bytes(&g));
        int *s2 = (int *)(void *)(m2 + g.M);
        int16_t *w2 = (int16_t *)(void *)(s2 + g.M);
        pfvm__qc_weights(k->in[3], k->in[5], &g, w2);
        pfvm__qc_multipliers(k, g.M, m2, s2);
        mult = m2, shift = s2, wp = w2;
    }
#ifdef PFVM__QV
    if (nwv) {
        int32_t *ws2 = (int32_t *)(void *)(scratch + pfvm__qc_work_bytes(&g) +
                                            (s ? 0 : (size_t)g.M * (sizeof(int32_t) + sizeof(int)) + nwp * sizeof(int16_t)));
        int8_t *wv2 = (int8_t *)(void *)(ws2 + g.group * g.Mp);
        if (pfvm__qc_is_dw(&g))
            pfvm__qd_weights(k->in[3], k->in[5], &g, wv2, ws2);
        else
            pfvm__qv_weights(k->in[3], k->in[5], &g, direct, wv2, ws2);
        wv = wv2, wsum = ws2;
    }
#endif
    o.mult = mult;
    o.shift = shift;
    o.bias = B ? (const int32_t *)B->data : NULL;
    o.zp = pfvm__q_at(yz, 0);
    o.lo = k->out[0]->dtype == PFVM_UINT8 ? 0 : -128;
    o.hi = k->out[0]->dtype == PFVM_UINT8 ? 255 : 127;
    o.Y = k->out[0];
    o.bias2 = acc;
    if (!pfvm__qc_is_dw(&g))
        for (gg = 0; gg < g.group; gg++)
            for (n = 0; n < g.Mp; n++) {
                pfvm__qi m = gg * g.MG + n;
                acc[2 * (gg * g.Mp + n)] = acc[2 * (gg * g.Mp + n) + 1] = o.bias && n < g.MG ? o.bias[m] : 0;
            }
    for (n = 0; n < g.N; n++) {
        if (pfvm__qc_is_dw(&g)) {
#ifdef PFVM__QV
            if (vnni) { /* AVX-512 VBMI */
                pfvm__qd_depthwise(&g, X, pfvm__q_at(xz, 0), wv, wsum, &o, (uint8_t *)buf, acc, n);
                continue;
            }
#endif
            pfvm__qc_depthwise(&g, X, pfvm__q_at(xz, 0), wp, &o, buf, acc, n);
            continue;
        }
        for (gg = 0; gg < g.group; gg++) {
#ifdef PFVM__QV
            if (vnni && direct) {
                pfvm__qv_direct_conv(&g, wv + gg * pfvm__qv_rows(&g, 1) * 4 * K4, wsum + gg * g.Mp, pfvm__q_at(xz, 0),
                                     (const uint8_t *)X->data + (n * g.C + gg * g.CG) * g.H * g.W, &o, n, gg,
                                     (uint8_t *)buf);
                continue;
            }
            if (vnni) {
                uint8_t *panels = (uint8_t *)buf, *rows = panels + npan * K4 * 4 * PFVM__QG_NR;
                pfvm__qv_pack(&g, (const uint8_t *)X->data + (n * g.C + gg * g.CG) * g.H * g.W, (uint8_t)pfvm__q_at(xz, 0),
                              panels, rows);
                /* the rows' parameters after the four im2col rows (npan * 64 bytes) */
                pfvm__qv_gemm(&g, wv + gg * g.Mp * 4 * K4, wsum + gg * g.Mp, pfvm__q_at(xz, 0), panels, &o, n, gg,
                              (int32_t *)(void *)(rows + npan * 4 * PFVM__QG_NR));
                continue;
            }
#endif
            if (pfvm__qc_is_gemv(&g)) {
                pfvm__qc_gemv(&g, X, n * g.C + gg * g.CG, pfvm__q_at(xz, 0), wp + gg * g.Mp * 2 * g.K2, buf, &o, n, gg);
                continue;
            }
            pfvm__qc_pack(&g, X, (n * g.C + gg * g.CG) * g.H * g.W, pfvm__q_at(xz, 0), buf);
            pfvm__qc_gemm(&g, wp + gg * g.Mp * 2 * g.K2, buf, &o, n, gg);
        }
    }
    return 1;
}

static pfvm_code pfvm__q_k_qlinear_conv(pfvm_kctx *k)
{
    pfvm__q_requant r;
    pfvm_code rc;
    if (pfvm__qc_fast(k, &rc))
        return rc;
    if (pfvm_tensor_numel(k->in[1]) < 1 || pfvm_tensor_numel(k->in[4]) < 1 || pfvm_tensor_numel(k->in[6]) < 1)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "a scale is empty");
    memset(&r, 0, sizeof r);
    r.y = k->out[0];
    r.xs = pfvm_tensor_get_f64(k->in[1], 0);
    r.ws = k->in[4];
    r.nws = pfvm_tensor_numel(k->in[4]);
    r.ys = k->in[6];
    r.zp = pfvm_tensor_get_f64(k->in[7], 0);
    r.bias = k->n_in > 8 ? k->in[8] : NULL;
    return pfvm_nn_conv_ref(k, k->in[0], k->in[3], k->in[2], k->in[5], pfvm__q_conv_requant, &r);
}

/* Workspace hook: the buffers of a run of the fast path (and, when the
 * weights are packed per run, their packed form and multipliers). */
static size_t pfvm__q_workspace_qlinear_conv(const pfvm_node *n, const pfvm_dims *in, int n_in, const pfvm_dims *out,
                                             int n_out)
{
    pfvm__qc_geom g;
    if (n_in < 4 || n_out < 1 || in[0].rank != 4 || in[3].rank != 4 || out[0].rank != 4 ||
        !pfvm__qc_geom_dims(n, in[0].d, in[3].d, out[0].d, &g))
        return 0;
#ifdef PFVM_QLINEAR_PACK_PER_RUN
    return pfvm__qc_work_bytes(&g) + (size_t)g.M * (sizeof(int32_t) + sizeof(int)) +
           (size_t)(g.group * g.Mp * 2 * g.K2) * sizeof(int16_t);
#else
    return pfvm__qc_work_bytes(&g);
#endif
}

/* Packed at bind (kept as node state: twice the int8 weights' bytes) or,
 * with PFVM_QLINEAR_PACK_PER_RUN, per run in the workspace (one layer's). */
#ifdef PFVM_QLINEAR_PACK_PER_RUN
#define PFVM__QC_PREPARE NULL
#else
#define PFVM__QC_PREPARE pfvm__qc_prepare
#endif

/* Conv-shaped inference through a view of the node's Conv attributes.
 * x and w are viewed without their (integer) dtypes: Conv's rule checks
 * shapes here, not its float types. */
static pfvm_code pfvm__q_infer_conv(pfvm_ictx *c, int x, int w, pfvm_dtype dt)
{
    const pfvm_op_def *conv = pfvm_op_find("", "Conv", 11);
    pfvm_ictx c2 = *c;
    const pfvm_ival *ins[2];
    pfvm_ival xv, wv;
    pfvm_code rc;
    if (!c->in[x] || !c->in[w])
        return pfvm__fail(c->st, PFVM_ERR_INVALID, "x and w are required");
    xv = *c->in[x];
    wv = *c->in[w];
    xv.type.dtype = wv.type.dtype = PFVM_UNDEFINED;
    ins[0] = &xv;
    ins[1] = &wv;
    c2.in = ins;
    c2.n_in = 2;
    if (!conv)
        return pfvm_infer_unknown(c, 0, dt, c->in[x]->type.shape.rank);
    rc = conv->infer(&c2);
    if (!rc)
        c->out[0]->type.dtype = dt;
    return rc;
}

static pfvm_code pfvm__q_infer_conv_integer(pfvm_ictx *c)
{
    return pfvm__q_infer_conv(c, 0, 1, PFVM_INT32);
}

static pfvm_code pfvm__q_infer_qlinear_conv(pfvm_ictx *c)
{
    return pfvm__q_infer_conv(c, 0, 3, c->in[7]->type.dtype);
}

/* ---- QLinearAveragePool, QLinearGlobalAveragePool (com.microsoft) ------------------------ *
 *
 * onnxruntime's quantized average pooling (NCHW): the sum of x - x_zero_point
 * over each window, requantized with the fixed-point multiplier of
 * x_scale / (y_scale * count) (pfvm_q_requantize): exact integers, the same
 * on every target, within a rounding of the float reference's
 * DequantizeLinear -> AveragePool -> QuantizeLinear. y has x's type. */

/* Shape inference through a view of AveragePool (or GlobalAveragePool)
 * on x without its integer dtype. */
static pfvm_code pfvm__q_infer_avgpool(pfvm_ictx *c)
{
    int global = !strcmp(c->node->op_type, "QLinearGlobalAveragePool");
    const pfvm_op_def *pool = pfvm_op_find("", global ? "GlobalAveragePool" : "AveragePool", 11);
    pfvm_ictx c2 = *c;
    const pfvm_ival *ins[1];
    pfvm_ival xv;
    pfvm_code rc;
    pfvm_dtype dt = c->in[0]->type.dtype;
    if (pfvm_node_attr_int(c->node, "channels_last", 0))
        return pfvm__fail(c->st, PFVM_ERR_UNSUPPORTED, "channels_last is not supported");
    xv = *c->in[0];
    xv.type.dtype = PFVM_UNDEFINED;
    ins[0] = &xv;
    c2.in = ins;
    c2.n_in = 1;
    if (!pool)
        return pfvm_infer_unknown(c, 0, dt, c->in[0]->type.shape.rank);
    rc = pool->infer(&c2);
    if (!rc)
        c->out[0]->type.dtype = dt;
    return rc;
}

typedef struct pfvm__qp_geom {
    pfvm__qi N, C, H, W, OH, OW, KH, KW, sh, sw, pt, pl;
    int include_pad;
} pfvm__qp_geom;

static pfvm_code pfvm__qp_geometry(pfvm_kctx *k, pfvm__qp_geom *g)
{
    const pfvm_tensor *X = k->in[0];
    int64_t ks[2], s[2], p[4];
    const char *ap = pfvm_node_attr_string(k->node, "auto_pad", "NOTSET");
    if (X->rank != 4)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_UNSUPPORTED, "x must be 4-D (NCHW), not rank %d", X->rank);
    g->N = X->dims[0], g->C = X->dims[1], g->H = X->dims[2], g->W = X->dims[3];
    if (!strcmp(k->node->op_type, "QLinearGlobalAveragePool")) {
        ks[0] = g->H, ks[1] = g->W, s[0] = s[1] = 1, p[0] = p[1] = p[2] = p[3] = 0;
    } else if ((strcmp(ap, "NOTSET") && strcmp(ap, "VALID")) || pfvm_node_attr_int(k->node, "ceil_mode", 0) ||
               !pfvm__qc_attr2(k->node, "kernel_shape", 0, ks, 2) || !pfvm__qc_attr2(k->node, "strides", 1, s, 2) ||
               !pfvm__qc_attr2(k->node, "pads", 0, p, 4)) {
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_UNSUPPORTED,
                             "only 2-D windows with explicit pads and ceil_mode 0 are supported");
    }
    if (ks[0] < 1 || ks[1] < 1 || s[0] < 1 || s[1] < 1 || p[0] < 0 || p[1] < 0 || p[2] < 0 || p[3] < 0 ||
        p[0] >= ks[0] || p[1] >= ks[1] || p[2] >= ks[0] || p[3] >= ks[1] || g->H + p[0] + p[2] < ks[0] ||
        g->W + p[1] + p[3] < ks[1])
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "window %lldx%lld, strides or pads do not fit the input",
                             (long long)ks[0], (long long)ks[1]);
    g->KH = ks[0], g->KW = ks[1], g->sh = s[0], g->sw = s[1], g->pt = p[0], g->pl = p[1];
    g->OH = (g->H + p[0] + p[2] - ks[0]) / s[0] + 1;
    g->OW = (g->W + p[1] + p[3] - ks[1]) / s[1] + 1;
    g->include_pad = pfvm_node_attr_int(k->node, "count_include_pad", 0) != 0;
    return PFVM_OK;
}

/* The sum of x - xz over rows [h0, h1) and columns [w0, w1) of a plane. */
static int32_t pfvm__qp_sum(const pfvm_tensor *X, pfvm__qi plane, pfvm__qi W, pfvm__qi h0, pfvm__qi h1, pfvm__qi w0,
                            pfvm__qi w1, int32_t xz)
{
    int32_t sum = 0;
    pfvm__qi h, w;
#ifdef PFVM__QG_DSP
    if (X->dtype == PFVM_UINT8 && w0 == 0 && w1 == W) { /* whole rows: one run, four bytes per USADA8 */
        const uint8_t *x = (const uint8_t *)X->data + plane + h0 * W, *end = x + (h1 - h0) * W;
        uint32_t u = 0;
        for (; end - x >= 4; x += 4)
            u = __usada8(PFVM__QG_UWORD32(x), 0, u);
        for (; x < end; x++)
            u += *x;
        return (int32_t)u - xz * (int32_t)((h1 - h0) * W);
    }
#endif
    for (h = h0; h < h1; h++) {
        if (X->dtype == PFVM_UINT8) {
            const uint8_t *x = (const uint8_t *)X->data + plane + h * W;
            for (w = w0; w < w1; w++)
                sum += x[w];
        } else {
            const int8_t *x = (const int8_t *)X->data + plane + h * W;
            for (w = w0; w < w1; w++)
                sum += x[w];
        }
    }
    return sum - xz * (int32_t)((h1 - h0) * (w1 - w0));
}

static pfvm_code pfvm__q_k_avgpool(pfvm_kctx *k)
{
    const pfvm_tensor *X = k->in[0], *xs = k->in[1], *xzt = k->n_in > 2 ? k->in[2] : NULL, *ys = k->in[3];
    const pfvm_tensor *yzt = k->n_in > 4 ? k->in[4] : NULL;
    pfvm__qp_geom g;
    pfvm__qi n, c, oh, ow, last_count = -1;
    int64_t dims[4];
    int32_t xz, yz, lo, hi, mult = 0;
    int shift = 0;
    double real;
    if (!pfvm__q_is8(X) || (xzt && xzt->data && xzt->dtype != X->dtype) || (yzt && yzt->data && yzt->dtype != X->dtype))
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_UNSUPPORTED, "x and the zero points must be uint8 or int8, of one type");
    if (pfvm_tensor_numel(xs) != 1 || pfvm_tensor_numel(ys) != 1 || (xzt && xzt->data && pfvm_tensor_numel(xzt) != 1) ||
        (yzt && yzt->data && pfvm_tensor_numel(yzt) != 1))
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_UNSUPPORTED, "scales and zero points must be per tensor");
    memset(&g, 0, sizeof g);
    real = pfvm_tensor_get_f64(xs, 0) / pfvm_tensor_get_f64(ys, 0);
    if (!(real > 0) || !isfinite(real))
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "x_scale / y_scale is %g: not a positive finite number", real);
    if (pfvm__qp_geometry(k, &g))
        return k->st ? k->st->code : PFVM_ERR_INVALID;
    dims[0] = g.N, dims[1] = g.C, dims[2] = g.OH, dims[3] = g.OW;
    if (pfvm_kctx_output(k, 0, X->dtype, 4, dims))
        return k->st ? k->st->code : PFVM_ERR_NOMEM;
    xz = xzt && xzt->data ? pfvm__q_at(xzt, 0) : 0;
    yz = yzt && yzt->data ? pfvm__q_at(yzt, 0) : 0;
    lo = X->dtype == PFVM_UINT8 ? 0 : -128;
    hi = X->dtype == PFVM_UINT8 ? 255 : 127;
    for (n = 0; n < g.N; n++)
        for (c = 0; c < g.C; c++) {
            pfvm__qi plane = (n * g.C + c) * g.H * g.W, out = (n * g.C + c) * g.OH * g.OW;
            for (oh = 0; oh < g.OH; oh++)
                for (ow = 0; ow < g.OW; ow++) {
                    pfvm__qi h0 = oh * g.sh - g.pt, w0 = ow * g.sw - g.pl, h1 = h0 + g.KH, w1 = w0 + g.KW, count;
                    int32_t v;
                    h0 = h0 < 0 ? 0 : h0, w0 = w0 < 0 ? 0 : w0;
                    h1 = h1 > g.H ? g.H : h1, w1 = w1 > g.W ? g.W : w1;
                    count = g.include_pad ? g.KH * g.KW : (h1 - h0) * (w1 - w0);
                    if (count != last_count) { /* one multiplier per window size */
                        pfvm_q_multiplier(real / (double)count, &mult, &shift);
                        last_count = count;
                    }
                    v = pfvm_q_requantize(pfvm__qp_sum(X, plane, g.W, h0, h1, w0, w1, xz), mult, shift, yz, lo, hi);
                    if (X->dtype == PFVM_UINT8)
                        ((uint8_t *)k->out[0]->data)[out + oh * g.OW + ow] = (uint8_t)v;
                    else
                        ((int8_t *)k->out[0]->data)[out + oh * g.OW + ow] = (int8_t)v;
                }
        }
    return PFVM_OK;
}

/* ---- QLinearAdd (com.microsoft) -------------------------------------------------------------- *
 *
 * onnxruntime's quantized Add: c = zc + (sa (a - za) + sb (b - zb)) / sc,
 * saturated to c's type, with numpy broadcasting. The two ratios become
 * 22-bit multipliers over one shift (pfvm_q_add_params) so the sum stays in
 * int32 and rounds once, half up (pfvm_q_add): within 1 of the float
 * reference's DequantizeLinear -> Add -> QuantizeLinear, and the same
 * integers on every target. */

PFVM_INTERNAL int pfvm_q_add_params(double ra, double rb, int32_t *ma, int32_t *mb, int *shift)
{
    double big = ra > rb ? ra : rb;
    int e;
    *ma = *mb = 0;
    *shift = 0;
    if (!(ra > 0) || !(rb > 0) || !isfinite(big))
        return 0;
    (void)frexp(big, &e); /* big = f * 2^e, f in [0.5, 1): big * 2^(21 - e) in [2^20, 2^21) */
    if (21 - e < 0)
        return 0;
    *shift = 21 - e > 31 ? 31 : 21 - e;
    *ma = (int32_t)floor(ldexp(ra, *shift) + 0.5);
    *mb = (int32_t)floor(ldexp(rb, *shift) + 0.5);
    return 1;
}

PFVM_INTERNAL int32_t pfvm_q_add(int32_t da, int32_t db, int32_t ma, int32_t mb, int shift, int32_t zc, int32_t lo,
                                 int32_t hi)
{
    int32_t acc = da * ma + db * mb; /* |d| <= 255, m <= 2^21: |acc| < 2^31 */
    int32_t v = zc + (shift ? (acc + ((int32_t)1 << (shift - 1))) >> shift : acc);
    return v < lo ? lo : v > hi ? hi : v;
}

typedef struct pfvm__qa_par {
    const void *a, *b;
    void *c;
    int32_t za, zb, zc, ma, mb, lo, hi;
    int shift, u8, avx2;
} pfvm__qa_par;

#ifdef PFVM__QG_AVX2
/* 8 elements of one operand minus its zero point, times its multiplier. */
__attribute__((target("avx2"))) static __m256i pfvm__qa_term(__m128i v, int u8, __m256i z, __m256i m)
{
    __m256i x = u8 ? _mm256_cvtepu8_epi32(v) : _mm256_cvtepi8_epi32(v);
    return _mm256_mullo_epi32(_mm256_sub_epi32(x, z), m);
}

/* The contiguous run's first n - n % 16 elements, as pfvm_q_add (the packs
 * saturate to c's type). Returns how many it did. */
__attribute__((target("avx2"))) static int64_t pfvm__qa_run_avx2(const pfvm__qa_par *p, const void *a, const void *b,
                                                                void *c, int64_t n)
{
    const __m256i za = _mm256_set1_epi32(p->za), zb = _mm256_set1_epi32(p->zb), zc = _mm256_set1_epi32(p->zc);
    const __m256i ma = _mm256_set1_epi32(p->ma), mb = _mm256_set1_epi32(p->mb);
    const __m256i rnd = _mm256_set1_epi32(p->shift ? (int32_t)1 << (p->shift - 1) : 0);
    const __m128i cnt = _mm_cvtsi32_si128(p->shift);
    int64_t i;
    for (i = 0; i + 16 <= n; i += 16) {
        __m128i va = _mm_loadu_si128((const __m128i *)(const void *)((const uint8_t *)a + i));
        __m128i vb = _mm_loadu_si128((const __m128i *)(const void *)((const uint8_t *)b + i));
        __m256i s0 = _mm256_add_epi32(pfvm__qa_term(va, p->u8, za, ma), pfvm__qa_term(vb, p->u8, zb, mb));
        __m256i s1 = _mm256_add_epi32(pfvm__qa_term(_mm_srli_si128(va, 8), p->u8, za, ma),
                                      pfvm__qa_term(_mm_srli_si128(vb, 8), p->u8, zb, mb));
        __m256i w;
        __m128i lo, hi;
        s0 = _mm256_add_epi32(_mm256_sra_epi32(_mm256_add_epi32(s0, rnd), cnt), zc);
        s1 = _mm256_add_epi32(_mm256_sra_epi32(_mm256_add_epi32(s1, rnd), cnt), zc);
        w = _mm256_permute4x64_epi64(_mm256_packs_epi32(s0, s1), 0xD8); /* 16 int16 in order */
        lo = _mm256_castsi256_si128(w);
        hi = _mm256_extracti128_si256(w, 1);
        _mm_storeu_si128((__m128i *)(void *)((uint8_t *)c + i), p->u8 ? _mm_packus_epi16(lo, hi) : _mm_packs_epi16(lo, hi));
    }
    return i;
}
#endif

static void pfvm__qa_fn(void *user, int64_t pos, int64_t len, const int64_t *off, const int64_t *stride)
{
    const pfvm__qa_par *p = (const pfvm__qa_par *)user;
    int64_t i = 0;
#ifdef PFVM__QG_AVX2
    if (p->avx2 && stride[0] == 1 && stride[1] == 1)
        i = pfvm__qa_run_avx2(p, (const uint8_t *)p->a + off[0], (const uint8_t *)p->b + off[1], (uint8_t *)p->c + pos, len);
#endif
    if (p->u8) {
        const uint8_t *a = (const uint8_t *)p->a + off[0], *b = (const uint8_t *)p->b + off[1];
        uint8_t *c = (uint8_t *)p->c + pos;
        for (; i < len; i++)
            c[i] = (uint8_t)pfvm_q_add(a[i * stride[0]] - p->za, b[i * stride[1]] - p->zb, p->ma, p->mb, p->shift, p->zc,
                                       p->lo, p->hi);
    } else {
        const int8_t *a = (const int8_t *)p->a + off[0], *b = (const int8_t *)p->b + off[1];
        int8_t *c = (int8_t *)p->c + pos;
        for (; i < len; i++)
            c[i] = (int8_t)pfvm_q_add(a[i * stride[0]] - p->za, b[i * stride[1]] - p->zb, p->ma, p->mb, p->shift, p->zc,
                                      p->lo, p->hi);
    }
}

static pfvm_code pfvm__q_infer_qlinear_add(pfvm_ictx *c)
{
    const pfvm_shape *shapes[2];
    pfvm_shape out;
    pfvm_dtype dt;
    if (!c->in[0] || !c->in[3])
        return pfvm__fail(c->st, PFVM_ERR_INVALID, "A or B is missing");
    dt = c->in[0]->type.dtype;
    if (dt != PFVM_UNDEFINED && c->in[3]->type.dtype != PFVM_UNDEFINED && c->in[3]->type.dtype != dt)
        return pfvm__fail(c->st, PFVM_ERR_SHAPE, "A and B must have one type");
    shapes[0] = &c->in[0]->type.shape;
    shapes[1] = &c->in[3]->type.shape;
    if (pfvm_infer_broadcast(c, shapes, 2, &out))
        return c->st ? c->st->code : PFVM_ERR_SHAPE;
    if (c->out[0])
        pfvm_ival_set_tensor(c->out[0], dt, &out);
    return PFVM_OK;
}

/* The per-tensor zero point input j (0 when absent); -1000 when it is
 * not one element of type dt. */
static int32_t pfvm__qa_zp(const pfvm_kctx *k, int j, pfvm_dtype dt)
{
    const pfvm_tensor *t = k->n_in > j ? k->in[j] : NULL;
    if (!t || !t->data)
        return 0;
    return t->dtype == dt && pfvm_tensor_numel(t) == 1 ? pfvm__q_at(t, 0) : -1000;
}

static pfvm_code pfvm__q_k_qlinear_add(pfvm_kctx *k)
{
    const pfvm_tensor *A = k->in[0], *B = k->in[3], *ins[2];
    pfvm__qa_par p;
    double sa, sb, sc;
    int64_t dims[PFVM_MAX_RANK];
    int rank;
    if (!A || !B || !k->in[1] || !k->in[4] || !k->in[6])
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "A, B and the scales are required");
    if (!pfvm__q_is8(A) || B->dtype != A->dtype)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_UNSUPPORTED, "A and B must be uint8 or int8, of one type");
    if (pfvm_tensor_numel(k->in[1]) != 1 || pfvm_tensor_numel(k->in[4]) != 1 || pfvm_tensor_numel(k->in[6]) != 1)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_UNSUPPORTED, "scales must be per tensor");
    memset(&p, 0, sizeof p);
    p.u8 = A->dtype == PFVM_UINT8;
    p.za = pfvm__qa_zp(k, 2, A->dtype);
    p.zb = pfvm__qa_zp(k, 5, A->dtype);
    p.zc = pfvm__qa_zp(k, 7, A->dtype);
    if (p.za == -1000 || p.zb == -1000 || p.zc == -1000)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_UNSUPPORTED, "zero points must be one element of A's type");
    sa = pfvm_tensor_get_f64(k->in[1], 0), sb = pfvm_tensor_get_f64(k->in[4], 0), sc = pfvm_tensor_get_f64(k->in[6], 0);
    if (!(sc > 0) || !pfvm_q_add_params(sa / sc, sb / sc, &p.ma, &p.mb, &p.shift))
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_UNSUPPORTED,
                             "scales %g, %g over %g: the ratios must be positive and below 2^21", sa, sb, sc);
    ins[0] = A;
    ins[1] = B;
    if (pfvm_ew_broadcast_dims(k, ins, 2, &rank, dims) || pfvm_kctx_output(k, 0, A->dtype, rank, dims))
        return k->st ? k->st->code : PFVM_ERR_SHAPE;
    p.lo = p.u8 ? 0 : -128;
    p.hi = p.u8 ? 255 : 127;
    p.a = A->data, p.b = B->data, p.c = k->out[0]->data;
#ifdef PFVM__QG_AVX2
    p.avx2 = pfvm_q_gemm_kind() == 2;
#endif
    return pfvm_ew_apply(k, ins, 2, k->out[0], pfvm__qa_fn, &p);
}

/* ---- QGemm (com.microsoft), float output ------------------------------------------------------ *
 *
 * onnxruntime's quantized Gemm without y_scale: Y[i][n] = (sum_k (A[i][k] -
 * az) (B[n][k] - bz[n]) + C[n]) * a_scale * b_scale[n] in float, B given
 * as [N, K] (transB = 1): the classifier of a QDQ model whose logits stay
 * float, on 8-bit weights instead of a dequantized copy made on each run.
 * The sums are exact int32 (K at most 33025), the product one float
 * multiply: the same on every target. */

#define PFVM__QM_MAX_K 33025 /* K * 255 * 255 < 2^31 */

#ifdef PFVM__QG_AVX2
/* 16 8-bit values minus their zero point as int16. */
__attribute__((target("avx2"))) static __m256i pfvm__qm_load16(const void *p, int u8, __m256i z)
{
    __m128i v = _mm_loadu_si128((const __m128i *)p);
    return _mm256_sub_epi16(u8 ? _mm256_cvtepu8_epi16(v) : _mm256_cvtepi8_epi16(v), z);
}

/* pfvm__qm_dot's first K - K % 16 positions (vpmaddwd: exact, the pairs'
 * sums below 2^31); returns how many, the sum in *acc. */
__attribute__((target("avx2"))) static int64_t pfvm__qm_dot_avx2(const void *a, int au, int32_t az, const void *b, int bu,
                                                                int32_t bz, int64_t K, int32_t *acc)
{
    const __m256i za = _mm256_set1_epi16((int16_t)az), zb = _mm256_set1_epi16((int16_t)bz);
    __m256i s = _mm256_setzero_si256();
    __m128i h;
    int64_t k;
    for (k = 0; k + 16 <= K; k += 16)
        s = _mm256_add_epi32(s, _mm256_madd_epi16(pfvm__qm_load16((const uint8_t *)a + k, au, za),
                                                  pfvm__qm_load16((const uint8_t *)b + k, bu, zb)));
    h = _mm_add_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
    h = _mm_add_epi32(h, _mm_shuffle_epi32(h, 0x4E));
    h = _mm_add_epi32(h, _mm_shuffle_epi32(h, 0xB1));
    *acc = _mm_cvtsi128_si32(h);
    return k;
}
#endif

typedef struct pfvm__qm_par {
    const pfvm_tensor *A, *B, *bs, *bz, *C;
    int32_t az;
    float as;
    int64_t K;
} pfvm__qm_par;

/* sum_k (a[k] - az) (b[k] - bz) over one row of A and one of B. */
static int32_t pfvm__qm_dot(const pfvm__qm_par *p, const void *a, const void *b, int32_t bz)
{
    int32_t acc = 0;
    int64_t k = 0;
    int au = p->A->dtype == PFVM_UINT8, bu = p->B->dtype == PFVM_UINT8;
#ifdef PFVM__QG_AVX2
    if (pfvm_q_gemm_kind() == 2)
        k = pfvm__qm_dot_avx2(a, au, p->az, b, bu, bz, p->K, &acc);
#endif
    for (; k < p->K; k++)
        acc += ((au ? ((const uint8_t *)a)[k] : ((const int8_t *)a)[k]) - p->az) *
               ((bu ? ((const uint8_t *)b)[k] : ((const int8_t *)b)[k]) - bz);
    return acc;
}

static pfvm_code pfvm__q_infer_qgemm(pfvm_ictx *c)
{
    const pfvm_shape *a = c->in[0] ? &c->in[0]->type.shape : NULL, *b = c->n_in > 3 && c->in[3] ? &c->in[3]->type.shape : NULL;
    pfvm_shape out;
    int ta = (int)pfvm_node_attr_int(c->node, "transA", 0), tb = (int)pfvm_node_attr_int(c->node, "transB", 0);
    pfvm_dtype dt = c->n_in > 7 && c->in[7] ? (c->n_in > 8 && c->in[8] ? c->in[8]->type.dtype : PFVM_UINT8) : PFVM_FLOAT;
    if (!a || !b)
        return pfvm__fail(c->st, PFVM_ERR_INVALID, "A or B is missing");
    if (a->rank < 0 || b->rank < 0)
        return pfvm_infer_unknown(c, 0, dt, 2);
    if (a->rank != 2 || b->rank != 2)
        return pfvm__fail(c->st, PFVM_ERR_SHAPE, "A and B must be 2-D, not rank %d and %d", a->rank, b->rank);
    out.rank = 2;
    out.dims[0] = a->dims[ta ? 1 : 0];
    out.dims[1] = b->dims[tb ? 0 : 1];
    if (c->out[0])
        pfvm_ival_set_tensor(c->out[0], dt, &out);
    return PFVM_OK;
}

static pfvm_code pfvm__q_k_qgemm(pfvm_kctx *k)
{
    pfvm__qm_par p;
    const pfvm_tensor *az = k->n_in > 2 ? k->in[2] : NULL;
    int64_t M, N, i, n, nb, dims[2];
    float *y;
    memset(&p, 0, sizeof p);
    p.A = k->in[0], p.B = k->n_in > 3 ? k->in[3] : NULL, p.bs = k->n_in > 4 ? k->in[4] : NULL;
    p.bz = k->n_in > 5 && k->in[5] && k->in[5]->data ? k->in[5] : NULL;
    p.C = k->n_in > 6 && k->in[6] && k->in[6]->data ? k->in[6] : NULL;
    if (!p.A || !p.B || !k->in[1] || !p.bs)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "A, B and their scales are required");
    if (k->n_in > 7 && k->in[7])
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_UNSUPPORTED, "only the float output (no y_scale) is supported");
    if (pfvm_node_attr_int(k->node, "transA", 0) || !pfvm_node_attr_int(k->node, "transB", 0) ||
        pfvm_node_attr_float(k->node, "alpha", 1.0f) != 1.0f)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_UNSUPPORTED, "only transA 0, transB 1 and alpha 1 are supported");
    if (!pfvm__q_is8(p.A) || !pfvm__q_is8(p.B) || p.A->rank != 2 || p.B->rank != 2 || p.A->dims[1] != p.B->dims[1])
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "A [M,K] and B [N,K] must be 8-bit with one K");
    M = p.A->dims[0], N = p.B->dims[0], p.K = p.A->dims[1];
    nb = pfvm_tensor_numel(p.bs);
    if (p.K > PFVM__QM_MAX_K || pfvm_tensor_numel(k->in[1]) != 1 || (nb != 1 && nb != N) ||
        (p.bz && pfvm_tensor_numel(p.bz) != nb) || (p.bz && p.bz->dtype != p.B->dtype) ||
        (az && az->data && (pfvm_tensor_numel(az) != 1 || az->dtype != p.A->dtype)) ||
        (p.C && (p.C->dtype != PFVM_INT32 || pfvm_tensor_numel(p.C) != N)))
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_UNSUPPORTED,
                             "K %lld above %d, or scales, zero points or C of the wrong size or type", (long long)p.K,
                             PFVM__QM_MAX_K);
    p.az = az && az->data ? pfvm__q_at(az, 0) : 0;
    p.as = (float)pfvm_tensor_get_f64(k->in[1], 0);
    dims[0] = M, dims[1] = N;
    if (pfvm_kctx_output(k, 0, PFVM_FLOAT, 2, dims))
        return k->st ? k->st->code : PFVM_ERR_NOMEM;
    y = (float *)k->out[0]->data;
    for (n = 0; n < N; n++) {
        float sc = p.as * (float)pfvm_tensor_get_f64(p.bs, nb == 1 ? 0 : n);
        int32_t bz = p.bz ? pfvm__q_at(p.bz, nb == 1 ? 0 : n) : 0, c = p.C ? ((const int32_t *)p.C->data)[n] : 0;
        const uint8_t *b = (const uint8_t *)p.B->data + n * p.K;
        for (i = 0; i < M; i++)
            y[i * N + n] = (float)((int64_t)pfvm__qm_dot(&p, (const uint8_t *)p.A->data + i * p.K, b, bz) + c) * sc;
    }
    return PFVM_OK;
}

PFVM_INTERNAL const pfvm_op_def pfvm__ops_quant[] = {
    {"QuantizeLinear", "", 10, 0, 2, 3, 1, 1, pfvm__q_infer_quantize, pfvm__q_k_quantize, NULL, PFVM_FUSE_ELEMENTWISE, "float,int32 -> uint8,int8", NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
    {"DequantizeLinear", "", 10, 0, 2, 3, 1, 1, pfvm__q_infer_dequantize, pfvm__q_k_dequantize, NULL, PFVM_FUSE_ELEMENTWISE, "uint8,int8,int32 -> float", NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
    {"DynamicQuantizeLinear", "", 11, 0, 1, 1, 3, 3, pfvm__q_infer_dynamic, pfvm__q_k_dynamic, NULL, PFVM_FUSE_OPAQUE, "float -> uint8", NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
    {"MatMulInteger", "", 10, 0, 2, 4, 1, 1, pfvm__q_infer_int_matmul, pfvm__q_k_matmul_integer, NULL, PFVM_FUSE_OPAQUE, "uint8,int8 -> int32", NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
    {"QLinearMatMul", "", 10, 0, 8, 8, 1, 1, pfvm__q_infer_qlinear_matmul, pfvm__q_k_qlinear_matmul, NULL, PFVM_FUSE_OPAQUE, "uint8,int8", NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
    {"ConvInteger", "", 10, 0, 2, 4, 1, 1, pfvm__q_infer_conv_integer, pfvm__q_k_conv_integer, NULL, PFVM_FUSE_OPAQUE, "uint8,int8 -> int32", NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
    {"QLinearConv", "", 10, 0, 8, 9, 1, 1, pfvm__q_infer_qlinear_conv, pfvm__q_k_qlinear_conv, NULL, PFVM_FUSE_OPAQUE, "uint8,int8", NULL, 0, NULL, NULL, NULL, NULL, NULL, pfvm__q_workspace_qlinear_conv, PFVM__QC_PREPARE, NULL},
    {"QLinearAveragePool", "com.microsoft", 1, 0, 4, 5, 1, 1, pfvm__q_infer_avgpool, pfvm__q_k_avgpool, NULL, PFVM_FUSE_OPAQUE, "uint8,int8", NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
    {"QLinearGlobalAveragePool", "com.microsoft", 1, 0, 4, 5, 1, 1, pfvm__q_infer_avgpool, pfvm__q_k_avgpool, NULL, PFVM_FUSE_OPAQUE, "uint8,int8", NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
    {"QLinearAdd", "com.microsoft", 1, 0, 7, 8, 1, 1, pfvm__q_infer_qlinear_add, pfvm__q_k_qlinear_add, NULL, PFVM_FUSE_OPAQUE, "uint8,int8", NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
    {"QGemm", "com.microsoft", 1, 0, 6, 9, 1, 1, pfvm__q_infer_qgemm, pfvm__q_k_qgemm, NULL, PFVM_FUSE_OPAQUE, "uint8,int8 -> float", NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
    {NULL, NULL, 0, 0, 0, 0, 0, 0, NULL, NULL, NULL, PFVM_FUSE_OPAQUE, NULL, NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL}
};
