/* Unit tests of the reduce family (Reduce*, ArgMax/ArgMin, TopK, CumSum,
 * NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss) and the image family
 * (Resize, Upsample, GridSample, RoiAlign, NonMaxSuppression): one-node
 * graphs built with the IR builder and run by the executor. Expected values
 * are worked out by hand from the ONNX specification. */
#include "base/base.h"
#include "sym/sym.h"
#include "ir/ir.h"
#include "exec/exec.h"

#include <math.h>
#include <string.h>

#include "check.h"

#include "op_case.h"

static const float f23[6] = {1, 2, 3, 4, 5, 6};

/* ---- Reduce ------------------------------------------------------------------------- */

static void test_reduce_sum(void)
{
    tcase t;
    static const int64_t ax1[1] = {1}, axm2[1] = {-2};
    /* axes as a constant input (opset 13), keepdims */
    {
        tin in[2] = {{PFVM_FLOAT, 2, {2, 3}, f23, 0}, {PFVM_INT64, 1, {1}, ax1, 1}};
        static const int64_t d[2] = {2, 1};
        static const double w[2] = {6, 15};
        tc_node(&t, "ReduceSum", 13, in, 2, 1);
        CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
        CHECK(shape_is(tc_out(&t, 0), 2, d) && values_are(tc_out(&t, 0), w, 2, 0));
        tc_end(&t);
    }
    /* axes bound at run time, negative, no keepdims */
    {
        tin in[2] = {{PFVM_FLOAT, 2, {2, 3}, f23, 0}, {PFVM_INT64, 1, {1}, axm2, 0}};
        static const int64_t d[1] = {3};
        static const double w[3] = {5, 7, 9};
        tc_node(&t, "ReduceSum", 13, in, 2, 1);
        pfvm_node_set_attr_int(t.n, "keepdims", 0, &t.st);
        CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
        CHECK(shape_is(tc_out(&t, 0), 1, d) && values_are(tc_out(&t, 0), w, 3, 0));
        tc_end(&t);
    }
    /* no axes with noop_with_empty_axes: the identity */
    {
        tin in[1] = {{PFVM_FLOAT, 2, {2, 3}, f23, 0}};
        static const int64_t d[2] = {2, 3};
        static const double w[6] = {1, 2, 3, 4, 5, 6};
        tc_node(&t, "ReduceSum", 13, in, 1, 1);
        pfvm_node_set_attr_int(t.n, "noop_with_empty_axes", 1, &t.st);
        CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
        CHECK(shape_is(tc_out(&t, 0), 2, d) && values_are(tc_out(&t, 0), w, 6, 0));
        tc_end(&t);
    }
    /* an axis out of range is an error, not a crash */
    {
        tin in[1] = {{PFVM_FLOAT, 2, {2, 3}, f23, 0}};
        static const int64_t bad[1] = {5};
        tc_node(&t, "ReduceSum", 11, in, 1, 1);
        pfvm_node_set_attr_ints(t.n, "axes", bad, 1, &t.st);
        CHECK(tc_run(&t) != PFVM_OK && strstr(t.st.msg, "out of range"));
        tc_end(&t);
    }
}

