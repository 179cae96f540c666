/* fuse_int.h - internals shared by the files of src/fuser/: the builder's
 * working state, the legality predicate, the decision log, a string buffer. */
#ifndef KF_FUSER_FUSE_INT_H
#define KF_FUSER_FUSE_INT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/strbuf.h"
#include "fuser/plan.h"

/* ---- scratch marks ------------------------------------------------------ */

/* A node-indexed set that is cleared in O(1) by bumping the epoch. */
typedef struct fuse_marks {
  uint32_t *stamp;
  int32_t *slot; /* a payload per marked node (position, kernel, ...) */
  uint32_t epoch;
  int32_t n;
} fuse_marks;

bool fuse_marks_init(fuse_marks *m, int32_t n);
void fuse_marks_free(fuse_marks *m);
void fuse_marks_clear(fuse_marks *m);
static inline bool fuse_marked(const fuse_marks *m, int32_t v) {
  return m->stamp[v] == m->epoch;
}
static inline void fuse_mark(fuse_marks *m, int32_t v, int32_t slot) {
  m->stamp[v] = m->epoch;
  m->slot[v] = slot;
}

/* ---- the legality predicate --------------------------------------------- */

/* A candidate group: its nodes in ascending (topological) order, which of
 * them are recomputed copies, and which must be written to memory. */
typedef struct fuse_set {
  const int32_t *nodes;
  const uint8_t *copy;   /* NULL: none */
  const uint8_t *is_out; /* per position */
  int32_t n;
} fuse_set;

/* What the predicate found out about a legal group. */
typedef struct fuse_shape_info {
  fuse_kind kind;
  int32_t anchor;  /* the first reduction or the matmul, -1 for pointwise */
  int32_t n_inputs;
  int32_t n_epilogue;
  int s_rank;      /* ROW/REDUCE: the reduced input, leading 1s stripped */
  int64_t s[KF_MAX_RANK];
  uint8_t mask;    /* reduced axes of s */
  char rule[32];   /* on refusal */
  char why[192];
} fuse_shape_info;

typedef struct fuse_legal_ctx {
  const kf_graph *g;
  const fuse_options *opt;
  fuse_marks members; /* slot: position in the set */
  fuse_marks inputs;
  fuse_marks seen;    /* recompute.c: the members one pass computes */
  int32_t *stack;     /* recompute.c: node-indexed scratch */
  uint8_t *role;      /* node-indexed scratch */
} fuse_legal_ctx;

bool fuse_legal_init(fuse_legal_ctx *lc, const kf_graph *g, const fuse_options *opt);
void fuse_legal_free(fuse_legal_ctx *lc);
/* The one legality predicate. roles (may be NULL) receives each node's
 * fuse_role, by position. */
bool fuse_legal(fuse_legal_ctx *lc, const fuse_set *set, fuse_shape_info *info, uint8_t *roles);

/* ---- recomputation (recompute.c) --------------------------------------- */

/* The row kernel's recompute cost: the distinct non-reduction members that
 * each of its passes (one per reduction, one for the outputs) computes per
 * element, summed over the passes (docs/fusion.md, rule "recompute-limit").
 * Counting stops once it exceeds budget; the work is O(budget + set->n). */
int64_t fuse_row_evals(fuse_legal_ctx *lc, const fuse_set *set, int64_t budget);

/* ---- occupancy splits (split.c) ----------------------------------------- */

/* Copies opt->splits into the plan (plan->options.splits becomes the
 * plan's); checks the node indices. */
kf_status fuse_splits_adopt(fuse_plan *plan, char *err, size_t errsize);
void fuse_splits_free(fuse_plan *plan);
/* Part of the predicate: true (refused, rule "occupancy-split") when two
 * members of the set (marked in lc->members) belong to one split. */
bool fuse_split_refuses(fuse_legal_ctx *lc, const fuse_set *set, fuse_shape_info *info);
/* One "occupancy-split" decision per split: the numbers and the kernels
 * that now hold its nodes. */
void fuse_splits_log(fuse_plan *plan);

/* ---- shapes and bytes --------------------------------------------------- */

int64_t fuse_numel(const ir_node *n);
int64_t fuse_bytes(const ir_node *n);
/* True for ops computed elementwise (unary, binary, where/clamp/cast) and
 * layout ops. */
bool fuse_is_elementwise(const ir_node *n);
/* "12.0 MiB" into buf. */
const char *fuse_fmt_bytes(char *buf, size_t size, int64_t bytes);

/* ---- the decision log --------------------------------------------------- */

void fuse_decide(fuse_plan *plan, bool accepted, const char *rule, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* The same with the text given as pieces to concatenate: the hot path
 * (one accepted merge per node) stays clear of printf. */
void fuse_decide_parts(fuse_plan *plan, bool accepted, const char *rule, const char *const *parts,
                       int n);
/* False once the log ran out of memory (the plan then fails). */
bool fuse_decisions_ok(const fuse_plan *plan);

/* ---- the passes --------------------------------------------------------- */

/* Vertical fusion: fills the groups as kernels (nodes, recomputed flags),
 * sets plan->kernel_of and plan->n_dead. Kernels are not yet ordered. */
kf_status fuse_vertical(fuse_plan *plan, char *err, size_t errsize);
/* Inputs, outputs, kind, iteration space, roles and costs of each kernel. */
kf_status fuse_finish_kernels(fuse_plan *plan, char *err, size_t errsize);
/* Orders the kernels, packs them into launches, renumbers them in launch
 * order. */
kf_status fuse_launches(fuse_plan *plan, char *err, size_t errsize);
/* Places memory values: inputs, outputs, and the shared workspace. */
kf_status fuse_buffers(fuse_plan *plan, char *err, size_t errsize);

/* ---- a growable string -------------------------------------------------- */

typedef core_str fuse_sb; /* src/core/strbuf.h */
#define fuse_sb_printf core_str_printf
/* The string (the caller's), or NULL after an allocation failure. */
char *fuse_sb_finish(fuse_sb *sb);

#endif
