/* Unit tests of the tensor family (ops/tensor.c and ops/indexing.c): one-
 * node graphs built with the IR builder and run by the executor, expected
 * values worked out by hand from the ONNX specification; symbolic shape
 * inference over named dims (Shape -> Gather -> Concat -> Reshape chains,
 * Slice clamping, Split, Tile, Pad, Range); and malformed nodes, which must
 * fail with a message rather than crash or read out of bounds. */
#include "base/base.h"
#include "sym/sym.h"
#include "ir/ir.h"
#include "exec/exec.h"
#include "shape/infer.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#include "op_case.h"

static int strings_are(const pfvm_tensor *y, const char *const *want, int n)
{
    int i;
    if (!y || y->dtype != PFVM_STRING || pfvm_tensor_numel(y) != n)
        return 0;
    for (i = 0; i < n; i++) {
        const char *s = ((char *const *)y->data)[i];
        if (!s || strcmp(s, want[i])) {
            fprintf(stderr, "  element %d is '%s', expected '%s'\n", i, s ? s : "(null)", want[i]);
            return 0;
        }
    }
    return 1;
}

/* Runs a node that must fail; the message must contain `what`. */
static int fails_with(tcase *t, const char *what)
{
    pfvm_code rc = tc_run(t);
    if (rc == PFVM_OK || !strstr(t->st.msg, what)) {
        fprintf(stderr, "  code %d, message '%s', expected one with '%s'\n", (int)rc, t->st.msg, what);
        return 0;
    }
    return 1;
}

static const float f6[6] = {1, 2, 3, 4, 5, 6};
static const float f24[24] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23};

/* ---- Reshape, Flatten, Squeeze, Unsqueeze -------------------------------------------------- */

static void test_reshape(void)
{
    tcase t;
    /* 0 copies a dim, -1 takes the rest */
    {
        static const int64_t sh[3] = {0, -1, 2}, d[3] = {2, 6, 2};
        tin in[2] = {{PFVM_FLOAT, 3, {2, 3, 4}, f24, 0}, {PFVM_INT64, 1, {3}, sh, 0}};
        tc_node(&t, "Reshape", 13, in, 2, 1);
        CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
        CHECK(shape_is(tc_out(&t, 0), 3, d) && ((const float *)tc_out(&t, 0)->data)[23] == 23);
        tc_end(&t);
    }
    /* allowzero keeps a literal 0 (empty data) */
    {
        static const int64_t sh[2] = {0, 4}, d[2] = {0, 4};
        tin in[2] = {{PFVM_FLOAT, 2, {0, 4}, f24, 0}, {PFVM_INT64, 1, {2}, sh, 1}};
        tc_node(&t, "Reshape", 14, in, 2, 1);
        pfvm_node_set_attr_int(t.n, "allowzero", 1, &t.st);
        CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
        CHECK(shape_is(tc_out(&t, 0), 2, d));
        tc_end(&t);
    }
    /* opset 1-4: the shape attribute */
    {
        static const int64_t sh[2] = {3, -1}, d[2] = {3, 2};
        tin in[1] = {{PFVM_FLOAT, 2, {2, 3}, f6, 0}};
        tc_node(&t, "Reshape", 4, in, 1, 1);
        pfvm_node_set_attr_ints(t.n, "shape", sh, 2, &t.st);
        CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
        CHECK(shape_is(tc_out(&t, 0), 2, d));
        tc_end(&t);
    }
    /* errors: two -1, a count that does not match */
    {
        static const int64_t sh[2] = {-1, -1};
        tin in[2] = {{PFVM_FLOAT, 2, {2, 3}, f6, 0}, {PFVM_INT64, 1, {2}, sh, 0}};
        tc_node(&t, "Reshape", 13, in, 2, 1);
        CHECK(fails_with(&t, "more than one -1"));
        tc_end(&t);
    }
    {
        static const int64_t sh[2] = {4, 2};
        tin in[2] = {{PFVM_FLOAT, 2, {2, 3}, f6, 0}, {PFVM_INT64, 1, {2}, sh, 0}};
        tc_node(&t, "Reshape", 13, in, 2, 1);
        CHECK(fails_with(&t, "cannot reshape"));
        tc_end(&t);
    }
    /* a float shape tensor is refused */
    {
        static const float sh[2] = {3, 2};
        tin in[2] = {{PFVM_FLOAT, 2, {2, 3}, f6, 0}, {PFVM_FLOAT, 1, {2}, sh, 0}};
        tc_node(&t, "Reshape", 13, in, 2, 1);
        CHECK(tc_run(&t) != PFVM_OK);
        tc_end(&t);
    }
}

static void test_flatten_squeeze(void)
{
    tcase t;
    {
        static const int64_t d[2] = {6, 4};
        tin in[1] = {{PFVM_FLOAT, 3, {2, 3, 4}, f24, 0}};
        tc_node(&t, "Flatten", 13, in, 1, 1);
        pfvm_node_set_attr_int(t.n, "axis", -1, &t.st);
        CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
        CHECK(shape_is(tc_out(&t, 0), 2, d));
        tc_end(&t);
    }
    {
        static const int64_t d[2] = {1, 24};
        tin in[1] = {{PFVM_FLOAT, 3, {2, 3, 4}, f24, 0}};
        tc_node(&t, "Flatten", 13, in, 1, 1);
        pfvm_node_set_attr_int(t.n, "axis", 0, &t.st);
        CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
        CHECK(shape_is(tc_out(&t, 0), 2, d));
        tc_end(&t);
    }
    /* Squeeze: no axes drops every 1; axes input at 13 */
    {
        static const int64_t d[2] = {3, 2};
        tin in[1] = {{PFVM_FLOAT, 4, {1, 3, 1, 2}, f6, 0}};
        tc_node(&t, "Squeeze", 13, in, 1, 1);
        CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
        CHECK(shape_is(tc_out(&t, 0), 2, d));
        tc_end(&t);
    }
    {
        static const int64_t ax[1] = {-2}, d[3] = {1, 3, 2};
        tin in[2] = {{PFVM_FLOAT, 4, {1, 3, 1, 2}, f6, 0}, {PFVM_INT64, 1, {1}, ax, 1}};
        tc_node(&t, "Squeeze", 13, in, 2, 1);
        CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
        CHECK(shape_is(tc_out(&t, 0), 3, d));
        tc_end(&t);
    }
    {
        static const int64_t ax[1] = {1};
        tin in[1] = {{PFVM_FLOAT, 4, {1, 3, 1, 2}, f6, 0}};
        tc_node(&t, "Squeeze", 11, in, 1, 1);
        pfvm_node_set_attr_ints(t.n, "axes", ax, 1, &t.st);
        CHECK(fails_with(&t, "cannot squeeze"));
        tc_end(&t);
    }
    /* Unsqueeze: attribute before 13, unsorted and negative axes */
    {
        static const int64_t ax[2] = {3, 0}, d[4] = {1, 2, 3, 1};
        tin in[1] = {{PFVM_FLOAT, 2, {2, 3}, f6, 0}};
        tc_node(&t, "Unsqueeze", 11, in, 1, 1);
        pfvm_node_set_attr_ints(t.n, "axes", ax, 2, &t.st);
        CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
        CHECK(shape_is(tc_out(&t, 0), 4, d));
        tc_end(&t);
    }
    {
        static const int64_t ax[2] = {-1, 1}, d[4] = {2, 1, 3, 1};
        tin in[2] = {{PFVM_FLOAT, 2, {2, 3}, f6, 0}, {PFVM_INT64, 1, {2}, ax, 0}};
        tc_node(&t, "Unsqueeze", 13, in, 2, 1);
        CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
        CHECK(shape_is(tc_out(&t, 0), 4, d));
        tc_end(&t);
    }
    {
        static const int64_t ax[2] = {1, 1};
        tin in[2] = {{PFVM_FLOAT, 2, {2, 3}, f6, 0}, {PFVM_INT64, 1, {2}, ax, 0}};
        tc_node(&t, "Unsqueeze", 13, in, 2, 1);
        CHECK(fails_with(&t, "repeated"));
        tc_end(&t);
    }
}

