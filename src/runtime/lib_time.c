/* lib_time.c - timing a loaded plan on scratch tensors, for the choice
 * between library calls and template kernels (src/pipeline/matmul_choice.c): the
 * whole plan in plain mode, or one library launch with each of its
 * cuBLASLt candidates; and the disk-cache record that keeps the choice. */
#include "runtime/lib_time.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "ir/shape.h"
#include "runtime/cache.h"
#include "runtime/cache_state.h"
#include "runtime/launch.h"
#include "runtime/rt_plan.h"
#include "runtime/rt_state.h"

/* Zeroed device tensors for every graph input and output, as kf_tensors. */
typedef struct scratch {
  CUdeviceptr base;
  kf_tensor *in, *out;
} scratch;

static size_t value_bytes(const kf_graph *g, int32_t v) {
  const ir_node *n = &g->nodes[v];
  int64_t b = 0;
  ir_tensor_bytes(n->rank, n->shape, n->dtype, &b);
  return ((size_t)b + 255) / 256 * 256;
}

static kf_tensor tensor_at(const kf_graph *g, int32_t v, CUdeviceptr p) {
  const ir_node *n = &g->nodes[v];
  kf_tensor t = {(void *)(uintptr_t)p, n->dtype, n->rank, {0}};
  memcpy(t.shape, n->shape, sizeof n->shape[0] * (size_t)n->rank);
  return t;
}

static CUresult scratch_make(const rt_plan *rp, const rt_driver *d, scratch *s) {
  const kf_graph *g = rp->graph;
  memset(s, 0, sizeof *s);
  size_t total = 256;
  for (int i = 0; i < g->n_inputs; i++) total += value_bytes(g, g->inputs[i]);
  for (int i = 0; i < g->n_outputs; i++) total += value_bytes(g, g->outputs[i]);
  s->in = core_calloc((size_t)g->n_inputs + 1, sizeof *s->in);
  s->out = core_calloc((size_t)g->n_outputs + 1, sizeof *s->out);
  if (!s->in || !s->out) return CUDA_ERROR_OUT_OF_MEMORY;
  CUresult r = d->MemAlloc(&s->base, total);
  if (r == CUDA_SUCCESS) r = d->MemsetD8(s->base, 0, total);
  CUdeviceptr at = s->base;
  for (int i = 0; i < g->n_inputs; i++, at += value_bytes(g, g->inputs[i - 1]))
    s->in[i] = tensor_at(g, g->inputs[i], at);
  for (int i = 0; i < g->n_outputs; i++, at += value_bytes(g, g->outputs[i - 1]))
    s->out[i] = tensor_at(g, g->outputs[i], at);
  return r;
}

static void scratch_free(const rt_driver *d, scratch *s) {
  if (s->base) d->MemFree(s->base);
  free(s->in);
  free(s->out);
}

/* What one timing does: the plan, or one launch. */
typedef struct timed {
  rt_plan *plan;
  int launch; /* -1: the whole plan */
} timed;

static kf_status run_once(const timed *t, CUstream s) {
  return t->launch < 0 ? rt_run_plain(t->plan, s) : rt_launch_one(t->plan, t->launch, s, false);
}

/* The mean of reps runs after one warm-up, in ms, on stream s. */
static kf_status time_runs(const timed *t, const rt_driver *d, CUstream s, int reps, double *ms) {
  CUevent ev[2] = {NULL, NULL};
  CUresult r = d->EventCreate(&ev[0], CU_EVENT_DEFAULT);
  if (r == CUDA_SUCCESS) r = d->EventCreate(&ev[1], CU_EVENT_DEFAULT);
  kf_status st = r == CUDA_SUCCESS ? run_once(t, s) : KF_ERR_CUDA;
  if (st == KF_OK && (r = d->EventRecord(ev[0], s)) != CUDA_SUCCESS) st = KF_ERR_CUDA;
  for (int i = 0; i < reps && st == KF_OK; i++) st = run_once(t, s);
  if (st == KF_OK && (r = d->EventRecord(ev[1], s)) != CUDA_SUCCESS) st = KF_ERR_CUDA;
  if (st == KF_OK && (r = d->EventSynchronize(ev[1])) != CUDA_SUCCESS) st = KF_ERR_CUDA;
  float f = 0;
  if (st == KF_OK && (r = d->EventElapsedTime(&f, ev[0], ev[1])) != CUDA_SUCCESS) st = KF_ERR_CUDA;
  *ms = (double)f / (reps > 0 ? reps : 1);
  for (int i = 0; i < 2; i++)
    if (ev[i]) d->EventDestroy(ev[i]);
  if (st == KF_ERR_CUDA) return rt_fail(t->plan->ctx, t->plan, t->plan->state, r, "timing");
  return st;
}

kf_status rt_lib_time(rt_plan *rp, int launch, int reps, double *ms, int max_ms) {
  rt_state *rt = rp->state;
  const rt_driver *d = rt->drv;
  bool pushed;
  kf_status st = rt_enter(rp->ctx, rt, &pushed);
  if (st != KF_OK) return st;
  scratch s;
  CUstream stream = NULL;
  CUresult r = scratch_make(rp, d, &s);
  st = r == CUDA_SUCCESS ? rt_pool_streams(rp->ctx, rp, rt, 1, &stream)
                         : rt_fail(rp->ctx, rp, rt, r, "timing scratch (cuMemAlloc)");
  if (st == KF_OK) st = rt_plan_ready_workspace(rp, rt);
  if (st == KF_OK) st = rt_bind_args(rp, s.in, s.out, stream);
  timed t = {rp, launch};
  rt_launch *l = launch >= 0 ? &rp->launches[launch] : NULL;
  int n = l && l->lib ? l->lib->p.ncand : 1, keep = l && l->lib ? l->lib->cand : 0;
  for (int c = 0; c < n && c < max_ms && st == KF_OK; c++) {
    if (l && l->lib) l->lib->cand = c;
    st = time_runs(&t, d, stream, reps, &ms[c]);
  }
  if (l && l->lib) l->lib->cand = keep;
  scratch_free(d, &s);
  rt_leave(rt, pushed);
  return st;
}

