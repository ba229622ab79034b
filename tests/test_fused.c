/* Fusion and the fused-loop engine: every fusable operator run fused gives
 * what its own kernel gives (bit for bit: the engine computes what the
 * kernels compute), under every broadcasting pattern (scalar, row, column,
 * middle axis, dims bound at run time), across block boundaries; groups
 * form only where broadcasting is proven; a fused model saves as ONNX with
 * model-local functions, loads back and runs; intermediates of a group are
 * not planned (smaller arena); a function the engine cannot compile runs
 * as a subgraph.
 */
#include "exec/exec.h"
#include "ops/fused.h"
#include "passes/passes.h"
#include "onnx/onnx_io.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

/* ---- building models ----------------------------------------------------------- */

typedef struct tb {
    pfvm_model *m;
    pfvm_graph *g;
    pfvm_status st;
    int k;
} tb;

static void tb_init(tb *b, int opset)
{
    memset(b, 0, sizeof *b);
    b->m = pfvm_model_new(&b->st);
    b->m->ir_version = 8;
    pfvm_model_set_opset(b->m, "", opset, &b->st);
    b->g = pfvm_graph_new(b->m, NULL, "g", &b->st);
}

/* Input with dims "2,n,3" (names are dim_params). */
static pfvm_value *tb_in(tb *b, const char *name, pfvm_dtype dt, const char *dims)
{
    pfvm_value *v = pfvm_graph_value(b->g, name, &b->st);
    const char *p = dims;
    v->type.kind = PFVM_KIND_TENSOR;
    v->type.dtype = dt;
    v->type.shape.rank = 0;
    v->has_type_info = 1;
    while (p && *p) {
        char tok[32];
        size_t n = strcspn(p, ",");
        memcpy(tok, p, n);
        tok[n] = 0;
        v->type.shape.dims[v->type.shape.rank++] = (tok[0] >= '0' && tok[0] <= '9')
                                                       ? pfvm_sym_const(b->m->syms, atoll(tok))
                                                       : pfvm_sym_var(b->m->syms, tok, 1);
        p += n + (p[n] == ',');
    }
    pfvm_graph_add_input(b->g, v, &b->st);
    return v;
}

static pfvm_value *tb_scalar(tb *b, float x)
{
    char name[32];
    pfvm_value *v;
    pfvm_tensor *t;
    snprintf(name, sizeof name, "c%d", b->k++);
    v = pfvm_graph_value(b->g, name, &b->st);
    t = pfvm_model_tensor(b->m, PFVM_FLOAT, 0, NULL, NULL, &b->st);
    *(float *)t->data = x;
    pfvm_graph_add_init(b->g, v, t, &b->st);
    return v;
}

static pfvm_value *tb_ints(tb *b, const int64_t *v, int n)
{
    char name[32];
    pfvm_value *x;
    pfvm_tensor *t;
    int64_t dims[1];
    dims[0] = n;
    snprintf(name, sizeof name, "i%d", b->k++);
    x = pfvm_graph_value(b->g, name, &b->st);
    t = pfvm_model_tensor(b->m, PFVM_INT64, 1, dims, NULL, &b->st);
    memcpy(t->data, v, sizeof(int64_t) * (size_t)n);
    pfvm_graph_add_init(b->g, x, t, &b->st);
    return x;
}

static pfvm_node *tb_node(tb *b, const char *op, pfvm_value **in, int n_in, pfvm_value **out)
{
    char name[32];
    snprintf(name, sizeof name, "t%d", b->k++);
    *out = pfvm_graph_value(b->g, name, &b->st);
    return pfvm_graph_add_node(b->g, op, "", name, in, n_in, out, 1, &b->st);
}

static pfvm_value *tb_op(tb *b, const char *op, pfvm_value *x, pfvm_value *y, pfvm_value *z)
{
    pfvm_value *in[3] = {x, y, z}, *out;
    tb_node(b, op, in, z ? 3 : y ? 2 : 1, &out);
    return out;
}

static pfvm_value *tb_cast(tb *b, pfvm_value *x, pfvm_dtype to)
{
    pfvm_value *out;
    pfvm_node *n = tb_node(b, "Cast", &x, 1, &out);
    pfvm_node_set_attr_int(n, "to", (int64_t)to, &b->st);
    return out;
}

static void tb_out(tb *b, pfvm_value *v)
{
    pfvm_graph_add_output(b->g, v, &b->st);
}

/* ---- running ------------------------------------------------------------------------- */

static float frand(unsigned *s, float lo, float hi)
{
    *s = *s * 1103515245u + 12345u;
    return lo + (hi - lo) * (float)((*s >> 8) & 0xffff) / 65535.0f;
}

/* Random inputs for the model's inputs, with run-time dims from `dims`
 * (for dim_params, in order of appearance: n=.., m=..). */
static pfvm_tensor **make_inputs(pfvm_exec *e, const int64_t *bind, int n_bind, float lo, float hi, unsigned seed)
{
    int i, n = pfvm_exec_num_inputs(e);
    pfvm_tensor **ins = (pfvm_tensor **)calloc((size_t)n + 1, sizeof *ins);
    pfvm_status st;
    for (i = 0; i < n; i++) {
        const pfvm_value *v = pfvm_exec_input(e, i);
        int64_t dims[PFVM_MAX_RANK], k, numel;
        int d;
        for (d = 0; d < v->type.shape.rank; d++) {
            int64_t c;
            if (pfvm_sym_is_const(v->type.shape.dims[d], &c))
                dims[d] = c;
            else {
                int id = (int)v->type.shape.dims[d]->value;
                dims[d] = id < n_bind ? bind[id] : 3;
            }
        }
        ins[i] = pfvm_tensor_new(v->type.dtype, v->type.shape.rank, dims, &st);
        numel = pfvm_tensor_numel(ins[i]);
        for (k = 0; k < numel; k++) {
            float x = frand(&seed, lo, hi);
            switch (v->type.dtype) {
            case PFVM_FLOAT: ((float *)ins[i]->data)[k] = x; break;
            case PFVM_DOUBLE: ((double *)ins[i]->data)[k] = (double)x * 1.0000001; break;
            case PFVM_FLOAT16: ((uint16_t *)ins[i]->data)[k] = pfvm_float_to_half(x); break;
            case PFVM_BOOL: ((uint8_t *)ins[i]->data)[k] = x > (lo + hi) / 2; break;
            case PFVM_INT64: ((int64_t *)ins[i]->data)[k] = (int64_t)(x * 1000); break;
            default: break;
            }
        }
    }
    return ins;
}

static void free_tensors(pfvm_tensor **t, int n)
{
    int i;
    for (i = 0; i < n; i++)
        pfvm_tensor_free(t[i]);
    free(t);
}

/* Runs m (optimized with `passes` first unless NULL) on the inputs;
 * returns the outputs (cloned) and the arena size. */
static pfvm_tensor **run_model(pfvm_model *m, const char *passes, pfvm_tensor **ins, int *n_out, size_t *arena,
                               pfvm_status *st)
{
    pfvm_exec *e;
    pfvm_tensor **outs = NULL;
    int i;
    if (passes && pfvm_optimize(m, passes, NULL, st))
        return NULL;
    e = pfvm_exec_new(m, NULL, st);
    if (!e)
        return NULL;
    if (!pfvm_exec_bind(e, pfvm_tensors_const(ins), pfvm_exec_num_inputs(e), st) && !pfvm_exec_run(e, st)) {
        *n_out = pfvm_exec_num_outputs(e);
        outs = (pfvm_tensor **)calloc((size_t)*n_out + 1, sizeof *outs);
        for (i = 0; i < *n_out; i++)
            outs[i] = pfvm_tensor_clone(pfvm_exec_output(e, i), st);
        if (arena) {
            pfvm_plan_info info;
            pfvm_exec_plan_info(e, &info, st);
            *arena = info.arena_bytes;
        }
    }
    pfvm_exec_free(e);
    return outs;
}

/* check_fused's float tolerance in ulp (0: the same bits). The SiLU the
 * Conv's stores compute with AVX-512 is x / (1 + exp(-x)), one division
 * fewer than Sigmoid then Mul: within a few ulp of it, not its bits
 * (tests/test_gemm.c measures it). */
