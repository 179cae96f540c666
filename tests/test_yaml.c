/* test_yaml.c - the YAML graph format: every example loads and round-trips,
 * every malformed file gets its exact message, the saver's names and
 * numbers, the hostile-input limits, and `kfuse check`. */
#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check_main.h"
#include "ir/dtype.h"
#include "ir/ir.h"
#include "ir/ops.h"
#include "kfuse.h"

#define EXAMPLES "examples/graphs"
#define BAD "tests/yaml_bad"

static kf_ctx *ctx;

static void setup(void) {
  ck_assert_int_eq(kf_ctx_create(&ctx), KF_OK);
}
static void teardown(void) {
  kf_ctx_destroy(ctx);
}

static char *read_all(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  ck_assert_msg(f != NULL, "cannot open %s", path);
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = malloc((size_t)n + 1);
  ck_assert(buf != NULL);
  ck_assert_int_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
  buf[n] = '\0';
  fclose(f);
  if (len) *len = (size_t)n;
  return buf;
}

/* The sorted .yaml files of a folder. */
static int list_yaml(const char *dir, char names[][128], int max) {
  DIR *d = opendir(dir);
  ck_assert_msg(d != NULL, "cannot open %s", dir);
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    size_t len = strlen(e->d_name);
    if (len > 5 && len < 128 && !strcmp(e->d_name + len - 5, ".yaml") && n < max)
      memcpy(names[n++], e->d_name, len + 1);
  }
  closedir(d);
  qsort(names, (size_t)n, 128, (int (*)(const void *, const void *))strcmp);
  return n;
}

static kf_graph *load_string(const char *text) {
  kf_graph *g = NULL;
  kf_status st = kf_graph_load_yaml_string(ctx, text, strlen(text), "t.yaml", &g);
  ck_assert_msg(st == KF_OK, "load failed: %s", kf_ctx_errmsg(ctx));
  return g;
}

static void expect_error(const char *text, size_t len, const char *want) {
  kf_graph *g = (kf_graph *)1;
  kf_status st = kf_graph_load_yaml_string(ctx, text, len, "t.yaml", &g);
  ck_assert_int_ne(st, KF_OK);
  ck_assert_ptr_null(g);
  ck_assert_str_eq(kf_ctx_errmsg(ctx), want);
}

/* Save, reload, compare hashes, save again and compare the text. */
static void check_round_trip(kf_graph *g, const char *what) {
  char *y1 = kf_graph_to_yaml(g);
  ck_assert_msg(y1 != NULL, "%s: save failed: %s", what, kf_graph_errmsg(g));
  kf_graph *g2 = NULL;
  kf_status st = kf_graph_load_yaml_string(ctx, y1, strlen(y1), what, &g2);
  ck_assert_msg(st == KF_OK, "%s: reload failed: %s\n%s", what, kf_ctx_errmsg(ctx), y1);
  kf_hash128 a = kf_graph_hash(g), b = kf_graph_hash(g2);
  ck_assert_msg(a.lo == b.lo && a.hi == b.hi, "%s: hash changed after a round trip\n%s", what, y1);
  ck_assert_int_eq(kf_graph_num_values(g), kf_graph_num_values(g2));
  char *y2 = kf_graph_to_yaml(g2);
  ck_assert_ptr_nonnull(y2);
  ck_assert_str_eq(y1, y2);
  kf_free(y1);
  kf_free(y2);
  kf_graph_destroy(g2);
}

/* ---- examples ------------------------------------------------------------------ */

/* Marks each op named after "op:" in the text. */
static void mark_ops(const char *text, bool *used) {
  for (const char *p = strstr(text, "op:"); p; p = strstr(p + 3, "op:")) {
    const char *w = p + 3;
    while (*w == ' ') w++;
    char name[32];
    size_t n = 0;
    while (n < sizeof name - 1 && (w[n] == '_' || (w[n] >= 'a' && w[n] <= 'z'))) {
      name[n] = w[n];
      n++;
    }
    name[n] = '\0';
    int op = ir_op_lookup(name);
    if (op >= 0) used[op] = true;
  }
}

