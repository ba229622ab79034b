/* Unit tests of the core modules: base, sym, ir, registry, planner.
 * base's checked size arithmetic, allocation and status helpers are tested
 * through the public calls that use them (tensor constructors, symbolic
 * constants, the allocators, pfvm_status_set). */
#include "base/base.h"
#include "sym/sym.h"
#include "ir/ir.h"
#include "exec/exec.h"

#include <string.h>

#include "check.h"

static int printed_is(const pfvm_sym *s, const char *want)
{
    char buf[256];
    pfvm_sym_print(s, buf, sizeof buf);
    if (strcmp(buf, want))
        fprintf(stderr, "  printed '%s', expected '%s'\n", buf, want);
    return !strcmp(buf, want);
}

/* A tensor that must not exist: NULL with code and a message holding needle. */
static int refused(pfvm_tensor *t, const pfvm_status *st, pfvm_code code, const char *needle)
{
    if (t) {
        pfvm_tensor_free(t);
        return 0;
    }
    return st->code == code && strstr(st->msg, needle) != NULL;
}

/* t and its data lie in buf; the data is aligned and zeroed. */
static int in_buffer(const pfvm_tensor *t, const unsigned char *buf, size_t size)
{
    const unsigned char *p = (const unsigned char *)t, *d = t ? (const unsigned char *)t->data : NULL;
    size_t i;
    if (!t || !d || p < buf || p + sizeof *t > buf + size || d < buf || d + t->nbytes > buf + size ||
        (uintptr_t)d % PFVM_DATA_ALIGN)
        return 0;
    for (i = 0; i < t->nbytes; i++)
        if (d[i])
            return 0;
    return 1;
}

static void test_base(void)
{
    unsigned char buf[4096];
    pfvm_bump b;
    pfvm_allocator a;
    pfvm_tensor *p, *q, *r;
    pfvm_status st;
    pfvm_symtab *syms = pfvm_symtab_new();
    pfvm_tensor_desc desc;
    int64_t d3[1] = {3}, huge[1] = {(int64_t)1 << 62}, wide[2] = {INT64_MAX, 2}, d25[1] = {25}, d2000[1] = {2000};
    CHECK(pfvm_dtype_size(PFVM_FLOAT) == 4 && pfvm_dtype_size(PFVM_BOOL) == 1 && pfvm_dtype_size(PFVM_INT64) == 8);
    CHECK(pfvm_dtype_from_name("float16") == PFVM_FLOAT16);
    CHECK(pfvm_dtype_size((pfvm_dtype)99) == 0);
    /* checked size arithmetic: elements * element size overflows size_t,
     * the product of the dims overflows int64, constant dims overflow */
    CHECK(refused(pfvm_tensor_new(PFVM_FLOAT, 1, huge, &st), &st, PFVM_ERR_NOMEM, "overflows"));
    p = pfvm_tensor_new(PFVM_FLOAT, 1, d3, &st);
    CHECK(p && p->nbytes == 12);
    pfvm_tensor_free(p);
    CHECK(refused(pfvm_tensor_new(PFVM_FLOAT, 2, wide, &st), &st, PFVM_ERR_NOMEM, "overflows"));
    CHECK(syms && pfvm_sym_mul(syms, pfvm_sym_const(syms, INT64_MAX), pfvm_sym_const(syms, 2)) == NULL);
    CHECK(syms && pfvm_sym_add(syms, pfvm_sym_const(syms, INT64_MAX), pfvm_sym_const(syms, 1)) == NULL);
    pfvm_symtab_free(syms);
    CHECK(pfvm_half_to_float(pfvm_float_to_half(1.5f)) == 1.5f);
    CHECK(pfvm_half_to_float(0x3c00) == 1.0f);
    CHECK(pfvm_float_to_half(65504.0f) == 0x7bff);
    CHECK(pfvm_float_to_half(1e6f) == 0x7c00);
    CHECK(pfvm_bf16_to_float(pfvm_float_to_bf16(2.0f)) == 2.0f);
    /* the bump allocator serves pfvm's allocations from a caller buffer:
     * as the default (pfvm_set_allocator) and as one tensor's own (desc);
     * tensor storage is aligned and zeroed; running out is an error */
    memset(buf, 0xab, sizeof buf);
    pfvm_bump_init(&b, buf, sizeof buf);
    a = pfvm_bump_allocator(&b);
    pfvm_set_allocator(&a);
    p = pfvm_tensor_new(PFVM_FLOAT, 1, d25, &st);
    q = pfvm_tensor_new(PFVM_FLOAT, 1, d2000, &st); /* 8000 bytes */
    pfvm_set_allocator(NULL);
    CHECK(in_buffer(p, buf, sizeof buf) && p->nbytes == 100);
    CHECK(refused(q, &st, PFVM_ERR_NOMEM, "out of memory"));
    memset(&desc, 0, sizeof desc);
    desc.rank = 1;
    desc.dims = d25;
    desc.allocator = a;
    r = pfvm_tensor_make(&desc, &st);
    CHECK(in_buffer(r, buf, sizeof buf) && r != p);
    desc.dims = d2000;
    CHECK(refused(pfvm_tensor_make(&desc, &st), &st, PFVM_ERR_NOMEM, "out of memory"));
    pfvm_tensor_free(p);
    pfvm_tensor_free(r);
    /* status: a printf-style message, and context prepended */
    CHECK(pfvm_status_set(&st, PFVM_ERR_SHAPE, "x %d", 3) == PFVM_ERR_SHAPE && !strcmp(st.msg, "x 3"));
    pfvm_status_prefix(&st, "node '%s'", "a");
    CHECK(!strcmp(st.msg, "node 'a': x 3"));
}

