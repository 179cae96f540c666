/* plan.c - creating, describing and destroying plans: the pipeline's front
 * door. kf_plan_create runs verify -> fuse -> buffer planning; pipeline.c
 * carries the plan on. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/codegen.h"
#include "codegen/program.h"
#include "codegen/target.h"
#include "core/alloc.h"
#include "fuser/fuse.h"
#include "fuser/render.h"
#include "ir/graph.h"
#include "ir/ir.h"
#include "pipeline/pipeline.h"
#include "pipeline/plan_target.h"
#include "pipeline/scratch_plan.h"
#include "runtime/lib_launch.h"
#include "runtime/nvtx.h"
#include "runtime/rt.h"
#include "runtime/rt_plan.h"

void kf_options_init(kf_options *opt) {
  if (!opt) return;
  memset(opt, 0, sizeof *opt);
  const core_knobs *k = core_knobs_quiet(); /* kf_plan_create warns, on its context */
  opt->fusion = !k->no_fusion;
  opt->horizontal = !k->no_horizontal;
  opt->arch = NULL;
  opt->mode = KF_MODE_PLAIN;
  opt->occupancy_drop = 0.20;
  opt->streams = 4;
  opt->pdl = k->pdl;
  opt->math = (kf_math)k->math;
}

/* Every field of the caller's options, at the API boundary: a value out of
 * range is an error now, not undefined behaviour or a silent clamp later. */
static kf_status check_options(kf_ctx *ctx, const kf_options *o) {
  const char *fn = "kf_plan_create";
  if (o->mode != KF_MODE_PLAIN && o->mode != KF_MODE_STREAMS && o->mode != KF_MODE_GRAPH)
    return core_error(ctx, KF_ERR_INVALID_ARG,
                      "%s: options.mode is %d; expected KF_MODE_PLAIN (0), KF_MODE_STREAMS (1) "
                      "or KF_MODE_GRAPH (2)",
                      fn, (int)o->mode);
  if (o->streams < 1 || o->streams > RT_MAX_STREAMS)
    return core_error(ctx, KF_ERR_INVALID_ARG, "%s: options.streams is %d; expected 1 to %d", fn,
                      o->streams, RT_MAX_STREAMS);
  if (isnan(o->occupancy_drop))
    return core_error(ctx, KF_ERR_INVALID_ARG,
                      "%s: options.occupancy_drop is NaN; expected a fraction (<= 0: never split)",
                      fn);
  if (o->arch && strlen(o->arch) >= sizeof((kf_plan *)0)->arch_copy)
    return core_error(ctx, KF_ERR_INVALID_ARG, "%s: arch name '%.40s...' is too long", fn, o->arch);
  if (o->arch && !cg_arch_parse(o->arch, NULL, NULL))
    return core_error(ctx, KF_ERR_INVALID_ARG, "%s: bad arch name '%s' (%s)", fn, o->arch,
                      CG_ARCH_FORMS);
  return KF_OK;
}

/* A math policy kf_plan_create takes, or the error that names the bad one. */
static kf_status check_math(kf_ctx *ctx, kf_math math) {
  if (math == KF_MATH_DEFAULT || math == KF_MATH_STRICT || math == KF_MATH_FAST) return KF_OK;
  return core_error(ctx, KF_ERR_INVALID_ARG,
                    "kf_plan_create: kf_options.math %d is not a kf_math (0 default, 1 strict, "
                    "2 fast)",
                    (int)math);
}

kf_status kf_plan_create(kf_ctx *ctx, const kf_graph *g, const kf_options *opt, kf_plan **out) {
  if (!out) return core_error(ctx, KF_ERR_INVALID_ARG, "kf_plan_create: out is NULL");
  *out = NULL;
  if (!ctx || !g) return core_error(ctx, KF_ERR_INVALID_ARG, "kf_plan_create: NULL ctx or graph");
  if (g->status != KF_OK)
    return core_error(ctx, g->status, "kf_plan_create: the graph has an error: %s", g->errmsg);
  if (g->n_outputs == 0)
    return core_error(ctx, KF_ERR_INVALID_ARG, "kf_plan_create: the graph has no outputs");
  if (opt) {
    kf_status st = check_options(ctx, opt);
    if (st != KF_OK) return st;
  }
  kf_status mst = check_math(ctx, opt ? opt->math : (kf_math)core_knobs_quiet()->math);
  if (mst != KF_OK) return mst;
  kf_plan *plan = core_calloc(1, sizeof *plan);
  if (!plan) return core_error(ctx, KF_ERR_OUT_OF_MEMORY, "kf_plan_create: out of memory");
  plan->ctx = ctx;
  plan->knobs = core_knobs_get(ctx);
  if (opt)
    plan->options = *opt;
  else
    kf_options_init(&plan->options);
  if (plan->options.arch) {
    snprintf(plan->arch_copy, sizeof plan->arch_copy, "%s", plan->options.arch);
    plan->options.arch = plan->arch_copy;
  }
  plan->graph = ir_graph_clone(g);
  if (!plan->graph) {
    kf_plan_destroy(plan);
    return core_error(ctx, KF_ERR_OUT_OF_MEMORY, "kf_plan_create: out of memory");
  }
  fuse_options fo;
  fuse_options_default(&fo);
  fo.fusion = plan->options.fusion;
  fo.horizontal = plan->options.horizontal;
  /* Matmul kernels are library calls unless told otherwise; a load that
   * finds no library, or one that refuses a product, plans them again as
   * template kernels (src/pipeline/matmul_choice.c). */
  fo.matmul_library = plan->knobs->matmul != RT_MATMUL_TEMPLATE;
  fo.library_ws_bytes = RT_LIB_WS_BYTES;
  pl_gemm_pair(plan, NULL, &fo); /* the template plan's paired products */
  char err[512] = "";
  rt_span_push("fuse");
  kf_status st = fuse_plan_build(plan->graph, &fo, &plan->fuse, err, sizeof err);
  rt_span_pop();
  if (st != KF_OK) {
    core_error(ctx, st, "fusion failed: %s", err);
    kf_plan_destroy(plan);
    return st;
  }
  *out = plan;
  return KF_OK;
}

void kf_plan_destroy(kf_plan *plan) {
  if (!plan) return;
  pl_scratch_free(plan->ahead);
  rt_plan_free(plan->rt);
  cg_program_free(plan->code);
  fuse_plan_free(plan->fuse);
  kf_graph_destroy(plan->graph);
  free(plan);
}

const char *kf_plan_errmsg(const kf_plan *plan) {
  return plan ? plan->errmsg : "";
}

char *kf_plan_describe(const kf_plan *plan, kf_format fmt) {
  if (!plan || !plan->fuse) return NULL;
  switch (fmt) {
    case KF_FORMAT_TEXT:
      return fuse_plan_text(plan->fuse);
    case KF_FORMAT_JSON:
      return fuse_plan_json(plan->fuse);
    case KF_FORMAT_DOT:
      return fuse_plan_dot(plan->fuse);
  }
  return NULL;
}

int kf_plan_num_launches(const kf_plan *plan) {
  return plan && plan->fuse ? plan->fuse->n_launches : -1;
}

int kf_plan_num_kernels(const kf_plan *plan) {
  return plan && plan->fuse ? plan->fuse->n_kernels : -1;
}

int64_t kf_plan_workspace_size(const kf_plan *plan) {
  return plan && plan->fuse ? plan->fuse->workspace_bytes : -1;
}
