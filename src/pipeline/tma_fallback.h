/* tma_fallback.h - the form of one launch without tensor maps, generated,
 * compiled and handed to the runtime when a run brings an operand the
 * sm_90 kernels' copy engine cannot read (tma_fallback.c). */
#ifndef KF_PIPELINE_TMA_FALLBACK_H
#define KF_PIPELINE_TMA_FALLBACK_H

#include "pipeline/pipeline.h"

/* Generates launch L of plan for the plan's own target with the sm_90
 * matmul and attention kernels off (KFUSE_GEMM90=0 and KFUSE_ATTN90=0 for
 * this launch only: the mma.sync kernels, which read misaligned operands
 * element by element), compiles it through the caches and loads it as
 * the launch's alternate (rt_fallback_load). The runtime calls it through
 * rt_plan.fallback during a run; the plan is loaded. Errors on the plan. */
kf_status pl_tma_fallback(kf_plan *plan, int L);

#endif
