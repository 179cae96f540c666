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

kf_status cg_plan_matmul(cg_emit_args *a) {
  int32_t id = -1;
  const ir_node *mm = cg_find_matmul(a, &id);
  if (!mm) {
    snprintf(a->err, a->errsize, "%s: a matmul kernel without a matmul", a->k->name);
    return KF_ERR_UNSUPPORTED;
  }
  char why[128] = "";
  if (cg_gemm90_fits(a, why, sizeof why)) return cg_plan_gemm90(a);
  if (a->k->paired) { /* the fuser pairs only for a target that takes them */
    snprintf(a->err, a->errsize,
             "%s: a paired product needs the sm_90 template (%s); plan it with KFUSE_GEMM_PAIR=0",
             a->k->name, why);
    return KF_ERR_UNSUPPORTED;
  }
  if (cg_gemm80_fits(a, NULL, 0)) return cg_plan_gemm80(a);
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
           "matmul: %lld x %lldx%lldx%lld, simple 16x16 shared-memory tiles (not tensor cores), "
           "%s index",
           (long long)batch, (long long)m, (long long)n, (long long)k,
           p->index64 ? "64-bit" : "32-bit");
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
  cg_buf la = {0}, lb = {0}, epi = {0}, params = {0};
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
  gen.code = &epi;
  cg_matmul_epilogue(&gen, a, mm, id, 2);
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
  if (st == KF_OK && (la.oom || lb.oom || epi.oom || params.oom)) st = KF_ERR_OUT_OF_MEMORY;
  cg_gen_free(&gen);
  cg_buf_free(&la);
  cg_buf_free(&lb);
  cg_buf_free(&epi);
  cg_buf_free(&params);
  return st;
}
