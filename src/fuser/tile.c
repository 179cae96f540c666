/* tile.c - the rule that makes a pointwise kernel a tiled transpose
 * (shared-memory tiles for the transposes that move the innermost axis),
 * shared by the fuser's decision log and code generation. */
#include "fuser/tile.h"

#include <stdio.h>
#include <string.h>

#include "fuser/decide.h"

/* Kernels with more nodes are never tiled: the read-only-at-the-element
 * check keeps one flag per node on the stack. */
#define TILE_MAX_NODES 4096

static bool same_shape(const ir_node *n, const fuse_kernel *k) {
  if (n->rank != k->rank) return false;
  for (int d = 0; d < k->rank; d++)
    if (n->shape[d] != k->shape[d]) return false;
  return true;
}

static bool elementwise(const ir_node *n) {
  ir_kind kind = ir_ops[n->op].kind;
  return kind == KIND_UNARY || kind == KIND_BINARY || kind == KIND_POINTWISE;
}

/* f32, f16, bf16 and i32 compute in 4-byte registers (float or int): one
 * padded 4-byte word per tile element. */
static bool word_type(kf_dtype dt) {
  return dt == KF_F32 || dt == KF_F16 || dt == KF_BF16 || dt == KF_I32;
}

/* The iteration axis that a transpose of the iteration shape puts its
 * operand's innermost axis on (output axis i is operand axis perm[i]), or
 * -1 when that is the innermost axis itself. */
static int moved_axis(const ir_node *n) {
  int r = n->rank;
  for (int i = 0; i < r - 1; i++)
    if (n->perm[i] == r - 1) return i;
  return -1;
}

/* The position of v in k's nodes, -1 if absent: a binary search when the
 * nodes ascend (the fuser lists them so), else a scan. */
static int position(const fuse_kernel *k, bool ascending, int32_t v) {
  if (!ascending) {
    for (int i = 0; i < k->n_nodes; i++)
      if (k->nodes[i] == v) return i;
    return -1;
  }
  int lo = 0, hi = k->n_nodes - 1;
  while (lo <= hi) {
    int mid = lo + (hi - lo) / 2;
    if (k->nodes[mid] == v) return mid;
    if (k->nodes[mid] < v)
      lo = mid + 1;
    else
      hi = mid - 1;
  }
  return -1;
}

/* direct[i]: node i of k is read only at the iteration's own element: each
 * consumer in the kernel is elementwise, of the iteration shape and itself
 * direct (outputs are stored at their element). Consumers come later in
 * the kernel's topological order, so one backward pass decides. */
static void mark_direct(const kf_graph *g, const fuse_kernel *k, uint8_t *direct) {
  memset(direct, 1, (size_t)k->n_nodes);
  bool ascending = true;
  for (int i = 1; i < k->n_nodes && ascending; i++) ascending = k->nodes[i - 1] < k->nodes[i];
  for (int i = k->n_nodes - 1; i >= 0; i--) {
    const ir_node *c = &g->nodes[k->nodes[i]];
    bool ok = direct[i] && elementwise(c) && same_shape(c, k);
    if (ok) continue;
    for (int a = 0; a < c->nargs; a++) {
      int p = position(k, ascending, c->args[a]);
      if (p >= 0) direct[p] = 0;
    }
  }
}

bool fuse_tile_find(const kf_graph *g, const fuse_kernel *k, fuse_tile *t) {
  memset(t, 0, sizeof *t);
  t->axis = -1;
  if (k->kind != FK_POINTWISE || k->rank < 2 || k->n_nodes > TILE_MAX_NODES) return false;
  if (k->shape[k->rank - 1] < FUSE_TILE_MIN_EXTENT) return false;
  for (int i = 0; i < k->n_outputs; i++)
    if (!same_shape(&g->nodes[k->outputs[i]], k)) return false;
  bool any = false;
  for (int i = 0; i < k->n_nodes && !any; i++) {
    const ir_node *n = &g->nodes[k->nodes[i]];
    any = n->op == IR_OP_TRANSPOSE && moved_axis(n) >= 0;
  }
  if (!any) return false;
  uint8_t direct[TILE_MAX_NODES];
  mark_direct(g, k, direct);
  for (int i = 0; i < k->n_nodes && t->n < FUSE_TILE_MAX; i++) {
    const ir_node *n = &g->nodes[k->nodes[i]];
    if (n->op != IR_OP_TRANSPOSE || !direct[i] || !same_shape(n, k) || !word_type(n->dtype))
      continue;
    int b = moved_axis(n);
    if (b < 0 || k->shape[b] < FUSE_TILE_MIN_EXTENT || (t->axis >= 0 && b != t->axis)) continue;
    t->axis = b;
    t->nodes[t->n++] = k->nodes[i];
  }
  return t->n > 0;
}

int64_t fuse_tile_smem(const kf_graph *g, const fuse_kernel *k) {
  fuse_tile t;
  return fuse_tile_find(g, k, &t) ? (int64_t)t.n * 64 * 65 * 4 : 0;
}

bool fuse_tiles_log(fuse_plan *plan) {
  const kf_graph *g = plan->graph;
  for (int i = 0; i < plan->n_kernels; i++) {
    const fuse_kernel *k = &plan->kernels[i];
    fuse_tile t;
    if (!fuse_tile_find(g, k, &t)) continue;
    char names[96] = "", b[64];
    size_t n = 0;
    for (int j = 0; j < t.n && n < sizeof names; j++)
      n += (size_t)snprintf(names + n, sizeof names - n, "%s%s", j ? ", " : "",
                            fuse_value_label(g, t.nodes[j], b, sizeof b));
    fuse_decide(plan, true, "transpose-tile",
                "%s: %s move%s the innermost axis to axis %d: tiles of axes %d x %d through "
                "shared memory",
                k->name, names, t.n > 1 ? "" : "s", t.axis, t.axis, k->rank - 1);
  }
  return fuse_decisions_ok(plan);
}
