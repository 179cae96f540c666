/* test_builder_shape.c - builders that change shapes: reductions (axes
 * normalization, keepdim, dtype rules), reshape, transpose, broadcast_to and
 * matmul, with every error path. */
#include "ir/dtype.h"
#include "test_builder.h"

static void fresh_graph(void) {
  teardown_graph();
  setup_graph();
}

typedef kf_value (*reduce_fn)(kf_graph *, kf_value, int, const int *, bool);

START_TEST(reduce_axes) {
  kf_value x = IN("x", KF_F32, 2, 3, 4, 5);
  kf_value y = kf_sum(G, x, 2, (const int[]){-1, 1}, false);
  HAS(y, KF_F32, 2, 4);
  ck_assert_uint_eq(G->nodes[y].axes, 0x2 | 0x8);
  ck_assert(!G->nodes[y].keepdim);
  ck_assert_str_eq(kf_value_op(G, y), "sum");
  y = kf_mean(G, x, 1, (const int[]){-4}, true);
  HAS(y, KF_F32, 1, 3, 4, 5);
  ck_assert_uint_eq(G->nodes[y].axes, 0x1);
  ck_assert(G->nodes[y].keepdim);
  y = kf_max(G, x, 0, NULL, false);
  HAS0(y, KF_F32);
  ck_assert_uint_eq(G->nodes[y].axes, 0xF);
  y = kf_min(G, x, 0, NULL, true);
  HAS(y, KF_F32, 1, 1, 1, 1);
  y = kf_sum(G, x, 4, (const int[]){3, 2, 1, 0}, false);
  HAS0(y, KF_F32);
  ck_assert_uint_eq(G->nodes[y].axes, 0xF);
  /* A scalar reduces to itself. */
  kf_value s = kf_scalar(G, 3.0, KF_I32);
  HAS0(kf_sum(G, s, 0, NULL, true), KF_I32);
  ck_assert_uint_eq(G->nodes[kf_graph_num_values(G) - 1].axes, 0);
  /* Rank 8: the mask uses every bit. */
  kf_value big = IN("big", KF_I64, 2, 1, 2, 1, 2, 1, 2, 3);
  y = kf_sum(G, big, 1, (const int[]){7}, false);
  HAS(y, KF_I64, 2, 1, 2, 1, 2, 1, 2);
  ck_assert_uint_eq(G->nodes[y].axes, 0x80);
  HAS0(kf_max(G, big, 0, NULL, false), KF_I64);
  ck_assert_uint_eq(G->nodes[kf_graph_num_values(G) - 1].axes, 0xFF);
}
END_TEST

START_TEST(reduce_dtypes) {
  static const struct {
    const char *name;
    reduce_fn fn;
    bool float_only;
  } ops[] = {{"sum", kf_sum, false},
             {"mean", kf_mean, true},
             {"max", kf_max, false},
             {"min", kf_min, false}};
  for (size_t i = 0; i < 4; i++)
    for (int d = 0; d < KF_DTYPE_COUNT; d++) {
      fresh_graph();
      kf_value x = IN("x", (kf_dtype)d, 2, 3);
      kf_value y = ops[i].fn(G, x, 1, (const int[]){0}, false);
      bool ok = ops[i].float_only ? ir_dtype_is_float((kf_dtype)d) : d != KF_BOOL;
      if (ok) {
        HAS(y, (kf_dtype)d, 3);
        ck_assert_str_eq(kf_value_op(G, y), ops[i].name);
      } else {
        FAILS(y, KF_ERR_DTYPE, ops[i].name, kf_dtype_name((kf_dtype)d), "use cast");
      }
    }
}
END_TEST

START_TEST(reduce_errors) {
  kf_value x = IN("x", KF_F32, 3, 4);
  FAILS(kf_sum(G, x, 1, (const int[]){2}, false), KF_ERR_INVALID_ARG, "node %1 (sum)",
        "axis 2 is out of range", "%0 x f32[3,4]", "-2..1");
  fresh_graph();
  x = IN("x", KF_F32, 3, 4);
  FAILS(kf_mean(G, x, 1, (const int[]){-3}, false), KF_ERR_INVALID_ARG, "(mean)", "axis -3");
  fresh_graph();
  x = IN("x", KF_F32, 3, 4);
  FAILS(kf_max(G, x, 2, (const int[]){1, -1}, false), KF_ERR_INVALID_ARG, "(max)",
        "axis -1 is given twice");
  fresh_graph();
  x = IN("x", KF_F32, 3, 4);
  FAILS(kf_min(G, x, 3, (const int[]){0, 1, 0}, false), KF_ERR_INVALID_ARG, "(min)", "3 axes");
  fresh_graph();
  x = IN("x", KF_F32, 3, 4);
  FAILS(kf_sum(G, x, -1, NULL, false), KF_ERR_INVALID_ARG, "(sum)");
  fresh_graph();
  x = IN("x", KF_F32, 3, 4);
  FAILS(kf_sum(G, x, 1, NULL, false), KF_ERR_INVALID_ARG, "(sum)", "axes array");
  fresh_graph();
  FAILS(kf_sum(G, 0, 0, NULL, false), KF_ERR_INVALID_ARG, "(sum)", "operand x");
}
END_TEST

