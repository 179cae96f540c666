/* test_attention.c - the attention recognizer (fuser/attention.c): what it
 * takes (the composite and a hand-written softmax alike, causal masks from
 * iota, grouped-query and multi-query heads) and what it refuses, with the
 * reasons, and the plans it gives (one launch; the decision log's lines). */
#include <math.h>
#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn_graphs.h"
#include "check_main.h"
#include "codegen/codegen.h"
#include "codegen/emit.h"
#include "codegen/target.h"
#include "core/knobs.h"
#include "fuser/fuse.h"
#include "fuser/occ_model.h"
#include "fuser/render.h"
#include "fuser_util.h"

static int32_t last_matmul(const kf_graph *g) {
  for (int32_t v = g->n_nodes - 1; v >= 0; v--)
    if (g->nodes[v].op == IR_OP_MATMUL) return v;
  return -1;
}

static bool find(const kf_graph *g, fuse_attn *a, int32_t *n, char *why) {
  int32_t nodes[FUSE_ATTN_MAX_NODES];
  bool seen = false;
  bool ok = fuse_attn_find(g, last_matmul(g), a, nodes, n, &seen, why, 256);
  if (ok) {
    char w2[256];
    ck_assert_msg(fuse_attn_match(g, nodes, *n, a, w2, sizeof w2), "%s", w2);
  }
  return ok;
}

static const fuse_decision *decision(const fuse_plan *p, const char *rule, bool accepted) {
  for (int32_t i = 0; i < p->n_decisions; i++)
    if (!strcmp(p->decisions[i].rule, rule) && p->decisions[i].accepted == accepted)
      return &p->decisions[i];
  return NULL;
}

/* p logged an attention decision (accepted or refused) saying text. */
static void expect_decision(const fuse_plan *p, bool accepted, const char *text) {
  const fuse_decision *d = decision(p, "attention", accepted);
  ck_assert_ptr_nonnull(d);
  ck_assert_msg(strstr(d->text, text) != NULL, "%s", d->text);
}

/* The plan of g: one attention kernel in one launch (or not), invariants held. */
static fuse_plan *plan_of(const kf_graph *g, bool one) {
  fuse_plan *p = fz_plan(g);
  ck_assert_ptr_nonnull(p);
  char why[512];
  ck_assert_msg(fz_check_plan(g, p, why, sizeof why), "%s", why);
  int n_attn = 0;
  for (int32_t i = 0; i < p->n_kernels; i++) {
    n_attn += p->kernels[i].kind == FK_ATTENTION;
    ck_assert_msg(fuse_kernel_legal(p, i, why, sizeof why), "%s", why);
  }
  ck_assert_int_eq(n_attn, one ? 1 : 0);
  if (one) ck_assert_int_eq(p->n_launches, 1);
  return p;
}

START_TEST(composite_and_hand_match_alike) {
  attn_spec s = attn_base();
  kf_graph *g1 = attn_build(&s);
  s.hand = true;
  kf_graph *g2 = attn_build(&s);
  fuse_attn a1, a2;
  int32_t n1, n2;
  char why[256];
  ck_assert_msg(find(g1, &a1, &n1, why), "%s", why);
  ck_assert_msg(find(g2, &a2, &n2, why), "%s", why);
  ck_assert_int_eq(a1.sq, 40);
  ck_assert_int_eq(a1.sk, 72);
  ck_assert_int_eq(a1.d, 64);
  ck_assert_int_eq(a1.batch, 8);
  ck_assert_int_eq(a2.batch, 8);
  ck_assert(!a1.causal && !a2.causal);
  ck_assert_int_eq(a1.dtype, KF_BF16);
  /* the hand-written form adds the reshape that re-broadcasts the max */
  ck_assert_int_eq(n2, n1 + 1);
  for (int i = 0; i < 2; i++) {
    fuse_plan *p = plan_of(i ? g2 : g1, true);
    ck_assert_ptr_nonnull(decision(p, "attention", true));
    ck_assert_int_eq(p->workspace_bytes, 0);
    /* occupancy feedback never splits it (its low occupancy is by design) */
    ck_assert_ptr_null(fuse_occ_splittable(p, 0));
    fuse_plan_free(p);
  }
  kf_graph_destroy(g1);
  kf_graph_destroy(g2);
}
END_TEST

