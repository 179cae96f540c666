/* flash_gen.c - what the attention kernels share in their generated
 * source: where each operand's rows lie (a struct with row(bt, r)) and the
 * score modifier (the graph's chain between the products, per element). */
#include "codegen/flash_gen.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "codegen/expr.h"
#include "codegen/index_ctx.h"
#include "codegen/matmul.h"
#include "codegen/part.h"

/* Follows the layout ops of the kernel from value v at context c down to
 * the stored tensor (the recognizer admitted only ops that keep the last
 * axis whole); its value index, c then its context. */
static int32_t stored(cg_gen *gen, int32_t v, cg_ctx *c) {
  const kf_graph *g = gen->g;
  while (cg_in_kernel(gen->k, v)) {
    const ir_node *n = &g->nodes[v], *x = &g->nodes[n->args[0]];
    cg_ctx next;
    if (n->op == IR_OP_TRANSPOSE) {
      cg_ctx_transpose(gen, c, x->rank, x->shape, n->perm, &next);
    } else if (n->op == IR_OP_BROADCAST_TO) {
      cg_ctx_broadcast(gen, c, x->rank, x->shape, &next);
    } else if (n->op == IR_OP_RESHAPE) {
      cg_buf lin = {0};
      cg_ctx_lin_s(c, &lin);
      cg_ctx_linear(&next, x->rank, x->shape, "", VC_GATHER);
      cg_ctx_put(gen, &next, -1, lin.s ? lin.s : "0");
      if (lin.oom) cg_gen_oom(gen);
      cg_buf_free(&lin);
    } else {
      cg_gen_fail(gen, "operand node %d (%s) is not a layout op", (int)v, ir_ops[n->op].name);
      return v;
    }
    *c = next;
    v = n->args[0];
  }
  return v;
}

/* "struct <fn>_<tag> { row(bt, r): element offset of row r }" for operand
 * v of product mm (k: read through its transpose, rows are columns). */
int32_t cg_flash_row_struct(cg_gen *gen, const char *fn, const char *tag, const ir_node *mm,
                            int32_t v, bool cols, cg_buf *out) {
  cg_buf body = {0};
  gen->code = &body;
  gen->indent = 4;
  cg_gen_reset_memo(gen);
  cg_ctx c;
  cg_matmul_operand_ctx(mm, &gen->g->nodes[v], cols ? "0" : "r", cols ? "r" : "0", &c);
  int32_t s = stored(gen, v, &c);
  cg_buf lin = {0};
  cg_ctx_lin_s(&c, &lin);
  cg_printf(out,
            "struct %s_%s {\n  static KF_INLINE long long row(long long bt, long long r) {\n"
            "    (void)bt;\n%s    return %s;\n  }\n};\n",
            fn, tag, body.s ? body.s : "", lin.s ? lin.s : "0");
  if (lin.oom || body.oom) cg_gen_oom(gen);
  cg_buf_free(&lin);
  cg_buf_free(&body);
  return s;
}

/* "<fn>_mod<sfx>(acc, bt, qi, ki, params)": the chain's value x at one
 * score; cond >= 0: that node bound to the constant cond_text. */
static void modifier(cg_gen *gen, const cg_emit_args *a, const char *fn, const char *sfx,
                     int32_t cond, const char *cond_text, cg_buf *out) {
  const fuse_attn *at = &a->k->attn;
  const ir_node *x = &a->g->nodes[at->x];
  cg_buf body = {0}, decls = {0};
  gen->code = &body;
  gen->indent = 2;
  cg_gen_reset_memo(gen);
  /* the f32 accumulator; the binding rounds it to the product's dtype
   * before any use, as the graph rounds the product */
  cg_gen_bind(gen, at->mm1, NULL, "kf_acc");
  int binds = gen->n_binds;
  if (cond >= 0) cg_gen_bind(gen, cond, NULL, cond_text);
  gen->fast16 = a->t->knobs && a->t->knobs->attn_fast_tanh;
  cg_ctx c;
  int bounds[4] = {0, x->rank - 2, x->rank - 1, x->rank};
  const char *vars[3] = {"bt", "qi", "ki"};
  cg_ctx_groups(&c, x->rank, x->shape, 3, bounds, vars, VC_GATHER);
  char name[160];
  cg_gen_value(gen, at->x, &c, name, sizeof name);
  gen->fast16 = false;
  if (gen->n_binds > binds) gen->n_binds = binds; /* the cond binding is this function's */
  cg_param_decls(a->g, a->part, &decls);
  cg_printf(out,
            "KF_INLINE float %s_mod%s(float kf_acc, long long bt, long long qi, long long ki, "
            "%s) {\n  (void)bt, (void)qi, (void)ki;\n%s  return (float)%s;\n}\n",
            fn, sfx, decls.s ? decls.s : "", body.s ? body.s : "", name);
  if (body.oom || decls.oom) cg_gen_oom(gen);
  cg_buf_free(&body);
  cg_buf_free(&decls);
}

