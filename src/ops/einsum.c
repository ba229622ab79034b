/* ops/einsum: Einstein summation over any equation — explicit or implicit
 * output, ellipsis with broadcasting, repeated labels (diagonals, traces).
 *
 * The equation is parsed into labels per operand; every label gets a size
 * and, per operand, a stride (repeated labels add their strides, which
 * walks the diagonal). The kernel then loops over output labels and, inside,
 * over the summed labels. */
#include "ops_common.h"

#define PFVM__ES_MAXL 32 /* distinct labels */
#define PFVM__ES_MAXIN 8

typedef struct pfvm__es {
    int n_in;
    int n_labels;             /* distinct labels; output ones first */
    int n_out;                /* output labels */
    char labels[PFVM__ES_MAXL];
    char term[PFVM__ES_MAXIN][PFVM_MAX_RANK + 1]; /* each operand's labels, ellipsis expanded */
    char out[PFVM_MAX_RANK + 1];
    int64_t size[PFVM__ES_MAXL];
} pfvm__es;

/* Ellipsis dims become labels '\1'..'\10', right-aligned across operands. */
static int pfvm__es_expand(const char *spec, int len, int rank, int ell_rank, char *dst)
{
    int i, n = 0, letters = 0;
    const char *dots = NULL;
    for (i = 0; i < len; i++) {
        if (spec[i] == '.') {
            if (i + 2 >= len || spec[i + 1] != '.' || spec[i + 2] != '.' || dots)
                return -1;
            dots = spec + i;
            i += 2;
        } else if ((spec[i] >= 'a' && spec[i] <= 'z') || (spec[i] >= 'A' && spec[i] <= 'Z')) {
            letters++;
        } else if (spec[i] != ' ') {
            return -1;
        }
    }
    if (rank < 0)
        rank = letters + (dots ? ell_rank : 0);
    /* an output of 8 letters and an ellipsis wrote the ellipsis labels
     * past dst */
    if (letters > rank || (!dots && letters != rank) || rank > PFVM_MAX_RANK)
        return -1;
    for (i = 0; i < len; i++) {
        if (spec + i == dots) {
            int e, k = rank - letters;
            for (e = 0; e < k; e++)
                dst[n++] = (char)(1 + ell_rank - k + e);
            i += 2;
        } else if (spec[i] != ' ') {
            dst[n++] = spec[i];
        }
        if (n > PFVM_MAX_RANK)
            return -1;
    }
    dst[n] = 0;
    return n;
}

static int pfvm__es_find(const pfvm__es *e, char c)
{
    int i;
    for (i = 0; i < e->n_labels; i++)
        if (e->labels[i] == c)
            return i;
    return -1;
}

static int pfvm__es_add(pfvm__es *e, char c)
{
    int i = pfvm__es_find(e, c);
    if (i >= 0)
        return i;
    if (e->n_labels >= PFVM__ES_MAXL)
        return -1;
    e->labels[e->n_labels] = c;
    e->size[e->n_labels] = 1;
    return e->n_labels++;
}

/* Parses the equation against operand ranks and dims (dims may be NULL
 * entries when only ranks are known: sizes then stay unknown, 0). */
