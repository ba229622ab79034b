/* ops/misc: operators that share no engine with a family — the signal
 * windows (Hann, Hamming, Blackman), Det, MeanVarianceNormalization,
 * StringNormalizer (ASCII case mapping: independent of the machine's
 * locales), TfIdfVectorizer and Unique. */
#include "ops_common.h"

#include <math.h>

#define PFVM__MS_PI 3.14159265358979323846

/* ---- windows ------------------------------------------------------------------------- */

static pfvm_code pfvm__ms_infer_window(pfvm_ictx *c)
{
    int64_t n[1];
    pfvm_dtype dt = (pfvm_dtype)pfvm_node_attr_int(c->node, "output_datatype", PFVM_FLOAT);
    pfvm_shape s;
    pfvm_code rc = pfvm_infer_check_rank(c, 0, 0, "size");
    if (rc)
        return rc;
    if (pfvm_ival_ints(c->in[0], n, 1) != 1)
        return pfvm_infer_unknown(c, 0, dt, 1);
    if (n[0] < 0)
        return pfvm__fail(c->st, PFVM_ERR_INVALID, "negative window size");
    s.rank = 1;
    s.dims[0] = pfvm_sym_const(c->syms, n[0]);
    pfvm_ival_set_tensor(c->out[0], dt, &s);
    return PFVM_OK;
}

/* Generalised cosine windows: a0 - a1 cos(2 pi n / N) + a2 cos(4 pi n / N). */
static pfvm_code pfvm__ms_window(pfvm_kctx *k, double a0, double a1, double a2)
{
    int64_t size = pfvm_tensor_get_i64(k->in[0], 0), i;
    int periodic = (int)pfvm_node_attr_int(k->node, "periodic", 1);
    double denom;
    if (size < 0)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "negative window size");
    if (!k->out[0]->data &&
        pfvm_kctx_output(k, 0, (pfvm_dtype)pfvm_node_attr_int(k->node, "output_datatype", PFVM_FLOAT), 1, &size))
        return k->st ? k->st->code : PFVM_ERR_NOMEM;
    denom = periodic ? (double)size : (double)(size - 1);
    for (i = 0; i < size; i++) {
        double x = denom > 0 ? (double)i / denom : 0, v = a0 - a1 * cos(2 * PFVM__MS_PI * x) + a2 * cos(4 * PFVM__MS_PI * x);
        pfvm_tensor *y = k->out[0];
        if (y->dtype == PFVM_DOUBLE)
            ((double *)y->data)[i] = v;
        else if (y->dtype == PFVM_FLOAT)
            ((float *)y->data)[i] = (float)v;
        else if (y->dtype == PFVM_FLOAT16)
            ((uint16_t *)y->data)[i] = pfvm_float_to_half((float)v);
        else
            return pfvm__op_fail(k->st, k->node, PFVM_ERR_UNSUPPORTED, "output type %s", pfvm_dtype_name(y->dtype));
    }
    return PFVM_OK;
}

static pfvm_code pfvm__ms_k_hann(pfvm_kctx *k)
{
    return pfvm__ms_window(k, 0.5, 0.5, 0);
}

static pfvm_code pfvm__ms_k_hamming(pfvm_kctx *k)
{
    return pfvm__ms_window(k, 25.0 / 46.0, 21.0 / 46.0, 0);
}

static pfvm_code pfvm__ms_k_blackman(pfvm_kctx *k)
{
    return pfvm__ms_window(k, 0.42, 0.5, 0.08);
}

/* ---- Det ---------------------------------------------------------------------------------- */

static pfvm_code pfvm__ms_infer_det(pfvm_ictx *c)
{
    pfvm_shape s = c->in[0]->type.shape;
    if (s.rank < 2)
        return s.rank < 0 ? pfvm_infer_unknown(c, 0, c->in[0]->type.dtype, -1)
                          : pfvm__fail(c->st, PFVM_ERR_SHAPE, "Det needs rank >= 2, not %d", s.rank);
    if (pfvm_infer_check_eq(c, s.dims[s.rank - 2], s.dims[s.rank - 1], "Det needs square matrices: dims"))
        return c->st ? c->st->code : PFVM_ERR_SHAPE;
    s.rank -= 2;
    pfvm_ival_set_tensor(c->out[0], c->in[0]->type.dtype, &s);
    return PFVM_OK;
}

