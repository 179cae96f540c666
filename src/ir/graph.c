/* graph.c - the graph object: creation, sticky errors, appending nodes,
 * outputs, introspection and deep copies. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/ctx.h"
#include "ir/graph.h"
#include "ir/ir.h"
#include "ir/names.h"
#include "ir/ops.h"
#include "ir/shape.h"

kf_status kf_graph_create(kf_ctx *ctx, kf_graph **out) {
  if (!out) return KF_ERR_INVALID_ARG;
  *out = NULL;
  kf_graph *g = core_calloc(1, sizeof *g);
  if (!g) return core_error(ctx, KF_ERR_OUT_OF_MEMORY, "kf_graph_create: out of memory");
  g->ctx = ctx;
  g->status = KF_OK;
  *out = g;
  return KF_OK;
}

void kf_graph_destroy(kf_graph *g) {
  if (!g) return;
  for (int32_t i = 0; i < g->n_nodes; i++) free(g->nodes[i].name);
  free(g->nodes);
  free(g->inputs);
  free(g->outputs);
  ir_names_free(&g->names);
  free(g->name);
  free(g);
}

kf_status kf_graph_status(const kf_graph *g) {
  return g ? g->status : KF_ERR_INVALID_ARG;
}

const char *kf_graph_errmsg(const kf_graph *g) {
  return g ? g->errmsg : "";
}

const char *kf_graph_name(const kf_graph *g) {
  return g ? g->name : NULL;
}

kf_status kf_graph_set_name(kf_graph *g, const char *name) {
  if (!g) return KF_ERR_INVALID_ARG;
  char *copy = NULL;
  if (name) {
    size_t len = strlen(name);
    copy = core_malloc(len + 1);
    if (!copy) return ir_error(g, KF_ERR_OUT_OF_MEMORY, "kf_graph_set_name: out of memory");
    memcpy(copy, name, len + 1);
  }
  free(g->name);
  g->name = copy;
  return KF_OK;
}

/* ---- errors ---------------------------------------------------------------- */

kf_value ir_fail(kf_graph *g, kf_status st, const char *fmt, ...) {
  if (!g || g->status != KF_OK) return KF_NONE; /* only the first is kept */
  g->status = st == KF_OK ? KF_ERR_INTERNAL : st;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(g->errmsg, sizeof g->errmsg, fmt, ap);
  va_end(ap);
  core_log(g->ctx, KF_LOG_DEBUG, LOG_IR, "builder error: %s", g->errmsg);
  return KF_NONE;
}

kf_status ir_error(kf_graph *g, kf_status st, const char *fmt, ...) {
  /* The first builder error outlives later non-sticky ones. */
  if (!g || g->status != KF_OK) return st;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(g->errmsg, sizeof g->errmsg, fmt, ap);
  va_end(ap);
  return st;
}

/* ---- nodes ----------------------------------------------------------------- */

bool ir_valid(const kf_graph *g, kf_value v) {
  return g && v >= 0 && v < g->n_nodes;
}

/* Makes room for one more int32 in a growable array. */
static bool grow_i32(int32_t **arr, int32_t n, int32_t *cap) {
  if (n < *cap) return true;
  if (*cap >= INT32_MAX / 2) return false;
  int32_t ncap = *cap ? *cap * 2 : 8;
  int32_t *p = core_realloc(*arr, (size_t)ncap * sizeof *p);
  if (!p) return false;
  *arr = p;
  *cap = ncap;
  return true;
}

static bool grow_nodes(kf_graph *g) {
  if (g->n_nodes < g->cap_nodes) return true;
  if (g->cap_nodes >= INT32_MAX / 2) return false;
  int32_t ncap = g->cap_nodes ? g->cap_nodes * 2 : 16;
  ir_node *p = core_realloc(g->nodes, (size_t)ncap * sizeof *p);
  if (!p) return false;
  g->nodes = p;
  g->cap_nodes = ncap;
  return true;
}

/* The one size check every node passes, whichever builder or loader made
 * it: every dimension >= 0 and the bytes within KF_MAX_TENSOR_BYTES, so that
 * later passes may multiply and add sizes of values freely. */