static void test_reduce_kinds(void)
{
    tcase t;
    static const int64_t ax0[1] = {0}, ax1[1] = {1};
    /* integer mean truncates like numpy's astype */
    {
        static const int32_t x[4] = {1, 2, 4, 7};
        static const int64_t w[2] = {2, 4};
        tin in[1] = {{PFVM_INT32, 2, {2, 2}, x, 0}};
        tc_node(&t, "ReduceMean", 11, in, 1, 1);
        pfvm_node_set_attr_ints(t.n, "axes", ax0, 1, &t.st);
        pfvm_node_set_attr_int(t.n, "keepdims", 0, &t.st);
        CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
        CHECK(tc_out(&t, 0)->dtype == PFVM_INT32 && ints_are(tc_out(&t, 0), w, 2));
        tc_end(&t);
    }
    /* ReduceMax (axes input at opset 18) propagates NaN */
    {
        static const float x[6] = {1, NAN, 3, 4, 5, 6};
        static const double w[2] = {NAN, 6};
        tin in[2] = {{PFVM_FLOAT, 2, {2, 3}, x, 0}, {PFVM_INT64, 1, {1}, ax1, 1}};
        tc_node(&t, "ReduceMax", 18, in, 2, 1);
        CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
        CHECK(values_are(tc_out(&t, 0), w, 2, 0));
        tc_end(&t);
    }
    /* LogSumExp does not overflow */
    {
        static const float x[2] = {1000, 1000};
        static const double w[1] = {1000.69314718};
        tin in[1] = {{PFVM_FLOAT, 1, {2}, x, 0}};
        tc_node(&t, "ReduceLogSumExp", 13, in, 1, 1);
        CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
        CHECK(values_are(tc_out(&t, 0), w, 1, 1e-7));
        tc_end(&t);
    }
    /* 64-bit integer sums are exact beyond 2^53 */
    {
        static const int64_t x[2] = {3037000499LL, 1}, w[1] = {9223372030926249002LL};
        tin in[1] = {{PFVM_INT64, 1, {2}, x, 0}};
        tc_node(&t, "ReduceSumSquare", 13, in, 1, 1);
        CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
        CHECK(ints_are(tc_out(&t, 0), w, 1));
        tc_end(&t);
    }
    /* uint64 compares as unsigned */
    {
        static const uint64_t x[2] = {0x8000000000000005ULL, 0x8000000000000001ULL};
        tin in[1] = {{PFVM_UINT64, 1, {2}, x, 0}};
        tc_node(&t, "ReduceMin", 13, in, 1, 1);
        pfvm_node_set_attr_int(t.n, "keepdims", 0, &t.st);
        CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
        CHECK(tc_out(&t, 0)->rank == 0 && ((const uint64_t *)tc_out(&t, 0)->data)[0] == 0x8000000000000001ULL);
        tc_end(&t);
    }
    /* L2 over every axis */
    {
        static const float x[2] = {3, 4};
        static const double w[1] = {5};
        tin in[1] = {{PFVM_FLOAT, 2, {1, 2}, x, 0}};
        tc_node(&t, "ReduceL2", 13, in, 1, 1);
        pfvm_node_set_attr_int(t.n, "keepdims", 0, &t.st);
        CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
        CHECK(tc_out(&t, 0)->rank == 0 && values_are(tc_out(&t, 0), w, 1, 1e-7));
        tc_end(&t);
    }
}

/* Reductions over an empty axis give the identity of the operation. */
static void test_reduce_empty(void)
{
    static const int64_t ax1[1] = {1};
    static const float xf[1] = {0};
    static const int32_t xi[1] = {0};
    struct {
        const char *op;
        pfvm_dtype dt;
        double want;
    } cases[] = {{"ReduceSum", PFVM_FLOAT, 0},          {"ReduceProd", PFVM_FLOAT, 1},
                 {"ReduceMean", PFVM_FLOAT, NAN},       {"ReduceMax", PFVM_FLOAT, -INFINITY},
                 {"ReduceMax", PFVM_INT32, INT32_MIN},  {"ReduceMin", PFVM_INT32, INT32_MAX},
                 {"ReduceLogSumExp", PFVM_FLOAT, -INFINITY}};
    size_t c;
    for (c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        tcase t;
        double w[2];
        static const int64_t d[1] = {2};
        tin in[1] = {{PFVM_FLOAT, 2, {2, 0}, NULL, 0}};
        in[0].dt = cases[c].dt;
        in[0].data = cases[c].dt == PFVM_FLOAT ? (const void *)xf : (const void *)xi;
        w[0] = w[1] = cases[c].want;
        tc_node(&t, cases[c].op, 13, in, 1, 1);
        pfvm_node_set_attr_ints(t.n, "axes", ax1, 1, &t.st);
        pfvm_node_set_attr_int(t.n, "keepdims", 0, &t.st);
        if (!strcmp(cases[c].op, "ReduceSum"))
            pfvm_model_set_opset(t.m, "", 11, &t.st);
        CHECK_MSG(tc_run(&t) == PFVM_OK, "%s: %s", cases[c].op, t.st.msg);
        CHECK_MSG(shape_is(tc_out(&t, 0), 1, d) && values_are(tc_out(&t, 0), w, 2, 0), "%s", cases[c].op);
        tc_end(&t);
    }
}

/* ---- ArgMax, ArgMin, TopK, CumSum ------------------------------------------------------ */

