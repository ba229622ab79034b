/* The float matrix engine (src/ops/linalg.c) rounds by one rule whatever
 * the micro-kernel (AVX-512, AVX2, the portable 4x16, the 4x4 register
 * tile of 32-bit Arm), the path (blocked, direct, edge tiles) and the
 * workspace: each entry of C takes c = fma(alpha, s, c) once per
 * PFVM_LA_KC rows of K, s being that chunk's products summed by fma from
 * zero in order; one or two rows of A times a strided B (the matrix-vector
 * path) round products and sums separately. This is what lets a Cortex-M
 * give the host's bits (tests/mcu/run.sh). Every case is compared bit for
 * bit with a plain loop that follows the rule.
 *
 *   build/tests/test_gemm
 *
 * Built from the amalgamated header with GEMM_AMALGAMATED, it checks the
 * kernels a flag picks, e.g. the Cortex-M tile on the host:
 *
 *   cc -std=c99 -O2 -I. -DGEMM_AMALGAMATED -DPFVM_NO_DISPATCH -DPFVM_LA_TILE4 \
 *      -DPFVM_EXACT_FMA tests/test_gemm.c -o /tmp/test_gemm_t4 -lprotobuf-nanopb -lm
 */
#ifdef GEMM_AMALGAMATED
#define PFVM_IMPLEMENTATION
#include "pfvm.h"
#else
#include "exec/exec.h"
#include "ops/ops_common.h"
#endif

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

/* the engine's a * b + c: rounded once where linalg.c's PFVM__LA_FMA is */
#if defined(PFVM_DISPATCH_CLONES) || defined(__FMA__) || defined(__ARM_FEATURE_FMA) || defined(PFVM_EXACT_FMA)
#define REF_FMA(a, b, c) fmaf(a, b, c)
#else
#define REF_FMA(a, b, c) ((a) * (b) + (c))
#endif

static unsigned rng = 12345u;

static float rnd(void)
{
    rng = rng * 1103515245u + 12345u;
    /* mixed magnitudes, so that rounding differences show */
    return ((float)((rng >> 8) & 0xffff) / 32768.0f - 1.0f) * (float)(1 << ((rng >> 4) & 7));
}

typedef struct strided_b {
    const float *data;
    int64_t s_k, s_n;
} strided_b;

static float b_at(const strided_b *b, int64_t p, int64_t j)
{
    return b->data[p * b->s_k + j * b->s_n];
}

/* the engine's B through a pack function it does not know (as Conv's) */
static void pack_other(void *user, int64_t p0, int64_t kc, int64_t j0, int64_t nr, float *dst)
{
    pfvm_la_pack_strided(user, p0, kc, j0, nr, dst);
}

static void reference(int64_t m, int64_t n, int64_t k, float alpha, const float *a, int64_t as_m, int64_t as_k,
                      const strided_b *b, float *c, int64_t ldc, int gemv)
{
    int64_t i, j, p, p0;
    for (i = 0; i < m; i++)
        for (j = 0; j < n; j++) {
            float cij = c[i * ldc + j];
            if (gemv == 1) { /* rows of B added to C's row */
                for (p = 0; p < k; p++)
                    cij += alpha * a[i * as_m + p * as_k] * b_at(b, p, j);
            } else if (gemv == 2) { /* dot products */
                float s = 0;
                for (p = 0; p < k; p++)
                    s += a[i * as_m + p * as_k] * b_at(b, p, j);
                cij += alpha * s;
            } else {
                for (p0 = 0; p0 < k; p0 += PFVM_LA_KC) {
                    float s = 0;
                    for (p = p0; p < k && p < p0 + PFVM_LA_KC; p++)
                        s = REF_FMA(a[i * as_m + p * as_k], b_at(b, p, j), s);
                    cij = REF_FMA(alpha, s, cij);
                }
            }
            c[i * ldc + j] = cij;
        }
}

/* The epilogue's clamp, as Relu (form != 0) or Clip does it. */
static float clamp_ref(float v, const float *cl)
{
    if (cl[2] != 0.0f)
        v = v > cl[0] ? v : cl[0];
    else
        v = v < cl[0] ? cl[0] : v;
    return v > cl[1] ? cl[1] : v;
}

