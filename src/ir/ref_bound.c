/* ref_bound.c - the reference's error bounds for elementwise and layout ops:
 * how far a correct kernel's value may be from the reference's, from the
 * operands' bounds (propagation) and the op's own rounding (docs/reference.md,
 * "Error bounds"). */
#include "ir/ref_bound.h"

#include <math.h>

#include "ir/dtype.h"
#include "ir/ref_layout.h"
#include "ir/ref_pointwise.h"

/* ---- the node's own rounding ------------------------------------------------ */

/* x rounded to f32, then to dt (f32, f16, bf16). The bf16 rounding of an
 * f32 is the bit trick of kf_float_to_bf16 (a third of a bounded run's
 * time went to rounding through frexp and scalbn). */
static double round_f32_to(double x, kf_dtype dt) {
  float f = (float)x;
  if (dt == KF_BF16 && !isnan(f)) return kf_bf16_to_float(kf_float_to_bf16(f));
  return dt == KF_F32 ? f : ir_round_to_dtype(f, dt);
}

double ir_ref_bound_round(double pre, double dev, double v, kf_dtype dt) {
  if (!(dev < INFINITY)) return INFINITY;              /* NaN too */
  if (dev == 0 && (double)(float)pre == pre) return 0; /* exact in f32: rounds as the reference */
  /* pre and dev are f64 results themselves: widen by their own rounding */
  if (dev > 0 && isfinite(pre)) dev += 0x1p-40 * dev + 4 * REF_U64 * fabs(pre);
  if (!ir_dtype_is_float(dt)) { /* a float cast to an integer: truncation */
    double lo = ir_round_to_dtype(pre - dev, dt), hi = ir_round_to_dtype(pre + dev, dt);
    return fmax(hi - v, v - lo);
  }
  if (dt == KF_F64) {
    if (dev == 0) return 0; /* IEEE double on both sides: the same bits */
    if (isnan(v)) return 0;
    return isinf(v) ? (isinf(pre + dev) && isinf(pre - dev) ? 0 : INFINITY)
                    : dev * (1 + 2 * REF_U64) + 2 * REF_U64 * fabs(v);
  }
  /* The kernel's value before rounding to dt is an f32 in [pre - dev, pre
   * + dev]: rounding is monotonic, so it lies between the f32 roundings of
   * the ends, and its dt rounding between theirs (this also covers a double
   * rounding, f32 then f16/bf16, against the reference's single one). */
  double lo = round_f32_to(pre - dev, dt), hi = round_f32_to(pre + dev, dt);
  if (isnan(v)) return isnan(lo) && isnan(hi) ? 0 : INFINITY;
  if (isinf(v)) return lo == v && hi == v ? 0 : INFINITY;
  double e = fmax(hi - v, v - lo);
  return e == e ? e : INFINITY;
}

/* The kernel's own error in computing op (before its final rounding), in
 * units of the compute dtype's unit roundoff u, relative to the result: the
 * CUDA C Programming Guide's maximum ulp errors (1 ulp <= 2u) of the device
 * functions in templates/common.cuh under the default math policy (the fast
 * policy is not bounded here). 0 for the ops that
 * are correctly rounded (or exact): their rounding is the node's. */
