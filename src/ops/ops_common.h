/* ops_common: helpers shared between operator families (declared here,
 * defined in the family that owns them). */
#ifndef PFVM_OPS_COMMON_H
#define PFVM_OPS_COMMON_H

#include "registry.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- elementwise.c: the broadcasting engine ---- */

/* Called for each run of `len` consecutive output elements starting at
 * output index `pos`; input j's elements are at off[j] + e*stride[j]. */
typedef void (*pfvm_ew_fn)(void *user, int64_t pos, int64_t len, const int64_t *off, const int64_t *stride);

/* Walks `out` (already shaped) with inputs broadcast to it (numpy rules). */
PFVM_INTERNAL pfvm_code pfvm_ew_apply(pfvm_kctx *k, const pfvm_tensor *const *in, int n, pfvm_tensor *out,
                                      pfvm_ew_fn fn, void *user);
/* Output 0 = broadcast of every present input, with element type dtype. */
PFVM_INTERNAL pfvm_code pfvm_ew_infer_broadcast_to(pfvm_ictx *c, pfvm_dtype dtype);

/* ---- nn.c: the reference convolution ---- */

/* Receives each output element's accumulated sum (index, output channel). */
typedef void (*pfvm_nn_post_fn)(void *user, int64_t idx, int64_t channel, double acc);

/* Convolution of (X - x_zero_point) with (W - w_zero_point; per output
 * channel when 1-D) using the node's Conv attributes; zero points may be
 * NULL. Shapes output 0 if the planner did not. */
PFVM_INTERNAL pfvm_code pfvm_nn_conv_ref(pfvm_kctx *k, const pfvm_tensor *X, const pfvm_tensor *W, const pfvm_tensor *xzp,
                                         const pfvm_tensor *wzp, pfvm_nn_post_fn post, void *user);

/* ---- reduce.c: element stores ---- */

/* Stores v into element i of t, converted to t's numeric type as numpy's
 * astype does for values in range (floats round, integers truncate toward
 * zero); integer types saturate out-of-range values and NaN becomes 0, so
 * no conversion is undefined. Bool is v != 0. */
PFVM_INTERNAL void pfvm_red_store(pfvm_tensor *t, int64_t i, double v);

/* ---- linalg.c: the float matrix-multiply engine ---- */

/* Panel sizes: PFVM_LA_NB columns per block, PFVM_LA_KC rows per packed
 * panel (the engine keeps KC*NB floats on the stack; lower KC for small
 * stacks). */
#define PFVM_LA_NB 32
#ifndef PFVM_LA_KC
#define PFVM_LA_KC 128
#endif

/* Packs rows p0..p0+kc and columns j0..j0+nr of the right operand B into
 * dst[p * PFVM_LA_NB + j], zero for j >= nr. */
typedef void (*pfvm_la_pack_fn)(void *user, int64_t p0, int64_t kc, int64_t j0, int64_t nr, float *dst);

/* C[i*ldc + j] += alpha * sum_p A[i*as_m + p*as_k] * B[p][j] for i < m,
 * j < n, p < k, with B read through pack. Allocates nothing. */
PFVM_INTERNAL void pfvm_la_sgemm(int64_t m, int64_t n, int64_t k, float alpha, const float *a, int64_t as_m, int64_t as_k,
                                 pfvm_la_pack_fn pack, void *user, float *c, int64_t ldc);

/* A strided float matrix B[p][j] = data[p*s_k + j*s_n], packed by
 * pfvm_la_pack_strided (user points to the pfvm_la_strided). */
typedef struct pfvm_la_strided {
    const float *data;
    int64_t s_k, s_n;
} pfvm_la_strided;
PFVM_INTERNAL void pfvm_la_pack_strided(void *user, int64_t p0, int64_t kc, int64_t j0, int64_t nr, float *dst);

#ifdef __cplusplus
}
#endif
#endif /* PFVM_OPS_COMMON_H */
