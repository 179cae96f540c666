/* ref.h - the CPU reference interpreter's internals: how it holds a value,
 * how it walks strided index spaces, and the per-kind evaluators. */
#ifndef KF_IR_REF_H
#define KF_IR_REF_H

#include "ir/ir.h"

/* One value while the interpreter runs. Float dtypes (f16 bf16 f32 f64) live
 * in `f` as doubles already rounded to the dtype; integer and bool dtypes in
 * `i` as int64 already wrapped (or 0/1). Exactly one of f and i is set. When
 * the run also bounds errors (kf_graph_run_reference_bounded), `e` holds per
 * element the most a correct kernel's value may differ from it (ref_bound.c),
 * else NULL. */
typedef struct ref_buf {
  double *f;
  int64_t *i;
  double *e;
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

/* Moves the walk to its k-th element (row-major over dim). */
static inline void ref_iter_seek(ref_iter *it, int64_t k) {
  it->off = 0;
  for (int d = it->rank - 1; d >= 0; d--) {
    it->idx[d] = it->dim[d] > 0 ? k % it->dim[d] : 0;
    k = it->dim[d] > 0 ? k / it->dim[d] : 0;
    it->off += it->idx[d] * it->stride[d];
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

/* The f64 columns of ops.def (the value of a float unary or binary op
 * before rounding). */
double ref_unary_f(ir_op op, double x);
double ref_binary_f(ir_op op, double a, double b);

/* A walk over the part [p0, p1) of a reduction of x over `axes`: the box of
 * x's index space whose first kept axis lies in [p0, p1), row-major, with
 * two odometers (in: x's dense offset from in_base; out: the output's
 * offset from out_base) over n_in inputs and n_out outputs. Each output
 * meets its inputs in row-major order of the reduced axes whatever the
 * part, the order of one walk over all of x. */
typedef struct ref_red_part {
  ref_iter in, out;
  int64_t in_base, out_base, n_in, n_out;
} ref_red_part;
void ref_red_part_init(const ir_node *x, uint8_t axes, int64_t p0, int64_t p1, ref_red_part *b);
/* Strides, in elements, that step a matmul operand x's matrices while
 * walking the batch axes of its node n (broadcasting). */
void ref_matmul_strides(const ir_node *x, const ir_node *n, int64_t *stride);

/* Evaluators, one per kind. `n` is the node, `a` its operands' buffers,
 * `out` its buffer, allocated for n's dtype and element count. Each
 * computes the part [p0, p1) of its node's extent (ref_extent): output
 * elements for the elementwise and layout ops, indices of the first kept
 * axis for reductions, output rows for matmul. Parts are disjoint in
 * `out`, and every output element is computed by the same sequence of
 * operations however the extent is split, so results do not depend on the
 * number of threads (ref_parallel.c). */
typedef void ref_eval_fn(const kf_graph *g, const ir_node *n, const ref_buf *const *a, ref_buf *out,
                         int64_t p0, int64_t p1);
ref_eval_fn ref_eval_unary, ref_eval_binary, ref_eval_where, ref_eval_clamp, ref_eval_cast,
    ref_eval_reduce, ref_eval_layout, ref_eval_matmul;

/* Error bounds (ref_bound.c, ref_bound_reduce.c), one per kind, with the
 * evaluators' signature: each reads its operands' values and bounds (a[j]->e)
 * and the node's computed values, and writes out->e over the same part. */
ref_eval_fn ref_bound_unary, ref_bound_binary, ref_bound_where, ref_bound_clamp, ref_bound_cast,
    ref_bound_reduce, ref_bound_layout, ref_bound_matmul;

/* The extent a node's evaluator splits, and the input elements one unit of
 * it reads (so that parts are sized by work). */
int64_t ref_extent(const kf_graph *g, const ir_node *n, int64_t *work_per_unit);

/* The threads of one reference run: KFUSE_REF_THREADS (1..64; default the
 * online processors, at most 16) in all, the calling thread included, and
 * the least work per part, KFUSE_REF_GRAIN (default 65536). The pool's
 * workers start at the first node worth splitting. */
typedef struct ref_workers {
  struct core_pool *pool;
  int threads;
  int64_t grain;
} ref_workers;
void ref_workers_init(ref_workers *w);
void ref_workers_free(ref_workers *w);

/* Runs fn over [0, extent) in parts of at least w->grain units of work
 * (work_per_unit each), at most w->threads of them; on the calling thread
 * alone when one part is enough or no worker could start. */
void ref_parallel(ref_workers *w, ref_eval_fn *fn, const kf_graph *g, const ir_node *n,
                  const ref_buf *const *a, ref_buf *out, int64_t extent, int64_t work_per_unit);

#endif /* KF_IR_REF_H */
