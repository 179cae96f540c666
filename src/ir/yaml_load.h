/* yaml_load.h - the YAML loader's state and the helpers its files share
 * (yaml_node.c: one node; yaml_scalar.c: values), and what yaml_load.c
 * defines: loading a document, errors, symbols. */
#ifndef KF_IR_YAML_LOAD_H
#define KF_IR_YAML_LOAD_H

#include "ir/ir.h"
#include "ir/yaml_tree.h"

/* One defined name: what it refers to and where it was defined. */
typedef struct ir_ysym {
  const char *name; /* points into the document's text; NULL: empty slot */
  kf_value value;
  uint32_t at; /* the defining scalar's node index */
} ir_ysym;

/* The kinds of error prefix: "", "input 'x': ", "node #3: ",
 * "node 'h': ", "node 'h' (add): ", "outputs: ". */
typedef enum ir_ywhere {
  IR_YW_NONE,
  IR_YW_INPUT,
  IR_YW_NODE_NUMBER,
  IR_YW_NODE_NAME,
  IR_YW_NODE_OP,
  IR_YW_OUTPUTS
} ir_ywhere;

typedef struct ir_yload {
  kf_ctx *ctx;
  const char *file;
  const ir_ydoc *doc;
  kf_graph *g;
  kf_status st;    /* KF_OK until the first error */
  char msg[4096];  /* "FILE:LINE:COL: ..." */
  /* What is being read, for the prefix of an error ("node 'h' (add): "),
   * kept as parts and formatted only when an error is reported (a
   * 600-node file spent a tenth of its load formatting prefixes). */
  ir_ywhere where;
  const char *where_name; /* the input's or node's name, in the document */
  int where_op;           /* the node's op, with IR_YW_NODE_OP */
  ir_ysym *syms;   /* open addressing, power-of-two capacity */
  uint32_t cap_syms, n_syms;
  const ir_ynode *nodes_seq; /* the nodes list, to explain use before definition */
  int node_number;           /* 1-based index of the node being read */
} ir_yload;

/* The YAML loader (yaml_load.c) under the public kf_graph_load_yaml and
 * kf_graph_load_yaml_string (src/pipeline/graph_load.c, which adds the parsed-
 * graph cache and the "parse" span): the text of a graph file into a graph;
 * errors (FILE:LINE:COL ...) go to ctx. */
kf_status ir_yaml_load_string(kf_ctx *ctx, const char *text, size_t len, const char *filename,
                              kf_graph **out);
/* A graph file's bytes (malloc'd into *text), refusing directories and
 * files over the loader's size limit. */
kf_status ir_yaml_read_file(kf_ctx *ctx, const char *path, char **text, size_t *len);

/* Records the first error at node `at` (NULL: no position), prefixed by the
 * current where. Returns false, so callers can `return ir_yl_fail(...)`. */
bool ir_yl_fail(ir_yload *L, kf_status st, const ir_ynode *at, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Same, for an error the graph's builder reported (its text is appended). */
bool ir_yl_fail_builder(ir_yload *L, const ir_ynode *at);
/* Same, for a failing call with status st that records no sticky error
 * (kf_set_name, kf_graph_set_name, kf_set_output): its status is kept, so
 * that out of memory stays KF_ERR_OUT_OF_MEMORY. */
bool ir_yl_fail_call(ir_yload *L, const ir_ynode *at, kf_status st);

/* The symbol of a name, or NULL. */
const ir_ysym *ir_yl_lookup(const ir_yload *L, const char *name);
/* "; did you mean 'x'?" for a name that is not defined, from the names
 * defined so far; false and "" when none is close. */
bool ir_yl_name_hint(const ir_yload *L, const char *name, char *buf, size_t size);
/* Defines a name; false (reported) on OOM. The caller checked it is new. */
bool ir_yl_define(ir_yload *L, const ir_ynode *name_node, kf_value v);

#endif
