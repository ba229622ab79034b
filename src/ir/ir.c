#include "ir.h"

#include <stdio.h>

/* ---- tensors --------------------------------------------------------------- */

int64_t pfvm_tensor_numel(const pfvm_tensor *t)
{
    int64_t n = 1;
    int i;
    for (i = 0; i < t->rank; i++)
        if (!pfvm__mul_i64(n, t->dims[i], &n))
            return -1;
    return n;
}

pfvm_code pfvm_tensor_set_shape(pfvm_tensor *t, int rank, const int64_t *dims, pfvm_status *st)
{
    int i;
    if (rank < 0 || rank > PFVM_MAX_RANK)
        return pfvm__fail(st, PFVM_ERR_UNSUPPORTED, "tensor rank %d exceeds PFVM_MAX_RANK (%d)", rank,
                          PFVM_MAX_RANK);
    for (i = 0; i < rank; i++)
        if (dims[i] < 0)
            return pfvm__fail(st, PFVM_ERR_SHAPE, "negative dimension %lld", (long long)dims[i]);
    t->rank = rank;
    for (i = 0; i < rank; i++)
        t->dims[i] = dims[i];
    return PFVM_OK;
}

static pfvm_code pfvm__tensor_bytes(pfvm_dtype dtype, int rank, const int64_t *dims, size_t *bytes,
                                    pfvm_status *st)
{
    int64_t n = 1;
    int i;
    size_t es = pfvm_dtype_size(dtype);
    if (!es && dtype != PFVM_UNDEFINED)
        return pfvm__fail(st, PFVM_ERR_UNSUPPORTED, "unknown element type %d", (int)dtype);
    for (i = 0; i < rank; i++) {
        if (dims[i] < 0)
            return pfvm__fail(st, PFVM_ERR_SHAPE, "negative dimension %lld", (long long)dims[i]);
        if (!pfvm__mul_i64(n, dims[i], &n))
            return pfvm__fail(st, PFVM_ERR_NOMEM, "tensor size overflows");
    }
    if ((uint64_t)n > (uint64_t)SIZE_MAX || !pfvm__mul_size((size_t)n, es, bytes))
        return pfvm__fail(st, PFVM_ERR_NOMEM, "tensor size overflows");
    return PFVM_OK;
}

pfvm_tensor *pfvm_tensor_new(pfvm_dtype dtype, int rank, const int64_t *dims, pfvm_status *st)
{
    pfvm_tensor *t;
    size_t bytes;
    if (pfvm__tensor_bytes(dtype, rank, dims, &bytes, st))
        return NULL;
    t = (pfvm_tensor *)pfvm__calloc(1, sizeof *t);
    if (!t) {
        pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
        return NULL;
    }
    t->kind = PFVM_KIND_TENSOR;
    t->dtype = dtype;
    if (pfvm_tensor_set_shape(t, rank, dims, st)) {
        pfvm__free(t);
        return NULL;
    }
    t->data = pfvm__data_alloc(bytes, 1);
    if (!t->data) {
        pfvm__free(t);
        pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory allocating %zu bytes", bytes);
        return NULL;
    }
    t->nbytes = bytes;
    t->owns_data = 1;
    t->owns_strings = dtype == PFVM_STRING;
    return t;
}

pfvm_tensor *pfvm_tensor_view(pfvm_dtype dtype, int rank, const int64_t *dims, void *data, pfvm_status *st)
{
    pfvm_tensor *t;
    size_t bytes;
    if (pfvm__tensor_bytes(dtype, rank, dims, &bytes, st))
        return NULL;
    t = (pfvm_tensor *)pfvm__calloc(1, sizeof *t);
    if (!t) {
        pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
        return NULL;
    }
    t->kind = PFVM_KIND_TENSOR;
    t->dtype = dtype;
    if (pfvm_tensor_set_shape(t, rank, dims, st)) {
        pfvm__free(t);
        return NULL;
    }
    t->data = data;
    t->nbytes = bytes;
    return t;
}

void pfvm_tensor_release(pfvm_tensor *t)
{
    int64_t i, n;
    if (!t)
        return;
    if (t->dtype == PFVM_STRING && t->owns_strings && t->data) {
        n = pfvm_tensor_numel(t);
        for (i = 0; i < n && (size_t)i * sizeof(char *) < t->nbytes; i++)
            pfvm__free(((char **)t->data)[i]);
    }
    if (t->owns_data)
        pfvm__data_free(t->data);
    t->data = NULL;
    t->nbytes = 0;
    t->owns_data = 0;
    t->owns_strings = 0;
    for (i = 0; i < (int64_t)stbds_arrlen(t->elems); i++)
        pfvm_tensor_free(t->elems[i]);
    stbds_arrfree(t->elems);
}

pfvm_code pfvm_tensor_set_string(pfvm_tensor *t, int64_t i, const char *s, pfvm_status *st)
{
    char *copy;
    if (!t || t->kind != PFVM_KIND_TENSOR || t->dtype != PFVM_STRING || !t->owns_strings)
        return pfvm__fail(st, PFVM_ERR_INVALID, "set string: not a string tensor that owns its strings");
    if (i < 0 || i >= pfvm_tensor_numel(t) || (size_t)i >= t->nbytes / sizeof(char *))
        return pfvm__fail(st, PFVM_ERR_RANGE, "set string: element %lld of %lld", (long long)i,
                          (long long)pfvm_tensor_numel(t));
    if (!(copy = pfvm__strdup(s ? s : "")))
        return pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
    pfvm__free(((char **)t->data)[i]);
    ((char **)t->data)[i] = copy;
    return PFVM_OK;
}

const pfvm_tensor *const *pfvm_tensors_const(pfvm_tensor *const *tensors)
{
    return (const pfvm_tensor *const *)tensors;
}

void pfvm_tensor_free(pfvm_tensor *t)
{
    if (!t)
        return;
    pfvm_tensor_release(t);
    pfvm__free(t);
}

pfvm_tensor *pfvm_tensor_make(const pfvm_tensor_desc *d, pfvm_status *st)
{
    pfvm__scope sc;
    pfvm_tensor *t;
    pfvm_dtype dtype = d->dtype ? d->dtype : PFVM_FLOAT;
    static const int64_t none[1] = {0};
    const int64_t *dims = d->dims ? d->dims : none;
    if (d->rank && !d->dims) {
        pfvm__fail(st, PFVM_ERR_INVALID, "tensor desc: rank %d without dims", d->rank);
        return NULL;
    }
    pfvm__scope_enter(&sc, &d->allocator);
    t = d->data ? pfvm_tensor_view(dtype, d->rank, dims, d->data, st) : pfvm_tensor_new(dtype, d->rank, dims, st);
    pfvm__scope_leave(&sc);
    return t;
}

pfvm_tensor *pfvm_tensor_clone(const pfvm_tensor *t, pfvm_status *st)
{
    pfvm_tensor *r;
    int64_t i, n;
    if (!t) {
        pfvm__fail(st, PFVM_ERR_INVALID, "clone: no tensor");
        return NULL;
    }
    if (t->kind != PFVM_KIND_TENSOR) {
        r = (pfvm_tensor *)pfvm__calloc(1, sizeof *r);
        if (!r) {
            pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
            return NULL;
        }
        r->kind = t->kind;
        r->dtype = t->dtype;
        r->elem_dtype = t->elem_dtype;
        r->has_value = t->has_value;
        for (i = 0; i < (int64_t)stbds_arrlen(t->elems); i++) {
            pfvm_tensor *e = pfvm_tensor_clone(t->elems[i], st);
            if (!e || !pfvm__arrpush(r->elems, e)) {
                if (e)
                    pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
                pfvm_tensor_free(e);
                pfvm_tensor_free(r);
                return NULL;
            }
        }
        return r;
    }
    r = pfvm_tensor_new(t->dtype, t->rank, t->dims, st);
    if (!r)
        return NULL;
    n = pfvm_tensor_numel(t);
    if (t->dtype == PFVM_STRING) {
        for (i = 0; i < n; i++) {
            const char *s = ((char **)t->data)[i];
            ((char **)r->data)[i] = pfvm__strdup(s ? s : "");
            if (!((char **)r->data)[i]) {
                pfvm_tensor_free(r);
                pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
                return NULL;
            }
        }
    } else if (r->nbytes) {
        memcpy(r->data, t->data, r->nbytes);
    }
    return r;
}

/* An element index inside the storage: the accessors below read 0 and
 * pfvm_red_store writes nothing outside it, so a kernel that trusted a
 * malformed model's attribute or an empty scale never touches memory it
 * does not own (kernels still check their inputs to give a clear error). */
#define PFVM__IN(T) (d && i >= 0 && (uint64_t)i < t->nbytes / sizeof(T))
#define PFVM__AT(T) (PFVM__IN(T) ? ((const T *)d)[i] : (T)0)

double pfvm_tensor_get_f64(const pfvm_tensor *t, int64_t i)
{
    const void *d = t->data;
    switch (t->dtype) {
    case PFVM_FLOAT: return PFVM__AT(float);
    case PFVM_DOUBLE: return PFVM__AT(double);
    case PFVM_FLOAT16: return pfvm_half_to_float(PFVM__AT(uint16_t));
    case PFVM_BFLOAT16: return pfvm_bf16_to_float(PFVM__AT(uint16_t));
    case PFVM_INT8: return PFVM__AT(int8_t);
    case PFVM_UINT8: return PFVM__AT(uint8_t);
    case PFVM_BOOL: return PFVM__AT(uint8_t) != 0;
    case PFVM_INT16: return PFVM__AT(int16_t);
    case PFVM_UINT16: return PFVM__AT(uint16_t);
    case PFVM_INT32: return PFVM__AT(int32_t);
    case PFVM_UINT32: return PFVM__AT(uint32_t);
    case PFVM_INT64: return (double)PFVM__AT(int64_t);
    case PFVM_UINT64: return (double)PFVM__AT(uint64_t);
    default: return 0;
    }
}

