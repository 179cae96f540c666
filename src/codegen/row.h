/* row.h - a row kernel's part function (row.c); its plan is row_plan.h's. */
#ifndef KF_CG_ROW_H
#define KF_CG_ROW_H

#include "codegen/cg_internal.h"

/* Emits the part function once part->launch_threads is known. */
kf_status cg_emit_row(cg_emit_args *a);

#endif
