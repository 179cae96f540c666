/* vertical.c - vertical fusion. Nodes are visited from the last to the
 * first, so when a producer is placed all its consumers already are: it
 * joins all their kernels at once when the legality predicate allows it;
 * otherwise it joins one and is written to memory for the others, or is
 * recomputed by them when that moves fewer bytes, or stays alone. */
#include "fuser/vertical.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "fuser/attention_decode.h"
#include "fuser/decide.h"
#include "fuser/legal.h"
#include "fuser/node.h"
#include "fuser/text.h"

typedef struct vgroup {
  int32_t *nodes; /* descending node index: a newly placed node is the least */
  uint8_t *copy;
  int32_t n, cap;
} vgroup;

typedef struct vstate {
  fuse_plan *plan;
  const kf_graph *g;
  const fuse_options *opt;
  int32_t *use_start, *use_list; /* distinct consumers of each node */
  int32_t *group_of;             /* node -> its home group, -1 */
  int32_t *parent;               /* union-find over group ids */
  int32_t **copies;              /* node -> groups holding a copy (-1 ended) */
  vgroup *groups;
  int32_t n_groups;
  bool *live;
  fuse_legal_ctx lc;
  fuse_marks gset;  /* group-indexed: the groups of a candidate */
  fuse_marks gseen; /* group-indexed: DFS visited */
  fuse_marks nseen; /* node-indexed: dedupe while merging */
  int32_t *cand;    /* candidate nodes, ascending */
  uint8_t *cand_copy, *cand_out;
  int32_t *stack, *from;
  /* attention whose logsumexp ends past its second product is seeded at
   * the match's last node, before the walk reaches (and places) any of
   * its nodes: attn_at[last] is the product, attn_at[product] -2 */
  int32_t *attn_at;
  bool oom;
} vstate;

static int32_t find(vstate *s, int32_t g) {
  while (s->parent[g] != g) {
    s->parent[g] = s->parent[s->parent[g]];
    g = s->parent[g];
  }
  return g;
}

static bool is_source(const ir_node *n) {
  return n->op == IR_OP_INPUT || n->op == IR_OP_CONST;
}

static const char *lbl(vstate *s, int32_t v, char *buf, size_t n) {
  return fuse_value_label(s->g, v, buf, n);
}

/* A group's name in the log: its last node. */
static const char *glbl(vstate *s, int32_t gid, char *buf, size_t n) {
  return lbl(s, s->groups[gid].nodes[0], buf, n);
}

/* ---- setup -------------------------------------------------------------- */

static bool build_uses(vstate *s) {
  const kf_graph *g = s->g;
  int32_t n = g->n_nodes;
  s->use_start = core_calloc((size_t)n + 1, sizeof *s->use_start);
  if (!s->use_start) return false;
  for (int32_t v = 0; v < n; v++)
    for (int a = 0; a < g->nodes[v].nargs; a++) {
      int32_t u = g->nodes[v].args[a];
      bool dup = false;
      for (int b = 0; b < a; b++) dup |= g->nodes[v].args[b] == u;
      if (!dup) s->use_start[u + 1]++;
    }
  for (int32_t v = 0; v < n; v++) s->use_start[v + 1] += s->use_start[v];
  s->use_list = core_malloc((size_t)(s->use_start[n] > 0 ? s->use_start[n] : 1) * sizeof(int32_t));
  int32_t *fill = core_malloc((size_t)(n > 0 ? n : 1) * sizeof *fill);
  if (!s->use_list || !fill) {
    free(fill);
    return false;
  }
  memcpy(fill, s->use_start, (size_t)n * sizeof *fill);
  for (int32_t v = 0; v < n; v++)
    for (int a = 0; a < g->nodes[v].nargs; a++) {
      int32_t u = g->nodes[v].args[a];
      bool dup = false;
      for (int b = 0; b < a; b++) dup |= g->nodes[v].args[b] == u;
      if (!dup) s->use_list[fill[u]++] = v;
    }
  free(fill);
  return true;
}

