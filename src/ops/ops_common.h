/* ops_common: helpers shared between operator families (declared here,
 * defined in the family that owns them). */
#ifndef PFVM_OPS_COMMON_H
#define PFVM_OPS_COMMON_H

#include "../opi/opi.h"
#include "../opi/grad.h"
#include "../opi/rewrite.h"
#include "fused.h"

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

/* float32 exp (within about 1 ulp, the same bits on every target: pfvm's
 * own polynomial) and log (libm's logf), for other families' float32 math. */
PFVM_INTERNAL float pfvm_ew_expf(float x);
PFVM_INTERNAL float pfvm_ew_logf(float x);

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

/* Panel sizes: PFVM_LA_NB columns per packed panel of B (a micro-kernel
 * reads one or two), PFVM_LA_KC rows per panel when the engine runs
 * without a workspace (it then keeps KC*56 floats on the stack; lower KC
 * for small stacks). */
#define PFVM_LA_NB 16
#ifndef PFVM_LA_KC
#define PFVM_LA_KC 128
#endif
/* PFVM_SMALL_KERNELS (opt-in, for flash-bound firmware): every float
 * product is one loop nest (pfvm__la_small in linalg.c: no micro-kernels,
 * blocking, matrix-vector or threaded paths, no workspace), and Conv
 * takes it for every window (no direct or depthwise loops): the same bits,
 * fewer bytes, more instructions per multiply-add. */
#ifdef PFVM_SMALL_KERNELS
#define PFVM__LA_SMALL 1
#ifndef PFVM_CONV_NO_DIRECT
#define PFVM_CONV_NO_DIRECT 1
#endif
#ifndef PFVM_CONV_NO_DEPTHWISE
#define PFVM_CONV_NO_DEPTHWISE 1
#endif
#else
#define PFVM__LA_SMALL 0
#endif
/* PFVM_LEAN_KERNELS (opt-in, for flash-bound firmware; see pfvm.h): the
 * kernels keep their main fast paths only. The matrix engine keeps one
 * driver (pfvm__la_lean in linalg.c): the 4x4 tile (32-bit Arm) on rows
 * of A in fours, the matrix-vector loops, and PFVM_SMALL_KERNELS' loop
 * nest for every other product (the direct strips, the blocked engine
 * and the transposed-B tiles are not linked); float pooling keeps the 2x2
 * loop, other 2-D windows take one 32-bit plane loop for max and average
 * (pfvm__nn_pool_planes), the rest the generic loop; Conv packs its
 * windows (1-3 spatial dims) with one 32-bit packer (pfvm__nn_pack_conv32,
 * also under PFVM_SMALL_KERNELS) (nn.c): the same bits. */
#if defined(PFVM_LEAN_KERNELS) && !PFVM__LA_SMALL
#define PFVM__LA_LEAN 1
#else
#define PFVM__LA_LEAN 0
#endif
/* Conv packs constant weights once at bind into the matrix engine's
 * layout (a copy as large as the weights) where this is 1: 64-bit hosts. */
#ifndef PFVM_PREPACK
#if SIZE_MAX > 0xffffffffu
#define PFVM_PREPACK 1
#else
#define PFVM_PREPACK 0
#endif
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

/* pfvm_la_sgemm with a workspace of pfvm_la_sgemm_ws_floats(m, n, k)
 * floats (or NULL: blocks on the stack, as pfvm_la_sgemm), which lets it
 * pack large blocks of A and B once for many micro-tiles. */
PFVM_INTERNAL void pfvm_la_sgemm_ws(int64_t m, int64_t n, int64_t k, float alpha, const float *a, int64_t as_m,
                                    int64_t as_k, pfvm_la_pack_fn pack, void *user, float *c, int64_t ldc, float *ws);
PFVM_INTERNAL size_t pfvm_la_sgemm_ws_floats(int64_t m, int64_t n, int64_t k);
/* The workspace for pfvm_la_sgemm_ws from the executor's scratch buffer
 * (one per thread, for pfvm_la_sgemm_mt); NULL without an executor (kernels run while folding), or with *failed
 * set when it cannot be allocated (k->st says why). */
