/* kernels.h - finishing the kernels of a plan (kernels.c). */
#ifndef KF_FUSER_KERNELS_H
#define KF_FUSER_KERNELS_H

#include <stddef.h>

#include "fuser/plan.h"

/* Inputs, outputs, kind, iteration space, roles and costs of each kernel. */
kf_status fuse_finish_kernels(fuse_plan *plan, char *err, size_t errsize);

#endif
