/* build_pointwise.c - builders of the elementwise ops: every unary and binary
 * op of ops.def (one generic builder each), where, clamp and cast. */
#include <math.h>
#include <stdio.h>

#include "ir/build_common.h"
#include "ir/graph.h"
#include "ir/ops.h"
#include "ir/shape.h"

static kf_value build_unary(kf_graph *g, ir_op op, kf_value x) {
  if (!ir_bld_live(g)) return KF_NONE;
  const ir_op_info *info = &ir_ops[op];
  if (!ir_bld_operand(g, info->name, x, "operand x")) return KF_NONE;
  if (!ir_bld_accepts(g, info->name, info->accepts, x)) return KF_NONE;
  const ir_node *in = &g->nodes[x];
  ir_node n;
  ir_bld_node(&n, op, info->result == RES_BOOL ? KF_BOOL : in->dtype, in->rank, in->shape);
  n.nargs = 1;
  n.args[0] = x;
  return ir_append(g, &n);
}

/* Broadcasts the shapes of a and b into (*rank, shape); KF_ERR_SHAPE otherwise. */
static bool broadcast2(kf_graph *g, const char *what, kf_value a, kf_value b, int *rank,
                       int64_t *shape) {
  const ir_node *na = &g->nodes[a], *nb = &g->nodes[b];
  if (ir_broadcast_shapes(na->rank, na->shape, nb->rank, nb->shape, rank, shape)) return true;
  char sa[IR_DESC_SIZE], sb[IR_DESC_SIZE];
  ir_fail(g, KF_ERR_SHAPE, "node %%%d (%s): cannot broadcast %s with %s", ir_bld_next(g), what,
          ir_bld_desc(g, a, sa, sizeof sa), ir_bld_desc(g, b, sb, sizeof sb));
  return false;
}

static kf_value build_binary(kf_graph *g, ir_op op, kf_value a, kf_value b) {
  if (!ir_bld_live(g)) return KF_NONE;
  const ir_op_info *info = &ir_ops[op];
  if (!ir_bld_operand(g, info->name, a, "operand a") ||
      !ir_bld_operand(g, info->name, b, "operand b") || !ir_bld_same_dtype(g, info->name, a, b) ||
      !ir_bld_accepts(g, info->name, info->accepts, a))
    return KF_NONE;
  int rank;
  int64_t shape[KF_MAX_RANK];
  if (!broadcast2(g, info->name, a, b, &rank, shape)) return KF_NONE;
  ir_node n;
  ir_bld_node(&n, op, info->result == RES_BOOL ? KF_BOOL : g->nodes[a].dtype, rank, shape);
  n.nargs = 2;
  n.args[0] = a;
  n.args[1] = b;
  return ir_append(g, &n);
}

/* One public entry point per row of ops.def. */
#define UNARY(ID, lname, ...)                    \
  kf_value kf_##lname(kf_graph *g, kf_value x) { \
    return build_unary(g, IR_OP_##ID, x);        \
  }
#define BINARY(ID, lname, ...)                               \
  kf_value kf_##lname(kf_graph *g, kf_value a, kf_value b) { \
    return build_binary(g, IR_OP_##ID, a, b);                \
  }
#include "ir/ops.def"

kf_value kf_where(kf_graph *g, kf_value cond, kf_value a, kf_value b) {
  if (!ir_bld_live(g)) return KF_NONE;
  if (!ir_bld_operand(g, "where", cond, "operand cond") ||
      !ir_bld_operand(g, "where", a, "operand a") || !ir_bld_operand(g, "where", b, "operand b"))
    return KF_NONE;
  if (g->nodes[cond].dtype != KF_BOOL) {
    char s[IR_DESC_SIZE];
    return ir_fail(g, KF_ERR_DTYPE, "node %%%d (where): cond must be bool, got %s; use cast",
                   ir_bld_next(g), ir_bld_desc(g, cond, s, sizeof s));
  }
  if (!ir_bld_same_dtype(g, "where", a, b)) return KF_NONE;
  int rank;
  int64_t shape[KF_MAX_RANK];
  if (!broadcast2(g, "where", a, b, &rank, shape)) return KF_NONE;
  const ir_node *nc = &g->nodes[cond];
  if (!ir_broadcast_shapes(nc->rank, nc->shape, rank, shape, &rank, shape)) {
    char sc[IR_DESC_SIZE], s[8 * 21 + 3];
    return ir_fail(g, KF_ERR_SHAPE,
                   "node %%%d (where): cannot broadcast cond %s with the operands' shape %s",
                   ir_bld_next(g), ir_bld_desc(g, cond, sc, sizeof sc),
                   ir_shape_str(s, sizeof s, rank, shape));
  }
  ir_node n;
  ir_bld_node(&n, IR_OP_WHERE, g->nodes[a].dtype, rank, shape);
  n.nargs = 3;
  n.args[0] = cond;
  n.args[1] = a;
  n.args[2] = b;
  return ir_append(g, &n);
}

kf_value kf_clamp(kf_graph *g, kf_value x, double lo, double hi) {
  if (!ir_bld_live(g)) return KF_NONE;
  if (!ir_bld_operand(g, "clamp", x, "operand x") || !ir_bld_accepts(g, "clamp", ACC_NUM, x))
    return KF_NONE;
  kf_value id = ir_bld_next(g);
  if (isnan(lo) || isnan(hi))
    return ir_fail(g, KF_ERR_INVALID_ARG,
                   "node %%%d (clamp): bound is NaN (min %g, max %g); pass -INFINITY or "
                   "INFINITY for an absent bound",
                   id, lo, hi);
  if (lo > hi)
    return ir_fail(g, KF_ERR_INVALID_ARG, "node %%%d (clamp): min %g is greater than max %g", id,
                   lo, hi);
  const ir_node *in = &g->nodes[x];
  ir_node n;
  ir_bld_node(&n, IR_OP_CLAMP, in->dtype, in->rank, in->shape);
  n.nargs = 1;
  n.args[0] = x;
  n.lo = lo;
  n.hi = hi;
  return ir_append(g, &n);
}

kf_value kf_cast(kf_graph *g, kf_value x, kf_dtype dtype) {
  if (!ir_bld_live(g)) return KF_NONE;
  if (!ir_bld_operand(g, "cast", x, "operand x")) return KF_NONE;
  if (!ir_bld_dtype_ok(dtype))
    return ir_fail(g, KF_ERR_INVALID_ARG, "node %%%d (cast): unknown target dtype %d",
                   ir_bld_next(g), (int)dtype);
  const ir_node *in = &g->nodes[x];
  ir_node n;
  ir_bld_node(&n, IR_OP_CAST, dtype, in->rank, in->shape);
  n.nargs = 1;
  n.args[0] = x;
  return ir_append(g, &n);
}
