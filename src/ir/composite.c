/* composite.c - softmax, log_softmax, layernorm and rmsnorm, expanded into
 * primitives at build time (docs/ops.md lists the exact expansions, which
 * the fuser recovers as one row kernel). */
#include <math.h>
#include <stdio.h>

#include "ir/build_common.h"
#include "ir/graph.h"

/* Checks the composite's x (floating, rank >= 1) and normalizes axis into
 * *out. Everything is checked here, before any node is made, so the
 * primitive builders below cannot fail but for memory. */
static bool check_x(kf_graph *g, const char *what, kf_value x, int axis, int *out) {
  if (!ir_bld_operand(g, what, x, "operand x") || !ir_bld_accepts(g, what, ACC_FLT, x))
    return false;
  int rank = g->nodes[x].rank;
  if (ir_bld_axis(axis, rank, out)) return true;
  char d[IR_DESC_SIZE];
  ir_fail(g, KF_ERR_INVALID_ARG, "node %%%d (%s): axis %d is out of range for %s (want %d..%d)",
          ir_bld_next(g), what, axis, ir_bld_desc(g, x, d, sizeof d), -rank, rank - 1);
  return false;
}

/* A weight or bias: absent (KF_NONE), or x's dtype with shape [last dim]. */
static bool check_param(kf_graph *g, const char *what, kf_value x, kf_value p, const char *role) {
  if (p == KF_NONE) return true;
  if (!ir_bld_operand(g, what, p, role) || !ir_bld_same_dtype(g, what, x, p)) return false;
  const ir_node *nx = &g->nodes[x], *np = &g->nodes[p];
  if (np->rank == 1 && np->shape[0] == nx->shape[nx->rank - 1]) return true;
  char sx[IR_DESC_SIZE], sp[IR_DESC_SIZE];
  ir_fail(g, KF_ERR_SHAPE, "node %%%d (%s): %s %s must have shape [%lld], the last axis of %s",
          ir_bld_next(g), what, role, ir_bld_desc(g, p, sp, sizeof sp),
          (long long)nx->shape[nx->rank - 1], ir_bld_desc(g, x, sx, sizeof sx));
  return false;
}

static bool check_eps(kf_graph *g, const char *what, double eps) {
  if (isfinite(eps) && eps >= 0.0) return true;
  ir_fail(g, KF_ERR_INVALID_ARG, "node %%%d (%s): eps %g must be finite and >= 0", ir_bld_next(g),
          what, eps);
  return false;
}

static bool is_half(kf_dtype dt) {
  return dt == KF_F16 || dt == KF_BF16;
}

/* Half-precision values are computed in f32: x itself otherwise. */
static kf_value widen(kf_graph *g, kf_value x) {
  return is_half(g->nodes[x].dtype) ? kf_cast(g, x, KF_F32) : x;
}

/* The final result, cast back once to the input's dtype when it was widened. */
static kf_value narrow(kf_graph *g, kf_value y, kf_dtype dt) {
  return y != KF_NONE && is_half(dt) ? kf_cast(g, y, dt) : y;
}

kf_value kf_softmax(kf_graph *g, kf_value x, int axis) {
  if (!ir_bld_live(g)) return KF_NONE;
  int ax;
  if (!check_x(g, "softmax", x, axis, &ax)) return KF_NONE;
  kf_dtype dt = g->nodes[x].dtype;
  kf_value xc = widen(g, x);
  kf_value m = kf_max(g, xc, 1, &ax, true);
  kf_value e = kf_exp(g, kf_sub(g, xc, m));
  kf_value s = kf_sum(g, e, 1, &ax, true);
  return narrow(g, kf_div(g, e, s), dt);
}

kf_value kf_log_softmax(kf_graph *g, kf_value x, int axis) {
  if (!ir_bld_live(g)) return KF_NONE;
  int ax;
  if (!check_x(g, "log_softmax", x, axis, &ax)) return KF_NONE;
  kf_dtype dt = g->nodes[x].dtype;
  kf_value xc = widen(g, x);
  kf_value m = kf_max(g, xc, 1, &ax, true);
  kf_value d = kf_sub(g, xc, m);
  kf_value s = kf_sum(g, kf_exp(g, d), 1, &ax, true);
  return narrow(g, kf_sub(g, d, kf_log(g, s)), dt);
}

