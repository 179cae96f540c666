/* attention.c - finds attention (q kt -> pointwise chain -> softmax -> p v)
 * in a graph by structure, and whether the flash kernel takes it. */
#include "fuser/attention.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/shape.h"

enum { ATTN_MEMO = 4 * FUSE_ATTN_MAX_NODES };

typedef struct am {
  const kf_graph *g;
  int32_t *nodes; /* members, in the order found */
  int32_t n;
  /* the product each visited value of the scores' cone comes from (-1
   * none, -3 two): a bounded memo, so that matching allocates nothing */
  int32_t memo_v[ATTN_MEMO], memo_r[ATTN_MEMO];
  int32_t n_memo;
  bool full;
  bool overflow; /* add() found no room */
  char *why;
  size_t whysize;
} am;

static bool no(am *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool no(am *s, const char *fmt, ...) {
  if (s->why && s->whysize) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->why, s->whysize, fmt, ap);
    va_end(ap);
  }
  return false;
}

static const ir_node *nd(const am *s, int32_t v) {
  return &s->g->nodes[v];
}

static bool has(const am *s, int32_t v) {
  for (int32_t i = 0; i < s->n; i++)
    if (s->nodes[i] == v) return true;
  return false;
}

static bool add(am *s, int32_t v) {
  if (has(s, v)) return true;
  if (s->n >= FUSE_ATTN_MAX_NODES) {
    s->overflow = true;
    return no(s, "more than %d nodes in the pattern", FUSE_ATTN_MAX_NODES);
  }
  s->nodes[s->n++] = v;
  return true;
}

/* Whether every operand slot that reads v belongs to a member. */
static bool read_inside(const am *s, int32_t v) {
  int32_t inside = 0;
  for (int32_t i = 0; i < s->n; i++) {
    const ir_node *m = nd(s, s->nodes[i]);
    for (int a = 0; a < m->nargs; a++) inside += m->args[a] == v;
  }
  return inside == nd(s, v)->uses && !nd(s, v)->is_output;
}

static bool same_shape(const ir_node *a, const ir_node *b) {
  return a->rank == b->rank &&
         memcmp(a->shape, b->shape, sizeof a->shape[0] * (size_t)a->rank) == 0;
}

static bool elementwise(const ir_node *n) {
  ir_kind k = ir_ops[n->op].kind;
  return k == KIND_UNARY || k == KIND_BINARY || k == KIND_POINTWISE;
}

/* ---- the softmax ------------------------------------------------------ */

/* A max or sum over exactly the last axis of its operand. */
static bool reduces_last(const am *s, int32_t v, ir_op op) {
  const ir_node *r = nd(s, v);
  if (r->op != op) return false;
  const ir_node *x = nd(s, r->args[0]);
  return x->rank >= 1 && r->axes == (uint8_t)(1u << (x->rank - 1));
}

/* The reduction under a per-row value as an operand of sub or div reads
 * it: the reduction itself (keepdim), or it re-broadcast by reshape or
 * broadcast_to (keepdim false written by hand); the layout nodes join. */
static int32_t row_find(const am *s, int32_t v, ir_op op) {
  int32_t cur = v;
  for (int i = 0; i < 3 && !reduces_last(s, cur, op); i++) {
    const ir_node *n = nd(s, cur);
    if (n->op != IR_OP_RESHAPE && n->op != IR_OP_BROADCAST_TO) return -1;
    cur = n->args[0];
  }
  return reduces_last(s, cur, op) ? cur : -1;
}

/* The layout nodes between v and its reduction r (row_find) join. */
static bool add_row_path(am *s, int32_t v, int32_t r) {
  for (int32_t u = v; u != r; u = nd(s, u)->args[0])
    if (!add(s, u)) return false;
  return true;
}

static int32_t row_value(am *s, int32_t v, ir_op op) {
  int32_t r = row_find(s, v, op);
  return r >= 0 && add_row_path(s, v, r) ? r : -1;
}