/* ---- Transpose, Concat, Split ---------------------------------------------------------------- */

static void test_transpose(void)
{
    tcase t;
    /* default: reversed axes */
    {
        static const int64_t d[2] = {3, 2};
        static const double w[6] = {1, 4, 2, 5, 3, 6};
        tin in[1] = {{PFVM_FLOAT, 2, {2, 3}, f6, 0}};
        tc_node(&t, "Transpose", 13, in, 1, 1);
        CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
        CHECK(shape_is(tc_out(&t, 0), 2, d) && values_are(tc_out(&t, 0), w, 6, 1e-6));
        tc_end(&t);
    }
    /* [2,3,4] perm (1,2,0): y[j][k][i] = x[i][j][k] */
    {
        static const int64_t perm[3] = {1, 2, 0}, d[3] = {3, 4, 2};
        const pfvm_tensor *y;
        int i, j, k, ok = 1;
        tin in[1] = {{PFVM_FLOAT, 3, {2, 3, 4}, f24, 0}};
        tc_node(&t, "Transpose", 13, in, 1, 1);
        pfvm_node_set_attr_ints(t.n, "perm", perm, 3, &t.st);
        CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
        y = tc_out(&t, 0);
        CHECK(shape_is(y, 3, d));
        for (i = 0; i < 2 && y; i++)
            for (j = 0; j < 3; j++)
                for (k = 0; k < 4; k++)
                    ok &= ((const float *)y->data)[(j * 4 + k) * 2 + i] == f24[(i * 3 + j) * 4 + k];
        CHECK(ok);
        tc_end(&t);
    }
    /* strings, int8 and double move as bytes */
    {
        static const char *s[6] = {"a", "b", "c", "d", "e", "f"}, *w[6] = {"a", "d", "b", "e", "c", "f"};
        tin in[1] = {{PFVM_STRING, 2, {2, 3}, s, 0}};
        tc_node(&t, "Transpose", 13, in, 1, 1);
        CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
        CHECK(strings_are(tc_out(&t, 0), w, 6));
        tc_end(&t);
    }
    {
        static const int8_t x[6] = {1, 2, 3, 4, 5, 6};
        static const int64_t w[6] = {1, 4, 2, 5, 3, 6};
        tin in[1] = {{PFVM_INT8, 2, {2, 3}, x, 0}};
        tc_node(&t, "Transpose", 13, in, 1, 1);
        CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
        CHECK(ints_are(tc_out(&t, 0), w, 6));
        tc_end(&t);
    }
    {
        static const int64_t perm[2] = {0, 0};
        tin in[1] = {{PFVM_FLOAT, 2, {2, 3}, f6, 0}};
        tc_node(&t, "Transpose", 13, in, 1, 1);
        pfvm_node_set_attr_ints(t.n, "perm", perm, 2, &t.st);
        CHECK(fails_with(&t, "not a permutation"));
        tc_end(&t);
    }
}

static void test_concat_split(void)
{
    tcase t;
    {
        static const float b[2] = {7, 8};
        static const int64_t d[2] = {2, 4};
        static const double w[8] = {1, 2, 3, 7, 4, 5, 6, 8};
        tin in[2] = {{PFVM_FLOAT, 2, {2, 3}, f6, 0}, {PFVM_FLOAT, 2, {2, 1}, b, 0}};
        tc_node(&t, "Concat", 13, in, 2, 1);
        pfvm_node_set_attr_int(t.n, "axis", -1, &t.st);
        CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
        CHECK(shape_is(tc_out(&t, 0), 2, d) && values_are(tc_out(&t, 0), w, 8, 1e-6));
        tc_end(&t);
    }
    {
        static const char *a[2] = {"x", "y"}, *b[1] = {"z"}, *w[3] = {"x", "y", "z"};
        tin in[2] = {{PFVM_STRING, 1, {2}, a, 0}, {PFVM_STRING, 1, {1}, b, 1}};
        tc_node(&t, "Concat", 13, in, 2, 1);
        pfvm_node_set_attr_int(t.n, "axis", 0, &t.st);
        CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
        CHECK(strings_are(tc_out(&t, 0), w, 3));
        tc_end(&t);
    }
    {
        static const float b[3] = {7, 8, 9};
        tin in[2] = {{PFVM_FLOAT, 2, {2, 3}, f6, 0}, {PFVM_FLOAT, 2, {1, 3}, b, 0}};
        tc_node(&t, "Concat", 13, in, 2, 1);
        pfvm_node_set_attr_int(t.n, "axis", 1, &t.st);
        CHECK(fails_with(&t, "differs"));
        tc_end(&t);
    }
    /* Split: sizes as an input (13), equal parts, uneven parts (18) */
    {
        static const int64_t sp[2] = {1, 2}, d0[2] = {2, 1}, d1[2] = {2, 2};
        static const double w0[2] = {1, 4}, w1[4] = {2, 3, 5, 6};
        tin in[2] = {{PFVM_FLOAT, 2, {2, 3}, f6, 0}, {PFVM_INT64, 1, {2}, sp, 0}};
        tc_node(&t, "Split", 13, in, 2, 2);
        pfvm_node_set_attr_int(t.n, "axis", 1, &t.st);
        CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
        CHECK(shape_is(tc_out(&t, 0), 2, d0) && values_are(tc_out(&t, 0), w0, 2, 1e-6));
        CHECK(shape_is(tc_out(&t, 1), 2, d1) && values_are(tc_out(&t, 1), w1, 4, 1e-6));
        tc_end(&t);
    }
    {
        static const double w2[2] = {5, 6};
        tin in[1] = {{PFVM_FLOAT, 1, {6}, f6, 0}};
        tc_node(&t, "Split", 11, in, 1, 3);
        CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
        CHECK(values_are(tc_out(&t, 2), w2, 2, 1e-6));
        tc_end(&t);
    }
    {
        static const int64_t d2[1] = {1};
        tin in[1] = {{PFVM_FLOAT, 1, {5}, f6, 0}};
        tc_node(&t, "Split", 18, in, 1, 3);
        pfvm_node_set_attr_int(t.n, "num_outputs", 3, &t.st);
        CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
        CHECK(shape_is(tc_out(&t, 2), 1, d2) && ((const float *)tc_out(&t, 2)->data)[0] == 5);
        tc_end(&t);
    }
    {
        static const int64_t sp[2] = {1, 1};
        tin in[2] = {{PFVM_FLOAT, 1, {6}, f6, 0}, {PFVM_INT64, 1, {2}, sp, 0}};
        tc_node(&t, "Split", 13, in, 2, 2);
        CHECK(fails_with(&t, "add up"));
        tc_end(&t);
    }
    {
        tin in[1] = {{PFVM_FLOAT, 1, {5}, f6, 0}};
        tc_node(&t, "Split", 11, in, 1, 2);
        CHECK(fails_with(&t, "equal parts"));
        tc_end(&t);
    }
}

/* ---- Slice, Gather ------------------------------------------------------------------------------ */