static void test_arg(void)
{
    static const float x[6] = {1, 3, 3, 2, 2, 1};
    tcase t;
    {
        static const int64_t w[2] = {2, 1}, d[1] = {2};
        tin in[1] = {{PFVM_FLOAT, 2, {2, 3}, x, 0}};
        tc_node(&t, "ArgMax", 13, in, 1, 1);
        pfvm_node_set_attr_int(t.n, "axis", 1, &t.st);
        pfvm_node_set_attr_int(t.n, "keepdims", 0, &t.st);
        pfvm_node_set_attr_int(t.n, "select_last_index", 1, &t.st);
        CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
        CHECK(shape_is(tc_out(&t, 0), 1, d) && ints_are(tc_out(&t, 0), w, 2));
        tc_end(&t);
    }
    {
        static const int64_t w[2] = {0, 2}, d[2] = {2, 1};
        tin in[1] = {{PFVM_FLOAT, 2, {2, 3}, x, 0}};
        tc_node(&t, "ArgMin", 13, in, 1, 1);
        pfvm_node_set_attr_int(t.n, "axis", -1, &t.st);
        CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
        CHECK(shape_is(tc_out(&t, 0), 2, d) && ints_are(tc_out(&t, 0), w, 2));
        tc_end(&t);
    }
    /* int64 values a double cannot tell apart */
    {
        static const int64_t xi[2] = {(1LL << 62) + 1, (1LL << 62) + 2}, w[1] = {1};
        tin in[1] = {{PFVM_INT64, 1, {2}, xi, 0}};
        tc_node(&t, "ArgMax", 13, in, 1, 1);
        CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
        CHECK(ints_are(tc_out(&t, 0), w, 1));
        tc_end(&t);
    }
}

static void test_topk(void)
{
    static const float x[5] = {3, 1, 3, 2, 3};
    static const int64_t k3[1] = {3}, k2[1] = {2}, k9[1] = {9};
    tcase t;
    /* ties keep the lower index first */
    {
        static const double wv[3] = {3, 3, 3};
        static const int64_t wi[3] = {0, 2, 4}, d[2] = {1, 3};
        tin in[2] = {{PFVM_FLOAT, 2, {1, 5}, x, 0}, {PFVM_INT64, 1, {1}, k3, 1}};
        tc_node(&t, "TopK", 11, in, 2, 2);
        CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
        CHECK(shape_is(tc_out(&t, 0), 2, d) && values_are(tc_out(&t, 0), wv, 3, 0) && ints_are(tc_out(&t, 1), wi, 3));
        tc_end(&t);
    }
    {
        static const double wv[2] = {1, 2};
        static const int64_t wi[2] = {1, 3};
        tin in[2] = {{PFVM_FLOAT, 2, {1, 5}, x, 0}, {PFVM_INT64, 1, {1}, k2, 0}};
        tc_node(&t, "TopK", 11, in, 2, 2);
        pfvm_node_set_attr_int(t.n, "largest", 0, &t.st);
        CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
        CHECK(values_are(tc_out(&t, 0), wv, 2, 0) && ints_are(tc_out(&t, 1), wi, 2));
        tc_end(&t);
    }
    /* along axis 0, with opset 1's attribute */
    {
        static const float x2[6] = {1, 6, 5, 2, 3, 4};
        static const double wv[4] = {5, 6, 3, 4};
        static const int64_t wi[4] = {1, 0, 2, 2};
        tin in[1] = {{PFVM_FLOAT, 2, {3, 2}, x2, 0}};
        tc_node(&t, "TopK", 1, in, 1, 2);
        pfvm_node_set_attr_int(t.n, "axis", 0, &t.st);
        pfvm_node_set_attr_int(t.n, "k", 2, &t.st);
        CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
        CHECK(values_are(tc_out(&t, 0), wv, 4, 0) && ints_are(tc_out(&t, 1), wi, 4));
        tc_end(&t);
    }
    /* a large k sorts the whole axis (stably) */
    {
        static float xl[40];
        static const int64_t k20[1] = {20};
        int64_t wi[20];
        double wv[20];
        int i;
        for (i = 0; i < 40; i++)
            xl[i] = (float)(i % 5);
        for (i = 0; i < 20; i++) {
            wv[i] = i < 8 ? 4 : i < 16 ? 3 : 2;
            wi[i] = (i < 8 ? 4 : i < 16 ? 3 : 2) + 5 * (i % 8);
        }
        {
            tin in[2] = {{PFVM_FLOAT, 1, {40}, xl, 0}, {PFVM_INT64, 1, {1}, k20, 1}};
            tc_node(&t, "TopK", 11, in, 2, 2);
            CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
            CHECK(values_are(tc_out(&t, 0), wv, 20, 0) && ints_are(tc_out(&t, 1), wi, 20));
            tc_end(&t);
        }
    }
    /* k beyond the axis is an error */
    {
        tin in[2] = {{PFVM_FLOAT, 2, {1, 5}, x, 0}, {PFVM_INT64, 1, {1}, k9, 0}};
        tc_node(&t, "TopK", 11, in, 2, 2);
        CHECK(tc_run(&t) != PFVM_OK);
        tc_end(&t);
    }
}

