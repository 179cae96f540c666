/* reference.c - kf_graph_run_reference(_bounded): checks the caller's
 * tensors, walks the graph in order computing each live value in f64
 * (integers in int64) and, when asked, its error bound (ref_bound.c), frees
 * every value after its last use, and writes the outputs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/ctx.h"
#include "ir/dtype.h"
#include "ir/graph.h"
#include "ir/ops.h"
#include "ir/ref.h"
#include "ir/ref_bound.h"
#include "ir/ref_bound_reduce.h"
#include "ir/ref_layout.h"
#include "ir/ref_parallel.h"
#include "ir/ref_pointwise.h"
#include "ir/ref_reduce.h"
#include "ir/shape.h"

/* One run: a buffer per value, and when each may be freed. */
typedef struct ref_run {
  kf_graph *g;
  ir_ref_buf *bufs;
  int32_t *last_use;  /* index of the last live node reading it; -1: none */
  bool *live;         /* needed by some output */
  int64_t held, peak; /* bytes of values held now, and at most */
  int32_t computed;   /* values evaluated (dead ones are skipped) */
  bool bounds;        /* each value also carries its error bound */
  ir_ref_workers workers;
} ref_run;

/* ---- checking the caller's tensors ------------------------------------------- */

/* "bf16[8192]", or a description of a malformed tensor. */
static const char *tensor_desc(char *buf, size_t size, kf_dtype dt, int rank,
                               const int64_t *shape) {
  char sh[KF_MAX_RANK * 21 + 3];
  if (rank < 0 || rank > KF_MAX_RANK)
    snprintf(buf, size, "%s with rank %d", kf_dtype_name(dt), rank);
  else
    snprintf(buf, size, "%s%s", kf_dtype_name(dt), ir_shape_str(sh, sizeof sh, rank, shape));
  return buf;
}

/* `role` is "input" or "output"; index its position; v the graph value. */
static kf_status check_tensor(kf_graph *g, const char *role, int index, kf_value v,
                              const kf_host_tensor *t) {
  const ir_node *n = &g->nodes[v];
  char who[300], want[256], got[256];
  if (n->name)
    snprintf(who, sizeof who, "%s %d '%s'", role, index, n->name);
  else
    snprintf(who, sizeof who, "%s %d (%%%d)", role, index, (int)v);
  bool same = t->dtype == n->dtype && t->rank == n->rank;
  for (int d = 0; same && d < n->rank; d++) same = t->shape[d] == n->shape[d];
  if (!same)
    return ir_error(g, KF_ERR_INVALID_ARG, "%s: expected %s, got %s", who,
                    tensor_desc(want, sizeof want, n->dtype, n->rank, n->shape),
                    tensor_desc(got, sizeof got, t->dtype, t->rank, t->shape));
  if (!t->data) return ir_error(g, KF_ERR_INVALID_ARG, "%s: data is NULL", who);
  return KF_OK;
}

static kf_status check_args(kf_graph *g, const char *fn, const kf_host_tensor *inputs, int n_inputs,
                            const kf_host_tensor *outputs, int n_outputs) {
  if (g->n_outputs == 0) return ir_error(g, KF_ERR_INVALID_ARG, "%s: the graph has no outputs", fn);
  if (n_inputs != g->n_inputs)
    return ir_error(g, KF_ERR_INVALID_ARG, "%s: the graph has %d inputs, got %d", fn,
                    (int)g->n_inputs, n_inputs);
  if (n_outputs != g->n_outputs)
    return ir_error(g, KF_ERR_INVALID_ARG, "%s: the graph has %d outputs, got %d", fn,
                    (int)g->n_outputs, n_outputs);
  if ((n_inputs > 0 && !inputs) || !outputs)
    return ir_error(g, KF_ERR_INVALID_ARG, "%s: %s is NULL", fn, outputs ? "inputs" : "outputs");
  for (int i = 0; i < n_inputs; i++) {
    kf_status st = check_tensor(g, "input", i, g->inputs[i], &inputs[i]);
    if (st != KF_OK) return st;
  }
  for (int j = 0; j < n_outputs; j++) {
    kf_status st = check_tensor(g, "output", j, g->outputs[j], &outputs[j]);
    if (st != KF_OK) return st;
  }
  return KF_OK;
}

