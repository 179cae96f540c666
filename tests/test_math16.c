/* test_math16.c - the 16-bit functions of src/ir/math16.h (kf_erf_h16,
 * kf_sin_h16, kf_cos_h16, kf_tanh_h16; and kf_sqrt_h16, the SFU's square
 * root), compiled here as host C from the same tokens the
 * device prelude gets, over every one of the 65536 f16 and every bf16
 * pattern: each result, rounded to the dtype, must be the correctly rounded
 * f64 function or the 16-bit value next to it (value order, +-0 equal), NaN
 * exactly where the reference is NaN, and +-0 with the reference's sign.
 * Host float arithmetic is IEEE binary32 with one rounding per operation
 * (SSE; tests/CMakeLists.txt builds this file with -ffp-contract=off, as
 * NVRTC runs with --fmad=false) and fmaf is the fused multiply-add, so these
 * are the GPU's results bit for bit (tests/gpu/test_gpu_math.c checks the
 * device's over the same inputs), except the SFU (__sinf, kf_ex2_ftz,
 * kf_rcp_approx, kf_sqrt_approx): here the exact value moved past its
 * documented error bound, and every input must pass with each extreme
 * (rounding to the dtype is monotonic, so every SFU result in between
 * passes). Beyond the fast range (bf16 |x| >= 2^17, infinities, NaN) sin
 * and cos take the float function: the host's sinf/cosf here. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check_main.h"
#include "ir/dtype.h"
#include "ir/ir.h"
#include "ir/math16.h"
#include "kfuse.h"

static unsigned h_f2u(float f) {
  unsigned u;
  memcpy(&u, &f, sizeof u);
  return u;
}
static float h_u2f(unsigned u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}
/* The device names the bodies use, as host functions. */
#define __fmaf_rn fmaf
#define __float_as_uint h_f2u
#define __uint_as_float h_u2f
/* The SFU: exact (g_sfu_side 0), or each result moved by more than its
 * documented error, down or up: side 1..4 takes the four combinations
 * (bit 0 of side - 1: the sine and e^x; bit 1: the reciprocal). */
static int g_sfu_side;
static double sfu_dir(int which) {
  if (!g_sfu_side) return 0;
  return ((g_sfu_side - 1) >> which) & 1 ? 1.0 : -1.0;
}
/* __sinf: absolute 2^-21.41 documented; 2^-21 here */
static float h_sfu_sin(float r) {
  return (float)(sin((double)r) + sfu_dir(0) * 0x1p-21);
}
/* kf_ex2_ftz of v = a (2 log2 e) rounded: 2^v with 2 ulp documented, and the
 * rounding of v (relative 2^-24: 2^-24 v ln 2 of the result), as __expf's
 * (2 + 1.173 |2a|) ulp; (3 + 0.75 |v|) 2^-23 relative here (1.2 |2a|). */
static float h_sfu_ex2(float v) {
  double e = exp2((double)v);
  if (isinf(e) || isnan(e)) return (float)e;
  return (float)(e * (1.0 + sfu_dir(0) * (3.0 + 0.75 * fabs((double)v)) * 0x1p-23));
}
/* kf_rcp_approx: 1 ulp documented (flushing results below 2^-126); 2^-22 here */
static float h_sfu_rcp(float d) {
  double q = 1.0 / (double)d;
  if (q == 0 || isinf(q) || isnan(q)) return (float)q;
  float f = (float)(q * (1.0 + sfu_dir(1) * 0x1p-22));
  return fabsf(f) < 0x1p-126f ? 0.0f * f : f;
}
/* kf_sqrt_approx (sqrt.approx.f32): 2^-23 relative documented; 2^-20 here
 * (the f32 bound test_gpu_math asserts for its ftz form is 4 ulp) */
static float kf_sqrt_approx(float x) {
  double q = sqrt((double)x);
  if (q == 0 || isinf(q) || isnan(q)) return (float)q;
  return (float)(q * (1.0 + sfu_dir(0) * 0x1p-20));
}
#define __sinf h_sfu_sin
#define kf_ex2_ftz h_sfu_ex2
#define kf_rcp_approx h_sfu_rcp
/* the float functions beyond the fast range (kf_sin is kfuse.h's builder
 * here, so the names are redirected) */
