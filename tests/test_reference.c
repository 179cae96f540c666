/* test_reference.c - the reference interpreter as a whole: composites
 * against hand-computed values, reading and writing every host dtype,
 * several outputs, long graphs, and every error path. Elementwise ops are
 * in test_reference_pointwise.c, reductions, layout and matmul in
 * test_reference_shape.c. */
#include "core/ctx.h"
#include "ref_util.h"

/* ---- composites ---------------------------------------------------------------- */

START_TEST(softmax_hand_values) {
  kf_value x = IN("x", KF_F32, 2, 3);
  ref_out(kf_softmax(G, x, -1));
  double out[6];
  /* Row 2 is row 1 shifted: softmax does not change. */
  RUN(out, (double[]){1, 2, 3, 101, 102, 103});
  EXPECT(out, 1e-7, 0.09003057317038046, 0.24472847105479764, 0.6652409557748218,
         0.09003057317038046, 0.24472847105479764, 0.6652409557748218);
  for (int r = 0; r < 2; r++)
    ck_assert(fabs(out[3 * r] + out[3 * r + 1] + out[3 * r + 2] - 1.0) < 1e-6);
}
END_TEST

/* Along axis 0 of a [3,2]: columns are the rows above. */
START_TEST(softmax_axis0_bf16) {
  kf_value x = IN("x", KF_BF16, 3, 2);
  kf_value y = kf_softmax(G, x, 0);
  ref_out(y);
  ck_assert_int_eq(kf_value_dtype(G, y), KF_BF16);
  double out[6];
  RUN(out, (double[]){1, 0, 2, 0, 3, 0});
  /* 0.0900306 -> 0.08984375 (bf16 ulp 2^-11 in [2^-4, 2^-3)),
   * 0.2447285 -> 0.2451171875, 0.6652410 -> 0.6640625, 1/3 -> 0.333984375. */
  EXPECT(out, 0, 0.08984375, 0.333984375, 0.2451171875, 0.333984375, 0.6640625, 0.333984375);
}
END_TEST

START_TEST(log_softmax_hand_values) {
  kf_value x = IN("x", KF_F64, 3);
  ref_out(kf_log_softmax(G, x, 0));
  double out[3];
  RUN(out, (double[]){1, 2, 3});
  EXPECT(out, 1e-15, -2.4076059644443806, -1.4076059644443804, -0.4076059644443804);
}
END_TEST

/* Stable: a row near 1000 (exp overflows f64 past 709) is the row near 1
 * shifted; a row of -inf (all masked) is -inf and one holding +inf is
 * +inf, where m + log(sum(exp(x - m))) alone is NaN; NaN stays NaN. */
START_TEST(logsumexp_hand_values) {
  kf_value x = IN("x", KF_F64, 5, 3);
  kf_value y = kf_logsumexp(G, x, -1);
  ck_assert_int_eq(kf_value_rank(G, y), 1);
  ref_out(y);
  double out[5];
  RUN(out, (double[]){1, 2, 3, 1001, 1002, 1003, -INFINITY, -INFINITY, -INFINITY, -INFINITY, 0,
                      INFINITY, 1, NAN, 2});
  const double l = 3.4076059644443806; /* log(e + e^2 + e^3) */
  EXPECT(out, 1e-15, l, 1000 + l, -INFINITY, INFINITY, NAN);
}
END_TEST

/* Random f32 and bf16 values, both axes, against the sum in long double
 * (the reference rounds each node to f32; the bf16 result once more). */
