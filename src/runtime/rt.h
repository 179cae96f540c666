/* rt.h - the runtime's internal contracts: per-context state (driver,
 * device, CUDA context, stream pool, lost flag) and a plan's loaded state
 * (modules, functions, workspace, schedule, CUDA Graph). */
#ifndef KF_RUNTIME_RT_H
#define KF_RUNTIME_RT_H

#include <stdbool.h>
#include <stdint.h>

#include "codegen/codegen.h"
#include "core/ctx.h"
#include "core/knobs.h"
#include "fuser/occ_model.h"
#include "fuser/plan.h"
#include "runtime/driver.h"

/* Streams in a context's pool; kf_options.streams is clamped to this. */
#define RT_MAX_STREAMS 8
/* Device addresses a plan remembers as checked, beyond the last run's. */
#define RT_SEEN 16

typedef struct rt_plan rt_plan; /* a plan's runtime part (below) */

/* ---- per-context state (rt_state.c) -------------------------------------- */

typedef struct rt_state {
  const rt_driver *drv;
  CUdevice dev;
  CUcontext cuctx; /* the caller's current context at first use, or the
                      device's primary context */
  bool retained;   /* we retained cuctx (a primary context) */
  bool lost;       /* a sticky error happened: every later call fails */
  char lost_msg[512];
  int prio_least, prio_greatest; /* cuCtxGetStreamPriorityRange */
  CUstream pool[RT_MAX_STREAMS]; /* pool[0] has the greatest priority */
  int pool_prio[RT_MAX_STREAMS];
  int n_pool;
  kf_device_info info;
} rt_state;

/* The context's runtime state, created at first use (loads the driver,
 * picks the context). Errors (on ctx): KF_ERR_NO_DEVICE, KF_ERR_CUDA,
 * KF_ERR_CONTEXT_LOST once lost, KF_ERR_OUT_OF_MEMORY. Thread-safe. */
kf_status rt_state_get(kf_ctx *ctx, rt_state **out);
/* Releases a context's runtime state (kf_ctx_destroy); tolerates NULL. */
void rt_state_destroy(struct rt_state *rt);
/* Makes rt's CUDA context current for this thread if it is not; *pushed
 * says whether rt_leave must pop it. */
kf_status rt_enter(kf_ctx *ctx, rt_state *rt, bool *pushed);
void rt_leave(rt_state *rt, bool pushed);
/* Records a failed driver call `what` on the plan (when not NULL) and the
 * context, marks the context lost on a sticky error, and returns the
 * mapped status (rt_cu_status). */
kf_status rt_fail(kf_ctx *ctx, rt_plan *plan, rt_state *rt, CUresult r, const char *what);
/* The first n streams of the pool, created at first need (inside
 * rt_enter). Errors as rt_fail. Thread-safe. */
kf_status rt_pool_streams(kf_ctx *ctx, rt_plan *plan, rt_state *rt, int n, CUstream *out);

/* Fills a kf_device_info for dev (device.c). */
CUresult rt_device_fill(const rt_driver *drv, CUdevice dev, kf_device_info *out);

/* ---- a plan's loaded state (rt_plan.c and friends) ----------------------- */

/* What the compiler hands the runtime per launch. */
typedef struct rt_image {
  const cg_launch_src *src; /* entry, params, grid, block, smem */
  const void *image;        /* CUBIN */
  size_t size;
} rt_image;

/* Where a kernel parameter points. */
typedef struct rt_bind {
  fuse_home home;
  int index;      /* HOME_INPUT / HOME_OUTPUT */
  int64_t offset; /* HOME_WORKSPACE */
} rt_bind;

/* What occupancy feedback measured for one launch's function (the struct
 * the fuser's occupancy policy reads). */
typedef fuse_occ rt_occ;

