/* test_reference_pointwise.c - the reference interpreter's elementwise ops
 * against hand-computed values: every unary and binary op with NaN, Inf
 * and -0 edges, integer wraparound, rounding to f16/bf16/f32, casts,
 * broadcasting, where and clamp. */
#include "ref_util.h"

typedef kf_value (*un_fn)(kf_graph *, kf_value);
typedef kf_value (*bin_fn)(kf_graph *, kf_value, kf_value);

/* ---- unary ---------------------------------------------------------------------- */

typedef struct un_case {
  const char *name;
  un_fn fn;
  int n;
  double in[6], want[6];
} un_case;

static const un_case un_cases[] = {
    {"neg", kf_neg, 4, {1.5, -0.0, INFINITY, NAN}, {-1.5, 0.0, -INFINITY, NAN}},
    {"abs", kf_abs, 4, {-2.0, -0.0, -INFINITY, NAN}, {2.0, 0.0, INFINITY, NAN}},
    {"exp", kf_exp, 5, {0, 1, -INFINITY, INFINITY, NAN}, {1, 2.718281828459045, 0, INFINITY, NAN}},
    {"log",
     kf_log,
     6,
     {1, 2, 0, -0.0, -1, INFINITY},
     {0, 0.6931471805599453, -INFINITY, -INFINITY, NAN, INFINITY}},
    {"sqrt", kf_sqrt, 5, {4, 2, -1, -0.0, INFINITY}, {2, 1.4142135623730951, NAN, -0.0, INFINITY}},
    {"rsqrt", kf_rsqrt, 5, {4, 0, -0.0, INFINITY, -4}, {0.5, INFINITY, -INFINITY, 0, NAN}},
    {"reciprocal",
     kf_reciprocal,
     5,
     {2, 0, -0.0, INFINITY, -INFINITY},
     {0.5, INFINITY, -INFINITY, 0, -0.0}},
    {"sin", kf_sin, 4, {0, -0.0, 0.5, INFINITY}, {0, -0.0, 0.479425538604203, NAN}},
    {"cos", kf_cos, 3, {0, 0.5, INFINITY}, {1, 0.8775825618903728, NAN}},
    {"tanh", kf_tanh, 5, {0, 0.5, INFINITY, -INFINITY, NAN}, {0, 0.46211715726000974, 1, -1, NAN}},
    {"sigmoid",
     kf_sigmoid,
     5,
     {0, 2, INFINITY, -INFINITY, NAN},
     {0.5, 0.8807970779778823, 1, 0, NAN}},
    {"relu", kf_relu, 4, {-1, 2, -INFINITY, NAN}, {0, 2, 0, NAN}},
    {"gelu",
     kf_gelu,
     5,
     {0, 1, -1, INFINITY, NAN},
     {0, 0.8413447460685429, -0.15865525393145707, INFINITY, NAN}},
    {"gelu_tanh",
     kf_gelu_tanh,
     4,
     {0, 1, -1, INFINITY},
     {0, 0.8411919906082768, -0.15880800939172324, INFINITY}},
    {"silu",
     kf_silu,
     4,
     {0, 1, -1, INFINITY},
     {0, 0.7310585786300049, -0.2689414213699951, INFINITY}},
    {"erf",
     kf_erf,
     5,
     {0, 1, 0.5, INFINITY, -INFINITY},
     {0, 0.8427007929497149, 0.5204998778130465, 1, -1}},
    {"floor", kf_floor, 5, {-1.5, 2.5, -0.0, INFINITY, NAN}, {-2, 2, -0.0, INFINITY, NAN}},
    {"ceil", kf_ceil, 5, {-1.5, 2.5, -0.5, -INFINITY, NAN}, {-1, 3, -0.0, -INFINITY, NAN}},
    {"sign", kf_sign, 6, {-3, 0, -0.0, 2, INFINITY, NAN}, {-1, 0, -0.0, 1, 1, NAN}},
};
#define N_UN (int)(sizeof un_cases / sizeof un_cases[0])

