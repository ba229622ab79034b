/* Hostile attribute and input values (issue 17, the audit in
 * tests/fuzz/README): one-node graphs whose attributes or constant inputs
 * hold values a model should never hold (infinities, pads of 2^31, huge or
 * negative sizes); each must fail with a status naming the node and the
 * problem, never crash, overflow or spend seconds before refusing. Each
 * case is a finding of tools/hostile_variants.py + tests/fuzz/sweep.sh. */
#include "ir/ir.h"
#include "exec/exec.h"
#include "shape/infer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define MAX_IO 10

/* One input: a constant (initializer) of the given dtype and dims, or
 * omitted (rank < 0). */
typedef struct hin {
    pfvm_dtype dt;
    int rank;
    int64_t dims[8];
    const void *data;
} hin;

typedef struct hcase {
    pfvm_status st;
    pfvm_model *m;
    pfvm_graph *g;
    pfvm_node *n;
    pfvm_exec *e;
    uint64_t bind_ops; /* h_run_budget: what the bind counted */
} hcase;

/* A graph of one node over constant inputs, node named "node". */
static pfvm_node *h_node(hcase *t, const char *op, int opset, const hin *ins, int n_in, int n_out)
{
    pfvm_value *iv[MAX_IO], *ov[MAX_IO];
    char name[16];
    int i;
    memset(t, 0, sizeof *t);
    t->m = pfvm_model_new(&t->st);
    t->g = pfvm_graph_new(t->m, NULL, "g", &t->st);
    pfvm_model_set_opset(t->m, "", opset, &t->st);
    for (i = 0; i < n_in; i++) {
        iv[i] = NULL;
        if (ins[i].rank < 0)
            continue;
        snprintf(name, sizeof name, "x%d", i);
        iv[i] = pfvm_graph_value(t->g, name, &t->st);
        pfvm_graph_add_init(t->g, iv[i],
                            pfvm_model_tensor(t->m, ins[i].dt, ins[i].rank, ins[i].dims, (void *)(uintptr_t)ins[i].data,
                                              &t->st),
                            &t->st);
    }
    for (i = 0; i < n_out; i++) {
        snprintf(name, sizeof name, "y%d", i);
        ov[i] = pfvm_graph_value(t->g, name, &t->st);
    }
    t->n = pfvm_graph_add_node(t->g, op, "", "node", iv, n_in, ov, n_out, &t->st);
    for (i = 0; i < n_out; i++)
        pfvm_graph_add_output(t->g, ov[i], &t->st);
    return t->n;
}

/* Infers, plans and runs (every input is constant: the plan folds the
 * node, so this checks both the inference and the kernel). */
static pfvm_code h_run(hcase *t)
{
    pfvm_code rc = pfvm_infer_shapes(t->g, 0, &t->st);
    if (rc)
        return rc;
    t->e = pfvm_exec_new(t->m, NULL, &t->st);
    if (!t->e)
        return t->st.code;
    if (pfvm_exec_bind(t->e, NULL, 0, &t->st))
        return t->st.code;
    return pfvm_exec_run(t->e, &t->st);
}

/* The kernel alone: no inference first (a model can skip it). */
static pfvm_code h_run_kernel(hcase *t)
{
    t->e = pfvm_exec_new(t->m, NULL, &t->st);
    if (!t->e)
        return t->st.code;
    if (pfvm_exec_bind(t->e, NULL, 0, &t->st))
        return t->st.code;
    return pfvm_exec_run(t->e, &t->st);
}

static void h_end(hcase *t)
{
    pfvm_exec_free(t->e);
    pfvm_model_free(t->m);
}

/* Fails with a message holding `want` (and, run by the executor, naming
 * the node). */
static int h_fails(hcase *t, pfvm_code rc, const char *want)
{
    if (rc == PFVM_OK) {
        fprintf(stderr, "  succeeded, expected an error with '%s'\n", want);
        return 0;
    }
    if (!strstr(t->st.msg, want)) {
        fprintf(stderr, "  message '%s' lacks '%s'\n", t->st.msg, want);
        return 0;
    }
    return 1;
}

