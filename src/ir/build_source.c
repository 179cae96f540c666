/* build_source.c - the builders of graph sources: inputs and constants. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/alloc.h"
#include "ir/build_common.h"
#include "ir/dtype.h"
#include "ir/graph.h"
#include "ir/names.h"
#include "ir/shape.h"

/* Makes room for one more entry of g->inputs. */
static bool reserve_input(kf_graph *g) {
  if (g->n_inputs < g->cap_inputs) return true;
  int32_t cap = g->cap_inputs ? g->cap_inputs * 2 : 8;
  int32_t *p = core_realloc(g->inputs, (size_t)cap * sizeof *p);
  if (!p) return false;
  g->inputs = p;
  g->cap_inputs = cap;
  return true;
}

/* Name, dtype, rank and dims of an input; records the error and returns false. */
static bool check_input(kf_graph *g, const char *name, kf_dtype dtype, int rank,
                        const int64_t *shape) {
  kf_value id = ir_bld_next(g);
  if (!name)
    return ir_fail(g, KF_ERR_INVALID_ARG, "node %%%d (input): a name is required", id), false;
  if (!ir_name_valid(name))
    return ir_fail(g, KF_ERR_INVALID_ARG,
                   "node %%%d (input): invalid name '%.64s' (want [A-Za-z_][A-Za-z0-9_.]*, "
                   "at most 255 bytes)",
                   id, name),
           false;
  int32_t owner = ir_names_find(g, name);
  if (owner >= 0)
    return ir_fail(g, KF_ERR_INVALID_ARG,
                   "node %%%d (input %s): name '%s' is already taken by %%%d", id, name, name,
                   owner),
           false;
  if (!ir_bld_dtype_ok(dtype))
    return ir_fail(g, KF_ERR_INVALID_ARG, "node %%%d (input %s): unknown dtype %d", id, name,
                   (int)dtype),
           false;
  if (rank < 0 || rank > KF_MAX_RANK || (rank > 0 && !shape))
    return ir_fail(g, KF_ERR_INVALID_ARG,
                   "node %%%d (input %s): rank %d (want 0..%d, with a shape array)", id, name, rank,
                   KF_MAX_RANK),
           false;
  char s[8 * 21 + 3];
  for (int i = 0; i < rank; i++)
    if (shape[i] < 1)
      return ir_fail(g, KF_ERR_INVALID_ARG,
                     "node %%%d (input %s): shape %s has dimension %d = %lld (want >= 1)", id, name,
                     ir_shape_str(s, sizeof s, rank, shape), i, (long long)shape[i]),
             false;
  if (!ir_tensor_bytes(rank, shape, dtype, NULL))
    return ir_fail(g, KF_ERR_SHAPE,
                   "node %%%d (input %s): %s%s is larger than a tensor may be (at most 2^62 "
                   "bytes)",
                   id, name, kf_dtype_name(dtype), ir_shape_str(s, sizeof s, rank, shape)),
           false;
  return true;
}

kf_value kf_input(kf_graph *g, const char *name, kf_dtype dtype, int rank, const int64_t *shape) {
  if (!ir_bld_live(g)) return KF_NONE;
  if (!check_input(g, name, dtype, rank, shape)) return KF_NONE;
  if (!reserve_input(g))
    return ir_fail(g, KF_ERR_OUT_OF_MEMORY, "node %%%d (input %s): out of memory", ir_bld_next(g),
                   name);
  ir_node n;
  ir_bld_node(&n, IR_OP_INPUT, dtype, rank, shape);
  kf_value v = ir_append(g, &n);
  if (v == KF_NONE) return KF_NONE;
  if (!ir_names_insert(g, name, v))
    return ir_fail(g, KF_ERR_OUT_OF_MEMORY, "node %%%d (input %s): out of memory", v, name);
  g->inputs[g->n_inputs++] = v;
  return v;
}

kf_value kf_scalar(kf_graph *g, double value, kf_dtype dtype) {
  if (!ir_bld_live(g)) return KF_NONE;
  kf_value id = ir_bld_next(g);
  if (!ir_bld_dtype_ok(dtype))
    return ir_fail(g, KF_ERR_INVALID_ARG, "node %%%d (const): unknown dtype %d", id, (int)dtype);
  if (!isfinite(value) && !ir_dtype_is_float(dtype))
    return ir_fail(g, KF_ERR_INVALID_ARG,
                   "node %%%d (const): %g is not finite, which %s cannot hold", id, value,
                   kf_dtype_name(dtype));
  char why[96], num[32];
  if (!ir_literal_fits(value, dtype, why, sizeof why)) {
    snprintf(num, sizeof num, "%.15g", value); /* short, unless that would hide digits */
    if (strtod(num, NULL) != value) snprintf(num, sizeof num, "%.17g", value);
    return ir_fail(g, KF_ERR_INVALID_ARG, "node %%%d (const): %s %s", id, num, why);
  }
  ir_node n;
  ir_bld_node(&n, IR_OP_CONST, dtype, 0, NULL);
  n.value = ir_round_to_dtype(value, dtype);
  return ir_append(g, &n);
}
