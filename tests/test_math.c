/* test_math.c - the math policy (kf_options.math, KFUSE_MATH; docs/codegen.md
 * "Math policy"): options and their errors, what each policy writes into the
 * source, distinct kernel cache keys, and every op's device function
 * compiled by NVRTC under every policy for f32, f16, bf16 and f64. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_main.h"
#include "codegen_util.h"
#include "kfuse.h"
#include "knob_env.h"

static const kf_math policies[] = {KF_MATH_STRICT, KF_MATH_DEFAULT, KF_MATH_FAST};
static const char *const policy_names[] = {"strict", "default", "fast"};

/* Every floating pointwise op of ops.def on one dtype, into one output (so
 * that one kernel holds them all), and a softmax (a row kernel: its division
 * goes through kf_div_rcp, which must divide as kf_div does). */
static char *all_ops_yaml(const char *dt) {
  static const char *const unary[] = {
      "neg",     "abs",  "exp",  "log",       "sqrt", "rsqrt", "reciprocal", "sin",  "cos", "tanh",
      "sigmoid", "relu", "gelu", "gelu_tanh", "silu", "erf",   "floor",      "ceil", "sign"};
  size_t cap = 8192, n = 0;
  char *s = malloc(cap);
  ck_assert(s != NULL);
  n += (size_t)snprintf(s + n, cap - n,
                        "kfuse: 1\ninputs:\n  x: {dtype: %s, shape: [64, 96]}\n"
                        "  z: {dtype: %s, shape: [64, 96]}\nnodes:\n"
                        "  - {name: a0, op: div, args: [x, z]}\n"
                        "  - {name: a1, op: pow, args: [a0, z]}\n",
                        dt, dt);
  char prev[32] = "a1";
  for (size_t i = 0; i < sizeof unary / sizeof unary[0]; i++) {
    n += (size_t)snprintf(s + n, cap - n, "  - {name: u%zu, op: %s, args: [x]}\n", i, unary[i]);
    n += (size_t)snprintf(s + n, cap - n, "  - {name: s%zu, op: add, args: [%s, u%zu]}\n", i, prev,
                          i);
    snprintf(prev, sizeof prev, "s%zu", i);
  }
  n += (size_t)snprintf(s + n, cap - n,
                        "  - {name: sm, op: softmax, args: [x], axis: -1}\n"
                        "outputs: [%s, sm]\n",
                        prev);
  ck_assert(n < cap);
  return s;
}

static kf_plan *plan_for(kf_ctx *ctx, const char *yaml, kf_math math) {
  kf_graph *g = NULL;
  ck_assert_msg(kf_graph_load_yaml_string(ctx, yaml, strlen(yaml), NULL, &g) == KF_OK, "%s",
                kf_ctx_errmsg(ctx));
  kf_options o;
  kf_options_init(&o);
  o.math = math;
  o.arch = "sm_90";
  kf_plan *p = NULL;
  ck_assert_msg(kf_plan_create(ctx, g, &o, &p) == KF_OK, "%s", kf_ctx_errmsg(ctx));
  kf_graph_destroy(g);
  return p;
}

START_TEST(options_and_env) {
  kt_unsetenv("KFUSE_MATH");
  kf_options o;
  kf_options_init(&o);
  ck_assert_int_eq(o.math, KF_MATH_DEFAULT);
  for (int i = 0; i < 3; i++) {
    kt_setenv("KFUSE_MATH", policy_names[i], 1);
    kf_options_init(&o);
    ck_assert_int_eq(o.math, policies[i]);
  }
  kf_ctx *ctx;
  ck_assert(kf_ctx_create(&ctx) == KF_OK);
  kf_graph *g = NULL;
  const char *y =
      "kfuse: 1\ninputs: {x: {dtype: f32, shape: [8]}}\n"
      "nodes: [{name: y, op: exp, args: [x]}]\noutputs: [y]\n";
  ck_assert(kf_graph_load_yaml_string(ctx, y, strlen(y), NULL, &g) == KF_OK);
  kf_plan *p = NULL;
  /* a misspelt setting: a warning naming it (the knob table's rule), and
   * the default policy */
  kt_setenv("KFUSE_MATH", "fastest", 1);
  kf_options_init(&o);
  ck_assert_int_eq(o.math, KF_MATH_DEFAULT);
  ck_assert_int_eq(kf_plan_create(ctx, g, &o, &p), KF_OK);
  kf_plan_destroy(p);
  p = NULL;
  kt_unsetenv("KFUSE_MATH");
  /* a value that is no kf_math */
  kf_options_init(&o);
  o.math = (kf_math)7;
  ck_assert_int_eq(kf_plan_create(ctx, g, &o, &p), KF_ERR_INVALID_ARG);
  ck_assert_msg(strstr(kf_ctx_errmsg(ctx), "kf_options.math 7"), "%s", kf_ctx_errmsg(ctx));
  o.math = KF_MATH_FAST;
  ck_assert_int_eq(kf_plan_create(ctx, g, &o, &p), KF_OK);
  kf_plan_destroy(p);
  kf_graph_destroy(g);
  kf_ctx_destroy(ctx);
}
END_TEST

