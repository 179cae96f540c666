/* test_sizes.c - the size limit (KF_MAX_TENSOR_BYTES): every builder, the
 * YAML loader and the planner refuse a value or a plan whose element or byte
 * count does not fit, and sizes computed later never wrap. */
#include <stdlib.h>

#include "ir/build_common.h"
#include "ir/graph.h"
#include "ir/shape.h"
#include "test_builder.h"

#define P(k) (INT64_C(1) << (k))

START_TEST(helper_limits) {
  int64_t b = 0;
  ck_assert(ir_tensor_bytes(1, (int64_t[]){P(59)}, KF_F64, &b) && b == P(62));
  ck_assert(ir_tensor_bytes(1, (int64_t[]){P(62)}, KF_BOOL, &b) && b == P(62));
  /* The shapes: numel fits int64, the bytes do not. */
  ck_assert(!ir_tensor_bytes(1, (int64_t[]){P(61)}, KF_F64, &b));
  ck_assert(!ir_tensor_bytes(1, (int64_t[]){INT64_MAX}, KF_F64, &b));
  ck_assert(!ir_tensor_bytes(1, (int64_t[]){P(62) + 1}, KF_BOOL, &b));
  ck_assert(!ir_tensor_bytes(1, (int64_t[]){P(59) + 1}, KF_F64, &b));
  ck_assert(!ir_tensor_bytes(2, (int64_t[]){P(32), P(32)}, KF_BOOL, &b));
  ck_assert(!ir_tensor_bytes(1, (int64_t[]){4}, KF_DTYPE_COUNT, &b));
  ck_assert(ir_tensor_bytes(0, NULL, KF_F16, &b) && b == 2);
  int64_t sum = P(61);
  ck_assert(ir_bytes_add(&sum, P(61)) && sum == P(62));
  ck_assert(!ir_bytes_add(&sum, 1) && sum == P(62));
  ck_assert(!ir_bytes_add(&sum, -1));
  sum = INT64_MAX - 1;
  ck_assert(!ir_bytes_add(&sum, INT64_MAX));
}
END_TEST

START_TEST(input_bytes_overflow) {
  /* f64 [2^61]: 2^64 bytes, which once wrapped to "0 B". */
  FAILS(kf_input(G, "x", KF_F64, 1, (int64_t[]){P(61)}), KF_ERR_SHAPE, "input x",
        "f64[2305843009213693952]", "2^62 bytes");
}
END_TEST

START_TEST(input_max_numel) {
  FAILS(kf_input(G, "x", KF_F64, 1, (int64_t[]){INT64_MAX}), KF_ERR_SHAPE, "2^62 bytes");
}
END_TEST

START_TEST(input_at_limit) {
  HAS(IN("x", KF_F64, P(59)), KF_F64, P(59));
  HAS(IN("y", KF_BOOL, P(31), P(31)), KF_BOOL, P(31), P(31));
}
END_TEST

START_TEST(broadcast_to_numel_overflow) {
  kf_value x = IN("x", KF_F32, 1);
  FAILS(kf_broadcast_to(G, x, 2, (int64_t[]){P(40), P(40)}), KF_ERR_SHAPE, "broadcast_to",
        "2^62 bytes");
}
END_TEST

START_TEST(broadcast_to_bytes_overflow) {
  kf_value x = IN("x", KF_F32, 1);
  /* 2^61 elements fit int64; 2^63 bytes do not. */
  FAILS(kf_broadcast_to(G, x, 2, (int64_t[]){P(31), P(30)}), KF_ERR_SHAPE, "broadcast_to");
}
END_TEST

START_TEST(binary_broadcast_overflow) {
  kf_value a = IN("a", KF_F32, P(40), 1), b = IN("b", KF_F32, 1, P(40));
  FAILS(kf_add(G, a, b), KF_ERR_SHAPE, "(add)", "2^62 bytes");
}
END_TEST

START_TEST(matmul_overflow) {
  /* The batch broadcasts: [2^40,1,1] @ [1,1,2^30] is [2^40,1,2^30]. */
  kf_value a = IN("a", KF_F32, P(40), 1, 1), b = IN("b", KF_F32, 1, 1, P(30));
  FAILS(kf_matmul(G, a, b), KF_ERR_SHAPE, "matmul");
}
END_TEST