PFVM_INTERNAL int64_t pfvm__tensor_int_at(const pfvm_tensor *t, int64_t i)
{
    const void *d = t->data;
    switch (t->dtype) {
    case PFVM_INT64: return PFVM__AT(int64_t);
    case PFVM_INT32: return PFVM__AT(int32_t);
    case PFVM_INT8: return PFVM__AT(int8_t);
    case PFVM_UINT8: return PFVM__AT(uint8_t);
    case PFVM_BOOL: return PFVM__AT(uint8_t) != 0;
    case PFVM_INT16: return PFVM__AT(int16_t);
    case PFVM_UINT16: return PFVM__AT(uint16_t);
    case PFVM_UINT32: return PFVM__AT(uint32_t);
    case PFVM_UINT64: return (int64_t)PFVM__AT(uint64_t);
    default: return 0;
    }
}

int64_t pfvm_tensor_get_i64(const pfvm_tensor *t, int64_t i)
{
    switch (t->dtype) {
    case PFVM_INT64: case PFVM_INT32: case PFVM_INT8: case PFVM_UINT8: case PFVM_BOOL:
    case PFVM_INT16: case PFVM_UINT16: case PFVM_UINT32: case PFVM_UINT64:
        return pfvm__tensor_int_at(t, i);
    default: {
        double v = pfvm_tensor_get_f64(t, i);
        if (v != v)
            return 0;
        if (v >= 9.2e18)
            return INT64_MAX;
        if (v <= -9.2e18)
            return INT64_MIN;
        return (int64_t)v;
    }
    }
}

#undef PFVM__AT
#undef PFVM__IN

int pfvm_tensor_describe(const pfvm_tensor *t, char *buf, size_t n)
{
    size_t len = 0;
    int i;
    if (t->kind == PFVM_KIND_SEQUENCE)
        return pfvm__snprintf(buf, n, "seq(%d x %s)", (int)stbds_arrlen(t->elems), pfvm_dtype_name(t->elem_dtype));
    if (t->kind == PFVM_KIND_OPTIONAL)
        return pfvm__snprintf(buf, n, "optional(%s)", t->has_value ? "value" : "none");
    len += (size_t)pfvm__snprintf(buf, n, "%s[", pfvm_dtype_name(t->dtype));
    for (i = 0; i < t->rank; i++)
        len += (size_t)pfvm__snprintf(buf + (len < n ? len : n), len < n ? n - len : 0, i ? ",%lld" : "%lld",
                                      (long long)t->dims[i]);
    len += (size_t)pfvm__snprintf(buf + (len < n ? len : n), len < n ? n - len : 0, "]");
    return (int)len;
}

/* ---- model ------------------------------------------------------------------ */

static pfvm_model *pfvm__model_make(pfvm_status *st)
{
    pfvm_model *m = (pfvm_model *)pfvm__calloc(1, sizeof *m);
    if (!m) {
        pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
        return NULL;
    }
    m->allocator = pfvm__alloc_current();
    m->syms = pfvm_symtab_new();
    if (!m->syms) {
        pfvm__free(m);
        pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
        return NULL;
    }
    m->ir_version = 8;
    m->producer_name = "";
    m->producer_version = "";
    m->domain = "";
    m->doc = "";
    return m;
}

pfvm_model *pfvm_model_new_desc(const pfvm_model_desc *desc, pfvm_status *st)
{
    static const pfvm_allocator none = {NULL, NULL};
    pfvm__scope sc;
    pfvm_model *m;
    pfvm__scope_enter(&sc, desc ? &desc->allocator : &none);
    m = pfvm__model_make(st);
    pfvm__scope_leave(&sc);
    return m;
}

pfvm_model *pfvm_model_new(pfvm_status *st)
{
    return pfvm_model_new_desc(NULL, st);
}

PFVM_INTERNAL const pfvm_allocator *pfvm__model_allocator(const pfvm_model *m)
{
    static const pfvm_allocator none = {NULL, NULL};
    return m ? &m->allocator : &none;
}

PFVM_INTERNAL const pfvm_allocator *pfvm__graph_allocator(const pfvm_graph *g)
{
    return pfvm__model_allocator(g ? g->model : NULL);
}

static void pfvm__graph_free(pfvm_graph *g)
{
    int i;
    if (!g)
        return;
    for (i = 0; i < (int)stbds_arrlen(g->subgraphs); i++)
        pfvm__graph_free(g->subgraphs[i]);
    stbds_arrfree(g->subgraphs);
    stbds_arrfree(g->nodes);
    stbds_arrfree(g->values);
    stbds_arrfree(g->inputs);
    stbds_arrfree(g->outputs);
    stbds_arrfree(g->inits);
    stbds_arrfree(g->value_infos);
    pfvm__map_free(&g->by_name);
}

void pfvm_model_free(pfvm_model *m)
{
    int i;
    if (!m)
        return;
    pfvm__graph_free(m->graph);
    for (i = 0; i < (int)stbds_arrlen(m->functions); i++)
        pfvm__graph_free(m->functions[i]->body);
    for (i = 0; i < (int)stbds_arrlen(m->owned_blocks); i++)
        pfvm__free(m->owned_blocks[i]);
    stbds_arrfree(m->owned_blocks);
    stbds_arrfree(m->functions);
    stbds_arrfree(m->opsets);
    stbds_arrfree(m->metadata);
    pfvm_symtab_free(m->syms);
    pfvm__free(m->owned_bytes);
    pfvm__arena_free(&m->arena);
    pfvm__free(m);
}

int64_t pfvm_model_opset(const pfvm_model *m, const char *domain)
{
    int i;
    if (!domain || !strcmp(domain, "ai.onnx"))
        domain = "";
    for (i = 0; i < (int)stbds_arrlen(m->opsets); i++) {
        const char *d = m->opsets[i].domain;
        if (!strcmp(d, "ai.onnx"))
            d = "";
        if (!strcmp(d, domain))
            return m->opsets[i].version;
    }
    return 0;
}

static pfvm_code pfvm__scoped_model_set_opset(pfvm_model *m, const char *domain, int64_t version, pfvm_status *st)
{
    int i;
    pfvm_opset_import imp;
    for (i = 0; i < (int)stbds_arrlen(m->opsets); i++)
        if (!strcmp(m->opsets[i].domain, domain)) {
            m->opsets[i].version = version;
            return PFVM_OK;
        }
    imp.domain = pfvm_model_strdup(m, domain);
    imp.version = version;
    if (!imp.domain || !pfvm__arrpush(m->opsets, imp))
        return pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
    return PFVM_OK;
}

pfvm_code pfvm_model_set_opset(pfvm_model *m, const char *domain, int64_t version, pfvm_status *st)
{
    PFVM__SCOPED(pfvm_code, pfvm__model_allocator(m), pfvm__scoped_model_set_opset(m, domain, version, st));
}

static void *pfvm__scoped_model_alloc(pfvm_model *m, size_t size)
{
    return pfvm__arena_alloc(&m->arena, size);
}

void *pfvm_model_alloc(pfvm_model *m, size_t size)
{
    PFVM__SCOPED(void *, pfvm__model_allocator(m), pfvm__scoped_model_alloc(m, size));
}

static const char *pfvm__scoped_model_strdup(pfvm_model *m, const char *s)
{
    return pfvm__arena_strdup(&m->arena, s);
}

const char *pfvm_model_strdup(pfvm_model *m, const char *s)
{
    PFVM__SCOPED(const char *, pfvm__model_allocator(m), pfvm__scoped_model_strdup(m, s));
}

static const char *pfvm__scoped_model_strndup(pfvm_model *m, const char *s, size_t n)
{
    return pfvm__arena_strndup(&m->arena, s, n);
}

const char *pfvm_model_strndup(pfvm_model *m, const char *s, size_t n)
{
    PFVM__SCOPED(const char *, pfvm__model_allocator(m), pfvm__scoped_model_strndup(m, s, n));
}

static pfvm_code pfvm__scoped_model_own(pfvm_model *m, void *block, pfvm_status *st)
{
    if (!pfvm__arrpush(m->owned_blocks, block))
        return pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
    return PFVM_OK;
}

pfvm_code pfvm_model_own(pfvm_model *m, void *block, pfvm_status *st)
{
    PFVM__SCOPED(pfvm_code, pfvm__model_allocator(m), pfvm__scoped_model_own(m, block, st));
}

static pfvm_tensor *pfvm__scoped_model_tensor(pfvm_model *m, pfvm_dtype dtype, int rank, const int64_t *dims, void *data,
                               pfvm_status *st)
{
    pfvm_tensor *t;
    size_t bytes;
    if (pfvm__tensor_bytes(dtype, rank, dims, &bytes, st))
        return NULL;
    t = (pfvm_tensor *)pfvm_model_alloc(m, sizeof *t);
    if (!t) {
        pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
        return NULL;
    }
    t->kind = PFVM_KIND_TENSOR;
    t->dtype = dtype;
    if (pfvm_tensor_set_shape(t, rank, dims, st))
        return NULL;
    t->nbytes = bytes;
    if (data) {
        t->data = data;
    } else {
        /* data is heap memory freed with the model: it may be large */
        t->data = pfvm__calloc(1, bytes ? bytes : 1);
        if (!t->data) {
            pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory allocating %zu bytes", bytes);
            return NULL;
        }
        /* freed with the model; string elements come from the model arena */
        if (!pfvm__arrpush(m->owned_blocks, t->data)) {
            pfvm__free(t->data);
            t->data = NULL;
            pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
            return NULL;
        }
    }
    return t;
}

pfvm_tensor *pfvm_model_tensor(pfvm_model *m, pfvm_dtype dtype, int rank, const int64_t *dims, void *data,
                               pfvm_status *st)
{
    PFVM__SCOPED(pfvm_tensor *, pfvm__model_allocator(m), pfvm__scoped_model_tensor(m, dtype, rank, dims, data, st));
}

