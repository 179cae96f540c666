/* ref_bound_reduce.h - the reference's error bounds for accumulating ops
 * (ref_bound_reduce.c). */
#ifndef KF_IR_REF_BOUND_REDUCE_H
#define KF_IR_REF_BOUND_REDUCE_H

#include "ir/ref.h"

/* Error bounds (ref.h) of the accumulating ops. */
ir_ref_eval_fn ir_ref_bound_reduce, ir_ref_bound_matmul;

#endif /* KF_IR_REF_BOUND_REDUCE_H */