static bool vstate_init(vstate *s, fuse_plan *plan) {
  memset(s, 0, sizeof *s);
  s->plan = plan;
  s->g = plan->graph;
  s->opt = &plan->options;
  size_t n = (size_t)(s->g->n_nodes > 0 ? s->g->n_nodes : 1);
  s->group_of = core_malloc(n * sizeof *s->group_of);
  s->parent = core_malloc(n * sizeof *s->parent);
  s->copies = core_calloc(n, sizeof *s->copies);
  s->groups = core_calloc(n, sizeof *s->groups);
  s->live = core_calloc(n, sizeof *s->live);
  s->cand = core_malloc(n * sizeof *s->cand);
  s->cand_copy = core_malloc(n);
  s->cand_out = core_malloc(n);
  s->stack = core_malloc(n * sizeof *s->stack);
  s->from = core_malloc(n * sizeof *s->from);
  bool ok = s->group_of && s->parent && s->copies && s->groups && s->live && s->cand &&
            s->cand_copy && s->cand_out && s->stack && s->from && build_uses(s);
  ok &= fuse_legal_init(&s->lc, s->g, s->opt);
  ok &= fuse_marks_init(&s->gset, (int32_t)n);
  ok &= fuse_marks_init(&s->gseen, (int32_t)n);
  ok &= fuse_marks_init(&s->nseen, (int32_t)n);
  if (ok)
    for (size_t i = 0; i < n; i++) s->group_of[i] = -1;
  return ok;
}

static void vstate_free(vstate *s) {
  for (int32_t i = 0; i < s->n_groups; i++) {
    free(s->groups[i].nodes);
    free(s->groups[i].copy);
  }
  if (s->copies)
    for (int32_t i = 0; i < s->g->n_nodes; i++) free(s->copies[i]);
  free(s->copies);
  free(s->groups);
  free(s->group_of);
  free(s->parent);
  free(s->live);
  free(s->cand);
  free(s->cand_copy);
  free(s->cand_out);
  free(s->stack);
  free(s->from);
  free(s->attn_at);
  free(s->use_start);
  free(s->use_list);
  fuse_legal_free(&s->lc);
  fuse_marks_free(&s->gset);
  fuse_marks_free(&s->gseen);
  fuse_marks_free(&s->nseen);
}

/* ---- groups ------------------------------------------------------------- */

static bool group_push(vstate *s, vgroup *gr, int32_t v, bool copy) {
  if (gr->n == gr->cap) {
    int32_t cap = gr->cap ? gr->cap * 2 : 4;
    int32_t *nodes = core_realloc(gr->nodes, (size_t)cap * sizeof *nodes);
    if (nodes) gr->nodes = nodes;
    uint8_t *cp = core_realloc(gr->copy, (size_t)cap);
    if (cp) gr->copy = cp;
    if (!nodes || !cp) {
      s->oom = true;
      return false;
    }
    gr->cap = cap;
  }
  gr->nodes[gr->n] = v;
  gr->copy[gr->n++] = copy;
  return true;
}

static int32_t new_group(vstate *s, int32_t v) {
  int32_t id = s->n_groups++;
  s->parent[id] = id;
  group_push(s, &s->groups[id], v, false);
  s->group_of[v] = id;
  return id;
}

/* Whether group gid (a root) holds a recomputed copy of v. */
static bool holds_copy(vstate *s, int32_t gid, int32_t v) {
  if (!s->copies[v]) return false;
  for (int32_t *c = s->copies[v]; *c >= 0; c++)
    if (find(s, *c) == gid) return true;
  return false;
}

static void add_copy_record(vstate *s, int32_t v, int32_t gid) {
  int32_t n = 0;
  if (s->copies[v])
    while (s->copies[v][n] >= 0) n++;
  int32_t *c = core_realloc(s->copies[v], (size_t)(n + 2) * sizeof *c);
  if (!c) {
    s->oom = true;
    return;
  }
  c[n] = gid;
  c[n + 1] = -1;
  s->copies[v] = c;
}

/* Must v, a home member of the groups marked in gset, be written to memory? */
static bool needs_output(vstate *s, int32_t v) {
  if (s->g->nodes[v].is_output) return true;
  for (int32_t i = s->use_start[v]; i < s->use_start[v + 1]; i++) {
    int32_t c = s->use_list[i];
    if (s->group_of[c] < 0) continue; /* dead */
    int32_t h = find(s, s->group_of[c]);
    if (!fuse_marked(&s->gset, h) && !holds_copy(s, h, v)) return true;
  }
  return false;
}

/* Fills cand with the members of groups gids[0..ng) (copies of home members
 * dropped) plus p, ascending; returns the count. */
