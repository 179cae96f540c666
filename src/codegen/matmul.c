/* matmul.c - the part function of a matmul kernel: the simple tiled GEMM of
 * templates/matmul.cu with prologue on load and a pointwise epilogue. */
#include "codegen/matmul.h"

#include <stdio.h>
#include <string.h>

#include "codegen/buf.h"
#include "codegen/cg_internal.h"
#include "codegen/expr.h"
#include "codegen/gemm_sm80.h"
#include "codegen/gemm_sm90.h"
#include "codegen/index_ctx.h"
#include "codegen/part.h"
#include "codegen/template.h"

const ir_node *cg_find_matmul(const cg_emit_args *a, int32_t *id) {
  for (int i = 0; i < a->k->n_nodes; i++) {
    const ir_node *n = &a->g->nodes[a->k->nodes[i]];
    if (n->op == IR_OP_MATMUL) {
      *id = a->k->nodes[i];
      return n;
    }
  }
  return NULL;
}

const ir_node *cg_find_matmul2(const cg_emit_args *a, int32_t first, int32_t *id2) {
  for (int i = 0; a->k->paired && i < a->k->n_nodes; i++) {
    int32_t v = a->k->nodes[i];
    if (v != first && a->g->nodes[v].op == IR_OP_MATMUL) {
      *id2 = v;
      return &a->g->nodes[v];
    }
  }
  return NULL;
}

kf_status cg_plan_matmul(cg_emit_args *a) {
  int32_t id = -1;
  const ir_node *mm = cg_find_matmul(a, &id);
  if (!mm) {
    snprintf(a->err, a->errsize, "%s: a matmul kernel without a matmul", a->k->name);
    return KF_ERR_UNSUPPORTED;
  }
  if (cg_gemm90_fits(a, NULL, 0)) return cg_plan_gemm90(a);
  /* A paired product off the sm_90 template (its fallback form for
   * operands the copy engine cannot read, another arch's source) is the
   * simple kernel with two accumulators: slow, correct, the same buffers. */
  if (!a->k->paired && cg_gemm80_fits(a, NULL, 0)) return cg_plan_gemm80(a);
  const ir_node *A = &a->g->nodes[mm->args[0]];
  int64_t m = mm->shape[mm->rank - 2], n = mm->shape[mm->rank - 1], k = A->shape[A->rank - 1];
  int64_t batch = kf_value_numel(a->g, id) / (m * n);
  cg_part *p = a->part;
  p->threads = 256;
  cg_part_grid(p, batch * cg_ceil_div(m, 16) * cg_ceil_div(n, 16));
  p->lanes = 1;
  int64_t biggest = batch * m * n;
  for (int i = 0; i < a->k->n_inputs; i++) {
    int64_t e = kf_value_numel(a->g, a->k->inputs[i]);
    if (e > biggest) biggest = e;
  }
  p->max_offset = biggest - 1;
  cg_index_type(biggest + k + 16, &p->index64);
  p->vec_bytes = (int)kf_dtype_size(mm->dtype);
  snprintf(p->decisions, sizeof p->decisions,
           "matmul: %lld x %lldx%lldx%lld%s, simple 16x16 shared-memory tiles (not tensor "
           "cores), %s index",
           (long long)batch, (long long)m, (long long)n, (long long)k,
           a->k->paired ? " paired (two B, one A)" : "", p->index64 ? "64-bit" : "32-bit");
  return KF_OK;
}

