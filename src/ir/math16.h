/* math16.h - the bodies of 16-bit functions (kf_<op>_h16: erf, sin, cos, tanh),
 * written once in the part of C that CUDA and the host compile
 * alike. ops.def turns each into its row's .half column (a string: the
 * device prelude, through cmake/gen_ops.c); tests/test_math16.c compiles the
 * same tokens as host C (fmaf for __fmaf_rn, no contraction) and checks all
 * 65536 inputs per dtype on the CPU, bit for bit what the GPU computes: every
 * operation is an IEEE float operation with one rounding (--fmad=false on
 * the device, -ffp-contract=off on the host). A body is one line of
 * statements over the float x; docs/codegen.md, "Math policy", has each
 * function's error. A body that uses the SFU (__sinf, kf_ex2_ftz, kf_rcp_approx)
 * is checked on the CPU with the SFU's documented error bound on either side
 * of the exact value (the 16-bit rounding is monotonic: every result in
 * between passes too). */
#ifndef KF_IR_MATH16_H
#define KF_IR_MATH16_H

/* The text of a body, its macros expanded (two levels, so that the argument
 * is expanded before # makes it a string). */
#define KF_M16_STR(...) KF_M16_STR_(__VA_ARGS__)
#define KF_M16_STR_(...) #__VA_ARGS__

/* erf: a = |x|; a < 0.9: a P(a^2), P of degree 3 with P(0) the float of
 * 2/sqrt(pi) (so that tiny x, of which bf16 has many binades, get
 * 2x/sqrt(pi) to the float's rounding; minimax otherwise, relative error
 * 2^-16.0); else a polynomial of degree 7 in min(a, 3) (minimax on [0.9, 3],
 * absolute error 2^-16.7, erf >= 0.79 there); erf(3) = 1 - 2.2e-5 and
 * beyond round to 1 in f16 and bf16. The sign of x is put back (erf is odd;
 * -0 stays -0); a NaN fails both comparisons and stays NaN. */
#define KF_M16_ERF                                                                                 \
  const float a = fabsf(x);                                                                        \
  const float a2 = a * a;                                                                          \
  const float lo =                                                                                 \
      a * __fmaf_rn(a2, __fmaf_rn(a2, __fmaf_rn(a2, -0.0199725442f, 0.109749816f), -0.375718057f), \
                    1.12837923f);                                                                  \
  const float b = a > 3.0f ? 3.0f : a;                                                             \
  float p = __fmaf_rn(b, -0.00340818008f, 0.0507408306f);                                          \
  p = __fmaf_rn(b, p, -0.309393942f);                                                              \
  p = __fmaf_rn(b, p, 0.967810512f);                                                               \
  p = __fmaf_rn(b, p, -1.52852452f);                                                               \
  p = __fmaf_rn(b, p, 0.766678751f);                                                               \
  p = __fmaf_rn(b, p, 0.862458944f);                                                               \
  p = __fmaf_rn(b, p, 0.0363480523f);                                                              \
  const float v = a < 0.9f ? lo : p;                                                               \
  return __uint_as_float(__float_as_uint(v) | (__float_as_uint(x) & 0x80000000u));

/* sin(|x|) and cos(|x|) for |x| < 2^17 (every finite f16, bf16 up to
 * 131072; beyond, infinities and NaN: FALLBACK, the float function). sin:
 * the half-turn count k = rint(|x|/pi) in one FMA that adds 1.5 * 2^23 (the
 * sum rounds to an integer; its lowest mantissa bit is k's parity), m = k;
 * cos: k = floor(|x|/pi) (a product's rounding may make it one too large:
 * r is then just below -pi/2, which changes nothing), m = k + 1/2. Then
 * r = |x| - m pi in two FMAs (pi as a float, then the float of the rest),
 * exact but for the last rounding; |r| <= pi/2 (a hair more), and
 * sin|x| = (-1)^k sin r, cos|x| = (-1)^(k+1) sin r. sin r: the SFU (__sinf,
 * absolute error 2^-21.41 on [-pi, pi], CUDA C Programming Guide) for |r| >=
 * 1/16, so relative 2^-17.4; r - r^3/6 below (relative error r^4/120 <
 * 2^-22.9, and no SFU flush of small r). SGN: the sign bit the result takes
 * from x (sin is odd: -0 stays -0). */
#define KF_M16_SIN_R(M, PARITY)                                                 \
  const float m = M;                                                            \
  const float r = __fmaf_rn(m, 8.74227766e-8f, __fmaf_rn(m, -3.14159274f, ax)); \
  const float p = __fmaf_rn(r * (r * r), -0.166666672f, r);                     \
  const float v = fabsf(r) < 0.0625f ? p : __sinf(r);                           \
  const unsigned flip = (PARITY) << 31;
#define KF_M16_SIN                                          \
  const float ax = fabsf(x);                                \
  if (!(ax < 131072.0f)) return kf_sin(x);                  \
  const float t = __fmaf_rn(ax, 0.318309886f, 12582912.0f); \
  KF_M16_SIN_R(t - 12582912.0f, __float_as_uint(t))         \
  return __uint_as_float(__float_as_uint(v) ^ flip ^ (__float_as_uint(x) & 0x80000000u));
#define KF_M16_COS                              \
  const float ax = fabsf(x);                    \
  if (!(ax < 131072.0f)) return kf_cos(x);      \
  const float k = floorf(ax * 0.318309886f);    \
  KF_M16_SIN_R(k + 0.5f, (unsigned)(int)k + 1u) \
  return __uint_as_float(__float_as_uint(v) ^ flip);

/* tanh: a = |x|; 1 - 2 / (1 + e^2a) for a >= 1/16, from the SFU (kf_ex2_ftz
 * of 2a log2 e: 2 ulp, and the product's rounding, relative 2^-24 of the
 * exponent, as __expf's (2 + 1.173 * 2a) ulp in the CUDA C Programming Guide;
 * kf_rcp_approx: 1 ulp): its cancellation leaves an
 * absolute error near 2^-21, 2^-17 of tanh(1/16); e^2a = inf (a > 44) gives
 * r = 0 and 1. Below 1/16, a - a^3/3 (relative error 2a^4/15 < 2^-18.9;
 * subnormals kept). The sign of x is put back (-0 stays -0); a NaN stays
 * NaN through the SFU. */
#define KF_M16_TANH                                                                       \
  const float a = fabsf(x);                                                               \
  const float r = kf_rcp_approx(1.0f + kf_ex2_ftz(a * 2.88539008f));                      \
  const float v =                                                                         \
      a < 0.0625f ? __fmaf_rn(a * (a * a), -0.333333343f, a) : __fmaf_rn(-2.0f, r, 1.0f); \
  return __uint_as_float(__float_as_uint(v) | (__float_as_uint(x) & 0x80000000u));

#endif
