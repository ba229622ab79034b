#include "onnx_io.h"
#include "onnx.pb.h"

#include <pb_encode.h>
#ifndef PFVM_NO_STDIO
#include <stdio.h>
#endif

#ifndef PFVM_NO_ONNX_WRITER

/* Every message is written by a function of this shape; a submessage is
 * written twice, once to a sizing stream for its length prefix. */
typedef bool (*pfvm__onnx_enc_fn)(pb_ostream_t *s, const void *arg);

static bool pfvm__onnx_sub(pb_ostream_t *s, uint32_t tag, pfvm__onnx_enc_fn fn, const void *arg)
{
    pb_ostream_t sz = PB_OSTREAM_SIZING;
    size_t before;
    if (!fn(&sz, arg))
        return false;
    if (!pb_encode_tag(s, PB_WT_STRING, tag) || !pb_encode_varint(s, (uint64_t)sz.bytes_written))
        return false;
    if (!s->callback) { /* sizing the parent: the child's size is known */
        s->bytes_written += sz.bytes_written;
        return true;
    }
    before = s->bytes_written;
    return fn(s, arg) && s->bytes_written - before == sz.bytes_written;
}

static bool pfvm__onnx_put_bytes(pb_ostream_t *s, uint32_t tag, const void *p, size_t n)
{
    return pb_encode_tag(s, PB_WT_STRING, tag) && pb_encode_string(s, (const pb_byte_t *)p, n);
}

/* Strings are written only when non-empty (proto2 optional fields). */
static bool pfvm__onnx_put_str(pb_ostream_t *s, uint32_t tag, const char *str)
{
    if (!str || !str[0])
        return true;
    return pfvm__onnx_put_bytes(s, tag, str, strlen(str));
}

static bool pfvm__onnx_put_int(pb_ostream_t *s, uint32_t tag, int64_t v)
{
    return pb_encode_tag(s, PB_WT_VARINT, tag) && pb_encode_varint(s, (uint64_t)v);
}

/* ---- tensors ----------------------------------------------------------------- */

static bool pfvm__onnx_enc_tensor(pb_ostream_t *s, const void *arg)
{
    const pfvm_tensor *t = (const pfvm_tensor *)arg;
    int i;
    int64_t n = pfvm_tensor_numel(t);
    for (i = 0; i < t->rank; i++)
        if (!pfvm__onnx_put_int(s, onnx_TensorProto_dims_tag, t->dims[i]))
            return false;
    if (!pfvm__onnx_put_int(s, onnx_TensorProto_data_type_tag, (int64_t)t->dtype))
        return false;
    if (t->dtype == PFVM_STRING) {
        for (i = 0; i < n; i++) {
            const char *str = ((char *const *)t->data)[i];
            if (!pfvm__onnx_put_bytes(s, onnx_TensorProto_string_data_tag, str ? str : "", str ? strlen(str) : 0))
                return false;
        }
    }
    if (!pfvm__onnx_put_str(s, onnx_TensorProto_name_tag, t->name))
        return false;
    if (t->dtype != PFVM_STRING) {
        size_t bytes = (size_t)n * pfvm_dtype_size(t->dtype);
        /* raw_data is little-endian; pfvm targets little-endian hosts here */
        if (!pfvm__onnx_put_bytes(s, onnx_TensorProto_raw_data_tag, t->data, bytes))
            return false;
    }
    return true;
}

/* ---- types ---------------------------------------------------------------------- */

static bool pfvm__onnx_enc_dim(pb_ostream_t *s, const void *arg)
{
    const pfvm_sym *d = (const pfvm_sym *)arg;
    char buf[512];
    int64_t v;
    if (pfvm_sym_is_const(d, &v))
        return pfvm__onnx_put_int(s, onnx_TensorShapeProto_Dimension_dim_value_tag, v);
    /* symbols that only stand for an unknown (not named by the model, not
     * provably >= 1) are written as unknown dims */
    if (d->kind == PFVM_SYM_VAR && !d->pos)
        return true;
    pfvm_sym_print(d, buf, sizeof buf);
    return pfvm__onnx_put_str(s, onnx_TensorShapeProto_Dimension_dim_param_tag, buf);
}

