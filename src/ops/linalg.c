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
/* pfvm__la_blocked reads a strided B with contiguous rows in place where
 * one block of A's rows uses it (measured on x86 only) */
#define PFVM__LA_B_INPLACE 1
#endif

/* 32-bit Arm (Cortex-M4F/M7 and other VFP cores; PFVM_LA_TILE4 forces it
 * elsewhere, for tests): a 4x4 tile in scalar registers (16 accumulators,
 * 4 of A, 4 of B: 24 of the FPU's 32 single registers), where the 4x16
 * tile would live in memory. */
#if !defined(PFVM__LA_X86) && (defined(PFVM_LA_TILE4) || (defined(__arm__) && !defined(__aarch64__)))
#define PFVM__LA_T4 1
#endif
/* Microcontrollers have no cache for blocks to stay in: the engine keeps
 * its small stack blocks and asks the executor for no workspace. */
#if !defined(PFVM_LA_WORKSPACE) && !defined(PFVM_LA_NO_WORKSPACE) && defined(__ARM_ARCH_PROFILE) && \
    __ARM_ARCH_PROFILE == 'M'
#define PFVM_LA_NO_WORKSPACE 1
#endif

#ifdef PFVM__LA_X86
#define PFVM__LA_MR_MAX 12  /* the tallest micro-kernel (AVX-512) */
#define PFVM__LA_NR_MAX 32  /* the widest micro-kernel (AVX-512): two panels */
#else
#define PFVM__LA_MR_MAX 4
#define PFVM__LA_NR_MAX PFVM_LA_NB
#endif
#define PFVM__LA_MR_MAX_ALL 12 /* the tallest kernel of any build (a zero bias per row) */
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
 * start of the next panel when a kernel is wider than one packed panel.
 * Its store is the epilogue of the product (pfvm_la_epi) as it leaves the
 * registers: with bias, C's entries are not read but replaced,
 * c = fma(alpha, s, bias[r]) (the bits of C filled with the bias first);
 * with cl, each result is clamped as Clip or Relu does (pfvm__la_clamp1). */
typedef void (*pfvm__la_kern_fn)(int64_t kc, const float *ap, const float *bp, int64_t ldb, int64_t b1, float *c,
                                 int64_t ldc, float alpha, const float *bias, const float *cl);

/* v clamped to [cl[0], cl[1]]: cl[2] != 0 is Relu's form (x > lo ? x : lo:
 * NaN and -0 become lo), else Clip's (x < lo ? lo : x keeps them). */
static float pfvm__la_clamp1(float v, const float *cl)
{
    if (cl[2] != 0.0f)
        v = v > cl[0] ? v : cl[0];
    else
        v = v < cl[0] ? cl[0] : v;
    return v > cl[1] ? cl[1] : v;
}

/* The epilogue's clamp: only the fused-loop engine's Conv sets one
 * (PFVM__STORE_CLAMP, src/ops/fused.h), so a PFVM_NO_FUSION build leaves the
 * clamp passes out (tests/test_gemm.c sets one directly, in other builds). */
#ifndef PFVM_NO_FUSION
#define PFVM__LA_CL(e) ((e)->cl)
#else
#define PFVM__LA_CL(e) ((void)(e), (const float *)NULL)
#endif
/* The epilogue's residual (pfvm_la_epi.res): PFVM__STORE_RESIDUAL builds
 * only (src/ops/fused.h), so microcontrollers carry none of its code. */
#ifdef PFVM__STORE_RESIDUAL
#define PFVM__LA_RES(e) ((e)->res)
#else
#define PFVM__LA_RES(e) ((void)(e), (const float *)NULL)
#endif
/* The epilogue's SiLU (pfvm_la_epi.silu): PFVM__STORE_SILU builds only. */
#ifdef PFVM__STORE_SILU
#define PFVM__LA_SILU(e) ((e)->silu)
#else
#define PFVM__LA_SILU(e) ((void)(e), 0)
#endif

/* The bias of rows that have none: the epilogue's zero start. */
static const float pfvm__la_zero_bias[PFVM__LA_MR_MAX_ALL] = {0.0f};

typedef struct pfvm__la_kern {
    int mr, nr;
    pfvm__la_kern_fn fn;
    pfvm__la_kern_fn fn4; /* the first 4 rows of a strip only (for the last strip of A) */
    pfvm__la_kern_fn half; /* all rows, the first nr/2 columns only (NULL: none) */
    pfvm__la_kern_fn half4; /* the first 4 rows and nr/2 columns (with half) */
    pfvm__la_kern_fn quarter, quarter4; /* as half and half4 for nr/4 columns (NULL: none) */
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

#ifndef PFVM__LA_T4
/* The portable micro-kernel: fixed trip counts, which compilers keep in
 * (vector) registers. */
static void pfvm__la_kern_c(int64_t kc, const float *ap, const float *bp, int64_t ldb, int64_t b1, float *c,
                            int64_t ldc, float alpha, const float *bias, const float *cl)
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
        for (j = 0; j < PFVM__LA_PNR; j++) {
            float v = PFVM__LA_FMA(alpha, acc[r][j], bias ? bias[r] : c[r * ldc + j]);
            c[r * ldc + j] = cl ? pfvm__la_clamp1(v, cl) : v;
        }
}
#endif

#ifdef PFVM__LA_T4
/* The 4x4 register tile, spelled out: -Os unrolls no loops, and an array
 * of accumulators would live on the stack. Indices are 32-bit (pointer
 * steps), so a 32-bit core does no 64-bit arithmetic in the loop. */
#define PFVM__LA_T4_DECL                                                      \
    float c00 = 0, c01 = 0, c02 = 0, c03 = 0, c10 = 0, c11 = 0, c12 = 0, c13 = 0; \
    float c20 = 0, c21 = 0, c22 = 0, c23 = 0, c30 = 0, c31 = 0, c32 = 0, c33 = 0;
#define PFVM__LA_T4_ROW(r)                      \
    c##r##0 = PFVM__LA_FMA(a##r, b0, c##r##0); \
    c##r##1 = PFVM__LA_FMA(a##r, b1, c##r##1); \
    c##r##2 = PFVM__LA_FMA(a##r, b2, c##r##2); \
    c##r##3 = PFVM__LA_FMA(a##r, b3, c##r##3);
#define PFVM__LA_T4_STEP                                              \
    float b0 = bp[0], b1 = bp[1], b2 = bp[2], b3 = bp[3];             \
    PFVM__LA_T4_ROW(0) PFVM__LA_T4_ROW(1) PFVM__LA_T4_ROW(2) PFVM__LA_T4_ROW(3)
