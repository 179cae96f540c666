/* test_planted.c - the planted wrong kernels of tests/gpu/test_gpu_check.c
 * stay meaningful without a GPU: each patch still applies to the build's
 * templates (build/templates, common.cuh generated from ops.def)
 * (a template edit that removes the patched text fails here, not on the
 * GPU machine), reaches a kernel of one of its graphs, and the patched and
 * unpatched kernels compile for sm_90 with NVRTC. */
#include <check.h>

#include "check_main.h"
#include "kfuse.h"

static kf_ctx *G_ctx;

#include "gpu/planted.h"

/* Compiles g for sm_90; whether a kernel contains marker (NULL: true). */
static bool compiles_with(kf_graph *g, const char *marker, const char *what) {
  kf_options opt;
  kf_options_init(&opt);
  opt.arch = "sm_90";
  kf_plan *plan = NULL;
  ck_assert_msg(kf_compile(G_ctx, g, &opt, &plan) == KF_OK, "%s: %s", what, kf_ctx_errmsg(G_ctx));
  bool has = !marker || plan_has(plan, marker);
  kf_plan_destroy(plan);
  return has;
}

static void setup(void) {
  ck_assert_int_eq(kf_ctx_create(&G_ctx), KF_OK);
}

static void teardown(void) {
  kf_ctx_destroy(G_ctx);
  G_ctx = NULL;
}

START_TEST(each_patch_reaches_a_kernel) {
  const planted *pl = &G_planted[_i];
  templates_copy(pl->file, pl->from, pl->to);
  bool reached = false;
  for (int k = 0; k < 3 && pl->graphs[k] && !reached; k++) {
    kf_graph *g = pl->graphs[k]();
    reached = compiles_with(g, MARK, pl->what);
    kf_graph_destroy(g);
  }
  templates_done();
  ck_assert_msg(reached, "%s: no graph's kernel contains the planted bug", pl->what);
}
END_TEST

START_TEST(unpatched_copy_compiles) {
  templates_copy(NULL, NULL, NULL);
  for (int k = 0; k < N_ALL_GRAPHS; k++) {
    kf_graph *g = G_all_graphs[k]();
    ck_assert(compiles_with(g, NULL, "unpatched"));
    kf_graph_destroy(g);
  }
  templates_done();
}
END_TEST

static Suite *make_suite(void) {
  /* the mma.sync template's planted bug needs it on (off by default) */
  kt_setenv("KFUSE_GEMM80", "1", 1);
  Suite *s = suite_create("planted");
  TCase *tc = tcase_create("templates");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 300);
  tcase_add_loop_test(tc, each_patch_reaches_a_kernel, 0, N_PLANTED);
  tcase_add_test(tc, unpatched_copy_compiles);
  suite_add_tcase(s, tc);
  return s;
}
