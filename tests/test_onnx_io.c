/* Unit tests of the ONNX reader and writer (src/onnx), on their own: they
 * need only base, sym, ir and onnx.
 *
 *   - every model of the ONNX backend suites loads, and load -> save -> load
 *     gives the same model (deep comparison), and a second save gives the
 *     same bytes as the first;
 *   - the suites' input_*.pb / output_*.pb files read (tensors, sequences,
 *     optionals), write and read back unchanged;
 *   - hand-made models cover what the suites lack (functions, sparse and
 *     external data, lazily resolved outer-scope names) and every error the
 *     reader reports;
 *   - hundreds of truncated and corrupted models fail cleanly or load;
 *     under ASan + UBSan nothing may crash, read out of bounds or leak.
 *
 *   gcc -std=c99 -Wall -Wextra -pedantic -g -fsanitize=address,undefined -Isrc
 *       tests/test_onnx_io.c src/base/base.c src/sym/sym.c src/ir/ir.c
 *       src/onnx/onnx.pb.c src/onnx/reader.c src/onnx/writer.c -lprotobuf-nanopb -lm
 *   ./a.out                  run the tests (from the repository root)
 *   ./a.out --save DIR       also write every round-tripped suite model to DIR
 *                            (then run onnx's checker: tools/onnx_check.py on them)
 */
#define _POSIX_C_SOURCE 200809L
#include "onnx/onnx_io.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"

#define DATA_DIR "/usr/share/libonnx-testdata/data/"
#define NODE_DIR DATA_DIR "node/"

static const char *save_dir; /* --save DIR */

/* The test's own growable arrays: out of memory ends the test. */
static void *xrealloc(void *p, size_t size)
{
    void *q = realloc(p, size);
    if (!q) {
        fprintf(stderr, "test_onnx_io: out of memory\n");
        exit(2);
    }
    return q;
}

static void *read_all(const char *path, size_t *size)
{
    void *bytes = NULL;
    pfvm_status st;
    if (pfvm_onnx_read_file(path, &bytes, size, &st))
        return NULL;
    return bytes;
}

static int file_exists(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0;
}

/* ---- deep comparison -------------------------------------------------------- */

static int same_str(const char *a, const char *b)
{
    return !strcmp(a ? a : "", b ? b : "");
}

static int same_dim(const pfvm_sym *a, const pfvm_sym *b)
{
    char x[256], y[256];
    pfvm_sym_print(a, x, sizeof x);
    pfvm_sym_print(b, y, sizeof y);
    return !strcmp(x, y);
}

static int same_type(const pfvm_type *a, const pfvm_type *b)
{
    int i;
    if (a->kind != b->kind || a->dtype != b->dtype || a->key_dtype != b->key_dtype ||
        a->shape.rank != b->shape.rank || (a->elem == NULL) != (b->elem == NULL))
        return 0;
    for (i = 0; i < a->shape.rank; i++)
        if (!same_dim(a->shape.dims[i], b->shape.dims[i]))
            return 0;
    return !a->elem || same_type(a->elem, b->elem);
}

static int same_tensor(const pfvm_tensor *a, const pfvm_tensor *b)
{
    int i;
    int64_t n, k;
    if (a->kind != b->kind || (a->kind == PFVM_KIND_TENSOR && a->dtype != b->dtype))
        return 0;
    if (a->kind != PFVM_KIND_TENSOR) {
        if (a->has_value != b->has_value || pfvm_tensor_num_elems(a) != pfvm_tensor_num_elems(b))
            return 0;
        for (i = 0; i < pfvm_tensor_num_elems(a); i++)
            if (!same_tensor(pfvm_tensor_elem(a, i), pfvm_tensor_elem(b, i)))
                return 0;
        return 1;
    }
    if (a->rank != b->rank)
        return 0;
    for (i = 0; i < a->rank; i++)
        if (a->dims[i] != b->dims[i])
            return 0;
    n = pfvm_tensor_numel(a);
    if (a->dtype == PFVM_STRING) {
        for (k = 0; k < n; k++)
            if (!same_str(((char **)a->data)[k], ((char **)b->data)[k]))
                return 0;
        return 1;
    }
    return a->nbytes == b->nbytes && (!a->nbytes || !memcmp(a->data, b->data, a->nbytes));
}

static int same_graph(const pfvm_graph *a, const pfvm_graph *b);

static int same_attr(const pfvm_attr *x, const pfvm_attr *y)
{
    int k;
    if (!same_str(x->name, y->name) || x->type != y->type || !same_str(x->ref_attr_name, y->ref_attr_name) ||
        !same_str(x->doc, y->doc))
        return 0;
    if (x->ref_attr_name)
        return 1;
    switch (x->type) {
    case PFVM_ATTR_FLOAT: return !memcmp(&x->f, &y->f, sizeof x->f);
    case PFVM_ATTR_INT: return x->i == y->i;
    case PFVM_ATTR_STRING: return x->s_len == y->s_len && !memcmp(x->s, y->s, x->s_len);
    case PFVM_ATTR_TENSOR:
    case PFVM_ATTR_SPARSE_TENSOR: return same_tensor(x->t, y->t);
    case PFVM_ATTR_GRAPH: return same_graph(x->g, y->g);
    case PFVM_ATTR_TYPE_PROTO: return same_type(x->tp, y->tp);
    default: break;
    }
    if (x->n != y->n)
        return 0;
    for (k = 0; k < x->n; k++) {
        int ok = 1;
        switch (x->type) {
        case PFVM_ATTR_FLOATS: ok = !memcmp(&x->floats[k], &y->floats[k], sizeof(float)); break;
        case PFVM_ATTR_INTS: ok = x->ints[k] == y->ints[k]; break;
        case PFVM_ATTR_STRINGS:
            ok = x->strings_len[k] == y->strings_len[k] && !memcmp(x->strings[k], y->strings[k], x->strings_len[k]);
            break;
        case PFVM_ATTR_TENSORS: ok = same_tensor(x->tensors[k], y->tensors[k]); break;
        case PFVM_ATTR_GRAPHS: ok = same_graph(x->graphs[k], y->graphs[k]); break;
        case PFVM_ATTR_TYPE_PROTOS: ok = same_type(x->tps[k], y->tps[k]); break;
        default: break;
        }
        if (!ok)
            return 0;
    }
    return 1;
}

static int same_value_ref(const pfvm_value *a, const pfvm_value *b)
{
    if (!a || !b)
        return a == b;
    return same_str(a->name, b->name);
}

/* One of a graph's value lists: its count and its elements. */
typedef struct value_list {
    int (*count)(const pfvm_graph *g);
    pfvm_value *(*at)(const pfvm_graph *g, int i);
} value_list;
static const value_list graph_inputs = {pfvm_graph_num_inputs, pfvm_graph_input};
static const value_list graph_outputs = {pfvm_graph_num_outputs, pfvm_graph_output};
static const value_list graph_inits = {pfvm_graph_num_initializers, pfvm_graph_initializer};

static int same_values(const pfvm_graph *ga, const pfvm_graph *gb, const value_list *l, int check_types)
{
    int i;
    if (l->count(ga) != l->count(gb))
        return 0;
    for (i = 0; i < l->count(ga); i++) {
        const pfvm_value *a = l->at(ga, i), *b = l->at(gb, i);
        if (!same_str(a->name, b->name) || !same_str(a->doc, b->doc))
            return 0;
        if (check_types && (a->has_type_info != b->has_type_info ||
                            (a->has_type_info && !same_type(&a->type, &b->type))))
            return 0;
    }
    return 1;
}

static int same_node(const pfvm_node *x, const pfvm_node *y)
{
    int j;
    if (!same_str(x->name, y->name) || !same_str(x->op_type, y->op_type) || !same_str(x->domain, y->domain) ||
        !same_str(x->doc, y->doc) || x->n_inputs != y->n_inputs || x->n_outputs != y->n_outputs ||
        x->n_attrs != y->n_attrs)
        return 0;
    for (j = 0; j < x->n_inputs; j++)
        if (!same_value_ref(x->inputs[j], y->inputs[j]))
            return 0;
    for (j = 0; j < x->n_outputs; j++)
        if (!same_value_ref(x->outputs[j], y->outputs[j]))
            return 0;
    for (j = 0; j < x->n_attrs; j++)
        if (!same_attr(&x->attrs[j], &y->attrs[j]))
            return 0;
    return 1;
}

static int same_graph(const pfvm_graph *a, const pfvm_graph *b)
{
    int i;
    if (!same_str(a->name, b->name) || !same_str(a->doc, b->doc) || pfvm_graph_num_nodes(a) != pfvm_graph_num_nodes(b) ||
        !same_values(a, b, &graph_inputs, 1) || !same_values(a, b, &graph_outputs, 1) ||
        !same_values(a, b, &graph_inits, 0))
        return 0;
    for (i = 0; i < pfvm_graph_num_nodes(a); i++)
        if (!same_node(pfvm_graph_node(a, i), pfvm_graph_node(b, i)))
            return 0;
    for (i = 0; i < pfvm_graph_num_initializers(a); i++) {
        const pfvm_value *x = pfvm_graph_initializer(a, i), *y = pfvm_graph_initializer(b, i);
        if (!same_tensor(x->init, y->init) || x->is_input != y->is_input)
            return 0;
    }
    /* value_info: the same values carry the same declared types */
    for (i = 0; i < pfvm_graph_num_values(a); i++) {
        const pfvm_value *v = pfvm_graph_value_at(a, i), *w = pfvm_graph_find_local(b, v->name);
        if (!w || v->has_value_info != w->has_value_info || (v->has_value_info && !same_type(&v->type, &w->type)))
            return 0;
    }
    return 1;
}

static int same_model(const pfvm_model *a, const pfvm_model *b)
{
    int i, j;
    if (a->ir_version != b->ir_version || a->model_version != b->model_version ||
        !same_str(a->producer_name, b->producer_name) || !same_str(a->producer_version, b->producer_version) ||
        !same_str(a->domain, b->domain) || !same_str(a->doc, b->doc) ||
        pfvm_model_num_opsets(a) != pfvm_model_num_opsets(b) ||
        pfvm_model_num_metadata(a) != pfvm_model_num_metadata(b) ||
        pfvm_model_num_functions(a) != pfvm_model_num_functions(b))
        return 0;
    for (i = 0; i < pfvm_model_num_opsets(a); i++) {
        const pfvm_opset_import *x = pfvm_model_opset_at(a, i), *y = pfvm_model_opset_at(b, i);
        if (!same_str(x->domain, y->domain) || x->version != y->version)
            return 0;
    }
    for (i = 0; i < pfvm_model_num_metadata(a); i++) {
        const pfvm_string_pair *x = pfvm_model_metadata_at(a, i), *y = pfvm_model_metadata_at(b, i);
        if (!same_str(x->key, y->key) || !same_str(x->value, y->value))
            return 0;
    }
    for (i = 0; i < pfvm_model_num_functions(a); i++) {
        const pfvm_function *f = pfvm_model_function_at(a, i), *g = pfvm_model_function_at(b, i);
        if (!same_str(f->name, g->name) || !same_str(f->domain, g->domain) || !same_str(f->doc, g->doc) ||
            f->n_attr_names != g->n_attr_names || f->n_attr_defaults != g->n_attr_defaults ||
            f->n_opsets != g->n_opsets || !same_graph(f->body, g->body))
            return 0;
        for (j = 0; j < f->n_attr_names; j++)
            if (!same_str(f->attr_names[j], g->attr_names[j]))
                return 0;
        for (j = 0; j < f->n_attr_defaults; j++)
            if (!same_attr(&f->attr_defaults[j], &g->attr_defaults[j]))
                return 0;
        for (j = 0; j < f->n_opsets; j++)
            if (!same_str(f->opsets[j].domain, g->opsets[j].domain) || f->opsets[j].version != g->opsets[j].version)
                return 0;
    }
    return same_graph(a->graph, b->graph);
}

