/* cuda_graph.c - graph mode: the plan built once as an explicit CUDA Graph
 * (one kernel node per launch, edges from the schedule's dependencies, so
 * independent launches run concurrently), instantiated once, replayed on
 * the caller's stream; new tensor addresses update kernel nodes in place.
 * A library call (cuBLASLt) is captured on a side stream into a child
 * graph node: its kernels are the library's, so the graph cannot be built
 * by hand there. New addresses for a library call capture it again and
 * replace the child in the instantiated graph; a child the driver will not
 * take in place (its topology changed) rebuilds the graph, and so do a
 * library call whose binding runs another candidate set or algorithm
 * (rt_lib_same_capture) and a launch that changes between its sm_90
 * kernel and its form without tensor maps (fallback.c). */
#include "runtime/cuda_graph.h"

#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "runtime/fallback.h"
#include "runtime/lib_launch.h"
#include "runtime/rt.h"
#include "runtime/rt_state.h"

/* Launch l's node as bound: its own kernel, or its form without tensor
 * maps (fallback.c). */
static CUDA_KERNEL_NODE_PARAMS_v2 node_params(const rt_launch *launch) {
  const rt_launch *l = rt_fallback_kernel(launch);
  CUDA_KERNEL_NODE_PARAMS_v2 p;
  memset(&p, 0, sizeof p);
  p.func = l->fn;
  p.gridDimX = l->grid;
  p.gridDimY = p.gridDimZ = 1;
  p.blockDimX = l->block;
  p.blockDimY = p.blockDimZ = 1;
  p.sharedMemBytes = l->smem;
  p.kernelParams = l->argv;
  return p;
}

/* The nodes L must follow. A launch with an empty grid has no node, so its
 * own dependencies stand in for it. */
static int collect_deps(const struct rt_plan *rp, int L, CUgraphNode *out, int n) {
  const rt_launch *l = &rp->launches[L];
  for (int i = 0; i < l->n_deps; i++) {
    const rt_launch *m = &rp->launches[l->deps[i]];
    if (m->node) {
      bool seen = false;
      for (int k = 0; k < n && !seen; k++) seen = out[k] == m->node;
      if (!seen) out[n++] = m->node;
    } else {
      n = collect_deps(rp, l->deps[i], out, n);
    }
  }
  return n;
}

/* The library call of l, captured on the pool's first stream (never the
 * caller's), as a child graph node after deps. */
static kf_status add_library(rt_plan *rp, rt_launch *l, const CUgraphNode *deps, int nd) {
  const rt_driver *d = rp->state->drv;
  CUstream side;
  kf_status st = rt_pool_streams(rp->ctx, rp, rp->state, 1, &side);
  CUgraph child = NULL;
  if (st == KF_OK) st = rt_lib_capture(rp, l, side, &child);
  if (st != KF_OK) return st;
  CUresult r = d->GraphAddChildGraphNode(&l->node, rp->cugraph, deps, (size_t)nd, child);
  d->GraphDestroy(child); /* the node holds a copy */
  if (r != CUDA_SUCCESS) return rt_fail(rp->ctx, rp, rp->state, r, "cuGraphAddChildGraphNode");
  return KF_OK;
}

static kf_status build(rt_plan *plan) {
  struct rt_plan *rp = plan;
  const rt_driver *d = rp->state->drv;
  CUresult r = d->GraphCreate(&rp->cugraph, 0);
  if (r != CUDA_SUCCESS) return rt_fail(plan->ctx, plan, rp->state, r, "cuGraphCreate");
  size_t total = 0;
  for (int L = 0; L < rp->n_launches; L++)
    total += (size_t)rt_fallback_kernel(&rp->launches[L])->n_params;
  rp->graph_args = core_calloc(total + 1, sizeof *rp->graph_args);
  CUgraphNode *deps = core_calloc((size_t)rp->n_launches + 1, sizeof *deps);
  kf_status st = rp->graph_args && deps ? KF_OK : KF_ERR_OUT_OF_MEMORY;
  if (st != KF_OK) rt_plan_error(plan, st, "building the CUDA Graph: out of memory");
  size_t off = 0;
  for (int L = 0; L < rp->n_launches && st == KF_OK; L++) {
    rt_launch *l = &rp->launches[L];
    const rt_launch *k = rt_fallback_kernel(l);
    memcpy(rp->graph_args + off, k->args, (size_t)k->n_params * sizeof *k->args);
    off += (size_t)k->n_params;
    l->graph_alt = l->on_alt;
    l->node = NULL;
    if (l->grid == 0) continue;
    /* Every node lists all its conflicts; redundant edges cost nothing at
     * replay time, as instantiation reduces them. */
    int nd = collect_deps(rp, L, deps, 0);
    if (l->lib && !l->on_alt) {
      st = add_library(plan, l, deps, nd);
      continue;
    }
    CUDA_KERNEL_NODE_PARAMS_v2 p = node_params(l);
    r = d->GraphAddKernelNode(&l->node, rp->cugraph, deps, (size_t)nd, &p);
    if (r != CUDA_SUCCESS) st = rt_fail(plan->ctx, plan, rp->state, r, "cuGraphAddKernelNode");
  }
  free(deps);
  if (st == KF_OK) {
    r = d->GraphInstantiateWithFlags(&rp->exec, rp->cugraph, 0);
    if (r != CUDA_SUCCESS) {
      rp->exec = NULL;
      st = rt_fail(plan->ctx, plan, rp->state, r, "cuGraphInstantiate");
    }
  }
  if (st != KF_OK) rt_graph_free(plan);
  return st;
}

