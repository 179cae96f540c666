/* build_index.c - builders of the index ops slice, concat, gather and iota
 * (docs/ops.md states their rules). */
#include <stdio.h>

#include "ir/build_common.h"
#include "ir/graph.h"
#include "ir/shape.h"

#define SHAPE_STR 8 * 21 + 3

/* A normalized axis of a value of rank `rank`, or a sticky error. */
static bool axis_of(kf_graph *g, const char *what, int axis, int rank, int *out) {
  if (ir_bld_axis(axis, rank, out)) return true;
  ir_fail(g, KF_ERR_INVALID_ARG,
          "node %%%d (%s): axis %d is out of range for rank %d (want %d..%d)", ir_bld_next(g), what,
          axis, rank, -rank, rank - 1);
  return false;
}

/* Python's rule for one slice bound with step >= 1: negative counts from
 * the end, then clamped into [0, n]. */
static int64_t slice_bound(int64_t b, int64_t n) {
  if (b < 0) b = b < -n ? 0 : b + n;
  return b > n ? n : b;
}

kf_value kf_slice(kf_graph *g, kf_value x, int axis, int64_t start, int64_t stop, int64_t step) {
  if (!ir_bld_live(g)) return KF_NONE;
  if (!ir_bld_operand(g, "slice", x, "operand x")) return KF_NONE;
  const ir_node *in = &g->nodes[x];
  int ax;
  if (!axis_of(g, "slice", axis, in->rank, &ax)) return KF_NONE;
  char d[IR_DESC_SIZE];
  if (step < 1)
    return ir_fail(g, KF_ERR_INVALID_ARG, "node %%%d (slice): step %lld (want >= 1) for %s",
                   ir_bld_next(g), (long long)step, ir_bld_desc(g, x, d, sizeof d));
  int64_t n = in->shape[ax], lo = slice_bound(start, n), hi = slice_bound(stop, n);
  if (hi <= lo)
    return ir_fail(g, KF_ERR_SHAPE,
                   "node %%%d (slice): [%lld:%lld:%lld] along axis %d of %s is empty (kfuse has "
                   "no empty tensors)",
                   ir_bld_next(g), (long long)start, (long long)stop, (long long)step, ax,
                   ir_bld_desc(g, x, d, sizeof d));
  ir_node nd;
  ir_bld_node(&nd, IR_OP_SLICE, in->dtype, in->rank, in->shape);
  nd.shape[ax] = (hi - lo - 1) / step + 1;
  nd.axis = (int8_t)ax;
  nd.start = lo;
  nd.step = step;
  nd.nargs = 1;
  nd.args[0] = x;
  return ir_append(g, &nd);
}

/* One concat node of a and b (checked: same rank and dtype, equal sizes
 * off the axis). */
static kf_value concat2(kf_graph *g, kf_value a, kf_value b, int ax, int i) {
  const ir_node *na = &g->nodes[a], *nb = &g->nodes[b];
  char da[IR_DESC_SIZE], db[IR_DESC_SIZE];
  bool ok = na->rank == nb->rank;
  for (int d = 0; ok && d < na->rank; d++) ok = d == ax || na->shape[d] == nb->shape[d];
  if (!ok)
    return ir_fail(g, KF_ERR_SHAPE,
                   "node %%%d (concat): operand %d %s does not fit %s along axis %d (equal rank, "
                   "equal sizes on the other axes)",
                   ir_bld_next(g), i, ir_bld_desc(g, b, db, sizeof db),
                   ir_bld_desc(g, a, da, sizeof da), ax);
  if (!ir_bld_same_dtype(g, "concat", a, b)) return KF_NONE;
  if (na->shape[ax] > INT64_MAX - nb->shape[ax])
    return ir_fail(g, KF_ERR_SHAPE, "node %%%d (concat): axis %d overflows int64", ir_bld_next(g),
                   ax);
  ir_node nd;
  ir_bld_node(&nd, IR_OP_CONCAT, na->dtype, na->rank, na->shape);
  nd.shape[ax] += nb->shape[ax];
  if (!ir_numel(nd.rank, nd.shape, NULL))
    return ir_fail(g, KF_ERR_SHAPE, "node %%%d (concat): more elements than int64 holds",
                   ir_bld_next(g));
  nd.axis = (int8_t)ax;
  nd.nargs = 2;
  nd.args[0] = a;
  nd.args[1] = b;
  return ir_append(g, &nd);
}

