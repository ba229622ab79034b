#include "onnx_io.h"
#include "onnx.pb.h"

#include <pb_decode.h>
#ifndef PFVM_NO_STDIO
#include <stdio.h>
#endif

/* Nested graphs and types deeper than this are rejected: real models nest a
 * few levels, a malicious file could nest until the stack ends. */
#define PFVM__ONNX_MAX_DEPTH 64

/* Longer dim_params, and those holding a NUL byte (whose C name would be
 * cut short: "\0" would name the symbol ""), are treated as unnamed dims. */
#define PFVM__ONNX_MAX_DIM_PARAM 1024

/* PFVM_ONNX_TENSORS_ONLY: the reader takes dense tensors only (firmware
 * whose prepared models hold nothing else); sparse tensors and sequence,
 * optional and map types and values are refused with a message. */
#ifdef PFVM_ONNX_TENSORS_ONLY
#define PFVM__ONNX_ALL_KINDS 0
#else
#define PFVM__ONNX_ALL_KINDS 1
#endif
#define PFVM__ONNX_TENSORS_ONLY_MSG "a build without PFVM_ONNX_TENSORS_ONLY"

/* PFVM_PLANNED_ONLY: the reader takes what the executor needs of a planned
 * file: every dim is a number (the stored plan's shapes), so it makes no
 * symbol and the symbol table's naming code is not linked; doc strings
 * are skipped (left ""); nodes are read in their stored order, each input
 * defined before (no second pass declaring outputs ahead: a node reading
 * a later value fails as read, "input ... is not defined"). */
#ifdef PFVM_PLANNED_ONLY
#define PFVM__ONNX_PLANNED_ONLY 1
#else
#define PFVM__ONNX_PLANNED_ONLY 0
#endif
/* whether doc strings are kept */
#define PFVM__ONNX_DOCS (!PFVM__ONNX_PLANNED_ONLY)

/* A byte range inside the input; strings and submessages are spans. */
typedef struct pfvm__onnx_slice {
    const unsigned char *p;
    size_t n;
} pfvm__onnx_slice;

typedef struct pfvm__onnx_rd {
    pfvm_model *m;        /* destination (NULL when reading a value file) */
    pfvm_status *st;
    unsigned flags;
    int depth;            /* graphs, types and values being read, nested */
    char *scratch;        /* stb_ds: pfvm__onnx_name's buffer */
    int oom;              /* a field decoder ran out of memory */
} pfvm__onnx_rd;

static pfvm_code pfvm__onnx_bad(pfvm__onnx_rd *r, const char *what)
{
    if (r->oom)
        return pfvm__fail(r->st, PFVM_ERR_NOMEM, "out of memory reading %s", what);
    return pfvm__fail(r->st, PFVM_ERR_PARSE, "malformed ONNX: %s", what);
}

static pfvm_code pfvm__onnx_nomem(pfvm__onnx_rd *r)
{
    return pfvm__fail(r->st, PFVM_ERR_NOMEM, "out of memory");
}

/* The code of a failure a callee reported. r->st is never NULL and starts
 * cleared, so a callee that failed without a message (an allocation inside
 * the symbol table, say) still gives an error, never PFVM_OK. */
static pfvm_code pfvm__onnx_err(pfvm__onnx_rd *r)
{
    return r->st->code != PFVM_OK ? r->st->code : pfvm__onnx_nomem(r);
}

/* ---- wire-format primitives over nanopb streams ---------------------------- */

/* The current read position of a buffer stream (nanopb's buffer streams keep
 * it in `state`): how string fields are viewed without copying. */
static const unsigned char *pfvm__onnx_pos(const pb_istream_t *s)
{
    return (const unsigned char *)s->state;
}

/* Next field: 1 with tag and wire type, 0 at the end, -1 on a bad tag.
 * nanopb reports a zero tag as the end of a message (for zero-terminated
 * streams); in ONNX files field number 0 never occurs, so it is an error
 * here rather than a silent end that would drop the rest of the message. */
static int pfvm__onnx_next(pb_istream_t *s, uint32_t *tag, pb_wire_type_t *wt)
{
    bool eof = false;
    if (!s->bytes_left)
        return 0;
    if (!pb_decode_tag(s, wt, tag, &eof) || *tag == 0)
        return -1;
    return 1;
}

static int pfvm__onnx_span(pb_istream_t *s, pb_wire_type_t wt, pfvm__onnx_slice *out)
{
    uint64_t len;
    if (wt != PB_WT_STRING || !pb_decode_varint(s, &len) || len > s->bytes_left)
        return 0;
    out->p = pfvm__onnx_pos(s);
    out->n = (size_t)len;
    return pb_read(s, NULL, (size_t)len);
}

static int pfvm__onnx_u64(pb_istream_t *s, pb_wire_type_t wt, uint64_t *v)
{
    return wt == PB_WT_VARINT && pb_decode_varint(s, v);
}

static int pfvm__onnx_i64(pb_istream_t *s, pb_wire_type_t wt, int64_t *v)
{
    uint64_t u;
    if (!pfvm__onnx_u64(s, wt, &u))
        return 0;
    *v = (int64_t)u;
    return 1;
}

/* Repeated varints, packed or not, appended to an stb_ds array. */
static int pfvm__onnx_ints(pfvm__onnx_rd *r, pb_istream_t *s, pb_wire_type_t wt, int64_t **arr)
{
    uint64_t u;
    if (wt == PB_WT_VARINT) {
        if (!pb_decode_varint(s, &u))
            return 0;
        return pfvm__arrpush(*arr, (int64_t)u) || (r->oom = 1, 0);
    }
    if (wt == PB_WT_STRING) {
        pb_istream_t sub;
        if (!pb_make_string_substream(s, &sub))
            return 0;
        while (sub.bytes_left) {
            if (!pb_decode_varint(&sub, &u)) {
                pb_close_string_substream(s, &sub);
                return 0;
            }
            if (!pfvm__arrpush(*arr, (int64_t)u)) {
                r->oom = 1;
                pb_close_string_substream(s, &sub);
                return 0;
            }
        }
        return pb_close_string_substream(s, &sub);
    }
    return 0;
}

static int pfvm__onnx_little_endian(void)
{
    const uint16_t one = 1;
    return *(const unsigned char *)&one == 1;
}

/* Reverses the bytes of each `width`-byte scalar (raw and packed data are
 * little-endian on the wire). */
static void pfvm__onnx_swap_bytes(void *data, size_t n, size_t width)
{
    unsigned char *p = (unsigned char *)data;
    size_t i, j;
    for (i = 0; i + width <= n; i += width)
        for (j = 0; j < width / 2; j++) {
            unsigned char c = p[i + j];
            p[i + j] = p[i + width - 1 - j];
            p[i + width - 1 - j] = c;
        }
}

/* Repeated fixed-width values (4 or 8 bytes), packed or not. */
static int pfvm__onnx_fixed(pfvm__onnx_rd *r, pb_istream_t *s, pb_wire_type_t wt, size_t width, unsigned char **arr)
{
    unsigned char buf[8], *dst;
    pb_wire_type_t want = width == 4 ? PB_WT_32BIT : PB_WT_64BIT;
    if (wt == want) {
        if (!(width == 4 ? pb_decode_fixed32(s, buf) : pb_decode_fixed64(s, buf)))
            return 0;
        if (!(dst = (unsigned char *)pfvm__arraddn(*arr, width)))
            return r->oom = 1, 0;
        memcpy(dst, buf, width);
        return 1;
    }
    if (wt == PB_WT_STRING) {
        pfvm__onnx_slice sp;
        if (!pfvm__onnx_span(s, wt, &sp) || sp.n % width)
            return 0;
        if (sp.n) {
            if (!(dst = (unsigned char *)pfvm__arraddn(*arr, sp.n)))
                return r->oom = 1, 0;
            memcpy(dst, sp.p, sp.n);
            if (!pfvm__onnx_little_endian())
                pfvm__onnx_swap_bytes(dst, sp.n, width);
        }
        return 1;
    }
    return 0;
}

static pb_istream_t pfvm__onnx_stream(pfvm__onnx_slice sp)
{
    return pb_istream_from_buffer(sp.p, sp.n);
}

static const char *pfvm__onnx_str(pfvm__onnx_rd *r, pfvm__onnx_slice sp)
{
    const char *s = r->m ? pfvm_model_strndup(r->m, (const char *)sp.p, sp.n) : NULL;
    if (!s)
        pfvm__fail(r->st, PFVM_ERR_NOMEM, "out of memory");
    return s;
}

/* ---- tensors ------------------------------------------------------------------ */

/* The fields of one TensorProto, gathered before the tensor is built. */
typedef struct pfvm__onnx_tp {
    int64_t *dims;            /* stb_ds */
    int64_t dtype;
    pfvm__onnx_slice name, raw;
    int has_raw, external, has_segment, has_typed; /* has_typed: PFVM_PLANNED_ONLY, a typed field skipped */
    unsigned char *f32;       /* stb_ds bytes: float_data */
    unsigned char *f64;       /* double_data */
    int64_t *i32;             /* int32_data (as int64) */
    int64_t *i64;             /* int64_data */
    int64_t *u64;             /* uint64_data */
    pfvm__onnx_slice *strs;   /* stb_ds: string_data */
    pfvm__onnx_slice ext_location;
    int64_t ext_offset, ext_length;
} pfvm__onnx_tp;

static void pfvm__onnx_tp_free(pfvm__onnx_tp *t)
{
    stbds_arrfree(t->dims);
    stbds_arrfree(t->f32);
    stbds_arrfree(t->f64);
    stbds_arrfree(t->i32);
    stbds_arrfree(t->i64);
    stbds_arrfree(t->u64);
    stbds_arrfree(t->strs);
}

/* A tensor's name for messages (at most 200 bytes of it). */
#define PFVM__ONNX_NAME_ARG(t) (int)((t)->name.n > 200 ? 200 : (t)->name.n), ((t)->name.p ? (const char *)(t)->name.p : "")

/* A non-negative decimal number (external data offsets and lengths are
 * strings), without the C library and with overflow checked. */
static int pfvm__onnx_decimal(pfvm__onnx_slice sp, int64_t *out)
{
    size_t i;
    int64_t v = 0;
    if (!sp.n)
        return 0;
    for (i = 0; i < sp.n; i++) {
        int d = (int)sp.p[i] - '0';
        if (d < 0 || d > 9 || v > (INT64_MAX - d) / 10)
            return 0;
        v = v * 10 + d;
    }
    *out = v;
    return 1;
}

/* PFVM_NO_STDIO: external data is never read, so its entries are not parsed */
#ifdef PFVM_NO_STDIO
#define PFVM__ONNX_NO_EXTERNAL 1
#else
#define PFVM__ONNX_NO_EXTERNAL 0
#endif

/* One external_data entry: location, offset or length (others, such as
 * checksum, are ignored). */
static pfvm_code pfvm__onnx_ext_entry(pfvm__onnx_rd *r, pfvm__onnx_slice sp, pfvm__onnx_tp *t)
{
    pb_istream_t s = pfvm__onnx_stream(sp);
    pfvm__onnx_slice key = {NULL, 0}, val = {NULL, 0};
    uint32_t tag;
    pb_wire_type_t wt;
    int k;
    while ((k = pfvm__onnx_next(&s, &tag, &wt)) > 0) {
        int ok = tag == pfvm__pb_StringStringEntryProto_key_tag     ? pfvm__onnx_span(&s, wt, &key)
                 : tag == pfvm__pb_StringStringEntryProto_value_tag ? pfvm__onnx_span(&s, wt, &val)
                                                                : pb_skip_field(&s, wt);
        if (!ok)
            return pfvm__onnx_bad(r, "external_data entry");
    }
    if (k < 0)
        return pfvm__onnx_bad(r, "external_data entry");
    if (key.n == 8 && !memcmp(key.p, "location", 8)) {
        t->ext_location = val;
    } else if (key.n == 6 && (!memcmp(key.p, "offset", 6) || !memcmp(key.p, "length", 6))) {
        int64_t v;
        if (!pfvm__onnx_decimal(val, &v))
            return pfvm__fail(r->st, PFVM_ERR_INVALID, "tensor '%.*s': external_data %s '%.*s' is not a byte count",
                              PFVM__ONNX_NAME_ARG(t), key.p[0] == 'o' ? "offset" : "length",
                              (int)(val.n > 40 ? 40 : val.n), val.p ? (const char *)val.p : "");
        if (key.p[0] == 'o')
            t->ext_offset = v;
        else
            t->ext_length = v;
    }
    return PFVM_OK;
}

static pfvm_code pfvm__onnx_parse_tp(pfvm__onnx_rd *r, pfvm__onnx_slice sp, pfvm__onnx_tp *t)
{
    pb_istream_t s = pfvm__onnx_stream(sp);
    uint32_t tag;
    pb_wire_type_t wt;
    int k;
    memset(t, 0, sizeof *t);
    t->ext_length = -1;
    while ((k = pfvm__onnx_next(&s, &tag, &wt)) > 0) {
        int ok = 1;
        pfvm__onnx_slice x;
        int64_t v = 0;
        switch (tag) {
        case pfvm__pb_TensorProto_dims_tag: ok = pfvm__onnx_ints(r, &s, wt, &t->dims); break;
        case pfvm__pb_TensorProto_data_type_tag: ok = pfvm__onnx_i64(&s, wt, &t->dtype); break;
        case pfvm__pb_TensorProto_segment_tag: t->has_segment = 1; ok = pb_skip_field(&s, wt); break;
#ifdef PFVM_PLANNED_ONLY /* planned files hold raw_data: typed fields are refused (pfvm__onnx_tp_data_check) */
        case pfvm__pb_TensorProto_float_data_tag: case pfvm__pb_TensorProto_int32_data_tag:
        case pfvm__pb_TensorProto_string_data_tag: case pfvm__pb_TensorProto_int64_data_tag:
        case pfvm__pb_TensorProto_double_data_tag: case pfvm__pb_TensorProto_uint64_data_tag:
            t->has_typed = 1;
            ok = pb_skip_field(&s, wt);
            break;
#else
        case pfvm__pb_TensorProto_float_data_tag: ok = pfvm__onnx_fixed(r, &s, wt, 4, &t->f32); break;
        case pfvm__pb_TensorProto_int32_data_tag: ok = pfvm__onnx_ints(r, &s, wt, &t->i32); break;
        case pfvm__pb_TensorProto_string_data_tag:
            ok = pfvm__onnx_span(&s, wt, &x);
            if (ok && !pfvm__arrpush(t->strs, x))
                ok = 0, r->oom = 1;
            break;
        case pfvm__pb_TensorProto_int64_data_tag: ok = pfvm__onnx_ints(r, &s, wt, &t->i64); break;
        case pfvm__pb_TensorProto_double_data_tag: ok = pfvm__onnx_fixed(r, &s, wt, 8, &t->f64); break;
        case pfvm__pb_TensorProto_uint64_data_tag: ok = pfvm__onnx_ints(r, &s, wt, &t->u64); break;
#endif
        case pfvm__pb_TensorProto_name_tag: ok = pfvm__onnx_span(&s, wt, &t->name); break;
        case pfvm__pb_TensorProto_raw_data_tag:
            ok = pfvm__onnx_span(&s, wt, &t->raw);
            t->has_raw = 1;
            break;
        case pfvm__pb_TensorProto_external_data_tag:
            if (PFVM__ONNX_NO_EXTERNAL) { /* its data cannot be read anyway (pfvm__onnx_external) */
                ok = pb_skip_field(&s, wt);
                break;
            }
            ok = pfvm__onnx_span(&s, wt, &x);
            if (ok && pfvm__onnx_ext_entry(r, x, t))
                return pfvm__onnx_err(r);
            break;
        case pfvm__pb_TensorProto_data_location_tag:
            ok = pfvm__onnx_i64(&s, wt, &v);
            t->external = v == 1;
            break;
        default: ok = pb_skip_field(&s, wt); break;
        }
        if (!ok)
            return pfvm__onnx_bad(r, "TensorProto field");
    }
    if (k < 0)
        return pfvm__onnx_bad(r, "TensorProto tag");
    return PFVM_OK;
}

