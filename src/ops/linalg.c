/* ops/linalg: MatMul and Gemm, and the float matrix-multiply engine that
 * Conv (nn.c) shares.
 *
 * The engine computes C += alpha*A*B the way fast BLAS libraries do: B is
 * packed, PFVM_LA_NB columns at a time, by a caller-supplied function (a
 * strided matrix here, an implicit im2col in Conv) into a block of up to
 * PFVM__LA_NC columns and PFVM__LA_KCW rows that stays in the last-level
 * cache; A is packed into strips of `mr` rows (a block of PFVM__LA_MC rows
 * that stays in L2), and a register-blocked micro-kernel multiplies one
 * strip of A with `nr` columns of a B panel (which stays in L1), keeping
 * the mr x nr tile of C in vector registers: 12x32 with AVX-512, 6x16 with
 * AVX2+FMA (x86-64, picked at run time like the other kernels), 4x16 in
 * portable C elsewhere. With a workspace (pfvm_la_sgemm_ws, from the
 * kernel context's scratch buffer) blocks are large; without one the same
 * loops run with blocks on the stack (one B panel, one A strip). Products
 * use fused multiply-adds where the CPU has them, so results differ from
 * a plain loop in the last bits (within the conformance tolerances). Other
 * element types use a plain triple loop through double or int64. */
#include "ops_common.h"

#include <math.h>

/* x86-64 micro-kernels: where the element-wise kernels dispatch (see
 * PFVM_DISPATCH in src/ops/fused.h), hand-written ones for AVX2+FMA and
 * (unless PFVM_NO_AVX512) AVX-512, compiled with target attributes and
 * picked once from the CPU's features. */
#if defined(PFVM_DISPATCH_CLONES)
#define PFVM__LA_X86 1
#include <immintrin.h>
#endif

#define PFVM__LA_MR_MAX 12  /* the tallest micro-kernel (AVX-512) */
#ifndef PFVM__LA_KCW
#define PFVM__LA_KCW 256    /* rows of a packed block with a workspace */
#endif
#ifndef PFVM__LA_MC
#define PFVM__LA_MC 144     /* rows of A per packed block with a workspace */
#endif
#ifndef PFVM__LA_NC
#define PFVM__LA_NC 2048    /* columns of B per packed block with a workspace */
#endif

/* A micro-kernel: c[r*ldc + j] += alpha * sum_p ap[p*mr + r] * B[p][j] for
 * r < mr, j < nr (its full tile), B[p][j] = bp[p*ldb + j] for j < nr/2 and
 * bp[p*ldb + b1 + j - nr/2] beyond: b1 is nr/2 for contiguous rows, the
 * start of the next panel when a kernel is wider than one packed panel. */
typedef void (*pfvm__la_kern_fn)(int64_t kc, const float *ap, const float *bp, int64_t ldb, int64_t b1, float *c,
                                 int64_t ldc, float alpha);

typedef struct pfvm__la_kern {
    int mr, nr;
    pfvm__la_kern_fn fn;
    pfvm__la_kern_fn fn4; /* the first 4 rows of a strip only (for the last strip of A) */
} pfvm__la_kern;

#define PFVM__LA_PMR 4  /* portable kernel: rows */
#define PFVM__LA_PNR 16 /* portable kernel: columns */

/* a * b + c rounded once, as the x86 micro-kernels compute it, wherever
 * that is one instruction or run-time dispatch builds the x86 ones (the
 * portable kernel then runs only on CPUs without them, through libm's
 * exact fmaf): so interp on a host and the same model on a Cortex-M4F
 * (VFMA) give the same bits. Rounded twice elsewhere, unless
 * PFVM_EXACT_FMA asks for fmaf (the same bits, slowly). */
#if defined(PFVM_DISPATCH_CLONES) || defined(__FMA__) || defined(__ARM_FEATURE_FMA) || defined(PFVM_EXACT_FMA)
#if defined(__GNUC__)
#define PFVM__LA_FMA(a, b, c) __builtin_fmaf(a, b, c)
#else
#define PFVM__LA_FMA(a, b, c) fmaf(a, b, c)
#endif
#else
#define PFVM__LA_FMA(a, b, c) ((a) * (b) + (c))
#endif

/* The portable micro-kernel: fixed trip counts, which compilers keep in
 * (vector) registers. */
static void pfvm__la_kern_c(int64_t kc, const float *ap, const float *bp, int64_t ldb, int64_t b1, float *c,
                            int64_t ldc, float alpha)
{
    float acc[PFVM__LA_PMR][PFVM__LA_PNR];
    int64_t p, r, j;
    (void)b1; /* 16 columns: one panel */
    memset(acc, 0, sizeof acc);
    for (p = 0; p < kc; p++) {
        const float *bv = bp + p * ldb, *av = ap + p * PFVM__LA_PMR;
        for (r = 0; r < PFVM__LA_PMR; r++)
            for (j = 0; j < PFVM__LA_PNR; j++)
                acc[r][j] = PFVM__LA_FMA(av[r], bv[j], acc[r][j]);
    }
    for (r = 0; r < PFVM__LA_PMR; r++)
        for (j = 0; j < PFVM__LA_PNR; j++)
            c[r * ldc + j] = PFVM__LA_FMA(alpha, acc[r][j], c[r * ldc + j]);
}

#ifdef PFVM__LA_X86
/* The AVX2 and AVX-512 micro-kernels share one body: two vectors of W
 * floats per row of the tile (nr = 2W), one broadcast of A per row and
 * step. R(r) expands to one row's work; the row lists below unroll it. */
#define PFVM__LA_DECL(r) V c##r##0 = ZERO(), c##r##1 = ZERO();
#define PFVM__LA_STEP(r)                   \
    {                                      \
        V a = SET1(ap[r]);                 \
        c##r##0 = FMA(a, b0, c##r##0);     \
        c##r##1 = FMA(a, b1v, c##r##1);    \
    }
