/* shape.h - element and byte counts under the size limit, NumPy
 * broadcasting, extent-1 reductions and shape formatting (shape.c). */
#ifndef KF_IR_SHAPE_H
#define KF_IR_SHAPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/ir.h"

/* Formats a shape as "[2,3]" into buf (at least 8*21+3 bytes). */
const char *ir_shape_str(char *buf, size_t size, int rank, const int64_t *shape);
/* Element count with overflow check: false if the product exceeds INT64_MAX
 * or any dimension is < 0. rank 0 gives 1. */
bool ir_numel(int rank, const int64_t *shape, int64_t *out);
/* A tensor's bytes (numel * dtype size) with overflow checks: false when
 * the element count overflows int64, the dtype is unknown or the bytes
 * exceed KF_MAX_TENSOR_BYTES. Every node passes it in ir_append. */
bool ir_tensor_bytes(int rank, const int64_t *shape, kf_dtype dt, int64_t *bytes);
/* *sum += add, false (and *sum unchanged) when the total would exceed
 * KF_MAX_TENSOR_BYTES or add is negative: for totals such as a plan's
 * buffers and workspace. */
bool ir_bytes_add(int64_t *sum, int64_t add);
/* A reduction whose reduced axes all have extent 1 (a rank-0 operand
 * included): each result is one element of the operand, so the fuser and
 * codegen treat it as a reshape (sum and mean add +0, as the reference's
 * sum from 0.0 does), never as a reduction kernel. False for other ops. */
bool ir_is_copy_reduce(const kf_graph *g, const ir_node *n);
/* A reduction over more than one element: what needs a row or reduce
 * kernel (KIND_REDUCE and not ir_is_copy_reduce). */
bool ir_is_reduction(const kf_graph *g, const ir_node *n);
/* NumPy broadcasting of two shapes; false if they do not broadcast. */
bool ir_broadcast_shapes(int ra, const int64_t *a, int rb, const int64_t *b, int *rout,
                         int64_t *out);

#endif /* KF_IR_SHAPE_H */
