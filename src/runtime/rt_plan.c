/* rt_plan.c - a plan's loaded state: modules and functions per launch,
 * parameter bindings, the workspace, and releasing it all; rt_plan_load_images,
 * kf_plan_set_workspace and kf_plan_set_mode. */
#include "runtime/rt_plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/program.h"
#include "core/alloc.h"
#include "core/knobs.h"
#include "runtime/fallback.h"
#include "runtime/lib_launch.h"
#include "runtime/occupancy.h"
#include "runtime/rt.h"
#include "runtime/rt_state.h"
#include "runtime/streams.h"
#include "runtime/tmap.h"

rt_plan *rt_plan_new(kf_run_mode mode) {
  rt_plan *rp = core_calloc(1, sizeof *rp);
  if (rp) rp->mode = mode;
  return rp;
}

/* Frees what was loaded; works from the rt_plan alone, because
 * kf_plan_destroy hands over nothing else. Errors are ignored: after a
 * sticky error the driver refuses, and there is nothing better to do. */
static void release(struct rt_plan *rp) {
  const rt_driver *d = rp->state ? rp->state->drv : NULL;
  bool pushed = false;
  CUcontext cur = NULL;
  if (d) {
    d->CtxGetCurrent(&cur);
    pushed = cur != rp->state->cuctx && d->CtxPushCurrent(rp->state->cuctx) == CUDA_SUCCESS;
  }
  if (d) {
    if (rp->exec) d->GraphExecDestroy(rp->exec);
    if (rp->cugraph) d->GraphDestroy(rp->cugraph);
    if (rp->fork_ev) d->EventDestroy(rp->fork_ev);
    for (int s = 0; s < RT_MAX_STREAMS; s++)
      if (rp->join_ev[s]) d->EventDestroy(rp->join_ev[s]);
    for (int i = 0; i < rp->n_launches; i++) {
      rt_lib_free(&rp->launches[i]);
      rt_fallback_free(d, &rp->launches[i]);
      if (rp->launches[i].done) d->EventDestroy(rp->launches[i].done);
      if (rp->launches[i].mod) d->ModuleUnload(rp->launches[i].mod);
    }
    if (rp->ws_owned && rp->ws) d->MemFree(rp->ws);
    if (pushed) d->CtxPopCurrent(NULL);
  }
  for (int i = 0; i < rp->n_launches; i++) {
    rt_fallback_free(NULL, &rp->launches[i]); /* no driver: the memory */
    free(rp->launches[i].binds);
    free(rp->launches[i].args);
    free(rp->launches[i].argv);
    rt_tmap_free(&rp->launches[i]);
    free(rp->launches[i].deps);
  }
  free(rp->launches);
  free(rp->graph_args);
  rp->launches = NULL;
  rp->n_launches = 0;
  rp->graph_args = NULL;
  rp->exec = NULL;
  rp->cugraph = NULL;
  rp->fork_ev = NULL;
  memset(rp->join_ev, 0, sizeof rp->join_ev);
  if (rp->ws_owned) {
    rp->ws = 0;
    rp->ws_bytes = 0;
    rp->ws_owned = false;
  }
  rp->loaded = false;
  rp->scheduled = false;
  rp->loaded_code = NULL;
}

void rt_plan_unload(rt_plan *plan) {
  release(plan);
}

void rt_plan_free(struct rt_plan *rp) {
  if (!rp) return;
  release(rp);
  /* The validation cache is about the caller's addresses, not the loaded
   * code: a reload keeps it. */
  free(rp->checked);
  free(rp->spans);
  free(rp);
}

/* Where each parameter of a launch points, from the plan's buffers. */
static kf_status bind_params(rt_plan *plan, rt_launch *l, const cg_launch_src *src) {
  const fuse_plan *fp = plan->fuse;
  for (int p = 0; p < src->n_params; p++) {
    int b = 0;
    while (b < fp->n_buffers && fp->buffers[b].value != src->params[p].value) b++;
    if (b == fp->n_buffers)
      return rt_plan_error(plan, KF_ERR_INTERNAL,
                           "launch %s: parameter %d (value %%%d) has no buffer in the plan",
                           src->entry, p, (int)src->params[p].value);
    l->binds[p] = (rt_bind){fp->buffers[b].home, fp->buffers[b].index, fp->buffers[b].offset};
  }
  return KF_OK;
}