/* The default writes the sources of before (no define: goldens unchanged);
 * strict and fast each a define, so the three sources differ. */
START_TEST(policy_in_source) {
  kf_ctx *ctx;
  ck_assert(kf_ctx_create(&ctx) == KF_OK);
  char *yaml = all_ops_yaml("f32");
  char *src[3];
  for (int i = 0; i < 3; i++) {
    kf_plan *p = plan_for(ctx, yaml, policies[i]);
    src[i] = kf_plan_source(p, 0, NULL);
    ck_assert_ptr_nonnull(src[i]);
    kf_plan_destroy(p);
  }
  ck_assert_ptr_nonnull(strstr(src[0], "#define KF_MATH_STRICT 1\n"));
  ck_assert_ptr_null(strstr(src[1], "#define KF_MATH_"));
  ck_assert_ptr_nonnull(strstr(src[2], "#define KF_MATH_FAST 1\n"));
  ck_assert_ptr_null(strstr(src[0], "#define KF_MATH_FAST"));
  for (int i = 0; i < 3; i++) kf_free(src[i]);
  free(yaml);
  kf_ctx_destroy(ctx);
}
END_TEST

/* Every op under every policy compiles (NVRTC, through kf_plan_compile: in
 * parallel, and cached by source): f32, bf16 and f16 (the kf_<op>_h16
 * functions of the .half columns) under all three, and f64 (the math
 * library in every policy) under strict. */
START_TEST(every_op_compiles) {
  static const struct {
    const char *dt;
    int policy;
  } runs[] = {{"f32", 0},  {"f32", 1}, {"f32", 2}, {"bf16", 0}, {"bf16", 1},
              {"bf16", 2}, {"f16", 0}, {"f16", 1}, {"f16", 2},  {"f64", 0}};
  kf_ctx *ctx;
  ck_assert(kf_ctx_create(&ctx) == KF_OK);
  for (size_t r = 0; r < sizeof runs / sizeof runs[0]; r++) {
    char *yaml = all_ops_yaml(runs[r].dt);
    kf_plan *p = plan_for(ctx, yaml, policies[runs[r].policy]);
    ck_assert_msg(kf_plan_compile(p) == KF_OK, "%s %s: %s", runs[r].dt,
                  policy_names[runs[r].policy], kf_plan_errmsg(p));
    kf_plan_destroy(p);
    free(yaml);
  }
  kf_ctx_destroy(ctx);
}
END_TEST

/* f16 and bf16 nodes of the ops with a .half column (log, gelu_tanh, pow, erf,
 * sin, cos, tanh, sqrt) call kf_<op>_h16, f32 nodes the float function; the
 * prelude defines each
 * kf_<op>_h16 with the float function under strict (and under fast where
 * the op has a fast form). */
