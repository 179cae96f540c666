/* lib_launch.c - launches that are library calls: the context's cuBLASLt
 * handle, preparing a plan's matmul kernel as one cuBLASLt call, enqueuing
 * it, and capturing it into a child graph for graph mode. */
#include "runtime/lib_launch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/log.h"
#include "runtime/rt_state.h"

kf_status rt_lib_handle(kf_ctx *ctx, rt_state *rt, char *err, size_t errsize) {
  pthread_mutex_lock(&ctx->lock);
  kf_status st = KF_OK;
  if (!rt->lt_handle) {
    const rt_blaslt *lt = NULL;
    st = rt_blaslt_get(&lt, err, errsize);
    cublasLtHandle_t h = NULL;
    cublasStatus_t cs = st == KF_OK ? lt->Create(&h) : CUBLAS_STATUS_SUCCESS;
    if (st == KF_OK && cs != CUBLAS_STATUS_SUCCESS) {
      snprintf(err, errsize, "cublasLtCreate: %s", rt_cublas_status_name(cs));
      st = KF_ERR_UNSUPPORTED;
    }
    if (st == KF_OK) rt->lt = lt, rt->lt_handle = h;
  }
  pthread_mutex_unlock(&ctx->lock);
  return st;
}

kf_status rt_lib_prepare(rt_plan *rp, rt_state *rt, rt_launch *l, const fuse_kernel *k, int cand,
                         char *err, size_t errsize) {
  kf_status st = rt_lib_handle(rp->ctx, rt, err, errsize);
  if (st != KF_OK) return st;
  rt_lib *lib = core_calloc(1, sizeof *lib);
  if (!lib) {
    snprintf(err, errsize, "out of memory preparing %s", l->entry);
    return KF_ERR_OUT_OF_MEMORY;
  }
  rt_gemm g;
  rt_gemm_from_fuse(&k->gemm, rp->options->allow_tf32, &g);
  size_t ws = (size_t)rp->fuse->options.library_ws_bytes;
  st = rt_gemm_lt_prepare(&lib->p, rt->lt, rt->lt_handle, &g, NULL, ws, RT_GEMM_LT_MAX_CANDIDATES,
                          err, errsize);
  if (st != KF_OK) {
    free(lib);
    return st;
  }
  lib->cand = cand >= 0 && cand < lib->p.ncand ? cand : 0;
  /* The parameters' order: a, b, [bias], [c], out (codegen's emit_library). */
  int next = 2;
  lib->ia = 0, lib->ib = 1;
  lib->ibias = k->gemm.bias >= 0 ? next++ : -1;
  lib->ic = k->gemm.c >= 0 ? next++ : -1;
  lib->id = next;
  l->lib = lib;
  return KF_OK;
}

void rt_lib_free(rt_launch *l) {
  if (!l->lib) return;
  l->lib->bound = NULL;
  rt_gemm_lt_release(&l->lib->p);
  for (int i = 0; i < l->lib->n_low; i++) rt_gemm_lt_release(&l->lib->low[i]);
  free(l->lib);
  l->lib = NULL;
}

static CUdeviceptr arg(const rt_launch *l, int i) {
  return i >= 0 ? l->args[i] : 0;
}

static bool same_align(const rt_gemm_align *x, const rt_gemm_align *y) {
  return x->a == y->a && x->b == y->b && x->c == y->c && x->d == y->d && x->bias == y->bias;
}

/* In q, the candidate that runs the algorithm the load chose (lib->cand
 * of lib->p), else the heuristic's first. */
static int same_algorithm(const rt_lib *lib, const rt_gemm_lt *q) {
  const cublasLtMatmulAlgo_t *want = &lib->p.cand[lib->cand].algo;
  for (int i = 0; i < q->ncand; i++)
    if (memcmp(&q->cand[i].algo, want, sizeof *want) == 0) return i;
  return 0;
}

/* The candidates for pointers aligned as al, which lib->p's are not for:
 * a set kept for them, or one prepared now with al as the heuristic's
 * preferences (host calls only, so also while a stream is captured).
 * KF_ERR_UNSUPPORTED (err says why) when cuBLASLt has none. */
static kf_status low_set(rt_plan *rp, rt_launch *l, const rt_gemm_align *al, rt_gemm_lt **out,
                         char *err, size_t errsize) {
  rt_lib *lib = l->lib;
  for (int i = 0; i < lib->n_low; i++)
    if (same_align(&lib->low[i].align, al)) {
      *out = &lib->low[i];
      return KF_OK;
    }
  int slot = lib->n_low < RT_LIB_ALIGN_SETS ? lib->n_low : lib->next_low;
  rt_gemm_lt *q = &lib->low[slot];
  if (slot < lib->n_low) rt_gemm_lt_release(q); /* the oldest */
  kf_status st = rt_gemm_lt_prepare(q, lib->p.lt, lib->p.handle, &lib->p.g, al,
                                    (size_t)rp->fuse->options.library_ws_bytes,
                                    RT_GEMM_LT_MAX_CANDIDATES, err, errsize);
  if (st != KF_OK) {
    /* the slot holds nothing now: keep the kept sets contiguous */
    if (slot < lib->n_low) {
      lib->low[slot] = lib->low[lib->n_low - 1];
      memset(&lib->low[lib->n_low - 1], 0, sizeof *q);
      lib->n_low--;
    }
    return st;
  }
  if (slot == lib->n_low)
    lib->n_low++;
  else
    lib->next_low = (lib->next_low + 1) % RT_LIB_ALIGN_SETS;
  /* Off 16 bytes is a view most kernels cannot vectorize: worth a
   * warning; merely below 256 is common (row slices) and only info. */
  uint32_t least = al->a;
  const uint32_t rest[4] = {al->b, al->c, al->d, al->bias};
  for (int i = 0; i < 4; i++) least = rest[i] < least ? rest[i] : least;
  if (!lib->low_logged)
    core_log(rp->ctx, least < 16 ? KF_LOG_WARN : KF_LOG_INFO, LOG_RUNTIME,
             "%s: operands aligned to a %u, b %u, c %u, d %u, bias %u bytes, below the %u the "
             "load's cuBLASLt candidates assume: the heuristic asked again with these "
             "alignments (once per set of them)",
             l->entry, al->a, al->b, al->c, al->d, al->bias, RT_GEMM_LT_MAX_ALIGN);
  lib->low_logged = true;
  *out = q;
  return KF_OK;
}