static int32_t gather(vstate *s, int32_t p, const int32_t *gids, int ng, bool copy) {
  fuse_marks_clear(&s->nseen);
  int32_t n = 0;
  for (int i = 0; i < ng; i++) {
    vgroup *gr = &s->groups[gids[i]];
    for (int32_t j = 0; j < gr->n; j++)
      if (!gr->copy[j]) fuse_mark(&s->nseen, gr->nodes[j], 1);
  }
  for (int i = 0; i < ng; i++) {
    vgroup *gr = &s->groups[gids[i]];
    for (int32_t j = 0; j < gr->n; j++) {
      int32_t v = gr->nodes[j];
      if (gr->copy[j] && fuse_marked(&s->nseen, v)) continue;
      if (gr->copy[j]) fuse_mark(&s->nseen, v, 1);
      s->cand[n] = v;
      s->cand_copy[n++] = gr->copy[j];
    }
  }
  if (ng > 1) /* shell sort, descending, keeping the copy flags along */
    for (int32_t gap = n / 2; gap > 0; gap /= 2)
      for (int32_t i = gap; i < n; i++) {
        int32_t v = s->cand[i];
        uint8_t c = s->cand_copy[i];
        int32_t j = i;
        for (; j >= gap && s->cand[j - gap] < v; j -= gap) {
          s->cand[j] = s->cand[j - gap];
          s->cand_copy[j] = s->cand_copy[j - gap];
        }
        s->cand[j] = v;
        s->cand_copy[j] = c;
      }
  if (p >= 0) {
    s->cand[n] = p;
    s->cand_copy[n++] = copy;
  }
  for (int32_t i = 0, j = n - 1; i < j; i++, j--) {
    int32_t t = s->cand[i];
    s->cand[i] = s->cand[j];
    s->cand[j] = t;
    uint8_t c = s->cand_copy[i];
    s->cand_copy[i] = s->cand_copy[j];
    s->cand_copy[j] = c;
  }
  return n;
}

/* Runs the predicate on "groups gids[0..ng) plus p". p_out: p must be
 * written to memory. */
static bool evaluate(vstate *s, int32_t p, const int32_t *gids, int ng, bool copy, bool p_out,
                     fuse_shape_info *info) {
  int32_t n = gather(s, p, gids, ng, copy);
  fuse_marks_clear(&s->gset);
  for (int i = 0; i < ng; i++) fuse_mark(&s->gset, gids[i], 0);
  for (int32_t i = 0; i < n; i++) {
    int32_t v = s->cand[i];
    s->cand_out[i] = !s->cand_copy[i] && (v == p ? p_out : needs_output(s, v));
  }
  fuse_set set = {s->cand, s->cand_copy, s->cand_out, n};
  return fuse_legal(&s->lc, &set, info, NULL);
}

/* Is some group marked in gset reachable from group `from` through groups
 * outside gset? (Groups whose nodes all come after the target's last node
 * cannot reach it.) */
static bool reaches(vstate *s, const int32_t *from, int nfrom, int32_t limit) {
  fuse_marks_clear(&s->gseen);
  int32_t sp = 0;
  for (int i = 0; i < nfrom; i++) {
    fuse_mark(&s->gseen, from[i], 0);
    s->stack[sp++] = from[i];
  }
  while (sp > 0) {
    vgroup *gr = &s->groups[s->stack[--sp]];
    for (int32_t j = 0; j < gr->n; j++) {
      int32_t v = gr->nodes[j];
      if (gr->copy[j] || v > limit) continue;
      for (int32_t u = s->use_start[v]; u < s->use_start[v + 1]; u++) {
        int32_t c = s->use_list[u];
        if (s->group_of[c] < 0) continue;
        int32_t h = find(s, s->group_of[c]);
        if (fuse_marked(&s->gset, h)) return true;
        if (fuse_marked(&s->gseen, h)) continue;
        fuse_mark(&s->gseen, h, 0);
        s->stack[sp++] = h;
      }
    }
  }
  return false;
}

/* Merging the groups `gids` (plus p) must not create a path that leaves the
 * merged group and comes back. */
static bool merge_makes_cycle(vstate *s, const int32_t *gids, int ng) {
  if (ng < 2) return false;
  fuse_marks_clear(&s->gset);
  int32_t limit = -1;
  for (int i = 0; i < ng; i++) {
    fuse_mark(&s->gset, gids[i], 0);
    if (s->groups[gids[i]].nodes[0] > limit) limit = s->groups[gids[i]].nodes[0];
  }
  /* Start from the groups that read the candidate's values. */
  int32_t nfrom = 0;
  fuse_marks_clear(&s->gseen);
  for (int i = 0; i < ng; i++) {
    vgroup *gr = &s->groups[gids[i]];
    for (int32_t j = 0; j < gr->n; j++) {
      int32_t v = gr->nodes[j];
      if (gr->copy[j]) continue;
      for (int32_t u = s->use_start[v]; u < s->use_start[v + 1]; u++) {
        int32_t c = s->use_list[u];
        if (s->group_of[c] < 0) continue;
        int32_t h = find(s, s->group_of[c]);
        if (fuse_marked(&s->gset, h) || fuse_marked(&s->gseen, h)) continue;
        fuse_mark(&s->gseen, h, 0);
        s->from[nfrom++] = h;
      }
    }
  }
  return nfrom > 0 && reaches(s, s->from, nfrom, limit);
}

