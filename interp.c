/* interp — pfvm's reference interpreter: one command-line program over the
 * single-file headers. See README.md and DESIGN.md for the command contract.
 *
 *   interp run MODEL [-i INPUT.pb]... [-o OUTDIR] [--quiet] [--no-opt]
 *   interp test [--known FILE] [--verbose] [--no-opt] DIR...
 *   interp shapes MODEL [--dim NAME=VALUE]...
 *   interp plan MODEL [--dim NAME=VALUE]...
 *   interp bench MODEL [-n N] [--dim NAME=VALUE]... [--no-opt | --compare | --profile | --profile-threads]
 *   interp opt MODEL -o OUT.onnx [--passes LIST] [--planned]
 *   interp grad MODEL -o OUT.onnx [--loss NAME] [--wrt NAMES] [--optimizer sgd|adam --lr X]
 *               [--recompute chen|dp [--budget BYTES|P%] [--stride S]] [--dim NAME=VALUE]...
 *   interp dot MODEL [--opt] [-o FILE]
 *   interp accel MODEL --target FILE [--dim NAME=VALUE]... [-o PROGRAM] [--onnx OUT.onnx]
 *               [--simulate [-i INPUT.pb]... [--out DIR]] [--baseline naive]
 *   interp quantize MODEL --calib DIR... -o OUT.onnx [--per-channel] [--symmetric] [--exclude NODES]
 *               [--method minmax|percentile|mse] [--percentile P] [--auto-exclude N] [--report]
 *   run, test, plan and bench: [--max-memory BYTES] (pfvm_limits_max) [--max-operations N] [--threads N]
 *
 * Errors: one line on stderr, exit status 1. */
#define _POSIX_C_SOURCE 200809L
#define PFVM_IMPLEMENTATION
#include "pfvm_onnx.h"
#include "pfvm_accel.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#if defined(__unix__) || defined(__APPLE__)
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#define INTERP_HAVE_FORK 1
#include <pthread.h>
#define INTERP_HAVE_THREADS 1
#endif

static const char *usage_text =
    "usage:\n"
    "  interp run MODEL [-i INPUT.pb]... [-o OUTDIR] [--quiet] [--no-opt]\n"
    "  interp test [--known FILE] [--atol X] [--rtol X] [--verbose] [--no-fork] [--no-opt] DIR...\n"
    "  interp shapes MODEL [--dim NAME=VALUE]...   SHAPE: [d0,d1,...], ? (unknown rank), or per case of an\n"
    "             undecided If on dims: COND ? SHAPE : SHAPE, COND being EXPR==EXPR or EXPR!=EXPR\n"
    "  interp plan MODEL [--dim NAME=VALUE]...\n"
    "  interp bench MODEL [-n N] [--dim NAME=VALUE]... [--no-opt | --compare | --profile | --profile-threads]\n"
    "             --compare: passes off and on,\n"
    "             alternating runs, with the median of the pairs' off/on ratios. Every input is fed as\n"
    "             varying data (never folded); integer inputs get valid Gather indices. --profile: then N\n"
    "             more runs timing each node, printed as ms per run by op kind (fused groups by their body)\n"
    "             --profile-threads (with --threads N): then N more runs accounting thread CPU time by op kind:\n"
    "             serial (outside parallel regions), work and critical path of the regions, the serial\n"
    "             fraction, the imbalance and the speed-up over one thread they predict for idle cores\n"
    "  interp opt MODEL -o OUT.onnx [--passes LIST] [--planned]   LIST: comma-separated pass names, or none;\n"
    "             --planned: plan for the declared input shapes and store the plan in the file (value_info and\n"
    "             metadata pfvm.plan) for pfvm built with PFVM_NO_SHAPE_INFERENCE\n"
    "  interp grad MODEL -o OUT.onnx [--loss NAME] [--wrt NAMES] [--optimizer sgd|adam --lr X]\n"
    "             [--recompute chen|dp [--budget BYTES|P%] [--stride S]] [--dim NAME=VALUE]...\n"
    "  interp dot MODEL [--opt] [-o FILE]   Graphviz: fused groups as clusters, shapes on edges\n"
    "  interp quantize MODEL --calib DIR... -o OUT.onnx [--per-channel] [--symmetric] [--exclude NODES]\n"
    "             [--method minmax|percentile|mse] [--percentile P] [--auto-exclude N] [--report]   QDQ int8 model from calibration inputs (each DIR\n"
    "             holds input_K.pb files, or folders that do)\n"
    "  interp ops                      the operator table (markdown)\n"
    "  interp ops --config MODEL... [-o FILE]   a header selecting only the operators the models use\n"
    "             (include it before pfvm.h in firmware builds)\n"
    "  interp accel MODEL --target FILE [--dim NAME=VALUE]... [-o PROGRAM] [--onnx OUT.onnx]\n"
    "             [--simulate [-i INPUT.pb]... [--out DIR]] [--baseline naive]\n"
    "             lower the model for an accelerator target (README.md, \"accel\") and report its cost;\n"
    "             --baseline naive: each node on as many PEs as its output's first axis, through DRAM;\n"
    "             --onnx writes the optimized model with every value's layout in its metadata_props;\n"
    "             --simulate runs the program and writes output_K.pb into DIR (default out);\n"
    "             the report ends with the layout planner's plan (exact search and heuristic, its cost model)\n"
    "run, test and bench optimize the model with the default passes first; --no-opt runs it as loaded.\n"
    "run, test, plan and bench take --max-memory BYTES (k, M, G: powers of 1024): no tensor, arena or\n"
    "             total of the executor's tensors may exceed it (pfvm_limits); a model that needs more fails\n"
    "             when its inputs are bound, before the arena is allocated.\n"
    "run, test, plan and bench take --max-operations N: a bind or run that counts more operations\n"
    "             (elements its kernels read and write, and sampling or contraction work) fails with an error\n"
    "             naming the node (pfvm_limits.max_run_operations); bench prints what a run counts.\n"
    "  interp bench-pool [-n N] --threads N   the pool's own cost: wall us per parallel-for (fork/join) of\n"
    "             N tasks that only wait for each other, and of N tasks of a 20 us spin beyond the spin\n"
    "run, test, plan, bench and bench-pool take --threads N: kernels split their work over N threads (a pthreads\n"
    "             pool given to pfvm_exec_set_parallel); results are the same bits as with one.\n";

static int fail(const char *fmt, const char *arg)
{
    fprintf(stderr, "interp: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n");
    return 1;
}

/* --max-memory BYTES (run, test, plan, bench): every executor's limits
 * (pfvm_limits_max); 0 when not given (the library's defaults). */
static size_t max_memory;
/* --max-operations N: the run's work budget (pfvm_limits.max_run_operations); 0: none. */
static uint64_t max_operations;

/* Parses BYTES with an optional k, M or G (powers of 1024); 0 on error. */
static size_t parse_bytes(const char *s)
{
    char *end;
    unsigned long long v, mul = 1;
    if (*s < '0' || *s > '9')
        return 0;
    errno = 0;
    v = strtoull(s, &end, 10);
    if (errno)
        return 0;
    if (*end == 'k' || *end == 'K')
        mul = 1024ull, end++;
    else if (*end == 'm' || *end == 'M')
        mul = 1024ull * 1024, end++;
    else if (*end == 'g' || *end == 'G')
        mul = 1024ull * 1024 * 1024, end++;
    if (*end || v > (unsigned long long)SIZE_MAX / mul)
        return 0;
    return (size_t)(v * mul);
}

/* ---- --threads N: a small persistent pthreads pool ---------------------------
 *
 * pfvm starts no threads; it calls the parallel-for it is given
 * (pfvm_parallel). This one keeps N-1 workers that, after a job, spin a
 * while (POOL_SPINS polls) on the job counter before they sleep on a
 * condition variable: a network posts a job per node every few
 * microseconds, and a wake-up through the kernel costs about as much as a
 * small node. The caller and the workers claim a job's tasks one by one
 * from a counter tagged with the job, so on a loaded machine the caller
 * runs the tasks of workers that have not woken up yet, and waits only for
 * tasks that have started; a late worker never runs a task of a newer job.
 *
 * --profile-threads accounts where the threads' time goes (thread CPU
 * time: what the machine's load does not change) so that a loaded
 * machine still tells what a quiet one would do with two cores. */
static int n_threads = 1;

/* ascending doubles, for qsort (the benches' medians) */
static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

#ifdef INTERP_HAVE_THREADS
#if defined(__GNUC__) || defined(__clang__)
#define POOL_LOAD(p) __atomic_load_n(p, __ATOMIC_ACQUIRE)
#define POOL_STORE(p, v) __atomic_store_n(p, v, __ATOMIC_RELEASE)
#define POOL_CAS(p, old, v) __atomic_compare_exchange_n(p, old, v, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)
#define POOL_DEC(p) __atomic_sub_fetch(p, 1, __ATOMIC_ACQ_REL)
/* the job's publication and a worker's going to sleep: each stores, then
 * loads what the other stores (sequentially consistent), so either the
 * poster sees the sleeper or the sleeper sees the job */
#define POOL_STORE_SC(p, v) __atomic_store_n(p, v, __ATOMIC_SEQ_CST)
#define POOL_LOAD_SC(p) __atomic_load_n(p, __ATOMIC_SEQ_CST)
#define POOL_INC_SC(p) __atomic_add_fetch(p, 1, __ATOMIC_SEQ_CST)
#define POOL_LINE __attribute__((aligned(64))) /* a cache line of its own */
#if defined(__x86_64__) || defined(__i386__)
#define POOL_PAUSE() __builtin_ia32_pause()
#else
#define POOL_PAUSE() ((void)0)
#endif
#define POOL_SPINS 20000 /* polls before a worker sleeps: about 100 us (a pause is ~40 cycles) */
#define POOL_MAX 256
#include <sched.h>

/* Thread CPU time and wall time in ms. */
static double thread_cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static double wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* --profile-threads: what the pool adds up while it is on. */
typedef struct tprof {
    int on;
    double task_cpu[POOL_MAX]; /* the current region's task CPU per thread (0: the caller) */
    double first_start;        /* the current region: wall time a worker first started a task (0: none) */
    /* since the last tprof_take */
    double region_caller; /* the caller's CPU inside regions (tasks, spinning, waiting) */
    double work;          /* task CPU, all threads */
    double critical;      /* the busiest thread's task CPU, per region, summed */
    double wake;          /* post to a worker's first task, wall, summed over regions a worker joined */
    int regions, woken;
} tprof;

static tprof the_tprof;

typedef struct pool {
    pthread_mutex_t mu;
    pthread_cond_t go;
    pthread_t *th;
    int *ids;
    int n, started;         /* threads (the caller included); workers started */
    /* what the threads write while a job runs, each on a line of its own:
     * the caller spinning on pending does not slow a worker's claim */
    unsigned long job POOL_LINE;      /* incremented for each job (atomic) */
    unsigned long long claim POOL_LINE; /* the job's low 32 bits << 32 | its next task (atomic) */
    int pending POOL_LINE;            /* tasks not finished (atomic) */
    int sleepers POOL_LINE;           /* workers waiting on go (atomic; changed under mu) */
    int n_tasks POOL_LINE;
    double posted;          /* wall ms the job was posted (--profile-threads) */
    pfvm_task_fn fn;
    void *ctx;
    int quit;
    pid_t owner;            /* the process that started the workers (interp test forks) */
} pool;

static pool the_pool;

/* Runs task i, claimed by thread id. */
static void pool_run_task(pool *p, int i, int id)
{
    double t0 = 0;
    if (the_tprof.on) {
        if (id && !the_tprof.first_start)
            the_tprof.first_start = wall_ms();
        t0 = thread_cpu_ms();
    }
    p->fn(p->ctx, i);
    if (the_tprof.on)
        the_tprof.task_cpu[id] += thread_cpu_ms() - t0;
    POOL_DEC(&p->pending);
}

/* Claims and runs tasks of job `job` until none is left. */
static void pool_take_tasks(pool *p, unsigned long job, int id)
{
    unsigned long long tag = (unsigned long long)(job & 0xffffffffUL) << 32;
    for (;;) {
        unsigned long long c = POOL_LOAD(&p->claim);
        if ((c & 0xffffffff00000000ULL) != tag || (int)(c & 0xffffffffULL) >= p->n_tasks)
            return;
        if (!POOL_CAS(&p->claim, &c, c + 1))
            continue;
        /* claimed: the job cannot end (nor fn change) before this task does */
        pool_run_task(p, (int)(c & 0xffffffffULL), id);
    }
}

static void *pool_main(void *arg)
{
    int id = *(int *)arg;
    pool *p = &the_pool;
    unsigned long seen = 0; /* workers start before the first job (which may be posted before they run) */
    for (;;) {
        unsigned long job;
        int spins = 0;
        while ((job = POOL_LOAD(&p->job)) == seen && !POOL_LOAD(&p->quit) && spins++ < POOL_SPINS)
            POOL_PAUSE();
        if (job == seen && !POOL_LOAD(&p->quit)) {
            pthread_mutex_lock(&p->mu);
            POOL_INC_SC(&p->sleepers);
            while ((job = POOL_LOAD_SC(&p->job)) == seen && !p->quit)
                pthread_cond_wait(&p->go, &p->mu);
            POOL_DEC(&p->sleepers);
            pthread_mutex_unlock(&p->mu);
        }
        if (POOL_LOAD(&p->quit))
            break;
        seen = job;
        pool_take_tasks(p, job, id);
    }
    return NULL;
}

/* A child of fork has only the thread that forked: its pool starts anew. */
static void pool_forked(void)
{
    the_pool.started = 0;
}

/* Starts the workers on first use in this process. 0 when it cannot. A
 * fork handler, not a getpid() per call, tells a child (a system call per
 * parallel region, 54 a run on mobilenet_v2). */
static int pool_start(pool *p)
{
    static int atfork_set;
    int i;
    if (p->started)
        return 1;
    if (!atfork_set && pthread_atfork(NULL, NULL, pool_forked))
        return 0;
    atfork_set = 1;
    memset(p, 0, sizeof *p);
    p->owner = getpid();
    if (n_threads > POOL_MAX)
        n_threads = POOL_MAX;
    if (pthread_mutex_init(&p->mu, NULL) || pthread_cond_init(&p->go, NULL) ||
        !(p->th = (pthread_t *)calloc((size_t)n_threads, sizeof *p->th)) ||
        !(p->ids = (int *)calloc((size_t)n_threads, sizeof *p->ids)))
        return 0;
    for (i = 1; i < n_threads; i++) {
        p->ids[i] = i;
        if (pthread_create(&p->th[i], NULL, pool_main, &p->ids[i]))
            break;
    }
    p->n = i; /* the threads that did start, and this one */
    p->started = 1;
    return 1;
}

/* Adds the region just finished to the_tprof. */
static void tprof_region(const pool *p, double caller_cpu0, double posted)
{
    tprof *t = &the_tprof;
    double most = 0;
    int i;
    for (i = 0; i < p->n; i++) {
        t->work += t->task_cpu[i];
        most = t->task_cpu[i] > most ? t->task_cpu[i] : most;
        t->task_cpu[i] = 0;
    }
    t->critical += most;
    t->region_caller += thread_cpu_ms() - caller_cpu0;
    t->regions++;
    if (t->first_start) {
        t->wake += t->first_start - posted;
        t->woken++;
    }
    t->first_start = 0;
}