static pfvm_type *pfvm__scoped_model_type(pfvm_model *m, pfvm_status *st)
{
    pfvm_type *t = (pfvm_type *)pfvm_model_alloc(m, sizeof *t);
    if (!t)
        pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
    else
        t->shape.rank = -1;
    return t;
}

pfvm_type *pfvm_model_type(pfvm_model *m, pfvm_status *st)
{
    PFVM__SCOPED(pfvm_type *, pfvm__model_allocator(m), pfvm__scoped_model_type(m, st));
}

/* ---- graphs ------------------------------------------------------------------ */

static pfvm_graph *pfvm__scoped_graph_new(pfvm_model *m, pfvm_graph *parent, const char *name, pfvm_status *st)
{
    pfvm_graph *g = (pfvm_graph *)pfvm_model_alloc(m, sizeof *g);
    if (!g) {
        pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
        return NULL;
    }
    g->model = m;
    g->parent = parent;
    g->name = pfvm_model_strdup(m, name ? name : "");
    g->doc = "";
    pfvm__map_init(&g->by_name, 1);
    if (!g->name || (parent && !pfvm__arrpush(parent->subgraphs, g))) {
        pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
        return NULL;
    }
    if (!parent && !m->graph)
        m->graph = g;
    return g;
}

pfvm_graph *pfvm_graph_new(pfvm_model *m, pfvm_graph *parent, const char *name, pfvm_status *st)
{
    PFVM__SCOPED(pfvm_graph *, pfvm__model_allocator(m), pfvm__scoped_graph_new(m, parent, name, st));
}

/* PFVM_PLANNED_ONLY: firmware models are small, so a name is searched
 * along the values in order and the name map is neither filled nor read
 * (its hashing code is not linked). */
#ifdef PFVM_PLANNED_ONLY
#define PFVM__NAME_MAP 0
#else
#define PFVM__NAME_MAP 1
#endif

pfvm_value *pfvm_graph_find_local(const pfvm_graph *g, const char *name)
{
    void *v = NULL;
    if (!PFVM__NAME_MAP) {
        int i;
        for (i = 0; i < (int)stbds_arrlen(g->values); i++)
            if (!strcmp(g->values[i]->name, name))
                return g->values[i];
        return NULL;
    }
    return pfvm__map_get(&g->by_name, name, &v) ? (pfvm_value *)v : NULL;
}

pfvm_value *pfvm_graph_find(const pfvm_graph *g, const char *name)
{
    for (; g; g = g->parent) {
        pfvm_value *v = pfvm_graph_find_local(g, name);
        if (v)
            return v;
    }
    return NULL;
}

static pfvm_value *pfvm__scoped_graph_value(pfvm_graph *g, const char *name, pfvm_status *st)
{
    pfvm_value *v = pfvm_graph_find_local(g, name);
    if (v)
        return v;
    v = (pfvm_value *)pfvm_model_alloc(g->model, sizeof *v);
    if (!v || !(v->name = pfvm_model_strdup(g->model, name))) {
        pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
        return NULL;
    }
    v->graph = g;
    v->type.shape.rank = -1;
    v->doc = "";
    v->id = (int)stbds_arrlen(g->values);
    if (!pfvm__arrreserve(g->values, stbds_arrlen(g->values) + 1) ||
        (PFVM__NAME_MAP && !pfvm__map_put(&g->by_name, v->name, v))) {
        pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
        return NULL;
    }
    pfvm__arrput_reserved(g->values, v);
    return v;
}

pfvm_value *pfvm_graph_value(pfvm_graph *g, const char *name, pfvm_status *st)
{
    PFVM__SCOPED(pfvm_value *, pfvm__graph_allocator(g), pfvm__scoped_graph_value(g, name, st));
}

static pfvm_value *pfvm__scoped_graph_new_value(pfvm_graph *g, const char *hint, pfvm_status *st)
{
    char buf[256];
    do {
        pfvm__snprintf(buf, sizeof buf, "%s__%d", hint ? hint : "v", g->next_auto_name++);
    } while (pfvm_graph_find(g, buf));
    return pfvm_graph_value(g, buf, st);
}

pfvm_value *pfvm_graph_new_value(pfvm_graph *g, const char *hint, pfvm_status *st)
{
    PFVM__SCOPED(pfvm_value *, pfvm__graph_allocator(g), pfvm__scoped_graph_new_value(g, hint, st));
}

static pfvm_code pfvm__scoped_graph_add_input(pfvm_graph *g, pfvm_value *v, pfvm_status *st)
{
    if (!pfvm__arrpush(g->inputs, v))
        return pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
    v->is_input = 1;
    return PFVM_OK;
}

pfvm_code pfvm_graph_add_input(pfvm_graph *g, pfvm_value *v, pfvm_status *st)
{
    PFVM__SCOPED(pfvm_code, pfvm__graph_allocator(g), pfvm__scoped_graph_add_input(g, v, st));
}

static pfvm_code pfvm__scoped_graph_add_output(pfvm_graph *g, pfvm_value *v, pfvm_status *st)
{
    if (!pfvm__arrpush(g->outputs, v))
        return pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
    v->is_output = 1;
    return PFVM_OK;
}

pfvm_code pfvm_graph_add_output(pfvm_graph *g, pfvm_value *v, pfvm_status *st)
{
    PFVM__SCOPED(pfvm_code, pfvm__graph_allocator(g), pfvm__scoped_graph_add_output(g, v, st));
}

static pfvm_code pfvm__scoped_graph_add_init(pfvm_graph *g, pfvm_value *v, pfvm_tensor *t, pfvm_status *st)
{
    if (v->init)
        return pfvm__fail(st, PFVM_ERR_INVALID, "initializer '%s' is defined twice", v->name);
    if (!pfvm__arrreserve(g->inits, stbds_arrlen(g->inits) + 1))
        return pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
    v->init = t;
    t->name = v->name;
    if (v->type.kind == PFVM_KIND_UNKNOWN || !v->has_type_info) {
        v->type.kind = PFVM_KIND_TENSOR;
        v->type.dtype = t->dtype;
        if (pfvm_shape_from_dims(g->model->syms, &v->type.shape, t->rank, t->dims, st))
            return st ? st->code : PFVM_ERR_NOMEM;
    }
    pfvm__arrput_reserved(g->inits, v);
    return PFVM_OK;
}

pfvm_code pfvm_graph_add_init(pfvm_graph *g, pfvm_value *v, pfvm_tensor *t, pfvm_status *st)
{
    PFVM__SCOPED(pfvm_code, pfvm__graph_allocator(g), pfvm__scoped_graph_add_init(g, v, t, st));
}

static pfvm_node *pfvm__scoped_graph_add_node(pfvm_graph *g, const char *op_type, const char *domain, const char *name,
                               pfvm_value **inputs, int n_inputs, pfvm_value **outputs, int n_outputs,
                               pfvm_status *st)
{
    pfvm_model *m = g->model;
    pfvm_node *n = (pfvm_node *)pfvm_model_alloc(m, sizeof *n);
    int i;
    if (!n)
        goto nomem;
    n->op_type = pfvm_model_strdup(m, op_type);
    n->domain = pfvm_model_strdup(m, domain && strcmp(domain, "ai.onnx") ? domain : "");
    n->name = pfvm_model_strdup(m, name ? name : "");
    n->doc = "";
    n->overload = "";
    n->inputs = (pfvm_value **)pfvm_model_alloc(m, sizeof(pfvm_value *) * (size_t)(n_inputs + 1));
    n->outputs = (pfvm_value **)pfvm_model_alloc(m, sizeof(pfvm_value *) * (size_t)(n_outputs + 1));
    if (!n->op_type || !n->domain || !n->name || !n->inputs || !n->outputs ||
        !pfvm__arrreserve(g->nodes, stbds_arrlen(g->nodes) + 1))
        goto nomem;
    for (i = 0; i < n_inputs; i++)
        n->inputs[i] = inputs[i];
    for (i = 0; i < n_outputs; i++) {
        n->outputs[i] = outputs[i];
        if (outputs[i]) {
            if (outputs[i]->producer || outputs[i]->is_input || outputs[i]->init) {
                char lb[96];
                return pfvm__fail(st, PFVM_ERR_INVALID, "node '%s' (%s): output '%s' is already defined",
                                  pfvm__node_label(n, lb, sizeof lb), op_type, outputs[i]->name),
                       (pfvm_node *)NULL;
            }
            outputs[i]->producer = n;
            outputs[i]->producer_index = i;
        }
    }
    n->n_inputs = n_inputs;
    n->n_outputs = n_outputs;
    n->graph = g;
    n->id = (int)stbds_arrlen(g->nodes);
    pfvm__arrput_reserved(g->nodes, n);
    return n;
nomem:
    pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
    return NULL;
}

pfvm_node *pfvm_graph_add_node(pfvm_graph *g, const char *op_type, const char *domain, const char *name,
                               pfvm_value **inputs, int n_inputs, pfvm_value **outputs, int n_outputs,
                               pfvm_status *st)
{
    PFVM__SCOPED(pfvm_node *, pfvm__graph_allocator(g),
                 pfvm__scoped_graph_add_node(g, op_type, domain, name, inputs, n_inputs, outputs, n_outputs, st));
}

static pfvm_attr *pfvm__scoped_node_add_attr(pfvm_node *n, const char *name, pfvm_attr_type type, pfvm_status *st)
{
    pfvm_model *m = n->graph->model;
    pfvm_attr *a = (pfvm_attr *)pfvm_model_alloc(m, sizeof(pfvm_attr) * (size_t)(n->n_attrs + 1));
    if (!a) {
        pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
        return NULL;
    }
    if (n->n_attrs)
        memcpy(a, n->attrs, sizeof(pfvm_attr) * (size_t)n->n_attrs);
    n->attrs = a;
    a = &n->attrs[n->n_attrs++];
    a->name = pfvm_model_strdup(m, name);
    a->type = type;
    a->s = "";
    a->doc = "";
    if (!a->name) {
        pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
        return NULL;
    }
    return a;
}