/* Would p joining `home` while the groups `readers` read it from memory
 * make a cycle (a reader that reaches home)? */
static bool home_makes_cycle(vstate *s, int32_t home, const int32_t *readers, int nr) {
  if (nr == 0) return false;
  fuse_marks_clear(&s->gset);
  fuse_mark(&s->gset, home, 0);
  return reaches(s, readers, nr, s->groups[home].nodes[0]);
}

/* Merges the groups into one and adds p (home or copy). */
static int32_t commit(vstate *s, int32_t p, const int32_t *gids, int ng, bool copy) {
  int32_t keep = gids[0];
  if (ng > 1) {
    int32_t n = gather(s, p, gids, ng, copy); /* ascending, p (if any) first */
    vgroup merged = {0};
    merged.nodes = core_malloc((size_t)n * sizeof *merged.nodes);
    merged.copy = core_malloc((size_t)n);
    if (!merged.nodes || !merged.copy) {
      free(merged.nodes);
      free(merged.copy);
      s->oom = true;
      return keep;
    }
    merged.cap = n;
    for (int32_t i = n - 1; i >= (p >= 0 ? 1 : 0); i--) {
      merged.nodes[merged.n] = s->cand[i];
      merged.copy[merged.n++] = s->cand_copy[i];
    }
    for (int i = 0; i < ng; i++) {
      vgroup *gr = &s->groups[gids[i]];
      free(gr->nodes);
      free(gr->copy);
      memset(gr, 0, sizeof *gr);
      s->parent[gids[i]] = keep;
    }
    s->groups[keep] = merged;
  }
  if (p < 0) return keep;
  group_push(s, &s->groups[keep], p, copy);
  if (copy)
    add_copy_record(s, p, keep);
  else
    s->group_of[p] = keep;
  return keep;
}

/* ---- placing one node --------------------------------------------------- */

/* Bytes of p's graph inputs that group gid does not read already: what
 * recomputing p there adds to the group's reads. */
static int64_t recompute_cost(vstate *s, int32_t p, int32_t gid) {
  const ir_node *nd = &s->g->nodes[p];
  vgroup *gr = &s->groups[gid];
  int64_t cost = 0;
  for (int a = 0; a < nd->nargs; a++) {
    int32_t u = nd->args[a];
    bool seen = s->g->nodes[u].op == IR_OP_CONST;
    for (int b = 0; b < a; b++) seen |= nd->args[b] == u;
    for (int32_t j = 0; j < gr->n && !seen; j++) {
      const ir_node *m = &s->g->nodes[gr->nodes[j]];
      for (int c = 0; c < m->nargs; c++) seen |= m->args[c] == u;
    }
    if (!seen) cost += fuse_bytes(&s->g->nodes[u]);
  }
  return cost;
}

/* Cheap to recompute: elementwise, reading only graph inputs and constants. */
static bool copyable(vstate *s, int32_t p) {
  const ir_node *nd = &s->g->nodes[p];
  if (!s->opt->recompute || !fuse_is_elementwise(nd)) return false;
  for (int a = 0; a < nd->nargs; a++)
    if (!is_source(&s->g->nodes[nd->args[a]])) return false;
  return true;
}

/* A merge that made a paired product (in->pair) says so: A read once,
 * neither product written. */
static void log_pair(vstate *s, const fuse_shape_info *in) {
  if (in->kind != FK_MATMUL || in->pair[0] < 0) return;
  char b1[64], b2[64], b3[64], b4[32];
  const ir_node *p = &s->g->nodes[in->pair[0]];
  fuse_decide(
      s->plan, true, "gemm-pair",
      "paired product: %s and %s share %s: one sm_90 template kernel reads it once, both "
      "products stay on chip (saves %s)",
      lbl(s, in->pair[0], b1, sizeof b1), lbl(s, in->pair[1], b2, sizeof b2),
      lbl(s, p->args[0], b3, sizeof b3),
      fuse_fmt_bytes(b4, sizeof b4, fuse_bytes(&s->g->nodes[p->args[0]]) + 2 * fuse_bytes(p)));
}

