/* ref_bound.h - the shared rules of the reference's error bounds: unit
 * roundoffs, a node's final rounding, an op's own error, and the error of a
 * float accumulation (ref_bound.c, ref_bound_reduce.c). */
#ifndef KF_IR_REF_BOUND_H
#define KF_IR_REF_BOUND_H

#include "ir/ref.h"

#define REF_U32 0x1p-24 /* unit roundoff of f32 (half an ulp at 1) */
#define REF_U64 0x1p-53

/* The bound of a node of dtype dt whose reference value is v, the rounding
 * of pre, when a correct kernel's value before that rounding lies within
 * dev of pre: the widest the rounded interval [pre - dev, pre + dev] (through
 * f32 first, for f32/f16/bf16 nodes, whose kernels compute in f32) reaches
 * from v. 0 when nothing can differ; INFINITY when the result is not bounded
 * (the interval reaches an overflow, or NaN where v is not). For a NaN or
 * infinite v, 0 means the kernel must give the same special value. */
double ir_ref_bound_round(double pre, double dev, double v, kf_dtype dt);
/* The deviation before rounding of a kernel computing op (node dtype dt,
 * result pre, first operand x) from operands within a propagated deviation
 * p: p plus the op's own error (the device function's documented ulps). */
double ir_ref_bound_dev(ir_op op, kf_dtype dt, double pre, double x, double p);

/* Error bounds (ref.h), with the evaluators' signature, of the elementwise
 * and layout ops. */
ir_ref_eval_fn ir_ref_bound_unary, ir_ref_bound_binary, ir_ref_bound_where, ir_ref_bound_clamp,
    ir_ref_bound_cast, ir_ref_bound_layout;

#endif /* KF_IR_REF_BOUND_H */