START_TEST(examples_load_and_round_trip) {
  char names[64][128];
  int n = list_yaml(EXAMPLES, names, 64);
  ck_assert_int_ge(n, 12);
  bool used[IR_OP_COUNT] = {false};
  for (int i = 0; i < n; i++) {
    char path[300];
    snprintf(path, sizeof path, "%s/%.127s", EXAMPLES, names[i]);
    kf_graph *g = NULL;
    ck_assert_msg(kf_graph_load_yaml(ctx, path, &g) == KF_OK, "%s", kf_ctx_errmsg(ctx));
    ck_assert_int_ge(kf_graph_num_outputs(g), 1);
    ck_assert_ptr_nonnull(kf_graph_name(g));
    check_round_trip(g, path);
    kf_graph_destroy(g);
    char *text = read_all(path, NULL);
    mark_ops(text, used);
    free(text);
  }
  for (int op = 0; op < IR_OP_COUNT; op++)
    if (ir_ops[op].kind != KIND_SOURCE)
      ck_assert_msg(used[op], "no example uses op '%s'", ir_ops[op].name);
}
END_TEST

START_TEST(example_contract_values) {
  kf_graph *g = NULL;
  ck_assert_int_eq(kf_graph_load_yaml(ctx, EXAMPLES "/add_rmsnorm.yaml", &g), KF_OK);
  ck_assert_str_eq(kf_graph_name(g), "add_rmsnorm");
  ck_assert_int_eq(kf_graph_num_inputs(g), 3);
  ck_assert_int_eq(kf_graph_num_outputs(g), 2);
  kf_value h = kf_graph_output(g, 0), o = kf_graph_output(g, 1);
  ck_assert_str_eq(kf_value_name(g, h), "h");
  ck_assert_str_eq(kf_value_name(g, o), "o");
  ck_assert_int_eq(kf_value_dtype(g, o), KF_BF16);
  kf_value me = kf_graph_find(g, "me");
  ck_assert_str_eq(kf_value_op(g, me), "add");
  /* The literal 1.0e-6 became an f32 scalar beside ms. */
  kf_value c = g->nodes[me].args[1];
  ck_assert_str_eq(kf_value_op(g, c), "const");
  ck_assert_int_eq(kf_value_dtype(g, c), KF_F32);
  ck_assert(g->nodes[c].value == (double)1.0e-6f);
  kf_value ms = kf_graph_find(g, "ms");
  ck_assert_int_eq(g->nodes[ms].axes, 2);
  ck_assert(g->nodes[ms].keepdim);
  kf_graph_destroy(g);
}
END_TEST

/* ---- malformed files ---------------------------------------------------------- */

START_TEST(bad_files_exact_messages) {
  char *table = read_all(BAD "/expected.txt", NULL);
  char names[128][128];
  int n = list_yaml(BAD, names, 128);
  ck_assert_int_ge(n, 30);
  bool seen[128] = {false};
  int checked = 0;
  for (char *line = strtok(table, "\n"); line; line = strtok(NULL, "\n")) {
    if (line[0] == '#') continue;
    char *tab = strchr(line, '\t');
    ck_assert_msg(tab != NULL, "bad line in expected.txt: %s", line);
    *tab = '\0';
    char path[300], want[1200];
    snprintf(path, sizeof path, "%s/%.200s", BAD, line);
    snprintf(want, sizeof want, "%s:%.800s", path, tab + 1);
    kf_graph *g = (kf_graph *)1;
    kf_status st = kf_graph_load_yaml(ctx, path, &g);
    ck_assert_msg(st != KF_OK, "%s loaded, but should fail", path);
    ck_assert_ptr_null(g);
    ck_assert_str_eq(kf_ctx_errmsg(ctx), want);
    for (int i = 0; i < n; i++)
      if (!strcmp(names[i], line)) seen[i] = true;
    checked++;
  }
  for (int i = 0; i < n; i++) ck_assert_msg(seen[i], "%s has no line in expected.txt", names[i]);
  ck_assert_int_eq(checked, n);
  free(table);
}
END_TEST

