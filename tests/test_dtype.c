/* test_dtype.c - dtype names, and the f16/bf16/integer/bool rounding rules
 * at their edges, checked exhaustively where that is cheap and against the
 * compiler's own _Float16 conversions. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "check_main.h"
#include "ir/dtype.h"
#include "ir/ir.h"

static uint32_t fbits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

static float bitsf(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

static bool f16_is_nan(uint16_t h) {
  return (h & 0x7C00u) == 0x7C00u && (h & 0x3FFu);
}
static bool bf16_is_nan(uint16_t h) {
  return (h & 0x7F80u) == 0x7F80u && (h & 0x7Fu);
}

/* The compiler's own f16 conversions, where it has _Float16 (gcc 12 on
 * x86-64 does; clang 14 does not): false without them, and the comparisons
 * against the compiler are then left out (the other checks still run). */
#ifdef __FLT16_MAX__
static bool cc_f16_decode(uint16_t h, float *out) {
  _Float16 ref;
  memcpy(&ref, &h, sizeof ref);
  *out = (float)ref;
  return true;
}
static bool cc_f16_encode(double v, uint16_t *out) {
  _Float16 ref = (_Float16)v;
  memcpy(out, &ref, sizeof *out);
  return true;
}
#else
static bool cc_f16_decode(uint16_t h, float *out) {
  (void)h, (void)out;
  return false;
}
static bool cc_f16_encode(double v, uint16_t *out) {
  (void)v, (void)out;
  return false;
}
#endif

START_TEST(names_sizes_parse) {
  static const char *names[] = {"f16", "bf16", "f32", "f64", "i32", "i64", "bool"};
  static const size_t sizes[] = {2, 2, 4, 8, 4, 8, 1};
  for (int i = 0; i < KF_DTYPE_COUNT; i++) {
    ck_assert_str_eq(kf_dtype_name((kf_dtype)i), names[i]);
    ck_assert_uint_eq(kf_dtype_size((kf_dtype)i), sizes[i]);
    kf_dtype dt = KF_DTYPE_COUNT;
    ck_assert_int_eq(kf_dtype_parse(names[i], &dt), KF_OK);
    ck_assert_int_eq(dt, i);
  }
  ck_assert_str_eq(kf_dtype_name(KF_DTYPE_COUNT), "?");
  ck_assert_str_eq(kf_dtype_name((kf_dtype)-1), "?");
  ck_assert_uint_eq(kf_dtype_size(KF_DTYPE_COUNT), 0);
  kf_dtype dt = KF_F32;
  ck_assert_int_eq(kf_dtype_parse("float32", &dt), KF_ERR_INVALID_ARG);
  ck_assert_int_eq(kf_dtype_parse("F32", &dt), KF_ERR_INVALID_ARG);
  ck_assert_int_eq(kf_dtype_parse("", &dt), KF_ERR_INVALID_ARG);
  ck_assert_int_eq(kf_dtype_parse(NULL, &dt), KF_ERR_INVALID_ARG);
  ck_assert_int_eq(kf_dtype_parse("f16", NULL), KF_ERR_INVALID_ARG);
  ck_assert_int_eq(dt, KF_F32);
  ck_assert(ir_dtype_is_float(KF_F16) && ir_dtype_is_float(KF_BF16));
  ck_assert(ir_dtype_is_float(KF_F32) && ir_dtype_is_float(KF_F64));
  ck_assert(!ir_dtype_is_float(KF_I32) && !ir_dtype_is_float(KF_I64));
  ck_assert(!ir_dtype_is_float(KF_BOOL) && !ir_dtype_is_float(KF_DTYPE_COUNT));
}
END_TEST

/* Every f16 pattern: decodes as the compiler decodes it, and round-trips. */
START_TEST(f16_all_patterns) {
  for (uint32_t i = 0; i < 65536; i++) {
    uint16_t h = (uint16_t)i, back;
    float f = kf_f16_to_float(h);
    float ref;
    bool have = cc_f16_decode(h, &ref);
    back = kf_float_to_f16(f);
    if (f16_is_nan(h)) {
      ck_assert_msg(isnan(f), "0x%04x", i);
      ck_assert_int_eq(signbit(f) != 0, (h & 0x8000) != 0);
      ck_assert(f16_is_nan(back) && (back & 0x200u));
      ck_assert_int_eq(back & 0x8000, h & 0x8000);
      if (h & 0x200u) ck_assert_uint_eq(back, h); /* quiet NaNs keep payload */
      continue;
    }
    if (have) ck_assert_msg(fbits(f) == fbits(ref), "0x%04x: %a vs %a", i, f, ref);
    ck_assert_msg(back == h, "0x%04x -> %a -> 0x%04x", i, f, back);
    ck_assert_uint_eq(ir_double_to_f16((double)f), h);
    ck_assert(ir_round_to_dtype((double)f, KF_F16) == (double)f || isnan(f));
  }
}
END_TEST

