/* The dce pass: dead-code elimination. A node lives when a graph output or
 * a living node (through an input or a subgraph's capture) reads one of
 * its outputs; the others go, innermost graphs first so that captures
 * dropped there free the outer nodes they kept. Then initializers nothing
 * reads go (graph inputs stay: they are the model's interface). */
#include "passes.h"
#include "../opi/rewrite.h"

static pfvm_code pfvm__dce_graph(pfvm_graph *g, pfvm_pass_stats *stats, pfvm_status *st);

static pfvm_code pfvm__dce_subgraphs(pfvm_graph *g, pfvm_pass_stats *stats, pfvm_status *st)
{
    int i, j, k;
    pfvm_code rc = PFVM_OK;
    for (i = 0; !rc && i < (int)stbds_arrlen(g->nodes); i++) {
        pfvm_node *n = g->nodes[i];
        for (j = 0; !rc && j < n->n_attrs; j++) {
            pfvm_attr *a = &n->attrs[j];
            if (a->type == PFVM_ATTR_GRAPH && a->g)
                rc = pfvm__dce_graph(a->g, stats, st);
            for (k = 0; !rc && a->type == PFVM_ATTR_GRAPHS && k < a->n; k++)
                rc = pfvm__dce_graph(a->graphs[k], stats, st);
        }
    }
    return rc;
}

static pfvm_code pfvm__dce_graph(pfvm_graph *g, pfvm_pass_stats *stats, pfvm_status *st)
{
    int nv, n, i, j;
    unsigned char *need;
    pfvm_value **deps = NULL, **unused = NULL;
    pfvm_node **dead = NULL;
    pfvm_uses u;
    pfvm_code rc = pfvm__dce_subgraphs(g, stats, st);
    if (rc || (rc = pfvm_graph_toposort(g, st)) != PFVM_OK)
        return rc;
    nv = (int)stbds_arrlen(g->values);
    n = (int)stbds_arrlen(g->nodes);
    if (!(need = (unsigned char *)pfvm__calloc((size_t)nv + 1, 1)))
        return pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
    for (i = 0; i < nv; i++)
        g->values[i]->id = i;
    for (i = 0; i < (int)stbds_arrlen(g->outputs); i++)
        if (g->outputs[i]->graph == g)
            need[g->outputs[i]->id] = 1;
    /* nodes are in topological order: readers come after producers */
    for (i = n - 1; i >= 0; i--) {
        pfvm_node *nd = g->nodes[i];
        int live = 0;
        for (j = 0; j < nd->n_outputs; j++)
            if (nd->outputs[j] && nd->outputs[j]->graph == g && need[nd->outputs[j]->id])
                live = 1;
        if (!live) {
            if (!pfvm__arrpush(dead, nd)) {
                rc = pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
                break;
            }
            continue;
        }
        if (!pfvm__node_deps(nd, &deps)) {
            rc = pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
            break;
        }
        for (j = 0; j < (int)stbds_arrlen(deps); j++)
            if (deps[j]->graph == g)
                need[deps[j]->id] = 1;
    }
    if (!rc && stbds_arrlen(dead)) {
        rc = pfvm_graph_remove_nodes(g, dead, (int)stbds_arrlen(dead), st);
        stats->removed += (int)stbds_arrlen(dead);
    }
    /* initializers nothing reads any more */
    if (!rc && (rc = pfvm_uses_build(&u, g, st)) == PFVM_OK) {
        for (i = 0; i < (int)stbds_arrlen(g->inits); i++) {
            pfvm_value *v = g->inits[i];
            if (v->graph == g && !v->is_input && !v->is_output && !v->producer && !pfvm_uses_count(&u, v))
                if (!pfvm__arrpush(unused, v))
                    rc = pfvm__fail(st, PFVM_ERR_NOMEM, "out of memory");
        }
        pfvm_uses_free(&u);
        if (!rc && stbds_arrlen(unused))
            rc = pfvm_graph_remove_values(g, unused, (int)stbds_arrlen(unused), st);
    }
    stbds_arrfree(deps);
    stbds_arrfree(dead);
    stbds_arrfree(unused);
    pfvm__free(need);
    return rc;
}

PFVM_INTERNAL pfvm_code pfvm__pass_dce(pfvm_model *m, pfvm_graph *g, pfvm_pass_stats *stats, pfvm_status *st)
{
    (void)m;
    return pfvm__dce_graph(g, stats, st);
}
