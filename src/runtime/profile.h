/* profile.h - per-launch timing of one run (profile.c). */
#ifndef KF_RUNTIME_PROFILE_H
#define KF_RUNTIME_PROFILE_H

#include "runtime/rt.h"

/* What kf_plan_profile does (kfuse.h), for the plan whose runtime part is rp
 * (the pipeline's entry point, pipeline/run.c, hands it that part). */
kf_status rt_plan_profile(rt_plan *rp, const kf_tensor *inputs, int n_inputs,
                          const kf_tensor *outputs, int n_outputs, void *stream, kf_profile *out);

#endif
