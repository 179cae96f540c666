/* flash90.c - an attention kernel's part function on Hopper: the
 * templates/attention_sm90.cu kernel with the modifier and row helpers of
 * flash.c, its tensor maps and its wgmma instructions. */
#include "codegen/flash90.h"

#include <stdio.h>
#include <string.h>

#include "codegen/expr.h"
#include "codegen/flash.h"
#include "codegen/flash_gen.h"
#include "codegen/part.h"
#include "codegen/template.h"
#include "core/alloc.h"

enum { BM = 128, THREADS = 384, MAX_STAGES = 4 };

/* Keys a tile: 128 at head dim 64; at 128, 96 (or 64: KFUSE_ATTN90_KEYS),
 * so that the score, p and output fragments fit the 168 registers ptxas
 * gives a thread of 384 together (128 keys spill). */
static int tile_keys(const cg_emit_args *a) {
  if (a->k->attn.d <= 64) return 128;
  int knob = a->t->knobs ? a->t->knobs->attn90_keys : 0;
  return knob == 1 ? 64 : knob == 2 ? 128 : 96;
}

/* Follows operand v's layout ops down to the stored tensor while each
 * keeps the last two axes (rows and head dim) as they are, so that a
 * head's rows are consecutive rows of the stored tensor; false at any
 * other op. */
static bool rows_whole(const kf_graph *g, const fuse_kernel *k, int32_t v, int32_t *stored) {
  while (cg_in_kernel(k, v)) {
    const ir_node *n = &g->nodes[v], *x = &g->nodes[n->args[0]];
    int r = n->rank, xr = x->rank;
    if (r < 2 || xr < 2) return false;
    if (n->op == IR_OP_TRANSPOSE) {
      if (n->perm[r - 1] != r - 1 || n->perm[r - 2] != r - 2) return false;
    } else if (n->op == IR_OP_BROADCAST_TO || n->op == IR_OP_RESHAPE) {
      if (x->shape[xr - 1] != n->shape[r - 1] || x->shape[xr - 2] != n->shape[r - 2]) return false;
    } else {
      return false;
    }
    v = n->args[0];
  }
  *stored = v;
  return true;
}

static int64_t q_tiles(const fuse_attn *at) {
  return cg_ceil_div(at->sq, BM);
}

static int64_t kv_bytes(const cg_emit_args *a) {
  return tile_keys(a) * a->k->attn.d * 2;
}

/* Stages of k and v: as many as the opt-in shared memory holds, at most 4
 * (0 or 1: too little shared memory for the kernel). */
static int stages(const cg_emit_args *a) {
  const fuse_attn *at = &a->k->attn;
  int64_t limit = a->t->max_smem_per_block > 0 ? a->t->max_smem_per_block : 232448;
  int64_t s = (limit - 1024 - 8 * (1 + 4 * MAX_STAGES) - BM * at->d * 2) / (2 * kv_bytes(a));
  return s > MAX_STAGES ? MAX_STAGES : s < 0 ? 0 : (int)s;
}

static uint32_t smem_bytes(const cg_emit_args *a, int ns) {
  const fuse_attn *at = &a->k->attn;
  return (uint32_t)(1024 + BM * at->d * 2 + ns * 2 * kv_bytes(a) + 8 * (1 + 4 * ns));
}

bool cg_flash90_fits(const cg_emit_args *a, char *why, size_t size) {
  const fuse_attn *at = &a->k->attn;
  const kf_graph *g = a->g;
  if (why && size) why[0] = '\0';
  if (a->t->cc_major != 9 || a->t->cc_minor != 0) return false;
  int32_t s[3];
  uint32_t cap = a->part->max_blocks > 0 ? a->part->max_blocks : CG_MAX_GRID;
  const char *no = NULL;
  if (a->t->knobs && !a->t->knobs->attn90)
    no = "KFUSE_ATTN90=0";
  else if (at->d != 64 && at->d != 128)
    no = "its head dims are 64 and 128";
  else if (!rows_whole(g, a->k, at->q, &s[0]) || !rows_whole(g, a->k, at->k, &s[1]) ||
           !rows_whole(g, a->k, at->v, &s[2]))
    no = "q, k or v is not read as whole rows of a stored [heads, rows, D] tensor (its 3-D "
         "tensor maps cannot read the layout)";
  else if (at->sq > INT32_MAX - BM || at->sk > INT32_MAX - 256 ||
           kf_value_numel(g, s[0]) / (at->sq * at->d) > INT32_MAX ||
           kf_value_numel(g, s[1]) / (at->sk * at->d) > INT32_MAX ||
           kf_value_numel(g, s[2]) / (at->sk * at->d) > INT32_MAX)
    no = "a copy coordinate past int";
  else if (at->batch * q_tiles(at) > (int64_t)cap)
    no = "more query tiles than one grid";
  else if (stages(a) < 2)
    no = "too little shared memory";
  if (no && why && size) snprintf(why, size, "%s", no);
  return no == NULL;
}

