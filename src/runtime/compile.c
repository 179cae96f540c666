/* compile.c - rt_compile_program: NVRTC for every launch of a generated
 * program, through the memory and disk caches, launches in parallel on a
 * pool (the pipeline's kf_plan_compile calls it). */
#include "runtime/compile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "codegen/program.h"
#include "core/alloc.h"
#include "core/knobs.h"
#include "core/pool.h"
#include "core/progress.h"
#include "runtime/cache.h"
#include "runtime/cache_disk.h"
#include "runtime/cache_mem.h"
#include "runtime/cache_state.h"
#include "runtime/compile_alike.h"
#include "runtime/nvrtc.h"
#include "runtime/nvtx.h"
#include "runtime/rt.h"

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* One launch of one of the batch's programs. */
typedef struct compile_item {
  cg_program *prog;
  int launch;
  const int *rep; /* its program's first alike launch of each; NULL: none known */
} compile_item;

typedef struct compile_job {
  kf_ctx *ctx;
  struct cache_state *cs;
  compile_item *items;    /* every program's launches, longest source first */
  void (*side)(void *);   /* job 0 when set: not a kernel */
  void *side_arg;
  bool disk;              /* the disk cache is usable */
  core_progress progress; /* a line on a terminal while many compile */
} compile_job;

/* NVRTC for a reserved key; publishes or abandons the reservation. */
static void compile_miss(compile_job *job, cg_program_launch *l, cache_key key,
                         const rt_nvrtc_opts *opts) {
  atomic_fetch_add(&job->cs->misses, 1);
  const char *name = l->src.entry[0] ? l->src.entry : "kernel";
  char file[80];
  snprintf(file, sizeof file, "%s.cu", name);
  rt_span_pushf("nvrtc %s", name);
  l->status = rt_nvrtc_compile(l->src.source, file, opts, &l->image, &l->image_size, &l->log);
  rt_span_pop();
  if (l->status != KF_OK) {
    rt_cache_mem_abandon(job->cs, key);
    return;
  }
  free(l->log); /* warnings of a successful compile are not kept */
  l->log = NULL;
  if (job->disk) rt_cache_disk_put(job->cs, key, l->image, l->image_size);
  rt_cache_mem_publish(job->cs, key, l->image, l->image_size);
  l->origin = CG_COMPILED;
}

/* The arch launch l is compiled for: the program's, or its arch-specific
 * form ("sm_90a") for a source that uses wgmma or setmaxnreg. */
static void launch_arch(const cg_program *prog, const cg_program_launch *l, char *arch,
                        size_t size) {
  size_t n = strlen(prog->arch);
  bool lettered = n > 0 && prog->arch[n - 1] >= 'a' && prog->arch[n - 1] <= 'z';
  snprintf(arch, size, "%s%s", prog->arch, l->src.arch_specific && !lettered ? "a" : "");
}

