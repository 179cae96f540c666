/* yaml_node.c - reads one entry of a graph file's `nodes` list and builds it
 * through the public builders, so a file and the C API give the same graph. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/similar.h"
#include "ir/names.h"
#include "ir/ops.h"
#include "ir/yaml_load.h"
#include "ir/yaml_node.h"
#include "ir/yaml_scalar.h"

/* `value` is not an op attribute of ops.def: only the const op takes it. */
#define ATTR_VALUE_ (1u << 30)

static const char *const node_keys[] = {"name", "op",   "args",  "dtype", "min",
                                        "max",  "axes", "keepdim", "shape", "perm",
                                        "axis", "eps",  "value", "start", "stop", "step"};
#define N_NODE_KEYS ((int)(sizeof node_keys / sizeof node_keys[0]))

static const struct {
  const char *key;
  uint32_t bit;
} attr_keys[] = {{"dtype", ATTR_DTYPE}, {"min", ATTR_MIN},         {"max", ATTR_MAX},
                 {"axes", ATTR_AXES},   {"keepdim", ATTR_KEEPDIM}, {"shape", ATTR_SHAPE},
                 {"perm", ATTR_PERM},   {"axis", ATTR_AXIS},       {"eps", ATTR_EPS},
                 {"value", ATTR_VALUE_}, {"start", ATTR_RANGE},     {"stop", ATTR_RANGE},
                 {"step", ATTR_RANGE}};
#define N_ATTR_KEYS ((int)(sizeof attr_keys / sizeof attr_keys[0]))

typedef kf_value (*unary_fn)(kf_graph *, kf_value);
typedef kf_value (*binary_fn)(kf_graph *, kf_value, kf_value);
typedef kf_value (*reduce_fn)(kf_graph *, kf_value, int, const int *, bool);

/* The builder of every unary and binary op, from the same table. */
static const unary_fn unary_fns[IR_OP_COUNT] = {
#define UNARY(ID, lname, ...) [IR_OP_##ID] = kf_##lname,
#include "ir/ops.def"
};
static const binary_fn binary_fns[IR_OP_COUNT] = {
#define BINARY(ID, lname, ...) [IR_OP_##ID] = kf_##lname,
#include "ir/ops.def"
};

/* A node's args list: an op's max_args, but concat (a chain of nodes of
 * two operands) takes up to MAX_ARGS. */
enum { MAX_ARGS = 64 };
static int max_args(int op) { return op == IR_OP_CONCAT ? MAX_ARGS : ir_ops[op].max_args; }

/* What one node says, once read. */
typedef struct nodespec {
  const ir_ynode *map, *name, *args;
  int op;
  uint32_t attrs; /* ATTR_* bits the node may carry */
  int nargs;
  kf_value v[MAX_ARGS];
  bool literal[MAX_ARGS];
  double lit[MAX_ARGS];
  kf_dtype dtype;
  double lo, hi, eps, value, axis;
  int64_t list[KF_MAX_RANK];
  int nlist;
  bool keepdim;
  int64_t start, stop, step; /* slice */
} nodespec;

static uint32_t allowed_attrs(int op) {
  if (op == IR_OP_CONST) return ATTR_DTYPE | ATTR_VALUE_;
  return ir_ops[op].attrs;
}

static void attr_list(uint32_t bits, char *buf, size_t size) {
  size_t o = 0;
  buf[0] = '\0';
  for (int i = 0; i < N_ATTR_KEYS && o < size; i++)
    if (bits & attr_keys[i].bit)
      o += (size_t)snprintf(buf + o, size - o, "%s%s", o ? ", " : "", attr_keys[i].key);
}

