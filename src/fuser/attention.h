/* attention.h - does a product of a softmax with v, over scores that are a
 * product of q with a transposed k, form attention that one flash-style
 * kernel computes? A pure function of the graph (attention.c), unit-tested
 * without a GPU, the way gemm_match.h is for library epilogues. */
#ifndef KF_FUSER_ATTENTION_H
#define KF_FUSER_ATTENTION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/ir.h"

/* Most nodes one attention match holds (the pattern, its score modifier
 * chain and the layout ops of its operands). */
#define FUSE_ATTN_MAX_NODES 96

/* One match, in graph values. The scores S = q kt ([..., Sq, Sk]) pass
 * through a pointwise chain to x, softmax(x) over the last axis is p (maybe
 * cast), and out = p v ([..., Sq, Dv]). */
typedef struct fuse_attn {
  int32_t mm1, mm2;      /* the two products */
  int32_t q;             /* mm1's first operand */
  int32_t kt;            /* mm1's second operand: a transpose of k's last two axes */
  int32_t k;             /* kt's operand, [..., Sk, D]; -1 when kt_stored */
  bool kt_stored;        /* k is laid out transposed: kt ([..., D, Sk]) is read as it is */
  int32_t v;             /* mm2's second operand, [..., Sk, Dv] */
  int32_t x;             /* the softmax's input (the end of the modifier chain) */
  int32_t max, sum, div; /* the softmax's reductions and its division */
  int32_t out;           /* mm2: the one value written */
  kf_dtype dtype;        /* of q, k, v and out */
  kf_dtype x_dtype;      /* of the softmax */
  int64_t batch, sq, sk, d, dv;
  /* Visible scores satisfy key <= query + causal_off (found from an iota
   * comparison in a where that is the chain's last step): the kernel
   * skips key tiles that are wholly past it. */
  bool causal;
  int64_t causal_off;
  int32_t n_chain; /* pointwise nodes between the scores and x, x included */
  /* The logsumexp of x over the last axis, written beside out: -1 none,
   * else the value written ([..., Sq] in any shape of those elements,
   * contiguous: element bt * sq + query), of lse_dtype. lse_guard: the
   * graph's form keeps a row max of +-inf as the result (kf_logsumexp: -inf
   * for a row with no visible key); without it such a row is NaN. */
  int32_t lse;
  kf_dtype lse_dtype;
  bool lse_guard;
} fuse_attn;

/* Whether mm (a matmul node) is the second product of an attention
 * pattern: matmul(q, transpose(k) or a k laid out transposed) -> pointwise
 * chain -> softmax over the
 * last axis (max, sub, exp, sum, div: as kf_softmax builds it or written by
 * hand, keepdim or re-broadcast) -> [cast] -> matmul with v. q, k and v may
 * come through layout ops (reshape, broadcast_to, transposes of batch axes:
 * grouped-query heads) that keep their last axis whole; the chain may hold
 * any pointwise op, with side operands from memory or computed from
 * constants and iota. A logsumexp of x over the last axis (as
 * kf_logsumexp builds it, over x or over the same cast of x's operand, or
 * m + log(s) of the softmax's own max and sum) joins as the second value
 * written (out->lse). Every value but mm and the logsumexp is read only
 * inside the match and is not a graph output. On success *out describes it and nodes[0..*n)
 * (capacity FUSE_ATTN_MAX_NODES) lists its nodes, ascending. false with
 * the reason in why; *softmax_seen tells whether mm read a softmax at all
 * (whether the refusal is worth a line in the decision log). */
bool fuse_attn_find(const kf_graph *g, int32_t mm, fuse_attn *out, int32_t *nodes, int32_t *n,
                    bool *softmax_seen, char *why, size_t whysize);

/* Whether nodes[0..n) (ascending) are exactly one attention match. */
bool fuse_attn_match(const kf_graph *g, const int32_t *nodes, int32_t n, fuse_attn *out, char *why,
                     size_t whysize);

/* Whether the flash kernel (templates/attention.cu) takes a match: k read
 * through a transpose (not laid out transposed), f16 or
 * bf16, head dims D = Dv of 64, 128 or 256, a softmax in f16, bf16 or f32
 * (the kernel's is f32). false with the reason in why. */
bool fuse_attn_fits(const fuse_attn *a, char *why, size_t whysize);

#endif