static void pool_parallel_for(void *user, int n, pfvm_task_fn fn, void *ctx)
{
    pool *p = (pool *)user;
    unsigned long job;
    double cpu0 = 0, posted = 0;
    int i, spins = 0;
    if (n < 1)
        return;
    if (!pool_start(p) || p->n < 2) {
        for (i = 0; i < n; i++)
            fn(ctx, i);
        return;
    }
    if (the_tprof.on) {
        cpu0 = thread_cpu_ms();
        posted = wall_ms();
    }
    /* no worker reads these before the job's tag is published below */
    job = p->job + 1;
    p->fn = fn;
    p->ctx = ctx;
    p->n_tasks = n;
    POOL_STORE(&p->pending, n);
    /* task 0 is the caller's, claimed before the job is posted: the same
     * thread takes the same part of every node (with two threads the
     * worker takes task 1 unless the caller gets there first), so kernels
     * that give each part its own share of the output first (the matrix
     * engine's runs of rectangles) keep each thread's data in its core's
     * cache from node to node */
    POOL_STORE(&p->claim, (unsigned long long)(job & 0xffffffffUL) << 32 | 1);
    POOL_STORE_SC(&p->job, job);
    if (POOL_LOAD_SC(&p->sleepers)) { /* else every worker is spinning or running: no lock, no system call */
        pthread_mutex_lock(&p->mu);
        pthread_cond_broadcast(&p->go);
        pthread_mutex_unlock(&p->mu);
    }
    pool_run_task(p, 0, 0);
    pool_take_tasks(p, job, 0);
    while (POOL_LOAD(&p->pending)) /* tasks a worker started: spin, then give the core away */
        if (spins++ < POOL_SPINS)
            POOL_PAUSE();
        else
            sched_yield();
    if (the_tprof.on)
        tprof_region(p, cpu0, posted);
}

static void pool_stop(pool *p)
{
    int i;
    if (!p->started || p->owner != getpid())
        return;
    pthread_mutex_lock(&p->mu);
    POOL_STORE(&p->quit, 1);
    pthread_cond_broadcast(&p->go);
    pthread_mutex_unlock(&p->mu);
    for (i = 1; i < p->n; i++)
        pthread_join(p->th[i], NULL);
    free(p->th);
    free(p->ids);
    p->started = 0;
}

/* ---- bench-pool: what one parallel-for costs ------------------------------
 *
 * A node that splits its work pays a fork/join: posting the job, the
 * workers noticing it, and the caller seeing the last task end. This
 * times the pool alone, as wall us per parallel-for of one task per
 * thread. Empty tasks would time nothing (the caller claims them all
 * before a worker looks), so each task waits until every task of the call
 * has started (a rendezvous: only a call all the threads joined ends
 * early; after about 1 ms a task gives up and the call counts as missed),
 * and a second figure adds a spin of about 20 us per task, less that
 * spin timed alone. Each figure is the median and the smallest of the
 * means of batches (on a loaded machine the smallest is a batch that had
 * the cores). */
typedef struct pb_ctx {
    unsigned spin;           /* pause loops per task after the rendezvous */
    unsigned long arrived;   /* tasks started, all calls (atomic) */
    unsigned long target;    /* arrived at the end of this call's rendezvous */
    unsigned long missed;    /* tasks that gave up waiting (atomic) */
    volatile unsigned sink[POOL_MAX * 16];
} pb_ctx;

static void pb_spin(pb_ctx *c, int i)
{
    unsigned k, acc = 0;
    for (k = 0; k < c->spin; k++) {
        acc += k;
        POOL_PAUSE();
    }
    c->sink[i * 16] = acc; /* a cache line per task: no false sharing */
}

static void pb_task(void *ctx, int i)
{
    pb_ctx *c = (pb_ctx *)ctx;
    long polls = 0;
    __atomic_add_fetch(&c->arrived, 1, __ATOMIC_ACQ_REL);
    while (POOL_LOAD(&c->arrived) < c->target)
        if (++polls > 20000) { /* about 1 ms: the others are not coming */
            __atomic_add_fetch(&c->missed, 1, __ATOMIC_RELAXED);
            break;
        } else
            POOL_PAUSE();
    pb_spin(c, i);
}

/* Wall us per parallel-for of `tasks` tasks: *median and *least of
 * `batches` batches' means over `iters` calls. */
static void pb_time(pb_ctx *c, int tasks, int iters, int batches, double *median, double *least)
{
    double means[64];
    int b, i;
    for (b = 0; b < batches && b < 64; b++) {
        double t0 = wall_ms();
        for (i = 0; i < iters; i++) {
            c->target = POOL_LOAD(&c->arrived) + (unsigned long)tasks;
            if (tasks > 1)
                pool_parallel_for(&the_pool, tasks, pb_task, c);
            else
                pb_spin(c, 0);
        }
        means[b] = 1e3 * (wall_ms() - t0) / iters;
    }
    qsort(means, (size_t)b, sizeof means[0], cmp_double);
    *median = means[b / 2];
    *least = means[0];
}

static int cmd_bench_pool(int argc, char **argv)
{
    static pb_ctx c;
    int i, iters = 2000, batches = 15, n;
    unsigned spin = 20000;
    double med, least, one_med, one_least, t, best = 0;
    unsigned long tasks;
    for (i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "-n") && i + 1 < argc && atoi(argv[i + 1]) > 0)
            iters = atoi(argv[++i]);
        else
            return fail("bench-pool: unexpected argument '%s' (it takes -n N and --threads N)", argv[i]);
    }
    if (n_threads < 2 || !pool_start(&the_pool) || the_pool.n < 2)
        return fail("%s", "bench-pool: needs --threads 2 or more (and threads that start)");
    n = the_pool.n;
    tasks = (unsigned long)iters * (unsigned long)batches * (unsigned long)n;
    c.spin = spin; /* scaled to about 20 us: the quickest of 10 tries */
    for (i = 0; i < 10; i++) {
        t = wall_ms();
        pb_spin(&c, 0);
        t = wall_ms() - t;
        best = !i || t < best ? t : best;
    }
    spin = best > 0 ? (unsigned)(spin * (0.020 / best)) + 1 : 1000;
    printf("%d threads; wall us per parallel-for of %d tasks: median and least of %d batches' means of %d calls\n", n,
           n, batches, iters);
    c.spin = 0;
    pb_time(&c, n, iters, batches, &med, &least);
    printf("fork/join, tasks that only meet:   %9.3f median %9.3f least   (%lu of %lu tasks gave up waiting)\n", med,
           least, c.missed, tasks);
    c.spin = spin;
    c.missed = 0;
    pb_time(&c, 1, iters / 10 + 1, batches, &one_med, &one_least);
    pb_time(&c, n, iters / 10 + 1, batches, &med, &least);
    printf("with a %.1f us spin each, less it:  %9.3f median %9.3f least   (%lu of %lu tasks gave up waiting)\n",
           one_least, med - one_med, least - one_least, c.missed,
           (unsigned long)(iters / 10 + 1) * (unsigned long)batches * (unsigned long)n);
    return 0;
}
#else
#undef INTERP_HAVE_THREADS /* no atomics known to this compiler: one thread */
#endif
#endif

/* pfvm_exec_new with the limits of --max-memory and the threads of
 * --threads. */
static pfvm_exec *new_exec(pfvm_model *m, pfvm_status *st)
{
    pfvm_exec *e = pfvm_exec_new(m, NULL, st);
    if (e && (max_memory || max_operations)) {
        pfvm_limits l = max_memory ? pfvm_limits_max(max_memory) : pfvm_limits_default();
        l.max_run_operations = max_operations;
        pfvm_exec_set_limits(e, &l);
    }
#ifdef INTERP_HAVE_THREADS
    if (e && n_threads > 1) {
        pfvm_parallel par;
        par.parallel_for = pool_parallel_for;
        par.user = &the_pool;
        par.threads = n_threads;
        pfvm_exec_set_parallel(e, &par);
    }
#endif
    return e;
}

static int fail_status(const pfvm_status *st)
{
    fprintf(stderr, "interp: error: %s\n", st->msg[0] ? st->msg : pfvm_code_name(st->code));
    return 1;
}

static int is_dir(const char *p)
{
    struct stat s;
    return stat(p, &s) == 0 && S_ISDIR(s.st_mode);
}

static int is_file(const char *p)
{
    struct stat s;
    return stat(p, &s) == 0 && S_ISREG(s.st_mode);
}

/* ---- dims given on the command line ---------------------------------------- */

typedef struct dim_arg {
    const char *name;
    int64_t value;
} dim_arg;

static int parse_dim(const char *s, dim_arg *d)
{
    const char *eq = strchr(s, '=');
    char *end;
    static char names[64][128];
    static int used;
    if (!eq || eq == s || eq - s >= 128 || used >= 64)
        return 0;
    memcpy(names[used], s, (size_t)(eq - s));
    names[used][eq - s] = 0;
    d->name = names[used++];
    errno = 0;
    d->value = strtoll(eq + 1, &end, 10);
    return !errno && *end == 0 && end != eq + 1 && d->value >= 0;
}

static pfvm_code bind_dims(pfvm_model *m, const dim_arg *dims, int n, pfvm_binding *b, pfvm_status *st)
{
    int i;
    for (i = 0; i < n; i++) {
        const pfvm_sym *s = pfvm_symtab_find(m->syms, dims[i].name);
        if (!s)
            return pfvm_status_set(st, PFVM_ERR_INVALID, "--dim %s: the model has no dimension named '%s'", dims[i].name,
                              dims[i].name);
        if (pfvm_binding_set(b, s, dims[i].value, st))
            return st->code;
    }
    return PFVM_OK;
}

/* The exclusive upper bound for the values of integer input v: the size
 * of the indexed axis of every Gather whose indices it is (token ids into
 * an embedding table), 1 (all zeros, valid for any index) when nothing
 * bounds it. */
static int64_t bench_int_bound(const pfvm_value *v)
{
    const pfvm_graph *g = v->graph;
    int64_t bound = INT64_MAX;
    int i;
    for (i = 0; g && i < pfvm_graph_num_nodes(g); i++) {
        const pfvm_node *n = g->nodes[i];
        const pfvm_type *dt;
        int64_t axis;
        if (strcmp(n->op_type, "Gather") || n->n_inputs < 2 || n->inputs[1] != v || !n->inputs[0])
            continue;
        dt = &n->inputs[0]->type;
        axis = pfvm_node_attr_int(n, "axis", 0);
        if (dt->shape.rank <= 0)
            return 1;
        if (axis < 0)
            axis += dt->shape.rank;
        if (axis < 0 || axis >= dt->shape.rank || !pfvm_sym_is_const(dt->shape.dims[axis], NULL))
            return 1;
        {
            int64_t d = 0;
            pfvm_sym_is_const(dt->shape.dims[axis], &d);
            if (d < bound)
                bound = d;
        }
    }
    return bound == INT64_MAX || bound < 1 ? 1 : bound;
}

/* Fills an input tensor for timing: floating-point values in [-2, 2) (the
 * pattern bench/ort_bench.js gives onnxruntime), integers in [0, bound)
 * (bench_int_bound: valid indices), booleans and others zero. Zeros would
 * not do for floats: a calloc'd tensor that is never written maps every
 * page to the one zero page, so reading it costs no memory traffic. */
static void fill_bench_input(pfvm_tensor *t, int64_t bound)
{
    int64_t i, n = pfvm_tensor_numel(t);
    int is_f = t->dtype == PFVM_FLOAT || t->dtype == PFVM_DOUBLE || t->dtype == PFVM_FLOAT16 || t->dtype == PFVM_BFLOAT16;
    if (!is_f) {
        if (!pfvm_dtype_is_int(t->dtype) || bound <= 1)
            return;
        for (i = 0; i < n; i++) {
            int64_t x = (int64_t)(((uint64_t)i * 2654435761u) % (uint64_t)bound);
            switch (pfvm_dtype_size(t->dtype)) {
            case 8: ((int64_t *)t->data)[i] = x; break;
            case 4: ((int32_t *)t->data)[i] = (int32_t)x; break;
            case 2: ((int16_t *)t->data)[i] = (int16_t)x; break;
            default: ((int8_t *)t->data)[i] = (int8_t)x; break;
            }
        }
        return;
    }
    for (i = 0; i < n; i++) {
        float v = (float)(((uint64_t)i * 2654435761u) % 1000) / 250.0f - 2.0f;
        if (t->dtype == PFVM_FLOAT)
            ((float *)t->data)[i] = v;
        else if (t->dtype == PFVM_DOUBLE)
            ((double *)t->data)[i] = v;
        else
            ((uint16_t *)t->data)[i] = t->dtype == PFVM_FLOAT16 ? pfvm_float_to_half(v) : pfvm_float_to_bf16(v);
    }
}

/* Tensors for the graph inputs, shaped by their declared types under the
 * binding (for plan and bench), filled by fill_bench_input. With varying,
 * every input is declared varying (pfvm_exec_set_input_varying) so that
 * nothing the caller feeds is folded into the plan: a benchmark must time
 * the work a real caller's run does, never a graph folded away. */
static pfvm_code make_inputs(pfvm_exec *e, const pfvm_binding *b, int varying, pfvm_tensor ***out, pfvm_status *st)
{
    int i, n = pfvm_exec_num_inputs(e);
    pfvm_tensor **ins = (pfvm_tensor **)calloc((size_t)n + 1, sizeof *ins);
    if (!ins)
        return pfvm_status_set(st, PFVM_ERR_NOMEM, "out of memory");
    for (i = 0; i < n; i++) {
        const pfvm_value *v = pfvm_exec_input(e, i);
        int64_t dims[PFVM_MAX_RANK];
        if (v->type.kind != PFVM_KIND_TENSOR || v->type.shape.rank < 0) {
            *out = ins;
            return pfvm_status_set(st, PFVM_ERR_INVALID, "input '%s' has no declared tensor shape", v->name);
        }
        if (!pfvm_shape_eval(&v->type.shape, b, dims)) {
            char buf[256];
            pfvm_shape_print(&v->type.shape, buf, sizeof buf);
            *out = ins;
            return pfvm_status_set(st, PFVM_ERR_INVALID, "input '%s' has shape %s: give its dims with --dim NAME=VALUE",
                              v->name, buf);
        }
        ins[i] = pfvm_tensor_new(v->type.dtype ? v->type.dtype : PFVM_FLOAT, v->type.shape.rank, dims, st);
        if (!ins[i]) {
            *out = ins;
            return st->code;
        }
        fill_bench_input(ins[i], bench_int_bound(v));
        if (varying && pfvm_exec_set_input_varying(e, i, 1, st)) {
            *out = ins;
            return st->code;
        }
    }
    *out = ins;
    return PFVM_OK;
}

static void free_inputs(pfvm_tensor **ins, int n)
{
    int i;
    if (!ins)
        return;
    for (i = 0; i < n; i++)
        pfvm_tensor_free(ins[i]);
    free(ins);
}

/* ---- loading: every command that runs a model optimizes it first ------------------ */

/* Loads a model and, unless no_opt, runs the default optimization passes. */
static pfvm_model *load_model(const char *path, int no_opt, pfvm_status *st)
{
    pfvm_model *m = pfvm_onnx_load_file(path, 0, st);
    if (m && !no_opt && pfvm_optimize(m, NULL, NULL, st)) {
        pfvm_status_prefix(st, "optimizing %s", path);
        pfvm_model_free(m);
        return NULL;
    }
    return m;
}

/* ---- run ----------------------------------------------------------------------- */

static void print_summary(const char *name, const pfvm_tensor *t)
{
    char buf[256];
    int64_t i, n;
    pfvm_tensor_describe(t, buf, sizeof buf);
    printf("%s: %s", name, buf);
    if (t->kind == PFVM_KIND_TENSOR && t->dtype != PFVM_STRING && t->data) {
        n = pfvm_tensor_numel(t);
        printf(" =");
        for (i = 0; i < n && i < 8; i++) {
            if (pfvm_dtype_is_float(t->dtype))
                printf(" %.6g", pfvm_tensor_get_f64(t, i));
            else
                printf(" %lld", (long long)pfvm_tensor_get_i64(t, i));
        }
        if (n > 8)
            printf(" ...");
    }
    printf("\n");
}

