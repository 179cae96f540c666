/* error_bound.h - a per-element error bound for a float graph, computed by
 * the CPU reference on a shadow graph (running error analysis in f64).
 *
 * Kernels round every f16/bf16 value to its dtype exactly as the reference
 * does (docs/codegen.md), so a kernel and the reference differ only where f32
 * evaluation (kernels) and f64 evaluation (reference) of some op differ: by a
 * few f32 ulps, or by one ulp of the node's dtype when that flips a rounding.
 * Such a local error is at most (2 u_dt + 8 u_f32) |v| + the dtype's smallest
 * spacing, and it propagates to the outputs through the derivatives of the
 * later ops. The shadow graph computes, next to each value V (in f64), a
 * first-order bound E of its error:
 *   add/sub Ea + Eb, mul Ea|b| + |a|Eb, div (Ea + |v|Eb)/|b|,
 *   maximum/minimum max(Ea, Eb), where Ea + Eb (a condition flipped by
 *   rounding, as in where(a > b, a, b), picks a value within the error),
 *   exp |v|Ex, log Ex/|x|, sqrt Ex/sqrt(max(|x|, Ex)), bounded-slope
 *   unaries 1.2 Ex (gelu/erf: + 8 u_f32 |x|, float erf near -1),
 *   sum/mean of E plus the f32 accumulation error c u_f32 sum|x|, max of E,
 *   matmul likewise; layout ops move E with V.
 * A reduction's bound is thus relative to the sum of its |terms|, not to
 * |result|: cancellation does not make it fail, while a wrong index, op or
 * element (an error of the order of the values) still does. Only float
 * graphs: an op without a rule makes eb_build fail with its name. */
#ifndef KF_TEST_ERROR_BOUND_H
#define KF_TEST_ERROR_BOUND_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"

/* How far past the first-order bound an error may go (second-order terms). */
#define EB_SLACK 2.0

typedef struct eb_shadow {
  kf_graph *s;
  kf_value *V, *E; /* per node of the original graph; E is KF_NONE for bools */
  char err[256];
} eb_shadow;

static double eb_unit(kf_dtype dt) {
  switch (dt) {
    case KF_F16: return ldexp(1.0, -11);
    case KF_BF16: return ldexp(1.0, -8);
    case KF_F32: return ldexp(1.0, -24);
    case KF_F64: return ldexp(1.0, -53);
    default: return 0;
  }
}

/* The smallest spacing of dt (f32: flush-to-zero of denormals). */
static double eb_tiny(kf_dtype dt) {
  switch (dt) {
    case KF_F16: return ldexp(1.0, -24);
    case KF_BF16: case KF_F32: return ldexp(1.0, -125);
    default: return 0;
  }
}

static kf_value eb_c(eb_shadow *b, double x) { return kf_scalar(b->s, x, KF_F64); }

/* The node's own rounding error, from its f64 value. */
static kf_value eb_local(eb_shadow *b, const ir_node *n, kf_value v) {
  double u = n->dtype == KF_F64 ? 8 * eb_unit(KF_F64) : 2 * eb_unit(n->dtype) + 8 * eb_unit(KF_F32);
  return kf_add(b->s, kf_mul(b->s, kf_abs(b->s, v), eb_c(b, u)), eb_c(b, eb_tiny(n->dtype)));
}

/* f32 (f64 for f64) accumulation error over red terms of magnitude sum|x|. */
static double eb_acc_factor(kf_dtype dt, int64_t red) {
  double c = (double)(red < 256 ? red : 256) + log2((double)red + 1); /* serial chunks, tree */
  return c * (dt == KF_F64 ? eb_unit(KF_F64) : eb_unit(KF_F32));
}