static int fused_ulp;

static int same_tensor(const pfvm_tensor *a, const pfvm_tensor *b)
{
    int64_t i, n;
    if (!a || !b || a->dtype != b->dtype || a->rank != b->rank ||
        memcmp(a->dims, b->dims, sizeof(int64_t) * (size_t)a->rank))
        return 0;
    n = pfvm_tensor_numel(a);
    if (!fused_ulp || a->dtype != PFVM_FLOAT)
        return !memcmp(a->data, b->data, (size_t)n * pfvm_dtype_size(a->dtype));
    for (i = 0; i < n; i++)
        if (check_ulp_apart(((const float *)a->data)[i], ((const float *)b->data)[i]) > fused_ulp)
            return 0;
    return 1;
}

static int count_op_prefix(const pfvm_graph *g, const char *prefix)
{
    int i, n = 0;
    for (i = 0; i < pfvm_graph_num_nodes(g); i++)
        n += !strncmp(g->nodes[i]->op_type, prefix, strlen(prefix));
    return n;
}

/* The opset check_fused builds with (0: 18). */
static int red_opset;

/* A model builder: fills a fresh tb. */
typedef void (*build_fn)(tb *b, const void *arg);

/* Builds twice, runs unfused and fused on the same inputs, compares bit
 * for bit; returns the number of fused groups formed (-1 on error). */
static int check_fused(const char *what, build_fn build, const void *arg, const int64_t *bind, int n_bind, float lo,
                       float hi)
{
    tb a, b;
    pfvm_exec *e;
    pfvm_tensor **ins, **ra, **rb;
    int na = 0, nb = 0, i, groups;
    tb_init(&a, red_opset ? red_opset : 18);
    tb_init(&b, red_opset ? red_opset : 18);
    build(&a, arg);
    build(&b, arg);
    e = pfvm_exec_new(a.m, NULL, &a.st);
    CHECK_MSG(e != NULL, "%s: %s", what, a.st.msg);
    if (!e)
        return -1;
    ins = make_inputs(e, bind, n_bind, lo, hi, 7);
    n_bind = pfvm_exec_num_inputs(e);
    pfvm_exec_free(e);
    ra = run_model(a.m, NULL, ins, &na, NULL, &a.st);
    CHECK_MSG(ra != NULL, "%s unfused: %s", what, a.st.msg);
    rb = run_model(b.m, "fuse", ins, &nb, NULL, &b.st);
    CHECK_MSG(rb != NULL, "%s fused: %s", what, b.st.msg);
    groups = count_op_prefix(b.g, "FusedElementwise_");
    for (i = 0; ra && rb && i < na && i < nb; i++)
        CHECK_MSG(same_tensor(ra[i], rb[i]), "%s: output %d differs", what, i);
    if (ra && rb && na == nb && na > 0 && ra[0]->dtype == PFVM_FLOAT && pfvm_tensor_numel(ra[0]) > 0) {
        /* and something was computed */
        int64_t k, numel = pfvm_tensor_numel(ra[0]);
        int nonzero = 0;
        for (k = 0; k < numel; k++)
            nonzero |= ((float *)ra[0]->data)[k] != 0;
        (void)nonzero;
    }
    if (ra)
        free_tensors(ra, na);
    if (rb)
        free_tensors(rb, nb);
    free_tensors(ins, n_bind);
    pfvm_model_free(a.m);
    pfvm_model_free(b.m);
    return groups;
}

/* ---- unary operators ----------------------------------------------------------------- */

typedef struct unary_case {
    const char *op;
    const char *pre;   /* applied first (domain), or NULL */
    const char *attr;  /* a float attribute, or NULL */
    float value;
} unary_case;

static void build_unary(tb *b, const void *arg)
{
    const unary_case *c = (const unary_case *)arg;
    pfvm_value *x = tb_in(b, "x", PFVM_FLOAT, "3,700"), *t, *y;
    pfvm_node *n;
    t = c->pre ? tb_op(b, c->pre, x, NULL, NULL) : x;
    if (c->pre && !strcmp(c->pre, "Reciprocal"))
        t = tb_op(b, "Abs", t, NULL, NULL);
    n = tb_node(b, c->op, &t, 1, &y);
    if (c->attr)
        pfvm_node_set_attr_float(n, c->attr, c->value, &b->st);
    if (!strcmp(c->op, "IsNaN") || !strcmp(c->op, "IsInf"))
        y = tb_cast(b, y, PFVM_FLOAT);
    y = tb_op(b, "Neg", y, NULL, NULL);
    tb_out(b, y);
}

static void test_unary(void)
{
    static const unary_case cases[] = {
        {"Abs", NULL, NULL, 0}, {"Neg", NULL, NULL, 0}, {"Exp", NULL, NULL, 0}, {"Log", "Abs", NULL, 0},
        {"Sqrt", "Abs", NULL, 0}, {"Reciprocal", NULL, NULL, 0}, {"Floor", NULL, NULL, 0}, {"Ceil", NULL, NULL, 0},
        {"Round", NULL, NULL, 0}, {"Sign", NULL, NULL, 0}, {"Sin", NULL, NULL, 0}, {"Cos", NULL, NULL, 0},
        {"Tan", NULL, NULL, 0}, {"Asin", NULL, NULL, 0}, {"Acos", NULL, NULL, 0}, {"Atan", NULL, NULL, 0},
        {"Sinh", NULL, NULL, 0}, {"Cosh", NULL, NULL, 0}, {"Tanh", NULL, NULL, 0}, {"Asinh", NULL, NULL, 0},
        {"Acosh", "Reciprocal", NULL, 0}, {"Atanh", NULL, NULL, 0}, {"Erf", NULL, NULL, 0},
        {"Sigmoid", NULL, NULL, 0}, {"Relu", NULL, NULL, 0}, {"LeakyRelu", NULL, "alpha", 0.2f},
        {"Elu", NULL, "alpha", 0.7f}, {"Selu", NULL, NULL, 0}, {"Celu", NULL, "alpha", 1.3f},
        {"HardSigmoid", NULL, "alpha", 0.3f}, {"HardSwish", NULL, NULL, 0}, {"Softplus", NULL, NULL, 0},
        {"Softsign", NULL, NULL, 0}, {"Mish", NULL, NULL, 0}, {"ThresholdedRelu", NULL, "alpha", 0.25f},
        {"Shrink", NULL, "lambd", 0.3f}, {"IsNaN", "Log", NULL, 0}, {"IsInf", "Reciprocal", NULL, 0}};
    int i;
    for (i = 0; i < (int)(sizeof cases / sizeof cases[0]); i++) {
        int g = check_fused(cases[i].op, build_unary, &cases[i], NULL, 0, -0.95f, 0.95f);
        CHECK_MSG(g == 1, "%s: %d groups", cases[i].op, g);
    }
}

/* ---- binary operators under broadcasting ----------------------------------------------- */

typedef struct binary_case {
    const char *op;
    const char *a, *b; /* dims of the two inputs */
    int bool_out;
} binary_case;

static void build_binary(tb *b, const void *arg)
{
    const binary_case *c = (const binary_case *)arg;
    pfvm_value *x = tb_in(b, "x", PFVM_FLOAT, c->a), *y = tb_in(b, "y", PFVM_FLOAT, c->b), *t, *u;
    /* a producer inside the group for each operand */
    x = tb_op(b, "Relu", x, NULL, NULL);
    t = tb_op(b, c->op, x, y, NULL);
    if (c->bool_out)
        t = tb_op(b, "Where", t, x, tb_op(b, "Neg", x, NULL, NULL));
    u = tb_op(b, "Abs", t, NULL, NULL);
    tb_out(b, u);
}

