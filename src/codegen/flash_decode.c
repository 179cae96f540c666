/* flash_decode.c - a decode attention kernel's part function:
 * templates/attention_decode.cu with the graph's score modifier and where
 * each operand's rows lie, and the shape's split of the keys. */
#include "codegen/flash_decode.h"

#include <stdio.h>
#include <string.h>

#include "codegen/expr.h"
#include "codegen/flash_gen.h"
#include "codegen/part.h"
#include "codegen/template.h"
#include "fuser/attention_decode.h"

/* Shared memory a decode block's q tile and k/v ring take at most: two
 * blocks stay resident per SM on sm_80 and sm_90; sm_86 and sm_89 give a
 * block 99 KB. */
static int64_t smem_budget(const cg_target *t) {
  int cc = t->cc_major * 10 + t->cc_minor;
  return cc == 86 || cc == 87 || cc == 89 ? 99 * 1024 : 104 * 1024;
}
/* Most blocks a cluster splits one group's keys over (the portable size). */
#define FD_MAX_SPLIT 8

typedef struct fd_cfg {
  fuse_attn_decode dec;
  int wm, wk, stages, cl;
  int64_t kend, steps;
  uint32_t smem;
} fd_cfg;

/* The visible keys end: all of them, or a causal mask's last visible key
 * of the last query, + 1. */
static int64_t key_end(const fuse_attn *at) {
  if (!at->causal) return at->sk;
  int64_t e = at->sq + at->causal_off;
  return e < 0 ? 0 : e > at->sk ? at->sk : e;
}

static uint32_t smem_of(const fuse_attn *at, int wm, int wk, int stages, int cl) {
  int64_t mp = 16 * wm, d = at->d;
  int64_t ring = (int64_t)stages * 16 * wk * d * 2 * 2;
  int64_t part = (wk * mp * d + 2 * wk * mp + mp * cl * wk) * 4;
  return (uint32_t)(mp * d * 2 + (ring > part ? ring : part));
}

/* Splits of one group's keys: enough blocks for a wave of resident ones
 * (every block of a launch at once: no tail), each block at least two
 * steps of keys; KFUSE_ATTN_SPLIT overrides. 1 before sm_90 (no clusters). */
static int split_of(const cg_emit_args *a, const fd_cfg *c) {
  if (a->t->cc_major < 9) return 1;
  if (a->t->knobs && a->t->knobs->attn_split > 0) return a->t->knobs->attn_split;
  int64_t threads = 32 * c->wm * c->wk;
  int64_t per_sm =
      (228 * 1024) / (smem_of(&a->k->attn, c->wm, c->wk, c->stages, FD_MAX_SPLIT) + 1024);
  if (a->t->max_threads_per_sm / threads < per_sm) per_sm = a->t->max_threads_per_sm / threads;
  if (per_sm < 1) per_sm = 1;
  int64_t cl = (int64_t)a->t->sm_count * per_sm / c->dec.pairs;
  if (cl > c->steps / 2) cl = c->steps / 2;
  return cl < 1 ? 1 : cl > FD_MAX_SPLIT ? FD_MAX_SPLIT : (int)cl;
}

static void cfg_of(const cg_emit_args *a, fd_cfg *c) {
  const fuse_attn *at = &a->k->attn;
  memset(c, 0, sizeof *c);
  fuse_attn_decode_pick(a->g, at, a->k->nodes, a->k->n_nodes, &c->dec, NULL, 0);
  c->wm = (int)cg_ceil_div(c->dec.rows, 16);
  int kw = at->d > 128 ? 2 : 4; /* head dim 256: half the key warps, so a ring fits */
  c->wk = kw / c->wm > 1 ? kw / c->wm : 1;
  c->kend = key_end(at);
  c->steps = cg_ceil_div(c->kend, 16 * c->wk);
  int64_t mp = 16 * c->wm, stage = (int64_t)16 * c->wk * at->d * 4;
  int64_t st = (smem_budget(a->t) - mp * at->d * 2) / stage;
  c->stages = st < 2 ? 2 : st > 8 ? 8 : (int)st;
  c->cl = split_of(a, c);
  c->smem = smem_of(at, c->wm, c->wk, c->stages, c->cl);
}

bool cg_flash_decode_takes(const cg_emit_args *a) {
  fuse_attn_decode dec;
  return a->k->kind == FK_ATTENTION &&
         fuse_attn_decode_pick(a->g, &a->k->attn, a->k->nodes, a->k->n_nodes, &dec, NULL, 0);
}

