/* ulp_check: worst error, in units in the last place, of pfvm's float32
 * exp, erf, tanh, sigmoid and softplus (src/ops/elementwise.c) and of the
 * C library's float functions the float32 paths call, against libm's double
 * functions, over every STEP-th float (1: all 2^32), and a hash of all
 * result bits, so that builds for different instruction sets can be
 * compared bit for bit (NaN results count by class, not payload).
 *
 *   cc -O2 -I. tools/ulp_check.c -o ulp -lprotobuf-nanopb -lm
 *   ./ulp [STEP]                      (default 211)
 * It also checks that sigmoid's block kernel (the AVX-512 one where the
 * CPU has it) gives the scalar function's bits.
 *   cc -O2 -march=x86-64-v4 ... / -DPFVM_NO_DISPATCH ...: the same hash
 *   where fused multiply-adds are used (PFVM__EW_FMA), another without.
 * Dev-time tool: not part of the tests. */
#define PFVM_IMPLEMENTATION
#include "pfvm.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* |got - want| in ulps of want rounded to float (subnormal ulp below). */
static double ulps(float got, double want)
{
    float w = (float)want;
    int e;
    double u;
    if (isnan(want))
        return isnan(got) ? 0 : 1e30;
    if (isinf(w))
        return got == w ? 0 : 1e30;
    frexp(w == 0 ? FLT_MIN : (double)w, &e);
    u = ldexp(1.0, (e - 24 < -149 ? -149 : e - 24));
    return fabs((double)got - want) / u;
}

/* pfvm's polynomials, then the C library's float functions that the
 * float32 paths call (their errors are the library's: glibc here, newlib
 * on the firmware), then softplus, which combines both. */
#define FNS 18
static const char *names[FNS] = {"exp", "erf", "tanh", "sigmoid", "logf", "sinf", "cosf", "tanf", "asinf", "acosf",
                                 "atanf", "sinhf", "coshf", "asinhf", "acoshf", "atanhf", "expm1f", "softplus"};

static float f32(int k, float x)
{
    switch (k) {
    case 0: return pfvm__ew_expf(x);
    case 1: return pfvm__ew_erff(x);
    case 2: return pfvm__ew_tanhf(x);
    case 3: return pfvm__ew_sigmoidf(x);
    case 4: return logf(x);
    case 5: return sinf(x);
    case 6: return cosf(x);
    case 7: return tanf(x);
    case 8: return asinf(x);
    case 9: return acosf(x);
    case 10: return atanf(x);
    case 11: return sinhf(x);
    case 12: return coshf(x);
    case 13: return asinhf(x);
    case 14: return acoshf(x);
    case 15: return atanhf(x);
    case 16: return expm1f(x);
    default: return pfvm__ew_softplusf(x);
    }
}

static double f64(int k, double x)
{
    switch (k) {
    case 0: return exp(x);
    case 1: return erf(x);
    case 2: return tanh(x);
    case 3: return pfvm__ew_sigmoid(x); /* the double reference the kernels use */
    case 4: return log(x);
    case 5: return sin(x);
    case 6: return cos(x);
    case 7: return tan(x);
    case 8: return asin(x);
    case 9: return acos(x);
    case 10: return atan(x);
    case 11: return sinh(x);
    case 12: return cosh(x);
    case 13: return asinh(x);
    case 14: return acosh(x);
    case 15: return atanh(x);
    case 16: return expm1(x);
    default: return pfvm__ew_softplus(x);
    }
}

/* The specialized exp(-t) of erf and sigmoid against pfvm__ew_expf(-t)
 * over their ranges: the number of floats where they differ. */
static void check_expneg(uint64_t step)
{
    uint64_t u, bad = 0, bad18 = 0;
    for (u = 0; u <= 0x42d00000u; u += step) { /* 0 .. 104 */
        uint32_t b = (uint32_t)u;
        float t, a, c;
        memcpy(&t, &b, 4);
        a = pfvm__ew_expf(-t);
        c = pfvm__ew_expnegf(t);
        bad += memcmp(&a, &c, 4) != 0;
        if (t <= 18.0f) {
            c = pfvm__ew_expneg18f(t);
            bad18 += memcmp(&a, &c, 4) != 0;
        }
    }
    printf("expnegf differs from expf(-t) at %llu floats, expneg18f at %llu\n", (unsigned long long)bad,
           (unsigned long long)bad18);
}

/* The block kernel sigmoid runs in (hand-written for AVX-512 where the
 * CPU has it) against pfvm__ew_sigmoidf, float by float: the number of
 * floats whose bits differ (NaN results by class). */
static void check_sigmoid_kernel(uint64_t step)
{
    static float x[PFVM_FUSE_BLOCK], y[PFVM_FUSE_BLOCK];
    const float *s[1];
    uint64_t u = 0, bad = 0;
    int n, i;
    s[0] = x;
    while (u <= 0xffffffffull) {
        for (n = 0; n < PFVM_FUSE_BLOCK && u <= 0xffffffffull; n++, u += step) {
            uint32_t b = (uint32_t)u;
            memcpy(&x[n], &b, 4);
        }
        pfvm__ew_z_sigmoid(y, s, NULL);
        for (i = 0; i < n; i++) {
            float want = pfvm__ew_sigmoidf(x[i]);
            bad += (want != want) != (y[i] != y[i]) || (want == want && memcmp(&want, &y[i], 4) != 0);
        }
    }
    printf("sigmoid's block kernel (%s) differs at %llu floats\n", pfvm__have_avx512() ? "AVX-512" : "C",
           (unsigned long long)bad);
}

int main(int argc, char **argv)
{
    uint64_t step = argc > 1 ? strtoull(argv[1], NULL, 10) : 211, u;
    int k;
    check_expneg(step);
    check_sigmoid_kernel(step);
    for (k = 0; k < FNS; k++) {
        double worst = 0;
        float at = 0;
        uint64_t h = 1469598103934665603ull;
        for (u = 0; u <= 0xffffffffull; u += step) {
            uint32_t b = (uint32_t)u, r;
            float x, y;
            double e;
            memcpy(&x, &b, 4);
            y = f32(k, x);
            memcpy(&r, &y, 4);
            if (y != y)
                r = 0x7fc00000u;
            h = (h ^ r) * 1099511628211ull;
            e = ulps(y, f64(k, (double)x));
            if (e > worst) {
                worst = e;
                at = x;
            }
        }
        printf("%-8s worst %.3f ulp at %.9g  hash %016llx\n", names[k], worst, at, (unsigned long long)h);
    }
    return 0;
}
