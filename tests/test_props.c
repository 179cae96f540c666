/* test_props.c - every valid graph plans, emits and compiles: the random and
 * edge families of props_gen.h go through kf_plan_create and
 * kf_plan_compile (NVRTC for sm_90, through the memory and disk caches of
 * a fresh cache folder) and their CPU reference runs on random inputs. A
 * failure prints its seed (or edge index) and the graph as YAML.
 * KFUSE_PROPS_N=N sets the random graphs (120), KFUSE_PROPS_SEED the first
 * seed (1), KFUSE_PROPS_EDGE=single one graph per edge case (else one per
 * shape, every case an output of it), KFUSE_PROPS_CHAINS the graphs of
 * the layout-chain family (24). CK_RUN_CASE=edge, =random or =chain runs
 * one family; KFUSE_PROPS_PRINT=1 prints every random graph. */
#include <check.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_main.h"
#include "kfuse.h"
#include "props_gen.h"

static int env_int(const char *name, int dflt) {
  const char *s = getenv(name);
  return s && *s ? atoi(s) : dflt;
}

/* The reference on random inputs; false with the message in err. */
static bool run_reference(kf_graph *g, uint64_t seed, char *err, size_t size) {
  int ni = kf_graph_num_inputs(g), no = kf_graph_num_outputs(g);
  kf_host_tensor *t = calloc((size_t)(ni + no) + 1, sizeof *t);
  bool ok = t != NULL;
  uint64_t s = seed * 2654435761u + 88172645463325252ull;
  for (int k = 0; ok && k < ni + no; k++) {
    kf_value v = k < ni ? kf_graph_input(g, k) : kf_graph_output(g, k - ni);
    int64_t n = kf_value_numel(g, v);
    t[k].dtype = kf_value_dtype(g, v);
    t[k].rank = kf_value_rank(g, v);
    memcpy(t[k].shape, kf_value_shape(g, v), sizeof t[k].shape);
    t[k].data = malloc((size_t)n * kf_dtype_size(t[k].dtype) + 1);
    ok = t[k].data != NULL;
    if (ok && k < ni) fill_random(t[k].data, t[k].dtype, n, &s);
  }
  kf_status st = ok ? kf_graph_run_reference(g, t, ni, t + ni, no) : KF_ERR_OUT_OF_MEMORY;
  if (st != KF_OK) snprintf(err, size, "reference: %s: %s", kf_status_name(st), kf_graph_errmsg(g));
  for (int k = 0; t && k < ni + no; k++) free(t[k].data);
  free(t);
  return st == KF_OK;
}

/* Plan, emit and compile for sm_90, then the reference; false with err. */
static bool check_graph(kf_ctx *ctx, kf_graph *g, uint64_t seed, char *err, size_t size) {
  kf_options opt;
  kf_options_init(&opt);
  opt.arch = "sm_90";
  kf_plan *plan = NULL;
  kf_status st = kf_plan_create(ctx, g, &opt, &plan);
  if (st == KF_OK) st = kf_plan_compile(plan);
  if (st != KF_OK) {
    snprintf(err, size, "%s: %s", kf_status_name(st),
             plan && kf_plan_errmsg(plan)[0] ? kf_plan_errmsg(plan) : kf_ctx_errmsg(ctx));
    kf_plan_destroy(plan);
    return false;
  }
  kf_plan_destroy(plan);
  return run_reference(g, seed, err, size);
}

static void report(const char *what, long long id, kf_graph *g, const char *err) {
  char *yaml = g ? kf_graph_to_yaml(g) : NULL;
  printf("FAIL %s %lld: %.2000s\n%s\n", what, id, err, yaml ? yaml : "(no graph)");
  kf_free(yaml);
}

static char G_dir[64];

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
  (void)sb, (void)flag, (void)ftw;
  return remove(path);
}

/* A fresh cache folder, so that every graph compiles and the run touches
 * nothing outside. */