typedef struct rt_launch {
  char entry[64];
  CUmodule mod;
  CUfunction fn;
  uint32_t grid, block, smem;
  int n_params;
  rt_bind *binds;    /* n_params */
  CUdeviceptr *args; /* n_params: the bound pointers */
  void **argv;       /* n_params + 1: &args[i], NULL-terminated */
  rt_occ occ;
  /* schedule */
  int32_t *deps; /* earlier launches this one must follow */
  int n_deps;
  int64_t cost;    /* bytes moved, + 1 */
  int64_t to_sink; /* longest cost path from here to the end */
  bool critical;
  bool pdl;     /* plain runs launch it with programmatic dependent
                   launch: the plan asks (kf_options.pdl), the device
                   allows (sm_90, driver 12.3+) and the kernel starts
                   with kf_grid_dep_sync (cg_launch_src.grid_dep) */
  int stream;   /* pool index in streams mode */
  CUevent done; /* recorded after it when another stream waits */
  CUgraphNode node;
} rt_launch;

struct rt_plan {
  /* What the runtime knows of the plan it runs: the pipeline hands these
   * in (pl_rt_plan) and refreshes them before each call, since a re-fuse
   * replaces the fuse plan and the program. Borrowed, never freed here. */
  kf_ctx *ctx;
  const kf_graph *graph;
  const fuse_plan *fuse;
  const struct cg_program *code; /* the plan's program now */
  const kf_options *options;
  const core_knobs *knobs;
  char *errmsg; /* the plan's message buffer (kf_plan_errmsg) */
  size_t errsize;
  /* Compiles and loads the plan (kf_plan_load) when a run finds it not
   * loaded; owner is what it takes. The runtime does not know the
   * pipeline: the pipeline hands it this. */
  kf_status (*load)(void *owner);
  void *owner;
  /* loaded state */
  rt_state *state;
  bool loaded;
  const void *loaded_code; /* the code that was loaded: a recompile reloads */
  int n_launches;
  rt_launch *launches;
  /* workspace */
  CUdeviceptr ws;
  size_t ws_bytes;
  bool ws_owned;  /* allocated by kfuse (freed by kfuse) */
  bool ws_caller; /* handed in by kf_plan_set_workspace */
  kf_run_mode mode;
  /* validation cache (launch.c), kept across reloads: per tensor slot the
   * address the driver last vouched for; checked_set: those addresses, as
   * a set, passed every check (overlaps too), so a run bringing them again
   * asks the driver nothing; seen: the last RT_SEEN addresses the driver
   * vouched for in any slot (buffers that swap roles between runs). */
  CUdeviceptr *checked;
  int n_checked;
  bool checked_set;
  struct rt_span *spans; /* n_checked: scratch of the overlap sweep */
  CUdeviceptr seen[RT_SEEN];
  int seen_next;
  /* streams mode */
  bool scheduled;
  int n_streams; /* pool streams used */
  CUevent fork_ev;
  CUevent join_ev[RT_MAX_STREAMS];
  /* graph mode */
  CUgraph cugraph;
  CUgraphExec exec;
  CUdeviceptr *graph_args; /* per launch, n_params each, as the exec holds */
  int graph_updates;       /* kernel nodes updated in place (tests) */
};

/* A plan's runtime part, empty, running in `mode`; NULL on OOM. Its
 * inputs (ctx ... owner) are the caller's to fill. */
rt_plan *rt_plan_new(kf_run_mode mode);
/* Loads the given images (one per plan launch) into modules and functions,
 * measures occupancy, resolves parameter bindings, allocates the
 * workspace. Used by kf_plan_load with the compiler's images, and directly
 * by tests with fake ones. Errors recorded on the plan. */
kf_status rt_plan_load_images(rt_plan *plan, const rt_image *images, int n);
/* Unloads modules, frees events, graph, workspace; keeps rt_plan. */
void rt_plan_unload(rt_plan *plan);
/* Releases a plan's runtime part (kf_plan_destroy); tolerates NULL. */
void rt_plan_free(rt_plan *rt);
/* Records a message on the plan (its errmsg buffer) and its context;
 * returns st. */
#define rt_plan_error(rp, st, ...) \
  core_error_buf((rp)->ctx, (rp)->errmsg, (rp)->errsize, (st), __VA_ARGS__)

