/* ref.h - the CPU reference interpreter's internals: how it holds a value,
 * how it walks strided index spaces, and the evaluators' signature (each
 * file's functions are declared in its own header, ref_*.h). */
#ifndef KF_IR_REF_H
#define KF_IR_REF_H

#include "ir/ir.h"

/* One value while the interpreter runs. Float dtypes (f16 bf16 f32 f64) live
 * in `f` as doubles already rounded to the dtype; integer and bool dtypes in
 * `i` as int64 already wrapped (or 0/1). Exactly one of f and i is set. When
 * the run also bounds errors (kf_graph_run_reference_bounded), `e` holds per
 * element the most a correct kernel's value may differ from it (ref_bound.c),
 * else NULL. */
typedef struct ir_ref_buf {
  double *f;
  int64_t *i;
  double *e;
  int64_t n;
} ir_ref_buf;

/* A row-major walk over `dim` (rank entries) that keeps `off`, the offset of
 * the current element in a source with the given per-axis strides (0 for a
 * broadcast axis). The odometer makes each step O(1) amortized. */
typedef struct ir_ref_iter {
  int rank;
  int64_t dim[KF_MAX_RANK];
  int64_t stride[KF_MAX_RANK];
  int64_t idx[KF_MAX_RANK];
  int64_t off;
} ir_ref_iter;

static inline void ir_ref_iter_init(ir_ref_iter *it, int rank, const int64_t *dim,
                                    const int64_t *stride) {
  it->rank = rank;
  it->off = 0;
  for (int d = 0; d < rank; d++) {
    it->dim[d] = dim[d];
    it->stride[d] = stride[d];
    it->idx[d] = 0;
  }
}

/* Moves the walk to its k-th element (row-major over dim). */
static inline void ir_ref_iter_seek(ir_ref_iter *it, int64_t k) {
  it->off = 0;
  for (int d = it->rank - 1; d >= 0; d--) {
    it->idx[d] = it->dim[d] > 0 ? k % it->dim[d] : 0;
    k = it->dim[d] > 0 ? k / it->dim[d] : 0;
    it->off += it->idx[d] * it->stride[d];
  }
}

static inline void ir_ref_iter_next(ir_ref_iter *it) {
  for (int d = it->rank - 1; d >= 0; d--) {
    it->off += it->stride[d];
    if (++it->idx[d] < it->dim[d]) return;
    it->off -= it->stride[d] * it->dim[d];
    it->idx[d] = 0;
  }
}

/* Evaluators, one per kind. `n` is the node, `a` its operands' buffers,
 * `out` its buffer, allocated for n's dtype and element count. Each
 * computes the part [p0, p1) of its node's extent (ir_ref_extent): output
 * elements for the elementwise and layout ops, indices of the first kept
 * axis for reductions, output rows for matmul. Parts are disjoint in
 * `out`, and every output element is computed by the same sequence of
 * operations however the extent is split, so results do not depend on the
 * number of threads (ref_parallel.c). */
typedef void ir_ref_eval_fn(const kf_graph *g, const ir_node *n, const ir_ref_buf *const *a,
                            ir_ref_buf *out, int64_t p0, int64_t p1);
/* The evaluators are declared with their files: ref_pointwise.h (unary,
 * binary, where, clamp, cast), ref_reduce.h (reduce, matmul), ref_layout.h.
 * The error bounds (ref_bound.h, ref_bound_reduce.h), one per kind, have
 * the same signature: each reads its operands' values and bounds (a[j]->e)
 * and the node's computed values, and writes out->e over the same part. */

#endif /* KF_IR_REF_H */