kf_status cg_plan_flash_decode(cg_emit_args *a) {
  const fuse_attn *at = &a->k->attn;
  cg_part *p = a->part;
  kf_status ok = cg_flash_part_check(a);
  if (ok != KF_OK) return ok;
  p->flash_decode = true;
  fd_cfg c;
  cfg_of(a, &c);
  p->threads = (uint32_t)(32 * c.wm * c.wk);
  p->smem = c.smem;
  if ((int)p->smem > a->t->max_smem_per_block) {
    snprintf(a->err, a->errsize,
             "%s: the decode attention kernel needs %u bytes of shared memory, sm_%d has %d",
             a->k->name, p->smem, a->t->cc_major * 10 + a->t->cc_minor, a->t->max_smem_per_block);
    return KF_ERR_UNSUPPORTED;
  }
  cg_part_grid(p, c.dec.pairs * c.cl);
  if (c.cl > 1) {
    p->cluster = c.cl;
    p->blocks -= p->blocks % (uint32_t)c.cl; /* rounds of whole clusters */
  }
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
           "attention: decode, %lld heads x %lld queries x %lld keys (%lld visible), head dim "
           "%lld: %lld heads a block (%lld rows, %d warps on rows x %d on keys), keys split "
           "over %d block%s of a cluster, %d-stage cp.async ring of %d keys, merged by "
           "log-sum-exp through distributed shared memory%s",
           (long long)at->batch, (long long)at->sq, (long long)at->sk, (long long)c.kend,
           (long long)at->d, (long long)c.dec.group, (long long)c.dec.rows, c.wm, c.wk, c.cl,
           c.cl == 1 ? "" : "s", c.stages, 16 * c.wk,
           at->lse >= 0 ? ", writing the logsumexp" : "");
  return KF_OK;
}

static void num(char *b, size_t n, long long v, const char *suffix) {
  snprintf(b, n, "%lld%s", v, suffix);
}

kf_status cg_emit_flash_decode(cg_emit_args *a) {
  const fuse_attn *at = &a->k->attn;
  const kf_graph *g = a->g;
  cg_part *p = a->part;
  fd_cfg c;
  cfg_of(a, &c);
  cg_buf pre = {0}, params = {0}, args = {0};
  cg_gen gen;
  cg_gen_init(&gen, g, a->k, &pre, "long long");
  int32_t st3[3];
  cg_flash_helpers(&gen, a, &pre, st3);
  cg_param_decls(g, p, &params);
  cg_param_args(p, &args);
  cg_flash_names nm;
  cg_flash_names_of(p, at, st3, &nm);
  char lse[192]; /* every block of a cluster merges all shares: the first writes */
  cg_flash_lse(a, &pre, "rank == 0", "(bt0 + r / SQ) * SQ + r % SQ", "mall", "l", lse, sizeof lse);
  char d[16], sqs[32], sks[32], ke[32], gs[32], ms[32], wm[24], wk[24], st[24], cl[24];
  num(d, sizeof d, at->d, "");
  num(sqs, sizeof sqs, at->sq, "LL");
  num(sks, sizeof sks, at->sk, "LL");
  num(ke, sizeof ke, c.kend, "LL");
  num(gs, sizeof gs, c.dec.group, "LL");
  num(ms, sizeof ms, c.dec.rows, "LL");
  num(wm, sizeof wm, c.wm, "");
  num(wk, sizeof wk, c.wk, "");
  num(st, sizeof st, c.stages, "");
  num(cl, sizeof cl, c.cl, "");
  cg_puts(a->out, cg_use(a->out, &pre));
  cg_hole holes[] = {{"fn", p->fn},
                     {"BID", cg_part_bid_type(p)},
                     {"params", cg_use(a->out, &params)},
                     {"args", cg_use(a->out, &args)},
                     {"T", cg_storage_type(at->dtype)},
                     {"BF", at->dtype == KF_BF16 ? "true" : "false"},
                     {"D", d},
                     {"SQ", sqs},
                     {"SK", sks},
                     {"KEND", ke},
                     {"G", gs},
                     {"M", ms},
                     {"WM", wm},
                     {"WK", wk},
                     {"STAGES", st},
                     {"CL", cl},
                     {"q", nm.q},
                     {"k", nm.k},
                     {"v", nm.v},
                     {"o", nm.o},
                     {"QR", nm.qr},
                     {"KR", nm.kr},
                     {"VR", nm.vr},
                     {"lse", lse}};
  kf_status s = KF_OK;
  if (gen.failed) {
    snprintf(a->err, a->errsize, "%s: %s", a->k->name, gen.err);
    s = gen.status;
  } else if (!cg_fill(a->out, "sm80_common.cu", NULL, 0, a->err, a->errsize) ||
             !cg_fill(a->out, "attention_decode.cu", holes, (int)(sizeof holes / sizeof holes[0]),
                      a->err, a->errsize)) {
    s = KF_ERR_INTERNAL;
  }
  if (s == KF_OK && (pre.oom || params.oom || args.oom)) s = KF_ERR_OUT_OF_MEMORY;
  cg_gen_free(&gen);
  cg_buf_free(&pre);
  cg_buf_free(&params);
  cg_buf_free(&args);
  return s;
}