PFVM_INTERNAL float *pfvm_la_workspace(pfvm_kctx *k, int64_t m, int64_t n, int64_t kk, int *failed);

/* Relu's form with no upper bound on y[0..n): y = y > lo ? y : lo (NaN
 * and -0 become lo), four at a time in native-width steps, which 32-bit
 * Arm needs (about 6 instructions per value on a Cortex-M4). */
PFVM_INTERNAL void pfvm_la_relu_floor(float *y, ptrdiff_t n, float lo);

#ifdef PFVM__STORE_SILU
/* SiLU in place on `rows` rows of n floats, ld apart: y = y * sigmoid(y)
 * with the bits of the Sigmoid operator's float32 kernel then Mul
 * (src/ops/elementwise.c; AVX-512 where the CPU has it). */
PFVM_INTERNAL void pfvm_ew_silu_rows(float *y, int64_t ld, int64_t rows, ptrdiff_t n);
#endif

/* A constant A packed once (Conv's weights at bind): pfvm_la_pack_a_all
 * writes all of A (m x k, strides as_m, as_k) in the order
 * pfvm_la_sgemm_packed reads it, pfvm_la_packed_floats(m, k) floats, and
 * returns the micro-kernel height it packed for, which
 * pfvm_la_sgemm_packed must be given back (packed on another CPU, the
 * caller packs per run). pfvm_la_sgemm_packed is pfvm_la_sgemm_ws with
 * that A (ws is required). */
PFVM_INTERNAL size_t pfvm_la_packed_floats(int64_t m, int64_t k);
PFVM_INTERNAL int pfvm_la_pack_a_all(int64_t m, int64_t k, const float *a, int64_t as_m, int64_t as_k, float *dst);
PFVM_INTERNAL int pfvm_la_packed_mr(void);
PFVM_INTERNAL void pfvm_la_sgemm_packed(int64_t m, int64_t n, int64_t k, float alpha, const float *apacked,
                                        pfvm_la_pack_fn pack, void *user, float *c, int64_t ldc, float *ws);
/* The threads a kernel may split its work over: always 1 in a
 * PFVM_NO_THREADS build, so that the compiler drops the split logic. */
/* Chunks of a split that the tasks claim from counters, where gcc and
 * clang's atomics exist without a library (not on Cortex-M0, say), so
 * that a thread the OS keeps waiting (a loaded machine) leaves its share
 * to the others. Each task first takes its own run of chunks (task i of
 * `runs`: [chunks x i / runs, chunks x (i + 1) / runs), in order), then
 * what is left of the others' runs, each run's counter handing out each
 * of its chunks once: where the threads keep pace, a thread computes the
 * same share of every node, and the data stays in its core's cache.
 * pfvm_claims_take: task i's next chunk, -1 when none is left. Elsewhere
 * (no PFVM__HAVE_CLAIMS) callers give task i chunks i, i + parts, ... */
#if !defined(PFVM_NO_THREADS) && defined(__GNUC__) && defined(__GCC_ATOMIC_INT_LOCK_FREE) && \
    __GCC_ATOMIC_INT_LOCK_FREE == 2
#define PFVM__HAVE_CLAIMS 1
#define PFVM_CLAIMS_RUNS 8 /* more tasks than this share one run */
typedef struct pfvm_claims {
    int next[PFVM_CLAIMS_RUNS]; /* run r's next chunk */
    int runs, chunks;
} pfvm_claims;
PFVM_INTERNAL void pfvm_claims_init(pfvm_claims *q, int parts, int chunks);
PFVM_INTERNAL int pfvm_claims_take(pfvm_claims *q, int i);
#endif

#ifdef PFVM_NO_THREADS
#define PFVM__KTHREADS(k) ((void)(k), 1)
#else
#define PFVM__KTHREADS(k) pfvm_kctx_threads(k)
#endif

/* pfvm_la_sgemm_ws and pfvm_la_sgemm_packed split over the kernel
 * context's threads (pfvm_kctx_parallel; k NULL: one thread), each part a
 * rectangle of C with all of K and a workspace of its own: ws is
 * pfvm_la_workspace's (one workspace per thread). Same bits as one
 * thread. */
