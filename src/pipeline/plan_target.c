/* plan_target.c - one plan, one target: the arch, device facts and knobs that
 * kf_plan_source and kf_plan_compile both generate code for. */
#include "pipeline/plan_target.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/target.h"
#include "core/alloc.h"
#include "fuser/fuse.h"
#include "runtime/device.h"
#include "runtime/nvrtc.h"
#include "runtime/rt.h"

/* Asks the runtime for the device's arch and facts (grids are sized to its
 * SM count). Having no device is not an error of the caller, so the
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
  core_free(saved);
  return ok;
}

/* arch, else options.arch, else the device's, else sm_90; normalized.
 * info->sm_count > 0 when the device's facts apply to the target. */
static kf_status resolve_arch(kf_plan *plan, const char *want, bool warn, const char *who,
                              char *arch, size_t size, kf_device_info *info) {
  char dev[32], err[256];
  info->sm_count = 0;
  if (!want || !*want) want = plan->options.arch;
  if (!want || !*want) {
    if (device_arch(plan->ctx, dev, sizeof dev, info)) {
      want = dev;
    } else {
      if (warn)
        core_log(plan->ctx, KF_LOG_WARN, LOG_CACHE,
                 "no CUDA device to take the arch from; compiling for sm_90 (set options.arch)");
      want = "sm_90";
    }
  }
  if (!rt_nvrtc_arch(want, arch, size, err, sizeof err))
    return pl_plan_error(plan, KF_ERR_INVALID_ARG, "%s: %s", who, err);
  return KF_OK;
}

kf_status pl_plan_target(kf_plan *plan, const char *arch, bool warn, const char *who,
                         cg_target *out, char *arch_out, size_t size) {
  kf_device_info info;
  kf_status st = resolve_arch(plan, arch, warn, who, arch_out, size, &info);
  if (st != KF_OK) return st;
  if (!cg_target_from_arch(arch_out, out))
    return pl_plan_error(plan, KF_ERR_INVALID_ARG, "%s: unknown arch %s", who, arch_out);
  out->grid_dep = plan->options.pdl;
  out->math = plan->options.math;
  out->knobs = plan->knobs;
  if (info.sm_count > 0) {
    out->sm_count = info.sm_count;
    if (info.max_threads_per_sm > 0) out->max_threads_per_sm = info.max_threads_per_sm;
    if (info.max_smem_per_block > 0) out->max_smem_per_block = info.max_smem_per_block;
  }
  return KF_OK;
}

static int count_products(const kf_graph *g) {
  int n = 0;
  for (int32_t v = 0; v < g->n_nodes; v++) n += g->nodes[v].op == IR_OP_MATMUL;
  return n;
}

void pl_gemm_pair(kf_plan *plan, const cg_target *t, fuse_options *fo) {
  const char *off = NULL;
  char arch[32], buf[64];
  cg_target guess;
  if (plan->knobs->gemm_pair == 0)
    off = "KFUSE_GEMM_PAIR=0";
  else if (plan->knobs->gemm90 == 0)
    off = "KFUSE_GEMM90=0";
  else if (count_products(plan->graph) < 2)
    off = "fewer than two products";
  if (!off && !t) {
    char saved[sizeof plan->errmsg];
    memcpy(saved, plan->errmsg, sizeof saved);
    if (pl_plan_target(plan, NULL, false, "kf_plan_create", &guess, arch, sizeof arch) == KF_OK)
      t = &guess;
    else
      off = "no target";
    memcpy(plan->errmsg, saved, sizeof saved); /* kf_plan_compile reports a bad arch */
  }
  if (!off && (t->cc_major != 9 || t->cc_minor != 0)) {
    snprintf(buf, sizeof buf, "the target is sm_%d%d, not sm_90", t->cc_major, t->cc_minor);
    off = buf;
  }
  fo->gemm_pair = off == NULL;
  snprintf(fo->gemm_pair_off, sizeof fo->gemm_pair_off, "%s", off ? off : "");
}

kf_status pl_gemm_pair_refit(kf_plan *plan, const cg_target *t) {
  fuse_options fo = plan->fuse->options;
  if (fo.matmul_library) return KF_OK; /* library calls are never paired */
  pl_gemm_pair(plan, t, &fo);
  if (fo.gemm_pair == plan->fuse->options.gemm_pair) return KF_OK;
  bool had = false;
  for (int32_t i = 0; i < plan->fuse->n_kernels; i++) had |= plan->fuse->kernels[i].paired;
  if (!had && !fo.gemm_pair) return KF_OK; /* nothing was paired: nothing to undo */
  char err[512] = "";
  fuse_plan *fp = NULL;
  kf_status st = fuse_plan_build(plan->graph, &fo, &fp, err, sizeof err);
  if (st != KF_OK)
    return pl_plan_error(plan, st, "kf_plan_compile: re-planning the pairs: %s", err);
  fuse_plan_free(plan->fuse);
  plan->fuse = fp;
  return KF_OK;
}
