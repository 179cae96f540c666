/* launch.c - kf_plan_run: validate every tensor before anything is
 * launched, resolve kernel parameters to device pointers, then launch in
 * the plan's mode on the caller's stream; never synchronizes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/rt.h"

static const char *value_name(const kf_graph *g, int32_t v) {
  const char *n = g->nodes[v].name;
  return n ? n : "?";
}

/* Is p device memory of our device? Checked once per new address:
 * cuPointerGetAttribute costs about a microsecond. */
static kf_status check_pointer(kf_plan *plan, rt_state *rt, const char *what, int i,
                               const char *name, CUdeviceptr p) {
  const rt_driver *d = rt->drv;
  unsigned int type = 0;
  CUresult r = d->PointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p);
  if (r == CUDA_ERROR_INVALID_VALUE)
    return core_plan_error(plan, KF_ERR_INVALID_ARG,
                           "%s[%d] (%s): %#llx is not CUDA memory (a host pointer?); kf_plan_run "
                           "takes device pointers",
                           what, i, name, (unsigned long long)p);
  if (r != CUDA_SUCCESS) return KF_OK; /* cannot tell: let the launch decide */
  if (type == CU_MEMORYTYPE_HOST)
    return core_plan_error(plan, KF_ERR_INVALID_ARG,
                           "%s[%d] (%s): %#llx is pinned host memory; kf_plan_run takes device "
                           "memory",
                           what, i, name, (unsigned long long)p);
  int ordinal = -1;
  if (d->PointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, p) == CUDA_SUCCESS &&
      ordinal != (int)rt->dev)
    return core_plan_error(plan, KF_ERR_INVALID_ARG,
                           "%s[%d] (%s): the memory is on GPU %d; the plan runs on GPU %d", what,
                           i, name, ordinal, (int)rt->dev);
  return KF_OK;
}

static kf_status check_tensor(kf_plan *plan, rt_state *rt, const char *what, int i, int32_t v,
                              const kf_tensor *t, CUdeviceptr *checked, bool ask) {
  const ir_node *n = &plan->graph->nodes[v];
  const char *name = value_name(plan->graph, v);
  char want[200], got[200];
  if (t->dtype != n->dtype)
    return core_plan_error(plan, KF_ERR_INVALID_ARG, "%s[%d] (%s): dtype %s, the plan expects %s",
                           what, i, name, kf_dtype_name(t->dtype), kf_dtype_name(n->dtype));
  bool same = t->rank == n->rank;
  for (int k = 0; same && k < n->rank; k++) same = t->shape[k] == n->shape[k];
  if (!same) {
    ir_shape_str(want, sizeof want, n->rank, n->shape);
    if (t->rank < 0 || t->rank > KF_MAX_RANK)
      snprintf(got, sizeof got, "rank %d", t->rank);
    else
      ir_shape_str(got, sizeof got, t->rank, t->shape);
    return core_plan_error(plan, KF_ERR_INVALID_ARG, "%s[%d] (%s): shape %s, the plan expects %s",
                           what, i, name, got, want);
  }
  int64_t numel = 1;
  ir_numel(n->rank, n->shape, &numel);
  uintptr_t p = (uintptr_t)t->data;
  if (!p && numel > 0)
    return core_plan_error(plan, KF_ERR_INVALID_ARG, "%s[%d] (%s): data is NULL", what, i, name);
  size_t es = kf_dtype_size(n->dtype);
  if (p % es != 0)
    return core_plan_error(plan, KF_ERR_INVALID_ARG,
                           "%s[%d] (%s): %#lx is not aligned to its element size (%zu bytes)", what,
                           i, name, (unsigned long)p, es);
  if (!p || !ask || *checked == (CUdeviceptr)p) return KF_OK;
  kf_status st = check_pointer(plan, rt, what, i, name, (CUdeviceptr)p);
  if (st == KF_OK) *checked = (CUdeviceptr)p;
  return st;
}

static size_t tensor_bytes(const kf_tensor *t) {
  int64_t numel = 1;
  ir_numel(t->rank, t->shape, &numel);
  return (size_t)numel * kf_dtype_size(t->dtype);
}