static pfvm_code pfvm__es_parse(const char *eq, int n_in, const int *ranks, const int64_t *const *dims, pfvm__es *e,
                                pfvm_status *st)
{
    const char *arrow = strstr(eq, "->"), *p = eq;
    int j, ell = 0, i;
    memset(e, 0, sizeof *e);
    if (n_in > PFVM__ES_MAXIN)
        return pfvm__fail(st, PFVM_ERR_UNSUPPORTED, "more than %d operands", PFVM__ES_MAXIN);
    e->n_in = n_in;
    /* ellipsis rank: the largest over operands */
    for (j = 0; j < n_in; j++) {
        const char *end = strchr(p, ',');
        int len, letters = 0;
        if (!end || (arrow && end > arrow))
            end = arrow ? arrow : p + strlen(p);
        len = (int)(end - p);
        for (i = 0; i < len; i++)
            letters += (p[i] >= 'a' && p[i] <= 'z') || (p[i] >= 'A' && p[i] <= 'Z');
        if (memchr(p, '.', (size_t)len) && ranks[j] - letters > ell)
            ell = ranks[j] - letters;
        p = *end == ',' ? end + 1 : end;
    }
    p = eq;
    for (j = 0; j < n_in; j++) {
        const char *end = strchr(p, ',');
        int len;
        if (!end || (arrow && end > arrow))
            end = arrow ? arrow : p + strlen(p);
        len = (int)(end - p);
        if ((j < n_in - 1) != (*end == ','))
            return pfvm__fail(st, PFVM_ERR_INVALID, "equation '%s' does not have %d operands", eq, n_in);
        if (pfvm__es_expand(p, len, ranks[j], ell, e->term[j]) < 0)
            return pfvm__fail(st, PFVM_ERR_INVALID, "operand %d of '%s' does not match its rank %d", j, eq, ranks[j]);
        p = *end == ',' ? end + 1 : end;
    }
    if (arrow) {
        if (pfvm__es_expand(arrow + 2, (int)strlen(arrow + 2), -1, ell, e->out) < 0)
            return pfvm__fail(st, PFVM_ERR_INVALID, "output of '%s' is not valid", eq);
    } else {
        /* implicit: ellipsis labels, then labels seen once, in order */
        int n = 0, c;
        for (i = 0; i < ell; i++)
            e->out[n++] = (char)(1 + i);
        for (c = 'A'; c <= 'z'; c++) {
            int count = 0;
            for (j = 0; j < n_in; j++)
                for (i = 0; e->term[j][i]; i++)
                    count += e->term[j][i] == c;
            if (count == 1 && n < PFVM_MAX_RANK)
                e->out[n++] = (char)c;
        }
        e->out[n] = 0;
    }
    for (i = 0; e->out[i]; i++)
        if (pfvm__es_add(e, e->out[i]) != i)
            return pfvm__fail(st, PFVM_ERR_INVALID, "output label repeated in '%s'", eq);
    e->n_out = i;
    for (j = 0; j < n_in; j++)
        for (i = 0; e->term[j][i]; i++) {
            int l = pfvm__es_add(e, e->term[j][i]);
            int64_t d;
            if (l < 0)
                return pfvm__fail(st, PFVM_ERR_UNSUPPORTED, "too many labels");
            if (!dims || !dims[j])
                continue;
            d = dims[j][i];
            if (d != 1) {
                if (e->size[l] != 1 && e->size[l] != d)
                    return pfvm__fail(st, PFVM_ERR_SHAPE, "label '%c' has sizes %lld and %lld", e->term[j][i] > 16 ? e->term[j][i] : '.',
                                      (long long)e->size[l], (long long)d);
                e->size[l] = d;
            }
        }
    return PFVM_OK;
}

/* Symbolic: the equation is parsed for its labels only, then each label's
 * size comes from the operands' dims (a size 1 broadcasts, as in the
 * kernel; two sizes that provably differ and are not 1 are an error). */
static pfvm_code pfvm__es_infer(pfvm_ictx *c)
{
    const char *eq = pfvm_node_attr_string(c->node, "equation", NULL);
    int ranks[PFVM__ES_MAXIN], j, i;
    const pfvm_sym *size[PFVM__ES_MAXL];
    pfvm__es e;
    pfvm_shape out;
    if (!eq)
        return pfvm__fail(c->st, PFVM_ERR_INVALID, "attribute 'equation' is missing");
    if (c->n_in > PFVM__ES_MAXIN)
        return pfvm__fail(c->st, PFVM_ERR_UNSUPPORTED, "too many operands");
    for (j = 0; j < c->n_in; j++)
        if (!c->in[j])
            return pfvm__fail(c->st, PFVM_ERR_INVALID, "operand %d is missing", j);
    for (j = 0; j < c->n_in; j++) {
        ranks[j] = c->in[j]->type.shape.rank;
        if (ranks[j] < 0)
            return pfvm_infer_unknown(c, 0, c->in[0]->type.dtype, -1);
    }
    if (pfvm__es_parse(eq, c->n_in, ranks, NULL, &e, c->st))
        return c->st ? c->st->code : PFVM_ERR_INVALID;
    for (i = 0; i < e.n_labels; i++)
        size[i] = NULL;
    for (j = 0; j < c->n_in; j++)
        for (i = 0; e.term[j][i]; i++) {
            int l = pfvm__es_find(&e, e.term[j][i]);
            const pfvm_sym *d = c->in[j]->type.shape.dims[i], *cur = size[l];
            int64_t v;
            if (!cur || (pfvm_sym_is_const(cur, &v) && v == 1)) {
                size[l] = d;
            } else if (pfvm_sym_is_const(d, &v) && v == 1) {
            } else if (cur != d) {
                if (pfvm_sym_proven_ge(c->syms, cur, 2) && pfvm_sym_proven_ge(c->syms, d, 2) &&
                    pfvm_sym_proven_ne(c->syms, cur, d)) {
                    char a[64], b[64];
                    pfvm_sym_print(cur, a, sizeof a);
                    pfvm_sym_print(d, b, sizeof b);
                    return pfvm__fail(c->st, PFVM_ERR_SHAPE, "label '%c' has sizes %s and %s",
                                      e.term[j][i] > 16 ? e.term[j][i] : '.', a, b);
                }
                size[l] = pfvm_sym_is_const(cur, NULL) ? cur : pfvm_sym_is_const(d, NULL) ? d : pfvm_sym_max(c->syms, cur, d);
            }
        }
    out.rank = e.n_out;
    for (i = 0; i < e.n_out; i++) {
        out.dims[i] = size[i] ? size[i] : pfvm_sym_const(c->syms, 1);
        if (!out.dims[i])
            return pfvm__fail(c->st, PFVM_ERR_NOMEM, "out of memory");
    }
    pfvm_ival_set_tensor(c->out[0], c->in[0]->type.dtype, &out);
    return PFVM_OK;
}

