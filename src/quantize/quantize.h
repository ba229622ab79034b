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
    PFVM_QUANT_PERCENTILE = 1 /* cut the tails: keep `percentile` percent of the calibrated values */
} pfvm_quant_method;

/* Options of pfvm_quantize; all-zero is the default: per-tensor weights,
 * uint8 asymmetric activations, min/max ranges, nothing excluded. */
typedef struct pfvm_quant_options {
    int per_channel;          /* int8 weight scales per output channel (needs opset 13) */
    int symmetric;            /* activations int8 with zero point 0 */
    pfvm_quant_method method;
    double percentile;        /* PFVM_QUANT_PERCENTILE: share kept, in percent (0: 99.99) */
    const char *exclude;      /* comma-separated node names left in float, or NULL */
} pfvm_quant_options;

/* What pfvm_quantize did. */
typedef struct pfvm_quant_report {
    int nodes;        /* nodes whose operands are quantized */
    int activations;  /* activations given a QuantizeLinear/DequantizeLinear pair */
    int weights;      /* float weights stored as int8 */
    int biases;       /* biases stored as int32 */
} pfvm_quant_report;

/* Quantizes m's main graph in place from n_sets calibration input sets:
 * inputs[s * k + i] is input i of set s, k being the number of inputs the
 * executor takes (graph inputs that are not initializers, in order). The
 * graph must have its types inferred (pfvm_infer_shapes) and should be
 * optimized without fusion first (fold, bnfold: quantizable nodes must be
 * plain ONNX ones). Afterwards run the dce pass to drop the float weights
 * now unused. The result saves as standard ONNX (opset >= 10; 13 with
 * per_channel). `report` may be NULL. */
PFVM_API pfvm_code pfvm_quantize(pfvm_model *m, const pfvm_tensor *const *inputs, int n_sets,
                                 const pfvm_quant_options *opt, pfvm_quant_report *report, pfvm_status *st);


#ifdef __cplusplus
}
#endif
#endif /* PFVM_QUANTIZE_H */
