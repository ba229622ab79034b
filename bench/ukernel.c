/* bench/ukernel: AVX2+FMA register tiles with their data in L1, in
 * GFLOP/s, to hold against the FMA peak (bench/peak.c): what a micro-kernel
 * can reach before packing, blocking and C's updates cost anything.
 *   6x16   pfvm's tile: 6 rows of A broadcast from memory, 2 vectors of B
 *   4x24   4 broadcasts, 3 vectors of B (12 accumulators)
 *   3x32   3 broadcasts, 4 vectors of B
 *   16x6T  C transposed: 2 vectors of A along M, B pre-broadcast at packing
 *          (6 full loads per step, no broadcasts)
 *   6x16p  6x16 with A's 6 values from one load, spread by vpermps
 *   4x24r  4 rows of A from one 128-bit broadcast, 3 in-lane rotations
 *          (vpermilps), 3 vectors of B: C comes out rotated
 * On the AMD EPYC of bench/gemm.md (Zen 4, AVX-512 hidden) the broadcast
 * tiles all run at the FMA peak (two FMAs a cycle); the shuffle ones lose
 * a third. An earlier version of this program and of peak.c let gcc merge
 * equal accumulator chains and so reported a peak 1.5x too high (see
 * bench/gemm.md). Prints one line for bench/gemm.sh. */
#define _POSIX_C_SOURCE 199309L
#include <immintrin.h>
#include <stdio.h>
#include <time.h>

#define KC 128
static float A[16 * KC] __attribute__((aligned(64))), B[48 * KC] __attribute__((aligned(64)));
static float C[8] __attribute__((aligned(32)));

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

#define KERNEL __attribute__((target("avx2,fma"), noinline)) static void
#define Z _mm256_setzero_ps()
#define F _mm256_fmadd_ps
#define L _mm256_load_ps
#define BC _mm256_broadcast_ss
#define DECL __m256 c0 = Z, c1 = Z, c2 = Z, c3 = Z, c4 = Z, c5 = Z, c6 = Z, c7 = Z, c8 = Z, c9 = Z, c10 = Z, c11 = Z
/* all twelve accumulators reach the sink (none is dead code) */
#define SINK                                                                                           \
    {                                                                                                  \
        __m256 s = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(c0, c1), _mm256_add_ps(c2, c3)),         \
                                 _mm256_add_ps(_mm256_add_ps(c4, c5), _mm256_add_ps(c6, c7)));        \
        s = _mm256_add_ps(s, _mm256_add_ps(_mm256_add_ps(c8, c9), _mm256_add_ps(c10, c11)));          \
        _mm256_store_ps(C, _mm256_add_ps(s, L(C)));                                                   \
    }
#define P2(x, u, v) u = F(x, b0, u); v = F(x, b1, v);
#define P3(x, u, v, w) u = F(x, b0, u); v = F(x, b1, v); w = F(x, b2, w);
#define P4(x, u, v, w, y) u = F(x, b0, u); v = F(x, b1, v); w = F(x, b2, w); y = F(x, b3, y);

KERNEL t6x16(void)
{
    const float *a = A, *b = B;
    int p;
    DECL;
    for (p = 0; p < KC; p++, a += 6, b += 16) {
        __m256 b0 = L(b), b1 = L(b + 8);
        P2(BC(a), c0, c1) P2(BC(a + 1), c2, c3) P2(BC(a + 2), c4, c5)
        P2(BC(a + 3), c6, c7) P2(BC(a + 4), c8, c9) P2(BC(a + 5), c10, c11)
    }
    SINK
}

KERNEL t4x24(void)
{
    const float *a = A, *b = B;
    int p;
    DECL;
    for (p = 0; p < KC; p++, a += 4, b += 24) {
        __m256 b0 = L(b), b1 = L(b + 8), b2 = L(b + 16);
        P3(BC(a), c0, c1, c2) P3(BC(a + 1), c3, c4, c5) P3(BC(a + 2), c6, c7, c8) P3(BC(a + 3), c9, c10, c11)
    }
    SINK
}

