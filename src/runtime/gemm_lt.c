/* gemm_lt.c - a row-major product and its epilogue mapped onto cuBLASLt's
 * column-major descriptors, its heuristic candidates, and its runs. */
#include "runtime/gemm_lt.h"

#include <stdio.h>
#include <string.h>

const char *rt_cublas_status_name(cublasStatus_t st) {
  switch (st) {
#define RT_CUBLAS_CASE_(x) \
  case x:                  \
    return #x;
    RT_CUBLAS_CASE_(CUBLAS_STATUS_SUCCESS)
    RT_CUBLAS_CASE_(CUBLAS_STATUS_NOT_INITIALIZED)
    RT_CUBLAS_CASE_(CUBLAS_STATUS_ALLOC_FAILED)
    RT_CUBLAS_CASE_(CUBLAS_STATUS_INVALID_VALUE)
    RT_CUBLAS_CASE_(CUBLAS_STATUS_ARCH_MISMATCH)
    RT_CUBLAS_CASE_(CUBLAS_STATUS_MAPPING_ERROR)
    RT_CUBLAS_CASE_(CUBLAS_STATUS_EXECUTION_FAILED)
    RT_CUBLAS_CASE_(CUBLAS_STATUS_INTERNAL_ERROR)
    RT_CUBLAS_CASE_(CUBLAS_STATUS_NOT_SUPPORTED)
    RT_CUBLAS_CASE_(CUBLAS_STATUS_LICENSE_ERROR)
#undef RT_CUBLAS_CASE_
    default:
      return "CUBLAS_STATUS_UNKNOWN";
  }
}

static bool lt_type(kf_dtype t, cudaDataType_t *out) {
  switch (t) {
    case KF_F16:
      *out = CUDA_R_16F;
      return true;
    case KF_BF16:
      *out = CUDA_R_16BF;
      return true;
    case KF_F32:
      *out = CUDA_R_32F;
      return true;
    default:
      return false;
  }
}

static cublasLtEpilogue_t lt_epilogue(bool bias, rt_gemm_act act) {
  switch (act) {
    case RT_GEMM_ACT_RELU:
      return bias ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_RELU;
    case RT_GEMM_ACT_GELU_TANH:
      return bias ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_GELU;
    default:
      return bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
  }
}

static kf_status refuse(char *why, size_t whysize, const char *text) {
  if (why && whysize) snprintf(why, whysize, "%s", text);
  return KF_ERR_UNSUPPORTED;
}

/* A row-major [r, c] matrix, as cuBLASLt's column-major [c, r]. */
static rt_lt_layout row_major(cudaDataType_t type, int64_t r, int64_t c, int64_t stride) {
  return (rt_lt_layout){
      .type = type, .rows = (uint64_t)c, .cols = (uint64_t)r, .ld = c, .stride = stride};
}

kf_status rt_gemm_lt_map(const rt_gemm *g, rt_lt_map *out, char *why, size_t whysize) {
  memset(out, 0, sizeof *out);
  if (g->batch < 1 || g->m < 1 || g->n < 1 || g->k < 1)
    return refuse(why, whysize, "an empty product");
  if (g->batch > INT32_MAX) return refuse(why, whysize, "a batch over 2^31-1 matrices");
  cudaDataType_t ab, d;
  if (!lt_type(g->ab_type, &ab)) return refuse(why, whysize, "operands not f16, bf16 or f32");
  if (!lt_type(g->d_type, &d) || (g->d_type != g->ab_type && g->d_type != KF_F32))
    return refuse(why, whysize, "an output dtype other than the operands' or f32");
  if (g->allow_tf32 && g->ab_type != KF_F32)
    return refuse(why, whysize, "TF32 asked for operands that are not f32");
  out->compute =
      g->ab_type == KF_F32 && g->allow_tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  out->scale = CUDA_R_32F;
  /* D^T = B^T A^T: B, stored [K, N] (or [N, K] when transposed), first. */
  if (g->b_trans) {
    out->first = row_major(ab, g->n, g->k, g->b_stride);
    out->op_first = CUBLAS_OP_T;
  } else {
    out->first = row_major(ab, g->k, g->n, g->b_stride);
    out->op_first = CUBLAS_OP_N;
  }
  if (g->a_trans) {
    out->second = row_major(ab, g->k, g->m, g->a_stride);
    out->op_second = CUBLAS_OP_T;
  } else {
    out->second = row_major(ab, g->m, g->k, g->a_stride);
    out->op_second = CUBLAS_OP_N;
  }
  out->d = row_major(d, g->m, g->n, g->d_stride);
  out->c = out->d;
  if (g->batch > 1 && g->d_stride < g->m * g->n)
    return refuse(why, whysize, "output batch entries that overlap");
  out->batch = (int32_t)g->batch;
  out->epilogue = lt_epilogue(g->bias, g->act);
  return KF_OK;
}

