/* accel simulator: hand-written programs on the tiny target give the right
 * values and cycle counts; a layout conversion's moves, emitted as copies,
 * turn a tensor into its new layout; bad programs (overflow, reading
 * unwritten memory, unknown instructions) get one error naming the line.
 * Run from the repository root.
 */
#include "accel/sim.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static pfvm_accel_target tiny;

static const pfvm_tensor *no_weights(void *user, const char *name)
{
    (void)user;
    (void)name;
    return NULL;
}

static const pfvm_tensor *one_weight(void *user, const char *name)
{
    return !strcmp(name, "B") ? (const pfvm_tensor *)user : NULL;
}

static void check_relu(pfvm_accel_sim *s)
{
    float x[12] = {-1, 2, -3, 4, -5, 6, -7, 8, -9, 10, -11, 12};
    int64_t d[1] = {12};
    pfvm_status st;
    pfvm_tensor *in = pfvm_tensor_view(PFVM_FLOAT, 1, d, x, &st);
    const pfvm_tensor *ins[1];
    const pfvm_tensor *y;
    int i, ok = 1;
    ins[0] = in;
    CHECK_MSG(pfvm_accel_sim_run(s,
                                 "program tiny\n"
                                 "input 0 0 12 pe:4*local:3   # 3 elements per PE of group 0\n"
                                 "barrier\n"
                                 "on 0 3\n"
                                 "un relu 16 0 3\n"
                                 "barrier\n"
                                 "output 0 16 12 pe:4*local:3\n",
                                 ins, 1, no_weights, NULL, &st) == PFVM_OK,
              "%s", st.msg);
    y = pfvm_accel_sim_output(s, 0);
    CHECK(y && y->dims[0] == 12 && pfvm_accel_sim_noutputs(s) == 1);
    for (i = 0; y && i < 12; i++)
        ok &= ((const float *)y->data)[i] == (x[i] > 0 ? x[i] : 0);
    CHECK(ok);
    /* input: 12 bytes into each of 4 PEs of one group: the group link moves
     * 48 bytes at 8 per cycle (6); relu: 3 elements, one SIMD op (1);
     * output: 6 again */
    CHECK_MSG(pfvm_accel_sim_cycles(s) == 13, "%g cycles", pfvm_accel_sim_cycles(s));
    CHECK(pfvm_accel_sim_transfer_cycles(s) == 12);
    CHECK(pfvm_accel_sim_phases(s) == 3 && pfvm_accel_sim_phase_cycles(s, 0) == 6 &&
          pfvm_accel_sim_phase_cycles(s, 1) == 1 && pfvm_accel_sim_phase_cycles(s, 2) == 6 &&
          pfvm_accel_sim_phase_cycles(s, 3) == 0);
    pfvm_tensor_free(in);
}

