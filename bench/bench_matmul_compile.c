/* bench_matmul_compile.c - issue 20's compile-time targets, cold: one
 * template kernel (bf16 4096^3 + bias + tanh-GELU with KFUSE_MATMUL=template)
 * and a graph of 8 products with their epilogues (4 MLP layers of distinct
 * widths, so no two kernels are alike), each under KFUSE_MATMUL=auto,
 * library and template. Each measurement runs in a new process (so nothing
 * of an earlier one is reused: not the in-memory kernel cache, not NVRTC's
 * or the driver's start-up, not cuBLASLt's load) with an empty disk cache
 * folder, then once more in another new process over the same folder (the
 * warm disk cache). It times kf_compile (plan, codegen, NVRTC) and
 * kf_plan_load (modules, the library's candidates, the timed choice) apart;
 * "total" is what a user's first compile in a process costs. Needs a GPU
 * (the load). The compile threads follow the process's CPU set, so
 * `taskset -c 14,15` measures a 2-core machine.
 *
 *     build/bench/bench_matmul_compile [--reps N] */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/knobs.h"
#include "kfuse.h"

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static kf_value in(kf_graph *g, const char *name, int64_t a, int64_t b) {
  int64_t s[2] = {a, b};
  return b ? kf_input(g, name, KF_BF16, 2, s) : kf_input(g, name, KF_BF16, 1, s);
}

/* y = gelu_tanh(x @ w + bias), x [m, k], w [k, n]. */
static kf_graph *one_product(kf_ctx *ctx, int64_t m, int64_t n, int64_t k) {
  kf_graph *g = NULL;
  kf_graph_create(ctx, &g);
  kf_value y = kf_matmul(g, in(g, "x", m, k), in(g, "w", k, n));
  kf_set_output(g, kf_gelu_tanh(g, kf_add(g, y, in(g, "bias", n, 0))));
  return g;
}

/* Four layers x = x + gelu_tanh(x @ w1 + b1) @ w2, hidden 1024, widths
 * 2048, 2304, 2560, 2816: 8 products, each with an epilogue. */
static kf_graph *eight_products(kf_ctx *ctx) {
  kf_graph *g = NULL;
  kf_graph_create(ctx, &g);
  const int64_t tokens = 2048, hidden = 1024;
  kf_value x = in(g, "x", tokens, hidden);
  for (int l = 0; l < 4; l++) {
    int64_t w = 2048 + 256 * l;
    char n1[16], n2[16], nb[16];
    snprintf(n1, sizeof n1, "w1_%d", l), snprintf(n2, sizeof n2, "w2_%d", l);
    snprintf(nb, sizeof nb, "b1_%d", l);
    kf_value h = kf_gelu_tanh(g, kf_add(g, kf_matmul(g, x, in(g, n1, hidden, w)), in(g, nb, w, 0)));
    x = kf_add(g, x, kf_matmul(g, h, in(g, n2, w, hidden)));
  }
  kf_set_output(g, x);
  return g;
}

typedef kf_graph *(*build_fn)(kf_ctx *);
static kf_graph *big_one(kf_ctx *ctx) {
  return one_product(ctx, 4096, 4096, 4096);
}

/* One measurement in this process: a new context, KFUSE_MATMUL=mode, the
 * disk cache in dir. Returns 0 when it compiled and loaded, 77 without a
 * GPU. */
