/* plan_target.h - the code generation target of a plan, built in one place for
 * kf_plan_source and kf_plan_compile, so that what is shown is what runs. */
#ifndef KF_PIPELINE_PLAN_TARGET_H
#define KF_PIPELINE_PLAN_TARGET_H

#include <stddef.h>

#include "codegen/codegen.h"
#include "pipeline/pipeline.h"

/* The target of `plan` for `arch` (NULL: the plan's options.arch, else the
 * current device's, else sm_90, with a warning when `warn`). The arch is
 * checked and normalized as NVRTC takes it (rt_nvrtc_arch) into
 * arch_out[size]. When the arch came from the device, the device's SM
 * count, threads per SM and shared memory apply; otherwise the arch's
 * documented defaults (cg_target_from_arch). grid_dep is options.pdl, the
 * knobs the plan's (plan->knobs). Errors: KF_ERR_INVALID_ARG (bad arch,
 * message on the plan, prefixed by `who`). Not thread-safe on one plan. */
kf_status pl_plan_target(kf_plan *plan, const char *arch, bool warn, const char *who,
                         cg_target *out, char *arch_out, size_t size);

/* Paired products (docs/matmul.md) for the fusion of `plan` aimed at
 * target t: fo->gemm_pair on where the sm_90 template takes them
 * (KFUSE_GEMM_PAIR and KFUSE_GEMM90 not 0, two products or more, an
 * sm_90 target), else off with the reason in fo->gemm_pair_off. t NULL:
 * the target as kf_plan_compile will resolve it (no warning, no error on
 * the plan), asked only of a graph with two products or more. */
void pl_gemm_pair(kf_plan *plan, const cg_target *t, fuse_options *fo);

/* Re-plans plan's fusion when its paired products do not suit target t
 * (pl_gemm_pair disagrees with the fusion's options of a template plan):
 * only a plan compiled for another arch than it was planned for. */
kf_status pl_gemm_pair_refit(kf_plan *plan, const cg_target *t);

#endif