/* Products the loops below form: one per output and summed-label index, per operand. */
static uint64_t pfvm__es_work(const pfvm__es *e, int64_t total)
{
    uint64_t w = pfvm__sat_mul((uint64_t)(total > 0 ? total : 0), (uint64_t)(e->n_in > 0 ? e->n_in : 1));
    int l;
    for (l = e->n_out; l < e->n_labels; l++)
        w = pfvm__sat_mul(w, (uint64_t)(e->size[l] > 0 ? e->size[l] : 1));
    return w;
}

static pfvm_code pfvm__es_k(pfvm_kctx *k)
{
    const char *eq = pfvm_node_attr_string(k->node, "equation", "");
    int ranks[PFVM__ES_MAXIN], j, i, l;
    const int64_t *dims[PFVM__ES_MAXIN];
    int64_t stride[PFVM__ES_MAXIN][PFVM__ES_MAXL], idx[PFVM__ES_MAXL] = {0}, o, total;
    pfvm__es e;
    pfvm_tensor *Y = k->out[0];
    for (j = 0; j < k->n_in && j < PFVM__ES_MAXIN; j++) {
        if (!k->in[j] || k->in[j]->kind != PFVM_KIND_TENSOR)
            return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "operand %d is missing or not a tensor", j);
        ranks[j] = k->in[j]->rank;
        dims[j] = k->in[j]->dims;
    }
    if (pfvm__es_parse(eq, k->n_in, ranks, dims, &e, k->st))
        return pfvm__op_fail(k->st, k->node, k->st ? k->st->code : PFVM_ERR_INVALID, "%s", k->st ? k->st->msg : "");
    /* per operand, the stride of each label (0 where absent or broadcast) */
    for (j = 0; j < e.n_in; j++) {
        int64_t s = 1;
        for (l = 0; l < e.n_labels; l++)
            stride[j][l] = 0;
        for (i = ranks[j] - 1; i >= 0; i--) {
            l = pfvm__es_find(&e, e.term[j][i]);
            if (dims[j][i] != 1)
                stride[j][l] += s;
            s *= dims[j][i];
        }
    }
    total = pfvm_tensor_numel(Y);
    if (pfvm_kctx_spend(k, pfvm__es_work(&e, total)))
        return k->st ? k->st->code : PFVM_ERR_RUNTIME;
    for (o = 0; o < total; o++) {
        double acc = 0;
        int64_t rest = o;
        /* output labels from the flat index; summed labels restart at 0 */
        for (l = e.n_out - 1; l >= 0; l--) {
            idx[l] = rest % e.size[l];
            rest /= e.size[l];
        }
        for (l = e.n_out; l < e.n_labels; l++)
            idx[l] = 0;
        for (;;) {
            double prod = 1;
            for (j = 0; j < e.n_in; j++) {
                int64_t off = 0;
                for (l = 0; l < e.n_labels; l++)
                    off += idx[l] * stride[j][l];
                prod *= pfvm_tensor_get_f64(k->in[j], off);
            }
            acc += prod;
            for (l = e.n_labels - 1; l >= e.n_out; l--) {
                if (++idx[l] < e.size[l])
                    break;
                idx[l] = 0;
            }
            if (l < e.n_out)
                break;
        }
        switch (Y->dtype) {
        case PFVM_FLOAT: ((float *)Y->data)[o] = (float)acc; break;
        case PFVM_DOUBLE: ((double *)Y->data)[o] = acc; break;
        case PFVM_INT64: ((int64_t *)Y->data)[o] = (int64_t)acc; break;
        case PFVM_INT32: ((int32_t *)Y->data)[o] = (int32_t)acc; break;
        default: return pfvm__op_fail(k->st, k->node, PFVM_ERR_UNSUPPORTED, "element type %s", pfvm_dtype_name(Y->dtype));
        }
    }
    return PFVM_OK;
}

/* ---- gradient ------------------------------------------------------------------------- */

#define PFVM__ES_GMAX 16

/* The labels of each term of an equation without ellipses ("ij,jk->ik"):
 * terms[0..n_in) the operands', terms[n_in] the output's (implicit form:
 * the labels used once, sorted). 0 when the equation has another form. */
