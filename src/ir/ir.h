/* ir.h - the op graph as every pass sees it: nodes and the graph (the op
 * table is ops.h's). Each file's functions are declared in its own header:
 * graph.h, shape.h, dtype.h, names.h, ... */
#ifndef KF_IR_H
#define KF_IR_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/ops.h"
#include "kfuse.h"

/* ---- nodes and graphs --------------------------------------------------- */

/* One value of the graph. Which attribute fields mean something depends on
 * the op: the result shape is always `shape` (reshape and broadcast_to keep
 * their target there), the result dtype is `dtype` (cast keeps its target
 * there). */
typedef struct ir_node {
  ir_op op;
  kf_dtype dtype;
  int8_t rank;
  int8_t nargs;
  int32_t args[3];
  int64_t shape[KF_MAX_RANK];
  double value;        /* CONST: the scalar, already rounded to dtype */
  double lo, hi;       /* CLAMP: bounds, -inf / +inf when absent */
  uint8_t axes;        /* REDUCE: bit i set when input axis i is reduced */
  bool keepdim;        /* REDUCE */
  int8_t perm[KF_MAX_RANK]; /* TRANSPOSE: output axis i is input axis perm[i] */
  int8_t axis;         /* SLICE CONCAT GATHER IOTA: the axis (of the operand
                          x for GATHER, of the result otherwise), >= 0 */
  int64_t start, step; /* SLICE: first element (>= 0) and step (>= 1) */
  char *name;          /* NULL when unnamed; unique within the graph */
  int32_t uses;        /* how many operand slots of later nodes read it */
  bool is_output;
} ir_node;

/* A name -> value index; open addressing, owned by the graph. */
typedef struct ir_names {
  int32_t *slots; /* value index, or -1 */
  uint32_t cap;   /* power of two */
  uint32_t count;
} ir_names;

struct kf_graph {
  kf_ctx *ctx; /* may be NULL */
  char *name;
  ir_node *nodes;
  int32_t n_nodes, cap_nodes;
  int32_t *inputs;
  int32_t n_inputs, cap_inputs;
  int32_t *outputs;
  int32_t n_outputs, cap_outputs;
  ir_names names;
  kf_status status;    /* sticky builder status */
  char errmsg[1024];   /* first builder error, or last failing call */
};

#endif /* KF_IR_H */
