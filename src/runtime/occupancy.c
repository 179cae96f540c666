/* occupancy.c - occupancy feedback: after a kernel is loaded, read back its
 * registers, spills and shared memory and its occupancy, decide whether a
 * fused kernel should be split, log the numbers, and cache the decision
 * with the kernel. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/program.h"
#include "runtime/cache.h"
#include "runtime/rt.h"

bool rt_occupancy_decide(const rt_occ *fused, const rt_occ *parts, int n_parts, double drop,
                         char *why, size_t size) {
  if (fused->local_bytes > 0) {
    snprintf(why, size, "spills %d bytes per thread to local memory (%d registers)",
             fused->local_bytes, fused->regs);
    return true;
  }
  double lowest = 2.0;
  for (int i = 0; i < n_parts; i++)
    if (parts[i].occupancy < lowest) lowest = parts[i].occupancy;
  if (n_parts > 0 && fused->occupancy < lowest * (1.0 - drop)) {
    snprintf(why, size,
             "occupancy %.0f%% is more than %.0f%% below its parts' lowest %.0f%% "
             "(%d registers, %d bytes shared)",
             100 * fused->occupancy, 100 * drop, 100 * lowest, fused->regs,
             fused->static_smem + fused->dyn_smem);
    return true;
  }
  if (n_parts > 0)
    snprintf(why, size, "occupancy %.0f%% within %.0f%% of its parts' lowest %.0f%%",
             100 * fused->occupancy, 100 * drop, 100 * lowest);
  else
    snprintf(why, size, "occupancy %.0f%%, no spills", 100 * fused->occupancy);
  return false;
}

static void record(kf_plan *plan, int launch, bool split, const char *text) {
  struct rt_plan *rp = plan->rt;
  rt_decision *d = realloc(rp->decisions, (size_t)(rp->n_decisions + 1) * sizeof *d);
  if (!d) return; /* a lost log line is not worth failing a load */
  rp->decisions = d;
  d[rp->n_decisions].launch = launch;
  d[rp->n_decisions].split = split;
  snprintf(d[rp->n_decisions].text, sizeof d->text, "%s", text);
  rp->n_decisions++;
}

/* The decision is cached under the kernel's source and the device, so a
 * later process sees it without re-deciding (and, once splitting is wired
 * to the fuser, without compiling the fused kernel first). */
static void cache_decision(kf_plan *plan, int launch, const char *text) {
  const cg_program *prog = plan->code;
  if (!prog || launch >= prog->n_launches || !prog->launches[launch].src.source) return;
  const char *src = prog->launches[launch].src.source;
  const char *dev = plan->rt->rt->info.name;
  size_t ls = strlen(src), ld = strlen(dev);
  char *buf = malloc(ls + ld + 2);
  if (!buf) return;
  memcpy(buf, src, ls + 1);
  memcpy(buf + ls + 1, dev, ld + 1);
  cache_key key = cache_key_blob("occupancy-v1", buf, ls + ld + 2);
  free(buf);
  void *old = NULL;
  size_t old_size = 0;
  bool same = cache_blob_get(plan->ctx, key, &old, &old_size) && old_size == strlen(text) + 1 &&
              memcmp(old, text, old_size) == 0;
  free(old);
  if (!same) cache_blob_put(plan->ctx, key, text, strlen(text) + 1);
}

kf_status rt_occupancy_measure(kf_plan *plan, int i) {
  struct rt_plan *rp = plan->rt;
  rt_state *rt = rp->rt;
  const rt_driver *d = rt->drv;
  rt_launch *l = &rp->launches[i];
  rt_occ *o = &l->occ;
  memset(o, 0, sizeof *o);
  d->FuncGetAttribute(&o->regs, CU_FUNC_ATTRIBUTE_NUM_REGS, l->fn);
  d->FuncGetAttribute(&o->local_bytes, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, l->fn);
  d->FuncGetAttribute(&o->static_smem, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, l->fn);
  o->dyn_smem = (int)l->smem;
  o->block = (int)l->block;
  CUresult r = CUDA_SUCCESS;
  if (l->block > 0)
    r = d->OccupancyMaxActiveBlocksPerMultiprocessor(&o->blocks_per_sm, l->fn, (int)l->block,
                                                     l->smem);
  if (r != CUDA_SUCCESS) return rt_fail(plan->ctx, plan, rt, r, "cuOccupancyMaxActiveBlocks");
  int max_threads = rt->info.max_threads_per_sm > 0 ? rt->info.max_threads_per_sm : 2048;
  o->occupancy = (double)o->blocks_per_sm * o->block / max_threads;
  char why[200], text[sizeof ((rt_decision *)0)->text];
  /* TODO(fuser): compare with the unfused parts once the fuser can split a
   * kernel into its parts for compilation; until then only spills decide. */
  bool split = rt_occupancy_decide(o, NULL, 0, plan->options.occupancy_drop, why, sizeof why);
  snprintf(text, sizeof text, "%.63s: %d regs, %d B spills, %d+%d B smem, %d blocks/SM of %d: %s",
           l->entry, o->regs, o->local_bytes, o->static_smem, o->dyn_smem, o->blocks_per_sm,
           o->block, why);
  record(plan, i, split, text);
  cache_decision(plan, i, text);
  core_log(plan->ctx, split ? KF_LOG_WARN : KF_LOG_INFO, LOG_RUNTIME, "occupancy %s%s", text,
           split ? " - a split is called for, but splitting after load is not wired to the "
                   "fuser yet: the kernel runs fused"
                 : "");
  return KF_OK;
}