static void log_merge(vstate *s, int32_t p, const int32_t *C, int nC, const fuse_shape_info *in) {
  log_pair(s, in);
  char b1[64], b2[64], b3[32];
  int64_t saved = 2 * fuse_bytes(&s->g->nodes[p]);
  if (nC == 1) {
    const char *parts[] = {lbl(s, p, b1, sizeof b1),
                           " into the kernel of ",
                           glbl(s, C[0], b2, sizeof b2),
                           " (",
                           fuse_kind_name(in->kind),
                           "): stays on chip (saves ",
                           fuse_fmt_bytes(b3, sizeof b3, saved),
                           ")"};
    fuse_decide_parts(s->plan, true, "vertical", parts, 8);
  } else {
    fuse_decide(s->plan, true, "multi-consumer",
                "%s and its %d consumer kernels (of %s, ...) become one %s kernel: %s is read "
                "once (saves %s)",
                lbl(s, p, b1, sizeof b1), nC, glbl(s, C[0], b2, sizeof b2),
                fuse_kind_name(in->kind), lbl(s, p, b1, sizeof b1),
                fuse_fmt_bytes(b3, sizeof b3, saved * (nC - 1)));
  }
}

static void log_refusal(vstate *s, int32_t p, int32_t gid, int nC, fuse_shape_info *in) {
  char b1[64], b2[64];
  if (nC > 1)
    fuse_decide(s->plan, false, in->rule, "%s with all %d consumer kernels: %s",
                lbl(s, p, b1, sizeof b1), nC, in->why);
  else
    fuse_decide(s->plan, false, in->rule, "%s into the kernel of %s: %s", lbl(s, p, b1, sizeof b1),
                glbl(s, gid, b2, sizeof b2), in->why);
}

/* Several consumer kernels that cannot all take p: a home for p, and for
 * each other consumer kernel a copy of p or a read from memory. */
static void place_split(vstate *s, int32_t p, int32_t *C, int nC) {
  char b1[64], b2[64], b3[32], b4[32];
  const ir_node *nd = &s->g->nodes[p];
  int64_t pb = fuse_bytes(nd);
  uint8_t *copy_ok = core_calloc((size_t)nC, 1);
  int64_t *cost = core_calloc((size_t)nC, sizeof *cost);
  int32_t *readers = core_malloc((size_t)nC * sizeof *readers);
  if (!copy_ok || !cost || !readers) {
    s->oom = true;
    goto done;
  }
  fuse_shape_info info;
  bool can_copy = copyable(s, p);
  for (int i = 0; i < nC; i++) {
    cost[i] = can_copy ? recompute_cost(s, p, C[i]) : -1;
    copy_ok[i] = can_copy && cost[i] <= pb && evaluate(s, p, &C[i], 1, true, false, &info);
  }
  int hi = -1;
  for (int i = 0; i < nC && hi < 0; i++) {
    int nr = 0;
    for (int j = 0; j < nC; j++)
      if (j != i && !copy_ok[j]) readers[nr++] = C[j];
    bool legal = evaluate(s, p, &C[i], 1, false, nd->is_output || nr > 0, &info);
    if (legal && home_makes_cycle(s, C[i], readers, nr)) {
      legal = false;
      snprintf(info.rule, sizeof info.rule, "cycle");
      snprintf(info.why, sizeof info.why, "a kernel that reads it would depend on itself");
    }
    if (legal)
      hi = i;
    else
      log_refusal(s, p, C[i], 1, &info);
  }
  if (hi >= 0) {
    commit(s, p, &C[hi], 1, false);
    fuse_decide(s->plan, true, "vertical", "%s into the kernel of %s (%s), one of %d consumers",
                lbl(s, p, b1, sizeof b1), glbl(s, C[hi], b2, sizeof b2), fuse_kind_name(info.kind),
                nC);
  } else {
    new_group(s, p);
  }
  for (int i = 0; i < nC; i++) {
    if (i == hi) continue;
    if (copy_ok[i]) {
      commit(s, p, &C[i], 1, true);
      fuse_decide(s->plan, true, "recompute",
                  "%s recomputed in the kernel of %s: reads %s of inputs instead of %s",
                  lbl(s, p, b1, sizeof b1), glbl(s, C[i], b2, sizeof b2),
                  fuse_fmt_bytes(b3, sizeof b3, cost[i]), fuse_fmt_bytes(b4, sizeof b4, pb));
    } else if (cost[i] >= 0) {
      fuse_decide(s->plan, true, "materialize",
                  "%s written once, read by the kernel of %s: %s (recomputing would read %s)",
                  lbl(s, p, b1, sizeof b1), glbl(s, C[i], b2, sizeof b2),
                  fuse_fmt_bytes(b3, sizeof b3, pb), fuse_fmt_bytes(b4, sizeof b4, cost[i]));
    } else {
      fuse_decide(s->plan, true, "materialize",
                  "%s written once, read by the kernel of %s: %s (not cheap to recompute)",
                  lbl(s, p, b1, sizeof b1), glbl(s, C[i], b2, sizeof b2),
                  fuse_fmt_bytes(b3, sizeof b3, pb));
    }
  }
done:
  free(copy_ok);
  free(cost);
  free(readers);
}

