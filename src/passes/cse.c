/* The cse pass: common-subexpression elimination. Small initializers with
 * the same type, shape and bytes become one; then two deterministic nodes
 * with the same operator, the same inputs and equal attributes (and no
 * subgraphs) compute the same thing, so the later one's readers read the
 * earlier one's outputs and it goes. Nodes are visited in topological
 * order, so chains of duplicates collapse in one walk. */
#include "recompute.h"
#include "passes.h"
#include "../opi/rewrite.h"

/* Initializers up to this many bytes are compared by content. */
#define PFVM__CSE_INIT_BYTES 65536

typedef struct pfvm__cse {
    pfvm_pass_stats *stats;
    pfvm_status *st;
} pfvm__cse;

static size_t pfvm__cse_bytes(const pfvm_tensor *t)
{
    int64_t n = pfvm_tensor_numel(t);
    return n > 0 ? (size_t)n * pfvm_dtype_size(t->dtype) : 0;
}

static int pfvm__cse_tensor_eq(const pfvm_tensor *a, const pfvm_tensor *b)
{
    int64_t i, n;
    if (!a || !b || a->kind != PFVM_KIND_TENSOR || b->kind != PFVM_KIND_TENSOR || a->dtype != b->dtype ||
        a->rank != b->rank || (a->rank && memcmp(a->dims, b->dims, sizeof(int64_t) * (size_t)a->rank)))
        return 0;
    n = pfvm_tensor_numel(a);
    if (!n)
        return 1;
    if (!a->data || !b->data)
        return 0;
    if (a->dtype == PFVM_STRING) {
        for (i = 0; i < n; i++) {
            const char *x = ((char *const *)a->data)[i], *y = ((char *const *)b->data)[i];
            if (strcmp(x ? x : "", y ? y : ""))
                return 0;
        }
        return 1;
    }
    return !memcmp(a->data, b->data, pfvm__cse_bytes(a));
}

static int pfvm__cse_attr_eq(const pfvm_attr *a, const pfvm_attr *b)
{
    int i;
    if (a->type != b->type || strcmp(a->name, b->name) || (a->ref_attr_name == NULL) != (b->ref_attr_name == NULL) ||
        (a->ref_attr_name && strcmp(a->ref_attr_name, b->ref_attr_name)))
        return 0;
    switch (a->type) {
    case PFVM_ATTR_FLOAT: return !memcmp(&a->f, &b->f, sizeof a->f);
    case PFVM_ATTR_INT: return a->i == b->i;
    case PFVM_ATTR_STRING: return a->s_len == b->s_len && (!a->s_len || !memcmp(a->s, b->s, a->s_len));
    case PFVM_ATTR_FLOATS: return a->n == b->n && (!a->n || !memcmp(a->floats, b->floats, sizeof(float) * (size_t)a->n));
    case PFVM_ATTR_INTS: return a->n == b->n && (!a->n || !memcmp(a->ints, b->ints, sizeof(int64_t) * (size_t)a->n));
    case PFVM_ATTR_STRINGS:
        if (a->n != b->n)
            return 0;
        for (i = 0; i < a->n; i++) {
            size_t la = a->strings_len ? a->strings_len[i] : strlen(a->strings[i]);
            size_t lb = b->strings_len ? b->strings_len[i] : strlen(b->strings[i]);
            if (la != lb || (la && memcmp(a->strings[i], b->strings[i], la)))
                return 0;
        }
        return 1;
    case PFVM_ATTR_TENSOR: return pfvm__cse_tensor_eq(a->t, b->t);
    case PFVM_ATTR_TENSORS:
        if (a->n != b->n)
            return 0;
        for (i = 0; i < a->n; i++)
            if (!pfvm__cse_tensor_eq(a->tensors[i], b->tensors[i]))
                return 0;
        return 1;
    default: return 0; /* graphs, sparse tensors, type protos: never merged */
    }
}

static int pfvm__cse_same(const pfvm_node *a, const pfvm_node *b)
{
    int i, j;
    if (a->op != b->op || strcmp(a->op_type, b->op_type) || strcmp(a->domain, b->domain) ||
        a->n_inputs != b->n_inputs || a->n_outputs != b->n_outputs || a->n_attrs != b->n_attrs ||
        strcmp(a->overload ? a->overload : "", b->overload ? b->overload : ""))
        return 0;
    for (i = 0; i < a->n_inputs; i++)
        if (a->inputs[i] != b->inputs[i])
            return 0;
    for (i = 0; i < a->n_outputs; i++)
        if ((a->outputs[i] == NULL) != (b->outputs[i] == NULL))
            return 0;
    for (i = 0; i < a->n_attrs; i++) {
        int found = 0;
        for (j = 0; j < b->n_attrs && !found; j++)
            if (!strcmp(a->attrs[i].name, b->attrs[j].name))
                found = pfvm__cse_attr_eq(&a->attrs[i], &b->attrs[j]) ? 1 : -1;
        if (found != 1)
            return 0;
    }
    return 1;
}