KERNEL t3x32(void)
{
    const float *a = A, *b = B;
    int p;
    DECL;
    for (p = 0; p < KC; p++, a += 3, b += 32) {
        __m256 b0 = L(b), b1 = L(b + 8), b2 = L(b + 16), b3 = L(b + 24);
        P4(BC(a), c0, c1, c2, c3) P4(BC(a + 1), c4, c5, c6, c7) P4(BC(a + 2), c8, c9, c10, c11)
    }
    SINK
}

KERNEL t16x6t(void)
{
    const float *a = A, *b = B;
    int p;
    DECL;
    for (p = 0; p < KC; p++, a += 16, b += 48) {
        __m256 b0 = L(a), b1 = L(a + 8); /* A's two vectors along M play B's part */
        P2(L(b), c0, c1) P2(L(b + 8), c2, c3) P2(L(b + 16), c4, c5)
        P2(L(b + 24), c6, c7) P2(L(b + 32), c8, c9) P2(L(b + 40), c10, c11)
    }
    SINK
}

KERNEL t6x16p(void)
{
    const float *a = A, *b = B;
    const __m256i i0 = _mm256_set1_epi32(0), i1 = _mm256_set1_epi32(1), i2 = _mm256_set1_epi32(2);
    const __m256i i3 = _mm256_set1_epi32(3), i4 = _mm256_set1_epi32(4), i5 = _mm256_set1_epi32(5);
    int p;
    DECL;
    for (p = 0; p < KC; p++, a += 8, b += 16) {
        __m256 b0 = L(b), b1 = L(b + 8), av = L(a);
        P2(_mm256_permutevar8x32_ps(av, i0), c0, c1) P2(_mm256_permutevar8x32_ps(av, i1), c2, c3)
        P2(_mm256_permutevar8x32_ps(av, i2), c4, c5) P2(_mm256_permutevar8x32_ps(av, i3), c6, c7)
        P2(_mm256_permutevar8x32_ps(av, i4), c8, c9) P2(_mm256_permutevar8x32_ps(av, i5), c10, c11)
    }
    SINK
}

KERNEL t4x24r(void)
{
    const float *a = A, *b = B;
    int p;
    DECL;
    for (p = 0; p < KC; p++, a += 4, b += 24) {
        __m256 b0 = L(b), b1 = L(b + 8), b2 = L(b + 16), x = _mm256_broadcast_ps((const __m128 *)a);
        P3(x, c0, c1, c2) x = _mm256_permute_ps(x, 0x39);
        P3(x, c3, c4, c5) x = _mm256_permute_ps(x, 0x39);
        P3(x, c6, c7, c8) x = _mm256_permute_ps(x, 0x39);
        P3(x, c9, c10, c11)
    }
    SINK
}

static double best_gflops(void (*fn)(void))
{
    double best = 1e30;
    int round, i;
    for (round = 0; round < 30; round++) {
        double t = now_s();
        for (i = 0; i < 10000; i++)
            fn();
        t = now_s() - t;
        if (t < best)
            best = t;
    }
    return 10000.0 * 2 * 12 * 8 * KC / best / 1e9; /* every tile: 12 FMAs of 8 lanes per step */
}

int main(void)
{
    int i;
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) {
        printf("no AVX2+FMA\n");
        return 0;
    }
    for (i = 0; i < 16 * KC; i++)
        A[i] = (float)(i % 7) * 0.01f;
    for (i = 0; i < 48 * KC; i++)
        B[i] = (float)(i % 5) * 0.01f;
    printf("6x16 %.1f, 4x24 %.1f, 3x32 %.1f, 16x6T (B pre-broadcast) %.1f, 6x16p (vpermps) %.1f, "
           "4x24r (rotations) %.1f GFLOP/s (C %g)\n",
           best_gflops(t6x16), best_gflops(t4x24), best_gflops(t3x32), best_gflops(t16x6t), best_gflops(t6x16p),
           best_gflops(t4x24r), (double)C[0]);
    return 0;
}
