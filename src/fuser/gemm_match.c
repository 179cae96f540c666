/* gemm_match.c - whether a matmul kernel's nodes are exactly a product and
 * an epilogue that one library call computes, and that call's description. */
#include "fuser/gemm_match.h"

#include <stdio.h>
#include <string.h>

#include "fuser/decide.h"
#include "ir/shape.h"

typedef struct gm {
  const kf_graph *g;
  const int32_t *nodes;
  int32_t n;
  uint8_t *taken; /* nodes[i] is accounted for */
  char *why;
  size_t whysize;
} gm;

static bool no(gm *s, const char *fmt, int32_t v) {
  if (s->why && s->whysize) snprintf(s->why, s->whysize, fmt, (int)v);
  return false;
}

static int32_t pos(const gm *s, int32_t v) {
  for (int32_t i = 0; i < s->n; i++)
    if (s->nodes[i] == v) return i;
  return -1;
}

static bool is_scalar_const(const kf_graph *g, int32_t v) {
  const ir_node *c = &g->nodes[v];
  int64_t e = 0;
  return c->op == IR_OP_CONST && ir_numel(c->rank, c->shape, &e) && e == 1;
}

/* Marks a constant operand of the set (constants may be members). */
static void take(gm *s, int32_t v) {
  int32_t i = pos(s, v);
  if (i >= 0) s->taken[i] = 1;
}

/* A value read from memory: not computed in the set. */
static bool from_memory(const gm *s, int32_t v) {
  return pos(s, v) < 0 && s->g->nodes[v].op != IR_OP_CONST;
}

/* An operand of the product: a value from memory, or a transpose of one
 * that swaps the last two axes only. Its batch axes (right-aligned with the
 * output's) are the output's, or all 1 (one matrix for every entry). */
static bool operand(gm *s, const ir_node *mm, int32_t v, int32_t *stored, bool *trans,
                    int64_t *stride) {
  const kf_graph *g = s->g;
  *trans = false;
  *stored = v;
  if (!from_memory(s, v)) {
    const ir_node *t = &g->nodes[v];
    if (t->op != IR_OP_TRANSPOSE || !from_memory(s, t->args[0]))
      return no(s, "operand %%%d of the product is computed in the kernel", v);
    for (int d = 0; d < t->rank - 2; d++)
      if (t->perm[d] != d) return no(s, "the transpose %%%d moves a batch axis", v);
    if (t->perm[t->rank - 2] != t->rank - 1 || t->perm[t->rank - 1] != t->rank - 2)
      return no(s, "the transpose %%%d does not swap the last two axes", v);
    take(s, v);
    *trans = true;
    *stored = t->args[0];
  }
  const ir_node *x = &g->nodes[v];
  int nb = mm->rank - 2, xb = x->rank - 2;
  bool all_one = true, same = true;
  for (int d = 0; d < nb; d++) {
    int xd = d - (nb - xb);
    int64_t e = xd >= 0 ? x->shape[xd] : 1;
    all_one = all_one && e == 1;
    same = same && e == mm->shape[d];
  }
  if (!all_one && !same) return no(s, "operand %%%d broadcasts some batch axes but not all", v);
  *stride = all_one ? 0 : x->shape[x->rank - 2] * x->shape[x->rank - 1];
  return true;
}

/* The one node of the set that reads cur, or -1 (none) / -2 (several). */
static int32_t next_user(const gm *s, int32_t cur) {
  int32_t found = -1;
  for (int32_t i = 0; i < s->n; i++) {
    const ir_node *nd = &s->g->nodes[s->nodes[i]];
    for (int a = 0; a < nd->nargs; a++)
      if (nd->args[a] == cur) {
        if (found >= 0 && found != s->nodes[i]) return -2;
        found = s->nodes[i];
      }
  }
  return found;
}

static bool same_shape(const ir_node *x, const ir_node *y) {
  return x->rank == y->rank &&
         memcmp(x->shape, y->shape, sizeof x->shape[0] * (size_t)x->rank) == 0;
}