/* Programmatic dependent launch needs sm_90 or newer, and a driver of CUDA
 * 12.3 or newer (stream capture records such launches from 12.3 on: a
 * plain run inside a caller's capture is the same launches). */
static bool pdl_allowed(const rt_state *rt) {
  return rt->info.cc_major >= 9 && rt->info.driver_version >= 12030;
}

/* A library call: its kernel's product prepared for cuBLASLt. Refused
 * (no library, a shape it does not take) is KF_ERR_UNSUPPORTED with the
 * reason: the pipeline takes the template path. */
static kf_status load_library(rt_plan *rp, rt_state *rt, rt_launch *l, const rt_image *img) {
  const fuse_plan *fp = rp->fuse;
  int launch = (int)(l - rp->launches);
  const fuse_kernel *k = &fp->kernels[fp->launches[launch].kernels[0]];
  char err[256] = "";
  if (!k->library)
    return rt_plan_error(rp, KF_ERR_INTERNAL, "launch %s is not a library call", l->entry);
  l->pdl = false;
  kf_status st = rt_lib_prepare(rp, rt, l, k, img->lib_cand, err, sizeof err);
  if (st != KF_OK) return rt_plan_error(rp, st, "%s: %s", l->entry, err);
  return KF_OK;
}

static kf_status load_one(rt_plan *plan, rt_state *rt, rt_launch *l, const rt_image *img) {
  const rt_driver *d = rt->drv;
  const cg_launch_src *src = img->src;
  snprintf(l->entry, sizeof l->entry, "%s", src->entry);
  snprintf(l->symbol, sizeof l->symbol, "%s", img->symbol ? img->symbol : src->entry);
  l->grid = src->grid;
  l->block = src->block;
  l->smem = src->smem_bytes;
  l->cluster = src->cluster;
  l->pdl = plan->options->pdl && pdl_allowed(rt) && src->grid_dep;
  l->n_params = src->n_params;
  l->binds = core_calloc((size_t)src->n_params + 1, sizeof *l->binds);
  l->args = core_calloc((size_t)src->n_params + 1, sizeof *l->args);
  l->argv = core_calloc((size_t)(src->n_params + src->n_tmaps) + 1, sizeof *l->argv);
  if (!l->binds || !l->args || !l->argv)
    return rt_plan_error(plan, KF_ERR_OUT_OF_MEMORY, "loading %s: out of memory", l->entry);
  /* Packed: the entry's one parameter is the whole array of pointers. */
  for (int p = 0; p < (src->packed_params ? 1 : src->n_params); p++) l->argv[p] = &l->args[p];
  kf_status st = bind_params(plan, l, src);
  if (st == KF_OK) st = rt_tmap_setup(plan, l, src);
  if (st != KF_OK) return st;
  if (src->library) return load_library(plan, rt, l, img);
  if (!img->image || !img->size)
    return rt_plan_error(plan, KF_ERR_UNSUPPORTED, "launch %s has no compiled image", l->entry);
  CUresult r = d->ModuleLoadData(&l->mod, img->image);
  if (r != CUDA_SUCCESS) return rt_fail(plan->ctx, plan, rt, r, "cuModuleLoadData");
  r = d->ModuleGetFunction(&l->fn, l->mod, l->symbol);
  if (r != CUDA_SUCCESS) return rt_fail(plan->ctx, plan, rt, r, "cuModuleGetFunction");
  if (l->smem > 48 * 1024) {
    if ((int)l->smem > rt->info.max_smem_per_block)
      return rt_plan_error(plan, KF_ERR_UNSUPPORTED,
                           "%s needs %u bytes of shared memory; %s allows %d per block", l->entry,
                           l->smem, rt->info.name, rt->info.max_smem_per_block);
    r = d->FuncSetAttribute(l->fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)l->smem);
    if (r != CUDA_SUCCESS) return rt_fail(plan->ctx, plan, rt, r, "cuFuncSetAttribute");
  }
  return KF_OK;
}

/* The workspace: caller's, or allocated once by kfuse. A failed
 * allocation leaves the plan as it was, so a later call can retry. */