static void test_cumsum(void)
{
    tcase t;
    {
        static const int32_t x[4] = {1, 2, 3, 4};
        static const int64_t a[1] = {0}, w[4] = {9, 7, 4, 0};
        tin in[2] = {{PFVM_INT32, 1, {4}, x, 0}, {PFVM_INT64, 0, {0}, a, 0}};
        tc_node(&t, "CumSum", 14, in, 2, 1);
        pfvm_node_set_attr_int(t.n, "exclusive", 1, &t.st);
        pfvm_node_set_attr_int(t.n, "reverse", 1, &t.st);
        CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
        CHECK(ints_are(tc_out(&t, 0), w, 4));
        tc_end(&t);
    }
    {
        static const int32_t a[1] = {-1};
        static const double w[6] = {1, 3, 6, 4, 9, 15};
        tin in[2] = {{PFVM_FLOAT, 2, {2, 3}, f23, 0}, {PFVM_INT32, 1, {1}, a, 1}};
        tc_node(&t, "CumSum", 14, in, 2, 1);
        CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
        CHECK(values_are(tc_out(&t, 0), w, 6, 0));
        tc_end(&t);
    }
}

/* ---- losses --------------------------------------------------------------------------- */

static void test_losses(void)
{
    static const float lp[6] = {-1, -2, -3, -0.5f, -1.5f, -2.5f}, wt[3] = {1, 2, 0.5f};
    static const int64_t tg[2] = {2, 0}, bad[2] = {3, 0};
    tcase t;
    {
        static const double w[1] = {2.0 / 1.5};
        tin in[3] = {{PFVM_FLOAT, 2, {2, 3}, lp, 0}, {PFVM_INT64, 1, {2}, tg, 0}, {PFVM_FLOAT, 1, {3}, wt, 0}};
        tc_node(&t, "NegativeLogLikelihoodLoss", 13, in, 3, 1);
        CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
        CHECK(tc_out(&t, 0)->rank == 0 && values_are(tc_out(&t, 0), w, 1, 1e-6));
        tc_end(&t);
    }
    {
        static const double w[2] = {1.5, 0.5};
        tin in[3] = {{PFVM_FLOAT, 2, {2, 3}, lp, 0}, {PFVM_INT64, 1, {2}, tg, 0}, {PFVM_FLOAT, 1, {3}, wt, 0}};
        tc_node(&t, "NegativeLogLikelihoodLoss", 13, in, 3, 1);
        pfvm_node_set_attr_string(t.n, "reduction", "none", &t.st);
        CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
        CHECK(values_are(tc_out(&t, 0), w, 2, 1e-6));
        tc_end(&t);
    }
    /* ignore_index; with every label ignored the mean is NaN */
    {
        static const double w[1] = {0.5};
        tin in[2] = {{PFVM_FLOAT, 2, {2, 3}, lp, 0}, {PFVM_INT64, 1, {2}, tg, 0}};
        tc_node(&t, "NegativeLogLikelihoodLoss", 13, in, 2, 1);
        pfvm_node_set_attr_int(t.n, "ignore_index", 2, &t.st);
        CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
        CHECK(values_are(tc_out(&t, 0), w, 1, 1e-6));
        tc_end(&t);
    }
    {
        static const int64_t same[2] = {1, 1};
        static const double w[1] = {NAN};
        tin in[2] = {{PFVM_FLOAT, 2, {2, 3}, lp, 0}, {PFVM_INT64, 1, {2}, same, 0}};
        tc_node(&t, "NegativeLogLikelihoodLoss", 13, in, 2, 1);
        pfvm_node_set_attr_int(t.n, "ignore_index", 1, &t.st);
        CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
        CHECK(values_are(tc_out(&t, 0), w, 1, 0));
        tc_end(&t);
    }
    /* a class out of range and a bad reduction are errors */
    {
        tin in[2] = {{PFVM_FLOAT, 2, {2, 3}, lp, 0}, {PFVM_INT64, 1, {2}, bad, 0}};
        tc_node(&t, "NegativeLogLikelihoodLoss", 13, in, 2, 1);
        CHECK(tc_run(&t) == PFVM_ERR_RANGE);
        tc_end(&t);
    }
    {
        tin in[2] = {{PFVM_FLOAT, 2, {2, 3}, lp, 0}, {PFVM_INT64, 1, {2}, tg, 0}};
        tc_node(&t, "NegativeLogLikelihoodLoss", 13, in, 2, 1);
        pfvm_node_set_attr_string(t.n, "reduction", "average", &t.st);
        CHECK(tc_run(&t) != PFVM_OK && strstr(t.st.msg, "reduction"));
        tc_end(&t);
    }
    /* softmax cross-entropy with its log_prob output */
    {
        static const float x[3] = {1, 2, 3};
        static const int64_t t2[1] = {2};
        static const double lse = 3.40760596444438, wl[1] = {0.40760596444438}, wp[3] = {1 - lse, 2 - lse, 3 - lse};
        tin in[2] = {{PFVM_FLOAT, 2, {1, 3}, x, 0}, {PFVM_INT64, 1, {1}, t2, 0}};
        tc_node(&t, "SoftmaxCrossEntropyLoss", 13, in, 2, 2);
        CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
        CHECK(values_are(tc_out(&t, 0), wl, 1, 1e-6) && values_are(tc_out(&t, 1), wp, 3, 1e-6));
        tc_end(&t);
    }
    /* a target whose shape does not fit the scores */
    {
        static const float x[6] = {1, 2, 3, 4, 5, 6};
        static const int64_t t3[3] = {0, 1, 2};
        tin in[2] = {{PFVM_FLOAT, 2, {2, 3}, x, 0}, {PFVM_INT64, 1, {3}, t3, 0}};
        tc_node(&t, "SoftmaxCrossEntropyLoss", 13, in, 2, 1);
        CHECK(tc_run(&t) == PFVM_ERR_SHAPE);
        tc_end(&t);
    }
}

