/* props_gen.h - seeded families of valid graphs for the property suites
 * (tests/test_props.c on the CPU, tests/gpu/test_gpu_props.c on the GPU):
 * random chains and diamonds of every op of src/ir/ops.def (ranks 0-5,
 * extents 1-7 and a few large ones, every axis set, keepdim both ways,
 * every dtype an op takes), and an enumerated edge family (every reduction
 * op over every axis subset of shapes with extent-1 axes, rank 0, odd and
 * large extents; composites over every axis). Same seed, same graph. */
#ifndef KF_TEST_PROPS_GEN_H
#define KF_TEST_PROPS_GEN_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kfuse.h"
#include "test_random.h"

#define PG_MAXV 32

typedef struct pg_gen {
  kf_graph *g;
  uint64_t s;
  kf_value vals[PG_MAXV];
  int n, n_inputs;
} pg_gen;

static inline uint64_t pg_next(uint64_t *s) {
  return rng_next(s);
}

static inline int pg_pick(pg_gen *p, int n) {
  return (int)(pg_next(&p->s) % (uint64_t)n);
}

static inline bool pg_is_float(kf_dtype dt) {
  return dt == KF_F16 || dt == KF_BF16 || dt == KF_F32 || dt == KF_F64;
}

static inline kf_value pg_input(pg_gen *p, kf_dtype dt, int rank, const int64_t *shape) {
  char name[16];
  snprintf(name, sizeof name, "in%d", p->n_inputs++);
  return kf_input(p->g, name, dt, rank, shape);
}

static inline void pg_push(pg_gen *p, kf_value v) {
  if (v != KF_NONE && p->n < PG_MAXV) p->vals[p->n++] = v;
}

/* A random shape: rank 0-5, extents 1-7, now and then one large extent
 * (4096 or 65537) with the others small, so no tensor passes 2^18. */
static inline int pg_shape(pg_gen *p, int64_t *shape) {
  int rank = pg_pick(p, 6);
  for (int d = 0; d < rank; d++) shape[d] = 1 + pg_pick(p, 7);
  if (rank >= 1 && rank <= 2 && pg_pick(p, 8) == 0) {
    shape[pg_pick(p, rank)] = pg_pick(p, 2) ? 4096 : 65537;
    for (int d = 0; d < rank; d++)
      if (shape[d] < 8) shape[d] = 1 + pg_pick(p, 3);
  }
  return rank;
}

static inline kf_dtype pg_dtype(pg_gen *p) {
  static const kf_dtype all[] = {KF_F32, KF_F32, KF_F16, KF_BF16, KF_F64, KF_I32, KF_I64, KF_BOOL};
  return all[pg_pick(p, 8)];
}

/* The operand of an op that is not continuous (floor, ceil, sign, the
 * comparisons, logical ops, a cast from a float to an integer): a float
 * value computed by the graph is replaced by a fresh input of its shape,
 * since f32 (kernels) and f64 (reference) evaluation of it may lie on two
 * sides of a step, and the GPU comparison would fail on a correct kernel.
 * Inputs are exact on both sides. */
static inline kf_value pg_exact(pg_gen *p, kf_value x) {
  kf_graph *g = p->g;
  const char *op = kf_value_op(g, x);
  if (!pg_is_float(kf_value_dtype(g, x)) || (op && !strcmp(op, "input"))) return x;
  return pg_input(p, kf_value_dtype(g, x), kf_value_rank(g, x), kf_value_shape(g, x));
}

/* Domain-safe forms keep the values finite on random inputs in [-2, 2] (so
 * the GPU comparison tests arithmetic, not overflow), and still use the op. */