static bool eb_unary(eb_shadow *b, const ir_node *n, int32_t i, kf_value *ve, kf_value *ee) {
  kf_graph *s = b->s;
  kf_value x = b->V[n->args[0]], ex = b->E[n->args[0]], v;
  switch (n->op) {
#define U(OP, fn, slope)                        \
  case IR_OP_##OP:                              \
    v = fn(s, x);                               \
    *ee = kf_mul(s, ex, eb_c(b, slope));        \
    break;
    U(NEG, kf_neg, 1.0) U(ABS, kf_abs, 1.0) U(RELU, kf_relu, 1.0) U(TANH, kf_tanh, 1.0)
    U(SIGMOID, kf_sigmoid, 1.0) U(SILU, kf_silu, 1.2) U(SIN, kf_sin, 1.0) U(COS, kf_cos, 1.0)
#undef U
    /* 0.5 x (1 + erf(x / sqrt 2)) in float: erf's ulp near -1 times |x|
     * (absolute, not relative to a small result) */
    case IR_OP_GELU: case IR_OP_GELU_TANH: case IR_OP_ERF:
      v = n->op == IR_OP_GELU ? kf_gelu(s, x) : n->op == IR_OP_ERF ? kf_erf(s, x) : kf_gelu_tanh(s, x);
      *ee = kf_add(s, kf_mul(s, ex, eb_c(b, 1.2)),
                   kf_mul(s, kf_abs(s, x), eb_c(b, 8 * eb_unit(n->dtype == KF_F64 ? KF_F64 : KF_F32))));
      break;
    case IR_OP_EXP:
      v = kf_exp(s, x);
      *ee = kf_mul(s, ex, v);
      break;
    case IR_OP_LOG:
      v = kf_log(s, x);
      *ee = kf_div(s, ex, kf_abs(s, x));
      break;
    case IR_OP_SQRT:
      v = kf_sqrt(s, x);
      *ee = kf_div(s, ex, kf_sqrt(s, kf_maximum(s, kf_maximum(s, kf_abs(s, x), ex), eb_c(b, 1e-300))));
      break;
    case IR_OP_RSQRT:
      v = kf_rsqrt(s, x);
      *ee = kf_div(s, kf_mul(s, ex, v), kf_abs(s, x));
      break;
    case IR_OP_RECIPROCAL:
      v = kf_reciprocal(s, x);
      *ee = kf_mul(s, ex, kf_mul(s, v, v));
      break;
    default:
      snprintf(b->err, sizeof b->err, "error bound: no rule for %s (node %%%d)", ir_ops[n->op].name,
               (int)i);
      return false;
  }
  *ve = v;
  return true;
}

static bool eb_binary(eb_shadow *b, const ir_node *n, int32_t i, kf_value *ve, kf_value *ee) {
  kf_graph *s = b->s;
  kf_value x = b->V[n->args[0]], y = b->V[n->args[1]];
  kf_value ex = b->E[n->args[0]], ey = b->E[n->args[1]];
  *ee = KF_NONE;
  switch (n->op) {
    case IR_OP_ADD: *ve = kf_add(s, x, y), *ee = kf_add(s, ex, ey); return true;
    case IR_OP_SUB: *ve = kf_sub(s, x, y), *ee = kf_add(s, ex, ey); return true;
    case IR_OP_MUL:
      *ve = kf_mul(s, x, y);
      *ee = kf_add(s, kf_mul(s, ex, kf_abs(s, y)), kf_mul(s, kf_abs(s, x), ey));
      return true;
    case IR_OP_DIV:
      *ve = kf_div(s, x, y);
      *ee = kf_div(s, kf_add(s, ex, kf_mul(s, kf_abs(s, *ve), ey)), kf_abs(s, y));
      return true;
    case IR_OP_MAXIMUM: *ve = kf_maximum(s, x, y), *ee = kf_maximum(s, ex, ey); return true;
    case IR_OP_MINIMUM: *ve = kf_minimum(s, x, y), *ee = kf_maximum(s, ex, ey); return true;
    case IR_OP_EQ: *ve = kf_eq(s, x, y); return true;
    case IR_OP_NE: *ve = kf_ne(s, x, y); return true;
    case IR_OP_LT: *ve = kf_lt(s, x, y); return true;
    case IR_OP_LE: *ve = kf_le(s, x, y); return true;
    case IR_OP_GT: *ve = kf_gt(s, x, y); return true;
    case IR_OP_GE: *ve = kf_ge(s, x, y); return true;
    default:
      snprintf(b->err, sizeof b->err, "error bound: no rule for %s (node %%%d)", ir_ops[n->op].name,
               (int)i);
      return false;
  }
}