/* DynamicQuantizeLinear over -inf: the scale was inf, the zero point NaN,
 * cast to uint8 (UB). */
static void test_dynamic_quantize_inf(void)
{
    hcase t;
    float x[3] = {1, 0, 0};
    hin in[1] = {{PFVM_FLOAT, 1, {3}, x}};
    x[1] = -INFINITY;
    h_node(&t, "DynamicQuantizeLinear", 11, in, 1, 3);
    CHECK(h_fails(&t, h_run(&t), "infinite"));
    CHECK_MSG(strstr(t.st.msg, "node"), "%s", t.st.msg);
    h_end(&t);
}

/* Pads past the input plus the window: Conv with pads 2^31 and stride 1023 wrote 67
 * million outputs of pure padding (seconds; a fuzz timeout); AveragePool
 * with pads 10^6 likewise. Refused before any work, by inference and by
 * the kernel. Pads wider than the kernel (1x1 Conv, pads 1) still run. */
static void test_pads_past_window(void)
{
    hcase t;
    static float x[1 * 1 * 3 * 3], w[1 * 1 * 3 * 2], w1[1];
    int64_t pads[4] = {0, (int64_t)1 << 31, 0, 0}, strides[2] = {1, 1023}, big[4] = {1000000, 0, 0, 0};
    int64_t one[4] = {1, 1, 1, 1}, four[4] = {4, 4, 4, 4}, k3[2] = {3, 3};
    hin conv[2] = {{PFVM_FLOAT, 4, {1, 1, 3, 3}, x}, {PFVM_FLOAT, 4, {1, 1, 3, 2}, w}};
    hin conv1[2] = {{PFVM_FLOAT, 4, {1, 1, 3, 3}, x}, {PFVM_FLOAT, 4, {1, 1, 1, 1}, w1}};
    const pfvm_tensor *y;
    int pass;
    for (pass = 0; pass < 2; pass++) {
        h_node(&t, "Conv", 11, conv, 2, 1);
        pfvm_node_set_attr_ints(t.n, "pads", pads, 4, &t.st);
        pfvm_node_set_attr_ints(t.n, "strides", strides, 2, &t.st);
        CHECK(h_fails(&t, pass ? h_run_kernel(&t) : h_run(&t), "plus the window extent"));
        h_end(&t);
        h_node(&t, "AveragePool", 11, conv, 1, 1);
        pfvm_node_set_attr_ints(t.n, "kernel_shape", k3, 2, &t.st);
        pfvm_node_set_attr_ints(t.n, "pads", big, 4, &t.st);
        CHECK(h_fails(&t, pass ? h_run_kernel(&t) : h_run(&t), "plus the window extent"));
        h_end(&t);
    }
    h_node(&t, "Conv", 11, conv1, 2, 1);
    pfvm_node_set_attr_ints(t.n, "pads", one, 4, &t.st);
    CHECK_MSG(h_run(&t) == PFVM_OK, "%s", t.st.msg);
    y = t.e ? pfvm_exec_output(t.e, 0) : NULL;
    CHECK(y && y->rank == 4 && y->dims[2] == 5 && y->dims[3] == 5);
    h_end(&t);
    /* the bound itself: 3 + 1 on a 3x3 input and a 1x1 kernel */
    h_node(&t, "Conv", 11, conv1, 2, 1);
    pfvm_node_set_attr_ints(t.n, "pads", four, 4, &t.st);
    CHECK_MSG(h_run(&t) == PFVM_OK, "%s", t.st.msg);
    y = t.e ? pfvm_exec_output(t.e, 0) : NULL;
    CHECK(y && y->rank == 4 && y->dims[2] == 11 && y->dims[3] == 11);
    h_end(&t);
}

/* MelWeightMatrix with an edge of NaN or 1e30 hertz: the mel bin was
 * converted from a double outside int64's range (UB). */