/* ---- round trips -------------------------------------------------------------- */

/* load -> save -> load: the same model; save again: the same bytes. Returns
 * 1 when every step worked. */
static int round_trip(const pfvm_model *m, const char *label)
{
    void *b1 = NULL, *b2 = NULL;
    size_t n1 = 0, n2 = 0;
    pfvm_status st;
    pfvm_model *m2 = NULL;
    int ok = 0;
    if (pfvm_onnx_save_memory(m, &b1, &n1, &st)) {
        fprintf(stderr, "%s: save: %s\n", label, st.msg);
        goto done;
    }
    m2 = pfvm_onnx_load_memory(b1, n1, 0, &st);
    if (!m2) {
        fprintf(stderr, "%s: reload: %s\n", label, st.msg);
        goto done;
    }
    if (!same_model(m, m2)) {
        fprintf(stderr, "%s: the reloaded model differs\n", label);
        goto done;
    }
    if (pfvm_onnx_save_memory(m2, &b2, &n2, &st)) {
        fprintf(stderr, "%s: second save: %s\n", label, st.msg);
        goto done;
    }
    if (n1 != n2 || memcmp(b1, b2, n1)) {
        fprintf(stderr, "%s: the second save gives other bytes (%zu vs %zu)\n", label, n1, n2);
        goto done;
    }
    ok = 1;
done:
    pfvm_model_free(m2);
    pfvm_onnx_free(b1);
    pfvm_onnx_free(b2);
    return ok;
}

/* The kind a graph input/output's value file holds. */
static pfvm_kind value_kind(const pfvm_value *v)
{
    return v && v->has_type_info ? v->type.kind : PFVM_KIND_UNKNOWN;
}

/* Reads DIR/test_data_set_K/{input,output}_I.pb with the kinds the graph
 * declares, writes each back and reads it again. Returns the number of
 * files that failed. */
static int value_files(const char *dir, const pfvm_model *m, int *count)
{
    int set, io, i, bad = 0;
    char path[1200];
    for (set = 0; set < 8; set++) {
        for (io = 0; io < 2; io++) {
            int nvals = io ? pfvm_graph_num_outputs(m->graph) : pfvm_graph_num_inputs(m->graph);
            for (i = 0; i < nvals + 1; i++) {
                pfvm_status st;
                pfvm_tensor *t, *back;
                void *bytes;
                size_t size;
                pfvm_kind kind;
                snprintf(path, sizeof path, "%s/test_data_set_%d/%s_%d.pb", dir, set, io ? "output" : "input", i);
                if (!file_exists(path))
                    continue;
                /* input files are numbered over the inputs without initializers */
                kind = PFVM_KIND_UNKNOWN;
                if (io) {
                    kind = i < nvals ? value_kind(pfvm_graph_output(m->graph, i)) : PFVM_KIND_UNKNOWN;
                } else {
                    int j, k = -1;
                    for (j = 0; j < nvals; j++)
                        if (!pfvm_graph_input(m->graph, j)->init && ++k == i)
                            kind = value_kind(pfvm_graph_input(m->graph, j));
                }
                (*count)++;
                t = pfvm_onnx_read_value_file(path, kind, &st);
                if (!t) {
                    fprintf(stderr, "%s: %s\n", path, st.msg);
                    bad++;
                    continue;
                }
                if (pfvm_onnx_write_value(t, &bytes, &size, &st)) {
                    fprintf(stderr, "%s: write: %s\n", path, st.msg);
                    bad++;
                    pfvm_tensor_free(t);
                    continue;
                }
                back = pfvm_onnx_read_value(bytes, size, t->kind, &st);
                if (!back || !same_tensor(t, back)) {
                    fprintf(stderr, "%s: written and read back, it differs (%s)\n", path, back ? "" : st.msg);
                    bad++;
                }
                pfvm_tensor_free(back);
                pfvm_tensor_free(t);
                pfvm_onnx_free(bytes);
            }
        }
    }
    return bad;
}

static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every model of one suite (DIR/NAME/model.onnx) loads, round-trips, and
 * its value files read and write back. */
static void test_suite(const char *dir, const char *suite)
{
    char path[1024];
    DIR *d;
    struct dirent *e;
    char **names = NULL;
    size_t n_names = 0, cap = 0;
    int i, models = 0, load_fail = 0, trip_fail = 0, files = 0, file_fail = 0;
    d = opendir(dir);
    if (!d) {
        fprintf(stderr, "skip %s: test data not installed\n", dir);
        return;
    }
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        if (n_names == cap) {
            cap = cap ? 2 * cap : 64;
            names = (char **)xrealloc(names, cap * sizeof *names);
        }
        names[n_names] = (char *)xrealloc(NULL, strlen(e->d_name) + 1);
        strcpy(names[n_names++], e->d_name);
    }
    closedir(d);
    if (n_names)
        qsort(names, n_names, sizeof *names, name_cmp);
    for (i = 0; i < (int)n_names; i++) {
        pfvm_status st;
        pfvm_model *m;
        snprintf(path, sizeof path, "%s/%s/model.onnx", dir, names[i]);
        if (!file_exists(path))
            continue;
        models++;
        m = pfvm_onnx_load_file(path, 0, &st);
        if (!m) {
            fprintf(stderr, "FAIL load %s: %s\n", path, st.msg);
            load_fail++;
            continue;
        }
        if (pfvm_graph_verify(m->graph, &st)) {
            fprintf(stderr, "FAIL verify %s: %s\n", path, st.msg);
            load_fail++;
        }
        if (!round_trip(m, path))
            trip_fail++;
        if (save_dir) {
            char out[1024];
            snprintf(out, sizeof out, "%s/%s__%s.onnx", save_dir, suite, names[i]);
            if (pfvm_onnx_save_file(m, out, &st))
                fprintf(stderr, "%s: %s\n", out, st.msg);
        }
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        file_fail += value_files(path, m, &files);
        pfvm_model_free(m);
    }
    for (i = 0; i < (int)n_names; i++)
        free(names[i]);
    free(names);
    printf("%s: %d models, %d failed to load or verify, %d failed the round trip; %d value files, %d failed\n", suite, models,
           load_fail, trip_fail, files, file_fail);
    CHECK_MSG(load_fail == 0, "%s: %d models failed to load", suite, load_fail);
    CHECK_MSG(trip_fail == 0, "%s: %d models failed the round trip", suite, trip_fail);
    CHECK_MSG(file_fail == 0, "%s: %d value files failed", suite, file_fail);
}

/* Named models with the features the brief lists: subgraphs, sequences,
 * optionals, strings. Counts their nodes and attributes after the trip. */
static void test_named_models(void)
{
    static const char *cases[] = {"test_if", "test_loop11", "test_scan9_sum", "test_sequence_insert_at_back",
                                  "test_optional_get_element_sequence",
                                  "test_strnormalizer_export_monday_casesensintive_lower",
                                  "test_cast_FLOAT_to_STRING", "test_lstm_with_peepholes"};
    int i;
    for (i = 0; i < (int)(sizeof cases / sizeof *cases); i++) {
        char path[512];
        pfvm_status st;
        pfvm_model *m;
        snprintf(path, sizeof path, NODE_DIR "%s/model.onnx", cases[i]);
        if (!file_exists(path))
            continue;
        m = pfvm_onnx_load_file(path, 0, &st);
        CHECK_MSG(m != NULL, "%s: %s", cases[i], st.msg);
        if (!m)
            continue;
        CHECK(pfvm_graph_num_nodes(m->graph) > 0);
        CHECK_MSG(round_trip(m, path), "%s", cases[i]);
        CHECK(pfvm_graph_verify(m->graph, &st) == PFVM_OK);
        if (!strcmp(cases[i], "test_if")) {
            const pfvm_node *n = pfvm_graph_node(m->graph, pfvm_graph_num_nodes(m->graph) - 1);
            const pfvm_attr *then = pfvm_node_attr(n, "then_branch");
            CHECK(!strcmp(n->op_type, "If") && then && then->type == PFVM_ATTR_GRAPH && then->g);
            CHECK(then && then->g && then->g->parent == m->graph && then->g->owner == n);
        }
        if (!strcmp(cases[i], "test_sequence_insert_at_back")) {
            const pfvm_value *in = pfvm_graph_input(m->graph, 0);
            CHECK(in->type.kind == PFVM_KIND_SEQUENCE && in->type.elem && in->type.elem->kind == PFVM_KIND_TENSOR);
        }
        if (!strcmp(cases[i], "test_optional_get_element_sequence"))
            CHECK(pfvm_graph_input(m->graph, 0)->type.kind == PFVM_KIND_OPTIONAL);
        pfvm_model_free(m);
    }
}

/* ---- a tiny protobuf writer for hand-made models ---------------------------- */

typedef struct pb {
    unsigned char *b;
    size_t n, cap;
} pb;

/* Room for n more bytes at the end of p (grown by doubling). */
static unsigned char *pb_grow(pb *p, size_t n)
{
    unsigned char *at;
    if (p->n + n > p->cap) {
        p->cap = p->cap ? p->cap : 64;
        while (p->n + n > p->cap)
            p->cap *= 2;
        p->b = (unsigned char *)xrealloc(p->b, p->cap);
    }
    at = p->b + p->n;
    p->n += n;
    return at;
}

static void pb_varint(pb *p, uint64_t v)
{
    do {
        unsigned char c = (unsigned char)(v & 0x7f);
        v >>= 7;
        *pb_grow(p, 1) = (unsigned char)(c | (v ? 0x80 : 0));
    } while (v);
}

static void pb_tag(pb *p, unsigned field, unsigned wt)
{
    pb_varint(p, (uint64_t)field << 3 | wt);
}

static void pb_int(pb *p, unsigned field, int64_t v)
{
    pb_tag(p, field, 0);
    pb_varint(p, (uint64_t)v);
}

static void pb_bytes(pb *p, unsigned field, const void *data, size_t n)
{
    pb_tag(p, field, 2);
    pb_varint(p, n);
    if (n)
        memcpy(pb_grow(p, n), data, n);
}

static void pb_str(pb *p, unsigned field, const char *s)
{
    pb_bytes(p, field, s, strlen(s));
}

static void pb_float(pb *p, unsigned field, float f)
{
    pb_tag(p, field, 5);
    memcpy(pb_grow(p, 4), &f, 4);
}

static void pb_free(pb *p)
{
    free(p->b);
    p->b = NULL;
    p->n = p->cap = 0;
}

/* Appends sub as a length-delimited field and frees it. */
static void pb_msg(pb *p, unsigned field, pb *sub)
{
    pb_bytes(p, field, sub->b, sub->n);
    pb_free(sub);
}

