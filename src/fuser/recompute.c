/* recompute.c - the cost rule that bounds recomputation in a row kernel:
 * how many elementwise values its passes compute per element, in all. */
#include "fuser/recompute.h"

#include <stdlib.h>

#include "fuser/legal.h"
#include "ir/shape.h"

/* A row kernel runs one pass over the row per reduction and one for its
 * outputs; each pass computes, per element, every member its results need
 * that is not a reduction (a reduction's result is a per-row variable once
 * its own pass is done). A value needed by several passes is computed in
 * each of them, so a residual ladder (x1 = x0 + f(x0) / sum(f(x0)), ...)
 * fused whole costs O(phases^2) work and code. This counts that work: the
 * distinct members each pass reaches from its roots, stopping at
 * reductions and at the kernel's inputs, summed over the passes. It stops
 * counting past `budget`. */

/* Distinct non-reduction members reachable from root (a member), marked in
 * lc->seen for the current pass. */
static int64_t pass_evals(fuse_legal_ctx *lc, int32_t root, int64_t budget) {
  const kf_graph *g = lc->g;
  int64_t count = 0;
  int32_t top = 0;
  if (!fuse_marked(&lc->members, root) || fuse_marked(&lc->seen, root) ||
      ir_is_reduction(g, &g->nodes[root]))
    return 0;
  fuse_mark(&lc->seen, root, 0);
  lc->stack[top++] = root;
  while (top > 0 && count <= budget) {
    const ir_node *nd = &g->nodes[lc->stack[--top]];
    count++;
    for (int a = 0; a < nd->nargs; a++) {
      int32_t u = nd->args[a];
      if (!fuse_marked(&lc->members, u) || fuse_marked(&lc->seen, u) ||
          ir_is_reduction(g, &g->nodes[u]))
        continue;
      fuse_mark(&lc->seen, u, 0);
      lc->stack[top++] = u; /* each member is pushed once per pass */
    }
  }
  return count;
}

int64_t fuse_row_evals(fuse_legal_ctx *lc, const fuse_set *set, int64_t budget) {
  const kf_graph *g = lc->g;
  int64_t total = 0;
  for (int32_t i = 0; i < set->n && total <= budget; i++) {
    const ir_node *nd = &g->nodes[set->nodes[i]];
    if (!ir_is_reduction(g, nd)) continue; /* extent 1: a reshape */
    fuse_marks_clear(&lc->seen);
    total += pass_evals(lc, nd->args[0], budget - total);
  }
  fuse_marks_clear(&lc->seen);
  for (int32_t i = 0; i < set->n && total <= budget; i++)
    if (set->is_out[i]) total += pass_evals(lc, set->nodes[i], budget - total);
  return total;
}
