/* test_reference_parallel.c - the reference interpreter's nodes split over
 * threads (src/ir/ref_parallel.c) give the same bits as one thread: random
 * graphs of the fuser suites' generator (pointwise chains with
 * broadcasting, reductions over the last, the first and every axis,
 * softmax, norms, transpose, reshape, casts) and hand graphs for what it
 * does not make (batched matmul with broadcast batches, where, clamp and
 * sums on integers, broadcast_to, reductions over a middle axis and over
 * two axes, a 3-D transpose). Each graph runs on one thread, then on five
 * with parts of one unit of work (KFUSE_REF_GRAIN=1), so that every node
 * with more than one unit is split, often unevenly. */
#include "fuser_util.h"
#include "ir/dtype.h"
#include "ref_util.h"

/* A zeroed host tensor of value v of g (its dtype and shape). */
static void host_like(kf_graph *g, kf_value v, kf_host_tensor *t) {
  memset(t, 0, sizeof *t);
  t->dtype = kf_value_dtype(g, v);
  t->rank = kf_value_rank(g, v);
  memcpy(t->shape, kf_value_shape(g, v), sizeof t->shape);
  int64_t n = ref_numel(t);
  t->data = calloc((size_t)(n > 0 ? n : 1), kf_dtype_size(t->dtype));
  ck_assert_ptr_nonnull(t->data);
}

/* Seeded inputs for every input of g: floats in [-4, 4) with a few
 * specials, integers in [-1000, 1000), bools. */
static void fill_inputs(kf_graph *g, kf_host_tensor *ins, uint64_t seed) {
  uint64_t s = seed * 6364136223846793005ull + 1442695040888963407ull;
  for (int i = 0; i < kf_graph_num_inputs(g); i++) {
    kf_host_tensor *t = &ins[i];
    host_like(g, kf_graph_input(g, i), t);
    for (int64_t k = 0; k < ref_numel(t); k++) {
      s = s * 6364136223846793005ull + 1442695040888963407ull;
      double u = (double)(s >> 11) / 9007199254740992.0; /* [0, 1) */
      double x = ir_dtype_is_float(t->dtype) ? 8 * u - 4 : floor(2000 * u) - 1000;
      if (ir_dtype_is_float(t->dtype) && (s >> 5) % 97 == 0) x = (s >> 9) % 2 ? NAN : INFINITY;
      ref_set(t, k, x);
    }
  }
}

static void alloc_outputs(kf_graph *g, kf_host_tensor *outs) {
  for (int j = 0; j < kf_graph_num_outputs(g); j++) host_like(g, kf_graph_output(g, j), &outs[j]);
}

static void free_tensors(kf_host_tensor *t, int n) {
  for (int i = 0; i < n; i++) free(t[i].data);
}

/* g's outputs on one thread and on five: how many outputs differ in any
 * byte. */
static int differs(kf_graph *g, uint64_t seed, const char *what) {
  int n_in = kf_graph_num_inputs(g), n_out = kf_graph_num_outputs(g);
  ck_assert(n_in <= REF_MAX_IO && n_out <= REF_MAX_IO);
  kf_host_tensor ins[REF_MAX_IO], one[REF_MAX_IO], five[REF_MAX_IO];
  fill_inputs(g, ins, seed);
  alloc_outputs(g, one);
  alloc_outputs(g, five);
  kt_setenv("KFUSE_REF_THREADS", "1", 1);
  kt_unsetenv("KFUSE_REF_GRAIN");
  ck_assert_msg(kf_graph_run_reference(g, ins, n_in, one, n_out) == KF_OK, "%s: %s", what,
                kf_graph_errmsg(g));
  kt_setenv("KFUSE_REF_THREADS", "5", 1);
  kt_setenv("KFUSE_REF_GRAIN", "1", 1);
  ck_assert_msg(kf_graph_run_reference(g, ins, n_in, five, n_out) == KF_OK, "%s: %s", what,
                kf_graph_errmsg(g));
  kt_unsetenv("KFUSE_REF_THREADS");
  kt_unsetenv("KFUSE_REF_GRAIN");
  int bad = 0;
  for (int j = 0; j < n_out; j++) {
    size_t bytes = (size_t)ref_numel(&one[j]) * kf_dtype_size(one[j].dtype);
    if (memcmp(one[j].data, five[j].data, bytes)) {
      if (bad == 0) printf("%s: output %d differs between 1 and 5 threads\n", what, j);
      bad++;
    }
  }
  free_tensors(ins, n_in);
  free_tensors(one, n_out);
  free_tensors(five, n_out);
  return bad;
}

