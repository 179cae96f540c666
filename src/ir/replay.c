/* replay.c - rebuilds a described node through its op's public builder and
 * checks that the builder made exactly that node (see replay.h). */
#include "ir/replay.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ir/graph.h"
#include "ir/ops.h"

typedef kf_value (*unary_fn)(kf_graph *, kf_value);
typedef kf_value (*binary_fn)(kf_graph *, kf_value, kf_value);
typedef kf_value (*reduce_fn)(kf_graph *, kf_value, int, const int *, bool);

static const unary_fn unary_fns[IR_OP_COUNT] = {
#define UNARY(ID, lname, ...) [IR_OP_##ID] = kf_##lname,
#include "ir/ops.def"
};
static const binary_fn binary_fns[IR_OP_COUNT] = {
#define BINARY(ID, lname, ...) [IR_OP_##ID] = kf_##lname,
#include "ir/ops.def"
};
static const reduce_fn reduce_fns[IR_OP_COUNT] = {
    [IR_OP_SUM] = kf_sum, [IR_OP_MEAN] = kf_mean, [IR_OP_MAX] = kf_max, [IR_OP_MIN] = kf_min};

/* The stop that gives a slice node its length from its start; start itself
 * (an empty slice, refused) when the described fields cannot be a slice. */
static int64_t slice_stop(const ir_node *n) {
  if (n->axis < 0 || n->axis >= n->rank || n->start < 0 || n->step < 1) return n->start;
  int64_t len = n->shape[n->axis];
  if (len < 1 || (len - 1) > (INT64_MAX - 1 - n->start) / n->step) return n->start;
  return n->start + (len - 1) * n->step + 1;
}

/* The builder call for n's op; KF_NONE (nothing recorded) for an op that
 * is never a node of its own (input, composites). */
static kf_value build(kf_graph *g, const ir_node *n) {
  const kf_value *a = n->args;
  int ints[KF_MAX_RANK], count = 0;
  switch (ir_ops[n->op].kind) {
    case KIND_UNARY:
      return unary_fns[n->op](g, a[0]);
    case KIND_BINARY:
      return binary_fns[n->op](g, a[0], a[1]);
    case KIND_REDUCE:
      for (int i = 0; i < KF_MAX_RANK; i++) /* axes has KF_MAX_RANK (8) bits */
        if (n->axes & (1u << i)) ints[count++] = i;
      return reduce_fns[n->op](g, a[0], count, ints, n->keepdim);
    case KIND_MATMUL:
      return kf_matmul(g, a[0], a[1]);
    default:
      break;
  }
  for (int i = 0; i < KF_MAX_RANK; i++) ints[i] = n->perm[i];
  switch (n->op) {
    case IR_OP_CONST:
      return kf_scalar(g, n->value, n->dtype);
    case IR_OP_WHERE:
      return kf_where(g, a[0], a[1], a[2]);
    case IR_OP_CLAMP:
      return kf_clamp(g, a[0], n->lo, n->hi);
    case IR_OP_CAST:
      return kf_cast(g, a[0], n->dtype);
    case IR_OP_RESHAPE:
      return kf_reshape(g, a[0], n->rank, n->shape);
    case IR_OP_TRANSPOSE:
      return kf_transpose(g, a[0], ints);
    case IR_OP_BROADCAST_TO:
      return kf_broadcast_to(g, a[0], n->rank, n->shape);
    case IR_OP_SLICE:
      return kf_slice(g, a[0], n->axis, n->start, slice_stop(n), n->step);
    case IR_OP_CONCAT:
      return kf_concat(g, 2, a, n->axis);
    case IR_OP_GATHER:
      return kf_gather(g, a[0], a[1], n->axis);
    case IR_OP_IOTA:
      return kf_iota(g, n->dtype, n->rank, n->shape, n->axis);
    default:
      return KF_NONE;
  }
}

/* Equal bits, or both NaN (a NaN's payload need not survive rounding). */
static bool same_double(double x, double y) {
  return memcmp(&x, &y, sizeof x) == 0 || (isnan(x) && isnan(y));
}

/* The first field of `got` (the builder's node) that differs from `want`,
 * or NULL. Only fields that mean something for the op are compared: the
 * builder's node has the others zeroed, whatever `want` holds there. */
static const char *differs(const ir_node *got, const ir_node *want) {
  if (got->op != want->op) return "op";
  if (got->dtype != want->dtype) return "dtype";
  if (got->rank != want->rank ||
      memcmp(got->shape, want->shape, (size_t)got->rank * sizeof *got->shape) != 0)
    return "shape";
  if (got->nargs != want->nargs ||
      memcmp(got->args, want->args, (size_t)got->nargs * sizeof *got->args) != 0)
    return "operands";
  switch (ir_ops[got->op].kind) {
    case KIND_REDUCE:
      return got->axes != want->axes || got->keepdim != want->keepdim ? "axes or keepdim" : NULL;
    default:
      break;
  }
  if (got->op == IR_OP_CONST && !same_double(got->value, want->value)) return "value";
  if (got->op == IR_OP_CLAMP &&
      (!same_double(got->lo, want->lo) || !same_double(got->hi, want->hi)))
    return "bounds";
  if ((got->op == IR_OP_SLICE || got->op == IR_OP_CONCAT || got->op == IR_OP_GATHER ||
       got->op == IR_OP_IOTA) &&
      got->axis != want->axis)
    return "axis";
  if (got->op == IR_OP_SLICE && (got->start != want->start || got->step != want->step))
    return "start or step";
  if (got->op == IR_OP_TRANSPOSE && memcmp(got->perm, want->perm, (size_t)got->rank) != 0)
    return "perm";
  return NULL;
}

kf_value ir_replay_node(kf_graph *g, const ir_node *want, char *why, size_t why_size) {
  kf_value id = g->n_nodes;
  const ir_op_info *info = (unsigned)want->op < IR_OP_COUNT ? &ir_ops[want->op] : NULL;
  const char *bad = NULL; /* a reason, or the field that differs */
  bool field = false;
  if (!info || want->op == IR_OP_INPUT || info->kind == KIND_COMPOSITE)
    bad = "an op that is never a node of its own";
  else if (want->nargs < info->min_args || want->nargs > info->max_args)
    bad = "an operand count its op does not take";
  else if (want->rank < 0 || want->rank > KF_MAX_RANK)
    bad = "a rank out of range";
  kf_value v = bad ? KF_NONE : build(g, want);
  if (!bad && v == KF_NONE && kf_graph_status(g) != KF_OK) {
    snprintf(why, why_size, "%s", kf_graph_errmsg(g));
    return KF_NONE;
  }
  if (!bad && v != id) bad = "a node its builder does not append";
  if (!bad) field = (bad = differs(&g->nodes[v], want)) != NULL;
  if (!bad) return v;
  snprintf(why, why_size,
           field ? "node %%%d (op %d): its %s is not the one its builder makes"
                 : "node %%%d (op %d): %s",
           id, (int)want->op, bad);
  ir_fail(g, KF_ERR_INVALID_ARG, "%s", why);
  return KF_NONE;
}
