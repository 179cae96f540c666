/* trace.h - the process-wide Chrome/Perfetto trace recorder (trace.c) and
 * the NVTX ranges (nvtx.c) that feed it. */
#ifndef KF_RUNTIME_TRACE_H
#define KF_RUNTIME_TRACE_H

#include <stdbool.h>

/* Opens a host span `name` on this thread: an NVTX range in the "kfuse"
 * domain (free when no tool is attached) and, while a trace is recording,
 * a "B" event. Call rt_nvtx_pop on the same thread to close it. Where the
 * pipeline calls them (through runtime/nvtx.h):
 * kf_graph_load_yaml ("parse"), kf_plan_create ("fuse"), emitting each
 * launch ("codegen launch 0"), each NVRTC compile that misses the caches
 * ("nvrtc k0_pointwise"), kf_plan_load ("module load") and each launch
 * ("launch k0_pointwise", only while rt_spans_on). Thread-safe. */
void rt_nvtx_push(const char *name);
void rt_nvtx_pop(void);
/* The same with a printf-formatted name (truncated to 95 bytes). */
void rt_nvtx_pushf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Whether a span would be seen: a trace is recording or an NVTX tool is
 * attached (NVTX_INJECTION64_PATH or a static injection, decided once per
 * process). Per-launch code checks it first, so an unwatched run pays two
 * relaxed loads and a branch, not a formatted name and two NVTX calls. */
bool rt_spans_on(void);

/* Whether a trace is recording now (cheap: one atomic load). */
bool rt_trace_active(void);
/* Microseconds since the trace started, on CLOCK_MONOTONIC. */
double rt_trace_now_us(void);
/* A host event of this thread: ph 'B' (begin, with name) or 'E' (end). */
void rt_trace_host(char ph, const char *name);
/* A GPU span on stream lane `stream` of `device`, at host-aligned
 * microseconds; args is a JSON object's text ("{\"regs\":32}") or NULL. */
void rt_trace_gpu(const char *device, const char *name, int stream, double ts_us, double dur_us,
                  const char *args);

#endif
