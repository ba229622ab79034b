/* Stored plans (pfvm_exec_store_plan, `interp opt --planned`): digits,
 * optimized, planned and stored, saved and loaded again, binds to its
 * stored plan (the arena size it stored) and runs to the same bits as the
 * model the executor planned itself; bad plans (edited in the saved bytes:
 * arena too small, values misaligned, outside the arena, unknown, placed
 * twice, malformed numbers, unknown records and versions, and every
 * byte of the plan replaced by NUL, tab, newline or a digit) fail bind with
 * a message, or bind and run, and never crash (run it under ASan: `make
 * asan`); inputs of other shapes than the stored ones are refused;
 * pfvm_optimize drops the plan. Run from the repository root:
 *
 *   build/tests/test_stored_plan
 *
 * Built from the amalgamated header with STORED_PLAN_AMALGAMATED (and
 * PFVM_NO_SHAPE_INFERENCE: the device's code path, no optimizer), it takes
 * a model `interp opt --planned` wrote and checks the same byte
 * replacements against the model's own outputs (tests/switches.sh); with
 * PFVM_PLANNED_ONLY also that a dim without a number and a tensor without
 * raw_data are refused on load, and a node that reads a later node's
 * output (the stored order is checked as the nodes are read):
 *
 *   build/tests/test_stored_plan_device PLANNED.onnx
 */
#ifdef STORED_PLAN_AMALGAMATED
#define PFVM_IMPLEMENTATION
#include "pfvm_onnx.h"
#else
#include "exec/exec.h"
#include "onnx/onnx_io.h"
#include "passes/passes.h"
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define MODEL "models/digits.onnx"
#define INPUT "models/digits_samples/digit_0.pb"

static pfvm_tensor *input;
static float expect[10];

/* Loads bytes, binds the input, runs: the bind's or run's code (and the
 * message in st). With out: the logits. */
static pfvm_code load_bind_run(const void *bytes, size_t size, const pfvm_tensor *x, float *out, size_t *arena,
                               pfvm_status *st)
{
    pfvm_model *m = pfvm_onnx_load_memory(bytes, size, 0, st);
    pfvm_exec *e;
    pfvm_code rc;
    if (!m)
        return st->code;
    if (!(e = pfvm_exec_new(m, NULL, st))) {
        pfvm_model_free(m);
        return st->code;
    }
    rc = pfvm_exec_bind(e, &x, 1, st);
    if (!rc && arena) {
        pfvm_plan_info info;
        rc = pfvm_exec_plan_info(e, &info, st);
        *arena = info.arena_bytes;
    }
    if (!rc)
        rc = pfvm_exec_run(e, st);
    if (!rc && out)
        memcpy(out, pfvm_exec_output(e, 0)->data, sizeof expect);
    pfvm_exec_free(e);
    pfvm_model_free(m);
    return rc;
}

#ifdef STORED_PLAN_AMALGAMATED
/* The planned model's bytes from a file, its outputs as the reference. */
static int prepare_file(const char *path, void **bytes, size_t *size, size_t *arena)
{
    pfvm_status st;
    FILE *f = fopen(path, "rb");
    long n;
    if (!f || fseek(f, 0, SEEK_END) || (n = ftell(f)) <= 0 || fseek(f, 0, SEEK_SET) || !(*bytes = malloc((size_t)n)) ||
        fread(*bytes, 1, (size_t)n, f) != (size_t)n) {
        fprintf(stderr, "cannot read %s\n", path);
        if (f)
            fclose(f);
        return 0;
    }
    fclose(f);
    *size = (size_t)n;
    if (load_bind_run(*bytes, *size, input, expect, arena, &st)) {
        fprintf(stderr, "%s: %s\n", path, st.msg);
        return 0;
    }
    return 1;
}
#else
/* Digits optimized (the reference logits into expect), with its plan
 * stored when `store`, saved into *bytes. */