START_TEST(reshape_rules) {
  kf_value x = IN("x", KF_BF16, 2, 3, 4);
  kf_value y = kf_reshape(G, x, 2, (const int64_t[]){6, 4});
  HAS(y, KF_BF16, 6, 4);
  ck_assert_str_eq(kf_value_op(G, y), "reshape");
  HAS(kf_reshape(G, x, 3, (const int64_t[]){-1, 2, 3}), KF_BF16, 4, 2, 3);
  HAS(kf_reshape(G, x, 2, (const int64_t[]){4, -1}), KF_BF16, 4, 6);
  HAS(kf_reshape(G, x, 1, (const int64_t[]){-1}), KF_BF16, 24);
  HAS(kf_reshape(G, x, 5, (const int64_t[]){1, 24, 1, 1, 1}), KF_BF16, 1, 24, 1, 1, 1);
  kf_value one = IN("one", KF_F32, 1, 1);
  HAS0(kf_reshape(G, one, 0, NULL), KF_F32);
  HAS(kf_reshape(G, kf_scalar(G, 1, KF_I32), 2, (const int64_t[]){1, -1}), KF_I32, 1, 1);
  FAILS(kf_reshape(G, x, 2, (const int64_t[]){5, 5}), KF_ERR_SHAPE, "(reshape)",
        "cannot reshape %0 x bf16[2,3,4] (24 elements) to [5,5]");
  fresh_graph();
  x = IN("x", KF_F32, 2, 3, 4);
  FAILS(kf_reshape(G, x, 2, (const int64_t[]){5, -1}), KF_ERR_SHAPE, "node %1 (reshape)", "[5,-1]");
  fresh_graph();
  x = IN("x", KF_F32, 2, 3, 4);
  FAILS(kf_reshape(G, x, 2, (const int64_t[]){-1, -1}), KF_ERR_INVALID_ARG, "(reshape)", "one -1");
  fresh_graph();
  x = IN("x", KF_F32, 2, 3, 4);
  FAILS(kf_reshape(G, x, 2, (const int64_t[]){0, 24}), KF_ERR_INVALID_ARG, "dimension 0 = 0");
  fresh_graph();
  x = IN("x", KF_F32, 2, 3, 4);
  FAILS(kf_reshape(G, x, 2, (const int64_t[]){-2, 12}), KF_ERR_INVALID_ARG, "(reshape)");
  fresh_graph();
  x = IN("x", KF_F32, 2, 3, 4);
  FAILS(kf_reshape(G, x, 9, (const int64_t[]){1, 1, 1, 1, 1, 1, 1, 1, 24}), KF_ERR_INVALID_ARG,
        "target rank 9");
  fresh_graph();
  x = IN("x", KF_F32, 2, 3, 4);
  FAILS(kf_reshape(G, x, 1, NULL), KF_ERR_INVALID_ARG, "(reshape)");
  fresh_graph();
  x = IN("x", KF_F32, 2);
  const int64_t huge[3] = {INT64_C(1) << 40, INT64_C(1) << 40, -1};
  FAILS(kf_reshape(G, x, 3, huge), KF_ERR_SHAPE, "(reshape)");
}
END_TEST

START_TEST(transpose_rules) {
  kf_value x = IN("x", KF_I32, 2, 3, 4);
  kf_value y = kf_transpose(G, x, (const int[]){2, 0, 1});
  HAS(y, KF_I32, 4, 2, 3);
  ck_assert_int_eq(G->nodes[y].perm[0], 2);
  ck_assert_int_eq(G->nodes[y].perm[1], 0);
  ck_assert_int_eq(G->nodes[y].perm[2], 1);
  ck_assert_str_eq(kf_value_op(G, y), "transpose");
  HAS(kf_transpose(G, x, (const int[]){0, 1, 2}), KF_I32, 2, 3, 4);
  HAS0(kf_transpose(G, kf_scalar(G, 1, KF_F32), NULL), KF_F32);
  FAILS(kf_transpose(G, x, (const int[]){0, 0, 1}), KF_ERR_INVALID_ARG, "(transpose)",
        "perm[1] = 0", "0..2", "%0 x i32[2,3,4]");
  fresh_graph();
  x = IN("x", KF_I32, 2, 3);
  FAILS(kf_transpose(G, x, (const int[]){-1, 0}), KF_ERR_INVALID_ARG, "perm[0] = -1");
  fresh_graph();
  x = IN("x", KF_I32, 2, 3);
  FAILS(kf_transpose(G, x, (const int[]){1, 2}), KF_ERR_INVALID_ARG, "perm[1] = 2");
  fresh_graph();
  x = IN("x", KF_I32, 2, 3);
  FAILS(kf_transpose(G, x, NULL), KF_ERR_INVALID_ARG, "perm is NULL");
}
END_TEST

