/* pfvm_exec_run allocates nothing: for models that the optimizer fuses
 * (models/digits.onnx, tests/models/mlp_mnist, tests/models/mlp, and the
 * CNNs cnn_small and mobilenet_v2, whose Conv weights are packed at bind), a
 * counting allocator (pfvm_set_allocator) sees zero allocations inside
 * pfvm_exec_run, on the first run after bind as on later ones, and the
 * fused groups' programs are compiled by pfvm_exec_bind (issue 19). So
 * does digits quantized by pfvm_quantize, run as QLinearConv: its weights
 * are packed by pfvm_exec_bind (issue 20).
 * Run from the repository root:
 *
 *   build/tests/test_run_alloc [MODEL.onnx INPUT.pb]...
 */
#include "exec/exec.h"
#include "onnx/onnx_io.h"
#include "passes/passes.h"
#include "quantize/quantize.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static long calls, bytes;

static void *counting_realloc(void *user, void *p, size_t size)
{
    (void)user;
    if (size == 0) {
        free(p);
        return NULL;
    }
    calls++;
    bytes += (long)size;
    return realloc(p, size);
}

#include "read_file.h"

static int count_fused(const pfvm_model *m)
{
    const pfvm_graph *g = m->graph;
    int i, n = 0;
    for (i = 0; i < pfvm_graph_num_nodes(g); i++)
        n += !strcmp(pfvm_graph_node(g, i)->domain, "pfvm");
    return n;
}

static int count_op(const pfvm_model *m, const char *op)
{
    const pfvm_graph *g = m->graph;
    int i, n = 0;
    for (i = 0; i < pfvm_graph_num_nodes(g); i++)
        n += !strcmp(pfvm_graph_node(g, i)->op_type, op);
    return n;
}

/* quantize: the model is first quantized (per channel), calibrated on the input. */
static void check_model(const char *model_path, const char *input_path, int quantize)
{
    pfvm_allocator hook = {counting_realloc, NULL};
    pfvm_status st;
    size_t model_n = 0, input_n = 0;
    unsigned char *model = read_file(model_path, &model_n), *input = read_file(input_path, &input_n);
    pfvm_model *m = NULL;
    pfvm_exec *e = NULL;
    pfvm_tensor *x = NULL;
    int r;
    CHECK_MSG(model && input, "%s, %s: cannot read", model_path, input_path);
    if (!model || !input)
        goto out;
    pfvm_set_allocator(&hook);
    m = pfvm_onnx_load_memory(model, model_n, 0, &st);
    CHECK_MSG(m != NULL, "%s: %s", model_path, st.msg);
    if (!m)
        goto out;
    x = pfvm_onnx_read_value(input, input_n, PFVM_KIND_TENSOR, &st);
    CHECK_MSG(x != NULL, "%s: %s", input_path, st.msg);
    if (!x)
        goto out;
    if (quantize) {
        pfvm_quant_options opt;
        memset(&opt, 0, sizeof opt);
        opt.per_channel = 1;
        /* as interp quantize: weights become initializers first */
        CHECK_MSG(pfvm_optimize(m, "fold,simplify,cse,bnfold,dce", NULL, &st) == PFVM_OK, "%s: %s", model_path, st.msg);
        CHECK_MSG(pfvm_quantize(m, (const pfvm_tensor *const *)&x, 1, &opt, NULL, &st) == PFVM_OK, "%s: %s",
                  model_path, st.msg);
    }
    CHECK_MSG(pfvm_optimize(m, NULL, NULL, &st) == PFVM_OK, "%s: %s", model_path, st.msg);
    if (quantize)
        CHECK_MSG(count_op(m, "QLinearConv") > 0, "%s: quantized, but no QLinearConv", model_path);
    else
        CHECK_MSG(count_fused(m) > 0, "%s: the optimizer made no fused group", model_path);
    e = pfvm_exec_new(m, NULL, &st);
    CHECK_MSG(e != NULL, "%s: %s", model_path, st.msg);
    if (!e)
        goto out;
    CHECK_MSG(pfvm_exec_bind_one(e, x, &st) == PFVM_OK, "%s: %s", model_path, st.msg);
    for (r = 0; r < 2; r++) {
        calls = bytes = 0;
        CHECK_MSG(pfvm_exec_run(e, &st) == PFVM_OK, "%s: %s", model_path, st.msg);
        CHECK_MSG(calls == 0, "%s: run %d allocated %ld times (%ld bytes)", model_path, r + 1, calls, bytes);
    }
    printf("%s%s: %d fused groups, %d QLinearConv, runs allocate %ld bytes\n", model_path, quantize ? " (int8)" : "",
           count_fused(m), count_op(m, "QLinearConv"), bytes);
out:
    pfvm_set_allocator(NULL);
    pfvm_tensor_free(x);
    pfvm_exec_free(e);
    pfvm_model_free(m);
    free(model);
    free(input);
}

int main(int argc, char **argv)
{
    int i;
    if (argc > 2) {
        for (i = 1; i + 1 < argc; i += 2)
            check_model(argv[i], argv[i + 1], 0);
    } else {
        check_model("models/digits.onnx", "models/digits_samples/digit_0.pb", 0);
        check_model("tests/models/mlp_mnist/model.onnx", "tests/models/mlp_mnist/test_data_set_0/input_0.pb", 0);
        check_model("tests/models/mlp/model.onnx", "tests/models/mlp/test_data_set_0/input_0.pb", 0);
        check_model("models/digits.onnx", "models/digits_samples/digit_0.pb", 1);
        /* Conv heads of fused groups with weights packed at bind, depthwise planes */
        check_model("tests/models/cnn_small/model.onnx", "tests/models/cnn_small/test_data_set_0/input_0.pb", 0);
        check_model("tests/models/mobilenet_v2/model.onnx", "tests/models/mobilenet_v2/test_data_set_0/input_0.pb", 0);
    }
    return CHECK_END();
}
