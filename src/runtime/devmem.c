/* devmem.c - device memory, copies and stream waits for tools, tests and
 * simple embedders (kfuse itself only borrows the caller's tensors). */
#include <stdint.h>
#include <stdio.h>

#include "runtime/rt.h"
#include "runtime/rt_state.h"

/* The context's runtime state with its CUDA context current. */
static kf_status enter(kf_ctx *ctx, const char *fn, rt_state **rt, bool *pushed) {
  if (!ctx) return KF_ERR_INVALID_ARG;
  kf_status st = rt_state_get(ctx, rt);
  if (st != KF_OK) return core_error(ctx, st, "%s: %s", fn, kf_ctx_errmsg(ctx));
  return rt_enter(ctx, *rt, pushed);
}

kf_status kf_device_alloc(kf_ctx *ctx, size_t bytes, void **dptr) {
  if (!dptr) return core_error(ctx, KF_ERR_INVALID_ARG, "kf_device_alloc: dptr is NULL");
  *dptr = NULL;
  rt_state *rt;
  bool pushed;
  kf_status st = enter(ctx, "kf_device_alloc", &rt, &pushed);
  if (st != KF_OK) return st;
  CUdeviceptr p = 0;
  CUresult r = rt->drv->MemAlloc(&p, bytes ? bytes : 1);
  rt_leave(rt, pushed);
  if (r != CUDA_SUCCESS) {
    char what[64];
    snprintf(what, sizeof what, "cuMemAlloc(%zu bytes)", bytes);
    return rt_fail(ctx, NULL, rt, r, what);
  }
  *dptr = (void *)(uintptr_t)p;
  return KF_OK;
}

void kf_device_free(kf_ctx *ctx, void *dptr) {
  rt_state *rt;
  bool pushed;
  if (!dptr || enter(ctx, "kf_device_free", &rt, &pushed) != KF_OK) return;
  rt->drv->MemFree((CUdeviceptr)(uintptr_t)dptr);
  rt_leave(rt, pushed);
}

kf_status kf_memcpy_to_device(kf_ctx *ctx, void *dst, const void *src, size_t bytes) {
  if (!bytes) return KF_OK;
  if (!dst || !src) return core_error(ctx, KF_ERR_INVALID_ARG, "kf_memcpy_to_device: NULL pointer");
  rt_state *rt;
  bool pushed;
  kf_status st = enter(ctx, "kf_memcpy_to_device", &rt, &pushed);
  if (st != KF_OK) return st;
  CUresult r = rt->drv->MemcpyHtoD((CUdeviceptr)(uintptr_t)dst, src, bytes);
  rt_leave(rt, pushed);
  return r == CUDA_SUCCESS ? KF_OK : rt_fail(ctx, NULL, rt, r, "cuMemcpyHtoD");
}

kf_status kf_memcpy_to_host(kf_ctx *ctx, void *dst, const void *src, size_t bytes) {
  if (!bytes) return KF_OK;
  if (!dst || !src) return core_error(ctx, KF_ERR_INVALID_ARG, "kf_memcpy_to_host: NULL pointer");
  rt_state *rt;
  bool pushed;
  kf_status st = enter(ctx, "kf_memcpy_to_host", &rt, &pushed);
  if (st != KF_OK) return st;
  CUresult r = rt->drv->MemcpyDtoH(dst, (CUdeviceptr)(uintptr_t)src, bytes);
  rt_leave(rt, pushed);
  return r == CUDA_SUCCESS ? KF_OK : rt_fail(ctx, NULL, rt, r, "cuMemcpyDtoH");
}

kf_status kf_memset_device(kf_ctx *ctx, void *dptr, int byte, size_t bytes) {
  if (!bytes) return KF_OK;
  if (!dptr) return core_error(ctx, KF_ERR_INVALID_ARG, "kf_memset_device: NULL pointer");
  rt_state *rt;
  bool pushed;
  kf_status st = enter(ctx, "kf_memset_device", &rt, &pushed);
  if (st != KF_OK) return st;
  CUresult r = rt->drv->MemsetD8((CUdeviceptr)(uintptr_t)dptr, (unsigned char)byte, bytes);
  if (r == CUDA_SUCCESS) r = rt->drv->CtxSynchronize();
  rt_leave(rt, pushed);
  return r == CUDA_SUCCESS ? KF_OK : rt_fail(ctx, NULL, rt, r, "cuMemsetD8");
}

kf_status kf_stream_synchronize(kf_ctx *ctx, void *stream) {
  rt_state *rt;
  bool pushed;
  kf_status st = enter(ctx, "kf_stream_synchronize", &rt, &pushed);
  if (st != KF_OK) return st;
  CUresult r = rt->drv->StreamSynchronize((CUstream)stream);
  rt_leave(rt, pushed);
  return r == CUDA_SUCCESS ? KF_OK : rt_fail(ctx, NULL, rt, r, "cuStreamSynchronize");
}