kf_value kf_concat(kf_graph *g, int n, const kf_value *xs, int axis) {
  if (!ir_bld_live(g)) return KF_NONE;
  if (n < 1 || !xs)
    return ir_fail(g, KF_ERR_INVALID_ARG, "node %%%d (concat): %d operands (want >= 1, an array)",
                   ir_bld_next(g), n);
  for (int i = 0; i < n; i++) {
    char role[32];
    snprintf(role, sizeof role, "operand %d", i);
    if (!ir_bld_operand(g, "concat", xs[i], role)) return KF_NONE;
  }
  int ax;
  if (!axis_of(g, "concat", axis, g->nodes[xs[0]].rank, &ax)) return KF_NONE;
  kf_value acc = xs[0];
  for (int i = 1; i < n && acc != KF_NONE; i++) acc = concat2(g, acc, xs[i], ax, i);
  return acc;
}

kf_value kf_gather(kf_graph *g, kf_value x, kf_value index, int axis) {
  if (!ir_bld_live(g)) return KF_NONE;
  if (!ir_bld_operand(g, "gather", x, "operand x") || !ir_bld_operand(g, "gather", index, "index"))
    return KF_NONE;
  const ir_node *in = &g->nodes[x], *ix = &g->nodes[index];
  char d[IR_DESC_SIZE];
  if (ix->dtype != KF_I32 && ix->dtype != KF_I64)
    return ir_fail(g, KF_ERR_DTYPE, "node %%%d (gather): index needs i32 or i64, got %s",
                   ir_bld_next(g), ir_bld_desc(g, index, d, sizeof d));
  int ax;
  if (!axis_of(g, "gather", axis, in->rank, &ax)) return KF_NONE;
  int rank = in->rank - 1 + ix->rank;
  if (rank > KF_MAX_RANK)
    return ir_fail(g, KF_ERR_SHAPE, "node %%%d (gather): the result would have rank %d (max %d)",
                   ir_bld_next(g), rank, KF_MAX_RANK);
  ir_node nd;
  ir_bld_node(&nd, IR_OP_GATHER, in->dtype, rank, NULL);
  int o = 0;
  for (int i = 0; i < ax; i++) nd.shape[o++] = in->shape[i];
  for (int i = 0; i < ix->rank; i++) nd.shape[o++] = ix->shape[i];
  for (int i = ax + 1; i < in->rank; i++) nd.shape[o++] = in->shape[i];
  if (!ir_numel(nd.rank, nd.shape, NULL))
    return ir_fail(g, KF_ERR_SHAPE, "node %%%d (gather): more elements than int64 holds",
                   ir_bld_next(g));
  nd.axis = (int8_t)ax;
  nd.nargs = 2;
  nd.args[0] = x;
  nd.args[1] = index;
  return ir_append(g, &nd);
}

kf_value kf_iota(kf_graph *g, kf_dtype dtype, int rank, const int64_t *shape, int axis) {
  if (!ir_bld_live(g)) return KF_NONE;
  kf_value id = ir_bld_next(g);
  if (!ir_bld_dtype_ok(dtype) || dtype == KF_BOOL)
    return ir_fail(g, KF_ERR_DTYPE, "node %%%d (iota): dtype %d (want a numeric dtype)", id,
                   (int)dtype);
  if (rank < 1 || rank > KF_MAX_RANK || !shape)
    return ir_fail(g, KF_ERR_INVALID_ARG,
                   "node %%%d (iota): rank %d (want 1..%d, with a shape array)", id, rank,
                   KF_MAX_RANK);
  char s[SHAPE_STR];
  for (int i = 0; i < rank; i++)
    if (shape[i] < 1)
      return ir_fail(g, KF_ERR_INVALID_ARG,
                     "node %%%d (iota): shape %s has dimension %d = %lld (want >= 1)", id,
                     ir_shape_str(s, sizeof s, rank, shape), i, (long long)shape[i]);
  if (!ir_numel(rank, shape, NULL))
    return ir_fail(g, KF_ERR_INVALID_ARG,
                   "node %%%d (iota): shape %s has more elements than int64 holds", id,
                   ir_shape_str(s, sizeof s, rank, shape));
  int ax;
  if (!axis_of(g, "iota", axis, rank, &ax)) return KF_NONE;
  if (dtype == KF_I32 && shape[ax] - 1 > INT32_MAX)
    return ir_fail(g, KF_ERR_SHAPE, "node %%%d (iota): axis %d has %lld entries, past i32's range",
                   id, ax, (long long)shape[ax]);
  ir_node nd;
  ir_bld_node(&nd, IR_OP_IOTA, dtype, rank, shape);
  nd.axis = (int8_t)ax;
  return ir_append(g, &nd);
}