static void place(vstate *s, int32_t p, int32_t *C, int nC) {
  fuse_shape_info info;
  bool legal = evaluate(s, p, C, nC, false, s->g->nodes[p].is_output, &info);
  if (legal && merge_makes_cycle(s, C, nC)) {
    legal = false;
    snprintf(info.rule, sizeof info.rule, "cycle");
    snprintf(info.why, sizeof info.why,
             "another kernel both reads from and feeds the merged kernel");
  }
  if (legal) {
    log_merge(s, p, C, nC, &info);
    commit(s, p, C, nC, false);
    return;
  }
  log_refusal(s, p, C[0], nC, &info);
  if (nC == 1) {
    char b1[64], b2[32];
    new_group(s, p);
    fuse_decide(s->plan, true, "materialize", "%s gets its own kernel and is written (%s)",
                lbl(s, p, b1, sizeof b1),
                fuse_fmt_bytes(b2, sizeof b2, fuse_bytes(&s->g->nodes[p])));
    return;
  }
  place_split(s, p, C, nC);
}

/* ---- siblings ----------------------------------------------------------- */

static int consumer_groups(vstate *s, int32_t p, int32_t *C);

/* Kernels that read the same sizeable graph input (and so the same space,
 * when the predicate agrees) become one kernel that reads it once. */
static void merge_siblings(vstate *s, int32_t *C) {
  const kf_graph *g = s->g;
  char b1[64], b2[64], b3[32];
  for (int32_t i = 0; i < g->n_inputs && !s->oom; i++) {
    int32_t u = g->inputs[i];
    if (fuse_numel(&g->nodes[u]) < 1024) continue; /* scalars, small weights */
    int nC = consumer_groups(s, u, C);
    /* A few tries per input: each may search the kernel graph for cycles. */
    for (int a = 1; a < nC && a <= 8 && !s->oom; a++) {
      int32_t pair[2] = {find(s, C[0]), find(s, C[a])};
      if (pair[0] == pair[1]) continue;
      fuse_shape_info info;
      bool legal = evaluate(s, -1, pair, 2, false, false, &info);
      if (legal && merge_makes_cycle(s, pair, 2)) {
        legal = false;
        snprintf(info.rule, sizeof info.rule, "cycle");
        snprintf(info.why, sizeof info.why, "one kernel depends on the other");
      }
      glbl(s, pair[0], b1, sizeof b1);
      glbl(s, pair[1], b2, sizeof b2);
      if (!legal) {
        fuse_decide(s->plan, false, info.rule,
                    "siblings: the kernels of %s and %s (both read %s): %s", b1, b2,
                    g->nodes[u].name, info.why);
        continue;
      }
      log_pair(s, &info);
      fuse_decide(s->plan, true, "sibling",
                  "the kernels of %s and %s both read %s: one %s kernel reads it once (saves %s)",
                  b1, b2, g->nodes[u].name, fuse_kind_name(info.kind),
                  fuse_fmt_bytes(b3, sizeof b3, fuse_bytes(&g->nodes[u])));
      C[0] = commit(s, -1, pair, 2, false);
    }
  }
}

/* ---- attention ------------------------------------------------------- */

/* A live product p that ends attention (fuser/attention.h) becomes one
 * kernel with the whole pattern at once: grown a node at a time, the
 * pattern's partial sets are not kernels of any kind. Its nodes are then
 * placed already; producers outside it meet the predicate as usual (and
 * stay out: the set is exact). */
