/* autodiff: the reverse sweep and the optimizers of training graphs. The
 * per-operator rules live with the operators (pfvm_op_def.grad in
 * src/ops), the helpers they use in src/opi/grad.c. */
#include "autodiff.h"
#include "../ops/ops_common.h"

#include <math.h>
#include <stdio.h>

/* ---- the sweep ------------------------------------------------------------------- */

/* pfvm_grad_ctx.differentiate: the backward graph of a body's copy, made
 * in dst by a sweep of its own. */
static pfvm_code pfvm__grad_differentiate(pfvm_grad_ctx *g, pfvm_graph *dst, pfvm_value *const *ys,
                                          pfvm_value *const *seeds, int n_ys, pfvm_value *const *wrt, int n_wrt,
                                          pfvm_value **grads)
{
    const char **names = NULL;
    pfvm_autodiff_opts o;
    pfvm_autodiff_result res;
    int i;
    pfvm_code rc;
    if (!pfvm__arrreserve(names, (size_t)n_wrt))
        return pfvm__fail(g->st, PFVM_ERR_NOMEM, "autodiff: out of memory");
    for (i = 0; i < n_wrt; i++) /* reserved above */
        stbds_arrput(names, wrt[i]->name);
    memset(&o, 0, sizeof o);
    o.ys = ys;
    o.seeds = seeds;
    o.n_ys = n_ys;
    o.wrt = names;
    o.n_wrt = n_wrt;
    o.flags = PFVM_AUTODIFF_NO_OUTPUTS;
    rc = pfvm_autodiff(g->m, dst, &o, &res, g->st);
    for (i = 0; !rc && i < n_wrt; i++)
        grads[i] = res.grads[i];
    stbds_arrfree(names);
    return rc;
}

/* pfvm_grad_ctx.infer_graph */
static pfvm_code pfvm__grad_infer_graph(pfvm_graph *sub, pfvm_status *st)
{
    if (pfvm_graph_toposort(sub, st) || pfvm_infer_shapes(sub, 0, st))
        return st->code;
    return PFVM_OK;
}

static pfvm_code pfvm__grad_init(pfvm_grad_ctx *g, pfvm_model *m, pfvm_graph *gr, pfvm_status *st)
{
    memset(g, 0, sizeof *g);
    g->m = m;
    g->g = gr;
    g->st = st ? st : &g->own_st;
    pfvm__ok(g->st);
    g->opset = (int)pfvm_model_opset(m, "");
    if (g->opset <= 0)
        g->opset = 1;
    g->inferred = (int)stbds_arrlen(gr->nodes);
    g->differentiate = pfvm__grad_differentiate;
    g->infer_graph = pfvm__grad_infer_graph;
    pfvm__gv(g, NULL);
    return PFVM_OK;
}

static void pfvm__grad_free(pfvm_grad_ctx *g)
{
    int i;
    for (i = 0; i < (int)stbds_arrlen(g->vals); i++)
        stbds_arrfree(g->vals[i].contrib);
    stbds_arrfree(g->vals);
    stbds_arrfree(g->tmp_in);
    stbds_arrfree(g->tmp_out);
    pfvm__arena_free(&g->arena);
}

/* Names a gradient output `<base>_grad` (or a fresh variant when taken):
 * renames a value made by a backward node, otherwise adds an Identity. */
static pfvm_value *pfvm__grad_named(pfvm_grad_ctx *g, pfvm_value *v, const char *base, const char *suffix)
{
    char name[256];
    pfvm_value *out;
    pfvm_node *n;
    pfvm__snprintf(name, sizeof name, "%s%s", base, suffix);
    if (v->producer && !v->is_output && !v->is_input && !v->init && v->graph == g->g &&
        v->id >= g->n_forward_values && !pfvm_graph_find(g->g, name)) {
        if (pfvm_value_rename(v, name, g->st))
            return NULL;
        return v;
    }
    out = pfvm_graph_find(g->g, name) ? pfvm_graph_new_value(g->g, name, g->st) : pfvm_graph_value(g->g, name, g->st);
    if (!out)
        return NULL;
    n = pfvm_graph_add_node(g->g, "Identity", "", name, &v, 1, &out, 1, g->st);
    if (!n)
        return NULL;
    n->opset = g->opset;
    n->op = pfvm_op_find("", "Identity", g->opset);
    out->type = v->type;
    return out;
}