/* Each unary op on f64, where results are the exact math values. */
START_TEST(unary_f64) {
  const un_case *c = &un_cases[_i];
  kf_value x = ref_in_("x", KF_F64, 1, (const int64_t[]){c->n});
  ref_out(c->fn(G, x));
  double out[6];
  RUN(out, c->in);
  for (int k = 0; k < c->n; k++)
    ck_assert_msg(ref_close(out[k], c->want[k], 1e-15), "%s(%.17g) = %.17g, want %.17g", c->name,
                  c->in[k], out[k], c->want[k]);
}
END_TEST

/* The same in f32: inputs are exact in f32, results are the f64 values
 * rounded once to f32. */
START_TEST(unary_f32) {
  const un_case *c = &un_cases[_i];
  kf_value x = ref_in_("x", KF_F32, 1, (const int64_t[]){c->n});
  ref_out(c->fn(G, x));
  double out[6];
  RUN(out, c->in);
  for (int k = 0; k < c->n; k++) {
    double want = (double)(float)c->want[k];
    ck_assert_msg(ref_close(out[k], want, 0x1p-24), "%s(%.9g) = %.9g, want %.9g", c->name, c->in[k],
                  out[k], want);
  }
}
END_TEST

START_TEST(logical_not_any_dtype) {
  kf_value x = IN("x", KF_F32, 4);
  kf_value i = IN("i", KF_I32, 2);
  kf_value b = IN("b", KF_BOOL, 2);
  ref_out(kf_logical_not(G, x));
  ref_out(kf_logical_not(G, i));
  ref_out(kf_logical_not(G, b));
  ck_assert_int_eq(kf_value_dtype(G, kf_graph_output(G, 0)), KF_BOOL);
  RUN(NULL, (double[]){0, -0.0, 3, NAN}, (double[]){0, -5}, (double[]){0, 1});
  double o0[4], o1[2], o2[2];
  for (int k = 0; k < 4; k++) o0[k] = ref_get(&OUTS[0], k);
  for (int k = 0; k < 2; k++) o1[k] = ref_get(&OUTS[1], k), o2[k] = ref_get(&OUTS[2], k);
  EXPECT(o0, 0, 1, 1, 0, 0); /* NaN is not zero */
  EXPECT(o1, 0, 1, 0);
  EXPECT(o2, 0, 1, 0);
}
END_TEST

/* neg and abs of the most negative integer wrap to itself. */
START_TEST(unary_int_wrap) {
  kf_value x = IN("x", KF_I32, 5);
  ref_out(kf_neg(G, x));
  ref_out(kf_abs(G, x));
  ref_out(kf_relu(G, x));
  ref_out(kf_sign(G, x));
  RUN(NULL, (double[]){INT32_MIN, INT32_MAX, -7, 0, 3});
  const int32_t *neg = OUTS[0].data, *ab = OUTS[1].data, *re = OUTS[2].data, *sg = OUTS[3].data;
  int32_t want_neg[5] = {INT32_MIN, -INT32_MAX, 7, 0, -3};
  int32_t want_abs[5] = {INT32_MIN, INT32_MAX, 7, 0, 3};
  int32_t want_relu[5] = {0, INT32_MAX, 0, 0, 3};
  int32_t want_sign[5] = {-1, 1, -1, 0, 1};
  for (int k = 0; k < 5; k++) {
    ck_assert_int_eq(neg[k], want_neg[k]);
    ck_assert_int_eq(ab[k], want_abs[k]);
    ck_assert_int_eq(re[k], want_relu[k]);
    ck_assert_int_eq(sg[k], want_sign[k]);
  }
}
END_TEST

START_TEST(unary_i64_wrap) {
  kf_value x = IN("x", KF_I64, 2);
  ref_out(kf_neg(G, x));
  ref_bind_i64(0, (const int64_t[]){INT64_MIN, INT64_MAX});
  ck_assert_int_eq(ref_exec(), KF_OK);
  const int64_t *o = OUTS[0].data;
  ck_assert(o[0] == INT64_MIN);
  ck_assert(o[1] == -INT64_MAX);
}
END_TEST

/* ---- binary -------------------------------------------------------------------------- */

typedef struct bin_case {
  const char *name;
  bin_fn fn;
  int n;
  double a[6], b[6], want[6];
} bin_case;