#define PFVM__LA_STORE(r)                                                              \
    {                                                                                  \
        float *cr = c + r * ldc;                                                       \
        STORE(cr, FMA(al, c##r##0, LOAD(cr)));                                         \
        STORE(cr + W, FMA(al, c##r##1, LOAD(cr + W)));                                 \
    }
/* C's rows are fetched while the products run: at the end of a long
 * row of C (a convolution's output plane) they come from far away. */
#define PFVM__LA_PREFETCH(r)                                             \
    {                                                                    \
        _mm_prefetch((const char *)(c + r * ldc), _MM_HINT_T0);          \
        _mm_prefetch((const char *)(c + r * ldc + 2 * W - 1), _MM_HINT_T0); \
    }
#define PFVM__LA_BODY(ROWS, MR)                           \
    {                                                     \
        const V al = SET1(alpha);                         \
        int64_t p;                                        \
        ROWS(PFVM__LA_PREFETCH)                           \
        ROWS(PFVM__LA_DECL)                               \
        for (p = 0; p < kc; p++, ap += MR, bp += ldb) {   \
            const V b0 = LOAD(bp);                        \
            const V b1v = LOAD(bp + b1);                  \
            ROWS(PFVM__LA_STEP)                           \
        }                                                 \
        ROWS(PFVM__LA_STORE)                              \
    }
#define PFVM__LA_ROWS4(X) X(0) X(1) X(2) X(3)
#define PFVM__LA_ROWS6(X) PFVM__LA_ROWS4(X) X(4) X(5)
#define PFVM__LA_ROWS12(X) PFVM__LA_ROWS6(X) X(6) X(7) X(8) X(9) X(10) X(11)

#define V __m256
#define W 8
#define ZERO _mm256_setzero_ps
#define SET1 _mm256_set1_ps
#define FMA _mm256_fmadd_ps
#define LOAD _mm256_loadu_ps
#define STORE _mm256_storeu_ps
__attribute__((target("avx2,fma"))) static void pfvm__la_kern_avx2(int64_t kc, const float *ap, const float *bp,
                                                                    int64_t ldb, int64_t b1, float *c, int64_t ldc,
                                                                    float alpha)
PFVM__LA_BODY(PFVM__LA_ROWS6, 6)
__attribute__((target("avx2,fma"))) static void pfvm__la_kern_avx2_4(int64_t kc, const float *ap, const float *bp,
                                                                      int64_t ldb, int64_t b1, float *c, int64_t ldc,
                                                                    float alpha)
PFVM__LA_BODY(PFVM__LA_ROWS4, 6)
#undef V
#undef W
#undef ZERO
#undef SET1
#undef FMA
#undef LOAD
#undef STORE

#ifdef PFVM_AVX512_KERNELS
#define V __m512
#define W 16
#define ZERO _mm512_setzero_ps
#define SET1 _mm512_set1_ps
#define FMA _mm512_fmadd_ps
#define LOAD _mm512_loadu_ps
#define STORE _mm512_storeu_ps
__attribute__((target("avx512f"))) static void pfvm__la_kern_avx512(int64_t kc, const float *ap, const float *bp,
                                                                     int64_t ldb, int64_t b1, float *c, int64_t ldc,
                                                                    float alpha)
PFVM__LA_BODY(PFVM__LA_ROWS12, 12)
__attribute__((target("avx512f"))) static void pfvm__la_kern_avx512_4(int64_t kc, const float *ap, const float *bp,
                                                                       int64_t ldb, int64_t b1, float *c, int64_t ldc,
                                                                    float alpha)
PFVM__LA_BODY(PFVM__LA_ROWS4, 12)
#undef V
#undef W
#undef ZERO
#undef SET1
#undef FMA
#undef LOAD
#undef STORE
#endif
#endif

/* The micro-kernel for this CPU (checked once). */
static const pfvm__la_kern *pfvm__la_pick(void)
{
    static const pfvm__la_kern portable = {PFVM__LA_PMR, PFVM__LA_PNR, pfvm__la_kern_c, pfvm__la_kern_c};
#ifdef PFVM__LA_X86
    static const pfvm__la_kern avx2 = {6, 16, pfvm__la_kern_avx2, pfvm__la_kern_avx2_4};
    static int have_avx2 = -1;
#ifdef PFVM_AVX512_KERNELS
    static const pfvm__la_kern avx512 = {12, 32, pfvm__la_kern_avx512, pfvm__la_kern_avx512_4};
    if (pfvm__have_avx512())
        return &avx512;
#endif
    if (have_avx2 < 0) {
        __builtin_cpu_init();
        have_avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    }
    if (have_avx2)
        return &avx2;
#endif
    return &portable;
}

/* Packs rows i0..i0+mc and columns p0..p0+kc of A into strips of mr rows:
 * dst[s*kc*mr + p*mr + r] (rows past mc are zero). */
static void pfvm__la_pack_a(const float *a, int64_t as_m, int64_t as_k, int64_t mc, int64_t kc, int mr, float *dst)
{
    int64_t s, p, r;
    for (s = 0; s < mc; s += mr) {
        int64_t rows = mc - s < mr ? mc - s : mr;
        const float *as = a + s * as_m;
        float *d = dst + s * kc;
        for (p = 0; p < kc; p++, d += mr) {
            for (r = 0; r < rows; r++)
                d[r] = as[r * as_m + p * as_k];
            for (; r < mr; r++)
                d[r] = 0.0f;
        }
    }
}

#define PFVM__LA_NR_MAX 32 /* the widest micro-kernel (AVX-512): two panels */

/* One micro-tile at the edge of C (mr x nr of the kernel's tile): with
 * all columns, groups of 4 rows go straight to C (fn4); the rest, the
 * kernel writes to a zeroed tile on the stack, whose part inside C is
 * added. */
static void pfvm__la_edge(const pfvm__la_kern *kn, int64_t kc, const float *ap, const float *bp, int64_t ldb, int64_t b1,
                          float *c, int64_t ldc, float alpha, int64_t mr, int64_t nr)
{
    float tile[PFVM__LA_MR_MAX * PFVM__LA_NR_MAX];
    int64_t r, j;
    if (nr == kn->nr && kn->mr > 4)
        for (; mr >= 4; mr -= 4, ap += 4, c += 4 * ldc)
            kn->fn4(kc, ap, bp, ldb, b1, c, ldc, alpha);
    if (!mr)
        return;
    memset(tile, 0, sizeof tile);
    kn->fn(kc, ap, bp, ldb, b1, tile, PFVM__LA_NR_MAX, alpha);
    for (r = 0; r < mr; r++)
        for (j = 0; j < nr; j++)
            c[r * ldc + j] += tile[r * PFVM__LA_NR_MAX + j];
}

/* The offset of a kernel's second vector of B in packed panels. */
static int64_t pfvm__la_b1(const pfvm__la_kern *kn, int64_t kc)
{
    return kn->nr > PFVM_LA_NB ? kc * PFVM_LA_NB : kn->nr / 2;
}

/* C (mc x nc) += alpha * A-block (packed strips) * B-block (packed panels
 * of kc x PFVM_LA_NB, one after the other, zero past nc up to a whole
 * kernel width). */
static void pfvm__la_block(const pfvm__la_kern *kn, int64_t mc, int64_t nc, int64_t kc, const float *apack,
                           const float *bpack, float *c, int64_t ldc, float alpha)
{
    int64_t j, i, b1 = pfvm__la_b1(kn, kc);
    for (j = 0; j < nc; j += kn->nr) {
        int64_t nr = nc - j < kn->nr ? nc - j : kn->nr;
        const float *bp = bpack + j * kc; /* j is a multiple of PFVM_LA_NB */
        for (i = 0; i < mc; i += kn->mr) {
            int64_t mr = mc - i < kn->mr ? mc - i : kn->mr;
            if (mr == kn->mr && nr == kn->nr)
                kn->fn(kc, apack + i * kc, bp, PFVM_LA_NB, b1, c + i * ldc + j, ldc, alpha);
            else
                pfvm__la_edge(kn, kc, apack + i * kc, bp, PFVM_LA_NB, b1, c + i * ldc + j, ldc, alpha, mr, nr);
        }
    }
}

/* The blocking for an m x n x k product: with a workspace, large blocks
 * (bounded by the matrix), otherwise one kernel width of panels and one
 * strip. */
typedef struct pfvm__la_blocks {
    int64_t kc, mc, nc;
} pfvm__la_blocks;

static int64_t pfvm__la_round(int64_t x, int64_t to)
{
    return (x + to - 1) / to * to;
}

static pfvm__la_blocks pfvm__la_blocking(const pfvm__la_kern *kn, int64_t m, int64_t n, int64_t k, int ws)
{
    pfvm__la_blocks b;
    if (!ws) {
        b.kc = PFVM_LA_KC;
        b.mc = kn->mr;
        b.nc = PFVM__LA_NR_MAX;
        return b;
    }
    b.kc = k < PFVM__LA_KCW ? (k < 1 ? 1 : k) : PFVM__LA_KCW;
    b.mc = m < PFVM__LA_MC ? pfvm__la_round(m < 1 ? 1 : m, kn->mr) : PFVM__LA_MC;
    b.nc = n < PFVM__LA_NC ? pfvm__la_round(n < 1 ? 1 : n, PFVM__LA_NR_MAX) : PFVM__LA_NC;
    return b;
}

PFVM_INTERNAL size_t pfvm_la_sgemm_ws_floats(int64_t m, int64_t n, int64_t k)
{
    pfvm__la_blocks b = pfvm__la_blocking(pfvm__la_pick(), m, n, k, 1);
    return (size_t)(b.kc * b.nc + b.mc * b.kc);
}

/* Few rows of A times a plain strided B (a matrix-vector product, batch 1
 * MatMul/Gemm): packing B would cost as much as the product, so rows of B
 * (s_n == 1) are added to C's row, or C's entries are dot products with
 * columns of B (s_k == 1). */
static int pfvm__la_gemv(int64_t m, int64_t n, int64_t k, float alpha, const float *a, int64_t as_m, int64_t as_k,
                         const pfvm_la_strided *b, float *c, int64_t ldc)
{
    int64_t i, p, j;
    if (m > 2 || (b->s_n != 1 && b->s_k != 1))
        return 0;
    for (i = 0; i < m; i++) {
        float *ci = c + i * ldc;
        const float *ai = a + i * as_m;
        if (b->s_n == 1) {
            for (p = 0; p < k; p++) {
                const float *bp = b->data + p * b->s_k;
                float av = alpha * ai[p * as_k];
                for (j = 0; j < n; j++)
                    ci[j] += av * bp[j];
            }
        } else {
            for (j = 0; j < n; j++) {
                const float *bj = b->data + j * b->s_n;
                float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
                for (p = 0; p + 4 <= k; p += 4) {
                    s0 += ai[p * as_k] * bj[p];
                    s1 += ai[(p + 1) * as_k] * bj[p + 1];
                    s2 += ai[(p + 2) * as_k] * bj[p + 2];
                    s3 += ai[(p + 3) * as_k] * bj[p + 3];
                }
                for (; p < k; p++)
                    s0 += ai[p * as_k] * bj[p];
                ci[j] += alpha * ((s0 + s1) + (s2 + s3));
            }
        }
    }
    return 1;
}

/* Few rows of A (up to two strips) times a row-major B: each column of B
 * serves so few rows that packing B would cost more than it saves, so the
 * kernels read B where it is (whole kernel widths) and only the last
 * columns go through packed panels (stage: PFVM__LA_NR_MAX x PFVM_LA_KC
 * floats). A is packed strip by strip. */
static int pfvm__la_direct(const pfvm__la_kern *kn, int64_t m, int64_t n, int64_t k, float alpha, const float *a,
                           int64_t as_m, int64_t as_k, const pfvm_la_strided *b, float *c, int64_t ldc, float *apack,
                           float *stage)
{
    int64_t pc, i, j, kc;
    if (m > 2 * kn->mr || b->s_n != 1)
        return 0;
    for (pc = 0; pc < k; pc += kc) {
        int64_t full = n / kn->nr * kn->nr;
        kc = k - pc < PFVM_LA_KC ? k - pc : PFVM_LA_KC;
        pfvm__la_pack_a(a + pc * as_k, as_m, as_k, m, kc, kn->mr, apack);
        for (j = 0; j < full; j += kn->nr)
            for (i = 0; i < m; i += kn->mr) {
                const float *bp = b->data + pc * b->s_k + j;
                if (m - i >= kn->mr)
                    kn->fn(kc, apack + i * kc, bp, b->s_k, kn->nr / 2, c + i * ldc + j, ldc, alpha);
                else
                    pfvm__la_edge(kn, kc, apack + i * kc, bp, b->s_k, kn->nr / 2, c + i * ldc + j, ldc, alpha, m - i,
                                  kn->nr);
            }
        if (j < n) {
            int64_t h;
            for (h = 0; h < kn->nr; h += PFVM_LA_NB)
                pfvm_la_pack_strided((void *)b, pc, kc, j + h, n - j - h < 0 ? 0 : n - j - h < PFVM_LA_NB ? n - j - h : PFVM_LA_NB,
                                     stage + h * kc);
            for (i = 0; i < m; i += kn->mr)
                pfvm__la_edge(kn, kc, apack + i * kc, stage, PFVM_LA_NB, pfvm__la_b1(kn, kc), c + i * ldc + j, ldc,
                              alpha, m - i < kn->mr ? m - i : kn->mr, n - j);
        }
    }
    return 1;
}

PFVM_INTERNAL void pfvm_la_sgemm_ws(int64_t m, int64_t n, int64_t k, float alpha, const float *a, int64_t as_m,
                                    int64_t as_k, pfvm_la_pack_fn pack, void *user, float *c, int64_t ldc, float *ws)
{
    const pfvm__la_kern *kn = pfvm__la_pick();
    pfvm__la_blocks bl = pfvm__la_blocking(kn, m, n, k, ws != NULL);
    float stack_b[PFVM_LA_KC * PFVM__LA_NR_MAX], stack_a[2 * PFVM__LA_MR_MAX * PFVM_LA_KC];
    float *bpack = ws ? ws : stack_b, *apack = ws ? ws + bl.kc * bl.nc : stack_a;
    int64_t jc, pc, ic, j;
    if (m <= 0 || n <= 0 || k <= 0)
        return;
    if (pack == pfvm_la_pack_strided &&
        (pfvm__la_gemv(m, n, k, alpha, a, as_m, as_k, (const pfvm_la_strided *)user, c, ldc) ||
         pfvm__la_direct(kn, m, n, k, alpha, a, as_m, as_k, (const pfvm_la_strided *)user, c, ldc, stack_a, stack_b)))
        return;
    for (jc = 0; jc < n; jc += bl.nc) {
        int64_t nc = n - jc < bl.nc ? n - jc : bl.nc, nc_pad = pfvm__la_round(nc, kn->nr);
        for (pc = 0; pc < k; pc += bl.kc) {
            int64_t kc = k - pc < bl.kc ? k - pc : bl.kc;
            /* panels past nc (up to a whole kernel width) come out zero */
            for (j = 0; j < nc_pad; j += PFVM_LA_NB)
                pack(user, pc, kc, jc + j, nc - j <= 0 ? 0 : nc - j < PFVM_LA_NB ? nc - j : PFVM_LA_NB, bpack + j * kc);
            for (ic = 0; ic < m; ic += bl.mc) {
                int64_t mc = m - ic < bl.mc ? m - ic : bl.mc;
                pfvm__la_pack_a(a + ic * as_m + pc * as_k, as_m, as_k, mc, kc, kn->mr, apack);
                pfvm__la_block(kn, mc, nc, kc, apack, bpack, c + ic * ldc + jc, ldc, alpha);
            }
        }
    }
}

PFVM_INTERNAL void pfvm_la_sgemm(int64_t m, int64_t n, int64_t k, float alpha, const float *a, int64_t as_m, int64_t as_k,
                                 pfvm_la_pack_fn pack, void *user, float *c, int64_t ldc)
{
    pfvm_la_sgemm_ws(m, n, k, alpha, a, as_m, as_k, pack, user, c, ldc, NULL);
}

PFVM_INTERNAL float *pfvm_la_workspace(pfvm_kctx *k, int64_t m, int64_t n, int64_t kk, int *failed)
{
    *failed = 0;
    if (!k->exec)
        return NULL;
    {
        float *ws = (float *)pfvm_kctx_scratch(k, pfvm_la_sgemm_ws_floats(m, n, kk) * sizeof(float));
        *failed = ws == NULL;
        return ws;
    }
}

PFVM_INTERNAL void pfvm_la_pack_strided(void *user, int64_t p0, int64_t kc, int64_t j0, int64_t nr, float *dst)
{
    const pfvm_la_strided *b = (const pfvm_la_strided *)user;
    int64_t p, j;
    for (p = 0; p < kc; p++) {
        const float *src = nr ? b->data + (p0 + p) * b->s_k + j0 * b->s_n : b->data;
        float *row = dst + p * PFVM_LA_NB;
        if (b->s_n == 1)
            for (j = 0; j < nr; j++)
                row[j] = src[j];
        else
            for (j = 0; j < nr; j++)
                row[j] = src[j * b->s_n];
        for (; j < PFVM_LA_NB; j++)
            row[j] = 0.0f;
    }
}

/* A double as int64, saturating (NaN as 0): converting a value outside
 * int64's range is undefined in C, and alpha/beta scale integer products. */
static int64_t pfvm__la_sat_i64(double f)
{
    if (f != f)
        return 0;
    if (f >= 9223372036854775807.0)
        return INT64_MAX;
    if (f <= -9223372036854775808.0)
        return INT64_MIN;
    return (int64_t)f;
}

/* C (m x n, row-major, at c_off) (+)= alpha * A * B for any numeric types,
 * accumulating in double for floats and int64 for integers. */
static void pfvm__la_gemm_any(int64_t m, int64_t n, int64_t k, const pfvm_tensor *a, int64_t aoff, int64_t as_m,
                              int64_t as_k, const pfvm_tensor *b, int64_t boff, int64_t bs_k, int64_t bs_n, pfvm_tensor *c,
                              int64_t coff, double alpha, int accumulate)
{
    int64_t i, p, j;
    int is_f = pfvm_dtype_is_float(c->dtype);
    for (i = 0; i < m; i++)
        for (j = 0; j < n; j++) {
            int64_t at = coff + i * n + j;
            if (is_f) {
                double acc = 0, v;
                for (p = 0; p < k; p++)
                    acc += pfvm_tensor_get_f64(a, aoff + i * as_m + p * as_k) * pfvm_tensor_get_f64(b, boff + p * bs_k + j * bs_n);
                v = alpha * acc + (accumulate ? pfvm_tensor_get_f64(c, at) : 0);
                switch (c->dtype) {
                case PFVM_FLOAT: ((float *)c->data)[at] = (float)v; break;
                case PFVM_DOUBLE: ((double *)c->data)[at] = v; break;
                case PFVM_FLOAT16: ((uint16_t *)c->data)[at] = pfvm_float_to_half((float)v); break;
                default: ((uint16_t *)c->data)[at] = pfvm_float_to_bf16((float)v); break;
                }
            } else {
                /* unsigned products wrap the same way in int64 */
                uint64_t acc = 0;
                int64_t v;
                for (p = 0; p < k; p++)
                    acc += (uint64_t)pfvm_tensor_get_i64(a, aoff + i * as_m + p * as_k) *
                           (uint64_t)pfvm_tensor_get_i64(b, boff + p * bs_k + j * bs_n);
                v = alpha == 1.0 ? (int64_t)acc : pfvm__la_sat_i64(alpha * (double)(int64_t)acc);
                if (accumulate)
                    v = (int64_t)((uint64_t)v + (uint64_t)pfvm_tensor_get_i64(c, at));
                switch (pfvm_dtype_size(c->dtype)) {
                case 8: ((int64_t *)c->data)[at] = v; break;
                case 4: ((int32_t *)c->data)[at] = (int32_t)v; break;
                case 2: ((int16_t *)c->data)[at] = (int16_t)v; break;
                default: ((int8_t *)c->data)[at] = (int8_t)v; break;
                }
            }
        }
}

/* ---- MatMul ------------------------------------------------------------------------- */

PFVM_INTERNAL pfvm_code pfvm_infer_matmul(pfvm_ictx *c, const pfvm_shape *sa, const pfvm_shape *sb, pfvm_dtype dtype)
{
    pfvm_shape a = *sa, b = *sb, ba, bb, batch, out;
    const pfvm_shape *sh[2];
    int i, ra, rb;
    if (a.rank < 0 || b.rank < 0)
        return pfvm_infer_unknown(c, 0, dtype, -1);
    if (a.rank == 0 || b.rank == 0)
        return pfvm__fail(c->st, PFVM_ERR_SHAPE, "MatMul inputs must have rank >= 1");
    ra = a.rank;
    rb = b.rank;
    /* 1-D operands are promoted, and the promoted dim is dropped again */
    if (ra == 1) {
        a.dims[1] = a.dims[0];
        a.dims[0] = pfvm_sym_const(c->syms, 1);
        a.rank = 2;
    }
    if (rb == 1) {
        b.dims[1] = pfvm_sym_const(c->syms, 1);
        b.rank = 2;
    }
    if (pfvm_infer_check_eq(c, a.dims[a.rank - 1], b.dims[b.rank - 2], "inner dimensions"))
        return c->st ? c->st->code : PFVM_ERR_SHAPE;
    ba = a;
    ba.rank -= 2;
    bb = b;
    bb.rank -= 2;
    sh[0] = &ba;
    sh[1] = &bb;
    if (pfvm_infer_broadcast(c, sh, 2, &batch))
        return c->st ? c->st->code : PFVM_ERR_SHAPE;
    out = batch;
    if (ra > 1)
        out.dims[out.rank++] = a.dims[a.rank - 2];
    if (rb > 1)
        out.dims[out.rank++] = b.dims[b.rank - 1];
    for (i = 0; i < out.rank; i++)
        if (!out.dims[i])
            return pfvm__fail(c->st, PFVM_ERR_NOMEM, "out of memory");
    pfvm_ival_set_tensor(c->out[0], dtype, &out);
    return PFVM_OK;
}

static pfvm_code pfvm__la_infer_matmul(pfvm_ictx *c)
{
    return pfvm_infer_matmul(c, &c->in[0]->type.shape, &c->in[1]->type.shape, c->in[0]->type.dtype);
}

/* Batch dims of A and B broadcast together (right-aligned), checked. */
static pfvm_code pfvm__la_batch(pfvm_kctx *k, const pfvm_tensor *A, const pfvm_tensor *B, int *r, int64_t *bdims)
{
    int ra = A->rank > 2 ? A->rank - 2 : 0, rb = B->rank > 2 ? B->rank - 2 : 0, d;
    *r = ra > rb ? ra : rb;
    for (d = 0; d < *r; d++) {
        int64_t da = d - (*r - ra) >= 0 ? A->dims[d - (*r - ra)] : 1, db = d - (*r - rb) >= 0 ? B->dims[d - (*r - rb)] : 1;
        if (da != db && da != 1 && db != 1)
            return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "batch dimensions %lld and %lld do not broadcast",
                                 (long long)da, (long long)db);
        bdims[d] = da == 1 ? db : da;
    }
    return PFVM_OK;
}

static pfvm_code pfvm__la_k_matmul(pfvm_kctx *k)
{
    const pfvm_tensor *A = k->in[0], *B = k->in[1];
    pfvm_tensor *C = k->out[0];
    int64_t m, kk, n, kb, batch = 1, t, bidx[PFVM_MAX_RANK] = {0}, bdims[PFVM_MAX_RANK], odims[PFVM_MAX_RANK];
    int ra, rb, r, d, orank, failed = 0;
    float *ws = NULL;
    if (A->rank < 1 || B->rank < 1)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "MatMul inputs must have rank >= 1");
    m = A->rank == 1 ? 1 : A->dims[A->rank - 2];
    kk = A->dims[A->rank - 1];
    n = B->rank == 1 ? 1 : B->dims[B->rank - 1];
    kb = B->rank == 1 ? B->dims[0] : B->dims[B->rank - 2];
    ra = A->rank > 2 ? A->rank - 2 : 0;
    rb = B->rank > 2 ? B->rank - 2 : 0;
    if (kk != kb)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "inner dimensions differ: %lld vs %lld", (long long)kk,
                             (long long)kb);
    if (pfvm__la_batch(k, A, B, &r, bdims))
        return k->st ? k->st->code : PFVM_ERR_SHAPE;
    for (d = 0; d < r; d++) {
        batch *= bdims[d];
        odims[d] = bdims[d];
    }
    orank = r;
    if (A->rank > 1)
        odims[orank++] = m;
    if (B->rank > 1)
        odims[orank++] = n;
    if (pfvm_kctx_output(k, 0, A->dtype, orank, odims))
        return k->st ? k->st->code : PFVM_ERR_SHAPE;
    if (C->nbytes)
        memset(C->data, 0, C->nbytes);
    if (A->dtype == PFVM_FLOAT && B->dtype == PFVM_FLOAT && C->dtype == PFVM_FLOAT && batch > 0) {
        ws = pfvm_la_workspace(k, m, n, kk, &failed);
        if (failed)
            return k->st ? k->st->code : PFVM_ERR_NOMEM;
    }
    for (t = 0; t < batch; t++) {
        int64_t ao = 0, bo = 0, sa = m * kk, sb = kb * n, stride_a = 1, stride_b = 1;
        /* offsets of this batch entry in A and B, with broadcasting */
        for (d = r - 1; d >= 0; d--) {
            int64_t da = d - (r - ra) >= 0 ? A->dims[d - (r - ra)] : 1, db = d - (r - rb) >= 0 ? B->dims[d - (r - rb)] : 1;
            if (da != 1)
                ao += bidx[d] * stride_a;
            if (db != 1)
                bo += bidx[d] * stride_b;
            stride_a *= da;
            stride_b *= db;
        }
        if (A->dtype == PFVM_FLOAT && B->dtype == PFVM_FLOAT && C->dtype == PFVM_FLOAT) {
            pfvm_la_strided bm;
            bm.data = (const float *)B->data + bo * sb;
            bm.s_k = n;
            bm.s_n = 1;
            pfvm_la_sgemm_ws(m, n, kk, 1.0f, (const float *)A->data + ao * sa, kk, 1, pfvm_la_pack_strided, &bm,
                             (float *)C->data + t * m * n, n, ws);
        } else {
            pfvm__la_gemm_any(m, n, kk, A, ao * sa, kk, 1, B, bo * sb, n, 1, C, t * m * n, 1.0, 0);
        }
        for (d = r - 1; d >= 0; d--) {
            if (++bidx[d] < bdims[d])
                break;
            bidx[d] = 0;
        }
    }
    return PFVM_OK;
}

/* ---- Gemm ---------------------------------------------------------------------------------- */

static pfvm_code pfvm__la_infer_gemm(pfvm_ictx *c)
{
    const pfvm_shape *a = &c->in[0]->type.shape, *b = &c->in[1]->type.shape;
    int ta = pfvm_node_attr_int(c->node, "transA", 0) != 0, tb = pfvm_node_attr_int(c->node, "transB", 0) != 0;
    pfvm_shape out;
    if (a->rank < 0 || b->rank < 0)
        return pfvm_infer_unknown(c, 0, c->in[0]->type.dtype, 2);
    if (a->rank != 2 || b->rank != 2)
        return pfvm__fail(c->st, PFVM_ERR_SHAPE, "Gemm inputs must be matrices (ranks %d and %d)", a->rank, b->rank);
    if (pfvm_infer_check_eq(c, a->dims[ta ? 0 : 1], b->dims[tb ? 1 : 0], "inner dimensions"))
        return c->st ? c->st->code : PFVM_ERR_SHAPE;
    out.rank = 2;
    out.dims[0] = a->dims[ta ? 1 : 0];
    out.dims[1] = b->dims[tb ? 0 : 1];
    /* C broadcasts (unidirectionally) into [M, N] */
    if (c->n_in > 2 && c->in[2] && c->in[2]->type.shape.rank >= 0) {
        const pfvm_shape *cs = &c->in[2]->type.shape;
        int d;
        if (cs->rank > 2)
            return pfvm__fail(c->st, PFVM_ERR_SHAPE, "C has rank %d, more than 2", cs->rank);
        for (d = 0; d < cs->rank; d++) {
            const pfvm_sym *o = out.dims[2 - cs->rank + d];
            if (pfvm_sym_proven_ge(c->syms, cs->dims[d], 2) && pfvm_sym_proven_ne(c->syms, cs->dims[d], o))
                return pfvm__fail(c->st, PFVM_ERR_SHAPE, "C does not broadcast into the output (dimension %d)", d);
        }
    }
    pfvm_ival_set_tensor(c->out[0], c->in[0]->type.dtype, &out);
    return PFVM_OK;
}

typedef struct pfvm__la_bias {
    const pfvm_tensor *c;
    pfvm_tensor *y;
    double beta;
    float fbeta; /* beta for float C and Y: one float product, the same value as in double */
} pfvm__la_bias;

static void pfvm__la_bias_span(void *user, int64_t pos, int64_t len, const int64_t *off, const int64_t *stride)
{
    pfvm__la_bias *b = (pfvm__la_bias *)user;
    int64_t e;
    if (b->y->dtype == PFVM_FLOAT && b->c->dtype == PFVM_FLOAT) {
        const float *c = (const float *)b->c->data + off[0];
        float *y = (float *)b->y->data + pos;
        for (e = 0; e < len; e++)
            y[e] = b->fbeta * c[e * stride[0]];
        return;
    }
    for (e = 0; e < len; e++) {
        int64_t src = off[0] + e * stride[0], at = pos + e;
        if (pfvm_dtype_is_float(b->y->dtype)) {
            double v = b->beta * pfvm_tensor_get_f64(b->c, src);
            switch (b->y->dtype) {
            case PFVM_FLOAT: ((float *)b->y->data)[at] = (float)v; break;
            case PFVM_DOUBLE: ((double *)b->y->data)[at] = v; break;
            case PFVM_FLOAT16: ((uint16_t *)b->y->data)[at] = pfvm_float_to_half((float)v); break;
            default: ((uint16_t *)b->y->data)[at] = pfvm_float_to_bf16((float)v); break;
            }
        } else {
            int64_t v = pfvm_tensor_get_i64(b->c, src);
            if (b->beta != 1.0)
                v = pfvm__la_sat_i64(b->beta * (double)v);
            switch (pfvm_dtype_size(b->y->dtype)) {
            case 8: ((int64_t *)b->y->data)[at] = v; break;
            case 4: ((int32_t *)b->y->data)[at] = (int32_t)v; break;
            case 2: ((int16_t *)b->y->data)[at] = (int16_t)v; break;
            default: ((int8_t *)b->y->data)[at] = (int8_t)v; break;
            }
        }
    }
}

/* Y = beta * C broadcast to Y's [m, n] (unidirectional), or zeros. */
static pfvm_code pfvm__la_gemm_bias(pfvm_kctx *k, const pfvm_tensor *Cb, double beta, pfvm_tensor *Y)
{
    pfvm__la_bias b;
    int d;
    if (!Cb || beta == 0) {
        if (Y->nbytes)
            memset(Y->data, 0, Y->nbytes);
        return PFVM_OK;
    }
    if (Cb->rank > 2)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "C has rank %d, more than 2", Cb->rank);
    for (d = 0; d < Cb->rank; d++) {
        int64_t cd = Cb->dims[d], yd = Y->dims[2 - Cb->rank + d];
        if (cd != 1 && cd != yd)
            return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "C dimension %lld does not broadcast to %lld",
                                 (long long)cd, (long long)yd);
    }
    b.c = Cb;
    b.y = Y;
    b.beta = beta;
    b.fbeta = (float)beta;
    return pfvm_ew_apply(k, &Cb, 1, Y, pfvm__la_bias_span, &b);
}

