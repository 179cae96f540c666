/* launch.c - kf_plan_run and kf_plan_run_ptrs (one path): validate every
 * tensor before anything is launched, resolve kernel parameters to device
 * pointers, then launch in the plan's mode on the caller's stream; never
 * synchronizes. Once a plan
 * is loaded and a run brings addresses already checked, the run asks the
 * driver for nothing but the current context and the launches (graph
 * mode: also the capture status). */
#include "runtime/launch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "ir/shape.h"
#include "runtime/cuda_graph.h"
#include "runtime/fallback.h"
#include "runtime/lib_launch.h"
#include "runtime/nvtx.h"
#include "runtime/rt.h"
#include "runtime/rt_plan.h"
#include "runtime/rt_state.h"
#include "runtime/streams.h"
#include "runtime/tmap.h"
#include "runtime/trace.h"

/* One tensor's bytes in the overlap sweep; slot < n_in is inputs[slot],
 * else outputs[slot - n_in]. */
struct rt_span {
  uintptr_t lo, hi;
  int slot;
};

/* One run's tensors as the caller gave them: whole structs (kf_plan_run,
 * t set) or addresses only (kf_plan_run_ptrs, p set), whose dtypes and
 * shapes are the plan's own. Both entry points validate, bind and launch
 * through this one view. Slot k < n_in is input k, else output k - n_in. */
typedef struct rt_io {
  const char *fn; /* the entry point, for messages */
  bool ptrs;      /* addresses only: pin, pout */
  int n_in, n_out;
  const kf_tensor *tin, *tout;
  void *const *pin, *const *pout;
} rt_io;

/* Up to this many tensors the overlaps are checked pair by pair, above it
 * by sorting (a plan of 600 tensors would otherwise cost 10^5 pairs). */
#define PAIRWISE_MAX 16

static const char *value_name(const kf_graph *g, int32_t v) {
  const char *n = g->nodes[v].name;
  return n ? n : "?";
}

static uintptr_t io_addr(const rt_io *io, int k) {
  if (k < io->n_in) return (uintptr_t)(io->ptrs ? io->pin[k] : io->tin[k].data);
  k -= io->n_in;
  return (uintptr_t)(io->ptrs ? io->pout[k] : io->tout[k].data);
}

/* The graph value slot k binds. */
static int32_t slot_value(const rt_plan *plan, const rt_io *io, int k) {
  const kf_graph *g = plan->graph;
  return k < io->n_in ? g->inputs[k] : g->outputs[k - io->n_in];
}

/* A slot's bytes: the plan's shape and dtype (a tensor struct that passed
 * check_desc has the same). */
static size_t slot_bytes(const rt_plan *plan, const rt_io *io, int k) {
  const ir_node *n = &plan->graph->nodes[slot_value(plan, io, k)];
  int64_t bytes = 0; /* fits: the builders checked it (KF_MAX_TENSOR_BYTES) */
  if (!ir_tensor_bytes(n->rank, n->shape, n->dtype, &bytes) || (uint64_t)bytes > SIZE_MAX)
    return SIZE_MAX;
  return (size_t)bytes;
}

/* Is p device memory of our device? cuPointerGetAttribute costs about a
 * microsecond, so each address is asked once (rt_plan.checked, .seen). */
static kf_status check_pointer(rt_plan *plan, rt_state *rt, const char *fn, const char *what, int i,
                               const char *name, CUdeviceptr p) {
  const rt_driver *d = rt->drv;
  unsigned int type = 0;
  CUresult r = d->PointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p);
  if (r == CUDA_ERROR_INVALID_VALUE)
    return rt_plan_error(plan, KF_ERR_INVALID_ARG,
                         "%s[%d] (%s): %#llx is not CUDA memory (a host pointer?); %s "
                         "takes device pointers",
                         what, i, name, (unsigned long long)p, fn);
  if (r != CUDA_SUCCESS) return KF_OK; /* cannot tell: let the launch decide */
  if (type == CU_MEMORYTYPE_HOST)
    return rt_plan_error(plan, KF_ERR_INVALID_ARG,
                         "%s[%d] (%s): %#llx is pinned host memory; %s takes device memory", what,
                         i, name, (unsigned long long)p, fn);
  int ordinal = -1;
  if (d->PointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, p) == CUDA_SUCCESS &&
      ordinal != (int)rt->dev)
    return rt_plan_error(plan, KF_ERR_INVALID_ARG,
                         "%s[%d] (%s): the memory is on GPU %d; the plan runs on GPU %d", what, i,
                         name, ordinal, (int)rt->dev);
  return KF_OK;
}