static void test_sym(void)
{
    pfvm_symtab *t = pfvm_symtab_new();
    const pfvm_sym *n = pfvm_sym_var(t, "n", 1), *h = pfvm_sym_var(t, "h", 1);
    const pfvm_sym *two = pfvm_sym_const(t, 2), *e;
    pfvm_binding b;
    int64_t v;
    memset(&b, 0, sizeof b);
    CHECK(pfvm_sym_var(t, "n", 1) == n);
    CHECK(pfvm_sym_add(t, n, h) == pfvm_sym_add(t, h, n));
    CHECK(pfvm_sym_sub(t, pfvm_sym_addi(t, n, 1), pfvm_sym_const(t, 1)) == n);
    CHECK(pfvm_sym_div(t, pfvm_sym_mul(t, n, two), two) == n);
    CHECK(pfvm_sym_div(t, pfvm_sym_addi(t, pfvm_sym_muli(t, n, 2), 2), two) == pfvm_sym_addi(t, n, 1));
    CHECK(pfvm_sym_max(t, n, n) == n);
    CHECK(pfvm_sym_mul(t, n, pfvm_sym_const(t, 0)) == pfvm_sym_const(t, 0));
    CHECK(pfvm_sym_mod(t, pfvm_sym_muli(t, n, 4), two) == pfvm_sym_const(t, 0));
    CHECK(pfvm_sym_add(t, n, n) == pfvm_sym_muli(t, n, 2));
    CHECK(pfvm_sym_sub(t, n, n) == pfvm_sym_const(t, 0));
    CHECK(pfvm_sym_div(t, pfvm_sym_const(t, -7), two) == pfvm_sym_const(t, -4));
    CHECK(pfvm_sym_mod(t, pfvm_sym_const(t, -7), two) == pfvm_sym_const(t, 1));
    CHECK(pfvm_sym_ceildiv(t, pfvm_sym_const(t, 7), two) == pfvm_sym_const(t, 4));
    CHECK(pfvm_sym_add(t, pfvm_sym_const(t, INT64_MAX), pfvm_sym_const(t, 1)) == NULL);
    CHECK(pfvm_sym_div(t, n, pfvm_sym_const(t, 0)) == NULL);
    CHECK(pfvm_sym_max(t, pfvm_sym_addi(t, n, 1), n) == pfvm_sym_addi(t, n, 1));
    CHECK(pfvm_sym_max(t, pfvm_sym_const(t, 0), n) == n);       /* dims are >= 0 */
    CHECK(pfvm_sym_min(t, n, pfvm_sym_addi(t, n, 3)) == n);
    CHECK(pfvm_sym_ceildiv(t, n, pfvm_sym_const(t, 1)) == n);
    /* floor(floor(x/2)/2) = floor(x/4), and it evaluates the same */
    {
        const pfvm_sym *h1 = pfvm_sym_addi(t, h, -1), *q = pfvm_sym_div(t, pfvm_sym_div(t, h1, two), two);
        int64_t hv, want, got;
        CHECK(q == pfvm_sym_div(t, h1, pfvm_sym_const(t, 4)));
        for (hv = 1; hv < 40; hv++) {
            pfvm_binding bb;
            memset(&bb, 0, sizeof bb);
            pfvm_binding_set(&bb, h, hv, NULL);
            want = ((hv - 1) / 2) / 2;
            CHECK(pfvm_sym_eval(q, &bb, &got) && got == want);
            pfvm_binding_free(&bb);
        }
    }
    /* conv output size with symbolic h: (h + 2*1 - 3)/2 + 1 */
    CHECK(printed_is(pfvm_sym_addi(t, pfvm_sym_div(t, pfvm_sym_addi(t, h, -1), two), 1), "(h+1)/2"));
    CHECK(pfvm_sym_ceildiv(t, h, two) == pfvm_sym_div(t, pfvm_sym_addi(t, h, 1), two));
    /* overflow in constant folding is refused, not wrapped */
    CHECK(pfvm_sym_mul(t, pfvm_sym_const(t, INT64_MAX / 2), pfvm_sym_const(t, 3)) == NULL);
    CHECK(printed_is(pfvm_sym_addi(t, pfvm_sym_muli(t, n, 64), -1), "64*n-1"));
    CHECK(printed_is(pfvm_sym_div(t, pfvm_sym_addi(t, h, 1), two), "(h+1)/2"));
    CHECK(printed_is(pfvm_sym_min(t, n, h), "min(h,n)"));
    CHECK(printed_is(pfvm_sym_sub(t, n, h), "n-h"));
    /* canonical sums of products: like terms merge however they were
     * grouped, products distribute, factor order does not matter */
    {
        const pfvm_sym *b8 = pfvm_sym_muli(t, n, 8), *b4 = pfvm_sym_muli(t, n, 4);
        const pfvm_sym *sq = pfvm_sym_mul(t, pfvm_sym_add(t, n, h), pfvm_sym_add(t, n, h));
        CHECK(pfvm_sym_sub(t, pfvm_sym_add(t, b8, h), b4) == pfvm_sym_add(t, h, b4));
        CHECK(pfvm_sym_max(t, pfvm_sym_add(t, b8, h), b4) == pfvm_sym_add(t, b8, h));
        CHECK(pfvm_sym_sub(t, pfvm_sym_add(t, pfvm_sym_add(t, n, h), two), pfvm_sym_add(t, h, two)) == n);
        CHECK(pfvm_sym_mul(t, pfvm_sym_mul(t, n, h), two) == pfvm_sym_mul(t, two, pfvm_sym_mul(t, h, n)));
        CHECK(pfvm_sym_sub(t, sq, pfvm_sym_mul(t, n, n)) ==
              pfvm_sym_add(t, pfvm_sym_muli(t, pfvm_sym_mul(t, n, h), 2), pfvm_sym_mul(t, h, h)));
        CHECK(pfvm_sym_mul(t, pfvm_sym_addi(t, n, 1), pfvm_sym_addi(t, n, -1)) == pfvm_sym_addi(t, pfvm_sym_mul(t, n, n), -1));
        CHECK(printed_is(pfvm_sym_sub(t, pfvm_sym_addi(t, h, 3), pfvm_sym_muli(t, n, 2)), "h-2*n+3"));
    }
    e = pfvm_sym_add(t, pfvm_sym_div(t, pfvm_sym_addi(t, h, 1), two), pfvm_sym_mul(t, n, h));
    CHECK(pfvm_binding_set(&b, n, 3, NULL) == PFVM_OK && pfvm_binding_set(&b, h, 5, NULL) == PFVM_OK);
    CHECK(pfvm_sym_eval(e, &b, &v) && v == 3 + 15);
    CHECK(pfvm_sym_subst(t, e, &b) == pfvm_sym_const(t, 18));
    CHECK(pfvm_sym_proven_nonneg(pfvm_sym_div(t, h, two)));
    CHECK(!pfvm_sym_proven_nonneg(pfvm_sym_sub(t, h, n)));
    /* lower bounds from the facts (n, h >= 1): n-1 >= 0, 2n+2 >= 4; dims
     * that can never be equal (n vs n+1, n+1 vs 2n+2, n vs 2n since n >= 1)
     * and ones that can (n vs h, min(n,h) vs 1) */
    CHECK(pfvm_sym_proven_nonneg(pfvm_sym_addi(t, n, -1)));
    CHECK(!pfvm_sym_proven_nonneg(pfvm_sym_addi(t, n, -2)));
    CHECK(pfvm_sym_proven_ge(t, pfvm_sym_addi(t, pfvm_sym_muli(t, n, 2), 2), 4));
    CHECK(!pfvm_sym_proven_ge(t, pfvm_sym_addi(t, pfvm_sym_muli(t, n, 2), 2), 5));
    CHECK(pfvm_sym_proven_ge(t, pfvm_sym_div(t, pfvm_sym_addi(t, h, 7), pfvm_sym_const(t, 4)), 2));
    CHECK(pfvm_sym_proven_ne(t, n, pfvm_sym_addi(t, n, 1)));
    CHECK(pfvm_sym_proven_ne(t, pfvm_sym_addi(t, n, 1), pfvm_sym_addi(t, pfvm_sym_muli(t, n, 2), 2)));
    CHECK(pfvm_sym_proven_ne(t, n, pfvm_sym_muli(t, n, 2)));
    CHECK(!pfvm_sym_proven_ne(t, n, h));
    CHECK(!pfvm_sym_proven_ne(t, n, n));
    CHECK(!pfvm_sym_proven_ne(t, pfvm_sym_min(t, n, h), pfvm_sym_const(t, 1)));
    CHECK(pfvm_sym_fresh(t, "n") != n);
    CHECK(!n->inferred && pfvm_sym_unknown(t, "made_up")->inferred && !pfvm_sym_unknown(t, "n")->inferred);
    /* symbolic booleans: eq(a,b) is 1 exactly when a == b, for every binding */
    {
        const pfvm_sym *q = pfvm_sym_div(t, pfvm_sym_addi(t, h, 3), pfvm_sym_const(t, 4));
        const pfvm_sym *eq = pfvm_sym_eq(t, q, pfvm_sym_const(t, 1)), *ne = pfvm_sym_not(t, eq);
        char buf[128];
        int64_t hv;
        CHECK(eq == pfvm_sym_eq(t, pfvm_sym_const(t, 1), q));
        CHECK(pfvm_sym_eq(t, n, n) == pfvm_sym_const(t, 1));
        CHECK(pfvm_sym_eq(t, n, pfvm_sym_addi(t, n, 1)) == pfvm_sym_const(t, 0));
        CHECK(pfvm_sym_not(t, ne) == eq);
        for (hv = 1; hv <= 9; hv++) {
            int64_t x = -1, y = -1;
            pfvm_binding_clear(&b);
            pfvm_binding_set(&b, h, hv, NULL);
            CHECK(pfvm_sym_eval(eq, &b, &x) && x == ((hv + 3) / 4 == 1));
            CHECK(pfvm_sym_eval(ne, &b, &y) && y == !x);
        }
        pfvm_sym_print_cond(t, eq, buf, sizeof buf);
        CHECK_MSG(!strcmp(buf, "(h+3)/4==1"), "%s", buf);
        pfvm_sym_print_cond(t, ne, buf, sizeof buf);
        CHECK_MSG(!strcmp(buf, "(h+3)/4!=1"), "%s", buf);
        pfvm_sym_print_cond(t, pfvm_sym_eq(t, n, h), buf, sizeof buf);
        CHECK_MSG(!strcmp(buf, "h==n") || !strcmp(buf, "n==h"), "%s", buf);
        CHECK(pfvm_sym_print_cond(t, eq, buf, 4) == 10 && strlen(buf) == 3);
    }
    pfvm_binding_free(&b);
    pfvm_symtab_free(t);
}

