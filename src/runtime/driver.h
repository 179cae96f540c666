/* driver.h - the CUDA Driver API as a table of function pointers, loaded
 * with dlopen("libcuda.so.1") and cuGetProcAddress at first use, so that
 * kfuse never links libcuda and tests can swap in a recording fake
 * (tests/fake_driver.c, through rt_driver_override). */
#ifndef KF_RUNTIME_DRIVER_H
#define KF_RUNTIME_DRIVER_H

#include <cuda.h>
#include <cudaTypedefs.h>
#include <stdbool.h>
#include <stddef.h>

#include "kfuse.h"

/* Every entry is requested at this ABI version: the oldest driver kfuse
 * supports (CUDA 12.0). Asking for a fixed version pins each entry's
 * signature to the _vNNNN typedef used below, whatever the driver. */
#define RT_DRIVER_ABI 12000

/* The message every "needs a GPU" call gives when libcuda is absent. */
#define RT_NO_DRIVER_MSG \
  "libcuda.so.1 not found: no NVIDIA driver; compiling still works with --arch sm_90"

/* X(field, symbol, typedef): one row per entry point kfuse uses. */
#define RT_DRIVER_ENTRIES(X)                                                     \
  X(Init, cuInit, PFN_cuInit_v2000)                                              \
  X(DriverGetVersion, cuDriverGetVersion, PFN_cuDriverGetVersion_v2020)          \
  X(GetErrorName, cuGetErrorName, PFN_cuGetErrorName_v6000)                      \
  X(GetErrorString, cuGetErrorString, PFN_cuGetErrorString_v6000)                \
  X(DeviceGetCount, cuDeviceGetCount, PFN_cuDeviceGetCount_v2000)                \
  X(DeviceGet, cuDeviceGet, PFN_cuDeviceGet_v2000)                               \
  X(DeviceGetName, cuDeviceGetName, PFN_cuDeviceGetName_v2000)                   \
  X(DeviceTotalMem, cuDeviceTotalMem, PFN_cuDeviceTotalMem_v3020)                \
  X(DeviceGetAttribute, cuDeviceGetAttribute, PFN_cuDeviceGetAttribute_v2000)    \
  X(DevicePrimaryCtxRetain, cuDevicePrimaryCtxRetain,                            \
    PFN_cuDevicePrimaryCtxRetain_v7000)                                          \
  X(DevicePrimaryCtxRelease, cuDevicePrimaryCtxRelease,                          \
    PFN_cuDevicePrimaryCtxRelease_v11000)                                        \
  X(CtxGetCurrent, cuCtxGetCurrent, PFN_cuCtxGetCurrent_v4000)                   \
  X(CtxPushCurrent, cuCtxPushCurrent, PFN_cuCtxPushCurrent_v4000)                \
  X(CtxPopCurrent, cuCtxPopCurrent, PFN_cuCtxPopCurrent_v4000)                   \
  X(CtxGetDevice, cuCtxGetDevice, PFN_cuCtxGetDevice_v2000)                      \
  X(CtxGetStreamPriorityRange, cuCtxGetStreamPriorityRange,                      \
    PFN_cuCtxGetStreamPriorityRange_v5050)                                       \
  X(CtxSynchronize, cuCtxSynchronize, PFN_cuCtxSynchronize_v2000)                \
  X(ModuleLoadData, cuModuleLoadData, PFN_cuModuleLoadData_v2000)                \
  X(ModuleUnload, cuModuleUnload, PFN_cuModuleUnload_v2000)                      \
  X(ModuleGetFunction, cuModuleGetFunction, PFN_cuModuleGetFunction_v2000)       \
  X(ModuleGetGlobal, cuModuleGetGlobal, PFN_cuModuleGetGlobal_v3020)             \
  X(FuncSetAttribute, cuFuncSetAttribute, PFN_cuFuncSetAttribute_v9000)          \
  X(FuncGetAttribute, cuFuncGetAttribute, PFN_cuFuncGetAttribute_v2020)          \
  X(OccupancyMaxActiveBlocksPerMultiprocessor,                                   \
    cuOccupancyMaxActiveBlocksPerMultiprocessor,                                 \
    PFN_cuOccupancyMaxActiveBlocksPerMultiprocessor_v6050)                       \
  X(OccupancyMaxActiveClusters, cuOccupancyMaxActiveClusters,                   \
    PFN_cuOccupancyMaxActiveClusters_v11070)                                     \
  X(MemAlloc, cuMemAlloc, PFN_cuMemAlloc_v3020)                                  \
  X(MemFree, cuMemFree, PFN_cuMemFree_v3020)                                     \
  X(MemGetInfo, cuMemGetInfo, PFN_cuMemGetInfo_v3020)                            \
  X(MemcpyHtoD, cuMemcpyHtoD, PFN_cuMemcpyHtoD_v3020)                            \
  X(MemcpyDtoH, cuMemcpyDtoH, PFN_cuMemcpyDtoH_v3020)                            \
  X(MemcpyDtoDAsync, cuMemcpyDtoDAsync, PFN_cuMemcpyDtoDAsync_v3020)             \
  X(MemsetD8, cuMemsetD8, PFN_cuMemsetD8_v3020)                                  \
  X(MemsetD32, cuMemsetD32, PFN_cuMemsetD32_v3020)                               \
  X(PointerGetAttribute, cuPointerGetAttribute, PFN_cuPointerGetAttribute_v4000) \
  X(StreamCreateWithPriority, cuStreamCreateWithPriority,                        \
    PFN_cuStreamCreateWithPriority_v5050)                                        \
  X(StreamDestroy, cuStreamDestroy, PFN_cuStreamDestroy_v4000)                   \
  X(StreamSynchronize, cuStreamSynchronize, PFN_cuStreamSynchronize_v2000)       \
  X(StreamWaitEvent, cuStreamWaitEvent, PFN_cuStreamWaitEvent_v3020)             \
  X(StreamIsCapturing, cuStreamIsCapturing, PFN_cuStreamIsCapturing_v10000)      \
  X(StreamBeginCapture, cuStreamBeginCapture, PFN_cuStreamBeginCapture_v10010)   \
  X(StreamEndCapture, cuStreamEndCapture, PFN_cuStreamEndCapture_v10000)         \
  X(EventCreate, cuEventCreate, PFN_cuEventCreate_v2000)                         \
  X(EventDestroy, cuEventDestroy, PFN_cuEventDestroy_v4000)                      \
  X(EventRecord, cuEventRecord, PFN_cuEventRecord_v2000)                         \
  X(EventSynchronize, cuEventSynchronize, PFN_cuEventSynchronize_v2000)          \
  X(EventElapsedTime, cuEventElapsedTime, PFN_cuEventElapsedTime_v2000)          \
  X(LaunchKernel, cuLaunchKernel, PFN_cuLaunchKernel_v4000)                      \
  X(TensorMapEncodeTiled, cuTensorMapEncodeTiled,                                \
    PFN_cuTensorMapEncodeTiled_v12000)                                           \
  X(LaunchKernelEx, cuLaunchKernelEx, PFN_cuLaunchKernelEx_v11060)               \
  X(GraphCreate, cuGraphCreate, PFN_cuGraphCreate_v10000)                        \
  X(GraphAddKernelNode, cuGraphAddKernelNode, PFN_cuGraphAddKernelNode_v12000)   \
  X(GraphAddChildGraphNode, cuGraphAddChildGraphNode,                            \
    PFN_cuGraphAddChildGraphNode_v10000)                                         \
  X(GraphInstantiateWithFlags, cuGraphInstantiateWithFlags,                      \
    PFN_cuGraphInstantiateWithFlags_v11040)                                      \
  X(GraphLaunch, cuGraphLaunch, PFN_cuGraphLaunch_v10000)                        \
  X(GraphExecKernelNodeSetParams, cuGraphExecKernelNodeSetParams,                \
    PFN_cuGraphExecKernelNodeSetParams_v12000)                                   \
  X(GraphExecChildGraphNodeSetParams, cuGraphExecChildGraphNodeSetParams,        \
    PFN_cuGraphExecChildGraphNodeSetParams_v11010)                               \
  X(GraphExecDestroy, cuGraphExecDestroy, PFN_cuGraphExecDestroy_v10000)         \
  X(GraphDestroy, cuGraphDestroy, PFN_cuGraphDestroy_v10000)