static void test_binary(void)
{
    static const char *ops[] = {"Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "PRelu", "Equal", "Greater", "Less",
                                "GreaterOrEqual", "LessOrEqual"};
    /* shapes: same, scalar, row, column, middle axis, leading ones, small inner dims, dynamic; then
     * spans the unfused kernels' blocks take with a partial last block (the last block in place) and a
     * first operand of one value per row (a squeeze-excite's scale) */
    static const char *shapes[][2] = {{"5,300", "5,300"}, {"5,300", ""},        {"5,300", "300"},
                                      {"5,300", "5,1"},   {"3,4,70", "1,4,1"}, {"3,4,70", "3,1,70"},
                                      {"2,1,3,2", "1,5,1,2"}, {"300,3", "300,1"}, {"n,40", "40"},
                                      {"n,m", "n,1"}, {"2,1300", "2,1300"}, {"5,1", "5,1500"},
                                      {"3,1", "3,700"}, {"2,1", "2,2048"}};
    int i, j;
    for (i = 0; i < (int)(sizeof ops / sizeof ops[0]); i++)
        for (j = 0; j < (int)(sizeof shapes / sizeof shapes[0]); j++) {
            binary_case c;
            char what[96];
            int64_t bind[8] = {0};
            int g, k;
            c.op = ops[i];
            c.a = shapes[j][0];
            c.b = shapes[j][1];
            c.bool_out = i >= 8;
            if (!strcmp(c.op, "PRelu") && (!strcmp(c.a, "2,1,3,2") || j >= 11))
                continue; /* PRelu's slope broadcasts into X only */
            for (k = 0; k < 8; k++)
                bind[k] = 37 + 20 * k;
            snprintf(what, sizeof what, "%s [%s] [%s]", c.op, c.a, c.b);
            g = check_fused(what, build_binary, &c, bind, 8, -2.0f, 2.0f);
            /* with [2,1,3,2] and [1,5,1,2], Relu(x) and Neg(x) have x's shape: a group of their own */
            if (j < 10)
                CHECK_MSG(g == (c.bool_out && j == 6 ? 2 : 1), "%s: %d groups", what, g);
            else /* a producer of the one-value operand's shape may form a group of its own */
                CHECK_MSG(g >= 1, "%s: %d groups", what, g);
        }
}

/* ---- the other element-wise operators ------------------------------------------------- */

static void build_variadic(tb *b, const void *arg)
{
    const char *op = (const char *)arg;
    pfvm_value *x = tb_in(b, "x", PFVM_FLOAT, "4,50"), *y = tb_in(b, "y", PFVM_FLOAT, "50"),
               *z = tb_in(b, "z", PFVM_FLOAT, "4,1"), *in[3], *t;
    in[0] = tb_op(b, "Sin", x, NULL, NULL);
    in[1] = y;
    in[2] = z;
    tb_node(b, op, in, 3, &t);
    tb_out(b, tb_op(b, "Neg", t, NULL, NULL));
}

static void build_misc(tb *b, const void *arg)
{
    int which = *(const int *)arg;
    pfvm_value *x = tb_in(b, "x", PFVM_FLOAT, "6,300"), *t, *lo, *hi, *in[3];
    switch (which) {
    case 0: /* Clip with both bounds, then with one */
        lo = tb_scalar(b, -0.5f);
        hi = tb_scalar(b, 0.25f);
        t = tb_op(b, "Clip", tb_op(b, "Sin", x, NULL, NULL), lo, hi);
        in[0] = t;
        in[1] = lo;
        tb_node(b, "Clip", in, 2, &t);
        in[0] = t;
        in[1] = NULL;
        in[2] = hi;
        tb_node(b, "Clip", in, 3, &t);
        tb_out(b, t);
        break;
    case 1: /* logic */
        t = tb_op(b, "Greater", x, tb_scalar(b, 0.1f), NULL);
        t = tb_op(b, "Not", t, NULL, NULL);
        t = tb_op(b, "And", t, tb_op(b, "Less", x, tb_scalar(b, 0.5f), NULL), NULL);
        t = tb_op(b, "Or", t, tb_op(b, "Equal", x, x, NULL), NULL);
        t = tb_op(b, "Xor", t, tb_op(b, "Less", x, tb_scalar(b, -0.5f), NULL), NULL);
        tb_out(b, tb_op(b, "Where", t, x, tb_op(b, "Exp", x, NULL, NULL)));
        break;
    case 2: /* casts between float types and bool */
        t = tb_cast(b, tb_op(b, "Mul", x, tb_scalar(b, 3.3f), NULL), PFVM_FLOAT16);
        t = tb_cast(b, t, PFVM_FLOAT);
        t = tb_op(b, "Add", t, tb_cast(b, tb_cast(b, x, PFVM_BFLOAT16), PFVM_FLOAT), NULL);
        t = tb_op(b, "Add", t, tb_cast(b, tb_cast(b, x, PFVM_BOOL), PFVM_FLOAT), NULL);
        tb_out(b, tb_cast(b, t, PFVM_DOUBLE));
        tb_out(b, tb_cast(b, t, PFVM_FLOAT16));
        break;
    case 3: { /* inputs of other types: double, float16, int64, bool */
        pfvm_value *d = tb_in(b, "d", PFVM_DOUBLE, "300"), *h = tb_in(b, "h", PFVM_FLOAT16, "6,1"),
                   *i = tb_in(b, "i", PFVM_INT64, "6,300"), *c = tb_in(b, "c", PFVM_BOOL, "6,300");
        t = tb_op(b, "Add", x, tb_cast(b, d, PFVM_FLOAT), NULL);
        t = tb_op(b, "Mul", t, tb_cast(b, h, PFVM_FLOAT), NULL);
        t = tb_op(b, "Sub", t, tb_cast(b, i, PFVM_FLOAT), NULL);
        t = tb_op(b, "Where", c, t, x);
        tb_out(b, t);
        tb_out(b, tb_op(b, "Not", c, NULL, NULL));
        break;
    }
    case 5: /* Clip with a NaN lower bound (not a max micro-op: NaN stays out), Relu6-style bounds */
        lo = tb_scalar(b, NAN);
        hi = tb_scalar(b, 0.25f);
        t = tb_op(b, "Clip", tb_op(b, "Sin", x, NULL, NULL), lo, hi);
        t = tb_op(b, "Clip", tb_op(b, "Mul", t, tb_scalar(b, 9.0f), NULL), tb_scalar(b, 0.0f), tb_scalar(b, 6.0f));
        tb_out(b, t);
        break;
    case 4: { /* Mod (fmod) and the outputs of a group read outside it */
        pfvm_node *n;
        in[0] = tb_op(b, "Exp", x, NULL, NULL);
        in[1] = tb_scalar(b, 0.7f);
        n = tb_node(b, "Mod", in, 2, &t);
        pfvm_node_set_attr_int(n, "fmod", 1, &b->st);
        tb_out(b, in[0]);
        tb_out(b, tb_op(b, "Neg", t, NULL, NULL));
        tb_out(b, t);
        break;
    }
    }
}

static void test_misc(void)
{
    static const char *variadic[] = {"Sum", "Mean", "Max", "Min"};
    int i, g;
    for (i = 0; i < 4; i++) {
        g = check_fused(variadic[i], build_variadic, variadic[i], NULL, 0, -1.0f, 1.0f);
        CHECK_MSG(g == 1, "%s: %d groups", variadic[i], g);
    }
    for (i = 0; i < 6; i++) {
        char what[32];
        snprintf(what, sizeof what, "misc %d", i);
        g = check_fused(what, build_misc, &i, NULL, 0, -1.0f, 1.0f);
        CHECK_MSG(g == 1, "%s: %d groups", what, g);
    }
}

/* ---- where groups form ------------------------------------------------------------------ */

