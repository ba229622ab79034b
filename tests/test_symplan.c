/* The symbolic memory plan on the dynamic-axes exports in tests/shapes:
 * for several bindings every size and offset evaluates, tensors alive at
 * the same time never overlap, the arena holds everything, the peak is a
 * lower bound of the arena, and the sizes equal those the executor plans
 * for the same binding (the executor's own arena is never below the peak). */
#include "exec/symplan.h"
#include "exec/exec.h"
#include "onnx/onnx_io.h"

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
    CHECK_MSG(pfvm_exec_bind(e, (const pfvm_tensor *const *)ins, n, &st) == PFVM_OK, "%s", st.msg);
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
    return CHECK_END();
}