static void test_slice(void)
{
    tcase t;
    /* negative step over the whole axis, with INT64 markers */
    {
        static const int64_t st[1] = {-1}, en[1] = {INT64_MIN}, ax[1] = {1}, sp[1] = {-1}, d[2] = {2, 3};
        static const double w[6] = {3, 2, 1, 6, 5, 4};
        tin in[5] = {{PFVM_FLOAT, 2, {2, 3}, f6, 0}, {PFVM_INT64, 1, {1}, st, 0}, {PFVM_INT64, 1, {1}, en, 0},
                     {PFVM_INT64, 1, {1}, ax, 0}, {PFVM_INT64, 1, {1}, sp, 0}};
        tc_node(&t, "Slice", 13, in, 5, 1);
        CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
        CHECK(shape_is(tc_out(&t, 0), 2, d) && values_are(tc_out(&t, 0), w, 6, 1e-6));
        tc_end(&t);
    }
    /* step 2 on axis -1 of [2,3,4], out-of-range end */
    {
        static const int64_t st[1] = {1}, en[1] = {1000}, ax[1] = {-1}, sp[1] = {2}, d[3] = {2, 3, 2};
        static const double w[12] = {1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23};
        tin in[5] = {{PFVM_FLOAT, 3, {2, 3, 4}, f24, 0}, {PFVM_INT64, 1, {1}, st, 1}, {PFVM_INT64, 1, {1}, en, 1},
                     {PFVM_INT64, 1, {1}, ax, 1}, {PFVM_INT64, 1, {1}, sp, 1}};
        tc_node(&t, "Slice", 13, in, 5, 1);
        CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
        CHECK(shape_is(tc_out(&t, 0), 3, d) && values_are(tc_out(&t, 0), w, 12, 1e-6));
        tc_end(&t);
    }
    /* a start past the end gives an empty axis */
    {
        static const int64_t st[1] = {7}, en[1] = {10}, d[1] = {0};
        tin in[3] = {{PFVM_FLOAT, 1, {6}, f6, 0}, {PFVM_INT64, 1, {1}, st, 0}, {PFVM_INT64, 1, {1}, en, 0}};
        tc_node(&t, "Slice", 13, in, 3, 1);
        CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
        CHECK(shape_is(tc_out(&t, 0), 1, d));
        tc_end(&t);
    }
    /* opset 1: attributes, strings */
    {
        static const char *s[4] = {"a", "b", "c", "d"}, *w[2] = {"b", "c"};
        static const int64_t st[1] = {1}, en[1] = {-1};
        tin in[1] = {{PFVM_STRING, 1, {4}, s, 0}};
        tc_node(&t, "Slice", 9, in, 1, 1);
        pfvm_node_set_attr_ints(t.n, "starts", st, 1, &t.st);
        pfvm_node_set_attr_ints(t.n, "ends", en, 1, &t.st);
        CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
        CHECK(strings_are(tc_out(&t, 0), w, 2));
        tc_end(&t);
    }
    /* errors: step 0, repeated axis, unequal lengths */
    {
        static const int64_t st[1] = {0}, en[1] = {3}, ax[1] = {0}, sp[1] = {0};
        tin in[5] = {{PFVM_FLOAT, 1, {6}, f6, 0}, {PFVM_INT64, 1, {1}, st, 0}, {PFVM_INT64, 1, {1}, en, 0},
                     {PFVM_INT64, 1, {1}, ax, 0}, {PFVM_INT64, 1, {1}, sp, 0}};
        tc_node(&t, "Slice", 13, in, 5, 1);
        CHECK(fails_with(&t, "step"));
        tc_end(&t);
    }
    {
        static const int64_t st[2] = {0, 0}, en[2] = {1, 1}, ax[2] = {0, -2};
        tin in[4] = {{PFVM_FLOAT, 2, {2, 3}, f6, 0}, {PFVM_INT64, 1, {2}, st, 0}, {PFVM_INT64, 1, {2}, en, 0},
                     {PFVM_INT64, 1, {2}, ax, 0}};
        tc_node(&t, "Slice", 13, in, 4, 1);
        CHECK(fails_with(&t, "repeated"));
        tc_end(&t);
    }
    {
        static const int64_t st[2] = {0, 0}, en[1] = {1};
        tin in[3] = {{PFVM_FLOAT, 2, {2, 3}, f6, 0}, {PFVM_INT64, 1, {2}, st, 0}, {PFVM_INT64, 1, {1}, en, 0}};
        tc_node(&t, "Slice", 13, in, 3, 1);
        CHECK(fails_with(&t, "equal lengths"));
        tc_end(&t);
    }
}

static void test_gather(void)
{
    tcase t;
    {
        static const int64_t ix[2] = {2, -3}, d[2] = {2, 2};
        static const double w[4] = {3, 1, 6, 4};
        tin in[2] = {{PFVM_FLOAT, 2, {2, 3}, f6, 0}, {PFVM_INT64, 1, {2}, ix, 0}};
        tc_node(&t, "Gather", 13, in, 2, 1);
        pfvm_node_set_attr_int(t.n, "axis", 1, &t.st);
        CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
        CHECK(shape_is(tc_out(&t, 0), 2, d) && values_are(tc_out(&t, 0), w, 4, 1e-6));
        tc_end(&t);
    }
    /* scalar index drops the axis */
    {
        static const int32_t ix[1] = {1};
        static const int64_t d[1] = {3};
        static const double w[3] = {4, 5, 6};
        tin in[2] = {{PFVM_FLOAT, 2, {2, 3}, f6, 0}, {PFVM_INT32, 0, {0}, ix, 0}};
        tc_node(&t, "Gather", 13, in, 2, 1);
        CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
        CHECK(shape_is(tc_out(&t, 0), 1, d) && values_are(tc_out(&t, 0), w, 3, 1e-6));
        tc_end(&t);
    }
    {
        static const int64_t ix[1] = {3};
        tin in[2] = {{PFVM_FLOAT, 2, {2, 3}, f6, 0}, {PFVM_INT64, 1, {1}, ix, 0}};
        tc_node(&t, "Gather", 13, in, 2, 1);
        pfvm_node_set_attr_int(t.n, "axis", 1, &t.st);
        CHECK(fails_with(&t, "out of range"));
        tc_end(&t);
    }
    {
        static const float ix[1] = {1};
        tin in[2] = {{PFVM_FLOAT, 2, {2, 3}, f6, 0}, {PFVM_FLOAT, 1, {1}, ix, 0}};
        tc_node(&t, "Gather", 13, in, 2, 1);
        CHECK(tc_run(&t) != PFVM_OK);
        tc_end(&t);
    }
}

/* ---- Expand, Tile, Pad ---------------------------------------------------------------------------- */

static void test_expand_tile(void)
{
    tcase t;
    {
        static const float x[3] = {1, 2, 3};
        static const int64_t sh[3] = {2, 1, 1}, d[3] = {2, 3, 1};
        static const double w[6] = {1, 2, 3, 1, 2, 3};
        tin in[2] = {{PFVM_FLOAT, 2, {3, 1}, x, 0}, {PFVM_INT64, 1, {3}, sh, 0}};
        tc_node(&t, "Expand", 13, in, 2, 1);
        CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
        CHECK(shape_is(tc_out(&t, 0), 3, d) && values_are(tc_out(&t, 0), w, 6, 1e-6));
        tc_end(&t);
    }
    {
        static const float x[3] = {1, 2, 3};
        static const int64_t sh[2] = {2, 3}, d[2] = {2, 3};
        static const double w[6] = {1, 2, 3, 1, 2, 3};
        tin in[2] = {{PFVM_FLOAT, 1, {3}, x, 0}, {PFVM_INT64, 1, {2}, sh, 1}};
        tc_node(&t, "Expand", 13, in, 2, 1);
        CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
        CHECK(shape_is(tc_out(&t, 0), 2, d) && values_are(tc_out(&t, 0), w, 6, 1e-6));
        tc_end(&t);
    }
    {
        static const int64_t sh[2] = {2, 4};
        tin in[2] = {{PFVM_FLOAT, 2, {2, 3}, f6, 0}, {PFVM_INT64, 1, {2}, sh, 0}};
        tc_node(&t, "Expand", 13, in, 2, 1);
        CHECK(tc_run(&t) != PFVM_OK);
        tc_end(&t);
    }
    /* Tile [2,3] by (2,2) */
    {
        static const int64_t rep[2] = {2, 2}, d[2] = {4, 6};
        static const double w[24] = {1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6, 1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6};
        tin in[2] = {{PFVM_FLOAT, 2, {2, 3}, f6, 0}, {PFVM_INT64, 1, {2}, rep, 0}};
        tc_node(&t, "Tile", 13, in, 2, 1);
        CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
        CHECK(shape_is(tc_out(&t, 0), 2, d) && values_are(tc_out(&t, 0), w, 24, 1e-6));
        tc_end(&t);
    }
    {
        static const int64_t rep[2] = {1, -1};
        tin in[2] = {{PFVM_FLOAT, 2, {2, 3}, f6, 0}, {PFVM_INT64, 1, {2}, rep, 0}};
        tc_node(&t, "Tile", 13, in, 2, 1);
        CHECK(tc_run(&t) != PFVM_OK);
        tc_end(&t);
    }
}

