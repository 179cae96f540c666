/* test_knobs.c - the knob table (src/core/knobs.def): strict parsing with a
 * warning and the default, getenv in one file of src/, README.md and docs
 * checked against the table, plans keeping their knobs, and kf_plan_source
 * showing exactly the code that kf_plan_compile hands NVRTC. */
#include <dirent.h>
#include <stdio.h>
#include <string.h>

#include "check_main.h"
#include "codegen/program.h"
#include "core/knobs.h"
#include "fake_driver.h"
#include "kfuse.h"
#include "pipeline/pipeline.h"
#include "runtime/cache.h"
#include "runtime/cache_state.h"
#include "runtime/driver.h"

static char logged[8][512];
static char logged_comp[8][32];
static int n_logged;

static void capture(void *user, kf_log_level level, const char *component, const char *msg) {
  (void)user;
  if (level > KF_LOG_WARN || n_logged >= 8) return;
  snprintf(logged[n_logged], sizeof logged[0], "%s", msg);
  snprintf(logged_comp[n_logged++], sizeof logged_comp[0], "%s", component);
}

static kf_ctx *new_ctx(void) {
  kf_ctx *ctx;
  ck_assert_int_eq(kf_ctx_create(&ctx), KF_OK);
  kf_ctx_set_log(ctx, capture, NULL);
  n_logged = 0;
  return ctx;
}

static kf_plan *plan_of(kf_ctx *ctx, const char *yaml, const char *arch) {
  kf_graph *g;
  ck_assert_msg(kf_graph_load_yaml(ctx, yaml, &g) == KF_OK, "%s", kf_ctx_errmsg(ctx));
  kf_options opt;
  kf_options_init(&opt);
  opt.arch = arch;
  kf_plan *plan;
  ck_assert_msg(kf_plan_create(ctx, g, &opt, &plan) == KF_OK, "%s", kf_ctx_errmsg(ctx));
  kf_graph_destroy(g);
  return plan;
}

static void clear_env(void) {
  int n;
  const core_knob_row *rows = core_knob_rows(&n);
  for (int i = 0; i < n; i++)
    if (rows[i].cls != KC_SYS && strcmp(rows[i].name, "KFUSE_CACHE_DIR")) unsetenv(rows[i].name);
  core_knobs_reload();
}

/* ---- parsing ------------------------------------------------------------- */

/* Before the table, a bad value was ignored without a word. */
START_TEST(bad_value_warns_naming_the_range) {
  clear_env();
  kt_setenv("KFUSE_ROW_THREADS", "300", 1);
  kt_setenv("KFUSE_NO_FUSION", "yes", 1);
  kf_ctx *ctx = new_ctx();
  kf_plan *plan = plan_of(ctx, "examples/graphs/softmax.yaml", "sm_90");
  ck_assert_int_eq(n_logged, 2);
  ck_assert_msg(strstr(logged[0], "KFUSE_NO_FUSION='yes' is not 0 or 1; using the default (0)"),
                "%s", logged[0]);
  ck_assert_str_eq(logged_comp[0], "fuse");
  ck_assert_msg(
      strstr(logged[1], "KFUSE_ROW_THREADS='300' is not 0, or a power of two from 64 to 1024"),
      "%s", logged[1]);
  ck_assert_str_eq(logged_comp[1], "codegen");
  ck_assert_int_eq(plan->knobs->row_threads, 0);
  ck_assert(!plan->knobs->no_fusion);
  ck_assert(plan->options.fusion);
  /* once per context */
  kf_plan *again = plan_of(ctx, "examples/graphs/softmax.yaml", "sm_90");
  ck_assert_int_eq(n_logged, 2);
  kf_plan_destroy(again);
  kf_plan_destroy(plan);
  kf_ctx_destroy(ctx);
  clear_env();
}
END_TEST

