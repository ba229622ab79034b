/* ops/rnn: the recurrent operators RNN, GRU and LSTM — every direction,
 * both layouts, custom activations (with alpha/beta), clip, initial states,
 * peepholes, input_forget, linear_before_reset and sequence lengths.
 *
 * One driver walks time steps and directions; a cell function per operator
 * computes the gates of one batch row from the step's input and the
 * previous state. Arithmetic is in double; the state lives in the kernel
 * workspace (pfvm_kctx_scratch). */
#include "ops_common.h"

#include <math.h>

enum { PFVM__RNN_RNN = 0, PFVM__RNN_GRU = 1, PFVM__RNN_LSTM = 2 };

typedef struct pfvm__rnn_act {
    int kind; /* index in the name table */
    double alpha, beta;
} pfvm__rnn_act;

static const char *const pfvm__rnn_act_names[] = {"Sigmoid", "Tanh", "Relu", "Affine", "LeakyRelu", "ThresholdedRelu",
                                                 "ScaledTanh", "HardSigmoid", "Elu", "Softsign", "Softplus"};

static double pfvm__rnn_apply(const pfvm__rnn_act *a, double x)
{
    switch (a->kind) {
    case 0: return x >= 0 ? 1.0 / (1.0 + exp(-x)) : exp(x) / (1.0 + exp(x));
    case 1: return tanh(x);
    case 2: return x > 0 ? x : 0;
    case 3: return a->alpha * x + a->beta;
    case 4: return x >= 0 ? x : a->alpha * x;
    case 5: return x > a->alpha ? x : 0;
    case 6: return a->alpha * tanh(a->beta * x);
    case 7: return fmax(0, fmin(1, a->alpha * x + a->beta));
    case 8: return x >= 0 ? x : a->alpha * (exp(x) - 1);
    case 9: return x / (1 + fabs(x));
    default: return x > 0 ? x + log1p(exp(-x)) : log1p(exp(x));
    }
}

/* Default alpha/beta of activations that take them. */
static void pfvm__rnn_defaults(pfvm__rnn_act *a)
{
    switch (a->kind) {
    case 3: a->alpha = 1; a->beta = 0; break;
    case 4: a->alpha = 0.01; break;
    case 5: a->alpha = 1; break;
    case 6: a->alpha = 1; a->beta = 1; break;
    case 7: a->alpha = 0.2; a->beta = 0.5; break;
    case 8: a->alpha = 1; break;
    default: break;
    }
}

typedef struct pfvm__rnn {
    int type, dirs, layout, lbr, input_forget, n_act;
    int64_t T, B, I, H, G;
    double clip;
    pfvm__rnn_act act[6];
} pfvm__rnn;

static pfvm_code pfvm__rnn_config(const pfvm_node *n, int type, pfvm__rnn *r, pfvm_status *st)
{
    const char *dir = pfvm_node_attr_string(n, "direction", "forward");
    const pfvm_attr *acts = pfvm_node_attr(n, "activations");
    const float *al = NULL, *be = NULL;
    int n_al = pfvm_node_attr_floats(n, "activation_alpha", &al), n_be = pfvm_node_attr_floats(n, "activation_beta", &be);
    int i, j, per = type == PFVM__RNN_RNN ? 1 : type == PFVM__RNN_GRU ? 2 : 3;
    static const int defaults[3][3] = {{1, 1, 1}, {0, 1, 1}, {0, 1, 1}};
    memset(r, 0, sizeof *r);
    r->type = type;
    r->G = type == PFVM__RNN_RNN ? 1 : type == PFVM__RNN_GRU ? 3 : 4;
    r->dirs = !strcmp(dir, "bidirectional") ? 2 : 1;
    if (strcmp(dir, "forward") && strcmp(dir, "reverse") && r->dirs == 1)
        return pfvm__fail(st, PFVM_ERR_INVALID, "direction '%s' is not valid", dir);
    r->layout = (int)pfvm_node_attr_int(n, "layout", 0);
    r->lbr = (int)pfvm_node_attr_int(n, "linear_before_reset", 0);
    r->input_forget = (int)pfvm_node_attr_int(n, "input_forget", 0);
    r->clip = pfvm_node_attr_float(n, "clip", 0);
    r->n_act = per * r->dirs;
    for (i = 0; i < r->n_act; i++) {
        pfvm__rnn_act *a = &r->act[i];
        a->kind = defaults[type][i % per];
        if (acts && acts->type == PFVM_ATTR_STRINGS) {
            if (acts->n != r->n_act)
                return pfvm__fail(st, PFVM_ERR_INVALID, "%d activations given, %d expected", acts->n, r->n_act);
            for (j = 0; j < 11; j++)
                if (!strcmp(acts->strings[i], pfvm__rnn_act_names[j]))
                    break;
            if (j == 11)
                return pfvm__fail(st, PFVM_ERR_UNSUPPORTED, "activation '%s' is not supported", acts->strings[i]);
            a->kind = j;
        }
        pfvm__rnn_defaults(a);
    }
    /* alpha/beta lists apply, in order, to the activations that take them */
    if (acts && acts->type == PFVM_ATTR_STRINGS) {
        int ia = 0, ib = 0;
        for (i = 0; i < r->n_act; i++) {
            int k = r->act[i].kind;
            if (k == 3 || k == 4 || k == 5 || k == 6 || k == 7 || k == 8) {
                if (ia < n_al)
                    r->act[i].alpha = al[ia++];
            }
            if (k == 3 || k == 6 || k == 7) {
                if (ib < n_be)
                    r->act[i].beta = be[ib++];
            }
        }
    }
    return PFVM_OK;
}