/* The candidate set this binding runs (rt_lib_bind) and its candidate. */
static rt_gemm_lt *bound_set(rt_lib *lib) {
  return lib->bound ? lib->bound : &lib->p;
}
static int bound_cand(const rt_lib *lib) {
  return lib->bound ? lib->bound_cand : lib->cand;
}

/* The call's pointers as bound in l->args. */
static rt_gemm_args call_args(const rt_plan *rp, const rt_launch *l) {
  const rt_lib *lib = l->lib;
  return (rt_gemm_args){.a = arg(l, lib->ia),
                        .b = arg(l, lib->ib),
                        .bias = arg(l, lib->ibias),
                        .c = arg(l, lib->ic),
                        .d = arg(l, lib->id),
                        .workspace = rp->ws + (CUdeviceptr)rp->fuse->library_ws_offset,
                        .workspace_size = (size_t)rp->fuse->options.library_ws_bytes};
}

kf_status rt_lib_bind(rt_plan *rp, rt_launch *l, char *err, size_t errsize) {
  rt_lib *lib = l->lib;
  rt_gemm_args a = call_args(rp, l);
  rt_gemm_align al;
  rt_gemm_lt_align_of(&lib->p.g, &a, &al);
  lib->bound = NULL;
  if (rt_gemm_lt_takes(&lib->p, &al)) return KF_OK;
  bool refused = false;
  for (int i = 0; i < lib->n_refused && !refused; i++) refused = same_align(&lib->refused[i], &al);
  rt_gemm_lt *q = NULL;
  kf_status st = refused ? KF_ERR_UNSUPPORTED : low_set(rp, l, &al, &q, err, errsize);
  if (st == KF_ERR_UNSUPPORTED && !refused) {
    int slot = lib->n_refused < RT_LIB_ALIGN_SETS ? lib->n_refused++ : lib->next_refused++;
    lib->next_refused %= RT_LIB_ALIGN_SETS;
    lib->refused[slot] = al;
  }
  if (st == KF_ERR_UNSUPPORTED)
    snprintf(err, errsize,
             "cuBLASLt has no algorithm for operands aligned to a %u, b %u, c %u, d %u, bias %u "
             "bytes",
             al.a, al.b, al.c, al.d, al.bias);
  if (st != KF_OK) return st;
  lib->bound = q;
  lib->bound_cand = same_algorithm(lib, q);
  return KF_OK;
}

kf_status rt_lib_run(rt_plan *rp, rt_launch *l, CUstream s) {
  rt_lib *lib = l->lib;
  rt_gemm_args a = call_args(rp, l);
  char err[200];
  kf_status st = rt_gemm_lt_run(bound_set(lib), bound_cand(lib), &a, s, err, sizeof err);
  if (st != KF_OK) return rt_plan_error(rp, st, "%s: %s", l->entry, err);
  return KF_OK;
}

kf_status rt_lib_capture(rt_plan *rp, rt_launch *l, CUstream s, CUgraph *child) {
  const rt_driver *d = rp->state->drv;
  *child = NULL;
  CUresult r = d->StreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
  if (r != CUDA_SUCCESS) return rt_fail(rp->ctx, rp, rp->state, r, "cuStreamBeginCapture");
  kf_status st = rt_lib_run(rp, l, s);
  CUgraph g = NULL;
  r = d->StreamEndCapture(s, &g);
  if (st != KF_OK) {
    if (r == CUDA_SUCCESS && g) d->GraphDestroy(g);
    return st;
  }
  if (r != CUDA_SUCCESS) return rt_fail(rp->ctx, rp, rp->state, r, "cuStreamEndCapture");
  *child = g;
  rt_lib *lib = l->lib;
  lib->held_ws = rp->ws;
  lib->held_align = bound_set(lib)->align;
  lib->held_algo = bound_set(lib)->cand[bound_cand(lib)].algo;
  return KF_OK;
}

bool rt_lib_same_capture(const rt_launch *l) {
  const rt_lib *lib = l->lib;
  const rt_gemm_lt *q = lib->bound ? lib->bound : &lib->p;
  return same_align(&lib->held_align, &q->align) &&
         memcmp(&lib->held_algo, &q->cand[bound_cand(lib)].algo, sizeof lib->held_algo) == 0;
}