static void build_proofs(tb *b, const void *arg)
{
    int which = *(const int *)arg;
    pfvm_value *x, *y, *t;
    switch (which) {
    case 0: /* n vs m: cannot be proven to broadcast */
        x = tb_in(b, "x", PFVM_FLOAT, "n");
        y = tb_in(b, "y", PFVM_FLOAT, "m");
        t = tb_op(b, "Add", tb_op(b, "Relu", x, NULL, NULL), y, NULL);
        tb_out(b, tb_op(b, "Neg", t, NULL, NULL));
        break;
    case 1: /* n vs n: proven */
        x = tb_in(b, "x", PFVM_FLOAT, "n,4");
        y = tb_in(b, "y", PFVM_FLOAT, "n,1");
        t = tb_op(b, "Add", tb_op(b, "Relu", x, NULL, NULL), y, NULL);
        tb_out(b, tb_op(b, "Neg", t, NULL, NULL));
        break;
    case 2: /* shapes differ along the chain: two groups */
        x = tb_in(b, "x", PFVM_FLOAT, "4,1");
        y = tb_in(b, "y", PFVM_FLOAT, "4,8");
        t = tb_op(b, "Exp", tb_op(b, "Relu", x, NULL, NULL), NULL, NULL); /* [4,1] */
        t = tb_op(b, "Add", t, y, NULL);                                    /* [4,8] */
        tb_out(b, tb_op(b, "Neg", t, NULL, NULL));
        break;
    case 3: /* a path through MatMul: Relu and Add stay apart; MatMul heads Add's group */
        x = tb_in(b, "x", PFVM_FLOAT, "4,4");
        t = tb_op(b, "Relu", x, NULL, NULL);
        y = tb_op(b, "MatMul", t, t, NULL);
        tb_out(b, tb_op(b, "Add", tb_op(b, "Neg", t, NULL, NULL), y, NULL));
        break;
    }
}

static void test_groups(void)
{
    int i, expect[4] = {0, 1, 2, 2};
    int64_t bind[2] = {5, 5};
    for (i = 0; i < 4; i++) {
        char what[32];
        int g;
        snprintf(what, sizeof what, "groups %d", i);
        g = check_fused(what, build_proofs, &i, bind, 2, -1.0f, 1.0f);
        CHECK_MSG(g == expect[i], "%s: %d groups, expected %d", what, g, expect[i]);
    }
    {
        /* the cycle case: Relu and Add around MatMul stay apart, Neg joins
         * Relu's group, MatMul heads Add's */
        tb b;
        pfvm_opt_report r;
        i = 3;
        tb_init(&b, 17);
        build_proofs(&b, &i);
        CHECK(pfvm_optimize(b.m, "fuse", &r, &b.st) == PFVM_OK);
        CHECK(r.n == 1 && r.runs[0].stats.groups == 2 && r.runs[0].stats.nodes_before == 4 &&
              r.runs[0].stats.nodes_after == 2);
        pfvm_model_free(b.m);
    }
}

/* ---- reductions ending a group ------------------------------------------------------- */

typedef struct red_case {
    const char *op;
    const char *shape;
    int64_t axes[4];
    int n_axes, keepdims, opset;
} red_case;


static void build_reduce(tb *b, const void *arg)
{
    const red_case *c = (const red_case *)arg;
    pfvm_value *x = tb_in(b, "x", PFVM_FLOAT, c->shape), *y = tb_in(b, "y", PFVM_FLOAT, c->shape), *t, *in[2], *r;
    pfvm_node *n;
    /* a prologue: (x - y)^2 * 0.5 + exp(x) (the squares stay in registers) */
    t = tb_op(b, "Sub", x, y, NULL);
    t = tb_op(b, "Pow", t, tb_scalar(b, 2.0f), NULL);
    t = tb_op(b, "Mul", t, tb_scalar(b, 0.5f), NULL);
    t = tb_op(b, "Add", t, tb_op(b, "Exp", x, NULL, NULL), NULL);
    if (!strcmp(c->op, "ReduceMin") || !strcmp(c->op, "ReduceMax") || !strcmp(c->op, "ReduceL1"))
        t = tb_op(b, "Sub", t, tb_scalar(b, 1.5f), NULL);
    in[0] = t;
    in[1] = NULL;
    if (c->opset >= 18 || (!strcmp(c->op, "ReduceSum") && c->opset >= 13)) {
        in[1] = c->n_axes ? tb_ints(b, c->axes, c->n_axes) : NULL;
        n = tb_node(b, c->op, in, in[1] ? 2 : 1, &r);
    } else {
        n = tb_node(b, c->op, in, 1, &r);
        if (c->n_axes)
            pfvm_node_set_attr_ints(n, "axes", c->axes, c->n_axes, &b->st);
    }
    pfvm_node_set_attr_int(n, "keepdims", c->keepdims, &b->st);
    tb_out(b, r);
    tb_out(b, t); /* also read outside: a second output of the group */
}

static void test_reduce(void)
{
    static const char *ops[] = {"ReduceSum", "ReduceMean", "ReduceSumSquare", "ReduceL1", "ReduceL2", "ReduceMax",
                                "ReduceMin", "ReduceProd", "ReduceLogSum"};
    static const red_case shapes[] = {
        {NULL, "6,300", {-1}, 1, 1, 18},   {NULL, "6,300", {0}, 1, 0, 18},   {NULL, "4,5,70", {1}, 1, 1, 18},
        {NULL, "4,5,70", {0, 2}, 2, 0, 18}, {NULL, "4,5,70", {0}, 0, 1, 18}, {NULL, "300,3", {1}, 1, 1, 18},
        {NULL, "n,64", {-1}, 1, 1, 18},    {NULL, "6,300", {-1}, 1, 1, 13},  {NULL, "3,1,7", {1, 2}, 2, 0, 13}};
    int i, j;
    for (i = 0; i < (int)(sizeof ops / sizeof ops[0]); i++)
        for (j = 0; j < (int)(sizeof shapes / sizeof shapes[0]); j++) {
            red_case c = shapes[j];
            char what[96];
            int64_t bind[4] = {37, 37, 37, 37};
            int g;
            c.op = ops[i];
            red_opset = c.opset;
            snprintf(what, sizeof what, "%s [%s] axes %d keep %d opset %d", c.op, c.shape, c.n_axes, c.keepdims,
                     c.opset);
            g = check_fused(what, build_reduce, &c, bind, 4, -1.0f, 1.0f);
            CHECK_MSG(g == 1, "%s: %d groups", what, g);
        }
    red_opset = 0;
}

/* ---- save, load, run; memory ------------------------------------------------------------ */

static void build_chain(tb *b, const void *arg)
{
    pfvm_value *x = tb_in(b, "x", PFVM_FLOAT, "n,256"), *g = tb_in(b, "g", PFVM_FLOAT, "256"), *t;
    (void)arg;
    t = tb_op(b, "Mul", x, tb_scalar(b, 0.7071f), NULL);
    t = tb_op(b, "Erf", t, NULL, NULL);
    t = tb_op(b, "Add", t, tb_scalar(b, 1.0f), NULL);
    t = tb_op(b, "Mul", t, x, NULL);
    t = tb_op(b, "Mul", t, tb_scalar(b, 0.5f), NULL);
    t = tb_op(b, "Mul", t, g, NULL);
    tb_out(b, t);
}