static double op_units(ir_op op, bool f64) {
  switch (op) {
    case IR_OP_EXP:
      return f64 ? 2 : 4; /* exp 1 ulp, expf 2 */
    case IR_OP_LOG:
      return 2; /* 1 ulp */
    case IR_OP_RSQRT:
      return f64 ? 3 : 4; /* 1.0 / sqrt(x): two roundings; rsqrtf 2 ulp */
    case IR_OP_SIN:
    case IR_OP_COS:
      return 4; /* 2 ulp */
    case IR_OP_TANH:
      return f64 ? 2 : 4; /* tanh 1 ulp, tanhf 2 */
    case IR_OP_ERF:
      return 4; /* 2 ulp */
    case IR_OP_POW:
      return f64 ? 4 : 8; /* pow 2 ulp, powf 4 */
    /* The default math policy's hardware reciprocal (rcp.approx, 1 ulp)
     * in reciprocal, sigmoid and silu (docs/codegen.md, "Math policy";
     * the H200 found a reciprocal 1 ulp from the rounded f64 value). */
    case IR_OP_RECIPROCAL:
      return f64 ? 0 : 2;
    case IR_OP_SIGMOID: /* rcp(1 + exp(-x)): 7 ulp by codegen.md's table */
      return 14;
    case IR_OP_SILU: /* x * rcp(1 + exp(-x)): 8 ulp */
      return 16;
    case IR_OP_GELU:
    case IR_OP_GELU_TANH:
      return 4; /* plus an absolute part (gelu_abs) */
    default:
      return 0;
  }
}

/* gelu's 1 + erf(x / sqrt 2) cancels for x << 0: erf's absolute error
 * (about 4u at magnitude 1, and the rounding of 1 + erf) times 0.5 |x|
 * stays, relative to |x| rather than to the small result. */
static double gelu_abs(ir_op op, double x, double u) {
  return op == IR_OP_GELU ? 4 * u * fabs(x) : op == IR_OP_GELU_TANH ? 6 * u * fabs(x) : 0;
}

/* The deviation of a correct kernel's value before its final rounding: the
 * propagated part p plus the op's own error at the result pre (operand x for
 * gelu), and for an f64 node the reference's own libm error (about 1 ulp)
 * when the op is not correctly rounded. */
double ir_ref_bound_dev(ir_op op, kf_dtype dt, double pre, double x, double p) {
  bool f64 = dt == KF_F64;
  double units = op_units(op, f64), u = f64 ? REF_U64 : REF_U32;
  if (units == 0 || !isfinite(pre)) return p;
  if (f64) units += 2;
  return p + units * u * (fabs(pre) + p) + gelu_abs(op, x, u);
}

/* ---- truth of a bounded value ------------------------------------------------- */

/* Whether a correct kernel's value may be zero where the reference's is not,
 * or the other way (its truth may flip). */
static bool truth_uncertain(double x, double e) {
  if (e == 0) return false;
  return !(e < INFINITY) || (!isnan(x) && fabs(x) <= e);
}

static double bool_bound(bool uncertain) {
  return uncertain ? 1 : 0;
}

/* A comparison's result may flip when the two operands may meet. */
static double compare_bound(double a, double ea, double b, double eb) {
  double e = ea + eb;
  if (e == 0) return 0;
  if (!(e < INFINITY)) return 1;
  if (isnan(a) || isnan(b)) return 0; /* NaN compares false either way */
  return bool_bound(fabs(a - b) <= e);
}

/* A value of a float operand or an integer one, as a double. */
static double val(const ir_ref_buf *b, int64_t k) {
  return b->f ? b->f[k] : (double)b->i[k];
}

/* ---- unary ---------------------------------------------------------------------- */

/* sqrt(x) - sqrt(x - e) and its like, written without cancellation. */
static double dev_sqrt(double x, double e, bool recip) {
  if (x + e < 0) return 0; /* NaN on both sides */
  if (!(x - e >= 0) || (recip && x - e == 0)) return INFINITY;
  double s = sqrt(x), t = sqrt(x - e);
  return recip ? e / (s * t * (s + t)) : e / (s + t);
}

/* The propagated deviation of a float unary op at x with bound e > 0: the
 * exact worst case over [x - e, x + e] where it has a closed form,
 * otherwise the function's largest slope times e, capped by its range. */
