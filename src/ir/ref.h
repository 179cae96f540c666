/* ref.h - the CPU reference interpreter's internals: how it holds a value,
 * how it walks strided index spaces, and the per-kind evaluators. */
#ifndef KF_IR_REF_H
#define KF_IR_REF_H

#include "ir/ir.h"

/* One value while the interpreter runs. Float dtypes (f16 bf16 f32 f64) live
 * in `f` as doubles already rounded to the dtype; integer and bool dtypes in
 * `i` as int64 already wrapped (or 0/1). Exactly one pointer is set. */
typedef struct ref_buf {
  double *f;
  int64_t *i;
  int64_t n;
} ref_buf;

/* A row-major walk over `dim` (rank entries) that keeps `off`, the offset of
 * the current element in a source with the given per-axis strides (0 for a
 * broadcast axis). The odometer makes each step O(1) amortized. */
typedef struct ref_iter {
  int rank;
  int64_t dim[KF_MAX_RANK];
  int64_t stride[KF_MAX_RANK];
  int64_t idx[KF_MAX_RANK];
  int64_t off;
} ref_iter;

static inline void ref_iter_init(ref_iter *it, int rank, const int64_t *dim,
                                 const int64_t *stride) {
  it->rank = rank;
  it->off = 0;
  for (int d = 0; d < rank; d++) {
    it->dim[d] = dim[d];
    it->stride[d] = stride[d];
    it->idx[d] = 0;
  }
}

static inline void ref_iter_next(ref_iter *it) {
  for (int d = it->rank - 1; d >= 0; d--) {
    it->off += it->stride[d];
    if (++it->idx[d] < it->dim[d]) return;
    it->off -= it->stride[d] * it->dim[d];
    it->idx[d] = 0;
  }
}

/* Row-major strides of a dense shape. */
void ref_dense_strides(int rank, const int64_t *shape, int64_t *stride);
/* Strides that read a dense tensor of shape `in` (rank rin) while walking
 * `out` (rank rout >= rin): axes aligned from the right, 0 where `in` is 1
 * or missing (NumPy broadcasting). */
void ref_bcast_strides(int rin, const int64_t *in, int rout, const int64_t *out, int64_t *stride);

/* Rounding a result once to its dtype and storing it at o[k]. */
/* From a double: floats round to nearest even, integers truncate toward
 * zero and saturate (NaN gives 0), bool is v != 0. */
void ref_put_f(ref_buf *o, int64_t k, double v, kf_dtype dt);
/* From an int64: integers wrap (two's complement), bool is v != 0, floats
 * round once from the exact integer. */
void ref_put_i(ref_buf *o, int64_t k, int64_t v, kf_dtype dt);
/* Saturating conversion of a double to an integer dtype (NaN gives 0), or
 * to bool (v != 0, so NaN gives true). */
int64_t ref_sat_int(double v, kf_dtype dt);

/* Evaluators, one per kind. `n` is the node, `a` its operands' buffers,
 * `out` its buffer, allocated for n's dtype and element count. */
void ref_eval_unary(const kf_graph *g, const ir_node *n, const ref_buf *const *a, ref_buf *out);
void ref_eval_binary(const kf_graph *g, const ir_node *n, const ref_buf *const *a, ref_buf *out);
void ref_eval_where(const kf_graph *g, const ir_node *n, const ref_buf *const *a, ref_buf *out);
void ref_eval_clamp(const kf_graph *g, const ir_node *n, const ref_buf *const *a, ref_buf *out);
void ref_eval_cast(const kf_graph *g, const ir_node *n, const ref_buf *const *a, ref_buf *out);
void ref_eval_reduce(const kf_graph *g, const ir_node *n, const ref_buf *const *a, ref_buf *out);
void ref_eval_layout(const kf_graph *g, const ir_node *n, const ref_buf *const *a, ref_buf *out);
void ref_eval_matmul(const kf_graph *g, const ir_node *n, const ref_buf *const *a, ref_buf *out);

#endif /* KF_IR_REF_H */
