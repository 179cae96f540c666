/* vertical.h - vertical fusion: grouping nodes into kernels (vertical.c). */
#ifndef KF_FUSER_VERTICAL_H
#define KF_FUSER_VERTICAL_H

#include <stddef.h>

#include "fuser/plan.h"

/* Vertical fusion: fills the groups as kernels (nodes, recomputed flags),
 * sets plan->kernel_of and plan->n_dead. Kernels are not yet ordered. */
kf_status fuse_vertical(fuse_plan *plan, char *err, size_t errsize);

#endif