/* ---- lifetimes and memory ------------------------------------------------------ */

/* Marks the values the outputs need (so dead nodes cost nothing) and, for
 * each, the last live node that reads it. Outputs are never freed early. */
static void plan_lifetimes(ref_run *r) {
  const kf_graph *g = r->g;
  for (int32_t v = 0; v < g->n_nodes; v++) r->last_use[v] = -1;
  for (int32_t j = 0; j < g->n_outputs; j++) {
    r->live[g->outputs[j]] = true;
    r->last_use[g->outputs[j]] = INT32_MAX;
  }
  for (int32_t v = g->n_nodes - 1; v >= 0; v--) {
    if (!r->live[v]) continue;
    const ir_node *n = &g->nodes[v];
    for (int j = 0; j < n->nargs; j++) {
      int32_t a = n->args[j];
      r->live[a] = true;
      if (r->last_use[a] < v) r->last_use[a] = v;
    }
  }
}

static int64_t elem_bytes(const ref_run *r) {
  return r->bounds ? 16 : 8;
}

static void buf_free(ref_run *r, ir_ref_buf *b) {
  if (b->f || b->i) r->held -= (b->n > 0 ? b->n : 1) * elem_bytes(r);
  free(b->f);
  free(b->i);
  free(b->e);
  b->f = NULL;
  b->i = NULL;
  b->e = NULL;
}

/* Allocates value v's buffer for its dtype and element count. */
static kf_status buf_alloc(ref_run *r, kf_value v) {
  const ir_node *n = &r->g->nodes[v];
  char label[300], sh[KF_MAX_RANK * 21 + 3];
  int64_t count;
  bool ok = ir_numel(n->rank, n->shape, &count) && (uint64_t)count <= SIZE_MAX / 8;
  size_t size = count > 0 ? (size_t)count * 8 : 8;
  void *p = ok ? core_malloc(size) : NULL;
  double *e = p && r->bounds ? core_malloc(size) : NULL;
  if (!p || (r->bounds && !e)) {
    core_free(p);
    return ir_error(r->g, KF_ERR_OUT_OF_MEMORY,
                    "kf_graph_run_reference: out of memory for %s: %s%s (%d bytes per element)",
                    ir_node_label(r->g, v, label, sizeof label), kf_dtype_name(n->dtype),
                    ir_shape_str(sh, sizeof sh, n->rank, n->shape), (int)elem_bytes(r));
  }
  ir_ref_buf *b = &r->bufs[v];
  b->n = count;
  b->e = e;
  r->held += (count > 0 ? count : 1) * elem_bytes(r);
  if (r->held > r->peak) r->peak = r->held;
  if (ir_dtype_is_float(n->dtype))
    b->f = p;
  else
    b->i = p;
  return KF_OK;
}

/* ---- host buffers in and out ------------------------------------------------------ */

/* Reads a host tensor exactly: every stored format widens to double/int64. */
static void read_input(const kf_host_tensor *t, ir_ref_buf *b) {
  for (int64_t k = 0; k < b->n; k++) {
    switch (t->dtype) {
      case KF_F16:
        b->f[k] = kf_f16_to_float(((const uint16_t *)t->data)[k]);
        break;
      case KF_BF16:
        b->f[k] = kf_bf16_to_float(((const uint16_t *)t->data)[k]);
        break;
      case KF_F32:
        b->f[k] = ((const float *)t->data)[k];
        break;
      case KF_F64:
        b->f[k] = ((const double *)t->data)[k];
        break;
      case KF_I32:
        b->i[k] = ((const int32_t *)t->data)[k];
        break;
      case KF_I64:
        b->i[k] = ((const int64_t *)t->data)[k];
        break;
      default:
        b->i[k] = ((const uint8_t *)t->data)[k] != 0;
        break; /* bool */
    }
  }
}

