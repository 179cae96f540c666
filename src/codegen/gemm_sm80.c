/* gemm_sm80.c - the part function of a matmul kernel on sm_80 to sm_90:
 * mma.sync fed by a cp.async ring of shared-memory stages
 * (templates/gemm_sm80.cu), batched, operands in either layout, with the
 * pointwise epilogue fused. */
#include "codegen/gemm_sm80.h"

#include <stdio.h>
#include <string.h>

#include "codegen/buf.h"
#include "codegen/cg_internal.h"
#include "codegen/expr.h"
#include "codegen/matmul.h"
#include "codegen/part.h"
#include "codegen/template.h"

/* The template's fixed tile (128 x 128 x 32, 8 warps) and a stage's bytes:
 * both 4096-element tiles of 2 bytes. */
enum { BM = 128, BN = 128, BK = 32, THREADS = 256, STAGE_BYTES = 2 * 2 * 4096, MAX_STAGES = 4 };

/* How the kernel reads one operand: the kernel input `stored`, which is the
 * product's argument itself or (trans) the value a transpose of the last
 * two axes reads, a layout rather than a computed prologue. */
typedef struct g80_operand {
  int32_t stored;
  bool trans;
} g80_operand;

static bool is_input(const fuse_kernel *k, int32_t v) {
  for (int i = 0; i < k->n_inputs; i++)
    if (k->inputs[i] == v) return true;
  return false;
}

static bool operand(const cg_emit_args *a, int32_t v, g80_operand *o) {
  o->stored = v;
  o->trans = false;
  if (is_input(a->k, v)) return true;
  const ir_node *t = &a->g->nodes[v];
  if (t->op != IR_OP_TRANSPOSE || t->rank < 2 || !is_input(a->k, t->args[0])) return false;
  for (int d = 0; d < t->rank - 2; d++)
    if (t->perm[d] != d) return false;
  if (t->perm[t->rank - 2] != t->rank - 1 || t->perm[t->rank - 1] != t->rank - 2) return false;
  o->stored = t->args[0];
  o->trans = true;
  return true;
}

static int stages(const cg_target *t) {
  int limit = t->max_smem_per_block > 0 ? t->max_smem_per_block : 48 * 1024;
  int s = limit / STAGE_BYTES;
  return s > MAX_STAGES ? MAX_STAGES : s;
}

bool cg_gemm80_fits(const cg_emit_args *a, char *why, size_t size) {
  int32_t id = -1;
  const ir_node *mm = cg_find_matmul(a, &id);
  const char *no = NULL;
  if (!mm) return false;
  const ir_node *A = &a->g->nodes[mm->args[0]], *B = &a->g->nodes[mm->args[1]];
  int64_t m = mm->shape[mm->rank - 2], n = mm->shape[mm->rank - 1], k = A->shape[A->rank - 1];
  int cc = a->t->cc_major * 10 + a->t->cc_minor;
  g80_operand oa, ob;
  if (cc < 80 || cc > 90)
    no = "not sm_80 to sm_90";
  else if (a->t->knobs && a->t->knobs->gemm80 == 0)
    no = "KFUSE_GEMM80=0";
  else if (!a->part->alone)
    no = "packed with other kernels";
  else if ((mm->dtype != KF_BF16 && mm->dtype != KF_F16) || A->dtype != mm->dtype ||
           B->dtype != mm->dtype)
    no = "not a bf16 or f16 product";
  else if (!operand(a, mm->args[0], &oa) || !operand(a, mm->args[1], &ob))
    no = "an operand computed in the kernel (beyond a transpose of its last two axes)";
  else if (m < 1 || n < 1 || k < 1 || m > INT32_MAX - 256 || n > INT32_MAX - 256 ||
           k > INT32_MAX - 256) /* tile origins and k offsets are int */
    no = "a dimension out of range";
  else if (cg_ceil_div(m, BM) * cg_ceil_div(n, BN) > INT32_MAX)
    no = "too many tiles";
  else if (stages(a->t) < 2)
    no = "too little shared memory for two stages";
  if (no && why) snprintf(why, size, "%s", no);
  return no == NULL;
}

