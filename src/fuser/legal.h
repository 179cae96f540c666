/* legal.h - the one legality predicate of a candidate group (legal.c), its
 * scratch sets, and the re-check of a built kernel (fuse_kernel_legal, in
 * plan.h). */
#ifndef KF_FUSER_LEGAL_H
#define KF_FUSER_LEGAL_H

#include <stdbool.h>
#include <stdint.h>

#include "fuser/plan.h"

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
  int32_t anchor; /* the first reduction or the matmul, -1 for pointwise */
  int32_t n_inputs;
  int32_t n_epilogue;
  int32_t pair[2]; /* MATMUL: a paired product's two matmuls, else -1 */
  int s_rank; /* ROW/REDUCE: the reduced input, leading 1s stripped */
  int64_t s[KF_MAX_RANK];
  uint8_t mask;  /* reduced axes of s */
  char rule[32]; /* on refusal */
  char why[192];
} fuse_shape_info;

typedef struct fuse_legal_ctx {
  const kf_graph *g;
  const fuse_options *opt;
  fuse_marks members; /* slot: position in the set */
  fuse_marks inputs;
  fuse_marks seen; /* recompute.c: the members one pass computes */
  int32_t *stack;  /* recompute.c: node-indexed scratch */
  uint8_t *role;   /* node-indexed scratch */
} fuse_legal_ctx;

bool fuse_legal_init(fuse_legal_ctx *lc, const kf_graph *g, const fuse_options *opt);
void fuse_legal_free(fuse_legal_ctx *lc);
/* The one legality predicate. roles (may be NULL) receives each node's
 * fuse_role, by position. */
bool fuse_legal(fuse_legal_ctx *lc, const fuse_set *set, fuse_shape_info *info, uint8_t *roles);

/* Re-checks kernel `kernel` of a built plan with the same legality predicate
 * the fusion pass used (kinds, shapes and roles, outputs, size limits), and
 * that its outputs are exactly the values other kernels or the caller read.
 * false with a reason in why. For tests and debugging. */
bool fuse_kernel_legal(const fuse_plan *plan, int kernel, char *why, size_t whysize);

#endif
