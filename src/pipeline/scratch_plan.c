/* scratch_plan.c - a second plan of the same graph that borrows it. */
#include "pipeline/scratch_plan.h"

#include <stdlib.h>

#include "codegen/program.h"
#include "core/alloc.h"
#include "fuser/fuse.h"

kf_plan *pl_scratch_new(const kf_plan *plan) {
  kf_plan *tmp = core_calloc(1, sizeof *tmp);
  if (!tmp) return NULL;
  tmp->ctx = plan->ctx;
  tmp->graph = plan->graph; /* borrowed */
  tmp->options = plan->options;
  tmp->options.arch = plan->code ? plan->code->arch : plan->options.arch;
  tmp->knobs = plan->knobs; /* the same environment as the plan it serves */
  tmp->scratch = true;
  return tmp;
}

void pl_scratch_free(kf_plan *tmp) {
  if (!tmp) return;
  tmp->graph = NULL;
  kf_plan_destroy(tmp);
}

void pl_scratch_adopt(kf_plan *plan, kf_plan *tmp) {
  fuse_plan_free(plan->fuse);
  plan->fuse = tmp->fuse;
  cg_program_free(plan->code);
  plan->code = tmp->code;
  tmp->fuse = NULL;
  tmp->code = NULL;
  pl_scratch_free(tmp);
}
