/* gemm_sm90.c - the part function of a matmul kernel on Hopper: wgmma fed
 * by TMA through a ring of shared-memory stages, warp-specialized and
 * persistent (templates/gemm_sm90.cu), with the pointwise epilogue fused. */
#include "codegen/gemm_sm90.h"

#include <stdio.h>
#include <string.h>

#include "codegen/buf.h"
#include "codegen/cg_internal.h"
#include "codegen/expr.h"
#include "codegen/index_ctx.h"
#include "codegen/matmul.h"
#include "codegen/part.h"
#include "codegen/template.h"

enum {
  BM = 128,
  BK = 64,
  THREADS = 384,
  MAX_STAGES = 8,
  BAR_BYTES = 2 * MAX_STAGES * 8,
  MAX_OUT = 8
};

/* The shared-memory layout of one kernel: the ring's stages and, when the
 * stores are staged, each consumer warpgroup's staging rows: W columns of
 * each output (its 64 rows of W elements plus 16 bytes), one after the
 * other from stg[o]. */
typedef struct {
  int bn, stages, w;
  int ow; /* the output tile's width: bn, or bn / 2 for a paired product */
  bool staged;
  int stg_wg;         /* staging bytes per consumer warpgroup */
  int stg[MAX_OUT];   /* output o's staging rows' offset */
  int pitch[MAX_OUT]; /* and their length in elements */
} layout;

static bool is_input(const fuse_kernel *k, int32_t v) {
  for (int i = 0; i < k->n_inputs; i++)
    if (k->inputs[i] == v) return true;
  return false;
}

static int64_t numel(const ir_node *n) {
  int64_t e = 1;
  for (int d = 0; d < n->rank; d++) e *= n->shape[d];
  return e;
}

/* What a paired kernel's second product must share with the first: A, and
 * a B of the same shape and dtype read as it is stored; NULL when it does. */
static const char *pair_refuses(const cg_emit_args *a, const ir_node *mm, const ir_node *m2) {
  const ir_node *B = &a->g->nodes[mm->args[1]], *B2 = &a->g->nodes[m2->args[1]];
  if (m2->args[0] != mm->args[0]) return "a paired product's two A differ";
  if (m2->dtype != mm->dtype || B2->dtype != B->dtype || B2->rank != B->rank ||
      memcmp(B2->shape, B->shape, sizeof B->shape) || m2->rank != mm->rank ||
      memcmp(m2->shape, mm->shape, sizeof mm->shape))
    return "a paired product's two B differ";
  if (!is_input(a->k, m2->args[1])) return "an operand computed in the kernel";
  return NULL;
}

bool cg_gemm90_fits(const cg_emit_args *a, char *why, size_t size) {
  int32_t id = -1, id2 = -1;
  const ir_node *mm = cg_find_matmul(a, &id);
  const char *no = NULL;
  if (!mm) return false;
  const ir_node *m2 = cg_find_matmul2(a, id, &id2);
  const ir_node *A = &a->g->nodes[mm->args[0]], *B = &a->g->nodes[mm->args[1]];
  int64_t m = mm->shape[mm->rank - 2], n = mm->shape[mm->rank - 1], k = A->shape[A->rank - 1];
  if (a->k->paired && !m2)
    no = "a paired kernel without its second product";
  else if (a->t->cc_major != 9 || a->t->cc_minor != 0)
    no = "not sm_90";
  else if (a->t->knobs && a->t->knobs->gemm90 == 0)
    no = "KFUSE_GEMM90=0";
  else if (!a->part->alone)
    no = "packed with other kernels";
  else if ((mm->dtype != KF_BF16 && mm->dtype != KF_F16) || A->dtype != mm->dtype ||
           B->dtype != mm->dtype)
    no = "not a bf16 or f16 product";
  else if (numel(mm) != m * n || numel(A) != m * k || numel(B) != k * n)
    no = "batched";
  else if (!is_input(a->k, mm->args[0]) || !is_input(a->k, mm->args[1]))
    no = "an operand computed in the kernel";
  else if (m < 1 || n < 1 || k < 1 || m > INT32_MAX - 1024 || n > INT32_MAX - 1024 ||
           k > INT32_MAX - 1024) /* tile origins and copy coordinates are int */
    no = "a dimension out of range";
  else if (k % 8 || n % 8)
    no = "K or N not a multiple of 8 (rows of 16 bytes for the copy engine)";
  else if (cg_ceil_div(m, BM) * cg_ceil_div(n, 64) > INT32_MAX)
    no = "too many tiles";
  else if (m2)
    no = pair_refuses(a, mm, m2);
  if (no && why) snprintf(why, size, "%s", no);
  return no == NULL;
}

