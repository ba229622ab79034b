/* accel target: a hierarchical SIMD accelerator described as data.
 *
 * A target is a tree of levels, outermost first (level 0 is the root, for
 * example the DRAM of a chip; the last level is the processing element).
 * Every instance of level k has `fanout` children of level k + 1 (the root
 * has fanout 1), its own local memory, and a link to its parent that moves
 * `down` bytes per cycle towards it and `up` bytes per cycle back; the link
 * may broadcast (one transfer from the parent reaches all its children) and
 * reduce (the parent receives the sum or max of its children's data in one
 * transfer). The leaf, the PE, adds a SIMD width (elements per vector
 * instruction) and multiply-accumulates per cycle per element type.
 *
 * The text format (README.md, "accel targets") is line-oriented:
 *
 *     # comment (to the end of the line, anywhere)
 *     target NAME
 *     level NAME fanout N mem BYTES down BPC up BPC [broadcast] [reduce]
 *     ...
 *     pe simd W mac DTYPE N [mac DTYPE N]...
 *
 * BYTES takes the suffixes K, M, G (KiB, MiB, GiB). A bad file gives one
 * error naming its line. */
#ifndef PFVM_ACCEL_TARGET_H
#define PFVM_ACCEL_TARGET_H

#include "../base/base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Most levels of a target and most element types with a MAC rate. */
#define PFVM_ACCEL_MAX_LEVELS 8
#define PFVM_ACCEL_MAX_MACS 8
#define PFVM_ACCEL_NAME 32

typedef struct pfvm_accel_level {
    char name[PFVM_ACCEL_NAME];
    int64_t fanout;    /* instances per instance of the parent level */
    int64_t mem_bytes; /* local memory of one instance */
    double down;       /* bytes per cycle from the parent into one instance */
    double up;         /* bytes per cycle from one instance to the parent */
    int broadcast;     /* the parent can send one transfer to all children */
    int reduce;        /* the parent can receive children's sum/max at once */
} pfvm_accel_level;

typedef struct pfvm_accel_target {
    char name[PFVM_ACCEL_NAME];
    int nlevels;
    pfvm_accel_level levels[PFVM_ACCEL_MAX_LEVELS];
    int simd; /* elements per SIMD instruction of a PE */
    int nmacs;
    pfvm_dtype mac_dtype[PFVM_ACCEL_MAX_MACS];
    double macs[PFVM_ACCEL_MAX_MACS]; /* multiply-accumulates per cycle per PE */
} pfvm_accel_target;

/* Parses a target from text (NUL-terminated); `source` names it in errors
 * ("FILE:LINE: ..."). Returns PFVM_OK or PFVM_ERR_PARSE / PFVM_ERR_INVALID. */
PFVM_API pfvm_code pfvm_accel_target_parse(const char *text, const char *source, pfvm_accel_target *t,
                                           pfvm_status *st);
#ifndef PFVM_NO_STDIO
/* Reads and parses a target file. */
PFVM_API pfvm_code pfvm_accel_target_load(const char *path, pfvm_accel_target *t, pfvm_status *st);
#endif
/* Writes t in the text format into buf (at most size bytes, NUL-terminated)
 * and returns the length it needs, like snprintf. */
PFVM_API size_t pfvm_accel_target_format(const pfvm_accel_target *t, char *buf, size_t size);
/* Index of a level by name, or -1. */
PFVM_API int pfvm_accel_target_level(const pfvm_accel_target *t, const char *name);
/* Number of PEs (the product of all fan-outs). */
PFVM_API int64_t pfvm_accel_target_pes(const pfvm_accel_target *t);
/* Instances of level k in the whole machine (product of fan-outs 0..k). */
PFVM_API int64_t pfvm_accel_target_instances(const pfvm_accel_target *t, int level);
/* MACs per cycle of one PE for dtype (0 when the target has no rate for it). */
PFVM_API double pfvm_accel_target_macs(const pfvm_accel_target *t, pfvm_dtype dtype);

#ifdef __cplusplus
}
#endif

#endif
