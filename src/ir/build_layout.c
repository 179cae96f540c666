/* build_layout.c - builders of the layout ops reshape, transpose and
 * broadcast_to (index arithmetic only, no data changes). */
#include <stdio.h>

#include "ir/build_common.h"
#include "ir/graph.h"
#include "ir/shape.h"

#define SHAPE_STR 8 * 21 + 3

/* Checks a target (rank, shape) given to reshape or broadcast_to; -1 is
 * allowed once when allow_infer. */
static bool check_target(kf_graph *g, const char *what, int rank, const int64_t *shape,
                         bool allow_infer, int *infer_at) {
  kf_value id = ir_bld_next(g);
  *infer_at = -1;
  if (rank < 0 || rank > KF_MAX_RANK || (rank > 0 && !shape))
    return ir_fail(g, KF_ERR_INVALID_ARG,
                   "node %%%d (%s): target rank %d (want 0..%d, with a shape array)", id, what,
                   rank, KF_MAX_RANK),
           false;
  char s[SHAPE_STR];
  for (int i = 0; i < rank; i++) {
    if (shape[i] == -1 && allow_infer && *infer_at < 0) {
      *infer_at = i;
      continue;
    }
    if (shape[i] < 1)
      return ir_fail(g, KF_ERR_INVALID_ARG,
                     "node %%%d (%s): target shape %s has dimension %d = %lld (want >= 1%s)", id,
                     what, ir_shape_str(s, sizeof s, rank, shape), i, (long long)shape[i],
                     allow_infer ? ", or one -1" : ""),
             false;
  }
  return true;
}

kf_value kf_reshape(kf_graph *g, kf_value x, int rank, const int64_t *shape) {
  if (!ir_bld_live(g)) return KF_NONE;
  if (!ir_bld_operand(g, "reshape", x, "operand x")) return KF_NONE;
  int at;
  if (!check_target(g, "reshape", rank, shape, true, &at)) return KF_NONE;
  const ir_node *in = &g->nodes[x];
  int64_t out[KF_MAX_RANK], want, rest;
  for (int i = 0; i < rank; i++) out[i] = i == at ? 1 : shape[i];
  ir_numel(in->rank, in->shape, &want);
  bool ok = ir_numel(rank, out, &rest);
  if (ok && at >= 0) {
    ok = want % rest == 0;
    out[at] = ok ? want / rest : 1;
  }
  if (!ok || (at < 0 && rest != want)) {
    char d[IR_DESC_SIZE], s[SHAPE_STR];
    return ir_fail(g, KF_ERR_SHAPE, "node %%%d (reshape): cannot reshape %s (%lld elements) to %s",
                   ir_bld_next(g), ir_bld_desc(g, x, d, sizeof d), (long long)want,
                   ir_shape_str(s, sizeof s, rank, shape));
  }
  ir_node n;
  ir_bld_node(&n, IR_OP_RESHAPE, in->dtype, rank, out);
  n.nargs = 1;
  n.args[0] = x;
  return ir_append(g, &n);
}

kf_value kf_transpose(kf_graph *g, kf_value x, const int *perm) {
  if (!ir_bld_live(g)) return KF_NONE;
  if (!ir_bld_operand(g, "transpose", x, "operand x")) return KF_NONE;
  const ir_node *in = &g->nodes[x];
  char d[IR_DESC_SIZE];
  if (in->rank > 0 && !perm)
    return ir_fail(g, KF_ERR_INVALID_ARG, "node %%%d (transpose): perm is NULL for %s",
                   ir_bld_next(g), ir_bld_desc(g, x, d, sizeof d));
  ir_node n;
  ir_bld_node(&n, IR_OP_TRANSPOSE, in->dtype, in->rank, NULL);
  unsigned seen = 0;
  for (int i = 0; i < in->rank; i++) {
    int p = perm[i];
    if (p < 0 || p >= in->rank || (seen & (1u << p)))
      return ir_fail(g, KF_ERR_INVALID_ARG,
                     "node %%%d (transpose): perm[%d] = %d, but perm must be a permutation of "
                     "0..%d for %s",
                     ir_bld_next(g), i, p, in->rank - 1, ir_bld_desc(g, x, d, sizeof d));
    seen |= 1u << p;
    n.perm[i] = (int8_t)p;
    n.shape[i] = in->shape[p];
  }
  n.nargs = 1;
  n.args[0] = x;
  return ir_append(g, &n);
}

kf_value kf_broadcast_to(kf_graph *g, kf_value x, int rank, const int64_t *shape) {
  if (!ir_bld_live(g)) return KF_NONE;
  if (!ir_bld_operand(g, "broadcast_to", x, "operand x")) return KF_NONE;
  int at;
  if (!check_target(g, "broadcast_to", rank, shape, false, &at)) return KF_NONE;
  const ir_node *in = &g->nodes[x];
  bool ok = in->rank <= rank;
  for (int i = 0; ok && i < in->rank; i++) {
    int64_t d = in->shape[in->rank - 1 - i];
    ok = d == 1 || d == shape[rank - 1 - i];
  }
  if (!ok) {
    char d[IR_DESC_SIZE], s[SHAPE_STR];
    return ir_fail(g, KF_ERR_SHAPE, "node %%%d (broadcast_to): cannot broadcast %s to %s",
                   ir_bld_next(g), ir_bld_desc(g, x, d, sizeof d),
                   ir_shape_str(s, sizeof s, rank, shape));
  }
  ir_node n;
  ir_bld_node(&n, IR_OP_BROADCAST_TO, in->dtype, rank, shape);
  n.nargs = 1;
  n.args[0] = x;
  return ir_append(g, &n);
}
