/* Threads give the same bits: each model of tests/models runs optimized
 * on one thread, then with a parallel-for (pfvm_exec_set_parallel) of 2
 * and 3 threads, a pthreads one made here, and every output must be equal
 * byte for byte. The larger CNNs must actually have split work (the hook
 * was called: products by rows and by columns, matrix-vector products,
 * depthwise planes); so must MatMuls of every path of the engine (the
 * matrix-vector loops, B read in place, rows, columns, edge tiles), and runs with threads allocate nothing (the workspace for
 * every thread is reserved at bind). Run from the repository root:
 *
 *   build/tests/test_threads [MODEL_DIR]...
 */
#include "exec/exec.h"
#include "onnx/onnx_io.h"
#include "passes/passes.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

/* ---- a parallel-for that starts its threads for each call ------------------ */

typedef struct job {
    pfvm_task_fn fn;
    void *ctx;
    int first, step, n;
} job;

static long hook_calls;

static void *run_job(void *arg)
{
    job *j = (job *)arg;
    int i;
    for (i = j->first; i < j->n; i += j->step)
        j->fn(j->ctx, i);
    return NULL;
}

static void spawn_for(void *user, int n, pfvm_task_fn fn, void *ctx)
{
    int threads = *(const int *)user, t, started = 0;
    pthread_t th[8];
    job jobs[8];
    hook_calls++;
    threads = threads < 1 ? 1 : threads > 8 ? 8 : threads;
    for (t = 0; t < threads; t++) {
        jobs[t].fn = fn;
        jobs[t].ctx = ctx;
        jobs[t].first = t;
        jobs[t].step = threads;
        jobs[t].n = n;
    }
    /* the last threads first, so that part 0 (on this thread) overlaps them */
    for (t = 1; t < threads; t++)
        if (pthread_create(&th[t], NULL, run_job, &jobs[t]) == 0)
            started = t;
        else
            break;
    for (t = started + 1; t < threads; t++) /* could not start: run here */
        run_job(&jobs[t]);
    run_job(&jobs[0]);
    for (t = 1; t <= started; t++)
        pthread_join(th[t], NULL);
}

static long calls;

static void *counting_realloc(void *user, void *p, size_t size)
{
    (void)user;
    if (size == 0) {
        free(p);
        return NULL;
    }
    calls++;
    return realloc(p, size);
}

#include "read_file.h"

/* Runs e with `threads` (1: no hook) and returns copies of its outputs. */
static pfvm_code run_copy(pfvm_exec *e, const pfvm_tensor *x, int *threads, unsigned char **out, size_t *nbytes,
                          int n_out, pfvm_status *st)
{
    pfvm_parallel par;
    int i;
    par.parallel_for = spawn_for;
    par.user = threads;
    par.threads = *threads;
    pfvm_exec_set_parallel(e, *threads > 1 ? &par : NULL);
    if (pfvm_exec_threads(e) != *threads)
        return pfvm_status_set(st, PFVM_ERR_RUNTIME, "pfvm_exec_threads says %d, not %d", pfvm_exec_threads(e), *threads);
    if (pfvm_exec_bind_one(e, x, st) || pfvm_exec_run(e, st))
        return st->code;
    /* a second run after bind must allocate nothing, threads or not */
    calls = 0;
    if (pfvm_exec_run(e, st))
        return st->code;
    if (calls)
        return pfvm_status_set(st, PFVM_ERR_RUNTIME, "a run with %d threads allocated %ld times", *threads, calls);
    for (i = 0; i < n_out; i++) {
        const pfvm_tensor *t = pfvm_exec_output(e, i);
        nbytes[i] = t->nbytes;
        if (!(out[i] = (unsigned char *)malloc(t->nbytes + 1)))
            return pfvm_status_set(st, PFVM_ERR_NOMEM, "out of memory");
        memcpy(out[i], t->data, t->nbytes);
    }
    return PFVM_OK;
}