/* One product through the engine and the reference; variant: 0 a strided
 * B the engine sees as such, 1 the same through another pack function, 2
 * a B with no unit stride (never the matrix-vector path); with and
 * without a workspace. epi: 0 C += A*B (pfvm_la_sgemm_ws); 1 C = Relu(A*B
 * + bias), a NaN bias among them; 2 C = Clip(A*B, -1, 2) (no bias), with
 * A packed at bind where there is a workspace (pfvm_la_sgemm_epi_mt): the
 * bits of C filled with the bias, the product added, then clamped; 3 and 4
 * (PFVM__STORE_RESIDUAL builds) as 1 and 2 with a residual tensor added
 * before the clamp (pfvm_la_epi.res: a residual connection's Add); 5
 * (PFVM__STORE_SILU builds) C = SiLU(A*B + bias), x * sigmoid(x) of each
 * entry once, after all of K (pfvm_la_epi.silu). */
static void one(int64_t m, int64_t n, int64_t k, float alpha, int ta, int variant, int ws, int epi)
{
    int64_t ldc = n + 3, i, bsize = (k + 1) * (2 * n + 1) + 2 * n + 1;
    float *a = (float *)malloc((size_t)(m * k) * sizeof(float));
    float *bd = (float *)malloc((size_t)bsize * sizeof(float));
    float *c = (float *)malloc((size_t)(m * ldc) * sizeof(float));
    float *r = (float *)malloc((size_t)(m * ldc) * sizeof(float));
    float *w = NULL, *bias = (float *)malloc((size_t)m * sizeof(float)), *apk = NULL;
    float *res = (float *)malloc((size_t)(m * ldc) * sizeof(float));
    int with_res = epi == 3 || epi == 4, with_silu = epi == 5;
    static const float relu[3] = {0.0f, 1e30f, 1.0f}, clip[3] = {-1.0f, 2.0f, 0.0f};
    size_t wf = pfvm_la_sgemm_ws_floats(m, n, k);
    int64_t as_m = ta ? 1 : k, as_k = ta ? m : 1, gemv;
    pfvm_la_strided pb;
    strided_b sb;
    if (epi == 5)
        epi = 1; /* the bias, then SiLU instead of the clamp */
    else if (epi >= 3)
        epi -= 2; /* the same epilogue, with the residual */
    if (!a || !bd || !c || !r || !bias || !res) {
        CHECK(!"out of memory");
        goto done;
    }
    if (ws && wf) {
        w = (float *)malloc(wf * sizeof(float));
        CHECK(w != NULL);
    }
    for (i = 0; i < m * k; i++)
        a[i] = rnd();
    for (i = 0; i < bsize; i++)
        bd[i] = rnd();
    for (i = 0; i < m * ldc; i++)
        r[i] = c[i] = rnd();
    for (i = 0; i < m; i++)
        bias[i] = i == 3 ? NAN : rnd();
    for (i = 0; i < m * ldc; i++)
        res[i] = i == 5 ? -INFINITY : rnd();
    if (epi) /* the reference starts from the bias (the engine does not read C) */
        for (i = 0; i < m * ldc; i++)
            r[i] = i % ldc < n ? (epi == 1 ? bias[i / ldc] : 0.0f) : r[i];
    pb.data = bd;
    if (variant == 2) {
        pb.s_k = 2 * n + 1;
        pb.s_n = 2;
    } else if ((k + n + m) % 2) { /* row-major B [k, n] */
        pb.s_k = n;
        pb.s_n = 1;
    } else { /* transposed: B [n, k] */
        pb.s_k = 1;
        pb.s_n = k;
    }
    sb.data = pb.data;
    sb.s_k = pb.s_k;
    sb.s_n = pb.s_n;
    gemv = variant == 0 && m <= 2 ? (pb.s_n == 1 ? 1 : 2) : 0;
    if (epi) {
        pfvm_la_epi e;
        e.bias = epi == 1 ? bias : NULL;
        e.cl = with_silu ? NULL : epi == 1 ? relu : clip;
        e.res = with_res ? res : NULL;
        e.silu = with_silu;
        if (epi == 2 && w && (apk = (float *)malloc(pfvm_la_packed_floats(m, k) * sizeof(float))) != NULL)
            pfvm_la_pack_a_all(m, k, a, as_m, as_k, apk);
        pfvm_la_sgemm_epi_mt(NULL, m, n, k, alpha, a, as_m, as_k, apk, variant == 1 ? pack_other : pfvm_la_pack_strided,
                             &pb, c, ldc, w, &e);
        reference(m, n, k, alpha, a, as_m, as_k, &sb, r, ldc, gemv);
        for (i = 0; i < m * ldc; i++)
            if (i % ldc < n && !with_silu)
                r[i] = clamp_ref(with_res ? r[i] + res[i] : r[i], e.cl);
#ifdef PFVM__STORE_SILU
        if (with_silu) /* each entry once, element by element (the tiles' AVX-512 ends are masked) */
            for (i = 0; i < m * ldc; i++)
                if (i % ldc < n)
                    pfvm_ew_silu_rows(r + i, 0, 1, 1);
#endif
    } else {
        pfvm_la_sgemm_ws(m, n, k, alpha, a, as_m, as_k, variant == 1 ? pack_other : pfvm_la_pack_strided, &pb, c, ldc, w);
        reference(m, n, k, alpha, a, as_m, as_k, &sb, r, ldc, gemv);
    }
    CHECK_MSG(memcmp(c, r, (size_t)(m * ldc) * sizeof(float)) == 0,
              "m %lld n %lld k %lld alpha %g transA %d variant %d workspace %d epilogue %d residual %d SiLU %d packed A "
              "%d: not the rule's bits",
              (long long)m, (long long)n, (long long)k, alpha, ta, variant, ws && wf, epi, with_res, with_silu,
              apk != NULL);
done:
    free(a);
    free(bd);
    free(c);
    free(r);
    free(w);
    free(bias);
    free(apk);
    free(res);
}

