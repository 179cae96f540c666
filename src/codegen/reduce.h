/* reduce.h - a reduce kernel's part function (reduce.c); its plan is
 * reduce_plan.h's. */
#ifndef KF_CG_REDUCE_H
#define KF_CG_REDUCE_H

#include "codegen/cg_internal.h"

/* Emits the part function once part->launch_threads is known. */
kf_status cg_emit_reduce(cg_emit_args *a);

#endif