void cg_matmul_operand_ctx(const ir_node *mm, const ir_node *x, const char *rv, const char *cv,
                           cg_ctx *c) {
  cg_ctx out;
  int bounds[2] = {0, mm->rank - 2};
  const char *vars[1] = {"bt"};
  cg_ctx_groups(&out, mm->rank, mm->shape, 1, bounds, vars, VC_GATHER);
  memset(c, 0, sizeof *c);
  c->rank = x->rank;
  for (int d = 0; d < x->rank; d++) c->shape[d] = x->shape[d];
  int off = mm->rank - x->rank;
  for (int d = 0; d < x->rank - 2; d++)
    snprintf(c->coord[d], sizeof c->coord[d], "%s", x->shape[d] == 1 ? "0" : out.coord[d + off]);
  snprintf(c->coord[x->rank - 2], sizeof c->coord[0], "%s", rv);
  snprintf(c->coord[x->rank - 1], sizeof c->coord[0], "%s", cv);
}

void cg_matmul_epilogue(cg_gen *gen, const cg_emit_args *a, const ir_node *mm, int32_t id,
                        int indent) {
  const kf_graph *g = a->g;
  int64_t m = mm->shape[mm->rank - 2], n = mm->shape[mm->rank - 1];
  cg_gen_bind(gen, id, NULL, "acc");
  gen->indent = indent;
  char lin[96], name[160];
  cg_ctx c;
  snprintf(lin, sizeof lin, "bt * %lld + row * %lld + col", (long long)(m * n), (long long)n);
  for (int i = 0; i < a->k->n_outputs; i++) {
    int32_t v = a->k->outputs[i];
    const ir_node *o = &g->nodes[v];
    if (o->rank != mm->rank || memcmp(o->shape, mm->shape, sizeof o->shape)) {
      cg_gen_fail(gen, "output %%%d does not have the matmul's shape", (int)v);
      continue;
    }
    cg_ctx_linear(&c, o->rank, o->shape, lin, VC_GATHER);
    int bounds[4] = {0, o->rank - 2, o->rank - 1, o->rank};
    const char *vars[3] = {"bt", "row", "col"};
    cg_ctx_groups(&c, o->rank, o->shape, 3, bounds, vars, VC_GATHER);
    cg_gen_stored(gen, v, &c, name, sizeof name);
    cg_line(gen, "kf_st(p%d + (%s), %s);", (int)v, lin, name);
  }
}