/* The expansion keeps max(x) keepdim and sum(exp(x - max)) as softmax has
 * them, so a row kernel pairs them into one online pass (row_online.c)
 * and the attention recognizer reads them as the flash kernel's running
 * max and sum (fuser/attention.c). The where makes a row of -inf (all
 * masked) -inf and a row holding +inf +inf, where m + log(s) alone is
 * -inf - -inf = NaN; torch.logsumexp gives the same. */
kf_value kf_logsumexp(kf_graph *g, kf_value x, int axis) {
  if (!ir_bld_live(g)) return KF_NONE;
  int ax;
  if (!check_x(g, "logsumexp", x, axis, &ax)) return KF_NONE;
  const ir_node *nx = &g->nodes[x];
  kf_dtype dt = nx->dtype;
  int64_t shape[KF_MAX_RANK];
  int rank = 0;
  for (int d = 0; d < nx->rank; d++)
    if (d != ax) shape[rank++] = nx->shape[d];
  kf_value xc = widen(g, x);
  kf_value m = kf_max(g, xc, 1, &ax, true);
  kf_value e = kf_exp(g, kf_sub(g, xc, m));
  kf_value s = kf_sum(g, e, 1, &ax, true);
  kf_value y = kf_add(g, m, kf_log(g, s));
  if (m == KF_NONE) return KF_NONE; /* out of memory, already recorded */
  kf_value inf = kf_scalar(g, INFINITY, g->nodes[m].dtype);
  y = kf_where(g, kf_eq(g, kf_abs(g, m), inf), m, y);
  return kf_reshape(g, narrow(g, y, dt), rank, shape);
}

/* y * rsqrt(ms + eps), the normalization step shared by both norms. */
static kf_value scale_by_rsqrt(kf_graph *g, kf_value y, kf_value ms, double eps) {
  if (ms == KF_NONE) return KF_NONE; /* out of memory, already recorded */
  kf_value e = kf_scalar(g, eps, g->nodes[ms].dtype);
  return kf_mul(g, y, kf_rsqrt(g, kf_add(g, ms, e)));
}

/* y * w + b for the present ones, w and b widened like x. */
static kf_value affine(kf_graph *g, kf_value y, kf_value w, kf_value b) {
  if (w != KF_NONE) y = kf_mul(g, y, widen(g, w));
  if (b != KF_NONE) y = kf_add(g, y, widen(g, b));
  return y;
}

kf_value kf_layernorm(kf_graph *g, kf_value x, kf_value weight, kf_value bias, double eps) {
  if (!ir_bld_live(g)) return KF_NONE;
  int ax;
  if (!check_x(g, "layernorm", x, -1, &ax) || !check_param(g, "layernorm", x, weight, "weight") ||
      !check_param(g, "layernorm", x, bias, "bias") || !check_eps(g, "layernorm", eps))
    return KF_NONE;
  kf_dtype dt = g->nodes[x].dtype;
  kf_value xc = widen(g, x);
  kf_value mu = kf_mean(g, xc, 1, &ax, true);
  kf_value d = kf_sub(g, xc, mu);
  kf_value var = kf_mean(g, kf_mul(g, d, d), 1, &ax, true);
  kf_value y = scale_by_rsqrt(g, d, var, eps);
  return narrow(g, affine(g, y, weight, bias), dt);
}

kf_value kf_rmsnorm(kf_graph *g, kf_value x, kf_value weight, double eps) {
  if (!ir_bld_live(g)) return KF_NONE;
  int ax;
  if (!check_x(g, "rmsnorm", x, -1, &ax) || !check_param(g, "rmsnorm", x, weight, "weight") ||
      !check_eps(g, "rmsnorm", eps))
    return KF_NONE;
  kf_dtype dt = g->nodes[x].dtype;
  kf_value xc = widen(g, x);
  kf_value ms = kf_mean(g, kf_mul(g, xc, xc), 1, &ax, true);
  kf_value y = scale_by_rsqrt(g, xc, ms, eps);
  return narrow(g, affine(g, y, weight, KF_NONE), dt);
}
