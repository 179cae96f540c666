/* attention_decode.c - picks the split-key decode kernel for an attention
 * match with few queries, and finds the query heads that share k and v. */
#include "fuser/attention_decode.h"

#include <stdio.h>
#include <string.h>

static bool member(const int32_t *nodes, int32_t n, int32_t v) {
  for (int32_t i = 0; i < n; i++)
    if (nodes[i] == v) return true;
  return false;
}

/* The element offset, in the tensor it is stored in, of element idx of
 * value v: through the layout ops that are members (the recognizer took
 * only transposes, reshapes and broadcasts there), down to the first value
 * that is not one. -1 on anything else. */
static int64_t stored_offset(const kf_graph *g, int32_t v, int64_t *idx, const int32_t *nodes,
                             int32_t n) {
  for (int depth = 0; depth < FUSE_ATTN_MAX_NODES && member(nodes, n, v); depth++) {
    const ir_node *x = &g->nodes[v], *a = &g->nodes[x->args[0]];
    int64_t in[KF_MAX_RANK] = {0};
    if (x->op == IR_OP_TRANSPOSE) {
      for (int d = 0; d < x->rank; d++) in[x->perm[d]] = idx[d];
    } else if (x->op == IR_OP_BROADCAST_TO) {
      int off = x->rank - a->rank;
      for (int d = 0; d < a->rank; d++) in[d] = a->shape[d] == 1 ? 0 : idx[d + off];
    } else if (x->op == IR_OP_RESHAPE) {
      int64_t lin = 0;
      for (int d = 0; d < x->rank; d++) lin = lin * x->shape[d] + idx[d];
      for (int d = a->rank - 1; d >= 0; d--) {
        in[d] = a->shape[d] > 0 ? lin % a->shape[d] : 0;
        lin = a->shape[d] > 0 ? lin / a->shape[d] : 0;
      }
    } else {
      return -1;
    }
    memcpy(idx, in, sizeof in);
    v = x->args[0];
  }
  const ir_node *s = &g->nodes[v];
  int64_t lin = 0;
  for (int d = 0; d < s->rank; d++) lin = lin * s->shape[d] + idx[d];
  return lin;
}

/* Where row r of operand x (kt: its column r) of product mm lies for the
 * scores' batch entry bt. */
static int64_t row_at(const kf_graph *g, const ir_node *mm, int32_t x, bool cols, int64_t bt,
                      int64_t r, const int32_t *nodes, int32_t n) {
  const ir_node *xn = &g->nodes[x];
  int64_t idx[KF_MAX_RANK] = {0}, coord[KF_MAX_RANK] = {0};
  for (int d = mm->rank - 3; d >= 0; d--) {
    coord[d] = bt % mm->shape[d];
    bt /= mm->shape[d];
  }
  int off = mm->rank - xn->rank;
  for (int d = 0; d < xn->rank - 2; d++) idx[d] = xn->shape[d] == 1 ? 0 : coord[d + off];
  idx[xn->rank - (cols ? 1 : 2)] = r;
  return stored_offset(g, x, idx, nodes, n);
}

/* Whether batch entries bt and b0 read the same rows of k and of v. */
static bool same_rows(const kf_graph *g, const fuse_attn *a, int64_t bt, int64_t b0,
                      const int32_t *nodes, int32_t n) {
  const ir_node *m1 = &g->nodes[a->mm1], *m2 = &g->nodes[a->mm2];
  int64_t rows[4] = {0, 1, a->sk / 2, a->sk - 1};
  for (int i = 0; i < 4; i++) {
    int64_t r = rows[i] < a->sk ? rows[i] : 0;
    int64_t k0 = row_at(g, m1, a->kt, true, b0, r, nodes, n);
    int64_t v0 = row_at(g, m2, a->v, false, b0, r, nodes, n);
    if (k0 < 0 || v0 < 0 || k0 != row_at(g, m1, a->kt, true, bt, r, nodes, n) ||
        v0 != row_at(g, m2, a->v, false, bt, r, nodes, n))
      return false;
  }
  return true;
}

int64_t fuse_attn_shared_heads(const kf_graph *g, const fuse_attn *a, const int32_t *nodes,
                               int32_t n) {
  if (a->kt_stored || a->batch < 2 || a->batch > (1 << 16) || a->sk < 1) return 1;
  /* no share is longer than the run of entries that read what entry 0 reads */
  int64_t most = 1;
  while (most < a->batch && same_rows(g, a, most, 0, nodes, n)) most++;
  for (int64_t s = most; s > 1; s--) {
    if (a->batch % s) continue;
    bool ok = true;
    for (int64_t bt = 0; bt < a->batch && ok; bt++)
      ok = bt % s == 0 || same_rows(g, a, bt, bt - bt % s, nodes, n);
    if (ok) return s;
  }
  return 1;
}

bool fuse_attn_decode_pick(const kf_graph *g, const fuse_attn *a, const int32_t *nodes, int32_t n,
                           fuse_attn_decode *out, char *why, size_t whysize) {
  memset(out, 0, sizeof *out);
  if (a->sq > FUSE_DECODE_MAX_QUERIES) {
    if (why && whysize)
      snprintf(
          why, whysize,
          "%lld queries a head (more than %d): the flash kernel's 64-query tiles, a block each",
          (long long)a->sq, FUSE_DECODE_MAX_QUERIES);
    return false;
  }
  out->share = fuse_attn_shared_heads(g, a, nodes, n);
  out->group = out->share;
  while (out->group * a->sq > FUSE_DECODE_MAX_ROWS || out->share % out->group) out->group--;
  out->rows = out->group * a->sq;
  out->pairs = a->batch / out->group;
  if (why && whysize)
    snprintf(why, whysize,
             "%lld quer%s a head against %lld keys, %lld heads reading each k/v head: split-key "
             "decode, a block per %lld heads x a share of the keys (k and v read once for them)",
             (long long)a->sq, a->sq == 1 ? "y" : "ies", (long long)a->sk, (long long)out->share,
             (long long)out->group);
  return true;
}