/* ---- Resize, Upsample ------------------------------------------------------------------ */

static void test_resize(void)
{
    static const float x4[4] = {1, 2, 3, 4}, x2[2] = {0, 10};
    static const float s1122[4] = {1, 1, 2, 2}, s12[2] = {1, 2};
    tcase t;
    /* nearest, asymmetric, floor */
    {
        static const double w[16] = {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4};
        static const int64_t d[4] = {1, 1, 4, 4};
        tin in[3] = {{PFVM_FLOAT, 4, {1, 1, 2, 2}, x4, 0}, {PFVM_FLOAT, -1, {0}, NULL, 0}, {PFVM_FLOAT, 1, {4}, s1122, 1}};
        tc_node(&t, "Resize", 13, in, 3, 1);
        pfvm_node_set_attr_string(t.n, "coordinate_transformation_mode", "asymmetric", &t.st);
        pfvm_node_set_attr_string(t.n, "nearest_mode", "floor", &t.st);
        CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
        CHECK(shape_is(tc_out(&t, 0), 4, d) && values_are(tc_out(&t, 0), w, 16, 0));
        tc_end(&t);
    }
    /* linear, half_pixel, scales only known at run time */
    {
        static const double w[4] = {0, 2.5, 7.5, 10};
        tin in[3] = {{PFVM_FLOAT, 2, {1, 2}, x2, 0}, {PFVM_FLOAT, -1, {0}, NULL, 0}, {PFVM_FLOAT, 1, {2}, s12, 0}};
        tc_node(&t, "Resize", 13, in, 3, 1);
        pfvm_node_set_attr_string(t.n, "mode", "linear", &t.st);
        CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
        CHECK(values_are(tc_out(&t, 0), w, 4, 1e-7));
        tc_end(&t);
    }
    /* opset 18: sizes for the listed axes only */
    {
        static const int64_t sz[1] = {4}, ax[1] = {1}, d[2] = {1, 4};
        static const double w[4] = {0, 2.5, 7.5, 10};
        tin in[4] = {{PFVM_FLOAT, 2, {1, 2}, x2, 0}, {PFVM_FLOAT, -1, {0}, NULL, 0}, {PFVM_FLOAT, -1, {0}, NULL, 0},
                     {PFVM_INT64, 1, {1}, sz, 1}};
        tc_node(&t, "Resize", 18, in, 4, 1);
        pfvm_node_set_attr_string(t.n, "mode", "linear", &t.st);
        pfvm_node_set_attr_ints(t.n, "axes", ax, 1, &t.st);
        CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
        CHECK(shape_is(tc_out(&t, 0), 2, d) && values_are(tc_out(&t, 0), w, 4, 1e-7));
        tc_end(&t);
    }
    /* keep_aspect_ratio_policy not_smaller: (3, 5) to fit (6, 6) is (6, 10) */
    {
        static float z[15];
        static const int64_t sz[2] = {6, 6}, d[2] = {6, 10};
        tin in[4] = {{PFVM_FLOAT, 2, {3, 5}, z, 0}, {PFVM_FLOAT, -1, {0}, NULL, 0}, {PFVM_FLOAT, -1, {0}, NULL, 0},
                     {PFVM_INT64, 1, {2}, sz, 1}};
        tc_node(&t, "Resize", 18, in, 4, 1);
        pfvm_node_set_attr_string(t.n, "keep_aspect_ratio_policy", "not_smaller", &t.st);
        CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
        CHECK(shape_is(tc_out(&t, 0), 2, d));
        tc_end(&t);
    }
    /* integer outputs truncate, as the reference's astype */
    {
        static const uint8_t xu[2] = {0, 3};
        static const double w[4] = {0, 0, 2, 3};
        tin in[3] = {{PFVM_UINT8, 2, {1, 2}, xu, 0}, {PFVM_FLOAT, -1, {0}, NULL, 0}, {PFVM_FLOAT, 1, {2}, s12, 1}};
        tc_node(&t, "Resize", 13, in, 3, 1);
        pfvm_node_set_attr_string(t.n, "mode", "linear", &t.st);
        CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
        CHECK(tc_out(&t, 0)->dtype == PFVM_UINT8 && values_are(tc_out(&t, 0), w, 4, 0));
        tc_end(&t);
    }
    /* Upsample-7 takes its scales as an attribute */
    {
        static const double w[16] = {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4};
        tin in[1] = {{PFVM_FLOAT, 4, {1, 1, 2, 2}, x4, 0}};
        pfvm_attr *a;
        tc_node(&t, "Upsample", 7, in, 1, 1);
        a = pfvm_node_add_attr(t.n, "scales", PFVM_ATTR_FLOATS, &t.st);
        a->floats = (float *)pfvm_model_alloc(t.m, sizeof(float) * 4);
        memcpy(a->floats, s1122, sizeof s1122);
        a->n = 4;
        CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
        CHECK(values_are(tc_out(&t, 0), w, 16, 0));
        tc_end(&t);
    }
    /* bad attributes are caught when the node is resolved */
    {
        tin in[3] = {{PFVM_FLOAT, 2, {1, 2}, x2, 0}, {PFVM_FLOAT, -1, {0}, NULL, 0}, {PFVM_FLOAT, 1, {2}, s12, 1}};
        tc_node(&t, "Resize", 13, in, 3, 1);
        pfvm_node_set_attr_string(t.n, "mode", "bilinear", &t.st);
        CHECK(tc_run(&t) == PFVM_ERR_INVALID && strstr(t.st.msg, "mode"));
        tc_end(&t);
    }
}

