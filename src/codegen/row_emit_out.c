/* row_emit_out.c - a row kernel's output phases: the full-row outputs (with
 * the rare second computation of flagged quotients) and the per-row ones. */
#include "codegen/row_emit_out.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/expr.h"
#include "codegen/index_ctx.h"
#include "codegen/row_plan.h"
#include "core/alloc.h"

/* The element code of the full-row outputs: o<v>[j] for each, or with
 * scalar, each element stored at once (kf_st). With declare, also the o
 * arrays (into decl), their stores (into stores) and the alignment
 * checks. */
static void output_elems(row_emit *re, cg_buf *decl, cg_buf *stores, bool declare, bool scalar) {
  const kf_graph *g = re->a->g;
  const fuse_kernel *k = re->a->k;
  for (int i = 0; i < k->n_outputs; i++) {
    int32_t v = k->outputs[i];
    const ir_node *n = &g->nodes[v];
    if (cg_row_numel(n) != k->rows * k->cols) continue;
    cg_ctx c;
    cg_row_ctx(n, re->cols, &c);
    char name[160];
    cg_gen_stored(&re->gen, v, &c, name, sizeof name);
    if (scalar)
      cg_line(&re->gen, "kf_st(p%d + (r * %lld + c), %s);", (int)v, (long long)re->cols, name);
    else
      cg_line(&re->gen, "o%d[j] = %s;", (int)v, name);
    if (!declare) continue;
    cg_printf(decl, "    %s o%d[W];\n", cg_compute_type(n->dtype), (int)v);
    cg_printf(stores, "    kf_stv<%s, W>(p%d + (r * %lld + c0), o%d);\n", cg_storage_type(n->dtype),
              (int)v, (long long)re->cols, (int)v);
    size_t wb = kf_dtype_size(n->dtype) * (size_t)re->ri.lanes;
    cg_printf(&re->align, " && kf_aligned(p%d, %d)", (int)v, (int)(wb > 16 ? 16 : wb));
  }
}

/* With KFUSE_ROW_RECOMPUTE=1, the output phase reads the held inputs
 * computed in float through kf_fresh. */
static void fresh_held_reads(row_emit *re) {
  if (!cg_row_recompute(re->a->t->knobs) || !re->ri.hold || re->ri.fallback) return;
  for (int i = 0; i < re->gen.n_binds; i++) {
    cg_bind *b = &re->gen.binds[i];
    int32_t v = b->value;
    char held[48];
    cg_row_held_read(v, false, held, sizeof held);
    if (strcmp(b->expr, held) || strcmp(cg_compute_type(re->a->g->nodes[v].dtype), "float"))
      continue;
    cg_row_held_read(v, true, b->expr, sizeof b->expr);
  }
}

/* Sets aside the binds of held and cached registers (those bound for one
 * context), keeping the per-row values (bound for any context): code
 * generated then reads its inputs from memory. Returns every bind, for
 * restore_binds (NULL when out of memory: the generator has failed). */
static cg_bind *only_row_values(cg_gen *gen, int *n_all) {
  *n_all = gen->n_binds;
  cg_bind *all = core_malloc((size_t)(gen->n_binds + 1) * sizeof *all);
  if (!all) {
    cg_gen_oom(gen);
    return NULL;
  }
  memcpy(all, gen->binds, (size_t)gen->n_binds * sizeof *all);
  int n = 0;
  for (int i = 0; i < *n_all; i++)
    if (!all[i].key[0]) gen->binds[n++] = all[i];
  gen->n_binds = n;
  return all;
}

static void restore_binds(cg_gen *gen, cg_bind *all, int n_all) {
  if (!all) return;
  memcpy(gen->binds, all, (size_t)n_all * sizeof *all);
  gen->n_binds = n_all;
  free(all);
}

/* The flagged outputs' second computation (see cg_row_emit_outputs): the element
 * code of every full-row output with the fallback division, inputs read
 * from memory (the held and cached registers set aside), each element
 * stored at once. */
static void redo_elems(row_emit *re, cg_buf *out) {
  cg_gen *gen = &re->gen;
  cg_buf *align = gen->align, *pre = gen->pre, *pre_decl = gen->pre_decl, *code = gen->code;
  cg_gen_reset_memo(gen);
  int n_all;
  cg_bind *all = only_row_values(gen, &n_all);
  gen->pre = NULL; /* every load scalar */
  gen->pre_decl = NULL;
  gen->code = out;
  gen->align = NULL; /* the checks are in already */
  gen->div_mode = CG_DIV_REDO;
  output_elems(re, NULL, NULL, false, true);
  restore_binds(gen, all, n_all);
  cg_gen_reset_memo(gen);
  gen->align = align;
  gen->pre = pre;
  gen->pre_decl = pre_decl;
  gen->code = code;
}