static void check_model(const char *dir, int must_split)
{
    pfvm_allocator hook = {counting_realloc, NULL};
    char path[512];
    size_t model_n = 0, input_n = 0, nb1[4], nb[4];
    unsigned char *model, *input, *one[4] = {0}, *many[4] = {0};
    pfvm_status st;
    pfvm_model *m = NULL;
    pfvm_exec *e = NULL;
    pfvm_tensor *x = NULL;
    int threads, i, n_out = 0, t1 = 1;
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    model = read_file(path, &model_n);
    snprintf(path, sizeof path, "%s/test_data_set_0/input_0.pb", dir);
    input = read_file(path, &input_n);
    CHECK_MSG(model && input, "%s: cannot read the model or its input", dir);
    if (!model || !input)
        goto out;
    pfvm_set_allocator(&hook);
    if (!(m = pfvm_onnx_load_memory(model, model_n, 0, &st)) ||
        !(x = pfvm_onnx_read_value(input, input_n, PFVM_KIND_TENSOR, &st)) || pfvm_optimize(m, NULL, NULL, &st) ||
        !(e = pfvm_exec_new(m, NULL, &st)) || pfvm_exec_set_input_varying(e, 0, 1, &st)) {
        CHECK_MSG(0, "%s: %s", dir, st.msg);
        goto out;
    }
    n_out = pfvm_exec_num_outputs(e) < 4 ? pfvm_exec_num_outputs(e) : 4;
    CHECK_MSG(run_copy(e, x, &t1, one, nb1, n_out, &st) == PFVM_OK, "%s, 1 thread: %s", dir, st.msg);
    for (threads = 2; threads <= 3; threads++) {
        hook_calls = 0;
        if (run_copy(e, x, &threads, many, nb, n_out, &st)) {
            CHECK_MSG(0, "%s, %d threads: %s", dir, threads, st.msg);
            break;
        }
        for (i = 0; i < n_out; i++) {
            CHECK_MSG(one[i] && nb[i] == nb1[i] && !memcmp(one[i], many[i], nb[i]),
                      "%s: output %d with %d threads differs from 1 thread", dir, i, threads);
            free(many[i]);
            many[i] = NULL;
        }
        if (must_split)
            CHECK_MSG(hook_calls > 0, "%s: nothing split over %d threads", dir, threads);
        printf("%s: %d threads, %ld parallel-for calls per run, same bits\n", dir, threads, hook_calls / 2);
    }
out:
    pfvm_set_allocator(NULL);
    for (i = 0; i < 4; i++) {
        free(one[i]);
        free(many[i]);
    }
    pfvm_tensor_free(x);
    pfvm_exec_free(e);
    pfvm_model_free(m);
    free(model);
    free(input);
}

/* MatMul of two graph inputs (B not constant: the engine packs A per run
 * or reads B in place): m x k times k x n, at 1, 2 and 3 threads. */
