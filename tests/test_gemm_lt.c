/* test_gemm_lt.c - the cuBLASLt path without a GPU: the row-major to
 * column-major mapping checked by computing with it (a CPU model of
 * cuBLASLt's semantics against a plain row-major product), every epilogue
 * and refusal, and the descriptor calls recorded by a fake library table. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check_main.h"
#include "runtime/gemm_lt.h"

/* ---- a CPU model of what cuBLASLt computes from a map ---------------------- */

/* Element (r, c) of op(X), X column-major as the layout says. */
static double lt_elem(const double *x, const rt_lt_layout *l, cublasOperation_t op, int64_t r,
                      int64_t c) {
  if (op == CUBLAS_OP_T) {
    int64_t t = r;
    r = c, c = t;
  }
  return x[r + c * l->ld];
}

static double act(rt_gemm_act a, double v) {
  if (a == RT_GEMM_ACT_RELU) return v > 0 ? v : 0;
  if (a == RT_GEMM_ACT_GELU_TANH)
    return 0.5 * v * (1 + tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)));
  return v;
}

/* D = epilogue(op1(first) * op2(second)), column-major, per batch entry. */
static void lt_model(const rt_lt_map *m, const double *first, const double *second,
                     const double *bias, const double *c, double alpha, double beta, rt_gemm_act a,
                     double *d) {
  int64_t rows = (int64_t)m->d.rows, cols = (int64_t)m->d.cols;
  int64_t inner = m->op_first == CUBLAS_OP_N ? (int64_t)m->first.cols : (int64_t)m->first.rows;
  for (int32_t b = 0; b < m->batch; b++)
    for (int64_t i = 0; i < rows; i++)
      for (int64_t j = 0; j < cols; j++) {
        double acc = 0;
        for (int64_t k = 0; k < inner; k++)
          acc += lt_elem(first + b * m->first.stride, &m->first, m->op_first, i, k) *
                 lt_elem(second + b * m->second.stride, &m->second, m->op_second, k, j);
        double v = alpha * acc + (c ? beta * c[b * m->c.stride + i + j * m->c.ld] : 0);
        if (bias) v += bias[i];
        d[b * m->d.stride + i + j * m->d.ld] = act(a, v);
      }
}

/* The row-major truth: D[b][i][j] = act(alpha sum_k A[i,k] B[k,j] + bias[j] + beta C). */
static void row_major_truth(const rt_gemm *g, const double *a, const double *bm, const double *bias,
                            const double *c, double *d) {
  for (int64_t b = 0; b < g->batch; b++)
    for (int64_t i = 0; i < g->m; i++)
      for (int64_t j = 0; j < g->n; j++) {
        double acc = 0;
        for (int64_t k = 0; k < g->k; k++) {
          double av =
              g->a_trans ? a[b * g->a_stride + k * g->m + i] : a[b * g->a_stride + i * g->k + k];
          double bv =
              g->b_trans ? bm[b * g->b_stride + j * g->k + k] : bm[b * g->b_stride + k * g->n + j];
          acc += av * bv;
        }
        double v = g->alpha * acc + (c ? g->beta * c[b * g->d_stride + i * g->n + j] : 0);
        if (bias) v += bias[j];
        d[b * g->d_stride + i * g->n + j] = act(g->act, v);
      }
}

static void fill(double *x, int64_t n, unsigned seed) {
  for (int64_t i = 0; i < n; i++)
    x[i] = (double)((seed * 2654435761u + (unsigned)i * 40503u) % 97) / 48.0 - 1.0;
}

/* Every transpose combination, batched with a broadcast operand, with and
 * without bias, residual and each activation: the mapping computes the
 * row-major product exactly. */
