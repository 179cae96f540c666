/* recompute.h - the row kernel's recompute cost (recompute.c). */
#ifndef KF_FUSER_RECOMPUTE_H
#define KF_FUSER_RECOMPUTE_H

#include <stdint.h>

#include "fuser/legal.h"

/* The row kernel's recompute cost: the distinct non-reduction members that
 * each of its passes (one per reduction, one for the outputs) computes per
 * element, summed over the passes (docs/fusion.md, rule "recompute-limit").
 * Counting stops once it exceeds budget; the work is O(budget + set->n). */
int64_t fuse_row_evals(fuse_legal_ctx *lc, const fuse_set *set, int64_t budget);

#endif
