/* div_const.c - the exhaustive check of div_const.h: 65536 divisions and
 * products on the host, in IEEE float as the device computes kf_div and
 * kf_mul (no contraction: --fmad=false), each rounded to the dtype as
 * kf_round_f16 / kf_round_bf16 round (to nearest even). */
#include "codegen/div_const.h"

#include <math.h>
#include <stdint.h>

static uint16_t round16(kf_dtype dt, float x) {
  return dt == KF_BF16 ? kf_float_to_bf16(x) : kf_float_to_f16(x);
}

bool cg_div_const_exact(kf_dtype dt, double c, float *r) {
  if (dt != KF_F16 && dt != KF_BF16) return false;
  /* volatile: the host compiler must not fold or contract these either */
  volatile float d = (float)c;
  if (!isfinite(d) || d == 0.0f) return false;
  if ((double)d != c) return false; /* the kernel's literal is (float)c */
  volatile float rcp = 1.0f / d;
  if (!isfinite(rcp) || rcp == 0.0f) return false;
  for (uint32_t h = 0; h < 65536u; h++) {
    float x = dt == KF_BF16 ? kf_bf16_to_float((uint16_t)h) : kf_f16_to_float((uint16_t)h);
    volatile float q = x / d, p = x * rcp;
    if (isnan(q) || isnan(p)) {
      if (isnan(q) != isnan(p)) return false;
      continue;
    }
    if (round16(dt, q) != round16(dt, p)) return false;
  }
  *r = rcp;
  return true;
}