static int64_t batch_of(const kf_graph *g, const ir_node *mm, int32_t id) {
  return kf_value_numel(g, id) / (mm->shape[mm->rank - 2] * mm->shape[mm->rank - 1]);
}

kf_status cg_plan_gemm80(cg_emit_args *a) {
  int32_t id = -1;
  const ir_node *mm = cg_find_matmul(a, &id);
  const ir_node *A = &a->g->nodes[mm->args[0]];
  int64_t m = mm->shape[mm->rank - 2], n = mm->shape[mm->rank - 1], k = A->shape[A->rank - 1];
  int64_t batch = batch_of(a->g, mm, id), tiles = cg_ceil_div(m, BM) * cg_ceil_div(n, BN);
  g80_operand oa, ob;
  operand(a, mm->args[0], &oa);
  operand(a, mm->args[1], &ob);
  cg_part *p = a->part;
  int ns = stages(a->t);
  p->threads = THREADS;
  p->min_blocks = 2; /* 125 registers, no spills (ptxas, sm_80): two blocks an SM where
                        the shared memory allows it */
  cg_part_grid(p, batch * tiles);
  p->lanes = 1;
  p->smem = (uint32_t)(ns * STAGE_BYTES);
  int64_t biggest = batch * m * n;
  for (int i = 0; i < a->k->n_inputs; i++) {
    int64_t e = kf_value_numel(a->g, a->k->inputs[i]);
    if (e > biggest) biggest = e;
  }
  p->max_offset = biggest - 1;
  /* rows and columns of a tile run up to 127 past M and N before the
   * bounds check; the block index is batch x tiles */
  cg_index_type((biggest > batch * tiles ? biggest : batch * tiles) + 2 * BM, &p->index64);
  p->vec_bytes = (int)kf_dtype_size(mm->dtype);
  p->gemm80 = true;
  snprintf(p->decisions, sizeof p->decisions,
           "matmul: %lld x %lldx%lldx%lld on the mma.sync template (m16n8k16, tile %dx%dx%d, 8 "
           "warps, %d cp.async stages, A %s, B %s), %s index",
           (long long)batch, (long long)m, (long long)n, (long long)k, BM, BN, BK, ns,
           oa.trans ? "transposed" : "row-major", ob.trans ? "transposed" : "row-major",
           p->index64 ? "64-bit" : "32-bit");
  return KF_OK;
}

/* The element offset of batch entry bt in operand x (the product's
 * argument, [..., R, C], its batch axes right-aligned with the output's):
 * a sum over the output's batch axes of coordinate x stride, with stride
 * 0 where x has extent 1 there (broadcast). */
static void batch_offset(const ir_node *mm, const ir_node *x, char *out, size_t size) {
  int nb = mm->rank - 2, xb = x->rank - 2;
  int64_t mat = x->shape[x->rank - 2] * x->shape[x->rank - 1];
  bool all = true, none = true;
  for (int d = 0; d < nb; d++) {
    int xd = d - (nb - xb);
    bool moves = xd >= 0 && x->shape[xd] != 1;
    all = all && (moves || mm->shape[d] == 1);
    none = none && !moves;
  }
  if (none) {
    snprintf(out, size, "0");
    return;
  }
  if (all) { /* the same batch axes as the output's: entry bt is matrix bt */
    snprintf(out, size, "(long long)bt * %lldLL", (long long)mat);
    return;
  }
  size_t len = 0;
  out[0] = '\0';
  int64_t inner = 1, stride = mat;
  for (int d = nb - 1; d >= 0; d--) {
    int xd = d - (nb - xb);
    if (xd >= 0 && x->shape[xd] != 1 && len < size)
      len += (size_t)snprintf(out + len, size - len, "%s(long long)(bt / %lld %% %lld) * %lldLL",
                              len ? " + " : "", (long long)inner, (long long)mm->shape[d],
                              (long long)stride);
    inner *= mm->shape[d];
    if (xd >= 0) stride *= x->shape[xd];
  }
}

