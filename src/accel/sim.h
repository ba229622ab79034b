/* accel simulator: runs an accel program (README.md, "accel programs") on
 * per-PE memories of a target, counts cycles by the target's rates, and
 * refuses programs that overflow a PE's memory or read a place nothing has
 * written. PE memories and the root level's (DRAM: `dinput`, `load`,
 * `store`...) are modelled, not those of the levels between; every value
 * is float32.
 *
 * Cycles: the program is a sequence of phases separated by `barrier`
 * (and its end). Within a phase, transfers and compute overlap: the phase
 * takes the largest of (bytes over one link instance / its bandwidth, in
 * each direction) and (one PE's compute cycles: ceil(elements / simd) for
 * a vector instruction, ceil(M*N*K / float MACs per cycle) for gemm).
 * A transfer from the host into the PEs sends an element once over a link
 * whose instance's children links can broadcast (README.md has the rest). */
#ifndef PFVM_ACCEL_SIM_H
#define PFVM_ACCEL_SIM_H

#include "../ir/ir.h"
#include "layout.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pfvm_accel_sim pfvm_accel_sim;

/* Finds a named weight (a `weight NAME ...` line) for the simulator. */
typedef const pfvm_tensor *(*pfvm_accel_weight_fn)(void *user, const char *name);

/* A simulator for target t (copied), with every PE memory unwritten. */
PFVM_API pfvm_accel_sim *pfvm_accel_sim_new(const pfvm_accel_target *t, pfvm_status *st);
PFVM_API void pfvm_accel_sim_free(pfvm_accel_sim *s);
/* Runs a program (text) on inputs (`input K` reads inputs[K]); weights come
 * from lookup. Errors name the program's line. The outputs stay in the
 * simulator until the next run or free. */
PFVM_API pfvm_code pfvm_accel_sim_run(pfvm_accel_sim *s, const char *program, const pfvm_tensor *const *inputs,
                                      int ninputs, pfvm_accel_weight_fn lookup, void *user, pfvm_status *st);
/* Output K of the last run (NULL if the program wrote none). */
PFVM_API const pfvm_tensor *pfvm_accel_sim_output(const pfvm_accel_sim *s, int k);
PFVM_API int pfvm_accel_sim_noutputs(const pfvm_accel_sim *s);
/* Cycles of the last run, and the part of them spent waiting on links. */
PFVM_API double pfvm_accel_sim_cycles(const pfvm_accel_sim *s);
PFVM_API double pfvm_accel_sim_transfer_cycles(const pfvm_accel_sim *s);
/* Phases of the last run (each ended by `barrier` or the program's end)
 * and the cycles of phase i. */
/* Highest byte of the root level's memory (DRAM) the last run touched. */
PFVM_API int64_t pfvm_accel_sim_dram_bytes(const pfvm_accel_sim *s);
PFVM_API int pfvm_accel_sim_phases(const pfvm_accel_sim *s);
PFVM_API double pfvm_accel_sim_phase_cycles(const pfvm_accel_sim *s, int i);

#ifdef __cplusplus
}
#endif

#endif
