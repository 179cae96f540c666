/* horizontal.c - orders the kernels (by depth in the kernel graph, a
 * topological order) and packs independent kernels of one depth into
 * shared launches when they are too small to fill the GPU or of different
 * kinds, within the part, parameter-byte and shared-memory limits. */
#include "fuser/horizontal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "fuser/decide.h"
#include "fuser/legal.h"
#include "fuser/text.h"
#include "fuser/tile.h"
#include "ir/shape.h"

typedef struct korder {
  int32_t depth, first, id;
} korder;

static int cmp_order(const void *a, const void *b) {
  const korder *x = a, *y = b;
  if (x->depth != y->depth) return x->depth < y->depth ? -1 : 1;
  if (x->first != y->first) return x->first < y->first ? -1 : 1;
  return (x->id > y->id) - (x->id < y->id);
}

/* Longest path from the graph's inputs, in kernels (Kahn's algorithm over
 * the kernel graph); KF_ERR_INTERNAL if the kernels form a cycle,
 * KF_ERR_OUT_OF_MEMORY when its work arrays cannot be had. */
static kf_status depths(fuse_plan *plan, int32_t *depth) {
  int32_t nk = plan->n_kernels;
  const int32_t *kof = plan->kernel_of;
  const kf_graph *g = plan->graph;
  int32_t *indeg = core_calloc((size_t)nk + 1, sizeof *indeg);
  int32_t *start = core_calloc((size_t)nk + 2, sizeof *start);
  int32_t *queue = core_malloc(((size_t)nk + 1) * sizeof *queue);
  int32_t total = 0;
  for (int32_t k = 0; k < nk; k++) total += plan->kernels[k].n_inputs;
  int32_t *succ = core_malloc(((size_t)total + 1) * sizeof *succ);
  bool ok = indeg && start && queue && succ;
  for (int32_t k = 0; ok && k < nk; k++)
    for (int32_t i = 0; i < plan->kernels[k].n_inputs; i++) {
      int32_t u = plan->kernels[k].inputs[i];
      if (g->nodes[u].op != IR_OP_INPUT) start[kof[u] + 2]++, indeg[k]++;
    }
  for (int32_t k = 0; ok && k < nk; k++) start[k + 2] += start[k + 1];
  for (int32_t k = 0; ok && k < nk; k++)
    for (int32_t i = 0; i < plan->kernels[k].n_inputs; i++) {
      int32_t u = plan->kernels[k].inputs[i];
      if (g->nodes[u].op != IR_OP_INPUT) succ[start[kof[u] + 1]++] = k;
    }
  int32_t head = 0, tail = 0;
  for (int32_t k = 0; ok && k < nk; k++) {
    depth[k] = 0;
    if (indeg[k] == 0) queue[tail++] = k;
  }
  while (ok && head < tail) {
    int32_t k = queue[head++];
    for (int32_t e = start[k]; e < start[k + 1]; e++) {
      int32_t c = succ[e];
      if (depth[c] < depth[k] + 1) depth[c] = depth[k] + 1;
      if (--indeg[c] == 0) queue[tail++] = c;
    }
  }
  kf_status st = !ok ? KF_ERR_OUT_OF_MEMORY : tail == nk ? KF_OK : KF_ERR_INTERNAL;
  free(indeg);
  free(start);
  free(queue);
  free(succ);
  return st;
}

/* Puts the kernels in launch order and renumbers them. */
static kf_status reorder(fuse_plan *plan, const int32_t *depth) {
  int32_t nk = plan->n_kernels;
  korder *ord = core_malloc(((size_t)nk + 1) * sizeof *ord);
  fuse_kernel *ks = core_malloc(((size_t)nk + 1) * sizeof *ks);
  int32_t *newid = core_malloc(((size_t)nk + 1) * sizeof *newid);
  if (!ord || !ks || !newid) {
    free(ord);
    free(ks);
    free(newid);
    return KF_ERR_OUT_OF_MEMORY;
  }
  for (int32_t k = 0; k < nk; k++) ord[k] = (korder){depth[k], plan->kernels[k].nodes[0], k};
  qsort(ord, (size_t)nk, sizeof *ord, cmp_order);
  for (int32_t i = 0; i < nk; i++) {
    ks[i] = plan->kernels[ord[i].id];
    ks[i].id = i;
    ks[i].depth = ord[i].depth;
    snprintf(ks[i].name, sizeof ks[i].name, "k%d_%s", (int)i, fuse_kind_name(ks[i].kind));
    newid[ord[i].id] = i;
  }
  memcpy(plan->kernels, ks, (size_t)nk * sizeof *ks);
  for (int32_t v = 0; v < plan->graph->n_nodes; v++)
    if (plan->kernel_of[v] >= 0) plan->kernel_of[v] = newid[plan->kernel_of[v]];
  free(ord);
  free(ks);
  free(newid);
  return KF_OK;
}

typedef struct packer {
  fuse_plan *plan;
  fuse_marks ptrs; /* values with a pointer in the open launch */
  int32_t open;    /* the open launch, -1 */
  int32_t cap;
} packer;

