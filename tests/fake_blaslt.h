/* fake_blaslt.h - a recording fake cuBLASLt table for CPU tests of plans
 * with library calls: it counts handles, descriptors and layouts (leaks),
 * records each matmul's pointers and stream, and can refuse (no handle, no
 * algorithm) to exercise the template fallback. Header-only: each suite is
 * one file. */
#ifndef KF_TEST_FAKE_BLASLT_H
#define KF_TEST_FAKE_BLASLT_H

#include <stdint.h>
#include <string.h>

#include "runtime/blaslt.h"

static struct fake_lt {
  int handles, descs, layouts, prefs; /* live */
  int matmuls, heuristics;
  uint32_t min_align[4];     /* the last preference's MIN_ALIGNMENT_{A,B,C,D}_BYTES (0: unset) */
  const void *bias_stand_in; /* the bias pointer the last heuristic saw */
  uint64_t algo;             /* the last matmul's algorithm (data[0]) */
  const void *a, *b, *c, *d, *bias, *ws;
  size_t ws_size;
  cudaStream_t stream;
  uint32_t epilogue;
  int32_t compute;
  bool refuse_create;    /* cublasLtCreate fails: as if the library were absent */
  bool refuse_heuristic; /* no algorithm for any product */
  bool refuse_low;       /* none for pointers asked for below 256-byte alignment */
} flt;