static bool check_size(kf_graph *g, const ir_node *n) {
  if (ir_tensor_bytes(n->rank, n->shape, n->dtype, NULL)) return true;
  char s[8 * 21 + 3];
  ir_shape_str(s, sizeof s, n->rank, n->shape);
  for (int i = 0; i < n->rank; i++)
    if (n->shape[i] < 0)
      return ir_fail(g, KF_ERR_SHAPE, "node %%%d (%s): shape %s has dimension %d < 0", g->n_nodes,
                     ir_ops[n->op].name, s, i),
             false;
  return ir_fail(g, KF_ERR_SHAPE,
                 "node %%%d (%s): %s%s is larger than a tensor may be (at most 2^62 bytes)",
                 g->n_nodes, ir_ops[n->op].name, kf_dtype_name(n->dtype), s),
         false;
}

/* The node's name, uses and is_output start empty; an INPUT node is not
 * added to g->inputs here (kf_input does that, after naming it). */
kf_value ir_append(kf_graph *g, const ir_node *n) {
  if (!g || !n) return KF_NONE;
  if (g->status != KF_OK) return KF_NONE;
  if (n->nargs < 0 || n->nargs > 3 || n->rank < 0 || n->rank > KF_MAX_RANK ||
      (unsigned)n->op >= IR_OP_COUNT || (unsigned)n->dtype >= KF_DTYPE_COUNT)
    return ir_fail(g, KF_ERR_INTERNAL, "ir_append: malformed node (op %d, %d args, rank %d)",
                   (int)n->op, n->nargs, n->rank);
  for (int i = 0; i < n->nargs; i++)
    if (!ir_valid(g, n->args[i]))
      return ir_fail(g, KF_ERR_INTERNAL, "ir_append: operand %d (%d) is not a value", i,
                     n->args[i]);
  if (!check_size(g, n)) return KF_NONE;
  if (!grow_nodes(g))
    return ir_fail(g, KF_ERR_OUT_OF_MEMORY, "out of memory adding node %%%d", g->n_nodes);
  kf_value v = g->n_nodes++;
  ir_node *dst = &g->nodes[v];
  *dst = *n;
  dst->name = NULL; /* names go through ir_names_insert / kf_set_name */
  dst->uses = 0;
  dst->is_output = false;
  for (int i = 0; i < n->nargs; i++) g->nodes[n->args[i]].uses++;
  return v;
}

kf_status kf_set_output(kf_graph *g, kf_value v) {
  if (!g) return KF_ERR_INVALID_ARG;
  if (g->status != KF_OK) return g->status;
  if (!ir_valid(g, v)) {
    ir_fail(g, KF_ERR_INVALID_ARG, "kf_set_output: bad value %d", v);
    return g->status;
  }
  char label[300];
  if (g->nodes[v].is_output) {
    ir_fail(g, KF_ERR_INVALID_ARG, "kf_set_output: %s is already an output",
            ir_node_label(g, v, label, sizeof label));
    return g->status;
  }
  if (!grow_i32(&g->outputs, g->n_outputs, &g->cap_outputs)) {
    ir_fail(g, KF_ERR_OUT_OF_MEMORY, "kf_set_output: out of memory");
    return g->status;
  }
  g->outputs[g->n_outputs++] = v;
  g->nodes[v].is_output = true;
  return KF_OK;
}

const char *ir_node_label(const kf_graph *g, kf_value v, char *buf, size_t size) {
  if (!buf || size == 0) return "";
  if (ir_valid(g, v) && g->nodes[v].name)
    snprintf(buf, size, "%%%d %s", v, g->nodes[v].name);
  else
    snprintf(buf, size, "%%%d", v);
  return buf;
}

/* ---- introspection --------------------------------------------------------- */

int kf_graph_num_values(const kf_graph *g) {
  return g ? g->n_nodes : -1;
}
int kf_graph_num_inputs(const kf_graph *g) {
  return g ? g->n_inputs : -1;
}
int kf_graph_num_outputs(const kf_graph *g) {
  return g ? g->n_outputs : -1;
}

kf_value kf_graph_input(const kf_graph *g, int index) {
  return g && index >= 0 && index < g->n_inputs ? g->inputs[index] : KF_NONE;
}

kf_value kf_graph_output(const kf_graph *g, int index) {
  return g && index >= 0 && index < g->n_outputs ? g->outputs[index] : KF_NONE;
}

