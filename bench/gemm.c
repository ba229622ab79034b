/* bench/gemm: GFLOP/s of pfvm's float matrix engine (pfvm_la_sgemm_ws,
 * src/ops/linalg.c, with its workspace as the executor gives it) against
 * OpenBLAS's cblas_sgemm, for square sizes and for the products that
 * convolutions of resnet18 / mobilenet_v2 become (M = output channels,
 * N = output positions, K = input channels x kernel positions), plus a
 * transformer-shaped one. Runs alternate (pfvm, OpenBLAS, pfvm, ...) and
 * each side keeps its fastest run. Checks the two results agree. Run with
 * OPENBLAS_NUM_THREADS=1 for one core (bench/gemm.sh does). */
#include <cblas.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* the engine's internal entry points (external in the library build) */
typedef void (*pfvm_la_pack_fn)(void *user, int64_t p0, int64_t kc, int64_t j0, int64_t nr, float *dst);
typedef struct pfvm_la_strided {
    const float *data;
    int64_t s_k, s_n;
} pfvm_la_strided;
void pfvm_la_pack_strided(void *user, int64_t p0, int64_t kc, int64_t j0, int64_t nr, float *dst);
void pfvm_la_sgemm_ws(int64_t m, int64_t n, int64_t k, float alpha, const float *a, int64_t as_m, int64_t as_k,
                      pfvm_la_pack_fn pack, void *user, float *c, int64_t ldc, float *ws);
size_t pfvm_la_sgemm_ws_floats(int64_t m, int64_t n, int64_t k);

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts); /* CPU time: what the shared machine gives other processes does not count */
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

typedef struct shape {
    const char *name;
    int m, n, k;
} shape;

static const shape shapes[] = {
    {"square 64", 64, 64, 64},
    {"square 128", 128, 128, 128},
    {"square 256", 256, 256, 256},
    {"square 512", 512, 512, 512},
    {"square 1024", 1024, 1024, 1024},
    {"resnet18 conv1 7x7/2", 64, 12544, 147},
    {"resnet18 layer1 3x3", 64, 3136, 576},
    {"resnet18 layer2 3x3", 128, 784, 1152},
    {"resnet18 layer3 3x3", 256, 196, 2304},
    {"resnet18 layer4 3x3", 512, 49, 4608},
    {"mobilenet_v2 1x1 expand 24->144", 144, 3136, 24},
    {"mobilenet_v2 1x1 project 384->64", 64, 196, 384},
    {"mobilenet_v2 1x1 960->320", 320, 49, 960},
    {"transformer seq 7, 512x2048", 7, 2048, 512},
};

int main(int argc, char **argv)
{
    double target = argc > 1 ? atof(argv[1]) : 0.5; /* seconds per side and shape */
    const char *only = argc > 2 ? argv[2] : NULL;     /* only the products whose name holds this */
    size_t s;
    printf("| product | M | N | K | pfvm GFLOP/s | OpenBLAS GFLOP/s | pfvm / OpenBLAS | max rel. diff |\n");
    printf("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    for (s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        const shape *sh = &shapes[s];
        int64_t m = sh->m, n = sh->n, k = sh->k, i;
        float *a = (float *)malloc(sizeof(float) * (size_t)(m * k)), *b = (float *)malloc(sizeof(float) * (size_t)(k * n));
        float *c0 = (float *)calloc((size_t)(m * n), sizeof(float)), *c1 = (float *)calloc((size_t)(m * n), sizeof(float));
        float *ws = (float *)malloc(sizeof(float) * pfvm_la_sgemm_ws_floats(m, n, k));
        double flops = 2.0 * (double)m * (double)n * (double)k, best[2] = {1e30, 1e30}, spent = 0, diff = 0;
        pfvm_la_strided bm;
        int reps, r, side;
        if (only && !strstr(sh->name, only)) {
            free(a), free(b), free(c0), free(c1), free(ws);
            continue;
        }
        if (!a || !b || !c0 || !c1 || !ws)
            return 1;
        for (i = 0; i < m * k; i++)
            a[i] = (float)((i * 7919) % 2001) / 1000.0f - 1.0f;
        for (i = 0; i < k * n; i++)
            b[i] = (float)((i * 104729) % 2001) / 1000.0f - 1.0f;
        bm.data = b;
        bm.s_k = n;
        bm.s_n = 1;
        /* one product each for the check (C starts at zero) */
        pfvm_la_sgemm_ws(m, n, k, 1.0f, a, k, 1, pfvm_la_pack_strided, &bm, c0, n, ws);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)n, (int)k, 1.0f, a, (int)k, b, (int)n, 0.0f, c1,
                    (int)n);
        for (i = 0; i < m * n; i++) {
            double d = fabs((double)c0[i] - c1[i]) / (fabs((double)c1[i]) + 1.0);
            if (d > diff)
                diff = d;
        }
        /* repetitions for ~1 ms per timed run: short runs catch the quiet
         * moments of a shared machine */
        reps = (int)(0.001 / (flops / 50e9)) + 1;
        for (r = 0; spent < 2 * target || r < 6; r++)
            for (side = 0; side < 2; side++) {
                int which = (r & 1) ? 1 - side : side, q;
                double t0 = now_s(), t;
                for (q = 0; q < reps; q++)
                    if (which == 0)
                        pfvm_la_sgemm_ws(m, n, k, 1.0f, a, k, 1, pfvm_la_pack_strided, &bm, c0, n, ws);
                    else
                        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)n, (int)k, 1.0f, a, (int)k, b,
                                    (int)n, 1.0f, c1, (int)n);
                t = (now_s() - t0) / reps;
                spent += t * reps;
                if (t < best[which])
                    best[which] = t;
            }
        printf("| %s | %lld | %lld | %lld | %.1f | %.1f | %.2f | %.1e |\n", sh->name, (long long)m, (long long)n,
               (long long)k, flops / best[0] / 1e9, flops / best[1] / 1e9, best[1] / best[0], diff);
        fflush(stdout);
        free(a);
        free(b);
        free(c0);
        free(c1);
        free(ws);
    }
    return 0;
}