/* Input j, when of known rank, must be `rank`-D with the given dims (NULL
 * dims are not checked). */
static pfvm_code pfvm__rnn_check(pfvm_ictx *c, int j, const char *what, int rank, const pfvm_sym *d0, const pfvm_sym *d1,
                                 const pfvm_sym *d2)
{
    const pfvm_ival *v = j < c->n_in ? c->in[j] : NULL;
    const pfvm_sym *want[3];
    int d;
    char buf[64];
    if (!v || v->type.kind != PFVM_KIND_TENSOR || v->type.shape.rank < 0)
        return PFVM_OK;
    if (v->type.shape.rank != rank)
        return pfvm__fail(c->st, PFVM_ERR_SHAPE, "%s must be %d-D, not rank %d", what, rank, v->type.shape.rank);
    want[0] = d0;
    want[1] = d1;
    want[2] = d2;
    for (d = 0; d < rank; d++) {
        pfvm__snprintf(buf, sizeof buf, "%s dim %d and the expected size", what, d);
        if (pfvm_infer_check_eq(c, v->type.shape.dims[d], want[d], buf))
            return c->st ? c->st->code : PFVM_ERR_SHAPE;
    }
    return PFVM_OK;
}

/* X is [T,B,I] ([B,T,I] with layout 1); W [D,G*H,I], R [D,G*H,H], B
 * [D,2*G*H], sequence_lens [B], initial_h/initial_c [D,B,H] ([B,D,H]),
 * P [D,3*H]. Y is [T,D,B,H] ([B,T,D,H]); Y_h and Y_c like initial_h. H
 * comes from hidden_size or R. With X of unknown rank, D, H and (from an
 * initial state) B still resolve. */
