#include "onnx_io.h"
#include "onnx.pb.h"

#include <pb_encode.h>
#ifndef PFVM_NO_STDIO
#include <stdio.h>
#endif

#ifndef PFVM_NO_ONNX_WRITER

/* The writer walks pfvm's IR and emits the wire format with nanopb's
 * encoding primitives and the generated field tags. Every message is
 * written by a function of one shape; a submessage is written after its
 * length, which a first pass over a sizing stream gives (the usual
 * two-pass encoding, as pb_encode_submessage does for generated structs).
 * What cannot be encoded is found by pfvm__onnx_check_* before any byte
 * is written, so that the error can name the node and the field. */
typedef bool (*pfvm__onnx_enc_fn)(pb_ostream_t *s, const void *arg);

/* Flash-ready output: every tensor's raw_data starts at a file offset that
 * is a multiple of PFVM_ONNX_WRITE_ALIGN, so that a model loaded from
 * suitably aligned bytes (a file read by pfvm, a model embedded in flash
 * with that alignment) has its initializers viewed in place, not copied.
 * Protobuf has no alignment, so the writer pads: raw_data is the last
 * field of its TensorProto and is preceded, where needed, by a
 * TensorProto.doc_string of spaces (2 to 129 bytes with its tag and
 * length; the reader, onnx and onnxruntime ignore it) whose length puts
 * raw_data's first byte on an aligned offset. The padding depends on the
 * absolute offset, so every stream, the sizing ones included, counts
 * bytes from the start of the output: a submessage is sized at the offset
 * it will be written at, and since its length prefix shifts it, sized
 * again when the prefix turns out longer than assumed (a prefix never
 * shrinks back: it is then written with redundant continuation bytes,
 * which protobuf readers accept). 0 or 1 turns the padding off (output as
 * compact as before); otherwise a power of two up to 128 (onnx_io.h). */
#define PFVM__ONNX_W_ALIGN ((size_t)(PFVM_ONNX_WRITE_ALIGN > 1 ? PFVM_ONNX_WRITE_ALIGN : 1))
typedef char pfvm__onnx_w_align_check[(PFVM__ONNX_W_ALIGN <= 128 && (PFVM__ONNX_W_ALIGN & (PFVM__ONNX_W_ALIGN - 1)) == 0) ? 1 : -1];

static size_t pfvm__onnx_varint_len(uint64_t v)
{
    size_t n = 1;
    while (v >= 128) {
        v >>= 7;
        n++;
    }
    return n;
}

/* v as a varint of exactly n bytes (n at least its minimal length). */
static bool pfvm__onnx_put_len(pb_ostream_t *s, uint64_t v, size_t n)
{
    pb_byte_t b[10];
    size_t i;
    for (i = 0; i < n; i++) {
        b[i] = (pb_byte_t)((v & 127u) | (i + 1 < n ? 128u : 0u));
        v >>= 7;
    }
    return pb_write(s, b, n);
}

static bool pfvm__onnx_sub(pb_ostream_t *s, uint32_t tag, pfvm__onnx_enc_fn fn, const void *arg)
{
    const pb_ostream_t sizing = PB_OSTREAM_SIZING;
    pb_ostream_t sz;
    size_t start, size, len = 1, need, before;
    if (!pb_encode_tag(s, PB_WT_STRING, tag))
        return false;
    start = s->bytes_written;
    for (;;) {
        sz = sizing;
        sz.bytes_written = start + len; /* absolute: padding depends on it */
        if (!fn(&sz, arg))
            return false;
        size = sz.bytes_written - start - len;
        need = pfvm__onnx_varint_len((uint64_t)size);
        if (need <= len)
            break;
        len = need;
        if (PFVM__ONNX_W_ALIGN == 1) /* no padding: the size does not move */
            break;
    }
    if (!pfvm__onnx_put_len(s, (uint64_t)size, len))
        return false;
    if (!s->callback) { /* sizing the parent: the child's size is known */
        s->bytes_written += size;
        return true;
    }
    before = s->bytes_written;
    return fn(s, arg) && s->bytes_written - before == size;
}

/* Before raw_data of `bytes` bytes: a doc_string whose length aligns the
 * data (see PFVM_ONNX_WRITE_ALIGN). */
static bool pfvm__onnx_put_pad(pb_ostream_t *s, size_t bytes)
{
    pb_byte_t spaces[128];
    size_t at, r, pad;
    if (PFVM__ONNX_W_ALIGN == 1 || !bytes)
        return true;
    /* raw_data's tag (field 9) takes one byte, then its length */
    at = s->bytes_written + 1 + pfvm__onnx_varint_len((uint64_t)bytes);
    r = (PFVM__ONNX_W_ALIGN - at % PFVM__ONNX_W_ALIGN) % PFVM__ONNX_W_ALIGN;
    if (!r)
        return true;
    pad = r >= 2 ? r : r + PFVM__ONNX_W_ALIGN; /* the field takes 2 bytes at least */
    memset(spaces, ' ', sizeof spaces);
    return pb_encode_tag(s, PB_WT_STRING, pfvm__pb_TensorProto_doc_string_tag) && pb_encode_varint(s, (uint64_t)(pad - 2)) &&
           pb_write(s, spaces, pad - 2);
}

