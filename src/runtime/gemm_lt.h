/* gemm_lt.h - a row-major batched matrix product with its epilogue, run
 * through cuBLASLt: the mapping onto cuBLASLt's column-major descriptors
 * (a pure function, unit-tested without the library), preparing the
 * descriptors and heuristic candidates, timing the candidates, running. */
#ifndef KF_RUNTIME_GEMM_LT_H
#define KF_RUNTIME_GEMM_LT_H

#include <cuda.h>
#include <stdbool.h>
#include <stdint.h>

#include "fuser/gemm_match.h"
#include "runtime/blaslt.h"

/* The activations cuBLASLt can apply in its epilogue. Its GELU is the tanh
 * form (kfuse's gelu_tanh); the erf form (kfuse's gelu) does not map. */
typedef enum rt_gemm_act { RT_GEMM_ACT_NONE, RT_GEMM_ACT_RELU, RT_GEMM_ACT_GELU_TANH } rt_gemm_act;

/* D[b] = act(alpha * A[b] @ B[b] + bias + beta * C[b]), every matrix
 * row-major and densely packed in its last two axes. */
typedef struct rt_gemm {
  int64_t batch; /* >= 1 */
  int64_t m, n, k;
  kf_dtype ab_type; /* both operands: f16, bf16 or f32 */
  kf_dtype d_type;  /* the output (and C): ab_type or f32 */
  bool a_trans;     /* A is stored [K, M] (a transpose taken as a layout) */
  bool b_trans;     /* B is stored [N, K] (a weight in PyTorch's layout) */
  /* Elements between batch entries; 0 broadcasts one matrix over the batch. */
  int64_t a_stride, b_stride, d_stride;
  bool bias; /* a vector of N values of d_type added to every row */
  rt_gemm_act act;
  float alpha, beta; /* beta != 0 reads C, laid out as D */
  bool allow_tf32;   /* f32 operands only: TF32 tensor cores */
} rt_gemm;

/* One matrix as cuBLASLt sees it: column-major, rows x cols, ld. */
typedef struct rt_lt_layout {
  cudaDataType_t type;
  uint64_t rows, cols;
  int64_t ld, stride; /* stride: elements between batch entries */
} rt_lt_layout;

/* cuBLASLt computes column-major matrices; a row-major D is a column-major
 * D^T, so D^T = B^T A^T: cuBLASLt's first operand is our B, its second our
 * A, and the bias (one value per row of D^T) is our per-column vector. */
typedef struct rt_lt_map {
  cublasComputeType_t compute;
  cudaDataType_t scale;
  cublasOperation_t op_first, op_second;
  rt_lt_layout first, second, c, d;
  int32_t batch;
  cublasLtEpilogue_t epilogue;
} rt_lt_map;

/* Fills *out, or returns KF_ERR_UNSUPPORTED with the reason in why (a shape,
 * dtype or epilogue cuBLASLt cannot take: the caller uses another path). */
kf_status rt_gemm_lt_map(const rt_gemm *g, rt_lt_map *out, char *why, size_t whysize);

/* The product a fused matmul kernel describes (fuser/gemm_match.h), as a
 * library description; allow_tf32 is the plan's kf_options.allow_tf32 (it
 * applies to f32 operands only). Pure. */
void rt_gemm_from_fuse(const fuse_gemm *f, bool allow_tf32, rt_gemm *out);

/* The device pointers of one run. */
typedef struct rt_gemm_args {
  CUdeviceptr a, b, bias, c, d;
  CUdeviceptr workspace;
  size_t workspace_size;
} rt_gemm_args;

#define RT_GEMM_LT_MAX_CANDIDATES 8
/* The most alignment a pointer is credited with, and what cuBLASLt's
 * heuristic assumes unless told otherwise (its default preference). */
#define RT_GEMM_LT_MAX_ALIGN 256u

/* The byte alignments of one run's pointers (each a power of two up to
 * RT_GEMM_LT_MAX_ALIGN), as the heuristic's preferences see them: the
 * candidates prepared for one set run only with pointers at least that
 * aligned. c is the pointer passed as C (D's when beta is 0). */
typedef struct rt_gemm_align {
  uint32_t a, b, c, d, bias;
} rt_gemm_align;

/* The alignments of args' pointers for product g (a NULL pointer, an
 * absent operand: RT_GEMM_LT_MAX_ALIGN). Pure. */
void rt_gemm_lt_align_of(const rt_gemm *g, const rt_gemm_args *args, rt_gemm_align *out);
/* RT_GEMM_LT_MAX_ALIGN for every pointer: what a plan prepares at load. */
void rt_gemm_lt_align_max(rt_gemm_align *out);

/* A prepared product: descriptors and the heuristic's candidates, owned. */
typedef struct rt_gemm_lt {
  const rt_blaslt *lt;
  cublasLtHandle_t handle; /* borrowed */
  rt_gemm g;
  rt_gemm_align align; /* the pointers' alignments the candidates were asked for */
  rt_lt_map map;
  cublasLtMatmulDesc_t desc;
  cublasLtMatrixLayout_t l_first, l_second, l_c, l_d;
  int ncand;
  cublasLtMatmulHeuristicResult_t cand[RT_GEMM_LT_MAX_CANDIDATES];
} rt_gemm_lt;

/* Maps g, builds the descriptors and asks the heuristic for up to
 * max_candidates algorithms that fit in workspace_max bytes and take
 * pointers aligned as `align` says: the MIN_ALIGNMENT preferences, each
 * lowered to what the matrix's row pitch and batch stride keep, and the
 * bias pointer's stand-in with the bias alignment. align NULL (the most
 * for every pointer, the load's set) leaves the preferences at the
 * heuristic's default, which assumes that alignment. On failure
 * (KF_ERR_UNSUPPORTED when cuBLASLt cannot take it, KF_ERR_CUDA for a
 * library error) err holds why and p owns nothing. */
kf_status rt_gemm_lt_prepare(rt_gemm_lt *p, const rt_blaslt *lt, cublasLtHandle_t handle,
                             const rt_gemm *g, const rt_gemm_align *align, size_t workspace_max,
                             int max_candidates, char *err, size_t errsize);
/* Whether p's candidates take pointers aligned as `al` (each at least as
 * aligned as p was prepared for). */
bool rt_gemm_lt_takes(const rt_gemm_lt *p, const rt_gemm_align *al);
void rt_gemm_lt_release(rt_gemm_lt *p);

/* Enqueues the product with candidate i on stream s. bias and c are read
 * only when the description has them. Sets the bias pointer in p's
 * descriptor, so one p must not run on two threads at once. */
kf_status rt_gemm_lt_run(rt_gemm_lt *p, int i, const rt_gemm_args *args, CUstream s, char *err,
                         size_t errsize);

/* A cuBLAS status's name ("CUBLAS_STATUS_NOT_SUPPORTED"). */
const char *rt_cublas_status_name(cublasStatus_t st);

#endif
