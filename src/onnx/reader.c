#include "onnx_io.h"
#include "onnx.pb.h"

#include <pb_decode.h>
#ifndef PFVM_NO_STDIO
#include <stdio.h>
#endif

/* Nested graphs and types deeper than this are rejected: real models nest a
 * few levels, a malicious file could nest until the stack ends. */
#define PFVM__ONNX_MAX_DEPTH 64

/* A byte range inside the input; strings and submessages are spans. */
typedef struct pfvm__span {
    const unsigned char *p;
    size_t n;
} pfvm__span;

typedef struct pfvm__onnx_rd {
    pfvm_model *m;        /* destination (NULL when reading a value file) */
    pfvm_status *st;
    unsigned flags;
    int depth;
} pfvm__onnx_rd;

static pfvm_code pfvm__onnx_bad(pfvm__onnx_rd *r, const char *what)
{
    return pfvm__fail(r->st, PFVM_ERR_PARSE, "malformed ONNX: %s", what);
}

/* ---- wire-format primitives over nanopb streams ---------------------------- */

/* The current read position of a buffer stream (nanopb's buffer streams keep
 * it in `state`): how string fields are viewed without copying. */
static const unsigned char *pfvm__onnx_pos(const pb_istream_t *s)
{
    return (const unsigned char *)s->state;
}

/* Next field: 1 with tag and wire type, 0 at the end, -1 on a bad tag. */
static int pfvm__onnx_next(pb_istream_t *s, uint32_t *tag, pb_wire_type_t *wt)
{
    bool eof = false;
    if (!s->bytes_left)
        return 0;
    if (!pb_decode_tag(s, wt, tag, &eof))
        return eof ? 0 : -1;
    return 1;
}

static int pfvm__onnx_span(pb_istream_t *s, pb_wire_type_t wt, pfvm__span *out)
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
static int pfvm__onnx_ints(pb_istream_t *s, pb_wire_type_t wt, int64_t **arr)
{
    uint64_t u;
    if (wt == PB_WT_VARINT) {
        if (!pb_decode_varint(s, &u))
            return 0;
        stbds_arrput(*arr, (int64_t)u);
        return 1;
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
            stbds_arrput(*arr, (int64_t)u);
        }
        return pb_close_string_substream(s, &sub);
    }
    return 0;
}

/* Repeated fixed-width values (4 or 8 bytes), packed or not. */
static int pfvm__onnx_fixed(pb_istream_t *s, pb_wire_type_t wt, size_t width, unsigned char **arr)
{
    unsigned char buf[8];
    pb_wire_type_t want = width == 4 ? PB_WT_32BIT : PB_WT_64BIT;
    if (wt == want) {
        if (!(width == 4 ? pb_decode_fixed32(s, buf) : pb_decode_fixed64(s, buf)))
            return 0;
        memcpy(stbds_arraddnptr(*arr, width), buf, width);
        return 1;
    }
    if (wt == PB_WT_STRING) {
        pfvm__span sp;
        if (!pfvm__onnx_span(s, wt, &sp) || sp.n % width)
            return 0;
        if (sp.n)
            memcpy(stbds_arraddnptr(*arr, sp.n), sp.p, sp.n);
        return 1;
    }
    return 0;
}

static pb_istream_t pfvm__onnx_stream(pfvm__span sp)
{
    return pb_istream_from_buffer(sp.p, sp.n);
}

static const char *pfvm__onnx_str(pfvm__onnx_rd *r, pfvm__span sp)
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
    pfvm__span name, raw;
    int has_raw, external, has_segment;
    unsigned char *f32;       /* stb_ds bytes: float_data */
    unsigned char *f64;       /* double_data */
    int64_t *i32;             /* int32_data (as int64) */
    int64_t *i64;             /* int64_data */
    int64_t *u64;             /* uint64_data */
    pfvm__span *strs;         /* stb_ds: string_data */
    pfvm__span ext_location;
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

static pfvm_code pfvm__onnx_ext_entry(pfvm__onnx_rd *r, pfvm__span sp, pfvm__onnx_tp *t)
{
    pb_istream_t s = pfvm__onnx_stream(sp);
    pfvm__span key = {NULL, 0}, val = {NULL, 0};
    uint32_t tag;
    pb_wire_type_t wt;
    int k;
    while ((k = pfvm__onnx_next(&s, &tag, &wt)) > 0) {
        int ok = tag == onnx_StringStringEntryProto_key_tag     ? pfvm__onnx_span(&s, wt, &key)
                 : tag == onnx_StringStringEntryProto_value_tag ? pfvm__onnx_span(&s, wt, &val)
                                                                : pb_skip_field(&s, wt);
        if (!ok)
            return pfvm__onnx_bad(r, "external_data entry");
    }
    if (k < 0)
        return pfvm__onnx_bad(r, "external_data entry");
    if (key.n == 8 && !memcmp(key.p, "location", 8)) {
        t->ext_location = val;
    } else if ((key.n == 6 && !memcmp(key.p, "offset", 6)) || (key.n == 6 && !memcmp(key.p, "length", 6))) {
        char num[32];
        char *end;
        long long v;
        if (val.n == 0 || val.n >= sizeof num)
            return pfvm__onnx_bad(r, "external_data offset/length");
        memcpy(num, val.p, val.n);
        num[val.n] = 0;
        v = strtoll(num, &end, 10);
        if (*end || v < 0)
            return pfvm__onnx_bad(r, "external_data offset/length");
        if (key.p[0] == 'o')
            t->ext_offset = v;
        else
            t->ext_length = v;
    }
    return PFVM_OK;
}