START_TEST(causal_from_iota) {
  struct {
    int mask;
    int64_t shift;
    bool causal;
    int64_t off;
  } cases[] = {{2, 0, true, 0}, {2, 3, true, 3},  {2, -5, true, -5},
               {3, 0, true, 0}, {1, 0, false, 0}, {0, 0, false, 0}};
  for (int i = 0; i < 6; i++) {
    attn_spec s = attn_base();
    s.mask = cases[i].mask;
    s.shift = cases[i].shift;
    kf_graph *g = attn_build(&s);
    fuse_attn a;
    int32_t n;
    char why[256];
    ck_assert_msg(find(g, &a, &n, why), "case %d: %s", i, why);
    ck_assert_msg(a.causal == cases[i].causal, "case %d", i);
    if (a.causal) ck_assert_int_eq(a.causal_off, cases[i].off);
    ck_assert_int_eq(a.n_chain, cases[i].mask ? 3 : 2); /* the scale, [the where,] the cast */
    /* the iota nodes and the comparison are computed in the kernel: it
     * reads graph inputs only */
    fuse_plan *p = plan_of(g, true);
    for (int32_t j = 0; j < p->kernels[0].n_inputs; j++)
      ck_assert_int_eq(g->nodes[p->kernels[0].inputs[j]].op, IR_OP_INPUT);
    fuse_plan_free(p);
    kf_graph_destroy(g);
  }
}
END_TEST

START_TEST(grouped_and_multi_query) {
  for (int form = 0; form < 2; form++) {
    attn_spec s = attn_base();
    s.h = 8;
    s.hk = form ? 1 : 2;
    s.gqa_reshape = form == 0; /* form 1: k [B,1,S,D], the product broadcasts */
    kf_graph *g = attn_build(&s);
    fuse_attn a;
    int32_t n;
    char why[256];
    ck_assert_msg(find(g, &a, &n, why), "form %d: %s", form, why);
    ck_assert_int_eq(a.batch, 16);
    fuse_plan *p = plan_of(g, true);
    /* k and v are read as stored (never broadcast in memory) */
    const fuse_kernel *k = &p->kernels[0];
    for (int32_t i = 0; i < k->n_inputs; i++)
      ck_assert_int_eq(g->nodes[k->inputs[i]].op, IR_OP_INPUT);
    fuse_plan_free(p);
    kf_graph_destroy(g);
  }
}
END_TEST

/* What the recognizer refuses, the reason, and the plan's log line. */
static void refused(const attn_spec *s, const char *reason, bool logged) {
  kf_graph *g = attn_build(s);
  fuse_attn a;
  int32_t n;
  char why[256] = "";
  bool found = find(g, &a, &n, why);
  if (found) ck_assert(!fuse_attn_fits(&a, why, sizeof why));
  ck_assert_msg(strstr(why, reason) != NULL, "reason '%s', wanted '%s'", why, reason);
  fuse_plan *p = plan_of(g, false);
  if (logged)
    expect_decision(p, false, reason);
  else
    ck_assert_ptr_null(decision(p, "attention", false));
  fuse_plan_free(p);
  kf_graph_destroy(g);
}

START_TEST(refusals_with_reasons) {
  attn_spec s = attn_base();
  s.dt = KF_F32;
  refused(&s, "not f16 or bf16", true);
  s = attn_base();
  s.d = 96;
  refused(&s, "head dim 96", true);
  s = attn_base();
  s.scores_out = true;
  refused(&s, "read outside the pattern or is an output", true);
  s = attn_base();
  s.axis = -2; /* the softmax over the queries: not the pattern, not logged */
  refused(&s, "is not a softmax", false);
}
END_TEST

/* A logsumexp of the softmax's scores joins the match as its second
 * output, in each form (docs/attention.md): one kernel writing o and L. */
START_TEST(takes_logsumexp) {
  static const struct {
    int lse;
    bool hand, guard;
    kf_dtype dt;
  } cases[] = {{1, false, true, KF_F32},
               {2, false, true, KF_BF16},
               {3, true, false, KF_F32},
               {4, false, true, KF_F32},
               {1, true, true, KF_F32}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    attn_spec s = attn_base();
    s.lse = cases[i].lse, s.hand = cases[i].hand;
    s.mask = 2; /* causal: the match keeps its causal structure */
    kf_graph *g = attn_build(&s);
    fuse_attn a;
    int32_t n;
    char why[256] = "";
    ck_assert_msg(find(g, &a, &n, why), "case %zu: %s", i, why);
    ck_assert_int_eq(a.lse, kf_graph_output(g, 1));
    ck_assert_int_eq(a.lse_dtype, cases[i].dt);
    ck_assert_int_eq(a.lse_guard, cases[i].guard);
    ck_assert(a.causal);
    ck_assert_msg(fuse_attn_fits(&a, why, sizeof why), "%s", why);
    fuse_plan *p = plan_of(g, true);
    ck_assert_int_eq(p->n_kernels, 1);
    ck_assert_int_eq(p->kernels[0].n_outputs, 2);
    ck_assert_int_eq(p->kernels[0].attn.lse, a.lse);
    expect_decision(p, true, "writing the logsumexp");
    fuse_plan_free(p);
    kf_graph_destroy(g);
  }
}
END_TEST

