/* The simplify, bnfold and compose passes: they run the operators' own simplify
 * hooks (pfvm_op_def.simplify) over every graph, re-inferring between
 * rounds, until no hook changes anything. What each operator can drop or
 * merge lives with the operator (src/ops); these drivers only ask. */
#include "passes.h"
#include "../opi/rewrite.h"

#define PFVM__SIMPLIFY_ROUNDS 16

static pfvm_code pfvm__simplify_graph(void *user, pfvm_graph *g)
{
    pfvm_rewrite *rw = (pfvm_rewrite *)user;
    pfvm_node **todo = NULL;
    pfvm_code rc = PFVM_OK;
    int i, n = (int)stbds_arrlen(g->nodes);
    pfvm_rw_set_graph(rw, g);
    /* hooks append nodes: walk the nodes as they were */
    if (!pfvm__arrsetlen(todo, n))
        return pfvm__fail(rw->st, PFVM_ERR_NOMEM, "out of memory");
    for (i = 0; i < n; i++)
        todo[i] = g->nodes[i];
    for (i = 0; i < n && !rc; i++)
        rc = pfvm_rw_run_hook(rw, todo[i]);
    stbds_arrfree(todo);
    return rc;
}

/* Rounds of hooks in `mode` until a round changes nothing. */
PFVM_INTERNAL pfvm_code pfvm__run_hooks(pfvm_model *m, unsigned mode, pfvm_pass_stats *stats, pfvm_status *st)
{
    int round;
    for (round = 0; round < PFVM__SIMPLIFY_ROUNDS; round++) {
        pfvm_rewrite rw;
        pfvm_code rc = pfvm_rw_begin(&rw, m, mode, st);
        int changes;
        if (rc)
            return rc;
        rc = pfvm__for_graphs(m->graph, pfvm__simplify_graph, &rw);
        changes = rw.changes;
        if (rc) {
            pfvm_rw_free(&rw);
            return rc;
        }
        if ((rc = pfvm_rw_end(&rw, &stats->removed)) != PFVM_OK)
            return rc;
        stats->rewritten += changes;
        if (!changes)
            break;
    }
    return PFVM_OK;
}

PFVM_INTERNAL pfvm_code pfvm__pass_simplify(pfvm_model *m, pfvm_graph *g, pfvm_pass_stats *stats, pfvm_status *st)
{
    (void)g;
    return pfvm__run_hooks(m, PFVM_RW_SIMPLIFY, stats, st);
}

PFVM_INTERNAL pfvm_code pfvm__pass_bnfold(pfvm_model *m, pfvm_graph *g, pfvm_pass_stats *stats, pfvm_status *st)
{
    (void)g;
    return pfvm__run_hooks(m, PFVM_RW_AFFINE, stats, st);
}

PFVM_INTERNAL pfvm_code pfvm__pass_compose(pfvm_model *m, pfvm_graph *g, pfvm_pass_stats *stats, pfvm_status *st)
{
    (void)g;
    return pfvm__run_hooks(m, PFVM_RW_COMPOSE, stats, st);
}