static const bin_case bin_cases[] = {
    {"add",
     kf_add,
     5,
     {1, INFINITY, INFINITY, NAN, -0.0},
     {2, -INFINITY, 1, 1, -0.0},
     {3, NAN, INFINITY, NAN, -0.0}},
    {"sub", kf_sub, 4, {5, INFINITY, 0, 1}, {3, INFINITY, 0, NAN}, {2, NAN, 0, NAN}},
    {"mul", kf_mul, 4, {0, -2, -0.0, 1e200}, {INFINITY, 3, 1, 1e200}, {NAN, -6, -0.0, INFINITY}},
    {"div",
     kf_div,
     6,
     {1, -1, 0, 1, 7, INFINITY},
     {0, 0, 0, -0.0, 2, INFINITY},
     {INFINITY, -INFINITY, NAN, -INFINITY, 3.5, NAN}},
    {"pow",
     kf_pow,
     6,
     {2, 4, -8, 0, NAN, 2},
     {10, 0.5, 1.0 / 3.0, 0, 0, -1},
     {1024, 2, NAN, 1, 1, 0.5}},
    {"maximum",
     kf_maximum,
     5,
     {1, NAN, 3, -INFINITY, -1},
     {NAN, 1, 2, 0, -2},
     {NAN, NAN, 3, 0, -1}},
    {"minimum",
     kf_minimum,
     5,
     {1, NAN, 3, -INFINITY, -1},
     {NAN, 1, 2, 0, -2},
     {NAN, NAN, 2, -INFINITY, -2}},
    {"eq", kf_eq, 4, {NAN, 1, -0.0, 1}, {NAN, 1, 0, 2}, {0, 1, 1, 0}},
    {"ne", kf_ne, 4, {NAN, 1, -0.0, 1}, {NAN, 1, 0, 2}, {1, 0, 0, 1}},
    {"lt", kf_lt, 4, {NAN, 1, 1, -INFINITY}, {1, 1, 2, 0}, {0, 0, 1, 1}},
    {"le", kf_le, 4, {NAN, 1, 1, 3}, {1, 1, 2, 0}, {0, 1, 1, 0}},
    {"gt", kf_gt, 4, {NAN, 1, 2, INFINITY}, {1, 1, 1, 0}, {0, 0, 1, 1}},
    {"ge", kf_ge, 4, {1, NAN, 1, 0}, {NAN, 1, 1, 2}, {0, 0, 1, 0}},
    {"logical_and", kf_logical_and, 4, {NAN, 0, 2, -0.0}, {1, 5, -3, 1}, {1, 0, 1, 0}},
    {"logical_or", kf_logical_or, 4, {0, 0, NAN, -0.0}, {0, -0.0, 0, 2}, {0, 0, 1, 1}},
};
#define N_BIN (int)(sizeof bin_cases / sizeof bin_cases[0])

START_TEST(binary_f64) {
  const bin_case *c = &bin_cases[_i];
  kf_value a = ref_in_("a", KF_F64, 1, (const int64_t[]){c->n});
  kf_value b = ref_in_("b", KF_F64, 1, (const int64_t[]){c->n});
  kf_value y = c->fn(G, a, b);
  ref_out(y);
  double out[6];
  RUN(out, c->a, c->b);
  for (int k = 0; k < c->n; k++)
    ck_assert_msg(ref_close(out[k], c->want[k], 1e-15), "%s(%.17g, %.17g) = %.17g, want %.17g",
                  c->name, c->a[k], c->b[k], out[k], c->want[k]);
}
END_TEST

START_TEST(binary_i32_wrap) {
  kf_value a = IN("a", KF_I32, 4), b = IN("b", KF_I32, 4);
  ref_out(kf_add(G, a, b));
  ref_out(kf_sub(G, a, b));
  ref_out(kf_mul(G, a, b));
  ref_out(kf_maximum(G, a, b));
  ref_out(kf_minimum(G, a, b));
  RUN(NULL, (double[]){INT32_MAX, INT32_MIN, 65536, 46341}, (double[]){1, 1, 65536, 46341});
  const int32_t *add = OUTS[0].data, *sub = OUTS[1].data, *mul = OUTS[2].data;
  const int32_t *mx = OUTS[3].data, *mn = OUTS[4].data;
  ck_assert_int_eq(add[0], INT32_MIN);   /* INT32_MAX + 1 */
  ck_assert_int_eq(sub[1], INT32_MAX);   /* INT32_MIN - 1 */
  ck_assert_int_eq(mul[2], 0);           /* 2^32 mod 2^32 */
  ck_assert_int_eq(mul[3], -2147479015); /* 2147488281 - 2^32 */
  ck_assert_int_eq(add[2], 131072);
  ck_assert_int_eq(mx[0], INT32_MAX);
  ck_assert_int_eq(mn[1], INT32_MIN);
}
END_TEST

