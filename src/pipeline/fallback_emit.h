/* fallback_emit.h - the form of one launch for operands its own path
 * cannot take (fallback_emit.c): generated, compiled and handed to the
 * runtime when a run brings an operand the sm_90 kernels' copy engine
 * cannot read, or one no cuBLASLt algorithm takes. */
#ifndef KF_PIPELINE_FALLBACK_EMIT_H
#define KF_PIPELINE_FALLBACK_EMIT_H

#include "pipeline/pipeline.h"

/* Generates launch L of plan for the plan's own target with the sm_90
 * matmul and attention kernels off (KFUSE_GEMM90=0 and KFUSE_ATTN90=0 for
 * this launch only) and, for a library call, as kfuse's template kernel:
 * the mma.sync or simple kernels, which read misaligned operands element
 * by element. Compiles it through the caches and loads it as the
 * launch's alternate (rt_fallback_load). The runtime calls it through
 * rt_plan.fallback during a run; the plan is loaded. Errors on the plan. */
kf_status pl_fallback_emit(kf_plan *plan, int L);

#endif
