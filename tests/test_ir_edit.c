/* Unit tests of the IR editing API: consumer lists (captures by subgraphs
 * included), pfvm_graph_replace_uses (graph outputs keep their names),
 * node and value removal, and the heap-based toposort. */
#include "ir/ir.h"
#include "exec/exec.h"

#include <stdlib.h>
#include <string.h>

#include "check.h"

static pfvm_value *val(pfvm_graph *g, const char *name)
{
    pfvm_status st;
    return pfvm_graph_value(g, name, &st);
}

static pfvm_node *node1(pfvm_graph *g, const char *op, pfvm_value *in, pfvm_value *out)
{
    pfvm_status st;
    return pfvm_graph_add_node(g, op, "", out->name, &in, 1, &out, 1, &st);
}

/* x -> a=Relu(x) -> b=Neg(a) -> y=Abs(b) (output); If(cond) whose then
 * branch reads `a` from the outer scope. */
static void test_uses_and_replace(void)
{
    pfvm_status st;
    pfvm_model *m = pfvm_model_new(&st);
    pfvm_graph *g = pfvm_graph_new(m, NULL, "g", &st);
    pfvm_value *x = val(g, "x"), *a = val(g, "a"), *b = val(g, "b"), *y = val(g, "y");
    pfvm_value *c = val(g, "c"), *r = val(g, "r");
    pfvm_node *na, *nb, *ny, *nif;
    pfvm_graph *then_g, *else_g;
    pfvm_uses u;
    const pfvm_use *us;
    int n;
    pfvm_graph_add_input(g, x, &st);
    pfvm_graph_add_input(g, c, &st);
    na = node1(g, "Relu", x, a);
    nb = node1(g, "Neg", a, b);
    ny = node1(g, "Abs", b, y);
    pfvm_graph_add_output(g, y, &st);
    nif = pfvm_graph_add_node(g, "If", "", "if", &c, 1, &r, 1, &st);
    then_g = pfvm_graph_new(m, g, "then", &st);
    else_g = pfvm_graph_new(m, g, "else", &st);
    then_g->owner = else_g->owner = nif;
    {
        pfvm_value *t = val(then_g, "t");
        pfvm_node *inner = node1(then_g, "Relu", a, t);
        pfvm_attr *at, *ae;
        /* (adding an attribute may move the node's attribute array) */
        at = pfvm_node_add_attr(nif, "then_branch", PFVM_ATTR_GRAPH, &st);
        CHECK(inner && at);
        at->g = then_g;
        ae = pfvm_node_add_attr(nif, "else_branch", PFVM_ATTR_GRAPH, &st);
        CHECK(ae != NULL);
        ae->g = else_g;
        pfvm_graph_add_output(then_g, t, &st);
        pfvm_graph_add_output(else_g, a, &st); /* an outer value as a branch output */
    }
    pfvm_graph_add_output(g, r, &st);
    CHECK(pfvm_graph_toposort(g, &st) == PFVM_OK && pfvm_graph_verify(g, &st) == PFVM_OK);

    CHECK(pfvm_uses_build(&u, g, &st) == PFVM_OK);
    us = pfvm_uses_of(&u, a, &n);
    /* Neg reads a; the If reads it twice (then-branch node, else output) */
    CHECK(n == 3);
    {
        int i, direct = 0, nested = 0, outs = 0;
        for (i = 0; i < n; i++) {
            if (us[i].node == nb && us[i].index == 0 && us[i].top == nb)
                direct++;
            if (us[i].node && us[i].graph == then_g && us[i].top == nif)
                nested++;
            if (!us[i].node && us[i].graph == else_g && us[i].top == nif)
                outs++;
        }
        CHECK(direct == 1 && nested == 1 && outs == 1);
    }
    us = pfvm_uses_of(&u, y, &n);
    CHECK(n == 1 && us[0].node == NULL && us[0].graph == g && us[0].top == NULL);
    CHECK(pfvm_uses_count(&u, x) == 1 && pfvm_uses_count(&u, b) == 1);
    pfvm_uses_free(&u);

    /* a -> x everywhere, nested readers included */
    CHECK(pfvm_graph_replace_uses(g, a, x, &st) == PFVM_OK);
    CHECK(nb->inputs[0] == x && then_g->nodes[0]->inputs[0] == x && else_g->outputs[0] == x);
    CHECK(pfvm_graph_remove_node(g, na, &st) == PFVM_OK);
    CHECK(pfvm_graph_find(g, "a") == NULL && pfvm_graph_num_nodes(g) == 3);
    CHECK(pfvm_graph_toposort(g, &st) == PFVM_OK && pfvm_graph_verify(g, &st) == PFVM_OK);

    /* the output y replaced by the intermediate b: b takes the name "y" */
    CHECK(pfvm_graph_replace_uses(g, y, b, &st) == PFVM_OK);
    CHECK(g->outputs[0] == b && !strcmp(b->name, "y") && b->is_output && !y->is_output);
    CHECK(pfvm_graph_find(g, "y") == b && strcmp(y->name, "y"));
    CHECK(pfvm_graph_remove_node(g, ny, &st) == PFVM_OK);
    CHECK(pfvm_graph_verify(g, &st) == PFVM_OK);

    /* the output (now b, named y) replaced by a graph input: an Identity keeps it */
    CHECK(pfvm_graph_replace_uses(g, b, x, &st) == PFVM_OK);
    CHECK(g->outputs[0] == b && !strcmp(b->name, "y") && b->producer && !strcmp(b->producer->op_type, "Identity"));
    CHECK(b->producer->inputs[0] == x && nb->outputs[0] != b);
    /* Neg now makes a dead value: removable */
    CHECK(pfvm_graph_remove_node(g, nb, &st) == PFVM_OK);
    CHECK(pfvm_graph_toposort(g, &st) == PFVM_OK && pfvm_graph_verify(g, &st) == PFVM_OK);
    /* a node that makes a graph output cannot be removed */
    CHECK(pfvm_graph_remove_node(g, b->producer, &st) == PFVM_ERR_INVALID && strstr(st.msg, "graph output"));
    pfvm_model_free(m);
}