/* onnx.proto field numbers used below */
enum {
    M_IR = 1, M_PRODUCER = 2, M_GRAPH = 7, M_OPSET = 8, M_META = 14, M_FUNC = 25,
    G_NODE = 1, G_NAME = 2, G_INIT = 5, G_INPUT = 11, G_OUTPUT = 12, G_VINFO = 13, G_SPARSE = 15,
    N_IN = 1, N_OUT = 2, N_NAME = 3, N_OP = 4, N_ATTR = 5, N_DOMAIN = 7,
    A_NAME = 1, A_F = 2, A_I = 3, A_S = 4, A_T = 5, A_G = 6, A_INTS = 8, A_TYPE = 20, A_REF = 21,
    T_DIMS = 1, T_TYPE = 2, T_SEGMENT = 3, T_FLOATS = 4, T_INT32 = 5, T_NAME = 8, T_RAW = 9, T_EXT = 13, T_LOC = 14,
    V_NAME = 1, V_TYPE = 2, TP_TENSOR = 1, TT_ELEM = 1, TT_SHAPE = 2, SH_DIM = 1, D_VALUE = 1, D_PARAM = 2,
    F_NAME = 1, F_IN = 4, F_OUT = 5, F_ATTR = 6, F_NODE = 7, F_OPSET = 9, F_DOMAIN = 10,
    S_VALUES = 1, S_INDICES = 2, S_DIMS = 3
};

/* A ValueInfoProto "name: float[dims]" (rank < 0: no shape; a dim -1 is
 * the dim_param "N", -2 an unknown dim, other negatives are written as
 * they are). */
static void pb_vinfo(pb *p, unsigned field, const char *name, int rank, const int64_t *dims)
{
    pb v = {0}, tp = {0}, tt = {0}, sh = {0};
    int i;
    pb_str(&v, V_NAME, name);
    pb_int(&tt, TT_ELEM, PFVM_FLOAT);
    for (i = 0; i < rank; i++) {
        pb d = {0};
        if (dims[i] == -1)
            pb_str(&d, D_PARAM, "N");
        else if (dims[i] != -2)
            pb_int(&d, D_VALUE, dims[i]);
        pb_msg(&sh, SH_DIM, &d);
    }
    if (rank >= 0)
        pb_msg(&tt, TT_SHAPE, &sh);
    pb_msg(&tp, TP_TENSOR, &tt);
    pb_msg(&v, V_TYPE, &tp);
    pb_msg(p, field, &v);
}

/* A NodeProto with up to 3 inputs and outputs ("" for omitted ones). */
static void pb_node(pb *g, const char *name, const char *op, const char *in0, const char *in1, const char *out0,
                    pb *attr)
{
    pb n = {0};
    if (in0)
        pb_str(&n, N_IN, in0);
    if (in1)
        pb_str(&n, N_IN, in1);
    if (out0)
        pb_str(&n, N_OUT, out0);
    if (name)
        pb_str(&n, N_NAME, name);
    pb_str(&n, N_OP, op);
    if (attr)
        pb_msg(&n, N_ATTR, attr);
    pb_msg(g, G_NODE, &n);
}

/* A float TensorProto with raw_data. */
static void pb_tensor(pb *p, unsigned field, const char *name, int rank, const int64_t *dims, const float *vals,
                      int nvals)
{
    pb t = {0};
    int i;
    for (i = 0; i < rank; i++)
        pb_int(&t, T_DIMS, dims[i]);
    pb_int(&t, T_TYPE, PFVM_FLOAT);
    if (name)
        pb_str(&t, T_NAME, name);
    pb_bytes(&t, T_RAW, vals, sizeof(float) * (size_t)nvals);
    pb_msg(p, field, &t);
}

/* Wraps a GraphProto into a ModelProto (ir 8, opset 17), without naming
 * the graph. */
static void pb_model_unnamed(pb *m, pb *g)
{
    pb op = {0};
    pb_int(m, M_IR, 8);
    pb_str(m, M_PRODUCER, "test_onnx_io");
    pb_msg(m, M_GRAPH, g);
    pb_str(&op, 1, "");
    pb_int(&op, 2, 17);
    pb_msg(m, M_OPSET, &op);
}

/* The same, the graph named "main" (ONNX wants every graph named). */
static void pb_model(pb *m, pb *g)
{
    pb_str(g, G_NAME, "main");
    pb_model_unnamed(m, g);
}

static pfvm_model *load_pb(pb *m, pfvm_status *st)
{
    /* a copy: the model must not keep pointers into the builder's array */
    return pfvm_onnx_load_memory(m->b, m->n, PFVM_LOAD_COPY, st);
}

/* Loading must fail with `code` and a message containing `needle`. */
static void expect_error(pb *m, pfvm_code code, const char *needle, int line)
{
    pfvm_status st;
    pfvm_model *model = load_pb(m, &st);
    if (model || st.code != code || !strstr(st.msg, needle)) {
        check_failed++;
        fprintf(stderr, "%s:%d: expected error %s containing '%s', got %s: %s\n", __FILE__, line, pfvm_code_name(code),
                needle, model ? "a model" : pfvm_code_name(st.code), model ? "" : st.msg);
    } else {
        check_passed++;
    }
    pfvm_model_free(model);
    pb_free(m);
}
#define EXPECT_ERROR(m, code, needle) expect_error(m, code, needle, __LINE__)

/* ---- hand-made models --------------------------------------------------------- */

/* A subgraph reads an outer value that a later outer node defines: the
 * value belongs to the outer graph, not to the subgraph. */
static void test_outer_scope(void)
{
    pb g = {0}, body = {0}, attr = {0}, m = {0};
    int64_t d1[1] = {1};
    pfvm_status st;
    pfvm_model *model;
    pb_vinfo(&g, G_INPUT, "cond", 0, NULL);
    pb_vinfo(&g, G_INPUT, "x", 1, d1);
    /* If's branch reads "late", which the Relu after it defines */
    pb_str(&body, G_NAME, "branch");
    pb_node(&body, "inner", "Identity", "late", NULL, "y_in", NULL);
    pb_vinfo(&body, G_OUTPUT, "y_in", -1, NULL);
    pb_str(&attr, A_NAME, "then_branch");
    pb_int(&attr, A_TYPE, PFVM_ATTR_GRAPH);
    pb_msg(&attr, A_G, &body);
    pb_node(&g, "if", "If", "cond", NULL, "y", &attr);
    pb_node(&g, "relu", "Relu", "x", NULL, "late", NULL);
    pb_vinfo(&g, G_OUTPUT, "y", -1, NULL);
    pb_model(&m, &g);
    model = load_pb(&m, &st);
    CHECK_MSG(model != NULL, "%s", st.msg);
    if (model) {
        const pfvm_graph *main = model->graph;
        pfvm_value *late = pfvm_graph_find_local(main, "late");
        const pfvm_node *ifn = NULL;
        int i;
        for (i = 0; i < pfvm_graph_num_nodes(main); i++)
            if (!strcmp(main->nodes[i]->op_type, "If"))
                ifn = main->nodes[i];
        CHECK(late && late->graph == main && late->producer && !strcmp(late->producer->op_type, "Relu"));
        CHECK(ifn && ifn->attrs[0].g && pfvm_graph_find_local(ifn->attrs[0].g, "late") == NULL);
        CHECK(ifn && ifn->attrs[0].g && ifn->attrs[0].g->nodes[0]->inputs[0] == late);
        /* toposort put Relu before the If that captures its output */
        CHECK(!strcmp(main->nodes[0]->op_type, "Relu"));
        CHECK(round_trip(model, "outer scope"));
    }
    pfvm_model_free(model);
    pb_free(&m);

    /* a subgraph name defined nowhere is an error that names node and op */
    pb_vinfo(&g, G_INPUT, "cond", 0, NULL);
    pb_str(&body, G_NAME, "branch");
    pb_node(&body, "inner", "Identity", "nowhere", NULL, "y_in", NULL);
    pb_vinfo(&body, G_OUTPUT, "y_in", -1, NULL);
    pb_str(&attr, A_NAME, "then_branch");
    pb_int(&attr, A_TYPE, PFVM_ATTR_GRAPH);
    pb_msg(&attr, A_G, &body);
    pb_node(&g, "if", "If", "cond", NULL, "y", &attr);
    pb_vinfo(&g, G_OUTPUT, "y", -1, NULL);
    pb_model(&m, &g);
    EXPECT_ERROR(&m, PFVM_ERR_INVALID, "node 'inner' (Identity): input 'nowhere' is not defined");
}

/* Graphs built without names are saved named: "main", and after the owner
 * node and attribute for subgraphs. */
static void test_graph_names(void)
{
    pb g = {0}, body = {0}, attr = {0}, m = {0};
    pfvm_status st;
    pfvm_model *model, *back = NULL;
    void *bytes = NULL;
    size_t size;
    pb_vinfo(&g, G_INPUT, "c", 0, NULL);
    pb_node(&body, NULL, "Identity", "c", NULL, "y_in", NULL);
    pb_vinfo(&body, G_OUTPUT, "y_in", -1, NULL);
    pb_str(&attr, A_NAME, "then_branch");
    pb_int(&attr, A_TYPE, PFVM_ATTR_GRAPH);
    pb_msg(&attr, A_G, &body);
    pb_node(&g, "cond_if", "If", "c", NULL, "y", &attr);
    pb_vinfo(&g, G_OUTPUT, "y", -1, NULL);
    pb_model_unnamed(&m, &g);
    model = load_pb(&m, &st);
    CHECK_MSG(model != NULL, "%s", st.msg);
    if (model && pfvm_onnx_save_memory(model, &bytes, &size, &st) == PFVM_OK)
        back = pfvm_onnx_load_memory(bytes, size, 0, &st);
    CHECK(back && !strcmp(back->graph->name, "main") &&
          !strcmp(back->graph->nodes[0]->attrs[0].g->name, "cond_if_then_branch"));
    pfvm_model_free(back);
    pfvm_model_free(model);
    pfvm_onnx_free(bytes);
    pb_free(&m);
}

