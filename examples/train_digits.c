/* train_digits — trains a small network from scratch with pfvm alone.
 *
 *   train_digits [--cnn] [--data DIR] [--epochs N] [--seed N] [--save MODEL.onnx]
 *
 * The data are the 1797 handwritten 8x8 digits Debian's python3-sklearn
 * ships, written as ONNX TensorProto files by tools/make_digits_data.py:
 * DIR/digits_images.pb (uint8 [1797,8,8], pixels 0..16) and
 * DIR/digits_labels.pb (uint8 [1797]); the first 80% (1437) train, the rest
 * (360) test. DIR defaults to examples/data (run from the repository root).
 *
 * The program builds the network with the IR builder (an MLP 64-64-10
 * with ReLU, or with --cnn a small CNN: 8 3x3 filters, ReLU, 2x2 max
 * pooling and a linear layer; He-initialized from a fixed seed), puts a
 * SoftmaxCrossEntropyLoss on top, lets pfvm_autodiff append the backward
 * graph and pfvm_autodiff_optimizer the Adam update, optimizes the result
 * with the default passes (fusion included), and runs that training graph
 * with one executor over shuffled minibatches: pfvm_exec_feedback_all
 * carries the parameters and Adam's state from step to step, and the
 * labels are declared varying so that one plan serves every step. After
 * each epoch a second graph, the forward pass with the parameters as
 * inputs, scores the test set. It prints the loss and accuracies per epoch
 * and exits with status 1 when the final test accuracy is below 95%.
 * --save writes the trained inference model (input float [N,1,8,8], pixels
 * 0..1; output logits [N,10]), which examples/digits can run. */
#define _POSIX_C_SOURCE 200809L
#define PFVM_IMPLEMENTATION
#include "pfvm_onnx.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define HIDDEN 64
#define CLASSES 10
#define BATCH 32
#define LR 0.01

/* ---- a small deterministic generator (xorshift64*) ------------------------------ */

static uint64_t rng_state;

static uint64_t rng_next(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1Dull;
}

/* Uniform in (0, 1). */
static double rng_uniform(void)
{
    return ((double)(rng_next() >> 11) + 0.5) / 9007199254740992.0;
}