static bool pfvm__onnx_enc_shape(pb_ostream_t *s, const void *arg)
{
    const pfvm_shape *sh = (const pfvm_shape *)arg;
    int i;
    for (i = 0; i < sh->rank; i++)
        if (!pfvm__onnx_sub(s, onnx_TensorShapeProto_dim_tag, pfvm__onnx_enc_dim, sh->dims[i]))
            return false;
    return true;
}

static bool pfvm__onnx_enc_type(pb_ostream_t *s, const void *arg);

static bool pfvm__onnx_enc_tensor_type(pb_ostream_t *s, const void *arg)
{
    const pfvm_type *t = (const pfvm_type *)arg;
    if (t->dtype && !pfvm__onnx_put_int(s, onnx_TypeProto_Tensor_elem_type_tag, (int64_t)t->dtype))
        return false;
    if (t->shape.rank >= 0 && !pfvm__onnx_sub(s, onnx_TypeProto_Tensor_shape_tag, pfvm__onnx_enc_shape, &t->shape))
        return false;
    return true;
}

static bool pfvm__onnx_enc_elem_type(pb_ostream_t *s, const void *arg)
{
    const pfvm_type *t = (const pfvm_type *)arg;
    return !t->elem || pfvm__onnx_sub(s, 1, pfvm__onnx_enc_type, t->elem);
}

static bool pfvm__onnx_enc_map_type(pb_ostream_t *s, const void *arg)
{
    const pfvm_type *t = (const pfvm_type *)arg;
    return pfvm__onnx_put_int(s, onnx_TypeProto_Map_key_type_tag, (int64_t)t->key_dtype) &&
           (!t->elem || pfvm__onnx_sub(s, onnx_TypeProto_Map_value_type_tag, pfvm__onnx_enc_type, t->elem));
}

static bool pfvm__onnx_enc_type(pb_ostream_t *s, const void *arg)
{
    const pfvm_type *t = (const pfvm_type *)arg;
    switch (t->kind) {
    case PFVM_KIND_TENSOR: return pfvm__onnx_sub(s, onnx_TypeProto_tensor_type_tag, pfvm__onnx_enc_tensor_type, t);
    case PFVM_KIND_SPARSE: return pfvm__onnx_sub(s, onnx_TypeProto_sparse_tensor_type_tag, pfvm__onnx_enc_tensor_type, t);
    case PFVM_KIND_SEQUENCE: return pfvm__onnx_sub(s, onnx_TypeProto_sequence_type_tag, pfvm__onnx_enc_elem_type, t);
    case PFVM_KIND_OPTIONAL: return pfvm__onnx_sub(s, onnx_TypeProto_optional_type_tag, pfvm__onnx_enc_elem_type, t);
    case PFVM_KIND_MAP: return pfvm__onnx_sub(s, onnx_TypeProto_map_type_tag, pfvm__onnx_enc_map_type, t);
    default: return true;
    }
}

static bool pfvm__onnx_enc_value_info(pb_ostream_t *s, const void *arg)
{
    const pfvm_value *v = (const pfvm_value *)arg;
    if (!pfvm__onnx_put_str(s, onnx_ValueInfoProto_name_tag, v->name))
        return false;
    if (v->type.kind != PFVM_KIND_UNKNOWN && !pfvm__onnx_sub(s, onnx_ValueInfoProto_type_tag, pfvm__onnx_enc_type, &v->type))
        return false;
    return pfvm__onnx_put_str(s, onnx_ValueInfoProto_doc_string_tag, v->doc);
}

/* ---- nodes and attributes -------------------------------------------------------- */

static bool pfvm__onnx_enc_graph(pb_ostream_t *s, const void *arg);

