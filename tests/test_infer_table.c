/* Table-driven inference tests: for every operator with an inference
 * function, valid cases (symbolic dims, broadcasting with symbols) and the
 * errors its inference must report (wrong rank, provably unequal dims, bad
 * attributes, wrong input count or type). An error must come back as a
 * status whose message names the node, the op and the problem; it must
 * never crash (the ASan build runs this too). A last test walks the
 * registry and fails for any operator with an inference function that no
 * row (or a dedicated test in test_shapes.c) covers.
 *
 * Row syntax, tokens separated by spaces:
 *   inputs  `f[N,3]` a graph input (f float, d double, h float16, i64,
 *           i32, i8, u8, b bool, s string; dims are integers, symbols or
 *           sums/products like `N+1`, `2*N`), `f?` unknown rank, `S(f[N])`
 *           a sequence, `i64=1,2,-1` a 1-D int64 initializer (`i64=` is
 *           empty), `i64:5` a scalar initializer (f: and b: too), `-` an
 *           omitted input.
 *   attrs   `name=1` int, `name=[1,2]` ints, `name=0.5` float,
 *           `name=[0.5,1.0]` floats, `name='text'` string, `name=@i64:1,2`
 *           or `name=@f:1.5` a tensor (1-D / scalar), separated by `;`.
 *   want    the outputs' printed types (`float[N,3]`, `seq(float[N])`), or
 *           `!text`: inference fails with a message containing text, the
 *           node's name and the op. `nout` gives the output count for
 *           error rows (0: one). */
#include "shape/infer.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

typedef struct row {
    const char *op;
    int opset;
    const char *ins;
    const char *attrs;
    const char *want;
    int nout;
} row;

static const char *const DOMAIN_TRAINING = "ai.onnx.preview.training";

/* Operators covered by dedicated tests in test_shapes.c (subgraphs). */
static const char *const dedicated[] = {"If", "Loop", "Scan", "SequenceMap", NULL};

static const row rows[] = {
#include "infer_table.inc"
    {NULL, 0, NULL, NULL, NULL, 0}};

/* ---- parsing ------------------------------------------------------------ */

static pfvm_dtype parse_dtype(const char **p)
{
    static const struct {
        const char *code;
        pfvm_dtype dt;
    } codes[] = {{"i64", PFVM_INT64}, {"i32", PFVM_INT32}, {"i16", PFVM_INT16}, {"i8", PFVM_INT8},
                 {"u8", PFVM_UINT8},  {"bf", PFVM_BFLOAT16}, {"f", PFVM_FLOAT}, {"d", PFVM_DOUBLE},
                 {"h", PFVM_FLOAT16}, {"b", PFVM_BOOL},      {"s", PFVM_STRING}};
    size_t i;
    for (i = 0; i < sizeof codes / sizeof codes[0]; i++) {
        size_t n = strlen(codes[i].code);
        if (!strncmp(*p, codes[i].code, n)) {
            *p += n;
            return codes[i].dt;
        }
    }
    fprintf(stderr, "bad dtype in '%s'\n", *p);
    abort();
}

/* A dim: a sum of products of integers and symbols. */
static const pfvm_sym *parse_dim(pfvm_symtab *t, const char **p)
{
    const pfvm_sym *sum = pfvm_sym_const(t, 0);
    for (;;) {
        const pfvm_sym *prod = pfvm_sym_const(t, 1);
        for (;;) {
            char name[64];
            int n = 0;
            if (isdigit((unsigned char)**p)) {
                prod = pfvm_sym_muli(t, prod, strtoll(*p, (char **)p, 10));
            } else {
                while (isalnum((unsigned char)**p) || **p == '_')
                    name[n++] = *(*p)++;
                name[n] = 0;
                prod = pfvm_sym_mul(t, prod, pfvm_sym_var(t, name, 1));
            }
            if (**p != '*')
                break;
            (*p)++;
        }
        sum = pfvm_sym_add(t, sum, prod);
        if (**p != '+')
            break;
        (*p)++;
    }
    return sum;
}

static int parse_type(pfvm_model *m, const char **p, pfvm_type *ty)
{
    memset(ty, 0, sizeof *ty);
    if (**p == 'S' && (*p)[1] == '(') {
        *p += 2;
        ty->kind = PFVM_KIND_SEQUENCE;
        ty->elem = pfvm_model_type(m, NULL);
        if (parse_type(m, p, ty->elem))
            return 1;
        ty->dtype = ty->elem->dtype;
        (*p)++; /* ) */
        return 0;
    }
    ty->kind = PFVM_KIND_TENSOR;
    ty->dtype = parse_dtype(p);
    if (**p == '?') {
        (*p)++;
        ty->shape.rank = -1;
        return 0;
    }
    if (**p != '[')
        return 1;
    (*p)++;
    ty->shape.rank = 0;
    while (**p != ']') {
        ty->shape.dims[ty->shape.rank++] = parse_dim(m->syms, p);
        if (**p == ',')
            (*p)++;
    }
    (*p)++;
    return 0;
}

