/* ops/linalg: MatMul and Gemm.
 *
 * One matrix-multiply core (C += A*B over row-major panels, i-k-j order so
 * the inner loop runs contiguously and compilers vectorise it) serves both;
 * float has its own path, other types go through double or int64. */
#include "ops_common.h"

/* c[m x n] (+)= a[m x k] * b[k x n] with element strides for a and b so that
 * transposed operands need no copy. */
static void pfvm__la_gemm_f32(int64_t m, int64_t n, int64_t k, const float *a, int64_t as_m, int64_t as_k,
                              const float *b, int64_t bs_k, int64_t bs_n, float *c, float alpha)
{
    int64_t i, p, j;
    for (i = 0; i < m; i++) {
        float *crow = c + i * n;
        for (p = 0; p < k; p++) {
            float av = alpha * a[i * as_m + p * as_k];
            const float *brow = b + p * bs_k;
            if (av == 0)
                continue;
            if (bs_n == 1)
                for (j = 0; j < n; j++)
                    crow[j] += av * brow[j];
            else
                for (j = 0; j < n; j++)
                    crow[j] += av * brow[j * bs_n];
        }
    }
}

/* The same for any numeric type, through double or int64. */
static void pfvm__la_gemm_any(int64_t m, int64_t n, int64_t k, const pfvm_tensor *a, int64_t aoff, int64_t as_m,
                              int64_t as_k, const pfvm_tensor *b, int64_t boff, int64_t bs_k, int64_t bs_n, pfvm_tensor *c,
                              int64_t coff, double alpha, int accumulate)
{
    int64_t i, p, j;
    int is_f = pfvm_dtype_is_float(c->dtype);
    for (i = 0; i < m; i++)
        for (j = 0; j < n; j++) {
            double acc = 0;
            int64_t iacc = 0;
            for (p = 0; p < k; p++) {
                if (is_f)
                    acc += pfvm_tensor_get_f64(a, aoff + i * as_m + p * as_k) * pfvm_tensor_get_f64(b, boff + p * bs_k + j * bs_n);
                else
                    iacc += pfvm_tensor_get_i64(a, aoff + i * as_m + p * as_k) * pfvm_tensor_get_i64(b, boff + p * bs_k + j * bs_n);
            }
            {
                int64_t at = coff + i * n + j;
                if (is_f) {
                    double v = alpha * acc + (accumulate ? pfvm_tensor_get_f64(c, at) : 0);
                    switch (c->dtype) {
                    case PFVM_FLOAT: ((float *)c->data)[at] = (float)v; break;
                    case PFVM_DOUBLE: ((double *)c->data)[at] = v; break;
                    case PFVM_FLOAT16: ((uint16_t *)c->data)[at] = pfvm_float_to_half((float)v); break;
                    default: ((uint16_t *)c->data)[at] = pfvm_float_to_bf16((float)v); break;
                    }
                } else {
                    int64_t v = iacc + (accumulate ? pfvm_tensor_get_i64(c, at) : 0);
                    switch (pfvm_dtype_size(c->dtype)) {
                    case 8: ((int64_t *)c->data)[at] = v; break;
                    case 4: ((int32_t *)c->data)[at] = (int32_t)v; break;
                    case 2: ((int16_t *)c->data)[at] = (int16_t)v; break;
                    default: ((int8_t *)c->data)[at] = (int8_t)v; break;
                    }
                }
            }
        }
}

/* ---- MatMul ------------------------------------------------------------------------- */

static pfvm_code pfvm__la_infer_matmul(pfvm_ictx *c)
{
    pfvm_shape a = c->in[0]->type.shape, b = c->in[1]->type.shape, ba, bb, batch, out;
    const pfvm_shape *sh[2];
    int i, ra, rb;
    int64_t x, y;
    if (a.rank < 0 || b.rank < 0)
        return pfvm_infer_unknown(c, 0, c->in[0]->type.dtype, -1);
    if (a.rank == 0 || b.rank == 0)
        return pfvm__fail(c->st, PFVM_ERR_SHAPE, "MatMul inputs must have rank >= 1");
    ra = a.rank;
    rb = b.rank;
    /* 1-D operands are promoted, and the promoted dim is dropped again */
    if (ra == 1) {
        a.dims[1] = a.dims[0];
        a.dims[0] = pfvm_sym_const(c->syms, 1);
        a.rank = 2;
    }
    if (rb == 1) {
        b.dims[1] = pfvm_sym_const(c->syms, 1);
        b.rank = 2;
    }
    if (pfvm_sym_is_const(a.dims[a.rank - 1], &x) && pfvm_sym_is_const(b.dims[b.rank - 2], &y) && x != y)
        return pfvm__fail(c->st, PFVM_ERR_SHAPE, "inner dimensions differ: %lld vs %lld", (long long)x, (long long)y);
    ba = a;
    ba.rank -= 2;
    bb = b;
    bb.rank -= 2;
    sh[0] = &ba;
    sh[1] = &bb;
    if (pfvm_infer_broadcast(c, sh, 2, &batch))
        return c->st ? c->st->code : PFVM_ERR_SHAPE;
    out = batch;
    if (ra > 1)
        out.dims[out.rank++] = a.dims[a.rank - 2];
    if (rb > 1)
        out.dims[out.rank++] = b.dims[b.rank - 1];
    for (i = 0; i < out.rank; i++)
        if (!out.dims[i])
            return pfvm__fail(c->st, PFVM_ERR_NOMEM, "out of memory");
    pfvm_ival_set_tensor(c->out[0], c->in[0]->type.dtype, &out);
    return PFVM_OK;
}