#ifdef PFVM__LA_CONV_S1
/* The stride-1 convolution read in place (pfvm_la_conv_s1) against the
 * engine's product with the same packed A and an explicit im2col B: the
 * same bits (the rule above). x: cin planes of h x w; window kh x kw,
 * dilation dl, padding pt/pl at the start (the end makes the output w
 * wide); epi: 1 bias + Relu, 2 Clip with no bias, 3 bias + residual +
 * Relu, 4 bias + SiLU, 0 bias only. */
static void conv_one(int64_t m, int64_t cin, int64_t h, int64_t w, int kh, int kw, int dl, int pt, int pl, int epi)
{
    static const float relu[3] = {0.0f, 1e30f, 1.0f}, clip[3] = {-1.0f, 2.0f, 0.0f};
    int64_t oh = h + 2 * pt - dl * (kh - 1), n = oh * w, k = cin * kh * kw, i, p, q;
    float *x = (float *)malloc((size_t)(cin * h * w + 1) * sizeof(float));
    float *a = (float *)malloc((size_t)(m * k) * sizeof(float));
    float *col = (float *)malloc((size_t)(k * (n > 0 ? n : 1)) * sizeof(float));
    float *c = (float *)malloc((size_t)(m * n + 1) * sizeof(float));
    float *r = (float *)malloc((size_t)(m * n + 1) * sizeof(float));
    float *res = (float *)malloc((size_t)(m * n + 1) * sizeof(float));
    float *bias = (float *)malloc((size_t)m * sizeof(float));
    float *apk = (float *)malloc(pfvm_la_packed_floats(m, k) * sizeof(float));
    float *ws = (float *)malloc((pfvm_la_sgemm_ws_floats(m, n, k) + 1) * sizeof(float));
    pfvm_la_epi e;
    pfvm_la_strided b;
    pfvm_la_conv cv;
    int took;
    if (oh < 1 || 2 * pl != dl * (kw - 1)) {
        CHECK(!"conv_one: not a stride-1 window with output as wide as the input");
        goto done;
    }
    if (!x || !a || !col || !c || !r || !res || !bias || !apk || !ws) {
        CHECK(!"out of memory");
        goto done;
    }
    for (i = 0; i < cin * h * w; i++)
        x[i] = rnd();
    for (i = 0; i < m * k; i++)
        a[i] = rnd();
    for (i = 0; i < m; i++)
        bias[i] = rnd();
    for (i = 0; i < m * n; i++) {
        res[i] = rnd();
        c[i] = r[i] = 7.0f; /* neither reads C */
    }
    for (p = 0; p < k; p++) { /* row p: channel, tap (the weights' order) */
        int64_t ci = p / (kh * kw), t = p % (kh * kw), dy = t / kw * dl - pt, dx = t % kw * dl - pl;
        for (q = 0; q < n; q++) {
            int64_t iy = q / w + dy, ix = q % w + dx;
            col[p * n + q] = iy >= 0 && iy < h && ix >= 0 && ix < w ? x[ci * h * w + iy * w + ix] : 0.0f;
        }
    }
    pfvm_la_pack_a_all(m, k, a, k, 1, apk);
    e.bias = epi == 2 ? NULL : bias;
    e.cl = epi == 1 || epi == 3 ? relu : epi == 2 ? clip : NULL;
    e.res = epi == 3 ? res : NULL;
    e.silu = epi == 4;
    b.data = col;
    b.s_k = n;
    b.s_n = 1;
    pfvm_la_sgemm_epi_mt(NULL, m, n, k, 1.0f, a, k, 1, apk, pfvm_la_pack_strided, &b, r, n, ws, &e);
    cv.x = x;
    cv.cin = cin;
    cv.h = h;
    cv.w = w;
    cv.oh = oh;
    cv.kh = kh;
    cv.kw = kw;
    cv.dh = cv.dw = dl;
    cv.pt = pt;
    cv.pl = pl;
    took = pfvm_la_conv_s1(NULL, &cv, m, apk, c, &e);
    if (pfvm_la_packed_mr() == 12) /* AVX-512: it takes every such window */
        CHECK_MSG(took, "m %lld cin %lld %lldx%lld kernel %dx%d: declined", (long long)m, (long long)cin, (long long)h,
                  (long long)w, kh, kw);
    if (took)
        CHECK_MSG(memcmp(c, r, (size_t)(m * n) * sizeof(float)) == 0,
                  "conv m %lld cin %lld %lldx%lld kernel %dx%d dilation %d pad %d,%d epilogue %d: not the im2col product's bits",
                  (long long)m, (long long)cin, (long long)h, (long long)w, kh, kw, dl, pt, pl, epi);
done:
    free(x);
    free(a);
    free(col);
    free(c);
    free(r);
    free(res);
    free(bias);
    free(apk);
    free(ws);
}

