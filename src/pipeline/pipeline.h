/* pipeline.h - struct kf_plan: one graph carried through the pipeline
 * (src/pipeline/pipeline.c). Each layer owns one field: the fuser `fuse`,
 * codegen `code`, the runtime `rt`; the pipeline owns the struct. */
#ifndef KF_PIPELINE_PIPELINE_H
#define KF_PIPELINE_PIPELINE_H

#include "core/ctx.h"
#include "core/knobs.h"
#include "fuser/plan.h"

struct cg_program; /* src/codegen: CUDA C and compiled images per kernel */
struct rt_plan;    /* src/runtime: modules, functions, streams, graphs */

struct kf_plan {
  kf_ctx *ctx;
  kf_graph *graph;    /* owned copy */
  kf_options options; /* options.arch points at arch_copy (or is NULL) */
  char arch_copy[32]; /* the caller's arch string may not outlive the call */
  fuse_plan *fuse;
  struct cg_program *code;
  struct rt_plan *rt;
  const core_knobs *knobs; /* the environment as at kf_plan_create: emit and compile agree */
  bool scratch;            /* a re-planning step's second plan (scratch_plan.h) */
  double ahead_ms;         /* the last compile's template plan compiled ahead */
  struct kf_plan *ahead;   /* its template plan, compiled, until the load's choice times it */
  char errmsg[8192];
};

/* Records a message on the plan and on its context; returns st. */
#define pl_plan_error(plan, st, ...) \
  core_error_buf((plan)->ctx, (plan)->errmsg, sizeof(plan)->errmsg, (st), __VA_ARGS__)

#endif
