/* test_gpu_segment.c - long pointwise kernels, whose bodies codegen cuts
 * into out-of-line segment functions (src/codegen/segment.c), compute the
 * same bits as the unfused plan (one kernel per op, nothing segmented) and
 * match the CPU reference within its error bound: an exp/tanh chain (a
 * 1024-node kernel and the rest) and a diamond chain with outputs in the
 * middle (segment calls returning several values). The unfused plans
 * compile one kernel per op: ~2200 NVRTC runs in all. */
#include "gpu_util.h"

/* x -> exp -> tanh -> ... (n nodes) on a 64 x 256 f32 tensor. */
static kf_graph *tchain(int n) {
  kf_graph *g = NULL;
  ck_assert_int_eq(kf_graph_create(G_ctx, &g), KF_OK);
  int64_t s[2] = {64, 256};
  kf_value x = kf_input(g, "x", KF_F32, 2, s);
  for (int i = 0; i < n; i++) x = i % 2 ? kf_tanh(g, x) : kf_exp(g, x);
  kf_set_output(g, x);
  ck_assert_int_eq(kf_graph_status(g), KF_OK);
  return g;
}

/* x = exp(x) * neg(x) + 0.5, scaled to stay finite, repeated; three outputs. */
static kf_graph *diamond(int n) {
  kf_graph *g = NULL;
  ck_assert_int_eq(kf_graph_create(G_ctx, &g), KF_OK);
  int64_t s[1] = {5000};
  kf_value x = kf_input(g, "x", KF_F32, 1, s), mid = x, early = x;
  kf_value k = kf_scalar(g, 0.25, KF_F32);
  for (int i = 0; i < n; i++) {
    x = kf_tanh(g, kf_mul(g, kf_mul(g, kf_exp(g, x), kf_neg(g, x)), k));
    if (i == n / 3) early = x;
    if (i == 2 * n / 3) mid = x;
  }
  kf_set_output(g, x);
  kf_set_output(g, mid);
  kf_set_output(g, early);
  ck_assert_int_eq(kf_graph_status(g), KF_OK);
  return g;
}

/* Fused (segmented) against unfused, bit for bit, and against the bounded
 * reference. */
static void check_same(kf_graph *g, const char *what) {
  run_io io;
  io_setup(g, &io, 18);
  kf_options opt;
  kf_options_init(&opt);
  opt.fusion = false;
  ck_assert_int_eq(check_plan(g, &opt, &io, false, what), 0);
  io_keep_as_reference(&io); /* the unfused outputs */
  kf_options_init(&opt);
  kf_plan *plan = NULL;
  ck_assert_int_eq(kf_plan_create(G_ctx, g, &opt, &plan), KF_OK);
  bool segmented = false;
  for (int L = 0; L < kf_plan_num_launches(plan); L++) {
    char *src = kf_plan_source(plan, L, NULL);
    ck_assert_ptr_nonnull(src);
    segmented |= strstr(src, "\n#define KF_SEGMENTED\n") != NULL;
    kf_free(src);
  }
  kf_plan_destroy(plan);
  ck_assert_msg(segmented, "%s: no launch was segmented", what);
  ck_assert_int_eq(check_plan(g, &opt, &io, true, what), 0);
  for (int j = 0; j < io.n_out; j++) {
    size_t bytes = (size_t)value_numel(g, kf_graph_output(g, j)) * 4;
    ck_assert_msg(!memcmp(io.hout[j].data, io.href[j].data, bytes),
                  "%s output %d: fused and unfused differ", what, j);
  }
  ck_assert(io_bound(g, &io));
  ck_assert_int_eq(io_check(g, &io, what), 0);
  io_free(&io);
}

START_TEST(long_tchain) {
  kf_graph *g = tchain(gpu_small() ? 600 : 1100);
  check_same(g, "tchain");
  kf_graph_destroy(g);
}
END_TEST

START_TEST(long_diamond) {
  kf_graph *g = diamond(gpu_small() ? 120 : 220);
  check_same(g, "diamond");
  kf_graph_destroy(g);
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("gpu_segment");
  TCase *tc = tcase_create("segment");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, long_tchain);
  tcase_add_test(tc, long_diamond);
  suite_add_tcase(s, tc);
  return s;
}
