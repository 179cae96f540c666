/* occ_record.h - occupancy measurements in the disk cache (occ_record.c). */
#ifndef KF_RUNTIME_OCC_RECORD_H
#define KF_RUNTIME_OCC_RECORD_H

#include <stdbool.h>

#include "fuser/occ_model.h"
#include "kfuse.h"

/* The measurement record kept in the disk cache for a kernel's source and
 * arch; false when there is none or it is not sane (then measure again). */
bool rt_occ_record_get(kf_ctx *ctx, const char *source, const char *arch, fuse_occ_record *rec);
/* Keeps rec for (source, arch); a failure to write is not an error (the
 * next process measures again). */
void rt_occ_record_put(kf_ctx *ctx, const char *source, const char *arch,
                       const fuse_occ_record *rec);

#endif
