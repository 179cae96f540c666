/* flash_decode.h - the part function of a decode attention kernel
 * (flash_decode.c): templates/attention_decode.cu, the keys of each group
 * of query heads split across the blocks of a cluster. */
#ifndef KF_CG_FLASH_DECODE_H
#define KF_CG_FLASH_DECODE_H

#include <stdbool.h>

#include "codegen/cg_internal.h"

/* Whether an FK_ATTENTION part runs as the decode kernel (few queries:
 * fuse_attn_decode_pick). The same answer for planning and emitting. */
bool cg_flash_decode_takes(const cg_emit_args *a);
/* Plans it: warps, the ring of k/v stages, the blocks a cluster splits the
 * keys over (sm_90; 1 before), its shared memory. KF_ERR_UNSUPPORTED before
 * sm_80 or above the target's shared memory. */
kf_status cg_plan_flash_decode(cg_emit_args *a);
/* Emits the planned part: row-offset helpers, the modifier, the template. */
kf_status cg_emit_flash_decode(cg_emit_args *a);

#endif
