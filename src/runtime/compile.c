/* compile.c - kf_plan_compile: code generation for every launch, then NVRTC
 * through the memory and disk caches, launches in parallel on a pool. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "codegen/program.h"
#include "core/alloc.h"
#include "core/dump.h"
#include "core/plan.h"
#include "core/pool.h"
#include "core/progress.h"
#include "core/span.h"
#include "runtime/cache.h"
#include "runtime/nvrtc.h"
#include "runtime/plan_target.h"
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
  bool disk;  /* the disk cache is usable */
  int *order; /* launches, longest source first; NULL: in order */
  core_progress progress; /* a line on a terminal while many compile */
} compile_job;

/* NVRTC for a reserved key; publishes or abandons the reservation. */
static void compile_miss(compile_job *job, cg_program_launch *l, cache_key key,
                         const rt_nvrtc_opts *opts) {
  atomic_fetch_add(&job->cs->misses, 1);
  const char *name = l->src.entry[0] ? l->src.entry : "kernel";
  char file[80];
  snprintf(file, sizeof file, "%s.cu", name);
  core_span_pushf("nvrtc %s", name);
  l->status = rt_nvrtc_compile(l->src.source, file, opts, &l->image, &l->image_size, &l->log);
  core_span_pop();
  if (l->status != KF_OK) {
    cache_mem_abandon(job->cs, key);
    return;
  }
  free(l->log); /* warnings of a successful compile are not kept */
  l->log = NULL;
  if (job->disk) cache_disk_put(job->cs, key, l->image, l->image_size);
  cache_mem_publish(job->cs, key, l->image, l->image_size);
  l->origin = CG_COMPILED;
}

