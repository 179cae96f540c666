/* test_text.c - text from files made safe (kf_escape), "did you mean"
 * (kf_suggest, core_similar), the library's JSON writer (core/json.h), and
 * the places that use them: log lines and KFUSE_DUMP_DIR file names. */
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_main.h"
#include "core/escape.h"
#include "core/json.h"
#include "core/similar.h"
#include "kfuse.h"

/* kf_escape into a fresh string, checking that the returned length is
 * the length written when it fits. */
static char *esc(const char *s, kf_escape_style style) {
  size_t n = kf_escape(NULL, 0, s, style);
  char *out = malloc(n + 1);
  ck_assert_uint_eq(kf_escape(out, n + 1, s, style), n);
  ck_assert_uint_eq(strlen(out), n);
  return out;
}

#define ck_esc(in, style, want)      \
  do {                               \
    char *got_ = esc((in), (style)); \
    ck_assert_str_eq(got_, (want));  \
    free(got_);                      \
  } while (0)

START_TEST(escape_line_and_text) {
  ck_esc("plain name_1.x", KF_ESCAPE_LINE, "plain name_1.x");
  ck_esc("ev\033[31mil", KF_ESCAPE_LINE, "ev\\x1B[31mil");
  ck_esc("a\nb\tc\rd\x7f", KF_ESCAPE_LINE, "a\\x0Ab\\x09c\\x0Dd\\x7F");
  ck_esc("a\nb\tc\rd", KF_ESCAPE_TEXT, "a\nb\tc\\x0Dd");
  ck_esc("back\\slash \"q\"", KF_ESCAPE_LINE, "back\\slash \"q\"");
  /* UTF-8 kept; C1 controls (U+009B is CSI) and invalid bytes escaped */
  ck_esc("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", KF_ESCAPE_LINE,
         "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
  ck_esc(
      "x\xc2\x9b"
      "1m",
      KF_ESCAPE_LINE, "x\\xC2\\x9B1m");
  ck_esc("\xff\xc3(\xed\xa0\x80\xc0\xaf", KF_ESCAPE_LINE, "\\xFF\\xC3(\\xED\\xA0\\x80\\xC0\\xAF");
  ck_esc(NULL, KF_ESCAPE_LINE, "");
}
END_TEST

START_TEST(escape_json) {
  ck_esc("we\"ird\\name", KF_ESCAPE_JSON, "we\\\"ird\\\\name");
  ck_esc("a\nb\tc\rd\001\033\x7f", KF_ESCAPE_JSON, "a\\nb\\tc\\rd\\u0001\\u001b\\u007f");
  ck_esc("caf\xc3\xa9", KF_ESCAPE_JSON, "caf\xc3\xa9");
  ck_esc("\xc2\x9b\xff", KF_ESCAPE_JSON, "\\u009b\\u00ff");
}
END_TEST

START_TEST(escape_truncates_like_snprintf) {
  char buf[6];
  ck_assert_uint_eq(kf_escape(buf, sizeof buf, "ab\033cd", KF_ESCAPE_LINE), 8);
  ck_assert_str_eq(buf, "ab\\x1");
  ck_assert_uint_eq(kf_escape(buf, 1, "abc", KF_ESCAPE_LINE), 3);
  ck_assert_str_eq(buf, "");
  ck_assert_uint_eq(kf_escape(NULL, 0, "\n", KF_ESCAPE_JSON), 2);
}
END_TEST

START_TEST(suggest) {
  const char *ops[] = {"exp", "softmax", "log_softmax", "sum", "mean", "axes", "axis"};
  ck_assert_int_eq(kf_suggest("sofmax", ops, 7), 1);
  ck_assert_int_eq(kf_suggest("Softmax", ops, 7), 1); /* case is free */
  ck_assert_int_eq(kf_suggest("expp", ops, 7), 0);    /* one insertion */
  ck_assert_int_eq(kf_suggest("smu", ops, 7), 3);     /* one swap */
  ck_assert_int_eq(kf_suggest("axs", ops, 7), 5);     /* the first of equals */
  ck_assert_int_eq(kf_suggest("frobnicate", ops, 7), -1);
  ck_assert_int_eq(kf_suggest("z", ops, 7), -1); /* one letter: no typo */
  const char *one[] = {"x"};
  ck_assert_int_eq(kf_suggest("X", one, 1), 0);
  ck_assert_int_eq(kf_suggest("y", one, 1), -1);
  ck_assert_int_eq(kf_suggest(NULL, ops, 7), -1);
  ck_assert_int_eq(kf_suggest("exp", NULL, 0), -1);
  char longw[100];
  memset(longw, 'a', 99), longw[99] = 0;
  const char *lc[] = {longw};
  ck_assert_int_eq(kf_suggest(longw, lc, 1), -1); /* over 64 bytes: none */
  core_similar s;
  char hint[64];
  core_similar_init(&s, "meen");
  for (int i = 0; i < 7; i++) core_similar_add(&s, ops[i]);
  ck_assert_str_eq(core_similar_hint(&s, hint, sizeof hint), "; did you mean 'mean'?");
  core_similar_init(&s, "qqqq");
  core_similar_add(&s, "mean");
  ck_assert_str_eq(core_similar_hint(&s, hint, sizeof hint), "");
}
END_TEST

START_TEST(json_writer) {
  core_str out = {0};
  core_json j;
  core_json_init(&j, &out);
  core_json_obj(&j, NULL);
  core_json_str(&j, "name", "a\"b\033");
  core_json_str(&j, "none", NULL);
  core_json_int(&j, "n", -3);
  core_json_fixed(&j, "ms", 1.23456, 3);
  core_json_fixed(&j, "nan", 0.0 / 0.0, 3);
  core_json_bool(&j, "yes", true);
  core_json_arr(&j, "shape");
  core_json_int(&j, NULL, 4);
  core_json_int(&j, NULL, 8);
  core_json_arr_end(&j);
  core_json_arr_lines(&j, "rows");
  core_json_obj(&j, NULL);
  core_json_raw(&j, "args", "{\"k\":1}");
  core_json_obj_end(&j);
  core_json_null(&j, NULL);
  core_json_arr_end(&j);
  core_json_arr_lines(&j, "empty");
  core_json_arr_end(&j);
  core_json_obj_end(&j);
  char *s = core_str_take(&out);
  ck_assert_str_eq(s,
                   "{\"name\":\"a\\\"b\\u001b\",\"none\":null,\"n\":-3,\"ms\":1.235,\"nan\":null,"
                   "\"yes\":true,\"shape\":[4,8],\"rows\":[\n{\"args\":{\"k\":1}},\nnull\n],"
                   "\"empty\":[\n]}");
  free(s);
  /* a string longer than the escaper's stack buffer */
  char lng[3001];
  for (int i = 0; i < 3000; i++) lng[i] = i % 3 ? 'a' : '\033';
  lng[3000] = 0;
  core_str_escaped(&out, lng, KF_ESCAPE_JSON);
  s = core_str_take(&out);
  ck_assert_uint_eq(strlen(s), 1000 * 6 + 2000);
  ck_assert(!strncmp(s, "\\u001baa\\u001baa", 16));
  ck_assert(!strcmp(s + strlen(s) - 8, "\\u001baa"));
  free(s);
}
END_TEST

/* Log lines are one line each: a newline or ESC from a file is escaped. */
static char logged[4096];
static void capture(void *user, kf_log_level level, const char *comp, const char *msg) {
  (void)user, (void)level, (void)comp;
  snprintf(logged, sizeof logged, "%s", msg);
}

START_TEST(log_lines_escaped) {
  kf_ctx *ctx;
  ck_assert_int_eq(kf_ctx_create(&ctx), KF_OK);
  kf_ctx_set_log(ctx, capture, NULL);
  /* KFUSE_DUMP_DIR that cannot be created: the warning names the path. */
  kt_setenv("KFUSE_DUMP_DIR", "/proc/no\033[2J\nsuch", 1);
  kf_graph *g;
  ck_assert_int_eq(kf_graph_create(ctx, &g), KF_OK);
  int64_t sh[1] = {4};
  kf_set_output(g, kf_exp(g, kf_input(g, "x", KF_F32, 1, sh)));
  kf_options o;
  kf_options_init(&o);
  o.arch = "sm_90"; /* the dump is written when the plan is compiled */
  kf_plan *p = NULL;
  ck_assert_int_eq(kf_compile(ctx, g, &o, &p), KF_OK);
  kt_unsetenv("KFUSE_DUMP_DIR");
  ck_assert_msg(strstr(logged, "KFUSE_DUMP_DIR: cannot write /proc/no\\x1B[2J\\x0Asuch/"),
                "logged: %s", logged);
  ck_assert_ptr_null(strchr(logged, '\n'));
  ck_assert_ptr_null(strchr(logged, '\033'));
  kf_plan_destroy(p);
  kf_graph_destroy(g);
  kf_ctx_destroy(ctx);
}
END_TEST

/* KFUSE_DUMP_DIR file names take letters, digits, '.', '-', '_' only. */
START_TEST(dump_file_names_safe) {
  char dir[] = "/tmp/kfuse_test_text.XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(dir));
  kf_ctx *ctx;
  ck_assert_int_eq(kf_ctx_create(&ctx), KF_OK);
  kf_graph *g;
  ck_assert_int_eq(kf_graph_create(ctx, &g), KF_OK);
  ck_assert_int_eq(kf_graph_set_name(g, "a/b\nc\033[1m d"), KF_OK);
  int64_t sh[1] = {4};
  kf_set_output(g, kf_exp(g, kf_input(g, "x", KF_F32, 1, sh)));
  kt_setenv("KFUSE_DUMP_DIR", dir, 1);
  kf_options o;
  kf_options_init(&o);
  o.arch = "sm_90"; /* the dump is written when the plan is compiled */
  kf_plan *p = NULL;
  ck_assert_int_eq(kf_compile(ctx, g, &o, &p), KF_OK);
  kt_unsetenv("KFUSE_DUMP_DIR");
  char pat[100];
  snprintf(pat, sizeof pat, "%s/*", dir);
  glob_t gl;
  ck_assert_int_eq(glob(pat, 0, NULL, &gl), 0);
  ck_assert_uint_ge(gl.gl_pathc, 2);
  for (size_t i = 0; i < gl.gl_pathc; i++) {
    const char *base = gl.gl_pathv[i] + strlen(dir) + 1;
    ck_assert_msg(strncmp(base, "a_b_c__1m_d-", 12) == 0, "dump file %s", base);
    ck_assert_uint_eq(strspn(base, "abcdefghijklmnopqrstuvwxyz0123456789._-"), strlen(base));
    remove(gl.gl_pathv[i]);
  }
  globfree(&gl);
  rmdir(dir);
  kf_plan_destroy(p);
  kf_graph_destroy(g);
  kf_ctx_destroy(ctx);
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("text");
  TCase *t = tcase_create("text");
  tcase_add_test(t, escape_line_and_text);
  tcase_add_test(t, escape_json);
  tcase_add_test(t, escape_truncates_like_snprintf);
  tcase_add_test(t, suggest);
  tcase_add_test(t, json_writer);
  tcase_add_test(t, log_lines_escaped);
  tcase_add_test(t, dump_file_names_safe);
  suite_add_tcase(s, t);
  return s;
}