static pfvm_code pfvm__rnn_infer(pfvm_ictx *c, int type)
{
    const pfvm_shape *x = &c->in[0]->type.shape;
    const pfvm_shape *rs = c->n_in > 2 && c->in[2] ? &c->in[2]->type.shape : NULL;
    pfvm__rnn r;
    pfvm_shape y, h;
    const pfvm_sym *T = NULL, *B = NULL, *H, *D, *I = NULL, *GH = NULL;
    int64_t hs = pfvm_node_attr_int(c->node, "hidden_size", 0);
    int j;
    if (pfvm__rnn_config(c->node, type, &r, c->st))
        return c->st ? c->st->code : PFVM_ERR_INVALID;
    if (x->rank >= 0 && x->rank != 3)
        return pfvm__fail(c->st, PFVM_ERR_SHAPE, "X must be 3-D, not rank %d", x->rank);
    if (x->rank == 3) {
        T = x->dims[r.layout ? 1 : 0];
        B = x->dims[r.layout ? 0 : 1];
        I = x->dims[2];
    }
    H = hs > 0 ? pfvm_sym_const(c->syms, hs) : rs && rs->rank == 3 ? rs->dims[2] : NULL;
    D = pfvm_sym_const(c->syms, r.dirs);
    if (H)
        GH = pfvm_sym_muli(c->syms, H, r.G);
    if (pfvm__rnn_check(c, 1, "W", 3, D, GH, I) || pfvm__rnn_check(c, 2, "R", 3, D, GH, H) ||
        pfvm__rnn_check(c, 3, "B", 2, D, GH ? pfvm_sym_muli(c->syms, GH, 2) : NULL, NULL) ||
        pfvm__rnn_check(c, 4, "sequence_lens", 1, B, NULL, NULL) ||
        pfvm__rnn_check(c, 5, "initial_h", 3, r.layout ? B : D, r.layout ? D : B, H) ||
        (type == PFVM__RNN_LSTM && (pfvm__rnn_check(c, 6, "initial_c", 3, r.layout ? B : D, r.layout ? D : B, H) ||
                                    pfvm__rnn_check(c, 7, "P", 2, D, H ? pfvm_sym_muli(c->syms, H, 3) : NULL, NULL))))
        return c->st ? c->st->code : PFVM_ERR_SHAPE;
    if (!B && c->n_in > 5 && c->in[5] && c->in[5]->type.shape.rank == 3)
        B = c->in[5]->type.shape.dims[r.layout ? 0 : 1];
    for (j = 0; j < c->n_out; j++)
        if (pfvm_infer_unknown(c, j, c->in[0]->type.dtype, j ? 3 : 4))
            return c->st ? c->st->code : PFVM_ERR_NOMEM;
    if (!H)
        return PFVM_OK;
    if (c->n_out > 0 && c->out[0]) {
        y = c->out[0]->type.shape;
        if (r.layout) {
            y.dims[0] = B ? B : y.dims[0];
            y.dims[1] = T ? T : y.dims[1];
            y.dims[2] = D;
            y.dims[3] = H;
        } else {
            y.dims[0] = T ? T : y.dims[0];
            y.dims[1] = D;
            y.dims[2] = B ? B : y.dims[2];
            y.dims[3] = H;
        }
        pfvm_ival_set_tensor(c->out[0], c->in[0]->type.dtype, &y);
    }
    for (j = 1; j < c->n_out; j++)
        if (c->out[j]) {
            h = c->out[j]->type.shape;
            h.dims[r.layout ? 1 : 0] = D;
            if (B)
                h.dims[r.layout ? 0 : 1] = B;
            h.dims[2] = H;
            pfvm_ival_set_tensor(c->out[j], c->in[0]->type.dtype, &h);
        }
    return PFVM_OK;
}

static pfvm_code pfvm__rnn_infer_rnn(pfvm_ictx *c) { return pfvm__rnn_infer(c, PFVM__RNN_RNN); }
static pfvm_code pfvm__rnn_infer_gru(pfvm_ictx *c) { return pfvm__rnn_infer(c, PFVM__RNN_GRU); }
static pfvm_code pfvm__rnn_infer_lstm(pfvm_ictx *c) { return pfvm__rnn_infer(c, PFVM__RNN_LSTM); }

static double pfvm__rnn_clip(const pfvm__rnn *r, double v)
{
    if (r->clip > 0)
        v = v < -r->clip ? -r->clip : v > r->clip ? r->clip : v;
    return v;
}