/* A logsumexp the kernel cannot write: over another axis (it reads the
 * scores outside the pattern: no flash kernel, every op in kernels of
 * its own kinds), or in f64 (the fit says so). */
START_TEST(refuses_logsumexp) {
  attn_spec s = attn_base();
  s.lse = 5;
  refused(&s, "read outside the pattern or is an output", true);
  s = attn_base();
  s.lse = 1;
  kf_graph *g = attn_build(&s);
  fuse_attn a;
  int32_t n;
  char why[256] = "";
  ck_assert_msg(find(g, &a, &n, why), "%s", why);
  a.lse_dtype = KF_F64;
  ck_assert(!fuse_attn_fits(&a, why, sizeof why));
  ck_assert_msg(strstr(why, "the logsumexp is written as f64") != NULL, "%s", why);
  kf_graph_destroy(g);
}
END_TEST

/* L read by another op (here a cast to f64) is written by the flash
 * kernel and read back from memory by that op's kernel. */
START_TEST(logsumexp_with_a_consumer) {
  attn_spec s = attn_base();
  s.lse = 6;
  kf_graph *g = attn_build(&s);
  fuse_attn a;
  int32_t n;
  char why[256] = "";
  ck_assert_msg(find(g, &a, &n, why), "%s", why);
  ck_assert_int_eq(a.lse_dtype, KF_F32);
  ck_assert_int_eq(g->nodes[kf_graph_output(g, 1)].args[0], a.lse);
  fuse_plan *p = fz_plan(g);
  ck_assert_ptr_nonnull(p);
  ck_assert_msg(fz_check_plan(g, p, why, sizeof why), "%s", why);
  ck_assert_int_eq(p->n_kernels, 2);
  ck_assert_int_eq(p->n_launches, 2);
  ck_assert_int_eq(p->kernels[p->kernel_of[a.lse]].kind, FK_ATTENTION);
  ck_assert_int_ne(p->kernel_of[kf_graph_output(g, 1)], p->kernel_of[a.lse]);
  fuse_plan_free(p);
  kf_graph_destroy(g);
}
END_TEST

/* A side value that is no pointwise function (a bias from a reduction) is
 * read from memory: its own kernel, then attention. */
START_TEST(side_value_from_another_kernel) {
  kf_graph *g = NULL;
  ck_assert_int_eq(kf_graph_create(NULL, &g), KF_OK);
  int64_t qs[4] = {1, 2, 32, 64}, bs[3] = {32, 48, 5};
  int perm[4] = {0, 1, 3, 2}, last = 2;
  kf_value q = kf_input(g, "q", KF_BF16, 4, qs);
  kf_value k = kf_input(g, "k", KF_BF16, 4, (int64_t[4]){1, 2, 48, 64});
  kf_value v = kf_input(g, "v", KF_BF16, 4, (int64_t[4]){1, 2, 48, 64});
  kf_value bias = kf_sum(g, kf_input(g, "b", KF_BF16, 3, bs), 1, &last, false);
  kf_value x = kf_add(g, kf_matmul(g, q, kf_transpose(g, k, perm)), bias);
  kf_set_output(g, kf_matmul(g, kf_softmax(g, x, -1), v));
  fuse_plan *p = fz_plan(g);
  char why[512];
  ck_assert_msg(fz_check_plan(g, p, why, sizeof why), "%s", why);
  ck_assert_int_eq(p->kernels[p->kernel_of[g->n_nodes - 1]].kind, FK_ATTENTION);
  ck_assert_int_eq(p->n_kernels, 2);
  ck_assert_int_eq(p->n_launches, 2);
  fuse_plan_free(p);
  kf_graph_destroy(g);
}
END_TEST