static void compile_one(void *arg, int i) {
  compile_job *job = arg;
  cg_program_launch *l = &job->prog->launches[job->order ? job->order[i] : i];
  double t0 = now_ms();
  rt_nvrtc_opts opts;
  char joined[sizeof opts.text];
  rt_nvrtc_options(job->prog->arch, l->src.source, &opts);
  joined[0] = 0;
  for (int k = 0; k < opts.argc; k++) {
    strncat(joined, opts.argv[k], sizeof joined - strlen(joined) - 1);
    strncat(joined, "\n", sizeof joined - strlen(joined) - 1);
  }
  cache_key key = cache_key_kernel(l->src.source, joined, job->prog->arch);
  cache_mem_result r = cache_mem_acquire(job->cs, key, &l->image, &l->image_size);
  if (r == CACHE_MEM_HIT) {
    atomic_fetch_add(&job->cs->mem_hits, 1);
    l->origin = CG_MEM_HIT;
  } else if (r == CACHE_MEM_NOMEM) {
    l->status = KF_ERR_OUT_OF_MEMORY;
  } else if (job->disk && cache_disk_get(job->cs, key, &l->image, &l->image_size)) {
    atomic_fetch_add(&job->cs->disk_hits, 1);
    cache_mem_publish(job->cs, key, l->image, l->image_size);
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
  const char *dir = core_dump_dir();
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
  struct cache_state *cs = cache_state_get(ctx);
  if (!cs) {
    snprintf(err, errsize, "out of memory");
    return KF_ERR_OUT_OF_MEMORY;
  }
  for (int i = 0; i < prog->n_launches; i++)
    if (!prog->launches[i].src.source) {
      snprintf(err, errsize, "launch %d has no source", i);
      return KF_ERR_INVALID_ARG;
    }
  compile_job job = {.ctx = ctx, .cs = cs, .prog = prog, .disk = cache_disk_ready(cs),
                     .order = longest_first(prog)};
  core_progress_begin(&job.progress, ctx, "compiling kernels", prog->n_launches);
  core_pool *pool = prog->n_launches > 1 ? cache_state_pool(cs) : NULL;
  core_pool_for(pool, prog->n_launches, compile_one, &job);
  core_progress_end(&job.progress);
  free(job.order);
  kf_compile_stats *s = &prog->stats;
  s->kernels = prog->n_launches;
  snprintf(s->arch, sizeof s->arch, "%s", prog->arch);
  for (int i = 0; i < prog->n_launches; i++) {
    const cg_program_launch *l = &prog->launches[i];
    if (l->status != KF_OK) return report_failure(prog, i, err, errsize);
    s->compiled += l->origin == CG_COMPILED;
    s->mem_hits += l->origin == CG_MEM_HIT;
    s->disk_hits += l->origin == CG_DISK_HIT;
  }
  s->cache_hits = s->mem_hits + s->disk_hits;
  return KF_OK;
}

static kf_status emit_all(kf_plan *plan, cg_program *prog, const cg_target *target) {
  char err[1024] = "";
  for (int i = 0; i < prog->n_launches; i++) {
    core_span_pushf("codegen launch %d", i);
    kf_status st = cg_emit_launch(plan->graph, plan->fuse, i, target, &prog->launches[i].src, err,
                                  sizeof err);
    core_span_pop();
    if (st != KF_OK)
      return core_plan_error(plan, st, "code generation failed for launch %d: %s", i, err);
  }
  return KF_OK;
}

/* plan->fuse changed (a cached occupancy split): generate the code again. */
static kf_status reemit(kf_plan *plan, cg_program **prog, const cg_target *target) {
  cg_program *p = cg_program_new(plan->fuse->n_launches);
  if (!p) return core_plan_error(plan, KF_ERR_OUT_OF_MEMORY, "kf_plan_compile: out of memory");
  memcpy(p->arch, (*prog)->arch, sizeof p->arch);
  cg_program_free(*prog);
  *prog = p;
  return emit_all(plan, p, target);
}

kf_status kf_plan_compile(kf_plan *plan) {
  if (!plan || !plan->fuse)
    return plan ? core_plan_error(plan, KF_ERR_INVALID_ARG, "kf_plan_compile: plan has no fusion")
                : KF_ERR_INVALID_ARG;
  double t0 = now_ms();
  cg_program *prog = cg_program_new(plan->fuse->n_launches);
  if (!prog) return core_plan_error(plan, KF_ERR_OUT_OF_MEMORY, "kf_plan_compile: out of memory");
  cg_target target;
  kf_status st = rt_plan_target(plan, NULL, true, "kf_plan_compile", &target, prog->arch,
                                sizeof prog->arch);
  if (st == KF_OK) st = emit_all(plan, prog, &target);
  for (int r = 0; st == KF_OK && r < RT_OCC_ROUNDS && rt_occupancy_apply_cached(plan, prog); r++)
    st = reemit(plan, &prog, &target);
  if (st == KF_OK) {
    char *err = core_malloc(sizeof plan->errmsg);
    st = err ? rt_compile_program(plan->ctx, prog, err, sizeof plan->errmsg) : KF_ERR_OUT_OF_MEMORY;
    if (st != KF_OK) core_plan_error(plan, st, "%s", err ? err : "out of memory");
    free(err);
  }
  if (st != KF_OK) {
    cg_program_free(prog);
    return st;
  }
  prog->stats.compile_ms = now_ms() - t0;
  core_log(plan->ctx, KF_LOG_INFO, LOG_CACHE,
           "compiled %d kernels for %s in %.1f ms (%d by NVRTC, %d cache hits)",
           prog->stats.kernels, prog->arch, prog->stats.compile_ms, prog->stats.compiled,
           prog->stats.cache_hits);
  cg_program_free(plan->code);
  plan->code = prog;
  core_dump_plan(plan); /* KFUSE_DUMP_DIR; nothing when unset */
  return KF_OK;
}

kf_status kf_compile(kf_ctx *ctx, const kf_graph *g, const kf_options *opt, kf_plan **out) {
  if (!out) return core_error(ctx, KF_ERR_INVALID_ARG, "kf_compile: out is NULL");
  *out = NULL;
  kf_plan *plan;
  kf_status st = kf_plan_create(ctx, g, opt, &plan);
  if (st != KF_OK) return st;
  st = kf_plan_compile(plan);
  if (st != KF_OK) {
    kf_plan_destroy(plan);
    return st;
  }
  *out = plan;
  return KF_OK;
}

kf_status kf_plan_compile_stats(const kf_plan *plan, kf_compile_stats *out) {
  if (!plan || !out) return KF_ERR_INVALID_ARG;
  if (!plan->code) return KF_ERR_UNSUPPORTED;
  *out = plan->code->stats;
  return KF_OK;
}
