/* feedback.c - the occupancy feedback loop's steps, which the driver
 * (pipeline.c) runs in its loops: after a load, compare each suspicious
 * fused kernel with its parts (the fuser's rule and model, the runtime's
 * measurements), re-fuse and compile; before NVRTC, apply what an earlier
 * process measured. Every decision goes into the fuser's decision log. */
#include "pipeline/feedback.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/program.h"
#include "core/alloc.h"
#include "fuser/fuse.h"
#include "fuser/occ_model.h"
#include "pipeline/scratch_plan.h"
#include "runtime/occ_record.h"
#include "runtime/occupancy.h"
#include "runtime/rt.h"

/* false when options.occupancy_drop <= 0 or KFUSE_NO_OCCUPANCY_SPLIT=1. */
static bool enabled(const kf_plan *plan) {
  return plan->options.occupancy_drop > 0 && !plan->knobs->no_occupancy_split;
}

/* The plan's graph planned with the given splits and compiled (through the
 * caches) for the same arch: the split candidates, or those of them that
 * split; NULL, with a warning, when that fails. */
static kf_plan *compile_with(kf_plan *plan, const fuse_occ_cand *c, int nc, bool only_split) {
  kf_plan *tmp = pl_scratch_new(plan);
  if (!tmp) return NULL;
  char err[512] = "";
  kf_status st =
      fuse_occ_replan(plan->graph, plan->fuse, c, nc, only_split, &tmp->fuse, err, sizeof err);
  if (st == KF_OK) st = kf_plan_compile(tmp);
  if (st != KF_OK) {
    core_log(plan->ctx, KF_LOG_WARN, LOG_RUNTIME,
             "occupancy: the split plan could not be built, the kernels stay fused: %s",
             err[0] ? err : tmp->errmsg);
    pl_scratch_free(tmp);
    return NULL;
  }
  return tmp;
}

static int find_candidates(kf_plan *plan, fuse_occ_cand *c) {
  const fuse_plan *fp = plan->fuse;
  const cg_program *prog = plan->code;
  double drop = plan->options.occupancy_drop;
  int nc = 0;
  for (int i = 0; i < fp->n_launches && i < plan->rt->n_launches; i++) {
    const fuse_kernel *k = fuse_occ_splittable(fp, i);
    const rt_occ *o = &plan->rt->launches[i].occ;
    if (!k || !fuse_occ_suspicious(o, drop)) continue;
    char why[200];
    if (!fuse_occ_split_can_help(k, o, prog->launches[i].src.min_blocks, why, sizeof why)) {
      core_log(plan->ctx, KF_LOG_INFO, LOG_RUNTIME, "occupancy: %s: %.0f%% occupancy, %s",
               prog->launches[i].src.entry, 100 * o->occupancy, why);
      continue;
    }
    fuse_occ_cand *ci = &c[nc];
    memset(ci, 0, sizeof *ci);
    ci->launch = i;
    ci->k = k;
    ci->rec.fused = *o;
    fuse_occ_choose_split(plan->graph, fp, ci);
    /* Parts at full occupancy without spills are the best a split can get:
     * when even they lose, nothing is compiled or measured. */
    rt_occ best = {.occupancy = 1.0};
    if (!fuse_occ_split_pays(ci, &best, why, sizeof why)) {
      core_log(plan->ctx, KF_LOG_INFO, LOG_RUNTIME,
               "occupancy: %s: %.0f%% occupancy, %d B spills, %s", prog->launches[i].src.entry,
               100 * o->occupancy, o->local_bytes, why);
      continue;
    }
    nc++;
    fuse_occ_record cached;
    ci->known = rt_occ_record_get(plan->ctx, prog->launches[i].src.source, prog->arch, &cached);
    if (ci->known) ci->rec = cached;
    ci->rec.fused = *o;
  }
  return nc;
}

/* Judges, logs and caches each candidate; returns how many split. */
static int judge(kf_plan *plan, fuse_occ_cand *c, int nc) {
  double drop = plan->options.occupancy_drop;
  int n_split = 0;
  for (int i = 0; i < nc; i++) {
    const cg_program_launch *pl = &plan->code->launches[c[i].launch];
    char verdict[448];
    c[i].split = fuse_occ_decide(&c[i].rec.fused, &c[i].rec.lowest, c[i].rec.n_parts > 0 ? 1 : 0,
                                 drop, verdict, sizeof verdict);
    char gate[200];
    if (c[i].split &&
        !fuse_occ_split_pays(&c[i], c[i].rec.n_parts > 0 ? &c[i].rec.lowest : &c[i].rec.fused, gate,
                             sizeof gate)) {
      c[i].split = false;
      size_t len = strlen(verdict);
      snprintf(verdict + len, sizeof verdict - len, ", %s", gate);
    }
    fuse_occ_describe(&c[i], pl->src.entry, drop);
    n_split += c[i].split;
    core_log(plan->ctx, c[i].split ? KF_LOG_WARN : KF_LOG_INFO, LOG_RUNTIME,
             "occupancy: %s: %s: %s%s", c[i].why, verdict, c[i].split ? "split" : "kept fused",
             c[i].known ? " (cached measurements)" : "");
    if (!c[i].known) rt_occ_record_put(plan->ctx, pl->src.source, plan->code->arch, &c[i].rec);
  }
  return n_split;
}