static int measure(const char *name, build_fn build, const char *mode, const char *dir,
                   const char *what) {
  setenv("KFUSE_CACHE_DIR", dir, 1);
  setenv("KFUSE_MATMUL", mode, 1);
  core_knobs_reload();
  double t0 = now_ms();
  kf_ctx *ctx = NULL;
  if (kf_ctx_create(&ctx) != KF_OK) return 1;
  int n = 0;
  if (kf_device_count(ctx, &n) != KF_OK || n == 0) {
    printf("SKIP: no GPU: %s\n", kf_ctx_errmsg(ctx));
    return 77;
  }
  kf_graph *g = build(ctx);
  if (kf_graph_status(g) != KF_OK) return fprintf(stderr, "%s: %s\n", name, kf_graph_errmsg(g)), 1;
  kf_plan *plan = NULL;
  double t1 = now_ms();
  kf_status st = kf_compile(ctx, g, NULL, &plan);
  double t2 = now_ms();
  kf_cache_stats at_compile;
  memset(&at_compile, 0, sizeof at_compile);
  kf_ctx_cache_stats(ctx, &at_compile);
  if (st == KF_OK) st = kf_plan_load(plan);
  double t3 = now_ms();
  if (st != KF_OK) {
    fprintf(stderr, "%s %s: %s\n", name, mode, plan ? kf_plan_errmsg(plan) : kf_ctx_errmsg(ctx));
    return 1;
  }
  /* what the caches gave: compiled (misses), from disk, from memory */
  kf_cache_stats cs;
  memset(&cs, 0, sizeof cs);
  kf_ctx_cache_stats(ctx, &cs);
  printf(
      "%-30s %-8s %-10s  start %6.1f ms  compile %7.1f ms  load %7.1f ms  total %7.1f ms"
      "  (%d launches; kernels compiled %llu, %llu of them at the load, disk %llu, memory %llu;"
      " %s)\n",
      name, mode, what, t1 - t0, t2 - t1, t3 - t2, t3 - t1, kf_plan_num_launches(plan),
      (unsigned long long)cs.misses, (unsigned long long)(cs.misses - at_compile.misses),
      (unsigned long long)cs.disk_hits, (unsigned long long)cs.mem_hits, kf_cache_dir(ctx));
  /* where the load's time went: the choice's counters (kf_plan_describe) */
  char *desc = kf_plan_describe(plan, KF_FORMAT_JSON);
  const char *mc = desc ? strstr(desc, "\"matmul_choice\"") : NULL;
  const char *end = mc ? strchr(mc, '}') : NULL;
  if (end) printf("    %.*s}\n", (int)(end - mc), mc);
  kf_free(desc);
  kf_plan_destroy(plan);
  kf_graph_destroy(g);
  kf_ctx_destroy(ctx);
  return 0;
}

/* measure() in a child process; its exit status. The parent never starts
 * CUDA, so every child starts it afresh. */
static int in_child(const char *name, build_fn build, const char *mode, const char *dir,
                    const char *what) {
  fflush(stdout);
  pid_t pid = fork();
  if (pid < 0) return fprintf(stderr, "fork failed\n"), 1;
  if (pid == 0) {
    int rc = measure(name, build, mode, dir, what);
    fflush(stdout);
    _exit(rc);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status)) return 1;
  return WEXITSTATUS(status);
}

int main(int argc, char **argv) {
  int reps = argc > 2 && strcmp(argv[1], "--reps") == 0 ? atoi(argv[2]) : 2;
  static const char *const modes[] = {"auto", "library", "template"};
  static const struct {
    const char *name;
    build_fn build;
    int first_mode, n_modes;
  } graphs[] = {{"bf16 4096^3 + bias + gelu_tanh", big_one, 2, 1},
                {"8 products (4 MLP layers)", eight_products, 0, 3}};
  int bad = 0;
  for (int r = 0; r < reps; r++)
    for (size_t gi = 0; gi < sizeof graphs / sizeof graphs[0]; gi++)
      for (int m = graphs[gi].first_mode; m < graphs[gi].first_mode + graphs[gi].n_modes; m++) {
        char dir[] = "/tmp/kfuse-bmc-XXXXXX";
        if (!mkdtemp(dir)) return fprintf(stderr, "mkdtemp failed\n"), 1;
        int rc = in_child(graphs[gi].name, graphs[gi].build, modes[m], dir, "cold");
        if (rc == 77) return 77;
        if (rc == 0) rc = in_child(graphs[gi].name, graphs[gi].build, modes[m], dir, "warm disk");
        bad += rc != 0;
        char cmd[64];
        snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
        bad += system(cmd) != 0;
      }
  return bad ? 1 : 0;
}
