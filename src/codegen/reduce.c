/* reduce.c - the part function of a reduce kernel: outer x red x inner
 * after merging axes (or indexed per dim when the reduced axes do not
 * merge), with a fused prologue (per element) and epilogue (per
 * output): contiguous reductions in templates/reduce_rows.cu (split over
 * several blocks, deterministically, when outputs are few), strided ones in
 * templates/reduce_cols.cu. */
#include "codegen/reduce.h"

#include <stdio.h>
#include <string.h>

#include "codegen/buf.h"
#include "codegen/cg_internal.h"
#include "codegen/expr.h"
#include "codegen/index_ctx.h"
#include "codegen/part.h"
#include "codegen/pointwise.h"
#include "codegen/reduce_plan.h"
#include "codegen/template.h"
#include "ir/shape.h"

/* The context of an element (o, k, n) of the reduced operand. */
static void elem_ctx(const red_shape *r, int vclass, cg_ctx *c) {
  const ir_node *x = r->x;
  static const char *const vars[3] = {"o", "k", "n"};
  if (r->strided) {
    cg_ctx_assign(c, x->rank, x->shape, r->grp, vars, vclass);
    return;
  }
  int bounds[4] = {0, r->a, r->b, x->rank};
  cg_ctx_groups(c, x->rank, x->shape, 3, bounds, vars, vclass);
}

/* The linear index of element (o, k, n) in the reduced input's layout. */
static void elem_lin(const red_shape *r, char *out, size_t size) {
  if (!r->strided) {
    snprintf(out, size, "(o * %lld + k) * %lld + n", (long long)r->red, (long long)r->inner);
    return;
  }
  cg_ctx c;
  elem_ctx(r, VC_GATHER, &c);
  cg_ctx_lin(&c, out, size);
}

static const char *red_struct(const ir_node *n) {
  return n->op == IR_OP_MAX ? "kf_red_max" : n->op == IR_OP_MIN ? "kf_red_min" : "kf_red_sum";
}

static char sm_letter(kf_dtype dt) {
  return dt == KF_F64 ? 'd' : dt == KF_I32 ? 'i' : dt == KF_I64 ? 'l' : 'f';
}

typedef struct red_bufs {
  cg_buf globals, decl, pre_decl, pre, acc, combine, pstore, pload, epi, align, args;
} red_bufs;

