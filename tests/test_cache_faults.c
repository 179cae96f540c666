/* test_cache_faults.c - the disk cache against a hostile or broken folder:
 * FIFOs, symbolic links, foreign owners, huge files and directories under
 * entry names, graph-cache entries crafted with a valid checksum, a
 * read-only folder being cleared, bad size knobs and a tiny bound shared
 * with other processes. Each case is a logged miss or a reported error,
 * never a hang, a crash or a wrong graph. Some cases need root (chown, a
 * second uid): as another user they say so and pass. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cache_util.h"
#include "core/strbuf.h"
#include "ir/graph_blob.h"
#include "ir/ir.h"
#include "ir/names.h"
#include "ir/yaml_load.h"
#include "runtime/cache.h"
#include "runtime/cache_disk.h"
#include "runtime/cache_state.h"

/* A uid no one here uses, for foreign owners and an unprivileged child. */
#define OTHER_UID 54321

static void setup(void) {
  cache_fixture_setup("faults");
  alarm(20); /* a regression that blocks (a FIFO) fails instead of hanging ctest */
}

static void teardown(void) {
  alarm(0);
  cache_fixture_teardown();
}

static struct cache_state *ready(kf_ctx *ctx) {
  struct cache_state *cs = rt_cache_state_get(ctx);
  ck_assert_ptr_nonnull(cs);
  ck_assert(rt_cache_disk_ready(cs));
  return cs;
}

static bool is_root(const char *test) {
  if (geteuid() == 0) return true;
  fprintf(stderr, "%s: skipped, needs root (chown to uid %d)\n", test, OTHER_UID);
  return false;
}

/* Expects key's read to be a counted, logged miss that says `why`. */
static void expect_refused(struct cache_state *cs, cache_key key, const char *why) {
  void *data = (void *)1;
  size_t size = 1;
  int before = warnings;
  ck_assert(!rt_cache_disk_get(cs, key, &data, &size));
  ck_assert_ptr_null(data);
  ck_assert_int_eq(warnings, before + 1);
  ck_assert_msg(strstr(last_warning, why) != NULL, "warning: %s", last_warning);
}

/* ---- what lies under an entry's name -------------------------------------- */

START_TEST(fifo_is_a_miss_not_a_hang) {
  kf_ctx *ctx = new_ctx();
  struct cache_state *cs = ready(ctx);
  char path[512];
  entry_path(key_n(1), path, sizeof path);
  ck_assert_int_eq(mkfifo(path, 0600), 0);
  expect_refused(cs, key_n(1), "a FIFO");
  ck_assert_msg(!exists(path), "the FIFO was not removed");
  /* and the entry can be written and read after */
  ck_assert(rt_cache_disk_put(cs, key_n(1), "abc", 3));
  void *data;
  size_t size;
  ck_assert(rt_cache_disk_get(cs, key_n(1), &data, &size));
  free(data);
  kf_ctx_destroy(ctx);
}
END_TEST

/* A valid entry of key 1 outside the folder, linked in under key 1's name:
 * the link is not followed (a miss), and removed; its target stays. */
START_TEST(symlinked_entry_not_followed) {
  kf_ctx *ctx = new_ctx();
  struct cache_state *cs = ready(ctx);
  char path[512], outside[512];
  entry_path(key_n(1), path, sizeof path);
  snprintf(outside, sizeof outside, "%s/outside.kfc", top);
  ck_assert(rt_cache_disk_put(cs, key_n(1), "payload", 7));
  ck_assert_int_eq(rename(path, outside), 0);
  ck_assert_int_eq(symlink(outside, path), 0);
  expect_refused(cs, key_n(1), "a symbolic link");
  ck_assert_msg(!exists(path), "the link was not removed");
  ck_assert_msg(exists(outside), "the link's target was removed");
  /* a dangling link, and one to a FIFO: the same */
  ck_assert_int_eq(symlink("/nonexistent/kfuse", path), 0);
  expect_refused(cs, key_n(1), "a symbolic link");
  char fifo[512];
  snprintf(fifo, sizeof fifo, "%s/fifo", top);
  ck_assert_int_eq(mkfifo(fifo, 0600), 0);
  ck_assert_int_eq(symlink(fifo, path), 0);
  expect_refused(cs, key_n(1), "a symbolic link");
  ck_assert(exists(fifo));
  /* stats count regular files only */
  ck_assert_int_eq(symlink(outside, path), 0);
  kf_cache_stats s;
  ck_assert_int_eq(kf_ctx_cache_stats(ctx, &s), KF_OK);
  ck_assert_uint_eq(s.disk_entries, 0);
  kf_ctx_destroy(ctx);
}
END_TEST