static void test_roundtrip(void)
{
    tb a, b;
    pfvm_status st;
    pfvm_exec *e;
    pfvm_tensor **ins, **ra, **rb, **rc;
    void *bytes = NULL;
    size_t size = 0, arena_a = 0, arena_b = 0, arena_c = 0;
    int64_t bind[1] = {64};
    int na = 0, nb = 0, nc = 0;
    pfvm_model *m2;
    pfvm_opt_report rep;
    tb_init(&a, 17);
    tb_init(&b, 17);
    build_chain(&a, NULL);
    build_chain(&b, NULL);
    e = pfvm_exec_new(a.m, NULL, &st);
    ins = make_inputs(e, bind, 1, -2, 2, 3);
    pfvm_exec_free(e);
    ra = run_model(a.m, NULL, ins, &na, &arena_a, &st);
    CHECK(pfvm_optimize(b.m, "fuse", &rep, &b.st) == PFVM_OK);
    CHECK(rep.n == 1 && rep.runs[0].stats.groups == 1 && rep.runs[0].stats.nodes_before == 6 &&
          rep.runs[0].stats.nodes_after == 1);
    CHECK(rep.runs[0].stats.bytes_avoided == 0); /* n is symbolic */
    rb = run_model(b.m, NULL, ins, &nb, &arena_b, &st);
    CHECK(ra && rb && na == 1 && nb == 1 && same_tensor(ra[0], rb[0]));
    /* the group's five intermediates [64,256] are not planned */
    CHECK_MSG(arena_b < arena_a, "arena fused %zu, unfused %zu", arena_b, arena_a);
    CHECK(arena_b <= 64 * 256 * 4 + 64);
    CHECK(pfvm_onnx_save_memory(b.m, &bytes, &size, &st) == PFVM_OK);
    m2 = pfvm_onnx_load_memory(bytes, size, 0, &st);
    CHECK_MSG(m2 != NULL, "%s", st.msg);
    if (m2) {
        CHECK(pfvm_model_num_functions(m2) == 1 && !strcmp(pfvm_model_function_at(m2, 0)->domain, "pfvm"));
        CHECK(pfvm_model_opset(m2, "pfvm") == 1 && m2->ir_version >= 8);
        CHECK(pfvm_graph_num_nodes(m2->graph) == 1 && !strcmp(m2->graph->nodes[0]->domain, "pfvm"));
        rc = run_model(m2, NULL, ins, &nc, &arena_c, &st);
        CHECK_MSG(rc && nc == 1 && same_tensor(ra[0], rc[0]), "%s", st.msg);
        CHECK(arena_c == arena_b);
        if (rc)
            free_tensors(rc, nc);
        /* optimizing a loaded fused model again changes nothing */
        CHECK(pfvm_optimize(m2, NULL, &rep, &st) == PFVM_OK);
        CHECK(pfvm_graph_num_nodes(m2->graph) == 1);
        pfvm_model_free(m2);
    }
    pfvm_onnx_free(bytes);
    if (ra)
        free_tensors(ra, na);
    if (rb)
        free_tensors(rb, nb);
    free_tensors(ins, 2);
    pfvm_model_free(a.m);
    pfvm_model_free(b.m);
}

/* Constant shapes: the pass counts the bytes it keeps out of memory. */
static void test_bytes_avoided(void)
{
    tb b;
    pfvm_opt_report rep;
    pfvm_value *x, *t;
    tb_init(&b, 17);
    x = tb_in(&b, "x", PFVM_FLOAT, "10,100");
    t = tb_op(&b, "Relu", x, NULL, NULL);
    t = tb_op(&b, "Neg", t, NULL, NULL);
    t = tb_op(&b, "Exp", t, NULL, NULL);
    tb_out(&b, t);
    CHECK(pfvm_optimize(b.m, "fuse", &rep, &b.st) == PFVM_OK);
    CHECK(rep.runs[0].stats.groups == 1 && rep.runs[0].stats.bytes_avoided == 2 * 1000 * 4);
    pfvm_model_free(b.m);
}

/* Model-local functions read from a file: one the engine compiles
 * (MatMul heading Relu), one it cannot (Transpose inside), which runs as a
 * subgraph. */
static pfvm_function *add_function(tb *b, const char *name, const char *op1, const char *op2)
{
    pfvm_function *f = pfvm_model_add_function(b->m, "local", name, &b->st);
    pfvm_graph *body;
    pfvm_value *fx, *ft, *fy, *in[2];
    CHECK_MSG(f != NULL, "%s", b->st.msg);
    if (!f)
        return NULL;
    body = f->body;
    CHECK(body && body != b->m->graph && !body->parent && !strcmp(f->name, name) && !strcmp(f->domain, "local"));
    CHECK(pfvm_model_function(b->m, "local", name) == f);
    fx = pfvm_graph_value(body, "a", &b->st);
    pfvm_graph_add_input(body, fx, &b->st);
    ft = pfvm_graph_value(body, "p", &b->st);
    fy = pfvm_graph_value(body, "r", &b->st);
    in[0] = in[1] = fx;
    pfvm_graph_add_node(body, op1, "", "n1", in, !strcmp(op1, "MatMul") ? 2 : 1, &ft, 1, &b->st);
    pfvm_graph_add_node(body, op2, "", "n2", &ft, 1, &fy, 1, &b->st);
    pfvm_graph_add_output(body, fy, &b->st);
    return f;
}

static void test_function_call(void)
{
    tb b;
    pfvm_value *x, *y, *z;
    pfvm_tensor **ins, **outs;
    int n_out = 0, i;
    tb_init(&b, 17);
    pfvm_model_set_opset(b.m, "local", 1, &b.st);
    add_function(&b, "MatRelu", "MatMul", "Relu");
    add_function(&b, "TRelu", "Transpose", "Relu");
    /* one function per domain and name */
    CHECK(pfvm_model_add_function(b.m, "local", "TRelu", &b.st) == NULL && b.st.code == PFVM_ERR_INVALID &&
          strstr(b.st.msg, "TRelu"));
    CHECK(pfvm_model_num_functions(b.m) == 2 && pfvm_model_function_at(b.m, 1)->n_opsets == pfvm_model_num_opsets(b.m));
    x = tb_in(&b, "x", PFVM_FLOAT, "3,3");
    y = pfvm_graph_value(b.g, "y", &b.st);
    z = pfvm_graph_value(b.g, "z", &b.st);
    pfvm_graph_add_node(b.g, "MatRelu", "local", "call", &x, 1, &y, 1, &b.st);
    pfvm_graph_add_node(b.g, "TRelu", "local", "call2", &x, 1, &z, 1, &b.st);
    tb_out(&b, y);
    tb_out(&b, z);
    {
        pfvm_exec *e = pfvm_exec_new(b.m, NULL, &b.st);
        CHECK_MSG(e != NULL, "%s", b.st.msg);
        ins = make_inputs(e, NULL, 0, -1, 1, 5);
        pfvm_exec_free(e);
    }
    CHECK(pfvm_infer_shapes(b.g, 0, &b.st) == PFVM_OK && y->type.shape.rank == 2 && z->type.shape.rank == 2);
    outs = run_model(b.m, NULL, ins, &n_out, NULL, &b.st);
    CHECK_MSG(outs && n_out == 2, "%s", b.st.msg);
    if (outs) {
        const float *a = (const float *)ins[0]->data, *r = (const float *)outs[0]->data;
        const float *t = (const float *)outs[1]->data;
        int bad = 0, j, k;
        for (i = 0; i < 3; i++)
            for (j = 0; j < 3; j++) {
                float s = 0;
                for (k = 0; k < 3; k++)
                    s += a[i * 3 + k] * a[k * 3 + j];
                bad |= fabsf((s > 0 ? s : 0) - r[i * 3 + j]) > 1e-5f;
                bad |= t[i * 3 + j] != (a[j * 3 + i] > 0 ? a[j * 3 + i] : 0);
            }
        CHECK(!bad);
        free_tensors(outs, n_out);
    }
    free_tensors(ins, 1);
    pfvm_model_free(b.m);
}

/* ---- epilogues: Conv, Gemm, MatMul heading their element-wise consumers ------------------- */

