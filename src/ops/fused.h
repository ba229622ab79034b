/* exec/fused: fused groups and the fused-loop engine.
 *
 * The fusion pass (src/passes/fuse.c) turns a group of element-wise and
 * broadcast nodes into one node of domain `pfvm` that calls a model-local
 * function (ONNX FunctionProto) holding the group's nodes. This module runs
 * such calls. The group's body is compiled once per node into a small
 * program over block registers: arrays of PFVM_FUSE_BLOCK floats. Each
 * operator's `fuse` hook (in its own definition, src/ops/...) emits its
 * instruction(s): a kernel function that computes one block,
 * d[e] = f(s0[e], s1[e], s2[e]) for e < PFVM_FUSE_BLOCK, with parameters
 * copied into the instruction. Running walks the output block by block:
 * group inputs are loaded into registers with their broadcast strides
 * (a scalar once per run, a row or a column as the walk reaches it; no
 * broadcast is ever materialized), the instructions run, and the group's
 * outputs are stored. A group's intermediate values live in registers
 * only: the planner never sees them.
 *
 * Registers hold float32; booleans are 0 and 1, other element types are
 * converted when loaded and stored. A hook accepts a node only when the
 * result is exactly what the node's own kernel computes (float32 math,
 * comparisons, Where, Cast between float types and bool); otherwise it
 * refuses and the node stays out of groups.
 *
 * Calls to model-local functions whose body cannot be compiled (a node
 * without a fuse hook, an element type a hook refuses, outputs of
 * different shapes) run the body as a subgraph, so every model-local
 * function without attributes runs. */
#ifndef PFVM_FUSED_H
#define PFVM_FUSED_H

#include "../opi/opi.h"