static bool eb_reduce(eb_shadow *b, const ir_node *n, kf_value *ve, kf_value *ee) {
  kf_graph *s = b->s;
  kf_value x = b->V[n->args[0]], ex = b->E[n->args[0]];
  int axes[KF_MAX_RANK], na = 0;
  int rank = kf_value_rank(s, x);
  int64_t red = 1;
  for (int d = 0; d < rank; d++)
    if (n->axes & (1u << d)) axes[na++] = d, red *= kf_value_shape(s, x)[d];
  bool kd = n->keepdim;
  if (n->op == IR_OP_MAX || n->op == IR_OP_MIN) {
    *ve = n->op == IR_OP_MAX ? kf_max(s, x, na, axes, kd) : kf_min(s, x, na, axes, kd);
    *ee = kf_max(s, ex, na, axes, kd);
    return true;
  }
  bool mean = n->op == IR_OP_MEAN;
  *ve = mean ? kf_mean(s, x, na, axes, kd) : kf_sum(s, x, na, axes, kd);
  kf_value acc = kf_mul(s, kf_abs(s, x), eb_c(b, eb_acc_factor(n->dtype, red)));
  kf_value t = kf_add(s, ex, acc);
  *ee = mean ? kf_mean(s, t, na, axes, kd) : kf_sum(s, t, na, axes, kd);
  return true;
}

static bool eb_node(eb_shadow *b, const kf_graph *g, int32_t i) {
  kf_graph *s = b->s;
  const ir_node *n = &g->nodes[i];
  kf_value v = KF_NONE, e = KF_NONE;
  const kf_value *V = b->V, *E = b->E;
  bool flt = ir_dtype_is_float(n->dtype);
  switch (ir_ops[n->op].kind) {
    case KIND_SOURCE:
      if (n->op == IR_OP_CONST) {
        b->V[i] = kf_scalar(s, n->value, flt ? KF_F64 : n->dtype);
        b->E[i] = eb_c(b, 0);
        return true;
      }
      if (!flt) {
        snprintf(b->err, sizeof b->err, "error bound: input %%%d is not float", (int)i);
        return false;
      }
      char name[24];
      snprintf(name, sizeof name, "v%d", (int)i);
      b->V[i] = kf_input(s, name, KF_F64, n->rank, n->shape);
      b->E[i] = kf_mul(s, kf_abs(s, b->V[i]), eb_c(b, 0));
      return true;
    case KIND_UNARY:
      if (!eb_unary(b, n, i, &v, &e)) return false;
      break;
    case KIND_BINARY:
      if (!eb_binary(b, n, i, &v, &e)) return false;
      break;
    case KIND_REDUCE:
      if (!eb_reduce(b, n, &v, &e)) return false;
      break;
    case KIND_LAYOUT:
      if (n->op == IR_OP_TRANSPOSE) {
        int perm[KF_MAX_RANK];
        for (int d = 0; d < n->rank; d++) perm[d] = n->perm[d];
        v = kf_transpose(s, V[n->args[0]], perm), e = kf_transpose(s, E[n->args[0]], perm);
      } else if (n->op == IR_OP_RESHAPE) {
        v = kf_reshape(s, V[n->args[0]], n->rank, n->shape);
        e = kf_reshape(s, kf_broadcast_to(s, E[n->args[0]], kf_value_rank(s, V[n->args[0]]),
                                          kf_value_shape(s, V[n->args[0]])), n->rank, n->shape);
      } else {
        v = kf_broadcast_to(s, V[n->args[0]], n->rank, n->shape);
        e = kf_broadcast_to(s, E[n->args[0]], n->rank, n->shape);
      }
      b->V[i] = v, b->E[i] = e; /* exact: no rounding of its own */
      return true;
    case KIND_MATMUL: {
      kf_value x = V[n->args[0]], y = V[n->args[1]];
      int64_t k = kf_value_shape(s, x)[kf_value_rank(s, x) - 1];
      v = kf_matmul(s, x, y);
      e = kf_add(s, kf_matmul(s, E[n->args[0]], kf_abs(s, y)), kf_matmul(s, kf_abs(s, x), E[n->args[1]]));
      e = kf_add(s, e, kf_mul(s, kf_matmul(s, kf_abs(s, x), kf_abs(s, y)),
                              eb_c(b, eb_acc_factor(n->dtype, k))));
      break;
    }
    default: /* where, clamp, cast */
      if (n->op == IR_OP_WHERE) {
        v = kf_where(s, V[n->args[0]], V[n->args[1]], V[n->args[2]]);
        e = kf_add(s, E[n->args[1]], E[n->args[2]]); /* a flip: |a - b| <= Ea + Eb */
      } else if (n->op == IR_OP_CLAMP) {
        v = kf_clamp(s, V[n->args[0]], n->lo, n->hi), e = E[n->args[0]];
      } else if (flt && ir_dtype_is_float(g->nodes[n->args[0]].dtype)) {
        v = V[n->args[0]], e = E[n->args[0]];
      } else {
        snprintf(b->err, sizeof b->err, "error bound: no rule for a cast to or from %s (node %%%d)",
                 kf_dtype_name(n->dtype), (int)i);
        return false;
      }
      break;
  }
  b->V[i] = v;
  b->E[i] = flt ? kf_add(s, e, eb_local(b, n, v)) : KF_NONE;
  return true;
}

