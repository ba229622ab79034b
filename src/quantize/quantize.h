/* quantize: post-training static int8 quantization (pfvm_quantize). It
 * runs the executor for calibration, so it is a layer above exec; the pass
 * that turns the resulting QDQ patterns into integer operators ("qlinear",
 * in the default pipeline) is an ordinary pass (src/passes/qlinear.c).
 *
 * pfvm_quantize runs calibration inputs through the interpreter, records
 * the range of every float activation, and rewrites the graph in the QDQ
 * format that onnxruntime and TensorRT read: each activation read or made
 * by a quantizable node passes through QuantizeLinear -> DequantizeLinear
 * (uint8 asymmetric, or int8 with zero point 0 when symmetric), and the
 * float weights of Conv, MatMul and Gemm become int8 initializers (per
 * tensor or per output channel, zero point 0, left out) read through
 * DequantizeLinear, their biases int32 at scale x_scale * w_scale (zero
 * point left out too). The
 * model stays float at its edges (graph outputs are not quantized). */
#ifndef PFVM_QUANTIZE_H
#define PFVM_QUANTIZE_H

#include "../passes/passes.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How ranges become scales. */
typedef enum pfvm_quant_method {
    PFVM_QUANT_MINMAX = 0,    /* the calibrated minimum and maximum */
    PFVM_QUANT_PERCENTILE = 1, /* cut the tails: keep `percentile` percent of the calibrated values */
    PFVM_QUANT_MSE = 2         /* per activation, the range whose 8-bit grid has the least mean squared
                                  error (clipping plus rounding) over the calibrated histogram */
} pfvm_quant_method;

/* One line of pfvm_quantize's sensitivity report (no newline). */
typedef void (*pfvm_quant_log_fn)(void *ctx, const char *line);

/* Options of pfvm_quantize; all-zero is the default: per-tensor weights,
 * uint8 asymmetric activations, min/max ranges, nothing excluded. */
typedef struct pfvm_quant_options {
    int per_channel;          /* int8 weight scales per output channel (needs opset 13) */
    int symmetric;            /* activations int8 with zero point 0 */
    pfvm_quant_method method;
    double percentile;        /* PFVM_QUANT_PERCENTILE: share kept, in percent (0: 99.99) */
    const char *exclude;      /* comma-separated node names left in float, or NULL */
    int auto_exclude;         /* mixed precision: leave float the N activations whose quantization alone
                                 costs the outputs most (see pfvm_quantize) */
    pfvm_quant_log_fn log;    /* if set, receives the sensitivity report (one call per line) */
    void *log_ctx;
} pfvm_quant_options;

/* What pfvm_quantize did. */
typedef struct pfvm_quant_report {
    int nodes;        /* nodes whose operands are quantized */
    int activations;  /* activations given a QuantizeLinear/DequantizeLinear pair */
    int weights;      /* float weights stored as int8 */
    int biases;       /* biases stored as int32 */
    int excluded;     /* activations left float by auto_exclude */
    double out_sqnr_db; /* signal-to-quantization-noise ratio of the outputs on the analysed sets
                           (only when auto_exclude or log is set; after the exclusions) */
} pfvm_quant_report;

/* Quantizes m's main graph in place from n_sets calibration input sets:
 * inputs[s * k + i] is input i of set s, k being the number of inputs the
 * executor takes (graph inputs that are not initializers, in order). The
 * graph must have its types inferred (pfvm_infer_shapes) and should be
 * optimized without fusion first (fold, bnfold: quantizable nodes must be
 * plain ONNX ones). Afterwards run the dce pass to drop the float weights
 * now unused. The result saves as standard ONNX (opset >= 10; 13 with
 * per_channel). `report` may be NULL.
 *
 * With opt->log or opt->auto_exclude set, a sensitivity analysis follows
 * on the first sets (at most 8): the float model and the QDQ model run
 * side by side, and for every quantized activation the report gives its
 * signal-to-quantization-noise ratio (accumulated: the QDQ model's
 * dequantized value against the float model's) and, with auto_exclude,
 * the outputs' error when that activation alone is quantized. The
 * auto_exclude activations with the largest such error lose their
 * QuantizeLinear/DequantizeLinear pair (their readers see float; weights
 * stay int8), and the outputs' SQNR is measured again. */
PFVM_API pfvm_code pfvm_quantize(pfvm_model *m, const pfvm_tensor *const *inputs, int n_sets,
                                 const pfvm_quant_options *opt, pfvm_quant_report *report, pfvm_status *st);


#ifdef __cplusplus
}
#endif
#endif /* PFVM_QUANTIZE_H */