/* Values are already rounded to the dtype, so each store is exact. */
static void write_output(const ir_ref_buf *b, kf_host_tensor *t) {
  for (int64_t k = 0; k < b->n; k++) {
    switch (t->dtype) {
      case KF_F16:
        ((uint16_t *)t->data)[k] = ir_double_to_f16(b->f[k]);
        break;
      case KF_BF16:
        ((uint16_t *)t->data)[k] = ir_double_to_bf16(b->f[k]);
        break;
      case KF_F32:
        ((float *)t->data)[k] = (float)b->f[k];
        break;
      case KF_F64:
        ((double *)t->data)[k] = b->f[k];
        break;
      case KF_I32:
        ((int32_t *)t->data)[k] = (int32_t)ir_ref_sat_int((double)b->i[k], KF_I32);
        break;
      case KF_I64:
        ((int64_t *)t->data)[k] = b->i[k];
        break;
      default:
        ((uint8_t *)t->data)[k] = b->i[k] != 0;
        break; /* bool */
    }
  }
}

/* ---- evaluation ----------------------------------------------------------------- */

static void eval_const(const ir_node *n, ir_ref_buf *out) {
  if (out->f)
    out->f[0] = ir_round_to_dtype(n->value, n->dtype);
  else
    out->i[0] = ir_ref_sat_int(n->value, n->dtype);
}

/* A node's evaluator and its bound's (ref_bound.c); NULL for sources. */
static ir_ref_eval_fn *node_fn(const ir_node *n, bool bound) {
  switch (ir_ops[n->op].kind) {
    case KIND_UNARY:
      return bound ? ir_ref_bound_unary : ir_ref_eval_unary;
    case KIND_BINARY:
      return bound ? ir_ref_bound_binary : ir_ref_eval_binary;
    case KIND_REDUCE:
      return bound ? ir_ref_bound_reduce : ir_ref_eval_reduce;
    case KIND_LAYOUT:
      return bound ? ir_ref_bound_layout : ir_ref_eval_layout;
    case KIND_MATMUL:
      return bound ? ir_ref_bound_matmul : ir_ref_eval_matmul;
    case KIND_POINTWISE:
      if (n->op == IR_OP_WHERE) return bound ? ir_ref_bound_where : ir_ref_eval_where;
      if (n->op == IR_OP_CLAMP) return bound ? ir_ref_bound_clamp : ir_ref_eval_clamp;
      return bound ? ir_ref_bound_cast : ir_ref_eval_cast;
    default:
      return NULL;
  }
}

static kf_status eval_node(ref_run *r, kf_value v, const kf_host_tensor *inputs) {
  kf_graph *g = r->g;
  const ir_node *n = &g->nodes[v];
  const ir_ref_buf *a[3] = {NULL, NULL, NULL};
  for (int j = 0; j < n->nargs && j < 3; j++) a[j] = &r->bufs[n->args[j]];
  ir_ref_buf *out = &r->bufs[v];
  if (ir_ops[n->op].kind == KIND_SOURCE) {
    if (n->op == IR_OP_CONST) eval_const(n, out);
    for (int i = 0; n->op != IR_OP_CONST && i < g->n_inputs; i++)
      if (g->inputs[i] == v) read_input(&inputs[i], out);
    /* inputs and constants are the same on both sides */
    for (int64_t k = 0; out->e && k < (out->n > 0 ? out->n : 1); k++) out->e[k] = 0;
    return KF_OK;
  }
  ir_ref_eval_fn *fn = node_fn(n, false);
  if (fn) {
    int64_t work;
    int64_t extent = ir_ref_extent(g, n, &work);
    ir_ref_parallel(&r->workers, fn, g, n, a, out, extent, work);
    if (r->bounds) ir_ref_parallel(&r->workers, node_fn(n, true), g, n, a, out, extent, work);
    return KF_OK;
  }
  char label[300];
  return ir_error(g, KF_ERR_INTERNAL, "kf_graph_run_reference: %s: op '%s' cannot be evaluated",
                  ir_node_label(g, v, label, sizeof label), ir_ops[n->op].name);
}