static int cmd_run(int argc, char **argv)
{
    const char *model = NULL, *outdir = "out";
    const char **inputs = (const char **)calloc((size_t)argc + 1, sizeof *inputs);
    int n_in = 0, i, rc = 1, quiet = 0, no_opt = 0;
    pfvm_status st;
    pfvm_model *m = NULL;
    pfvm_exec *e = NULL;
    pfvm_tensor **ins = NULL;
    if (!inputs)
        return fail("%s", "out of memory");
    for (i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "-i") && i + 1 < argc)
            inputs[n_in++] = argv[++i];
        else if (!strcmp(argv[i], "-o") && i + 1 < argc)
            outdir = argv[++i];
        else if (!strcmp(argv[i], "--quiet"))
            quiet = 1;
        else if (!strcmp(argv[i], "--no-opt"))
            no_opt = 1;
        else if (argv[i][0] == '-' || model) {
            free(inputs);
            return fail("run: unexpected argument '%s'", argv[i]);
        } else
            model = argv[i];
    }
    if (!model) {
        free(inputs);
        return fail("%s", "run: no model given");
    }
    m = load_model(model, no_opt, &st);
    if (!m)
        goto done_status;
    e = new_exec(m, &st);
    if (!e)
        goto done_status;
    if (n_in != pfvm_exec_num_inputs(e)) {
        fprintf(stderr, "interp: run: the model takes %d inputs, %d given with -i\n", pfvm_exec_num_inputs(e), n_in);
        goto done;
    }
    ins = (pfvm_tensor **)calloc((size_t)n_in + 1, sizeof *ins);
    if (!ins)
        goto done;
    for (i = 0; i < n_in; i++) {
        ins[i] = pfvm_onnx_read_value_file(inputs[i], pfvm_exec_input(e, i)->type.kind, &st);
        if (!ins[i] || pfvm_exec_set_input(e, i, ins[i], &st)) {
            pfvm_status_prefix(&st, "%s", inputs[i]);
            goto done_status;
        }
    }
    if (pfvm_exec_bind(e, NULL, 0, &st) || pfvm_exec_run(e, &st))
        goto done_status;
    mkdir(outdir, 0777);
    if (!is_dir(outdir)) {
        fail("run: cannot create output directory '%s'", outdir);
        goto done;
    }
    for (i = 0; i < pfvm_exec_num_outputs(e); i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/output_%d.pb", outdir, i);
        if (pfvm_onnx_write_value_file(pfvm_exec_output(e, i), path, &st))
            goto done_status;
        if (!quiet)
            print_summary(pfvm_exec_output_value(e, i)->name, pfvm_exec_output(e, i));
    }
    rc = 0;
    goto done;
done_status:
    fail_status(&st);
done:
    free_inputs(ins, n_in);
    free(inputs);
    pfvm_exec_free(e);
    pfvm_model_free(m);
    return rc;
}

/* ---- test ---------------------------------------------------------------------- */

typedef struct known_entry {
    char name[256];
    int seen;
} known_entry;

typedef struct test_opts {
    known_entry *known;
    int n_known;
    int verbose;
    int fork;
    int passed, failed, skipped;
} test_opts;

static int load_known(const char *path, test_opts *o)
{
    FILE *f = fopen(path, "r");
    char line[1024];
    if (!f)
        return 0;
    while (fgets(line, sizeof line, f)) {
        char name[256];
        if (line[0] == '#' || sscanf(line, "%255s", name) != 1)
            continue;
        o->known = (known_entry *)realloc(o->known, sizeof(known_entry) * (size_t)(o->n_known + 1));
        if (!o->known) {
            fclose(f);
            return 0;
        }
        memset(&o->known[o->n_known], 0, sizeof(known_entry));
        strcpy(o->known[o->n_known].name, name);
        o->n_known++;
    }
    fclose(f);
    return 1;
}

static known_entry *find_known(test_opts *o, const char *name)
{
    int i;
    for (i = 0; i < o->n_known; i++)
        if (!strcmp(o->known[i].name, name))
            return &o->known[i];
    return NULL;
}

/* Tolerances of the ONNX backend tests (numpy's assert_allclose). */
static double test_rtol = 1e-3, test_atol = 1e-7;

static int close_enough(double a, double b)
{
    if (isnan(a) || isnan(b))
        return isnan(a) && isnan(b);
    if (isinf(a) || isinf(b))
        return a == b;
    return fabs(a - b) <= test_atol + test_rtol * fabs(b);
}

/* Compares got with expected; writes the first difference into why. With
 * shape_only (outputs of a random run), values are not compared. */
static int compare_values(const pfvm_tensor *got, const pfvm_tensor *want, int shape_only, char *why, size_t n)
{
    int64_t i, numel;
    int d;
    if (got->kind != want->kind) {
        snprintf(why, n, "kind %d, expected %d", (int)got->kind, (int)want->kind);
        return 0;
    }
    if (got->kind == PFVM_KIND_SEQUENCE || got->kind == PFVM_KIND_OPTIONAL) {
        int ng = pfvm_tensor_num_elems(got), nw = pfvm_tensor_num_elems(want);
        if (got->kind == PFVM_KIND_OPTIONAL && got->has_value != want->has_value) {
            snprintf(why, n, "optional has_value %d, expected %d", got->has_value, want->has_value);
            return 0;
        }
        if (ng != nw) {
            snprintf(why, n, "%d elements, expected %d", ng, nw);
            return 0;
        }
        for (d = 0; d < ng; d++)
            if (!compare_values(got->elems[d], want->elems[d], shape_only, why, n))
                return 0;
        return 1;
    }
    if (got->dtype != want->dtype) {
        snprintf(why, n, "type %s, expected %s", pfvm_dtype_name(got->dtype), pfvm_dtype_name(want->dtype));
        return 0;
    }
    if (got->rank != want->rank || memcmp(got->dims, want->dims, sizeof(int64_t) * (size_t)got->rank)) {
        char a[128], b[128];
        pfvm_tensor_describe(got, a, sizeof a);
        pfvm_tensor_describe(want, b, sizeof b);
        snprintf(why, n, "shape %s, expected %s", a, b);
        return 0;
    }
    numel = shape_only ? 0 : pfvm_tensor_numel(want);
    for (i = 0; i < numel; i++) {
        if (want->dtype == PFVM_STRING) {
            const char *a = ((char **)got->data)[i], *b = ((char **)want->data)[i];
            if (strcmp(a ? a : "", b ? b : "")) {
                snprintf(why, n, "element %lld is \"%.40s\", expected \"%.40s\"", (long long)i, a ? a : "",
                         b ? b : "");
                return 0;
            }
        } else if (pfvm_dtype_is_float(want->dtype)) {
            double a = pfvm_tensor_get_f64(got, i), b = pfvm_tensor_get_f64(want, i);
            if (!close_enough(a, b)) {
                snprintf(why, n, "element %lld is %.9g, expected %.9g", (long long)i, a, b);
                return 0;
            }
        } else {
            int64_t a = pfvm_tensor_get_i64(got, i), b = pfvm_tensor_get_i64(want, i);
            if (a != b) {
                snprintf(why, n, "element %lld is %lld, expected %lld", (long long)i, (long long)a, (long long)b);
                return 0;
            }
        }
    }
    return 1;
}

static int count_files(const char *dir, const char *prefix)
{
    int k = 0;
    char path[8400];
    for (;;) {
        snprintf(path, sizeof path, "%s/%s_%d.pb", dir, prefix, k);
        if (!is_file(path))
            return k;
        k++;
    }
}

/* onnx 1.12's generator writes bfloat16 test tensors as uint16 (same
 * bits): read them as what the model declares. */
static void fix_bfloat16(pfvm_tensor *t, pfvm_dtype declared)
{
    if (t && t->kind == PFVM_KIND_TENSOR && t->dtype == PFVM_UINT16 && declared == PFVM_BFLOAT16)
        t->dtype = PFVM_BFLOAT16;
}

/* Shapes inferred before running, bound to the actual input shapes, must
 * equal the shapes the run produced. Returns 0 (and says why) when a
 * resolved dim is wrong; unresolved dims are counted in *unresolved. */
static int check_inferred(const pfvm_exec *e, const pfvm_tensor *const *ins, int n_in, int *unresolved, char *why, size_t n)
{
    pfvm_binding b;
    int i, d, ok = 1;
    memset(&b, 0, sizeof b);
    for (i = 0; i < n_in; i++) {
        const pfvm_type *t = &pfvm_exec_input(e, i)->type;
        if (t->kind != PFVM_KIND_TENSOR || t->shape.rank != ins[i]->rank || ins[i]->kind != PFVM_KIND_TENSOR)
            continue;
        for (d = 0; d < t->shape.rank; d++)
            if (t->shape.dims[d]->kind == PFVM_SYM_VAR)
                pfvm_binding_set(&b, t->shape.dims[d], ins[i]->dims[d], NULL);
    }
    for (i = 0; ok && i < pfvm_exec_num_outputs(e); i++) {
        const pfvm_type *t = &pfvm_exec_output_value(e, i)->type;
        const pfvm_tensor *got = pfvm_exec_output(e, i);
        if (got->kind != PFVM_KIND_TENSOR)
            continue;
        if (t->kind != PFVM_KIND_TENSOR || t->shape.rank < 0) {
            (*unresolved)++;
            continue;
        }
        if (t->shape.rank != got->rank) {
            snprintf(why, n, "output %d: inferred rank %d, produced %d", i, t->shape.rank, got->rank);
            ok = 0;
            break;
        }
        for (d = 0; d < t->shape.rank; d++) {
            int64_t v;
            if (!pfvm_sym_eval(t->shape.dims[d], &b, &v)) {
                (*unresolved)++;
            } else if (v != got->dims[d]) {
                char buf[256];
                pfvm_shape_print(&t->shape, buf, sizeof buf);
                snprintf(why, n, "output %d: inferred shape %s gives %lld at dim %d, the run produced %lld", i, buf,
                         (long long)v, d, (long long)got->dims[d]);
                ok = 0;
                break;
            }
        }
    }
    pfvm_binding_free(&b);
    return ok;
}

static int test_unresolved; /* dims inference left open, over all cases */
static int test_no_opt;     /* --no-opt: run the cases as loaded */

/* Runs one backend test case; 1 when it passes. */
static int run_case(const char *dir, char *why, size_t n)
{
    char path[8400];
    pfvm_status st;
    pfvm_model *m;
    pfvm_exec *e;
    int set, ok = 1, i;
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    m = load_model(path, test_no_opt, &st);
    if (!m) {
        snprintf(why, n, "load: %s", st.msg);
        return 0;
    }
    /* static inference first, to check it against the run */
    if (pfvm_infer_shapes(m->graph, 0, &st)) {
        snprintf(why, n, "shape inference: %s", st.msg);
        pfvm_model_free(m);
        return 0;
    }
    e = new_exec(m, &st);
    if (!e) {
        snprintf(why, n, "%s", st.msg);
        pfvm_model_free(m);
        return 0;
    }
    /* every value's inferred shape, loop bodies at every iteration */
    pfvm_exec_check_shapes(e, 1);
    for (set = 0; ok; set++) {
        char sdir[4096];
        int n_in, n_out;
        pfvm_tensor **ins;
        snprintf(sdir, sizeof sdir, "%s/test_data_set_%d", dir, set);
        if (!is_dir(sdir))
            break;
        n_in = count_files(sdir, "input");
        n_out = count_files(sdir, "output");
        if (n_in != pfvm_exec_num_inputs(e)) {
            snprintf(why, n, "data set %d has %d inputs, the model takes %d", set, n_in, pfvm_exec_num_inputs(e));
            ok = 0;
            break;
        }
        ins = (pfvm_tensor **)calloc((size_t)n_in + 1, sizeof *ins);
        for (i = 0; ins && i < n_in && ok; i++) {
            snprintf(path, sizeof path, "%s/input_%d.pb", sdir, i);
            ins[i] = pfvm_onnx_read_value_file(path, pfvm_exec_input(e, i)->type.kind, &st);
            if (!ins[i]) {
                snprintf(why, n, "input_%d.pb: %s", i, st.msg);
                ok = 0;
            }
            fix_bfloat16(ins[i], pfvm_exec_input(e, i)->type.dtype);
        }
        if (ok && (pfvm_exec_bind(e, pfvm_tensors_const(ins), n_in, &st) || pfvm_exec_run(e, &st))) {
            snprintf(why, n, "%s", st.msg);
            ok = 0;
        }
        if (ok && !check_inferred(e, pfvm_tensors_const(ins), n_in, &test_unresolved, why, n))
            ok = 0;
        if (ok && n_out != pfvm_exec_num_outputs(e)) {
            snprintf(why, n, "data set %d has %d outputs, the model gives %d", set, n_out, pfvm_exec_num_outputs(e));
            ok = 0;
        }
        for (i = 0; ok && i < n_out; i++) {
            pfvm_tensor *want;
            snprintf(path, sizeof path, "%s/output_%d.pb", sdir, i);
            want = pfvm_onnx_read_value_file(path, pfvm_exec_output_value(e, i)->type.kind, &st);
            if (!want) {
                snprintf(why, n, "output_%d.pb: %s", i, st.msg);
                ok = 0;
                break;
            }
            fix_bfloat16(want, pfvm_exec_output(e, i)->dtype);
            if (!compare_values(pfvm_exec_output(e, i), want, pfvm_exec_was_random(e), why, n)) {
                char tmp[512];
                snprintf(tmp, sizeof tmp, "output %d (%s): %s", i, pfvm_exec_output_value(e, i)->name, why);
                snprintf(why, n, "%s", tmp);
                ok = 0;
            }
            pfvm_tensor_free(want);
        }
        free_inputs(ins, n_in);
    }
    pfvm_exec_free(e);
    pfvm_model_free(m);
    return ok;
}

/* In a child process where fork exists, so that a crash or hang in one case
 * is reported and the run goes on. */
static int run_case_isolated(const char *dir, int use_fork, char *why, size_t n)
{
#ifdef INTERP_HAVE_FORK
    if (use_fork) {
        int fds[2], status = 0;
        pid_t pid;
        ssize_t got;
        if (pipe(fds) == 0 && (pid = fork()) >= 0) {
            if (pid == 0) {
                int ok;
                char msg[1100];
                close(fds[0]);
                alarm(120);
                test_unresolved = 0; /* the child counts its own case only */
                ok = run_case(dir, why, n);
                /* the unresolved-dims count travels in front of the message */
                snprintf(msg, sizeof msg, "%10d|%s", test_unresolved, why);
                if (write(fds[1], msg, strlen(msg) + 1) < 0) {
                }
                _exit(ok ? 0 : 3);
            }
            close(fds[1]);
            got = read(fds[0], why, n - 1);
            why[got > 0 ? got : 0] = 0;
            if (got > 11 && why[10] == '|') {
                test_unresolved += atoi(why);
                memmove(why, why + 11, strlen(why + 11) + 1);
            }
            close(fds[0]);
            waitpid(pid, &status, 0);
            if (WIFEXITED(status))
                return WEXITSTATUS(status) == 0;
            snprintf(why, n, "crashed (signal %d%s)", WTERMSIG(status),
                     WTERMSIG(status) == SIGALRM ? ", timed out" : "");
            return 0;
        }
    }
#else
    (void)use_fork;
#endif
    return run_case(dir, why, n);
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void test_case(const char *dir, test_opts *o)
{
    char why[1024] = "";
    const char *name = strrchr(dir, '/');
    known_entry *k;
    int ok;
    name = name ? name + 1 : dir;
    ok = run_case_isolated(dir, o->fork, why, sizeof why);
    k = find_known(o, name);
    if (k)
        k->seen = 1;
    if (ok && !k) {
        o->passed++;
        if (o->verbose)
            printf("PASS %s\n", name);
    } else if (ok && k) {
        o->failed++;
        printf("XPASS %s: passes now; remove it from the known-failures list\n", name);
    } else if (k) {
        o->skipped++;
        if (o->verbose)
            printf("XFAIL %s: %s\n", name, why);
    } else {
        o->failed++;
        printf("FAIL %s: %s\n", name, why);
    }
    fflush(stdout);
}

static void test_dir(const char *dir, test_opts *o)
{
    char path[4096];
    DIR *d;
    struct dirent *ent;
    char **names = NULL;
    int n = 0, i;
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    if (is_file(path)) {
        test_case(dir, o);
        return;
    }
    d = opendir(dir);
    if (!d) {
        printf("FAIL %s: not a directory\n", dir);
        o->failed++;
        return;
    }
    while ((ent = readdir(d))) {
        if (ent->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "%s/%s/model.onnx", dir, ent->d_name);
        if (!is_file(path))
            continue;
        names = (char **)realloc(names, sizeof(char *) * (size_t)(n + 1));
        names[n++] = strdup(ent->d_name);
    }
    closedir(d);
    qsort(names, (size_t)n, sizeof(char *), cmp_names);
    for (i = 0; i < n; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        test_case(path, o);
        free(names[i]);
    }
    free(names);
}

static int cmd_test(int argc, char **argv)
{
    test_opts o;
    int i, n_dirs = 0;
    memset(&o, 0, sizeof o);
    o.fork = 1;
    for (i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--known") && i + 1 < argc) {
            if (!load_known(argv[++i], &o))
                return fail("test: cannot read known-failures list '%s'", argv[i]);
        } else if (!strcmp(argv[i], "--verbose")) {
            o.verbose = 1;
        } else if (!strcmp(argv[i], "--no-fork")) {
            o.fork = 0;
        } else if (!strcmp(argv[i], "--no-opt")) {
            test_no_opt = 1;
        } else if ((!strcmp(argv[i], "--atol") || !strcmp(argv[i], "--rtol")) && i + 1 < argc) {
            double v = atof(argv[i + 1]);
            if (v < 0 || v > 1)
                return fail("test: bad tolerance '%s'", argv[i + 1]);
            *(argv[i][2] == 'a' ? &test_atol : &test_rtol) = v;
            i++;
        } else if (argv[i][0] == '-') {
            return fail("test: unknown option '%s'", argv[i]);
        }
    }
    for (i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--known") || !strcmp(argv[i], "--atol") || !strcmp(argv[i], "--rtol")) {
            i++;
            continue;
        }
        if (argv[i][0] == '-')
            continue;
        test_dir(argv[i], &o);
        n_dirs++;
    }
    free(o.known);
    if (!n_dirs)
        return fail("%s", "test: no test directories given");
    printf("shape inference left %d output dims unresolved before running\n", test_unresolved);
    printf("%d passed, %d failed, %d skipped\n", o.passed, o.failed, o.skipped);
    return o.failed ? 1 : 0;
}

