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

#endif
