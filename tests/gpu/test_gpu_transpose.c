/* test_gpu_transpose.c - tiled transposes on a real GPU: every graph of
 * tests/transpose_graphs.h (every permutation of ranks 2-4, f32/f16/bf16,
 * odd and even extents), then larger ones (the issue-23 graph, attention's
 * [B, S, H, D] -> [B, H, S, D], [0, 2, 1] of rank 3 with odd extents over
 * many tiles; permutations keeping a short trailing run, fam26's among
 * them), each run once into outputs poisoned with NaN and compared
 * with the CPU reference within its per-element error bound: every output
 * element must be written and right. Each graph's plan must be tiled
 * exactly when the permutation moves the innermost axis (or keeps a short
 * run and moves the axis above it). Skips (exit 77)
 * without a GPU. */
#include "../transpose_graphs.h"
#include "gpu_util.h"
#include "planted.h"

/* Runs g against the reference; the number of bad outputs. */
static int run_case(kf_graph *g, bool tiled, const char *what) {
  ck_assert_msg(kf_graph_status(g) == KF_OK, "%s: %s", what, kf_graph_errmsg(g));
  kf_options opt;
  kf_options_init(&opt);
  kf_plan *plan = NULL;
  ck_assert_msg(kf_compile(G_ctx, g, &opt, &plan) == KF_OK, "%s: %s", what, kf_ctx_errmsg(G_ctx));
  ck_assert_msg(plan_has(plan, "tiled transpose:") == tiled, "%s: tiled should be %d", what,
                (int)tiled);
  kf_plan_destroy(plan);
  run_io io;
  io_setup(g, &io, 2323);
  ck_assert_msg(io_bound(g, &io), "%s: no error bound", what);
  int bad = check_plan(g, &opt, &io, true, what);
  io_free(&io);
  return bad;
}

START_TEST(every_permutation) {
  int bad = 0, n = 0;
  for (int rank = 2; rank <= 4; rank++)
    for (int q = 0; q < tg_perms(rank); q++) {
      int perm[4];
      tg_perm(rank, q, perm);
      for (int e = 0; e < 2; e++)
        for (int d = 0; d < 3; d++) {
          const int64_t *out = e ? TG_EVEN[rank - 2] : TG_ODD[rank - 2];
          char what[128];
          tg_name(rank, perm, out, TG_DTYPES[d], what, sizeof what);
          kf_graph *g = tg_graph(G_ctx, rank, perm, out, TG_DTYPES[d]);
          ck_assert_ptr_nonnull(g);
          bad += run_case(g, tg_moves_inner(rank, perm), what) != 0;
          n++;
          kf_graph_destroy(g);
        }
    }
  print_worst("permutations");
  printf("permutations: %d graphs, %d mismatch\n", n, bad);
  ck_assert_int_eq(bad, 0);
}
END_TEST

/* Kept short runs (TG_RUNS): the run inside each tile element. */
START_TEST(kept_runs) {
  int bad = 0;
  for (int i = 0; i < TG_N_RUNS; i++) {
    const tg_run_case *r = &TG_RUNS[i];
    char what[128];
    tg_name(r->rank, r->perm, r->out, r->dt, what, sizeof what);
    kf_graph *g = tg_graph(G_ctx, r->rank, r->perm, r->out, r->dt);
    ck_assert_ptr_nonnull(g);
    int b = run_case(g, r->tiled, what);
    printf("run %s: %s\n", what, b ? "MISMATCH" : "ok within the error bound");
    bad += b != 0;
    kf_graph_destroy(g);
  }
  print_worst("kept runs");
  ck_assert_int_eq(bad, 0);
}
END_TEST

/* Larger shapes: many tiles, vector and scalar paths, 2-byte types with 64-wide tiles. */
START_TEST(large_shapes) {
  bool small = gpu_small();
  struct {
    int rank;
    int perm[4];
    int64_t out[4];
    kf_dtype dt;
    bool tiled;
  } cases[] = {
      {2, {1, 0}, {4096, 2048}, KF_F32, true},              /* the issue-23 graph: x [2048, 4096] */
      {4, {0, 2, 1, 3}, {2, 16, 256, 128}, KF_BF16, false}, /* [B, S, H, D] -> [B, H, S, D] */
      {4, {0, 2, 3, 1}, {2, 16, 128, 257}, KF_BF16, true},  /* [B, S, H, D] -> [B, H, D, S] */
      {3, {0, 2, 1}, {5, 1001, 777}, KF_F16, true},
      {3, {0, 2, 1}, {4, 1024, 1000}, KF_F16, true},
      {3, {2, 1, 0}, {999, 3, 1003}, KF_F32, true},
      {4, {1, 2, 0, 3}, {128, 512, 256, 2}, KF_BF16, true}, /* fam26: a run of 2 kept */
      {4, {1, 2, 0, 3}, {100, 333, 77, 2}, KF_F32, true},   /* 8-byte elements, partial tiles */
      {4, {1, 0, 2, 3}, {300, 1000, 2, 2}, KF_F16, true},   /* two kept axes: 4-value elements */
  };
  int bad = 0;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    int64_t out[4];
    memcpy(out, cases[i].out, sizeof out);
    if (small) out[0] = out[0] > 8 ? 8 : out[0];
    char what[128];
    tg_name(cases[i].rank, cases[i].perm, out, cases[i].dt, what, sizeof what);
    kf_graph *g = tg_graph(G_ctx, cases[i].rank, cases[i].perm, out, cases[i].dt);
    ck_assert_ptr_nonnull(g);
    int b = run_case(g, cases[i].tiled, what);
    printf("large %s: %s\n", what, b ? "MISMATCH" : "ok within the error bound");
    bad += b != 0;
    kf_graph_destroy(g);
  }
  print_worst("large");
  ck_assert_int_eq(bad, 0);
}
END_TEST

/* A tiled part in a horizontal launch with a row part of 512-thread blocks
 * (named barriers of 256 threads). */
START_TEST(horizontal_with_row) {
  static const char yaml[] =
      "kfuse: 1\ninputs:\n  x: {dtype: f32, shape: [40, 72]}\n"
      "  z: {dtype: f32, shape: [4, 8192]}\nnodes:\n"
      "  - {name: t, op: transpose, args: [x], perm: [1, 0]}\n"
      "  - {name: r, op: relu, args: [t]}\n"
      "  - {name: s, op: softmax, args: [z], axis: -1}\noutputs: [r, s]\n";
  kf_graph *g = NULL;
  ck_assert_msg(kf_graph_load_yaml_string(G_ctx, yaml, strlen(yaml), NULL, &g) == KF_OK, "%s",
                kf_ctx_errmsg(G_ctx));
  ck_assert_int_eq(run_case(g, true, "horizontal with a row part"), 0);
  kf_graph_destroy(g);
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("gpu_transpose");
  TCase *tc = tcase_create("gpu");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, every_permutation);
  tcase_add_test(tc, kept_runs);
  tcase_add_test(tc, large_shapes);
  tcase_add_test(tc, horizontal_with_row);
  suite_add_tcase(s, tc);
  return s;
}
