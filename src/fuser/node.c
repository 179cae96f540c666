/* node.c - facts of one graph node the passes ask for. */
#include "fuser/node.h"

#include "ir/ops.h"
#include "ir/shape.h"

int64_t fuse_numel(const ir_node *n) {
  int64_t e = 0;
  return ir_numel(n->rank, n->shape, &e) ? e : 0;
}

/* Every node passed ir_tensor_bytes when it was appended, so this fits. */
int64_t fuse_bytes(const ir_node *n) {
  int64_t b = 0;
  return ir_tensor_bytes(n->rank, n->shape, n->dtype, &b) ? b : 0;
}

bool fuse_is_elementwise(const ir_node *n) {
  ir_kind k = ir_ops[n->op].kind;
  return k == KIND_UNARY || k == KIND_BINARY || k == KIND_POINTWISE || k == KIND_LAYOUT;
}
