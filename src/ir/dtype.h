/* dtype.h - the rounding rule of kfuse (dtype.c): a double rounded once to a
 * dtype, the literal rule, and f16/bf16 bits. */
#ifndef KF_IR_DTYPE_H
#define KF_IR_DTYPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kfuse.h"

/* True for f16 bf16 f32 f64. */
bool ir_dtype_is_float(kf_dtype dt);
/* Rounds a double once to dtype and returns it as a double (f16/bf16/f32
 * round to nearest even; integers truncate toward zero and saturate, NaN
 * gives 0; bool gives 0 or 1). */
double ir_round_to_dtype(double v, kf_dtype dt);
/* The literal rule (kf_scalar, YAML literals and const): true when dtype dt
 * holds v, after rounding for a float dtype. Integers (i32, i64) need an
 * integral v in range, bool 0 or 1; f16/bf16/f32/f64 round to nearest, but
 * a finite v that would round to an infinity is refused (NaN and infinities
 * given as such are kept). Otherwise false with the reason in why ("is not
 * an integer, which i32 needs"), to follow the value in a message. */
bool ir_literal_fits(double v, kf_dtype dt, char *why, size_t size);
/* Bit conversions from double, rounding once (no double rounding through
 * float). */
uint16_t ir_double_to_f16(double v);
uint16_t ir_double_to_bf16(double v);

#endif /* KF_IR_DTYPE_H */