START_TEST(foreign_owned_entry_refused) {
  if (!is_root("foreign_owned_entry_refused")) return;
  kf_ctx *ctx = new_ctx();
  struct cache_state *cs = ready(ctx);
  char path[512];
  entry_path(key_n(2), path, sizeof path);
  ck_assert(rt_cache_disk_put(cs, key_n(2), "payload", 7));
  ck_assert_int_eq(chown(path, OTHER_UID, OTHER_UID), 0);
  expect_refused(cs, key_n(2), "owned by uid 54321");
  ck_assert(!exists(path));
  kf_ctx_destroy(ctx);
}
END_TEST

/* The folder of another user is refused, and one we own that others may
 * write to, sticky or not. */
START_TEST(foreign_or_shared_folder_refused) {
  ck_assert_int_eq(mkdir(dir, 0700), 0);
  static const mode_t modes[] = {0770, 0777, 01777};
  for (int i = 0; i < 3; i++) {
    ck_assert_int_eq(chmod(dir, modes[i]), 0);
    kf_ctx *ctx = new_ctx();
    struct cache_state *cs = rt_cache_state_get(ctx);
    ck_assert(!rt_cache_disk_ready(cs));
    ck_assert_msg(strstr(last_warning, "writable by group or others"), "%s", last_warning);
    kf_ctx_destroy(ctx);
  }
  ck_assert_int_eq(chmod(dir, 0700), 0);
  if (!is_root("foreign_or_shared_folder_refused (owner)")) return;
  ck_assert_int_eq(chown(dir, OTHER_UID, OTHER_UID), 0);
  kf_ctx *ctx = new_ctx();
  ck_assert(!rt_cache_disk_ready(rt_cache_state_get(ctx)));
  ck_assert_msg(strstr(last_warning, "owned by another user (uid 54321"), "%s", last_warning);
  kf_ctx_destroy(ctx);
}
END_TEST

/* A sparse 300 MB file with a header that matches it: refused unread. */
START_TEST(huge_entry_is_a_miss) {
  kf_ctx *ctx = new_ctx();
  struct cache_state *cs = ready(ctx);
  char path[512];
  entry_path(key_n(3), path, sizeof path);
  ck_assert(rt_cache_disk_put(cs, key_n(3), "x", 1));
  uint64_t payload = (uint64_t)300 << 20;
  unsigned char size_field[8];
  for (int i = 0; i < 8; i++) size_field[i] = (unsigned char)(payload >> (8 * i));
  int fd = open(path, O_WRONLY);
  ck_assert_int_ge(fd, 0);
  ck_assert_int_eq(pwrite(fd, size_field, 8, 32), 8);
  ck_assert_int_eq(ftruncate(fd, (off_t)(48 + payload)), 0);
  close(fd);
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  expect_refused(cs, key_n(3), "larger than any entry");
  clock_gettime(CLOCK_MONOTONIC, &t1);
  ck_assert_msg(t1.tv_sec - t0.tv_sec < 2, "the huge entry was read");
  ck_assert(!exists(path));
  kf_ctx_destroy(ctx);
}
END_TEST

/* ---- crafted parsed-graph entries ------------------------------------------ */

/* A graph text over the 16 KB caching threshold with a reduction, a clamp
 * and a transpose besides a chain of adds. */
static char *graph_text(void) {
  core_str b = {0};
  core_str_puts(&b,
                "kfuse: 1\nname: crafted\ninputs:\n  x: {dtype: f32, shape: [64, 32]}\n"
                "nodes:\n");
  for (int i = 0; i < 500; i++)
    core_str_printf(&b, "  - {name: v%d, op: add, args: [%s, 0.5]}\n", i, i ? "v0" : "x");
  core_str_puts(&b,
                "  - {name: s, op: sum, args: [v499], axes: [1]}\n"
                "  - {name: c, op: clamp, args: [v499], min: 0, max: 1}\n"
                "  - {name: t, op: transpose, args: [x], perm: [1, 0]}\n"
                "outputs: [s, c, t]\n");
  return core_str_take(&b);
}

