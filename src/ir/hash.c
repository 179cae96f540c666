/* hash.c - the structural hash of a graph: XXH3-128 over a canonical
 * serialization of its nodes, inputs and outputs (names left out). The
 * serialization is documented in docs/ir.md; change its version tag when
 * changing it, since hashes key caches. */
#include <string.h>
#define XXH_STATIC_LINKING_ONLY /* XXH3_state_t on the stack */
#include <xxhash.h>

#include "ir/ir.h"
#include "ir/ops.h"

/* Bytes of one node or list entry are gathered here, then fed to XXH3. */
typedef struct ser {
  uint8_t buf[512];
  size_t n;
} ser;

static void put_u8(ser *s, uint8_t v) {
  s->buf[s->n++] = v;
}

/* Little-endian whatever the host, so the hash is the same everywhere. */
static void put_u64(ser *s, uint64_t v) {
  for (int i = 0; i < 8; i++) s->buf[s->n++] = (uint8_t)(v >> (8 * i));
}

static void put_i32(ser *s, int32_t v) {
  uint32_t u = (uint32_t)v;
  for (int i = 0; i < 4; i++) s->buf[s->n++] = (uint8_t)(u >> (8 * i));
}

static void put_f64(ser *s, double v) {
  uint64_t u;
  memcpy(&u, &v, sizeof u);
  put_u64(s, u);
}

/* The op by name, so reordering ops.def keeps cached hashes valid. */
static void put_op(ser *s, ir_op op) {
  const char *name = (unsigned)op < IR_OP_COUNT && ir_ops[op].name ? ir_ops[op].name : "?";
  size_t len = strlen(name);
  if (len > 64) len = 64;
  put_u8(s, (uint8_t)len);
  memcpy(s->buf + s->n, name, len);
  s->n += len;
}

static void put_attrs(ser *s, const ir_node *n) {
  if (n->op == IR_OP_CONST) {
    put_f64(s, n->value);
  } else if (n->op == IR_OP_CLAMP) {
    put_f64(s, n->lo);
    put_f64(s, n->hi);
  } else if (n->op == IR_OP_TRANSPOSE) {
    for (int i = 0; i < n->rank && i < KF_MAX_RANK; i++) put_u8(s, (uint8_t)n->perm[i]);
  } else if (n->op == IR_OP_SLICE || n->op == IR_OP_CONCAT || n->op == IR_OP_GATHER ||
             n->op == IR_OP_IOTA) {
    put_u8(s, (uint8_t)n->axis);
    if (n->op == IR_OP_SLICE) {
      put_u64(s, (uint64_t)n->start);
      put_u64(s, (uint64_t)n->step);
    }
  } else if ((unsigned)n->op < IR_OP_COUNT && ir_ops[n->op].kind == KIND_REDUCE) {
    put_u8(s, n->axes);
    put_u8(s, n->keepdim ? 1 : 0);
  }
}

static void put_node(ser *s, const ir_node *n) {
  put_op(s, n->op);
  put_u8(s, (uint8_t)n->dtype);
  int rank = n->rank < 0 ? 0 : n->rank > KF_MAX_RANK ? KF_MAX_RANK : n->rank;
  put_u8(s, (uint8_t)rank);
  for (int i = 0; i < rank; i++) put_u64(s, (uint64_t)n->shape[i]);
  int nargs = n->nargs < 0 ? 0 : n->nargs > 3 ? 3 : n->nargs;
  put_u8(s, (uint8_t)nargs);
  for (int i = 0; i < nargs; i++) put_i32(s, n->args[i]);
  put_attrs(s, n);
}

static void put_list(XXH3_state_t *st, char tag, const int32_t *ids, int32_t count) {
  ser s = {.n = 0};
  put_u8(&s, (uint8_t)tag);
  put_i32(&s, count);
  XXH3_128bits_update(st, s.buf, s.n);
  for (int32_t i = 0; i < count; i++) {
    s.n = 0;
    put_i32(&s, ids[i]);
    XXH3_128bits_update(st, s.buf, s.n);
  }
}

kf_hash128 kf_graph_hash(const kf_graph *g) {
  kf_hash128 h = {0, 0};
  if (!g) return h;
  XXH3_state_t st;
  XXH3_128bits_reset(&st);
  static const char tag[] = "kfuse-ir-hash-1";
  XXH3_128bits_update(&st, tag, sizeof tag - 1);
  ser s = {.n = 0};
  put_i32(&s, g->n_nodes);
  XXH3_128bits_update(&st, s.buf, s.n);
  for (int32_t i = 0; i < g->n_nodes; i++) {
    s.n = 0;
    put_node(&s, &g->nodes[i]);
    XXH3_128bits_update(&st, s.buf, s.n);
  }
  put_list(&st, 'I', g->inputs, g->n_inputs);
  put_list(&st, 'O', g->outputs, g->n_outputs);
  XXH128_hash_t r = XXH3_128bits_digest(&st);
  h.lo = r.low64;
  h.hi = r.high64;
  return h;
}
