/* buffers.h - placing a plan's memory values (buffers.c). */
#ifndef KF_FUSER_BUFFERS_H
#define KF_FUSER_BUFFERS_H

#include <stddef.h>

#include "fuser/plan.h"

/* Places memory values: inputs, outputs, and the shared workspace. */
kf_status fuse_buffers(fuse_plan *plan, char *err, size_t errsize);

#endif
