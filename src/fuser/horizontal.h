/* horizontal.h - ordering kernels and packing them into launches (horizontal.c). */
#ifndef KF_FUSER_HORIZONTAL_H
#define KF_FUSER_HORIZONTAL_H

#include <stddef.h>

#include "fuser/plan.h"

/* Orders the kernels, packs them into launches, renumbers them in launch
 * order. */
kf_status fuse_launches(fuse_plan *plan, char *err, size_t errsize);

#endif
