/* Per-model allocators (issue 16): two models loaded with two counting
 * allocators, worked on interleaved (load, shape inference, optimize, bind,
 * run, free): every block is tagged with the allocator that made it, and
 * every free and resize must reach that allocator; each allocator's live
 * count is 0 once its model is freed, and the process-wide default sees
 * none of the models' allocations. Then: a model made with a zero desc
 * uses the default (and keeps it when the default changes), a standalone
 * tensor names its allocator, a model runs from a bump allocator, and
 * (with thread-local storage) two threads run two models at once. Public
 * API only. Run from the repository root:
 *
 *   build/tests/test_model_alloc
 */
#include "exec/exec.h"
#include "onnx/onnx_io.h"
#include "passes/passes.h"
#include "shape/infer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__unix__) || defined(__APPLE__)
#include <pthread.h>
#define HAVE_THREADS 1
#endif

#include "check.h"

/* A counting allocator whose blocks start with the id of the allocator
 * that made them; a free or resize of another allocator's block is
 * counted as `wrong` and leaked rather than corrupting the heap. */
typedef struct counter {
    int id;
    long allocs, frees, live, wrong;
} counter;

#define TAG 16

static void *counting_realloc(void *user, void *p, size_t size)
{
    counter *c = (counter *)user;
    unsigned char *raw = p ? (unsigned char *)p - TAG : NULL;
    if (raw) {
        int id;
        memcpy(&id, raw, sizeof id);
        if (id != c->id) {
            c->wrong++;
            return NULL;
        }
    }
    if (size == 0) {
        if (raw) {
            c->frees++;
            c->live--;
            free(raw);
        }
        return NULL;
    }
    raw = (unsigned char *)realloc(raw, size + TAG);
    if (!raw)
        return NULL;
    if (!p) {
        c->allocs++;
        c->live++;
    }
    memcpy(raw, &c->id, sizeof c->id);
    return raw + TAG;
}

static pfvm_allocator counting(counter *c, int id)
{
    pfvm_allocator a;
    memset(c, 0, sizeof *c);
    c->id = id;
    a.realloc = counting_realloc;
    a.user = c;
    return a;
}

typedef struct job {
    const char *dir;
    pfvm_allocator alloc;
    pfvm_model *m;
    pfvm_exec *e;
    const pfvm_tensor *in;
    pfvm_tensor *in_file, *expect;
    int ok;
} job;

static pfvm_tensor *read_value(const char *dir, const char *file)
{
    char path[256];
    snprintf(path, sizeof path, "%s/test_data_set_0/%s", dir, file);
    return pfvm_onnx_read_value_file(path, PFVM_KIND_TENSOR, NULL);
}

static int job_load(job *j)
{
    char path[256];
    pfvm_onnx_load_desc d;
    memset(&d, 0, sizeof d);
    d.model.allocator = j->alloc;
    snprintf(path, sizeof path, "%s/model.onnx", j->dir);
    j->m = pfvm_onnx_load_file_desc(path, &d, NULL);
    return j->m != NULL;
}

static int job_bind(job *j)
{
    j->e = pfvm_exec_new(j->m, NULL, NULL);
    return j->e && !pfvm_exec_bind(j->e, &j->in, 1, NULL);
}

static int close_to(const pfvm_tensor *a, const pfvm_tensor *b)
{
    int64_t i, n = pfvm_tensor_numel(a);
    if (!a || !b || a->dtype != PFVM_FLOAT || n != pfvm_tensor_numel(b))
        return 0;
    for (i = 0; i < n; i++)
        if (fabsf(((const float *)a->data)[i] - ((const float *)b->data)[i]) > 1e-4f)
            return 0;
    return 1;
}

static int job_run(job *j)
{
    return !pfvm_exec_run(j->e, NULL) && close_to(pfvm_exec_output(j->e, 0), j->expect);
}

static void job_free(job *j)
{
    pfvm_exec_free(j->e);
    pfvm_model_free(j->m);
    j->e = NULL;
    j->m = NULL;
}

static int job_inputs(job *j)
{
    j->in_file = read_value(j->dir, "input_0.pb");
    j->expect = read_value(j->dir, "output_0.pb");
    j->in = j->in_file;
    return j->in_file && j->expect;
}

static void test_interleaved(void)
{
    counter ca, cb, cg;
    pfvm_allocator g = counting(&cg, 3);
    job a, b;
    long g_before;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    a.dir = "tests/models/mlp";
    b.dir = "tests/models/cnn_small";
    a.alloc = counting(&ca, 1);
    b.alloc = counting(&cb, 2);
    pfvm_set_allocator(&g);
    CHECK(job_inputs(&a) && job_inputs(&b));
    g_before = cg.allocs;

    CHECK(job_load(&a));
    CHECK(job_load(&b));
    CHECK(ca.live > 0 && cb.live > 0);
    CHECK(!pfvm_infer_shapes(b.m->graph, 0, NULL));
    CHECK(!pfvm_optimize(a.m, NULL, NULL, NULL));
    CHECK(!pfvm_infer_shapes(a.m->graph, 0, NULL));
    CHECK(!pfvm_optimize(b.m, NULL, NULL, NULL));
    CHECK(job_bind(&b));
    CHECK(job_bind(&a));
    CHECK(job_run(&a));
    CHECK(job_run(&b));
    CHECK(job_run(&a));
    {
        void *bytes = NULL;
        size_t size = 0;
        long before = ca.allocs;
        /* the saved bytes come from the model's allocator */
        CHECK(!pfvm_onnx_save_memory(a.m, &bytes, &size, NULL) && size > 0);
        CHECK(ca.allocs > before);
        pfvm_onnx_free(bytes);
    }
    job_free(&a);
    CHECK_MSG(ca.live == 0, "model A leaves %ld blocks", ca.live);
    CHECK(cb.live > 0);
    CHECK(job_run(&b));
    job_free(&b);
    CHECK_MSG(cb.live == 0, "model B leaves %ld blocks", cb.live);
    CHECK_MSG(ca.wrong == 0 && cb.wrong == 0 && cg.wrong == 0, "wrong allocator: %ld %ld %ld", ca.wrong,
              cb.wrong, cg.wrong);
    CHECK_MSG(cg.allocs == g_before, "the default served %ld of the models' blocks", cg.allocs - g_before);

    pfvm_tensor_free(a.in_file);
    pfvm_tensor_free(a.expect);
    pfvm_tensor_free(b.in_file);
    pfvm_tensor_free(b.expect);
    pfvm_set_allocator(NULL);
    CHECK(cg.live == 0 && cg.wrong == 0);
}