START_TEST(mapping_computes_the_row_major_product) {
  const int64_t M = 5, N = 3, K = 4, B = 2;
  double a[B * M * K], bm[B * K * N], bias[N], c[B * M * N], want[B * M * N], got[B * M * N];
  fill(a, B * M * K, 1), fill(bm, B * K * N, 2), fill(bias, N, 3), fill(c, B * M * N, 4);
  for (int combo = 0; combo < 4 * 2 * 2 * 3; combo++) {
    rt_gemm g = {.batch = B,
                 .m = M,
                 .n = N,
                 .k = K,
                 .ab_type = KF_BF16,
                 .d_type = KF_BF16,
                 .a_trans = combo & 1,
                 .b_trans = (combo >> 1) & 1,
                 .a_stride = M * K,
                 .b_stride = 0 /* one weight for the batch */,
                 .d_stride = M * N,
                 .bias = (combo >> 2) & 1,
                 .act = (rt_gemm_act)((combo >> 4) % 3),
                 .alpha = 0.5f,
                 .beta = (combo >> 3) & 1 ? 1.0f : 0.0f};
    rt_lt_map m;
    char why[128];
    ck_assert_int_eq(rt_gemm_lt_map(&g, &m, why, sizeof why), KF_OK);
    const double *cp = g.beta != 0 ? c : NULL, *bp = g.bias ? bias : NULL;
    row_major_truth(&g, a, bm, bp, cp, want);
    memset(got, 0, sizeof got);
    lt_model(&m, bm, a, bp, cp, g.alpha, g.beta, g.act, got);
    for (int64_t i = 0; i < B * M * N; i++)
      ck_assert_msg(fabs(got[i] - want[i]) < 1e-12, "combo %d element %lld: %g vs %g", combo,
                    (long long)i, got[i], want[i]);
  }
}
END_TEST

START_TEST(epilogues_and_types_map) {
  rt_gemm g = {
      .batch = 1, .m = 64, .n = 32, .k = 16, .ab_type = KF_BF16, .d_type = KF_BF16, .alpha = 1};
  rt_lt_map m;
  char why[128];
  struct {
    bool bias;
    rt_gemm_act act;
    cublasLtEpilogue_t want;
  } cases[] = {{false, RT_GEMM_ACT_NONE, CUBLASLT_EPILOGUE_DEFAULT},
               {true, RT_GEMM_ACT_NONE, CUBLASLT_EPILOGUE_BIAS},
               {false, RT_GEMM_ACT_RELU, CUBLASLT_EPILOGUE_RELU},
               {true, RT_GEMM_ACT_RELU, CUBLASLT_EPILOGUE_RELU_BIAS},
               {false, RT_GEMM_ACT_GELU_TANH, CUBLASLT_EPILOGUE_GELU},
               {true, RT_GEMM_ACT_GELU_TANH, CUBLASLT_EPILOGUE_GELU_BIAS}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    g.bias = cases[i].bias, g.act = cases[i].act;
    ck_assert_int_eq(rt_gemm_lt_map(&g, &m, why, sizeof why), KF_OK);
    ck_assert_int_eq(m.epilogue, cases[i].want);
  }
  ck_assert_int_eq(m.compute, CUBLAS_COMPUTE_32F);
  ck_assert_int_eq(m.first.type, CUDA_R_16BF);
  g.d_type = KF_F32; /* bf16 operands, f32 output */
  ck_assert_int_eq(rt_gemm_lt_map(&g, &m, why, sizeof why), KF_OK);
  ck_assert_int_eq(m.d.type, CUDA_R_32F);
  ck_assert_int_eq(m.first.type, CUDA_R_16BF);
  g.ab_type = g.d_type = KF_F32; /* full f32 unless TF32 is allowed */
  ck_assert_int_eq(rt_gemm_lt_map(&g, &m, why, sizeof why), KF_OK);
  ck_assert_int_eq(m.compute, CUBLAS_COMPUTE_32F);
  g.allow_tf32 = true;
  ck_assert_int_eq(rt_gemm_lt_map(&g, &m, why, sizeof why), KF_OK);
  ck_assert_int_eq(m.compute, CUBLAS_COMPUTE_32F_FAST_TF32);
}
END_TEST