#define kf_sin sinf
#define kf_cos cosf
static float m16_erf(float x) {
  KF_M16_ERF
}
static float m16_sin(float x) {
  KF_M16_SIN
}
static float m16_cos(float x) {
  KF_M16_COS
}
static float m16_tanh(float x) {
  KF_M16_TANH
}
/* sqrt's .half column is the SFU square root itself */
static float m16_sqrt(float x) {
  return kf_sqrt_approx(x);
}

typedef struct m16_fn {
  const char *name;
  float (*fn)(float);
  double (*ref)(double);
  bool sfu; /* uses __sinf: checked with both extremes of its error */
} m16_fn;
static const m16_fn fns[] = {{"erf", m16_erf, erf, false},
                             {"sin", m16_sin, sin, true},
                             {"cos", m16_cos, cos, true},
                             {"tanh", m16_tanh, tanh, true},
                             {"sqrt", m16_sqrt, sqrt, true}};

static double to_double(uint16_t b, bool f16) {
  return f16 ? (double)kf_f16_to_float(b) : (double)kf_bf16_to_float(b);
}
static uint16_t round16(double v, bool f16) {
  return f16 ? ir_double_to_f16(v) : ir_double_to_bf16(v);
}
static bool is_nan16(uint16_t b, bool f16) {
  return f16 ? (b & 0x7c00u) == 0x7c00u && (b & 0x3ffu) : (b & 0x7f80u) == 0x7f80u && (b & 0x7fu);
}
/* A pattern's place in value order (-0 and +0 both 0). */
static int order16(uint16_t b) {
  return (b & 0x8000) ? -(int)(b & 0x7fff) : (int)b;
}

/* Counts the inputs of one function and dtype whose result breaks the rule
 * above (printing the first few) and those not correctly rounded. */
static int check_all(const m16_fn *f, bool f16, int *inexact) {
  int bad = 0;
  *inexact = 0;
  for (uint32_t i = 0; i < 65536; i++) {
    const uint16_t xb = (uint16_t)i;
    const double x = to_double(xb, f16);
    const double ref = f->ref(x);
    const uint16_t want = round16(ref, f16);
    const uint16_t got = round16((double)f->fn((float)x), f16);
    bool ok;
    if (isnan(ref))
      ok = is_nan16(got, f16);
    else if (ref == 0.0)
      ok = got == want; /* the sign of a zero too */
    else
      ok = !is_nan16(got, f16) && abs(order16(got) - order16(want)) <= 1;
    if (ok && got != want) ++*inexact;
    if (!ok && bad++ < 8)
      printf("  %s %s: x=%a got %a want %a (ref %a)\n", f->name, f16 ? "f16" : "bf16", x,
             to_double(got, f16), to_double(want, f16), ref);
  }
  return bad;
}

/* Every function, both dtypes, every input (an SFU function with the
 * exact SFU and with each extreme of its error); prints how many results
 * are not the correctly rounded one (the figures of docs/codegen.md). */
START_TEST(every_input) {
  static const char *const sides[] = {"", " (SFU low, rcp low)", " (SFU high, rcp low)",
                                      " (SFU low, rcp high)", " (SFU high, rcp high)"};
  int bad = 0;
  for (size_t k = 0; k < sizeof fns / sizeof fns[0]; k++)
    for (int side = 0; side <= (fns[k].sfu ? 4 : 0); side++)
      for (int d = 0; d < 2; d++) {
        int inexact;
        g_sfu_side = side;
        bad += check_all(&fns[k], d == 0, &inexact);
        printf("%s_h16 %s%s: 65536 inputs, %d one ulp from the correctly rounded result\n",
               fns[k].name, d == 0 ? "f16" : "bf16", sides[side], inexact);
      }
  g_sfu_side = 0;
  ck_assert_msg(bad == 0, "%d results more than one ulp from the correctly rounded", bad);
}
END_TEST

/* The edges by name: signed zeros, infinities, NaN, the smallest bf16
 * subnormal; erf: both sides of the switch at 0.9, and the saturation at
 * 3; sin and cos: the fast range's end and the float function beyond. */