static bool pfvm__onnx_enc_attr(pb_ostream_t *s, const void *arg)
{
    const pfvm_attr *a = (const pfvm_attr *)arg;
    int i;
    if (!pfvm__onnx_put_str(s, onnx_AttributeProto_name_tag, a->name))
        return false;
    if (a->ref_attr_name && !pfvm__onnx_put_str(s, onnx_AttributeProto_ref_attr_name_tag, a->ref_attr_name))
        return false;
    if (!pfvm__onnx_put_str(s, onnx_AttributeProto_doc_string_tag, a->doc))
        return false;
    if (!pfvm__onnx_put_int(s, onnx_AttributeProto_type_tag, (int64_t)a->type))
        return false;
    switch (a->type) {
    case PFVM_ATTR_FLOAT:
        return pb_encode_tag(s, PB_WT_32BIT, onnx_AttributeProto_f_tag) && pb_encode_fixed32(s, &a->f);
    case PFVM_ATTR_INT: return pfvm__onnx_put_int(s, onnx_AttributeProto_i_tag, a->i);
    case PFVM_ATTR_STRING: return pfvm__onnx_put_bytes(s, onnx_AttributeProto_s_tag, a->s ? a->s : "", a->s ? a->s_len : 0);
    case PFVM_ATTR_TENSOR:
    case PFVM_ATTR_SPARSE_TENSOR: /* densified on load: written back dense */
        return !a->t || pfvm__onnx_sub(s, onnx_AttributeProto_t_tag, pfvm__onnx_enc_tensor, a->t);
    case PFVM_ATTR_GRAPH: return !a->g || pfvm__onnx_sub(s, onnx_AttributeProto_g_tag, pfvm__onnx_enc_graph, a->g);
    case PFVM_ATTR_TYPE_PROTO: return !a->tp || pfvm__onnx_sub(s, onnx_AttributeProto_tp_tag, pfvm__onnx_enc_type, a->tp);
    case PFVM_ATTR_FLOATS:
        for (i = 0; i < a->n; i++)
            if (!pb_encode_tag(s, PB_WT_32BIT, onnx_AttributeProto_floats_tag) || !pb_encode_fixed32(s, &a->floats[i]))
                return false;
        return true;
    case PFVM_ATTR_INTS:
        for (i = 0; i < a->n; i++)
            if (!pfvm__onnx_put_int(s, onnx_AttributeProto_ints_tag, a->ints[i]))
                return false;
        return true;
    case PFVM_ATTR_STRINGS:
        for (i = 0; i < a->n; i++)
            if (!pfvm__onnx_put_bytes(s, onnx_AttributeProto_strings_tag, a->strings[i],
                                      a->strings_len ? a->strings_len[i] : strlen(a->strings[i])))
                return false;
        return true;
    case PFVM_ATTR_TENSORS:
        for (i = 0; i < a->n; i++)
            if (!pfvm__onnx_sub(s, onnx_AttributeProto_tensors_tag, pfvm__onnx_enc_tensor, a->tensors[i]))
                return false;
        return true;
    case PFVM_ATTR_GRAPHS:
        for (i = 0; i < a->n; i++)
            if (!pfvm__onnx_sub(s, onnx_AttributeProto_graphs_tag, pfvm__onnx_enc_graph, a->graphs[i]))
                return false;
        return true;
    case PFVM_ATTR_TYPE_PROTOS:
        for (i = 0; i < a->n; i++)
            if (!pfvm__onnx_sub(s, onnx_AttributeProto_type_protos_tag, pfvm__onnx_enc_type, a->tps[i]))
                return false;
        return true;
    default:
        return true;
    }
}

static bool pfvm__onnx_enc_node(pb_ostream_t *s, const void *arg)
{
    const pfvm_node *n = (const pfvm_node *)arg;
    int i;
    for (i = 0; i < n->n_inputs; i++)
        if (!pfvm__onnx_put_bytes(s, onnx_NodeProto_input_tag, n->inputs[i] ? n->inputs[i]->name : "",
                                  n->inputs[i] ? strlen(n->inputs[i]->name) : 0))
            return false;
    for (i = 0; i < n->n_outputs; i++)
        if (!pfvm__onnx_put_bytes(s, onnx_NodeProto_output_tag, n->outputs[i] ? n->outputs[i]->name : "",
                                  n->outputs[i] ? strlen(n->outputs[i]->name) : 0))
            return false;
    if (!pfvm__onnx_put_str(s, onnx_NodeProto_name_tag, n->name) ||
        !pfvm__onnx_put_str(s, onnx_NodeProto_op_type_tag, n->op_type))
        return false;
    for (i = 0; i < n->n_attrs; i++)
        if (!pfvm__onnx_sub(s, onnx_NodeProto_attribute_tag, pfvm__onnx_enc_attr, &n->attrs[i]))
            return false;
    return pfvm__onnx_put_str(s, onnx_NodeProto_doc_string_tag, n->doc) &&
           pfvm__onnx_put_str(s, onnx_NodeProto_domain_tag, n->domain);
}

