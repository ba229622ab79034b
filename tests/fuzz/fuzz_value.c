/* Fuzz target: value-file bytes (TensorProto, SequenceProto,
 * OptionalProto) -> pfvm_onnx_read_value under each kind hint; what reads
 * is described, cloned, written and read back, and the second write must
 * give the bytes of the first. See tests/fuzz/README. */
#include "fuzz_common.h"

static void use_value(const pfvm_tensor *t)
{
    char buf[256];
    pfvm_tensor_describe(t, buf, sizeof buf);
    if (t->kind == PFVM_KIND_TENSOR && t->dtype != PFVM_STRING && pfvm_dtype_size(t->dtype)) {
        int64_t i, n = pfvm_tensor_numel(t);
        volatile double sum = 0;
        for (i = 0; i < n && i < 4096; i++)
            sum += pfvm_tensor_get_f64(t, i);
        (void)sum;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const pfvm_kind hints[] = {PFVM_KIND_TENSOR, PFVM_KIND_SEQUENCE, PFVM_KIND_OPTIONAL};
    int h;
    for (h = 0; h < 3; h++) {
        pfvm_status st;
        pfvm_tensor *t = pfvm_onnx_read_value(data, size, hints[h], &st), *t2, *c;
        void *b1 = NULL, *b2 = NULL;
        size_t n1 = 0, n2 = 0;
        if (!t)
            continue;
        use_value(t);
        c = pfvm_tensor_clone(t, &st);
        FUZZ_CHECK(c != NULL, "clone of a value read: %s", st.msg);
        if (pfvm_onnx_write_value(c, &b1, &n1, &st) == PFVM_OK) {
            t2 = pfvm_onnx_read_value(b1, n1, hints[h], &st);
            FUZZ_CHECK(t2 != NULL, "a value pfvm wrote does not read back: %s", st.msg);
            FUZZ_CHECK(pfvm_onnx_write_value(t2, &b2, &n2, &st) == PFVM_OK, "writing it again: %s", st.msg);
            FUZZ_CHECK(n1 == n2 && memcmp(b1, b2, n1) == 0, "write -> read -> write changed the bytes");
            pfvm_tensor_free(t2);
        }
        pfvm_onnx_free(b1);
        pfvm_onnx_free(b2);
        pfvm_tensor_free(c);
        pfvm_tensor_free(t);
    }
    return 0;
}
