/* bench.c - kf_plan_benchmark and kf_device_copy_bandwidth: medians of CUDA
 * event timings after warm-up, host time per kf_plan_run call, the
 * device-to-device copy ceiling, and optional NVML utilization sampling. */
#include "runtime/bench.h"

#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/alloc.h"
#include "runtime/launch.h"
#include "runtime/nvtx.h"
#include "runtime/rt.h"
#include "runtime/rt_plan.h"
#include "runtime/rt_state.h"
#include "runtime/trace.h"

void kf_bench_options_init(kf_bench_options *opt) {
  if (!opt) return;
  opt->warmup = 3;
  opt->iters = 20;
  opt->host_timing = true;
  opt->nvml = true;
}

static double mono_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_float(const void *a, const void *b) {
  float x = *(const float *)a, y = *(const float *)b;
  return (x > y) - (x < y);
}

/* Times between event pairs: median, min and max, in ms. */
static CUresult event_stats(const rt_driver *d, CUevent *ev, int n, double *med, double *lo,
                            double *hi) {
  float *ms = core_calloc((size_t)n + 1, sizeof *ms);
  if (!ms) return CUDA_ERROR_OUT_OF_MEMORY;
  CUresult r = CUDA_SUCCESS;
  for (int i = 0; i < n && r == CUDA_SUCCESS; i++)
    r = d->EventElapsedTime(&ms[i], ev[2 * i], ev[2 * i + 1]);
  if (r == CUDA_SUCCESS && n > 0) {
    qsort(ms, (size_t)n, sizeof *ms, cmp_float);
    *med = n % 2 ? ms[n / 2] : 0.5 * ((double)ms[n / 2 - 1] + ms[n / 2]);
    *lo = ms[0];
    *hi = ms[n - 1];
  }
  free(ms);
  return r;
}

static CUresult events_create(const rt_driver *d, CUevent *ev, int n) {
  CUresult r = CUDA_SUCCESS;
  for (int i = 0; i < n && r == CUDA_SUCCESS; i++) r = d->EventCreate(&ev[i], CU_EVENT_DEFAULT);
  return r;
}

static void events_destroy(const rt_driver *d, CUevent *ev, int n) {
  for (int i = 0; ev && i < n; i++)
    if (ev[i]) d->EventDestroy(ev[i]);
  free(ev);
}

/* ---- NVML: loaded if present, silently skipped if not --------------------- */

typedef struct nvml_util {
  unsigned gpu, memory;
} nvml_util;
typedef int (*nvml_init_fn)(void);
typedef int (*nvml_handle_fn)(unsigned, void **);
typedef int (*nvml_rates_fn)(void *, nvml_util *);

typedef struct sampler {
  void *lib;
  nvml_rates_fn rates;
  nvml_init_fn shutdown;
  void *dev;
  pthread_t thread;
  atomic_int stop;
  int n;
  double gpu, mem;
} sampler;

static void *sample_loop(void *arg) {
  sampler *s = arg;
  while (!atomic_load(&s->stop)) {
    nvml_util u;
    if (s->rates(s->dev, &u) == 0) s->gpu += u.gpu, s->mem += u.memory, s->n++;
    struct timespec ts = {0, 10 * 1000 * 1000};
    nanosleep(&ts, NULL);
  }
  return NULL;
}

/* Starts sampling device `ordinal` (NVML and CUDA order agree unless
 * CUDA_DEVICE_ORDER or CUDA_VISIBLE_DEVICES reorder them). */
static bool sampler_start(sampler *s, int ordinal) {
  memset(s, 0, sizeof *s);
  s->lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!s->lib) return false;
  nvml_init_fn init = (nvml_init_fn)dlsym(s->lib, "nvmlInit_v2");
  nvml_handle_fn handle = (nvml_handle_fn)dlsym(s->lib, "nvmlDeviceGetHandleByIndex_v2");
  s->rates = (nvml_rates_fn)dlsym(s->lib, "nvmlDeviceGetUtilizationRates");
  s->shutdown = (nvml_init_fn)dlsym(s->lib, "nvmlShutdown");
  bool ok = init && handle && s->rates && s->shutdown && init() == 0;
  if (ok && (handle((unsigned)ordinal, &s->dev) != 0 ||
             pthread_create(&s->thread, NULL, sample_loop, s) != 0)) {
    s->shutdown();
    ok = false;
  }
  if (!ok) dlclose(s->lib);
  if (!ok) s->lib = NULL;
  return ok;
}

