/* occupancy.c - occupancy feedback: after a kernel is loaded, read back its
 * registers, spills and shared memory and its occupancy; when a fused
 * kernel looks worse than its unfused parts would be, compile and measure
 * the parts, split the group through the fuser, recompile, and cache the
 * measurements with the kernels so a later process splits before NVRTC. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/program.h"
#include "core/alloc.h"
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

bool rt_occupancy_split_enabled(const kf_plan *plan) {
  return plan->options.occupancy_drop > 0 && !plan->knobs->no_occupancy_split;
}

/* Only a kernel that spills or sits below (1 - drop) can be more than drop
 * below parts whose occupancy is at most 100%: the others are kept without
 * compiling anything. */
static bool suspicious(const rt_occ *o, double drop) {
  return o->local_bytes > 0 || o->occupancy < 1.0 - drop;
}

static CUresult read_occ(const rt_driver *d, CUfunction fn, int block, unsigned smem,
                         int max_threads, rt_occ *o) {
  memset(o, 0, sizeof *o);
  d->FuncGetAttribute(&o->regs, CU_FUNC_ATTRIBUTE_NUM_REGS, fn);
  d->FuncGetAttribute(&o->local_bytes, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, fn);
  d->FuncGetAttribute(&o->static_smem, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, fn);
  o->dyn_smem = (int)smem;
  o->block = block;
  CUresult r = CUDA_SUCCESS;
  if (block > 0)
    r = d->OccupancyMaxActiveBlocksPerMultiprocessor(&o->blocks_per_sm, fn, block, smem);
  o->occupancy = (double)o->blocks_per_sm * o->block / (max_threads > 0 ? max_threads : 2048);
  return r;
}

static void record(kf_plan *plan, int launch, bool split, const char *text) {
  struct rt_plan *rp = plan->rt;
  rt_decision *d = core_realloc(rp->decisions, (size_t)(rp->n_decisions + 1) * sizeof *d);
  if (!d) return; /* a lost log line is not worth failing a load */
  rp->decisions = d;
  d[rp->n_decisions].launch = launch;
  d[rp->n_decisions].split = split;
  snprintf(d[rp->n_decisions].text, sizeof d->text, "%s", text);
  rp->n_decisions++;
}

kf_status rt_occupancy_measure(kf_plan *plan, int i) {
  struct rt_plan *rp = plan->rt;
  rt_state *rt = rp->rt;
  rt_launch *l = &rp->launches[i];
  rt_occ *o = &l->occ;
  CUresult r = read_occ(rt->drv, l->fn, (int)l->block, l->smem, rt->info.max_threads_per_sm, o);
  if (r != CUDA_SUCCESS) return rt_fail(plan->ctx, plan, rt, r, "cuOccupancyMaxActiveBlocks");
  char why[200], text[sizeof((rt_decision *)0)->text];
  bool split = rt_occupancy_decide(o, NULL, 0, plan->options.occupancy_drop, why, sizeof why);
  snprintf(text, sizeof text, "%.63s: %d regs, %d B spills, %d+%d B smem, %d blocks/SM of %d: %s",
           l->entry, o->regs, o->local_bytes, o->static_smem, o->dyn_smem, o->blocks_per_sm,
           o->block, why);
  record(plan, i, split, text);
  core_log(plan->ctx, suspicious(o, plan->options.occupancy_drop) ? KF_LOG_INFO : KF_LOG_DEBUG,
           LOG_RUNTIME, "occupancy %s", text);
  return KF_OK;
}

/* ---- the cached record --------------------------------------------------- */

/* What one comparison measured; judged again with the current limit when
 * read back, so changing occupancy_drop needs no new measurement. */
typedef struct occ_record {
  rt_occ fused, lowest; /* lowest: the part with the least occupancy */
  int n_parts;          /* 0: the parts could not be measured */
} occ_record;

static cache_key record_key(const char *source, const char *arch) {
  size_t ls = strlen(source), la = strlen(arch);
  char *buf = core_malloc(ls + la + 2);
  if (!buf) return (cache_key){0, 0};
  memcpy(buf, source, ls + 1);
  memcpy(buf + ls + 1, arch, la + 1);
  cache_key key = cache_key_blob("occupancy-v2", buf, ls + la + 2);
  free(buf);
  return key;
}

#define OCC_FMT "%d %d %d %d %d %d %lf"
#define OCC_ARGS(o)                                                                       \
  (o).regs, (o).local_bytes, (o).static_smem, (o).dyn_smem, (o).block, (o).blocks_per_sm, \
      (o).occupancy