/* Block tile width: as wide as N wants, up to 256 (B arrives in 64-wide
 * boxes), or KFUSE_GEMM90_BN's (t NULL: by N, as the default). */
static int tile_n(const cg_target *t, int64_t n) {
  static const int forced[4] = {0, 64, 128, 256};
  if (t && t->knobs && t->knobs->gemm90_bn > 0 && t->knobs->gemm90_bn < 4)
    return forced[t->knobs->gemm90_bn];
  return n > 128 ? 256 : n > 64 ? 128 : 64;
}

/* A paired product's output tile width: half the block tile's B, whole
 * 64-wide boxes of each B (128 by N, or KFUSE_GEMM90_BN / 2, at least 64),
 * so the mainloop's m64n(2 OW) is 256 or 128 wide. */
static int tile_pair(const cg_target *t, int64_t n) {
  int w = tile_n(t, n) / 2;
  if (!(t && t->knobs && t->knobs->gemm90_bn > 0)) w = n > 64 ? 128 : 64;
  return w < 64 ? 64 : w;
}

/* The block tile's B width and the output tile's width of kernel a. */
static void tile_of(const cg_emit_args *a, int64_t n, int *bn, int *ow) {
  if (a->k->paired) {
    *ow = tile_pair(a->t, n);
    *bn = 2 * *ow;
  } else {
    *bn = *ow = tile_n(a->t, n);
  }
}

int64_t cg_gemm90_tiles(int64_t m, int64_t n, int64_t k, double *tile_flops) {
  int bn = tile_n(NULL, n); /* the default width: the floor ignores the A/B knob */
  *tile_flops = 2.0 * BM * bn * (double)(cg_ceil_div(k, BK) * BK);
  return cg_ceil_div(m, BM) * cg_ceil_div(n, bn);
}

static int stage_bytes(int bn) {
  return (BM + bn) * BK * 2;
}

/* Blocks per cluster: 1, or 2 (B multicast to both) with KFUSE_GEMM90=2
 * where the product has two rows of tiles or more (measured slower on the
 * H200 so far: docs/matmul.md). */
static int cluster_size(const cg_target *t, int64_t m) {
  if (!t->knobs || t->knobs->gemm90 != 2) return 1;
  return cg_ceil_div(m, BM) > 1 ? 2 : 1;
}

static int smem_limit(const cg_target *t) {
  return t->max_smem_per_block > 0 ? t->max_smem_per_block : 232448;
}

static int stages_in(int bytes, int bn) {
  int s = bytes / stage_bytes(bn);
  return s > MAX_STAGES ? MAX_STAGES : s;
}

/* The bytes of staging rows of W columns for every output of the kernel,
 * per consumer warpgroup (each output's rows 16-byte aligned); fills
 * L->stg and L->pitch. */
static int staging_bytes(const cg_emit_args *a, int w, layout *L) {
  int off = 0;
  for (int i = 0; i < a->k->n_outputs && i < MAX_OUT; i++) {
    int es = (int)kf_dtype_size(a->g->nodes[a->k->outputs[i]].dtype);
    L->stg[i] = off;
    L->pitch[i] = (w * es + 16) / es;
    off += (64 * (w * es + 16) + 15) & ~15;
  }
  return off;
}

/* The ring as deep as the shared memory allows (at most 8 stages); staged
 * stores (KFUSE_GEMM90_STAGE, the default) with the widest chunk of 64,
 * 32, 16 or 8 columns whose staging rows leave the ring at least 4 stages
 * (or as many as it had without them); otherwise each element is stored
 * from its register. */
