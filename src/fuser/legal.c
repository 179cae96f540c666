/* legal.c - the one legality predicate of the fusion pass: may this set of
 * nodes be computed as one kernel? It decides the kernel's kind from the
 * nodes' structure (never from op names), gives every node a role in the
 * iteration space, and checks outputs and size limits. */
#include "fuser/legal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "fuser/few_rows.h"
#include "fuser/gemm_pair.h"
#include "fuser/node.h"
#include "fuser/recompute.h"
#include "fuser/split.h"
#include "fuser/text.h"
#include "ir/ops.h"
#include "ir/shape.h"

bool fuse_marks_init(fuse_marks *m, int32_t n) {
  size_t cnt = n > 0 ? (size_t)n : 1;
  m->stamp = core_calloc(cnt, sizeof *m->stamp);
  m->slot = core_calloc(cnt, sizeof *m->slot);
  m->epoch = 1;
  m->n = n;
  return m->stamp && m->slot;
}

void fuse_marks_free(fuse_marks *m) {
  free(m->stamp);
  free(m->slot);
  m->stamp = NULL;
  m->slot = NULL;
}

void fuse_marks_clear(fuse_marks *m) {
  if (++m->epoch == 0) { /* wrapped: start over */
    memset(m->stamp, 0, (size_t)(m->n > 0 ? m->n : 1) * sizeof *m->stamp);
    m->epoch = 1;
  }
}

bool fuse_legal_init(fuse_legal_ctx *lc, const kf_graph *g, const fuse_options *opt) {
  memset(lc, 0, sizeof *lc);
  lc->g = g;
  lc->opt = opt;
  size_t cnt = g->n_nodes > 0 ? (size_t)g->n_nodes : 1;
  lc->role = core_calloc(cnt, 1);
  lc->stack = core_malloc(cnt * sizeof *lc->stack);
  bool ok_m = fuse_marks_init(&lc->members, g->n_nodes);
  bool ok_i = fuse_marks_init(&lc->inputs, g->n_nodes);
  bool ok_s = fuse_marks_init(&lc->seen, g->n_nodes);
  bool ok = ok_m && ok_i && ok_s; /* each is tried (and freed below) */
  return ok && lc->role && lc->stack;
}

void fuse_legal_free(fuse_legal_ctx *lc) {
  fuse_marks_free(&lc->members);
  fuse_marks_free(&lc->inputs);
  fuse_marks_free(&lc->seen);
  free(lc->role);
  free(lc->stack);
  lc->role = NULL;
  lc->stack = NULL;
}

/* ---- shapes ------------------------------------------------------------- */

/* Leading 1s do not change how a value broadcasts: compare without them. */
static int strip(int rank, const int64_t *shape, const int64_t **out) {
  int i = 0;
  while (i < rank && shape[i] == 1) i++;
  *out = shape + i;
  return rank - i;
}

static bool same(int ra, const int64_t *a, int rb, const int64_t *b) {
  const int64_t *sa, *sb;
  ra = strip(ra, a, &sa);
  rb = strip(rb, b, &sb);
  if (ra != rb) return false;
  for (int i = 0; i < ra; i++)
    if (sa[i] != sb[i]) return false;
  return true;
}

static bool same_node(const ir_node *n, int r, const int64_t *s) {
  return same(n->rank, n->shape, r, s);
}

/* A reduction's input shape without leading 1s, and its reduced axes. */
static void red_normalize(const kf_graph *g, const ir_node *r, int *rank, int64_t *s,
                          uint8_t *mask) {
  const ir_node *in = &g->nodes[r->args[0]];
  int lead = 0;
  while (lead < in->rank && in->shape[lead] == 1) lead++;
  *rank = in->rank - lead;
  for (int i = 0; i < *rank; i++) s[i] = in->shape[lead + i];
  *mask = (uint8_t)(r->axes >> lead);
}

/* Row kind: the reduced axes are a non-empty proper suffix of the axes. */
static bool is_row_mask(int rank, uint8_t mask) {
  if (rank < 2 || mask == 0) return false;
  unsigned full = (1u << rank) - 1u;
  int p = __builtin_ctz(mask);
  return p >= 1 && mask == (full & ~((1u << p) - 1u));
}

/* ---- refusals ----------------------------------------------------------- */