/* dtype and shape of a caller's struct against value v. */
static kf_status check_desc(rt_plan *plan, const char *what, int i, int32_t v, const kf_tensor *t) {
  const ir_node *n = &plan->graph->nodes[v];
  const char *name = value_name(plan->graph, v);
  char want[200], got[200];
  if (t->dtype != n->dtype)
    return rt_plan_error(plan, KF_ERR_INVALID_ARG, "%s[%d] (%s): dtype %s, the plan expects %s",
                         what, i, name, kf_dtype_name(t->dtype), kf_dtype_name(n->dtype));
  bool same = t->rank == n->rank;
  for (int k = 0; same && k < n->rank; k++) same = t->shape[k] == n->shape[k];
  if (same) return KF_OK;
  ir_shape_str(want, sizeof want, n->rank, n->shape);
  if (t->rank < 0 || t->rank > KF_MAX_RANK)
    snprintf(got, sizeof got, "rank %d", t->rank);
  else
    ir_shape_str(got, sizeof got, t->rank, t->shape);
  return rt_plan_error(plan, KF_ERR_INVALID_ARG, "%s[%d] (%s): shape %s, the plan expects %s", what,
                       i, name, got, want);
}

/* NULL (allowed for an empty tensor) and alignment to the element size. */
static kf_status check_addr(rt_plan *plan, const char *what, int i, int32_t v, uintptr_t p) {
  const ir_node *n = &plan->graph->nodes[v];
  if (!p) {
    int64_t numel = 1;
    ir_numel(n->rank, n->shape, &numel);
    if (numel > 0)
      return rt_plan_error(plan, KF_ERR_INVALID_ARG, "%s[%d] (%s): data is NULL", what, i,
                           value_name(plan->graph, v));
  }
  size_t es = kf_dtype_size(n->dtype);
  if (es && p % es != 0)
    return rt_plan_error(plan, KF_ERR_INVALID_ARG,
                         "%s[%d] (%s): %#lx is not aligned to its element size (%zu bytes)", what,
                         i, value_name(plan->graph, v), (unsigned long)p, es);
  return KF_OK;
}

/* Slot a is an output; b an input, or an output with a smaller index. */
static kf_status overlap_error(rt_plan *plan, int n_in, int a, int b) {
  const kf_graph *g = plan->graph;
  int j = a - n_in;
  if (b < n_in)
    return rt_plan_error(plan, KF_ERR_INVALID_ARG,
                         "outputs[%d] (%s) overlaps inputs[%d] (%s): kfuse does not run in place",
                         j, value_name(g, g->outputs[j]), b, value_name(g, g->inputs[b]));
  return rt_plan_error(plan, KF_ERR_INVALID_ARG, "outputs[%d] (%s) overlaps outputs[%d] (%s)", j,
                       value_name(g, g->outputs[j]), b - n_in, value_name(g, g->outputs[b - n_in]));
}

static kf_status overlaps_pairwise(rt_plan *plan, const rt_io *io) {
  uintptr_t lo[PAIRWISE_MAX];
  size_t len[PAIRWISE_MAX];
  int n = io->n_in + io->n_out;
  for (int k = 0; k < n; k++) lo[k] = io_addr(io, k), len[k] = slot_bytes(plan, io, k);
  for (int a = io->n_in; a < n; a++)
    for (int b = 0; b < a; b++)
      if (len[a] && len[b] && lo[a] < lo[b] + len[b] && lo[b] < lo[a] + len[a])
        return overlap_error(plan, io->n_in, a, b);
  return KF_OK;
}

static int cmp_span(const void *a, const void *b) {
  const struct rt_span *x = a, *y = b;
  if (x->lo != y->lo) return x->lo < y->lo ? -1 : 1;
  return (x->slot > y->slot) - (x->slot < y->slot);
}