static void sampler_stop(sampler *s, kf_bench_result *out) {
  if (!s->lib) return;
  atomic_store(&s->stop, 1);
  pthread_join(s->thread, NULL);
  s->shutdown();
  dlclose(s->lib);
  out->nvml_samples = s->n;
  if (s->n) out->gpu_util = s->gpu / s->n, out->mem_util = s->mem / s->n;
}

/* ---- the plan ------------------------------------------------------------ */

typedef struct bench_args {
  rt_plan *plan;
  const kf_tensor *in, *out;
  int n_in, n_out;
  CUstream stream;
} bench_args;

static kf_status run(const bench_args *a) {
  return rt_plan_run(a->plan, a->in, a->n_in, a->out, a->n_out, a->stream);
}

/* Host microseconds per kf_plan_run call in `mode`, calls back to back. */
static kf_status host_time(const bench_args *a, const rt_driver *d, kf_run_mode mode, int iters,
                           double *us) {
  kf_status st = rt_plan_set_mode(a->plan, mode);
  for (int i = 0; i < 2 && st == KF_OK; i++) st = run(a); /* builds the graph once */
  CUresult r = st == KF_OK ? d->StreamSynchronize(a->stream) : CUDA_SUCCESS;
  double t0 = mono_us();
  for (int i = 0; i < iters && st == KF_OK && r == CUDA_SUCCESS; i++) st = run(a);
  double t1 = mono_us();
  if (st == KF_OK && r == CUDA_SUCCESS) r = d->StreamSynchronize(a->stream);
  if (st == KF_OK && r != CUDA_SUCCESS)
    st = rt_fail(a->plan->ctx, a->plan, a->plan->state, r, "cuStreamSynchronize");
  *us = (t1 - t0) / iters;
  return st;
}

/* Warm-up, then iters runs each between two events, read after one sync. */
static kf_status device_time(const bench_args *a, rt_state *rt, const kf_bench_options *o,
                             kf_bench_result *res) {
  const rt_driver *d = rt->drv;
  kf_status st = KF_OK;
  for (int i = 0; i < o->warmup && st == KF_OK; i++) st = run(a);
  if (st != KF_OK) return st;
  CUevent *ev = core_calloc((size_t)o->iters * 2 + 1, sizeof *ev);
  if (!ev) return rt_plan_error(a->plan, KF_ERR_OUT_OF_MEMORY, "kf_plan_benchmark: out of memory");
  CUresult r = events_create(d, ev, 2 * o->iters);
  if (r == CUDA_SUCCESS) r = d->StreamSynchronize(a->stream);
  sampler smp;
  bool sampling = r == CUDA_SUCCESS && o->nvml && sampler_start(&smp, (int)rt->dev);
  for (int i = 0; i < o->iters && r == CUDA_SUCCESS && st == KF_OK; i++) {
    r = d->EventRecord(ev[2 * i], a->stream);
    if (r == CUDA_SUCCESS) st = run(a);
    if (r == CUDA_SUCCESS && st == KF_OK) r = d->EventRecord(ev[2 * i + 1], a->stream);
  }
  if (r == CUDA_SUCCESS && st == KF_OK) r = d->StreamSynchronize(a->stream);
  if (sampling) sampler_stop(&smp, res);
  if (r == CUDA_SUCCESS && st == KF_OK)
    r = event_stats(d, ev, o->iters, &res->ms_median, &res->ms_min, &res->ms_max);
  if (st == KF_OK && r != CUDA_SUCCESS) st = rt_fail(a->plan->ctx, a->plan, rt, r, "timing runs");
  events_destroy(d, ev, 2 * o->iters);
  return st;
}

