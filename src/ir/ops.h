/* ops.h - the op table (ops.c), expanded from ops.def: each op's name, kind,
 * arity, attributes and dtype rules, and lookup by name. */
#ifndef KF_IR_OPS_H
#define KF_IR_OPS_H

#include <stdint.h>

typedef enum ir_op {
#define UNARY(ID, lname, ...) IR_OP_##ID,
#define BINARY(ID, lname, ...) IR_OP_##ID,
#define OTHER(ID, lname, ...) IR_OP_##ID,
#include "ops.def"
  IR_OP_COUNT
} ir_op;

typedef enum ir_kind {
  KIND_SOURCE,    /* input, const */
  KIND_UNARY,     /* one operand, elementwise */
  KIND_BINARY,    /* two operands, broadcast, elementwise */
  KIND_POINTWISE, /* where, clamp, cast */
  KIND_REDUCE,    /* sum mean max min */
  KIND_LAYOUT,    /* reshape transpose broadcast_to slice concat gather iota:
                     index arithmetic only */
  KIND_COMPOSITE, /* expanded at build time, never a node */
  KIND_MATMUL
} ir_kind;

typedef enum ir_accept { ACC_ANY, ACC_NUM, ACC_FLT } ir_accept;
typedef enum ir_result { RES_SAME, RES_BOOL } ir_result;

/* Attribute bits, for the YAML loader's "which keys may this op have". */
enum {
  ATTR_DTYPE = 1u << 0,
  ATTR_MIN = 1u << 1,
  ATTR_MAX = 1u << 2,
  ATTR_AXES = 1u << 3,
  ATTR_KEEPDIM = 1u << 4,
  ATTR_SHAPE = 1u << 5,
  ATTR_PERM = 1u << 6,
  ATTR_AXIS = 1u << 7,
  ATTR_EPS = 1u << 8,
  ATTR_RANGE = 1u << 9 /* slice: start, stop, step */
};

typedef struct ir_op_info {
  const char *name; /* "add" */
  ir_kind kind;
  int8_t min_args, max_args;
  uint32_t attrs;    /* ATTR_* bits */
  ir_accept accepts; /* unary/binary only; others check in their builder */
  ir_result result;
} ir_op_info;

extern const ir_op_info ir_ops[IR_OP_COUNT];

/* The op of that name, or -1. */
int ir_op_lookup(const char *name);

#endif /* KF_IR_OPS_H */