static void check_matmul(int64_t m, int64_t k, int64_t n)
{
    pfvm_status st;
    pfvm_model *mod = pfvm_model_new(&st);
    pfvm_graph *g = mod ? pfvm_graph_new(mod, NULL, "g", &st) : NULL;
    pfvm_value *io[3];
    pfvm_exec *e = NULL;
    pfvm_tensor *in[2] = {NULL, NULL};
    int64_t da[2], db[2], i;
    unsigned char *one = NULL;
    size_t bytes = 0;
    int threads;
    da[0] = m, da[1] = k, db[0] = k, db[1] = n;
    if (!g || !(io[0] = pfvm_graph_value(g, "a", &st)) || !(io[1] = pfvm_graph_value(g, "b", &st)) ||
        !(io[2] = pfvm_graph_value(g, "c", &st)) || pfvm_model_set_opset(mod, "", 17, &st) ||
        pfvm_graph_add_input(g, io[0], &st) || pfvm_graph_add_input(g, io[1], &st) ||
        !pfvm_graph_add_node(g, "MatMul", "", "mm", io, 2, &io[2], 1, &st) || pfvm_graph_add_output(g, io[2], &st) ||
        !(in[0] = pfvm_tensor_new(PFVM_FLOAT, 2, da, &st)) || !(in[1] = pfvm_tensor_new(PFVM_FLOAT, 2, db, &st)) ||
        !(e = pfvm_exec_new(mod, NULL, &st))) {
        CHECK_MSG(0, "matmul %lldx%lldx%lld: %s", (long long)m, (long long)k, (long long)n, st.msg);
        goto out;
    }
    for (i = 0; i < m * k; i++)
        ((float *)in[0]->data)[i] = (float)((i * 7919) % 2001 - 1000) / 997.0f;
    for (i = 0; i < k * n; i++)
        ((float *)in[1]->data)[i] = (float)((i * 104729) % 1999 - 999) / 1013.0f;
    for (threads = 1; threads <= 3; threads++) {
        pfvm_parallel par;
        const pfvm_tensor *c;
        par.parallel_for = spawn_for;
        par.user = &threads;
        par.threads = threads;
        pfvm_exec_set_parallel(e, threads > 1 ? &par : NULL);
        hook_calls = 0;
        if (pfvm_exec_bind(e, (const pfvm_tensor *const *)in, 2, &st) || pfvm_exec_run(e, &st)) {
            CHECK_MSG(0, "matmul %lldx%lldx%lld, %d threads: %s", (long long)m, (long long)k, (long long)n, threads,
                      st.msg);
            break;
        }
        c = pfvm_exec_output(e, 0);
        if (threads == 1) {
            bytes = c->nbytes;
            if ((one = (unsigned char *)malloc(bytes + 1)) != NULL)
                memcpy(one, c->data, bytes);
            continue;
        }
        CHECK_MSG(one && c->nbytes == bytes && !memcmp(one, c->data, bytes),
                  "matmul %lldx%lldx%lld: %d threads differ from 1", (long long)m, (long long)k, (long long)n, threads);
        CHECK_MSG(hook_calls == 1, "matmul %lldx%lldx%lld: %ld parallel-for calls with %d threads", (long long)m,
                  (long long)k, (long long)n, hook_calls, threads);
    }
out:
    free(one);
    pfvm_tensor_free(in[0]);
    pfvm_tensor_free(in[1]);
    pfvm_exec_free(e);
    pfvm_model_free(mod);
}

/* Element-wise work, global pooling and Concat of odd shapes (not whole
 * blocks or cache lines, broadcasts by channel), plain and fused
 * (`optimize`: the fused-loop engine walks Mul+Sigmoid+Add), at 1, 2 and
 * 3 threads: the same bits, and the work is split (the hook is called). */