static bool overlap(const kf_tensor *a, const kf_tensor *b) {
  uintptr_t a0 = (uintptr_t)a->data, b0 = (uintptr_t)b->data;
  size_t na = tensor_bytes(a), nb = tensor_bytes(b);
  return na && nb && a0 < b0 + nb && b0 < a0 + na;
}

static kf_status check_overlaps(kf_plan *plan, const kf_tensor *in, int n_in,
                                const kf_tensor *out, int n_out) {
  const kf_graph *g = plan->graph;
  for (int j = 0; j < n_out; j++) {
    for (int i = 0; i < n_in; i++)
      if (overlap(&out[j], &in[i]))
        return core_plan_error(plan, KF_ERR_INVALID_ARG,
                               "outputs[%d] (%s) overlaps inputs[%d] (%s): kfuse does not run in "
                               "place",
                               j, value_name(g, g->outputs[j]), i, value_name(g, g->inputs[i]));
    for (int k = 0; k < j; k++)
      if (overlap(&out[j], &out[k]))
        return core_plan_error(plan, KF_ERR_INVALID_ARG, "outputs[%d] (%s) overlaps outputs[%d] (%s)",
                               j, value_name(g, g->outputs[j]), k, value_name(g, g->outputs[k]));
  }
  return KF_OK;
}

kf_status rt_validate_ex(kf_plan *plan, rt_state *rt, const kf_tensor *in, int n_in,
                         const kf_tensor *out, int n_out, bool ask_driver) {
  const kf_graph *g = plan->graph;
  struct rt_plan *rp = plan->rt;
  if (n_in != g->n_inputs || n_out != g->n_outputs)
    return core_plan_error(plan, KF_ERR_INVALID_ARG,
                           "kf_plan_run: %d inputs and %d outputs given, the graph has %d and %d",
                           n_in, n_out, g->n_inputs, g->n_outputs);
  if ((n_in && !in) || (n_out && !out))
    return core_plan_error(plan, KF_ERR_INVALID_ARG, "kf_plan_run: NULL tensor array");
  if (rp->n_checked != n_in + n_out) {
    free(rp->checked);
    rp->checked = calloc((size_t)(n_in + n_out) + 1, sizeof *rp->checked);
    rp->n_checked = rp->checked ? n_in + n_out : 0;
    if (!rp->checked) return core_plan_error(plan, KF_ERR_OUT_OF_MEMORY, "out of memory");
  }
  kf_status st = KF_OK;
  for (int i = 0; i < n_in && st == KF_OK; i++)
    st = check_tensor(plan, rt, "inputs", i, g->inputs[i], &in[i], &rp->checked[i],
                      ask_driver);
  for (int j = 0; j < n_out && st == KF_OK; j++)
    st = check_tensor(plan, rt, "outputs", j, g->outputs[j], &out[j], &rp->checked[n_in + j],
                      ask_driver);
  if (st == KF_OK) st = check_overlaps(plan, in, n_in, out, n_out);
  return st;
}

kf_status rt_validate(kf_plan *plan, rt_state *rt, const kf_tensor *in, int n_in,
                      const kf_tensor *out, int n_out) {
  return rt_validate_ex(plan, rt, in, n_in, out, n_out, true);
}

void rt_bind_args(kf_plan *plan, const kf_tensor *in, const kf_tensor *out) {
  struct rt_plan *rp = plan->rt;
  for (int L = 0; L < rp->n_launches; L++) {
    rt_launch *l = &rp->launches[L];
    for (int p = 0; p < l->n_params; p++) {
      const rt_bind *b = &l->binds[p];
      if (b->home == HOME_INPUT)
        l->args[p] = (CUdeviceptr)(uintptr_t)in[b->index].data;
      else if (b->home == HOME_OUTPUT)
        l->args[p] = (CUdeviceptr)(uintptr_t)out[b->index].data;
      else
        l->args[p] = rp->ws + (CUdeviceptr)b->offset;
    }
  }
}

kf_status rt_launch_one(kf_plan *plan, int i, CUstream stream) {
  rt_launch *l = &plan->rt->launches[i];
  if (l->grid == 0) return KF_OK; /* an empty tensor: nothing to do */
  CUresult r = plan->rt->rt->drv->LaunchKernel(l->fn, l->grid, 1, 1, l->block, 1, 1, l->smem,
                                               stream, l->argv, NULL);
  if (r != CUDA_SUCCESS) {
    char what[96];
    snprintf(what, sizeof what, "cuLaunchKernel(%s)", l->entry);
    return rt_fail(plan->ctx, plan, plan->rt->rt, r, what);
  }
  return KF_OK;
}

