/* test_fuser_props.c - property tests of the fusion pass over thousands of
 * seeded random graphs: every node in one home kernel, kernels legal and
 * acyclic, launches in dependency order, no overlapping live workspace. */
#include "check_main.h"
#include "fuser/fuse.h"
#include "fuser/render.h"
#include "fuser_util.h"

static void check_seed(uint64_t seed, int n_ops, bool fusion, bool horizontal, int max_nodes) {
  kf_graph *g = fz_random_graph(seed, n_ops);
  if (!g) return; /* a random op did not fit: not this test's business */
  fuse_options o;
  fuse_options_default(&o);
  o.fusion = fusion;
  o.horizontal = horizontal;
  if (max_nodes) o.max_nodes = o.max_pw_nodes = max_nodes;
  fuse_plan *p = fz_plan_opts(g, &o);
  ck_assert_msg(p != NULL, "seed %llu: planning failed", (unsigned long long)seed);
  char why[512] = "";
  bool ok = fz_check_plan(g, p, why, sizeof why);
  if (!ok) {
    char *dump = kf_graph_dump(g);
    char *text = fuse_plan_text(p);
    fprintf(stderr, "seed %llu:\n%s\n%s\n", (unsigned long long)seed, dump, text);
    kf_free(dump);
    free(text);
  }
  ck_assert_msg(ok, "seed %llu (fusion %d, horizontal %d): %s", (unsigned long long)seed, fusion,
                horizontal, why);
  char *t = fuse_plan_text(p), *j = fuse_plan_json(p), *d = fuse_plan_dot(p);
  ck_assert(t && j && d);
  ck_assert(j[0] == '{');
  free(t);
  free(j);
  free(d);
  if (!fusion) { /* every live op its own kernel */
    for (int32_t k = 0; k < p->n_kernels; k++) ck_assert_int_eq(p->kernels[k].n_nodes, 1);
  }
  if (!horizontal) ck_assert_int_eq(p->n_launches, p->n_kernels);
  fuse_plan_free(p);
  kf_graph_destroy(g);
}

START_TEST(random_graphs_fused) {
  for (uint64_t seed = 0; seed < 2500; seed++)
    check_seed(seed, 4 + (int)(seed % 30), true, true, 0);
}
END_TEST

START_TEST(random_graphs_small_kernels) {
  /* A tight size limit forces splits in the middle of chains and rows. */
  for (uint64_t seed = 5000; seed < 5800; seed++) check_seed(seed, 20, true, true, 3);
}
END_TEST

START_TEST(random_graphs_switches) {
  for (uint64_t seed = 9000; seed < 9400; seed++) {
    check_seed(seed, 12, false, true, 0);
    check_seed(seed, 12, true, false, 0);
  }
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("fuser_props");
  TCase *tc = tcase_create("random");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, random_graphs_fused);
  tcase_add_test(tc, random_graphs_small_kernels);
  tcase_add_test(tc, random_graphs_switches);
  suite_add_tcase(s, tc);
  return s;
}