/* mm's first operand as [cast] div(e, sum(e)), e = exp(sub(x, max(x))). */
static bool softmax(am *s, int32_t mm, fuse_attn *o, bool *seen) {
  int32_t p = nd(s, mm)->args[0];
  if (nd(s, p)->op == IR_OP_CAST) {
    if (!add(s, p)) return false;
    p = nd(s, p)->args[0];
  }
  const ir_node *dv = nd(s, p);
  if (dv->op != IR_OP_DIV) return no(s, "the first operand of %%%d is not a softmax", (int)mm);
  int32_t sum = row_value(s, dv->args[1], IR_OP_SUM);
  if (sum < 0) return no(s, "the first operand of %%%d is not a softmax", (int)mm);
  *seen = true;
  int32_t e = dv->args[0];
  if (nd(s, sum)->args[0] != e || nd(s, e)->op != IR_OP_EXP)
    return no(s, "%%%d does not divide exp(x - max) by its own sum over the last axis", (int)p);
  int32_t sub = nd(s, e)->args[0];
  if (nd(s, sub)->op != IR_OP_SUB)
    return no(s, "the softmax's exp %%%d does not read x - max(x)", (int)e);
  int32_t x = nd(s, sub)->args[0];
  int32_t mx = row_value(s, nd(s, sub)->args[1], IR_OP_MAX);
  if (mx < 0 || nd(s, mx)->args[0] != x)
    return no(s, "%%%d does not subtract the max of x over the last axis", (int)sub);
  if (!same_shape(nd(s, p), nd(s, x)) || nd(s, x)->rank < 2)
    return no(s, "the softmax %%%d is not over the last axis of a matrix", (int)p);
  o->x = x, o->max = mx, o->sum = sum, o->div = p;
  o->x_dtype = nd(s, x)->dtype;
  return add(s, p) && add(s, sum) && add(s, e) && add(s, sub) && add(s, mx);
}

/* ---- the logsumexp ----------------------------------------------------- */

/* The one node reading v (through one operand slot) when v is no output;
 * -1 else. */
static int32_t sole_reader(const am *s, int32_t v) {
  const ir_node *n = nd(s, v);
  if (n->uses != 1 || n->is_output) return -1;
  for (int32_t u = v + 1; u < s->g->n_nodes; u++)
    for (int a = 0; a < nd(s, u)->nargs; a++)
      if (nd(s, u)->args[a] == v) return u;
  return -1;
}

/* Whether a and b hold the same values: one node, or the same cast of one
 * operand (kf_softmax and kf_logsumexp each widen half scores by a cast
 * of their own). */
static bool same_values(const am *s, int32_t a, int32_t b) {
  if (a == b) return true;
  const ir_node *x = nd(s, a), *y = nd(s, b);
  return x->op == IR_OP_CAST && y->op == IR_OP_CAST && x->dtype == y->dtype &&
         x->args[0] == y->args[0];
}

static bool is_pos_inf(const am *s, int32_t v) {
  const ir_node *n = nd(s, v);
  return n->op == IR_OP_CONST && isinf(n->value) && n->value > 0;
}

/* w = where(eq(abs(ma), +inf), ma, sum): kf_logsumexp's guard, which keeps
 * a row max of +-inf as the result. */
static bool is_guard(const am *s, int32_t w, int32_t ma, int32_t sum) {
  const ir_node *n = nd(s, w);
  if (n->op != IR_OP_WHERE || n->args[1] != ma || n->args[2] != sum) return false;
  const ir_node *c = nd(s, n->args[0]);
  if (c->op != IR_OP_EQ) return false;
  for (int i = 0; i < 2; i++) {
    const ir_node *ab = nd(s, c->args[i]);
    if (ab->op == IR_OP_ABS && ab->args[0] == ma && is_pos_inf(s, c->args[1 - i])) return true;
  }
  return false;
}

/* The logsumexp whose log is lg: log(S) with S = sum(exp(x' - M)) over
 * the last axis, M = max(x'), x' the softmax's x or the same values
 * (S and M the softmax's own, or a second copy), then M + log(S),
 * [the guard], [a cast], [a reshape]. Joins its nodes and fills o->lse;
 * false (nothing joined) when lg is not one. */