/* A close op name when there is one; else every name (docs/yaml.md). */
static bool unknown_op(ir_yload *L, const ir_ynode *opn) {
  char b[96], list[1024], hint[96];
  core_similar sim;
  core_similar_init(&sim, ir_ytext(L->doc, opn));
  size_t o = 0;
  for (int i = 0; i < IR_OP_COUNT && o < sizeof list; i++)
    if (ir_ops[i].kind != KIND_SOURCE) {
      o += (size_t)snprintf(list + o, sizeof list - o, "%s%s", o ? ", " : "", ir_ops[i].name);
      core_similar_add(&sim, ir_ops[i].name);
    }
  core_similar_add(&sim, "const");
  if (core_similar_best(&sim))
    return ir_yl_fail(L, KF_ERR_PARSE, opn, "unknown op %s%s", ir_yl_show(L, opn, b, sizeof b),
                      core_similar_hint(&sim, hint, sizeof hint));
  return ir_yl_fail(L, KF_ERR_PARSE, opn, "unknown op %s; expected one of %s, const",
                    ir_yl_show(L, opn, b, sizeof b), list);
}

/* The keys a node of this op may carry (name, op, args and its attributes),
 * for a "did you mean" that fits the op; n is 0 when the op is unknown. */
static int op_keys(const ir_yload *L, const ir_ynode *map, const char **keys) {
  const ir_ynode *opn = ir_yl_get(L, map, "op");
  int op = opn && opn->type == IR_Y_SCALAR ? ir_op_lookup(ir_ytext(L->doc, opn)) : -1;
  if (op < 0 || op == IR_OP_INPUT) return 0;
  int n = 0;
  keys[n++] = "name", keys[n++] = "op";
  if (ir_ops[op].max_args > 0) keys[n++] = "args";
  uint32_t bits = allowed_attrs(op);
  for (int i = 0; i < N_ATTR_KEYS; i++)
    if (bits & attr_keys[i].bit) keys[n++] = attr_keys[i].key;
  return n;
}

/* Keys, name and op: afterwards L->where names the node. */
static bool read_header(ir_yload *L, nodespec *s) {
  const ir_ynode *map = s->map;
  if (map->type != IR_Y_MAP)
    return ir_yl_fail(L, KF_ERR_PARSE, map,
                      "expected a mapping like {name: y, op: add, args: [a, b]}, found %s",
                      ir_yl_kind(map));
  const char *fit[N_NODE_KEYS];
  int n_fit = op_keys(L, map, fit);
  if (!ir_yl_keys(L, map, node_keys, N_NODE_KEYS, fit, n_fit)) return false;
  s->name = ir_yl_get(L, map, "name");
  if (!s->name) return ir_yl_fail(L, KF_ERR_PARSE, map, "missing required key 'name'");
  if (!ir_yl_check_name(L, s->name, "name")) return false;
  const char *name = ir_ytext(L->doc, s->name);
  L->where = IR_YW_NODE_NAME, L->where_name = name;
  const ir_ysym *prev = ir_yl_lookup(L, name);
  if (prev) {
    const ir_ynode *at = ir_ynode_at(L->doc, prev->at);
    return ir_yl_fail(L, KF_ERR_PARSE, s->name, "name '%s' is already defined at %u:%u", name,
                      (unsigned)at->line, (unsigned)at->col);
  }
  const ir_ynode *opn = ir_yl_get(L, map, "op");
  if (!opn) return ir_yl_fail(L, KF_ERR_PARSE, map, "missing required key 'op'");
  if (opn->type != IR_Y_SCALAR)
    return ir_yl_fail(L, KF_ERR_PARSE, opn, "op: expected an op name, found %s", ir_yl_kind(opn));
  const char *op = ir_ytext(L->doc, opn);
  s->op = strlen(op) == opn->n ? ir_op_lookup(op) : -1;
  if (s->op == IR_OP_INPUT)
    return ir_yl_fail(L, KF_ERR_PARSE, opn,
                      "op 'input' cannot be a node; declare graph inputs under 'inputs'");
  if (s->op < 0) return unknown_op(L, opn);
  L->where = IR_YW_NODE_OP, L->where_op = s->op;
  s->attrs = allowed_attrs(s->op);
  return true;
}

