/* ref_layout.c - the reference interpreter's index arithmetic: strides,
 * broadcasting, and the layout ops (reshape, transpose, broadcast_to, and
 * the index ops slice, concat, gather, iota). */
#include "ir/ref_layout.h"

#include <string.h>

#include "ir/dtype.h"
#include "ir/ref.h"

void ir_ref_dense_strides(int rank, const int64_t *shape, int64_t *stride) {
  int64_t s = 1;
  for (int d = rank - 1; d >= 0; d--) {
    stride[d] = s;
    s *= shape[d];
  }
}

void ir_ref_bcast_strides(int rin, const int64_t *in, int rout, const int64_t *out,
                          int64_t *stride) {
  int64_t dense[KF_MAX_RANK];
  ir_ref_dense_strides(rin, in, dense);
  for (int d = 0; d < rout; d++) {
    int din = d - (rout - rin); /* aligned from the right */
    stride[d] = (din < 0 || (in[din] == 1 && out[d] != 1)) ? 0 : dense[din];
  }
}

void ir_ref_iter_operand(ir_ref_iter *it, const ir_node *x, const ir_node *n, int64_t p0) {
  int64_t s[KF_MAX_RANK];
  ir_ref_bcast_strides(x->rank, x->shape, n->rank, n->shape, s);
  ir_ref_iter_init(it, n->rank, n->shape, s);
  ir_ref_iter_seek(it, p0);
}

/* out[k] = x[source offset of the k-th element of a walk over n's shape],
 * for k in [p0, p1). */
static void gather(const ir_node *n, const int64_t *stride, const ir_ref_buf *x, ir_ref_buf *out,
                   int64_t p0, int64_t p1) {
  ir_ref_iter it;
  ir_ref_iter_init(&it, n->rank, n->shape, stride);
  ir_ref_iter_seek(&it, p0);
  for (int64_t k = p0; k < p1; k++) {
    if (out->f)
      out->f[k] = x->f[it.off];
    else
      out->i[k] = x->i[it.off];
    ir_ref_iter_next(&it);
  }
}

/* Coordinates of linear index k over (rank, shape). */
static void coords_of(int64_t k, int rank, const int64_t *shape, int64_t *c) {
  for (int d = rank - 1; d >= 0; d--) {
    c[d] = k % shape[d];
    k /= shape[d];
  }
}

static int64_t lin_of(int rank, const int64_t *shape, const int64_t *c) {
  int64_t k = 0;
  for (int d = 0; d < rank; d++) k = k * shape[d] + c[d];
  return k;
}

static void put(ir_ref_buf *out, int64_t k, const ir_ref_buf *x, int64_t at) {
  if (out->f)
    out->f[k] = x->f[at];
  else
    out->i[k] = x->i[at];
}

/* slice, concat, gather: each element is one operand element. */
static void eval_index(const kf_graph *g, const ir_node *n, const ir_ref_buf *const *a,
                       ir_ref_buf *out, int64_t p0, int64_t p1) {
  const ir_node *x = &g->nodes[n->args[0]];
  int ax = n->axis;
  int64_t c[KF_MAX_RANK], xc[KF_MAX_RANK];
  for (int64_t k = p0; k < p1; k++) {
    coords_of(k, n->rank, n->shape, c);
    if (n->op == IR_OP_SLICE) {
      c[ax] = n->start + c[ax] * n->step;
      put(out, k, a[0], lin_of(x->rank, x->shape, c));
    } else if (n->op == IR_OP_CONCAT) {
      const ir_node *y = &g->nodes[n->args[1]];
      bool first = c[ax] < x->shape[ax];
      if (!first) c[ax] -= x->shape[ax];
      put(out, k, a[first ? 0 : 1], lin_of(x->rank, first ? x->shape : y->shape, c));
    } else { /* GATHER: x's axis ax is index's whole shape; clamped */
      const ir_node *ix = &g->nodes[n->args[1]];
      int ri = ix->rank;
      int64_t i = a[1]->i[lin_of(ri, ix->shape, c + ax)], hi = x->shape[ax] - 1;
      for (int d = 0; d < x->rank; d++) xc[d] = d < ax ? c[d] : d > ax ? c[d + ri - 1] : 0;
      xc[ax] = i < 0 ? 0 : i > hi ? hi : i;
      put(out, k, a[0], lin_of(x->rank, x->shape, xc));
    }
  }
}

/* iota: the coordinate along the axis, in the node's dtype (exact for
 * integers; rounded once for floats, as every value is). */
static void eval_iota(const ir_node *n, ir_ref_buf *out, int64_t p0, int64_t p1) {
  int64_t inner = 1;
  for (int d = n->axis + 1; d < n->rank; d++) inner *= n->shape[d];
  for (int64_t k = p0; k < p1; k++) {
    int64_t v = k / inner % n->shape[n->axis];
    if (out->f)
      out->f[k] = ir_round_to_dtype((double)v, n->dtype);
    else
      out->i[k] = n->dtype == KF_I32 && v > INT32_MAX ? INT32_MAX : v;
  }
}

/* Layout ops move values without changing them: the operand already has the
 * node's dtype, so nothing is rounded. */
void ir_ref_eval_layout(const kf_graph *g, const ir_node *n, const ir_ref_buf *const *a,
                        ir_ref_buf *out, int64_t p0, int64_t p1) {
  const ir_node *x = &g->nodes[n->args[0]];
  int64_t stride[KF_MAX_RANK];
  switch (n->op) {
    case IR_OP_RESHAPE: /* same row-major order */
      if (out->f)
        memcpy(out->f + p0, a[0]->f + p0, (size_t)(p1 - p0) * sizeof *out->f);
      else
        memcpy(out->i + p0, a[0]->i + p0, (size_t)(p1 - p0) * sizeof *out->i);
      return;
    case IR_OP_TRANSPOSE: { /* output axis d is input axis perm[d] */
      int64_t in[KF_MAX_RANK];
      ir_ref_dense_strides(x->rank, x->shape, in);
      for (int d = 0; d < n->rank; d++) stride[d] = in[n->perm[d]];
      gather(n, stride, a[0], out, p0, p1);
      return;
    }
    case IR_OP_BROADCAST_TO:
      ir_ref_bcast_strides(x->rank, x->shape, n->rank, n->shape, stride);
      gather(n, stride, a[0], out, p0, p1);
      return;
    case IR_OP_SLICE:
    case IR_OP_CONCAT:
    case IR_OP_GATHER:
      eval_index(g, n, a, out, p0, p1);
      return;
    case IR_OP_IOTA:
      eval_iota(n, out, p0, p1);
      return;
    default:
      return;
  }
}