static int pfvm__onnx_is_4bit(pfvm_dtype dt)
{
    return dt == PFVM_UINT4 || dt == PFVM_INT4;
}

/* Width of the scalars a dtype is made of: byte swapping and alignment go
 * by it (a complex64 is two 4-byte floats). */
static size_t pfvm__onnx_scalar_width(pfvm_dtype dt)
{
    switch (dt) {
    case PFVM_COMPLEX64: return 4;
    case PFVM_COMPLEX128: return 8;
    case PFVM_STRING: return 1;
    default: return pfvm_dtype_size(dt);
    }
}

#ifndef PFVM_NO_STDIO
/* External data locations must stay inside the model's directory: no
 * absolute paths, drive letters, `..` components or embedded NULs. */
static int pfvm__onnx_safe_location(const char *name, size_t n)
{
    size_t i, start = 0;
    if (!n || strlen(name) != n || name[0] == '/' || name[0] == '\\')
        return 0;
    for (i = 0; i <= n; i++) {
        if (i < n && name[i] == ':')
            return 0;
        if (i == n || name[i] == '/' || name[i] == '\\') {
            if (i - start == 2 && name[start] == '.' && name[start + 1] == '.')
                return 0;
            start = i + 1;
        }
    }
    return 1;
}
#endif

/* Bytes of a file external data refers to, read into a heap block that the
 * model owns. The file's size is checked before anything is allocated. */
static pfvm_code pfvm__onnx_external(pfvm__onnx_rd *r, const pfvm__onnx_tp *t, size_t bytes, void **out)
{
#ifndef PFVM_NO_STDIO
    char path[4096], name[1024];
    FILE *f;
    unsigned char *buf;
    long size;
    if (!r->m || !r->m->dir)
        return pfvm__fail(r->st, PFVM_ERR_IO,
                          "tensor '%.*s': external data needs a model loaded from a file (pfvm_onnx_load_file)",
                          PFVM__ONNX_NAME_ARG(t));
    if (!t->ext_location.n || t->ext_location.n >= sizeof name)
        return pfvm__fail(r->st, PFVM_ERR_INVALID, "tensor '%.*s': external data without a valid location",
                          PFVM__ONNX_NAME_ARG(t));
    memcpy(name, t->ext_location.p, t->ext_location.n);
    name[t->ext_location.n] = 0;
    if (!pfvm__onnx_safe_location(name, t->ext_location.n))
        return pfvm__fail(r->st, PFVM_ERR_INVALID, "tensor '%.*s': external data location '%s' leaves the model's directory",
                          PFVM__ONNX_NAME_ARG(t), name);
    if ((size_t)pfvm__snprintf(path, sizeof path, "%s/%s", r->m->dir, name) >= sizeof path)
        return pfvm__fail(r->st, PFVM_ERR_INVALID, "tensor '%.*s': external data path too long", PFVM__ONNX_NAME_ARG(t));
    if (t->ext_length >= 0 && (uint64_t)t->ext_length != (uint64_t)bytes)
        return pfvm__fail(r->st, PFVM_ERR_INVALID, "tensor '%.*s': external data length %lld, the tensor needs %zu bytes",
                          PFVM__ONNX_NAME_ARG(t), (long long)t->ext_length, bytes);
    f = fopen(path, "rb");
    if (!f)
        return pfvm__fail(r->st, PFVM_ERR_IO, "tensor '%.*s': cannot open external data file '%s'", PFVM__ONNX_NAME_ARG(t),
                          path);
    if (fseek(f, 0, SEEK_END) || (size = ftell(f)) < 0 || (uint64_t)t->ext_offset > (uint64_t)size ||
        (uint64_t)size - (uint64_t)t->ext_offset < bytes || fseek(f, (long)t->ext_offset, SEEK_SET)) {
        fclose(f);
        return pfvm__fail(r->st, PFVM_ERR_INVALID,
                          "tensor '%.*s': external data file '%s' is shorter than offset %lld + %zu bytes",
                          PFVM__ONNX_NAME_ARG(t), path, (long long)t->ext_offset, bytes);
    }
    buf = (unsigned char *)pfvm__malloc(bytes ? bytes : 1);
    if (!buf) {
        fclose(f);
        return pfvm__fail(r->st, PFVM_ERR_NOMEM, "out of memory reading '%s'", path);
    }
    if (bytes && fread(buf, 1, bytes, f) != bytes) {
        fclose(f);
        pfvm__free(buf);
        return pfvm__fail(r->st, PFVM_ERR_IO, "cannot read external data file '%s'", path);
    }
    fclose(f);
    if (!pfvm__onnx_little_endian()) /* external data is little-endian too */
        pfvm__onnx_swap_bytes(buf, bytes, pfvm__onnx_scalar_width((pfvm_dtype)t->dtype));
    pfvm_model_own(r->m, buf, NULL);
    *out = buf;
    return PFVM_OK;
#else
    (void)bytes;
    (void)out;
    return pfvm__fail(r->st, PFVM_ERR_UNSUPPORTED, "tensor '%.*s': external data needs stdio (PFVM_NO_STDIO is set)",
                      PFVM__ONNX_NAME_ARG(t));
#endif
}

/* How many values the typed field that holds dt has, and how many it must
 * have for numel elements (complex: two floats each; 4-bit types: two
 * elements per int32_data value, like raw_data's two per byte). */
#ifndef PFVM_PLANNED_ONLY /* the typed fields are not read there */
static size_t pfvm__onnx_typed_have(const pfvm__onnx_tp *t, pfvm_dtype dt)
{
    switch (dt) {
    case PFVM_FLOAT: case PFVM_COMPLEX64: return stbds_arrlen(t->f32) / 4;
    case PFVM_DOUBLE: case PFVM_COMPLEX128: return stbds_arrlen(t->f64) / 8;
    case PFVM_INT64: return stbds_arrlen(t->i64);
    case PFVM_UINT32: case PFVM_UINT64: return stbds_arrlen(t->u64);
    case PFVM_STRING: return stbds_arrlen(t->strs);
    default: return stbds_arrlen(t->i32);
    }
}

static size_t pfvm__onnx_typed_need(pfvm_dtype dt, size_t numel)
{
    if (dt == PFVM_COMPLEX64 || dt == PFVM_COMPLEX128)
        return numel * 2; /* numel * 16 bytes fit in size_t: checked before */
    if (pfvm__onnx_is_4bit(dt))
        return numel / 2 + numel % 2;
    return numel;
}
#endif

/* 4-bit elements, two per byte (the first in the low nibble), unpacked to
 * one per byte; INT4 is sign-extended. */
static void pfvm__onnx_unpack_4bit(unsigned char *dst, size_t numel, const unsigned char *packed, const int64_t *wide,
                                   int is_signed)
{
    size_t i;
    for (i = 0; i < numel; i++) {
        unsigned byte = packed ? packed[i / 2] : (unsigned)(wide[i / 2] & 0xff);
        unsigned nib = (byte >> (4 * (i % 2))) & 15u;
        dst[i] = (unsigned char)(is_signed && (nib & 8u) ? nib | 0xf0u : nib);
    }
}

#ifndef PFVM_PLANNED_ONLY
/* Copies the typed-field values of t into data (counts checked before). */
static void pfvm__onnx_fill_typed(const pfvm__onnx_tp *t, pfvm_dtype dt, size_t numel, void *data)
{
    size_t i, have = pfvm__onnx_typed_have(t, dt);
    switch (dt) {
    case PFVM_FLOAT: case PFVM_COMPLEX64:
        if (have)
            memcpy(data, t->f32, have * 4);
        return;
    case PFVM_DOUBLE: case PFVM_COMPLEX128:
        if (have)
            memcpy(data, t->f64, have * 8);
        return;
    case PFVM_INT64:
        if (have)
            memcpy(data, t->i64, have * 8);
        return;
    case PFVM_UINT32:
        for (i = 0; i < numel; i++)
            ((uint32_t *)data)[i] = (uint32_t)t->u64[i];
        return;
    case PFVM_UINT64:
        for (i = 0; i < numel; i++)
            ((uint64_t *)data)[i] = (uint64_t)t->u64[i];
        return;
    case PFVM_UINT4: case PFVM_INT4:
        pfvm__onnx_unpack_4bit((unsigned char *)data, numel, NULL, t->i32, dt == PFVM_INT4);
        return;
    default: /* int32_data holds every narrower type, float16 as its bits */
        for (i = 0; i < numel; i++) {
            int64_t v = t->i32[i];
            switch (pfvm_dtype_size(dt)) {
            case 4: ((int32_t *)data)[i] = (int32_t)v; break;
            case 2: ((uint16_t *)data)[i] = (uint16_t)v; break;
            default: ((uint8_t *)data)[i] = (uint8_t)v; break;
            }
        }
        return;
    }
}
#endif

/* Checks dtype, segment, rank and dims; gives the element count and the
 * byte size pfvm stores. */
static pfvm_code pfvm__onnx_tp_check(pfvm__onnx_rd *r, const pfvm__onnx_tp *t, size_t *numel_out, size_t *bytes_out)
{
    int rank = (int)stbds_arrlen(t->dims), i;
    int64_t numel = 1;
    size_t esize;
    if (t->dtype <= 0 || t->dtype >= PFVM_DTYPE_COUNT)
        return pfvm__fail(r->st, PFVM_ERR_UNSUPPORTED, "tensor '%.*s': unknown element type %lld", PFVM__ONNX_NAME_ARG(t),
                          (long long)t->dtype);
    if (t->has_segment)
        return pfvm__fail(r->st, PFVM_ERR_UNSUPPORTED,
                          "tensor '%.*s': segmented tensors (TensorProto.segment) are not supported",
                          PFVM__ONNX_NAME_ARG(t));
    if (rank > PFVM_MAX_RANK)
        return pfvm__fail(r->st, PFVM_ERR_UNSUPPORTED, "tensor '%.*s' has rank %d, more than PFVM_MAX_RANK (%d)",
                          PFVM__ONNX_NAME_ARG(t), rank, PFVM_MAX_RANK);
    for (i = 0; i < rank; i++) {
        if (t->dims[i] < 0)
            return pfvm__fail(r->st, PFVM_ERR_INVALID, "tensor '%.*s': negative dimension %lld", PFVM__ONNX_NAME_ARG(t),
                              (long long)t->dims[i]);
        if (!pfvm__mul_i64(numel, t->dims[i], &numel))
            return pfvm__fail(r->st, PFVM_ERR_INVALID, "tensor '%.*s': element count overflows", PFVM__ONNX_NAME_ARG(t));
    }
    esize = pfvm_dtype_size((pfvm_dtype)t->dtype);
    if ((uint64_t)numel > SIZE_MAX / 16 / (esize ? esize : 1))
        return pfvm__fail(r->st, PFVM_ERR_INVALID, "tensor '%.*s': %lld elements are too many", PFVM__ONNX_NAME_ARG(t),
                          (long long)numel);
    *numel_out = (size_t)numel;
    *bytes_out = (size_t)numel * esize;
    return PFVM_OK;
}

/* The data must really be in the message before anything of the size the
 * dims claim is allocated. */
static pfvm_code pfvm__onnx_tp_data_check(pfvm__onnx_rd *r, const pfvm__onnx_tp *t, size_t numel, size_t bytes)
{
    pfvm_dtype dt = (pfvm_dtype)t->dtype;
    size_t need;
    if (t->external)
        return PFVM_OK; /* checked against the file */
    if (t->has_raw) {
        if (dt == PFVM_STRING)
            return pfvm__fail(r->st, PFVM_ERR_INVALID, "tensor '%.*s': string tensors cannot use raw_data",
                              PFVM__ONNX_NAME_ARG(t));
        need = pfvm__onnx_is_4bit(dt) ? numel / 2 + numel % 2 : bytes;
        if (t->raw.n != need)
            return pfvm__fail(r->st, PFVM_ERR_INVALID, "tensor '%.*s': raw_data has %zu bytes, %zu elements of %s need %zu",
                              PFVM__ONNX_NAME_ARG(t), t->raw.n, numel, pfvm_dtype_name(dt), need);
        return PFVM_OK;
    }
#ifdef PFVM_PLANNED_ONLY
    if (t->has_typed || numel)
        return pfvm__fail(r->st, PFVM_ERR_UNSUPPORTED,
                          "tensor '%.*s' has no raw_data (pfvm built with PFVM_PLANNED_ONLY reads no typed data fields)",
                          PFVM__ONNX_NAME_ARG(t));
    return PFVM_OK;
#else
    size_t have = pfvm__onnx_typed_have(t, dt);
    need = pfvm__onnx_typed_need(dt, numel);
    if (have != need)
        return pfvm__fail(r->st, PFVM_ERR_INVALID, "tensor '%.*s': %zu stored values for %zu elements of %s (%zu needed)",
                          PFVM__ONNX_NAME_ARG(t), have, numel, pfvm_dtype_name(dt), need);
    return PFVM_OK;
#endif
}

/* Where the data of a model tensor can stay: external data read into a
 * block the model owns, or aligned raw_data viewed in place (zero-copy: the
 * model reads the caller's bytes). NULL: the data is copied. */