static void test_ir(void)
{
    pfvm_status st;
    pfvm_model *m = pfvm_model_new(&st);
    pfvm_graph *g = pfvm_graph_new(m, NULL, "g", &st);
    pfvm_value *x = pfvm_graph_value(g, "x", &st), *y = pfvm_graph_value(g, "y", &st);
    pfvm_value *z = pfvm_graph_value(g, "z", &st), *w = pfvm_graph_value(g, "w", &st);
    pfvm_node *a, *b;
    pfvm_value *in2[2];
    int64_t dims[2] = {2, 3};
    CHECK(m && g && x && y && z);
    CHECK(pfvm_graph_add_input(g, x, &st) == PFVM_OK);
    /* nodes out of order: toposort must fix it */
    in2[0] = y;
    in2[1] = x;
    b = pfvm_graph_add_node(g, "Add", "", "add", in2, 2, &z, 1, &st);
    a = pfvm_graph_add_node(g, "Relu", "", "relu", &x, 1, &y, 1, &st);
    CHECK(a && b);
    CHECK(pfvm_graph_add_node(g, "Relu", "", "again", &x, 1, &y, 1, &st) == NULL && st.code == PFVM_ERR_INVALID);
    CHECK(pfvm_graph_add_output(g, z, &st) == PFVM_OK);
    CHECK(pfvm_graph_toposort(g, &st) == PFVM_OK);
    CHECK(g->nodes[0] == a && g->nodes[1] == b);
    CHECK(pfvm_graph_verify(g, &st) == PFVM_OK);
    CHECK(pfvm_node_set_attr_int(a, "k", 7, &st) == PFVM_OK && pfvm_node_attr_int(a, "k", 0) == 7);
    CHECK(pfvm_node_attr_int(a, "missing", -2) == -2);
    CHECK(pfvm_graph_find(g, "y") == y && pfvm_graph_find(g, "nope") == NULL);
    CHECK(pfvm_graph_add_init(g, w, pfvm_model_tensor(m, PFVM_FLOAT, 2, dims, NULL, &st), &st) == PFVM_OK);
    CHECK(w->type.kind == PFVM_KIND_TENSOR && w->type.shape.rank == 2);
    /* a cycle is an error naming a node */
    {
        pfvm_model *m2 = pfvm_model_new(&st);
        pfvm_graph *g2 = pfvm_graph_new(m2, NULL, "c", &st);
        pfvm_value *p = pfvm_graph_value(g2, "p", &st), *q = pfvm_graph_value(g2, "q", &st);
        pfvm_graph_add_node(g2, "Relu", "", "r1", &p, 1, &q, 1, &st);
        pfvm_graph_add_node(g2, "Relu", "", "r2", &q, 1, &p, 1, &st);
        CHECK(pfvm_graph_toposort(g2, &st) == PFVM_ERR_INVALID && strstr(st.msg, "cycle"));
        pfvm_model_free(m2);
    }
    /* subgraphs see outer values */
    {
        pfvm_graph *sub = pfvm_graph_new(m, g, "then", &st);
        CHECK(pfvm_graph_find(sub, "x") == x && pfvm_graph_find_local(sub, "x") == NULL);
    }
    pfvm_model_free(m);
}

