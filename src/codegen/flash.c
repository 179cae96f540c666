/* flash.c - an attention kernel's part function: templates/attention.cu
 * with the score modifier (the graph's pointwise chain between the two
 * products, generated per element) and where each operand's rows lie. */
#include "codegen/flash.h"

#include <stdio.h>
#include <string.h>

#include "codegen/expr.h"
#include "codegen/flash90.h"
#include "codegen/flash_decode.h"
#include "codegen/flash_gen.h"
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
  kf_status ok = cg_flash_part_check(a);
  if (ok != KF_OK) return ok;
  /* few queries: the split-key decode kernel, chosen here once */
  if (cg_flash_decode_takes(a)) return cg_plan_flash_decode(a);
  char why[160] = "";
  if (cg_flash90_fits(a, why, sizeof why)) return cg_plan_flash90(a);
  p->threads = 128;
  p->smem = smem_bytes(at);
  if ((int)p->smem > a->t->max_smem_per_block) {
    snprintf(a->err, a->errsize,
             "%s: the attention kernel needs %u bytes of shared memory, sm_%d "
             "has %d",
             a->k->name, p->smem, a->t->cc_major * 10 + a->t->cc_minor, a->t->max_smem_per_block);
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
           "m16n8k16, 64 queries x %d keys a tile, cp.async double buffer, online softmax)%s%s",
           (long long)at->batch, (long long)at->sq, (long long)at->sk, (long long)at->d,
           tile_keys(at), at->causal ? ", causal tile skipping" : "",
           at->lse >= 0 ? ", writing the logsumexp" : "");
  if (why[0]) { /* on sm_90: why the Hopper kernel did not take it */
    size_t used = strlen(p->decisions);
    snprintf(p->decisions + used, sizeof p->decisions - used, "; not the sm_90 kernel: %s", why);
  }
  return KF_OK;
}

kf_status cg_emit_flash(cg_emit_args *a) {
  if (a->part->flash90) return cg_emit_flash90(a);
  if (a->part->flash_decode) return cg_emit_flash_decode(a);
  const fuse_attn *at = &a->k->attn;
  const kf_graph *g = a->g;
  cg_part *p = a->part;
  cg_buf pre = {0}, params = {0}, args = {0};
  cg_gen gen;
  cg_gen_init(&gen, g, a->k, &pre, "long long");
  int32_t st3[3];
  cg_flash_helpers(&gen, a, &pre, st3);
  cg_param_decls(g, p, &params);
  cg_param_args(p, &args);
  cg_flash_names nm;
  cg_flash_names_of(p, at, st3, &nm);
  char lse[192];
  cg_flash_lse(a, &pre, "t4 == 0 && q0 + warp * 16 + g + r * 8 < SQ",
               "bt * SQ + q0 + warp * 16 + g + r * 8", "mrow[r]", "l", lse, sizeof lse);
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
                     {"q", nm.q},
                     {"k", nm.k},
                     {"v", nm.v},
                     {"o", nm.o},
                     {"QR", nm.qr},
                     {"KR", nm.kr},
                     {"VR", nm.vr},
                     {"lse", lse}};
  kf_status st = KF_OK;
  if (gen.failed) {
    snprintf(a->err, a->errsize, "%s: %s", a->k->name, gen.err);
    st = gen.status;
  } else if (!cg_fill(a->out, "sm80_common.cu", NULL, 0, a->err, a->errsize) ||
             !cg_fill(a->out, "attention.cu", holes, (int)(sizeof holes / sizeof holes[0]), a->err,
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