static void check_elementwise(int optimize)
{
    pfvm_status st;
    pfvm_model *mod = pfvm_model_new(&st);
    pfvm_graph *g = mod ? pfvm_graph_new(mod, NULL, "g", &st) : NULL;
    pfvm_value *v[8], *io[2];
    pfvm_node *cat = NULL;
    pfvm_exec *e = NULL;
    pfvm_tensor *in[3] = {NULL, NULL, NULL};
    int64_t da[4] = {1, 37, 29, 31}, db[4] = {1, 37, 1, 1}, dc[4] = {1, 11, 29, 31}, i;
    const char *names[8] = {"a", "b", "c", "mul", "sig", "sum", "gap", "cat"};
    unsigned char *one[4] = {0};
    size_t bytes[4] = {0};
    int threads, j, ok = g != NULL;
    for (j = 0; j < 8 && ok; j++)
        ok = (v[j] = pfvm_graph_value(g, names[j], &st)) != NULL;
    if (ok)
        ok = !pfvm_model_set_opset(mod, "", 17, &st) && !pfvm_graph_add_input(g, v[0], &st) &&
             !pfvm_graph_add_input(g, v[1], &st) && !pfvm_graph_add_input(g, v[2], &st);
    io[0] = v[0], io[1] = v[1];
    ok = ok && pfvm_graph_add_node(g, "Mul", "", "mul", io, 2, &v[3], 1, &st);
    ok = ok && pfvm_graph_add_node(g, "Sigmoid", "", "sig", &v[3], 1, &v[4], 1, &st);
    io[0] = v[4], io[1] = v[0];
    ok = ok && pfvm_graph_add_node(g, "Add", "", "sum", io, 2, &v[5], 1, &st);
    ok = ok && pfvm_graph_add_node(g, "GlobalAveragePool", "", "gap", &v[0], 1, &v[6], 1, &st);
    io[0] = v[0], io[1] = v[2];
    ok = ok && (cat = pfvm_graph_add_node(g, "Concat", "", "cat", io, 2, &v[7], 1, &st)) != NULL &&
         !pfvm_node_set_attr_int(cat, "axis", 1, &st);
    ok = ok && !pfvm_graph_add_output(g, v[3], &st) && !pfvm_graph_add_output(g, v[5], &st) &&
         !pfvm_graph_add_output(g, v[6], &st) && !pfvm_graph_add_output(g, v[7], &st);
    ok = ok && (in[0] = pfvm_tensor_new(PFVM_FLOAT, 4, da, &st)) && (in[1] = pfvm_tensor_new(PFVM_FLOAT, 4, db, &st)) &&
         (in[2] = pfvm_tensor_new(PFVM_FLOAT, 4, dc, &st));
    ok = ok && (!optimize || !pfvm_optimize(mod, NULL, NULL, &st)) && (e = pfvm_exec_new(mod, NULL, &st));
    if (!ok) {
        CHECK_MSG(0, "element-wise graph (optimize %d): %s", optimize, st.msg);
        goto out;
    }
    for (j = 0; j < 3; j++)
        for (i = 0; i < pfvm_tensor_numel(in[j]); i++)
            ((float *)in[j]->data)[i] = (float)((i * 7919 + j * 31) % 2001 - 1000) / 97.0f;
    for (threads = 1; threads <= 3; threads++) {
        pfvm_parallel par;
        par.parallel_for = spawn_for;
        par.user = &threads;
        par.threads = threads;
        pfvm_exec_set_parallel(e, threads > 1 ? &par : NULL);
        hook_calls = 0;
        if (pfvm_exec_bind(e, (const pfvm_tensor *const *)in, 3, &st) || pfvm_exec_run(e, &st)) {
            CHECK_MSG(0, "element-wise graph (optimize %d), %d threads: %s", optimize, threads, st.msg);
            break;
        }
        for (j = 0; j < 4; j++) {
            const pfvm_tensor *c = pfvm_exec_output(e, j);
            if (threads == 1) {
                bytes[j] = c->nbytes;
                if ((one[j] = (unsigned char *)malloc(bytes[j] + 1)) != NULL)
                    memcpy(one[j], c->data, bytes[j]);
                continue;
            }
            CHECK_MSG(one[j] && c->nbytes == bytes[j] && !memcmp(one[j], c->data, bytes[j]),
                      "element-wise graph (optimize %d): output %d with %d threads differs from 1", optimize, j,
                      threads);
        }
        if (threads > 1)
            CHECK_MSG(hook_calls >= (optimize ? 3 : 5), "element-wise graph (optimize %d): %ld parallel-for calls",
                      optimize, hook_calls);
    }
out:
    for (j = 0; j < 4; j++)
        free(one[j]);
    for (j = 0; j < 3; j++)
        pfvm_tensor_free(in[j]);
    pfvm_exec_free(e);
    pfvm_model_free(mod);
}

static void check_conv(const char *what, const int64_t *dx, const int64_t *dw, int64_t group, int stride,
                       int const_w);

