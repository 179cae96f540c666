/* ref_layout.c - the reference interpreter's index arithmetic: strides,
 * broadcasting, and the layout ops (reshape, transpose, broadcast_to). */
#include <string.h>

#include "ir/ref.h"

void ref_dense_strides(int rank, const int64_t *shape, int64_t *stride) {
  int64_t s = 1;
  for (int d = rank - 1; d >= 0; d--) {
    stride[d] = s;
    s *= shape[d];
  }
}

void ref_bcast_strides(int rin, const int64_t *in, int rout, const int64_t *out, int64_t *stride) {
  int64_t dense[KF_MAX_RANK];
  ref_dense_strides(rin, in, dense);
  for (int d = 0; d < rout; d++) {
    int din = d - (rout - rin); /* aligned from the right */
    stride[d] = (din < 0 || (in[din] == 1 && out[d] != 1)) ? 0 : dense[din];
  }
}

/* out[k] = x[source offset of the k-th element of a walk over n's shape],
 * for k in [p0, p1). */
static void gather(const ir_node *n, const int64_t *stride, const ref_buf *x, ref_buf *out,
                   int64_t p0, int64_t p1) {
  ref_iter it;
  ref_iter_init(&it, n->rank, n->shape, stride);
  ref_iter_seek(&it, p0);
  for (int64_t k = p0; k < p1; k++) {
    if (out->f)
      out->f[k] = x->f[it.off];
    else
      out->i[k] = x->i[it.off];
    ref_iter_next(&it);
  }
}

/* Layout ops move values without changing them: the operand already has the
 * node's dtype, so nothing is rounded. */
void ref_eval_layout(const kf_graph *g, const ir_node *n, const ref_buf *const *a, ref_buf *out,
                     int64_t p0, int64_t p1) {
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
      ref_dense_strides(x->rank, x->shape, in);
      for (int d = 0; d < n->rank; d++) stride[d] = in[n->perm[d]];
      gather(n, stride, a[0], out, p0, p1);
      return;
    }
    case IR_OP_BROADCAST_TO:
      ref_bcast_strides(x->rank, x->shape, n->rank, n->shape, stride);
      gather(n, stride, a[0], out, p0, p1);
      return;
    default:
      return;
  }
}