/* i64 arithmetic wraps, and comparisons stay exact beyond 2^53, where a
 * trip through double would make 2^53 + 1 equal to 2^53. */
START_TEST(binary_i64_exact) {
  kf_value a = IN("a", KF_I64, 3), b = IN("b", KF_I64, 3);
  ref_out(kf_add(G, a, b));
  ref_out(kf_mul(G, a, b));
  ref_out(kf_eq(G, a, b));
  ref_out(kf_gt(G, a, b));
  const int64_t p53 = INT64_C(9007199254740992);
  ref_bind_i64(0, (const int64_t[]){INT64_MAX, INT64_C(4294967296), p53 + 1});
  ref_bind_i64(1, (const int64_t[]){1, INT64_C(4294967296), p53});
  ck_assert_int_eq(ref_exec(), KF_OK);
  const int64_t *add = OUTS[0].data, *mul = OUTS[1].data;
  const uint8_t *eq = OUTS[2].data, *gt = OUTS[3].data;
  ck_assert(add[0] == INT64_MIN);
  ck_assert(add[2] == 2 * p53 + 1);
  ck_assert(mul[1] == 0);
  ck_assert_int_eq(eq[2], 0);
  ck_assert_int_eq(gt[2], 1);
  ck_assert_int_eq(eq[1], 1);
}
END_TEST

START_TEST(logical_on_bool) {
  kf_value a = IN("a", KF_BOOL, 4), b = IN("b", KF_BOOL, 4);
  ref_out(kf_logical_and(G, a, b));
  ref_out(kf_logical_or(G, a, b));
  ref_out(kf_ne(G, a, b));
  RUN(NULL, (double[]){0, 0, 1, 1}, (double[]){0, 1, 0, 1});
  const uint8_t *and_ = OUTS[0].data, *or_ = OUTS[1].data, *ne = OUTS[2].data;
  uint8_t want_and[4] = {0, 0, 0, 1}, want_or[4] = {0, 1, 1, 1}, want_ne[4] = {0, 1, 1, 0};
  for (int k = 0; k < 4; k++) {
    ck_assert_int_eq(and_[k], want_and[k]);
    ck_assert_int_eq(or_[k], want_or[k]);
    ck_assert_int_eq(ne[k], want_ne[k]);
  }
}
END_TEST

/* ---- rounding once to the result's dtype ---------------------------------------------- */

START_TEST(round_bf16) {
  kf_value a = IN("a", KF_BF16, 4), b = IN("b", KF_BF16, 4);
  ref_out(kf_add(G, a, b));
  double out[4];
  /* bf16 keeps 8 significant bits: the ulp of 1 is 2^-7. */
  RUN(out, (double[]){1, 1, 1, 1}, (double[]){0x1p-9, 0x1p-8, 0x3p-9, 0x3p-8});
  EXPECT(out, 0, 1.0, 1.0 /* tie to even */, 1.0 + 0x1p-7, 1.0 + 0x1p-6 /* tie, up to even */);
}
END_TEST

START_TEST(round_f16) {
  kf_value a = IN("a", KF_F16, 4), b = IN("b", KF_F16, 4);
  ref_out(kf_add(G, a, b));
  double out[4];
  /* f16 keeps 11 significant bits and overflows past 65504. */
  RUN(out, (double[]){1, 1, 60000, 2048}, (double[]){0x1p-11, 0x3p-11, 10000, 1});
  EXPECT(out, 0, 1.0, 1.0 + 0x1p-9, INFINITY, 2048);
}
END_TEST

START_TEST(round_f32) {
  kf_value a = IN("a", KF_F32, 3), b = IN("b", KF_F32, 3);
  ref_out(kf_add(G, a, b));
  double out[3];
  RUN(out, (double[]){1, 16777216, 3e38}, (double[]){0x1p-24, 1, 3e38});
  EXPECT(out, 0, 1.0, 16777216, INFINITY);
}
END_TEST

