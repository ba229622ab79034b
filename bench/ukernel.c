/* bench/ukernel: the ceiling of an AVX2+FMA register tile with its data in
 * L1, against the FMA peak (bench/peak.c). The tile is pfvm's (6 rows of A
 * broadcast, 2 vectors of packed B per step of K, 12 accumulators); the
 * second loop is the same tile with A's broadcasts hoisted out of the loop
 * (wrong products: it only shows what the FMA units do when each step
 * needs just the two loads of B). On the AMD EPYC of bench/gemm.md the
 * first stops near two thirds of the peak, and so did every other tile
 * tried (4x24, 3x32, A broadcast from a 128-bit load, B as FMA memory
 * operands, A pre-broadcast in memory): the broadcasts, not the tile, set
 * the ceiling there. Prints one line for bench/gemm.sh (built with gcc
 * there: clang moves the hoisted broadcasts back through memory). */
#define _POSIX_C_SOURCE 199309L
#include <immintrin.h>
#include <stdio.h>
#include <time.h>

#define KC 128
static float A[6 * KC], B[16 * KC], C[6 * 16];

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

#define DECL                                                                                                  \
    __m256 c00 = _mm256_setzero_ps(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00, c30 = c00, c31 = c00, \
           c40 = c00, c41 = c00, c50 = c00, c51 = c00
#define ROW(r, a)                            \
    c##r##0 = _mm256_fmadd_ps(a, b0, c##r##0); \
    c##r##1 = _mm256_fmadd_ps(a, b1, c##r##1);
#define STORE                                                                                                  \
    _mm256_storeu_ps(C, _mm256_add_ps(_mm256_add_ps(c00, c10), _mm256_add_ps(c20, c30)));                     \
    _mm256_storeu_ps(C + 8, _mm256_add_ps(_mm256_add_ps(c01, c11), _mm256_add_ps(c21, c31)));                 \
    _mm256_storeu_ps(C + 16, _mm256_add_ps(_mm256_add_ps(c40, c41), _mm256_add_ps(c50, c51)))

__attribute__((target("avx2,fma"), noinline)) static void tile(void)
{
    const float *ap = A, *bp = B;
    int p;
    DECL;
    for (p = 0; p < KC; p++, ap += 6, bp += 16) {
        __m256 b0 = _mm256_loadu_ps(bp), b1 = _mm256_loadu_ps(bp + 8);
        ROW(0, _mm256_broadcast_ss(ap)) ROW(1, _mm256_broadcast_ss(ap + 1)) ROW(2, _mm256_broadcast_ss(ap + 2))
        ROW(3, _mm256_broadcast_ss(ap + 3)) ROW(4, _mm256_broadcast_ss(ap + 4)) ROW(5, _mm256_broadcast_ss(ap + 5))
    }
    STORE;
}

__attribute__((target("avx2,fma"), noinline)) static void tile_hoisted(void)
{
    const float *bp = B;
    __m256 a0 = _mm256_broadcast_ss(A), a1 = _mm256_broadcast_ss(A + 1), a2 = _mm256_broadcast_ss(A + 2);
    int p;
    DECL;
    for (p = 0; p < KC; p++, bp += 16) {
        __m256 b0 = _mm256_loadu_ps(bp), b1 = _mm256_loadu_ps(bp + 8);
        __asm__ volatile("" : "+x"(a0), "+x"(a1), "+x"(a2)); /* kept in registers (no reloads) */
        ROW(0, a0) ROW(1, a1) ROW(2, a2) ROW(3, a0) ROW(4, a1) ROW(5, a2)
    }
    STORE;
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
    return 10000.0 * 2 * 6 * 16 * KC / best / 1e9;
}

int main(void)
{
    int i;
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) {
        printf("no AVX2+FMA\n");
        return 0;
    }
    for (i = 0; i < 6 * KC; i++)
        A[i] = (float)(i % 7) * 0.01f;
    for (i = 0; i < 16 * KC; i++)
        B[i] = (float)(i % 5) * 0.01f;
    printf("6x16 tile in L1 %.1f GFLOP/s, without A's broadcasts %.1f GFLOP/s (C %g)\n", best_gflops(tile),
           best_gflops(tile_hoisted), (double)C[0]);
    return 0;
}