/* A depthwise Conv (and its Relu) over 2 x 37 planes of 29 x 31, stride
 * `stride`, a kernel x kernel window: the split cuts the planes in groups
 * of the four-plane loops, across the batch; every plane must hold the
 * bits one thread gives. */
static void check_depthwise(int stride, int64_t kernel)
{
    int64_t dx[4] = {2, 37, 29, 31}, dw[4] = {37, 1, 0, 0};
    dw[2] = dw[3] = kernel;
    check_conv("depthwise", dx, dw, 37, stride, 0);
}

/* A squeeze-excite 1x1 Conv (and its Relu) on a 1x1 plane: one column,
 * split by rows since the tiles compute a kernel width of columns (the
 * product's work counts them). */
static void check_one_column(int64_t m, int64_t c)
{
    int64_t dx[4] = {1, 0, 1, 1}, dw[4] = {0, 0, 1, 1};
    dx[1] = dw[1] = c;
    dw[0] = m;
    check_conv("one-column 1x1", dx, dw, 1, 1, 0);
}

/* A Conv of 128 output channels on 37 x 14 x 14 with constant weights
 * (packed at bind): on AVX-512, the kernel with output channels in the
 * lanes (resnet18's layers 3 and 4), whose padded copy of the input is
 * split by channels (37: parts of 12 and 13 at three threads) before its
 * blocks of 64 channels; 3x3 at strides 1 and 2, 1x1 at stride 2. */
static void check_lanes(int64_t kernel, int stride)
{
    int64_t dx[4] = {1, 37, 14, 14}, dw[4] = {128, 37, 0, 0};
    dw[2] = dw[3] = kernel;
    check_conv("lanes", dx, dw, 1, stride, 1);
}

/* Conv (x dims dx, weights dw, `group` groups, pads 1 for a 3x3 window)
 * + Relu at 1, 2 and 3 threads: the bits of one thread, and split.
 * const_w: the weights and bias are initializers (else graph inputs). */
