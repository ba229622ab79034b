/* Unit tests of the ONNX reader and writer: loading from memory (zero-copy
 * and copied), save -> load round trips, value files, external data, and
 * hundreds of truncated and corrupted inputs that must fail cleanly. */
#include "onnx/onnx_io.h"
#include "exec/exec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define NODE_DIR "/usr/share/libonnx-testdata/data/node/"

static void *read_all(const char *path, size_t *size)
{
    void *bytes = NULL;
    pfvm_status st;
    if (pfvm_onnx_read_file(path, &bytes, size, &st))
        return NULL;
    return bytes;
}

/* Structural equality of two graphs: nodes, op types, attribute names and
 * kinds, inputs and outputs by name, initializer bytes. */
static int same_graph(const pfvm_graph *a, const pfvm_graph *b)
{
    int i, j;
    if (stbds_arrlen(a->nodes) != stbds_arrlen(b->nodes) || stbds_arrlen(a->inits) != stbds_arrlen(b->inits) ||
        stbds_arrlen(a->inputs) != stbds_arrlen(b->inputs) || stbds_arrlen(a->outputs) != stbds_arrlen(b->outputs))
        return 0;
    for (i = 0; i < (int)stbds_arrlen(a->nodes); i++) {
        const pfvm_node *x = a->nodes[i], *y = b->nodes[i];
        if (strcmp(x->op_type, y->op_type) || strcmp(x->domain, y->domain) || x->n_inputs != y->n_inputs ||
            x->n_outputs != y->n_outputs || x->n_attrs != y->n_attrs)
            return 0;
        for (j = 0; j < x->n_inputs; j++)
            if ((x->inputs[j] == NULL) != (y->inputs[j] == NULL) || (x->inputs[j] && strcmp(x->inputs[j]->name, y->inputs[j]->name)))
                return 0;
        for (j = 0; j < x->n_attrs; j++) {
            if (strcmp(x->attrs[j].name, y->attrs[j].name) || x->attrs[j].type != y->attrs[j].type)
                return 0;
            if (x->attrs[j].g && !same_graph(x->attrs[j].g, y->attrs[j].g))
                return 0;
        }
    }
    for (i = 0; i < (int)stbds_arrlen(a->inits); i++) {
        const pfvm_tensor *x = a->inits[i]->init, *y = b->inits[i]->init;
        if (x->dtype != y->dtype || x->rank != y->rank || x->nbytes != y->nbytes ||
            (x->dtype != PFVM_STRING && x->nbytes && memcmp(x->data, y->data, x->nbytes)))
            return 0;
    }
    return 1;
}

static void test_round_trip(const char *name)
{
    char path[512];
    size_t size, size2;
    void *bytes, *saved = NULL;
    pfvm_status st;
    pfvm_model *m, *m2;
    snprintf(path, sizeof path, NODE_DIR "%s/model.onnx", name);
    bytes = read_all(path, &size);
    if (!bytes) {
        fprintf(stderr, "skip %s: test data not installed\n", name);
        return;
    }
    m = pfvm_onnx_load_memory(bytes, size, 0, &st);
    CHECK_MSG(m != NULL, "%s: %s", name, st.msg);
    if (m) {
        CHECK_MSG(pfvm_onnx_save_memory(m, &saved, &size2, &st) == PFVM_OK, "%s: %s", name, st.msg);
        m2 = saved ? pfvm_onnx_load_memory(saved, size2, PFVM_LOAD_COPY, &st) : NULL;
        CHECK_MSG(m2 != NULL, "%s reloaded: %s", name, st.msg);
        if (m2) {
            CHECK_MSG(same_graph(m->graph, m2->graph), "%s: round trip changed the graph", name);
            CHECK(pfvm_model_opset(m, "") == pfvm_model_opset(m2, ""));
            CHECK(stbds_arrlen(m->functions) == stbds_arrlen(m2->functions));
        }
        pfvm_model_free(m2);
        pfvm_onnx_free(saved);
    }
    pfvm_model_free(m);
    pfvm_onnx_free(bytes);
}

/* Truncations and byte flips of a real model: each must load or fail with
 * a message, and nothing may crash or leak (run under ASan in CI). */
static void test_corruption(const char *name)
{
    char path[512];
    size_t size, cut;
    unsigned char *bytes, *copy;
    int i, clean = 1;
    unsigned seed = 12345;
    snprintf(path, sizeof path, NODE_DIR "%s/model.onnx", name);
    bytes = (unsigned char *)read_all(path, &size);
    if (!bytes)
        return;
    copy = (unsigned char *)malloc(size);
    for (i = 0; i < 400 && copy; i++) {
        pfvm_status st;
        pfvm_model *m;
        memcpy(copy, bytes, size);
        if (i % 2) {
            int f;
            for (f = 0; f < 1 + i % 5; f++) {
                seed = seed * 1103515245u + 12345u;
                copy[(seed >> 8) % size] = (unsigned char)(seed >> 20);
            }
            cut = size;
        } else {
            cut = (size_t)i * size / 400;
        }
        st.msg[0] = 0;
        m = pfvm_onnx_load_memory(copy, cut, 0, &st);
        if (!m && !st.msg[0])
            clean = 0;
        if (m) {
            /* a model that loads must also run or fail cleanly */
            pfvm_exec *e = pfvm_exec_new(m, NULL, &st);
            pfvm_exec_free(e);
        }
        pfvm_model_free(m);
    }
    CHECK_MSG(clean, "%s: a corrupted model failed without a message", name);
    free(copy);
    pfvm_onnx_free(bytes);
}