START_TEST(bad_status_codes) {
  kf_graph *g;
  ck_assert_int_eq(kf_graph_load_yaml(ctx, BAD "/unknown_op.yaml", &g), KF_ERR_PARSE);
  ck_assert_int_eq(kf_graph_load_yaml(ctx, BAD "/mixed_dtypes.yaml", &g), KF_ERR_DTYPE);
  ck_assert_int_eq(kf_graph_load_yaml(ctx, BAD "/shape_mismatch.yaml", &g), KF_ERR_SHAPE);
  ck_assert_int_eq(kf_graph_load_yaml(ctx, BAD "/no_such_file.yaml", &g), KF_ERR_IO);
  ck_assert_ptr_nonnull(strstr(kf_ctx_errmsg(ctx), "no_such_file.yaml: cannot open"));
  ck_assert_int_eq(kf_graph_load_yaml(ctx, BAD, &g), KF_ERR_IO);
  ck_assert_int_eq(kf_graph_load_yaml(ctx, NULL, &g), KF_ERR_INVALID_ARG);
  ck_assert_int_eq(kf_graph_load_yaml(ctx, BAD "/empty.yaml", NULL), KF_ERR_INVALID_ARG);
  ck_assert_int_eq(kf_graph_load_yaml_string(ctx, NULL, 3, NULL, &g), KF_ERR_INVALID_ARG);
  /* A NULL ctx is allowed; the message is just not kept. */
  ck_assert_int_eq(kf_graph_load_yaml_string(NULL, "x", 1, NULL, &g), KF_ERR_PARSE);
  expect_error("", 0, "t.yaml:1:1: empty file: expected a mapping with kfuse: 1");
  ck_assert_int_eq(kf_graph_load_yaml_string(ctx, "[", 1, NULL, &g), KF_ERR_PARSE);
  ck_assert_ptr_nonnull(strstr(kf_ctx_errmsg(ctx), "<string>:"));
}
END_TEST

/* ---- literals, names and attributes --------------------------------------------- */

/* The in-memory loader without a file name: every message is placed as
 * <string>:LINE:COL (syntax errors, rule breaks, builder refusals), and the
 * text needs no NUL (only len bytes are read). */
START_TEST(string_loader_places_errors_in_string) {
  kf_graph *g = (kf_graph *)1;
  const char *syntax = "kfuse: 1\ninputs: [\n";
  ck_assert_int_eq(kf_graph_load_yaml_string(ctx, syntax, strlen(syntax), NULL, &g), KF_ERR_PARSE);
  ck_assert_ptr_null(g);
  ck_assert_ptr_eq(strstr(kf_ctx_errmsg(ctx), "<string>:3:1: YAML syntax error"),
                   kf_ctx_errmsg(ctx));
  const char *shape =
      "kfuse: 1\ninputs:\n  a: {dtype: f32, shape: [4]}\n"
      "  b: {dtype: f32, shape: [3]}\nnodes:\n"
      "  - {name: h, op: add, args: [a, b]}\noutputs: [h]\n";
  ck_assert_int_eq(kf_graph_load_yaml_string(ctx, shape, strlen(shape), NULL, &g), KF_ERR_SHAPE);
  ck_assert_ptr_eq(strstr(kf_ctx_errmsg(ctx), "<string>:6:5: node 'h' (add): "),
                   kf_ctx_errmsg(ctx));
  const char *rule = "kfuse: 2\n";
  ck_assert_int_eq(kf_graph_load_yaml_string(ctx, rule, strlen(rule), NULL, &g), KF_ERR_PARSE);
  ck_assert_ptr_eq(strstr(kf_ctx_errmsg(ctx), "<string>:1:8: "), kf_ctx_errmsg(ctx));
  /* a buffer with no NUL: the good text followed by bytes that do not parse */
  char buf[128];
  const char *good = "kfuse: 1\ninputs:\n  x: {dtype: f32, shape: [2]}\noutputs: [x]\n";
  size_t n = strlen(good);
  memcpy(buf, good, n);
  memset(buf + n, '[', sizeof buf - n);
  ck_assert_int_eq(kf_graph_load_yaml_string(ctx, buf, n, NULL, &g), KF_OK);
  ck_assert_int_eq(kf_graph_num_inputs(g), 1);
  kf_graph_destroy(g);
}
END_TEST

