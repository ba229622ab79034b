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

/* Walks `out` (already shaped) with inputs broadcast to it (numpy rules),
 * in runs as long as the shapes allow (equal shapes: one run). Fails when
 * an input does not broadcast to out's shape, or n > 8. */
PFVM_INTERNAL pfvm_code pfvm_ew_apply(pfvm_kctx *k, const pfvm_tensor *const *in, int n, pfvm_tensor *out,
                                      pfvm_ew_fn fn, void *user);
/* Output 0 = broadcast of every present input, with element type dtype. */
PFVM_INTERNAL pfvm_code pfvm_ew_infer_broadcast_to(pfvm_ictx *c, pfvm_dtype dtype);
/* Run-time broadcast shape of n concrete tensors (numpy rules). */
PFVM_INTERNAL pfvm_code pfvm_ew_broadcast_dims(pfvm_kctx *k, const pfvm_tensor *const *in, int n, int *rank,
                                               int64_t *dims);

/* Binary operators of the engine, for other families' kernels. */
typedef enum pfvm_ew_binop {
    PFVM_EW_ADD, PFVM_EW_SUB, PFVM_EW_MUL, PFVM_EW_DIV, PFVM_EW_POW, PFVM_EW_MAX, PFVM_EW_MIN,
    PFVM_EW_EQUAL, PFVM_EW_LESS, PFVM_EW_GREATER /* bool outputs */
} pfvm_ew_binop;
/* out = a op b with numpy broadcasting and ONNX's semantics of the op
 * (integer division truncates, integer overflow wraps, Max/Min propagate
 * NaN). Any numeric element types; out's type decides the result's. When
 * out has no storage it gets the broadcast shape (pfvm_kctx_output, out
 * must then be one of k->out); otherwise it must already have that shape. out
 * may alias a or b when it has that operand's shape. */
PFVM_INTERNAL pfvm_code pfvm_ew_broadcast_binary(pfvm_kctx *k, pfvm_ew_binop op, const pfvm_tensor *a,
                                                 const pfvm_tensor *b, pfvm_tensor *out);

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