/* Accumulation code and the per-kind combine/partial code of every reduction. */
static void emit_reductions(cg_emit_args *a, const red_shape *rs, const rows_plan *rp, cg_gen *gen,
                            red_bufs *b) {
  const fuse_kernel *k = a->k;
  const cg_part *p = a->part;
  int64_t split = rp->split;
  gen->code = &b->acc;
  gen->indent = 4;
  gen->vec = rp->v;
  gen->pre = &b->pre;
  gen->pre_decl = &b->pre_decl;
  gen->align = &b->align;
  cg_ctx first;
  const ir_node *x0 = NULL;
  for (int i = 0; i < k->n_nodes; i++) {
    int32_t v = k->nodes[i];
    const ir_node *n = &a->g->nodes[v];
    if (!ir_is_reduction(a->g, n)) continue;
    const ir_node *x = &a->g->nodes[n->args[0]];
    const char *ct = cg_compute_type(n->dtype), *rd = red_struct(n);
    cg_printf(&b->decl, "  %s acc%d = %s<%s>::id();\n", ct, (int)v, rd, ct);
    red_shape r;
    cg_reduce_merge(n, x, &r);
    cg_ctx c;
    elem_ctx(&r, VC_CONTIG, &c);
    if (!x0) {
      x0 = x;
      first = c;
    }
    char name[160];
    cg_gen_value(gen, n->args[0], &c, name, sizeof name);
    cg_line(gen, "acc%d = %s<%s>::op(acc%d, %s);", (int)v, rd, ct, (int)v, name);
    {
      cg_printf(&b->combine, "  acc%d = kf_block_allreduce<%s<%s>, %u, %d>(acc%d, kf_sm%c);\n",
                (int)v, rd, ct, p->threads, p->launch_threads, (int)v, sm_letter(n->dtype));
      if (split > 1) {
        cg_printf(&b->globals, "__device__ %s %s_part%d[%lld];\n", ct, p->fn, (int)v,
                  (long long)(rs->outer * split));
        cg_printf(&b->pstore, "      %s_part%d[o * %lld + s] = acc%d;\n", p->fn, (int)v,
                  (long long)split, (int)v);
        /* read through L2 (__ldcg: other blocks wrote them), loads not
         * serialized as volatile ones are */
        cg_printf(&b->pload,
                  "    acc%d = %s<%s>::id();\n#pragma unroll 4\n    for (int i = threadIdx.x; i < "
                  "%lld; i += %u)\n      acc%d = %s<%s>::op(acc%d, __ldcg(%s_part%d + o * %lld + "
                  "i));\n",
                  (int)v, rd, ct, (long long)split, p->threads, (int)v, rd, ct, (int)v, p->fn,
                  (int)v, (long long)split);
      }
    }
    cg_printf(&b->epi, "    %s red%d = acc%d;\n", ct, (int)v, (int)v);
    if (n->op == IR_OP_MEAN) {
      char cnt[64];
      cg_literal(n->dtype, (double)r.red, cnt, sizeof cnt);
      cg_printf(&b->epi, "    red%d = kf_div(red%d, %s);\n", (int)v, (int)v, cnt);
    }
    char bound[32];
    snprintf(bound, sizeof bound, "red%d", (int)v);
    cg_gen_bind(gen, v, NULL, bound);
  }
  /* Prologue values that are outputs too: stored as each element is visited
   * (every element is visited exactly once). */
  for (int i = 0; i < k->n_outputs; i++) {
    int32_t v = k->outputs[i];
    const ir_node *n = &a->g->nodes[v];
    if (kf_value_numel(a->g, v) != rs->outer * rs->red * rs->inner) continue;
    char lin[256];
    elem_lin(rs, lin, sizeof lin);
    cg_ctx c;
    if (x0 && n->rank == x0->rank &&
        !memcmp(n->shape, x0->shape, sizeof(int64_t) * (size_t)n->rank))
      c = first; /* the values the reductions computed */
    else
      cg_ctx_linear(&c, n->rank, n->shape, lin, VC_GATHER);
    char name[160];
    cg_gen_stored(gen, v, &c, name, sizeof name);
    cg_line(gen, "kf_st(p%d + (%s), %s);", (int)v, lin, name);
  }
  cg_printf(&b->globals, "__device__ unsigned %s_count[%lld];\n", p->fn,
            (long long)(split > 1 ? rs->outer : 1));
  gen->vec = 1;
  gen->pre = NULL;
}

static void emit_epilogue(cg_emit_args *a, const red_shape *rs, cg_gen *gen, red_bufs *b) {
  const fuse_kernel *k = a->k;
  gen->code = &b->epi;
  gen->indent = 2;
  cg_gen_reset_memo(gen);
  char lin[64];
  snprintf(lin, sizeof lin, "o");
  for (int i = 0; i < k->n_outputs; i++) {
    int32_t v = k->outputs[i];
    const ir_node *n = &a->g->nodes[v];
    if (kf_value_numel(a->g, v) == rs->outer * rs->red * rs->inner && rs->red > 1)
      continue; /* stored by the prologue */
    if (kf_value_numel(a->g, v) != rs->outer * rs->inner) {
      cg_gen_fail(gen, "output %%%d is not one value per reduced output", (int)v);
      continue;
    }
    cg_ctx c;
    cg_ctx_linear(&c, n->rank, n->shape, lin, VC_GATHER);
    char name[160];
    cg_gen_stored(gen, v, &c, name, sizeof name);
    cg_line(gen, "kf_st(p%d + (%s), %s);", (int)v, lin, name);
  }
}

/* ---- strided reductions (templates/reduce_cols.cu) ------------------------ */

typedef struct cols_bufs {
  cg_buf globals, decl, pre_decl, pre, acc, fold, pstore, pload, epi, align;
} cols_bufs;

/* Per reduction: registers for LANES outputs, the shared slice scratch, the
 * fold of the TY slices, the partial store and load of a split. */