START_TEST(refusals_say_why) {
  rt_lt_map m;
  char why[128];
  rt_gemm ok = {
      .batch = 1, .m = 8, .n = 8, .k = 8, .ab_type = KF_F16, .d_type = KF_F16, .alpha = 1};
  rt_gemm g = ok;
  g.d_type = KF_BF16;
  ck_assert_int_eq(rt_gemm_lt_map(&g, &m, why, sizeof why), KF_ERR_UNSUPPORTED);
  ck_assert_ptr_nonnull(strstr(why, "output dtype"));
  g = ok, g.ab_type = KF_I32, g.d_type = KF_I32;
  ck_assert_int_eq(rt_gemm_lt_map(&g, &m, why, sizeof why), KF_ERR_UNSUPPORTED);
  g = ok, g.allow_tf32 = true;
  ck_assert_int_eq(rt_gemm_lt_map(&g, &m, why, sizeof why), KF_ERR_UNSUPPORTED);
  ck_assert_ptr_nonnull(strstr(why, "TF32"));
  g = ok, g.batch = (int64_t)INT32_MAX + 1, g.d_stride = 64;
  ck_assert_int_eq(rt_gemm_lt_map(&g, &m, why, sizeof why), KF_ERR_UNSUPPORTED);
  g = ok, g.k = 0;
  ck_assert_int_eq(rt_gemm_lt_map(&g, &m, why, sizeof why), KF_ERR_UNSUPPORTED);
  g = ok, g.batch = 2, g.d_stride = 0; /* both outputs in one place */
  ck_assert_int_eq(rt_gemm_lt_map(&g, &m, why, sizeof why), KF_ERR_UNSUPPORTED);
}
END_TEST

/* ---- a recording fake library --------------------------------------------- */

static struct fake_state {
  int layouts, layouts_live, descs_live, prefs_live;
  uint64_t rows[8], cols[8];
  int64_t lds[8];
  int32_t batch_attr;
  int64_t stride_attr[8];
  int32_t transa, transb;
  uint32_t epilogue;
  const void *bias_ptr;
  uint64_t ws_max;
  uint32_t schemes;
  uint32_t min_align[4]; /* MIN_ALIGNMENT_{A,B,C,D}_BYTES */
  int heuristic_returns;
  const void *mm_a, *mm_b, *mm_c, *mm_d;
  uint64_t mm_algo0;
} fk;