/* The residual operand of an add: C from memory, or beta * C. */
static bool residual(gm *s, const ir_node *cur, int32_t x, fuse_gemm *o) {
  const kf_graph *g = s->g;
  const ir_node *xn = &g->nodes[x];
  float beta = 1.0f;
  if (!from_memory(s, x)) {
    if (xn->op != IR_OP_MUL) return no(s, "%%%d is not a residual from memory", x);
    int ci = is_scalar_const(g, xn->args[0]) ? 0 : is_scalar_const(g, xn->args[1]) ? 1 : -1;
    if (ci < 0 || !from_memory(s, xn->args[1 - ci]))
      return no(s, "%%%d is not beta times a residual from memory", x);
    beta = (float)g->nodes[xn->args[ci]].value;
    take(s, x);
    take(s, xn->args[ci]);
    x = xn->args[1 - ci];
    xn = &g->nodes[x];
  }
  if (!same_shape(xn, cur) || xn->dtype != cur->dtype)
    return no(s, "the residual %%%d is not laid out as the product", x);
  if (beta == 0.0f) return no(s, "the residual %%%d is scaled by 0", x);
  o->c = x;
  o->beta = beta;
  return true;
}

/* One epilogue step at node u, reading the chain's value cur. */
static bool step(gm *s, int32_t cur, int32_t u, fuse_gemm *o, bool *cast) {
  const kf_graph *g = s->g;
  const ir_node *un = &g->nodes[u], *cn = &g->nodes[cur];
  if (*cast) return no(s, "%%%d follows the cast to f32", u);
  /* The graph rounds a 16-bit product to its dtype before the epilogue
   * (and each step after it); cuBLASLt's epilogue works on the f32
   * accumulator and rounds once. On the H200 that differed by an ulp of
   * the result from the graph's value (test_gpu_matmul_lib), so the
   * epilogue of a 16-bit product runs in the next kernel, as written. */
  if (g->nodes[o->mm].dtype == KF_BF16 || g->nodes[o->mm].dtype == KF_F16)
    return no(s, "%%%d follows a 16-bit product, which the graph rounds first", u);
  if (un->op == IR_OP_CAST) {
    if (un->dtype != KF_F32 || (cn->dtype != KF_BF16 && cn->dtype != KF_F16))
      return no(s, "the cast %%%d is not to f32 from bf16 or f16", u);
    if (o->bias >= 0 || o->c >= 0)
      return no(s, "the cast %%%d follows a bias or residual of the 16-bit type", u);
    *cast = true;
    return true;
  }
  if (un->nargs > 1 && un->args[0] == un->args[1]) return no(s, "%%%d reads the product twice", u);
  int32_t other = un->nargs == 2 ? un->args[un->args[0] == cur ? 1 : 0] : -1;
  if (un->op == IR_OP_RELU || un->op == IR_OP_GELU_TANH) {
    if (o->act != FUSE_GEMM_ACT_NONE) return no(s, "a second activation %%%d", u);
    o->act = un->op == IR_OP_RELU ? FUSE_GEMM_ACT_RELU : FUSE_GEMM_ACT_GELU_TANH;
    return true;
  }
  if (o->act != FUSE_GEMM_ACT_NONE) return no(s, "%%%d follows the activation", u);
  if (un->op == IR_OP_MUL && is_scalar_const(g, other)) {
    if (cur != o->mm) return no(s, "the scale %%%d does not follow the product directly", u);
    o->alpha = (float)g->nodes[other].value;
    take(s, other);
    return true;
  }
  if (un->op != IR_OP_ADD) return no(s, "%%%d is not an epilogue cuBLASLt computes", u);
  const ir_node *on = &g->nodes[other];
  int64_t e = 0;
  if (from_memory(s, other) && on->dtype == cn->dtype && ir_numel(on->rank, on->shape, &e) &&
      e == o->n && on->shape[on->rank - 1] == o->n && o->bias < 0) {
    o->bias = other;
    return true;
  }
  if (o->c >= 0) return no(s, "a second residual %%%d", u);
  return residual(s, cn, other, o);
}