static pfvm_code pfvm__onnx_tp_view(pfvm__onnx_rd *r, const pfvm__onnx_tp *t, size_t bytes, void **view)
{
    pfvm_dtype dt = (pfvm_dtype)t->dtype;
    size_t align = pfvm__onnx_scalar_width(dt);
    *view = NULL;
    if (t->external && !r->m)
        return pfvm__fail(r->st, PFVM_ERR_UNSUPPORTED, "tensor '%.*s': external data in a value file",
                          PFVM__ONNX_NAME_ARG(t));
    if (t->external)
        return pfvm__onnx_is_4bit(dt) || dt == PFVM_STRING
                   ? pfvm__fail(r->st, PFVM_ERR_UNSUPPORTED, "tensor '%.*s': external data of type %s",
                                PFVM__ONNX_NAME_ARG(t), pfvm_dtype_name(dt))
                   : pfvm__onnx_external(r, t, bytes, view);
    if (t->has_raw && r->m && !(r->flags & PFVM_LOAD_COPY) && pfvm__onnx_little_endian() && !pfvm__onnx_is_4bit(dt) &&
        ((uintptr_t)t->raw.p % (align ? align : 1)) == 0)
        *view = (void *)t->raw.p;
    return PFVM_OK;
}

/* Fills a freshly allocated tensor from the parsed fields. */
static pfvm_code pfvm__onnx_tp_fill(pfvm__onnx_rd *r, const pfvm__onnx_tp *t, size_t numel, pfvm_tensor *out)
{
    pfvm_dtype dt = (pfvm_dtype)t->dtype;
#ifdef PFVM_PLANNED_ONLY /* raw_data only (pfvm__onnx_tp_data_check) */
    (void)r;
#else
    size_t i;
    if (dt == PFVM_STRING) {
        for (i = 0; i < numel; i++) {
            char *s = r->m ? (char *)pfvm_model_strndup(r->m, (const char *)t->strs[i].p, t->strs[i].n)
                           : pfvm__strndup((const char *)t->strs[i].p, t->strs[i].n);
            if (!s)
                return pfvm__fail(r->st, PFVM_ERR_NOMEM, "out of memory");
            ((char **)out->data)[i] = s;
        }
        return PFVM_OK;
    }
#endif
    if (t->has_raw && pfvm__onnx_is_4bit(dt)) {
        pfvm__onnx_unpack_4bit((unsigned char *)out->data, numel, t->raw.p, NULL, dt == PFVM_INT4);
    } else if (t->has_raw) {
        if (out->nbytes)
            memcpy(out->data, t->raw.p, out->nbytes);
        if (!pfvm__onnx_little_endian())
            pfvm__onnx_swap_bytes(out->data, out->nbytes, pfvm__onnx_scalar_width(dt));
    }
#ifndef PFVM_PLANNED_ONLY
    else {
        pfvm__onnx_fill_typed(t, dt, numel, out->data);
    }
#endif
    return PFVM_OK;
}

/* Builds a tensor from parsed fields: owned by the model (r->m) or a heap
 * tensor (r->m NULL, for value files). */
static pfvm_tensor *pfvm__onnx_build_tensor(pfvm__onnx_rd *r, pfvm__onnx_tp *t)
{
    pfvm_dtype dt = (pfvm_dtype)t->dtype;
    int rank = (int)stbds_arrlen(t->dims);
    size_t numel = 0, bytes = 0;
    pfvm_tensor *out;
    void *view = NULL;
    if (pfvm__onnx_tp_check(r, t, &numel, &bytes) || pfvm__onnx_tp_data_check(r, t, numel, bytes) ||
        pfvm__onnx_tp_view(r, t, bytes, &view))
        return NULL;
    if (r->m)
        out = pfvm_model_tensor(r->m, dt, rank, t->dims, view, r->st);
    else
        out = pfvm_tensor_new(dt, rank, t->dims, r->st);
    if (!out || view)
        return out;
    if (pfvm__onnx_tp_fill(r, t, numel, out)) {
        if (!r->m)
            pfvm_tensor_free(out); /* model tensors go with the model */
        return NULL;
    }
    return out;
}

static pfvm_tensor *pfvm__onnx_tensor(pfvm__onnx_rd *r, pfvm__onnx_slice sp)
{
    pfvm__onnx_tp t;
    pfvm_tensor *out = NULL;
    if (!pfvm__onnx_parse_tp(r, sp, &t)) {
        out = pfvm__onnx_build_tensor(r, &t);
        if (out && r->m && t.name.n && !(out->name = pfvm__onnx_str(r, t.name)))
            out = NULL;
    }
    pfvm__onnx_tp_free(&t);
    return out;
}

/* Linear position of sparse value i: indices are [NNZ] linear positions or
 * [NNZ, rank] coordinates. -1 when out of range. */
static int64_t pfvm__onnx_sparse_pos(const pfvm_tensor *ix, int64_t i, const int64_t *dims, int rank, int64_t numel)
{
    const int64_t *idx = (const int64_t *)ix->data;
    int64_t lin = 0;
    int d;
    if (ix->rank == 1)
        return idx[i] >= 0 && idx[i] < numel ? idx[i] : -1;
    for (d = 0; d < rank; d++) {
        int64_t c = idx[i * rank + d];
        if (c < 0 || c >= dims[d])
            return -1;
        lin = lin * dims[d] + c;
    }
    return lin;
}

/* SparseTensorProto -> dense model tensor. *name (if given) gets the
 * values tensor's name, which names a sparse initializer. */
static pfvm_tensor *pfvm__onnx_sparse(pfvm__onnx_rd *r, pfvm__onnx_slice sp, const char **name)
{
    pb_istream_t s = pfvm__onnx_stream(sp);
    uint32_t tag;
    pb_wire_type_t wt;
    pfvm__onnx_slice vals = {NULL, 0}, idx = {NULL, 0};
    int64_t *dims = NULL, numel = 1, nnz, i;
    pfvm_tensor *v = NULL, *ix = NULL, *out = NULL;
    int k, rank, d;
    size_t es;
    if (!PFVM__ONNX_ALL_KINDS) {
        pfvm__fail(r->st, PFVM_ERR_UNSUPPORTED, "sparse tensors need " PFVM__ONNX_TENSORS_ONLY_MSG);
        return NULL;
    }
    while ((k = pfvm__onnx_next(&s, &tag, &wt)) > 0) {
        int ok = tag == pfvm__pb_SparseTensorProto_values_tag    ? pfvm__onnx_span(&s, wt, &vals)
                 : tag == pfvm__pb_SparseTensorProto_indices_tag ? pfvm__onnx_span(&s, wt, &idx)
                 : tag == pfvm__pb_SparseTensorProto_dims_tag    ? pfvm__onnx_ints(r, &s, wt, &dims)
                                                             : pb_skip_field(&s, wt);
        if (!ok) {
            pfvm__onnx_bad(r, "SparseTensorProto");
            goto done;
        }
    }
    if (k < 0 || !vals.p || !idx.p) {
        pfvm__onnx_bad(r, "SparseTensorProto without values or indices");
        goto done;
    }
    rank = (int)stbds_arrlen(dims);
    v = pfvm__onnx_tensor(r, vals);
    ix = v ? pfvm__onnx_tensor(r, idx) : NULL;
    if (!ix)
        goto done;
    if (name)
        *name = v->name;
    if (rank > PFVM_MAX_RANK) {
        pfvm__fail(r->st, PFVM_ERR_UNSUPPORTED, "sparse tensor '%s' has rank %d, more than PFVM_MAX_RANK (%d)",
                   v->name ? v->name : "", rank, PFVM_MAX_RANK);
        goto done;
    }
    if (v->rank != 1 || ix->dtype != PFVM_INT64 || v->dtype == PFVM_STRING) {
        pfvm__fail(r->st, PFVM_ERR_UNSUPPORTED, "sparse tensor '%s': values must be 1-D numbers and indices int64",
                   v->name ? v->name : "");
        goto done;
    }
    for (d = 0; d < rank; d++)
        if (dims[d] < 0 || !pfvm__mul_i64(numel, dims[d], &numel)) {
            pfvm__fail(r->st, PFVM_ERR_INVALID, "sparse tensor '%s': invalid dims", v->name ? v->name : "");
            goto done;
        }
    es = pfvm_dtype_size(v->dtype);
    if ((uint64_t)numel > PFVM_ONNX_MAX_SPARSE_BYTES / (es ? es : 1)) {
        pfvm__fail(r->st, PFVM_ERR_UNSUPPORTED, "sparse tensor '%s': %lld elements exceed PFVM_ONNX_MAX_SPARSE_BYTES dense",
                   v->name ? v->name : "", (long long)numel);
        goto done;
    }
    nnz = v->dims[0];
    if (!((ix->rank == 1 && ix->dims[0] == nnz) || (ix->rank == 2 && ix->dims[0] == nnz && ix->dims[1] == rank))) {
        pfvm__fail(r->st, PFVM_ERR_INVALID, "sparse tensor '%s': indices do not match the values", v->name ? v->name : "");
        goto done;
    }
    out = pfvm_model_tensor(r->m, v->dtype, rank, dims, NULL, r->st);
    if (!out)
        goto done;
    for (i = 0; i < nnz; i++) {
        int64_t lin = pfvm__onnx_sparse_pos(ix, i, dims, rank, numel);
        if (lin < 0) {
            pfvm__fail(r->st, PFVM_ERR_RANGE, "sparse tensor '%s': index %lld is out of range", v->name ? v->name : "",
                       (long long)i);
            out = NULL;
            goto done;
        }
        memcpy((unsigned char *)out->data + (size_t)lin * es, (unsigned char *)v->data + (size_t)i * es, es);
    }
done:
    stbds_arrfree(dims);
    return out;
}

/* ---- types ------------------------------------------------------------------------ */

static pfvm_code pfvm__onnx_type(pfvm__onnx_rd *r, pfvm__onnx_slice sp, const char *vname, pfvm_type *out);

/* The symbol for an unnamed dim: fresh, named after its value ("x_d0").
 * The name buffer stays well under pfvm_sym_fresh's, so that its numbered
 * variants ("x_d0_2") always differ. */
static const pfvm_sym *pfvm__onnx_fresh_dim(pfvm__onnx_rd *r, const char *vname, int index)
{
    char name[160];
    size_t i;
    pfvm__snprintf(name, sizeof name, "%s_d%d", vname, index);
    for (i = 0; name[i]; i++)
        if (!((name[i] >= 'a' && name[i] <= 'z') || (name[i] >= 'A' && name[i] <= 'Z') ||
              (name[i] >= '0' && name[i] <= '9') || name[i] == '_'))
            name[i] = '_';
    if (name[0] >= '0' && name[0] <= '9')
        name[0] = '_';
    return pfvm_sym_fresh(r->m->syms, name);
}

/* A TensorShapeProto.Dimension: dim_value -> constant, dim_param -> the
 * symbol of that name, neither -> a fresh symbol (never a hole). */
static const pfvm_sym *pfvm__onnx_dim(pfvm__onnx_rd *r, pfvm__onnx_slice sp, const char *vname, int index)
{
    pb_istream_t s = pfvm__onnx_stream(sp);
    uint32_t tag;
    pb_wire_type_t wt;
    int k, has_value = 0;
    int64_t value = 0;
    pfvm__onnx_slice param = {NULL, 0};
    const pfvm_sym *d;
    while ((k = pfvm__onnx_next(&s, &tag, &wt)) > 0) {
        int ok;
        if (tag == pfvm__pb_TensorShapeProto_Dimension_dim_value_tag) {
            ok = pfvm__onnx_i64(&s, wt, &value);
            has_value = 1;
        } else if (tag == pfvm__pb_TensorShapeProto_Dimension_dim_param_tag) {
            ok = pfvm__onnx_span(&s, wt, &param);
        } else {
            ok = pb_skip_field(&s, wt);
        }
        if (!ok)
            break;
    }
    if (k != 0) {
        pfvm__fail(r->st, PFVM_ERR_PARSE, "malformed ONNX: value '%s': TensorShapeProto.Dimension %d", vname, index);
        return NULL;
    }
    if (has_value && value < 0) {
        pfvm__fail(r->st, PFVM_ERR_INVALID, "value '%s': negative dimension %lld", vname, (long long)value);
        return NULL;
    }
    if (has_value) {
        d = pfvm_sym_const(r->m->syms, value);
    } else if (PFVM__ONNX_PLANNED_ONLY) {
        /* a planned model stores every size: no symbols to name or make */
        pfvm__fail(r->st, PFVM_ERR_UNSUPPORTED, "value '%s': dim %d has no value (pfvm is built with PFVM_PLANNED_ONLY)",
                   vname, index);
        return NULL;
    } else if (param.n && param.n < PFVM__ONNX_MAX_DIM_PARAM && !memchr(param.p, 0, param.n)) {
        /* kept verbatim, so that saving writes the same name back (pfvm's
         * own expressions are saved as their printed form, which then reads
         * back as one opaque symbol) */
        char full[PFVM__ONNX_MAX_DIM_PARAM];
        memcpy(full, param.p, param.n);
        full[param.n] = 0;
        d = pfvm_sym_var(r->m->syms, full, 1);
    } else {
        d = pfvm__onnx_fresh_dim(r, vname, index);
    }
    if (!d)
        pfvm__onnx_nomem(r);
    return d;
}

/* A malformed message inside the description of value `vname`. */
static pfvm_code pfvm__onnx_bad_value(pfvm__onnx_rd *r, const char *vname, const char *what)
{
    return pfvm__fail(r->st, PFVM_ERR_PARSE, "malformed ONNX: value '%s': %s", vname, what);
}

static pfvm_code pfvm__onnx_shape(pfvm__onnx_rd *r, pfvm__onnx_slice sp, const char *vname, pfvm_shape *out)
{
    pb_istream_t s = pfvm__onnx_stream(sp);
    uint32_t tag;
    pb_wire_type_t wt;
    int k, rank = 0;
    out->rank = 0;
    while ((k = pfvm__onnx_next(&s, &tag, &wt)) > 0) {
        pfvm__onnx_slice d;
        if (tag != pfvm__pb_TensorShapeProto_dim_tag) {
            if (!pb_skip_field(&s, wt))
                return pfvm__onnx_bad_value(r, vname, "TensorShapeProto");
            continue;
        }
        if (!pfvm__onnx_span(&s, wt, &d))
            return pfvm__onnx_bad_value(r, vname, "TensorShapeProto");
        if (rank >= PFVM_MAX_RANK)
            return pfvm__fail(r->st, PFVM_ERR_UNSUPPORTED, "value '%s' has rank above PFVM_MAX_RANK (%d)", vname,
                              PFVM_MAX_RANK);
        out->dims[rank] = pfvm__onnx_dim(r, d, vname, rank);
        if (!out->dims[rank])
            return pfvm__onnx_err(r);
        out->rank = ++rank;
    }
    return k < 0 ? pfvm__onnx_bad_value(r, vname, "TensorShapeProto") : PFVM_OK;
}

