/* plan.h - struct kf_plan: one graph carried through the pipeline. Each
 * module owns one field: the fuser `fuse`, codegen `code`, the runtime `rt`. */
#ifndef KF_CORE_PLAN_H
#define KF_CORE_PLAN_H

#include "core/knobs.h"
#include "core/ctx.h"
#include "fuser/plan.h"

struct cg_program; /* src/codegen: CUDA C and compiled images per kernel */
struct rt_plan;    /* src/runtime: modules, functions, streams, graphs */

struct kf_plan {
  kf_ctx *ctx;
  kf_graph *graph; /* owned copy */
  kf_options options; /* options.arch points at arch_copy (or is NULL) */
  char arch_copy[32];  /* the caller's arch string may not outlive the call */
  fuse_plan *fuse;
  struct cg_program *code;
  struct rt_plan *rt;
  const core_knobs *knobs; /* the environment as at kf_plan_create: emit and compile agree */
  char errmsg[8192];
};

/* Records a message on the plan and on its context; returns st. */
kf_status core_plan_error(kf_plan *plan, kf_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Module hooks that release a plan's fields; each tolerates NULL. */
void cg_program_free(struct cg_program *code);
void rt_plan_free(struct rt_plan *rt);

/* A deep copy of a graph (src/ir/graph.c); NULL on out of memory. */
kf_graph *ir_graph_clone(const kf_graph *g);

#endif