static void test_mel_edges(void)
{
    static const float edges[][2] = {{NAN, 3000}, {0, 1e30f}, {-INFINITY, 3000}, {0, INFINITY}};
    int64_t nb = 8, dft = 16, rate = 8192;
    hcase t;
    size_t i;
    for (i = 0; i < sizeof edges / sizeof edges[0]; i++) {
        hin in[5] = {{PFVM_INT64, 0, {0}, &nb},
                     {PFVM_INT64, 0, {0}, &dft},
                     {PFVM_INT64, 0, {0}, &rate},
                     {PFVM_FLOAT, 0, {0}, &edges[i][0]},
                     {PFVM_FLOAT, 0, {0}, &edges[i][1]}};
        h_node(&t, "MelWeightMatrix", 17, in, 5, 1);
        CHECK(h_fails(&t, h_run(&t), "fall outside the spectrum"));
        h_end(&t);
    }
}

/* QLinearConv with an infinite scale: the fast path's fixed-point
 * multiplier converted inf to int64 (UB). It now takes the reference
 * path, which saturates. */
static void test_qlinearconv_inf_scale(void)
{
    static const uint8_t x[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9}, w[1] = {2}, zp[1] = {0};
    float scales[3][3] = {{INFINITY, 1, 1}, {1, INFINITY, 1}, {1, 1, 0}};
    hcase t;
    int i;
    for (i = 0; i < 3; i++) {
        hin in[8] = {{PFVM_UINT8, 4, {1, 1, 3, 3}, x}, {PFVM_FLOAT, 0, {0}, &scales[i][0]},
                     {PFVM_UINT8, 0, {0}, zp},          {PFVM_UINT8, 4, {1, 1, 1, 1}, w},
                     {PFVM_FLOAT, 0, {0}, &scales[i][1]}, {PFVM_UINT8, 0, {0}, zp},
                     {PFVM_FLOAT, 0, {0}, &scales[i][2]}, {PFVM_UINT8, 0, {0}, zp}};
        const pfvm_tensor *y;
        h_node(&t, "QLinearConv", 10, in, 8, 1);
        CHECK_MSG(h_run(&t) == PFVM_OK, "%s", t.st.msg);
        y = t.e ? pfvm_exec_output(t.e, 0) : NULL;
        CHECK(y && pfvm_tensor_numel(y) == 9 && pfvm_tensor_get_f64(y, 8) == 255);
        h_end(&t);
    }
}

/* Einsum whose output has 8 letters and an ellipsis of 7 dims: the
 * ellipsis labels were written past the output's label array. */
static void test_einsum_output_rank(void)
{
    static float x[1];
    hin in[1] = {{PFVM_FLOAT, 8, {1, 1, 1, 1, 1, 1, 1, 1}, x}};
    hcase t;
    h_node(&t, "Einsum", 12, in, 1, 1);
    pfvm_node_set_attr_string(t.n, "equation", "a...->abcdefgh...", &t.st);
    CHECK(h_fails(&t, h_run(&t), "not valid"));
    h_end(&t);
}

/* MaxRoiPool whose roi names batch NaN or 1e30: converted to int64
 * before the range check (UB). */
static void test_roipool_batch(void)
{
    static float x[16];
    float rois[2][5] = {{NAN, 0, 0, 1, 1}, {1e30f, 0, 0, 1, 1}};
    int64_t pooled[2] = {2, 2};
    hcase t;
    int i;
    for (i = 0; i < 2; i++) {
        hin in[2] = {{PFVM_FLOAT, 4, {1, 1, 4, 4}, x}, {PFVM_FLOAT, 2, {1, 5}, rois[i]}};
        h_node(&t, "MaxRoiPool", 1, in, 2, 1);
        pfvm_node_set_attr_ints(t.n, "pooled_shape", pooled, 2, &t.st);
        CHECK(h_fails(&t, h_run(&t), "names batch"));
        h_end(&t);
    }
}

/* ConvTranspose with output_padding 10^6 (stride 1): a million columns of
 * zeros past the last window, seconds of work; ONNX wants it below the
 * stride or the dilation. Stride 3, output_padding 1 still runs. */
