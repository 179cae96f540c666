/* tile.c - the rule that makes a pointwise kernel a tiled transpose
 * (shared-memory tiles for the transposes that move the innermost axis),
 * shared by the fuser's decision log and code generation. */
#include "fuser/tile.h"

#include <stdio.h>
#include <string.h>

#include "fuser/decide.h"
#include "fuser/text.h"
#include "ir/ops.h"

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

/* The trailing axes that transpose n keeps in place (perm[i] == i) and the
 * product of their extents; rank when it keeps every axis. */
static int kept_axes(const ir_node *n, int64_t *run) {
  int r = n->rank, k = 0;
  *run = 1;
  while (k < r && n->perm[r - 1 - k] == r - 1 - k) {
    *run *= n->shape[r - 1 - k];
    k++;
  }
  return k;
}

/* The shape of n's tiling when it can be tiled (-1 otherwise): the
 * iteration axis b that its operand's axis inner = rank - 1 - kept lands
 * on (output axis i is operand axis perm[i]), with *kept and *run of
 * kept_axes. A kept run must be 2 or 4 values (a power of two, so that a
 * tile row of T elements is a whole number of warps' words) of fewer than
 * FUSE_TILE_RUN_BYTES bytes; a longer run is read in whole words by index
 * arithmetic already. */
static int moved_axis(const ir_node *n, int *kept, int64_t *run) {
  int r = n->rank;
  *kept = kept_axes(n, run);
  if (*kept >= r - 1) return -1;
  if (*kept > 0 &&
      ((*run != 2 && *run != 4) || *run * (int64_t)kf_dtype_size(n->dtype) >= FUSE_TILE_RUN_BYTES))
    return -1;
  int inner = r - 1 - *kept;
  for (int i = 0; i < inner; i++)
    if (n->perm[i] == inner) return i;
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

/* Whether n is a transpose of the iteration shape that can be tiled with
 * k's extents: its tiled axes b (returned) and inner at least
 * FUSE_TILE_MIN_EXTENT; -1 otherwise. */
static int tile_axis(const ir_node *n, const fuse_kernel *k, int *kept, int64_t *run) {
  if (n->op != IR_OP_TRANSPOSE || !same_shape(n, k)) return -1;
  int b = moved_axis(n, kept, run);
  if (b < 0 || k->shape[b] < FUSE_TILE_MIN_EXTENT ||
      k->shape[k->rank - 1 - *kept] < FUSE_TILE_MIN_EXTENT)
    return -1;
  return b;
}

bool fuse_tile_find(const kf_graph *g, const fuse_kernel *k, fuse_tile *t) {
  memset(t, 0, sizeof *t);
  t->axis = -1;
  t->run = 1;
  if (k->kind != FK_POINTWISE || k->rank < 2 || k->n_nodes > TILE_MAX_NODES) return false;
  for (int i = 0; i < k->n_outputs; i++)
    if (!same_shape(&g->nodes[k->outputs[i]], k)) return false;
  bool any = false;
  int kept;
  int64_t run;
  for (int i = 0; i < k->n_nodes && !any; i++)
    any = tile_axis(&g->nodes[k->nodes[i]], k, &kept, &run) >= 0;
  if (!any) return false;
  uint8_t direct[TILE_MAX_NODES];
  mark_direct(g, k, direct);
  for (int i = 0; i < k->n_nodes && t->n < FUSE_TILE_MAX; i++) {
    const ir_node *n = &g->nodes[k->nodes[i]];
    if (!direct[i] || !word_type(n->dtype)) continue;
    int b = tile_axis(n, k, &kept, &run);
    if (b < 0 || (t->n > 0 && (b != t->axis || kept != t->kept))) continue;
    t->axis = b;
    t->kept = kept;
    t->run = run;
    t->nodes[t->n++] = k->nodes[i];
  }
  return t->n > 0;
}

/* Bytes of t's tiles of edge e: e rows of e elements plus one padding word,
 * 4-byte words. */
static int64_t tiles_bytes(const fuse_tile *t, int e) {
  return (int64_t)t->n * e * (e * t->run + 1) * 4;
}

int fuse_tile_edge_max(const fuse_tile *t) {
  return tiles_bytes(t, 64) <= 48 * 1024 ? 64 : 32;
}

int64_t fuse_tile_smem(const kf_graph *g, const fuse_kernel *k) {
  fuse_tile t;
  return fuse_tile_find(g, k, &t) ? tiles_bytes(&t, fuse_tile_edge_max(&t)) : 0;
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
    int inner = k->rank - 1 - t.kept;
    if (t.kept == 0)
      fuse_decide(plan, true, "transpose-tile",
                  "%s: %s move%s the innermost axis to axis %d: tiles of axes %d x %d through "
                  "shared memory",
                  k->name, names, t.n > 1 ? "" : "s", t.axis, t.axis, inner);
    else
      fuse_decide(plan, true, "transpose-tile",
                  "%s: %s keep%s a run of %lld values and move%s axis %d to axis %d: tiles of axes "
                  "%d x %d of %lld-value elements through shared memory",
                  k->name, names, t.n > 1 ? "" : "s", (long long)t.run, t.n > 1 ? "" : "s", inner,
                  t.axis, t.axis, inner, (long long)t.run);
  }
  return fuse_decisions_ok(plan);
}
