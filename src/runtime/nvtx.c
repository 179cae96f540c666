/* nvtx.c - NVTX v3 ranges in a "kfuse" domain (header-only: NVTX loads the
 * profiler's injection library itself, so nothing is linked), mirrored into
 * the trace recorder; kf_trace_push/pop for callers' own phases. */
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>

#include "kfuse.h"
#include "runtime/trace.h"

static pthread_once_t once = PTHREAD_ONCE_INIT;
static nvtxDomainHandle_t domain;

static void create_domain(void) {
  domain = nvtxDomainCreateA("kfuse");
}

void rt_nvtx_push(const char *name) {
  pthread_once(&once, create_domain);
  nvtxEventAttributes_t a = {0};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = name ? name : "";
  nvtxDomainRangePushEx(domain, &a);
  rt_trace_host('B', name);
}

void rt_nvtx_pop(void) {
  pthread_once(&once, create_domain);
  nvtxDomainRangePop(domain);
  rt_trace_host('E', NULL);
}

void rt_nvtx_pushf(const char *fmt, ...) {
  char name[96];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(name, sizeof name, fmt, ap);
  va_end(ap);
  rt_nvtx_push(name);
}

void kf_trace_push(const char *name) {
  rt_nvtx_push(name);
}

void kf_trace_pop(void) {
  rt_nvtx_pop();
}
