/* The pass manager: the list of passes in pipeline order, name lookup, and
 * pfvm_optimize, which runs a list of them with statistics. */
#include "passes.h"
#include "../opi/rewrite.h"

#include <string.h>

/* The descriptions are arrays of their own, not literals in the table: in
 * firmware that never lists the passes the linker then drops them with it
 * (file-scope literals share one merged string section, kept whole). */
static const char pfvm__pass_doc_qlinear[] = "QDQ patterns (DequantizeLinear -> Conv/MatMul/Gemm/AveragePool -> QuantizeLinear, ...) become QLinear operators";
static const char pfvm__pass_doc_fold[] = "constant folding: constant nodes and known shape arithmetic become initializers";
static const char pfvm__pass_doc_simplify[] = "the operators' own rewrites (Identity, no-op Reshape/Transpose/Cast/Pad/Slice, x*1, ...)";
static const char pfvm__pass_doc_cse[] = "common-subexpression elimination (equal nodes, equal small initializers)";
static const char pfvm__pass_doc_bnfold[] = "BatchNormalization folded into the Conv/Gemm/MatMul before it";
static const char pfvm__pass_doc_compose[] = "decomposed operators become one node again (an exported LayerNorm -> LayerNormalization; not default)";
static const char pfvm__pass_doc_dce[] = "dead-code elimination: unused nodes, then unused initializers";
static const char pfvm__pass_doc_fuse[] = "fuse element-wise and broadcast nodes into fused loops (FusedElementwise_N calls)";

/* Pipeline order. Each pass's file adds its line here. */
static const pfvm_pass pfvm__passes[] = {
    {"qlinear", pfvm__pass_doc_qlinear, pfvm__pass_qlinear, 1},
    {"fold", pfvm__pass_doc_fold, pfvm__pass_fold, 1},
    {"simplify", pfvm__pass_doc_simplify, pfvm__pass_simplify, 1},
    {"cse", pfvm__pass_doc_cse, pfvm__pass_cse, 1},
    {"bnfold", pfvm__pass_doc_bnfold, pfvm__pass_bnfold, 1},
    {"compose", pfvm__pass_doc_compose, pfvm__pass_compose, 0},
    {"dce", pfvm__pass_doc_dce, pfvm__pass_dce, 1},
    {"fuse", pfvm__pass_doc_fuse, pfvm__pass_fuse, 1},
    {NULL, NULL, NULL, 0}
};

const pfvm_pass *pfvm_pass_at(int index)
{
    int n = (int)(sizeof pfvm__passes / sizeof pfvm__passes[0]) - 1;
    return index >= 0 && index < n ? &pfvm__passes[index] : NULL;
}

const pfvm_pass *pfvm_pass_find(const char *name)
{
    const pfvm_pass *p;
    int i;
    for (i = 0; (p = pfvm_pass_at(i)) != NULL; i++)
        if (!strcmp(p->name, name))
            return p;
    return NULL;
}

int pfvm_graph_count_nodes(const pfvm_graph *g)
{
    int n = (int)stbds_arrlen(g->nodes), i, j, count = n;
    for (i = 0; i < n; i++) {
        const pfvm_node *nd = g->nodes[i];
        for (j = 0; j < nd->n_attrs; j++) {
            const pfvm_attr *a = &nd->attrs[j];
            int k;
            if (a->type == PFVM_ATTR_GRAPH && a->g)
                count += pfvm_graph_count_nodes(a->g);
            if (a->type == PFVM_ATTR_GRAPHS)
                for (k = 0; k < a->n; k++)
                    count += pfvm_graph_count_nodes(a->graphs[k]);
        }
    }
    return count;
}

static int pfvm__has_subgraphs(const pfvm_graph *g)
{
    int i, j;
    for (i = 0; i < (int)stbds_arrlen(g->nodes); i++)
        for (j = 0; j < g->nodes[i]->n_attrs; j++)
            if (g->nodes[i]->attrs[j].type == PFVM_ATTR_GRAPH || g->nodes[i]->attrs[j].type == PFVM_ATTR_GRAPHS)
                return 1;
    return 0;
}

/* The guard: how many subgraph inputs have a stored type that what their
 * node feeds them (over every iteration) does not imply. */
static pfvm_code pfvm__fed_violations(pfvm_model *m, int *count, char *first, size_t n, pfvm_status *st)
{
    return pfvm_infer_check_subgraph_inputs(m->graph, count, first, n, st);
}

static pfvm_code pfvm__run_pass(pfvm_model *m, const pfvm_pass *p, pfvm_opt_report *report, int *guard,
                                pfvm_status *st)
{
    pfvm_pass_stats stats;
    pfvm_code rc;
    memset(&stats, 0, sizeof stats);
    rc = pfvm_infer_shapes(m->graph, 0, st);
    if (rc != PFVM_OK)
        return rc;
    stats.nodes_before = pfvm_graph_count_nodes(m->graph);
    rc = p->run(m, m->graph, &stats, st);
    if (rc != PFVM_OK)
        return rc;
    stats.nodes_after = pfvm_graph_count_nodes(m->graph);
    if (guard) {
        char first[320];
        int count = 0;
        if ((rc = pfvm__fed_violations(m, &count, first, sizeof first, st)) != PFVM_OK) {
            char msg[sizeof first];
            pfvm__snprintf(msg, sizeof msg, "%s", st ? st->msg : "shape inference failed");
            return pfvm__fail(st, rc, "after pass '%s': %s", p->name, msg);
        }
        if (count > *guard)
            return pfvm__fail(st, PFVM_ERR_SHAPE,
                              "pass '%s' broke a subgraph's input types: %s (a shape that holds only for some "
                              "iterations)", p->name, first);
    }
    if (report && report->n < PFVM_OPT_MAX_RUNS) {
        report->runs[report->n].name = p->name;
        report->runs[report->n].stats = stats;
        report->n++;
    }
    return PFVM_OK;
}

