/* ref_bound_reduce.c - the reference's error bounds for accumulating ops (sum,
 * mean, max, min, matmul): the operands' bounds summed, plus the error of a
 * float accumulation in any order, relative to the sum of the |terms|. */
#include "ir/ref_bound_reduce.h"

#include <math.h>

#include "ir/dtype.h"
#include "ir/ref_bound.h"
#include "ir/ref_layout.h"
#include "ir/ref_reduce.h"

/* The relative error of a float accumulation in which each term goes
 * through at most m roundings, whatever the order (serial, chunked, tree,
 * split): the smaller of the deterministic gamma_m = m u / (1 - m u)
 * (Higham, Accuracy and Stability of Numerical Algorithms, 3.1) and the
 * probabilistic exp(lambda sqrt(m) u + m u^2 / (1 - u)) - 1 with lambda = 8
 * (Higham and Mary, SIAM J. Sci. Comput. 41(5), 2019, theorem 3.1): it holds
 * unless the rounding errors are far from independent, with a probability
 * of failing below 2 m exp(-32) (6e-8 for m = 10^6) per output element. */
static double acc_gamma(double m, double u) {
  if (m <= 0) return 0;
  double det = m * u < 0.5 ? m * u / (1 - m * u) : INFINITY;
  return fmin(det, expm1(8 * sqrt(m) * u + m * u * u / (1 - u)));
}

/* The bound of an accumulation of dtype dt: terms summing to pre (the
 * reference's f64 sum), with sum of |terms| s and propagated deviation p, each
 * term through m roundings. Kernels accumulate f16/bf16/f32 in f32 and f64
 * in f64; the reference's own f64 sum (in another order) is counted too. */
static double acc_dev(kf_dtype dt, double m, double s, double p) {
  if (!isfinite(s)) return p; /* an infinite or NaN term: the same on both sides */
  double rel =
      dt == KF_F64 ? 2 * acc_gamma(m, REF_U64) : acc_gamma(m, REF_U32) + acc_gamma(m, REF_U64);
  return p + rel * (s + p);
}

/* The walk over one output's reduced elements (row-major over the reduced
 * axes, as the reference sums them) and over the outputs (kept axes). */
typedef struct red_walk {
  ir_ref_iter kept, red;
  int64_t count; /* elements per output */
} red_walk;

static void walk_init(const ir_node *x, uint8_t axes, red_walk *w) {
  int64_t dense[KF_MAX_RANK], kd[KF_MAX_RANK], ks[KF_MAX_RANK], rd[KF_MAX_RANK], rs[KF_MAX_RANK];
  ir_ref_dense_strides(x->rank, x->shape, dense);
  int nk = 0, nr = 0;
  w->count = 1;
  for (int d = 0; d < x->rank; d++) {
    if ((axes >> d) & 1u) {
      rd[nr] = x->shape[d], rs[nr++] = dense[d];
      w->count *= x->shape[d];
    } else {
      kd[nk] = x->shape[d], ks[nk++] = dense[d];
    }
  }
  ir_ref_iter_init(&w->kept, nk, kd, ks);
  ir_ref_iter_init(&w->red, nr, rd, rs);
}

/* Sums over one output's inputs at x offset base. */
typedef struct red_sums {
  double pre, abs, e, emax;
} red_sums;

static red_sums walk_sums(red_walk *w, const ir_ref_buf *in, int64_t base) {
  red_sums r = {0, 0, 0, 0};
  ir_ref_iter_seek(&w->red, 0);
  for (int64_t k = 0; k < w->count; k++, ir_ref_iter_next(&w->red)) {
    int64_t at = base + w->red.off;
    double v = in->f ? in->f[at] : (double)in->i[at], e = in->e[at];
    r.pre += v;
    r.abs += fabs(v);
    r.e += e;
    r.emax = fmax(r.emax, e == e ? e : INFINITY);
  }
  return r;
}

static double reduce_one(const ir_node *n, const red_sums *r, double count, double v) {
  if (n->op == IR_OP_MAX || n->op == IR_OP_MIN) return r->emax; /* one of the elements */
  if (!ir_dtype_is_float(n->dtype)) return r->e;                /* integers add exactly */
  if (count == 0) return 0; /* 0, or the mean's NaN, on both sides */
  double dev = acc_dev(n->dtype, count - 1, r->abs, r->e), pre = r->pre;
  if (n->op == IR_OP_MEAN && count > 0) { /* then a division by count (or a product by 1/count) */
    pre /= count;
    dev = dev / count +
          3 * (n->dtype == KF_F64 ? REF_U64 : REF_U32) * (isfinite(pre) ? fabs(pre) : 0);
  }
  return ir_ref_bound_round(pre, dev, v, n->dtype);
}

/* The outputs of part [p0, p1) (indices of the first kept axis) are
 * contiguous: those from p0 * (outputs per index) on. */
void ir_ref_bound_reduce(const kf_graph *g, const ir_node *n, const ir_ref_buf *const *a,
                         ir_ref_buf *out, int64_t p0, int64_t p1) {
  const ir_node *x = &g->nodes[n->args[0]];
  red_walk w;
  walk_init(x, n->axes, &w);
  int64_t per = 1; /* outputs per index of the first kept axis */
  for (int d = 1; d < w.kept.rank; d++) per *= w.kept.dim[d];
  int64_t o0 = w.kept.rank ? p0 * per : 0, o1 = w.kept.rank ? p1 * per : 1;
  ir_ref_iter_seek(&w.kept, o0);
  for (int64_t o = o0; o < o1; o++, ir_ref_iter_next(&w.kept)) {
    red_sums r = walk_sums(&w, a[0], w.kept.off);
    double v = out->f ? out->f[o] : (double)out->i[o];
    out->e[o] = reduce_one(n, &r, (double)w.count, v);
  }
}

/* ---- matmul ------------------------------------------------------------------ */

/* One row of one matrix: A at ao (K values), B at bo (K x N), C at co. The
 * products' deviations add exactly (|a b - a' b'| <= ea |b| + |a| eb + ea eb);
 * each product then goes through K roundings (its own and the additions). */
static void matmul_row(const ir_node *n, const ir_ref_buf *A, int64_t ao, const ir_ref_buf *B,
                       int64_t bo, ir_ref_buf *C, int64_t co, int64_t K, int64_t N) {
  bool flt = C->f != NULL;
  for (int64_t j = 0; j < N; j++) {
    double pre = 0, s = 0, p = 0;
    for (int64_t k = 0; k < K; k++) {
      int64_t ia = ao + k, ib = bo + k * N + j;
      double x = A->f ? A->f[ia] : (double)A->i[ia], y = B->f ? B->f[ib] : (double)B->i[ib];
      double ex = A->e[ia], ey = B->e[ib];
      pre += x * y;
      s += fabs(x * y);
      if (ex != 0) p += ex * fabs(y) + (ey != 0 ? ex * ey : 0);
      if (ey != 0) p += ey * fabs(x);
    }
    C->e[co + j] =
        flt ? ir_ref_bound_round(pre, acc_dev(n->dtype, (double)K, s, p), C->f[co + j], n->dtype)
            : p;
  }
}

void ir_ref_bound_matmul(const kf_graph *g, const ir_node *n, const ir_ref_buf *const *a,
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
  for (int64_t p = p0; p < p1; p++) {
    int64_t b = p / M, m = p % M;
    if (p == p0 || m == 0) {
      ir_ref_iter_seek(&ix, b);
      ir_ref_iter_seek(&iy, b);
    }
    matmul_row(n, a[0], ix.off + m * K, a[1], iy.off, out, p * N, K, N);
  }
}