static size_t fk_version(void) {
  return 130000;
}
static cublasStatus_t fk_create(cublasLtHandle_t *h) {
  *h = (cublasLtHandle_t)0x10;
  return 0;
}
static cublasStatus_t fk_destroy(cublasLtHandle_t h) {
  (void)h;
  return 0;
}
static cublasStatus_t fk_desc_create(cublasLtMatmulDesc_t *d, cublasComputeType_t c,
                                     cudaDataType_t s) {
  (void)c, (void)s;
  *d = (cublasLtMatmulDesc_t)0x20;
  fk.descs_live++;
  return 0;
}
static cublasStatus_t fk_desc_destroy(cublasLtMatmulDesc_t d) {
  (void)d;
  fk.descs_live--;
  return 0;
}
static cublasStatus_t fk_desc_set(cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t a,
                                  const void *v, size_t n) {
  (void)d, (void)n;
  if (a == CUBLASLT_MATMUL_DESC_TRANSA) memcpy(&fk.transa, v, 4);
  if (a == CUBLASLT_MATMUL_DESC_TRANSB) memcpy(&fk.transb, v, 4);
  if (a == CUBLASLT_MATMUL_DESC_EPILOGUE) memcpy(&fk.epilogue, v, 4);
  if (a == CUBLASLT_MATMUL_DESC_BIAS_POINTER) memcpy(&fk.bias_ptr, v, sizeof(void *));
  return 0;
}
static cublasStatus_t fk_layout_create(cublasLtMatrixLayout_t *l, cudaDataType t, uint64_t r,
                                       uint64_t c, int64_t ld) {
  (void)t;
  int i = fk.layouts++;
  fk.rows[i] = r, fk.cols[i] = c, fk.lds[i] = ld;
  *l = (cublasLtMatrixLayout_t)(uintptr_t)(0x100 + i);
  fk.layouts_live++;
  return 0;
}
static cublasStatus_t fk_layout_destroy(cublasLtMatrixLayout_t l) {
  (void)l;
  fk.layouts_live--;
  return 0;
}
static cublasStatus_t fk_layout_set(cublasLtMatrixLayout_t l, cublasLtMatrixLayoutAttribute_t a,
                                    const void *v, size_t n) {
  (void)n;
  int i = (int)((uintptr_t)l - 0x100);
  if (a == CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT) memcpy(&fk.batch_attr, v, 4);
  if (a == CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET) memcpy(&fk.stride_attr[i], v, 8);
  return 0;
}
static cublasStatus_t fk_pref_create(cublasLtMatmulPreference_t *p) {
  *p = (cublasLtMatmulPreference_t)0x30;
  fk.prefs_live++;
  memset(fk.min_align, 0, sizeof fk.min_align); /* 0: left at the default */
  return 0;
}
static cublasStatus_t fk_pref_destroy(cublasLtMatmulPreference_t p) {
  (void)p;
  fk.prefs_live--;
  return 0;
}
static cublasStatus_t fk_pref_set(cublasLtMatmulPreference_t p,
                                  cublasLtMatmulPreferenceAttributes_t a, const void *v, size_t n) {
  (void)p, (void)n;
  if (a == CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES) memcpy(&fk.ws_max, v, 8);
  if (a == CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK) memcpy(&fk.schemes, v, 4);
  if (a >= CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES &&
      a <= CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES)
    memcpy(&fk.min_align[a - CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES], v, 4);
  return 0;
}
/* Three results: good, one that failed, one that needs too much workspace. */
static cublasStatus_t fk_heuristic(cublasLtHandle_t h, cublasLtMatmulDesc_t d,
                                   cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
                                   cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t dd,
                                   cublasLtMatmulPreference_t p, int req,
                                   cublasLtMatmulHeuristicResult_t r[], int *ret) {
  (void)h, (void)d, (void)a, (void)b, (void)c, (void)dd, (void)p;
  int n = fk.heuristic_returns < req ? fk.heuristic_returns : req;
  for (int i = 0; i < n; i++) {
    memset(&r[i], 0, sizeof r[i]);
    r[i].algo.data[0] = 1000 + (uint64_t)i;
    r[i].state = i == 1 ? CUBLAS_STATUS_NOT_SUPPORTED : CUBLAS_STATUS_SUCCESS;
    r[i].workspaceSize = i == 2 ? fk.ws_max + 1 : 1024;
  }
  *ret = n;
  return 0;
}
static cublasStatus_t fk_matmul(cublasLtHandle_t h, cublasLtMatmulDesc_t d, const void *al,
                                const void *A, cublasLtMatrixLayout_t la, const void *B,
                                cublasLtMatrixLayout_t lb, const void *be, const void *C,
                                cublasLtMatrixLayout_t lc, void *D, cublasLtMatrixLayout_t ld,
                                const cublasLtMatmulAlgo_t *algo, void *ws, size_t wss,
                                cudaStream_t s) {
  (void)h, (void)d, (void)al, (void)la, (void)lb, (void)be, (void)lc, (void)ld, (void)ws, (void)wss,
      (void)s;
  fk.mm_a = A, fk.mm_b = B, fk.mm_c = C, fk.mm_d = D;
  fk.mm_algo0 = algo->data[0];
  return 0;
}

static const rt_blaslt fake = {.name = "fake",
                               .GetVersion = fk_version,
                               .Create = fk_create,
                               .Destroy = fk_destroy,
                               .MatmulDescCreate = fk_desc_create,
                               .MatmulDescDestroy = fk_desc_destroy,
                               .MatmulDescSetAttribute = fk_desc_set,
                               .MatrixLayoutCreate = fk_layout_create,
                               .MatrixLayoutDestroy = fk_layout_destroy,
                               .MatrixLayoutSetAttribute = fk_layout_set,
                               .MatmulPreferenceCreate = fk_pref_create,
                               .MatmulPreferenceDestroy = fk_pref_destroy,
                               .MatmulPreferenceSetAttribute = fk_pref_set,
                               .MatmulAlgoGetHeuristic = fk_heuristic,
                               .Matmul = fk_matmul};