static void test_convtranspose_output_padding(void)
{
    static float x[9], w[4];
    int64_t big[2] = {0, 1000000}, ok[2] = {1, 1}, strides[2] = {3, 2};
    hin in[2] = {{PFVM_FLOAT, 4, {1, 1, 3, 3}, x}, {PFVM_FLOAT, 4, {1, 1, 2, 2}, w}};
    const pfvm_tensor *y;
    hcase t;
    int pass;
    for (pass = 0; pass < 2; pass++) {
        h_node(&t, "ConvTranspose", 11, in, 2, 1);
        pfvm_node_set_attr_ints(t.n, "output_padding", big, 2, &t.st);
        CHECK(h_fails(&t, pass ? h_run_kernel(&t) : h_run(&t), "is not smaller than the stride"));
        h_end(&t);
    }
    h_node(&t, "ConvTranspose", 11, in, 2, 1);
    pfvm_node_set_attr_ints(t.n, "output_padding", ok, 2, &t.st);
    pfvm_node_set_attr_ints(t.n, "strides", strides, 2, &t.st);
    CHECK_MSG(h_run(&t) == PFVM_OK, "%s", t.st.msg);
    y = t.e ? pfvm_exec_output(t.e, 0) : NULL;
    CHECK(y && y->rank == 4 && y->dims[2] == 9 && y->dims[3] == 7);
    h_end(&t);
}

static int h_ints_are(const pfvm_tensor *y, const int64_t *want, int64_t n)
{
    int64_t i;
    if (!y || pfvm_tensor_numel(y) != n)
        return 0;
    for (i = 0; i < n; i++)
        if (pfvm_tensor_get_i64(y, i) != want[i])
            return 0;
    return 1;
}

/* Unique was O(n^3): 64 Ki distinct values never finished. Sorted once
 * now; NaNs are one value (numpy's equal_nan), after every number. */
static void test_unique(void)
{
    static const float x[7] = {2, 1, NAN, 1, 3, NAN, 2};
    static const int64_t s_idx[4] = {1, 0, 4, 2}, s_inv[7] = {1, 0, 3, 0, 2, 3, 1}, s_cnt[4] = {2, 2, 1, 2};
    static const int64_t u_idx[4] = {0, 1, 2, 4}, u_inv[7] = {0, 1, 2, 1, 3, 2, 0}, u_cnt[4] = {2, 2, 2, 1};
    static int64_t big[65536];
    hin in[1] = {{PFVM_FLOAT, 1, {7}, x}};
    hin bin[1] = {{PFVM_INT64, 1, {65536}, big}};
    const pfvm_tensor *y;
    hcase t;
    int sorted, i;
    for (sorted = 0; sorted < 2; sorted++) {
        h_node(&t, "Unique", 11, in, 1, 4);
        pfvm_node_set_attr_int(t.n, "sorted", sorted, &t.st);
        CHECK_MSG(h_run(&t) == PFVM_OK, "%s", t.st.msg);
        y = t.e ? pfvm_exec_output(t.e, 0) : NULL;
        CHECK(y && pfvm_tensor_numel(y) == 4);
        if (y && pfvm_tensor_numel(y) == 4)
            CHECK(sorted ? pfvm_tensor_get_f64(y, 0) == 1 && pfvm_tensor_get_f64(y, 2) == 3 && isnan(pfvm_tensor_get_f64(y, 3))
                         : pfvm_tensor_get_f64(y, 0) == 2 && isnan(pfvm_tensor_get_f64(y, 2)) && pfvm_tensor_get_f64(y, 3) == 3);
        CHECK(t.e && h_ints_are(pfvm_exec_output(t.e, 1), sorted ? s_idx : u_idx, 4));
        CHECK(t.e && h_ints_are(pfvm_exec_output(t.e, 2), sorted ? s_inv : u_inv, 7));
        CHECK(t.e && h_ints_are(pfvm_exec_output(t.e, 3), sorted ? s_cnt : u_cnt, 4));
        h_end(&t);
    }
    for (i = 0; i < 65536; i++)
        big[i] = 65535 - i;
    h_node(&t, "Unique", 11, bin, 1, 1);
    CHECK_MSG(h_run(&t) == PFVM_OK, "%s", t.st.msg);
    y = t.e ? pfvm_exec_output(t.e, 0) : NULL;
    CHECK(y && pfvm_tensor_numel(y) == 65536 && pfvm_tensor_get_i64(y, 0) == 0 && pfvm_tensor_get_i64(y, 65535) == 65535);
    h_end(&t);
}