static void test_pad(void)
{
    tcase t;
    static const float x[3] = {1, 2, 3};
    /* constant with a value input, reflect, edge, wrap; negative pads crop */
    {
        static const int64_t p[2] = {2, 1};
        static const float v[1] = {9};
        static const double w[6] = {9, 9, 1, 2, 3, 9};
        tin in[3] = {{PFVM_FLOAT, 1, {3}, x, 0}, {PFVM_INT64, 1, {2}, p, 0}, {PFVM_FLOAT, 0, {0}, v, 0}};
        tc_node(&t, "Pad", 13, in, 3, 1);
        CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
        CHECK(values_are(tc_out(&t, 0), w, 6, 1e-6));
        tc_end(&t);
    }
    {
        static const int64_t p[2] = {4, 3};
        static const double w[10] = {1, 2, 3, 2, 1, 2, 3, 2, 1, 2};
        tin in[2] = {{PFVM_FLOAT, 1, {3}, x, 0}, {PFVM_INT64, 1, {2}, p, 0}};
        tc_node(&t, "Pad", 13, in, 2, 1);
        pfvm_node_set_attr_string(t.n, "mode", "reflect", &t.st);
        CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
        CHECK(values_are(tc_out(&t, 0), w, 10, 1e-6));
        tc_end(&t);
    }
    {
        static const int64_t p[2] = {2, -1};
        static const double w[4] = {1, 1, 1, 2};
        tin in[2] = {{PFVM_FLOAT, 1, {3}, x, 0}, {PFVM_INT64, 1, {2}, p, 0}};
        tc_node(&t, "Pad", 13, in, 2, 1);
        pfvm_node_set_attr_string(t.n, "mode", "edge", &t.st);
        CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
        CHECK(values_are(tc_out(&t, 0), w, 4, 1e-6));
        tc_end(&t);
    }
    {
        static const int64_t p[2] = {4, 0};
        static const double w[7] = {3, 1, 2, 3, 1, 2, 3};
        tin in[2] = {{PFVM_FLOAT, 1, {3}, x, 0}, {PFVM_INT64, 1, {2}, p, 0}};
        tc_node(&t, "Pad", 19, in, 2, 1);
        pfvm_node_set_attr_string(t.n, "mode", "wrap", &t.st);
        CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
        CHECK(values_are(tc_out(&t, 0), w, 7, 1e-6));
        tc_end(&t);
    }
    /* 2-D, opset 2 attributes with a double value */
    {
        static const double xd[4] = {1, 2, 3, 4};
        static const int64_t p[4] = {1, 0, 0, 1}, d[2] = {3, 3};
        static const double w[9] = {-1, -1, -1, 1, 2, -1, 3, 4, -1};
        tin in[1] = {{PFVM_DOUBLE, 2, {2, 2}, xd, 0}};
        tc_node(&t, "Pad", 2, in, 1, 1);
        pfvm_node_set_attr_ints(t.n, "pads", p, 4, &t.st);
        pfvm_node_set_attr_float(t.n, "value", -1, &t.st);
        CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
        CHECK(shape_is(tc_out(&t, 0), 2, d) && values_are(tc_out(&t, 0), w, 9, 1e-6));
        tc_end(&t);
    }
    /* opset 18 axes; strings pad with "" */
    {
        static const char *s[2] = {"a", "b"}, *w[4] = {"a", "b", "", ""};
        static const int64_t p[2] = {0, 2}, ax[1] = {-1};
        tin in[4] = {{PFVM_STRING, 1, {2}, s, 0}, {PFVM_INT64, 1, {2}, p, 0}, {PFVM_STRING, -1, {0}, NULL, 0},
                     {PFVM_INT64, 1, {1}, ax, 0}};
        tc_node(&t, "Pad", 18, in, 4, 1);
        CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
        CHECK(strings_are(tc_out(&t, 0), w, 4));
        tc_end(&t);
    }
    {
        static const int64_t p[2] = {-2, -2};
        tin in[2] = {{PFVM_FLOAT, 1, {3}, x, 0}, {PFVM_INT64, 1, {2}, p, 0}};
        tc_node(&t, "Pad", 13, in, 2, 1);
        CHECK(tc_run(&t) != PFVM_OK);
        tc_end(&t);
    }
    {
        static const int64_t p[3] = {1, 1, 1};
        tin in[2] = {{PFVM_FLOAT, 1, {3}, x, 0}, {PFVM_INT64, 1, {3}, p, 0}};
        tc_node(&t, "Pad", 13, in, 2, 1);
        CHECK(fails_with(&t, "pads has 3 entries"));
        tc_end(&t);
    }
}

/* ---- Range, Trilu, Shape, Size, Constant, ConstantOfShape, Identity, Dropout -------------------- */

static void test_range_trilu(void)
{
    tcase t;
    {
        static const int32_t a[1] = {10}, b[1] = {4}, d[1] = {-3};
        static const int64_t w[2] = {10, 7};
        tin in[3] = {{PFVM_INT32, 0, {0}, a, 0}, {PFVM_INT32, 0, {0}, b, 0}, {PFVM_INT32, 0, {0}, d, 0}};
        tc_node(&t, "Range", 11, in, 3, 1);
        CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
        CHECK(tc_out(&t, 0)->dtype == PFVM_INT32 && ints_are(tc_out(&t, 0), w, 2));
        tc_end(&t);
    }
    /* int64 beyond 2^53 stays exact */
    {
        static const int64_t a[1] = {(int64_t)1 << 60}, b[1] = {((int64_t)1 << 60) + 3}, d[1] = {1};
        static const int64_t w[3] = {(int64_t)1 << 60, ((int64_t)1 << 60) + 1, ((int64_t)1 << 60) + 2};
        tin in[3] = {{PFVM_INT64, 0, {0}, a, 1}, {PFVM_INT64, 0, {0}, b, 1}, {PFVM_INT64, 0, {0}, d, 1}};
        tc_node(&t, "Range", 11, in, 3, 1);
        CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
        CHECK(ints_are(tc_out(&t, 0), w, 3));
        tc_end(&t);
    }
    {
        static const float a[1] = {1}, b[1] = {2}, d[1] = {0.25f};
        static const double w[4] = {1, 1.25, 1.5, 1.75};
        tin in[3] = {{PFVM_FLOAT, 0, {0}, a, 0}, {PFVM_FLOAT, 0, {0}, b, 0}, {PFVM_FLOAT, 0, {0}, d, 0}};
        tc_node(&t, "Range", 11, in, 3, 1);
        CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
        CHECK(values_are(tc_out(&t, 0), w, 4, 1e-6));
        tc_end(&t);
    }
    {
        static const int64_t a[1] = {0}, b[1] = {4}, d[1] = {0};
        tin in[3] = {{PFVM_INT64, 0, {0}, a, 0}, {PFVM_INT64, 0, {0}, b, 0}, {PFVM_INT64, 0, {0}, d, 0}};
        tc_node(&t, "Range", 11, in, 3, 1);
        CHECK(fails_with(&t, "delta"));
        tc_end(&t);
    }
    /* Trilu: lower with k = -1, upper with k = 1, strings */
    {
        static const int64_t k[1] = {-1};
        static const double w[6] = {0, 0, 0, 4, 0, 0};
        tin in[2] = {{PFVM_FLOAT, 2, {2, 3}, f6, 0}, {PFVM_INT64, 0, {0}, k, 0}};
        tc_node(&t, "Trilu", 14, in, 2, 1);
        pfvm_node_set_attr_int(t.n, "upper", 0, &t.st);
        CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
        CHECK(values_are(tc_out(&t, 0), w, 6, 1e-6));
        tc_end(&t);
    }
    {
        static const char *s[4] = {"a", "b", "c", "d"}, *w[4] = {"a", "b", "", "d"};
        tin in[1] = {{PFVM_STRING, 2, {2, 2}, s, 0}};
        tc_node(&t, "Trilu", 14, in, 1, 1);
        CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
        CHECK(strings_are(tc_out(&t, 0), w, 4));
        tc_end(&t);
    }
    {
        static const int64_t k[1] = {INT64_MAX};
        static const double w[6] = {0, 0, 0, 0, 0, 0};
        tin in[2] = {{PFVM_FLOAT, 2, {2, 3}, f6, 0}, {PFVM_INT64, 0, {0}, k, 0}};
        tc_node(&t, "Trilu", 14, in, 2, 1);
        CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
        CHECK(values_are(tc_out(&t, 0), w, 6, 1e-6));
        tc_end(&t);
    }
}

