/* ref_reduce.c - the reference interpreter's accumulating ops: sum, mean,
 * max and min over an axes set, and matmul with batch broadcasting. Floats
 * accumulate in f64, integers in wrapping int64; results round once. */
#include <math.h>

#include "ir/ref.h"

/* Strides that map each input axis to the dense output of a reduction: 0
 * on reduced axes. keepdim only adds size-1 axes, so it does not change
 * the output's layout. */
static void reduce_strides(const ir_node *x, uint8_t axes, int64_t *stride) {
  int64_t s = 1;
  for (int d = x->rank - 1; d >= 0; d--) {
    bool reduced = (axes >> d) & 1u;
    stride[d] = reduced ? 0 : s;
    if (!reduced) s *= x->shape[d];
  }
}

static void reduce_float(const ir_node *n, const ir_node *x, const ref_buf *in, ref_buf *out,
                         const int64_t *stride) {
  double init = n->op == IR_OP_MAX ? -INFINITY : n->op == IR_OP_MIN ? INFINITY : 0.0;
  for (int64_t k = 0; k < out->n; k++) out->f[k] = init;
  ref_iter it;
  ref_iter_init(&it, x->rank, x->shape, stride);
  for (int64_t k = 0; k < in->n; k++, ref_iter_next(&it)) {
    double v = in->f[k], *acc = &out->f[it.off];
    if (n->op == IR_OP_SUM || n->op == IR_OP_MEAN)
      *acc += v;
    else if (isnan(*acc)) /* NaN, once seen, stays */
      continue;
    else if (isnan(v) || (n->op == IR_OP_MAX ? v > *acc : v < *acc))
      *acc = v;
  }
  double count = 1.0; /* elements per output: the product of reduced axes */
  for (int d = 0; d < x->rank; d++)
    if ((n->axes >> d) & 1u) count *= (double)x->shape[d];
  for (int64_t k = 0; k < out->n; k++) {
    double v = n->op == IR_OP_MEAN ? out->f[k] / count : out->f[k];
    out->f[k] = ir_round_to_dtype(v, n->dtype);
  }
}

static void reduce_int(const ir_node *n, const ir_node *x, const ref_buf *in, ref_buf *out,
                       const int64_t *stride) {
  int64_t init = n->op == IR_OP_MAX ? INT64_MIN : n->op == IR_OP_MIN ? INT64_MAX : 0;
  for (int64_t k = 0; k < out->n; k++) out->i[k] = init;
  ref_iter it;
  ref_iter_init(&it, x->rank, x->shape, stride);
  for (int64_t k = 0; k < in->n; k++, ref_iter_next(&it)) {
    int64_t v = in->i[k], *acc = &out->i[it.off];
    if (n->op == IR_OP_MAX)
      *acc = v > *acc ? v : *acc;
    else if (n->op == IR_OP_MIN)
      *acc = v < *acc ? v : *acc;
    else /* wraps, through unsigned arithmetic */
      *acc = (int64_t)((uint64_t)*acc + (uint64_t)v);
  }
  for (int64_t k = 0; k < out->n; k++) ref_put_i(out, k, out->i[k], n->dtype);
}

void ref_eval_reduce(const kf_graph *g, const ir_node *n, const ref_buf *const *a, ref_buf *out) {
  const ir_node *x = &g->nodes[n->args[0]];
  int64_t stride[KF_MAX_RANK];
  reduce_strides(x, n->axes, stride);
  if (out->f)
    reduce_float(n, x, a[0], out, stride);
  else
    reduce_int(n, x, a[0], out, stride);
}

/* ---- matmul ------------------------------------------------------------------ */

/* Strides, in elements, that step one operand's matrices while walking the
 * output's batch axes (rank nb): broadcasting, aligned from the right. */
static void batch_strides(const ir_node *x, const ir_node *n, int64_t *stride) {
  int nb = n->rank - 2, xb = x->rank - 2;
  int64_t mat = x->shape[x->rank - 2] * x->shape[x->rank - 1];
  int64_t dense[KF_MAX_RANK];
  ref_bcast_strides(xb, x->shape, nb, n->shape, dense);
  for (int d = 0; d < nb; d++) stride[d] = dense[d] * mat;
}

/* C[m][j] = sum_k A[m][k] * B[k][j] for one matrix of the batch. */
static void matmul_one(const ir_node *n, const ref_buf *A, int64_t ao, const ref_buf *B, int64_t bo,
                       ref_buf *C, int64_t co, int64_t M, int64_t K, int64_t N) {
  for (int64_t m = 0; m < M; m++) {
    for (int64_t j = 0; j < N; j++) {
      if (C->f) {
        double acc = 0.0;
        for (int64_t k = 0; k < K; k++) acc += A->f[ao + m * K + k] * B->f[bo + k * N + j];
        ref_put_f(C, co + m * N + j, acc, n->dtype);
      } else {
        uint64_t acc = 0; /* wraps */
        for (int64_t k = 0; k < K; k++)
          acc += (uint64_t)A->i[ao + m * K + k] * (uint64_t)B->i[bo + k * N + j];
        ref_put_i(C, co + m * N + j, (int64_t)acc, n->dtype);
      }
    }
  }
}

void ref_eval_matmul(const kf_graph *g, const ir_node *n, const ref_buf *const *a, ref_buf *out) {
  const ir_node *x = &g->nodes[n->args[0]], *y = &g->nodes[n->args[1]];
  int64_t M = x->shape[x->rank - 2], K = x->shape[x->rank - 1], N = y->shape[y->rank - 1];
  int nb = n->rank - 2;
  int64_t sx[KF_MAX_RANK], sy[KF_MAX_RANK], batches = 1;
  batch_strides(x, n, sx);
  batch_strides(y, n, sy);
  for (int d = 0; d < nb; d++) batches *= n->shape[d];
  ref_iter ix, iy;
  ref_iter_init(&ix, nb, n->shape, sx);
  ref_iter_init(&iy, nb, n->shape, sy);
  for (int64_t b = 0; b < batches; b++) {
    matmul_one(n, a[0], ix.off, a[1], iy.off, out, b * M * N, M, K, N);
    ref_iter_next(&ix);
    ref_iter_next(&iy);
  }
}