static pfvm_code pfvm__la_k_gemm(pfvm_kctx *k)
{
    const pfvm_tensor *A = k->in[0], *B = k->in[1], *Cb = k->n_in > 2 ? k->in[2] : NULL;
    pfvm_tensor *Y = k->out[0];
    int ta = pfvm_node_attr_int(k->node, "transA", 0) != 0, tb = pfvm_node_attr_int(k->node, "transB", 0) != 0;
    double alpha = pfvm_node_attr_float(k->node, "alpha", 1.0f), beta = pfvm_node_attr_float(k->node, "beta", 1.0f);
    int64_t m, n, kk, dims[2];
    if (A->rank != 2 || B->rank != 2)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "Gemm inputs must be matrices (ranks %d and %d)", A->rank,
                             B->rank);
    m = ta ? A->dims[1] : A->dims[0];
    kk = ta ? A->dims[0] : A->dims[1];
    n = tb ? B->dims[0] : B->dims[1];
    if ((tb ? B->dims[1] : B->dims[0]) != kk)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "inner dimensions differ: %lld vs %lld", (long long)kk,
                             (long long)(tb ? B->dims[1] : B->dims[0]));
    dims[0] = m;
    dims[1] = n;
    if (pfvm_kctx_output(k, 0, A->dtype, 2, dims) || pfvm__la_gemm_bias(k, Cb, beta, Y))
        return k->st ? k->st->code : PFVM_ERR_SHAPE;
    if (A->dtype == PFVM_FLOAT && B->dtype == PFVM_FLOAT && Y->dtype == PFVM_FLOAT) {
        pfvm_la_strided bm;
        int failed;
        float *ws = pfvm_la_workspace(k, m, n, kk, &failed);
        if (failed)
            return k->st ? k->st->code : PFVM_ERR_NOMEM;
        bm.data = (const float *)B->data;
        bm.s_k = tb ? 1 : n;
        bm.s_n = tb ? kk : 1;
        pfvm_la_sgemm_ws(m, n, kk, (float)alpha, (const float *)A->data, ta ? 1 : kk, ta ? m : 1, pfvm_la_pack_strided,
                         &bm, (float *)Y->data, n, ws);
    } else {
        pfvm__la_gemm_any(m, n, kk, A, 0, ta ? 1 : kk, ta ? m : 1, B, 0, tb ? 1 : n, tb ? kk : 1, Y, 0, alpha, 1);
    }
    return PFVM_OK;
}