static void test_tensor(void)
{
    pfvm_status st;
    int64_t dims[3] = {2, 3, 4}, big[2] = {INT64_MAX / 2, 4};
    pfvm_tensor *t = pfvm_tensor_new(PFVM_FLOAT, 3, dims, &st), *c;
    char buf[64];
    CHECK(t && pfvm_tensor_numel(t) == 24 && t->nbytes == 96);
    ((float *)t->data)[5] = 2.5f;
    c = pfvm_tensor_clone(t, &st);
    CHECK(c && ((float *)c->data)[5] == 2.5f && c->data != t->data);
    /* tensor data starts on a cache line, so vector loops never split a load over two */
    CHECK((uintptr_t)t->data % PFVM_DATA_ALIGN == 0 && (uintptr_t)c->data % PFVM_DATA_ALIGN == 0);
    pfvm_tensor_describe(t, buf, sizeof buf);
    CHECK(!strcmp(buf, "float[2,3,4]"));
    CHECK(pfvm_tensor_new(PFVM_FLOAT, 2, big, &st) == NULL && st.code == PFVM_ERR_NOMEM);
    pfvm_tensor_free(t);
    pfvm_tensor_free(c);
}

/* Sequences and optionals built with the public constructors: element
 * types, ownership, the errors that leave the caller owning the element,
 * deep clones. */
