/* pipeline.c - the pipeline's driver: kf_plan_compile and kf_plan_load run
 * the passes in order, each one call into its own layer, with the
 * occupancy feedback as the visible loop between them:
 *
 *   fuse (kf_plan_create) -> emit -> [re-fuse from cached measurements]
 *     -> compile -> load -> measure -> [decide, re-fuse, compile, load]
 *
 * Each feedback loop is bounded by PL_FEEDBACK_ROUNDS. */
#include "pipeline/pipeline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "codegen/emit.h"
#include "codegen/program.h"
#include "core/alloc.h"
#include "pipeline/feedback.h"
#include "pipeline/matmul_choice.h"
#include "pipeline/plan_dump.h"
#include "pipeline/plan_target.h"
#include "pipeline/run.h"
#include "pipeline/scratch_plan.h"
#include "runtime/compile.h"
#include "runtime/nvtx.h"
#include "runtime/rt.h"
#include "runtime/rt_plan.h"
#include "runtime/rt_state.h"

/* Rounds of re-fusing one compile or one load may take: each round can
 * only split kernels further, so this bounds the work, never a loop. */
enum { PL_FEEDBACK_ROUNDS = 4 };

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static kf_status emit_all(kf_plan *plan, cg_program *prog, const cg_target *target) {
  char err[1024] = "";
  for (int i = 0; i < prog->n_launches; i++) {
    rt_span_pushf("codegen launch %d", i);
    double t0 = now_ms();
    kf_status st =
        cg_emit_launch(plan->graph, plan->fuse, i, target, &prog->launches[i].src, err, sizeof err);
    prog->launches[i].emit_ms = now_ms() - t0;
    rt_span_pop();
    if (st != KF_OK)
      return pl_plan_error(plan, st, "code generation failed for launch %d: %s", i, err);
  }
  return KF_OK;
}

/* plan->fuse changed (a cached occupancy split): generate the code again. */
static kf_status reemit(kf_plan *plan, cg_program **prog, const cg_target *target) {
  cg_program *p = cg_program_new(plan->fuse->n_launches);
  if (!p) return pl_plan_error(plan, KF_ERR_OUT_OF_MEMORY, "kf_plan_compile: out of memory");
  memcpy(p->arch, (*prog)->arch, sizeof p->arch);
  cg_program_free(*prog);
  *prog = p;
  return emit_all(plan, p, target);
}

/* Loads the compiler's images for the plan's launches. */
static kf_status load_program(kf_plan *plan) {
  const cg_program *prog = plan->code;
  if (prog->n_launches != plan->fuse->n_launches)
    return pl_plan_error(plan, KF_ERR_INTERNAL, "the compiled program has %d launches, the plan %d",
                         prog->n_launches, plan->fuse->n_launches);
  rt_image *imgs = core_calloc((size_t)prog->n_launches + 1, sizeof *imgs);
  if (!imgs) return pl_plan_error(plan, KF_ERR_OUT_OF_MEMORY, "kf_plan_load: out of memory");
  for (int i = 0; i < prog->n_launches; i++)
    imgs[i] = (rt_image){&prog->launches[i].src, prog->launches[i].image,
                         prog->launches[i].image_size, prog->launches[i].lib_cand,
                         prog->launches[i].symbol[0] ? prog->launches[i].symbol : NULL};
  rt_plan *rp = pl_rt_plan(plan);
  kf_status st = rp ? rt_plan_load_images(rp, imgs, prog->n_launches) : KF_ERR_OUT_OF_MEMORY;
  free(imgs);
  if (st == KF_OK) pl_feedback_note(plan); /* the load measured each launch */
  return st;
}

/* A new program for plan->fuse: the target, code generation, and the
 * splits an earlier process measured (re-fused before NVRTC). */