static void check_conv(const char *what, const int64_t *dx, const int64_t *dw, int64_t group, int stride,
                       int const_w)
{
    pfvm_status st;
    pfvm_model *mod = pfvm_model_new(&st);
    pfvm_graph *g = mod ? pfvm_graph_new(mod, NULL, "g", &st) : NULL;
    pfvm_value *v[5], *io[3];
    pfvm_node *conv = NULL;
    pfvm_exec *e = NULL;
    pfvm_tensor *in[3] = {NULL, NULL, NULL};
    int64_t db[1], pads[4] = {1, 1, 1, 1}, strides[2], i;
    const char *names[5] = {"x", "w", "b", "y", "z"};
    unsigned char *one = NULL;
    size_t bytes = 0;
    int threads, j, ok = g != NULL;
    strides[0] = strides[1] = stride;
    db[0] = dw[0];
    for (j = 0; j < 4; j++)
        pads[j] = dw[2] / 2;
    for (j = 0; j < 5 && ok; j++)
        ok = (v[j] = pfvm_graph_value(g, names[j], &st)) != NULL;
    ok = ok && !pfvm_model_set_opset(mod, "", 17, &st);
    for (j = 0; j < (const_w ? 1 : 3) && ok; j++)
        ok = !pfvm_graph_add_input(g, v[j], &st);
    io[0] = v[0], io[1] = v[1], io[2] = v[2];
    ok = ok && (conv = pfvm_graph_add_node(g, "Conv", "", "dw", io, 3, &v[3], 1, &st)) != NULL &&
         !pfvm_node_set_attr_int(conv, "group", group, &st) && !pfvm_node_set_attr_ints(conv, "pads", pads, 4, &st) &&
         !pfvm_node_set_attr_ints(conv, "strides", strides, 2, &st);
    ok = ok && pfvm_graph_add_node(g, "Relu", "", "relu", &v[3], 1, &v[4], 1, &st);
    ok = ok && !pfvm_graph_add_output(g, v[4], &st);
    ok = ok && (in[0] = pfvm_tensor_new(PFVM_FLOAT, 4, dx, &st));
    if (const_w) /* the model owns them */
        ok = ok && (in[1] = pfvm_model_tensor(mod, PFVM_FLOAT, 4, dw, NULL, &st)) &&
             (in[2] = pfvm_model_tensor(mod, PFVM_FLOAT, 1, db, NULL, &st));
    else
        ok = ok && (in[1] = pfvm_tensor_new(PFVM_FLOAT, 4, dw, &st)) && (in[2] = pfvm_tensor_new(PFVM_FLOAT, 1, db, &st));
    if (ok)
        for (j = 0; j < 3; j++)
            for (i = 0; i < pfvm_tensor_numel(in[j]); i++)
                ((float *)in[j]->data)[i] = (float)((i * 7919 + j * 31) % 2001 - 1000) / 97.0f;
    ok = ok && (!const_w || (!pfvm_graph_add_init(g, v[1], in[1], &st) && !pfvm_graph_add_init(g, v[2], in[2], &st)));
    ok = ok && !pfvm_optimize(mod, NULL, NULL, &st) && (e = pfvm_exec_new(mod, NULL, &st));
    if (!ok) {
        CHECK_MSG(0, "%s graph (stride %d): %s", what, stride, st.msg);
        goto out;
    }
    for (threads = 1; threads <= 3; threads++) {
        pfvm_parallel par;
        const pfvm_tensor *c;
        par.parallel_for = spawn_for;
        par.user = &threads;
        par.threads = threads;
        pfvm_exec_set_parallel(e, threads > 1 ? &par : NULL);
        hook_calls = 0;
        if (pfvm_exec_bind(e, (const pfvm_tensor *const *)in, const_w ? 1 : 3, &st) || pfvm_exec_run(e, &st)) {
            CHECK_MSG(0, "%s graph (stride %d), %d threads: %s", what, stride, threads, st.msg);
            break;
        }
        c = pfvm_exec_output(e, 0);
        if (threads == 1) {
            bytes = c->nbytes;
            if ((one = (unsigned char *)malloc(bytes + 1)) != NULL)
                memcpy(one, c->data, bytes);
            continue;
        }
        CHECK_MSG(one && c->nbytes == bytes && !memcmp(one, c->data, bytes),
                  "%s graph (stride %d): %d threads differ from 1", what, stride, threads);
        CHECK_MSG(hook_calls >= 1, "%s graph (stride %d), %d threads: %ld parallel-for calls", what, stride, threads,
                  hook_calls);
    }
out:
    free(one);
    for (j = 0; j < (const_w ? 1 : 3); j++)
        pfvm_tensor_free(in[j]);
    pfvm_exec_free(e);
    pfvm_model_free(mod);
}


/* Transpose of 3 x 24 x 37 x 41 (perm 2 0 3 1): the copy walk cut over
 * its outermost dim; every element where one thread puts it. */