static void test_remove_values(void)
{
    pfvm_status st;
    pfvm_model *m = pfvm_model_new(&st);
    pfvm_graph *g = pfvm_graph_new(m, NULL, "g", &st);
    pfvm_value *w = val(g, "w"), *x = val(g, "x"), *y = val(g, "y");
    int64_t dims[1] = {4};
    pfvm_graph_add_input(g, x, &st);
    CHECK(pfvm_graph_add_init(g, w, pfvm_model_tensor(m, PFVM_FLOAT, 1, dims, NULL, &st), &st) == PFVM_OK);
    node1(g, "Relu", x, y);
    pfvm_graph_add_output(g, y, &st);
    CHECK(pfvm_graph_remove_values(g, &x, 1, &st) == PFVM_ERR_INVALID);
    CHECK(pfvm_graph_remove_values(g, &w, 1, &st) == PFVM_OK);
    CHECK(pfvm_graph_num_initializers(g) == 0 && pfvm_graph_find(g, "w") == NULL && pfvm_graph_find(g, "x") && pfvm_graph_find(g, "y"));
    CHECK(g->values[0]->id == 0 && g->values[1]->id == 1);
    CHECK(pfvm_value_rename(y, "x", &st) == PFVM_ERR_INVALID);
    CHECK(pfvm_value_rename(y, "out", &st) == PFVM_OK && pfvm_graph_find(g, "out") == y);
    pfvm_model_free(m);
}

/* Long chains in reverse order sort in about linear time, and an already
 * sorted graph keeps its order (stability). */
static void test_toposort_scale(void)
{
    enum { N = 200000 };
    pfvm_status st;
    pfvm_model *m = pfvm_model_new(&st);
    pfvm_graph *g = pfvm_graph_new(m, NULL, "g", &st);
    pfvm_value *prev = val(g, "x");
    pfvm_node **made = (pfvm_node **)malloc(N * sizeof *made);
    char name[32];
    int i, ok = 1;
    if (!made)
        return;
    pfvm_graph_add_input(g, prev, &st);
    for (i = 0; i < N; i++) {
        pfvm_value *v;
        snprintf(name, sizeof name, "v%d", i);
        v = val(g, name);
        made[i] = node1(g, "Relu", prev, v);
        prev = v;
    }
    pfvm_graph_add_output(g, prev, &st);
    /* reverse the node list: every node now comes before its input */
    for (i = 0; i < N / 2; i++) {
        pfvm_node *t = g->nodes[i];
        g->nodes[i] = g->nodes[N - 1 - i];
        g->nodes[N - 1 - i] = t;
    }
    CHECK(pfvm_graph_toposort(g, &st) == PFVM_OK);
    for (i = 0; i < N; i++)
        ok &= g->nodes[i] == made[i] && made[i]->id == i;
    CHECK(ok);
    CHECK(pfvm_graph_toposort(g, &st) == PFVM_OK);
    for (i = 0, ok = 1; i < N; i++)
        ok &= g->nodes[i] == made[i];
    CHECK(ok);
    free(made);
    pfvm_model_free(m);
}

/* Two independent chains interleaved: the sort keeps the given interleaving. */
static void test_toposort_stable(void)
{
    pfvm_status st;
    pfvm_model *m = pfvm_model_new(&st);
    pfvm_graph *g = pfvm_graph_new(m, NULL, "g", &st);
    pfvm_value *x = val(g, "x"), *a = val(g, "a"), *b = val(g, "b"), *c = val(g, "c"), *d = val(g, "d");
    pfvm_node *nc, *na, *nd, *nb;
    pfvm_graph_add_input(g, x, &st);
    nc = node1(g, "Relu", x, c);
    nb = node1(g, "Relu", a, b); /* reads a, made below */
    na = node1(g, "Relu", x, a);
    nd = node1(g, "Relu", c, d);
    CHECK(pfvm_graph_toposort(g, &st) == PFVM_OK);
    CHECK(g->nodes[0] == nc && g->nodes[1] == na && g->nodes[2] == nb && g->nodes[3] == nd);
    pfvm_model_free(m);
}

int main(void)
{
    test_uses_and_replace();
    test_remove_values();
    test_toposort_scale();
    test_toposort_stable();
    return CHECK_END();
}
