/* source.c - kf_plan_source: the public way to read a launch's CUDA C (the
 * emitter run for one launch on the target compile would use, without
 * compiling). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/codegen.h"
#include "codegen/emit.h"
#include "pipeline/pipeline.h"
#include "pipeline/plan_target.h"

KF_API char *kf_plan_source(kf_plan *plan, int launch, const char *arch) {
  if (!plan) return NULL;
  if (!plan->fuse || launch < 0 || launch >= plan->fuse->n_launches) {
    pl_plan_error(plan, KF_ERR_INVALID_ARG, "kf_plan_source: no launch %d", launch);
    return NULL;
  }
  cg_target t;
  char name[32];
  if (pl_plan_target(plan, arch, false, "kf_plan_source", &t, name, sizeof name) != KF_OK)
    return NULL;
  cg_launch_src src;
  char err[512] = "";
  kf_status st = cg_emit_launch(plan->graph, plan->fuse, launch, &t, &src, err, sizeof err);
  if (st != KF_OK) {
    pl_plan_error(plan, st, "code generation of launch %d failed: %s", launch, err);
    return NULL;
  }
  char *text = src.source;
  src.source = NULL;
  cg_launch_src_free(&src);
  return text;
}