/* float -> f16 agrees with the compiler's conversion over a sweep of float
 * patterns (every sign, exponent and many mantissas). */
START_TEST(f16_from_float_sweep) {
  for (uint64_t u = 0; u <= 0xFFFFFFFFull; u += 4093) {
    float f = bitsf((uint32_t)u);
    if (isnan(f)) continue;
    uint16_t rb;
    if (!cc_f16_encode(f, &rb)) break;
    ck_assert_msg(kf_float_to_f16(f) == rb, "%a: 0x%04x vs 0x%04x", f, kf_float_to_f16(f), rb);
  }
  /* Every halfway point between neighbours in the normal range rounds to
   * the even one; just above rounds up, just below rounds down. */
  for (uint32_t h = 0x0400; h < 0x7BFF; h++) {
    double lo = kf_f16_to_float((uint16_t)h), hi = kf_f16_to_float((uint16_t)(h + 1));
    double mid = (lo + hi) / 2;
    uint16_t even = (h & 1) ? (uint16_t)(h + 1) : (uint16_t)h;
    ck_assert_uint_eq(ir_double_to_f16(mid), even);
    ck_assert_uint_eq(kf_float_to_f16((float)mid), even);
    ck_assert_uint_eq(ir_double_to_f16(nextafter(mid, INFINITY)), h + 1);
    ck_assert_uint_eq(ir_double_to_f16(nextafter(mid, 0)), h);
    ck_assert_uint_eq(ir_double_to_f16(-mid), even | 0x8000u);
  }
}
END_TEST

START_TEST(f16_edges) {
  ck_assert_uint_eq(kf_float_to_f16(0.0f), 0x0000);
  ck_assert_uint_eq(kf_float_to_f16(-0.0f), 0x8000);
  ck_assert_uint_eq(ir_double_to_f16(-0.0), 0x8000);
  ck_assert(signbit(kf_f16_to_float(0x8000)));
  ck_assert_uint_eq(kf_float_to_f16(1.0f), 0x3C00);
  ck_assert_uint_eq(kf_float_to_f16(65504.0f), 0x7BFF); /* max finite */
  ck_assert_uint_eq(ir_double_to_f16(65519.99), 0x7BFF);
  ck_assert_uint_eq(ir_double_to_f16(65520.0), 0x7C00); /* ties to even: inf */
  ck_assert_uint_eq(kf_float_to_f16(65520.0f), 0x7C00);
  ck_assert_uint_eq(ir_double_to_f16(-65520.0), 0xFC00);
  ck_assert_uint_eq(ir_double_to_f16(1e300), 0x7C00);
  ck_assert_uint_eq(kf_float_to_f16(INFINITY), 0x7C00);
  ck_assert_uint_eq(kf_float_to_f16(-INFINITY), 0xFC00);
  ck_assert(isinf(kf_f16_to_float(0x7C00)) && kf_f16_to_float(0xFC00) < 0);
  ck_assert_uint_eq(ir_double_to_f16(ldexp(1, -24)), 0x0001); /* smallest subnormal */
  ck_assert(kf_f16_to_float(0x0001) == ldexpf(1, -24));
  ck_assert_uint_eq(ir_double_to_f16(ldexp(1, -25)), 0x0000); /* tie to even: 0 */
  ck_assert_uint_eq(ir_double_to_f16(-ldexp(1, -25)), 0x8000);
  ck_assert_uint_eq(ir_double_to_f16(ldexp(1, -25) * 1.0000001), 0x0001);
  ck_assert_uint_eq(ir_double_to_f16(3 * ldexp(1, -25)), 0x0002); /* 1.5 ulp: even */
  ck_assert_uint_eq(ir_double_to_f16(ldexp(1, -14)), 0x0400);     /* smallest normal */
  ck_assert_uint_eq(ir_double_to_f16(ldexp(1023, -24)), 0x03FF);  /* largest subnormal */
  ck_assert_uint_eq(ir_double_to_f16(ldexp(2047, -25)), 0x0400);  /* rounds into normal */
  ck_assert_uint_eq(ir_double_to_f16(ldexp(1, -40)), 0x0000);
  ck_assert_uint_eq(ir_double_to_f16(0.1), 0x2E66);
  uint16_t qn = ir_double_to_f16(NAN), nqn = ir_double_to_f16(-NAN);
  ck_assert(f16_is_nan(qn) && (qn & 0x200u) && !(qn & 0x8000u));
  ck_assert(f16_is_nan(nqn) && (nqn & 0x8000u));
  ck_assert(f16_is_nan(kf_float_to_f16(NAN)) && (kf_float_to_f16(-NAN) & 0x8000u));
  /* A signalling f16 NaN decodes to a quiet float NaN. */
  ck_assert(isnan(kf_f16_to_float(0x7C01)));
  ck_assert(fbits(kf_f16_to_float(0x7C01)) & 0x400000u);
}
END_TEST

