/* test_api_checks.c - arguments checked at the API boundary: arch names
 * parsed strictly, every kf_options field of kf_plan_create, the status of
 * kf_graph_save_yaml, and the literal rule of kf_scalar. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "check_main.h"
#include "codegen/codegen.h"
#include "codegen/target.h"
#include "ir/ir.h"
#include "runtime/nvrtc.h"

START_TEST(arch_parse_strict) {
  static const struct {
    const char *name;
    int num;
    char sfx;
  } good[] = {{"sm_90", 90, 0}, {"sm_90a", 90, 'a'}, {"sm_100f", 100, 'f'}, {"compute_80", 80, 0},
              {"90", 90, 0},    {"9.0", 90, 0},      {"12.1", 121, 0},      {"sm_120", 120, 0}};
  for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
    int num = -1;
    char sfx = 'x';
    ck_assert_msg(cg_arch_parse(good[i].name, &num, &sfx), "%s refused", good[i].name);
    ck_assert_int_eq(num, good[i].num);
    ck_assert_int_eq(sfx, good[i].sfx);
  }
  /* a.b once read uninitialized integers (sscanf's result unchecked) */
  static const char *bad[] = {"a.b",     "9.",      ".0",      "9.0.1",  "9.00",   "0.9",
                              "sm_",     "sm_9",    "sm_090",  "sm_+90", "sm_ 90", "sm_90b",
                              "sm_90aa", "sm_9000", "-90",     "90 ",    "",       "compute_",
                              "9.0a",    "sm90",    "sm_90\n", "123.4"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    ck_assert_msg(!cg_arch_parse(bad[i], NULL, NULL), "'%s' accepted", bad[i]);
  ck_assert(!cg_arch_parse(NULL, NULL, NULL));
  char out[16], err[256];
  ck_assert(!rt_nvrtc_arch("a.b", out, sizeof out, err, sizeof err));
  ck_assert_msg(strstr(err, "bad arch name 'a.b'") && strstr(err, "sm_XY"), "%s", err);
  ck_assert(rt_nvrtc_arch("9.0", out, sizeof out, err, sizeof err));
  ck_assert_str_eq(out, "sm_90");
}
END_TEST

static kf_ctx *C;
static kf_graph *G;

static void setup(void) {
  ck_assert_int_eq(kf_ctx_create(&C), KF_OK);
  ck_assert_int_eq(kf_graph_create(C, &G), KF_OK);
}

static void teardown(void) {
  kf_graph_destroy(G);
  kf_ctx_destroy(C);
}

/* kf_plan_create of a one-op graph with o: the status, and the message
 * must hold `want` when it fails. */
static kf_status plan_with(const kf_options *o, const char *want) {
  if (kf_graph_num_outputs(G) == 0) {
    kf_value x = kf_input(G, "x", KF_F32, 1, (int64_t[]){8});
    kf_set_output(G, kf_exp(G, x));
  }
  kf_plan *p = (kf_plan *)1;
  kf_status st = kf_plan_create(C, G, o, &p);
  if (st == KF_OK) {
    kf_plan_destroy(p);
  } else {
    ck_assert_ptr_null(p);
    ck_assert_msg(strstr(kf_ctx_errmsg(C), want), "message '%s' lacks '%s'", kf_ctx_errmsg(C),
                  want);
  }
  return st;
}

START_TEST(plan_options_checked) {
  kf_options o;
  kf_options_init(&o);
  ck_assert_int_eq(plan_with(&o, ""), KF_OK);
  ck_assert_int_eq(plan_with(NULL, ""), KF_OK);
  o.mode = (kf_run_mode)99;
  ck_assert_int_eq(plan_with(&o, "options.mode is 99"), KF_ERR_INVALID_ARG);
  o.mode = (kf_run_mode)-1;
  ck_assert_int_eq(plan_with(&o, "options.mode is -1"), KF_ERR_INVALID_ARG);
  o.mode = KF_MODE_GRAPH;
  ck_assert_int_eq(plan_with(&o, ""), KF_OK);
  o.streams = 0;
  ck_assert_int_eq(plan_with(&o, "options.streams is 0; expected 1 to 8"), KF_ERR_INVALID_ARG);
  o.streams = 9;
  ck_assert_int_eq(plan_with(&o, "options.streams is 9"), KF_ERR_INVALID_ARG);
  o.streams = 8;
  ck_assert_int_eq(plan_with(&o, ""), KF_OK);
  o.occupancy_drop = NAN;
  ck_assert_int_eq(plan_with(&o, "occupancy_drop is NaN"), KF_ERR_INVALID_ARG);
  o.occupancy_drop = -1; /* documented: never split */
  ck_assert_int_eq(plan_with(&o, ""), KF_OK);
  o.arch = "a.b";
  ck_assert_int_eq(plan_with(&o, "bad arch name 'a.b'"), KF_ERR_INVALID_ARG);
  o.arch = "sm_90x";
  ck_assert_int_eq(plan_with(&o, "bad arch name 'sm_90x'"), KF_ERR_INVALID_ARG);
  o.arch = "9.0";
  ck_assert_int_eq(plan_with(&o, ""), KF_OK);
  o.arch = "sm_9000000000000000000000000000000000000000000";
  ck_assert_int_eq(plan_with(&o, "too long"), KF_ERR_INVALID_ARG);
}
END_TEST