static void test_graph_errors(void)
{
    pb g = {0}, m = {0}, t = {0}, a = {0};
    int64_t d1[1] = {2}, big[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1}, neg[1] = {-3};
    float vals[2] = {1, 2};
    int i;

    pb_vinfo(&g, G_INPUT, "x", 1, d1);
    pb_node(&g, "a", "Relu", "x", NULL, "y", NULL);
    pb_node(&g, "b", "Relu", "x", NULL, "y", NULL);
    pb_vinfo(&g, G_OUTPUT, "y", -1, NULL);
    pb_model(&m, &g);
    EXPECT_ERROR(&m, PFVM_ERR_INVALID, "output 'y' is already defined");

    pb_vinfo(&g, G_INPUT, "x", 1, d1);
    pb_node(&g, "a", "Relu", "missing", NULL, "y", NULL);
    pb_vinfo(&g, G_OUTPUT, "y", -1, NULL);
    pb_model(&m, &g);
    EXPECT_ERROR(&m, PFVM_ERR_INVALID, "node 'a' (Relu): input 'missing' is not defined");

    pb_vinfo(&g, G_INPUT, "x", 9, big);
    pb_vinfo(&g, G_OUTPUT, "x", -1, NULL);
    pb_model(&m, &g);
    EXPECT_ERROR(&m, PFVM_ERR_UNSUPPORTED, "PFVM_MAX_RANK");

    pb_vinfo(&g, G_INPUT, "x", 1, neg);
    pb_vinfo(&g, G_OUTPUT, "x", -1, NULL);
    pb_model(&m, &g);
    EXPECT_ERROR(&m, PFVM_ERR_INVALID, "negative dimension");

    pb_vinfo(&g, G_INPUT, "x", 1, d1);
    pb_vinfo(&g, G_INPUT, "x", 1, d1);
    pb_vinfo(&g, G_OUTPUT, "x", -1, NULL);
    pb_model(&m, &g);
    EXPECT_ERROR(&m, PFVM_ERR_INVALID, "input 'x' is listed twice");

    pb_vinfo(&g, G_OUTPUT, "nothing", -1, NULL);
    pb_model(&m, &g);
    EXPECT_ERROR(&m, PFVM_ERR_INVALID, "output 'nothing' is not defined");

    /* initializer data shorter than its dims */
    pb_tensor(&g, G_INIT, "w", 1, big, vals, 0);
    pb_vinfo(&g, G_OUTPUT, "w", -1, NULL);
    pb_model(&m, &g);
    EXPECT_ERROR(&m, PFVM_ERR_INVALID, "tensor 'w'");
    {
        int64_t huge[2] = {1000000000, 1000000000};
        pb_tensor(&g, G_INIT, "w", 2, huge, vals, 2);
        pb_vinfo(&g, G_OUTPUT, "w", -1, NULL);
        pb_model(&m, &g);
        EXPECT_ERROR(&m, PFVM_ERR_INVALID, "tensor 'w'");
    }
    pb_tensor(&g, G_INIT, "w", 9, big, vals, 1);
    pb_vinfo(&g, G_OUTPUT, "w", -1, NULL);
    pb_model(&m, &g);
    EXPECT_ERROR(&m, PFVM_ERR_UNSUPPORTED, "PFVM_MAX_RANK");

    /* segmented tensors */
    pb_int(&t, T_TYPE, PFVM_FLOAT);
    pb_str(&t, T_NAME, "seg");
    pb_msg(&t, T_SEGMENT, &a);
    pb_msg(&g, G_INIT, &t);
    pb_vinfo(&g, G_OUTPUT, "seg", -1, NULL);
    pb_model(&m, &g);
    EXPECT_ERROR(&m, PFVM_ERR_UNSUPPORTED, "segment");

    /* the same initializer twice */
    pb_tensor(&g, G_INIT, "w", 1, d1, vals, 2);
    pb_tensor(&g, G_INIT, "w", 1, d1, vals, 2);
    pb_vinfo(&g, G_OUTPUT, "w", -1, NULL);
    pb_model(&m, &g);
    EXPECT_ERROR(&m, PFVM_ERR_INVALID, "initializer 'w' is defined twice");

    /* an attribute with an unknown type */
    pb_str(&a, A_NAME, "alpha");
    pb_int(&a, A_TYPE, 99);
    pb_vinfo(&g, G_INPUT, "x", 1, d1);
    pb_node(&g, "e", "Elu", "x", NULL, "y", &a);
    pb_vinfo(&g, G_OUTPUT, "y", -1, NULL);
    pb_model(&m, &g);
    EXPECT_ERROR(&m, PFVM_ERR_INVALID, "node 'e' (Elu): attribute 'alpha' has unknown type 99");

    /* the same attribute twice */
    pb_str(&a, A_NAME, "alpha");
    pb_float(&a, A_F, 1);
    pb_msg(&t, N_ATTR, &a);
    pb_str(&a, A_NAME, "alpha");
    pb_float(&a, A_F, 2);
    pb_msg(&t, N_ATTR, &a);
    pb_str(&t, N_IN, "x");
    pb_str(&t, N_OUT, "y");
    pb_str(&t, N_OP, "Elu");
    pb_msg(&g, G_NODE, &t);
    pb_vinfo(&g, G_INPUT, "x", 1, d1);
    pb_vinfo(&g, G_OUTPUT, "y", -1, NULL);
    pb_model(&m, &g);
    EXPECT_ERROR(&m, PFVM_ERR_INVALID, "node 'Elu' (Elu): attribute 'alpha' is given twice");

    /* no graph at all; garbage; an empty buffer */
    pb_int(&m, M_IR, 8);
    EXPECT_ERROR(&m, PFVM_ERR_INVALID, "no graph");
    {
        static const unsigned char garbage[] = {0xff, 0xff, 0xff, 0xff, 0x0f};
        pfvm_status st;
        CHECK(pfvm_onnx_load_memory(garbage, sizeof garbage, 0, &st) == NULL && st.code == PFVM_ERR_PARSE);
        CHECK(pfvm_onnx_load_memory(garbage, 0, 0, &st) == NULL && st.msg[0]);
        CHECK(pfvm_onnx_load_file("/nonexistent/model.onnx", 0, &st) == NULL && st.code == PFVM_ERR_IO);
    }

    /* subgraphs nested past the depth limit */
    {
        pb cur = {0};
        pb_node(&cur, "leaf", "Constant", NULL, NULL, "c", NULL);
        for (i = 0; i < 80; i++) {
            pb attr = {0}, outer = {0};
            pb_str(&attr, A_NAME, "body");
            pb_int(&attr, A_TYPE, PFVM_ATTR_GRAPH);
            pb_msg(&attr, A_G, &cur);
            pb_node(&outer, NULL, "Wrap", NULL, NULL, NULL, &attr);
            cur = outer;
        }
        pb_model(&m, &cur);
        EXPECT_ERROR(&m, PFVM_ERR_UNSUPPORTED, "nested");
    }
}

/* All attribute kinds, a model-local function with a reference attribute,
 * metadata, node domains and doc strings survive the round trip; the saved
 * model's function is what was read. */
static void test_functions_and_attrs(void)
{
    pb g = {0}, m = {0}, f = {0}, a = {0}, fn = {0}, kv = {0}, op = {0};
    int64_t d2[1] = {2};
    float vals[2] = {0.5f, -1.5f};
    pfvm_status st;
    pfvm_model *model;
    /* function "Scale"(X) -> (Y) with attribute alpha: Y = Mul(X, Constant(alpha)) */
    pb_str(&f, F_NAME, "Scale");
    pb_str(&f, F_DOMAIN, "local");
    pb_str(&f, F_IN, "X");
    pb_str(&f, F_OUT, "Y");
    pb_str(&f, F_ATTR, "alpha");
    pb_str(&a, A_NAME, "value_float");
    pb_int(&a, A_TYPE, PFVM_ATTR_FLOAT);
    pb_str(&a, A_REF, "alpha");
    pb_str(&fn, N_OUT, "A");
    pb_str(&fn, N_OP, "Constant");
    pb_msg(&fn, N_ATTR, &a);
    pb_msg(&f, F_NODE, &fn);
    pb_str(&fn, N_IN, "X");
    pb_str(&fn, N_IN, "A");
    pb_str(&fn, N_OUT, "Y");
    pb_str(&fn, N_OP, "Mul");
    pb_msg(&f, F_NODE, &fn);
    pb_str(&op, 1, "");
    pb_int(&op, 2, 17);
    pb_msg(&f, F_OPSET, &op);

    /* main graph: input x, initializer w (also an input), every attribute kind */
    pb_str(&g, G_NAME, "main");
    pb_vinfo(&g, G_INPUT, "x", 1, d2);
    pb_vinfo(&g, G_INPUT, "w", 1, d2);
    pb_tensor(&g, G_INIT, "w", 1, d2, vals, 2);
    pb_str(&a, A_NAME, "alpha");
    pb_float(&a, A_F, 2.5f);
    pb_int(&a, A_TYPE, PFVM_ATTR_FLOAT);
    {
        pb n = {0}, a2 = {0}, a3 = {0}, a4 = {0};
        static const char bytes[3] = {'a', 0, 'b'}; /* strings are bytes */
        pb_str(&n, N_IN, "x");
        pb_str(&n, N_OUT, "s");
        pb_str(&n, N_NAME, "call");
        pb_str(&n, N_OP, "Scale");
        pb_str(&n, N_DOMAIN, "local");
        pb_msg(&n, N_ATTR, &a);
        pb_str(&a2, A_NAME, "blob");
        pb_bytes(&a2, A_S, bytes, 3);
        pb_int(&a2, A_TYPE, PFVM_ATTR_STRING);
        pb_msg(&n, N_ATTR, &a2);
        pb_str(&a3, A_NAME, "axes");
        pb_int(&a3, A_INTS, -1);
        pb_int(&a3, A_INTS, 1LL << 40);
        pb_int(&a3, A_TYPE, PFVM_ATTR_INTS);
        pb_msg(&n, N_ATTR, &a3);
        pb_str(&a4, A_NAME, "t");
        pb_tensor(&a4, A_T, "tv", 1, d2, vals, 2);
        pb_int(&a4, A_TYPE, PFVM_ATTR_TENSOR);
        pb_msg(&n, N_ATTR, &a4);
        pb_str(&n, 6 /* doc_string */, "calls the local function");
        pb_msg(&g, G_NODE, &n);
    }
    pb_node(&g, NULL, "Add", "s", "w", "y", NULL);
    pb_node(&g, NULL, "Relu", "y", NULL, "z", NULL);
    pb_vinfo(&g, G_VINFO, "y", 1, d2);
    pb_vinfo(&g, G_OUTPUT, "z", 1, d2);
    pb_model(&m, &g);
    pb_str(&kv, 1, "author");
    pb_str(&kv, 2, "pfvm");
    pb_msg(&m, M_META, &kv);
    pb_str(&op, 1, "local");
    pb_int(&op, 2, 1);
    pb_msg(&m, M_OPSET, &op);
    pb_msg(&m, M_FUNC, &f);
    model = load_pb(&m, &st);
    CHECK_MSG(model != NULL, "%s", st.msg);
    if (model) {
        const pfvm_function *fu = pfvm_model_num_functions(model) == 1 ? pfvm_model_function_at(model, 0) : NULL;
        const pfvm_node *call = pfvm_graph_node(model->graph, 0);
        const pfvm_value *w = pfvm_graph_find_local(model->graph, "w");
        const pfvm_attr *blob = pfvm_node_attr(call, "blob");
        CHECK(fu && !strcmp(fu->name, "Scale") && !strcmp(fu->domain, "local") && fu->n_attr_names == 1);
        CHECK(fu && pfvm_graph_num_nodes(fu->body) == 2 && fu->body->nodes[0]->attrs[0].ref_attr_name &&
              !strcmp(fu->body->nodes[0]->attrs[0].ref_attr_name, "alpha"));
        CHECK(fu && fu->n_opsets == 1 && fu->opsets[0].version == 17);
        CHECK(!strcmp(call->domain, "local") && !strcmp(call->doc, "calls the local function"));
        CHECK(pfvm_node_attr_float(call, "alpha", 0) == 2.5f);
        CHECK(blob && blob->s_len == 3 && blob->s[1] == 0 && blob->s[2] == 'b');
        CHECK(w && w->is_input && w->init && ((float *)w->init->data)[1] == -1.5f);
        CHECK(pfvm_model_num_metadata(model) == 1 && !strcmp(pfvm_model_metadata_at(model, 0)->value, "pfvm"));
        CHECK(pfvm_model_opset(model, "local") == 1);
        CHECK(pfvm_graph_find_local(model->graph, "y")->has_value_info);
        CHECK(round_trip(model, "functions and attributes"));
        if (save_dir) {
            char out[1024];
            snprintf(out, sizeof out, "%s/handmade__function.onnx", save_dir);
            pfvm_onnx_save_file(model, out, &st);
        }
    }
    pfvm_model_free(model);
    pb_free(&m);
}

