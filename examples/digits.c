/* digits — the demo: classify handwritten 8x8 digits with a small CNN.
 *
 *   digits MODEL.onnx SAMPLES_DIR
 *
 * SAMPLES_DIR holds digit_K.pb images (ONNX TensorProto, float [1,1,8,8],
 * pixel values 0..1) and labels.txt ("digit_K.pb TRUE_LABEL TORCH_LABEL").
 * For each image it prints the picture, pfvm's answer with its probability,
 * and the true label. */
#define _POSIX_C_SOURCE 200809L
#define PFVM_IMPLEMENTATION
#include "pfvm_onnx.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static void draw(const float *px)
{
    static const char shades[] = " .:-=+*#%@";
    int r, c;
    for (r = 0; r < 8; r++) {
        printf("    ");
        for (c = 0; c < 8; c++) {
            float v = px[r * 8 + c];
            int k = (int)(v * 9.0f + 0.5f);
            k = k < 0 ? 0 : k > 9 ? 9 : k;
            putchar(shades[k]);
            putchar(shades[k]);
        }
        putchar('\n');
    }
}

/* Index of the largest logit and its softmax probability. */
static int classify(const pfvm_tensor *logits, double *prob)
{
    int64_t i, n = pfvm_tensor_numel(logits);
    int best = 0;
    double mx, sum = 0;
    mx = pfvm_tensor_get_f64(logits, 0);
    for (i = 1; i < n; i++)
        if (pfvm_tensor_get_f64(logits, i) > mx) {
            mx = pfvm_tensor_get_f64(logits, i);
            best = (int)i;
        }
    for (i = 0; i < n; i++)
        sum += exp(pfvm_tensor_get_f64(logits, i) - mx);
    *prob = 1.0 / sum;
    return best;
}

int main(int argc, char **argv)
{
    pfvm_status st;
    pfvm_model *m;
    pfvm_exec *e;
    FILE *labels;
    char path[4096], line[512];
    int total = 0, right = 0, agree = 0;
    if (argc != 3) {
        fprintf(stderr, "usage: digits MODEL.onnx SAMPLES_DIR\n");
        return 2;
    }
    m = pfvm_onnx_load_file(argv[1], 0, &st);
    if (!m) {
        fprintf(stderr, "digits: %s\n", st.msg);
        return 1;
    }
    e = pfvm_exec_new(m, NULL, &st);
    if (!e) {
        fprintf(stderr, "digits: %s\n", st.msg);
        pfvm_model_free(m);
        return 1;
    }
    snprintf(path, sizeof path, "%s/labels.txt", argv[2]);
    labels = fopen(path, "r");
    if (!labels) {
        fprintf(stderr, "digits: cannot open %s\n", path);
        pfvm_exec_free(e);
        pfvm_model_free(m);
        return 1;
    }
    printf("pfvm: %s (%d nodes, opset %lld) on %s\n\n", argv[1], pfvm_graph_num_nodes(m->graph),
           (long long)pfvm_model_opset(m, ""), argv[2]);
    while (fgets(line, sizeof line, labels)) {
        char file[256];
        int truth, torch_label, got;
        double prob;
        pfvm_tensor *img;
        if (sscanf(line, "%255s %d %d", file, &truth, &torch_label) != 3)
            continue;
        snprintf(path, sizeof path, "%s/%s", argv[2], file);
        img = pfvm_onnx_read_value_file(path, PFVM_KIND_TENSOR, &st);
        if (!img || pfvm_exec_bind_one(e, img, &st) || pfvm_exec_run(e, &st)) {
            fprintf(stderr, "digits: %s: %s\n", file, st.msg);
            pfvm_tensor_free(img);
            fclose(labels);
            pfvm_exec_free(e);
            pfvm_model_free(m);
            return 1;
        }
        got = classify(pfvm_exec_output(e, 0), &prob);
        draw((const float *)img->data);
        printf("    %s: pfvm says %d (%.1f%%), the label is %d%s\n\n", file, got, 100.0 * prob, truth,
               got == truth ? "" : "  <- wrong");
        total++;
        right += got == truth;
        agree += got == torch_label;
        pfvm_tensor_free(img);
    }
    fclose(labels);
    printf("%d of %d digits right; pfvm agrees with torch on %d of %d\n", right, total, agree, total);
    pfvm_exec_free(e);
    pfvm_model_free(m);
    return agree == total ? 0 : 1;
}
