/* tma_fallback.c - one launch generated again without tensor maps, for runs
 * whose operands the copy engine cannot read: same fusion, same buffers,
 * the kernel the plan would have had with the sm_90 templates off. */
#include "pipeline/tma_fallback.h"

#include <stdlib.h>
#include <string.h>

#include "codegen/emit.h"
#include "codegen/program.h"
#include "core/alloc.h"
#include "pipeline/plan_target.h"
#include "pipeline/run.h"
#include "runtime/compile.h"
#include "runtime/fallback.h"
#include "runtime/rt.h"

/* The launch's source, for the plan's target with the knobs that choose
 * the sm_90 kernels turned off (the cache key follows the source). */
static kf_status emit_without_maps(kf_plan *plan, int L, cg_program *prog) {
  cg_target t;
  kf_status st =
      pl_plan_target(plan, NULL, false, "kf_plan_run", &t, prog->arch, sizeof prog->arch);
  if (st != KF_OK) return st;
  core_knobs knobs = *plan->knobs;
  knobs.gemm90 = 0;
  knobs.attn90 = 0;
  t.knobs = &knobs;
  char err[1024] = "";
  st = cg_emit_launch(plan->graph, plan->fuse, L, &t, &prog->launches[0].src, err, sizeof err);
  if (st != KF_OK)
    return pl_plan_error(plan, st, "code generation failed for launch %d without tensor maps: %s",
                         L, err);
  if (prog->launches[0].src.n_tmaps > 0)
    return pl_plan_error(plan, KF_ERR_INTERNAL, "launch %d still reads tensor maps", L);
  return KF_OK;
}

kf_status pl_tma_fallback(kf_plan *plan, int L) {
  if (!plan->code || !plan->fuse || L < 0 || L >= plan->fuse->n_launches)
    return pl_plan_error(plan, KF_ERR_INTERNAL, "no launch %d to generate again", L);
  cg_program *prog = cg_program_new(1);
  if (!prog) return pl_plan_error(plan, KF_ERR_OUT_OF_MEMORY, "kf_plan_run: out of memory");
  kf_status st = emit_without_maps(plan, L, prog);
  char *err = st == KF_OK ? core_malloc(sizeof plan->errmsg) : NULL;
  if (st == KF_OK && !err)
    st = pl_plan_error(plan, KF_ERR_OUT_OF_MEMORY, "kf_plan_run: out of memory");
  if (st == KF_OK && (st = rt_compile_program(plan->ctx, prog, err, sizeof plan->errmsg)) != KF_OK)
    pl_plan_error(plan, st, "%s", err);
  free(err);
  const cg_program_launch *pl = &prog->launches[0];
  rt_image img = {&pl->src, pl->image, pl->image_size, 0, pl->symbol[0] ? pl->symbol : NULL};
  rt_plan *rp = st == KF_OK ? pl_rt_plan(plan) : NULL;
  if (st == KF_OK) st = rp ? rt_fallback_load(rp, L, &img) : KF_ERR_OUT_OF_MEMORY;
  cg_program_free(prog);
  return st;
}