/* ---- shapes ------------------------------------------------------------------- */

/* One line of `interp shapes`: name, dtype, symbolic shape, and with a
 * binding the shape `bound` (the same value in the model specialized to
 * the binding, whose control flow the bound dims may have decided). */
typedef struct shape_cases2 {
    const pfvm_shape_cases *c, *c2; /* the model's and the specialized model's cases (or NULL) */
} shape_cases2;

static void print_value(const char *prefix, const pfvm_value *v, const pfvm_value *bound, const pfvm_binding *b,
                        const shape_cases2 *sc)
{
    char buf[4096];
    const pfvm_type *t = &v->type;
    printf("%s%s\t", prefix, v->name);
    if (t->kind == PFVM_KIND_TENSOR) {
        pfvm_shape_cases_print(sc->c, v, buf, sizeof buf);
        printf("%s\t%s", pfvm_dtype_name(t->dtype), buf);
        if (bound && bound->type.kind == PFVM_KIND_TENSOR) {
            int64_t dims[PFVM_MAX_RANK];
            int i;
            pfvm_shape sh;
            if (!pfvm_shape_cases_shape(sc->c2, bound, &sh)) {
                pfvm_shape_cases_print(sc->c2, bound, buf, sizeof buf);
                printf("\t= %s", buf); /* still a case form under the binding */
            } else if (pfvm_shape_eval(&sh, b, dims)) {
                printf("\t= [");
                for (i = 0; i < sh.rank; i++)
                    printf(i ? ",%lld" : "%lld", (long long)dims[i]);
                printf("]");
            } else {
                pfvm_shape_print(&sh, buf, sizeof buf);
                printf("\t= %s", buf);
            }
        }
    } else {
        pfvm_type_print(t, buf, sizeof buf);
        printf("%s\t-", buf);
    }
    printf("\n");
}

/* Prints g's values; `g2` is the same graph of the specialized model (or
 * NULL), walked in step. */
static void print_graph_shapes(const pfvm_graph *g, const char *prefix, const pfvm_graph *g2, const pfvm_binding *b,
                               const shape_cases2 *sc)
{
    int i, j, k;
#define PFVM__TWIN(arr, idx) (g2 ? g2->arr[idx] : NULL)
    for (i = 0; i < pfvm_graph_num_inputs(g); i++)
        if (!g->inputs[i]->init)
            print_value(prefix, g->inputs[i], PFVM__TWIN(inputs, i), b, sc);
    for (i = 0; i < pfvm_graph_num_nodes(g); i++) {
        const pfvm_node *n = g->nodes[i], *n2 = PFVM__TWIN(nodes, i);
        for (j = 0; j < n->n_outputs; j++)
            if (n->outputs[j])
                print_value(prefix, n->outputs[j], n2 ? n2->outputs[j] : NULL, b, sc);
        for (j = 0; j < n->n_attrs; j++) {
            const pfvm_attr *a = &n->attrs[j], *a2 = n2 ? &n2->attrs[j] : NULL;
            char sub[1024], lb[96];
            snprintf(sub, sizeof sub, "%s%s/", prefix, pfvm_node_label(n, lb, sizeof lb));
            if (a->g)
                print_graph_shapes(a->g, sub, a2 ? a2->g : NULL, b, sc);
            for (k = 0; k < (a->type == PFVM_ATTR_GRAPHS ? a->n : 0); k++)
                print_graph_shapes(a->graphs[k], sub, a2 ? a2->graphs[k] : NULL, b, sc);
        }
    }
    for (i = 0; i < pfvm_graph_num_outputs(g); i++) {
        const pfvm_value *v = g->outputs[i];
        if (!v->producer && !v->is_input)
            print_value(prefix, v, PFVM__TWIN(outputs, i), b, sc);
    }
#undef PFVM__TWIN
}

/* MODEL [--dim NAME=VALUE]...; -n N when iters is given, --no-opt when
 * no_opt is given. */
static int parse_model_and_dims(int argc, char **argv, const char **model, dim_arg *dims, int *n_dims, int *iters,
                                int *no_opt)
{
    int i;
    *model = NULL;
    *n_dims = 0;
    if (no_opt)
        *no_opt = 0;
    for (i = 0; i < argc; i++) {
        if (no_opt && !strcmp(argv[i], "--no-opt")) {
            *no_opt = 1;
            continue;
        }
        if (!strcmp(argv[i], "--dim") && i + 1 < argc) {
            if (*n_dims >= 64 || !parse_dim(argv[++i], &dims[*n_dims]))
                return fail("bad --dim '%s': expected NAME=VALUE", argv[i]), 0;
            (*n_dims)++;
        } else if (!strcmp(argv[i], "-n") && i + 1 < argc && iters) {
            *iters = atoi(argv[++i]);
            if (*iters < 1)
                return fail("bad -n '%s'", argv[i]), 0;
        } else if (argv[i][0] == '-' || *model) {
            return fail("unexpected argument '%s'", argv[i]), 0;
        } else {
            *model = argv[i];
        }
    }
    if (!*model)
        return fail("%s", "no model given"), 0;
    return 1;
}

static int cmd_shapes(int argc, char **argv)
{
    const char *model;
    dim_arg dims[64];
    int n_dims, rc = 1;
    pfvm_status st;
    pfvm_model *m, *m2 = NULL;
    pfvm_binding b;
    pfvm_shape_cases *c = NULL, *c2 = NULL;
    shape_cases2 sc;
    memset(&b, 0, sizeof b);
    if (!parse_model_and_dims(argc, argv, &model, dims, &n_dims, NULL, NULL))
        return 1;
    m = pfvm_onnx_load_file(model, 0, &st);
    if (!m)
        return fail_status(&st);
    /* shapes per case where an If on undecided dims (`T==1`) picks them */
    if (pfvm_infer_shape_cases(m->graph, &c, &st))
        goto done;
    if (n_dims) {
        /* a second copy specialized to the binding: its If conditions on
         * bound dims are decided, so shapes resolve past them */
        if (!(m2 = pfvm_onnx_load_file(model, 0, &st)) || pfvm_infer_shapes(m2->graph, 0, &st) ||
            bind_dims(m2, dims, n_dims, &b, &st) || pfvm_infer_shapes_bound(m2->graph, &b, 0, &st) ||
            pfvm_infer_shape_cases(m2->graph, &c2, &st))
            goto done;
    }
    sc.c = c;
    sc.c2 = c2;
    print_graph_shapes(m->graph, "", m2 ? m2->graph : NULL, &b, &sc);
    rc = 0;
done:
    if (rc)
        fail_status(&st);
    pfvm_shape_cases_free(c);
    pfvm_shape_cases_free(c2);
    pfvm_binding_free(&b);
    pfvm_model_free(m);
    pfvm_model_free(m2);
    return rc;
}

/* ---- plan and bench --------------------------------------------------------------- */

/* Loads, optimizes (unless no_opt) and binds the model to inputs from
 * make_inputs; varying: every input declared varying (bench). */
static pfvm_code setup_bound(const char *model, int no_opt, int varying, const dim_arg *dims, int n_dims,
                             pfvm_model **pm, pfvm_exec **pe, pfvm_tensor ***pins, pfvm_status *st)
{
    pfvm_binding b;
    pfvm_code rc;
    memset(&b, 0, sizeof b);
    *pm = load_model(model, no_opt, st);
    if (!*pm)
        return st->code;
    *pe = new_exec(*pm, st);
    if (!*pe)
        return st->code;
    rc = bind_dims(*pm, dims, n_dims, &b, st);
    if (!rc)
        rc = make_inputs(*pe, &b, varying, pins, st);
    if (!rc)
        rc = pfvm_exec_bind(*pe, pfvm_tensors_const(*pins), pfvm_exec_num_inputs(*pe), st);
    pfvm_binding_free(&b);
    return rc;
}

/* Prints an expression, and its value under b when every symbol is bound. */
static void print_sym(const pfvm_sym *x, const pfvm_binding *b)
{
    char buf[2048];
    int64_t v;
    pfvm_sym_print(x, buf, sizeof buf);
    printf("%s", buf);
    if (b && b->n && !pfvm_sym_is_const(x, NULL) && pfvm_sym_eval(x, b, &v))
        printf(" = %lld", (long long)v);
}

/* The plan as expressions of the dim symbols (valid for every binding). */
static int plan_symbolic(const char *model, const dim_arg *dims, int n_dims, int per_tensor)
{
    pfvm_status st;
    pfvm_model *m = pfvm_onnx_load_file(model, 0, &st);
    pfvm_symplan p;
    pfvm_binding b;
    int i;
    memset(&b, 0, sizeof b);
    memset(&p, 0, sizeof p);
    if (!m || pfvm_infer_shapes(m->graph, 0, &st) || bind_dims(m, dims, n_dims, &b, &st) ||
        pfvm_symplan_build(m->graph, &p, &st)) {
        pfvm_binding_free(&b);
        pfvm_model_free(m);
        return fail_status(&st);
    }
    printf("symbolic arena bytes\t");
    print_sym(p.arena, &b);
    printf("\nsymbolic peak bytes\t");
    print_sym(p.peak, &b);
    printf("\nslots\t%d for %d tensors, %d constants, %d sized at run time\n", p.n_slots, p.n_entries, p.n_constant,
           p.n_dynamic);
    for (i = 0; per_tensor && i < p.n_entries; i++) {
        const pfvm_symplan_entry *e = &p.entries[i];
        printf("%s\t", e->value->name);
        print_sym(e->bytes, NULL);
        printf(" bytes\t@");
        print_sym(e->offset, NULL);
        printf("\tlive %d..%d\n", e->first, e->last);
    }
    pfvm_symplan_free(&p);
    pfvm_binding_free(&b);
    pfvm_model_free(m);
    return 0;
}