static void compile_one(void *arg, int i) {
  compile_job *job = arg;
  if (job->side && i-- == 0) {
    job->side(job->side_arg);
    return;
  }
  const compile_item *it = &job->items[i];
  int li = it->launch;
  cg_program_launch *l = &it->prog->launches[li];
  if (it->rep && it->rep[li] != li) { /* an alike launch: adopted after the pool */
    core_progress_step(&job->progress);
    return;
  }
  if (l->src.library) { /* a library call: nothing to compile */
    l->status = KF_OK;
    l->origin = CG_COMPILED;
    core_progress_step(&job->progress);
    return;
  }
  double t0 = now_ms();
  rt_nvrtc_opts opts;
  char joined[sizeof opts.text];
  char arch[24];
  launch_arch(it->prog, l, arch, sizeof arch);
  rt_nvrtc_options(arch, l->src.source, &opts);
  joined[0] = 0;
  for (int k = 0; k < opts.argc; k++) {
    strncat(joined, opts.argv[k], sizeof joined - strlen(joined) - 1);
    strncat(joined, "\n", sizeof joined - strlen(joined) - 1);
  }
  cache_key key = rt_cache_key_kernel(l->src.source, joined, arch);
  l->key_hi = key.hi;
  l->key_lo = key.lo;
  cache_mem_result r = rt_cache_mem_acquire(job->cs, key, &l->image, &l->image_size);
  if (r == CACHE_MEM_HIT) {
    atomic_fetch_add(&job->cs->mem_hits, 1);
    l->origin = CG_MEM_HIT;
  } else if (r == CACHE_MEM_NOMEM) {
    l->status = KF_ERR_OUT_OF_MEMORY;
  } else if (job->disk && rt_cache_disk_get(job->cs, key, &l->image, &l->image_size)) {
    atomic_fetch_add(&job->cs->disk_hits, 1);
    rt_cache_mem_publish(job->cs, key, l->image, l->image_size);
    l->origin = CG_DISK_HIT;
  } else {
    compile_miss(job, l, key, &opts);
  }
  l->cache_hit = l->status == KF_OK && l->origin != CG_COMPILED;
  l->compile_ms = now_ms() - t0;
  core_progress_step(&job->progress);
  core_log(job->ctx, KF_LOG_DEBUG, LOG_CACHE, "%s: %s in %.1f ms", l->src.entry,
           l->status != KF_OK         ? "failed"
           : l->origin == CG_MEM_HIT  ? "memory hit"
           : l->origin == CG_DISK_HIT ? "disk hit"
                                      : "compiled",
           l->compile_ms);
}

/* Writes the failing source and log to $KFUSE_DUMP_DIR; the path or "". */
static void dump_failure(const cg_program_launch *l, char *path, size_t size) {
  const char *dir = core_knobs_quiet()->dump_dir;
  path[0] = 0;
  if (!dir) return;
  mkdir(dir, 0700);
  const char *name = l->src.entry[0] ? l->src.entry : "kernel";
  char p[4200];
  const char *what[2] = {l->src.source, l->log};
  const char *ext[2] = {"cu", "log"};
  for (int k = 0; k < 2; k++) {
    snprintf(p, sizeof p, "%s/%s.%s", dir, name, ext[k]);
    FILE *f = fopen(p, "w");
    if (!f) return;
    fputs(what[k] ? what[k] : "", f);
    if (fclose(f) != 0) return;
    if (k == 0) snprintf(path, size, "%s", p);
  }
}

static kf_status report_failure(const cg_program *prog, int i, char *err, size_t errsize) {
  const cg_program_launch *l = &prog->launches[i];
  if (l->status == KF_ERR_OUT_OF_MEMORY) {
    snprintf(err, errsize, "out of memory compiling launch %d", i);
    return l->status;
  }
  char dumped[4200], what[4400];
  dump_failure(l, dumped, sizeof dumped);
  snprintf(what, sizeof what, "kernel %s (launch %d of %d) failed to compile for %s%s%s",
           l->src.entry, i, prog->n_launches, prog->arch, dumped[0] ? "; source written to " : "",
           dumped);
  rt_nvrtc_format_error(what, l->log, l->src.source, err, errsize);
  return l->status;
}

/* The longest sources tend to compile longest: starting them first keeps
 * the last worker from finishing alone with a big kernel. Every program's
 * launches in one list, so that a second program's kernels fill the
 * workers the first leaves idle. */
static compile_item *longest_first(cg_program **progs, int n_progs, int *const *reps, int *n_out) {
  int n = 0;
  for (int p = 0; p < n_progs; p++) n += progs[p]->n_launches;
  *n_out = n;
  compile_item *items = core_malloc((size_t)(n ? n : 1) * sizeof *items);
  size_t *len = core_malloc((size_t)(n ? n : 1) * sizeof *len);
  if (!items || !len) {
    free(items);
    free(len);
    return NULL;
  }
  int k = 0;
  for (int p = 0; p < n_progs; p++)
    for (int i = 0; i < progs[p]->n_launches; i++, k++) {
      compile_item it = {progs[p], i, reps[p]};
      size_t l = strlen(progs[p]->launches[i].src.source);
      int j = k;
      for (; j > 0 && len[j - 1] < l; j--) items[j] = items[j - 1], len[j] = len[j - 1];
      items[j] = it, len[j] = l;
    }
  free(len);
  return items;
}

