/* ops/training: the ai.onnx.preview.training optimizers Adagrad, Momentum
 * and Adam. Each updates n tensors at once: inputs are the learning rate R,
 * the step count T, then n parameters, n gradients and n (or 2n for Adam)
 * accumulators; outputs are the new parameters then the new accumulators,
 * each shaped like its parameter. */
#include "ops_common.h"

#include <math.h>

#define PFVM__TR_DOMAIN "ai.onnx.preview.training"

/* Number of tensors updated: inputs are 2 + groups * n. */
static int pfvm__tr_count(int n_in, int groups)
{
    return (n_in - 2) % groups ? -1 : (n_in - 2) / groups;
}

static pfvm_code pfvm__tr_infer(pfvm_ictx *c, int groups)
{
    int n = pfvm__tr_count(c->n_in, groups), j;
    if (n < 1 || c->n_out != n * (groups - 1))
        return pfvm__fail(c->st, PFVM_ERR_INVALID, "%d inputs and %d outputs do not describe %d-tensor groups", c->n_in,
                          c->n_out, groups);
    for (j = 0; j < c->n_out; j++)
        if (c->out[j])
            c->out[j]->type = c->in[2 + j % n]->type;
    return PFVM_OK;
}

static pfvm_code pfvm__tr_infer_adagrad(pfvm_ictx *c) { return pfvm__tr_infer(c, 3); }
static pfvm_code pfvm__tr_infer_momentum(pfvm_ictx *c) { return pfvm__tr_infer(c, 3); }
static pfvm_code pfvm__tr_infer_adam(pfvm_ictx *c) { return pfvm__tr_infer(c, 4); }

static pfvm_code pfvm__tr_k_adagrad(pfvm_kctx *k)
{
    int n = pfvm__tr_count(k->n_in, 3), j;
    double R = pfvm_tensor_get_f64(k->in[0], 0), T = (double)pfvm_tensor_get_i64(k->in[1], 0);
    double decay = pfvm_node_attr_float(k->node, "decay_factor", 0), eps = pfvm_node_attr_float(k->node, "epsilon", 0);
    double norm = pfvm_node_attr_float(k->node, "norm_coefficient", 0), r = R / (1 + T * decay);
    for (j = 0; j < n; j++) {
        const pfvm_tensor *X = k->in[2 + j], *G = k->in[2 + n + j], *Hs = k->in[2 + 2 * n + j];
        int64_t i, m = pfvm_tensor_numel(X);
        if (pfvm_tensor_numel(G) != m || pfvm_tensor_numel(Hs) != m)
            return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "group %d: shapes differ", j);
        for (i = 0; i < m; i++) {
            double x = pfvm_tensor_get_f64(X, i), g = norm * x + pfvm_tensor_get_f64(G, i), h = pfvm_tensor_get_f64(Hs, i) + g * g;
            pfvm_red_store(k->out[j], i, x - r * g / (sqrt(h) + eps));
            pfvm_red_store(k->out[n + j], i, h);
        }
    }
    return PFVM_OK;
}

static pfvm_code pfvm__tr_k_momentum(pfvm_kctx *k)
{
    int n = pfvm__tr_count(k->n_in, 3), j;
    double R = pfvm_tensor_get_f64(k->in[0], 0), T = (double)pfvm_tensor_get_i64(k->in[1], 0);
    double alpha = pfvm_node_attr_float(k->node, "alpha", 0), beta = pfvm_node_attr_float(k->node, "beta", 0);
    double norm = pfvm_node_attr_float(k->node, "norm_coefficient", 0), badj = T > 0 ? beta : 1;
    const char *mode = pfvm_node_attr_string(k->node, "mode", "standard");
    int nesterov = !strcmp(mode, "nesterov");
    if (!nesterov && strcmp(mode, "standard"))
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "mode '%s' is not valid", mode);
    for (j = 0; j < n; j++) {
        const pfvm_tensor *X = k->in[2 + j], *G = k->in[2 + n + j], *V = k->in[2 + 2 * n + j];
        int64_t i, m = pfvm_tensor_numel(X);
        if (pfvm_tensor_numel(G) != m || pfvm_tensor_numel(V) != m)
            return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "group %d: shapes differ", j);
        for (i = 0; i < m; i++) {
            double x = pfvm_tensor_get_f64(X, i), g = norm * x + pfvm_tensor_get_f64(G, i), v = alpha * pfvm_tensor_get_f64(V, i) + badj * g;
            pfvm_red_store(k->out[j], i, nesterov ? x - R * (g + alpha * v) : x - R * v);
            pfvm_red_store(k->out[n + j], i, v);
        }
    }
    return PFVM_OK;
}