START_TEST(refuses_k_laid_out_transposed) {
  kf_graph *g = NULL;
  ck_assert_int_eq(kf_graph_create(NULL, &g), KF_OK);
  int64_t qs[4] = {1, 2, 32, 64}, kts[4] = {1, 2, 64, 48}, vs[4] = {1, 2, 48, 64};
  kf_value q = kf_input(g, "q", KF_F16, 4, qs);
  kf_value kt = kf_input(g, "kt", KF_F16, 4, kts);
  kf_value v = kf_input(g, "v", KF_F16, 4, vs);
  kf_set_output(g, kf_matmul(g, kf_softmax(g, kf_matmul(g, q, kt), -1), v));
  fuse_attn a;
  int32_t n;
  char why[256];
  ck_assert_msg(find(g, &a, &n, why), "%s", why);
  ck_assert(a.kt_stored && a.k == -1);
  ck_assert(!fuse_attn_fits(&a, why, sizeof why));
  ck_assert_msg(strstr(why, "k is laid out transposed") != NULL, "%s", why);
  fuse_plan *p = plan_of(g, false);
  expect_decision(p, false, "k is laid out transposed");
  fuse_plan_free(p);
  kf_graph_destroy(g);
}
END_TEST

START_TEST(match_is_exact) {
  attn_spec s = attn_base();
  kf_graph *g = attn_build(&s);
  int32_t nodes[FUSE_ATTN_MAX_NODES + 1], n = 0;
  fuse_attn a;
  bool seen;
  char why[256];
  ck_assert(fuse_attn_find(g, last_matmul(g), &a, nodes, &n, &seen, why, sizeof why));
  ck_assert(fuse_attn_match(g, nodes, n, &a, why, sizeof why));
  /* one node short: the kt transpose (nodes[0] is the first non-input) */
  ck_assert(!fuse_attn_match(g, nodes + 1, n - 1, &a, why, sizeof why));
  ck_assert_msg(strstr(why, "is missing from") != NULL, "%s", why);
  /* not a product at all */
  ck_assert(!fuse_attn_find(g, 0, &a, nodes, &n, &seen, why, sizeof why));
  ck_assert(!seen);
  kf_graph_destroy(g);
}
END_TEST

START_TEST(example_graph_one_launch) {
  kf_graph *g = NULL;
  ck_assert_int_eq(kf_graph_load_yaml(NULL, KFUSE_SOURCE_DIR "/examples/graphs/attention.yaml", &g),
                   KF_OK);
  fuse_plan *p = plan_of(g, true);
  ck_assert(p->kernels[0].attn.causal == false); /* its mask is an input */
  /* the renderings know the kind (the dot colors were a table of 4 kinds:
   * an out-of-bounds read for attention, found by UBSan) */
  char *dot = fuse_plan_dot(p), *text = fuse_plan_text(p), *json = fuse_plan_json(p);
  ck_assert_ptr_nonnull(dot);
  ck_assert_msg(strstr(dot, "fillcolor=\"#f3e8fd\"") != NULL, "%s", dot);
  ck_assert_ptr_nonnull(strstr(text, "k0_attention: attention, batch 64 x queries 1024"));
  ck_assert_ptr_nonnull(strstr(json, "\"kind\":\"attention\""));
  free(dot), free(text), free(json);
  fuse_plan_free(p);
  kf_graph_destroy(g);
}
END_TEST

/* Compiles the one launch of s's plan with NVRTC for arch; prints the
 * registers and checks that head dims up to 128 do not spill. The
 * mma.sync kernel on sm_90a too (KFUSE_ATTN90=0: the Hopper kernel is
 * test_attention90's). */
static void compile_for(const attn_spec *s, const char *arch) {
  kf_graph *g = attn_build(s);
  fuse_plan *p = plan_of(g, true);
  cg_target t;
  ck_assert(cg_target_from_arch(arch, &t));
  core_knobs kn = *core_knobs_quiet();
  kn.attn90 = 0;
  t.knobs = &kn;
  cg_launch_src src;
  char err[512] = "";
  kf_status st = cg_emit_launch(g, p, 0, &t, &src, err, sizeof err);
  ck_assert_msg(st == KF_OK, "%s: %s", kf_status_name(st), err);
  ck_assert_int_eq(src.block, 128);
  ck_assert_int_eq(src.smem_bytes, (64 + 4 * (s->d > 128 ? 32 : 64)) * s->d * 2);
  nvrtcProgram prog;
  /* the logsumexp variant calls its store; the default has none */
  ck_assert((strstr(src.source, "_lse(") != NULL) == (s->lse != 0));
  ck_assert_int_eq(nvrtcCreateProgram(&prog, src.source, "attn.cu", 0, NULL, NULL), NVRTC_SUCCESS);
  char gpu[64];
  snprintf(gpu, sizeof gpu, "--gpu-architecture=%s", arch);
  const char *opts[] = {gpu, "--std=c++17", "--ptxas-options=-v"};
  nvrtcResult r = nvrtcCompileProgram(prog, 3, opts);
  size_t n = 0;
  nvrtcGetProgramLogSize(prog, &n);
  char *log = malloc(n + 1);
  ck_assert_ptr_nonnull(log);
  nvrtcGetProgramLog(prog, log);
  ck_assert_msg(r == NVRTC_SUCCESS, "%s:\n%s", arch, log);
  const char *used = strstr(log, "Used ");
  const char *spill = strstr(log, "bytes spill stores");
  fprintf(stderr, "attention %s %s d%lld: %.40s | %.24s\n", arch, s->dt == KF_BF16 ? "bf16" : "f16",
          (long long)s->d, used ? used : "?", spill ? spill - 12 : "?");
  if (s->d <= 128) ck_assert_msg(spill && strstr(spill - 12, " 0 bytes spill"), "%s", log);
  free(log);
  nvrtcDestroyProgram(&prog);
  cg_launch_src_free(&src);
  fuse_plan_free(p);
  kf_graph_destroy(g);
}