/* Builds the shadow of g: inputs as g's (in f64), one output per output of
 * g, its error bound. false with b->err set when g has an op without a rule. */
static bool eb_build(eb_shadow *b, kf_ctx *ctx, const kf_graph *g) {
  memset(b, 0, sizeof *b);
  if (kf_graph_create(ctx, &b->s) != KF_OK) return false;
  b->V = calloc((size_t)g->n_nodes, sizeof *b->V);
  b->E = calloc((size_t)g->n_nodes, sizeof *b->E);
  if (!b->V || !b->E) return false;
  /* inputs first, in g's input order, so that they bind by position */
  for (int k = 0; k < g->n_inputs; k++)
    if (!eb_node(b, g, g->inputs[k])) return false;
  for (int32_t i = 0; i < g->n_nodes; i++) {
    bool is_in = false;
    for (int k = 0; k < g->n_inputs; k++) is_in |= g->inputs[k] == i;
    if (!is_in && !eb_node(b, g, i)) return false;
  }
  for (int j = 0; j < g->n_outputs; j++) {
    kf_value e = b->E[g->outputs[j]];
    const ir_node *o = &g->nodes[g->outputs[j]];
    if (e == KF_NONE) e = eb_c(b, 0); /* bool: exact */
    /* a bound derived from constants only may be rank 0: give it the shape */
    kf_set_output(b->s, kf_add(b->s, e, kf_broadcast_to(b->s, eb_c(b, 0), o->rank, o->shape)));
  }
  if (kf_graph_status(b->s) != KF_OK) {
    snprintf(b->err, sizeof b->err, "error bound: %s", kf_graph_errmsg(b->s));
    return false;
  }
  return true;
}

static void eb_free(eb_shadow *b) {
  free(b->V);
  free(b->E);
  if (b->s) kf_graph_destroy(b->s);
  memset(b, 0, sizeof *b);
}

/* Runs the shadow on g's host inputs (widened to f64); bounds[j] gets one
 * double per element of output j (caller frees each). false on error. */
static bool eb_run(eb_shadow *b, const kf_host_tensor *hin, int n_in, double **bounds, int n_out) {
  kf_host_tensor *in = calloc((size_t)n_in + 1, sizeof *in);
  kf_host_tensor *out = calloc((size_t)n_out + 1, sizeof *out);
  bool ok = in && out;
  for (int k = 0; ok && k < n_in; k++) {
    int64_t n = 1;
    for (int d = 0; d < hin[k].rank; d++) n *= hin[k].shape[d];
    double *p = malloc((size_t)(n ? n : 1) * sizeof *p);
    ok = p != NULL;
    for (int64_t e = 0; ok && e < n; e++) p[e] = load_elem(hin[k].data, hin[k].dtype, e);
    in[k] = hin[k];
    in[k].data = p, in[k].dtype = KF_F64;
  }
  for (int j = 0; ok && j < n_out; j++) {
    kf_value v = kf_graph_output(b->s, j);
    int64_t n = kf_value_numel(b->s, v);
    bounds[j] = malloc((size_t)(n ? n : 1) * sizeof(double));
    out[j].data = bounds[j], out[j].dtype = KF_F64, out[j].rank = kf_value_rank(b->s, v);
    memcpy(out[j].shape, kf_value_shape(b->s, v), sizeof out[j].shape);
    ok = bounds[j] != NULL;
  }
  if (ok && kf_graph_run_reference(b->s, in, n_in, out, n_out) != KF_OK) {
    snprintf(b->err, sizeof b->err, "error bound: reference: %s", kf_graph_errmsg(b->s));
    ok = false;
  }
  for (int k = 0; in && k < n_in; k++) free(in[k].data);
  free(in);
  free(out);
  return ok;
}

#endif