/* TypeProto.Tensor and TypeProto.SparseTensor: element type and shape
 * (absent shape: unknown rank). */
static pfvm_code pfvm__onnx_tensor_type(pfvm__onnx_rd *r, pfvm__onnx_slice sp, const char *vname, pfvm_kind kind,
                                        pfvm_type *out)
{
    pb_istream_t s = pfvm__onnx_stream(sp);
    uint32_t tag;
    pb_wire_type_t wt;
    int k, have_shape = 0;
    int64_t et = 0;
    pfvm__onnx_slice shape = {NULL, 0};
    while ((k = pfvm__onnx_next(&s, &tag, &wt)) > 0) {
        int ok;
        if (tag == pfvm__pb_TypeProto_Tensor_elem_type_tag) {
            ok = pfvm__onnx_i64(&s, wt, &et);
        } else if (tag == pfvm__pb_TypeProto_Tensor_shape_tag) {
            ok = pfvm__onnx_span(&s, wt, &shape);
            have_shape = 1;
        } else {
            ok = pb_skip_field(&s, wt);
        }
        if (!ok)
            return pfvm__onnx_bad_value(r, vname, "TypeProto.Tensor");
    }
    if (k < 0)
        return pfvm__onnx_bad_value(r, vname, "TypeProto.Tensor");
    if (et < 0 || et >= PFVM_DTYPE_COUNT)
        return pfvm__fail(r->st, PFVM_ERR_UNSUPPORTED, "value '%s': unknown element type %lld", vname, (long long)et);
    out->kind = kind;
    out->dtype = (pfvm_dtype)et;
    pfvm_shape_unknown(&out->shape);
    return have_shape ? pfvm__onnx_shape(r, shape, vname, &out->shape) : PFVM_OK;
}

/* Sequence and optional types: one nested TypeProto (field 1 in both). */
static pfvm_code pfvm__onnx_wrapped_type(pfvm__onnx_rd *r, pfvm__onnx_slice sp, const char *vname, pfvm_kind kind,
                                         pfvm_type *out)
{
    pb_istream_t s = pfvm__onnx_stream(sp);
    uint32_t tag;
    pb_wire_type_t wt;
    int k;
    out->kind = kind;
    while ((k = pfvm__onnx_next(&s, &tag, &wt)) > 0) {
        pfvm__onnx_slice e;
        if (tag != pfvm__pb_TypeProto_Sequence_elem_type_tag) {
            if (!pb_skip_field(&s, wt))
                return pfvm__onnx_bad_value(r, vname, "TypeProto element type");
            continue;
        }
        if (!pfvm__onnx_span(&s, wt, &e))
            return pfvm__onnx_bad_value(r, vname, "TypeProto element type");
        out->elem = pfvm_model_type(r->m, r->st);
        if (!out->elem || pfvm__onnx_type(r, e, vname, out->elem))
            return pfvm__onnx_err(r);
        out->dtype = out->elem->dtype;
    }
    return k < 0 ? pfvm__onnx_bad_value(r, vname, "TypeProto element type") : PFVM_OK;
}

/* TypeProto.Map: key element type and value type. */
static pfvm_code pfvm__onnx_map_type(pfvm__onnx_rd *r, pfvm__onnx_slice sp, const char *vname, pfvm_type *out)
{
    pb_istream_t s = pfvm__onnx_stream(sp);
    uint32_t tag;
    pb_wire_type_t wt;
    int k;
    int64_t key = 0;
    out->kind = PFVM_KIND_MAP;
    while ((k = pfvm__onnx_next(&s, &tag, &wt)) > 0) {
        pfvm__onnx_slice v;
        if (tag == pfvm__pb_TypeProto_Map_key_type_tag) {
            if (!pfvm__onnx_i64(&s, wt, &key))
                return pfvm__onnx_bad_value(r, vname, "TypeProto.Map");
        } else if (tag == pfvm__pb_TypeProto_Map_value_type_tag) {
            if (!pfvm__onnx_span(&s, wt, &v))
                return pfvm__onnx_bad_value(r, vname, "TypeProto.Map");
            out->elem = pfvm_model_type(r->m, r->st);
            if (!out->elem || pfvm__onnx_type(r, v, vname, out->elem))
                return pfvm__onnx_err(r);
        } else if (!pb_skip_field(&s, wt)) {
            return pfvm__onnx_bad_value(r, vname, "TypeProto.Map");
        }
    }
    if (k < 0)
        return pfvm__onnx_bad_value(r, vname, "TypeProto.Map");
    if (key < 0 || key >= PFVM_DTYPE_COUNT)
        return pfvm__fail(r->st, PFVM_ERR_UNSUPPORTED, "value '%s': unknown map key type %lld", vname, (long long)key);
    out->key_dtype = (pfvm_dtype)key;
    return PFVM_OK;
}

static pfvm_code pfvm__onnx_type_fields(pfvm__onnx_rd *r, pfvm__onnx_slice sp, const char *vname, pfvm_type *out)
{
    pb_istream_t s = pfvm__onnx_stream(sp);
    uint32_t tag;
    pb_wire_type_t wt;
    int k;
    pfvm_code rc = PFVM_OK;
    memset(out, 0, sizeof *out);
    pfvm_shape_unknown(&out->shape);
    while (!rc && (k = pfvm__onnx_next(&s, &tag, &wt)) > 0) {
        pfvm__onnx_slice x;
        switch (tag) {
        case pfvm__pb_TypeProto_tensor_type_tag:
        case pfvm__pb_TypeProto_sparse_tensor_type_tag:
        case pfvm__pb_TypeProto_sequence_type_tag:
        case pfvm__pb_TypeProto_optional_type_tag:
        case pfvm__pb_TypeProto_map_type_tag:
            if (!pfvm__onnx_span(&s, wt, &x))
                return pfvm__onnx_bad_value(r, vname, "TypeProto");
            break;
        default:
            if (!pb_skip_field(&s, wt))
                return pfvm__onnx_bad_value(r, vname, "TypeProto");
            continue;
        }
        if (!PFVM__ONNX_ALL_KINDS && tag != pfvm__pb_TypeProto_tensor_type_tag)
            return pfvm__fail(r->st, PFVM_ERR_UNSUPPORTED, "value '%s': types other than dense tensors need "
                              PFVM__ONNX_TENSORS_ONLY_MSG, vname);
        switch (tag) {
        case pfvm__pb_TypeProto_tensor_type_tag: rc = pfvm__onnx_tensor_type(r, x, vname, PFVM_KIND_TENSOR, out); break;
        case pfvm__pb_TypeProto_sparse_tensor_type_tag: rc = pfvm__onnx_tensor_type(r, x, vname, PFVM_KIND_SPARSE, out); break;
        case pfvm__pb_TypeProto_sequence_type_tag: rc = pfvm__onnx_wrapped_type(r, x, vname, PFVM_KIND_SEQUENCE, out); break;
        case pfvm__pb_TypeProto_optional_type_tag: rc = pfvm__onnx_wrapped_type(r, x, vname, PFVM_KIND_OPTIONAL, out); break;
        default: rc = pfvm__onnx_map_type(r, x, vname, out); break;
        }
    }
    if (!rc && k < 0)
        return pfvm__onnx_bad_value(r, vname, "TypeProto");
    return rc;
}

/* A TypeProto (which nests for sequences, optionals and maps, so the depth
 * is bounded). */
static pfvm_code pfvm__onnx_type(pfvm__onnx_rd *r, pfvm__onnx_slice sp, const char *vname, pfvm_type *out)
{
    pfvm_code rc;
    if (!PFVM__ONNX_ALL_KINDS) /* only dense tensor types: nothing nests */
        return pfvm__onnx_type_fields(r, sp, vname, out);
    if (r->depth >= PFVM__ONNX_MAX_DEPTH)
        return pfvm__fail(r->st, PFVM_ERR_UNSUPPORTED, "value '%s': types and graphs nested more than %d deep", vname,
                          PFVM__ONNX_MAX_DEPTH);
    r->depth++;
    rc = pfvm__onnx_type_fields(r, sp, vname, out);
    r->depth--;
    return rc;
}

/* ---- values, graphs, nodes, attributes --------------------------------------------- */

/* A NUL-terminated copy of a name in the reader's scratch buffer, valid
 * until the next call: names are looked up without keeping a copy. Names
 * with NUL bytes cannot be C strings and are rejected. */
static const char *pfvm__onnx_name(pfvm__onnx_rd *r, pfvm__onnx_slice sp, const char *what)
{
    if (sp.n && memchr(sp.p, 0, sp.n)) {
        pfvm__fail(r->st, PFVM_ERR_INVALID, "%s: a name contains a NUL byte", what);
        return NULL;
    }
    if (!pfvm__arrsetlen(r->scratch, sp.n + 1)) {
        pfvm__onnx_nomem(r);
        return NULL;
    }
    if (sp.n)
        memcpy(r->scratch, sp.p, sp.n);
    r->scratch[sp.n] = 0;
    return r->scratch;
}

/* The fields of a ValueInfoProto. */
typedef struct pfvm__onnx_vinfo {
    pfvm__onnx_slice name, type, doc;
    int has_type;
} pfvm__onnx_vinfo;

static pfvm_code pfvm__onnx_vinfo_read(pfvm__onnx_rd *r, pfvm__onnx_slice sp, const char *what, pfvm__onnx_vinfo *vi)
{
    pb_istream_t s = pfvm__onnx_stream(sp);
    uint32_t tag;
    pb_wire_type_t wt;
    int k;
    memset(vi, 0, sizeof *vi);
    while ((k = pfvm__onnx_next(&s, &tag, &wt)) > 0) {
        int ok;
        if (tag == pfvm__pb_ValueInfoProto_name_tag) {
            ok = pfvm__onnx_span(&s, wt, &vi->name);
        } else if (tag == pfvm__pb_ValueInfoProto_type_tag) {
            ok = pfvm__onnx_span(&s, wt, &vi->type);
            vi->has_type = 1;
        } else if (tag == pfvm__pb_ValueInfoProto_doc_string_tag) {
            ok = pfvm__onnx_span(&s, wt, &vi->doc);
        } else {
            ok = pb_skip_field(&s, wt);
        }
        if (!ok)
            break;
    }
    if (k != 0)
        return pfvm__fail(r->st, PFVM_ERR_PARSE, "malformed ONNX: %s: ValueInfoProto", what);
    if (!vi->name.n)
        return pfvm__fail(r->st, PFVM_ERR_INVALID, "%s without a name", what);
    return PFVM_OK;
}

/* Sets v's declared type and doc string from a ValueInfoProto. */
static pfvm_code pfvm__onnx_vinfo_apply(pfvm__onnx_rd *r, const pfvm__onnx_vinfo *vi, pfvm_value *v)
{
    if (vi->has_type) {
        pfvm_type ty;
        if (pfvm__onnx_type(r, vi->type, v->name, &ty))
            return pfvm__onnx_err(r);
        /* an empty TypeProto says nothing: it keeps an initializer's type
         * (else a save would drop that type and a reload restore it) */
        if (ty.kind != PFVM_KIND_UNKNOWN || v->type.kind == PFVM_KIND_UNKNOWN) {
            v->type = ty;
            v->has_type_info = 1;
        }
    }
    if (PFVM__ONNX_DOCS && vi->doc.n && !(v->doc = pfvm__onnx_str(r, vi->doc)))
        return pfvm__onnx_err(r);
    return PFVM_OK;
}

/* The roles of a ValueInfoProto in a graph: its GraphProto field number
 * less input's (input 11, output 12, value_info 13; pfvm__onnx_graph_each). */
enum { PFVM__ONNX_VI_INPUT, PFVM__ONNX_VI_OUTPUT, PFVM__ONNX_VI_INFO };
typedef char pfvm__onnx_vi_role_check[pfvm__pb_GraphProto_output_tag - pfvm__pb_GraphProto_input_tag == PFVM__ONNX_VI_OUTPUT &&
                                              pfvm__pb_GraphProto_value_info_tag - pfvm__pb_GraphProto_input_tag ==
                                                  PFVM__ONNX_VI_INFO
                                          ? 1
                                          : -1];

/* A ValueInfoProto of g: a graph input, a graph output or a value_info
 * entry (one function: the three read, name and type a value alike).
 * An output names a value of the graph or, in a subgraph, of an enclosing
 * graph (a loop body may pass an outer value through); the declaration
 * describes only values of this graph. value_info declares the type of an
 * intermediate value of g: entries about names g does not define, or
 * without a type, say nothing and are skipped; a repeated entry keeps the
 * first. */
static pfvm_code pfvm__onnx_graph_vinfo(pfvm__onnx_rd *r, pfvm_graph *g, pfvm__onnx_slice sp, int role)
{
    static const char *const what[] = {"a graph input", "a graph output", "a value_info"}; /* + 2: without "a " */
    pfvm__onnx_vinfo vi;
    const char *nm;
    pfvm_value *v;
    if (pfvm__onnx_vinfo_read(r, sp, what[role], &vi) || !(nm = pfvm__onnx_name(r, vi.name, what[role] + 2)))
        return pfvm__onnx_err(r);
    v = role == PFVM__ONNX_VI_OUTPUT ? pfvm_graph_find(g, nm) : pfvm_graph_find_local(g, nm);
    if (role == PFVM__ONNX_VI_INPUT) {
        if (v && v->is_input)
            return pfvm__fail(r->st, PFVM_ERR_INVALID, "graph '%s': input '%s' is listed twice", g->name, nm);
        v = pfvm_graph_value(g, nm, r->st);
    } else if (role == PFVM__ONNX_VI_OUTPUT && !v) {
        return pfvm__fail(r->st, PFVM_ERR_INVALID, "graph '%s': output '%s' is not defined", g->name, nm);
    } else if (role == PFVM__ONNX_VI_INFO && (!v || !vi.has_type || v->has_value_info)) {
        return PFVM_OK;
    }
    if (!v || (v->graph == g && pfvm__onnx_vinfo_apply(r, &vi, v)))
        return pfvm__onnx_err(r);
    if (role == PFVM__ONNX_VI_INPUT)
        return pfvm_graph_add_input(g, v, r->st);
    if (role == PFVM__ONNX_VI_OUTPUT)
        return pfvm_graph_add_output(g, v, r->st);
    if (!pfvm__arrpush(g->value_infos, v))
        return pfvm__onnx_nomem(r);
    v->has_value_info = 1;
    return PFVM_OK;
}