static bool lse_at(am *s, fuse_attn *o, int32_t lg) {
  int32_t sv = nd(s, lg)->args[0], sum = row_find(s, sv, IR_OP_SUM);
  if (sum < 0) return false;
  int32_t e = nd(s, sum)->args[0];
  if (nd(s, e)->op != IR_OP_EXP || nd(s, nd(s, e)->args[0])->op != IR_OP_SUB) return false;
  int32_t sub = nd(s, e)->args[0], x = nd(s, sub)->args[0];
  int32_t mx = row_find(s, nd(s, sub)->args[1], IR_OP_MAX);
  if (mx < 0 || nd(s, mx)->args[0] != x || !same_values(s, x, o->x)) return false;
  if ((sum == o->sum) != (mx == o->max)) return false;
  int32_t sm = sole_reader(s, lg);
  if (sm < 0 || nd(s, sm)->op != IR_OP_ADD) return false;
  int32_t ma = nd(s, sm)->args[nd(s, sm)->args[0] == lg ? 1 : 0];
  /* one value per row of x, in x's row order */
  const ir_node *xn = nd(s, x), *smn = nd(s, sm);
  int64_t rows = 0, all = 0;
  if (row_find(s, ma, IR_OP_MAX) != mx || !ir_numel(smn->rank, smn->shape, &rows) ||
      !ir_numel(xn->rank, xn->shape, &all) || rows * xn->shape[xn->rank - 1] != all)
    return false;
  int32_t tail = sm, w = sole_reader(s, sm);
  bool guard = w >= 0 && is_guard(s, w, ma, sm);
  if (guard) tail = w;
  for (int step = 0; step < 2; step++) { /* [a cast], then [a reshape] */
    int32_t r = sole_reader(s, tail);
    ir_op want = step == 0 ? IR_OP_CAST : IR_OP_RESHAPE;
    if (r >= 0 && nd(s, r)->op == want) tail = r;
  }
  if (!nd(s, tail)->is_output && nd(s, tail)->uses == 0) return false;
  if (sum != o->sum) { /* a second copy over the same values: its nodes join */
    if (x != o->x && !add(s, x)) return false;
    if (!add(s, mx) || !add_row_path(s, nd(s, sub)->args[1], mx) || !add(s, sub) || !add(s, e) ||
        !add(s, sum))
      return false;
  }
  if (!add_row_path(s, sv, sum) || !add(s, lg) || !add_row_path(s, ma, mx) || !add(s, sm))
    return false;
  if (guard) {
    const ir_node *c = nd(s, nd(s, w)->args[0]);
    int32_t ab = nd(s, c->args[0])->op == IR_OP_ABS ? c->args[0] : c->args[1];
    if (!add(s, ab) || !add(s, nd(s, w)->args[0]) || !add(s, w)) return false;
  }
  for (int32_t u = tail, stop = guard ? w : sm; u != stop; u = nd(s, u)->args[0])
    if (!add(s, u)) return false;
  o->lse = tail;
  o->lse_dtype = nd(s, tail)->dtype;
  o->lse_guard = guard;
  return true;
}

/* A logsumexp over the softmax's scores, if the graph holds one. */
static bool lse(am *s, fuse_attn *o) {
  o->lse = -1;
  for (int32_t v = 0; v < s->g->n_nodes; v++)
    if (nd(s, v)->op == IR_OP_LOG && !has(s, v)) {
      int32_t before = s->n;
      if (lse_at(s, o, v)) return true;
      if (s->n != before || s->overflow) return false; /* out of room: add() said why */
    }
  return true;
}

/* ---- the score chain -------------------------------------------------- */

/* The product that value v (the scores' shape) is computed from through
 * pointwise ops, -1 (none) or -3 (two). */
static int32_t memo(const am *s, int32_t v) {
  for (int32_t i = 0; i < s->n_memo; i++)
    if (s->memo_v[i] == v) return s->memo_r[i];
  return -2;
}

static int32_t root_of(am *s, int32_t v, const ir_node *x, int depth) {
  int32_t known = memo(s, v);
  if (known != -2) return known;
  const ir_node *n = nd(s, v);
  int32_t r = -1;
  if (n->op == IR_OP_MATMUL)
    r = v;
  else if (elementwise(n) && same_shape(n, x) && depth < 256)
    for (int a = 0; a < n->nargs; a++) {
      int32_t ra = root_of(s, n->args[a], x, depth + 1);
      if (ra == -1) continue;
      r = (r >= 0 && r != ra) || ra == -3 ? -3 : ra;
    }
  if (s->n_memo == ATTN_MEMO) {
    s->full = true;
    return -3;
  }
  s->memo_v[s->n_memo] = v, s->memo_r[s->n_memo++] = r;
  return r;
}

static bool side_ok(const ir_node *n) {
  ir_kind k = ir_ops[n->op].kind;
  return elementwise(n) || (k == KIND_LAYOUT && n->op != IR_OP_GATHER);
}

/* The chain from the scores to x, and the side values computed from
 * constants, iota and memory that only it reads (visited from the last:
 * a value joins once every reader of it is a member). */