static int prepare(int store, void **bytes, size_t *size, size_t *arena)
{
    pfvm_status st;
    pfvm_model *m = pfvm_onnx_load_file(MODEL, 0, &st);
    pfvm_exec *e;
    pfvm_plan_info info;
    const pfvm_tensor *x = input;
    int ok;
    if (!m || pfvm_optimize(m, NULL, NULL, &st) || !(e = pfvm_exec_new(m, NULL, &st))) {
        fprintf(stderr, "prepare: %s\n", st.msg);
        pfvm_model_free(m);
        return 0;
    }
    ok = !pfvm_exec_bind(e, &x, 1, &st) && !pfvm_exec_run(e, &st) && !pfvm_exec_plan_info(e, &info, &st);
    if (ok) {
        memcpy(expect, pfvm_exec_output(e, 0)->data, sizeof expect);
        *arena = info.arena_bytes;
    }
    ok = ok && (!store || !pfvm_exec_store_plan(e, &st)) && !pfvm_onnx_save_memory(m, bytes, size, &st);
    if (!ok)
        fprintf(stderr, "prepare: %s\n", st.msg);
    pfvm_exec_free(e);
    pfvm_model_free(m);
    return ok;
}
#endif

static unsigned char *find(unsigned char *b, size_t n, const char *s)
{
    size_t i, k = strlen(s);
    for (i = 0; i + k <= n; i++)
        if (!memcmp(b + i, s, k))
            return b + i;
    return NULL;
}

/* Replaces the first `from` in the copy of bytes by `to` (same length);
 * the bind must fail with a message holding `msg`. */
static void check_bad(const unsigned char *bytes, size_t n, const char *from, const char *to, const char *msg)
{
    unsigned char *b = (unsigned char *)malloc(n), *at;
    pfvm_status st;
    pfvm_code rc;
    memcpy(b, bytes, n);
    at = find(b, n, from);
    CHECK_MSG(at && strlen(from) == strlen(to), "'%s' not in the plan", from);
    if (at && strlen(from) == strlen(to)) {
        memcpy(at, to, strlen(to));
        st.msg[0] = 0;
        rc = load_bind_run(b, n, input, NULL, NULL, &st);
        CHECK_MSG(rc != PFVM_OK && strstr(st.msg, msg), "'%s' -> '%s': code %d, message '%s', expected '%s'", from, to,
                  (int)rc, st.msg, msg);
    }
    free(b);
}

/* Appends protobuf field `field` holding n bytes (n < 128) to out: its size. */
static size_t pb_bytes(unsigned char *out, int field, const void *data, size_t n)
{
    out[0] = (unsigned char)(field << 3 | 2);
    out[1] = (unsigned char)n;
    memcpy(out + 2, data, n);
    return n + 2;
}

/* A NodeProto Relu(in) -> out. */
static size_t pb_relu(unsigned char *out, const char *in, const char *res)
{
    size_t n = pb_bytes(out, 1, in, strlen(in));
    n += pb_bytes(out + n, 2, res, strlen(res));
    return n + pb_bytes(out + n, 4, "Relu", 4);
}

/* Loads a model of two Relu nodes (a0 -> r0, then a1 -> r1) with graph
 * input x and output z, the GraphProto's fields in the order nodes, name,
 * input, output (the reader reads each kind in a pass of its own, so the
 * order of the kinds in the bytes does not matter), then `tail` (n_tail
 * bytes, at most 16): the load's code, st's message. */
static pfvm_code load_relus_tail(const char *a0, const char *r0, const char *a1, const char *r1, const void *tail,
                                 size_t n_tail, pfvm_status *st)
{
    unsigned char node[64], graph[256], model[320], vi[16];
    static const unsigned char opset[] = {0x10, 13}; /* version 13 */
    size_t g = 0, n = 0, k;
    pfvm_model *m;
    k = pb_relu(node, a0, r0);
    g += pb_bytes(graph + g, 1, node, k);
    k = pb_relu(node, a1, r1);
    g += pb_bytes(graph + g, 1, node, k);
    g += pb_bytes(graph + g, 2, "g", 1);
    k = pb_bytes(vi, 1, "x", 1);
    g += pb_bytes(graph + g, 11, vi, k);
    k = pb_bytes(vi, 1, "z", 1);
    g += pb_bytes(graph + g, 12, vi, k);
    memcpy(graph + g, tail, n_tail);
    g += n_tail;
    model[n++] = 0x08; /* ir_version 8 */
    model[n++] = 8;
    n += pb_bytes(model + n, 8, opset, sizeof opset);
    n += pb_bytes(model + n, 7, graph, g);
    m = pfvm_onnx_load_memory(model, n, 0, st);
    pfvm_model_free(m);
    return m ? PFVM_OK : st->code;
}