static bool seed_attention(vstate *s, int32_t p) {
  int32_t nodes[FUSE_ATTN_MAX_NODES], n = 0;
  fuse_attn a;
  bool seen = false;
  char why[256], b1[64], b2[32];
  lbl(s, p, b1, sizeof b1);
  if (!fuse_attn_find(s->g, p, &a, nodes, &n, &seen, why, sizeof why)) {
    if (seen) fuse_decide(s->plan, false, "attention", "%s: not attention: %s", b1, why);
    return false;
  }
  if (!fuse_attn_fits(&a, why, sizeof why)) {
    fuse_decide(s->plan, false, "attention", "%s: attention, but %s: fused as other kernels", b1,
                why);
    return false;
  }
  for (int32_t i = 0; i < n; i++) {
    s->cand[i] = nodes[i];
    s->cand_copy[i] = 0;
    s->cand_out[i] = nodes[i] == p || nodes[i] == a.lse;
  }
  fuse_set set = {s->cand, s->cand_copy, s->cand_out, n};
  fuse_shape_info info;
  if (!fuse_legal(&s->lc, &set, &info, NULL)) {
    fuse_decide(s->plan, false, info.rule[0] ? info.rule : "attention", "%s: attention, but %s", b1,
                info.rule[0] ? info.why : "not as one kernel");
    return false;
  }
  int32_t gid = new_group(s, nodes[n - 1]); /* the match's last node: p, or its logsumexp's */
  for (int32_t i = n - 2; i >= 0 && !s->oom; i--) {
    group_push(s, &s->groups[gid], nodes[i], false);
    s->group_of[nodes[i]] = gid;
  }
  char b3[96] = "", b4[64];
  if (a.lse >= 0)
    snprintf(b3, sizeof b3, ", writing the logsumexp %s beside it", lbl(s, a.lse, b4, sizeof b4));
  fuse_decide(s->plan, true, "attention",
              "%s: attention of %d nodes (%lld x %lld queries, %lld keys, head dim %lld%s) in one "
              "flash kernel%s: the %s of scores stay on chip",
              b1, (int)n, (long long)a.batch, (long long)a.sq, (long long)a.sk, (long long)a.d,
              a.causal ? ", causal: key tiles past the diagonal skipped" : "", b3,
              fuse_fmt_bytes(b2, sizeof b2, fuse_bytes(&s->g->nodes[a.mm1])));
  fuse_attn_decode dec; /* which kernel: codegen asks the same question */
  bool decode = fuse_attn_decode_pick(s->g, &a, nodes, n, &dec, why, sizeof why);
  fuse_decide(s->plan, decode, "attention-decode", "%s: %s", b1, why);
  return true;
}

/* Attention whose match ends past its second product (a logsumexp built
 * after it) is seeded when the walk reaches the match's last node: the
 * walk would otherwise place those nodes in kernels of their own first.
 * Only a graph with a log can hold one; others keep attn_at NULL. */
static bool find_late_attention(vstate *s) {
  const kf_graph *g = s->g;
  bool any_log = false;
  for (int32_t v = 0; v < g->n_nodes && !any_log; v++) any_log = g->nodes[v].op == IR_OP_LOG;
  if (!any_log) return true;
  s->attn_at = core_malloc((size_t)g->n_nodes * sizeof *s->attn_at);
  if (!s->attn_at) return false;
  for (int32_t v = 0; v < g->n_nodes; v++) s->attn_at[v] = -1;
  int32_t nodes[FUSE_ATTN_MAX_NODES], n = 0;
  fuse_attn a;
  for (int32_t p = 0; p < g->n_nodes; p++) {
    if (g->nodes[p].op != IR_OP_MATMUL || !fuse_attn_find(g, p, &a, nodes, &n, NULL, NULL, 0) ||
        nodes[n - 1] == p)
      continue;
    s->attn_at[nodes[n - 1]] = p;
    s->attn_at[p] = -2 - nodes[n - 1];
  }
  return true;
}

/* The product to seed attention from at node p, or -1: p itself (a
 * product), or the product of a match that ends at p; a product whose
 * match ends later was tried there, unless that node was dead. */
static int32_t attention_seed(vstate *s, int32_t p) {
  int32_t at = s->attn_at ? s->attn_at[p] : -1;
  if (at >= 0) return at;
  if (s->g->nodes[p].op != IR_OP_MATMUL) return -1;
  return at < -1 && s->live[-2 - at] ? -1 : p;
}

/* ---- the pass ----------------------------------------------------------- */