/* `=1,2,3` (1-D) or `:v` (scalar) contents after the dtype. */
static pfvm_tensor *parse_tensor(pfvm_model *m, pfvm_dtype dt, const char **p)
{
    double vals[64];
    int64_t ivals[64];
    int n = 0, scalar = **p == ':', isint = pfvm_dtype_is_int(dt);
    int64_t dims[1];
    pfvm_tensor *t;
    (*p)++;
    while (**p && **p != ' ' && **p != ';') {
        if (isint)
            ivals[n] = strtoll(*p, (char **)p, 10);
        else
            vals[n] = strtod(*p, (char **)p);
        n++;
        if (**p == ',')
            (*p)++;
    }
    dims[0] = n;
    t = pfvm_model_tensor(m, dt, scalar ? 0 : 1, dims, NULL, NULL);
    for (int i = 0; i < n; i++)
        switch (dt) {
        case PFVM_INT64: ((int64_t *)t->data)[i] = ivals[i]; break;
        case PFVM_INT32: ((int32_t *)t->data)[i] = (int32_t)ivals[i]; break;
        case PFVM_FLOAT: ((float *)t->data)[i] = (float)vals[i]; break;
        case PFVM_BOOL: ((unsigned char *)t->data)[i] = vals[i] != 0; break;
        case PFVM_UINT8: ((uint8_t *)t->data)[i] = (uint8_t)ivals[i]; break;
        case PFVM_INT8: ((int8_t *)t->data)[i] = (int8_t)ivals[i]; break;
        default: abort();
        }
    return t;
}

static void set_attrs(pfvm_model *m, pfvm_node *n, const char *s)
{
    while (s && *s) {
        char name[64];
        int k = 0;
        pfvm_attr *a;
        while (*s == ' ' || *s == ';')
            s++;
        if (!*s)
            break;
        while (*s != '=')
            name[k++] = *s++;
        name[k] = 0;
        s++;
        if (*s == '\'') {
            const char *e = strchr(s + 1, '\'');
            char buf[128];
            memcpy(buf, s + 1, (size_t)(e - s - 1));
            buf[e - s - 1] = 0;
            pfvm_node_set_attr_string(n, name, buf, NULL);
            s = e + 1;
        } else if (*s == '{') {
            int cnt = 0;
            a = pfvm_node_add_attr(n, name, PFVM_ATTR_STRINGS, NULL);
            a->strings = (const char **)pfvm_model_alloc(m, sizeof(char *) * 16);
            a->strings_len = (size_t *)pfvm_model_alloc(m, sizeof(size_t) * 16);
            s++;
            while (*s != '}') {
                const char *e = s;
                while (*e != ',' && *e != '}')
                    e++;
                a->strings[cnt] = pfvm_model_strndup(m, s, (size_t)(e - s));
                a->strings_len[cnt++] = (size_t)(e - s);
                s = *e == ',' ? e + 1 : e;
            }
            s++;
            a->n = cnt;
        } else if (*s == '@') {
            pfvm_dtype dt;
            s++;
            dt = parse_dtype(&s);
            a = pfvm_node_add_attr(n, name, PFVM_ATTR_TENSOR, NULL);
            a->t = parse_tensor(m, dt, &s);
        } else if (*s == '[') {
            const char *e = strchr(s, ']');
            int isf = memchr(s, '.', (size_t)(e - s)) != NULL, cnt = 0;
            double v[32];
            s++;
            while (*s != ']') {
                v[cnt++] = strtod(s, (char **)&s);
                if (*s == ',')
                    s++;
            }
            s++;
            if (isf) {
                a = pfvm_node_add_attr(n, name, PFVM_ATTR_FLOATS, NULL);
                a->floats = (float *)pfvm_model_alloc(m, sizeof(float) * (size_t)(cnt ? cnt : 1));
                for (k = 0; k < cnt; k++)
                    a->floats[k] = (float)v[k];
                a->n = cnt;
            } else {
                int64_t iv[32];
                for (k = 0; k < cnt; k++)
                    iv[k] = (int64_t)v[k];
                pfvm_node_set_attr_ints(n, name, iv, cnt, NULL);
            }
        } else {
            const char *e = s;
            while (*e && *e != ';' && *e != ' ')
                e++;
            if (memchr(s, '.', (size_t)(e - s)) || memchr(s, 'e', (size_t)(e - s)))
                pfvm_node_set_attr_float(n, name, (float)strtod(s, NULL), NULL);
            else
                pfvm_node_set_attr_int(n, name, strtoll(s, NULL, 10), NULL);
            s = e;
        }
    }
}