/* A transcendental result rounds once: exp(1) in f16 is 2.71875. */
START_TEST(round_exp_f16) {
  kf_value x = IN("x", KF_F16, 2);
  ref_out(kf_exp(G, x));
  double out[2];
  RUN(out, (double[]){1, 12});
  EXPECT(out, 0, 2.71875, INFINITY); /* e^12 = 162754.8 is past f16's 65504 */
}
END_TEST

/* ---- casts ------------------------------------------------------------------------------ */

START_TEST(cast_float_to_int) {
  kf_value x = IN("x", KF_F32, 8);
  ref_out(kf_cast(G, x, KF_I32));
  ref_out(kf_cast(G, x, KF_I64));
  RUN(NULL, (double[]){1.9, -1.9, 3e9, -3e9, NAN, INFINITY, -INFINITY, -0.5});
  const int32_t *i32 = OUTS[0].data;
  const int64_t *i64 = OUTS[1].data;
  int32_t want32[8] = {1, -1, INT32_MAX, INT32_MIN, 0, INT32_MAX, INT32_MIN, 0};
  int64_t want64[8] = {1, -1, 3000000000LL, -3000000000LL, 0, INT64_MAX, INT64_MIN, 0};
  for (int k = 0; k < 8; k++) {
    ck_assert_int_eq(i32[k], want32[k]);
    ck_assert_msg(i64[k] == want64[k], "i64[%d] = %lld", k, (long long)i64[k]);
  }
}
END_TEST

START_TEST(cast_f64_to_i64_saturates) {
  kf_value x = IN("x", KF_F64, 4);
  ref_out(kf_cast(G, x, KF_I64));
  RUN(NULL, (double[]){1e19, -1e19, 0x1p62, 0x1p63});
  const int64_t *o = OUTS[0].data;
  ck_assert(o[0] == INT64_MAX);
  ck_assert(o[1] == INT64_MIN);
  ck_assert(o[2] == INT64_C(4611686018427387904));
  ck_assert(o[3] == INT64_MAX);
}
END_TEST

START_TEST(cast_to_and_from_bool) {
  kf_value x = IN("x", KF_F32, 4);
  kf_value b = kf_cast(G, x, KF_BOOL);
  ref_out(b);
  ref_out(kf_cast(G, b, KF_F32));
  ref_out(kf_cast(G, b, KF_I32));
  RUN(NULL, (double[]){0, -0.0, 0.5, NAN});
  const uint8_t *bo = OUTS[0].data;
  uint8_t want[4] = {0, 0, 1, 1}; /* NaN is nonzero */
  for (int k = 0; k < 4; k++) {
    ck_assert_int_eq(bo[k], want[k]);
    ck_assert(ref_get(&OUTS[1], k) == want[k]);
    ck_assert(ref_get(&OUTS[2], k) == want[k]);
  }
}
END_TEST

/* Integers become floats with one rounding from the exact integer. */
START_TEST(cast_int_to_float) {
  kf_value x = IN("x", KF_I32, 3);
  ref_out(kf_cast(G, x, KF_F16));
  double out[3];
  RUN(out, (double[]){2049, 2051, 70000});
  EXPECT(out, 0, 2048, 2052, INFINITY);
}
END_TEST

/* 2^60 + 2^36 + 1 lies just above the midpoint of two f32 values; through
 * double it would become the midpoint itself and round down to even. */
START_TEST(cast_i64_to_f32_no_double_rounding) {
  kf_value x = IN("x", KF_I64, 3);
  ref_out(kf_cast(G, x, KF_F32));
  ref_out(kf_cast(G, x, KF_F64));
  ref_bind_i64(0, (const int64_t[]){(INT64_C(1) << 60) + (INT64_C(1) << 36) + 1, INT64_MIN,
                                    INT64_C(9007199254740993)});
  ck_assert_int_eq(ref_exec(), KF_OK);
  const float *f = OUTS[0].data;
  const double *d = OUTS[1].data;
  ck_assert(f[0] == 0x1p60f + 0x1p37f);
  ck_assert(f[1] == -0x1p63f);
  ck_assert(d[2] == 9007199254740992.0);
}
END_TEST