#define OCC_PTRS(o)                                                                             \
  &(o).regs, &(o).local_bytes, &(o).static_smem, &(o).dyn_smem, &(o).block, &(o).blocks_per_sm, \
      &(o).occupancy

/* A cached record is bytes from a file: its numbers must be ones a
 * measurement can give, or the record is ignored (measured again). */
static bool occ_sane(const rt_occ *o) {
  return o->regs >= 0 && o->regs <= 65536 && o->local_bytes >= 0 && o->static_smem >= 0 &&
         o->dyn_smem >= 0 && o->block >= 0 && o->block <= 1024 && o->blocks_per_sm >= 0 &&
         o->occupancy >= 0 && o->occupancy <= 1;
}

static bool record_get(kf_ctx *ctx, const char *source, const char *arch, occ_record *rec) {
  void *data = NULL;
  size_t size = 0;
  if (!cache_blob_get(ctx, record_key(source, arch), &data, &size)) return false;
  char *text = core_realloc(data, size + 1);
  if (!text) {
    free(data);
    return false;
  }
  text[size] = 0;
  memset(rec, 0, sizeof *rec);
  bool ok = sscanf(text, "kfuse-occupancy 2 parts %d fused " OCC_FMT " lowest " OCC_FMT,
                   &rec->n_parts, OCC_PTRS(rec->fused), OCC_PTRS(rec->lowest)) == 15 &&
            rec->n_parts >= 0 && occ_sane(&rec->fused) && occ_sane(&rec->lowest);
  free(text);
  return ok;
}

static void record_put(kf_ctx *ctx, const char *source, const char *arch, const occ_record *rec) {
  char text[400];
  int n = snprintf(text, sizeof text,
                   "kfuse-occupancy 2 parts %d fused " OCC_FMT " lowest " OCC_FMT "\n",
                   rec->n_parts, OCC_ARGS(rec->fused), OCC_ARGS(rec->lowest));
  if (n > 0 && (size_t)n < sizeof text)
    cache_blob_put(ctx, record_key(source, arch), text, (size_t)n);
}

/* ---- candidates ----------------------------------------------------------- */

typedef struct occ_cand {
  int launch;
  const fuse_kernel *k;
  occ_record rec;
  bool known; /* rec.lowest came from the cache */
  bool split;
  double ratio; /* bytes of the plan with this kernel split / bytes now */
  int32_t cut;  /* the split in two of its home nodes (fuse_split.cut) */
  char why[160];
} occ_cand;

/* A launch of one kernel with at least two nodes computed at home: the only
 * kind a split can change (horizontal launches are already separate
 * kernels, packed). */
static const fuse_kernel *splittable(const fuse_plan *fp, int launch) {
  const fuse_launch *L = &fp->launches[launch];
  if (L->n_kernels != 1) return NULL;
  const fuse_kernel *k = &fp->kernels[L->kernels[0]];
  int home = 0;
  for (int32_t i = 0; i < k->n_nodes; i++) home += !k->recomputed[i];
  return home >= 2 ? k : NULL;
}

