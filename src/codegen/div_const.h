/* div_const.h - when a 16-bit division by a constant may be a product:
 * the attention modifier's fast form (KFUSE_ATTN_FAST_TANH) turns x / c
 * into x * (1/c) only where both round to the same 16-bit value for every
 * x of the dtype, checked here once per constant. */
#ifndef KF_CODEGEN_DIV_CONST_H
#define KF_CODEGEN_DIV_CONST_H

#include <stdbool.h>

#include "kfuse.h"

/* Whether, for every f16 (or bf16, by dt) value x, the float quotient x / c
 * and the float product x * r, r = 1.0f / c, round to the same dt value
 * (NaN where the other is NaN); then *r holds the reciprocal. c must be a
 * finite, nonzero value of dt. */
bool cg_div_const_exact(kf_dtype dt, double c, float *r);

#endif