static int sym_is(const pfvm_sym *s, const pfvm_sym *want)
{
    char a[128], b[128];
    pfvm_sym_print(s, a, sizeof a);
    pfvm_sym_print(want, b, sizeof b);
    if (!pfvm_sym_proven_eq(s, want))
        fprintf(stderr, "  dim is %s, expected %s\n", a, b);
    return pfvm_sym_proven_eq(s, want);
}

/* Resize's output shape over symbolic dims. */
static void test_resize_symbolic(void)
{
    static const float sc[4] = {1, 1, 2, 0.5f};
    pfvm_status st;
    pfvm_model *m = pfvm_model_new(&st);
    pfvm_graph *g = pfvm_graph_new(m, NULL, "g", &st);
    pfvm_symtab *syms = m->syms;
    const pfvm_sym *n = pfvm_sym_var(syms, "n", 1), *h = pfvm_sym_var(syms, "h", 1), *w = pfvm_sym_var(syms, "w", 1);
    const pfvm_sym *k = pfvm_sym_var(syms, "k", 1);
    pfvm_value *x = pfvm_graph_value(g, "x", &st), *s = pfvm_graph_value(g, "s", &st), *y = pfvm_graph_value(g, "y", &st);
    pfvm_value *z = pfvm_graph_value(g, "z", &st), *zs = pfvm_graph_value(g, "zs", &st), *y2 = pfvm_graph_value(g, "y2", &st);
    pfvm_value *y3 = pfvm_graph_value(g, "y3", &st), *ins[4];
    int64_t d1[1] = {4};
    m->graph = g;
    pfvm_model_set_opset(m, "", 13, &st);
    pfvm_graph_add_input(g, x, &st);
    pfvm_graph_add_input(g, z, &st);
    x->type.kind = z->type.kind = PFVM_KIND_TENSOR;
    x->type.dtype = z->type.dtype = PFVM_FLOAT;
    x->type.shape.rank = z->type.shape.rank = 4;
    x->type.shape.dims[0] = n;
    x->type.shape.dims[1] = pfvm_sym_const(syms, 3);
    x->type.shape.dims[2] = h;
    x->type.shape.dims[3] = w;
    x->has_type_info = z->has_type_info = 1;
    z->type.shape.dims[0] = n;
    z->type.shape.dims[1] = pfvm_sym_const(syms, 3);
    z->type.shape.dims[2] = pfvm_sym_const(syms, 7);
    z->type.shape.dims[3] = k;
    pfvm_graph_add_init(g, s, pfvm_model_tensor(m, PFVM_FLOAT, 1, d1, (void *)(uintptr_t)sc, &st), &st);
    ins[0] = x;
    ins[1] = NULL;
    ins[2] = s;
    pfvm_graph_add_node(g, "Resize", "", "by_scales", ins, 3, &y, 1, &st);
    /* sizes from another tensor's shape stay symbolic */
    pfvm_graph_add_node(g, "Shape", "", "shape", &z, 1, &zs, 1, &st);
    ins[2] = NULL;
    ins[3] = zs;
    pfvm_graph_add_node(g, "Resize", "", "by_sizes", ins, 4, &y2, 1, &st);
    /* constant sizes need no input dims */
    {
        static const int64_t sizes[4] = {2, 3, 5, 6};
        pfvm_value *c = pfvm_graph_value(g, "c", &st);
        pfvm_graph_add_init(g, c, pfvm_model_tensor(m, PFVM_INT64, 1, d1, (void *)(uintptr_t)sizes, &st), &st);
        ins[3] = c;
        pfvm_graph_add_node(g, "Resize", "", "by_const_sizes", ins, 4, &y3, 1, &st);
    }
    pfvm_graph_add_output(g, y, &st);
    pfvm_graph_add_output(g, y2, &st);
    pfvm_graph_add_output(g, y3, &st);
    CHECK(pfvm_graph_resolve_ops(g, 1, &st) == PFVM_OK);
    CHECK_MSG(pfvm_infer_shapes(g, 1, &st) == PFVM_OK, "%s", st.msg);
    CHECK(y->type.shape.rank == 4);
    if (y->type.shape.rank == 4) {
        CHECK(sym_is(y->type.shape.dims[0], n));
        CHECK(sym_is(y->type.shape.dims[1], pfvm_sym_const(syms, 3)));
        CHECK(sym_is(y->type.shape.dims[2], pfvm_sym_muli(syms, h, 2)));
        CHECK(sym_is(y->type.shape.dims[3], pfvm_sym_div(syms, w, pfvm_sym_const(syms, 2))));
    }
    CHECK(y2->type.shape.rank == 4);
    if (y2->type.shape.rank == 4) {
        CHECK(sym_is(y2->type.shape.dims[0], n));
        CHECK(sym_is(y2->type.shape.dims[2], pfvm_sym_const(syms, 7)));
        CHECK(sym_is(y2->type.shape.dims[3], k));
    }
    CHECK(y3->type.shape.rank == 4 && sym_is(y3->type.shape.dims[0], pfvm_sym_const(syms, 2)) &&
          sym_is(y3->type.shape.dims[3], pfvm_sym_const(syms, 6)));
    pfvm_model_free(m);
}