START_TEST(prepare_and_run_through_the_table) {
  memset(&fk, 0, sizeof fk);
  fk.heuristic_returns = 3;
  rt_blaslt_override(&fake);
  const rt_blaslt *lt;
  ck_assert_int_eq(rt_blaslt_get(&lt, NULL, 0), KF_OK);
  ck_assert_str_eq(lt->name, "fake");
  rt_gemm g = {.batch = 4,
               .m = 128,
               .n = 64,
               .k = 32,
               .ab_type = KF_BF16,
               .d_type = KF_BF16,
               .b_trans = true,
               .a_stride = 128 * 32,
               .b_stride = 0,
               .d_stride = 128 * 64,
               .bias = true,
               .act = RT_GEMM_ACT_GELU_TANH,
               .alpha = 1};
  rt_gemm_lt p;
  char err[128];
  ck_assert_int_eq(
      rt_gemm_lt_prepare(&p, lt, (cublasLtHandle_t)0x10, &g, NULL, 1 << 20, 8, err, sizeof err),
      KF_OK);
  ck_assert_int_eq(p.ncand, 1); /* the failed and the too-large results dropped */
  ck_assert_uint_eq(fk.ws_max, 1 << 20);
  /* No split-K reduction in bf16: partial sums stay f32. */
  ck_assert_uint_eq(fk.schemes & CUBLASLT_REDUCTION_SCHEME_OUTPUT_TYPE, 0);
  ck_assert_uint_ne(fk.schemes & CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE, 0);
  ck_assert_int_eq(fk.transa, CUBLAS_OP_T); /* B in PyTorch's [N, K] layout */
  ck_assert_int_eq(fk.transb, CUBLAS_OP_N);
  ck_assert_uint_eq(fk.epilogue, CUBLASLT_EPILOGUE_GELU_BIAS);
  ck_assert_int_eq(fk.layouts, 4);
  ck_assert_uint_eq(fk.rows[0], 32);
  ck_assert_uint_eq(fk.cols[0], 64); /* B^T stored [K x N] col-major */
  ck_assert_int_eq(fk.lds[0], 32);
  ck_assert_uint_eq(fk.rows[3], 64);
  ck_assert_uint_eq(fk.cols[3], 128); /* D^T */
  ck_assert_int_eq(fk.batch_attr, 4);
  ck_assert_int_eq(fk.stride_attr[0], 0);        /* the shared weight */
  ck_assert_int_eq(fk.stride_attr[1], 128 * 32); /* A */
  ck_assert_int_eq(fk.stride_attr[3], 128 * 64); /* D */
  rt_gemm_args args = {.a = 0xA000, .b = 0xB000, .bias = 0xC000, .d = 0xD000};
  ck_assert_int_eq(rt_gemm_lt_run(&p, 0, &args, NULL, err, sizeof err), KF_OK);
  ck_assert_ptr_eq(fk.mm_a, (const void *)0xB000); /* first operand: our B */
  ck_assert_ptr_eq(fk.mm_b, (const void *)0xA000);
  ck_assert_ptr_eq(fk.mm_c, (const void *)0xD000); /* beta 0: C is D */
  ck_assert_ptr_eq(fk.bias_ptr, (const void *)0xC000);
  ck_assert_uint_eq(fk.mm_algo0, 1000);
  ck_assert_int_eq(rt_gemm_lt_run(&p, 1, &args, NULL, err, sizeof err), KF_ERR_INVALID_ARG);
  rt_gemm_lt_release(&p);
  /* The load's set leaves the heuristic's alignment preferences at their
   * default (256 bytes), the bias stand-in 256 too; a run's real
   * alignments, from its pointers, ask for theirs (cuBLASLt's A is our B)
   * and only such a set takes that run. */
  for (int i = 0; i < 4; i++) ck_assert_uint_eq(fk.min_align[i], 0);
  ck_assert_ptr_eq(fk.bias_ptr, (const void *)0xC000); /* the last run's */
  rt_gemm_align al;
  rt_gemm_args odd = {.a = 0xA002, .b = 0xB008, .bias = 0xC004, .d = 0xD010};
  rt_gemm_lt_align_of(&g, &odd, &al);
  ck_assert_uint_eq(al.a, 2);
  ck_assert_uint_eq(al.b, 8);
  ck_assert_uint_eq(al.c, 16); /* beta 0: C is D */
  ck_assert_uint_eq(al.d, 16);
  ck_assert_uint_eq(al.bias, 4);
  rt_gemm_lt_align_of(&g, &args, &al);
  ck_assert_uint_eq(al.a, 256); /* 0xA000: capped at 256 */
  ck_assert_uint_eq(al.d, 256);
  fk.layouts = 0; /* the fake's per-layout records hold one product's */
  ck_assert_int_eq(
      rt_gemm_lt_prepare(&p, lt, (cublasLtHandle_t)0x10, &g, NULL, 1 << 20, 8, err, sizeof err),
      KF_OK);
  ck_assert(rt_gemm_lt_takes(&p, &al));
  rt_gemm_lt_align_of(&g, &odd, &al);
  ck_assert(!rt_gemm_lt_takes(&p, &al));
  rt_gemm_lt_release(&p);
  fk.layouts = 0;
  ck_assert_int_eq(
      rt_gemm_lt_prepare(&p, lt, (cublasLtHandle_t)0x10, &g, &al, 1 << 20, 8, err, sizeof err),
      KF_OK);
  ck_assert_uint_eq(fk.min_align[0], 8); /* our B */
  ck_assert_uint_eq(fk.min_align[1], 2); /* our A */
  ck_assert_uint_eq(fk.min_align[2], 16);
  ck_assert_uint_eq(fk.min_align[3], 16);
  ck_assert_ptr_eq(fk.bias_ptr, (const void *)4); /* the stand-in the heuristic saw */
  ck_assert(rt_gemm_lt_takes(&p, &al));
  rt_gemm_lt_align_of(&g, &args, &al);
  ck_assert(rt_gemm_lt_takes(&p, &al)); /* more aligned is fine */
  rt_gemm_lt_release(&p);
  /* Pointers more aligned than their rows: the heuristic is told what
   * the rows keep (A's and B's pitch is 32 bf16, 64 bytes; D's 128). */
  al = (rt_gemm_align){.a = 128, .b = 128, .c = 256, .d = 256, .bias = 256};
  fk.layouts = 0;
  ck_assert_int_eq(
      rt_gemm_lt_prepare(&p, lt, (cublasLtHandle_t)0x10, &g, &al, 1 << 20, 8, err, sizeof err),
      KF_OK);
  ck_assert_uint_eq(fk.min_align[0], 64);
  ck_assert_uint_eq(fk.min_align[1], 64);
  ck_assert_uint_eq(fk.min_align[2], 128);
  ck_assert_uint_eq(fk.min_align[3], 128);
  ck_assert(rt_gemm_lt_takes(&p, &al));
  rt_gemm_lt_release(&p);
  ck_assert_int_eq(fk.layouts_live, 0);
  ck_assert_int_eq(fk.descs_live, 0);
  ck_assert_int_eq(fk.prefs_live, 0);
  /* No algorithm at all: unsupported, with the reason, nothing held. */
  fk.heuristic_returns = 0;
  fk.layouts = 0;
  ck_assert_int_eq(
      rt_gemm_lt_prepare(&p, lt, (cublasLtHandle_t)0x10, &g, NULL, 1 << 20, 8, err, sizeof err),
      KF_ERR_UNSUPPORTED);
  ck_assert_ptr_nonnull(strstr(err, "heuristic"));
  ck_assert_int_eq(fk.layouts_live, 0);
  ck_assert_int_eq(fk.descs_live, 0);
  rt_blaslt_override(NULL);
}
END_TEST

/* Without an override the real library is looked up: on a machine with the
 * CUDA toolkit it loads (no GPU is needed to resolve entries); either way
 * the answer is a status, with a reason when it fails. */
START_TEST(real_library_lookup_answers) {
  const rt_blaslt *lt = NULL;
  char err[256] = "";
  kf_status s = rt_blaslt_get(&lt, err, sizeof err);
  if (s == KF_OK) {
    ck_assert_ptr_nonnull(lt->Matmul);
    ck_assert_uint_gt(lt->GetVersion(), 0);
  } else {
    ck_assert_int_eq(s, KF_ERR_UNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(err, "libcublasLt"));
  }
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("gemm_lt");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, mapping_computes_the_row_major_product);
  tcase_add_test(tc, epilogues_and_types_map);
  tcase_add_test(tc, refusals_say_why);
  tcase_add_test(tc, prepare_and_run_through_the_table);
  suite_add_tcase(s, tc);
  /* The first dlopen of libcublasLt reads a few hundred MB: 3 s here. */
  TCase *real = tcase_create("real");
  tcase_set_timeout(real, 60);
  tcase_add_test(real, real_library_lookup_answers);
  suite_add_tcase(s, real);
  return s;
}