/* Every form kf_plan_create accepts also works where the arch is used
 * again: kf_plan_source once refused "9.0" that the plan had taken. */
START_TEST(plan_source_arch_forms) {
  kf_value x = kf_input(G, "x", KF_F32, 1, (int64_t[]){8});
  kf_set_output(G, kf_exp(G, x));
  kf_options o;
  kf_options_init(&o);
  o.arch = "9.0";
  kf_plan *p = NULL;
  ck_assert_int_eq(kf_plan_create(C, G, &o, &p), KF_OK);
  char *src = kf_plan_source(p, 0, NULL);
  ck_assert_msg(src != NULL, "%s", kf_plan_errmsg(p));
  kf_free(src);
  ck_assert_ptr_null(kf_plan_source(p, 0, "a.b"));
  ck_assert_msg(strstr(kf_plan_errmsg(p), "bad arch name 'a.b'"), "%s", kf_plan_errmsg(p));
  src = kf_plan_source(p, 0, "compute_90");
  ck_assert_ptr_nonnull(src);
  kf_free(src);
  kf_plan_destroy(p);
}
END_TEST

START_TEST(save_yaml_without_outputs) {
  kf_input(G, "x", KF_F32, 1, (int64_t[]){4});
  char path[] = "/tmp/kfuse_noout_XXXXXX";
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  close(fd);
  ck_assert_int_eq(kf_graph_save_yaml(G, path), KF_ERR_INVALID_ARG);
  ck_assert_msg(strstr(kf_graph_errmsg(G), "without outputs"), "%s", kf_graph_errmsg(G));
  ck_assert_int_eq(kf_graph_status(G), KF_OK); /* not sticky */
  remove(path);
}
END_TEST

/* kf_scalar value, dtype: refused with `why` in the message, or kept. */
static void literal(double v, kf_dtype dt, const char *why) {
  kf_graph *g;
  ck_assert_int_eq(kf_graph_create(NULL, &g), KF_OK);
  kf_value s = kf_scalar(g, v, dt);
  if (why) {
    ck_assert_msg(s == KF_NONE, "%.17g accepted as %s", v, kf_dtype_name(dt));
    ck_assert_int_eq(kf_graph_status(g), KF_ERR_INVALID_ARG);
    ck_assert_msg(strstr(kf_graph_errmsg(g), why), "%.17g %s: '%s' lacks '%s'", v,
                  kf_dtype_name(dt), kf_graph_errmsg(g), why);
  } else {
    ck_assert_msg(s != KF_NONE, "%.17g %s refused: %s", v, kf_dtype_name(dt), kf_graph_errmsg(g));
  }
  kf_graph_destroy(g);
}

START_TEST(scalar_literal_rule) {
  /* integers: integral and in range, no silent truncation or saturation */
  literal(3e9, KF_I32, "3000000000 is out of the range of i32");
  literal(0.5, KF_I32, "0.5 is not an integer, which i32 needs");
  literal(-2147483649.0, KF_I32, "out of the range");
  literal(2147483647.0, KF_I32, NULL);
  literal(-2147483648.0, KF_I32, NULL);
  literal(9223372036854775808.0, KF_I64, "out of the range of i64");
  literal(-9223372036854775808.0, KF_I64, NULL);
  literal(1e-300, KF_I64, "not an integer");
  literal(2, KF_BOOL, "2 is not a bool");
  literal(0.5, KF_BOOL, "not a bool");
  literal(1, KF_BOOL, NULL);
  literal(0, KF_BOOL, NULL);
  /* floats round to nearest; a finite value that would become inf is refused */
  literal(1e5, KF_F16, "100000 overflows f16");
  literal(65504, KF_F16, NULL);
  literal(65519.99, KF_F16, NULL); /* rounds down to 65504 */
  literal(65520, KF_F16, "overflows f16");
  literal(-1e39, KF_BF16, "overflows bf16 (it would round to -infinity)");
  literal(3e38, KF_BF16, NULL);
  literal(1e39, KF_F32, "overflows f32");
  literal(0.1, KF_F32, NULL);
  literal(INFINITY, KF_F16, NULL);
  literal(NAN, KF_BF16, NULL);
  literal(1e308, KF_F64, NULL);
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("api_checks");
  TCase *tc = tcase_create("api");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, arch_parse_strict);
  tcase_add_test(tc, plan_options_checked);
  tcase_add_test(tc, plan_source_arch_forms);
  tcase_add_test(tc, save_yaml_without_outputs);
  tcase_add_test(tc, scalar_literal_rule);
  suite_add_tcase(s, tc);
  return s;
}
