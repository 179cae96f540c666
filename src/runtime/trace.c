/* trace.c - a process-wide recorder of host spans and GPU kernel spans,
 * written as Chrome trace-event JSON (chrome://tracing, ui.perfetto.dev). */
#include "runtime/trace.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/alloc.h"
#include "core/ctx.h"
#include "core/escape.h"
#include "core/json.h"

typedef struct trace_event {
  char ph;        /* 'B', 'E' (host) or 'X' (GPU, with dur) */
  int pid, tid;   /* pid 1: host threads; 2: the GPU, tid = stream lane */
  double ts, dur; /* microseconds */
  char name[96];
  char *args; /* JSON object text, owned, or NULL */
} trace_event;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_bool active;
static trace_event *events;
static size_t n_events, cap_events;
static double t0_us;
static char gpu_name[256];
static atomic_int next_tid = 1;
static _Thread_local int my_tid;

static double mono_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

bool rt_trace_active(void) {
  return atomic_load_explicit(&active, memory_order_relaxed);
}

double rt_trace_now_us(void) {
  return mono_us() - t0_us;
}

static void clear_events(void) {
  for (size_t i = 0; i < n_events; i++) free(events[i].args);
  free(events);
  events = NULL;
  n_events = cap_events = 0;
}

/* Appends under the lock; a failed allocation drops the event (a trace is
 * best effort and never fails the work it watches). */
static void append(const trace_event *e) {
  pthread_mutex_lock(&lock);
  if (atomic_load(&active)) {
    if (n_events == cap_events) {
      size_t cap = cap_events ? cap_events * 2 : 1024;
      trace_event *p = core_realloc(events, cap * sizeof *p);
      if (p) events = p, cap_events = cap;
    }
    if (n_events < cap_events) {
      events[n_events++] = *e;
      e = NULL;
    }
  }
  pthread_mutex_unlock(&lock);
  if (e) free(e->args);
}

void rt_trace_host(char ph, const char *name) {
  if (!rt_trace_active()) return;
  if (!my_tid) my_tid = atomic_fetch_add(&next_tid, 1);
  trace_event e = {.ph = ph, .pid = 1, .tid = my_tid, .ts = rt_trace_now_us()};
  snprintf(e.name, sizeof e.name, "%s", name ? name : "");
  append(&e);
}

void rt_trace_gpu(const char *device, const char *name, int stream, double ts_us, double dur_us,
                  const char *args) {
  if (!rt_trace_active()) return;
  trace_event e = {.ph = 'X', .pid = 2, .tid = stream, .ts = ts_us, .dur = dur_us};
  snprintf(e.name, sizeof e.name, "%s", name ? name : "");
  e.args = args ? core_strdup(args) : NULL;
  pthread_mutex_lock(&lock);
  if (device && !gpu_name[0]) snprintf(gpu_name, sizeof gpu_name, "%s", device);
  pthread_mutex_unlock(&lock);
  append(&e);
}

kf_status kf_trace_start(void) {
  pthread_mutex_lock(&lock);
  clear_events();
  gpu_name[0] = 0;
  t0_us = mono_us();
  events = core_malloc(1024 * sizeof *events);
  cap_events = events ? 1024 : 0;
  if (events) atomic_store(&active, true);
  pthread_mutex_unlock(&lock);
  return events ? KF_OK : KF_ERR_OUT_OF_MEMORY;
}

static void put_meta(core_json *j, int pid, int tid, const char *what, const char *name) {
  core_json_obj(j, NULL);
  core_json_str(j, "ph", "M");
  core_json_int(j, "pid", pid);
  core_json_int(j, "tid", tid);
  core_json_str(j, "name", what);
  core_json_obj(j, "args");
  core_json_str(j, "name", name);
  core_json_obj_end(j);
  core_json_obj_end(j);
}

/* Names the processes and the lanes that appear in the events. */
static void put_metadata(core_json *j) {
  put_meta(j, 1, 0, "process_name", "kfuse host");
  char gpu[300];
  snprintf(gpu, sizeof gpu, "GPU %s", gpu_name);
  if (gpu_name[0]) put_meta(j, 2, 0, "process_name", gpu);
  bool seen[2][64] = {{false}};
  for (size_t i = 0; i < n_events; i++) {
    const trace_event *e = &events[i];
    int p = e->pid == 2;
    if (e->tid < 0 || e->tid >= 64 || seen[p][e->tid]) continue;
    seen[p][e->tid] = true;
    char name[64];
    if (!p)
      snprintf(name, sizeof name, "thread %d", e->tid);
    else if (e->tid)
      snprintf(name, sizeof name, "kfuse stream %d", e->tid);
    else
      snprintf(name, sizeof name, "caller stream");
    put_meta(j, e->pid, e->tid, "thread_name", name);
  }
}

static void put_event(core_json *j, const trace_event *e) {
  char ph[2] = {e->ph, 0};
  core_json_obj(j, NULL);
  core_json_str(j, "ph", ph);
  core_json_int(j, "pid", e->pid);
  core_json_int(j, "tid", e->tid);
  core_json_fixed(j, "ts", e->ts, 3);
  if (e->ph == 'X') core_json_fixed(j, "dur", e->dur, 3);
  if (e->ph != 'E') {
    core_json_str(j, "name", e->name);
    core_json_str(j, "cat", e->pid == 1 ? "host" : "kernel");
  }
  if (e->args) core_json_raw(j, "args", e->args);
  core_json_obj_end(j);
}

/* The whole document, or NULL on out of memory. */
static char *render(void) {
  core_str out = {0};
  core_json j;
  core_json_init(&j, &out);
  core_json_obj(&j, NULL);
  core_json_str(&j, "displayTimeUnit", "ms");
  core_json_arr_lines(&j, "traceEvents");
  put_metadata(&j);
  for (size_t i = 0; i < n_events; i++) put_event(&j, &events[i]);
  core_json_arr_end(&j);
  core_json_obj_end(&j);
  core_str_puts(&out, "\n");
  return core_str_take(&out);
}

kf_status kf_trace_stop(kf_ctx *ctx, const char *path) {
  pthread_mutex_lock(&lock);
  bool was = atomic_exchange(&active, false);
  kf_status st = KF_OK;
  if (!was || !path) {
    st = core_error(ctx, KF_ERR_INVALID_ARG, "kf_trace_stop: %s",
                    !was ? "no trace is recording (call kf_trace_start)" : "path is NULL");
  } else {
    char *text = render(), shown[1024]; /* the path as messages show it */
    core_escaped(shown, sizeof shown, path);
    FILE *f = text ? fopen(path, "w") : NULL;
    if (!text) {
      st = core_error(ctx, KF_ERR_OUT_OF_MEMORY, "out of memory writing the trace");
    } else if (!f) {
      st = core_error(ctx, KF_ERR_IO, "cannot write the trace to %s", shown);
    } else {
      size_t n = strlen(text);
      bool ok = fwrite(text, 1, n, f) == n;
      if (fclose(f) != 0 || !ok)
        st = core_error(ctx, KF_ERR_IO, "writing the trace to %s failed", shown);
    }
    free(text);
  }
  clear_events();
  pthread_mutex_unlock(&lock);
  return st;
}