START_TEST(half_functions) {
  static const char *const fns[] = {"kf_log", "kf_gelu_tanh", "kf_pow",  "kf_erf",
                                    "kf_sin", "kf_cos",       "kf_tanh", "kf_sqrt"};
  static const char *const dts[] = {"f16", "bf16", "f32"};
  kf_ctx *ctx;
  ck_assert(kf_ctx_create(&ctx) == KF_OK);
  for (int d = 0; d < 3; d++) {
    char yaml[1024];
    snprintf(yaml, sizeof yaml,
             "kfuse: 1\ninputs:\n  x: {dtype: %s, shape: [1024]}\n"
             "  z: {dtype: %s, shape: [1024]}\nnodes:\n"
             "  - {name: a, op: log, args: [x]}\n  - {name: b, op: gelu_tanh, args: [a]}\n"
             "  - {name: c, op: pow, args: [b, z]}\n  - {name: f, op: erf, args: [c]}\n"
             "  - {name: g, op: sin, args: [f]}\n  - {name: h, op: cos, args: [g]}\n"
             "  - {name: i, op: tanh, args: [h]}\n  - {name: j, op: sqrt, args: [i]}\n"
             "  - {name: e, op: exp, args: [j]}\n"
             "outputs: [e]\n",
             dts[d], dts[d]);
    kf_plan *p = plan_for(ctx, yaml, KF_MATH_DEFAULT);
    char *src = kf_plan_source(p, 0, NULL);
    ck_assert_ptr_nonnull(src);
    for (int f = 0; f < (int)(sizeof fns / sizeof fns[0]); f++) {
      char call[64];
      snprintf(call, sizeof call, "(%s_h16(t", fns[f]);
      if (d < 2)
        ck_assert_msg(strstr(src, call) != NULL, "%s: no call of %s_h16", dts[d], fns[f]);
      else
        ck_assert_msg(strstr(src, call) == NULL, "f32 calls %s_h16", fns[f]);
    }
    /* exp has no .half column: the float function for every dtype */
    ck_assert_ptr_null(strstr(src, "kf_exp_h16("));
    ck_assert_ptr_nonnull(strstr(src,
                                 "KF_INLINE float kf_pow_h16(float a, float b) {\n"
                                 "#if defined(KF_MATH_STRICT) || defined(KF_MATH_FAST)\n"
                                 "  return kf_pow(a, b);\n"));
    ck_assert_ptr_nonnull(strstr(src,
                                 "KF_INLINE float kf_gelu_tanh_h16(float x) {\n"
                                 "#ifdef KF_MATH_STRICT\n  return kf_gelu_tanh(x);\n"));
    /* erf has no fast form: its 16-bit body under fast too */
    ck_assert_ptr_nonnull(strstr(src,
                                 "KF_INLINE float kf_erf_h16(float x) {\n"
                                 "#ifdef KF_MATH_STRICT\n  return kf_erf(x);\n"));
    /* sin has one: the float function (__sinf) under fast */
    ck_assert_ptr_nonnull(strstr(src,
                                 "KF_INLINE float kf_sin_h16(float x) {\n"
                                 "#if defined(KF_MATH_STRICT) || defined(KF_MATH_FAST)\n"
                                 "  return kf_sin(x);\n"));
    kf_free(src);
    kf_plan_destroy(p);
  }
  kf_ctx_destroy(ctx);
}
END_TEST

/* The policy is part of the kernel cache key: the same graph compiled under
 * another policy is compiled again, not found in the cache; under the same
 * policy it is a hit. */
START_TEST(policy_in_cache_key) {
  char dir[] = "/tmp/kfuse-math-XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(dir));
  kt_setenv("KFUSE_CACHE_DIR", dir, 1);
  kf_ctx *ctx;
  ck_assert(kf_ctx_create(&ctx) == KF_OK);
  const char *y =
      "kfuse: 1\ninputs: {x: {dtype: f32, shape: [1000]}}\n"
      "nodes: [{name: y, op: sigmoid, args: [x]}]\noutputs: [y]\n";
  kf_cache_stats st;
  uint64_t misses = 0;
  for (int round = 0; round < 2; round++) {
    for (int i = 0; i < 3; i++) {
      kf_plan *p = plan_for(ctx, y, policies[i]);
      ck_assert_msg(kf_plan_compile(p) == KF_OK, "%s", kf_plan_errmsg(p));
      kf_plan_destroy(p);
      ck_assert(kf_ctx_cache_stats(ctx, &st) == KF_OK);
      /* first round: each policy a miss; second: each a hit */
      ck_assert_msg(st.misses == misses + (round == 0), "%s round %d: %llu misses", policy_names[i],
                    round, (unsigned long long)st.misses);
      misses = st.misses;
    }
  }
  kf_cache_clear(ctx);
  kf_ctx_destroy(ctx);
  kt_unsetenv("KFUSE_CACHE_DIR");
  rmdir(dir);
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("math");
  TCase *tc = tcase_create("policy");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, options_and_env);
  tcase_add_test(tc, policy_in_source);
  tcase_add_test(tc, every_op_compiles);
  tcase_add_test(tc, half_functions);
  tcase_add_test(tc, policy_in_cache_key);
  suite_add_tcase(s, tc);
  return s;
}
