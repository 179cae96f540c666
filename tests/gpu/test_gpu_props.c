/* test_gpu_props.c - the property families of props_gen.h on the GPU: every
 * random and edge graph compiled for the device, run on seeded random
 * inputs with poisoned outputs (so every element must be written), each
 * output compared with the CPU reference within the computed error bound
 * (error_bound.h; the fixed per-dtype tolerances where an op has no rule).
 * A failure prints the seed (or edge index) and the graph as YAML.
 * KFUSE_PROPS_N (300; KFUSE_TEST_SMALL=1: 40), KFUSE_PROPS_SEED (1) and
 * KFUSE_PROPS_EDGE=single as in tests/test_props.c; KFUSE_PROPS_CHAINS the
 * layout-chain family's graphs (48; small: 12). Skips without a GPU. */
#include "gpu_util.h"
#include "props_gen.h"

static int env_int(const char *name, int dflt) {
  const char *s = getenv(name);
  return s && *s ? atoi(s) : dflt;
}

static void report(const char *what, long long id, kf_graph *g, const char *err) {
  char *yaml = g ? kf_graph_to_yaml(g) : NULL;
  printf("FAIL %s %lld: %.2000s\n%s\n", what, id, err, yaml ? yaml : "(no graph)");
  kf_free(yaml);
}

/* Compile, reference, poisoned run, comparison; false with err. */
static bool run_one(kf_graph *g, uint64_t seed, const char *what, char *err, size_t size) {
  kf_options opt;
  kf_options_init(&opt);
  kf_plan *plan = NULL;
  kf_status st = kf_compile(G_ctx, g, &opt, &plan);
  if (st != KF_OK) {
    snprintf(err, size, "compile: %s: %s", kf_status_name(st), kf_ctx_errmsg(G_ctx));
    return false;
  }
  run_io io;
  io_setup(g, &io, seed);
  io_bound(g, &io);
  bool ok = false;
  st = kf_graph_run_reference(g, io.hin, io.n_in, io.href, io.n_out);
  if (st != KF_OK) {
    snprintf(err, size, "reference: %s", kf_graph_errmsg(g));
  } else {
    io_poison(&io);
    st = kf_plan_run(plan, io.din, io.n_in, io.dout, io.n_out, NULL);
    if (st != KF_OK) {
      snprintf(err, size, "run: %s", kf_plan_errmsg(plan));
    } else {
      io_fetch(&io);
      int bad = io_check(g, &io, what);
      ok = bad == 0;
      if (!ok) snprintf(err, size, "%d outputs differ from the reference (MISMATCH above)", bad);
    }
  }
  io_free(&io);
  kf_plan_destroy(plan);
  return ok;
}

START_TEST(edge_family) {
  const char *e = getenv("KFUSE_PROPS_EDGE");
  bool single = e && !strcmp(e, "single");
  int n = pg_edge_count(single), bad = 0;
  for (int i = 0; i < n; i++) {
    kf_graph *g = NULL;
    char err[4096] = "", what[32];
    snprintf(what, sizeof what, "edge %d", i);
    kf_status st = pg_edge(G_ctx, i, single, &g);
    bool ok = st == KF_OK;
    if (!ok) snprintf(err, sizeof err, "builder: %s", g ? kf_graph_errmsg(g) : "");
    if (ok) ok = run_one(g, (uint64_t)i + 1, what, err, sizeof err);
    if (!ok) report("edge", i, g, err), bad++;
    kf_graph_destroy(g);
  }
  printf("GPU edge family: %d of %d graphs match the reference\n", n - bad, n);
  print_worst("edge");
  ck_assert_msg(bad == 0, "%d of %d edge graphs failed (see FAIL lines)", bad, n);
}
END_TEST

START_TEST(random_family) {
  int n = env_int("KFUSE_PROPS_N", gpu_small() ? 40 : 300);
  int first = env_int("KFUSE_PROPS_SEED", 1), bad = 0;
  for (int i = 0; i < n; i++) {
    uint64_t seed = (uint64_t)(first + i);
    kf_graph *g = NULL;
    char err[4096] = "", what[32];
    snprintf(what, sizeof what, "seed %llu", (unsigned long long)seed);
    kf_status st = pg_random(G_ctx, seed, &g);
    bool ok = st == KF_OK;
    if (!ok) snprintf(err, sizeof err, "builder: %s", g ? kf_graph_errmsg(g) : "");
    if (ok) ok = run_one(g, seed, what, err, sizeof err);
    if (!ok) report("random seed", (long long)seed, g, err), bad++;
    kf_graph_destroy(g);
  }
  printf("GPU random family: %d of %d graphs match the reference (seeds %d..%d)\n", n - bad, n,
         first, first + n - 1);
  print_worst("random");
  ck_assert_msg(bad == 0, "%d of %d random graphs failed (see FAIL lines)", bad, n);
}
END_TEST