/* ---- simplify hooks: absorbing a per-channel scale and shift (bnfold) ------------------ */

/* A request for the last axis of a float output whose weight B is a
 * constant matrix with req->n columns (transposed: rows): the scaled copy
 * of B, or NULL. */
static pfvm_value *pfvm__la_scaled_b(pfvm_rewrite *rw, const pfvm_node *n, const pfvm_rw_affine *req, int tb)
{
    const pfvm_tensor *B = pfvm_rw_value(rw, n->inputs[1]);
    const pfvm_shape *ys = pfvm_rw_shape(rw, n->outputs[0]);
    pfvm_tensor *t;
    pfvm_value *v;
    int64_t i, cols, rows;
    if (!B || !ys || B->rank != 2 || !pfvm_dtype_is_float(B->dtype) || req->axis != ys->rank - 1 ||
        B->dims[tb ? 0 : 1] != req->n)
        return NULL;
    if (!(v = pfvm_rw_const_new(rw, B->dtype, 2, B->dims, n->inputs[1]->name, &t)))
        return NULL;
    rows = B->dims[0];
    cols = B->dims[1];
    for (i = 0; i < rows * cols; i++)
        pfvm_red_store(t, i, pfvm_tensor_get_f64(B, i) * req->scale[tb ? i / cols : i % cols]);
    return v;
}