static void build_epilogue(tb *b, const void *arg)
{
    int which = *(const int *)arg;
    pfvm_value *x, *w, *bias, *t, *in[3];
    pfvm_node *n;
    switch (which) {
    case 0: /* MatMul + bias + GELU-ish (x * sigmoid(1.702 x)) */
        x = tb_in(b, "x", PFVM_FLOAT, "n,64");
        w = tb_in(b, "w", PFVM_FLOAT, "64,300");
        bias = tb_in(b, "bias", PFVM_FLOAT, "300");
        t = tb_op(b, "Add", tb_op(b, "MatMul", x, w, NULL), bias, NULL);
        t = tb_op(b, "Mul", t, tb_op(b, "Sigmoid", tb_op(b, "Mul", t, tb_scalar(b, 1.702f), NULL), NULL, NULL), NULL);
        tb_out(b, t);
        break;
    case 1: /* Gemm (transB, bias inside) + Relu */
        x = tb_in(b, "x", PFVM_FLOAT, "n,48");
        w = tb_in(b, "w", PFVM_FLOAT, "20,48");
        bias = tb_in(b, "bias", PFVM_FLOAT, "20");
        in[0] = x;
        in[1] = w;
        in[2] = bias;
        n = tb_node(b, "Gemm", in, 3, &t);
        pfvm_node_set_attr_int(n, "transB", 1, &b->st);
        tb_out(b, tb_op(b, "Relu", t, NULL, NULL));
        break;
    case 2: { /* Conv + channel bias + residual + Relu */
        pfvm_value *cb = tb_in(b, "cb", PFVM_FLOAT, "8,1,1");
        x = tb_in(b, "x", PFVM_FLOAT, "2,8,10,10");
        w = tb_in(b, "w", PFVM_FLOAT, "8,8,3,3");
        in[0] = x;
        in[1] = w;
        n = tb_node(b, "Conv", in, 2, &t);
        pfvm_node_set_attr_ints(n, "pads", (const int64_t[]){1, 1, 1, 1}, 4, &b->st);
        t = tb_op(b, "Add", t, cb, NULL);
        t = tb_op(b, "Add", t, x, NULL);
        tb_out(b, tb_op(b, "Relu", t, NULL, NULL));
        break;
    }
    case 4: /* attention scores: MatMul, scale, mask, Softmax (head and tail) */
    case 5: /* the same with LogSoftmax, opset 11 (2-D flattening) */
    case 6: { /* Hardmax after a prologue without head */
        pfvm_value *mask = tb_in(b, "mask", PFVM_FLOAT, "16,16");
        pfvm_node *sm;
        x = tb_in(b, "q", PFVM_FLOAT, "n,16,32");
        w = tb_in(b, "kt", PFVM_FLOAT, "32,16");
        t = which == 6 ? tb_op(b, "Tanh", x, NULL, NULL) : tb_op(b, "MatMul", x, w, NULL);
        if (which == 6)
            t = tb_op(b, "Add", tb_op(b, "Mul", t, tb_scalar(b, 3.0f), NULL), tb_op(b, "Sin", x, NULL, NULL), NULL);
        else
            t = tb_op(b, "Add", tb_op(b, "Mul", t, tb_scalar(b, 0.125f), NULL), mask, NULL);
        in[0] = t;
        sm = tb_node(b, which == 4 ? "Softmax" : which == 5 ? "LogSoftmax" : "Hardmax", in, 1, &t);
        if (which == 5)
            pfvm_node_set_attr_int(sm, "axis", 1, &b->st);
        tb_out(b, t);
        if (which == 6)
            tb_out(b, mask);
        break;
    }
    case 7:   /* Conv + Clip: the loop reads Conv's result where it lies (in the output) */
    case 8: { /* Conv read again after an output is written: copied block by block first */
        x = tb_in(b, "x", PFVM_FLOAT, "2,8,24,24");
        w = tb_in(b, "w", PFVM_FLOAT, "8,8,1,1");
        in[0] = x;
        in[1] = w;
        tb_node(b, "Conv", in, 2, &t);
        in[0] = t;
        in[1] = tb_scalar(b, -0.5f);
        in[2] = tb_scalar(b, 0.75f);
        tb_node(b, "Clip", in, 3, &x);
        tb_out(b, x);
        if (which == 8)
            tb_out(b, tb_op(b, "Mul", tb_op(b, "Tanh", x, NULL, NULL), t, NULL));
        break;
    }
    case 9:    /* depthwise Conv + Clip (Relu6 bounds): clamped as the kernel stores, 4 planes per pass */
    case 10: { /* the same, stride 2, a lower bound only */
        static const int64_t pads[4] = {1, 1, 1, 1}, strides[2] = {2, 2};
        pfvm_node *conv;
        x = tb_in(b, "x", PFVM_FLOAT, "2,7,19,37");
        w = tb_in(b, "w", PFVM_FLOAT, "7,1,3,3");
        in[0] = x;
        in[1] = w;
        conv = tb_node(b, "Conv", in, 2, &t);
        pfvm_node_set_attr_int(conv, "group", 7, &b->st);
        pfvm_node_set_attr_ints(conv, "pads", pads, 4, &b->st);
        if (which == 10)
            pfvm_node_set_attr_ints(conv, "strides", strides, 2, &b->st);
        in[0] = t;
        in[1] = tb_scalar(b, which == 9 ? 0.0f : -0.25f);
        in[2] = which == 9 ? tb_scalar(b, 0.5f) : NULL;
        tb_node(b, "Clip", in, which == 9 ? 3 : 2, &x);
        tb_out(b, x);
        break;
    }
    case 11:   /* Conv (1x1, 16 filters: packed at bind) + Relu: Relu's form as the kernel stores */
    case 12: { /* depthwise Conv of Sqrt (NaN windows: Relu makes them +0) + Relu, 4 planes per pass */
        pfvm_node *conv;
        x = tb_in(b, "x", PFVM_FLOAT, which == 11 ? "2,8,24,24" : "2,7,19,37");
        w = tb_in(b, "w", PFVM_FLOAT, which == 11 ? "16,8,1,1" : "7,1,3,3");
        in[0] = which == 11 ? x : tb_op(b, "Sqrt", x, NULL, NULL);
        in[1] = w;
        conv = tb_node(b, "Conv", in, 2, &t);
        if (which == 12) {
            pfvm_node_set_attr_int(conv, "group", 7, &b->st);
            pfvm_node_set_attr_ints(conv, "pads", (const int64_t[]){1, 1, 1, 1}, 4, &b->st);
        }
        tb_out(b, tb_op(b, "Relu", t, NULL, NULL));
        break;
    }
    case 13: /* Conv (1x1, bias, packed at bind) + residual + Relu: the GEMM's tiles add the residual as they store */
    case 14: { /* Conv (3x3, odd sizes) + residual, operands swapped, no clamp */
        pfvm_node *conv;
        pfvm_value *skip;
        x = tb_in(b, "x", PFVM_FLOAT, which == 13 ? "2,8,24,24" : "2,5,13,11");
        w = tb_in(b, "w", PFVM_FLOAT, which == 13 ? "16,8,1,1" : "6,5,3,3");
        skip = tb_in(b, "skip", PFVM_FLOAT, which == 13 ? "2,16,24,24" : "2,6,13,11");
        in[0] = x;
        in[1] = w;
        in[2] = tb_in(b, "bias", PFVM_FLOAT, which == 13 ? "16" : "6");
        conv = tb_node(b, "Conv", in, 3, &t);
        if (which == 14)
            pfvm_node_set_attr_ints(conv, "pads", (const int64_t[]){1, 1, 1, 1}, 4, &b->st);
        t = which == 13 ? tb_op(b, "Add", t, skip, NULL) : tb_op(b, "Add", skip, t, NULL);
        tb_out(b, which == 13 ? tb_op(b, "Relu", t, NULL, NULL) : t);
        break;
    }
    case 15: { /* depthwise Conv + its own input + Clip: the residual in a pass after the planes */
        pfvm_node *conv;
        x = tb_in(b, "x", PFVM_FLOAT, "2,7,19,37");
        w = tb_in(b, "w", PFVM_FLOAT, "7,1,3,3");
        in[0] = x;
        in[1] = w;
        conv = tb_node(b, "Conv", in, 2, &t);
        pfvm_node_set_attr_int(conv, "group", 7, &b->st);
        pfvm_node_set_attr_ints(conv, "pads", (const int64_t[]){1, 1, 1, 1}, 4, &b->st);
        in[0] = tb_op(b, "Add", t, x, NULL);
        in[1] = tb_scalar(b, 0.0f);
        in[2] = tb_scalar(b, 0.5f);
        tb_node(b, "Clip", in, 3, &t);
        tb_out(b, t);
        break;
    }
    case 16: { /* the residual an intermediate that dies in the group: its storage may be the output's */
        pfvm_value *y = tb_in(b, "y", PFVM_FLOAT, "2,8,24,24"), *s;
        x = tb_in(b, "x", PFVM_FLOAT, "2,8,24,24");
        w = tb_in(b, "w", PFVM_FLOAT, "8,8,1,1");
        in[0] = y;
        in[1] = w;
        tb_node(b, "Conv", in, 2, &s);
        in[0] = x;
        tb_node(b, "Conv", in, 2, &t);
        tb_out(b, tb_op(b, "Relu", tb_op(b, "Add", t, s, NULL), NULL, NULL));
        break;
    }
    case 17:   /* Conv (1x1, bias, packed at bind) + SiLU: the GEMM's tiles store x * sigmoid(x) */
    case 18:   /* Conv (3x3, odd sizes) + SiLU, Mul's operands swapped */
    case 19:   /* depthwise Conv + SiLU: each plane once computed (4 planes per pass, odd widths) */
    case 20: { /* Conv + Sigmoid of its result times another input: not SiLU, the loop runs */
        pfvm_node *conv;
        int dw = which == 19;
        x = tb_in(b, "x", PFVM_FLOAT, which == 17 ? "2,8,24,24" : dw ? "2,7,19,37" : "2,5,13,11");
        w = tb_in(b, "w", PFVM_FLOAT, which == 17 ? "16,8,1,1" : dw ? "7,1,3,3" : "6,5,3,3");
        in[0] = x;
        in[1] = w;
        in[2] = tb_in(b, "bias", PFVM_FLOAT, which == 17 ? "16" : dw ? "7" : "6");
        conv = tb_node(b, "Conv", in, 3, &t);
        if (which != 17)
            pfvm_node_set_attr_ints(conv, "pads", (const int64_t[]){1, 1, 1, 1}, 4, &b->st);
        if (dw)
            pfvm_node_set_attr_int(conv, "group", 7, &b->st);
        if (which == 20)
            t = tb_op(b, "Mul", tb_op(b, "Sigmoid", t, NULL, NULL), tb_in(b, "skip", PFVM_FLOAT, "2,6,13,11"), NULL);
        else
            t = which == 18 ? tb_op(b, "Mul", tb_op(b, "Sigmoid", t, NULL, NULL), t, NULL)
                            : tb_op(b, "Mul", t, tb_op(b, "Sigmoid", t, NULL, NULL), NULL);
        tb_out(b, t);
        break;
    }
    case 3: /* MatMul read twice inside and once outside: stays apart */
        x = tb_in(b, "x", PFVM_FLOAT, "5,6");
        w = tb_in(b, "w", PFVM_FLOAT, "6,7");
        t = tb_op(b, "MatMul", x, w, NULL);
        tb_out(b, tb_op(b, "Tanh", tb_op(b, "Abs", t, NULL, NULL), NULL, NULL));
        tb_out(b, t);
        break;
    }
}

