/* Fuzz target: ModelProto bytes -> load -> infer -> default optimization
 * pipeline -> save -> reload -> save again. Loading, inferring and
 * optimizing may refuse the model; what pfvm saves must load again, and
 * the second save must give the same bytes as the first (the writer's
 * contract, src/onnx/onnx_io.h). See tests/fuzz/README. */
#define FUZZ_MODEL_MUTATOR
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    pfvm_status st;
    pfvm_model *m, *m2;
    void *b1 = NULL, *b2 = NULL;
    size_t n1 = 0, n2 = 0;
    m = pfvm_onnx_load_memory(data, size, 0, &st);
    if (!m)
        return 0;
    /* the optimizer infers shapes itself; inferring first is what interp
     * and the tests do, and exercises re-inference over inferred types */
    pfvm_infer_shapes(m->graph, 0, &st);
    if (pfvm_optimize(m, NULL, NULL, &st) != PFVM_OK ||
        pfvm_onnx_save_memory(m, &b1, &n1, &st) != PFVM_OK) {
        pfvm_onnx_free(b1);
        pfvm_model_free(m);
        return 0;
    }
    m2 = pfvm_onnx_load_memory(b1, n1, 0, &st);
    FUZZ_CHECK(m2 != NULL, "the optimized model pfvm saved does not load: %s", st.msg);
    FUZZ_CHECK(pfvm_onnx_save_memory(m2, &b2, &n2, &st) == PFVM_OK, "saving the reloaded model: %s", st.msg);
    FUZZ_CHECK(n1 == n2 && memcmp(b1, b2, n1) == 0, "save -> load -> save changed the bytes (%zu -> %zu)", n1,
               n2);
    pfvm_onnx_free(b2);
    pfvm_model_free(m2);
    pfvm_onnx_free(b1);
    pfvm_model_free(m);
    return 0;
}
