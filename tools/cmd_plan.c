/* cmd_plan.c - `kfuse plan FILE`: how a graph file is fused, as text, JSON
 * or Graphviz DOT, with the decision log; no GPU or NVRTC needed. */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "kfuse.h"

static int plan_usage(void) {
  fprintf(stderr, "usage: kfuse plan FILE [--json] [--dot] [--no-fusion] [--no-horizontal]\n");
  return 2;
}

int cmd_plan(int argc, char **argv) {
  const char *path = NULL;
  kf_format fmt = KF_FORMAT_TEXT;
  kf_options opt;
  kf_options_init(&opt);
  for (int i = 0; i < argc; i++) {
    if (strcmp(argv[i], "--json") == 0)
      fmt = KF_FORMAT_JSON;
    else if (strcmp(argv[i], "--dot") == 0)
      fmt = KF_FORMAT_DOT;
    else if (strcmp(argv[i], "--no-fusion") == 0)
      opt.fusion = false;
    else if (strcmp(argv[i], "--no-horizontal") == 0)
      opt.horizontal = false;
    else if (argv[i][0] == '-' || path)
      return plan_usage();
    else
      path = argv[i];
  }
  if (!path) return plan_usage();
  kf_ctx *ctx = NULL;
  if (kf_ctx_create(&ctx) != KF_OK) {
    fprintf(stderr, "kfuse plan: cannot create a context\n");
    return 1;
  }
  kf_graph *g = NULL;
  kf_plan *plan = NULL;
  int rc = 1;
  if (kf_graph_load_yaml(ctx, path, &g) != KF_OK) {
    fprintf(stderr, "%s\n", kf_ctx_errmsg(ctx));
  } else if (kf_plan_create(ctx, g, &opt, &plan) != KF_OK) {
    fprintf(stderr, "kfuse plan: %s\n", kf_ctx_errmsg(ctx));
  } else {
    char *text = kf_plan_describe(plan, fmt);
    if (text) {
      fputs(text, stdout);
      rc = 0;
    } else {
      fprintf(stderr, "kfuse plan: out of memory\n");
    }
    kf_free(text);
  }
  kf_plan_destroy(plan);
  kf_graph_destroy(g);
  kf_ctx_destroy(ctx);
  return rc;
}