static kf_status to_kernels(vstate *s, fuse_plan *plan) {
  int32_t nk = 0;
  for (int32_t i = 0; i < s->n_groups; i++)
    if (s->parent[i] == i && s->groups[i].n > 0) nk++;
  size_t nn = (size_t)(s->g->n_nodes > 0 ? s->g->n_nodes : 1);
  plan->kernels = core_calloc(nk > 0 ? (size_t)nk : 1, sizeof *plan->kernels);
  plan->kernel_of = core_malloc(nn * sizeof *plan->kernel_of);
  if (!plan->kernels || !plan->kernel_of) return KF_ERR_OUT_OF_MEMORY;
  for (size_t i = 0; i < nn; i++) plan->kernel_of[i] = -1;
  for (int32_t i = 0; i < s->n_groups; i++) {
    vgroup *gr = &s->groups[i];
    if (s->parent[i] != i || gr->n == 0) continue;
    fuse_kernel *k = &plan->kernels[plan->n_kernels];
    k->id = plan->n_kernels++;
    k->nodes = core_malloc((size_t)gr->n * sizeof *k->nodes);
    k->recomputed = core_malloc((size_t)gr->n);
    k->roles = core_calloc((size_t)gr->n, 1);
    if (!k->nodes || !k->recomputed || !k->roles) return KF_ERR_OUT_OF_MEMORY;
    k->n_nodes = gr->n;
    for (int32_t j = 0; j < gr->n; j++) {
      k->nodes[j] = gr->nodes[gr->n - 1 - j];
      k->recomputed[j] = gr->copy[gr->n - 1 - j];
      if (k->recomputed[j])
        plan->n_recomputed++;
      else
        plan->kernel_of[k->nodes[j]] = k->id;
    }
  }
  return KF_OK;
}

/* Every consumer is placed before its producer, so liveness is known. */
static bool is_live(vstate *s, int32_t p) {
  if (s->g->nodes[p].is_output) return true;
  for (int32_t i = s->use_start[p]; i < s->use_start[p + 1]; i++)
    if (s->live[s->use_list[i]]) return true;
  return false;
}

static int consumer_groups(vstate *s, int32_t p, int32_t *C) {
  int nC = 0;
  fuse_marks_clear(&s->gseen);
  for (int32_t i = s->use_start[p]; i < s->use_start[p + 1]; i++) {
    int32_t c = s->use_list[i];
    if (s->group_of[c] < 0) continue;
    int32_t h = find(s, s->group_of[c]);
    if (fuse_marked(&s->gseen, h)) continue;
    fuse_mark(&s->gseen, h, 0);
    C[nC++] = h;
  }
  return nC;
}

kf_status fuse_vertical(fuse_plan *plan, char *err, size_t errsize) {
  vstate s;
  const kf_graph *g = plan->graph;
  int32_t *C = core_malloc((size_t)(g->n_nodes > 0 ? g->n_nodes : 1) * sizeof *C);
  bool ok = vstate_init(&s, plan) && C && (!plan->options.fusion || find_late_attention(&s));
  if (ok && !plan->options.fusion)
    fuse_decide(plan, false, "fusion-off",
                "fusion disabled (KFUSE_NO_FUSION=1 or --no-fusion): every op is its own kernel");
  for (int32_t p = g->n_nodes - 1; ok && p >= 0; p--) {
    const ir_node *nd = &g->nodes[p];
    if (nd->op == IR_OP_INPUT) continue;
    s.live[p] = is_live(&s, p);
    if (s.group_of[p] >= 0) continue;                      /* a member of an attention kernel */
    if (nd->op == IR_OP_CONST && !nd->is_output) continue; /* folded into the code */
    if (!s.live[p]) {
      plan->n_dead++;
      continue;
    }
    int32_t seed = plan->options.fusion ? attention_seed(&s, p) : -1;
    if (seed >= 0 && seed_attention(&s, seed)) {
      ok = !s.oom;
      continue;
    }
    int nC = 0;
    if (plan->options.fusion && nd->op != IR_OP_CONST) nC = consumer_groups(&s, p, C);
    if (nC == 0)
      new_group(&s, p);
    else
      place(&s, p, C, nC);
    ok = !s.oom;
  }
  if (ok && plan->options.fusion) merge_siblings(&s, C);
  ok = ok && !s.oom;
  if (ok && plan->n_dead > 0)
    fuse_decide(plan, false, "dead-code", "%d nodes have no path to an output: not computed",
                (int)plan->n_dead);
  kf_status st = ok ? to_kernels(&s, plan) : KF_ERR_OUT_OF_MEMORY;
  if (st != KF_OK) snprintf(err, errsize, "out of memory");
  vstate_free(&s);
  free(C);
  return st;
}
