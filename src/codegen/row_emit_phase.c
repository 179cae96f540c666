/* row_emit_phase.c - a row kernel's reduction phases: one reduction per
 * pass, two paired in one pass, and the values kept across phases. */
#include "codegen/row_emit_phase.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/expr.h"
#include "codegen/index_ctx.h"
#include "codegen/row_plan.h"
#include "core/alloc.h"
#include "ir/ops.h"

/* Whether the cache registers of v were declared by an earlier phase. */
static bool declared(const row_emit *re, int32_t v) {
  char decl[48];
  snprintf(decl, sizeof decl, " h%d[NV][W];\n", (int)v);
  return re->body.s && strstr(re->body.s, decl);
}

/* The held bf16 input whose max or min node v takes (directly or through a
 * cast to f32), when the phase can reduce its packed pairs: -1 otherwise. */
static int32_t packed_minmax_input(const row_emit *re, int32_t v) {
  const kf_graph *g = re->a->g;
  const fuse_kernel *k = re->a->k;
  const ir_node *n = &g->nodes[v];
  if (!re->ri.hold || re->ri.fallback || re->ri.lanes < 2 || re->ri.lanes % 2 ||
      (n->op != IR_OP_MAX && n->op != IR_OP_MIN) || (n->dtype != KF_F32 && n->dtype != KF_BF16))
    return -1;
  int32_t x = n->args[0];
  if (g->nodes[x].op == IR_OP_CAST && g->nodes[x].dtype == KF_F32) x = g->nodes[x].args[0];
  if (!cg_is_input(k, x) || g->nodes[x].dtype != KF_BF16 ||
      cg_row_numel(&g->nodes[x]) != k->rows * k->cols)
    return -1;
  return x;
}

/* A max or min phase over a held bf16 input: its 32-bit words reduced as
 * bf16 pairs (max.NaN.bf16x2: half an instruction per element, where each
 * element took an unpack and an FMNMX), the two halves joined at the end.
 * bf16 to f32 is exact, so the result is the f32 reduction's. */
static void emit_packed_minmax(row_emit *re, int32_t v, int32_t x) {
  const ir_node *n = &re->a->g->nodes[v];
  bool mx = n->op == IR_OP_MAX;
  cg_printf(
      &re->body,
      "  // phase: %%%d %s (bf16 pairs)\n  float red%d;\n  {\n"
      "    unsigned acc = %s;\n"
      "#pragma unroll\n    for (int kk = 0; kk < NV; kk++) {\n"
      "      const int c0 = kf_cb + (kk * G + lane) * W;\n"
      "      if (FULL || c0 < kf_cb + COLS) {\n#pragma unroll\n"
      "        for (int i = 0; i < W / 2; i++) acc = kf_%s_bf16x2(acc, kf_word32(x%d[kk], i));\n"
      "      }\n    }\n",
      (int)v, ir_ops[n->op].name, (int)v, mx ? "0xff80ff80u" : "0x7f807f80u", mx ? "max" : "min",
      (int)x);
  char dst[32], acc[96];
  snprintf(dst, sizeof dst, "red%d", (int)v);
  snprintf(acc, sizeof acc,
           "kf_%s_nan(__uint_as_float(acc << 16), __uint_as_float(acc & 0xffff0000u))",
           mx ? "max" : "min");
  cg_row_red_call(re, &re->body, dst, cg_row_red_struct(n), "float", acc, "kf_smf");
  cg_puts(&re->body, "  }\n");
  char bound[32];
  snprintf(bound, sizeof bound, "red%d", (int)v);
  cg_gen_bind(&re->gen, v, NULL, bound);
}

/* A value a later pass needs is computed again there from what is bound
 * (held inputs, kept values, per-row results) when that takes at most this
 * many ops; otherwise the pass that computes it first keeps it in
 * registers (keep_across). Softmax's x - max, layernorm's x - mean, a cast
 * of a held input: recomputed, as before. A residual ladder's running sum
 * (r[i] = r[i-1] + e[i] / sum(e[i])): kept, so each phase computes O(1)
 * ops and not every earlier step again. */
enum { ROW_RECOMPUTE_OPS = 4 };

static bool computed_here(const cg_gen *gen, int32_t v) {
  for (int i = 0; i < gen->n_memo; i++)
    if (gen->memo[i].value == v) return true;
  return false;
}

/* Whether something after the pass of reduction red still reads v: a
 * kernel output, a later reduction, or a node this pass did not compute. */
