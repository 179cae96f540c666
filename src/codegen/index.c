/* index.c - the code of the index ops slice, concat, gather and iota: each
 * computes its operand's coordinates (into temporaries, so that nested index
 * ops keep coordinate strings short) and reads the operand there. */
#include "codegen/index.h"

#include <stdio.h>
#include <string.h>

#include "codegen/cg_internal.h"
#include "codegen/expr.h"
#include "codegen/index_ctx.h"

/* Coordinate d of c, stored as coordinate e of ac (cg_ctx_put: bound to a
 * local when too long). */
static void copy_coord(cg_gen *gen, const cg_ctx *c, int d, cg_ctx *ac, int e) {
  cg_buf x = {0};
  cg_ctx_coord(c, d, &x);
  if (x.oom) cg_gen_oom(gen);
  cg_ctx_put(gen, ac, e, x.s ? x.s : "0");
  cg_buf_free(&x);
}

/* Coordinate d of c as a printf argument of gen's code (freed with b). */
static const char *coord_text(cg_gen *gen, const cg_ctx *c, int d, cg_buf *b) {
  cg_ctx_coord(c, d, b);
  return cg_use(gen->code, b);
}

/* A new temporary holding an index expression; its name into out. */
static void idx_tmp(cg_gen *gen, const char *expr, char *out, size_t size) {
  int t = gen->tmp++;
  cg_line(gen, "const long long t%d = %s;", t, expr);
  snprintf(out, size, "t%d", t);
}

/* A context of (rank, shape) with every coordinate unknown: the caller
 * fills them. Its loads are scalar (a lane's coordinates are its own). */
static void ctx_blank(cg_ctx *ac, int rank, const int64_t *shape) {
  memset(ac, 0, sizeof *ac);
  ac->rank = rank;
  for (int d = 0; d < rank; d++) ac->shape[d] = shape[d];
  ac->vclass = VC_GATHER;
}

static void gen_slice(cg_gen *gen, const ir_node *n, const cg_ctx *c, char *name, size_t size) {
  const ir_node *x = &gen->g->nodes[n->args[0]];
  cg_ctx ac;
  ctx_blank(&ac, x->rank, x->shape);
  ac.overflow = c->overflow, ac.oom = c->oom;
  for (int d = 0; d < x->rank; d++)
    if (d != n->axis) copy_coord(gen, c, d, &ac, d);
  cg_buf b = {0}, e = {0};
  cg_printf(&e, "%lldLL + (long long)(%s) * %lldLL", (long long)n->start,
            coord_text(gen, c, n->axis, &b), (long long)n->step);
  idx_tmp(gen, cg_use(gen->code, &e), ac.coord[n->axis], sizeof ac.coord[n->axis]);
  cg_buf_free(&b);
  cg_buf_free(&e);
  cg_gen_value(gen, n->args[0], &ac, name, size);
  gen->last_cost += 1;
}

/* Both operands are read at coordinates clamped into their range (every
 * read is in bounds), and a select keeps the one the element lies in. */