int rt_lib_candidates(const rt_plan *rp, int launch) {
  const rt_launch *l = &rp->launches[launch];
  return l->lib ? l->lib->p.ncand : 0;
}

void rt_lib_set_candidate(rt_plan *rp, int launch, int cand) {
  rt_launch *l = &rp->launches[launch];
  if (l->lib && cand >= 0 && cand < l->lib->p.ncand) l->lib->cand = cand;
}

/* ---- the records ----------------------------------------------------------- */

/* A record read or written in this process: one key, its text. */
typedef struct rt_lib_memo {
  cache_key key;
  char *text;
  struct rt_lib_memo *next;
} rt_lib_memo;

static cache_key record_key(const char *what) {
  return rt_cache_key_blob("matmul-choice-v2", what, strlen(what));
}

static rt_state *memo_state(kf_ctx *ctx) {
  rt_state *rt = NULL;
  return rt_state_get(ctx, &rt) == KF_OK ? rt : NULL;
}

/* The memo's text for key into text (false: none, or it does not fit). */
static bool memo_get(kf_ctx *ctx, rt_state *rt, cache_key key, char *text, size_t size) {
  bool ok = false;
  pthread_mutex_lock(&ctx->lock);
  for (const rt_lib_memo *m = rt->lib_records; m && !ok; m = m->next)
    if (rt_cache_key_eq(m->key, key) && strlen(m->text) < size) {
      snprintf(text, size, "%s", m->text);
      ok = true;
    }
  pthread_mutex_unlock(&ctx->lock);
  return ok;
}

/* Keeps text under key (a newer text replaces an older one); out of
 * memory only forgets it. */
static void memo_put(kf_ctx *ctx, rt_state *rt, cache_key key, const char *text, size_t n) {
  char *copy = core_malloc(n + 1);
  if (!copy) return;
  memcpy(copy, text, n);
  copy[n] = 0;
  pthread_mutex_lock(&ctx->lock);
  rt_lib_memo *m = rt->lib_records;
  while (m && !rt_cache_key_eq(m->key, key)) m = m->next;
  if (!m && (m = core_calloc(1, sizeof *m)) != NULL) {
    m->key = key;
    m->next = rt->lib_records;
    rt->lib_records = m;
  }
  if (m) {
    free(m->text);
    m->text = copy, copy = NULL;
  }
  pthread_mutex_unlock(&ctx->lock);
  free(copy);
}

void rt_lib_records_free(rt_state *rt) {
  while (rt && rt->lib_records) {
    rt_lib_memo *m = rt->lib_records;
    rt->lib_records = m->next;
    free(m->text);
    free(m);
  }
}

bool rt_lib_record_get(kf_ctx *ctx, const char *what, char *text, size_t size) {
  cache_key key = record_key(what);
  rt_state *rt = memo_state(ctx);
  if (rt && memo_get(ctx, rt, key, text, size)) return true;
  void *data = NULL;
  size_t n = 0;
  if (!rt_cache_blob_get(ctx, key, &data, &n)) return false;
  bool ok = n > 0 && n < size;
  if (ok) {
    memcpy(text, data, n);
    text[n] = 0;
    if (rt) memo_put(ctx, rt, key, text, n);
  }
  free(data);
  return ok;
}

void rt_lib_record_put(kf_ctx *ctx, const char *what, const char *text) {
  cache_key key = record_key(what);
  rt_state *rt = memo_state(ctx);
  if (rt) memo_put(ctx, rt, key, text, strlen(text));
  rt_cache_blob_put(ctx, key, text, strlen(text));
}

const char *rt_lib_call_what(const rt_plan *rp, int launch, char *buf, size_t size) {
  const rt_launch *l = &rp->launches[launch];
  if (!l->lib) return NULL;
  const rt_gemm *g = &l->lib->p.g;
  char ver[300];
  snprintf(buf, size,
           "call b%lld m%lld n%lld k%lld ab%d d%d t%d%d s%lld,%lld,%lld bias%d act%d a%.9g "
           "b%.9g tf32 %d ws %lld cands %d %s",
           (long long)g->batch, (long long)g->m, (long long)g->n, (long long)g->k, (int)g->ab_type,
           (int)g->d_type, (int)g->a_trans, (int)g->b_trans, (long long)g->a_stride,
           (long long)g->b_stride, (long long)g->d_stride, (int)g->bias, (int)g->act,
           (double)g->alpha, (double)g->beta, (int)g->allow_tf32,
           (long long)rp->fuse->options.library_ws_bytes, l->lib->p.ncand,
           rt_lib_version(rp, ver, sizeof ver));
  return buf;
}

const char *rt_lib_version(const rt_plan *rp, char *buf, size_t size) {
  return rt_lib_version_of(rp ? rp->state : NULL, buf, size);
}

const char *rt_lib_version_of(const rt_state *rt, char *buf, size_t size) {
  snprintf(buf, size, "%s cuBLASLt %zu", rt ? rt->info.name : "?",
           rt && rt->lt ? rt->lt->GetVersion() : (size_t)0);
  return buf;
}