static bool needed_later(const row_emit *re, int32_t v, int32_t red) {
  const fuse_kernel *k = re->a->k;
  for (int i = 0; i < k->n_outputs; i++)
    if (k->outputs[i] == v) return true;
  for (int i = 0; i < k->n_nodes; i++) {
    int32_t u = k->nodes[i];
    const ir_node *un = &re->a->g->nodes[u];
    bool reads = false;
    for (int j = 0; j < un->nargs; j++) reads |= un->args[j] == v;
    if (!reads || u == red) continue;
    if (cg_row_is_reduce(re->a->g, un) ? !cg_row_bound(&re->gen, u, "")
                                       : !computed_here(&re->gen, u))
      return true;
  }
  return false;
}

/* Values kept across phases by one pass (keep_across), bound after it. */
typedef struct row_kept {
  cg_buf decls;
  int32_t *v;
  int n;
} row_kept;

/* In the pass of reduction red (skip: the operand the reduction-operand
 * cache keeps, or -1): stores h<v>[kk][j] for each full-row value computed
 * here that a later pass needs and would cost more than ROW_RECOMPUTE_OPS
 * to compute again, while the row's register room lasts. */
static void keep_across(row_emit *re, int32_t red, int32_t skip, row_kept *kp) {
  cg_gen *gen = &re->gen;
  const fuse_kernel *k = re->a->k;
  memset(kp, 0, sizeof *kp);
  if (!re->ri.cache || !gen->n_memo) return;
  kp->v = core_malloc((size_t)gen->n_memo * sizeof *kp->v);
  if (!kp->v) {
    cg_gen_oom(gen);
    return;
  }
  for (int i = 0; i < gen->n_memo; i++) {
    const struct cg_memo *m = &gen->memo[i];
    const ir_node *n = &re->a->g->nodes[m->value];
    if (m->cost <= ROW_RECOMPUTE_OPS || m->value == skip || cg_is_input(k, m->value) ||
        cg_row_numel(n) != k->rows * k->cols || cg_row_compute_size(n->dtype) > re->ri.room)
      continue;
    cg_ctx c;
    char key[512];
    cg_row_ctx(n, re->cols, &c);
    cg_ctx_key(&c, key, sizeof key);
    if (strcmp(m->key, key) || !needed_later(re, m->value, red)) continue;
    re->ri.room -= cg_row_compute_size(n->dtype);
    cg_line(gen, "h%d[kk][j] = t%d;", (int)m->value, m->tmp);
    cg_printf(&kp->decls, "  %s h%d[NV][W];\n", cg_compute_type(n->dtype), (int)m->value);
    kp->v[kp->n++] = m->value;
  }
}

/* After the pass: later passes read the kept values from registers. */
static void bind_kept(row_emit *re, row_kept *kp) {
  for (int i = 0; i < kp->n; i++) {
    cg_ctx c;
    char key[512], expr[64];
    cg_row_ctx(&re->a->g->nodes[kp->v[i]], re->cols, &c);
    cg_ctx_key(&c, key, sizeof key);
    snprintf(expr, sizeof expr, "h%d[kk][j]", (int)kp->v[i]);
    cg_gen_bind(&re->gen, kp->v[i], key, expr);
  }
  free(kp->v);
  kp->v = NULL;
}

/* One phase: the reduction of node v over the row. */
void cg_row_emit_phase(row_emit *re, int32_t v) {
  const kf_graph *g = re->a->g;
  const ir_node *n = &g->nodes[v];
  const ir_node *x = &g->nodes[n->args[0]];
  const char *ct = cg_compute_type(n->dtype);
  int32_t packed = packed_minmax_input(re, v);
  if (packed >= 0 && !(re->ri.cache && cg_row_cache_worthy(re->a, v, n->args[0]))) {
    emit_packed_minmax(re, v, packed);
    return;
  }
  if (re->ri.cache && cg_row_cache_worthy(re->a, v, n->args[0]) && !declared(re, n->args[0]))
    cg_printf(&re->body, "  %s h%d[NV][W];\n", cg_compute_type(x->dtype), (int)n->args[0]);
  /* the phase goes to a buffer of its own: the registers of values it keeps
   * for later phases are declared before it */
  cg_buf outer = re->body;
  re->body = (cg_buf){0};
  cg_printf(&re->body, "  // phase: %%%d %s\n  %s red%d;\n  {\n    %s acc = %s<%s>::id();\n",
            (int)v, ir_ops[n->op].name, ct, (int)v, ct, cg_row_red_struct(n), ct);
  row_pass ps;
  cg_ctx c;
  cg_row_pass_open(re, &ps, x, &c);
  char name[160], key[512];
  cg_ctx_key(&c, key, sizeof key);
  bool cache = re->ri.cache && cg_row_cache_worthy(re->a, v, n->args[0]) &&
               !cg_row_bound(&re->gen, n->args[0], key);
  cg_gen_value(&re->gen, n->args[0], &c, name, sizeof name);
  cg_line(&re->gen, "acc = %s<%s>::op(acc, %s);", cg_row_red_struct(n), ct, name);
  if (cache) cg_line(&re->gen, "h%d[kk][j] = %s;", (int)n->args[0], name);
  row_kept kept;
  keep_across(re, v, cache ? n->args[0] : -1, &kept);
  cg_row_pass_close(re, &ps);
  bind_kept(re, &kept);
  if (cache) {
    /* computed once here, read from registers by the later phases */
    char expr[64];
    snprintf(expr, sizeof expr, "h%d[kk][j]", (int)n->args[0]);
    cg_gen_bind(&re->gen, n->args[0], key, expr);
  }
  char dst[32], sm[16];
  snprintf(dst, sizeof dst, "red%d", (int)v);
  snprintf(sm, sizeof sm, "kf_sm%c", cg_row_sm_letter(n->dtype));
  cg_row_red_call(re, &re->body, dst, cg_row_red_struct(n), ct, "acc", sm);
  if (n->op == IR_OP_MEAN) {
    char cnt[64];
    cg_literal(n->dtype, (double)re->cols, cnt, sizeof cnt);
    cg_printf(&re->body, "    red%d = kf_div(red%d, %s);\n", (int)v, (int)v, cnt);
  }
  cg_puts(&re->body, "  }\n");
  cg_buf phase = re->body;
  re->body = outer;
  cg_puts(&re->body, cg_use(&re->body, &kept.decls));
  cg_puts(&re->body, cg_use(&re->body, &phase));
  if (phase.oom || kept.decls.oom) cg_gen_oom(&re->gen);
  cg_buf_free(&phase);
  cg_buf_free(&kept.decls);
  char bound[32];
  snprintf(bound, sizeof bound, "red%d", (int)v);
  cg_gen_bind(&re->gen, v, NULL, bound);
}

