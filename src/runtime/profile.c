/* profile.c - kf_plan_profile: one run with a CUDA event around every
 * launch (on the caller's stream, or on kfuse's streams as scheduled), read
 * back as per-launch times, bandwidth from the plan's minimum bytes, and
 * the registers and occupancy measured at load; fed to the trace. */
#include "runtime/profile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "runtime/fallback.h"
#include "runtime/launch.h"
#include "runtime/rt.h"
#include "runtime/rt_plan.h"
#include "runtime/rt_state.h"
#include "runtime/trace.h"

typedef struct prof_run {
  rt_plan *plan;
  const rt_driver *d;
  CUstream caller;
  CUstream pool[RT_MAX_STREAMS];
  bool streams;   /* launches on the pool as the schedule says */
  CUevent t0;     /* recorded on the caller's stream before everything */
  CUevent *start; /* per launch */
  CUevent *end;
  double host_t0; /* trace time when t0 was recorded */
} prof_run;

static kf_status prof_fail(prof_run *p, CUresult r, const char *what) {
  return rt_fail(p->plan->ctx, p->plan, p->plan->state, r, what);
}

static kf_status make_events(prof_run *p, int n) {
  p->start = core_calloc((size_t)n + 1, sizeof *p->start);
  p->end = core_calloc((size_t)n + 1, sizeof *p->end);
  if (!p->start || !p->end)
    return rt_plan_error(p->plan, KF_ERR_OUT_OF_MEMORY, "kf_plan_profile: out of memory");
  CUresult r = p->d->EventCreate(&p->t0, CU_EVENT_DEFAULT);
  for (int i = 0; i < n && r == CUDA_SUCCESS; i++) {
    r = p->d->EventCreate(&p->start[i], CU_EVENT_DEFAULT);
    if (r == CUDA_SUCCESS) r = p->d->EventCreate(&p->end[i], CU_EVENT_DEFAULT);
  }
  return r == CUDA_SUCCESS ? KF_OK : prof_fail(p, r, "cuEventCreate");
}

static void free_events(prof_run *p, int n) {
  if (p->t0) p->d->EventDestroy(p->t0);
  for (int i = 0; i < n; i++) {
    if (p->start && p->start[i]) p->d->EventDestroy(p->start[i]);
    if (p->end && p->end[i]) p->d->EventDestroy(p->end[i]);
  }
  free(p->start);
  free(p->end);
}

/* The stream launch L goes on, after waiting for its dependencies' ends
 * on other streams. */
static kf_status launch_stream(prof_run *p, int L, CUstream *out) {
  rt_launch *l = &p->plan->launches[L];
  *out = p->streams ? p->pool[l->stream] : p->caller;
  if (!p->streams) return KF_OK;
  for (int i = 0; i < l->n_deps; i++) {
    int m = l->deps[i];
    if (p->plan->launches[m].stream == l->stream) continue;
    CUresult r = p->d->StreamWaitEvent(*out, p->end[m], 0);
    if (r != CUDA_SUCCESS) return prof_fail(p, r, "cuStreamWaitEvent");
  }
  return KF_OK;
}

static kf_status run_timed(prof_run *p) {
  struct rt_plan *rp = p->plan;
  p->host_t0 = rt_trace_now_us();
  CUresult r = p->d->EventRecord(p->t0, p->caller);
  for (int s = 0; p->streams && s < rp->n_streams && r == CUDA_SUCCESS; s++)
    r = p->d->StreamWaitEvent(p->pool[s], p->t0, 0);
  if (r != CUDA_SUCCESS) return prof_fail(p, r, "forking streams");
  kf_status st = KF_OK;
  for (int L = 0; L < rp->n_launches && st == KF_OK; L++) {
    CUstream s;
    st = launch_stream(p, L, &s);
    if (st != KF_OK) break;
    /* rt_launch_one opens the "launch ENTRY" span itself. */
    r = p->d->EventRecord(p->start[L], s);
    if (r == CUDA_SUCCESS) st = rt_launch_one(p->plan, L, s, false);
    if (r == CUDA_SUCCESS && st == KF_OK) r = p->d->EventRecord(p->end[L], s);
    if (r != CUDA_SUCCESS) st = prof_fail(p, r, "cuEventRecord");
    /* The caller's stream waits for every launch, so its sync covers all. */
    if (st == KF_OK && p->streams && (r = p->d->StreamWaitEvent(p->caller, p->end[L], 0)))
      st = prof_fail(p, r, "joining streams");
  }
  if (rp->state->lost) return KF_ERR_CONTEXT_LOST;
  r = p->d->StreamSynchronize(p->caller);
  if (st == KF_OK && r != CUDA_SUCCESS) st = prof_fail(p, r, "cuStreamSynchronize");
  return st;
}

static int64_t launch_bytes(const fuse_plan *fp, int L) {
  int64_t b = 0;
  for (int k = 0; k < fp->launches[L].n_kernels; k++) {
    const fuse_kernel *kn = &fp->kernels[fp->launches[L].kernels[k]];
    b += kn->bytes_read + kn->bytes_written;
  }
  return b;
}