/* Whether a library call's pointers or workspace changed since its
 * capture (its child graph holds them). */
static bool library_moved(const rt_plan *rp, const rt_launch *l, const CUdeviceptr *held) {
  size_t bytes = (size_t)l->n_params * sizeof *l->args;
  return memcmp(held, l->args, bytes) != 0 || l->lib->held_ws != rp->ws;
}

/* Captures the library call of l again and puts the new child graph in
 * place of the old one. *rebuild is set, with no error, where the driver
 * refuses the new child (cuBLASLt captured a different topology). */
static kf_status update_library(rt_plan *rp, rt_launch *l, bool *rebuild) {
  const rt_driver *d = rp->state->drv;
  CUstream side;
  kf_status st = rt_pool_streams(rp->ctx, rp, rp->state, 1, &side);
  CUgraph child = NULL;
  if (st == KF_OK) st = rt_lib_capture(rp, l, side, &child);
  if (st != KF_OK) return st;
  CUresult r = d->GraphExecChildGraphNodeSetParams(rp->exec, l->node, child);
  d->GraphDestroy(child); /* the exec holds what it took */
  if (r != CUDA_SUCCESS) *rebuild = true;
  return KF_OK;
}

/* Updates the nodes whose pointers changed since the exec last saw them. */
static kf_status update(rt_plan *plan, bool *rebuild) {
  struct rt_plan *rp = plan;
  const rt_driver *d = rp->state->drv;
  size_t off = 0;
  for (int L = 0; L < rp->n_launches && !*rebuild; L++) {
    rt_launch *l = &rp->launches[L];
    const rt_launch *k = rt_fallback_kernel(l); /* the form the node runs (same_forms) */
    size_t bytes = (size_t)k->n_params * sizeof *k->args;
    CUdeviceptr *held = rp->graph_args + off;
    off += (size_t)k->n_params;
    if (!l->node) continue;
    if (l->lib && !l->on_alt) {
      if (!rt_lib_same_capture(l)) {
        *rebuild = true; /* another set or algorithm: never swapped in place */
        break;
      }
      if (!library_moved(rp, l, held)) continue;
      kf_status st = update_library(plan, l, rebuild);
      if (st != KF_OK) return st;
    } else {
      if (memcmp(held, k->args, bytes) == 0) continue;
      CUDA_KERNEL_NODE_PARAMS_v2 p = node_params(l);
      CUresult r = d->GraphExecKernelNodeSetParams(rp->exec, l->node, &p);
      if (r != CUDA_SUCCESS)
        return rt_fail(plan->ctx, plan, rp->state, r, "cuGraphExecKernelNodeSetParams");
    }
    memcpy(held, k->args, bytes);
    rp->graph_updates++;
  }
  return KF_OK;
}

/* Whether every launch runs the form its node was built with. A binding
 * that swaps a launch to its form without tensor maps (or back) rebuilds
 * the graph: the node's function, parameter count and shared memory
 * change, and the sm_90 kernel must never be replayed with an operand
 * its copy engine cannot read. */
static bool same_forms(const rt_plan *rp) {
  for (int L = 0; L < rp->n_launches; L++)
    if (rp->launches[L].graph_alt != rp->launches[L].on_alt) return false;
  return true;
}

kf_status rt_run_graph(rt_plan *plan, CUstream stream) {
  struct rt_plan *rp = plan;
  bool rebuild = false;
  if (rp->exec && !same_forms(rp)) rt_graph_free(plan);
  kf_status st = rp->exec ? update(plan, &rebuild) : build(plan);
  if (st == KF_OK && rebuild) {
    rt_graph_free(plan);
    st = build(plan);
  }
  if (st != KF_OK) return st;
  CUresult r = rp->state->drv->GraphLaunch(rp->exec, stream);
  if (r != CUDA_SUCCESS) return rt_fail(plan->ctx, plan, rp->state, r, "cuGraphLaunch");
  return KF_OK;
}

void rt_graph_free(rt_plan *plan) {
  struct rt_plan *rp = plan;
  const rt_driver *d = rp->state->drv;
  if (rp->exec) d->GraphExecDestroy(rp->exec);
  if (rp->cugraph) d->GraphDestroy(rp->cugraph);
  rp->exec = NULL;
  rp->cugraph = NULL;
  free(rp->graph_args);
  rp->graph_args = NULL;
  for (int L = 0; L < rp->n_launches; L++) rp->launches[L].node = NULL;
}