static pfvm_code pfvm__onnx_parse_tp(pfvm__onnx_rd *r, pfvm__span sp, pfvm__onnx_tp *t)
{
    pb_istream_t s = pfvm__onnx_stream(sp);
    uint32_t tag;
    pb_wire_type_t wt;
    int k;
    memset(t, 0, sizeof *t);
    t->ext_length = -1;
    while ((k = pfvm__onnx_next(&s, &tag, &wt)) > 0) {
        int ok = 1;
        pfvm__span x;
        int64_t v = 0;
        switch (tag) {
        case onnx_TensorProto_dims_tag: ok = pfvm__onnx_ints(&s, wt, &t->dims); break;
        case onnx_TensorProto_data_type_tag: ok = pfvm__onnx_i64(&s, wt, &t->dtype); break;
        case onnx_TensorProto_segment_tag: t->has_segment = 1; ok = pb_skip_field(&s, wt); break;
        case onnx_TensorProto_float_data_tag: ok = pfvm__onnx_fixed(&s, wt, 4, &t->f32); break;
        case onnx_TensorProto_int32_data_tag: ok = pfvm__onnx_ints(&s, wt, &t->i32); break;
        case onnx_TensorProto_string_data_tag:
            ok = pfvm__onnx_span(&s, wt, &x);
            if (ok)
                stbds_arrput(t->strs, x);
            break;
        case onnx_TensorProto_int64_data_tag: ok = pfvm__onnx_ints(&s, wt, &t->i64); break;
        case onnx_TensorProto_name_tag: ok = pfvm__onnx_span(&s, wt, &t->name); break;
        case onnx_TensorProto_raw_data_tag:
            ok = pfvm__onnx_span(&s, wt, &t->raw);
            t->has_raw = 1;
            break;
        case onnx_TensorProto_double_data_tag: ok = pfvm__onnx_fixed(&s, wt, 8, &t->f64); break;
        case onnx_TensorProto_uint64_data_tag: ok = pfvm__onnx_ints(&s, wt, &t->u64); break;
        case onnx_TensorProto_external_data_tag:
            ok = pfvm__onnx_span(&s, wt, &x);
            if (ok && pfvm__onnx_ext_entry(r, x, t))
                return r->st ? r->st->code : PFVM_ERR_PARSE;
            break;
        case onnx_TensorProto_data_location_tag:
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

/* Bytes of a file external data refers to, read into a heap block that the
 * model owns. */
static pfvm_code pfvm__onnx_external(pfvm__onnx_rd *r, const pfvm__onnx_tp *t, size_t bytes, void **out)
{
#ifndef PFVM_NO_STDIO
    char path[4096], name[1024];
    FILE *f;
    size_t i;
    unsigned char *buf;
    long long size;
    if (!r->m || !r->m->dir)
        return pfvm__fail(r->st, PFVM_ERR_IO, "external data needs a model loaded from a file");
    if (!t->ext_location.n || t->ext_location.n >= sizeof name)
        return pfvm__fail(r->st, PFVM_ERR_INVALID, "external data without a valid location");
    memcpy(name, t->ext_location.p, t->ext_location.n);
    name[t->ext_location.n] = 0;
    /* stay inside the model's directory */
    if (name[0] == '/' || name[0] == '\\' || strstr(name, "..") || strlen(name) != t->ext_location.n)
        return pfvm__fail(r->st, PFVM_ERR_INVALID, "external data location '%s' leaves the model's directory", name);
    for (i = 0; name[i]; i++)
        if (name[i] == ':')
            return pfvm__fail(r->st, PFVM_ERR_INVALID, "external data location '%s' is not a relative path", name);
    if ((size_t)pfvm__snprintf(path, sizeof path, "%s/%s", r->m->dir, name) >= sizeof path)
        return pfvm__fail(r->st, PFVM_ERR_INVALID, "external data path too long");
    if (t->ext_length >= 0 && (uint64_t)t->ext_length != (uint64_t)bytes)
        return pfvm__fail(r->st, PFVM_ERR_INVALID, "external data '%s': length %lld, the tensor needs %zu bytes", name,
                          (long long)t->ext_length, bytes);
    f = fopen(path, "rb");
    if (!f)
        return pfvm__fail(r->st, PFVM_ERR_IO, "cannot open external data file '%s'", path);
    if (fseek(f, 0, SEEK_END) || (size = ftell(f)) < 0 || (uint64_t)t->ext_offset > (uint64_t)size ||
        (uint64_t)size - (uint64_t)t->ext_offset < bytes || fseek(f, (long)t->ext_offset, SEEK_SET)) {
        fclose(f);
        return pfvm__fail(r->st, PFVM_ERR_INVALID, "external data file '%s' is shorter than the tensor", path);
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
    pfvm_model_own(r->m, buf, NULL);
    *out = buf;
    return PFVM_OK;
#else
    (void)t;
    (void)bytes;
    (void)out;
    return pfvm__fail(r->st, PFVM_ERR_UNSUPPORTED, "external data needs stdio (PFVM_NO_STDIO is set)");
#endif
}

static int pfvm__onnx_little_endian(void)
{
    const uint16_t one = 1;
    return *(const unsigned char *)&one == 1;
}

/* Copies the typed-field values of t into data (numel elements of dtype). */
static pfvm_code pfvm__onnx_fill_typed(pfvm__onnx_rd *r, const pfvm__onnx_tp *t, pfvm_dtype dt, int64_t numel,
                                       void *data)
{
    int64_t i;
    size_t have;
    switch (dt) {
    case PFVM_FLOAT:
    case PFVM_COMPLEX64:
        have = stbds_arrlen(t->f32) / 4;
        if ((int64_t)have != numel * (dt == PFVM_COMPLEX64 ? 2 : 1))
            goto count;
        if (have)
            memcpy(data, t->f32, have * 4);
        return PFVM_OK;
    case PFVM_DOUBLE:
    case PFVM_COMPLEX128:
        have = stbds_arrlen(t->f64) / 8;
        if ((int64_t)have != numel * (dt == PFVM_COMPLEX128 ? 2 : 1))
            goto count;
        if (have)
            memcpy(data, t->f64, have * 8);
        return PFVM_OK;
    case PFVM_INT64:
        if ((int64_t)stbds_arrlen(t->i64) != numel)
            goto count;
        if (numel)
            memcpy(data, t->i64, (size_t)numel * 8);
        return PFVM_OK;
    case PFVM_UINT32:
    case PFVM_UINT64:
        if ((int64_t)stbds_arrlen(t->u64) != numel)
            goto count;
        for (i = 0; i < numel; i++) {
            if (dt == PFVM_UINT32)
                ((uint32_t *)data)[i] = (uint32_t)t->u64[i];
            else
                ((uint64_t *)data)[i] = (uint64_t)t->u64[i];
        }
        return PFVM_OK;
    case PFVM_INT32: case PFVM_INT16: case PFVM_INT8: case PFVM_UINT16: case PFVM_UINT8:
    case PFVM_BOOL: case PFVM_FLOAT16: case PFVM_BFLOAT16:
    case PFVM_FLOAT8E4M3FN: case PFVM_FLOAT8E4M3FNUZ: case PFVM_FLOAT8E5M2: case PFVM_FLOAT8E5M2FNUZ:
    case PFVM_UINT4: case PFVM_INT4:
        if ((int64_t)stbds_arrlen(t->i32) != numel)
            goto count;
        for (i = 0; i < numel; i++) {
            int64_t v = t->i32[i];
            switch (pfvm_dtype_size(dt)) {
            case 4: ((int32_t *)data)[i] = (int32_t)v; break;
            case 2: ((uint16_t *)data)[i] = (uint16_t)v; break;
            default: ((uint8_t *)data)[i] = (uint8_t)v; break;
            }
        }
        return PFVM_OK;
    default:
        return pfvm__fail(r->st, PFVM_ERR_UNSUPPORTED, "tensor element type %d is not supported", (int)dt);
    }
count:
    return pfvm__fail(r->st, PFVM_ERR_INVALID, "tensor '%.*s' has the wrong number of values for its shape",
                      (int)(t->name.n > 200 ? 200 : t->name.n), (const char *)t->name.p);
}

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

/* Builds a tensor from parsed fields: owned by the model (r->m) or a heap
 * tensor (r->m NULL, for value files). */
static pfvm_tensor *pfvm__onnx_build_tensor(pfvm__onnx_rd *r, pfvm__onnx_tp *t)
{
    pfvm_dtype dt = (pfvm_dtype)t->dtype;
    int rank = (int)stbds_arrlen(t->dims), i;
    int64_t numel = 1;
    size_t esize, bytes;
    pfvm_tensor *out;
    void *view = NULL;
    if (t->dtype <= 0 || t->dtype >= PFVM_DTYPE_COUNT) {
        pfvm__fail(r->st, PFVM_ERR_UNSUPPORTED, "tensor '%.*s': unknown element type %lld",
                   (int)(t->name.n > 200 ? 200 : t->name.n), (const char *)t->name.p, (long long)t->dtype);
        return NULL;
    }
    if (t->has_segment) {
        pfvm__fail(r->st, PFVM_ERR_UNSUPPORTED, "segmented tensors are not supported");
        return NULL;
    }
    if (rank > PFVM_MAX_RANK) {
        pfvm__fail(r->st, PFVM_ERR_UNSUPPORTED, "tensor '%.*s' has rank %d, more than PFVM_MAX_RANK (%d)",
                   (int)(t->name.n > 200 ? 200 : t->name.n), (const char *)t->name.p, rank, PFVM_MAX_RANK);
        return NULL;
    }
    for (i = 0; i < rank; i++)
        if (t->dims[i] < 0 || !pfvm__mul_i64(numel, t->dims[i], &numel)) {
            pfvm__fail(r->st, PFVM_ERR_INVALID, "tensor '%.*s' has an invalid shape",
                       (int)(t->name.n > 200 ? 200 : t->name.n), (const char *)t->name.p);
            return NULL;
        }
    esize = pfvm_dtype_size(dt);
    if ((uint64_t)numel > SIZE_MAX / (esize ? esize : 1)) {
        pfvm__fail(r->st, PFVM_ERR_NOMEM, "tensor is too large");
        return NULL;
    }
    bytes = (size_t)numel * esize;
    /* the data must really be there before anything of that size is allocated */
    if (dt != PFVM_STRING && !t->external) {
        size_t avail = t->has_raw ? t->raw.n
                                  : stbds_arrlen(t->f32) + stbds_arrlen(t->f64) +
                                        8 * (stbds_arrlen(t->i32) + stbds_arrlen(t->i64) + stbds_arrlen(t->u64));
        if (t->has_raw ? avail != bytes : avail < (size_t)numel) {
            pfvm__fail(r->st, PFVM_ERR_INVALID, "tensor '%.*s': %zu bytes of data for %lld elements of %s",
                       (int)(t->name.n > 200 ? 200 : t->name.n), (const char *)t->name.p, avail, (long long)numel,
                       pfvm_dtype_name(dt));
            return NULL;
        }
    }
    if (dt == PFVM_STRING && (int64_t)stbds_arrlen(t->strs) != numel) {
        pfvm__fail(r->st, PFVM_ERR_INVALID, "string tensor has %d strings for %lld elements",
                   (int)stbds_arrlen(t->strs), (long long)numel);
        return NULL;
    }
    if (t->external && r->m) {
        if (pfvm__onnx_external(r, t, bytes, &view))
            return NULL;
    } else if (t->external) {
        pfvm__fail(r->st, PFVM_ERR_UNSUPPORTED, "external data in a tensor file");
        return NULL;
    } else if (t->has_raw && r->m && !(r->flags & PFVM_LOAD_COPY) && pfvm__onnx_little_endian() &&
               ((uintptr_t)t->raw.p % (esize > 8 ? 8 : esize ? esize : 1)) == 0) {
        view = (void *)t->raw.p; /* zero-copy: the model reads the caller's bytes */
    }
    if (r->m)
        out = pfvm_model_tensor(r->m, dt, rank, t->dims, view, r->st);
    else
        out = pfvm_tensor_new(dt, rank, t->dims, r->st);
    if (!out)
        return NULL;
    if (view)
        return out;
    if (dt == PFVM_STRING) {
        for (i = 0; i < numel; i++) {
            char *s = r->m ? (char *)pfvm_model_strndup(r->m, (const char *)t->strs[i].p, t->strs[i].n)
                           : pfvm__strndup((const char *)t->strs[i].p, t->strs[i].n);
            if (!s) {
                if (!r->m)
                    pfvm_tensor_free(out);
                pfvm__fail(r->st, PFVM_ERR_NOMEM, "out of memory");
                return NULL;
            }
            ((char **)out->data)[i] = s;
        }
    } else if (t->has_raw) {
        if (bytes)
            memcpy(out->data, t->raw.p, bytes);
        if (!pfvm__onnx_little_endian() && esize > 1)
            pfvm__onnx_swap_bytes(out->data, bytes, dt == PFVM_COMPLEX64 ? 4 : dt == PFVM_COMPLEX128 ? 8 : esize);
    } else if (pfvm__onnx_fill_typed(r, t, dt, numel, out->data)) {
        if (!r->m)
            pfvm_tensor_free(out);
        return NULL;
    }
    return out;
}

static pfvm_tensor *pfvm__onnx_tensor(pfvm__onnx_rd *r, pfvm__span sp)
{
    pfvm__onnx_tp t;
    pfvm_tensor *out = NULL;
    if (!pfvm__onnx_parse_tp(r, sp, &t)) {
        out = pfvm__onnx_build_tensor(r, &t);
        if (out && r->m && t.name.n)
            out->name = pfvm__onnx_str(r, t.name);
    }
    pfvm__onnx_tp_free(&t);
    return out;
}

/* SparseTensorProto -> dense model tensor. */
static pfvm_tensor *pfvm__onnx_sparse(pfvm__onnx_rd *r, pfvm__span sp, const char **name)
{
    pb_istream_t s = pfvm__onnx_stream(sp);
    uint32_t tag;
    pb_wire_type_t wt;
    pfvm__span vals = {NULL, 0}, idx = {NULL, 0};
    int64_t *dims = NULL, numel = 1, nnz, i;
    pfvm_tensor *v = NULL, *ix = NULL, *out = NULL;
    int k, rank, d;
    size_t es;
    while ((k = pfvm__onnx_next(&s, &tag, &wt)) > 0) {
        int ok = tag == onnx_SparseTensorProto_values_tag    ? pfvm__onnx_span(&s, wt, &vals)
                 : tag == onnx_SparseTensorProto_indices_tag ? pfvm__onnx_span(&s, wt, &idx)
                 : tag == onnx_SparseTensorProto_dims_tag    ? pfvm__onnx_ints(&s, wt, &dims)
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
    if (rank > PFVM_MAX_RANK || v->rank != 1 || ix->dtype != PFVM_INT64 || v->dtype == PFVM_STRING) {
        pfvm__fail(r->st, PFVM_ERR_UNSUPPORTED, "sparse tensor: unsupported layout");
        goto done;
    }
    for (d = 0; d < rank; d++)
        if (dims[d] < 0 || !pfvm__mul_i64(numel, dims[d], &numel)) {
            pfvm__fail(r->st, PFVM_ERR_INVALID, "sparse tensor: invalid shape");
            goto done;
        }
    nnz = v->dims[0];
    if (!((ix->rank == 1 && ix->dims[0] == nnz) || (ix->rank == 2 && ix->dims[0] == nnz && ix->dims[1] == rank))) {
        pfvm__fail(r->st, PFVM_ERR_INVALID, "sparse tensor: indices do not match values");
        goto done;
    }
    out = pfvm_model_tensor(r->m, v->dtype, rank, dims, NULL, r->st);
    if (!out)
        goto done;
    es = pfvm_dtype_size(v->dtype);
    for (i = 0; i < nnz; i++) {
        int64_t lin = 0;
        if (ix->rank == 1) {
            lin = ((int64_t *)ix->data)[i];
        } else {
            for (d = 0; d < rank; d++) {
                int64_t c = ((int64_t *)ix->data)[i * rank + d];
                if (c < 0 || c >= dims[d]) {
                    lin = -1;
                    break;
                }
                lin = lin * dims[d] + c;
            }
        }
        if (lin < 0 || lin >= numel) {
            pfvm__fail(r->st, PFVM_ERR_RANGE, "sparse tensor: index out of range");
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

static pfvm_code pfvm__onnx_type(pfvm__onnx_rd *r, pfvm__span sp, const char *vname, pfvm_type *out);

static const pfvm_sym *pfvm__onnx_dim(pfvm__onnx_rd *r, pfvm__span sp, const char *vname, int index)
{
    pb_istream_t s = pfvm__onnx_stream(sp);
    uint32_t tag;
    pb_wire_type_t wt;
    int k, has_value = 0;
    int64_t value = 0;
    pfvm__span param = {NULL, 0};
    char name[160];
    size_t i;
    while ((k = pfvm__onnx_next(&s, &tag, &wt)) > 0) {
        int ok;
        if (tag == onnx_TensorShapeProto_Dimension_dim_value_tag) {
            ok = pfvm__onnx_i64(&s, wt, &value);
            has_value = 1;
        } else if (tag == onnx_TensorShapeProto_Dimension_dim_param_tag) {
            ok = pfvm__onnx_span(&s, wt, &param);
        } else {
            ok = pb_skip_field(&s, wt);
        }
        if (!ok)
            return pfvm__onnx_bad(r, "TensorShapeProto.Dimension"), (const pfvm_sym *)NULL;
    }
    if (k < 0)
        return pfvm__onnx_bad(r, "TensorShapeProto.Dimension"), (const pfvm_sym *)NULL;
    if (has_value) {
        if (value < 0)
            return pfvm__fail(r->st, PFVM_ERR_INVALID, "value '%s': negative dimension %lld", vname,
                              (long long)value),
                   (const pfvm_sym *)NULL;
        return pfvm_sym_const(r->m->syms, value);
    }
    if (param.n && param.n < sizeof name) {
        /* a dim_param names a symbol; odd characters are kept out of names */
        for (i = 0; i < param.n; i++) {
            char c = (char)param.p[i];
            name[i] = ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_') ? c : '_';
        }
        name[param.n] = 0;
        if (name[0] >= '0' && name[0] <= '9')
            name[0] = '_';
        return pfvm_sym_var(r->m->syms, name, 1);
    }
    /* no value, no name: a fresh symbol named after the value */
    pfvm__snprintf(name, sizeof name, "%s_d%d", vname, index);
    for (i = 0; name[i]; i++)
        if (!((name[i] >= 'a' && name[i] <= 'z') || (name[i] >= 'A' && name[i] <= 'Z') ||
              (name[i] >= '0' && name[i] <= '9') || name[i] == '_'))
            name[i] = '_';
    if (name[0] >= '0' && name[0] <= '9')
        name[0] = '_';
    return pfvm_sym_fresh(r->m->syms, name);
}

static pfvm_code pfvm__onnx_tensor_type(pfvm__onnx_rd *r, pfvm__span sp, const char *vname, pfvm_type *out)
{
    pb_istream_t s = pfvm__onnx_stream(sp);
    uint32_t tag;
    pb_wire_type_t wt;
    int k, have_shape = 0;
    int64_t et = 0;
    pfvm__span shape = {NULL, 0};
    out->kind = PFVM_KIND_TENSOR;
    pfvm_shape_unknown(&out->shape);
    while ((k = pfvm__onnx_next(&s, &tag, &wt)) > 0) {
        int ok = tag == onnx_TypeProto_Tensor_elem_type_tag ? pfvm__onnx_i64(&s, wt, &et)
                 : tag == onnx_TypeProto_Tensor_shape_tag   ? (have_shape = 1, pfvm__onnx_span(&s, wt, &shape))
                                                            : pb_skip_field(&s, wt);
        if (!ok)
            return pfvm__onnx_bad(r, "TypeProto.Tensor");
    }
    if (k < 0)
        return pfvm__onnx_bad(r, "TypeProto.Tensor");
    if (et < 0 || et >= PFVM_DTYPE_COUNT)
        return pfvm__fail(r->st, PFVM_ERR_UNSUPPORTED, "value '%s': unknown element type %lld", vname, (long long)et);
    out->dtype = (pfvm_dtype)et;
    if (have_shape) {
        pb_istream_t ss = pfvm__onnx_stream(shape);
        int rank = 0;
        out->shape.rank = 0;
        while ((k = pfvm__onnx_next(&ss, &tag, &wt)) > 0) {
            pfvm__span d;
            if (tag != onnx_TensorShapeProto_dim_tag) {
                if (!pb_skip_field(&ss, wt))
                    return pfvm__onnx_bad(r, "TensorShapeProto");
                continue;
            }
            if (!pfvm__onnx_span(&ss, wt, &d))
                return pfvm__onnx_bad(r, "TensorShapeProto");
            if (rank >= PFVM_MAX_RANK)
                return pfvm__fail(r->st, PFVM_ERR_UNSUPPORTED, "value '%s' has rank above PFVM_MAX_RANK (%d)", vname,
                                  PFVM_MAX_RANK);
            out->shape.dims[rank] = pfvm__onnx_dim(r, d, vname, rank);
            if (!out->shape.dims[rank])
                return r->st ? r->st->code : PFVM_ERR_PARSE;
            out->shape.rank = ++rank;
        }
        if (k < 0)
            return pfvm__onnx_bad(r, "TensorShapeProto");
    }
    return PFVM_OK;
}

/* Sequence, optional: one nested TypeProto at field 1. */
static pfvm_code pfvm__onnx_wrapped_type(pfvm__onnx_rd *r, pfvm__span sp, const char *vname, pfvm_kind kind,
                                         pfvm_type *out)
{
    pb_istream_t s = pfvm__onnx_stream(sp);
    uint32_t tag;
    pb_wire_type_t wt;
    int k;
    out->kind = kind;
    pfvm_shape_unknown(&out->shape);
    while ((k = pfvm__onnx_next(&s, &tag, &wt)) > 0) {
        pfvm__span e;
        if (tag != 1) {
            if (!pb_skip_field(&s, wt))
                return pfvm__onnx_bad(r, "TypeProto element");
            continue;
        }
        if (!pfvm__onnx_span(&s, wt, &e))
            return pfvm__onnx_bad(r, "TypeProto element");
        out->elem = pfvm_model_type(r->m, r->st);
        if (!out->elem || pfvm__onnx_type(r, e, vname, out->elem))
            return r->st ? r->st->code : PFVM_ERR_PARSE;
        out->dtype = out->elem->dtype;
    }
    return k < 0 ? pfvm__onnx_bad(r, "TypeProto element") : PFVM_OK;
}

static pfvm_code pfvm__onnx_type(pfvm__onnx_rd *r, pfvm__span sp, const char *vname, pfvm_type *out)
{
    pb_istream_t s = pfvm__onnx_stream(sp);
    uint32_t tag;
    pb_wire_type_t wt;
    int k;
    pfvm_code rc = PFVM_OK;
    if (++r->depth > PFVM__ONNX_MAX_DEPTH)
        return pfvm__fail(r->st, PFVM_ERR_UNSUPPORTED, "value '%s': types nested too deeply", vname);
    memset(out, 0, sizeof *out);
    pfvm_shape_unknown(&out->shape);
    while (!rc && (k = pfvm__onnx_next(&s, &tag, &wt)) > 0) {
        pfvm__span x;
        if (tag == onnx_TypeProto_tensor_type_tag || tag == onnx_TypeProto_sparse_tensor_type_tag ||
            tag == onnx_TypeProto_sequence_type_tag || tag == onnx_TypeProto_optional_type_tag ||
            tag == onnx_TypeProto_map_type_tag) {
            if (!pfvm__onnx_span(&s, wt, &x))
                return pfvm__onnx_bad(r, "TypeProto");
        } else {
            if (!pb_skip_field(&s, wt))
                return pfvm__onnx_bad(r, "TypeProto");
            continue;
        }
        switch (tag) {
        case onnx_TypeProto_tensor_type_tag: rc = pfvm__onnx_tensor_type(r, x, vname, out); break;
        case onnx_TypeProto_sparse_tensor_type_tag:
            rc = pfvm__onnx_tensor_type(r, x, vname, out);
            out->kind = PFVM_KIND_SPARSE;
            break;
        case onnx_TypeProto_sequence_type_tag: rc = pfvm__onnx_wrapped_type(r, x, vname, PFVM_KIND_SEQUENCE, out); break;
        case onnx_TypeProto_optional_type_tag: rc = pfvm__onnx_wrapped_type(r, x, vname, PFVM_KIND_OPTIONAL, out); break;
        default: {
            /* map: key type, then the value type */
            pb_istream_t ms = pfvm__onnx_stream(x);
            int64_t key = 0;
            out->kind = PFVM_KIND_MAP;
            while (!rc && (k = pfvm__onnx_next(&ms, &tag, &wt)) > 0) {
                pfvm__span v;
                if (tag == onnx_TypeProto_Map_key_type_tag) {
                    if (!pfvm__onnx_i64(&ms, wt, &key))
                        return pfvm__onnx_bad(r, "TypeProto.Map");
                } else if (tag == onnx_TypeProto_Map_value_type_tag) {
                    if (!pfvm__onnx_span(&ms, wt, &v))
                        return pfvm__onnx_bad(r, "TypeProto.Map");
                    out->elem = pfvm_model_type(r->m, r->st);
                    rc = out->elem ? pfvm__onnx_type(r, v, vname, out->elem) : PFVM_ERR_NOMEM;
                } else if (!pb_skip_field(&ms, wt)) {
                    return pfvm__onnx_bad(r, "TypeProto.Map");
                }
            }
            out->key_dtype = key > 0 && key < PFVM_DTYPE_COUNT ? (pfvm_dtype)key : PFVM_UNDEFINED;
            break;
        }
        }
    }
    r->depth--;
    if (!rc && k < 0)
        return pfvm__onnx_bad(r, "TypeProto");
    return rc;
}

/* ValueInfoProto: name and type. */
static pfvm_code pfvm__onnx_value_info(pfvm__onnx_rd *r, pfvm__span sp, pfvm__span *name, pfvm__span *type,
                                       pfvm__span *doc)
{
    pb_istream_t s = pfvm__onnx_stream(sp);
    uint32_t tag;
    pb_wire_type_t wt;
    int k;
    name->n = type->n = doc->n = 0;
    name->p = type->p = doc->p = NULL;
    while ((k = pfvm__onnx_next(&s, &tag, &wt)) > 0) {
        int ok = tag == onnx_ValueInfoProto_name_tag         ? pfvm__onnx_span(&s, wt, name)
                 : tag == onnx_ValueInfoProto_type_tag       ? pfvm__onnx_span(&s, wt, type)
                 : tag == onnx_ValueInfoProto_doc_string_tag ? pfvm__onnx_span(&s, wt, doc)
                                                             : pb_skip_field(&s, wt);
        if (!ok)
            return pfvm__onnx_bad(r, "ValueInfoProto");
    }
    if (k < 0)
        return pfvm__onnx_bad(r, "ValueInfoProto");
    if (!name->n)
        return pfvm__fail(r->st, PFVM_ERR_INVALID, "a graph input, output or value_info has no name");
    return PFVM_OK;
}

/* Declares a value from a ValueInfoProto in g; returns it. */
static pfvm_value *pfvm__onnx_declare(pfvm__onnx_rd *r, pfvm_graph *g, pfvm__span sp, int local)
{
    pfvm__span name, type, doc;
    const char *nm;
    pfvm_value *v;
    if (pfvm__onnx_value_info(r, sp, &name, &type, &doc))
        return NULL;
    nm = pfvm__onnx_str(r, name);
    if (!nm)
        return NULL;
    v = local ? pfvm_graph_value(g, nm, r->st) : pfvm_graph_find(g, nm);
    if (!v) {
        if (!local)
            pfvm__fail(r->st, PFVM_ERR_INVALID, "graph '%s': '%s' is not defined", g->name, nm);
        return NULL;
    }
    if (type.p) {
        pfvm_type ty;
        if (pfvm__onnx_type(r, type, nm, &ty))
            return NULL;
        v->type = ty;
        v->has_type_info = 1;
    }
    if (doc.n)
        v->doc = pfvm__onnx_str(r, doc);
    return v;
}

/* ---- graphs, nodes, attributes ---------------------------------------------------- */

typedef struct pfvm__onnx_graph_parts {
    pfvm__span name, doc;
    pfvm__span *nodes, *inputs, *outputs, *inits, *infos, *sparse; /* stb_ds */
} pfvm__onnx_graph_parts;

static void pfvm__onnx_parts_free(pfvm__onnx_graph_parts *p)
{
    stbds_arrfree(p->nodes);
    stbds_arrfree(p->inputs);
    stbds_arrfree(p->outputs);
    stbds_arrfree(p->inits);
    stbds_arrfree(p->infos);
    stbds_arrfree(p->sparse);
}

static pfvm_code pfvm__onnx_graph(pfvm__onnx_rd *r, pfvm__span sp, pfvm_graph *parent, pfvm_node *owner,
                                  pfvm_graph **out);

static pfvm_code pfvm__onnx_attr(pfvm__onnx_rd *r, pfvm__span sp, pfvm_node *n, pfvm_attr *a)
{
    pb_istream_t s = pfvm__onnx_stream(sp);
    uint32_t tag;
    pb_wire_type_t wt;
    int k;
    int64_t type = 0;
    unsigned char *floats = NULL;
    int64_t *ints = NULL;
    pfvm__span *strs = NULL, *tens = NULL, *graphs = NULL, *tps = NULL;
    pfvm__span t = {NULL, 0}, g = {NULL, 0}, tp = {NULL, 0}, sparse = {NULL, 0}, x;
    pfvm_code rc = PFVM_OK;
    char lb[96];
    int i;
    memset(a, 0, sizeof *a);
    a->s = "";
    a->doc = "";
    while ((k = pfvm__onnx_next(&s, &tag, &wt)) > 0) {
        int ok = 1;
        switch (tag) {
        case onnx_AttributeProto_name_tag:
            ok = pfvm__onnx_span(&s, wt, &x) && (a->name = pfvm__onnx_str(r, x)) != NULL;
            break;
        case onnx_AttributeProto_f_tag:
            ok = wt == PB_WT_32BIT && pb_decode_fixed32(&s, &a->f);
            break;
        case onnx_AttributeProto_i_tag: ok = pfvm__onnx_i64(&s, wt, &a->i); break;
        case onnx_AttributeProto_s_tag:
            ok = pfvm__onnx_span(&s, wt, &x) && (a->s = pfvm__onnx_str(r, x)) != NULL;
            a->s_len = x.n;
            break;
        case onnx_AttributeProto_t_tag: ok = pfvm__onnx_span(&s, wt, &t); break;
        case onnx_AttributeProto_g_tag: ok = pfvm__onnx_span(&s, wt, &g); break;
        case onnx_AttributeProto_floats_tag: ok = pfvm__onnx_fixed(&s, wt, 4, &floats); break;
        case onnx_AttributeProto_ints_tag: ok = pfvm__onnx_ints(&s, wt, &ints); break;
        case onnx_AttributeProto_strings_tag:
            ok = pfvm__onnx_span(&s, wt, &x);
            if (ok)
                stbds_arrput(strs, x);
            break;
        case onnx_AttributeProto_tensors_tag:
            ok = pfvm__onnx_span(&s, wt, &x);
            if (ok)
                stbds_arrput(tens, x);
            break;
        case onnx_AttributeProto_graphs_tag:
            ok = pfvm__onnx_span(&s, wt, &x);
            if (ok)
                stbds_arrput(graphs, x);
            break;
        case onnx_AttributeProto_doc_string_tag:
            ok = pfvm__onnx_span(&s, wt, &x) && (a->doc = pfvm__onnx_str(r, x)) != NULL;
            break;
        case onnx_AttributeProto_tp_tag: ok = pfvm__onnx_span(&s, wt, &tp); break;
        case onnx_AttributeProto_type_protos_tag:
            ok = pfvm__onnx_span(&s, wt, &x);
            if (ok)
                stbds_arrput(tps, x);
            break;
        case onnx_AttributeProto_type_tag: ok = pfvm__onnx_i64(&s, wt, &type); break;
        case onnx_AttributeProto_ref_attr_name_tag:
            ok = pfvm__onnx_span(&s, wt, &x) && (a->ref_attr_name = pfvm__onnx_str(r, x)) != NULL;
            break;
        case onnx_AttributeProto_sparse_tensor_tag: ok = pfvm__onnx_span(&s, wt, &sparse); break;
        default: ok = pb_skip_field(&s, wt); break;
        }
        if (!ok) {
            rc = r->st && r->st->code == PFVM_ERR_NOMEM ? PFVM_ERR_NOMEM : pfvm__onnx_bad(r, "AttributeProto");
            goto done;
        }
    }
    if (k < 0 || !a->name) {
        rc = pfvm__fail(r->st, PFVM_ERR_PARSE, "node '%s' (%s): malformed attribute", pfvm__node_label(n, lb, sizeof lb),
                        n->op_type);
        goto done;
    }
    /* IR version < 2 models leave `type` out: it follows from the field set */
    if (!type)
        type = t.p ? PFVM_ATTR_TENSOR : g.p ? PFVM_ATTR_GRAPH : stbds_arrlen(floats) ? PFVM_ATTR_FLOATS
             : stbds_arrlen(ints) ? PFVM_ATTR_INTS : stbds_arrlen(strs) ? PFVM_ATTR_STRINGS
             : stbds_arrlen(tens) ? PFVM_ATTR_TENSORS : stbds_arrlen(graphs) ? PFVM_ATTR_GRAPHS
             : a->s_len ? PFVM_ATTR_STRING : a->f != 0 ? PFVM_ATTR_FLOAT : PFVM_ATTR_INT;
    if (type < 1 || type > PFVM_ATTR_TYPE_PROTOS) {
        rc = pfvm__fail(r->st, PFVM_ERR_INVALID, "node '%s' (%s): attribute '%s' has unknown type %lld",
                        pfvm__node_label(n, lb, sizeof lb), n->op_type, a->name, (long long)type);
        goto done;
    }
    a->type = (pfvm_attr_type)type;
    switch (a->type) {
    case PFVM_ATTR_TENSOR:
        if (!t.p || !(a->t = pfvm__onnx_tensor(r, t)))
            rc = t.p ? (r->st ? r->st->code : PFVM_ERR_PARSE)
                     : pfvm__fail(r->st, PFVM_ERR_INVALID, "node '%s' (%s): tensor attribute '%s' has no tensor",
                                  pfvm__node_label(n, lb, sizeof lb), n->op_type, a->name);
        break;
    case PFVM_ATTR_SPARSE_TENSOR:
        if (!sparse.p || !(a->t = pfvm__onnx_sparse(r, sparse, NULL)))
            rc = r->st && r->st->code ? r->st->code : pfvm__onnx_bad(r, "sparse tensor attribute");
        break;
    case PFVM_ATTR_GRAPH:
        if (!g.p)
            rc = pfvm__fail(r->st, PFVM_ERR_INVALID, "node '%s' (%s): graph attribute '%s' has no graph",
                            pfvm__node_label(n, lb, sizeof lb), n->op_type, a->name);
        else
            rc = pfvm__onnx_graph(r, g, n->graph, n, &a->g);
        break;
    case PFVM_ATTR_TYPE_PROTO:
        a->tp = pfvm_model_type(r->m, r->st);
        rc = !a->tp ? PFVM_ERR_NOMEM : tp.p ? pfvm__onnx_type(r, tp, a->name, a->tp) : PFVM_OK;
        break;
    case PFVM_ATTR_FLOATS:
        a->n = (int)(stbds_arrlen(floats) / 4);
        a->floats = (float *)pfvm_model_alloc(r->m, sizeof(float) * (size_t)(a->n + 1));
        if (!a->floats)
            rc = pfvm__fail(r->st, PFVM_ERR_NOMEM, "out of memory");
        else if (a->n)
            memcpy(a->floats, floats, sizeof(float) * (size_t)a->n);
        break;
    case PFVM_ATTR_INTS:
        a->n = (int)stbds_arrlen(ints);
        a->ints = (int64_t *)pfvm_model_alloc(r->m, sizeof(int64_t) * (size_t)(a->n + 1));
        if (!a->ints)
            rc = pfvm__fail(r->st, PFVM_ERR_NOMEM, "out of memory");
        else if (a->n)
            memcpy(a->ints, ints, sizeof(int64_t) * (size_t)a->n);
        break;
    case PFVM_ATTR_STRINGS:
        a->n = (int)stbds_arrlen(strs);
        a->strings = (const char **)pfvm_model_alloc(r->m, sizeof(char *) * (size_t)(a->n + 1));
        a->strings_len = (size_t *)pfvm_model_alloc(r->m, sizeof(size_t) * (size_t)(a->n + 1));
        if (!a->strings || !a->strings_len)
            rc = pfvm__fail(r->st, PFVM_ERR_NOMEM, "out of memory");
        for (i = 0; !rc && i < a->n; i++) {
            a->strings[i] = pfvm__onnx_str(r, strs[i]);
            a->strings_len[i] = strs[i].n;
            if (!a->strings[i])
                rc = PFVM_ERR_NOMEM;
        }
        break;
    case PFVM_ATTR_TENSORS:
        a->n = (int)stbds_arrlen(tens);
        a->tensors = (pfvm_tensor **)pfvm_model_alloc(r->m, sizeof(pfvm_tensor *) * (size_t)(a->n + 1));
        if (!a->tensors)
            rc = pfvm__fail(r->st, PFVM_ERR_NOMEM, "out of memory");
        for (i = 0; !rc && i < a->n; i++)
            if (!(a->tensors[i] = pfvm__onnx_tensor(r, tens[i])))
                rc = r->st ? r->st->code : PFVM_ERR_PARSE;
        break;
    case PFVM_ATTR_GRAPHS:
        a->n = (int)stbds_arrlen(graphs);
        a->graphs = (pfvm_graph **)pfvm_model_alloc(r->m, sizeof(pfvm_graph *) * (size_t)(a->n + 1));
        if (!a->graphs)
            rc = pfvm__fail(r->st, PFVM_ERR_NOMEM, "out of memory");
        for (i = 0; !rc && i < a->n; i++)
            rc = pfvm__onnx_graph(r, graphs[i], n->graph, n, &a->graphs[i]);
        break;
    case PFVM_ATTR_TYPE_PROTOS:
        a->n = (int)stbds_arrlen(tps);
        a->tps = (pfvm_type **)pfvm_model_alloc(r->m, sizeof(pfvm_type *) * (size_t)(a->n + 1));
        if (!a->tps)
            rc = pfvm__fail(r->st, PFVM_ERR_NOMEM, "out of memory");
        for (i = 0; !rc && i < a->n; i++) {
            a->tps[i] = pfvm_model_type(r->m, r->st);
            rc = a->tps[i] ? pfvm__onnx_type(r, tps[i], a->name, a->tps[i]) : PFVM_ERR_NOMEM;
        }
        break;
    case PFVM_ATTR_SPARSE_TENSORS:
        rc = pfvm__fail(r->st, PFVM_ERR_UNSUPPORTED, "node '%s' (%s): sparse tensor list attributes are not supported",
                        pfvm__node_label(n, lb, sizeof lb), n->op_type);
        break;
    default:
        break;
    }
done:
    stbds_arrfree(floats);
    stbds_arrfree(ints);
    stbds_arrfree(strs);
    stbds_arrfree(tens);
    stbds_arrfree(graphs);
    stbds_arrfree(tps);
    return rc;
}

/* The parts of a NodeProto. */
typedef struct pfvm__onnx_node_parts {
    pfvm__span name, op, domain, doc;
    pfvm__span *ins, *outs, *attrs; /* stb_ds */
} pfvm__onnx_node_parts;

static pfvm_code pfvm__onnx_node_parts_read(pfvm__onnx_rd *r, pfvm__span sp, pfvm__onnx_node_parts *p)
{
    pb_istream_t s = pfvm__onnx_stream(sp);
    uint32_t tag;
    pb_wire_type_t wt;
    int k;
    memset(p, 0, sizeof *p);
    while ((k = pfvm__onnx_next(&s, &tag, &wt)) > 0) {
        pfvm__span x;
        int ok = 1;
        switch (tag) {
        case onnx_NodeProto_input_tag:
            if ((ok = pfvm__onnx_span(&s, wt, &x)) != 0)
                stbds_arrput(p->ins, x);
            break;
        case onnx_NodeProto_output_tag:
            if ((ok = pfvm__onnx_span(&s, wt, &x)) != 0)
                stbds_arrput(p->outs, x);
            break;
        case onnx_NodeProto_attribute_tag:
            if ((ok = pfvm__onnx_span(&s, wt, &x)) != 0)
                stbds_arrput(p->attrs, x);
            break;
        case onnx_NodeProto_name_tag: ok = pfvm__onnx_span(&s, wt, &p->name); break;
        case onnx_NodeProto_op_type_tag: ok = pfvm__onnx_span(&s, wt, &p->op); break;
        case onnx_NodeProto_domain_tag: ok = pfvm__onnx_span(&s, wt, &p->domain); break;
        case onnx_NodeProto_doc_string_tag: ok = pfvm__onnx_span(&s, wt, &p->doc); break;
        default: ok = pb_skip_field(&s, wt); break;
        }
        if (!ok)
            return pfvm__onnx_bad(r, "NodeProto");
    }
    if (k < 0)
        return pfvm__onnx_bad(r, "NodeProto");
    if (!p->op.n)
        return pfvm__fail(r->st, PFVM_ERR_INVALID, "a node has no op_type");
    return PFVM_OK;
}

static void pfvm__onnx_node_parts_free(pfvm__onnx_node_parts *p)
{
    stbds_arrfree(p->ins);
    stbds_arrfree(p->outs);
    stbds_arrfree(p->attrs);
}

/* Creates the values a node defines, before any node is built, so that
 * nodes (and subgraphs) may refer to values defined later in the list. */
static pfvm_code pfvm__onnx_predeclare(pfvm__onnx_rd *r, pfvm_graph *g, pfvm__span sp)
{
    pfvm__onnx_node_parts p;
    int i;
    pfvm_code rc = pfvm__onnx_node_parts_read(r, sp, &p);
    for (i = 0; !rc && i < (int)stbds_arrlen(p.outs); i++) {
        const char *nm;
        if (!p.outs[i].n)
            continue;
        nm = pfvm__onnx_str(r, p.outs[i]);
        if (!nm || !pfvm_graph_value(g, nm, r->st))
            rc = r->st ? r->st->code : PFVM_ERR_NOMEM;
    }
    pfvm__onnx_node_parts_free(&p);
    return rc;
}

static pfvm_code pfvm__onnx_node(pfvm__onnx_rd *r, pfvm_graph *g, pfvm__span sp)
{
    pfvm__onnx_node_parts p;
    pfvm_value **ins = NULL, **outs = NULL;
    pfvm_node *n = NULL;
    const char *name = "", *op, *domain = "";
    int i;
    pfvm_code rc = pfvm__onnx_node_parts_read(r, sp, &p);
    if (rc)
        goto done;
    op = pfvm__onnx_str(r, p.op);
    if (p.name.n)
        name = pfvm__onnx_str(r, p.name);
    if (p.domain.n)
        domain = pfvm__onnx_str(r, p.domain);
    if (!op || !name || !domain) {
        rc = PFVM_ERR_NOMEM;
        goto done;
    }
    for (i = 0; i < (int)stbds_arrlen(p.ins); i++) {
        pfvm_value *v = NULL;
        if (p.ins[i].n) {
            const char *nm = pfvm__onnx_str(r, p.ins[i]);
            if (!nm) {
                rc = PFVM_ERR_NOMEM;
                goto done;
            }
            v = pfvm_graph_find(g, nm);
            if (!v) {
                rc = pfvm__fail(r->st, PFVM_ERR_INVALID, "node '%s' (%s): input '%s' is not defined", name[0] ? name : op,
                                op, nm);
                goto done;
            }
        }
        stbds_arrput(ins, v);
    }
    for (i = 0; i < (int)stbds_arrlen(p.outs); i++) {
        pfvm_value *v = NULL;
        if (p.outs[i].n) {
            const char *nm = pfvm__onnx_str(r, p.outs[i]);
            v = nm ? pfvm_graph_find_local(g, nm) : NULL;
            if (!v) {
                rc = pfvm__fail(r->st, PFVM_ERR_NOMEM, "out of memory");
                goto done;
            }
        }
        stbds_arrput(outs, v);
    }
    n = pfvm_graph_add_node(g, op, domain, name, ins, (int)stbds_arrlen(ins), outs, (int)stbds_arrlen(outs), r->st);
    if (!n) {
        rc = r->st ? r->st->code : PFVM_ERR_INVALID;
        goto done;
    }
    if (p.doc.n)
        n->doc = pfvm__onnx_str(r, p.doc);
    if (stbds_arrlen(p.attrs)) {
        n->attrs = (pfvm_attr *)pfvm_model_alloc(r->m, sizeof(pfvm_attr) * stbds_arrlen(p.attrs));
        if (!n->attrs) {
            rc = pfvm__fail(r->st, PFVM_ERR_NOMEM, "out of memory");
            goto done;
        }
        for (i = 0; i < (int)stbds_arrlen(p.attrs); i++) {
            rc = pfvm__onnx_attr(r, p.attrs[i], n, &n->attrs[i]);
            if (rc)
                goto done;
            n->n_attrs = i + 1;
        }
    }
done:
    stbds_arrfree(ins);
    stbds_arrfree(outs);
    pfvm__onnx_node_parts_free(&p);
    return rc;
}

static pfvm_code pfvm__onnx_graph_parts_read(pfvm__onnx_rd *r, pfvm__span sp, pfvm__onnx_graph_parts *p)
{
    pb_istream_t s = pfvm__onnx_stream(sp);
    uint32_t tag;
    pb_wire_type_t wt;
    int k;
    memset(p, 0, sizeof *p);
    while ((k = pfvm__onnx_next(&s, &tag, &wt)) > 0) {
        pfvm__span x;
        pfvm__span **list = NULL;
        switch (tag) {
        case onnx_GraphProto_node_tag: list = &p->nodes; break;
        case onnx_GraphProto_input_tag: list = &p->inputs; break;
        case onnx_GraphProto_output_tag: list = &p->outputs; break;
        case onnx_GraphProto_initializer_tag: list = &p->inits; break;
        case onnx_GraphProto_value_info_tag: list = &p->infos; break;
        case onnx_GraphProto_sparse_initializer_tag: list = &p->sparse; break;
        case onnx_GraphProto_name_tag:
            if (!pfvm__onnx_span(&s, wt, &p->name))
                return pfvm__onnx_bad(r, "GraphProto name");
            continue;
        case onnx_GraphProto_doc_string_tag:
            if (!pfvm__onnx_span(&s, wt, &p->doc))
                return pfvm__onnx_bad(r, "GraphProto doc_string");
            continue;
        default:
            if (!pb_skip_field(&s, wt))
                return pfvm__onnx_bad(r, "GraphProto field");
            continue;
        }
        if (!pfvm__onnx_span(&s, wt, &x))
            return pfvm__onnx_bad(r, "GraphProto field");
        stbds_arrput(*list, x);
    }
    return k < 0 ? pfvm__onnx_bad(r, "GraphProto tag") : PFVM_OK;
}

/* Initializer spans -> values with tensors in g. */
static pfvm_code pfvm__onnx_inits(pfvm__onnx_rd *r, pfvm_graph *g, const pfvm__onnx_graph_parts *p)
{
    int i;
    for (i = 0; i < (int)stbds_arrlen(p->inits); i++) {
        pfvm_tensor *t = pfvm__onnx_tensor(r, p->inits[i]);
        pfvm_value *v;
        if (!t)
            return r->st ? r->st->code : PFVM_ERR_PARSE;
        if (!t->name || !t->name[0])
            return pfvm__fail(r->st, PFVM_ERR_INVALID, "graph '%s': an initializer has no name", g->name);
        v = pfvm_graph_value(g, t->name, r->st);
        if (!v || pfvm_graph_add_init(g, v, t, r->st))
            return r->st ? r->st->code : PFVM_ERR_INVALID;
    }
    for (i = 0; i < (int)stbds_arrlen(p->sparse); i++) {
        const char *name = NULL;
        pfvm_tensor *t = pfvm__onnx_sparse(r, p->sparse[i], &name);
        pfvm_value *v;
        if (!t)
            return r->st ? r->st->code : PFVM_ERR_PARSE;
        if (!name || !name[0])
            return pfvm__fail(r->st, PFVM_ERR_INVALID, "graph '%s': a sparse initializer has no name", g->name);
        v = pfvm_graph_value(g, name, r->st);
        if (!v || pfvm_graph_add_init(g, v, t, r->st))
            return r->st ? r->st->code : PFVM_ERR_INVALID;
    }
    return PFVM_OK;
}

static pfvm_code pfvm__onnx_graph(pfvm__onnx_rd *r, pfvm__span sp, pfvm_graph *parent, pfvm_node *owner,
                                  pfvm_graph **out)
{
    pfvm__onnx_graph_parts p;
    pfvm_graph *g;
    pfvm_code rc;
    int i;
    if (++r->depth > PFVM__ONNX_MAX_DEPTH)
        return pfvm__fail(r->st, PFVM_ERR_UNSUPPORTED, "subgraphs nested more than %d deep", PFVM__ONNX_MAX_DEPTH);
    rc = pfvm__onnx_graph_parts_read(r, sp, &p);
    if (rc)
        goto done;
    g = pfvm_graph_new(r->m, parent, NULL, r->st);
    if (!g) {
        rc = PFVM_ERR_NOMEM;
        goto done;
    }
    g->owner = owner;
    if (p.name.n && !(g->name = pfvm__onnx_str(r, p.name))) {
        rc = PFVM_ERR_NOMEM;
        goto done;
    }
    if (p.doc.n)
        g->doc = pfvm__onnx_str(r, p.doc);
    *out = g;
    /* values this graph defines, in an order that makes every name visible
     * before any node (or subgraph) refers to it */
    for (i = 0; !rc && i < (int)stbds_arrlen(p.inputs); i++) {
        pfvm_value *v = pfvm__onnx_declare(r, g, p.inputs[i], 1);
        rc = v ? pfvm_graph_add_input(g, v, r->st) : (r->st ? r->st->code : PFVM_ERR_PARSE);
    }
    if (!rc)
        rc = pfvm__onnx_inits(r, g, &p);
    for (i = 0; !rc && i < (int)stbds_arrlen(p.nodes); i++)
        rc = pfvm__onnx_predeclare(r, g, p.nodes[i]);
    for (i = 0; !rc && i < (int)stbds_arrlen(p.nodes); i++)
        rc = pfvm__onnx_node(r, g, p.nodes[i]);
    for (i = 0; !rc && i < (int)stbds_arrlen(p.outputs); i++) {
        pfvm_value *v = pfvm__onnx_declare(r, g, p.outputs[i], 0);
        rc = v ? pfvm_graph_add_output(g, v, r->st) : (r->st ? r->st->code : PFVM_ERR_PARSE);
    }
    for (i = 0; !rc && i < (int)stbds_arrlen(p.infos); i++) {
        pfvm__span name, type, doc;
        pfvm_value *v;
        rc = pfvm__onnx_value_info(r, p.infos[i], &name, &type, &doc);
        if (rc)
            break;
        {
            const char *nm = pfvm__onnx_str(r, name);
            v = nm ? pfvm_graph_find_local(g, nm) : NULL;
        }
        if (!v || !type.p)
            continue; /* value_info about a name nothing defines: ignored */
        rc = pfvm__onnx_type(r, type, v->name, &v->type);
        v->has_type_info = 1;
        v->has_value_info = 1;
        stbds_arrput(g->value_infos, v);
    }
    for (i = 0; !rc && i < (int)stbds_arrlen(g->values); i++) {
        pfvm_value *v = g->values[i];
        if (!v->producer && !v->is_input && !v->init)
            rc = pfvm__fail(r->st, PFVM_ERR_INVALID, "graph '%s': '%s' is never defined", g->name, v->name);
    }
    if (!rc)
        rc = pfvm_graph_toposort(g, r->st);
done:
    pfvm__onnx_parts_free(&p);
    r->depth--;
    return rc;
}

/* ---- functions and the model ------------------------------------------------------ */

static pfvm_code pfvm__onnx_opset(pfvm__onnx_rd *r, pfvm__span sp, pfvm_opset_import *out)
{
    pb_istream_t s = pfvm__onnx_stream(sp);
    uint32_t tag;
    pb_wire_type_t wt;
    int k;
    pfvm__span d = {NULL, 0};
    out->version = 0;
    while ((k = pfvm__onnx_next(&s, &tag, &wt)) > 0) {
        int ok = tag == onnx_OperatorSetIdProto_domain_tag    ? pfvm__onnx_span(&s, wt, &d)
                 : tag == onnx_OperatorSetIdProto_version_tag ? pfvm__onnx_i64(&s, wt, &out->version)
                                                              : pb_skip_field(&s, wt);
        if (!ok)
            return pfvm__onnx_bad(r, "OperatorSetIdProto");
    }
    if (k < 0)
        return pfvm__onnx_bad(r, "OperatorSetIdProto");
    out->domain = d.n ? pfvm__onnx_str(r, d) : "";
    return out->domain ? PFVM_OK : PFVM_ERR_NOMEM;
}

static pfvm_code pfvm__onnx_function(pfvm__onnx_rd *r, pfvm__span sp)
{
    pb_istream_t s = pfvm__onnx_stream(sp);
    uint32_t tag;
    pb_wire_type_t wt;
    int k, i;
    pfvm__span name = {NULL, 0}, domain = {NULL, 0}, doc = {NULL, 0}, x;
    pfvm__span *ins = NULL, *outs = NULL, *attrs = NULL, *attr_protos = NULL, *nodes = NULL, *opsets = NULL;
    pfvm_function *f = NULL;
    pfvm_graph *g = NULL;
    pfvm_code rc = PFVM_OK;
    while ((k = pfvm__onnx_next(&s, &tag, &wt)) > 0) {
        pfvm__span **list = NULL;
        switch (tag) {
        case onnx_FunctionProto_name_tag: list = NULL; if (!pfvm__onnx_span(&s, wt, &name)) k = -1; break;
        case onnx_FunctionProto_domain_tag: if (!pfvm__onnx_span(&s, wt, &domain)) k = -1; break;
        case onnx_FunctionProto_doc_string_tag: if (!pfvm__onnx_span(&s, wt, &doc)) k = -1; break;
        case onnx_FunctionProto_input_tag: list = &ins; break;
        case onnx_FunctionProto_output_tag: list = &outs; break;
        case onnx_FunctionProto_attribute_tag: list = &attrs; break;
        case onnx_FunctionProto_node_tag: list = &nodes; break;
        case onnx_FunctionProto_opset_import_tag: list = &opsets; break;
        case 11: /* attribute_proto (newer onnx.proto) */ list = &attr_protos; break;
        default: if (!pb_skip_field(&s, wt)) k = -1; break;
        }
        if (k < 0)
            break;
        if (list) {
            if (!pfvm__onnx_span(&s, wt, &x)) {
                k = -1;
                break;
            }
            stbds_arrput(*list, x);
        }
    }
    if (k < 0 || !name.n) {
        rc = pfvm__onnx_bad(r, "FunctionProto");
        goto done;
    }
    f = (pfvm_function *)pfvm_model_alloc(r->m, sizeof *f);
    g = f ? pfvm_graph_new(r->m, NULL, NULL, r->st) : NULL;
    if (!f || !g) {
        rc = pfvm__fail(r->st, PFVM_ERR_NOMEM, "out of memory");
        goto done;
    }
    f->name = pfvm__onnx_str(r, name);
    f->domain = domain.n ? pfvm__onnx_str(r, domain) : "";
    f->doc = doc.n ? pfvm__onnx_str(r, doc) : "";
    f->body = g;
    g->name = f->name;
    stbds_arrput(r->m->functions, f);
    for (i = 0; !rc && i < (int)stbds_arrlen(ins); i++) {
        const char *nm = pfvm__onnx_str(r, ins[i]);
        pfvm_value *v = nm ? pfvm_graph_value(g, nm, r->st) : NULL;
        rc = v ? pfvm_graph_add_input(g, v, r->st) : PFVM_ERR_NOMEM;
    }
    for (i = 0; !rc && i < (int)stbds_arrlen(nodes); i++)
        rc = pfvm__onnx_predeclare(r, g, nodes[i]);
    for (i = 0; !rc && i < (int)stbds_arrlen(nodes); i++)
        rc = pfvm__onnx_node(r, g, nodes[i]);
    for (i = 0; !rc && i < (int)stbds_arrlen(outs); i++) {
        const char *nm = pfvm__onnx_str(r, outs[i]);
        pfvm_value *v = nm ? pfvm_graph_find_local(g, nm) : NULL;
        rc = v ? pfvm_graph_add_output(g, v, r->st)
               : pfvm__fail(r->st, PFVM_ERR_INVALID, "function '%s': output '%s' is not defined", f->name, nm ? nm : "");
    }
    if (!rc && stbds_arrlen(attrs)) {
        f->n_attr_names = (int)stbds_arrlen(attrs);
        f->attr_names = (const char **)pfvm_model_alloc(r->m, sizeof(char *) * stbds_arrlen(attrs));
        for (i = 0; f->attr_names && i < f->n_attr_names; i++)
            f->attr_names[i] = pfvm__onnx_str(r, attrs[i]);
    }
    if (!rc && stbds_arrlen(attr_protos)) {
        /* attribute defaults are parsed against a scratch node of the body */
        f->attr_defaults = (pfvm_attr *)pfvm_model_alloc(r->m, sizeof(pfvm_attr) * stbds_arrlen(attr_protos));
        if (!f->attr_defaults)
            rc = PFVM_ERR_NOMEM;
        for (i = 0; !rc && i < (int)stbds_arrlen(attr_protos); i++) {
            pfvm_node scratch;
            memset(&scratch, 0, sizeof scratch);
            scratch.op_type = f->name;
            scratch.name = f->name;
            scratch.graph = g;
            rc = pfvm__onnx_attr(r, attr_protos[i], &scratch, &f->attr_defaults[i]);
            f->n_attr_defaults = i + 1;
        }
    }
    if (!rc && stbds_arrlen(opsets)) {
        f->n_opsets = (int)stbds_arrlen(opsets);
        f->opsets = (pfvm_opset_import *)pfvm_model_alloc(r->m, sizeof(pfvm_opset_import) * stbds_arrlen(opsets));
        for (i = 0; !rc && f->opsets && i < f->n_opsets; i++)
            rc = pfvm__onnx_opset(r, opsets[i], &f->opsets[i]);
    }
    if (!rc)
        rc = pfvm_graph_toposort(g, r->st);
done:
    stbds_arrfree(ins);
    stbds_arrfree(outs);
    stbds_arrfree(attrs);
    stbds_arrfree(attr_protos);
    stbds_arrfree(nodes);
    stbds_arrfree(opsets);
    return rc;
}

static pfvm_code pfvm__onnx_model(pfvm__onnx_rd *r, pfvm__span sp)
{
    pb_istream_t s = pfvm__onnx_stream(sp);
    uint32_t tag;
    pb_wire_type_t wt;
    int k, i;
    pfvm__span graph = {NULL, 0}, x;
    pfvm__span *functions = NULL;
    pfvm_model *m = r->m;
    pfvm_code rc = PFVM_OK;
    int has_graph = 0;
    while (!rc && (k = pfvm__onnx_next(&s, &tag, &wt)) > 0) {
        int ok = 1;
        switch (tag) {
        case onnx_ModelProto_ir_version_tag: ok = pfvm__onnx_i64(&s, wt, &m->ir_version); break;
        case onnx_ModelProto_producer_name_tag:
            ok = pfvm__onnx_span(&s, wt, &x) && (m->producer_name = pfvm__onnx_str(r, x)) != NULL;
            break;
        case onnx_ModelProto_producer_version_tag:
            ok = pfvm__onnx_span(&s, wt, &x) && (m->producer_version = pfvm__onnx_str(r, x)) != NULL;
            break;
        case onnx_ModelProto_domain_tag: ok = pfvm__onnx_span(&s, wt, &x) && (m->domain = pfvm__onnx_str(r, x)) != NULL; break;
        case onnx_ModelProto_model_version_tag: ok = pfvm__onnx_i64(&s, wt, &m->model_version); break;
        case onnx_ModelProto_doc_string_tag: ok = pfvm__onnx_span(&s, wt, &x) && (m->doc = pfvm__onnx_str(r, x)) != NULL; break;
        case onnx_ModelProto_graph_tag:
            ok = pfvm__onnx_span(&s, wt, &graph);
            has_graph = 1;
            break;
        case onnx_ModelProto_opset_import_tag: {
            pfvm_opset_import imp;
            ok = pfvm__onnx_span(&s, wt, &x);
            if (ok && !(rc = pfvm__onnx_opset(r, x, &imp)))
                stbds_arrput(m->opsets, imp);
            break;
        }
        case onnx_ModelProto_metadata_props_tag: {
            pb_istream_t ms;
            pfvm__span key = {NULL, 0}, val = {NULL, 0};
            pfvm_string_pair kv;
            uint32_t t2;
            pb_wire_type_t w2;
            int k2;
            ok = pfvm__onnx_span(&s, wt, &x);
            if (!ok)
                break;
            ms = pfvm__onnx_stream(x);
            while ((k2 = pfvm__onnx_next(&ms, &t2, &w2)) > 0) {
                ok = t2 == onnx_StringStringEntryProto_key_tag     ? pfvm__onnx_span(&ms, w2, &key)
                     : t2 == onnx_StringStringEntryProto_value_tag ? pfvm__onnx_span(&ms, w2, &val)
                                                                   : pb_skip_field(&ms, w2);
                if (!ok)
                    break;
            }
            if (k2 < 0)
                ok = 0;
            kv.key = pfvm__onnx_str(r, key);
            kv.value = pfvm__onnx_str(r, val);
            if (ok && kv.key && kv.value)
                stbds_arrput(m->metadata, kv);
            break;
        }
        case onnx_ModelProto_functions_tag:
            ok = pfvm__onnx_span(&s, wt, &x);
            if (ok)
                stbds_arrput(functions, x);
            break;
        default: ok = pb_skip_field(&s, wt); break;
        }
        if (!ok && !rc)
            rc = r->st && r->st->code == PFVM_ERR_NOMEM ? PFVM_ERR_NOMEM : pfvm__onnx_bad(r, "ModelProto field");
    }
    if (!rc && k < 0)
        rc = pfvm__onnx_bad(r, "ModelProto tag");
    if (!rc && !has_graph)
        rc = pfvm__fail(r->st, PFVM_ERR_INVALID, "the model has no graph");
    if (!rc) {
        pfvm_graph *g = NULL;
        rc = pfvm__onnx_graph(r, graph, NULL, NULL, &g);
    }
    for (i = 0; !rc && i < (int)stbds_arrlen(functions); i++)
        rc = pfvm__onnx_function(r, functions[i]);
    stbds_arrfree(functions);
    return rc;
}

pfvm_model *pfvm_onnx_load_memory(const void *bytes, size_t size, unsigned flags, pfvm_status *st)
{
    pfvm__onnx_rd r;
    pfvm__span sp;
    pfvm_model *m = pfvm_model_new(st);
    if (!m)
        return NULL;
    memset(&r, 0, sizeof r);
    r.m = m;
    r.st = st;
    r.flags = flags;
    sp.p = (const unsigned char *)bytes;
    sp.n = size;
    if (flags & PFVM_LOAD_COPY) {
        m->owned_bytes = pfvm__malloc(size ? size : 1);
        if (!m->owned_bytes) {
            pfvm_model_free(m);
            pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory copying %zu bytes", size);
            return NULL;
        }
        if (size)
            memcpy(m->owned_bytes, bytes, size);
        sp.p = (const unsigned char *)m->owned_bytes;
        r.flags &= ~PFVM_LOAD_COPY; /* the model owns the bytes now: view them */
    }
    if (!size || pfvm__onnx_model(&r, sp)) {
        if (!size)
            pfvm__fail(st, PFVM_ERR_PARSE, "empty model");
        pfvm_model_free(m);
        return NULL;
    }
    pfvm__ok(st);
    return m;
}

/* ---- value files (TensorProto, SequenceProto, OptionalProto) ---------------------- */

static pfvm_tensor *pfvm__onnx_value(pfvm__onnx_rd *r, pfvm__span sp, pfvm_kind kind);

static pfvm_tensor *pfvm__onnx_container(pfvm__onnx_rd *r, pfvm__span sp, pfvm_kind kind)
{
    pb_istream_t s = pfvm__onnx_stream(sp);
    uint32_t tag;
    pb_wire_type_t wt;
    int k;
    int64_t et = 0;
    pfvm_tensor *out;
    if (++r->depth > PFVM__ONNX_MAX_DEPTH) {
        pfvm__fail(r->st, PFVM_ERR_UNSUPPORTED, "values nested too deeply");
        return NULL;
    }
    out = (pfvm_tensor *)pfvm__calloc(1, sizeof *out);
    if (!out) {
        pfvm__fail(r->st, PFVM_ERR_NOMEM, "out of memory");
        return NULL;
    }
    out->kind = kind;
    out->rank = -1;
    while ((k = pfvm__onnx_next(&s, &tag, &wt)) > 0) {
        pfvm__span x;
        pfvm_kind ek = PFVM_KIND_UNKNOWN;
        /* the same tags in SequenceProto and OptionalProto */
        if (tag == onnx_SequenceProto_elem_type_tag) {
            if (!pfvm__onnx_i64(&s, wt, &et))
                break;
            continue;
        }
        if (tag == onnx_SequenceProto_tensor_values_tag)
            ek = PFVM_KIND_TENSOR;
        else if (tag == onnx_SequenceProto_sequence_values_tag)
            ek = PFVM_KIND_SEQUENCE;
        else if (tag == onnx_SequenceProto_optional_values_tag)
            ek = PFVM_KIND_OPTIONAL;
        else if (tag == onnx_SequenceProto_sparse_tensor_values_tag || tag == onnx_SequenceProto_map_values_tag) {
            pfvm__fail(r->st, PFVM_ERR_UNSUPPORTED, "sparse tensors and maps in values are not supported");
            pfvm_tensor_free(out);
            return NULL;
        }
        if (ek == PFVM_KIND_UNKNOWN) {
            if (!pb_skip_field(&s, wt))
                break;
            continue;
        }
        if (!pfvm__onnx_span(&s, wt, &x))
            break;
        {
            pfvm_tensor *e = pfvm__onnx_value(r, x, ek);
            if (!e) {
                pfvm_tensor_free(out);
                return NULL;
            }
            stbds_arrput(out->elems, e);
        }
    }
    r->depth--;
    if (k != 0) {
        pfvm_tensor_free(out);
        pfvm__onnx_bad(r, kind == PFVM_KIND_SEQUENCE ? "SequenceProto" : "OptionalProto");
        return NULL;
    }
    if (kind == PFVM_KIND_OPTIONAL)
        out->has_value = stbds_arrlen(out->elems) > 0;
    if (stbds_arrlen(out->elems))
        out->elem_dtype = out->elems[0]->kind == PFVM_KIND_TENSOR ? out->elems[0]->dtype : out->elems[0]->elem_dtype;
    out->dtype = out->elem_dtype;
    (void)et;
    return out;
}

static pfvm_tensor *pfvm__onnx_value(pfvm__onnx_rd *r, pfvm__span sp, pfvm_kind kind)
{
    if (kind == PFVM_KIND_SEQUENCE || kind == PFVM_KIND_OPTIONAL)
        return pfvm__onnx_container(r, sp, kind);
    return pfvm__onnx_tensor(r, sp);
}

pfvm_tensor *pfvm_onnx_read_value(const void *bytes, size_t size, pfvm_kind hint, pfvm_status *st)
{
    pfvm__onnx_rd r;
    pfvm__span sp;
    memset(&r, 0, sizeof r);
    r.st = st;
    sp.p = (const unsigned char *)bytes;
    sp.n = size;
    return pfvm__onnx_value(&r, sp, hint);
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

pfvm_model *pfvm_onnx_load_file(const char *path, unsigned flags, pfvm_status *st)
{
    void *bytes;
    size_t size;
    pfvm_model *m;
    pfvm__onnx_rd r;
    pfvm__span sp;
    const char *slash;
    (void)flags;
    if (pfvm_onnx_read_file(path, &bytes, &size, st))
        return NULL;
    m = pfvm_model_new(st);
    if (!m) {
        pfvm__free(bytes);
        return NULL;
    }
    m->owned_bytes = bytes; /* weights are viewed in place */
    slash = strrchr(path, '/');
    m->dir = slash ? pfvm_model_strndup(m, path, (size_t)(slash - path)) : ".";
    memset(&r, 0, sizeof r);
    r.m = m;
    r.st = st;
    sp.p = (const unsigned char *)bytes;
    sp.n = size;
    if (!m->dir || !size || pfvm__onnx_model(&r, sp)) {
        if (!size)
            pfvm__fail(st, PFVM_ERR_PARSE, "'%s' is empty", path);
        else if (st && st->code)
            pfvm__prefix(st, "%s", path);
        pfvm_model_free(m);
        return NULL;
    }
    pfvm__ok(st);
    return m;
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
    return t;
}
#endif
