/* pfvm firmware test: loads the model embedded in flash (model.S), runs the
 * default optimization passes (as `interp run` does), plans, binds the
 * embedded input, runs, and prints every output as the hex of its float
 * bits, so tests/mcu/run.sh can compare the device with the host bit for
 * bit. Also prints what bench/mcu.sh tabulates: heap peak, bytes and calls
 * allocated inside pfvm_exec_run, stack high-water marks (setup and run), instructions for
 * setup and for one inference, and (host build) the model's MACs.
 *
 * Built twice: for the boards with startup.c and mps2.ld, and for the host
 * with -DMCU_HOST (stdio, no counters), from the same sources and the same
 * embedded bytes; with -DMCU_PREPARED (models `interp opt` prepared) it
 * runs no passes on the device. Output lines:
 *   out K DTYPE N        an output: dtype code and element count
 *   v HEX...             its elements' bits, 8 per line (floats; other
 *                        dtypes as their bytes)
 *   stat NAME VALUE      measurements (not compared)
 *   done                 the last line of a successful run */
#include "pfvm_onnx.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

extern const unsigned char mcu_model[], mcu_model_end[], mcu_input[], mcu_input_end[];

#ifdef MCU_HOST
#include <stdio.h>

/* Host build with an argument DIR: compares each output with the
 * DIR/output_K.pb that `interp run` wrote, bit for bit ("interp K same" or
 * "FAIL interp K differs"), so device == host program == interp. */
static int same_as_file(const pfvm_tensor *y, const char *dir, int k)
{
    char path[4096];
    static unsigned char buf[1 << 22];
    size_t n;
    pfvm_status st;
    pfvm_tensor *t;
    FILE *f;
    int same;
    snprintf(path, sizeof path, "%s/output_%d.pb", dir, k);
    if (!(f = fopen(path, "rb")))
        return 0;
    n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    if (!(t = pfvm_onnx_read_value(buf, n, PFVM_KIND_TENSOR, &st)))
        return 0;
    same = t->dtype == y->dtype && pfvm_tensor_numel(t) == pfvm_tensor_numel(y) &&
           !memcmp(t->data, y->data, (size_t)pfvm_tensor_numel(y) * pfvm_dtype_size(y->dtype));
    pfvm_tensor_free(t);
    return same;
}

static void mcu_puts(const char *s) { fputs(s, stdout); }
static uint64_t mcu_ticks(void) { return 0; }
static size_t mcu_stack_used(void) { return 0; }
static void mcu_stack_repaint(void) {}
static size_t mcu_heap_brk_max;
#else
void mcu_puts(const char *s);
uint64_t mcu_ticks(void);
size_t mcu_stack_used(void);
void mcu_stack_repaint(void);
extern size_t mcu_heap_brk_max;
#endif

/* ---- output without stdio ---------------------------------------------------- */

static char line[160];
static size_t line_n;

static void put_str(const char *s)
{
    while (*s && line_n < sizeof line - 2)
        line[line_n++] = *s++;
}

static void put_u64(uint64_t v)
{
    char b[24];
    int i = 0;
    do {
        b[i++] = (char)('0' + (int)(v % 10));
        v /= 10;
    } while (v);
    while (i)
        line[line_n < sizeof line - 2 ? line_n++ : line_n] = b[--i];
}

static void put_hex(uint32_t v, int digits)
{
    while (digits--)
        if (line_n < sizeof line - 2)
            line[line_n++] = "0123456789abcdef"[(v >> (4 * digits)) & 15];
}

static void flush_line(void)
{
    line[line_n++] = '\n';
    line[line_n] = 0;
    mcu_puts(line);
    line_n = 0;
}

static void stat(const char *name, uint64_t v)
{
    put_str("stat ");
    put_str(name);
    put_str(" ");
    put_u64(v);
    flush_line();
}

/* ---- a counting allocator ------------------------------------------------------ */

/* Live bytes (as requested), their peak, and what is allocated while
 * pfvm_exec_run runs (bytes and calls). An 8-byte header holds each size. */
static size_t heap_live, heap_peak, run_bytes, run_calls, run_peak_extra, run_base;
static int in_run;

