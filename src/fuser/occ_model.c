/* occ_model.c - the occupancy feedback's policy: the split rule, where to
 * cut a kernel, and the bandwidth model that gates every split. */
#include "fuser/occ_model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "fuser/decide.h"
#include "fuser/fuse.h"

bool fuse_occ_decide(const fuse_occ *fused, const fuse_occ *parts, int n_parts, double drop,
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

bool fuse_occ_suspicious(const fuse_occ *o, double drop) {
  return o->local_bytes > 0 || o->occupancy < 1.0 - drop;
}

/* A launch of one kernel with at least two nodes computed at home: the only
 * kind a split can change (horizontal launches are already separate
 * kernels, packed). */
const fuse_kernel *fuse_occ_splittable(const fuse_plan *fp, int launch) {
  const fuse_launch *L = &fp->launches[launch];
  if (L->n_kernels != 1) return NULL;
  const fuse_kernel *k = &fp->kernels[L->kernels[0]];
  if (k->library) return NULL; /* a library call: no kernel of ours to split */
  /* The flash kernel's few resident warps are by design (registers and
   * shared memory hold its tiles); split, it would write the S x S scores. */
  if (k->kind == FK_ATTENTION) return NULL;
  int home = 0;
  for (int32_t i = 0; i < k->n_nodes; i++) home += !k->recomputed[i];
  return home >= 2 ? k : NULL;
}

bool fuse_occ_split_can_help(const fuse_kernel *k, const fuse_occ *o, int design_blocks, char *why,
                             size_t size) {
  if (k->kind != FK_MATMUL || design_blocks <= 0 || o->local_bytes > 0 ||
      o->blocks_per_sm < design_blocks)
    return true;
  snprintf(why, size,
           "%d blocks/SM of %d as its template is designed (%d), no spills: its product's part "
           "would be no more resident, kept fused",
           o->blocks_per_sm, o->block, design_blocks);
  return false;
}

void fuse_occ_describe(fuse_occ_cand *c, const char *entry, double drop) {
  const fuse_occ *f = &c->rec.fused;
  if (c->rec.n_parts > 0)
    snprintf(c->why, sizeof c->why,
             "%.40s: occupancy %.0f%% (%d regs, %d B spills, %d blocks/SM of %d) vs parts' "
             "lowest %.0f%% (%d parts), limit %.0f%%",
             entry, 100 * f->occupancy, f->regs, f->local_bytes, f->blocks_per_sm, f->block,
             100 * c->rec.lowest.occupancy, c->rec.n_parts, 100 * drop);
  else
    snprintf(c->why, sizeof c->why,
             "%.40s: occupancy %.0f%% (%d regs, %d B spills, %d blocks/SM of %d), parts not "
             "measured",
             entry, 100 * f->occupancy, f->regs, f->local_bytes, f->blocks_per_sm, f->block);
}

static int cmp_node(const void *a, const void *b) {
  int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return (x > y) - (x < y);
}

/* The home nodes of k (recomputed copies stay free to go anywhere) in
 * graph order, into out (k->n_nodes + 1 entries); returns how many. Graph
 * order is topological, so a cut puts producers before consumers. */
static int32_t home_nodes(const fuse_kernel *k, int32_t *out) {
  int32_t n = 0;
  for (int32_t j = 0; j < k->n_nodes; j++)
    if (!k->recomputed[j]) out[n++] = k->nodes[j];
  qsort(out, (size_t)n, sizeof *out, cmp_node);
  return n;
}

/* The splits a plan already has (borrowed) plus one per selected candidate:
 * its home nodes in graph order, cut in two at the candidate's cut. Free
 * with splits_free. */
static fuse_split *splits_with(const fuse_plan *fp, const fuse_occ_cand *c, int nc, bool only_split,
                               int32_t *n_out) {
  int32_t n = fp->options.n_splits;
  fuse_split *s = core_calloc((size_t)(n + nc + 1), sizeof *s);
  if (!s) return NULL;
  for (int32_t i = 0; i < n; i++) s[i] = fp->options.splits[i];
  for (int i = 0; i < nc; i++) {
    if (only_split && !c[i].split) continue;
    const fuse_kernel *k = c[i].k;
    s[n].nodes = core_malloc((size_t)k->n_nodes * sizeof *s[n].nodes + 1);
    if (!s[n].nodes) {
      for (int32_t j = fp->options.n_splits; j < n; j++) free(s[j].nodes);
      free(s);
      return NULL;
    }
    s[n].n_nodes = home_nodes(k, s[n].nodes);
    s[n].cut = c[i].cut > 0 && c[i].cut < s[n].n_nodes ? c[i].cut : 0;
    snprintf(s[n].why, sizeof s[n].why, "%s", c[i].why);
    n++;
  }
  *n_out = n;
  return s;
}

static void splits_free(const fuse_plan *fp, fuse_split *s, int32_t n) {
  for (int32_t j = fp->options.n_splits; s && j < n; j++) free(s[j].nodes);
  free(s);
}

/* ---- the bandwidth model that gates every split ---------------------------

 * Occupancy and spills only trigger a comparison. A split also makes the
 * plan move more bytes (the values that stayed on chip go to memory), so it
 * goes ahead only when a simple model predicts it is faster: a memory-bound
 * kernel reaches full bandwidth from about half occupancy (below that,
 * bandwidth falls in proportion), and each 128 bytes spilled per thread
 * cost about one more pass over its data. Time ~ bytes / efficiency. */
static double occ_efficiency(const fuse_occ *o) {
  double e = o->occupancy >= 0.5 ? 1.0 : o->occupancy / 0.5;
  if (o->local_bytes > 0) e /= 1.0 + o->local_bytes / 128.0;
  return e > 1e-3 ? e : 1e-3;
}

/* The bytes the plan moves with candidate c split (at c->cut), or -1 when
 * that does not plan. */
static int64_t split_bytes(const kf_graph *g, const fuse_plan *plan_fp, const fuse_occ_cand *c) {
  int32_t n = 0;
  fuse_split *s = splits_with(plan_fp, c, 1, false, &n);
  if (!s) return -1;
  fuse_options fo = plan_fp->options;
  fo.splits = s;
  fo.n_splits = n;
  fuse_plan *fp = NULL;
  char err[256];
  int64_t bytes = -1;
  if (fuse_plan_build(g, &fo, &fp, err, sizeof err) == KF_OK) bytes = fp->bytes_fused;
  fuse_plan_free(fp);
  splits_free(plan_fp, s, n);
  return bytes;
}

/* The cut of a candidate's home nodes that leaves the plan the fewest
 * bytes to move (c->cut), and those bytes over the plan's now (c->ratio;
 * 1e9 when no split plans). A split in two keeps each side fused, where
 * splitting every node apart sends every value between them through
 * memory; if a side is still bad, the next round of feedback splits it
 * again. Up to 16 evenly spaced cuts are planned (the fuser takes
 * microseconds to a few milliseconds a plan); every node apart (cut 0)
 * for two nodes or when no cut plans. The first of equal cuts wins, so the
 * choice is the same in every process (the cached decisions are applied
 * by choosing it again). */
enum { CUTS_TRIED = 16 };
void fuse_occ_choose_split(const kf_graph *g, const fuse_plan *fp, fuse_occ_cand *c) {
  int32_t nh = 0;
  for (int32_t j = 0; j < c->k->n_nodes; j++) nh += !c->k->recomputed[j];
  int32_t steps = nh < 3 ? 0 : nh - 1 < CUTS_TRIED ? nh - 1 : CUTS_TRIED;
  int32_t best = 0;
  int64_t best_bytes = -1;
  for (int32_t t = 1; t <= steps; t++) {
    c->cut = (int32_t)(((int64_t)t * nh) / (steps + 1));
    int64_t b = split_bytes(g, fp, c);
    if (b >= 0 && (best_bytes < 0 || b < best_bytes)) {
      best_bytes = b;
      best = c->cut;
    }
  }
  c->cut = best;
  if (best_bytes < 0) best_bytes = split_bytes(g, fp, c);
  c->ratio =
      best_bytes >= 0 && fp->bytes_fused > 0 ? (double)best_bytes / (double)fp->bytes_fused : 1e9;
}

bool fuse_occ_split_pays(const fuse_occ_cand *c, const fuse_occ *parts, char *why, size_t size) {
  double t_fused = 1.0 / occ_efficiency(&c->rec.fused);
  double t_split = c->ratio / occ_efficiency(parts);
  if (t_split < 0.95 * t_fused) return true;
  snprintf(why, size,
           "but a split would move %.2fx the bytes, predicted %.2fx the time (bandwidth model): "
           "kept fused",
           c->ratio, t_split / t_fused);
  return false;
}

kf_status fuse_occ_replan(const kf_graph *g, const fuse_plan *fp, const fuse_occ_cand *c, int nc,
                          bool only_split, fuse_plan **out, char *err, size_t errsize) {
  *out = NULL;
  int32_t n = 0;
  fuse_split *s = splits_with(fp, c, nc, only_split, &n);
  if (!s) {
    snprintf(err, errsize, "out of memory");
    return KF_ERR_OUT_OF_MEMORY;
  }
  fuse_options fo = fp->options;
  fo.splits = s;
  fo.n_splits = n;
  kf_status st = fuse_plan_build(g, &fo, out, err, errsize);
  splits_free(fp, s, n);
  return st;
}

static const char OCC_RULE[] = "occupancy";

void fuse_occ_forget(fuse_plan *fp) {
  int32_t n = 0;
  for (int32_t i = 0; i < fp->n_decisions; i++)
    if (strcmp(fp->decisions[i].rule, OCC_RULE) != 0) fp->decisions[n++] = fp->decisions[i];
  fp->n_decisions = n;
}

/* accepted: a split was called for */
void fuse_occ_note(fuse_plan *fp, int launch, bool split, const char *text) {
  fuse_decide(fp, split, OCC_RULE, "launch %d %s: %s", launch, split ? "split" : "kept", text);
}
