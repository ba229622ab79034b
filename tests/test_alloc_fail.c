/* Allocation failure at every point: for models/digits.onnx and the
 * tests/models fixtures, an allocator hook (pfvm_set_allocator) fails the
 * k-th allocation of load -> exec_new -> bind -> run, for every k until a
 * run completes without reaching k. Each failure must come back as an error
 * status with a message (no crash, no write through NULL, and under ASan no
 * leak: everything pfvm allocated is freed by the frees the caller makes);
 * the runs that complete must give the reference outputs. With --opt the
 * optimization passes (pfvm_optimize) run between load and exec_new too.
 * Run from the repository root:
 *
 *   build/tests/test_alloc_fail [--opt] [MODEL.onnx INPUT.pb]...
 */
#include "exec/exec.h"
#include "onnx/onnx_io.h"
#include "passes/passes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static long calls, fail_at = -1, failed;

/* Fails allocation number fail_at (counting from 0); frees always work. */
static void *failing_realloc(void *user, void *p, size_t size)
{
    (void)user;
    if (size == 0) {
        free(p);
        return NULL;
    }
    if (calls++ == fail_at) {
        failed++;
        return NULL;
    }
    return realloc(p, size);
}

#include "read_file.h"

/* One pass: load, (optimize,) exec_new, read the input, bind, run; copies
 * output 0 into *out (malloc'd by the test) when it all works. */
static pfvm_code run_once(const unsigned char *model, size_t model_n, const unsigned char *input, size_t input_n,
                          int opt, float **out, size_t *out_n, pfvm_status *st)
{
    pfvm_model *m = pfvm_onnx_load_memory(model, model_n, 0, st);
    pfvm_exec *e = NULL;
    pfvm_tensor *x = NULL;
    pfvm_code rc = PFVM_OK;
    if (!m)
        return st->code;
    if (opt && (rc = pfvm_optimize(m, NULL, NULL, st)) != PFVM_OK)
        goto done;
    if (!(e = pfvm_exec_new(m, NULL, st))) {
        rc = st->code;
        goto done;
    }
    if (!(x = pfvm_onnx_read_value(input, input_n, PFVM_KIND_TENSOR, st))) {
        rc = st->code;
        goto done;
    }
    if ((rc = pfvm_exec_bind_one(e, x, st)) != PFVM_OK ||
        (rc = pfvm_exec_run(e, st)) != PFVM_OK)
        goto done;
    if (out) {
        const pfvm_tensor *y = pfvm_exec_output(e, 0);
        *out_n = y && y->dtype == PFVM_FLOAT ? (size_t)pfvm_tensor_numel(y) : 0;
        *out = (float *)malloc(*out_n * sizeof(float) + 1);
        if (*out && *out_n)
            memcpy(*out, y->data, *out_n * sizeof(float));
    }
done:
    pfvm_tensor_free(x);
    pfvm_exec_free(e);
    pfvm_model_free(m);
    return rc;
}

static void check_model(const char *model_path, const char *input_path, int opt)
{
    pfvm_allocator hook = {failing_realloc, NULL};
    pfvm_status st;
    size_t model_n = 0, input_n = 0, ref_n = 0;
    unsigned char *model = read_file(model_path, &model_n), *input = read_file(input_path, &input_n);
    float *ref = NULL;
    long k, n_errors = 0, not_nomem = 0, total;
    CHECK_MSG(model && input, "%s, %s: cannot read", model_path, input_path);
    if (!model || !input)
        goto out;
    /* the reference run, counting allocations */
    pfvm_set_allocator(&hook);
    calls = 0;
    fail_at = -1;
    CHECK_MSG(run_once(model, model_n, input, input_n, opt, &ref, &ref_n, &st) == PFVM_OK, "%s: %s", model_path,
              st.msg);
    total = calls;
    for (k = 0; k < total; k++) {
        float *got = NULL;
        size_t got_n = 0;
        pfvm_code rc;
        calls = 0;
        failed = 0;
        fail_at = k;
        memset(&st, 0, sizeof st);
        rc = run_once(model, model_n, input, input_n, opt, &got, &got_n, &st);
        if (rc != PFVM_OK) {
            n_errors++;
            CHECK_MSG(failed == 1 && st.code == rc && st.msg[0], "%s: allocation %ld: code %d, message '%s'",
                      model_path, k, (int)rc, st.msg);
            if (rc != PFVM_ERR_NOMEM) {
                if (not_nomem++ < 3)
                    fprintf(stderr, "%s: allocation %ld failed as '%s' (%s)\n", model_path, k, pfvm_code_name(rc),
                            st.msg);
            }
        } else {
            /* a failure pfvm recovered from (a fallback) still computes the result */
            CHECK_MSG(got && got_n == ref_n && (!ref_n || !memcmp(got, ref, ref_n * sizeof(float))),
                      "%s: allocation %ld failed, run succeeded with different outputs", model_path, k);
        }
        free(got);
    }
    pfvm_set_allocator(NULL);
    printf("%s%s: %ld allocations, each failed in turn: %ld errors (%ld not 'out of memory'), %ld recovered\n",
           model_path, opt ? " (optimized)" : "", total, n_errors, not_nomem, total - n_errors);
out:
    pfvm_set_allocator(NULL);
    free(ref);
    free(model);
    free(input);
}

int main(int argc, char **argv)
{
    int i, opt = 0;
    if (argc > 1 && !strcmp(argv[1], "--opt")) {
        opt = 1;
        argv++;
        argc--;
    }
    if (argc > 2) {
        for (i = 1; i + 1 < argc; i += 2)
            check_model(argv[i], argv[i + 1], opt);
    } else {
        check_model("models/digits.onnx", "models/digits_samples/digit_0.pb", 0);
        check_model("tests/models/mlp/model.onnx", "tests/models/mlp/test_data_set_0/input_0.pb", 0);
        check_model("tests/models/cnn_small/model.onnx", "tests/models/cnn_small/test_data_set_0/input_0.pb", 0);
        check_model("models/digits.onnx", "models/digits_samples/digit_0.pb", 1);
    }
    return CHECK_END();
}
