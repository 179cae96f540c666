/* fuser_util.h - shared by the fuser suites: planning a graph, a seeded
 * random graph generator, and the plan invariants every plan must keep. */
#ifndef KF_TEST_FUSER_UTIL_H
#define KF_TEST_FUSER_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuser/fuse.h"
#include "fuser/legal.h"
#include "kfuse.h"

/* ---- planning ------------------------------------------------------------ */

static inline fuse_plan *fz_plan_opts(const kf_graph *g, const fuse_options *o) {
  fuse_plan *p = NULL;
  char err[512] = "";
  kf_status st = fuse_plan_build(g, o, &p, err, sizeof err);
  if (st != KF_OK) fprintf(stderr, "fuse_plan_build: %s\n", err);
  return p;
}

static inline fuse_plan *fz_plan(const kf_graph *g) {
  fuse_options o;
  fuse_options_default(&o);
  o.fusion = o.horizontal = true;
  return fz_plan_opts(g, &o);
}

/* ---- a seeded random graph generator ------------------------------------ */

typedef struct fz_rng {
  uint64_t s;
} fz_rng;

static inline uint32_t fz_next(fz_rng *r) {
  r->s = r->s * 6364136223846793005ull + 1442695040888963407ull;
  return (uint32_t)(r->s >> 33);
}
static inline int fz_pick(fz_rng *r, int n) {
  return (int)(fz_next(r) % (uint32_t)n);
}

/* Whether shapes of a and b broadcast (NumPy rules). */
static inline bool fz_bcast_ok(const kf_graph *g, kf_value a, kf_value b) {
  int ra = kf_value_rank(g, a), rb = kf_value_rank(g, b);
  const int64_t *sa = kf_value_shape(g, a), *sb = kf_value_shape(g, b);
  int r = ra > rb ? ra : rb;
  for (int i = 0; i < r; i++) {
    int ia = ra - r + i, ib = rb - r + i;
    int64_t da = ia >= 0 ? sa[ia] : 1, db = ib >= 0 ? sb[ib] : 1;
    if (da != db && da != 1 && db != 1) return false;
  }
  return true;
}

static inline kf_value fz_any(fz_rng *r, kf_value *vals, int n) {
  return vals[fz_pick(r, n)];
}

/* One random op on the values made so far; KF_NONE when it did not fit. */
static inline kf_value fz_op(fz_rng *r, kf_graph *g, kf_value *vals, int n) {
  kf_value a = fz_any(r, vals, n), b = fz_any(r, vals, n);
  int ra = kf_value_rank(g, a);
  int last = -1, first = 0;
  switch (fz_pick(r, 16)) {
    case 0:
      return kf_exp(g, kf_neg(g, kf_abs(g, a)));
    case 1:
      return kf_tanh(g, a);
    case 2:
      return kf_relu(g, a);
    case 3:
    case 4:
      return fz_bcast_ok(g, a, b) ? kf_add(g, a, b) : kf_mul(g, a, kf_scalar(g, 2, KF_F32));
    case 5:
      return fz_bcast_ok(g, a, b) ? kf_maximum(g, a, b) : kf_sigmoid(g, a);
    case 6:
      return ra >= 1 ? kf_sum(g, a, 1, &last, fz_pick(r, 2)) : KF_NONE;
    case 7:
      return ra >= 1 ? kf_max(g, a, 1, &last, true) : KF_NONE;
    case 8:
      return ra >= 2 ? kf_mean(g, a, 1, &first, fz_pick(r, 2)) : KF_NONE;
    case 9:
      return ra >= 1 ? kf_sum(g, a, 0, NULL, false) : KF_NONE;
    case 10:
      return ra >= 1 ? kf_softmax(g, a, -1) : KF_NONE;
    case 11:
      return ra >= 1 ? kf_rmsnorm(g, a, KF_NONE, 1e-6) : KF_NONE;
    case 12:
      return ra >= 1 ? kf_layernorm(g, a, KF_NONE, KF_NONE, 1e-5) : KF_NONE;
    case 13: {
      int perm[2] = {1, 0};
      return ra == 2 ? kf_transpose(g, a, perm) : KF_NONE;
    }
    case 14: {
      int64_t flat = kf_value_numel(g, a);
      return kf_reshape(g, a, 1, &flat);
    }
    default:
      return kf_cast(g, kf_cast(g, a, KF_BF16), KF_F32);
  }
}

/* A random valid graph: a few f32 inputs of related shapes, n_ops ops, one
 * to three outputs. The caller destroys it. NULL if building failed. */
static inline kf_graph *fz_random_graph(uint64_t seed, int n_ops) {
  fz_rng r = {seed * 2654435761u + 1};
  kf_graph *g = NULL;
  if (kf_graph_create(NULL, &g) != KF_OK) return NULL;
  static const int64_t dims[] = {1, 3, 4, 8, 16};
  int64_t R = dims[1 + fz_pick(&r, 4)], C = dims[1 + fz_pick(&r, 4)];
  int64_t shapes[5][2] = {{R, C}, {R, C}, {C, 0}, {R, 1}, {R, C}};
  int ranks[5] = {2, 2, 1, 2, 2};
  kf_value vals[256];
  int n = 0;
  int n_in = 1 + fz_pick(&r, 4);
  for (int i = 0; i < n_in; i++) {
    char name[16];
    snprintf(name, sizeof name, "in%d", i);
    int k = fz_pick(&r, 5);
    vals[n++] = kf_input(g, name, KF_F32, ranks[k], shapes[k]);
  }
  for (int i = 0; i < n_ops && n < 256; i++) {
    kf_value v = fz_op(&r, g, vals, n);
    if (kf_graph_status(g) != KF_OK) break;
    if (v != KF_NONE) vals[n++] = v;
  }
  int n_out = 1 + fz_pick(&r, 3);
  kf_value outs[4] = {vals[n - 1], KF_NONE, KF_NONE, KF_NONE};
  int no = 1;
  for (int i = 1; i < n_out; i++) {
    kf_value v = vals[fz_pick(&r, n)];
    bool dup = false;
    for (int j = 0; j < no; j++) dup |= outs[j] == v;
    if (!dup) outs[no++] = v;
  }
  for (int i = 0; i < no; i++) kf_set_output(g, outs[i]);
  if (kf_graph_status(g) != KF_OK) {
    kf_graph_destroy(g);
    return NULL;
  }
  return g;
}

