/* Shared parts of pfvm's fuzz targets (tests/fuzz/README).
 *
 * The targets link build-fuzz/libpfvm.a (the src/ objects compiled once with
 * clang -fsanitize=fuzzer-no-link,address,undefined) rather than including
 * the amalgamated headers: the five targets then share one instrumented
 * build, a fix in src/ rebuilds one object, and a report's stack names the
 * src/ file and line to edit. The amalgamated headers are the same code
 * (amalgamate.py --check keeps them so).
 *
 * With FUZZ_MODEL_MUTATOR defined before including this file, a target
 * that takes ModelProto bytes gets a structure-aware LLVMFuzzerCustomMutator:
 * half of the time it decodes the model with pfvm's reader, edits decoded
 * fields (attribute ints, floats, strings and lists, node inputs and
 * outputs, op types, value dtypes and dims, initializer bytes and dtypes,
 * opset versions; drops nodes) and re-encodes with pfvm's writer; the other
 * half, and whenever decoding or encoding fails, it mutates bytes with
 * LLVMFuzzerMutate. */
#ifndef PFVM_FUZZ_COMMON_H
#define PFVM_FUZZ_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/exec.h"
#include "plan/symplan.h"
#include "onnx/onnx_io.h"
#include "passes/passes.h"
#include "shape/infer.h"

/* A finding that is not a sanitizer report: a broken invariant. */
#define FUZZ_CHECK(cond, ...)                                                  \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "fuzz check failed: %s (%s:%d): ", #cond, __FILE__, __LINE__); \
            fprintf(stderr, __VA_ARGS__);                                      \
            fputc('\n', stderr);                                               \
            abort();                                                           \
        }                                                                      \
    } while (0)

