/* cmd_compile.c - `kfuse compile FILE [--arch sm_90] [--json]`: plans a
 * graph file and compiles every launch with NVRTC through the caches. */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "kfuse.h"

static int usage(void) {
  fprintf(stderr, "usage: kfuse compile FILE [--arch sm_90] [--json]\n");
  return 2;
}

static void json_string(const char *s) {
  putchar('"');
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\')
      printf("\\%c", c);
    else if (c < 0x20)
      printf("\\u%04x", c);
    else
      putchar(c);
  }
  putchar('"');
}

static void print_stats(const char *file, const kf_compile_stats *s, bool json) {
  if (!json) {
    printf("%s: %d kernels for %s in %.1f ms: %d compiled, %d cache hits (%d memory, %d disk)\n",
           file, s->kernels, s->arch, s->compile_ms, s->compiled, s->cache_hits, s->mem_hits,
           s->disk_hits);
    return;
  }
  printf("{\"file\": ");
  json_string(file);
  printf(", \"arch\": ");
  json_string(s->arch);
  printf(
      ", \"kernels\": %d, \"compiled\": %d, \"cache_hits\": %d, \"mem_hits\": %d, "
      "\"disk_hits\": %d, \"compile_ms\": %.3f}\n",
      s->kernels, s->compiled, s->cache_hits, s->mem_hits, s->disk_hits, s->compile_ms);
}

static int compile_file(kf_ctx *ctx, const char *file, const char *arch, bool json) {
  kf_graph *g;
  if (kf_graph_load_yaml(ctx, file, &g) != KF_OK) {
    fprintf(stderr, "%s\n", kf_ctx_errmsg(ctx));
    return 1;
  }
  kf_options opt;
  kf_options_init(&opt);
  opt.arch = arch;
  kf_plan *plan;
  kf_status st = kf_compile(ctx, g, &opt, &plan);
  kf_graph_destroy(g);
  if (st != KF_OK) {
    fprintf(stderr, "kfuse compile: %s: %s\n", kf_status_name(st), kf_ctx_errmsg(ctx));
    return 1;
  }
  kf_compile_stats s;
  kf_plan_compile_stats(plan, &s);
  print_stats(file, &s, json);
  kf_plan_destroy(plan);
  return 0;
}

int cmd_compile(int argc, char **argv) {
  const char *file = NULL, *arch = NULL;
  bool json = false;
  for (int i = 0; i < argc; i++) {
    if (strcmp(argv[i], "--json") == 0)
      json = true;
    else if (strcmp(argv[i], "--arch") == 0 && i + 1 < argc)
      arch = argv[++i];
    else if (strncmp(argv[i], "--arch=", 7) == 0)
      arch = argv[i] + 7;
    else if (argv[i][0] != '-' && !file)
      file = argv[i];
    else
      return usage();
  }
  if (!file) return usage();
  kf_ctx *ctx;
  if (kf_ctx_create(&ctx) != KF_OK) {
    fprintf(stderr, "kfuse: cannot create a context\n");
    return 1;
  }
  int rc = compile_file(ctx, file, arch, json);
  kf_ctx_destroy(ctx);
  return rc;
}
