/* replay.h - a node rebuilt through its op's public builder (replay.c), so
 * that a graph read back from bytes (the parsed-graph cache) passes every
 * check a graph built through the API or the YAML loader passes. */
#ifndef KF_IR_REPLAY_H
#define KF_IR_REPLAY_H

#include "ir/ir.h"

/* Builds the node `want` describes (its op, operands, dtype and attributes)
 * through the builder of its op: operands must exist, dtypes, arity, axes,
 * permutations, bounds and sizes follow the builders' rules, and the shape
 * is the builder's. Returns the new value when the builder made exactly
 * that node (op, dtype, shape and the op's attributes); otherwise KF_NONE
 * with the reason in why (the builder's message, or the field that
 * differs). Input nodes are not replayed here (they need their name: use
 * kf_input). Not thread-safe on one graph. */
kf_value ir_replay_node(kf_graph *g, const ir_node *want, char *why, size_t why_size);

#endif
