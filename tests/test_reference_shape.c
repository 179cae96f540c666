/* test_reference_shape.c - the reference interpreter's reductions, layout
 * ops and matmul against hand-computed values. */
#include "ref_util.h"

/* x: f32[2,3,4] holding 0..23, so x[i][j][k] = 12i + 4j + k. */
static kf_value iota234(kf_dtype dt) {
  kf_value x = IN("x", dt, 2, 3, 4);
  return x;
}
static const double IOTA[24] = {0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11,
                                12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23};

static void expect_shape(kf_value v, int rank, const int64_t *shape) {
  ck_assert_int_eq(kf_value_rank(G, v), rank);
  for (int d = 0; d < rank; d++) ck_assert_int_eq(kf_value_shape(G, v)[d], shape[d]);
}

/* ---- reductions -------------------------------------------------------------------- */

START_TEST(sum_all) {
  kf_value x = iota234(KF_F32);
  kf_value y = kf_sum(G, x, 0, NULL, false);
  ref_out(y);
  ref_out(kf_sum(G, x, 0, NULL, true));
  expect_shape(y, 0, NULL);
  expect_shape(kf_graph_output(G, 1), 3, (const int64_t[]){1, 1, 1});
  double out[1];
  RUN(out, IOTA);
  EXPECT(out, 0, 276);
  ck_assert(ref_get(&OUTS[1], 0) == 276);
}
END_TEST

/* Over axis 0: x[0][j][k] + x[1][j][k] = 12 + 8j + 2k. */
START_TEST(sum_axis0) {
  kf_value x = iota234(KF_F32);
  kf_value y = kf_sum(G, x, 1, (const int[]){0}, false);
  ref_out(y);
  expect_shape(y, 2, (const int64_t[]){3, 4});
  double out[12];
  RUN(out, IOTA);
  for (int j = 0; j < 3; j++)
    for (int k = 0; k < 4; k++) ck_assert(out[j * 4 + k] == 12 + 8 * j + 2 * k);
}
END_TEST

/* Over the last axis, kept: sum_k (12i + 4j + k) = 48i + 16j + 6. */
START_TEST(sum_last_keepdim) {
  kf_value x = iota234(KF_F32);
  kf_value y = kf_sum(G, x, 1, (const int[]){-1}, true);
  ref_out(y);
  expect_shape(y, 3, (const int64_t[]){2, 3, 1});
  double out[6];
  RUN(out, IOTA);
  EXPECT(out, 0, 6, 22, 38, 54, 70, 86);
}
END_TEST

/* Over axes {0, 2}: 32j + 60; the mean divides by 8. */
START_TEST(sum_mean_two_axes) {
  kf_value x = iota234(KF_F32);
  ref_out(kf_sum(G, x, 2, (const int[]){0, 2}, false));
  ref_out(kf_mean(G, x, 2, (const int[]){2, 0}, true));
  expect_shape(kf_graph_output(G, 1), 3, (const int64_t[]){1, 3, 1});
  double out[3];
  RUN(out, IOTA);
  EXPECT(out, 0, 60, 92, 124);
  for (int k = 0; k < 3; k++) out[k] = ref_get(&OUTS[1], k);
  EXPECT(out, 0, 7.5, 11.5, 15.5);
}
END_TEST

/* max over axis 1: 12i + 8 + k; min over {0,1} kept: k. */
START_TEST(max_min_axes) {
  kf_value x = iota234(KF_F32);
  ref_out(kf_max(G, x, 1, (const int[]){1}, false));
  ref_out(kf_min(G, x, 2, (const int[]){0, 1}, true));
  expect_shape(kf_graph_output(G, 1), 3, (const int64_t[]){1, 1, 4});
  double out[8];
  RUN(out, IOTA);
  EXPECT(out, 0, 8, 9, 10, 11, 20, 21, 22, 23);
  for (int k = 0; k < 4; k++) out[k] = ref_get(&OUTS[1], k);
  EXPECT(out, 0, 0, 1, 2, 3);
}
END_TEST

/* A NaN anywhere in a row makes its max and min NaN, wherever it sits. */
START_TEST(max_min_nan) {
  kf_value x = IN("x", KF_F64, 3, 3);
  ref_out(kf_max(G, x, 1, (const int[]){1}, false));
  ref_out(kf_min(G, x, 1, (const int[]){1}, false));
  ref_out(kf_sum(G, x, 1, (const int[]){1}, false));
  double out[3];
  RUN(out, (double[]){NAN, 1, 3, 1, NAN, 3, -INFINITY, 2, 5});
  EXPECT(out, 0, NAN, NAN, 5);
  for (int k = 0; k < 3; k++) out[k] = ref_get(&OUTS[1], k);
  EXPECT(out, 0, NAN, NAN, -INFINITY);
  for (int k = 0; k < 3; k++) out[k] = ref_get(&OUTS[2], k);
  EXPECT(out, 0, NAN, NAN, -INFINITY);
}
END_TEST