/* Whether the score modifier reads memory (a mask, a bias): an input of
 * the kernel other than the stored q, k and v. The edge-tile variant
 * (KFUSE_ATTN90_EDGE) is not taken then: unpredicated, a tile's element
 * loads are all hoisted ahead of their use, past the 168 registers a
 * thread has (ptxas spills). */
static bool modifier_loads(const cg_emit_args *a) {
  const fuse_attn *at = &a->k->attn;
  int32_t s[3];
  rows_whole(a->g, a->k, at->q, &s[0]);
  rows_whole(a->g, a->k, at->k, &s[1]);
  rows_whole(a->g, a->k, at->v, &s[2]);
  for (int i = 0; i < a->k->n_inputs; i++) {
    int32_t v = a->k->inputs[i];
    if (v != s[0] && v != s[1] && v != s[2]) return true;
  }
  return false;
}

static bool sfu_op(ir_op op) {
  return op == IR_OP_EXP || op == IR_OP_LOG || op == IR_OP_SQRT || op == IR_OP_RSQRT ||
         op == IR_OP_RECIPROCAL || op == IR_OP_SIN || op == IR_OP_COS || op == IR_OP_TANH ||
         op == IR_OP_SIGMOID || op == IR_OP_GELU || op == IR_OP_GELU_TANH || op == IR_OP_SILU ||
         op == IR_OP_ERF || op == IR_OP_POW || op == IR_OP_DIV;
}

/* Whether the score modifier (the chain from the scores to x and its side
 * values, the kernel's ancestors of x short of the first product) holds a
 * function of the SFU or a division. The ex2 variant (KFUSE_ATTN90_EX2)
 * is not taken then: with those results and the exponentials in flight
 * together ptxas spills (the soft-cap: 136 bytes at 96 keys). True too
 * when it cannot tell (no memory, an argument after its node). */
static bool modifier_sfu(const cg_emit_args *a) {
  const kf_graph *g = a->g;
  const fuse_attn *at = &a->k->attn;
  bool *mark = core_calloc((size_t)g->n_nodes, sizeof *mark);
  if (!mark) return true;
  bool found = false;
  mark[at->x] = true;
  for (int32_t v = at->x; v >= 0 && !found; v--) {
    if (!mark[v] || v == at->mm1 || !cg_in_kernel(a->k, v)) continue;
    const ir_node *n = &g->nodes[v];
    found = sfu_op(n->op);
    for (int i = 0; i < n->nargs && !found; i++) {
      if (n->args[i] < 0) continue;
      if (n->args[i] > v)
        found = true; /* not in id order: assume the worst */
      else
        mark[n->args[i]] = true;
    }
  }
  core_free(mark);
  return found;
}

/* The variants the knobs ask for and the kernel takes. */
static void variants(const cg_emit_args *a, bool *ex2, bool *edge, bool *lazy, bool *desc) {
  const core_knobs *kn = a->t->knobs;
  *desc = kn && kn->attn90_desc;
  *ex2 = kn && kn->attn90_ex2 && !modifier_sfu(a);
  *edge = kn && kn->attn90_edge && !modifier_loads(a);
  *lazy = kn && kn->attn90_lazy;
}

static cg_tmap operand_map(const kf_graph *g, int32_t v, kf_dtype dt, int64_t rows, int64_t d,
                           uint32_t box_rows) {
  uint64_t es = kf_dtype_size(dt);
  uint64_t heads = (uint64_t)(kf_value_numel(g, v) / (rows * d));
  cg_tmap m = {v,
               dt,
               {(uint64_t)d, (uint64_t)rows, heads},
               {(uint64_t)d * es, (uint64_t)(rows * d) * es},
               {64, box_rows, 1},
               3};
  return m;
}

