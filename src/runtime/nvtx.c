/* nvtx.c - NVTX v3 ranges in a "kfuse" domain (header-only: NVTX loads the
 * profiler's injection library itself, so nothing is linked), mirrored into
 * the trace recorder; rt_span_* for the runtime and the pipeline,
 * kf_trace_push/pop for callers' own phases. */
#include "runtime/nvtx.h"

#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/knobs.h"
#include "kfuse.h"
#include "runtime/trace.h"

static pthread_once_t once = PTHREAD_ONCE_INIT;
static nvtxDomainHandle_t domain;
/* -1: not decided yet; 0: no NVTX tool; 1: one is attached. */
static atomic_int tool = -1;

/* NVTX finds a tool the same two ways (nvtxDetail/nvtxInit.h): the
 * NVTX_INJECTION64_PATH variable (what Nsight Systems and Compute set) or
 * a statically linked InitializeInjectionNvtx2_fnptr. */
static bool tool_attached(void) {
  int t = atomic_load_explicit(&tool, memory_order_relaxed);
  if (t < 0) {
    t = core_knobs_quiet()->nvtx_injection || InitializeInjectionNvtx2_fnptr != NULL;
    atomic_store_explicit(&tool, t, memory_order_relaxed);
  }
  return t;
}

static void create_domain(void) {
  domain = nvtxDomainCreateA("kfuse");
}

bool rt_span_on(void) {
  return rt_trace_active() || tool_attached();
}

void rt_span_push(const char *name) {
  pthread_once(&once, create_domain);
  nvtxEventAttributes_t a = {0};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = name ? name : "";
  nvtxDomainRangePushEx(domain, &a);
  rt_trace_host('B', name);
}

void rt_span_pop(void) {
  pthread_once(&once, create_domain);
  nvtxDomainRangePop(domain);
  rt_trace_host('E', NULL);
}

__attribute__((format(printf, 1, 0))) static void vpush(const char *fmt, va_list ap) {
  char name[96];
  vsnprintf(name, sizeof name, fmt, ap);
  rt_span_push(name);
}

void rt_span_pushf(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vpush(fmt, ap);
  va_end(ap);
}

void kf_trace_push(const char *name) {
  rt_span_push(name);
}

void kf_trace_pop(void) {
  rt_span_pop();
}
