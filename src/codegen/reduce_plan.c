/* reduce_plan.c - the shape of a reduce kernel: its iteration space outer x
 * red x inner after merging axes, and the blocks, threads and split of a
 * contiguous or a strided reduction (what cg_plan_reduce decides and the
 * emitters of reduce.c follow). */
#include "codegen/reduce_plan.h"

#include <stdio.h>
#include <string.h>

#include "codegen/buf.h"
#include "codegen/cg_internal.h"
#include "codegen/expr.h"
#include "codegen/part.h"
#include "ir/shape.h"

/* A reduction's iteration space outer x red x inner. Reduced dims that
 * merge keep the contiguous-group form; others get a per-dim assignment
 * (cg_ctx_assign) with the same outer, red and inner. */
void cg_reduce_merge(const ir_node *n, const ir_node *x, red_shape *rs) {
  int a = -1, b = -1;
  for (int d = 0; d < x->rank; d++)
    if (((n->axes >> d) & 1u) && x->shape[d] != 1) {
      if (a < 0) a = d;
      b = d + 1;
    }
  if (a < 0) a = b = x->rank; /* reducing only size-1 axes */
  rs->x = x;
  rs->strided = false;
  for (int d = a; d < b; d++)
    if (!((n->axes >> d) & 1u) && x->shape[d] != 1) rs->strided = true;
  rs->a = a;
  rs->b = b;
  rs->outer = rs->red = rs->inner = 1;
  for (int d = 0; d < x->rank; d++) {
    bool r = ((n->axes >> d) & 1u) && x->shape[d] != 1;
    rs->grp[d] = r ? 1 : d < b ? 0 : 2;
    int64_t *e = rs->grp[d] == 0 ? &rs->outer : rs->grp[d] == 1 ? &rs->red : &rs->inner;
    *e *= x->shape[d];
  }
  rs->run = 1;
  for (int d = x->rank - 1; d >= 0 && (rs->grp[d] == 1 || x->shape[d] == 1); d--)
    rs->run *= x->shape[d];
}

/* The kernel's space, from its reductions (legal.c gives them one). */
kf_status cg_reduce_shape(cg_emit_args *a, red_shape *rs) {
  const fuse_kernel *k = a->k;
  bool have = false;
  for (int i = 0; i < k->n_nodes; i++) {
    const ir_node *n = &a->g->nodes[k->nodes[i]];
    if (!ir_is_reduction(a->g, n)) continue;
    red_shape r;
    cg_reduce_merge(n, &a->g->nodes[n->args[0]], &r);
    if (have && (r.outer != rs->outer || r.red != rs->red || r.inner != rs->inner)) {
      snprintf(a->err, a->errsize, "%s: reductions of different extents in one kernel", k->name);
      return KF_ERR_UNSUPPORTED;
    }
    if (!have) *rs = r;
    have = true;
  }
  if (!have) {
    snprintf(a->err, a->errsize, "%s: a reduce kernel without a reduction", k->name);
    return KF_ERR_UNSUPPORTED;
  }
  return KF_OK;
}

void cg_reduce_rows(const cg_emit_args *a, const red_shape *rs, rows_plan *rp) {
  rp->v = 8;
  while (rp->v > 1 && rs->run % rp->v) rp->v /= 2;
  rp->threads = 32;
  while (rp->threads < 256 && (int64_t)rp->threads * rp->v < rs->red) rp->threads *= 2;
  int64_t target = (int64_t)a->t->sm_count * 4096 / rp->threads, split = 1;
  int64_t step = (int64_t)rp->threads * rp->v;
  if (rs->outer < target)
    split = cg_min64(cg_min64(cg_ceil_div(target, rs->outer), rs->red / (step * 4)), 2048);
  if (split < 1) split = 1;
  rp->chunk = cg_ceil_div(cg_ceil_div(rs->red, split), rp->v) * rp->v;
  rp->split = cg_ceil_div(rs->red, rp->chunk);
}

static size_t red_bytes(const cg_emit_args *a) {
  size_t b = 0;
  for (int i = 0; i < a->k->n_nodes; i++) {
    const ir_node *n = &a->g->nodes[a->k->nodes[i]];
    if (ir_is_reduction(a->g, n)) b += strcmp(cg_compute_type(n->dtype), "float") ? 8 : 4;
  }
  return b;
}

/* An inner extent that is not a multiple of the tile (99 scalar lanes in
 * tiles of 32: the fourth tile has 3 live threads of 32, 77% of the block
 * slots useful) spreads over tiles of TX not a power of two (2 tiles of 50
 * lanes with 5 thread rows: 250 threads, 97%), the TX x TY threads past
 * TX * TY idle: the count of tiles that keeps the most thread rows per
 * tile, with TX at least a warp (or all of the lanes), and only where the
 * slice scratch TY x (TX + 1) stays within the power-of-two one (the bound
 * of src/fuser/horizontal.c). Inner extents that tile exactly keep their
 * blocks. */
