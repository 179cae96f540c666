/* transpose.h - tiled transposes (transpose.c): whether a pointwise kernel
 * is one, its plan and its part function. */
#ifndef KF_CG_TRANSPOSE_H
#define KF_CG_TRANSPOSE_H

#include "codegen/cg_internal.h"

/* Tiled transposes (transpose.c): whether pointwise kernel k is one
 * (fuser/tile.h's rule), and its plan and part function. */
bool cg_transpose_tiled(const kf_graph *g, const fuse_kernel *k);
kf_status cg_plan_transpose(cg_emit_args *a);
kf_status cg_emit_transpose(cg_emit_args *a);

#endif
