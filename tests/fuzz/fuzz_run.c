/* Fuzz target: ModelProto bytes -> load -> (optimize, on half of the
 * inputs) -> infer -> pfvm_exec_new -> inputs made from the declared input
 * types -> bind (plans) -> run, and on half of the inputs bind and run once
 * more (the kept-plan path). Refusals are fine; crashes, out-of-bounds
 * accesses and undefined behaviour are findings. See tests/fuzz/README.
 *
 * Sizes are capped so that a model cannot ask for more than a fuzzer can
 * give: every dim symbol is bound to 1, 2 or 3, an input holds at most
 * 64 Ki elements, and the executor plans into a caller arena of 64 MiB
 * (pfvm_exec_set_arena), so a plan that needs more fails with
 * PFVM_ERR_NOMEM and the input is skipped; the executor's limits
 * (pfvm_exec_set_limits) bound one tensor to the arena's size and all of
 * them, folded and run-time ones included, to four times it. The arena's
 * bytes past the planned size are poisoned for AddressSanitizer during the
 * run, so an access past the plan is still reported. */
#define FUZZ_MODEL_MUTATOR
#include "fuzz_common.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#include <sanitizer/asan_interface.h>
#define FUZZ_POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define FUZZ_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#endif
#endif
#ifndef FUZZ_POISON
#define FUZZ_POISON(p, n) ((void)(p), (void)(n))
#define FUZZ_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

#define FUZZ_ARENA_BYTES ((size_t)64 << 20)
#define FUZZ_MAX_INPUT_ELEMS ((int64_t)1 << 16)

static unsigned char *fuzz_arena(void)
{
    static unsigned char *block, *arena;
    if (!arena) {
        /* 64-byte aligned, as pfvm_exec_set_arena asks */
        block = (unsigned char *)malloc(FUZZ_ARENA_BYTES + 64);
        if (!block)
            abort();
        arena = block + (64 - (uintptr_t)block % 64) % 64;
    }
    return arena;
}

/* Input contents: floats in [-2, 2), integers 0..2 (they are often indices
 * or axes), booleans alternating, strings "a"/"bc". */
static int fill_input(pfvm_tensor *t, uint64_t h)
{
    int64_t i, n = pfvm_tensor_numel(t);
    for (i = 0; i < n; i++) {
        uint64_t x = ((uint64_t)i * 2654435761u + h) % 1000;
        double f = (double)x / 250.0 - 2.0;
        int64_t k = (int64_t)(x % 3);
        switch (t->dtype) {
        case PFVM_FLOAT: ((float *)t->data)[i] = (float)f; break;
        case PFVM_DOUBLE: ((double *)t->data)[i] = f; break;
        case PFVM_FLOAT16: ((uint16_t *)t->data)[i] = pfvm_float_to_half((float)f); break;
        case PFVM_BFLOAT16: ((uint16_t *)t->data)[i] = pfvm_float_to_bf16((float)f); break;
        case PFVM_INT64: ((int64_t *)t->data)[i] = k; break;
        case PFVM_UINT64: ((uint64_t *)t->data)[i] = (uint64_t)k; break;
        case PFVM_INT32: ((int32_t *)t->data)[i] = (int32_t)k; break;
        case PFVM_UINT32: ((uint32_t *)t->data)[i] = (uint32_t)k; break;
        case PFVM_INT16: case PFVM_UINT16: ((uint16_t *)t->data)[i] = (uint16_t)k; break;
        case PFVM_BOOL: ((uint8_t *)t->data)[i] = (uint8_t)(i & 1); break;
        case PFVM_STRING: /* pfvm's own copy: pfvm frees it (its allocator tags every block) */
            if (pfvm_tensor_set_string(t, i, i & 1 ? "bc" : "a", NULL) != PFVM_OK)
                return 0;
            break;
        default:
            if (pfvm_dtype_size(t->dtype) == 1)
                ((uint8_t *)t->data)[i] = (uint8_t)k;
            else
                memset(t->data, 0, t->nbytes); /* complex: zeros */
            break;
        }
    }
    return 1;
}