/* Channels not a multiple of 12 or 16, planes of 1x1, 2x2 and odd
 * sizes, more of K than one block (cin 30: 270 rows), every epilogue. */
static void conv_cases(void)
{
    static const int64_t ms[] = {13, 16, 29, 64};
    static const int64_t cins[] = {1, 3, 17, 30};
    static const int64_t hw[][2] = {{1, 1}, {2, 2}, {7, 7}, {5, 9}, {14, 3}, {3, 37}};
    size_t im, ic, ih;
    int epi;
    for (im = 0; im < sizeof ms / sizeof ms[0]; im++)
        for (ic = 0; ic < sizeof cins / sizeof cins[0]; ic++)
            for (ih = 0; ih < sizeof hw / sizeof hw[0]; ih++)
                for (epi = 0; epi < 5; epi++)
                    conv_one(ms[im], cins[ic], hw[ih][0], hw[ih][1], 3, 3, 1, 1, 1, epi);
    /* other windows: 1x1, 5x5, 3x3 dilated, 1x3 (a 1-D row), taller than padded */
    for (epi = 0; epi < 5; epi++) {
        conv_one(20, 5, 6, 7, 1, 1, 1, 0, 0, epi);
        conv_one(20, 5, 6, 7, 5, 5, 1, 2, 2, epi);
        conv_one(25, 4, 9, 8, 3, 3, 2, 2, 2, epi);
        conv_one(14, 6, 1, 33, 1, 3, 1, 0, 1, epi);
        conv_one(14, 6, 8, 5, 3, 3, 1, 0, 1, epi);
    }
}
#endif

#ifdef PFVM__STORE_SILU
/* The stores' SiLU (pfvm_ew_silu_rows: AVX-512's x / (1 + exp(-x)), or
 * Sigmoid then Mul elsewhere) against x / (1 + exp(-x)) in
 * double: whole rows of 32 (a GEMM tile's), rows of 16 and of 7 (masked
 * ends), x over -80..80 in fine steps (below, x * exp(x) is subnormal:
 * compared absolutely), the specials. */