/* Gaussian elimination with partial pivoting, in place on a small stack
 * matrix (the kernel allocates nothing; larger matrices are refused). */
#define PFVM__MS_DET_MAX 32
static pfvm_code pfvm__ms_k_det(pfvm_kctx *k)
{
    const pfvm_tensor *x = k->in[0];
    int64_t n = x->dims[x->rank - 1], mats, m, i, j, r;
    double a[PFVM__MS_DET_MAX * PFVM__MS_DET_MAX];
    if (x->dims[x->rank - 2] != n)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "matrices are not square");
    if (n > PFVM__MS_DET_MAX)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_UNSUPPORTED, "matrices larger than %d", PFVM__MS_DET_MAX);
    mats = n ? pfvm_tensor_numel(x) / (n * n) : 0;
    for (m = 0; m < mats; m++) {
        double det = 1;
        for (i = 0; i < n * n; i++)
            a[i] = pfvm_tensor_get_f64(x, m * n * n + i);
        for (i = 0; i < n && det != 0; i++) {
            int64_t piv = i;
            for (r = i + 1; r < n; r++)
                if (fabs(a[r * n + i]) > fabs(a[piv * n + i]))
                    piv = r;
            if (a[piv * n + i] == 0) {
                det = 0;
                break;
            }
            if (piv != i) {
                for (j = 0; j < n; j++) {
                    double t = a[i * n + j];
                    a[i * n + j] = a[piv * n + j];
                    a[piv * n + j] = t;
                }
                det = -det;
            }
            det *= a[i * n + i];
            for (r = i + 1; r < n; r++) {
                double f = a[r * n + i] / a[i * n + i];
                for (j = i; j < n; j++)
                    a[r * n + j] -= f * a[i * n + j];
            }
        }
        if (k->out[0]->dtype == PFVM_DOUBLE)
            ((double *)k->out[0]->data)[m] = det;
        else
            ((float *)k->out[0]->data)[m] = (float)det;
    }
    return PFVM_OK;
}

/* ---- MeanVarianceNormalization ------------------------------------------------------------ */

/* MeanVarianceNormalization: every axis exists. */
static pfvm_code pfvm__ms_infer_mvn(pfvm_ictx *c)
{
    const int64_t *ax;
    int cnt = pfvm_node_attr_ints(c->node, "axes", &ax), rank = c->in[0]->type.shape.rank, i, a;
    for (i = 0; rank >= 0 && i < cnt; i++)
        if (pfvm_infer_axis(c, ax[i], rank, &a))
            return c->st ? c->st->code : PFVM_ERR_INVALID;
    return pfvm_infer_same_as_first(c);
}