START_TEST(values_parse_strictly) {
  static const struct {
    const char *var, *text;
    bool ok;
  } cases[] = {{"KFUSE_ROW_UNROLL", "0", true},
               {"KFUSE_ROW_UNROLL", "8", true},
               {"KFUSE_ROW_UNROLL", "3", false},
               {"KFUSE_ROW_UNROLL", "4x", false},
               {"KFUSE_ROW_STREAM", "evict_first", true},
               {"KFUSE_ROW_STREAM", "fast", false},
               {"KFUSE_ROW_L2PF", "0", true},
               {"KFUSE_ROW_L2PF", "65537", false},
               {"KFUSE_PW_WAVES", "1024", true},
               {"KFUSE_PW_WAVES", "0", false},
               {"KFUSE_CACHE_MAX_MB", "1.5", true},
               {"KFUSE_CACHE_MAX_MB", "1e3", false},
               {"KFUSE_ROW_STAGE", "thread", true},
               {"KFUSE_ROW_STAGE", "3", false},
               {"KFUSE_ROW_STAGE", "0", true},
               {"KFUSE_ROW_THREADS", "0", true},
               {"KFUSE_ROW_WAVES", "0", true},
               {"KFUSE_ROW_MIN_BLOCKS", "0", true},
               {"KFUSE_ROW_THREADS", "32", false},
               {"KFUSE_PDL", "0", true},
               {"KFUSE_PDL", "off", false}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    clear_env();
    kt_setenv(cases[i].var, cases[i].text, 1);
    kf_ctx *ctx = new_ctx();
    const core_knobs *k = core_knobs_get(ctx);
    ck_assert_msg((n_logged == 0) == cases[i].ok, "%s=%s: %d warnings", cases[i].var, cases[i].text,
                  n_logged);
    if (!cases[i].ok) ck_assert_ptr_nonnull(strstr(logged[0], cases[i].var));
    kf_ctx_destroy(ctx);
    (void)k;
  }
  clear_env();
  kt_setenv("KFUSE_ROW_STREAM", "l2_evict_first", 1);
  kt_setenv("KFUSE_ROW_UNROLL", "3", 1);
  kt_setenv("KFUSE_CACHE_MAX_MB", "1.5", 1);
  const core_knobs *k = core_knobs_quiet();
  ck_assert_int_eq(k->row_stream, 3);
  ck_assert_int_eq(k->row_unroll, 2); /* the default */
  ck_assert(k->cache_max_mb == 1.5);
  clear_env();
}
END_TEST

/* ---- one reader ------------------------------------------------------------ */

static int files_with_getenv(const char *dir, char *found, size_t size) {
  DIR *d = opendir(dir);
  ck_assert_msg(d != NULL, "cannot open %s (run from the source root)", dir);
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (e->d_name[0] == '.') continue;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    if (e->d_type == DT_DIR) {
      n += files_with_getenv(path, found, size);
      continue;
    }
    FILE *f = fopen(path, "r");
    if (!f) continue;
    char line[4096];
    bool hit = false;
    while (!hit && fgets(line, sizeof line, f)) hit = strstr(line, "getenv(") != NULL;
    fclose(f);
    if (hit) {
      n++;
      snprintf(found + strlen(found), size - strlen(found), " %s", path);
    }
  }
  closedir(d);
  return n;
}

START_TEST(getenv_in_one_file) {
  char found[4096] = "";
  int n = files_with_getenv("src", found, sizeof found);
  ck_assert_msg(n == 1 && strcmp(found, " src/core/knobs.c") == 0, "getenv in:%s", found);
}
END_TEST

/* ---- docs ------------------------------------------------------------------- */

static char *slurp(const char *path) {
  FILE *f = fopen(path, "r");
  ck_assert_msg(f != NULL, "%s", path);
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = malloc((size_t)n + 1);
  ck_assert_int_eq(fread(s, 1, (size_t)n, f), (size_t)n);
  s[n] = 0;
  fclose(f);
  return s;
}

static char *slurp(const char *path);

/* A macro of kfuse.h (KFUSE_VERSION_STRING), not a variable. */
static bool public_macro(const char *name, size_t len) {
  char *h = slurp("include/kfuse.h");
  bool found = false;
  for (const char *p = strstr(h, "#define KFUSE_"); p && !found;
       p = strstr(p + 1, "#define KFUSE_"))
    found = !strncmp(p + 8, name, len) && (p[8 + len] == ' ' || p[8 + len] == '(');
  free(h);
  return found;
}