/* MatMul(A, B) with B a constant matrix: MatMul(A, B*scale) (+ shift). */
static pfvm_code pfvm__la_simp_matmul(pfvm_rewrite *rw, pfvm_node *n)
{
    pfvm_rw_affine *req = pfvm_rw_request(rw);
    pfvm_value *in[2], *b;
    pfvm_node *mm, *add;
    pfvm_tensor *t;
    int i;
    if (!req || !(b = pfvm__la_scaled_b(rw, n, req, 0)))
        return req ? pfvm_rw_code(rw) : PFVM_OK;
    in[0] = n->inputs[0];
    in[1] = b;
    if (!(mm = pfvm_rw_add_node(rw, "MatMul", in, 2, 1, n)) || pfvm_rw_infer_node(rw, mm))
        return pfvm_rw_code(rw);
    req->result = mm->outputs[0];
    if (!req->shift)
        return PFVM_OK;
    {
        int64_t len = req->n;
        if (!(in[1] = pfvm_rw_const_new(rw, pfvm_rw_type(rw, b)->dtype, 1, &len, "shift", &t)))
            return pfvm_rw_code(rw);
    }
    for (i = 0; i < req->n; i++)
        pfvm_red_store(t, i, req->shift[i]);
    in[0] = mm->outputs[0];
    req->result = NULL;
    if (!(add = pfvm_rw_add_node(rw, "Add", in, 2, 1, n)) || pfvm_rw_infer_node(rw, add))
        return pfvm_rw_code(rw);
    req->result = add->outputs[0];
    return PFVM_OK;
}