static pfvm_code pfvm__ms_k_mvn(pfvm_kctx *k)
{
    const pfvm_tensor *x = k->in[0];
    const int64_t *ax;
    int cnt = pfvm_node_attr_ints(k->node, "axes", &ax), d, i;
    unsigned char mask[PFVM_MAX_RANK] = {0};
    int64_t xs[PFVM_MAX_RANK], idx[PFVM_MAX_RANK] = {0}, n = pfvm_tensor_numel(x), groups = 1, per = 1, e;
    static const int64_t def_axes[3] = {0, 2, 3};
    if (cnt < 0) {
        ax = def_axes;
        cnt = 3;
    }
    for (i = 0; i < cnt; i++) {
        int a = pfvm__axis(ax[i], x->rank);
        if (a < 0)
            return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "axis %lld is out of range", (long long)ax[i]);
        mask[a] = 1;
    }
    /* each kept-axis coordinate is a group; mean and variance over the rest */
    {
        int64_t s = 1;
        for (d = x->rank - 1; d >= 0; d--) {
            xs[d] = mask[d] ? 0 : s;
            if (mask[d])
                per *= x->dims[d];
            else {
                s *= x->dims[d];
                groups *= x->dims[d];
            }
        }
    }
    /* two passes per group, walking the whole tensor: no scratch memory */
    {
        int64_t g;
        for (g = 0; g < groups; g++) {
            double sum = 0, sq = 0, mean, sd;
            memset(idx, 0, sizeof idx);
            for (e = 0; e < n; e++) {
                int64_t at = 0;
                for (d = 0; d < x->rank; d++)
                    at += idx[d] * xs[d];
                if (at == g) {
                    double v = pfvm_tensor_get_f64(x, e);
                    sum += v;
                    sq += v * v;
                }
                for (d = x->rank - 1; d >= 0; d--) {
                    if (++idx[d] < x->dims[d])
                        break;
                    idx[d] = 0;
                }
            }
            mean = per ? sum / (double)per : 0;
            sd = sqrt(fmax(0, (per ? sq / (double)per : 0) - mean * mean));
            memset(idx, 0, sizeof idx);
            for (e = 0; e < n; e++) {
                int64_t at = 0;
                for (d = 0; d < x->rank; d++)
                    at += idx[d] * xs[d];
                if (at == g) {
                    double v = (pfvm_tensor_get_f64(x, e) - mean) / (sd + 1e-9);
                    if (k->out[0]->dtype == PFVM_DOUBLE)
                        ((double *)k->out[0]->data)[e] = v;
                    else
                        ((float *)k->out[0]->data)[e] = (float)v;
                }
                for (d = x->rank - 1; d >= 0; d--) {
                    if (++idx[d] < x->dims[d])
                        break;
                    idx[d] = 0;
                }
            }
        }
    }
    return PFVM_OK;
}

/* ---- StringNormalizer ------------------------------------------------------------------------- */

static int pfvm__ms_streq(const char *a, const char *b, int sensitive)
{
    for (; *a && *b; a++, b++) {
        char x = *a, y = *b;
        if (!sensitive) {
            x = (char)(x >= 'A' && x <= 'Z' ? x + 32 : x);
            y = (char)(y >= 'A' && y <= 'Z' ? y + 32 : y);
        }
        if (x != y)
            return 0;
    }
    return *a == *b;
}

static int pfvm__ms_stopword(const pfvm_node *n, const char *s, int sensitive)
{
    const pfvm_attr *a = pfvm_node_attr(n, "stopwords");
    int i;
    if (!s)
        s = ""; /* a string tensor's unset element is the empty string */
    for (i = 0; a && a->type == PFVM_ATTR_STRINGS && i < a->n; i++)
        if (pfvm__ms_streq(s, a->strings[i], sensitive))
            return 1;
    return 0;
}

/* X is [C] or [1, C]; case_change_action LOWER, UPPER or NONE. */
static pfvm_code pfvm__ms_infer_strnorm(pfvm_ictx *c)
{
    const char *action = pfvm_node_attr_string(c->node, "case_change_action", "NONE");
    const pfvm_shape *x = &c->in[0]->type.shape;
    if (strcmp(action, "UPPER") && strcmp(action, "LOWER") && strcmp(action, "NONE"))
        return pfvm__fail(c->st, PFVM_ERR_INVALID, "case_change_action '%s' is not valid", action);
    if (x->rank == 0 || x->rank > 2)
        return pfvm__fail(c->st, PFVM_ERR_SHAPE, "input must be [C] or [1, C], not rank %d", x->rank);
    if (x->rank == 2 && pfvm_infer_check_eq(c, x->dims[0], pfvm_sym_const(c->syms, 1), "input dim 0 and 1"))
        return c->st ? c->st->code : PFVM_ERR_SHAPE;
    return pfvm_infer_unknown(c, 0, PFVM_STRING, c->in[0]->type.shape.rank);
}