/* The final phase: full-row outputs, W per store. A division by a per-row
 * value skips its per-element fallback (kf_div_rcpf) and flags a NaN
 * quotient in the thread's kf_bad instead; a thread that flagged one
 * computes all its outputs again after its chunk loop, with the fallback
 * (the same bits wherever the quick quotient was finite), and stores them
 * over the first ones. That second computation is rare, so it is compact:
 * emitted once, in loops that are not unrolled, reading the inputs again
 * from memory (unchanged: no output overlaps an input). Unrolled per chunk
 * over the held registers, as it was, it doubled the output phase's code
 * (softmax_bf16: 245-253 ms in NVRTC then, 197-202 now; 96 registers then,
 * 80 now; docs/performance.md, C1). The unaligned fallback keeps the
 * per-element form (compact). */
void cg_row_emit_outputs(row_emit *re) {
  cg_buf decl = {0}, pre = {0}, elems = {0}, after = {0}, stores = {0}, redo = {0};
  cg_gen_reset_memo(&re->gen);
  fresh_held_reads(re);
  cg_puts(&re->body, "  // outputs\n");
  /* the chunk loop goes to a buffer of its own, so that kf_bad can be
   * declared before it once it is known to be needed */
  cg_buf outer = re->body;
  re->body = (cg_buf){0};
  re->gen.code = &re->body;
  cg_row_chunk_open(re, &decl, &pre);
  re->gen.code = &elems;
  re->gen.div_mode = re->ri.fallback ? CG_DIV_PLAIN : CG_DIV_FLAG;
  output_elems(re, &decl, &stores, true, false);
  if (elems.s && strstr(elems.s, "kf_div_rcpf(")) redo_elems(re, &redo);
  cg_printf(&after, "%s", cg_use(&after, &stores));
  if (stores.oom) cg_gen_oom(&re->gen);
  cg_buf_free(&stores);
  re->gen.div_mode = CG_DIV_PLAIN;
  cg_row_chunk_close(re, &decl, &pre, &elems, &after);
  cg_buf loop = re->body;
  re->body = outer;
  if (redo.s) cg_puts(&re->body, "  bool kf_bad = false;\n");
  cg_puts(&re->body, cg_use(&re->body, &loop));
  if (redo.s)
    cg_printf(&re->body,
              "  if (kf_bad) { // a quotient was not finite: this thread's outputs again, with "
              "the fallback\n"
              "  #pragma unroll 1\n  for (int kk = 0; kk < NV; kk++) {\n"
              "    const int c0 = kf_cb + (kk * G + lane) * W;\n"
              "    if (FULL || c0 < kf_cb + COLS) {\n"
              "#pragma unroll 1\n    for (int j = 0; j < W; j++) {\n      const int c = c0 + j;\n"
              "      (void)c;\n%s    }\n    }\n  }\n  }\n",
              redo.s);
  if (loop.oom || redo.oom) cg_gen_oom(&re->gen);
  cg_buf_free(&loop);
  cg_buf_free(&redo);
}

/* Per-row outputs (one value per row), stored by the group's first lane. */
void cg_row_emit_row_outputs(row_emit *re) {
  const kf_graph *g = re->a->g;
  const fuse_kernel *k = re->a->k;
  cg_gen_reset_memo(&re->gen);
  re->gen.code = &re->body;
  re->gen.pre = NULL;
  re->gen.vec = 1;
  re->gen.indent = 2;
  bool any = false;
  for (int i = 0; i < k->n_outputs; i++) {
    int32_t v = k->outputs[i];
    const ir_node *n = &g->nodes[v];
    if (cg_row_numel(n) == k->rows * k->cols) continue;
    if (!any)
      cg_puts(&re->body,
              re->ri.split > 1 ? "  if (lane == 0 && kf_cb == 0) {\n" : "  if (lane == 0) {\n");
    any = true;
    if (cg_row_numel(n) != k->rows) {
      cg_gen_fail(&re->gen, "output %%%d has neither a row's nor a value per row's shape", (int)v);
      continue;
    }
    cg_ctx c;
    cg_ctx_linear(&c, n->rank, n->shape, "r", VC_GATHER);
    char name[160];
    cg_gen_stored(&re->gen, v, &c, name, sizeof name);
    cg_line(&re->gen, "kf_st(p%d + r, %s);", (int)v, name);
  }
  if (any) cg_puts(&re->body, "  }\n");
}