static bool in_table(const char *name, size_t len) {
  int n;
  const core_knob_row *rows = core_knob_rows(&n);
  for (int i = 0; i < n; i++)
    if (strlen(rows[i].name) == len && !strncmp(rows[i].name, name, len)) return true;
  /* not the library's: build options, test-suite and Python variables */
  static const char *const others[] = {
      "KFUSE_SANITIZE", "KFUSE_WERROR", "KFUSE_TESTS", "KFUSE_FUZZ", "KFUSE_CLI",
      "KFUSE_UPDATE_GOLDEN", "KFUSE_DIFF_GRAPHS", "KFUSE_DIFF_FIRST", "KFUSE_TEST_SMALL",
      "KFUSE_EXAMPLE_MAX_ELEMS", "KFUSE_OOM_FILE", "KFUSE_PROPS_N", "KFUSE_PROPS_SEED",
      "KFUSE_PROPS_EDGE", "KFUSE_PROPS_PRINT", "KFUSE_PROPS_CHAINS", "KFUSE_OOM_STICKY",
      "KFUSE_OOM_DIFF",
      /* the Python package's own (python/) */
      "KFUSE_CHECK", "KFUSE_LIB", "KFUSE_BUILD", "KFUSE_TORCH_MATMUL", "KFUSE_TORCH_REGISTER",
      "KFUSE_TORCH_DEVICE", "KFUSE_TORCH_PRECOMPILE"};
  for (size_t i = 0; i < sizeof others / sizeof others[0]; i++)
    if (strlen(others[i]) == len && !strncmp(others[i], name, len)) return true;
  return public_macro(name, len);
}

/* Every KFUSE_ name in text is the table's (or a known other's); with
 * `rows`, every knob line of its generated tables is the table's line. */
