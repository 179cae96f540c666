/* graph_blob.c - a graph as bytes and back. The layout is this build's own
 * (host byte order, fixed-size fields): the cache key that stores it names
 * the kfuse version, and a reader checks every count and index and rebuilds
 * every node through its builder, so bytes from elsewhere (or edited under
 * a valid checksum) are refused, never trusted. */
#include "ir/graph_blob.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/replay.h"

static const char MAGIC[4] = {'K', 'F', 'G', '2'} /* 2: index ops' fields */;

/* Longest name the reader takes (the YAML loader allows 255 bytes). */
enum { IR_BLOB_NAME_MAX = 4095 };

static void put(core_str *b, const void *p, size_t n) {
  core_str_putn(b, (const char *)p, n);
}
static void put_u32(core_str *b, uint32_t v) {
  put(b, &v, sizeof v);
}

static void put_name(core_str *b, const char *name) {
  uint32_t n = name ? (uint32_t)strlen(name) : 0;
  put_u32(b, n);
  if (n) put(b, name, n);
}

/* The fields of one node that the blob keeps. */
typedef struct blob_node {
  int32_t op, dtype;
  int8_t rank, nargs;
  uint8_t axes, keepdim;
  int32_t args[3];
  int64_t shape[KF_MAX_RANK];
  double value, lo, hi;
  int8_t perm[KF_MAX_RANK];
  int64_t start, step;
  int8_t axis, pad_[7];
} blob_node;

void ir_graph_to_blob(const kf_graph *g, core_str *out) {
  put(out, MAGIC, sizeof MAGIC);
  put_u32(out, (uint32_t)g->n_nodes);
  put_u32(out, (uint32_t)g->n_inputs);
  put_u32(out, (uint32_t)g->n_outputs);
  put_name(out, g->name);
  for (int32_t i = 0; i < g->n_nodes; i++) {
    const ir_node *n = &g->nodes[i];
    blob_node b;
    memset(&b, 0, sizeof b); /* no padding bytes of the stack in the blob */
    b.op = (int32_t)n->op, b.dtype = (int32_t)n->dtype;
    b.rank = n->rank, b.nargs = n->nargs, b.axes = n->axes, b.keepdim = n->keepdim;
    memcpy(b.args, n->args, sizeof b.args);
    memcpy(b.shape, n->shape, sizeof b.shape);
    b.value = n->value, b.lo = n->lo, b.hi = n->hi;
    memcpy(b.perm, n->perm, sizeof b.perm);
    b.start = n->start, b.step = n->step, b.axis = n->axis;
    put(out, &b, sizeof b);
    put_name(out, n->name);
  }
  put(out, g->inputs, (size_t)g->n_inputs * sizeof *g->inputs);
  put(out, g->outputs, (size_t)g->n_outputs * sizeof *g->outputs);
}

/* A cursor over the bytes: every read checks what is left. */
typedef struct reader {
  const char *p, *end;
  char name[IR_BLOB_NAME_MAX + 1];
} reader;

static bool get(reader *r, void *dst, size_t n) {
  if ((size_t)(r->end - r->p) < n) return false;
  memcpy(dst, r->p, n);
  r->p += n;
  return true;
}

/* A name into r->name; *present false for none. */
static bool get_name(reader *r, bool *present) {
  uint32_t n;
  if (!get(r, &n, sizeof n) || n > IR_BLOB_NAME_MAX || !get(r, r->name, n)) return false;
  r->name[n] = '\0';
  *present = n > 0;
  return strlen(r->name) == n;
}

/* One node, rebuilt through its builder (ir_replay_node): a blob whose
 * checksum is right but whose shape, dtype, arity or attributes were edited
 * is refused, never trusted. */
static bool read_node(reader *r, kf_graph *g, int32_t i, char *why, size_t why_size) {
  blob_node b;
  bool named;
  /* why is written only on failure: this runs once per node of a warm load */
  if (!get(r, &b, sizeof b) || !get_name(r, &named)) {
    snprintf(why, why_size, "node %%%d: truncated or a bad name", i);
    return false;
  }
  kf_value v;
  if (b.op == IR_OP_INPUT) {
    if (!named) {
      snprintf(why, why_size, "input %%%d: unnamed", i);
      return false;
    }
    v = kf_input(g, r->name, (kf_dtype)b.dtype, b.rank, b.shape);
    if (v == KF_NONE) snprintf(why, why_size, "%s", kf_graph_errmsg(g));
    return v != KF_NONE;
  }
  ir_node n;
  memset(&n, 0, sizeof n);
  n.op = (ir_op)b.op, n.dtype = (kf_dtype)b.dtype;
  n.rank = b.rank, n.nargs = b.nargs, n.axes = b.axes, n.keepdim = b.keepdim != 0;
  memcpy(n.args, b.args, sizeof n.args);
  memcpy(n.shape, b.shape, sizeof n.shape);
  n.value = b.value, n.lo = b.lo, n.hi = b.hi;
  memcpy(n.perm, b.perm, sizeof n.perm);
  n.start = b.start, n.step = b.step, n.axis = b.axis;
  v = ir_replay_node(g, &n, why, why_size); /* the new node's index, i, or KF_NONE */
  if (v != KF_NONE && named && kf_set_name(g, v, r->name) != KF_OK) {
    snprintf(why, why_size, "%s", kf_graph_errmsg(g));
    return false;
  }
  return v != KF_NONE;
}

/* Why the bytes are refused, or NULL with *out the graph. */
static const char *read_graph(reader *r, kf_graph *g, char *why, size_t why_size) {
  char magic[4];
  uint32_t nn, ni, no;
  bool named;
  if (!get(r, magic, 4) || memcmp(magic, MAGIC, 4) || !get(r, &nn, 4) || !get(r, &ni, 4) ||
      !get(r, &no, 4) || nn > (uint32_t)INT32_MAX || ni > nn || no > nn || !get_name(r, &named))
    return "not a graph blob of this layout";
  if (named && kf_graph_set_name(g, r->name) != KF_OK) return "a bad graph name";
  for (uint32_t i = 0; i < nn; i++)
    if (!read_node(r, g, (int32_t)i, why, why_size)) return why;
  /* the inputs are the input nodes in order: check rather than set */
  if ((uint32_t)g->n_inputs != ni) return "the input count differs";
  for (uint32_t i = 0; i < ni; i++) {
    int32_t v;
    if (!get(r, &v, sizeof v) || v != g->inputs[i]) return "the input list differs";
  }
  for (uint32_t i = 0; i < no; i++) {
    int32_t v;
    if (!get(r, &v, sizeof v) || kf_set_output(g, v) != KF_OK) return "a bad output";
  }
  if (r->p != r->end) return "bytes after the graph";
  return kf_graph_status(g) == KF_OK ? NULL : kf_graph_errmsg(g);
}

kf_graph *ir_graph_from_blob(kf_ctx *ctx, const void *data, size_t size, char *why,
                             size_t why_size) {
  char buf[1024];
  if (!why || !why_size) why = buf, why_size = sizeof buf;
  snprintf(why, why_size, "no bytes");
  if (!data) return NULL;
  reader r = {(const char *)data, (const char *)data + size, {0}};
  kf_graph *g = NULL;
  if (kf_graph_create(ctx, &g) != KF_OK) {
    snprintf(why, why_size, "out of memory");
    return NULL;
  }
  const char *bad = read_graph(&r, g, why, why_size);
  if (!bad) return g;
  if (bad != why) snprintf(why, why_size, "%s", bad);
  kf_graph_destroy(g);
  return NULL;
}
