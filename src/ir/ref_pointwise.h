/* ref_pointwise.h - the reference interpreter's elementwise ops and its
 * rounding of results (ref_pointwise.c). */
#ifndef KF_IR_REF_POINTWISE_H
#define KF_IR_REF_POINTWISE_H

#include "ir/ref.h"

/* Evaluators (ref.h) of the elementwise ops. */
ir_ref_eval_fn ir_ref_eval_unary, ir_ref_eval_binary, ir_ref_eval_where, ir_ref_eval_clamp,
    ir_ref_eval_cast;

/* Rounding a result once to its dtype and storing it at o[k]. */
/* From a double: floats round to nearest even, integers truncate toward
 * zero and saturate (NaN gives 0), bool is v != 0. */
void ir_ref_put_f(ir_ref_buf *o, int64_t k, double v, kf_dtype dt);
/* From an int64: integers wrap (two's complement), bool is v != 0, floats
 * round once from the exact integer. */
void ir_ref_put_i(ir_ref_buf *o, int64_t k, int64_t v, kf_dtype dt);
/* Saturating conversion of a double to an integer dtype (NaN gives 0), or
 * to bool (v != 0, so NaN gives true). */
int64_t ir_ref_sat_int(double v, kf_dtype dt);
/* The f64 columns of ops.def (the value of a float unary or binary op
 * before rounding). */
double ir_ref_unary_f(ir_op op, double x);
double ir_ref_binary_f(ir_op op, double a, double b);

#endif /* KF_IR_REF_POINTWISE_H */