static void test_shape_constant(void)
{
    tcase t;
    {
        static const int64_t w[2] = {3, 4};
        tin in[1] = {{PFVM_FLOAT, 3, {2, 3, 4}, f24, 0}};
        tc_node(&t, "Shape", 15, in, 1, 1);
        pfvm_node_set_attr_int(t.n, "start", -2, &t.st);
        CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
        CHECK(ints_are(tc_out(&t, 0), w, 2));
        tc_end(&t);
    }
    {
        static const int64_t w[1] = {24};
        tin in[1] = {{PFVM_FLOAT, 3, {2, 3, 4}, f24, 0}};
        tc_node(&t, "Size", 13, in, 1, 1);
        CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
        CHECK(tc_out(&t, 0)->rank == 0 && ints_are(tc_out(&t, 0), w, 1));
        tc_end(&t);
    }
    {
        static const int64_t v[3] = {5, -6, 7};
        tc_node(&t, "Constant", 13, NULL, 0, 1);
        pfvm_node_set_attr_ints(t.n, "value_ints", v, 3, &t.st);
        CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
        CHECK(tc_out(&t, 0)->dtype == PFVM_INT64 && ints_are(tc_out(&t, 0), v, 3));
        tc_end(&t);
    }
    {
        tc_node(&t, "Constant", 13, NULL, 0, 1);
        pfvm_node_set_attr_float(t.n, "value_float", 2.5f, &t.st);
        CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
        CHECK(tc_out(&t, 0)->rank == 0 && tc_out(&t, 0)->dtype == PFVM_FLOAT && pfvm_tensor_get_f64(tc_out(&t, 0), 0) == 2.5);
        tc_end(&t);
    }
    /* ConstantOfShape with an int32 value; an empty shape gives a scalar */
    {
        static const int64_t sh[2] = {2, 2}, w[4] = {7, 7, 7, 7};
        static const int64_t one = 1;
        pfvm_attr *a;
        tin in[1] = {{PFVM_INT64, 1, {2}, sh, 0}};
        tc_node(&t, "ConstantOfShape", 9, in, 1, 1);
        a = pfvm_node_add_attr(t.n, "value", PFVM_ATTR_TENSOR, &t.st);
        a->t = pfvm_model_tensor(t.m, PFVM_INT32, 1, &one, NULL, &t.st);
        *(int32_t *)a->t->data = 7;
        CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
        CHECK(tc_out(&t, 0)->dtype == PFVM_INT32 && ints_are(tc_out(&t, 0), w, 4));
        tc_end(&t);
    }
    {
        static const int64_t sh[1] = {0};
        tin in[1] = {{PFVM_INT64, 1, {0}, sh, 0}};
        tc_node(&t, "ConstantOfShape", 9, in, 1, 1);
        CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
        CHECK(tc_out(&t, 0)->rank == 0 && tc_out(&t, 0)->dtype == PFVM_FLOAT && pfvm_tensor_get_f64(tc_out(&t, 0), 0) == 0);
        tc_end(&t);
    }
    {
        static const int64_t sh[2] = {2, -1};
        tin in[1] = {{PFVM_INT64, 1, {2}, sh, 0}};
        tc_node(&t, "ConstantOfShape", 9, in, 1, 1);
        CHECK(tc_run(&t) != PFVM_OK);
        tc_end(&t);
    }
}

static void test_identity_dropout(void)
{
    tcase t;
    {
        tin in[1] = {{PFVM_FLOAT, 2, {2, 3}, f6, 0}};
        tc_node(&t, "Identity", 16, in, 1, 1);
        CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
        CHECK(values_are(tc_out(&t, 0), (const double[]){1, 2, 3, 4, 5, 6}, 6, 1e-6));
        tc_end(&t);
    }
    /* inference mode: the data and an all-true mask */
    {
        static const float r[1] = {0.75f};
        static const uint8_t tr[1] = {0};
        static const int64_t w[6] = {1, 1, 1, 1, 1, 1};
        tin in[3] = {{PFVM_FLOAT, 2, {2, 3}, f6, 0}, {PFVM_FLOAT, 0, {0}, r, 0}, {PFVM_BOOL, 0, {0}, tr, 0}};
        tc_node(&t, "Dropout", 13, in, 3, 2);
        CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
        CHECK(values_are(tc_out(&t, 0), (const double[]){1, 2, 3, 4, 5, 6}, 6, 1e-6));
        CHECK(tc_out(&t, 1)->dtype == PFVM_BOOL && ints_are(tc_out(&t, 1), w, 6));
        tc_end(&t);
    }
    /* training with ratio 0 is the identity too */
    {
        static const float r[1] = {0};
        static const uint8_t tr[1] = {1};
        tin in[3] = {{PFVM_FLOAT, 2, {2, 3}, f6, 0}, {PFVM_FLOAT, 0, {0}, r, 0}, {PFVM_BOOL, 0, {0}, tr, 0}};
        tc_node(&t, "Dropout", 13, in, 3, 1);
        CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
        CHECK(values_are(tc_out(&t, 0), (const double[]){1, 2, 3, 4, 5, 6}, 6, 1e-6));
        tc_end(&t);
    }
    {
        static const float r[1] = {1.5f};
        static const uint8_t tr[1] = {1};
        tin in[3] = {{PFVM_FLOAT, 2, {2, 3}, f6, 0}, {PFVM_FLOAT, 0, {0}, r, 0}, {PFVM_BOOL, 0, {0}, tr, 0}};
        tc_node(&t, "Dropout", 13, in, 3, 1);
        CHECK(fails_with(&t, "ratio"));
        tc_end(&t);
    }
}

/* ---- indexing.c ---------------------------------------------------------------------------------- */

static void test_gather_scatter_elements(void)
{
    tcase t;
    {
        static const int64_t ix[4] = {1, 0, -1, 0};
        static const double w[4] = {2, 1, 6, 4};
        tin in[2] = {{PFVM_FLOAT, 2, {2, 3}, f6, 0}, {PFVM_INT64, 2, {2, 2}, ix, 0}};
        tc_node(&t, "GatherElements", 13, in, 2, 1);
        pfvm_node_set_attr_int(t.n, "axis", 1, &t.st);
        CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
        CHECK(values_are(tc_out(&t, 0), w, 4, 1e-6));
        tc_end(&t);
    }
    {
        static const int64_t ix[2] = {3, 0};
        tin in[2] = {{PFVM_FLOAT, 2, {2, 3}, f6, 0}, {PFVM_INT64, 2, {1, 2}, ix, 0}};
        tc_node(&t, "GatherElements", 13, in, 2, 1);
        pfvm_node_set_attr_int(t.n, "axis", 1, &t.st);
        CHECK(fails_with(&t, "out of range"));
        tc_end(&t);
    }
    /* ScatterElements with add, duplicates accumulate; int32 exact */
    {
        static const int32_t x[3] = {1, 2, 3}, u[3] = {10, 20, 30};
        static const int64_t ix[3] = {0, 0, -1}, w[3] = {31, 2, 33};
        tin in[3] = {{PFVM_INT32, 1, {3}, x, 0}, {PFVM_INT64, 1, {3}, ix, 0}, {PFVM_INT32, 1, {3}, u, 0}};
        tc_node(&t, "ScatterElements", 16, in, 3, 1);
        pfvm_node_set_attr_string(t.n, "reduction", "add", &t.st);
        CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
        CHECK(ints_are(tc_out(&t, 0), w, 3));
        tc_end(&t);
    }
    {
        static const float u[2] = {1, 1};
        static const int64_t ix[2] = {0, 0};
        tin in[3] = {{PFVM_FLOAT, 2, {2, 3}, f6, 0}, {PFVM_INT64, 2, {1, 2}, ix, 0}, {PFVM_FLOAT, 2, {2, 1}, u, 0}};
        tc_node(&t, "ScatterElements", 13, in, 3, 1);
        CHECK(fails_with(&t, "updates"));
        tc_end(&t);
    }
}