static pfvm_code pfvm__onnx_graph(pfvm__onnx_rd *r, pfvm__onnx_slice sp, pfvm_graph *parent, pfvm_node *owner,
                                  pfvm_graph **out);

/* The fields of an AttributeProto, gathered before its value is built. */
typedef struct pfvm__onnx_attr_parts {
    int64_t type, i;
    float f;
    int has_f, has_i, has_s;
    pfvm__onnx_slice name, s, doc, ref, t, g, tp, sparse;
    unsigned char *floats;                           /* stb_ds bytes */
    int64_t *ints;                                   /* stb_ds */
    pfvm__onnx_slice *strs, *tens, *graphs, *tps, *sparses; /* stb_ds */
} pfvm__onnx_attr_parts;

static void pfvm__onnx_attr_parts_free(pfvm__onnx_attr_parts *p)
{
    stbds_arrfree(p->floats);
    stbds_arrfree(p->ints);
    stbds_arrfree(p->strs);
#ifndef PFVM_PLANNED_ONLY /* never filled there (pfvm__onnx_attr_field) */
    stbds_arrfree(p->tens);
    stbds_arrfree(p->graphs);
    stbds_arrfree(p->tps);
    stbds_arrfree(p->sparses);
#endif
}

/* Appends a length-delimited field to a list of slices. */
static int pfvm__onnx_span_push(pfvm__onnx_rd *r, pb_istream_t *s, pb_wire_type_t wt, pfvm__onnx_slice **list)
{
    pfvm__onnx_slice x;
    if (!pfvm__onnx_span(s, wt, &x))
        return 0;
    return pfvm__arrpush(*list, x) || (r->oom = 1, 0);
}

static int pfvm__onnx_attr_field(pfvm__onnx_rd *r, pb_istream_t *s, uint32_t tag, pb_wire_type_t wt, pfvm__onnx_attr_parts *p)
{
    switch (tag) {
    case pfvm__pb_AttributeProto_name_tag: return pfvm__onnx_span(s, wt, &p->name);
    case pfvm__pb_AttributeProto_ref_attr_name_tag: return pfvm__onnx_span(s, wt, &p->ref);
    case pfvm__pb_AttributeProto_doc_string_tag: return pfvm__onnx_span(s, wt, &p->doc);
    case pfvm__pb_AttributeProto_type_tag: return pfvm__onnx_i64(s, wt, &p->type);
    case pfvm__pb_AttributeProto_f_tag: p->has_f = 1; return wt == PB_WT_32BIT && pb_decode_fixed32(s, &p->f);
    case pfvm__pb_AttributeProto_i_tag: p->has_i = 1; return pfvm__onnx_i64(s, wt, &p->i);
    case pfvm__pb_AttributeProto_s_tag: p->has_s = 1; return pfvm__onnx_span(s, wt, &p->s);
    case pfvm__pb_AttributeProto_t_tag: return pfvm__onnx_span(s, wt, &p->t);
    case pfvm__pb_AttributeProto_floats_tag: return pfvm__onnx_fixed(r, s, wt, 4, &p->floats);
    case pfvm__pb_AttributeProto_ints_tag: return pfvm__onnx_ints(r, s, wt, &p->ints);
    case pfvm__pb_AttributeProto_strings_tag: return pfvm__onnx_span_push(r, s, wt, &p->strs);
#ifndef PFVM_PLANNED_ONLY /* else these kinds are refused by type (pfvm__onnx_attr_kind_ok) */
    case pfvm__pb_AttributeProto_g_tag: return pfvm__onnx_span(s, wt, &p->g);
    case pfvm__pb_AttributeProto_tp_tag: return pfvm__onnx_span(s, wt, &p->tp);
    case pfvm__pb_AttributeProto_sparse_tensor_tag: return pfvm__onnx_span(s, wt, &p->sparse);
    case pfvm__pb_AttributeProto_tensors_tag: return pfvm__onnx_span_push(r, s, wt, &p->tens);
    case pfvm__pb_AttributeProto_graphs_tag: return pfvm__onnx_span_push(r, s, wt, &p->graphs);
    case pfvm__pb_AttributeProto_type_protos_tag: return pfvm__onnx_span_push(r, s, wt, &p->tps);
    case pfvm__pb_AttributeProto_sparse_tensors_tag: return pfvm__onnx_span_push(r, s, wt, &p->sparses);
#endif
    default: return pb_skip_field(s, wt);
    }
}

static pfvm_code pfvm__onnx_attr_read(pfvm__onnx_rd *r, pfvm__onnx_slice sp, const char *where, pfvm__onnx_attr_parts *p)
{
    pb_istream_t s = pfvm__onnx_stream(sp);
    uint32_t tag;
    pb_wire_type_t wt;
    int k;
    memset(p, 0, sizeof *p);
    while ((k = pfvm__onnx_next(&s, &tag, &wt)) > 0)
        if (!pfvm__onnx_attr_field(r, &s, tag, wt, p))
            break;
    if (k != 0)
        return r->oom ? pfvm__onnx_nomem(r) : pfvm__fail(r->st, PFVM_ERR_PARSE, "malformed ONNX: %s: AttributeProto", where);
    if (!p->name.n)
        return pfvm__fail(r->st, PFVM_ERR_INVALID, "%s: an attribute has no name", where);
    return PFVM_OK;
}

#ifdef PFVM_PLANNED_ONLY
/* PFVM_PLANNED_ONLY: the attribute kinds a planned model's operators read
 * (numbers, strings, their lists and tensors); the others (graphs, type
 * protos, sparse tensors, tensor lists) and a missing type (IR version 1,
 * which no planned file is) are refused by type, and their fields never
 * parsed. */
#define PFVM__ONNX_ATTR_KINDS                                                                        \
    ((1u << PFVM_ATTR_FLOAT) | (1u << PFVM_ATTR_INT) | (1u << PFVM_ATTR_STRING) | (1u << PFVM_ATTR_TENSOR) | \
     (1u << PFVM_ATTR_FLOATS) | (1u << PFVM_ATTR_INTS) | (1u << PFVM_ATTR_STRINGS))
#define PFVM__ONNX_ATTR_KINDS_MSG " (or one that pfvm built with PFVM_PLANNED_ONLY does not read)"
#else
#define PFVM__ONNX_ATTR_KINDS 0x7ffeu /* 1 (FLOAT) to 14 (TYPE_PROTOS) */
#define PFVM__ONNX_ATTR_KINDS_MSG ""
#endif

/* Models of IR version 1 leave `type` out: it follows from the field set. */
static int64_t pfvm__onnx_attr_infer_type(const pfvm__onnx_attr_parts *p)
{
    if (p->t.p) return PFVM_ATTR_TENSOR;
    if (p->g.p) return PFVM_ATTR_GRAPH;
    if (p->sparse.p) return PFVM_ATTR_SPARSE_TENSOR;
    if (p->tp.p) return PFVM_ATTR_TYPE_PROTO;
    if (stbds_arrlen(p->floats)) return PFVM_ATTR_FLOATS;
    if (stbds_arrlen(p->ints)) return PFVM_ATTR_INTS;
    if (stbds_arrlen(p->strs)) return PFVM_ATTR_STRINGS;
    if (stbds_arrlen(p->tens)) return PFVM_ATTR_TENSORS;
    if (stbds_arrlen(p->graphs)) return PFVM_ATTR_GRAPHS;
    if (stbds_arrlen(p->tps)) return PFVM_ATTR_TYPE_PROTOS;
    if (p->has_s) return PFVM_ATTR_STRING;
    if (p->has_f) return PFVM_ATTR_FLOAT;
    return PFVM_ATTR_INT;
}

/* Model storage for n list elements of `size` bytes (n+1, so that empty
 * lists still get a pointer). */
static void *pfvm__onnx_list(pfvm__onnx_rd *r, size_t n, size_t size, const char *where, const char *name)
{
    void *p;
    if (n > (size_t)INT32_MAX - 1) {
        pfvm__fail(r->st, PFVM_ERR_UNSUPPORTED, "%s: attribute '%s' has too many elements", where, name);
        return NULL;
    }
    p = pfvm_model_alloc(r->m, size * (n + 1));
    if (!p)
        pfvm__onnx_nomem(r);
    return p;
}

/* The list forms: numbers are copied, strings keep their lengths (they are
 * bytes), tensors, graphs and types are built. */
static pfvm_code pfvm__onnx_attr_lists(pfvm__onnx_rd *r, const pfvm__onnx_attr_parts *p, pfvm_graph *scope,
                                       pfvm_node *owner, const char *where, pfvm_attr *a)
{
    size_t n = 0, i, es = 0;
    void **slots = NULL;
    (void)scope, (void)owner; /* PFVM_PLANNED_ONLY: no subgraphs */
    switch (a->type) {
    case PFVM_ATTR_FLOATS: n = stbds_arrlen(p->floats) / 4; es = sizeof(float); break;
    case PFVM_ATTR_INTS: n = stbds_arrlen(p->ints); es = sizeof(int64_t); break;
    case PFVM_ATTR_STRINGS: n = stbds_arrlen(p->strs); es = sizeof(char *); break;
#ifndef PFVM_PLANNED_ONLY /* refused by type there */
    case PFVM_ATTR_TENSORS: n = stbds_arrlen(p->tens); es = sizeof(pfvm_tensor *); break;
    case PFVM_ATTR_GRAPHS: n = stbds_arrlen(p->graphs); es = sizeof(pfvm_graph *); break;
    case PFVM_ATTR_TYPE_PROTOS: n = stbds_arrlen(p->tps); es = sizeof(pfvm_type *); break;
#endif
    default: return pfvm__fail(r->st, PFVM_ERR_UNSUPPORTED, "%s: attribute '%s': sparse tensor lists are not supported",
                               where, a->name);
    }
    if (!(slots = (void **)pfvm__onnx_list(r, n, es, where, a->name)))
        return pfvm__onnx_err(r);
    a->n = (int)n;
    switch (a->type) {
    case PFVM_ATTR_FLOATS:
        a->floats = (float *)(void *)slots;
        if (n)
            memcpy(a->floats, p->floats, n * sizeof(float));
        return PFVM_OK;
    case PFVM_ATTR_INTS:
        a->ints = (int64_t *)(void *)slots;
        if (n)
            memcpy(a->ints, p->ints, n * sizeof(int64_t));
        return PFVM_OK;
    default: /* PFVM_ATTR_STRINGS */
        a->strings = (const char **)(void *)slots;
        if (!(a->strings_len = (size_t *)pfvm__onnx_list(r, n, sizeof(size_t), where, a->name)))
            return pfvm__onnx_err(r);
        for (i = 0; i < n; i++) {
            a->strings_len[i] = p->strs[i].n;
            if (!(a->strings[i] = pfvm__onnx_str(r, p->strs[i])))
                return pfvm__onnx_err(r);
        }
        return PFVM_OK;
#ifndef PFVM_PLANNED_ONLY
    case PFVM_ATTR_TENSORS:
        a->tensors = (pfvm_tensor **)(void *)slots;
        for (i = 0; i < n; i++)
            if (!(a->tensors[i] = pfvm__onnx_tensor(r, p->tens[i])))
                return pfvm__onnx_err(r);
        return PFVM_OK;
    case PFVM_ATTR_GRAPHS:
        a->graphs = (pfvm_graph **)(void *)slots;
        for (i = 0; i < n; i++)
            if (pfvm__onnx_graph(r, p->graphs[i], scope, owner, &a->graphs[i]))
                return pfvm__onnx_err(r);
        return PFVM_OK;
    case PFVM_ATTR_TYPE_PROTOS:
        a->tps = (pfvm_type **)(void *)slots;
        for (i = 0; i < n; i++)
            if (!(a->tps[i] = pfvm_model_type(r->m, r->st)) || pfvm__onnx_type(r, p->tps[i], a->name, a->tps[i]))
                return pfvm__onnx_err(r);
        return PFVM_OK;
#endif
    }
}

/* The single-value forms; a missing value is an error for the kinds that
 * have no default (tensor, graph, sparse tensor). */
static pfvm_code pfvm__onnx_attr_value(pfvm__onnx_rd *r, const pfvm__onnx_attr_parts *p, pfvm_graph *scope,
                                       pfvm_node *owner, const char *where, pfvm_attr *a)
{
    switch (a->type) {
    case PFVM_ATTR_FLOAT: a->f = p->f; return PFVM_OK;
    case PFVM_ATTR_INT: a->i = p->i; return PFVM_OK;
    case PFVM_ATTR_STRING:
        a->s_len = p->s.n;
        return (a->s = pfvm__onnx_str(r, p->s)) != NULL ? PFVM_OK : pfvm__onnx_err(r);
    case PFVM_ATTR_TENSOR:
        if (!p->t.p)
            break;
        return (a->t = pfvm__onnx_tensor(r, p->t)) != NULL ? PFVM_OK : pfvm__onnx_err(r);
#ifndef PFVM_PLANNED_ONLY /* refused by type there */
    case PFVM_ATTR_SPARSE_TENSOR:
        if (!p->sparse.p)
            break;
        return (a->t = pfvm__onnx_sparse(r, p->sparse, NULL)) != NULL ? PFVM_OK : pfvm__onnx_err(r);
    case PFVM_ATTR_GRAPH:
        if (!p->g.p)
            break;
        return pfvm__onnx_graph(r, p->g, scope, owner, &a->g);
    case PFVM_ATTR_TYPE_PROTO:
        if (!(a->tp = pfvm_model_type(r->m, r->st)))
            return pfvm__onnx_err(r);
        return p->tp.p ? pfvm__onnx_type(r, p->tp, a->name, a->tp) : PFVM_OK;
#endif
    default:
        return pfvm__onnx_attr_lists(r, p, scope, owner, where, a);
    }
    return pfvm__fail(r->st, PFVM_ERR_INVALID, "%s: attribute '%s' of type %d has no value", where, a->name, (int)a->type);
}

/* An AttributeProto of a node (owner) in graph `scope`, or a function's
 * attribute default (owner NULL). `where` names the node for messages.
 * Subgraphs are parsed with `scope` as their enclosing graph. */
