/* ir.h - the op graph as every pass sees it: ops, nodes, the graph, and the
 * internal helpers shared across src/ir/. */
#ifndef KF_IR_H
#define KF_IR_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kfuse.h"

/* ---- the op table ------------------------------------------------------ */

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
  uint32_t attrs;   /* ATTR_* bits */
  ir_accept accepts; /* unary/binary only; others check in their builder */
  ir_result result;
} ir_op_info;

extern const ir_op_info ir_ops[IR_OP_COUNT];

/* The op of that name, or -1. */
int ir_op_lookup(const char *name);

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

/* ---- helpers shared inside src/ir/ -------------------------------------- */

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

/* Formats a shape as "[2,3]" into buf (at least 8*21+3 bytes). */
const char *ir_shape_str(char *buf, size_t size, int rank, const int64_t *shape);
/* A node's label for messages: "%5 y" or "%5". */
const char *ir_node_label(const kf_graph *g, kf_value v, char *buf, size_t size);

/* Element count with overflow check: false if the product exceeds INT64_MAX
 * or any dimension is < 0. rank 0 gives 1. */
bool ir_numel(int rank, const int64_t *shape, int64_t *out);
/* A tensor's bytes (numel * dtype size) with overflow checks: false when
 * the element count overflows int64, the dtype is unknown or the bytes
 * exceed KF_MAX_TENSOR_BYTES. Every node passes it in ir_append. */
bool ir_tensor_bytes(int rank, const int64_t *shape, kf_dtype dt, int64_t *bytes);
/* *sum += add, false (and *sum unchanged) when the total would exceed
 * KF_MAX_TENSOR_BYTES or add is negative: for totals such as a plan's
 * buffers and workspace. */
bool ir_bytes_add(int64_t *sum, int64_t add);
/* A reduction whose reduced axes all have extent 1 (a rank-0 operand
 * included): each result is one element of the operand, so the fuser and
 * codegen treat it as a reshape (sum and mean add +0, as the reference's
 * sum from 0.0 does), never as a reduction kernel. False for other ops. */
bool ir_is_copy_reduce(const kf_graph *g, const ir_node *n);
/* A reduction over more than one element: what needs a row or reduce
 * kernel (KIND_REDUCE and not ir_is_copy_reduce). */
bool ir_is_reduction(const kf_graph *g, const ir_node *n);
/* NumPy broadcasting of two shapes; false if they do not broadcast. */
bool ir_broadcast_shapes(int ra, const int64_t *a, int rb, const int64_t *b, int *rout,
                         int64_t *out);

/* True for f16 bf16 f32 f64. */
bool ir_dtype_is_float(kf_dtype dt);
/* Rounds a double once to dtype and returns it as a double (f16/bf16/f32
 * round to nearest even; integers truncate toward zero and saturate, NaN
 * gives 0; bool gives 0 or 1). */
double ir_round_to_dtype(double v, kf_dtype dt);
/* The literal rule (kf_scalar, YAML literals and const): true when dtype dt
 * holds v, after rounding for a float dtype. Integers (i32, i64) need an
 * integral v in range, bool 0 or 1; f16/bf16/f32/f64 round to nearest, but
 * a finite v that would round to an infinity is refused (NaN and infinities
 * given as such are kept). Otherwise false with the reason in why ("is not
 * an integer, which i32 needs"), to follow the value in a message. */
bool ir_literal_fits(double v, kf_dtype dt, char *why, size_t size);
/* Bit conversions from double, rounding once (no double rounding through
 * float). */
uint16_t ir_double_to_f16(double v);
uint16_t ir_double_to_bf16(double v);

/* Name syntax [A-Za-z_][A-Za-z0-9_.]*, at most 255 bytes. */
bool ir_name_valid(const char *name);
/* Index of a named value, or -1. */
int32_t ir_names_find(const kf_graph *g, const char *name);
/* Adds name -> v; false on OOM. The caller checked uniqueness. */
bool ir_names_insert(kf_graph *g, const char *name, int32_t v);
void ir_names_free(ir_names *names);

/* The YAML loader (yaml_load.c) under the public kf_graph_load_yaml and
 * kf_graph_load_yaml_string (src/pipeline/graph_load.c, which adds the parsed-
 * graph cache and the "parse" span): the text of a graph file into a graph;
 * errors (FILE:LINE:COL ...) go to ctx. */
kf_status ir_yaml_load_string(kf_ctx *ctx, const char *text, size_t len, const char *filename,
                              kf_graph **out);
/* A graph file's bytes (malloc'd into *text), refusing directories and
 * files over the loader's size limit. */
kf_status ir_yaml_read_file(kf_ctx *ctx, const char *path, char **text, size_t *len);

#endif /* KF_IR_H */
