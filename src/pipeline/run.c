/* run.c - the run entry points of the public API: each hands the plan's
 * runtime part, its inputs refreshed from the plan, to the runtime. */
#include "pipeline/run.h"

#include <string.h>

#include "pipeline/fallback_emit.h"
#include "pipeline/pipeline.h"
#include "runtime/bench.h"
#include "runtime/dlpack.h"
#include "runtime/launch.h"
#include "runtime/profile.h"
#include "runtime/rt.h"
#include "runtime/rt_plan.h"

/* The load driver a run of a plan not loaded yet calls from the runtime,
 * which knows the plan only as its owner. */
static kf_status load_owner(void *owner) {
  return kf_plan_load(owner);
}

/* The same for a launch's fallback form (runtime/fallback.c). */
static kf_status fallback_owner(void *owner, int launch) {
  return pl_fallback_emit(owner, launch);
}

rt_plan *pl_rt_plan(kf_plan *plan) {
  if (!plan) return NULL;
  if (!plan->rt) plan->rt = rt_plan_new(plan->options.mode);
  if (!plan->rt) {
    pl_plan_error(plan, KF_ERR_OUT_OF_MEMORY, "out of memory");
    return NULL;
  }
  rt_plan *rp = plan->rt;
  rp->ctx = plan->ctx;
  rp->graph = plan->graph;
  rp->fuse = plan->fuse;
  rp->code = plan->code;
  rp->options = &plan->options;
  rp->knobs = plan->knobs;
  rp->errmsg = plan->errmsg;
  rp->errsize = sizeof plan->errmsg;
  rp->load = load_owner;
  rp->fallback = fallback_owner;
  rp->owner = plan;
  return rp;
}

/* What an entry point returns when pl_rt_plan gave it nothing. */
static kf_status no_rt(const kf_plan *plan) {
  return plan ? KF_ERR_OUT_OF_MEMORY : KF_ERR_INVALID_ARG;
}

kf_status kf_plan_run(kf_plan *plan, const kf_tensor *inputs, int n_inputs,
                      const kf_tensor *outputs, int n_outputs, void *stream) {
  rt_plan *rp = pl_rt_plan(plan);
  return rp ? rt_plan_run(rp, inputs, n_inputs, outputs, n_outputs, stream) : no_rt(plan);
}

kf_status kf_plan_run_ptrs(kf_plan *plan, void *const *inputs, int n_inputs, void *const *outputs,
                           int n_outputs, void *stream) {
  rt_plan *rp = pl_rt_plan(plan);
  return rp ? rt_plan_run_ptrs(rp, inputs, n_inputs, outputs, n_outputs, stream) : no_rt(plan);
}

kf_status kf_plan_run_dlpack(kf_plan *plan, struct DLManagedTensorVersioned *const *inputs,
                             int n_inputs, struct DLManagedTensorVersioned *const *outputs,
                             int n_outputs, void *stream) {
  rt_plan *rp = pl_rt_plan(plan);
  return rp ? rt_plan_run_dlpack(rp, inputs, n_inputs, outputs, n_outputs, stream) : no_rt(plan);
}

kf_status kf_plan_run_dlpack_legacy(kf_plan *plan, struct DLManagedTensor *const *inputs,
                                    int n_inputs, struct DLManagedTensor *const *outputs,
                                    int n_outputs, void *stream) {
  rt_plan *rp = pl_rt_plan(plan);
  return rp ? rt_plan_run_dlpack_legacy(rp, inputs, n_inputs, outputs, n_outputs, stream)
            : no_rt(plan);
}

kf_status kf_plan_profile(kf_plan *plan, const kf_tensor *inputs, int n_inputs,
                          const kf_tensor *outputs, int n_outputs, void *stream, kf_profile *out) {
  rt_plan *rp = pl_rt_plan(plan);
  if (!rp && out) memset(out, 0, sizeof *out);
  return rp ? rt_plan_profile(rp, inputs, n_inputs, outputs, n_outputs, stream, out) : no_rt(plan);
}

kf_status kf_plan_benchmark(kf_plan *plan, const kf_tensor *inputs, int n_inputs,
                            const kf_tensor *outputs, int n_outputs, void *stream,
                            const kf_bench_options *opt, kf_bench_result *out) {
  rt_plan *rp = pl_rt_plan(plan);
  return rp ? rt_plan_benchmark(rp, inputs, n_inputs, outputs, n_outputs, stream, opt, out)
            : no_rt(plan);
}

kf_status kf_plan_set_workspace(kf_plan *plan, void *dptr, size_t bytes) {
  if (!plan || !plan->fuse) return KF_ERR_INVALID_ARG;
  rt_plan *rp = pl_rt_plan(plan);
  return rp ? rt_plan_set_workspace(rp, dptr, bytes) : no_rt(plan);
}

kf_status kf_plan_set_mode(kf_plan *plan, kf_run_mode mode) {
  rt_plan *rp = pl_rt_plan(plan);
  kf_status st = rp ? rt_plan_set_mode(rp, mode) : no_rt(plan);
  if (st == KF_OK) plan->options.mode = mode; /* kf_plan_describe shows it */
  return st;
}
