/* The symbolic memory plan on the dynamic-axes exports in tests/shapes:
 * for several bindings every size and offset evaluates, tensors alive at
 * the same time never overlap, the arena holds everything, the peak is a
 * lower bound of the arena, and the sizes equal those the executor plans
 * for the same binding (the executor's own arena is never below the peak). */
#include "plan/symplan.h"
#include "exec/exec.h"
#include "onnx/onnx_io.h"
#include "opi/opi.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"

typedef struct binding_case {
    const char *model;
    const char *names[3];
    int64_t vals[3];
} binding_case;

static int64_t eval(const pfvm_sym *x, const pfvm_binding *b)
{
    int64_t v = -1;
    if (!pfvm_sym_eval(x, b, &v)) {
        char buf[256];
        pfvm_sym_print(x, buf, sizeof buf);
        CHECK_MSG(0, "cannot evaluate %s", buf);
    }
    return v;
}

/* The executor's plan for zero-filled inputs shaped by the binding. */
static void compare_with_executor(pfvm_model *m, const pfvm_symplan *p, const pfvm_binding *b, int64_t peak)
{
    pfvm_status st;
    pfvm_exec *e = pfvm_exec_new(m, NULL, &st);
    pfvm_tensor *ins[8];
    pfvm_plan_info info;
    int n = e ? pfvm_exec_num_inputs(e) : 0, i, j, matched = 0;
    CHECK_MSG(e != NULL, "%s", st.msg);
    if (!e || n > 8)
        return;
    for (i = 0; i < n; i++) {
        const pfvm_value *v = pfvm_exec_input(e, i);
        int64_t dims[PFVM_MAX_RANK];
        CHECK(pfvm_shape_eval(&v->type.shape, b, dims));
        ins[i] = pfvm_tensor_new(v->type.dtype, v->type.shape.rank, dims, &st);
    }
    CHECK_MSG(pfvm_exec_bind(e, pfvm_tensors_const(ins), n, &st) == PFVM_OK, "%s", st.msg);
    CHECK(pfvm_exec_plan_info(e, &info, &st) == PFVM_OK);
    for (i = 0; i < info.n_entries; i++) {
        if (info.entries[i].kind != 0)
            continue;
        for (j = 0; j < p->n_entries && p->entries[j].value != info.entries[i].value; j++) {
        }
        if (j < p->n_entries) {
            CHECK((size_t)eval(p->entries[j].bytes, b) == info.entries[i].bytes);
            matched++;
        }
    }
    CHECK(matched > 0 || info.n_folded == info.n_nodes); /* token-id inputs: everything folds */
    CHECK((int64_t)info.arena_bytes >= peak || info.n_folded > 0);
    for (i = 0; i < n; i++)
        pfvm_tensor_free(ins[i]);
    pfvm_exec_free(e);
}