static void cols_reduction(cg_emit_args *a, const red_shape *rs, const cols_plan *cp, int32_t v,
                           cols_bufs *b) {
  const ir_node *n = &a->g->nodes[v];
  const char *ct = cg_compute_type(n->dtype), *rd = red_struct(n), *fn = a->part->fn;
  long long sp = (long long)cp->split, in = (long long)rs->inner;
  cg_printf(&b->decl,
            "  %s acc%d[LANES];\n#pragma unroll\n  for (int l = 0; l < LANES; l++) "
            "acc%d[l] = %s<%s>::id();\n  __shared__ %s kf_c%d[TY][LANES][TX + 1];\n",
            ct, (int)v, (int)v, rd, ct, ct, (int)v);
  cg_printf(&b->fold, "      acc%d[l] = %s<%s>::op(acc%d[l], kf_c%d[i][l][tx]);\n", (int)v, rd, ct,
            (int)v, (int)v);
  cg_printf(&b->pload,
            "#pragma unroll\n    for (int l = 0; l < LANES; l++) acc%d[l] = "
            "%s<%s>::id();\n",
            (int)v, rd, ct);
  if (cp->split > 1) {
    cg_printf(&b->globals, "__device__ %s %s_part%d[%lld];\n", ct, fn, (int)v,
              (long long)rs->outer * sp * in);
    cg_printf(&b->pstore, "        %s_part%d[(o * %lld + s) * %lld + n0 + l] = acc%d[l];\n", fn,
              (int)v, sp, in, (int)v);
    /* the last block's fold of the partials, once per tile: through L2
     * (__ldcg), 32 loads per thread in flight (32 / LANES steps unrolled)
     * where volatile loads went one round trip at a time; the order is the
     * same */
    cg_printf(&b->pload,
              "    if (live)\n#pragma unroll %d\n      for (int ss = ty; ss < %lld; ss += TY)\n"
              "#pragma unroll\n        for (int l = 0; l < LANES; l++)\n"
              "          acc%d[l] = %s<%s>::op(acc%d[l], __ldcg(%s_part%d + (o * %lld + "
              "ss) * %lld + n0 + l));\n",
              cp->w >= 32 ? 1 : 32 / cp->w, sp, (int)v, rd, ct, (int)v, fn, (int)v, sp, in);
  }
  cg_printf(&b->epi, "      %s red%d = acc%d[l];\n", ct, (int)v, (int)v);
  if (n->op == IR_OP_MEAN) {
    char cnt[64];
    cg_literal(n->dtype, (double)rs->red, cnt, sizeof cnt);
    cg_printf(&b->epi, "      red%d = kf_div(red%d, %s);\n", (int)v, (int)v, cnt);
  }
}

/* The element code: every reduction's operand at (o, k, n), W lanes loaded
 * at once where contiguous along inner, and full-size outputs stored as
 * each element is visited (each exactly once). */
static void cols_elements(cg_emit_args *a, const red_shape *rs, const cols_plan *cp, cg_gen *gen,
                          cols_bufs *b) {
  const fuse_kernel *k = a->k;
  gen->code = &b->acc;
  gen->indent = 5;
  gen->vec = cp->w;
  gen->pre = &b->pre;
  gen->pre_decl = &b->pre_decl;
  gen->align = &b->align;
  cg_ctx first;
  const ir_node *x0 = NULL;
  for (int i = 0; i < k->n_nodes; i++) {
    int32_t v = k->nodes[i];
    const ir_node *n = &a->g->nodes[v];
    if (!ir_is_reduction(a->g, n)) continue;
    const ir_node *x = &a->g->nodes[n->args[0]];
    red_shape r;
    cg_reduce_merge(n, x, &r);
    cg_ctx c;
    elem_ctx(&r, VC_CONTIG, &c);
    if (!x0) {
      x0 = x;
      first = c;
    }
    char name[160];
    cg_gen_value(gen, n->args[0], &c, name, sizeof name);
    const char *ct = cg_compute_type(n->dtype);
    cg_line(gen, "acc%d[l] = %s<%s>::op(acc%d[l], %s);", (int)v, red_struct(n), ct, (int)v, name);
  }
  for (int i = 0; i < k->n_outputs; i++) {
    int32_t v = k->outputs[i];
    const ir_node *n = &a->g->nodes[v];
    if (kf_value_numel(a->g, v) != rs->outer * rs->red * rs->inner) continue;
    char lin[256], name[160];
    elem_lin(rs, lin, sizeof lin);
    cg_ctx c;
    bool same = x0 && n->rank == x0->rank &&
                !memcmp(n->shape, x0->shape, sizeof(int64_t) * (size_t)n->rank);
    if (same)
      c = first;
    else
      cg_ctx_linear(&c, n->rank, n->shape, lin, VC_GATHER);
    cg_gen_stored(gen, v, &c, name, sizeof name);
    cg_line(gen, "kf_st(p%d + (%s), %s);", (int)v, lin, name);
  }
}