/* The same check in O(n log n): sorted by start, a span overlaps an
 * earlier one exactly when the furthest-reaching earlier span (among
 * outputs, or among all for an output) ends after it starts. Inputs may
 * overlap each other. */
static kf_status overlaps_sorted(rt_plan *plan, const rt_io *io, struct rt_span *s) {
  int n = 0, n_in = io->n_in;
  for (int k = 0; k < n_in + io->n_out; k++) {
    size_t bytes = slot_bytes(plan, io, k);
    uintptr_t p = io_addr(io, k);
    if (bytes) s[n++] = (struct rt_span){p, p + bytes, k};
  }
  qsort(s, (size_t)n, sizeof *s, cmp_span);
  int far_out = -1, far_any = -1;
  for (int k = 0; k < n; k++) {
    int hit = -1;
    if (far_out >= 0 && s[far_out].hi > s[k].lo)
      hit = far_out;
    else if (s[k].slot >= n_in && far_any >= 0 && s[far_any].hi > s[k].lo)
      hit = far_any;
    if (hit >= 0) {
      int a = s[k].slot, b = s[hit].slot;
      if (b >= n_in && (a < n_in || b > a)) a = s[hit].slot, b = s[k].slot;
      return overlap_error(plan, n_in, a, b);
    }
    if (far_any < 0 || s[k].hi > s[far_any].hi) far_any = k;
    if (s[k].slot >= n_in && (far_out < 0 || s[k].hi > s[far_out].hi)) far_out = k;
  }
  return KF_OK;
}

/* The validation cache sized for n tensors (kept across reloads). */
static kf_status cache_ready(rt_plan *plan, int n) {
  struct rt_plan *rp = plan;
  if (rp->checked && rp->spans && rp->n_checked == n) return KF_OK;
  free(rp->checked);
  free(rp->spans);
  rp->checked = core_calloc((size_t)n + 1, sizeof *rp->checked);
  rp->spans = core_calloc((size_t)n + 1, sizeof *rp->spans);
  rp->checked_set = false;
  rp->n_checked = n;
  if (rp->checked && rp->spans) return KF_OK;
  free(rp->checked);
  free(rp->spans);
  rp->checked = NULL;
  rp->spans = NULL;
  rp->n_checked = 0;
  return rt_plan_error(plan, KF_ERR_OUT_OF_MEMORY, "out of memory");
}

/* The checks on the caller's arguments alone; *known: every address is
 * the one its slot had in the last run that passed every check, so
 * neither the driver nor the overlap check has anything new to say. */
static kf_status validate_host(rt_plan *plan, const rt_io *io, bool *known) {
  const kf_graph *g = plan->graph;
  struct rt_plan *rp = plan;
  int n_in = io->n_in, n_out = io->n_out;
  *known = false;
  if (n_in != g->n_inputs || n_out != g->n_outputs)
    return rt_plan_error(plan, KF_ERR_INVALID_ARG,
                         "%s: %d inputs and %d outputs given, the graph has %d and %d", io->fn,
                         n_in, n_out, g->n_inputs, g->n_outputs);
  if (io->ptrs ? (n_in && !io->pin) || (n_out && !io->pout)
               : (n_in && !io->tin) || (n_out && !io->tout))
    return rt_plan_error(plan, KF_ERR_INVALID_ARG, "%s: NULL %s array", io->fn,
                         io->ptrs ? "pointer" : "tensor");
  kf_status st = cache_ready(plan, n_in + n_out);
  bool same = rp->checked_set;
  for (int k = 0; k < n_in + n_out && st == KF_OK; k++) {
    bool is_in = k < n_in;
    int i = is_in ? k : k - n_in;
    const char *what = is_in ? "inputs" : "outputs";
    int32_t v = is_in ? g->inputs[i] : g->outputs[i];
    uintptr_t p = io_addr(io, k);
    if (!io->ptrs) st = check_desc(plan, what, i, v, is_in ? &io->tin[i] : &io->tout[i]);
    if (st == KF_OK) st = check_addr(plan, what, i, v, p);
    same = same && rp->checked[k] == (CUdeviceptr)p;
  }
  *known = st == KF_OK && same;
  return st;
}