static kf_ctx *hermetic_ctx(void) {
  snprintf(G_dir, sizeof G_dir, "/tmp/kfuse-props-XXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(G_dir));
  setenv("KFUSE_CACHE_DIR", G_dir, 1);
  kf_ctx *ctx = NULL;
  ck_assert_int_eq(kf_ctx_create(&ctx), KF_OK);
  kf_ctx_set_log(ctx, NULL, NULL);
  return ctx;
}

static void hermetic_done(kf_ctx *ctx) {
  kf_ctx_destroy(ctx);
  nftw(G_dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
}

START_TEST(random_family) {
  kf_ctx *ctx = hermetic_ctx();
  int n = env_int("KFUSE_PROPS_N", 120), first = env_int("KFUSE_PROPS_SEED", 1), bad = 0;
  for (int i = 0; i < n; i++) {
    uint64_t seed = (uint64_t)(first + i);
    kf_graph *g = NULL;
    char err[4096] = "";
    kf_status st = pg_random(ctx, seed, &g);
    bool ok = st == KF_OK;
    if (!ok)
      snprintf(err, sizeof err, "builder: %s: %s", kf_status_name(st), g ? kf_graph_errmsg(g) : "");
    if (ok) ok = check_graph(ctx, g, seed, err, sizeof err);
    if (!ok) report("random seed", (long long)seed, g, err), bad++;
    if (ok && getenv("KFUSE_PROPS_PRINT")) report("(passed) random seed", (long long)seed, g, "");
    kf_graph_destroy(g);
  }
  printf("random family: %d of %d graphs plan, compile and run the reference (seeds %d..%d)\n",
         n - bad, n, first, first + n - 1);
  hermetic_done(ctx);
  ck_assert_msg(bad == 0, "%d of %d random graphs failed (see FAIL lines)", bad, n);
}
END_TEST

START_TEST(edge_family) {
  kf_ctx *ctx = hermetic_ctx();
  const char *e = getenv("KFUSE_PROPS_EDGE");
  bool single = e && !strcmp(e, "single");
  int n = pg_edge_count(single), bad = 0;
  for (int i = 0; i < n; i++) {
    kf_graph *g = NULL;
    char err[4096] = "";
    kf_status st = pg_edge(ctx, i, single, &g);
    bool ok = st == KF_OK;
    if (!ok)
      snprintf(err, sizeof err, "builder: %s: %s", kf_status_name(st), g ? kf_graph_errmsg(g) : "");
    if (ok) ok = check_graph(ctx, g, (uint64_t)i + 1, err, sizeof err);
    if (!ok) report("edge", i, g, err), bad++;
    kf_graph_destroy(g);
  }
  printf("edge family (%s): %d of %d graphs plan, compile and run the reference\n",
         single ? "one case per graph" : "batched per shape", n - bad, n);
  hermetic_done(ctx);
  ck_assert_msg(bad == 0, "%d of %d edge graphs failed (see FAIL lines)", bad, n);
}
END_TEST

START_TEST(chain_family) {
  kf_ctx *ctx = hermetic_ctx();
  int n = env_int("KFUSE_PROPS_CHAINS", 24), first = env_int("KFUSE_PROPS_SEED", 1), bad = 0;
  for (int i = 0; i < n; i++) {
    uint64_t seed = (uint64_t)(first + i);
    kf_graph *g = NULL;
    char err[4096] = "";
    kf_status st = pg_layout_chain(ctx, seed, &g);
    bool ok = st == KF_OK;
    if (!ok)
      snprintf(err, sizeof err, "builder: %s: %s", kf_status_name(st), g ? kf_graph_errmsg(g) : "");
    if (ok) ok = check_graph(ctx, g, seed, err, sizeof err);
    if (!ok) report("chain seed", (long long)seed, g, err), bad++;
    kf_graph_destroy(g);
  }
  printf("layout-chain family: %d of %d graphs plan, compile and run the reference\n", n - bad, n);
  hermetic_done(ctx);
  ck_assert_msg(bad == 0, "%d of %d layout-chain graphs failed (see FAIL lines)", bad, n);
}
END_TEST

/* The generator is a pure function of the seed (a failure can be replayed). */
START_TEST(reproducible) {
  kf_ctx *ctx = NULL;
  ck_assert_int_eq(kf_ctx_create(&ctx), KF_OK);
  for (uint64_t seed = 1; seed <= 20; seed++) {
    kf_graph *a = NULL, *b = NULL;
    pg_random(ctx, seed, &a);
    pg_random(ctx, seed, &b);
    char *ya = kf_graph_to_yaml(a), *yb = kf_graph_to_yaml(b);
    ck_assert_ptr_nonnull(ya);
    ck_assert_str_eq(ya, yb);
    kf_free(ya), kf_free(yb);
    kf_graph_destroy(a), kf_graph_destroy(b);
  }
  kf_ctx_destroy(ctx);
}
END_TEST

/* Cases run alone with CK_RUN_CASE=edge, =random or =chain. */
static Suite *make_suite(void) {
  Suite *s = suite_create("props");
  const char *names[] = {"edge", "random", "chain"};
  const TTest *tests[] = {edge_family, random_family, chain_family};
  for (int i = 0; i < 3; i++) {
    TCase *tc = tcase_create(names[i]);
    tcase_set_timeout(tc, 3600);
    if (i == 0) tcase_add_test(tc, reproducible);
    tcase_add_test(tc, tests[i]);
    suite_add_tcase(s, tc);
  }
  return s;
}
