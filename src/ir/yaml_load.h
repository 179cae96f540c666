/* yaml_load.h - the YAML loader's state and the helpers its files share
 * (yaml_load.c: the document; yaml_node.c: one node; yaml_scalar.c: values). */
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

/* ---- yaml_scalar.c: reading typed values --------------------------------- */

/* "a scalar", "a list", "a mapping". */
const char *ir_yl_kind(const ir_ynode *n);
/* A scalar's text as 'text' for messages: escaped, cut at 64 bytes. */
const char *ir_yl_show(const ir_yload *L, const ir_ynode *n, char *buf, size_t size);
/* Strict readers; each reports its own error (naming `what`). */
bool ir_yl_int(ir_yload *L, const ir_ynode *n, const char *what, int64_t lo, int64_t hi,
               int64_t *out);
bool ir_yl_number(ir_yload *L, const ir_ynode *n, const char *what, double *out);
bool ir_yl_bool(ir_yload *L, const ir_ynode *n, const char *what, bool *out);
bool ir_yl_dtype(ir_yload *L, const ir_ynode *n, const char *what, kf_dtype *out);
/* A list of at most KF_MAX_RANK integers in [lo, hi]. */
bool ir_yl_int_list(ir_yload *L, const ir_ynode *n, const char *what, int64_t lo, int64_t hi,
                    int64_t *out, int *count);
/* A tensor shape: positive dimensions (and at most one -1 when allow_infer),
 * rank <= KF_MAX_RANK, element count within int64. */
bool ir_yl_shape(ir_yload *L, const ir_ynode *n, const char *what, bool allow_infer,
                 int64_t *out, int *rank);
/* Literal checks without reporting: a number (plain decimal, .inf, .nan) or
 * plain true/false. */
bool ir_yl_is_number(const ir_yload *L, const ir_ynode *n, double *out);
/* For a literal n (already read as v) that becomes a constant of integer
 * dtype dt: beyond 2^53 a double skips integers, so such a literal must be
 * plain decimal digits whose value v holds exactly; otherwise a positioned
 * KF_ERR_PARSE. Other dtypes and smaller values pass (kf_scalar applies the
 * rest of the literal rule). */
bool ir_yl_exact_int(ir_yload *L, const ir_ynode *n, const char *what, double v, kf_dtype dt);
/* A plain scalar that starts like a number (digit, sign or dot): no name can. */
bool ir_yl_looks_numeric(const ir_yload *L, const ir_ynode *n);
/* A name's syntax and length; reports and returns false when bad. */
bool ir_yl_check_name(ir_yload *L, const ir_ynode *n, const char *what);

/* ---- mappings ------------------------------------------------------------- */

/* The value of key in a mapping, or NULL. */
const ir_ynode *ir_yl_get(const ir_yload *L, const ir_ynode *map, const char *key);
/* Every key a scalar, one of allowed, and none repeated; reports the first
 * offender, with a "did you mean" from prefer (the keys that fit best, such
 * as an op's own attributes) or else from allowed. */
bool ir_yl_keys(ir_yload *L, const ir_ynode *map, const char *const *allowed, int n_allowed,
                const char *const *prefer, int n_prefer);
/* "; did you mean 'x'?" into buf when a name of first (or, when none of
 * those is close, of then) is close to word (core/similar.h); false and ""
 * otherwise. */
bool ir_yl_hint(const char *word, const char *const *first, int n_first, const char *const *then,
                int n_then, char *buf, size_t size);

/* ---- symbols (yaml_load.c) ------------------------------------------------ */

/* The symbol of a name, or NULL. */
const ir_ysym *ir_yl_lookup(const ir_yload *L, const char *name);
/* "; did you mean 'x'?" for a name that is not defined, from the names
 * defined so far; false and "" when none is close. */
bool ir_yl_name_hint(const ir_yload *L, const char *name, char *buf, size_t size);
/* Defines a name; false (reported) on OOM. The caller checked it is new. */
bool ir_yl_define(ir_yload *L, const ir_ynode *name_node, kf_value v);

/* ---- yaml_node.c ----------------------------------------------------------- */

/* Reads and builds one entry of `nodes`. */
bool ir_yl_node(ir_yload *L, const ir_ynode *node);

#endif
