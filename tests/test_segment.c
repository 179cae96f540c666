/* test_segment.c - long pointwise bodies cut into segment functions
 * (src/codegen/segment.c): the cut's text (live-ins, live-outs, pointers),
 * what leaves a body whole, allocation failure at every point, and whole
 * plans: every function of a long chain's source stays bounded, the
 * source compiles with NVRTC for sm_90, ordinary graphs are untouched, and
 * only segmented sources get ptxas's fast-compile level. The GPU suite
 * test_gpu_segment runs them against the unfused plan. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "codegen/segment.h"
#include "core/alloc.h"
#include "kfuse.h"
#include "runtime/nvrtc.h"

static int count(const char *s, const char *needle) {
  int n = 0;
  for (const char *p = s ? strstr(s, needle) : NULL; p; p = strstr(p + 1, needle)) n++;
  return n;
}

/* A body of n definitions: t0 loads p7, each next one reads the one before
 * (and t1, from every line past 100: a live-in far back); one extra line
 * stores the last. */
static void chain_body(cg_buf *b, int n, const char *extra) {
  cg_puts(b, "    const float t0 = kf_ld(p7 + (e));\n");
  for (int i = 1; i < n; i++)
    cg_printf(b, "    const float t%d = kf_add(t%d, %s);\n", i, i - 1, i > 100 ? "t1" : "1.5e-3f");
  if (extra) cg_puts(b, extra);
  cg_printf(b, "    o9[j] = t%d;\n", n - 1);
}

static cg_part one_param_part(cg_pparam *pp) {
  cg_part p;
  memset(&p, 0, sizeof p);
  memset(pp, 0, 2 * sizeof *pp);
  pp[0].value = 7;
  pp[1].value = 9, pp[1].written = true;
  p.params = pp;
  p.n_params = 2;
  return p;
}

static kf_graph *f32_graph(void) {
  kf_graph *g = NULL;
  ck_assert_int_eq(kf_graph_create(NULL, &g), KF_OK);
  int64_t s[1] = {16};
  for (int i = 0; i < 10; i++) { /* values 0..9 */
    char name[8];
    snprintf(name, sizeof name, "i%d", i);
    kf_input(g, name, KF_F32, 1, s);
  }
  return g;
}

START_TEST(cut_text) {
  kf_graph *g = f32_graph();
  cg_pparam pp[2];
  cg_part p = one_param_part(pp);
  cg_buf body = {0}, out = {0};
  chain_body(&body, 300, NULL);
  ck_assert(cg_segment_body(g, &p, "f", "int", &body, &out));
  ck_assert(!body.oom && !out.oom);
  if (getenv("SEG_DEBUG")) printf("%s\n----\n%s", out.s, body.s);
  /* 300 definitions: 5 segments (64, 64, 64, 64, 44), each one call */
  ck_assert_int_eq(count(out.s, "__device__ __noinline__"), 5);
  ck_assert_int_eq(count(body.s, "\n"), 5 + 2 + 1); /* calls, t1 and t63 taken out, the store */
  ck_assert_ptr_nonnull(strstr(out.s, "#define KF_SEGMENTED\n"));
  /* the first loads p7 and returns t1 and t63 (both read later) */
  ck_assert_ptr_nonnull(strstr(out.s, "struct f_s0_r { float t1; float t63; };\n"));
  ck_assert_ptr_nonnull(strstr(
      out.s, "__device__ __noinline__ f_s0_r f_s0(const int e, const float *__restrict__ p7) {"));
  ck_assert_ptr_nonnull(strstr(body.s,
                               "    const f_s0_r r0 = f_s0(e, p7);\n"
                               "    const float t1 = r0.t1;\n"
                               "    const float t63 = r0.t63;\n"));
  /* later ones take the previous result and t1; the last one's result
   * goes to the store, which stays in the caller */
  ck_assert_ptr_nonnull(strstr(
      out.s, "__device__ __noinline__ float f_s1(const int e, const float t63, const float t1) {"));
  ck_assert_ptr_nonnull(strstr(body.s,
                               "    const float t299 = f_s4(e, t255, t1);\n"
                               "    o9[j] = t299;\n"));
  ck_assert_ptr_null(strstr(body.s, "kf_add"));
  cg_buf_free(&body);
  cg_buf_free(&out);
  kf_graph_destroy(g);
}
END_TEST