static pfvm_code pfvm__rnn_run(pfvm_kctx *k, int type)
{
    const pfvm_tensor *X = k->in[0], *W = k->in[1], *R = k->in[2];
    const pfvm_tensor *Bias = k->n_in > 3 ? k->in[3] : NULL, *L = k->n_in > 4 ? k->in[4] : NULL;
    const pfvm_tensor *H0 = k->n_in > 5 ? k->in[5] : NULL, *C0 = type == PFVM__RNN_LSTM && k->n_in > 6 ? k->in[6] : NULL;
    const pfvm_tensor *P = type == PFVM__RNN_LSTM && k->n_in > 7 ? k->in[7] : NULL;
    pfvm_tensor *Y = k->n_out > 0 ? k->out[0] : NULL, *Yh = k->n_out > 1 ? k->out[1] : NULL;
    pfvm_tensor *Yc = type == PFVM__RNN_LSTM && k->n_out > 2 ? k->out[2] : NULL;
    pfvm__rnn r;
    double *h, *cst, *g, *hn;
    int64_t T, Bn, I, H, G, d, t, b, j, q;
    int per;
    if (pfvm__rnn_config(k->node, type, &r, k->st))
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_INVALID, "%s", k->st ? k->st->msg : "bad attributes");
    if (X->rank != 3 || W->rank != 3 || R->rank != 3)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "X, W and R must be 3-D");
    T = X->dims[r.layout ? 1 : 0];
    Bn = X->dims[r.layout ? 0 : 1];
    I = X->dims[2];
    G = r.G;
    H = R->dims[2];
    per = type == PFVM__RNN_RNN ? 1 : type == PFVM__RNN_GRU ? 2 : 3;
    if (W->dims[0] != r.dirs || W->dims[1] != G * H || W->dims[2] != I || R->dims[1] != G * H)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "W or R does not match hidden_size, input size or directions");
    if (Bias && pfvm_tensor_numel(Bias) != r.dirs * 2 * G * H)
        return pfvm__op_fail(k->st, k->node, PFVM_ERR_SHAPE, "B does not match");
    /* workspace: h, c, next h for the batch, and the gates of one row */
    h = (double *)pfvm_kctx_scratch(k, sizeof(double) * (size_t)(3 * Bn * H + G * H + 1));
    if (!h)
        return k->st ? k->st->code : PFVM_ERR_NOMEM;
    cst = h + Bn * H;
    hn = cst + Bn * H;
    g = hn + Bn * H;
    if (Y && Y->data && Y->nbytes)
        memset(Y->data, 0, Y->nbytes);
    for (d = 0; d < r.dirs; d++) {
        int reverse = r.dirs == 2 ? d == 1 : !strcmp(pfvm_node_attr_string(k->node, "direction", "forward"), "reverse");
        const pfvm__rnn_act *fa = &r.act[d * per], *ga = &r.act[d * per + (per > 1)], *ha = &r.act[d * per + (per > 2 ? 2 : per - 1)];
        for (b = 0; b < Bn; b++)
            for (j = 0; j < H; j++) {
                int64_t hi = r.layout ? (b * r.dirs + d) * H + j : (d * Bn + b) * H + j;
                h[b * H + j] = H0 ? pfvm_tensor_get_f64(H0, hi) : 0;
                cst[b * H + j] = C0 ? pfvm_tensor_get_f64(C0, hi) : 0;
            }
        for (t = 0; t < T; t++) {
            for (b = 0; b < Bn; b++) {
                int64_t len = L ? pfvm_tensor_get_i64(L, b) : T, step = reverse ? len - 1 - t : t;
                if (t >= len) {
                    for (j = 0; j < H; j++)
                        hn[b * H + j] = h[b * H + j];
                    continue;
                }
                /* gates: x W^T + h R^T + biases (GRU's hidden gate waits for r) */
                for (q = 0; q < G * H; q++) {
                    double s = 0;
                    int64_t p;
                    int gate = (int)(q / H);
                    for (p = 0; p < I; p++)
                        s += pfvm_tensor_get_f64(X, r.layout ? (b * T + step) * I + p : (step * Bn + b) * I + p) *
                             pfvm_tensor_get_f64(W, (d * G * H + q) * I + p);
                    if (Bias)
                        s += pfvm_tensor_get_f64(Bias, d * 2 * G * H + q);
                    if (!(type == PFVM__RNN_GRU && gate == 2)) {
                        for (p = 0; p < H; p++)
                            s += h[b * H + p] * pfvm_tensor_get_f64(R, (d * G * H + q) * H + p);
                        if (Bias)
                            s += pfvm_tensor_get_f64(Bias, d * 2 * G * H + G * H + q);
                    }
                    g[q] = s;
                }
                for (j = 0; j < H; j++) {
                    double out;
                    if (type == PFVM__RNN_RNN) {
                        out = pfvm__rnn_apply(fa, pfvm__rnn_clip(&r, g[j]));
                    } else if (type == PFVM__RNN_GRU) {
                        double z = pfvm__rnn_apply(fa, pfvm__rnn_clip(&r, g[j])), rr = pfvm__rnn_apply(fa, pfvm__rnn_clip(&r, g[H + j]));
                        double rec = 0, rb = Bias ? pfvm_tensor_get_f64(Bias, d * 2 * G * H + G * H + 2 * H + j) : 0, hh;
                        int64_t p;
                        if (r.lbr) {
                            for (p = 0; p < H; p++)
                                rec += h[b * H + p] * pfvm_tensor_get_f64(R, (d * G * H + 2 * H + j) * H + p);
                            rec = rr * (rec + rb);
                        } else {
                            for (p = 0; p < H; p++)
                                rec += rr * h[b * H + p] * pfvm_tensor_get_f64(R, (d * G * H + 2 * H + j) * H + p);
                            rec += rb;
                        }
                        hh = pfvm__rnn_apply(ga, pfvm__rnn_clip(&r, g[2 * H + j] + rec));
                        out = (1 - z) * hh + z * h[b * H + j];
                    } else {
                        double cp = cst[b * H + j];
                        double pi = P ? pfvm_tensor_get_f64(P, d * 3 * H + j) : 0, po = P ? pfvm_tensor_get_f64(P, d * 3 * H + H + j) : 0;
                        double pf = P ? pfvm_tensor_get_f64(P, d * 3 * H + 2 * H + j) : 0;
                        double ig = pfvm__rnn_apply(fa, pfvm__rnn_clip(&r, g[j] + pi * cp));
                        double fg = r.input_forget ? 1 - ig : pfvm__rnn_apply(fa, pfvm__rnn_clip(&r, g[2 * H + j] + pf * cp));
                        double cc = pfvm__rnn_apply(ga, pfvm__rnn_clip(&r, g[3 * H + j]));
                        double cn = fg * cp + ig * cc;
                        double og = pfvm__rnn_apply(fa, pfvm__rnn_clip(&r, g[H + j] + po * cn));
                        cst[b * H + j] = cn;
                        out = og * pfvm__rnn_apply(ha, cn);
                    }
                    hn[b * H + j] = out;
                    if (Y && Y->data)
                        pfvm_red_store(Y, r.layout ? ((b * T + step) * r.dirs + d) * H + j : ((step * r.dirs + d) * Bn + b) * H + j, out);
                }
            }
            memcpy(h, hn, sizeof(double) * (size_t)(Bn * H));
        }
        for (b = 0; b < Bn; b++)
            for (j = 0; j < H; j++) {
                int64_t hi = r.layout ? (b * r.dirs + d) * H + j : (d * Bn + b) * H + j;
                if (Yh && Yh->data)
                    pfvm_red_store(Yh, hi, h[b * H + j]);
                if (Yc && Yc->data)
                    pfvm_red_store(Yc, hi, cst[b * H + j]);
            }
    }
    return PFVM_OK;
}

