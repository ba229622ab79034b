/* bench/peak: the FMA peak of one core, in GFLOP/s, for the widest vectors
 * the CPU runs (AVX-512, else AVX2+FMA; x86-64 with gcc or clang): chains
 * of independent fused multiply-adds, enough of them to cover the latency
 * on two pipes, the best of several timed rounds. bench/gemm.sh quotes
 * GEMM speeds against it. Build: cc -O2 bench/peak.c -o peak */
#include <stdio.h>
#include <time.h>
#include <immintrin.h>

#define ROUNDS 60
#define ITERS 2000000L /* ~10 ms a round: on a shared machine short rounds catch its quiet moments */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts); /* CPU time: what the shared machine gives other processes does not count */
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

#define CHAINS(T, FMA, SET1, ADD, W)                                                                    \
    T a = SET1(1.0f), b = SET1(1e-7f), c0 = SET1(0), c1 = c0, c2 = c0, c3 = c0, c4 = c0, c5 = c0, c6 = c0, \
      c7 = c0, c8 = c0, c9 = c0, c10 = c0, c11 = c0;                                                     \
    long i;                                                                                             \
    float out[W];                                                                                       \
    double t0;                                                                                          \
    /* opaque starting values: the chains start equal and step alike, and  \
     * gcc merges equal chains into one (one FMA per iteration, latency    \
     * bound), which made this program report 1.5x the real peak */        \
    __asm__ volatile("" : "+x"(c0), "+x"(c1), "+x"(c2), "+x"(c3), "+x"(c4), "+x"(c5), "+x"(c6),        \
                     "+x"(c7), "+x"(c8), "+x"(c9), "+x"(c10), "+x"(c11));                                \
    t0 = now_s();                                                                                       \
    for (i = 0; i < iters; i++) {                                                                       \
        c0 = FMA(a, b, c0); c1 = FMA(a, b, c1); c2 = FMA(a, b, c2); c3 = FMA(a, b, c3);                 \
        c4 = FMA(a, b, c4); c5 = FMA(a, b, c5); c6 = FMA(a, b, c6); c7 = FMA(a, b, c7);                 \
        c8 = FMA(a, b, c8); c9 = FMA(a, b, c9); c10 = FMA(a, b, c10); c11 = FMA(a, b, c11);             \
        __asm__ volatile("" : "+x"(a));                                                                 \
    }                                                                                                   \
    t0 = now_s() - t0;                                                                                  \
    c0 = ADD(ADD(ADD(c0, c1), ADD(c2, c3)), ADD(ADD(c4, c5), ADD(c6, c7)));                             \
    c0 = ADD(c0, ADD(ADD(c8, c9), ADD(c10, c11)));                                                      \
    memcpy_(out, &c0, sizeof out);                                                                      \
    *sink = out[0];                                                                                     \
    return 2.0 * W * 12 * (double)iters / t0 / 1e9;

static void memcpy_(void *d, const void *s, unsigned long n)
{
    unsigned char *dd = (unsigned char *)d;
    const unsigned char *ss = (const unsigned char *)s;
    while (n--)
        *dd++ = *ss++;
}

__attribute__((target("avx512f"))) static double peak512(long iters, float *sink)
{
    CHAINS(__m512, _mm512_fmadd_ps, _mm512_set1_ps, _mm512_add_ps, 16)
}

__attribute__((target("avx2,fma"))) static double peak256(long iters, float *sink)
{
    CHAINS(__m256, _mm256_fmadd_ps, _mm256_set1_ps, _mm256_add_ps, 8)
}

int main(void)
{
    float sink = 0;
    double best = 0, g;
    int r, wide;
    __builtin_cpu_init();
    wide = __builtin_cpu_supports("avx512f");
    if (!wide && !__builtin_cpu_supports("fma")) {
        printf("no FMA\n");
        return 1;
    }
    for (r = 0; r < ROUNDS; r++) {
        g = wide ? peak512(ITERS, &sink) : peak256(ITERS, &sink);
        if (g > best)
            best = g;
    }
    printf("%s FMA peak %.1f GFLOP/s (sink %g)\n", wide ? "avx512" : "avx2", best, sink);
    return 0;
}