static int32_t find(const kf_graph *g, const char *name) {
  int32_t v = ir_names_find(g, name);
  ck_assert_int_ge(v, 0);
  return v;
}

typedef void (*craft_fn)(kf_graph *g);

static void edited_shape(kf_graph *g) {
  g->nodes[find(g, "v7")].shape[0] = 4096;
}
static void huge_shape(kf_graph *g) {
  ir_node *n = &g->nodes[find(g, "v9")];
  n->shape[0] = n->shape[1] = (int64_t)1 << 62;
}
static void huge_input(kf_graph *g) {
  g->nodes[find(g, "x")].shape[0] = (int64_t)1 << 62;
}
static void bad_dtype(kf_graph *g) {
  g->nodes[find(g, "v3")].dtype = (kf_dtype)99;
}
static void other_dtype(kf_graph *g) {
  g->nodes[find(g, "v3")].dtype = KF_I32;
}
static void bad_op(kf_graph *g) {
  g->nodes[find(g, "v3")].op = (ir_op)999;
}
static void composite_op(kf_graph *g) {
  g->nodes[find(g, "v3")].op = IR_OP_SOFTMAX;
}
static void short_arity(kf_graph *g) {
  g->nodes[find(g, "v5")].nargs = 1;
}
static void long_arity(kf_graph *g) {
  ir_node *n = &g->nodes[find(g, "c")];
  n->nargs = 3;
  n->args[1] = n->args[2] = 0;
}
static void bad_axes(kf_graph *g) {
  g->nodes[find(g, "s")].axes = 0x80;
}
static void flipped_keepdim(kf_graph *g) {
  g->nodes[find(g, "s")].keepdim = true;
}
static void bad_perm(kf_graph *g) {
  g->nodes[find(g, "t")].perm[1] = 1;
}
static void bad_bounds(kf_graph *g) {
  g->nodes[find(g, "c")].lo = 5;
}
static void forward_operand(kf_graph *g) {
  g->nodes[find(g, "v2")].args[0] = find(g, "v8");
}
static void bad_rank(kf_graph *g) {
  g->nodes[find(g, "v2")].rank = 9;
}

/* Writes the parse of text, edited by craft, as the text's cache entry
 * (a valid checksum: the blob store computes it), then loads the text:
 * the entry must be refused (logged) and the load give the parse. */
static void check_crafted(craft_fn craft, const char *what) {
  char *text = graph_text();
  size_t len = strlen(text);
  ck_assert_uint_gt(len, 16384);
  kf_ctx *ctx = new_ctx();
  kf_graph *parsed = NULL, *edited = NULL, *loaded = NULL;
  ck_assert_int_eq(ir_yaml_load_string(ctx, text, len, "g.yaml", &parsed), KF_OK);
  ck_assert_int_eq(ir_yaml_load_string(ctx, text, len, "g.yaml", &edited), KF_OK);
  craft(edited);
  core_str b = {0};
  ir_graph_to_blob(edited, &b);
  ck_assert(!b.oom);
  rt_cache_blob_put(ctx, rt_cache_key_blob("graph-v1", text, len), b.s, b.len);
  warnings = 0;
  ck_assert_int_eq(kf_graph_load_yaml_string(ctx, text, len, "g.yaml", &loaded), KF_OK);
  ck_assert_msg(warnings == 1 && strstr(last_warning, "refused"), "%s: crafted entry accepted (%s)",
                what, last_warning);
  char *want = kf_graph_dump(parsed), *got = kf_graph_dump(loaded);
  ck_assert_msg(strcmp(want, got) == 0, "%s: the load is not the parse", what);
  kf_free(want), kf_free(got);
  kf_graph_destroy(loaded);
  /* the parse replaced the entry: the next load is a quiet hit */
  ck_assert_int_eq(kf_graph_load_yaml_string(ctx, text, len, "g.yaml", &loaded), KF_OK);
  ck_assert_int_eq(warnings, 1);
  kf_graph_destroy(loaded);
  core_str_free(&b);
  kf_graph_destroy(parsed);
  kf_graph_destroy(edited);
  kf_ctx_destroy(ctx);
  free(text);
}

