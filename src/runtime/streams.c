/* streams.c - the launch schedule (dependencies from memory conflicts,
 * critical path, stream assignment) and streams mode: independent launches
 * on the context's prioritized streams, forked from and joined back to the
 * caller's stream with events. */
#include "runtime/streams.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "runtime/launch.h"
#include "runtime/rt.h"
#include "runtime/rt_state.h"

/* One memory access of a launch: a buffer region, read or written. */
typedef struct access {
  fuse_home home;
  int index;
  int64_t lo, hi; /* byte range, workspace only */
  bool write;
} access;

static int find_buffer(const fuse_plan *fp, int32_t value) {
  for (int b = 0; b < fp->n_buffers; b++)
    if (fp->buffers[b].value == value) return b;
  return -1;
}

static void add_access(const fuse_plan *fp, int32_t value, bool write, access *out, int *n) {
  int b = find_buffer(fp, value);
  if (b < 0) return; /* constants and values computed in registers */
  const fuse_buffer *buf = &fp->buffers[b];
  out[(*n)++] = (access){buf->home, buf->index, buf->offset, buf->offset + buf->bytes, write};
}

/* Every buffer a launch reads or writes, from the fuser's kernels. */
static access *launch_accesses(const fuse_plan *fp, int L, int *n) {
  const fuse_launch *fl = &fp->launches[L];
  int cap = 0;
  for (int k = 0; k < fl->n_kernels; k++)
    cap += fp->kernels[fl->kernels[k]].n_inputs + fp->kernels[fl->kernels[k]].n_outputs;
  access *a = core_calloc((size_t)cap + 1, sizeof *a);
  *n = 0;
  if (!a) return NULL;
  for (int k = 0; k < fl->n_kernels; k++) {
    const fuse_kernel *kn = &fp->kernels[fl->kernels[k]];
    for (int i = 0; i < kn->n_inputs; i++) add_access(fp, kn->inputs[i], false, a, n);
    for (int i = 0; i < kn->n_outputs; i++) add_access(fp, kn->outputs[i], true, a, n);
  }
  return a;
}

static bool conflict(const access *a, int na, const access *b, int nb) {
  for (int i = 0; i < na; i++)
    for (int j = 0; j < nb; j++) {
      if (!a[i].write && !b[j].write) continue;
      if (a[i].home != b[j].home) continue;
      if (a[i].home == HOME_WORKSPACE ? a[i].lo < b[j].hi && b[j].lo < a[i].hi
                                      : a[i].index == b[j].index)
        return true;
    }
  return false;
}

/* deps[L] = every earlier launch whose memory L's conflicts with (read
 * after write, and write after read or write of reused workspace). */
static kf_status compute_deps(rt_plan *plan) {
  const fuse_plan *fp = plan->fuse;
  struct rt_plan *rp = plan;
  int n = rp->n_launches;
  access **acc = core_calloc((size_t)n + 1, sizeof *acc);
  int *nacc = core_calloc((size_t)n + 1, sizeof *nacc);
  kf_status st = acc && nacc ? KF_OK : KF_ERR_OUT_OF_MEMORY;
  for (int L = 0; L < n && st == KF_OK; L++)
    if (!(acc[L] = launch_accesses(fp, L, &nacc[L]))) st = KF_ERR_OUT_OF_MEMORY;
  for (int L = 0; L < n && st == KF_OK; L++) {
    rt_launch *l = &rp->launches[L];
    free(l->deps);
    l->deps = core_calloc((size_t)L + 1, sizeof *l->deps);
    l->n_deps = 0;
    if (!l->deps) st = KF_ERR_OUT_OF_MEMORY;
    for (int M = 0; M < L && st == KF_OK; M++)
      if (conflict(acc[M], nacc[M], acc[L], nacc[L])) l->deps[l->n_deps++] = M;
    const fuse_launch *fl = &fp->launches[L];
    l->cost = 1;
    for (int k = 0; k < fl->n_kernels; k++)
      l->cost += fp->kernels[fl->kernels[k]].bytes_read + fp->kernels[fl->kernels[k]].bytes_written;
  }
  for (int L = 0; acc && L < n; L++) free(acc[L]);
  free(acc);
  free(nacc);
  if (st != KF_OK) return rt_plan_error(plan, st, "scheduling: out of memory");
  return KF_OK;
}

