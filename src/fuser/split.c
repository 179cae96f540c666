/* split.c - occupancy splits: kernels that the runtime measured as worse
 * fused than unfused (low occupancy, spills), whose nodes the legality
 * predicate then keeps apart, and the decisions that say so. */
#include "fuser/split.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "fuser/decide.h"
#include "fuser/legal.h"
#include "fuser/text.h"

kf_status fuse_splits_adopt(fuse_plan *plan, char *err, size_t errsize) {
  const fuse_split *src = plan->options.splits;
  int32_t n = plan->options.n_splits;
  plan->options.splits = NULL; /* the caller's until copied: never freed here */
  plan->options.n_splits = 0;
  if (n <= 0) return KF_OK;
  if (!src) {
    snprintf(err, errsize, "bad fusion options: %d splits but no list", (int)n);
    return KF_ERR_INVALID_ARG;
  }
  fuse_split *own = core_calloc((size_t)n, sizeof *own);
  if (!own) {
    snprintf(err, errsize, "out of memory");
    return KF_ERR_OUT_OF_MEMORY;
  }
  plan->options.splits = own;
  for (int32_t i = 0; i < n; i++) {
    plan->options.n_splits = i + 1;
    own[i] = src[i];
    own[i].nodes = NULL;
    own[i].n_nodes = 0;
    if (src[i].n_nodes < 0 || (src[i].n_nodes > 0 && !src[i].nodes)) {
      snprintf(err, errsize, "bad fusion options: split %d has no node list", (int)i);
      return KF_ERR_INVALID_ARG;
    }
    own[i].nodes = core_malloc((size_t)(src[i].n_nodes > 0 ? src[i].n_nodes : 1) * sizeof(int32_t));
    if (!own[i].nodes) {
      snprintf(err, errsize, "out of memory");
      return KF_ERR_OUT_OF_MEMORY;
    }
    own[i].n_nodes = src[i].n_nodes;
    if (src[i].cut < 0 || src[i].cut >= (src[i].n_nodes > 0 ? src[i].n_nodes : 1)) {
      snprintf(err, errsize, "bad fusion options: split %d cuts at %d of %d nodes", (int)i,
               (int)src[i].cut, (int)src[i].n_nodes);
      return KF_ERR_INVALID_ARG;
    }
    for (int32_t j = 0; j < src[i].n_nodes; j++) {
      int32_t v = src[i].nodes[j];
      if (v < 0 || v >= plan->graph->n_nodes) {
        snprintf(err, errsize, "bad fusion options: split %d names node %d of %d", (int)i, (int)v,
                 (int)plan->graph->n_nodes);
        return KF_ERR_INVALID_ARG;
      }
      own[i].nodes[j] = v;
    }
  }
  return KF_OK;
}

void fuse_splits_free(fuse_plan *plan) {
  fuse_split *own = (fuse_split *)plan->options.splits;
  for (int32_t i = 0; own && i < plan->options.n_splits; i++) free(own[i].nodes);
  free(own);
  plan->options.splits = NULL;
  plan->options.n_splits = 0;
}

/* Splits are few and small (the nodes of a handful of kernels), so each
 * is simply scanned against the set's member marks: a set is refused when
 * it holds two nodes of a split that may not share a kernel (any two with
 * cut 0, one from each side with a cut). */
bool fuse_split_refuses(fuse_legal_ctx *lc, const fuse_set *set, fuse_shape_info *info) {
  (void)set;
  for (int32_t s = 0; s < lc->opt->n_splits; s++) {
    const fuse_split *sp = &lc->opt->splits[s];
    int32_t side[2] = {-1, -1}; /* a member before the cut, one after */
    for (int32_t j = 0; j < sp->n_nodes; j++) {
      int32_t v = sp->nodes[j];
      if (!fuse_marked(&lc->members, v)) continue;
      int k = sp->cut > 0 && j >= sp->cut;
      int32_t other = sp->cut > 0 ? side[!k] : side[0];
      if (other < 0) {
        if (side[k] < 0) side[k] = v;
        continue;
      }
      char b1[64], b2[64];
      snprintf(info->rule, sizeof info->rule, "occupancy-split");
      snprintf(info->why, sizeof info->why,
               sp->cut > 0 ? "%s and %s are on two sides of an occupancy split (split %d)"
                           : "%s and %s were split apart by occupancy feedback (split %d)",
               fuse_value_label(lc->g, other, b1, sizeof b1),
               fuse_value_label(lc->g, v, b2, sizeof b2), (int)s);
      return true;
    }
  }
  return false;
}

void fuse_splits_log(fuse_plan *plan) {
  for (int32_t s = 0; s < plan->options.n_splits; s++) {
    const fuse_split *sp = &plan->options.splits[s];
    char names[160] = "";
    size_t len = 0;
    int parts = 0;
    for (int32_t j = 0; j < sp->n_nodes; j++) {
      int32_t k = plan->kernel_of[sp->nodes[j]];
      bool seen = k < 0;
      for (int32_t i = 0; i < j && !seen; i++) seen = plan->kernel_of[sp->nodes[i]] == k;
      if (seen) continue;
      parts++;
      int w =
          snprintf(names + len, sizeof names - len, "%s%s", len ? ", " : "", plan->kernels[k].name);
      if (w > 0 && (size_t)w < sizeof names - len) len += (size_t)w;
    }
    char at[96] = "";
    if (sp->cut > 0) {
      char b1[64];
      snprintf(at, sizeof at, " in two before %s",
               fuse_value_label(plan->graph, sp->nodes[sp->cut], b1, sizeof b1));
    }
    fuse_decide(plan, true, "occupancy-split", "%s; split%s into %d kernels: %s", sp->why, at,
                parts, names);
  }
}