START_TEST(literals_take_the_neighbours_dtype) {
  kf_graph *g = load_string(
      "kfuse: 1\ninputs:\n  x: {dtype: f16, shape: [4]}\n  i: {dtype: i32, shape: [4]}\n"
      "nodes:\n  - {name: a, op: add, args: [2.5, x]}\n"
      "  - {name: b, op: mul, args: [i, 3]}\n"
      "  - {name: m, op: gt, args: [x, 0]}\n"
      "  - {name: w, op: where, args: [m, x, -.inf]}\n"
      "  - {name: t, op: where, args: [true, i, b]}\n"
      "  - {name: l, op: logical_and, args: [m, false]}\n"
      "outputs: [a, b, w, t, l]\n");
  kf_value a = kf_graph_find(g, "a"), b = kf_graph_find(g, "b");
  ck_assert_int_eq(kf_value_dtype(g, g->nodes[a].args[0]), KF_F16);
  ck_assert(g->nodes[g->nodes[a].args[0]].value == 2.5);
  ck_assert_int_eq(kf_value_dtype(g, g->nodes[b].args[1]), KF_I32);
  kf_value w = kf_graph_find(g, "w"), t = kf_graph_find(g, "t");
  ck_assert(g->nodes[g->nodes[w].args[2]].value < -1e300);
  ck_assert_int_eq(kf_value_dtype(g, g->nodes[t].args[0]), KF_BOOL);
  ck_assert_int_eq(kf_value_dtype(g, kf_graph_find(g, "l")), KF_BOOL);
  check_round_trip(g, "literals");
  kf_graph_destroy(g);
}
END_TEST

START_TEST(attribute_defaults_and_checks) {
  kf_graph *g = load_string(
      "kfuse: 1\ninputs:\n  x: {dtype: f32, shape: [2, 3, 4]}\n"
      "nodes:\n  - {name: s, op: sum, args: [x]}\n"
      "  - {name: c, op: clamp, args: [x], max: 1}\n"
      "  - {name: r, op: reshape, args: [x], shape: [6, -1]}\n"
      "  - {name: ls, op: log_softmax, args: [x], axis: 0}\n"
      "  - {name: lse, op: logsumexp, args: [x], axis: 1}\n"
      "  - {name: lsd, op: logsumexp, args: [x]}\n"
      "outputs: [s, c, r, ls, lse, lsd]\n");
  kf_value s = kf_graph_find(g, "s"), c = kf_graph_find(g, "c"), r = kf_graph_find(g, "r");
  /* logsumexp drops its axis (default -1) */
  kf_value lse = kf_graph_find(g, "lse"), lsd = kf_graph_find(g, "lsd");
  ck_assert_int_eq(kf_value_rank(g, lse), 2);
  ck_assert_int_eq(kf_value_shape(g, lse)[1], 4);
  ck_assert_int_eq(kf_value_shape(g, lsd)[1], 3);
  ck_assert_int_eq(kf_value_rank(g, s), 0);
  ck_assert_int_eq(g->nodes[s].axes, 7);
  ck_assert(g->nodes[c].lo < -1e300 && g->nodes[c].hi == 1.0);
  ck_assert_int_eq(kf_value_shape(g, r)[1], 4);
  check_round_trip(g, "attributes");
  kf_graph_destroy(g);
  /* Block style works as well as flow style, and keys may come in any order. */
  g = load_string(
      "outputs:\n  - y\nnodes:\n  - op: neg\n    args:\n      - x\n    name: y\n"
      "inputs:\n  x:\n    shape: [3]\n    dtype: i64\nkfuse: 1\n");
  ck_assert_int_eq(kf_value_dtype(g, kf_graph_find(g, "y")), KF_I64);
  kf_graph_destroy(g);
}
END_TEST

