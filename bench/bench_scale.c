/* bench_scale.c - nodes against plan, emit and compile time and source size,
 * for chains, diamonds and residual ladders (issue 18: all linear in nodes).
 *
 * Usage: build/bench/bench_scale [--compile-max N] [KIND [N ...]]
 *   KIND: chain (x*1.0001+0.5 repeated), tchain (exp, tanh repeated),
 *         mchain (a mixed pointwise chain: exp, mul, tanh, add, sigmoid,
 *         sin, silu, sqrt(abs), gelu, div, log, max repeated),
 *         diamond (exp(x) * neg(x)), ladder (x + exp(x) / sum(exp(x), -1)),
 *         or all (default); N: sizes in nodes (default 10 100 1000 10000
 *         100000), rounded down to whole blocks.
 *   --compile-max N: compile (NVRTC, sm_90, no GPU needed) only graphs of at
 *         most N nodes (default 10000; 0: never).
 * One line per graph: nodes, kernels, launches, plan ms, emit ms (every
 * launch's CUDA C), source KB, compile wall and CPU ms (a fresh context,
 * disk cache off unless KFUSE_DISK_CACHE is set), the process's peak RSS so
 * far. Peak RSS is per process: for one graph's own peak, run one KIND and
 * one N, e.g. `bench_scale chain 100000 --compile-max 100000`
 * (targets: under 20 s and 1 GB on 2 cores; `bench_scale ladder 256
 * --compile-max 256` is the N=64 ladder, target under 5 s). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "kfuse.h"

static double clock_ms(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static const char *const kinds[] = {"chain", "tchain", "diamond", "ladder", "mchain"};
static const int block_nodes[] = {1, 1, 3, 4, 1};
enum { N_KINDS = 5 };

/* Step i of the mixed chain: one node (sqrt(abs(x)) counts two). */
static kf_value mixed_step(kf_graph *g, kf_value x, int i, kf_value half, kf_value scale) {
  switch (i % 12) {
    case 0:
      return kf_exp(g, x);
    case 1:
      return kf_mul(g, x, scale);
    case 2:
      return kf_tanh(g, x);
    case 3:
      return kf_add(g, x, half);
    case 4:
      return kf_sigmoid(g, x);
    case 5:
      return kf_sin(g, x);
    case 6:
      return kf_silu(g, x);
    case 7:
      return kf_abs(g, x);
    case 8:
      return kf_gelu(g, x);
    case 9:
      return kf_div(g, x, scale);
    case 10:
      return kf_log(g, kf_add(g, x, half));
    default:
      return kf_maximum(g, x, half);
  }
}

/* A graph of n nodes (whole blocks) of kind k on a 64x64 f32 tensor. */
static kf_graph *build(kf_ctx *ctx, int k, int n) {
  kf_graph *g = NULL;
  if (kf_graph_create(ctx, &g) != KF_OK) return NULL;
  int64_t s[2] = {64, 64};
  kf_value x = kf_input(g, "x", KF_F32, 2, s);
  kf_value half = kf_scalar(g, 0.5, KF_F32), scale = kf_scalar(g, 1.0001, KF_F32);
  int ax = -1;
  for (int i = 0; i < n / block_nodes[k]; i++) {
    if (k == 0)
      x = i % 2 ? kf_add(g, x, half) : kf_mul(g, x, scale);
    else if (k == 1)
      x = i % 2 ? kf_tanh(g, x) : kf_exp(g, x);
    else if (k == 2)
      x = kf_mul(g, kf_exp(g, x), kf_neg(g, x));
    else if (k == 4)
      x = mixed_step(g, x, i, half, scale);
    else if (k == 3) {
      kf_value e = kf_exp(g, x);
      x = kf_add(g, kf_div(g, e, kf_sum(g, e, 1, &ax, true)), x);
    }
  }
  kf_set_output(g, x);
  if (kf_graph_status(g) != KF_OK) {
    fprintf(stderr, "bench_scale: %s\n", kf_graph_errmsg(g));
    kf_graph_destroy(g);
    return NULL;
  }
  return g;
}

