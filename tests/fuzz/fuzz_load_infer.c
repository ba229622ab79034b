/* Fuzz target: ModelProto bytes -> pfvm_onnx_load_memory -> shape
 * inference (and its per-case form) -> verifier -> every value's type
 * printed. Any of these may refuse the model with a status; none may crash,
 * read out of bounds or overflow. See tests/fuzz/README. */
#define FUZZ_MODEL_MUTATOR
#include "fuzz_common.h"

static void print_types(const pfvm_graph *g)
{
    char buf[512];
    int i;
    for (i = 0; i < (int)stbds_arrlen(g->values); i++)
        pfvm_type_print(&g->values[i]->type, buf, sizeof buf);
    for (i = 0; i < (int)stbds_arrlen(g->subgraphs); i++)
        print_types(g->subgraphs[i]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    pfvm_status st;
    pfvm_shape_cases *c = NULL;
    /* zero-copy: weights view `data`, which outlives the model here */
    pfvm_model *m = pfvm_onnx_load_memory(data, size, 0, &st);
    if (!m)
        return 0;
    if (pfvm_infer_shapes(m->graph, 0, &st) == PFVM_OK) {
        pfvm_graph_verify(m->graph, &st);
        print_types(m->graph);
    }
    if (pfvm_infer_shape_cases(m->graph, &c, &st) == PFVM_OK)
        pfvm_shape_cases_free(c);
    pfvm_model_free(m);
    return 0;
}