/* Rounding a double once differs from rounding it to float first when the
 * float rounding lands on a halfway point. */
START_TEST(no_double_rounding) {
  double v = 1.0 + ldexp(1, -11) + ldexp(1, -40);       /* just above f16 halfway */
  ck_assert_uint_eq(kf_float_to_f16((float)v), 0x3C00); /* float hits the tie */
  ck_assert_uint_eq(ir_double_to_f16(v), 0x3C01);
  uint16_t rb;
  if (cc_f16_encode(v, &rb)) ck_assert_uint_eq(rb, 0x3C01);
  double w = 1.0 + ldexp(1, -8) + ldexp(1, -40); /* just above bf16 halfway */
  ck_assert_uint_eq(kf_float_to_bf16((float)w), 0x3F80);
  ck_assert_uint_eq(ir_double_to_bf16(w), 0x3F81);
  ck_assert(ir_round_to_dtype(v, KF_F16) == 1.0 + ldexp(1, -10));
  ck_assert(ir_round_to_dtype(w, KF_BF16) == 1.0 + ldexp(1, -7));
  /* Doubles beyond float range still round correctly to f16/bf16. */
  ck_assert_uint_eq(ir_double_to_bf16(1e39), 0x7F80);
  ck_assert_uint_eq(ir_double_to_bf16(ldexp(1, -133)), 0x0001); /* bf16 min subnormal */
  ck_assert_uint_eq(ir_double_to_bf16(ldexp(1, -134)), 0x0000); /* tie to even */
  ck_assert_uint_eq(ir_double_to_bf16(ldexp(3, -135)), 0x0001); /* 0.75 ulp: 1 */
}
END_TEST

START_TEST(bf16_all_patterns) {
  for (uint32_t i = 0; i < 65536; i++) {
    uint16_t h = (uint16_t)i;
    float f = kf_bf16_to_float(h);
    ck_assert_uint_eq(fbits(f), (uint32_t)h << 16);
    uint16_t back = kf_float_to_bf16(f), back2 = ir_double_to_bf16((double)f);
    if (bf16_is_nan(h)) {
      ck_assert(bf16_is_nan(back) && (back & 0x40u) && (back & 0x8000u) == (h & 0x8000u));
      ck_assert(bf16_is_nan(back2) && (back2 & 0x8000u) == (h & 0x8000u));
      continue;
    }
    ck_assert_msg(back == h && back2 == h, "0x%04x -> 0x%04x 0x%04x", i, back, back2);
  }
}
END_TEST

/* Two independent bf16 roundings (bit trick from float, generic from
 * double) agree on a sweep of float patterns, ties included. */
START_TEST(bf16_from_float_sweep) {
  for (uint64_t u = 0; u <= 0xFFFFFFFFull; u += 4093) {
    float f = bitsf((uint32_t)u);
    if (isnan(f)) continue;
    ck_assert_msg(kf_float_to_bf16(f) == ir_double_to_bf16(f), "%a", f);
  }
  for (uint32_t hi = 0; hi < 0x10000; hi += 7) { /* exact ties of every sign/exponent */
    float f = bitsf((hi << 16) | 0x8000u);
    if (isnan(f) || isinf(f)) continue;
    uint16_t even = (hi & 1) ? (uint16_t)(hi + 1) : (uint16_t)hi;
    ck_assert_msg(kf_float_to_bf16(f) == even, "tie 0x%08x", fbits(f));
    ck_assert_msg(ir_double_to_bf16(f) == even, "tie 0x%08x", fbits(f));
  }
  ck_assert_uint_eq(kf_float_to_bf16(bitsf(0x3F808000u)), 0x3F80); /* tie, even below */
  ck_assert_uint_eq(kf_float_to_bf16(bitsf(0x3F818000u)), 0x3F82); /* tie, even above */
  ck_assert_uint_eq(kf_float_to_bf16(bitsf(0x3F808001u)), 0x3F81);
  ck_assert_uint_eq(kf_float_to_bf16(FLT_MAX), 0x7F80); /* overflows to inf */
  ck_assert_uint_eq(kf_float_to_bf16(-FLT_MAX), 0xFF80);
  ck_assert_uint_eq(kf_float_to_bf16(bitsf(0x7F7F7FFFu)), 0x7F7F); /* max finite */
  ck_assert_uint_eq(kf_float_to_bf16(-0.0f), 0x8000);
  ck_assert_uint_eq(kf_float_to_bf16(bitsf(0x00000001u)), 0x0000); /* tiny: 0 */
  ck_assert_uint_eq(kf_float_to_bf16(bitsf(0x00008000u)), 0x0000); /* tie to even 0 */
  ck_assert_uint_eq(kf_float_to_bf16(bitsf(0x00018000u)), 0x0002);
  uint16_t n = kf_float_to_bf16(-NAN);
  ck_assert(bf16_is_nan(n) && (n & 0x8000u) && (n & 0x40u));
  ck_assert(bf16_is_nan(kf_float_to_bf16(bitsf(0x7F800001u)))); /* sNaN stays NaN */
}
END_TEST

