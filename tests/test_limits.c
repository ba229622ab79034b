/* Resource limits (pfvm_limits, pfvm_exec_set_limits): a model that needs
 * more than the executor may allocate fails when its inputs are bound, with
 * one error naming the value and the limit, before the arena is allocated;
 * within the limits it runs as before. Run from the repository root. */
#include "exec/exec.h"
#include "onnx/onnx_io.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

/* An allocator hook that records the largest request. */
static size_t largest;
static void *counting_realloc(void *user, void *p, size_t size)
{
    (void)user;
    if (size == 0) {
        free(p);
        return NULL;
    }
    if (size > largest)
        largest = size;
    return realloc(p, size);
}

static pfvm_code bind_run(pfvm_exec *e, const pfvm_tensor *in, pfvm_status *st)
{
    pfvm_code rc = pfvm_exec_bind(e, &in, 1, st);
    return rc ? rc : pfvm_exec_run(e, st);
}

/* The 307-byte model whose TfIdfVectorizer output takes 7.5 GB. */
static void test_huge_output(void)
{
    pfvm_status st;
    pfvm_allocator hook = {counting_realloc, NULL};
    pfvm_model *m = pfvm_onnx_load_file("tests/hostile/tfidf_huge_output.onnx", 0, &st);
    pfvm_tensor *x = pfvm_onnx_read_value_file("tests/hostile/tfidf_input_0.pb", PFVM_KIND_TENSOR, &st);
    pfvm_exec *e;
    pfvm_limits l;
    CHECK(m && x);
    if (!m || !x)
        return;
    e = pfvm_exec_new(m, NULL, &st);
    CHECK(e);
    if (!e)
        return;
    pfvm_set_allocator(&hook);
    largest = 0;
    CHECK(bind_run(e, x, &st) == PFVM_ERR_NOMEM);
    CHECK_MSG(strstr(st.msg, "node 'TfIdfVectorizer#0' (TfIdfVectorizer): output 'Y' needs 7515865040 bytes") &&
                  strstr(st.msg, "over the limit of 4294967296 bytes per tensor"),
              "%s", st.msg);
    CHECK_MSG(largest < 1 << 20, "largest allocation %zu", largest);
    /* a firmware-sized limit */
    l = pfvm_limits_max(64 << 10);
    pfvm_exec_set_limits(e, &l);
    CHECK(pfvm_exec_limits(e).max_tensor_bytes == 64 << 10 && pfvm_exec_limits(e).max_arena_bytes == 64 << 10);
    CHECK(bind_run(e, x, &st) == PFVM_ERR_NOMEM && strstr(st.msg, "over the limit of 65536 bytes per tensor"));
    CHECK_MSG(largest < 1 << 20, "largest allocation %zu", largest);
    pfvm_set_allocator(NULL);
    pfvm_exec_free(e);
    pfvm_tensor_free(x);
    pfvm_model_free(m);
}

/* Outputs sized only while running (here a Pad of strings, 28.5 M of them
 * from an empty input) are held to the executor's limits too: the run
 * fails before the 228 MB of pointers, let alone the strings, exist. */
static void test_run_time_output(void)
{
    static const int64_t dims[4] = {0, 3, 9, 8};
    pfvm_status st;
    pfvm_allocator hook = {counting_realloc, NULL};
    pfvm_model *m = pfvm_onnx_load_file("tests/hostile/pad_strings_28m.onnx", 0, &st);
    pfvm_tensor *x = pfvm_tensor_new(PFVM_STRING, 4, dims, &st);
    pfvm_exec *e = m ? pfvm_exec_new(m, NULL, &st) : NULL;
    pfvm_limits l = pfvm_limits_max(16 << 20);
    CHECK(m && x && e);
    if (!m || !x || !e)
        goto done;
    pfvm_exec_set_limits(e, &l);
    pfvm_set_allocator(&hook);
    largest = 0;
    CHECK(bind_run(e, x, &st) == PFVM_ERR_NOMEM);
    CHECK_MSG(strstr(st.msg, "Pad") && strstr(st.msg, "needs 228480912 bytes") &&
                  strstr(st.msg, "over the limit of 16777216 bytes per tensor"),
              "%s", st.msg);
    CHECK_MSG(largest < 1 << 20, "largest allocation %zu", largest);
    pfvm_set_allocator(NULL);
done:
    pfvm_exec_free(e);
    pfvm_tensor_free(x);
    pfvm_model_free(m);
}