static void test_containers(void)
{
    pfvm_status st;
    int64_t d2[1] = {2};
    pfvm_tensor *seq = pfvm_tensor_sequence_new(PFVM_UNDEFINED, &st), *opt = pfvm_tensor_optional_new(PFVM_FLOAT, &st);
    pfvm_tensor *f = pfvm_tensor_new(PFVM_FLOAT, 1, d2, &st), *i = pfvm_tensor_new(PFVM_INT64, 1, d2, &st), *c;
    CHECK(seq && seq->kind == PFVM_KIND_SEQUENCE && pfvm_tensor_num_elems(seq) == 0);
    CHECK(opt && opt->kind == PFVM_KIND_OPTIONAL && !opt->has_value && opt->elem_dtype == PFVM_FLOAT);
    CHECK(pfvm_tensor_sequence_new((pfvm_dtype)99, &st) == NULL && st.code == PFVM_ERR_UNSUPPORTED);
    /* the first element fixes an untyped sequence's element type */
    CHECK(pfvm_tensor_push_elem(seq, f, &st) == PFVM_OK && seq->elem_dtype == PFVM_FLOAT &&
          pfvm_tensor_elem(seq, 0) == f);
    CHECK(pfvm_tensor_push_elem(seq, i, &st) == PFVM_ERR_SHAPE && strstr(st.msg, "int64") &&
          pfvm_tensor_num_elems(seq) == 1);
    CHECK(pfvm_tensor_push_elem(f, i, &st) == PFVM_ERR_INVALID);
    CHECK(pfvm_tensor_push_elem(seq, seq, &st) == PFVM_ERR_INVALID &&
          pfvm_tensor_push_elem(seq, NULL, &st) == PFVM_ERR_INVALID);
    /* an optional holds one value */
    CHECK(pfvm_tensor_push_elem(opt, seq, &st) == PFVM_OK && opt->has_value && pfvm_tensor_num_elems(opt) == 1);
    CHECK(pfvm_tensor_push_elem(opt, i, &st) == PFVM_ERR_INVALID && strstr(st.msg, "already"));
    c = pfvm_tensor_clone(opt, &st);
    CHECK(c && c->has_value && pfvm_tensor_elem(c, 0)->kind == PFVM_KIND_SEQUENCE &&
          pfvm_tensor_elem(pfvm_tensor_elem(c, 0), 0)->dtype == PFVM_FLOAT &&
          pfvm_tensor_elem(pfvm_tensor_elem(c, 0), 0) != f);
    pfvm_tensor_free(c);
    pfvm_tensor_free(opt); /* frees seq and f */
    pfvm_tensor_free(i);
}