START_TEST(sum_int_wraps) {
  kf_value a = IN("a", KF_I32, 3), b = IN("b", KF_I64, 2);
  ref_out(kf_sum(G, a, 0, NULL, false));
  ref_out(kf_sum(G, b, 0, NULL, false));
  ref_out(kf_max(G, a, 0, NULL, false));
  ref_bind(0, (double[]){INT32_MAX, 1, 5});
  ref_bind_i64(1, (const int64_t[]){INT64_MAX, 2});
  ck_assert_int_eq(ref_exec(), KF_OK);
  ck_assert_int_eq(((int32_t *)OUTS[0].data)[0], INT32_MIN + 5);
  ck_assert(((int64_t *)OUTS[1].data)[0] == INT64_MIN + 1);
  ck_assert_int_eq(((int32_t *)OUTS[2].data)[0], INT32_MAX);
}
END_TEST

/* Four 2^-9 terms added to 1 one by one in bf16 would each vanish; summed
 * in f64 and rounded once they make 1 + 2^-7. */
START_TEST(sum_bf16_rounds_once) {
  kf_value x = IN("x", KF_BF16, 5);
  ref_out(kf_sum(G, x, 0, NULL, false));
  ref_out(kf_mean(G, x, 0, NULL, false));
  double out[1];
  RUN(out, (double[]){1, 0x1p-9, 0x1p-9, 0x1p-9, 0x1p-9});
  EXPECT(out, 0, 1.0 + 0x1p-7);
  out[0] = ref_get(&OUTS[1], 0); /* (1 + 2^-7) / 5 = 0.2015625 -> bf16 */
  EXPECT(out, 0, 0.201171875);
}
END_TEST

/* ---- layout ------------------------------------------------------------------------------ */

START_TEST(reshape_keeps_order) {
  kf_value x = IN("x", KF_F32, 2, 3);
  kf_value y = kf_reshape(G, x, 3, (const int64_t[]){3, 1, -1});
  ref_out(y);
  expect_shape(y, 3, (const int64_t[]){3, 1, 2});
  double out[6];
  RUN(out, (double[]){1, 2, 3, 4, 5, 6});
  EXPECT(out, 0, 1, 2, 3, 4, 5, 6);
}
END_TEST

/* perm {2,0,1}: out[a][b][c] = x[b][c][a] = 12b + 4c + a, out is [4,2,3]. */
START_TEST(transpose_3d) {
  kf_value x = iota234(KF_F32);
  kf_value y = kf_transpose(G, x, (const int[]){2, 0, 1});
  ref_out(y);
  expect_shape(y, 3, (const int64_t[]){4, 2, 3});
  double out[24];
  RUN(out, IOTA);
  for (int a = 0; a < 4; a++)
    for (int b = 0; b < 2; b++)
      for (int c = 0; c < 3; c++) ck_assert(out[(a * 2 + b) * 3 + c] == 12 * b + 4 * c + a);
}
END_TEST

START_TEST(transpose_2d_int) {
  kf_value x = IN("x", KF_I64, 2, 3);
  ref_out(kf_transpose(G, x, (const int[]){1, 0}));
  double out[6];
  RUN(out, (double[]){1, 2, 3, 4, 5, 6});
  EXPECT(out, 0, 1, 4, 2, 5, 3, 6);
}
END_TEST

START_TEST(broadcast_to_shapes) {
  kf_value r = IN("r", KF_F32, 3), c = IN("c", KF_F32, 2, 1), s = IN0("s", KF_BOOL);
  ref_out(kf_broadcast_to(G, r, 2, (const int64_t[]){2, 3}));
  ref_out(kf_broadcast_to(G, c, 2, (const int64_t[]){2, 3}));
  ref_out(kf_broadcast_to(G, s, 2, (const int64_t[]){2, 2}));
  double out[6];
  RUN(out, (double[]){1, 2, 3}, (double[]){7, 8}, (double[]){1});
  EXPECT(out, 0, 1, 2, 3, 1, 2, 3);
  for (int k = 0; k < 6; k++) out[k] = ref_get(&OUTS[1], k);
  EXPECT(out, 0, 7, 7, 7, 8, 8, 8);
  for (int k = 0; k < 4; k++) out[k] = ref_get(&OUTS[2], k);
  EXPECT(out, 0, 1, 1, 1, 1);
}
END_TEST

