/* attn_graphs.h - attention graphs for the recognizer, compile and GPU
 * suites: q k^T, an optional modifier and mask, softmax (composite or by
 * hand), times v; grouped-query heads through layout ops or broadcasting. */
#ifndef KF_TEST_ATTN_GRAPHS_H
#define KF_TEST_ATTN_GRAPHS_H

#include <check.h>
#include <math.h>
#include <string.h>

#include "ir/ir.h"

typedef struct attn_spec {
  kf_dtype dt;
  int64_t b, h, hk, sq, sk, d;
  bool hand;        /* softmax written out without keepdim */
  int mask;         /* 0 none, 1 bool input, 2 causal ge(qi, ki), 3 where(lt(qi, ki), -inf, s) */
  int64_t shift;    /* causal: ge(qi + shift, ki) */
  bool gqa_reshape; /* k, v through reshape + broadcast_to + reshape (else matmul broadcasts) */
  bool scores_out;  /* the scores are an output too */
  int axis;         /* the softmax's axis (-1) */
  int modifier;     /* 1: tanh soft-cap 30 tanh(s / 30); 2: + a bias input [1, H, Sq, Sk] */
  bool bshd;        /* q, k and v stored [B, S, H, D], read as [B, H, S, D] (no GQA) */
  /* a logsumexp of the softmax's scores, the second output: 0 none;
   * 1 kf_logsumexp(cast(x, f32)) built before the second product; 2
   * kf_logsumexp(x) (x's dtype); 3 add(m, log(s)) of the hand-written
   * softmax's own max and sum (needs hand); 4 as 1, built after the
   * second product; 5 over the queries (axis -2: refused); 6 as 1, then
   * cast to f64 (a consumer of L) */
  int lse;
} attn_spec;

static inline attn_spec attn_base(void) {
  attn_spec s = {KF_BF16, 2, 4, 4, 40, 72, 64, false, 0, 0, true, false, -1, 0, false, 0};
  return s;
}

/* The hand-written softmax; *m and *s: its row max (re-broadcast by a
 * reshape) and sum, [..., Sq, 1]. */
static inline kf_value attn_softmax_hand_ms(kf_graph *g, kf_value x, kf_value *m, kf_value *s) {
  int last = -1;
  const ir_node *n = &g->nodes[x];
  int64_t col[KF_MAX_RANK];
  memcpy(col, n->shape, sizeof col);
  col[n->rank - 1] = 1;
  int rank = n->rank;
  *m = kf_reshape(g, kf_max(g, x, 1, &last, false), rank, col);
  kf_value e = kf_exp(g, kf_sub(g, x, *m));
  *s = kf_sum(g, e, 1, &last, true);
  return kf_div(g, e, *s);
}

static inline kf_value attn_softmax_hand(kf_graph *g, kf_value x) {
  kf_value m, s;
  return attn_softmax_hand_ms(g, x, &m, &s);
}

/* k or v of hk heads as the h heads of q. */
static inline kf_value attn_heads(kf_graph *g, const attn_spec *s, kf_value x, int64_t rows) {
  if (s->hk == s->h || !s->gqa_reshape) return x;
  int64_t g5[5] = {s->b, s->hk, 1, rows, s->d}, b5[5] = {s->b, s->hk, s->h / s->hk, rows, s->d};
  int64_t r4[4] = {s->b, s->h, rows, s->d};
  x = kf_broadcast_to(g, kf_reshape(g, x, 5, g5), 5, b5);
  return kf_reshape(g, x, 4, r4);
}

static inline kf_value attn_iota(kf_graph *g, const attn_spec *s, int axis) {
  int64_t sh[2] = {s->sq, s->sk};
  return kf_iota(g, KF_I32, 2, sh, axis);
}