static int cmd_plan(int argc, char **argv)
{
    const char *model;
    dim_arg dims[64];
    int n_dims, i, rc = 1;
    pfvm_status st;
    pfvm_model *m = NULL;
    pfvm_exec *e = NULL;
    pfvm_tensor **ins = NULL;
    pfvm_plan_info info;
    static const char *kinds[] = {"arena", "folded", "dynamic", "external"};
    if (!parse_model_and_dims(argc, argv, &model, dims, &n_dims, NULL, NULL))
        return 1;
    /* without a binding: the plan as expressions of the dims */
    if (!n_dims)
        return plan_symbolic(model, dims, 0, 1);
    if (setup_bound(model, 1, 0, dims, n_dims, &m, &e, &ins, &st) || pfvm_exec_plan_info(e, &info, &st)) {
        fail_status(&st);
        goto done;
    }
    printf("arena bytes\t%zu\n", info.arena_bytes);
    printf("lower bound\t%zu\n", info.lower_bound);
    printf("folded\t%d of %d nodes, %zu bytes\n", info.n_folded, info.n_nodes, info.folded_bytes);
    if (plan_symbolic(model, dims, n_dims, 0))
        goto done;
    for (i = 0; i < info.n_entries; i++) {
        const pfvm_plan_entry *pe = &info.entries[i];
        if (pe->kind == 3)
            continue;
        printf("%s\t%s\t%zu bytes", pe->value->name, kinds[pe->kind], pe->bytes);
        if (pe->kind == 0)
            printf("\t@%zu\tlive %d..%d", pe->offset, pe->first, pe->last);
        printf("\n");
    }
    rc = 0;
done:
    if (e)
        free_inputs(ins, pfvm_exec_num_inputs(e));
    pfvm_exec_free(e);
    pfvm_model_free(m);
    return rc;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Times `iters` runs of e: t[i] in ms. */
static pfvm_code time_runs(pfvm_exec *e, double *t, int iters, pfvm_status *st)
{
    int i;
    for (i = 0; i < iters; i++) {
        double t0 = now_ms();
        if (pfvm_exec_run(e, st))
            return st->code;
        t[i] = now_ms() - t0;
    }
    return PFVM_OK;
}

/* Sorts t and returns its median. */
static double median_of(double *t, int n)
{
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    return t[n / 2];
}

/* --compare: the model with the passes off and on in one process, runs
 * alternating (off-on, then on-off) so that both see the same machine
 * load; the ratio is the median of each pair's off/on, which the machine's
 * slow phases (seconds long, here up to 2x) move much less than a ratio of
 * two separate medians. */
static int bench_compare(const char *model, const dim_arg *dims, int n_dims, int iters)
{
    pfvm_status st;
    pfvm_model *m[2] = {NULL, NULL};
    pfvm_exec *e[2] = {NULL, NULL};
    pfvm_tensor **ins[2] = {NULL, NULL};
    double *t = (double *)calloc((size_t)iters * 3, sizeof *t), *r;
    int i, k, rc = 1;
    if (!t)
        return fail("%s", "bench: out of memory");
    r = t + 2 * (size_t)iters;
    for (k = 0; k < 2; k++)
        if (setup_bound(model, k == 0, 1, dims, n_dims, &m[k], &e[k], &ins[k], &st) || pfvm_exec_run(e[k], &st)) {
            fail_status(&st);
            goto done;
        }
    for (i = 0; i < iters; i++) {
        for (k = 0; k < 2; k++) {
            int side = (i & 1) ? 1 - k : k;
            if (time_runs(e[side], &t[(size_t)side * iters + i], 1, &st)) {
                fail_status(&st);
                goto done;
            }
        }
        r[i] = t[i] / t[(size_t)iters + i];
    }
    {
        double off = median_of(t, iters), on = median_of(t + iters, iters), ratio = median_of(r, iters);
        printf("off median %.3f ms (min %.3f), on median %.3f ms (min %.3f), off/on median %.2f over %d pairs\n",
               off, t[0], on, t[iters], ratio, iters);
    }
    rc = 0;
done:
    for (k = 0; k < 2; k++) {
        if (e[k])
            free_inputs(ins[k], pfvm_exec_num_inputs(e[k]));
        pfvm_exec_free(e[k]);
        pfvm_model_free(m[k]);
    }
    free(t);
    return rc;
}

/* --profile: time per op kind, taken by the executor's node hook. A fused
 * group's kind names its body ("FusedElementwise[Conv+Add+Relu]"), so the
 * epilogues stay apart from plain loops. */
typedef struct {
    char kind[96];
    int nodes;    /* nodes of this kind per run */
    double ms;    /* summed over the profiled runs */
} prof_row;

typedef struct {
    const pfvm_model *m;
    prof_row rows[256];
    int n_rows;
    int runs;
    double t0;
} prof_state;

static void prof_kind(const pfvm_model *m, const pfvm_node *n, char *buf, size_t size)
{
    const pfvm_function *f = n->domain && !strcmp(n->domain, "pfvm") ? pfvm_model_function(m, "pfvm", n->op_type) : NULL;
    size_t len;
    int i, nn;
    if (!f || strncmp(n->op_type, "FusedElementwise_", 17)) {
        snprintf(buf, size, "%s", n->op_type);
        return;
    }
    snprintf(buf, size, "FusedElementwise[");
    nn = pfvm_graph_num_nodes(f->body);
    for (i = 0; i < nn; i++) {
        len = strlen(buf);
        snprintf(buf + len, size - len, "%s%s", i ? "+" : "", pfvm_graph_node(f->body, i)->op_type);
    }
    len = strlen(buf);
    snprintf(buf + len, size - len, "]");
}

static void prof_hook(void *user, const pfvm_node *n, int done)
{
    prof_state *p = (prof_state *)user;
    char kind[96];
    int i;
    if (!done) {
        p->t0 = now_ms();
        return;
    }
    {
        double dt = now_ms() - p->t0;
        prof_kind(p->m, n, kind, sizeof kind);
        for (i = 0; i < p->n_rows && strcmp(p->rows[i].kind, kind); i++)
            ;
        if (i == p->n_rows) {
            if (p->n_rows == (int)(sizeof p->rows / sizeof p->rows[0]))
                i = p->n_rows - 1; /* the last row collects the rest */
            else {
                p->n_rows++;
                snprintf(p->rows[i].kind, sizeof p->rows[i].kind, "%s", kind);
                p->rows[i].nodes = 0;
                p->rows[i].ms = 0;
            }
        }
        if (!p->runs)
            p->rows[i].nodes++;
        p->rows[i].ms += dt;
    }
}

static int cmp_prof_row(const void *a, const void *b)
{
    double x = ((const prof_row *)a)->ms, y = ((const prof_row *)b)->ms;
    return x > y ? -1 : x < y;
}

/* Runs e iters more times with the hook on and prints ms per run by kind,
 * largest first. The hook's clock reads add a little to every node. */
static pfvm_code bench_profile(pfvm_exec *e, const pfvm_model *m, int iters, pfvm_status *st)
{
    prof_state *p = (prof_state *)calloc(1, sizeof *p);
    double total = 0;
    int i;
    if (!p)
        return PFVM_ERR_NOMEM;
    p->m = m;
    pfvm_exec_set_node_hook(e, prof_hook, p);
    for (i = 0; i < iters; i++, p->runs++)
        if (pfvm_exec_run(e, st)) {
            pfvm_exec_set_node_hook(e, NULL, NULL);
            free(p);
            return st->code;
        }
    pfvm_exec_set_node_hook(e, NULL, NULL);
    qsort(p->rows, (size_t)p->n_rows, sizeof p->rows[0], cmp_prof_row);
    for (i = 0; i < p->n_rows; i++)
        total += p->rows[i].ms;
    printf("profile over %d runs: ms per run by op kind (nodes per run)\n", iters);
    for (i = 0; i < p->n_rows; i++)
        printf("%10.3f ms %5.1f%% %4d  %s\n", p->rows[i].ms / iters, total > 0 ? 100 * p->rows[i].ms / total : 0,
               p->rows[i].nodes, p->rows[i].kind);
    printf("%10.3f ms total in kernels\n", total / iters);
    free(p);
    return PFVM_OK;
}

#ifdef INTERP_HAVE_THREADS
/* --profile-threads: thread CPU per run by op kind, from the node hook and
 * the pool's counters. serial: the calling thread outside parallel regions;
 * work: tasks' CPU on every thread; critical: the busiest thread's task CPU
 * per region, summed. */
typedef struct {
    char kind[96];
    int nodes, regions, unsplit; /* per run; unsplit: nodes that opened no region */
    double serial, work, critical;
} tprof_row;

/* one node of the run, by its place in the run order */
typedef struct {
    const pfvm_node *node;
    double serial, work, critical;
    int regions;
} tprof_node;

#define TPROF_NODES 1024
#define TPROF_TOP 12 /* nodes listed by serial time */

typedef struct {
    const pfvm_model *m;
    tprof_row rows[256];
    tprof_node nodes[TPROF_NODES];
    int n_rows, runs, seq, n_nodes;
    double cpu0, region_caller0, work0, critical0, in_nodes;
    int regions0;
} tprof_state;

static void tprof_hook(void *user, const pfvm_node *n, int done)
{
    tprof_state *s = (tprof_state *)user;
    const tprof *t = &the_tprof;
    char kind[96];
    double cpu;
    int i;
    if (!done) {
        s->region_caller0 = t->region_caller;
        s->work0 = t->work;
        s->critical0 = t->critical;
        s->regions0 = t->regions;
        s->cpu0 = thread_cpu_ms();
        return;
    }
    cpu = thread_cpu_ms() - s->cpu0;
    s->in_nodes += cpu;
    prof_kind(s->m, n, kind, sizeof kind);
    for (i = 0; i < s->n_rows && strcmp(s->rows[i].kind, kind); i++)
        ;
    if (i == s->n_rows) {
        if (s->n_rows == (int)(sizeof s->rows / sizeof s->rows[0]))
            i = s->n_rows - 1; /* the last row collects the rest */
        else {
            s->n_rows++;
            memset(&s->rows[i], 0, sizeof s->rows[i]);
            snprintf(s->rows[i].kind, sizeof s->rows[i].kind, "%s", kind);
        }
    }
    if (!s->runs) {
        s->rows[i].nodes++;
        s->rows[i].regions += t->regions - s->regions0;
        s->rows[i].unsplit += t->regions == s->regions0;
    }
    s->rows[i].serial += cpu - (t->region_caller - s->region_caller0);
    s->rows[i].work += t->work - s->work0;
    s->rows[i].critical += t->critical - s->critical0;
    if (s->seq < TPROF_NODES) { /* the same node at the same place in every run */
        tprof_node *d = &s->nodes[s->seq++];
        d->node = n;
        d->serial += cpu - (t->region_caller - s->region_caller0);
        d->work += t->work - s->work0;
        d->critical += t->critical - s->critical0;
        d->regions += t->regions - s->regions0;
        s->n_nodes = s->seq > s->n_nodes ? s->seq : s->n_nodes;
    }
}

static int cmp_tprof_node(const void *a, const void *b)
{
    double u = ((const tprof_node *)a)->serial, v = ((const tprof_node *)b)->serial;
    return u > v ? -1 : u < v;
}

static int cmp_tprof_row(const void *a, const void *b)
{
    const tprof_row *x = (const tprof_row *)a, *y = (const tprof_row *)b;
    double u = x->serial + x->critical, v = y->serial + y->critical;
    return u > v ? -1 : u < v;
}

/* Runs e iters more times with the pool's accounting on and prints where
 * the threads' time goes, and the speed-up over one thread that it
 * predicts for a machine with `threads` idle cores. */
static pfvm_code bench_profile_threads(pfvm_exec *e, const pfvm_model *m, int iters, pfvm_status *st)
{
    tprof_state *s = (tprof_state *)calloc(1, sizeof *s);
    tprof *t = &the_tprof;
    double run_cpu = 0, serial = 0, work, critical, between, sr, one, two;
    int i, threads = pfvm_exec_threads(e);
    if (!s)
        return PFVM_ERR_NOMEM;
    s->m = m;
    memset(t, 0, sizeof *t);
    t->on = 1;
    pfvm_exec_set_node_hook(e, tprof_hook, s);
    for (i = 0; i < iters; i++, s->runs++) {
        double c0 = thread_cpu_ms();
        s->seq = 0;
        if (pfvm_exec_run(e, st))
            break;
        run_cpu += thread_cpu_ms() - c0;
    }
    pfvm_exec_set_node_hook(e, NULL, NULL);
    t->on = 0;
    if (i < iters) {
        free(s);
        return st->code;
    }
    qsort(s->rows, (size_t)s->n_rows, sizeof s->rows[0], cmp_tprof_row);
    printf("thread accounting over %d runs, %d threads: thread CPU ms per run by op kind\n", iters, threads);
    printf("%9s %9s %9s %7s %5s %7s  %s\n", "serial", "work", "critical", "regions", "nodes", "unsplit", "kind");
    for (i = 0; i < s->n_rows; i++) {
        const tprof_row *r = &s->rows[i];
        serial += r->serial;
        printf("%9.3f %9.3f %9.3f %7d %5d %7d  %s\n", r->serial / iters, r->work / iters, r->critical / iters,
               r->regions, r->nodes, r->unsplit, r->kind);
    }
    between = run_cpu - s->in_nodes; /* the executor between kernels, and the hook itself */
    printf("%9.3f %9s %9s %7s %5s %7s  (between nodes: executor and hook)\n", between / iters, "", "", "", "", "");
    serial = (serial + between) / iters;
    work = t->work / iters;
    critical = t->critical / iters;
    sr = serial + work > 0 ? serial / (serial + work) : 1;
    one = serial + work;
    two = serial + critical;
    printf("serial %.3f ms, parallel work %.3f ms in %d regions per run (mean %.1f us), critical %.3f ms\n", serial,
           work, t->regions / iters, t->regions ? 1e3 * t->work / t->regions : 0.0, critical);
    printf("serial fraction %.3f, imbalance (critical x threads / work) %.3f\n", sr,
           work > 0 ? critical * threads / work : 1.0);
    printf("predicted speed-up over one thread on idle cores: %.2f (Amdahl with this serial fraction, perfect "
           "balance: %.2f)\n",
           two > 0 ? one / two : 1.0, 1 / (sr + (1 - sr) / threads));
    printf("wake-up: post to a worker's first task %.1f us mean, worker joined %d of %d regions\n",
           t->woken ? 1e3 * t->wake / t->woken : 0.0, t->woken, t->regions);
    /* where the serial time sits, node by node (the names say which layer) */
    qsort(s->nodes, (size_t)s->n_nodes, sizeof s->nodes[0], cmp_tprof_node);
    printf("largest serial time by node (us per run): serial, work, critical, regions, node (op)\n");
    for (i = 0; i < s->n_nodes && i < TPROF_TOP; i++) {
        const tprof_node *d = &s->nodes[i];
        char kind[96];
        prof_kind(m, d->node, kind, sizeof kind);
        printf("%9.1f %9.1f %9.1f %7d  %s (%s)\n", 1e3 * d->serial / iters, 1e3 * d->work / iters,
               1e3 * d->critical / iters, d->regions / iters, d->node->name ? d->node->name : "?", kind);
    }
    free(s);
    return PFVM_OK;
}
#endif

static int cmd_bench(int argc, char **argv)
{
    const char *model;
    dim_arg dims[64];
    int n_dims, i, j, iters = 10, rc = 1, no_opt = 0, compare = 0, profile = 0, profile_threads = 0;
    pfvm_status st;
    pfvm_model *m = NULL;
    pfvm_exec *e = NULL;
    pfvm_tensor **ins = NULL;
    double *t = NULL;
    for (i = j = 0; i < argc; i++) /* --compare, then the common options */
        if (!strcmp(argv[i], "--compare"))
            compare = 1;
        else if (!strcmp(argv[i], "--profile"))
            profile = 1;
        else if (!strcmp(argv[i], "--profile-threads"))
            profile_threads = 1;
        else
            argv[j++] = argv[i];
    if (!parse_model_and_dims(j, argv, &model, dims, &n_dims, &iters, &no_opt))
        return 1;
    if (compare && no_opt)
        return fail("%s", "bench: --compare runs both ways; leave out --no-opt");
    if (compare && (profile || profile_threads))
        return fail("%s", "bench: --profile and --profile-threads time one way; leave out --compare");
#ifndef INTERP_HAVE_THREADS
    if (profile_threads)
        return fail("%s", "--profile-threads: this build of interp has no threads");
#endif
    if (compare)
        return bench_compare(model, dims, n_dims, iters);
    if (setup_bound(model, no_opt, 1, dims, n_dims, &m, &e, &ins, &st) || pfvm_exec_run(e, &st)) {
        fail_status(&st);
        goto done;
    }
    t = (double *)calloc((size_t)iters, sizeof *t);
    if (t && time_runs(e, t, iters, &st)) {
        fail_status(&st);
        goto done;
    }
    if (t) {
        double med = median_of(t, iters);
        pfvm_plan_info info;
        printf("median %.3f ms over %d runs (min %.3f, max %.3f)\n", med, iters, t[0], t[iters - 1]);
        if (pfvm_exec_plan_info(e, &info, &st)) {
            fail_status(&st);
            goto done;
        }
        printf("%d of %d nodes run, %d folded at plan time\n", info.n_nodes - info.n_folded, info.n_nodes,
               info.n_folded);
        printf("%llu operations per run (--max-operations)\n", (unsigned long long)pfvm_exec_operations(e));
        if (profile && bench_profile(e, m, iters, &st)) {
            fail_status(&st);
            goto done;
        }
#ifdef INTERP_HAVE_THREADS
        if (profile_threads && bench_profile_threads(e, m, iters, &st)) {
            fail_status(&st);
            goto done;
        }
#endif
    }
    rc = 0;
done:
    free(t);
    if (e)
        free_inputs(ins, pfvm_exec_num_inputs(e));
    pfvm_exec_free(e);
    pfvm_model_free(m);
    return rc;
}

/* ---- opt: load, transform, save ------------------------------------------------ */

static void print_opt_report(const pfvm_opt_report *r)
{
    int i;
    fprintf(stderr, "%-10s %8s %8s %8s %9s %6s %14s\n", "pass", "before", "after", "removed", "rewritten", "groups",
            "bytes avoided");
    for (i = 0; i < r->n; i++) {
        const pfvm_pass_stats *s = &r->runs[i].stats;
        fprintf(stderr, "%-10s %8d %8d %8d %9d %6d %14lld\n", r->runs[i].name, s->nodes_before, s->nodes_after,
                s->removed, s->rewritten, s->groups, (long long)s->bytes_avoided);
    }
}

/* --planned: plans for the model's declared input shapes (zero inputs,
 * held varying so that nothing folds on their contents) and stores the
 * plan in m (pfvm_exec_store_plan). */
static pfvm_code store_plan(pfvm_model *m, pfvm_status *st)
{
    pfvm_binding b;
    pfvm_tensor **ins = NULL;
    pfvm_exec *e = pfvm_exec_new(m, NULL, st);
    pfvm_code rc;
    memset(&b, 0, sizeof b);
    if (!e)
        return st->code;
    rc = make_inputs(e, &b, 1, &ins, st);
    if (!rc)
        rc = pfvm_exec_bind(e, pfvm_tensors_const(ins), pfvm_exec_num_inputs(e), st);
    if (!rc)
        rc = pfvm_exec_store_plan(e, st);
    if (ins)
        free_inputs(ins, pfvm_exec_num_inputs(e));
    pfvm_exec_free(e);
    return rc;
}

static int cmd_opt(int argc, char **argv)
{
    const char *model = NULL, *out = NULL, *passes = NULL;
    int i, rc = 1, quiet = 0, planned = 0;
    pfvm_status st;
    pfvm_model *m;
    pfvm_opt_report report;
    for (i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "-o") && i + 1 < argc)
            out = argv[++i];
        else if (!strcmp(argv[i], "--planned"))
            planned = 1;
        else if (!strcmp(argv[i], "--passes") && i + 1 < argc)
            passes = argv[++i];
        else if (!strcmp(argv[i], "--quiet"))
            quiet = 1;
        else if (argv[i][0] == '-' || model)
            return fail("opt: unexpected argument '%s'", argv[i]);
        else
            model = argv[i];
    }
    if (!model || !out)
        return fail("%s", "opt: usage: interp opt MODEL -o OUT.onnx [--passes LIST] [--planned]");
    m = pfvm_onnx_load_file(model, 0, &st);
    if (!m)
        return fail_status(&st);
    if (pfvm_optimize(m, passes, &report, &st) || (planned && store_plan(m, &st)) || pfvm_onnx_save_file(m, out, &st)) {
        fail_status(&st);
    } else {
        if (!quiet)
            print_opt_report(&report);
        rc = 0;
    }
    pfvm_model_free(m);
    return rc;
}