START_TEST(logsumexp_against_long_double) {
  enum { R = 6, C = 37 };
  kf_value x = IN("x", KF_F32, R, C), h = IN("h", KF_BF16, R, C);
  ref_out(kf_logsumexp(G, x, 1));
  ref_out(kf_logsumexp(G, x, 0));
  ref_out(kf_logsumexp(G, h, -1));
  double in[R * C], hb[R * C];
  unsigned seed = 7;
  for (int i = 0; i < R * C; i++) {
    seed = seed * 1103515245u + 12345u;
    in[i] = (float)(((double)(seed >> 8) / (1 << 24)) * 40.0 - 20.0);
    hb[i] = in[i];
  }
  ref_bind(0, in);
  ref_bind(1, hb);
  ck_assert_int_eq(ref_exec(), KF_OK);
  for (int axis = 0; axis < 3; axis++) {
    int n = axis == 1 ? C : R, len = axis == 1 ? R : C;
    for (int i = 0; i < n; i++) {
      long double m = -INFINITY, s = 0;
      for (int j = 0; j < len; j++) {
        double v = axis == 1   ? in[j * C + i]
                   : axis == 0 ? in[i * C + j]
                               : ref_get(&INS[1], i * C + j);
        if (v > m) m = v;
      }
      for (int j = 0; j < len; j++) {
        double v = axis == 1   ? in[j * C + i]
                   : axis == 0 ? in[i * C + j]
                               : ref_get(&INS[1], i * C + j);
        s += expl(v - m);
      }
      double want = (double)(m + logl(s)), got = ref_get(&OUTS[axis], i);
      double tol = axis == 2 ? 1.0 / 128 : 1e-6; /* bf16: half an ulp, relative */
      ck_assert_msg(fabs(got - want) <= tol * fabs(want) + 1e-6, "axis %d row %d: %.9g, want %.9g",
                    axis, i, got, want);
    }
  }
}
END_TEST

/* [1,2,3,4]: mean 2.5, variance 1.25, so (x - 2.5) / sqrt(1.25). */
START_TEST(layernorm_hand_values) {
  kf_value x = IN("x", KF_F64, 2, 4), w = IN("w", KF_F64, 4), b = IN("b", KF_F64, 4);
  ref_out(kf_layernorm(G, x, KF_NONE, KF_NONE, 0.0));
  ref_out(kf_layernorm(G, x, w, b, 0.0));
  double out[8];
  RUN(out, (double[]){1, 2, 3, 4, 10, 20, 30, 40}, (double[]){1, 1, 2, 2}, (double[]){0, 1, 0, 1});
  const double n0 = -1.3416407864998738, n1 = -0.4472135954999579;
  EXPECT(out, 1e-15, n0, n1, -n1, -n0, n0, n1, -n1, -n0); /* scale-free */
  for (int k = 0; k < 4; k++) out[k] = ref_get(&OUTS[1], k);
  EXPECT(out, 1e-15, n0, n1 + 1, -2 * n1, -2 * n0 + 1);
}
END_TEST

/* eps matters for a constant row: 0 / sqrt(0 + eps) is 0, not NaN. */
START_TEST(layernorm_eps_constant_row) {
  kf_value x = IN("x", KF_F32, 3);
  ref_out(kf_layernorm(G, x, KF_NONE, KF_NONE, 1e-5));
  double out[3];
  RUN(out, (double[]){5, 5, 5});
  EXPECT(out, 0, 0, 0, 0);
}
END_TEST

/* [1,2,3,4]: mean square 7.5, so x / sqrt(7.5), then times w. */
START_TEST(rmsnorm_hand_values) {
  kf_value x = IN("x", KF_F64, 4), w = IN("w", KF_F64, 4);
  ref_out(kf_rmsnorm(G, x, KF_NONE, 0.0));
  ref_out(kf_rmsnorm(G, x, w, 0.0));
  double out[4];
  RUN(out, (double[]){1, 2, 3, 4}, (double[]){2, 1, 0, -1});
  EXPECT(out, 1e-15, 0.3651483716701107, 0.7302967433402214, 1.0954451150103321,
         1.4605934866804429);
  for (int k = 0; k < 4; k++) out[k] = ref_get(&OUTS[1], k);
  EXPECT(out, 1e-15, 0.7302967433402214, 0.7302967433402214, 0, -1.4605934866804429);
}
END_TEST

START_TEST(rmsnorm_f16) {
  kf_value x = IN("x", KF_F16, 4);
  ref_out(kf_rmsnorm(G, x, KF_NONE, 1e-6));
  double out[4];
  RUN(out, (double[]){1, 2, 3, 4});
  /* f16 values of the above: ulps 2^-12, 2^-11, 2^-10, 2^-10. */
  EXPECT(out, 0, 0.365234375, 0.73046875, 1.095703125, 1.4609375);
}
END_TEST

/* ---- host dtypes, outputs, graph shapes ------------------------------------------------ */