static inline kf_graph *attn_build(const attn_spec *s) {
  kf_graph *g = NULL;
  ck_assert_int_eq(kf_graph_create(NULL, &g), KF_OK);
  int64_t hk = s->gqa_reshape || s->hk == s->h ? s->hk : 1;
  int64_t qs[4] = {s->b, s->h, s->sq, s->d}, ks[4] = {s->b, hk, s->sk, s->d};
  kf_value q, k, v;
  if (s->bshd) {
    int swap[4] = {0, 2, 1, 3};
    int64_t q2[4] = {s->b, s->sq, s->h, s->d}, k2[4] = {s->b, s->sk, s->h, s->d};
    q = kf_transpose(g, kf_input(g, "q", s->dt, 4, q2), swap);
    k = kf_transpose(g, kf_input(g, "k", s->dt, 4, k2), swap);
    v = kf_transpose(g, kf_input(g, "v", s->dt, 4, k2), swap);
  } else {
    q = kf_input(g, "q", s->dt, 4, qs);
    k = attn_heads(g, s, kf_input(g, "k", s->dt, 4, ks), s->sk);
    v = attn_heads(g, s, kf_input(g, "v", s->dt, 4, ks), s->sk);
  }
  int perm[4] = {0, 1, 3, 2};
  kf_value sc = kf_matmul(g, q, kf_transpose(g, k, perm));
  if (s->scores_out) kf_set_output(g, sc);
  kf_value x = kf_mul(g, sc, kf_scalar(g, 0.125, s->dt));
  if (s->modifier == 1) {
    kf_value c = kf_scalar(g, 30.0, s->dt);
    x = kf_mul(g, kf_tanh(g, kf_div(g, x, c)), c);
  } else if (s->modifier == 2) {
    int64_t bs[4] = {1, s->h, s->sq, s->sk};
    x = kf_add(g, x, kf_input(g, "bias", s->dt, 4, bs));
  }
  kf_value ninf = kf_scalar(g, -INFINITY, s->dt);
  if (s->mask == 1) {
    int64_t ms[2] = {s->sq, s->sk};
    x = kf_where(g, kf_input(g, "mask", KF_BOOL, 2, ms), x, ninf);
  } else if (s->mask == 2) {
    kf_value qi = attn_iota(g, s, 0);
    if (s->shift) qi = kf_add(g, qi, kf_scalar(g, (double)s->shift, KF_I32));
    x = kf_where(g, kf_ge(g, qi, attn_iota(g, s, 1)), x, ninf);
  } else if (s->mask == 3) {
    x = kf_where(g, kf_lt(g, attn_iota(g, s, 0), attn_iota(g, s, 1)), ninf, x);
  }
  kf_value lse = KF_NONE, p;
  if (s->lse == 3) {
    ck_assert(s->hand);
    kf_value m, sum;
    p = attn_softmax_hand_ms(g, kf_cast(g, x, KF_F32), &m, &sum);
    lse = kf_add(g, m, kf_log(g, sum));
  } else {
    p = s->hand ? attn_softmax_hand(g, kf_cast(g, x, KF_F32)) : kf_softmax(g, x, s->axis);
  }
  if (s->lse == 1) lse = kf_logsumexp(g, kf_cast(g, x, KF_F32), -1);
  if (s->lse == 2) lse = kf_logsumexp(g, x, -1);
  if (s->hand) p = kf_cast(g, p, s->dt);
  kf_set_output(g, kf_matmul(g, p, v));
  if (s->lse == 4) lse = kf_logsumexp(g, kf_cast(g, x, KF_F32), -1);
  if (s->lse == 5) lse = kf_logsumexp(g, kf_cast(g, x, KF_F32), -2);
  if (s->lse == 6) lse = kf_cast(g, kf_logsumexp(g, kf_cast(g, x, KF_F32), -1), KF_F64);
  if (lse != KF_NONE) kf_set_output(g, lse);
  ck_assert_msg(kf_graph_status(g) == KF_OK, "%s", kf_graph_errmsg(g));
  return g;
}

#endif