static bool pfvm__onnx_enc_graph(pb_ostream_t *s, const void *arg)
{
    const pfvm_graph *g = (const pfvm_graph *)arg;
    int i;
    for (i = 0; i < (int)stbds_arrlen(g->nodes); i++)
        if (!pfvm__onnx_sub(s, onnx_GraphProto_node_tag, pfvm__onnx_enc_node, g->nodes[i]))
            return false;
    if (!pfvm__onnx_put_str(s, onnx_GraphProto_name_tag, g->name))
        return false;
    for (i = 0; i < (int)stbds_arrlen(g->inits); i++) {
        pfvm_tensor t = *g->inits[i]->init;
        t.name = g->inits[i]->name;
        if (!pfvm__onnx_sub(s, onnx_GraphProto_initializer_tag, pfvm__onnx_enc_tensor, &t))
            return false;
    }
    if (!pfvm__onnx_put_str(s, onnx_GraphProto_doc_string_tag, g->doc))
        return false;
    for (i = 0; i < (int)stbds_arrlen(g->inputs); i++)
        if (!pfvm__onnx_sub(s, onnx_GraphProto_input_tag, pfvm__onnx_enc_value_info, g->inputs[i]))
            return false;
    for (i = 0; i < (int)stbds_arrlen(g->outputs); i++)
        if (!pfvm__onnx_sub(s, onnx_GraphProto_output_tag, pfvm__onnx_enc_value_info, g->outputs[i]))
            return false;
    for (i = 0; i < (int)stbds_arrlen(g->value_infos); i++)
        if (!pfvm__onnx_sub(s, onnx_GraphProto_value_info_tag, pfvm__onnx_enc_value_info, g->value_infos[i]))
            return false;
    return true;
}

/* ---- functions and the model ------------------------------------------------------ */

static bool pfvm__onnx_enc_opset(pb_ostream_t *s, const void *arg)
{
    const pfvm_opset_import *o = (const pfvm_opset_import *)arg;
    /* the default domain is written as "" explicitly, as exporters do */
    return pfvm__onnx_put_bytes(s, onnx_OperatorSetIdProto_domain_tag, o->domain, strlen(o->domain)) &&
           pfvm__onnx_put_int(s, onnx_OperatorSetIdProto_version_tag, o->version);
}

static bool pfvm__onnx_enc_kv(pb_ostream_t *s, const void *arg)
{
    const pfvm_string_pair *kv = (const pfvm_string_pair *)arg;
    return pfvm__onnx_put_str(s, onnx_StringStringEntryProto_key_tag, kv->key) &&
           pfvm__onnx_put_str(s, onnx_StringStringEntryProto_value_tag, kv->value);
}