static kf_status generate(kf_plan *plan, cg_program **out) {
  *out = NULL;
  cg_program *prog = cg_program_new(plan->fuse->n_launches);
  if (!prog) return pl_plan_error(plan, KF_ERR_OUT_OF_MEMORY, "kf_plan_compile: out of memory");
  cg_target target;
  kf_status st =
      pl_plan_target(plan, NULL, true, "kf_plan_compile", &target, prog->arch, sizeof prog->arch);
  if (st == KF_OK && !plan->rt) st = pl_gemm_pair_refit(plan, &target);
  if (st == KF_OK) st = emit_all(plan, prog, &target);
  for (int r = 0; st == KF_OK && r < PL_FEEDBACK_ROUNDS && pl_feedback_apply_cached(plan, prog);
       r++)
    st = reemit(plan, &prog, &target);
  if (st != KF_OK) {
    cg_program_free(prog);
    return st;
  }
  *out = prog;
  return KF_OK;
}

/* The compiled program becomes the plan's code. */
static void adopt_code(kf_plan *plan, cg_program *prog, double t0) {
  prog->stats.compile_ms = now_ms() - t0;
  /* summed against the wall time: how well the pool overlapped them */
  double sum = 0, slowest = 0;
  for (int i = 0; i < prog->n_launches; i++) {
    sum += prog->launches[i].compile_ms;
    if (prog->launches[i].compile_ms > slowest) slowest = prog->launches[i].compile_ms;
  }
  core_log(plan->ctx, KF_LOG_INFO, LOG_CACHE,
           "compiled %d kernels for %s in %.1f ms (%d by NVRTC, %d cache hits; %.0f ms of "
           "compiles summed, the slowest %.0f ms)",
           prog->stats.kernels, prog->arch, prog->stats.compile_ms, prog->stats.compiled,
           prog->stats.cache_hits, sum, slowest);
  cg_program_free(plan->code);
  plan->code = prog;
  pl_dump_plan(plan); /* KFUSE_DUMP_DIR; nothing when unset */
}

/* NVRTC for the plan's program and, when there is one, for its template
 * plan's (compiled ahead for the load's choice) in one batch of the pool:
 * the template's kernels compile beside the plan's, where they used to
 * wait for them. The plan's failure is the compile's; the template's is
 * only logged (the load plans it again and reports). */
static kf_status compile_with_ahead(kf_plan *plan, cg_program *prog, kf_plan *ahead,
                                    cg_program *aprog, double t0, double a0) {
  int n = ahead ? 2 : 1;
  char *errs[2] = {NULL, NULL};
  kf_status sts[2] = {KF_ERR_OUT_OF_MEMORY, KF_ERR_OUT_OF_MEMORY};
  cg_program *progs[2] = {prog, aprog};
  bool room = true;
  for (int i = 0; i < n; i++) room = room && (errs[i] = core_malloc(sizeof plan->errmsg)) != NULL;
  if (room)
    rt_compile_programs(plan->ctx, progs, n, sts, errs, sizeof plan->errmsg,
                        ahead ? pl_matmul_ahead_setup : NULL, plan);
  kf_status st = sts[0];
  if (st != KF_OK) pl_plan_error(plan, st, "%s", room ? errs[0] : "kf_plan_compile: out of memory");
  if (ahead && st == KF_OK && sts[1] == KF_OK) {
    adopt_code(ahead, aprog, a0);
    plan->ahead = ahead; /* kept for the load's timing */
    plan->ahead_ms = now_ms() - a0;
  } else if (ahead) {
    if (st == KF_OK)
      core_log(plan->ctx, KF_LOG_DEBUG, LOG_RUNTIME,
               "matmul: the template plan was not compiled ahead: %.400s",
               room ? errs[1] : "out of memory");
    cg_program_free(aprog);
    pl_scratch_free(ahead);
  }
  if (st == KF_OK)
    adopt_code(plan, prog, t0);
  else
    cg_program_free(prog);
  free(errs[0]);
  free(errs[1]);
  return st;
}