static pfvm_code pfvm__la_k_matmul(pfvm_kctx *k)
{
    const pfvm_tensor *A = k->in[0], *B = k->in[1];
    pfvm_tensor *C = k->out[0];
    int64_t m = A->rank == 1 ? 1 : A->dims[A->rank - 2], kk = A->dims[A->rank - 1];
    int64_t n = B->rank == 1 ? 1 : B->dims[B->rank - 1], kb = B->rank == 1 ? B->dims[0] : B->dims[B->rank - 2];
    int64_t batch = 1, t, bidx[PFVM_MAX_RANK] = {0};
    int ra = A->rank > 2 ? A->rank - 2 : 0, rb = B->rank > 2 ? B->rank - 2 : 0, r = ra > rb ? ra : rb, d;
    int64_t bdims[PFVM_MAX_RANK];
    if (kk != kb)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "inner dimensions differ: %lld vs %lld", (long long)kk,
                             (long long)kb);
    for (d = 0; d < r; d++) {
        int64_t da = d - (r - ra) >= 0 ? A->dims[d - (r - ra)] : 1, db = d - (r - rb) >= 0 ? B->dims[d - (r - rb)] : 1;
        bdims[d] = da == 1 ? db : da;
        batch *= bdims[d];
    }
    if (C->nbytes)
        memset(C->data, 0, C->nbytes);
    for (t = 0; t < batch; t++) {
        int64_t ao = 0, bo = 0, sa = m * kk, sb = kb * n, stride_a = 1, stride_b = 1;
        /* offsets of this batch entry in A and B, with broadcasting */
        for (d = r - 1; d >= 0; d--) {
            int64_t da = d - (r - ra) >= 0 ? A->dims[d - (r - ra)] : 1, db = d - (r - rb) >= 0 ? B->dims[d - (r - rb)] : 1;
            if (da != 1)
                ao += bidx[d] * stride_a;
            if (db != 1)
                bo += bidx[d] * stride_b;
            stride_a *= da;
            stride_b *= db;
        }
        if (A->dtype == PFVM_FLOAT && B->dtype == PFVM_FLOAT)
            pfvm__la_gemm_f32(m, n, kk, (const float *)A->data + ao * sa, kk, 1, (const float *)B->data + bo * sb, n, 1,
                              (float *)C->data + t * m * n, 1.0f);
        else
            pfvm__la_gemm_any(m, n, kk, A, ao * sa, kk, 1, B, bo * sb, n, 1, C, t * m * n, 1.0, 0);
        for (d = r - 1; d >= 0; d--) {
            if (++bidx[d] < bdims[d])
                break;
            bidx[d] = 0;
        }
    }
    return PFVM_OK;
}

/* ---- Gemm ---------------------------------------------------------------------------------- */

static pfvm_code pfvm__la_infer_gemm(pfvm_ictx *c)
{
    const pfvm_shape *a = &c->in[0]->type.shape, *b = &c->in[1]->type.shape;
    int ta = (int)pfvm_node_attr_int(c->node, "transA", 0), tb = (int)pfvm_node_attr_int(c->node, "transB", 0);
    pfvm_shape out;
    int64_t x, y;
    if (a->rank < 0 || b->rank < 0)
        return pfvm_infer_unknown(c, 0, c->in[0]->type.dtype, 2);
    if (a->rank != 2 || b->rank != 2)
        return pfvm__fail(c->st, PFVM_ERR_SHAPE, "Gemm inputs must be matrices (ranks %d and %d)", a->rank, b->rank);
    if (pfvm_sym_is_const(a->dims[ta ? 0 : 1], &x) && pfvm_sym_is_const(b->dims[tb ? 1 : 0], &y) && x != y)
        return pfvm__fail(c->st, PFVM_ERR_SHAPE, "inner dimensions differ: %lld vs %lld", (long long)x, (long long)y);
    out.rank = 2;
    out.dims[0] = a->dims[ta ? 1 : 0];
    out.dims[1] = b->dims[tb ? 0 : 1];
    pfvm_ival_set_tensor(c->out[0], c->in[0]->type.dtype, &out);
    return PFVM_OK;
}