/* ---- running one row ------------------------------------------------------ */

static int n_outputs_of(const row *r)
{
    int n = 0;
    const char *s = r->want;
    if (r->want[0] == '!')
        return r->nout ? r->nout : 1;
    while (*s) {
        while (*s == ' ')
            s++;
        if (!*s)
            break;
        n++;
        while (*s && *s != ' ')
            s++;
    }
    return n;
}

static int run_row(const row *r, int index)
{
    pfvm_status st;
    pfvm_model *m = pfvm_model_new(&st);
    pfvm_graph *g = pfvm_graph_new(m, NULL, "g", &st);
    pfvm_value *ins[16], *outs[8];
    pfvm_node *node;
    char node_name[64], got[1024], label[160];
    const char *p = r->ins, *domain = "";
    int n_in = 0, n_out = n_outputs_of(r), i, ok = 1;
    pfvm_code rc;
    if (!strcmp(r->op, "Adagrad") || !strcmp(r->op, "Momentum") || !strcmp(r->op, "Adam") ||
        !strcmp(r->op, "Gradient")) {
        domain = DOMAIN_TRAINING;
        pfvm_model_set_opset(m, domain, 1, &st);
    }
    if (!pfvm_op_find("", r->op, r->opset) && pfvm_op_find("com.microsoft", r->op, 1)) {
        domain = "com.microsoft";
        pfvm_model_set_opset(m, domain, 1, &st);
    }
    pfvm_model_set_opset(m, "", r->opset, &st);
    while (*p) {
        char vname[16];
        while (*p == ' ')
            p++;
        if (!*p)
            break;
        if (*p == '-') {
            ins[n_in++] = NULL;
            p++;
            continue;
        }
        snprintf(vname, sizeof vname, "x%d", n_in);
        ins[n_in] = pfvm_graph_value(g, vname, &st);
        {
            const char *q = p;
            pfvm_dtype dt = (*q == 'S') ? PFVM_UNDEFINED : parse_dtype(&q);
            if (dt != PFVM_UNDEFINED && (*q == '=' || *q == ':')) {
                pfvm_graph_add_init(g, ins[n_in], parse_tensor(m, dt, &q), &st);
                p = q;
            } else {
                if (parse_type(m, &p, &ins[n_in]->type)) {
                    fprintf(stderr, "row %d (%s): bad input spec '%s'\n", index, r->op, r->ins);
                    abort();
                }
                ins[n_in]->has_type_info = 1;
                pfvm_graph_add_input(g, ins[n_in], &st);
            }
        }
        n_in++;
    }
    for (i = 0; i < n_out; i++) {
        char vname[16];
        snprintf(vname, sizeof vname, "y%d", i);
        outs[i] = pfvm_graph_value(g, vname, &st);
    }
    snprintf(node_name, sizeof node_name, "T_%s", r->op);
    node = pfvm_graph_add_node(g, r->op, domain, node_name, ins, n_in, outs, n_out, &st);
    set_attrs(m, node, r->attrs);
    for (i = 0; i < n_out; i++)
        pfvm_graph_add_output(g, outs[i], &st);
    snprintf(label, sizeof label, "row %d: %s(%s) {%s}", index, r->op, r->ins, r->attrs);
    rc = pfvm_infer_shapes(g, 1, &st);
    if (r->want[0] == '!') {
        char want_node[80], want_op[80];
        snprintf(want_node, sizeof want_node, "'%s'", node_name);
        snprintf(want_op, sizeof want_op, "(%s)", r->op);
        if (rc == PFVM_OK) {
            got[0] = 0;
            for (i = 0; i < n_out; i++) {
                size_t l = strlen(got);
                pfvm_type_print(&outs[i]->type, got + l, sizeof got - l - 1);
                strcat(got, " ");
            }
            fprintf(stderr, "%s: expected error '%s', got %s\n", label, r->want + 1, got);
            ok = 0;
        } else if (!strstr(st.msg, want_node) || !strstr(st.msg, want_op) || !strstr(st.msg, r->want + 1)) {
            fprintf(stderr, "%s: expected error '%s', got \"%s\"\n", label, r->want + 1, st.msg);
            ok = 0;
        }
    } else if (rc != PFVM_OK) {
        fprintf(stderr, "%s: unexpected error \"%s\"\n", label, st.msg);
        ok = 0;
    } else {
        got[0] = 0;
        for (i = 0; i < n_out; i++) {
            size_t l = strlen(got);
            if (i)
                strcat(got, " ");
            l = strlen(got);
            pfvm_type_print(&outs[i]->type, got + l, sizeof got - l - 1);
        }
        if (strcmp(got, r->want)) {
            fprintf(stderr, "%s: got %s, expected %s\n", label, got, r->want);
            ok = 0;
        }
    }
    pfvm_model_free(m);
    return ok;
}