static bool chain(am *s, fuse_attn *o) {
  const ir_node *x = nd(s, o->x);
  int32_t mm1 = root_of(s, o->x, x, 0);
  if (s->full) return no(s, "the scores' cone holds more than %d values", ATTN_MEMO);
  if (mm1 == -3) return no(s, "two products feed the scores %%%d", (int)o->x);
  if (mm1 < 0) return no(s, "the softmax's input %%%d is not computed from a product", (int)o->x);
  if (!same_shape(nd(s, mm1), x))
    return no(s, "the product %%%d is broadcast into the scores", (int)mm1);
  o->mm1 = mm1;
  int32_t c0 = s->n; /* the chain's members start here: only they read side values */
  for (int32_t i = 0; i < s->n_memo; i++)
    if (s->memo_r[i] == mm1 && s->memo_v[i] != mm1) {
      if (!add(s, s->memo_v[i])) return false;
      o->n_chain++;
    }
  if (!add(s, mm1)) return false;
  /* side values, largest first: each one's readers are decided before it */
  int32_t cand[ATTN_MEMO], nc = 0;
  for (int32_t i = c0; i < s->n; i++)
    for (int a = 0; a < nd(s, s->nodes[i])->nargs && s->nodes[i] != mm1; a++)
      cand[nc++] = nd(s, s->nodes[i])->args[a];
  while (nc > 0) {
    int32_t best = 0;
    for (int32_t i = 1; i < nc; i++)
      if (cand[i] > cand[best]) best = i;
    int32_t v = cand[best];
    for (int32_t i = nc - 1; i >= 0; i--)
      if (cand[i] == v) cand[i] = cand[--nc];
    const ir_node *n = nd(s, v);
    if (has(s, v) || n->op == IR_OP_INPUT || n->op == IR_OP_CONST || !side_ok(n) ||
        memo(s, v) == mm1 || !read_inside(s, v))
      continue;
    if (!add(s, v)) return false;
    if (nc + n->nargs > ATTN_MEMO) return no(s, "more than %d side values", ATTN_MEMO);
    for (int a = 0; a < n->nargs; a++) cand[nc++] = n->args[a];
  }
  return true;
}

/* ---- operands --------------------------------------------------------- */

/* Whether a layout op keeps its operand's last axis as its own last axis,
 * whole: the element (..., r, c) of its result is c of a row of the
 * stored tensor, so rows can be copied as contiguous runs. */
static bool keeps_last(const am *s, const ir_node *n) {
  const ir_node *a = nd(s, n->args[0]);
  if (n->rank < 1 || a->rank < 1) return false;
  if (n->op == IR_OP_TRANSPOSE) return n->perm[n->rank - 1] == n->rank - 1;
  if (n->op == IR_OP_RESHAPE || n->op == IR_OP_BROADCAST_TO)
    return a->shape[a->rank - 1] == n->shape[n->rank - 1];
  return false;
}

/* The layout ops through which an operand comes from memory join. */
static bool operand(am *s, int32_t v) {
  if (has(s, v)) return no(s, "the operand %%%d is computed in the score chain", (int)v);
  for (;;) {
    const ir_node *n = nd(s, v);
    ir_kind k = ir_ops[n->op].kind;
    if (k != KIND_LAYOUT || n->op == IR_OP_SLICE || n->op == IR_OP_CONCAT ||
        n->op == IR_OP_GATHER || n->op == IR_OP_IOTA || !keeps_last(s, n) || !read_inside(s, v))
      return true; /* read from memory as it is */
    if (!add(s, v)) return false;
    v = n->args[0];
  }
}

static bool operands(am *s, fuse_attn *o) {
  const ir_node *m1 = nd(s, o->mm1), *m2 = nd(s, o->out);
  o->q = m1->args[0];
  o->kt = m1->args[1];
  o->v = m2->args[1];
  const ir_node *kt = nd(s, o->kt);
  /* k as rows [Sk, D] through a transpose, or laid out transposed (kt
   * itself from memory, or a transpose of a k whose head dim is not its
   * last axis): matched, and fuse_attn_fits says whether the kernel reads
   * that layout */
  o->kt_stored =
      kt->op != IR_OP_TRANSPOSE || kt->perm[kt->rank - 2] != kt->rank - 1 || !read_inside(s, o->kt);
  o->k = o->kt_stored ? -1 : kt->args[0];
  if (!o->kt_stored && !add(s, o->kt)) return false;
  const ir_node *q = nd(s, o->q), *v = nd(s, o->v);
  o->dtype = q->dtype;
  o->sq = m1->shape[m1->rank - 2];
  o->sk = m1->shape[m1->rank - 1];
  o->d = q->shape[q->rank - 1];
  o->dv = v->shape[v->rank - 1];
  o->batch = 1;
  for (int i = 0; i < m1->rank - 2; i++) o->batch *= m1->shape[i];
  if (m2->rank != m1->rank ||
      memcmp(m2->shape, m1->shape, sizeof m1->shape[0] * (size_t)(m1->rank - 2)))
    return no(s, "v (%%%d) broadcasts the output beyond the scores' batch", (int)o->v);
  return operand(s, o->q) && operand(s, o->kt_stored ? o->kt : o->k) && operand(s, o->v);
}