static void test_nd(void)
{
    tcase t;
    /* GatherND with batch_dims = 1 */
    {
        static const int64_t ix[2] = {1, 0}, d[1] = {2};
        static const double w[2] = {1, 2};
        static const float x[4] = {0, 1, 2, 3};
        tin in[2] = {{PFVM_FLOAT, 2, {2, 2}, x, 0}, {PFVM_INT64, 2, {2, 1}, ix, 0}};
        tc_node(&t, "GatherND", 13, in, 2, 1);
        pfvm_node_set_attr_int(t.n, "batch_dims", 1, &t.st);
        CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
        CHECK(shape_is(tc_out(&t, 0), 1, d) && values_are(tc_out(&t, 0), w, 2, 1e-6));
        tc_end(&t);
    }
    {
        static const int64_t ix[2] = {1, 0};
        static const float x[6] = {0, 1, 2, 3, 4, 5};
        tin in[2] = {{PFVM_FLOAT, 2, {3, 2}, x, 0}, {PFVM_INT64, 2, {2, 1}, ix, 0}};
        tc_node(&t, "GatherND", 13, in, 2, 1);
        pfvm_node_set_attr_int(t.n, "batch_dims", 1, &t.st);
        CHECK(tc_run(&t) != PFVM_OK);
        tc_end(&t);
    }
    /* ScatterND multiply rows */
    {
        static const int64_t ix[2] = {1, 1};
        static const float u[6] = {2, 2, 2, 3, 3, 3};
        static const double w[6] = {1, 2, 3, 24, 30, 36};
        tin in[3] = {{PFVM_FLOAT, 2, {2, 3}, f6, 0}, {PFVM_INT64, 2, {2, 1}, ix, 0}, {PFVM_FLOAT, 2, {2, 3}, u, 0}};
        tc_node(&t, "ScatterND", 16, in, 3, 1);
        pfvm_node_set_attr_string(t.n, "reduction", "mul", &t.st);
        CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
        CHECK(values_are(tc_out(&t, 0), w, 6, 1e-6));
        tc_end(&t);
    }
    {
        static const int64_t ix[2] = {0, 3};
        static const float u[1] = {9};
        tin in[3] = {{PFVM_FLOAT, 2, {2, 3}, f6, 0}, {PFVM_INT64, 2, {1, 2}, ix, 0}, {PFVM_FLOAT, 1, {1}, u, 0}};
        tc_node(&t, "ScatterND", 13, in, 3, 1);
        CHECK(fails_with(&t, "out of range"));
        tc_end(&t);
    }
    {
        static const int64_t ix[2] = {0, 1};
        static const float u[2] = {9, 9};
        tin in[3] = {{PFVM_FLOAT, 2, {2, 3}, f6, 0}, {PFVM_INT64, 2, {1, 2}, ix, 0}, {PFVM_FLOAT, 1, {2}, u, 0}};
        tc_node(&t, "ScatterND", 13, in, 3, 1);
        CHECK(fails_with(&t, "updates"));
        tc_end(&t);
    }
}

static void test_onehot_eyelike(void)
{
    tcase t;
    {
        static const int64_t ix[2] = {1, -1}, d[2] = {3, 2};
        static const float depth[1] = {3}, v[2] = {0, 5};
        static const double w[6] = {0, 0, 5, 0, 0, 5};
        tin in[3] = {{PFVM_INT64, 1, {2}, ix, 0}, {PFVM_FLOAT, 0, {0}, depth, 0}, {PFVM_FLOAT, 1, {2}, v, 0}};
        tc_node(&t, "OneHot", 11, in, 3, 1);
        pfvm_node_set_attr_int(t.n, "axis", 0, &t.st);
        CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
        CHECK(shape_is(tc_out(&t, 0), 2, d) && values_are(tc_out(&t, 0), w, 6, 1e-6));
        tc_end(&t);
    }
    {
        static const int64_t ix[1] = {0}, depth[1] = {0};
        static const float v[2] = {0, 1};
        tin in[3] = {{PFVM_INT64, 1, {1}, ix, 0}, {PFVM_INT64, 0, {0}, depth, 0}, {PFVM_FLOAT, 1, {2}, v, 0}};
        tc_node(&t, "OneHot", 11, in, 3, 1);
        CHECK(tc_run(&t) != PFVM_OK);
        tc_end(&t);
    }
    /* EyeLike in bfloat16, off the diagonal */
    {
        static const double w[6] = {0, 1, 0, 0, 0, 1};
        tin in[1] = {{PFVM_FLOAT, 2, {2, 3}, f6, 0}};
        tc_node(&t, "EyeLike", 9, in, 1, 1);
        pfvm_node_set_attr_int(t.n, "dtype", PFVM_BFLOAT16, &t.st);
        pfvm_node_set_attr_int(t.n, "k", 1, &t.st);
        CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
        CHECK(tc_out(&t, 0)->dtype == PFVM_BFLOAT16 && values_are(tc_out(&t, 0), w, 6, 1e-6));
        tc_end(&t);
    }
    {
        tin in[1] = {{PFVM_FLOAT, 1, {6}, f6, 0}};
        tc_node(&t, "EyeLike", 9, in, 1, 1);
        CHECK(tc_run(&t) != PFVM_OK);
        tc_end(&t);
    }
}

static void test_compress_nonzero(void)
{
    tcase t;
    {
        static const uint8_t c[2] = {0, 1};
        static const int64_t d[2] = {2, 1};
        static const double w[2] = {2, 5};
        tin in[2] = {{PFVM_FLOAT, 2, {2, 3}, f6, 0}, {PFVM_BOOL, 1, {2}, c, 0}};
        tc_node(&t, "Compress", 11, in, 2, 1);
        pfvm_node_set_attr_int(t.n, "axis", 1, &t.st);
        CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
        CHECK(shape_is(tc_out(&t, 0), 2, d) && values_are(tc_out(&t, 0), w, 2, 1e-6));
        tc_end(&t);
    }
    /* no axis: the flattened data; a constant condition is counted at plan time */
    {
        static const uint8_t c[4] = {1, 0, 0, 1};
        static const double w[2] = {1, 4};
        tin in[2] = {{PFVM_FLOAT, 2, {2, 3}, f6, 0}, {PFVM_BOOL, 1, {4}, c, 1}};
        tc_node(&t, "Compress", 11, in, 2, 1);
        CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
        CHECK(values_are(tc_out(&t, 0), w, 2, 1e-6));
        tc_end(&t);
    }
    {
        static const uint8_t c[4] = {0, 0, 0, 1};
        tin in[2] = {{PFVM_FLOAT, 2, {2, 3}, f6, 0}, {PFVM_BOOL, 1, {4}, c, 0}};
        tc_node(&t, "Compress", 11, in, 2, 1);
        pfvm_node_set_attr_int(t.n, "axis", 1, &t.st);
        CHECK(fails_with(&t, "condition"));
        tc_end(&t);
    }
    {
        static const int32_t x[6] = {0, 3, 0, 0, 0, 7};
        static const int64_t d[2] = {2, 2}, w[4] = {0, 1, 1, 2};
        tin in[1] = {{PFVM_INT32, 2, {2, 3}, x, 0}};
        tc_node(&t, "NonZero", 13, in, 1, 1);
        CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
        CHECK(shape_is(tc_out(&t, 0), 2, d) && ints_are(tc_out(&t, 0), w, 4));
        tc_end(&t);
    }
    {
        static const char *s[3] = {"", "a", ""};
        static const int64_t w[1] = {1};
        tin in[1] = {{PFVM_STRING, 1, {3}, s, 0}};
        tc_node(&t, "NonZero", 13, in, 1, 1);
        CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
        CHECK(ints_are(tc_out(&t, 0), w, 1));
        tc_end(&t);
    }
}