static bool pfvm__onnx_enc_function(pb_ostream_t *s, const void *arg)
{
    const pfvm_function *f = (const pfvm_function *)arg;
    const pfvm_graph *g = f->body;
    int i;
    if (!pfvm__onnx_put_str(s, onnx_FunctionProto_name_tag, f->name))
        return false;
    for (i = 0; i < (int)stbds_arrlen(g->inputs); i++)
        if (!pfvm__onnx_put_str(s, onnx_FunctionProto_input_tag, g->inputs[i]->name))
            return false;
    for (i = 0; i < (int)stbds_arrlen(g->outputs); i++)
        if (!pfvm__onnx_put_str(s, onnx_FunctionProto_output_tag, g->outputs[i]->name))
            return false;
    for (i = 0; i < f->n_attr_names; i++)
        if (!pfvm__onnx_put_str(s, onnx_FunctionProto_attribute_tag, f->attr_names[i]))
            return false;
    for (i = 0; i < (int)stbds_arrlen(g->nodes); i++)
        if (!pfvm__onnx_sub(s, onnx_FunctionProto_node_tag, pfvm__onnx_enc_node, g->nodes[i]))
            return false;
    if (!pfvm__onnx_put_str(s, onnx_FunctionProto_doc_string_tag, f->doc))
        return false;
    for (i = 0; i < f->n_opsets; i++)
        if (!pfvm__onnx_sub(s, onnx_FunctionProto_opset_import_tag, pfvm__onnx_enc_opset, &f->opsets[i]))
            return false;
    if (!pfvm__onnx_put_str(s, onnx_FunctionProto_domain_tag, f->domain))
        return false;
    for (i = 0; i < f->n_attr_defaults; i++)
        if (!pfvm__onnx_sub(s, 11 /* attribute_proto */, pfvm__onnx_enc_attr, &f->attr_defaults[i]))
            return false;
    return true;
}

static bool pfvm__onnx_enc_model(pb_ostream_t *s, const void *arg)
{
    const pfvm_model *m = (const pfvm_model *)arg;
    int i;
    if (!pfvm__onnx_put_int(s, onnx_ModelProto_ir_version_tag, m->ir_version) ||
        !pfvm__onnx_put_str(s, onnx_ModelProto_producer_name_tag, m->producer_name) ||
        !pfvm__onnx_put_str(s, onnx_ModelProto_producer_version_tag, m->producer_version) ||
        !pfvm__onnx_put_str(s, onnx_ModelProto_domain_tag, m->domain))
        return false;
    if (m->model_version && !pfvm__onnx_put_int(s, onnx_ModelProto_model_version_tag, m->model_version))
        return false;
    if (!pfvm__onnx_put_str(s, onnx_ModelProto_doc_string_tag, m->doc) ||
        !pfvm__onnx_sub(s, onnx_ModelProto_graph_tag, pfvm__onnx_enc_graph, m->graph))
        return false;
    for (i = 0; i < (int)stbds_arrlen(m->opsets); i++)
        if (!pfvm__onnx_sub(s, onnx_ModelProto_opset_import_tag, pfvm__onnx_enc_opset, &m->opsets[i]))
            return false;
    for (i = 0; i < (int)stbds_arrlen(m->metadata); i++)
        if (!pfvm__onnx_sub(s, onnx_ModelProto_metadata_props_tag, pfvm__onnx_enc_kv, &m->metadata[i]))
            return false;
    for (i = 0; i < (int)stbds_arrlen(m->functions); i++)
        if (!pfvm__onnx_sub(s, onnx_ModelProto_functions_tag, pfvm__onnx_enc_function, m->functions[i]))
            return false;
    return true;
}

/* ---- values ----------------------------------------------------------------------- */

static bool pfvm__onnx_enc_value(pb_ostream_t *s, const void *arg);

static int pfvm__onnx_elem_code(const pfvm_tensor *e)
{
    /* SequenceProto/OptionalProto DataType: 1 tensor, 3 sequence, 5 optional */
    return e->kind == PFVM_KIND_SEQUENCE ? 3 : e->kind == PFVM_KIND_OPTIONAL ? 5 : 1;
}

static bool pfvm__onnx_enc_container(pb_ostream_t *s, const void *arg)
{
    const pfvm_tensor *t = (const pfvm_tensor *)arg;
    int i, n = (int)stbds_arrlen(t->elems);
    int code = n ? pfvm__onnx_elem_code(t->elems[0]) : 1;
    if (!pfvm__onnx_put_str(s, onnx_SequenceProto_name_tag, t->name) ||
        !pfvm__onnx_put_int(s, onnx_SequenceProto_elem_type_tag, code))
        return false;
    for (i = 0; i < n; i++) {
        uint32_t tag = code == 3 ? onnx_SequenceProto_sequence_values_tag
                       : code == 5 ? onnx_SequenceProto_optional_values_tag
                                   : onnx_SequenceProto_tensor_values_tag;
        if (!pfvm__onnx_sub(s, tag, pfvm__onnx_enc_value, t->elems[i]))
            return false;
    }
    return true;
}