static pfvm_code pfvm__rnn_k_rnn(pfvm_kctx *k) { return pfvm__rnn_run(k, PFVM__RNN_RNN); }
static pfvm_code pfvm__rnn_k_gru(pfvm_kctx *k) { return pfvm__rnn_run(k, PFVM__RNN_GRU); }
static pfvm_code pfvm__rnn_k_lstm(pfvm_kctx *k) { return pfvm__rnn_run(k, PFVM__RNN_LSTM); }

PFVM_INTERNAL const pfvm_op_def pfvm__ops_rnn[] = {
    {"RNN", "", 7, 0, 3, 6, 0, 2, pfvm__rnn_infer_rnn, pfvm__rnn_k_rnn, NULL, PFVM_FUSE_OPAQUE, "float,double,float16", NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
    {"GRU", "", 7, 0, 3, 6, 0, 2, pfvm__rnn_infer_gru, pfvm__rnn_k_gru, NULL, PFVM_FUSE_OPAQUE, "float,double,float16", NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
    {"LSTM", "", 7, 0, 3, 8, 0, 3, pfvm__rnn_infer_lstm, pfvm__rnn_k_lstm, NULL, PFVM_FUSE_OPAQUE, "float,double,float16", NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
    {NULL, NULL, 0, 0, 0, 0, 0, 0, NULL, NULL, NULL, PFVM_FUSE_OPAQUE, NULL, NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL}
};