static inline kf_value pg_unary(pg_gen *p, kf_value x) {
  kf_graph *g = p->g;
  kf_dtype dt = kf_value_dtype(g, x);
  if (dt == KF_BOOL) return kf_logical_not(g, x);
  if (!pg_is_float(dt)) {
    switch (pg_pick(p, 5)) {
      case 0:
        return kf_neg(g, x);
      case 1:
        return kf_abs(g, x);
      case 2:
        return kf_relu(g, x);
      case 3:
        return kf_sign(g, x);
      default:
        return kf_logical_not(g, x);
    }
  }
  int op = pg_pick(p, 21);
  if (op >= 16 && op != 19) x = pg_exact(p, x);
  kf_value pos = op >= 3 && op <= 6 ? kf_add(g, kf_abs(g, x), kf_scalar(g, 0.5, dt)) : KF_NONE;
  switch (op) {
    case 0:
      return kf_neg(g, x);
    case 1:
      return kf_abs(g, x);
    case 2:
      return kf_exp(g, kf_clamp(g, x, -4, 4));
    case 3:
      return kf_log(g, pos);
    case 4:
      return kf_sqrt(g, pos);
    case 5:
      return kf_rsqrt(g, pos);
    case 6:
      return kf_reciprocal(g, pos);
    case 7:
      return kf_sin(g, x);
    case 8:
      return kf_cos(g, x);
    case 9:
      return kf_tanh(g, x);
    case 10:
      return kf_sigmoid(g, x);
    case 11:
      return kf_relu(g, x);
    case 12:
      return kf_gelu(g, x);
    case 13:
      return kf_gelu_tanh(g, x);
    case 14:
      return kf_silu(g, x);
    case 15:
      return kf_erf(g, x);
    case 16:
      return kf_floor(g, x);
    case 17:
      return kf_ceil(g, x);
    case 18:
      return kf_sign(g, x);
    case 19:
      return kf_clamp(g, x, -1, 0.5);
    default:
      return kf_logical_not(g, x);
  }
}

static inline kf_value pg_binary(pg_gen *p, kf_value a, kf_value b) {
  kf_graph *g = p->g;
  kf_dtype dt = kf_value_dtype(g, a);
  int n = dt == KF_BOOL ? 8 : pg_is_float(dt) ? 15 : 13;
  int op = dt == KF_BOOL ? 5 + pg_pick(p, 8) : pg_pick(p, n);
  if (op >= 5 && op <= 12) a = pg_exact(p, a), b = pg_exact(p, b);
  switch (op) {
    case 0:
      return kf_add(g, a, b);
    case 1:
      return kf_sub(g, a, b);
    case 2:
      return kf_mul(g, a, b);
    case 3:
      return kf_maximum(g, a, b);
    case 4:
      return kf_minimum(g, a, b);
    case 5:
      return kf_eq(g, a, b);
    case 6:
      return kf_ne(g, a, b);
    case 7:
      return kf_lt(g, a, b);
    case 8:
      return kf_le(g, a, b);
    case 9:
      return kf_gt(g, a, b);
    case 10:
      return kf_ge(g, a, b);
    case 11:
      return kf_logical_and(g, a, b);
    case 12:
      return kf_where(g, kf_logical_or(g, a, b), a, b);
    case 13:
      return kf_div(g, a, kf_add(g, kf_abs(g, b), kf_scalar(g, 0.5, dt)));
    default:
      return kf_pow(g, kf_add(g, kf_abs(g, a), kf_scalar(g, 0.5, dt)), kf_clamp(g, b, -2, 2));
  }
}

/* A partner of x for a binary op: x's shape, or one that broadcasts to it
 * (some extents 1, a suffix), a graph input or a keepdim reduction of x. */
static inline kf_value pg_partner(pg_gen *p, kf_value x) {
  kf_graph *g = p->g;
  int rank = kf_value_rank(g, x);
  int64_t s[KF_MAX_RANK];
  memcpy(s, kf_value_shape(g, x), sizeof(int64_t) * (size_t)rank);
  kf_dtype dt = kf_value_dtype(g, x);
  int how = pg_pick(p, 4);
  if (how == 0 && dt != KF_BOOL && rank > 0) {
    int ax = pg_pick(p, rank);
    kf_value r = pg_pick(p, 2) ? kf_max(g, x, 1, &ax, true) : kf_sum(g, x, 1, &ax, true);
    return r;
  }
  if (how == 1)
    for (int d = 0; d < rank; d++)
      if (pg_pick(p, 2)) s[d] = 1;
  int off = how == 2 && rank > 0 ? pg_pick(p, rank + 1) : 0;
  return pg_input(p, dt, rank - off, s + off);
}

/* A random non-empty axis subset of rank dims; *naxes 0 (every axis) now
 * and then, as the API allows. */
static inline int pg_axes(pg_gen *p, int rank, int *axes) {
  if (rank == 0 || pg_pick(p, 6) == 0) return 0;
  unsigned m = 1u + (unsigned)pg_pick(p, (1 << rank) - 1);
  int n = 0;
  for (int d = 0; d < rank; d++)
    if (m & (1u << d)) axes[n++] = pg_pick(p, 2) ? d : d - rank; /* negative too */
  return n;
}