START_TEST(broadcast_to_rules) {
  kf_value x = IN("x", KF_F16, 3, 1);
  kf_value y = kf_broadcast_to(G, x, 3, (const int64_t[]){2, 3, 4});
  HAS(y, KF_F16, 2, 3, 4);
  ck_assert_str_eq(kf_value_op(G, y), "broadcast_to");
  HAS(kf_broadcast_to(G, x, 2, (const int64_t[]){3, 1}), KF_F16, 3, 1);
  HAS(kf_broadcast_to(G, kf_scalar(G, 0, KF_F16), 2, (const int64_t[]){5, 6}), KF_F16, 5, 6);
  FAILS(kf_broadcast_to(G, x, 2, (const int64_t[]){4, 4}), KF_ERR_SHAPE, "(broadcast_to)",
        "cannot broadcast %0 x f16[3,1] to [4,4]");
  fresh_graph();
  x = IN("x", KF_F16, 3, 1);
  FAILS(kf_broadcast_to(G, x, 1, (const int64_t[]){3}), KF_ERR_SHAPE, "to [3]");
  fresh_graph();
  x = IN("x", KF_F16, 3, 1);
  FAILS(kf_broadcast_to(G, x, 2, (const int64_t[]){3, -1}), KF_ERR_INVALID_ARG, "(broadcast_to)",
        "dimension 1 = -1");
  fresh_graph();
  x = IN("x", KF_F16, 3, 1);
  FAILS(kf_broadcast_to(G, x, -1, NULL), KF_ERR_INVALID_ARG, "target rank -1");
}
END_TEST

START_TEST(matmul_rules) {
  kf_value a = IN("a", KF_BF16, 5, 3), b = IN("b", KF_BF16, 3, 7);
  kf_value y = kf_matmul(G, a, b);
  HAS(y, KF_BF16, 5, 7);
  ck_assert_str_eq(kf_value_op(G, y), "matmul");
  ck_assert_int_eq(G->nodes[y].args[0], a);
  ck_assert_int_eq(G->nodes[y].args[1], b);
  kf_value ba = IN("ba", KF_BF16, 4, 1, 5, 3), bb = IN("bb", KF_BF16, 6, 3, 7);
  HAS(kf_matmul(G, ba, bb), KF_BF16, 4, 6, 5, 7);
  HAS(kf_matmul(G, ba, b), KF_BF16, 4, 1, 5, 7);
  HAS(kf_matmul(G, a, bb), KF_BF16, 6, 5, 7);
  kf_value ia = IN("ia", KF_I32, 2, 2);
  HAS(kf_matmul(G, ia, ia), KF_I32, 2, 2);
  FAILS(kf_matmul(G, a, a), KF_ERR_SHAPE, "(matmul)", "inner dimensions differ (3 vs 5)",
        "%0 a bf16[5,3]");
  fresh_graph();
  a = IN("a", KF_F32, 2, 5, 3);
  b = IN("b", KF_F32, 4, 3, 7);
  FAILS(kf_matmul(G, a, b), KF_ERR_SHAPE, "node %2 (matmul)", "leading", "f32[2,5,3]",
        "f32[4,3,7]");
  fresh_graph();
  a = IN("a", KF_F32, 3);
  b = IN("b", KF_F32, 3, 7);
  FAILS(kf_matmul(G, a, b), KF_ERR_SHAPE, "(matmul)", "rank >= 2", "%0 a f32[3]");
  fresh_graph();
  a = IN("a", KF_F32, 2, 3);
  b = IN("b", KF_F16, 3, 7);
  FAILS(kf_matmul(G, a, b), KF_ERR_DTYPE, "(matmul)", "share a dtype");
  fresh_graph();
  a = IN("a", KF_BOOL, 2, 2);
  FAILS(kf_matmul(G, a, a), KF_ERR_DTYPE, "(matmul)", "numeric", "bool");
  fresh_graph();
  a = IN("a", KF_F32, 2, 2);
  FAILS(kf_matmul(G, a, KF_NONE), KF_ERR_INVALID_ARG, "(matmul)", "operand b");
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("builder_shape");
  TCase *tc = tcase("shape");
  tcase_add_test(tc, reduce_axes);
  tcase_add_test(tc, reduce_dtypes);
  tcase_add_test(tc, reduce_errors);
  tcase_add_test(tc, reshape_rules);
  tcase_add_test(tc, transpose_rules);
  tcase_add_test(tc, broadcast_to_rules);
  tcase_add_test(tc, matmul_rules);
  suite_add_tcase(s, tc);
  return s;
}