static pfvm_code pfvm__tr_k_adam(pfvm_kctx *k)
{
    int n = pfvm__tr_count(k->n_in, 4), j;
    double R = pfvm_tensor_get_f64(k->in[0], 0), T = (double)pfvm_tensor_get_i64(k->in[1], 0);
    double alpha = pfvm_node_attr_float(k->node, "alpha", 0.9f), beta = pfvm_node_attr_float(k->node, "beta", 0.999f);
    double eps = pfvm_node_attr_float(k->node, "epsilon", 1e-6f), norm = pfvm_node_attr_float(k->node, "norm_coefficient", 0);
    double post = pfvm_node_attr_float(k->node, "norm_coefficient_post", 0);
    double radj = T > 0 ? R * sqrt(1 - pow(beta, T)) / (1 - pow(alpha, T)) : R;
    for (j = 0; j < n; j++) {
        const pfvm_tensor *X = k->in[2 + j], *G = k->in[2 + n + j], *V = k->in[2 + 2 * n + j], *Hs = k->in[2 + 3 * n + j];
        int64_t i, m = pfvm_tensor_numel(X);
        if (pfvm_tensor_numel(G) != m || pfvm_tensor_numel(V) != m || pfvm_tensor_numel(Hs) != m)
            return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "group %d: shapes differ", j);
        for (i = 0; i < m; i++) {
            double x = pfvm_tensor_get_f64(X, i), g = norm * x + pfvm_tensor_get_f64(G, i);
            double v = alpha * pfvm_tensor_get_f64(V, i) + (1 - alpha) * g, h = beta * pfvm_tensor_get_f64(Hs, i) + (1 - beta) * g * g;
            double xn = x - radj * (v / (sqrt(h) + eps));
            pfvm_red_store(k->out[j], i, (1 - post) * xn);
            pfvm_red_store(k->out[n + j], i, v);
            pfvm_red_store(k->out[2 * n + j], i, h);
        }
    }
    return PFVM_OK;
}

const pfvm_op_def pfvm__ops_training[] = {
    {"Adagrad", PFVM__TR_DOMAIN, 1, 0, 5, -1, 2, -1, pfvm__tr_infer_adagrad, pfvm__tr_k_adagrad, NULL, PFVM_FUSE_OPAQUE, "float,double", NULL, 0, NULL, NULL, NULL},
    {"Momentum", PFVM__TR_DOMAIN, 1, 0, 5, -1, 2, -1, pfvm__tr_infer_momentum, pfvm__tr_k_momentum, NULL, PFVM_FUSE_OPAQUE, "float,double", NULL, 0, NULL, NULL, NULL},
    {"Adam", PFVM__TR_DOMAIN, 1, 0, 6, -1, 3, -1, pfvm__tr_infer_adam, pfvm__tr_k_adam, NULL, PFVM_FUSE_OPAQUE, "float,double", NULL, 0, NULL, NULL, NULL},
    {NULL, NULL, 0, 0, 0, 0, 0, 0, NULL, NULL, NULL, PFVM_FUSE_OPAQUE, NULL, NULL, 0, NULL, NULL, NULL}
};