static inline kf_value pg_reduce(pg_gen *p, kf_value x, int op) {
  kf_graph *g = p->g;
  int axes[KF_MAX_RANK], n = pg_axes(p, kf_value_rank(g, x), axes);
  bool keep = pg_pick(p, 2);
  kf_dtype dt = kf_value_dtype(g, x);
  if (dt == KF_BOOL) x = kf_cast(g, x, KF_I32);
  if (op == 1 && !pg_is_float(dt)) op = 0;
  switch (op) {
    case 0:
      return kf_sum(g, x, n, axes, keep);
    case 1:
      return kf_mean(g, x, n, axes, keep);
    case 2:
      return kf_max(g, x, n, axes, keep);
    default:
      return kf_min(g, x, n, axes, keep);
  }
}

/* Layout: a reshape (reversed extents, flattened, or a 1 inserted), a
 * random transpose, or broadcast_to with a new leading axis / 1s expanded. */
static inline kf_value pg_layout(pg_gen *p, kf_value x) {
  kf_graph *g = p->g;
  int rank = kf_value_rank(g, x);
  const int64_t *s = kf_value_shape(g, x);
  int64_t t[KF_MAX_RANK];
  int kind = pg_pick(p, 3);
  if (kind == 0) {
    int64_t n = kf_value_numel(g, x);
    int r = 0;
    switch (pg_pick(p, 3)) {
      case 0:
        for (int d = 0; d < rank; d++) t[r++] = s[rank - 1 - d];
        break;
      case 1:
        t[r++] = n;
        break;
      default:
        for (int d = 0; d < rank && r < KF_MAX_RANK - 1; d++) t[r++] = s[d];
        if (r < 5) t[r++] = 1;
        break;
    }
    return kf_reshape(g, x, r, t);
  }
  if (kind == 1 && rank >= 2) {
    int perm[KF_MAX_RANK];
    for (int d = 0; d < rank; d++) perm[d] = d;
    for (int d = rank - 1; d > 0; d--) {
      int j = pg_pick(p, d + 1), tmp = perm[d];
      perm[d] = perm[j];
      perm[j] = tmp;
    }
    return kf_transpose(g, x, perm);
  }
  int r = 0;
  bool small = kf_value_numel(g, x) <= 4096;
  if (rank < 5 && small) t[r++] = 1 + pg_pick(p, 3);
  for (int d = 0; d < rank; d++)
    t[r++] = s[d] == 1 && small && pg_pick(p, 2) ? 1 + pg_pick(p, 4) : s[d];
  return kf_broadcast_to(g, x, r, t);
}

/* A float view of x for the composites and matmul. */
static inline kf_value pg_float(pg_gen *p, kf_value x) {
  kf_dtype dt = kf_value_dtype(p->g, x);
  return pg_is_float(dt) ? x : kf_cast(p->g, x, pg_pick(p, 2) ? KF_F32 : KF_BF16);
}

static inline kf_value pg_composite(pg_gen *p, kf_value x) {
  kf_graph *g = p->g;
  x = pg_float(p, x);
  int rank = kf_value_rank(g, x);
  if (rank == 0) return kf_exp(g, kf_clamp(g, x, -4, 4));
  int64_t last = kf_value_shape(g, x)[rank - 1];
  kf_dtype dt = kf_value_dtype(g, x);
  kf_value w = pg_pick(p, 2) ? pg_input(p, dt, 1, &last) : KF_NONE;
  switch (pg_pick(p, 4)) {
    case 0:
      return kf_softmax(g, x, pg_pick(p, rank) - (pg_pick(p, 2) ? rank : 0));
    case 1:
      return kf_log_softmax(g, x, pg_pick(p, rank));
    case 2:
      return kf_layernorm(g, x, w, pg_pick(p, 2) ? pg_input(p, dt, 1, &last) : KF_NONE, 1e-5);
    default:
      return kf_rmsnorm(g, x, w, 1e-6);
  }
}

/* x @ w for a new input w [.., K, N] (x viewed as [.., M, K]). */
static inline kf_value pg_matmul(pg_gen *p, kf_value x) {
  kf_graph *g = p->g;
  x = kf_value_dtype(g, x) == KF_BOOL ? kf_cast(g, x, KF_F32) : x;
  int rank = kf_value_rank(g, x);
  if (rank < 2 || kf_value_numel(g, x) > 65536) return pg_unary(p, x);
  int64_t s[KF_MAX_RANK];
  memcpy(s, kf_value_shape(g, x), sizeof(int64_t) * (size_t)rank);
  int64_t k = s[rank - 1];
  if (k > 4096) return pg_unary(p, x);
  int off = pg_pick(p, rank - 1); /* fewer batch axes: they broadcast */
  for (int d = off; d < rank - 2; d++)
    if (pg_pick(p, 3) == 0) s[d] = 1;
  s[rank - 2] = k;
  s[rank - 1] = 1 + pg_pick(p, 7);
  return kf_matmul(g, x, pg_input(p, kf_value_dtype(g, x), rank - off, s + off));
}