static void plan_layout(const cg_emit_args *a, int bn, int ow, layout *L) {
  memset(L, 0, sizeof *L);
  int room = smem_limit(a->t) - 1024 - BAR_BYTES;
  L->bn = bn;
  L->ow = ow;
  L->w = ow;
  L->stages = stages_in(room, bn);
  bool want = (!a->t->knobs || a->t->knobs->gemm90_stage) && a->k->n_outputs <= MAX_OUT;
  int keep = L->stages < 4 ? L->stages : 4;
  for (int w = 64 < ow ? 64 : ow; want && w >= 8; w /= 2) {
    int wg = staging_bytes(a, w, L);
    int ns = stages_in(room - 2 * wg, bn);
    if (ns >= keep && ns >= 2) {
      L->staged = true, L->w = w, L->stg_wg = wg, L->stages = ns;
      return;
    }
  }
}

/* Rows of tile groups per band of the tile order (KFUSE_GEMM90_BAND; 0,
 * or more than there are: one band). */
static int64_t band_rows(const cg_target *t, int64_t m, int cl) {
  int64_t groups_m = cg_ceil_div(cg_ceil_div(m, BM), cl);
  int64_t b = t->knobs ? t->knobs->gemm90_band : 16;
  b = cg_ceil_div(b, cl); /* the knob counts tile rows; a group is cl of them */
  return b <= 0 || b > groups_m ? groups_m : b;
}

kf_status cg_plan_gemm90(cg_emit_args *a) {
  int32_t id = -1;
  const ir_node *mm = cg_find_matmul(a, &id);
  const ir_node *A = &a->g->nodes[mm->args[0]], *B = &a->g->nodes[mm->args[1]];
  int64_t m = mm->shape[mm->rank - 2], n = mm->shape[mm->rank - 1], k = A->shape[A->rank - 1];
  cg_part *p = a->part;
  layout L;
  int bn0, ow0;
  tile_of(a, n, &bn0, &ow0);
  plan_layout(a, bn0, ow0, &L);
  int bn = L.bn, ns = L.stages;
  int32_t id2 = -1;
  const ir_node *m2 = cg_find_matmul2(a, id, &id2);
  if (ns < 2) {
    snprintf(a->err, a->errsize, "%s: %d bytes of shared memory are too few for the sm_90 template",
             a->k->name, a->t->max_smem_per_block);
    return KF_ERR_UNSUPPORTED;
  }
  int cl = cluster_size(a->t, m);
  int64_t groups = cg_ceil_div(cg_ceil_div(m, BM), cl) * cg_ceil_div(n, L.ow);
  p->threads = THREADS;
  p->min_blocks = 1; /* setmaxnreg needs the register cap of (384, 1) */
  p->cluster = cl;
  cg_part_grid(p, groups * cl);
  p->blocks -= p->blocks % (uint32_t)cl;                  /* whole clusters, at least one: */
  if (p->blocks < (uint32_t)cl) p->blocks = (uint32_t)cl; /* any grid is correct */
  p->vblocks = p->blocks; /* the body strides over tile groups itself */
  p->persistent = true;
  p->lanes = 1;
  p->smem =
      (uint32_t)(ns * stage_bytes(bn) + 1024 + (L.staged ? BAR_BYTES + 2 * L.stg_wg : 2 * ns * 8));
  int64_t biggest = m * n;
  for (int i = 0; i < a->k->n_inputs; i++) {
    int64_t e = kf_value_numel(a->g, a->k->inputs[i]);
    if (e > biggest) biggest = e;
  }
  p->max_offset = biggest - 1;
  cg_index_type(biggest + 2 * BM + 256, &p->index64);
  p->vec_bytes = (int)kf_dtype_size(mm->dtype);
  p->gemm90 = true;
  size_t es = kf_dtype_size(mm->dtype);
  p->tmaps[0] =
      (cg_tmap){mm->args[0], A->dtype, {(uint64_t)k, (uint64_t)m}, {(uint64_t)k * es}, {BK, BM}, 2};
  p->tmaps[1] =
      (cg_tmap){mm->args[1], B->dtype, {(uint64_t)n, (uint64_t)k}, {(uint64_t)n * es}, {64, BK}, 2};
  p->n_tmaps = 2;
  char what[96] = "";
  if (m2) {
    p->tmaps[2] = p->tmaps[1];
    p->tmaps[2].value = m2->args[1];
    p->n_tmaps = 3;
    snprintf(what, sizeof what, "paired: %%%d and %%%d share A, %d columns of each a tile, ",
             (int)id, (int)id2, L.ow);
  }
  snprintf(p->decisions, sizeof p->decisions,
           "matmul: %lldx%lldx%lld on the sm_90 template (%swgmma m64n%dk16, TMA with the 128-byte "
           "swizzle, tile %dx%dx%d, %d stages, 1 producer + 2 consumer warpgroups, clusters of %d, "
           "persistent over %lld tiles in bands of %d tile rows, %s), %s index",
           (long long)m, (long long)n, (long long)k, what, bn, BM, bn, BK, ns, cl,
           (long long)(groups * cl), (int)(band_rows(a->t, m, cl) * cl),
           L.staged ? "stores staged in shared memory" : "each element stored from registers",
           p->index64 ? "64-bit" : "32-bit");
  return KF_OK;
}

