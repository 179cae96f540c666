/* trace.h - the process-wide Chrome/Perfetto trace recorder (trace.c); the
 * NVTX ranges that feed it are nvtx.h's. */
#ifndef KF_RUNTIME_TRACE_H
#define KF_RUNTIME_TRACE_H

#include <stdbool.h>

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