kf_status cg_emit_gemm80(cg_emit_args *a) {
  int32_t id = -1;
  const ir_node *mm = cg_find_matmul(a, &id);
  const kf_graph *g = a->g;
  cg_part *p = a->part;
  const char *idx = p->index64 ? "long long" : "int";
  const ir_node *A = &g->nodes[mm->args[0]], *B = &g->nodes[mm->args[1]];
  int64_t m = mm->shape[mm->rank - 2], n = mm->shape[mm->rank - 1], k = A->shape[A->rank - 1];
  g80_operand oa, ob;
  operand(a, mm->args[0], &oa);
  operand(a, mm->args[1], &ob);
  cg_buf epi = {0}, params = {0};
  cg_gen gen;
  cg_gen_init(&gen, g, a->k, &epi, idx);
  cg_matmul_epilogue(&gen, a, mm, id, 10);
  cg_param_decls(g, p, &params);
  /* the stored matrices' row strides: A [M, K] or [K, M], B [K, N] or [N, K] */
  int64_t lda = oa.trans ? m : k, ldb = ob.trans ? k : n;
  char v[12][32], aoff[512], boff[512];
  const char *sfx = p->index64 ? "LL" : "";
  snprintf(v[0], sizeof v[0], "%lld", (long long)m);
  snprintf(v[1], sizeof v[1], "%lld", (long long)n);
  snprintf(v[2], sizeof v[2], "%lld", (long long)k);
  snprintf(v[3], sizeof v[3], "%lld", (long long)batch_of(g, mm, id));
  snprintf(v[4], sizeof v[4], "%lld%s", (long long)cg_ceil_div(m, BM), sfx);
  snprintf(v[5], sizeof v[5], "%lld%s", (long long)cg_ceil_div(n, BN), sfx);
  snprintf(v[6], sizeof v[6], "%lld", (long long)cg_ceil_div(k, BK));
  snprintf(v[7], sizeof v[7], "%d", (int)(p->smem / STAGE_BYTES));
  snprintf(v[8], sizeof v[8], "%lldLL", (long long)lda);
  snprintf(v[9], sizeof v[9], "%lldLL", (long long)ldb);
  snprintf(v[10], sizeof v[10], "p%d", (int)oa.stored);
  snprintf(v[11], sizeof v[11], "p%d", (int)ob.stored);
  batch_offset(mm, A, aoff, sizeof aoff);
  batch_offset(mm, B, boff, sizeof boff);
  cg_hole holes[] = {{"fn", p->fn},
                     {"BID", cg_part_bid_type(p)},
                     {"IDX", idx},
                     {"M", v[0]},
                     {"N", v[1]},
                     {"K", v[2]},
                     {"BATCH", v[3]},
                     {"MT", v[4]},
                     {"NT", v[5]},
                     {"KBLOCKS", v[6]},
                     {"STAGES", v[7]},
                     {"BF", mm->dtype == KF_BF16 ? "true" : "false"},
                     {"AT", oa.trans ? "true" : "false"},
                     {"BT", ob.trans ? "true" : "false"},
                     {"AAL", lda % 8 == 0 ? "true" : "false"},
                     {"BAL", ldb % 8 == 0 ? "true" : "false"},
                     {"LDA", v[8]},
                     {"LDB", v[9]},
                     {"pa", v[10]},
                     {"pb", v[11]},
                     {"AOFF", aoff},
                     {"BOFF", boff},
                     {"params", cg_use(a->out, &params)},
                     {"epilogue", cg_use(a->out, &epi)}};
  kf_status st = KF_OK;
  if (gen.failed) {
    snprintf(a->err, a->errsize, "%s: %s", a->k->name, gen.err);
    st = gen.status;
  } else if (!cg_fill(a->out, "sm80_common.cu", NULL, 0, a->err, a->errsize) ||
             !cg_fill(a->out, "gemm_sm80.cu", holes, (int)(sizeof holes / sizeof holes[0]), a->err,
                      a->errsize)) {
    st = KF_ERR_INTERNAL;
  }
  if (st == KF_OK && (epi.oom || params.oom)) st = KF_ERR_OUT_OF_MEMORY;
  cg_gen_free(&gen);
  cg_buf_free(&epi);
  cg_buf_free(&params);
  return st;
}