typedef struct rt_driver {
  const char *name; /* "libcuda.so.1" or "fake" */
#define RT_DRIVER_FIELD_(field, sym, type) type field;
  RT_DRIVER_ENTRIES(RT_DRIVER_FIELD_)
#undef RT_DRIVER_FIELD_
} rt_driver;

/* The driver table: the fake one if a test installed it, else the real one,
 * loaded once (thread-safe). KF_ERR_NO_DEVICE with RT_NO_DRIVER_MSG (or the
 * missing entry point) in err when libcuda cannot be used. */
kf_status rt_driver_get(const rt_driver **out, char *err, size_t errsize);

/* "CUDA_ERROR_OUT_OF_MEMORY (out of memory)" for messages; never NULL. */
const char *rt_cu_errstr(const rt_driver *drv, CUresult r, char *buf, size_t size);
/* Errors after which the context is unusable (illegal address, launch
 * failure, ...): every later call must report KF_ERR_CONTEXT_LOST. */
bool rt_cu_is_sticky(CUresult r);
/* The kf_status for a driver error: OOM -> KF_ERR_OUT_OF_MEMORY, sticky ->
 * KF_ERR_CONTEXT_LOST, no device -> KF_ERR_NO_DEVICE, else KF_ERR_CUDA. */
kf_status rt_cu_status(CUresult r);

/* ---- test hooks (tests only; not reachable through kfuse.h) -------------- */

/* Replaces the table rt_driver_get returns (NULL restores the real one):
 * how the tests install their recording fake (tests/fake_driver.h). */
void rt_driver_override(const rt_driver *drv);

#endif