/* ---- matmul -------------------------------------------------------------------------------- */

static const double A23[6] = {1, 2, 3, 4, 5, 6}, B32[6] = {7, 8, 9, 10, 11, 12};

START_TEST(matmul_2x3_3x2) {
  kf_value a = IN("a", KF_F32, 2, 3), b = IN("b", KF_F32, 3, 2);
  kf_value y = kf_matmul(G, a, b);
  ref_out(y);
  expect_shape(y, 2, (const int64_t[]){2, 2});
  double out[4];
  RUN(out, A23, B32);
  EXPECT(out, 0, 58, 64, 139, 154);
}
END_TEST

/* a: [2,2,3] (A, then 2A) against one B: [2,2,2]. */
START_TEST(matmul_batch_broadcast_b) {
  kf_value a = IN("a", KF_F64, 2, 2, 3), b = IN("b", KF_F64, 3, 2);
  kf_value y = kf_matmul(G, a, b);
  ref_out(y);
  expect_shape(y, 3, (const int64_t[]){2, 2, 2});
  double out[8];
  RUN(out, (double[]){1, 2, 3, 4, 5, 6, 2, 4, 6, 8, 10, 12}, B32);
  EXPECT(out, 0, 58, 64, 139, 154, 116, 128, 278, 308);
}
END_TEST

/* a: [2,1,2,3] (A, -A) and b: [3,3,2] (B, 0, I-like) broadcast to [2,3,2,2]. */
START_TEST(matmul_batch_broadcast_both) {
  kf_value a = IN("a", KF_F32, 2, 1, 2, 3), b = IN("b", KF_F32, 3, 3, 2);
  kf_value y = kf_matmul(G, a, b);
  ref_out(y);
  expect_shape(y, 4, (const int64_t[]){2, 3, 2, 2});
  double out[24];
  RUN(out, (double[]){1, 2, 3, 4, 5, 6, -1, -2, -3, -4, -5, -6},
      (double[]){7, 8, 9, 10, 11, 12, 0, 0, 0, 0, 0, 0, 1, 0, 0, 1, 0, 0});
  EXPECT(out, 0, 58, 64, 139, 154, 0, 0, 0, 0, 1, 2, 4, 5, /* batch 0 */
         -58, -64, -139, -154, 0, 0, 0, 0, -1, -2, -4, -5);
}
END_TEST

START_TEST(matmul_int_wraps) {
  kf_value a = IN("a", KF_I32, 1, 2), b = IN("b", KF_I32, 2, 1);
  ref_out(kf_matmul(G, a, b));
  double out[1];
  RUN(out, (double[]){65536, 3}, (double[]){65536, 5});
  EXPECT(out, 0, 15); /* 2^32 wraps to 0, plus 15 */
}
END_TEST

/* f16: 1 + 2^-11 + 2^-11 accumulated exactly is 1 + 2^-10; rounding each
 * partial sum to f16 would give 1. */
START_TEST(matmul_f16_rounds_once) {
  kf_value a = IN("a", KF_F16, 1, 3), b = IN("b", KF_F16, 3, 1);
  ref_out(kf_matmul(G, a, b));
  double out[1];
  RUN(out, (double[]){1, 0x1p-11, 0x1p-11}, (double[]){1, 1, 1});
  EXPECT(out, 0, 1.0 + 0x1p-10);
}
END_TEST

/* ---- rank 8, checked by decoding every index with division -------------------------- */

/* The row-major multi-index of flat position k in an all-2 shape of rank r. */
static void decode2(int64_t k, int r, int *idx) {
  for (int d = r - 1; d >= 0; d--, k /= 2) idx[d] = (int)(k % 2);
}

/* a: [2,1,2,1,2,1,2,1] + b: [1,2,1,2,1,2,1,2] -> [2]*8. a's value at
 * index i is its flat offset over the even axes, b's 100 times its own. */