static bool has_dep(const rt_launch *l, int m) {
  for (int i = 0; i < l->n_deps; i++)
    if (l->deps[i] == m) return true;
  return false;
}

/* to_sink by a reverse sweep, then the critical path: from the heaviest
 * source, each step to the successor that carries the rest of the length. */
static void mark_critical(struct rt_plan *rp) {
  int n = rp->n_launches;
  rt_launch *ls = rp->launches;
  for (int L = 0; L < n; L++) ls[L].to_sink = 0, ls[L].critical = false;
  for (int S = n - 1; S >= 0; S--) {
    ls[S].to_sink += ls[S].cost; /* to_sink held the best successor's */
    for (int i = 0; i < ls[S].n_deps; i++) {
      rt_launch *m = &ls[ls[S].deps[i]];
      if (ls[S].to_sink > m->to_sink) m->to_sink = ls[S].to_sink;
    }
  }
  int cur = -1;
  for (int L = 0; L < n; L++)
    if (ls[L].n_deps == 0 && (cur < 0 || ls[L].to_sink > ls[cur].to_sink)) cur = L;
  while (cur >= 0) {
    ls[cur].critical = true;
    int next = -1;
    for (int S = cur + 1; S < n; S++)
      if (has_dep(&ls[S], cur) && ls[S].to_sink == ls[cur].to_sink - ls[cur].cost) {
        next = S;
        break;
      }
    cur = next;
  }
}

/* Critical launches on stream 0 (the highest priority). Others continue a
 * stream whose last launch they depend on (no event needed), else go to
 * the least loaded of the remaining streams. */
static void assign_streams(struct rt_plan *rp, int n_streams) {
  int64_t load[RT_MAX_STREAMS] = {0};
  int tail[RT_MAX_STREAMS];
  for (int s = 0; s < RT_MAX_STREAMS; s++) tail[s] = -1;
  rp->n_streams = 1;
  for (int L = 0; L < rp->n_launches; L++) {
    rt_launch *l = &rp->launches[L];
    int s = 0;
    if (!l->critical && n_streams > 1) {
      s = -1;
      for (int t = 1; t < n_streams && s < 0; t++)
        if (tail[t] >= 0 && has_dep(l, tail[t])) s = t;
      for (int t = 1; t < n_streams && s < 0; t++)
        if (tail[t] < 0) s = t;
      if (s < 0) {
        s = 1;
        for (int t = 2; t < n_streams; t++)
          if (load[t] < load[s]) s = t;
      }
    }
    l->stream = s;
    load[s] += l->cost;
    tail[s] = L;
    if (s + 1 > rp->n_streams) rp->n_streams = s + 1;
  }
}

kf_status rt_schedule(rt_plan *plan, int n_streams) {
  struct rt_plan *rp = plan;
  if (n_streams < 1) n_streams = 1;
  if (n_streams > RT_MAX_STREAMS) n_streams = RT_MAX_STREAMS;
  kf_status st = compute_deps(plan);
  if (st != KF_OK) return st;
  mark_critical(rp);
  assign_streams(rp, n_streams);
  rp->scheduled = true;
  return KF_OK;
}

static kf_status make_event(rt_plan *plan, CUevent *e) {
  if (*e) return KF_OK;
  CUresult r = plan->state->drv->EventCreate(e, CU_EVENT_DISABLE_TIMING);
  if (r != CUDA_SUCCESS) {
    *e = NULL;
    return rt_fail(plan->ctx, plan, plan->state, r, "cuEventCreate");
  }
  return KF_OK;
}

/* Events: the fork, a join per stream, and a "done" per launch that a
 * launch on another stream waits for. Created once, reused by every run. */