static void *count_realloc(void *user, void *ptr, size_t size)
{
    size_t old = 0;
    unsigned char *p = ptr ? (unsigned char *)ptr - 8 : NULL;
    (void)user;
    if (p)
        memcpy(&old, p, sizeof old);
    if (size == 0) {
        free(p);
        heap_live -= old;
        return NULL;
    }
    p = (unsigned char *)realloc(p, size + 8);
    if (!p)
        return NULL;
    memcpy(p, &size, sizeof size);
    heap_live = heap_live - old + size;
    if (heap_live > heap_peak)
        heap_peak = heap_live;
    if (in_run) {
        run_calls++;
        run_bytes += size > old ? size - old : 0;
        if (heap_live > run_base && heap_live - run_base > run_peak_extra)
            run_peak_extra = heap_live - run_base;
    }
    return p + 8;
}

/* ---- MACs (host build): Conv, ConvTranspose, Gemm, MatMul ---------------------- */

#ifdef MCU_HOST
static int64_t numel_of(const pfvm_value *v)
{
    int64_t n = 1, d;
    int i;
    if (!v || v->type.kind != PFVM_KIND_TENSOR)
        return -1;
    for (i = 0; i < v->type.shape.rank; i++) {
        if (!pfvm_sym_is_const(v->type.shape.dims[i], &d))
            return -1;
        n *= d;
    }
    return n;
}

/* MACs of the graph as loaded (before fusion): Conv out * (W / M), Gemm
 * and MatMul out * K. -1 when a shape is not static. */
static int64_t count_macs(void)
{
    pfvm_status st;
    pfvm_model *m = pfvm_onnx_load_memory(mcu_model, (size_t)(mcu_model_end - mcu_model), 0, &st);
    int64_t macs = 0;
    ptrdiff_t i;
    if (!m || pfvm_infer_shapes(m->graph, 0, &st)) {
        pfvm_model_free(m);
        return -1;
    }
    for (i = 0; i < (ptrdiff_t)pfvm_graph_num_nodes(m->graph); i++) {
        const pfvm_node *n = pfvm_graph_node(m->graph, (int)i);
        int64_t y = n->n_outputs ? numel_of(n->outputs[0]) : -1, a, w, d;
        if (!strcmp(n->op_type, "Conv") || !strcmp(n->op_type, "ConvTranspose")) {
            w = numel_of(n->inputs[1]);
            if (y < 0 || w < 0 || !pfvm_sym_is_const(n->inputs[1]->type.shape.dims[0], &d) || !d)
                goto unknown;
            if (!strcmp(n->op_type, "Conv"))
                macs += y * (w / d);
            else
                macs += numel_of(n->inputs[0]) * (w / d); /* each input element hits W/Cin weights */
        } else if (!strcmp(n->op_type, "Gemm") || !strcmp(n->op_type, "MatMul")) {
            const pfvm_shape *s = &n->inputs[0]->type.shape;
            a = numel_of(n->inputs[0]);
            if (y < 0 || a < 0 || s->rank < 1)
                goto unknown;
            if (!strcmp(n->op_type, "Gemm") && pfvm_node_attr_int(n, "transA", 0))
                pfvm_sym_is_const(s->dims[0], &d);
            else
                pfvm_sym_is_const(s->dims[s->rank - 1], &d);
            macs += y * d;
        }
    }
    pfvm_model_free(m);
    return macs;
unknown:
    pfvm_model_free(m);
    return -1;
}
#endif

/* ---- checks the instruction counter on a loop of known length ------------------ */

#ifndef MCU_HOST
/* 2 instructions per iteration (subs, bne) */
static void __attribute__((noinline)) spin(uint32_t n)
{
    __asm__ volatile("1: subs %0, %0, #1\n\tbne 1b" : "+r"(n)::"cc");
}
#endif

static int fail(const char *what, const pfvm_status *st)
{
    put_str("FAIL ");
    put_str(what);
    put_str(": ");
    mcu_puts(line);
    line_n = 0;
    mcu_puts(st ? st->msg : "");
    mcu_puts("\n");
    return 1;
}

