/* ref_reduce.c - the reference interpreter's accumulating ops: sum, mean,
 * max and min over an axes set, and matmul with batch broadcasting. Floats
 * accumulate in f64, integers in wrapping int64; results round once. */
#include "ir/ref_reduce.h"

#include <math.h>

#include "ir/dtype.h"
#include "ir/ops.h"
#include "ir/ref.h"
#include "ir/ref_layout.h"
#include "ir/ref_pointwise.h"

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

/* The first axis a reduction keeps, whose indices its parts split: the
 * outputs of an index are contiguous, and so are its inputs' rows. -1 when
 * every axis is reduced (one output, one part). */
static int first_kept(const ir_node *x, uint8_t axes) {
  for (int d = 0; d < x->rank; d++)
    if (!((axes >> d) & 1u)) return d;
  return -1;
}

/* ref.h: ir_ref_red_part */
void ir_ref_red_part_init(const ir_node *x, uint8_t axes, int64_t p0, int64_t p1,
                          ir_ref_red_part *b) {
  int64_t dim[KF_MAX_RANK], dense[KF_MAX_RANK], ostride[KF_MAX_RANK];
  ir_ref_dense_strides(x->rank, x->shape, dense);
  reduce_strides(x, axes, ostride);
  int f = first_kept(x, axes);
  b->n_in = 1;
  b->n_out = 1;
  for (int d = 0; d < x->rank; d++) {
    dim[d] = d == f ? p1 - p0 : x->shape[d];
    b->n_in *= dim[d];
    if (!((axes >> d) & 1u)) b->n_out *= dim[d];
  }
  b->in_base = f < 0 ? 0 : p0 * dense[f];
  b->out_base = f < 0 ? 0 : p0 * ostride[f];
  ir_ref_iter_init(&b->in, x->rank, dim, dense);
  ir_ref_iter_init(&b->out, x->rank, dim, ostride);
}

