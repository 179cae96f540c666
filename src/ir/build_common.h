/* build_common.h - checks and helpers shared by the graph builders (build_*.c,
 * composite.c; build_common.c): operand validation, dtype rules and message
 * formatting. */
#ifndef KF_IR_BUILD_COMMON_H
#define KF_IR_BUILD_COMMON_H

#include "ir/ir.h"

/* Room for "%123 some_name f32[...8 dims...]". */
#define IR_DESC_SIZE 448

/* False (the builder returns KF_NONE) when g is NULL or already failed:
 * builder errors are sticky. */
static inline bool ir_bld_live(const kf_graph *g) {
  return g && g->status == KF_OK;
}

/* Index the next appended node will get; messages name it ("node %7"). */
static inline kf_value ir_bld_next(const kf_graph *g) {
  return g->n_nodes;
}

/* "%3 x f32[3,4]": the operand's label, dtype and shape. */
const char *ir_bld_desc(const kf_graph *g, kf_value v, char *buf, size_t size);

/* Checks that v is a value of g; otherwise a sticky KF_ERR_INVALID_ARG
 * naming the node to be created, `what` (the op or composite) and `role`
 * ("operand a", "weight"). */
bool ir_bld_operand(kf_graph *g, const char *what, kf_value v, const char *role);

/* Checks v's dtype against an accepts rule; otherwise a sticky KF_ERR_DTYPE
 * such as "exp needs a floating dtype (f16, bf16, f32, f64), got i32". */
bool ir_bld_accepts(kf_graph *g, const char *what, ir_accept acc, kf_value v);

/* Checks that tensor operands a and b share a dtype (KF_ERR_DTYPE). */
bool ir_bld_same_dtype(kf_graph *g, const char *what, kf_value a, kf_value b);

/* A zeroed node with op, dtype and rank set, and the shape copied unless
 * shape is NULL (the caller fills it then). */
void ir_bld_node(ir_node *n, ir_op op, kf_dtype dt, int rank, const int64_t *shape);

/* Normalizes a possibly negative axis into [0, rank); false if out of range. */
bool ir_bld_axis(int axis, int rank, int *out);

/* True for a kf_dtype enumerator (KF_F16 .. KF_BOOL). */
static inline bool ir_bld_dtype_ok(kf_dtype dt) {
  return dt >= 0 && dt < KF_DTYPE_COUNT;
}

#endif /* KF_IR_BUILD_COMMON_H */