/* After the batch: alike launches adopted, the stats, the first failure. */
static kf_status finish_program(cg_program *prog, int *rep, char *err, size_t errsize) {
  for (int i = 0; rep && i < prog->n_launches; i++)
    if (rep[i] != i && prog->launches[rep[i]].status == KF_OK)
      prog->launches[i].status = rt_alike_adopt(prog, i, rep[i]);
  kf_compile_stats *s = &prog->stats;
  s->kernels = prog->n_launches;
  snprintf(s->arch, sizeof s->arch, "%s", prog->arch);
  for (int i = 0; i < prog->n_launches; i++) {
    const cg_program_launch *l = &prog->launches[i];
    if (l->status != KF_OK) return report_failure(prog, i, err, errsize);
    s->compiled += l->origin == CG_COMPILED && !l->src.library;
    s->mem_hits += l->origin == CG_MEM_HIT;
    s->disk_hits += l->origin == CG_DISK_HIT;
  }
  s->cache_hits = s->mem_hits + s->disk_hits;
  return KF_OK;
}

void rt_compile_programs(kf_ctx *ctx, cg_program *const *progs, int n_progs, kf_status *status,
                         char *const *errs, size_t errsize, void (*side)(void *), void *side_arg) {
  struct cache_state *cs = rt_cache_state_get(ctx);
  int *reps[RT_COMPILE_MAX_PROGRAMS] = {NULL};
  cg_program *live[RT_COMPILE_MAX_PROGRAMS];
  int *live_reps[RT_COMPILE_MAX_PROGRAMS];
  int n_live = 0;
  for (int p = 0; p < n_progs; p++) {
    status[p] = KF_OK;
    errs[p][0] = 0;
    if (!cs || p >= RT_COMPILE_MAX_PROGRAMS) {
      status[p] = cs ? KF_ERR_INVALID_ARG : KF_ERR_OUT_OF_MEMORY;
      snprintf(errs[p], errsize, cs ? "more than %d programs in one batch" : "out of memory",
               RT_COMPILE_MAX_PROGRAMS);
      continue;
    }
    for (int i = 0; i < progs[p]->n_launches && status[p] == KF_OK; i++)
      if (!progs[p]->launches[i].src.source) {
        snprintf(errs[p], errsize, "launch %d has no source", i);
        status[p] = KF_ERR_INVALID_ARG;
      }
    if (status[p] != KF_OK) continue;
    /* one launch has nothing to be alike: no second hash of its source */
    reps[p] = progs[p]->n_launches > 1 ? rt_alike_launches(progs[p]) : NULL;
    live[n_live] = progs[p], live_reps[n_live++] = reps[p];
  }
  int n = 0;
  compile_job job = {.ctx = ctx, .cs = cs, .disk = cs && rt_cache_disk_ready(cs)};
  job.items = n_live ? longest_first(live, n_live, live_reps, &n) : NULL;
  if (n_live && !job.items) n = 0;
  job.side = side, job.side_arg = side_arg;
  int jobs = n + (side != NULL);
  core_progress_begin(&job.progress, ctx, "compiling kernels", n);
  core_pool *pool = jobs > 1 && cs ? rt_cache_state_pool(cs) : NULL;
  core_pool_for(pool, jobs, compile_one, &job);
  core_progress_end(&job.progress);
  for (int p = 0; p < n_progs && p < RT_COMPILE_MAX_PROGRAMS; p++) {
    if (status[p] == KF_OK && n_live && !job.items) {
      snprintf(errs[p], errsize, "out of memory");
      status[p] = KF_ERR_OUT_OF_MEMORY;
    } else if (status[p] == KF_OK) {
      status[p] = finish_program(progs[p], reps[p], errs[p], errsize);
    }
    free(reps[p]);
  }
  free(job.items);
}

kf_status rt_compile_program(kf_ctx *ctx, cg_program *prog, char *err, size_t errsize) {
  kf_status st;
  rt_compile_programs(ctx, &prog, 1, &st, &err, errsize, NULL, NULL);
  return st;
}