/* Every attribute key must belong to the op. */
static bool check_attr_keys(ir_yload *L, nodespec *s) {
  for (uint32_t i = 0; i + 1 < s->map->n; i += 2) {
    const ir_ynode *k = ir_ykid(L->doc, s->map, i);
    const char *key = ir_ytext(L->doc, k);
    for (int a = 0; a < N_ATTR_KEYS; a++) {
      if (strcmp(attr_keys[a].key, key) != 0 || (s->attrs & attr_keys[a].bit)) continue;
      char list[200], hint[96];
      attr_list(s->attrs, list, sizeof list);
      if (!list[0])
        return ir_yl_fail(L, KF_ERR_PARSE, k, "%s takes no attribute '%s'; expected only name, "
                          "op and args", ir_ops[s->op].name, key);
      const char *fit[N_NODE_KEYS];
      int n_fit = op_keys(L, s->map, fit);
      ir_yl_hint(key, fit, n_fit, NULL, 0, hint, sizeof hint);
      return ir_yl_fail(L, KF_ERR_PARSE, k, "%s takes no attribute '%s'; expected %s%s",
                        ir_ops[s->op].name, key, list, hint);
    }
  }
  if (s->op == IR_OP_CONST && ir_yl_get(L, s->map, "args"))
    return ir_yl_fail(L, KF_ERR_PARSE, ir_yl_get(L, s->map, "args"),
                      "const takes no args; expected value and dtype");
  return true;
}

/* A name that is not defined yet: undefined, or defined further down. */
static bool unknown_name(ir_yload *L, const ir_ynode *n, int i) {
  char b[96];
  const char *name = ir_ytext(L->doc, n);
  const ir_ynode *seq = L->nodes_seq;
  for (uint32_t k = 0; seq && k < seq->n; k++) {
    const ir_ynode *other = ir_yl_get(L, ir_ykid(L->doc, seq, k), "name");
    if (other && other->type == IR_Y_SCALAR && other->n == n->n &&
        !strcmp(ir_ytext(L->doc, other), name) && other != n)
      return ir_yl_fail(L, KF_ERR_PARSE, n,
                        "argument %d: '%s' is used before its definition at %u:%u; a node may "
                        "use only names defined above it",
                        i + 1, name, (unsigned)other->line, (unsigned)other->col);
  }
  char hint[96];
  if (ir_yl_name_hint(L, name, hint, sizeof hint))
    return ir_yl_fail(L, KF_ERR_PARSE, n, "argument %d: unknown value %s%s", i + 1,
                      ir_yl_show(L, n, b, sizeof b), hint);
  return ir_yl_fail(L, KF_ERR_PARSE, n,
                    "argument %d: unknown value %s; expected an input or an earlier node's name, "
                    "or a number",
                    i + 1, ir_yl_show(L, n, b, sizeof b));
}