kf_status kf_plan_compile(kf_plan *plan) {
  if (!plan || !plan->fuse)
    return plan ? pl_plan_error(plan, KF_ERR_INVALID_ARG, "kf_plan_compile: plan has no fusion")
                : KF_ERR_INVALID_ARG;
  double t0 = now_ms();
  cg_program *prog = NULL, *aprog = NULL;
  kf_status st = generate(plan, &prog);
  if (st != KF_OK) return st;
  /* a plan with library calls: the template plan the load's choice times */
  double a0 = now_ms();
  kf_plan *ahead = plan->scratch ? NULL : pl_matmul_ahead_plan(plan);
  if (ahead) ahead->options.arch = prog->arch; /* the plan's code once compiled */
  if (ahead && generate(ahead, &aprog) != KF_OK) {
    core_log(plan->ctx, KF_LOG_DEBUG, LOG_RUNTIME,
             "matmul: the template plan was not compiled ahead: %.400s", ahead->errmsg);
    pl_scratch_free(ahead);
    ahead = NULL;
  }
  return compile_with_ahead(plan, prog, ahead, aprog, t0, a0);
}

kf_status kf_plan_load(kf_plan *plan) {
  if (!plan) return KF_ERR_INVALID_ARG;
  if (!plan->fuse) return pl_plan_error(plan, KF_ERR_INVALID_ARG, "kf_plan_load: no plan");
  if (plan->rt && plan->rt->loaded && plan->rt->loaded_code == plan->code && plan->code)
    return KF_OK;
  rt_state *rt;
  kf_status st = rt_state_get(plan->ctx, &rt); /* no device: say so before compiling */
  if (st != KF_OK) return pl_plan_error(plan, st, "%s", kf_ctx_errmsg(plan->ctx));
  if (!plan->code && (st = kf_plan_compile(plan)) != KF_OK) return st;
  if (!plan->code)
    return pl_plan_error(plan, KF_ERR_UNSUPPORTED, "kf_plan_load: the plan is not compiled");
  rt_span_push("module load");
  st = load_program(plan);
  /* no cuBLASLt, or it refused a product: template kernels instead */
  if (st == KF_ERR_UNSUPPORTED && plan->fuse->n_library > 0 &&
      (st = pl_matmul_fallback(plan)) == KF_OK)
    st = load_program(plan);
  /* library calls: their candidates timed once (or read back), the fastest kept */
  if (st == KF_OK && plan->fuse->n_library > 0) {
    bool reload = false;
    st = pl_matmul_choose(plan, &reload);
    if (st == KF_OK && reload) st = load_program(plan);
  }
  /* measured on load; decide, re-fuse, compile and load again (the
   * matmul choice carried over to the new fusion) */
  pl_matmul_kept kept;
  pl_matmul_keep(plan, &kept);
  for (int r = 0; st == KF_OK && r < PL_FEEDBACK_ROUNDS && pl_feedback_split(plan); r++)
    st = load_program(plan);
  if (st == KF_OK) pl_matmul_restore(plan, &kept);
  rt_span_pop();
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

kf_status kf_plan_launch_compile(const kf_plan *plan, int launch, kf_launch_compile *out) {
  if (!plan || !out) return KF_ERR_INVALID_ARG;
  if (!plan->code) return KF_ERR_UNSUPPORTED;
  if (launch < 0 || launch >= plan->code->n_launches) return KF_ERR_INVALID_ARG;
  const cg_program_launch *l = &plan->code->launches[launch];
  static const kf_origin origins[] = {KF_ORIGIN_COMPILED, KF_ORIGIN_MEM_HIT, KF_ORIGIN_DISK_HIT};
  *out = (kf_launch_compile){.origin = l->src.library ? KF_ORIGIN_LIBRARY : origins[l->origin],
                             .emit_ms = l->emit_ms,
                             .compile_ms = l->compile_ms,
                             .source_bytes = l->src.source ? (int64_t)strlen(l->src.source) : 0,
                             .key_hi = l->key_hi,
                             .key_lo = l->key_lo};
  return KF_OK;
}