START_TEST(round_to_dtype) {
  ck_assert(ir_round_to_dtype(0.1, KF_F64) == 0.1);
  ck_assert(ir_round_to_dtype(0.1, KF_F32) == (double)0.1f);
  ck_assert(ir_round_to_dtype(1e39, KF_F32) == INFINITY);
  ck_assert(ir_round_to_dtype(0.1, KF_F16) == (double)kf_f16_to_float(0x2E66));
  ck_assert(ir_round_to_dtype(70000, KF_F16) == INFINITY);
  ck_assert(isnan(ir_round_to_dtype(NAN, KF_F16)) && isnan(ir_round_to_dtype(NAN, KF_BF16)));
  ck_assert(signbit(ir_round_to_dtype(-0.0, KF_BF16)));
  /* Integers: truncate toward zero, saturate, NaN gives 0. */
  ck_assert(ir_round_to_dtype(2.9, KF_I32) == 2.0);
  ck_assert(ir_round_to_dtype(-2.9, KF_I32) == -2.0);
  ck_assert(ir_round_to_dtype(1e10, KF_I32) == 2147483647.0);
  ck_assert(ir_round_to_dtype(-1e10, KF_I32) == -2147483648.0);
  ck_assert(ir_round_to_dtype(INFINITY, KF_I32) == 2147483647.0);
  ck_assert(ir_round_to_dtype(NAN, KF_I32) == 0.0);
  ck_assert(ir_round_to_dtype(2147483647.5, KF_I32) == 2147483647.0);
  ck_assert(ir_round_to_dtype(-2147483648.9, KF_I32) == -2147483648.0);
  ck_assert(ir_round_to_dtype(-0.5, KF_I64) == 0.0);
  ck_assert(ir_round_to_dtype(NAN, KF_I64) == 0.0);
  ck_assert(ir_round_to_dtype(-1e30, KF_I64) == -9223372036854775808.0);
  ck_assert(ir_round_to_dtype(-INFINITY, KF_I64) == -9223372036854775808.0);
  /* INT64_MAX as a double is 2^63; callers convert with saturation. */
  ck_assert(ir_round_to_dtype(1e30, KF_I64) == (double)INT64_MAX);
  ck_assert(ir_round_to_dtype(INFINITY, KF_I64) == 9223372036854775808.0);
  ck_assert(ir_round_to_dtype(9223372036854774784.0, KF_I64) == 9223372036854774784.0);
  ck_assert(ir_round_to_dtype(123456789012.7, KF_I64) == 123456789012.0);
  /* bool: anything nonzero, NaN included, is true. */
  ck_assert(ir_round_to_dtype(0.0, KF_BOOL) == 0.0);
  ck_assert(ir_round_to_dtype(-0.0, KF_BOOL) == 0.0);
  ck_assert(ir_round_to_dtype(0.5, KF_BOOL) == 1.0);
  ck_assert(ir_round_to_dtype(-3.0, KF_BOOL) == 1.0);
  ck_assert(ir_round_to_dtype(NAN, KF_BOOL) == 1.0);
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("dtype");
  TCase *tc = tcase_create("dtype");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, names_sizes_parse);
  tcase_add_test(tc, f16_all_patterns);
  tcase_add_test(tc, f16_from_float_sweep);
  tcase_add_test(tc, f16_edges);
  tcase_add_test(tc, no_double_rounding);
  tcase_add_test(tc, bf16_all_patterns);
  tcase_add_test(tc, bf16_from_float_sweep);
  tcase_add_test(tc, round_to_dtype);
  suite_add_tcase(s, tc);
  return s;
}