START_TEST(cast_widening_overflow) {
  /* The element count is unchanged; the bytes grow past the limit. */
  kf_value x = IN("x", KF_BOOL, P(61));
  FAILS(kf_cast(G, x, KF_F32), KF_ERR_SHAPE, "cast");
}
END_TEST

/* ir_append itself refuses, whoever calls it (the graph cache's loader
 * rebuilds nodes through it). */
START_TEST(append_checks_size) {
  ir_node n;
  ir_bld_node(&n, IR_OP_INPUT, KF_F64, 1, (int64_t[]){P(61)});
  FAILS(ir_append(G, &n), KF_ERR_SHAPE, "node %0 (input)", "2^62 bytes");
  teardown_graph();
  setup_graph();
  ir_bld_node(&n, IR_OP_INPUT, KF_F32, 2, (int64_t[]){4, -1});
  FAILS(ir_append(G, &n), KF_ERR_SHAPE, "dimension 1 < 0");
}
END_TEST

START_TEST(yaml_bytes_overflow) {
  static const char text[] =
      "kfuse: 1\n"
      "inputs:\n"
      "  x: {dtype: f64, shape: [2305843009213693952]}\n"
      "outputs: [x]\n";
  kf_ctx *ctx;
  ck_assert_int_eq(kf_ctx_create(&ctx), KF_OK);
  kf_graph *g = NULL;
  ck_assert_int_eq(kf_graph_load_yaml_string(ctx, text, sizeof text - 1, "big.yaml", &g),
                   KF_ERR_SHAPE);
  ck_assert_ptr_null(g);
  const char *m = kf_ctx_errmsg(ctx);
  ck_assert_msg(strstr(m, "big.yaml:3:") && strstr(m, "2^62 bytes"), "message: %s", m);
  kf_ctx_destroy(ctx);
}
END_TEST

/* Three tensors of 2^61 bytes each fit; the plan's 3 * 2^61 do not. */
START_TEST(plan_total_overflow) {
  kf_value a = IN("a", KF_F32, P(59)), b = IN("b", KF_F32, P(59));
  kf_set_output(G, kf_add(G, a, b));
  ck_assert_int_eq(kf_graph_status(G), KF_OK);
  kf_ctx *ctx;
  ck_assert_int_eq(kf_ctx_create(&ctx), KF_OK);
  kf_plan *plan = NULL;
  ck_assert_int_eq(kf_plan_create(ctx, G, NULL, &plan), KF_ERR_SHAPE);
  ck_assert_ptr_null(plan);
  ck_assert_msg(strstr(kf_ctx_errmsg(ctx), "2^62 bytes"), "message: %s", kf_ctx_errmsg(ctx));
  kf_ctx_destroy(ctx);
}
END_TEST

/* Two of 2^60 bytes and their sum: 3 * 2^60 fits, and is what is planned. */
START_TEST(plan_total_fits) {
  kf_value a = IN("a", KF_F32, P(58)), b = IN("b", KF_F32, P(58));
  kf_set_output(G, kf_add(G, a, b));
  kf_ctx *ctx;
  ck_assert_int_eq(kf_ctx_create(&ctx), KF_OK);
  kf_plan *plan = NULL;
  ck_assert_int_eq(kf_plan_create(ctx, G, NULL, &plan), KF_OK);
  char *d = kf_plan_describe(plan, KF_FORMAT_TEXT);
  ck_assert_ptr_nonnull(d);
  ck_assert_msg(strstr(d, "peak 3145728.0 TiB"), "peak is not 3 * 2^60 bytes in: %s", d);
  kf_free(d);
  kf_plan_destroy(plan);
  kf_ctx_destroy(ctx);
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("sizes");
  TCase *tc = tcase("limits");
  tcase_add_test(tc, helper_limits);
  tcase_add_test(tc, input_bytes_overflow);
  tcase_add_test(tc, input_max_numel);
  tcase_add_test(tc, input_at_limit);
  tcase_add_test(tc, broadcast_to_numel_overflow);
  tcase_add_test(tc, broadcast_to_bytes_overflow);
  tcase_add_test(tc, binary_broadcast_overflow);
  tcase_add_test(tc, matmul_overflow);
  tcase_add_test(tc, cast_widening_overflow);
  tcase_add_test(tc, append_checks_size);
  tcase_add_test(tc, yaml_bytes_overflow);
  tcase_add_test(tc, plan_total_overflow);
  tcase_add_test(tc, plan_total_fits);
  suite_add_tcase(s, tc);
  return s;
}