PFVM_INTERNAL void pfvm_la_sgemm_mt(pfvm_kctx *k, int64_t m, int64_t n, int64_t kk, float alpha, const float *a,
                                    int64_t as_m, int64_t as_k, pfvm_la_pack_fn pack, void *user, float *c, int64_t ldc,
                                    float *ws);
PFVM_INTERNAL void pfvm_la_sgemm_packed_mt(pfvm_kctx *k, int64_t m, int64_t n, int64_t kk, float alpha,
                                           const float *apacked, pfvm_la_pack_fn pack, void *user, float *c, int64_t ldc,
                                           float *ws);

/* The epilogue of a product: C = clamp(alpha * A * B + bias[i]) where
 * C's entries are not read (bias NULL: zero; cl NULL: no clamp, else
 * [cl[0], cl[1]] in Clip's form, or Relu's where cl[2] != 0, as
 * pfvm__kctx_services.clamp). The x86 kernels apply it as they store
 * their tiles (no pass of its own over C); the bits are those of C filled
 * with the bias, the product added, then clamped. A PFVM_NO_FUSION build
 * has no clamp passes (nothing sets cl there): cl is ignored. */
typedef struct pfvm_la_epi {
    const float *bias, *cl;
    /* NULL, or a tensor added to the result before the clamp (a residual
     * connection: C = clamp(alpha * A * B + bias[i] + res[i * ldc + j])),
     * laid out as C (rows ldc apart) and not overlapping it. Builds with
     * PFVM__STORE_RESIDUAL (src/ops/fused.h) only: ignored elsewhere. The
     * bits are those of the product's epilogue, then an Add, then the
     * clamp. */
    const float *res;
    /* nonzero: C = x * sigmoid(x) of the result x (SiLU, the bits of
     * Sigmoid then Mul; never with cl or res). Builds with
     * PFVM__STORE_SILU (src/ops/fused.h) only: ignored elsewhere. */
    int silu;
} pfvm_la_epi;
/* pfvm_la_sgemm_mt (apacked NULL) or pfvm_la_sgemm_packed_mt (A packed by
 * pfvm_la_pack_a_all; a, as_m, as_k unused) with the epilogue e. */
PFVM_INTERNAL void pfvm_la_sgemm_epi_mt(pfvm_kctx *k, int64_t m, int64_t n, int64_t kk, float alpha, const float *a,
                                        int64_t as_m, int64_t as_k, const float *apacked, pfvm_la_pack_fn pack, void *user,
                                        float *c, int64_t ldc, float *ws, const pfvm_la_epi *e);

/* A stride-1 convolution whose output is as wide as its input, convolved
 * with A packed (pfvm_la_pack_a_all) and the input read in place (no
 * im2col): x holds cin planes of h x w, the window kh x kw with dilation
 * dh, dw starts pt rows and pl columns before the input (output: oh rows
 * of w). Computes C (m x oh*w, rows oh*w apart) = the product with the
 * epilogue e (required), the same bits as the engine's im2col product;
 * splits over k's threads as pfvm_la_sgemm_epi_mt does. Returns 0 (and
 * does nothing) where it does not apply: then the caller runs the engine.
 * AVX-512 hosts only (PFVM__LA_CONV_S1). */
#if defined(PFVM_AVX512_KERNELS) && !PFVM__LA_SMALL && !PFVM__LA_LEAN /* its tiles are the engine's, which the lean build leaves out */
#define PFVM__LA_CONV_S1 1
typedef struct pfvm_la_conv {
    const float *x;
    int64_t cin, h, w, oh;
    int kh, kw, dh, dw, pt, pl;
    int sh, sw;  /* strides (pfvm_la_conv_lanes; pfvm_la_conv_s1 reads neither) */
    int64_t ow;  /* the output's width (pfvm_la_conv_lanes) */
} pfvm_la_conv;
PFVM_INTERNAL int pfvm_la_conv_s1(pfvm_kctx *k, const pfvm_la_conv *cv, int64_t m, const float *apacked, float *c,
                                  const pfvm_la_epi *e);