/* Two reductions in one pass over the row (a looped row reads the row from
 * memory once per phase): online softmax (first = max(x), second =
 * sum(exp(x - first))) or Welford (first = mean(x), second = mean or sum of
 * (x - first)^2). Per chunk the W values of x go into y[W]; the state is a
 * pair (kf_osm) or a triple (kf_wf) reduced like a scalar. */
void cg_row_emit_online(row_emit *re, int32_t first, int32_t second, row_online_kind kind) {
  const kf_graph *g = re->a->g;
  const ir_node *f = &g->nodes[first], *s = &g->nodes[second];
  const char *ct = cg_compute_type(f->dtype);
  bool sm = kind == ROW_ONLINE_SOFTMAX;
  const char *st = sm ? "kf_osm" : "kf_wf", *red = sm ? "kf_red_osm" : "kf_red_wf";
  cg_printf(&re->body,
            "  // phase: %%%d %s and %%%d %s in one pass (%s)\n  %s red%d, red%d;\n  {\n"
            "    %s<%s> acc = %s<%s>::id();\n",
            (int)first, ir_ops[f->op].name, (int)second, ir_ops[s->op].name,
            sm ? "online softmax" : "Welford", ct, (int)first, (int)second, st, ct, red, ct);
  row_pass ps;
  cg_ctx c;
  cg_row_pass_open(re, &ps, &g->nodes[f->args[0]], &c);
  char name[160];
  cg_gen_value(&re->gen, f->args[0], &c, name, sizeof name);
  cg_line(&re->gen, "y[j] = %s;", name);
  cg_printf(&ps.decl, "    %s y[W];\n", ct);
  cg_printf(&ps.after, "    acc = %s_chunk<%s, W>(acc, y);\n", st, ct);
  cg_row_pass_close(re, &ps);
  char smn[16];
  snprintf(smn, sizeof smn, "kf_sm%s%c", sm ? "o" : "w", cg_row_sm_letter(f->dtype));
  cg_row_red_call(re, &re->body, "acc", red, ct, "acc", smn);
  if (sm) {
    cg_printf(&re->body, "    red%d = acc.m;\n    red%d = kf_osm_sum(acc);\n", (int)first,
              (int)second);
  } else {
    char cnt[64];
    cg_literal(s->dtype, (double)re->cols, cnt, sizeof cnt);
    cg_printf(&re->body, "    red%d = acc.mean;\n", (int)first);
    if (s->op == IR_OP_MEAN)
      cg_printf(&re->body, "    red%d = kf_div(kf_wf_m2(acc), %s);\n", (int)second, cnt);
    else
      cg_printf(&re->body, "    red%d = kf_wf_m2(acc);\n", (int)second);
  }
  cg_puts(&re->body, "  }\n");
  char b[32];
  snprintf(b, sizeof b, "red%d", (int)first);
  cg_gen_bind(&re->gen, first, NULL, b);
  snprintf(b, sizeof b, "red%d", (int)second);
  cg_gen_bind(&re->gen, second, NULL, b);
}
