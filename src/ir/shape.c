/* shape.c - element and byte counts under the size limit, NumPy broadcasting,
 * extent-1 reductions and shape formatting. */
#include "ir/shape.h"

#include <stdio.h>

#include "ir/ir.h"
#include "ir/ops.h"

bool ir_numel(int rank, const int64_t *shape, int64_t *out) {
  if (rank < 0 || rank > KF_MAX_RANK || (rank > 0 && !shape)) return false;
  int64_t n = 1;
  for (int i = 0; i < rank; i++) {
    if (shape[i] < 0) return false;
    if (shape[i] != 0 && n > INT64_MAX / shape[i]) {
      /* Overflow, unless a later zero makes the product 0. */
      for (int j = i + 1; j < rank; j++)
        if (shape[j] == 0) {
          if (out) *out = 0;
          return true;
        }
      return false;
    }
    n *= shape[i];
  }
  if (out) *out = n;
  return true;
}

bool ir_tensor_bytes(int rank, const int64_t *shape, kf_dtype dt, int64_t *bytes) {
  int64_t n, b;
  if ((unsigned)dt >= KF_DTYPE_COUNT || !ir_numel(rank, shape, &n)) return false;
  if (__builtin_mul_overflow(n, (int64_t)kf_dtype_size(dt), &b) || b > KF_MAX_TENSOR_BYTES)
    return false;
  if (bytes) *bytes = b;
  return true;
}

bool ir_bytes_add(int64_t *sum, int64_t add) {
  int64_t s;
  if (add < 0 || __builtin_add_overflow(*sum, add, &s) || s > KF_MAX_TENSOR_BYTES) return false;
  *sum = s;
  return true;
}

bool ir_broadcast_shapes(int ra, const int64_t *a, int rb, const int64_t *b, int *rout,
                         int64_t *out) {
  if (ra < 0 || rb < 0 || ra > KF_MAX_RANK || rb > KF_MAX_RANK) return false;
  int r = ra > rb ? ra : rb;
  int64_t tmp[KF_MAX_RANK];
  /* Align from the right; a missing axis acts as 1. */
  for (int i = 0; i < r; i++) {
    int ia = ra - r + i, ib = rb - r + i;
    int64_t da = ia >= 0 ? a[ia] : 1, db = ib >= 0 ? b[ib] : 1;
    if (da == db || db == 1)
      tmp[i] = da;
    else if (da == 1)
      tmp[i] = db;
    else
      return false;
  }
  /* Written at the end so that out may alias a or b. */
  for (int i = 0; i < r; i++) out[i] = tmp[i];
  if (rout) *rout = r;
  return true;
}

bool ir_is_copy_reduce(const kf_graph *g, const ir_node *n) {
  if (ir_ops[n->op].kind != KIND_REDUCE) return false;
  const ir_node *x = &g->nodes[n->args[0]];
  for (int d = 0; d < x->rank; d++)
    if (((n->axes >> d) & 1u) && x->shape[d] != 1) return false;
  return true;
}

bool ir_is_reduction(const kf_graph *g, const ir_node *n) {
  return ir_ops[n->op].kind == KIND_REDUCE && !ir_is_copy_reduce(g, n);
}

const char *ir_shape_str(char *buf, size_t size, int rank, const int64_t *shape) {
  if (!buf || size == 0) return "";
  size_t n = 0;
  buf[0] = '\0';
  if (rank < 0 || rank > KF_MAX_RANK) rank = 0;
  n += (size_t)snprintf(buf + n, n < size ? size - n : 0, "[");
  for (int i = 0; i < rank && n < size; i++)
    n += (size_t)snprintf(buf + n, size - n, i ? ",%lld" : "%lld", (long long)shape[i]);
  if (n < size) snprintf(buf + n, size - n, "]");
  return buf;
}