/* The entry of value v in the plan. */
static const pfvm_plan_entry *plan_entry(const pfvm_plan_info *info, const pfvm_value *v)
{
    int i;
    for (i = 0; i < info->n_entries; i++)
        if (info->entries[i].value == v)
            return &info->entries[i];
    return NULL;
}

/* Concat's inputs stored in their slices of its output (a batch of one on
 * the channel axis): a = |x| and b = -x in y = Concat(a, b) at y's offset
 * and 256 bytes on, so the Concat copies nothing; c = relu(x), read again
 * after the second Concat (axis 2: no contiguous slices), keeps its own. */
static void test_planner_join(void)
{
    pfvm_status st;
    pfvm_model *m = pfvm_model_new(&st);
    pfvm_graph *g = pfvm_graph_new(m, NULL, "join", &st);
    pfvm_value *x = pfvm_graph_value(g, "x", &st), *a = pfvm_graph_value(g, "a", &st), *b = pfvm_graph_value(g, "b", &st);
    pfvm_value *c = pfvm_graph_value(g, "c", &st), *y = pfvm_graph_value(g, "y", &st), *z = pfvm_graph_value(g, "z", &st);
    pfvm_value *u = pfvm_graph_value(g, "u", &st), *w = pfvm_graph_value(g, "w", &st), *ab[2], *cc[2];
    pfvm_value *v = pfvm_graph_value(g, "v", &st);
    pfvm_node *cat;
    pfvm_exec *e;
    pfvm_tensor *in;
    pfvm_plan_info info;
    const pfvm_plan_entry *pa, *pb, *py, *pc;
    float data[64];
    int64_t dims[3] = {1, 4, 16};
    int i;
    const float *out;
    pfvm_model_set_opset(m, "", 17, &st);
    pfvm_graph_add_input(g, x, &st);
    x->type.kind = PFVM_KIND_TENSOR;
    x->type.dtype = PFVM_FLOAT;
    pfvm_shape_from_dims(m->syms, &x->type.shape, 3, dims, &st);
    CHECK(pfvm_graph_add_node(g, "Abs", "", "abs", &x, 1, &a, 1, &st) != NULL);
    CHECK(pfvm_graph_add_node(g, "Neg", "", "neg", &x, 1, &b, 1, &st) != NULL);
    CHECK(pfvm_graph_add_node(g, "Relu", "", "relu", &x, 1, &c, 1, &st) != NULL);
    ab[0] = a, ab[1] = b;
    CHECK((cat = pfvm_graph_add_node(g, "Concat", "", "cat", ab, 2, &y, 1, &st)) != NULL);
    pfvm_node_set_attr_int(cat, "axis", 1, &st);
    cc[0] = c, cc[1] = c;
    CHECK((cat = pfvm_graph_add_node(g, "Concat", "", "cat2", cc, 2, &z, 1, &st)) != NULL);
    pfvm_node_set_attr_int(cat, "axis", 2, &st);
    CHECK(pfvm_graph_add_node(g, "Abs", "", "abs2", &y, 1, &u, 1, &st) != NULL);
    CHECK(pfvm_graph_add_node(g, "Abs", "", "abs3", &z, 1, &w, 1, &st) != NULL);
    CHECK(pfvm_graph_add_node(g, "Neg", "", "neg2", &c, 1, &v, 1, &st) != NULL);
    pfvm_graph_add_output(g, u, &st);
    pfvm_graph_add_output(g, w, &st);
    pfvm_graph_add_output(g, v, &st);
    for (i = 0; i < 64; i++)
        data[i] = (float)(i - 32);
    e = pfvm_exec_new(m, NULL, &st);
    CHECK_MSG(e != NULL, "%s", st.msg);
    in = pfvm_tensor_view(PFVM_FLOAT, 3, dims, data, &st);
    CHECK_MSG(pfvm_exec_bind_one(e, in, &st) == PFVM_OK, "%s", st.msg);
    CHECK_MSG(pfvm_exec_run(e, &st) == PFVM_OK, "%s", st.msg);
    CHECK(pfvm_exec_plan_info(e, &info, &st) == PFVM_OK);
    pa = plan_entry(&info, a), pb = plan_entry(&info, b), py = plan_entry(&info, y), pc = plan_entry(&info, c);
    CHECK(pa && pb && py && pc);
    if (pa && pb && py && pc) {
        CHECK_MSG(pa->in_place == 2 && pb->in_place == 2 && pa->offset == py->offset && pb->offset == py->offset + 256,
                  "a %d at %zu, b %d at %zu, y at %zu", pa->in_place, pa->offset, pb->in_place, pb->offset, py->offset);
        CHECK(pc->in_place == 0 && (pc->offset + 256 <= py->offset || py->offset + 512 <= pc->offset));
    }
    out = (const float *)pfvm_exec_output(e, 0)->data;
    for (i = 0; i < 64; i++)
        CHECK(out[i] == (data[i] < 0 ? -data[i] : data[i]) && out[64 + i] == out[i]);
    out = (const float *)pfvm_exec_output(e, 1)->data; /* |Concat(c, c)| on axis 2: rows of 32 */
    for (i = 0; i < 128; i++)
        CHECK(out[i] == (data[i / 32 * 16 + i % 16] > 0 ? data[i / 32 * 16 + i % 16] : 0.0f));
    out = (const float *)pfvm_exec_output(e, 2)->data;
    CHECK(out[40] == -8.0f && out[3] == 0.0f);
    pfvm_tensor_free(in);
    pfvm_exec_free(e);
    pfvm_model_free(m);
}

