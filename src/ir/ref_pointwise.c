/* ref_pointwise.c - the reference interpreter's elementwise ops: unary and
 * binary straight from the f64/i64 columns of ops.def, where, clamp, cast,
 * and the one place where a result is rounded to its dtype. */
#include "ir/ref_pointwise.h"

#include <math.h>

#include "ir/dtype.h"
#include "ir/ref.h"
#include "ir/ref_layout.h"

/* ---- rounding a result once ------------------------------------------------ */

int64_t ir_ref_sat_int(double v, kf_dtype dt) {
  if (dt == KF_BOOL) return v != 0.0; /* NaN is nonzero: true */
  if (isnan(v)) return 0;
  if (dt == KF_I32) {
    if (v >= 2147483647.0) return INT32_MAX;
    if (v <= -2147483648.0) return INT32_MIN;
    return (int64_t)v; /* C truncates toward zero */
  }
  if (v >= 9223372036854775808.0) return INT64_MAX; /* 2^63 */
  if (v <= -9223372036854775808.0) return INT64_MIN;
  return (int64_t)v;
}

/* Two's complement wrap of an int64 into dt's range, spelled out so that it
 * does not depend on implementation-defined conversions. */
static int64_t wrap_int(int64_t v, kf_dtype dt) {
  if (dt == KF_BOOL) return v != 0;
  if (dt != KF_I32) return v;
  uint32_t u = (uint32_t)(uint64_t)v;
  return u >= 0x80000000u ? (int64_t)u - 4294967296LL : (int64_t)u;
}

/* The integer as a double rounded to odd at 53 bits: exact when it fits,
 * and otherwise close enough that a second rounding to f32/f16/bf16 (24
 * bits or fewer) equals rounding the integer directly (round-to-odd with
 * two spare bits never double-rounds). */
static double int_to_double_odd(int64_t v) {
  uint64_t u = v < 0 ? 0u - (uint64_t)v : (uint64_t)v;
  int bits = 0;
  for (uint64_t t = u; t; t >>= 1) bits++;
  if (bits > 53) {
    int shift = bits - 53;
    uint64_t low = u & ((UINT64_C(1) << shift) - 1);
    u -= low;
    if (low) u |= UINT64_C(1) << shift; /* sticky: make it odd */
  }
  double d = (double)u; /* exact: at most 53 significant bits */
  return v < 0 ? -d : d;
}

void ir_ref_put_f(ir_ref_buf *o, int64_t k, double v, kf_dtype dt) {
  if (ir_dtype_is_float(dt))
    o->f[k] = ir_round_to_dtype(v, dt);
  else
    o->i[k] = ir_ref_sat_int(v, dt);
}

void ir_ref_put_i(ir_ref_buf *o, int64_t k, int64_t v, kf_dtype dt) {
  if (dt == KF_F64)
    o->f[k] = (double)v; /* one rounding to nearest even */
  else if (ir_dtype_is_float(dt))
    o->f[k] = ir_round_to_dtype(int_to_double_odd(v), dt);
  else
    o->i[k] = wrap_int(v, dt);
}

/* ---- unary and binary: the op table is the definition ------------------- */

double ir_ref_unary_f(ir_op op, double x) {
  switch (op) {
#define UNARY(ID, lname, acc, res, fexpr, iexpr, ...) \
  case IR_OP_##ID:                                    \
    return (fexpr);
#include "ir/ops.def"
    default:
      return NAN;
  }
}

static int64_t unary_i(ir_op op, int64_t x) {
  switch (op) {
#define UNARY(ID, lname, acc, res, fexpr, iexpr, ...) \
  case IR_OP_##ID:                                    \
    return (int64_t)(iexpr);
#include "ir/ops.def"
    default:
      return 0;
  }
}

double ir_ref_binary_f(ir_op op, double a, double b) {
  switch (op) {
#define BINARY(ID, lname, acc, res, fexpr, iexpr, ...) \
  case IR_OP_##ID:                                     \
    return (fexpr);
#include "ir/ops.def"
    default:
      return NAN;
  }
}

static int64_t binary_i(ir_op op, int64_t a, int64_t b) {
  switch (op) {
#define BINARY(ID, lname, acc, res, fexpr, iexpr, ...) \
  case IR_OP_##ID:                                     \
    return (int64_t)(iexpr);
#include "ir/ops.def"
    default:
      return 0;
  }
}

/* The column is chosen by the operand's dtype, the rounding by the node's
 * (comparisons read floats and give bool). */
