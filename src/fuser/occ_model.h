/* occ_model.h - the occupancy feedback's policy: which measured kernels
 * to split, where, and whether a split pays (occ_model.c). The runtime
 * measures (fuse_occ numbers), the pipeline runs the loop, the fuser
 * decides here. */
#ifndef KF_FUSER_OCC_MODEL_H
#define KF_FUSER_OCC_MODEL_H

#include <stdbool.h>
#include <stddef.h>

#include "fuser/plan.h"

/* What the runtime measured for one kernel function. */
typedef struct fuse_occ {
  int regs, local_bytes, static_smem, dyn_smem;
  int block, blocks_per_sm;
  double occupancy; /* resident threads / max threads per SM, 0..1 */
} fuse_occ;

/* What one comparison measured (the runtime caches it with the kernels);
 * judged again with the current limit when read back, so changing the
 * limit needs no new measurement. */
typedef struct fuse_occ_record {
  fuse_occ fused, lowest; /* lowest: the part with the least occupancy */
  int n_parts;            /* 0: the parts could not be measured */
} fuse_occ_record;

/* A fused kernel that may be split. */
typedef struct fuse_occ_cand {
  int launch;
  const fuse_kernel *k;
  fuse_occ_record rec;
  bool known; /* rec.lowest came from the cache */
  bool split;
  double ratio; /* bytes of the plan with this kernel split / bytes now */
  int32_t cut;  /* the split in two of its home nodes (fuse_split.cut) */
  char why[160];
} fuse_occ_cand;

/* Whether a fused kernel should be split: it spills, or its occupancy is
 * more than `drop` (a fraction) below the lowest of its parts'. parts may
 * be NULL (n_parts 0): only the spill rule applies. Writes the reason with
 * the numbers to why. */
bool fuse_occ_decide(const fuse_occ *fused, const fuse_occ *parts, int n_parts, double drop,
                     char *why, size_t size);
/* Only a kernel that spills or sits below (1 - drop) can be more than drop
 * below parts whose occupancy is at most 100%: the others are kept without
 * compiling anything. */
bool fuse_occ_suspicious(const fuse_occ *o, double drop);
/* The one kernel of a launch when a split can change it (at least two
 * nodes computed at home), else NULL. */
const fuse_kernel *fuse_occ_splittable(const fuse_plan *fp, int launch);
/* Whether parts could be more resident than kernel k measured as o:
 * false, with the reason in why, for a matmul kernel that does not spill
 * and is resident at least design_blocks times per SM (design_blocks > 0:
 * the residency its template asks of ptxas). The part that computes the
 * product runs the same template, with the same tile memory and register
 * cap, so it is resident no more than the fused kernel; a split would only
 * add a pass over the product, and measuring it compiles every part. */
bool fuse_occ_split_can_help(const fuse_kernel *k, const fuse_occ *o, int design_blocks, char *why,
                             size_t size);
/* Sets c->cut to the cut of the candidate's home nodes that leaves the
 * plan the fewest bytes to move, and c->ratio to those bytes over the
 * plan's now (1e9 when no split plans). */
void fuse_occ_choose_split(const kf_graph *g, const fuse_plan *fp, fuse_occ_cand *c);
/* Whether the bandwidth model predicts the split to be faster, given the
 * parts' numbers; says why not. */
bool fuse_occ_split_pays(const fuse_occ_cand *c, const fuse_occ *parts, char *why, size_t size);
/* c->why: the candidate's numbers, for the logs and the split's record. */
void fuse_occ_describe(fuse_occ_cand *c, const char *entry, double drop);
/* fp's graph planned again with fp's splits plus one per candidate (only
 * those with c->split when only_split). */
kf_status fuse_occ_replan(const kf_graph *g, const fuse_plan *fp, const fuse_occ_cand *c, int nc,
                          bool only_split, fuse_plan **out, char *err, size_t errsize);
/* The decision log's "occupancy" lines: one per launch measured, after
 * dropping those of an earlier load. */
void fuse_occ_forget(fuse_plan *fp);
void fuse_occ_note(fuse_plan *fp, int launch, bool split, const char *text);

#endif