START_TEST(broadcast_rank8) {
  kf_value a = IN("a", KF_F64, 2, 1, 2, 1, 2, 1, 2, 1), b = IN("b", KF_F64, 1, 2, 1, 2, 1, 2, 1, 2);
  ref_out(kf_add(G, a, b));
  double in_a[16], in_b[16], out[256];
  for (int k = 0; k < 16; k++) in_a[k] = k, in_b[k] = 100 * k;
  RUN(out, in_a, in_b);
  for (int k = 0; k < 256; k++) {
    int i[8], fa = 0, fb = 0;
    decode2(k, 8, i);
    for (int d = 0; d < 8; d += 2) fa = fa * 2 + i[d];
    for (int d = 1; d < 8; d += 2) fb = fb * 2 + i[d];
    ck_assert_msg(out[k] == fa + 100.0 * fb, "out[%d] = %g", k, out[k]);
  }
}
END_TEST

/* sum over axes {1,3,5,7} of x[2]*8 holding 0..255: each output adds the 16
 * flat offsets that share its even-axis digits. */
START_TEST(reduce_rank8) {
  kf_value x = IN("x", KF_I64, 2, 2, 2, 2, 2, 2, 2, 2);
  ref_out(kf_sum(G, x, 4, (const int[]){1, 3, -3, -1}, false));
  ref_out(kf_max(G, x, 4, (const int[]){0, 2, 4, 6}, true));
  double in[256], want[16] = {0}, wmax[16];
  for (int k = 0; k < 256; k++) in[k] = k;
  for (int k = 0; k < 16; k++) wmax[k] = -1;
  for (int k = 0; k < 256; k++) {
    int i[8], fe = 0, fo = 0;
    decode2(k, 8, i);
    for (int d = 0; d < 8; d += 2) fe = fe * 2 + i[d];
    for (int d = 1; d < 8; d += 2) fo = fo * 2 + i[d];
    want[fe] += k;
    if (k > wmax[fo]) wmax[fo] = k;
  }
  double out[16];
  RUN(out, in);
  ck_assert_int_eq(kf_value_rank(G, kf_graph_output(G, 1)), 8);
  for (int k = 0; k < 16; k++) {
    ck_assert_msg(out[k] == want[k], "sum[%d] = %g, want %g", k, out[k], want[k]);
    ck_assert(ref_get(&OUTS[1], k) == wmax[k]);
  }
}
END_TEST

/* perm {3,1,0,2} of x: [2,3,4,5] holding 0..119: out[a][b][c][d] is
 * x[c][b][d][a]. */
START_TEST(transpose_rank4) {
  kf_value x = IN("x", KF_F32, 2, 3, 4, 5);
  kf_value y = kf_transpose(G, x, (const int[]){3, 1, 0, 2});
  ref_out(y);
  expect_shape(y, 4, (const int64_t[]){5, 3, 2, 4});
  double in[120], out[120];
  for (int k = 0; k < 120; k++) in[k] = k;
  RUN(out, in);
  for (int k = 0; k < 120; k++) {
    int c4 = k % 4, c2 = k / 4 % 2, c3 = k / 8 % 3, c5 = k / 24; /* out index a b c d */
    ck_assert(out[k] == ((c2 * 3 + c3) * 4 + c4) * 5 + c5);
  }
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("reference_shape");
  TCase *tc = ref_tcase("reduce");
  tcase_add_test(tc, sum_all);
  tcase_add_test(tc, sum_axis0);
  tcase_add_test(tc, sum_last_keepdim);
  tcase_add_test(tc, sum_mean_two_axes);
  tcase_add_test(tc, max_min_axes);
  tcase_add_test(tc, max_min_nan);
  tcase_add_test(tc, sum_int_wraps);
  tcase_add_test(tc, sum_bf16_rounds_once);
  suite_add_tcase(s, tc);
  tc = ref_tcase("layout");
  tcase_add_test(tc, reshape_keeps_order);
  tcase_add_test(tc, transpose_3d);
  tcase_add_test(tc, transpose_2d_int);
  tcase_add_test(tc, broadcast_to_shapes);
  suite_add_tcase(s, tc);
  tc = ref_tcase("matmul");
  tcase_add_test(tc, matmul_2x3_3x2);
  tcase_add_test(tc, matmul_batch_broadcast_b);
  tcase_add_test(tc, matmul_batch_broadcast_both);
  tcase_add_test(tc, matmul_int_wraps);
  tcase_add_test(tc, matmul_f16_rounds_once);
  suite_add_tcase(s, tc);
  tc = ref_tcase("rank8");
  tcase_add_test(tc, broadcast_rank8);
  tcase_add_test(tc, reduce_rank8);
  tcase_add_test(tc, transpose_rank4);
  suite_add_tcase(s, tc);
  return s;
}
