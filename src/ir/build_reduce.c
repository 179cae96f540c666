/* build_reduce.c - builders of the reductions sum, mean, max and min. */
#include <stdio.h>

#include "ir/build_common.h"
#include "ir/graph.h"
#include "ir/ops.h"

/* Turns (naxes, axes) into a bitmask of x's axes; naxes 0 means all of them.
 * Records KF_ERR_INVALID_ARG for a bad count, an axis out of range or a
 * duplicate. */
static bool axes_mask(kf_graph *g, const char *what, kf_value x, int naxes, const int *axes,
                      uint8_t *mask) {
  int rank = g->nodes[x].rank;
  kf_value id = ir_bld_next(g);
  char s[IR_DESC_SIZE];
  if (naxes < 0 || naxes > rank || (naxes > 0 && !axes))
    return ir_fail(g, KF_ERR_INVALID_ARG,
                   "node %%%d (%s): %d axes given for %s (want 0..%d, with an axes array)", id,
                   what, naxes, ir_bld_desc(g, x, s, sizeof s), rank),
           false;
  if (naxes == 0) {
    *mask = (uint8_t)((1u << rank) - 1u);
    return true;
  }
  unsigned m = 0;
  for (int i = 0; i < naxes; i++) {
    int a;
    if (!ir_bld_axis(axes[i], rank, &a))
      return ir_fail(g, KF_ERR_INVALID_ARG,
                     "node %%%d (%s): axis %d is out of range for %s (want %d..%d)", id, what,
                     axes[i], ir_bld_desc(g, x, s, sizeof s), -rank, rank - 1),
             false;
    if (m & (1u << a))
      return ir_fail(g, KF_ERR_INVALID_ARG, "node %%%d (%s): axis %d is given twice for %s", id,
                     what, axes[i], ir_bld_desc(g, x, s, sizeof s)),
             false;
    m |= 1u << a;
  }
  *mask = (uint8_t)m;
  return true;
}

static kf_value build_reduce(kf_graph *g, ir_op op, ir_accept acc, kf_value x, int naxes,
                             const int *axes, bool keepdim) {
  if (!ir_bld_live(g)) return KF_NONE;
  const char *what = ir_ops[op].name;
  if (!ir_bld_operand(g, what, x, "operand x") || !ir_bld_accepts(g, what, acc, x)) return KF_NONE;
  uint8_t mask;
  if (!axes_mask(g, what, x, naxes, axes, &mask)) return KF_NONE;
  const ir_node *in = &g->nodes[x];
  int64_t shape[KF_MAX_RANK];
  int rank = 0;
  for (int i = 0; i < in->rank; i++) {
    if (!(mask & (1u << i)))
      shape[rank++] = in->shape[i];
    else if (keepdim)
      shape[rank++] = 1;
  }
  ir_node n;
  ir_bld_node(&n, op, in->dtype, rank, shape);
  n.nargs = 1;
  n.args[0] = x;
  n.axes = mask;
  n.keepdim = keepdim;
  return ir_append(g, &n);
}

kf_value kf_sum(kf_graph *g, kf_value x, int naxes, const int *axes, bool keepdim) {
  return build_reduce(g, IR_OP_SUM, ACC_NUM, x, naxes, axes, keepdim);
}

kf_value kf_mean(kf_graph *g, kf_value x, int naxes, const int *axes, bool keepdim) {
  return build_reduce(g, IR_OP_MEAN, ACC_FLT, x, naxes, axes, keepdim);
}

kf_value kf_max(kf_graph *g, kf_value x, int naxes, const int *axes, bool keepdim) {
  return build_reduce(g, IR_OP_MAX, ACC_NUM, x, naxes, axes, keepdim);
}

kf_value kf_min(kf_graph *g, kf_value x, int naxes, const int *axes, bool keepdim) {
  return build_reduce(g, IR_OP_MIN, ACC_NUM, x, naxes, axes, keepdim);
}