/* Half-precision inputs are read exactly, specials included. */
START_TEST(read_write_half) {
  kf_value h = IN("h", KF_F16, 4), b = IN("b", KF_BF16, 4);
  ref_out(kf_cast(G, h, KF_F64));
  ref_out(kf_cast(G, b, KF_F64));
  ref_out(h); /* an input may itself be an output */
  double out[4];
  RUN(out, (double[]){0x1p-24, -INFINITY, NAN, 65504}, (double[]){0x1p-133, 3e38, -0.0, 1.5});
  EXPECT(out, 0, 0x1p-24, -INFINITY, NAN, 65504);
  for (int k = 0; k < 4; k++) out[k] = ref_get(&OUTS[1], k);
  EXPECT(out, 0, 0x1p-133, 3.00405527047391e+38, -0.0, 1.5); /* 3e38 in bf16 */
  ck_assert(memcmp(OUTS[2].data, INS[0].data, 4 * sizeof(uint16_t)) == 0);
}
END_TEST

/* A value read by later nodes and also an output survives to the end. */
START_TEST(output_also_used_later) {
  kf_value x = IN("x", KF_F32, 3);
  kf_value e = kf_exp(G, x);
  ref_out(e);
  ref_out(kf_add(G, e, kf_scalar(G, 1, KF_F32)));
  ref_out(kf_mul(G, e, e));
  double out[3];
  RUN(out, (double[]){0, 0, 0});
  EXPECT(out, 0, 1, 1, 1);
  for (int k = 0; k < 3; k++) ck_assert(ref_get(&OUTS[1], k) == 2 && ref_get(&OUTS[2], k) == 1);
}
END_TEST

/* A long chain: operands are freed as it goes, the result is exact. */
START_TEST(long_chain) {
  kf_value x = IN("x", KF_F64, 1024);
  kf_value one = kf_scalar(G, 1, KF_F64);
  kf_value v = x;
  for (int i = 0; i < 2000; i++) v = kf_add(G, v, one);
  kf_value dead = kf_exp(G, x); /* unused: never needed by an output */
  (void)dead;
  ref_out(v);
  double in[1024], out[1024];
  for (int k = 0; k < 1024; k++) in[k] = k;
  RUN(out, in);
  for (int k = 0; k < 1024; k++) ck_assert(out[k] == k + 2000);
}
END_TEST

/* The interpreter logs what it held at most: a chain of 100 adds on 1024
 * doubles holds two buffers and the constant at a time, not 101, and the
 * dead exp is never computed. */
static char LOGGED[2048];
static void capture(void *user, kf_log_level level, const char *comp, const char *msg) {
  (void)user;
  (void)level;
  if (strcmp(comp, "ir") == 0 && strstr(msg, "reference:"))
    snprintf(LOGGED, sizeof LOGGED, "%s", msg);
}

START_TEST(frees_after_last_use) {
  kf_ctx *ctx = NULL;
  ck_assert_int_eq(kf_ctx_create(&ctx), KF_OK);
  kf_ctx_set_log(ctx, capture, NULL);
  ctx->levels[LOG_IR] = KF_LOG_DEBUG;
  kf_graph_destroy(G);
  ck_assert_int_eq(kf_graph_create(ctx, &G), KF_OK);
  kf_value x = IN("x", KF_F64, 1024);
  kf_value one = kf_scalar(G, 1, KF_F64), v = x;
  for (int i = 0; i < 100; i++) v = kf_add(G, v, one);
  kf_exp(G, x); /* dead */
  ref_out(v);
  double in[1024] = {0}, out[1024];
  LOGGED[0] = '\0';
  RUN(out, in);
  ck_assert(out[1023] == 100);
  int computed = -1, total = -1;
  long long peak = -1;
  ck_assert_msg(sscanf(LOGGED, "reference: %d of %d values computed, peak %lld bytes held",
                       &computed, &total, &peak) == 3,
                "log line: '%s'", LOGGED);
  ck_assert_int_eq(computed, 102);
  ck_assert_int_eq(total, 103);
  ck_assert_int_eq(peak, 2 * 1024 * 8 + 8);
  kf_graph_destroy(G);
  G = NULL;
  kf_ctx_destroy(ctx);
}
END_TEST

/* Constants alone, of every dtype; no inputs at all. */
START_TEST(constants_only) {
  ref_out(kf_scalar(G, 0.1, KF_BF16));
  ref_out(kf_scalar(G, -7, KF_I32));
  ref_out(kf_add(G, kf_scalar(G, 2, KF_I64), kf_scalar(G, 3, KF_I64)));
  ref_out(kf_scalar(G, 1, KF_BOOL));
  RUN_NO_INPUTS(NULL);
  ck_assert(ref_get(&OUTS[0], 0) == 0.10009765625);
  ck_assert_int_eq(((int32_t *)OUTS[1].data)[0], -7);
  ck_assert(((int64_t *)OUTS[2].data)[0] == 5);
  ck_assert_int_eq(((uint8_t *)OUTS[3].data)[0], 1);
}
END_TEST

