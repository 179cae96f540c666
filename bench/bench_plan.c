/* bench_plan.c - times the fusion pass on a 10,000-node graph (blocks of
 * residual add + rmsnorm, softmax, a pointwise chain, a column reduction)
 * and prints the median of several runs; the target is under 20 ms. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "fuser/fuse.h"
#include "fuser/plan.h"
#include "kfuse.h"

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* One block: about 40 nodes. */
static kf_value block(kf_graph *g, kf_value x, kf_value w, int i) {
  int64_t s[2] = {1024, 1024};
  char name[32];
  snprintf(name, sizeof name, "r%d", i);
  kf_value r = kf_input(g, name, KF_BF16, 2, s);
  kf_value h = kf_add(g, x, r);
  kf_set_output(g, h);
  kf_value n = kf_rmsnorm(g, h, w, 1e-6);
  kf_value a = kf_softmax(g, n, -1);
  kf_value c = kf_cast(g, a, KF_F32);
  for (int j = 0; j < 12; j++) c = j % 2 ? kf_tanh(g, c) : kf_mul(g, c, kf_scalar(g, 1.5, KF_F32));
  int ax0 = 0;
  kf_set_output(g, kf_sum(g, c, 1, &ax0, false));
  return kf_cast(g, c, KF_BF16);
}

int main(int argc, char **argv) {
  int target = argc > 1 ? atoi(argv[1]) : 10000;
  kf_graph *g = NULL;
  if (kf_graph_create(NULL, &g) != KF_OK) return 1;
  int64_t s[2] = {1024, 1024}, sw[1] = {1024};
  kf_value x = kf_input(g, "x", KF_BF16, 2, s);
  kf_value w = kf_input(g, "w", KF_BF16, 1, sw);
  for (int i = 0; kf_graph_num_values(g) < target; i++) x = block(g, x, w, i);
  kf_set_output(g, x);
  if (kf_graph_status(g) != KF_OK) {
    fprintf(stderr, "bench_plan: %s\n", kf_graph_errmsg(g));
    return 1;
  }
  fuse_options o;
  fuse_options_default(&o);
  enum { RUNS = 9 };
  double t[RUNS];
  int launches = 0, kernels = 0, decisions = 0;
  for (int r = 0; r < RUNS; r++) {
    fuse_plan *p = NULL;
    char err[256];
    double t0 = now_ms();
    if (fuse_plan_build(g, &o, &p, err, sizeof err) != KF_OK) {
      fprintf(stderr, "bench_plan: %s\n", err);
      return 1;
    }
    t[r] = now_ms() - t0;
    launches = p->n_launches;
    kernels = p->n_kernels;
    decisions = p->n_decisions;
    fuse_plan_free(p);
  }
  qsort(t, RUNS, sizeof t[0], cmp_double);
  printf("fuse_plan_build: %d nodes -> %d kernels, %d launches, %d decisions\n",
         kf_graph_num_values(g), kernels, launches, decisions);
  printf("median %.2f ms (min %.2f, max %.2f, %d runs; target < 20 ms)\n", t[RUNS / 2], t[0],
         t[RUNS - 1], RUNS);
  kf_graph_destroy(g);
  return 0;
}
