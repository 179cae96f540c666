/* nvtx.h - named host spans (NVTX ranges in the "kfuse" domain, mirrored
 * into the Chrome trace) that the runtime and the pipeline above it open;
 * implemented in runtime/nvtx.c without a CUDA header. */
#ifndef KF_RUNTIME_NVTX_H
#define KF_RUNTIME_NVTX_H

#include <stdbool.h>

/* Whether anyone is watching: an NVTX tool is attached (decided once per
 * process) or a trace is recording. Two loads and a branch: hot paths check
 * it before formatting a name. */
bool rt_span_on(void);
/* Opens span `name` on this thread: an NVTX range in the "kfuse" domain
 * and, while a trace is recording, a "B" event; close it with rt_span_pop
 * on the same thread. The spans: kf_graph_load_yaml ("parse"),
 * kf_plan_create ("fuse"), emitting each launch ("codegen launch 0"), each
 * NVRTC compile that misses the caches ("nvrtc k0_pointwise"),
 * kf_plan_load ("module load") and each launch ("launch k0_pointwise",
 * only while rt_span_on). Cheap without a tool, but it still formats and
 * calls through: per-run paths guard with rt_span_on. Thread-safe. */
void rt_span_push(const char *name);
/* The same with a printf-formatted name (truncated to 95 bytes). */
void rt_span_pushf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void rt_span_pop(void);

#endif