static pfvm_code load_two_relus(const char *a0, const char *r0, const char *a1, const char *r1, pfvm_status *st)
{
    return load_relus_tail(a0, r0, a1, r1, "", 0, st);
}

#ifdef STORED_PLAN_AMALGAMATED
int main(int argc, char **argv)
#else
int main(void)
#endif
{
    pfvm_status st;
    void *bytes = NULL, *plain = NULL;
    size_t size = 0, plain_size = 0, arena = 0, plan_arena = 0, i, at, len, bad = 0, good = 0;
    float out[10];
    unsigned char *b, *p;
    pfvm_model *m;

    input = pfvm_onnx_read_value_file(INPUT, PFVM_KIND_TENSOR, &st);
    CHECK_MSG(input != NULL, "%s", st.msg);
#ifdef STORED_PLAN_AMALGAMATED
    CHECK_MSG(argc == 2, "usage: test_stored_plan_device PLANNED.onnx");
    if (!input || argc != 2 || !prepare_file(argv[1], &bytes, &size, &arena))
        return CHECK_END();
    (void)plain, (void)plain_size, (void)m;
#else
    if (!input || !prepare(1, &bytes, &size, &arena) || !prepare(0, &plain, &plain_size, &arena))
        return CHECK_END();
    CHECK(find((unsigned char *)plain, plain_size, "pfvm-plan") == NULL);
#endif

    /* the stored plan: same bits, same arena, no planner */
    CHECK(find((unsigned char *)bytes, size, "pfvm-plan\t1\narena\t") != NULL);
    CHECK_MSG(!load_bind_run(bytes, size, input, out, &plan_arena, &st), "%s", st.msg);
    CHECK(!memcmp(out, expect, sizeof out));
    CHECK(plan_arena == arena);

    /* an input of another shape than the stored one */
    {
        int64_t dims[4] = {2, 1, 28, 28};
        pfvm_tensor *x2 = pfvm_tensor_new(PFVM_FLOAT, 4, dims, &st);
        CHECK(x2 && load_bind_run(bytes, size, x2, NULL, NULL, &st) != PFVM_OK && strstr(st.msg, "dimension 0"));
        pfvm_tensor_free(x2);
    }

#ifndef STORED_PLAN_AMALGAMATED
    /* pfvm_optimize drops it: the graph it describes may change */
    m = pfvm_onnx_load_memory(bytes, size, 0, &st);
    CHECK(m && !pfvm_optimize(m, NULL, NULL, &st));
    if (m) {
        void *again = NULL;
        size_t again_size = 0;
        CHECK(!pfvm_onnx_save_memory(m, &again, &again_size, &st));
        CHECK(again && !find((unsigned char *)again, again_size, "pfvm-plan"));
        pfvm_onnx_free(again);
        pfvm_model_free(m);
    }
#endif

    /* bad plans, edited in place in the saved bytes */
    b = (unsigned char *)bytes;
    check_bad(b, size, "pfvm-plan\t1", "pfvm-plan\t2", "not a 'pfvm-plan 1'");
    check_bad(b, size, "arena\t", "arenx\t", "unknown or malformed record 'arenx'");
    check_bad(b, size, "a\t256\t64\tlogits", "a\t257\t64\tlogits", "does not fit");
    check_bad(b, size, "a\t256\t64\tlogits", "a\t256\t04\tlogits", "does not fit");
    check_bad(b, size, "a\t256\t64\tlogits", "a\t256\t64\tlogitz", "no value a node of graph");
    check_bad(b, size, "a\t256\t64\tlogits", "a\t2x6\t64\tlogits", "malformed record 'a'");
    check_bad(b, size, "arena\t12288", "arena\t00100", "does not fit");
    check_bad(b, size, "a\t256\t64\tlogits\n", "a\t000\t9\t\tlogits\n", "malformed record 'a'");
    check_bad(b, size, "d\tpfvm\tFusedElementwise_1\timage\t1", "d\tpfvm\tFusedElementwise_9\timage\t1", "has no value");
    check_bad(b, size, "d\tpfvm\tFusedElementwise_1\timage\t1", "d\tpfvm\tFusedElementwise_1\timage\tx", "no element type");

#ifdef PFVM_PLANNED_ONLY
    /* a dim without a number (the last "dim_value: 1" stored, made
     * "dim_param: ''": a value_info's), which only a symbol could stand
     * for: refused when loaded */
    {
        unsigned char *c = (unsigned char *)malloc(size), *last = NULL, *q;
        memcpy(c, bytes, size);
        for (q = c; (q = find(q, size - (size_t)(q - c), "\x0a\x02\x08\x01")) != NULL; q++)
            last = q;
        CHECK(last != NULL);
        if (last) {
            last[2] = 0x12;
            last[3] = 0x00;
            m = pfvm_onnx_load_memory(c, size, 0, &st);
            CHECK_MSG(!m && st.code == PFVM_ERR_UNSUPPORTED && strstr(st.msg, "PFVM_PLANNED_ONLY"), "%s", m ? "loaded" : st.msg);
            pfvm_model_free(m);
        }
        free(c);
    }
    /* a tensor's values in a typed field (float_data) are refused, naming
     * the switch; the same value in raw_data is read */
    {
        static const unsigned char typed[] = {0x08, 0x01, 0x10, 0x01, 0x22, 0x04, 0x00, 0x00, 0x80, 0x3f};
        static const unsigned char raw[] = {0x08, 0x01, 0x10, 0x01, 0x4a, 0x04, 0x00, 0x00, 0x80, 0x3f};
        pfvm_tensor *t = pfvm_onnx_read_value(typed, sizeof typed, PFVM_KIND_TENSOR, &st);
        CHECK_MSG(!t && st.code == PFVM_ERR_UNSUPPORTED && strstr(st.msg, "PFVM_PLANNED_ONLY"), "%s", t ? "read" : st.msg);
        pfvm_tensor_free(t);
        t = pfvm_onnx_read_value(raw, sizeof raw, PFVM_KIND_TENSOR, &st);
        CHECK_MSG(t && t->dtype == PFVM_FLOAT && pfvm_tensor_numel(t) == 1 && ((const float *)t->data)[0] == 1.0f, "%s",
                  t ? "wrong value" : st.msg);
        pfvm_tensor_free(t);
    }
#endif

    /* every byte of the plan replaced: a clean error or a run, never a crash */
    p = find(b, size, "pfvm-plan\t1\n");
    at = p ? (size_t)(p - b) : size;
    for (len = 0; at + len < size && b[at + len] >= '\t' && b[at + len] < 127; len++)
        ;
    CHECK(len > 100);
    for (i = 0; i < len; i++) {
        static const char repl[] = {0, '\t', '\n', '9'};
        size_t r;
        unsigned char keep = b[at + i];
        for (r = 0; r < sizeof repl; r++) {
            if (keep == (unsigned char)repl[r])
                continue;
            b[at + i] = (unsigned char)repl[r];
            st.msg[0] = 0;
            if (load_bind_run(b, size, input, NULL, NULL, &st) != PFVM_OK) {
                bad++;
                CHECK_MSG(st.msg[0] != 0, "byte %lu of the plan as %d: an error without a message", (unsigned long)i, repl[r]);
            } else {
                good++;
            }
        }
        b[at + i] = keep;
    }
    printf("plan of %lu bytes, each byte replaced 4 ways: %lu binds refused, %lu ran\n", (unsigned long)len,
           (unsigned long)bad, (unsigned long)good);
    CHECK(bad > 0);

    /* nodes out of order: sorted by a full build; refused without inference,
     * where pfvm_graph_toposort only checks the order (planned files are in order) */
    m = pfvm_model_new(&st);
    if (m) {
        pfvm_graph *g = pfvm_graph_new(m, NULL, "g", &st);
        pfvm_value *x = g ? pfvm_graph_value(g, "x", &st) : NULL, *y = g ? pfvm_graph_value(g, "y", &st) : NULL;
        pfvm_value *z = g ? pfvm_graph_value(g, "z", &st) : NULL;
        pfvm_code rc;
        CHECK(x && y && z && !pfvm_graph_add_input(g, x, &st) && pfvm_graph_add_node(g, "Relu", "", "b", &y, 1, &z, 1, &st) &&
              pfvm_graph_add_node(g, "Relu", "", "a", &x, 1, &y, 1, &st) && !pfvm_graph_add_output(g, z, &st));
        rc = g ? pfvm_graph_toposort(g, &st) : PFVM_ERR_INVALID;
#ifdef STORED_PLAN_AMALGAMATED
        /* PFVM_PLANNED_ONLY: the verifier's message */
        CHECK_MSG(rc == PFVM_ERR_INVALID && (strstr(st.msg, "later node") || strstr(st.msg, "before it is defined")),
                  "%s", st.msg);
#else
        CHECK_MSG(rc == PFVM_OK && !strcmp(pfvm_graph_node(g, 0)->name, "a"), "%s", st.msg);
#endif
        pfvm_model_free(m);
    }

    /* the same out of order in a file: PFVM_PLANNED_ONLY checks the stored
     * order as it reads the nodes (no pass declaring outputs ahead) */
    {
        pfvm_code rc = load_two_relus("y", "z", "x", "y", &st);
#if defined(PFVM_PLANNED_ONLY)
        CHECK_MSG(rc == PFVM_ERR_INVALID && strstr(st.msg, "input 'y' is not defined by a graph input, an initializer or "
                                                           "an earlier node"),
                  "%s", rc ? st.msg : "loaded");
#elif defined(STORED_PLAN_AMALGAMATED)
        CHECK_MSG(rc == PFVM_ERR_INVALID && strstr(st.msg, "later node"), "%s", rc ? st.msg : "loaded");
#else
        CHECK_MSG(rc == PFVM_OK, "%s", st.msg);
#endif
        /* in order: loads everywhere */
        rc = load_two_relus("x", "y", "y", "z", &st);
        CHECK_MSG(rc == PFVM_OK, "%s", st.msg);
        /* a node reading its own output, two nodes making one value, a
         * node writing a graph input: refused everywhere */
        rc = load_two_relus("x", "y", "z", "z", &st);
        CHECK_MSG(rc == PFVM_ERR_INVALID, "%s", rc ? st.msg : "loaded");
        rc = load_two_relus("x", "z", "x", "z", &st);
        CHECK_MSG(rc == PFVM_ERR_INVALID && strstr(st.msg, "already defined"), "%s", rc ? st.msg : "loaded");
        rc = load_two_relus("x", "x", "x", "z", &st);
        CHECK_MSG(rc == PFVM_ERR_INVALID && strstr(st.msg, "already defined"), "%s", rc ? st.msg : "loaded");
        /* a GraphProto whose last field is cut short (a node of 100 bytes
         * with 2 left), or a graph input of the wrong wire type (a varint):
         * one parse error, whichever pass over the graph meets it */
        {
            static const unsigned char cut[] = {1 << 3 | 2, 100, 0x0a, 0x01};
            static const unsigned char bad_input[] = {11 << 3 | 0, 5};
            rc = load_relus_tail("x", "y", "y", "z", cut, sizeof cut, &st);
            CHECK_MSG(rc == PFVM_ERR_PARSE, "%s", rc ? st.msg : "loaded");
            rc = load_relus_tail("x", "y", "y", "z", bad_input, sizeof bad_input, &st);
            CHECK_MSG(rc == PFVM_ERR_PARSE, "%s", rc ? st.msg : "loaded");
        }
    }

#ifdef STORED_PLAN_AMALGAMATED
    free(bytes);
#else
    pfvm_onnx_free(bytes);
    pfvm_onnx_free(plain);
#endif
    pfvm_tensor_free(input);
    return CHECK_END();
}
