/* few_rows.h - the kind rule for few long rows (few_rows.c). */
#ifndef KF_FUSER_FEW_ROWS_H
#define KF_FUSER_FEW_ROWS_H

#include <stdbool.h>
#include <stdint.h>

#include "fuser/plan.h"

/* Whether a row group without full-size dependents over shape (reduced
 * axes mask, a suffix) is planned as a reduce kernel: rows too few to fill
 * the GPU, long enough to split (docs/fusion.md, "Few long rows"). */
bool fuse_few_long_rows(const fuse_options *opt, int rank, const int64_t *shape, uint8_t mask);

#endif