static pfvm_code pfvm__ms_k_strnorm(pfvm_kctx *k)
{
    const pfvm_tensor *x = k->in[0];
    const char *action = pfvm_node_attr_string(k->node, "case_change_action", "NONE");
    int sensitive = (int)pfvm_node_attr_int(k->node, "is_case_sensitive", 0);
    int64_t n = pfvm_tensor_numel(x), kept = 0, i, at = 0, dims[2];
    int upper = !strcmp(action, "UPPER"), lower = !strcmp(action, "LOWER");
    if (!upper && !lower && strcmp(action, "NONE"))
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "case_change_action '%s' is not valid", action);
    if (x->kind != PFVM_KIND_TENSOR || x->dtype != PFVM_STRING)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "input must be a string tensor");
    if (x->rank > 2 || (x->rank == 2 && x->dims[0] != 1))
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "input must be [C] or [1, C]");
    for (i = 0; i < n; i++)
        kept += !pfvm__ms_stopword(k->node, ((char *const *)x->data)[i], sensitive);
    /* everything removed: one empty string, as the spec says */
    dims[0] = 1;
    dims[1] = kept ? kept : 1;
    if (x->rank == 2 ? pfvm_kctx_output(k, 0, PFVM_STRING, 2, dims) : pfvm_kctx_output(k, 0, PFVM_STRING, 1, dims + 1))
        return k->st ? k->st->code : PFVM_ERR_NOMEM;
    if (!kept) {
        ((char **)k->out[0]->data)[0] = pfvm__strdup("");
        return PFVM_OK;
    }
    for (i = 0; i < n; i++) {
        const char *s = ((char *const *)x->data)[i];
        char *d, *p;
        if (pfvm__ms_stopword(k->node, s, sensitive))
            continue;
        d = pfvm__strdup(s ? s : "");
        if (!d)
            return pfvm__op_fail(k->st, k->node, PFVM_ERR_NOMEM, "out of memory");
        for (p = d; *p; p++) {
            if (upper && *p >= 'a' && *p <= 'z')
                *p = (char)(*p - 32);
            else if (lower && *p >= 'A' && *p <= 'Z')
                *p = (char)(*p + 32);
        }
        ((char **)k->out[0]->data)[at++] = d;
    }
    return PFVM_OK;
}

/* ---- TfIdfVectorizer ----------------------------------------------------------------------- */

/* Checks the attributes against each other and against what they index:
 * the pool holds the right kind of tokens, ngram_counts are start offsets
 * into it that never decrease, the gram lengths select existing counts,
 * and every ngram index names an output column (>= 0). Sets *width to the output's last dimension. Every
 * message names the node. */
static pfvm_code pfvm__ms_tfidf_check(pfvm_status *st, const pfvm_node *n, pfvm_dtype xt, int64_t *width)
{
    const pfvm_attr *ps = pfvm_node_attr(n, "pool_strings"), *pi = pfvm_node_attr(n, "pool_int64s");
    const pfvm_attr *pool = xt == PFVM_STRING ? ps : xt == PFVM_UNDEFINED ? (ps ? ps : pi) : pi;
    const int64_t *counts, *ix;
    int n_counts = pfvm_node_attr_ints(n, "ngram_counts", &counts), n_idx = pfvm_node_attr_ints(n, "ngram_indexes", &ix), i;
    int64_t minn = pfvm_node_attr_int(n, "min_gram_length", 1), maxn = pfvm_node_attr_int(n, "max_gram_length", 1);
    int64_t skips = pfvm_node_attr_int(n, "max_skip_count", 0), pool_n, w = 0;
    const char *mode = pfvm_node_attr_string(n, "mode", "TF");
    if (!pool || (pool->type != PFVM_ATTR_STRINGS && pool->type != PFVM_ATTR_INTS))
        return pfvm__op_fail(st, n, PFVM_ERR_INVALID, "%s is missing",
                             xt == PFVM_STRING ? "pool_strings" : xt == PFVM_UNDEFINED ? "a pool" : "pool_int64s");
    pool_n = pool->n;
    if (n_counts < 1)
        return pfvm__op_fail(st, n, PFVM_ERR_INVALID, "ngram_counts is missing or empty");
    if (minn < 1 || maxn < minn || maxn > n_counts)
        return pfvm__op_fail(st, n, PFVM_ERR_INVALID,
                             "gram lengths %lld..%lld do not fit the %d ngram_counts", (long long)minn, (long long)maxn,
                             n_counts);
    if (skips < 0)
        return pfvm__op_fail(st, n, PFVM_ERR_INVALID, "max_skip_count %lld is negative", (long long)skips);
    if (strcmp(mode, "TF") && strcmp(mode, "IDF") && strcmp(mode, "TFIDF"))
        return pfvm__op_fail(st, n, PFVM_ERR_INVALID, "mode '%s' is not valid", mode);
    for (i = 0; i < n_counts; i++) {
        if (counts[i] < 0 || counts[i] > pool_n)
            return pfvm__op_fail(st, n, PFVM_ERR_RANGE, "ngram_counts[%d] = %lld is outside the pool of %lld tokens", i,
                                 (long long)counts[i], (long long)pool_n);
        if (i > 0 && counts[i] < counts[i - 1])
            return pfvm__op_fail(st, n, PFVM_ERR_RANGE, "ngram_counts[%d] = %lld is below ngram_counts[%d] = %lld", i,
                                 (long long)counts[i], i - 1, (long long)counts[i - 1]);
    }
    for (i = 0; i < n_idx; i++) {
        if (ix[i] < 0 || ix[i] == INT64_MAX)
            return pfvm__op_fail(st, n, PFVM_ERR_RANGE, "ngram_indexes[%d] = %lld is not an output column", i,
                                 (long long)ix[i]);
        if (ix[i] + 1 > w)
            w = ix[i] + 1;
    }
    *width = w;
    return PFVM_OK;
}