/* A real model: limits at its plan's sizes pass, one byte less fails. */
static void test_model_limits(void)
{
    pfvm_status st;
    pfvm_model *m = pfvm_onnx_load_file("tests/models/cnn_small/model.onnx", 0, &st);
    pfvm_tensor *x = pfvm_onnx_read_value_file("tests/models/cnn_small/test_data_set_0/input_0.pb", PFVM_KIND_TENSOR, &st);
    pfvm_exec *e;
    pfvm_plan_info info;
    pfvm_limits l, d = pfvm_limits_default();
    size_t arena, biggest = 0;
    int i;
    CHECK(m && x);
    if (!m || !x)
        return;
    e = pfvm_exec_new(m, NULL, &st);
    CHECK(e);
    if (!e)
        return;
    CHECK(pfvm_exec_limits(e).max_arena_bytes == d.max_arena_bytes &&
          pfvm_exec_limits(e).max_tensor_bytes == d.max_tensor_bytes &&
          pfvm_exec_limits(e).max_total_bytes == d.max_total_bytes);
    CHECK(bind_run(e, x, &st) == PFVM_OK);
    CHECK(pfvm_exec_plan_info(e, &info, &st) == PFVM_OK);
    arena = info.arena_bytes;
    for (i = 0; i < info.n_entries; i++)
        if (info.entries[i].kind == 0 && info.entries[i].value->producer &&
            info.entries[i].bytes > biggest)
            biggest = info.entries[i].bytes;
    CHECK(arena > 0 && biggest > 0);
    /* the arena limit */
    memset(&l, 0, sizeof l);
    l.max_arena_bytes = arena - 1;
    pfvm_exec_set_limits(e, &l);
    CHECK(pfvm_exec_limits(e).max_tensor_bytes == d.max_tensor_bytes);
    CHECK(bind_run(e, x, &st) == PFVM_ERR_NOMEM);
    CHECK_MSG(strstr(st.msg, "the plan needs an arena of") && strstr(st.msg, "over the limit"), "%s", st.msg);
    l.max_arena_bytes = arena;
    pfvm_exec_set_limits(e, &l);
    CHECK(bind_run(e, x, &st) == PFVM_OK);
    /* the total: the arena and the folded constants */
    memset(&l, 0, sizeof l);
    l.max_total_bytes = arena + info.folded_bytes - 1;
    pfvm_exec_set_limits(e, &l);
    CHECK(bind_run(e, x, &st) == PFVM_ERR_NOMEM && strstr(st.msg, "in all"));
    l.max_total_bytes = arena + info.folded_bytes;
    pfvm_exec_set_limits(e, &l);
    CHECK_MSG(bind_run(e, x, &st) == PFVM_OK, "%s", st.msg);
    /* one tensor: the largest arena slot rounds up to PFVM_DATA_ALIGN */
    memset(&l, 0, sizeof l);
    l.max_tensor_bytes = biggest - PFVM_DATA_ALIGN;
    pfvm_exec_set_limits(e, &l);
    CHECK(bind_run(e, x, &st) == PFVM_ERR_NOMEM && strstr(st.msg, "bytes per tensor") && strstr(st.msg, "node '"));
    pfvm_exec_set_limits(e, NULL);
    CHECK(bind_run(e, x, &st) == PFVM_OK);
    pfvm_exec_free(e);
    pfvm_tensor_free(x);
    pfvm_model_free(m);
}

/* The node suite's test_loop11 model and its three inputs (NULL, with a
 * failed check, when they do not load). */