kf_status cg_emit_matmul(cg_emit_args *a) {
  if (a->part->gemm90) return cg_emit_gemm90(a);
  if (a->part->gemm80) return cg_emit_gemm80(a);
  int32_t id = -1;
  const ir_node *mm = cg_find_matmul(a, &id);
  const kf_graph *g = a->g;
  cg_part *p = a->part;
  const char *idx = p->index64 ? "long long" : "int";
  const ir_node *A = &g->nodes[mm->args[0]], *B = &g->nodes[mm->args[1]];
  int64_t m = mm->shape[mm->rank - 2], n = mm->shape[mm->rank - 1], k = A->shape[A->rank - 1];
  cg_buf la = {0}, lb = {0}, lb2 = {0}, epi = {0}, params = {0};
  cg_gen gen;
  cg_gen_init(&gen, g, a->k, &la, idx);
  gen.indent = 4;
  cg_ctx c;
  char name[160];
  cg_matmul_operand_ctx(mm, A, "ar", "ak", &c);
  cg_gen_value(&gen, mm->args[0], &c, name, sizeof name);
  cg_line(&gen, "v = %s;", name);
  cg_gen_reset_memo(&gen);
  gen.code = &lb;
  cg_matmul_operand_ctx(mm, B, "bk", "bc", &c);
  cg_gen_value(&gen, mm->args[1], &c, name, sizeof name);
  cg_line(&gen, "v = %s;", name);
  cg_gen_reset_memo(&gen);
  int32_t id2 = -1;
  const ir_node *m2 = cg_find_matmul2(a, id, &id2);
  if (m2) { /* the second B, staged beside the first */
    gen.code = &lb2;
    cg_matmul_operand_ctx(m2, &g->nodes[m2->args[1]], "bk", "bc", &c);
    cg_gen_value(&gen, m2->args[1], &c, name, sizeof name);
    cg_line(&gen, "v = %s;", name);
    cg_gen_reset_memo(&gen);
    cg_gen_bind(&gen, id2, NULL, "acc2"); /* rounded to its dtype, as acc */
  }
  gen.code = &epi;
  cg_matmul_epilogue(&gen, a, mm, id, 2);
  cg_buf load2 = {0};
  if (m2)
    cg_printf(&load2,
              "    {\n"
              "      const %s bk = k0 + ty, bc = col;\n"
              "      %s v = (%s)0;\n"
              "      if (bk < %lld && bc < %lld) {\n"
              "%s"
              "      }\n"
              "      kf_bs2[ty][tx] = v;\n"
              "    }\n",
              idx, cg_compute_type(mm->dtype), cg_compute_type(mm->dtype), (long long)k,
              (long long)n, lb2.s ? lb2.s : "");
  cg_param_decls(g, p, &params);
  char sb[32], sm[32], sn[32], sk[32], mt[32], nt[32], ls[16];
  const char *sfx = p->index64 ? "LL" : "";
  snprintf(sb, sizeof sb, "%lld%s", (long long)(kf_value_numel(g, id) / (m * n)), sfx);
  snprintf(sm, sizeof sm, "%lld%s", (long long)m, sfx);
  snprintf(sn, sizeof sn, "%lld%s", (long long)n, sfx);
  snprintf(sk, sizeof sk, "%lld%s", (long long)k, sfx);
  snprintf(mt, sizeof mt, "%lld%s", (long long)cg_ceil_div(m, 16), sfx);
  snprintf(nt, sizeof nt, "%lld%s", (long long)cg_ceil_div(n, 16), sfx);
  snprintf(ls, sizeof ls, "%d", p->launch_threads);
  char pair_decl[160] = "", pair_acc[160] = "";
  const char *ct = cg_compute_type(mm->dtype);
  if (m2) {
    snprintf(pair_decl, sizeof pair_decl, "  __shared__ %s kf_bs2[16][17];\n  %s acc2 = (%s)0;\n",
             ct, ct, ct);
    snprintf(pair_acc, sizeof pair_acc,
             "#pragma unroll\n    for (int i = 0; i < 16; i++) acc2 = kf_add(acc2, "
             "kf_mul(kf_as[ty][i], kf_bs2[i][tx]));\n");
  }
  cg_hole holes[] = {{"fn", p->fn},
                     {"IDX", idx},
                     {"BATCH", sb},
                     {"M", sm},
                     {"N", sn},
                     {"K", sk},
                     {"MT", mt},
                     {"NT", nt},
                     {"ACC", cg_compute_type(mm->dtype)},
                     {"LAUNCH", ls},
                     {"params", cg_use(a->out, &params)},
                     {"load_a", cg_use(a->out, &la)},
                     {"load_b", cg_use(a->out, &lb)},
                     {"pair_decl", pair_decl},
                     {"load_b2", cg_use(a->out, &load2)},
                     {"pair_acc", pair_acc},
                     {"epilogue", cg_use(a->out, &epi)},
                     {"BID", cg_part_bid_type(p)}};
  kf_status st = KF_OK;
  if (gen.failed) {
    snprintf(a->err, a->errsize, "%s: %s", a->k->name, gen.err);
    st = gen.status;
  } else if (!cg_fill(a->out, "matmul.cu", holes, (int)(sizeof holes / sizeof holes[0]), a->err,
                      a->errsize)) {
    st = KF_ERR_INTERNAL;
  }
  if (st == KF_OK && (la.oom || lb.oom || lb2.oom || load2.oom || epi.oom || params.oom))
    st = KF_ERR_OUT_OF_MEMORY;
  cg_gen_free(&gen);
  cg_buf_free(&la);
  cg_buf_free(&lb);
  cg_buf_free(&lb2);
  cg_buf_free(&load2);
  cg_buf_free(&epi);
  cg_buf_free(&params);
  return st;
}
