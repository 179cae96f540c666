/* flash.h - the part function of an attention kernel (flash.c): the flash
 * template templates/attention.cu filled with the graph's score modifier
 * chain and its operands' row addressing. */
#ifndef KF_CG_FLASH_H
#define KF_CG_FLASH_H

#include "codegen/cg_internal.h"
#include "codegen/expr.h"

/* Plans an FK_ATTENTION part: the sm_90 kernel where cg_flash90_fits
 * takes it (flash90.c), else 128 threads, a block per 64 queries of a
 * head, its shared memory, and on sm_90 the reason in the part's
 * decisions. KF_ERR_UNSUPPORTED before sm_80 (mma.sync of
 * bf16), above the target's shared memory, or not alone in its launch. */
kf_status cg_plan_flash(cg_emit_args *a);
/* Emits the planned part: the modifier and row-offset helpers, then the
 * template. */
kf_status cg_emit_flash(cg_emit_args *a);

#endif
