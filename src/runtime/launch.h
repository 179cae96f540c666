/* launch.h - a run of a loaded plan: checking the tensors, binding them,
 * launching in plain mode (launch.c). */
#ifndef KF_RUNTIME_LAUNCH_H
#define KF_RUNTIME_LAUNCH_H

#include "runtime/rt.h"

/* What kf_plan_run and kf_plan_run_ptrs do (kfuse.h), for the plan whose
 * runtime part is rp (pipeline/run.c hands it). A run of a plan not loaded
 * yet calls rp->load. */
kf_status rt_plan_run(rt_plan *rp, const kf_tensor *inputs, int n_inputs, const kf_tensor *outputs,
                      int n_outputs, void *stream);
kf_status rt_plan_run_ptrs(rt_plan *rp, void *const *inputs, int n_inputs, void *const *outputs,
                           int n_outputs, void *stream);

/* Checks every tensor of a run (counts, dtypes, shapes, NULL, alignment,
 * overlaps) and, once per new address, that it is device memory of the
 * plan's GPU (cuPointerGetAttribute). */
kf_status rt_validate(rt_plan *plan, rt_state *rt, const kf_tensor *in, int n_in,
                      const kf_tensor *out, int n_out);
/* The same; ask_driver false skips the pointer check (during a capture). */
kf_status rt_validate_ex(rt_plan *plan, rt_state *rt, const kf_tensor *in, int n_in,
                         const kf_tensor *out, int n_out, bool ask_driver);
/* Binds the parameters of every launch to these tensors (and encodes its
 * tensor maps, or takes its form without them for misaligned operands,
 * loading it unless stream is capturing: fallback.c; an error is on the
 * plan). */
kf_status rt_bind_args(rt_plan *plan, const kf_tensor *in, const kf_tensor *out, CUstream stream);
kf_status rt_run_plain(rt_plan *plan, CUstream stream);
/* Launch i on stream. With plain (plain mode's order: each launch after the
 * kernel ahead of it in the stream), a launch marked rt_launch.pdl may
 * begin while that kernel drains (its blocks wait in kf_grid_dep_sync). */
kf_status rt_launch_one(rt_plan *plan, int i, CUstream stream, bool plain);
/* The cuLaunchKernelEx configuration of launch l on stream s with
 * programmatic stream serialization (attr is the one attribute cfg points
 * to): what plain mode launches, and what bench_host times bare. */
void rt_pdl_config(const rt_launch *l, CUstream s, CUlaunchConfig *cfg, CUlaunchAttribute *attr);

#endif