static kf_status ensure_workspace(rt_plan *plan, rt_state *rt) {
  struct rt_plan *rp = plan;
  size_t need = plan->fuse->workspace_bytes > 0 ? (size_t)plan->fuse->workspace_bytes : 0;
  if (rp->ws_caller || need == 0 || (rp->ws && rp->ws_bytes >= need)) return KF_OK;
  CUdeviceptr p = 0;
  CUresult r = rt->drv->MemAlloc(&p, need);
  if (r != CUDA_SUCCESS) {
    kf_status st = rt_fail(plan->ctx, plan, rt, r, "allocating the workspace (cuMemAlloc)");
    if (st == KF_ERR_OUT_OF_MEMORY)
      rt_plan_error(plan, st,
                    "out of device memory allocating the plan's %zu-byte workspace; "
                    "the plan is still usable: free memory and run again, or hand in a "
                    "workspace with kf_plan_set_workspace",
                    need);
    return st;
  }
  if (rp->ws_owned && rp->ws) rt->drv->MemFree(rp->ws);
  rp->ws = p;
  rp->ws_bytes = need;
  rp->ws_owned = true;
  return KF_OK;
}

/* Clusters of l's size that can be resident at once; 0 when the driver
 * cannot say. */
static int max_clusters(const rt_state *rt, const rt_launch *l) {
  CUlaunchConfig cfg = {.gridDimX = l->grid,
                        .gridDimY = 1,
                        .gridDimZ = 1,
                        .blockDimX = l->block,
                        .blockDimY = 1,
                        .blockDimZ = 1,
                        .sharedMemBytes = l->smem};
  int n = 0;
  if (rt->drv->OccupancyMaxActiveClusters(&n, l->fn, &cfg) != CUDA_SUCCESS) return 0;
  return n;
}

/* KFUSE_PERSIST_WAVES=N (1..64, core/knobs.def): a persistent launch gets
 * N blocks per resident slot (a knob for measuring the grid size). */
/* A persistent kernel (it strides by gridDim.x) gets one block per resident
 * slot: min(grid, blocks per SM x SMs), then spread evenly, so that every
 * block takes the same number of the grid's units of work (8192 rows on 528
 * slots: 16 each on 512 blocks, not 15 or 16 on 528). */
static void fit_persistent(const rt_plan *plan, const rt_state *rt, rt_launch *l) {
  int cl = l->cluster > 1 ? l->cluster : 1;
  int64_t slots = (int64_t)l->occ.blocks_per_sm * rt->info.sm_count * plan->knobs->persist_waves;
  /* A clustered kernel (the sm_90 matmul's) counts whole clusters: as many
   * as the driver says can be resident at once (fewer than SMs / size
   * where the SMs of a GPC do not divide evenly). */
  if (cl > 1) slots = (int64_t)max_clusters(rt, l) * plan->knobs->persist_waves;
  int64_t units = l->grid / (uint32_t)cl;
  if (slots < 1 || units <= slots) return;
  int64_t per = (units + slots - 1) / slots;
  l->grid = (uint32_t)((units + per - 1) / per * cl);
  core_log(plan->ctx, KF_LOG_DEBUG, LOG_RUNTIME, "%s: persistent grid of %u blocks (%lld slots%s)",
           l->entry, l->grid, (long long)slots, cl > 1 ? " of clusters" : "");
}

/* A kernel that prefetches rows ahead into L2 (cg_launch_src.l2_prefetch)
 * gets its distance in the module global kf_l2pf_rows: its resident blocks
 * (one row each) and a sixteenth more, the row a block will take about a
 * wave later (codegen/row.c, emit_prefetch_next_rows; performance.md K5).
 * Left at 0 (no prefetch, the same results) where the global cannot be
 * set. */
static void set_l2_prefetch(rt_plan *plan, rt_state *rt, rt_launch *l) {
  int64_t resident = (int64_t)l->occ.blocks_per_sm * rt->info.sm_count;
  int rows = (int)(resident + resident / 16);
  CUdeviceptr p = 0;
  size_t size = 0;
  CUresult r = rt->drv->ModuleGetGlobal(&p, &size, l->mod, "kf_l2pf_rows");
  if (r == CUDA_SUCCESS && size == sizeof rows && rows > 0)
    r = rt->drv->MemcpyHtoD(p, &rows, sizeof rows);
  if (r != CUDA_SUCCESS || size != sizeof rows)
    core_log(plan->ctx, KF_LOG_WARN, LOG_RUNTIME,
             "%s: the L2 prefetch distance was not set (CUDA error %d): no prefetch", l->entry,
             (int)r);
  else
    core_log(plan->ctx, KF_LOG_DEBUG, LOG_RUNTIME,
             "%s: prefetches the row %d ahead into L2 (%lld resident blocks)", l->entry, rows,
             (long long)resident);
}