START_TEST(cast_int_to_int_wraps) {
  kf_value x = IN("x", KF_I64, 3);
  ref_out(kf_cast(G, x, KF_I32));
  ref_bind_i64(0, (const int64_t[]){(INT64_C(1) << 32) + 5, INT64_C(1) << 31, -1});
  ck_assert_int_eq(ref_exec(), KF_OK);
  const int32_t *o = OUTS[0].data;
  ck_assert_int_eq(o[0], 5);
  ck_assert_int_eq(o[1], INT32_MIN);
  ck_assert_int_eq(o[2], -1);
}
END_TEST

/* f64 to bf16 rounds once: 1 + 2^-8 + 2^-30 is just above a bf16 midpoint,
 * and rounding through f32 first would land on the midpoint. */
START_TEST(cast_f64_to_half) {
  kf_value x = IN("x", KF_F64, 3);
  ref_out(kf_cast(G, x, KF_BF16));
  ref_out(kf_cast(G, x, KF_F16));
  RUN(NULL, (double[]){1.0 + 0x1p-8 + 0x1p-30, 0.1, 1e6});
  double bf[3], h[3];
  for (int k = 0; k < 3; k++) bf[k] = ref_get(&OUTS[0], k), h[k] = ref_get(&OUTS[1], k);
  EXPECT(bf, 0, 1.0 + 0x1p-7, 0.10009765625, 999424);
  EXPECT(h, 0, 1.00390625, 0.0999755859375, INFINITY);
}
END_TEST

/* ---- broadcasting -------------------------------------------------------------------------- */

START_TEST(broadcast_column_row) {
  kf_value a = IN("a", KF_F32, 3, 1), b = IN("b", KF_F32, 1, 4);
  ref_out(kf_add(G, a, b));
  double out[12];
  RUN(out, (double[]){1, 2, 3}, (double[]){10, 20, 30, 40});
  EXPECT(out, 0, 11, 21, 31, 41, 12, 22, 32, 42, 13, 23, 33, 43);
}
END_TEST

START_TEST(broadcast_scalar) {
  kf_value x = IN("x", KF_F32, 2, 2);
  ref_out(kf_mul(G, kf_scalar(G, 2.5, KF_F32), x));
  ref_out(kf_sub(G, x, kf_scalar(G, 1, KF_F32)));
  double out[4];
  RUN(out, (double[]){1, 2, 3, -4});
  EXPECT(out, 0, 2.5, 5, 7.5, -10);
  for (int k = 0; k < 4; k++) out[k] = ref_get(&OUTS[1], k);
  EXPECT(out, 0, 0, 1, 2, -5);
}
END_TEST

/* [2,1,3] + [4,1] -> [2,4,3]: out[i][j][k] = a[i][0][k] + b[j][0]. */
START_TEST(broadcast_rank_mismatch) {
  kf_value a = IN("a", KF_F64, 2, 1, 3), b = IN("b", KF_F64, 4, 1);
  kf_value y = kf_add(G, a, b);
  ref_out(y);
  ck_assert_int_eq(kf_value_rank(G, y), 3);
  double out[24];
  RUN(out, (double[]){0, 1, 2, 3, 4, 5}, (double[]){0, 10, 20, 30});
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 4; j++)
      for (int k = 0; k < 3; k++) ck_assert(out[(i * 4 + j) * 3 + k] == (i * 3 + k) + 10 * j);
}
END_TEST

START_TEST(broadcast_row_into_matrix_int) {
  kf_value a = IN("a", KF_I32, 2, 3), b = IN("b", KF_I32, 3);
  ref_out(kf_sub(G, a, b));
  double out[6];
  RUN(out, (double[]){10, 20, 30, 40, 50, 60}, (double[]){1, 2, 3});
  EXPECT(out, 0, 9, 18, 27, 39, 48, 57);
}
END_TEST

/* ---- where and clamp ----------------------------------------------------------------------------
 */

START_TEST(where_broadcasts) {
  kf_value c = IN("c", KF_BOOL, 2, 1), a = IN("a", KF_F32, 2, 2);
  ref_out(kf_where(G, c, a, kf_scalar(G, -1, KF_F32)));
  double out[4];
  RUN(out, (double[]){1, 0}, (double[]){1, 2, 3, 4});
  EXPECT(out, 0, 1, 2, -1, -1);
}
END_TEST