/* ---- quantize: post-training static quantization ------------------------------------ */

typedef struct calib_sets {
    pfvm_tensor **t; /* n * k tensors */
    int n, k, cap;
} calib_sets;

/* Reads DIR/input_0.pb ... DIR/input_{k-1}.pb as one set. */
static int calib_read_set(calib_sets *c, const char *dir, pfvm_exec *e, pfvm_status *st)
{
    int i;
    if (c->n == c->cap) {
        int cap = c->cap ? 2 * c->cap : 16;
        pfvm_tensor **t = (pfvm_tensor **)realloc(c->t, (size_t)cap * (size_t)c->k * sizeof *t);
        if (!t)
            return fail("%s", "out of memory");
        c->t = t;
        c->cap = cap;
    }
    for (i = 0; i < c->k; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/input_%d.pb", dir, i);
        c->t[c->n * c->k + i] = pfvm_onnx_read_value_file(path, pfvm_exec_input(e, i)->type.kind, st);
        if (!c->t[c->n * c->k + i]) {
            pfvm_status_prefix(st, "%s", path);
            while (--i >= 0)
                pfvm_tensor_free(c->t[c->n * c->k + i]);
            return fail_status(st);
        }
    }
    c->n++;
    return 0;
}

/* A DIR holding input_0.pb is one set; otherwise each of its subfolders
 * that holds one is (the layout of the ONNX test data sets). */
static int calib_read_dir(calib_sets *c, const char *dir, pfvm_exec *e, pfvm_status *st)
{
    char path[4096], **names = NULL;
    DIR *d;
    struct dirent *de;
    int n = 0, i, rc = 0;
    snprintf(path, sizeof path, "%s/input_0.pb", dir);
    if (is_file(path))
        return calib_read_set(c, dir, e, st);
    if (!(d = opendir(dir)))
        return fail("quantize: cannot read calibration folder '%s'", dir);
    while ((de = readdir(d)) != NULL) {
        char **nn;
        snprintf(path, sizeof path, "%s/%s/input_0.pb", dir, de->d_name);
        if (de->d_name[0] == '.' || !is_file(path))
            continue;
        if (!(nn = (char **)realloc(names, (size_t)(n + 1) * sizeof *names)) || !(nn[n] = strdup(de->d_name))) {
            names = nn ? nn : names;
            rc = fail("%s", "out of memory");
            break;
        }
        names = nn;
        n++;
    }
    closedir(d);
    if (!rc && n == 0)
        rc = fail("quantize: '%s' holds no input_0.pb, nor folders that do", dir);
    if (names)
        qsort(names, (size_t)n, sizeof *names, cmp_names);
    for (i = 0; i < n; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        if (!rc)
            rc = calib_read_set(c, path, e, st);
        free(names[i]);
    }
    free(names);
    return rc;
}

/* pfvm_quantize's sensitivity report, to stderr */
static void quant_log(void *ctx, const char *line)
{
    (void)ctx;
    fprintf(stderr, "quantize: %s\n", line);
}

static int cmd_quantize(int argc, char **argv)
{
    const char *model = NULL, *out = NULL, **dirs = (const char **)calloc((size_t)argc + 1, sizeof *dirs);
    int n_dirs = 0, i, rc = 1, in_calib = 0;
    pfvm_quant_options opt;
    pfvm_quant_report rep;
    pfvm_status st;
    pfvm_model *m = NULL;
    pfvm_exec *e = NULL;
    calib_sets c;
    memset(&opt, 0, sizeof opt);
    memset(&c, 0, sizeof c);
    if (!dirs)
        return fail("%s", "out of memory");
    for (i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--calib"))
            in_calib = 1;
        else if (!strcmp(argv[i], "-o") && i + 1 < argc)
            out = argv[++i], in_calib = 0;
        else if (!strcmp(argv[i], "--per-channel"))
            opt.per_channel = 1, in_calib = 0;
        else if (!strcmp(argv[i], "--symmetric"))
            opt.symmetric = 1, in_calib = 0;
        else if (!strcmp(argv[i], "--exclude") && i + 1 < argc)
            opt.exclude = argv[++i], in_calib = 0;
        else if (!strcmp(argv[i], "--auto-exclude") && i + 1 < argc)
            opt.auto_exclude = atoi(argv[++i]), in_calib = 0;
        else if (!strcmp(argv[i], "--report"))
            opt.log = quant_log, in_calib = 0;
        else if (!strcmp(argv[i], "--percentile") && i + 1 < argc)
            opt.percentile = atof(argv[++i]), in_calib = 0;
        else if (!strcmp(argv[i], "--method") && i + 1 < argc) {
            const char *mth = argv[++i];
            in_calib = 0;
            if (!strcmp(mth, "minmax"))
                opt.method = PFVM_QUANT_MINMAX;
            else if (!strcmp(mth, "percentile"))
                opt.method = PFVM_QUANT_PERCENTILE;
            else if (!strcmp(mth, "mse"))
                opt.method = PFVM_QUANT_MSE;
            else {
                free(dirs);
                return fail("quantize: unknown --method '%s' (minmax, percentile or mse)", mth);
            }
        } else if (argv[i][0] == '-' || (model && !in_calib)) {
            free(dirs);
            return fail("quantize: unexpected argument '%s'", argv[i]);
        } else if (in_calib)
            dirs[n_dirs++] = argv[i];
        else
            model = argv[i];
    }
    if (!model || !out || !n_dirs) {
        free(dirs);
        return fail("%s", "quantize: usage: interp quantize MODEL --calib DIR... -o OUT.onnx [--per-channel] "
                          "[--symmetric] [--exclude NODES] [--method minmax|percentile|mse] [--percentile P] "
                          "[--auto-exclude N] [--report]");
    }
    /* the passes without fusion: quantizable nodes stay plain ONNX ones */
    if (!(m = pfvm_onnx_load_file(model, 0, &st)) || pfvm_optimize(m, "fold,simplify,cse,bnfold,dce", NULL, &st) ||
        !(e = new_exec(m, &st)))
        goto done_status;
    c.k = pfvm_exec_num_inputs(e);
    for (i = 0; i < n_dirs; i++)
        if (calib_read_dir(&c, dirs[i], e, &st))
            goto done;
    pfvm_exec_free(e);
    e = NULL;
    if (pfvm_quantize(m, pfvm_tensors_const(c.t), c.n, &opt, &rep, &st) ||
        pfvm_optimize(m, "dce", NULL, &st) || pfvm_onnx_save_file(m, out, &st))
        goto done_status;
    fprintf(stderr, "quantize: %d calibration sets; %d nodes quantized, %d activations, %d weights, %d biases", c.n,
            rep.nodes, rep.activations, rep.weights, rep.biases);
    if (opt.auto_exclude > 0 || opt.log)
        fprintf(stderr, "; %d activations left float; outputs %.1f dB SQNR", rep.excluded, rep.out_sqnr_db);
    fprintf(stderr, "\n");
    rc = 0;
    goto done;
done_status:
    fail_status(&st);
done:
    for (i = 0; i < c.n * c.k; i++)
        pfvm_tensor_free(c.t[i]);
    free(c.t);
    free(dirs);
    pfvm_exec_free(e);
    pfvm_model_free(m);
    return rc;
}

/* ---- grad: the training graph ------------------------------------------------------ */

static void print_bytes(const char *label, double bytes)
{
    printf("%s%.0f bytes (%.2f MB)", label, bytes, bytes / 1048576.0);
}

/* Plans (and applies) recomputation on the training graph m made with
 * res, and prints what it did. `budget` is bytes, or "P%" of the peak
 * without recomputation. */
static pfvm_code grad_recompute(pfvm_model *m, const pfvm_autodiff_result *res, const char *policy,
                                const char *budget, int stride, const pfvm_binding *b, pfvm_status *st)
{
    pfvm_recompute_opts ro;
    pfvm_recompute_report rep;
    char *end;
    double v;
    memset(&ro, 0, sizeof ro);
    ro.n_forward = res->n_forward;
    ro.binding = b;
    ro.stride = stride;
    if (!strcmp(policy, "chen"))
        ro.policy = PFVM_RECOMPUTE_CHEN;
    else if (!strcmp(policy, "dp"))
        ro.policy = PFVM_RECOMPUTE_DP;
    else if (strcmp(policy, "none"))
        return pfvm_status_set(st, PFVM_ERR_INVALID, "--recompute '%s': expected chen, dp or none", policy);
    if (budget) {
        v = strtod(budget, &end);
        if (end == budget || !(v > 0) || (*end && strcmp(end, "%")))
            return pfvm_status_set(st, PFVM_ERR_INVALID, "--budget '%s': expected bytes or a percentage like 50%%", budget);
        if (*end) { /* a share of the peak without recomputation */
            pfvm_recompute_opts probe = ro;
            probe.policy = PFVM_RECOMPUTE_NONE;
            probe.flags = PFVM_RECOMPUTE_PLAN_ONLY;
            if (pfvm_recompute(m, NULL, &probe, &rep, st))
                return st->code;
            v = rep.peak_before * v / 100.0;
        }
        ro.budget = v;
    }
    if (pfvm_recompute(m, NULL, &ro, &rep, st))
        return st->code;
    printf("recompute (%s): %d cuts, %d kept, %d forward nodes recomputed\n", policy, rep.n_cuts, rep.n_kept,
           rep.n_recomputed);
    print_bytes("  peak ", rep.peak_before);
    print_bytes(" -> ", rep.peak_after);
    if (ro.budget > 0)
        printf(", budget %.0f bytes: %s", ro.budget, rep.within_budget ? "within" : "NOT within (the smallest peak found)");
    if (rep.n_slices)
        printf("\n  the input segment's backward pass runs in %d channel slices (no plan of the graph as it was fit)",
               rep.n_slices);
    if (rep.n_moved) {
        printf("\n  %d backward nodes (weight-gradient chains) moved to the end: peak without recomputation ",
               rep.n_moved);
        print_bytes("", rep.peak_reordered);
    }
    printf("\n  operations: forward %.4g, training step %.4g, recomputed %.4g (%.1f%% of the forward pass)\n",
           rep.flops_forward, rep.flops_total, rep.extra_flops,
           rep.flops_forward > 0 ? 100.0 * rep.extra_flops / rep.flops_forward : 0.0);
    if (rep.peak_expr) {
        char buf[512];
        pfvm_sym_print(rep.peak_expr, buf, sizeof buf);
        printf("  peak as an expression of the dims: %s bytes\n", buf);
    }
    return PFVM_OK;
}

/* Writes the model with its backward graph: outputs are the original ones,
 * then `<p>_grad` for every parameter p (the floating-point initializers,
 * or the --wrt names), then with --optimizer the updated parameters (and
 * Adam's state). Without --loss, every floating-point output y gets a seed
 * input `<y>_grad`. With --recompute, activations are dropped and
 * recomputed in the backward pass (src/passes/recompute.h). */
static int cmd_grad(int argc, char **argv)
{
    const char *model = NULL, *out = NULL, *loss = NULL, *wrt_arg = NULL, *optimizer = NULL, *lr_arg = NULL;
    const char *policy = NULL, *budget = NULL;
    const char *wrt[256];
    char *wrt_buf = NULL;
    int i, n_wrt = 0, rc = 1, stride = 0, n_dims = 0;
    dim_arg dims[64];
    pfvm_binding b;
    pfvm_status st;
    pfvm_model *m = NULL;
    pfvm_autodiff_opts o;
    pfvm_autodiff_result res;
    pfvm_optimizer_opts oo;
    memset(&b, 0, sizeof b);
    for (i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--recompute") && i + 1 < argc)
            policy = argv[++i];
        else if (!strcmp(argv[i], "--budget") && i + 1 < argc)
            budget = argv[++i];
        else if (!strcmp(argv[i], "--stride") && i + 1 < argc) {
            stride = atoi(argv[++i]);
            if (stride < 1)
                return fail("grad: bad --stride '%s'", argv[i]);
        } else if (!strcmp(argv[i], "--dim") && i + 1 < argc) {
            if (n_dims >= 64 || !parse_dim(argv[++i], &dims[n_dims]))
                return fail("grad: bad --dim '%s': expected NAME=VALUE", argv[i]);
            n_dims++;
        } else if (!strcmp(argv[i], "-o") && i + 1 < argc)
            out = argv[++i];
        else if (!strcmp(argv[i], "--loss") && i + 1 < argc)
            loss = argv[++i];
        else if (!strcmp(argv[i], "--wrt") && i + 1 < argc)
            wrt_arg = argv[++i];
        else if (!strcmp(argv[i], "--optimizer") && i + 1 < argc)
            optimizer = argv[++i];
        else if (!strcmp(argv[i], "--lr") && i + 1 < argc)
            lr_arg = argv[++i];
        else if (argv[i][0] == '-' || model)
            return fail("grad: unexpected argument '%s'", argv[i]);
        else
            model = argv[i];
    }
    if (!model || !out)
        return fail("%s", "grad: usage: interp grad MODEL -o OUT.onnx [--loss NAME] [--wrt NAMES] "
                          "[--optimizer sgd|adam --lr X] [--recompute chen|dp [--budget BYTES|P%] [--stride S]] "
                          "[--dim NAME=VALUE]...");
    if ((budget || stride) && !policy)
        return fail("%s", "grad: --budget and --stride need --recompute");
    memset(&oo, 0, sizeof oo);
    if (optimizer) {
        char *end;
        if (!strcmp(optimizer, "sgd"))
            oo.kind = PFVM_OPTIMIZER_SGD;
        else if (!strcmp(optimizer, "adam"))
            oo.kind = PFVM_OPTIMIZER_ADAM;
        else
            return fail("grad: unknown optimizer '%s' (sgd or adam)", optimizer);
        if (!lr_arg)
            return fail("%s", "grad: --optimizer needs --lr X");
        oo.lr = strtod(lr_arg, &end);
        if (*end || end == lr_arg || !(oo.lr > 0))
            return fail("grad: --lr '%s' is not a positive number", lr_arg);
    } else if (lr_arg) {
        return fail("%s", "grad: --lr needs --optimizer");
    }
    memset(&o, 0, sizeof o);
    o.loss = loss;
    if (wrt_arg) {
        char *s;
        wrt_buf = (char *)malloc(strlen(wrt_arg) + 1);
        if (!wrt_buf)
            return fail("%s", "out of memory");
        strcpy(wrt_buf, wrt_arg);
        for (s = wrt_buf; s && *s && n_wrt < 256;) {
            char *e = strchr(s, ',');
            if (e)
                *e = 0;
            if (*s)
                wrt[n_wrt++] = s;
            s = e ? e + 1 : NULL;
        }
        o.wrt = wrt;
        o.n_wrt = n_wrt;
    }
    m = pfvm_onnx_load_file(model, 0, &st);
    if (!m) {
        free(wrt_buf);
        return fail_status(&st);
    }
    if (pfvm_autodiff(m, NULL, &o, &res, &st) || (optimizer && pfvm_autodiff_optimizer(m, NULL, &res, &oo, &st))) {
        fail_status(&st);
        goto done;
    }
    printf("%d gradients (%d zero: the outputs do not depend on them), %d backward nodes\n", res.n_wrt,
           res.n_unreachable, pfvm_graph_num_nodes(m->graph) - res.n_forward);
    if ((policy && (bind_dims(m, dims, n_dims, &b, &st) || grad_recompute(m, &res, policy, budget, stride, &b, &st))) ||
        pfvm_onnx_save_file(m, out, &st)) {
        fail_status(&st);
        goto done;
    }
    rc = 0;
done:
    pfvm_binding_free(&b);
    free(wrt_buf);
    pfvm_model_free(m);
    return rc;
}

/* ---- dot: the graph as Graphviz ------------------------------------------------ */

static void dot_str(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        if (*s == '"' || *s == '\\')
            fputc('\\', f);
        if (*s == '\n')
            fputs("\\n", f);
        else
            fputc(*s, f);
    }
}

/* The body of a call of a model-local function (a fused group), or NULL. */
static const pfvm_graph *dot_body(const pfvm_node *n)
{
    const pfvm_function *fn = pfvm_model_function(n->graph->model, n->domain, n->op_type);
    return fn && !pfvm_op_find(n->domain, n->op_type, n->opset ? n->opset : 1) ? fn->body : NULL;
}

