/* fuse.c - the fusion pass's front door: options, the passes in order
 * (vertical fusion -> kernels -> launches -> buffers), freeing. */
#include "fuser/fuse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/ctx.h"
#include "core/knobs.h"
#include "fuser/buffers.h"
#include "fuser/decide.h"
#include "fuser/horizontal.h"
#include "fuser/kernels.h"
#include "fuser/split.h"
#include "fuser/vertical.h"
#include "fuser/tile.h"

void fuse_options_default(fuse_options *opt) {
  memset(opt, 0, sizeof *opt);
  const core_knobs *k = core_knobs_quiet();
  opt->fusion = !k->no_fusion;
  opt->horizontal = !k->no_horizontal;
  opt->sm_count = 132;
  /* An optimizer step over a few hundred tensors must fit one launch. */
  opt->max_parts = 1024;
  /* CUDA 12.1+ on sm_70+ allows 32764 bytes of kernel parameters. */
  opt->max_param_bytes = 32764;
  opt->max_nodes = 512;
  /* A pointwise body past 256 definitions is cut into out-of-line segments
   * (codegen/segment.c): its compile time is then linear in nodes, and
   * fewer, longer kernels pay NVRTC's fixed cost per program less often
   * (a 1e5-node exp/tanh chain: 98 kernels instead of 196, 27 s of
   * NVRTC CPU instead of 44). */
  opt->max_pw_nodes = 1024;
  opt->max_inputs = 128;
  opt->max_epilogue = 4;
  /* Softmax and layernorm compute about 1.6 values per node per element
   * over their passes; a long prologue before a softmax, 4. A residual
   * ladder fused whole grows without bound (docs/fusion.md). */
  opt->max_recompute = 4;
  opt->blocks_per_sm = 4;
  opt->recompute = true;
  /* the pipeline pairs products for a target whose template takes them */
  snprintf(opt->gemm_pair_off, sizeof opt->gemm_pair_off, "not asked for");
}

static kf_status check_graph(const kf_graph *g, char *err, size_t errsize) {
  if (!g) {
    snprintf(err, errsize, "no graph");
    return KF_ERR_INVALID_ARG;
  }
  if (g->status != KF_OK) {
    snprintf(err, errsize, "the graph has an error: %s", g->errmsg);
    return g->status;
  }
  if (g->n_outputs <= 0) {
    snprintf(err, errsize, "the graph has no outputs");
    return KF_ERR_INVALID_ARG;
  }
  return KF_OK;
}

static kf_status check_options(const fuse_options *o, char *err, size_t errsize) {
  if (o->sm_count < 1 || o->max_parts < 1 || o->max_param_bytes < 8 || o->max_nodes < 1 ||
      o->max_pw_nodes < 1 || o->max_inputs < 1 || o->max_epilogue < 0 || o->max_recompute < 1 ||
      o->blocks_per_sm < 1) {
    snprintf(err, errsize, "bad fusion options (every limit must be positive)");
    return KF_ERR_INVALID_ARG;
  }
  return KF_OK;
}

kf_status fuse_plan_build(const kf_graph *g, const fuse_options *opt, fuse_plan **out, char *err,
                          size_t errsize) {
  if (!out) return KF_ERR_INVALID_ARG;
  *out = NULL;
  fuse_options defaults;
  if (!opt) {
    fuse_options_default(&defaults);
    opt = &defaults;
  }
  kf_status st = check_graph(g, err, errsize);
  if (st == KF_OK) st = check_options(opt, err, errsize);
  if (st != KF_OK) return st;
  fuse_plan *plan = core_calloc(1, sizeof *plan);
  if (!plan) {
    snprintf(err, errsize, "out of memory");
    return KF_ERR_OUT_OF_MEMORY;
  }
  plan->graph = g;
  plan->options = *opt;
  plan->log_decisions = core_log_enabled(g->ctx, KF_LOG_DEBUG, LOG_FUSE);
  st = fuse_splits_adopt(plan, err, errsize);
  if (st == KF_OK) st = fuse_vertical(plan, err, errsize);
  if (st == KF_OK) st = fuse_finish_kernels(plan, err, errsize);
  if (st == KF_OK) st = fuse_launches(plan, err, errsize);
  if (st == KF_OK) fuse_tiles_log(plan); /* after the kernels get their names */
  if (st == KF_OK) st = fuse_buffers(plan, err, errsize);
  if (st == KF_OK) fuse_splits_log(plan);
  if (st == KF_OK && !fuse_decisions_ok(plan)) {
    snprintf(err, errsize, "out of memory");
    st = KF_ERR_OUT_OF_MEMORY;
  }
  if (st != KF_OK) {
    fuse_plan_free(plan);
    return st;
  }
  kf_ctx *ctx = g->ctx;
  core_log(ctx, KF_LOG_INFO, LOG_FUSE, "planned %d nodes as %d kernels in %d launches",
           (int)g->n_nodes, (int)plan->n_kernels, (int)plan->n_launches);
  *out = plan;
  return KF_OK;
}

void fuse_plan_free(fuse_plan *plan) {
  if (!plan) return;
  for (int32_t i = 0; i < plan->n_kernels; i++) {
    fuse_kernel *k = &plan->kernels[i];
    free(k->nodes);
    free(k->inputs);
    free(k->outputs);
    free(k->roles);
    free(k->recomputed);
  }
  free(plan->kernels);
  for (int32_t i = 0; i < plan->n_launches; i++) free(plan->launches[i].kernels);
  free(plan->launches);
  free(plan->kernel_of);
  free(plan->buffers);
  free(plan->decisions);
  fuse_splits_free(plan);
  free(plan);
}