/* Inputs are left as they were; bool inputs other than 0/1 read as true. */
START_TEST(inputs_untouched_bool_nonzero) {
  kf_value c = IN("c", KF_BOOL, 3), a = IN("a", KF_I32, 3);
  ref_out(kf_where(G, c, a, kf_neg(G, a)));
  ref_bind(0, (double[]){0, 1, 0});
  ref_bind(1, (double[]){4, 5, 6});
  ((uint8_t *)INS[0].data)[2] = 7;
  ck_assert_int_eq(ref_exec(), KF_OK);
  const int32_t *o = OUTS[0].data;
  ck_assert_int_eq(o[0], -4);
  ck_assert_int_eq(o[1], 5);
  ck_assert_int_eq(o[2], 6);
  ck_assert_int_eq(((uint8_t *)INS[0].data)[2], 7);
  ck_assert_int_eq(((int32_t *)INS[1].data)[0], 4);
}
END_TEST

/* ---- errors ------------------------------------------------------------------------------ */

static void two_input_graph(void) {
  kf_value x = IN("x", KF_F32, 4), r = IN("r", KF_BF16, 4);
  ref_out(kf_add(G, kf_cast(G, r, KF_F32), x));
  ref_bind(0, (double[]){1, 2, 3, 4});
  ref_bind(1, (double[]){1, 2, 3, 4});
  OUTS[0] = ref_host_like(kf_graph_output(G, 0));
}

START_TEST(error_counts) {
  two_input_graph();
  ck_assert_int_eq(kf_graph_run_reference(G, INS, 1, OUTS, 1), KF_ERR_INVALID_ARG);
  MSG_HAS("2 inputs, got 1");
  ck_assert_int_eq(kf_graph_run_reference(G, INS, 2, OUTS, 2), KF_ERR_INVALID_ARG);
  MSG_HAS("1 outputs, got 2");
  ck_assert_int_eq(kf_graph_run_reference(G, NULL, 2, OUTS, 1), KF_ERR_INVALID_ARG);
  MSG_HAS("inputs is NULL");
  ck_assert_int_eq(kf_graph_run_reference(G, INS, 2, NULL, 1), KF_ERR_INVALID_ARG);
  MSG_HAS("outputs is NULL");
  ck_assert_int_eq(kf_graph_run_reference(NULL, INS, 2, OUTS, 1), KF_ERR_INVALID_ARG);
  /* The graph still runs once the call is right. */
  ck_assert_int_eq(kf_graph_run_reference(G, INS, 2, OUTS, 1), KF_OK);
  ck_assert(ref_get(&OUTS[0], 3) == 8);
  ck_assert_int_eq(kf_graph_status(G), KF_OK);
}
END_TEST

START_TEST(error_dtype_names_tensor) {
  two_input_graph();
  INS[1].dtype = KF_F32;
  ck_assert_int_eq(kf_graph_run_reference(G, INS, 2, OUTS, 1), KF_ERR_INVALID_ARG);
  ck_assert_str_eq(kf_graph_errmsg(G), "input 1 'r': expected bf16[4], got f32[4]");
}
END_TEST

START_TEST(error_shape_and_rank) {
  two_input_graph();
  INS[0].shape[0] = 5;
  ck_assert_int_eq(kf_graph_run_reference(G, INS, 2, OUTS, 1), KF_ERR_INVALID_ARG);
  ck_assert_str_eq(kf_graph_errmsg(G), "input 0 'x': expected f32[4], got f32[5]");
  INS[0].shape[0] = 4;
  OUTS[0].rank = 2;
  OUTS[0].shape[1] = 1;
  ck_assert_int_eq(kf_graph_run_reference(G, INS, 2, OUTS, 1), KF_ERR_INVALID_ARG);
  MSG_HAS("output 0");
  MSG_HAS("expected f32[4], got f32[4,1]");
  OUTS[0].rank = 99;
  ck_assert_int_eq(kf_graph_run_reference(G, INS, 2, OUTS, 1), KF_ERR_INVALID_ARG);
  MSG_HAS("got f32 with rank 99");
}
END_TEST

