/* row_online.c - which pairs of a row kernel's reductions one pass can
 * compute: max then sum(exp(x - max)) (online softmax), and mean then
 * mean or sum of (x - mean)^2 (Welford). The looped row variant reads the
 * row from memory once per phase, so merging two phases saves a full read
 * of the row (templates/common.cuh has the device side). */
#include "codegen/cg_internal.h"
#include "codegen/expr.h"
#include "codegen/part.h"
#include "codegen/row_online.h"

static bool floating(kf_dtype dt) { return dt == KF_F32 || dt == KF_F64; }

/* Whether node v of dtype dt is computed in kernel k (not one of its
 * inputs): a value that exists only per element, never loaded. */
static bool inner_node(const kf_graph *g, const fuse_kernel *k, int32_t v, kf_dtype dt) {
  return v >= 0 && v < g->n_nodes && cg_in_kernel(k, v) && !cg_is_input(k, v) &&
         g->nodes[v].dtype == dt;
}

/* Whether r (a reduction of x kept with its reduced axes as 1) broadcasts
 * back over x one value per row: sub(x, r)[.., c] = x[.., c] - r[row]. */
static bool kept_per_row(const ir_node *r, const ir_node *x) {
  if (r->rank != x->rank) return false;
  for (int d = 0; d < x->rank; d++) {
    int64_t want = (r->axes >> d) & 1u ? 1 : x->shape[d];
    if (r->shape[d] != want) return false;
  }
  return true;
}

/* d = sub(x, first) with x first's operand, d shaped like x. */
static bool deviation(const kf_graph *g, const fuse_kernel *k, int32_t first, int32_t dv) {
  const ir_node *f = &g->nodes[first];
  if (!inner_node(g, k, dv, f->dtype)) return false;
  const ir_node *d = &g->nodes[dv], *x = &g->nodes[f->args[0]];
  return d->op == IR_OP_SUB && d->args[0] == f->args[0] && d->args[1] == first &&
         cg_same_shape(d->rank, d->shape, x->rank, x->shape) && kept_per_row(f, x) &&
         x->dtype == f->dtype;
}

row_online_kind cg_row_online(const kf_graph *g, const fuse_kernel *k, int32_t first,
                              int32_t second) {
  const ir_node *f = &g->nodes[first], *s = &g->nodes[second];
  if (!floating(f->dtype) || s->dtype != f->dtype || f->nargs < 1 || s->nargs < 1)
    return ROW_ONLINE_NONE;
  int32_t sv = s->args[0];
  if (!inner_node(g, k, sv, f->dtype)) return ROW_ONLINE_NONE;
  const ir_node *op = &g->nodes[sv];
  if (f->op == IR_OP_MAX && s->op == IR_OP_SUM && op->op == IR_OP_EXP &&
      deviation(g, k, first, op->args[0]))
    return ROW_ONLINE_SOFTMAX;
  if (f->op == IR_OP_MEAN && (s->op == IR_OP_MEAN || s->op == IR_OP_SUM) &&
      op->op == IR_OP_MUL && op->args[0] == op->args[1] && deviation(g, k, first, op->args[0]))
    return ROW_ONLINE_WELFORD;
  return ROW_ONLINE_NONE;
}