/* ---- descriptors and candidates ------------------------------------------ */

static kf_status lt_fail(cublasStatus_t st, const char *what, char *err, size_t errsize) {
  if (err && errsize) snprintf(err, errsize, "cuBLASLt %s: %s", what, rt_cublas_status_name(st));
  return st == CUBLAS_STATUS_NOT_SUPPORTED  ? KF_ERR_UNSUPPORTED
         : st == CUBLAS_STATUS_ALLOC_FAILED ? KF_ERR_OUT_OF_MEMORY
                                            : KF_ERR_CUDA;
}

static cublasStatus_t make_layout(const rt_blaslt *lt, cublasLtMatrixLayout_t *l,
                                  const rt_lt_layout *m, int32_t batch) {
  cublasStatus_t st = lt->MatrixLayoutCreate(l, m->type, m->rows, m->cols, m->ld);
  if (st != CUBLAS_STATUS_SUCCESS || batch <= 1) return st;
  st = lt->MatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch, sizeof batch);
  if (st != CUBLAS_STATUS_SUCCESS) return st;
  int64_t stride = m->stride;
  return lt->MatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride,
                                      sizeof stride);
}

static cublasStatus_t make_desc(rt_gemm_lt *p) {
  const rt_blaslt *lt = p->lt;
  cublasStatus_t st = lt->MatmulDescCreate(&p->desc, p->map.compute, p->map.scale);
  if (st != CUBLAS_STATUS_SUCCESS) return st;
  int32_t op1 = p->map.op_first, op2 = p->map.op_second;
  uint32_t epi = p->map.epilogue;
  if ((st = lt->MatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_TRANSA, &op1, sizeof op1)) ||
      (st = lt->MatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_TRANSB, &op2, sizeof op2)) ||
      (st = lt->MatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi)))
    return st;
  if (p->g.bias) {
    /* The heuristic reads the bias pointer's alignment: a stand-in with
     * the alignment the candidates are for, replaced at run time. */
    const void *stand_in = (const void *)(uintptr_t)p->align.bias;
    st = lt->MatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &stand_in,
                                    sizeof stand_in);
  }
  return st;
}

/* The largest power of two up to RT_GEMM_LT_MAX_ALIGN dividing n (n 0:
 * the most). */
static uint32_t pow2_of(uint64_t n) {
  uint32_t a = 1;
  while (a < RT_GEMM_LT_MAX_ALIGN && n % (2 * (uint64_t)a) == 0) a *= 2;
  return n ? a : RT_GEMM_LT_MAX_ALIGN;
}

/* How aligned every matrix of layout l can be from a base of `base`
 * bytes' alignment: each row (column-major: column) starts ld elements
 * after the last, each batch entry stride after the last. */
static uint32_t matrix_align(uint32_t base, const rt_lt_layout *l, kf_dtype dt, int32_t batch) {
  uint64_t es = kf_dtype_size(dt);
  uint32_t a = base;
  uint32_t pitch = pow2_of((uint64_t)l->ld * es);
  if (l->cols > 1 && pitch < a) a = pitch;
  uint32_t step = pow2_of((uint64_t)l->stride * es);
  if (batch > 1 && l->stride && step < a) a = step;
  return a;
}

/* The alignments a set prepared for p->align tells the heuristic: each
 * pointer's, lowered to what its rows and batch entries keep (a base 16
 * bytes aligned with a row pitch of 4097 bf16 elements has rows 2 bytes
 * aligned). False for the load's set: the heuristic is told nothing. */
static bool told_align(const rt_gemm_lt *p, rt_gemm_align *out) {
  const rt_gemm_align *w = &p->align;
  uint32_t m = RT_GEMM_LT_MAX_ALIGN;
  if (w->a == m && w->b == m && w->c == m && w->d == m && w->bias == m) return false;
  const rt_lt_map *map = &p->map;
  *out = (rt_gemm_align){.a = matrix_align(w->a, &map->second, p->g.ab_type, map->batch),
                         .b = matrix_align(w->b, &map->first, p->g.ab_type, map->batch),
                         .c = matrix_align(w->c, &map->c, p->g.d_type, map->batch),
                         .d = matrix_align(w->d, &map->d, p->g.d_type, map->batch),
                         .bias = w->bias};
  return true;
}