static bool read_args(ir_yload *L, nodespec *s) {
  const ir_op_info *info = &ir_ops[s->op];
  if (info->max_args == 0) return true;
  s->args = ir_yl_get(L, s->map, "args");
  if (!s->args) return ir_yl_fail(L, KF_ERR_PARSE, s->map, "missing required key 'args'");
  if (s->args->type != IR_Y_SEQ)
    return ir_yl_fail(L, KF_ERR_PARSE, s->args, "args: expected a list like [a, b], found %s",
                      ir_yl_kind(s->args));
  uint32_t n = s->args->n;
  int most = max_args(s->op);
  if (n < (uint32_t)info->min_args || n > (uint32_t)most) {
    if (info->min_args == most)
      return ir_yl_fail(L, KF_ERR_PARSE, s->args, "expected %d argument%s, got %u",
                        info->min_args, info->min_args == 1 ? "" : "s", (unsigned)n);
    return ir_yl_fail(L, KF_ERR_PARSE, s->args, "expected %d to %d arguments, got %u",
                      info->min_args, most, (unsigned)n);
  }
  s->nargs = (int)n;
  for (int i = 0; i < s->nargs; i++) {
    char b[96];
    const ir_ynode *a = ir_ykid(L->doc, s->args, (uint32_t)i);
    if (a->type != IR_Y_SCALAR)
      return ir_yl_fail(L, KF_ERR_PARSE, a,
                        "argument %d: expected a value name or a number, found %s", i + 1,
                        ir_yl_kind(a));
    if (ir_yl_is_number(L, a, &s->lit[i])) {
      s->literal[i] = true;
      continue;
    }
    if (ir_yl_looks_numeric(L, a)) {
      char what[32];
      snprintf(what, sizeof what, "argument %d", i + 1);
      return ir_yl_number(L, a, what, &s->lit[i]); /* it says why it is not one */
    }
    const char *name = ir_ytext(L->doc, a);
    if (strlen(name) != a->n || !ir_name_valid(name))
      return ir_yl_fail(L, KF_ERR_PARSE, a,
                        "argument %d: expected a value name or a number, found %s", i + 1,
                        ir_yl_show(L, a, b, sizeof b));
    const ir_ysym *sym = ir_yl_lookup(L, name);
    if (!sym) return unknown_name(L, a, i);
    s->v[i] = sym->value;
  }
  return true;
}

static bool read_list_attr(ir_yload *L, nodespec *s, const char *key, bool required) {
  const ir_ynode *n = ir_yl_get(L, s->map, key);
  if (!n) {
    if (required)
      return ir_yl_fail(L, KF_ERR_PARSE, s->map, "missing required attribute '%s'", key);
    return true;
  }
  if (!strcmp(key, "shape"))
    return ir_yl_shape(L, n, key, s->op == IR_OP_RESHAPE, s->list, &s->nlist);
  if (!ir_yl_int_list(L, n, key, -64, 64, s->list, &s->nlist)) return false;
  if (!strcmp(key, "perm") && s->v[0] >= 0 && s->nlist != kf_value_rank(L->g, s->v[0]))
    return ir_yl_fail(L, KF_ERR_PARSE, n, "perm has %d entries; expected %d, the rank of '%s'",
                      s->nlist, kf_value_rank(L->g, s->v[0]),
                      ir_ytext(L->doc, ir_ykid(L->doc, s->args, 0)));
  return true;
}

static bool read_number_attr(ir_yload *L, nodespec *s, const char *key, double *out) {
  const ir_ynode *n = ir_yl_get(L, s->map, key);
  return !n || ir_yl_number(L, n, key, out);
}

