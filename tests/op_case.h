/* The one-node test harness of the operator-family tests (test_ops_tensor,
 * test_ops_reduce): a graph of one node whose inputs are graph inputs bound
 * at run time, initializers or omitted, planned and run by the executor,
 * and checks of its outputs that say what differs. */
#ifndef PFVM_TESTS_OP_CASE_H
#define PFVM_TESTS_OP_CASE_H

#include "base/base.h"
#include "sym/sym.h"
#include "ir/ir.h"
#include "exec/exec.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define MAX_IO 6

/* One input of a test node: a graph input bound at run time, an
 * initializer (is_const), or omitted (rank < 0). */
typedef struct tin {
    pfvm_dtype dt;
    int rank;
    int64_t dims[4];
    const void *data;
    int is_const;
} tin;

typedef struct tcase {
    pfvm_status st;
    pfvm_model *m;
    pfvm_graph *g;
    pfvm_node *n;
    pfvm_exec *e;
    pfvm_tensor *bound[MAX_IO];
    int n_bound;
} tcase;

static pfvm_node *tc_node(tcase *t, const char *op, int opset, const tin *ins, int n_in, int n_out)
{
    pfvm_value *iv[MAX_IO], *ov[MAX_IO];
    char name[16];
    int i;
    memset(t, 0, sizeof *t);
    t->m = pfvm_model_new(&t->st);
    t->g = pfvm_graph_new(t->m, NULL, "g", &t->st);
    pfvm_model_set_opset(t->m, "", opset, &t->st);
    for (i = 0; i < n_in; i++) {
        const tin *s = &ins[i];
        iv[i] = NULL;
        if (s->rank < 0)
            continue;
        snprintf(name, sizeof name, "x%d", i);
        iv[i] = pfvm_graph_value(t->g, name, &t->st);
        if (s->is_const) {
            pfvm_tensor *c = pfvm_model_tensor(t->m, s->dt, s->rank, s->dims, (void *)(uintptr_t)s->data, &t->st);
            pfvm_graph_add_init(t->g, iv[i], c, &t->st);
        } else {
            pfvm_graph_add_input(t->g, iv[i], &t->st);
            t->bound[t->n_bound++] = pfvm_tensor_view(s->dt, s->rank, s->dims, (void *)(uintptr_t)s->data, &t->st);
        }
    }
    for (i = 0; i < n_out; i++) {
        snprintf(name, sizeof name, "y%d", i);
        ov[i] = pfvm_graph_value(t->g, name, &t->st);
    }
    t->n = pfvm_graph_add_node(t->g, op, "", "node", iv, n_in, ov, n_out, &t->st);
    for (i = 0; i < n_out; i++)
        pfvm_graph_add_output(t->g, ov[i], &t->st);
    return t->n;
}

/* Plans and runs; returns the status code. */
static pfvm_code tc_run(tcase *t)
{
    t->e = pfvm_exec_new(t->m, NULL, &t->st);
    if (!t->e)
        return t->st.code;
    if (pfvm_exec_bind(t->e, pfvm_tensors_const(t->bound), t->n_bound, &t->st))
        return t->st.code;
    return pfvm_exec_run(t->e, &t->st);
}

static const pfvm_tensor *tc_out(tcase *t, int i)
{
    return pfvm_exec_output(t->e, i);
}

static void tc_end(tcase *t)
{
    int i;
    for (i = 0; i < t->n_bound; i++)
        pfvm_tensor_free(t->bound[i]);
    pfvm_exec_free(t->e);
    pfvm_model_free(t->m);
}

static int shape_is(const pfvm_tensor *y, int rank, const int64_t *dims)
{
    int i;
    if (!y || y->rank != rank) {
        fprintf(stderr, "  rank %d, expected %d\n", y ? y->rank : -1, rank);
        return 0;
    }
    for (i = 0; i < rank; i++)
        if (y->dims[i] != dims[i]) {
            fprintf(stderr, "  dim %d is %lld, expected %lld\n", i, (long long)y->dims[i], (long long)dims[i]);
            return 0;
        }
    return 1;
}

/* Output y as doubles equals want within tol relative (NaN matches NaN). */
static int values_are(const pfvm_tensor *y, const double *want, int n, double tol)
{
    int i;
    if (!y || pfvm_tensor_numel(y) != n) {
        fprintf(stderr, "  %lld elements, expected %d\n", y ? (long long)pfvm_tensor_numel(y) : -1LL, n);
        return 0;
    }
    for (i = 0; i < n; i++) {
        double v = pfvm_tensor_get_f64(y, i);
        if (isnan(want[i]) ? !isnan(v) : !(v == want[i] || fabs(v - want[i]) <= tol * (1 + fabs(want[i])))) {
            fprintf(stderr, "  element %d is %.9g, expected %.9g\n", i, v, want[i]);
            return 0;
        }
    }
    return 1;
}

static int ints_are(const pfvm_tensor *y, const int64_t *want, int n)
{
    int i;
    if (!y || pfvm_tensor_numel(y) != n) {
        fprintf(stderr, "  %lld elements, expected %d\n", y ? (long long)pfvm_tensor_numel(y) : -1LL, n);
        return 0;
    }
    for (i = 0; i < n; i++)
        if (pfvm_tensor_get_i64(y, i) != want[i]) {
            fprintf(stderr, "  element %d is %lld, expected %lld\n", i, (long long)pfvm_tensor_get_i64(y, i),
                    (long long)want[i]);
            return 0;
        }
    return 1;
}

#endif
