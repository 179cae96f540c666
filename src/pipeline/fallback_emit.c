/* fallback_emit.c - one launch generated again for runs whose operands its
 * path cannot take (the copy engine's 16-byte alignment; a library call
 * with no algorithm for them): same fusion, same buffers, the kernel the
 * plan would have had with the sm_90 templates and the library off. */
#include "pipeline/fallback_emit.h"

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

static kf_status emit_for_target(kf_plan *plan, const fuse_plan *fp, int L, cg_program *prog) {
  cg_target t;
  kf_status st =
      pl_plan_target(plan, NULL, false, "kf_plan_run", &t, prog->arch, sizeof prog->arch);
  if (st != KF_OK) return st;
  core_knobs knobs = *plan->knobs;
  knobs.gemm90 = 0;
  knobs.attn90 = 0;
  t.knobs = &knobs;
  char err[1024] = "";
  st = cg_emit_launch(plan->graph, fp, L, &t, &prog->launches[0].src, err, sizeof err);
  if (st != KF_OK)
    return pl_plan_error(plan, st, "code generation failed for launch %d's fallback form: %s", L,
                         err);
  if (prog->launches[0].src.n_tmaps > 0 || prog->launches[0].src.library)
    return pl_plan_error(plan, KF_ERR_INTERNAL,
                         "launch %d's fallback form still reads tensor maps or calls a library", L);
  return KF_OK;
}

/* The plan as codegen reads it for launch L: the plan itself, or (a
 * library call) a copy whose kernels say that L's is not one, so that it
 * is generated as kfuse's own kernel. *kernels: the copy's array, the
 * caller's to free. */
static kf_status as_template(kf_plan *plan, int L, fuse_plan *copy, fuse_kernel **kernels) {
  const fuse_plan *fp = plan->fuse;
  *copy = *fp;
  *kernels = NULL;
  const fuse_launch *fl = &fp->launches[L];
  bool lib = false;
  for (int i = 0; i < fl->n_kernels; i++)
    if (fl->kernels[i] < 0 || fl->kernels[i] >= fp->n_kernels)
      return pl_plan_error(plan, KF_ERR_INTERNAL, "launch %d: kernel %d", L, (int)fl->kernels[i]);
    else
      lib = lib || fp->kernels[fl->kernels[i]].library;
  if (!lib) return KF_OK;
  *kernels = core_malloc((size_t)fp->n_kernels * sizeof **kernels + 1);
  if (!*kernels) return pl_plan_error(plan, KF_ERR_OUT_OF_MEMORY, "kf_plan_run: out of memory");
  memcpy(*kernels, fp->kernels, (size_t)fp->n_kernels * sizeof **kernels);
  for (int i = 0; i < fl->n_kernels; i++) (*kernels)[fl->kernels[i]].library = false;
  copy->kernels = *kernels;
  return KF_OK;
}

/* The launch's fallback source (the cache key follows the source). */
static kf_status emit_without_maps(kf_plan *plan, int L, cg_program *prog) {
  fuse_plan fp;
  fuse_kernel *kernels;
  kf_status st = as_template(plan, L, &fp, &kernels);
  if (st == KF_OK) st = emit_for_target(plan, &fp, L, prog);
  free(kernels);
  return st;
}

kf_status pl_fallback_emit(kf_plan *plan, int L) {
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