static bool seen(const struct rt_plan *rp, CUdeviceptr p) {
  for (int i = 0; i < RT_SEEN; i++)
    if (rp->seen[i] == p) return true;
  return false;
}

/* The driver's word on each address not seen before (skipped when ask is
 * false: during a capture), then the overlaps. */
static kf_status validate_driver(rt_plan *plan, rt_state *rt, const rt_io *io, bool ask) {
  const kf_graph *g = plan->graph;
  struct rt_plan *rp = plan;
  int n_in = io->n_in, n = io->n_in + io->n_out;
  bool all = true;
  kf_status st = KF_OK;
  rp->checked_set = false;
  for (int k = 0; k < n && st == KF_OK; k++) {
    CUdeviceptr p = (CUdeviceptr)io_addr(io, k);
    if (p == rp->checked[k]) continue;
    if (p && !seen(rp, p)) {
      if (!ask) {
        all = false;
        continue;
      }
      bool is_in = k < n_in;
      int idx = is_in ? k : k - n_in;
      st = check_pointer(plan, rt, io->fn, is_in ? "inputs" : "outputs", idx,
                         value_name(g, slot_value(plan, io, k)), p);
      if (st != KF_OK) break;
      rp->seen[rp->seen_next] = p;
      rp->seen_next = (rp->seen_next + 1) % RT_SEEN;
    }
    rp->checked[k] = p;
  }
  if (st == KF_OK)
    st = n <= PAIRWISE_MAX ? overlaps_pairwise(plan, io) : overlaps_sorted(plan, io, rp->spans);
  rp->checked_set = st == KF_OK && all;
  return st;
}

static rt_io tensors_io(const char *fn, const kf_tensor *in, int n_in, const kf_tensor *out,
                        int n_out) {
  return (rt_io){.fn = fn, .n_in = n_in, .n_out = n_out, .tin = in, .tout = out};
}

kf_status rt_validate_ex(rt_plan *plan, rt_state *rt, const kf_tensor *in, int n_in,
                         const kf_tensor *out, int n_out, bool ask_driver) {
  rt_io io = tensors_io("kf_plan_run", in, n_in, out, n_out);
  bool known;
  kf_status st = validate_host(plan, &io, &known);
  if (st == KF_OK && !known) st = validate_driver(plan, rt, &io, ask_driver);
  return st;
}

kf_status rt_validate(rt_plan *plan, rt_state *rt, const kf_tensor *in, int n_in,
                      const kf_tensor *out, int n_out) {
  return rt_validate_ex(plan, rt, in, n_in, out, n_out, true);
}

/* Each parameter of l from its buffer: the caller's tensors or the
 * workspace. */
static void bind_launch(rt_plan *plan, const rt_io *io, rt_launch *l) {
  for (int p = 0; p < l->n_params; p++) {
    const rt_bind *b = &l->binds[p];
    if (b->home == HOME_INPUT)
      l->args[p] = (CUdeviceptr)io_addr(io, b->index);
    else if (b->home == HOME_OUTPUT)
      l->args[p] = (CUdeviceptr)io_addr(io, io->n_in + b->index);
    else
      l->args[p] = plan->ws + (CUdeviceptr)b->offset;
  }
}

/* Binds every launch. A launch that reads tensor maps is checked here,
 * before any map is encoded: an operand off 16-byte alignment, which the
 * copy engine cannot read, makes this run take the launch's fallback form
 * (fallback.c; compiled and loaded at the first such run, unless the
 * run's stream is capturing). A library call gets the candidates its
 * pointers' alignments need, or the same fallback where cuBLASLt has
 * none. */
static kf_status bind_io(rt_plan *plan, const rt_io *io, CUstream stream) {
  struct rt_plan *rp = plan;
  char why[300];
  for (int L = 0; L < rp->n_launches; L++) {
    rt_launch *l = &rp->launches[L];
    bind_launch(plan, io, l);
    l->on_alt = false;
    kf_status st = KF_OK;
    bool fall = false;
    if (l->lib) {
      /* the candidates for these pointers; none: the template form */
      st = rt_lib_bind(plan, l, why, sizeof why);
      fall = st == KF_ERR_UNSUPPORTED;
      if (st != KF_OK && !fall) return rt_plan_error(plan, st, "%s: %s", l->entry, why);
    } else if (l->n_tmaps && rt_fallback_needed(l)) {
      rt_fallback_why_maps(l, why, sizeof why);
      fall = true;
    } else if (l->n_tmaps) {
      st = rt_tmap_encode(plan, rp->state->drv, l);
    }
    if (fall) {
      st = rt_fallback_take(plan, L, stream, why);
      if (st == KF_OK) bind_launch(plan, io, l->alt);
    }
    if (st != KF_OK) return st;
  }
  return KF_OK;
}