/* Gemm(A, B, C) with B and C constants: Gemm(A, B*scale, beta*C*scale +
 * shift) with beta 1. */
static pfvm_code pfvm__la_simp_gemm(pfvm_rewrite *rw, pfvm_node *n)
{
    static const char *const skip[] = {"beta", NULL};
    pfvm_rw_affine *req = pfvm_rw_request(rw);
    const pfvm_tensor *C = n->n_inputs > 2 && n->inputs[2] ? pfvm_rw_value(rw, n->inputs[2]) : NULL;
    const pfvm_shape *ys = pfvm_rw_shape(rw, n->outputs[0]);
    double beta = pfvm_node_attr_float(n, "beta", 1.0f);
    int tb = pfvm_node_attr_int(n, "transB", 0) != 0, i, j;
    int64_t dims[2], m = 1;
    pfvm_value *in[3];
    pfvm_tensor *t;
    pfvm_node *g;
    if (!req)
        return PFVM_OK;
    if (n->opset < 7 || !ys || ys->rank != 2 || (n->n_inputs > 2 && n->inputs[2] && !C) || (C && C->rank > 2))
        return PFVM_OK;
    /* C' is [n] unless C varies along the rows: then [m, n] */
    if (C && C->rank == 2 && C->dims[0] != 1) {
        if (!pfvm_sym_is_const(ys->dims[0], &m) || C->dims[0] != m)
            return PFVM_OK;
    }
    if (C && ((C->rank >= 1 && C->dims[C->rank - 1] != 1 && C->dims[C->rank - 1] != req->n) ||
              !pfvm_dtype_is_float(C->dtype)))
        return PFVM_OK;
    if (!(in[1] = pfvm__la_scaled_b(rw, n, req, tb)))
        return pfvm_rw_code(rw);
    dims[0] = m;
    dims[1] = req->n;
    if (!(in[2] = pfvm_rw_const_new(rw, pfvm_rw_type(rw, in[1])->dtype, m > 1 ? 2 : 1, m > 1 ? dims : dims + 1,
                                    "bias", &t)))
        return pfvm_rw_code(rw);
    for (i = 0; i < m; i++)
        for (j = 0; j < req->n; j++) {
            double c = 0;
            if (C) {
                int64_t at = 0;
                if (C->rank >= 1 && C->dims[C->rank - 1] != 1)
                    at += j;
                if (C->rank == 2 && C->dims[0] != 1)
                    at += (int64_t)i * C->dims[1];
                c = beta * pfvm_tensor_get_f64(C, at);
            }
            pfvm_red_store(t, (int64_t)i * req->n + j, c * req->scale[j] + (req->shift ? req->shift[j] : 0));
        }
    in[0] = n->inputs[0];
    if (!(g = pfvm_rw_add_node(rw, "Gemm", in, 3, 1, n)) || pfvm_rw_copy_attrs(rw, g, n, skip) ||
        pfvm_rw_infer_node(rw, g))
        return pfvm_rw_code(rw);
    req->result = g->outputs[0];
    return PFVM_OK;
}