static void silu_ulp(void)
{
    enum { N = 4096 };
    static float x[N], y[N];
    static const int widths[] = {32, 16, 7, 1};
    int64_t worst = 0, i;
    size_t w;
    for (w = 0; w < sizeof widths / sizeof widths[0]; w++) {
        int64_t base;
        for (base = 0; base < 40 * N; base += N) {
            for (i = 0; i < N; i++) /* -80..80, each window a different offset */
                x[i] = -80.0f + 160.0f * (float)(base + i) / (float)(40 * N) + 1e-3f * (float)w;
            memcpy(y, x, sizeof y);
            pfvm_ew_silu_rows(y, widths[w], N / widths[w], widths[w]);
            pfvm_ew_silu_rows(y + N / widths[w] * widths[w], 0, 1, N % widths[w]);
            for (i = 0; i < N; i++) {
                float want = (float)((double)x[i] / (1.0 + exp(-(double)x[i])));
                int64_t u = check_ulp_apart(y[i], want);
                worst = u > worst ? u : worst;
                CHECK_MSG(u <= 4, "SiLU(%.9g) = %.9g, %.9g in double: %lld ulp", (double)x[i], (double)y[i],
                          (double)want, (long long)u);
            }
        }
    }
    {
        static const float sp[] = {0.0f, -0.0f, 100.0f, -100.0f, 104.5f, -104.5f, 1e30f, -1e30f, 1e-30f, -1e-30f};
        float v[16];
        memcpy(v, sp, sizeof sp);
        v[10] = INFINITY;
        v[11] = -INFINITY;
        v[12] = NAN;
        v[13] = -95.0f; /* x * exp(x) subnormal */
        v[14] = 3e-39f; /* subnormal */
        v[15] = -3e-39f;
        pfvm_ew_silu_rows(v, 0, 1, 16);
        for (i = 0; i < 10; i++) {
            double xd = (double)sp[i], want = xd / (1.0 + exp(-xd));
            CHECK_MSG(fabs((double)v[i] - want) <= 4e-7 * fabs(want) + 1e-40, "SiLU(%g) = %g, want %g", xd,
                      (double)v[i], want);
        }
        CHECK(v[10] == INFINITY && isnan(v[12]));
        CHECK(fabs((double)v[13] + 95.0 * exp(-95.0)) <= 1e-38); /* subnormal or zero: absolute */
        CHECK(fabs((double)v[14] - 1.5e-39) <= 3e-45 && fabs((double)v[15] + 1.5e-39) <= 3e-45);
        (void)v[11]; /* -inf * exp(-inf): NaN or -0 as Sigmoid then Mul gives */
    }
    printf("SiLU in the stores: within %lld ulp of x / (1 + exp(-x))\n", (long long)worst);
}
#endif

/* The blocked engine's B read in place (x86: whole kernel widths of a
 * row-major B whose block of A's rows is one, up to 144 rows; 145: two
 * blocks, packed), with every epilogue: B's columns past one block of
 * 2048, K past one of 256. The same bits as the rule's loop. */
static void inplace_cases(int n_epi)
{
    static const int64_t bm[] = {25, 40, 144, 145}, bn[] = {37, 100, 2100};
    size_t im, in;
    int epi;
    for (im = 0; im < sizeof bm / sizeof bm[0]; im++)
        for (in = 0; in < sizeof bn / sizeof bn[0]; in++)
            for (epi = 0; epi < n_epi; epi++) {
                int64_t k = 300 + (300 + bm[im] + bn[in] + 1) % 2; /* k + n + m odd: row-major B */
                one(bm[im], bn[in], in == 2 ? k : k - 280, 1.0f, 0, 0, 1, epi);
            }
}


#ifdef PFVM__LA_CONV_S1
/* The convolution with output channels in the lanes (pfvm_la_conv_lanes,
 * weights packed by pfvm_la_pack_lanes) against the engine's product with
 * an explicit im2col B: the same bits (the rule above). Stride s, dilation
 * dl, padding pt/pl at both ends; epi as conv_one. Returns whether it took
 * the window. */