static bool is_small(const fuse_plan *plan, const fuse_kernel *k) {
  return k->blocks < (int64_t)plan->options.sm_count * plan->options.blocks_per_sm;
}

/* Pointer bytes kernel k adds to the open launch. */
static int32_t new_param_bytes(packer *pk, const fuse_kernel *k) {
  int32_t n = 0;
  for (int32_t i = 0; i < k->n_inputs; i++) n += !fuse_marked(&pk->ptrs, k->inputs[i]);
  for (int32_t i = 0; i < k->n_outputs; i++) n += !fuse_marked(&pk->ptrs, k->outputs[i]);
  return 8 * n;
}

static bool add_part(packer *pk, int32_t launch, int32_t kid) {
  fuse_launch *l = &pk->plan->launches[launch];
  fuse_kernel *k = &pk->plan->kernels[kid];
  int32_t *p = core_realloc(l->kernels, ((size_t)l->n_kernels + 1) * sizeof *p);
  if (!p) return false;
  l->kernels = p;
  l->param_bytes += new_param_bytes(pk, k);
  for (int32_t i = 0; i < k->n_inputs; i++) fuse_mark(&pk->ptrs, k->inputs[i], 0);
  for (int32_t i = 0; i < k->n_outputs; i++) fuse_mark(&pk->ptrs, k->outputs[i], 0);
  l->kernels[l->n_kernels++] = kid;
  l->horizontal = l->n_kernels > 1;
  k->launch = launch;
  return true;
}

static int32_t open_launch(packer *pk, int32_t kid) {
  fuse_plan *plan = pk->plan;
  int32_t id = plan->n_launches++;
  memset(&plan->launches[id], 0, sizeof plan->launches[id]);
  fuse_marks_clear(&pk->ptrs);
  pk->open = id;
  return add_part(pk, id, kid) ? id : -1;
}

/* Most static shared memory that a block may declare (48 KB), less 1 KB
 * for the entry's own variables and the alignment between the parts'. */
#define SMEM_LIMIT (49152 - 1024)

/* The slice scratch of a strided reduction (src/codegen/reduce_plan.c cg_reduce_cols,
 * mirrored): starting from w lanes, halved until they divide inner, TX
 * threads along inner (the fewest that cover it, at most 32), TY = 256 / TX
 * thread rows, TY x W x (TX + 1) values of rb bytes, W halved again while
 * twice that passes 32 KB. */
static int64_t cols_scratch(int64_t inner, int w, int64_t rb) {
  for (;;) {
    while (w > 1 && inner % w) w /= 2;
    int64_t tx = 32;
    while (tx > 1 && (tx / 2) * w >= inner) tx /= 2;
    int64_t bytes = rb * (256 / tx) * w * (tx + 1);
    if (w == 1 || 2 * bytes <= 32768) return bytes;
    w /= 2;
  }
}

/* An upper bound of the static shared memory of k's part (each part of a
 * launch declares its own, so a launch needs their sum), from the
 * declarations of templates/ and src/codegen/reduce.c, row.c: a strided
 * reduction's slices (cols_scratch, the largest over every starting lane
 * count), a contiguous reduction's 32 values of each type, a row's 64
 * values of each type and one-pass pair states, a matmul's two 16 x 17
 * tiles. */
static int64_t smem_bound(const fuse_plan *plan, const fuse_kernel *k) {
  int64_t rb = 0, most = 0;
  for (int32_t i = 0; i < k->n_nodes; i++) {
    const ir_node *n = &plan->graph->nodes[k->nodes[i]];
    if (ir_is_reduction(plan->graph, n)) rb += n->dtype == KF_F64 || n->dtype == KF_I64 ? 8 : 4;
  }
  switch (k->kind) {
    case FK_REDUCE:
      if (k->inner == 1) return 32 * 24 + 8;
      for (int w = 1; w <= 8; w *= 2) {
        int64_t b = cols_scratch(k->inner, w, rb);
        if (b > most) most = b;
      }
      return most + 8;
    case FK_ROW:
      return 64 * 24 + 64 * 16 * 4 + rb * 8 + 64;
    case FK_MATMUL:
      return 2 * 16 * 17 * 8;
    case FK_POINTWISE:
      return fuse_tile_smem(plan->graph, k);
    default:
      return 0;
  }
}