static pfvm_code pfvm__ms_infer_tfidf(pfvm_ictx *c)
{
    const pfvm_shape *x = &c->in[0]->type.shape;
    pfvm_shape out;
    int64_t width;
    if (pfvm__ms_tfidf_check(c->st, c->node, c->in[0]->type.dtype, &width))
        return c->st ? c->st->code : PFVM_ERR_INVALID;
    if (x->rank > 2 || x->rank == 0)
        return pfvm__fail(c->st, PFVM_ERR_SHAPE, "X must be 1-D [C] or 2-D [N, C], not rank %d", x->rank);
    if (x->rank != 1 && x->rank != 2)
        return pfvm_infer_unknown(c, 0, PFVM_FLOAT, -1);
    out.rank = x->rank;
    if (x->rank == 2)
        out.dims[0] = x->dims[0];
    out.dims[x->rank - 1] = pfvm_sym_const(c->syms, width);
    pfvm_ival_set_tensor(c->out[0], PFVM_FLOAT, &out);
    return PFVM_OK;
}

/* Token i of row r equals pool token p. */
static int pfvm__ms_tok_eq(const pfvm_tensor *x, int64_t i, const pfvm_attr *pool, int64_t p)
{
    if (x->dtype == PFVM_STRING) {
        const char *s = ((char *const *)x->data)[i];
        return pool->type == PFVM_ATTR_STRINGS && !strcmp(s ? s : "", pool->strings[p]);
    }
    return pool->type == PFVM_ATTR_INTS && pfvm_tensor_get_i64(x, i) == pool->ints[p];
}