static void test_space_depth_revseq(void)
{
    tcase t;
    /* DepthToSpace CRD: x[0, c, 0, 0] = c for 4 channels, b = 2 -> [[0,1],[2,3]] */
    {
        static const float x[4] = {0, 1, 2, 3};
        static const int64_t d[4] = {1, 1, 2, 2};
        static const double w[4] = {0, 1, 2, 3};
        tin in[1] = {{PFVM_FLOAT, 4, {1, 4, 1, 1}, x, 0}};
        tc_node(&t, "DepthToSpace", 13, in, 1, 1);
        pfvm_node_set_attr_int(t.n, "blocksize", 2, &t.st);
        pfvm_node_set_attr_string(t.n, "mode", "CRD", &t.st);
        CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
        CHECK(shape_is(tc_out(&t, 0), 4, d) && values_are(tc_out(&t, 0), w, 4, 1e-6));
        tc_end(&t);
    }
    /* DCR with 2 output channels: channel = (i*b + j)*C + c */
    {
        static const float x[8] = {0, 1, 2, 3, 4, 5, 6, 7};
        static const double w[8] = {0, 2, 4, 6, 1, 3, 5, 7};
        tin in[1] = {{PFVM_FLOAT, 4, {1, 8, 1, 1}, x, 0}};
        tc_node(&t, "DepthToSpace", 13, in, 1, 1);
        pfvm_node_set_attr_int(t.n, "blocksize", 2, &t.st);
        CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
        CHECK(values_are(tc_out(&t, 0), w, 8, 1e-6));
        tc_end(&t);
    }
    /* SpaceToDepth of [1,1,2,2] -> [1,4,1,1] */
    {
        static const float x[4] = {0, 1, 2, 3};
        static const int64_t d[4] = {1, 4, 1, 1};
        static const double w[4] = {0, 1, 2, 3};
        tin in[1] = {{PFVM_FLOAT, 4, {1, 1, 2, 2}, x, 0}};
        tc_node(&t, "SpaceToDepth", 13, in, 1, 1);
        pfvm_node_set_attr_int(t.n, "blocksize", 2, &t.st);
        CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
        CHECK(shape_is(tc_out(&t, 0), 4, d) && values_are(tc_out(&t, 0), w, 4, 1e-6));
        tc_end(&t);
    }
    {
        tin in[1] = {{PFVM_FLOAT, 4, {1, 1, 3, 2}, f6, 0}};
        tc_node(&t, "SpaceToDepth", 13, in, 1, 1);
        pfvm_node_set_attr_int(t.n, "blocksize", 2, &t.st);
        CHECK(tc_run(&t) != PFVM_OK);
        tc_end(&t);
    }
    /* ReverseSequence, time axis 0, batch axis 1: x[t][b] */
    {
        static const int64_t lens[2] = {3, 1};
        static const double w[6] = {5, 2, 3, 4, 1, 6};
        tin in[2] = {{PFVM_FLOAT, 2, {3, 2}, f6, 0}, {PFVM_INT64, 1, {2}, lens, 0}};
        tc_node(&t, "ReverseSequence", 10, in, 2, 1);
        CHECK_MSG(tc_run(&t) == PFVM_OK, "%s", t.st.msg);
        CHECK(values_are(tc_out(&t, 0), w, 6, 1e-6));
        tc_end(&t);
    }
    {
        static const int64_t lens[2] = {4, 1};
        tin in[2] = {{PFVM_FLOAT, 2, {3, 2}, f6, 0}, {PFVM_INT64, 1, {2}, lens, 0}};
        tc_node(&t, "ReverseSequence", 10, in, 2, 1);
        CHECK(fails_with(&t, "out of range"));
        tc_end(&t);
    }
}

/* ---- symbolic inference ------------------------------------------------------------------------- */

typedef struct sfix {
    pfvm_model *m;
    pfvm_graph *g;
    pfvm_status st;
} sfix;

static void sf_init(sfix *f, int opset)
{
    memset(f, 0, sizeof *f);
    f->m = pfvm_model_new(&f->st);
    f->g = pfvm_graph_new(f->m, NULL, "g", &f->st);
    pfvm_model_set_opset(f->m, "", opset, &f->st);
}

/* A graph input with dims as text: names are dim_params, numbers constants. */
static pfvm_value *sf_input(sfix *f, const char *name, pfvm_dtype dt, const char *dims)
{
    pfvm_value *v = pfvm_graph_value(f->g, name, &f->st);
    char buf[64], *tok;
    v->type.kind = PFVM_KIND_TENSOR;
    v->type.dtype = dt;
    v->type.shape.rank = 0;
    snprintf(buf, sizeof buf, "%s", dims);
    for (tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        char *end;
        long long x = strtoll(tok, &end, 10);
        v->type.shape.dims[v->type.shape.rank++] =
            *end ? pfvm_sym_var(f->m->syms, tok, 1) : pfvm_sym_const(f->m->syms, x);
    }
    v->has_type_info = 1;
    pfvm_graph_add_input(f->g, v, &f->st);
    return v;
}

static pfvm_value *sf_ints(sfix *f, const char *name, const int64_t *vals, int n, int rank)
{
    int64_t dims[1];
    pfvm_value *v = pfvm_graph_value(f->g, name, &f->st);
    pfvm_tensor *t;
    dims[0] = n;
    t = pfvm_model_tensor(f->m, PFVM_INT64, rank, dims, NULL, &f->st);
    memcpy(t->data, vals, sizeof(int64_t) * (size_t)n);
    pfvm_graph_add_init(f->g, v, t, &f->st);
    return v;
}

/* Adds a node with up to 5 inputs and one output named `out`. */
static pfvm_value *sf_node(sfix *f, const char *op, const char *out, pfvm_value *a, pfvm_value *b, pfvm_value *c,
                           pfvm_value *d, pfvm_value *e)
{
    pfvm_value *ins[5], *o = pfvm_graph_value(f->g, out, &f->st);
    int n = 0;
    ins[n++] = a;
    if (b || c || d || e)
        ins[n++] = b;
    if (c || d || e)
        ins[n++] = c;
    if (d || e)
        ins[n++] = d;
    if (e)
        ins[n++] = e;
    pfvm_graph_add_node(f->g, op, "", out, ins, n, &o, 1, &f->st);
    return o;
}

static int sym_shape_is(const pfvm_value *v, const char *want)
{
    char buf[256];
    pfvm_shape_print(&v->type.shape, buf, sizeof buf);
    if (strcmp(buf, want))
        fprintf(stderr, "  %s: got %s, expected %s\n", v->name, buf, want);
    return !strcmp(buf, want);
}