static double dev_unary(ir_op op, double x, double e, double pre) {
  switch (op) {
    case IR_OP_NEG:
    case IR_OP_ABS:
    case IR_OP_RELU:
      return e;
    case IR_OP_EXP:
      return fabs(pre) * expm1(e);
    case IR_OP_LOG:
      if (x + e < 0) return 0; /* NaN either way */
      return x - e > 0 ? -log1p(-e / x) : INFINITY;
    case IR_OP_SQRT:
      return dev_sqrt(x, e, false);
    case IR_OP_RSQRT:
      return dev_sqrt(x, e, true);
    case IR_OP_RECIPROCAL:
      return fabs(x) > e ? e / (fabs(x) * (fabs(x) - e)) : INFINITY;
    case IR_OP_SIN:
    case IR_OP_COS:
    case IR_OP_TANH:
      return fmin(e, 2);
    case IR_OP_ERF:
      return fmin(1.1284 * e, 2); /* 2 / sqrt(pi) */
    case IR_OP_SIGMOID:
      return fmin(0.25 * e, 1);
    case IR_OP_SILU:
      return 1.0999 * e;
    case IR_OP_GELU:
    case IR_OP_GELU_TANH:
      return 1.13 * e;
    default: { /* floor, ceil, sign: monotonic steps, at the ends */
      double lo = ir_ref_unary_f(op, x - e), hi = ir_ref_unary_f(op, x + e);
      return fmax(fabs(hi - pre), fabs(pre - lo));
    }
  }
}

void ir_ref_bound_unary(const kf_graph *g, const ir_node *n, const ir_ref_buf *const *a,
                        ir_ref_buf *out, int64_t p0, int64_t p1) {
  const ir_node *x = &g->nodes[n->args[0]];
  bool fin = ir_dtype_is_float(x->dtype);
  for (int64_t k = p0; k < p1; k++) {
    double xv = val(a[0], k), e = a[0]->e[k];
    if (n->op == IR_OP_LOGICAL_NOT) {
      out->e[k] = bool_bound(truth_uncertain(xv, e));
    } else if (!fin) { /* integer neg, abs, relu, sign: at most e (sign: 2) */
      out->e[k] = n->op == IR_OP_SIGN ? fmin(2 * e, 2) : e;
    } else {
      double pre = ir_ref_unary_f(n->op, xv);
      double p = e == 0 ? 0 : dev_unary(n->op, xv, e, pre);
      out->e[k] = ir_ref_bound_round(pre, ir_ref_bound_dev(n->op, n->dtype, pre, xv, p), out->f[k],
                                     n->dtype);
    }
  }
}

/* ---- binary ---------------------------------------------------------------------- */

/* e * m, where an exact operand contributes nothing whatever m is. */
static double emul(double e, double m) {
  return e == 0 ? 0 : e * m;
}

/* pow: monotonic in each operand where it is defined, so the worst case
 * over the box is at a corner; a corner outside the domain (NaN) where the
 * reference is not makes the result unbounded. */
static double dev_pow(double a, double ea, double b, double eb, double pre) {
  double worst = 0;
  for (int c = 0; c < 4; c++) {
    double y = pow(c & 1 ? a + ea : a - ea, c & 2 ? b + eb : b - eb);
    if (isnan(y) != isnan(pre)) return INFINITY;
    if (!isnan(y))
      worst = fmax(worst, isinf(y) || isinf(pre) ? (y == pre ? 0 : INFINITY) : fabs(y - pre));
  }
  return worst;
}

/* The propagated deviation of a + b, a * b, ... with bounds ea, eb (not
 * both 0): exact worst cases, second-order terms included. */
static double dev_binary(ir_op op, double a, double ea, double b, double eb, double pre) {
  switch (op) {
    case IR_OP_ADD:
    case IR_OP_SUB:
      return ea + eb;
    case IR_OP_MUL:
      return emul(ea, fabs(b)) + emul(eb, fabs(a)) + emul(ea, eb);
    case IR_OP_DIV:
      if (eb == 0) return ea / fabs(b);
      return fabs(b) > eb ? (ea + emul(eb, fabs(pre))) / (fabs(b) - eb) : INFINITY;
    case IR_OP_POW:
      return dev_pow(a, ea, b, eb, pre);
    default:
      return fmax(ea, eb); /* maximum, minimum */
  }
}