static pfvm_code pfvm__ms_k_tfidf(pfvm_kctx *k)
{
    const pfvm_tensor *x = k->in[0];
    const pfvm_node *n = k->node;
    const pfvm_attr *pool = pfvm_node_attr(n, x->dtype == PFVM_STRING ? "pool_strings" : "pool_int64s");
    const int64_t *counts, *indexes;
    const float *weights;
    int n_counts = pfvm_node_attr_ints(n, "ngram_counts", &counts), n_idx = pfvm_node_attr_ints(n, "ngram_indexes", &indexes);
    int n_w = pfvm_node_attr_floats(n, "weights", &weights);
    int64_t minn = pfvm_node_attr_int(n, "min_gram_length", 1), maxn = pfvm_node_attr_int(n, "max_gram_length", 1);
    int64_t skips = pfvm_node_attr_int(n, "max_skip_count", 0), width;
    const char *mode = pfvm_node_attr_string(n, "mode", "TF");
    int64_t rows = x->rank == 2 ? x->dims[0] : 1, len = x->rank ? x->dims[x->rank - 1] : 1, r, gl, sk, i, e, g, numel;
    float *y;
    if (pfvm__ms_tfidf_check(k->st, n, x->dtype, &width))
        return k->st ? k->st->code : PFVM_ERR_INVALID;
    if (x->rank < 1 || x->rank > 2)
        return pfvm__op_fail(k->st, n, PFVM_ERR_SHAPE, "X must be 1-D [C] or 2-D [N, C], not rank %d", x->rank);
    if (!pfvm__mul_i64(rows, width, &numel) || k->out[0]->kind != PFVM_KIND_TENSOR ||
        k->out[0]->dtype != PFVM_FLOAT || pfvm_tensor_numel(k->out[0]) != numel || !k->out[0]->data)
        return pfvm__op_fail(k->st, n, PFVM_ERR_SHAPE, "output Y is not a float [%lld, %lld] tensor", (long long)rows,
                             (long long)width);
    y = (float *)k->out[0]->data;
    memset(y, 0, sizeof(float) * (size_t)numel);
    for (r = 0; r < rows; r++)
        for (gl = minn; gl <= maxn; gl++) {
            int64_t start = counts[gl - 1], end = gl < n_counts ? counts[gl] : pool->n, first = 0;
            for (g = 0; g < gl - 1; g++)
                first += ((g + 1 < n_counts ? counts[g + 1] : pool->n) - counts[g]) / (g + 1);
            /* skips past the row's length find nothing: stop there */
            for (sk = 0; sk <= (gl == 1 ? 0 : skips) && (gl - 1) * (sk + 1) < len; sk++)
                for (i = 0; i + (gl - 1) * (sk + 1) < len; i++) {
                    int64_t p;
                    for (p = start; p + gl <= end; p += gl) {
                        int match = 1;
                        for (e = 0; e < gl && match; e++)
                            match = pfvm__ms_tok_eq(x, r * len + i + e * (sk + 1), pool, p + e);
                        if (match) {
                            int64_t gi = first + (p - start) / gl;
                            if (gi < n_idx && indexes[gi] >= 0 && indexes[gi] < width)
                                y[r * width + indexes[gi]] += 1;
                            break;
                        }
                    }
                }
        }
    for (i = 0; i < numel; i++) {
        double w = n_w > 0 && i % width < n_w ? weights[i % width] : 1;
        if (!strcmp(mode, "IDF"))
            y[i] = y[i] > 0 ? (float)w : 0;
        else if (!strcmp(mode, "TFIDF"))
            y[i] = (float)(y[i] * w);
    }
    return PFVM_OK;
}

/* ---- Unique ----------------------------------------------------------------------------------- */

static pfvm_code pfvm__ms_infer_unique(pfvm_ictx *c)
{
    const pfvm_attr *ax = pfvm_node_attr(c->node, "axis");
    int j, a;
    if (ax && c->in[0]->type.shape.rank >= 0 &&
        pfvm_infer_axis(c, pfvm_node_attr_int(c->node, "axis", 0), c->in[0]->type.shape.rank, &a))
        return c->st ? c->st->code : PFVM_ERR_INVALID;
    pfvm_infer_unknown(c, 0, c->in[0]->type.dtype, ax ? c->in[0]->type.shape.rank : 1);
    for (j = 1; j < c->n_out; j++)
        pfvm_infer_unknown(c, j, PFVM_INT64, 1);
    return PFVM_OK;
}

/* Compares slices a and b (each `inner` elements of the `outer` x len x
 * inner view along the axis); returns <0, 0, >0. A total order, as the
 * sort needs: NaN after every number and equal to NaN (numpy.unique's
 * equal_nan), integers compared as integers (past 2^53 doubles merge
 * them). */
