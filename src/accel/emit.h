/* accel emitter: a model's main graph -> an accel program (README.md,
 * "accel programs"), with every node lowered by its operator's accel hook
 * (pfvm_op_def.accel, src/ops).
 *
 * The plan is the simple, always-correct one the issue calls the naive
 * baseline: every activation has its first axis block-split over as many
 * PEs as divide it (the innermost levels first) and its other axes in the
 * PE; weights and constants are on every PE (replicated); each node is one
 * phase (a barrier after it). Buffers get one offset on every PE, first fit
 * in the PE's memory, freed after their last reader. Not done yet: the cost
 * model's layout search, conversions between differently split tensors,
 * tiling and spills to outer levels (a tensor that does not fit is an
 * error). */
#ifndef PFVM_ACCEL_EMIT_H
#define PFVM_ACCEL_EMIT_H

#include "../ir/ir.h"
#include "target.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pfvm_accel_stats {
    int nodes;            /* nodes lowered */
    int64_t pes_used;     /* most PEs any node runs on */
    int64_t peak_bytes;   /* highest PE memory offset in use */
    int64_t weight_bytes; /* bytes of weights and constants per PE */
    int64_t weight_distinct_bytes; /* of them, a weight equal to another counted once
                                    * (the traffic bound's compulsory bytes) */
    double flops;         /* of the lowered nodes (pfvm_node_flops) */
    int fallbacks;        /* nodes run whole on PE 0 (their lowering refused split inputs) */
    int streamed;         /* 1: the streamed plan (tensors in the root memory, nodes in tiles) */
    int64_t dram_bytes;   /* streamed: bytes of the root memory in use */
} pfvm_accel_stats;

/* Emits the program for m's main graph on target t. The graph must have
 * static shapes (bind symbolic dims first) and float32 values; m is
 * optimized in place with the passes "fold,dce" (Constant nodes become
 * weights). *program is NUL-terminated text the caller frees with
 * pfvm_accel_free. stats may be NULL. Errors name the node and operator:
 * an operator without an accel hook, a case its hook does not lower, a
 * symbolic dim, a tensor that does not fit in a PE. */
PFVM_API pfvm_code pfvm_accel_emit(pfvm_model *m, const pfvm_accel_target *t, char **program,
                                   pfvm_accel_stats *stats, pfvm_status *st);
/* The baseline the issue measures against (interp accel --baseline
 * naive): the streamed plan with every node on as many PEs as its output's
 * first axis has (its tiles in waves over those), each tensor through the
 * root memory between nodes (no activation applied by its producer). The
 * rest as pfvm_accel_emit. */
PFVM_API pfvm_code pfvm_accel_emit_naive(pfvm_model *m, const pfvm_accel_target *t, char **program,
                                         pfvm_accel_stats *stats, pfvm_status *st);
/* Records the program's placement in m (the model pfvm_accel_emit
 * optimized) as ONNX metadata_props, so that the laid-out graph can be
 * saved as ONNX and read back by any tool: "pfvm.accel.target" = the
 * target's name, and "pfvm.accel.layout.VALUE" = the layout (README.md,
 * "accel", "Layouts") of every graph input, weight and node output the
 * program places. The plan moves nothing between nodes (each node reads
 * its inputs where they were written), so there are no move nodes to add. */
PFVM_API pfvm_code pfvm_accel_annotate(pfvm_model *m, const pfvm_accel_target *t, const char *program,
                                       pfvm_status *st);
/* Frees what pfvm_accel_emit returned. */
PFVM_API void pfvm_accel_free(void *p);

#ifdef __cplusplus
}
#endif

#endif
