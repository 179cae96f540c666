/* cmd_emit.c - `kfuse emit FILE [--arch sm_90] [--launch N]`: the generated
 * CUDA C of a graph file's launches; no GPU or NVRTC needed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "kfuse.h"

static int emit_usage(void) {
  fprintf(stderr, "usage: kfuse emit FILE [--arch sm_90] [--launch N]\n");
  return 2;
}

static int emit_all(kf_plan *plan, const char *arch, int only) {
  int n = kf_plan_num_launches(plan);
  if (only >= n) {
    fprintf(stderr, "kfuse emit: launch %d out of range (the plan has %d)\n", only, n);
    return 1;
  }
  for (int L = 0; L < n; L++) {
    if (only >= 0 && L != only) continue;
    char *src = kf_plan_source(plan, L, arch);
    if (!src) {
      fprintf(stderr, "kfuse emit: %s\n", kf_plan_errmsg(plan));
      return 1;
    }
    printf("// ===== launch %d of %d =====\n%s\n", L, n, src);
    kf_free(src);
  }
  return 0;
}

int cmd_emit(int argc, char **argv) {
  const char *path = NULL, *arch = "sm_90";
  int only = -1;
  for (int i = 0; i < argc; i++) {
    if (strcmp(argv[i], "--arch") == 0 && i + 1 < argc)
      arch = argv[++i];
    else if (strcmp(argv[i], "--launch") == 0 && i + 1 < argc)
      only = atoi(argv[++i]);
    else if (argv[i][0] == '-' || path)
      return emit_usage();
    else
      path = argv[i];
  }
  if (!path) return emit_usage();
  kf_ctx *ctx = NULL;
  if (kf_ctx_create(&ctx) != KF_OK) {
    fprintf(stderr, "kfuse emit: cannot create a context\n");
    return 1;
  }
  kf_graph *g = NULL;
  kf_plan *plan = NULL;
  int rc = 1;
  kf_options opt;
  kf_options_init(&opt);
  opt.arch = arch;
  if (kf_graph_load_yaml(ctx, path, &g) != KF_OK)
    fprintf(stderr, "%s\n", kf_ctx_errmsg(ctx));
  else if (kf_plan_create(ctx, g, &opt, &plan) != KF_OK)
    fprintf(stderr, "kfuse emit: %s\n", kf_ctx_errmsg(ctx));
  else
    rc = emit_all(plan, arch, only);
  kf_plan_destroy(plan);
  kf_graph_destroy(g);
  kf_ctx_destroy(ctx);
  return rc;
}
