/* part.h - what every kind of part shares (part.c): parameters, index type,
 * grid and the call of a part function. */
#ifndef KF_CG_PART_H
#define KF_CG_PART_H

#include "codegen/cg_internal.h"

/* The part's pointer parameters: inputs then outputs, in ascending value
 * order (malloc'd into part). false on OOM. */
bool cg_part_params(cg_part *part);
/* "const float *__restrict__ p3, kf_bf16 *__restrict__ p7" into out. */
void cg_param_decls(const kf_graph *g, const cg_part *part, cg_buf *out);
/* "p3, p7": the part's parameter names, for calls. */
void cg_param_args(const cg_part *part, cg_buf *out);
/* Whether two shapes (rank, dims) are the same. */
bool cg_same_shape(int ra, const int64_t *a, int rb, const int64_t *b);
/* Index type decision: 64-bit when max_offset does not fit in int32. */
const char *cg_index_type(int64_t max_offset, bool *index64);
/* A part whose body takes one block per unit of work (reduce, matmul):
 * vblocks = want, blocks = want clamped to max_blocks. */
void cg_part_grid(cg_part *p, int64_t want);
/* A part whose body strides over its work by its own block count
 * (pointwise, row): blocks = want clamped to max_blocks, no loop. */
void cg_part_grid_stride(cg_part *p, int64_t want);
/* The type of a part function's block parameter: "unsigned", or "long
 * long" when the part loops (so generated code for shapes that fit one
 * grid stays as it was). */
const char *cg_part_bid_type(const cg_part *p);
/* Appends the call of part p for block expression bid ("blockIdx.x - 4u")
 * with arguments args: "fn(bid, args);", or, when p->vblocks > p->blocks,
 * a loop over bid, bid + blocks, ... below vblocks with a barrier between
 * rounds (the body reuses its shared memory). indent prefixes the lines of
 * the loop after its first. */
void cg_part_call(cg_buf *out, const cg_part *p, const char *bid, const char *args,
                  const char *indent);

#endif