static bool pfvm__onnx_enc_value(pb_ostream_t *s, const void *arg)
{
    const pfvm_tensor *t = (const pfvm_tensor *)arg;
    if (t->kind == PFVM_KIND_SEQUENCE || t->kind == PFVM_KIND_OPTIONAL)
        return pfvm__onnx_enc_container(s, t);
    return pfvm__onnx_enc_tensor(s, t);
}

static pfvm_code pfvm__onnx_encode(pfvm__onnx_enc_fn fn, const void *arg, void **bytes, size_t *size, pfvm_status *st)
{
    pb_ostream_t sz = PB_OSTREAM_SIZING, out;
    unsigned char *buf;
    *bytes = NULL;
    *size = 0;
    if (!fn(&sz, arg))
        return pfvm__fail(st, PFVM_ERR_INVALID, "cannot encode: %s", PB_GET_ERROR(&sz));
    buf = (unsigned char *)pfvm__malloc(sz.bytes_written ? sz.bytes_written : 1);
    if (!buf)
        return pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory (%zu bytes)", sz.bytes_written);
    out = pb_ostream_from_buffer(buf, sz.bytes_written);
    if (!fn(&out, arg) || out.bytes_written != sz.bytes_written) {
        pfvm__free(buf);
        return pfvm__fail(st, PFVM_ERR_INVALID, "cannot encode: %s", PB_GET_ERROR(&out));
    }
    *bytes = buf;
    *size = out.bytes_written;
    return PFVM_OK;
}

pfvm_code pfvm_onnx_save_memory(const pfvm_model *m, void **bytes, size_t *size, pfvm_status *st)
{
    if (!m->graph)
        return pfvm__fail(st, PFVM_ERR_INVALID, "the model has no graph");
    return pfvm__onnx_encode(pfvm__onnx_enc_model, m, bytes, size, st);
}

pfvm_code pfvm_onnx_write_value(const pfvm_tensor *t, void **bytes, size_t *size, pfvm_status *st)
{
    if (t->kind == PFVM_KIND_TENSOR && t->dtype != PFVM_STRING && !t->data && pfvm_tensor_numel(t) != 0)
        return pfvm__fail(st, PFVM_ERR_INVALID, "tensor has no data");
    return pfvm__onnx_encode(pfvm__onnx_enc_value, t, bytes, size, st);
}

#ifndef PFVM_NO_STDIO
static pfvm_code pfvm__onnx_write_file(const char *path, const void *bytes, size_t size, pfvm_status *st)
{
    FILE *f = fopen(path, "wb");
    int ok;
    if (!f)
        return pfvm__fail(st, PFVM_ERR_IO, "cannot create '%s'", path);
    ok = fwrite(bytes, 1, size, f) == size;
    ok = (fclose(f) == 0) && ok;
    return ok ? PFVM_OK : pfvm__fail(st, PFVM_ERR_IO, "cannot write '%s'", path);
}

pfvm_code pfvm_onnx_save_file(const pfvm_model *m, const char *path, pfvm_status *st)
{
    void *bytes;
    size_t size;
    pfvm_code rc = pfvm_onnx_save_memory(m, &bytes, &size, st);
    if (rc)
        return rc;
    rc = pfvm__onnx_write_file(path, bytes, size, st);
    pfvm__free(bytes);
    return rc;
}

pfvm_code pfvm_onnx_write_value_file(const pfvm_tensor *t, const char *path, pfvm_status *st)
{
    void *bytes;
    size_t size;
    pfvm_code rc = pfvm_onnx_write_value(t, &bytes, &size, st);
    if (rc)
        return rc;
    rc = pfvm__onnx_write_file(path, bytes, size, st);
    pfvm__free(bytes);
    return rc;
}
#endif

#endif /* PFVM_NO_ONNX_WRITER */
