/* basic.c - the first kfuse program: build a small graph through the public
 * API, run it on the CPU reference interpreter, then ask the fuser for a
 * plan. Build: part of the project (build/example_basic). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kfuse.h"

#define ROWS 4
#define COLS 8

/* A fixed-seed generator (xorshift64*), so every run prints the same numbers
 * on every machine. Returns a value in [-1, 1). */
static double next_uniform(uint64_t *state) {
  *state ^= *state >> 12;
  *state ^= *state << 25;
  *state ^= *state >> 27;
  uint64_t r = *state * UINT64_C(2685821657736338717);
  return (double)(r >> 11) * 0x1p-52 - 1.0;
}

static void fill(float *data, int n, uint64_t *state) {
  for (int i = 0; i < n; i++) data[i] = (float)next_uniform(state);
}

/* x: f32[4,8], b: f32[8], w: f32[8];  h = gelu(x + b);  y = rmsnorm(h, w). */
static kf_status build(kf_graph *g) {
  const int64_t xs[2] = {ROWS, COLS}, vs[1] = {COLS};
  kf_value x = kf_input(g, "x", KF_F32, 2, xs);
  kf_value b = kf_input(g, "b", KF_F32, 1, vs);
  kf_value w = kf_input(g, "w", KF_F32, 1, vs);
  kf_value h = kf_gelu(g, kf_add(g, x, b));
  kf_set_name(g, h, "h");
  kf_value y = kf_rmsnorm(g, h, w, 1e-6);
  kf_set_name(g, y, "y");
  kf_set_output(g, y);
  return kf_graph_status(g); /* builder errors are sticky: one check suffices */
}

static kf_status run_reference(kf_graph *g, float *out) {
  static float x[ROWS * COLS], b[COLS], w[COLS];
  uint64_t seed = UINT64_C(0x6b667573652d3031); /* "kfuse-01" */
  fill(x, ROWS * COLS, &seed);
  fill(b, COLS, &seed);
  fill(w, COLS, &seed);
  kf_host_tensor in[3] = {
      {x, KF_F32, 2, {ROWS, COLS}},
      {b, KF_F32, 1, {COLS}},
      {w, KF_F32, 1, {COLS}},
  };
  kf_host_tensor y = {out, KF_F32, 2, {ROWS, COLS}};
  return kf_graph_run_reference(g, in, 3, &y, 1);
}

static void print_results(const float *y) {
  printf("y[0][0..3] = %.7f %.7f %.7f %.7f\n", y[0], y[1], y[2], y[3]);
  printf("y[3][4..7] = %.7f %.7f %.7f %.7f\n", y[28], y[29], y[30], y[31]);
  /* A checksum that changes when any bit of any output changes. */
  uint64_t fnv = UINT64_C(1469598103934665603);
  double sum = 0.0;
  for (int i = 0; i < ROWS * COLS; i++) {
    uint32_t bits;
    memcpy(&bits, &y[i], sizeof bits);
    for (int k = 0; k < 4; k++) fnv = (fnv ^ ((bits >> (8 * k)) & 0xFFu)) * UINT64_C(1099511628211);
    sum += y[i];
  }
  printf("sum(y) = %.9g   fnv1a64(y) = %016" PRIx64 "\n", sum, fnv);
}

/* The fuser is young: a failure to plan is reported, not fatal. */
static void show_plan(kf_ctx *ctx, const kf_graph *g) {
  kf_plan *plan = NULL;
  kf_status st = kf_plan_create(ctx, g, NULL, &plan);
  if (st != KF_OK) {
    printf("no plan: %s (%s)\n", kf_status_str(st), kf_ctx_errmsg(ctx));
    return;
  }
  char *text = kf_plan_describe(plan, KF_FORMAT_TEXT);
  if (text)
    printf("%s%s", text, text[0] && text[strlen(text) - 1] == '\n' ? "" : "\n");
  else
    printf("the plan has no text form yet (%d launches, %d kernels)\n", kf_plan_num_launches(plan),
           kf_plan_num_kernels(plan));
  kf_free(text);
  kf_plan_destroy(plan);
}

int main(void) {
  printf("kfuse %s: basic example\n", kf_version());
  kf_ctx *ctx = NULL;
  kf_graph *g = NULL;
  int rc = 1;
  if (kf_ctx_create(&ctx) != KF_OK || kf_graph_create(ctx, &g) != KF_OK) {
    fprintf(stderr, "basic: cannot create a context or graph\n");
    goto done;
  }
  if (build(g) != KF_OK) {
    fprintf(stderr, "basic: building failed: %s\n", kf_graph_errmsg(g));
    goto done;
  }
  char *dump = kf_graph_dump(g);
  printf("\n-- graph --\n%s", dump ? dump : "(dump failed)\n");
  kf_free(dump);

  float y[ROWS * COLS];
  kf_status st = run_reference(g, y);
  if (st != KF_OK) {
    fprintf(stderr, "basic: reference run failed: %s: %s\n", kf_status_str(st), kf_graph_errmsg(g));
    goto done;
  }
  printf("\n-- CPU reference --\n");
  print_results(y);
  printf("\n-- plan --\n");
  show_plan(ctx, g);
  rc = 0;
done:
  kf_graph_destroy(g);
  kf_ctx_destroy(ctx);
  return rc;
}