static int pfvm__ms_slice_cmp(const pfvm_tensor *x, int64_t outer, int64_t len, int64_t inner, int64_t a, int64_t b)
{
    int64_t o, e;
    int is_int = pfvm_dtype_is_int(x->dtype), is_u64 = x->dtype == PFVM_UINT64;
    for (o = 0; o < outer; o++)
        for (e = 0; e < inner; e++) {
            int64_t ia = (o * len + a) * inner + e, ib = (o * len + b) * inner + e;
            if (is_u64) {
                uint64_t va = ((const uint64_t *)x->data)[ia], vb = ((const uint64_t *)x->data)[ib];
                if (va != vb)
                    return va < vb ? -1 : 1;
            } else if (is_int) {
                int64_t va = pfvm_tensor_get_i64(x, ia), vb = pfvm_tensor_get_i64(x, ib);
                if (va != vb)
                    return va < vb ? -1 : 1;
            } else {
                double va = pfvm_tensor_get_f64(x, ia), vb = pfvm_tensor_get_f64(x, ib);
                if (va != va || vb != vb) {
                    if (va != va && vb != vb)
                        continue;
                    return va != va ? 1 : -1;
                }
                if (va != vb)
                    return va < vb ? -1 : 1;
            }
        }
    return 0;
}

/* Stable bottom-up merge sort of the slice positions 0..len-1 by value
 * (equal slices keep their order, so each run of equal ones starts at its
 * first occurrence); tmp has len entries too. Returns the sorted array. */
static int64_t *pfvm__ms_unique_sort(const pfvm_tensor *x, int64_t outer, int64_t len, int64_t inner, int64_t *idx,
                                     int64_t *tmp)
{
    int64_t width, i;
    for (i = 0; i < len; i++)
        idx[i] = i;
    for (width = 1; width < len; width *= 2) {
        int64_t lo, *sw;
        for (lo = 0; lo < len; lo += 2 * width) {
            int64_t mid = lo + width < len ? lo + width : len, hi = lo + 2 * width < len ? lo + 2 * width : len;
            int64_t p = lo, q = mid, t = lo;
            while (p < mid && q < hi)
                tmp[t++] = pfvm__ms_slice_cmp(x, outer, len, inner, idx[q], idx[p]) < 0 ? idx[q++] : idx[p++];
            while (p < mid)
                tmp[t++] = idx[p++];
            while (q < hi)
                tmp[t++] = idx[q++];
        }
        sw = idx;
        idx = tmp;
        tmp = sw;
    }
    return idx;
}

/* Sorts the slices once (O(len log len) comparisons; the former
 * first-occurrence scans were O(len^3): 64 Ki distinct values never
 * finished), then numbers the runs of equal slices. */