START_TEST(error_null_data) {
  two_input_graph();
  void *keep = INS[1].data;
  INS[1].data = NULL;
  ck_assert_int_eq(kf_graph_run_reference(G, INS, 2, OUTS, 1), KF_ERR_INVALID_ARG);
  MSG_HAS("input 1 'r': data is NULL");
  INS[1].data = keep;
  keep = OUTS[0].data;
  OUTS[0].data = NULL;
  ck_assert_int_eq(kf_graph_run_reference(G, INS, 2, OUTS, 1), KF_ERR_INVALID_ARG);
  MSG_HAS("output 0");
  MSG_HAS("data is NULL");
  OUTS[0].data = keep;
}
END_TEST

/* A graph with a builder error keeps its status and first message. */
START_TEST(error_sticky_graph) {
  kf_value x = IN("x", KF_F32, 4), y = IN("y", KF_F32, 3);
  kf_value bad = kf_add(G, x, y);
  ck_assert_int_eq(bad, KF_NONE);
  kf_status st = kf_graph_status(G);
  ck_assert_int_ne(st, KF_OK);
  char first[1024];
  snprintf(first, sizeof first, "%s", kf_graph_errmsg(G));
  ref_bind(0, (double[]){1, 2, 3, 4});
  ref_bind(1, (double[]){1, 2, 3});
  kf_host_tensor out = INS[0];
  ck_assert_int_eq(kf_graph_run_reference(G, INS, 2, &out, 0), st);
  ck_assert_str_eq(kf_graph_errmsg(G), first);
}
END_TEST

START_TEST(error_no_outputs) {
  IN("x", KF_F32, 4);
  ref_bind(0, (double[]){1, 2, 3, 4});
  ck_assert_int_eq(kf_graph_run_reference(G, INS, 1, OUTS, 0), KF_ERR_INVALID_ARG);
  MSG_HAS("no outputs");
}
END_TEST

/* 2^61 f16 elements (2^62 bytes, the most a value may have; the reference
 * would hold 8 bytes each) cannot be held: a clean out-of-memory error
 * naming the value, before any allocation is tried, and nothing leaks. */
START_TEST(error_too_large) {
  kf_value x = IN("x", KF_F16, 1);
  kf_value big = kf_broadcast_to(G, x, 2, (const int64_t[]){INT64_C(1) << 31, INT64_C(1) << 30});
  ck_assert_int_eq(kf_set_name(G, big, "big"), KF_OK);
  ref_out(kf_sum(G, big, 0, NULL, false));
  ref_bind(0, (double[]){1});
  ck_assert_int_eq(ref_exec(), KF_ERR_OUT_OF_MEMORY);
  MSG_HAS("out of memory");
  MSG_HAS("big");
  MSG_HAS("[2147483648,1073741824]");
  ck_assert_int_eq(kf_graph_status(G), KF_OK); /* not sticky */
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("reference");
  TCase *tc = ref_tcase("composite");
  tcase_add_test(tc, softmax_hand_values);
  tcase_add_test(tc, softmax_axis0_bf16);
  tcase_add_test(tc, log_softmax_hand_values);
  tcase_add_test(tc, logsumexp_hand_values);
  tcase_add_test(tc, logsumexp_against_long_double);
  tcase_add_test(tc, layernorm_hand_values);
  tcase_add_test(tc, layernorm_eps_constant_row);
  tcase_add_test(tc, rmsnorm_hand_values);
  tcase_add_test(tc, rmsnorm_f16);
  suite_add_tcase(s, tc);
  tc = ref_tcase("run");
  tcase_add_test(tc, read_write_half);
  tcase_add_test(tc, output_also_used_later);
  tcase_add_test(tc, long_chain);
  tcase_add_test(tc, frees_after_last_use);
  tcase_add_test(tc, constants_only);
  tcase_add_test(tc, inputs_untouched_bool_nonzero);
  suite_add_tcase(s, tc);
  tc = ref_tcase("errors");
  tcase_add_test(tc, error_counts);
  tcase_add_test(tc, error_dtype_names_tensor);
  tcase_add_test(tc, error_shape_and_rank);
  tcase_add_test(tc, error_null_data);
  tcase_add_test(tc, error_sticky_graph);
  tcase_add_test(tc, error_no_outputs);
  tcase_add_test(tc, error_too_large);
  suite_add_tcase(s, tc);
  return s;
}
