/* test_layout_chains.c - chains of reshapes and transposes plan, emit and
 * compile (NVRTC, sm_90) at any depth, and their source grows linearly:
 * codegen once truncated the index expressions of such chains in fixed
 * buffers (NVRTC: "expected an expression", the GPT-2 graph of issue 18),
 * and a reshape of a transpose roughly doubles the expression. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "kfuse.h"

typedef enum { POINTWISE, SUM, SOFTMAX } chain_tail;

/* The issue's reproducer: f32 [64, 8192]; `rounds` times reshape to
 * [64, 2, 4096], transpose [0, 2, 1], reshape back; then exp (POINTWISE),
 * a sum over the last axis (SUM, a reduce kernel) or a softmax (a row
 * kernel). */
static kf_graph *issue_chain(int rounds, chain_tail tail) {
  kf_graph *g = NULL;
  ck_assert_int_eq(kf_graph_create(NULL, &g), KF_OK);
  int64_t s2[2] = {64, 8192}, s3[3] = {64, 2, 4096};
  int perm[3] = {0, 2, 1}, ax = -1;
  kf_value x = kf_input(g, "x", KF_F32, 2, s2);
  for (int r = 0; r < rounds; r++)
    x = kf_reshape(g, kf_transpose(g, kf_reshape(g, x, 3, s3), perm), 2, s2);
  if (tail == POINTWISE) x = kf_exp(g, x);
  if (tail == SUM) x = kf_sum(g, x, 1, &ax, false);
  if (tail == SOFTMAX) x = kf_softmax(g, x, -1);
  ck_assert_int_eq(kf_set_output(g, x), KF_OK);
  ck_assert_msg(kf_graph_status(g) == KF_OK, "%s", kf_graph_errmsg(g));
  return g;
}

/* Rank 3-5: `rounds` times a transpose by perm (its shape permuted), then a
 * reshape back to the input's shape (a reshape of a transpose whose dims do
 * not line up), then tanh. */
static kf_graph *perm_chain(int rank, const int64_t *shape, const int *perm, int rounds) {
  kf_graph *g = NULL;
  ck_assert_int_eq(kf_graph_create(NULL, &g), KF_OK);
  kf_value x = kf_input(g, "x", KF_F32, rank, shape);
  for (int r = 0; r < rounds; r++) x = kf_reshape(g, kf_transpose(g, x, perm), rank, shape);
  ck_assert_int_eq(kf_set_output(g, kf_tanh(g, x)), KF_OK);
  ck_assert_msg(kf_graph_status(g) == KF_OK, "%s", kf_graph_errmsg(g));
  return g;
}

typedef struct emitted {
  size_t bytes, longest_line;
} emitted;

static size_t longest_line(const char *s) {
  size_t best = 0;
  while (*s) {
    size_t n = strcspn(s, "\n");
    if (n > best) best = n;
    s += n + (s[n] != '\0');
  }
  return best;
}

/* Plans, emits every launch and compiles for sm_90; the source's size. */
static emitted build_all(kf_graph *g) {
  kf_options opt;
  kf_options_init(&opt);
  opt.arch = "sm_90";
  kf_ctx *ctx = NULL;
  ck_assert_int_eq(kf_ctx_create(&ctx), KF_OK);
  kf_ctx_set_log(ctx, NULL, NULL);
  kf_plan *plan = NULL;
  ck_assert_msg(kf_plan_create(ctx, g, &opt, &plan) == KF_OK, "plan: %s", kf_ctx_errmsg(ctx));
  emitted e = {0};
  for (int L = 0; L < kf_plan_num_launches(plan); L++) {
    char *src = kf_plan_source(plan, L, "sm_90");
    ck_assert_msg(src != NULL, "emit: %s", kf_plan_errmsg(plan));
    e.bytes += strlen(src);
    size_t n = longest_line(src);
    if (n > e.longest_line) e.longest_line = n;
    kf_free(src);
  }
  ck_assert_msg(kf_plan_compile(plan) == KF_OK, "compile: %s", kf_plan_errmsg(plan));
  kf_plan_destroy(plan);
  kf_ctx_destroy(ctx);
  return e;
}

/* Source linear in rounds: doubling the rounds adds at most 2.5 times what
 * the previous doubling added (an expression that doubles per round adds
 * squares); and no line passes 4 KB (expressions bounded). */
static void assert_linear(const char *what, emitted a, emitted b, emitted c) {
  double d1 = (double)b.bytes - (double)a.bytes, d2 = (double)c.bytes - (double)b.bytes;
  ck_assert_msg(d2 <= 2.5 * (d1 > 0 ? d1 : 0) + 2048.0,
                "%s: %zu, %zu, %zu bytes at 1x, 2x, 4x the rounds", what, a.bytes, b.bytes,
                c.bytes);
  ck_assert_msg(c.longest_line <= 4096, "%s: a line of %zu bytes", what, c.longest_line);
}

static void issue_family(chain_tail tail, const char *what) {
  emitted e[3];
  int rounds[3] = {8, 16, 32};
  for (int i = 0; i < 3; i++) {
    kf_graph *g = issue_chain(rounds[i], tail);
    e[i] = build_all(g);
    kf_graph_destroy(g);
  }
  assert_linear(what, e[0], e[1], e[2]);
}

/* The issue's reproducer (8 rounds, then exp) and 16 and 32 rounds. */
START_TEST(issue_reproducer_compiles) {
  issue_family(POINTWISE, "reshape/transpose then exp");
}
END_TEST

/* The same chains feeding a reduce kernel and a row kernel. */
START_TEST(chain_into_sum_compiles) {
  issue_family(SUM, "reshape/transpose then sum");
}
END_TEST

START_TEST(chain_into_softmax_compiles) {
  issue_family(SOFTMAX, "reshape/transpose then softmax");
}
END_TEST

/* Mixed permutations on ranks 3 to 5, 6, 12 and 24 rounds. */
START_TEST(mixed_permutations_compile) {
  static const int64_t shapes[3][5] = {{6, 10, 14}, {4, 6, 10, 14}, {2, 3, 4, 5, 14}};
  static const int perms[3][5] = {{2, 0, 1}, {1, 3, 0, 2}, {4, 2, 0, 3, 1}};
  for (int i = 0; i < 3; i++) {
    emitted e[3];
    int rounds[3] = {6, 12, 24};
    for (int j = 0; j < 3; j++) {
      kf_graph *g = perm_chain(3 + i, shapes[i], perms[i], rounds[j]);
      e[j] = build_all(g);
      kf_graph_destroy(g);
    }
    char what[32];
    snprintf(what, sizeof what, "rank %d permutations", 3 + i);
    assert_linear(what, e[0], e[1], e[2]);
  }
}
END_TEST

static Suite *make_suite(void) {
  /* every graph compiles: no disk cache to answer for NVRTC */
  setenv("KFUSE_DISK_CACHE", "0", 1);
  Suite *s = suite_create("layout_chains");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, issue_reproducer_compiles);
  tcase_add_test(tc, chain_into_sum_compiles);
  tcase_add_test(tc, chain_into_softmax_compiles);
  tcase_add_test(tc, mixed_permutations_compile);
  suite_add_tcase(s, tc);
  return s;
}
