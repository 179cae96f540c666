/* gemm_pair.c - may two matmuls be one paired kernel: the rules on their
 * operands (docs/matmul.md, "The paired product"). */
#include "fuser/gemm_pair.h"

#include <stdio.h>
#include <string.h>

#include "fuser/node.h"
#include "fuser/text.h"

static bool no(char *why, size_t size, const char *fmt, const char *a, const char *b) {
  if (why) snprintf(why, size, fmt, a, b);
  return false;
}

/* What the sm_90 template asks of one product (cg_gemm90_fits, which
 * decides again at emit: these must agree with it). */
static const char *template_refuses(const kf_graph *g, const ir_node *mm) {
  const ir_node *A = &g->nodes[mm->args[0]], *B = &g->nodes[mm->args[1]];
  int64_t m = mm->shape[mm->rank - 2], n = mm->shape[mm->rank - 1], k = A->shape[A->rank - 1];
  if ((mm->dtype != KF_BF16 && mm->dtype != KF_F16) || A->dtype != mm->dtype ||
      B->dtype != mm->dtype)
    return "not a bf16 or f16 product";
  if (fuse_numel(mm) != m * n || fuse_numel(A) != m * k || fuse_numel(B) != k * n) return "batched";
  if (A->op == IR_OP_CONST || B->op == IR_OP_CONST) return "a constant operand";
  if (m < 1 || n < 1 || k < 1 || m > INT32_MAX - 1024 || n > INT32_MAX - 1024 ||
      k > INT32_MAX - 1024)
    return "a dimension out of range";
  if (k % 8 || n % 8) return "K or N not a multiple of 8";
  if ((m + 127) / 128 * ((n + 63) / 64) > INT32_MAX) return "too many tiles";
  return NULL;
}

bool fuse_pair_fits(const kf_graph *g, const fuse_options *opt, int32_t m0, int32_t m1, char *why,
                    size_t size) {
  char b0[64], b1[64];
  const ir_node *p = &g->nodes[m0], *q = &g->nodes[m1];
  fuse_value_label(g, m0, b0, sizeof b0);
  fuse_value_label(g, m1, b1, sizeof b1);
  if (!opt->gemm_pair) {
    if (why) snprintf(why, size, "%s and %s: paired products off (%s)", b0, b1, opt->gemm_pair_off);
    return false;
  }
  if (opt->matmul_library)
    return no(why, size, "%s and %s: a library call takes one product", b0, b1);
  if (p->args[0] != q->args[0]) {
    char a0[64], a1[64];
    if (why)
      snprintf(why, size, "%s and %s read different A (%s and %s)", b0, b1,
               fuse_value_label(g, p->args[0], a0, sizeof a0),
               fuse_value_label(g, q->args[0], a1, sizeof a1));
    return false;
  }
  const ir_node *B0 = &g->nodes[p->args[1]], *B1 = &g->nodes[q->args[1]];
  if (B0->rank != B1->rank || memcmp(B0->shape, B1->shape, sizeof B0->shape) ||
      B0->dtype != B1->dtype || p->dtype != q->dtype)
    return no(why, size, "%s and %s: their B differ in shape or dtype", b0, b1);
  const char *t = template_refuses(g, p);
  if (t) {
    if (why) snprintf(why, size, "%s and %s: not for the sm_90 template (%s)", b0, b1, t);
    return false;
  }
  return true;
}
