/* cmd_cache.c - `kfuse cache stats [--json] | clear | path`: the disk
 * kernel cache's folder, contents and bound, and emptying it. */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "kfuse.h"

static int usage(void) {
  fprintf(stderr, "usage: kfuse cache stats [--json] | clear | path\n");
  return 2;
}

static void print_stats(kf_ctx *ctx, const kf_cache_stats *s, bool json) {
  const char *dir = kf_cache_dir(ctx);
  if (json) {
    printf("{\"dir\": \"");
    for (const char *p = dir; *p; p++) {
      if (*p == '"' || *p == '\\') putchar('\\');
      putchar(*p);
    }
    printf("\", \"enabled\": %s, \"entries\": %llu, \"bytes\": %llu, \"max_bytes\": %llu}\n",
           s->disk_enabled ? "true" : "false", (unsigned long long)s->disk_entries,
           (unsigned long long)s->disk_bytes, (unsigned long long)s->disk_max_bytes);
    return;
  }
  printf("folder:  %s%s\n", *dir ? dir : "(none)",
         s->disk_enabled ? "" : " (disabled, see warnings)");
  printf("entries: %llu\n", (unsigned long long)s->disk_entries);
  printf("size:    %.2f MB of %.0f MB\n", (double)s->disk_bytes / (1024.0 * 1024.0),
         (double)s->disk_max_bytes / (1024.0 * 1024.0));
}

int cmd_cache(int argc, char **argv) {
  if (argc < 1) return usage();
  bool json = argc == 2 && strcmp(argv[1], "--json") == 0;
  if (argc > 2 || (argc == 2 && (!json || strcmp(argv[0], "stats") != 0))) return usage();
  kf_ctx *ctx;
  if (kf_ctx_create(&ctx) != KF_OK) {
    fprintf(stderr, "kfuse: cannot create a context\n");
    return 1;
  }
  int rc = 0;
  kf_cache_stats s;
  if (strcmp(argv[0], "path") == 0) {
    const char *dir = kf_cache_dir(ctx);
    if (*dir)
      printf("%s\n", dir);
    else
      rc = 1;
  } else if (strcmp(argv[0], "stats") == 0 && kf_ctx_cache_stats(ctx, &s) == KF_OK) {
    print_stats(ctx, &s, json);
  } else if (strcmp(argv[0], "clear") == 0) {
    /* count what was really removed: a read-only folder removes nothing */
    uint64_t removed = 0, kept = 0;
    if (kf_cache_clear_report(ctx, &removed, &kept) == KF_OK) {
      printf("removed %llu entries from %s\n", (unsigned long long)removed, kf_cache_dir(ctx));
    } else {
      fprintf(stderr, "kfuse cache clear: %s\n", kf_ctx_errmsg(ctx));
      rc = 1;
    }
  } else {
    rc = usage();
  }
  kf_ctx_destroy(ctx);
  return rc;
}