void cg_flash_modifier(cg_gen *gen, const cg_emit_args *a, const char *fn, cg_buf *out) {
  modifier(gen, a, fn, "", -1, NULL, out);
}

bool cg_flash_modifier_visible(cg_gen *gen, const cg_emit_args *a, const char *fn, cg_buf *out) {
  const fuse_attn *at = &a->k->attn;
  const kf_graph *g = a->g;
  if (!at->causal) return false;
  /* the chain ends in where(cond, scores, -inf) or where(cond, -inf,
   * scores), maybe cast (fuse_attn's causal structure) */
  int32_t w = at->x;
  while (g->nodes[w].op == IR_OP_CAST && w != at->mm1) w = g->nodes[w].args[0];
  const ir_node *wn = &g->nodes[w];
  if (wn->op != IR_OP_WHERE) return false;
  const ir_node *b = &g->nodes[wn->args[2]];
  bool inf_third = b->op == IR_OP_CONST && isinf(b->value) && b->value < 0;
  modifier(gen, a, fn, "v", wn->args[0], inf_third ? "true" : "false", out);
  return true;
}

void cg_flash_helpers(cg_gen *gen, const cg_emit_args *a, cg_buf *pre, int32_t stored[3]) {
  const fuse_attn *at = &a->k->attn;
  const char *fn = a->part->fn;
  const ir_node *m1 = &a->g->nodes[at->mm1], *m2 = &a->g->nodes[at->mm2];
  stored[0] = cg_flash_row_struct(gen, fn, "QR", m1, at->q, false, pre);
  stored[1] = cg_flash_row_struct(gen, fn, "KR", m1, at->kt, true, pre);
  stored[2] = cg_flash_row_struct(gen, fn, "VR", m2, at->v, false, pre);
  cg_flash_modifier(gen, a, fn, pre);
}

void cg_flash_names_of(const cg_part *p, const fuse_attn *at, const int32_t stored[3],
                       cg_flash_names *n) {
  snprintf(n->q, sizeof n->q, "p%d", (int)stored[0]);
  snprintf(n->k, sizeof n->k, "p%d", (int)stored[1]);
  snprintf(n->v, sizeof n->v, "p%d", (int)stored[2]);
  snprintf(n->o, sizeof n->o, "p%d", (int)at->out);
  snprintf(n->qr, sizeof n->qr, "%s_QR", p->fn);
  snprintf(n->kr, sizeof n->kr, "%s_KR", p->fn);
  snprintf(n->vr, sizeof n->vr, "%s_VR", p->fn);
}

kf_status cg_flash_part_check(cg_emit_args *a) {
  int cc = a->t->cc_major * 10 + a->t->cc_minor;
  if (cc < 80) {
    snprintf(a->err, a->errsize, "%s: the attention kernel needs sm_80 or later (target sm_%d)",
             a->k->name, cc);
    return KF_ERR_UNSUPPORTED;
  }
  if (!a->part->alone) {
    snprintf(a->err, a->errsize, "%s: an attention kernel shares its launch", a->k->name);
    return KF_ERR_INTERNAL;
  }
  return KF_OK;
}

void cg_flash_lse(const cg_emit_args *a, cg_buf *pre, const char *cond, const char *row,
                  const char *m, const char *l, char *call, size_t callsize) {
  const fuse_attn *at = &a->k->attn;
  call[0] = '\0';
  if (at->lse < 0) return;
  const char *fn = a->part->fn;
  int id = (int)at->lse;
  cg_printf(pre,
            "// the logsumexp of query row `row`: m + log(l), m the row's max score, l its sum\n"
            "// of exp(score - m); a max of +-inf (-inf: no visible key) gives %s\n"
            "KF_INLINE void %s_lse(long long row, float m, float l, %s *__restrict__ p%d) {\n"
            "  kf_st(p%d + row, fabsf(m) == KF_INF ? %s : m + logf(l));\n}\n",
            at->lse_guard ? "itself, as kf_logsumexp does" : "NaN, as the graph's m + log(s)", fn,
            cg_storage_type(at->lse_dtype), id, id,
            at->lse_guard ? "m" : "__int_as_float(0x7fffffff)");
  snprintf(call, callsize, "\n    if (%s) %s_lse(%s, %s, %s, p%d);", cond, fn, row, m, l, id);
}