static int pfvm__cse_candidate(const pfvm_node *n)
{
    int j;
    /* a recomputation duplicates on purpose: merged back, it would keep its
       activation alive again */
    if (!n->op || (n->op->flags & PFVM_OP_NONDETERMINISTIC) || n->n_outputs < 1 || pfvm_node_is_recompute(n))
        return 0;
    for (j = 0; j < n->n_attrs; j++)
        if (n->attrs[j].type == PFVM_ATTR_GRAPH || n->attrs[j].type == PFVM_ATTR_GRAPHS)
            return 0;
    return 1;
}

static uint64_t pfvm__cse_hash(const void *p, size_t n)
{
    const unsigned char *b = (const unsigned char *)p;
    uint64_t h = 1469598103934665603ull;
    size_t i;
    for (i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

/* Appends to an stb_ds char buffer; sets *oom when it cannot grow. */
static void pfvm__cse_put(char **buf, int *oom, const char *fmt, ...)
{
    char tmp[128];
    va_list ap;
    int n, i;
    va_start(ap, fmt);
    n = pfvm__vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    for (i = 0; i < n && i < (int)sizeof tmp - 1 && !*oom; i++)
        if (!pfvm__arrpush(*buf, tmp[i]))
            *oom = 1;
}

/* The bucket of `key` (a copy kept in keys), made when new; -1 when out of
 * memory. The map's values are bucket indexes plus 1. */
static int pfvm__cse_bucket_of(pfvm__map *map, pfvm_arena *keys, const char *key, void ***buckets)
{
    void *found;
    const char *copy;
    if (pfvm__map_get(map, key, &found))
        return (int)(uintptr_t)found - 1;
    if (!pfvm__arrreserve(*buckets, (size_t)stbds_arrlen(*buckets) + 1) || !(copy = pfvm__arena_strdup(keys, key)) ||
        !pfvm__map_put(map, copy, (void *)(uintptr_t)(stbds_arrlen(*buckets) + 1)))
        return -1;
    stbds_arrput(*buckets, NULL);
    return (int)stbds_arrlen(*buckets) - 1;
}

/* Merges small initializers with equal contents. */
static pfvm_code pfvm__cse_inits(pfvm__cse *C, pfvm_graph *g)
{
    pfvm__map map;
    pfvm_arena keys;
    void **buckets = NULL; /* each an stb_ds array of pfvm_value * */
    pfvm_value **gone = NULL;
    char *key = NULL;
    pfvm_code rc = PFVM_OK;
    int i, j, k, n = (int)stbds_arrlen(g->inits), oom = 0;
    pfvm__map_init(&map, 1);
    memset(&keys, 0, sizeof keys);
    for (i = 0; i < n && !rc && !oom; i++) {
        pfvm_value *v = g->inits[i];
        const pfvm_tensor *t = v->init;
        pfvm_value **b;
        int at, merged = 0;
        if (v->graph != g || v->is_input || v->is_output || !t || t->kind != PFVM_KIND_TENSOR ||
            t->dtype == PFVM_STRING || (!t->data && pfvm_tensor_numel(t)) || pfvm__cse_bytes(t) > PFVM__CSE_INIT_BYTES)
            continue;
        pfvm__arrtrunc(key, 0);
        pfvm__cse_put(&key, &oom, "%d:%d", (int)t->dtype, t->rank);
        for (k = 0; k < t->rank; k++)
            pfvm__cse_put(&key, &oom, ",%lld", (long long)t->dims[k]);
        pfvm__cse_put(&key, &oom, ":%llx", (unsigned long long)pfvm__cse_hash(t->data, pfvm__cse_bytes(t)));
        if (oom || !pfvm__arrpush(key, 0) || (at = pfvm__cse_bucket_of(&map, &keys, key, &buckets)) < 0) {
            oom = 1;
            break;
        }
        b = (pfvm_value **)buckets[at];
        for (j = 0; j < (int)stbds_arrlen(b) && !merged; j++)
            if (pfvm__cse_tensor_eq(b[j]->init, t)) {
                if ((rc = pfvm__rw_replace_value(g, v, b[j], &merged, C->st)) != PFVM_OK)
                    break;
            }
        if (rc)
            break;
        if (merged) {
            if (!pfvm__arrpush(gone, v))
                oom = 1;
            continue;
        }
        if (!pfvm__arrpush(b, v))
            oom = 1;
        buckets[at] = b;
    }
    if (oom && !rc)
        rc = pfvm__fail(C->st, PFVM_ERR_NOMEM, "out of memory");
    if (!rc && stbds_arrlen(gone))
        rc = pfvm_graph_remove_values(g, gone, (int)stbds_arrlen(gone), C->st);
    for (i = 0; i < (int)stbds_arrlen(buckets); i++) {
        pfvm_value **b = (pfvm_value **)buckets[i];
        stbds_arrfree(b);
    }
    stbds_arrfree(buckets);
    stbds_arrfree(gone);
    stbds_arrfree(key);
    pfvm__map_free(&map);
    pfvm__arena_free(&keys);
    return rc;
}

static pfvm_code pfvm__cse_graph(void *user, pfvm_graph *g)
{
    pfvm__cse *C = (pfvm__cse *)user;
    pfvm__map map;
    pfvm_arena keys;
    void **buckets = NULL; /* each an stb_ds array of pfvm_node * */
    pfvm_node **dead = NULL;
    char *key = NULL;
    pfvm_code rc = pfvm__cse_inits(C, g);
    int i, j, n, oom = 0;
    if (rc || (rc = pfvm_graph_toposort(g, C->st)) != PFVM_OK)
        return rc;
    n = (int)stbds_arrlen(g->nodes);
    pfvm__map_init(&map, 1);
    memset(&keys, 0, sizeof keys);
    for (i = 0; i < n && !rc && !oom; i++) {
        pfvm_node *nd = g->nodes[i];
        pfvm_node *same = NULL, **b;
        int at;
        if (!pfvm__cse_candidate(nd))
            continue;
        pfvm__arrtrunc(key, 0);
        pfvm__cse_put(&key, &oom, "%s:%s:%d", nd->domain, nd->op_type, nd->n_outputs);
        for (j = 0; j < nd->n_inputs; j++)
            pfvm__cse_put(&key, &oom, ",%p", (void *)nd->inputs[j]);
        if (oom || !pfvm__arrpush(key, 0) || (at = pfvm__cse_bucket_of(&map, &keys, key, &buckets)) < 0) {
            oom = 1;
            break;
        }
        b = (pfvm_node **)buckets[at];
        for (j = 0; j < (int)stbds_arrlen(b) && !same; j++)
            if (pfvm__cse_same(b[j], nd))
                same = b[j];
        if (!same) {
            if (!pfvm__arrpush(b, nd))
                oom = 1;
            buckets[at] = b;
            continue;
        }
        {
            int all = 1, done;
            for (j = 0; j < nd->n_outputs && !rc; j++) {
                if (!nd->outputs[j])
                    continue;
                rc = pfvm__rw_replace_value(g, nd->outputs[j], same->outputs[j], &done, C->st);
                all &= done;
            }
            if (all && !rc) {
                if (!pfvm__arrpush(dead, nd))
                    oom = 1;
                C->stats->rewritten++;
            }
        }
    }
    if (oom && !rc)
        rc = pfvm__fail(C->st, PFVM_ERR_NOMEM, "out of memory");
    if (!rc && stbds_arrlen(dead)) {
        rc = pfvm_graph_remove_nodes(g, dead, (int)stbds_arrlen(dead), C->st);
        C->stats->removed += (int)stbds_arrlen(dead);
    }
    for (i = 0; i < (int)stbds_arrlen(buckets); i++) {
        pfvm_node **b = (pfvm_node **)buckets[i];
        stbds_arrfree(b);
    }
    stbds_arrfree(buckets);
    stbds_arrfree(dead);
    stbds_arrfree(key);
    pfvm__map_free(&map);
    pfvm__arena_free(&keys);
    return rc;
}

PFVM_INTERNAL pfvm_code pfvm__pass_cse(pfvm_model *m, pfvm_graph *g, pfvm_pass_stats *stats, pfvm_status *st)
{
    pfvm__cse C;
    (void)m;
    C.stats = stats;
    C.st = st;
    return pfvm__for_graphs(g, pfvm__cse_graph, &C);
}
