/* rt.h - the runtime's shared types: per-context state (driver,
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
#include "runtime/gemm_lt.h"

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
  /* cuBLASLt, for plans with library calls: created at the first such
   * load (rt_lib_handle, lib_launch.h), under the context's lock. */
  const rt_blaslt *lt;
  cublasLtHandle_t lt_handle;
  /* The matmul choice's records read or written in this process
   * (lib_time.c), so that a model's many plans with the same products
   * time each once; under the context's lock. */
  struct rt_lib_memo *lib_records;
} rt_state;

/* ---- a plan's loaded state (rt_plan.c and friends) ----------------------- */

/* What the compiler hands the runtime per launch. */
typedef struct rt_image {
  const cg_launch_src *src; /* entry, params, grid, block, smem */
  const void *image;        /* CUBIN; NULL for a library call (src->library) */
  size_t size;
  int lib_cand;       /* a library call: the candidate to run (0: first) */
  const char *symbol; /* the function in image; NULL: src->entry */
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

/* A launch that is a library call (cg_launch_src.library): the prepared
 * product, which candidate runs, and where its operands are among the
 * launch's bound pointers (rt_launch.args). */
/* Candidate sets a library call keeps for runs whose pointers are less
 * aligned than the load's set assumes (lib_launch.c). */
#define RT_LIB_ALIGN_SETS 4

typedef struct rt_lib {
  rt_gemm_lt p; /* prepared at load for pointers of the most alignment */
  int cand;
  int ia, ib, ibias, ic, id; /* indices into args; -1: absent */
  CUdeviceptr held_ws;       /* graph mode: the workspace the child graph was captured with */
  /* graph mode: the candidate set (by its alignments) and the algorithm
   * the child graph was captured with (rt_lib_same_capture) */
  rt_gemm_align held_align;
  cublasLtMatmulAlgo_t held_algo;
  /* Views off that alignment: the product prepared again with the real
   * alignments as the heuristic's preferences, once per set of alignments
   * (the oldest replaced when all are taken). */
  rt_gemm_lt low[RT_LIB_ALIGN_SETS];
  int n_low, next_low;
  bool low_logged; /* the one warning the first of them gives */
  /* Alignments the heuristic had no algorithm for (runs with them take
   * the launch's fallback form without asking again), the oldest
   * replaced. */
  rt_gemm_align refused[RT_LIB_ALIGN_SETS];
  int n_refused, next_refused;
  /* This binding's set (rt_lib_bind): NULL for p (candidate cand), else
   * one of low with its candidate low_cand. */
  rt_gemm_lt *bound;
  int bound_cand;
} rt_lib;

typedef struct rt_launch {
  char entry[64];  /* the launch's kernel name (messages, profiles) */
  char symbol[64]; /* the function looked up in its module: entry, or an alike launch's */
  rt_lib *lib;     /* a library call (no module, no function), or NULL */
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
  /* Tensor-map parameters (cg_launch_src.tmaps, runtime/tmap.c), passed
   * after the pointers in argv: each encoded from args[tmap_param[i]],
   * again only when that address changes (tmap_addr: the last one). */
  int cluster; /* blocks per cluster (cg_launch_src.cluster): grids keep to multiples */
  int n_tmaps;
  cg_tmap tmap_desc[CG_MAX_TMAPS];
  int tmap_param[CG_MAX_TMAPS];
  CUdeviceptr tmap_addr[CG_MAX_TMAPS];
  CUtensorMap *tmaps; /* aligned as CUtensorMap (128 bytes), inside tmap_mem */
  void *tmap_mem;
  /* A launch with tensor maps, or a library call, has a second form
   * without them (runtime/fallback.c): the same kernel generated with the
   * sm_90 templates and the library off, compiled and loaded at the first
   * run that brings an operand its own path cannot take (not 16-byte
   * aligned for the copy engine; no cuBLASLt algorithm for its
   * alignments), then run in place of this one (on_alt) by every run
   * whose addresses need it. Only its kernel fields are used (entry ...
   * occ); the schedule stays this launch's. */
  struct rt_launch *alt;
  bool on_alt;    /* this binding runs alt */
  bool graph_alt; /* graph mode: the instantiated node runs alt */
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
  /* Generates, compiles and loads (rt_fallback_load) launch L's fallback
   * form, for a run whose operands its own path cannot take; set by the
   * pipeline like load. NULL: such a run is an error. */
  kf_status (*fallback)(void *owner, int launch);
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
  int graph_updates;       /* nodes updated in place: kernels, library children (tests) */
};

/* Records a message on the plan (its errmsg buffer) and its context;
 * returns st. */
#define rt_plan_error(rp, st, ...) \
  core_error_buf((rp)->ctx, (rp)->errmsg, (rp)->errsize, (st), __VA_ARGS__)

#endif
