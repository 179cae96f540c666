/* test_cli_tolerance.c - `kfuse run --check`'s allowance for what a flash
 * kernel writes (tools/cli_util.c, cli_attention_tolerance): attention's
 * numerical contract (docs/attention.md) for the output and the logsumexp
 * of an attention kernel, by q's dtype; nothing for the other outputs of
 * the same plan, or for a plan without an attention kernel. The plans are
 * those of examples/graphs (planned for sm_90, no GPU needed). */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "../tools/cli_util.h"
#include "kfuse.h"

static kf_ctx *C;

/* The JSON of the plan of examples/graphs/<file>, *g its graph. */
static char *plan_json(const char *file, kf_graph **g) {
  char path[512];
  snprintf(path, sizeof path, "%s/examples/graphs/%s", KFUSE_SOURCE_DIR, file);
  ck_assert_int_eq(kf_graph_load_yaml(C, path, g), KF_OK);
  kf_options o;
  kf_options_init(&o);
  o.arch = "sm_90";
  kf_plan *p = NULL;
  ck_assert_int_eq(kf_plan_create(C, *g, &o, &p), KF_OK);
  char *json = kf_plan_describe(p, KF_FORMAT_JSON);
  ck_assert_ptr_nonnull(json);
  kf_plan_destroy(p);
  return json;
}

START_TEST(attention_outputs_get_the_contract) {
  kf_graph *g = NULL;
  char *json = plan_json("attention_lse.yaml", &g);
  double tol = 0;
  ck_assert(cli_attention_tolerance(g, json, "o", &tol));
  ck_assert(tol == 0x1p-9); /* f16 q */
  tol = 0;
  ck_assert(cli_attention_tolerance(g, json, "lse", &tol));
  ck_assert(tol == 0x1p-9);
  ck_assert(!cli_attention_tolerance(g, json, "q", &tol)); /* read, not written */
  ck_assert(!cli_attention_tolerance(g, json, "ls", &tol)); /* a prefix of a name */
  ck_assert(!cli_attention_tolerance(g, json, "nothing", &tol));
  ck_assert(!cli_attention_tolerance(g, NULL, "o", &tol));
  kf_free(json);
  kf_graph_destroy(g);
}
END_TEST

START_TEST(other_kernels_get_nothing) {
  kf_graph *g = NULL;
  char *json = plan_json("softmax.yaml", &g);
  double tol = 0;
  for (int j = 0; j < kf_graph_num_outputs(g); j++) {
    char buf[64];
    const char *name = cli_value_name(g, kf_graph_output(g, j), buf, sizeof buf);
    ck_assert_msg(!cli_attention_tolerance(g, json, name, &tol), "%s", name);
  }
  kf_free(json);
  kf_graph_destroy(g);
}
END_TEST

int main(void) {
  if (kf_ctx_create(&C) != KF_OK) return 1;
  Suite *s = suite_create("cli_tolerance");
  TCase *tc = tcase_create("tolerance");
  tcase_add_test(tc, attention_outputs_get_the_contract);
  tcase_add_test(tc, other_kernels_get_nothing);
  suite_add_tcase(s, tc);
  SRunner *r = srunner_create(s);
  srunner_run_all(r, CK_NORMAL);
  int failed = srunner_ntests_failed(r);
  srunner_free(r);
  kf_ctx_destroy(C);
  return failed ? 1 : 0;
}