/* Chained reshapes and transposes: their index locals (ixN) must address
 * the same elements as the reference. */
START_TEST(chain_family) {
  int n = env_int("KFUSE_PROPS_CHAINS", gpu_small() ? 12 : 48);
  int first = env_int("KFUSE_PROPS_SEED", 1), bad = 0;
  for (int i = 0; i < n; i++) {
    uint64_t seed = (uint64_t)(first + i);
    kf_graph *g = NULL;
    char err[4096] = "", what[32];
    snprintf(what, sizeof what, "chain %llu", (unsigned long long)seed);
    kf_status st = pg_layout_chain(G_ctx, seed, &g);
    bool ok = st == KF_OK;
    if (!ok) snprintf(err, sizeof err, "builder: %s", g ? kf_graph_errmsg(g) : "");
    if (ok) ok = run_one(g, seed, what, err, sizeof err);
    if (!ok) report("chain seed", (long long)seed, g, err), bad++;
    kf_graph_destroy(g);
  }
  printf("GPU layout-chain family: %d of %d graphs match the reference\n", n - bad, n);
  print_worst("chain");
  ck_assert_msg(bad == 0, "%d of %d layout-chain graphs failed (see FAIL lines)", bad, n);
}
END_TEST

/* Operands broadcast over trailing axes, loaded once per aligned run of S
 * lanes (VC_SUB) or once per group: every lane must read its own row's
 * value, in the vector path and in the tail (3612 = 451 x 8 + 4 elements). */
START_TEST(broadcast_repeats) {
  static const struct {
    kf_dtype dt;
    int rank;
    int64_t x[3], c[3];
  } cases[] = {{KF_F16, 2, {301, 12}, {301, 1}},   {KF_F16, 2, {301, 6}, {301, 1}},
               {KF_BF16, 2, {301, 20}, {301, 1}},  {KF_F32, 3, {41, 6, 2}, {41, 1, 1}},
               {KF_F32, 3, {41, 3, 2}, {1, 3, 1}}, {KF_F16, 2, {301, 7}, {301, 1}}};
  int bad = 0, n = (int)(sizeof cases / sizeof cases[0]);
  for (int i = 0; i < 2 * n; i++) {
    /* the second round with two groups per thread (templates/pointwise_groups.cu) */
    if (i == n) kt_setenv("KFUSE_PW_GROUPS", "2", 1);
    kf_graph *g = NULL;
    ck_assert_int_eq(kf_graph_create(G_ctx, &g), KF_OK);
    kf_value x = kf_input(g, "x", cases[i % n].dt, cases[i % n].rank, cases[i % n].x);
    kf_value c = kf_input(g, "c", cases[i % n].dt, cases[i % n].rank, cases[i % n].c);
    kf_set_output(g, kf_add(g, kf_mul(g, x, kf_sigmoid(g, c)), c));
    char err[4096] = "", what[32];
    snprintf(what, sizeof what, "repeat case %d", i);
    if (!run_one(g, (uint64_t)(100 + i), what, err, sizeof err))
      report("repeat case", i, g, err), bad++;
    kf_graph_destroy(g);
  }
  kt_unsetenv("KFUSE_PW_GROUPS");
  printf("GPU broadcast repeats: %d of %d graphs match the reference (1 and 2 groups)\n",
         2 * n - bad, 2 * n);
  ck_assert_msg(bad == 0, "%d of %d broadcast graphs failed (see FAIL lines)", bad, n);
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("gpu_props");
  TCase *tc = tcase_create("families");
  tcase_set_timeout(tc, 3600);
  tcase_add_test(tc, edge_family);
  tcase_add_test(tc, random_family);
  tcase_add_test(tc, chain_family);
  tcase_add_test(tc, broadcast_repeats);
  suite_add_tcase(s, tc);
  return s;
}