/* Per-output epilogue, in the lane loop of thread row 0 (n = n0 + l). */
static void cols_epilogue(cg_emit_args *a, const red_shape *rs, cg_gen *gen, cols_bufs *b) {
  const fuse_kernel *k = a->k;
  gen->code = &b->epi;
  gen->indent = 3;
  gen->vec = 1;
  gen->pre = NULL;
  cg_gen_reset_memo(gen);
  char lin[64];
  snprintf(lin, sizeof lin, "o * %lld + n", (long long)rs->inner);
  for (int i = 0; i < k->n_outputs; i++) {
    int32_t v = k->outputs[i];
    const ir_node *n = &a->g->nodes[v];
    if (kf_value_numel(a->g, v) == rs->outer * rs->red * rs->inner) continue;
    if (kf_value_numel(a->g, v) != rs->outer * rs->inner) {
      cg_gen_fail(gen, "output %%%d is not one value per reduced output", (int)v);
      continue;
    }
    cg_ctx c;
    cg_ctx_linear(&c, n->rank, n->shape, lin, VC_GATHER);
    char name[160];
    cg_gen_stored(gen, v, &c, name, sizeof name);
    cg_line(gen, "kf_st(p%d + (%s), %s);", (int)v, lin, name);
  }
}

/* The combine hole: slices through shared memory, folded in order 0..TY-1
 * by thread row 0 (a leading barrier makes the second use safe). */
static void cols_combine(const cg_part *p, const cols_bufs *b, const char *stores, cg_buf *out) {
  cg_printf(out,
            "  kf_sync<%u, %d>();\n#pragma unroll\n  for (int l = 0; l < LANES; l++) {\n%s  }\n"
            "  kf_sync<%u, %d>();\n  if (ty == 0)\n    for (int i = 1; i < TY; i++)\n"
            "#pragma unroll\n      for (int l = 0; l < LANES; l++) {\n%s      }\n",
            p->threads, p->launch_threads, stores, p->threads, p->launch_threads,
            cg_use(out, &b->fold));
}