typedef struct pfvm__la_bias {
    const pfvm_tensor *c;
    pfvm_tensor *y;
    double beta;
} pfvm__la_bias;

static void pfvm__la_bias_span(void *user, int64_t pos, int64_t len, const int64_t *off, const int64_t *stride)
{
    pfvm__la_bias *b = (pfvm__la_bias *)user;
    int64_t e;
    for (e = 0; e < len; e++) {
        double v = b->beta * pfvm_tensor_get_f64(b->c, off[0] + e * stride[0]);
        if (b->y->dtype == PFVM_FLOAT)
            ((float *)b->y->data)[pos + e] = (float)v;
        else if (b->y->dtype == PFVM_DOUBLE)
            ((double *)b->y->data)[pos + e] = v;
        else if (b->y->dtype == PFVM_INT64)
            ((int64_t *)b->y->data)[pos + e] = (int64_t)v;
        else if (b->y->dtype == PFVM_INT32)
            ((int32_t *)b->y->data)[pos + e] = (int32_t)v;
        else if (b->y->dtype == PFVM_FLOAT16)
            ((uint16_t *)b->y->data)[pos + e] = pfvm_float_to_half((float)v);
    }
}

static pfvm_code pfvm__la_k_gemm(pfvm_kctx *k)
{
    const pfvm_tensor *A = k->in[0], *B = k->in[1], *Cb = k->n_in > 2 ? k->in[2] : NULL;
    pfvm_tensor *Y = k->out[0];
    int ta = (int)pfvm_node_attr_int(k->node, "transA", 0), tb = (int)pfvm_node_attr_int(k->node, "transB", 0);
    double alpha = pfvm_node_attr_float(k->node, "alpha", 1.0f), beta = pfvm_node_attr_float(k->node, "beta", 1.0f);
    int64_t m = Y->dims[0], n = Y->dims[1], kk = ta ? A->dims[0] : A->dims[1];
    if ((tb ? B->dims[1] : B->dims[0]) != kk)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "inner dimensions differ");
    if (Cb && beta != 0) {
        pfvm__la_bias b;
        b.c = Cb;
        b.y = Y;
        b.beta = beta;
        if (pfvm_ew_apply(k, &Cb, 1, Y, pfvm__la_bias_span, &b))
            return k->st ? k->st->code : PFVM_ERR_SHAPE;
    } else if (Y->nbytes) {
        memset(Y->data, 0, Y->nbytes);
    }
    if (A->dtype == PFVM_FLOAT && B->dtype == PFVM_FLOAT && Y->dtype == PFVM_FLOAT)
        pfvm__la_gemm_f32(m, n, kk, (const float *)A->data, ta ? 1 : kk, ta ? m : 1, (const float *)B->data, tb ? 1 : n,
                          tb ? kk : 1, (float *)Y->data, (float)alpha);
    else
        pfvm__la_gemm_any(m, n, kk, A, 0, ta ? 1 : kk, ta ? m : 1, B, 0, tb ? 1 : n, tb ? kk : 1, Y, 0, alpha, 1);
    return PFVM_OK;
}

const pfvm_op_def pfvm__ops_linalg[] = {
    {"MatMul", "", 1, 0, 2, 2, 1, 1, pfvm__la_infer_matmul, pfvm__la_k_matmul, NULL, PFVM_FUSE_OUT_FUSABLE,
     "float,double,float16,int32,int64,uint32,uint64", NULL, 0},
    {"Gemm", "", 1, 0, 2, 3, 1, 1, pfvm__la_infer_gemm, pfvm__la_k_gemm, NULL, PFVM_FUSE_OUT_FUSABLE,
     "float,double,float16,int32,int64,uint32,uint64", NULL, 0},
    {NULL, NULL, 0, 0, 0, 0, 0, 0, NULL, NULL, NULL, PFVM_FUSE_OPAQUE, NULL, NULL, 0}
};