/* ---- gradients ------------------------------------------------------------------------ */

/* x with its last two axes swapped (rank >= 2). */
static pfvm_value *pfvm__la_swap_last(pfvm_grad_ctx *g, pfvm_value *x)
{
    int64_t perm[PFVM_MAX_RANK];
    const pfvm_type *t = pfvm_grad_type(g, x);
    int r, i;
    if (!t)
        return NULL;
    r = t->shape.rank;
    if (r < 2) {
        pfvm_grad_fail(g, "transposing a rank-%d value", r);
        return NULL;
    }
    for (i = 0; i < r; i++)
        perm[i] = i;
    perm[r - 2] = r - 1;
    perm[r - 1] = r - 2;
    return pfvm_grad_transpose(g, x, perm, r);
}

/* Y = A @ B with numpy's rules: 1-D operands gain a unit axis (A in front,
 * B behind) that Y then lacks. dA = gY @ B^T, dB = A^T @ gY, each summed
 * back over broadcast batch axes. */
static pfvm_code pfvm__la_k_matmul_grad(pfvm_grad_ctx *g, const pfvm_node *n)
{
    pfvm_value *a = n->inputs[0], *b = n->inputs[1], *gy = pfvm_grad_out(g, 0), *a2, *b2, *gy2;
    int ra, rb, ry;
    int64_t ax[2];
    if (!gy)
        return PFVM_OK;
    ra = pfvm_grad_type(g, a)->shape.rank;
    rb = pfvm_grad_type(g, b)->shape.rank;
    ry = pfvm_grad_type(g, gy)->shape.rank;
    if (ra < 1 || rb < 1 || ry < 0)
        return pfvm_grad_fail(g, "operands of unknown rank");
    ax[0] = 0;
    a2 = ra == 1 ? pfvm_grad_unsqueeze(g, a, ax, 1) : a;
    ax[0] = 1;
    b2 = rb == 1 ? pfvm_grad_unsqueeze(g, b, ax, 1) : b;
    gy2 = gy;
    if (ra == 1 && rb == 1) {
        ax[0] = 0;
        ax[1] = 1;
        gy2 = pfvm_grad_unsqueeze(g, gy, ax, 2);
    } else if (ra == 1) {
        ax[0] = ry - 1;
        gy2 = pfvm_grad_unsqueeze(g, gy, ax, 1);
    } else if (rb == 1) {
        ax[0] = ry;
        gy2 = pfvm_grad_unsqueeze(g, gy, ax, 1);
    }
    if (pfvm_grad_needed(g, a)) {
        pfvm_value *d = pfvm_grad_sum_to(g, pfvm_grad_op2(g, "MatMul", gy2, pfvm__la_swap_last(g, b2)), a2);
        if (pfvm_grad_add(g, a, ra == 1 ? pfvm_grad_reshape_like(g, d, a) : d))
            return g->st->code;
    }
    if (pfvm_grad_needed(g, b)) {
        pfvm_value *d = pfvm_grad_sum_to(g, pfvm_grad_op2(g, "MatMul", pfvm__la_swap_last(g, a2), gy2), b2);
        return pfvm_grad_add(g, b, rb == 1 ? pfvm_grad_reshape_like(g, d, b) : d);
    }
    return PFVM_OK;
}

/* alpha * op(x) @ op(y), op transposing when asked: one Gemm from opset 11
 * (C optional), MatMul with Transposes before. */
static pfvm_value *pfvm__la_gemm2(pfvm_grad_ctx *g, pfvm_value *x, int tx, pfvm_value *y, int ty, double alpha)
{
    pfvm_value *r;
    if (g->opset >= 11) {
        pfvm_value *in[2];
        pfvm_node *nd;
        in[0] = x;
        in[1] = y;
        nd = pfvm_grad_node(g, "Gemm", in, 2, 1);
        if (!nd || (tx && pfvm_node_set_attr_int(nd, "transA", 1, g->st)) ||
            (ty && pfvm_node_set_attr_int(nd, "transB", 1, g->st)) ||
            (alpha != 1 && pfvm_node_set_attr_float(nd, "alpha", (float)alpha, g->st)))
            return NULL;
        return nd->outputs[0];
    }
    r = pfvm_grad_op2(g, "MatMul", tx ? pfvm__la_swap_last(g, x) : x, ty ? pfvm__la_swap_last(g, y) : y);
    return alpha != 1 ? pfvm_grad_op2(g, "Mul", r, pfvm_grad_scalar_like(g, r, alpha)) : r;
}

