/* ref_layout.h - the reference interpreter's strides and its layout ops'
 * evaluator (ref_layout.c). */
#ifndef KF_IR_REF_LAYOUT_H
#define KF_IR_REF_LAYOUT_H

#include "ir/ref.h"

/* Row-major strides of a dense shape. */
void ir_ref_dense_strides(int rank, const int64_t *shape, int64_t *stride);
/* Strides that read a dense tensor of shape `in` (rank rin) while walking
 * `out` (rank rout >= rin): axes aligned from the right, 0 where `in` is 1
 * or missing (NumPy broadcasting). */
void ir_ref_bcast_strides(int rin, const int64_t *in, int rout, const int64_t *out,
                          int64_t *stride);
/* A walk over node n's elements that reads operand x broadcast to n's
 * shape, at n's element p0 (binary and select ops' operands). */
void ir_ref_iter_operand(ir_ref_iter *it, const ir_node *x, const ir_node *n, int64_t p0);

/* The evaluator (ref.h) of the layout ops. */
ir_ref_eval_fn ir_ref_eval_layout;

#endif /* KF_IR_REF_LAYOUT_H */
