/* build_matmul.c - the matmul builder: a[...,m,k] x b[...,k,n], leading axes
 * broadcast. */
#include <stdio.h>

#include "ir/build_common.h"
#include "ir/graph.h"
#include "ir/shape.h"

kf_value kf_matmul(kf_graph *g, kf_value a, kf_value b) {
  if (!ir_bld_live(g)) return KF_NONE;
  if (!ir_bld_operand(g, "matmul", a, "operand a") ||
      !ir_bld_operand(g, "matmul", b, "operand b") || !ir_bld_same_dtype(g, "matmul", a, b) ||
      !ir_bld_accepts(g, "matmul", ACC_NUM, a))
    return KF_NONE;
  const ir_node *na = &g->nodes[a], *nb = &g->nodes[b];
  char sa[IR_DESC_SIZE], sb[IR_DESC_SIZE];
  kf_value id = ir_bld_next(g);
  if (na->rank < 2 || nb->rank < 2)
    return ir_fail(g, KF_ERR_SHAPE,
                   "node %%%d (matmul): both operands need rank >= 2 (reshape a vector to "
                   "[1,k] or [k,1]), got %s and %s",
                   id, ir_bld_desc(g, a, sa, sizeof sa), ir_bld_desc(g, b, sb, sizeof sb));
  int ra = na->rank, rb = nb->rank;
  if (na->shape[ra - 1] != nb->shape[rb - 2])
    return ir_fail(g, KF_ERR_SHAPE,
                   "node %%%d (matmul): inner dimensions differ (%lld vs %lld) in %s x %s", id,
                   (long long)na->shape[ra - 1], (long long)nb->shape[rb - 2],
                   ir_bld_desc(g, a, sa, sizeof sa), ir_bld_desc(g, b, sb, sizeof sb));
  int64_t shape[KF_MAX_RANK];
  int rank;
  if (!ir_broadcast_shapes(ra - 2, na->shape, rb - 2, nb->shape, &rank, shape))
    return ir_fail(g, KF_ERR_SHAPE,
                   "node %%%d (matmul): leading (batch) axes do not broadcast in %s x %s", id,
                   ir_bld_desc(g, a, sa, sizeof sa), ir_bld_desc(g, b, sb, sizeof sb));
  shape[rank] = na->shape[ra - 2];
  shape[rank + 1] = nb->shape[rb - 1];
  ir_node n;
  ir_bld_node(&n, IR_OP_MATMUL, na->dtype, rank + 2, shape);
  n.nargs = 2;
  n.args[0] = a;
  n.args[1] = b;
  return ir_append(g, &n);
}