static void check_case(const binding_case *c)
{
    pfvm_status st;
    pfvm_model *m = pfvm_onnx_load_file(c->model, 0, &st);
    pfvm_symplan p;
    pfvm_binding b;
    int64_t arena, peak;
    int i, j, bad_place = 0, overlaps = 0;
    memset(&b, 0, sizeof b);
    CHECK_MSG(m != NULL, "%s: %s", c->model, st.msg);
    if (!m)
        return;
    CHECK(pfvm_infer_shapes(m->graph, 0, &st) == PFVM_OK);
    CHECK_MSG(pfvm_symplan_build(m->graph, &p, &st) == PFVM_OK, "%s", st.msg);
    for (i = 0; i < 3 && c->names[i]; i++)
        CHECK(pfvm_binding_set(&b, pfvm_symtab_find(m->syms, c->names[i]), c->vals[i], &st) == PFVM_OK);
    arena = eval(p.arena, &b);
    peak = eval(p.peak, &b);
    CHECK(peak > 0 && peak <= arena);
    CHECK(p.n_entries > 0 && p.n_dynamic == 0);
    for (i = 0; i < p.n_entries; i++) {
        int64_t oi = eval(p.entries[i].offset, &b), bi = eval(p.entries[i].bytes, &b);
        bad_place += !(oi >= 0 && bi >= 0 && oi + bi <= arena && oi % PFVM_SYMPLAN_ALIGN == 0);
        for (j = 0; j < i; j++) {
            const pfvm_symplan_entry *x = &p.entries[i], *y = &p.entries[j];
            int64_t oj, bj;
            if (x->last < y->first || y->last < x->first)
                continue;
            /* stored in place over its node's input 0, read last there */
            if (x->in_place && y->value == x->value->producer->inputs[0] && y->last == x->first)
                continue;
            oj = eval(y->offset, &b);
            bj = eval(y->bytes, &b);
            if (!(oi + bi <= oj || oj + bj <= oi) && overlaps++ < 3)
                fprintf(stderr, "  %s: %s and %s overlap\n", c->model, x->value->name, y->value->name);
        }
    }
    CHECK(bad_place == 0);
    CHECK(overlaps == 0);
    compare_with_executor(m, &p, &b, peak);
    pfvm_symplan_free(&p);
    pfvm_binding_free(&b);
    pfvm_model_free(m);
}

/* x [N,16] -> a = Exp(x) -> r = Reshape(a, [-1]) -> b = Neg(r) -> y = Reshape(b, Shape(a)).
 * Shape reads only a's shape, so a's storage ends at the first Reshape,
 * which stores r over it (a view); y is stored over b the same way. The
 * three planners agree: one buffer per step but the Neg's two. */