static bool walk(gm *s, const uint8_t *is_out, fuse_gemm *o) {
  int32_t cur = o->mm;
  bool cast = false;
  s->taken[pos(s, cur)] = 1;
  for (;;) {
    int32_t u = next_user(s, cur);
    if (u == -2) return no(s, "%%%d is read twice in the kernel", cur);
    if (u == -1) break;
    if (is_out[pos(s, cur)]) return no(s, "%%%d is written and read on in the epilogue", cur);
    if (!step(s, cur, u, o, &cast)) return false;
    s->taken[pos(s, u)] = 1;
    cur = u;
  }
  for (int32_t i = 0; i < s->n; i++)
    if (!s->taken[i] && s->g->nodes[s->nodes[i]].op != IR_OP_CONST)
      return no(s, "%%%d is not part of the product's epilogue", s->nodes[i]);
  if (!is_out[pos(s, cur)]) return no(s, "the epilogue's last value %%%d is not written", cur);
  for (int32_t i = 0; i < s->n; i++)
    if (is_out[i] && s->nodes[i] != cur) return no(s, "a second output %%%d", s->nodes[i]);
  o->out = cur;
  o->d_type = s->g->nodes[cur].dtype;
  if (o->alpha != 1.0f && (o->bias >= 0 || o->act != FUSE_GEMM_ACT_NONE) && o->d_type != KF_F32)
    return no(s, "alpha other than 1 with a 16-bit epilogue (%%%d): rounded twice", cur);
  return true;
}

bool fuse_gemm_match(const kf_graph *g, const int32_t *nodes, const uint8_t *is_out, int32_t n,
                     fuse_gemm *o, char *why, size_t whysize) {
  uint8_t taken[64];
  gm s = {g, nodes, n, taken, why, whysize};
  memset(o, 0, sizeof *o);
  o->mm = o->bias = o->c = -1;
  o->alpha = 1.0f;
  if (n > (int32_t)sizeof taken) return no(&s, "%d nodes: more than a library epilogue", n);
  memset(taken, 0, sizeof taken);
  for (int32_t i = 0; i < n; i++)
    if (g->nodes[nodes[i]].op == IR_OP_MATMUL) {
      if (o->mm >= 0) return no(&s, "a second product %%%d", nodes[i]);
      o->mm = nodes[i];
    }
  if (o->mm < 0) return no(&s, "no product in the kernel%.0d", 0);
  const ir_node *mm = &g->nodes[o->mm];
  o->ab_type = mm->dtype;
  o->m = mm->shape[mm->rank - 2];
  o->n = mm->shape[mm->rank - 1];
  o->k = g->nodes[mm->args[0]].shape[g->nodes[mm->args[0]].rank - 1];
  int64_t numel = 1;
  for (int d = 0; d < mm->rank - 2; d++) numel *= mm->shape[d];
  o->batch = numel;
  o->d_stride = o->batch > 1 ? o->m * o->n : 0;
  if (!operand(&s, mm, mm->args[0], &o->a, &o->a_trans, &o->a_stride) ||
      !operand(&s, mm, mm->args[1], &o->b, &o->b_trans, &o->b_stride))
    return false;
  if (o->batch == 1) o->a_stride = o->b_stride = 0;
  return walk(&s, is_out, o);
}

void fuse_gemm_note(struct fuse_plan *fp, bool library, const char *text) {
  int32_t n = 0;
  for (int32_t i = 0; i < fp->n_decisions; i++)
    if (strcmp(fp->decisions[i].rule, "matmul-choice") != 0) fp->decisions[n++] = fp->decisions[i];
  fp->n_decisions = n;
  fuse_decide(fp, library, "matmul-choice", "%s", text);
}