static void io_spec(const ir_node *n, kf_tensor *t) {
  memset(t, 0, sizeof *t);
  t->dtype = n->dtype;
  t->rank = n->rank;
  for (int d = 0; d < n->rank; d++) t->shape[d] = n->shape[d];
}

kf_status kf_graph_io(const kf_graph *g, kf_tensor *inputs, int n_inputs, kf_tensor *outputs,
                      int n_outputs) {
  /* no message: the graph is const here, and may be read by other threads */
  if (!g || n_inputs != g->n_inputs || n_outputs != g->n_outputs ||
      (n_inputs > 0 && !inputs) || (n_outputs > 0 && !outputs))
    return KF_ERR_INVALID_ARG;
  for (int i = 0; i < n_inputs; i++) io_spec(&g->nodes[g->inputs[i]], &inputs[i]);
  for (int i = 0; i < n_outputs; i++) io_spec(&g->nodes[g->outputs[i]], &outputs[i]);
  return KF_OK;
}

kf_dtype kf_value_dtype(const kf_graph *g, kf_value v) {
  return ir_valid(g, v) ? g->nodes[v].dtype : KF_DTYPE_COUNT;
}

int kf_value_rank(const kf_graph *g, kf_value v) {
  return ir_valid(g, v) ? g->nodes[v].rank : -1;
}

const int64_t *kf_value_shape(const kf_graph *g, kf_value v) {
  return ir_valid(g, v) ? g->nodes[v].shape : NULL;
}

int64_t kf_value_numel(const kf_graph *g, kf_value v) {
  int64_t n;
  if (!ir_valid(g, v) || !ir_numel(g->nodes[v].rank, g->nodes[v].shape, &n)) return -1;
  return n;
}

const char *kf_value_name(const kf_graph *g, kf_value v) {
  return ir_valid(g, v) ? g->nodes[v].name : NULL;
}

const char *kf_value_op(const kf_graph *g, kf_value v) {
  if (!ir_valid(g, v) || (unsigned)g->nodes[v].op >= IR_OP_COUNT) return NULL;
  return ir_ops[g->nodes[v].op].name;
}

/* ---- deep copy ------------------------------------------------------------- */

static void *dup_mem(const void *src, size_t n) {
  if (!src || n == 0) return NULL;
  void *p = core_malloc(n);
  if (p) memcpy(p, src, n);
  return p;
}

static char *dup_str(const char *s) {
  return s ? dup_mem(s, strlen(s) + 1) : NULL;
}

kf_graph *ir_graph_clone(const kf_graph *g) {
  if (!g) return NULL;
  kf_graph *c = core_calloc(1, sizeof *c);
  if (!c) return NULL;
  *c = *g; /* scalars, status, errmsg; the ctx pointer is shared */
  c->nodes = dup_mem(g->nodes, (size_t)g->n_nodes * sizeof *g->nodes);
  c->inputs = dup_mem(g->inputs, (size_t)g->n_inputs * sizeof *g->inputs);
  c->outputs = dup_mem(g->outputs, (size_t)g->n_outputs * sizeof *g->outputs);
  c->names.slots = dup_mem(g->names.slots, (size_t)g->names.cap * sizeof *g->names.slots);
  c->name = dup_str(g->name);
  c->cap_nodes = c->nodes ? g->n_nodes : 0;
  c->cap_inputs = c->inputs ? g->n_inputs : 0;
  c->cap_outputs = c->outputs ? g->n_outputs : 0;
  bool ok = (c->nodes || g->n_nodes == 0) && (c->inputs || g->n_inputs == 0) &&
            (c->outputs || g->n_outputs == 0) && (c->names.slots || g->names.cap == 0) &&
            (c->name || !g->name);
  if (!c->nodes) c->n_nodes = 0; /* nothing to free per node */
  for (int32_t i = 0; i < c->n_nodes; i++) {
    const char *nm = g->nodes[i].name;
    c->nodes[i].name = ok ? dup_str(nm) : NULL;
    if (nm && !c->nodes[i].name) ok = false;
  }
  if (!ok) {
    kf_graph_destroy(c);
    return NULL;
  }
  return c;
}