static kf_status emit_cols(cg_emit_args *a, const red_shape *rs) {
  cg_part *p = a->part;
  cols_plan cp;
  cg_reduce_cols(a, rs, &cp);
  const char *idx = p->index64 ? "long long" : "int";
  cols_bufs b;
  memset(&b, 0, sizeof b);
  cg_buf stores = {0}, combine = {0}, params = {0}, args = {0};
  cg_gen gen;
  cg_gen_init(&gen, a->g, a->k, &b.acc, idx);
  for (int i = 0; i < a->k->n_nodes; i++) {
    int32_t v = a->k->nodes[i];
    if (!ir_is_reduction(a->g, &a->g->nodes[v])) continue;
    cols_reduction(a, rs, &cp, v, &b);
    cg_printf(&stores, "    %skf_c%d[ty][l][tx] = acc%d[l];\n",
              cp.tx * cp.ty < 256 ? "if (ty < TY) " : "", (int)v, (int)v);
    char bound[32];
    snprintf(bound, sizeof bound, "red%d", (int)v);
    cg_gen_bind(&gen, v, NULL, bound);
  }
  cg_printf(&b.globals, "__device__ unsigned %s_count[%lld];\n", p->fn,
            (long long)(cp.split > 1 ? rs->outer * cp.nt : 1));
  cols_elements(a, rs, &cp, &gen, &b);
  cols_epilogue(a, rs, &gen, &b);
  cols_combine(p, &b, cg_use(&combine, &stores), &combine);
  cg_param_decls(a->g, p, &params);
  cg_param_args(p, &args);
  char outer[32], red[32], inner[32], lanes[16], tx[16], ty[16], nt[32], sp[32], chunk[32], th[16],
      la[16];
  const char *sfx = p->index64 ? "LL" : "";
  snprintf(outer, sizeof outer, "%lld%s", (long long)rs->outer, sfx);
  snprintf(red, sizeof red, "%lld%s", (long long)rs->red, sfx);
  snprintf(inner, sizeof inner, "%lld%s", (long long)rs->inner, sfx);
  snprintf(lanes, sizeof lanes, "%d", cp.w);
  snprintf(tx, sizeof tx, "%d", cp.tx);
  snprintf(ty, sizeof ty, "%d", cp.ty);
  snprintf(nt, sizeof nt, "%lld", (long long)cp.nt);
  snprintf(sp, sizeof sp, "%lld", (long long)cp.split);
  snprintf(chunk, sizeof chunk, "%lld%s", (long long)cp.chunk, sfx);
  snprintf(th, sizeof th, "%u", p->threads);
  snprintf(la, sizeof la, "%d", p->launch_threads);
  /* scalar lanes (odd inner) keep 8 loads in flight per thread; a heavy
   * body fewer copies (the unroll changes code size, not the order) */
  int cost = cg_body_cost(a->g, a->k), unroll = cp.w == 1 ? 8 : 4;
  while (unroll > 1 && cost * cp.w * unroll > 256) unroll /= 2;
  char un[16];
  snprintf(un, sizeof un, "%d", unroll);
#define S(x) cg_use(a->out, &(x))
  cg_hole holes[] = {{"UNROLL", un},
                     {"live", cp.tx * cp.ty < 256 ? " && ty < TY" : ""},
                     {"fn", p->fn},
                     {"IDX", idx},
                     {"OUTER", outer},
                     {"RED", red},
                     {"INNER", inner},
                     {"LANES", lanes},
                     {"TX", tx},
                     {"TY", ty},
                     {"NT", nt},
                     {"SPLIT", sp},
                     {"CHUNK", chunk},
                     {"THREADS", th},
                     {"LAUNCH", la},
                     {"params", S(params)},
                     {"args", S(args)},
                     {"globals", S(b.globals)},
                     {"decl", S(b.decl)},
                     {"pre_decl", S(b.pre_decl)},
                     {"pre", S(b.pre)},
                     {"accumulate", S(b.acc)},
                     {"combine", S(combine)},
                     {"partial_store", S(b.pstore)},
                     {"partial_load", S(b.pload)},
                     {"epilogue", S(b.epi)},
                     {"aligned", cg_use_aligned(a->out, &b.align)},
                     {"BID", cg_part_bid_type(p)}};
#undef S
  kf_status st = KF_OK;
  if (gen.failed) {
    snprintf(a->err, a->errsize, "%s: %s", a->k->name, gen.err);
    st = gen.status;
  } else if (!cg_fill(a->out, "reduce_cols.cu", holes, (int)(sizeof holes / sizeof holes[0]),
                      a->err, a->errsize)) {
    st = KF_ERR_INTERNAL;
  }
  cg_buf *all[] = {&b.globals, &b.decl, &b.pre_decl, &b.pre,  &b.acc,   &b.fold, &b.pstore,
                   &b.pload,   &b.epi,  &b.align,    &stores, &combine, &params, &args};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
    if (all[i]->oom && st == KF_OK) st = KF_ERR_OUT_OF_MEMORY;
    cg_buf_free(all[i]);
  }
  int vb = 0;
  for (int i = 0; i < a->k->n_inputs; i++) {
    int s = (int)kf_dtype_size(a->g->nodes[a->k->inputs[i]].dtype) * cp.w;
    if (s > vb) vb = s;
  }
  p->vec_bytes = vb > 16 ? 16 : vb;
  cg_gen_free(&gen);
  return st;
}

