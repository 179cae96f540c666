/* rt_state.h - a context's runtime state: driver, device, CUDA context,
 * stream pool, the lost flag (rt_state.c; the struct is rt.h's). */
#ifndef KF_RUNTIME_RT_STATE_H
#define KF_RUNTIME_RT_STATE_H

#include "runtime/rt.h"

/* The context's runtime state, created at first use (loads the driver,
 * picks the context). Errors (on ctx): KF_ERR_NO_DEVICE, KF_ERR_CUDA,
 * KF_ERR_CONTEXT_LOST once lost, KF_ERR_OUT_OF_MEMORY. Thread-safe. */
kf_status rt_state_get(kf_ctx *ctx, rt_state **out);
/* Releases a context's runtime state (kf_ctx_destroy); tolerates NULL. */
void rt_state_destroy(struct rt_state *rt);
/* Makes rt's CUDA context current for this thread if it is not; *pushed
 * says whether rt_leave must pop it. */
kf_status rt_enter(kf_ctx *ctx, rt_state *rt, bool *pushed);
void rt_leave(rt_state *rt, bool pushed);
/* Records a failed driver call `what` on the plan (when not NULL) and the
 * context, marks the context lost on a sticky error, and returns the
 * mapped status (rt_cu_status). */
kf_status rt_fail(kf_ctx *ctx, rt_plan *plan, rt_state *rt, CUresult r, const char *what);
/* The first n streams of the pool, created at first need (inside
 * rt_enter). Errors as rt_fail. Thread-safe. */
kf_status rt_pool_streams(kf_ctx *ctx, rt_plan *plan, rt_state *rt, int n, CUstream *out);

#endif