static kf_status make_events(rt_plan *plan) {
  struct rt_plan *rp = plan;
  kf_status st = make_event(plan, &rp->fork_ev);
  for (int s = 0; s < rp->n_streams && st == KF_OK; s++) st = make_event(plan, &rp->join_ev[s]);
  for (int L = 0; L < rp->n_launches && st == KF_OK; L++) {
    rt_launch *l = &rp->launches[L];
    for (int i = 0; i < l->n_deps && st == KF_OK; i++)
      if (rp->launches[l->deps[i]].stream != l->stream)
        st = make_event(plan, &rp->launches[l->deps[i]].done);
  }
  return st;
}

/* Waits, on L's stream, for the last dependency on each other stream
 * (stream order covers the earlier ones). */
static kf_status wait_deps(rt_plan *plan, int L, CUstream *pool) {
  struct rt_plan *rp = plan;
  const rt_driver *d = rp->state->drv;
  rt_launch *l = &rp->launches[L];
  int last[RT_MAX_STREAMS];
  for (int s = 0; s < RT_MAX_STREAMS; s++) last[s] = -1;
  for (int i = 0; i < l->n_deps; i++) {
    int m = l->deps[i], s = rp->launches[m].stream;
    if (s != l->stream && m > last[s]) last[s] = m;
  }
  for (int s = 0; s < rp->n_streams; s++) {
    if (last[s] < 0) continue;
    CUresult r = d->StreamWaitEvent(pool[l->stream], rp->launches[last[s]].done, 0);
    if (r != CUDA_SUCCESS) return rt_fail(plan->ctx, plan, rp->state, r, "cuStreamWaitEvent");
  }
  return KF_OK;
}

static kf_status fork_join(rt_plan *plan, CUstream caller, CUstream *pool, bool join) {
  struct rt_plan *rp = plan;
  const rt_driver *d = rp->state->drv;
  CUresult r = CUDA_SUCCESS;
  if (!join) {
    r = d->EventRecord(rp->fork_ev, caller);
    for (int s = 0; s < rp->n_streams && r == CUDA_SUCCESS; s++)
      r = d->StreamWaitEvent(pool[s], rp->fork_ev, 0);
  } else {
    for (int s = 0; s < rp->n_streams && r == CUDA_SUCCESS; s++) {
      r = d->EventRecord(rp->join_ev[s], pool[s]);
      if (r == CUDA_SUCCESS) r = d->StreamWaitEvent(caller, rp->join_ev[s], 0);
    }
  }
  if (r != CUDA_SUCCESS)
    return rt_fail(plan->ctx, plan, rp->state, r, join ? "joining streams" : "forking streams");
  return KF_OK;
}

kf_status rt_run_streams(rt_plan *plan, CUstream stream) {
  struct rt_plan *rp = plan;
  if (rp->n_streams <= 1) return rt_run_plain(plan, stream); /* a chain: nothing to overlap */
  CUstream pool[RT_MAX_STREAMS];
  kf_status st = rt_pool_streams(plan->ctx, plan, rp->state, rp->n_streams, pool);
  if (st == KF_OK) st = make_events(plan);
  if (st == KF_OK) st = fork_join(plan, stream, pool, false);
  if (st != KF_OK) return st;
  const rt_driver *d = rp->state->drv;
  for (int L = 0; L < rp->n_launches && st == KF_OK; L++) {
    rt_launch *l = &rp->launches[L];
    st = wait_deps(plan, L, pool);
    if (st == KF_OK) st = rt_launch_one(plan, L, pool[l->stream], false);
    if (st == KF_OK && l->done) {
      CUresult r = d->EventRecord(l->done, pool[l->stream]);
      if (r != CUDA_SUCCESS) st = rt_fail(plan->ctx, plan, rp->state, r, "cuEventRecord");
    }
  }
  /* Join even after a failure, so the caller's stream never runs ahead of
   * work already queued on ours. */
  kf_status js = rp->state->lost ? KF_ERR_CONTEXT_LOST : fork_join(plan, stream, pool, true);
  return st != KF_OK ? st : js;
}
