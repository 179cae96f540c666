/* lib_launch.c - launches that are library calls: the context's cuBLASLt
 * handle, preparing a plan's matmul kernel as one cuBLASLt call, enqueuing
 * it, and capturing it into a child graph for graph mode. */
#include "runtime/lib_launch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
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
  st = rt_gemm_lt_prepare(&lib->p, rt->lt, rt->lt_handle, &g, ws, RT_GEMM_LT_MAX_CANDIDATES, err,
                          errsize);
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
  rt_gemm_lt_release(&l->lib->p);
  free(l->lib);
  l->lib = NULL;
}

static CUdeviceptr arg(const rt_launch *l, int i) {
  return i >= 0 ? l->args[i] : 0;
}

kf_status rt_lib_run(rt_plan *rp, rt_launch *l, CUstream s) {
  rt_lib *lib = l->lib;
  rt_gemm_args a = {.a = arg(l, lib->ia),
                    .b = arg(l, lib->ib),
                    .bias = arg(l, lib->ibias),
                    .c = arg(l, lib->ic),
                    .d = arg(l, lib->id),
                    .workspace = rp->ws + (CUdeviceptr)rp->fuse->library_ws_offset,
                    .workspace_size = (size_t)rp->fuse->options.library_ws_bytes};
  char err[200];
  kf_status st = rt_gemm_lt_run(&lib->p, lib->cand, &a, s, err, sizeof err);
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
  l->lib->held_ws = rp->ws;
  return KF_OK;
}