START_TEST(crafted_graph_entries_refused) {
  static const struct {
    craft_fn fn;
    const char *what;
  } cases[] = {{edited_shape, "edited shape"},    {huge_shape, "huge extents"},
               {huge_input, "huge input"},        {bad_dtype, "dtype out of range"},
               {other_dtype, "another dtype"},    {bad_op, "op out of range"},
               {composite_op, "composite op"},    {short_arity, "too few operands"},
               {long_arity, "too many operands"}, {bad_axes, "axes out of range"},
               {flipped_keepdim, "keepdim"},      {bad_perm, "not a permutation"},
               {bad_bounds, "min above max"},     {forward_operand, "operand defined later"},
               {bad_rank, "rank out of range"}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    check_crafted(cases[i].fn, cases[i].what);
}
END_TEST

/* A FIFO under the graph entry's name: the load parses, at once. */
START_TEST(graph_entry_fifo_parses) {
  char *text = graph_text();
  size_t len = strlen(text);
  kf_ctx *ctx = new_ctx();
  ready(ctx);
  char path[512];
  entry_path(rt_cache_key_blob("graph-v1", text, len), path, sizeof path);
  ck_assert_int_eq(mkfifo(path, 0600), 0);
  kf_graph *g = NULL;
  ck_assert_int_eq(kf_graph_load_yaml_string(ctx, text, len, "g.yaml", &g), KF_OK);
  ck_assert_int_eq(kf_graph_num_outputs(g), 3);
  kf_graph_destroy(g);
  kf_ctx_destroy(ctx);
  free(text);
}
END_TEST

/* ---- clearing ----------------------------------------------------------------- */

/* Entries, a FIFO, a link and a non-empty directory under entry names:
 * the count is what was removed, the directory is reported. */
START_TEST(clear_counts_what_it_removed) {
  kf_ctx *ctx = new_ctx();
  struct cache_state *cs = ready(ctx);
  char path[512], target[512], inner[600];
  ck_assert(rt_cache_disk_put(cs, key_n(1), "a", 1));
  ck_assert(rt_cache_disk_put(cs, key_n(2), "b", 1));
  entry_path(key_n(3), path, sizeof path);
  ck_assert_int_eq(mkfifo(path, 0600), 0);
  snprintf(target, sizeof target, "%s/target", top);
  fclose(fopen(target, "w"));
  entry_path(key_n(4), path, sizeof path);
  ck_assert_int_eq(symlink(target, path), 0);
  entry_path(key_n(5), path, sizeof path);
  ck_assert_int_eq(mkdir(path, 0700), 0);
  snprintf(inner, sizeof inner, "%s/x", path);
  fclose(fopen(inner, "w"));
  uint64_t removed = 99, kept = 99;
  ck_assert_int_eq(kf_cache_clear_report(ctx, &removed, &kept), KF_ERR_IO);
  ck_assert_uint_eq(removed, 4);
  ck_assert_uint_eq(kept, 1);
  ck_assert_msg(strstr(kf_ctx_errmsg(ctx), strerror(ENOTEMPTY)), "%s", kf_ctx_errmsg(ctx));
  ck_assert(exists(target));
  ck_assert(exists(inner));
  ck_assert_int_eq(unlink(inner), 0);
  ck_assert_int_eq(kf_cache_clear_report(ctx, &removed, &kept), KF_OK);
  ck_assert_uint_eq(removed, 1);
  ck_assert_uint_eq(kept, 0);
  ck_assert(!exists(path));
  kf_ctx_destroy(ctx);
}
END_TEST

/* Runs fn in a child process as OTHER_UID (root) or as ourselves, with the
 * folder (and its entry) owned by that user; the child's exit status. */
static int as_owner(int (*fn)(void)) {
  ck_assert_int_eq(chmod(top, 0755), 0);
  kf_ctx *ctx = new_ctx();
  struct cache_state *cs = ready(ctx);
  ck_assert(rt_cache_disk_put(cs, key_n(1), "a", 1));
  kf_ctx_destroy(ctx);
  char path[512];
  entry_path(key_n(1), path, sizeof path);
  if (geteuid() == 0) {
    ck_assert_int_eq(chown(dir, OTHER_UID, OTHER_UID), 0);
    ck_assert_int_eq(chown(path, OTHER_UID, OTHER_UID), 0);
  }
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    if (geteuid() == 0 && (setgid(OTHER_UID) != 0 || setuid(OTHER_UID) != 0)) _exit(90);
    if (chmod(dir, 0500) != 0) _exit(91);
    _exit(fn());
  }
  int status;
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  ck_assert(exists(path)); /* nothing was removed */
  return WIFEXITED(status) ? WEXITSTATUS(status) : 100 + status;
}

