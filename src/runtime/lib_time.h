/* lib_time.h - timing a loaded plan for the choice between library calls
 * and template kernels (lib_time.c), and the choice's disk-cache record. */
#ifndef KF_RUNTIME_LIB_TIME_H
#define KF_RUNTIME_LIB_TIME_H

#include <stdbool.h>
#include <stddef.h>

#include "runtime/rt.h"

/* Times the loaded plan (launch -1) or one library launch with each of
 * its candidates (ms[c], at most max_ms of them), as the mean of reps runs
 * after a warm-up, on zeroed scratch tensors for the graph's inputs and
 * outputs (allocated and freed here). Errors as rt_fail. */
kf_status rt_lib_time(rt_plan *rp, int launch, int reps, double *ms, int max_ms);
/* Candidates of a loaded library launch (0 for a kernel). */
int rt_lib_candidates(const rt_plan *rp, int launch);
/* Which candidate a loaded library launch runs (ignored out of range). */
void rt_lib_set_candidate(rt_plan *rp, int launch, int cand);
/* The choice's record in the disk cache, keyed by the text what (the
 * graph, the device, the library's version, the options that matter). */
bool rt_lib_record_get(kf_ctx *ctx, const char *what, char *text, size_t size);
void rt_lib_record_put(kf_ctx *ctx, const char *what, const char *text);
/* "NVIDIA H200 cuBLASLt 130000": what a record is valid for. */
const char *rt_lib_version(const rt_plan *rp, char *buf, size_t size);

#endif