/* A convolution on a small plane with output channels in the vector
 * lanes: tiles of PFVM_LA_LANES_M output channels x 7 output positions of
 * one output row (no column wasted where the output's width is a multiple
 * of 7, as resnet's 14x14 and 7x7 planes, which fill 32-position tiles
 * to 224 and 64; another width's last tile in each row computes 7 and
 * stores the rest), the input copied once into a zero-padded plane per
 * channel, stride 1 or 2, any window. wl: the weights packed by
 * pfvm_la_pack_lanes. Each entry's products are summed by fma in chunks
 * of PFVM_LA_KC in order and added to the bias, with the epilogue e
 * (required) as the engine's: the engine's bits. Splits over k's threads
 * by blocks of output channels. Returns 0 (and does nothing) where it
 * does not apply (m not a multiple of PFVM_LA_LANES_M, other strides, no
 * AVX-512): then the caller runs
 * the engine. AVX-512 hosts only (PFVM__LA_CONV_S1). */
#define PFVM_LA_LANES_M 64
PFVM_INTERNAL int pfvm_la_conv_lanes(pfvm_kctx *k, const pfvm_la_conv *cv, int64_t m, const float *wl, float *c,
                                     const pfvm_la_epi *e);
/* The m x k weights a (row-major) packed for pfvm_la_conv_lanes into dst
 * (m * k floats; m a multiple of PFVM_LA_LANES_M): blocks of
 * PFVM_LA_LANES_M rows, each as k columns of PFVM_LA_LANES_M. */
PFVM_INTERNAL void pfvm_la_pack_lanes(int64_t m, int64_t k, const float *a, float *dst);
/* The most workspace (pfvm_kctx_scratch, in floats) pfvm_la_conv_lanes
 * asks for on cv's shape with m output channels, at any thread count: for
 * Conv's workspace hook, so that running allocates nothing. */
PFVM_INTERNAL size_t pfvm_la_conv_lanes_ws_floats(const pfvm_la_conv *cv, int64_t m);
#endif

/* ---- tensor.c: element copies, the strided walk, index checks ---- */

/* A walk over a source tensor in row-major order of the box `dims`: step
 * (i_0..i_{rank-1}) reads source element off + sum_d i_d*stride[d]
 * (strides in elements; 0 repeats an element, negative walks backwards).
 * Transpose, Slice, Expand, Tile, DepthToSpace... are one walk each. */
#define PFVM_TN_WALK_MAX (2 * PFVM_MAX_RANK)
typedef struct pfvm_tn_walk {
    int rank;
    int64_t off;
    int64_t dims[PFVM_TN_WALK_MAX];
    int64_t stride[PFVM_TN_WALK_MAX];
} pfvm_tn_walk;

/* Copies the walk's elements of src to dst, contiguously from element
 * dst_off on (strings duplicated). Fails, copying nothing, when the walk
 * leaves src or the copy would overrun dst. */
PFVM_INTERNAL pfvm_code pfvm_tn_copy_walk(pfvm_kctx *k, pfvm_tensor *dst, int64_t dst_off, const pfvm_tensor *src,
                                          const pfvm_tn_walk *w);
/* Copies n elements from src[si] to dst[di] (same dtype; strings are
 * duplicated, the destination's old strings freed). No bounds checks. */
PFVM_INTERNAL void pfvm_tn_copy(pfvm_tensor *dst, int64_t di, const pfvm_tensor *src, int64_t si, int64_t n);
/* Output i with this dtype and shape: kept when it already is exactly
 * that (planned), else pfvm_kctx_output (which rejects a different plan). */
PFVM_INTERNAL pfvm_code pfvm_tn_output(pfvm_kctx *k, int i, pfvm_dtype dtype, int rank, const int64_t *dims);
/* Fails unless every present input is a tensor with storage for its
 * elements. */
PFVM_INTERNAL pfvm_code pfvm_tn_check_inputs(pfvm_kctx *k);
/* Element i of an index tensor, negative values counted from dim; -1 when
 * it is out of [-dim, dim). */
PFVM_INTERNAL int64_t pfvm_tn_index(const pfvm_tensor *t, int64_t i, int64_t dim);
/* Stores an integer into element i of any numeric tensor: integer types
 * keep the low bits (wrapping like numpy), floats round. */
