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

typedef struct compile_job {
  kf_ctx *ctx;
  struct cache_state *cs;
  cg_program *prog;
  bool disk;              /* the disk cache is usable */
  int *order;             /* launches, longest source first; NULL: in order */
  int *rep;               /* each launch's first alike launch; NULL: none known */
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
  int li = job->order ? job->order[i] : i;
  cg_program_launch *l = &job->prog->launches[li];
  if (job->rep && job->rep[li] != li) { /* an alike launch: adopted after the pool */
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
  launch_arch(job->prog, l, arch, sizeof arch);
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
 * the last worker from finishing alone with a big kernel. */
static int *longest_first(const cg_program *prog) {
  int n = prog->n_launches;
  int *order = core_malloc((size_t)(n ? n : 1) * sizeof *order);
  size_t *len = core_malloc((size_t)(n ? n : 1) * sizeof *len);
  if (!order || !len) {
    free(order);
    free(len);
    return NULL;
  }
  for (int i = 0; i < n; i++) {
    len[i] = strlen(prog->launches[i].src.source);
    int j = i;
    for (; j > 0 && len[order[j - 1]] < len[i]; j--) order[j] = order[j - 1];
    order[j] = i;
  }
  free(len);
  return order;
}

kf_status rt_compile_program(kf_ctx *ctx, cg_program *prog, char *err, size_t errsize) {
  struct cache_state *cs = rt_cache_state_get(ctx);
  if (!cs) {
    snprintf(err, errsize, "out of memory");
    return KF_ERR_OUT_OF_MEMORY;
  }
  for (int i = 0; i < prog->n_launches; i++)
    if (!prog->launches[i].src.source) {
      snprintf(err, errsize, "launch %d has no source", i);
      return KF_ERR_INVALID_ARG;
    }
  compile_job job = {.ctx = ctx,
                     .cs = cs,
                     .prog = prog,
                     .disk = rt_cache_disk_ready(cs),
                     .order = longest_first(prog)};
  core_progress_begin(&job.progress, ctx, "compiling kernels", prog->n_launches);
  core_pool *pool = prog->n_launches > 1 ? rt_cache_state_pool(cs) : NULL;
  /* one launch has nothing to be alike: no second hash of its source */
  job.rep = prog->n_launches > 1 ? rt_alike_launches(prog) : NULL;
  core_pool_for(pool, prog->n_launches, compile_one, &job);
  core_progress_end(&job.progress);
  for (int i = 0; job.rep && i < prog->n_launches; i++)
    if (job.rep[i] != i) rt_alike_adopt(prog, i, job.rep[i]);
  free(job.rep);
  free(job.order);
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