/* A zero desc takes the default in effect when the model is made, and the
 * model keeps it after the default changes. */
static void test_default(void)
{
    counter cg, ct;
    pfvm_allocator g = counting(&cg, 4), t = counting(&ct, 5);
    pfvm_model_desc d;
    pfvm_tensor_desc td;
    pfvm_model *m;
    pfvm_tensor *x;
    int64_t dims[2] = {3, 4};
    pfvm_value *v;
    memset(&d, 0, sizeof d);
    pfvm_set_allocator(&g);
    m = pfvm_model_new_desc(&d, NULL);
    CHECK(m && cg.live > 0);
    pfvm_set_allocator(NULL);
    CHECK(m && pfvm_graph_new(m, NULL, "g", NULL));
    v = m ? pfvm_graph_value(m->graph, "x", NULL) : NULL;
    CHECK(v && !pfvm_graph_add_input(m->graph, v, NULL));
    CHECK(cg.allocs > 2);
    pfvm_model_free(m);
    CHECK(cg.live == 0 && cg.wrong == 0);

    /* a standalone tensor names its allocator */
    memset(&td, 0, sizeof td);
    td.rank = 2;
    td.dims = dims;
    td.allocator = t;
    x = pfvm_tensor_make(&td, NULL);
    CHECK(x && x->dtype == PFVM_FLOAT && pfvm_tensor_numel(x) == 12 && ct.live == 2);
    CHECK(x && ((float *)x->data)[11] == 0.0f);
    pfvm_tensor_free(x);
    CHECK(ct.live == 0 && ct.wrong == 0);
    td.rank = 1;
    td.dims = NULL;
    CHECK(!pfvm_tensor_make(&td, NULL));
}

/* A model served by a bump allocator over a static buffer: no heap. */
static void test_bump(void)
{
    static unsigned char buf[1 << 20];
    counter cg;
    pfvm_allocator g = counting(&cg, 6);
    pfvm_bump bump;
    job j;
    long g_before;
    memset(&j, 0, sizeof j);
    j.dir = "tests/models/mlp";
    pfvm_bump_init(&bump, buf, sizeof buf);
    j.alloc = pfvm_bump_allocator(&bump);
    pfvm_set_allocator(&g);
    CHECK(job_inputs(&j));
    g_before = cg.allocs;
    CHECK(job_load(&j));
    CHECK(!pfvm_optimize(j.m, NULL, NULL, NULL));
    CHECK(job_bind(&j));
    CHECK(job_run(&j));
    CHECK(bump.used > 0);
    job_free(&j);
    CHECK_MSG(cg.allocs == g_before, "the default served %ld of the bump model's blocks", cg.allocs - g_before);
    pfvm_tensor_free(j.in_file);
    pfvm_tensor_free(j.expect);
    pfvm_set_allocator(NULL);
    CHECK(cg.live == 0 && cg.wrong == 0);
}

#ifdef HAVE_THREADS
typedef struct worker {
    job j;
    counter c;
    int runs_ok;
} worker;

static void *work(void *arg)
{
    worker *w = (worker *)arg;
    int i;
    w->j.alloc = counting(&w->c, w->c.id);
    for (i = 0; i < 20; i++) {
        if (!job_load(&w->j))
            break;
        if (job_bind(&w->j) && job_run(&w->j) && job_run(&w->j))
            w->runs_ok++;
        job_free(&w->j);
    }
    return NULL;
}

static void test_threads(void)
{
    worker w[2];
    pthread_t th[2];
    int i;
    memset(w, 0, sizeof w);
    w[0].j.dir = "tests/models/mlp";
    w[1].j.dir = "tests/models/cnn_small";
    for (i = 0; i < 2; i++) {
        w[i].c.id = 10 + i;
        CHECK(job_inputs(&w[i].j));
    }
    for (i = 0; i < 2; i++)
        CHECK(pthread_create(&th[i], NULL, work, &w[i]) == 0);
    for (i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    for (i = 0; i < 2; i++) {
        CHECK_MSG(w[i].runs_ok == 20, "thread %d: %d of 20 runs", i, w[i].runs_ok);
        CHECK_MSG(w[i].c.live == 0 && w[i].c.wrong == 0 && w[i].c.allocs > 0, "thread %d: live %ld wrong %ld", i,
                  w[i].c.live, w[i].c.wrong);
        pfvm_tensor_free(w[i].j.in_file);
        pfvm_tensor_free(w[i].j.expect);
    }
}
#endif

int main(void)
{
    test_interleaved();
    test_default();
    test_bump();
#ifdef HAVE_THREADS
    test_threads();
#endif
    return CHECK_END();
}