static inline kf_value pg_step(pg_gen *p, kf_value x) {
  kf_graph *g = p->g;
  switch (pg_pick(p, 10)) {
    case 0:
    case 1:
      return pg_unary(p, x);
    case 2:
    case 3:
      return pg_binary(p, x, pg_partner(p, x));
    case 4:
      return pg_reduce(p, x, pg_pick(p, 4));
    case 5:
      return pg_layout(p, x);
    case 6: { /* to an integer or bool from a float: a step (pg_exact) */
      kf_dtype to = pg_dtype(p);
      return kf_cast(g, pg_is_float(to) ? x : pg_exact(p, x), to);
    }
    case 7:
      return pg_composite(p, x);
    case 8:
      return pg_matmul(p, x);
    default: { /* a diamond: two branches of x joined */
      kf_value a = pg_unary(p, x), b = pg_unary(p, x);
      kf_dtype da = kf_value_dtype(g, a);
      if (kf_value_dtype(g, b) != da) b = kf_cast(g, pg_is_float(da) ? b : pg_exact(p, b), da);
      return pg_binary(p, a, b);
    }
  }
}

/* Random graph `seed`: an input, 1-5 steps, the last value and maybe an
 * earlier one as outputs. */
static inline kf_status pg_random(kf_ctx *ctx, uint64_t seed, kf_graph **out) {
  pg_gen p;
  memset(&p, 0, sizeof p);
  p.s = seed * 0x9E3779B97F4A7C15ull + 0x2545F4914F6CDD1Dull;
  pg_next(&p.s);
  kf_status st = kf_graph_create(ctx, &p.g);
  if (st != KF_OK) return st;
  int64_t s[KF_MAX_RANK];
  int rank = pg_shape(&p, s);
  kf_value x = pg_input(&p, pg_dtype(&p), rank, s);
  pg_push(&p, x);
  int steps = 1 + pg_pick(&p, 5);
  for (int i = 0; i < steps && kf_graph_status(p.g) == KF_OK; i++) {
    kf_value from = pg_pick(&p, 3) ? p.vals[p.n - 1] : p.vals[pg_pick(&p, p.n)];
    pg_push(&p, pg_step(&p, from));
  }
  kf_set_output(p.g, p.vals[p.n - 1]);
  if (p.n > 2 && pg_pick(&p, 3) == 0) kf_set_output(p.g, p.vals[1 + pg_pick(&p, p.n - 2)]);
  *out = p.g;
  return kf_graph_status(p.g);
}

/* ---- the layout-chain family ----------------------------------------------- */

/* Chained layout ops (a transposed value reshaped, again and again: the
 * index expressions that once overflowed codegen's buffers): an f32 input of
 * rank 3-5, extents 2-7; 2-24 rounds of a random transpose then a reshape
 * to the input's shape or to its extents reversed; then exp, a sum over a
 * random axis, or a softmax over the last axis. Same seed, same graph. */
static inline kf_status pg_layout_chain(kf_ctx *ctx, uint64_t seed, kf_graph **out) {
  pg_gen p;
  memset(&p, 0, sizeof p);
  p.s = seed * 0xD1B54A32D192ED03ull + 0x8CB92BA72F3D8DD7ull;
  pg_next(&p.s);
  kf_status st = kf_graph_create(ctx, &p.g);
  if (st != KF_OK) return st;
  kf_graph *g = p.g;
  int64_t s[KF_MAX_RANK], rev[KF_MAX_RANK];
  int rank = 3 + pg_pick(&p, 3);
  for (int d = 0; d < rank; d++) s[d] = 2 + pg_pick(&p, 6);
  for (int d = 0; d < rank; d++) rev[d] = s[rank - 1 - d];
  kf_value x = pg_input(&p, KF_F32, rank, s);
  int rounds = 2 + pg_pick(&p, 23);
  for (int r = 0; r < rounds; r++) {
    int perm[KF_MAX_RANK];
    for (int d = 0; d < rank; d++) perm[d] = d;
    for (int d = rank - 1; d > 0; d--) {
      int j = pg_pick(&p, d + 1), tmp = perm[d];
      perm[d] = perm[j];
      perm[j] = tmp;
    }
    x = kf_reshape(g, kf_transpose(g, x, perm), rank, pg_pick(&p, 2) ? s : rev);
  }
  int ax = pg_pick(&p, rank);
  switch (pg_pick(&p, 3)) {
    case 0:
      x = kf_exp(g, x);
      break;
    case 1:
      x = kf_sum(g, x, 1, &ax, pg_pick(&p, 2) != 0);
      break;
    default:
      x = kf_softmax(g, x, -1);
      break;
  }
  kf_set_output(g, x);
  *out = g;
  return kf_graph_status(g);
}