/* The MIN_ALIGNMENT preferences from al. cuBLASLt's A is our B (D^T =
 * B^T A^T). */
static cublasStatus_t tell_align(const rt_blaslt *lt, cublasLtMatmulPreference_t pref,
                                 const rt_gemm_align *al) {
  const struct {
    cublasLtMatmulPreferenceAttributes_t attr;
    uint32_t bytes;
  } v[4] = {{CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, al->b},
            {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, al->a},
            {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, al->c},
            {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, al->d}};
  cublasStatus_t st = CUBLAS_STATUS_SUCCESS;
  for (int i = 0; i < 4 && st == CUBLAS_STATUS_SUCCESS; i++)
    st = lt->MatmulPreferenceSetAttribute(pref, v[i].attr, &v[i].bytes, sizeof v[i].bytes);
  return st;
}

static cublasStatus_t find_candidates(rt_gemm_lt *p, size_t workspace_max, int max_candidates) {
  const rt_blaslt *lt = p->lt;
  cublasLtMatmulPreference_t pref = NULL;
  cublasStatus_t st = lt->MatmulPreferenceCreate(&pref);
  if (st != CUBLAS_STATUS_SUCCESS) return st;
  uint64_t ws = workspace_max;
  st = lt->MatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws,
                                        sizeof ws);
  /* Split-K partial sums stay in f32: a reduction in the output type
   * (bf16) would round every partial sum, an error no bound of an f32
   * accumulation allows (seen on the H200: 0.046 at 10.6, k = 100). */
  uint32_t schemes = CUBLASLT_REDUCTION_SCHEME_INPLACE | CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE;
  if (st == CUBLAS_STATUS_SUCCESS)
    st = lt->MatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK,
                                          &schemes, sizeof schemes);
  /* A set for pointers less aligned than RT_GEMM_LT_MAX_ALIGN tells the
   * heuristic their real alignments: left at its default (256 bytes), it
   * may pick an algorithm that faults on a view 2 bytes off. The load's
   * set (every pointer at the most) leaves the default, which assumes
   * just that and is what ran on the H200 for every shape, odd leading
   * dimensions included. */
  rt_gemm_align told;
  if (st == CUBLAS_STATUS_SUCCESS && told_align(p, &told)) st = tell_align(lt, pref, &told);
  int returned = 0;
  if (st == CUBLAS_STATUS_SUCCESS)
    st = lt->MatmulAlgoGetHeuristic(p->handle, p->desc, p->l_first, p->l_second, p->l_c, p->l_d,
                                    pref, max_candidates, p->cand, &returned);
  lt->MatmulPreferenceDestroy(pref);
  if (st != CUBLAS_STATUS_SUCCESS) return st;
  p->ncand = 0;
  for (int i = 0; i < returned; i++)
    if (p->cand[i].state == CUBLAS_STATUS_SUCCESS && p->cand[i].workspaceSize <= workspace_max)
      p->cand[p->ncand++] = p->cand[i];
  return p->ncand > 0 ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_NOT_SUPPORTED;
}

/* A pointer's alignment (an absent pointer, 0, asks nothing). */
static uint32_t align_of(CUdeviceptr p) {
  return pow2_of(p);
}

void rt_gemm_lt_align_max(rt_gemm_align *out) {
  uint32_t m = RT_GEMM_LT_MAX_ALIGN;
  *out = (rt_gemm_align){m, m, m, m, m};
}

void rt_gemm_lt_align_of(const rt_gemm *g, const rt_gemm_args *args, rt_gemm_align *out) {
  *out = (rt_gemm_align){.a = align_of(args->a),
                         .b = align_of(args->b),
                         .c = align_of(g->beta != 0.0f ? args->c : args->d),
                         .d = align_of(args->d),
                         .bias = g->bias ? align_of(args->bias) : RT_GEMM_LT_MAX_ALIGN};
}

bool rt_gemm_lt_takes(const rt_gemm_lt *p, const rt_gemm_align *al) {
  const rt_gemm_align *w = &p->align;
  return al->a >= w->a && al->b >= w->b && al->c >= w->c && al->d >= w->d && al->bias >= w->bias;
}

