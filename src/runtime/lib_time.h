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
/* The choice's records, keyed by the text what (a plan's: the graph, the
 * device, the library's version, the options that matter; a product's:
 * rt_lib_call_what), kept in memory for the context's life and in the
 * disk cache: get looks in memory, then on disk. */
bool rt_lib_record_get(kf_ctx *ctx, const char *what, char *text, size_t size);
void rt_lib_record_put(kf_ctx *ctx, const char *what, const char *text);
/* What a library launch's product is (every field of its rt_gemm, the
 * library workspace, the candidates the heuristic gave, the device and
 * cuBLASLt's version): the key of its candidate's record, so that equal
 * products in any plan share one timing. NULL for a kernel launch. */
const char *rt_lib_call_what(const rt_plan *rp, int launch, char *buf, size_t size);
/* Frees the records kept in memory (rt_state_destroy). */
void rt_lib_records_free(rt_state *rt);
/* "NVIDIA H200 cuBLASLt 130000": what a record is valid for. */
const char *rt_lib_version(const rt_plan *rp, char *buf, size_t size);
/* The same from the context's runtime state (NULL: "?"). */
const char *rt_lib_version_of(const rt_state *rt, char *buf, size_t size);

#endif