static void test_in_place(void)
{
    pfvm_status st;
    pfvm_model *m = pfvm_model_new(&st);
    pfvm_graph *g = m ? pfvm_graph_new(m, NULL, "views", &st) : NULL;
    pfvm_value *x, *a, *r, *b, *s, *y, *flat, *in[2];
    pfvm_symplan p;
    pfvm_exec *e;
    pfvm_plan_info info;
    pfvm_binding bind;
    pfvm_tensor *xt, *ft;
    const pfvm_sym *dims[2];
    const pfvm_plan_entry *ea = NULL, *er = NULL, *eb = NULL, *ey = NULL;
    int64_t xd[2] = {3, 16}, fd[1] = {1}, peak = -1, i;
    int k, ok = 1;
    CHECK(g && !pfvm_model_set_opset(m, "", 13, &st));
    if (!g)
        return;
    m->graph = g;
    dims[0] = pfvm_sym_var(m->syms, "N", 1);
    dims[1] = pfvm_sym_const(m->syms, 16);
    x = pfvm_graph_value(g, "x", &st);
    x->type.kind = PFVM_KIND_TENSOR;
    x->type.dtype = PFVM_FLOAT;
    x->type.shape.rank = 2;
    x->type.shape.dims[0] = dims[0];
    x->type.shape.dims[1] = dims[1];
    x->has_type_info = 1;
    ft = pfvm_model_tensor(m, PFVM_INT64, 1, fd, NULL, &st);
    ((int64_t *)ft->data)[0] = -1;
    flat = pfvm_graph_value(g, "flat", &st);
    a = pfvm_graph_value(g, "a", &st);
    r = pfvm_graph_value(g, "r", &st);
    b = pfvm_graph_value(g, "b", &st);
    s = pfvm_graph_value(g, "s", &st);
    y = pfvm_graph_value(g, "y", &st);
    ok = !pfvm_graph_add_input(g, x, &st) && !pfvm_graph_add_init(g, flat, ft, &st) &&
         pfvm_graph_add_node(g, "Exp", "", "exp", &x, 1, &a, 1, &st) && (in[0] = a, in[1] = flat, 1) &&
         pfvm_graph_add_node(g, "Reshape", "", "flatten", in, 2, &r, 1, &st) &&
         pfvm_graph_add_node(g, "Neg", "", "neg", &r, 1, &b, 1, &st) &&
         pfvm_graph_add_node(g, "Shape", "", "shape", &a, 1, &s, 1, &st) && (in[0] = b, in[1] = s, 1) &&
         pfvm_graph_add_node(g, "Reshape", "", "unflatten", in, 2, &y, 1, &st) && !pfvm_graph_add_output(g, y, &st) &&
         !pfvm_graph_resolve_ops(g, 1, &st) && !pfvm_infer_shapes(g, 0, &st);
    CHECK_MSG(ok, "%s", st.msg);
    if (!ok) {
        pfvm_model_free(m);
        return;
    }
    /* symbolic: r over a, y over b; the peak is r and b during the Neg */
    CHECK(pfvm_symplan_build(g, &p, &st) == PFVM_OK);
    for (k = 0; k < p.n_entries; k++)
        CHECK_MSG(p.entries[k].in_place == (p.entries[k].value == r || p.entries[k].value == y), "%s",
                  p.entries[k].value->name);
    memset(&bind, 0, sizeof bind);
    CHECK(pfvm_binding_set(&bind, dims[0], 3, &st) == PFVM_OK);
    CHECK_MSG(pfvm_sym_eval(p.peak, &bind, &peak) && peak == 2 * 3 * 16 * 4, "peak %lld", (long long)peak);
    pfvm_symplan_free(&p);
    pfvm_binding_free(&bind);
    /* the executor: the same sharing, Shape folded, the right result */
    e = pfvm_exec_new(m, NULL, &st);
    xt = pfvm_tensor_new(PFVM_FLOAT, 2, xd, &st);
    for (i = 0; i < 48; i++)
        ((float *)xt->data)[i] = (float)(i % 7) * 0.25f - 0.5f;
    CHECK_MSG(e && !pfvm_exec_bind_one(e, xt, &st) && !pfvm_exec_run(e, &st), "%s", st.msg);
    CHECK(e && pfvm_exec_plan_info(e, &info, &st) == PFVM_OK);
    for (k = 0; e && k < info.n_entries; k++) {
        const pfvm_plan_entry *pe = &info.entries[k];
        if (pe->value == a)
            ea = pe;
        if (pe->value == r)
            er = pe;
        if (pe->value == b)
            eb = pe;
        if (pe->value == y)
            ey = pe;
    }
    CHECK(ea && er && eb && ey);
    if (ea && er && eb && ey) {
        CHECK(!ea->in_place && er->in_place && er->offset == ea->offset);
        CHECK(!eb->in_place && ey->in_place && ey->offset == eb->offset && eb->offset != ea->offset);
        CHECK(info.lower_bound == 2 * 3 * 16 * 4 && info.arena_bytes == info.lower_bound);
    }
    if (e && pfvm_exec_num_outputs(e) == 1) {
        const pfvm_tensor *out = pfvm_exec_output(e, 0);
        int bad = 0;
        CHECK(out->rank == 2 && out->dims[0] == 3 && out->dims[1] == 16);
        for (i = 0; i < 48; i++)
            bad += fabs(((const float *)out->data)[i] + exp((double)((float)(i % 7) * 0.25f - 0.5f))) > 1e-5;
        CHECK(bad == 0);
    }
    pfvm_tensor_free(xt);
    pfvm_exec_free(e);
    pfvm_model_free(m);
}

int main(void)
{
    static const binding_case cases[] = {
        {"tests/shapes/cnn_dynamic.onnx", {"batch", "h", "w"}, {2, 32, 40}},
        {"tests/shapes/cnn_dynamic.onnx", {"batch", "h", "w"}, {1, 7, 9}},
        {"tests/shapes/encoder_dynamic.onnx", {"batch", "seq", NULL}, {3, 11, 0}},
        {"tests/shapes/gpt_dynamic.onnx", {"batch", "seq", NULL}, {2, 16, 0}},
    };
    size_t i;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_case(&cases[i]);
    test_in_place();
    return CHECK_END();
}