static pfvm_code pfvm__scoped_autodiff(pfvm_model *m, pfvm_graph *gr, const pfvm_autodiff_opts *opts, pfvm_autodiff_result *res,
                        pfvm_status *st)
{
    pfvm_grad_ctx gc, *g = &gc;
    pfvm_autodiff_opts none;
    pfvm_value **ys = NULL, **seeds = NULL, **wrt = NULL, **deps = NULL;
    int i, j, k, n_fwd;
    pfvm_code rc = PFVM_OK;
    char lb[96];
    if (!m || !(gr = gr ? gr : m->graph))
        return pfvm__fail(st, PFVM_ERR_INVALID, "pfvm_autodiff: no graph");
    if (!opts) {
        memset(&none, 0, sizeof none);
        opts = &none;
    }
    if (res)
        memset(res, 0, sizeof *res);
    if (pfvm_graph_toposort(gr, st) || pfvm_infer_shapes(gr, 0, st))
        return st ? st->code : PFVM_ERR_INVALID;
    pfvm__grad_init(g, m, gr, st);
    g->flags = opts->flags;
    n_fwd = (int)stbds_arrlen(gr->nodes);
    g->n_forward_values = (int)stbds_arrlen(gr->values);
    /* known contents of forward values (constants, shape arithmetic) */
    for (i = 0; i < n_fwd; i++) {
        pfvm_status quiet;
        pfvm_status *keep = g->st;
        g->st = &quiet;
        pfvm__grad_infer(g, gr->nodes[i], 1);
        g->st = keep;
    }
    g->inferred = n_fwd;

    /* the seeds */
    if (opts->loss) {
        pfvm_value *y = pfvm_graph_find_local(gr, opts->loss), *s;
        const pfvm_type *t;
        int64_t dims[PFVM_MAX_RANK], n = 1;
        if (!y) {
            rc = pfvm__fail(g->st, PFVM_ERR_INVALID, "autodiff: the graph has no value named '%s'", opts->loss);
            goto done;
        }
        t = &y->type;
        if (!pfvm__is_float_tensor(t) || t->shape.rank < 0) {
            rc = pfvm__fail(g->st, PFVM_ERR_INVALID, "autodiff: the loss '%s' is not a floating-point tensor of known rank",
                            y->name);
            goto done;
        }
        for (i = 0; i < t->shape.rank; i++)
            if (!pfvm_sym_is_const(t->shape.dims[i], &dims[i]) || (n *= dims[i]) != 1) {
                rc = pfvm__fail(g->st, PFVM_ERR_INVALID, "autodiff: the loss '%s' must have one element", y->name);
                goto done;
            }
        {
            double one = 1;
            pfvm_tensor tmp;
            unsigned char buf[16];
            memset(&tmp, 0, sizeof tmp);
            tmp.dtype = t->dtype;
            tmp.data = buf;
            tmp.nbytes = sizeof buf;
            pfvm_red_store(&tmp, 0, one);
            s = pfvm_grad_tensor(g, t->dtype, t->shape.rank, dims, buf);
        }
        if (!s) {
            rc = g->st->code;
            goto done;
        }
        if (!pfvm__arrpush(ys, y) || !pfvm__arrpush(seeds, s)) {
            rc = pfvm__fail(g->st, PFVM_ERR_NOMEM, "autodiff: out of memory");
            goto done;
        }
    } else if (opts->n_ys > 0) {
        for (i = 0; i < opts->n_ys; i++) {
            if (!opts->ys[i] || !opts->seeds[i] || opts->ys[i]->graph != gr) {
                rc = pfvm__fail(g->st, PFVM_ERR_INVALID, "autodiff: seed %d is not a value of the graph", i);
                goto done;
            }
            if (!pfvm__arrpush(ys, opts->ys[i]) || !pfvm__arrpush(seeds, opts->seeds[i])) {
                rc = pfvm__fail(g->st, PFVM_ERR_NOMEM, "autodiff: out of memory");
                goto done;
            }
        }
    } else {
        int n_out = (int)stbds_arrlen(gr->outputs);
        for (i = 0; i < n_out; i++) {
            pfvm_value *y = gr->outputs[i], *s;
            char name[256];
            if (!pfvm__is_float_tensor(&y->type))
                continue;
            pfvm__snprintf(name, sizeof name, "%s_grad", y->name);
            s = pfvm_graph_find(gr, name) ? pfvm_graph_new_value(gr, name, g->st) : pfvm_graph_value(gr, name, g->st);
            if (!s) {
                rc = g->st->code;
                goto done;
            }
            s->type = y->type;
            s->has_type_info = 1;
            pfvm_graph_add_input(gr, s, g->st);
            if (!pfvm__arrpush(ys, y) || !pfvm__arrpush(seeds, s)) {
                rc = pfvm__fail(g->st, PFVM_ERR_NOMEM, "autodiff: out of memory");
                goto done;
            }
        }
    }
    /* the values to differentiate with respect to */
    if (opts->wrt) {
        for (i = 0; i < opts->n_wrt; i++) {
            pfvm_value *v = opts->wrt[i] ? pfvm_graph_find_local(gr, opts->wrt[i]) : NULL;
            if (!v) {
                rc = pfvm__fail(g->st, PFVM_ERR_INVALID, "autodiff: the graph has no value named '%s'",
                                opts->wrt[i] ? opts->wrt[i] : "(null)");
                goto done;
            }
            if (!pfvm__is_float_tensor(&v->type)) {
                rc = pfvm__fail(g->st, PFVM_ERR_INVALID, "autodiff: '%s' is not a floating-point tensor", v->name);
                goto done;
            }
            if (!pfvm__arrpush(wrt, v)) {
                rc = pfvm__fail(g->st, PFVM_ERR_NOMEM, "autodiff: out of memory");
                goto done;
            }
        }
    } else {
        for (i = 0; i < (int)stbds_arrlen(gr->inits); i++)
            if (pfvm__is_float_tensor(&gr->inits[i]->type) && !pfvm__arrpush(wrt, gr->inits[i])) {
                rc = pfvm__fail(g->st, PFVM_ERR_NOMEM, "autodiff: out of memory");
                goto done;
            }
    }
    pfvm__gv(g, NULL);
    /* what depends on the wrt values, and what the seeds depend on */
    for (i = 0; i < (int)stbds_arrlen(wrt); i++)
        pfvm__gv(g, wrt[i])->from_wrt = 1;
    for (i = 0; i < n_fwd; i++) {
        pfvm_node *n = gr->nodes[i];
        int hit = 0;
        if (!pfvm__node_deps(n, &deps)) {
            rc = pfvm__fail(g->st, PFVM_ERR_NOMEM, "autodiff: out of memory");
            goto done;
        }
        for (j = 0; j < (int)stbds_arrlen(deps) && !hit; j++) {
            pfvm__grad_val *gv = pfvm__gv(g, deps[j]);
            hit = gv && gv->from_wrt;
        }
        for (j = 0; hit && j < n->n_outputs; j++)
            if (n->outputs[j])
                pfvm__gv(g, n->outputs[j])->from_wrt = 1;
    }
    for (i = 0; i < (int)stbds_arrlen(ys); i++)
        pfvm__gv(g, ys[i])->to_seed = 1;
    for (i = n_fwd - 1; i >= 0; i--) {
        pfvm_node *n = gr->nodes[i];
        int hit = 0;
        for (j = 0; j < n->n_outputs && !hit; j++)
            hit = n->outputs[j] && pfvm__gv(g, n->outputs[j])->to_seed;
        if (!hit)
            continue;
        if (!pfvm__node_deps(n, &deps)) {
            rc = pfvm__fail(g->st, PFVM_ERR_NOMEM, "autodiff: out of memory");
            goto done;
        }
        for (j = 0; j < (int)stbds_arrlen(deps); j++) {
            pfvm__grad_val *gv = pfvm__gv(g, deps[j]);
            if (gv)
                gv->to_seed = 1;
        }
    }
    /* seed the outputs */
    for (i = 0; i < (int)stbds_arrlen(ys); i++) {
        if (!pfvm__grad_val_needed(g, ys[i]))
            continue;
        if (pfvm_grad_add(g, ys[i], seeds[i])) {
            rc = g->st->code;
            goto done;
        }
    }
    /* the reverse sweep */
    for (i = n_fwd - 1; i >= 0; i--) {
        pfvm_node *n = gr->nodes[i];
        int out_needed = 0, in_needed = 0, has_grad = 0;
        for (j = 0; j < n->n_outputs; j++)
            if (n->outputs[j] && pfvm__grad_val_needed(g, n->outputs[j])) {
                out_needed = 1;
                if (stbds_arrlen(pfvm__gv(g, n->outputs[j])->contrib))
                    has_grad = 1;
            }
        if (!out_needed || !has_grad)
            continue;
        if (!pfvm__node_deps(n, &deps)) {
            rc = pfvm__fail(g->st, PFVM_ERR_NOMEM, "autodiff: out of memory");
            goto done;
        }
        for (j = 0; j < (int)stbds_arrlen(deps) && !in_needed; j++)
            in_needed = pfvm__grad_val_needed(g, deps[j]);
        if (!in_needed)
            continue;
        if (!n->op || !n->op->grad) {
            rc = pfvm__fail(g->st, PFVM_ERR_UNSUPPORTED, "node '%s' (%s%s%s): no gradient for this operator",
                            pfvm__grad_label(n, lb, sizeof lb), n->domain, n->domain[0] ? "." : "", n->op_type);
            goto done;
        }
        g->node = n;
        rc = n->op->grad(g, n);
        if (!rc)
            rc = pfvm__grad_flush(g, (int)stbds_arrlen(gr->nodes) - 1);
        if (!rc && pfvm__grad_failed(g))
            rc = g->st->code;
        if (rc) {
            if (strncmp(g->st->msg, "node '", 6) || strncmp(g->st->msg + 6, pfvm__grad_label(n, lb, sizeof lb), strlen(lb)))
                pfvm__prefix(g->st, "gradient of node '%s' (%s)", pfvm__grad_label(n, lb, sizeof lb), n->op_type);
            goto done;
        }
    }
    g->node = NULL;
    /* the results */
    k = (int)stbds_arrlen(wrt);
    if (res) {
        res->n_forward = n_fwd;
        res->n_wrt = k;
        res->wrt = (pfvm_value **)pfvm_model_alloc(m, sizeof(pfvm_value *) * (size_t)(k + 1));
        res->grads = (pfvm_value **)pfvm_model_alloc(m, sizeof(pfvm_value *) * (size_t)(k + 1));
        res->n_seeds = (int)stbds_arrlen(ys);
        res->ys = (pfvm_value **)pfvm_model_alloc(m, sizeof(pfvm_value *) * (size_t)(res->n_seeds + 1));
        res->seeds = (pfvm_value **)pfvm_model_alloc(m, sizeof(pfvm_value *) * (size_t)(res->n_seeds + 1));
        if (!res->wrt || !res->grads || !res->ys || !res->seeds) {
            rc = pfvm__fail(g->st, PFVM_ERR_NOMEM, "out of memory");
            goto done;
        }
        for (i = 0; i < res->n_seeds; i++) {
            res->ys[i] = ys[i];
            res->seeds[i] = seeds[i];
        }
    }
    for (i = 0; i < k; i++) {
        pfvm_value *d = pfvm__grad_collect(g, wrt[i]);
        if (!d && !pfvm__grad_failed(g)) {
            d = pfvm_grad_zeros_like(g, wrt[i]);
            if (res)
                res->n_unreachable++;
        }
        if (d && !(opts->flags & PFVM_AUTODIFF_NO_OUTPUTS)) {
            d = pfvm__grad_named(g, d, wrt[i]->name, "_grad");
            if (d)
                pfvm_graph_add_output(gr, d, g->st);
        }
        if (!d) {
            rc = g->st->code ? g->st->code : PFVM_ERR_INVALID;
            goto done;
        }
        if (res) {
            res->wrt[i] = wrt[i];
            res->grads[i] = d;
        }
    }
    rc = pfvm__grad_flush(g, (int)stbds_arrlen(gr->nodes) - 1);
done:
    stbds_arrfree(ys);
    stbds_arrfree(seeds);
    stbds_arrfree(wrt);
    stbds_arrfree(deps);
    pfvm__grad_free(g);
    if (!rc)
        rc = pfvm_graph_toposort(gr, st);
    if (!rc)
        rc = pfvm_infer_shapes(gr, 0, st);
    return rc;
}

