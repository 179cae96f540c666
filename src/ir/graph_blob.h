/* graph_blob.h - a graph as bytes and back (graph_blob.c): how the parsed
 * graph of a large YAML file is kept in the disk cache (src/core/
 * graph_load.c), so that a warm start skips the YAML parser. */
#ifndef KF_IR_GRAPH_BLOB_H
#define KF_IR_GRAPH_BLOB_H

#include "core/strbuf.h"
#include "ir/ir.h"

/* Appends g (nodes, names, inputs, outputs, graph name) to out. */
void ir_graph_to_blob(const kf_graph *g, core_str *out);
/* The graph those bytes describe, rebuilt through the builders' checks
 * (every operand defined before use, names valid and unique); NULL when
 * the bytes are not one (truncated, foreign, or from another layout). */
kf_graph *ir_graph_from_blob(kf_ctx *ctx, const void *data, size_t size);

#endif
