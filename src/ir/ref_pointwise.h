/* ref_pointwise.h - the reference interpreter's elementwise ops and its
 * rounding of results (ref_pointwise.c). */
#ifndef KF_IR_REF_POINTWISE_H
#define KF_IR_REF_POINTWISE_H

#include "ir/ref.h"

/* Evaluators (ref.h) of the elementwise ops. */
ref_eval_fn ref_eval_unary, ref_eval_binary, ref_eval_where, ref_eval_clamp, ref_eval_cast;

/* Rounding a result once to its dtype and storing it at o[k]. */
/* From a double: floats round to nearest even, integers truncate toward
 * zero and saturate (NaN gives 0), bool is v != 0. */
void ref_put_f(ref_buf *o, int64_t k, double v, kf_dtype dt);
/* From an int64: integers wrap (two's complement), bool is v != 0, floats
 * round once from the exact integer. */
void ref_put_i(ref_buf *o, int64_t k, int64_t v, kf_dtype dt);
/* Saturating conversion of a double to an integer dtype (NaN gives 0), or
 * to bool (v != 0, so NaN gives true). */
int64_t ref_sat_int(double v, kf_dtype dt);
/* The f64 columns of ops.def (the value of a float unary or binary op
 * before rounding). */
double ref_unary_f(ir_op op, double x);
double ref_binary_f(ir_op op, double a, double b);

#endif /* KF_IR_REF_POINTWISE_H */
