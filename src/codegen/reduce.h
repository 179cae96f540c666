/* reduce.h - a reduce kernel's part (reduce.c): its plan and its part
 * function. */
#ifndef KF_CG_REDUCE_H
#define KF_CG_REDUCE_H

#include "codegen/cg_internal.h"

/* Chooses threads/blocks (part->threads, part->blocks) without emitting. */
kf_status cg_plan_reduce(cg_emit_args *a);
/* Emits the part function once part->launch_threads is known. */
kf_status cg_emit_reduce(cg_emit_args *a);

#endif
