/* graph.h - the graph object's internal calls (graph.c): sticky errors,
 * appending a node, deep copies and node labels. */
#ifndef KF_IR_GRAPH_H
#define KF_IR_GRAPH_H

#include <stdbool.h>
#include <stddef.h>

#include "ir/ir.h"

/* Records a sticky builder error (only the first one is kept) and returns
 * KF_NONE. The message is printf-formatted. */
kf_value ir_fail(kf_graph *g, kf_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Records a non-sticky error message on the graph and returns st. */
kf_status ir_error(kf_graph *g, kf_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* True if v names an existing node. */
bool ir_valid(const kf_graph *g, kf_value v);
/* A deep copy of a graph (graph.c); NULL on out of memory. */
kf_graph *ir_graph_clone(const kf_graph *g);
/* Appends a node (copied) and returns its index, or KF_NONE on OOM
 * (recorded as a sticky error). Increments the operands' use counts. */
kf_value ir_append(kf_graph *g, const ir_node *n);
/* A node's label for messages: "%5 y" or "%5". */
const char *ir_node_label(const kf_graph *g, kf_value v, char *buf, size_t size);

#endif /* KF_IR_GRAPH_H */