pfvm_code pfvm_autodiff(pfvm_model *m, pfvm_graph *gr, const pfvm_autodiff_opts *opts, pfvm_autodiff_result *res,
                        pfvm_status *st)
{
    PFVM__SCOPED(pfvm_code, pfvm__model_allocator(m), pfvm__scoped_autodiff(m, gr, opts, res, st));
}

int pfvm_autodiff_saved(const pfvm_graph *g, const pfvm_autodiff_result *res, pfvm_value **out, int cap)
{
    int n_nodes = (int)stbds_arrlen(g->nodes), n_vals = (int)stbds_arrlen(g->values), i, j, count = 0;
    unsigned char *mark;
    pfvm_value **deps = NULL;
    if (!res || res->n_forward > n_nodes)
        return 0;
    if (!(mark = (unsigned char *)pfvm__calloc((size_t)n_vals + 1, 1)))
        return -1;
    for (i = res->n_forward; i < n_nodes; i++) {
        if (!pfvm__node_deps(g->nodes[i], &deps)) {
            stbds_arrfree(deps);
            pfvm__free(mark);
            return -1;
        }
        for (j = 0; j < (int)stbds_arrlen(deps); j++) {
            const pfvm_value *v = deps[j];
            if (v->graph == g && v->id >= 0 && v->id < n_vals && v->producer && v->producer->graph == g &&
                v->producer->id < res->n_forward)
                mark[v->id] = 1;
        }
    }
    stbds_arrfree(deps);
    /* in forward order: by producer, then output slot */
    for (i = 0; i < res->n_forward; i++)
        for (j = 0; j < g->nodes[i]->n_outputs; j++) {
            pfvm_value *v = g->nodes[i]->outputs[j];
            if (v && v->id >= 0 && v->id < n_vals && mark[v->id]) {
                if (count < cap)
                    out[count] = v;
                count++;
                mark[v->id] = 0;
            }
        }
    pfvm__free(mark);
    return count;
}