/* ---- GridSample, RoiAlign, NonMaxSuppression ------------------------------------------ */

static void test_gridsample(void)
{
    static const float x[4] = {1, 2, 3, 4}, grid[4] = {0, 0, NAN, 0.5f};
    tcase t;
    tin in[2] = {{PFVM_FLOAT, 4, {1, 1, 2, 2}, x, 0}, {PFVM_FLOAT, 4, {1, 1, 2, 2}, grid, 0}};
    static const int64_t d[4] = {1, 1, 1, 2};
    tc_node(&t, "GridSample", 16, in, 2, 1);
    pfvm_node_set_attr_int(t.n, "align_corners", 1, &t.st);
    CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
    /* the centre averages the four pixels; a NaN coordinate reads nothing */
    CHECK(shape_is(tc_out(&t, 0), 4, d) && fabs(pfvm_tensor_get_f64(tc_out(&t, 0), 0) - 2.5) < 1e-6);
    tc_end(&t);
    tc_node(&t, "GridSample", 16, in, 2, 1);
    pfvm_node_set_attr_string(t.n, "mode", "nearest", &t.st);
    pfvm_node_set_attr_string(t.n, "padding_mode", "reflection", &t.st);
    CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
    tc_end(&t);
}

static void test_roialign(void)
{
    static float x[16];
    static const float rois[4] = {0, 0, 3, 3};
    static const int64_t bi[1] = {0}, d[4] = {1, 1, 2, 2};
    static const double w[4] = {1, 1, 1, 1};
    tcase t;
    tin in[3] = {{PFVM_FLOAT, 4, {1, 1, 4, 4}, x, 0}, {PFVM_FLOAT, 2, {1, 4}, rois, 0}, {PFVM_INT64, 1, {1}, bi, 0}};
    int i;
    for (i = 0; i < 16; i++)
        x[i] = 1;
    tc_node(&t, "RoiAlign", 16, in, 3, 1);
    pfvm_node_set_attr_int(t.n, "output_height", 2, &t.st);
    pfvm_node_set_attr_int(t.n, "output_width", 2, &t.st);
    pfvm_node_set_attr_int(t.n, "sampling_ratio", 2, &t.st);
    CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
    CHECK(shape_is(tc_out(&t, 0), 4, d) && values_are(tc_out(&t, 0), w, 4, 1e-6));
    tc_end(&t);
}