static pfvm_code pfvm__onnx_attr(pfvm__onnx_rd *r, pfvm__onnx_slice sp, pfvm_graph *scope, pfvm_node *owner,
                                 const char *where, pfvm_attr *a)
{
    pfvm__onnx_attr_parts p;
    pfvm_code rc = pfvm__onnx_attr_read(r, sp, where, &p);
    memset(a, 0, sizeof *a);
    a->s = "";
    a->doc = "";
    if (!rc && (!(a->name = pfvm__onnx_str(r, p.name)) || (PFVM__ONNX_DOCS && p.doc.n && !(a->doc = pfvm__onnx_str(r, p.doc))) ||
                (p.ref.n && !(a->ref_attr_name = pfvm__onnx_str(r, p.ref)))))
        rc = pfvm__onnx_err(r);
    if (!rc && !p.type && !PFVM__ONNX_PLANNED_ONLY)
        p.type = pfvm__onnx_attr_infer_type(&p);
    if (!rc && (p.type < 0 || p.type > PFVM_ATTR_TYPE_PROTOS || !(PFVM__ONNX_ATTR_KINDS >> p.type & 1u)))
        rc = pfvm__fail(r->st, PFVM_ERR_INVALID, "%s: attribute '%s' has unknown type %lld" PFVM__ONNX_ATTR_KINDS_MSG,
                        where, a->name, (long long)p.type);
    if (!rc) {
        a->type = (pfvm_attr_type)p.type;
        /* a reference to a function attribute has no value of its own */
        if (!a->ref_attr_name)
            rc = pfvm__onnx_attr_value(r, &p, scope, owner, where, a);
    }
    pfvm__onnx_attr_parts_free(&p);
    return rc;
}

/* The parts of a NodeProto. */
typedef struct pfvm__onnx_node_parts {
    pfvm__onnx_slice name, op, domain, doc;
    pfvm__onnx_slice *ins, *outs, *attrs; /* stb_ds */
} pfvm__onnx_node_parts;

static void pfvm__onnx_node_parts_free(pfvm__onnx_node_parts *p)
{
    stbds_arrfree(p->ins);
    stbds_arrfree(p->outs);
    stbds_arrfree(p->attrs);
}

static int pfvm__onnx_node_field(pfvm__onnx_rd *r, pb_istream_t *s, uint32_t tag, pb_wire_type_t wt, pfvm__onnx_node_parts *p)
{
    switch (tag) {
    case pfvm__pb_NodeProto_input_tag: return pfvm__onnx_span_push(r, s, wt, &p->ins);
    case pfvm__pb_NodeProto_output_tag: return pfvm__onnx_span_push(r, s, wt, &p->outs);
    case pfvm__pb_NodeProto_attribute_tag: return pfvm__onnx_span_push(r, s, wt, &p->attrs);
    case pfvm__pb_NodeProto_name_tag: return pfvm__onnx_span(s, wt, &p->name);
    case pfvm__pb_NodeProto_op_type_tag: return pfvm__onnx_span(s, wt, &p->op);
    case pfvm__pb_NodeProto_domain_tag: return pfvm__onnx_span(s, wt, &p->domain);
    case pfvm__pb_NodeProto_doc_string_tag: return pfvm__onnx_span(s, wt, &p->doc);
    default: return pb_skip_field(s, wt);
    }
}

static pfvm_code pfvm__onnx_node_parts_read(pfvm__onnx_rd *r, pfvm__onnx_slice sp, const pfvm_graph *g,
                                            pfvm__onnx_node_parts *p)
{
    pb_istream_t s = pfvm__onnx_stream(sp);
    uint32_t tag;
    pb_wire_type_t wt;
    int k;
    memset(p, 0, sizeof *p);
    while ((k = pfvm__onnx_next(&s, &tag, &wt)) > 0)
        if (!pfvm__onnx_node_field(r, &s, tag, wt, p))
            break;
    if (k != 0)
        return r->oom ? pfvm__onnx_nomem(r) : pfvm__fail(r->st, PFVM_ERR_PARSE, "malformed ONNX: graph '%s': NodeProto", g->name);
    if (!p->op.n)
        return pfvm__fail(r->st, PFVM_ERR_INVALID, "graph '%s': node '%.*s' has no op_type", g->name,
                          (int)(p->name.n > 200 ? 200 : p->name.n), p->name.p ? (const char *)p->name.p : "");
    if (stbds_arrlen(p->ins) > INT32_MAX / 2 || stbds_arrlen(p->outs) > INT32_MAX / 2 ||
        stbds_arrlen(p->attrs) > INT32_MAX / 2)
        return pfvm__fail(r->st, PFVM_ERR_UNSUPPORTED, "graph '%s': a node has too many inputs or outputs", g->name);
    return PFVM_OK;
}

/* Creates the values a node defines, before any node is built, so that
 * nodes and subgraphs may refer to values defined later in the list: each
 * name then lives in the innermost graph that defines it. */
static pfvm_code pfvm__onnx_predeclare(pfvm__onnx_rd *r, pfvm_graph *g, pfvm__onnx_slice sp)
{
    pfvm__onnx_node_parts p;
    int i;
    pfvm_code rc = pfvm__onnx_node_parts_read(r, sp, g, &p);
    for (i = 0; !rc && i < (int)stbds_arrlen(p.outs); i++) {
        const char *nm;
        if (!p.outs[i].n)
            continue;
        if (!(nm = pfvm__onnx_name(r, p.outs[i], "node output")) || !pfvm_graph_value(g, nm, r->st))
            rc = pfvm__onnx_err(r);
    }
    pfvm__onnx_node_parts_free(&p);
    return rc;
}

/* Resolves a node's input names (outer scopes included) and output names
 * (predeclared in g, or made here with PFVM_PLANNED_ONLY); "" is an
 * omitted optional: NULL. */
static pfvm_code pfvm__onnx_node_values(pfvm__onnx_rd *r, pfvm_graph *g, const pfvm__onnx_node_parts *p,
                                        const char *where, pfvm_value ***ins, pfvm_value ***outs)
{
    int i;
    for (i = 0; i < (int)stbds_arrlen(p->ins); i++) {
        pfvm_value *v = NULL;
        const char *nm;
        if (p->ins[i].n) {
            if (!(nm = pfvm__onnx_name(r, p->ins[i], where)))
                return pfvm__onnx_err(r);
            if (!(v = pfvm_graph_find(g, nm)))
                return pfvm__fail(r->st, PFVM_ERR_INVALID,
                                  PFVM__ONNX_PLANNED_ONLY ? "%s: input '%s' is not defined by a graph input, an "
                                                            "initializer or an earlier node"
                                                          : "%s: input '%s' is not defined",
                                  where, nm);
        }
        if (!pfvm__arrpush(*ins, v))
            return pfvm__onnx_nomem(r);
    }
    for (i = 0; i < (int)stbds_arrlen(p->outs); i++) {
        pfvm_value *v = NULL;
        const char *nm;
        if (p->outs[i].n) {
            if (!(nm = pfvm__onnx_name(r, p->outs[i], where)))
                return pfvm__onnx_err(r);
            /* PFVM_PLANNED_ONLY: made here, as the node is read (its
             * outputs are not declared ahead) */
            v = PFVM__ONNX_PLANNED_ONLY ? pfvm_graph_value(g, nm, r->st) : pfvm_graph_find_local(g, nm);
            if (!v && PFVM__ONNX_PLANNED_ONLY)
                return pfvm__onnx_err(r);
            if (!v)
                return pfvm__fail(r->st, PFVM_ERR_INVALID, "%s: output '%s' was not declared", where, nm);
        }
        if (!pfvm__arrpush(*outs, v))
            return pfvm__onnx_nomem(r);
    }
    return PFVM_OK;
}

static pfvm_code pfvm__onnx_node_attrs(pfvm__onnx_rd *r, pfvm_node *n, const pfvm__onnx_node_parts *p,
                                       const char *where)
{
    int i, count = (int)stbds_arrlen(p->attrs);
    if (!count)
        return PFVM_OK;
    n->attrs = (pfvm_attr *)pfvm_model_alloc(r->m, sizeof(pfvm_attr) * (size_t)count);
    if (!n->attrs)
        return pfvm__onnx_nomem(r);
    for (i = 0; i < count; i++) {
        if (pfvm__onnx_attr(r, p->attrs[i], n->graph, n, where, &n->attrs[i]))
            return pfvm__onnx_err(r);
        n->n_attrs = i + 1;
        /* a repeated name would make lookups see only the first; real nodes
         * have a handful of attributes, the check stays cheap (bounded) */
        if (i < 256) {
            int j;
            for (j = 0; j < i; j++)
                if (!strcmp(n->attrs[j].name, n->attrs[i].name))
                    return pfvm__fail(r->st, PFVM_ERR_INVALID, "%s: attribute '%s' is given twice", where,
                                      n->attrs[i].name);
        }
    }
    return PFVM_OK;
}

static pfvm_code pfvm__onnx_node(pfvm__onnx_rd *r, pfvm_graph *g, pfvm__onnx_slice sp)
{
    pfvm__onnx_node_parts p;
    pfvm_value **ins = NULL, **outs = NULL;
    pfvm_node *n;
    const char *name = "", *op = NULL, *domain = "";
    char where[320];
    pfvm_code rc = pfvm__onnx_node_parts_read(r, sp, g, &p);
    if (!rc && (!(op = pfvm__onnx_str(r, p.op)) || (p.name.n && !(name = pfvm__onnx_str(r, p.name))) ||
                (p.domain.n && !(domain = pfvm__onnx_str(r, p.domain)))))
        rc = pfvm__onnx_err(r);
    if (rc)
        goto done;
    where[0] = 0;
    if (PFVM__MSG_DETAIL) /* a terse message does not show it */
        pfvm__snprintf(where, sizeof where, "node '%.200s' (%.80s)", name[0] ? name : op, op);
    rc = pfvm__onnx_node_values(r, g, &p, where, &ins, &outs);
    if (rc)
        goto done;
    n = pfvm_graph_add_node(g, op, domain, name, ins, (int)stbds_arrlen(ins), outs, (int)stbds_arrlen(outs), r->st);
    if (!n || (PFVM__ONNX_DOCS && p.doc.n && !(n->doc = pfvm__onnx_str(r, p.doc))))
        rc = pfvm__onnx_err(r);
    else
        rc = pfvm__onnx_node_attrs(r, n, &p, where);
done:
    stbds_arrfree(ins);
    stbds_arrfree(outs);
    pfvm__onnx_node_parts_free(&p);
    return rc;
}

/* What the reader does with one field of a GraphProto. */
typedef pfvm_code (*pfvm__onnx_graph_fn)(pfvm__onnx_rd *r, pfvm_graph *g, pfvm__onnx_slice sp);

/* Runs fn on every field of GraphProto sp with field number `want`, in
 * their order (a field kind read in one pass over the bytes: no list of
 * the fields is kept); fn NULL: the field is a ValueInfoProto of the role
 * its number gives (pfvm__onnx_graph_vinfo: no wrapper a role). A
 * malformed message fails in the first pass, before anything is built. */
static pfvm_code pfvm__onnx_graph_each(pfvm__onnx_rd *r, pfvm__onnx_slice sp, uint32_t want, pfvm__onnx_graph_fn fn,
                                       pfvm_graph *g)
{
    pb_istream_t s = pfvm__onnx_stream(sp);
    uint32_t tag;
    pb_wire_type_t wt;
    int k;
    pfvm_code rc;
    while ((k = pfvm__onnx_next(&s, &tag, &wt)) > 0) {
        pfvm__onnx_slice x;
        if (tag != want) {
            if (!pb_skip_field(&s, wt))
                break;
        } else if (!pfvm__onnx_span(&s, wt, &x)) {
            break;
        } else if ((rc = fn ? fn(r, g, x) : pfvm__onnx_graph_vinfo(r, g, x, (int)(want - pfvm__pb_GraphProto_input_tag))) !=
                   PFVM_OK) {
            return rc;
        }
    }
    return k != 0 ? pfvm__onnx_bad(r, "GraphProto") : PFVM_OK;
}

/* The graph's name and doc string (the last one given counts). */
static pfvm_code pfvm__onnx_graph_name(pfvm__onnx_rd *r, pfvm_graph *g, pfvm__onnx_slice sp)
{
    if (!sp.n)
        return PFVM_OK;
    return (g->name = pfvm__onnx_str(r, sp)) != NULL ? PFVM_OK : pfvm__onnx_err(r);
}

#if PFVM__ONNX_DOCS
static pfvm_code pfvm__onnx_graph_doc(pfvm__onnx_rd *r, pfvm_graph *g, pfvm__onnx_slice sp)
{
    return (g->doc = pfvm__onnx_str(r, sp)) != NULL ? PFVM_OK : pfvm__onnx_err(r);
}
#endif

/* An initializer (dense, or sparse: t and name given) -> a value with its
 * tensor in g. An initializer may also be a graph input (is_input stays
 * set). */
static pfvm_code pfvm__onnx_init_value(pfvm__onnx_rd *r, pfvm_graph *g, pfvm_tensor *t, const char *name, int sparse)
{
    pfvm_value *v;
    if (!t)
        return pfvm__onnx_err(r);
    if (!name || !name[0])
        return pfvm__fail(r->st, PFVM_ERR_INVALID, "graph '%s': a%s initializer has no name", g->name,
                          sparse ? " sparse" : "n");
    v = pfvm_graph_value(g, name, r->st);
    if (!v || pfvm_graph_add_init(g, v, t, r->st))
        return pfvm__onnx_err(r);
    return PFVM_OK;
}

static pfvm_code pfvm__onnx_init(pfvm__onnx_rd *r, pfvm_graph *g, pfvm__onnx_slice sp)
{
    pfvm_tensor *t = pfvm__onnx_tensor(r, sp);
    return pfvm__onnx_init_value(r, g, t, t ? t->name : NULL, 0);
}

#ifndef PFVM_ONNX_TENSORS_ONLY /* there a sparse initializer fails to load */
static pfvm_code pfvm__onnx_sparse_init(pfvm__onnx_rd *r, pfvm_graph *g, pfvm__onnx_slice sp)
{
    const char *name = NULL;
    pfvm_tensor *t = pfvm__onnx_sparse(r, sp, &name);
    return pfvm__onnx_init_value(r, g, t, name, 1);
}
#else
static pfvm_code pfvm__onnx_sparse_init(pfvm__onnx_rd *r, pfvm_graph *g, pfvm__onnx_slice sp)
{
    (void)g;
    return pfvm__onnx_sparse(r, sp, NULL) ? PFVM_OK : pfvm__onnx_err(r);
}
#endif

/* Builds g from its GraphProto, in an order that makes every name visible
 * before any node or subgraph refers to it: name, inputs, initializers
 * (dense, then sparse), every node's outputs (not with PFVM_PLANNED_ONLY:
 * the stored order is checked as read), then the nodes, outputs and
 * value_info; one pass over the message for each. */
