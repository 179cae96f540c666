/* dlpack.h - runs on DLPack tensors (dlpack.c). */
#ifndef KF_RUNTIME_DLPACK_H
#define KF_RUNTIME_DLPACK_H

#include "runtime/rt.h"

/* What kf_plan_run_dlpack and kf_plan_run_dlpack_legacy do (kfuse.h), for
 * the plan whose runtime part is rp (pipeline/run.c hands it). */
kf_status rt_plan_run_dlpack(rt_plan *rp, struct DLManagedTensorVersioned *const *inputs,
                             int n_inputs, struct DLManagedTensorVersioned *const *outputs,
                             int n_outputs, void *stream);
kf_status rt_plan_run_dlpack_legacy(rt_plan *rp, struct DLManagedTensor *const *inputs,
                                    int n_inputs, struct DLManagedTensor *const *outputs,
                                    int n_outputs, void *stream);

#endif