static void test_epilogue(void)
{
    int i, expect_nodes[21] = {1, 1, 1, 2, 1, 1, 1, 1, 1, 1, 1, 1, 2, 1, 1, 1, 2, 1, 1, 1, 1};
    int64_t bind[2] = {33, 33};
    for (i = 0; i < 21; i++) {
        char what[32];
        int g;
        tb b;
        pfvm_opt_report r;
        snprintf(what, sizeof what, "epilogue %d", i);
        red_opset = i == 5 ? 11 : 0;
        fused_ulp = i >= 17 && i <= 19 ? 6 : 0; /* SiLU in the stores */
        g = check_fused(what, build_epilogue, &i, bind, 2, -1.0f, 1.0f);
        red_opset = 0;
        fused_ulp = 0;
        CHECK_MSG(g == 1, "%s: %d groups", what, g);
        tb_init(&b, i == 5 ? 11 : 18);
        build_epilogue(&b, &i);
        CHECK(pfvm_optimize(b.m, "fuse", &r, &b.st) == PFVM_OK);
        CHECK_MSG(r.runs[0].stats.nodes_after == expect_nodes[i], "%s: %d nodes", what, r.runs[0].stats.nodes_after);
        pfvm_model_free(b.m);
    }
}

/* ---- micro-op chains -------------------------------------------------------------------
 * Runs of Mul/Add/Sub/Div/Max/Min/Relu/Neg/Abs/Sum the engine may run as
 * one chain kernel (src/ops/fused.c): scalar and full second operands,
 * NaNs from Log of negatives (and -inf from Log 0 via Div), a NaN scalar
 * for Min, a partial last block; variant 1 also outputs a value inside
 * the chain, variant 2 reads it again after the chain (both cut it). */

static void build_uchain(tb *b, const void *arg)
{
    int v = *(const int *)arg;
    pfvm_value *x = tb_in(b, "x", PFVM_FLOAT, "3,700"), *y = tb_in(b, "y", PFVM_FLOAT, "3,700");
    pfvm_value *xl = tb_op(b, "Log", x, NULL, NULL), *yl = tb_op(b, "Log", y, NULL, NULL), *t, *m, *in[3];
    t = tb_op(b, "Mul", xl, tb_scalar(b, 1.5f), NULL);
    t = tb_op(b, "Add", t, y, NULL);
    t = tb_op(b, "Relu", t, NULL, NULL);
    t = tb_op(b, "Max", t, yl, NULL);
    m = t;
    t = tb_op(b, "Min", t, tb_scalar(b, v == 0 ? (float)NAN : -0.0f), NULL);
    t = tb_op(b, "Neg", t, NULL, NULL);
    t = tb_op(b, "Sub", t, tb_scalar(b, 0.25f), NULL);
    t = tb_op(b, "Abs", t, NULL, NULL);
    t = tb_op(b, "Div", t, y, NULL);
    t = tb_op(b, "Max", t, tb_scalar(b, -1.0f), NULL);
    in[0] = t;
    in[1] = x;
    in[2] = yl;
    tb_node(b, "Sum", in, 3, &t);
    t = tb_op(b, "Min", t, xl, NULL);
    if (v == 2)
        t = tb_op(b, "Add", t, m, NULL);
    tb_out(b, t);
    if (v == 1)
        tb_out(b, m);
}

static void test_chains(void)
{
    int v;
    for (v = 0; v < 3; v++) {
        int g = check_fused("micro-op chain", build_uchain, &v, NULL, 0, -1.0f, 1.0f);
        CHECK_MSG(g == 1, "chain variant %d: %d groups", v, g);
    }
}

/* GELU as torch exports it (Div, Erf, Add, Mul, Mul), which 32-bit
 * builds (PFVM__FUSE_FOLD; PFVM_FUSE_FOLD elsewhere) run as one call per
 * block: v 0 x * (erf + 1), v 1 (erf + 1) * x, v 2 with erf's result an
 * output too (not folded), v 3 after a Gemm (the group's head), rows
 * across block boundaries; always the operators' own bits. */
static void build_gelu(tb *b, const void *arg)
{
    int v = *(const int *)arg;
    pfvm_value *x = tb_in(b, "x", PFVM_FLOAT, v == 3 ? "4,20" : "3,300"), *t, *e, *a;
    if (v == 3) {
        static const int64_t wd[2] = {32, 20};
        pfvm_tensor *w = pfvm_model_tensor(b->m, PFVM_FLOAT, 2, wd, NULL, &b->st);
        pfvm_value *wv = pfvm_graph_value(b->g, "w", &b->st);
        pfvm_node *n;
        int i;
        for (i = 0; i < 32 * 20; i++)
            ((float *)w->data)[i] = (float)((i * 37) % 23 - 11) / 16.0f;
        pfvm_graph_add_init(b->g, wv, w, &b->st);
        x = tb_op(b, "Gemm", x, wv, NULL);
        n = pfvm_graph_node(b->g, pfvm_graph_num_nodes(b->g) - 1);
        pfvm_node_set_attr_int(n, "transB", 1, &b->st);
    }
    t = tb_op(b, "Div", x, tb_scalar(b, 1.41421354f), NULL);
    e = tb_op(b, "Erf", t, NULL, NULL);
    a = tb_op(b, "Add", e, tb_scalar(b, 1.0f), NULL);
    t = v == 1 ? tb_op(b, "Mul", a, x, NULL) : tb_op(b, "Mul", x, a, NULL);
    tb_out(b, tb_op(b, "Mul", t, tb_scalar(b, 0.5f), NULL));
    if (v == 2)
        tb_out(b, e);
}

static void test_gelu(void)
{
    int v;
    for (v = 0; v < 4; v++) {
        int g = check_fused("GELU", build_gelu, &v, NULL, 0, -4.0f, 4.0f);
        CHECK_MSG(g == 1, "GELU variant %d: %d groups", v, g);
    }
}