/* FNV-1a over the input: deterministic choices that depend on the bytes. */
static inline uint64_t fuzz_hash(const uint8_t *p, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    size_t i;
    for (i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

#ifdef FUZZ_MODEL_MUTATOR

size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);

typedef struct fuzz_rng {
    uint64_t s;
} fuzz_rng;

static uint32_t fuzz_next(fuzz_rng *r)
{
    r->s ^= r->s << 13;
    r->s ^= r->s >> 7;
    r->s ^= r->s << 17;
    return (uint32_t)(r->s >> 11);
}

static uint32_t fuzz_below(fuzz_rng *r, uint32_t n)
{
    return n ? fuzz_next(r) % n : 0;
}

static int64_t fuzz_int(fuzz_rng *r, int64_t old)
{
    static const int64_t special[] = {0, 1, -1, 2, -2, 3, 4, 7, 8, 16, 255, 256, 1023, 65536, INT32_MAX,
                                      INT32_MIN, INT64_MAX, INT64_MIN, (int64_t)1 << 31, (int64_t)1 << 40};
    switch (fuzz_below(r, 4)) {
    case 0:
        return special[fuzz_below(r, sizeof special / sizeof special[0])];
    case 1:
        return (int64_t)((uint64_t)old + fuzz_below(r, 5) - 2); /* wraps, no UB */
    case 2:
        return (int64_t)(0 - (uint64_t)old);
    default:
        return (int64_t)fuzz_below(r, 10) - 3;
    }
}

static float fuzz_float(fuzz_rng *r, float old)
{
    static const float special[] = {0.0f, -0.0f, 1.0f, -1.0f, 0.5f, 1e-30f, 1e30f, 3.4e38f, 1e-45f};
    switch (fuzz_below(r, 4)) {
    case 0:
        return special[fuzz_below(r, sizeof special / sizeof special[0])];
    case 1:
        return old * 2.0f;
    case 2: {
        /* NaN and infinities without <math.h> macros that C99 makes optional */
        union { uint32_t u; float f; } v;
        v.u = fuzz_below(r, 2) ? 0x7fc00000u : 0x7f800000u | (fuzz_below(r, 2) ? 0x80000000u : 0);
        return v.f;
    }
    default:
        return -old;
    }
}

/* Strings attributes often hold: modes, padding kinds, directions. */
static const char *fuzz_string(fuzz_rng *r)
{
    static const char *const s[] = {"", "NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID", "constant", "reflect",
                                    "edge", "wrap", "linear", "nearest", "cubic", "bilinear", "half_pixel",
                                    "asymmetric", "align_corners", "tf_crop_and_resize", "round_prefer_floor",
                                    "floor", "ceil", "forward", "reverse", "bidirectional", "Tanh", "Sigmoid",
                                    "Relu", "none", "mean", "sum", "add", "mul", "max", "min", "reduction",
                                    "LOWER", "UPPER", "TF", "IDF", "TFIDF", "ij,jk->ik", "...ii->...i",
                                    "bi,bj", "a", "\xff\xfe", "%s%n"};
    return s[fuzz_below(r, sizeof s / sizeof s[0])];
}

/* Operator names to swap in: a node gets another op's attributes and
 * inputs, which is what shape inference and kernels must refuse. */
static const char *fuzz_op(fuzz_rng *r)
{
    static const char *const s[] = {"Add", "MatMul", "Conv", "Reshape", "Gather", "Slice", "Concat", "Split",
                                    "Transpose", "Expand", "Tile", "Pad", "Resize", "ReduceSum", "Softmax",
                                    "Cast", "Shape", "Size", "ConstantOfShape", "Range", "NonZero", "TopK",
                                    "Unsqueeze", "Squeeze", "Flatten", "Einsum", "Gemm", "LSTM", "If", "Loop",
                                    "Scan", "Where", "OneHot", "ScatterND", "GatherND", "CumSum", "DFT",
                                    "SequenceConstruct", "SplitToSequence", "ConcatFromSequence", "Identity",
                                    "MaxPool", "AveragePool", "BatchNormalization", "LayerNormalization",
                                    "QuantizeLinear", "DequantizeLinear", "Col2Im", "GridSample", "Trilu"};
    return s[fuzz_below(r, sizeof s / sizeof s[0])];
}

static pfvm_graph *fuzz_pick_graph(fuzz_rng *r, pfvm_model *m)
{
    pfvm_graph *g = m->graph;
    /* walk down into a node's graph attribute (If, Loop, Scan bodies) now and then */
    while (g && pfvm_graph_num_nodes(g) && fuzz_below(r, 3) == 0) {
        const pfvm_node *n = pfvm_graph_node(g, (int)fuzz_below(r, (uint32_t)pfvm_graph_num_nodes(g)));
        const pfvm_attr *a = n && n->n_attrs ? &n->attrs[fuzz_below(r, (uint32_t)n->n_attrs)] : NULL;
        if (a && a->type == PFVM_ATTR_GRAPH && a->g)
            g = a->g;
        else if (a && a->type == PFVM_ATTR_GRAPHS && a->n > 0 && a->graphs[0])
            g = a->graphs[fuzz_below(r, (uint32_t)a->n)];
        else
            break;
    }
    return g;
}

static pfvm_value *fuzz_pick_value(fuzz_rng *r, pfvm_graph *g)
{
    int n = pfvm_graph_num_values(g);
    return n ? pfvm_graph_value_at(g, (int)fuzz_below(r, (uint32_t)n)) : NULL;
}

static int fuzz_mutate_attr(fuzz_rng *r, pfvm_model *m, pfvm_attr *a)
{
    int k;
    switch (a->type) {
    case PFVM_ATTR_INT:
        a->i = fuzz_int(r, a->i);
        return 1;
    case PFVM_ATTR_FLOAT:
        a->f = fuzz_float(r, a->f);
        return 1;
    case PFVM_ATTR_STRING: {
        const char *s = pfvm_model_strdup(m, fuzz_string(r));
        if (!s)
            return 0;
        a->s = s;
        a->s_len = strlen(s);
        return 1;
    }
    case PFVM_ATTR_INTS:
        if (a->n == 0)
            return 0;
        if (fuzz_below(r, 4) == 0) {
            a->n = (int)fuzz_below(r, (uint32_t)a->n); /* shorter list */
            return 1;
        }
        k = (int)fuzz_below(r, (uint32_t)a->n);
        a->ints[k] = fuzz_int(r, a->ints[k]);
        return 1;
    case PFVM_ATTR_FLOATS:
        if (a->n == 0)
            return 0;
        if (fuzz_below(r, 4) == 0) {
            a->n = (int)fuzz_below(r, (uint32_t)a->n);
            return 1;
        }
        k = (int)fuzz_below(r, (uint32_t)a->n);
        a->floats[k] = fuzz_float(r, a->floats[k]);
        return 1;
    case PFVM_ATTR_STRINGS:
        if (a->n == 0)
            return 0;
        k = (int)fuzz_below(r, (uint32_t)a->n);
        a->strings[k] = pfvm_model_strdup(m, fuzz_string(r));
        if (!a->strings[k])
            a->strings[k] = "";
        if (a->strings_len)
            a->strings_len[k] = strlen(a->strings[k]);
        return 1;
    default:
        return 0;
    }
}

/* Changes bytes of a tensor's data, or its dtype for one of the same size,
 * or its dims for a shape with no more elements (the data stays in range). */
static int fuzz_mutate_tensor(fuzz_rng *r, pfvm_tensor *t)
{
    int64_t numel = pfvm_tensor_numel(t);
    size_t es = pfvm_dtype_size(t->dtype);
    if (t->kind != PFVM_KIND_TENSOR || t->dtype == PFVM_STRING || !t->data)
        return 0;
    switch (fuzz_below(r, 3)) {
    case 0:
        if (t->nbytes == 0 || !t->owns_data)
            return 0;
        {
            size_t at = fuzz_below(r, (uint32_t)(t->nbytes > 0xffffffffu ? 0xffffffffu : t->nbytes));
            unsigned char *p = (unsigned char *)t->data;
            int64_t v = fuzz_int(r, 0);
            size_t k;
            for (k = 0; k < es && at + k < t->nbytes; k++)
                p[at + k] = (unsigned char)(v >> (8 * (k % 8)));
        }
        return 1;
    case 1: {
        static const pfvm_dtype same4[] = {PFVM_FLOAT, PFVM_INT32, PFVM_UINT32};
        static const pfvm_dtype same8[] = {PFVM_INT64, PFVM_DOUBLE, PFVM_UINT64, PFVM_COMPLEX64};
        static const pfvm_dtype same1[] = {PFVM_UINT8, PFVM_INT8, PFVM_BOOL, PFVM_FLOAT8E4M3FN, PFVM_UINT4};
        if (es == 4)
            t->dtype = same4[fuzz_below(r, 3)];
        else if (es == 8)
            t->dtype = same8[fuzz_below(r, 4)];
        else if (es == 1)
            t->dtype = same1[fuzz_below(r, 5)];
        else
            return 0;
        return 1;
    }
    default:
        if (t->rank == 0)
            return 0;
        {
            int d = (int)fuzz_below(r, (uint32_t)t->rank);
            if (t->dims[d] > 0)
                t->dims[d] = (int64_t)fuzz_below(r, (uint32_t)(t->dims[d] > 4 ? 4 : t->dims[d]));
            else if (fuzz_below(r, 2) && t->rank > 1)
                t->rank--; /* 0 elements either way */
            (void)numel;
        }
        return 1;
    }
}

static int fuzz_mutate_ir(fuzz_rng *r, pfvm_model *m)
{
    pfvm_graph *g = fuzz_pick_graph(r, m);
    int nn = g ? pfvm_graph_num_nodes(g) : 0;
    pfvm_node *n = nn ? pfvm_graph_node(g, (int)fuzz_below(r, (uint32_t)nn)) : NULL;
    pfvm_value *v;
    switch (fuzz_below(r, 12)) {
    case 0:
    case 1:
    case 2: /* an attribute value (the most common lever) */
        if (!n || n->n_attrs == 0)
            return 0;
        return fuzz_mutate_attr(r, m, &n->attrs[fuzz_below(r, (uint32_t)n->n_attrs)]);
    case 3: /* a node input: another value of the graph, or omitted */
        if (!n || n->n_inputs == 0)
            return 0;
        n->inputs[fuzz_below(r, (uint32_t)n->n_inputs)] = fuzz_below(r, 4) ? fuzz_pick_value(r, g) : NULL;
        return 1;
    case 4: /* one input or output fewer */
        if (!n)
            return 0;
        if (fuzz_below(r, 2) && n->n_inputs > 0)
            n->n_inputs--;
        else if (n->n_outputs > 1)
            n->n_outputs--;
        else
            return 0;
        return 1;
    case 5: /* an output slot renamed to an existing value (two producers, or a cycle) */
        if (!n || n->n_outputs == 0 || !(v = fuzz_pick_value(r, g)))
            return 0;
        n->outputs[fuzz_below(r, (uint32_t)n->n_outputs)] = v;
        return 1;
    case 6: /* another operator */
        if (!n)
            return 0;
        n->op_type = fuzz_below(r, 2) || nn < 2 ? fuzz_op(r) : pfvm_graph_node(g, (int)fuzz_below(r, (uint32_t)nn))->op_type;
        n->op = NULL;
        return 1;
    case 7: /* a declared dtype */
        if (!g || !(v = fuzz_pick_value(r, g)) || !v->has_type_info)
            return 0;
        v->type.dtype = (pfvm_dtype)fuzz_below(r, PFVM_DTYPE_COUNT + 1);
        return 1;
    case 8: /* a declared dim: a small constant, 0, or a symbol */
        if (!g || !(v = fuzz_pick_value(r, g)) || !v->has_type_info || v->type.shape.rank <= 0)
            return 0;
        {
            int d = (int)fuzz_below(r, (uint32_t)v->type.shape.rank);
            const pfvm_sym *s = fuzz_below(r, 3) ? pfvm_sym_const(m->syms, (int64_t)fuzz_below(r, 5))
                                                 : pfvm_sym_var(m->syms, fuzz_below(r, 2) ? "N" : "M", 1);
            if (!s)
                return 0;
            v->type.shape.dims[d] = s;
        }
        return 1;
    case 9: /* initializer contents, dtype or dims */
        if (!g || pfvm_graph_num_initializers(g) == 0)
            return 0;
        v = pfvm_graph_initializer(g, (int)fuzz_below(r, (uint32_t)pfvm_graph_num_initializers(g)));
        return v->init ? fuzz_mutate_tensor(r, v->init) : 0;
    case 10: /* an opset version */
        if (pfvm_model_num_opsets(m) == 0)
            return 0;
        {
            const pfvm_opset_import *o = pfvm_model_opset_at(m, (int)fuzz_below(r, (uint32_t)pfvm_model_num_opsets(m)));
            int64_t v2 = fuzz_below(r, 4) ? (int64_t)((uint64_t)o->version + fuzz_below(r, 7) - 3)
                                          : fuzz_int(r, o->version);
            return pfvm_model_set_opset(m, o->domain, v2, NULL) == PFVM_OK;
        }
    default: /* drop a node */
        if (!n)
            return 0;
        return pfvm_graph_remove_node(g, n, NULL) == PFVM_OK;
    }
}

/* Decodes, applies 1-3 edits, re-encodes; 0 when any step fails. */
static size_t fuzz_structured_mutate(uint8_t *data, size_t size, size_t max_size, unsigned seed)
{
    fuzz_rng r;
    pfvm_model *m;
    void *out = NULL;
    size_t out_size = 0, ret = 0;
    int k, edits, done = 0;
    r.s = ((uint64_t)seed << 1) | 1;
    m = pfvm_onnx_load_memory(data, size, PFVM_LOAD_COPY, NULL);
    if (!m)
        return 0;
    edits = 1 + (int)fuzz_below(&r, 3);
    for (k = 0; k < edits * 4 && done < edits; k++)
        done += fuzz_mutate_ir(&r, m);
    if (done && pfvm_onnx_save_memory(m, &out, &out_size, NULL) == PFVM_OK && out_size <= max_size) {
        memcpy(data, out, out_size);
        ret = out_size;
    }
    pfvm_onnx_free(out);
    pfvm_model_free(m);
    return ret;
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
    if (seed % 2 == 0) {
        size_t n = fuzz_structured_mutate(data, size, max_size, seed);
        if (n)
            return n;
    }
    return LLVMFuzzerMutate(data, size, max_size);
}

#endif /* FUZZ_MODEL_MUTATOR */

#endif /* PFVM_FUZZ_COMMON_H */