static void describe(occ_cand *c, const char *entry, double drop) {
  const rt_occ *f = &c->rec.fused;
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
static fuse_split *splits_with(const fuse_plan *fp, const occ_cand *c, int nc, bool only_split,
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

/* ---- compiling a re-planned copy ------------------------------------------ */

static void tmp_free(kf_plan *tmp) {
  if (!tmp) return;
  tmp->graph = NULL; /* borrowed */
  kf_plan_destroy(tmp);
}

/* The plan's graph planned with the given splits and compiled (through the
 * caches) for the same arch; NULL, with a warning, when that fails. */
static kf_plan *compile_with(kf_plan *plan, const fuse_split *s, int32_t n) {
  kf_plan *tmp = core_calloc(1, sizeof *tmp);
  if (!tmp) return NULL;
  tmp->ctx = plan->ctx;
  tmp->graph = plan->graph;
  tmp->options = plan->options;
  tmp->options.arch = plan->code->arch;
  tmp->knobs = plan->knobs; /* the same environment as the plan it measures for */
  fuse_options fo = plan->fuse->options;
  fo.splits = s;
  fo.n_splits = n;
  char err[512] = "";
  kf_status st = fuse_plan_build(plan->graph, &fo, &tmp->fuse, err, sizeof err);
  if (st == KF_OK) st = kf_plan_compile(tmp);
  if (st != KF_OK) {
    core_log(plan->ctx, KF_LOG_WARN, LOG_RUNTIME,
             "occupancy: the split plan could not be built, the kernels stay fused: %s",
             err[0] ? err : tmp->errmsg);
    tmp_free(tmp);
    return NULL;
  }
  return tmp;
}

/* Loads one launch of a compiled copy just long enough to measure it. */
static bool measure_image(rt_state *rt, const cg_program_launch *pl, rt_occ *o) {
  const rt_driver *d = rt->drv;
  CUmodule mod = NULL;
  CUfunction fn = NULL;
  bool ok = pl->image && d->ModuleLoadData(&mod, pl->image) == CUDA_SUCCESS;
  ok = ok && d->ModuleGetFunction(&fn, mod, pl->src.entry) == CUDA_SUCCESS;
  if (ok && pl->src.smem_bytes > 48 * 1024)
    ok = d->FuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                             (int)pl->src.smem_bytes) == CUDA_SUCCESS;
  ok = ok && read_occ(d, fn, (int)pl->src.block, pl->src.smem_bytes, rt->info.max_threads_per_sm,
                      o) == CUDA_SUCCESS;
  if (mod) d->ModuleUnload(mod);
  return ok;
}

/* Each candidate's parts: the launches of the copy that compute its home
 * nodes; the one with the least occupancy is kept. */
static void measure_parts(kf_plan *plan, const kf_plan *tmp, occ_cand *c, int nc) {
  rt_state *rt = plan->rt->rt;
  const fuse_plan *fp = tmp->fuse;
  bool pushed;
  rt_occ *occ = core_calloc((size_t)fp->n_launches + 1, sizeof *occ);
  int8_t *state = core_calloc((size_t)fp->n_launches + 1, 1); /* 0 new, 1 measured, 2 failed */
  if (!occ || !state || rt_enter(plan->ctx, rt, &pushed) != KF_OK) {
    free(occ);
    free(state);
    return;
  }
  for (int i = 0; i < nc; i++) {
    if (c[i].known) continue;
    for (int32_t j = 0; j < c[i].k->n_nodes; j++) {
      if (c[i].k->recomputed[j]) continue;
      int32_t kid = fp->kernel_of[c[i].k->nodes[j]];
      if (kid < 0) continue;
      int L = fp->kernels[kid].launch;
      if (state[L] == 0) state[L] = measure_image(rt, &tmp->code->launches[L], &occ[L]) ? 1 : 2;
      if (state[L] != 1) continue;
      if (c[i].rec.n_parts == 0 || occ[L].occupancy < c[i].rec.lowest.occupancy)
        c[i].rec.lowest = occ[L];
      c[i].rec.n_parts++;
    }
  }
  rt_leave(rt, pushed);
  free(occ);
  free(state);
}

/* ---- the bandwidth model that gates every split ---------------------------

 * Occupancy and spills only trigger a comparison. A split also makes the
 * plan move more bytes (the values that stayed on chip go to memory), so it
 * goes ahead only when a simple model predicts it is faster: a memory-bound
 * kernel reaches full bandwidth from about half occupancy (below that,
 * bandwidth falls in proportion), and each 128 bytes spilled per thread
 * cost about one more pass over its data. Time ~ bytes / efficiency. */
static double occ_efficiency(const rt_occ *o) {
  double e = o->occupancy >= 0.5 ? 1.0 : o->occupancy / 0.5;
  if (o->local_bytes > 0) e /= 1.0 + o->local_bytes / 128.0;
  return e > 1e-3 ? e : 1e-3;
}

/* The bytes the plan moves with candidate c split (at c->cut), or -1 when
 * that does not plan. */
static int64_t split_bytes(const kf_plan *plan, const occ_cand *c) {
  int32_t n = 0;
  fuse_split *s = splits_with(plan->fuse, c, 1, false, &n);
  if (!s) return -1;
  fuse_options fo = plan->fuse->options;
  fo.splits = s;
  fo.n_splits = n;
  fuse_plan *fp = NULL;
  char err[256];
  int64_t bytes = -1;
  if (fuse_plan_build(plan->graph, &fo, &fp, err, sizeof err) == KF_OK) bytes = fp->bytes_fused;
  fuse_plan_free(fp);
  splits_free(plan->fuse, s, n);
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
static void choose_split(const kf_plan *plan, occ_cand *c) {
  int32_t nh = 0;
  for (int32_t j = 0; j < c->k->n_nodes; j++) nh += !c->k->recomputed[j];
  int32_t steps = nh < 3 ? 0 : nh - 1 < CUTS_TRIED ? nh - 1 : CUTS_TRIED;
  int32_t best = 0;
  int64_t best_bytes = -1;
  for (int32_t t = 1; t <= steps; t++) {
    c->cut = (int32_t)(((int64_t)t * nh) / (steps + 1));
    int64_t b = split_bytes(plan, c);
    if (b >= 0 && (best_bytes < 0 || b < best_bytes)) {
      best_bytes = b;
      best = c->cut;
    }
  }
  c->cut = best;
  if (best_bytes < 0) best_bytes = split_bytes(plan, c);
  c->ratio = best_bytes >= 0 && plan->fuse->bytes_fused > 0
                 ? (double)best_bytes / (double)plan->fuse->bytes_fused
                 : 1e9;
}

/* Whether the model predicts the split to be faster; says why not. */
static bool split_pays(const occ_cand *c, const rt_occ *parts, char *why, size_t size) {
  double t_fused = 1.0 / occ_efficiency(&c->rec.fused);
  double t_split = c->ratio / occ_efficiency(parts);
  if (t_split < 0.95 * t_fused) return true;
  snprintf(why, size,
           "but a split would move %.2fx the bytes, predicted %.2fx the time (bandwidth model): "
           "kept fused",
           c->ratio, t_split / t_fused);
  return false;
}

/* ---- after loading: compare, split, recompile ------------------------------ */

static void swap_in(kf_plan *plan, kf_plan *tmp) {
  fuse_plan_free(plan->fuse);
  plan->fuse = tmp->fuse;
  cg_program_free(plan->code);
  plan->code = tmp->code;
  tmp->fuse = NULL;
  tmp->code = NULL;
  tmp_free(tmp);
}

static int find_candidates(kf_plan *plan, occ_cand *c) {
  const fuse_plan *fp = plan->fuse;
  const cg_program *prog = plan->code;
  double drop = plan->options.occupancy_drop;
  int nc = 0;
  for (int i = 0; i < fp->n_launches && i < plan->rt->n_launches; i++) {
    const fuse_kernel *k = splittable(fp, i);
    const rt_occ *o = &plan->rt->launches[i].occ;
    if (!k || !suspicious(o, drop)) continue;
    occ_cand *ci = &c[nc];
    memset(ci, 0, sizeof *ci);
    ci->launch = i;
    ci->k = k;
    ci->rec.fused = *o;
    choose_split(plan, ci);
    /* Parts at full occupancy without spills are the best a split can get:
     * when even they lose, nothing is compiled or measured. */
    rt_occ best = {.occupancy = 1.0};
    char why[200];
    if (!split_pays(ci, &best, why, sizeof why)) {
      core_log(plan->ctx, KF_LOG_INFO, LOG_RUNTIME,
               "occupancy: %s: %.0f%% occupancy, %d B spills, %s", prog->launches[i].src.entry,
               100 * o->occupancy, o->local_bytes, why);
      continue;
    }
    nc++;
    occ_record cached;
    ci->known = record_get(plan->ctx, prog->launches[i].src.source, prog->arch, &cached);
    if (ci->known) ci->rec = cached;
    ci->rec.fused = *o;
  }
  return nc;
}

/* Judges, logs and caches each candidate; returns how many split. */
static int judge(kf_plan *plan, occ_cand *c, int nc) {
  double drop = plan->options.occupancy_drop;
  int n_split = 0;
  for (int i = 0; i < nc; i++) {
    const cg_program_launch *pl = &plan->code->launches[c[i].launch];
    char verdict[448];
    c[i].split = rt_occupancy_decide(&c[i].rec.fused, &c[i].rec.lowest,
                                     c[i].rec.n_parts > 0 ? 1 : 0, drop, verdict, sizeof verdict);
    char gate[200];
    if (c[i].split && !split_pays(&c[i], c[i].rec.n_parts > 0 ? &c[i].rec.lowest : &c[i].rec.fused,
                                  gate, sizeof gate)) {
      c[i].split = false;
      size_t len = strlen(verdict);
      snprintf(verdict + len, sizeof verdict - len, ", %s", gate);
    }
    describe(&c[i], pl->src.entry, drop);
    n_split += c[i].split;
    core_log(plan->ctx, c[i].split ? KF_LOG_WARN : KF_LOG_INFO, LOG_RUNTIME,
             "occupancy: %s: %s: %s%s", c[i].why, verdict, c[i].split ? "split" : "kept fused",
             c[i].known ? " (cached measurements)" : "");
    if (!c[i].known) record_put(plan->ctx, pl->src.source, plan->code->arch, &c[i].rec);
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
    tmp_free(tmp);
    return false;
  }
  int before = plan->fuse->n_launches;
  swap_in(plan, tmp);
  core_log(plan->ctx, KF_LOG_INFO, LOG_RUNTIME, "occupancy: re-planned %d launches as %d", before,
           plan->fuse->n_launches);
  return true;
}

bool rt_occupancy_split(kf_plan *plan) {
  struct rt_plan *rp = plan->rt;
  if (!rt_occupancy_split_enabled(plan) || !rp || !rp->loaded || !plan->code || !plan->fuse)
    return false;
  occ_cand *c = core_calloc((size_t)plan->fuse->n_launches + 1, sizeof *c);
  if (!c) return false;
  int nc = find_candidates(plan, c);
  kf_plan *tmp = NULL;
  bool measure = false;
  for (int i = 0; i < nc; i++) measure |= !c[i].known;
  int32_t n = 0;
  fuse_split *s = NULL;
  if (measure) { /* every candidate split at once: one compile for all parts */
    for (int i = 0; i < nc; i++)
      describe(&c[i], plan->code->launches[c[i].launch].src.entry, plan->options.occupancy_drop);
    s = splits_with(plan->fuse, c, nc, false, &n);
    tmp = s ? compile_with(plan, s, n) : NULL;
    splits_free(plan->fuse, s, n);
    if (tmp) measure_parts(plan, tmp, c, nc);
  }
  int n_split = nc > 0 ? judge(plan, c, nc) : 0;
  bool changed = false;
  /* Planned again with only the kernels that split and their final
   * numbers in the decision log; the parts' sources are unchanged, so
   * this compile is memory-cache hits. */
  if (n_split > 0) {
    tmp_free(tmp);
    s = splits_with(plan->fuse, c, nc, true, &n);
    tmp = s ? compile_with(plan, s, n) : NULL;
    splits_free(plan->fuse, s, n);
  }
  if (n_split > 0 && tmp)
    changed = adopt(plan, tmp);
  else
    tmp_free(tmp);
  free(c);
  return changed;
}

/* ---- before compiling: apply what an earlier process measured --------------- */

bool rt_occupancy_apply_cached(kf_plan *plan, const cg_program *prog) {
  if (!rt_occupancy_split_enabled(plan) || !plan->fuse ||
      prog->n_launches != plan->fuse->n_launches)
    return false;
  occ_cand *c = core_calloc((size_t)prog->n_launches + 1, sizeof *c);
  if (!c) return false;
  int nc = 0;
  for (int i = 0; i < prog->n_launches; i++) {
    const fuse_kernel *k = splittable(plan->fuse, i);
    occ_record rec;
    if (!k || !prog->launches[i].src.source ||
        !record_get(plan->ctx, prog->launches[i].src.source, prog->arch, &rec))
      continue;
    char verdict[200], gate[200];
    if (!rt_occupancy_decide(&rec.fused, &rec.lowest, rec.n_parts > 0 ? 1 : 0,
                             plan->options.occupancy_drop, verdict, sizeof verdict))
      continue;
    c[nc] = (occ_cand){.launch = i, .k = k, .rec = rec, .known = true, .split = true};
    choose_split(plan, &c[nc]);
    if (!split_pays(&c[nc], rec.n_parts > 0 ? &rec.lowest : &rec.fused, gate, sizeof gate))
      continue;
    describe(&c[nc], prog->launches[i].src.entry, plan->options.occupancy_drop);
    core_log(plan->ctx, KF_LOG_INFO, LOG_RUNTIME, "occupancy: %s: %s: split (cached decision)",
             c[nc].why, verdict);
    nc++;
  }
  int32_t n = 0;
  fuse_split *s = nc > 0 ? splits_with(plan->fuse, c, nc, true, &n) : NULL;
  fuse_plan *fp = NULL;
  char err[512] = "";
  if (s) {
    fuse_options fo = plan->fuse->options;
    fo.splits = s;
    fo.n_splits = n;
    if (fuse_plan_build(plan->graph, &fo, &fp, err, sizeof err) != KF_OK)
      core_log(plan->ctx, KF_LOG_WARN, LOG_RUNTIME,
               "occupancy: cached splits not applied, the kernels stay fused: %s", err);
  }
  splits_free(plan->fuse, s, n);
  free(c);
  if (!fp) return false;
  fuse_plan_free(plan->fuse);
  plan->fuse = fp;
  return true;
}
