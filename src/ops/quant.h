/* ops/quant: helpers of the int8 kernels (quant.c), internal; the unit
 * tests (tests/test_quant.c) check them against double references. */
#ifndef PFVM_OPS_QUANT_H
#define PFVM_OPS_QUANT_H

#include "../opi/opi.h"

#ifdef __cplusplus
extern "C" {
#endif

/* real = mult * 2^-shift with mult in [2^30, 2^31) (0 for real <= 0): the
 * requantization multiplier x_scale * w_scale / y_scale in fixed point. */
PFVM_INTERNAL void pfvm_q_multiplier(double real, int32_t *mult, int *shift);
/* acc * mult * 2^-shift rounded half up (toward +infinity), exactly
 * (64-bit product): the requantization of the fast paths. */
PFVM_INTERNAL int64_t pfvm_q_scale(int64_t acc, int32_t mult, int shift);
/* pfvm_q_scale(acc, mult, 32 + s) for s in [1, 30], in 32-bit arithmetic
 * but for one 32x32->64 multiply (the requantization of the fast paths). */
PFVM_INTERNAL int32_t pfvm_q_scale_hi(int32_t acc, int32_t mult, int s);
/* zp + pfvm_q_scale(acc), saturated to [lo, hi]. */
PFVM_INTERNAL int32_t pfvm_q_requantize(int32_t acc, int32_t mult, int shift, int32_t zp, int32_t lo, int32_t hi);
/* QLinearAdd's fixed point: ra = a_scale / c_scale and rb = b_scale /
 * c_scale become ma * 2^-shift and mb * 2^-shift, rounded to nearest, with
 * the larger of ma, mb in [2^20, 2^21] (shift at most 31). Returns 0 (and
 * zeros) unless both ratios are positive and below 2^21. */
PFVM_INTERNAL int pfvm_q_add_params(double ra, double rb, int32_t *ma, int32_t *mb, int *shift);
/* zc + (da * ma + db * mb) * 2^-shift rounded half up, saturated to
 * [lo, hi] (da, db: the operands minus their zero points, |d| <= 255). */
PFVM_INTERNAL int32_t pfvm_q_add(int32_t da, int32_t db, int32_t ma, int32_t mb, int shift, int32_t zc, int32_t lo,
                                 int32_t hi);
/* Which int8 GEMM kernel runs: 2 AVX2, 1 the SMLAD tile (Cortex-M DSP
 * extension; elsewhere its C emulation), 0 portable C.
 * pfvm_q_force_portable(1) makes every later call use the portable one,
 * pfvm_q_force_dsp(1) the SMLAD tile (tests compare them). */
PFVM_INTERNAL int pfvm_q_gemm_kind(void);
PFVM_INTERNAL void pfvm_q_force_portable(int on);
PFVM_INTERNAL void pfvm_q_force_dsp(int on);
/* 1 when the convolutions' GEMM runs on AVX-512 VNNI (vpdpbusd: u8
 * activations by s8 weights, exact int32 sums): x86 with the extension,
 * kind 2, and not turned off by pfvm_q_force_no_vnni(1) (the tests compare
 * it with the AVX2 kernel). */
PFVM_INTERNAL int pfvm_q_vnni(void);
PFVM_INTERNAL void pfvm_q_force_no_vnni(int on);
/* pfvm_q_force_vnni_narrow(1): the VNNI path keeps to its 4x16 ymm tile
 * and SSE im2col rows and interleave (no 8x32 zmm tiles, no AVX-512 BW
 * masked rows or 64-column interleave; the tests compare the two). */
PFVM_INTERNAL void pfvm_q_force_vnni_narrow(int on);
/* pfvm_q_force_direct_tile(1 or 2): the direct QLinearConv path takes its
 * position tile (8 rows by 32 flat positions) or its channel tile (32
 * rows in the lanes by 7 positions) on every node; 0: each node the one
 * computing fewer sums. The tests compare the two. */
PFVM_INTERNAL void pfvm_q_force_direct_tile(int which);

#ifdef __cplusplus
}
#endif
#endif /* PFVM_OPS_QUANT_H */