static bool pfvm__onnx_put_bytes(pb_ostream_t *s, uint32_t tag, const void *p, size_t n)
{
    static const pb_byte_t none = 0;
    /* nanopb copies with memcpy, which must not see a NULL pointer even for
     * zero bytes */
    return pb_encode_tag(s, PB_WT_STRING, tag) && pb_encode_string(s, n ? (const pb_byte_t *)p : &none, n);
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

static bool pfvm__onnx_put_float(pb_ostream_t *s, uint32_t tag, float f)
{
    return pb_encode_tag(s, PB_WT_32BIT, tag) && pb_encode_fixed32(s, &f);
}

static int pfvm__onnx_host_le(void)
{
    const uint16_t one = 1;
    return *(const unsigned char *)&one == 1;
}

/* ---- tensors ----------------------------------------------------------------- */

static int pfvm__onnx_w_is_4bit(pfvm_dtype dt)
{
    return dt == PFVM_UINT4 || dt == PFVM_INT4;
}

/* Bytes raw_data takes: 4-bit elements are packed two per byte. */
static size_t pfvm__onnx_raw_bytes(const pfvm_tensor *t)
{
    size_t n = (size_t)pfvm_tensor_numel(t);
    return pfvm__onnx_w_is_4bit(t->dtype) ? n / 2 + n % 2 : n * pfvm_dtype_size(t->dtype);
}

/* Width whose bytes are reversed on a big-endian host (raw_data is
 * little-endian; a complex number is two scalars). */
static size_t pfvm__onnx_swap_width(pfvm_dtype dt)
{
    if (pfvm__onnx_w_is_4bit(dt))
        return 1;
    return dt == PFVM_COMPLEX64 ? 4 : dt == PFVM_COMPLEX128 ? 8 : pfvm_dtype_size(dt);
}

/* raw_data goes out in chunks through a small buffer where it must be
 * transformed (4-bit packing, byte order); otherwise straight from the
 * tensor. */
static bool pfvm__onnx_put_raw(pb_ostream_t *s, const pfvm_tensor *t)
{
    unsigned char buf[1024];
    size_t bytes = pfvm__onnx_raw_bytes(t), width = pfvm__onnx_swap_width(t->dtype), done, i, j;
    const unsigned char *src = (const unsigned char *)t->data;
    int pack = pfvm__onnx_w_is_4bit(t->dtype), swap = !pfvm__onnx_host_le() && width > 1;
    if (!pfvm__onnx_put_pad(s, bytes))
        return false;
    if (!pack && !swap)
        return pfvm__onnx_put_bytes(s, pfvm__pb_TensorProto_raw_data_tag, src, bytes);
    if (!pb_encode_tag(s, PB_WT_STRING, pfvm__pb_TensorProto_raw_data_tag) || !pb_encode_varint(s, (uint64_t)bytes))
        return false;
    for (done = 0; done < bytes; done += i) {
        size_t numel = (size_t)pfvm_tensor_numel(t);
        for (i = 0; i < sizeof buf && done + i < bytes; i++) {
            if (pack) {
                size_t e = 2 * (done + i);
                buf[i] = (unsigned char)((src[e] & 15u) | (e + 1 < numel ? (src[e + 1] & 15u) << 4 : 0u));
            } else {
                /* whole scalars only: sizeof buf is a multiple of every width */
                j = (done + i) / width * width + (width - 1 - (done + i) % width);
                buf[i] = src[j];
            }
        }
        if (!pb_write(s, buf, i))
            return false;
    }
    return true;
}

static bool pfvm__onnx_enc_tensor(pb_ostream_t *s, const void *arg)
{
    const pfvm_tensor *t = (const pfvm_tensor *)arg;
    int i;
    int64_t k, n = pfvm_tensor_numel(t);
    for (i = 0; i < t->rank; i++)
        if (!pfvm__onnx_put_int(s, pfvm__pb_TensorProto_dims_tag, t->dims[i]))
            return false;
    if (!pfvm__onnx_put_int(s, pfvm__pb_TensorProto_data_type_tag, (int64_t)t->dtype))
        return false;
    if (t->dtype == PFVM_STRING) {
        for (k = 0; k < n; k++) {
            const char *str = ((char *const *)t->data)[k];
            if (!pfvm__onnx_put_bytes(s, pfvm__pb_TensorProto_string_data_tag, str, str ? strlen(str) : 0))
                return false;
        }
    }
    if (!pfvm__onnx_put_str(s, pfvm__pb_TensorProto_name_tag, t->name))
        return false;
    return t->dtype == PFVM_STRING || pfvm__onnx_put_raw(s, t);
}

/* A dense tensor written as a SparseTensorProto (a SPARSE_TENSOR attribute
 * read densified goes back sparse): values are the nonzero elements,
 * indices their linear positions. Two passes over the data, no copies. */
typedef struct pfvm__onnx_sparse_part {
    const pfvm_tensor *t;
    int indices; /* 1: the indices tensor, 0: the values */
} pfvm__onnx_sparse_part;

static int pfvm__onnx_nonzero(const pfvm_tensor *t, size_t i, size_t es)
{
    const unsigned char *p = (const unsigned char *)t->data + i * es;
    size_t b;
    for (b = 0; b < es; b++)
        if (p[b])
            return 1;
    return 0;
}

static bool pfvm__onnx_enc_sparse_part(pb_ostream_t *s, const void *arg)
{
    const pfvm__onnx_sparse_part *sp = (const pfvm__onnx_sparse_part *)arg;
    const pfvm_tensor *t = sp->t;
    size_t n = (size_t)pfvm_tensor_numel(t), es = pfvm_dtype_size(t->dtype), i, nnz = 0, width;
    for (i = 0; i < n; i++)
        nnz += (size_t)pfvm__onnx_nonzero(t, i, es);
    width = sp->indices ? 8 : es;
    if (!pfvm__onnx_put_int(s, pfvm__pb_TensorProto_dims_tag, (int64_t)nnz) ||
        !pfvm__onnx_put_int(s, pfvm__pb_TensorProto_data_type_tag, sp->indices ? (int64_t)PFVM_INT64 : (int64_t)t->dtype) ||
        (!sp->indices && !pfvm__onnx_put_str(s, pfvm__pb_TensorProto_name_tag, t->name)) ||
        !pb_encode_tag(s, PB_WT_STRING, pfvm__pb_TensorProto_raw_data_tag) || !pb_encode_varint(s, (uint64_t)(nnz * width)))
        return false;
    for (i = 0; i < n; i++) {
        unsigned char le[16];
        size_t b;
        if (!pfvm__onnx_nonzero(t, i, es))
            continue;
        for (b = 0; b < width; b++) /* little-endian whatever the host */
            le[b] = sp->indices ? (unsigned char)((uint64_t)i >> (8 * b))
                                : ((const unsigned char *)t->data)[i * es + (pfvm__onnx_host_le() ? b : width - 1 - b)];
        if (!pb_write(s, le, width))
            return false;
    }
    return true;
}

static bool pfvm__onnx_enc_sparse(pb_ostream_t *s, const void *arg)
{
    const pfvm_tensor *t = (const pfvm_tensor *)arg;
    pfvm__onnx_sparse_part values, indices;
    int i;
    values.t = indices.t = t;
    values.indices = 0;
    indices.indices = 1;
    if (!pfvm__onnx_sub(s, pfvm__pb_SparseTensorProto_values_tag, pfvm__onnx_enc_sparse_part, &values) ||
        !pfvm__onnx_sub(s, pfvm__pb_SparseTensorProto_indices_tag, pfvm__onnx_enc_sparse_part, &indices))
        return false;
    for (i = 0; i < t->rank; i++)
        if (!pfvm__onnx_put_int(s, pfvm__pb_SparseTensorProto_dims_tag, t->dims[i]))
            return false;
    return true;
}

/* ---- types ---------------------------------------------------------------------- */

/* A dim: a constant is a dim_value; a symbol is a dim_param with its name;
 * any other expression a dim_param with its printed form ("2*n"), which
 * other tools read as an opaque name. */
static bool pfvm__onnx_enc_dim(pb_ostream_t *s, const void *arg)
{
    const pfvm_sym *d = (const pfvm_sym *)arg;
    char buf[256], *text = buf;
    int64_t v;
    int need;
    bool ok;
    if (pfvm_sym_is_const(d, &v))
        return pfvm__onnx_put_int(s, pfvm__pb_TensorShapeProto_Dimension_dim_value_tag, v);
    if (d->kind == PFVM_SYM_VAR)
        return pfvm__onnx_put_str(s, pfvm__pb_TensorShapeProto_Dimension_dim_param_tag, d->name);
    need = pfvm_sym_print(d, buf, sizeof buf);
    if (need < 0)
        return false;
    if ((size_t)need >= sizeof buf) {
        text = (char *)pfvm__malloc((size_t)need + 1);
        if (!text)
            return false;
        pfvm_sym_print(d, text, (size_t)need + 1);
    }
    ok = pfvm__onnx_put_str(s, pfvm__pb_TensorShapeProto_Dimension_dim_param_tag, text);
    if (text != buf)
        pfvm__free(text);
    return ok;
}

static bool pfvm__onnx_enc_shape(pb_ostream_t *s, const void *arg)
{
    const pfvm_shape *sh = (const pfvm_shape *)arg;
    int i;
    for (i = 0; i < sh->rank; i++)
        if (!pfvm__onnx_sub(s, pfvm__pb_TensorShapeProto_dim_tag, pfvm__onnx_enc_dim, sh->dims[i]))
            return false;
    return true;
}

static bool pfvm__onnx_enc_type(pb_ostream_t *s, const void *arg);

static bool pfvm__onnx_enc_tensor_type(pb_ostream_t *s, const void *arg)
{
    const pfvm_type *t = (const pfvm_type *)arg;
    if (t->dtype && !pfvm__onnx_put_int(s, pfvm__pb_TypeProto_Tensor_elem_type_tag, (int64_t)t->dtype))
        return false;
    if (t->shape.rank >= 0 && !pfvm__onnx_sub(s, pfvm__pb_TypeProto_Tensor_shape_tag, pfvm__onnx_enc_shape, &t->shape))
        return false;
    return true;
}

static bool pfvm__onnx_enc_elem_type(pb_ostream_t *s, const void *arg)
{
    const pfvm_type *t = (const pfvm_type *)arg;
    return !t->elem || pfvm__onnx_sub(s, pfvm__pb_TypeProto_Sequence_elem_type_tag, pfvm__onnx_enc_type, t->elem);
}

static bool pfvm__onnx_enc_map_type(pb_ostream_t *s, const void *arg)
{
    const pfvm_type *t = (const pfvm_type *)arg;
    return pfvm__onnx_put_int(s, pfvm__pb_TypeProto_Map_key_type_tag, (int64_t)t->key_dtype) &&
           (!t->elem || pfvm__onnx_sub(s, pfvm__pb_TypeProto_Map_value_type_tag, pfvm__onnx_enc_type, t->elem));
}

static bool pfvm__onnx_enc_type(pb_ostream_t *s, const void *arg)
{
    const pfvm_type *t = (const pfvm_type *)arg;
    switch (t->kind) {
    case PFVM_KIND_TENSOR: return pfvm__onnx_sub(s, pfvm__pb_TypeProto_tensor_type_tag, pfvm__onnx_enc_tensor_type, t);
    case PFVM_KIND_SPARSE: return pfvm__onnx_sub(s, pfvm__pb_TypeProto_sparse_tensor_type_tag, pfvm__onnx_enc_tensor_type, t);
    case PFVM_KIND_SEQUENCE: return pfvm__onnx_sub(s, pfvm__pb_TypeProto_sequence_type_tag, pfvm__onnx_enc_elem_type, t);
    case PFVM_KIND_OPTIONAL: return pfvm__onnx_sub(s, pfvm__pb_TypeProto_optional_type_tag, pfvm__onnx_enc_elem_type, t);
    case PFVM_KIND_MAP: return pfvm__onnx_sub(s, pfvm__pb_TypeProto_map_type_tag, pfvm__onnx_enc_map_type, t);
    default: return true;
    }
}

static bool pfvm__onnx_enc_value_info(pb_ostream_t *s, const void *arg)
{
    const pfvm_value *v = (const pfvm_value *)arg;
    if (!pfvm__onnx_put_str(s, pfvm__pb_ValueInfoProto_name_tag, v->name))
        return false;
    if (v->type.kind != PFVM_KIND_UNKNOWN && !pfvm__onnx_sub(s, pfvm__pb_ValueInfoProto_type_tag, pfvm__onnx_enc_type, &v->type))
        return false;
    return pfvm__onnx_put_str(s, pfvm__pb_ValueInfoProto_doc_string_tag, v->doc);
}

/* ---- nodes and attributes -------------------------------------------------------- */

static bool pfvm__onnx_enc_graph(pb_ostream_t *s, const void *arg);

/* The value of an attribute, by its type. */
static bool pfvm__onnx_enc_attr_value(pb_ostream_t *s, const pfvm_attr *a)
{
    int i;
    switch (a->type) {
    case PFVM_ATTR_FLOAT: return pfvm__onnx_put_float(s, pfvm__pb_AttributeProto_f_tag, a->f);
    case PFVM_ATTR_INT: return pfvm__onnx_put_int(s, pfvm__pb_AttributeProto_i_tag, a->i);
    case PFVM_ATTR_STRING: return pfvm__onnx_put_bytes(s, pfvm__pb_AttributeProto_s_tag, a->s, a->s ? a->s_len : 0);
    case PFVM_ATTR_TENSOR: return pfvm__onnx_sub(s, pfvm__pb_AttributeProto_t_tag, pfvm__onnx_enc_tensor, a->t);
    case PFVM_ATTR_SPARSE_TENSOR: return pfvm__onnx_sub(s, pfvm__pb_AttributeProto_sparse_tensor_tag, pfvm__onnx_enc_sparse, a->t);
    case PFVM_ATTR_GRAPH: return pfvm__onnx_sub(s, pfvm__pb_AttributeProto_g_tag, pfvm__onnx_enc_graph, a->g);
    case PFVM_ATTR_TYPE_PROTO: return !a->tp || pfvm__onnx_sub(s, pfvm__pb_AttributeProto_tp_tag, pfvm__onnx_enc_type, a->tp);
    default: break;
    }
    for (i = 0; i < a->n; i++) {
        bool ok = true;
        switch (a->type) {
        case PFVM_ATTR_FLOATS: ok = pfvm__onnx_put_float(s, pfvm__pb_AttributeProto_floats_tag, a->floats[i]); break;
        case PFVM_ATTR_INTS: ok = pfvm__onnx_put_int(s, pfvm__pb_AttributeProto_ints_tag, a->ints[i]); break;
        case PFVM_ATTR_STRINGS:
            ok = pfvm__onnx_put_bytes(s, pfvm__pb_AttributeProto_strings_tag, a->strings[i],
                                      a->strings_len ? a->strings_len[i] : strlen(a->strings[i]));
            break;
        case PFVM_ATTR_TENSORS: ok = pfvm__onnx_sub(s, pfvm__pb_AttributeProto_tensors_tag, pfvm__onnx_enc_tensor, a->tensors[i]); break;
        case PFVM_ATTR_GRAPHS: ok = pfvm__onnx_sub(s, pfvm__pb_AttributeProto_graphs_tag, pfvm__onnx_enc_graph, a->graphs[i]); break;
        case PFVM_ATTR_TYPE_PROTOS: ok = pfvm__onnx_sub(s, pfvm__pb_AttributeProto_type_protos_tag, pfvm__onnx_enc_type, a->tps[i]); break;
        default: break;
        }
        if (!ok)
            return false;
    }
    return true;
}

static bool pfvm__onnx_enc_attr(pb_ostream_t *s, const void *arg)
{
    const pfvm_attr *a = (const pfvm_attr *)arg;
    if (!pfvm__onnx_put_str(s, pfvm__pb_AttributeProto_name_tag, a->name) ||
        !pfvm__onnx_put_str(s, pfvm__pb_AttributeProto_ref_attr_name_tag, a->ref_attr_name) ||
        !pfvm__onnx_put_str(s, pfvm__pb_AttributeProto_doc_string_tag, a->doc) ||
        !pfvm__onnx_put_int(s, pfvm__pb_AttributeProto_type_tag, (int64_t)a->type))
        return false;
    /* a reference to a function attribute carries no value of its own */
    return (a->ref_attr_name && a->ref_attr_name[0]) || pfvm__onnx_enc_attr_value(s, a);
}

static bool pfvm__onnx_put_name(pb_ostream_t *s, uint32_t tag, const pfvm_value *v)
{
    /* an omitted optional input or output is written as "" */
    return pfvm__onnx_put_bytes(s, tag, v ? v->name : "", v ? strlen(v->name) : 0);
}

static bool pfvm__onnx_enc_node(pb_ostream_t *s, const void *arg)
{
    const pfvm_node *n = (const pfvm_node *)arg;
    int i;
    for (i = 0; i < n->n_inputs; i++)
        if (!pfvm__onnx_put_name(s, pfvm__pb_NodeProto_input_tag, n->inputs[i]))
            return false;
    for (i = 0; i < n->n_outputs; i++)
        if (!pfvm__onnx_put_name(s, pfvm__pb_NodeProto_output_tag, n->outputs[i]))
            return false;
    if (!pfvm__onnx_put_str(s, pfvm__pb_NodeProto_name_tag, n->name) ||
        !pfvm__onnx_put_str(s, pfvm__pb_NodeProto_op_type_tag, n->op_type))
        return false;
    for (i = 0; i < n->n_attrs; i++)
        if (!pfvm__onnx_sub(s, pfvm__pb_NodeProto_attribute_tag, pfvm__onnx_enc_attr, &n->attrs[i]))
            return false;
    return pfvm__onnx_put_str(s, pfvm__pb_NodeProto_doc_string_tag, n->doc) &&
           pfvm__onnx_put_str(s, pfvm__pb_NodeProto_domain_tag, n->domain);
}

/* An initializer: the tensor under its value's name. */
static bool pfvm__onnx_enc_init(pb_ostream_t *s, const void *arg)
{
    const pfvm_value *v = (const pfvm_value *)arg;
    pfvm_tensor t = *v->init;
    t.name = v->name;
    return pfvm__onnx_enc_tensor(s, &t);
}

/* value_info: the values of g whose declared types were read or set
 * (has_value_info), in definition order, graph inputs and outputs aside
 * (they carry their types themselves) unless the model declared them. */
static bool pfvm__onnx_enc_value_infos(pb_ostream_t *s, const pfvm_graph *g)
{
    int i;
    for (i = 0; i < (int)stbds_arrlen(g->values); i++) {
        const pfvm_value *v = g->values[i];
        if (v->has_value_info && !pfvm__onnx_sub(s, pfvm__pb_GraphProto_value_info_tag, pfvm__onnx_enc_value_info, v))
            return false;
    }
    return true;
}

/* The attribute of g's owner node that holds g ("" when none does). */
static const char *pfvm__onnx_owner_attr(const pfvm_graph *g)
{
    int i, k;
    for (i = 0; g->owner && i < g->owner->n_attrs; i++) {
        const pfvm_attr *a = &g->owner->attrs[i];
        if (a->type == PFVM_ATTR_GRAPH && a->g == g)
            return a->name;
        for (k = 0; a->type == PFVM_ATTR_GRAPHS && k < a->n; k++)
            if (a->graphs[k] == g)
                return a->name;
    }
    return "";
}

/* ONNX requires every graph to have a name: one built without a name is
 * saved as "main", or after its owner node and attribute ("If_then_branch"). */
static bool pfvm__onnx_put_graph_name(pb_ostream_t *s, const pfvm_graph *g)
{
    char buf[256];
    if (g->name && g->name[0])
        return pfvm__onnx_put_str(s, pfvm__pb_GraphProto_name_tag, g->name);
    if (!g->parent || !g->owner)
        return pfvm__onnx_put_str(s, pfvm__pb_GraphProto_name_tag, g->parent ? "subgraph" : "main");
    pfvm__snprintf(buf, sizeof buf, "%.120s_%.120s", g->owner->name && g->owner->name[0] ? g->owner->name : g->owner->op_type,
                   pfvm__onnx_owner_attr(g));
    return pfvm__onnx_put_str(s, pfvm__pb_GraphProto_name_tag, buf);
}

static bool pfvm__onnx_enc_graph(pb_ostream_t *s, const void *arg)
{
    const pfvm_graph *g = (const pfvm_graph *)arg;
    int i;
    for (i = 0; i < (int)stbds_arrlen(g->nodes); i++)
        if (!pfvm__onnx_sub(s, pfvm__pb_GraphProto_node_tag, pfvm__onnx_enc_node, g->nodes[i]))
            return false;
    if (!pfvm__onnx_put_graph_name(s, g))
        return false;
    for (i = 0; i < (int)stbds_arrlen(g->inits); i++)
        if (!pfvm__onnx_sub(s, pfvm__pb_GraphProto_initializer_tag, pfvm__onnx_enc_init, g->inits[i]))
            return false;
    if (!pfvm__onnx_put_str(s, pfvm__pb_GraphProto_doc_string_tag, g->doc))
        return false;
    for (i = 0; i < (int)stbds_arrlen(g->inputs); i++)
        if (!pfvm__onnx_sub(s, pfvm__pb_GraphProto_input_tag, pfvm__onnx_enc_value_info, g->inputs[i]))
            return false;
    for (i = 0; i < (int)stbds_arrlen(g->outputs); i++)
        if (!pfvm__onnx_sub(s, pfvm__pb_GraphProto_output_tag, pfvm__onnx_enc_value_info, g->outputs[i]))
            return false;
    return pfvm__onnx_enc_value_infos(s, g);
}

/* ---- functions and the model ------------------------------------------------------ */

static bool pfvm__onnx_enc_opset(pb_ostream_t *s, const void *arg)
{
    const pfvm_opset_import *o = (const pfvm_opset_import *)arg;
    /* the default domain is written as "" explicitly, as exporters do */
    return pfvm__onnx_put_bytes(s, pfvm__pb_OperatorSetIdProto_domain_tag, o->domain, o->domain ? strlen(o->domain) : 0) &&
           pfvm__onnx_put_int(s, pfvm__pb_OperatorSetIdProto_version_tag, o->version);
}

static bool pfvm__onnx_enc_kv(pb_ostream_t *s, const void *arg)
{
    const pfvm_string_pair *kv = (const pfvm_string_pair *)arg;
    return pfvm__onnx_put_str(s, pfvm__pb_StringStringEntryProto_key_tag, kv->key) &&
           pfvm__onnx_put_str(s, pfvm__pb_StringStringEntryProto_value_tag, kv->value);
}

/* FunctionProto.attribute_proto (attributes with defaults), newer than the
 * onnx.proto the descriptors come from. */
#define PFVM__ONNX_W_FUNCTION_ATTRIBUTE_PROTO_TAG 11

static bool pfvm__onnx_enc_function(pb_ostream_t *s, const void *arg)
{
    const pfvm_function *f = (const pfvm_function *)arg;
    const pfvm_graph *g = f->body;
    int i;
    if (!pfvm__onnx_put_str(s, pfvm__pb_FunctionProto_name_tag, f->name))
        return false;
    for (i = 0; i < (int)stbds_arrlen(g->inputs); i++)
        if (!pfvm__onnx_put_name(s, pfvm__pb_FunctionProto_input_tag, g->inputs[i]))
            return false;
    for (i = 0; i < (int)stbds_arrlen(g->outputs); i++)
        if (!pfvm__onnx_put_name(s, pfvm__pb_FunctionProto_output_tag, g->outputs[i]))
            return false;
    for (i = 0; i < f->n_attr_names; i++)
        if (!pfvm__onnx_put_bytes(s, pfvm__pb_FunctionProto_attribute_tag, f->attr_names[i], strlen(f->attr_names[i])))
            return false;
    for (i = 0; i < (int)stbds_arrlen(g->nodes); i++)
        if (!pfvm__onnx_sub(s, pfvm__pb_FunctionProto_node_tag, pfvm__onnx_enc_node, g->nodes[i]))
            return false;
    if (!pfvm__onnx_put_str(s, pfvm__pb_FunctionProto_doc_string_tag, f->doc))
        return false;
    for (i = 0; i < f->n_opsets; i++)
        if (!pfvm__onnx_sub(s, pfvm__pb_FunctionProto_opset_import_tag, pfvm__onnx_enc_opset, &f->opsets[i]))
            return false;
    if (!pfvm__onnx_put_str(s, pfvm__pb_FunctionProto_domain_tag, f->domain))
        return false;
    for (i = 0; i < f->n_attr_defaults; i++)
        if (!pfvm__onnx_sub(s, PFVM__ONNX_W_FUNCTION_ATTRIBUTE_PROTO_TAG, pfvm__onnx_enc_attr, &f->attr_defaults[i]))
            return false;
    return true;
}

static bool pfvm__onnx_enc_model(pb_ostream_t *s, const void *arg)
{
    const pfvm_model *m = (const pfvm_model *)arg;
    int i;
    if (!pfvm__onnx_put_int(s, pfvm__pb_ModelProto_ir_version_tag, m->ir_version) ||
        !pfvm__onnx_put_str(s, pfvm__pb_ModelProto_producer_name_tag, m->producer_name) ||
        !pfvm__onnx_put_str(s, pfvm__pb_ModelProto_producer_version_tag, m->producer_version) ||
        !pfvm__onnx_put_str(s, pfvm__pb_ModelProto_domain_tag, m->domain))
        return false;
    if (m->model_version && !pfvm__onnx_put_int(s, pfvm__pb_ModelProto_model_version_tag, m->model_version))
        return false;
    if (!pfvm__onnx_put_str(s, pfvm__pb_ModelProto_doc_string_tag, m->doc) ||
        !pfvm__onnx_sub(s, pfvm__pb_ModelProto_graph_tag, pfvm__onnx_enc_graph, m->graph))
        return false;
    for (i = 0; i < (int)stbds_arrlen(m->opsets); i++)
        if (!pfvm__onnx_sub(s, pfvm__pb_ModelProto_opset_import_tag, pfvm__onnx_enc_opset, &m->opsets[i]))
            return false;
    for (i = 0; i < (int)stbds_arrlen(m->metadata); i++)
        if (!pfvm__onnx_sub(s, pfvm__pb_ModelProto_metadata_props_tag, pfvm__onnx_enc_kv, &m->metadata[i]))
            return false;
    for (i = 0; i < (int)stbds_arrlen(m->functions); i++)
        if (!pfvm__onnx_sub(s, pfvm__pb_ModelProto_functions_tag, pfvm__onnx_enc_function, m->functions[i]))
            return false;
    return true;
}

/* ---- checks before encoding ------------------------------------------------------- */

/* The encoder's callbacks can only fail with nanopb's fixed messages; what
 * the IR could hold that ONNX cannot say is caught here, by name. */

/* Nested subgraphs, sequences and optionals deeper than this are refused,
 * as the reader refuses them. */
#define PFVM__ONNX_W_MAX_DEPTH 64

static pfvm_code pfvm__onnx_check_tensor(const pfvm_tensor *t, const char *where, pfvm_status *st)
{
    int64_t n;
    if (!t)
        return pfvm__fail(st, PFVM_ERR_INVALID, "%s: no tensor", where);
    if (t->kind != PFVM_KIND_TENSOR)
        return pfvm__fail(st, PFVM_ERR_INVALID, "%s: a %s is not a tensor", where,
                          t->kind == PFVM_KIND_SEQUENCE ? "sequence" : "non-tensor value");
    if (t->dtype <= PFVM_UNDEFINED || t->dtype >= PFVM_DTYPE_COUNT || t->rank < 0 || t->rank > PFVM_MAX_RANK)
        return pfvm__fail(st, PFVM_ERR_INVALID, "%s: invalid element type %d or rank %d", where, (int)t->dtype, t->rank);
    n = pfvm_tensor_numel(t);
    if (n < 0)
        return pfvm__fail(st, PFVM_ERR_INVALID, "%s: invalid shape", where);
    if (n > 0 && !t->data)
        return pfvm__fail(st, PFVM_ERR_INVALID, "%s: tensor has no data", where);
    if (t->dtype != PFVM_STRING && t->nbytes < (size_t)n * pfvm_dtype_size(t->dtype))
        return pfvm__fail(st, PFVM_ERR_INVALID, "%s: %zu bytes of data for %lld elements", where, t->nbytes, (long long)n);
    return PFVM_OK;
}

static pfvm_code pfvm__onnx_check_graph(const pfvm_graph *g, int depth, pfvm_status *st);

static pfvm_code pfvm__onnx_check_attr(const pfvm_attr *a, const char *where, int depth, pfvm_status *st)
{
    char w[400];
    int i;
    pfvm__snprintf(w, sizeof w, "%s: attribute '%s'", where, a->name ? a->name : "");
    if (!a->name || !a->name[0])
        return pfvm__fail(st, PFVM_ERR_INVALID, "%s: an attribute has no name", where);
    if (a->ref_attr_name && a->ref_attr_name[0])
        return PFVM_OK;
    if (a->n < 0)
        return pfvm__fail(st, PFVM_ERR_INVALID, "%s: negative element count", w);
    switch (a->type) {
    case PFVM_ATTR_FLOAT: case PFVM_ATTR_INT: case PFVM_ATTR_STRING: case PFVM_ATTR_TYPE_PROTO:
        return PFVM_OK;
    case PFVM_ATTR_TENSOR: return pfvm__onnx_check_tensor(a->t, w, st);
    case PFVM_ATTR_SPARSE_TENSOR: {
        pfvm_code rc = pfvm__onnx_check_tensor(a->t, w, st);
        if (!rc && (a->t->dtype == PFVM_STRING || pfvm__onnx_w_is_4bit(a->t->dtype)))
            rc = pfvm__fail(st, PFVM_ERR_UNSUPPORTED, "%s: sparse tensors of %s", w, pfvm_dtype_name(a->t->dtype));
        return rc;
    }
    case PFVM_ATTR_GRAPH:
        return a->g ? pfvm__onnx_check_graph(a->g, depth + 1, st) : pfvm__fail(st, PFVM_ERR_INVALID, "%s: no graph", w);
    case PFVM_ATTR_FLOATS: case PFVM_ATTR_INTS: case PFVM_ATTR_STRINGS: case PFVM_ATTR_TENSORS: case PFVM_ATTR_GRAPHS:
    case PFVM_ATTR_TYPE_PROTOS: {
        const void *list = a->type == PFVM_ATTR_FLOATS ? (const void *)a->floats : a->type == PFVM_ATTR_INTS ? (const void *)a->ints
                         : a->type == PFVM_ATTR_STRINGS ? (const void *)a->strings : a->type == PFVM_ATTR_TENSORS ? (const void *)a->tensors
                         : a->type == PFVM_ATTR_GRAPHS ? (const void *)a->graphs : (const void *)a->tps;
        if (a->n && !list)
            return pfvm__fail(st, PFVM_ERR_INVALID, "%s: %d elements but no list", w, a->n);
        for (i = 0; i < a->n; i++) {
            pfvm_code rc = PFVM_OK;
            if (a->type == PFVM_ATTR_STRINGS && !a->strings[i])
                rc = pfvm__fail(st, PFVM_ERR_INVALID, "%s: string %d is NULL", w, i);
            else if (a->type == PFVM_ATTR_TENSORS)
                rc = pfvm__onnx_check_tensor(a->tensors[i], w, st);
            else if (a->type == PFVM_ATTR_GRAPHS)
                rc = a->graphs[i] ? pfvm__onnx_check_graph(a->graphs[i], depth + 1, st)
                                  : pfvm__fail(st, PFVM_ERR_INVALID, "%s: graph %d is NULL", w, i);
            else if (a->type == PFVM_ATTR_TYPE_PROTOS && !a->tps[i])
                rc = pfvm__fail(st, PFVM_ERR_INVALID, "%s: type %d is NULL", w, i);
            if (rc)
                return rc;
        }
        return PFVM_OK;
    }
    default:
        return pfvm__fail(st, PFVM_ERR_UNSUPPORTED, "%s: attribute type %d cannot be written", w, (int)a->type);
    }
}

static pfvm_code pfvm__onnx_check_node(const pfvm_node *n, int depth, pfvm_status *st)
{
    char where[300];
    int i;
    if (!n->op_type || !n->op_type[0])
        return pfvm__fail(st, PFVM_ERR_INVALID, "graph '%s': node '%s' has no op_type", n->graph ? n->graph->name : "",
                          n->name ? n->name : "");
    pfvm__snprintf(where, sizeof where, "node '%.200s' (%.80s)", n->name && n->name[0] ? n->name : n->op_type, n->op_type);
    for (i = 0; i < n->n_attrs; i++) {
        pfvm_code rc = pfvm__onnx_check_attr(&n->attrs[i], where, depth, st);
        if (rc)
            return rc;
    }
    return PFVM_OK;
}

static pfvm_code pfvm__onnx_check_graph(const pfvm_graph *g, int depth, pfvm_status *st)
{
    int i;
    if (depth > PFVM__ONNX_W_MAX_DEPTH)
        return pfvm__fail(st, PFVM_ERR_UNSUPPORTED, "graph '%s': subgraphs nested more than %d deep", g->name,
                          PFVM__ONNX_W_MAX_DEPTH);
    pfvm_code rc = PFVM_OK;
    for (i = 0; !rc && i < (int)stbds_arrlen(g->nodes); i++)
        rc = pfvm__onnx_check_node(g->nodes[i], depth, st);
    for (i = 0; !rc && i < (int)stbds_arrlen(g->inits); i++) {
        char where[300];
        pfvm__snprintf(where, sizeof where, "graph '%.80s': initializer '%.200s'", g->name, g->inits[i]->name);
        rc = pfvm__onnx_check_tensor(g->inits[i]->init, where, st);
    }
    return rc;
}

static pfvm_code pfvm__onnx_check_model(const pfvm_model *m, pfvm_status *st)
{
    int i;
    pfvm_code rc;
    if (!m->graph)
        return pfvm__fail(st, PFVM_ERR_INVALID, "the model has no graph");
    rc = pfvm__onnx_check_graph(m->graph, 0, st);
    for (i = 0; !rc && i < (int)stbds_arrlen(m->functions); i++) {
        const pfvm_function *f = m->functions[i];
        if (!f->name || !f->name[0] || !f->body)
            return pfvm__fail(st, PFVM_ERR_INVALID, "model-local function %d has no name or body", i);
        if ((rc = pfvm__onnx_check_graph(f->body, 0, st)) != PFVM_OK)
            pfvm__prefix(st, "function '%s'", f->name);
    }
    return rc;
}

static pfvm_code pfvm__onnx_check_value(const pfvm_tensor *t, int depth, pfvm_status *st)
{
    int i;
    if (depth > PFVM__ONNX_W_MAX_DEPTH)
        return pfvm__fail(st, PFVM_ERR_UNSUPPORTED, "values nested more than %d deep", PFVM__ONNX_W_MAX_DEPTH);
    if (t->kind == PFVM_KIND_TENSOR)
        return pfvm__onnx_check_tensor(t, "value", st);
    if (t->kind != PFVM_KIND_SEQUENCE && t->kind != PFVM_KIND_OPTIONAL)
        return pfvm__fail(st, PFVM_ERR_UNSUPPORTED, "only tensors, sequences and optionals can be written as values");
    if (t->kind == PFVM_KIND_OPTIONAL && stbds_arrlen(t->elems) > 1)
        return pfvm__fail(st, PFVM_ERR_INVALID, "an optional holds %d values", (int)stbds_arrlen(t->elems));
    for (i = 0; i < (int)stbds_arrlen(t->elems); i++) {
        if (!t->elems[i])
            return pfvm__fail(st, PFVM_ERR_INVALID, "element %d of a sequence is NULL", i);
        if (i && t->elems[i]->kind != t->elems[0]->kind)
            return pfvm__fail(st, PFVM_ERR_INVALID, "a sequence mixes element kinds");
        {
            pfvm_code rc = pfvm__onnx_check_value(t->elems[i], depth + 1, st);
            if (rc)
                return rc;
        }
    }
    return PFVM_OK;
}

/* ---- values ----------------------------------------------------------------------- */

static bool pfvm__onnx_enc_value(pb_ostream_t *s, const void *arg);

/* SequenceProto/OptionalProto elem_type: 0 undefined (an empty optional),
 * 1 tensor, 3 sequence, 5 optional; the field of the elements follows. */
static int pfvm__onnx_elem_code(const pfvm_tensor *t)
{
    const pfvm_tensor *e = stbds_arrlen(t->elems) ? t->elems[0] : NULL;
    if (!e)
        return t->kind == PFVM_KIND_OPTIONAL ? 0 : 1;
    return e->kind == PFVM_KIND_SEQUENCE ? 3 : e->kind == PFVM_KIND_OPTIONAL ? 5 : 1;
}

static bool pfvm__onnx_enc_container(pb_ostream_t *s, const void *arg)
{
    const pfvm_tensor *t = (const pfvm_tensor *)arg;
    int i, n = (int)stbds_arrlen(t->elems), code = pfvm__onnx_elem_code(t);
    uint32_t tag = code == 3 ? pfvm__pb_SequenceProto_sequence_values_tag
                   : code == 5 ? pfvm__pb_SequenceProto_optional_values_tag
                               : pfvm__pb_SequenceProto_tensor_values_tag;
    if (!pfvm__onnx_put_str(s, pfvm__pb_SequenceProto_name_tag, t->name) ||
        !pfvm__onnx_put_int(s, pfvm__pb_SequenceProto_elem_type_tag, code))
        return false;
    for (i = 0; i < n; i++)
        if (!pfvm__onnx_sub(s, tag, pfvm__onnx_enc_value, t->elems[i]))
            return false;
    return true;
}

static bool pfvm__onnx_enc_value(pb_ostream_t *s, const void *arg)
{
    const pfvm_tensor *t = (const pfvm_tensor *)arg;
    if (t->kind == PFVM_KIND_SEQUENCE || t->kind == PFVM_KIND_OPTIONAL)
        return pfvm__onnx_enc_container(s, t);
    return pfvm__onnx_enc_tensor(s, t);
}

/* Sizes, allocates and writes: the bytes come from pfvm's allocator. */
static pfvm_code pfvm__onnx_encode(pfvm__onnx_enc_fn fn, const void *arg, void **bytes, size_t *size, pfvm_status *st)
{
    pb_ostream_t sz = PB_OSTREAM_SIZING, out;
    unsigned char *buf;
    if (!fn(&sz, arg))
        return pfvm__fail(st, PFVM_ERR_INVALID, "cannot encode: %s", PB_GET_ERROR(&sz));
    /* protobuf readers (onnx's among them) refuse messages of 2 GiB or more */
    if (sz.bytes_written > (size_t)INT32_MAX)
        return pfvm__fail(st, PFVM_ERR_UNSUPPORTED,
                          "the encoding takes %zu bytes, past protobuf's 2 GiB limit (external data is not written)",
                          sz.bytes_written);
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

static pfvm_code pfvm__scoped_onnx_save_memory(const pfvm_model *m, void **bytes, size_t *size, pfvm_status *st)
{
    pfvm_code rc;
    *bytes = NULL;
    *size = 0;
    rc = pfvm__onnx_check_model(m, st);
    if (!rc)
        rc = pfvm__onnx_encode(pfvm__onnx_enc_model, m, bytes, size, st);
    if (!rc)
        pfvm__ok(st);
    return rc;
}

pfvm_code pfvm_onnx_save_memory(const pfvm_model *m, void **bytes, size_t *size, pfvm_status *st)
{
    PFVM__SCOPED(pfvm_code, pfvm__model_allocator(m), pfvm__scoped_onnx_save_memory(m, bytes, size, st));
}

pfvm_code pfvm_onnx_write_value(const pfvm_tensor *t, void **bytes, size_t *size, pfvm_status *st)
{
    pfvm_code rc;
    *bytes = NULL;
    *size = 0;
    rc = pfvm__onnx_check_value(t, 0, st);
    if (!rc)
        rc = pfvm__onnx_encode(pfvm__onnx_enc_value, t, bytes, size, st);
    if (!rc)
        pfvm__ok(st);
    return rc;
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

static pfvm_code pfvm__scoped_onnx_save_file(const pfvm_model *m, const char *path, pfvm_status *st)
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

pfvm_code pfvm_onnx_save_file(const pfvm_model *m, const char *path, pfvm_status *st)
{
    PFVM__SCOPED(pfvm_code, pfvm__model_allocator(m), pfvm__scoped_onnx_save_file(m, path, st));
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