/* Dims: constants are dim_values, symbols dim_params by name, other
 * expressions dim_params with their printed form, which read back as one
 * symbol of that name. Anonymous dims read as fresh symbols, never holes. */
static void test_symbolic_dims(void)
{
    pb g = {0}, m = {0};
    int64_t dims[3] = {-1, -2, 4};
    pfvm_status st;
    pfvm_model *model, *back = NULL;
    void *bytes = NULL;
    size_t size;
    pb_vinfo(&g, G_INPUT, "x", 3, dims);
    pb_node(&g, "r", "Relu", "x", NULL, "y", NULL);
    pb_vinfo(&g, G_OUTPUT, "y", 3, dims);
    pb_model(&m, &g);
    model = load_pb(&m, &st);
    CHECK_MSG(model != NULL, "%s", st.msg);
    if (model) {
        pfvm_value *x = pfvm_graph_find_local(model->graph, "x"), *y = pfvm_graph_find_local(model->graph, "y");
        const pfvm_sym *n = x->type.shape.dims[0], *anon = x->type.shape.dims[1];
        char buf[64];
        CHECK(n->kind == PFVM_SYM_VAR && !strcmp(n->name, "N") && n->pos);
        CHECK(anon && anon->kind == PFVM_SYM_VAR && !strcmp(anon->name, "x_d1") && !anon->pos);
        CHECK(y->type.shape.dims[0] == n && y->type.shape.dims[1] != anon); /* one symbol per name */
        /* an inferred type with an expression, declared as value_info */
        y->type.shape.dims[1] = pfvm_sym_mul(model->syms, n, pfvm_sym_const(model->syms, 64));
        y->has_value_info = 1;
        CHECK(pfvm_onnx_save_memory(model, &bytes, &size, &st) == PFVM_OK);
        back = bytes ? pfvm_onnx_load_memory(bytes, size, 0, &st) : NULL;
        CHECK_MSG(back != NULL, "%s", st.msg);
        if (back) {
            const pfvm_value *bx = pfvm_graph_find_local(back->graph, "x"), *by = pfvm_graph_find_local(back->graph, "y");
            pfvm_sym_print(y->type.shape.dims[1], buf, sizeof buf);
            CHECK(by->has_value_info && by->type.shape.dims[1]->kind == PFVM_SYM_VAR &&
                  !strcmp(by->type.shape.dims[1]->name, buf));
            CHECK(bx->type.shape.dims[1]->kind == PFVM_SYM_VAR && !strcmp(bx->type.shape.dims[1]->name, "x_d1"));
            CHECK(bx->type.shape.dims[0] == by->type.shape.dims[0]);
            CHECK(pfvm_sym_is_const(by->type.shape.dims[2], NULL));
        }
    }
    pfvm_model_free(back);
    pfvm_model_free(model);
    pfvm_onnx_free(bytes);
    pb_free(&m);
}

/* Sparse initializers become dense tensors; indices out of range fail. */
static void test_sparse(void)
{
    pb g = {0}, m = {0}, sp = {0}, idx = {0};
    int64_t d1[1] = {2}, dims[2] = {2, 3}, lin[2] = {1, 5};
    float vals[2] = {7, 9};
    pfvm_status st;
    pfvm_model *model;
    int pass;
    for (pass = 0; pass < 2; pass++) {
        pb_tensor(&sp, S_VALUES, "sp", 1, d1, vals, 2);
        pb_int(&idx, T_DIMS, 2);
        pb_int(&idx, T_TYPE, PFVM_INT64);
        lin[1] = pass ? 6 : 5; /* 6 is past the 2x3 tensor */
        pb_bytes(&idx, T_RAW, lin, sizeof lin);
        pb_msg(&sp, S_INDICES, &idx);
        pb_int(&sp, S_DIMS, dims[0]);
        pb_int(&sp, S_DIMS, dims[1]);
        pb_msg(&g, G_SPARSE, &sp);
        pb_vinfo(&g, G_OUTPUT, "sp", -1, NULL);
        pb_model(&m, &g);
        if (pass) {
            EXPECT_ERROR(&m, PFVM_ERR_RANGE, "sparse");
            continue;
        }
        model = load_pb(&m, &st);
        CHECK_MSG(model != NULL, "%s", st.msg);
        if (model) {
            const pfvm_value *v = pfvm_graph_find_local(model->graph, "sp");
            const float *d = v && v->init ? (const float *)v->init->data : NULL;
            CHECK(d && v->init->rank == 2 && d[0] == 0 && d[1] == 7 && d[5] == 9 && d[4] == 0);
            CHECK(round_trip(model, "sparse"));
        }
        pfvm_model_free(model);
        pb_free(&m);
    }
}

/* Typed fields (float_data, int32_data for narrow types) are converted. */
static void test_typed_fields(void)
{
    pb g = {0}, m = {0}, t = {0}, packed = {0};
    pfvm_status st;
    pfvm_model *model;
    pb_int(&t, T_DIMS, 3);
    pb_int(&t, T_TYPE, PFVM_FLOAT16);
    pb_int(&t, T_INT32, 0x3c00); /* 1.0 */
    pb_int(&t, T_INT32, 0xc000); /* -2.0 */
    pb_int(&t, T_INT32, 0);
    pb_str(&t, T_NAME, "h");
    pb_msg(&g, G_INIT, &t);
    pb_int(&t, T_DIMS, 2);
    pb_int(&t, T_TYPE, PFVM_INT8);
    pb_varint(&packed, (uint64_t)(int64_t)-5); /* packed int32_data */
    pb_varint(&packed, 7);
    pb_msg(&t, T_INT32, &packed);
    pb_str(&t, T_NAME, "i8");
    pb_msg(&g, G_INIT, &t);
    pb_int(&t, T_DIMS, 2);
    pb_int(&t, T_TYPE, PFVM_FLOAT);
    pb_float(&t, T_FLOATS, 1.25f);
    pb_float(&t, T_FLOATS, -3.0f);
    pb_str(&t, T_NAME, "f");
    pb_msg(&g, G_INIT, &t);
    pb_int(&t, T_DIMS, 2);
    pb_int(&t, T_TYPE, PFVM_INT64);
    pb_int(&t, 7 /* int64_data */, -1);
    pb_int(&t, 7, INT64_MAX);
    pb_str(&t, T_NAME, "i64");
    pb_msg(&g, G_INIT, &t);
    pb_int(&t, T_DIMS, 1);
    pb_int(&t, T_TYPE, PFVM_DOUBLE);
    {
        double d = -0.25;
        pb_tag(&t, 10 /* double_data */, 1);
        memcpy(pb_grow(&t, 8), &d, 8);
    }
    pb_str(&t, T_NAME, "f64");
    pb_msg(&g, G_INIT, &t);
    pb_int(&t, T_DIMS, 2);
    pb_int(&t, T_TYPE, PFVM_UINT32);
    pb_int(&t, 11 /* uint64_data */, 4000000000LL);
    pb_int(&t, 11, 3);
    pb_str(&t, T_NAME, "u32");
    pb_msg(&g, G_INIT, &t);
    pb_int(&t, T_DIMS, 2);
    pb_int(&t, T_TYPE, PFVM_STRING);
    pb_str(&t, 6 /* string_data */, "ab");
    pb_str(&t, 6, "");
    pb_str(&t, T_NAME, "str");
    pb_msg(&g, G_INIT, &t);
    /* 4-bit types: two elements per int32_data value or raw_data byte */
    pb_int(&t, T_DIMS, 3);
    pb_int(&t, T_TYPE, PFVM_INT4);
    pb_int(&t, T_INT32, 0x9f); /* -1, -7 */
    pb_int(&t, T_INT32, 0x05); /* 5 */
    pb_str(&t, T_NAME, "i4");
    pb_msg(&g, G_INIT, &t);
    pb_int(&t, T_DIMS, 3);
    pb_int(&t, T_TYPE, PFVM_UINT4);
    pb_bytes(&t, T_RAW, "\x9f\x05", 2); /* 15, 9, 5 */
    pb_str(&t, T_NAME, "u4");
    pb_msg(&g, G_INIT, &t);
    pb_vinfo(&g, G_OUTPUT, "h", -1, NULL);
    pb_model(&m, &g);
    model = load_pb(&m, &st);
    CHECK_MSG(model != NULL, "%s", st.msg);
    if (model) {
        const pfvm_graph *mg = model->graph;
        const pfvm_tensor *h = pfvm_graph_find_local(mg, "h")->init;
        const pfvm_tensor *i8 = pfvm_graph_find_local(mg, "i8")->init;
        const pfvm_tensor *f = pfvm_graph_find_local(mg, "f")->init;
        const pfvm_tensor *i64 = pfvm_graph_find_local(mg, "i64")->init;
        const pfvm_tensor *f64 = pfvm_graph_find_local(mg, "f64")->init;
        const pfvm_tensor *u32 = pfvm_graph_find_local(mg, "u32")->init;
        const pfvm_tensor *str = pfvm_graph_find_local(mg, "str")->init;
        const int8_t *i4 = (const int8_t *)pfvm_graph_find_local(mg, "i4")->init->data;
        const uint8_t *u4 = (const uint8_t *)pfvm_graph_find_local(mg, "u4")->init->data;
        CHECK(pfvm_tensor_get_f64(h, 0) == 1.0 && pfvm_tensor_get_f64(h, 1) == -2.0);
        CHECK(pfvm_tensor_get_i64(i8, 0) == -5 && pfvm_tensor_get_i64(i8, 1) == 7);
        CHECK(((float *)f->data)[0] == 1.25f && ((float *)f->data)[1] == -3.0f);
        CHECK(((int64_t *)i64->data)[0] == -1 && ((int64_t *)i64->data)[1] == INT64_MAX);
        CHECK(((double *)f64->data)[0] == -0.25);
        CHECK(((uint32_t *)u32->data)[0] == 4000000000u && ((uint32_t *)u32->data)[1] == 3);
        CHECK(!strcmp(((char **)str->data)[0], "ab") && !strcmp(((char **)str->data)[1], ""));
        CHECK(i4[0] == -1 && i4[1] == -7 && i4[2] == 5);
        CHECK(u4[0] == 15 && u4[1] == 9 && u4[2] == 5);
        CHECK(round_trip(model, "typed fields"));
    }
    pfvm_model_free(model);
    pb_free(&m);
    /* counts that do not match the dims */
    pb_int(&t, T_DIMS, 3);
    pb_int(&t, T_TYPE, PFVM_FLOAT);
    pb_float(&t, T_FLOATS, 1);
    pb_str(&t, T_NAME, "short");
    pb_msg(&g, G_INIT, &t);
    pb_vinfo(&g, G_OUTPUT, "short", -1, NULL);
    pb_model(&m, &g);
    EXPECT_ERROR(&m, PFVM_ERR_INVALID, "tensor 'short': 1 stored values for 3 elements");
    pb_int(&t, T_DIMS, 1);
    pb_int(&t, T_TYPE, PFVM_STRING);
    pb_bytes(&t, T_RAW, "x", 1);
    pb_str(&t, T_NAME, "rawstr");
    pb_msg(&g, G_INIT, &t);
    pb_vinfo(&g, G_OUTPUT, "rawstr", -1, NULL);
    pb_model(&m, &g);
    EXPECT_ERROR(&m, PFVM_ERR_INVALID, "string tensors cannot use raw_data");
    pb_int(&t, T_DIMS, 1);
    pb_int(&t, T_TYPE, 99);
    pb_str(&t, T_NAME, "odd");
    pb_msg(&g, G_INIT, &t);
    pb_vinfo(&g, G_OUTPUT, "odd", -1, NULL);
    pb_model(&m, &g);
    EXPECT_ERROR(&m, PFVM_ERR_UNSUPPORTED, "tensor 'odd': unknown element type 99");
}

