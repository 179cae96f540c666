/* row_plan.h - the shape of a row kernel (row_plan.c): what cg_plan_row
 * (below) decides, and the predicates its emitters share. */
#ifndef KF_CG_ROW_PLAN_H
#define KF_CG_ROW_PLAN_H

#include "codegen/cg_internal.h"
#include "codegen/row_online.h"
#include "codegen/row_stage.h"

typedef struct row_info {
  int lanes;     /* W */
  int group;     /* threads per row */
  int rpb;       /* rows per block */
  bool hold;     /* full-row inputs held in registers (storage type) */
  bool cache;    /* reduction operands reused later kept in registers */
  bool fallback; /* the unaligned path: W = 1, looped, loops not unrolled */
  int split;     /* > 1: the row held by a cluster of this many blocks, each
                    holding cols / split columns (sm_90; row_split.cu) */
  row_stage st;  /* staged rows (row_stage.h): off by default */
  size_t room;   /* bytes per column left for values kept across phases */
} row_info;

/* Chooses a row part's threads and blocks without emitting (cg_plan_row
 * of the part kinds, emit.c). */
kf_status cg_plan_row(cg_emit_args *a);

/* The row kernel a's shape into *ri (cg_plan_row and cg_emit_row agree by
 * both calling it). */
void cg_row_choose(cg_emit_args *a, row_info *ri);

/* The number of elements of n. */
int64_t cg_row_numel(const ir_node *n);

/* Whether n is a reduction over more than one element. */
bool cg_row_is_reduce(const kf_graph *g, const ir_node *n);

/* The context of full-row value n of `cols` columns into c. */
void cg_row_ctx(const ir_node *n, int64_t cols, cg_ctx *c);

/* Bytes of dt's compute type: 8 for f64 and i64, 4 otherwise. */
size_t cg_row_compute_size(kf_dtype dt);

/* Whether reduction red's operand v is worth keeping in registers. */
bool cg_row_cache_worthy(const cg_emit_args *a, int32_t red, int32_t v);

/* The phase of the reduction at node position i (k->nodes index): paired
 * with the next one (when `pair`), *last set to the last position it takes. */
row_online_kind cg_row_phase_at(const cg_emit_args *a, bool pair, int i, int *last);

/* KFUSE_ROW_RECOMPUTE: the output phase computes held values again. */
bool cg_row_recompute(const core_knobs *k);

#endif