START_TEST(random_graphs_same_bits) {
  int bad = 0, ran = 0;
  for (uint64_t seed = 1; seed <= 400; seed++) {
    kf_graph *g = fz_random_graph(seed, 12);
    if (!g) continue;
    char what[48];
    snprintf(what, sizeof what, "random graph %llu", (unsigned long long)seed);
    bad += differs(g, seed, what);
    ran++;
    kf_graph_destroy(g);
  }
  ck_assert_int_gt(ran, 300);
  ck_assert_int_eq(bad, 0);
}
END_TEST

START_TEST(batched_matmul_same_bits) {
  kf_value x = IN("x", KF_F32, 2, 3, 5, 4), y = IN("y", KF_F32, 3, 4, 6);
  kf_value xi = IN("xi", KF_I32, 7, 3), yi = IN("yi", KF_I32, 3, 2);
  ref_out(kf_matmul(G, x, y)); /* y's batch broadcast over x's first axis */
  ref_out(kf_matmul(G, xi, yi));
  ck_assert_int_eq(differs(G, 11, "matmul"), 0);
}
END_TEST

START_TEST(where_clamp_cast_same_bits) {
  kf_value c = IN("c", KF_BOOL, 4, 1), a = IN("a", KF_F32, 4, 7), b = IN("b", KF_F32, 7);
  kf_value i = IN("i", KF_I32, 6, 5);
  ref_out(kf_where(G, c, a, b));
  ref_out(kf_clamp(G, i, -100.5, 250));
  ref_out(kf_cast(G, a, KF_I32));
  ref_out(kf_cast(G, i, KF_BF16));
  ck_assert_int_eq(differs(G, 12, "where, clamp, cast"), 0);
}
END_TEST

START_TEST(reductions_same_bits) {
  kf_value x = IN("x", KF_F32, 4, 5, 6), i = IN("i", KF_I64, 5, 9);
  int mid[1] = {1}, outer[2] = {0, 2}, all[3] = {0, 1, 2}, last[1] = {1};
  ref_out(kf_sum(G, x, 1, mid, false));   /* parts over axis 0 */
  ref_out(kf_max(G, x, 2, outer, true));  /* parts over axis 1 */
  ref_out(kf_mean(G, x, 3, all, false));  /* one part */
  ref_out(kf_sum(G, i, 1, last, true));   /* integers, wrapping */
  ck_assert_int_eq(differs(G, 13, "reductions"), 0);
}
END_TEST

START_TEST(layout_same_bits) {
  kf_value x = IN("x", KF_F64, 3, 4, 5), r = IN("r", KF_F32, 1, 7);
  int perm[3] = {2, 0, 1};
  int64_t to[2] = {6, 7}, flat[1] = {60};
  ref_out(kf_transpose(G, x, perm));
  ref_out(kf_broadcast_to(G, r, 2, to));
  ref_out(kf_reshape(G, x, 1, flat));
  ck_assert_int_eq(differs(G, 14, "layout"), 0);
}
END_TEST

/* A node of one unit of work per part on one thread: the default grain
 * keeps a small graph on the calling thread, and a bad setting of either
 * variable falls back to the default. */
START_TEST(bad_settings_ignored) {
  kf_value x = IN("x", KF_F32, 3, 8);
  ref_out(kf_softmax(G, x, -1));
  kt_setenv("KFUSE_REF_THREADS", "lots", 1);
  kt_setenv("KFUSE_REF_GRAIN", "-3", 1);
  kf_host_tensor ins[1], outs[1];
  fill_inputs(G, ins, 15);
  alloc_outputs(G, outs);
  ck_assert_int_eq(kf_graph_run_reference(G, ins, 1, outs, 1), KF_OK);
  kt_unsetenv("KFUSE_REF_THREADS");
  kt_unsetenv("KFUSE_REF_GRAIN");
  free_tensors(ins, 1);
  free_tensors(outs, 1);
  ck_assert_int_eq(differs(G, 15, "softmax"), 0);
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("reference_parallel");
  TCase *tc = ref_tcase("parallel");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, random_graphs_same_bits);
  tcase_add_test(tc, batched_matmul_same_bits);
  tcase_add_test(tc, where_clamp_cast_same_bits);
  tcase_add_test(tc, reductions_same_bits);
  tcase_add_test(tc, layout_same_bits);
  tcase_add_test(tc, bad_settings_ignored);
  suite_add_tcase(s, tc);
  return s;
}
