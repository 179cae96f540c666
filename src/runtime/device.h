/* device.h - device facts and the arch of the current device (device.c). */
#ifndef KF_RUNTIME_DEVICE_H
#define KF_RUNTIME_DEVICE_H

#include <stdbool.h>
#include <stddef.h>

#include "runtime/rt.h"

/* Fills a kf_device_info for dev. */
CUresult rt_device_fill(const rt_driver *drv, CUdevice dev, kf_device_info *out);

/* Whether the driver sees a GPU (cuInit, cuDeviceGetCount), without
 * creating a context or leaving a message on ctx. */
bool rt_device_present(kf_ctx *ctx);

/* The current device's arch ("sm_90"), for a plan without options.arch.
 * Errors on ctx: KF_ERR_NO_DEVICE and the driver's. */
kf_status rt_device_arch(kf_ctx *ctx, char *arch, size_t size);

#endif