/* Binds and runs under a budget of `ops` operations (the node is folded
 * at bind: the budget covers both). */
static pfvm_code h_run_budget(hcase *t, uint64_t ops)
{
    pfvm_limits l;
    pfvm_code rc = pfvm_infer_shapes(t->g, 0, &t->st);
    if (rc)
        return rc;
    if (!(t->e = pfvm_exec_new(t->m, NULL, &t->st)))
        return t->st.code;
    l = pfvm_exec_limits(t->e);
    l.max_run_operations = ops;
    pfvm_exec_set_limits(t->e, &l);
    if (pfvm_exec_bind(t->e, NULL, 0, &t->st))
        return t->st.code;
    t->bind_ops = pfvm_exec_operations(t->e);
    return pfvm_exec_run(t->e, &t->st);
}

/* RoiAlign with a 256 x 256 output and sampling_ratio 65536: 2^48
 * samples, days of work from 200 bytes (a fuzz_run timeout). The kernel
 * charges its samples to the run's budget before taking them; the same
 * node at 2x2 with ratio 2 runs within it. */
static void test_roialign_budget(void)
{
    static float x[1 * 1 * 4 * 4], rois[4] = {0, 0, 3, 3};
    static int64_t bi[1];
    hin in[3] = {{PFVM_FLOAT, 4, {1, 1, 4, 4}, x}, {PFVM_FLOAT, 2, {1, 4}, rois}, {PFVM_INT64, 1, {1}, bi}};
    int64_t side[2] = {256, 2}, ratio[2] = {65536, 2};
    hcase t;
    int i;
    for (i = 0; i < 2; i++) {
        pfvm_code rc;
        h_node(&t, "RoiAlign", 16, in, 3, 1);
        pfvm_node_set_attr_int(t.n, "output_height", side[i], &t.st);
        pfvm_node_set_attr_int(t.n, "output_width", side[i], &t.st);
        pfvm_node_set_attr_int(t.n, "sampling_ratio", ratio[i], &t.st);
        rc = h_run_budget(&t, 100000000);
        if (i == 0)
            CHECK(h_fails(&t, rc, "max_run_operations") && strstr(t.st.msg, "RoiAlign") && strstr(t.st.msg, "'node'"));
        else
            CHECK(rc == PFVM_OK && t.bind_ops > 64 && t.bind_ops < 1000);
        h_end(&t);
    }
}

/* Einsum "ab,cd->" over two 256x256 inputs: one output, 2^32 summed
 * products; charged before the loops start. */
static void test_einsum_budget(void)
{
    static float a[256 * 256];
    hin in[2] = {{PFVM_FLOAT, 2, {256, 256}, a}, {PFVM_FLOAT, 2, {256, 256}, a}};
    hcase t;
    h_node(&t, "Einsum", 12, in, 2, 1);
    pfvm_node_set_attr_string(t.n, "equation", "ab,cd->", &t.st);
    CHECK(h_fails(&t, h_run_budget(&t, 100000000), "budget of 100000000 operations"));
    h_end(&t);
}

int main(void)
{
    test_roialign_budget();
    test_einsum_budget();
    test_dynamic_quantize_inf();
    test_pads_past_window();
    test_mel_edges();
    test_qlinearconv_inf_scale();
    test_einsum_output_rank();
    test_roipool_batch();
    test_convtranspose_output_padding();
    test_unique();
    return CHECK_END();
}