kf_status cg_plan_flash90(cg_emit_args *a) {
  const fuse_attn *at = &a->k->attn;
  const kf_graph *g = a->g;
  cg_part *p = a->part;
  int32_t s[3];
  rows_whole(g, a->k, at->q, &s[0]);
  rows_whole(g, a->k, at->k, &s[1]);
  rows_whole(g, a->k, at->v, &s[2]);
  int ns = stages(a);
  p->threads = THREADS;
  p->min_blocks = 1; /* setmaxnreg needs the register cap of (384, 1) */
  cg_part_grid(p, at->batch * q_tiles(at));
  p->lanes = 1;
  p->smem = smem_bytes(a, ns);
  int64_t biggest = kf_value_numel(g, at->out);
  for (int i = 0; i < a->k->n_inputs; i++) {
    int64_t e = kf_value_numel(g, a->k->inputs[i]);
    if (e > biggest) biggest = e;
  }
  p->max_offset = biggest - 1;
  p->index64 = true; /* offsets are long long throughout */
  p->vec_bytes = 16;
  p->flash90 = true;
  p->tmaps[0] = operand_map(g, s[0], at->dtype, at->sq, at->d, BM);
  p->tmaps[1] = operand_map(g, s[1], at->dtype, at->sk, at->d, (uint32_t)tile_keys(a));
  p->tmaps[2] = operand_map(g, s[2], at->dtype, at->sk, at->d, (uint32_t)tile_keys(a));
  p->n_tmaps = 3;
  snprintf(p->decisions, sizeof p->decisions,
           "attention: %lld heads x %lld queries x %lld keys, head dim %lld: flash on sm_90 "
           "(wgmma m64n%dk16 and m64n%lldk16, p from registers; TMA with the 128-byte swizzle; "
           "%d queries x %d keys a tile, %d stages; 1 producer + 2 consumer warpgroups; the next "
           "tile's scores issued before this tile's softmax)%s%s",
           (long long)at->batch, (long long)at->sq, (long long)at->sk, (long long)at->d,
           tile_keys(a), (long long)at->d, BM, tile_keys(a), ns,
           at->causal ? ", causal tile skipping" : "",
           at->lse >= 0 ? ", writing the logsumexp" : "");
  bool ex2, edge, lazy, desc;
  variants(a, &ex2, &edge, &lazy, &desc);
  const core_knobs *kn = a->t->knobs;
  bool pp = kn && kn->attn90_pingpong;
  if (ex2 || edge || lazy || desc || pp || (kn && (kn->attn90_edge || kn->attn90_ex2))) {
    size_t used = strlen(p->decisions);
    snprintf(p->decisions + used, sizeof p->decisions - used, "; variants:%s%s%s%s%s%s%s",
             ex2 ? " ex2.approx.ftz" : "", edge ? " edge-tile bounds" : "",
             lazy ? " lazy rescale" : "", desc ? " descriptor steps" : "", pp ? " ping-pong" : "",
             kn->attn90_edge && !edge ? " (no edge tiles: the modifier reads memory)" : "",
             kn->attn90_ex2 && !ex2 ? " (exp2f: the modifier uses the SFU)" : "");
  }
  return KF_OK;
}

/* One wgmma.mma_async m64n<n>k16 with f32 accumulators d (n/2 a thread)
 * and B from shared memory (descriptor db): A from shared memory (da,
 * K-major; B K-major too) when a_regs is false, else A from four
 * registers and B N-major (the transposed-B form). scale-d: whether d is
 * added to (the register sd, not 0). */
