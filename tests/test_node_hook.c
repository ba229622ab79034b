/* The executor's node hook (pfvm_exec_set_node_hook, what `interp bench
 * --profile` times with): on an optimized model of tests/models, every node
 * that runs is seen once before and once after its kernel, in pairs, in
 * graph order; folded nodes are not; NULL removes the hook. Run from the
 * repository root:
 *
 *   build/tests/test_node_hook
 */
#include "exec/exec.h"
#include "onnx/onnx_io.h"
#include "passes/passes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "read_file.h"

typedef struct seen {
    int before, after, unpaired, out_of_order, last_id;
    const pfvm_node *open;
} seen;

static void count_hook(void *user, const pfvm_node *n, int done)
{
    seen *s = (seen *)user;
    if (!done) {
        s->before++;
        if (s->open)
            s->unpaired++;
        if (n->id <= s->last_id)
            s->out_of_order++;
        s->last_id = n->id;
        s->open = n;
        return;
    }
    s->after++;
    if (s->open != n)
        s->unpaired++;
    s->open = NULL;
}

static void check_model(const char *dir)
{
    char path[512];
    size_t model_n = 0, input_n = 0;
    unsigned char *model, *input;
    pfvm_status st;
    pfvm_model *m = NULL;
    pfvm_exec *e = NULL;
    pfvm_tensor *x = NULL;
    pfvm_plan_info info;
    seen s;
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    model = read_file(path, &model_n);
    snprintf(path, sizeof path, "%s/test_data_set_0/input_0.pb", dir);
    input = read_file(path, &input_n);
    CHECK_MSG(model && input, "%s: cannot read the model or its input", dir);
    if (!model || !input)
        goto out;
    if (!(m = pfvm_onnx_load_memory(model, model_n, 0, &st)) ||
        !(x = pfvm_onnx_read_value(input, input_n, PFVM_KIND_TENSOR, &st)) || pfvm_optimize(m, NULL, NULL, &st) ||
        !(e = pfvm_exec_new(m, NULL, &st)) || pfvm_exec_bind_one(e, x, &st) || pfvm_exec_plan_info(e, &info, &st)) {
        CHECK_MSG(0, "%s: %s", dir, st.msg);
        goto out;
    }
    memset(&s, 0, sizeof s);
    s.last_id = -1;
    pfvm_exec_set_node_hook(e, count_hook, &s);
    CHECK_MSG(pfvm_exec_run(e, &st) == PFVM_OK, "%s: %s", dir, st.msg);
    CHECK_MSG(s.before == info.n_nodes - info.n_folded && s.after == s.before,
              "%s: %d before, %d after, %d nodes run", dir, s.before, s.after, info.n_nodes - info.n_folded);
    CHECK_MSG(s.unpaired == 0 && s.out_of_order == 0 && !s.open, "%s: %d unpaired, %d out of order", dir, s.unpaired,
              s.out_of_order);
    pfvm_exec_set_node_hook(e, NULL, NULL);
    memset(&s, 0, sizeof s);
    CHECK_MSG(pfvm_exec_run(e, &st) == PFVM_OK, "%s: %s", dir, st.msg);
    CHECK_MSG(s.before == 0 && s.after == 0, "%s: the hook was called after its removal", dir);
out:
    pfvm_exec_free(e);
    pfvm_tensor_free(x);
    pfvm_model_free(m);
    free(model);
    free(input);
}

int main(void)
{
    pfvm_exec_set_node_hook(NULL, count_hook, NULL); /* no executor: nothing happens */
    check_model("tests/models/cnn_small");
    check_model("tests/models/transformer_encoder");
    check_model("tests/models/mobilenet_v2");
    return CHECK_END();
}