static void test_nms(void)
{
    static const float boxes[12] = {0, 0, 1, 1, 0, 0.1f, 1, 1.1f, 0, 10, 1, 11}, scores[3] = {0.9f, 0.8f, 0.7f};
    static const int64_t maxo[1] = {10}, want[6] = {0, 0, 0, 0, 0, 2}, d[2] = {2, 3};
    static const float iou[1] = {0.5f};
    tcase t;
    tin in[4] = {{PFVM_FLOAT, 3, {1, 3, 4}, boxes, 0}, {PFVM_FLOAT, 3, {1, 1, 3}, scores, 0}, {PFVM_INT64, 1, {1}, maxo, 0},
                 {PFVM_FLOAT, 1, {1}, iou, 0}};
    tc_node(&t, "NonMaxSuppression", 11, in, 4, 1);
    CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
    CHECK(shape_is(tc_out(&t, 0), 2, d) && ints_are(tc_out(&t, 0), want, 6));
    tc_end(&t);
}

int main(void)
{
    test_reduce_sum();
    test_reduce_kinds();
    test_reduce_empty();
    test_arg();
    test_topk();
    test_cumsum();
    test_losses();
    test_resize();
    test_resize_symbolic();
    test_gridsample();
    test_roialign();
    test_nms();
    return CHECK_END();
}