static bool refuse(fuse_shape_info *info, const char *rule, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static bool refuse(fuse_shape_info *info, const char *rule, const char *fmt, ...) {
  snprintf(info->rule, sizeof info->rule, "%s", rule);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(info->why, sizeof info->why, fmt, ap);
  va_end(ap);
  return false;
}

static const char *lbl(const kf_graph *g, int32_t v, char *buf, size_t size) {
  return fuse_value_label(g, v, buf, size);
}

/* ---- roles -------------------------------------------------------------- */

typedef struct red_ctx {
  fuse_legal_ctx *lc;
  fuse_shape_info *info;
  int rk, rf;
  int64_t k[KF_MAX_RANK], f[KF_MAX_RANK];
} red_ctx;

static bool member(fuse_legal_ctx *lc, int32_t v) {
  return fuse_marked(&lc->members, v);
}

/* True if some operand inside the set already depends on a reduction. */
static bool depends(fuse_legal_ctx *lc, const ir_node *nd) {
  for (int a = 0; a < nd->nargs; a++)
    if (member(lc, nd->args[a]) && lc->role[nd->args[a]] != FUSE_ROLE_FREE) return true;
  return false;
}

/* The role of a node that consumes reduced values (or values computed
 * from them) in a ROW or REDUCE group, or a refusal. */
static bool dep_role(red_ctx *rc, int32_t v, uint8_t *out) {
  fuse_legal_ctx *lc = rc->lc;
  fuse_shape_info *info = rc->info;
  const kf_graph *g = lc->g;
  const ir_node *nd = &g->nodes[v];
  char b1[64], b2[64];
  bool full = same_node(nd, info->s_rank, info->s);
  bool red = !full && (same_node(nd, rc->rk, rc->k) || same_node(nd, rc->rf, rc->f));
  if (nd->op == IR_OP_TRANSPOSE)
    return refuse(info, "layout", "%s transposes a value computed from a reduction",
                  lbl(g, v, b1, sizeof b1));
  if (nd->op == IR_OP_SLICE || nd->op == IR_OP_CONCAT || nd->op == IR_OP_GATHER)
    return refuse(info, "layout", "%s moves elements of a value computed from a reduction",
                  lbl(g, v, b1, sizeof b1));
  if (!full && !red)
    return refuse(info, "row-shape",
                  "%s has shape %s: neither the reduced input %s nor its reduced form",
                  lbl(g, v, b1, sizeof b1), ir_shape_str(b2, sizeof b2, nd->rank, nd->shape),
                  ir_shape_str((char[200]){0}, 200, info->s_rank, info->s));
  if (full && info->kind == FK_REDUCE)
    return refuse(info, "reduce-epilogue",
                  "%s needs a reduction over other axes before its elementwise work: "
                  "not in the same pass",
                  lbl(g, v, b1, sizeof b1));
  for (int a = 0; a < nd->nargs; a++) {
    int32_t u = nd->args[a];
    if (!member(lc, u) || lc->role[u] == FUSE_ROLE_FREE) continue;
    const ir_node *un = &g->nodes[u];
    bool ok;
    if (lc->role[u] == FUSE_ROLE_FULL)
      ok = full && same_node(un, info->s_rank, info->s);
    else if (nd->op == IR_OP_RESHAPE || ir_is_copy_reduce(g, nd) ||
             (red && nd->op == IR_OP_BROADCAST_TO))
      ok = red && fuse_numel(un) == fuse_numel(nd);
    else if (full)
      ok = same_node(un, rc->rk, rc->k); /* broadcast along the reduced axes */
    else
      ok = same(un->rank, un->shape, nd->rank, nd->shape);
    if (!ok)
      return refuse(info, "row-shape", "%s reads %s (%s) in a way that mixes rows",
                    lbl(g, v, b1, sizeof b1), lbl(g, u, b2, sizeof b2),
                    lc->role[u] == FUSE_ROLE_FULL ? "per element" : "per row");
  }
  *out = full ? FUSE_ROLE_FULL : FUSE_ROLE_REDUCED;
  return true;
}

/* A row kernel recomputes, in each pass over the row, what that pass needs
 * (recompute.c): its work and code grow with passes x nodes. Refused when
 * that exceeds max_recompute evaluations per member on average. */
static bool legal_recompute(fuse_legal_ctx *lc, const fuse_set *set, fuse_shape_info *info) {
  int64_t budget = (int64_t)lc->opt->max_recompute * set->n;
  int64_t evals = fuse_row_evals(lc, set, budget);
  if (evals <= budget) return true;
  return refuse(info, "recompute-limit",
                "its passes would compute more than %lld values per element for %d nodes "
                "(max_recompute %d per node)",
                (long long)budget, (int)set->n, lc->opt->max_recompute);
}

static bool legal_reduction(fuse_legal_ctx *lc, const fuse_set *set, fuse_shape_info *info,
                            uint8_t *roles) {
  const kf_graph *g = lc->g;
  char b1[64], b2[64];
  red_ctx rc = {.lc = lc, .info = info};
  red_normalize(g, &g->nodes[info->anchor], &info->s_rank, info->s, &info->mask);
  info->kind = is_row_mask(info->s_rank, info->mask) ? FK_ROW : FK_REDUCE;
  for (int i = 0; i < info->s_rank; i++) {
    bool r = info->mask & (1u << i);
    rc.k[rc.rk++] = r ? 1 : info->s[i];
    if (!r) rc.f[rc.rf++] = info->s[i];
  }
  for (int32_t i = 0; i < set->n; i++) {
    int32_t v = set->nodes[i];
    const ir_node *nd = &g->nodes[v];
    uint8_t role = FUSE_ROLE_FREE;
    if (set->copy && set->copy[i]) {
      role = FUSE_ROLE_FREE;
    } else if (ir_is_reduction(g, nd)) {
      int r;
      int64_t s[KF_MAX_RANK];
      uint8_t mask;
      red_normalize(g, nd, &r, s, &mask);
      if (mask != info->mask || !same(r, s, info->s_rank, info->s))
        return refuse(info, "reduce-mismatch", "%s and %s reduce different spaces",
                      lbl(g, info->anchor, b1, sizeof b1), lbl(g, v, b2, sizeof b2));
      int32_t u = nd->args[0];
      if (member(lc, u) && lc->role[u] == FUSE_ROLE_REDUCED)
        return refuse(info, "reduce-of-reduced", "%s reduces the reduced value %s",
                      lbl(g, v, b1, sizeof b1), lbl(g, u, b2, sizeof b2));
      role = FUSE_ROLE_REDUCED;
    } else if (depends(lc, nd)) {
      if (!dep_role(&rc, v, &role)) return false;
    }
    lc->role[v] = role;
    if (roles) roles[i] = role;
    if (set->is_out[i] && role == FUSE_ROLE_FREE && !same_node(nd, info->s_rank, info->s) &&
        !same_node(nd, rc.rk, rc.k) && !same_node(nd, rc.rf, rc.f))
      return refuse(info, "output-shape", "output %s %s is neither per element nor per row",
                    lbl(g, v, b1, sizeof b1), ir_shape_str(b2, sizeof b2, nd->rank, nd->shape));
  }
  if (info->kind == FK_ROW && fuse_few_long_rows(lc->opt, info->s_rank, info->s, info->mask)) {
    bool full = false;
    for (int32_t i = 0; i < set->n && !full; i++) full = lc->role[set->nodes[i]] == FUSE_ROLE_FULL;
    if (!full) info->kind = FK_REDUCE; /* few long rows: split each over blocks */
  }
  return info->kind != FK_ROW || legal_recompute(lc, set, info);
}

/* The set rules of a paired product (info->pair, its operands checked by
 * fuse_pair_fits): neither product is written, and some node of the set
 * reads both (lc->stack: bit 0 or 1 for a member that depends on the first
 * or the second product). */
static bool legal_pair_set(fuse_legal_ctx *lc, const fuse_set *set, fuse_shape_info *info) {
  const kf_graph *g = lc->g;
  char b1[64], b2[64];
  bool both = false;
  for (int32_t i = 0; i < set->n; i++) {
    int32_t v = set->nodes[i];
    const ir_node *nd = &g->nodes[v];
    int32_t bits = v == info->pair[0] ? 1 : v == info->pair[1] ? 2 : 0;
    for (int a = 0; a < nd->nargs; a++)
      if (member(lc, nd->args[a])) bits |= lc->stack[nd->args[a]];
    lc->stack[v] = bits;
    both |= bits == 3;
    if ((v == info->pair[0] || v == info->pair[1]) && set->is_out[i])
      return refuse(info, "gemm-pair",
                    "%s and %s: %s is written (a graph output, or read outside the epilogue)",
                    lbl(g, info->pair[0], b1, sizeof b1), lbl(g, info->pair[1], b2, sizeof b2),
                    lbl(g, v, b1, sizeof b1));
  }
  if (!both)
    return refuse(info, "gemm-pair", "%s and %s: no epilogue node reads both",
                  lbl(g, info->pair[0], b1, sizeof b1), lbl(g, info->pair[1], b2, sizeof b2));
  return true;
}

static bool legal_matmul(fuse_legal_ctx *lc, const fuse_set *set, fuse_shape_info *info,
                         uint8_t *roles) {
  const kf_graph *g = lc->g;
  char b1[64], b2[64];
  info->kind = FK_MATMUL;
  bool lib = lc->opt->matmul_library;
  for (int p = 0; p < 2; p++) {
    int32_t at = p == 0 ? info->anchor : info->pair[1];
    if (at < 0) continue;
    const ir_node *mm = &g->nodes[at];
    for (int a = 0; a < mm->nargs; a++)
      if (member(lc, mm->args[a]) && !(lib && g->nodes[mm->args[a]].op == IR_OP_TRANSPOSE))
        return refuse(info, "matmul-prologue", "the operand %s of matmul %s would be fused into it",
                      lbl(g, mm->args[a], b1, sizeof b1), lbl(g, at, b2, sizeof b2));
  }
  if (info->pair[0] >= 0 && !legal_pair_set(lc, set, info)) return false;
  const ir_node *mm = &g->nodes[info->anchor];
  for (int32_t i = 0; i < set->n; i++) {
    int32_t v = set->nodes[i];
    const ir_node *nd = &g->nodes[v];
    uint8_t role = FUSE_ROLE_FREE;
    if (v == info->anchor || v == info->pair[1]) {
      role = FUSE_ROLE_FULL;
    } else {
      info->n_epilogue++;
      if (!(set->copy && set->copy[i]) && depends(lc, nd)) {
        if (ir_ops[nd->op].kind == KIND_LAYOUT || !same_node(nd, mm->rank, mm->shape))
          return refuse(info, "matmul-epilogue", "%s is not elementwise on the product %s",
                        lbl(g, v, b1, sizeof b1), lbl(g, info->anchor, b2, sizeof b2));
        for (int a = 0; a < nd->nargs; a++) {
          const ir_node *un = &g->nodes[nd->args[a]];
          if (member(lc, nd->args[a]) && lc->role[nd->args[a]] != FUSE_ROLE_FREE &&
              !same_node(un, mm->rank, mm->shape))
            return refuse(info, "matmul-epilogue", "%s broadcasts a product value",
                          lbl(g, v, b1, sizeof b1));
        }
        role = FUSE_ROLE_FULL;
      }
    }
    lc->role[v] = role;
    if (roles) roles[i] = role;
    if (set->is_out[i] && role == FUSE_ROLE_FREE)
      return refuse(info, "output-shape", "output %s of a matmul kernel does not use the product",
                    lbl(g, v, b1, sizeof b1));
  }
  /* A library call computes only its own epilogue (which bounds it); the
   * rest is the next kernel's (docs/fusion.md). A product the library
   * cannot take at all (its batch axes) is a template kernel of its own. */
  char why[160];
  fuse_gemm gm;
  if (lib && set->n > 1 &&
      !fuse_gemm_match(g, set->nodes, set->is_out, set->n, &gm, why, sizeof why))
    return refuse(info, "library-epilogue", "%s", why);
  if (!lib && info->n_epilogue > lc->opt->max_epilogue)
    return refuse(info, "epilogue-limit", "%d epilogue nodes > max_epilogue %d", info->n_epilogue,
                  lc->opt->max_epilogue);
  return true;
}

static bool legal_pointwise(fuse_legal_ctx *lc, const fuse_set *set, fuse_shape_info *info,
                            uint8_t *roles) {
  const kf_graph *g = lc->g;
  char b1[64], b2[64];
  int32_t first = -1;
  for (int32_t i = 0; i < set->n; i++) {
    int32_t v = set->nodes[i];
    lc->role[v] = FUSE_ROLE_FREE;
    if (roles) roles[i] = FUSE_ROLE_FREE;
    if (!set->is_out[i]) continue;
    if (first < 0) {
      first = v;
    } else if (fuse_numel(&g->nodes[v]) != fuse_numel(&g->nodes[first])) {
      return refuse(info, "output-numel", "outputs %s (%lld elements) and %s (%lld) differ",
                    lbl(g, first, b1, sizeof b1), (long long)fuse_numel(&g->nodes[first]),
                    lbl(g, v, b2, sizeof b2), (long long)fuse_numel(&g->nodes[v]));
    }
  }
  info->kind = FK_POINTWISE;
  return true;
}

/* Two products are one kernel only as attention (attention.h) that the
 * flash kernel takes, whole, writing only its output (and its
 * logsumexp, when the match has one); on refusal the
 * caller gives the usual one-matmul reason (the vertical pass logs why a
 * pattern did not fuse, rule "attention"). */
static bool legal_attention(fuse_legal_ctx *lc, const fuse_set *set, fuse_shape_info *info,
                            uint8_t *roles) {
  fuse_attn a;
  if (!fuse_attn_match(lc->g, set->nodes, set->n, &a, NULL, 0) || !fuse_attn_fits(&a, NULL, 0))
    return false;
  for (int32_t i = 0; i < set->n; i++)
    if ((set->copy && set->copy[i]) ||
        set->is_out[i] != (set->nodes[i] == a.out || set->nodes[i] == a.lse))
      return false;
  info->kind = FK_ATTENTION;
  info->anchor = a.out;
  if (roles) memset(roles, FUSE_ROLE_FULL, (size_t)set->n);
  return true;
}

/* Two products that are not attention: a paired product when their
 * operands fit (fuse_pair_fits) and neither reads the other; else the
 * usual one-matmul refusal, with the pair's reason where they are two
 * products of one A. */
static bool legal_two(fuse_legal_ctx *lc, const fuse_set *set, fuse_shape_info *info,
                      uint8_t *roles) {
  const kf_graph *g = lc->g;
  int32_t mm[2], n = 0;
  for (int32_t i = 0; i < set->n && n < 2; i++)
    if (g->nodes[set->nodes[i]].op == IR_OP_MATMUL) mm[n++] = set->nodes[i];
  const ir_node *q = &g->nodes[mm[1]];
  /* library calls take one product each: nothing to say about pairs */
  if (n != 2 || member(lc, q->args[0]) || member(lc, q->args[1]) || lc->opt->matmul_library)
    return refuse(info, "one-matmul", "2 matmuls in one kernel");
  char why[192];
  if (!fuse_pair_fits(g, lc->opt, mm[0], mm[1], why, sizeof why))
    return refuse(info, "gemm-pair", "2 matmuls in one kernel: %s", why);
  info->anchor = mm[0];
  info->pair[0] = mm[0];
  info->pair[1] = mm[1];
  return legal_matmul(lc, set, info, roles);
}

bool fuse_legal(fuse_legal_ctx *lc, const fuse_set *set, fuse_shape_info *info, uint8_t *roles) {
  const kf_graph *g = lc->g;
  memset(info, 0, sizeof *info);
  info->anchor = -1;
  info->pair[0] = info->pair[1] = -1;
  const fuse_options *o = lc->opt;
  int most = o->max_nodes > o->max_pw_nodes ? o->max_nodes : o->max_pw_nodes;
  if (set->n > most) return refuse(info, "size-limit", "%d nodes > %d", set->n, most);
  fuse_marks_clear(&lc->members);
  fuse_marks_clear(&lc->inputs);
  for (int32_t i = 0; i < set->n; i++) fuse_mark(&lc->members, set->nodes[i], i);
  if (lc->opt->n_splits > 0 && fuse_split_refuses(lc, set, info)) return false;
  int n_red = 0, n_mm = 0;
  for (int32_t i = 0; i < set->n; i++) {
    const ir_node *nd = &g->nodes[set->nodes[i]];
    /* a reduction of extent 1 is a reshape (ir_is_copy_reduce): elementwise */
    ir_kind k = ir_is_copy_reduce(g, nd) ? KIND_LAYOUT : ir_ops[nd->op].kind;
    if (k == KIND_REDUCE || k == KIND_MATMUL) {
      if (k == KIND_REDUCE)
        n_red++;
      else
        n_mm++;
      if (info->anchor < 0 || k == KIND_MATMUL) info->anchor = set->nodes[i];
    }
    for (int a = 0; a < nd->nargs; a++) {
      int32_t u = nd->args[a];
      if (member(lc, u) || g->nodes[u].op == IR_OP_CONST || fuse_marked(&lc->inputs, u)) continue;
      fuse_mark(&lc->inputs, u, 0);
      info->n_inputs++;
    }
  }
  if (info->n_inputs > lc->opt->max_inputs)
    return refuse(info, "input-limit", "%d inputs > max_inputs %d", info->n_inputs,
                  lc->opt->max_inputs);
  if (set->n > o->max_nodes && (n_mm || n_red))
    return refuse(info, "size-limit", "%d nodes > max_nodes %d", set->n, o->max_nodes);
  if (set->n > o->max_pw_nodes && !n_mm && !n_red)
    return refuse(info, "size-limit", "%d nodes > max_pw_nodes %d", set->n, o->max_pw_nodes);
  if (n_mm == 2 && legal_attention(lc, set, info, roles)) return true;
  if (n_mm == 2 && !n_red) return legal_two(lc, set, info, roles);
  if (n_mm > 1) return refuse(info, "one-matmul", "%d matmuls in one kernel", n_mm);
  if (n_mm && n_red) return refuse(info, "matmul-reduce", "a matmul and a reduction in one kernel");
  if (n_mm) return legal_matmul(lc, set, info, roles);
  if (n_red) return legal_reduction(lc, set, info, roles);
  return legal_pointwise(lc, set, info, roles);
}

/* ---- re-checking a built kernel ----------------------------------------- */

static bool needs_write(const fuse_plan *plan, const fuse_kernel *k, int32_t v) {
  const kf_graph *g = plan->graph;
  if (g->nodes[v].is_output) return true;
  for (int32_t j = 0; j < plan->n_kernels; j++) {
    const fuse_kernel *o = &plan->kernels[j];
    if (o == k) continue;
    for (int32_t i = 0; i < o->n_inputs; i++)
      if (o->inputs[i] == v) return true;
  }
  return false;
}

bool fuse_kernel_legal(const fuse_plan *plan, int kernel, char *why, size_t whysize) {
  if (!plan || kernel < 0 || kernel >= plan->n_kernels) {
    snprintf(why, whysize, "no such kernel");
    return false;
  }
  const fuse_kernel *k = &plan->kernels[kernel];
  uint8_t *is_out = core_calloc((size_t)k->n_nodes + 1, 1);
  if (!is_out) {
    snprintf(why, whysize, "out of memory");
    return false;
  }
  fuse_legal_ctx lc;
  bool ok = fuse_legal_init(&lc, plan->graph, &plan->options);
  if (!ok) {
    fuse_legal_free(&lc);
    free(is_out);
    snprintf(why, whysize, "out of memory");
    return false;
  }
  for (int32_t i = 0; i < k->n_nodes && ok; i++) {
    int32_t v = k->nodes[i];
    bool listed = false;
    for (int32_t j = 0; j < k->n_outputs; j++) listed |= k->outputs[j] == v;
    bool home = !k->recomputed[i];
    is_out[i] = listed;
    if (listed != (home && needs_write(plan, k, v))) {
      char b[64];
      snprintf(why, whysize, "%s: %s is %s an output but %s", k->name,
               fuse_value_label(plan->graph, v, b, sizeof b), listed ? "" : "not",
               listed ? "nothing reads it" : "it is read elsewhere");
      ok = false;
    }
  }
  fuse_set set = {k->nodes, k->recomputed, is_out, k->n_nodes};
  fuse_shape_info info;
  if (ok && !fuse_legal(&lc, &set, &info, NULL)) {
    snprintf(why, whysize, "%s: %s: %s", k->name, info.rule, info.why);
    ok = false;
  } else if (ok && info.kind != k->kind) {
    snprintf(why, whysize, "%s: kind %s, the predicate says %s", k->name, fuse_kind_name(k->kind),
             fuse_kind_name(info.kind));
    ok = false;
  }
  fuse_legal_free(&lc);
  free(is_out);
  return ok;
}
