/* build_common.c - operand, dtype and axis checks shared by every builder. */
#include "ir/build_common.h"

#include <stdio.h>
#include <string.h>

#include "ir/dtype.h"
#include "ir/graph.h"
#include "ir/shape.h"

const char *ir_bld_desc(const kf_graph *g, kf_value v, char *buf, size_t size) {
  if (!ir_valid(g, v)) {
    snprintf(buf, size, "%%%d (invalid)", (int)v);
    return buf;
  }
  char label[300], shape[8 * 21 + 3];
  const ir_node *n = &g->nodes[v];
  snprintf(buf, size, "%s %s%s", ir_node_label(g, v, label, sizeof label), kf_dtype_name(n->dtype),
           ir_shape_str(shape, sizeof shape, n->rank, n->shape));
  return buf;
}

bool ir_bld_operand(kf_graph *g, const char *what, kf_value v, const char *role) {
  if (ir_valid(g, v)) return true;
  if (v == KF_NONE)
    ir_fail(g, KF_ERR_INVALID_ARG, "node %%%d (%s): %s is KF_NONE", ir_bld_next(g), what, role);
  else
    ir_fail(g, KF_ERR_INVALID_ARG,
            "node %%%d (%s): %s is %%%d, not a value of this graph (it has %d values)",
            ir_bld_next(g), what, role, (int)v, (int)g->n_nodes);
  return false;
}

static bool accepted(ir_accept acc, kf_dtype dt) {
  switch (acc) {
    case ACC_FLT:
      return ir_dtype_is_float(dt);
    case ACC_NUM:
      return dt != KF_BOOL;
    default:
      return true;
  }
}

bool ir_bld_accepts(kf_graph *g, const char *what, ir_accept acc, kf_value v) {
  kf_dtype dt = g->nodes[v].dtype;
  if (accepted(acc, dt)) return true;
  char d[IR_DESC_SIZE];
  const char *want = acc == ACC_FLT ? "a floating dtype (f16, bf16, f32, f64)"
                                    : "a numeric dtype (f16, bf16, f32, f64, i32, i64)";
  ir_fail(g, KF_ERR_DTYPE, "node %%%d (%s): %s needs %s, got %s from %s; use cast", ir_bld_next(g),
          what, what, want, kf_dtype_name(dt), ir_bld_desc(g, v, d, sizeof d));
  return false;
}

bool ir_bld_same_dtype(kf_graph *g, const char *what, kf_value a, kf_value b) {
  kf_dtype da = g->nodes[a].dtype, db = g->nodes[b].dtype;
  if (da == db) return true;
  char sa[IR_DESC_SIZE], sb[IR_DESC_SIZE];
  ir_fail(g, KF_ERR_DTYPE,
          "node %%%d (%s): operands must share a dtype, got %s and %s; cast one to %s",
          ir_bld_next(g), what, ir_bld_desc(g, a, sa, sizeof sa), ir_bld_desc(g, b, sb, sizeof sb),
          kf_dtype_name(da));
  return false;
}

void ir_bld_node(ir_node *n, ir_op op, kf_dtype dt, int rank, const int64_t *shape) {
  memset(n, 0, sizeof *n);
  n->op = op;
  n->dtype = dt;
  n->rank = (int8_t)rank;
  for (int i = 0; shape && i < rank; i++) n->shape[i] = shape[i];
  n->args[0] = n->args[1] = n->args[2] = KF_NONE;
}

bool ir_bld_axis(int axis, int rank, int *out) {
  if (axis < -rank || axis >= rank) return false;
  *out = axis < 0 ? axis + rank : axis;
  return true;
}
