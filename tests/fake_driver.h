/* fake_driver.h - a recording fake of the CUDA Driver API table for the CPU
 * tests (fake_driver.c), installed with rt_driver_override (driver.h). It
 * lives with the tests, not in libkfuse; a suite that includes this header
 * links it (tests/CMakeLists.txt). Not thread-safe: one test drives it at a
 * time. */
#ifndef KF_TESTS_FAKE_DRIVER_H
#define KF_TESTS_FAKE_DRIVER_H

#include <stdbool.h>
#include <stddef.h>

#include "runtime/driver.h"

/* A recording fake driver: one device (an "H200", sm_90, 132 SMs), fake
 * handles and device addresses, every call appended to a log as one line
 * ("LaunchKernel fn=k0_pointwise grid=4 block=256 smem=0 stream=s2"). */
const rt_driver *rt_fake_driver(void);
/* Clears the log and every injected behavior; keeps nothing allocated. */
void rt_fake_reset(void);
/* The number of log lines and one line (NULL past the end). */
int rt_fake_count(void);
const char *rt_fake_line(int i);
/* The index of the first line at or after `from` that starts with `prefix`
 * and contains `needle` (NULL: anything), or -1. */
int rt_fake_find(int from, const char *prefix, const char *needle);
/* How many lines start with prefix. */
int rt_fake_count_prefix(const char *prefix);
/* Makes the n-th later call (1 = the next) of the entry named `entry`
 * ("MemAlloc", "LaunchKernel", ...) fail with r; every call after it also
 * fails when `sticky` is true. */
void rt_fake_fail(const char *entry, int nth, CUresult r, bool sticky);
/* Number of devices the fake reports (default 1; 0 = a driver with no GPU). */
void rt_fake_set_devices(int n);
/* The SM count the fake device reports (0: 132, the default). */
void rt_fake_set_sm_count(int n);
/* What cuEventElapsedTime answers, in ms (0: 1 ms, the default). */
void rt_fake_set_elapsed_ms(float ms);
/* Makes cuStreamIsCapturing report that every stream is capturing. */
void rt_fake_set_capturing(bool on);
/* Bytes currently allocated through the fake's cuMemAlloc (leak checks). */
size_t rt_fake_bytes_allocated(void);
/* Live fake objects (modules + streams + events + graphs + execs): 0 after
 * everything is released. */
int rt_fake_live_objects(void);
/* A device address range the fake accepts as device memory in
 * cuPointerGetAttribute, as if the test had allocated it. */
void rt_fake_add_device_range(CUdeviceptr base, size_t bytes);
/* Registers, local (spill) bytes and static shared bytes that the fake
 * reports for kernels whose entry name contains `entry_substr` (default
 * 32, 0, 0). Up to 16 rules; the first match wins. */
void rt_fake_set_kernel(const char *entry_substr, int regs, int local_bytes, int static_smem);

#endif