#ifdef MCU_HOST
int main(int argc, char **argv)
#else
int main(void)
#endif
{
    pfvm_status st;
    pfvm_allocator a = {count_realloc, NULL};
    pfvm_model *m;
    pfvm_exec *e;
    pfvm_tensor *x;
    uint64_t t0, t1, t2, t3;
    size_t stack_setup, stack_run;
    int i;

    pfvm_set_allocator(&a);
#ifndef MCU_HOST
    t0 = mcu_ticks();
    spin(1000000);
    t1 = mcu_ticks();
    stat("calib_ticks_per_2M_insns", t1 - t0);
#endif
    /* newlib-nano prints %lld and %zu literally; pfvm's messages must not */
    pfvm_status_set(&st, PFVM_ERR_SHAPE, "dimension %lld of %zu", (long long)-5000000000LL, (size_t)3);
    if (strcmp(st.msg, "dimension -5000000000 of 3") != 0)
        return fail("message format", &st);
    t0 = mcu_ticks();
    m = pfvm_onnx_load_memory(mcu_model, (size_t)(mcu_model_end - mcu_model), 0, &st);
    if (!m)
        return fail("load", &st);
#ifndef MCU_PREPARED /* a model prepared by `interp opt` needs no passes: they are not linked then */
    if (pfvm_optimize(m, NULL, NULL, &st))
        return fail("optimize", &st);
#endif
    e = pfvm_exec_new(m, NULL, &st);
    if (!e)
        return fail("exec_new", &st);
    if (pfvm_exec_num_inputs(e) != 1)
        return fail("the model must take one input", NULL);
    x = pfvm_onnx_read_value(mcu_input, (size_t)(mcu_input_end - mcu_input), pfvm_exec_input(e, 0)->type.kind, &st);
    if (!x)
        return fail("input", &st);
    if (pfvm_exec_bind(e, (const pfvm_tensor *const *)&x, 1, &st))
        return fail("bind", &st);
    t1 = mcu_ticks();
    stack_setup = mcu_stack_used();
    mcu_stack_repaint();
    run_base = heap_live;
    in_run = 1;
    t2 = mcu_ticks();
    if (pfvm_exec_run(e, &st))
        return fail("run", &st);
    t3 = mcu_ticks();
    in_run = 0;
    stack_run = mcu_stack_used();

    for (i = 0; i < pfvm_exec_num_outputs(e); i++) {
        const pfvm_tensor *y = pfvm_exec_output(e, i);
        size_t k, n = y->kind == PFVM_KIND_TENSOR ? (size_t)pfvm_tensor_numel(y) : 0;
        size_t es = n ? pfvm_dtype_size(y->dtype) : 0;
        const unsigned char *b = (const unsigned char *)y->data;
        put_str("out ");
        put_u64((uint64_t)i);
        put_str(" ");
        put_u64((uint64_t)y->dtype);
        put_str(" ");
        put_u64((uint64_t)n);
        flush_line();
        for (k = 0; k < n; k++) {
            uint32_t bits = 0;
            size_t j;
            if (k % 8 == 0)
                put_str("v");
            put_str(" ");
            for (j = 0; j < es && j < 4; j++) /* little-endian element bits (first 4 bytes) */
                bits |= (uint32_t)b[k * es + j] << (8 * j);
            put_hex(bits, es >= 4 ? 8 : (int)es * 2);
            for (j = 4; j < es; j += 4) { /* wider elements: the rest, word by word */
                uint32_t hi = 0;
                size_t q;
                for (q = 0; q < 4 && j + q < es; q++)
                    hi |= (uint32_t)b[k * es + j + q] << (8 * q);
                put_str(":");
                put_hex(hi, 8);
            }
            if (k % 8 == 7 || k + 1 == n)
                flush_line();
        }
    }
#ifdef MCU_HOST
    for (i = 0; argc > 1 && i < pfvm_exec_num_outputs(e); i++) {
        put_str(same_as_file(pfvm_exec_output(e, i), argv[1], i) ? "interp " : "FAIL interp ");
        put_u64((uint64_t)i);
        put_str(same_as_file(pfvm_exec_output(e, i), argv[1], i) ? " same" : " differs");
        flush_line();
    }
#endif
    stat("heap_peak", heap_peak);
    stat("heap_sbrk", mcu_heap_brk_max);
    stat("run_alloc_bytes", run_bytes);
    stat("run_alloc_calls", run_calls);
    stat("run_heap_growth", run_peak_extra);
    stat("stack_setup", stack_setup); /* load, optimize, plan, bind */
    stat("stack_run", stack_run);     /* pfvm_exec_run */
    stat("setup_ticks", t1 - t0);
    stat("run_ticks", t3 - t2);
#ifdef MCU_HOST
    {
        int64_t macs = count_macs();
        stat("macs", macs < 0 ? 0 : (uint64_t)macs);
    }
#endif
    pfvm_tensor_free(x);
    pfvm_exec_free(e);
    pfvm_model_free(m);
    stat("heap_live_at_end", heap_live);
    mcu_puts("done\n");
    return 0;
}