static void test_values(void)
{
    pfvm_status st;
    pfvm_tensor *t, *back;
    void *bytes;
    size_t size;
    int64_t dims[2] = {2, 3};
    float data[6] = {1, 2, 3, 4, 5, 6};
    t = pfvm_tensor_view(PFVM_FLOAT, 2, dims, data, &st);
    CHECK(pfvm_onnx_write_value(t, &bytes, &size, &st) == PFVM_OK);
    back = pfvm_onnx_read_value(bytes, size, PFVM_KIND_TENSOR, &st);
    CHECK(back && back->dtype == PFVM_FLOAT && back->rank == 2 && back->dims[1] == 3 && ((float *)back->data)[5] == 6);
    pfvm_tensor_free(back);
    /* truncated value files fail cleanly */
    back = pfvm_onnx_read_value(bytes, size - 3, PFVM_KIND_TENSOR, &st);
    CHECK(back == NULL && st.code != PFVM_OK && st.msg[0]);
    pfvm_onnx_free(bytes);
    pfvm_tensor_free(t);
    /* a sequence file from the test data */
    t = pfvm_onnx_read_value_file(NODE_DIR "test_sequence_insert_at_back/test_data_set_0/input_0.pb", PFVM_KIND_SEQUENCE, &st);
    if (t) {
        CHECK(t->kind == PFVM_KIND_SEQUENCE && stbds_arrlen(t->elems) > 0);
        CHECK(pfvm_onnx_write_value(t, &bytes, &size, &st) == PFVM_OK);
        back = pfvm_onnx_read_value(bytes, size, PFVM_KIND_SEQUENCE, &st);
        CHECK(back && stbds_arrlen(back->elems) == stbds_arrlen(t->elems));
        pfvm_tensor_free(back);
        pfvm_onnx_free(bytes);
        pfvm_tensor_free(t);
    }
}

static void test_errors(void)
{
    pfvm_status st;
    static const unsigned char garbage[] = {0xff, 0xff, 0xff, 0xff, 0x0f};
    CHECK(pfvm_onnx_load_memory(garbage, sizeof garbage, 0, &st) == NULL && st.code == PFVM_ERR_PARSE);
    CHECK(pfvm_onnx_load_memory(garbage, 0, 0, &st) == NULL && st.msg[0]);
    CHECK(pfvm_onnx_load_file("/nonexistent/model.onnx", 0, &st) == NULL && st.code == PFVM_ERR_IO);
    /* external data with a path that leaves the model's directory */
    {
        pfvm_model *m = pfvm_onnx_load_file("tests/models/mlp_external/model.onnx", 0, &st);
        CHECK_MSG(m != NULL, "external data: %s", st.msg);
        pfvm_model_free(m);
    }
}

/* Aligned raw_data is used in place. Whether a tensor's bytes are aligned
 * depends on where the buffer starts, so the model is loaded at four
 * shifts: some initializer must be viewed rather than copied. */
static void test_zero_copy(void)
{
    size_t size;
    void *bytes = read_all("tests/models/cnn_small/model.onnx", &size);
    unsigned char *buf;
    pfvm_status st;
    int i, shift, viewed = 0;
    if (!bytes)
        return;
    buf = (unsigned char *)malloc(size + 8);
    for (shift = 0; buf && shift < 4; shift++) {
        pfvm_model *m;
        memcpy(buf + shift, bytes, size);
        m = pfvm_onnx_load_memory(buf + shift, size, 0, &st);
        CHECK(m != NULL);
        for (i = 0; m && i < (int)stbds_arrlen(m->graph->inits); i++) {
            const unsigned char *d = (const unsigned char *)m->graph->inits[i]->init->data;
            viewed += d >= buf + shift && d < buf + shift + size;
        }
        pfvm_model_free(m);
    }
    CHECK(viewed > 0);
    free(buf);
    pfvm_onnx_free(bytes);
}

int main(void)
{
    static const char *cases[] = {"test_conv_with_strides_padding", "test_if", "test_loop11", "test_scan9_sum",
                                  "test_sequence_insert_at_back", "test_optional_get_element_sequence",
                                  "test_strnormalizer_export_monday_casesensintive_lower", "test_cast_FLOAT_to_STRING",
                                  "test_lstm_with_peepholes", "test_range_float_type_positive_delta_expanded"};
    int i;
    for (i = 0; i < (int)(sizeof cases / sizeof *cases); i++)
        test_round_trip(cases[i]);
    test_corruption("test_if");
    test_corruption("test_lstm_with_peepholes");
    test_corruption("test_range_float_type_positive_delta_expanded");
    test_values();
    test_errors();
    test_zero_copy();
    return CHECK_END();
}