/* The split plan, unless the caller's workspace is too small for it. */
static bool adopt(kf_plan *plan, kf_plan *tmp) {
  const struct rt_plan *rp = plan->rt;
  if (rp->ws_caller && (size_t)tmp->fuse->workspace_bytes > rp->ws_bytes) {
    core_log(plan->ctx, KF_LOG_WARN, LOG_RUNTIME,
             "occupancy: the split plan needs a %lld-byte workspace, the caller's has %zu: "
             "the kernels stay fused",
             (long long)tmp->fuse->workspace_bytes, rp->ws_bytes);
    pl_scratch_free(tmp);
    return false;
  }
  int before = plan->fuse->n_launches;
  pl_scratch_adopt(plan, tmp);
  core_log(plan->ctx, KF_LOG_INFO, LOG_RUNTIME, "occupancy: re-planned %d launches as %d", before,
           plan->fuse->n_launches);
  return true;
}

bool pl_feedback_split(kf_plan *plan) {
  struct rt_plan *rp = plan->rt;
  if (!enabled(plan) || !rp || !rp->loaded || !plan->code || !plan->fuse) return false;
  fuse_occ_cand *c = core_calloc((size_t)plan->fuse->n_launches + 1, sizeof *c);
  if (!c) return false;
  int nc = find_candidates(plan, c);
  kf_plan *tmp = NULL;
  bool measure = false;
  for (int i = 0; i < nc; i++) measure |= !c[i].known;
  if (measure) { /* every candidate split at once: one compile for all parts */
    for (int i = 0; i < nc; i++)
      fuse_occ_describe(&c[i], plan->code->launches[c[i].launch].src.entry,
                        plan->options.occupancy_drop);
    tmp = compile_with(plan, c, nc, false);
    if (tmp) rt_occupancy_measure_parts(plan->ctx, rp->state, tmp->fuse, tmp->code, c, nc);
  }
  int n_split = nc > 0 ? judge(plan, c, nc) : 0;
  bool changed = false;
  /* Planned again with only the kernels that split and their final
   * numbers in the decision log; the parts' sources are unchanged, so
   * this compile is memory-cache hits. */
  if (n_split > 0) {
    pl_scratch_free(tmp);
    tmp = compile_with(plan, c, nc, true);
  }
  if (n_split > 0 && tmp)
    changed = adopt(plan, tmp);
  else
    pl_scratch_free(tmp);
  free(c);
  return changed;
}

bool pl_feedback_apply_cached(kf_plan *plan, const cg_program *prog) {
  if (!enabled(plan) || !plan->fuse || prog->n_launches != plan->fuse->n_launches) return false;
  fuse_occ_cand *c = core_calloc((size_t)prog->n_launches + 1, sizeof *c);
  if (!c) return false;
  int nc = 0;
  for (int i = 0; i < prog->n_launches; i++) {
    const fuse_kernel *k = fuse_occ_splittable(plan->fuse, i);
    fuse_occ_record rec;
    if (!k || !prog->launches[i].src.source ||
        !rt_occ_record_get(plan->ctx, prog->launches[i].src.source, prog->arch, &rec))
      continue;
    char verdict[200], gate[200];
    if (!fuse_occ_decide(&rec.fused, &rec.lowest, rec.n_parts > 0 ? 1 : 0,
                         plan->options.occupancy_drop, verdict, sizeof verdict))
      continue;
    c[nc] = (fuse_occ_cand){.launch = i, .k = k, .rec = rec, .known = true, .split = true};
    fuse_occ_choose_split(plan->graph, plan->fuse, &c[nc]);
    if (!fuse_occ_split_pays(&c[nc], rec.n_parts > 0 ? &rec.lowest : &rec.fused, gate, sizeof gate))
      continue;
    fuse_occ_describe(&c[nc], prog->launches[i].src.entry, plan->options.occupancy_drop);
    core_log(plan->ctx, KF_LOG_INFO, LOG_RUNTIME, "occupancy: %s: %s: split (cached decision)",
             c[nc].why, verdict);
    nc++;
  }
  fuse_plan *fp = NULL;
  char err[512] = "";
  if (nc > 0 &&
      fuse_occ_replan(plan->graph, plan->fuse, c, nc, true, &fp, err, sizeof err) != KF_OK)
    core_log(plan->ctx, KF_LOG_WARN, LOG_RUNTIME,
             "occupancy: cached splits not applied, the kernels stay fused: %s", err);
  free(c);
  if (!fp) return false;
  fuse_plan_free(plan->fuse);
  plan->fuse = fp;
  return true;
}

void pl_feedback_note(kf_plan *plan) {
  const struct rt_plan *rp = plan->rt;
  double drop = plan->options.occupancy_drop;
  fuse_occ_forget(plan->fuse);
  for (int i = 0; rp && i < rp->n_launches; i++) {
    const rt_launch *l = &rp->launches[i];
    if (l->lib) continue; /* a library call: no kernel of ours */
    const fuse_occ *o = &l->occ;
    char why[200], text[400];
    bool split = fuse_occ_decide(o, NULL, 0, drop, why, sizeof why);
    snprintf(text, sizeof text, "%.63s: %d regs, %d B spills, %d+%d B smem, %d blocks/SM of %d: %s",
             l->entry, o->regs, o->local_bytes, o->static_smem, o->dyn_smem, o->blocks_per_sm,
             o->block, why);
    fuse_occ_note(plan->fuse, i, split, text);
    core_log(plan->ctx, fuse_occ_suspicious(o, drop) ? KF_LOG_INFO : KF_LOG_DEBUG, LOG_RUNTIME,
             "occupancy %s", text);
  }
}