static void run_once(pfvm_exec *e, const pfvm_tensor *const *ins, int n)
{
    pfvm_status st;
    pfvm_plan_info info;
    unsigned char *arena = fuzz_arena();
    int i;
    /* the cap: a plan over 64 MiB fails here with PFVM_ERR_NOMEM */
    pfvm_exec_set_arena(e, arena, FUZZ_ARENA_BYTES);
    {
        /* a Loop that never stops, or a kernel asked for 10^14 samples, is
         * the model's meaning, not a bug: bounded (a second or so here) */
        pfvm_limits l = pfvm_exec_limits(e);
        l.max_loop_iterations = 4096;
        l.max_run_operations = (uint64_t)1 << 26;
        /* tensors sized at run time (dynamic outputs, strings) stay within
         * what the arena cap allows planned ones */
        l.max_tensor_bytes = FUZZ_ARENA_BYTES;
        l.max_total_bytes = 4 * FUZZ_ARENA_BYTES;
        pfvm_exec_set_limits(e, &l);
    }
    if (pfvm_exec_bind(e, ins, n, &st) != PFVM_OK)
        return;
    FUZZ_CHECK(pfvm_exec_plan_info(e, &info, &st) == PFVM_OK, "plan info after a bind: %s", st.msg);
    FUZZ_CHECK(info.arena_bytes <= FUZZ_ARENA_BYTES, "plan of %zu bytes bound into a smaller arena",
               info.arena_bytes);
    FUZZ_POISON(arena + info.arena_bytes, FUZZ_ARENA_BYTES - info.arena_bytes);
    if (pfvm_exec_run(e, &st) == PFVM_OK) {
        char buf[256];
        for (i = 0; i < pfvm_exec_num_outputs(e); i++) {
            const pfvm_tensor *t = pfvm_exec_output(e, i);
            if (t)
                pfvm_tensor_describe(t, buf, sizeof buf);
        }
    }
    FUZZ_UNPOISON(arena, FUZZ_ARENA_BYTES);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    pfvm_status st;
    pfvm_model *m;
    pfvm_exec *e = NULL;
    pfvm_binding b;
    pfvm_tensor *ins[64];
    int i, n = 0, ok = 1;
    uint64_t h = fuzz_hash(data, size);
    memset(&b, 0, sizeof b);
    m = pfvm_onnx_load_memory(data, size, 0, &st);
    if (!m)
        return 0;
    if ((h & 1) && pfvm_optimize(m, NULL, NULL, &st) != PFVM_OK)
        goto done;
    if (pfvm_infer_shapes(m->graph, 0, &st) != PFVM_OK || !(e = pfvm_exec_new(m, NULL, &st)))
        goto done;
    n = pfvm_exec_num_inputs(e);
    if (n > 64) {
        n = 0;
        goto done;
    }
    /* every dim symbol gets one small value, so that dims which must agree do */
    for (i = 0; i < pfvm_symtab_count(m->syms); i++) {
        const pfvm_sym *s = pfvm_symtab_get(m->syms, i);
        if (s && pfvm_binding_set(&b, s, 1 + (int64_t)((h >> 8) % 3), &st) != PFVM_OK)
            goto done;
    }
    for (i = 0; i < n; i++) {
        const pfvm_value *v = pfvm_exec_input(e, i);
        int64_t dims[PFVM_MAX_RANK], numel = 1;
        int d;
        ins[i] = NULL;
        if (v->type.kind != PFVM_KIND_TENSOR || v->type.shape.rank < 0 ||
            !pfvm_shape_eval(&v->type.shape, &b, dims))
            ok = 0;
        for (d = 0; ok && d < v->type.shape.rank; d++)
            if (dims[d] < 0 || dims[d] > FUZZ_MAX_INPUT_ELEMS || (numel *= dims[d]) > FUZZ_MAX_INPUT_ELEMS)
                ok = 0;
        if (ok && !(ins[i] = pfvm_tensor_new(v->type.dtype ? v->type.dtype : PFVM_FLOAT, v->type.shape.rank, dims,
                                             &st)))
            ok = 0;
        if (ok && !fill_input(ins[i], h))
            ok = 0;
        if (!ok) {
            n = i + (ins[i] != NULL);
            goto done;
        }
    }
    run_once(e, (const pfvm_tensor *const *)ins, n);
    if (h & 2)
        run_once(e, (const pfvm_tensor *const *)ins, n);
done:
    pfvm_exec_free(e);
    for (i = 0; i < n; i++)
        pfvm_tensor_free(ins[i]);
    pfvm_binding_free(&b);
    pfvm_model_free(m);
    return 0;
}