/* A chain of n Relus over a [64] float input: the planner must reuse
 * memory (two buffers suffice), and the result must be right. */
static void test_planner(void)
{
    pfvm_status st;
    pfvm_model *m = pfvm_model_new(&st);
    pfvm_graph *g = pfvm_graph_new(m, NULL, "chain", &st);
    pfvm_value *prev = pfvm_graph_value(g, "x", &st), *v;
    pfvm_exec *e;
    pfvm_tensor *in;
    pfvm_plan_info info;
    float data[64];
    int64_t dims[1] = {64};
    int i;
    char name[16];
    pfvm_model_set_opset(m, "", 17, &st);
    pfvm_graph_add_input(g, prev, &st);
    prev->type.kind = PFVM_KIND_TENSOR;
    prev->type.dtype = PFVM_FLOAT;
    pfvm_shape_from_dims(m->syms, &prev->type.shape, 1, dims, &st);
    for (i = 0; i < 10; i++) {
        snprintf(name, sizeof name, "r%d", i);
        v = pfvm_graph_value(g, name, &st);
        CHECK(pfvm_graph_add_node(g, i % 2 ? "Relu" : "Abs", "", name, &prev, 1, &v, 1, &st) != NULL);
        prev = v;
    }
    pfvm_graph_add_output(g, prev, &st);
    for (i = 0; i < 64; i++)
        data[i] = (float)(i - 32);
    e = pfvm_exec_new(m, NULL, &st);
    CHECK_MSG(e != NULL, "%s", st.msg);
    in = pfvm_tensor_view(PFVM_FLOAT, 1, dims, data, &st);
    CHECK(pfvm_exec_bind_one(e, in, &st) == PFVM_OK);
    CHECK(pfvm_exec_run(e, &st) == PFVM_OK);
    CHECK(pfvm_exec_plan_info(e, &info, &st) == PFVM_OK);
    /* ten 256-byte intermediates live two at a time */
    CHECK_MSG(info.arena_bytes == 512 && info.lower_bound == 512, "arena %zu, lower bound %zu", info.arena_bytes,
              info.lower_bound);
    /* relu(abs(...)) = abs(x) */
    CHECK(((const float *)pfvm_exec_output(e, 0)->data)[40] == 8.0f);
    CHECK((uintptr_t)pfvm_exec_output(e, 0)->data % PFVM_DATA_ALIGN == 0); /* the arena is aligned too */
    CHECK(((const float *)pfvm_exec_output(e, 0)->data)[3] == 29.0f);
    /* a wrong input shape is a clear error naming the input */
    {
        int64_t bad[1] = {63};
        pfvm_tensor *b = pfvm_tensor_view(PFVM_FLOAT, 1, bad, data, &st);
        CHECK(pfvm_exec_bind_one(e, b, &st) == PFVM_ERR_SHAPE && strstr(st.msg, "'x'"));
        pfvm_tensor_free(b);
    }
    pfvm_tensor_free(in);
    pfvm_exec_free(e);
    pfvm_model_free(m);
}