/* Every attribute kind and every kind of type on a node of a custom
 * domain, and the doc strings of model, graph and values. */
static void test_all_attribute_kinds(void)
{
    pb g = {0}, m = {0}, n = {0}, a = {0}, sub = {0}, tp = {0}, x = {0}, y = {0}, op = {0};
    int64_t d1[1] = {1}, d2[1] = {2}, dims[2] = {2, 2}, lin[1] = {3};
    float vals[4] = {1, 2, 3, 4};
    pfvm_status st;
    pfvm_model *model;
    pb_str(&m, 6 /* doc_string */, "model doc");
    pb_int(&m, 5 /* model_version */, 42);
    pb_str(&g, 10 /* doc_string */, "graph doc");
    pb_vinfo(&g, G_INPUT, "x", 1, d2);
    /* inputs of map and sparse tensor types */
    pb_str(&x, V_NAME, "mp");
    pb_int(&y, 1 /* key_type */, PFVM_INT64);
    pb_int(&tp, TT_ELEM, PFVM_FLOAT);
    pb_msg(&sub, TP_TENSOR, &tp);
    pb_msg(&y, 2 /* value_type */, &sub);
    pb_msg(&tp, 5 /* map_type */, &y);
    pb_msg(&x, V_TYPE, &tp);
    pb_str(&x, 3 /* doc_string */, "a map");
    pb_msg(&g, G_INPUT, &x);
    pb_str(&x, V_NAME, "sp");
    pb_int(&y, TT_ELEM, PFVM_FLOAT);
    pb_bytes(&y, TT_SHAPE, NULL, 0); /* a scalar */
    pb_msg(&tp, 8 /* sparse_tensor_type */, &y);
    pb_msg(&x, V_TYPE, &tp);
    pb_msg(&g, G_INPUT, &x);
    pb_str(&n, N_IN, "x");
    pb_str(&n, N_IN, "");
    pb_str(&n, N_IN, "mp");
    pb_str(&n, N_OUT, "y");
    pb_str(&n, N_OUT, "");
    pb_str(&n, N_OP, "Everything");
    pb_str(&n, N_DOMAIN, "test.custom");
    pb_str(&a, A_NAME, "floats");
    pb_float(&a, 7, 0.5f);
    pb_float(&a, 7, -0.0f);
    pb_int(&a, A_TYPE, PFVM_ATTR_FLOATS);
    pb_str(&a, 13 /* doc_string */, "attribute doc");
    pb_msg(&n, N_ATTR, &a);
    pb_str(&a, A_NAME, "strings");
    pb_bytes(&a, 9, "a\0b", 3);
    pb_str(&a, 9, "");
    pb_int(&a, A_TYPE, PFVM_ATTR_STRINGS);
    pb_msg(&n, N_ATTR, &a);
    pb_str(&a, A_NAME, "tensors");
    pb_tensor(&a, 10, "t0", 1, d2, vals, 2);
    pb_tensor(&a, 10, "t1", 2, dims, vals, 4);
    pb_int(&a, A_TYPE, PFVM_ATTR_TENSORS);
    pb_msg(&n, N_ATTR, &a);
    pb_str(&a, A_NAME, "graphs");
    pb_str(&sub, G_NAME, "g0");
    pb_node(&sub, NULL, "Identity", "x", NULL, "inner", NULL);
    pb_vinfo(&sub, G_OUTPUT, "inner", -1, NULL);
    pb_msg(&a, 11, &sub);
    pb_str(&sub, G_NAME, "g1");
    pb_node(&sub, NULL, "Neg", "x", NULL, "inner", NULL);
    pb_vinfo(&sub, G_OUTPUT, "inner", -1, NULL);
    pb_msg(&a, 11, &sub);
    pb_int(&a, A_TYPE, PFVM_ATTR_GRAPHS);
    pb_msg(&n, N_ATTR, &a);
    pb_str(&a, A_NAME, "sparse");
    pb_tensor(&sub, S_VALUES, "spv", 1, d1, vals + 3, 1);
    pb_int(&x, T_DIMS, 1);
    pb_int(&x, T_TYPE, PFVM_INT64);
    pb_bytes(&x, T_RAW, lin, sizeof lin);
    pb_msg(&sub, S_INDICES, &x);
    pb_int(&sub, S_DIMS, 2);
    pb_int(&sub, S_DIMS, 2);
    pb_msg(&a, 22 /* sparse_tensor */, &sub);
    pb_int(&a, A_TYPE, PFVM_ATTR_SPARSE_TENSOR);
    pb_msg(&n, N_ATTR, &a);
    pb_str(&a, A_NAME, "tp");
    pb_int(&tp, TT_ELEM, PFVM_INT8);
    pb_msg(&y, TP_TENSOR, &tp);
    pb_msg(&a, 14 /* tp */, &y);
    pb_int(&a, A_TYPE, PFVM_ATTR_TYPE_PROTO);
    pb_msg(&n, N_ATTR, &a);
    pb_str(&a, A_NAME, "tps");
    /* seq(optional(bool)): TypeProto{sequence_type: {elem_type: TypeProto{
     * optional_type: {elem_type: TypeProto{tensor_type: {elem_type: BOOL}}}}}} */
    pb_int(&tp, TT_ELEM, PFVM_BOOL);
    pb_msg(&y, TP_TENSOR, &tp);
    pb_msg(&x, 1, &y);
    pb_msg(&tp, 9 /* optional_type */, &x);
    pb_msg(&y, 1, &tp);
    pb_msg(&x, 4 /* sequence_type */, &y);
    pb_msg(&a, 15 /* type_protos */, &x);
    pb_int(&a, A_TYPE, PFVM_ATTR_TYPE_PROTOS);
    pb_msg(&n, N_ATTR, &a);
    pb_msg(&g, G_NODE, &n);
    pb_vinfo(&g, G_OUTPUT, "y", 1, d2);
    pb_model(&m, &g);
    pb_str(&op, 1, "test.custom");
    pb_int(&op, 2, 1);
    pb_msg(&m, M_OPSET, &op);
    model = load_pb(&m, &st);
    CHECK_MSG(model != NULL, "%s", st.msg);
    if (model) {
        const pfvm_node *nd = model->graph->nodes[0];
        const pfvm_attr *at;
        const pfvm_value *mp = pfvm_graph_find_local(model->graph, "mp");
        CHECK(!strcmp(model->doc, "model doc") && model->model_version == 42 && !strcmp(model->graph->doc, "graph doc"));
        CHECK(mp && mp->type.kind == PFVM_KIND_MAP && mp->type.key_dtype == PFVM_INT64 && mp->type.elem &&
              mp->type.elem->dtype == PFVM_FLOAT && !strcmp(mp->doc, "a map"));
        CHECK(pfvm_graph_find_local(model->graph, "sp")->type.kind == PFVM_KIND_SPARSE);
        CHECK(nd->n_inputs == 3 && nd->inputs[1] == NULL && nd->n_outputs == 2 && nd->outputs[1] == NULL);
        CHECK(!strcmp(nd->domain, "test.custom") && nd->n_attrs == 7);
        at = pfvm_node_attr(nd, "floats");
        CHECK(at && at->n == 2 && at->floats[0] == 0.5f && !strcmp(at->doc, "attribute doc"));
        at = pfvm_node_attr(nd, "strings");
        CHECK(at && at->n == 2 && at->strings_len[0] == 3 && at->strings[0][2] == 'b' && at->strings_len[1] == 0);
        at = pfvm_node_attr(nd, "tensors");
        CHECK(at && at->n == 2 && at->tensors[1]->rank == 2 && ((float *)at->tensors[1]->data)[3] == 4);
        at = pfvm_node_attr(nd, "graphs");
        CHECK(at && at->n == 2 && !strcmp(at->graphs[1]->nodes[0]->op_type, "Neg") && at->graphs[1]->parent == model->graph);
        at = pfvm_node_attr(nd, "sparse");
        CHECK(at && at->t && at->t->rank == 2 && ((float *)at->t->data)[3] == 4 && ((float *)at->t->data)[0] == 0);
        at = pfvm_node_attr(nd, "tp");
        CHECK(at && at->tp && at->tp->kind == PFVM_KIND_TENSOR && at->tp->dtype == PFVM_INT8 && at->tp->shape.rank < 0);
        at = pfvm_node_attr(nd, "tps");
        CHECK(at && at->n == 1 && at->tps[0]->kind == PFVM_KIND_SEQUENCE && at->tps[0]->elem->kind == PFVM_KIND_OPTIONAL &&
              at->tps[0]->elem->elem->dtype == PFVM_BOOL);
        CHECK(round_trip(model, "all attribute kinds"));
        if (save_dir) {
            char out[1024];
            snprintf(out, sizeof out, "%s/handmade__attributes.onnx", save_dir);
            pfvm_onnx_save_file(model, out, &st);
        }
    }
    pfvm_model_free(model);
    pb_free(&m);
}

/* Aligned raw_data is viewed in place unless PFVM_LOAD_COPY is given. */
static void test_zero_copy(void)
{
    pb g = {0}, m = {0};
    int64_t d4[1] = {4};
    float vals[4] = {1, 2, 3, 4};
    pfvm_status st;
    pfvm_model *model;
    unsigned char *buf;
    size_t size, shift;
    int viewed_any = 0, copied_all = 1;
    pb_tensor(&g, G_INIT, "w", 1, d4, vals, 4);
    pb_vinfo(&g, G_OUTPUT, "w", -1, NULL);
    pb_model(&m, &g);
    size = m.n;
    buf = (unsigned char *)malloc(size + 8);
    /* at one of four shifts the raw bytes are 4-aligned, at the others not */
    for (shift = 0; shift < 4; shift++) {
        const unsigned char *d;
        memcpy(buf + shift, m.b, size);
        model = pfvm_onnx_load_memory(buf + shift, size, 0, &st);
        CHECK_MSG(model != NULL, "%s", st.msg);
        if (!model)
            continue;
        d = (const unsigned char *)model->graph->inits[0]->init->data;
        if (d >= buf && d < buf + size + 8) {
            viewed_any = 1;
            CHECK(((uintptr_t)d & 3) == 0);
        }
        CHECK(((const float *)(const void *)d)[3] == 4);
        pfvm_model_free(model);
        /* copied: the caller may free its bytes at once */
        model = pfvm_onnx_load_memory(buf + shift, size, PFVM_LOAD_COPY, &st);
        CHECK(model != NULL);
        if (model) {
            d = (const unsigned char *)model->graph->inits[0]->init->data;
            if (d >= buf && d < buf + size + 8)
                copied_all = 0;
            memset(buf, 0xee, size + 8);
            CHECK(((const float *)(const void *)d)[2] == 3);
        }
        pfvm_model_free(model);
    }
    CHECK(viewed_any);
    CHECK(copied_all);
    free(buf);
    pb_free(&m);
}