pfvm_attr *pfvm_node_add_attr(pfvm_node *n, const char *name, pfvm_attr_type type, pfvm_status *st)
{
    PFVM__SCOPED(pfvm_attr *, pfvm__graph_allocator(n ? n->graph : NULL),
                 pfvm__scoped_node_add_attr(n, name, type, st));
}

static pfvm_code pfvm__scoped_node_set_attr_int(pfvm_node *n, const char *name, int64_t v, pfvm_status *st)
{
    pfvm_attr *a = pfvm_node_add_attr(n, name, PFVM_ATTR_INT, st);
    if (!a)
        return PFVM_ERR_NOMEM;
    a->i = v;
    return PFVM_OK;
}

pfvm_code pfvm_node_set_attr_int(pfvm_node *n, const char *name, int64_t v, pfvm_status *st)
{
    PFVM__SCOPED(pfvm_code, pfvm__graph_allocator(n ? n->graph : NULL), pfvm__scoped_node_set_attr_int(n, name, v, st));
}

static pfvm_code pfvm__scoped_node_set_attr_float(pfvm_node *n, const char *name, float v, pfvm_status *st)
{
    pfvm_attr *a = pfvm_node_add_attr(n, name, PFVM_ATTR_FLOAT, st);
    if (!a)
        return PFVM_ERR_NOMEM;
    a->f = v;
    return PFVM_OK;
}

pfvm_code pfvm_node_set_attr_float(pfvm_node *n, const char *name, float v, pfvm_status *st)
{
    PFVM__SCOPED(pfvm_code, pfvm__graph_allocator(n ? n->graph : NULL),
                 pfvm__scoped_node_set_attr_float(n, name, v, st));
}

static pfvm_code pfvm__scoped_node_set_attr_ints(pfvm_node *n, const char *name, const int64_t *v, int count,
                                  pfvm_status *st)
{
    pfvm_attr *a = pfvm_node_add_attr(n, name, PFVM_ATTR_INTS, st);
    if (!a)
        return PFVM_ERR_NOMEM;
    a->ints = (int64_t *)pfvm_model_alloc(n->graph->model, sizeof(int64_t) * (size_t)(count + 1));
    if (!a->ints)
        return pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
    if (count)
        memcpy(a->ints, v, sizeof(int64_t) * (size_t)count);
    a->n = count;
    return PFVM_OK;
}

pfvm_code pfvm_node_set_attr_ints(pfvm_node *n, const char *name, const int64_t *v, int count,
                                  pfvm_status *st)
{
    PFVM__SCOPED(pfvm_code, pfvm__graph_allocator(n ? n->graph : NULL),
                 pfvm__scoped_node_set_attr_ints(n, name, v, count, st));
}

static pfvm_code pfvm__scoped_node_set_attr_string(pfvm_node *n, const char *name, const char *s, pfvm_status *st)
{
    pfvm_attr *a = pfvm_node_add_attr(n, name, PFVM_ATTR_STRING, st);
    if (!a)
        return PFVM_ERR_NOMEM;
    a->s = pfvm_model_strdup(n->graph->model, s);
    a->s_len = strlen(s);
    return a->s ? PFVM_OK : pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
}

pfvm_code pfvm_node_set_attr_string(pfvm_node *n, const char *name, const char *s, pfvm_status *st)
{
    PFVM__SCOPED(pfvm_code, pfvm__graph_allocator(n ? n->graph : NULL),
                 pfvm__scoped_node_set_attr_string(n, name, s, st));
}

const pfvm_attr *pfvm_node_attr(const pfvm_node *n, const char *name)
{
    int i;
    /* the first letters compared here: kernels look attributes up at every
     * run, and a call to strcmp per attribute is most of that on a small core */
    for (i = 0; i < n->n_attrs; i++)
        if (n->attrs[i].name[0] == name[0] && !strcmp(n->attrs[i].name, name))
            return &n->attrs[i];
    return NULL;
}

int64_t pfvm_node_attr_int(const pfvm_node *n, const char *name, int64_t def)
{
    const pfvm_attr *a = pfvm_node_attr(n, name);
    return a && a->type == PFVM_ATTR_INT ? a->i : def;
}

float pfvm_node_attr_float(const pfvm_node *n, const char *name, float def)
{
    const pfvm_attr *a = pfvm_node_attr(n, name);
    if (a && a->type == PFVM_ATTR_FLOAT)
        return a->f;
    if (a && a->type == PFVM_ATTR_INT)
        return (float)a->i;
    return def;
}

const char *pfvm_node_attr_string(const pfvm_node *n, const char *name, const char *def)
{
    const pfvm_attr *a = pfvm_node_attr(n, name);
    return a && a->type == PFVM_ATTR_STRING ? a->s : def;
}

int pfvm_node_attr_ints(const pfvm_node *n, const char *name, const int64_t **out)
{
    const pfvm_attr *a = pfvm_node_attr(n, name);
    if (!a || a->type != PFVM_ATTR_INTS) {
        *out = NULL;
        return -1;
    }
    *out = a->ints;
    return a->n;
}

int pfvm_node_attr_floats(const pfvm_node *n, const char *name, const float **out)
{
    const pfvm_attr *a = pfvm_node_attr(n, name);
    if (!a || a->type != PFVM_ATTR_FLOATS) {
        *out = NULL;
        return -1;
    }
    *out = a->floats;
    return a->n;
}

PFVM_INTERNAL const char *pfvm__node_label(const pfvm_node *n, char *buf, size_t size)
{
    if (n->name && n->name[0])
        return n->name;
    pfvm__snprintf(buf, size, "%s#%d", n->op_type, n->id);
    return buf;
}

PFVM_INTERNAL pfvm_code pfvm__name_node(const pfvm_node *n, pfvm_status *st, pfvm_code fallback)
{
    char lb[96];
    if (!st)
        return fallback;
    if (strncmp(st->msg, "node '", 6))
        pfvm__prefix(st, "node '%s' (%s)", pfvm__node_label(n, lb, sizeof lb), n->op_type);
    return st->code;
}

static int pfvm__inits_hold(const pfvm_graph *g, const void *data)
{
    int i;
    for (; g; g = g->parent)
        for (i = 0; i < pfvm_graph_num_initializers(g); i++)
            if (g->inits[i]->init && g->inits[i]->init->data == data)
                return 1;
    return 0;
}

PFVM_INTERNAL int pfvm__model_owns(const pfvm_node *n, const void *data)
{
    const pfvm_graph *g = n->graph;
    return g && (pfvm__inits_hold(g, data) || (g->model && pfvm__inits_hold(g->model->graph, data)));
}

/* ---- topological sort and verification ------------------------------------ */

/* Every value a node reads, including those its subgraphs capture from the
 * enclosing scope: an If reading `x` inside its branch depends on x. */
static int pfvm__collect_captures(const pfvm_graph *sub, const pfvm_graph *scope, pfvm_value ***out)
{
    int i, j, k;
    for (i = 0; i < (int)stbds_arrlen(sub->nodes); i++) {
        const pfvm_node *n = sub->nodes[i];
        for (j = 0; j < n->n_inputs; j++) {
            pfvm_value *v = n->inputs[j];
            if (v && v->graph == scope && !pfvm__arrpush(*out, v))
                return 0;
        }
        for (j = 0; j < n->n_attrs; j++) {
            const pfvm_attr *a = &n->attrs[j];
            if (a->g && !pfvm__collect_captures(a->g, scope, out))
                return 0;
            for (k = 0; k < (a->type == PFVM_ATTR_GRAPHS ? a->n : 0); k++)
                if (!pfvm__collect_captures(a->graphs[k], scope, out))
                    return 0;
        }
    }
    for (i = 0; i < (int)stbds_arrlen(sub->outputs); i++)
        if (sub->outputs[i]->graph == scope && !pfvm__arrpush(*out, sub->outputs[i]))
            return 0;
    return 1;
}

/* PFVM_PLANNED_ONLY: the reader refuses subgraphs (they need inference),
 * so no node captures values */
#ifdef PFVM_PLANNED_ONLY
#define PFVM__IR_SUBGRAPHS 0
#else
#define PFVM__IR_SUBGRAPHS 1
#endif

PFVM_INTERNAL int pfvm__node_deps(const pfvm_node *n, pfvm_value ***out)
{
    int j, k;
    pfvm__arrtrunc(*out, 0);
    for (j = 0; j < n->n_inputs; j++)
        if (n->inputs[j] && !pfvm__arrpush(*out, n->inputs[j]))
            return 0;
    for (j = 0; PFVM__IR_SUBGRAPHS && j < n->n_attrs; j++) {
        const pfvm_attr *a = &n->attrs[j];
        if (a->g && !pfvm__collect_captures(a->g, n->graph, out))
            return 0;
        for (k = 0; k < (a->type == PFVM_ATTR_GRAPHS ? a->n : 0); k++)
            if (!pfvm__collect_captures(a->graphs[k], n->graph, out))
                return 0;
    }
    return 1;
}

#if PFVM__TOPOSORT_VERIFIES
/* PFVM_PLANNED_ONLY without inference (no subgraphs: a node reads its
 * inputs only): the order is checked by the verifier, which runs here
 * (pfvm_exec_new then does not run it again), without the dependency
 * list: a node reading a value of itself or of a later node fails. */
static pfvm_code pfvm__verify_scope(const pfvm_graph *g, pfvm_status *st);
static pfvm_code pfvm__scoped_graph_toposort(pfvm_graph *g, pfvm_status *st)
{
    int i;
    for (i = 0; i < (int)stbds_arrlen(g->nodes); i++)
        g->nodes[i]->id = i;
    return pfvm__verify_scope(g, st);
}
#elif defined(PFVM_NO_SHAPE_INFERENCE)
/* Without inference the models come planned, written by pfvm in order:
 * the order is checked, not made (a graph whose node reads a value of
 * itself or of a later node fails), which leaves the sort's code out. */
