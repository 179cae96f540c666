/* dtype.c - dtype names and sizes, and the one rounding rule of kfuse: how a
 * double or float becomes f16, bf16, f32, an integer or a bool. */
#include "ir/dtype.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ir/ir.h"

static const char *const dtype_names[KF_DTYPE_COUNT] = {
#define DT_NAME_(id, name, size) #name,
    KF_DTYPE_MAP(DT_NAME_)
#undef DT_NAME_
};

static const size_t dtype_sizes[KF_DTYPE_COUNT] = {
#define DT_SIZE_(id, name, size) size,
    KF_DTYPE_MAP(DT_SIZE_)
#undef DT_SIZE_
};

const char *kf_dtype_name(kf_dtype dtype) {
  return (unsigned)dtype < KF_DTYPE_COUNT ? dtype_names[dtype] : "?";
}

size_t kf_dtype_size(kf_dtype dtype) {
  return (unsigned)dtype < KF_DTYPE_COUNT ? dtype_sizes[dtype] : 0;
}

kf_status kf_dtype_parse(const char *name, kf_dtype *out) {
  if (!name || !out) return KF_ERR_INVALID_ARG;
  for (int i = 0; i < KF_DTYPE_COUNT; i++) {
    if (strcmp(name, dtype_names[i]) == 0) {
      *out = (kf_dtype)i;
      return KF_OK;
    }
  }
  return KF_ERR_INVALID_ARG;
}

bool ir_dtype_is_float(kf_dtype dt) {
  return dt == KF_F16 || dt == KF_BF16 || dt == KF_F32 || dt == KF_F64;
}

/* Round half to even of a non-negative double that is below 2^52, written
 * out so that the result never depends on the floating-point environment. */
static double rne(double x) {
  double r = floor(x);
  double d = x - r; /* exact: x and r share an exponent range below 2^52 */
  if (d > 0.5 || (d == 0.5 && fmod(r, 2.0) != 0.0)) r += 1.0;
  return r;
}

/* A binary16-like format with M mantissa bits and exponent bias B (f16:
 * 10, 15; bf16: 7, 127), rounded once from a double. Because the double is
 * rounded directly, there is no double rounding through float. */
static uint16_t half_from_double(double v, int M, int B) {
  uint16_t sign = signbit(v) ? 0x8000u : 0;
  uint16_t inf = (uint16_t)((2 * B + 1) << M);
  if (isnan(v)) return (uint16_t)(sign | inf | (1u << (M - 1))); /* quiet */
  double a = fabs(v);
  /* Halfway between the largest finite value and the next power of two
   * rounds to even, i.e. up to infinity. */
  if (a >= ldexp(2.0 - ldexp(1.0, -(M + 1)), B)) return (uint16_t)(sign | inf);
  if (a == 0.0) return sign;
  int e;
  frexp(a, &e);
  e -= 1;                          /* a is in [2^e, 2^(e+1)) */
  if (e < 1 - B) e = 1 - B;        /* subnormal: the quantum stops shrinking */
  double m = rne(ldexp(a, M - e)); /* in [0, 2^(M+1)], exact scaling */
  /* m >= 2^M carries the implicit one into the exponent field, and m ==
   * 2^(M+1) carries once more: a round-up to the next binade is free. */
  return (uint16_t)(sign | (unsigned)(((e + B - 1) << M) + (int)m));
}

static double half_to_double(uint16_t bits, int M, int B) {
  int expo = (bits >> M) & (2 * B + 1);
  double mant = bits & ((1u << M) - 1);
  double a;
  if (expo == 0)
    a = ldexp(mant, 1 - B - M);
  else if (expo == 2 * B + 1)
    a = mant == 0 ? INFINITY : NAN;
  else
    a = ldexp(mant + ldexp(1.0, M), expo - B - M);
  return (bits & 0x8000u) ? -a : a;
}

static uint32_t float_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