/* Evaluates the live nodes in order, freeing operands after their last use. */
static kf_status run_nodes(ref_run *r, const kf_host_tensor *inputs) {
  const kf_graph *g = r->g;
  for (int32_t v = 0; v < g->n_nodes; v++) {
    if (!r->live[v]) continue;
    kf_status st = buf_alloc(r, v);
    if (st == KF_OK) st = eval_node(r, v, inputs);
    if (st != KF_OK) return st;
    r->computed++;
    const ir_node *n = &g->nodes[v];
    for (int j = 0; j < n->nargs; j++)
      if (r->last_use[n->args[j]] == v) buf_free(r, &r->bufs[n->args[j]]);
  }
  return KF_OK;
}

/* Both entry points: bounds NULL for the plain run. */
static kf_status run_reference(kf_graph *g, const char *fn, const kf_host_tensor *inputs,
                               int n_inputs, kf_host_tensor *outputs, double *const *bounds,
                               int n_outputs) {
  if (!g) return KF_ERR_INVALID_ARG;
  if (g->status != KF_OK) return g->status; /* its message is already there */
  kf_status st = check_args(g, fn, inputs, n_inputs, outputs, n_outputs);
  for (int j = 0; st == KF_OK && bounds && j < n_outputs; j++)
    if (!bounds[j]) st = ir_error(g, KF_ERR_INVALID_ARG, "%s: bounds[%d] is NULL", fn, j);
  if (st != KF_OK) return st;
  size_t nn = (size_t)g->n_nodes;
  ref_run r = {.g = g,
               .bufs = core_calloc(nn, sizeof(ir_ref_buf)),
               .last_use = core_malloc(nn * sizeof(int32_t)),
               .live = core_calloc(nn, sizeof(bool)),
               .bounds = bounds != NULL};
  ir_ref_workers_init(&r.workers);
  if (!r.bufs || !r.last_use || !r.live) {
    st = ir_error(g, KF_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
  } else {
    plan_lifetimes(&r);
    st = run_nodes(&r, inputs);
  }
  for (int j = 0; st == KF_OK && j < n_outputs; j++) {
    const ir_ref_buf *b = &r.bufs[g->outputs[j]];
    write_output(b, &outputs[j]);
    if (bounds) memcpy(bounds[j], b->e, (size_t)b->n * sizeof(double));
  }
  if (st == KF_OK)
    core_log(g->ctx, KF_LOG_DEBUG, LOG_IR,
             "reference: %d of %d values computed, peak %lld bytes held", (int)r.computed,
             (int)g->n_nodes, (long long)r.peak);
  for (size_t v = 0; r.bufs && v < nn; v++) buf_free(&r, &r.bufs[v]);
  free(r.bufs);
  free(r.last_use);
  free(r.live);
  ir_ref_workers_free(&r.workers);
  return st;
}

kf_status kf_graph_run_reference(kf_graph *g, const kf_host_tensor *inputs, int n_inputs,
                                 kf_host_tensor *outputs, int n_outputs) {
  return run_reference(g, "kf_graph_run_reference", inputs, n_inputs, outputs, NULL, n_outputs);
}

kf_status kf_graph_run_reference_bounded(kf_graph *g, const kf_host_tensor *inputs, int n_inputs,
                                         kf_host_tensor *outputs, double *const *bounds,
                                         int n_outputs) {
  if (g && g->status == KF_OK && !bounds)
    return ir_error(g, KF_ERR_INVALID_ARG, "kf_graph_run_reference_bounded: bounds is NULL");
  return run_reference(g, "kf_graph_run_reference_bounded", inputs, n_inputs, outputs, bounds,
                       n_outputs);
}