START_TEST(const_nodes) {
  kf_graph *g = load_string(
      "kfuse: 1\ninputs:\n  x: {dtype: f64, shape: [3]}\n"
      "nodes:\n  - {name: c, op: const, dtype: f64, value: 0.1}\n"
      "  - {name: y, op: mul, args: [x, c]}\n  - {name: z, op: add, args: [y, c]}\n"
      "  - {name: b, op: const, dtype: bool, value: true}\n"
      "outputs: [z, c, b]\n");
  kf_value c = kf_graph_find(g, "c");
  ck_assert(g->nodes[c].value == 0.1);
  ck_assert(g->nodes[kf_graph_find(g, "b")].value == 1.0);
  char *y = kf_graph_to_yaml(g);
  ck_assert_ptr_nonnull(strstr(y, "{name: c, op: const, dtype: f64, value: 0.1}"));
  kf_free(y);
  check_round_trip(g, "consts");
  kf_graph_destroy(g);
}
END_TEST

/* ---- the saver ------------------------------------------------------------------------ */

START_TEST(saver_names_unnamed_values_without_collisions) {
  kf_graph *g;
  ck_assert_int_eq(kf_graph_create(ctx, &g), KF_OK);
  int64_t shape[2] = {8, 16};
  kf_value x = kf_input(g, "t1", KF_F32, 2, shape); /* value 0 named like a generated name */
  kf_value e = kf_exp(g, x);                        /* value 1: would be t1 */
  kf_value s = kf_softmax(g, e, -1);
  kf_value two = kf_scalar(g, 2.0, KF_F32);
  kf_value u = kf_mul(g, s, kf_neg(g, two)); /* the constant is not adjacent: a const node */
  kf_value t = kf_tanh(g, u);
  ck_assert_int_eq(kf_set_name(g, t, "t1_1"), KF_OK);
  kf_set_output(g, t);
  kf_set_output(g, e);
  ck_assert_int_eq(kf_graph_status(g), KF_OK);
  char *y = kf_graph_to_yaml(g);
  ck_assert_ptr_nonnull(y);
  ck_assert_ptr_nonnull(strstr(y, "{name: t1_2, op: exp"));
  ck_assert_ptr_nonnull(strstr(y, "op: const, dtype: f32, value: 2}"));
  ck_assert_ptr_nonnull(strstr(y, "outputs: [t1_1, t1_2]"));
  kf_free(y);
  check_round_trip(g, "generated names");
  kf_graph_destroy(g);
}
END_TEST

START_TEST(saver_numbers_round_trip) {
  static const double values[] = {0.1, 1.0 / 3.0, -2.5e-300, 6.02214076e23, 1e-7, -0.0, 5e-324};
  static const kf_dtype dts[] = {KF_F64, KF_F32, KF_F16, KF_BF16};
  for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++) {
    kf_graph *g;
    kf_graph_create(ctx, &g);
    int64_t shape[1] = {4};
    kf_value x = kf_input(g, "x", dts[d], 1, shape);
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++)
      if (!isinf(ir_round_to_dtype(values[i], dts[d]))) /* 6e23 overflows f16: refused */
        kf_set_output(g, kf_add(g, x, kf_scalar(g, values[i], dts[d])));
    kf_set_output(g, kf_clamp(g, x, 0.1, 1.0 / 3.0));
    ck_assert_int_eq(kf_graph_status(g), KF_OK);
    check_round_trip(g, kf_dtype_name(dts[d]));
    kf_graph_destroy(g);
  }
}
END_TEST