/* ---- optimizers ------------------------------------------------------------------- */

static pfvm_value *pfvm__opt_state(pfvm_grad_ctx *g, const pfvm_value *like, const char *name, pfvm_dtype dtype,
                                   int scalar)
{
    pfvm_value *v;
    pfvm_tensor *t;
    int64_t dims[PFVM_MAX_RANK];
    int i;
    const pfvm_type *ty = like ? &like->type : NULL;
    if (pfvm__grad_failed(g))
        return NULL;
    if (!scalar)
        for (i = 0; i < ty->shape.rank; i++)
            if (!pfvm_sym_is_const(ty->shape.dims[i], &dims[i])) {
                pfvm__fail(g->st, PFVM_ERR_SHAPE, "optimizer: '%s' has a symbolic shape", like->name);
                return NULL;
            }
    v = pfvm_graph_find(g->g, name) ? pfvm_graph_new_value(g->g, name, g->st) : pfvm_graph_value(g->g, name, g->st);
    t = v ? pfvm_model_tensor(g->m, dtype, scalar ? 0 : ty->shape.rank, dims, NULL, g->st) : NULL;
    if (!t || pfvm_graph_add_init(g->g, v, t, g->st))
        return NULL;
    return v;
}

static pfvm_code pfvm__scoped_autodiff_optimizer(pfvm_model *m, pfvm_graph *gr, const pfvm_autodiff_result *res,
                                  const pfvm_optimizer_opts *opts, pfvm_status *st)
{
    pfvm_grad_ctx gc, *g = &gc;
    pfvm_value **outs = NULL, *step = NULL, *step_new = NULL;
    double b1, b2, eps;
    int i, n_out;
    pfvm_code rc;
    if (!m || !(gr = gr ? gr : m->graph) || !res || !opts)
        return pfvm__fail(st, PFVM_ERR_INVALID, "pfvm_autodiff_optimizer: missing argument");
    if (opts->kind != PFVM_OPTIMIZER_SGD && opts->kind != PFVM_OPTIMIZER_ADAM)
        return pfvm__fail(st, PFVM_ERR_INVALID, "optimizer: unknown kind %d", (int)opts->kind);
    b1 = opts->beta1 ? opts->beta1 : 0.9;
    b2 = opts->beta2 ? opts->beta2 : 0.999;
    eps = opts->epsilon ? opts->epsilon : 1e-8;
    if (res->n_wrt <= 0)
        return PFVM_OK;
    pfvm__grad_init(g, m, gr, st);
    g->n_forward_values = (int)stbds_arrlen(gr->values);
    g->name_prefix = "optimizer";
    n_out = res->n_wrt;
    if (opts->kind == PFVM_OPTIMIZER_ADAM) {
        step = pfvm__opt_state(g, NULL, "adam_step", PFVM_FLOAT, 1);
        step_new = pfvm_grad_op2(g, "Add", step, pfvm_grad_scalar(g, PFVM_FLOAT, 1));
    }
    for (i = 0; i < res->n_wrt; i++) {
        pfvm_value *p = res->wrt[i], *d = res->grads[i], *upd, *pn;
        pfvm_dtype dt = p->type.dtype;
        if (opts->kind == PFVM_OPTIMIZER_SGD) {
            upd = pfvm_grad_op2(g, "Mul", d, pfvm_grad_scalar(g, dt, opts->lr));
        } else {
            char name[256];
            pfvm_value *mm, *vv, *mn, *vn, *t, *bc1, *bc2;
            pfvm__snprintf(name, sizeof name, "%s_adam_m", p->name);
            mm = pfvm__opt_state(g, p, name, dt, 0);
            pfvm__snprintf(name, sizeof name, "%s_adam_v", p->name);
            vv = pfvm__opt_state(g, p, name, dt, 0);
            mn = pfvm_grad_op2(g, "Add", pfvm_grad_op2(g, "Mul", mm, pfvm_grad_scalar(g, dt, b1)),
                               pfvm_grad_op2(g, "Mul", d, pfvm_grad_scalar(g, dt, 1 - b1)));
            vn = pfvm_grad_op2(g, "Add", pfvm_grad_op2(g, "Mul", vv, pfvm_grad_scalar(g, dt, b2)),
                               pfvm_grad_op2(g, "Mul", pfvm_grad_op2(g, "Mul", d, d), pfvm_grad_scalar(g, dt, 1 - b2)));
            t = pfvm_grad_cast(g, step_new, dt);
            bc1 = pfvm_grad_op2(g, "Sub", pfvm_grad_scalar(g, dt, 1), pfvm_grad_op2(g, "Pow", pfvm_grad_scalar(g, dt, b1), t));
            bc2 = pfvm_grad_op2(g, "Sub", pfvm_grad_scalar(g, dt, 1), pfvm_grad_op2(g, "Pow", pfvm_grad_scalar(g, dt, b2), t));
            upd = pfvm_grad_op2(g, "Div", pfvm_grad_op2(g, "Div", mn, bc1),
                                pfvm_grad_op2(g, "Add", pfvm_grad_op1(g, "Sqrt", pfvm_grad_op2(g, "Div", vn, bc2)),
                                              pfvm_grad_scalar(g, dt, eps)));
            upd = pfvm_grad_op2(g, "Mul", upd, pfvm_grad_scalar(g, dt, opts->lr));
            if (!pfvm__arrreserve(outs, (size_t)stbds_arrlen(outs) + 4)) {
                pfvm__fail(g->st, PFVM_ERR_NOMEM, "autodiff: out of memory");
                break;
            }
            stbds_arrput(outs, mm); /* reserved above */
            stbds_arrput(outs, mn);
            stbds_arrput(outs, vv);
            stbds_arrput(outs, vn);
        }
        pn = pfvm_grad_op2(g, "Sub", p, upd);
        if (!pn)
            break;
        pn = pfvm__grad_named(g, pn, p->name, "_new");
        if (!pn || pfvm_graph_add_output(gr, pn, g->st))
            break;
    }
    (void)n_out;
    /* the optimizer state's next values, after every parameter */
    for (i = 0; !pfvm__grad_failed(g) && i < (int)stbds_arrlen(outs); i += 2) {
        pfvm_value *v = pfvm__grad_named(g, outs[i + 1], outs[i]->name, "_new");
        if (v)
            pfvm_graph_add_output(gr, v, g->st);
    }
    if (step && !pfvm__grad_failed(g)) {
        pfvm_value *v = pfvm__grad_named(g, step_new, step->name, "_new");
        if (v)
            pfvm_graph_add_output(gr, v, g->st);
    }
    rc = g->st->code;
    stbds_arrfree(outs);
    pfvm__grad_free(g);
    if (!rc)
        rc = pfvm_graph_toposort(gr, st);
    if (!rc)
        rc = pfvm_infer_shapes(gr, 0, st);
    return rc;
}

pfvm_code pfvm_autodiff_optimizer(pfvm_model *m, pfvm_graph *gr, const pfvm_autodiff_result *res,
                                  const pfvm_optimizer_opts *opts, pfvm_status *st)
{
    PFVM__SCOPED(pfvm_code, pfvm__model_allocator(m), pfvm__scoped_autodiff_optimizer(m, gr, res, opts, st));
}