static void reduce_float(const ir_node *n, const ir_node *x, const ir_ref_buf *in, ir_ref_buf *out,
                         ir_ref_red_part *b) {
  double init = n->op == IR_OP_MAX ? -INFINITY : n->op == IR_OP_MIN ? INFINITY : 0.0;
  double *o = out->f + b->out_base;
  for (int64_t k = 0; k < b->n_out; k++) o[k] = init;
  for (int64_t k = 0; k < b->n_in; k++, ir_ref_iter_next(&b->in), ir_ref_iter_next(&b->out)) {
    double v = in->f[b->in_base + b->in.off], *acc = &o[b->out.off];
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
  for (int64_t k = 0; k < b->n_out; k++) {
    double v = n->op == IR_OP_MEAN ? o[k] / count : o[k];
    o[k] = ir_round_to_dtype(v, n->dtype);
  }
}

static void reduce_int(const ir_node *n, const ir_ref_buf *in, ir_ref_buf *out,
                       ir_ref_red_part *b) {
  int64_t init = n->op == IR_OP_MAX ? INT64_MIN : n->op == IR_OP_MIN ? INT64_MAX : 0;
  int64_t *o = out->i + b->out_base;
  for (int64_t k = 0; k < b->n_out; k++) o[k] = init;
  for (int64_t k = 0; k < b->n_in; k++, ir_ref_iter_next(&b->in), ir_ref_iter_next(&b->out)) {
    int64_t v = in->i[b->in_base + b->in.off], *acc = &o[b->out.off];
    if (n->op == IR_OP_MAX)
      *acc = v > *acc ? v : *acc;
    else if (n->op == IR_OP_MIN)
      *acc = v < *acc ? v : *acc;
    else /* wraps, through unsigned arithmetic */
      *acc = (int64_t)((uint64_t)*acc + (uint64_t)v);
  }
  for (int64_t k = 0; k < b->n_out; k++) ir_ref_put_i(out, b->out_base + k, o[k], n->dtype);
}

void ir_ref_eval_reduce(const kf_graph *g, const ir_node *n, const ir_ref_buf *const *a,
                        ir_ref_buf *out, int64_t p0, int64_t p1) {
  const ir_node *x = &g->nodes[n->args[0]];
  ir_ref_red_part b;
  ir_ref_red_part_init(x, n->axes, p0, p1, &b);
  if (out->f)
    reduce_float(n, x, a[0], out, &b);
  else
    reduce_int(n, a[0], out, &b);
}

/* ---- matmul ------------------------------------------------------------------ */

/* ref.h; broadcasting, aligned from the right. */
void ir_ref_matmul_strides(const ir_node *x, const ir_node *n, int64_t *stride) {
  int nb = n->rank - 2, xb = x->rank - 2;
  int64_t mat = x->shape[x->rank - 2] * x->shape[x->rank - 1];
  int64_t dense[KF_MAX_RANK];
  ir_ref_bcast_strides(xb, x->shape, nb, n->shape, dense);
  for (int d = 0; d < nb; d++) stride[d] = dense[d] * mat;
}

/* C[j] = sum_k A[k] * B[k][j] for one row of one matrix of the batch:
 * A at ao (K values), B at bo (K x N), C at co (N values). */
static void matmul_row(const ir_node *n, const ir_ref_buf *A, int64_t ao, const ir_ref_buf *B,
                       int64_t bo, ir_ref_buf *C, int64_t co, int64_t K, int64_t N) {
  for (int64_t j = 0; j < N; j++) {
    if (C->f) {
      double acc = 0.0;
      for (int64_t k = 0; k < K; k++) acc += A->f[ao + k] * B->f[bo + k * N + j];
      ir_ref_put_f(C, co + j, acc, n->dtype);
    } else {
      uint64_t acc = 0; /* wraps */
      for (int64_t k = 0; k < K; k++)
        acc += (uint64_t)A->i[ao + k] * (uint64_t)B->i[bo + k * N + j];
      ir_ref_put_i(C, co + j, (int64_t)acc, n->dtype);
    }
  }
}

void ir_ref_eval_matmul(const kf_graph *g, const ir_node *n, const ir_ref_buf *const *a,
                        ir_ref_buf *out, int64_t p0, int64_t p1) {
  const ir_node *x = &g->nodes[n->args[0]], *y = &g->nodes[n->args[1]];
  int64_t M = x->shape[x->rank - 2], K = x->shape[x->rank - 1], N = y->shape[y->rank - 1];
  int nb = n->rank - 2;
  int64_t sx[KF_MAX_RANK], sy[KF_MAX_RANK];
  ir_ref_matmul_strides(x, n, sx);
  ir_ref_matmul_strides(y, n, sy);
  ir_ref_iter ix, iy;
  ir_ref_iter_init(&ix, nb, n->shape, sx);
  ir_ref_iter_init(&iy, nb, n->shape, sy);
  /* part [p0, p1) is output rows: row p is row p % M of matrix p / M */
  for (int64_t p = p0; p < p1; p++) {
    int64_t b = p / M, m = p % M;
    if (p == p0 || m == 0) {
      ir_ref_iter_seek(&ix, b);
      ir_ref_iter_seek(&iy, b);
    }
    matmul_row(n, a[0], ix.off + m * K, a[1], iy.off, out, p * N, K, N);
  }
}

/* ---- how a node's work splits (ir_ref_parallel) ---------------------------------------- */

int64_t ir_ref_extent(const kf_graph *g, const ir_node *n, int64_t *work_per_unit) {
  int64_t numel = 1;
  for (int d = 0; d < n->rank; d++) numel *= n->shape[d];
  *work_per_unit = 1;
  if (ir_ops[n->op].kind == KIND_REDUCE) {
    const ir_node *x = &g->nodes[n->args[0]];
    int f = first_kept(x, n->axes);
    int64_t in = 1;
    for (int d = 0; d < x->rank; d++) in *= x->shape[d];
    int64_t extent = f < 0 ? 1 : x->shape[f];
    *work_per_unit = extent > 0 && in / extent > 1 ? in / extent : 1;
    return extent;
  }
  if (ir_ops[n->op].kind == KIND_MATMUL) {
    const ir_node *x = &g->nodes[n->args[0]];
    int64_t K = x->shape[x->rank - 1], N = n->shape[n->rank - 1];
    *work_per_unit = K * N > 1 ? K * N : 1;
    return N > 0 ? numel / N : 0; /* batches x M rows */
  }
  return numel;
}