/* Writes the dot id of what makes v (a value of the main graph): its
 * producer, the node inside a group that computes it, or the input. */
static void dot_source(FILE *f, const pfvm_value *v)
{
    const pfvm_node *p = v->producer;
    const pfvm_graph *body;
    int j;
    if (!p) {
        fprintf(f, "v%d", v->id);
        return;
    }
    if ((body = dot_body(p)) != NULL) {
        for (j = 0; j < p->n_outputs && j < pfvm_graph_num_outputs(body); j++)
            if (p->outputs[j] == v) {
                const pfvm_value *bv = body->outputs[j];
                int k;
                if (bv->producer) {
                    fprintf(f, "n%d_%d", p->id, bv->producer->id);
                    return;
                }
                for (k = 0; k < pfvm_graph_num_inputs(body) && k < p->n_inputs; k++)
                    if (body->inputs[k] == bv && p->inputs[k]) {
                        dot_source(f, p->inputs[k]);
                        return;
                    }
            }
    }
    fprintf(f, "n%d", p->id);
}

static void dot_edge_label(FILE *f, const pfvm_value *v)
{
    char buf[512];
    pfvm_type_print(&v->type, buf, sizeof buf);
    fprintf(f, " [label=\"");
    dot_str(f, buf);
    fprintf(f, "\"];\n");
}

static void dot_graph(FILE *f, const pfvm_graph *g)
{
    int i, j, k;
    fprintf(f, "digraph \"");
    dot_str(f, g->name);
    fprintf(f, "\" {\n  rankdir=TB;\n  node [fontname=\"Helvetica\", fontsize=10];\n"
               "  edge [fontname=\"Helvetica\", fontsize=8];\n");
    for (i = 0; i < pfvm_graph_num_inputs(g); i++) {
        const pfvm_value *v = g->inputs[i];
        fprintf(f, "  v%d [shape=%s, label=\"", v->id, v->init ? "note, style=filled, fillcolor=gray90" : "ellipse");
        dot_str(f, v->name);
        fprintf(f, "\"];\n");
    }
    for (i = 0; i < pfvm_graph_num_initializers(g); i++) {
        const pfvm_value *v = g->inits[i];
        int listed = 0;
        for (k = 0; k < pfvm_graph_num_inputs(g); k++)
            listed |= g->inputs[k] == v;
        if (listed)
            continue;
        fprintf(f, "  v%d [shape=note, style=filled, fillcolor=gray90, label=\"", v->id);
        dot_str(f, v->name);
        fprintf(f, "\"];\n");
    }
    for (i = 0; i < pfvm_graph_num_nodes(g); i++) {
        const pfvm_node *n = g->nodes[i];
        const pfvm_graph *body = dot_body(n);
        if (!body) {
            fprintf(f, "  n%d [shape=box, label=\"", i);
            dot_str(f, n->op_type);
            fprintf(f, "\\n");
            dot_str(f, n->name);
            fprintf(f, "\"];\n");
            for (j = 0; j < n->n_inputs; j++)
                if (n->inputs[j] && n->inputs[j]->graph == g) {
                    fprintf(f, "  ");
                    dot_source(f, n->inputs[j]);
                    fprintf(f, " -> n%d", i);
                    dot_edge_label(f, n->inputs[j]);
                }
            continue;
        }
        /* a fused group: its nodes in a cluster */
        fprintf(f, "  subgraph cluster_%d {\n    style=filled; fillcolor=\"#eef4ff\"; label=\"", i);
        dot_str(f, n->domain);
        fprintf(f, ".");
        dot_str(f, n->op_type);
        fprintf(f, "\";\n");
        for (k = 0; k < pfvm_graph_num_nodes(body); k++) {
            const pfvm_node *b = body->nodes[k];
            fprintf(f, "    n%d_%d [shape=box, style=filled, fillcolor=white, label=\"", i, k);
            dot_str(f, b->op_type);
            fprintf(f, "\\n");
            dot_str(f, b->name);
            fprintf(f, "\"];\n");
        }
        fprintf(f, "  }\n");
        for (k = 0; k < pfvm_graph_num_nodes(body); k++) {
            const pfvm_node *b = body->nodes[k];
            for (j = 0; j < b->n_inputs; j++) {
                const pfvm_value *bv = b->inputs[j];
                int m2, found = 0;
                if (!bv)
                    continue;
                if (bv->producer) {
                    fprintf(f, "  n%d_%d -> n%d_%d", i, bv->producer->id, i, k);
                    dot_edge_label(f, bv);
                    continue;
                }
                for (m2 = 0; !found && m2 < pfvm_graph_num_inputs(body) && m2 < n->n_inputs; m2++)
                    if (body->inputs[m2] == bv && n->inputs[m2] && n->inputs[m2]->graph == g) {
                        fprintf(f, "  ");
                        dot_source(f, n->inputs[m2]);
                        fprintf(f, " -> n%d_%d", i, k);
                        dot_edge_label(f, n->inputs[m2]);
                        found = 1;
                    }
            }
        }
    }
    for (i = 0; i < pfvm_graph_num_outputs(g); i++) {
        const pfvm_value *v = g->outputs[i];
        fprintf(f, "  out%d [shape=ellipse, style=bold, label=\"", i);
        dot_str(f, v->name);
        fprintf(f, "\"];\n  ");
        dot_source(f, v);
        fprintf(f, " -> out%d", i);
        dot_edge_label(f, v);
    }
    fprintf(f, "}\n");
}

static int cmd_dot(int argc, char **argv)
{
    const char *model = NULL, *out = NULL;
    int i, opt = 0, rc = 1;
    pfvm_status st;
    pfvm_model *m;
    FILE *f = stdout;
    for (i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "-o") && i + 1 < argc)
            out = argv[++i];
        else if (!strcmp(argv[i], "--opt"))
            opt = 1;
        else if (argv[i][0] == '-' || model)
            return fail("dot: unexpected argument '%s'", argv[i]);
        else
            model = argv[i];
    }
    if (!model)
        return fail("%s", "dot: usage: interp dot MODEL [--opt] [-o FILE]");
    m = load_model(model, !opt, &st);
    if (!m)
        return fail_status(&st);
    if (pfvm_graph_toposort(m->graph, &st) || pfvm_graph_resolve_ops(m->graph, 0, &st) ||
        pfvm_infer_shapes(m->graph, 0, &st)) {
        fail_status(&st);
    } else if (out && !(f = fopen(out, "w"))) {
        fail("dot: cannot write '%s'", out);
    } else {
        dot_graph(f, m->graph);
        rc = ferror(f) ? fail("dot: cannot write '%s'", out ? out : "stdout") : 0;
        if (out && fclose(f))
            rc = fail("dot: cannot write '%s'", out);
    }
    pfvm_model_free(m);
    return rc;
}

/* ---- ops: the operator table, from the registry -------------------------------- */

/* What the selection header keeps beside the operators' names: the
 * definitions the models use (each with its kernel variants,
 * pfvm_op_def.variants) and the variant macros some node needs. */
typedef struct ops_used {
    const pfvm_op_def *defs[512];
    const char *needed[256];
    int n_defs, n_needed;
} ops_used;

/* The value that v stands for: through the parameters of the function
 * bodies being walked (caller: the calling node, up to depth levels). */
static const pfvm_value *ops_actual(const pfvm_value *v, const pfvm_node *const *caller, int depth)
{
    int i;
    while (v && depth > 0 && caller[depth - 1]) {
        const pfvm_node *c = caller[depth - 1];
        const pfvm_graph *body = v->graph;
        for (i = 0; i < pfvm_graph_num_inputs(body) && pfvm_graph_input(body, i) != v; i++) {
        }
        if (i == pfvm_graph_num_inputs(body))
            return v;
        v = i < c->n_inputs ? c->inputs[i] : NULL;
        depth--;
    }
    return v;
}

static int ops_has(const char *const *list, int n, const char *s)
{
    int i;
    for (i = 0; i < n && strcmp(list[i], s); i++) {
    }
    return i < n;
}

/* Records node nd's definition and the variants of it that nd needs. */
static void ops_note_node(const pfvm_model *m, const pfvm_node *nd, ops_used *u, const pfvm_node *const *caller,
                          int depth)
{
    const pfvm_value *in[64];
    const pfvm_op_def *d = nd->op ? nd->op : pfvm_op_find(nd->domain, nd->op_type, pfvm_model_opset(m, nd->domain));
    const pfvm_op_variant *v;
    int i;
    if (!d)
        return;
    for (i = 0; i < u->n_defs && u->defs[i] != d; i++) {
    }
    if (i == u->n_defs && u->n_defs < 512)
        u->defs[u->n_defs++] = d;
    for (i = 0; i < nd->n_inputs && i < 64; i++)
        in[i] = ops_actual(nd->inputs[i], caller, depth);
    for (v = d->variants; v && v->macro; v++)
        if (!ops_has(u->needed, u->n_needed, v->macro) && u->n_needed < 256 && (nd->n_inputs > 64 || v->needed(nd, in)))
            u->needed[u->n_needed++] = v->macro;
}

/* Operator names a graph uses (its nodes, subgraphs and the bodies of the
 * model-local functions it calls: fused groups), appended to names[] once,
 * and their definitions and the kernel variants they need. caller[d]: the node whose function
 * body is walked at depth d + 1 (NULL for a subgraph). */
static void collect_ops(const pfvm_model *m, const pfvm_graph *g, const char **names, int *n, int cap,
                        ops_used *u, const pfvm_node **caller, int depth)
{
    int i, j, k;
    if (depth > 16)
        return;
    for (i = 0; i < pfvm_graph_num_nodes(g); i++) {
        const pfvm_node *nd = pfvm_graph_node(g, i);
        const pfvm_function *f = pfvm_model_function(m, nd->domain, nd->op_type);
        for (k = 0; k < *n && strcmp(names[k], nd->op_type); k++) {
        }
        if (k == *n && *n < cap && !f)
            names[(*n)++] = nd->op_type;
        if (!f)
            ops_note_node(m, nd, u, caller, depth);
        caller[depth] = nd;
        if (f && f->body)
            collect_ops(m, f->body, names, n, cap, u, caller, depth + 1);
        caller[depth] = NULL;
        for (j = 0; j < nd->n_attrs; j++) {
            const pfvm_attr *a = &nd->attrs[j];
            if (a->type == PFVM_ATTR_GRAPH && a->g)
                collect_ops(m, a->g, names, n, cap, u, caller, depth + 1);
            for (k = 0; a->type == PFVM_ATTR_GRAPHS && k < a->n; k++)
                collect_ops(m, a->graphs[k], names, n, cap, u, caller, depth + 1);
        }
    }
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* interp ops --config MODEL... [-o FILE]: the operator-selection header
 * for firmware builds (PFVM_OPS_SELECTED, PFVM_OP_<Name> 1 each). */
static int cmd_ops_config(int argc, char **argv)
{
    const char *names[512], *out = NULL;
    const pfvm_node *caller[17] = {NULL};
    pfvm_model *models[64];
    static ops_used used;
    const char *written[256];
    int i, n = 0, nm = 0, nw = 0, rc = 0;
    FILE *f = stdout;
    for (i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "-o") && i + 1 < argc) {
            out = argv[++i];
        } else if (nm < 64) {
            pfvm_status st;
            if (!(models[nm] = pfvm_onnx_load_file(argv[i], 0, &st))) {
                rc = fail("ops: %s", st.msg);
                goto done;
            }
            collect_ops(models[nm], models[nm]->graph, names, &n, 512, &used, caller, 0);
            nm++;
        }
    }
    if (!nm) {
        rc = fail("%s", "ops: usage: interp ops --config MODEL... [-o FILE]");
        goto done;
    }
    qsort(names, (size_t)n, sizeof *names, cmp_str);
    if (out && !(f = fopen(out, "w"))) {
        rc = fail("ops: cannot write '%s'", out);
        goto done;
    }
    fprintf(f, "/* Operator selection for pfvm.h, written by `interp ops --config`: include\n"
               " * it before pfvm.h in the file that defines PFVM_IMPLEMENTATION. Only these\n"
               " * operators are compiled in; a model using another fails to load. Models:");
    for (i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "-o")) {
            i++;
            continue;
        }
        fprintf(f, " %s", argv[i]);
    }
    fprintf(f, " */\n#define PFVM_OPS_SELECTED 1\n");
    for (i = 0; i < n; i++) {
        const char *c = names[i];
        int ok = (*c == '_' || isalpha((unsigned char)*c)) != 0;
        for (; ok && *c; c++)
            ok = *c == '_' || isalnum((unsigned char)*c);
        if (ok)
            fprintf(f, "#define PFVM_OP_%s 1\n", names[i]);
    }
    for (i = 0; i < used.n_defs; i++) {
        const pfvm_op_variant *v;
        for (v = used.defs[i]->variants; v && v->macro; v++)
            if (!ops_has(used.needed, used.n_needed, v->macro) && !ops_has(written, nw, v->macro) && nw < 256) {
                written[nw++] = v->macro;
                fprintf(f, "#define %s 1 /* %s */\n", v->macro, v->why);
            }
    }
    if (out && fclose(f))
        rc = fail("ops: cannot write '%s'", out);
done:
    for (i = 0; i < nm; i++)
        pfvm_model_free(models[i]);
    return rc;
}

static int cmd_ops(int argc, char **argv)
{
    static const char *fusion[] = {"opaque", "elementwise", "broadcast", "injective", "reduction", "out-fusable"};
    const pfvm_op_def *d;
    int i, j, n = 0, n_grad = 0;
    if (argc && !strcmp(argv[0], "--config"))
        return cmd_ops_config(argc - 1, argv + 1);
    if (argc)
        return fail("%s", "ops: takes no arguments, or --config MODEL... [-o FILE]");
    printf("| operator | opsets | types | fusion | gradient |\n| --- | --- | --- | --- | --- |\n");
    for (i = 0; (d = pfvm_op_at(i)) != NULL; i++) {
        char ranges[256] = "";
        size_t len = 0;
        int seen = 0;
        /* one row per operator: list the ranges of all its entries */
        for (j = 0; j < i; j++)
            if (!strcmp(pfvm_op_at(j)->name, d->name) && !strcmp(pfvm_op_at(j)->domain, d->domain))
                seen = 1;
        if (seen)
            continue;
        for (j = i; pfvm_op_at(j); j++) {
            const pfvm_op_def *x = pfvm_op_at(j);
            if (strcmp(x->name, d->name) || strcmp(x->domain, d->domain))
                continue;
            if (x->until)
                len += (size_t)snprintf(ranges + len, len < sizeof ranges ? sizeof ranges - len : 0, "%s%d-%d",
                                        len ? ", " : "", x->since, x->until);
            else
                len += (size_t)snprintf(ranges + len, len < sizeof ranges ? sizeof ranges - len : 0, "%s%d+",
                                        len ? ", " : "", x->since);
        }
        {
            int has_grad = 0;
            for (j = i; pfvm_op_at(j); j++)
                if (!strcmp(pfvm_op_at(j)->name, d->name) && !strcmp(pfvm_op_at(j)->domain, d->domain) &&
                    pfvm_op_at(j)->grad)
                    has_grad = 1;
            n_grad += has_grad;
            printf("| %s%s%s | %s | %s | %s | %s |\n", d->domain[0] ? d->domain : "", d->domain[0] ? "." : "", d->name,
                   ranges, d->types ? d->types : "", fusion[d->fusion], has_grad ? "yes" : "");
        }
        n++;
    }
    printf("\n%d operators, %d with a gradient builder\n", n, n_grad);
    return 0;
}

/* Bytes of a value with a static shape (0 if not static). */
static double accel_value_bytes(const pfvm_value *v)
{
    double n = (double)pfvm_dtype_size(v->type.dtype);
    int i;
    for (i = 0; i < v->type.shape.rank; i++) {
        int64_t d;
        if (!pfvm_sym_is_const(v->type.shape.dims[i], &d))
            return 0;
        n *= (double)d;
    }
    return n;
}