START_TEST(saver_graph_names_and_files) {
  kf_graph *g;
  kf_graph_create(ctx, &g);
  int64_t shape[1] = {4};
  kf_value x = kf_input(g, "true", KF_BOOL, 1, shape); /* a name that looks like a literal */
  kf_set_output(g, kf_logical_not(g, x));
  kf_graph_set_name(g, "my \"graph\": caf\xc3\xa9\t\xe2\x82\xac \xff");
  char *y = kf_graph_to_yaml(g);
  ck_assert_ptr_nonnull(strstr(y, "args: [\"true\"]"));
  kf_free(y);
  char path[] = "/tmp/kfuse_yaml_XXXXXX";
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  close(fd);
  ck_assert_int_eq(kf_graph_save_yaml(g, path), KF_OK);
  kf_graph *g2;
  ck_assert_msg(kf_graph_load_yaml(ctx, path, &g2) == KF_OK, "%s", kf_ctx_errmsg(ctx));
  ck_assert_str_eq(kf_graph_name(g2), "my \"graph\": caf\xc3\xa9\t\xe2\x82\xac \xef\xbf\xbd");
  kf_hash128 a = kf_graph_hash(g), b = kf_graph_hash(g2);
  ck_assert(a.lo == b.lo && a.hi == b.hi);
  kf_graph_destroy(g2);
  unlink(path);
  ck_assert_int_eq(kf_graph_save_yaml(g, "/nonexistent-dir/x.yaml"), KF_ERR_IO);
  ck_assert_ptr_nonnull(strstr(kf_graph_errmsg(g), "cannot write /nonexistent-dir/x.yaml"));
  ck_assert_int_eq(kf_graph_save_yaml(g, NULL), KF_ERR_INVALID_ARG);
  ck_assert_int_eq(kf_graph_save_yaml(NULL, path), KF_ERR_INVALID_ARG);
  ck_assert_ptr_null(kf_graph_to_yaml(NULL));
  kf_graph_destroy(g);
  /* No outputs, and a failed graph: nothing is written. */
  kf_graph_create(ctx, &g);
  kf_input(g, "x", KF_F32, 1, shape);
  ck_assert_ptr_null(kf_graph_to_yaml(g));
  ck_assert_ptr_nonnull(strstr(kf_graph_errmsg(g), "without outputs"));
  kf_exp(g, kf_graph_find(g, "x"));
  kf_add(g, kf_graph_find(g, "x"), kf_input(g, "i", KF_I32, 1, shape));
  ck_assert_int_eq(kf_graph_save_yaml(g, path), KF_ERR_DTYPE);
  ck_assert_int_eq(access(path, F_OK), -1);
  kf_graph_destroy(g);
}
END_TEST

/* ---- hostile input ------------------------------------------------------------------- */

static char *nested(int depth) {
  char *s = malloc((size_t)depth * 2 + 64);
  size_t o = (size_t)sprintf(s, "kfuse: 1\nname: ");
  for (int i = 0; i < depth; i++) s[o++] = '[';
  for (int i = 0; i < depth; i++) s[o++] = ']';
  s[o] = '\0';
  return s;
}