/* Standard normal (Box-Muller). */
static double rng_normal(void)
{
    return sqrt(-2.0 * log(rng_uniform())) * cos(6.283185307179586 * rng_uniform());
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- the network -------------------------------------------------------------------- */

/* The parameters: name, shape, fan-in (0: a bias, zero at the start). */
typedef struct param {
    const char *name;
    int rank;
    int64_t dims[4];
    int fan_in;
} param;
#define N_PARAMS 4
static const param mlp_params[N_PARAMS] = {
    {"W1", 2, {64, HIDDEN}, 64},
    {"b1", 1, {HIDDEN}, 0},
    {"W2", 2, {HIDDEN, CLASSES}, HIDDEN},
    {"b2", 1, {CLASSES}, 0},
};
/* --cnn: 8 3x3 filters (padded), ReLU, 2x2 max pooling, then 8*4*4 -> 10 */
static const param cnn_params[N_PARAMS] = {
    {"W1", 4, {8, 1, 3, 3}, 9},
    {"b1", 1, {8}, 0},
    {"W2", 2, {8 * 4 * 4, CLASSES}, 8 * 4 * 4},
    {"b2", 1, {CLASSES}, 0},
};
static int use_cnn;

typedef struct net {
    pfvm_model *m;
    pfvm_graph *g;
    pfvm_value *x, *logits, *p[N_PARAMS];
} net;

/* A typed value of g: float or int64, dims given, -1 for the batch dim N. */
static pfvm_value *typed(net *n, const char *name, pfvm_dtype dt, int rank, const int64_t *dims, pfvm_status *st)
{
    pfvm_value *v = pfvm_graph_value(n->g, name, st);
    const pfvm_sym *d[PFVM_MAX_RANK];
    int i;
    if (!v || rank > PFVM_MAX_RANK)
        return NULL;
    for (i = 0; i < rank; i++)
        d[i] = dims[i] < 0 ? pfvm_sym_var(n->m->syms, "N", 1) : pfvm_sym_const(n->m->syms, dims[i]);
    return pfvm_value_set_tensor_type(v, dt, rank, d, st) ? NULL : v;
}

/* A node with one output named `out` (NULL: a fresh name); NULL on error. */
static pfvm_node *op(net *n, const char *op_type, const char *out, pfvm_value *a, pfvm_value *b, pfvm_value *c,
                     pfvm_status *st)
{
    pfvm_value *in[3], *y;
    int n_in = 0;
    if (!a)
        return NULL;
    in[n_in++] = a;
    if (b)
        in[n_in++] = b;
    if (c)
        in[n_in++] = c;
    y = out ? pfvm_graph_value(n->g, out, st) : pfvm_graph_new_value(n->g, op_type, st);
    return y ? pfvm_graph_add_node(n->g, op_type, "", NULL, in, n_in, &y, 1, st) : NULL;
}

/* Builds x [N,1,8,8] -> Flatten -> Gemm -> Relu -> Gemm -> logits [N,10]
 * (the CNN: x -> Conv -> Relu -> MaxPool -> Flatten -> Gemm -> logits).
 * The parameters are initializers holding `data` (random when NULL), or
 * graph inputs after x when as_inputs. */
static pfvm_code net_build(net *n, const float *const *data, int as_inputs, pfvm_status *st)
{
    static const int64_t xdims[4] = {-1, 1, 8, 8}, pads[4] = {1, 1, 1, 1}, two[2] = {2, 2};
    const param *params = use_cnn ? cnn_params : mlp_params;
    pfvm_node *nd;
    int i;
    memset(n, 0, sizeof *n);
    if (!(n->m = pfvm_model_new(st)) || pfvm_model_set_opset(n->m, "", 17, st) ||
        !(n->g = pfvm_graph_new(n->m, NULL, "mlp", st)) ||
        !(n->x = typed(n, "x", PFVM_FLOAT, 4, xdims, st)) || pfvm_graph_add_input(n->g, n->x, st))
        return st->code;
    for (i = 0; i < N_PARAMS; i++) {
        pfvm_value *v = typed(n, params[i].name, PFVM_FLOAT, params[i].rank, params[i].dims, st);
        if (!v)
            return st->code;
        n->p[i] = v;
        if (as_inputs) {
            if (pfvm_graph_add_input(n->g, v, st))
                return st->code;
        } else {
            pfvm_tensor *t = pfvm_model_tensor(n->m, PFVM_FLOAT, params[i].rank, params[i].dims, NULL, st);
            float *w;
            int64_t k, numel;
            if (!t)
                return st->code;
            w = (float *)t->data;
            numel = pfvm_tensor_numel(t);
            for (k = 0; k < numel; k++)
                w[k] = data ? data[i][k]
                            : params[i].fan_in ? (float)(rng_normal() * sqrt(2.0 / params[i].fan_in)) : 0.0f;
            if (pfvm_graph_add_init(n->g, v, t, st))
                return st->code;
        }
    }
    if (use_cnn) {
        nd = op(n, "Conv", NULL, n->x, n->p[0], n->p[1], st);
        if (!nd || pfvm_node_set_attr_ints(nd, "pads", pads, 4, st))
            return st->code;
        nd = op(n, "Relu", NULL, nd->outputs[0], NULL, NULL, st);
        nd = nd ? op(n, "MaxPool", NULL, nd->outputs[0], NULL, NULL, st) : NULL;
        if (!nd || pfvm_node_set_attr_ints(nd, "kernel_shape", two, 2, st) ||
            pfvm_node_set_attr_ints(nd, "strides", two, 2, st))
            return st->code;
        nd = op(n, "Flatten", NULL, nd->outputs[0], NULL, NULL, st);
    } else {
        nd = op(n, "Flatten", NULL, n->x, NULL, NULL, st);
        nd = nd ? op(n, "Gemm", NULL, nd->outputs[0], n->p[0], n->p[1], st) : NULL;
        nd = nd ? op(n, "Relu", NULL, nd->outputs[0], NULL, NULL, st) : NULL;
    }
    nd = nd ? op(n, "Gemm", "logits", nd->outputs[0], n->p[2], n->p[3], st) : NULL;
    if (!nd)
        return st->code;
    n->logits = nd->outputs[0];
    return pfvm_graph_add_output(n->g, n->logits, st);
}

/* Optimizes the training graph with the default passes (folding, fusion...).
 * The passes take initializers for constants, but the training state (the
 * initializers S with an output S_new) changes every step: it becomes graph
 * inputs too, which ONNX reads as defaults a caller may replace and the
 * passes leave alone. The executor still reads them as initializers. */
static pfvm_code optimize_training(net *n, pfvm_status *st)
{
    int i, j, n_inits = pfvm_graph_num_initializers(n->g);
    for (i = 0; i < n_inits; i++) {
        pfvm_value *v = n->g->inits[i];
        size_t len = strlen(v->name);
        for (j = 0; j < pfvm_graph_num_outputs(n->g); j++) {
            const char *o = n->g->outputs[j]->name;
            if (!strncmp(o, v->name, len) && !strcmp(o + len, "_new")) {
                if (pfvm_graph_add_input(n->g, v, st))
                    return st->code;
                break;
            }
        }
    }
    return pfvm_optimize(n->m, NULL, NULL, st);
}

/* ---- data --------------------------------------------------------------------------- */

typedef struct dataset {
    int n;         /* images */
    float *x;      /* [n,64], pixels / 16 */
    int64_t *y;    /* [n] */
} dataset;

static int load_data(const char *dir, dataset *d, pfvm_status *st)
{
    char path[4096];
    pfvm_tensor *img, *lab = NULL;
    int i, ok = 0;
    snprintf(path, sizeof path, "%s/digits_images.pb", dir);
    img = pfvm_onnx_read_value_file(path, PFVM_KIND_TENSOR, st);
    snprintf(path, sizeof path, "%s/digits_labels.pb", dir);
    if (img)
        lab = pfvm_onnx_read_value_file(path, PFVM_KIND_TENSOR, st);
    if (!img || !lab) {
        fprintf(stderr, "train_digits: %s\n", st->msg);
    } else if (img->dtype != PFVM_UINT8 || img->rank != 3 || img->dims[1] != 8 || img->dims[2] != 8 ||
               lab->dtype != PFVM_UINT8 || lab->rank != 1 || lab->dims[0] != img->dims[0] || img->dims[0] < 10) {
        fprintf(stderr, "train_digits: %s: expected uint8 [N,8,8] images and uint8 [N] labels\n", dir);
    } else {
        const uint8_t *px = (const uint8_t *)img->data, *lb = (const uint8_t *)lab->data;
        d->n = (int)img->dims[0];
        d->x = (float *)malloc(sizeof(float) * 64 * (size_t)d->n);
        d->y = (int64_t *)malloc(sizeof(int64_t) * (size_t)d->n);
        if (d->x && d->y) {
            ok = 1;
            for (i = 0; i < 64 * d->n; i++)
                d->x[i] = (float)px[i] / 16.0f;
            for (i = 0; i < d->n; i++) {
                d->y[i] = lb[i];
                if (lb[i] >= CLASSES)
                    ok = 0;
            }
            if (!ok)
                fprintf(stderr, "train_digits: a label is not a digit\n");
        }
    }
    pfvm_tensor_free(img);
    pfvm_tensor_free(lab);
    return ok;
}

/* Index of the largest of 10 logits. */
static int argmax10(const float *v)
{
    int k, best = 0;
    for (k = 1; k < CLASSES; k++)
        if (v[k] > v[best])
            best = k;
    return best;
}

/* ---- main ---------------------------------------------------------------------------- */

int main(int argc, char **argv)
{
    const char *dir = "examples/data", *save = NULL;
    int epochs = 20, n_train, n_test, i, k, ep, rc = 1, n_state, n_fwd, n_all, step = 0;
    unsigned long seed = 1;
    pfvm_status st;
    dataset d;
    net train, eval, out;
    pfvm_exec *et = NULL, *ee = NULL;
    pfvm_tensor *xb = NULL, *yb = NULL, *xt = NULL;
    const pfvm_tensor *ins[2 + N_PARAMS];
    pfvm_autodiff_opts ao;
    pfvm_autodiff_result ar;
    pfvm_optimizer_opts oo;
    pfvm_node *loss;
    int *order = NULL;
    int64_t dims[4];
    double t0, acc = 0;

    for (i = 1; i < argc; i++) {
        char *end = NULL;
        if (!strcmp(argv[i], "--data") && i + 1 < argc)
            dir = argv[++i];
        else if (!strcmp(argv[i], "--save") && i + 1 < argc)
            save = argv[++i];
        else if (!strcmp(argv[i], "--cnn"))
            use_cnn = 1;
        else if (!strcmp(argv[i], "--epochs") && i + 1 < argc && (epochs = (int)strtol(argv[++i], &end, 10)) > 0 &&
                 !*end)
            continue;
        else if (!strcmp(argv[i], "--seed") && i + 1 < argc && (seed = strtoul(argv[++i], &end, 10), !*end))
            continue;
        else {
            fprintf(stderr, "usage: train_digits [--cnn] [--data DIR] [--epochs N] [--seed N] [--save MODEL.onnx]\n");
            return 2;
        }
    }
    memset(&d, 0, sizeof d);
    memset(&train, 0, sizeof train);
    memset(&eval, 0, sizeof eval);
    memset(&out, 0, sizeof out);
    if (!load_data(dir, &d, &st))
        goto done;
    n_train = d.n * 4 / 5;
    n_test = d.n - n_train;
    rng_state = 0x9E3779B97F4A7C15ull ^ (uint64_t)seed * 0xD1B54A32D192ED03ull;
    if (!rng_state)
        rng_state = 1;

    /* the training graph: forward, loss, backward, Adam */
    if (net_build(&train, NULL, 0, &st))
        goto fail;
    {
        pfvm_value *y;
        dims[0] = -1;
        y = typed(&train, "labels", PFVM_INT64, 1, dims, &st);
        if (!y || pfvm_graph_add_input(train.g, y, &st) ||
            !(loss = op(&train, "SoftmaxCrossEntropyLoss", "loss", train.logits, y, NULL, &st)) ||
            pfvm_graph_add_output(train.g, loss->outputs[0], &st))
            goto fail;
    }
    n_fwd = pfvm_graph_num_nodes(train.g);
    memset(&ao, 0, sizeof ao);
    ao.loss = "loss";
    ao.flags = PFVM_AUTODIFF_NO_OUTPUTS;
    memset(&oo, 0, sizeof oo);
    oo.kind = PFVM_OPTIMIZER_ADAM;
    oo.lr = LR;
    if (pfvm_autodiff(train.m, NULL, &ao, &ar, &st) || pfvm_autodiff_optimizer(train.m, NULL, &ar, &oo, &st))
        goto fail;
    n_all = pfvm_graph_num_nodes(train.g);
    if (optimize_training(&train, &st) || !(et = pfvm_exec_new(train.m, NULL, &st)) || (n_state = pfvm_exec_feedback_all(et, &st)) < 0 ||
        pfvm_exec_set_input_varying(et, 1, 1, &st)) /* new labels each step: keep the plan */
        goto fail;

    /* the forward pass for scoring, reading the training graph's parameters */
    if (net_build(&eval, NULL, 1, &st) || !(ee = pfvm_exec_new(eval.m, NULL, &st)))
        goto fail;

    if (use_cnn)
        printf("train_digits: CNN (8 3x3 filters, ReLU, 2x2 max pool, 128-%d)", CLASSES);
    else
        printf("train_digits: MLP 64-%d-%d", HIDDEN, CLASSES);
    printf(", %d training and %d test images, Adam lr %g, batch %d, seed %lu\n", n_train, n_test, LR, BATCH, seed);
    printf("training graph: %d forward nodes, %d backward and update nodes, %d after pfvm_optimize; %d state tensors\n",
           n_fwd, n_all - n_fwd, pfvm_graph_num_nodes(train.g), n_state);

    dims[0] = BATCH;
    dims[1] = 1;
    dims[2] = dims[3] = 8;
    xb = pfvm_tensor_new(PFVM_FLOAT, 4, dims, &st);
    yb = xb ? pfvm_tensor_new(PFVM_INT64, 1, dims, &st) : NULL;
    dims[0] = n_test;
    xt = yb ? pfvm_tensor_view(PFVM_FLOAT, 4, dims, d.x + 64 * (size_t)n_train, &st) : NULL;
    order = (int *)malloc(sizeof(int) * (size_t)n_train);
    if (!xt || !order)
        goto fail;
    for (i = 0; i < n_train; i++)
        order[i] = i;
    t0 = now();
    for (ep = 1; ep <= epochs; ep++) {
        double sum_loss = 0;
        int right = 0, seen = 0, b;
        /* shuffle, then every full batch (the last partial one waits) */
        for (i = n_train - 1; i > 0; i--) {
            int j = (int)(rng_next() % (uint64_t)(i + 1)), tmp = order[i];
            order[i] = order[j];
            order[j] = tmp;
        }
        for (b = 0; b + BATCH <= n_train; b += BATCH) {
            const float *logits;
            for (i = 0; i < BATCH; i++) {
                memcpy((float *)xb->data + 64 * i, d.x + 64 * (size_t)order[b + i], sizeof(float) * 64);
                ((int64_t *)yb->data)[i] = d.y[order[b + i]];
            }
            ins[0] = xb;
            ins[1] = yb;
            if (pfvm_exec_bind(et, ins, 2, &st) || pfvm_exec_run(et, &st))
                goto fail;
            /* outputs: logits, loss, then the new state */
            logits = (const float *)pfvm_exec_output(et, 0)->data;
            sum_loss += pfvm_tensor_get_f64(pfvm_exec_output(et, 1), 0) * BATCH;
            for (i = 0; i < BATCH; i++)
                right += argmax10(logits + CLASSES * i) == ((int64_t *)yb->data)[i];
            seen += BATCH;
            step++;
        }
        /* score the test set with the current parameters (viewed, not copied) */
        ins[0] = xt;
        for (k = 0; k < N_PARAMS; k++)
            ins[1 + k] = train.p[k]->init;
        if (pfvm_exec_bind(ee, ins, 1 + N_PARAMS, &st) || pfvm_exec_run(ee, &st))
            goto fail;
        {
            const float *logits = (const float *)pfvm_exec_output(ee, 0)->data;
            int test_right = 0;
            for (i = 0; i < n_test; i++)
                test_right += argmax10(logits + CLASSES * i) == d.y[n_train + i];
            acc = 100.0 * test_right / n_test;
            printf("epoch %2d  loss %.4f  train %5.1f%%  test %5.1f%% (%d/%d)  %.2f s\n", ep, sum_loss / seen,
                   100.0 * right / seen, acc, test_right, n_test, now() - t0);
        }
    }
    printf("final test accuracy: %.1f%% after %d steps in %.2f s\n", acc, step, now() - t0);
    fflush(stdout);

    if (save) {
        const float *w[N_PARAMS];
        for (k = 0; k < N_PARAMS; k++)
            w[k] = (const float *)train.p[k]->init->data;
        /* inferred first: ONNX wants the outputs' types */
        if (net_build(&out, w, 0, &st) || pfvm_infer_shapes(out.g, 1, &st) || pfvm_onnx_save_file(out.m, save, &st))
            goto fail;
        printf("saved the trained model to %s\n", save);
    }
    rc = acc >= 95.0 ? 0 : 1;
    if (rc)
        fprintf(stderr, "train_digits: test accuracy %.1f%% is below 95%%\n", acc);
    goto done;
fail:
    fprintf(stderr, "train_digits: %s\n", st.msg);
    rc = 1;
done:
    free(order);
    pfvm_tensor_free(xb);
    pfvm_tensor_free(yb);
    pfvm_tensor_free(xt);
    pfvm_exec_free(et);
    pfvm_exec_free(ee);
    pfvm_model_free(train.m);
    pfvm_model_free(eval.m);
    pfvm_model_free(out.m);
    free(d.x);
    free(d.y);
    return rc;
}
