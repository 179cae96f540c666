/* test_graph_cache.c - the parsed-graph cache of kf_graph_load_yaml
 * (src/pipeline/graph_load.c, src/ir/graph_blob.c): a large file loads from the
 * cache as the very graph the parser built (dump, hash, YAML text, names);
 * small files, failed loads and a disabled disk cache are not cached; and
 * the blob reader refuses every truncation and survives every flipped
 * byte. */
#include <dirent.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "check_main.h"
#include "core/strbuf.h"
#include "ir/graph_blob.h"
#include "kfuse.h"

static char dir[256];

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  (void)st, (void)flag, (void)ftw;
  return remove(path);
}

static void setup(void) {
  snprintf(dir, sizeof dir, "/tmp/kfuse-test-gcache-XXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(dir));
  kt_setenv("KFUSE_CACHE_DIR", dir, 1);
  kt_unsetenv("KFUSE_DISK_CACHE");
  kt_unsetenv("KFUSE_CACHE_MAX_MB");
}

static void teardown(void) {
  nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static int entries(void) {
  kf_ctx *ctx;
  ck_assert_int_eq(kf_ctx_create(&ctx), KF_OK);
  kf_cache_stats s;
  ck_assert_int_eq(kf_ctx_cache_stats(ctx, &s), KF_OK);
  kf_ctx_destroy(ctx);
  return (int)s.disk_entries;
}

/* Loads path in a fresh context (a fresh process would do the same). */
static kf_graph *load(const char *path) {
  kf_ctx *ctx;
  ck_assert_int_eq(kf_ctx_create(&ctx), KF_OK);
  kf_graph *g = NULL;
  ck_assert_msg(kf_graph_load_yaml(ctx, path, &g) == KF_OK, "%s: %s", path, kf_ctx_errmsg(ctx));
  kf_ctx_destroy(ctx);
  return g;
}

/* Everything a caller can see of the two graphs is the same. */
static void assert_same(kf_graph *a, kf_graph *b, const char *what) {
  char *da = kf_graph_dump(a), *db = kf_graph_dump(b);
  ck_assert_ptr_nonnull(da);
  ck_assert_ptr_nonnull(db);
  ck_assert_msg(strcmp(da, db) == 0, "%s: dumps differ", what);
  kf_free(da), kf_free(db);
  char *ya = kf_graph_to_yaml(a), *yb = kf_graph_to_yaml(b);
  ck_assert_ptr_nonnull(ya);
  ck_assert_ptr_nonnull(yb);
  ck_assert_msg(strcmp(ya, yb) == 0, "%s: YAML differs", what);
  kf_free(ya), kf_free(yb);
  kf_hash128 ha = kf_graph_hash(a), hb = kf_graph_hash(b);
  ck_assert(ha.lo == hb.lo && ha.hi == hb.hi);
  ck_assert_str_eq(kf_graph_name(a) ? kf_graph_name(a) : "",
                   kf_graph_name(b) ? kf_graph_name(b) : "");
  ck_assert_int_eq(kf_graph_num_inputs(a), kf_graph_num_inputs(b));
  ck_assert_int_eq(kf_graph_num_outputs(a), kf_graph_num_outputs(b));
  for (int i = 0; i < kf_graph_num_outputs(a); i++)
    ck_assert_int_eq(kf_graph_output(a, i), kf_graph_output(b, i));
}

START_TEST(large_files_load_from_the_cache_unchanged) {
  static const char *const files[] = {KFUSE_SOURCE_DIR "/bench/graphs/axpby200.yaml",
                                      KFUSE_SOURCE_DIR "/examples/graphs/adam_step.yaml",
                                      KFUSE_SOURCE_DIR "/examples/graphs/axpby_many.yaml"};
  for (int f = 0; f < 3; f++) {
    int before = entries();
    kf_graph *parsed = load(files[f]);
    ck_assert_int_eq(entries(), before + 1); /* kept */
    kf_graph *cached = load(files[f]);
    ck_assert_int_eq(entries(), before + 1); /* read, not written again */
    assert_same(parsed, cached, files[f]);
    kf_graph_destroy(parsed);
    kf_graph_destroy(cached);
  }
}
END_TEST

/* A string of more than 16 KB: n chained adds over one input. */
static char *big_text(int n, bool broken) {
  core_str b = {0};
  core_str_puts(&b, "kfuse: 1\nname: chain\ninputs:\n  x: {dtype: f32, shape: [64, 32]}\nnodes:\n");
  for (int i = 0; i < n; i++)
    core_str_printf(&b, "  - {name: v%d, op: add, args: [%s, 0.5]}\n", i,
                    i == 0                   ? "x"
                    : (broken && i == n - 1) ? "nowhere"
                                             : "v0");
  core_str_printf(&b, "outputs: [v%d]\n", n - 1);
  return core_str_take(&b);
}

START_TEST(small_broken_and_disabled_are_not_cached) {
  kf_ctx *ctx;
  ck_assert_int_eq(kf_ctx_create(&ctx), KF_OK);
  kf_graph *g = NULL;
  /* small: parsed every time, nothing kept */
  const char *small = "kfuse: 1\ninputs:\n  x: {dtype: f32, shape: [4]}\noutputs: [x]\n";
  ck_assert_int_eq(kf_graph_load_yaml_string(ctx, small, strlen(small), "s.yaml", &g), KF_OK);
  kf_graph_destroy(g);
  ck_assert_int_eq(entries(), 0);
  /* large and broken: the parser's message, twice, nothing kept */
  char *bad = big_text(600, true);
  ck_assert_uint_gt(strlen(bad), 16384);
  char first[1024];
  ck_assert_int_eq(kf_graph_load_yaml_string(ctx, bad, strlen(bad), "b.yaml", &g), KF_ERR_PARSE);
  snprintf(first, sizeof first, "%s", kf_ctx_errmsg(ctx));
  ck_assert_ptr_nonnull(strstr(first, "b.yaml:605:"));
  ck_assert_int_eq(kf_graph_load_yaml_string(ctx, bad, strlen(bad), "b.yaml", &g), KF_ERR_PARSE);
  ck_assert_str_eq(kf_ctx_errmsg(ctx), first);
  ck_assert_int_eq(entries(), 0);
  free(bad);
  /* large and good: kept; a one-byte edit is another key */
  char *good = big_text(600, false);
  ck_assert_int_eq(kf_graph_load_yaml_string(ctx, good, strlen(good), "g.yaml", &g), KF_OK);
  kf_graph_destroy(g);
  ck_assert_int_eq(entries(), 1);
  good[strlen(good) - 3] = '8'; /* outputs: [v598] */
  ck_assert_int_eq(kf_graph_load_yaml_string(ctx, good, strlen(good), "g.yaml", &g), KF_OK);
  ck_assert_str_eq(kf_value_name(g, kf_graph_output(g, 0)), "v598");
  kf_graph_destroy(g);
  ck_assert_int_eq(entries(), 2);
  kf_ctx_destroy(ctx);
  /* the disk cache off: loads, keeps nothing */
  kt_setenv("KFUSE_DISK_CACHE", "0", 1);
  ck_assert_int_eq(kf_ctx_create(&ctx), KF_OK);
  good[strlen(good) - 3] = '7';
  ck_assert_int_eq(kf_graph_load_yaml_string(ctx, good, strlen(good), "g.yaml", &g), KF_OK);
  kf_graph_destroy(g);
  kf_ctx_destroy(ctx);
  kt_unsetenv("KFUSE_DISK_CACHE");
  ck_assert_int_eq(entries(), 2);
  free(good);
}
END_TEST

/* Every example graph (together they use every op and attribute) comes
 * back from its bytes unchanged. */
START_TEST(every_example_round_trips_through_bytes) {
  kf_ctx *ctx;
  ck_assert_int_eq(kf_ctx_create(&ctx), KF_OK);
  DIR *d = opendir(KFUSE_SOURCE_DIR "/examples/graphs");
  ck_assert_ptr_nonnull(d);
  int n = 0;
  for (struct dirent *e; (e = readdir(d));) {
    size_t len = strlen(e->d_name);
    if (len < 6 || strcmp(e->d_name + len - 5, ".yaml") != 0) continue;
    char path[512];
    snprintf(path, sizeof path, "%s/examples/graphs/%s", KFUSE_SOURCE_DIR, e->d_name);
    kf_graph *g = NULL;
    ck_assert_msg(kf_graph_load_yaml(ctx, path, &g) == KF_OK, "%s", kf_ctx_errmsg(ctx));
    core_str b = {0};
    ir_graph_to_blob(g, &b);
    ck_assert(!b.oom);
    kf_graph *back = ir_graph_from_blob(ctx, b.s, b.len, NULL, 0);
    ck_assert_msg(back != NULL, "%s: not read back", e->d_name);
    assert_same(g, back, e->d_name);
    kf_graph_destroy(back);
    kf_graph_destroy(g);
    core_str_free(&b);
    n++;
  }
  closedir(d);
  ck_assert_int_ge(n, 18);
  kf_ctx_destroy(ctx);
}
END_TEST

/* The reader checks every count and index: each truncation is refused,
 * and a flipped byte gives NULL or a graph the builders accepted. */
START_TEST(blob_reader_refuses_bad_bytes) {
  kf_ctx *ctx;
  ck_assert_int_eq(kf_ctx_create(&ctx), KF_OK);
  kf_graph *g = NULL;
  ck_assert_int_eq(kf_graph_load_yaml(ctx, KFUSE_SOURCE_DIR "/examples/graphs/layernorm.yaml", &g),
                   KF_OK);
  core_str b = {0};
  ir_graph_to_blob(g, &b);
  ck_assert(!b.oom);
  kf_graph *back = ir_graph_from_blob(ctx, b.s, b.len, NULL, 0);
  ck_assert_ptr_nonnull(back);
  assert_same(g, back, "layernorm blob");
  kf_graph_destroy(back);
  for (size_t n = 0; n < b.len; n++) ck_assert_ptr_null(ir_graph_from_blob(ctx, b.s, n, NULL, 0));
  ck_assert_ptr_null(ir_graph_from_blob(ctx, NULL, 10, NULL, 0));
  int accepted = 0;
  for (size_t i = 0; i < b.len; i++) {
    for (int bit = 0; bit < 8; bit += 3) {
      b.s[i] ^= (char)(1 << bit);
      kf_graph *m = ir_graph_from_blob(ctx, b.s, b.len, NULL, 0);
      if (m) {
        accepted++;
        ck_assert_int_eq(kf_graph_status(m), KF_OK);
        kf_graph_destroy(m);
      }
      b.s[i] ^= (char)(1 << bit);
    }
  }
  /* flips in values (a constant, a shape) can still make a graph; in the
   * structure (magic, counts, operands, ops) they must not */
  ck_assert_int_lt(accepted, (int)b.len * 3);
  core_str_free(&b);
  kf_graph_destroy(g);
  kf_ctx_destroy(ctx);
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("graph_cache");
  TCase *tc = tcase_create("graph_cache");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, large_files_load_from_the_cache_unchanged);
  tcase_add_test(tc, small_broken_and_disabled_are_not_cached);
  tcase_add_test(tc, every_example_round_trips_through_bytes);
  tcase_add_test(tc, blob_reader_refuses_bad_bytes);
  suite_add_tcase(s, tc);
  return s;
}