START_TEST(left_whole) {
  kf_graph *g = f32_graph();
  cg_pparam pp[2];
  cg_part p = one_param_part(pp);
  const char *extras[] = {
      NULL,                                          /* too short */
      "    const float t400 = kf_add(v3[j], t1);\n", /* a preloaded register */
      "    const float t400 = kf_add(t1, kf_n);\n",  /* a name that is not a call */
      "    const float t400 = kf_add(t1, p5[e]);\n", /* not the part's pointer */
      "    const float t400 = kf_add(t1, t401);\n",  /* not defined before */
      "    const float t12 = kf_add(t1, 1.0f);\n",   /* defined twice */
      "    const float t400 = kf_add(t1, \"x\");\n", /* anything else */
  };
  for (int i = 0; i < (int)(sizeof extras / sizeof extras[0]); i++) {
    cg_buf body = {0}, out = {0};
    chain_body(&body, i == 0 ? CG_SEGMENT_MIN - 1 : 300, extras[i]);
    char *before = strdup(body.s);
    ck_assert_msg(!cg_segment_body(g, &p, "f", "int", &body, &out), "case %d was cut", i);
    ck_assert_str_eq(body.s, before);
    ck_assert_msg(!out.s || !*out.s, "case %d wrote %s", i, out.s);
    free(before);
    cg_buf_free(&body);
    cg_buf_free(&out);
  }
  kf_graph_destroy(g);
}
END_TEST

/* Every allocation of a cut fails in turn: the failure is latched (in out
 * or in body), never a cut body with missing lines. */
START_TEST(alloc_failure) {
  kf_graph *g = f32_graph();
  cg_pparam pp[2];
  cg_part p = one_param_part(pp);
  cg_buf body = {0}, out = {0}, want_body = {0};
  chain_body(&body, 300, NULL);
  chain_body(&want_body, 300, NULL);
  core_alloc_fail(0, false);
  long before = core_alloc_count();
  ck_assert(cg_segment_body(g, &p, "f", "int", &body, &out));
  long n = core_alloc_count() - before;
  ck_assert(n > 3);
  char *whole = strdup(out.s), *calls = strdup(body.s);
  cg_buf_free(&body);
  cg_buf_free(&out);
  for (long k = 1; k <= n; k++) {
    chain_body(&body, 300, NULL);
    core_alloc_fail(k, false);
    bool cut = cg_segment_body(g, &p, "f", "int", &body, &out);
    bool failed = core_alloc_failed();
    core_alloc_fail(0, false);
    ck_assert_msg(failed, "allocation %ld did not happen", k);
    ck_assert_msg(out.oom || body.oom, "allocation %ld failed unreported", k);
    if (!cut) ck_assert_str_eq(body.s, want_body.s);
    cg_buf_free(&body);
    cg_buf_free(&out);
  }
  chain_body(&body, 300, NULL);
  ck_assert(cg_segment_body(g, &p, "f", "int", &body, &out));
  ck_assert_str_eq(out.s, whole);
  ck_assert_str_eq(body.s, calls);
  free(whole), free(calls);
  cg_buf_free(&body), cg_buf_free(&out), cg_buf_free(&want_body);
  kf_graph_destroy(g);
}
END_TEST

/* The longest run of lines between a line starting with `start` and the
 * next "}" at column 0. */
static int longest_function(const char *src, const char *start) {
  int most = 0;
  for (const char *p = strstr(src, start); p; p = strstr(p + 1, start)) {
    const char *end = strstr(p, "\n}\n");
    int lines = 0;
    for (const char *c = p; c && c < end; c = strchr(c + 1, '\n')) lines++;
    if (lines > most) most = lines;
  }
  return most;
}