static pfvm_code pfvm__onnx_graph_body(pfvm__onnx_rd *r, pfvm_graph *g, pfvm__onnx_slice sp)
{
    static const struct {
        uint32_t tag;
        pfvm__onnx_graph_fn fn;
    } steps[] = {
        {pfvm__pb_GraphProto_name_tag, pfvm__onnx_graph_name},
#if PFVM__ONNX_DOCS
        {pfvm__pb_GraphProto_doc_string_tag, pfvm__onnx_graph_doc},
#endif
        {pfvm__pb_GraphProto_input_tag, NULL},
        {pfvm__pb_GraphProto_initializer_tag, pfvm__onnx_init},
        {pfvm__pb_GraphProto_sparse_initializer_tag, pfvm__onnx_sparse_init},
#ifndef PFVM_PLANNED_ONLY
        {pfvm__pb_GraphProto_node_tag, pfvm__onnx_predeclare},
#endif
        {pfvm__pb_GraphProto_node_tag, pfvm__onnx_node},
        {pfvm__pb_GraphProto_output_tag, NULL},
        {pfvm__pb_GraphProto_value_info_tag, NULL},
    };
    size_t i;
    pfvm_code rc = PFVM_OK;
    for (i = 0; !rc && i < sizeof steps / sizeof steps[0]; i++)
        rc = pfvm__onnx_graph_each(r, sp, steps[i].tag, steps[i].fn, g);
    /* ONNX requires topological order; pfvm sorts, to be tolerant */
    return rc ? rc : pfvm_graph_toposort(g, r->st);
}

/* A GraphProto: the main graph (parent NULL) or a subgraph of `owner`,
 * whose names resolve through `parent` (outer scope). */
static pfvm_code pfvm__onnx_graph(pfvm__onnx_rd *r, pfvm__onnx_slice sp, pfvm_graph *parent, pfvm_node *owner,
                                  pfvm_graph **out)
{
    pfvm_graph *g;
    pfvm_code rc;
    /* PFVM_PLANNED_ONLY: the main graph only (no subgraph attributes) */
    if (!PFVM__ONNX_PLANNED_ONLY && r->depth >= PFVM__ONNX_MAX_DEPTH)
        return pfvm__fail(r->st, PFVM_ERR_UNSUPPORTED, "graph '%s': subgraphs nested more than %d deep",
                          parent ? parent->name : "", PFVM__ONNX_MAX_DEPTH);
    r->depth++;
    if (!(g = pfvm_graph_new(r->m, parent, NULL, r->st))) {
        rc = pfvm__onnx_err(r);
    } else {
        g->owner = owner;
        *out = g;
        rc = pfvm__onnx_graph_body(r, g, sp);
    }
    r->depth--;
    return rc;
}

/* ---- functions and the model ------------------------------------------------------ */

static pfvm_code pfvm__onnx_opset(pfvm__onnx_rd *r, pfvm__onnx_slice sp, pfvm_opset_import *out)
{
    pb_istream_t s = pfvm__onnx_stream(sp);
    uint32_t tag;
    pb_wire_type_t wt;
    int k, ok = 1;
    pfvm__onnx_slice d = {NULL, 0};
    out->version = 0;
    while (ok && (k = pfvm__onnx_next(&s, &tag, &wt)) > 0)
        ok = tag == pfvm__pb_OperatorSetIdProto_domain_tag    ? pfvm__onnx_span(&s, wt, &d)
             : tag == pfvm__pb_OperatorSetIdProto_version_tag ? pfvm__onnx_i64(&s, wt, &out->version)
                                                          : pb_skip_field(&s, wt);
    if (!ok || k < 0)
        return pfvm__onnx_bad(r, "OperatorSetIdProto");
    return (out->domain = pfvm__onnx_str(r, d)) != NULL ? PFVM_OK : pfvm__onnx_err(r);
}

/* A StringStringEntryProto (metadata_props). */
static pfvm_code pfvm__onnx_string_pair(pfvm__onnx_rd *r, pfvm__onnx_slice sp, pfvm_string_pair *out)
{
    pb_istream_t s = pfvm__onnx_stream(sp);
    uint32_t tag;
    pb_wire_type_t wt;
    int k, ok = 1;
    pfvm__onnx_slice key = {NULL, 0}, val = {NULL, 0};
    while (ok && (k = pfvm__onnx_next(&s, &tag, &wt)) > 0)
        ok = tag == pfvm__pb_StringStringEntryProto_key_tag     ? pfvm__onnx_span(&s, wt, &key)
             : tag == pfvm__pb_StringStringEntryProto_value_tag ? pfvm__onnx_span(&s, wt, &val)
                                                            : pb_skip_field(&s, wt);
    if (!ok || k < 0)
        return pfvm__onnx_bad(r, "StringStringEntryProto");
    out->key = pfvm__onnx_str(r, key);
    out->value = pfvm__onnx_str(r, val);
    return out->key && out->value ? PFVM_OK : pfvm__onnx_err(r);
}

/* FunctionProto field 11 (attribute_proto, attributes with defaults) is
 * newer than the onnx.proto the descriptors come from. */
#define PFVM__ONNX_FUNCTION_ATTRIBUTE_PROTO_TAG 11

/* The parts of a FunctionProto. */
typedef struct pfvm__onnx_function_parts {
    pfvm__onnx_slice name, domain, doc;
    pfvm__onnx_slice *ins, *outs, *attrs, *attr_protos, *nodes, *opsets; /* stb_ds */
} pfvm__onnx_function_parts;

static void pfvm__onnx_function_parts_free(pfvm__onnx_function_parts *p)
{
    stbds_arrfree(p->ins);
    stbds_arrfree(p->outs);
    stbds_arrfree(p->attrs);
    stbds_arrfree(p->attr_protos);
    stbds_arrfree(p->nodes);
    stbds_arrfree(p->opsets);
}

static pfvm_code pfvm__onnx_function_parts_read(pfvm__onnx_rd *r, pfvm__onnx_slice sp, pfvm__onnx_function_parts *p)
{
    pb_istream_t s = pfvm__onnx_stream(sp);
    uint32_t tag;
    pb_wire_type_t wt;
    int k, ok = 1;
    memset(p, 0, sizeof *p);
    while (ok && (k = pfvm__onnx_next(&s, &tag, &wt)) > 0) {
        switch (tag) {
        case pfvm__pb_FunctionProto_name_tag: ok = pfvm__onnx_span(&s, wt, &p->name); break;
        case pfvm__pb_FunctionProto_domain_tag: ok = pfvm__onnx_span(&s, wt, &p->domain); break;
        case pfvm__pb_FunctionProto_doc_string_tag: ok = pfvm__onnx_span(&s, wt, &p->doc); break;
        case pfvm__pb_FunctionProto_input_tag: ok = pfvm__onnx_span_push(r, &s, wt, &p->ins); break;
        case pfvm__pb_FunctionProto_output_tag: ok = pfvm__onnx_span_push(r, &s, wt, &p->outs); break;
        case pfvm__pb_FunctionProto_attribute_tag: ok = pfvm__onnx_span_push(r, &s, wt, &p->attrs); break;
        case pfvm__pb_FunctionProto_node_tag: ok = pfvm__onnx_span_push(r, &s, wt, &p->nodes); break;
        case pfvm__pb_FunctionProto_opset_import_tag: ok = pfvm__onnx_span_push(r, &s, wt, &p->opsets); break;
        case PFVM__ONNX_FUNCTION_ATTRIBUTE_PROTO_TAG: ok = pfvm__onnx_span_push(r, &s, wt, &p->attr_protos); break;
        default: ok = pb_skip_field(&s, wt); break;
        }
    }
    if (!ok || k < 0)
        return pfvm__onnx_bad(r, "FunctionProto");
    if (!p->name.n)
        return pfvm__fail(r->st, PFVM_ERR_INVALID, "a model-local function has no name");
    return PFVM_OK;
}

/* The body graph of a function: formal inputs, nodes, formal outputs. */
static pfvm_code pfvm__onnx_function_body(pfvm__onnx_rd *r, pfvm_function *f, const pfvm__onnx_function_parts *p)
{
    pfvm_graph *g = f->body;
    pfvm_value *v;
    const char *nm;
    int i;
    for (i = 0; i < (int)stbds_arrlen(p->ins); i++) {
        if (!(nm = pfvm__onnx_name(r, p->ins[i], "function input")))
            return pfvm__onnx_err(r);
        if (pfvm_graph_find_local(g, nm))
            return pfvm__fail(r->st, PFVM_ERR_INVALID, "function '%s': input '%s' is listed twice", f->name, nm);
        if (!(v = pfvm_graph_value(g, nm, r->st)) || pfvm_graph_add_input(g, v, r->st))
            return pfvm__onnx_err(r);
    }
    for (i = 0; i < (int)stbds_arrlen(p->nodes); i++)
        if (pfvm__onnx_predeclare(r, g, p->nodes[i]))
            return pfvm__onnx_err(r);
    for (i = 0; i < (int)stbds_arrlen(p->nodes); i++)
        if (pfvm__onnx_node(r, g, p->nodes[i]))
            return pfvm__onnx_err(r);
    for (i = 0; i < (int)stbds_arrlen(p->outs); i++) {
        if (!(nm = pfvm__onnx_name(r, p->outs[i], "function output")))
            return pfvm__onnx_err(r);
        if (!(v = pfvm_graph_find_local(g, nm)))
            return pfvm__fail(r->st, PFVM_ERR_INVALID, "function '%s': output '%s' is not defined", f->name, nm);
        if (pfvm_graph_add_output(g, v, r->st))
            return pfvm__onnx_err(r);
    }
    return pfvm_graph_toposort(g, r->st);
}

/* Attribute names, attribute defaults and opset imports of a function. */
static pfvm_code pfvm__onnx_function_decls(pfvm__onnx_rd *r, pfvm_function *f, const pfvm__onnx_function_parts *p)
{
    char where[300];
    int i;
    pfvm__snprintf(where, sizeof where, "function '%.200s'", f->name);
    f->attr_names = (const char **)pfvm__onnx_list(r, stbds_arrlen(p->attrs), sizeof(char *), where, "attribute");
    f->attr_defaults = (pfvm_attr *)pfvm__onnx_list(r, stbds_arrlen(p->attr_protos), sizeof(pfvm_attr), where, "attribute");
    f->opsets = (pfvm_opset_import *)pfvm__onnx_list(r, stbds_arrlen(p->opsets), sizeof(pfvm_opset_import), where, "opset");
    if (!f->attr_names || !f->attr_defaults || !f->opsets)
        return pfvm__onnx_err(r);
    for (; f->n_attr_names < (int)stbds_arrlen(p->attrs); f->n_attr_names++)
        if (!(f->attr_names[f->n_attr_names] = pfvm__onnx_str(r, p->attrs[f->n_attr_names])))
            return pfvm__onnx_err(r);
    /* defaults belong to no node: their subgraphs (if any) have no owner */
    for (i = 0; i < (int)stbds_arrlen(p->attr_protos); i++) {
        if (pfvm__onnx_attr(r, p->attr_protos[i], f->body, NULL, where, &f->attr_defaults[i]))
            return pfvm__onnx_err(r);
        f->n_attr_defaults = i + 1;
    }
    for (i = 0; i < (int)stbds_arrlen(p->opsets); i++) {
        if (pfvm__onnx_opset(r, p->opsets[i], &f->opsets[i]))
            return pfvm__onnx_err(r);
        f->n_opsets = i + 1;
    }
    return PFVM_OK;
}

static pfvm_code pfvm__onnx_function(pfvm__onnx_rd *r, pfvm__onnx_slice sp)
{
    pfvm__onnx_function_parts p;
    pfvm_function *f = NULL;
    pfvm_code rc = pfvm__onnx_function_parts_read(r, sp, &p);
    if (!rc && !(f = (pfvm_function *)pfvm_model_alloc(r->m, sizeof *f)))
        rc = pfvm__onnx_nomem(r);
    /* the body is a graph of its own (no parent); the model frees it once
     * it is in m->functions */
    if (!rc && !(f->body = pfvm_graph_new(r->m, NULL, NULL, r->st)))
        rc = pfvm__onnx_err(r);
    if (!rc && !pfvm__arrpush(r->m->functions, f))
        rc = pfvm__onnx_nomem(r); /* the new body holds no memory yet */
    if (!rc) {
        f->name = pfvm__onnx_str(r, p.name);
        f->domain = pfvm__onnx_str(r, p.domain);
        f->doc = pfvm__onnx_str(r, p.doc);
        if (!f->name || !f->domain || !f->doc)
            rc = pfvm__onnx_err(r);
    }
    if (!rc) {
        f->body->name = f->name;
        rc = pfvm__onnx_function_body(r, f, &p);
    }
    if (!rc)
        rc = pfvm__onnx_function_decls(r, f, &p);
    pfvm__onnx_function_parts_free(&p);
    return rc;
}

/* PFVM_PLANNED_ONLY with PFVM_NO_FUSION: the reader skips model-local
 * functions (PFVM__NO_FUNCTIONS, base.h). */
#define PFVM__ONNX_NO_FUNCTIONS PFVM__NO_FUNCTIONS

/* ModelProto's own fields; the graph and functions come back as slices,
 * parsed once the opset imports are known. */
static pfvm_code pfvm__onnx_model_field(pfvm__onnx_rd *r, pb_istream_t *s, uint32_t tag, pb_wire_type_t wt,
                                        pfvm__onnx_slice *graph, int *has_graph, pfvm__onnx_slice **functions)
{
    pfvm_model *m = r->m;
    pfvm__onnx_slice x;
    const char **str = NULL;
    switch (tag) {
    case pfvm__pb_ModelProto_ir_version_tag: return pfvm__onnx_i64(s, wt, &m->ir_version) ? PFVM_OK : pfvm__onnx_bad(r, "ModelProto.ir_version");
#ifndef PFVM_PLANNED_ONLY /* there the model's descriptive fields are skipped (left empty) */
    case pfvm__pb_ModelProto_model_version_tag: return pfvm__onnx_i64(s, wt, &m->model_version) ? PFVM_OK : pfvm__onnx_bad(r, "ModelProto.model_version");
    case pfvm__pb_ModelProto_producer_name_tag: str = &m->producer_name; break;
    case pfvm__pb_ModelProto_producer_version_tag: str = &m->producer_version; break;
    case pfvm__pb_ModelProto_domain_tag: str = &m->domain; break;
    case pfvm__pb_ModelProto_doc_string_tag: str = &m->doc; break;
#endif
    case pfvm__pb_ModelProto_graph_tag: *has_graph = 1; return pfvm__onnx_span(s, wt, graph) ? PFVM_OK : pfvm__onnx_bad(r, "ModelProto.graph");
    case pfvm__pb_ModelProto_functions_tag:
        if (PFVM__ONNX_NO_FUNCTIONS) /* a call to one then fails to load: no such operator */
            return pb_skip_field(s, wt) ? PFVM_OK : pfvm__onnx_bad(r, "ModelProto.functions");
        return pfvm__onnx_span_push(r, s, wt, functions) ? PFVM_OK : pfvm__onnx_bad(r, "ModelProto.functions");
    case pfvm__pb_ModelProto_opset_import_tag: {
        pfvm_opset_import imp;
        if (!pfvm__onnx_span(s, wt, &x))
            return pfvm__onnx_bad(r, "ModelProto.opset_import");
        if (pfvm__onnx_opset(r, x, &imp))
            return pfvm__onnx_err(r);
        if (!pfvm__arrpush(m->opsets, imp))
            return pfvm__onnx_nomem(r);
        return PFVM_OK;
    }
    case pfvm__pb_ModelProto_metadata_props_tag: {
        pfvm_string_pair kv;
        if (!pfvm__onnx_span(s, wt, &x))
            return pfvm__onnx_bad(r, "ModelProto.metadata_props");
        if (pfvm__onnx_string_pair(r, x, &kv))
            return pfvm__onnx_err(r);
        if (!pfvm__arrpush(m->metadata, kv))
            return pfvm__onnx_nomem(r);
        return PFVM_OK;
    }
    default: return pb_skip_field(s, wt) ? PFVM_OK : pfvm__onnx_bad(r, "ModelProto");
    }
    if (!pfvm__onnx_span(s, wt, &x))
        return pfvm__onnx_bad(r, "ModelProto string field");
    return (*str = pfvm__onnx_str(r, x)) != NULL ? PFVM_OK : pfvm__onnx_err(r);
}