/* One line per node from the program's "# node NAME (OP) -> LAYOUT"
 * comments (and "# gather", "# view"): its output layout, the most PEs
 * its `on` lines name and, after a simulation, the cycles of its phases
 * (those from the comment to the next one; phases are counted by
 * barriers). */
static void accel_report_nodes(const char *prog, const pfvm_accel_sim *sim)
{
    const char *p = prog, *line = NULL;
    size_t line_len = 0;
    int phase = 0, start = 0;
    long long pes = -1, cur = 0; /* the node's most PEs (-1: no `on` line of its own); the last `on` line's */
    for (;;) {
        const char *e = *p ? strchr(p, '\n') : NULL;
        size_t len = *p ? (e ? (size_t)(e - p) : strlen(p)) : 0;
        int is_node = len > 7 && !strncmp(p, "# node ", 7), is_other = (len > 9 && !strncmp(p, "# gather ", 9)) ||
                                                                       (len > 7 && !strncmp(p, "# view ", 7));
        if (!*p || is_node || is_other) {
            if (line) {
                double cyc = 0;
                int k;
                if (pes < 0)
                    pes = cur;
                for (k = start; sim && k < phase; k++)
                    cyc += pfvm_accel_sim_phase_cycles(sim, k);
                if (sim)
                    printf("  %.*s  [PEs %lld, %.0f cycles]\n", (int)line_len, line, pes, cyc);
                else
                    printf("  %.*s  [PEs %lld]\n", (int)line_len, line, pes);
            }
            if (!*p)
                break;
            line = p + (is_node ? 7 : 2);
            line_len = len - (is_node ? 7 : 2);
            start = phase;
            pes = -1;
        } else if (len >= 7 && !strncmp(p, "barrier", 7)) {
            phase++;
        } else if (len > 3 && !strncmp(p, "on ", 3)) {
            const char *q = p + 3;
            char *end;
            long long n = 0;
            for (;;) {
                long long a = strtoll(q, &end, 10), b;
                if (end == q)
                    break;
                b = strtoll(end, &end, 10);
                n += b - a + 1;
                q = end;
            }
            cur = n;
            if (n > pes)
                pes = n;
        }
        p += len + (e != NULL);
    }
}

/* The weights a simulated program reads: the model's initializers. */
static const pfvm_tensor *accel_weight(void *user, const char *name)
{
    const pfvm_value *v = pfvm_graph_find(((pfvm_model *)user)->graph, name);
    return v ? v->init : NULL;
}

/* The layout planner's result on m (pfvm_accel_plan_layouts: exact search
 * and heuristic), one line; the program above does not follow it yet. */
static void accel_report_layout_plan(pfvm_model *m, const pfvm_accel_target *t)
{
    pfvm_accel_layout_plan plan;
    pfvm_status st;
    int i, count[5] = {0, 0, 0, 0, 0};
    if (pfvm_accel_plan_layouts(m, t, PFVM_ACCEL_PLAN_AUTO, &plan, &st)) {
        printf("layout plan: error: %s\n", st.msg);
        return;
    }
    for (i = 0; i < plan.nnodes; i++)
        if (plan.kind[i] >= 0 && plan.kind[i] < 5)
            count[plan.kind[i]]++;
    if (plan.exact_done)
        printf("layout plan (cost model): exact search (%lld states at most) %.0f cycles, heuristic %.0f (gap %.2f%%)",
               (long long)plan.states, plan.exact_cost, plan.heuristic_cost,
               100 * (plan.heuristic_cost / plan.exact_cost - 1));
    else
        printf("layout plan (cost model): heuristic %.0f cycles (the exact search gave up)", plan.heuristic_cost);
    printf(", %d conversions; nodes by class:", plan.conversions);
    for (i = 0; i < 5; i++)
        if (count[i])
            printf(" %s %d", pfvm_accel_kind_name(i), count[i]);
    printf("\n");
    pfvm_accel_plan_free(&plan);
}

static int cmd_accel(int argc, char **argv)
{
    const char *model = NULL, *target = NULL, *prog_out = NULL, *outdir = "out", *onnx_out = NULL;
    const char **inputs = (const char **)calloc((size_t)argc + 1, sizeof *inputs);
    int n_in = 0, i, rc = 1, simulate = 0, n_dims = 0, naive = 0;
    dim_arg dims[64];
    pfvm_binding b;
    pfvm_status st;
    pfvm_accel_target t;
    pfvm_accel_stats stats;
    pfvm_model *m = NULL;
    pfvm_accel_sim *sim = NULL;
    pfvm_tensor **ins = NULL;
    char *prog = NULL;
    double peak_macs;
    if (!inputs)
        return fail("%s", "out of memory");
    for (i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--target") && i + 1 < argc)
            target = argv[++i];
        else if (!strcmp(argv[i], "-o") && i + 1 < argc)
            prog_out = argv[++i];
        else if (!strcmp(argv[i], "-i") && i + 1 < argc)
            inputs[n_in++] = argv[++i];
        else if (!strcmp(argv[i], "--out") && i + 1 < argc)
            outdir = argv[++i];
        else if (!strcmp(argv[i], "--simulate"))
            simulate = 1;
        else if (!strcmp(argv[i], "--dim") && i + 1 < argc) {
            if (n_dims >= 64 || !parse_dim(argv[++i], &dims[n_dims])) {
                free(inputs);
                return fail("accel: --dim wants NAME=VALUE (VALUE >= 0), got '%s'", argv[i]);
            }
            n_dims++;
        } else if (!strcmp(argv[i], "--onnx") && i + 1 < argc) {
            onnx_out = argv[++i];
        } else if (!strcmp(argv[i], "--baseline") && i + 1 < argc) {
            if (strcmp(argv[++i], "naive")) {
                free(inputs);
                return fail("accel: --baseline knows 'naive', not '%s'", argv[i]);
            }
            naive = 1;
        } else if (argv[i][0] == '-' || model) {
            free(inputs);
            return fail("accel: unexpected argument '%s'", argv[i]);
        } else
            model = argv[i];
    }
    if (!model || !target) {
        free(inputs);
        return fail("%s", !model ? "accel: no model given" : "accel: no --target FILE given");
    }
    memset(&b, 0, sizeof b);
    if (pfvm_accel_target_load(target, &t, &st) || !(m = pfvm_onnx_load_file(model, 0, &st)))
        goto done_status;
    /* --dim: the graph's input shapes specialized, the rest inferred again */
    if (n_dims && (pfvm_infer_shapes(m->graph, 0, &st) || bind_dims(m, dims, n_dims, &b, &st) ||
                   pfvm_infer_shapes_bound(m->graph, &b, 0, &st)))
        goto done_status;
    if ((naive ? pfvm_accel_emit_naive : pfvm_accel_emit)(m, &t, &prog, &stats, &st))
        goto done_status;
    /* the laid-out graph: the optimized model with each value's layout in
     * its metadata_props (pfvm_accel_annotate) */
    if (onnx_out && (pfvm_accel_annotate(m, &t, prog, &st) || pfvm_onnx_save_file(m, onnx_out, &st)))
        goto done_status;
    if (prog_out) {
        FILE *f = fopen(prog_out, "w");
        if (!f || fputs(prog, f) < 0 || fclose(f)) {
            fail("accel: cannot write '%s'", prog_out);
            goto done;
        }
    }
    peak_macs = pfvm_accel_target_macs(&t, PFVM_FLOAT) * (double)pfvm_accel_target_pes(&t);
    printf("target %s: %lld PEs, %lld bytes each\n", t.name, (long long)pfvm_accel_target_pes(&t),
           (long long)t.levels[t.nlevels - 1].mem_bytes);
    if (stats.streamed) {
        if (naive)
            printf("plan: baseline naive (every tensor in the %s's memory, each node on as many PEs as its output's "
                   "first axis)\n",
                   t.levels[0].name);
        else
            printf("plan: streamed (every tensor in the %s's memory, each node in tiles that fit one PE, waves over "
                   "all PEs)\n",
                   t.levels[0].name);
        printf("nodes %d, flops %.0f, weights %lld bytes\n", stats.nodes, stats.flops, (long long)stats.weight_bytes);
        printf("occupancy: %s %lld of %lld bytes (%.2f%%); %s peak %lld of %lld bytes (%.1f%%); the levels between "
               "hold nothing\n",
               t.levels[0].name, (long long)stats.dram_bytes, (long long)t.levels[0].mem_bytes,
               100.0 * (double)stats.dram_bytes / (double)t.levels[0].mem_bytes, t.levels[t.nlevels - 1].name,
               (long long)stats.peak_bytes, (long long)t.levels[t.nlevels - 1].mem_bytes,
               100.0 * (double)stats.peak_bytes / (double)t.levels[t.nlevels - 1].mem_bytes);
    } else {
        printf("plan: naive rows (first axis over the PEs, weights on every PE)\n");
        printf("nodes %d, flops %.0f, peak %lld bytes per PE (weights %lld)\n", stats.nodes, stats.flops,
               (long long)stats.peak_bytes, (long long)stats.weight_bytes);
    }
    if (stats.fallbacks)
        printf("fallback: %d nodes %s\n", stats.fallbacks,
               stats.streamed ? "have no streamed lowering and run whole on PE 0"
                              : "refused their split inputs and run whole on PE 0 (gathers below)");
    printf("compute lower bound %.0f cycles (flops / 2 / %.0f float MACs per cycle)\n",
           peak_macs > 0 ? ceil(stats.flops / 2 / peak_macs) : 0, peak_macs);
    {
        /* compulsory traffic: inputs and weights down, outputs up, through
         * the links below the root (all instances of level 1 together);
         * weights with equal contents (shared between layers) once */
        double down = (double)stats.weight_distinct_bytes, up = 0, n1 = (double)pfvm_accel_target_instances(&t, 1);
        for (i = 0; i < pfvm_graph_num_inputs(m->graph); i++)
            if (!pfvm_graph_input(m->graph, i)->init)
                down += accel_value_bytes(pfvm_graph_input(m->graph, i));
        for (i = 0; i < pfvm_graph_num_outputs(m->graph); i++)
            up += accel_value_bytes(pfvm_graph_output(m->graph, i));
        printf("traffic lower bound %.0f cycles (%.0f bytes in, %.0f out over the %s links)\n",
               ceil(fmax(down / (t.levels[1].down * n1), up / (t.levels[1].up * n1))), down, up, t.levels[1].name);
    }
    if (!naive)
        accel_report_layout_plan(m, &t);
    if (!simulate) {
        printf("per node (the output's layout):\n");
        accel_report_nodes(prog, NULL);
    } else {
        const pfvm_graph *g = m->graph;
        int n_graph_in = 0;
        for (i = 0; i < pfvm_graph_num_inputs(g); i++)
            n_graph_in += !pfvm_graph_input(g, i)->init;
        if (n_in != n_graph_in) {
            fprintf(stderr, "interp: accel: the model takes %d inputs, %d given with -i\n", n_graph_in, n_in);
            goto done;
        }
        if (!(ins = (pfvm_tensor **)calloc((size_t)n_in + 1, sizeof *ins)))
            goto done;
        for (i = 0; i < n_in; i++)
            if (!(ins[i] = pfvm_onnx_read_value_file(inputs[i], PFVM_KIND_TENSOR, &st))) {
                pfvm_status_prefix(&st, "%s", inputs[i]);
                goto done_status;
            }
        if (!(sim = pfvm_accel_sim_new(&t, &st)) ||
            pfvm_accel_sim_run(sim, prog, pfvm_tensors_const(ins), n_in, accel_weight, m, &st))
            goto done_status;
        printf("per node (the output's layout):\n");
        accel_report_nodes(prog, sim);
        printf("simulated %.0f cycles (%.0f of them bound by transfers)\n", pfvm_accel_sim_cycles(sim),
               pfvm_accel_sim_transfer_cycles(sim));
        mkdir(outdir, 0777);
        if (!is_dir(outdir)) {
            fail("accel: cannot create output directory '%s'", outdir);
            goto done;
        }
        for (i = 0; i < pfvm_accel_sim_noutputs(sim); i++) {
            char path[4096];
            snprintf(path, sizeof path, "%s/output_%d.pb", outdir, i);
            if (pfvm_onnx_write_value_file(pfvm_accel_sim_output(sim, i), path, &st))
                goto done_status;
            print_summary(pfvm_graph_output(g, i)->name, pfvm_accel_sim_output(sim, i));
        }
    }
    rc = 0;
    goto done;
done_status:
    fail_status(&st);
done:
    if (ins)
        free_inputs(ins, n_in);
    free(inputs);
    pfvm_accel_sim_free(sim);
    pfvm_accel_free(prog);
    pfvm_binding_free(&b);
    pfvm_model_free(m);
    return rc;
}

static int run_command(const char *cmd, int argc, char **argv);

int main(int argc, char **argv)
{
    const char *cmd;
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        fputs(usage_text, argc < 2 ? stderr : stdout);
        return argc < 2;
    }
    cmd = argv[1];
    if (!strcmp(cmd, "run") || !strcmp(cmd, "test") || !strcmp(cmd, "plan") || !strcmp(cmd, "bench") ||
        !strcmp(cmd, "bench-pool")) {
        int i, j;
        for (i = j = 2; i < argc; i++) {
            if (!strcmp(argv[i], "--max-memory")) {
                if (i + 1 >= argc || !(max_memory = parse_bytes(argv[i + 1])))
                    return fail("bad --max-memory '%s': expected BYTES (a count, or with k, M or G)",
                                i + 1 < argc ? argv[i + 1] : "");
                i++;
                continue;
            }
            if (!strcmp(argv[i], "--max-operations")) {
                char *end = NULL;
                double v = i + 1 < argc ? strtod(argv[i + 1], &end) : 0;
                if (!end || *end || end == argv[i + 1] || !(v >= 1 && v < 1.8e19))
                    return fail("bad --max-operations '%s': expected a count (1e9 is fine)", i + 1 < argc ? argv[i + 1] : "");
                max_operations = (uint64_t)v;
                i++;
                continue;
            }
            if (!strcmp(argv[i], "--threads")) {
                char *end = NULL;
                long v = i + 1 < argc ? strtol(argv[i + 1], &end, 10) : 0;
                if (!end || *end || end == argv[i + 1] || v < 1 || v > 256)
                    return fail("bad --threads '%s': expected a count from 1 to 256", i + 1 < argc ? argv[i + 1] : "");
#ifndef INTERP_HAVE_THREADS
                if (v > 1)
                    return fail("%s", "--threads: this build of interp has no threads");
#endif
                n_threads = (int)v;
                i++;
                continue;
            }
            argv[j++] = argv[i];
        }
        argc = j;
    }
    {
        int rc = run_command(cmd, argc, argv);
#ifdef INTERP_HAVE_THREADS
        pool_stop(&the_pool);
#endif
        return rc;
    }
}

static int run_command(const char *cmd, int argc, char **argv)
{
    if (!strcmp(cmd, "run"))
        return cmd_run(argc - 2, argv + 2);
    if (!strcmp(cmd, "test"))
        return cmd_test(argc - 2, argv + 2);
    if (!strcmp(cmd, "shapes"))
        return cmd_shapes(argc - 2, argv + 2);
    if (!strcmp(cmd, "plan"))
        return cmd_plan(argc - 2, argv + 2);
    if (!strcmp(cmd, "bench"))
        return cmd_bench(argc - 2, argv + 2);
    if (!strcmp(cmd, "ops"))
        return cmd_ops(argc - 2, argv + 2);
    if (!strcmp(cmd, "opt"))
        return cmd_opt(argc - 2, argv + 2);
    if (!strcmp(cmd, "grad"))
        return cmd_grad(argc - 2, argv + 2);
    if (!strcmp(cmd, "dot"))
        return cmd_dot(argc - 2, argv + 2);
    if (!strcmp(cmd, "quantize"))
        return cmd_quantize(argc - 2, argv + 2);
    if (!strcmp(cmd, "accel"))
        return cmd_accel(argc - 2, argv + 2);
    if (!strcmp(cmd, "bench-pool"))
#ifdef INTERP_HAVE_THREADS
        return cmd_bench_pool(argc - 2, argv + 2);
#else
        return fail("%s", "bench-pool: this build of interp has no threads");
#endif
    return fail("unknown command '%s' (interp --help lists the commands)", cmd);
}