static pfvm_code pfvm__run_pipeline(pfvm_model *m, const pfvm_pass *const *passes, int n, int guard,
                                    pfvm_opt_report *report, pfvm_status *st)
{
    int i, before = 0, *g = NULL;
    char first[320];
    if (guard && pfvm__has_subgraphs(m->graph)) {
        /* what the model already gets wrong is not a pass's doing */
        if (pfvm__fed_violations(m, &before, first, sizeof first, st))
            return st ? st->code : PFVM_ERR_SHAPE;
        g = &before;
    }
    for (i = 0; i < n; i++)
        if (pfvm__run_pass(m, passes[i], report, g, st) != PFVM_OK)
            return st ? st->code : PFVM_ERR_INVALID;
    return pfvm_infer_shapes(m->graph, 0, st);
}

static pfvm_code pfvm__unknown_pass(const char *name, size_t len, pfvm_status *st)
{
    char known[512];
    size_t used = 0;
    const pfvm_pass *p;
    int i;
    known[0] = 0;
    for (i = 0; (p = pfvm_pass_at(i)) != NULL; i++) {
        size_t l = strlen(p->name);
        if (used + l + 3 >= sizeof known)
            break;
        if (used) {
            memcpy(known + used, ", ", 2);
            used += 2;
        }
        memcpy(known + used, p->name, l + 1);
        used += l;
    }
    return pfvm__fail(st, PFVM_ERR_INVALID, "unknown pass '%.*s' (known: %s)", (int)len, name,
                      used ? known : "none");
}

static pfvm_code pfvm__scoped_optimize(pfvm_model *m, const char *passes, pfvm_opt_report *report, pfvm_status *st)
{
    const pfvm_pass *p;
    const char *s;
    int i;
    if (report)
        report->n = 0;
    if (!m || !m->graph)
        return pfvm__fail(st, PFVM_ERR_INVALID, "pfvm_optimize: no model");
    /* a stored plan (pfvm_exec_store_plan) describes the graph as it was */
    for (i = 0; i < (int)stbds_arrlen(m->metadata); i++)
        if (m->metadata[i].key && !strcmp(m->metadata[i].key, "pfvm.plan")) {
            stbds_arrdel(m->metadata, i);
            i--;
        }
    if (!passes) {
        /* the default pipeline, guarded on models with subgraphs */
        const pfvm_pass *list[32];
        int n = 0;
        for (i = 0; (p = pfvm_pass_at(i)) != NULL && n < 32; i++)
            if (p->default_on)
                list[n++] = p;
        return pfvm__run_pipeline(m, list, n, 1, report, st);
    }
    if (!strcmp(passes, "none"))
        return PFVM_OK;
    /* Check every name before running anything, so a typo changes nothing. */
    for (s = passes; *s;) {
        const char *e = strchr(s, ',');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        int found = 0;
        for (i = 0; (p = pfvm_pass_at(i)) != NULL; i++)
            if (strlen(p->name) == len && !strncmp(p->name, s, len))
                found = 1;
        if (!found && len)
            return pfvm__unknown_pass(s, len, st);
        s += len + (e ? 1 : 0);
    }
    for (s = passes; *s;) {
        const char *e = strchr(s, ',');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        for (i = 0; (p = pfvm_pass_at(i)) != NULL; i++)
            if (len && strlen(p->name) == len && !strncmp(p->name, s, len))
                break;
        if (p && pfvm__run_pass(m, p, report, NULL, st) != PFVM_OK)
            return st->code;
        s += len + (e ? 1 : 0);
    }
    return pfvm_infer_shapes(m->graph, 0, st);
}

pfvm_code pfvm_run_passes(pfvm_model *m, const pfvm_pass *const *passes, int n, int guard, pfvm_opt_report *report,
                          pfvm_status *st)
{
    pfvm__scope sc;
    pfvm_code r;
    int i;
    if (report)
        report->n = 0;
    if (!m || !m->graph || n < 0 || (n && !passes))
        return pfvm__fail(st, PFVM_ERR_INVALID, "pfvm_run_passes: no model or no pass list");
    for (i = 0; i < n; i++)
        if (!passes[i] || !passes[i]->run || !passes[i]->name)
            return pfvm__fail(st, PFVM_ERR_INVALID, "pfvm_run_passes: pass %d has no name or no function", i);
    pfvm__scope_enter(&sc, pfvm__model_allocator(m));
    r = pfvm__run_pipeline(m, passes, n, guard, report, st);
    pfvm__scope_leave(&sc);
    return r;
}

pfvm_code pfvm_optimize(pfvm_model *m, const char *passes, pfvm_opt_report *report, pfvm_status *st)
{
    PFVM__SCOPED(pfvm_code, pfvm__model_allocator(m), pfvm__scoped_optimize(m, passes, report, st));
}

pfvm_code pfvm_rw_begin(pfvm_rewrite *rw, pfvm_model *m, unsigned mode, pfvm_status *st)
{
    return pfvm__rw_begin_with(rw, m, mode, pfvm__infer_shapes_keep, st);
}
