/* accel layout: how a tensor's elements are spread over a target's PEs.
 *
 * Each axis of the tensor is a mixed-radix number whose digits, outermost
 * first, are factors; every factor is placed on a level of the target (its
 * digit picks the instance among the level's fan-out) or kept in the PE's
 * local memory. Block and cyclic distributions are the two orders of the
 * same factors: 12 elements over a level of 4 PEs are `pe:4*local:3` in
 * blocks ([0 1 2 | 3 4 5 | ...]) and `local:3*pe:4` cyclically
 * ([0 4 8 | 1 5 9 | ...]). Several factors on one level, from one axis or
 * several, form that level's coordinate as a mixed-radix number in the
 * order they appear (axes in order, outermost factor first); the local
 * factors, in the same order, give the offset of the element in the PE's
 * block (in elements). An axis whose factors multiply to more than its size
 * is padded (the extra positions hold nothing).
 *
 * A level whose factors use fewer instances than its fan-out leaves the
 * rest idle, unless the layout replicates over it: then instance d holds
 * the same data as instance d mod (the product of the level's factors).
 *
 * Text notation (the README has the grammar): axes separated by ", ",
 * factors by "*", each factor LEVEL:N or local:N, then optionally
 * " | rep LEVEL..." listing the replicated levels; a scalar is "-".
 * Example, shape (4, 6) with both axes split by 2 over the 4 PEs of a
 * group: `pe:2*local:2, pe:2*local:3`. */
#ifndef PFVM_ACCEL_LAYOUT_H
#define PFVM_ACCEL_LAYOUT_H

#include "target.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The place of a factor kept in the PE's local memory. */
#define PFVM_ACCEL_LOCAL (-1)
/* Most factors per axis. */
#define PFVM_ACCEL_MAX_FACTORS 6

typedef struct pfvm_accel_factor {
    int level;    /* index of a target level, or PFVM_ACCEL_LOCAL */
    int64_t size; /* radix of this digit of the axis */
} pfvm_accel_factor;

typedef struct pfvm_accel_layout {
    int rank;
    int64_t dims[PFVM_MAX_RANK];
    int nfactors[PFVM_MAX_RANK];
    pfvm_accel_factor factors[PFVM_MAX_RANK][PFVM_ACCEL_MAX_FACTORS]; /* outermost first */
    uint32_t replicate; /* bit k: copies over the unused instances of level k */
} pfvm_accel_layout;

/* Parses the notation for a tensor of the given shape on target t. Errors
 * (PFVM_ERR_PARSE, PFVM_ERR_INVALID) name the offending factor. */
PFVM_API pfvm_code pfvm_accel_layout_parse(const char *text, const pfvm_accel_target *t, int rank,
                                           const int64_t *dims, pfvm_accel_layout *l, pfvm_status *st);
/* Writes the notation into buf (snprintf-like; returns the length needed).
 * pfvm_accel_layout_parse of the result gives the same layout. */
PFVM_API size_t pfvm_accel_layout_format(const pfvm_accel_layout *l, const pfvm_accel_target *t, char *buf,
                                         size_t size);
/* Checks a layout built by hand (factor products, levels, fan-outs). */
PFVM_API pfvm_code pfvm_accel_layout_check(const pfvm_accel_layout *l, const pfvm_accel_target *t,
                                           pfvm_status *st);
/* Elements of the tensor held in each PE (padding included). */
PFVM_API int64_t pfvm_accel_layout_local_elems(const pfvm_accel_layout *l);
/* Instances of level k that hold distinct data (product of its factors). */
PFVM_API int64_t pfvm_accel_layout_spread(const pfvm_accel_layout *l, int level);
/* Element -> the PE holding its primary copy (coords: one digit per level,
 * root first) and its offset there (in elements). */
PFVM_API void pfvm_accel_layout_locate(const pfvm_accel_layout *l, const pfvm_accel_target *t,
                                       const int64_t *index, int64_t *coords, int64_t *offset);
/* (PE coords, offset) -> element index; returns 0 when that place holds
 * nothing (an idle PE, padding, an offset past the block), else 1. */
PFVM_API int pfvm_accel_layout_element(const pfvm_accel_layout *l, const pfvm_accel_target *t,
                                       const int64_t *coords, int64_t offset, int64_t *index);
/* PE coordinates <-> the PE's number (coordinates as a mixed-radix number,
 * root level outermost). */
PFVM_API int64_t pfvm_accel_pe_number(const pfvm_accel_target *t, const int64_t *coords);
PFVM_API void pfvm_accel_pe_coords(const pfvm_accel_target *t, int64_t pe, int64_t *coords);

/* One contiguous run of a layout conversion: count elements from src_pe's
 * block at src_off to dst_pe's block at dst_off. lca is the deepest level
 * whose instance contains both PEs: the data goes up the links of the
 * levels below lca on the source side and down them on the destination
 * side (lca == the PE level: a copy inside one PE). */
typedef struct pfvm_accel_move {
    int64_t src_pe, src_off, dst_pe, dst_off, count;
    int lca;
} pfvm_accel_move;

/* The data-movement plan that turns a tensor in layout src into layout dst
 * (same shape): every element of every copy of dst is fed from the
 * nearest copy in src; runs are merged (the destination is a new buffer,
 * so an element that stays in its PE at the same offset is still a local
 * copy). Sets *moves to *count moves in destination order (NULL and 0 on
 * error, or when dst holds nothing); free them with pfvm_accel_moves_free.
 * This is what the emitter turns into `copy` instructions. */
PFVM_API pfvm_code pfvm_accel_moves(const pfvm_accel_target *t, const pfvm_accel_layout *src,
                                    const pfvm_accel_layout *dst, pfvm_accel_move **moves, size_t *count,
                                    pfvm_status *st);
PFVM_API void pfvm_accel_moves_free(pfvm_accel_move *moves);
/* Bytes over each level's link for count moves of elem_bytes elements (up:
 * towards the parent, down: from it; summed over the level's instances;
 * index = level; t->nlevels entries each). */
PFVM_API void pfvm_accel_moves_traffic(const pfvm_accel_target *t, const pfvm_accel_move *moves, size_t count,
                                       size_t elem_bytes, double *up, double *down);

#ifdef __cplusplus
}
#endif

#endif