/* ---- runs after runs --------------------------------------------------------------- */

static void build_rerun(tb *b, const void *arg)
{
    pfvm_value *x = tb_in(b, "x", PFVM_FLOAT, "n,m"), *s = tb_in(b, "s", PFVM_FLOAT, "1"), *y;
    (void)arg;
    y = tb_op(b, "Mul", x, s, NULL);
    y = tb_op(b, "Add", y, tb_scalar(b, 0.25f), NULL);
    y = tb_op(b, "Relu", y, NULL, NULL);
    tb_out(b, tb_op(b, "Neg", y, NULL, NULL));
}

/* One executor, bound and run again and again: new values of the same
 * shapes (the walk set up at bind is reused, the one-value input s read
 * again), other shapes (set up again), then the first ones back; every
 * run as the operators' own kernels give it, bit for bit. */
static void test_rerun(void)
{
    static const int64_t shapes[][2] = {{2, 5}, {2, 5}, {3, 300}, {3, 300}, {2, 5}, {1, 1}};
    tb a, b;
    pfvm_exec *ea, *eb;
    int r, i;
    tb_init(&a, 18);
    tb_init(&b, 18);
    build_rerun(&a, NULL);
    build_rerun(&b, NULL);
    CHECK(!pfvm_optimize(b.m, "fuse", NULL, &b.st));
    CHECK(count_op_prefix(b.g, "FusedElementwise_") >= 1);
    ea = pfvm_exec_new(a.m, NULL, &a.st);
    eb = pfvm_exec_new(b.m, NULL, &b.st);
    CHECK(ea && eb);
    for (r = 0; ea && eb && r < (int)(sizeof shapes / sizeof shapes[0]); r++) {
        pfvm_tensor **ins = make_inputs(ea, shapes[r], 2, -1.0f, 1.0f, 11u + (unsigned)r);
        int ok = !pfvm_exec_bind(ea, pfvm_tensors_const(ins), 2, &a.st) && !pfvm_exec_run(ea, &a.st) &&
                 !pfvm_exec_bind(eb, pfvm_tensors_const(ins), 2, &b.st) && !pfvm_exec_run(eb, &b.st);
        CHECK_MSG(ok, "run %d: %s %s", r, a.st.msg, b.st.msg);
        for (i = 0; ok && i < pfvm_exec_num_outputs(ea); i++)
            CHECK_MSG(same_tensor(pfvm_exec_output(ea, i), pfvm_exec_output(eb, i)), "run %d: output %d differs", r, i);
        free_tensors(ins, 2);
    }
    pfvm_exec_free(ea);
    pfvm_exec_free(eb);
    pfvm_model_free(a.m);
    pfvm_model_free(b.m);
}

/* ---- Gemm's weights packed at bind (batch 1) ----------------------------------------- */

/* Gemm(A [m, k], B [n, k] constant, transB 1, C [n] constant) with odd n and
 * k, m 1 and 2, alpha and beta not 1: on x86 with AVX-512 the prepare hook
 * packs B in panels of 16 columns (the last one partial) and the kernel
 * reads them; every path gives the matrix-vector product's bits: each
 * column's products summed in order from zero, each rounded apart, then
 * C = beta * C + alpha * sum. */
static pfvm_value *tb_weights(tb *b, int rank, const int64_t *dims, unsigned *seed, const float **data)
{
    char name[32];
    pfvm_value *v;
    pfvm_tensor *t;
    int64_t i, numel;
    snprintf(name, sizeof name, "w%d", b->k++);
    v = pfvm_graph_value(b->g, name, &b->st);
    t = pfvm_model_tensor(b->m, PFVM_FLOAT, rank, dims, NULL, &b->st);
    numel = pfvm_tensor_numel(t);
    for (i = 0; i < numel; i++)
        ((float *)t->data)[i] = frand(seed, -2.0f, 2.0f) * (float)(1 << (i % 7));
    pfvm_graph_add_init(b->g, v, t, &b->st);
    *data = (const float *)t->data;
    return v;
}

/* A parallel-for that runs the parts one after the other (the split is what is tested). */
static void serial_for(void *user, int n, pfvm_task_fn fn, void *ctx)
{
    int i;
    (void)user;
    for (i = 0; i < n; i++)
        fn(ctx, i);
}

static void gemm_packed_case(int64_t m, int64_t n, int64_t k, float alpha, float beta, int threads)
{
    tb b;
    unsigned seed = 99;
    int64_t bd[2], cd[1], j, p, i, ad[2];
    pfvm_value *in[3], *y;
    pfvm_node *node;
    pfvm_exec *e;
    pfvm_parallel par;
    pfvm_tensor *A;
    const pfvm_tensor *Y;
    const float *bw, *cw;
    char adims[48];
    int bad = 0;
    tb_init(&b, 13);
    bd[0] = n, bd[1] = k, cd[0] = n;
    snprintf(adims, sizeof adims, "%lld,%lld", (long long)m, (long long)k);
    in[0] = tb_in(&b, "a", PFVM_FLOAT, adims);
    in[1] = tb_weights(&b, 2, bd, &seed, &bw);
    in[2] = tb_weights(&b, 1, cd, &seed, &cw);
    node = tb_node(&b, "Gemm", in, 3, &y);
    pfvm_node_set_attr_int(node, "transB", 1, &b.st);
    pfvm_node_set_attr_float(node, "alpha", alpha, &b.st);
    pfvm_node_set_attr_float(node, "beta", beta, &b.st);
    tb_out(&b, y);
    e = pfvm_exec_new(b.m, NULL, &b.st);
    CHECK_MSG(e != NULL, "gemm packed: %s", b.st.msg);
    if (!e) {
        pfvm_model_free(b.m);
        return;
    }
    par.parallel_for = serial_for;
    par.user = NULL;
    par.threads = threads;
    pfvm_exec_set_parallel(e, threads > 1 ? &par : NULL);
    ad[0] = m, ad[1] = k;
    A = pfvm_tensor_new(PFVM_FLOAT, 2, ad, &b.st);
    for (i = 0; i < m * k; i++)
        ((float *)A->data)[i] = frand(&seed, -1.0f, 1.0f);
    CHECK_MSG(!pfvm_exec_bind(e, (const pfvm_tensor *const *)&A, 1, &b.st) && !pfvm_exec_run(e, &b.st), "gemm packed: %s",
              b.st.msg);
    Y = pfvm_exec_output(e, 0);
    for (i = 0; Y && i < m; i++)
        for (j = 0; j < n; j++) {
            float s = 0.0f, c = beta * cw[j];
            for (p = 0; p < k; p++) {
                volatile float prod = ((const float *)A->data)[i * k + p] * bw[j * k + p];
                s += prod;
            }
            c += alpha * s;
            bad += memcmp(&c, (const float *)Y->data + i * n + j, sizeof c) != 0;
        }
    CHECK_MSG(Y && bad == 0, "gemm packed m %lld n %lld k %lld threads %d: %d entries differ", (long long)m, (long long)n,
              (long long)k, threads, bad);
    pfvm_tensor_free(A);
    pfvm_exec_free(e);
    pfvm_model_free(b.m);
}

static void test_gemm_packed(void)
{
    gemm_packed_case(1, 1000, 1280, 1.0f, 1.0f, 1);
    gemm_packed_case(1, 1003, 67, 0.75f, -1.25f, 1);
    gemm_packed_case(2, 517, 131, 1.5f, 0.5f, 1);
    gemm_packed_case(1, 1003, 67, 0.75f, -1.25f, 2);
    gemm_packed_case(1, 40, 2000, 1.0f, 1.0f, 1); /* 2.5 panels */
}

int main(void)
{
    test_chains();
    test_gelu();
    test_rerun();
    test_unary();
    test_binary();
    test_misc();
    test_reduce();
    test_groups();
    test_roundtrip();
    test_bytes_avoided();
    test_function_call();
    test_epilogue();
    test_gemm_packed();
    return CHECK_END();
}