static int lanes_one(int64_t m, int64_t cin, int64_t h, int64_t w, int kh, int kw, int s, int dl, int pt, int pl,
                     int epi)
{
    static const float relu[3] = {0.0f, 1e30f, 1.0f}, clip[3] = {-1.0f, 2.0f, 0.0f};
    int64_t oh = (h + 2 * pt - dl * (kh - 1) - 1) / s + 1, ow = (w + 2 * pl - dl * (kw - 1) - 1) / s + 1;
    int64_t n = oh * ow, k = cin * kh * kw, i, p, q;
    float *x = (float *)malloc((size_t)(cin * h * w + 1) * sizeof(float));
    float *a = (float *)malloc((size_t)(m * k) * sizeof(float));
    float *wl = (float *)malloc((size_t)(m * k) * sizeof(float));
    float *col = (float *)malloc((size_t)(k * (n > 0 ? n : 1)) * sizeof(float));
    float *c = (float *)malloc((size_t)(m * n + 1) * sizeof(float));
    float *r = (float *)malloc((size_t)(m * n + 1) * sizeof(float));
    float *res = (float *)malloc((size_t)(m * n + 1) * sizeof(float));
    float *bias = (float *)malloc((size_t)m * sizeof(float));
    float *ws = (float *)malloc((pfvm_la_sgemm_ws_floats(m, n, k) + 1) * sizeof(float));
    pfvm_la_epi e;
    pfvm_la_strided b;
    pfvm_la_conv cv;
    int took = 0;
    if (!x || !a || !wl || !col || !c || !r || !res || !bias || !ws || oh < 1 || ow < 1) {
        CHECK(!"lanes_one: out of memory or an empty output");
        goto done;
    }
    for (i = 0; i < cin * h * w; i++)
        x[i] = rnd();
    for (i = 0; i < m * k; i++)
        a[i] = rnd();
    for (i = 0; i < m; i++)
        bias[i] = rnd();
    for (i = 0; i < m * n; i++) {
        res[i] = rnd();
        c[i] = r[i] = 7.0f; /* neither reads C */
    }
    for (p = 0; p < k; p++) { /* row p: channel, tap (the weights' order) */
        int64_t ci = p / (kh * kw), t = p % (kh * kw), dy = t / kw * dl - pt, dx = t % kw * dl - pl;
        for (q = 0; q < n; q++) {
            int64_t iy = q / ow * s + dy, ix = q % ow * s + dx;
            col[p * n + q] = iy >= 0 && iy < h && ix >= 0 && ix < w ? x[ci * h * w + iy * w + ix] : 0.0f;
        }
    }
    e.bias = epi == 2 ? NULL : bias;
    e.cl = epi == 1 || epi == 3 ? relu : epi == 2 ? clip : NULL;
    e.res = epi == 3 ? res : NULL;
    e.silu = epi == 4;
    b.data = col;
    b.s_k = n;
    b.s_n = 1;
    pfvm_la_sgemm_epi_mt(NULL, m, n, k, 1.0f, a, k, 1, NULL, pfvm_la_pack_strided, &b, r, n, ws, &e);
    pfvm_la_pack_lanes(m, k, a, wl);
    cv.x = x;
    cv.cin = cin;
    cv.h = h;
    cv.w = w;
    cv.oh = oh;
    cv.ow = ow;
    cv.kh = kh;
    cv.kw = kw;
    cv.dh = cv.dw = dl;
    cv.sh = cv.sw = s;
    cv.pt = pt;
    cv.pl = pl;
    took = pfvm_la_conv_lanes(NULL, &cv, m, wl, c, &e);
    if (took)
        CHECK_MSG(memcmp(c, r, (size_t)(m * n) * sizeof(float)) == 0,
                  "lanes m %lld cin %lld %lldx%lld kernel %dx%d stride %d dilation %d pad %d,%d epilogue %d: not the "
                  "im2col product's bits",
                  (long long)m, (long long)cin, (long long)h, (long long)w, kh, kw, s, dl, pt, pl, epi);
done:
    free(x);
    free(a);
    free(wl);
    free(col);
    free(c);
    free(r);
    free(res);
    free(bias);
    free(ws);
    return took;
}

/* Output widths 7, 14 and 21 at strides 1 and 2 (odd input sizes), and
 * widths that are no multiple of 7 (1, 2, 6, 8, 9, 11, 13: each row's
 * last tile short), 1x1, 3x3, 5x5 and 7x7 windows, dilation, input
 * channels over a chunk of K (cin 30 x 9 = 270 rows, 48 x 9 = 432), 64,
 * 128 and 192 output channels, every epilogue; and the shapes it
 * declines. */