/* Every variant of the kernel (dtypes, head dims, masks, GQA, modifiers,
 * odd and unequal lengths) compiles for sm_80 and sm_90a. */
START_TEST(nvrtc_every_variant) {
  attn_spec v[8];
  for (int i = 0; i < 8; i++) v[i] = attn_base();
  v[0].d = 128, v[0].sq = v[0].sk = 2048, v[0].h = v[0].hk = 16; /* the bench shape */
  v[1].dt = KF_F16, v[1].mask = 1, v[1].sq = 37, v[1].sk = 77;   /* bool mask, odd */
  v[2].d = 256, v[2].mask = 2;                                   /* causal */
  v[3].dt = KF_F16, v[3].d = 128, v[3].h = 8, v[3].hk = 2, v[3].mask = 2, v[3].shift = 5;
  /* MQA, soft-cap; 21 queries (16 or fewer take the decode kernel:
   * test_attention_decode) */
  v[4].h = 8, v[4].hk = 1, v[4].gqa_reshape = false, v[4].modifier = 1, v[4].sq = 21,
  v[4].sk = 300;
  v[5].dt = KF_F16, v[5].d = 256, v[5].modifier = 2, v[5].hand = true; /* bias */
  /* the logsumexp output: f32 of kf_logsumexp, causal, odd; the hand-written
   * m + log(s) */
  v[6].dt = KF_F16, v[6].mask = 2, v[6].sq = 37, v[6].sk = 77, v[6].lse = 1;
  v[7].d = 128, v[7].hand = true, v[7].lse = 3;
  const char *arch[2] = {"sm_80", "sm_90a"};
  const char *only = getenv("KFUSE_ATTN_ARCHS"); /* the sanitizer runs: sm_90a */
  if (!only || strstr(only, arch[_i % 2])) compile_for(&v[_i / 2], arch[_i % 2]);
}
END_TEST

START_TEST(below_sm80_is_a_clear_error) {
  attn_spec s = attn_base();
  kf_graph *g = attn_build(&s);
  fuse_plan *p = plan_of(g, true);
  cg_target t;
  ck_assert(cg_target_from_arch("sm_75", &t));
  cg_launch_src src;
  char err[512] = "";
  ck_assert_int_eq(cg_emit_launch(g, p, 0, &t, &src, err, sizeof err), KF_ERR_UNSUPPORTED);
  ck_assert_msg(strstr(err, "sm_80") != NULL, "%s", err);
  fuse_plan_free(p);
  kf_graph_destroy(g);
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("attention");
  TCase *tc = tcase_create("recognizer");
  tcase_add_test(tc, composite_and_hand_match_alike);
  tcase_add_test(tc, causal_from_iota);
  tcase_add_test(tc, grouped_and_multi_query);
  tcase_add_test(tc, refusals_with_reasons);
  tcase_add_test(tc, takes_logsumexp);
  tcase_add_test(tc, refuses_logsumexp);
  tcase_add_test(tc, logsumexp_with_a_consumer);
  tcase_add_test(tc, refuses_k_laid_out_transposed);
  tcase_add_test(tc, side_value_from_another_kernel);
  tcase_add_test(tc, match_is_exact);
  tcase_add_test(tc, example_graph_one_launch);
  suite_add_tcase(s, tc);
  TCase *tn = tcase_create("nvrtc");
  tcase_set_timeout(tn, 300);
  tcase_add_loop_test(tn, nvrtc_every_variant, 0, 16);
  tcase_add_test(tn, below_sm80_is_a_clear_error);
  suite_add_tcase(s, tn);
  return s;
}