static void gen_concat(cg_gen *gen, const ir_node *n, const cg_ctx *c, char *name, size_t size) {
  const ir_node *a = &gen->g->nodes[n->args[0]], *b = &gen->g->nodes[n->args[1]];
  int ax = n->axis;
  long long s = (long long)a->shape[ax];
  char at[32], va[160], vb[160];
  cg_buf e = {0};
  idx_tmp(gen, coord_text(gen, c, ax, &e), at, sizeof at);
  cg_buf_free(&e);
  cg_ctx ca, cb;
  ctx_blank(&ca, a->rank, a->shape);
  ctx_blank(&cb, b->rank, b->shape);
  ca.overflow = cb.overflow = c->overflow;
  ca.oom = cb.oom = c->oom;
  for (int d = 0; d < a->rank; d++) {
    if (d == ax) continue;
    copy_coord(gen, c, d, &ca, d);
    snprintf(cb.coord[d], sizeof cb.coord[d], "%s", ca.coord[d]);
  }
  snprintf(ca.coord[ax], sizeof ca.coord[ax], "(%s < %lldLL ? %s : %lldLL)", at, s, at, s - 1);
  snprintf(cb.coord[ax], sizeof cb.coord[ax], "(%s < %lldLL ? 0LL : %s - %lldLL)", at, s, at, s);
  cg_gen_value(gen, n->args[0], &ca, va, sizeof va);
  int cost = gen->last_cost;
  cg_gen_value(gen, n->args[1], &cb, vb, sizeof vb);
  cost += gen->last_cost + 1;
  int t = gen->tmp++;
  cg_line(gen, "const %s t%d = %s < %lldLL ? %s : %s;", cg_compute_type(n->dtype), t, at, s, va,
          vb);
  snprintf(name, size, "t%d", t);
  gen->last_cost = cost;
}

/* The index operand at the result's coordinates [axis, axis + rank(index)),
 * clamped into [0, n-1], then x at that coordinate along axis. */
static void gen_gather(cg_gen *gen, const ir_node *n, const cg_ctx *c, char *name, size_t size) {
  const ir_node *x = &gen->g->nodes[n->args[0]], *ix = &gen->g->nodes[n->args[1]];
  int ax = n->axis, ri = ix->rank;
  cg_ctx ci, cx;
  ctx_blank(&ci, ri, ix->shape);
  ci.overflow = c->overflow, ci.oom = c->oom;
  for (int d = 0; d < ri; d++) copy_coord(gen, c, ax + d, &ci, d);
  char vi[160], e[640];
  cg_gen_value(gen, n->args[1], &ci, vi, sizeof vi);
  int cost = gen->last_cost;
  long long hi = (long long)x->shape[ax] - 1;
  snprintf(e, sizeof e,
           "(long long)(%s) < 0 ? 0LL : (long long)(%s) > %lldLL ? %lldLL : (long long)(%s)", vi,
           vi, hi, hi, vi);
  ctx_blank(&cx, x->rank, x->shape);
  cx.overflow = c->overflow, cx.oom = c->oom;
  idx_tmp(gen, e, cx.coord[ax], sizeof cx.coord[ax]);
  for (int d = 0; d < x->rank; d++)
    if (d != ax) copy_coord(gen, c, d < ax ? d : d + ri - 1, &cx, d);
  cg_gen_value(gen, n->args[0], &cx, name, size);
  gen->last_cost += cost + 1;
}

/* The coordinate converted to the dtype, rounded once for f16/bf16. */
static void gen_iota(cg_gen *gen, const ir_node *n, const cg_ctx *c, char *name, size_t size) {
  cg_buf b = {0};
  const char *x = coord_text(gen, c, n->axis, &b);
  const char *ct = cg_compute_type(n->dtype);
  int t = gen->tmp++;
  if (n->dtype == KF_F16 || n->dtype == KF_BF16)
    cg_line(gen, "const float t%d = kf_round_%s((float)(long long)(%s));", t,
            n->dtype == KF_F16 ? "f16" : "bf16", x);
  else
    cg_line(gen, "const %s t%d = (%s)(long long)(%s);", ct, t, ct, x);
  cg_buf_free(&b);
  snprintf(name, size, "t%d", t);
  gen->last_cost = 1;
}

bool cg_gen_index(cg_gen *gen, const ir_node *n, const cg_ctx *c, char *name, size_t size) {
  switch (n->op) {
    case IR_OP_SLICE:
      gen_slice(gen, n, c, name, size);
      return true;
    case IR_OP_CONCAT:
      gen_concat(gen, n, c, name, size);
      return true;
    case IR_OP_GATHER:
      gen_gather(gen, n, c, name, size);
      return true;
    case IR_OP_IOTA:
      gen_iota(gen, n, c, name, size);
      return true;
    default:
      return false;
  }
}