static double peak_mb(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)ru.ru_maxrss / 1024.0;
}

/* Plans, emits and (n <= compile_max) compiles one graph; prints its line. */
static int run(int k, int n, int compile_max) {
  kf_ctx *ctx = NULL;
  if (kf_ctx_create(&ctx) != KF_OK) return 1;
  kf_graph *g = build(ctx, k, n);
  if (!g) return 1;
  kf_options opt;
  kf_options_init(&opt);
  opt.arch = "sm_90";
  kf_plan *plan = NULL;
  double t0 = clock_ms(CLOCK_MONOTONIC);
  if (kf_plan_create(ctx, g, &opt, &plan) != KF_OK) {
    fprintf(stderr, "bench_scale: %s\n", kf_ctx_errmsg(ctx));
    return 1;
  }
  double plan_ms = clock_ms(CLOCK_MONOTONIC) - t0;
  size_t bytes = 0;
  t0 = clock_ms(CLOCK_MONOTONIC);
  for (int L = 0; L < kf_plan_num_launches(plan); L++) {
    char *src = kf_plan_source(plan, L, "sm_90");
    if (!src) {
      fprintf(stderr, "bench_scale: %s\n", kf_plan_errmsg(plan));
      return 1;
    }
    bytes += strlen(src);
    kf_free(src);
  }
  double emit_ms = clock_ms(CLOCK_MONOTONIC) - t0;
  char comp[64] = "        -         -";
  if (n <= compile_max) {
    double w0 = clock_ms(CLOCK_MONOTONIC), c0 = clock_ms(CLOCK_PROCESS_CPUTIME_ID);
    if (kf_plan_compile(plan) != KF_OK) {
      fprintf(stderr, "bench_scale: %s\n", kf_plan_errmsg(plan));
      return 1;
    }
    snprintf(comp, sizeof comp, "%9.0f %9.0f", clock_ms(CLOCK_MONOTONIC) - w0,
             clock_ms(CLOCK_PROCESS_CPUTIME_ID) - c0);
  }
  printf("%-8s %7d %7d %8d %9.1f %9.1f %10.0f %s %8.0f\n", kinds[k], kf_graph_num_values(g),
         kf_plan_num_kernels(plan), kf_plan_num_launches(plan), plan_ms, emit_ms,
         (double)bytes / 1024.0, comp, peak_mb());
  fflush(stdout);
  kf_plan_destroy(plan);
  kf_graph_destroy(g);
  kf_ctx_destroy(ctx);
  return 0;
}

int main(int argc, char **argv) {
  int compile_max = 10000, kind = -1, sizes[32], n_sizes = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--compile-max") && i + 1 < argc) {
      compile_max = atoi(argv[++i]);
      continue;
    }
    int k = -1;
    for (int j = 0; j < N_KINDS; j++)
      if (!strcmp(argv[i], kinds[j])) k = j;
    if (k >= 0 || !strcmp(argv[i], "all")) {
      kind = k;
    } else if (atoi(argv[i]) > 0 && n_sizes < 32) {
      sizes[n_sizes++] = atoi(argv[i]);
    } else {
      fprintf(stderr,
              "usage: bench_scale [--compile-max N] [chain|tchain|mchain|diamond|ladder|all] [N "
              "...]\n");
      return 2;
    }
  }
  if (!n_sizes) {
    int def[] = {10, 100, 1000, 10000, 100000};
    for (int i = 0; i < 5; i++) sizes[n_sizes++] = def[i];
  }
  setenv("KFUSE_DISK_CACHE", "0", 0); /* cold compiles, unless asked */
  printf("%-8s %7s %7s %8s %9s %9s %10s %9s %9s %8s\n", "kind", "nodes", "kernels", "launches",
         "plan_ms", "emit_ms", "source_KB", "comp_ms", "comp_cpu", "peak_MB");
  for (int k = 0; k < N_KINDS; k++) {
    if (kind >= 0 && k != kind) continue;
    for (int i = 0; i < n_sizes; i++)
      if (run(k, sizes[i] < block_nodes[k] ? block_nodes[k] : sizes[i], compile_max)) return 1;
  }
  return 0;
}
