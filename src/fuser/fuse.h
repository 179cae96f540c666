/* fuse.h - the fusion pass's front door (fuse.c): options, building a
 * plan, freeing it. The plan's structs are plan.h's. */
#ifndef KF_FUSER_FUSE_H
#define KF_FUSER_FUSE_H

#include <stddef.h>

#include "fuser/plan.h"

/* Defaults, then KFUSE_NO_FUSION / KFUSE_NO_HORIZONTAL from the environment. */
void fuse_options_default(fuse_options *opt);
/* Plans a valid graph with at least one output. On failure returns a status
 * and writes a message to err (size errsize). The caller frees *out with
 * fuse_plan_free. */
kf_status fuse_plan_build(const kf_graph *g, const fuse_options *opt, fuse_plan **out, char *err,
                          size_t errsize);
void fuse_plan_free(fuse_plan *plan);

#endif
