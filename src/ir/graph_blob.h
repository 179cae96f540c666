/* graph_blob.h - a graph as bytes and back (graph_blob.c): how the parsed
 * graph of a large YAML file is kept in the disk cache (src/core/
 * graph_load.c), so that a warm start skips the YAML parser. */
#ifndef KF_IR_GRAPH_BLOB_H
#define KF_IR_GRAPH_BLOB_H

#include "core/strbuf.h"
#include "ir/ir.h"

/* Appends g (nodes, names, inputs, outputs, graph name) to out. */
void ir_graph_to_blob(const kf_graph *g, core_str *out);
/* The graph those bytes describe, every node rebuilt through its op's
 * builder (ir_replay_node: operands, dtypes, arity, attributes, shapes and
 * sizes checked as for any graph, and each node must be exactly what its
 * builder makes), names valid and unique; NULL when the bytes are not one
 * (truncated, foreign, from another layout, or edited), with the reason in
 * why (may be NULL). */
kf_graph *ir_graph_from_blob(kf_ctx *ctx, const void *data, size_t size, char *why,
                             size_t why_size);

#endif