static double logic_bound(ir_op op, double a, double ea, double b, double eb) {
  bool ua = truth_uncertain(a, ea), ub = truth_uncertain(b, eb);
  bool ta = a != 0, tb = b != 0; /* NaN is true */
  if (op == IR_OP_LOGICAL_AND) return bool_bound((ua && (ub || tb)) || (ub && (ua || ta)));
  return bool_bound((ua && (ub || !tb)) || (ub && (ua || !ta))); /* or */
}

/* kf_div_rcp, the division by a per-row value, is correctly rounded only for
 * |a| >= 2^-102 and 2^-126 <= |b| <= 2^126 (docs/codegen.md); 1 ulp outside. */
static double div_units(ir_op op, kf_dtype dt, double a, double b) {
  if (op != IR_OP_DIV || dt == KF_F64) return 0;
  bool cr = fabs(a) >= 0x1p-102 && fabs(b) >= 0x1p-126 && fabs(b) <= 0x1p126;
  return cr ? 0 : 2;
}

static double binary_one(const ir_node *n, kf_dtype xdt, double a, double ea, double b, double eb,
                         double v) {
  ir_op op = n->op;
  if (op == IR_OP_LOGICAL_AND || op == IR_OP_LOGICAL_OR) return logic_bound(op, a, ea, b, eb);
  if (op >= IR_OP_EQ && op <= IR_OP_GE) return compare_bound(a, ea, b, eb);
  if (!ir_dtype_is_float(xdt)) /* add, sub, mul, maximum, minimum of integers */
    return op == IR_OP_MUL ? emul(ea, fabs(b)) + emul(eb, fabs(a)) + emul(ea, eb)
           : op == IR_OP_ADD || op == IR_OP_SUB ? ea + eb
                                                : fmax(ea, eb);
  double pre = ir_ref_binary_f(op, a, b);
  double p = ea == 0 && eb == 0 ? 0 : dev_binary(op, a, ea, b, eb, pre);
  double dev = ir_ref_bound_dev(op, n->dtype, pre, a, p);
  dev += div_units(op, n->dtype, a, b) * REF_U32 * (isfinite(pre) ? fabs(pre) : 0);
  return ir_ref_bound_round(pre, dev, v, n->dtype);
}

void ir_ref_bound_binary(const kf_graph *g, const ir_node *n, const ir_ref_buf *const *a,
                         ir_ref_buf *out, int64_t p0, int64_t p1) {
  const ir_node *x = &g->nodes[n->args[0]], *y = &g->nodes[n->args[1]];
  ir_ref_iter ix, iy;
  ir_ref_iter_operand(&ix, x, n, p0);
  ir_ref_iter_operand(&iy, y, n, p0);
  for (int64_t k = p0; k < p1; k++) {
    double v = out->f ? out->f[k] : (double)out->i[k];
    out->e[k] = binary_one(n, x->dtype, val(a[0], ix.off), a[0]->e[ix.off], val(a[1], iy.off),
                           a[1]->e[iy.off], v);
    ir_ref_iter_next(&ix);
    ir_ref_iter_next(&iy);
  }
}

/* ---- where, clamp, cast ------------------------------------------------------------- */