static pfvm_code pfvm__onnx_model(pfvm__onnx_rd *r, pfvm__onnx_slice sp)
{
    pb_istream_t s = pfvm__onnx_stream(sp);
    uint32_t tag;
    pb_wire_type_t wt;
    int k = 0, i, has_graph = 0;
    pfvm__onnx_slice graph = {NULL, 0}, *functions = NULL;
    pfvm_code rc = PFVM_OK;
    pfvm_graph *g = NULL;
    while (!rc && (k = pfvm__onnx_next(&s, &tag, &wt)) > 0)
        rc = pfvm__onnx_model_field(r, &s, tag, wt, &graph, &has_graph, &functions);
    if (!rc && k < 0)
        rc = pfvm__onnx_bad(r, "ModelProto");
    if (!rc && !has_graph)
        rc = pfvm__fail(r->st, PFVM_ERR_INVALID, "the model has no graph");
    if (!rc)
        rc = pfvm__onnx_graph(r, graph, NULL, NULL, &g);
    for (i = 0; !PFVM__ONNX_NO_FUNCTIONS && !rc && i < (int)stbds_arrlen(functions); i++)
        rc = pfvm__onnx_function(r, functions[i]);
    stbds_arrfree(functions);
    return rc;
}

/* ---- entry points ------------------------------------------------------------------ */

/* Every entry point reads through a status that is never NULL and starts
 * cleared (see pfvm__onnx_err). */
static void pfvm__onnx_rd_init(pfvm__onnx_rd *r, pfvm_model *m, unsigned flags, pfvm_status *st, pfvm_status *local)
{
    memset(r, 0, sizeof *r);
    r->m = m;
    r->flags = flags;
    r->st = st ? st : local;
    r->st->code = PFVM_OK;
    r->st->msg[0] = 0;
}

/* Parses bytes into m (which then owns or views them); frees m on error. */
static pfvm_model *pfvm__onnx_load(pfvm_model *m, const void *bytes, size_t size, unsigned flags, pfvm_status *st)
{
    pfvm__onnx_rd r;
    pfvm_status local;
    pfvm__onnx_slice sp;
    pfvm_code rc;
    pfvm__onnx_rd_init(&r, m, flags, st, &local);
    sp.p = (const unsigned char *)bytes;
    sp.n = size;
    rc = size ? pfvm__onnx_model(&r, sp) : pfvm__fail(r.st, PFVM_ERR_PARSE, "empty model");
    stbds_arrfree(r.scratch);
    if (rc) {
        pfvm_model_free(m);
        return NULL;
    }
    pfvm__ok(st);
    return m;
}

static pfvm_model *pfvm__onnx_load_memory(pfvm_model *m, const void *bytes, size_t size, unsigned flags,
                                          pfvm_status *st)
{
    if (flags & PFVM_LOAD_COPY) {
        m->owned_bytes = pfvm__malloc(size ? size : 1);
        if (!m->owned_bytes) {
            pfvm_model_free(m);
            pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory copying %zu bytes", size);
            return NULL;
        }
        if (size)
            memcpy(m->owned_bytes, bytes, size);
        bytes = m->owned_bytes;
        flags &= ~PFVM_LOAD_COPY; /* the model owns the bytes now: view them */
    }
    return pfvm__onnx_load(m, bytes, size, flags, st);
}

pfvm_model *pfvm_onnx_load_memory_desc(const void *bytes, size_t size, const pfvm_onnx_load_desc *desc,
                                       pfvm_status *st)
{
    pfvm__scope sc;
    pfvm_model *m = pfvm_model_new_desc(desc ? &desc->model : NULL, st);
    if (!m)
        return NULL;
    pfvm__scope_enter(&sc, &m->allocator);
    m = pfvm__onnx_load_memory(m, bytes, size, desc ? desc->flags : 0, st);
    pfvm__scope_leave(&sc);
    return m;
}

pfvm_model *pfvm_onnx_load_memory(const void *bytes, size_t size, unsigned flags, pfvm_status *st)
{
    pfvm_onnx_load_desc d;
    memset(&d, 0, sizeof d);
    d.flags = flags;
    return pfvm_onnx_load_memory_desc(bytes, size, &d, st);
}

/* ---- value files (TensorProto, SequenceProto, OptionalProto) ---------------------- */

static pfvm_tensor *pfvm__onnx_value(pfvm__onnx_rd *r, pfvm__onnx_slice sp, pfvm_kind kind);

/* SequenceProto and OptionalProto share their field numbers: name 1,
 * elem_type 2, then tensor 3, sparse tensor 4, sequence 5, map 6 and
 * optional 7 values. */
static pfvm_code pfvm__onnx_container_field(pfvm__onnx_rd *r, pb_istream_t *s, uint32_t tag, pb_wire_type_t wt,
                                            const char *what, pfvm_tensor *out)
{
    pfvm_kind ek;
    pfvm__onnx_slice x;
    pfvm_tensor *e;
    switch (tag) {
    case pfvm__pb_SequenceProto_tensor_values_tag: ek = PFVM_KIND_TENSOR; break;
    case pfvm__pb_SequenceProto_sequence_values_tag: ek = PFVM_KIND_SEQUENCE; break;
    case pfvm__pb_SequenceProto_optional_values_tag: ek = PFVM_KIND_OPTIONAL; break;
    case pfvm__pb_SequenceProto_sparse_tensor_values_tag:
    case pfvm__pb_SequenceProto_map_values_tag:
        return pfvm__fail(r->st, PFVM_ERR_UNSUPPORTED, "%s: sparse tensor and map elements are not supported", what);
    default:
        return pb_skip_field(s, wt) ? PFVM_OK : pfvm__fail(r->st, PFVM_ERR_PARSE, "malformed ONNX: %s", what);
    }
    if (!pfvm__onnx_span(s, wt, &x))
        return pfvm__fail(r->st, PFVM_ERR_PARSE, "malformed ONNX: %s element", what);
    if (!(e = pfvm__onnx_value(r, x, ek)))
        return pfvm__onnx_err(r);
    if (!pfvm__arrpush(out->elems, e)) {
        pfvm_tensor_free(e);
        return pfvm__onnx_nomem(r);
    }
    return PFVM_OK;
}

static pfvm_tensor *pfvm__onnx_container(pfvm__onnx_rd *r, pfvm__onnx_slice sp, pfvm_kind kind)
{
    pb_istream_t s = pfvm__onnx_stream(sp);
    uint32_t tag;
    pb_wire_type_t wt;
    int k = 0;
    const char *what = kind == PFVM_KIND_SEQUENCE ? "SequenceProto" : "OptionalProto";
    pfvm_tensor *out;
    pfvm_code rc = PFVM_OK;
    if (r->depth >= PFVM__ONNX_MAX_DEPTH) {
        pfvm__fail(r->st, PFVM_ERR_UNSUPPORTED, "%s: values nested more than %d deep", what, PFVM__ONNX_MAX_DEPTH);
        return NULL;
    }
    if (!(out = (pfvm_tensor *)pfvm__calloc(1, sizeof *out))) {
        pfvm__onnx_nomem(r);
        return NULL;
    }
    out->kind = kind;
    r->depth++;
    while (!rc && (k = pfvm__onnx_next(&s, &tag, &wt)) > 0)
        rc = pfvm__onnx_container_field(r, &s, tag, wt, what, out);
    r->depth--;
    if (!rc && k < 0)
        rc = pfvm__fail(r->st, PFVM_ERR_PARSE, "malformed ONNX: %s", what);
    if (!rc && kind == PFVM_KIND_OPTIONAL && stbds_arrlen(out->elems) > 1)
        rc = pfvm__fail(r->st, PFVM_ERR_INVALID, "OptionalProto holds more than one value");
    if (rc) {
        pfvm_tensor_free(out);
        return NULL;
    }
    out->has_value = kind == PFVM_KIND_OPTIONAL && stbds_arrlen(out->elems) > 0;
    if (stbds_arrlen(out->elems))
        out->elem_dtype = out->elems[0]->kind == PFVM_KIND_TENSOR ? out->elems[0]->dtype : out->elems[0]->elem_dtype;
    out->dtype = out->elem_dtype;
    return out;
}

static pfvm_tensor *pfvm__onnx_value(pfvm__onnx_rd *r, pfvm__onnx_slice sp, pfvm_kind kind)
{
    if ((kind == PFVM_KIND_SEQUENCE || kind == PFVM_KIND_OPTIONAL) && !PFVM__ONNX_ALL_KINDS) {
        pfvm__fail(r->st, PFVM_ERR_UNSUPPORTED, "sequence and optional values need " PFVM__ONNX_TENSORS_ONLY_MSG);
        return NULL;
    }
    if (kind == PFVM_KIND_SEQUENCE || kind == PFVM_KIND_OPTIONAL)
        return pfvm__onnx_container(r, sp, kind);
    return pfvm__onnx_tensor(r, sp);
}

pfvm_tensor *pfvm_onnx_read_value(const void *bytes, size_t size, pfvm_kind hint, pfvm_status *st)
{
    pfvm__onnx_rd r;
    pfvm_status local;
    pfvm__onnx_slice sp;
    pfvm_tensor *t;
    if (hint == PFVM_KIND_MAP || hint == PFVM_KIND_SPARSE) {
        pfvm__fail(st, PFVM_ERR_UNSUPPORTED, "reading %s values is not supported",
                   hint == PFVM_KIND_MAP ? "map" : "sparse tensor");
        return NULL;
    }
    pfvm__onnx_rd_init(&r, NULL, 0, st, &local);
    sp.p = (const unsigned char *)bytes;
    sp.n = size;
    t = pfvm__onnx_value(&r, sp, hint);
    stbds_arrfree(r.scratch);
    if (t)
        pfvm__ok(st);
    return t;
}

void pfvm_onnx_free(void *bytes)
{
    pfvm__free(bytes);
}

#ifndef PFVM_NO_STDIO
pfvm_code pfvm_onnx_read_file(const char *path, void **bytes, size_t *size, pfvm_status *st)
{
    FILE *f = fopen(path, "rb");
    long n;
    unsigned char *buf;
    *bytes = NULL;
    *size = 0;
    if (!f)
        return pfvm__fail(st, PFVM_ERR_IO, "cannot open '%s'", path);
    if (fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) {
        fclose(f);
        return pfvm__fail(st, PFVM_ERR_IO, "cannot read '%s'", path);
    }
    buf = (unsigned char *)pfvm__malloc((size_t)n + 1);
    if (!buf) {
        fclose(f);
        return pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory reading '%s' (%ld bytes)", path, n);
    }
    if (n && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        fclose(f);
        pfvm__free(buf);
        return pfvm__fail(st, PFVM_ERR_IO, "cannot read '%s'", path);
    }
    fclose(f);
    *bytes = buf;
    *size = (size_t)n;
    return PFVM_OK;
}

/* The directory part of a path ("." for a bare file name, "/" at the root). */
static const char *pfvm__onnx_dirname(pfvm_model *m, const char *path)
{
    const char *slash = strrchr(path, '/');
#ifdef _WIN32
    const char *back = strrchr(path, '\\');
    if (back && (!slash || back > slash))
        slash = back;
#endif
    if (!slash)
        return ".";
    return slash == path ? "/" : pfvm_model_strndup(m, path, (size_t)(slash - path));
}

static pfvm_model *pfvm__onnx_load_file(pfvm_model *m, const char *path, unsigned flags, pfvm_status *st)
{
    void *bytes;
    size_t size;
    if (pfvm_onnx_read_file(path, &bytes, &size, st)) {
        pfvm_model_free(m);
        return NULL;
    }
    m->owned_bytes = bytes; /* weights are viewed in place */
    if (!(m->dir = pfvm__onnx_dirname(m, path))) {
        pfvm_model_free(m);
        pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
        return NULL;
    }
    m = pfvm__onnx_load(m, bytes, size, flags & ~PFVM_LOAD_COPY, st);
    if (!m)
        pfvm__prefix(st, "%s", path);
    return m;
}

pfvm_model *pfvm_onnx_load_file_desc(const char *path, const pfvm_onnx_load_desc *desc, pfvm_status *st)
{
    pfvm__scope sc;
    pfvm_model *m = pfvm_model_new_desc(desc ? &desc->model : NULL, st);
    if (!m)
        return NULL;
    pfvm__scope_enter(&sc, &m->allocator);
    m = pfvm__onnx_load_file(m, path, desc ? desc->flags : 0, st);
    pfvm__scope_leave(&sc);
    return m;
}

pfvm_model *pfvm_onnx_load_file(const char *path, unsigned flags, pfvm_status *st)
{
    pfvm_onnx_load_desc d;
    memset(&d, 0, sizeof d);
    d.flags = flags;
    return pfvm_onnx_load_file_desc(path, &d, st);
}

pfvm_tensor *pfvm_onnx_read_value_file(const char *path, pfvm_kind hint, pfvm_status *st)
{
    void *bytes;
    size_t size;
    pfvm_tensor *t;
    if (pfvm_onnx_read_file(path, &bytes, &size, st))
        return NULL;
    t = pfvm_onnx_read_value(bytes, size, hint, st);
    pfvm__free(bytes);
    if (!t)
        pfvm__prefix(st, "%s", path);
    return t;
}
#endif