/* The writer aligns every raw_data in the file (PFVM_ONNX_WRITE_ALIGN):
 * a saved model, loaded from bytes so aligned, views every initializer in
 * place. Odd sizes and names shift the offsets every way; the torch export
 * mlp_mnist (unaligned raw_data: copied) comes back all in place. */
static void check_saved_in_place(pfvm_model *model, const char *label)
{
    void *bytes = NULL;
    unsigned char *buf;
    size_t size = 0, wa = (size_t)PFVM_ONNX_WRITE_ALIGN;
    pfvm_status st;
    pfvm_model *back;
    int i, n;
    CHECK_MSG(pfvm_onnx_save_memory(model, &bytes, &size, &st) == PFVM_OK, "%s: %s", label, st.msg);
    if (!bytes)
        return;
    buf = (unsigned char *)malloc(size + 256);
    /* the bytes at a 128-aligned address, as in flash */
    {
        unsigned char *at = buf + (128 - (uintptr_t)buf % 128) % 128;
        memcpy(at, bytes, size);
        back = pfvm_onnx_load_memory(at, size, 0, &st);
        CHECK_MSG(back != NULL, "%s: %s", label, st.msg);
        n = back ? pfvm_graph_num_initializers(back->graph) : 0;
        CHECK(n == pfvm_graph_num_initializers(model->graph));
        for (i = 0; i < n; i++) {
            const pfvm_tensor *t = back->graph->inits[i]->init, *o = model->graph->inits[i]->init;
            const unsigned char *d = (const unsigned char *)t->data;
            if (!t->nbytes)
                continue;
            if (wa > 1) { /* PFVM_ONNX_WRITE_ALIGN 0: no padding, no promise */
                CHECK_MSG(d >= at && d + t->nbytes <= at + size, "%s: initializer '%s' was copied", label,
                          back->graph->inits[i]->name);
                CHECK_MSG((size_t)(d - at) % wa == 0, "%s: '%s' at offset %zu", label, back->graph->inits[i]->name,
                          (size_t)(d - at));
            }
            CHECK(t->dtype == o->dtype && t->nbytes == o->nbytes && !memcmp(t->data, o->data, t->nbytes));
        }
        pfvm_model_free(back);
    }
    free(buf);
    pfvm_onnx_free(bytes);
}

static void test_aligned_save(void)
{
    static const pfvm_dtype types[] = {PFVM_UINT8, PFVM_FLOAT, PFVM_DOUBLE, PFVM_INT16, PFVM_INT64, PFVM_INT8, PFVM_FLOAT16};
    pb g = {0}, m = {0};
    pfvm_status st;
    pfvm_model *model;
    void *mlp;
    size_t size;
    int k;
    for (k = 0; k < 40; k++) {
        pb t = {0};
        char name[32];
        static unsigned char raw[32768];
        pfvm_dtype dt = types[k % 7];
        int64_t numel = 1 + (k * 37) % 300 + (k == 39 ? 2000 : 0);
        size_t j, nb = (size_t)numel * pfvm_dtype_size(dt);
        /* names of 1 to 20 characters */
        snprintf(name, sizeof name, "%.*s", 1 + k % 20, "w_abcdefghijklmnopqrstuvwxyz");
        name[0] = (char)('a' + k % 26);
        snprintf(name + strlen(name), sizeof name - strlen(name), "%d", k);
        for (j = 0; j < nb; j++)
            raw[j] = (unsigned char)(j * 7 + (size_t)k);
        pb_int(&t, T_DIMS, numel);
        pb_int(&t, T_TYPE, dt);
        pb_str(&t, T_NAME, name);
        pb_bytes(&t, T_RAW, raw, nb);
        pb_msg(&g, G_INIT, &t);
        pb_vinfo(&g, G_OUTPUT, name, -1, NULL);
    }
    pb_model(&m, &g);
    model = load_pb(&m, &st);
    CHECK_MSG(model != NULL, "%s", st.msg);
    if (model) {
        check_saved_in_place(model, "odd initializers");
        pfvm_model_free(model);
    }
    pb_free(&m);
    mlp = read_all("tests/models/mlp_mnist/model.onnx", &size);
    if (mlp) {
        model = pfvm_onnx_load_memory(mlp, size, PFVM_LOAD_COPY, &st);
        CHECK_MSG(model != NULL, "%s", st.msg);
        if (model) {
            check_saved_in_place(model, "mlp_mnist");
            pfvm_model_free(model);
        }
        pfvm_onnx_free(mlp);
    }
}

/* External data: read relative to the model's directory, with path and
 * bounds checks. */
static void write_file(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (f) {
        fwrite(data, 1, n, f);
        fclose(f);
    }
}

static void external_model(pb *m, const char *location, const char *offset, const char *length)
{
    pb g = {0}, t = {0}, kv = {0};
    pb_int(&t, T_DIMS, 3);
    pb_int(&t, T_TYPE, PFVM_FLOAT);
    pb_str(&t, T_NAME, "w");
    pb_str(&kv, 1, "location");
    pb_str(&kv, 2, location);
    pb_msg(&t, T_EXT, &kv);
    if (offset) {
        pb_str(&kv, 1, "offset");
        pb_str(&kv, 2, offset);
        pb_msg(&t, T_EXT, &kv);
    }
    if (length) {
        pb_str(&kv, 1, "length");
        pb_str(&kv, 2, length);
        pb_msg(&t, T_EXT, &kv);
    }
    pb_int(&t, T_LOC, 1);
    pb_msg(&g, G_INIT, &t);
    pb_vinfo(&g, G_OUTPUT, "w", -1, NULL);
    pb_model(m, &g);
}

static pfvm_model *load_external(const char *dir, const char *location, const char *offset, const char *length,
                                 pfvm_status *st)
{
    pb m = {0};
    char path[512];
    pfvm_model *model;
    external_model(&m, location, offset, length);
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    write_file(path, m.b, m.n);
    pb_free(&m);
    model = pfvm_onnx_load_file(path, 0, st);
    return model;
}

static void test_external(void)
{
    char dir[] = "/tmp/pfvm_onnx_io_XXXXXX", path[512];
    float data[5] = {9, 1, 2, 3, 9};
    pfvm_status st;
    pfvm_model *m;
    if (!mkdtemp(dir)) {
        CHECK_MSG(0, "mkdtemp failed");
        return;
    }
    snprintf(path, sizeof path, "%s/w.bin", dir);
    write_file(path, data, sizeof data);
    m = load_external(dir, "w.bin", "4", "12", &st);
    CHECK_MSG(m != NULL, "%s", st.msg);
    if (m) {
        const float *w = (const float *)pfvm_graph_find_local(m->graph, "w")->init->data;
        CHECK(w[0] == 1 && w[2] == 3);
        /* saved back with the data inline */
        CHECK(round_trip(m, "external data"));
    }
    pfvm_model_free(m);
    m = load_external(dir, "../w.bin", NULL, NULL, &st);
    CHECK(!m && strstr(st.msg, "leaves the model's directory"));
    pfvm_model_free(m);
    m = load_external(dir, "/etc/passwd", NULL, NULL, &st);
    CHECK(!m && strstr(st.msg, "leaves the model's directory"));
    pfvm_model_free(m);
    m = load_external(dir, "w.bin", "12", NULL, &st); /* 12 + 12 > 20 bytes */
    CHECK(!m && strstr(st.msg, "shorter"));
    pfvm_model_free(m);
    m = load_external(dir, "w.bin", "0", "8", &st);
    CHECK(!m && strstr(st.msg, "length"));
    pfvm_model_free(m);
    m = load_external(dir, "w.bin", "-4", NULL, &st);
    CHECK(!m && st.code != PFVM_OK);
    pfvm_model_free(m);
    m = load_external(dir, "missing.bin", NULL, NULL, &st);
    CHECK(!m && st.code == PFVM_ERR_IO);
    pfvm_model_free(m);
    /* from memory there is no directory to read from */
    {
        pb mm = {0};
        external_model(&mm, "w.bin", NULL, NULL);
        EXPECT_ERROR(&mm, PFVM_ERR_IO, "external data");
    }
    snprintf(path, sizeof path, "%s/w.bin", dir);
    remove(path);
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    remove(path);
    rmdir(dir);
    /* the fixture the CLI tests use */
    if (file_exists("tests/models/mlp_external/model.onnx")) {
        m = pfvm_onnx_load_file("tests/models/mlp_external/model.onnx", 0, &st);
        CHECK_MSG(m != NULL, "mlp_external: %s", st.msg);
        pfvm_model_free(m);
    }
}

/* ---- value files ---------------------------------------------------------------- */

static void test_values(void)
{
    pfvm_status st;
    pfvm_tensor *t, *back, *seq, *opt;
    void *bytes;
    size_t size, cut;
    int64_t dims[2] = {2, 3};
    float data[6] = {1, 2, 3, 4, 5, 6};
    t = pfvm_tensor_view(PFVM_FLOAT, 2, dims, data, &st);
    CHECK(pfvm_onnx_write_value(t, &bytes, &size, &st) == PFVM_OK);
    back = pfvm_onnx_read_value(bytes, size, PFVM_KIND_UNKNOWN, &st);
    CHECK(back && same_tensor(t, back));
    pfvm_tensor_free(back);
    /* every truncation fails cleanly */
    for (cut = 0; cut < size; cut++) {
        back = pfvm_onnx_read_value(bytes, cut, PFVM_KIND_TENSOR, &st);
        CHECK(back == NULL ? st.code != PFVM_OK && st.msg[0] : 1);
        pfvm_tensor_free(back);
    }
    pfvm_onnx_free(bytes);
    /* a sequence of two tensors, an empty optional, an optional holding a sequence */
    seq = pfvm_tensor_sequence_new(PFVM_FLOAT, &st);
    CHECK(seq && pfvm_tensor_push_elem(seq, pfvm_tensor_clone(t, &st), &st) == PFVM_OK &&
          pfvm_tensor_push_elem(seq, pfvm_tensor_clone(t, &st), &st) == PFVM_OK && pfvm_tensor_num_elems(seq) == 2);
    CHECK(pfvm_onnx_write_value(seq, &bytes, &size, &st) == PFVM_OK);
    back = pfvm_onnx_read_value(bytes, size, PFVM_KIND_SEQUENCE, &st);
    CHECK(back && same_tensor(seq, back) && back->elem_dtype == PFVM_FLOAT);
    pfvm_tensor_free(back);
    pfvm_onnx_free(bytes);
    opt = pfvm_tensor_optional_new(PFVM_UNDEFINED, &st);
    CHECK(pfvm_onnx_write_value(opt, &bytes, &size, &st) == PFVM_OK);
    back = pfvm_onnx_read_value(bytes, size, PFVM_KIND_OPTIONAL, &st);
    CHECK(back && back->kind == PFVM_KIND_OPTIONAL && !back->has_value);
    pfvm_tensor_free(back);
    pfvm_onnx_free(bytes);
    CHECK(pfvm_tensor_push_elem(opt, seq, &st) == PFVM_OK && opt->has_value);
    CHECK(pfvm_onnx_write_value(opt, &bytes, &size, &st) == PFVM_OK);
    back = pfvm_onnx_read_value(bytes, size, PFVM_KIND_OPTIONAL, &st);
    CHECK(back && same_tensor(opt, back) && pfvm_tensor_elem(back, 0)->kind == PFVM_KIND_SEQUENCE);
    pfvm_tensor_free(back);
    pfvm_onnx_free(bytes);
    pfvm_tensor_free(opt);
    pfvm_tensor_free(t);
    /* strings own their bytes */
    {
        int64_t d1[1] = {2};
        t = pfvm_tensor_new(PFVM_STRING, 1, d1, &st);
        pfvm_tensor_set_string(t, 0, "hello", NULL);
        pfvm_tensor_set_string(t, 1, "", NULL);
        CHECK(pfvm_onnx_write_value(t, &bytes, &size, &st) == PFVM_OK);
        back = pfvm_onnx_read_value(bytes, size, PFVM_KIND_TENSOR, &st);
        pfvm_onnx_free(bytes);
        CHECK(back && same_tensor(t, back) && back->owns_strings);
        pfvm_tensor_free(back);
        pfvm_tensor_free(t);
    }
    /* empty tensors have no data pointer to write */
    {
        int64_t d0[2] = {0, 3};
        t = pfvm_tensor_view(PFVM_FLOAT, 2, d0, NULL, &st);
        CHECK(t && pfvm_onnx_write_value(t, &bytes, &size, &st) == PFVM_OK);
        back = pfvm_onnx_read_value(bytes, size, PFVM_KIND_TENSOR, &st);
        CHECK(back && back->rank == 2 && back->dims[0] == 0 && back->dims[1] == 3);
        pfvm_tensor_free(back);
        pfvm_onnx_free(bytes);
        pfvm_tensor_free(t);
    }
    /* the suites' files for sequences and optionals */
    t = pfvm_onnx_read_value_file(NODE_DIR "test_sequence_insert_at_back/test_data_set_0/input_0.pb",
                                  PFVM_KIND_SEQUENCE, &st);
    if (t)
        CHECK(t->kind == PFVM_KIND_SEQUENCE && pfvm_tensor_num_elems(t) > 0 &&
              pfvm_tensor_elem(t, 0)->kind == PFVM_KIND_TENSOR);
    pfvm_tensor_free(t);
    t = pfvm_onnx_read_value_file(NODE_DIR "test_optional_get_element_sequence/test_data_set_0/input_0.pb",
                                  PFVM_KIND_OPTIONAL, &st);
    if (t)
        CHECK(t->kind == PFVM_KIND_OPTIONAL && t->has_value && pfvm_tensor_elem(t, 0)->kind == PFVM_KIND_SEQUENCE);
    pfvm_tensor_free(t);
}

