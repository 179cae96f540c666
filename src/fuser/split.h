/* split.h - occupancy splits a plan is built with (split.c). */
#ifndef KF_FUSER_SPLIT_H
#define KF_FUSER_SPLIT_H

#include <stddef.h>

#include "fuser/legal.h"

/* Copies opt->splits into the plan (plan->options.splits becomes the
 * plan's); checks the node indices. */
kf_status fuse_splits_adopt(fuse_plan *plan, char *err, size_t errsize);
void fuse_splits_free(fuse_plan *plan);
/* Part of the predicate: true (refused, rule "occupancy-split") when two
 * members of the set (marked in lc->members) belong to one split. */
bool fuse_split_refuses(fuse_legal_ctx *lc, const fuse_set *set, fuse_shape_info *info);
/* One "occupancy-split" decision per split: the numbers and the kernels
 * that now hold its nodes. */
void fuse_splits_log(fuse_plan *plan);

#endif
