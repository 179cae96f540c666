/* bench_warm.c - warm start of every suite graph (issue 8: < 5 ms): YAML file
 * to compiled plan in a fresh kf_ctx with the kernels already in the disk
 * cache. Prints the median of each phase per graph, and the minimum total
 * (steadier than the median on a shared machine). Needs NVRTC once per
 * graph (to fill the cache), not a GPU.
 * Usage: bench_warm [--runs N] [graph.yaml ...]  (default: bench/graphs) */
#include <dirent.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "kfuse.h"

#ifndef KFUSE_BENCH_GRAPHS
#define KFUSE_BENCH_GRAPHS "bench/graphs"
#endif

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* Phases of one start, ms: load (YAML to graph), plan (fusion), compile
 * (codegen, cache keys, disk reads), total (including context set-up). */
typedef struct phases {
  double load, plan, compile, total;
} phases;

/* One start in a fresh context; false on error (printed). *hits counts the
 * launches served by a cache, *kernels all of them. */
static bool start_once(const char *path, phases *p, int *kernels, int *hits) {
  double t0 = now_ms();
  kf_ctx *ctx;
  if (kf_ctx_create(&ctx) != KF_OK) return false;
  kf_graph *g = NULL;
  kf_plan *plan = NULL;
  kf_options opt;
  kf_options_init(&opt);
  opt.arch = "sm_90";
  double t1 = now_ms();
  kf_status st = kf_graph_load_yaml(ctx, path, &g);
  double t2 = now_ms();
  if (st == KF_OK) st = kf_plan_create(ctx, g, &opt, &plan);
  double t3 = now_ms();
  if (st == KF_OK) st = kf_plan_compile(plan);
  double t4 = now_ms();
  if (st != KF_OK) {
    fprintf(stderr, "bench_warm: %s: %s\n", path, kf_ctx_errmsg(ctx));
  } else {
    kf_compile_stats s;
    kf_plan_compile_stats(plan, &s);
    *kernels = s.kernels;
    *hits = s.cache_hits;
  }
  kf_plan_destroy(plan);
  kf_graph_destroy(g);
  kf_ctx_destroy(ctx);
  *p = (phases){t2 - t1, t3 - t2, t4 - t3, t4 - t0};
  return st == KF_OK;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Fills the cache, then times `runs` warm starts; 0 met, 1 missed, -1 error. */
static int bench_graph(const char *path, int runs) {
  phases p, all[100];
  int kernels = 0, hits = 0;
  if (!start_once(path, &p, &kernels, &hits)) return -1;
  for (int i = 0; i < runs; i++) {
    if (!start_once(path, &all[i], &kernels, &hits)) return -1;
    if (hits != kernels) {
      fprintf(stderr, "bench_warm: %s: %d of %d launches missed the cache\n", path,
              kernels - hits, kernels);
      return -1;
    }
  }
  double v[4][100];
  for (int i = 0; i < runs; i++) {
    v[0][i] = all[i].load, v[1][i] = all[i].plan, v[2][i] = all[i].compile;
    v[3][i] = all[i].total;
  }
  const char *name = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
  double total = median(v[3], runs); /* sorts v[3]: v[3][0] is the minimum */
  printf("%-24s %3d  %8.3f %8.3f %8.3f %8.3f %8.3f  %s\n", name, kernels, median(v[0], runs),
         median(v[1], runs), median(v[2], runs), total, v[3][0], total < 5 ? "met" : "MISSED");
  return total < 5 ? 0 : 1;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The *.yaml files of dir, sorted; their count (at most max). */
static int list_graphs(const char *dir, char **out, int max) {
  DIR *d = opendir(dir);
  int n = 0;
  if (!d) return 0;
  for (struct dirent *e; (e = readdir(d)) && n < max;) {
    size_t len = strlen(e->d_name);
    if (len < 6 || strcmp(e->d_name + len - 5, ".yaml") != 0) continue;
    size_t size = strlen(dir) + len + 2;
    if (!(out[n] = malloc(size))) break;
    snprintf(out[n++], size, "%s/%s", dir, e->d_name);
  }
  closedir(d);
  qsort(out, (size_t)n, sizeof *out, cmp_str);
  return n;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  (void)st, (void)flag, (void)ftw;
  return remove(path);
}

int main(int argc, char **argv) {
  int runs = 21, a = 1;
  if (argc >= 3 && strcmp(argv[1], "--runs") == 0) runs = atoi(argv[2]), a = 3;
  if (runs < 1 || runs > 100) runs = 21;
  char *files[256];
  int n = 0;
  if (a < argc) {
    for (; a < argc && n < 256; a++) files[n++] = strdup(argv[a]);
  } else {
    n = list_graphs(KFUSE_BENCH_GRAPHS, files, 256);
  }
  if (n == 0) {
    fprintf(stderr, "bench_warm: no graphs (give files, or run with %s present)\n",
            KFUSE_BENCH_GRAPHS);
    return 1;
  }
  char dir[] = "/tmp/kfuse-bench-warm-XXXXXX";
  if (!mkdtemp(dir)) return 1;
  setenv("KFUSE_CACHE_DIR", dir, 1);
  printf("bench_warm: warm start (fresh kf_ctx, disk cache warm), sm_90, median of %d, ms\n",
         runs);
  printf("%-24s %3s  %8s %8s %8s %8s %8s  target < 5 ms (median total)\n", "graph", "k", "load",
         "plan", "compile", "total", "min");
  int missed = 0, bad = 0;
  for (int i = 0; i < n; i++) {
    int r = bench_graph(files[i], runs);
    bad |= r < 0;
    missed += r > 0;
    free(files[i]);
  }
  nftw(dir, rm_one, 8, FTW_DEPTH | FTW_PHYS);
  printf("%s\n", bad ? "a graph failed" : missed ? "some targets missed" : "all targets met");
  return bad ? 1 : 0;
}