/* ---- plan invariants ----------------------------------------------------- */

static inline bool fz_in_list(const int32_t *v, int32_t n, int32_t x) {
  for (int32_t i = 0; i < n; i++)
    if (v[i] == x) return true;
  return false;
}

/* Checks every invariant of a plan; writes the first broken one to why. */
static inline bool fz_check_plan(const kf_graph *g, const fuse_plan *p, char *why, size_t n) {
  int nn = kf_graph_num_values(g);
  int *homes = calloc((size_t)nn, sizeof *homes);
  bool ok = true;
  for (int32_t k = 0; k < p->n_kernels && ok; k++) {
    const fuse_kernel *K = &p->kernels[k];
    if (K->id != k || K->n_nodes < 1 || K->n_outputs < 1) {
      snprintf(why, n, "kernel %d: bad id or empty", k), ok = false;
      break;
    }
    for (int32_t i = 0; i < K->n_nodes && ok; i++) {
      int32_t v = K->nodes[i];
      if (i > 0 && K->nodes[i - 1] >= v)
        snprintf(why, n, "%s: nodes not ascending", K->name), ok = false;
      if (!K->recomputed[i]) {
        homes[v]++;
        if (p->kernel_of[v] != k) snprintf(why, n, "kernel_of[%d] wrong", v), ok = false;
      } else if (p->kernel_of[v] == k) {
        snprintf(why, n, "%s: recomputes its own node %d", K->name, v), ok = false;
      }
    }
    for (int32_t i = 0; i < K->n_nodes && ok; i++) { /* operands come from somewhere */
      const ir_node *nd = &g->nodes[K->nodes[i]];
      for (int a = 0; a < nd->nargs && ok; a++) {
        int32_t u = nd->args[a];
        if (!fz_in_list(K->nodes, K->n_nodes, u) && g->nodes[u].op != IR_OP_CONST &&
            !fz_in_list(K->inputs, K->n_inputs, u))
          snprintf(why, n, "%s: operand %d of %d is not available", K->name, u, K->nodes[i]),
              ok = false;
      }
    }
    for (int32_t i = 0; i < K->n_inputs && ok; i++) {
      int32_t u = K->inputs[i];
      const char *op = kf_value_op(g, u);
      if (strcmp(op, "input") == 0) continue;
      int pk = p->kernel_of[u];
      if (pk < 0 || !fz_in_list(p->kernels[pk].outputs, p->kernels[pk].n_outputs, u))
        snprintf(why, n, "%s reads %d which no kernel writes", K->name, u), ok = false;
      else if (p->kernels[pk].launch >= K->launch)
        snprintf(why, n, "%s (launch %d) reads from launch %d", K->name, K->launch,
                 p->kernels[pk].launch),
            ok = false;
    }
    char w[256];
    if (ok && !fuse_kernel_legal(p, k, w, sizeof w)) snprintf(why, n, "illegal: %s", w), ok = false;
  }
  /* Every node an output depends on is computed exactly once at home. */
  for (int v = nn - 1; v >= 0 && ok; v--) {
    const char *op = kf_value_op(g, v);
    bool src = strcmp(op, "input") == 0 || strcmp(op, "const") == 0;
    if (homes[v] > 1)
      snprintf(why, n, "node %d computed at home %d times", v, homes[v]), ok = false;
    if (!src && homes[v] == 0 && p->kernel_of[v] != -1)
      snprintf(why, n, "node %d has a kernel but no home", v), ok = false;
  }
  for (int i = 0; i < kf_graph_num_outputs(g) && ok; i++) {
    kf_value v = kf_graph_output(g, i);
    if (strcmp(kf_value_op(g, v), "input") != 0 && homes[v] != 1)
      snprintf(why, n, "output %d not computed", v), ok = false;
  }
  /* Workspace: aligned, inside, and no two live values overlapping. */
  for (int32_t i = 0; i < p->n_buffers && ok; i++) {
    const fuse_buffer *a = &p->buffers[i];
    if (a->home != HOME_WORKSPACE) continue;
    if (a->offset % 256 || a->offset + a->bytes > p->workspace_bytes)
      snprintf(why, n, "buffer %d misplaced", a->value), ok = false;
    for (int32_t j = i + 1; j < p->n_buffers && ok; j++) {
      const fuse_buffer *b = &p->buffers[j];
      if (b->home != HOME_WORKSPACE) continue;
      bool live = a->first_launch <= b->last_launch && b->first_launch <= a->last_launch;
      bool mem = a->offset < b->offset + b->bytes && b->offset < a->offset + a->bytes;
      if (live && mem) snprintf(why, n, "values %d and %d overlap", a->value, b->value), ok = false;
    }
  }
  for (int32_t l = 0; l < p->n_launches && ok; l++)
    if (p->launches[l].n_kernels > p->options.max_parts ||
        p->launches[l].param_bytes > p->options.max_param_bytes)
      snprintf(why, n, "launch %d over its limits", l), ok = false;
  free(homes);
  return ok;
}

#endif
