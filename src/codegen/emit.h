/* emit.h - code generation's front door (emit.c): one launch of a plan as one
 * CUDA translation unit, and one part of any kind within it. */
#ifndef KF_CG_EMIT_H
#define KF_CG_EMIT_H

#include <stddef.h>

#include "codegen/cg_internal.h"
#include "codegen/codegen.h"

/* Emits one part of any kind (emit.c). */
kf_status cg_emit_part(cg_emit_args *a);
/* Generates the launch `launch` of `plan`. out is the caller's; release its
 * contents with cg_launch_src_free. Errors: KF_ERR_UNSUPPORTED (a kernel
 * shape codegen cannot handle, message in err), KF_ERR_OUT_OF_MEMORY. */
kf_status cg_emit_launch(const kf_graph *g, const fuse_plan *plan, int launch,
                         const cg_target *target, cg_launch_src *out, char *err, size_t errsize);
/* Frees what cg_emit_launch put in src (not src itself). NULL: no-op. */
void cg_launch_src_free(cg_launch_src *src);

#endif