/* A DAG whose every level uses the one below twice is 2^K nodes as a tree:
 * substitution, evaluation and the provers visit each distinct node once
 * (or give up within a budget, for the provers), so K = 200 is instant
 * where a tree walk would never end. */
static void test_sym_shared_dag(void)
{
    pfvm_symtab *t = pfvm_symtab_new();
    const pfvm_sym *v = pfvm_sym_var(t, "v", 1), *w = pfvm_sym_var(t, "w", 1);
    const pfvm_sym *n = pfvm_sym_var(t, "n", 0), *s = n, *r;
    pfvm_binding b;
    int64_t got = -1, want = 100;
    int k;
    memset(&b, 0, sizeof b);
    for (k = 0; k < 200; k++) {
        const pfvm_sym *d = k & 1 ? v : w, *e = k & 1 ? w : v;
        s = pfvm_sym_add(t, pfvm_sym_mod(t, s, d), pfvm_sym_div(t, s, e));
    }
    CHECK(s != NULL);
    CHECK(pfvm_sym_subst(t, s, &b) == s); /* nothing bound: the same node */
    CHECK(pfvm_sym_proven_nonneg(s));
    CHECK(pfvm_binding_set(&b, v, 3, NULL) == PFVM_OK && pfvm_binding_set(&b, w, 2, NULL) == PFVM_OK &&
          pfvm_binding_set(&b, n, 100, NULL) == PFVM_OK);
    for (k = 0; k < 200; k++) {
        int64_t d = k & 1 ? 3 : 2, e = k & 1 ? 2 : 3;
        want = want % d + want / e;
    }
    CHECK(pfvm_sym_eval(s, &b, &got) && got == want);
    r = pfvm_sym_subst(t, s, &b);
    CHECK(r && pfvm_sym_is_const(r, &got) && got == want);
    pfvm_binding_free(&b);
    pfvm_symtab_free(t);
}

int main(void)
{
    test_base();
    test_sym();
    test_sym_shared_dag();
    test_ir();
    test_tensor();
    test_containers();
    test_planner();
    test_planner_join();
    return CHECK_END();
}
