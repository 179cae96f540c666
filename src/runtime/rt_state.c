/* rt_state.c - the runtime's per-context state: the driver, the device and
 * CUDA context in use, the prioritized stream pool, and the lost flag that
 * a sticky error sets. Created lazily at the first call that needs it. */
#include "runtime/rt_state.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "runtime/device.h"
#include "runtime/lib_time.h"
#include "runtime/rt.h"

/* Picks the CUDA context: the caller's current one if any (kfuse embedded
 * in a program that owns the device), else device 0's primary context,
 * which is what the CUDA runtime would use too. */
static kf_status state_init(rt_state *rt, char *err, size_t errsize) {
  const rt_driver *d = rt->drv;
  char b[160];
  CUresult r = d->Init(0);
  if (r != CUDA_SUCCESS) {
    snprintf(err, errsize, "the NVIDIA driver found no usable GPU: cuInit: %s",
             rt_cu_errstr(d, r, b, sizeof b));
    return rt_cu_status(r) == KF_ERR_CUDA ? KF_ERR_NO_DEVICE : rt_cu_status(r);
  }
  CUcontext cur = NULL;
  d->CtxGetCurrent(&cur);
  if (cur) {
    rt->cuctx = cur;
    r = d->CtxGetDevice(&rt->dev);
  } else {
    r = d->DeviceGet(&rt->dev, 0);
    if (r == CUDA_SUCCESS) r = d->DevicePrimaryCtxRetain(&rt->cuctx, rt->dev);
    rt->retained = r == CUDA_SUCCESS;
  }
  if (r == CUDA_SUCCESS) r = rt_device_fill(d, rt->dev, &rt->info);
  if (r == CUDA_SUCCESS && !cur) r = d->CtxPushCurrent(rt->cuctx);
  if (r == CUDA_SUCCESS) {
    CUresult r2 = d->CtxGetStreamPriorityRange(&rt->prio_least, &rt->prio_greatest);
    if (!cur) d->CtxPopCurrent(NULL);
    r = r2;
  }
  if (r != CUDA_SUCCESS) {
    snprintf(err, errsize, "setting up the CUDA context failed: %s",
             rt_cu_errstr(d, r, b, sizeof b));
    if (rt->retained) d->DevicePrimaryCtxRelease(rt->dev);
    rt->retained = false;
    return rt_cu_status(r);
  }
  return KF_OK;
}

kf_status rt_state_get(kf_ctx *ctx, rt_state **out) {
  char err[512] = "";
  kf_status st = KF_OK;
  *out = NULL;
  if (!ctx) return KF_ERR_INVALID_ARG;
  pthread_mutex_lock(&ctx->lock);
  rt_state *rt = ctx->rt;
  if (!rt) {
    rt = core_calloc(1, sizeof *rt);
    if (!rt) {
      st = KF_ERR_OUT_OF_MEMORY;
      snprintf(err, sizeof err, "out of memory");
    } else if ((st = rt_driver_get(&rt->drv, err, sizeof err)) == KF_OK) {
      st = state_init(rt, err, sizeof err);
    }
    if (st == KF_OK)
      ctx->rt = rt;
    else
      free(rt);
  }
  if (st == KF_OK && rt->lost) {
    st = KF_ERR_CONTEXT_LOST;
    snprintf(err, sizeof err, "%s", rt->lost_msg);
  }
  pthread_mutex_unlock(&ctx->lock);
  if (st != KF_OK) return core_error(ctx, st, "%s", err);
  *out = rt;
  return KF_OK;
}

kf_status rt_enter(kf_ctx *ctx, rt_state *rt, bool *pushed) {
  CUcontext cur = NULL;
  *pushed = false;
  rt->drv->CtxGetCurrent(&cur);
  if (cur == rt->cuctx) return KF_OK;
  CUresult r = rt->drv->CtxPushCurrent(rt->cuctx);
  if (r != CUDA_SUCCESS) return rt_fail(ctx, NULL, rt, r, "cuCtxPushCurrent");
  *pushed = true;
  return KF_OK;
}

void rt_leave(rt_state *rt, bool pushed) {
  if (pushed) rt->drv->CtxPopCurrent(NULL);
}

kf_status rt_fail(kf_ctx *ctx, rt_plan *plan, rt_state *rt, CUresult r, const char *what) {
  char b[160];
  kf_status st = rt_cu_status(r);
  rt_cu_errstr(rt ? rt->drv : NULL, r, b, sizeof b);
  if (st == KF_ERR_CONTEXT_LOST && rt && !rt->lost) {
    snprintf(rt->lost_msg, sizeof rt->lost_msg,
             "the CUDA context is lost after a sticky error (%s: %s); every later call "
             "fails: recreate the CUDA context (or restart the process)",
             what, b);
    rt->lost = true;
    core_log(ctx, KF_LOG_ERROR, LOG_RUNTIME, "%s", rt->lost_msg);
  }
  if (st == KF_ERR_CONTEXT_LOST && rt) {
    if (plan) return rt_plan_error(plan, st, "%s", rt->lost_msg);
    return core_error(ctx, st, "%s", rt->lost_msg);
  }
  if (plan) return rt_plan_error(plan, st, "%s failed: %s", what, b);
  return core_error(ctx, st, "%s failed: %s", what, b);
}

kf_status rt_pool_streams(kf_ctx *ctx, rt_plan *plan, rt_state *rt, int n, CUstream *out) {
  CUresult r = CUDA_SUCCESS;
  if (n > RT_MAX_STREAMS) n = RT_MAX_STREAMS;
  pthread_mutex_lock(&ctx->lock);
  while (rt->n_pool < n && r == CUDA_SUCCESS) {
    /* The first stream carries the critical path: the greatest priority. */
    int prio = rt->n_pool == 0 ? rt->prio_greatest : rt->prio_least;
    r = rt->drv->StreamCreateWithPriority(&rt->pool[rt->n_pool], CU_STREAM_NON_BLOCKING, prio);
    if (r == CUDA_SUCCESS) rt->pool_prio[rt->n_pool++] = prio;
  }
  for (int i = 0; i < n && i < rt->n_pool; i++) out[i] = rt->pool[i];
  pthread_mutex_unlock(&ctx->lock);
  if (r != CUDA_SUCCESS) return rt_fail(ctx, plan, rt, r, "cuStreamCreateWithPriority");
  return KF_OK;
}

void rt_state_destroy(struct rt_state *rt) {
  if (!rt) return;
  const rt_driver *d = rt->drv;
  if (d && (rt->n_pool || rt->lt_handle)) {
    CUcontext cur = NULL;
    d->CtxGetCurrent(&cur);
    bool pushed = cur != rt->cuctx && d->CtxPushCurrent(rt->cuctx) == CUDA_SUCCESS;
    for (int i = 0; i < rt->n_pool; i++) d->StreamDestroy(rt->pool[i]);
    if (rt->lt_handle) rt->lt->Destroy(rt->lt_handle);
    if (pushed) d->CtxPopCurrent(NULL);
  }
  if (d && rt->retained) d->DevicePrimaryCtxRelease(rt->dev);
  rt_lib_records_free(rt);
  free(rt);
}