START_TEST(limits_depth_names_size) {
  /* The root mapping is level 1: 63 lists fit, 64 do not. */
  char *ok = nested(63), *deep = nested(64);
  kf_graph *g;
  kf_graph_load_yaml_string(ctx, ok, strlen(ok), "t.yaml", &g);
  ck_assert_ptr_nonnull(strstr(kf_ctx_errmsg(ctx), "name: expected a string, found a list"));
  expect_error(deep, strlen(deep), "t.yaml:2:70: nesting deeper than 64 levels");
  free(ok);
  free(deep);
  char text[700];
  char name[300];
  memset(name, 'a', 255);
  name[255] = '\0';
  snprintf(text, sizeof text, "kfuse: 1\ninputs:\n  %s: {dtype: f32, shape: []}\noutputs: [%s]\n",
           name, name);
  g = load_string(text);
  ck_assert_int_eq(kf_value_rank(g, kf_graph_input(g, 0)), 0);
  kf_graph_destroy(g);
  strcat(name, "b");
  snprintf(text, sizeof text, "kfuse: 1\ninputs:\n  %s: {dtype: f32, shape: []}\noutputs: [%s]\n",
           name, name);
  expect_error(text, strlen(text),
               "t.yaml:3:3: input: 256 bytes long; names are at most 255 bytes");
  /* The length is checked before anything is read. */
  expect_error("kfuse: 1\n", ((size_t)64 << 20) + 1,
               "t.yaml:1:1: file is too large (67108865 bytes; the limit is 64 MiB)");
  char path[] = "/tmp/kfuse_big_XXXXXX";
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  ck_assert_int_eq(ftruncate(fd, ((off_t)64 << 20) + 1), 0);
  close(fd);
  ck_assert_int_eq(kf_graph_load_yaml(ctx, path, &g), KF_ERR_PARSE);
  ck_assert_ptr_nonnull(strstr(kf_ctx_errmsg(ctx), "file is too large (more than 64 MiB)"));
  unlink(path);
}
END_TEST

START_TEST(alias_bomb_is_refused_at_once) {
  /* Ten levels of nine-fold aliases: 9^10 nodes if expanded. */
  char text[4096];
  size_t o = (size_t)sprintf(text, "kfuse: 1\nl0: &l0 [x,x,x,x,x,x,x,x,x]\n");
  for (int i = 1; i < 10; i++)
    o += (size_t)sprintf(text + o, "l%d: &l%d [*l%d,*l%d,*l%d,*l%d,*l%d,*l%d,*l%d,*l%d,*l%d]\n", i,
                         i, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1);
  expect_error(text, o,
               "t.yaml:2:5: YAML anchors and aliases are not supported (anchor '&l0'); write the "
               "value out in full");
}
END_TEST

START_TEST(many_nodes_and_keys) {
  /* A long graph loads in linear time; a node with a thousand keys fails at
   * the first repeated one. */
  size_t cap = 1 << 20, o = 0;
  char *t = malloc(cap);
  o += (size_t)sprintf(t + o, "kfuse: 1\ninputs:\n  v0: {dtype: f32, shape: [16]}\nnodes:\n");
  for (int i = 1; i <= 5000; i++)
    o += (size_t)sprintf(t + o, "  - {name: v%d, op: sin, args: [v%d]}\n", i, i - 1);
  o += (size_t)sprintf(t + o, "outputs: [v5000]\n");
  kf_graph *g = load_string(t);
  ck_assert_int_eq(kf_graph_num_values(g), 5001);
  kf_graph_destroy(g);
  o = (size_t)sprintf(t, "kfuse: 1\nnodes:\n  - {name: y, op: sin");
  for (int i = 0; i < 1000; i++) o += (size_t)sprintf(t + o, ", args: [x]");
  sprintf(t + o, "}\noutputs: [y]\n");
  expect_error(t, strlen(t), "t.yaml:3:35: node #1: duplicate key 'args' (first at 3:24)");
  free(t);
}
END_TEST

/* The fuzzer's extra seeds (and whatever findings are copied there) replay
 * here too, so the gcc and sanitizer builds check them without clang. */
START_TEST(fuzz_corpus_replays) {
  char names[256][128];
  int n = list_yaml("tests/fuzz/corpus", names, 256);
  ck_assert_int_ge(n, 3);
  for (int i = 0; i < n; i++) {
    char path[300];
    snprintf(path, sizeof path, "tests/fuzz/corpus/%.127s", names[i]);
    kf_graph *g = NULL;
    if (kf_graph_load_yaml(ctx, path, &g) == KF_OK) {
      check_round_trip(g, path);
      kf_graph_destroy(g);
    } else {
      ck_assert_ptr_null(g);
      ck_assert_ptr_nonnull(strstr(kf_ctx_errmsg(ctx), path));
    }
  }
}
END_TEST