static float bits_float(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

uint16_t ir_double_to_f16(double v) {
  return half_from_double(v, 10, 15);
}
uint16_t ir_double_to_bf16(double v) {
  return half_from_double(v, 7, 127);
}

uint16_t kf_float_to_f16(float value) {
  uint32_t u = float_bits(value);
  /* Keep the sign and the top of the payload of a NaN, made quiet. */
  if (isnan(value)) return (uint16_t)(((u >> 16) & 0x8000u) | 0x7E00u | ((u >> 13) & 0x3FFu));
  return half_from_double(value, 10, 15); /* float -> double is exact */
}

float kf_f16_to_float(uint16_t bits) {
  if ((bits & 0x7C00u) == 0x7C00u && (bits & 0x3FFu)) {
    uint32_t u =
        ((uint32_t)(bits & 0x8000u) << 16) | 0x7FC00000u | ((uint32_t)(bits & 0x3FFu) << 13);
    return bits_float(u);
  }
  return (float)half_to_double(bits, 10, 15); /* exact in float */
}

uint16_t kf_float_to_bf16(float value) {
  uint32_t u = float_bits(value);
  if (isnan(value)) return (uint16_t)((u >> 16) | 0x0040u);
  /* bf16 is the top half of a float: add just under half an ulp, plus one
   * when the kept part is odd, and truncate. Overflow lands on infinity. */
  u += 0x7FFFu + ((u >> 16) & 1u);
  return (uint16_t)(u >> 16);
}

float kf_bf16_to_float(uint16_t bits) {
  return bits_float((uint32_t)bits << 16);
}

/* INT64_MAX as a double is 2^63, which (int64_t) cannot convert: callers
 * turn an i64 result into an integer with saturation (v >= 2^63 gives
 * INT64_MAX), as the reference's ir_ref_sat_int and the GPU's cvt.rzi do. */
#define IR_I64_LIMIT 9223372036854775808.0

double ir_round_to_dtype(double v, kf_dtype dt) {
  switch (dt) {
    case KF_F16:
      return half_to_double(ir_double_to_f16(v), 10, 15);
    case KF_BF16:
      return half_to_double(ir_double_to_bf16(v), 7, 127);
    case KF_F32:
      return (double)(float)v;
    case KF_F64:
      return v;
    case KF_I32:
      if (isnan(v)) return 0.0;
      if (v >= 2147483647.0) return 2147483647.0;
      if (v <= -2147483648.0) return -2147483648.0;
      return trunc(v);
    case KF_I64:
      if (isnan(v)) return 0.0;
      if (v >= IR_I64_LIMIT) return IR_I64_LIMIT;
      if (v <= -IR_I64_LIMIT) return -IR_I64_LIMIT;
      return trunc(v);
    case KF_BOOL:
      return v != 0.0 ? 1.0 : 0.0; /* NaN != 0: true */
    default:
      return v;
  }
}

bool ir_literal_fits(double v, kf_dtype dt, char *why, size_t size) {
  const char *name = kf_dtype_name(dt);
  if (ir_dtype_is_float(dt)) {
    if (!isfinite(v) || isfinite(ir_round_to_dtype(v, dt))) return true;
    snprintf(why, size, "overflows %s (it would round to %sinfinity)", name, v < 0 ? "-" : "");
    return false;
  }
  if (dt == KF_BOOL) {
    if (v == 0.0 || v == 1.0) return true;
    snprintf(why, size, "is not a bool; bool literals are 0, 1, true or false");
    return false;
  }
  double lo = dt == KF_I32 ? -2147483648.0 : -IR_I64_LIMIT;
  double hi = dt == KF_I32 ? 2147483647.0 : IR_I64_LIMIT; /* i64: exclusive */
  if (!isfinite(v) || trunc(v) != v) {
    snprintf(why, size, "is not an integer, which %s needs", name);
    return false;
  }
  if (v < lo || v > hi || (dt == KF_I64 && v == hi)) {
    snprintf(why, size, "is out of the range of %s (%s)", name,
             dt == KF_I32 ? "-2147483648 to 2147483647" : "-2^63 to 2^63 - 1");
    return false;
  }
  return true;
}
