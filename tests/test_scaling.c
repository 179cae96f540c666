/* test_scaling.c - code and recomputation grow linearly in nodes: residual
 * ladders, chains and diamonds planned and emitted at two sizes (counts of
 * emitted calls and bytes, not timings; bench/bench_scale.c times them). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "codegen/codegen.h"
#include "codegen/emit.h"
#include "codegen/target.h"
#include "fuser/fuse.h"
#include "fuser/legal.h"
#include "fuser/plan.h"
#include "fuser/recompute.h"
#include "kfuse.h"

typedef enum { LADDER, CHAIN, DIAMOND } shape_kind;

/* N blocks on a 64x64 f32 tensor: LADDER x = x + exp(x) / sum(exp(x), -1)
 * (4 nodes), CHAIN x = tanh(exp(x)) (2), DIAMOND x = exp(x) * neg(x) (3). */
static kf_graph *build(shape_kind kind, int n) {
  kf_graph *g = NULL;
  ck_assert_int_eq(kf_graph_create(NULL, &g), KF_OK);
  int64_t s[2] = {64, 64};
  kf_value x = kf_input(g, "x", KF_F32, 2, s);
  int ax = -1;
  for (int i = 0; i < n; i++) {
    if (kind == LADDER) {
      kf_value e = kf_exp(g, x);
      x = kf_add(g, kf_div(g, e, kf_sum(g, e, 1, &ax, true)), x);
    } else if (kind == CHAIN) {
      x = kf_tanh(g, kf_exp(g, x));
    } else {
      x = kf_mul(g, kf_exp(g, x), kf_neg(g, x));
    }
  }
  ck_assert_int_eq(kf_set_output(g, x), KF_OK);
  ck_assert_int_eq(kf_graph_status(g), KF_OK);
  return g;
}

static fuse_plan *plan_of(const kf_graph *g, int max_recompute) {
  fuse_options o;
  fuse_options_default(&o);
  if (max_recompute) o.max_recompute = max_recompute;
  fuse_plan *p = NULL;
  char err[256];
  ck_assert_msg(fuse_plan_build(g, &o, &p, err, sizeof err) == KF_OK, "%s", err);
  return p;
}

static int count(const char *s, const char *needle) {
  int n = 0;
  for (const char *p = s ? strstr(s, needle) : NULL; p; p = strstr(p + 1, needle)) n++;
  return n;
}

/* What the plan's launches emit, in all. */
typedef struct emitted {
  size_t bytes;
  int exps, adds; /* kf_exp( calls; kf_add( calls in held row bodies */
} emitted;

static emitted emit_all(const kf_graph *g, const fuse_plan *p) {
  cg_target t;
  ck_assert(cg_target_from_arch("sm_90", &t));
  emitted e = {0};
  for (int L = 0; L < p->n_launches; L++) {
    cg_launch_src src;
    char err[256];
    ck_assert_msg(cg_emit_launch(g, p, L, &t, &src, err, sizeof err) == KF_OK, "%s", err);
    e.bytes += strlen(src.source);
    e.exps += count(src.source, "kf_exp(");
    /* the held row body: from its template's "_row(" to the fallback */
    const char *hot = strstr(src.source, "_row(int r");
    const char *end = hot ? strstr(hot, "_row1(int r") : NULL;
    if (hot && end) {
      char *body = strndup(hot, (size_t)(end - hot));
      e.adds += count(body, "kf_add(");
      free(body);
    }
    cg_launch_src_free(&src);
  }
  return e;
}

/* Per block, the big graph may emit at most 25% more than the small one:
 * quadratic growth (x8 here) fails it. */
static void assert_linear(const char *what, double small, int n_small, double big, int n_big) {
  double a = small / n_small, b = big / n_big;
  ck_assert_msg(b <= 1.25 * a + 1.0, "%s: %.1f per block at N=%d, %.1f at N=%d", what, a, n_small,
                b, n_big);
}

/* The ladder: 4,356 kf_exp calls for 64 exps (68 per exp) where
 * N=8 emitted 64 (8 per exp). */
START_TEST(ladder_code_is_linear) {
  kf_graph *g8 = build(LADDER, 8), *g64 = build(LADDER, 64);
  fuse_plan *p8 = plan_of(g8, 0), *p64 = plan_of(g64, 0);
  emitted e8 = emit_all(g8, p8), e64 = emit_all(g64, p64);
  assert_linear("ladder kf_exp calls", e8.exps, 8, e64.exps, 64);
  assert_linear("ladder source bytes", (double)e8.bytes, 8, (double)e64.bytes, 64);
  fuse_plan_free(p8);
  fuse_plan_free(p64);
  kf_graph_destroy(g8);
  kf_graph_destroy(g64);
}
END_TEST