static int pfvm__es_gterms(const char *eq, int n_in, char terms[][PFVM__ES_GMAX + 1])
{
    int t = 0, len = 0, i, counts[128];
    const char *p;
    memset(counts, 0, sizeof counts);
    if (n_in + 1 > PFVM__ES_GMAX)
        return 0;
    for (p = eq; *p && !(p[0] == '-' && p[1] == '>'); p++) {
        if (*p == ' ')
            continue;
        if (*p == ',') {
            terms[t++][len] = 0;
            len = 0;
            if (t >= n_in)
                return 0;
            continue;
        }
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')) || len >= PFVM__ES_GMAX)
            return 0;
        counts[(int)*p]++;
        terms[t][len++] = *p;
    }
    terms[t++][len] = 0;
    if (t != n_in)
        return 0;
    len = 0;
    if (*p) {
        for (p += 2; *p; p++) {
            if (*p == ' ')
                continue;
            if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')) || len >= PFVM__ES_GMAX)
                return 0;
            terms[n_in][len++] = *p;
        }
    } else {
        for (i = 'A'; i <= 'z'; i++)
            if (i < 128 && counts[i] == 1 && len < PFVM__ES_GMAX)
                terms[n_in][len++] = (char)i;
    }
    terms[n_in][len] = 0;
    return 1;
}

/* Operand k's gradient is the Einsum of dY with the other operands into
 * k's labels; labels only k has (summed there) come back by broadcasting.
 * Operands with a repeated label (diagonals) and ellipses are refused. */
static pfvm_code pfvm__es_grad(pfvm_grad_ctx *g, const pfvm_node *n)
{
    pfvm_value *gy = pfvm_grad_out(g, 0), *ins[PFVM__ES_GMAX];
    const char *eq = pfvm_node_attr_string(n, "equation", "");
    char terms[PFVM__ES_GMAX + 1][PFVM__ES_GMAX + 1], geq[512];
    int k, i, j;
    if (!gy)
        return PFVM_OK;
    if (!pfvm__es_gterms(eq, n->n_inputs, terms))
        return pfvm_grad_fail(g, "equation '%s' (ellipses or more than %d labels)", eq, PFVM__ES_GMAX);
    for (k = 0; k < n->n_inputs; k++) {
        char keep[PFVM__ES_GMAX + 1];
        int64_t lone[PFVM__ES_GMAX];
        int n_keep = 0, n_lone = 0, n_ins = 1, at;
        pfvm_node *nd;
        pfvm_value *d;
        if (!pfvm_grad_needed(g, n->inputs[k]))
            continue;
        for (i = 0; terms[k][i]; i++) {
            int seen = 0;
            for (j = 0; j < i; j++)
                if (terms[k][j] == terms[k][i])
                    return pfvm_grad_fail(g, "repeated label '%c' in operand %d", terms[k][i], k);
            seen = strchr(terms[n->n_inputs], terms[k][i]) != NULL;
            for (j = 0; j < n->n_inputs && !seen; j++)
                seen = j != k && strchr(terms[j], terms[k][i]) != NULL;
            if (seen)
                keep[n_keep++] = terms[k][i];
            else
                lone[n_lone++] = i;
        }
        keep[n_keep] = 0;
        /* "out,others...->keep" */
        at = pfvm__snprintf(geq, sizeof geq, "%s", terms[n->n_inputs]);
        ins[0] = gy;
        for (j = 0; j < n->n_inputs; j++)
            if (j != k) {
                at += pfvm__snprintf(geq + at, sizeof geq - (size_t)at, ",%s", terms[j]);
                ins[n_ins++] = n->inputs[j];
            }
        pfvm__snprintf(geq + at, sizeof geq - (size_t)at, "->%s", keep);
        nd = pfvm_grad_node(g, "Einsum", ins, n_ins, 1);
        if (!nd || pfvm_node_set_attr_string(nd, "equation", geq, g->st))
            return g->st->code;
        d = nd->outputs[0];
        if (n_lone)
            d = pfvm_grad_expand(g, pfvm_grad_unsqueeze(g, d, lone, n_lone), n->inputs[k]);
        if (pfvm_grad_add(g, n->inputs[k], d))
            return g->st->code;
    }
    return PFVM_OK;
}

PFVM_INTERNAL const pfvm_op_def pfvm__ops_einsum[] = {
    {"Einsum", "", 12, 0, 1, -1, 1, 1, pfvm__es_infer, pfvm__es_k, NULL, PFVM_FUSE_OPAQUE, "float,double,int32,int64", NULL, 0, NULL, pfvm__es_grad, NULL, NULL, NULL, NULL, NULL, NULL},
    {NULL, NULL, 0, 0, 0, 0, 0, 0, NULL, NULL, NULL, PFVM_FUSE_OPAQUE, NULL, NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL}
};