static void emit_wgmma(cg_buf *out, const char *name, int n, kf_dtype dt, bool a_regs) {
  const char *ty = dt == KF_BF16 ? "bf16" : "f16";
  int nacc = n / 2, na = a_regs ? 4 : 1;
  if (a_regs)
    cg_printf(out, "KF_INLINE void %s(float (&d)[%d], const unsigned (&a)[4],\n", name, nacc);
  else
    cg_printf(out, "KF_INLINE void %s(float (&d)[%d], unsigned long long da,\n", name, nacc);
  cg_printf(out,
            "    unsigned long long db, int sd = 1) {\n"
            "  asm volatile(\n      \"{\\n.reg .pred p;\\nsetp.ne.b32 p, %%%d, 0;\\n\"\n"
            "      \"wgmma.mma_async.sync.aligned.m64n%dk16.f32.%s.%s {\"\n      \"",
            nacc + na + 1, n, ty, ty);
  for (int i = 0; i < nacc; i++)
    cg_printf(out, "%%%d%s%s", i, i + 1 < nacc ? ", " : "", i % 16 == 15 ? "\"\n      \"" : "");
  if (a_regs)
    cg_printf(out, "}, {%%%d, %%%d, %%%d, %%%d}, %%%d, p, 1, 1, 1;\\n}\\n\"\n      : ", nacc,
              nacc + 1, nacc + 2, nacc + 3, nacc + 4);
  else
    cg_printf(out, "}, %%%d, %%%d, p, 1, 1, 0, 0;\\n}\\n\"\n      : ", nacc, nacc + 1);
  for (int i = 0; i < nacc; i++)
    cg_printf(out, "\"+f\"(d[%d])%s%s", i, i + 1 < nacc ? ", " : "",
              i % 8 == 7 && i + 1 < nacc ? "\n        " : "");
  if (a_regs)
    cg_puts(out,
            "\n      : \"r\"(a[0]), \"r\"(a[1]), \"r\"(a[2]), \"r\"(a[3]), \"l\"(db), "
            "\"r\"(sd));\n}\n");
  else
    cg_puts(out, "\n      : \"l\"(da), \"l\"(db), \"r\"(sd));\n}\n");
}

/* The tuning knobs' variants of the kernel (docs/attention.md, "Knobs of
 * the Hopper kernel"): each hole's text is the default kernel's when its
 * knob is off, so that the default source stays what it was. */
typedef struct fa90_variant {
  const char *ex2, *edge_param, *lazy, *rescale_if;
  const char *qdesc, *desc_q, *desc_k, *desc_v;
  const char *pp_start, *pp_wait, *pp_pass, *pp_last;
  cg_buf score, softmax0, softmaxj;
} fa90_variant;