/* ---- kfuse check ---------------------------------------------------------------------- */

/* Runs the CLI with stdout and stderr captured into files; returns the exit
 * status, or -1 when the CLI is unknown (then the test passes vacuously). */
static int run_cli(const char *args, char **out, char **err) {
  const char *cli = getenv("KFUSE_CLI");
  if (!cli || access(cli, X_OK) != 0) return -1;
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "%s %s >/tmp/kfuse_check_out.%d 2>/tmp/kfuse_check_err.%d", cli, args,
           (int)getpid(), (int)getpid());
  int st = system(cmd);
  char p[64];
  snprintf(p, sizeof p, "/tmp/kfuse_check_out.%d", (int)getpid());
  *out = read_all(p, NULL);
  unlink(p);
  snprintf(p, sizeof p, "/tmp/kfuse_check_err.%d", (int)getpid());
  *err = read_all(p, NULL);
  unlink(p);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -2;
}

START_TEST(check_command) {
  char *out, *err;
  int rc = run_cli("check " EXAMPLES "/add_rmsnorm.yaml", &out, &err);
  if (rc == -1) return;
  ck_assert_int_eq(rc, 0);
  ck_assert_ptr_nonnull(strstr(out, "valid"));
  ck_assert_ptr_nonnull(strstr(out, "graph: add_rmsnorm"));
  ck_assert_ptr_nonnull(strstr(out, "x                bf16[8192,8192]"));
  ck_assert_ptr_nonnull(strstr(out, "mul x3"));
  ck_assert_str_eq(err, "");
  free(out);
  free(err);
  rc = run_cli("check " EXAMPLES "/adam_step.yaml", &out, &err);
  ck_assert_int_eq(rc, 0);
  ck_assert_ptr_nonnull(strstr(out, "inputs (104):"));
  ck_assert_ptr_nonnull(strstr(out, "... and 92 more"));
  free(out);
  free(err);
  rc = run_cli("check " BAD "/unknown_op.yaml", &out, &err);
  ck_assert_int_eq(rc, 3); /* bad input (docs/cli.md, exit codes) */
  ck_assert_str_eq(out, "");
  ck_assert_ptr_nonnull(strstr(err, BAD "/unknown_op.yaml:5:19: node 'y': unknown op 'expp'"));
  free(out);
  free(err);
  rc = run_cli("check", &out, &err);
  ck_assert_int_eq(rc, 2);
  ck_assert_ptr_nonnull(strstr(err, "usage: kfuse check FILE"));
  free(out);
  free(err);
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("yaml");
  TCase *tc = tcase_create("yaml");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, examples_load_and_round_trip);
  tcase_add_test(tc, example_contract_values);
  tcase_add_test(tc, bad_files_exact_messages);
  tcase_add_test(tc, bad_status_codes);
  tcase_add_test(tc, string_loader_places_errors_in_string);
  tcase_add_test(tc, literals_take_the_neighbours_dtype);
  tcase_add_test(tc, attribute_defaults_and_checks);
  tcase_add_test(tc, const_nodes);
  tcase_add_test(tc, saver_names_unnamed_values_without_collisions);
  tcase_add_test(tc, saver_numbers_round_trip);
  tcase_add_test(tc, saver_graph_names_and_files);
  tcase_add_test(tc, limits_depth_names_size);
  tcase_add_test(tc, alias_bomb_is_refused_at_once);
  tcase_add_test(tc, many_nodes_and_keys);
  tcase_add_test(tc, fuzz_corpus_replays);
  tcase_add_test(tc, check_command);
  suite_add_tcase(s, tc);
  return s;
}
