/* flash.c - an attention kernel's part function: templates/attention.cu
 * with the score modifier (the graph's pointwise chain between the two
 * products, generated per element) and where each operand's rows lie. */
#include "codegen/flash.h"

#include <stdio.h>
#include <string.h>

#include "codegen/expr.h"
#include "codegen/flash90.h"
#include "codegen/index_ctx.h"
#include "codegen/matmul.h"
#include "codegen/part.h"
#include "codegen/template.h"

/* Keys per tile: 64, or 32 for head dim 256 (shared memory of sm_86). */
static int tile_keys(const fuse_attn *at) {
  return at->d > 128 ? 32 : 64;
}

static uint32_t smem_bytes(const fuse_attn *at) {
  return (uint32_t)((64 + 4 * tile_keys(at)) * at->d * 2);
}

kf_status cg_plan_flash(cg_emit_args *a) {
  const fuse_attn *at = &a->k->attn;
  cg_part *p = a->part;
  int cc = a->t->cc_major * 10 + a->t->cc_minor;
  if (cc < 80) {
    snprintf(a->err, a->errsize, "%s: the attention kernel needs sm_80 or later (target sm_%d)",
             a->k->name, cc);
    return KF_ERR_UNSUPPORTED;
  }
  if (!p->alone) {
    snprintf(a->err, a->errsize, "%s: an attention kernel shares its launch", a->k->name);
    return KF_ERR_INTERNAL;
  }
  char why[160] = "";
  if (cg_flash90_fits(a, why, sizeof why)) return cg_plan_flash90(a);
  p->threads = 128;
  p->smem = smem_bytes(at);
  if ((int)p->smem > a->t->max_smem_per_block) {
    snprintf(a->err, a->errsize,
             "%s: the attention kernel needs %u bytes of shared memory, sm_%d "
             "has %d",
             a->k->name, p->smem, cc, a->t->max_smem_per_block);
    return KF_ERR_UNSUPPORTED;
  }
  cg_part_grid(p, at->batch * cg_ceil_div(at->sq, 64));
  p->lanes = 1;
  int64_t biggest = kf_value_numel(a->g, at->out);
  for (int i = 0; i < a->k->n_inputs; i++) {
    int64_t e = kf_value_numel(a->g, a->k->inputs[i]);
    if (e > biggest) biggest = e;
  }
  p->max_offset = biggest - 1;
  p->index64 = true; /* offsets are long long throughout */
  p->vec_bytes = 16;
  snprintf(p->decisions, sizeof p->decisions,
           "attention: %lld heads x %lld queries x %lld keys, head dim %lld: flash (mma.sync "
           "m16n8k16, 64 queries x %d keys a tile, cp.async double buffer, online softmax)%s",
           (long long)at->batch, (long long)at->sq, (long long)at->sk, (long long)at->d,
           tile_keys(at), at->causal ? ", causal tile skipping" : "");
  if (why[0]) { /* on sm_90: why the Hopper kernel did not take it */
    size_t used = strlen(p->decisions);
    snprintf(p->decisions + used, sizeof p->decisions - used, "; not the sm_90 kernel: %s", why);
  }
  return KF_OK;
}

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
static int32_t row_struct(cg_gen *gen, const char *fn, const char *tag, const ir_node *mm,
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

/* "<fn>_mod(acc, bt, qi, ki, params)": the chain's value x at one score. */
static void modifier(cg_gen *gen, const cg_emit_args *a, const char *fn, cg_buf *out) {
  const fuse_attn *at = &a->k->attn;
  const ir_node *x = &a->g->nodes[at->x];
  cg_buf body = {0}, decls = {0};
  gen->code = &body;
  gen->indent = 2;
  cg_gen_reset_memo(gen);
  /* the f32 accumulator; the binding rounds it to the product's dtype
   * before any use, as the graph rounds the product */
  cg_gen_bind(gen, at->mm1, NULL, "kf_acc");
  cg_ctx c;
  int bounds[4] = {0, x->rank - 2, x->rank - 1, x->rank};
  const char *vars[3] = {"bt", "qi", "ki"};
  cg_ctx_groups(&c, x->rank, x->shape, 3, bounds, vars, VC_GATHER);
  char name[160];
  cg_gen_value(gen, at->x, &c, name, sizeof name);
  cg_param_decls(a->g, a->part, &decls);
  cg_printf(out,
            "KF_INLINE float %s_mod(float kf_acc, long long bt, long long qi, long long ki, "
            "%s) {\n  (void)bt, (void)qi, (void)ki;\n%s  return (float)%s;\n}\n",
            fn, decls.s ? decls.s : "", body.s ? body.s : "", name);
  if (body.oom || decls.oom) cg_gen_oom(gen);
  cg_buf_free(&body);
  cg_buf_free(&decls);
}

void cg_flash_helpers(cg_gen *gen, const cg_emit_args *a, cg_buf *pre, int32_t stored[3]) {
  const fuse_attn *at = &a->k->attn;
  const char *fn = a->part->fn;
  const ir_node *m1 = &a->g->nodes[at->mm1], *m2 = &a->g->nodes[at->mm2];
  stored[0] = row_struct(gen, fn, "QR", m1, at->q, false, pre);
  stored[1] = row_struct(gen, fn, "KR", m1, at->kt, true, pre);
  stored[2] = row_struct(gen, fn, "VR", m2, at->v, false, pre);
  modifier(gen, a, fn, pre);
}

kf_status cg_emit_flash(cg_emit_args *a) {
  if (a->part->flash90) return cg_emit_flash90(a);
  const fuse_attn *at = &a->k->attn;
  const kf_graph *g = a->g;
  cg_part *p = a->part;
  cg_buf pre = {0}, params = {0}, args = {0};
  cg_gen gen;
  cg_gen_init(&gen, g, a->k, &pre, "long long");
  int32_t st3[3];
  cg_flash_helpers(&gen, a, &pre, st3);
  int32_t sq = st3[0], sk = st3[1], sv = st3[2];
  cg_param_decls(g, p, &params);
  cg_param_args(p, &args);
  char qn[16], kn[16], vn[16], on[16], qr[112], kr[112], vr[112];
  snprintf(qn, sizeof qn, "p%d", (int)sq);
  snprintf(kn, sizeof kn, "p%d", (int)sk);
  snprintf(vn, sizeof vn, "p%d", (int)sv);
  snprintf(on, sizeof on, "p%d", (int)at->out);
  snprintf(qr, sizeof qr, "%s_QR", p->fn);
  snprintf(kr, sizeof kr, "%s_KR", p->fn);
  snprintf(vr, sizeof vr, "%s_VR", p->fn);
  char d[16], bn[16], sqs[32], sks[32], bat[32], qt[32], coff[32];
  snprintf(d, sizeof d, "%lld", (long long)at->d);
  snprintf(bn, sizeof bn, "%d", tile_keys(at));
  snprintf(sqs, sizeof sqs, "%lldLL", (long long)at->sq);
  snprintf(sks, sizeof sks, "%lldLL", (long long)at->sk);
  snprintf(bat, sizeof bat, "%lldLL", (long long)at->batch);
  snprintf(qt, sizeof qt, "%lldLL", (long long)cg_ceil_div(at->sq, 64));
  snprintf(coff, sizeof coff, "%lldLL", (long long)at->causal_off);
  cg_puts(a->out, cg_use(a->out, &pre));
  cg_hole holes[] = {{"fn", p->fn},
                     {"BID", cg_part_bid_type(p)},
                     {"params", cg_use(a->out, &params)},
                     {"args", cg_use(a->out, &args)},
                     {"T", cg_storage_type(at->dtype)},
                     {"BF", at->dtype == KF_BF16 ? "true" : "false"},
                     {"D", d},
                     {"BN", bn},
                     {"SQ", sqs},
                     {"SK", sks},
                     {"BATCH", bat},
                     {"QT", qt},
                     {"CAUSAL", at->causal ? "true" : "false"},
                     {"COFF", coff},
                     {"q", qn},
                     {"k", kn},
                     {"v", vn},
                     {"o", on},
                     {"QR", qr},
                     {"KR", kr},
                     {"VR", vr}};
  kf_status st = KF_OK;
  if (gen.failed) {
    snprintf(a->err, a->errsize, "%s: %s", a->k->name, gen.err);
    st = gen.status;
  } else if (!cg_fill(a->out, "attention.cu", holes, (int)(sizeof holes / sizeof holes[0]), a->err,
                      a->errsize)) {
    st = KF_ERR_INTERNAL;
  }
  if (st == KF_OK && (pre.oom || params.oom || args.oom)) st = KF_ERR_OUT_OF_MEMORY;
  cg_gen_free(&gen);
  cg_buf_free(&pre);
  cg_buf_free(&params);
  cg_buf_free(&args);
  return st;
}