/* The variants' holes; the visible modifier (<fn>_modv) into pre. */
static void variant_of(const cg_emit_args *a, cg_gen *gen, cg_buf *pre, const char *args,
                       cg_buf *helpers, fa90_variant *v) {
  const fuse_attn *at = &a->k->attn;
  const char *fn = a->part->fn;
  bool ex2, edge, lazy, desc;
  variants(a, &ex2, &edge, &lazy, &desc);
  v->ex2 = ex2 ? "kf_fa90_ex2" : "exp2f";
  v->edge_param = edge ? ", auto edge" : "";
  /* A tile is an edge when it has query rows past SQ, keys past SK or,
   * causal, keys past some row's last visible one; the others skip the
   * bounds checks and, causal, the comparison (<fn>_modv): two copies of
   * the softmax, one branch a tile. */
  bool vis = edge && cg_flash_modifier_visible(gen, a, fn, pre);
  if (edge)
    cg_printf(&v->score, "!edge.value ? %s_mod%s(s[i], bt, qi, ki, %s) : ", fn, vis ? "v" : "",
              args);
  cg_printf(&v->score, "qi < SQ && ki < SK ? %s_mod(s[i], bt, qi, ki, %s) : -KF_INF", fn, args);
  for (int t = 0; t < 2; t++) {
    cg_buf *b = t ? &v->softmaxj : &v->softmax0;
    const char *j = t ? "j" : "0";
    if (!edge) {
      cg_printf(b, "softmax(%s);", j);
      continue;
    }
    cg_printf(b, "if (q0 + BM > SQ || (long long)(%s + 1) * BN > SK", j);
    if (vis)
      cg_printf(b, " || (long long)(%s + 1) * BN - 1 > q0 + %lldLL", j, (long long)at->causal_off);
    cg_printf(b,
              ")\n      softmax(%s, kf_fa90_flag<true>());\n    else\n      softmax(%s, "
              "kf_fa90_flag<false>());",
              j, j);
  }
  /* keep the row's max unless the tile's exceeds it by more than 8 in
   * log2 units: p = 2^(x log2e - mu) <= 2^8, and o, l are not rescaled */
  v->lazy = lazy ? "\n      if (mx[r] * LOG2E - mrow[r] * LOG2E <= 8.0f) mx[r] = mrow[r];" : "";
  v->rescale_if =
      lazy ? "\n    if (__any_sync(0xffffffffu, scale[0] != 1.0f || scale[1] != 1.0f))" : "";
  /* descriptors as a base plus 16-byte steps: the start address field is
   * the low 14 bits of addr >> 4, and shared addresses are below 2^18, so
   * a step never carries out of it */
  v->qdesc = desc ? "\n  const unsigned long long kf_fa90_dq = kf_gmma_desc(qa, 16, 1024);" : "";
  v->desc_q = desc ? "kf_fa90_dq + (((kk / 4) * BM * 128 + (kk % 4) * 32) >> 4)"
                   : "kf_gmma_desc(qa + (kk / 4) * BM * 128 + (kk % 4) * 32, 16, 1024)";
  v->desc_k = desc ? "kf_gmma_desc(k, 16, 1024) + (((kk / 4) * BN * 128 + (kk % 4) * 32) >> 4)"
                   : "kf_gmma_desc(k + (kk / 4) * BN * 128 + (kk % 4) * 32, 16, 1024)";
  v->desc_v = desc ? "kf_gmma_desc(v, BN * 128, 1024) + kk * 128"
                   : "kf_gmma_desc(v + kk * 2048, BN * 128, 1024)";
  /* Ping-pong: the consumer warpgroups issue their products in turns
   * (named barriers 1 and 2 of 256 threads: one warpgroup waits at its
   * own, the other arrives), so that one's softmax runs while the other's
   * products do. Warpgroup 1 gives warpgroup 0 the first turn and passes
   * no turn after its last issue, so every barrier completes. */
  bool pp = a->t->knobs && a->t->knobs->attn90_pingpong;
  v->pp_start = pp ? "\n  if (cw == 1 && nt > 0) kf_fa90_bar_arrive(1);" : "";
  v->pp_wait = pp ? "\n    kf_fa90_bar_sync(1 + cw);" : "";
  v->pp_pass = pp ? "\n    kf_fa90_bar_arrive(2 - cw);" : "";
  v->pp_last = pp ? "\n    if (cw == 0) kf_fa90_bar_arrive(2);" : "";
  if (!ex2 && !edge && !pp) return;
  cg_puts(helpers, "#ifndef KF_FA90_VARIANTS\n#define KF_FA90_VARIANTS\n");
  if (ex2)
    cg_puts(helpers,
            "// 2^x by the SFU alone: exp2f adds a scaling for subnormal results, which\n"
            "// are weights below 2^-126 of the row's largest (flushed to 0 here)\n"
            "KF_INLINE float kf_fa90_ex2(float x) {\n  float r;\n"
            "  asm(\"ex2.approx.ftz.f32 %0, %1;\" : \"=f\"(r) : \"f\"(x));\n  return r;\n}\n");
  if (pp)
    cg_puts(helpers,
            "// named barrier id of the two consumer warpgroups (256 threads)\n"
            "KF_INLINE void kf_fa90_bar_sync(int id) {\n"
            "  asm volatile(\"bar.sync %0, 256;\" ::\"r\"(id) : \"memory\");\n}\n"
            "KF_INLINE void kf_fa90_bar_arrive(int id) {\n"
            "  asm volatile(\"bar.arrive %0, 256;\" ::\"r\"(id) : \"memory\");\n}\n");
  if (edge)
    cg_puts(helpers,
            "template <bool B>\nstruct kf_fa90_flag {\n  static constexpr bool value = B;\n};\n");
  cg_puts(helpers, "#endif\n");
}

