/* split.c - occupancy splits: kernels that the runtime measured as worse
 * fused than unfused (low occupancy, spills), whose nodes the legality
 * predicate then keeps apart, and the decisions that say so. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuser/fuse_int.h"

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
  fuse_split *own = calloc((size_t)n, sizeof *own);
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
    own[i].nodes = malloc((size_t)(src[i].n_nodes > 0 ? src[i].n_nodes : 1) * sizeof(int32_t));
    if (!own[i].nodes) {
      snprintf(err, errsize, "out of memory");
      return KF_ERR_OUT_OF_MEMORY;
    }
    own[i].n_nodes = src[i].n_nodes;
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
 * is simply scanned against the set's member marks. */
bool fuse_split_refuses(fuse_legal_ctx *lc, const fuse_set *set, fuse_shape_info *info) {
  (void)set;
  for (int32_t s = 0; s < lc->opt->n_splits; s++) {
    const fuse_split *sp = &lc->opt->splits[s];
    int32_t first = -1;
    for (int32_t j = 0; j < sp->n_nodes; j++) {
      int32_t v = sp->nodes[j];
      if (!fuse_marked(&lc->members, v)) continue;
      if (first < 0) {
        first = v;
        continue;
      }
      char b1[64], b2[64];
      snprintf(info->rule, sizeof info->rule, "occupancy-split");
      snprintf(info->why, sizeof info->why,
               "%s and %s were split apart by occupancy feedback (split %d)",
               fuse_value_label(lc->g, first, b1, sizeof b1),
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
      int w = snprintf(names + len, sizeof names - len, "%s%s", len ? ", " : "",
                       plan->kernels[k].name);
      if (w > 0 && (size_t)w < sizeof names - len) len += (size_t)w;
    }
    fuse_decide(plan, true, "occupancy-split", "%s; split into %d kernels: %s", sp->why, parts,
                names);
  }
}