static int clear_read_only(void) {
  kf_ctx *ctx;
  if (kf_ctx_create(&ctx) != KF_OK) return 10;
  kf_ctx_set_log(ctx, count_log, NULL);
  uint64_t removed = 99, kept = 99;
  kf_status st = kf_cache_clear_report(ctx, &removed, &kept);
  int rc = st != KF_ERR_IO ? 11 : removed != 0 ? 12 : kept != 1 ? 13 : 0;
  if (!rc && !strstr(kf_ctx_errmsg(ctx), strerror(EACCES))) rc = 14;
  kf_ctx_destroy(ctx);
  return rc;
}

START_TEST(clear_read_only_folder_reports) {
  ck_assert_int_eq(as_owner(clear_read_only), 0);
}
END_TEST

static char out_path[512], err_path[512];

static int cli_clear(void) {
  const char *cli = getenv("KFUSE_CLI");
  if (!cli) return 20;
  if (access(cli, X_OK) != 0) return 77; /* a checkout this user cannot reach */
  int out = open(out_path, O_WRONLY | O_TRUNC);
  int err = open(err_path, O_WRONLY | O_TRUNC);
  if (out < 0 || err < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0) return 21;
  execl(cli, cli, "cache", "clear", (char *)NULL);
  return 22;
}

static char *slurp(const char *path) {
  FILE *f = fopen(path, "r");
  ck_assert_ptr_nonnull(f);
  static char buf[4096];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  buf[n] = 0;
  fclose(f);
  return buf;
}

START_TEST(cli_clear_read_only_folder_fails) {
  snprintf(out_path, sizeof out_path, "%s/out", top);
  snprintf(err_path, sizeof err_path, "%s/err", top);
  /* made here: the child may run as a user who cannot create files in top */
  fclose(fopen(out_path, "w"));
  fclose(fopen(err_path, "w"));
  ck_assert_int_eq(chmod(out_path, 0666), 0);
  ck_assert_int_eq(chmod(err_path, 0666), 0);
  int rc = as_owner(cli_clear);
  if (rc == 77) {
    fprintf(stderr, "cli_clear_read_only_folder_fails: skipped, uid %d cannot run %s\n", OTHER_UID,
            getenv("KFUSE_CLI"));
    return;
  }
  ck_assert_int_eq(rc, 5); /* failed (docs/cli.md, exit codes) */
  ck_assert_msg(strstr(slurp(out_path), "removed") == NULL, "stdout: %s", slurp(out_path));
  const char *err = slurp(err_path);
  ck_assert_msg(strstr(err, "kfuse cache clear") && strstr(err, strerror(EACCES)), "stderr: %s",
                err);
}
END_TEST

/* ---- knobs and the bound ----------------------------------------------------- */

START_TEST(bad_size_knobs_warn_and_use_default) {
  static const char *const bad[] = {"1e-9", "0",    "-5",  " 5",      "5 ",
                                    "5MB",  "0x10", "inf", "nan",     "1e3",
                                    "0.5",  "1.",   ".5",  "2000000", "99999999999999999999",
                                    "1,5"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    kt_setenv("KFUSE_CACHE_MAX_MB", bad[i], 1);
    kt_setenv("KFUSE_CACHE_MEM_MAX_MB", bad[i], 1);
    warnings = 0;
    kf_ctx *ctx = new_ctx();
    kf_cache_stats s;
    ck_assert_int_eq(kf_ctx_cache_stats(ctx, &s), KF_OK);
    ck_assert_msg(s.disk_max_bytes == 1024ull << 20, "KFUSE_CACHE_MAX_MB=%s accepted", bad[i]);
    ck_assert_msg(s.mem_max_bytes == 256ull << 20, "KFUSE_CACHE_MEM_MAX_MB=%s accepted", bad[i]);
    ck_assert_msg(warnings == 2, "'%s': %d warnings", bad[i], warnings);
    ck_assert_msg(
        strstr(last_warning, "KFUSE_CACHE_MAX_MB") && strstr(last_warning, "1 to 1048576"), "%s",
        last_warning);
    kf_ctx_destroy(ctx);
  }
  static const struct {
    const char *text;
    uint64_t bytes;
  } good[] = {
      {"1", 1ull << 20}, {"1.5", 3ull << 19}, {"512", 512ull << 20}, {"1048576", 1ull << 40}};
  for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
    kt_setenv("KFUSE_CACHE_MAX_MB", good[i].text, 1);
    kt_unsetenv("KFUSE_CACHE_MEM_MAX_MB");
    warnings = 0;
    kf_ctx *ctx = new_ctx();
    kf_cache_stats s;
    ck_assert_int_eq(kf_ctx_cache_stats(ctx, &s), KF_OK);
    ck_assert_uint_eq(s.disk_max_bytes, good[i].bytes);
    ck_assert_int_eq(warnings, 0);
    kf_ctx_destroy(ctx);
  }
}
END_TEST

