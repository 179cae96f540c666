/* ref_reduce.h - the reference interpreter's accumulating ops (sum, mean,
 * max, min, matmul) and a node's extent (ref_reduce.c). */
#ifndef KF_IR_REF_REDUCE_H
#define KF_IR_REF_REDUCE_H

#include "ir/ref.h"

/* A walk over the part [p0, p1) of a reduction of x over `axes`: the box of
 * x's index space whose first kept axis lies in [p0, p1), row-major, with
 * two odometers (in: x's dense offset from in_base; out: the output's
 * offset from out_base) over n_in inputs and n_out outputs. Each output
 * meets its inputs in row-major order of the reduced axes whatever the
 * part, the order of one walk over all of x. */
typedef struct ir_ref_red_part {
  ir_ref_iter in, out;
  int64_t in_base, out_base, n_in, n_out;
} ir_ref_red_part;
void ir_ref_red_part_init(const ir_node *x, uint8_t axes, int64_t p0, int64_t p1,
                          ir_ref_red_part *b);

/* Evaluators (ref.h): reductions and matmul. */
ir_ref_eval_fn ir_ref_eval_reduce, ir_ref_eval_matmul;
/* Strides, in elements, that step a matmul operand x's matrices while
 * walking the batch axes of its node n (broadcasting). */
void ir_ref_matmul_strides(const ir_node *x, const ir_node *n, int64_t *stride);
/* The extent a node's evaluator splits, and the input elements one unit of
 * it reads (so that parts are sized by work). */
int64_t ir_ref_extent(const kf_graph *g, const ir_node *n, int64_t *work_per_unit);

#endif /* KF_IR_REF_REDUCE_H */