static pfvm_model *load_loop11(pfvm_tensor **in)
{
    static const char *dir = "/usr/share/libonnx-testdata/data/node/test_loop11/";
    char path[256];
    pfvm_status st;
    pfvm_model *m;
    int i, ok = 1;
    snprintf(path, sizeof path, "%smodel.onnx", dir);
    m = pfvm_onnx_load_file(path, 0, &st);
    for (i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "%stest_data_set_0/input_%d.pb", dir, i);
        in[i] = pfvm_onnx_read_value_file(path, PFVM_KIND_TENSOR, &st);
        ok = ok && in[i];
    }
    CHECK(m != NULL && ok);
    if (m && ok)
        return m;
    for (i = 0; i < 3; i++)
        pfvm_tensor_free(in[i]);
    pfvm_model_free(m);
    return NULL;
}

/* pfvm_limits.max_loop_iterations: the node suite's Loop (trip count 5)
 * runs under a limit of 5 and fails, naming the node, under 4. */
static void test_loop_iterations(void)
{
    pfvm_status st;
    pfvm_tensor *in[3];
    pfvm_model *m;
    pfvm_exec *e;
    pfvm_limits l;
    int i;
    if (!(m = load_loop11(in)))
        return;
    CHECK(pfvm_tensor_get_i64(in[0], 0) == 5);
    e = pfvm_exec_new(m, NULL, &st);
    l = pfvm_exec_limits(e);
    l.max_loop_iterations = 5;
    pfvm_exec_set_limits(e, &l);
    CHECK(pfvm_exec_bind(e, pfvm_tensors_const(in), 3, &st) == PFVM_OK && pfvm_exec_run(e, &st) == PFVM_OK);
    l.max_loop_iterations = 4;
    pfvm_exec_set_limits(e, &l);
    CHECK(pfvm_exec_bind(e, pfvm_tensors_const(in), 3, &st) == PFVM_OK);
    CHECK(pfvm_exec_run(e, &st) == PFVM_ERR_RUNTIME);
    CHECK(strstr(st.msg, "Loop") && strstr(st.msg, "limit of 4 iterations"));
    printf("loop limit: %s\n", st.msg);
    pfvm_exec_free(e);
    for (i = 0; i < 3; i++)
        pfvm_tensor_free(in[i]);
    pfvm_model_free(m);
}

/* pfvm_limits.max_run_operations: the test_loop11 model counts some
 * operations per run (the same each run: the count restarts); it runs
 * under exactly that budget, twice, and fails one operation short with
 * an error naming the node and the limit. */
static void test_run_operations(void)
{
    pfvm_status st;
    pfvm_tensor *in[3];
    pfvm_model *m;
    pfvm_exec *e;
    pfvm_limits l;
    uint64_t ops;
    int i;
    if (!(m = load_loop11(in)))
        return;
    e = pfvm_exec_new(m, NULL, &st);
    CHECK(pfvm_exec_limits(e).max_run_operations == UINT64_MAX);
    CHECK(pfvm_exec_bind(e, pfvm_tensors_const(in), 3, &st) == PFVM_OK && pfvm_exec_run(e, &st) == PFVM_OK);
    ops = pfvm_exec_operations(e);
    CHECK(ops > 10);
    l = pfvm_exec_limits(e);
    l.max_run_operations = ops;
    pfvm_exec_set_limits(e, &l);
    CHECK(pfvm_exec_bind(e, pfvm_tensors_const(in), 3, &st) == PFVM_OK && pfvm_exec_run(e, &st) == PFVM_OK &&
          pfvm_exec_run(e, &st) == PFVM_OK && pfvm_exec_operations(e) == ops);
    l.max_run_operations = ops - 1;
    pfvm_exec_set_limits(e, &l);
    CHECK(pfvm_exec_bind(e, pfvm_tensors_const(in), 3, &st) == PFVM_OK);
    CHECK(pfvm_exec_run(e, &st) == PFVM_ERR_RUNTIME);
    CHECK(strstr(st.msg, "node '") && strstr(st.msg, "max_run_operations"));
    printf("operations: %llu per run; one short: %s\n", (unsigned long long)ops, st.msg);
    pfvm_exec_free(e);
    for (i = 0; i < 3; i++)
        pfvm_tensor_free(in[i]);
    pfvm_model_free(m);
}

int main(void)
{
    test_run_operations();
    test_huge_output();
    test_run_time_output();
    test_model_limits();
    test_loop_iterations();
    return CHECK_END();
}