kf_status cg_emit_reduce(cg_emit_args *a) {
  red_shape rs;
  kf_status st = cg_reduce_shape(a, &rs);
  if (st != KF_OK) return st;
  if (rs.inner > 1) return emit_cols(a, &rs);
  cg_part *p = a->part;
  rows_plan rp;
  cg_reduce_rows(a, &rs, &rp);
  const char *idx = p->index64 ? "long long" : "int";
  red_bufs b;
  memset(&b, 0, sizeof b);
  cg_gen gen;
  cg_gen_init(&gen, a->g, a->k, &b.acc, idx);
  emit_reductions(a, &rs, &rp, &gen, &b);
  emit_epilogue(a, &rs, &gen, &b);
  cg_buf params = {0};
  cg_param_decls(a->g, p, &params);
  cg_param_args(p, &b.args);
  /* the unroll only changes the code size, not the order: fewer copies of
   * a heavy body (each step inlines it V times) */
  int cost = cg_body_cost(a->g, a->k) * rp.v;
  int unroll = cost <= 64 ? 4 : cost <= 128 ? 2 : 1;
  char outer[32], red[32], sp[32], chunk[32], th[16], la[16], v[16], un[16];
  const char *sfx = p->index64 ? "LL" : "";
  snprintf(outer, sizeof outer, "%lld%s", (long long)rs.outer, sfx);
  snprintf(red, sizeof red, "%lld%s", (long long)rs.red, sfx);
  snprintf(sp, sizeof sp, "%lld", (long long)rp.split);
  snprintf(chunk, sizeof chunk, "%lld%s", (long long)rp.chunk, sfx);
  snprintf(th, sizeof th, "%u", p->threads);
  snprintf(la, sizeof la, "%d", p->launch_threads);
  snprintf(v, sizeof v, "%d", rp.v);
  snprintf(un, sizeof un, "%d", unroll);
#define S(x) cg_use(a->out, &(x))
  cg_hole holes[] = {{"fn", p->fn},
                     {"IDX", idx},
                     {"OUTER", outer},
                     {"RED", red},
                     {"V", v},
                     {"UNROLL", un},
                     {"SPLIT", sp},
                     {"CHUNK", chunk},
                     {"THREADS", th},
                     {"LAUNCH", la},
                     {"params", S(params)},
                     {"args", S(b.args)},
                     {"globals", S(b.globals)},
                     {"decl", S(b.decl)},
                     {"pre_decl", S(b.pre_decl)},
                     {"pre", S(b.pre)},
                     {"accumulate", S(b.acc)},
                     {"combine", S(b.combine)},
                     {"partial_store", S(b.pstore)},
                     {"partial_load", S(b.pload)},
                     {"epilogue", S(b.epi)},
                     {"aligned", cg_use_aligned(a->out, &b.align)},
                     {"BID", cg_part_bid_type(p)}};
#undef S
  if (gen.failed) {
    snprintf(a->err, a->errsize, "%s: %s", a->k->name, gen.err);
    st = gen.status;
  } else if (!cg_fill(a->out, "reduce_rows.cu", holes, (int)(sizeof holes / sizeof holes[0]),
                      a->err, a->errsize)) {
    st = KF_ERR_INTERNAL;
  }
  cg_buf *all[] = {&params,    &b.globals, &b.decl,  &b.pre_decl, &b.pre,   &b.acc,
                   &b.combine, &b.pstore,  &b.pload, &b.epi,      &b.align, &b.args};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
    if (all[i]->oom && st == KF_OK) st = KF_ERR_OUT_OF_MEMORY;
    cg_buf_free(all[i]);
  }
  p->vec_bytes = 0;
  for (int i = 0; i < a->k->n_inputs; i++) {
    int sz = (int)kf_dtype_size(a->g->nodes[a->k->inputs[i]].dtype) * rp.v;
    if (sz > p->vec_bytes) p->vec_bytes = sz > 16 ? 16 : sz;
  }
  cg_gen_free(&gen);
  return st;
}