static void spread_tiles(const red_shape *rs, cols_plan *cp) {
  int64_t cols = rs->inner / cp->w, nt = cg_ceil_div(cols, cp->tx);
  if (cols % cp->tx == 0 || cols > 4096) return;
  int64_t best_tx = cp->tx, best_ty = cp->ty, best_nt = nt, scratch = cp->ty * (cp->tx + 1);
  for (int64_t n = cg_ceil_div(cols, 256); n <= nt; n++) {
    int64_t tx = cg_ceil_div(cols, n), ty = 256 / tx;
    if ((tx < 32 && tx < cols) || ty * (tx + 1) > scratch) continue;
    if (ty * best_nt > best_ty * n) best_tx = tx, best_ty = ty, best_nt = n;
  }
  cp->tx = (int)best_tx;
  cp->ty = (int)best_ty;
}

void cg_reduce_cols(const cg_emit_args *a, const red_shape *rs, cols_plan *cp) {
  size_t minsz = 4;
  for (int i = 0; i < a->k->n_inputs; i++) {
    int32_t v = a->k->inputs[i];
    if (kf_value_numel(a->g, v) != rs->outer * rs->red * rs->inner) continue;
    size_t sz = kf_dtype_size(a->g->nodes[v].dtype);
    if (sz < minsz) minsz = sz;
  }
  int w = (int)(16 / minsz);
  if (w > 8) w = 8;
  for (;;) {
    while (w > 1 && rs->inner % w) w /= 2;
    cp->tx = 32;
    while (cp->tx > 1 && (int64_t)(cp->tx / 2) * w >= rs->inner) cp->tx /= 2;
    cp->ty = 256 / cp->tx;
    /* shared scratch of both instantiations (W and 1) under 32 KB */
    if (w == 1 || 2 * red_bytes(a) * (size_t)(cp->ty * w * (cp->tx + 1)) <= 32768) break;
    w /= 2;
  }
  cp->w = w;
  spread_tiles(rs, cp);
  cp->nt = cg_ceil_div(rs->inner, (int64_t)cp->tx * w);
  int64_t tiles = rs->outer * cp->nt, target = (int64_t)a->t->sm_count * 8;
  int64_t split = tiles >= target ? 1 : cg_ceil_div(target, tiles);
  /* at least 8 iterations per thread, and at most 128 partials per thread
   * in the last block's fold (4 rounds of 32 loads in flight) */
  split = cg_min64(
      split, cg_min64(cg_min64(1024, (int64_t)cp->ty * 128), rs->red / ((int64_t)cp->ty * 8)));
  if (split < 1) split = 1;
  cp->chunk = cg_ceil_div(rs->red, split);
  cp->split = cg_ceil_div(rs->red, cp->chunk);
}

kf_status cg_plan_reduce(cg_emit_args *a) {
  red_shape rs;
  kf_status st = cg_reduce_shape(a, &rs);
  if (st != KF_OK) return st;
  cg_part *p = a->part;
  int64_t total = rs.outer * rs.red * rs.inner;
  if (rs.inner == 1) {
    rows_plan rp;
    cg_reduce_rows(a, &rs, &rp);
    p->threads = (uint32_t)rp.threads;
    cg_part_grid(p, rs.outer * rp.split);
    snprintf(p->decisions, sizeof p->decisions,
             "reduce: %lld x %lld contiguous, a block of %d per output, %d elements per step",
             (long long)rs.outer, (long long)rs.red, rp.threads, rp.v);
    size_t l = strlen(p->decisions);
    if (rp.split > 1)
      snprintf(p->decisions + l, sizeof p->decisions - l,
               ", split over %lld blocks of %lld (partials combined by the last block, "
               "deterministic)",
               (long long)rp.split, (long long)rp.chunk);
    p->lanes = rp.v;
  } else {
    cols_plan cp;
    cg_reduce_cols(a, &rs, &cp);
    p->threads = 256;
    cg_part_grid(p, rs.outer * cp.nt * cp.split);
    p->lanes = cp.w;
    snprintf(p->decisions, sizeof p->decisions,
             "reduce: %lld x %lld x %lld strided, %d x %d outputs x %d slices of the reduced "
             "axis per block, %d lanes per access",
             (long long)rs.outer, (long long)rs.red, (long long)rs.inner, cp.tx, cp.w, cp.ty, cp.w);
    size_t l = strlen(p->decisions);
    if (cp.split > 1)
      snprintf(p->decisions + l, sizeof p->decisions - l,
               ", split over %lld blocks per tile (partials combined by the last block, "
               "deterministic)",
               (long long)cp.split);
    /* partials are indexed over outer x split x inner */
    if (rs.outer * cp.split * rs.inner > total) total = rs.outer * cp.split * rs.inner;
  }
  p->max_offset = total - 1;
  cg_index_type(total + (int64_t)p->threads * 8 + 256, &p->index64);
  size_t len = strlen(p->decisions);
  snprintf(p->decisions + len, sizeof p->decisions - len, ", %s index%s",
           p->index64 ? "64-bit" : "32-bit", p->lanes > 1 ? "" : ", scalar loads");
  return KF_OK;
}
