/* test_builder_composite.c - softmax, log_softmax, layernorm and rmsnorm:
 * the exact primitive expansion (ops in order, wiring, axes, the eps
 * constant), f32 vs half-precision widening, and their errors. */
#include <math.h>

#include "test_builder.h"

static void fresh_graph(void) {
  teardown_graph();
  setup_graph();
}

/* Asserts that the nodes from `first` on have exactly these ops (a
 * space-separated list) and no names. */
static void expands_to(kf_value first, const char *ops, int line) {
  char buf[256];
  snprintf(buf, sizeof buf, "%s", ops);
  int v = first;
  for (char *tok = strtok(buf, " "); tok; tok = strtok(NULL, " "), v++) {
    ck_assert_msg(v < kf_graph_num_values(G), "line %d: expansion stops at %%%d, want %s", line, v,
                  tok);
    ck_assert_msg(strcmp(kf_value_op(G, v), tok) == 0, "line %d: %%%d is %s, want %s", line, v,
                  kf_value_op(G, v), tok);
    ck_assert_ptr_null(kf_value_name(G, v));
  }
  ck_assert_msg(v == kf_graph_num_values(G), "line %d: %d nodes, want %d", line,
                kf_graph_num_values(G) - first, v - first);
}
#define EXPANDS(first, ops) expands_to(first, ops, __LINE__)

static const ir_node *node(kf_value v) {
  return &G->nodes[v];
}

START_TEST(softmax_f32) {
  kf_value x = IN("x", KF_F32, 3, 4);
  kf_value y = kf_softmax(G, x, -1);
  HAS(y, KF_F32, 3, 4);
  EXPANDS(1, "max sub exp sum div");
  ck_assert_int_eq(y, 5);
  ck_assert_uint_eq(node(1)->axes, 0x2);
  ck_assert(node(1)->keepdim && node(4)->keepdim);
  ck_assert_uint_eq(node(4)->axes, 0x2);
  HAS(1, KF_F32, 3, 1);
  /* sub(x, m); exp(sub); sum(exp); div(exp, sum) */
  ck_assert_int_eq(node(2)->args[0], x);
  ck_assert_int_eq(node(2)->args[1], 1);
  ck_assert_int_eq(node(3)->args[0], 2);
  ck_assert_int_eq(node(4)->args[0], 3);
  ck_assert_int_eq(node(5)->args[0], 3);
  ck_assert_int_eq(node(5)->args[1], 4);
  /* Axis 0, given negative: the max and sum reduce axis 0. */
  kf_value z = kf_softmax(G, x, -2);
  HAS(z, KF_F32, 3, 4);
  ck_assert_uint_eq(node(6)->axes, 0x1);
  ck_assert_uint_eq(node(9)->axes, 0x1);
}
END_TEST

START_TEST(softmax_bf16) {
  kf_value x = IN("x", KF_BF16, 2, 8);
  kf_value y = kf_softmax(G, x, 1);
  HAS(y, KF_BF16, 2, 8);
  EXPANDS(1, "cast max sub exp sum div cast");
  ck_assert_int_eq(node(1)->dtype, KF_F32);
  for (int v = 1; v < 7; v++) ck_assert_int_eq(node(v)->dtype, KF_F32);
  ck_assert_int_eq(node(7)->args[0], 6);
  ck_assert_int_eq(node(3)->args[0], 1); /* sub reads the widened x */
}
END_TEST

START_TEST(log_softmax_expansion) {
  kf_value x = IN("x", KF_F64, 5);
  kf_value y = kf_log_softmax(G, x, 0);
  HAS(y, KF_F64, 5);
  EXPANDS(1, "max sub exp sum log sub");
  ck_assert_int_eq(node(6)->args[0], 2); /* (x - m) - log(s) */
  ck_assert_int_eq(node(6)->args[1], 5);
  fresh_graph();
  x = IN("x", KF_F16, 4, 3);
  y = kf_log_softmax(G, x, -1);
  HAS(y, KF_F16, 4, 3);
  EXPANDS(1, "cast max sub exp sum log sub cast");
}
END_TEST