static pfvm_code pfvm__scoped_graph_toposort(pfvm_graph *g, pfvm_status *st)
{
    int n = (int)stbds_arrlen(g->nodes), i, j;
    pfvm_value **deps = NULL;
    pfvm_code rc = PFVM_OK;
    for (i = 0; i < n; i++)
        g->nodes[i]->id = i;
    for (i = 0; i < n && !rc; i++) {
        if (!pfvm__node_deps(g->nodes[i], &deps)) {
            rc = pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
            break;
        }
        for (j = 0; j < (int)stbds_arrlen(deps) && !rc; j++) {
            const pfvm_node *p = deps[j]->producer;
            if (deps[j]->graph == g && p && p->graph == g && p->id >= i && p->id < n && g->nodes[p->id] == p) {
                char lb[96];
                rc = pfvm__fail(st, PFVM_ERR_INVALID,
                                "graph '%s': node '%s' (%s) reads a value made by itself or a later node "
                                "(a PFVM_NO_SHAPE_INFERENCE build takes the nodes in order only)",
                                g->name, pfvm__node_label(g->nodes[i], lb, sizeof lb), g->nodes[i]->op_type);
            }
        }
    }
    stbds_arrfree(deps);
    return rc;
}
#else
/* Min-heap of node positions (the ready set of the toposort). */
static void pfvm__topo_push(int *heap, int *n, int x)
{
    int i = (*n)++;
    while (i > 0 && heap[(i - 1) / 2] > x) {
        heap[i] = heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    heap[i] = x;
}

static int pfvm__topo_pop(int *heap, int *n)
{
    int top = heap[0], x = heap[--*n], i = 0;
    for (;;) {
        int c = 2 * i + 1;
        if (c >= *n)
            break;
        if (c + 1 < *n && heap[c + 1] < heap[c])
            c++;
        if (heap[c] >= x)
            break;
        heap[i] = heap[c];
        i = c;
    }
    if (*n > 0)
        heap[i] = x;
    return top;
}

static pfvm_code pfvm__scoped_graph_toposort(pfvm_graph *g, pfvm_status *st)
{
    int n = (int)stbds_arrlen(g->nodes), i, j, done = 0, n_heap = 0, n_edges = 0;
    int *indeg, *heap, *first, *edge_to, *fill;
    int *edge_from = NULL, *edge_dst = NULL;
    pfvm_node **order;
    pfvm_value **deps = NULL;
    pfvm_code rc = PFVM_OK;
    for (i = 0; i < n; i++)
        g->nodes[i]->id = i;
    /* edges producer -> reader, one per read (a node reading x twice waits
     * for it twice and is released twice) */
    for (i = 0; i < n && !rc; i++) {
        if (!pfvm__node_deps(g->nodes[i], &deps))
            rc = PFVM_ERR_NOMEM;
        for (j = 0; j < (int)stbds_arrlen(deps) && !rc; j++) {
            const pfvm_value *v = deps[j];
            if (v->graph == g && v->producer && v->producer->graph == g && v->producer->id < n &&
                g->nodes[v->producer->id] == v->producer &&
                (!pfvm__arrpush(edge_from, v->producer->id) || !pfvm__arrpush(edge_dst, i)))
                rc = PFVM_ERR_NOMEM;
        }
    }
    stbds_arrfree(deps);
    if (rc || stbds_arrlen(edge_from) != stbds_arrlen(edge_dst)) {
        stbds_arrfree(edge_from);
        stbds_arrfree(edge_dst);
        return pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
    }
    n_edges = (int)stbds_arrlen(edge_from);
    indeg = (int *)pfvm__calloc((size_t)n + 1, sizeof(int));
    heap = (int *)pfvm__calloc((size_t)n + 1, sizeof(int));
    first = (int *)pfvm__calloc((size_t)n + 2, sizeof(int));
    fill = (int *)pfvm__calloc((size_t)n + 1, sizeof(int));
    edge_to = (int *)pfvm__calloc((size_t)n_edges + 1, sizeof(int));
    order = (pfvm_node **)pfvm__calloc((size_t)n + 1, sizeof *order);
    if (!indeg || !heap || !first || !fill || !edge_to || !order) {
        rc = pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
        goto out;
    }
    /* compressed adjacency: first[p]..first[p+1] are p's readers */
    for (i = 0; i < n_edges; i++) {
        first[edge_from[i] + 1]++;
        indeg[edge_dst[i]]++;
    }
    for (i = 0; i < n; i++)
        first[i + 1] += first[i];
    for (i = 0; i < n_edges; i++)
        edge_to[first[edge_from[i]] + fill[edge_from[i]]++] = edge_dst[i];
    for (i = 0; i < n; i++)
        if (!indeg[i])
            pfvm__topo_push(heap, &n_heap, i);
    while (n_heap > 0) {
        int p = pfvm__topo_pop(heap, &n_heap);
        order[done++] = g->nodes[p];
        for (j = first[p]; j < first[p + 1]; j++)
            if (--indeg[edge_to[j]] == 0)
                pfvm__topo_push(heap, &n_heap, edge_to[j]);
    }
    if (done < n) {
        char lb[96];
        for (i = 0; i < n && !indeg[i]; i++) {
        }
        rc = pfvm__fail(st, PFVM_ERR_INVALID, "graph '%s': node '%s' (%s) is part of a cycle", g->name,
                        pfvm__node_label(g->nodes[i], lb, sizeof lb), g->nodes[i]->op_type);
    } else {
        for (i = 0; i < n; i++) {
            g->nodes[i] = order[i];
            order[i]->id = i;
        }
    }
out:
    stbds_arrfree(edge_from);
    stbds_arrfree(edge_dst);
    pfvm__free(indeg);
    pfvm__free(heap);
    pfvm__free(first);
    pfvm__free(fill);
    pfvm__free(edge_to);
    pfvm__free(order);
    return rc;
}
#endif

pfvm_code pfvm_graph_toposort(pfvm_graph *g, pfvm_status *st)
{
    PFVM__SCOPED(pfvm_code, pfvm__graph_allocator(g), pfvm__scoped_graph_toposort(g, st));
}

/* ---- editing ------------------------------------------------------------------ */

static pfvm_code pfvm__uses_add(pfvm_uses *u, pfvm_value *v, pfvm_node *node, int index, pfvm_graph *graph,
                                pfvm_node *top)
{
    pfvm_use use;
    if (v->graph != u->g || v->id < 0 || v->id >= u->n || ((pfvm_graph *)u->g)->values[v->id] != v)
        return PFVM_OK;
    use.node = node;
    use.index = index;
    use.graph = graph;
    use.top = top;
    if (!pfvm__arrpush(u->by_value[v->id], use))
        return PFVM_ERR_NOMEM;
    return PFVM_OK;
}

/* Readers in `sub` (g itself or a graph nested in it) of values of u->g. */
static pfvm_code pfvm__uses_scan(pfvm_uses *u, pfvm_graph *sub, pfvm_node *top)
{
    int i, j, k;
    for (i = 0; i < (int)stbds_arrlen(sub->nodes); i++) {
        pfvm_node *n = sub->nodes[i];
        pfvm_node *t = top ? top : n;
        for (j = 0; j < n->n_inputs; j++)
            if (n->inputs[j] && pfvm__uses_add(u, n->inputs[j], n, j, sub, t))
                return PFVM_ERR_NOMEM;
        for (j = 0; j < n->n_attrs; j++) {
            const pfvm_attr *a = &n->attrs[j];
            if (a->g && pfvm__uses_scan(u, a->g, t))
                return PFVM_ERR_NOMEM;
            for (k = 0; k < (a->type == PFVM_ATTR_GRAPHS ? a->n : 0); k++)
                if (pfvm__uses_scan(u, a->graphs[k], t))
                    return PFVM_ERR_NOMEM;
        }
    }
    for (i = 0; i < (int)stbds_arrlen(sub->outputs); i++)
        if (pfvm__uses_add(u, sub->outputs[i], NULL, i, sub, top))
            return PFVM_ERR_NOMEM;
    return PFVM_OK;
}

static pfvm_code pfvm__scoped_uses_build(pfvm_uses *u, const pfvm_graph *g, pfvm_status *st)
{
    int i;
    u->g = g;
    u->n = (int)stbds_arrlen(g->values);
    u->by_value = (pfvm_use **)pfvm__calloc((size_t)u->n + 1, sizeof *u->by_value);
    if (!u->by_value)
        return pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
    for (i = 0; i < u->n; i++)
        g->values[i]->id = i;
    if (pfvm__uses_scan(u, (pfvm_graph *)g, NULL)) {
        pfvm_uses_free(u);
        return pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
    }
    return PFVM_OK;
}

pfvm_code pfvm_uses_build(pfvm_uses *u, const pfvm_graph *g, pfvm_status *st)
{
    PFVM__SCOPED(pfvm_code, pfvm__graph_allocator(g), pfvm__scoped_uses_build(u, g, st));
}

void pfvm_uses_free(pfvm_uses *u)
{
    int i;
    if (!u->by_value)
        return;
    for (i = 0; i < u->n; i++)
        stbds_arrfree(u->by_value[i]);
    pfvm__free(u->by_value);
    u->by_value = NULL;
    u->n = 0;
}

const pfvm_use *pfvm_uses_of(const pfvm_uses *u, const pfvm_value *v, int *count)
{
    if (v->graph != u->g || v->id < 0 || v->id >= u->n) {
        *count = 0;
        return NULL;
    }
    *count = (int)stbds_arrlen(u->by_value[v->id]);
    return u->by_value[v->id];
}

int pfvm_uses_count(const pfvm_uses *u, const pfvm_value *v)
{
    int n;
    pfvm_uses_of(u, v, &n);
    return n;
}

static pfvm_code pfvm__scoped_value_rename(pfvm_value *v, const char *name, pfvm_status *st)
{
    pfvm_graph *g = v->graph;
    const char *copy;
    if (pfvm_graph_find(g, name))
        return pfvm__fail(st, PFVM_ERR_INVALID, "cannot rename '%s' to '%s': the name is taken", v->name, name);
    copy = pfvm_model_strdup(g->model, name);
    if (!copy)
        return pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
    if (!pfvm__map_put(&g->by_name, copy, v))
        return pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
    pfvm__map_del(&g->by_name, v->name);
    v->name = copy;
    if (v->init)
        v->init->name = copy;
    return PFVM_OK;
}

pfvm_code pfvm_value_rename(pfvm_value *v, const char *name, pfvm_status *st)
{
    PFVM__SCOPED(pfvm_code, pfvm__graph_allocator(v ? v->graph : NULL), pfvm__scoped_value_rename(v, name, st));
}

static void pfvm__replace_in(pfvm_graph *sub, pfvm_value *old, pfvm_value *repl)
{
    int i, j, k;
    for (i = 0; i < (int)stbds_arrlen(sub->nodes); i++) {
        pfvm_node *n = sub->nodes[i];
        for (j = 0; j < n->n_inputs; j++)
            if (n->inputs[j] == old)
                n->inputs[j] = repl;
        for (j = 0; j < n->n_attrs; j++) {
            const pfvm_attr *a = &n->attrs[j];
            if (a->g)
                pfvm__replace_in(a->g, old, repl);
            for (k = 0; k < (a->type == PFVM_ATTR_GRAPHS ? a->n : 0); k++)
                pfvm__replace_in(a->graphs[k], old, repl);
        }
    }
    for (i = 0; i < (int)stbds_arrlen(sub->outputs); i++)
        if (sub->outputs[i] == old && (sub->parent || old->graph != sub)) {
            sub->outputs[i] = repl;
            repl->is_output = 1;
        }
}

/* old (an output of the main graph g, with a producer) keeps its name and
 * place in g->outputs; repl takes over its readers. */
static pfvm_code pfvm__keep_output(pfvm_graph *g, pfvm_value *old, pfvm_value *repl, pfvm_status *st)
{
    char buf[300];
    int i;
    if (repl->graph == g && repl->producer && !repl->is_input && !repl->is_output && !repl->init) {
        /* swap names: repl becomes the output */
        const char *keep = old->name;
        pfvm_value *tmp;
        pfvm__snprintf(buf, sizeof buf, "%.250s__replaced", old->name);
        tmp = pfvm_graph_new_value(g, buf, st); /* reserves a unique name */
        if (!tmp)
            return st ? st->code : PFVM_ERR_NOMEM;
        pfvm__snprintf(buf, sizeof buf, "%s", tmp->name);
        if (pfvm_graph_remove_values(g, &tmp, 1, st) || pfvm_value_rename(old, buf, st))
            return st ? st->code : PFVM_ERR_INVALID;
        if (pfvm_value_rename(repl, keep, st))
            return st ? st->code : PFVM_ERR_INVALID;
        for (i = 0; i < (int)stbds_arrlen(g->outputs); i++)
            if (g->outputs[i] == old)
                g->outputs[i] = repl;
        repl->is_output = 1;
        old->is_output = 0;
        if (old->has_type_info) {
            repl->has_type_info = 1;
            repl->has_value_info = old->has_value_info;
            repl->type = old->type;
        }
        old->has_type_info = 0;
        old->has_value_info = 0;
        return PFVM_OK;
    } else {
        /* old = Identity(repl); old's producer writes a fresh value */
        pfvm_node *prod = old->producer, *id;
        pfvm_value *fresh, *in[1], *out[1];
        pfvm__snprintf(buf, sizeof buf, "%.250s__replaced", old->name);
        fresh = pfvm_graph_new_value(g, buf, st);
        if (!fresh)
            return st ? st->code : PFVM_ERR_NOMEM;
        fresh->type = old->type;
        prod->outputs[old->producer_index] = fresh;
        fresh->producer = prod;
        fresh->producer_index = old->producer_index;
        old->producer = NULL;
        in[0] = repl;
        out[0] = old;
        pfvm__snprintf(buf, sizeof buf, "%.250s__keep", old->name);
        id = pfvm_graph_add_node(g, "Identity", "", buf, in, 1, out, 1, st);
        /* its operator is resolved by the next pfvm_graph_resolve_ops /
         * pfvm_infer_shapes, like any new node's */
        return id ? PFVM_OK : (st ? st->code : PFVM_ERR_NOMEM);
    }
}

static pfvm_code pfvm__scoped_graph_replace_uses(pfvm_graph *g, pfvm_value *old, pfvm_value *repl, pfvm_status *st)
{
    int i, is_main_output = 0;
    if (old == repl)
        return PFVM_OK;
    for (i = 0; !g->parent && i < (int)stbds_arrlen(g->outputs); i++)
        if (g->outputs[i] == old)
            is_main_output = 1;
    pfvm__replace_in(g, old, repl);
    /* is_output stays set only while old still is an output of its graph
     * (subgraph outputs that named it now name repl) */
    old->is_output = 0;
    for (i = 0; i < (int)stbds_arrlen(old->graph->outputs); i++)
        if (old->graph->outputs[i] == old)
            old->is_output = 1;
    if (is_main_output && old->producer && old->graph == g)
        return pfvm__keep_output(g, old, repl, st);
    return PFVM_OK;
}

pfvm_code pfvm_graph_replace_uses(pfvm_graph *g, pfvm_value *old, pfvm_value *repl, pfvm_status *st)
{
    PFVM__SCOPED(pfvm_code, pfvm__graph_allocator(g), pfvm__scoped_graph_replace_uses(g, old, repl, st));
}

/* Drops the values marked in `drop` (indexed by id) from g's tables. */
static void pfvm__drop_values(pfvm_graph *g, const unsigned char *drop)
{
    int i, k = 0;
    for (i = 0; i < (int)stbds_arrlen(g->values); i++) {
        pfvm_value *v = g->values[i];
        if (drop[i]) {
            pfvm__map_del(&g->by_name, v->name);
            continue;
        }
        v->id = k;
        g->values[k++] = v;
    }
    pfvm__arrtrunc(g->values, k);
    for (i = 0, k = 0; i < (int)stbds_arrlen(g->inits); i++)
        if (!(g->inits[i]->graph == g && pfvm_graph_find_local(g, g->inits[i]->name) != g->inits[i]))
            g->inits[k++] = g->inits[i];
    pfvm__arrtrunc(g->inits, k);
    for (i = 0, k = 0; i < (int)stbds_arrlen(g->value_infos); i++)
        if (pfvm_graph_find_local(g, g->value_infos[i]->name) == g->value_infos[i])
            g->value_infos[k++] = g->value_infos[i];
    pfvm__arrtrunc(g->value_infos, k);
}

static unsigned char *pfvm__mark_values(pfvm_graph *g, pfvm_status *st)
{
    int i;
    unsigned char *m = (unsigned char *)pfvm__calloc(stbds_arrlen(g->values) + 1, 1);
    if (!m) {
        pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
        return NULL;
    }
    for (i = 0; i < (int)stbds_arrlen(g->values); i++)
        g->values[i]->id = i;
    return m;
}

static pfvm_code pfvm__scoped_graph_remove_values(pfvm_graph *g, pfvm_value *const *values, int count, pfvm_status *st)
{
    unsigned char *drop = pfvm__mark_values(g, st);
    int i;
    if (!drop)
        return st ? st->code : PFVM_ERR_NOMEM;
    for (i = 0; i < count; i++) {
        pfvm_value *v = values[i];
        if (v->graph != g || v->is_input || v->is_output || v->producer) {
            pfvm__free(drop);
            return pfvm__fail(st, PFVM_ERR_INVALID, "graph '%s': value '%s' cannot be removed (%s)", g->name, v->name,
                              v->graph != g ? "defined elsewhere" : v->producer ? "a node makes it" : "graph input or output");
        }
        drop[v->id] = 1;
    }
    pfvm__drop_values(g, drop);
    pfvm__free(drop);
    return PFVM_OK;
}

pfvm_code pfvm_graph_remove_values(pfvm_graph *g, pfvm_value *const *values, int count, pfvm_status *st)
{
    PFVM__SCOPED(pfvm_code, pfvm__graph_allocator(g), pfvm__scoped_graph_remove_values(g, values, count, st));
}

static void pfvm__free_subgraph(pfvm_graph *g, pfvm_graph *sub)
{
    int i, k = 0;
    for (i = 0; i < (int)stbds_arrlen(g->subgraphs); i++)
        if (g->subgraphs[i] != sub)
            g->subgraphs[k++] = g->subgraphs[i];
    if (k == (int)stbds_arrlen(g->subgraphs))
        return;
    pfvm__arrtrunc(g->subgraphs, k);
    pfvm__graph_free(sub);
}

static pfvm_code pfvm__scoped_graph_remove_nodes(pfvm_graph *g, pfvm_node *const *nodes, int count, pfvm_status *st)
{
    int n = (int)stbds_arrlen(g->nodes), i, j, k;
    unsigned char *dead, *drop;
    char lb[96];
    for (i = 0; i < n; i++)
        g->nodes[i]->id = i;
    for (i = 0; i < count; i++) {
        const pfvm_node *nd = nodes[i];
        if (nd->graph != g || nd->id < 0 || nd->id >= n || g->nodes[nd->id] != nd)
            return pfvm__fail(st, PFVM_ERR_INVALID, "node '%s' (%s) is not in graph '%s'",
                              pfvm__node_label(nd, lb, sizeof lb), nd->op_type, g->name);
        for (j = 0; j < nd->n_outputs; j++)
            for (k = 0; nd->outputs[j] && k < (int)stbds_arrlen(g->outputs); k++)
                if (g->outputs[k] == nd->outputs[j])
                    return pfvm__fail(st, PFVM_ERR_INVALID, "node '%s' (%s): cannot remove it, it makes graph output '%s'",
                                  pfvm__node_label(nd, lb, sizeof lb), nd->op_type, nd->outputs[j]->name);
    }
    dead = (unsigned char *)pfvm__calloc((size_t)n + 1, 1);
    drop = pfvm__mark_values(g, st);
    if (!dead || !drop) {
        pfvm__free(dead);
        pfvm__free(drop);
        return pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
    }
    for (i = 0; i < count; i++) {
        pfvm_node *nd = nodes[i];
        dead[nd->id] = 1;
        for (j = 0; j < nd->n_outputs; j++)
            if (nd->outputs[j] && nd->outputs[j]->graph == g) {
                drop[nd->outputs[j]->id] = 1;
                nd->outputs[j]->producer = NULL;
            }
        for (j = 0; j < nd->n_attrs; j++) {
            pfvm_attr *a = &nd->attrs[j];
            if (a->type == PFVM_ATTR_GRAPH && a->g)
                pfvm__free_subgraph(g, a->g);
            for (k = 0; a->type == PFVM_ATTR_GRAPHS && k < a->n; k++)
                pfvm__free_subgraph(g, a->graphs[k]);
        }
    }
    for (i = 0, k = 0; i < n; i++)
        if (!dead[i]) {
            g->nodes[k] = g->nodes[i];
            g->nodes[k]->id = k;
            k++;
        }
    pfvm__arrtrunc(g->nodes, k);
    pfvm__drop_values(g, drop);
    pfvm__free(dead);
    pfvm__free(drop);
    return PFVM_OK;
}

pfvm_code pfvm_graph_remove_nodes(pfvm_graph *g, pfvm_node *const *nodes, int count, pfvm_status *st)
{
    PFVM__SCOPED(pfvm_code, pfvm__graph_allocator(g), pfvm__scoped_graph_remove_nodes(g, nodes, count, st));
}

static pfvm_code pfvm__scoped_graph_remove_node(pfvm_graph *g, pfvm_node *n, pfvm_status *st)
{
    return pfvm_graph_remove_nodes(g, &n, 1, st);
}

pfvm_code pfvm_graph_remove_node(pfvm_graph *g, pfvm_node *n, pfvm_status *st)
{
    PFVM__SCOPED(pfvm_code, pfvm__graph_allocator(g), pfvm__scoped_graph_remove_node(g, n, st));
}

static pfvm_code pfvm__verify_scope(const pfvm_graph *g, pfvm_status *st)
{
    int i, j, k;
    char lb[96];
    for (i = 0; i < (int)stbds_arrlen(g->nodes); i++) {
        const pfvm_node *n = g->nodes[i];
        for (j = 0; j < n->n_inputs; j++) {
            const pfvm_value *v = n->inputs[j];
            const pfvm_graph *s;
            if (!v)
                continue;
            for (s = g; s && s != v->graph; s = s->parent) {
            }
            if (!s)
                return pfvm__fail(st, PFVM_ERR_INVALID, "node '%s' (%s): input '%s' is not visible in its scope",
                                  pfvm__node_label(n, lb, sizeof lb), n->op_type, v->name);
            if (v->graph == g && v->producer && v->producer->id >= n->id && v->producer->graph == g)
                return pfvm__fail(st, PFVM_ERR_INVALID, "node '%s' (%s): input '%s' is used before it is defined",
                                  pfvm__node_label(n, lb, sizeof lb), n->op_type, v->name);
            if (!v->producer && !v->is_input && !v->init)
                return pfvm__fail(st, PFVM_ERR_INVALID, "node '%s' (%s): input '%s' is never defined",
                                  pfvm__node_label(n, lb, sizeof lb), n->op_type, v->name);
        }
        for (j = 0; PFVM__IR_SUBGRAPHS && j < n->n_attrs; j++) {
            const pfvm_attr *a = &n->attrs[j];
            if (a->g && pfvm__verify_scope(a->g, st))
                return st ? st->code : PFVM_ERR_INVALID;
            for (k = 0; k < (a->type == PFVM_ATTR_GRAPHS ? a->n : 0); k++)
                if (pfvm__verify_scope(a->graphs[k], st))
                    return st ? st->code : PFVM_ERR_INVALID;
        }
    }
    for (i = 0; i < (int)stbds_arrlen(g->outputs); i++) {
        const pfvm_value *v = g->outputs[i];
        if (!v->producer && !v->is_input && !v->init && v->graph == g)
            return pfvm__fail(st, PFVM_ERR_INVALID, "graph '%s': output '%s' is never defined", g->name, v->name);
    }
    return PFVM_OK;
}

static pfvm_code pfvm__scoped_graph_verify(const pfvm_graph *g, pfvm_status *st)
{
    return pfvm__verify_scope(g, st);
}

pfvm_code pfvm_graph_verify(const pfvm_graph *g, pfvm_status *st)
{
    PFVM__SCOPED(pfvm_code, pfvm__graph_allocator(g), pfvm__scoped_graph_verify(g, st));
}

/* ---- shapes ------------------------------------------------------------------ */

void pfvm_shape_unknown(pfvm_shape *s)
{
    memset(s, 0, sizeof *s);
    s->rank = -1;
}

pfvm_code pfvm_shape_from_dims(pfvm_symtab *t, pfvm_shape *s, int rank, const int64_t *dims, pfvm_status *st)
{
    int i;
    if (rank > PFVM_MAX_RANK)
        return pfvm__fail(st, PFVM_ERR_UNSUPPORTED, "rank %d exceeds PFVM_MAX_RANK (%d)", rank, PFVM_MAX_RANK);
    s->rank = rank;
    for (i = 0; i < rank; i++) {
        s->dims[i] = pfvm_sym_const(t, dims[i]);
        if (!s->dims[i])
            return pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
    }
    return PFVM_OK;
}

int pfvm_shape_eval(const pfvm_shape *s, const pfvm_binding *b, int64_t *dims)
{
    int i;
    if (s->rank < 0)
        return 0;
    for (i = 0; i < s->rank; i++)
        if (!pfvm_sym_eval(s->dims[i], b, &dims[i]))
            return 0;
    return 1;
}

int pfvm_shape_print(const pfvm_shape *s, char *buf, size_t n)
{
    size_t len = 0;
    int i;
#define PFVM__AT (buf + (len < n ? len : n)), (len < n ? n - len : 0)
    if (s->rank < 0)
        return pfvm__snprintf(buf, n, "?");
    len += (size_t)pfvm__snprintf(PFVM__AT, "[");
    for (i = 0; i < s->rank; i++) {
        if (i)
            len += (size_t)pfvm__snprintf(PFVM__AT, ",");
        len += (size_t)pfvm_sym_print(s->dims[i], PFVM__AT);
    }
    len += (size_t)pfvm__snprintf(PFVM__AT, "]");
#undef PFVM__AT
    return (int)len;
}

int pfvm_type_print(const pfvm_type *t, char *buf, size_t n)
{
    size_t len;
    switch (t->kind) {
    case PFVM_KIND_TENSOR:
        len = (size_t)pfvm__snprintf(buf, n, "%s", pfvm_dtype_name(t->dtype));
        return (int)len + pfvm_shape_print(&t->shape, buf + (len < n ? len : n), len < n ? n - len : 0);
    case PFVM_KIND_SEQUENCE:
    case PFVM_KIND_OPTIONAL: {
        const char *w = t->kind == PFVM_KIND_SEQUENCE ? "seq(" : "optional(";
        len = (size_t)pfvm__snprintf(buf, n, "%s", w);
        if (t->elem)
            len += (size_t)pfvm_type_print(t->elem, buf + (len < n ? len : n), len < n ? n - len : 0);
        else
            len += (size_t)pfvm__snprintf(buf + (len < n ? len : n), len < n ? n - len : 0, "?");
        len += (size_t)pfvm__snprintf(buf + (len < n ? len : n), len < n ? n - len : 0, ")");
        return (int)len;
    }
    case PFVM_KIND_MAP:
        return pfvm__snprintf(buf, n, "map(%s,...)", pfvm_dtype_name(t->key_dtype));
    default:
        return pfvm__snprintf(buf, n, "?");
    }
}

#ifndef PFVM_NO_STDIO
void pfvm_graph_dump(const pfvm_graph *g, FILE *f)
{
    int i, j;
    char buf[512], lb[96];
    fprintf(f, "graph %s (%d nodes)\n", g->name, (int)stbds_arrlen(g->nodes));
    for (i = 0; i < (int)stbds_arrlen(g->inputs); i++) {
        pfvm_type_print(&g->inputs[i]->type, buf, sizeof buf);
        fprintf(f, "  input %s: %s\n", g->inputs[i]->name, buf);
    }
    for (i = 0; i < (int)stbds_arrlen(g->nodes); i++) {
        const pfvm_node *n = g->nodes[i];
        fprintf(f, "  %s = %s%s%s(", pfvm__node_label(n, lb, sizeof lb), n->domain[0] ? n->domain : "",
                n->domain[0] ? "." : "", n->op_type);
        for (j = 0; j < n->n_inputs; j++)
            fprintf(f, "%s%s", j ? ", " : "", n->inputs[j] ? n->inputs[j]->name : "");
        fprintf(f, ") -> ");
        for (j = 0; j < n->n_outputs; j++) {
            if (n->outputs[j])
                pfvm_type_print(&n->outputs[j]->type, buf, sizeof buf);
            fprintf(f, "%s%s: %s", j ? ", " : "", n->outputs[j] ? n->outputs[j]->name : "",
                    n->outputs[j] ? buf : "");
        }
        fprintf(f, "\n");
    }
    for (i = 0; i < (int)stbds_arrlen(g->outputs); i++) {
        pfvm_type_print(&g->outputs[i]->type, buf, sizeof buf);
        fprintf(f, "  output %s: %s\n", g->outputs[i]->name, buf);
    }
}
#endif

/* ---- lists, counts and setters for programs ------------------------------- */

int pfvm_graph_num_nodes(const pfvm_graph *g) { return g ? (int)stbds_arrlen(g->nodes) : 0; }
pfvm_node *pfvm_graph_node(const pfvm_graph *g, int i)
{
    return i >= 0 && i < pfvm_graph_num_nodes(g) ? g->nodes[i] : NULL;
}
int pfvm_graph_num_inputs(const pfvm_graph *g) { return g ? (int)stbds_arrlen(g->inputs) : 0; }
pfvm_value *pfvm_graph_input(const pfvm_graph *g, int i)
{
    return i >= 0 && i < pfvm_graph_num_inputs(g) ? g->inputs[i] : NULL;
}
int pfvm_graph_num_outputs(const pfvm_graph *g) { return g ? (int)stbds_arrlen(g->outputs) : 0; }
pfvm_value *pfvm_graph_output(const pfvm_graph *g, int i)
{
    return i >= 0 && i < pfvm_graph_num_outputs(g) ? g->outputs[i] : NULL;
}
int pfvm_graph_num_initializers(const pfvm_graph *g) { return g ? (int)stbds_arrlen(g->inits) : 0; }
pfvm_value *pfvm_graph_initializer(const pfvm_graph *g, int i)
{
    return i >= 0 && i < pfvm_graph_num_initializers(g) ? g->inits[i] : NULL;
}
int pfvm_tensor_num_elems(const pfvm_tensor *t) { return t ? (int)stbds_arrlen(t->elems) : 0; }
pfvm_tensor *pfvm_tensor_elem(const pfvm_tensor *t, int i)
{
    return i >= 0 && i < pfvm_tensor_num_elems(t) ? t->elems[i] : NULL;
}

const char *pfvm_node_label(const pfvm_node *n, char *buf, size_t size)
{
    return pfvm__node_label(n, buf, size);
}

int pfvm_graph_num_values(const pfvm_graph *g) { return g ? (int)stbds_arrlen(g->values) : 0; }
pfvm_value *pfvm_graph_value_at(const pfvm_graph *g, int i)
{
    return i >= 0 && i < pfvm_graph_num_values(g) ? g->values[i] : NULL;
}
int pfvm_model_num_opsets(const pfvm_model *m) { return m ? (int)stbds_arrlen(m->opsets) : 0; }
const pfvm_opset_import *pfvm_model_opset_at(const pfvm_model *m, int i)
{
    return i >= 0 && i < pfvm_model_num_opsets(m) ? &m->opsets[i] : NULL;
}
int pfvm_model_num_metadata(const pfvm_model *m) { return m ? (int)stbds_arrlen(m->metadata) : 0; }
const pfvm_string_pair *pfvm_model_metadata_at(const pfvm_model *m, int i)
{
    return i >= 0 && i < pfvm_model_num_metadata(m) ? &m->metadata[i] : NULL;
}
int pfvm_model_num_functions(const pfvm_model *m) { return m ? (int)stbds_arrlen(m->functions) : 0; }
pfvm_function *pfvm_model_function_at(const pfvm_model *m, int i)
{
    return i >= 0 && i < pfvm_model_num_functions(m) ? m->functions[i] : NULL;
}

/* ---- sequences and optionals ---------------------------------------------- */

/* An empty container as the sequence and optional kernels make them (rank
 * -1: a container has no shape of its own). */
static pfvm_tensor *pfvm__tensor_container(pfvm_kind kind, pfvm_dtype elem_dtype, pfvm_status *st)
{
    pfvm_tensor *t;
    if (elem_dtype != PFVM_UNDEFINED && !pfvm_dtype_size(elem_dtype)) {
        pfvm__fail(st, PFVM_ERR_UNSUPPORTED, "%s: unknown element type %d",
                   kind == PFVM_KIND_SEQUENCE ? "sequence" : "optional", (int)elem_dtype);
        return NULL;
    }
    if (!(t = (pfvm_tensor *)pfvm__calloc(1, sizeof *t))) {
        pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
        return NULL;
    }
    t->kind = kind;
    t->rank = -1;
    t->elem_dtype = t->dtype = elem_dtype;
    return t;
}

pfvm_tensor *pfvm_tensor_sequence_new(pfvm_dtype elem_dtype, pfvm_status *st)
{
    return pfvm__tensor_container(PFVM_KIND_SEQUENCE, elem_dtype, st);
}

pfvm_tensor *pfvm_tensor_optional_new(pfvm_dtype elem_dtype, pfvm_status *st)
{
    return pfvm__tensor_container(PFVM_KIND_OPTIONAL, elem_dtype, st);
}

/* The element type a value gives its container: a tensor's dtype, a
 * container's element type. */
static pfvm_dtype pfvm__elem_dtype_of(const pfvm_tensor *e)
{
    return e->kind == PFVM_KIND_TENSOR ? e->dtype : e->elem_dtype;
}

pfvm_code pfvm_tensor_push_elem(pfvm_tensor *t, pfvm_tensor *elem, pfvm_status *st)
{
    pfvm_dtype d;
    if (!t || (t->kind != PFVM_KIND_SEQUENCE && t->kind != PFVM_KIND_OPTIONAL))
        return pfvm__fail(st, PFVM_ERR_INVALID, "push element: not a sequence or optional");
    if (!elem || elem == t)
        return pfvm__fail(st, PFVM_ERR_INVALID, "push element: no element, or the container itself");
    if (t->kind == PFVM_KIND_OPTIONAL && stbds_arrlen(t->elems))
        return pfvm__fail(st, PFVM_ERR_INVALID, "push element: the optional already holds a value");
    d = pfvm__elem_dtype_of(elem);
    if (t->elem_dtype != PFVM_UNDEFINED && d != PFVM_UNDEFINED && d != t->elem_dtype)
        return pfvm__fail(st, PFVM_ERR_SHAPE, "push element: a %s element into a container of %s",
                          pfvm_dtype_name(d), pfvm_dtype_name(t->elem_dtype));
    if (!pfvm__arrpush(t->elems, elem))
        return pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
    if (t->elem_dtype == PFVM_UNDEFINED)
        t->elem_dtype = t->dtype = d;
    t->has_value = t->kind == PFVM_KIND_OPTIONAL;
    return PFVM_OK;
}

/* ---- model-local functions ------------------------------------------------ */

static pfvm_function *pfvm__scoped_model_add_function(pfvm_model *m, const char *domain, const char *name,
                                                      pfvm_status *st)
{
    pfvm_function *f;
    pfvm_graph *body;
    int i, n;
    if (!m || !name || !*name) {
        pfvm__fail(st, PFVM_ERR_INVALID, "add function: no model or no name");
        return NULL;
    }
    domain = domain ? domain : "";
    for (i = 0; i < pfvm_model_num_functions(m); i++)
        if (!strcmp(m->functions[i]->name ? m->functions[i]->name : "", name) &&
            !strcmp(m->functions[i]->domain ? m->functions[i]->domain : "", domain)) {
            pfvm__fail(st, PFVM_ERR_INVALID, "add function: '%s' of domain '%s' exists", name, domain);
            return NULL;
        }
    n = pfvm_model_num_opsets(m);
    f = (pfvm_function *)pfvm_model_alloc(m, sizeof *f);
    if (f)
        memset(f, 0, sizeof *f);
    if (!f || !(f->name = pfvm_model_strdup(m, name)) || !(f->domain = pfvm_model_strdup(m, domain)) ||
        (n && !(f->opsets = (pfvm_opset_import *)pfvm_model_alloc(m, sizeof *f->opsets * (size_t)n)))) {
        pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
        return NULL;
    }
    f->doc = "";
    for (i = 0; i < n; i++)
        f->opsets[i] = m->opsets[i];
    f->n_opsets = n;
    if (!(body = pfvm__scoped_graph_new(m, NULL, name, st)))
        return NULL;
    if (m->graph == body)
        m->graph = NULL; /* a body, never the main graph */
    f->body = body;
    if (!pfvm__arrpush(m->functions, f)) {
        pfvm__graph_free(body);
        pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
        return NULL;
    }
    return f;
}

pfvm_function *pfvm_model_add_function(pfvm_model *m, const char *domain, const char *name, pfvm_status *st)
{
    PFVM__SCOPED(pfvm_function *, pfvm__model_allocator(m), pfvm__scoped_model_add_function(m, domain, name, st));
}


static pfvm_code pfvm__scoped_value_set_tensor_type(pfvm_value *v, pfvm_dtype dtype, int rank, const pfvm_sym *const *dims,
                                     pfvm_status *st)
{
    int i;
    if (!v || rank < 0 || rank > PFVM_MAX_RANK || (rank > 0 && !dims))
        return pfvm__fail(st, PFVM_ERR_INVALID, "pfvm_value_set_tensor_type: bad value or rank %d", rank);
    for (i = 0; i < rank; i++)
        if (!dims[i])
            return pfvm__fail(st, PFVM_ERR_INVALID, "value '%s': dim %d is NULL", v->name, i);
    v->type.kind = PFVM_KIND_TENSOR;
    v->type.dtype = dtype;
    v->type.shape.rank = rank;
    for (i = 0; i < rank; i++)
        v->type.shape.dims[i] = dims[i];
    v->has_type_info = 1;
    pfvm__ok(st);
    return PFVM_OK;
}

pfvm_code pfvm_value_set_tensor_type(pfvm_value *v, pfvm_dtype dtype, int rank, const pfvm_sym *const *dims,
                                     pfvm_status *st)
{
    PFVM__SCOPED(pfvm_code, pfvm__graph_allocator(v ? v->graph : NULL),
                 pfvm__scoped_value_set_tensor_type(v, dtype, rank, dims, st));
}
