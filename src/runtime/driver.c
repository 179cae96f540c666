/* driver.c - loads libcuda.so.1 once with dlopen and fills the rt_driver
 * table through cuGetProcAddress; maps driver errors to kf_status. */
#include "runtime/driver.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

static rt_driver real_driver;
static kf_status real_status = KF_ERR_NO_DEVICE;
static char real_err[512];
static pthread_once_t real_once = PTHREAD_ONCE_INIT;
static const rt_driver *_Atomic override_driver;

/* cuGetProcAddress came in two ABIs: v2 (CUDA 12.0+, with a status out
 * argument) and v1 (11.3+). Prefer v2; accept v1 from an older libcuda. */
typedef struct proc_lookup {
  PFN_cuGetProcAddress_v12000 v2;
  PFN_cuGetProcAddress_v11030 v1;
} proc_lookup;

static bool lookup_one(const proc_lookup *pl, const char *sym, void **fn) {
  CUresult r;
  *fn = NULL;
  if (pl->v2) {
    CUdriverProcAddressQueryResult q = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    r = pl->v2(sym, fn, RT_DRIVER_ABI, CU_GET_PROC_ADDRESS_DEFAULT, &q);
    if (r == CUDA_SUCCESS && q != CU_GET_PROC_ADDRESS_SUCCESS) *fn = NULL;
  } else {
    r = pl->v1(sym, fn, RT_DRIVER_ABI, CU_GET_PROC_ADDRESS_DEFAULT);
  }
  return r == CUDA_SUCCESS && *fn != NULL;
}

static void load_real(void) {
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    snprintf(real_err, sizeof real_err, "%s", RT_NO_DRIVER_MSG);
    return;
  }
  proc_lookup pl = {0};
  *(void **)&pl.v2 = dlsym(lib, "cuGetProcAddress_v2");
  if (!pl.v2) *(void **)&pl.v1 = dlsym(lib, "cuGetProcAddress");
  if (!pl.v2 && !pl.v1) {
    snprintf(real_err, sizeof real_err,
             "libcuda.so.1 has no cuGetProcAddress: the NVIDIA driver is too old "
             "(kfuse needs CUDA 12.0 or newer); compiling still works with --arch sm_90");
    return; /* the library stays loaded: unloading a driver is never safe */
  }
#define RT_DRIVER_LOOKUP_(field, sym, type)                                        \
  if (!lookup_one(&pl, #sym, (void **)&real_driver.field)) {                       \
    snprintf(real_err, sizeof real_err,                                            \
             "the NVIDIA driver lacks %s (kfuse needs CUDA 12.0 or newer); "       \
             "compiling still works with --arch sm_90",                            \
             #sym);                                                                \
    return;                                                                        \
  }
  RT_DRIVER_ENTRIES(RT_DRIVER_LOOKUP_)
#undef RT_DRIVER_LOOKUP_
  real_driver.name = "libcuda.so.1";
  real_status = KF_OK;
}

kf_status rt_driver_get(const rt_driver **out, char *err, size_t errsize) {
  const rt_driver *fake = override_driver;
  if (fake) {
    *out = fake;
    return KF_OK;
  }
  pthread_once(&real_once, load_real);
  if (real_status != KF_OK) {
    *out = NULL;
    if (err && errsize) snprintf(err, errsize, "%s", real_err);
    return real_status;
  }
  *out = &real_driver;
  return KF_OK;
}

void rt_driver_override(const rt_driver *drv) { override_driver = drv; }

const char *rt_cu_errstr(const rt_driver *drv, CUresult r, char *buf, size_t size) {
  const char *name = NULL, *text = NULL;
  if (drv && drv->GetErrorName) drv->GetErrorName(r, &name);
  if (drv && drv->GetErrorString) drv->GetErrorString(r, &text);
  if (name && text)
    snprintf(buf, size, "%s (%s)", name, text);
  else
    snprintf(buf, size, "CUDA error %d", (int)r);
  return buf;
}

bool rt_cu_is_sticky(CUresult r) {
  switch (r) {
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_ECC_UNCORRECTABLE:
    case CUDA_ERROR_CONTEXT_IS_DESTROYED:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_UNKNOWN:
      return true;
    default:
      return false;
  }
}

kf_status rt_cu_status(CUresult r) {
  if (r == CUDA_SUCCESS) return KF_OK;
  if (r == CUDA_ERROR_OUT_OF_MEMORY) return KF_ERR_OUT_OF_MEMORY;
  if (rt_cu_is_sticky(r)) return KF_ERR_CONTEXT_LOST;
  if (r == CUDA_ERROR_NO_DEVICE || r == CUDA_ERROR_NOT_INITIALIZED ||
      r == CUDA_ERROR_INVALID_DEVICE || r == CUDA_ERROR_SYSTEM_DRIVER_MISMATCH ||
      r == CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE)
    return KF_ERR_NO_DEVICE;
  return KF_ERR_CUDA;
}
