/* test_random.h - the suites' one random source: xorshift64 and the fill
 * of an input buffer (uniform in [-2, 2) for floats, -50..50 for integers,
 * 0/1 for bool), shared by the CPU property tests and the GPU suites so
 * that both draw the same inputs from one seed. */
#ifndef KF_TEST_RANDOM_H
#define KF_TEST_RANDOM_H

#include <stdint.h>

#include "kfuse.h"

static inline uint64_t rng_next(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

static inline double rng_unit(uint64_t *s) {
  return (double)(rng_next(s) >> 11) / 9007199254740992.0;
}

static inline void fill_random(void *buf, kf_dtype dt, int64_t n, uint64_t *s) {
  for (int64_t i = 0; i < n; i++) {
    double u = rng_unit(s) * 4.0 - 2.0;
    switch (dt) {
      case KF_F16:
        ((uint16_t *)buf)[i] = kf_float_to_f16((float)u);
        break;
      case KF_BF16:
        ((uint16_t *)buf)[i] = kf_float_to_bf16((float)u);
        break;
      case KF_F32:
        ((float *)buf)[i] = (float)u;
        break;
      case KF_F64:
        ((double *)buf)[i] = u;
        break;
      case KF_I32:
        ((int32_t *)buf)[i] = (int32_t)(rng_next(s) % 101) - 50;
        break;
      case KF_I64:
        ((int64_t *)buf)[i] = (int64_t)(rng_next(s) % 101) - 50;
        break;
      default:
        ((uint8_t *)buf)[i] = (uint8_t)(rng_next(s) & 1);
        break;
    }
  }
}

#endif
