/* flash90.h - the part function of an attention kernel on Hopper
 * (flash90.c): templates/attention_sm90.cu, wgmma fed by TMA through a
 * ring of shared-memory stages, warp-specialized. */
#ifndef KF_CG_FLASH90_H
#define KF_CG_FLASH90_H

#include <stddef.h>

#include "codegen/cg_internal.h"

/* Whether the sm_90 kernel takes the attention part: the target is sm_90
 * and KFUSE_ATTN90 is not 0; head dim 64 or 128; q, k and v each read as
 * whole rows of a stored [heads, rows, D] tensor (layout ops that keep
 * the last two axes: batch transposes, broadcasts and reshapes of the
 * leading axes); every coordinate fits an int; the grid one launch; the
 * shared memory the target's. false, and on sm_90 the reason in why
 * (empty on other targets, where the question does not arise). */
bool cg_flash90_fits(const cg_emit_args *a, char *why, size_t size);
/* Plans it: 384 threads, a block per 128 queries of a head, the shared
 * memory, three 3-D tensor maps (q, k, v). */
kf_status cg_plan_flash90(cg_emit_args *a);
/* Emits the planned part. */
kf_status cg_emit_flash90(cg_emit_args *a);

#endif