static void no_stale_names(const char *path, bool rows_too) {
  char *s = slurp(path);
  for (const char *p = strstr(s, "KFUSE_"); p; p = strstr(p + 1, "KFUSE_")) {
    size_t len = strspn(p, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");
    if (p > s && (p[-1] == '_' || (p[-1] >= 'A' && p[-1] <= 'Z'))) continue;
    if (p[len] == '*') { /* a family: KFUSE_ROW_* */
      int n;
      const core_knob_row *rows = core_knob_rows(&n);
      bool any = false;
      for (int i = 0; i < n; i++) any |= strncmp(rows[i].name, p, len) == 0;
      ck_assert_msg(any, "%s names %.*s*, which src/core/knobs.def has none of", path, (int)len, p);
      continue;
    }
    ck_assert_msg(in_table(p, len), "%s names %.*s, which src/core/knobs.def does not have", path,
                  (int)len, p);
  }
  for (const char *p = strstr(s, "\n| `"); rows_too && p; p = strstr(p + 1, "\n| `")) {
    const char *name = p + 4;
    size_t len = strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");
    if (len == 0 || name[len] != '`') continue;
    int n;
    const core_knob_row *rows = core_knob_rows(&n);
    for (int i = 0; i < n; i++) {
      if (strlen(rows[i].name) != len || strncmp(rows[i].name, name, len)) continue;
      char want[1024];
      core_knob_markdown(&rows[i], want, sizeof want);
      size_t have = strcspn(p + 1, "\n");
      ck_assert_msg(have == strlen(want) && !strncmp(p + 1, want, have),
                    "%s: stale row\n  %.*s\nthe table says\n  %s", path, (int)have, p + 1, want);
    }
  }
  free(s);
}

static void lists(const char *path, core_knob_class cls) {
  char *s = slurp(path);
  int n;
  const core_knob_row *rows = core_knob_rows(&n);
  for (int i = 0; i < n; i++) {
    if (rows[i].cls != cls) continue;
    char want[1024];
    core_knob_markdown(&rows[i], want, sizeof want);
    ck_assert_msg(strstr(s, want), "%s does not list %s; add the line\n%s", path, rows[i].name,
                  want);
  }
  free(s);
}

START_TEST(docs_match_the_table) {
  lists("README.md", KC_USER);
  lists("docs/c-api.md", KC_USER);
  lists("docs/codegen.md", KC_TUNE);
  no_stale_names("README.md", true);
  DIR *d = opendir("docs");
  ck_assert_ptr_nonnull(d);
  struct dirent *e;
  while ((e = readdir(d))) {
    size_t len = strlen(e->d_name);
    /* the lead's logs of measurements name knobs since removed */
    if (len < 4 || strcmp(e->d_name + len - 3, ".md") || !strcmp(e->d_name, "status.md") ||
        !strcmp(e->d_name, "performance.md"))
      continue;
    char path[512];
    snprintf(path, sizeof path, "docs/%s", e->d_name);
    no_stale_names(path, !strcmp(e->d_name, "c-api.md") || !strcmp(e->d_name, "codegen.md"));
  }
  closedir(d);
}
END_TEST

/* ---- plans and targets ------------------------------------------------------ */

/* The knobs of kf_plan_create are the plan's: code generation no longer
 * looks at the environment (before, each emit read it again). */
START_TEST(plan_keeps_its_knobs) {
  clear_env();
  kt_setenv("KFUSE_ROW_STAGE", "2", 1);
  kf_ctx *ctx = new_ctx();
  kf_plan *staged = plan_of(ctx, "bench/graphs/layernorm_f32.yaml", "sm_90");
  char *a = kf_plan_source(staged, 0, NULL);
  ck_assert_ptr_nonnull(a);
  kt_unsetenv("KFUSE_ROW_STAGE");
  char *b = kf_plan_source(staged, 0, NULL);
  ck_assert_str_eq(a, b);
  kf_plan *plain = plan_of(ctx, "bench/graphs/layernorm_f32.yaml", "sm_90");
  char *c = kf_plan_source(plain, 0, NULL);
  ck_assert_str_ne(a, c);
  /* what changes the code changes the cache key (it hashes the source) */
  cache_key ka = rt_cache_key_kernel(a, "-O3", "sm_90"),
            kc = rt_cache_key_kernel(c, "-O3", "sm_90");
  ck_assert(memcmp(&ka, &kc, sizeof ka) != 0);
  kf_free(a);
  kf_free(b);
  kf_free(c);
  kf_plan_destroy(staged);
  kf_plan_destroy(plain);
  kf_ctx_destroy(ctx);
}
END_TEST

/* kf_plan_source (arch NULL) and kf_plan_compile take the arch and the SM
 * count from the same place: a device of 100 SMs sizes both the same. Before,
 * kf_plan_source sized grids for 132 SMs (sm_90's default). */
START_TEST(source_is_what_compiles) {
  clear_env();
  kt_setenv("KFUSE_DISK_CACHE", "0", 1);
  kt_setenv("KFUSE_ROW_WAVES", "1", 1); /* grids bound by the SM count */
  rt_fake_reset();
  rt_driver_override(rt_fake_driver());
  rt_fake_set_sm_count(100);
  kf_ctx *ctx = new_ctx();
  kf_plan *plan = plan_of(ctx, "bench/graphs/softmax_f32.yaml", NULL);
  ck_assert_msg(kf_plan_compile(plan) == KF_OK, "%s", kf_plan_errmsg(plan));
  ck_assert_str_eq(plan->code->arch, "sm_90");
  bool sized = false;
  for (int i = 0; i < kf_plan_num_launches(plan); i++) {
    char *shown = kf_plan_source(plan, i, NULL);
    ck_assert_ptr_nonnull(shown);
    ck_assert_str_eq(shown, plan->code->launches[i].src.source);
    sized |= strstr(shown, " 400 blocks") != NULL; /* 100 SMs x 4 blocks of 512 x 1 wave */
    kf_free(shown);
  }
  ck_assert_msg(sized, "no grid sized to the device's 100 SMs");
  kf_plan_destroy(plan);
  kf_ctx_destroy(ctx);
  rt_driver_override(NULL);
  rt_fake_reset();
  clear_env();
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("knobs");
  TCase *tc = tcase_create("knobs");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, bad_value_warns_naming_the_range);
  tcase_add_test(tc, values_parse_strictly);
  tcase_add_test(tc, getenv_in_one_file);
  tcase_add_test(tc, docs_match_the_table);
  tcase_add_test(tc, plan_keeps_its_knobs);
  tcase_add_test(tc, source_is_what_compiles);
  suite_add_tcase(s, tc);
  return s;
}