static void test_rows(void)
{
    int i;
    for (i = 0; rows[i].op; i++)
        CHECK(run_row(&rows[i], i));
}

/* Every operator with an inference function has a valid row (ops with
 * subgraphs have dedicated tests in test_shapes.c); prints how many also
 * have error rows. */
static void test_coverage(void)
{
    int i, k, n_ops = 0, n_err = 0;
    const pfvm_op_def *d;
    for (i = 0; (d = pfvm_op_at(i)); i++) {
        int valid = 0, err = 0;
        if (!d->infer)
            continue;
        for (k = 0; dedicated[k] && strcmp(dedicated[k], d->name); k++) {
        }
        if (dedicated[k])
            continue;
        for (k = 0; rows[k].op; k++)
            if (!strcmp(rows[k].op, d->name) && rows[k].opset >= d->since && (!d->until || rows[k].opset <= d->until)) {
                if (rows[k].want[0] == '!')
                    err = 1;
                else
                    valid = 1;
            }
        CHECK_MSG(valid, "%s (opsets %d-%d) has no valid row in the inference table", d->name, d->since, d->until);
        n_ops++;
        n_err += err;
    }
    printf("%d operator definitions covered, %d with error rows\n", n_ops, n_err);
}

/* Conv's depthwise variant on a Conv whose weights have `co` output and
 * `ci` input channels per group: whether `needed` says it may run. */
static int conv_needs_depthwise(const pfvm_op_variant *v, int64_t co, int64_t ci, int64_t group)
{
    pfvm_status st;
    pfvm_model *m = pfvm_model_new(&st);
    pfvm_graph *g = m ? pfvm_graph_new(m, NULL, "g", &st) : NULL;
    int64_t dims[4] = {co, ci, 3, 3};
    pfvm_value *in[2] = {NULL, NULL}, *y = NULL;
    pfvm_tensor *w = NULL;
    pfvm_node *n = NULL;
    int r = -1;
    if (g && (in[0] = pfvm_graph_value(g, "x", &st)) && (in[1] = pfvm_graph_value(g, "w", &st)) &&
        (y = pfvm_graph_value(g, "y", &st)) && (w = pfvm_model_tensor(m, PFVM_FLOAT, 4, dims, NULL, &st)) &&
        !pfvm_graph_add_init(g, in[1], w, &st) && (n = pfvm_graph_add_node(g, "Conv", "", "c", in, 2, &y, 1, &st)) &&
        !pfvm_node_set_attr_int(n, "group", group, &st))
        r = v->needed(n, (const pfvm_value *const *)in);
    pfvm_model_free(m);
    return r;
}

/* Every kernel variant is complete (a PFVM_ macro, a reason, a predicate),
 * and Conv's depthwise one answers by the weights' shape. */
static void test_variants(void)
{
    const pfvm_op_def *d, *conv = pfvm_op_find("", "Conv", 17);
    const pfvm_op_variant *v;
    int i, n = 0;
    for (i = 0; (d = pfvm_op_at(i)); i++)
        for (v = d->variants; v && v->macro; v++, n++)
            CHECK_MSG(!strncmp(v->macro, "PFVM_", 5) && v->why && *v->why && v->needed, "%s: variant %s incomplete",
                      d->name, v->macro);
    CHECK(n >= 2);
    CHECK(conv && conv->variants && !strcmp(conv->variants[0].macro, "PFVM_CONV_NO_DEPTHWISE"));
    if (!conv || !conv->variants)
        return;
    CHECK(conv_needs_depthwise(&conv->variants[0], 8, 1, 8) == 1); /* one channel per group */
    CHECK(conv_needs_depthwise(&conv->variants[0], 8, 3, 1) == 0); /* a plain Conv */
    CHECK(conv_needs_depthwise(&conv->variants[0], 8, 2, 4) == 0); /* grouped, not depthwise */
}

int main(void)
{
    test_rows();
    test_coverage();
    test_variants();
    return CHECK_END();
}
