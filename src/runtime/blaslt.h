/* blaslt.h - cuBLASLt as a table of function pointers, loaded with dlopen at
 * first use (as the driver is), so that kfuse never links it, runs without
 * it (the template path), and tests can swap in a recording fake. */
#ifndef KF_RUNTIME_BLASLT_H
#define KF_RUNTIME_BLASLT_H

#include <cublasLt.h>
#include <stddef.h>

#include "kfuse.h"

/* X(field, symbol): one row per cuBLASLt entry kfuse uses. The signatures
 * are the header's own (typeof), so a header/library mismatch is a compile
 * error here, not a wrong call at run time. */
#define RT_BLASLT_ENTRIES(X)                                            \
  X(GetVersion, cublasLtGetVersion)                                     \
  X(Create, cublasLtCreate)                                             \
  X(Destroy, cublasLtDestroy)                                           \
  X(MatmulDescCreate, cublasLtMatmulDescCreate)                         \
  X(MatmulDescDestroy, cublasLtMatmulDescDestroy)                       \
  X(MatmulDescSetAttribute, cublasLtMatmulDescSetAttribute)             \
  X(MatrixLayoutCreate, cublasLtMatrixLayoutCreate)                     \
  X(MatrixLayoutDestroy, cublasLtMatrixLayoutDestroy)                   \
  X(MatrixLayoutSetAttribute, cublasLtMatrixLayoutSetAttribute)         \
  X(MatmulPreferenceCreate, cublasLtMatmulPreferenceCreate)             \
  X(MatmulPreferenceDestroy, cublasLtMatmulPreferenceDestroy)           \
  X(MatmulPreferenceSetAttribute, cublasLtMatmulPreferenceSetAttribute) \
  X(MatmulAlgoGetHeuristic, cublasLtMatmulAlgoGetHeuristic)             \
  X(Matmul, cublasLtMatmul)

typedef struct rt_blaslt {
  const char *name; /* the library's file name, or "fake" */
#define RT_BLASLT_FIELD_(field, sym) __typeof__(&sym) field;
  RT_BLASLT_ENTRIES(RT_BLASLT_FIELD_)
#undef RT_BLASLT_FIELD_
} rt_blaslt;

/* The table: a test's override if one is installed, else the real library,
 * loaded once (thread-safe). KF_ERR_UNSUPPORTED with the reason in err when
 * no usable libcublasLt is found; callers then take the template path. */
kf_status rt_blaslt_get(const rt_blaslt **out, char *err, size_t errsize);

/* Replaces the table rt_blaslt_get returns (NULL restores the real one).
 * Tests only. */
void rt_blaslt_override(const rt_blaslt *table);

#endif