static pfvm_code pfvm__ms_k_unique(pfvm_kctx *k)
{
    const pfvm_tensor *x = k->in[0];
    const pfvm_attr *axa = pfvm_node_attr(k->node, "axis");
    int sorted = (int)pfvm_node_attr_int(k->node, "sorted", 1), d, a = -1;
    int64_t outer = 1, len, inner = 1, i, g, r, u = 0, dims[PFVM_MAX_RANK];
    int64_t *order, *gid, *first, *count, *pos;
    size_t es = pfvm_dtype_size(x->dtype), bytes;
    if (x->dtype == PFVM_STRING)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_UNSUPPORTED, "string tensors");
    if (axa) {
        a = pfvm__axis(axa->i, x->rank);
        if (a < 0)
            return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "axis is out of range");
        for (d = 0; d < a; d++)
            outer *= x->dims[d];
        for (d = a + 1; d < x->rank; d++)
            inner *= x->dims[d];
        len = x->dims[a];
    } else {
        len = pfvm_tensor_numel(x);
    }
    /* order and its merge buffer, then per position its run (gid), per
     * run its first position, count and output rank */
    order = NULL;
    if (len > 0 && (!pfvm__mul_size((size_t)len, 6 * sizeof(int64_t), &bytes) ||
                    !(order = (int64_t *)pfvm_kctx_scratch(k, bytes))))
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_NOMEM, "no workspace for %lld slices", (long long)len);
    gid = order ? order + 2 * len : NULL;
    first = order ? order + 3 * len : NULL;
    count = order ? order + 4 * len : NULL;
    pos = order ? order + 5 * len : NULL;
    if (len > 0) {
        const int64_t *s = pfvm__ms_unique_sort(x, outer, len, inner, order, order + len);
        for (i = 0; i < len; i++) {
            if (i == 0 || pfvm__ms_slice_cmp(x, outer, len, inner, s[i], s[i - 1])) {
                first[u] = s[i];
                count[u++] = 0;
            }
            gid[s[i]] = u - 1;
            count[u - 1]++;
        }
        /* output ranks: by value, or by first occurrence */
        for (g = 0; g < u; g++)
            pos[g] = g;
        if (!sorted)
            for (i = 0, r = 0; i < len; i++)
                if (first[gid[i]] == i)
                    pos[gid[i]] = r++;
    }
    if (axa) {
        memcpy(dims, x->dims, sizeof(int64_t) * (size_t)x->rank);
        dims[a] = u;
    } else {
        dims[0] = u;
    }
    if (pfvm_kctx_output(k, 0, x->dtype, axa ? x->rank : 1, dims) || pfvm_kctx_output(k, 1, PFVM_INT64, 1, &u) ||
        pfvm_kctx_output(k, 2, PFVM_INT64, 1, &len) || pfvm_kctx_output(k, 3, PFVM_INT64, 1, &u))
        return k->st ? k->st->code : PFVM_ERR_NOMEM;
    for (g = 0; g < u; g++) {
        int64_t o, e;
        r = pos[g];
        for (o = 0; o < outer; o++)
            for (e = 0; e < inner; e++)
                memcpy((char *)k->out[0]->data + (size_t)((o * u + r) * inner + e) * es,
                       (const char *)x->data + (size_t)((o * len + first[g]) * inner + e) * es, es);
        if (k->n_out > 1 && k->out[1])
            ((int64_t *)k->out[1]->data)[r] = first[g];
        if (k->n_out > 3 && k->out[3])
            ((int64_t *)k->out[3]->data)[r] = count[g];
    }
    if (k->n_out > 2 && k->out[2])
        for (i = 0; i < len; i++)
            ((int64_t *)k->out[2]->data)[i] = pos[gid[i]];
    return PFVM_OK;
}

PFVM_INTERNAL const pfvm_op_def pfvm__ops_misc[] = {
    {"HannWindow", "", 17, 0, 1, 1, 1, 1, pfvm__ms_infer_window, pfvm__ms_k_hann, NULL, PFVM_FUSE_OPAQUE, "int32,int64 -> float,double", NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
    {"HammingWindow", "", 17, 0, 1, 1, 1, 1, pfvm__ms_infer_window, pfvm__ms_k_hamming, NULL, PFVM_FUSE_OPAQUE, "int32,int64 -> float,double", NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
    {"BlackmanWindow", "", 17, 0, 1, 1, 1, 1, pfvm__ms_infer_window, pfvm__ms_k_blackman, NULL, PFVM_FUSE_OPAQUE, "int32,int64 -> float,double", NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
    {"Det", "", 11, 0, 1, 1, 1, 1, pfvm__ms_infer_det, pfvm__ms_k_det, NULL, PFVM_FUSE_OPAQUE, "float,double", NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
    {"MeanVarianceNormalization", "", 9, 0, 1, 1, 1, 1, pfvm__ms_infer_mvn, pfvm__ms_k_mvn, NULL, PFVM_FUSE_REDUCTION, "float,double", NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
    {"StringNormalizer", "", 10, 0, 1, 1, 1, 1, pfvm__ms_infer_strnorm, pfvm__ms_k_strnorm, NULL, PFVM_FUSE_OPAQUE, "string", NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
    {"TfIdfVectorizer", "", 9, 0, 1, 1, 1, 1, pfvm__ms_infer_tfidf, pfvm__ms_k_tfidf, NULL, PFVM_FUSE_OPAQUE, "string,int32,int64 -> float", NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
    {"Unique", "", 11, 0, 1, 1, 1, 4, pfvm__ms_infer_unique, pfvm__ms_k_unique, NULL, PFVM_FUSE_OPAQUE, "numeric", NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
    {NULL, NULL, 0, 0, 0, 0, 0, 0, NULL, NULL, NULL, PFVM_FUSE_OPAQUE, NULL, NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL}
};
