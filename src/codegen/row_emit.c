/* row_emit.c - the loops every phase of a row kernel writes: a pass over
 * the row in chunks of W, and the block (and cluster) reduction call. */
#include "codegen/row_emit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/expr.h"
#include "codegen/row_plan.h"

/* Opens a pass that reads value x over the row: element code then goes
 * into ps->elems, with x's context in c. */
void cg_row_pass_open(row_emit *re, row_pass *ps, const ir_node *x, cg_ctx *c) {
  memset(ps, 0, sizeof *ps);
  ps->saved = re->gen.code;
  cg_gen_reset_memo(&re->gen);
  re->gen.code = &re->body;
  cg_row_chunk_open(re, &ps->decl, &ps->pre);
  re->gen.code = &ps->elems;
  cg_row_ctx(x, re->cols, c);
}

void cg_row_pass_close(row_emit *re, row_pass *ps) {
  cg_row_chunk_close(re, &ps->decl, &ps->pre, &ps->elems, &ps->after);
  re->gen.code = ps->saved;
}

/* The unroll pragma of a looped row's chunk loops: 2 (two chunks' loads
 * in flight per thread), or KFUSE_ROW_UNROLL=N (1, 2, 4 or 8; 0 = unrolled
 * completely), a knob for measuring the looped form with more loads in
 * flight. */
static const char *looped_unroll(const core_knobs *k) {
  switch (k->row_unroll) {
    case 0:
      return "#pragma unroll";
    case 1:
      return "#pragma unroll 1";
    case 4:
      return "#pragma unroll 4";
    case 8:
      return "#pragma unroll 8";
    default:
      return "#pragma unroll 2";
  }
}

/* Opens the chunk loop; element code then goes into gen at indent 4. */
void cg_row_chunk_open(row_emit *re, cg_buf *decl, cg_buf *pre) {
  cg_gen *gen = &re->gen;
  gen->indent = 1;
  cg_line(gen, "%s",
          re->ri.fallback ? "#pragma unroll 1"
          : re->ri.hold   ? "#pragma unroll"
                          : looped_unroll(re->a->t->knobs));
  cg_line(gen, "for (int kk = 0; kk < NV; kk++) {");
  cg_line(gen, "  const int c0 = kf_cb + (kk * G + lane) * W;");
  cg_line(gen, "  if (FULL || c0 < kf_cb + COLS) {");
  gen->pre = pre;
  gen->pre_decl = decl;
  gen->indent = 4;
}

/* Closes it: the element code gathered in `elems` is placed after the
 * vector preloads of the chunk. */
void cg_row_chunk_close(row_emit *re, cg_buf *decl, cg_buf *pre, cg_buf *elems, cg_buf *after) {
  cg_buf *b = &re->body;
  cg_printf(b, "%s", cg_use(b, decl));
  cg_printf(b, "    {\n      const int c = c0;\n      (void)c;\n%s    }\n", cg_use(b, pre));
  cg_printf(b,
            "#pragma unroll\n    for (int j = 0; j < W; j++) {\n      const int c = c0 + j;\n"
            "      (void)c;\n%s    }\n",
            cg_use(b, elems));
  cg_printf(b, "%s  }\n  }\n", cg_use(b, after));
  cg_buf_free(decl);
  cg_buf_free(pre);
  cg_buf_free(elems);
  cg_buf_free(after);
}

const char *cg_row_red_struct(const ir_node *n) {
  return n->op == IR_OP_MAX ? "kf_red_max" : n->op == IR_OP_MIN ? "kf_red_min" : "kf_red_sum";
}

char cg_row_sm_letter(kf_dtype dt) {
  return dt == KF_F64 ? 'd' : dt == KF_I32 ? 'i' : dt == KF_I64 ? 'l' : 'f';
}

/* KFUSE_ROW_BARRIERS=2 keeps the leading barrier of every block reduction
 * of a row (the old form, for measurements); by default a row's reductions
 * alternate two halves of their shared scratch and need one barrier each. */
bool cg_row_one_barrier(const core_knobs *k) {
  return k->row_barriers != 2;
}

/* The call reducing `acc` over the row group, of reduction R<T>, through
 * shared scratch sm. Reduction i of the row uses half i % 2 of sm without
 * a leading barrier; with an odd count per row, the first one keeps its
 * barrier (the next row's first would follow the last on the same half). */
void cg_row_red_call(row_emit *re, cg_buf *b, const char *dst, const char *r, const char *t,
                     const char *acc, const char *sm) {
  int i = re->i_red++;
  bool halves = cg_row_one_barrier(re->a->t->knobs) && re->ri.group > 32;
  bool lead = !halves || (i == 0 && re->n_red % 2);
  char blk[256];
  snprintf(blk, sizeof blk, "kf_block_allreduce<%s<%s>, G, %d, %s>(%s, %s%s)", r, t,
           re->a->part->launch_threads, lead ? "true" : "false", acc, sm,
           halves && i % 2 ? " + 32" : "");
  if (re->ri.split > 1) /* then across the cluster, through slot i ("kf_sc" + sm's type) */
    cg_printf(b, "    %s = kf_cluster_allreduce<%s<%s>, %d>(%s, kf_sc%s + %d);\n", dst, r, t,
              re->ri.split, blk, sm + 5, i);
  else
    cg_printf(b, "    %s = %s;\n", dst, blk);
}

/* How element j of chunk kk of held input v is read: from its registers,
 * through kf_fresh when the compiler must not merge it with earlier reads
 * (KFUSE_ROW_RECOMPUTE). */
void cg_row_held_read(int32_t v, bool fresh, char *out, size_t size) {
  snprintf(out, size, fresh ? "kf_fresh(kf_in_at(x%d[kk], j))" : "kf_in_at(x%d[kk], j)", (int)v);
}

/* Whether value v is bound (held or cached) at context key already. */
bool cg_row_bound(const cg_gen *gen, int32_t v, const char *key) {
  for (int i = 0; i < gen->n_binds; i++)
    if (gen->binds[i].value == v && (!gen->binds[i].key[0] || !strcmp(gen->binds[i].key, key)))
      return true;
  return false;
}