kf_status rt_plan_benchmark(rt_plan *plan, const kf_tensor *inputs, int n_inputs,
                            const kf_tensor *outputs, int n_outputs, void *stream,
                            const kf_bench_options *opt, kf_bench_result *out) {
  if (!plan || !out)
    return plan ? rt_plan_error(plan, KF_ERR_INVALID_ARG, "kf_plan_benchmark: out is NULL")
                : KF_ERR_INVALID_ARG;
  kf_bench_options o;
  kf_bench_options_init(&o);
  if (opt) o = *opt;
  if (o.iters < 1) o.iters = 1;
  if (o.warmup < 0) o.warmup = 0;
  memset(out, 0, sizeof *out);
  out->host_us_plain = out->host_us_graph = out->gpu_util = out->mem_util = -1;
  if (!plan->fuse)
    return rt_plan_error(plan, KF_ERR_INVALID_ARG, "kf_plan_benchmark: the plan was not created");
  rt_state *rt;
  bool pushed;
  kf_status st = rt_state_get(plan->ctx, &rt);
  if (st != KF_OK) return rt_plan_error(plan, st, "%s", kf_ctx_errmsg(plan->ctx));
  if ((st = rt_enter(plan->ctx, rt, &pushed)) != KF_OK) return st;
  bench_args a = {plan, inputs, outputs, n_inputs, n_outputs, (CUstream)stream};
  rt_span_push("benchmark");
  st = device_time(&a, rt, &o, out);
  out->iters = o.iters;
  out->bytes = plan->fuse->bytes_fused;
  out->gbps = out->ms_median > 0 ? (double)out->bytes / (out->ms_median * 1e6) : 0;
  if (st == KF_OK && o.host_timing) {
    kf_run_mode mode = plan->mode;
    st = host_time(&a, rt->drv, KF_MODE_PLAIN, o.iters, &out->host_us_plain);
    if (st == KF_OK) st = host_time(&a, rt->drv, KF_MODE_GRAPH, o.iters, &out->host_us_graph);
    rt_plan_set_mode(plan, mode);
  }
  rt_span_pop();
  rt_leave(rt, pushed);
  return st;
}

/* ---- the copy ceiling ---------------------------------------------------- */

static CUresult time_copies(const rt_driver *d, CUdeviceptr dst, CUdeviceptr src, size_t bytes,
                            int iters, double *ms) {
  CUevent *ev = core_calloc((size_t)iters * 2 + 1, sizeof *ev);
  if (!ev) return CUDA_ERROR_OUT_OF_MEMORY;
  CUresult r = events_create(d, ev, 2 * iters);
  for (int i = 0; i < 3 && r == CUDA_SUCCESS; i++) r = d->MemcpyDtoDAsync(dst, src, bytes, NULL);
  for (int i = 0; i < iters && r == CUDA_SUCCESS; i++) {
    r = d->EventRecord(ev[2 * i], NULL);
    if (r == CUDA_SUCCESS) r = d->MemcpyDtoDAsync(dst, src, bytes, NULL);
    if (r == CUDA_SUCCESS) r = d->EventRecord(ev[2 * i + 1], NULL);
  }
  if (r == CUDA_SUCCESS) r = d->StreamSynchronize(NULL);
  double lo, hi;
  if (r == CUDA_SUCCESS) r = event_stats(d, ev, iters, ms, &lo, &hi);
  events_destroy(d, ev, 2 * iters);
  return r;
}

kf_status kf_device_copy_bandwidth(kf_ctx *ctx, size_t bytes, int iters, double *gbps) {
  if (!gbps || bytes == 0 || iters < 1)
    return core_error(ctx, KF_ERR_INVALID_ARG, "kf_device_copy_bandwidth: bad arguments");
  *gbps = 0;
  rt_state *rt;
  bool pushed;
  kf_status st = rt_state_get(ctx, &rt);
  if (st != KF_OK) return st;
  /* The recording fake has no copy engine to time. */
  if (!rt->drv->MemcpyDtoDAsync)
    return core_error(ctx, KF_ERR_UNSUPPORTED, "cuMemcpyDtoDAsync_v2 is not available in %s",
                      rt->drv->name ? rt->drv->name : "the driver");
  if ((st = rt_enter(ctx, rt, &pushed)) != KF_OK) return st;
  CUdeviceptr a = 0, b = 0;
  double ms = 0;
  CUresult r = rt->drv->MemAlloc(&a, bytes);
  if (r == CUDA_SUCCESS) r = rt->drv->MemAlloc(&b, bytes);
  if (r == CUDA_SUCCESS) r = rt->drv->MemsetD8(a, 0x3c, bytes);
  rt_span_push("copy bandwidth");
  if (r == CUDA_SUCCESS) r = time_copies(rt->drv, b, a, bytes, iters, &ms);
  rt_span_pop();
  if (a) rt->drv->MemFree(a);
  if (b) rt->drv->MemFree(b);
  rt_leave(rt, pushed);
  if (r != CUDA_SUCCESS) return rt_fail(ctx, NULL, rt, r, "timing a device-to-device copy");
  *gbps = ms > 0 ? 2.0 * (double)bytes / (ms * 1e6) : 0;
  return KF_OK;
}
