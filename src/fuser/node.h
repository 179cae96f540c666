/* node.h - facts of one graph node the passes ask for: elements, bytes,
 * elementwise (node.c). */
#ifndef KF_FUSER_NODE_H
#define KF_FUSER_NODE_H

#include <stdbool.h>
#include <stdint.h>

#include "ir/ir.h"

int64_t fuse_numel(const ir_node *n);
int64_t fuse_bytes(const ir_node *n);
/* True for ops computed elementwise (unary, binary, where/clamp/cast) and
 * layout ops. */
bool fuse_is_elementwise(const ir_node *n);

#endif