/* Where the condition may flip, the kernel may pick the other operand. */
void ir_ref_bound_where(const kf_graph *g, const ir_node *n, const ir_ref_buf *const *a,
                        ir_ref_buf *out, int64_t p0, int64_t p1) {
  ir_ref_iter it[3];
  for (int j = 0; j < 3; j++) ir_ref_iter_operand(&it[j], &g->nodes[n->args[j]], n, p0);
  for (int64_t k = p0; k < p1; k++) {
    int pick = a[0]->i[it[0].off] ? 1 : 2, other = 3 - pick;
    double e = a[pick]->e[it[pick].off];
    if (a[0]->e[it[0].off] != 0) {
      double d = fabs(val(a[pick], it[pick].off) - val(a[other], it[other].off));
      double eo = d + a[other]->e[it[other].off];
      e = fmax(e, d == d ? eo : INFINITY);
    }
    out->e[k] = e;
    for (int j = 0; j < 3; j++) ir_ref_iter_next(&it[j]);
  }
}

/* clamp is monotonic: the worst case is at the ends of [x - e, x + e]. */
void ir_ref_bound_clamp(const kf_graph *g, const ir_node *n, const ir_ref_buf *const *a,
                        ir_ref_buf *out, int64_t p0, int64_t p1) {
  (void)g;
  for (int64_t k = p0; k < p1; k++) {
    double x = val(a[0], k), e = a[0]->e[k], v = out->f ? out->f[k] : (double)out->i[k];
    if (e == 0 || !(e < INFINITY)) {
      out->e[k] = e;
      continue;
    }
    double lo = fmin(fmax(x - e, n->lo), n->hi), hi = fmin(fmax(x + e, n->lo), n->hi);
    out->e[k] = fmax(fabs(hi - v), fabs(v - lo));
  }
}

void ir_ref_bound_cast(const kf_graph *g, const ir_node *n, const ir_ref_buf *const *a,
                       ir_ref_buf *out, int64_t p0, int64_t p1) {
  const ir_node *x = &g->nodes[n->args[0]];
  for (int64_t k = p0; k < p1; k++) {
    double xv = val(a[0], k), e = a[0]->e[k], v = out->f ? out->f[k] : (double)out->i[k];
    if (n->dtype == KF_BOOL)
      out->e[k] = bool_bound(truth_uncertain(xv, e));
    else if (!ir_dtype_is_float(x->dtype) && !ir_dtype_is_float(n->dtype))
      out->e[k] = e; /* integer to integer */
    else if (!ir_dtype_is_float(x->dtype) && e == 0)
      out->e[k] = 0; /* an exact integer rounds the same way on both sides */
    else
      out->e[k] = ir_ref_bound_round(xv, e, v, n->dtype);
  }
}

/* ---- layout ---------------------------------------------------------------------------- */

/* iota: a coordinate is exact in f32 below 2^24; above, the kernel's f32
 * conversion before an f16/bf16 rounding may round twice. */
static void bound_iota(const ir_node *n, ir_ref_buf *out, int64_t p0, int64_t p1) {
  int64_t inner = 1;
  for (int d = n->axis + 1; d < n->rank; d++) inner *= n->shape[d];
  for (int64_t k = p0; k < p1; k++)
    out->e[k] =
        out->f ? ir_ref_bound_round((double)(k / inner % n->shape[n->axis]), 0, out->f[k], n->dtype)
               : 0;
}

/* Bounds move with their values: the layout evaluator on the bound buffers
 * (concat's second operand's too; gather's index operand is its values). */
void ir_ref_bound_layout(const kf_graph *g, const ir_node *n, const ir_ref_buf *const *a,
                         ir_ref_buf *out, int64_t p0, int64_t p1) {
  if (n->op == IR_OP_IOTA) {
    bound_iota(n, out, p0, p1);
    return;
  }
  ir_ref_buf src = {.f = a[0]->e, .n = a[0]->n}, dst = {.f = out->e, .n = out->n};
  ir_ref_buf src1 = {0};
  if (n->op == IR_OP_CONCAT) src1 = (ir_ref_buf){.f = a[1]->e, .n = a[1]->n};
  const ir_ref_buf *args[2] = {&src, n->op == IR_OP_GATHER ? a[1] : &src1};
  ir_ref_eval_layout(g, n, args, &dst, p0, p1);
}