/* Y = alpha * A' @ B' + beta * C with A' = transA ? A^T : A (B' alike). */
static pfvm_code pfvm__la_k_gemm_grad(pfvm_grad_ctx *g, const pfvm_node *n)
{
    pfvm_value *a = n->inputs[0], *b = n->inputs[1], *c = n->n_inputs > 2 ? n->inputs[2] : NULL;
    pfvm_value *gy = pfvm_grad_out(g, 0);
    int ta = pfvm_node_attr_int(n, "transA", 0) != 0, tb = pfvm_node_attr_int(n, "transB", 0) != 0;
    double alpha = pfvm_node_attr_float(n, "alpha", 1.0f), beta = pfvm_node_attr_float(n, "beta", 1.0f);
    if (!gy)
        return PFVM_OK;
    if (n->opset < 7 && c && pfvm_node_attr_int(n, "broadcast", 0) == 0 && !pfvm_grad_same_shape(g, c, gy))
        return pfvm_grad_fail(g, "C without broadcasting has another shape than Y");
    /* dA' = alpha gY B'^T; dA = dA'^T = alpha B' gY^T when transA */
    if (pfvm_grad_needed(g, a) &&
        pfvm_grad_add(g, a, ta ? pfvm__la_gemm2(g, b, tb, gy, 1, alpha) : pfvm__la_gemm2(g, gy, 0, b, !tb, alpha)))
        return g->st->code;
    /* dB' = alpha A'^T gY; dB = alpha gY^T A' when transB */
    if (pfvm_grad_needed(g, b) &&
        pfvm_grad_add(g, b, tb ? pfvm__la_gemm2(g, gy, 1, a, ta, alpha) : pfvm__la_gemm2(g, a, !ta, gy, 0, alpha)))
        return g->st->code;
    if (c && pfvm_grad_needed(g, c)) {
        pfvm_value *d = beta != 1 ? pfvm_grad_op2(g, "Mul", gy, pfvm_grad_scalar_like(g, gy, beta)) : gy;
        return pfvm_grad_add(g, c, pfvm_grad_sum_to(g, d, c));
    }
    return PFVM_OK;
}

/* ---- cost ------------------------------------------------------------------------------ */

/* A multiply-add per output element and step of the contracted axis. */
static double pfvm__la_matmul_flops(const pfvm_node *n, const pfvm_dims *in, int n_in, const pfvm_dims *out,
                                    int n_out)
{
    double y = n_out ? pfvm_dims_numel(&out[0]) : -1;
    (void)n;
    if (n_in < 2 || y < 0 || in[0].rank < 1)
        return -1;
    return 2.0 * y * (double)in[0].d[in[0].rank - 1];
}

static double pfvm__la_gemm_flops(const pfvm_node *n, const pfvm_dims *in, int n_in, const pfvm_dims *out,
                                  int n_out)
{
    double y = n_out ? pfvm_dims_numel(&out[0]) : -1;
    int64_t k;
    if (n_in < 2 || y < 0 || in[0].rank != 2)
        return -1;
    k = in[0].d[pfvm_node_attr_int(n, "transA", 0) ? 0 : 1];
    return 2.0 * y * (double)k + (n_in > 2 && in[2].rank >= 0 ? y : 0);
}

/* Workspace hooks (pfvm_workspace_fn): what pfvm_la_workspace asks for. */
static size_t pfvm__la_ws_bytes(int64_t m, int64_t n, int64_t k)
{
    return m > 0 && n > 0 && k > 0 ? pfvm_la_sgemm_ws_floats(m, n, k) * sizeof(float) : 0;
}

static size_t pfvm__la_matmul_ws(const pfvm_node *nd, const pfvm_dims *in, int n_in, const pfvm_dims *out, int n_out)
{
    const pfvm_dims *a = &in[0], *b = &in[1];
    (void)nd, (void)out, (void)n_out;
    if (n_in < 2 || a->rank < 1 || b->rank < 1)
        return 0;
    return pfvm__la_ws_bytes(a->rank > 1 ? a->d[a->rank - 2] : 1, b->rank > 1 ? b->d[b->rank - 1] : 1,
                             a->d[a->rank - 1]);
}

static size_t pfvm__la_gemm_ws(const pfvm_node *nd, const pfvm_dims *in, int n_in, const pfvm_dims *out, int n_out)
{
    int ta = (int)pfvm_node_attr_int(nd, "transA", 0), tb = (int)pfvm_node_attr_int(nd, "transB", 0);
    (void)out, (void)n_out;
    if (n_in < 2 || in[0].rank != 2 || in[1].rank != 2)
        return 0;
    return pfvm__la_ws_bytes(in[0].d[ta ? 1 : 0], in[1].d[tb ? 0 : 1], in[0].d[ta ? 0 : 1]);
}

/* accel lowering (see pfvm_accel_fn) of Gemm (MatMul's is in
 * accel_lower.c): rows of A on each PE (or A whole) times the whole B on
 * every PE (gemm), then C added along the rows. */
static pfvm_code pfvm__la_accel(pfvm_accel_ctx *c)
{
    const pfvm_node *n = c->node;
    const pfvm_accel_arg *a = &c->in[0], *b = &c->in[1], *y = &c->out[0];
    int is_gemm = !strcmp(n->op_type, "Gemm");
    int tb = is_gemm && pfvm_node_attr_int(n, "transB", 0);
    int64_t k, ncols, rows;
    pfvm_code rc;
    if (!b->replicated || b->rank != 2 || a->rank < 1 ||
        (is_gemm && (pfvm_node_attr_int(n, "transA", 0) || pfvm_node_attr_float(n, "alpha", 1) != 1 ||
                     pfvm_node_attr_float(n, "beta", 1) != 1)))
        return pfvm__fail(c->st, PFVM_ERR_UNSUPPORTED,
                          "node %s (%s): accel lowers rows of A times a 2-D B on every PE (no transA, alpha, beta)",
                          n->name, n->op_type);
    k = a->dims[a->rank - 1];
    ncols = b->dims[tb ? 0 : 1];
    if (k < 1 || a->elems % k || b->dims[tb ? 1 : 0] != k)
        return pfvm__fail(c->st, PFVM_ERR_UNSUPPORTED, "node %s (%s): A's rows are not whole on each PE", n->name,
                          n->op_type);
    rows = a->elems / k;
    if ((rc = c->emit(c, "gemm %lld %lld %lld %lld %lld %lld %d", (long long)y->off, (long long)a->off,
                      (long long)b->off, (long long)rows, (long long)ncols, (long long)k, tb)) != PFVM_OK)
        return rc;
    if (c->n_in > 2 && c->in[2].rank >= 0 && c->in[2].elems > 0) {
        const pfvm_accel_arg *bias = &c->in[2];
        int64_t cols = bias->elems;
        if (!bias->replicated || (cols != ncols && cols != 1) || (bias->rank == 2 && bias->dims[0] != 1))
            return pfvm__fail(c->st, PFVM_ERR_UNSUPPORTED, "node %s (Gemm): accel lowers a bias of N or 1 elements only",
                              n->name);
        return c->emit(c, "col add %lld %lld %lld %lld %lld", (long long)y->off, (long long)y->off,
                       (long long)bias->off, (long long)(y->elems / cols), (long long)cols);
    }
    return PFVM_OK;
}

PFVM_INTERNAL const pfvm_op_def pfvm__ops_linalg[] = {
    {"MatMul", "", 1, 0, 2, 2, 1, 1, pfvm__la_infer_matmul, pfvm__la_k_matmul, NULL, PFVM_FUSE_OUT_FUSABLE,
     "float,double,float16,bfloat16,int32,int64,uint32,uint64", NULL, 0, pfvm__la_simp_matmul, pfvm__la_k_matmul_grad, NULL, pfvm__la_matmul_flops, pfvm_acl_matmul, pfvm__la_matmul_ws},
    {"Gemm", "", 1, 0, 2, 3, 1, 1, pfvm__la_infer_gemm, pfvm__la_k_gemm, NULL, PFVM_FUSE_OUT_FUSABLE,
     "float,double,float16,bfloat16,int32,int64,uint32,uint64", NULL, 0, pfvm__la_simp_gemm, pfvm__la_k_gemm_grad, NULL, pfvm__la_gemm_flops, pfvm__la_accel, pfvm__la_gemm_ws},
    {NULL, NULL, 0, 0, 0, 0, 0, 0, NULL, NULL, NULL, PFVM_FUSE_OPAQUE, NULL, NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL}
};