START_TEST(where_from_comparison_int) {
  kf_value a = IN("a", KF_I32, 4), b = IN("b", KF_I32, 4);
  ref_out(kf_where(G, kf_gt(G, a, b), a, b)); /* an elementwise max */
  double out[4];
  RUN(out, (double[]){1, 5, -3, 7}, (double[]){2, 4, -3, -8});
  EXPECT(out, 0, 2, 5, -3, 7);
}
END_TEST

START_TEST(clamp_float) {
  kf_value x = IN("x", KF_F32, 5);
  ref_out(kf_clamp(G, x, -1, 1));
  ref_out(kf_clamp(G, x, 0, INFINITY));
  double out[5];
  RUN(out, (double[]){-2, 0.5, 3, NAN, -INFINITY});
  EXPECT(out, 0, -1, 0.5, 1, NAN, -1);
  for (int k = 0; k < 5; k++) out[k] = ref_get(&OUTS[1], k);
  EXPECT(out, 0, 0, 0.5, 3, NAN, 0);
}
END_TEST

/* A bound that bf16 cannot hold is rounded with the result. */
START_TEST(clamp_bf16_rounds_bound) {
  kf_value x = IN("x", KF_BF16, 2);
  ref_out(kf_clamp(G, x, 0.1, 1));
  double out[2];
  RUN(out, (double[]){-5, 2});
  EXPECT(out, 0, 0.10009765625, 1);
}
END_TEST

START_TEST(clamp_int) {
  kf_value x = IN("x", KF_I32, 4);
  ref_out(kf_clamp(G, x, -1.5, 2.5));
  ref_out(kf_clamp(G, x, -INFINITY, 1e10));
  double out[4];
  RUN(out, (double[]){-5, 0, 7, INT32_MAX});
  EXPECT(out, 0, -1, 0, 2, 2);
  for (int k = 0; k < 4; k++) out[k] = ref_get(&OUTS[1], k);
  EXPECT(out, 0, -5, 0, 7, INT32_MAX);
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("reference_pointwise");
  TCase *tc = ref_tcase("unary");
  tcase_add_loop_test(tc, unary_f64, 0, N_UN);
  tcase_add_loop_test(tc, unary_f32, 0, N_UN);
  tcase_add_test(tc, logical_not_any_dtype);
  tcase_add_test(tc, unary_int_wrap);
  tcase_add_test(tc, unary_i64_wrap);
  suite_add_tcase(s, tc);
  tc = ref_tcase("binary");
  tcase_add_loop_test(tc, binary_f64, 0, N_BIN);
  tcase_add_test(tc, binary_i32_wrap);
  tcase_add_test(tc, binary_i64_exact);
  tcase_add_test(tc, logical_on_bool);
  suite_add_tcase(s, tc);
  tc = ref_tcase("rounding");
  tcase_add_test(tc, round_bf16);
  tcase_add_test(tc, round_f16);
  tcase_add_test(tc, round_f32);
  tcase_add_test(tc, round_exp_f16);
  suite_add_tcase(s, tc);
  tc = ref_tcase("cast");
  tcase_add_test(tc, cast_float_to_int);
  tcase_add_test(tc, cast_f64_to_i64_saturates);
  tcase_add_test(tc, cast_to_and_from_bool);
  tcase_add_test(tc, cast_int_to_float);
  tcase_add_test(tc, cast_i64_to_f32_no_double_rounding);
  tcase_add_test(tc, cast_int_to_int_wraps);
  tcase_add_test(tc, cast_f64_to_half);
  suite_add_tcase(s, tc);
  tc = ref_tcase("broadcast");
  tcase_add_test(tc, broadcast_column_row);
  tcase_add_test(tc, broadcast_scalar);
  tcase_add_test(tc, broadcast_rank_mismatch);
  tcase_add_test(tc, broadcast_row_into_matrix_int);
  suite_add_tcase(s, tc);
  tc = ref_tcase("where_clamp");
  tcase_add_test(tc, where_broadcasts);
  tcase_add_test(tc, where_from_comparison_int);
  tcase_add_test(tc, clamp_float);
  tcase_add_test(tc, clamp_bf16_rounds_bound);
  tcase_add_test(tc, clamp_int);
  suite_add_tcase(s, tc);
  return s;
}
