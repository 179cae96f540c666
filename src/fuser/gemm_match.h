/* gemm_match.h - does a matmul kernel's node set run as one library call
 * (cuBLASLt's D = act(alpha A B + bias + beta C))? A pure function of the
 * graph, unit-tested without a GPU; the runtime maps its answer onto
 * cuBLASLt's descriptors (runtime/gemm_lt.h). */
#ifndef KF_FUSER_GEMM_MATCH_H
#define KF_FUSER_GEMM_MATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/ir.h"

struct fuse_plan;

typedef enum fuse_gemm_act {
  FUSE_GEMM_ACT_NONE,
  FUSE_GEMM_ACT_RELU,
  FUSE_GEMM_ACT_GELU_TANH
} fuse_gemm_act;

/* A product and the epilogue prefix a library takes, in graph values. Every
 * value named here (a, b, bias, c, out) lives in device memory. */
typedef struct fuse_gemm {
  int32_t mm;            /* the matmul node */
  int32_t a, b;          /* the stored operands (a transpose's input when *_trans) */
  bool a_trans, b_trans; /* a is stored [..., K, M], b [..., N, K] */
  int32_t bias;          /* [N] added to every row, or -1 */
  int32_t c;             /* the residual, laid out as out, or -1 */
  float alpha, beta;     /* beta != 0 exactly when c >= 0 */
  fuse_gemm_act act;
  int32_t out; /* the one value written */
  kf_dtype ab_type, d_type;
  int64_t batch, m, n, k;
  int64_t a_stride, b_stride, d_stride; /* elements between batch entries; 0 broadcasts */
} fuse_gemm;

/* Whether nodes[0..n) (ascending, one matmul, is_out[i]: written to
 * memory) are exactly a product and an epilogue the library computes:
 *   mm -> [* alpha] -> [+ bias[N]] and/or [+ C or + beta * C] -> [relu | gelu_tanh]
 *      -> [cast to f32 of a 16-bit result without bias or C]
 * with operands read from memory, each maybe through a transpose of its
 * last two axes (a layout, no kernel), batch axes that are the output's or
 * one matrix for all, and exactly the last step written. An alpha other
 * than 1 with a 16-bit bias or activation does not map (cuBLASLt rounds
 * such an epilogue twice, docs/matmul.md). false with the reason in why. */
bool fuse_gemm_match(const kf_graph *g, const int32_t *nodes, const uint8_t *is_out, int32_t n,
                     fuse_gemm *out, char *why, size_t whysize);

/* Records the library-versus-template choice in fp's decision log (rule
 * "matmul-choice"; accepted: the library), replacing an earlier one. */
void fuse_gemm_note(struct fuse_plan *fp, bool library, const char *text);

#endif