static void lanes_cases(void)
{
    int epi, avx512 = pfvm_la_packed_mr() == 12;
    for (epi = 0; epi < 5; epi++) {
        CHECK(lanes_one(64, 3, 7, 7, 3, 3, 1, 1, 1, 1, epi) == avx512);
        CHECK(lanes_one(128, 30, 14, 14, 3, 3, 1, 1, 1, 1, epi) == avx512);
        CHECK(lanes_one(64, 17, 13, 13, 3, 3, 2, 1, 1, 1, epi) == avx512); /* 7x7 from 13x13 */
        CHECK(lanes_one(64, 5, 14, 14, 1, 1, 2, 1, 0, 0, epi) == avx512);  /* 1x1/2: 7x7 */
        CHECK(lanes_one(64, 3, 27, 27, 7, 7, 2, 1, 3, 3, epi) == avx512);  /* 14x14 */
        CHECK(lanes_one(64, 4, 21, 9, 5, 5, 1, 1, 2, 2, epi) == avx512);   /* 9 wide: a short tile a row */
        CHECK(lanes_one(64, 4, 9, 21, 5, 5, 1, 1, 2, 2, epi) == avx512);   /* 9 x 21 */
        CHECK(lanes_one(64, 6, 11, 11, 3, 3, 1, 2, 2, 2, epi) == avx512);  /* 11 wide, dilated */
        CHECK(lanes_one(64, 6, 14, 7, 3, 3, 1, 2, 2, 2, epi) == avx512);   /* dilated, 14 x 7 */
        CHECK(lanes_one(192, 48, 13, 13, 3, 3, 1, 1, 1, 1, epi) == avx512); /* squeezenet's expand: 432 rows of K */
        CHECK(lanes_one(64, 5, 25, 25, 3, 3, 2, 1, 1, 1, epi) == avx512);  /* stride 2, odd: 13x13 */
        CHECK(lanes_one(64, 7, 12, 12, 3, 3, 2, 1, 0, 1, epi) == avx512);  /* stride 2, even, 5 x 6 */
        CHECK(lanes_one(64, 3, 2, 2, 3, 3, 1, 1, 1, 1, epi) == avx512);    /* 2x2 plane */
        CHECK(lanes_one(64, 19, 1, 1, 3, 3, 1, 1, 1, 1, epi) == avx512);   /* 1x1 plane */
        CHECK(lanes_one(64, 3, 8, 8, 3, 3, 1, 1, 1, 1, epi) == avx512);    /* width 8: 7 + 1 */
        CHECK(!lanes_one(48, 3, 7, 7, 3, 3, 1, 1, 1, 1, epi));             /* 48 channels: declined */
        CHECK(!lanes_one(64, 3, 21, 21, 3, 3, 3, 1, 1, 1, epi));           /* stride 3: declined */
    }
}
#endif

/* A Gemm's B or a Conv's W folded at bind from a small integer input
 * (B = W * s): each binding with another s plans again and folds B anew,
 * into storage that may sit where the last plan's B was. The prepare
 * hooks keep weights they packed only while they are the model's
 * (initializers, which never move): a pack keyed on B's address alone
 * would give the first s's product for every s (the 32-bit Arm packing,
 * PFVM_LA_TILE4 builds of this test, and Conv's packing did). conv: a
 * 1x1 Conv of 16 output channels on a 1x8x2x2 input (its weights packed
 * for the engine), else a Gemm of 6 columns on a 4x8 A (transB 1). */