/* ---- causal structure -------------------------------------------------- */

/* v as an index along the scores' query (from_right 2) or key (1) axis
 * plus an integer offset: iota through broadcasts, reshapes that only
 * change leading 1s, casts and added integer constants. */
static bool index_form(const am *s, int32_t v, int *from_right, double *off, int depth) {
  const ir_node *n = nd(s, v);
  if (depth > 16) return false;
  if (n->op == IR_OP_IOTA) {
    *from_right = n->rank - n->axis;
    *off = 0;
    return true;
  }
  if (n->op == IR_OP_BROADCAST_TO || n->op == IR_OP_CAST)
    return index_form(s, n->args[0], from_right, off, depth + 1);
  if (n->op == IR_OP_RESHAPE) {
    const ir_node *a = nd(s, n->args[0]);
    int i = 0, j = 0;
    while (i < n->rank && n->shape[i] == 1) i++;
    while (j < a->rank && a->shape[j] == 1) j++;
    if (n->rank - i != a->rank - j ||
        memcmp(n->shape + i, a->shape + j, sizeof n->shape[0] * (size_t)(n->rank - i)))
      return false;
    return index_form(s, n->args[0], from_right, off, depth + 1);
  }
  if (n->op == IR_OP_ADD || n->op == IR_OP_SUB) {
    for (int c = 0; c < 2; c++) {
      const ir_node *k = nd(s, n->args[c]);
      if (k->op != IR_OP_CONST || k->value != floor(k->value) || fabs(k->value) > 1e9) continue;
      if (n->op == IR_OP_SUB && c == 0) return false;
      if (!index_form(s, n->args[1 - c], from_right, off, depth + 1)) return false;
      *off += n->op == IR_OP_ADD ? k->value : -k->value;
      return true;
    }
  }
  return false;
}

static bool is_neg_inf(const am *s, int32_t v) {
  const ir_node *n = nd(s, v);
  return n->op == IR_OP_CONST && isinf(n->value) && n->value < 0;
}

/* Visible scores of a where(cond, scores, -inf) that ends the chain: when
 * cond is key - query <= c, the key tiles past the diagonal are skipped. */
static void causal(am *s, fuse_attn *o) {
  int32_t w = o->x;
  while (nd(s, w)->op == IR_OP_CAST && w != o->mm1) w = nd(s, w)->args[0];
  const ir_node *wn = nd(s, w);
  if (wn->op != IR_OP_WHERE) return;
  bool when = true;
  if (memo(s, wn->args[1]) == o->mm1 && is_neg_inf(s, wn->args[2]))
    when = true;
  else if (memo(s, wn->args[2]) == o->mm1 && is_neg_inf(s, wn->args[1]))
    when = false;
  else
    return;
  const ir_node *c = nd(s, wn->args[0]);
  if (c->op != IR_OP_GE && c->op != IR_OP_GT && c->op != IR_OP_LE && c->op != IR_OP_LT) return;
  int fa, fb;
  double oa, ob;
  if (!index_form(s, c->args[0], &fa, &oa, 0) || !index_form(s, c->args[1], &fb, &ob, 0)) return;
  if (fa == fb || fa < 1 || fa > 2 || fb < 1 || fb > 2) return;
  /* (k - q) REL c, with REL 0 le, 1 lt, 2 ge, 3 gt */
  int rel = c->op == IR_OP_LE ? 0 : c->op == IR_OP_LT ? 1 : c->op == IR_OP_GE ? 2 : 3;
  double cst = fa == 1 ? ob - oa : oa - ob;   /* k + ok OP q + oq  or  q + oq OP k + ok */
  if (fa == 2) rel = (rel + 2) % 4;           /* q OP k  ==  k OP' q, mirrored */
  static const int negated[4] = {3, 2, 1, 0}; /* le <-> gt, lt <-> ge */
  if (!when) rel = negated[rel];
  if (rel > 1) return;
  o->causal = true;
  o->causal_off = (int64_t)cst - (rel == 1 ? 1 : 0);
}

