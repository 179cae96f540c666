/* device.c - what the driver says about the installed GPUs: count, names,
 * compute capability, SMs, memory; and the arch string the compiler uses
 * when no --arch is given. None of it creates a CUDA context. */
#include "runtime/device.h"

#include <stdio.h>
#include <string.h>

#include "runtime/nvrtc.h"
#include "runtime/rt.h"
#include "runtime/rt_state.h"

CUresult rt_device_fill(const rt_driver *d, CUdevice dev, kf_device_info *out) {
  memset(out, 0, sizeof *out);
  out->ordinal = (int)dev;
  CUresult r = d->DeviceGetName(out->name, (int)sizeof out->name, dev);
  size_t mem = 0;
  if (r == CUDA_SUCCESS) r = d->DeviceTotalMem(&mem, dev);
  out->total_mem = mem;
  struct {
    int *field;
    CUdevice_attribute attr;
  } attrs[] = {
      {&out->cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR},
      {&out->cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR},
      {&out->sm_count, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT},
      {&out->max_threads_per_sm, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR},
      {&out->max_smem_per_block, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN},
      {&out->l2_bytes, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE},
  };
  for (size_t i = 0; i < sizeof attrs / sizeof attrs[0] && r == CUDA_SUCCESS; i++)
    r = d->DeviceGetAttribute(attrs[i].field, attrs[i].attr, dev);
  if (r == CUDA_SUCCESS) r = d->DriverGetVersion(&out->driver_version);
  return r;
}

/* The driver, initialized; KF_ERR_NO_DEVICE with the reason on ctx. */
static kf_status driver_ready(kf_ctx *ctx, const rt_driver **out) {
  char err[512];
  if (rt_driver_get(out, err, sizeof err) != KF_OK)
    return core_error(ctx, KF_ERR_NO_DEVICE, "%s", err);
  CUresult r = (*out)->Init(0);
  if (r != CUDA_SUCCESS) {
    char b[160];
    int v = 0;
    (*out)->DriverGetVersion(&v);
    return core_error(ctx, KF_ERR_NO_DEVICE,
                      "the NVIDIA driver (CUDA %d.%d) found no usable GPU: cuInit: %s; "
                      "compiling still works with --arch sm_90",
                      v / 1000, v % 1000 / 10, rt_cu_errstr(*out, r, b, sizeof b));
  }
  return KF_OK;
}

kf_status kf_driver_version(kf_ctx *ctx, int *version) {
  const rt_driver *d;
  char err[512];
  if (!version) return core_error(ctx, KF_ERR_INVALID_ARG, "kf_driver_version: NULL out");
  *version = 0;
  if (rt_driver_get(&d, err, sizeof err) != KF_OK)
    return core_error(ctx, KF_ERR_NO_DEVICE, "%s", err);
  CUresult r = d->DriverGetVersion(version);
  if (r != CUDA_SUCCESS) return rt_fail(ctx, NULL, NULL, r, "cuDriverGetVersion");
  return KF_OK;
}

kf_status kf_device_count(kf_ctx *ctx, int *count) {
  const rt_driver *d;
  if (!count) return core_error(ctx, KF_ERR_INVALID_ARG, "kf_device_count: NULL out");
  *count = 0;
  kf_status st = driver_ready(ctx, &d);
  if (st != KF_OK) return st;
  CUresult r = d->DeviceGetCount(count);
  if (r != CUDA_SUCCESS) return rt_fail(ctx, NULL, NULL, r, "cuDeviceGetCount");
  if (*count == 0)
    return core_error(ctx, KF_ERR_NO_DEVICE,
                      "the NVIDIA driver sees no GPU; compiling still works with --arch sm_90");
  return KF_OK;
}

bool rt_device_present(kf_ctx *ctx) {
  (void)ctx; /* no message: having no GPU is not the caller's error here */
  const rt_driver *d;
  char err[512];
  int n = 0;
  return rt_driver_get(&d, err, sizeof err) == KF_OK && d->Init(0) == CUDA_SUCCESS &&
         d->DeviceGetCount(&n) == CUDA_SUCCESS && n > 0;
}

kf_status kf_device_query(kf_ctx *ctx, int ordinal, kf_device_info *out) {
  const rt_driver *d;
  CUdevice dev;
  if (!out) return core_error(ctx, KF_ERR_INVALID_ARG, "kf_device_query: NULL out");
  memset(out, 0, sizeof *out);
  kf_status st = driver_ready(ctx, &d);
  if (st != KF_OK) return st;
  int n = 0;
  d->DeviceGetCount(&n);
  if (ordinal < 0 || ordinal >= n)
    return core_error(ctx, n ? KF_ERR_INVALID_ARG : KF_ERR_NO_DEVICE,
                      "kf_device_query: no GPU %d (the driver sees %d)", ordinal, n);
  CUresult r = d->DeviceGet(&dev, ordinal);
  if (r == CUDA_SUCCESS) r = rt_device_fill(d, dev, out);
  if (r != CUDA_SUCCESS) return rt_fail(ctx, NULL, NULL, r, "querying the GPU");
  return KF_OK;
}

/* The compiler's default target: the current context's device (the one
 * kfuse would run on), else GPU 0. */
kf_status rt_device_arch(kf_ctx *ctx, char *arch, size_t size) {
  const rt_driver *d;
  kf_status st = driver_ready(ctx, &d);
  if (st != KF_OK) return st;
  CUdevice dev = 0;
  CUcontext cur = NULL;
  if (ctx && ctx->rt)
    dev = ctx->rt->dev;
  else if (d->CtxGetCurrent(&cur) != CUDA_SUCCESS || !cur || d->CtxGetDevice(&dev) != CUDA_SUCCESS)
    if (d->DeviceGet(&dev, 0) != CUDA_SUCCESS)
      return core_error(ctx, KF_ERR_NO_DEVICE, "the NVIDIA driver sees no GPU");
  int major = 0, minor = 0;
  d->DeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
  d->DeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
  snprintf(arch, size, "sm_%d%d", major, minor);
  return KF_OK;
}
