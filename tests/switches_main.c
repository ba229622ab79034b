/* tests/switches.sh's program: pfvm.h + pfvm_onnx.h as a firmware build
 * compiles them (the switches come from the command line, the operator
 * selection through -include), running a model prepared on the host as
 * loaded (no passes): prints output 0's element bits, one per line. */
#define PFVM_IMPLEMENTATION
#define PFVM_NO_ONNX_WRITER
#include "pfvm_onnx.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "read_file.h"

int main(int argc, char **argv)
{
    pfvm_status st;
    size_t mn = 0, in = 0;
    unsigned char *mb = argc > 2 ? read_file(argv[1], &mn) : NULL, *ib = argc > 2 ? read_file(argv[2], &in) : NULL;
    pfvm_model *m;
    pfvm_exec *e;
    pfvm_tensor *x;
    const pfvm_tensor *y;
    int64_t i;
    if (!mb || !ib) {
        fprintf(stderr, "usage: switches_main MODEL.onnx INPUT.pb\n");
        return 2;
    }
    if (!(m = pfvm_onnx_load_memory(mb, mn, 0, &st)) || !(e = pfvm_exec_new(m, NULL, &st)) ||
        !(x = pfvm_onnx_read_value(ib, in, PFVM_KIND_TENSOR, &st)) ||
        pfvm_exec_bind_one(e, x, &st) || pfvm_exec_run(e, &st)) {
        fprintf(stderr, "FAIL: %s\n", st.msg);
        return 1;
    }
    y = pfvm_exec_output(e, 0);
    for (i = 0; y->dtype == PFVM_FLOAT && i < pfvm_tensor_numel(y); i++) {
        unsigned u;
        memcpy(&u, (const float *)y->data + i, 4);
        printf("%08x\n", u);
    }
    pfvm_tensor_free(x);
    pfvm_exec_free(e);
    pfvm_model_free(m);
    free(mb);
    free(ib);
    return 0;
}
