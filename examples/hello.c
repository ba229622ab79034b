/* hello — the README's example: build a tiny graph with the IR builder and
 * run it. Compile: cc -std=c99 -I. examples/hello.c -lm */
#define PFVM_IMPLEMENTATION
#include "pfvm.h"

#include <stdio.h>

int main(void)
{
    pfvm_status st;
    pfvm_model *m = pfvm_model_new(&st);
    pfvm_graph *g = pfvm_graph_new(m, NULL, "hello", &st);
    pfvm_value *x = pfvm_graph_value(g, "x", &st), *y = pfvm_graph_value(g, "y", &st);
    pfvm_value *z = pfvm_graph_value(g, "z", &st), *xy[2];
    int64_t dims[1] = {4};
    float a[4] = {-1, 2, -3, 4};
    pfvm_tensor *in;
    pfvm_exec *e;
    const float *out;
    int i;

    pfvm_model_set_opset(m, "", 17, &st);
    pfvm_graph_add_input(g, x, &st);
    pfvm_graph_add_node(g, "Relu", "", "relu", &x, 1, &y, 1, &st); /* y = relu(x) */
    xy[0] = x;
    xy[1] = y;
    pfvm_graph_add_node(g, "Mul", "", "mul", xy, 2, &z, 1, &st);   /* z = x * y */
    pfvm_graph_add_output(g, z, &st);

    e = pfvm_exec_new(m, NULL, &st);
    in = pfvm_tensor_view(PFVM_FLOAT, 1, dims, a, &st);
    if (!e || !in || pfvm_exec_bind_one(e, in, &st) || pfvm_exec_run(e, &st)) {
        printf("error: %s\n", st.msg);
        return 1;
    }
    out = (const float *)pfvm_exec_output(e, 0)->data;
    for (i = 0; i < 4; i++)
        printf("%g ", out[i]); /* 0 4 0 16 */
    printf("\n");
    pfvm_tensor_free(in);
    pfvm_exec_free(e);
    pfvm_model_free(m);
    return 0;
}
