/* row_online.h - reductions of a row kernel that one pass computes
 * together (row_online.c). */
#ifndef KF_CG_ROW_ONLINE_H
#define KF_CG_ROW_ONLINE_H

#include "codegen/cg_internal.h"

typedef enum row_online_kind {
  ROW_ONLINE_NONE = 0,
  ROW_ONLINE_SOFTMAX, /* first = max(x), second = sum(exp(x - first)) */
  ROW_ONLINE_WELFORD, /* first = mean(x), second = mean|sum((x - first)^2) */
} row_online_kind;

/* Whether the consecutive row reductions first and second of kernel k
 * (both in k, over the same row) can be computed in one pass, and how. Both
 * must be f32 or f64, as must every value between them (f16/bf16 values
 * are rounded per node, which a rescaled running sum cannot reproduce). */
row_online_kind cg_row_online(const kf_graph *g, const fuse_kernel *k, int32_t first,
                              int32_t second);

#endif