kf_status rt_plan_load_launch(rt_plan *plan, rt_state *rt, rt_launch *l, const rt_image *img) {
  kf_status st = load_one(plan, rt, l, img);
  if (st != KF_OK || img->src->library) return st; /* a library call: no kernel of ours */
  st = rt_occupancy_measure(plan, l);
  if (st == KF_OK && img->src->persistent) fit_persistent(plan, rt, l);
  if (st == KF_OK && img->src->l2_prefetch) set_l2_prefetch(plan, rt, l);
  return st;
}

kf_status rt_plan_load_images(rt_plan *plan, const rt_image *images, int n) {
  rt_state *rt;
  bool pushed;
  struct rt_plan *rp = plan;
  if (n != plan->fuse->n_launches)
    return rt_plan_error(plan, KF_ERR_INTERNAL, "kf_plan_load: %d images for %d launches", n,
                         plan->fuse->n_launches);
  kf_status st = rt_state_get(plan->ctx, &rt);
  if (st != KF_OK) return rt_plan_error(plan, st, "%s", kf_ctx_errmsg(plan->ctx));
  if ((st = rt_enter(plan->ctx, rt, &pushed)) != KF_OK) return st;
  release(rp);
  rp->state = rt;
  rp->launches = core_calloc((size_t)n + 1, sizeof *rp->launches);
  if (!rp->launches) st = rt_plan_error(plan, KF_ERR_OUT_OF_MEMORY, "kf_plan_load: out of memory");
  rp->n_launches = rp->launches ? n : 0;
  for (int i = 0; i < n && st == KF_OK; i++)
    st = rt_plan_load_launch(plan, rt, &rp->launches[i], &images[i]);
  if (st == KF_OK) st = rt_schedule(plan, plan->options->streams);
  if (st == KF_OK) st = ensure_workspace(plan, rt);
  if (st == KF_OK) {
    rp->loaded = true;
    rp->loaded_code = rp->code;
    core_log(plan->ctx, KF_LOG_INFO, LOG_RUNTIME, "loaded %d launches on %s, workspace %zu bytes",
             n, rt->info.name, (size_t)rp->ws_bytes);
  } else {
    release(rp);
  }
  rt_leave(rt, pushed);
  return st;
}

kf_status rt_plan_ready_workspace(rt_plan *plan, rt_state *rt) {
  return ensure_workspace(plan, rt);
}

kf_status rt_plan_set_workspace(rt_plan *plan, void *dptr, size_t bytes) {
  if (!plan || !plan->fuse) return KF_ERR_INVALID_ARG;
  struct rt_plan *rp = plan;
  size_t need = plan->fuse->workspace_bytes > 0 ? (size_t)plan->fuse->workspace_bytes : 0;
  if (dptr && bytes < need)
    return rt_plan_error(plan, KF_ERR_INVALID_ARG,
                         "kf_plan_set_workspace: %zu bytes handed in, the plan needs %zu", bytes,
                         need);
  if (dptr && (uintptr_t)dptr % 256 != 0)
    return rt_plan_error(plan, KF_ERR_INVALID_ARG,
                         "kf_plan_set_workspace: %p is not 256-byte aligned", dptr);
  if (rp->ws_owned && rp->ws && rp->state) {
    bool pushed;
    if (rt_enter(plan->ctx, rp->state, &pushed) == KF_OK) {
      rp->state->drv->MemFree(rp->ws);
      rt_leave(rp->state, pushed);
    }
  }
  rp->ws = (CUdeviceptr)(uintptr_t)dptr;
  rp->ws_bytes = dptr ? bytes : 0;
  rp->ws_owned = false;
  rp->ws_caller = dptr != NULL;
  return KF_OK;
}

kf_status rt_plan_set_mode(rt_plan *plan, kf_run_mode mode) {
  if (!plan) return KF_ERR_INVALID_ARG;
  if (mode != KF_MODE_PLAIN && mode != KF_MODE_STREAMS && mode != KF_MODE_GRAPH)
    return rt_plan_error(plan, KF_ERR_INVALID_ARG, "kf_plan_set_mode: unknown mode %d", (int)mode);
  plan->mode = mode;
  return KF_OK;
}