START_TEST(bad_disk_cache_switch_warns) {
  kt_setenv("KFUSE_DISK_CACHE", "off", 1);
  kf_ctx *ctx = new_ctx();
  kf_cache_stats s;
  ck_assert_int_eq(kf_ctx_cache_stats(ctx, &s), KF_OK);
  ck_assert(s.disk_enabled);
  ck_assert_msg(warnings == 1 && strstr(last_warning, "KFUSE_DISK_CACHE='off' is not 0 or 1"), "%s",
                last_warning);
  kf_ctx_destroy(ctx);
}
END_TEST

static void set_mtime(cache_key k, time_t when) {
  char path[512];
  entry_path(k, path, sizeof path);
  struct timespec ts[2] = {{when, 0}, {when, 0}};
  ck_assert_int_eq(utimensat(AT_FDCWD, path, ts, 0), 0);
}

/* The smallest bound with three fresh 400 KB entries (another process may
 * be about to read them): none is evicted until they age; then the least
 * recently used go first. */
START_TEST(tiny_bound_spares_fresh_entries) {
  kt_setenv("KFUSE_CACHE_MAX_MB", "1", 1);
  size_t n = 400 * 1024;
  char *payload = calloc(1, n);
  kf_ctx *other = new_ctx();
  struct cache_state *cs = ready(other);
  for (int i = 0; i < 3; i++) ck_assert(rt_cache_disk_put(cs, key_n(i), payload, n));
  kf_ctx_destroy(other);
  kf_ctx *ctx = new_ctx();
  cs = ready(ctx);
  ck_assert(rt_cache_disk_put(cs, key_n(3), payload, n));
  char path[512];
  for (int i = 0; i < 4; i++) {
    entry_path(key_n(i), path, sizeof path);
    ck_assert_msg(exists(path), "fresh entry %d was evicted", i);
  }
  ck_assert_int_eq(atomic_load(&cs->evictions), 0);
  kf_ctx_destroy(ctx);
  time_t t = time(NULL) - 1000;
  for (int i = 0; i < 4; i++) set_mtime(key_n(i), t + i);
  ctx = new_ctx();
  cs = ready(ctx);
  ck_assert(rt_cache_disk_put(cs, key_n(4), payload, n));
  for (int i = 0; i < 5; i++) {
    entry_path(key_n(i), path, sizeof path);
    ck_assert_msg(exists(path) == (i >= 3), "entry %d: wrong one evicted", i);
  }
  ck_assert_int_eq(atomic_load(&cs->evictions), 3);
  kf_ctx_destroy(ctx);
  free(payload);
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("cache_faults");
  TCase *tc = tcase_create("cache_faults");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 30);
  tcase_add_test(tc, fifo_is_a_miss_not_a_hang);
  tcase_add_test(tc, symlinked_entry_not_followed);
  tcase_add_test(tc, foreign_owned_entry_refused);
  tcase_add_test(tc, foreign_or_shared_folder_refused);
  tcase_add_test(tc, huge_entry_is_a_miss);
  tcase_add_test(tc, crafted_graph_entries_refused);
  tcase_add_test(tc, graph_entry_fifo_parses);
  tcase_add_test(tc, clear_counts_what_it_removed);
  tcase_add_test(tc, clear_read_only_folder_reports);
  tcase_add_test(tc, cli_clear_read_only_folder_fails);
  tcase_add_test(tc, bad_size_knobs_warn_and_use_default);
  tcase_add_test(tc, bad_disk_cache_switch_warns);
  tcase_add_test(tc, tiny_bound_spares_fresh_entries);
  suite_add_tcase(s, tc);
  return s;
}