kf_status cg_emit_flash90(cg_emit_args *a) {
  const fuse_attn *at = &a->k->attn;
  const kf_graph *g = a->g;
  cg_part *p = a->part;
  cg_buf pre = {0}, params = {0}, args = {0}, mma = {0};
  cg_gen gen;
  cg_gen_init(&gen, g, a->k, &pre, "long long");
  int32_t stored[3];
  cg_flash_helpers(&gen, a, &pre, stored);
  cg_param_decls(g, p, &params);
  cg_param_args(p, &args);
  emit_wgmma(&mma, "kf_fa90_qk", tile_keys(a), at->dtype, false);
  emit_wgmma(&mma, "kf_fa90_pv", (int)at->d, at->dtype, true);
  fa90_variant var = {0};
  variant_of(a, &gen, &pre, cg_use(a->out, &args), &mma, &var);
  char on[16], qr[112], kr[112], vr[112], d[16], bn[16], ns[16];
  char sqs[32], sks[32], bat[32], qt[32], coff[32];
  snprintf(on, sizeof on, "p%d", (int)at->out);
  char lse[192];
  cg_flash_lse(a, &pre, "t4 == 0 && qrow + 8 * r < SQ", "bt * SQ + qrow + 8 * r", "mrow[r]", "l",
               lse, sizeof lse);
  snprintf(qr, sizeof qr, "%s_QR", p->fn);
  snprintf(kr, sizeof kr, "%s_KR", p->fn);
  snprintf(vr, sizeof vr, "%s_VR", p->fn);
  snprintf(d, sizeof d, "%lld", (long long)at->d);
  snprintf(bn, sizeof bn, "%d", tile_keys(a));
  snprintf(ns, sizeof ns, "%d", stages(a));
  snprintf(sqs, sizeof sqs, "%lldLL", (long long)at->sq);
  snprintf(sks, sizeof sks, "%lldLL", (long long)at->sk);
  snprintf(bat, sizeof bat, "%lldLL", (long long)at->batch);
  snprintf(qt, sizeof qt, "%lldLL", (long long)q_tiles(at));
  snprintf(coff, sizeof coff, "%lldLL", (long long)at->causal_off);
  cg_hole holes[] = {{"fn", p->fn},
                     {"BID", cg_part_bid_type(p)},
                     {"params", cg_use(a->out, &params)},
                     {"args", cg_use(a->out, &args)},
                     {"BF", at->dtype == KF_BF16 ? "true" : "false"},
                     {"D", d},
                     {"BN", bn},
                     {"STAGES", ns},
                     {"SQ", sqs},
                     {"SK", sks},
                     {"BATCH", bat},
                     {"QT", qt},
                     {"CAUSAL", at->causal ? "true" : "false"},
                     {"COFF", coff},
                     {"o", on},
                     {"QR", qr},
                     {"KR", kr},
                     {"VR", vr},
                     {"wgmma", cg_use(a->out, &mma)},
                     {"lse", lse},
                     {"ex2", var.ex2},
                     {"edge_param", var.edge_param},
                     {"score", cg_use(a->out, &var.score)},
                     {"lazy", var.lazy},
                     {"softmax0", cg_use(a->out, &var.softmax0)},
                     {"softmaxj", cg_use(a->out, &var.softmaxj)},
                     {"rescale_if", var.rescale_if},
                     {"qdesc", var.qdesc},
                     {"desc_q", var.desc_q},
                     {"desc_k", var.desc_k},
                     {"desc_v", var.desc_v},
                     {"pp_start", var.pp_start},
                     {"pp_wait", var.pp_wait},
                     {"pp_pass", var.pp_pass},
                     {"pp_last", var.pp_last}};
  kf_status st = KF_OK;
  if (gen.failed) {
    snprintf(a->err, a->errsize, "%s: %s", a->k->name, gen.err);
    st = gen.status;
  } else {
    cg_puts(a->out, cg_use(a->out, &pre));
    if (!cg_fill(a->out, "sm90_common.cu", NULL, 0, a->err, a->errsize) ||
        !cg_fill(a->out, "attention_sm90.cu", holes, (int)(sizeof holes / sizeof holes[0]), a->err,
                 a->errsize))
      st = KF_ERR_INTERNAL;
  }
  if (st == KF_OK && (pre.oom || params.oom || args.oom || mma.oom || var.score.oom ||
                      var.softmax0.oom || var.softmaxj.oom))
    st = KF_ERR_OUT_OF_MEMORY;
  cg_gen_free(&gen);
  cg_buf_free(&pre);
  cg_buf_free(&params);
  cg_buf_free(&args);
  cg_buf_free(&mma);
  cg_buf_free(&var.score);
  cg_buf_free(&var.softmax0);
  cg_buf_free(&var.softmaxj);
  return st;
}