/* What kf_plan_run, kf_plan_run_ptrs, kf_plan_run_dlpack(_legacy),
 * kf_plan_profile, kf_plan_benchmark, kf_plan_set_workspace and
 * kf_plan_set_mode do (kfuse.h), for the plan whose runtime part is rp;
 * the pipeline's entry points (pipeline/run.c) hand them that part. A run
 * of a plan not loaded yet calls rp->load. */
kf_status rt_plan_run(rt_plan *rp, const kf_tensor *inputs, int n_inputs, const kf_tensor *outputs,
                      int n_outputs, void *stream);
kf_status rt_plan_run_ptrs(rt_plan *rp, void *const *inputs, int n_inputs, void *const *outputs,
                           int n_outputs, void *stream);
kf_status rt_plan_run_dlpack(rt_plan *rp, struct DLManagedTensorVersioned *const *inputs,
                             int n_inputs, struct DLManagedTensorVersioned *const *outputs,
                             int n_outputs, void *stream);
kf_status rt_plan_run_dlpack_legacy(rt_plan *rp, struct DLManagedTensor *const *inputs,
                                    int n_inputs, struct DLManagedTensor *const *outputs,
                                    int n_outputs, void *stream);
kf_status rt_plan_profile(rt_plan *rp, const kf_tensor *inputs, int n_inputs,
                          const kf_tensor *outputs, int n_outputs, void *stream, kf_profile *out);
kf_status rt_plan_benchmark(rt_plan *rp, const kf_tensor *inputs, int n_inputs,
                            const kf_tensor *outputs, int n_outputs, void *stream,
                            const kf_bench_options *opt, kf_bench_result *out);
kf_status rt_plan_set_workspace(rt_plan *rp, void *dptr, size_t bytes);
kf_status rt_plan_set_mode(rt_plan *rp, kf_run_mode mode);

/* Allocates the workspace if kfuse owns it and it is missing (after an
 * earlier out-of-memory). */
kf_status rt_plan_ready_workspace(rt_plan *plan, rt_state *rt);

/* launch.c: validation and binding */
/* Checks every tensor of a run (counts, dtypes, shapes, NULL, alignment,
 * overlaps) and, once per new address, that it is device memory of the
 * plan's GPU (cuPointerGetAttribute). */
kf_status rt_validate(rt_plan *plan, rt_state *rt, const kf_tensor *in, int n_in,
                      const kf_tensor *out, int n_out);
/* The same; ask_driver false skips the pointer check (during a capture). */
kf_status rt_validate_ex(rt_plan *plan, rt_state *rt, const kf_tensor *in, int n_in,
                         const kf_tensor *out, int n_out, bool ask_driver);
void rt_bind_args(rt_plan *plan, const kf_tensor *in, const kf_tensor *out);
kf_status rt_run_plain(rt_plan *plan, CUstream stream);
/* Launch i on stream. With plain (plain mode's order: each launch after the
 * kernel ahead of it in the stream), a launch marked rt_launch.pdl may
 * begin while that kernel drains (its blocks wait in kf_grid_dep_sync). */
kf_status rt_launch_one(rt_plan *plan, int i, CUstream stream, bool plain);
/* The cuLaunchKernelEx configuration of launch l on stream s with
 * programmatic stream serialization (attr is the one attribute cfg points
 * to): what plain mode launches, and what bench_host times bare. */
void rt_pdl_config(const rt_launch *l, CUstream s, CUlaunchConfig *cfg, CUlaunchAttribute *attr);

/* streams.c */
/* Computes dependencies, costs, the critical path and stream assignment
 * for n_streams streams (pure logic, no driver calls). */
kf_status rt_schedule(rt_plan *plan, int n_streams);
kf_status rt_run_streams(rt_plan *plan, CUstream stream);

/* cuda_graph.c */
kf_status rt_run_graph(rt_plan *plan, CUstream stream);
void rt_graph_free(rt_plan *plan);

#endif
