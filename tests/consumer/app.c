/* A program that uses an installed pfvm (tests/packaging.sh builds it with
 * pkg-config, find_package(pfvm) and FetchContent): Relu over four floats. */
#include <stdio.h>
#include "pfvm_onnx.h"

int main(void)
{
    pfvm_status st;
    int64_t dims[1] = {4};
    float data[4] = {-1, 2, -3, 4};
    const float *out;
    pfvm_model *m = pfvm_model_new(&st);
    pfvm_graph *g = pfvm_graph_new(m, NULL, "g", &st);
    pfvm_value *x = pfvm_graph_value(g, "x", &st), *y = pfvm_graph_value(g, "y", &st);
    pfvm_exec *e;
    pfvm_tensor *in;
    pfvm_model_set_opset(m, "", 17, &st);
    pfvm_graph_add_input(g, x, &st);
    pfvm_graph_add_node(g, "Relu", "", "relu", &x, 1, &y, 1, &st);
    pfvm_graph_add_output(g, y, &st);
    e = pfvm_exec_new(m, NULL, &st);
    in = pfvm_tensor_view(PFVM_FLOAT, 1, dims, data, &st);
    if (!e || !in || pfvm_exec_bind_one(e, in, &st) || pfvm_exec_run(e, &st)) {
        fprintf(stderr, "error: %s\n", st.msg);
        return 1;
    }
    out = (const float *)pfvm_exec_output(e, 0)->data;
    printf("pfvm %s: %g %g %g %g\n", PFVM_VERSION_STRING, out[0], out[1], out[2], out[3]);
    pfvm_tensor_free(in);
    pfvm_exec_free(e);
    pfvm_model_free(m);
    return 0;
}