/* Every row kernel's passes compute at most max_recompute values per node
 * (recounted here), and the split is logged as rule recompute-limit. */
START_TEST(ladder_recompute_is_bounded) {
  kf_graph *g = build(LADDER, 64);
  fuse_plan *p = plan_of(g, 0);
  ck_assert_int_gt(p->n_kernels, 1);
  bool logged = false;
  for (int i = 0; i < p->n_decisions; i++)
    logged |= !p->decisions[i].accepted && !strcmp(p->decisions[i].rule, "recompute-limit");
  ck_assert_msg(logged, "no recompute-limit decision");
  fuse_legal_ctx lc;
  ck_assert(fuse_legal_init(&lc, g, &p->options));
  for (int k = 0; k < p->n_kernels; k++) {
    const fuse_kernel *K = &p->kernels[k];
    if (K->kind != FK_ROW) continue;
    uint8_t is_out[512] = {0};
    ck_assert_int_le(K->n_nodes, 512);
    fuse_marks_clear(&lc.members);
    for (int i = 0; i < K->n_nodes; i++) {
      fuse_mark(&lc.members, K->nodes[i], i);
      for (int j = 0; j < K->n_outputs; j++) is_out[i] |= K->outputs[j] == K->nodes[i];
    }
    fuse_set set = {.nodes = K->nodes, .is_out = is_out, .n = K->n_nodes};
    int64_t evals = fuse_row_evals(&lc, &set, INT64_MAX / 2);
    ck_assert_msg(evals <= (int64_t)p->options.max_recompute * K->n_nodes,
                  "%s: %lld evaluations for %d nodes", K->name, (long long)evals, K->n_nodes);
  }
  fuse_legal_free(&lc);
  fuse_plan_free(p);
  /* without the rule the ladder is one row kernel */
  p = plan_of(g, 1 << 20);
  ck_assert_int_eq(p->n_kernels, 1);
  fuse_plan_free(p);
  kf_graph_destroy(g);
}
END_TEST

/* A held row computes each expensive value once: the ladder fused whole
 * (the fuser's rule lifted) has O(N) adds in its register-held body, not
 * the running sum's earlier steps again in every phase (N=4: 14 adds,
 * N=12: 90 before; 11 and 36 now). N stays small enough that every kept
 * value fits the row's register room (64x64 f32, 4 columns a thread). */
START_TEST(held_row_keeps_values_across_phases) {
  kf_graph *g8 = build(LADDER, 4), *g32 = build(LADDER, 12);
  fuse_plan *p8 = plan_of(g8, 1 << 20), *p32 = plan_of(g32, 1 << 20);
  ck_assert_int_eq(p8->n_kernels, 1);
  ck_assert_int_eq(p32->n_kernels, 1);
  emitted e8 = emit_all(g8, p8), e32 = emit_all(g32, p32);
  ck_assert_int_gt(e8.adds, 0);
  assert_linear("held row kf_add calls", e8.adds, 4, e32.adds, 12);
  fuse_plan_free(p8);
  fuse_plan_free(p32);
  kf_graph_destroy(g8);
  kf_graph_destroy(g32);
}
END_TEST

/* Chains and diamonds: pointwise kernels, one statement per node. */
START_TEST(chain_and_diamond_code_is_linear) {
  for (shape_kind kind = CHAIN; kind <= DIAMOND; kind++) {
    kf_graph *gs = build(kind, 32), *gb = build(kind, 1024);
    fuse_plan *ps = plan_of(gs, 0), *pb = plan_of(gb, 0);
    emitted es = emit_all(gs, ps), eb = emit_all(gb, pb);
    assert_linear(kind == CHAIN ? "chain kf_exp calls" : "diamond kf_exp calls", es.exps, 32,
                  eb.exps, 1024);
    /* the per-launch header is amortized over more nodes in the big graph */
    assert_linear(kind == CHAIN ? "chain bytes" : "diamond bytes", (double)es.bytes, 32,
                  (double)eb.bytes, 1024);
    fuse_plan_free(ps);
    fuse_plan_free(pb);
    kf_graph_destroy(gs);
    kf_graph_destroy(gb);
  }
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("scaling");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, ladder_code_is_linear);
  tcase_add_test(tc, ladder_recompute_is_bounded);
  tcase_add_test(tc, held_row_keeps_values_across_phases);
  tcase_add_test(tc, chain_and_diamond_code_is_linear);
  suite_add_tcase(s, tc);
  return s;
}