static void check_gemm(pfvm_accel_sim *s)
{
    float a[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, b[6] = {1, -1, 0.5f, 2, -2, 0};
    int64_t da[2] = {4, 3}, db[2] = {3, 2};
    pfvm_status st;
    pfvm_tensor *ta = pfvm_tensor_view(PFVM_FLOAT, 2, da, a, &st), *tb = pfvm_tensor_view(PFVM_FLOAT, 2, db, b, &st);
    const pfvm_tensor *ins[1];
    const pfvm_tensor *y;
    int i, j, l, ok = 1;
    ins[0] = ta;
    /* rows of A over 4 PEs, B on every PE of the group, C = A B per PE */
    CHECK_MSG(pfvm_accel_sim_run(s,
                                 "program tiny\n"
                                 "input 0 0 4x3 pe:4*local:1, local:3\n"
                                 "weight B 12 3x2 local:3, local:2 | rep pe\n"
                                 "barrier\n"
                                 "on 0 3\n"
                                 "gemm 40 0 12 1 2 3\n"
                                 "output 0 40 4x2 pe:4*local:1, local:2\n",
                                 ins, 1, one_weight, tb, &st) == PFVM_OK,
              "%s", st.msg);
    y = pfvm_accel_sim_output(s, 0);
    for (i = 0; y && i < 4; i++)
        for (j = 0; j < 2; j++) {
            float r = 0;
            for (l = 0; l < 3; l++)
                r += a[i * 3 + l] * b[l * 2 + j];
            ok &= fabsf(((const float *)y->data)[i * 2 + j] - r) < 1e-6f;
        }
    CHECK(y && ok);
    /* the same with B^T stored (transB 1) and PEs 0-1 and 2-3 as two ranges */
    {
        float bt[6] = {1, 0.5f, -2, -1, 2, 0};
        int64_t dbt[2] = {2, 3};
        pfvm_tensor *tbt = pfvm_tensor_view(PFVM_FLOAT, 2, dbt, bt, &st);
        const pfvm_tensor *y2;
        CHECK_MSG(pfvm_accel_sim_run(s,
                                     "program tiny\n"
                                     "input 0 0 4x3 pe:4*local:1, local:3\n"
                                     "weight B 12 2x3 local:2, local:3 | rep pe\n"
                                     "on 0 1 2 3\n"
                                     "gemm 40 0 12 1 2 3 1\n"
                                     "output 0 40 4x2 pe:4*local:1, local:2\n",
                                     ins, 1, one_weight, tbt, &st) == PFVM_OK,
                  "%s", st.msg);
        y2 = pfvm_accel_sim_output(s, 0);
        ok = y2 != NULL;
        for (i = 0; y2 && i < 4; i++)
            for (j = 0; j < 2; j++) {
                float r = 0;
                for (l = 0; l < 3; l++)
                    r += a[i * 3 + l] * b[l * 2 + j];
                ok &= fabsf(((const float *)y2->data)[i * 2 + j] - r) < 1e-6f;
            }
        CHECK(ok);
        pfvm_tensor_free(tbt);
    }
    /* B on all 16 PEs: each PE link carries its 24 bytes (6 cycles at 4 per
     * cycle); the group and cluster links broadcast, so carry them once
     * (3 and 2 cycles), not 4 or 8 times */
    CHECK_MSG(pfvm_accel_sim_run(s, "program tiny\nweight B 0 3x2 local:3, local:2 | rep cluster group pe\n", ins, 1,
                                 one_weight, tb, &st) == PFVM_OK,
              "%s", st.msg);
    CHECK_MSG(pfvm_accel_sim_cycles(s) == 6, "%g cycles", pfvm_accel_sim_cycles(s));
    pfvm_tensor_free(ta);
    pfvm_tensor_free(tb);
}

/* A conversion's moves as copy instructions (elements are 4 bytes). */
static void check_moves(pfvm_accel_sim *s)
{
    float x[12];
    int64_t d[1] = {12};
    pfvm_accel_layout src, dst;
    pfvm_accel_move *moves = NULL;
    size_t count = 0;
    pfvm_status st;
    pfvm_tensor *in = pfvm_tensor_view(PFVM_FLOAT, 1, d, x, &st);
    const pfvm_tensor *ins[1];
    const pfvm_tensor *y;
    char prog[8192];
    size_t len = 0;
    int i, ok = 1;
    ins[0] = in;
    for (i = 0; i < 12; i++)
        x[i] = (float)i * 1.5f;
    CHECK(pfvm_accel_layout_parse("cluster:2*pe:2*local:3", &tiny, 1, d, &src, &st) == PFVM_OK);
    CHECK(pfvm_accel_layout_parse("local:3*group:2*pe:2 | rep cluster", &tiny, 1, d, &dst, &st) == PFVM_OK);
    CHECK(pfvm_accel_moves(&tiny, &src, &dst, &moves, &count, &st) == PFVM_OK && count > 0);
    len += (size_t)snprintf(prog + len, sizeof prog - len, "program tiny\ninput 0 0 12 cluster:2*pe:2*local:3\nbarrier\n");
    for (i = 0; i < (int)count; i++)
        len += (size_t)snprintf(prog + len, sizeof prog - len, "copy %lld %lld %lld %lld %lld\n",
                                (long long)moves[i].src_pe, (long long)moves[i].src_off * 4,
                                (long long)moves[i].dst_pe, 64 + (long long)moves[i].dst_off * 4,
                                (long long)moves[i].count * 4);
    snprintf(prog + len, sizeof prog - len, "barrier\noutput 0 64 12 local:3*group:2*pe:2 | rep cluster\n");
    CHECK_MSG(pfvm_accel_sim_run(s, prog, ins, 1, no_weights, NULL, &st) == PFVM_OK, "%s", st.msg);
    y = pfvm_accel_sim_output(s, 0);
    for (i = 0; y && i < 12; i++)
        ok &= ((const float *)y->data)[i] == x[i];
    CHECK(y && ok);
    pfvm_accel_moves_free(moves);
    pfvm_tensor_free(in);
}

static void bad(pfvm_accel_sim *s, const char *prog, const char *what)
{
    float x[12] = {0};
    int64_t d[1] = {12};
    pfvm_status st;
    pfvm_tensor *in = pfvm_tensor_view(PFVM_FLOAT, 1, d, x, &st);
    const pfvm_tensor *ins[1];
    pfvm_code rc;
    ins[0] = in;
    rc = pfvm_accel_sim_run(s, prog, ins, 1, no_weights, NULL, &st);
    CHECK_MSG(rc != PFVM_OK && strstr(st.msg, what), "got '%s', want '%s'", rc ? st.msg : "ok", what);
    pfvm_tensor_free(in);
}

static void check_bad(pfvm_accel_sim *s)
{
    bad(s, "program big\n", "program line 1 (program): the first line must be 'program tiny'");
    bad(s, "barrier\n", "the first line must be 'program TARGET'");
    bad(s, "program tiny\nfly 1 2\n", "program line 2 (fly): unknown instruction");
    bad(s, "program tiny\ninput 0 1020 12 pe:4*local:3\n", "line 2 (input): 12 bytes at offset 1020 overflow a PE's 1024 bytes");
    bad(s, "program tiny\ninput 0 2 12 pe:4*local:3\n", "offset 2 is not a multiple of 4");
    bad(s, "program tiny\ninput 0 0 12 pe:4*local:3\nun relu 16 0 3\n",
        "line 3 (un): PE 4 reads byte 0, which nothing has written");
    bad(s, "program tiny\ninput 0 0 12 pe:4*local:3\non 0 3\nun relu 16 0 4\n", "PE 0 reads byte 12");
    bad(s, "program tiny\ninput 0 0 12 pe:4*local:3\non 0 3\nun frob 16 0 3\n", "line 4 (un): unknown operation 'frob'");
    bad(s, "program tiny\ninput 1 0 12 pe:4*local:3\n", "input 1 not given");
    bad(s, "program tiny\ninput 0 0 13 pe:4*local:4\n", "axis 0 has size 12, the program says 13");
    bad(s, "program tiny\ninput 0 0 12 pe:4*local:2\n", "program line 2 (input): layout 'pe:4*local:2'");
    bad(s, "program tiny\nweight W 0 12 local:12\n", "no weight named 'W'");
    bad(s, "program tiny\ninput 0 0 12 pe:4*local:3\ncopy 0 0 16 0 12\n", "operand 3 '16' is not an integer from 0 to 15");
    bad(s, "program tiny\ninput 0 0 12 pe:4*local:3\noutput 0 0 12 pe:2*local:6\n", "reads byte 12");
    bad(s, "program tiny\non 3 2\n", "operand 2 '2' is not an integer from 3 to 15");
    bad(s, "program tiny\non 3\n", "expected pairs FIRST LAST");
}

/* loads F L S: the same data to every S-th PE, sent once down each link
 * whose children's links broadcast */
static void check_strided_load(pfvm_accel_sim *s)
{
    float x[4] = {-1, 2, -3, 4};
    int64_t d[1] = {4};
    pfvm_status st;
    pfvm_tensor *in = pfvm_tensor_view(PFVM_FLOAT, 1, d, x, &st);
    const pfvm_tensor *ins[1];
    const pfvm_tensor *y;
    ins[0] = in;
    CHECK_MSG(pfvm_accel_sim_run(s,
                                 "program tiny\n"
                                 "dinput 0 0\n"
                                 "loads 0 15 4 0 0 1 1 4 0 0 0 0   # PEs 0, 4, 8, 12: one per group\n"
                                 "on 0 0 4 4 8 8 12 12\n"
                                 "un relu 16 0 4\n"
                                 "store 12 64 16 1 1 4 0 0 0 0\n"
                                 "doutput 0 64 4\n",
                                 ins, 1, no_weights, NULL, &st) == PFVM_OK,
              "%s", st.msg);
    y = pfvm_accel_sim_output(s, 0);
    CHECK(y && y->dims[0] == 4 && ((const float *)y->data)[0] == 0 && ((const float *)y->data)[3] == 4);
    /* 16 bytes: 4 cycles on each PE's link (4 bytes per cycle), 2 on each
     * group's (8), 1 on each cluster's (16, sent once for its two groups);
     * the store takes 4 on PE 12's link up, in the same phase */
    CHECK_MSG(pfvm_accel_sim_cycles(s) == 4, "%g cycles", pfvm_accel_sim_cycles(s));
    pfvm_tensor_free(in);
    bad(s, "program tiny\ndinput 0 0\nloads 0 15 4 0 0 1 1 4 0 0 0 0\non 1 1\nun relu 16 0 4\n",
        "line 5 (un): PE 1 reads byte 0, which nothing has written");
    bad(s, "program tiny\ndinput 0 0\nloads 0 15 0 0 0 1 1 4 0 0 0 0\n", "operand 3 '0' is not an integer from 1 to 16");
}

int main(void)
{
    pfvm_status st;
    pfvm_accel_sim *s;
    if (pfvm_accel_target_load("targets/tiny.txt", &tiny, &st) || !(s = pfvm_accel_sim_new(&tiny, &st))) {
        fprintf(stderr, "%s\n", st.msg);
        return 1;
    }
    check_relu(s);
    check_gemm(s);
    check_moves(s);
    check_bad(s);
    check_strided_load(s);
    pfvm_accel_sim_free(s);
    return CHECK_END();
}