static void folded_b_rebind(int conv)
{
    static const int64_t da[2] = {4, 8}, dx[4] = {1, 8, 2, 2}, ds[1] = {1};
    const int64_t cols = conv ? 16 : 6, dw[4] = {conv ? 16 : 6, 8, 1, 1}, dc[1] = {conv ? 16 : 6};
    pfvm_status st;
    pfvm_model *m = pfvm_model_new(&st);
    pfvm_graph *g = m ? pfvm_graph_new(m, NULL, "folded", &st) : NULL;
    pfvm_value *va, *vs, *vw, *vc, *vsf, *vb, *vy, *in[3];
    pfvm_tensor *tw, *tc, *ta = NULL, *ts = NULL;
    pfvm_node *cast, *op;
    pfvm_exec *e = NULL;
    float a[32];
    int64_t s = 1, i, j, p;
    CHECK(g != NULL);
    if (!g)
        goto done;
    pfvm_model_set_opset(m, "", 17, &st);
    va = pfvm_graph_value(g, "a", &st), vs = pfvm_graph_value(g, "s", &st), vw = pfvm_graph_value(g, "w", &st);
    vc = pfvm_graph_value(g, "c", &st), vsf = pfvm_graph_value(g, "sf", &st), vb = pfvm_graph_value(g, "b", &st);
    vy = pfvm_graph_value(g, "y", &st);
    CHECK(pfvm_graph_add_input(g, va, &st) == PFVM_OK && pfvm_graph_add_input(g, vs, &st) == PFVM_OK);
    tw = pfvm_model_tensor(m, PFVM_FLOAT, conv ? 4 : 2, dw, NULL, &st);
    tc = pfvm_model_tensor(m, PFVM_FLOAT, 1, dc, NULL, &st);
    CHECK(tw && tc);
    if (!tw || !tc)
        goto done;
    for (i = 0; i < cols * 8; i++)
        ((float *)tw->data)[i] = (float)(i % 7) - 3.0f;
    for (i = 0; i < cols; i++)
        ((float *)tc->data)[i] = (float)i;
    CHECK(pfvm_graph_add_init(g, vw, tw, &st) == PFVM_OK && pfvm_graph_add_init(g, vc, tc, &st) == PFVM_OK);
    cast = pfvm_graph_add_node(g, "Cast", "", "cast", &vs, 1, &vsf, 1, &st);
    in[0] = vw, in[1] = vsf;
    CHECK(cast && pfvm_node_set_attr_int(cast, "to", PFVM_FLOAT, &st) == PFVM_OK);
    CHECK(pfvm_graph_add_node(g, "Mul", "", "scale", in, 2, &vb, 1, &st) != NULL);
    in[0] = va, in[1] = vb, in[2] = vc;
    op = pfvm_graph_add_node(g, conv ? "Conv" : "Gemm", "", "op", in, 3, &vy, 1, &st);
    CHECK(op && (conv || pfvm_node_set_attr_int(op, "transB", 1, &st) == PFVM_OK));
    CHECK(pfvm_graph_add_output(g, vy, &st) == PFVM_OK);
    e = pfvm_exec_new(m, NULL, &st);
    CHECK_MSG(e != NULL, "%s", st.msg);
    for (i = 0; i < 32; i++)
        a[i] = (float)(i % 5) - 2.0f;
    ta = conv ? pfvm_tensor_view(PFVM_FLOAT, 4, dx, a, &st) : pfvm_tensor_view(PFVM_FLOAT, 2, da, a, &st);
    ts = pfvm_tensor_view(PFVM_INT64, 1, ds, &s, &st);
    for (; e && ta && ts && s <= 3; s += 2) { /* s 1, then 3: planned again, B folded again */
        const pfvm_tensor *both[2];
        const float *y;
        both[0] = ta, both[1] = ts;
        CHECK_MSG(pfvm_exec_bind(e, both, 2, &st) == PFVM_OK && pfvm_exec_run(e, &st) == PFVM_OK, "%s", st.msg);
        y = (const float *)pfvm_exec_output(e, 0)->data;
        for (i = 0; i < 4; i++) /* a row of A, or a position of the Conv's plane */
            for (j = 0; j < cols; j++) {
                float want = (float)j, got = y[conv ? j * 4 + i : i * cols + j];
                for (p = 0; p < 8; p++)
                    want += a[conv ? p * 4 + i : i * 8 + p] * ((const float *)tw->data)[j * 8 + p] * (float)s;
                CHECK_MSG(got == want, "%s, s %lld: y[%lld][%lld] %g, want %g", conv ? "Conv" : "Gemm", (long long)s,
                          (long long)i, (long long)j, (double)got, (double)want);
            }
    }
done:
    pfvm_tensor_free(ta);
    pfvm_tensor_free(ts);
    pfvm_exec_free(e);
    pfvm_model_free(m);
}

int main(void)
{
    static const int64_t ms[] = {1, 2, 3, 4, 5, 7, 8, 9, 10, 12, 13, 17, 25};
    static const int64_t ns[] = {1, 3, 4, 8, 15, 16, 17, 24, 33, 48, 70}; /* 48, 70: the half-width tile after whole ones */
    static const int64_t ks[] = {1, 2, 7, PFVM_LA_KC, PFVM_LA_KC + 1, 300};
    size_t im, in, ik;
    int variant, ws, ta, epi;
#if defined(PFVM__STORE_SILU)
    const int n_epi = 6;
#elif defined(PFVM__STORE_RESIDUAL)
    const int n_epi = 5;
#else
    const int n_epi = 3;
#endif
    for (im = 0; im < sizeof ms / sizeof ms[0]; im++)
        for (in = 0; in < sizeof ns / sizeof ns[0]; in++)
            for (ik = 0; ik < sizeof ks / sizeof ks[0]; ik++)
                for (variant = 0; variant < 3; variant++)
                    for (ws = 0; ws < 2; ws++)
                        for (epi = 0; epi < n_epi; epi++) {
                            ta = (int)((im + in + ik + (size_t)epi) % 2);
                            one(ms[im], ns[in], ks[ik], (ik + (size_t)variant) % 2 ? 0.75f : 1.0f, ta, variant, ws, epi);
                        }
    inplace_cases(n_epi);
    folded_b_rebind(0);
    folded_b_rebind(1);
#ifdef PFVM__STORE_SILU
    silu_ulp();
#endif
#ifdef PFVM__LA_CONV_S1
    conv_cases();
    lanes_cases();
#endif
    return CHECK_END();
}