/* ---- the edge family ----------------------------------------------------- */

static const int64_t pg_edge_shapes[][KF_MAX_RANK + 1] = {
    /* rank, extents */
    {0},
    {1, 1},
    {1, 5},
    {1, 65537},
    {2, 1, 4096},
    {2, 4096, 1},
    {2, 8, 1},
    {2, 1, 1},
    {3, 3, 4, 5},
    {3, 3, 1, 5},
    {3, 1, 1, 1},
    {3, 4, 1, 6},
    {4, 1, 4, 1, 6},
    {4, 2, 3, 4, 5},
    {5, 2, 1, 3, 1, 2},
    {5, 1, 2, 3, 2, 1}};
#define PG_EDGE_SHAPES ((int)(sizeof pg_edge_shapes / sizeof pg_edge_shapes[0]))

/* Graphs of the edge family, per shape: every reduction op over every axis
 * subset (and "all" as naxes 0) of one f32 input, each an output, with
 * keepdim and without (two graphs), then one of softmax and log_softmax
 * over every axis and layernorm and rmsnorm; with single, one graph per
 * case instead (KFUSE_PROPS_EDGE=single). */
static inline int pg_edge_items(int r) {
  return 8 * (1 << r) + 2 * r + (r > 0 ? 2 : 0);
}

static inline int pg_edge_count(bool single) {
  int n = 0;
  for (int i = 0; i < PG_EDGE_SHAPES; i++) {
    int r = (int)pg_edge_shapes[i][0];
    n += single ? pg_edge_items(r) : 3;
  }
  return n;
}

static inline kf_value pg_edge_reduce(kf_graph *g, kf_value x, int op, int mask, bool keep) {
  int axes[KF_MAX_RANK], n = 0;
  for (int d = 0; d < KF_MAX_RANK; d++)
    if (mask & (1 << d)) axes[n++] = d;
  switch (op) {
    case 0:
      return kf_sum(g, x, n, axes, keep);
    case 1:
      return kf_mean(g, x, n, axes, keep);
    case 2:
      return kf_max(g, x, n, axes, keep);
    default:
      return kf_min(g, x, n, axes, keep);
  }
}

/* Item `which` of shape r's list: reductions (keepdim, op, mask; mask 0 =
 * all), then softmax / log_softmax per axis, then layernorm and rmsnorm. */
static inline void pg_edge_item(kf_graph *g, kf_value x, int r, int which) {
  int nred = 8 << r;
  kf_value y;
  if (which < nred) {
    int op = (which >> r) & 3;
    y = pg_edge_reduce(g, x, op, which & ((1 << r) - 1), which >= nred / 2);
  } else if (which < nred + 2 * r) {
    int j = which - nred;
    y = j % 2 ? kf_log_softmax(g, x, j / 2) : kf_softmax(g, x, j / 2);
  } else {
    int64_t last = kf_value_shape(g, x)[r - 1];
    bool ln = which - nred - 2 * r == 0;
    kf_value w = kf_input(g, ln ? "w" : "w2", KF_F32, 1, &last);
    y = ln ? kf_layernorm(g, x, w, KF_NONE, 1e-5) : kf_rmsnorm(g, x, w, 1e-6);
  }
  kf_set_output(g, y);
}

/* Graph `index` of the family: batched, per shape the reductions without
 * keepdim, with keepdim, then the composites. */
static inline kf_status pg_edge(kf_ctx *ctx, int index, bool single, kf_graph **out) {
  kf_status st = kf_graph_create(ctx, out);
  if (st != KF_OK) return st;
  kf_graph *g = *out;
  for (int i = 0; i < PG_EDGE_SHAPES; i++) {
    int r = (int)pg_edge_shapes[i][0], items = pg_edge_items(r), nred = 8 << r;
    int here = single ? items : 3;
    if (index >= here) {
      index -= here;
      continue;
    }
    kf_value x = kf_input(g, "x", KF_F32, r, pg_edge_shapes[i] + 1);
    int from = single ? index : index == 0 ? 0 : index == 1 ? nred / 2 : nred;
    int to = single ? index + 1 : index == 0 ? nred / 2 : index == 1 ? nred : items;
    for (int j = from; j < to; j++) pg_edge_item(g, x, r, j);
    if (to == from) kf_set_output(g, kf_neg(g, x)); /* rank 0: no composites */
    return kf_graph_status(g);
  }
  return KF_ERR_INVALID_ARG;
}

#endif