static void test_symbolic(void)
{
    sfix f;
    static const int64_t i0[1] = {0}, i1[1] = {1}, big[1] = {INT64_MAX}, m1[1] = {-1}, neg2[1] = {-2};
    pfvm_value *x, *s, *b, *u, *rest, *c, *r, *v;
    sf_init(&f, 17);
    x = sf_input(&f, "x", PFVM_FLOAT, "batch,seq,64");
    /* Shape -> Gather -> Unsqueeze -> Concat -> Reshape: [batch, seq*64] */
    s = sf_node(&f, "Shape", "s", x, NULL, NULL, NULL, NULL);
    b = sf_node(&f, "Gather", "b", s, sf_ints(&f, "i0", i0, 1, 0), NULL, NULL, NULL);
    u = sf_node(&f, "Unsqueeze", "u", b, sf_ints(&f, "ax0", i0, 1, 1), NULL, NULL, NULL);
    rest = sf_ints(&f, "rest", m1, 1, 1);
    c = sf_node(&f, "Concat", "c", u, rest, NULL, NULL, NULL);
    pfvm_node_set_attr_int(c->producer, "axis", 0, &f.st);
    r = sf_node(&f, "Reshape", "r", x, c, NULL, NULL, NULL);
    /* Slice x[:, 1:] and x[:, :-1] and x[:, ::-2] over a symbolic axis */
    v = sf_node(&f, "Slice", "s1", x, sf_ints(&f, "st1", i1, 1, 1), sf_ints(&f, "en1", big, 1, 1),
                sf_ints(&f, "ax1", i1, 1, 1), NULL);
    sf_node(&f, "Slice", "s2", x, sf_ints(&f, "st2", i0, 1, 1), sf_ints(&f, "en2", m1, 1, 1), sf_ints(&f, "ax2", i1, 1, 1),
            NULL);
    sf_node(&f, "Slice", "s3", x, sf_ints(&f, "st3", m1, 1, 1), sf_ints(&f, "en3", (const int64_t[]){INT64_MIN}, 1, 1),
            sf_ints(&f, "ax3", i1, 1, 1), sf_ints(&f, "sp3", neg2, 1, 1));
    /* Slice whose end is a symbolic dim from the shape (x[:, :batch]) */
    sf_node(&f, "Slice", "s4", x, sf_ints(&f, "st4", i0, 1, 1), u, sf_ints(&f, "ax4", i1, 1, 1), NULL);
    /* Flatten, Concat on the symbolic axis, Tile by a Shape entry */
    sf_node(&f, "Flatten", "fl", x, NULL, NULL, NULL, NULL);
    c = sf_node(&f, "Concat", "cc", x, v, NULL, NULL, NULL);
    pfvm_node_set_attr_int(c->producer, "axis", 1, &f.st);
    sf_node(&f, "Tile", "tl", x, sf_node(&f, "Concat", "reps", sf_ints(&f, "one", i1, 1, 1), u, sf_ints(&f, "one2", i1, 1, 1),
                                           NULL, NULL),
            NULL, NULL, NULL);
    pfvm_node_set_attr_int(pfvm_graph_find(f.g, "reps")->producer, "axis", 0, &f.st);
    /* Range(0, batch, 1) and ConstantOfShape(Shape(x)) */
    sf_node(&f, "Range", "rg", sf_ints(&f, "z", i0, 1, 0), b, sf_ints(&f, "o", i1, 1, 0), NULL, NULL);
    sf_node(&f, "ConstantOfShape", "cs", s, NULL, NULL, NULL, NULL);
    /* Expand to a shape made of dims */
    sf_node(&f, "Expand", "ex", sf_input(&f, "y", PFVM_FLOAT, "1,64"), s, NULL, NULL, NULL);
    /* Split in two equal parts along seq */
    {
        pfvm_value *outs[2], *in = x;
        outs[0] = pfvm_graph_value(f.g, "sp_a", &f.st);
        outs[1] = pfvm_graph_value(f.g, "sp_b", &f.st);
        pfvm_node_set_attr_int(pfvm_graph_add_node(f.g, "Split", "", "split", &in, 1, outs, 2, &f.st), "axis", 1, &f.st);
    }
    /* Pad seq by (1, 2) */
    sf_node(&f, "Pad", "pd", x, sf_ints(&f, "pads", (const int64_t[]){0, 1, 0, 0, 2, 0}, 6, 1), NULL, NULL, NULL);
    /* axes known only by count: the rank is still known */
    sf_node(&f, "Unsqueeze", "uq", x, sf_input(&f, "uax", PFVM_INT64, "2"), NULL, NULL, NULL);
    sf_node(&f, "Squeeze", "sq", x, sf_input(&f, "sax", PFVM_INT64, "1"), NULL, NULL, NULL);
    CHECK_MSG(pfvm_infer_shapes(f.g, 1, &f.st) == PFVM_OK, "%s", f.st.msg);
    CHECK(pfvm_graph_find(f.g, "uq")->type.shape.rank == 5 && pfvm_graph_find(f.g, "sq")->type.shape.rank == 2);
    CHECK(sym_shape_is(r, "[batch,64*seq]") || sym_shape_is(r, "[batch,seq*64]"));
    /* max(0, seq-1) is exact; the sym proofs do not use seq >= 1 yet */
    CHECK(sym_shape_is(pfvm_graph_find(f.g, "s1"), "[batch,max(0,seq-1),64]") ||
          sym_shape_is(pfvm_graph_find(f.g, "s1"), "[batch,seq-1,64]"));
    CHECK(sym_shape_is(pfvm_graph_find(f.g, "s2"), "[batch,max(0,seq-1),64]") ||
          sym_shape_is(pfvm_graph_find(f.g, "s2"), "[batch,seq-1,64]"));
    CHECK(sym_shape_is(pfvm_graph_find(f.g, "s3"), "[batch,(seq+1)/2,64]"));
    CHECK(sym_shape_is(pfvm_graph_find(f.g, "s4"), "[batch,min(batch,seq),64]"));
    CHECK(sym_shape_is(pfvm_graph_find(f.g, "fl"), "[batch,64*seq]") ||
          sym_shape_is(pfvm_graph_find(f.g, "fl"), "[batch,seq*64]"));
    CHECK(sym_shape_is(pfvm_graph_find(f.g, "cc"), "[batch,seq+max(0,seq-1),64]") ||
          sym_shape_is(pfvm_graph_find(f.g, "cc"), "[batch,2*seq-1,64]"));
    CHECK(sym_shape_is(pfvm_graph_find(f.g, "tl"), "[batch,batch*seq,64]"));
    CHECK(sym_shape_is(pfvm_graph_find(f.g, "rg"), "[batch]"));
    CHECK(sym_shape_is(pfvm_graph_find(f.g, "cs"), "[batch,seq,64]"));
    CHECK(sym_shape_is(pfvm_graph_find(f.g, "ex"), "[batch,seq,64]"));
    CHECK(sym_shape_is(pfvm_graph_find(f.g, "sp_a"), "[batch,seq/2,64]"));
    CHECK(sym_shape_is(pfvm_graph_find(f.g, "pd"), "[batch,seq+3,64]") ||
          sym_shape_is(pfvm_graph_find(f.g, "pd"), "[batch,3+seq,64]"));
    pfvm_model_free(f.m);
}

/* Inference proves errors it can see without running. */
static void test_symbolic_errors(void)
{
    sfix f;
    static const int64_t sh[2] = {5, 7}, ix[1] = {3};
    pfvm_value *x;
    sf_init(&f, 17);
    x = sf_input(&f, "x", PFVM_FLOAT, "batch,6");
    sf_node(&f, "Reshape", "r", sf_input(&f, "z", PFVM_FLOAT, "2,3"), sf_ints(&f, "sh", sh, 2, 1), NULL, NULL, NULL);
    CHECK(pfvm_infer_shapes(f.g, 1, &f.st) == PFVM_ERR_SHAPE && strstr(f.st.msg, "Reshape"));
    pfvm_model_free(f.m);

    sf_init(&f, 17);
    x = sf_input(&f, "x", PFVM_FLOAT, "batch,6");
    sf_node(&f, "Gather", "g", sf_node(&f, "Shape", "s", x, NULL, NULL, NULL, NULL), sf_ints(&f, "i", ix, 1, 1), NULL,
            NULL, NULL);
    CHECK(pfvm_infer_shapes(f.g, 1, &f.st) != PFVM_OK && strstr(f.st.msg, "out of range"));
    pfvm_model_free(f.m);

}

int main(void)
{
    test_reshape();
    test_flatten_squeeze();
    test_transpose();
    test_concat_split();
    test_slice();
    test_gather();
    test_expand_tile();
    test_pad();
    test_range_trilu();
    test_shape_constant();
    test_identity_dropout();
    test_gather_scatter_elements();
    test_nd();
    test_onehot_eyelike();
    test_compress_nonzero();
    test_space_depth_revseq();
    test_symbolic();
    test_symbolic_errors();
    return CHECK_END();
}