#ifdef __cplusplus
extern "C" {
#endif

/* pfvm:internal-begin */
/* Elements per register. Kernels loop over exactly this many, so compilers
 * unroll and vectorize them (gcc -O2 vectorizes only constant trip counts).
 * 1024 (4 KB registers) on 64-bit hosts: with 16-float vectors a kernel call
 * then runs 64 iterations, not 16, and a group's registers still fit a
 * 32-48 KB L1 cache; 64 elsewhere (microcontrollers: stack and RAM). */
#ifndef PFVM_FUSE_BLOCK
#if defined(__x86_64__) || defined(_M_X64) || defined(__aarch64__) || defined(_M_ARM64)
#define PFVM_FUSE_BLOCK 1024
#elif defined(PFVM_NO_FUSION)
/* no engine: only the element-wise loops' blocks (three on the stack) */
#define PFVM_FUSE_BLOCK 64
#else
/* 32-bit cores: 64, as small a block as keeps the per-block calls a few
 * percent of the work: a group's last, partial block runs whole, and at
 * 256 a 128-element group (the mlp's GELU) computed twice its size */
#define PFVM_FUSE_BLOCK 64
#endif
#endif

/* `restrict` for kernels (a C99 keyword; C++ compilers spell it __restrict). */
#ifndef PFVM_RESTRICT
#if defined(__cplusplus)
#define PFVM_RESTRICT __restrict
#else
#define PFVM_RESTRICT restrict
#endif
#endif

/* Runtime CPU dispatch for the float32 kernels (fused-loop kernels and the
 * element-wise operators' float32 loops, which call them): on x86-64 with
 * glibc, compilers that have `target_clones` (gcc 11+, clang 14+) build
 * each kernel for x86-64-v4 (AVX-512), x86-64-v3 (AVX2 and FMA) and the
 * baseline, and the loader picks one for the CPU once (an ifunc), so a
 * default build runs 16 or 8 floats per instruction where the CPU can.
 * The compiler contracts nothing into fused multiply-adds in any version
 * (gcc here, clang with the STDC pragma around the kernels); the float32
 * exp/erf/tanh/sigmoid polynomials ask for them by name (PFVM__EW_FMA in
 * src/ops/elementwise.c): one instruction in the v3 and v4 versions,
 * libm's fmaf in the baseline one, so all versions round alike. Elsewhere
 * (other compilers, Arm, musl, Windows), or with PFVM_NO_DISPATCH
 * defined, kernels are compiled once for the target the build names. */
/* clang (14) gives a static target_clones function an external resolver
 * symbol (<name>.resolver), so two PFVM_STATIC copies built by clang would
 * clash: such a copy compiles its kernels once, for the build's target. */
#if defined(__clang__) && defined(PFVM__AMALGAMATION) && defined(PFVM_STATIC) && !defined(PFVM_NO_DISPATCH)
#define PFVM_NO_DISPATCH
#endif
#if !defined(PFVM_NO_DISPATCH) && defined(__x86_64__) && defined(__GNUC__) && defined(__linux__) && \
    defined(__GLIBC__) && defined(__has_attribute)
#if __has_attribute(target_clones) && (defined(__clang__) || __GNUC__ >= 11)
#if defined(__clang__)
#define PFVM_DISPATCH __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define PFVM_DISPATCH \
    __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default"), optimize("fp-contract=off")))
#endif
#define PFVM_DISPATCH_CLONES 1
#endif
#endif
#ifndef PFVM_DISPATCH
#define PFVM_DISPATCH
#endif

/* Builds whose Conv honors pfvm__kctx_services.clamp: x86's (the
 * depthwise kernel's AVX2 stores gain, and the clamp is stored by the
 * threads that compute the result instead of a one-thread fused-loop pass
 * after it) and 32-bit Arm's (the clamp pass after each group costs less
 * than the fused-loop engine's Relu pass; PFVM_CONV_DIRECT forces the Arm
 * choice on a host, for tests). Only the fused-loop engine sets the clamp:
 * a PFVM_NO_FUSION build has none to honor. Here, not in opi.h: it reads
 * PFVM_DISPATCH_CLONES, defined just above (in opi.h it was read before it
 * was defined, which left x86 without the store clamp). */
#if (defined(PFVM_DISPATCH_CLONES) || defined(PFVM_CONV_DIRECT) || (defined(__arm__) && !defined(__aarch64__))) && \
    !defined(PFVM_NO_FUSION)
#define PFVM__STORE_CLAMP 1
#endif

/* Builds whose Conv honors pfvm__kctx_services.residual (the GEMM's tiles
 * add it as they store, see pfvm_la_epi): 64-bit hosts (x86-64, aarch64),
 * where the separate pass of a residual Add over the Conv's output costs
 * as much as a tenth of a network; not microcontrollers (their flash). */
#if (defined(__x86_64__) || defined(_M_X64) || defined(__aarch64__) || defined(PFVM_STORE_RESIDUAL)) && \
    !defined(PFVM_NO_FUSION)
#define PFVM__STORE_RESIDUAL 1
#endif

/* Builds whose Conv honors pfvm__kctx_services.silu (x * sigmoid(x) as
 * the GEMM's tiles and the depthwise planes are stored, see pfvm_la_epi):
 * the same 64-bit hosts, where efficientnet's SiLU after each Conv was a
 * pass over memory of its own. */
#ifdef PFVM__STORE_RESIDUAL
#define PFVM__STORE_SILU 1
#endif

/* Where the dispatch is, kernels may also come hand-written for AVX-512
 * (target("avx512f") functions picked at run time with
 * pfvm__have_avx512): the fused loop's chain kernel, and float32 sigmoid.
 * Each gives the same bits as the portable version. PFVM_NO_AVX512
 * leaves them out. */
#if defined(PFVM_DISPATCH_CLONES) && !defined(PFVM_NO_AVX512)
#define PFVM_AVX512_KERNELS 1
#endif
/* pfvm:internal-end */
/* 1 when the CPU runs AVX-512F (checked once), 0 elsewhere. */
PFVM_INTERNAL int pfvm__have_avx512(void);

#define PFVM_FUSE_MAX_SRC 3     /* sources of one instruction */
#define PFVM_FUSE_PARAM_BYTES 64 /* parameters of one instruction */

/* One instruction's work: d[e] = f(s[0][e], ...) for e < PFVM_FUSE_BLOCK.
 * `d` never aliases a source. `params` is the copy made by
 * pfvm_fuse_emit, aligned for doubles and 64-bit integers. */
typedef void (*pfvm_fuse_kernel)(float *d, const float *const *s, const void *params);

/* ---- for operators' fuse hooks --------------------------------------------
 *
 * A hook reads its node's attributes, asks the element types of its inputs
 * with pfvm_fuse_dtype, and emits instructions over operands: the node's
 * inputs (PFVM_FUSE_IN(i)), its outputs (PFVM_FUSE_OUT(j), each written
 * once) and temporaries (pfvm_fuse_tmp). A hook that cannot compute the node
 * exactly as its kernel does calls pfvm_fuse_refuse and emits nothing. The
 * same hook runs when the fusion pass decides whether a node may join a
 * group (emission is then only checked) and when a group is compiled. */
#define PFVM_FUSE_IN(i) (i)
#define PFVM_FUSE_OUT(j) (4096 + (j))

/* Element type of the node's input i; PFVM_UNDEFINED when it is omitted. */
PFVM_INTERNAL pfvm_dtype pfvm_fuse_dtype(const pfvm_fuse_ctx *f, int i);
/* A new temporary operand (valid within this node), or -1 when out of memory. */
PFVM_INTERNAL int pfvm_fuse_tmp(pfvm_fuse_ctx *f);
/* Appends d = fn(src...) with `size` bytes of parameters (at most
 * PFVM_FUSE_PARAM_BYTES; NULL/0 for none). */
PFVM_INTERNAL pfvm_code pfvm_fuse_emit(pfvm_fuse_ctx *f, pfvm_fuse_kernel fn, const void *params, size_t size, int d,
                                       int n_src, const int *src);
/* The instruction just emitted (two sources) may run `fn` instead when its
 * second source is one value for the whole run (a scalar group input):
 * `fn` computes the same results reading only s[1][0]. */
PFVM_INTERNAL pfvm_code pfvm_fuse_variant(pfvm_fuse_ctx *f, pfvm_fuse_kernel fn);
/* GELU written out (x * (erf(x / a) + b) * c, torch's export: Div, Erf,
 * Add, Mul, Mul) folded into one call per block on 32-bit cores, where
 * each step's loop and call cost as much as its arithmetic (the mlp's
 * GELU: five kernels over 128 values); PFVM_FUSE_FOLD asks for it
 * elsewhere (tests). The Erf hook declares with pfvm_fuse_gelu_form the
 * kernel that computes d = (x * (erf(x / a) + b)) * c from s[0] = x, each
 * step rounded as the separate instructions round it (the same bits),
 * the multiplication by x in the order the Mul instruction has it; d may
 * be s[0] (each value read before its result is written: the engine then
 * reads the head's result in place, pfvm__fz_head_in_place). */
#if !defined(PFVM__FUSE_FOLD) && \
    (defined(PFVM_FUSE_FOLD) || !(defined(__x86_64__) || defined(_M_X64) || defined(__aarch64__) || defined(_M_ARM64)))
#define PFVM__FUSE_FOLD 1
#endif
typedef struct pfvm_fuse_gelu_params {
    float a, b, c; /* the fixed inputs of the Div, the Add and the last Mul */
    int x_second;  /* the Mul is (erf(..) + b) * x, not x * (erf(..) + b) */
} pfvm_fuse_gelu_params;
/* The instruction just emitted is erf(s0) (one source); fn: its GELU form. */
PFVM_INTERNAL pfvm_code pfvm_fuse_gelu_form(pfvm_fuse_ctx *f, pfvm_fuse_kernel fn);
/* Micro-ops: simple float32 operations that the engine runs several of in
 * one pass over a block, values kept in CPU registers between them, when
 * instructions chain (each result read only by the next instruction, as
 * its first source). A hook declares with pfvm_fuse_uop that the
 * instruction it just emitted computes exactly, element by element, what
 * the micro-op computes (s0, s1: its sources; s1 may be one value for the
 * run or a register); the engine then gives the same results either way. */
enum {
    PFVM_FUSE_U_NONE,
    PFVM_FUSE_U_ADD,  /* s0 + s1 */
    PFVM_FUSE_U_SUB,  /* s0 - s1 */
    PFVM_FUSE_U_MUL,  /* s0 * s1 */
    PFVM_FUSE_U_DIV,  /* s0 / s1 */
    PFVM_FUSE_U_MAX,  /* s1 if s1 != s1 or s1 > s0, else s0 */
    PFVM_FUSE_U_MIN,  /* s1 if s1 != s1 or s1 < s0, else s0 */
    PFVM_FUSE_U_RELU, /* s0 > 0 ? s0 : 0 */
    PFVM_FUSE_U_NEG,  /* -s0 (the sign bit flipped) */
    PFVM_FUSE_U_ABS,  /* s0 with its sign bit cleared */
    /* float32 sigmoid as the Sigmoid operator computes it: never chained
     * (the chain kernel has no exp), a tag that lets the engine recognise
     * x * sigmoid(x) after a head and hand it to the head's store */
    PFVM_FUSE_U_SIGMOID,
    PFVM_FUSE_U_COUNT
};
/* The instruction just emitted is micro-op `uop` (binary ones need two
 * sources, unary ones one). */
PFVM_INTERNAL pfvm_code pfvm_fuse_uop(pfvm_fuse_ctx *f, int uop);
/* Output or temporary d is the same value as operand src (no work). */
PFVM_INTERNAL pfvm_code pfvm_fuse_alias(pfvm_fuse_ctx *f, int d, int src);
/* The node cannot be fused: returns PFVM_ERR_UNSUPPORTED (the reason goes
 * into the status when the caller gave one). */
PFVM_INTERNAL pfvm_code pfvm_fuse_refuse(pfvm_fuse_ctx *f, const char *why);

/* The node's input i when its contents are known (an initializer while
 * the pass decides, the call's input tensor while a group compiles), or
 * NULL: hooks read axes and exponents here. */
PFVM_INTERNAL const pfvm_tensor *pfvm_fuse_const(const pfvm_fuse_ctx *f, int i);

/* Reductions end a group: the node's output d (PFVM_FUSE_OUT(j)) is the
 * reduction of operand src over `axes` (n_axes of them; none: every axis)
 * of the group's shape, with or without the reduced dims (keepdims). Its
 * elements start at `init`; `accum` folds a run of n values into them
 * (v[e] into acc[e*inc], inc 0: all into acc[0], in order), in double like
 * the Reduce kernels; `finish` turns an accumulator and the number of
 * values folded into the result. A reduction's result cannot be read
 * inside its group. */
typedef void (*pfvm_fuse_accum)(double *acc, int64_t inc, const float *v, int64_t n);
typedef double (*pfvm_fuse_finish)(double acc, int64_t count);
typedef struct pfvm_fuse_reducer {
    double init;
    pfvm_fuse_accum accum;
    pfvm_fuse_finish finish; /* NULL: the accumulator itself */
} pfvm_fuse_reducer;
PFVM_INTERNAL pfvm_code pfvm_fuse_reduce(pfvm_fuse_ctx *f, int d, int src, const pfvm_fuse_reducer *r,
                                         const int64_t *axes, int n_axes, int keepdims);

/* ---- for the fusion pass ---------------------------------------------------- */

/* What a hook said about a node. */
typedef struct pfvm_fuse_info {
    int reduction;   /* it reduces: its outputs have another shape */
    int iter_input;  /* then: the input whose shape the group walks, or -1 */
    unsigned used;   /* bit i: input i is read element by element (the others,
                        axes and the like, need no broadcasting) */
} pfvm_fuse_info;

/* 1 when `n` can be part of a fused group given the element types of its
 * inputs (in_dtypes[i], PFVM_UNDEFINED for omitted ones) and their known
 * contents (consts, may be NULL): its operator has a fuse hook and the
 * hook accepts the node. Fills *info when given. */
PFVM_INTERNAL int pfvm_fuse_accepts(const pfvm_node *n, const pfvm_dtype *in_dtypes, const pfvm_tensor *const *consts,
                                    pfvm_fuse_info *info);

/* The model-local function a node calls (by domain and op_type), or NULL. */
PFVM_API const pfvm_function *pfvm_model_function(const pfvm_model *m, const char *domain, const char *name);

/* pfvm:internal-begin */
/* The definition every call of a model-local function resolves to (when
 * no operator of that name exists): inference through the body, and a
 * kernel that runs the fused-loop engine or, failing that, the body. (In
 * the amalgamation it is static and defined before registry.c reads it.) */
#ifndef PFVM__AMALGAMATION
extern const pfvm_op_def pfvm__op_function_call;
#endif
/* pfvm:internal-end */
/* Compiles the program of a call of pfvm__op_function_call ahead of its
 * first run (the executor's bind), so that running allocates nothing: k
 * as for the kernel, in_dtype[j] each input's type, consts[j] the inputs
 * whose contents are already fixed (else NULL). Sizes the executor's
 * scratch for the program's reductions when the outputs are planned, and
 * runs the head's prepare hook with known[j] (consts plus initializers).
 * A body that does not compile is left to the kernel (it runs as a
 * subgraph). */
PFVM_INTERNAL pfvm_code pfvm__fz_prepare(pfvm_kctx *k, const pfvm_dtype *in_dtype, const pfvm_tensor *const *consts,
                                         const pfvm_tensor *const *known);
/* Does n run through pfvm__op_function_call (a fused group or another
 * model-local function)? */
PFVM_INTERNAL int pfvm__fz_is_call(const pfvm_node *n);
/* Element types of a fused body's values (vdt, by value id) for the given
 * input types: 0 when one is unknown. */
PFVM_INTERNAL int pfvm__fz_value_dtypes(const pfvm_graph *body, const pfvm_dtype *in_dtype, pfvm_dtype *vdt,
                                        pfvm_symtab *syms);

#ifdef __cplusplus
}
#endif
#endif /* PFVM_FUSED_H */
