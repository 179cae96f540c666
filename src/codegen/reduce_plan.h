/* reduce_plan.h - the shape of a reduce kernel (reduce_plan.c): what
 * cg_plan_reduce decides, and the iteration space the emitters of reduce.c
 * share. */
#ifndef KF_CG_REDUCE_PLAN_H
#define KF_CG_REDUCE_PLAN_H

#include <stdbool.h>
#include <stdint.h>

#include "codegen/cg_internal.h"

typedef struct red_shape {
  int64_t outer, red, inner;
  int a, b; /* reduced dims [a, b) when they merge */
  /* Axes that do not merge (sum over axes 0 and 2 of [A,B,C]): each dim's
   * variable, 0 outer (kept dims before the last reduced one), 1 reduced,
   * 2 inner (kept dims after it), so that outputs stay o * inner + n. */
  bool strided;
  int grp[KF_MAX_RANK];
  /* inner == 1: elements k .. k + run - 1 are consecutive in memory for
   * k % run == 0 (the trailing reduced dims' product) */
  int64_t run;
  const ir_node *x; /* the reduced operand, whose shape full-size values share */
} red_shape;

/* A reduction's iteration space outer x red x inner. Reduced dims that
 * merge keep the contiguous-group form; others get a per-dim assignment
 * (cg_ctx_assign) with the same outer, red and inner. */
void cg_reduce_merge(const ir_node *n, const ir_node *x, red_shape *rs);
/* The kernel's space, from its reductions (legal.c gives them one). */
kf_status cg_reduce_shape(cg_emit_args *a, red_shape *rs);

/* The plan of a contiguous reduction (inner == 1), from the shape alone so
 * that a fused kernel and the unfused reduction of the same operand sum in
 * the same order (every input dtype, prologue and alignment gives the same
 * V, threads, split and chunk): V elements per thread step (8, halved until
 * it divides the run of consecutive elements), a block of 32..256 threads
 * per output (one step each at least), and, when the outputs are fewer than
 * 4096 threads' worth of blocks per SM (about 2 to 4 waves of resident
 * blocks: many blocks balance the SMs where one wave of exactly as many
 * blocks as fit would depend on the registers), the reduced axis split over
 * up to 2048 blocks per output of at least 4 steps per thread, each chunk
 * a multiple of V (the last block's fold then reads at most 8 partials per
 * thread). */
typedef struct rows_plan {
  int v, threads;
  int64_t split, chunk;
} rows_plan;
void cg_reduce_rows(const cg_emit_args *a, const red_shape *rs, rows_plan *rp);

/* The shape of a strided reduction's blocks: TX x TY threads (256), each
 * owning W adjacent outputs (16 bytes of the narrowest full-size input),
 * tiles of TX * W outputs, and the reduced axis split over SPLIT blocks per
 * tile when the tiles alone would not fill the GPU (8 blocks of 256 per SM),
 * keeping at least 8 iterations per thread. The fuser's horizontal packing
 * mirrors the scratch size (src/fuser/horizontal.c cols_scratch): change
 * both together. */
typedef struct cols_plan {
  int w, tx, ty;
  int64_t nt, split, chunk;
} cols_plan;
void cg_reduce_cols(const cg_emit_args *a, const red_shape *rs, cols_plan *cp);

/* Chooses threads/blocks (part->threads, part->blocks) without emitting. */
kf_status cg_plan_reduce(cg_emit_args *a);

#endif
