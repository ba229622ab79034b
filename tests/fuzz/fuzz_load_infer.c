/* Fuzz target: ModelProto bytes -> pfvm_onnx_load_memory -> shape
 * inference (and its per-case form) -> verifier -> every value's type
 * printed. Any of these may refuse the model with a status; none may crash,
 * read out of bounds or overflow. See tests/fuzz/README. */
#define FUZZ_MODEL_MUTATOR
#include "fuzz_common.h"

static void print_types(const pfvm_graph *g)
{
    char buf[512];
    int i, j, k;
    for (i = 0; i < pfvm_graph_num_values(g); i++)
        pfvm_type_print(&pfvm_graph_value_at(g, i)->type, buf, sizeof buf);
    /* the subgraphs: node attributes (a function's attribute defaults
     * aside, every subgraph of a graph is one) */
    for (i = 0; i < pfvm_graph_num_nodes(g); i++) {
        const pfvm_node *n = pfvm_graph_node(g, i);
        for (j = 0; j < n->n_attrs; j++) {
            if (n->attrs[j].type == PFVM_ATTR_GRAPH && n->attrs[j].g)
                print_types(n->attrs[j].g);
            for (k = 0; n->attrs[j].type == PFVM_ATTR_GRAPHS && k < n->attrs[j].n; k++)
                if (n->attrs[j].graphs[k])
                    print_types(n->attrs[j].graphs[k]);
        }
    }
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