START_TEST(logsumexp_expansion) {
  kf_value x = IN("x", KF_F32, 2, 3, 8);
  kf_value y = kf_logsumexp(G, x, 1);
  HAS(y, KF_F32, 2, 8);
  EXPANDS(1, "max sub exp sum log add const abs eq where reshape");
  ck_assert_uint_eq(node(1)->axes, 0x2);
  ck_assert(node(1)->keepdim && node(4)->keepdim); /* the softmax's max and sum */
  ck_assert_int_eq(node(6)->args[0], 1);           /* m + log(s) */
  ck_assert_int_eq(node(6)->args[1], 5);
  ck_assert(isinf(node(7)->value) && node(7)->value > 0);
  ck_assert_int_eq(node(10)->args[1], 1); /* |m| == inf: m itself */
  ck_assert_int_eq(node(10)->args[2], 6);
  fresh_graph();
  x = IN("x", KF_BF16, 4, 3);
  y = kf_logsumexp(G, x, -1);
  HAS(y, KF_BF16, 4);
  EXPANDS(1, "cast max sub exp sum log add const abs eq where cast reshape");
  fresh_graph();
  x = IN("x", KF_F64, 5);
  HAS0(kf_logsumexp(G, x, 0), KF_F64); /* rank 0 */
  fresh_graph();
  x = IN("x", KF_I32, 3, 4);
  FAILS(kf_logsumexp(G, x, -1), KF_ERR_DTYPE, "node %1 (logsumexp)", "floating", "i32");
  fresh_graph();
  x = IN("x", KF_F32, 3, 4);
  FAILS(kf_logsumexp(G, x, 2), KF_ERR_INVALID_ARG, "node %1 (logsumexp)", "axis 2", "-2..1");
  ck_assert_int_eq(kf_graph_num_values(G), 1);
}
END_TEST

START_TEST(layernorm_f32) {
  kf_value x = IN("x", KF_F32, 2, 3, 8), w = IN("w", KF_F32, 8), b = IN("b", KF_F32, 8);
  kf_value y = kf_layernorm(G, x, w, b, 1e-5);
  HAS(y, KF_F32, 2, 3, 8);
  EXPANDS(3, "mean sub mul mean const add rsqrt mul mul add");
  ck_assert_uint_eq(node(3)->axes, 0x4);
  ck_assert(node(3)->keepdim);
  HAS(3, KF_F32, 2, 3, 1);
  ck_assert_int_eq(node(5)->args[0], 4); /* d * d */
  ck_assert_int_eq(node(5)->args[1], 4);
  ck_assert_int_eq(node(7)->dtype, KF_F32);
  ck_assert_double_eq(node(7)->value, (double)1e-5f);
  ck_assert_int_eq(node(10)->args[0], 4); /* d * rsqrt */
  ck_assert_int_eq(node(11)->args[1], w);
  ck_assert_int_eq(node(12)->args[1], b);
  /* Without weight and bias; with a bias only. */
  kf_value n = kf_layernorm(G, x, KF_NONE, KF_NONE, 0.0);
  HAS(n, KF_F32, 2, 3, 8);
  EXPANDS(13, "mean sub mul mean const add rsqrt mul");
  ck_assert_double_eq(node(17)->value, 0.0);
  kf_value c = kf_layernorm(G, x, KF_NONE, b, 1e-3);
  HAS(c, KF_F32, 2, 3, 8);
  EXPANDS(21, "mean sub mul mean const add rsqrt mul add");
}
END_TEST

START_TEST(layernorm_bf16) {
  kf_value x = IN("x", KF_BF16, 4, 16), w = IN("w", KF_BF16, 16), b = IN("b", KF_BF16, 16);
  kf_value y = kf_layernorm(G, x, w, b, 1e-5);
  HAS(y, KF_BF16, 4, 16);
  EXPANDS(3, "cast mean sub mul mean const add rsqrt mul cast mul cast add cast");
  ck_assert_int_eq(node(8)->dtype, KF_F32); /* eps in the compute dtype */
  ck_assert_int_eq(node(12)->args[0], w);
  ck_assert_int_eq(node(12)->dtype, KF_F32);
  ck_assert_int_eq(node(14)->args[0], b);
  for (int v = 3; v < 16; v++) ck_assert_int_eq(node(v)->dtype, KF_F32);
}
END_TEST

