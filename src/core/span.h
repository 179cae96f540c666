/* span.h - named host spans any module may open (NVTX ranges in the "kfuse"
 * domain, mirrored into the Chrome trace), declared here so that ir/ and
 * core/ stay free of CUDA; the runtime implements them (runtime/nvtx.c). */
#ifndef KF_CORE_SPAN_H
#define KF_CORE_SPAN_H

#include <stdbool.h>

/* Whether anyone is watching: an NVTX tool is attached (decided once per
 * process) or a trace is recording. Two loads and a branch: hot paths check
 * it before formatting a name. */
bool core_span_on(void);
/* Opens span `name` on this thread; close it with core_span_pop on the same
 * thread. Cheap without a tool, but it still formats and calls through:
 * per-run paths guard with core_span_on. */
void core_span_push(const char *name);
/* The same with a printf-formatted name (truncated to 95 bytes). */
void core_span_pushf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void core_span_pop(void);

#endif
