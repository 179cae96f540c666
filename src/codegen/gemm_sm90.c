/* gemm_sm90.c - the part function of a matmul kernel on Hopper: wgmma fed
 * by TMA through a ring of shared-memory stages, warp-specialized and
 * persistent (templates/gemm_sm90.cu), with the pointwise epilogue fused. */
#include "codegen/gemm_sm90.h"

#include <stdio.h>
#include <string.h>

#include "codegen/buf.h"
#include "codegen/cg_internal.h"
#include "codegen/expr.h"
#include "codegen/matmul.h"
#include "codegen/part.h"
#include "codegen/template.h"

enum { BM = 128, BK = 64, THREADS = 384, MAX_STAGES = 8 };

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

bool cg_gemm90_fits(const cg_emit_args *a, char *why, size_t size) {
  int32_t id = -1;
  const ir_node *mm = cg_find_matmul(a, &id);
  const char *no = NULL;
  if (!mm) return false;
  const ir_node *A = &a->g->nodes[mm->args[0]], *B = &a->g->nodes[mm->args[1]];
  int64_t m = mm->shape[mm->rank - 2], n = mm->shape[mm->rank - 1], k = A->shape[A->rank - 1];
  if (a->t->cc_major != 9 || a->t->cc_minor != 0)
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
  if (no && why) snprintf(why, size, "%s", no);
  return no == NULL;
}

/* Block tile width: as wide as N wants, up to 256 (B arrives in 64-wide
 * boxes). */
static int tile_n(int64_t n) {
  return n > 128 ? 256 : n > 64 ? 128 : 64;
}

int64_t cg_gemm90_tiles(int64_t m, int64_t n, int64_t k, double *tile_flops) {
  int bn = tile_n(n);
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

static int stages(const cg_target *t, int bn) {
  int limit = t->max_smem_per_block > 0 ? t->max_smem_per_block : 232448;
  int s = (limit - 1024 - 2 * MAX_STAGES * 8) / stage_bytes(bn);
  return s > MAX_STAGES ? MAX_STAGES : s;
}

kf_status cg_plan_gemm90(cg_emit_args *a) {
  int32_t id = -1;
  const ir_node *mm = cg_find_matmul(a, &id);
  const ir_node *A = &a->g->nodes[mm->args[0]], *B = &a->g->nodes[mm->args[1]];
  int64_t m = mm->shape[mm->rank - 2], n = mm->shape[mm->rank - 1], k = A->shape[A->rank - 1];
  cg_part *p = a->part;
  int bn = tile_n(n), ns = stages(a->t, bn);
  if (ns < 2) {
    snprintf(a->err, a->errsize, "%s: %d bytes of shared memory are too few for the sm_90 template",
             a->k->name, a->t->max_smem_per_block);
    return KF_ERR_UNSUPPORTED;
  }
  int cl = cluster_size(a->t, m);
  int64_t groups = cg_ceil_div(cg_ceil_div(m, BM), cl) * cg_ceil_div(n, bn);
  p->threads = THREADS;
  p->min_blocks = 1; /* setmaxnreg needs the register cap of (384, 1) */
  p->cluster = cl;
  cg_part_grid(p, groups * cl);
  p->blocks -= p->blocks % (uint32_t)cl;                  /* whole clusters, at least one: */
  if (p->blocks < (uint32_t)cl) p->blocks = (uint32_t)cl; /* any grid is correct */
  p->vblocks = p->blocks; /* the body strides over tile groups itself */
  p->persistent = true;
  p->lanes = 1;
  p->smem = (uint32_t)(ns * stage_bytes(bn) + 2 * ns * 8 + 1024);
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
  snprintf(p->decisions, sizeof p->decisions,
           "matmul: %lldx%lldx%lld on the sm_90 template (wgmma m64n%dk16, TMA with the 128-byte "
           "swizzle, tile %dx%dx%d, %d stages, 1 producer + 2 consumer warpgroups, clusters of %d, "
           "persistent over %lld tiles), %s index",
           (long long)m, (long long)n, (long long)k, bn, BM, bn, BK, ns, cl,
           (long long)(groups * cl), p->index64 ? "64-bit" : "32-bit");
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

kf_status cg_emit_gemm90(cg_emit_args *a) {
  int32_t id = -1;
  const ir_node *mm = cg_find_matmul(a, &id);
  const kf_graph *g = a->g;
  cg_part *p = a->part;
  const char *idx = p->index64 ? "long long" : "int";
  const ir_node *A = &g->nodes[mm->args[0]];
  int64_t m = mm->shape[mm->rank - 2], n = mm->shape[mm->rank - 1], k = A->shape[A->rank - 1];
  int bn = tile_n(n), ns = stages(a->t, bn), cl = p->cluster > 1 ? p->cluster : 1;
  int64_t groups_m = cg_ceil_div(cg_ceil_div(m, BM), cl);
  cg_buf epi = {0}, params = {0}, mma = {0};
  cg_gen gen;
  cg_gen_init(&gen, g, a->k, &epi, idx);
  cg_matmul_epilogue(&gen, a, mm, id, 10);
  cg_param_decls(g, p, &params);
  emit_wgmma(&mma, bn, mm->dtype);
  char v[13][32];
  const char *sfx = p->index64 ? "LL" : "";
  snprintf(v[0], sizeof v[0], "%lld%s", (long long)m, sfx);
  snprintf(v[1], sizeof v[1], "%lld%s", (long long)n, sfx);
  snprintf(v[2], sizeof v[2], "%lld", (long long)k);
  snprintf(v[3], sizeof v[3], "%d", BM);
  snprintf(v[4], sizeof v[4], "%d", bn);
  snprintf(v[5], sizeof v[5], "%d", BK);
  snprintf(v[6], sizeof v[6], "%d", ns);
  snprintf(v[7], sizeof v[7], "%lld", (long long)groups_m);
  snprintf(v[8], sizeof v[8], "%lld", (long long)(groups_m * cg_ceil_div(n, bn)));
  snprintf(v[12], sizeof v[12], "%d", cl);
  snprintf(v[9], sizeof v[9], "%lld", (long long)cg_ceil_div(k, BK));
  snprintf(v[10], sizeof v[10], "%du", stage_bytes(bn));
  snprintf(v[11], sizeof v[11], "%du", BK * bn * 2);
  char nacc[16];
  snprintf(nacc, sizeof nacc, "%d", bn / 2);
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
                     {"CL", v[12]},
                     {"KBLOCKS", v[9]},
                     {"STAGE_BYTES", v[10]},
                     {"B_BYTES", v[11]},
                     {"NACC", nacc},
                     {"params", cg_use(a->out, &params)},
                     {"wgmma", cg_use(a->out, &mma)},
                     {"epilogue", cg_use(a->out, &epi)}};
  kf_status st = KF_OK;
  if (gen.failed) {
    snprintf(a->err, a->errsize, "%s: %s", a->k->name, gen.err);
    st = gen.status;
  } else if (!cg_fill(a->out, "sm90_common.cu", NULL, 0, a->err, a->errsize) ||
             !cg_fill(a->out, "gemm_sm90.cu", holes, (int)(sizeof holes / sizeof holes[0]), a->err,
                      a->errsize)) {
    st = KF_ERR_INTERNAL;
  }
  if (st == KF_OK && (epi.oom || params.oom || mma.oom)) st = KF_ERR_OUT_OF_MEMORY;
  cg_gen_free(&gen);
  cg_buf_free(&epi);
  cg_buf_free(&params);
  cg_buf_free(&mma);
  return st;
}