/* kf_wgmma(d, da, db): one wgmma.mma_async m64n<bn>k16 with f32
 * accumulators d, A and B from shared memory (descriptors), A K-major and
 * B N-major (imm-trans-b 1), adding to d. */
static void emit_wgmma(cg_buf *out, int bn, kf_dtype dt) {
  const char *ty = dt == KF_BF16 ? "bf16" : "f16";
  int nacc = bn / 2;
  cg_printf(out,
            "KF_INLINE void kf_wgmma(float (&d)[%d], unsigned long long da,\n"
            "                        unsigned long long db) {\n"
            "  asm volatile(\n      \"{\\n.reg .pred p;\\nsetp.ne.b32 p, %%%d, 0;\\n\"\n"
            "      \"wgmma.mma_async.sync.aligned.m64n%dk16.f32.%s.%s {\"\n      \"",
            nacc, nacc + 2, bn, ty, ty);
  for (int i = 0; i < nacc; i++)
    cg_printf(out, "%%%d%s%s", i, i + 1 < nacc ? ", " : "", i % 16 == 15 ? "\"\n      \"" : "");
  cg_printf(out, "}, %%%d, %%%d, p, 1, 1, 0, 1;\\n}\\n\"\n      : ", nacc, nacc + 1);
  for (int i = 0; i < nacc; i++)
    cg_printf(out, "\"+f\"(d[%d])%s%s", i, i + 1 < nacc ? ", " : "",
              i % 8 == 7 && i + 1 < nacc ? "\n        " : "");
  cg_puts(out, "\n      : \"l\"(da), \"l\"(db), \"r\"(1));\n}\n");
}

/* The epilogue of one accumulator element (acc, at row and col): the
 * graph's chain as the simple kernel's (cg_matmul_epilogue); staged, each
 * output's value goes to its staging rows at (lr, lc) instead. */
static void emit_epilogue(cg_gen *gen, const cg_emit_args *a, const ir_node *mm, int32_t id,
                          const layout *L) {
  int32_t id2 = -1;
  /* the second product is bound as the first is (rounded to its dtype) */
  if (cg_find_matmul2(a, id, &id2)) cg_gen_bind(gen, id2, NULL, "acc2");
  if (!L->staged) {
    cg_matmul_epilogue(gen, a, mm, id, 12);
    return;
  }
  const kf_graph *g = a->g;
  int64_t m = mm->shape[mm->rank - 2], n = mm->shape[mm->rank - 1];
  cg_gen_bind(gen, id, NULL, "acc");
  gen->indent = 12;
  char lin[96], name[160];
  snprintf(lin, sizeof lin, "bt * %lld + row * %lld + col", (long long)(m * n), (long long)n);
  for (int i = 0; i < a->k->n_outputs; i++) {
    int32_t v = a->k->outputs[i];
    const ir_node *o = &g->nodes[v];
    if (o->rank != mm->rank || memcmp(o->shape, mm->shape, sizeof o->shape)) {
      cg_gen_fail(gen, "output %%%d does not have the matmul's shape", (int)v);
      continue;
    }
    cg_ctx c;
    int bounds[4] = {0, o->rank - 2, o->rank - 1, o->rank};
    const char *vars[3] = {"bt", "row", "col"};
    cg_ctx_linear(&c, o->rank, o->shape, lin, VC_GATHER);
    cg_ctx_groups(&c, o->rank, o->shape, 3, bounds, vars, VC_GATHER);
    cg_gen_stored(gen, v, &c, name, sizeof name);
    cg_line(gen, "kf_st(kf_s%d + (lr * %d + lc), %s);", (int)v, L->pitch[i], name);
  }
}