static void trace_launch(const prof_run *p, const kf_profile *out, const kf_launch_profile *lp) {
  char args[256];
  snprintf(args, sizeof args,
           "{\"grid\":%u,\"block\":%u,\"registers\":%d,\"occupancy\":%.3f,\"bytes\":%lld,"
           "\"gbps\":%.1f}",
           lp->grid, lp->block, lp->registers, lp->occupancy, (long long)lp->bytes, lp->gbps);
  rt_trace_gpu(out->device, lp->name, lp->stream, p->host_t0 + lp->start_ms * 1e3, lp->ms * 1e3,
               args);
}

static kf_status read_back(prof_run *p, kf_profile *out) {
  struct rt_plan *rp = p->plan;
  const fuse_plan *fp = p->plan->fuse;
  out->launches = core_calloc((size_t)rp->n_launches + 1, sizeof *out->launches);
  if (!out->launches)
    return rt_plan_error(p->plan, KF_ERR_OUT_OF_MEMORY, "kf_plan_profile: out of memory");
  out->n_launches = rp->n_launches;
  for (int L = 0; L < rp->n_launches; L++) {
    const rt_launch *l = &rp->launches[L];
    const rt_launch *k = rt_fallback_kernel(l); /* the form this binding ran (fallback.c) */
    kf_launch_profile *lp = &out->launches[L];
    float a = 0, b = 0;
    CUresult r = p->d->EventElapsedTime(&a, p->t0, p->start[L]);
    if (r == CUDA_SUCCESS) r = p->d->EventElapsedTime(&b, p->t0, p->end[L]);
    if (r != CUDA_SUCCESS) return prof_fail(p, r, "cuEventElapsedTime");
    snprintf(lp->name, sizeof lp->name, "%s", l->entry);
    lp->kernels = fp->launches[L].n_kernels;
    lp->stream = p->streams ? l->stream + 1 : 0;
    lp->start_ms = a;
    lp->ms = b - a;
    lp->bytes = launch_bytes(fp, L);
    lp->gbps = lp->ms > 0 ? (double)lp->bytes / (lp->ms * 1e6) : 0;
    lp->grid = k->grid, lp->block = k->block, lp->smem_bytes = k->smem;
    lp->registers = k->occ.regs, lp->local_bytes = k->occ.local_bytes;
    lp->blocks_per_sm = k->occ.blocks_per_sm, lp->occupancy = k->occ.occupancy;
    if (b > out->ms) out->ms = b;
    trace_launch(p, out, lp);
  }
  out->gbps = out->ms > 0 ? (double)out->bytes / (out->ms * 1e6) : 0;
  return KF_OK;
}

/* Loaded, validated, bound: what kf_plan_run does before launching. */
static kf_status prepare(rt_plan *plan, rt_state *rt, const kf_tensor *in, int n_in,
                         const kf_tensor *outs, int n_out, CUstream stream) {
  struct rt_plan *rp = plan;
  kf_status st = rt_validate(plan, rt, in, n_in, outs, n_out);
  if (st == KF_OK && !(rp->loaded && rp->loaded_code == plan->code)) st = plan->load(plan->owner);
  if (st == KF_OK) st = rt_plan_ready_workspace(plan, rt);
  if (st == KF_OK) st = rt_bind_args(plan, in, outs, stream);
  return st;
}

kf_status rt_plan_profile(rt_plan *plan, const kf_tensor *inputs, int n_inputs,
                          const kf_tensor *outputs, int n_outputs, void *stream, kf_profile *out) {
  if (out) memset(out, 0, sizeof *out);
  if (!plan || !out)
    return plan ? rt_plan_error(plan, KF_ERR_INVALID_ARG, "kf_plan_profile: out is NULL")
                : KF_ERR_INVALID_ARG;
  if (!plan->fuse || !plan->graph)
    return rt_plan_error(plan, KF_ERR_INVALID_ARG, "kf_plan_profile: the plan was not created");
  rt_state *rt;
  bool pushed;
  kf_status st = rt_state_get(plan->ctx, &rt);
  if (st != KF_OK) return rt_plan_error(plan, st, "%s", kf_ctx_errmsg(plan->ctx));
  if ((st = rt_enter(plan->ctx, rt, &pushed)) != KF_OK) return st;
  st = prepare(plan, rt, inputs, n_inputs, outputs, n_outputs, (CUstream)stream);
  struct rt_plan *rp = plan;
  prof_run p = {.plan = plan, .d = rt->drv, .caller = (CUstream)stream};
  p.streams = rp->mode != KF_MODE_PLAIN && rp->n_streams > 1;
  snprintf(out->device, sizeof out->device, "%s", rt->info.name);
  out->mode = p.streams ? KF_MODE_STREAMS : KF_MODE_PLAIN;
  out->bytes = plan->fuse->bytes_fused;
  if (st == KF_OK && p.streams) st = rt_pool_streams(plan->ctx, plan, rt, rp->n_streams, p.pool);
  if (st == KF_OK) st = make_events(&p, rp->n_launches);
  if (st == KF_OK) st = run_timed(&p);
  if (st == KF_OK) st = read_back(&p, out);
  if (st != KF_OK) kf_profile_release(out);
  free_events(&p, rp->n_launches);
  rt_leave(rt, pushed);
  return st;
}

void kf_profile_release(kf_profile *profile) {
  if (!profile) return;
  free(profile->launches);
  profile->launches = NULL;
  profile->n_launches = 0;
}