/* May kernel kid join the open launch? Logs the decision either way. */
static bool may_join(packer *pk, int32_t kid) {
  fuse_plan *plan = pk->plan;
  fuse_launch *l = &plan->launches[pk->open];
  fuse_kernel *k = &plan->kernels[kid];
  const fuse_options *o = &plan->options;
  int64_t fill = (int64_t)o->sm_count * o->blocks_per_sm;
  if (k->library || plan->kernels[l->kernels[0]].library) {
    fuse_decide(plan, false, "library-call",
                "%s into launch %d: a library call is a launch of its own", k->name, (int)pk->open);
    return false;
  }
  if (k->paired || plan->kernels[l->kernels[0]].paired) {
    fuse_decide(plan, false, "gemm-pair",
                "%s into launch %d: a paired product is a launch of its own (the sm_90 "
                "template runs alone)",
                k->name, (int)pk->open);
    return false;
  }
  if (k->kind == FK_ATTENTION || plan->kernels[l->kernels[0]].kind == FK_ATTENTION) {
    fuse_decide(plan, false, "attention",
                "%s into launch %d: an attention kernel is a launch of its own", k->name,
                (int)pk->open);
    return false;
  }
  if (l->n_kernels >= o->max_parts) {
    fuse_decide(plan, false, "max-parts", "%s into launch %d: it has %d parts (max_parts %d)",
                k->name, (int)pk->open, (int)l->n_kernels, o->max_parts);
    return false;
  }
  int32_t bytes = l->param_bytes + new_param_bytes(pk, k);
  if (bytes > o->max_param_bytes) {
    fuse_decide(plan, false, "param-bytes", "%s into launch %d: %d parameter bytes > %d", k->name,
                (int)pk->open, (int)bytes, o->max_param_bytes);
    return false;
  }
  int64_t smem = smem_bound(plan, k);
  for (int32_t i = 0; i < l->n_kernels; i++)
    smem += smem_bound(plan, &plan->kernels[l->kernels[i]]);
  if (smem > SMEM_LIMIT) {
    fuse_decide(plan, false, "shared-memory",
                "%s into launch %d: its parts would declare up to %lld bytes of shared memory "
                "(> %d)",
                k->name, (int)pk->open, (long long)smem, SMEM_LIMIT);
    return false;
  }
  bool small = is_small(plan, k);
  for (int32_t i = 0; i < l->n_kernels && !small; i++) {
    const fuse_kernel *o2 = &plan->kernels[l->kernels[i]];
    if (o2->kind == k->kind && !is_small(plan, o2)) {
      fuse_decide(plan, false, "both-fill-gpu",
                  "%s into launch %d with %s: both %s kernels fill the GPU (%lld and %lld blocks "
                  ">= %lld)",
                  k->name, (int)pk->open, o2->name, fuse_kind_name(k->kind), (long long)k->blocks,
                  (long long)o2->blocks, (long long)fill);
      return false;
    }
  }
  const fuse_kernel *first = &plan->kernels[l->kernels[0]];
  if (small)
    fuse_decide(plan, true, "horizontal",
                "%s joins launch %d (with %s, %d parts): independent, too small to fill the GPU "
                "(%lld < %lld blocks)",
                k->name, (int)pk->open, first->name, (int)l->n_kernels + 1, (long long)k->blocks,
                (long long)fill);
  else
    fuse_decide(plan, true, "horizontal",
                "%s (%s) joins launch %d (with %s): independent kernels of different kinds",
                k->name, fuse_kind_name(k->kind), (int)pk->open, first->name);
  return true;
}

static kf_status pack(fuse_plan *plan) {
  packer pk = {.plan = plan, .open = -1};
  plan->launches =
      core_calloc(plan->n_kernels > 0 ? (size_t)plan->n_kernels : 1, sizeof *plan->launches);
  if (!plan->launches || !fuse_marks_init(&pk.ptrs, plan->graph->n_nodes)) {
    fuse_marks_free(&pk.ptrs);
    return KF_ERR_OUT_OF_MEMORY;
  }
  if (!plan->options.horizontal && plan->n_kernels > 1)
    fuse_decide(plan, false, "horizontal-off",
                "horizontal packing disabled (KFUSE_NO_HORIZONTAL=1 or --no-horizontal)");
  kf_status st = KF_OK;
  for (int32_t kid = 0; kid < plan->n_kernels && st == KF_OK; kid++) {
    const fuse_kernel *k = &plan->kernels[kid];
    bool join = plan->options.horizontal && pk.open >= 0 &&
                plan->kernels[plan->launches[pk.open].kernels[0]].depth == k->depth &&
                may_join(&pk, kid);
    if (join ? !add_part(&pk, pk.open, kid) : open_launch(&pk, kid) < 0) st = KF_ERR_OUT_OF_MEMORY;
  }
  fuse_marks_free(&pk.ptrs);
  return st;
}

kf_status fuse_launches(fuse_plan *plan, char *err, size_t errsize) {
  int32_t *depth = core_malloc(((size_t)plan->n_kernels + 1) * sizeof *depth);
  kf_status st = depth ? KF_OK : KF_ERR_OUT_OF_MEMORY;
  if (st == KF_OK) st = depths(plan, depth);
  if (st == KF_ERR_INTERNAL)
    snprintf(err, errsize, "internal error: the kernels depend on each other in a cycle");
  if (st == KF_OK) st = reorder(plan, depth);
  if (st == KF_OK) st = pack(plan);
  if (st == KF_ERR_OUT_OF_MEMORY) snprintf(err, errsize, "out of memory");
  free(depth);
  return st;
}