/* Each output's staging rows in this consumer warpgroup's part (cw) of the
 * staging area, after the ring and its barriers. */
static void emit_stage_decl(const cg_emit_args *a, const layout *L, cg_buf *out) {
  for (int i = 0; L->staged && i < a->k->n_outputs; i++) {
    int32_t v = a->k->outputs[i];
    const char *ty = cg_storage_type(a->g->nodes[v].dtype);
    cg_printf(out,
              "    %s *const kf_s%d = (%s *)(kf_dsmem + (base - kf_smem_addr(kf_dsmem)) + %d + "
              "cw * %d + %d);\n",
              ty, (int)v, ty, L->stages * stage_bytes(L->bn) + BAR_BYTES, L->stg_wg, L->stg[i]);
  }
}

/* The copy of each output's staged chunk (64 rows from rs, W columns from
 * cs) to global memory: whole words of 16 bytes (8 for 1-byte types, so a
 * word never crosses N, a multiple of 8), element by element where the
 * output's address is not aligned to them. */
static void emit_copy_out(const cg_emit_args *a, const layout *L, const char *sm, const char *sn,
                          cg_buf *out) {
  for (int i = 0; L->staged && i < a->k->n_outputs; i++) {
    int32_t v = a->k->outputs[i];
    int es = (int)kf_dtype_size(a->g->nodes[v].dtype), vb = es >= 2 ? 16 : 8, ve = vb / es;
    int per_row = L->w * es / vb;
    const char *idx = a->part->index64 ? "long long" : "int";
    cg_printf(out,
              "          {\n"
              "            typedef kf_word<%d>::t w_t;\n"
              "            const bool vec = kf_aligned(p%d, %d);\n"
              "#pragma unroll\n"
              "            for (int e = tid; e < %d; e += 128) {\n"
              "              const int lr = e / %d, lw = e %% %d;\n"
              "              const %s row = rs + lr, col = cs + lw * %d;\n"
              "              if (row < %s && col < %s) {\n"
              "                if (vec)\n"
              "                  *(w_t *)(p%d + (row * %s + col)) = *(const w_t *)(kf_s%d + "
              "(lr * %d + lw * %d));\n"
              "                else\n"
              "                  for (int q = 0; q < %d; q++)\n"
              "                    p%d[row * %s + col + q] = kf_s%d[lr * %d + lw * %d + q];\n"
              "              }\n"
              "            }\n"
              "          }\n",
              vb, (int)v, vb, 64 * per_row, per_row, per_row, idx, ve, sm, sn, (int)v, sn, (int)v,
              L->pitch[i], ve, ve, (int)v, sn, (int)v, L->pitch[i], ve);
  }
}

