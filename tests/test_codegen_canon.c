/* test_codegen_canon.c - codegen's local names (src/codegen/canon.c): the
 * renaming itself (comments, literals and numbers untouched; a consistent
 * first-appearance numbering per stem), the prelude free of the stems it
 * renames, and kernels alike up to the graph's node numbering sharing one
 * source and one compile (the kernel cache key ignores comments). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "codegen/canon.h"
#include "codegen/templates.h"
#include "kfuse.h"

static char *canon(const char *text, size_t from, char *legend, size_t size) {
  core_str s = {0}, l = {0};
  core_str_puts(&s, text);
  ck_assert(cg_canon_names(&s, from, &l));
  snprintf(legend, size, "%s", l.s ? l.s : "");
  core_str_free(&l);
  return core_str_take(&s);
}

START_TEST(renames_stems_only) {
  char legend[256];
  char *out = canon(
      "p9 x9; p17 + x9 * red3 + p9 // p17 stays\n"
      "/* x9 */ \"p5\" 'p' 0x1f 2.5e3f p01 p1 float4 kf_part0_k2 h2 t10 t2\n",
      0, legend, sizeof legend);
  ck_assert_str_eq(out,
                   "p0 x0; p1 + x0 * red0 + p0 // p17 stays\n"
                   "/* x9 */ \"p5\" 'p' 0x1f 2.5e3f p2 p3 float4 kf_part0_k2 h0 t0 t1\n");
  ck_assert_str_eq(legend, "p0 = %9, p1 = %17, p2 = %01, p3 = %1");
  free(out);
  /* before `from`: untouched */
  out = canon("p7 x7\np7 x7\n", 6, legend, sizeof legend);
  ck_assert_str_eq(out, "p7 x7\np0 x0\n");
  free(out);
  ck_assert(cg_canon_stem("kf_s12", 6));
  ck_assert(!cg_canon_stem("float4", 6));
  ck_assert(!cg_canon_stem("p", 1));
  ck_assert(!cg_canon_stem("u32", 3));
}
END_TEST

/* A renamed stem naming something of the prelude would capture it: the
 * prelude's code (comments and literals aside) has none. */
START_TEST(prelude_has_no_renamed_stem) {
  const cg_template *t = cg_templates;
  while (t->name && strcmp(t->name, "common.cuh") != 0) t++;
  ck_assert_ptr_nonnull(t->name);
  char legend[64];
  char *out = canon(t->text, 0, legend, sizeof legend);
  ck_assert_msg(strcmp(out, t->text) == 0, "common.cuh has an identifier cg_canon_names renames");
  free(out);
}
END_TEST

/* exp(x) * 2 + x, after `pad` unrelated inputs: the same kernel, other ids. */
static kf_graph *chain(kf_ctx *ctx, int pad) {
  kf_graph *g;
  ck_assert_int_eq(kf_graph_create(ctx, &g), KF_OK);
  int64_t s[2] = {64, 96};
  for (int i = 0; i < pad; i++) {
    char name[16];
    snprintf(name, sizeof name, "pad%d", i);
    kf_input(g, name, KF_F32, 2, s);
  }
  kf_value x = kf_input(g, "x", KF_F32, 2, s);
  kf_value y = kf_add(g, kf_mul(g, kf_exp(g, x), kf_scalar(g, 2.0, KF_F32)), x);
  kf_set_output(g, kf_softmax(g, y, -1));
  ck_assert_int_eq(kf_graph_status(g), KF_OK);
  return g;
}

/* The code without its comments (they name graph node ids); the caller
 * frees it. */
static char *code_of(const char *src) {
  char *out = malloc(strlen(src) + 1), *o = out;
  ck_assert_ptr_nonnull(out);
  for (const char *p = src; *p;) {
    if (p[0] == '/' && (p[1] == '/' || p[1] == '*')) {
      const char *e = p[1] == '/' ? strchr(p, '\n') : strstr(p + 2, "*/");
      p = !e ? p + strlen(p) : p[1] == '/' ? e : e + 2;
    } else {
      *o++ = *p++;
    }
  }
  *o = 0;
  return out;
}

START_TEST(renumbered_graphs_share_kernels) {
  kf_ctx *ctx;
  ck_assert_int_eq(kf_ctx_create(&ctx), KF_OK);
  kf_options opt;
  kf_options_init(&opt);
  opt.arch = "sm_90";
  kf_graph *a = chain(ctx, 0), *b = chain(ctx, 5);
  kf_plan *pa, *pb;
  ck_assert_msg(kf_compile(ctx, a, &opt, &pa) == KF_OK, "%s", kf_ctx_errmsg(ctx));
  ck_assert_msg(kf_compile(ctx, b, &opt, &pb) == KF_OK, "%s", kf_ctx_errmsg(ctx));
  int n = kf_plan_num_launches(pa);
  ck_assert_int_eq(kf_plan_num_launches(pb), n);
  for (int i = 0; i < n; i++) {
    char *sa = kf_plan_source(pa, i, NULL), *sb = kf_plan_source(pb, i, NULL);
    ck_assert(sa && sb);
    ck_assert_msg(strcmp(sa, sb) != 0, "the header comments name different node ids");
    char *ca = code_of(sa), *cb = code_of(sb);
    ck_assert_msg(strcmp(ca, cb) == 0, "launch %d: the code differs", i);
    free(ca);
    free(cb);
    kf_free(sa);
    kf_free(sb);
    kf_launch_compile la, lb;
    ck_assert_int_eq(kf_plan_launch_compile(pa, i, &la), KF_OK);
    ck_assert_int_eq(kf_plan_launch_compile(pb, i, &lb), KF_OK);
    ck_assert(la.key_hi == lb.key_hi && la.key_lo == lb.key_lo);
    ck_assert_int_eq(lb.origin, KF_ORIGIN_MEM_HIT);
  }
  kf_plan_destroy(pa);
  kf_plan_destroy(pb);
  kf_graph_destroy(a);
  kf_graph_destroy(b);
  kf_ctx_destroy(ctx);
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("codegen_canon");
  TCase *tc = tcase_create("canon");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, renames_stems_only);
  tcase_add_test(tc, prelude_has_no_renamed_stem);
  tcase_add_test(tc, renumbered_graphs_share_kernels);
  suite_add_tcase(s, tc);
  return s;
}
