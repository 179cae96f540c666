/* compile.c - the pipeline's driver: kf_plan_compile and kf_plan_load run
 * the passes in order, each one call into its own layer, with the
 * occupancy feedback as the visible loop between them:
 *
 *   fuse (kf_plan_create) -> emit -> [re-fuse from cached measurements]
 *     -> compile -> load -> measure -> [decide, re-fuse, compile, load]
 *
 * Each feedback loop is bounded by PL_FEEDBACK_ROUNDS. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "codegen/program.h"
#include "core/alloc.h"
#include "core/span.h"
#include "pipeline/dump.h"
#include "pipeline/feedback.h"
#include "pipeline/pipeline.h"
#include "runtime/nvrtc.h"
#include "runtime/rt.h"

/* Rounds of re-fusing one compile or one load may take: each round can
 * only split kernels further, so this bounds the work, never a loop. */
enum { PL_FEEDBACK_ROUNDS = 4 };

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* Asks the runtime for the device's arch and facts (grids are sized to its
 * SM count). Having no device is not an error of the compile, so the
 * context's last message is left as it was. */
static bool device_arch(kf_ctx *ctx, char *arch, size_t size, kf_device_info *info) {
  char *saved = core_malloc(sizeof ctx->errmsg);
  if (saved) {
    pthread_mutex_lock(&ctx->lock);
    memcpy(saved, ctx->errmsg, sizeof ctx->errmsg);
    pthread_mutex_unlock(&ctx->lock);
  }
  bool ok = rt_device_arch(ctx, arch, size) == KF_OK;
  char cc[32] = "";
  if (ok && kf_device_query(ctx, 0, info) == KF_OK)
    snprintf(cc, sizeof cc, "sm_%d%d", info->cc_major, info->cc_minor);
  if (!ok || strcmp(cc, arch) != 0) info->sm_count = 0; /* GPU 0 is another kind: defaults */
  if (saved) {
    pthread_mutex_lock(&ctx->lock);
    memcpy(ctx->errmsg, saved, sizeof ctx->errmsg);
    pthread_mutex_unlock(&ctx->lock);
  }
  free(saved);
  return ok;
}

/* options.arch, else the device's, else sm_90 with a warning; normalized.
 * info->sm_count > 0 when the device's facts apply to the target. */
static kf_status resolve_arch(kf_plan *plan, char *arch, size_t size, kf_device_info *info) {
  const char *want = plan->options.arch;
  char dev[32], err[256];
  info->sm_count = 0;
  if (!want || !*want) {
    if (device_arch(plan->ctx, dev, sizeof dev, info)) {
      want = dev;
    } else {
      core_log(plan->ctx, KF_LOG_WARN, LOG_CACHE,
               "no CUDA device to take the arch from; compiling for sm_90 (set options.arch)");
      want = "sm_90";
    }
  }
  if (!rt_nvrtc_arch(want, arch, size, err, sizeof err))
    return core_plan_error(plan, KF_ERR_INVALID_ARG, "kf_plan_compile: %s", err);
  return KF_OK;
}

static kf_status emit_all(kf_plan *plan, cg_program *prog, const kf_device_info *info) {
  cg_target target;
  char err[1024] = "";
  if (!cg_target_from_arch(prog->arch, &target))
    return core_plan_error(plan, KF_ERR_INVALID_ARG, "kf_plan_compile: unknown arch %s",
                           prog->arch);
  target.grid_dep = plan->options.pdl;
  if (info->sm_count > 0) {
    target.sm_count = info->sm_count;
    if (info->max_threads_per_sm > 0) target.max_threads_per_sm = info->max_threads_per_sm;
    if (info->max_smem_per_block > 0) target.max_smem_per_block = info->max_smem_per_block;
  }
  for (int i = 0; i < prog->n_launches; i++) {
    core_span_pushf("codegen launch %d", i);
    kf_status st = cg_emit_launch(plan->graph, plan->fuse, i, &target, &prog->launches[i].src, err,
                                  sizeof err);
    core_span_pop();
    if (st != KF_OK)
      return core_plan_error(plan, st, "code generation failed for launch %d: %s", i, err);
  }
  return KF_OK;
}

/* plan->fuse changed (a cached occupancy split): generate the code again. */
static kf_status reemit(kf_plan *plan, cg_program **prog, const kf_device_info *info) {
  cg_program *p = cg_program_new(plan->fuse->n_launches);
  if (!p) return core_plan_error(plan, KF_ERR_OUT_OF_MEMORY, "kf_plan_compile: out of memory");
  memcpy(p->arch, (*prog)->arch, sizeof p->arch);
  cg_program_free(*prog);
  *prog = p;
  return emit_all(plan, p, info);
}

