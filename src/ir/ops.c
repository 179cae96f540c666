/* ops.c - the op table, expanded from ops.def, and lookup by name. */
#include "ir/ops.h"

#include <string.h>

#include "ir/ir.h"

/* OTHER rows check their operand dtypes in their own builders, so their
 * accepts/result columns are placeholders (ACC_ANY, RES_SAME). */
const ir_op_info ir_ops[IR_OP_COUNT] = {
#define UNARY(ID, lname, acc, res, ...) [IR_OP_##ID] = {#lname, KIND_UNARY, 1, 1, 0, acc, res},
#define BINARY(ID, lname, acc, res, ...) [IR_OP_##ID] = {#lname, KIND_BINARY, 2, 2, 0, acc, res},
#define OTHER(ID, lname, kind, mn, mx, attr) \
  [IR_OP_##ID] = {#lname, kind, mn, mx, attr, ACC_ANY, RES_SAME},
#include "ir/ops.def"
};

int ir_op_lookup(const char *name) {
  if (!name) return -1;
  for (int i = 0; i < IR_OP_COUNT; i++)
    if (strcmp(ir_ops[i].name, name) == 0) return i;
  return -1;
}