/* ---- corruption ------------------------------------------------------------------ */

/* Truncations at many lengths and random byte flips of a real model: each
 * must load or fail with a message; nothing may crash or leak. */
static void test_corruption(const char *path, int variants, unsigned seed)
{
    size_t size, cut;
    unsigned char *bytes, *copy;
    int i, silent = 0, loaded = 0;
    bytes = (unsigned char *)read_all(path, &size);
    if (!bytes)
        return;
    copy = (unsigned char *)malloc(size);
    for (i = 0; i < variants && copy; i++) {
        pfvm_status st;
        pfvm_model *m;
        memcpy(copy, bytes, size);
        cut = size;
        if (i % 2) {
            int f;
            for (f = 0; f < 1 + i % 7; f++) {
                seed = seed * 1103515245u + 12345u;
                copy[(seed >> 8) % size] = (unsigned char)(seed >> 20);
            }
        } else {
            cut = (size_t)i * size / (size_t)variants;
        }
        st.msg[0] = 0;
        /* loading from a tightly sized heap block lets ASan see overreads */
        {
            unsigned char *exact = (unsigned char *)malloc(cut ? cut : 1);
            memcpy(exact, copy, cut);
            m = pfvm_onnx_load_memory(exact, cut, i % 4 == 1 ? PFVM_LOAD_COPY : 0, &st);
            if (!m && (!st.msg[0] || st.code == PFVM_OK))
                silent++;
            if (m) {
                loaded++;
                /* what loads must also save */
                {
                    void *out;
                    size_t n;
                    if (pfvm_onnx_save_memory(m, &out, &n, &st) == PFVM_OK)
                        pfvm_onnx_free(out);
                }
            }
            pfvm_model_free(m);
            free(exact);
        }
    }
    CHECK_MSG(silent == 0, "%s: %d corrupted models failed without a message", path, silent);
    printf("corrupted %s: %d variants, %d still loaded\n", path, variants, loaded);
    free(copy);
    pfvm_onnx_free(bytes);
}

/* Corrupted value files likewise. */
static void test_value_corruption(const char *path, pfvm_kind kind, int variants)
{
    size_t size;
    unsigned char *bytes = (unsigned char *)read_all(path, &size), *copy;
    unsigned seed = 99;
    int i, silent = 0;
    if (!bytes)
        return;
    for (i = 0; i < variants; i++) {
        pfvm_status st;
        pfvm_tensor *t;
        size_t cut = i % 2 ? size : (size_t)i * size / (size_t)variants;
        copy = (unsigned char *)malloc(size);
        memcpy(copy, bytes, size);
        if (i % 2) {
            seed = seed * 1103515245u + 12345u;
            copy[(seed >> 8) % size] = (unsigned char)(seed >> 20);
        }
        st.msg[0] = 0;
        t = pfvm_onnx_read_value(copy, cut, kind, &st);
        if (!t && !st.msg[0])
            silent++;
        pfvm_tensor_free(t);
        free(copy);
    }
    CHECK_MSG(silent == 0, "%s: %d corrupted files failed without a message", path, silent);
    pfvm_onnx_free(bytes);
}

/* --fuzz N (a development aid, not run by default): N mutations of every
 * model of the node suite and of its value files: byte flips, varint
 * bumps, inserted and deleted runs, truncations. */
static unsigned fuzz_rand(unsigned *seed)
{
    *seed = *seed * 1103515245u + 12345u;
    return *seed >> 8;
}

static size_t fuzz_mutate(unsigned char *buf, size_t size, size_t cap, unsigned *seed)
{
    unsigned kind = fuzz_rand(seed) % 5, k;
    size_t at = size ? fuzz_rand(seed) % size : 0, n = 1 + fuzz_rand(seed) % 8;
    switch (kind) {
    case 0: /* flip bytes */
        for (k = 0; k < n && size; k++)
            buf[fuzz_rand(seed) % size] ^= (unsigned char)(1u << (fuzz_rand(seed) % 8));
        return size;
    case 1: /* set a byte to an interesting value */
        if (size) {
            static const unsigned char vals[] = {0, 1, 0x7f, 0x80, 0xff, 0x08, 0x12, 0x1a};
            buf[at] = vals[fuzz_rand(seed) % sizeof vals];
        }
        return size;
    case 2: /* delete a run */
        if (at + n > size)
            n = size - at;
        memmove(buf + at, buf + at + n, size - at - n);
        return size - n;
    case 3: /* duplicate a run */
        if (at + n > size)
            n = size - at;
        if (size + n > cap)
            return size;
        memmove(buf + at + n, buf + at, size - at);
        return size + n;
    default: /* truncate */
        return at;
    }
}

static void fuzz_file(const char *path, int is_model, pfvm_kind kind, int rounds, unsigned seed)
{
    size_t size, cap, n;
    unsigned char *orig = (unsigned char *)read_all(path, &size), *buf;
    int i, m, silent = 0;
    if (!orig)
        return;
    cap = size + 64;
    for (i = 0; i < rounds; i++) {
        pfvm_status st;
        buf = (unsigned char *)malloc(cap);
        memcpy(buf, orig, size);
        n = size;
        for (m = 0; m < 1 + i % 4; m++)
            n = fuzz_mutate(buf, n, cap, &seed);
        /* an exact-size block, so that ASan sees any overread */
        buf = (unsigned char *)realloc(buf, n ? n : 1);
        st.msg[0] = 0;
        if (is_model) {
            pfvm_model *md = pfvm_onnx_load_memory(buf, n, 0, &st);
            if (md) {
                void *out;
                size_t on;
                if (pfvm_onnx_save_memory(md, &out, &on, &st) == PFVM_OK)
                    pfvm_onnx_free(out);
            } else if (!st.msg[0]) {
                silent++;
            }
            pfvm_model_free(md);
        } else {
            pfvm_tensor *t = pfvm_onnx_read_value(buf, n, kind, &st);
            if (!t && !st.msg[0])
                silent++;
            pfvm_tensor_free(t);
        }
        free(buf);
    }
    CHECK_MSG(silent == 0, "%s: %d fuzzed inputs failed without a message", path, silent);
    pfvm_onnx_free(orig);
}

static void fuzz_suite(int rounds)
{
    DIR *d = opendir(NODE_DIR);
    struct dirent *e;
    unsigned seed = 7;
    int count = 0;
    if (!d)
        return;
    while ((e = readdir(d)) != NULL) {
        char path[1024];
        pfvm_status st;
        pfvm_model *m;
        int i;
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, NODE_DIR "%s/model.onnx", e->d_name);
        fuzz_file(path, 1, PFVM_KIND_UNKNOWN, rounds, seed++);
        m = pfvm_onnx_load_file(path, 0, &st);
        for (i = 0; m && i < pfvm_graph_num_outputs(m->graph); i++) {
            snprintf(path, sizeof path, NODE_DIR "%s/test_data_set_0/output_%d.pb", e->d_name, i);
            fuzz_file(path, 0, value_kind(m->graph->outputs[i]), rounds / 4 + 1, seed++);
        }
        pfvm_model_free(m);
        count++;
    }
    closedir(d);
    printf("fuzzed %d models, %d rounds each\n", count, rounds);
}

int main(int argc, char **argv)
{
    int i;
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--save") && i + 1 < argc)
            save_dir = argv[++i];
        if (!strcmp(argv[i], "--fuzz") && i + 1 < argc) {
            fuzz_suite(atoi(argv[++i]));
            return CHECK_END();
        }
    }
    test_named_models();
    test_outer_scope();
    test_graph_errors();
    test_graph_names();
    test_functions_and_attrs();
    test_symbolic_dims();
    test_sparse();
    test_typed_fields();
    test_all_attribute_kinds();
    test_zero_copy();
    test_aligned_save();
    test_external();
    test_values();
    test_corruption(NODE_DIR "test_if/model.onnx", 300, 1);
    test_corruption(NODE_DIR "test_loop11/model.onnx", 300, 2);
    test_corruption(NODE_DIR "test_scan9_sum/model.onnx", 200, 3);
    test_corruption(NODE_DIR "test_sequence_insert_at_back/model.onnx", 100, 4);
    test_corruption(NODE_DIR "test_strnormalizer_export_monday_casesensintive_lower/model.onnx", 100, 5);
    test_corruption(DATA_DIR "pytorch-converted/test_ConvTranspose2d/model.onnx", 200, 6);
    test_value_corruption(NODE_DIR "test_sequence_insert_at_back/test_data_set_0/input_0.pb", PFVM_KIND_SEQUENCE, 200);
    test_value_corruption(NODE_DIR "test_optional_get_element_sequence/test_data_set_0/input_0.pb", PFVM_KIND_OPTIONAL,
                          100);
    test_suite(DATA_DIR "node", "node");
    test_suite(DATA_DIR "pytorch-converted", "pytorch-converted");
    test_suite(DATA_DIR "pytorch-operator", "pytorch-operator");
    test_suite(DATA_DIR "simple", "simple");
    /* the repository's torch exports (external data among them), when run
     * from the repository root */
    test_suite("tests/models", "models");
    return CHECK_END();
}