/* Attributes with their defaults (contract: eps 1e-5 / 1e-6, axis -1). */
static bool read_attrs(ir_yload *L, nodespec *s) {
  const ir_ynode *n = NULL;
  s->lo = -INFINITY;
  s->hi = INFINITY;
  s->eps = s->op == IR_OP_LAYERNORM ? 1e-5 : 1e-6;
  s->axis = -1;
  bool need_dtype = s->op == IR_OP_CAST || s->op == IR_OP_CONST || s->op == IR_OP_IOTA;
  if ((s->attrs & ATTR_DTYPE) && !(n = ir_yl_get(L, s->map, "dtype")) && need_dtype)
    return ir_yl_fail(L, KF_ERR_PARSE, s->map, "missing required attribute 'dtype'");
  if ((s->attrs & ATTR_DTYPE) && n && !ir_yl_dtype(L, n, "dtype", &s->dtype)) return false;
  if (!read_number_attr(L, s, "min", &s->lo) || !read_number_attr(L, s, "max", &s->hi) ||
      !read_number_attr(L, s, "eps", &s->eps))
    return false;
  if ((n = ir_yl_get(L, s->map, "keepdim")) && !ir_yl_bool(L, n, "keepdim", &s->keepdim))
    return false;
  int64_t axis = -1;
  if ((n = ir_yl_get(L, s->map, "axis")) && !ir_yl_int(L, n, "axis", -64, 64, &axis))
    return false;
  s->axis = (double)axis;
  if (s->op == IR_OP_GATHER && !ir_yl_get(L, s->map, "axis")) s->axis = 0; /* numpy.take */
  s->start = 0, s->stop = KF_SLICE_END, s->step = 1;
  if (((n = ir_yl_get(L, s->map, "start")) &&
       !ir_yl_int(L, n, "start", INT64_MIN, INT64_MAX, &s->start)) ||
      ((n = ir_yl_get(L, s->map, "stop")) &&
       !ir_yl_int(L, n, "stop", INT64_MIN, INT64_MAX, &s->stop)) ||
      ((n = ir_yl_get(L, s->map, "step")) && !ir_yl_int(L, n, "step", 1, INT64_MAX, &s->step)))
    return false;
  if (s->op == IR_OP_CONST) {
    if (!(n = ir_yl_get(L, s->map, "value")))
      return ir_yl_fail(L, KF_ERR_PARSE, s->map, "missing required attribute 'value'");
    if (!ir_yl_is_number(L, n, &s->value) && !ir_yl_number(L, n, "value", &s->value))
      return false;
    if (!ir_yl_exact_int(L, n, "value", s->value, s->dtype)) return false;
  }
  if (s->attrs & ATTR_AXES) return read_list_attr(L, s, "axes", false);
  if (s->attrs & ATTR_SHAPE) return read_list_attr(L, s, "shape", true);
  if (s->attrs & ATTR_PERM) return read_list_attr(L, s, "perm", true);
  return true;
}

/* Number literals become scalars of the dtype of the tensor beside them
 * (where's cond: bool), made in argument order just before the op. */
static bool make_literals(ir_yload *L, nodespec *s) {
  int first = s->op == IR_OP_WHERE ? 1 : 0;
  kf_dtype peer = KF_DTYPE_COUNT;
  for (int i = first; i < s->nargs && peer == KF_DTYPE_COUNT; i++)
    if (!s->literal[i]) peer = kf_value_dtype(L->g, s->v[i]);
  for (int i = 0; i < s->nargs; i++) {
    if (!s->literal[i]) continue;
    kf_dtype dt = i < first ? KF_BOOL : peer;
    if (dt == KF_DTYPE_COUNT)
      return ir_yl_fail(L, KF_ERR_PARSE, s->args,
                        s->op == IR_OP_WHERE
                            ? "a and b are both number literals; make one a tensor so that the "
                              "numbers get its dtype"
                            : "every argument is a number literal; at least one must be a tensor "
                              "so that the numbers get its dtype");
    char what[32];
    snprintf(what, sizeof what, "argument %d", i + 1);
    if (!ir_yl_exact_int(L, ir_ykid(L->doc, s->args, (uint32_t)i), what, s->lit[i], dt))
      return false;
    s->v[i] = kf_scalar(L->g, s->lit[i], dt);
    if (s->v[i] == KF_NONE) return ir_yl_fail_builder(L, ir_ykid(L->doc, s->args, (uint32_t)i));
  }
  return true;
}