kf_status rt_gemm_lt_prepare(rt_gemm_lt *p, const rt_blaslt *lt, cublasLtHandle_t handle,
                             const rt_gemm *g, const rt_gemm_align *align, size_t workspace_max,
                             int max_candidates, char *err, size_t errsize) {
  memset(p, 0, sizeof *p);
  p->lt = lt, p->handle = handle, p->g = *g;
  if (align)
    p->align = *align;
  else
    rt_gemm_lt_align_max(&p->align);
  kf_status s = rt_gemm_lt_map(g, &p->map, err, errsize);
  if (s != KF_OK) return s;
  if (max_candidates < 1 || max_candidates > RT_GEMM_LT_MAX_CANDIDATES)
    max_candidates = RT_GEMM_LT_MAX_CANDIDATES;
  cublasStatus_t st;
  const char *what = "descriptor";
  if ((st = make_desc(p)) == CUBLAS_STATUS_SUCCESS) {
    what = "layout";
    if (!(st = make_layout(lt, &p->l_first, &p->map.first, p->map.batch)) &&
        !(st = make_layout(lt, &p->l_second, &p->map.second, p->map.batch)) &&
        !(st = make_layout(lt, &p->l_c, &p->map.c, p->map.batch)) &&
        !(st = make_layout(lt, &p->l_d, &p->map.d, p->map.batch))) {
      what = "heuristic (no algorithm for this product)";
      st = find_candidates(p, workspace_max, max_candidates);
    }
  }
  if (st == CUBLAS_STATUS_SUCCESS) return KF_OK;
  rt_gemm_lt_release(p);
  return lt_fail(st, what, err, errsize);
}

void rt_gemm_lt_release(rt_gemm_lt *p) {
  const rt_blaslt *lt = p->lt;
  if (!lt) return;
  cublasLtMatrixLayout_t *ls[] = {&p->l_first, &p->l_second, &p->l_c, &p->l_d};
  for (int i = 0; i < 4; i++)
    if (*ls[i]) lt->MatrixLayoutDestroy(*ls[i]), *ls[i] = NULL;
  if (p->desc) lt->MatmulDescDestroy(p->desc), p->desc = NULL;
  p->ncand = 0;
}

kf_status rt_gemm_lt_run(rt_gemm_lt *p, int i, const rt_gemm_args *args, CUstream s, char *err,
                         size_t errsize) {
  if (i < 0 || i >= p->ncand) {
    if (err && errsize) snprintf(err, errsize, "cuBLASLt candidate %d of %d", i, p->ncand);
    return KF_ERR_INVALID_ARG;
  }
  const rt_blaslt *lt = p->lt;
  if (p->g.bias) {
    const void *bias = (const void *)(uintptr_t)args->bias;
    cublasStatus_t st =
        lt->MatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias);
    if (st != CUBLAS_STATUS_SUCCESS) return lt_fail(st, "bias pointer", err, errsize);
  }
  float alpha = p->g.alpha, beta = p->g.beta;
  const void *c = (const void *)(uintptr_t)(beta != 0.0f ? args->c : args->d);
  void *d = (void *)(uintptr_t)args->d;
  cublasStatus_t st = lt->Matmul(
      p->handle, p->desc, &alpha, (const void *)(uintptr_t)args->b, p->l_first,
      (const void *)(uintptr_t)args->a, p->l_second, &beta, c, p->l_c, d, p->l_d, &p->cand[i].algo,
      (void *)(uintptr_t)args->workspace, args->workspace_size, (cudaStream_t)s);
  return st == CUBLAS_STATUS_SUCCESS ? KF_OK : lt_fail(st, "matmul", err, errsize);
}

void rt_gemm_from_fuse(const fuse_gemm *f, bool allow_tf32, rt_gemm *out) {
  *out = (rt_gemm){.batch = f->batch,
                   .m = f->m,
                   .n = f->n,
                   .k = f->k,
                   .ab_type = f->ab_type,
                   .d_type = f->d_type,
                   .a_trans = f->a_trans,
                   .b_trans = f->b_trans,
                   .a_stride = f->a_stride,
                   .b_stride = f->b_stride,
                   .d_stride = f->d_stride,
                   .bias = f->bias >= 0,
                   .act = f->act == FUSE_GEMM_ACT_RELU        ? RT_GEMM_ACT_RELU
                          : f->act == FUSE_GEMM_ACT_GELU_TANH ? RT_GEMM_ACT_GELU_TANH
                                                              : RT_GEMM_ACT_NONE,
                   .alpha = f->alpha,
                   .beta = f->c >= 0 ? f->beta : 0.0f,
                   .allow_tf32 = allow_tf32 && f->ab_type == KF_F32};
}