void ir_ref_eval_unary(const kf_graph *g, const ir_node *n, const ir_ref_buf *const *a,
                       ir_ref_buf *out, int64_t p0, int64_t p1) {
  const ir_node *x = &g->nodes[n->args[0]];
  bool fin = ir_dtype_is_float(x->dtype);
  for (int64_t k = p0; k < p1; k++) {
    if (fin)
      ir_ref_put_f(out, k, ir_ref_unary_f(n->op, a[0]->f[k]), n->dtype);
    else
      ir_ref_put_i(out, k, unary_i(n->op, a[0]->i[k]), n->dtype);
  }
}

void ir_ref_eval_binary(const kf_graph *g, const ir_node *n, const ir_ref_buf *const *a,
                        ir_ref_buf *out, int64_t p0, int64_t p1) {
  const ir_node *x = &g->nodes[n->args[0]], *y = &g->nodes[n->args[1]];
  ir_ref_iter ix, iy;
  ir_ref_iter_operand(&ix, x, n, p0);
  ir_ref_iter_operand(&iy, y, n, p0);
  bool fin = ir_dtype_is_float(x->dtype);
  for (int64_t k = p0; k < p1; k++) {
    if (fin)
      ir_ref_put_f(out, k, ir_ref_binary_f(n->op, a[0]->f[ix.off], a[1]->f[iy.off]), n->dtype);
    else
      ir_ref_put_i(out, k, binary_i(n->op, a[0]->i[ix.off], a[1]->i[iy.off]), n->dtype);
    ir_ref_iter_next(&ix);
    ir_ref_iter_next(&iy);
  }
}

/* ---- where, clamp, cast ------------------------------------------------------ */

void ir_ref_eval_where(const kf_graph *g, const ir_node *n, const ir_ref_buf *const *a,
                       ir_ref_buf *out, int64_t p0, int64_t p1) {
  ir_ref_iter it[3];
  for (int j = 0; j < 3; j++) ir_ref_iter_operand(&it[j], &g->nodes[n->args[j]], n, p0);
  /* a and b already hold values of the node's dtype: no rounding. */
  for (int64_t k = p0; k < p1; k++) {
    int pick = a[0]->i[it[0].off] ? 1 : 2;
    if (out->f)
      out->f[k] = a[pick]->f[it[pick].off];
    else
      out->i[k] = a[pick]->i[it[pick].off];
    for (int j = 0; j < 3; j++) ir_ref_iter_next(&it[j]);
  }
}

/* Integer bounds: the smallest integer >= lo and the largest <= hi, so that
 * comparisons stay exact for int64 values beyond 2^53. A NaN bound bounds
 * nothing, as in the float path. A bound outside dt's range saturates. */
static void clamp_int(const ir_ref_buf *x, ir_ref_buf *out, double lo, double hi, kf_dtype dt,
                      int64_t p0, int64_t p1) {
  int64_t lo_i = isnan(lo) ? INT64_MIN : ir_ref_sat_int(ceil(lo), KF_I64);
  int64_t hi_i = isnan(hi) ? INT64_MAX : ir_ref_sat_int(floor(hi), KF_I64);
  for (int64_t k = p0; k < p1; k++) {
    int64_t v = x->i[k];
    if (v < lo_i) v = lo_i;
    if (v > hi_i) v = hi_i;
    if (dt == KF_I32) v = v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : v;
    out->i[k] = dt == KF_BOOL ? v != 0 : v;
  }
}

void ir_ref_eval_clamp(const kf_graph *g, const ir_node *n, const ir_ref_buf *const *a,
                       ir_ref_buf *out, int64_t p0, int64_t p1) {
  (void)g;
  if (!out->f) {
    clamp_int(a[0], out, n->lo, n->hi, n->dtype, p0, p1);
    return;
  }
  for (int64_t k = p0; k < p1; k++) {
    double v = a[0]->f[k]; /* NaN fails both tests and stays NaN */
    if (v < n->lo) v = n->lo;
    if (v > n->hi) v = n->hi;
    out->f[k] = ir_round_to_dtype(v, n->dtype);
  }
}

/* Float sources go through ir_ref_put_f (truncate, saturate, NaN gives 0;
 * bool is v != 0), integer sources through ir_ref_put_i (integers wrap, floats
 * are rounded once from the exact integer). */
void ir_ref_eval_cast(const kf_graph *g, const ir_node *n, const ir_ref_buf *const *a,
                      ir_ref_buf *out, int64_t p0, int64_t p1) {
  const ir_node *x = &g->nodes[n->args[0]];
  for (int64_t k = p0; k < p1; k++) {
    if (ir_dtype_is_float(x->dtype))
      ir_ref_put_f(out, k, a[0]->f[k], n->dtype);
    else
      ir_ref_put_i(out, k, a[0]->i[k], n->dtype);
  }
}