kf_status cg_emit_gemm90(cg_emit_args *a) {
  int32_t id = -1;
  const ir_node *mm = cg_find_matmul(a, &id);
  const kf_graph *g = a->g;
  cg_part *p = a->part;
  const char *idx = p->index64 ? "long long" : "int";
  const ir_node *A = &g->nodes[mm->args[0]];
  int64_t m = mm->shape[mm->rank - 2], n = mm->shape[mm->rank - 1], k = A->shape[A->rank - 1];
  layout L;
  int bn0, ow0;
  tile_of(a, n, &bn0, &ow0);
  plan_layout(a, bn0, ow0, &L);
  int bn = L.bn, ns = L.stages, cl = p->cluster > 1 ? p->cluster : 1;
  bool pair = a->k->paired;
  int64_t groups_m = cg_ceil_div(cg_ceil_div(m, BM), cl);
  cg_buf epi = {0}, params = {0}, mma = {0}, decl = {0}, copy = {0};
  cg_gen gen;
  cg_gen_init(&gen, g, a->k, &epi, idx);
  emit_epilogue(&gen, a, mm, id, &L);
  cg_param_decls(g, p, &params);
  emit_wgmma(&mma, bn, mm->dtype);
  char v[17][32];
  const char *sfx = p->index64 ? "LL" : "";
  snprintf(v[0], sizeof v[0], "%lld%s", (long long)m, sfx);
  snprintf(v[1], sizeof v[1], "%lld%s", (long long)n, sfx);
  emit_stage_decl(a, &L, &decl);
  emit_copy_out(a, &L, v[0], v[1], &copy);
  snprintf(v[2], sizeof v[2], "%lld", (long long)k);
  snprintf(v[3], sizeof v[3], "%d", BM);
  snprintf(v[4], sizeof v[4], "%d", bn);
  snprintf(v[5], sizeof v[5], "%d", BK);
  snprintf(v[6], sizeof v[6], "%d", ns);
  snprintf(v[7], sizeof v[7], "%lld", (long long)groups_m);
  snprintf(v[8], sizeof v[8], "%lld", (long long)(groups_m * cg_ceil_div(n, L.ow)));
  snprintf(v[12], sizeof v[12], "%d", cl);
  snprintf(v[9], sizeof v[9], "%lld", (long long)cg_ceil_div(k, BK));
  snprintf(v[10], sizeof v[10], "%du", stage_bytes(bn));
  snprintf(v[11], sizeof v[11], "%du", BK * bn * 2);
  snprintf(v[13], sizeof v[13], "%lld", (long long)cg_ceil_div(n, L.ow));
  snprintf(v[14], sizeof v[14], "%lld", (long long)band_rows(a->t, m, cl));
  snprintf(v[15], sizeof v[15], "%d", L.staged ? 1 : 0);
  snprintf(v[16], sizeof v[16], "%d", L.w);
  char nacc[16], ow[16], acc2[64];
  snprintf(nacc, sizeof nacc, "%d", bn / 2);
  snprintf(ow, sizeof ow, "%d", L.ow);
  acc2[0] = '\0';
  if (pair) snprintf(acc2, sizeof acc2, "            const float acc2 = d[i + %d];\n", bn / 4);
  cg_hole holes[] = {{"fn", p->fn},
                     {"BID", cg_part_bid_type(p)},
                     {"IDX", idx},
                     {"M", v[0]},
                     {"N", v[1]},
                     {"K", v[2]},
                     {"BM", v[3]},
                     {"BN", v[4]},
                     {"BK", v[5]},
                     {"STAGES", v[6]},
                     {"GROUPS_M", v[7]},
                     {"GROUPS", v[8]},
                     {"TILES_N", v[13]},
                     {"BAND", v[14]},
                     {"CL", v[12]},
                     {"KBLOCKS", v[9]},
                     {"STAGE_BYTES", v[10]},
                     {"B_BYTES", v[11]},
                     {"NACC", nacc},
                     {"STAGED", v[15]},
                     {"INFLIGHT", a->t->knobs && a->t->knobs->gemm90_inflight == 0 ? "0" : "1"},
                     {"W", v[16]},
                     {"PAIR", pair ? "1" : "0"},
                     {"OW", ow},
                     {"TMB2", pair ? "kf_tmb2" : "kf_tmb"},
                     {"tmb2_param", pair ? ", const kf_tmap &kf_tmb2" : ""},
                     {"acc2", acc2},
                     {"params", cg_use(a->out, &params)},
                     {"wgmma", cg_use(a->out, &mma)},
                     {"stage_decl", cg_use(a->out, &decl)},
                     {"epilogue", cg_use(a->out, &epi)},
                     {"copy_out", cg_use(a->out, &copy)}};
  kf_status st = KF_OK;
  if (gen.failed) {
    snprintf(a->err, a->errsize, "%s: %s", a->k->name, gen.err);
    st = gen.status;
  } else if (!cg_fill(a->out, "sm90_common.cu", NULL, 0, a->err, a->errsize) ||
             !cg_fill(a->out, "gemm_sm90.cu", holes, (int)(sizeof holes / sizeof holes[0]), a->err,
                      a->errsize)) {
    st = KF_ERR_INTERNAL;
  }
  if (st == KF_OK && (epi.oom || params.oom || mma.oom || decl.oom || copy.oom))
    st = KF_ERR_OUT_OF_MEMORY;
  cg_gen_free(&gen);
  cg_buf_free(&epi);
  cg_buf_free(&params);
  cg_buf_free(&mma);
  cg_buf_free(&decl);
  cg_buf_free(&copy);
  return st;
}