START_TEST(edges) {
  ck_assert_uint_eq(h_f2u(m16_erf(-0.0f)), 0x80000000u);
  ck_assert_uint_eq(h_f2u(m16_erf(0.0f)), 0u);
  ck_assert(isnan(m16_erf(NAN)) && isnan(m16_erf(-NAN)));
  ck_assert_float_eq(m16_erf(INFINITY), m16_erf(3.0f));
  ck_assert_float_eq(m16_erf(-INFINITY), -m16_erf(3.0f));
  ck_assert_uint_eq(ir_double_to_f16((double)m16_erf(3.0f)), 0x3c00u); /* 1 */
  ck_assert_uint_eq(ir_double_to_bf16((double)m16_erf(3.0f)), 0x3f80u);
  ck_assert_float_eq(m16_erf(100.0f), m16_erf(3.0f));
  const float tiny = 0x1p-133f;
  ck_assert_float_eq(m16_erf(tiny), tiny * 1.12837923f); /* 2x/sqrt(pi) */
  ck_assert_float_eq(m16_erf(-tiny), -tiny * 1.12837923f);
  const float below = 0.89999998f, at = 0.9f; /* the last float below 0.9, and 0.9 */
  ck_assert(fabs((double)m16_erf(below) - erf((double)below)) < 0x1p-16);
  ck_assert(fabs((double)m16_erf(at) - erf((double)at)) < 0x1p-16);
  ck_assert(fabs((double)m16_erf(-2.5f) + erf(2.5)) < 0x1p-16);
  /* sin and cos: signed zeros, the fast range's end, the fallback */
  ck_assert_uint_eq(h_f2u(m16_sin(-0.0f)), 0x80000000u);
  ck_assert_uint_eq(h_f2u(m16_sin(0.0f)), 0u);
  ck_assert_float_eq(m16_cos(0.0f), 1.0f);
  ck_assert_float_eq(m16_cos(-0.0f), 1.0f);
  ck_assert_float_eq(m16_sin(tiny), tiny);
  ck_assert_float_eq(m16_sin(-tiny), -tiny);
  ck_assert(isnan(m16_sin(INFINITY)) && isnan(m16_cos(-INFINITY)));
  ck_assert(isnan(m16_sin(NAN)) && isnan(m16_cos(NAN)));
  ck_assert(fabs(sin(65504.0) - (double)m16_sin(65504.0f)) < 0x1p-16);
  ck_assert(fabs(cos(65504.0) - (double)m16_cos(65504.0f)) < 0x1p-16);
  ck_assert_float_eq(m16_sin(131072.0f), sinf(131072.0f));
  ck_assert_float_eq(m16_cos(-131072.0f), cosf(131072.0f));
  /* tanh: signed zeros, saturation, NaN, subnormals, the switch at 1/16 */
  ck_assert_uint_eq(h_f2u(m16_tanh(-0.0f)), 0x80000000u);
  ck_assert_uint_eq(h_f2u(m16_tanh(0.0f)), 0u);
  ck_assert_float_eq(m16_tanh(INFINITY), 1.0f);
  ck_assert_float_eq(m16_tanh(-INFINITY), -1.0f);
  ck_assert_float_eq(m16_tanh(100.0f), 1.0f);
  ck_assert(isnan(m16_tanh(NAN)));
  ck_assert_float_eq(m16_tanh(tiny), tiny);
  ck_assert(fabs((double)m16_tanh(0.0625f) - tanh(0.0625)) < 0x1p-20);
  ck_assert(fabs((double)m16_tanh(0.06249999f) - tanh(0.06249999)) < 0x1p-22);
  /* sqrt: -0, the smallest bf16 subnormal (a normal root), NaN below 0 */
  ck_assert_uint_eq(h_f2u(m16_sqrt(-0.0f)), 0x80000000u);
  ck_assert_float_eq(m16_sqrt(0x1p-132f), 0x1p-66f);
  ck_assert(isnan(m16_sqrt(-tiny)) && isnan(m16_sqrt(-INFINITY)));
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("math16");
  TCase *tc = tcase_create("h16");
  tcase_add_test(tc, every_input);
  tcase_add_test(tc, edges);
  suite_add_tcase(s, tc);
  return s;
}
