/* transpose_graphs.h - the graphs the tiled-transpose suites share (CPU:
 * tests/test_transpose.c plans, emits and compiles them; GPU:
 * tests/gpu/test_gpu_transpose.c runs them against the reference): every
 * permutation of ranks 2-4 in f32, f16 and bf16, with a pointwise op before
 * the transpose (in the operand's order), a second input in the output's
 * order and a pointwise op after, and the transposed value itself as a
 * second output. */
#ifndef KF_TEST_TRANSPOSE_GRAPHS_H
#define KF_TEST_TRANSPOSE_GRAPHS_H

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "kfuse.h"

/* Output shapes: odd extents (every access scalar, partial tiles on every
 * side), and even ones (16-byte accesses, 64-wide tiles for 2-byte types,
 * still partial tiles). Every extent is at least 8, so each permutation
 * that moves the innermost axis is tiled. */
static const int64_t TG_ODD[3][4] = {{37, 45}, {9, 35, 41}, {9, 11, 13, 37}};
static const int64_t TG_EVEN[3][4] = {{40, 72}, {8, 40, 24}, {8, 16, 24, 40}};
static const kf_dtype TG_DTYPES[3] = {KF_F32, KF_F16, KF_BF16};

/* The p-th permutation of 0..rank-1 in lexicographic order (p < rank!). */
static inline void tg_perm(int rank, int p, int *perm) {
  int left[4] = {0, 1, 2, 3}, n = rank, fact = 1;
  for (int i = 2; i < rank; i++) fact *= i;
  for (int i = 0; i < rank; i++) {
    int j = p / fact;
    p %= fact;
    perm[i] = left[j];
    memmove(left + j, left + j + 1, (size_t)(n - j - 1) * sizeof *left);
    n--;
    if (n > 0) fact /= n;
  }
}

static inline int tg_perms(int rank) {
  return rank == 2 ? 2 : rank == 3 ? 6 : 24;
}

/* Whether perm moves the innermost axis (then the kernel is tiled). */
static inline bool tg_moves_inner(int rank, const int *perm) {
  return perm[rank - 1] != rank - 1;
}

/* Permutations that keep a short run of trailing axes (docs/fusion.md,
 * "Tiled transposes"): tiled when the run is 2 or 4 values of fewer than
 * 16 bytes, the run part of each tile element; odd extents (partial tiles,
 * lanes that do not fill 16 bytes) and even ones (16-byte accesses). */
typedef struct tg_run_case {
  int rank;
  int perm[4];
  int64_t out[4];
  kf_dtype dt;
  bool tiled;
} tg_run_case;
static const tg_run_case TG_RUNS[] = {
    {4, {1, 2, 0, 3}, {13, 41, 37, 2}, KF_BF16, true}, /* fam26's permutation, odd */
    {4, {1, 2, 0, 3}, {8, 64, 40, 2}, KF_BF16, true},  /* even: 8 lanes, 16 bytes */
    {3, {1, 0, 2}, {45, 37, 2}, KF_F32, true},         /* 8-byte run */
    {3, {1, 0, 2}, {40, 24, 4}, KF_F16, true},         /* 4 values */
    {4, {1, 0, 2, 3}, {24, 40, 2, 2}, KF_F16, true},   /* two kept axes, one run of 4 */
    {3, {2, 0, 1}, {9, 11, 2}, KF_F16, false},         /* moves the innermost axis: not a run */
    {3, {1, 0, 2}, {40, 24, 4}, KF_F32, false},        /* 16 bytes: whole words already */
    {3, {1, 0, 2}, {40, 24, 3}, KF_BF16, false},       /* 3 values: not a power of two */
    {3, {1, 0, 2}, {40, 7, 2}, KF_F32, false},         /* tiled extent under 8 */
};
#define TG_N_RUNS ((int)(sizeof TG_RUNS / sizeof TG_RUNS[0]))

/* o = relu(transpose(x * 1.5, perm) + y), and t = transpose(x * 1.5, perm)
 * as a second output; out: [B, ...] the output shape. NULL on error. */
static inline kf_graph *tg_graph(kf_ctx *ctx, int rank, const int *perm, const int64_t *out,
                                 kf_dtype dt) {
  kf_graph *g = NULL;
  if (kf_graph_create(ctx, &g) != KF_OK) return NULL;
  int64_t in[4];
  for (int i = 0; i < rank; i++) in[perm[i]] = out[i]; /* output axis i is x's axis perm[i] */
  kf_value x = kf_input(g, "x", dt, rank, in);
  kf_value y = kf_input(g, "y", dt, rank, out);
  kf_value t = kf_transpose(g, kf_mul(g, x, kf_scalar(g, 1.5, dt)), perm);
  kf_value o = kf_relu(g, kf_add(g, t, y));
  kf_set_output(g, o);
  kf_set_output(g, t);
  return g;
}

/* "f16 rank 3 perm [0,2,1] out [9,35,41]" */
static inline void tg_name(int rank, const int *perm, const int64_t *out, kf_dtype dt, char *buf,
                           size_t size) {
  size_t n = (size_t)snprintf(buf, size, "%s rank %d perm [", kf_dtype_name(dt), rank);
  for (int i = 0; i < rank && n < size; i++)
    n += (size_t)snprintf(buf + n, size - n, "%s%d", i ? "," : "", perm[i]);
  if (n < size) n += (size_t)snprintf(buf + n, size - n, "] out [");
  for (int i = 0; i < rank && n < size; i++)
    n += (size_t)snprintf(buf + n, size - n, "%s%lld", i ? "," : "", (long long)out[i]);
  if (n < size) snprintf(buf + n, size - n, "]");
}

#endif
