/* Runs one model over many inputs for bench/int8.sh: for each DIR (holding
 * input_0.pb ...) prints output 0's values on one line. The model is
 * loaded and optimized once (default passes, so QDQ models run their
 * integer operators).
 *   int8_eval MODEL DIR... */
#define PFVM_IMPLEMENTATION
#include "pfvm_onnx.h"

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    pfvm_status st;
    pfvm_model *m;
    pfvm_exec *e;
    int a, i, k;
    if (argc < 3) {
        fprintf(stderr, "usage: int8_eval MODEL DIR...\n");
        return 1;
    }
    if (!(m = pfvm_onnx_load_file(argv[1], 0, &st)) || pfvm_optimize(m, NULL, NULL, &st) ||
        !(e = pfvm_exec_new(m, NULL, &st))) {
        fprintf(stderr, "int8_eval: %s\n", st.msg);
        return 1;
    }
    k = pfvm_exec_num_inputs(e);
    for (a = 2; a < argc; a++) {
        pfvm_tensor *ins[8];
        const pfvm_tensor *y;
        int64_t j, n;
        for (i = 0; i < k && i < 8; i++) {
            char path[4096];
            snprintf(path, sizeof path, "%s/input_%d.pb", argv[a], i);
            if (!(ins[i] = pfvm_onnx_read_value_file(path, PFVM_KIND_TENSOR, &st))) {
                fprintf(stderr, "int8_eval: %s: %s\n", path, st.msg);
                return 1;
            }
        }
        if (pfvm_exec_bind(e, (const pfvm_tensor *const *)ins, k, &st) || pfvm_exec_run(e, &st)) {
            fprintf(stderr, "int8_eval: %s: %s\n", argv[a], st.msg);
            return 1;
        }
        y = pfvm_exec_output(e, 0);
        n = pfvm_tensor_numel(y);
        for (j = 0; j < n; j++)
            printf(j ? " %.6g" : "%.6g", pfvm_tensor_get_f64(y, j));
        printf("\n");
        for (i = 0; i < k; i++)
            pfvm_tensor_free(ins[i]);
    }
    pfvm_exec_free(e);
    pfvm_model_free(m);
    return 0;
}