kf_status rt_bind_args(rt_plan *plan, const kf_tensor *in, const kf_tensor *out, CUstream stream) {
  rt_io io = tensors_io("kf_plan_run", in, plan->graph->n_inputs, out, plan->graph->n_outputs);
  return bind_io(plan, &io, stream);
}

/* The launch may overlap the end of the kernel ahead of it in the stream;
 * the kernel's blocks wait for it in kf_grid_dep_sync (common.cuh). */
void rt_pdl_config(const rt_launch *l, CUstream s, CUlaunchConfig *cfg, CUlaunchAttribute *attr) {
  memset(attr, 0, sizeof *attr);
  attr->id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
  attr->value.programmaticStreamSerializationAllowed = 1;
  *cfg = (CUlaunchConfig){.gridDimX = l->grid,
                          .gridDimY = 1,
                          .gridDimZ = 1,
                          .blockDimX = l->block,
                          .blockDimY = 1,
                          .blockDimZ = 1,
                          .sharedMemBytes = l->smem,
                          .hStream = s,
                          .attrs = attr,
                          .numAttrs = 1};
}

kf_status rt_launch_one(rt_plan *plan, int i, CUstream stream, bool plain) {
  rt_launch *l = &plan->launches[i];
  const rt_driver *drv = plan->state->drv;
  if (l->grid == 0) return KF_OK; /* an empty tensor: nothing to do */
  if (l->lib && !l->on_alt) return rt_lib_run(plan, l, stream);
  const rt_launch *k = rt_fallback_kernel(l); /* the binding's form of the launch */
  /* Unwatched, a launch pays this one check (docs/performance.md). */
  bool span = rt_span_on();
  if (span) rt_span_pushf("launch %s", k->entry);
  bool pdl = plain && k->pdl;
  CUresult r;
  if (pdl) {
    CUlaunchConfig cfg;
    CUlaunchAttribute attr;
    rt_pdl_config(k, stream, &cfg, &attr);
    r = drv->LaunchKernelEx(&cfg, k->fn, k->argv, NULL);
  } else {
    r = drv->LaunchKernel(k->fn, k->grid, 1, 1, k->block, 1, 1, k->smem, stream, k->argv, NULL);
  }
  if (span) rt_span_pop();
  if (r != CUDA_SUCCESS) {
    char what[96];
    snprintf(what, sizeof what, "%s(%s)", pdl ? "cuLaunchKernelEx" : "cuLaunchKernel", k->entry);
    return rt_fail(plan->ctx, plan, plan->state, r, what);
  }
  return KF_OK;
}

kf_status rt_run_plain(rt_plan *plan, CUstream stream) {
  kf_status st = KF_OK;
  for (int i = 0; i < plan->n_launches && st == KF_OK; i++)
    st = rt_launch_one(plan, i, stream, true);
  return st;
}

/* Loaded with the current code, and the workspace in place. */
static bool ready(const rt_plan *plan) {
  const struct rt_plan *rp = plan;
  size_t need = plan->fuse->workspace_bytes > 0 ? (size_t)plan->fuse->workspace_bytes : 0;
  return rp->loaded && rp->loaded_code == plan->code &&
         (rp->ws_caller || need == 0 || (rp->ws && rp->ws_bytes >= need));
}

/* Nothing may be compiled, loaded or allocated while the caller's stream
 * is being captured: those calls are illegal in a capture, or would not be
 * part of it. *capturing tells the mode dispatch too. */