kf_status rt_run_plain(kf_plan *plan, CUstream stream) {
  kf_status st = KF_OK;
  for (int i = 0; i < plan->rt->n_launches && st == KF_OK; i++) st = rt_launch_one(plan, i, stream);
  return st;
}

/* Nothing may be compiled, loaded or allocated while the caller's stream
 * is being captured: those calls are illegal in a capture, or would not be
 * part of it. *capturing tells the mode dispatch too. */
static kf_status check_capture(kf_plan *plan, rt_state *rt, CUstream stream, bool *capturing) {
  struct rt_plan *rp = plan->rt;
  CUstreamCaptureStatus cs = CU_STREAM_CAPTURE_STATUS_NONE;
  CUresult r = rt->drv->StreamIsCapturing(stream, &cs);
  if (r != CUDA_SUCCESS && r != CUDA_ERROR_STREAM_CAPTURE_IMPLICIT)
    return rt_fail(plan->ctx, plan, rt, r, "cuStreamIsCapturing");
  *capturing = r != CUDA_SUCCESS || cs != CU_STREAM_CAPTURE_STATUS_NONE;
  if (!*capturing) return KF_OK;
  bool loaded = rp->loaded && rp->code == plan->code;
  bool ws_ok = rp->ws_caller || plan->fuse->workspace_bytes <= 0 || rp->ws;
  if (!loaded || !ws_ok)
    return core_plan_error(plan, KF_ERR_INVALID_ARG,
                           "kf_plan_run: the stream is capturing a CUDA Graph and the plan is not "
                           "%s yet; nothing is compiled, loaded or allocated during a capture: call "
                           "kf_plan_load before capturing",
                           loaded ? "given its workspace" : "loaded");
  return KF_OK;
}

static kf_status run_loaded(kf_plan *plan, rt_state *rt, const kf_tensor *in, const kf_tensor *out,
                            CUstream stream, bool capturing) {
  struct rt_plan *rp = plan->rt;
  kf_status st = KF_OK;
  if (!(rp->loaded && rp->code == plan->code)) st = kf_plan_load(plan);
  if (st == KF_OK) st = rt_plan_ready_workspace(plan, rt);
  if (st != KF_OK) return st;
  rt_bind_args(plan, in, out);
  switch (rp->mode) {
    case KF_MODE_STREAMS:
      return rt_run_streams(plan, stream);
    case KF_MODE_GRAPH:
      /* Inside the caller's capture the launches are recorded into the
       * caller's graph directly, forked as in streams mode. */
      return capturing ? rt_run_streams(plan, stream) : rt_run_graph(plan, stream);
    default:
      return rt_run_plain(plan, stream);
  }
}

kf_status kf_plan_run(kf_plan *plan, const kf_tensor *inputs, int n_inputs,
                      const kf_tensor *outputs, int n_outputs, void *stream) {
  rt_state *rt;
  bool pushed, capturing = false;
  if (!plan) return KF_ERR_INVALID_ARG;
  if (!plan->fuse || !plan->graph)
    return core_plan_error(plan, KF_ERR_INVALID_ARG, "kf_plan_run: the plan was not created");
  if (!rt_plan_get(plan)) return core_plan_error(plan, KF_ERR_OUT_OF_MEMORY, "out of memory");
  kf_status st = rt_state_get(plan->ctx, &rt);
  if (st != KF_OK) return core_plan_error(plan, st, "%s", kf_ctx_errmsg(plan->ctx));
  if ((st = rt_enter(plan->ctx, rt, &pushed)) != KF_OK) return st;
  /* During a capture the driver is not asked about pointers: only stream
   * work belongs in a capture. */
  st = check_capture(plan, rt, (CUstream)stream, &capturing);
  if (st == KF_OK) st = rt_validate_ex(plan, rt, inputs, n_inputs, outputs, n_outputs, !capturing);
  if (st == KF_OK) st = run_loaded(plan, rt, inputs, outputs, (CUstream)stream, capturing);
  rt_leave(rt, pushed);
  return st;
}