/* Loads the compiler's images for the plan's launches. */
static kf_status load_program(kf_plan *plan) {
  const cg_program *prog = plan->code;
  if (prog->n_launches != plan->fuse->n_launches)
    return core_plan_error(plan, KF_ERR_INTERNAL,
                           "the compiled program has %d launches, the plan %d", prog->n_launches,
                           plan->fuse->n_launches);
  rt_image *imgs = core_calloc((size_t)prog->n_launches + 1, sizeof *imgs);
  if (!imgs) return core_plan_error(plan, KF_ERR_OUT_OF_MEMORY, "kf_plan_load: out of memory");
  for (int i = 0; i < prog->n_launches; i++)
    imgs[i] =
        (rt_image){&prog->launches[i].src, prog->launches[i].image, prog->launches[i].image_size};
  kf_status st = rt_plan_load_images(plan, imgs, prog->n_launches);
  free(imgs);
  if (st == KF_OK) plan->rt->code = plan->code;
  if (st == KF_OK) pl_feedback_note(plan); /* the load measured each launch */
  return st;
}

/* NVRTC for every launch (through the caches). */
static kf_status compile_all(kf_plan *plan, cg_program *prog) {
  char *err = core_malloc(sizeof plan->errmsg);
  kf_status st =
      err ? rt_compile_program(plan->ctx, prog, err, sizeof plan->errmsg) : KF_ERR_OUT_OF_MEMORY;
  if (st != KF_OK) core_plan_error(plan, st, "%s", err ? err : "out of memory");
  free(err);
  return st;
}

kf_status kf_plan_compile(kf_plan *plan) {
  if (!plan || !plan->fuse)
    return plan ? core_plan_error(plan, KF_ERR_INVALID_ARG, "kf_plan_compile: plan has no fusion")
                : KF_ERR_INVALID_ARG;
  double t0 = now_ms();
  cg_program *prog = cg_program_new(plan->fuse->n_launches);
  if (!prog) return core_plan_error(plan, KF_ERR_OUT_OF_MEMORY, "kf_plan_compile: out of memory");
  kf_device_info info;
  kf_status st = resolve_arch(plan, prog->arch, sizeof prog->arch, &info);
  if (st == KF_OK) st = emit_all(plan, prog, &info);
  /* feedback an earlier process measured: re-fuse before NVRTC */
  for (int r = 0; st == KF_OK && r < PL_FEEDBACK_ROUNDS && pl_feedback_apply_cached(plan, prog);
       r++)
    st = reemit(plan, &prog, &info);
  if (st == KF_OK) st = compile_all(plan, prog);
  if (st != KF_OK) {
    cg_program_free(prog);
    return st;
  }
  prog->stats.compile_ms = now_ms() - t0;
  core_log(plan->ctx, KF_LOG_INFO, LOG_CACHE,
           "compiled %d kernels for %s in %.1f ms (%d by NVRTC, %d cache hits)",
           prog->stats.kernels, prog->arch, prog->stats.compile_ms, prog->stats.compiled,
           prog->stats.cache_hits);
  cg_program_free(plan->code);
  plan->code = prog;
  pl_dump_plan(plan); /* KFUSE_DUMP_DIR; nothing when unset */
  return KF_OK;
}

kf_status kf_plan_load(kf_plan *plan) {
  if (!plan) return KF_ERR_INVALID_ARG;
  if (!plan->fuse) return core_plan_error(plan, KF_ERR_INVALID_ARG, "kf_plan_load: no plan");
  if (plan->rt && plan->rt->loaded && plan->rt->code == plan->code && plan->code) return KF_OK;
  rt_state *rt;
  kf_status st = rt_state_get(plan->ctx, &rt); /* no device: say so before compiling */
  if (st != KF_OK) return core_plan_error(plan, st, "%s", kf_ctx_errmsg(plan->ctx));
  if (!plan->code && (st = kf_plan_compile(plan)) != KF_OK) return st;
  if (!plan->code)
    return core_plan_error(plan, KF_ERR_UNSUPPORTED, "kf_plan_load: the plan is not compiled");
  core_span_push("module load");
  st = load_program(plan);
  /* measured on load; decide, re-fuse, compile and load again */
  for (int r = 0; st == KF_OK && r < PL_FEEDBACK_ROUNDS && pl_feedback_split(plan); r++)
    st = load_program(plan);
  core_span_pop();
  /* Again, now with the occupancy decisions and the final kernels. */
  if (st == KF_OK) pl_dump_plan(plan);
  return st;
}

kf_status kf_compile(kf_ctx *ctx, const kf_graph *g, const kf_options *opt, kf_plan **out) {
  if (!out) return core_error(ctx, KF_ERR_INVALID_ARG, "kf_compile: out is NULL");
  *out = NULL;
  kf_plan *plan;
  kf_status st = kf_plan_create(ctx, g, opt, &plan);
  if (st != KF_OK) return st;
  st = kf_plan_compile(plan);
  if (st != KF_OK) {
    kf_plan_destroy(plan);
    return st;
  }
  *out = plan;
  return KF_OK;
}

kf_status kf_plan_compile_stats(const kf_plan *plan, kf_compile_stats *out) {
  if (!plan || !out) return KF_ERR_INVALID_ARG;
  if (!plan->code) return KF_ERR_UNSUPPORTED;
  *out = plan->code->stats;
  return KF_OK;
}