static kf_ctx *G_ctx;

static kf_plan *plan_of(kf_graph *g) {
  kf_options opt;
  kf_options_init(&opt);
  opt.arch = "sm_90";
  kf_plan *plan = NULL;
  ck_assert_int_eq(kf_plan_create(G_ctx, g, &opt, &plan), KF_OK);
  return plan;
}

/* An exp/tanh chain of n nodes through plan, emit and NVRTC (sm_90). Every
 * segmented launch's functions are bounded; returns how many were. */
static int chain_through_nvrtc(int n, bool diamond) {
  ck_assert_int_eq(kf_ctx_create(&G_ctx), KF_OK);
  kf_graph *g = NULL;
  ck_assert_int_eq(kf_graph_create(G_ctx, &g), KF_OK);
  int64_t s[2] = {64, 64};
  kf_value x = kf_input(g, "x", KF_F32, 2, s);
  for (int i = 0; i < n; i++) {
    x = diamond ? kf_mul(g, kf_exp(g, x), kf_neg(g, x)) : i % 2 ? kf_tanh(g, x) : kf_exp(g, x);
    if (diamond && i == n / 2) kf_set_output(g, x);
  }
  kf_set_output(g, x);
  kf_plan *plan = plan_of(g);
  int segmented = 0;
  for (int L = 0; L < kf_plan_num_launches(plan); L++) {
    char *src = kf_plan_source(plan, L, "sm_90");
    ck_assert_ptr_nonnull(src);
    rt_nvrtc_opts o;
    rt_nvrtc_options("sm_90", src, &o);
    bool fast = false;
    for (int i = 0; i < o.argc; i++) fast |= !strcmp(o.argv[i], "-Xptxas=-Ofc=max");
    if (strstr(src, "\n#define KF_SEGMENTED\n")) {
      segmented++;
      ck_assert(fast);
      /* a segment: its definitions and a few lines around them */
      ck_assert_int_le(longest_function(src, "\n__device__ __noinline__ "), CG_SEGMENT_LEN + 4);
      /* the part's lane loop: one call (and a few live-outs) per segment */
      ck_assert_int_le(longest_function(src, "KF_INLINE void kf_part0_k"),
                       30 + 4 * (1024 / CG_SEGMENT_LEN + 8));
    } else {
      ck_assert(!fast);
    }
    kf_free(src);
  }
  ck_assert_msg(kf_plan_compile(plan) == KF_OK, "%s", kf_plan_errmsg(plan));
  kf_plan_destroy(plan);
  kf_graph_destroy(g);
  kf_ctx_destroy(G_ctx);
  return segmented;
}

START_TEST(long_chain_compiles) {
  /* 1100 nodes: a kernel of 1024 (max_nodes_pointwise) and one of the rest */
  ck_assert_int_eq(chain_through_nvrtc(1100, false), 1);
}
END_TEST

START_TEST(diamond_with_outputs_compiles) {
  /* 3 x 120 nodes, an output in the middle: segments returning two values */
  ck_assert_int_eq(chain_through_nvrtc(120, true), 1);
}
END_TEST

START_TEST(short_chain_untouched) {
  ck_assert_int_eq(chain_through_nvrtc(CG_SEGMENT_MIN - 8, false), 0);
}
END_TEST

static Suite *make_suite(void) {
  setenv("KFUSE_DISK_CACHE", "0", 1); /* NVRTC every time, not a disk hit */
  Suite *s = suite_create("segment");
  TCase *tc = tcase_create("segment");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, cut_text);
  tcase_add_test(tc, left_whole);
  tcase_add_test(tc, alloc_failure);
  tcase_add_test(tc, long_chain_compiles);
  tcase_add_test(tc, diamond_with_outputs_compiles);
  tcase_add_test(tc, short_chain_untouched);
  suite_add_tcase(s, tc);
  return s;
}
