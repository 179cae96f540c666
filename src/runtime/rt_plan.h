/* rt_plan.h - a plan's loaded state: creating, loading, unloading, freeing,
 * the workspace and the run mode (rt_plan.c; the struct is rt.h's). */
#ifndef KF_RUNTIME_RT_PLAN_H
#define KF_RUNTIME_RT_PLAN_H

#include <stddef.h>

#include "runtime/rt.h"

/* A plan's runtime part, empty, running in `mode`; NULL on OOM. Its
 * inputs (ctx ... owner) are the caller's to fill. */
rt_plan *rt_plan_new(kf_run_mode mode);
/* Loads the given images (one per plan launch) into modules and functions,
 * measures occupancy, resolves parameter bindings, allocates the
 * workspace. Used by kf_plan_load with the compiler's images, and directly
 * by tests with fake ones. Errors recorded on the plan. */
kf_status rt_plan_load_images(rt_plan *plan, const rt_image *images, int n);
/* Loads one launch's image into l (module, function, bindings, tensor
 * maps, or the library call), measures its occupancy and sizes what
 * depends on it; the plan's launches, and a launch's fallback form
 * (fallback.c). rt is the plan's state, entered. Errors on the plan; what
 * l holds then is freed with the plan's launches. */
kf_status rt_plan_load_launch(rt_plan *plan, rt_state *rt, rt_launch *l, const rt_image *img);
/* Unloads modules, frees events, graph, workspace; keeps rt_plan. */
void rt_plan_unload(rt_plan *plan);
/* Releases a plan's runtime part (kf_plan_destroy); tolerates NULL. */
void rt_plan_free(rt_plan *rt);
/* What kf_plan_set_workspace and kf_plan_set_mode do (kfuse.h), for the
 * plan whose runtime part is rp (pipeline/run.c hands it). */
kf_status rt_plan_set_workspace(rt_plan *rp, void *dptr, size_t bytes);
kf_status rt_plan_set_mode(rt_plan *rp, kf_run_mode mode);

/* Allocates the workspace if kfuse owns it and it is missing (after an
 * earlier out-of-memory). */
kf_status rt_plan_ready_workspace(rt_plan *plan, rt_state *rt);

#endif