static void check_transpose(void)
{
    pfvm_status st;
    pfvm_model *mod = pfvm_model_new(&st);
    pfvm_graph *g = mod ? pfvm_graph_new(mod, NULL, "g", &st) : NULL;
    pfvm_value *v[2];
    pfvm_node *tr = NULL;
    pfvm_exec *e = NULL;
    pfvm_tensor *x = NULL;
    int64_t dx[4] = {3, 24, 37, 41}, perm[4] = {2, 0, 3, 1}, i;
    unsigned char *one = NULL;
    size_t bytes = 0;
    int threads, ok = g != NULL;
    ok = ok && (v[0] = pfvm_graph_value(g, "x", &st)) && (v[1] = pfvm_graph_value(g, "y", &st));
    ok = ok && !pfvm_model_set_opset(mod, "", 17, &st) && !pfvm_graph_add_input(g, v[0], &st);
    ok = ok && (tr = pfvm_graph_add_node(g, "Transpose", "", "t", &v[0], 1, &v[1], 1, &st)) != NULL &&
         !pfvm_node_set_attr_ints(tr, "perm", perm, 4, &st);
    ok = ok && !pfvm_graph_add_output(g, v[1], &st) && (x = pfvm_tensor_new(PFVM_FLOAT, 4, dx, &st)) &&
         (e = pfvm_exec_new(mod, NULL, &st));
    if (!ok) {
        CHECK_MSG(0, "transpose graph: %s", st.msg);
        goto out;
    }
    for (i = 0; i < pfvm_tensor_numel(x); i++)
        ((float *)x->data)[i] = (float)i;
    for (threads = 1; threads <= 3; threads++) {
        pfvm_parallel par;
        const pfvm_tensor *c;
        par.parallel_for = spawn_for;
        par.user = &threads;
        par.threads = threads;
        pfvm_exec_set_parallel(e, threads > 1 ? &par : NULL);
        hook_calls = 0;
        if (pfvm_exec_bind(e, (const pfvm_tensor *const *)&x, 1, &st) || pfvm_exec_run(e, &st)) {
            CHECK_MSG(0, "transpose graph, %d threads: %s", threads, st.msg);
            break;
        }
        c = pfvm_exec_output(e, 0);
        if (threads == 1) {
            bytes = c->nbytes;
            CHECK_MSG(((const float *)c->data)[1] == 37.0f * 41.0f, "transpose graph: y[0,0,0,1] is %g",
                      ((const float *)c->data)[1]);
            if ((one = (unsigned char *)malloc(bytes + 1)) != NULL)
                memcpy(one, c->data, bytes);
            continue;
        }
        CHECK_MSG(one && c->nbytes == bytes && !memcmp(one, c->data, bytes),
                  "transpose graph: %d threads differ from 1", threads);
        CHECK_MSG(hook_calls >= 1, "transpose graph, %d threads: %ld parallel-for calls", threads, hook_calls);
    }
out:
    free(one);
    pfvm_tensor_free(x);
    pfvm_exec_free(e);
    pfvm_model_free(mod);
}

int main(int argc, char **argv)
{
    int i;
    if (argc > 1) {
        for (i = 1; i < argc; i++)
            check_model(argv[i], 0);
    } else {
        check_model("tests/models/cnn_small", 0); /* products too small to split */
        check_model("tests/models/cnn_stem", 1);
        check_model("tests/models/mobilenet_v2", 1);
        check_model("tests/models/resnet18", 1);
        check_model("tests/models/squeezenet1_1", 1);
        check_model("tests/models/relu_mean", 1); /* a walk with reductions, cut in groups of H x W */
        check_model("tests/models/dscnn", 1);
        check_model("tests/models/mlp_mnist", 0);
        check_model("tests/models/mlp", 0);
        check_model("tests/models/transformer_encoder", 0);
        check_model("tests/models/gpt_small", 0);
        check_matmul(2, 300, 250);   /* matrix-vector rows */
        check_matmul(12, 300, 250);  /* few rows: B read in place */
        check_matmul(100, 64, 40);   /* few columns: split by rows */
        check_matmul(300, 200, 500); /* split by columns, A packed by each part */
        check_matmul(61, 77, 333);   /* edges everywhere */
        check_elementwise(0);
        check_elementwise(1);
        check_depthwise(1, 3);
        check_depthwise(2, 3);
        check_depthwise(1, 5); /* efficientnet_b0's windows: two padding rows a side */
        check_depthwise(2, 5);
        check_one_column(48, 1152); /* efficientnet_b0's last squeeze-excite products */
        check_one_column(1152, 48);
        check_one_column(28, 672);
        check_transpose();
        check_lanes(3, 1);
        check_lanes(3, 2);
        check_lanes(1, 2);
    }
    return CHECK_END();
}