START_TEST(rmsnorm_expansion) {
  kf_value x = IN("x", KF_F32, 6, 32), w = IN("w", KF_F32, 32);
  kf_value y = kf_rmsnorm(G, x, w, 1e-6);
  HAS(y, KF_F32, 6, 32);
  EXPANDS(2, "mul mean const add rsqrt mul mul");
  ck_assert_int_eq(node(2)->args[0], x);
  ck_assert_int_eq(node(2)->args[1], x);
  ck_assert_uint_eq(node(3)->axes, 0x2);
  ck_assert_double_eq(node(4)->value, (double)1e-6f);
  ck_assert_int_eq(node(7)->args[0], x); /* x * rsqrt(...) */
  ck_assert_int_eq(node(8)->args[1], w);
  fresh_graph();
  x = IN("x", KF_BF16, 6, 32);
  w = IN("w", KF_BF16, 32);
  y = kf_rmsnorm(G, x, w, 1e-6);
  HAS(y, KF_BF16, 6, 32);
  EXPANDS(2, "cast mul mean const add rsqrt mul cast mul cast");
  ck_assert_int_eq(node(2)->dtype, KF_F32);
  ck_assert_int_eq(node(9)->args[0], w);
  fresh_graph();
  x = IN("x", KF_F64, 5);
  y = kf_rmsnorm(G, x, KF_NONE, 1e-6);
  HAS(y, KF_F64, 5);
  EXPANDS(1, "mul mean const add rsqrt mul");
  ck_assert_int_eq(node(3)->dtype, KF_F64);
  ck_assert_double_eq(node(3)->value, 1e-6);
}
END_TEST

START_TEST(composite_errors) {
  kf_value x = IN("x", KF_I32, 3, 4);
  FAILS(kf_softmax(G, x, -1), KF_ERR_DTYPE, "node %1 (softmax)", "floating", "i32");
  fresh_graph();
  x = IN("x", KF_F32, 3, 4);
  FAILS(kf_log_softmax(G, x, 2), KF_ERR_INVALID_ARG, "node %1 (log_softmax)", "axis 2", "-2..1");
  fresh_graph();
  x = IN0("x", KF_F32);
  FAILS(kf_softmax(G, x, -1), KF_ERR_INVALID_ARG, "(softmax)", "axis -1");
  fresh_graph();
  x = IN0("x", KF_F32);
  FAILS(kf_rmsnorm(G, x, KF_NONE, 1e-6), KF_ERR_INVALID_ARG, "(rmsnorm)");
  fresh_graph();
  x = IN("x", KF_F32, 3, 4);
  kf_value w = IN("w", KF_F16, 4);
  FAILS(kf_layernorm(G, x, w, KF_NONE, 1e-5), KF_ERR_DTYPE, "node %2 (layernorm)", "share a dtype");
  fresh_graph();
  x = IN("x", KF_F32, 3, 4);
  w = IN("w", KF_F32, 1, 4);
  FAILS(kf_rmsnorm(G, x, w, 1e-5), KF_ERR_SHAPE, "(rmsnorm)", "weight %1 w f32[1,4]", "shape [4]");
  fresh_graph();
  x = IN("x", KF_F32, 3, 4);
  kf_value b = IN("b", KF_F32, 3);
  FAILS(kf_layernorm(G, x, KF_NONE, b, 1e-5), KF_ERR_SHAPE, "(layernorm)", "bias %1 b f32[3]");
  fresh_graph();
  x = IN("x", KF_F32, 3, 4);
  FAILS(kf_layernorm(G, x, 77, KF_NONE, 1e-5), KF_ERR_INVALID_ARG, "(layernorm)", "weight");
  fresh_graph();
  x = IN("x", KF_F32, 3, 4);
  FAILS(kf_layernorm(G, x, KF_NONE, KF_NONE, NAN), KF_ERR_INVALID_ARG, "(layernorm)", "eps");
  fresh_graph();
  x = IN("x", KF_F32, 3, 4);
  FAILS(kf_rmsnorm(G, x, KF_NONE, -1e-6), KF_ERR_INVALID_ARG, "(rmsnorm)", "eps");
  /* Nothing was appended by a failing composite. */
  ck_assert_int_eq(kf_graph_num_values(G), 1);
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("builder_composite");
  TCase *tc = tcase("composite");
  tcase_add_test(tc, softmax_f32);
  tcase_add_test(tc, softmax_bf16);
  tcase_add_test(tc, log_softmax_expansion);
  tcase_add_test(tc, logsumexp_expansion);
  tcase_add_test(tc, layernorm_f32);
  tcase_add_test(tc, layernorm_bf16);
  tcase_add_test(tc, rmsnorm_expansion);
  tcase_add_test(tc, composite_errors);
  suite_add_tcase(s, tc);
  return s;
}