static kf_status check_capture(rt_plan *plan, rt_state *rt, const char *fn, CUstream stream,
                               bool *capturing) {
  struct rt_plan *rp = plan;
  CUstreamCaptureStatus cs = CU_STREAM_CAPTURE_STATUS_NONE;
  CUresult r = rt->drv->StreamIsCapturing(stream, &cs);
  if (r != CUDA_SUCCESS && r != CUDA_ERROR_STREAM_CAPTURE_IMPLICIT)
    return rt_fail(plan->ctx, plan, rt, r, "cuStreamIsCapturing");
  *capturing = r != CUDA_SUCCESS || cs != CU_STREAM_CAPTURE_STATUS_NONE;
  if (!*capturing || ready(plan)) return KF_OK;
  bool loaded = rp->loaded && rp->loaded_code == plan->code;
  return rt_plan_error(plan, KF_ERR_INVALID_ARG,
                       "%s: the stream is capturing a CUDA Graph and the plan is not %s yet; "
                       "nothing is compiled, loaded or allocated during a capture: call "
                       "kf_plan_load before capturing",
                       fn, loaded ? "given its workspace" : "loaded");
}

static kf_status run_loaded(rt_plan *plan, rt_state *rt, const rt_io *io, CUstream stream,
                            bool capturing) {
  struct rt_plan *rp = plan;
  kf_status st = KF_OK;
  if (!(rp->loaded && rp->loaded_code == plan->code)) st = plan->load(plan->owner);
  if (st == KF_OK) st = rt_plan_ready_workspace(plan, rt);
  if (st != KF_OK) return st;
  if ((st = bind_io(plan, io, stream)) != KF_OK) return st;
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

/* The context's state. A loaded plan holds it already (the state outlives
 * the plan), which spares the context's lock; a lost context takes the
 * locked path, which reports it. */
static kf_status state_for_run(rt_plan *plan, rt_state **rt) {
  struct rt_plan *rp = plan;
  if (rp->loaded && rp->state && !rp->state->lost) {
    *rt = rp->state;
    return KF_OK;
  }
  kf_status st = rt_state_get(plan->ctx, rt);
  if (st != KF_OK) return rt_plan_error(plan, st, "%s", kf_ctx_errmsg(plan->ctx));
  return KF_OK;
}

/* What kf_plan_run and kf_plan_run_ptrs both do. */
static kf_status run_io(rt_plan *plan, const rt_io *io, CUstream stream) {
  rt_state *rt;
  bool pushed, known = false, capturing = false;
  if (!plan) return KF_ERR_INVALID_ARG;
  if (!plan->fuse || !plan->graph)
    return rt_plan_error(plan, KF_ERR_INVALID_ARG, "%s: the plan was not created", io->fn);
  kf_status st = state_for_run(plan, &rt);
  if (st != KF_OK) return st;
  if ((st = rt_enter(plan->ctx, rt, &pushed)) != KF_OK) return st;
  st = validate_host(plan, io, &known);
  /* The capture status matters only when something is to be loaded,
   * allocated or asked of the driver (none of which a capture allows), and
   * to graph mode, which cannot replay its own graph into a capture. A
   * plain or streams run of known tensors is the same stream work either
   * way, so it does not ask. */
  if (st == KF_OK && (!known || !ready(plan) || plan->mode == KF_MODE_GRAPH))
    st = check_capture(plan, rt, io->fn, stream, &capturing);
  if (st == KF_OK && !known) st = validate_driver(plan, rt, io, !capturing);
  if (st == KF_OK) st = run_loaded(plan, rt, io, stream, capturing);
  rt_leave(rt, pushed);
  return st;
}

kf_status rt_plan_run(rt_plan *plan, const kf_tensor *inputs, int n_inputs,
                      const kf_tensor *outputs, int n_outputs, void *stream) {
  rt_io io = tensors_io("kf_plan_run", inputs, n_inputs, outputs, n_outputs);
  return run_io(plan, &io, (CUstream)stream);
}

kf_status rt_plan_run_ptrs(rt_plan *plan, void *const *inputs, int n_inputs, void *const *outputs,
                           int n_outputs, void *stream) {
  rt_io io = {.fn = "kf_plan_run_ptrs",
              .ptrs = true,
              .n_in = n_inputs,
              .n_out = n_outputs,
              .pin = inputs,
              .pout = outputs};
  return run_io(plan, &io, (CUstream)stream);
}