PFVM_INTERNAL void pfvm_tn_store_i64(pfvm_tensor *t, int64_t i, int64_t v);

/* ---- accel_lower.c: accel lowerings (pfvm_accel_fn) the families' tables
 * name, kept apart from their kernels ---- */

/* Conv (2-D, any group): im2col by `mov`/`fill`, one gemm per group and
 * band of output rows (bands shrink until the temporaries fit), bias by
 * row. */
PFVM_INTERNAL pfvm_code pfvm_acl_conv(pfvm_accel_ctx *c);
/* MaxPool (no Indices) and AveragePool (2-D): one gathered plane per tap. */
PFVM_INTERNAL pfvm_code pfvm_acl_pool(pfvm_accel_ctx *c);
/* GlobalAveragePool, GlobalMaxPool: a row reduction per channel. */
PFVM_INTERNAL pfvm_code pfvm_acl_global_pool(pfvm_accel_ctx *c);
/* Inference BatchNormalization: per-channel scale and shift by rows. */
PFVM_INTERNAL pfvm_code pfvm_acl_batchnorm(pfvm_accel_ctx *c);
/* Clip with constant bounds. */
PFVM_INTERNAL pfvm_code pfvm_acl_clip(pfvm_accel_ctx *c);
/* Reshape, Flatten, Squeeze, Unsqueeze, Identity, Dropout: a copy in each
 * PE when the first axis (the PEs' split) is kept. */
PFVM_INTERNAL pfvm_code pfvm_acl_view(pfvm_accel_ctx *c);
/* Transpose keeping the first axis first: 2-D moves in each PE. */
PFVM_INTERNAL pfvm_code pfvm_acl_transpose(pfvm_accel_ctx *c);
/* Concat along an axis other than the first: one strided move per input. */
PFVM_INTERNAL pfvm_code pfvm_acl_concat(pfvm_accel_ctx *c);
/* LogSoftmax over the last axis: max, shifted exp, sum, log. */
PFVM_INTERNAL pfvm_code pfvm_acl_logsoftmax(pfvm_accel_ctx *c);
/* MatMul: rows of A (split or whole) times a 2-D B on every PE, or batched
 * with both operands whole (one gemm per batch). */
PFVM_INTERNAL pfvm_code pfvm_acl_matmul(pfvm_accel_ctx *c);
/* Gemm's resident lowering (src/ops/linalg.c): rows of A times the whole
 * B on every PE, C added along the rows; streamed, pfvm_acl_gemm_stream. */
PFVM_INTERNAL pfvm_code pfvm_acl_gemm(pfvm_accel_ctx *c);
/* Gemm (no transA) streamed in tiles of the output, K whole. */
PFVM_INTERNAL pfvm_code pfvm_acl_gemm_stream(pfvm_accel_ctx *c);
/* LayerNormalization's resident lowering (src/ops/nn.c): each row whole on
 * its PE; streamed, pfvm_acl_ln_stream. */
PFVM_INTERNAL pfvm_code pfvm_acl_layernorm(pfvm_accel_ctx *c);
/* LayerNormalization streamed with its rows split over PEs (taken only when
 * it beats the rows stream of its resident lowering). */
PFVM_INTERNAL pfvm_code pfvm_acl_ln_stream(pfvm_accel_ctx *c);
/* Slice with constant bounds and positive steps: strided moves. */
PFVM_INTERNAL pfvm_code pfvm_acl_slice(pfvm_accel_ctx *c);
/* ReduceSum, ReduceMean, ReduceMax, ReduceMin over trailing axes (the
 * other reductions' tables name it too and get a clear refusal). */
PFVM_INTERNAL pfvm_code pfvm_acl_reduce(pfvm_accel_ctx *c);
/* LayerNormalization's compose rule (src/ops/nn.c), run by ReduceMean's
 * simplify hook in PFVM_RW_COMPOSE mode: an exported LayerNorm's nine
 * nodes starting at `mean` become one LayerNormalization. */
PFVM_INTERNAL pfvm_code pfvm_nn_compose_ln(pfvm_rewrite *rw, pfvm_node *mean);

#ifdef __cplusplus
}
#endif
#endif /* PFVM_OPS_COMMON_H */