static size_t flt_version(void) {
  return 130000;
}
static cublasStatus_t flt_create(cublasLtHandle_t *h) {
  if (flt.refuse_create) return CUBLAS_STATUS_NOT_INITIALIZED;
  *h = (cublasLtHandle_t)0x10;
  flt.handles++;
  return CUBLAS_STATUS_SUCCESS;
}
static cublasStatus_t flt_destroy(cublasLtHandle_t h) {
  (void)h;
  flt.handles--;
  return CUBLAS_STATUS_SUCCESS;
}
static cublasStatus_t flt_desc_create(cublasLtMatmulDesc_t *d, cublasComputeType_t c,
                                      cudaDataType_t s) {
  (void)s;
  flt.compute = (int32_t)c;
  *d = (cublasLtMatmulDesc_t)0x20;
  flt.descs++;
  return CUBLAS_STATUS_SUCCESS;
}
static cublasStatus_t flt_desc_destroy(cublasLtMatmulDesc_t d) {
  (void)d;
  flt.descs--;
  return CUBLAS_STATUS_SUCCESS;
}
static cublasStatus_t flt_desc_set(cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t a,
                                   const void *v, size_t n) {
  (void)d, (void)n;
  if (a == CUBLASLT_MATMUL_DESC_EPILOGUE) memcpy(&flt.epilogue, v, 4);
  if (a == CUBLASLT_MATMUL_DESC_BIAS_POINTER) memcpy(&flt.bias, v, sizeof(void *));
  return CUBLAS_STATUS_SUCCESS;
}
static cublasStatus_t flt_layout_create(cublasLtMatrixLayout_t *l, cudaDataType t, uint64_t r,
                                        uint64_t c, int64_t ld) {
  (void)t, (void)r, (void)c, (void)ld;
  *l = (cublasLtMatrixLayout_t)(uintptr_t)(0x100 + flt.layouts++);
  return CUBLAS_STATUS_SUCCESS;
}
static cublasStatus_t flt_layout_destroy(cublasLtMatrixLayout_t l) {
  (void)l;
  flt.layouts--;
  return CUBLAS_STATUS_SUCCESS;
}
static cublasStatus_t flt_layout_set(cublasLtMatrixLayout_t l, cublasLtMatrixLayoutAttribute_t a,
                                     const void *v, size_t n) {
  (void)l, (void)a, (void)v, (void)n;
  return CUBLAS_STATUS_SUCCESS;
}
static cublasStatus_t flt_pref_create(cublasLtMatmulPreference_t *p) {
  *p = (cublasLtMatmulPreference_t)0x30;
  flt.prefs++;
  memset(flt.min_align, 0, sizeof flt.min_align);
  return CUBLAS_STATUS_SUCCESS;
}
static cublasStatus_t flt_pref_destroy(cublasLtMatmulPreference_t p) {
  (void)p;
  flt.prefs--;
  return CUBLAS_STATUS_SUCCESS;
}
static cublasStatus_t flt_pref_set(cublasLtMatmulPreference_t p,
                                   cublasLtMatmulPreferenceAttributes_t a, const void *v,
                                   size_t n) {
  (void)p, (void)n;
  if (a == CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES) memcpy(&flt.min_align[0], v, 4);
  if (a == CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES) memcpy(&flt.min_align[1], v, 4);
  if (a == CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES) memcpy(&flt.min_align[2], v, 4);
  if (a == CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES) memcpy(&flt.min_align[3], v, 4);
  return CUBLAS_STATUS_SUCCESS;
}
static cublasStatus_t flt_heuristic(cublasLtHandle_t h, cublasLtMatmulDesc_t d,
                                    cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
                                    cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t dd,
                                    cublasLtMatmulPreference_t p, int req,
                                    cublasLtMatmulHeuristicResult_t r[], int *ret) {
  (void)h, (void)d, (void)a, (void)b, (void)c, (void)dd, (void)p;
  flt.heuristics++;
  flt.bias_stand_in = flt.bias;
  /* less aligned pointers: the same two algorithms, in the other order */
  bool low = false;
  for (int i = 0; i < 4; i++) low = low || (flt.min_align[i] && flt.min_align[i] < 256);
  int n = flt.refuse_heuristic || (low && flt.refuse_low) ? 0 : req < 2 ? req : 2;
  for (int i = 0; i < n; i++) {
    memset(&r[i], 0, sizeof r[i]);
    r[i].algo.data[0] = 1000 + (uint64_t)(low ? n - 1 - i : i);
    r[i].workspaceSize = 4096;
  }
  *ret = n;
  return CUBLAS_STATUS_SUCCESS;
}
static cublasStatus_t flt_matmul(cublasLtHandle_t h, cublasLtMatmulDesc_t d, const void *al,
                                 const void *A, cublasLtMatrixLayout_t la, const void *B,
                                 cublasLtMatrixLayout_t lb, const void *be, const void *C,
                                 cublasLtMatrixLayout_t lc, void *D, cublasLtMatrixLayout_t ld,
                                 const cublasLtMatmulAlgo_t *algo, void *ws, size_t wss,
                                 cudaStream_t s) {
  (void)h, (void)d, (void)al, (void)la, (void)lb, (void)be, (void)lc, (void)ld;
  flt.matmuls++;
  flt.algo = algo->data[0];
  /* cuBLASLt's first operand is our B (runtime/gemm_lt.h). */
  flt.b = A, flt.a = B, flt.c = C, flt.d = D, flt.ws = ws, flt.ws_size = wss, flt.stream = s;
  return CUBLAS_STATUS_SUCCESS;
}

static const rt_blaslt flt_table = {.name = "fake",
                                    .GetVersion = flt_version,
                                    .Create = flt_create,
                                    .Destroy = flt_destroy,
                                    .MatmulDescCreate = flt_desc_create,
                                    .MatmulDescDestroy = flt_desc_destroy,
                                    .MatmulDescSetAttribute = flt_desc_set,
                                    .MatrixLayoutCreate = flt_layout_create,
                                    .MatrixLayoutDestroy = flt_layout_destroy,
                                    .MatrixLayoutSetAttribute = flt_layout_set,
                                    .MatmulPreferenceCreate = flt_pref_create,
                                    .MatmulPreferenceDestroy = flt_pref_destroy,
                                    .MatmulPreferenceSetAttribute = flt_pref_set,
                                    .MatmulAlgoGetHeuristic = flt_heuristic,
                                    .Matmul = flt_matmul};

/* Installs the fake with its counters cleared. */
static inline void flt_install(void) {
  memset(&flt, 0, sizeof flt);
  rt_blaslt_override(&flt_table);
}

#endif