#define PFVM__LA_T4_STORE1(r)                       \
    c[0] = PFVM__LA_FMA(alpha, c##r##0, c[0]);      \
    c[1] = PFVM__LA_FMA(alpha, c##r##1, c[1]);      \
    c[2] = PFVM__LA_FMA(alpha, c##r##2, c[2]);      \
    c[3] = PFVM__LA_FMA(alpha, c##r##3, c[3]);      \
    c += lc;
#define PFVM__LA_T4_STORE \
    PFVM__LA_T4_STORE1(0) PFVM__LA_T4_STORE1(1) PFVM__LA_T4_STORE1(2) PFVM__LA_T4_STORE1(3)

/* A packed strip of A (the kernel interface above). */
static void pfvm__la_kern_t4(int64_t kc, const float *ap, const float *bp, int64_t ldb, int64_t b1_, float *c,
                             int64_t ldc, float alpha, const float *bias, const float *cl)
{
    PFVM__LA_T4_DECL
    const float *end = ap + 4 * (ptrdiff_t)kc;
    float *c0 = c;
    ptrdiff_t lb = (ptrdiff_t)ldb, lc = (ptrdiff_t)ldc, r, j;
    (void)b1_; /* 4 columns: one panel */
    if (bias) /* the epilogue the simple way: C's tile holds the bias first */
        for (r = 0; r < 4; r++)
            for (j = 0; j < 4; j++)
                c0[r * lc + j] = bias[r];
    if (kc > 0)
        do { /* the test at the bottom only: -Os would branch twice per step */
            float a0 = ap[0], a1 = ap[1], a2 = ap[2], a3 = ap[3];
            PFVM__LA_T4_STEP
            ap += 4;
            bp += lb;
        } while (ap < end);
    PFVM__LA_T4_STORE
    if (cl)
        for (r = 0; r < 4; r++)
            for (j = 0; j < 4; j++)
                c0[r * lc + j] = pfvm__la_clamp1(c0[r * lc + j], cl);
}

/* The epilogue of pfvm__la_kern_t4a's row r as it leaves the registers:
 * C's entries (bias NULL) or bias[r] plus alpha x the sums, then cl (NULL:
 * none; Relu with no upper bound: one compare a value). The bits of C
 * filled with the bias, the product, then pfvm__la_epi_clamp. */
#define PFVM__LA_T4E_ROW(r)                                                                                     \
    {                                                                                                          \
        float q0, q1, q2, q3;                                                                                  \
        if (bias)                                                                                              \
            q0 = q1 = q2 = q3 = bias[r];                                                                       \
        else                                                                                                   \
            q0 = c[0], q1 = c[1], q2 = c[2], q3 = c[3];                                                        \
        q0 = PFVM__LA_FMA(alpha, c##r##0, q0);                                                                 \
        q1 = PFVM__LA_FMA(alpha, c##r##1, q1);                                                                 \
        q2 = PFVM__LA_FMA(alpha, c##r##2, q2);                                                                 \
        q3 = PFVM__LA_FMA(alpha, c##r##3, q3);                                                                 \
        if (relu) {                                                                                            \
            q0 = q0 > f ? q0 : f;                                                                              \
            q1 = q1 > f ? q1 : f;                                                                              \
            q2 = q2 > f ? q2 : f;                                                                              \
            q3 = q3 > f ? q3 : f;                                                                              \
        } else if (cl) {                                                                                       \
            q0 = pfvm__la_clamp1(q0, cl);                                                                      \
            q1 = pfvm__la_clamp1(q1, cl);                                                                      \
            q2 = pfvm__la_clamp1(q2, cl);                                                                      \
            q3 = pfvm__la_clamp1(q3, cl);                                                                      \
        }                                                                                                      \
        c[0] = q0, c[1] = q1, c[2] = q2, c[3] = q3;                                                            \
        c += lc;                                                                                               \
    }

/* The step over K of pfvm__la_kern_t4a: C, or on a Cortex-M4/M7 with
 * single-precision FMA (Thumb-2, VFPv4 or later) the same fused
 * multiply-adds in the same order in assembly, B's 4 values in one vldm:
 * 24 instructions per 16 multiply-adds where gcc -Os makes 28. */
#if defined(__GNUC__) && defined(__thumb2__) && defined(__ARM_FP) && (__ARM_FP & 4) && defined(__ARM_FEATURE_FMA) && \
    !defined(PFVM_NO_ASM)
#define PFVM__LA_T4_F4(r, ar)                                                                                   \
    "vfma.f32 %[c" #r "0], " ar ", s20\n\t"                                                                     \
    "vfma.f32 %[c" #r "1], " ar ", s21\n\t"                                                                     \
    "vfma.f32 %[c" #r "2], " ar ", s22\n\t"                                                                     \
    "vfma.f32 %[c" #r "3], " ar ", s23\n\t"
/* the accumulators are outputs only, zeroed inside (an in-out operand
 * counts twice against gcc's 30) */
#define PFVM__LA_T4_O4(r) [c##r##0] "=&t"(c##r##0), [c##r##1] "=&t"(c##r##1), [c##r##2] "=&t"(c##r##2), [c##r##3] "=&t"(c##r##3)
#define PFVM__LA_T4_Z4(r) \
    "vmov %[c" #r "0], %[z]\n\tvmov %[c" #r "1], %[z]\n\tvmov %[c" #r "2], %[z]\n\tvmov %[c" #r "3], %[z]\n\t"
#define PFVM__LA_T4A_LOOP                                                                                       \
    __asm__ volatile(PFVM__LA_T4_Z4(0) PFVM__LA_T4_Z4(1) PFVM__LA_T4_Z4(2) PFVM__LA_T4_Z4(3)                   \
                     "cmp %[p0], %[end]\n\t"                                                                  \
                     "bhs 2f\n"                                                                                \
                     "1:\n\t"                                                                                  \
                     "vldmia %[p0]!, {s16}\n\t"                                                                \
                     "vldmia %[p1]!, {s17}\n\t"                                                                \
                     "vldmia %[p2]!, {s18}\n\t"                                                                \
                     "vldmia %[p3]!, {s19}\n\t"                                                                \
                     "vldmia %[bp], {s20-s23}\n\t"                                                             \
                     "add %[bp], %[bp], %[lb], lsl #2\n\t" PFVM__LA_T4_F4(0, "s16") PFVM__LA_T4_F4(1, "s17") \
                         PFVM__LA_T4_F4(2, "s18") PFVM__LA_T4_F4(3, "s19") "cmp %[p0], %[end]\n\t"                           \
                                                             "blo 1b\n"                                        \
                                                             "2:\n\t"                                          \
                     : [p0] "+r"(p0), [p1] "+r"(p1), [p2] "+r"(p2), [p3] "+r"(p3), [bp] "+r"(bp),            \
                       PFVM__LA_T4_O4(0), PFVM__LA_T4_O4(1), PFVM__LA_T4_O4(2), PFVM__LA_T4_O4(3)              \
                     : [lb] "r"(lb), [end] "r"(end), [z] "r"(0)                                                \
                     : "s16", "s17", "s18", "s19", "s20", "s21", "s22", "s23", "cc", "memory");
#define PFVM__LA_T4A_DECL float c00, c01, c02, c03, c10, c11, c12, c13, c20, c21, c22, c23, c30, c31, c32, c33;
#define PFVM__LA_T4_ASM 1 /* pfvm__la_kern_t4p too */
#else
#define PFVM__LA_T4A_DECL PFVM__LA_T4_DECL
#define PFVM__LA_T4A_LOOP                                                                                       \
    if (kc > 0)                                                                                                \
        do {                                                                                                   \
        float a0 = *p0++, a1 = *p1++, a2 = *p2++, a3 = *p3++;                                                  \
        PFVM__LA_T4_STEP                                                                                       \
        bp += lb;                                                                                              \
    } while (p0 < end);
#endif

/* Four rows of A read where they are (as_m apart, contiguous along K);
 * bias and cl: the epilogue (PFVM__LA_T4E_ROW). */
static void pfvm__la_kern_t4a(ptrdiff_t kc, const float *a, ptrdiff_t as_m, const float *bp, ptrdiff_t lb, float *c,
                              ptrdiff_t lc, float alpha, const float *bias, const float *cl)
{
    PFVM__LA_T4A_DECL
    const float *p0 = a, *p1 = p0 + as_m, *p2 = p1 + as_m, *p3 = p2 + as_m, *end = a + kc;
    const int relu = cl && cl[2] != 0.0f && cl[1] == INFINITY;
    const float f = cl ? cl[0] : 0.0f;
    PFVM__LA_T4A_LOOP
    PFVM__LA_T4E_ROW(0) PFVM__LA_T4E_ROW(1) PFVM__LA_T4E_ROW(2) PFVM__LA_T4E_ROW(3)
}
#undef PFVM__LA_T4A_LOOP
#undef PFVM__LA_T4A_DECL
#undef PFVM__LA_T4E_ROW

/* Four rows of A (as_m apart) times four columns of B (sn apart), both
 * contiguous along K: a transposed B (Gemm's transB, MatMul of a
 * transposed view) read where it is, no panel packed. The same fused
 * multiply-adds in the same order as pfvm__la_kern_t4a on a packed panel. */
static void pfvm__la_kern_t4d(ptrdiff_t kc, const float *a, ptrdiff_t as_m, const float *b, ptrdiff_t sn, float *c,
                              ptrdiff_t lc, float alpha)
{
    PFVM__LA_T4_DECL
    const float *p0 = a, *p1 = p0 + as_m, *p2 = p1 + as_m, *p3 = p2 + as_m, *end = a + kc;
    const float *q0 = b, *q1 = q0 + sn, *q2 = q1 + sn, *q3 = q2 + sn;
    if (kc > 0)
        do {
            float a0 = *p0++, a1 = *p1++, a2 = *p2++, a3 = *p3++;
            float b0 = *q0++, b1 = *q1++, b2 = *q2++, b3 = *q3++;
            PFVM__LA_T4_ROW(0) PFVM__LA_T4_ROW(1) PFVM__LA_T4_ROW(2) PFVM__LA_T4_ROW(3)
        } while (p0 < end);
    PFVM__LA_T4_STORE
}

#ifdef PFVM__LA_T4_ASM
/* pfvm__la_kern_t4d with A's 4 rows packed (ap[4p + r]: one vldm a step;
 * eight pointers would not fit the asm's operands, and gcc -Os spills four
 * of them: 42 instructions per 16 multiply-adds, 23 here). The same fused
 * multiply-adds in the same order: the same bits. Inlined into both its
 * callers (a call a tile: 16,000 more instructions in dscnn's run). */
__attribute__((always_inline)) static inline void pfvm__la_kern_t4p(ptrdiff_t kc, const float *ap, const float *b,
                                                                   ptrdiff_t sn, float *c, ptrdiff_t lc, float alpha)
{
    float c00, c01, c02, c03, c10, c11, c12, c13, c20, c21, c22, c23, c30, c31, c32, c33;
    const float *q0 = b, *q1 = q0 + sn, *q2 = q1 + sn, *q3 = q2 + sn, *end = ap + 4 * kc;
    __asm__ volatile(PFVM__LA_T4_Z4(0) PFVM__LA_T4_Z4(1) PFVM__LA_T4_Z4(2) PFVM__LA_T4_Z4(3)
                     "cmp %[ap], %[end]\n\t"
                     "bhs 2f\n"
                     "1:\n\t"
                     "vldmia %[ap]!, {s16-s19}\n\t"
                     "vldmia %[q0]!, {s20}\n\t"
                     "vldmia %[q1]!, {s21}\n\t"
                     "vldmia %[q2]!, {s22}\n\t"
                     "vldmia %[q3]!, {s23}\n\t" PFVM__LA_T4_F4(0, "s16") PFVM__LA_T4_F4(1, "s17")
                         PFVM__LA_T4_F4(2, "s18") PFVM__LA_T4_F4(3, "s19") "cmp %[ap], %[end]\n\t"
                                                                             "blo 1b\n"
                                                                             "2:\n\t"
                     : [ap] "+r"(ap), [q0] "+r"(q0), [q1] "+r"(q1), [q2] "+r"(q2), [q3] "+r"(q3), PFVM__LA_T4_O4(0),
                       PFVM__LA_T4_O4(1), PFVM__LA_T4_O4(2), PFVM__LA_T4_O4(3)
                     : [end] "r"(end), [z] "r"(0)
                     : "s16", "s17", "s18", "s19", "s20", "s21", "s22", "s23", "cc", "memory");
    PFVM__LA_T4_STORE
}

/* A's rows i..i+3, steps 0..kc of K (contiguous), as pfvm__la_kern_t4p
 * reads them: a step's 4 values (one from each row, post-incremented) in
 * one vstm, 7 instructions a step (13 in gcc -Os's loop: on the mlp's
 * two products 52 steps). Inlined: a call a strip cost dscnn 11,600
 * instructions. */
__attribute__((always_inline)) static inline void pfvm__la_pack_a4(ptrdiff_t kc, const float *a, ptrdiff_t as_m, float *d)
{
    const float *a1 = a + as_m, *a2 = a1 + as_m, *a3 = a2 + as_m, *end = d + 4 * kc;
    __asm__ volatile("cmp %[d], %[end]\n\t"
                     "bhs 2f\n"
                     "1:\n\t"
                     "vldmia %[a0]!, {s0}\n\t"
                     "vldmia %[a1]!, {s1}\n\t"
                     "vldmia %[a2]!, {s2}\n\t"
                     "vldmia %[a3]!, {s3}\n\t"
                     "vstmia %[d]!, {s0-s3}\n\t"
                     "cmp %[d], %[end]\n\t"
                     "blo 1b\n"
                     "2:\n\t"
                     : [a0] "+r"(a), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [d] "+r"(d)
                     : [end] "r"(end)
                     : "s0", "s1", "s2", "s3", "cc", "memory");
}

#ifdef PFVM_LA_NO_WORKSPACE
/* pfvm__la_kern_t4p for one column of B (b: contiguous along K): the
 * fused multiply-adds of pfvm__la_kern_t4d1 in the same order (the same
 * bits) with A's rows packed (8 instructions a step, 18 there). */
static void pfvm__la_kern_t4p1(ptrdiff_t kc, const float *ap, const float *b, float *c, ptrdiff_t lc, float alpha)
{
    float c0, c1, c2, c3;
    const float *end = ap + 4 * kc;
    __asm__ volatile("vmov %[c0], %[z]\n\tvmov %[c1], %[z]\n\tvmov %[c2], %[z]\n\tvmov %[c3], %[z]\n\t"
                     "cmp %[ap], %[end]\n\t"
                     "bhs 2f\n"
                     "1:\n\t"
                     "vldmia %[ap]!, {s16-s19}\n\t"
                     "vldmia %[b]!, {s20}\n\t"
                     "vfma.f32 %[c0], s16, s20\n\t"
                     "vfma.f32 %[c1], s17, s20\n\t"
                     "vfma.f32 %[c2], s18, s20\n\t"
                     "vfma.f32 %[c3], s19, s20\n\t"
                     "cmp %[ap], %[end]\n\t"
                     "blo 1b\n"
                     "2:\n\t"
                     : [ap] "+r"(ap), [b] "+r"(b), [c0] "=&t"(c0), [c1] "=&t"(c1), [c2] "=&t"(c2), [c3] "=&t"(c3)
                     : [end] "r"(end), [z] "r"(0)
                     : "s16", "s17", "s18", "s19", "s20", "cc", "memory");
    c[0] = PFVM__LA_FMA(alpha, c0, c[0]);
    c[lc] = PFVM__LA_FMA(alpha, c1, c[lc]);
    c[2 * lc] = PFVM__LA_FMA(alpha, c2, c[2 * lc]);
    c[3 * lc] = PFVM__LA_FMA(alpha, c3, c[3 * lc]);
}

/* C += alpha * A * B for a transposed B (columns contiguous along K: Gemm
 * with transB, the mlp's), rows 0..m4 of A (a multiple of 4), on 32-bit
 * Arm without a workspace: what pfvm__la_t4_strided computed for them
 * (the same fused multiply-adds into each entry in the same order: the
 * same bits), the last columns (fewer than 4) from A's packed rows too
 * (pfvm__la_kern_t4p1). A frame of its own: its 2 KB of packed A only on
 * the stack of the products that take it. */
__attribute__((noinline)) static void pfvm__la_t4_trows_run(ptrdiff_t m4, ptrdiff_t n, ptrdiff_t k, float alpha,
                                                     const float *a, ptrdiff_t sm, const float *b, ptrdiff_t sn,
                                                     float *c, ptrdiff_t lc)
{
    float apack[4 * PFVM_LA_KC];
    ptrdiff_t pc, i, j, kc, n4 = n / 4 * 4;
    for (pc = 0; pc < k; pc += kc) {
        kc = k - pc < PFVM_LA_KC ? k - pc : PFVM_LA_KC;
        for (i = 0; i < m4; i += 4) {
            float *ci = c + i * lc;
            const float *bp = b + pc;
            pfvm__la_pack_a4(kc, a + i * sm + pc, sm, apack);
            for (j = 0; j < n4; j += 4)
                pfvm__la_kern_t4p(kc, apack, bp + j * sn, sn, ci + j, lc, alpha);
            for (; j < n; j++)
                pfvm__la_kern_t4p1(kc, apack, bp + j * sn, ci + j, lc, alpha);
        }
    }
}

/* The whole product that way when m is a multiple of 4 (at least 4 rows
 * and 4 columns), with 32-bit arguments and none of
 * pfvm__la_sgemm_in's setup (about 230 instructions a product): 0 when
 * not taken. */
static int pfvm__la_t4_trows(int64_t m, int64_t n, int64_t k, float alpha, const float *a, int64_t as_m, int64_t as_k,
                             pfvm_la_pack_fn pack, const void *user, float *c, int64_t ldc)
{
    const pfvm_la_strided *b = (const pfvm_la_strided *)user;
    if (pack != pfvm_la_pack_strided || as_k != 1 || b->s_k != 1 || b->s_n == 1 || m < 4 || m % 4 || n < 4 ||
        k < 1 || m > PTRDIFF_MAX / 4 || n > PTRDIFF_MAX / 4 || k > PTRDIFF_MAX / 4)
        return 0;
    pfvm__la_t4_trows_run((ptrdiff_t)m, (ptrdiff_t)n, (ptrdiff_t)k, alpha, a, (ptrdiff_t)as_m, b->data,
                          (ptrdiff_t)b->s_n, c, (ptrdiff_t)ldc);
    return 1;
}

#if !defined(PFVM_LEAN_KERNELS) && !defined(PFVM_SMALL_KERNELS)
/* Gemm with a small constant transposed B on 32-bit Arm: B's columns
 * packed in fours at bind (Gemm's prepare hook, pfvm__la_prep_bpack), so
 * that one vldm reads B's 4 values of a step, two steps a loop (A's 8
 * values and B's 8 in two vldm: 36 instructions per 32 multiply-adds,
 * 23 per 16 with B read in place), and the bias row added as the tile
 * leaves the registers (no fill of C before). */
#define PFVM__LA_BPACK 1

/* Rows 4 (A packed: ap[4p + r]) x columns 4 (B packed: bp[4p + j]), kc
 * steps: c[r * lc + j] = bias[j] + alpha x the sum of the fused
 * multiply-adds from 0 in K's order (the same bits as C filled with the
 * bias row, then pfvm__la_kern_t4p's epilogue). */
__attribute__((always_inline)) static inline void pfvm__la_kern_bp(ptrdiff_t kc, const float *ap, const float *bp,
                                                                  float *c, ptrdiff_t lc, float alpha,
                                                                  const float *bias)
{
    float c00, c01, c02, c03, c10, c11, c12, c13, c20, c21, c22, c23, c30, c31, c32, c33;
    const float *end2 = ap + 8 * (kc / 2), *end = ap + 4 * kc;
    float b0, b1, b2, b3;
    __asm__ volatile(PFVM__LA_T4_Z4(0) PFVM__LA_T4_Z4(1) PFVM__LA_T4_Z4(2) PFVM__LA_T4_Z4(3)
                     "cmp %[ap], %[end2]\n\t"
                     "bhs 2f\n"
                     "1:\n\t"
                     "vldmia %[ap]!, {s16-s23}\n\t"
                     "vldmia %[bp]!, {s24-s31}\n\t"
                     "vfma.f32 %[c00], s16, s24\n\tvfma.f32 %[c01], s16, s25\n\t"
                     "vfma.f32 %[c02], s16, s26\n\tvfma.f32 %[c03], s16, s27\n\t"
                     "vfma.f32 %[c10], s17, s24\n\tvfma.f32 %[c11], s17, s25\n\t"
                     "vfma.f32 %[c12], s17, s26\n\tvfma.f32 %[c13], s17, s27\n\t"
                     "vfma.f32 %[c20], s18, s24\n\tvfma.f32 %[c21], s18, s25\n\t"
                     "vfma.f32 %[c22], s18, s26\n\tvfma.f32 %[c23], s18, s27\n\t"
                     "vfma.f32 %[c30], s19, s24\n\tvfma.f32 %[c31], s19, s25\n\t"
                     "vfma.f32 %[c32], s19, s26\n\tvfma.f32 %[c33], s19, s27\n\t"
                     "vfma.f32 %[c00], s20, s28\n\tvfma.f32 %[c01], s20, s29\n\t"
                     "vfma.f32 %[c02], s20, s30\n\tvfma.f32 %[c03], s20, s31\n\t"
                     "vfma.f32 %[c10], s21, s28\n\tvfma.f32 %[c11], s21, s29\n\t"
                     "vfma.f32 %[c12], s21, s30\n\tvfma.f32 %[c13], s21, s31\n\t"
                     "vfma.f32 %[c20], s22, s28\n\tvfma.f32 %[c21], s22, s29\n\t"
                     "vfma.f32 %[c22], s22, s30\n\tvfma.f32 %[c23], s22, s31\n\t"
                     "vfma.f32 %[c30], s23, s28\n\tvfma.f32 %[c31], s23, s29\n\t"
                     "vfma.f32 %[c32], s23, s30\n\tvfma.f32 %[c33], s23, s31\n\t"
                     "cmp %[ap], %[end2]\n\t"
                     "blo 1b\n"
                     "2:\n\t"
                     "cmp %[ap], %[end]\n\t"
                     "bhs 3f\n\t"
                     "vldmia %[ap]!, {s16-s19}\n\t"
                     "vldmia %[bp]!, {s24-s27}\n\t"
                     "vfma.f32 %[c00], s16, s24\n\tvfma.f32 %[c01], s16, s25\n\t"
                     "vfma.f32 %[c02], s16, s26\n\tvfma.f32 %[c03], s16, s27\n\t"
                     "vfma.f32 %[c10], s17, s24\n\tvfma.f32 %[c11], s17, s25\n\t"
                     "vfma.f32 %[c12], s17, s26\n\tvfma.f32 %[c13], s17, s27\n\t"
                     "vfma.f32 %[c20], s18, s24\n\tvfma.f32 %[c21], s18, s25\n\t"
                     "vfma.f32 %[c22], s18, s26\n\tvfma.f32 %[c23], s18, s27\n\t"
                     "vfma.f32 %[c30], s19, s24\n\tvfma.f32 %[c31], s19, s25\n\t"
                     "vfma.f32 %[c32], s19, s26\n\tvfma.f32 %[c33], s19, s27\n"
                     "3:\n\t"
                     : [ap] "+r"(ap), [bp] "+r"(bp), PFVM__LA_T4_O4(0), PFVM__LA_T4_O4(1), PFVM__LA_T4_O4(2),
                       PFVM__LA_T4_O4(3)
                     : [end2] "r"(end2), [end] "r"(end), [z] "r"(0)
                     : "s16", "s17", "s18", "s19", "s20", "s21", "s22", "s23", "s24", "s25", "s26", "s27", "s28",
                       "s29", "s30", "s31", "cc", "memory");
    /* the bias read here, after the asm: in registers the loop left free
     * (read before, it lives on the stack); alpha 1 (as models have it):
     * a + b, the bits of fma(1, a, b), one instruction */
    b0 = bias[0], b1 = bias[1], b2 = bias[2], b3 = bias[3];
#define PFVM__LA_BP_ROW(r, OP)                                                                                 \
    c[0] = OP(alpha, c##r##0, b0);                                                                             \
    c[1] = OP(alpha, c##r##1, b1);                                                                             \
    c[2] = OP(alpha, c##r##2, b2);                                                                             \
    c[3] = OP(alpha, c##r##3, b3);                                                                             \
    c += lc;
#define PFVM__LA_BP_ADD(al, x, y) ((x) + (y))
    if (alpha == 1.0f) {
        PFVM__LA_BP_ROW(0, PFVM__LA_BP_ADD)
        PFVM__LA_BP_ROW(1, PFVM__LA_BP_ADD) PFVM__LA_BP_ROW(2, PFVM__LA_BP_ADD) PFVM__LA_BP_ROW(3, PFVM__LA_BP_ADD)
    } else {
        PFVM__LA_BP_ROW(0, PFVM__LA_FMA)
        PFVM__LA_BP_ROW(1, PFVM__LA_FMA) PFVM__LA_BP_ROW(2, PFVM__LA_FMA) PFVM__LA_BP_ROW(3, PFVM__LA_FMA)
    }
#undef PFVM__LA_BP_ADD
#undef PFVM__LA_BP_ROW
}

/* C = bias row + alpha * A * B for rows 0..m4 (a multiple of 4) of A (sm
 * apart, contiguous along K), kc <= PFVM_LA_KC steps, B's first n4
 * columns packed (bp: panel q at bp + 4 kc q), the last ones (fewer than
 * 4) read where they are (b, sn apart) by pfvm__la_kern_t4p1 into C
 * filled with the bias. The same fused multiply-adds in the same order
 * as pfvm__la_t4_trows_run on C filled with the bias: the same bits. */
__attribute__((noinline)) static void pfvm__la_bp_run(ptrdiff_t m4, ptrdiff_t n, ptrdiff_t kc, float alpha,
                                                      const float *a, ptrdiff_t sm, const float *bp, const float *b,
                                                      ptrdiff_t sn, float *c, ptrdiff_t lc, const float *bias)
{
    float apack[4 * PFVM_LA_KC];
    ptrdiff_t i, j, r, n4 = n / 4 * 4;
    for (i = 0; i < m4; i += 4) {
        float *ci = c + i * lc;
        pfvm__la_pack_a4(kc, a + i * sm, sm, apack);
        for (j = 0; j < n4; j += 4)
            pfvm__la_kern_bp(kc, apack, bp + j * kc, ci + j, lc, alpha, bias + j);
        for (; j < n; j++) {
            for (r = 0; r < 4; r++)
                ci[r * lc + j] = bias[j];
            pfvm__la_kern_t4p1(kc, apack, b + j * sn, ci + j, lc, alpha);
        }
    }
}
#endif
#endif
#endif

/* pfvm__la_kern_t4d for one column of B (the last ones of a transposed B,
 * fewer than 4): the same fused multiply-adds in the same order as
 * pfvm__la_kern_t4a on a packed panel, with no panel packed (zero-filled
 * to 16 columns) nor tile copied. */
static void pfvm__la_kern_t4d1(ptrdiff_t kc, const float *a, ptrdiff_t as_m, const float *b, float *c, ptrdiff_t lc,
                               float alpha)
{
    float c0 = 0, c1 = 0, c2 = 0, c3 = 0;
    const float *p0 = a, *p1 = p0 + as_m, *p2 = p1 + as_m, *p3 = p2 + as_m, *end = a + kc;
    if (kc > 0)
        do {
            float bv = *b++;
            c0 = PFVM__LA_FMA(*p0++, bv, c0);
            c1 = PFVM__LA_FMA(*p1++, bv, c1);
            c2 = PFVM__LA_FMA(*p2++, bv, c2);
            c3 = PFVM__LA_FMA(*p3++, bv, c3);
        } while (p0 < end);
    c[0] = PFVM__LA_FMA(alpha, c0, c[0]);
    c[lc] = PFVM__LA_FMA(alpha, c1, c[lc]);
    c[2 * lc] = PFVM__LA_FMA(alpha, c2, c[2 * lc]);
    c[3 * lc] = PFVM__LA_FMA(alpha, c3, c[3 * lc]);
}
#undef PFVM__LA_T4_DECL
#undef PFVM__LA_T4_ROW
#undef PFVM__LA_T4_STEP
#undef PFVM__LA_T4_STORE1
#undef PFVM__LA_T4_STORE
#endif

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
#define PFVM__LA_CLAMP(v) MIN(hi, relu ? MAX(v, lo) : MAX(lo, v)) /* pfvm__la_clamp1's two forms */
#define PFVM__LA_STORE(r)                                     \
    {                                                         \
        float *cr = c + r * ldc;                              \
        V o0, o1;                                             \
        if (bias) {                                           \
            const V bv = SET1(bias[r]);                       \
            o0 = FMA(al, c##r##0, bv);                        \
            o1 = FMA(al, c##r##1, bv);                        \
        } else {                                              \
            o0 = FMA(al, c##r##0, LOAD(cr));                  \
            o1 = FMA(al, c##r##1, LOAD(cr + W));              \
        }                                                     \
        if (cl) {                                             \
            o0 = PFVM__LA_CLAMP(o0);                          \
            o1 = PFVM__LA_CLAMP(o1);                          \
        }                                                     \
        STORE(cr, o0);                                        \
        STORE(cr + W, o1);                                    \
    }
/* The epilogue's clamp bounds (read once per tile). */
#define PFVM__LA_EPI_DECL                                            \
    const V lo = SET1(cl ? cl[0] : 0.0f), hi = SET1(cl ? cl[1] : 0.0f); \
    const int relu = cl && cl[2] != 0.0f;
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
        PFVM__LA_EPI_DECL                                 \
        ROWS(PFVM__LA_PREFETCH)                           \
        ROWS(PFVM__LA_DECL)                               \
        for (p = 0; p < kc; p++, ap += MR, bp += ldb) {   \
            const V b0 = LOAD(bp);                        \
            const V b1v = LOAD(bp + b1);                  \
            ROWS(PFVM__LA_STEP)                           \
        }                                                 \
        ROWS(PFVM__LA_STORE)                              \
    }
/* The half-width tile (one vector per row) for the last columns of C
 * when they fill half a tile or less: the whole tile would do twice the
 * work there. */
#define PFVM__LA_DECL_H(r) V c##r##0 = ZERO();
#define PFVM__LA_STEP_H(r) c##r##0 = FMA(SET1(ap[r]), b0, c##r##0);
#define PFVM__LA_STORE_H(r)                                              \
    {                                                                    \
        float *cr = c + r * ldc;                                         \
        V o0 = FMA(al, c##r##0, bias ? SET1(bias[r]) : LOAD(cr));        \
        if (cl)                                                          \
            o0 = PFVM__LA_CLAMP(o0);                                     \
        STORE(cr, o0);                                                   \
    }
#define PFVM__LA_BODY_H(ROWS, MR)                         \
    {                                                     \
        const V al = SET1(alpha);                         \
        int64_t p;                                        \
        PFVM__LA_EPI_DECL                                 \
        (void)b1;                                         \
        ROWS(PFVM__LA_DECL_H)                             \
        for (p = 0; p < kc; p++, ap += MR, bp += ldb) {   \
            const V b0 = LOAD(bp);                        \
            ROWS(PFVM__LA_STEP_H)                         \
        }                                                 \
        ROWS(PFVM__LA_STORE_H)                            \
    }
/* A micro-kernel's head (pfvm__la_kern_fn), compiled for target tgt. */
#define PFVM__LA_KERN(tgt, name)                                                                                \
    __attribute__((target(tgt))) static void name(int64_t kc, const float *ap, const float *bp, int64_t ldb,     \
                                                  int64_t b1, float *c, int64_t ldc, float alpha, const float *bias, \
                                                  const float *cl)
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
#define MIN _mm256_min_ps
#define MAX _mm256_max_ps
PFVM__LA_KERN("avx2,fma", pfvm__la_kern_avx2)
PFVM__LA_BODY(PFVM__LA_ROWS6, 6)
PFVM__LA_KERN("avx2,fma", pfvm__la_kern_avx2_4)
PFVM__LA_BODY(PFVM__LA_ROWS4, 6)
PFVM__LA_KERN("avx2,fma", pfvm__la_kern_avx2_h)
PFVM__LA_BODY_H(PFVM__LA_ROWS6, 6)
PFVM__LA_KERN("avx2,fma", pfvm__la_kern_avx2_h4)
PFVM__LA_BODY_H(PFVM__LA_ROWS4, 6)
#ifdef PFVM_AVX512_KERNELS
/* The AVX-512 tile's last 8 columns or fewer (a 7x7 plane's 49th, a 14x14
 * one's last 4): one 8-float vector per row, a quarter of the whole
 * tile's work (strips of 12 rows; AVX-512 CPUs have AVX2). */
PFVM__LA_KERN("avx2,fma", pfvm__la_kern_avx512_q)
PFVM__LA_BODY_H(PFVM__LA_ROWS12, 12)
PFVM__LA_KERN("avx2,fma", pfvm__la_kern_avx512_q4)
PFVM__LA_BODY_H(PFVM__LA_ROWS4, 12)
#endif
#undef V
#undef W
#undef ZERO
#undef SET1
#undef FMA
#undef LOAD
#undef STORE
#undef MIN
#undef MAX

#ifdef PFVM_AVX512_KERNELS
#define V __m512
#define W 16
#define ZERO _mm512_setzero_ps
#define SET1 _mm512_set1_ps
#define FMA _mm512_fmadd_ps
#define LOAD _mm512_loadu_ps
#define STORE _mm512_storeu_ps
#define MIN _mm512_min_ps
#define MAX _mm512_max_ps
PFVM__LA_KERN("avx512f", pfvm__la_kern_avx512)
PFVM__LA_BODY(PFVM__LA_ROWS12, 12)
PFVM__LA_KERN("avx512f", pfvm__la_kern_avx512_4)
PFVM__LA_BODY(PFVM__LA_ROWS4, 12)
/* The last 16 columns or fewer of a product (a 14x14 plane's last 4, a
 * 28x28 one's last 16): one vector per row, half the whole tile's work. */
PFVM__LA_KERN("avx512f", pfvm__la_kern_avx512_h)
PFVM__LA_BODY_H(PFVM__LA_ROWS12, 12)
PFVM__LA_KERN("avx512f", pfvm__la_kern_avx512_h4)
PFVM__LA_BODY_H(PFVM__LA_ROWS4, 12)
#ifdef PFVM__LA_CONV_S1
/* The stride-1 convolution's kernels (pfvm_la_conv_s1): the AVX-512
 * kernel's tile (12 output channels x 32 output positions, A packed as
 * for the engine), B's rows read in place from the input instead of a
 * packed im2col panel: row p of B at the tile's position j is
 * xb[off[p] + j'] for j' < 32 (one input plane per channel, the tap's
 * shift folded into off[p]), and the lanes in the padding (or past the
 * output) are masked to zero by the tap's masks mk[2 * tap[p]], [.. + 1]
 * (the zeros the im2col would hold: the same products, the same bits).
 * Masked lanes are never read, so shifts before the plane or past the
 * tensor touch no memory. */
#define PFVM__LA_CV_BODY(ROWS, MR)                                          \
    {                                                                       \
        const V al = SET1(alpha);                                           \
        int64_t p;                                                          \
        PFVM__LA_EPI_DECL                                                   \
        ROWS(PFVM__LA_DECL)                                                 \
        for (p = 0; p < kc; p++, ap += MR) {                                \
            const float *bp = xb + off[p];                                  \
            const __mmask16 *mm = mk + 2 * tap[p];                          \
            const V b0 = _mm512_maskz_loadu_ps(mm[0], bp);                  \
            const V b1v = _mm512_maskz_loadu_ps(mm[1], bp + W);             \
            ROWS(PFVM__LA_STEP)                                             \
        }                                                                   \
        ROWS(PFVM__LA_STORE)                                                \
    }
typedef void (*pfvm__la_cv_fn)(int64_t kc, const float *ap, const float *xb, const ptrdiff_t *off,
                               const unsigned char *tap, const __mmask16 *mk, float *c, int64_t ldc, float alpha,
                               const float *bias, const float *cl);
__attribute__((target("avx512f"))) static void pfvm__la_cv_avx512(int64_t kc, const float *ap, const float *xb,
                                                                   const ptrdiff_t *off, const unsigned char *tap,
                                                                   const __mmask16 *mk, float *c, int64_t ldc,
                                                                   float alpha, const float *bias, const float *cl)
PFVM__LA_CV_BODY(PFVM__LA_ROWS12, 12)
__attribute__((target("avx512f"))) static void pfvm__la_cv_avx512_4(int64_t kc, const float *ap, const float *xb,
                                                                     const ptrdiff_t *off, const unsigned char *tap,
                                                                     const __mmask16 *mk, float *c, int64_t ldc,
                                                                     float alpha, const float *bias, const float *cl)
PFVM__LA_CV_BODY(PFVM__LA_ROWS4, 12)
#undef PFVM__LA_CV_BODY
#endif
#undef V
#undef W
#undef ZERO
#undef SET1
#undef FMA
#undef LOAD
#undef STORE
#undef MIN
#undef MAX
#endif
#endif

#ifdef PFVM__LA_X86
/* AVX2 and FMA (checked once; pfvm__la_pick asks first, before any thread
 * does). */
static int pfvm__la_have_avx2(void)
{
    static int have = -1;
    if (have < 0) {
        __builtin_cpu_init();
        have = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    }
    return have;
}

#endif

/* The micro-kernel for this CPU (checked once). */
static const pfvm__la_kern *pfvm__la_pick(void)
{
#ifdef PFVM__LA_T4
    static const pfvm__la_kern portable = {4, 4, pfvm__la_kern_t4, pfvm__la_kern_t4, NULL, NULL, NULL, NULL};
#else
    static const pfvm__la_kern portable = {PFVM__LA_PMR, PFVM__LA_PNR, pfvm__la_kern_c, pfvm__la_kern_c, NULL, NULL, NULL, NULL};
#endif
#ifdef PFVM__LA_X86
    static const pfvm__la_kern avx2 = {6, 16, pfvm__la_kern_avx2, pfvm__la_kern_avx2_4, pfvm__la_kern_avx2_h,
                                       pfvm__la_kern_avx2_h4, NULL, NULL};
    int have_avx2 = pfvm__la_have_avx2();
#ifdef PFVM_AVX512_KERNELS
    static const pfvm__la_kern avx512 = {12, 32, pfvm__la_kern_avx512, pfvm__la_kern_avx512_4,
                                          pfvm__la_kern_avx512_h, pfvm__la_kern_avx512_h4, pfvm__la_kern_avx512_q,
                                          pfvm__la_kern_avx512_q4};
    if (pfvm__have_avx512())
        return &avx512;
#endif
    if (have_avx2)
        return &avx2;
#endif
    return &portable;
}

#ifdef PFVM__LA_X86
/* An 8 x 8 transpose: o[j]'s element i is r[i]'s element j. Inlined into
 * the AVX2 and AVX-512 callers (its target is a subset of theirs). */
__attribute__((target("avx"))) static inline void pfvm__la_tr8(const __m256 *r, __m256 *o)
{
    __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
    __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
    __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
    __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
    __m256 s0 = _mm256_shuffle_ps(t0, t2, 0x44), s1 = _mm256_shuffle_ps(t0, t2, 0xee);
    __m256 s2 = _mm256_shuffle_ps(t1, t3, 0x44), s3 = _mm256_shuffle_ps(t1, t3, 0xee);
    __m256 s4 = _mm256_shuffle_ps(t4, t6, 0x44), s5 = _mm256_shuffle_ps(t4, t6, 0xee);
    __m256 s6 = _mm256_shuffle_ps(t5, t7, 0x44), s7 = _mm256_shuffle_ps(t5, t7, 0xee);
    o[0] = _mm256_permute2f128_ps(s0, s4, 0x20);
    o[1] = _mm256_permute2f128_ps(s1, s5, 0x20);
    o[2] = _mm256_permute2f128_ps(s2, s6, 0x20);
    o[3] = _mm256_permute2f128_ps(s3, s7, 0x20);
    o[4] = _mm256_permute2f128_ps(s0, s4, 0x31);
    o[5] = _mm256_permute2f128_ps(s1, s5, 0x31);
    o[6] = _mm256_permute2f128_ps(s2, s6, 0x31);
    o[7] = _mm256_permute2f128_ps(s3, s7, 0x31);
}

/* One whole strip of 6 rows of A contiguous along K (as_k 1), 8 steps of K
 * at a time: 6 row loads and an 8x8 transpose (2 rows zero) instead of 48
 * scalar gathers (those took about a tenth of a 512 product's time).
 * Returns the steps done (the rest: the scalar loop). */
__attribute__((target("avx2,fma"))) static int64_t pfvm__la_pack_a6_avx2(const float *as, int64_t as_m, int64_t kc,
                                                                          float *d)
{
    const __m256 z = _mm256_setzero_ps();
    int64_t p;
    for (p = 0; p + 8 <= kc; p += 8, d += 48) {
        const float *r0 = as + p;
        __m256 r[8], o[8];
        int q;
        for (q = 0; q < 6; q++)
            r[q] = _mm256_loadu_ps(r0 + q * as_m);
        r[6] = r[7] = z;
        pfvm__la_tr8(r, o);
        for (q = 0; q < 8; q++) { /* rows 0-3, then 4-5: exactly 6 floats (no store past the strip) */
            _mm_storeu_ps(d + 6 * q, _mm256_castps256_ps128(o[q]));
            _mm_storel_pi((__m64 *)(void *)(d + 6 * q + 4), _mm256_extractf128_ps(o[q], 1));
        }
    }
    return p;
}
#endif

/* Packs rows i0..i0+mc and columns p0..p0+kc of A into strips of mr rows:
 * dst[s*kc*mr + p*mr + r] (rows past mc are zero). */
static void pfvm__la_pack_a(const float *a, int64_t as_m, int64_t as_k, int64_t mc, int64_t kc, int mr, float *dst)
{
    int64_t s, p, r;
    for (s = 0; s < mc; s += mr) {
        int64_t rows = mc - s < mr ? mc - s : mr;
        const float *as = a + s * as_m;
        float *d = dst + s * kc;
        p = 0;
#ifdef PFVM__LA_X86
        if (mr == 6 && rows == 6 && as_k == 1 && pfvm__la_have_avx2()) {
            p = pfvm__la_pack_a6_avx2(as, as_m, kc, d);
            d += p * mr;
        }
#endif
        for (; p < kc; p++, d += mr) {
            for (r = 0; r < rows; r++)
                d[r] = as[r * as_m + p * as_k];
            for (; r < mr; r++)
                d[r] = 0.0f;
        }
    }
}

/* Every kernel, path and blocking rounds alike, so that a Cortex-M and an
 * x86 host give the same bits: each entry of C takes
 * c = fma(alpha, s, c) once per PFVM_LA_KC rows of K (in order), s being
 * that chunk's products summed by fma from zero, in order. fn runs over kc
 * rows of a packed strip (rows mr_stride apart) in such chunks; bias (the
 * tile's rows: C starts from it) goes to the first chunk, cl to the last. */
static void pfvm__la_chunks(pfvm__la_kern_fn fn, int mr_stride, int64_t kc, const float *ap, const float *bp,
                            int64_t ldb, int64_t b1, float *c, int64_t ldc, float alpha, const float *bias,
                            const float *cl)
{
    int64_t p, q;
    for (p = 0; p < kc; p += q) {
        q = kc - p < PFVM_LA_KC ? kc - p : PFVM_LA_KC;
        fn(q, ap + p * mr_stride, bp + p * ldb, ldb, b1, c, ldc, alpha, p == 0 ? bias : NULL, p + q >= kc ? cl : NULL);
    }
}

/* How an edge tile runs its kernels (pfvm__la_edge_tile): on C at c
 * (rows ldc apart), the kernel of the strip's 4 rows r..r+3 (four) or of
 * the whole strip (four 0, r 0), with the epilogue bias (the kernel's
 * rows) and cl of pfvm__la_chunks. */
typedef void (*pfvm__la_tile_run)(const void *ctx, int four, int64_t r, float *c, int64_t ldc, const float *bias,
                                  const float *cl);

/* One mr x nr tile at the edge of C, for kernels of strip_mr rows and
 * width columns. Groups of 4 rows with all columns go straight to C; the
 * others run into a tile on the stack that holds C's entries, so that
 * they round as in a whole tile: by 4 rows where the strip holds them
 * and that is less work than the whole strip (a 4-row kernel shifted past
 * the strip's end would read past it), else the whole strip once. Each
 * entry takes the same operations whichever kernel computes it. */
static void pfvm__la_edge_tile(pfvm__la_tile_run run, const void *ctx, int strip_mr, int width, float *c,
                               int64_t ldc, int64_t mr, int64_t nr, const float *bias, const float *cl)
{
    float tile[PFVM__LA_MR_MAX * PFVM__LA_NR_MAX], tbias[PFVM__LA_MR_MAX];
    const int64_t need = (mr + 3) / 4 * 4; /* rows of 4-row kernels covering the tile */
#ifdef PFVM__LA_X86
    const int four = need <= strip_mr && ((mr >= 4 && nr == width) || need < strip_mr);
#else /* strips of 4 rows at most: an edge tile is never a whole group (flash on a Cortex-M) */
    const int four = 0;
    (void)need;
#endif
    int64_t r, rows, i, j;
    if (mr == strip_mr && nr == width) {
        run(ctx, 0, 0, c, ldc, bias, cl);
        return;
    }
    for (r = 0; r < mr; r += rows) {
        const int64_t t0 = four ? r : 0; /* C's row in the kernel's row 0 */
        rows = four && mr - r > 4 ? 4 : mr - r;
        if (four && rows == 4 && nr == width) {
            run(ctx, 1, r, c + r * ldc, ldc, bias ? bias + r : NULL, cl);
            continue;
        }
        memset(tile, 0, sizeof(float) * (size_t)((four ? 4 : strip_mr) * PFVM__LA_NR_MAX));
        for (i = r; i < r + rows; i++)
            for (j = 0; j < nr; j++)
                tile[(i - t0) * PFVM__LA_NR_MAX + j] = c[i * ldc + j];
        if (bias) { /* the kernel reads its rows' bias: none past row mr */
            memset(tbias, 0, sizeof tbias);
            for (i = r; i < r + rows; i++)
                tbias[i - t0] = bias[i];
        }
        run(ctx, four, t0, tile, PFVM__LA_NR_MAX, bias ? tbias : NULL, cl);
        for (i = r; i < r + rows; i++)
            for (j = 0; j < nr; j++)
                c[i * ldc + j] = tile[(i - t0) * PFVM__LA_NR_MAX + j];
    }
}

/* The engine's edge tiles: the kernels of one width over a packed strip. */
typedef struct pfvm__la_edge_ctx {
    pfvm__la_kern_fn fn, fn4;
    int mr;
    int64_t kc, ldb, b1;
    const float *ap, *bp;
    float alpha;
} pfvm__la_edge_ctx;

static void pfvm__la_edge_run(const void *ctx, int four, int64_t r, float *c, int64_t ldc, const float *bias,
                              const float *cl)
{
    const pfvm__la_edge_ctx *x = (const pfvm__la_edge_ctx *)ctx;
    pfvm__la_chunks(four ? x->fn4 : x->fn, x->mr, x->kc, x->ap + r, x->bp, x->ldb, x->b1, c, ldc, x->alpha, bias, cl);
}

/* One micro-tile at the edge of C (mr x nr of the kernel's tile), by
 * pfvm__la_edge_tile; half or a quarter of a tile's columns or fewer take
 * the narrower kernels where there are some, and three quarters or fewer
 * a half tile and a quarter one (the same operations per entry: a 7x7
 * plane's 49 columns are 32 + 16 + 8 lanes, not 2 x 32). bias and cl: the
 * tile's epilogue (pfvm__la_chunks), bias[0..mr). */
static void pfvm__la_edge(const pfvm__la_kern *kn, int64_t kc, const float *ap, const float *bp, int64_t ldb, int64_t b1,
                          float *c, int64_t ldc, float alpha, int64_t mr, int64_t nr, const float *bias,
                          const float *cl)
{
    pfvm__la_edge_ctx x;
    int width = kn->nr;
    x.fn = kn->fn;
    x.fn4 = kn->fn4;
    if (kn->quarter && nr <= kn->nr / 4) {
        x.fn = kn->quarter;
        x.fn4 = kn->quarter4;
        width = kn->nr / 4;
    } else if (kn->half && nr <= kn->nr / 2) {
        x.fn = kn->half;
        x.fn4 = kn->half4;
        width = kn->nr / 2;
    } else if (kn->quarter && nr <= kn->nr / 2 + kn->nr / 4) { /* the second half's columns are b1 on */
        pfvm__la_edge(kn, kc, ap, bp, ldb, b1, c, ldc, alpha, mr, kn->nr / 2, bias, cl);
        pfvm__la_edge(kn, kc, ap, bp + b1, ldb, b1, c + kn->nr / 2, ldc, alpha, mr, nr - kn->nr / 2, bias, cl);
        return;
    }
    x.mr = kn->mr, x.kc = kc, x.ldb = ldb, x.b1 = b1, x.ap = ap, x.bp = bp, x.alpha = alpha;
    pfvm__la_edge_tile(pfvm__la_edge_run, &x, kn->mr, width, c, ldc, mr, nr, bias, cl);
}

/* The offset of a kernel's second vector of B in packed panels. */
static int64_t pfvm__la_b1(const pfvm__la_kern *kn, int64_t kc)
{
    return kn->nr > PFVM_LA_NB ? kc * PFVM_LA_NB : kn->nr / 2;
}

/* The epilogue of one block of the product (pfvm__la_blocked): init for
 * the first block of K (C starts from bias[0..mc), or zero where bias is
 * NULL), cl for the last (NULL: none). */
typedef struct pfvm__la_bepi {
    int init;
    const float *bias, *cl;
    const float *res; /* the last block of K: NULL, or the residual at the block's C (rows ldc apart) */
    int silu;         /* the last block of K: SiLU of the tiles as they are stored (pfvm_la_epi.silu) */
} pfvm__la_bepi;

/* A tile of C just stored (mr x nr, rows ldc apart, still in L1) plus
 * the residual at res (same layout), then clamped where cl: the
 * epilogue's residual Add, cheaper than a pass of its own over C. */
#ifdef PFVM__STORE_RESIDUAL
#if defined(PFVM__LA_X86) && defined(PFVM_AVX512_KERNELS)
__attribute__((target("avx512f"))) static void pfvm__la_res_tile_avx512(float *c, int64_t ldc, const float *res,
                                                                         int64_t mr, int64_t nr, const float *cl)
{
    const __m512 lo = _mm512_set1_ps(cl ? cl[0] : 0.0f), hi = _mm512_set1_ps(cl ? cl[1] : 0.0f);
    const int relu = cl && cl[2] != 0.0f;
    int64_t i, j;
    for (i = 0; i < mr; i++) {
        float *cr = c + i * ldc;
        const float *rr = res + i * ldc;
        for (j = 0; j < nr; j += 16) {
            __mmask16 mk = nr - j >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (nr - j)) - 1u);
            __m512 v = _mm512_add_ps(_mm512_maskz_loadu_ps(mk, cr + j), _mm512_maskz_loadu_ps(mk, rr + j));
            if (cl) /* pfvm__la_clamp1's two forms, as the kernels' PFVM__LA_CLAMP */
                v = _mm512_min_ps(hi, relu ? _mm512_max_ps(v, lo) : _mm512_max_ps(lo, v));
            _mm512_mask_storeu_ps(cr + j, mk, v);
        }
    }
}
#endif

static void pfvm__la_res_tile(float *c, int64_t ldc, const float *res, int64_t mr, int64_t nr, const float *cl)
{
    ptrdiff_t n = (ptrdiff_t)nr, j;
    int64_t i;
#if defined(PFVM__LA_X86) && defined(PFVM_AVX512_KERNELS)
    if (pfvm__have_avx512()) {
        pfvm__la_res_tile_avx512(c, ldc, res, mr, nr, cl);
        return;
    }
#endif
    for (i = 0; i < mr; i++) {
        float *cr = c + i * ldc;
        const float *rr = res + i * ldc;
        for (j = 0; j < n; j++)
            cr[j] = cl ? pfvm__la_clamp1(cr[j] + rr[j], cl) : cr[j] + rr[j];
    }
}
#endif

/* B's columns 0..n of a block read where they are (rows ld apart, at
 * data) rather than from packed panels: pfvm__la_blocked's in-place B. */
typedef struct pfvm__la_bin {
    const float *data;
    int64_t ld, n;
} pfvm__la_bin;

/* C (mc x nc) += alpha * A-block (packed strips) * B-block (packed panels
 * of kc x PFVM_LA_NB, one after the other, zero past nc up to a whole
 * kernel width; the columns below bin->n, when bin, in place instead);
 * ep: NULL, or the block's epilogue. */
static void pfvm__la_block(const pfvm__la_kern *kn, int64_t mc, int64_t nc, int64_t kc, const float *apack,
                           const float *bpack, const pfvm__la_bin *bin, float *c, int64_t ldc, float alpha,
                           const pfvm__la_bepi *ep)
{
    int64_t j, i, b1 = pfvm__la_b1(kn, kc);
    const float *res = ep ? ep->res : NULL, *cl = ep && !res ? ep->cl : NULL; /* with res: clamped after it */
#ifdef PFVM__STORE_SILU
    /* the SiLU of each tile runs after the next tile's kernel: read back
     * right after the kernel's stores, the tile would wait for them to
     * reach L1 (AVX-512 loads are not forwarded from the store queue);
     * one kernel later it is there, and the SiLU costs its compute only */
    float *pend = NULL;
    int64_t pend_mr = 0, pend_nr = 0;
#endif
    for (j = 0; j < nc; j += kn->nr) {
        int64_t nr = nc - j < kn->nr ? nc - j : kn->nr, ldb = PFVM_LA_NB, bj1 = b1;
        /* panel j / NB, column j % NB in it (a kernel narrower than a panel) */
        const float *bp = bpack + j / PFVM_LA_NB * PFVM_LA_NB * kc + j % PFVM_LA_NB;
        if (bin && j < bin->n) { /* the kernel's second vector right after its first */
            bp = bin->data + j;
            ldb = bin->ld;
            bj1 = kn->nr / 2;
        }
        for (i = 0; i < mc; i += kn->mr) {
            int64_t mr = mc - i < kn->mr ? mc - i : kn->mr;
            const float *bias = !ep || !ep->init ? NULL : ep->bias ? ep->bias + i : pfvm__la_zero_bias;
#if defined(PFVM__STORE_RESIDUAL) && defined(__GNUC__)
            if (res) { /* the tile's residual rows (far apart, one per output channel) fetched while it computes */
                int64_t r;
                for (r = 0; r < mr; r++) {
                    __builtin_prefetch(res + (i + r) * ldc + j);
                    __builtin_prefetch(res + (i + r) * ldc + j + nr - 1);
                }
            }
#endif
            if (mr == kn->mr && nr == kn->nr)
                pfvm__la_chunks(kn->fn, kn->mr, kc, apack + i * kc, bp, ldb, bj1, c + i * ldc + j, ldc, alpha, bias,
                                cl);
            else
                pfvm__la_edge(kn, kc, apack + i * kc, bp, ldb, bj1, c + i * ldc + j, ldc, alpha, mr, nr, bias, cl);
#ifdef PFVM__STORE_RESIDUAL
            if (res)
                pfvm__la_res_tile(c + i * ldc + j, ldc, res + i * ldc + j, mr, nr, ep->cl);
#endif
#ifdef PFVM__STORE_SILU
            if (ep && ep->silu) { /* the tile still in L1 */
                if (pend)
                    pfvm_ew_silu_rows(pend, ldc, pend_mr, (ptrdiff_t)pend_nr);
                pend = c + i * ldc + j;
                pend_mr = mr;
                pend_nr = nr;
            }
#endif
        }
    }
#ifdef PFVM__STORE_SILU
    if (pend)
        pfvm_ew_silu_rows(pend, ldc, pend_mr, (ptrdiff_t)pend_nr);
#endif
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
    /* whole strips (a packed A's blocks start at strip boundaries) */
    b.mc = m < PFVM__LA_MC ? pfvm__la_round(m < 1 ? 1 : m, kn->mr)
                           : PFVM__LA_MC >= kn->mr ? PFVM__LA_MC / kn->mr * kn->mr : kn->mr;
    b.nc = n < PFVM__LA_NC ? pfvm__la_round(n < 1 ? 1 : n, PFVM__LA_NR_MAX) : PFVM__LA_NC;
    return b;
}

PFVM_INTERNAL size_t pfvm_la_sgemm_ws_floats(int64_t m, int64_t n, int64_t k)
{
    if (PFVM__LA_SMALL) /* pfvm__la_small's panel is on the stack */
        return 0;
#ifndef PFVM__LA_T4
    if (PFVM__LA_LEAN) /* every product that is not a matrix-vector one takes pfvm__la_small */
        return 0;
#endif
#ifdef PFVM_LA_NO_WORKSPACE
    /* the small blocks (pfvm_la_sgemm_ws), reserved at bind rather than on
     * the stack; none for matrix-vector products */
    int64_t kc = k < PFVM_LA_KC ? k : PFVM_LA_KC;
    (void)n;
    if (m <= 2 || kc < 1)
        return 0;
    return (size_t)(kc * (PFVM__LA_NR_MAX + 2 * PFVM__LA_MR_MAX));
#else
    pfvm__la_blocks b;
    if (m <= 2) /* a matrix-vector product (or small blocks on the stack): none */
        return 0;
    b = pfvm__la_blocking(pfvm__la_pick(), m, n, k, 1);
    return (size_t)(b.kc * b.nc + b.mc * b.kc);
#endif
}

/* The matrix-vector loops stay functions of their own: inlined into the
 * engine's entry, -Os runs out of registers for their pointers on a
 * 32-bit core. */
#if defined(__GNUC__)
#define PFVM__LA_NOINLINE __attribute__((noinline))
#else
#define PFVM__LA_NOINLINE
#endif

/* c[j] += (alpha * a[p]) * b[p][j] over p in order for j < n, B's rows
 * s_k apart: 8 entries of c stay in registers while the rows go by. */
PFVM__LA_NOINLINE static void pfvm__la_gemv_rows(int64_t n, int64_t k, float alpha, const float *a, ptrdiff_t sa, const float *b,
                               ptrdiff_t sk, float *c)
{
    ptrdiff_t j = 0, p, nn = (ptrdiff_t)n, kk = (ptrdiff_t)k;
    for (; j + 8 <= nn; j += 8) {
        float c0 = c[j], c1 = c[j + 1], c2 = c[j + 2], c3 = c[j + 3];
        float c4 = c[j + 4], c5 = c[j + 5], c6 = c[j + 6], c7 = c[j + 7];
        const float *ap = a, *bp = b + j;
        for (p = 0; p < kk; p++, ap += sa, bp += sk) {
            float av = alpha * *ap;
            c0 += av * bp[0];
            c1 += av * bp[1];
            c2 += av * bp[2];
            c3 += av * bp[3];
            c4 += av * bp[4];
            c5 += av * bp[5];
            c6 += av * bp[6];
            c7 += av * bp[7];
        }
        c[j] = c0, c[j + 1] = c1, c[j + 2] = c2, c[j + 3] = c3;
        c[j + 4] = c4, c[j + 5] = c5, c[j + 6] = c6, c[j + 7] = c7;
    }
    for (; j < nn; j++) {
        float cj = c[j];
        const float *ap = a, *bp = b + j;
        for (p = 0; p < kk; p++, ap += sa, bp += sk)
            cj += alpha * *ap * *bp;
        c[j] = cj;
    }
}

/* c[j] += alpha * (dot product of a with column j of B, summed in order
 * from zero), B's columns s_n apart and contiguous: 4 columns at a time,
 * 4 steps of K per iteration where a is contiguous. */
PFVM__LA_NOINLINE static void pfvm__la_gemv_dots(int64_t n, int64_t k, float alpha, const float *a, ptrdiff_t sa,
                                                 const float *b, ptrdiff_t sn, float *c)
{
    ptrdiff_t j = 0, p, nn = (ptrdiff_t)n, kk = (ptrdiff_t)k, k4 = sa == 1 ? kk / 4 * 4 : 0;
    for (; j + 4 <= nn; j += 4) {
        const float *b0 = b + j * sn, *b1 = b0 + sn, *b2 = b1 + sn, *b3 = b2 + sn, *ap = a;
        float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
        for (p = 0; p < k4; p += 4, ap += 4, b0 += 4, b1 += 4, b2 += 4, b3 += 4) {
            float a0 = ap[0], a1 = ap[1], a2 = ap[2], a3 = ap[3];
            s0 += a0 * b0[0], s1 += a0 * b1[0], s2 += a0 * b2[0], s3 += a0 * b3[0];
            s0 += a1 * b0[1], s1 += a1 * b1[1], s2 += a1 * b2[1], s3 += a1 * b3[1];
            s0 += a2 * b0[2], s1 += a2 * b1[2], s2 += a2 * b2[2], s3 += a2 * b3[2];
            s0 += a3 * b0[3], s1 += a3 * b1[3], s2 += a3 * b2[3], s3 += a3 * b3[3];
        }
        for (; p < kk; p++, ap += sa) {
            float av = *ap;
            s0 += av * *b0++, s1 += av * *b1++, s2 += av * *b2++, s3 += av * *b3++;
        }
        c[j] += alpha * s0, c[j + 1] += alpha * s1, c[j + 2] += alpha * s2, c[j + 3] += alpha * s3;
    }
    for (; j < nn; j++) {
        const float *bj = b + j * sn, *ap = a;
        float s = 0;
        for (p = 0; p < kk; p++, ap += sa)
            s += *ap * bj[p];
        c[j] += alpha * s;
    }
}

#ifdef PFVM__LA_X86
/* pfvm__la_gemv_dots on 8 columns at a time with AVX2: an 8x8 block of B
 * (8 columns, 8 steps of K) is transposed in registers, so that each
 * column's sum takes its products in the same order, each rounded
 * apart, as in the scalar loops (the same bits); the last columns go to
 * them. */
__attribute__((target("avx2"))) static void pfvm__la_gemv_dots_avx2(int64_t n, int64_t k, float alpha, const float *a,
                                                                   ptrdiff_t sa, const float *b, ptrdiff_t sn, float *c)
{
    ptrdiff_t j = 0, p, i, nn = (ptrdiff_t)n, kk = (ptrdiff_t)k;
    for (; j + 8 <= nn; j += 8) {
        const float *bj = b + j * sn;
        __m256 s = _mm256_setzero_ps(), q[8];
        for (p = 0; p + 8 <= kk; p += 8) {
            __m256 t0, t1, t2, t3, t4, t5, t6, t7, u0, u1, u2, u3, u4, u5, u6, u7;
            for (i = 0; i < 8; i++)
                q[i] = _mm256_loadu_ps(bj + i * sn + p);
            t0 = _mm256_unpacklo_ps(q[0], q[1]), t1 = _mm256_unpackhi_ps(q[0], q[1]);
            t2 = _mm256_unpacklo_ps(q[2], q[3]), t3 = _mm256_unpackhi_ps(q[2], q[3]);
            t4 = _mm256_unpacklo_ps(q[4], q[5]), t5 = _mm256_unpackhi_ps(q[4], q[5]);
            t6 = _mm256_unpacklo_ps(q[6], q[7]), t7 = _mm256_unpackhi_ps(q[6], q[7]);
            u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
            u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
            u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
            u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
            /* q[i]: step p + i of the 8 columns */
            q[0] = _mm256_permute2f128_ps(u0, u4, 0x20), q[1] = _mm256_permute2f128_ps(u1, u5, 0x20);
            q[2] = _mm256_permute2f128_ps(u2, u6, 0x20), q[3] = _mm256_permute2f128_ps(u3, u7, 0x20);
            q[4] = _mm256_permute2f128_ps(u0, u4, 0x31), q[5] = _mm256_permute2f128_ps(u1, u5, 0x31);
            q[6] = _mm256_permute2f128_ps(u2, u6, 0x31), q[7] = _mm256_permute2f128_ps(u3, u7, 0x31);
            for (i = 0; i < 8; i++)
                s = _mm256_add_ps(s, _mm256_mul_ps(_mm256_set1_ps(a[(p + i) * sa]), q[i]));
        }
        for (; p < kk; p++) {
            __m256 v = _mm256_setr_ps(bj[p], bj[sn + p], bj[2 * sn + p], bj[3 * sn + p], bj[4 * sn + p], bj[5 * sn + p],
                                      bj[6 * sn + p], bj[7 * sn + p]);
            s = _mm256_add_ps(s, _mm256_mul_ps(_mm256_set1_ps(a[p * sa]), v));
        }
        _mm256_storeu_ps(c + j, _mm256_add_ps(_mm256_loadu_ps(c + j), _mm256_mul_ps(_mm256_set1_ps(alpha), s)));
    }
    if (j < nn)
        pfvm__la_gemv_dots(n - j, k, alpha, a, sa, b + j * sn, sn, c + j);
}
#endif

/* Few rows of A times a plain strided B (a matrix-vector product, batch 1
 * MatMul/Gemm): packing B would cost as much as the product, so B is read
 * once, in place: rows of B (s_n == 1) are added to C's row, or C's
 * entries are dot products with columns of B (s_k == 1). Products and sums
 * round separately here (no fused multiply-add: the host's baseline code
 * has none, and a Cortex-M's VMLA rounds the same way). */
static int pfvm__la_gemv(int64_t m, int64_t n, int64_t k, float alpha, const float *a, int64_t as_m, int64_t as_k,
                         const pfvm_la_strided *b, float *c, int64_t ldc)
{
    int64_t i;
    if (m > 2 || (b->s_n != 1 && b->s_k != 1))
        return 0;
    for (i = 0; i < m; i++) {
        if (b->s_n == 1)
            pfvm__la_gemv_rows(n, k, alpha, a + i * as_m, (ptrdiff_t)as_k, b->data, (ptrdiff_t)b->s_k, c + i * ldc);
#ifdef PFVM__LA_X86
        else if (pfvm__la_have_avx2())
            pfvm__la_gemv_dots_avx2(n, k, alpha, a + i * as_m, (ptrdiff_t)as_k, b->data, (ptrdiff_t)b->s_n, c + i * ldc);
#endif
        else
            pfvm__la_gemv_dots(n, k, alpha, a + i * as_m, (ptrdiff_t)as_k, b->data, (ptrdiff_t)b->s_n, c + i * ldc);
    }
    return 1;
}

/* Few rows of A (up to two strips) times a row-major B: each column of B
 * serves so few rows that packing B would cost more than it saves, so the
 * kernels read B where it is (whole kernel widths) and only the last
 * columns go through packed panels (stage: PFVM__LA_NR_MAX x PFVM_LA_KC
 * floats). A is packed strip by strip. */
/* The bias of a strip of rows i.. in the first chunk of K (pc 0), for
 * pfvm__la_direct's epilogue (NULL: C's entries are added to). */
static const float *pfvm__la_strip_bias(const pfvm_la_epi *e, int64_t pc, int64_t i)
{
    if (!e || pc > 0)
        return NULL;
    return e->bias ? e->bias + i : pfvm__la_zero_bias;
}

static int pfvm__la_direct(const pfvm__la_kern *kn, int64_t m, int64_t n, int64_t k, float alpha, const float *a,
                           int64_t as_m, int64_t as_k, const pfvm_la_strided *b, float *c, int64_t ldc, float *apack,
                           float *stage, const pfvm_la_epi *e)
{
    int64_t pc, i, j, kc;
    if (m > 2 * kn->mr || b->s_n != 1)
        return 0;
    for (pc = 0; pc < k; pc += kc) {
        int64_t full = n / kn->nr * kn->nr;
        const float *cl;
        kc = k - pc < PFVM_LA_KC ? k - pc : PFVM_LA_KC;
        cl = e && pc + kc >= k ? PFVM__LA_CL(e) : NULL; /* the epilogue's clamp with the last chunk of K */
        pfvm__la_pack_a(a + pc * as_k, as_m, as_k, m, kc, kn->mr, apack);
        for (j = 0; j < full; j += kn->nr)
            for (i = 0; i < m; i += kn->mr) {
                const float *bp = b->data + pc * b->s_k + j;
                if (m - i >= kn->mr)
                    pfvm__la_chunks(kn->fn, kn->mr, kc, apack + i * kc, bp, b->s_k, kn->nr / 2, c + i * ldc + j, ldc,
                                    alpha, pfvm__la_strip_bias(e, pc, i), cl);
                else
                    pfvm__la_edge(kn, kc, apack + i * kc, bp, b->s_k, kn->nr / 2, c + i * ldc + j, ldc, alpha, m - i,
                                  kn->nr, pfvm__la_strip_bias(e, pc, i), cl);
            }
        if (j < n) {
            int64_t h;
            for (h = 0; h < kn->nr; h += PFVM_LA_NB)
                pfvm_la_pack_strided((void *)b, pc, kc, j + h, n - j - h < 0 ? 0 : n - j - h < PFVM_LA_NB ? n - j - h : PFVM_LA_NB,
                                     stage + h * kc);
            for (i = 0; i < m; i += kn->mr)
                pfvm__la_edge(kn, kc, apack + i * kc, stage, PFVM_LA_NB, pfvm__la_b1(kn, kc), c + i * ldc + j, ldc,
                              alpha, m - i < kn->mr ? m - i : kn->mr, n - j, pfvm__la_strip_bias(e, pc, i), cl);
        }
    }
    return 1;
}

#ifdef PFVM__LA_T4
/* C += alpha*A*B on the stack blocks with A's rows (contiguous along K)
 * read in place: packing A would be repeated for every panel of B, and B
 * (Conv's im2col) costs more to pack than A. Panels of B are
 * PFVM_LA_KC x PFVM_LA_NB (bpack); the last rows of A, fewer than 4, go
 * through a packed strip (apack). */
/* The epilogue e (NULL: none) of the 4x4 tile's stores: the bias of rows
 * i.. with the first chunk of K (pc 0), the clamp with the last. */
#define PFVM__LA_T4_BIAS(e, pc, i) ((e) && (pc) == 0 ? ((e)->bias ? (e)->bias + (i) : pfvm__la_zero_bias) : NULL)
#define PFVM__LA_T4_CL(e, pc, kc, k) ((e) && (pc) + (kc) >= (k) ? (e)->cl : NULL)
static void pfvm__la_t4_inplace(int64_t m, int64_t n, int64_t k, float alpha, const float *a, int64_t as_m,
                                pfvm_la_pack_fn pack, void *user, float *c, int64_t ldc, float *bpack, float *apack,
                                const pfvm_la_epi *e)
{
    const pfvm__la_kern *kn = pfvm__la_pick();
    ptrdiff_t jc, pc, i, j, r, q, kc, nc, m4 = (ptrdiff_t)(m / 4 * 4), sm = (ptrdiff_t)as_m, lc = (ptrdiff_t)ldc;
    float tile[4 * 4];
    for (jc = 0; jc < n; jc += PFVM_LA_NB) {
        nc = n - jc < PFVM_LA_NB ? (ptrdiff_t)(n - jc) : PFVM_LA_NB;
        for (pc = 0; pc < k; pc += kc) {
            kc = k - pc < PFVM_LA_KC ? (ptrdiff_t)(k - pc) : PFVM_LA_KC;
            pack(user, pc, kc, jc, nc, bpack);
            for (i = 0; i < m4; i += 4)
                for (j = 0; j < nc; j += 4) {
                    float *cij = c + i * lc + jc + j;
                    ptrdiff_t w = nc - j < 4 ? nc - j : 4;
                    if (w == 4) {
                        pfvm__la_kern_t4a(kc, a + i * sm + pc, sm, bpack + j, PFVM_LA_NB, cij, lc, alpha,
                                          PFVM__LA_T4_BIAS(e, pc, i), PFVM__LA_T4_CL(e, pc, kc, k));
                        continue;
                    }
                    /* the last columns: through a tile holding C's entries */
                    memset(tile, 0, sizeof tile);
                    for (r = 0; r < 4; r++)
                        for (q = 0; q < w; q++)
                            tile[r * 4 + q] = cij[r * lc + q];
                    pfvm__la_kern_t4a(kc, a + i * sm + pc, sm, bpack + j, PFVM_LA_NB, tile, 4, alpha,
                                      PFVM__LA_T4_BIAS(e, pc, i), PFVM__LA_T4_CL(e, pc, kc, k));
                    for (r = 0; r < 4; r++)
                        for (q = 0; q < w; q++)
                            cij[r * lc + q] = tile[r * 4 + q];
                }
            if (!PFVM__LA_LEAN && m4 < m) { /* (lean: pfvm__la_lean gives it whole tiles only) */
                pfvm__la_pack_a(a + m4 * sm + pc, as_m, 1, m - m4, kc, 4, apack);
                for (j = 0; j < nc; j += 4)
                    pfvm__la_edge(kn, kc, apack, bpack + j, PFVM_LA_NB, 2, c + m4 * lc + jc + j, ldc, alpha, m - m4,
                                  nc - j < 4 ? nc - j : 4, PFVM__LA_T4_BIAS(e, pc, m4), PFVM__LA_T4_CL(e, pc, kc, k));
            }
        }
    }
}

/* pfvm__la_t4_inplace for a strided B whose rows (s_n == 1: Conv 1x1's
 * input planes, a plain MatMul) or columns (s_k == 1: a transposed B) are
 * contiguous: the whole 4x4 tiles read B in place (no panel packed, no
 * copy); the last columns and rows (fewer than 4) go to
 * pfvm__la_t4_inplace. Every entry of C takes the same PFVM_LA_KC blocks
 * of K in the same order as there, so the same bits. 0: not taken. */
static int pfvm__la_t4_strided(int64_t m, int64_t n, int64_t k, float alpha, const float *a, int64_t as_m,
                               const pfvm_la_strided *b, float *c, int64_t ldc, float *bpack, float *apack,
                               const pfvm_la_epi *e)
{
    pfvm_la_epi rest_e;
    ptrdiff_t pc, i, j, kc, m4 = (ptrdiff_t)(m / 4 * 4), n4 = (ptrdiff_t)(n / 4 * 4), sm = (ptrdiff_t)as_m;
    ptrdiff_t lc = (ptrdiff_t)ldc, sk = (ptrdiff_t)b->s_k, sn = (ptrdiff_t)b->s_n;
    if ((sn != 1 && sk != 1) || !m4 || !n4 || (e && sn != 1)) /* the transposed tile has no epilogue */
        return 0;
#if defined(PFVM__LA_T4_ASM) && defined(PFVM_LA_NO_WORKSPACE)
    if (sn != 1) { /* a transposed B: one copy of that loop nest (flash) */
        pfvm__la_t4_trows_run(m4, (ptrdiff_t)n, (ptrdiff_t)k, alpha, a, sm, b->data, sn, c, lc);
        if (m4 < m)
            pfvm__la_t4_inplace(m - m4, n, k, alpha, a + m4 * sm, as_m, pfvm_la_pack_strided, (void *)b, c + m4 * lc,
                                ldc, bpack, apack, NULL);
        return 1;
    }
#endif
    for (pc = 0; pc < k; pc += kc) {
        kc = k - pc < PFVM_LA_KC ? (ptrdiff_t)(k - pc) : PFVM_LA_KC;
#ifdef PFVM__LA_T4_ASM
        if (sn != 1) { /* a transposed B: A's 4 rows packed once for the row of tiles */
            for (i = 0; i < m4; i += 4) {
                pfvm__la_pack_a4(kc, a + i * sm + pc, sm, apack);
                for (j = 0; j < n4; j += 4)
                    pfvm__la_kern_t4p(kc, apack, b->data + pc + j * sn, sn, c + i * lc + j, lc, alpha);
            }
            continue;
        }
#endif
        for (j = 0; j < n4; j += 4)
            for (i = 0; i < m4; i += 4) {
                const float *bj = b->data + pc * sk + j * sn;
                if (sn == 1)
                    pfvm__la_kern_t4a(kc, a + i * sm + pc, sm, bj, sk, c + i * lc + j, lc, alpha,
                                      PFVM__LA_T4_BIAS(e, pc, i), PFVM__LA_T4_CL(e, pc, kc, k));
                else
                    pfvm__la_kern_t4d(kc, a + i * sm + pc, sm, bj, sn, c + i * lc + j, lc, alpha);
            }
    }
    if (n4 < n && sn != 1) { /* the last columns of a transposed B: in place too */
        for (pc = 0; pc < k; pc += kc) {
            kc = k - pc < PFVM_LA_KC ? (ptrdiff_t)(k - pc) : PFVM_LA_KC;
            for (j = n4; j < n; j++)
                for (i = 0; i < m4; i += 4)
                    pfvm__la_kern_t4d1(kc, a + i * sm + pc, sm, b->data + pc + j * sn, c + i * lc + j, lc, alpha);
        }
    } else if (n4 < n) {
        pfvm_la_strided rest = *b;
        rest.data += n4 * sn;
        pfvm__la_t4_inplace(m4, n - n4, k, alpha, a, as_m, pfvm_la_pack_strided, &rest, c + n4, ldc, bpack, apack, e);
    }
    if (m4 < m) {
        if (e) { /* the rows from m4: their bias */
            rest_e = *e;
            rest_e.bias = e->bias ? e->bias + m4 : NULL;
        }
        pfvm__la_t4_inplace(m - m4, n, k, alpha, a + m4 * sm, as_m, pfvm_la_pack_strided, (void *)b, c + m4 * lc, ldc,
                            bpack, apack, e ? &rest_e : NULL);
    }
    return 1;
}
#endif


/* The blocked product over rows i0..i1 and columns j0..j1 of C (i0 a
 * multiple of the kernel's height: a part of the whole product, whose
 * blocking bl it keeps); A comes packed in apre (pfvm_la_pack_a_all's
 * layout, mpad rows a slab) or is packed here block by block. e: NULL, or
 * the product's epilogue, which the kernels apply as they store. */
typedef struct pfvm__la_rect {
    int64_t i0, i1, j0, j1;
} pfvm__la_rect;

static void pfvm__la_blocked(const pfvm__la_kern *kn, pfvm__la_blocks bl, pfvm__la_rect r, int64_t k, float alpha,
                             const float *a, int64_t as_m, int64_t as_k, const float *apre, int64_t mpad,
                             pfvm_la_pack_fn pack, void *user, float *c, int64_t ldc, float *bpack, float *apack,
                             const pfvm_la_epi *e)
{
    int64_t jc, pc, ic, j, unit = kn->nr > PFVM_LA_NB ? kn->nr : PFVM_LA_NB;
    pfvm__la_bepi ep;
    pfvm__la_bin bin = {NULL, 0, 0}, *bi = NULL;
#ifdef PFVM__LA_B_INPLACE
    /* a strided B with contiguous rows (Conv 1x1's input planes) that one
     * block of A's rows uses once: packing it would copy each entry for a
     * single read, so the kernels read its whole tiles in place (the same
     * operations in the same order: the same bits); only the last columns,
     * less than a kernel width, go through panels */
    if (pack == pfvm_la_pack_strided && ((const pfvm_la_strided *)user)->s_n == 1 && r.i1 - r.i0 <= bl.mc) {
        bi = &bin;
        bin.ld = ((const pfvm_la_strided *)user)->s_k;
    }
#endif
    for (jc = r.j0; jc < r.j1; jc += bl.nc) {
        int64_t nc = r.j1 - jc < bl.nc ? r.j1 - jc : bl.nc, nc_pad = pfvm__la_round(nc, kn->nr);
        bin.n = bi ? nc / unit * unit : 0; /* whole panels and kernel widths */
        for (pc = 0; pc < k; pc += bl.kc) {
            int64_t kc = k - pc < bl.kc ? k - pc : bl.kc;
            if (bi)
                bin.data = ((const pfvm_la_strided *)user)->data + pc * bin.ld + jc;
            /* panels past nc (up to a whole kernel width) come out zero */
            for (j = bin.n; j < nc_pad; j += PFVM_LA_NB)
                pack(user, pc, kc, jc + j, nc - j <= 0 ? 0 : nc - j < PFVM_LA_NB ? nc - j : PFVM_LA_NB, bpack + j * kc);
            for (ic = r.i0; ic < r.i1; ic += bl.mc) {
                int64_t mc = r.i1 - ic < bl.mc ? r.i1 - ic : bl.mc;
                if (e) {
                    ep.init = pc == 0;
                    ep.bias = e->bias ? e->bias + ic : NULL;
                    ep.cl = pc + kc >= k ? PFVM__LA_CL(e) : NULL;
                    ep.res = pc + kc >= k && PFVM__LA_RES(e) ? PFVM__LA_RES(e) + ic * ldc + jc : NULL;
                    ep.silu = pc + kc >= k && PFVM__LA_SILU(e);
                }
                if (apre)
                    pfvm__la_block(kn, mc, nc, kc, apre + mpad * pc + ic * kc, bpack, bi, c + ic * ldc + jc, ldc,
                                   alpha, e ? &ep : NULL);
                else {
                    pfvm__la_pack_a(a + ic * as_m + pc * as_k, as_m, as_k, mc, kc, kn->mr, apack);
                    pfvm__la_block(kn, mc, nc, kc, apack, bpack, bi, c + ic * ldc + jc, ldc, alpha, e ? &ep : NULL);
                }
            }
        }
    }
}

static pfvm__la_rect pfvm__la_whole(int64_t m, int64_t n)
{
    pfvm__la_rect r;
    r.i0 = r.j0 = 0;
    r.i1 = m;
    r.j1 = n;
    return r;
}

/* 1 when pfvm__la_gemv takes the product (one or two rows of A). */
static int pfvm__la_gemv_fits(int64_t m, pfvm_la_pack_fn pack, const void *user)
{
    const pfvm_la_strided *b = (const pfvm_la_strided *)user;
    return pack == pfvm_la_pack_strided && m <= 2 && (b->s_n == 1 || b->s_k == 1);
}

/* 1 when B (strided) is read in place rather than packed. */
static int pfvm__la_reads_b(const pfvm__la_kern *kn, int64_t m, pfvm_la_pack_fn pack, const void *user)
{
    const pfvm_la_strided *b = (const pfvm_la_strided *)user;
    if (pack != pfvm_la_pack_strided)
        return 0;
    return (m <= 2 && (b->s_n == 1 || b->s_k == 1)) || (m <= 2 * kn->mr && b->s_n == 1);
}

/* The epilogue the plain way, for the paths whose kernels do not store
 * through it (B read in place, the 4x4 tile's in-place A): C's rows
 * (columns j0..j1) filled with the bias before the product (pfvm__la_epi_fill),
 * clamped after it (pfvm__la_epi_clamp). The same bits as in the store. */
static void pfvm__la_epi_fill(const pfvm_la_epi *e, int64_t m, int64_t j0, int64_t j1, float *c, int64_t ldc)
{
    /* pointer walks with a native-width count: int64 index math costs
     * several instructions per element on 32-bit Arm */
    ptrdiff_t n = (ptrdiff_t)(j1 - j0), j;
    int64_t i;
    for (i = 0; i < m; i++) {
        float *row = c + i * ldc + j0;
        const float v = e->bias ? e->bias[i] : 0.0f;
        for (j = 0; j + 4 <= n; j += 4) {
            row[j] = v;
            row[j + 1] = v;
            row[j + 2] = v;
            row[j + 3] = v;
        }
        for (; j < n; j++)
            row[j] = v;
    }
}

PFVM_INTERNAL void pfvm_la_relu_floor(float *y, ptrdiff_t n, float lo)
{
    ptrdiff_t j;
    for (j = 0; j + 4 <= n; j += 4) {
        float a = y[j], b = y[j + 1], c = y[j + 2], d = y[j + 3];
        y[j] = a > lo ? a : lo;
        y[j + 1] = b > lo ? b : lo;
        y[j + 2] = c > lo ? c : lo;
        y[j + 3] = d > lo ? d : lo;
    }
    for (; j < n; j++)
        y[j] = y[j] > lo ? y[j] : lo;
}

static void pfvm__la_epi_clamp(const pfvm_la_epi *e, int64_t m, int64_t j0, int64_t j1, float *c, int64_t ldc)
{
    ptrdiff_t n = (ptrdiff_t)(j1 - j0), j;
    int64_t i;
    const float *cl = PFVM__LA_CL(e);
    if (!cl)
        return;
    for (i = 0; i < m; i++) {
        float *row = c + i * ldc + j0;
        if (cl[2] != 0.0f && cl[1] == INFINITY)
            pfvm_la_relu_floor(row, n, cl[0]);
        else
            for (j = 0; j < n; j++)
                row[j] = pfvm__la_clamp1(row[j], cl);
    }
}

/* The epilogue without its residual (and so without its clamp, which
 * comes after the residual), for the paths whose kernels do not add it:
 * pfvm__la_epi_res adds both to their result (columns j0..j1) after. */
static const pfvm_la_epi *pfvm__la_epi_bias_only(const pfvm_la_epi *e, pfvm_la_epi *tmp)
{
    if (!e || (!PFVM__LA_RES(e) && !PFVM__LA_SILU(e)))
        return e;
    tmp->bias = e->bias;
    tmp->cl = tmp->res = NULL;
    tmp->silu = 0;
    return tmp;
}

/* ... and the SiLU the same way (pfvm_la_epi.silu, never with a residual
 * or a clamp). */
static void pfvm__la_epi_res(const pfvm_la_epi *e, int64_t m, int64_t j0, int64_t j1, float *c, int64_t ldc)
{
#ifdef PFVM__STORE_RESIDUAL
    if (e && e->res && j1 > j0)
        pfvm__la_res_tile(c + j0, ldc, e->res + j0, m, j1 - j0, PFVM__LA_CL(e));
#endif
#ifdef PFVM__STORE_SILU
    if (e && e->silu && j1 > j0)
        pfvm_ew_silu_rows(c + j0, ldc, m, (ptrdiff_t)(j1 - j0));
#endif
    (void)e, (void)m, (void)j0, (void)j1, (void)c, (void)ldc;
}

/* PFVM_SMALL_KERNELS' inner loop: s[0..w) = the sums over kc rows of
 * A's values (a, stride sa) times w (4 or 1) adjacent columns of a panel
 * (b, rows PFVM_LA_NB apart), each by fma from zero, in order. */
PFVM__LA_NOINLINE static void pfvm__la_small_dots(const float *a, ptrdiff_t sa, const float *b, ptrdiff_t kc, int w,
                                                  float *s)
{
    const float *end = b + kc * PFVM_LA_NB;
    float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
    if (w == 4)
        for (; b != end; a += sa, b += PFVM_LA_NB) {
            const float av = *a;
            s0 = PFVM__LA_FMA(av, b[0], s0);
            s1 = PFVM__LA_FMA(av, b[1], s1);
            s2 = PFVM__LA_FMA(av, b[2], s2);
            s3 = PFVM__LA_FMA(av, b[3], s3);
        }
    else
        for (; b != end; a += sa, b += PFVM_LA_NB)
            s0 = PFVM__LA_FMA(*a, b[0], s0);
    s[0] = s0, s[1] = s1, s[2] = s2, s[3] = s3;
}

/* PFVM_SMALL_KERNELS' engine: one loop nest for every product, B read
 * through pack one panel (PFVM_LA_KC rows, PFVM_LA_NB columns) at a time
 * into a buffer on the stack, four columns of C at a time (A's value
 * loaded once for four multiply-adds), each entry rounded as the other
 * paths round it (pfvm__la_chunks: s summed by fma from zero over a chunk
 * of K, then c = fma(alpha, s, c), the bias replacing C on the first
 * chunk); the clamp of e after. Matrix-vector products take
 * pfvm__la_gemv, as in the whole engine (their rounding). A in place
 * (strides as_m, as_k). */
PFVM__LA_NOINLINE static void pfvm__la_nest(int64_t m, int64_t n, int64_t k, float alpha, const float *a,
                                             int64_t as_m, int64_t as_k, pfvm_la_pack_fn pack, void *user, float *c,
                                             int64_t ldc, const pfvm_la_epi *e)
{
    float panel[PFVM_LA_KC * PFVM_LA_NB], s[4]; /* (a frame of its own: the matrix-vector loops need none) */
    ptrdiff_t i, j, q, nr, kc;
    int64_t j0, p0;
    int w;
    pfvm_la_epi e_tmp;
    const pfvm_la_epi *e0 = e;
    e = pfvm__la_epi_bias_only(e0, &e_tmp); /* the residual (and its clamp) after */
    if (m <= 0 || n <= 0 || k <= 0)
        return;
    for (j0 = 0; j0 < n; j0 += PFVM_LA_NB) {
        nr = (ptrdiff_t)(n - j0 < PFVM_LA_NB ? n - j0 : PFVM_LA_NB);
        for (p0 = 0; p0 < k; p0 += kc) {
            kc = (ptrdiff_t)(k - p0 < PFVM_LA_KC ? k - p0 : PFVM_LA_KC);
            pack(user, p0, kc, j0, nr, panel);
            for (i = 0; i < (ptrdiff_t)m; i++) {
                float *cr = c + i * ldc + j0, b0 = e && e->bias ? e->bias[i] : 0.0f;
                for (j = 0; j < nr; j += w) {
                    w = nr - j < 4 ? 1 : 4; /* the last columns one at a time */
                    pfvm__la_small_dots(a + i * as_m + p0 * as_k, (ptrdiff_t)as_k, panel + j, kc, w, s);
                    for (q = 0; q < w; q++)
                        cr[j + q] = PFVM__LA_FMA(alpha, s[q], e && p0 == 0 ? b0 : cr[j + q]);
                }
            }
        }
    }
    if (e)
        pfvm__la_epi_clamp(e, m, 0, n, c, ldc);
    pfvm__la_epi_res(e0, m, 0, n, c, ldc);
}

static void pfvm__la_small(int64_t m, int64_t n, int64_t k, float alpha, const float *a, int64_t as_m, int64_t as_k,
                           pfvm_la_pack_fn pack, void *user, float *c, int64_t ldc, const pfvm_la_epi *e)
{
    pfvm_la_epi e_tmp;
    const pfvm_la_epi *eb = pfvm__la_epi_bias_only(e, &e_tmp); /* the residual (and its clamp) after */
    if (m > 0 && n > 0 && k > 0 && pfvm__la_gemv_fits(m, pack, user)) {
        if (eb)
            pfvm__la_epi_fill(eb, m, 0, n, c, ldc);
        pfvm__la_gemv(m, n, k, alpha, a, as_m, as_k, (const pfvm_la_strided *)user, c, ldc);
        if (eb)
            pfvm__la_epi_clamp(eb, m, 0, n, c, ldc);
        pfvm__la_epi_res(e, m, 0, n, c, ldc);
        return;
    }
    pfvm__la_nest(m, n, k, alpha, a, as_m, as_k, pack, user, c, ldc, e);
}

/* PFVM_LEAN_KERNELS' engine: one tile kernel and one driver. On 32-bit
 * Arm, rows of A in place in fours with a panel of B in ws (the
 * executor's workspace: pfvm_la_sgemm_ws_floats) take the 4x4 tile
 * (pfvm__la_t4_inplace, epilogue as it stores) and the last rows (fewer
 * than 4) the loop nest (pfvm__la_nest: not the matrix-vector loops,
 * whose rounding is another); every other product (a transposed
 * A, no workspace given; off 32-bit Arm all of them) takes
 * pfvm__la_small, which takes the matrix-vector loops where they fit
 * (m <= 2, as the whole engine). The tile and the loop nest round every
 * entry alike: the same bits. */
static void pfvm__la_lean(int64_t m, int64_t n, int64_t k, float alpha, const float *a, int64_t as_m, int64_t as_k,
                          pfvm_la_pack_fn pack, void *user, float *c, int64_t ldc, float *ws, const pfvm_la_epi *e)
{
#ifdef PFVM__LA_T4
    int64_t m4 = m / 4 * 4;
    if (ws && as_k == 1 && m4 > 0 && n > 0 && k > 0) {
        pfvm_la_epi e_tmp, rest;
        const pfvm_la_epi *eb = pfvm__la_epi_bias_only(e, &e_tmp); /* e less its residual: after */
        pfvm__la_t4_inplace(m4, n, k, alpha, a, as_m, pack, user, c, ldc, ws, NULL, eb);
        if (m4 < m) {
            if (eb) { /* the rows from m4: their bias */
                rest = *eb;
                rest.bias = eb->bias ? eb->bias + m4 : NULL;
            }
            pfvm__la_nest(m - m4, n, k, alpha, a + m4 * as_m, as_m, 1, pack, user, c + m4 * ldc, ldc,
                          eb ? &rest : NULL); /* part of a larger product: not the matrix-vector loops */
        }
        pfvm__la_epi_res(e, m, 0, n, c, ldc);
        return;
    }
#endif
    (void)ws;
    pfvm__la_small(m, n, k, alpha, a, as_m, as_k, pack, user, c, ldc, e);
}

/* The engine with its small blocks in bpack (PFVM__LA_NR_MAX x kc floats)
 * and apack (2 x PFVM__LA_MR_MAX x kc), kc = min(k, PFVM_LA_KC), and, with
 * a workspace ws, its large blocks there; e: NULL or the epilogue. */
static void pfvm__la_sgemm_in(int64_t m, int64_t n, int64_t k, float alpha, const float *a, int64_t as_m, int64_t as_k,
                              pfvm_la_pack_fn pack, void *user, float *c, int64_t ldc, float *ws, float *bpack,
                              float *apack, const pfvm_la_epi *e)
{
    const pfvm__la_kern *kn = pfvm__la_pick();
    pfvm__la_blocks bl = pfvm__la_blocking(kn, m, n, k, ws != NULL);
    int plain = pfvm__la_gemv_fits(m, pack, user);
    pfvm_la_epi e_tmp;
    const pfvm_la_epi *eb = pfvm__la_epi_bias_only(e, &e_tmp); /* e less its residual: pfvm__la_epi_res after */
    if (m <= 0 || n <= 0 || k <= 0)
        return;
#ifdef PFVM__LA_T4
    /* the 4x4 tile with A in place, where neither the matrix-vector loops
     * nor pfvm__la_direct take the product: it applies the epilogue as it
     * stores (no bias fill before, no clamp pass after) */
    if (!ws && as_k == 1 &&
        (pack != pfvm_la_pack_strided ||
         (!plain && (m > 2 * kn->mr || ((const pfvm_la_strided *)user)->s_n != 1)))) {
        if (pack != pfvm_la_pack_strided ||
            !pfvm__la_t4_strided(m, n, k, alpha, a, as_m, (const pfvm_la_strided *)user, c, ldc, bpack, apack, eb))
            pfvm__la_t4_inplace(m, n, k, alpha, a, as_m, pack, user, c, ldc, bpack, apack, eb);
        pfvm__la_epi_res(e, m, 0, n, c, ldc);
        return;
    }
    plain = plain || (!ws && as_k == 1);
#endif
    if (e && plain)
        pfvm__la_epi_fill(eb, m, 0, n, c, ldc);
    if (pack == pfvm_la_pack_strided &&
        (pfvm__la_gemv(m, n, k, alpha, a, as_m, as_k, (const pfvm_la_strided *)user, c, ldc) ||
         pfvm__la_direct(kn, m, n, k, alpha, a, as_m, as_k, (const pfvm_la_strided *)user, c, ldc, apack, bpack, eb))) {
        if (e && plain)
            pfvm__la_epi_clamp(eb, m, 0, n, c, ldc);
        pfvm__la_epi_res(e, m, 0, n, c, ldc);
        return;
    }
    pfvm__la_blocked(kn, bl, pfvm__la_whole(m, n), k, alpha, a, as_m, as_k, NULL, 0, pack, user, c, ldc,
                     ws ? ws : bpack, ws ? ws + bl.kc * bl.nc : apack, e);
}

/* The small blocks on the stack (about 12 KB at PFVM_LA_KC 128 on 32-bit
 * Arm), in a frame of their own: on targets without a large workspace
 * only a product that needs them and was given no workspace takes it. */
PFVM__LA_NOINLINE static void pfvm__la_sgemm_stack(int64_t m, int64_t n, int64_t k, float alpha, const float *a,
                                                   int64_t as_m, int64_t as_k, pfvm_la_pack_fn pack, void *user, float *c,
                                                   int64_t ldc, float *ws, const pfvm_la_epi *e)
{
    float stack_b[PFVM_LA_KC * PFVM__LA_NR_MAX], stack_a[2 * PFVM__LA_MR_MAX * PFVM_LA_KC];
    pfvm__la_sgemm_in(m, n, k, alpha, a, as_m, as_k, pack, user, c, ldc, ws, stack_b, stack_a, e);
}

/* pfvm_la_sgemm_ws with an epilogue (e: NULL for none). */
static void pfvm__la_sgemm_ws_e(int64_t m, int64_t n, int64_t k, float alpha, const float *a, int64_t as_m, int64_t as_k,
                                pfvm_la_pack_fn pack, void *user, float *c, int64_t ldc, float *ws, const pfvm_la_epi *e)
{
    if (PFVM__LA_SMALL) { /* constant: the engine's other paths are not compiled in */
        pfvm__la_small(m, n, k, alpha, a, as_m, as_k, pack, user, c, ldc, e);
        return;
    }
    if (PFVM__LA_LEAN) { /* constant: likewise */
        pfvm__la_lean(m, n, k, alpha, a, as_m, as_k, pack, user, c, ldc, ws, e);
        return;
    }
#ifdef PFVM_LA_NO_WORKSPACE
#ifdef PFVM__LA_T4_ASM
    if (!e && pfvm__la_t4_trows(m, n, k, alpha, a, as_m, as_k, pack, user, c, ldc))
        return;
#endif
    /* the workspace reserved at bind holds the small blocks (pfvm_la_sgemm_ws_floats) */
    if (ws) {
        int64_t kc = k < PFVM_LA_KC ? k : PFVM_LA_KC;
        pfvm__la_sgemm_in(m, n, k, alpha, a, as_m, as_k, pack, user, c, ldc, NULL, ws, ws + kc * PFVM__LA_NR_MAX, e);
        return;
    }
    if (m <= 0 || n <= 0 || k <= 0 ||
        (!e && pack == pfvm_la_pack_strided &&
         pfvm__la_gemv(m, n, k, alpha, a, as_m, as_k, (const pfvm_la_strided *)user, c, ldc)))
        return; /* matrix-vector products need no blocks */
#endif
    pfvm__la_sgemm_stack(m, n, k, alpha, a, as_m, as_k, pack, user, c, ldc, ws, e);
}

PFVM_INTERNAL void pfvm_la_sgemm_ws(int64_t m, int64_t n, int64_t k, float alpha, const float *a, int64_t as_m,
                                    int64_t as_k, pfvm_la_pack_fn pack, void *user, float *c, int64_t ldc, float *ws)
{
    pfvm__la_sgemm_ws_e(m, n, k, alpha, a, as_m, as_k, pack, user, c, ldc, ws, NULL);
}

/* Packed A: for each block of rows of the depth (the blocking with a
 * workspace: pfvm__la_blocking's kc does not depend on n), all of A's
 * rows in strips of mr, so the block of rows ic starts ic * kc floats
 * into its slab. */
PFVM_INTERNAL size_t pfvm_la_packed_floats(int64_t m, int64_t k)
{
    if (PFVM__LA_SMALL || PFVM__LA_LEAN) /* A row by row (pfvm__la_small reads it in place) */
        return (size_t)((m < 1 ? 1 : m) * (k < 1 ? 1 : k));
    return (size_t)(pfvm__la_round(m < 1 ? 1 : m, pfvm__la_pick()->mr) * (k < 1 ? 1 : k));
}

PFVM_INTERNAL int pfvm_la_packed_mr(void)
{
    if (PFVM__LA_SMALL || PFVM__LA_LEAN)
        return 1;
    return pfvm__la_pick()->mr;
}

PFVM_INTERNAL int pfvm_la_pack_a_all(int64_t m, int64_t k, const float *a, int64_t as_m, int64_t as_k, float *dst)
{
    const pfvm__la_kern *kn = pfvm__la_pick();
    pfvm__la_blocks bl = pfvm__la_blocking(kn, m, 1, k, 1);
    int64_t pc, mpad = pfvm__la_round(m, kn->mr);
    if (PFVM__LA_SMALL || PFVM__LA_LEAN) { /* rows of k floats, as pfvm__la_small reads A with as_m = k, as_k = 1 */
        int64_t i;
        for (i = 0; i < m; i++)
            for (pc = 0; pc < k; pc++)
                dst[i * k + pc] = a[i * as_m + pc * as_k];
        return 1;
    }
    for (pc = 0; pc < k; pc += bl.kc) {
        int64_t kc = k - pc < bl.kc ? k - pc : bl.kc;
        pfvm__la_pack_a(a + pc * as_k, as_m, as_k, m, kc, kn->mr, dst + mpad * pc);
    }
    return kn->mr;
}

/* pfvm_la_sgemm_packed with an epilogue (e: NULL for none). */
static void pfvm__la_sgemm_packed_e(int64_t m, int64_t n, int64_t k, float alpha, const float *apacked,
                                    pfvm_la_pack_fn pack, void *user, float *c, int64_t ldc, float *ws,
                                    const pfvm_la_epi *e)
{
    const pfvm__la_kern *kn = pfvm__la_pick();
    if (PFVM__LA_SMALL || PFVM__LA_LEAN) {
        pfvm__la_small(m, n, k, alpha, apacked, k, 1, pack, user, c, ldc, e);
        return;
    }
    if (m <= 0 || n <= 0 || k <= 0)
        return;
    pfvm__la_blocked(kn, pfvm__la_blocking(kn, m, n, k, 1), pfvm__la_whole(m, n), k, alpha, NULL, 0, 0, apacked,
                     pfvm__la_round(m, kn->mr), pack, user, c, ldc, ws, NULL, e);
}

PFVM_INTERNAL void pfvm_la_sgemm_packed(int64_t m, int64_t n, int64_t k, float alpha, const float *apacked,
                                        pfvm_la_pack_fn pack, void *user, float *c, int64_t ldc, float *ws)
{
    pfvm__la_sgemm_packed_e(m, n, k, alpha, apacked, pack, user, c, ldc, ws, NULL);
}

PFVM_INTERNAL void pfvm_la_sgemm(int64_t m, int64_t n, int64_t k, float alpha, const float *a, int64_t as_m, int64_t as_k,
                                 pfvm_la_pack_fn pack, void *user, float *c, int64_t ldc)
{
    pfvm_la_sgemm_ws(m, n, k, alpha, a, as_m, as_k, pack, user, c, ldc, NULL);
}

PFVM_INTERNAL float *pfvm_la_workspace(pfvm_kctx *k, int64_t m, int64_t n, int64_t kk, int *failed)
{
    size_t floats = pfvm_la_sgemm_ws_floats(m, n, kk), all;
    *failed = 0;
    if (!k->exec || !floats)
        return NULL;
    if (!pfvm__mul_size(floats * sizeof(float), (size_t)PFVM__KTHREADS(k), &all))
        all = (size_t)-1;
    {
        float *ws = (float *)pfvm_kctx_scratch(k, all);
        *failed = ws == NULL;
        return ws;
    }
}

/* ---- threads ------------------------------------------------------------------
 *
 * A product splits into parts that each compute a rectangle of C with the
 * whole of K (never a split sum), on tiles aligned as in the whole
 * product (rows in kernel heights, columns in kernel widths), so every entry of C takes the same operations in the same
 * order with any number of parts: the same bits. */

/* Below this many multiply-adds a product stays on one thread: handing
 * parts to other threads would cost more than it saves. Measured (round
 * 13): a fork/join costs about 1 us (interp bench-pool) and small products
 * run at about 37 multiply-adds a ns on one thread (shufflenet_v2's 1x1
 * Convs of 451584, 12-13 us, the least of 300 runs), so 65536 (1.8 us) is
 * near the break-even, where half the product's time saves the fork/join
 * (2 us). */
#ifndef PFVM__LA_PAR_MIN
#define PFVM__LA_PAR_MIN 65536.0
#endif

/* The most floats of packed A a row part may have for column strips. */
#ifndef PFVM__LA_STRIP_A_MAX
#define PFVM__LA_STRIP_A_MAX 65536.0
#endif

#ifdef PFVM__HAVE_CLAIMS
PFVM_INTERNAL void pfvm_claims_init(pfvm_claims *q, int parts, int chunks)
{
    int r;
    q->runs = parts <= PFVM_CLAIMS_RUNS ? parts : 1;
    q->chunks = chunks;
    for (r = 0; r < q->runs; r++)
        q->next[r] = (int)((int64_t)chunks * r / q->runs);
}

PFVM_INTERNAL int pfvm_claims_take(pfvm_claims *q, int i)
{
    int k;
    for (k = 0; k < q->runs; k++) {
        int r = (i + k) % q->runs, end = (int)((int64_t)q->chunks * (r + 1) / q->runs);
        if (__atomic_load_n(&q->next[r], __ATOMIC_RELAXED) < end) {
            int c = __atomic_fetch_add(&q->next[r], 1, __ATOMIC_RELAXED);
            if (c < end)
                return c;
        }
    }
    return -1;
}
#endif

/* The tasks take rectangles from counters (pfvm_claims, ops_common.h):
 * each first its own run, so that where the threads keep pace a thread
 * computes the same share of the output in every node (the columns of a
 * product are the positions of the next one's input, or its residual's)
 * and the data stays in that core's cache. Which thread computes a
 * rectangle never changes its bits. */
#ifdef PFVM__HAVE_CLAIMS
#define PFVM__LA_CLAIMS pfvm_claims q;
#define PFVM__LA_CLAIMS_INIT(p) pfvm_claims_init(&(p)->q, (p)->parts, (p)->chunks)
#define PFVM__LA_CLAIM(p, i, c) ((c) = pfvm_claims_take(&(p)->q, (i)))
#define PFVM__LA_NEXT(p, i, c) ((c) = pfvm_claims_take(&(p)->q, (i)))
#define PFVM__LA_MORE(p, c) ((c) >= 0)
#else
#define PFVM__LA_CLAIMS
#define PFVM__LA_CLAIMS_INIT(p) ((void)(p))
#define PFVM__LA_CLAIM(p, i, c) ((c) = (i))
#define PFVM__LA_NEXT(p, i, c) ((c) += (p)->parts)
#define PFVM__LA_MORE(p, c) ((c) < (p)->chunks)
#endif

typedef struct pfvm__la_par {
    const pfvm__la_kern *kn;
    pfvm__la_blocks bl;
    int64_t m, n, k, mpad;
    float alpha;
    const float *a, *apre;
    int64_t as_m, as_k;
    pfvm_la_pack_fn pack;
    void *user;
    float *c, *ws;
    int64_t ldc;
    size_t ws_floats;     /* per part */
    int parts, by_rows;   /* tasks (one workspace each); units of rows (kernel heights) or of columns */
    int64_t unit, units;
    int chunks;           /* rectangles the tasks take in turn */
    int cchunks;          /* by rows: the column strips each row part is cut into (1: whole rows) */
    int reads_b;          /* B read in place (pfvm__la_gemv or pfvm__la_direct) */
    const pfvm_la_epi *e; /* NULL, or the product's epilogue */
    PFVM__LA_CLAIMS       /* the rectangles' counters (where the compiler has atomics) */
} pfvm__la_par;


static void pfvm__la_rect_run(pfvm__la_par *p, int chunk, float *ws)
{
    int64_t u0 = p->units * chunk / p->chunks, u1 = p->units * (chunk + 1) / p->chunks;
    pfvm__la_rect r = pfvm__la_whole(p->m, p->n);
    if (p->by_rows) {
        r.i0 = u0 * p->unit;
        r.i1 = u1 * p->unit < p->m ? u1 * p->unit : p->m;
#ifndef PFVM_NO_THREADS /* (a build without threads has one chunk: its code stays as it was) */
        if (p->cchunks > 1) { /* row part chunk / cchunks, column strip chunk % cchunks in kernel widths */
            int64_t rp = chunk / p->cchunks, cc = chunk % p->cchunks, nr = p->kn->nr, cu = (p->n + nr - 1) / nr;
            u0 = p->units * rp / p->parts, u1 = p->units * (rp + 1) / p->parts;
            r.i0 = u0 * p->unit;
            r.i1 = u1 * p->unit < p->m ? u1 * p->unit : p->m;
            r.j0 = cu * cc / p->cchunks * nr;
            r.j1 = cu * (cc + 1) / p->cchunks * nr < p->n ? cu * (cc + 1) / p->cchunks * nr : p->n;
        }
#endif
    } else {
        r.j0 = u0 * p->unit;
        r.j1 = u1 * p->unit < p->n ? u1 * p->unit : p->n;
    }
    if (r.i0 >= r.i1 || r.j0 >= r.j1)
        return;
    if (p->reads_b) {
        /* the columns j0..j1 of B and C, tiled from j0 as the whole is from 0 */
        pfvm_la_strided b = *(const pfvm_la_strided *)p->user;
        float stack_b[PFVM_LA_KC * PFVM__LA_NR_MAX], stack_a[2 * PFVM__LA_MR_MAX * PFVM_LA_KC];
        int64_t n = r.j1 - r.j0;
        int plain = p->e && pfvm__la_gemv_fits(p->m, p->pack, p->user);
        pfvm_la_epi e_tmp;
        const pfvm_la_epi *eb = pfvm__la_epi_bias_only(p->e, &e_tmp); /* the residual after */
        b.data += r.j0 * b.s_n;
        if (plain)
            pfvm__la_epi_fill(eb, p->m, r.j0, r.j1, p->c, p->ldc);
        if (!pfvm__la_gemv(p->m, n, p->k, p->alpha, p->a, p->as_m, p->as_k, &b, p->c + r.j0, p->ldc))
            pfvm__la_direct(p->kn, p->m, n, p->k, p->alpha, p->a, p->as_m, p->as_k, &b, p->c + r.j0, p->ldc, stack_a,
                            stack_b, eb);
        if (plain)
            pfvm__la_epi_clamp(eb, p->m, r.j0, r.j1, p->c, p->ldc);
        pfvm__la_epi_res(p->e, p->m, r.j0, r.j1, p->c, p->ldc);
        return;
    }
    pfvm__la_blocked(p->kn, p->bl, r, p->k, p->alpha, p->a, p->as_m, p->as_k, p->apre, p->mpad, p->pack, p->user, p->c,
                     p->ldc, ws, ws + p->bl.kc * p->bl.nc, p->e);
}

/* Task i: rectangles until none is left, in workspace i. */
static void pfvm__la_part(void *ctx, int i)
{
    pfvm__la_par *p = (pfvm__la_par *)ctx;
    float *ws = p->ws ? p->ws + p->ws_floats * (size_t)i : NULL;
    int c;
    for (PFVM__LA_CLAIM(p, i, c); PFVM__LA_MORE(p, c); PFVM__LA_NEXT(p, i, c))
        pfvm__la_rect_run(p, c, ws);
}

/* The busiest of `parts` threads' share of n rows or columns cut in units
 * of `unit`, relative to an even split: 1 is perfect. */
static float pfvm__la_balance(int64_t n, int64_t unit, int parts)
{
    int64_t units = (n + unit - 1) / unit, most = (units + parts - 1) / parts * unit;
    return (float)(most < n ? most : n) * (float)parts / (float)n; /* float: no soft double on Cortex-M */
}

/* The multiply-adds the product's kernels compute: the tiles' (rows and
 * columns rounded up to the kernel's mr x nr: a one-column product, such
 * as a squeeze-excite 1x1 Conv on a 1x1 plane, computes nr columns and
 * packs B that wide), or m x n x k where B is read in place (the
 * matrix-vector loops, pfvm__la_direct). */
static float pfvm__la_work(const pfvm__la_par *p)
{
    if (p->reads_b)
        return (float)p->m * (float)p->n * (float)p->k;
    return (float)pfvm__la_round(p->m, p->kn->mr) * (float)pfvm__la_round(p->n, p->kn->nr) * (float)p->k;
}

/* Splits the product into k's threads where it pays (1: run it whole):
 * by columns in widths of the kernel (no packing repeated with Conv's
 * packed weights), by rows in kernel heights where columns are too few
 * to share well (each row part packs its own copy of B, so rows must
 * balance clearly better). */
static int pfvm__la_split(pfvm__la_par *p, int threads)
{
    int64_t mr = p->kn->mr, nr = p->kn->nr;
    if (threads <= 1 || pfvm__la_work(p) < (float)PFVM__LA_PAR_MIN || (!p->reads_b && !p->ws))
        return 1; /* blocks on the stack: no workspace to give each part */
    p->by_rows = !p->reads_b && p->ws &&
                 pfvm__la_balance(p->m, mr, threads) + 0.1f < pfvm__la_balance(p->n, nr, threads);
    p->unit = p->by_rows ? mr : nr;
    p->units = p->by_rows ? (p->m + mr - 1) / mr : (p->n + nr - 1) / nr;
    p->parts = p->units < threads ? (int)p->units : threads;
    /* more rectangles than tasks, for the balance (a thread the OS keeps
     * waiting leaves its share to the others), where that repeats no
     * packing: where whole row parts balance badly (64 rows are 36 and
     * 28), row parts cut into column strips that the threads take as they
     * finish, each row part packing the whole of B once as one rectangle
     * would, A packed before; each strip reads its row part's A again
     * (about 4% more work on mobilenet_v2 where rows balance anyway), so
     * only where that stays in L2 */
    p->cchunks = 1;
    if (p->by_rows && p->apre && pfvm__la_balance(p->m, mr, threads) > 1.05f &&
        (float)p->m / (float)p->parts * (float)p->k <= (float)PFVM__LA_STRIP_A_MAX) {
        int64_t cu = (p->n + nr - 1) / nr;
        p->cchunks = cu < 4 ? (int)cu : 4;
    }
    p->chunks = p->by_rows ? p->parts * p->cchunks : p->units < 4 * p->parts ? (int)p->units : 4 * p->parts;
    PFVM__LA_CLAIMS_INIT(p);
    return p->parts;
}

static void pfvm__la_run(pfvm_kctx *k, pfvm__la_par *p)
{
    int parts;
    if (PFVM__LA_SMALL || PFVM__LA_LEAN) { /* one thread, A in place or packed row by row */
        if (p->apre)
            pfvm__la_small(p->m, p->n, p->k, p->alpha, p->apre, p->k, 1, p->pack, p->user, p->c, p->ldc, p->e);
        else if (PFVM__LA_LEAN) /* the tile, the matrix-vector loops or the loop nest */
            pfvm__la_lean(p->m, p->n, p->k, p->alpha, p->a, p->as_m, p->as_k, p->pack, p->user, p->c, p->ldc, p->ws,
                          p->e);
        else
            pfvm__la_small(p->m, p->n, p->k, p->alpha, p->a, p->as_m, p->as_k, p->pack, p->user, p->c, p->ldc, p->e);
        return;
    }
    if (p->m <= 0 || p->n <= 0 || p->k <= 0)
        return;
    p->kn = pfvm__la_pick();
    p->bl = pfvm__la_blocking(p->kn, p->m, p->n, p->k, 1);
    p->mpad = pfvm__la_round(p->m, p->kn->mr);
    p->reads_b = !p->apre && pfvm__la_reads_b(p->kn, p->m, p->pack, p->user);
    p->ws_floats = pfvm_la_sgemm_ws_floats(p->m, p->n, p->k);
    parts = pfvm__la_split(p, k ? PFVM__KTHREADS(k) : 1);
    if (parts > 1)
        pfvm_kctx_parallel(k, parts, pfvm__la_part, p);
    else if (p->apre)
        pfvm__la_sgemm_packed_e(p->m, p->n, p->k, p->alpha, p->apre, p->pack, p->user, p->c, p->ldc, p->ws, p->e);
    else
        pfvm__la_sgemm_ws_e(p->m, p->n, p->k, p->alpha, p->a, p->as_m, p->as_k, p->pack, p->user, p->c, p->ldc, p->ws,
                            p->e);
}

PFVM_INTERNAL void pfvm_la_sgemm_mt(pfvm_kctx *k, int64_t m, int64_t n, int64_t kk, float alpha, const float *a,
                                    int64_t as_m, int64_t as_k, pfvm_la_pack_fn pack, void *user, float *c, int64_t ldc,
                                    float *ws)
{
    pfvm__la_par p;
    memset(&p, 0, sizeof p);
    p.m = m, p.n = n, p.k = kk, p.alpha = alpha;
    p.a = a, p.as_m = as_m, p.as_k = as_k;
    p.pack = pack, p.user = user, p.c = c, p.ldc = ldc, p.ws = ws;
    pfvm__la_run(k, &p);
}

PFVM_INTERNAL void pfvm_la_sgemm_packed_mt(pfvm_kctx *k, int64_t m, int64_t n, int64_t kk, float alpha,
                                           const float *apacked, pfvm_la_pack_fn pack, void *user, float *c, int64_t ldc,
                                           float *ws)
{
    pfvm__la_par p;
    memset(&p, 0, sizeof p);
    p.m = m, p.n = n, p.k = kk, p.alpha = alpha;
    p.apre = apacked;
    p.pack = pack, p.user = user, p.c = c, p.ldc = ldc, p.ws = ws;
    pfvm__la_run(k, &p);
}

PFVM_INTERNAL void pfvm_la_sgemm_epi_mt(pfvm_kctx *k, int64_t m, int64_t n, int64_t kk, float alpha, const float *a,
                                        int64_t as_m, int64_t as_k, const float *apacked, pfvm_la_pack_fn pack, void *user,
                                        float *c, int64_t ldc, float *ws, const pfvm_la_epi *e)
{
    pfvm__la_par p;
    memset(&p, 0, sizeof p);
    p.m = m, p.n = n, p.k = kk, p.alpha = alpha;
    p.a = a, p.as_m = as_m, p.as_k = as_k, p.apre = apacked;
    p.pack = pack, p.user = user, p.c = c, p.ldc = ldc, p.ws = ws, p.e = e;
    if (e && m > 0 && n > 0 && kk <= 0) { /* no product: C is the epilogue of zero */
        pfvm_la_epi e_tmp;
        const pfvm_la_epi *eb = pfvm__la_epi_bias_only(e, &e_tmp);
        pfvm__la_epi_fill(eb, m, 0, n, c, ldc);
        pfvm__la_epi_clamp(eb, m, 0, n, c, ldc);
        pfvm__la_epi_res(e, m, 0, n, c, ldc);
        return;
    }
    pfvm__la_run(k, &p);
}

#ifdef PFVM__LA_CONV_S1
/* A stride-1 convolution whose output rows are as wide as its input's
 * (C's column q = oy * w + ox), convolved with no im2col: column q of
 * B's row p (input channel ci, tap t) is x[ci * h * w + q + dy * w + dx]
 * where it is inside the plane, zero in the padding; the kernels
 * (pfvm__la_cv_avx512) read it in place, each tap's lanes in the padding
 * masked. The loops are the blocked engine's (pfvm__la_blocked with A
 * packed, pfvm__la_block): blocks of K as A was packed, rows of A in
 * blocks of PFVM__LA_MC, 12 x 32 tiles, each entry's products summed in
 * chunks of PFVM_LA_KC in order, and the same epilogue: the same bits as
 * the im2col product. */
#define PFVM__LA_CV_TAPS 25 /* the largest window (5 x 5, or 3 x 7...) */
#define PFVM__LA_CV_NR 32   /* the kernel's columns */

typedef struct pfvm__la_cvpar {
    const pfvm_la_conv *cv;
    int64_t m, n, k, kcb, mpad;
    const float *apre;
    float *c;
    const pfvm_la_epi *e;
    int taps;
    ptrdiff_t dy[PFVM__LA_CV_TAPS], dx[PFVM__LA_CV_TAPS]; /* tap t's shift in rows and columns */
    int parts, by_rows, chunks;                           /* the split (pfvm__la_split's) */
    int64_t unit, units;
    PFVM__LA_CLAIMS
} pfvm__la_cvpar;

/* Tile j's masks: mk[2t] and mk[2t + 1], tap t's lanes (columns j..j+15,
 * j+16..j+31) inside the input plane and before column n: the lanes
 * whose shifted row is inside (one mask per row of the window) and whose
 * shifted column is (one per column of it), ANDed per tap. */
static void pfvm__la_cv_masks(const pfvm__la_cvpar *p, int64_t j, __mmask16 *mk)
{
    const int64_t w = p->cv->w, h = p->cv->h;
    const int kw = p->cv->kw, kh = p->cv->kh;
    uint32_t rows[PFVM__LA_CV_TAPS], cols[PFVM__LA_CV_TAPS];
    int64_t oy = j / w, ox = j - oy * w;
    int l, t, lanes = p->n - j < PFVM__LA_CV_NR ? (int)(p->n - j) : PFVM__LA_CV_NR;
    for (t = 0; t < kh; t++)
        rows[t] = 0;
    for (t = 0; t < kw; t++)
        cols[t] = 0;
    for (l = 0; l < lanes; l++) {
        for (t = 0; t < kh; t++) { /* taps t * kw.. shift rows by dy[t * kw] */
            int64_t iy = oy + p->dy[t * kw];
            rows[t] |= (uint32_t)(iy >= 0 && iy < h) << l;
        }
        for (t = 0; t < kw; t++) {
            int64_t ix = ox + p->dx[t];
            cols[t] |= (uint32_t)(ix >= 0 && ix < w) << l;
        }
        if (++ox == w) {
            ox = 0;
            oy++;
        }
    }
    for (t = 0; t < p->taps; t++) {
        uint32_t bits = rows[t / kw] & cols[t % kw];
        mk[2 * t] = (__mmask16)(bits & 0xffffu);
        mk[2 * t + 1] = (__mmask16)(bits >> 16);
    }
}

/* The convolution's tiles (pfvm__la_edge_tile's run): pfvm__la_chunks
 * for its kernels, over the strip at ap. */
typedef struct pfvm__la_cv_ctx {
    int64_t kc;
    const float *ap, *xb;
    const ptrdiff_t *off;
    const unsigned char *tap;
    const __mmask16 *mk;
} pfvm__la_cv_ctx;

static void pfvm__la_cv_run(const void *ctx, int four, int64_t r, float *c, int64_t ldc, const float *bias,
                            const float *cl)
{
    const pfvm__la_cv_ctx *x = (const pfvm__la_cv_ctx *)ctx;
    pfvm__la_cv_fn fn = four ? pfvm__la_cv_avx512_4 : pfvm__la_cv_avx512;
    int64_t p, q;
    for (p = 0; p < x->kc; p += q) {
        q = x->kc - p < PFVM_LA_KC ? x->kc - p : PFVM_LA_KC;
        fn(q, x->ap + r + p * 12, x->xb, x->off + p, x->tap + p, x->mk, c, ldc, 1.0f, p == 0 ? bias : NULL,
           p + q >= x->kc ? cl : NULL);
    }
}

/* One mr x nr tile (at most 12 x 32), as the engine's (pfvm__la_edge_tile). */
static void pfvm__la_cv_tile(int64_t kc, const float *ap, const float *xb, const ptrdiff_t *off,
                             const unsigned char *tap, const __mmask16 *mk, float *c, int64_t ldc, int64_t mr,
                             int64_t nr, const float *bias, const float *cl)
{
    pfvm__la_cv_ctx x;
    x.kc = kc, x.ap = ap, x.xb = xb, x.off = off, x.tap = tap, x.mk = mk;
    pfvm__la_edge_tile(pfvm__la_cv_run, &x, 12, PFVM__LA_CV_NR, c, ldc, mr, nr, bias, cl);
}

/* Rows i0..i1 (of whole strips) and columns j0..j1 (of whole tiles) of C. */
static void pfvm__la_cv_rect(const pfvm__la_cvpar *p, pfvm__la_rect r)
{
    const pfvm_la_epi *e = p->e;
    const float *res = PFVM__LA_RES(e);
    const int64_t hw = p->cv->h * p->cv->w, ldc = p->n;
    ptrdiff_t off[PFVM__LA_KCW];
    unsigned char tap[PFVM__LA_KCW];
    __mmask16 mk[2 * PFVM__LA_CV_TAPS];
    int64_t pc, ic, i, j, q;
    for (pc = 0; pc < p->k; pc += p->kcb) {
        int64_t kc = p->k - pc < p->kcb ? p->k - pc : p->kcb;
        int init = pc == 0, last = pc + kc >= p->k;
        const float *cl = last && !res ? PFVM__LA_CL(e) : NULL; /* with res: clamped after it */
        int silu = last && PFVM__LA_SILU(e);
        float *pend = NULL; /* the SiLU one tile late, as pfvm__la_block does */
        int64_t pend_mr = 0, pend_nr = 0;
        for (q = 0; q < kc; q++) { /* row pc + q of B: input channel, tap */
            int64_t ci = (pc + q) / p->taps;
            int t = (int)(pc + q - ci * p->taps);
            off[q] = (ptrdiff_t)(ci * hw) + p->dy[t] * (ptrdiff_t)p->cv->w + p->dx[t];
            tap[q] = (unsigned char)t;
        }
        for (ic = r.i0; ic < r.i1; ic += PFVM__LA_MC)
            for (j = r.j0; j < r.j1; j += PFVM__LA_CV_NR) {
                int64_t nr = r.j1 - j < PFVM__LA_CV_NR ? r.j1 - j : PFVM__LA_CV_NR;
                int64_t iend = r.i1 - ic < PFVM__LA_MC ? r.i1 : ic + PFVM__LA_MC;
                pfvm__la_cv_masks(p, j, mk);
                for (i = ic; i < iend; i += 12) {
                    int64_t mr = iend - i < 12 ? iend - i : 12;
                    const float *bias = !init ? NULL : e->bias ? e->bias + i : pfvm__la_zero_bias;
                    float *ct = p->c + i * ldc + j;
#if defined(PFVM__STORE_RESIDUAL) && defined(__GNUC__)
                    if (last && res) { /* the tile's residual rows fetched while it computes */
                        int64_t rr;
                        for (rr = 0; rr < mr; rr++) {
                            __builtin_prefetch(res + (i + rr) * ldc + j);
                            __builtin_prefetch(res + (i + rr) * ldc + j + nr - 1);
                        }
                    }
#endif
                    pfvm__la_cv_tile(kc, p->apre + p->mpad * pc + i * kc, p->cv->x + j, off, tap, mk, ct, ldc, mr, nr,
                                     bias, cl);
#ifdef PFVM__STORE_RESIDUAL
                    if (last && res)
                        pfvm__la_res_tile(ct, ldc, res + i * ldc + j, mr, nr, PFVM__LA_CL(e));
#endif
#ifdef PFVM__STORE_SILU
                    if (silu) {
                        if (pend)
                            pfvm_ew_silu_rows(pend, ldc, pend_mr, (ptrdiff_t)pend_nr);
                        pend = ct;
                        pend_mr = mr;
                        pend_nr = nr;
                    }
#endif
                }
            }
#ifdef PFVM__STORE_SILU
        if (pend)
            pfvm_ew_silu_rows(pend, ldc, pend_mr, (ptrdiff_t)pend_nr);
#else
        (void)pend, (void)pend_mr, (void)pend_nr, (void)silu;
#endif
    }
}

/* Chunk c of the split (pfvm__la_rect_run's units, whole rows or columns). */
static void pfvm__la_cv_chunk(pfvm__la_cvpar *p, int chunk)
{
    int64_t u0 = p->units * chunk / p->chunks, u1 = p->units * (chunk + 1) / p->chunks;
    pfvm__la_rect r = pfvm__la_whole(p->m, p->n);
    if (p->by_rows) {
        r.i0 = u0 * p->unit;
        r.i1 = u1 * p->unit < p->m ? u1 * p->unit : p->m;
    } else {
        r.j0 = u0 * p->unit;
        r.j1 = u1 * p->unit < p->n ? u1 * p->unit : p->n;
    }
    if (r.i0 < r.i1 && r.j0 < r.j1)
        pfvm__la_cv_rect(p, r);
}

static void pfvm__la_cv_part(void *ctx, int i)
{
    pfvm__la_cvpar *p = (pfvm__la_cvpar *)ctx;
    int c;
    for (PFVM__LA_CLAIM(p, i, c); PFVM__LA_MORE(p, c); PFVM__LA_NEXT(p, i, c))
        pfvm__la_cv_chunk(p, c);
}

PFVM_INTERNAL int pfvm_la_conv_s1(pfvm_kctx *k, const pfvm_la_conv *cv, int64_t m, const float *apacked, float *c,
                                  const pfvm_la_epi *e)
{
    const pfvm__la_kern *kn = pfvm__la_pick();
    pfvm__la_cvpar p;
    int t, threads = k ? PFVM__KTHREADS(k) : 1;
    if (!apacked || !e || kn->mr != 12 || kn->nr != PFVM__LA_CV_NR || !pfvm__have_avx512() || m < 1 || cv->cin < 1 ||
        cv->h < 1 || cv->w < 1 || cv->oh < 1 || cv->kh < 1 || cv->kw < 1 || cv->kh * cv->kw > PFVM__LA_CV_TAPS ||
        (PFVM__LA_SILU(e) && (PFVM__LA_CL(e) || PFVM__LA_RES(e))))
        return 0;
    memset(&p, 0, sizeof p);
    p.cv = cv;
    p.m = m;
    p.n = cv->oh * cv->w;
    p.taps = cv->kh * cv->kw;
    p.k = cv->cin * p.taps;
    p.kcb = pfvm__la_blocking(kn, m, 1, p.k, 1).kc; /* as pfvm_la_pack_a_all packed A */
    p.mpad = pfvm__la_round(m, 12);
    p.apre = apacked;
    p.c = c;
    p.e = e;
    for (t = 0; t < p.taps; t++) {
        p.dy[t] = (ptrdiff_t)(t / cv->kw) * cv->dh - cv->pt;
        p.dx[t] = (ptrdiff_t)(t % cv->kw) * cv->dw - cv->pl;
    }
    /* the split: by columns in tiles, by rows in strips where columns are
     * too few to share well (as pfvm__la_split; nothing is packed, so a
     * row part repeats no work) */
    p.parts = 1;
    if (threads > 1 && (float)m * (float)p.n * (float)p.k >= (float)PFVM__LA_PAR_MIN) {
        p.by_rows = pfvm__la_balance(m, 12, threads) + 0.1f < pfvm__la_balance(p.n, PFVM__LA_CV_NR, threads);
        p.unit = p.by_rows ? 12 : PFVM__LA_CV_NR;
        p.units = (p.by_rows ? m + 11 : p.n + PFVM__LA_CV_NR - 1) / p.unit;
        p.parts = p.units < threads ? (int)p.units : threads;
        p.chunks = p.units < 4 * p.parts ? (int)p.units : 4 * p.parts;
        PFVM__LA_CLAIMS_INIT(&p);
    }
    if (p.parts > 1) {
        pfvm_kctx_parallel(k, p.parts, pfvm__la_cv_part, &p);
        return 1;
    }
    pfvm__la_cv_rect(&p, pfvm__la_whole(m, p.n));
    return 1;
}

/* ---- pfvm_la_conv_lanes: output channels in the lanes ----
 *
 * A tile is 64 output channels (four vectors) x 7 output positions of one
 * output row (7 broadcasts of the padded input): 28 accumulators, four
 * weight loads and seven broadcasts per step of K for 28 fmas. The
 * positions are the output row's, so a plane whose width is a multiple
 * of 7 computes no lane it does not store (a 7x7 plane fills two
 * 32-position tiles of the engine to 64 for 49); another width's last
 * tile of each row computes 7 positions and stores the row's rest (a
 * 13x13 plane: 182 computed for 169, the engine's tiles 192), its extra
 * positions reading the zeros of a padded row made that much wider. */
#define PFVM__LA_LN_R 7
#define PFVM__LA_LN_TILE (PFVM__LA_LN_R * PFVM_LA_LANES_M)

/* Tiles whose running entries are kept while K's chunks pass over them
 * (28 KB: in L1 with the chunk's weights in L2): a large plane's tiles go
 * through K a group at a time, so its entries never leave the caches. */
#ifndef PFVM__LA_LN_GROUP
#define PFVM__LA_LN_GROUP 16
#endif

/* Tiles of 7 positions per output row (the last one short where the
 * width is not a multiple of 7). */
static int64_t pfvm__la_ln_per_row(const pfvm_la_conv *cv);

/* Tiles at a time: the plane's tiles in as few groups of at most
 * PFVM__LA_LN_GROUP as there can be, of equal sizes (the units of the
 * split: a block's groups, so equal parts of the work). */
static int64_t pfvm__la_ln_group(const pfvm_la_conv *cv)
{
    int64_t tiles = cv->oh * pfvm__la_ln_per_row(cv);
    int64_t groups = (tiles + PFVM__LA_LN_GROUP - 1) / PFVM__LA_LN_GROUP;
    return groups < 1 ? 1 : (tiles + groups - 1) / groups;
}

/* The most parts pfvm_la_conv_lanes splits into (each has its running
 * entries in the workspace). */
#define PFVM__LA_LN_PARTS_MAX 16

/* Units of the split: blocks of 64 output channels x groups of tiles. */
static int64_t pfvm__la_ln_units(const pfvm_la_conv *cv, int64_t m)
{
    int64_t tiles = cv->oh * pfvm__la_ln_per_row(cv), group = pfvm__la_ln_group(cv);
    return m / PFVM_LA_LANES_M * ((tiles + group - 1) / group);
}

static int64_t pfvm__la_ln_per_row(const pfvm_la_conv *cv)
{
    return (cv->ow + PFVM__LA_LN_R - 1) / PFVM__LA_LN_R;
}

/* Columns of a padded input row: every position of the row's tiles'
 * windows, the short tile's extra positions too. */
static int64_t pfvm__la_ln_pw(const pfvm_la_conv *cv)
{
    return (pfvm__la_ln_per_row(cv) * PFVM__LA_LN_R - 1) * cv->sw + (int64_t)(cv->kw - 1) * cv->dw + 1;
}

static const float pfvm__la_ln_zero[PFVM_LA_LANES_M] = {0.0f};

#define PFVM__LA_LN_ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6)
#define PFVM__LA_LN_DECL(r) __m512 a##r##0, a##r##1, a##r##2, a##r##3;
#define PFVM__LA_LN_ZERO(r) a##r##0 = a##r##1 = a##r##2 = a##r##3 = _mm512_setzero_ps();
/* A step in two halves, channels 0-31 then 32-63, each broadcast loaded
 * once a half: 28 running entries, two weights and a broadcast fit the 32
 * registers (all four weights, 33, left gcc spilling an entry through the
 * stack every step: 194 against 202 GFLOP/s, layer3's shape, one core).
 * The second half reads the step's row through xt, made opaque by an
 * empty asm, so the compiler loads the broadcasts again instead of
 * keeping seven live across the halves. Each entry's fmas keep their
 * order: the same bits. */
#define PFVM__LA_LN_FRESH(ptr) __asm__("" : "+r"(ptr))
#define PFVM__LA_LN_LO(r, SW)                                     \
    {                                                             \
        const __m512 xv = _mm512_set1_ps(xs[(r) * (SW)]);         \
        a##r##0 = _mm512_fmadd_ps(w0, xv, a##r##0);               \
        a##r##1 = _mm512_fmadd_ps(w1, xv, a##r##1);               \
    }
#define PFVM__LA_LN_HI(r, SW)                                     \
    {                                                             \
        const __m512 xv = _mm512_set1_ps(xt[(r) * (SW)]);         \
        a##r##2 = _mm512_fmadd_ps(w2, xv, a##r##2);               \
        a##r##3 = _mm512_fmadd_ps(w3, xv, a##r##3);               \
    }
#define PFVM__LA_LN_LO1(r) PFVM__LA_LN_LO(r, 1)
#define PFVM__LA_LN_HI1(r) PFVM__LA_LN_HI(r, 1)
#define PFVM__LA_LN_LO2(r) PFVM__LA_LN_LO(r, 2)
#define PFVM__LA_LN_HI2(r) PFVM__LA_LN_HI(r, 2)
/* the chunk's sums added to the tile's running entries (fma(1, s, c)) */
#define PFVM__LA_LN_ADD(r)                                                         \
    {                                                                              \
        float *tr = acc + (r) * PFVM_LA_LANES_M;                                   \
        _mm512_storeu_ps(tr, _mm512_add_ps(a##r##0, _mm512_loadu_ps(tr)));         \
        _mm512_storeu_ps(tr + 16, _mm512_add_ps(a##r##1, _mm512_loadu_ps(tr + 16))); \
        _mm512_storeu_ps(tr + 32, _mm512_add_ps(a##r##2, _mm512_loadu_ps(tr + 32))); \
        _mm512_storeu_ps(tr + 48, _mm512_add_ps(a##r##3, _mm512_loadu_ps(tr + 48))); \
    }
/* kc steps of K (at most PFVM_LA_KC) of one tile: w the packed weights
 * at the chunk (64 a step), xb the tile's first position in the padded
 * input, off[p] step p's shift in it (channel, row and column of the
 * window), acc the tile's 7 x 64 running entries. */
#define PFVM__LA_LN_BODY(LO, HI)                                      \
    {                                                                 \
        int64_t p;                                                    \
        PFVM__LA_LN_ROWS(PFVM__LA_LN_DECL)                            \
        PFVM__LA_LN_ROWS(PFVM__LA_LN_ZERO)                            \
        for (p = 0; p < kc; p++, w += PFVM_LA_LANES_M) {              \
            const float *xs = xb + off[p], *xt = xs;                  \
            {                                                         \
                const __m512 w0 = _mm512_loadu_ps(w);                 \
                const __m512 w1 = _mm512_loadu_ps(w + 16);            \
                PFVM__LA_LN_ROWS(LO)                                  \
            }                                                         \
            PFVM__LA_LN_FRESH(xt);                                    \
            {                                                         \
                const __m512 w2 = _mm512_loadu_ps(w + 32);            \
                const __m512 w3 = _mm512_loadu_ps(w + 48);            \
                PFVM__LA_LN_ROWS(HI)                                  \
            }                                                         \
        }                                                             \
        PFVM__LA_LN_ROWS(PFVM__LA_LN_ADD)                             \
    }
typedef void (*pfvm__la_ln_fn)(int64_t kc, const float *w, const float *xb, const ptrdiff_t *off, float *acc);
__attribute__((target("avx512f"))) static void pfvm__la_ln_s1(int64_t kc, const float *w, const float *xb,
                                                               const ptrdiff_t *off, float *acc)
PFVM__LA_LN_BODY(PFVM__LA_LN_LO1, PFVM__LA_LN_HI1)
__attribute__((target("avx512f"))) static void pfvm__la_ln_s2(int64_t kc, const float *w, const float *xb,
                                                               const ptrdiff_t *off, float *acc)
PFVM__LA_LN_BODY(PFVM__LA_LN_LO2, PFVM__LA_LN_HI2)
#undef PFVM__LA_LN_BODY
#undef PFVM__LA_LN_ADD
#undef PFVM__LA_LN_HI2
#undef PFVM__LA_LN_LO2
#undef PFVM__LA_LN_HI1
#undef PFVM__LA_LN_LO1
#undef PFVM__LA_LN_HI
#undef PFVM__LA_LN_LO
#undef PFVM__LA_LN_FRESH
#undef PFVM__LA_LN_ZERO
#undef PFVM__LA_LN_DECL
#undef PFVM__LA_LN_ROWS

PFVM_INTERNAL void pfvm_la_pack_lanes(int64_t m, int64_t k, const float *a, float *dst)
{
    int64_t b, p, j;
    for (b = 0; b + PFVM_LA_LANES_M <= m; b += PFVM_LA_LANES_M)
        for (p = 0; p < k; p++)
            for (j = 0; j < PFVM_LA_LANES_M; j++)
                *dst++ = a[(b + j) * k + p];
}

typedef struct pfvm__la_lnpar {
    const pfvm_la_conv *cv;
    const float *wl, *xp; /* packed weights; the padded input (cin planes of ph x pw) */
    const ptrdiff_t *off; /* step p of K's shift in xp */
    float *bufs;          /* per part: a group of tiles' 7 x 64 running entries */
    float *c, *xw;        /* xw: xp, written by pfvm__la_ln_pad */
    const pfvm_la_epi *e;
    pfvm__la_ln_fn fn;
    int64_t m, k, n, tiles, group, pw, ph; /* group: tiles at a time (pfvm__la_ln_group) */
    int parts, chunks; /* chunks: the units (pfvm__la_ln_unit) */
    PFVM__LA_CLAIMS
} pfvm__la_lnpar;

/* The running entries of 8 output channels at one tile (bt: position r's
 * at bt[64 r], r < 7) stored to C's 8 rows (n apart, at c) after the
 * epilogue: the residual (res, laid out as C), then the clamp
 * (pfvm__la_clamp1's two forms, as the kernels' PFVM__LA_CLAMP); rn
 * positions (the row's rest in its last tile). An 8 x 8 transpose of the
 * positions (the eighth zero) and masked stores. */
__attribute__((target("avx512f"))) static void pfvm__la_ln_store8(const float *bt, float *c, int64_t n,
                                                                   const float *res, int rn, const float *cl)
{
    const __m256i keep = _mm256_cmpgt_epi32(_mm256_set1_epi32(rn), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    __m256 r[8], col[8]; /* col[ch]: channel ch's positions */
    int ch;
    for (ch = 0; ch < 7; ch++)
        r[ch] = _mm256_loadu_ps(bt + 64 * ch);
    r[7] = _mm256_setzero_ps();
    pfvm__la_tr8(r, col);
    for (ch = 0; ch < 8; ch++) {
        __m256 v = col[ch];
        if (res)
            v = _mm256_add_ps(v, _mm256_maskload_ps(res + ch * n, keep));
        if (cl) {
            const __m256 lo = _mm256_set1_ps(cl[0]), hi = _mm256_set1_ps(cl[1]);
            v = _mm256_min_ps(hi, cl[2] != 0.0f ? _mm256_max_ps(v, lo) : _mm256_max_ps(lo, v));
        }
        _mm256_maskstore_ps(c + ch * n, keep, v);
    }
}

/* Tiles [t0, t1) of block b of 64 output channels: each through K in
 * chunks, then the epilogue's store, transposed to C's channel rows. */
static void pfvm__la_ln_tiles(const pfvm__la_lnpar *p, int64_t b, int64_t t0, int64_t t1, float *buf)
{
    const pfvm_la_conv *cv = p->cv;
    const pfvm_la_epi *e = p->e;
    const float *bias = e->bias ? e->bias + b * PFVM_LA_LANES_M : pfvm__la_ln_zero, *res = PFVM__LA_RES(e);
    const float *cl = PFVM__LA_CL(e);
    const int64_t per_row = pfvm__la_ln_per_row(cv);
    int64_t t, r, j, p0;
    for (t = t0; t < t1; t++) /* each entry starts at its bias */
        for (r = 0; r < PFVM__LA_LN_R; r++)
            memcpy(buf + (t - t0) * PFVM__LA_LN_TILE + r * PFVM_LA_LANES_M, bias, sizeof(float) * PFVM_LA_LANES_M);
    for (p0 = 0; p0 < p->k; p0 += PFVM_LA_KC) {
        int64_t kc = p->k - p0 < PFVM_LA_KC ? p->k - p0 : PFVM_LA_KC;
        const float *w = p->wl + (b * p->k + p0) * PFVM_LA_LANES_M;
        for (t = t0; t < t1; t++) {
            int64_t oy = t / per_row, ox = t % per_row * PFVM__LA_LN_R;
            p->fn(kc, w, p->xp + oy * cv->sh * p->pw + ox * cv->sw, p->off + p0, buf + (t - t0) * PFVM__LA_LN_TILE);
        }
    }
    for (t = t0; t < t1; t++) {
        int64_t oy = t / per_row, ox = t % per_row * PFVM__LA_LN_R, q = oy * cv->ow + ox; /* along the output's rows */
        int rn = (int)(cv->ow - ox < PFVM__LA_LN_R ? cv->ow - ox : PFVM__LA_LN_R); /* the row's last tile: its rest */
        for (j = 0; j < PFVM_LA_LANES_M; j += 8) {
            int64_t row = b * PFVM_LA_LANES_M + j;
            pfvm__la_ln_store8(buf + (t - t0) * PFVM__LA_LN_TILE + j, p->c + row * p->n + q, p->n,
                               res ? res + row * p->n + q : NULL, rn, cl);
        }
    }
}

/* Unit u of the split: block u / groups of 64 output channels, its
 * group of tiles u % groups, then their SiLU (the group's positions are
 * consecutive in C's rows: tiles run along the output's rows). */
static void pfvm__la_ln_unit(const pfvm__la_lnpar *p, int64_t u, float *buf)
{
    const int64_t groups = (p->tiles + p->group - 1) / p->group, b = u / groups, t0 = u % groups * p->group;
    const int64_t t1 = p->tiles - t0 < p->group ? p->tiles : t0 + p->group;
    pfvm__la_ln_tiles(p, b, t0, t1, buf);
#ifdef PFVM__STORE_SILU
    if (PFVM__LA_SILU(p->e)) {
        const int64_t per_row = pfvm__la_ln_per_row(p->cv), ow = p->cv->ow;
        int64_t q0 = t0 / per_row * ow + t0 % per_row * PFVM__LA_LN_R;
        int64_t q1 = t1 == p->tiles ? p->n : t1 / per_row * ow + t1 % per_row * PFVM__LA_LN_R;
        pfvm_ew_silu_rows(p->c + b * PFVM_LA_LANES_M * p->n + q0, p->n, PFVM_LA_LANES_M, (ptrdiff_t)(q1 - q0));
    }
#endif
}

static void pfvm__la_ln_part(void *ctx, int i)
{
    pfvm__la_lnpar *p = (pfvm__la_lnpar *)ctx;
    int u;
    /* units taken as pfvm__la_part's rectangles: a thread the OS keeps
     * waiting leaves its units to the others; each unit's entries go
     * through the taking task's buffer, so which task takes it never
     * changes its bits */
    for (PFVM__LA_CLAIM(p, i, u); PFVM__LA_MORE(p, u); PFVM__LA_NEXT(p, i, u))
        pfvm__la_ln_unit(p, u, p->bufs + (int64_t)i * p->group * PFVM__LA_LN_TILE);
}

/* The input's channels [c0, c1) into the padded planes: its rows inside
 * them, the zeros the window reads outside it around them (columns
 * [x0, x1) of a padded row are the input's columns [x0 - pl, x1 - pl)). */
static void pfvm__la_ln_pad(const pfvm__la_lnpar *p, int64_t c0, int64_t c1)
{
    const pfvm_la_conv *cv = p->cv;
    int64_t ph = p->ph, pw = p->pw, ci, y, plane = ph * pw;
    int64_t x0 = cv->pl < pw ? cv->pl : pw, x1 = cv->pl + cv->w < pw ? cv->pl + cv->w : pw;
    for (ci = c0; ci < c1; ci++) {
        const float *src = cv->x + ci * cv->h * cv->w;
        float *dst = p->xw + ci * plane;
        for (y = 0; y < ph; y++, dst += pw) {
            int64_t iy = y - cv->pt;
            if (iy < 0 || iy >= cv->h || x1 <= x0) {
                memset(dst, 0, sizeof(float) * (size_t)pw);
                continue;
            }
            memset(dst, 0, sizeof(float) * (size_t)x0);
            memcpy(dst + x0, src + iy * cv->w, sizeof(float) * (size_t)(x1 - x0));
            if (x1 < pw)
                memset(dst + x1, 0, sizeof(float) * (size_t)(pw - x1));
        }
    }
}

#ifndef PFVM_NO_THREADS
/* Task i of the padded copy: its share of the input's channels (run
 * serially it was 0.3-0.6 ms a node of resnet18's layers 3 and 4 at two
 * threads, the one thread working while the other waited). */
static void pfvm__la_ln_pad_part(void *ctx, int i)
{
    const pfvm__la_lnpar *p = (const pfvm__la_lnpar *)ctx;
    int64_t cin = p->cv->cin;
    pfvm__la_ln_pad(p, cin * i / p->parts, cin * (i + 1) / p->parts);
}
#endif

/* Floats of pfvm_la_conv_lanes' workspace with `parts` parts: the padded
 * input, the steps' shifts, each part's running entries. */
static size_t pfvm__la_ln_floats(const pfvm_la_conv *cv, int64_t parts)
{
    int64_t ph = (cv->oh - 1) * cv->sh + (int64_t)(cv->kh - 1) * cv->dh + 1;
    int64_t pw = pfvm__la_ln_pw(cv);
    int64_t k = cv->cin * cv->kh * cv->kw, tiles = pfvm__la_ln_group(cv); /* each part's running entries */
    return (size_t)cv->cin * (size_t)(ph * pw) + (size_t)k * (sizeof(ptrdiff_t) / sizeof(float) + 1) +
           (size_t)parts * (size_t)(tiles * PFVM__LA_LN_TILE) + 16;
}

PFVM_INTERNAL size_t pfvm_la_conv_lanes_ws_floats(const pfvm_la_conv *cv, int64_t m)
{
    if (m < PFVM_LA_LANES_M || cv->oh < 1 || cv->ow < 1 || cv->cin < 1 || cv->kh < 1 || cv->kw < 1)
        return 0;
    {
        int64_t units = pfvm__la_ln_units(cv, m); /* parts: at most one per unit, PFVM__LA_LN_PARTS_MAX */
        return pfvm__la_ln_floats(cv, units < PFVM__LA_LN_PARTS_MAX ? units : PFVM__LA_LN_PARTS_MAX);
    }
}

PFVM_INTERNAL int pfvm_la_conv_lanes(pfvm_kctx *k, const pfvm_la_conv *cv, int64_t m, const float *wl, float *c,
                                     const pfvm_la_epi *e)
{
    pfvm__la_lnpar p;
    int64_t ph, pw, taps, ci, t, units, oh = cv->oh;
    size_t floats, plane;
    float *ws;
    int threads = k ? PFVM__KTHREADS(k) : 1;
    if (!wl || !e || !pfvm__have_avx512() || m < PFVM_LA_LANES_M || m % PFVM_LA_LANES_M || cv->cin < 1 ||
        cv->h < 1 || cv->w < 1 || oh < 1 || cv->ow < 1 || cv->kh < 1 ||
        cv->kw < 1 || cv->dh < 1 || cv->dw < 1 || cv->sh < 1 || cv->sh > 2 || cv->sw < 1 || cv->sw > 2 ||
        cv->pt < 0 || cv->pl < 0 || (PFVM__LA_SILU(e) && (PFVM__LA_CL(e) || PFVM__LA_RES(e))))
        return 0;
    memset(&p, 0, sizeof p);
    ph = (oh - 1) * cv->sh + (int64_t)(cv->kh - 1) * cv->dh + 1;
    pw = pfvm__la_ln_pw(cv);
    taps = (int64_t)cv->kh * cv->kw;
    plane = (size_t)(ph * pw);
    p.cv = cv;
    p.m = m;
    p.k = cv->cin * taps;
    p.n = oh * cv->ow;
    p.tiles = oh * pfvm__la_ln_per_row(cv);
    p.group = pfvm__la_ln_group(cv);
    p.pw = pw;
    p.ph = ph;
    p.c = c;
    p.e = e;
    p.wl = wl;
    p.fn = cv->sw == 1 ? pfvm__la_ln_s1 : pfvm__la_ln_s2;
    units = pfvm__la_ln_units(cv, m);
    p.chunks = (int)units;
    p.parts = 1;
    if (threads > 1 && (float)m * (float)p.n * (float)p.k >= (float)PFVM__LA_PAR_MIN) {
        int most = threads < PFVM__LA_LN_PARTS_MAX ? threads : PFVM__LA_LN_PARTS_MAX;
        p.parts = units < most ? (int)units : most;
    }
    floats = pfvm__la_ln_floats(cv, p.parts);
    if (k && k->exec) { /* the executor's scratch (grown once, kept) */
        if (!(ws = (float *)pfvm_kctx_scratch(k, floats * sizeof(float))))
            return 0;
    } else if (!(ws = (float *)pfvm__malloc(floats * sizeof(float))))
        return 0;
    {
        ptrdiff_t *off = (ptrdiff_t *)(void *)(ws + (((size_t)cv->cin * plane + 7) & ~(size_t)7));
        p.bufs = (float *)(void *)(off + p.k);
        for (ci = 0; ci < cv->cin; ci++) /* step ci * taps + t: the weights' order */
            for (t = 0; t < taps; t++)
                off[ci * taps + t] = (ptrdiff_t)(ci * (int64_t)plane + (t / cv->kw) * cv->dh * pw + (t % cv->kw) * cv->dw);
        p.xp = p.xw = ws;
        p.off = off;
    }
#ifndef PFVM_NO_THREADS
    if (p.parts > 1) { /* the copy split by channels, then the blocks (each reads every channel) */
        pfvm_kctx_parallel(k, p.parts, pfvm__la_ln_pad_part, &p);
        PFVM__LA_CLAIMS_INIT(&p);
        pfvm_kctx_parallel(k, p.parts, pfvm__la_ln_part, &p);
    } else
#endif
    {
        pfvm__la_ln_pad(&p, 0, cv->cin);
        PFVM__LA_CLAIMS_INIT(&p);
        pfvm__la_ln_part(&p, 0);
    }
    if (!k || !k->exec)
        pfvm__free(ws);
    return 1;
}
#endif

PFVM_INTERNAL void pfvm_la_pack_strided(void *user, int64_t p0, int64_t kc, int64_t j0, int64_t nr, float *dst)
{
    const pfvm_la_strided *b = (const pfvm_la_strided *)user;
    int64_t p, j;
    for (p = 0; p < kc; p++) {
        const float *src = nr ? b->data + (p0 + p) * b->s_k + j0 * b->s_n : b->data;
        float *row = dst + p * PFVM_LA_NB;
        if (b->s_n == 1 && nr == PFVM_LA_NB) { /* a fixed size: a few vector moves */
            memcpy(row, src, sizeof(float) * PFVM_LA_NB);
            continue;
        }
        if (b->s_n == 1)
            for (j = 0; j < nr; j++)
                row[j] = src[j];
        else { /* pointer-sized index math: no 64-bit multiply per element on a 32-bit core */
            ptrdiff_t q, n = (ptrdiff_t)nr, sn = (ptrdiff_t)b->s_n;
            for (q = 0; q < n; q++)
                row[q] = src[q * sn];
            j = nr;
        }
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
    if (pfvm_kctx_output(k, 0, A->dtype, orank, odims) ||
        pfvm_kctx_spend(k, pfvm__sat_mul((uint64_t)pfvm_tensor_numel(C), (uint64_t)(kk > 0 ? kk : 0))))
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
            pfvm_la_sgemm_mt(k, m, n, kk, 1.0f, (const float *)A->data + ao * sa, kk, 1, pfvm_la_pack_strided, &bm,
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
    for (e = 0; PFVM__F64 && e < len; e++) { /* pfvm__la_k_gemm refuses other types in PFVM_FLOAT32_ONLY builds */
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
static pfvm_code pfvm__la_gemm_bias(pfvm_kctx *k, const pfvm_tensor *Cb, float beta, pfvm_tensor *Y)
{
    pfvm__la_bias b;
    int d;
    if (!Cb || beta == 0.0f) {
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
    if (Cb->dtype == PFVM_FLOAT && Y->dtype == PFVM_FLOAT && Y->rank == 2 && Cb->rank <= 2 &&
        pfvm_tensor_numel(Cb) == Y->dims[1] && (Cb->rank < 2 || Cb->dims[0] == 1)) {
        /* a bias row (the usual Gemm): row by row, without the broadcast
         * iterator's per-span calls (the same products) */
        const float *c = (const float *)Cb->data;
        float *y = (float *)Y->data;
        ptrdiff_t i, j, m = (ptrdiff_t)Y->dims[0], n = (ptrdiff_t)Y->dims[1];
        for (i = 0; i < m; i++, y += n) {
            /* four a step: a quarter of the loop's steps where -Os unrolls nothing */
            for (j = 0; j + 4 <= n; j += 4) {
                y[j] = beta * c[j];
                y[j + 1] = beta * c[j + 1];
                y[j + 2] = beta * c[j + 2];
                y[j + 3] = beta * c[j + 3];
            }
            for (; j < n; j++)
                y[j] = beta * c[j];
        }
        return PFVM_OK;
    }
    if (PFVM__LA_LEAN && Cb->dtype == PFVM_FLOAT && Y->dtype == PFVM_FLOAT && Y->rank == 2) {
        /* PFVM_LEAN_KERNELS: every float C (a scalar, a column, a row,
         * the whole [m, n]) by one loop over Y, not the broadcast
         * iterator (the same products) */
        const float *c = (const float *)Cb->data;
        float *y = (float *)Y->data;
        ptrdiff_t i, j, m = (ptrdiff_t)Y->dims[0], n = (ptrdiff_t)Y->dims[1];
        ptrdiff_t si = Cb->rank == 2 && Cb->dims[0] > 1 ? (ptrdiff_t)Cb->dims[1] : 0;
        ptrdiff_t sj = Cb->rank >= 1 && Cb->dims[Cb->rank - 1] > 1 ? 1 : 0;
        for (i = 0; i < m; i++)
            for (j = 0; j < n; j++)
                y[i * n + j] = beta * c[i * si + j * sj];
        return PFVM_OK;
    }
    if (PFVM__LA_LEAN && !PFVM__F64) /* (pfvm__la_k_gemm refused the other types: the iterator is not linked) */
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_UNSUPPORTED, "C of type %s", pfvm_dtype_name(Cb->dtype));
    b.c = Cb;
    b.y = Y;
    b.beta = PFVM__F64 ? (double)beta : 1.0;
    b.fbeta = beta;
    return pfvm_ew_apply(k, &Cb, 1, Y, pfvm__la_bias_span, &b);
}

/* Gemm's attributes, read once at bind by its prepare hook (k->state):
 * four look-ups a run were about 400 instructions a Gemm on a Cortex-M4
 * (the mlp's two: 3,200 multiply-adds). */
typedef struct pfvm__la_gemm_st {
    const pfvm_node *node; /* whose attributes (nodes live as long as their model, so no other node can have
                            * this address while an executor of the model holds the state) */
    int ta, tb;
    float alpha, beta;     /* float attributes, kept in float: a float32 model's Gemm needs no double arithmetic */
    void *pack;            /* x86 with AVX-512: B packed for batch-1 products (pfvm__la_gemv_pack); 32-bit Arm:
                            * small transposed B packed in fours (pfvm__la_bpack); else NULL */
} pfvm__la_gemm_st;


static void pfvm__la_gemm_read(const pfvm_node *n, pfvm__la_gemm_st *a)
{
    a->node = n;
    a->ta = pfvm_node_attr_int(n, "transA", 0) != 0;
    a->tb = pfvm_node_attr_int(n, "transB", 0) != 0;
    a->alpha = pfvm_node_attr_float(n, "alpha", 1.0f);
    a->beta = pfvm_node_attr_float(n, "beta", 1.0f);
}

#if defined(PFVM__LA_X86) && defined(PFVM_AVX512_KERNELS)
/* Gemm's constant weights for batch-1 products (a classifier: mobilenet_v2's
 * 1280 x 1000), packed at bind by its prepare hook: B's columns in panels
 * of 16, each panel K steps of 16 contiguous floats (the last panel padded
 * with zeros). The product then reads one stream with one load per step
 * and keeps four panels' sums in flight, where pfvm__la_gemv_dots_avx2
 * transposes 8x8 blocks of B and waits on one chain of additions. Each
 * column's sum takes its products in the same order, each rounded apart,
 * from zero, then C += alpha * sum: the bits of pfvm__la_gemv_dots. x86
 * hosts with AVX-512 only (firmware builds compile none of it). */
#define PFVM__LA_GP 16
typedef struct pfvm__la_gemv_pack {
    const void *b; /* the weights it was packed from */
    int64_t n, k;
    int tb;
    float *p; /* ceil(n / 16) panels of k x 16 floats */
} pfvm__la_gemv_pack;

static void pfvm__la_gemv_pack_free(void *s)
{
    if (s)
        pfvm__free(((pfvm__la_gemv_pack *)s)->p);
    pfvm__free(s);
}

/* Columns of panels [p0, p1): c[j] += alpha * (a . column j), a's K steps sa apart. */
__attribute__((target("avx512f"))) static void pfvm__la_gemv_panels(const pfvm__la_gemv_pack *pk, int64_t p0, int64_t p1,
                                                                    float alpha, const float *a, ptrdiff_t sa, float *c)
{
    const ptrdiff_t kk = (ptrdiff_t)pk->k, ps = (ptrdiff_t)pk->k * PFVM__LA_GP;
    const __m512 va = _mm512_set1_ps(alpha);
    int64_t q = p0;
    ptrdiff_t p;
    for (; q + 4 <= p1; q += 4) {
        const float *b0 = pk->p + q * ps, *b1 = b0 + ps, *b2 = b1 + ps, *b3 = b2 + ps;
        __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
        for (p = 0; p < kk; p++) {
            const __m512 av = _mm512_set1_ps(a[p * sa]);
            s0 = _mm512_add_ps(s0, _mm512_mul_ps(av, _mm512_loadu_ps(b0 + p * PFVM__LA_GP)));
            s1 = _mm512_add_ps(s1, _mm512_mul_ps(av, _mm512_loadu_ps(b1 + p * PFVM__LA_GP)));
            s2 = _mm512_add_ps(s2, _mm512_mul_ps(av, _mm512_loadu_ps(b2 + p * PFVM__LA_GP)));
            s3 = _mm512_add_ps(s3, _mm512_mul_ps(av, _mm512_loadu_ps(b3 + p * PFVM__LA_GP)));
        }
        {
            __m512 s[4];
            int i;
            s[0] = s0, s[1] = s1, s[2] = s2, s[3] = s3;
            for (i = 0; i < 4; i++) {
                int64_t j = (q + i) * PFVM__LA_GP, left = pk->n - j;
                __mmask16 m = left >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << left) - 1u);
                __m512 cv = _mm512_maskz_loadu_ps(m, c + j);
                _mm512_mask_storeu_ps(c + j, m, _mm512_add_ps(cv, _mm512_mul_ps(va, s[i])));
            }
        }
    }
    for (; q < p1; q++) {
        const float *b0 = pk->p + q * ps;
        int64_t j = q * PFVM__LA_GP, left = pk->n - j;
        __mmask16 m = left >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << left) - 1u);
        __m512 s0 = _mm512_setzero_ps();
        for (p = 0; p < kk; p++)
            s0 = _mm512_add_ps(s0, _mm512_mul_ps(_mm512_set1_ps(a[p * sa]), _mm512_loadu_ps(b0 + p * PFVM__LA_GP)));
        _mm512_mask_storeu_ps(c + j, m, _mm512_add_ps(_mm512_maskz_loadu_ps(m, c + j), _mm512_mul_ps(va, s0)));
    }
}

/* The packed weights kept by Gemm's prepare hook when they are B's (n columns of k, transposed or not), NULL
 * otherwise. */
static const pfvm__la_gemv_pack *pfvm__la_gemv_pack_of(const pfvm__la_gemm_st *st, const pfvm_tensor *B, int tb)
{
    const pfvm__la_gemv_pack *pk = st ? (const pfvm__la_gemv_pack *)st->pack : NULL;
    if (!pk || !pfvm__have_avx512() || pk->b != B->data || pk->tb != tb || B->rank != 2 ||
        pk->n != B->dims[tb ? 0 : 1] || pk->k != B->dims[tb ? 1 : 0])
        return NULL;
    return pk;
}

/* Part of Gemm's prepare hook: packs a constant float B given transposed
 * (transB 1, as classifiers have it; B's rows are C's columns), an
 * initializer's (pfvm__model_owns), and large
 * enough to matter (64K weights and more) for the batch-1 product above,
 * into st->pack. A B in rows (transB 0) keeps pfvm__la_gemv_rows, which
 * streams it already. Anything it cannot use it leaves to the kernel. */
static pfvm_code pfvm__la_prep_gemv(const pfvm_kctx *k, const pfvm_tensor *const *consts, pfvm__la_gemm_st *st)
{
    const pfvm_tensor *B = k->n_in > 1 ? consts[1] : NULL, *A = k->in[0];
    int tb = st->tb;
    pfvm__la_gemv_pack *pk;
    int64_t n, kk, q, p, j, np;
    size_t floats;
    if (!PFVM_PREPACK || !pfvm__have_avx512() || !tb || !B || B->dtype != PFVM_FLOAT || !B->data || B->rank != 2 ||
        !A || A->dtype != PFVM_FLOAT || pfvm_tensor_numel(B) < 65536 || !pfvm__model_owns(k->node, B->data))
        return PFVM_OK;
    n = B->dims[tb ? 0 : 1];
    kk = B->dims[tb ? 1 : 0];
    if (n < 1 || kk < 1 || pfvm__la_gemv_pack_of(st, B, tb))
        return PFVM_OK; /* packed when last bound */
    pfvm__la_gemv_pack_free(st->pack);
    st->pack = NULL;
    np = (n + PFVM__LA_GP - 1) / PFVM__LA_GP;
    if ((uint64_t)np > SIZE_MAX / sizeof(float) / PFVM__LA_GP / (uint64_t)kk)
        return PFVM_OK;
    floats = (size_t)np * PFVM__LA_GP * (size_t)kk;
    pk = (pfvm__la_gemv_pack *)pfvm__calloc(1, sizeof *pk);
    if (!pk || !(pk->p = (float *)pfvm__malloc(floats * sizeof(float)))) {
        pfvm__free(pk);
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_NOMEM, "cannot allocate %lu bytes for the packed weights",
                             (unsigned long)(floats * sizeof(float)));
    }
    pk->b = B->data;
    pk->n = n;
    pk->k = kk;
    pk->tb = tb;
    for (q = 0; q < np; q++)
        for (p = 0; p < kk; p++)
            for (j = 0; j < PFVM__LA_GP; j++) {
                int64_t col = q * PFVM__LA_GP + j;
                pk->p[(q * kk + p) * PFVM__LA_GP + j] =
                    col < n ? ((const float *)B->data)[tb ? col * kk + p : p * n + col] : 0.0f;
            }
    st->pack = pk;
    return PFVM_OK;
}

/* The batch-1 product on the packed weights, split over the threads by panels. */
typedef struct pfvm__la_gemv_par {
    const pfvm__la_gemv_pack *pk;
    float alpha;
    const float *a;
    ptrdiff_t sa;
    float *c;
    int64_t np;
    int parts;
} pfvm__la_gemv_par;

static void pfvm__la_gemv_part(void *ctx, int i)
{
    const pfvm__la_gemv_par *g = (const pfvm__la_gemv_par *)ctx;
    pfvm__la_gemv_panels(g->pk, g->np * i / g->parts, g->np * (i + 1) / g->parts, g->alpha, g->a, g->sa, g->c);
}

/* Y (m <= 2 rows, bias already there) += alpha * A B on the packed weights; 0 when they do not serve. */
static int pfvm__la_gemm_packed(pfvm_kctx *k, const pfvm__la_gemv_pack *pk, int64_t m, float alpha, const float *a,
                                int64_t as_m, int64_t as_k, float *y)
{
    pfvm__la_gemv_par g;
    int64_t i;
    if (!pk || m > 2)
        return 0;
    g.pk = pk;
    g.alpha = alpha;
    g.sa = (ptrdiff_t)as_k;
    g.np = (pk->n + PFVM__LA_GP - 1) / PFVM__LA_GP;
    g.parts = PFVM__KTHREADS(k);
    g.parts = g.parts > g.np ? (int)g.np : g.parts;
    for (i = 0; i < m; i++) {
        g.a = a + i * as_m;
        g.c = y + i * pk->n;
        if (g.parts > 1)
            pfvm_kctx_parallel(k, g.parts, pfvm__la_gemv_part, &g);
        else
            pfvm__la_gemv_panels(pk, 0, g.np, alpha, g.a, g.sa, g.c);
    }
    return 1;
}
#endif


#ifdef PFVM__LA_BPACK
/* B packed at bind on 32-bit Arm (pfvm__la_bp_run): the columns 0..n4 of
 * a constant transposed B (n4: n rounded down to 4), panel q (columns 4q
 * .. 4q + 3) at p + 4 k q, step p's 4 values contiguous. */
typedef struct pfvm__la_bpack {
    const void *b;  /* the B it was packed from */
    int32_t n, k;   /* B's dims (transposed: n rows of k) */
    float p[];      /* 4 (n / 4) k floats */
} pfvm__la_bpack;

/* Up to 16 KB of packed B (a copy of it in RAM): the small products whose
 * tiles are a few hundred multiply-adds, where reading B in place costs
 * a quarter more instructions. */
#ifndef PFVM_LA_BPACK_MAX
#define PFVM_LA_BPACK_MAX 4096
#endif

/* Part of Gemm's prepare hook on 32-bit Arm: packs B (pfvm__la_bpack) into
 * st->pack when pfvm__la_gemm_bp will take the product: A float and not
 * transposed, rows a multiple of 4, B an initializer's float (it stays
 * between plans: pfvm__model_owns) transposed with at least 4 rows, K
 * at most PFVM_LA_KC. Otherwise it leaves the kernel as it was. */
static pfvm_code pfvm__la_prep_bpack(const pfvm_kctx *k, const pfvm_tensor *const *consts, pfvm__la_gemm_st *st)
{
    const pfvm_tensor *B = k->n_in > 1 ? consts[1] : NULL, *A = k->in[0];
    const pfvm__la_bpack *old = (const pfvm__la_bpack *)st->pack;
    pfvm__la_bpack *pk;
    int64_t n, kk, n4, q, p, j;
    if (!st->tb || st->ta || !B || B->dtype != PFVM_FLOAT || !B->data || B->rank != 2 || !A ||
        A->dtype != PFVM_FLOAT || A->rank != 2 || A->dims[0] < 4 || A->dims[0] % 4)
        return PFVM_OK;
    n = B->dims[0];
    kk = B->dims[1];
    n4 = n / 4 * 4;
    if (n4 < 4 || kk < 1 || kk > PFVM_LA_KC || n4 * kk > PFVM_LA_BPACK_MAX || !pfvm__model_owns(k->node, B->data))
        return PFVM_OK;
    if (old && old->b == B->data && old->n == n && old->k == kk)
        return PFVM_OK; /* packed when last bound */
    pfvm__free(st->pack);
    st->pack = NULL;
    pk = (pfvm__la_bpack *)pfvm__malloc(sizeof *pk + (size_t)(n4 * kk) * sizeof(float));
    if (!pk)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_NOMEM, "cannot allocate %lu bytes for the packed weights",
                             (unsigned long)(sizeof *pk + (size_t)(n4 * kk) * sizeof(float)));
    pk->b = B->data;
    pk->n = (int32_t)n;
    pk->k = (int32_t)kk;
    for (q = 0; q < n4; q += 4)
        for (p = 0; p < kk; p++)
            for (j = 0; j < 4; j++)
                pk->p[q * kk + 4 * p + j] = ((const float *)B->data)[(q + j) * kk + p];
    st->pack = pk;
    return PFVM_OK;
}

/* B packed at bind (pfvm__la_bp_run) when it serves the product Y = C +
 * alpha * A * B: the bias C a float row of n (beta 1: the fill would copy
 * it), A float with rows a multiple of 4; NULL otherwise. */
static const pfvm__la_bpack *pfvm__la_gemm_bp_of(const pfvm__la_gemm_st *st, const pfvm_tensor *A,
                                                 const pfvm_tensor *B, const pfvm_tensor *Cb, const pfvm_tensor *Y)
{
    const pfvm__la_bpack *pk = st ? (const pfvm__la_bpack *)st->pack : NULL;
    if (!pk || pk->b != B->data || !st->tb || st->ta || st->beta != 1.0f || B->rank != 2 || B->dims[0] != pk->n ||
        B->dims[1] != pk->k || A->dtype != PFVM_FLOAT || A->rank != 2 || A->dims[1] != pk->k || A->dims[0] < 4 ||
        A->dims[0] % 4 || A->dims[0] > PTRDIFF_MAX / 4 || !Cb || Cb->dtype != PFVM_FLOAT || Cb->rank > 2 ||
        pfvm_tensor_numel(Cb) != pk->n || (Cb->rank == 2 && Cb->dims[0] != 1) || Y->dtype != PFVM_FLOAT)
        return NULL;
    return pk;
}
#endif

static void pfvm__la_gemm_st_free(void *s)
{
#if defined(PFVM__LA_X86) && defined(PFVM_AVX512_KERNELS)
    if (s)
        pfvm__la_gemv_pack_free(((pfvm__la_gemm_st *)s)->pack);
#elif defined(PFVM__LA_BPACK)
    if (s)
        pfvm__free(((pfvm__la_gemm_st *)s)->pack);
#endif
    pfvm__free(s);
}

/* Gemm's prepare hook: its attributes (every target) and, on x86 with
 * AVX-512, its batch-1 packed weights. */
static pfvm_code pfvm__la_prep_gemm(const pfvm_kctx *k, const pfvm_tensor *const *consts, void **state,
                                    void (**free_fn)(void *))
{
    pfvm__la_gemm_st *a = (pfvm__la_gemm_st *)*state;
    if (!a || *free_fn != pfvm__la_gemm_st_free || a->node != k->node) {
        if (!(a = (pfvm__la_gemm_st *)pfvm__calloc(1, sizeof *a)))
            return pfvm__op_fail(k->st, k->node, PFVM_ERR_NOMEM, "out of memory for its attributes");
        *state = a;
        *free_fn = pfvm__la_gemm_st_free;
    }
    pfvm__la_gemm_read(k->node, a); /* once a plan: attributes set since the last one count */
#if defined(PFVM__LA_X86) && defined(PFVM_AVX512_KERNELS)
    return pfvm__la_prep_gemv(k, consts, a);
#elif defined(PFVM__LA_BPACK)
    return pfvm__la_prep_bpack(k, consts, a);
#else
    (void)consts;
    return PFVM_OK;
#endif
}

static pfvm_code pfvm__la_k_gemm(pfvm_kctx *k)
{
    const pfvm_tensor *A = k->in[0], *B = k->in[1], *Cb = k->n_in > 2 ? k->in[2] : NULL;
    pfvm_tensor *Y = k->out[0];
    const pfvm__la_gemm_st *kept = (const pfvm__la_gemm_st *)k->state;
    pfvm__la_gemm_st at;
    int ta, tb;
    float alpha, beta;
    int64_t m, n, kk, dims[2];
#ifdef PFVM__LA_BPACK
    const pfvm__la_bpack *bp;
#endif
    if (kept && kept->node == k->node)
        at = *kept;
    else
        pfvm__la_gemm_read(k->node, &at);
    ta = at.ta, tb = at.tb, alpha = at.alpha, beta = at.beta;
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
    if (!PFVM__F64 && (A->dtype != PFVM_FLOAT || B->dtype != PFVM_FLOAT || (Cb && Cb->dtype != PFVM_FLOAT)))
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_UNSUPPORTED,
                             "inputs of types other than float32 need a build without PFVM_FLOAT32_ONLY");
    if (pfvm_kctx_output(k, 0, A->dtype, 2, dims))
        return k->st ? k->st->code : PFVM_ERR_SHAPE;
#ifdef PFVM__LA_BPACK
    /* B packed at bind: the bias row added in the tiles, no fill */
    if (kept && kept->node == k->node && (bp = pfvm__la_gemm_bp_of(kept, A, B, Cb, Y)) != NULL) {
        if (pfvm_kctx_spend(k, pfvm__sat_mul((uint64_t)pfvm_tensor_numel(Y), (uint64_t)kk)))
            return k->st ? k->st->code : PFVM_ERR_SHAPE;
        pfvm__la_bp_run((ptrdiff_t)m, bp->n, bp->k, alpha, (const float *)A->data, bp->k, bp->p,
                        (const float *)B->data, bp->k, (float *)Y->data, bp->n, (const float *)Cb->data);
        return PFVM_OK;
    }
#endif
    if (pfvm__la_gemm_bias(k, Cb, beta, Y) ||
        pfvm_kctx_spend(k, pfvm__sat_mul((uint64_t)pfvm_tensor_numel(Y), (uint64_t)(kk > 0 ? kk : 0))))
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
#if defined(PFVM__LA_X86) && defined(PFVM_AVX512_KERNELS)
        if (kept && kept->node == k->node && pfvm__la_gemm_packed(k, pfvm__la_gemv_pack_of(kept, B, tb), m, alpha, (const float *)A->data,
                                             ta ? 1 : kk, ta ? m : 1, (float *)Y->data))
            return PFVM_OK;
#endif
        pfvm_la_sgemm_mt(k, m, n, kk, alpha, (const float *)A->data, ta ? 1 : kk, ta ? m : 1, pfvm_la_pack_strided,
                         &bm, (float *)Y->data, n, ws);
    } else if (PFVM__F64) {
        pfvm__la_gemm_any(m, n, kk, A, 0, ta ? 1 : kk, ta ? m : 1, B, 0, tb ? 1 : n, tb ? kk : 1, Y, 0, (double)alpha, 1);
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
PFVM_INTERNAL pfvm_code pfvm_acl_gemm(pfvm_accel_ctx *c)
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
     "float,double,float16,bfloat16,int32,int64,uint32,uint64", NULL, PFVM__OP_ACCEL_STREAMED, pfvm__la_simp_matmul, pfvm__la_k_matmul_grad, NULL, pfvm__la_matmul_flops, pfvm_acl_matmul, pfvm__la_matmul_ws, NULL, NULL},
    {"Gemm", "", 1, 0, 2, 3, 1, 1, pfvm__la_infer_gemm, pfvm__la_k_gemm, NULL, PFVM_FUSE_OUT_FUSABLE,
     "float,double,float16,bfloat16,int32,int64,uint32,uint64", NULL, PFVM__OP_ACCEL_STREAMED, pfvm__la_simp_gemm, pfvm__la_k_gemm_grad, NULL, pfvm__la_gemm_flops, pfvm_acl_gemm, pfvm__la_gemm_ws, pfvm__la_prep_gemm, NULL},
    {NULL, NULL, 0, 0, 0, 0, 0, 0, NULL, NULL, NULL, PFVM_FUSE_OPAQUE, NULL, NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL}
};