/* ---- entry points ------------------------------------------------------ */

static int cmp_i32(const void *a, const void *b) {
  int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return (x > y) - (x < y);
}

static bool find(am *s, int32_t mm, fuse_attn *o, bool *seen) {
  memset(o, 0, sizeof *o);
  o->out = o->mm2 = mm;
  if (nd(s, mm)->op != IR_OP_MATMUL) return no(s, "%%%d is not a product", (int)mm);
  if (!add(s, mm) || !softmax(s, mm, o, seen) || !lse(s, o) || !chain(s, o) || !operands(s, o))
    return false;
  for (int32_t i = 0; i < s->n; i++)
    if (s->nodes[i] != mm && s->nodes[i] != o->lse && !read_inside(s, s->nodes[i]))
      return no(s, "%%%d is read outside the pattern or is an output", (int)s->nodes[i]);
  causal(s, o);
  qsort(s->nodes, (size_t)s->n, sizeof *s->nodes, cmp_i32);
  return true;
}

bool fuse_attn_find(const kf_graph *g, int32_t mm, fuse_attn *out, int32_t *nodes, int32_t *n,
                    bool *softmax_seen, char *why, size_t whysize) {
  am s;
  memset(&s, 0, sizeof s);
  s.g = g, s.nodes = nodes, s.why = why, s.whysize = whysize;
  bool seen = false;
  *n = 0;
  bool ok = mm >= 0 && mm < g->n_nodes && find(&s, mm, out, &seen);
  if (softmax_seen) *softmax_seen = seen;
  *n = ok ? s.n : 0;
  return ok;
}

bool fuse_attn_match(const kf_graph *g, const int32_t *nodes, int32_t n, fuse_attn *out, char *why,
                     size_t whysize) {
  int32_t mm = -1;
  for (int32_t i = 0; i < n; i++)
    if (g->nodes[nodes[i]].op == IR_OP_MATMUL) mm = nodes[i];
  int32_t found[FUSE_ATTN_MAX_NODES], nf = 0;
  if (mm < 0) {
    if (why && whysize) snprintf(why, whysize, "no product");
    return false;
  }
  if (!fuse_attn_find(g, mm, out, found, &nf, NULL, why, whysize)) return false;
  for (int32_t i = 0, j = 0; i < n || j < nf; i++, j++)
    if (i >= n || j >= nf || nodes[i] != found[j]) {
      int32_t v = i < n && (j >= nf || nodes[i] < found[j]) ? nodes[i] : found[j];
      if (why && whysize)
        snprintf(why, whysize, "%%%d %s the attention pattern of %%%d", (int)v,
                 i < n && v == nodes[i] ? "is not part of" : "is missing from", (int)mm);
      return false;
    }
  return true;
}

bool fuse_attn_fits(const fuse_attn *a, char *why, size_t whysize) {
  const char *fail = NULL;
  char b[96];
  if (a->kt_stored)
    fail =
        "k is laid out transposed ([..., D, Sk] in memory): the kernel reads k as rows of [Sk, "
        "D]";
  else if (a->dtype != KF_F16 && a->dtype != KF_BF16)
    fail = "q, k and v are not f16 or bf16 (the kernel's tensor-core products take those)";
  else if (a->x_dtype == KF_F64)
    fail = "the softmax is computed in f64 (the kernel's is f32)";
  else if (a->lse >= 0 && a->lse_dtype != KF_F32 && a->lse_dtype != KF_F16 &&
           a->lse_dtype != KF_BF16) {
    snprintf(b, sizeof b, "the logsumexp is written as %s (the kernel writes f32, f16 or bf16)",
             kf_dtype_name(a->lse_dtype));
    fail = b;
  }
  else if (a->d != a->dv) {
    snprintf(b, sizeof b, "head dims differ (q and k %lld, v %lld)", (long long)a->d,
             (long long)a->dv);
    fail = b;
  } else if (a->d != 64 && a->d != 128 && a->d != 256) {
    snprintf(b, sizeof b, "head dim %lld (the kernel takes 64, 128 and 256)", (long long)a->d);
    fail = b;
  }
  if (fail && why && whysize) snprintf(why, whysize, "%s", fail);
  return fail == NULL;
}
