/* cmd_cache.c - `kfuse cache stats|clear|path [--json]`: the disk kernel
 * cache's folder, contents and bound, and emptying it. */
#include <stdio.h>
#include <string.h>

#include "cli_util.h"
#include "commands.h"

enum { CACHE_JSON };
static const cli_opt cache_opts[] = {
    [CACHE_JSON] = {"json", NULL, "one JSON object: dir, enabled, entries, bytes, max_bytes"},
};
const cli_spec cache_spec = {
    "cache",
    "stats|clear|path",
    1,
    1,
    "the disk kernel cache: contents, emptying, folder",
    "stats: the folder, its entries and size; clear: remove every entry; path: the folder.\n"
    "KFUSE_CACHE_DIR sets the folder, KFUSE_CACHE_MAX_MB its bound.",
    cache_opts,
    1};

static void print_stats(const char *dir, const kf_cache_stats *s, long long removed, bool json) {
  if (json) {
    cli_json j;
    cj_init(&j, stdout);
    cj_obj(&j, NULL);
    cj_bool(&j, "ok", true);
    cj_str(&j, "dir", dir);
    cj_bool(&j, "enabled", s->disk_enabled);
    cj_int(&j, "entries", (long long)s->disk_entries);
    cj_int(&j, "bytes", (long long)s->disk_bytes);
    cj_int(&j, "max_bytes", (long long)s->disk_max_bytes);
    if (removed >= 0) cj_int(&j, "removed", removed);
    cj_obj_end(&j);
    cj_done(&j);
    return;
  }
  printf("folder:  %s%s\n", *dir ? cli_show(dir) : "(none)",
         s->disk_enabled ? "" : " (disabled, see warnings)");
  printf("entries: %llu\n", (unsigned long long)s->disk_entries);
  printf("size:    %.2f MB of %.0f MB\n", (double)s->disk_bytes / (1024.0 * 1024.0),
         (double)s->disk_max_bytes / (1024.0 * 1024.0));
}

static int run_action(kf_ctx *ctx, const char *what, bool json) {
  const char *dir = kf_cache_dir(ctx);
  kf_cache_stats s;
  if (!strcmp(what, "path")) {
    if (!*dir) {
      cli_fail("cache", "no cache folder (set KFUSE_CACHE_DIR)");
      return CLI_FAILED;
    }
    if (json) {
      cli_json j;
      cj_init(&j, stdout);
      cj_obj(&j, NULL);
      cj_bool(&j, "ok", true);
      cj_str(&j, "dir", dir);
      cj_obj_end(&j);
      cj_done(&j);
    } else {
      printf("%s\n", cli_show(dir));
    }
    return CLI_OK;
  }
  memset(&s, 0, sizeof s);
  kf_status st = kf_ctx_cache_stats(ctx, &s);
  if (st == KF_OK && !strcmp(what, "stats")) {
    print_stats(dir, &s, -1, json);
    return CLI_OK;
  }
  /* count what was really removed: a read-only folder removes nothing */
  uint64_t removed = 0, kept = 0;
  if (!strcmp(what, "clear") && (st = kf_cache_clear_report(ctx, &removed, &kept)) == KF_OK) {
    if (json)
      print_stats(dir, &s, (long long)removed, true);
    else
      printf("removed %llu entries from %s\n", (unsigned long long)removed, cli_show(dir));
    return CLI_OK;
  }
  cli_fail(strcmp(what, "clear") ? "cache" : "cache clear", "%s", kf_ctx_errmsg(ctx));
  return cli_exit_code(st);
}

int cmd_cache(int argc, char **argv) {
  cli_args a;
  int rc = cli_parse(&cache_spec, argc, argv, &a);
  if (rc) return rc < 0 ? CLI_OK : rc;
  static const char *const actions[] = {"stats", "clear", "path"};
  const char *what = a.pos[0];
  if (strcmp(what, "stats") && strcmp(what, "clear") && strcmp(what, "path")) {
    int near = kf_suggest(what, actions, 3);
    if (near >= 0)
      return cli_usage_error(&cache_spec, "unknown action '%s'; did you mean '%s'?", what,
                             actions[near]);
    return cli_usage_error(&cache_spec, "unknown action '%s'; expected stats, clear or path", what);
  }
  bool json = a.set[CACHE_JSON];
  kf_ctx *ctx = cli_ctx("cache");
  rc = ctx ? run_action(ctx, what, json) : CLI_FAILED;
  if (rc && json) cli_json_failure(NULL, rc);
  kf_ctx_destroy(ctx);
  return rc;
}