static kf_value build_other(ir_yload *L, nodespec *s) {
  kf_graph *g = L->g;
  kf_value *v = s->v;
  int ints[KF_MAX_RANK];
  for (int i = 0; i < s->nlist; i++) ints[i] = (int)s->list[i];
  switch (s->op) {
    case IR_OP_CONST: return kf_scalar(g, s->value, s->dtype);
    case IR_OP_WHERE: return kf_where(g, v[0], v[1], v[2]);
    case IR_OP_CLAMP: return kf_clamp(g, v[0], s->lo, s->hi);
    case IR_OP_CAST: return kf_cast(g, v[0], s->dtype);
    case IR_OP_SUM: return kf_sum(g, v[0], s->nlist, ints, s->keepdim);
    case IR_OP_MEAN: return kf_mean(g, v[0], s->nlist, ints, s->keepdim);
    case IR_OP_MAX: return kf_max(g, v[0], s->nlist, ints, s->keepdim);
    case IR_OP_MIN: return kf_min(g, v[0], s->nlist, ints, s->keepdim);
    case IR_OP_RESHAPE: return kf_reshape(g, v[0], s->nlist, s->list);
    case IR_OP_TRANSPOSE: return kf_transpose(g, v[0], ints);
    case IR_OP_BROADCAST_TO: return kf_broadcast_to(g, v[0], s->nlist, s->list);
    case IR_OP_SOFTMAX: return kf_softmax(g, v[0], (int)s->axis);
    case IR_OP_LOG_SOFTMAX: return kf_log_softmax(g, v[0], (int)s->axis);
    case IR_OP_LOGSUMEXP: return kf_logsumexp(g, v[0], (int)s->axis);
    case IR_OP_LAYERNORM:
      return kf_layernorm(g, v[0], s->nargs > 1 ? v[1] : KF_NONE, s->nargs > 2 ? v[2] : KF_NONE,
                          s->eps);
    case IR_OP_RMSNORM: return kf_rmsnorm(g, v[0], s->nargs > 1 ? v[1] : KF_NONE, s->eps);
    case IR_OP_MATMUL: return kf_matmul(g, v[0], v[1]);
    case IR_OP_SLICE: return kf_slice(g, v[0], (int)s->axis, s->start, s->stop, s->step);
    case IR_OP_CONCAT: return kf_concat(g, s->nargs, v, (int)s->axis);
    case IR_OP_GATHER: return kf_gather(g, v[0], v[1], (int)s->axis);
    case IR_OP_IOTA: return kf_iota(g, s->dtype, s->nlist, s->list, (int)s->axis);
    default: return KF_NONE;
  }
}

static kf_value build(ir_yload *L, nodespec *s) {
  if (ir_ops[s->op].kind == KIND_UNARY && unary_fns[s->op]) return unary_fns[s->op](L->g, s->v[0]);
  if (ir_ops[s->op].kind == KIND_BINARY && binary_fns[s->op])
    return binary_fns[s->op](L->g, s->v[0], s->v[1]);
  return build_other(L, s);
}

/* Attaches the node's name. A builder that returned an existing value (a
 * no-op) leaves that value's own name alone: the new name becomes an alias. */
static bool define(ir_yload *L, nodespec *s, kf_value v, int32_t before) {
  const char *name = ir_ytext(L->doc, s->name);
  kf_status st = v >= before ? kf_set_name(L->g, v, name) : KF_OK;
  if (st != KF_OK) return ir_yl_fail_call(L, s->name, st);
  return ir_yl_define(L, s->name, v);
}

bool ir_yl_node(ir_yload *L, const ir_ynode *node) {
  nodespec s;
  memset(&s, 0, sizeof s);
  s.map = node;
  for (int i = 0; i < MAX_ARGS; i++) s.v[i] = KF_NONE;
  L->where = IR_YW_NODE_NUMBER;
  if (!read_header(L, &s) || !check_attr_keys(L, &s) || !read_args(L, &s) ||
      !read_attrs(L, &s) || !make_literals(L, &s))
    return false;
  int32_t before = (int32_t)kf_graph_num_values(L->g);
  kf_value v = build(L, &s);
  if (v == KF_NONE) {
    if (kf_graph_status(L->g) == KF_OK)
      return ir_yl_fail(L, KF_ERR_UNSUPPORTED, node, "this op cannot be loaded from YAML");
    return ir_yl_fail_builder(L, node);
  }
  if (!define(L, &s, v, before)) return false;
  L->where = IR_YW_NONE;
  return true;
}
