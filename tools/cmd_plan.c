/* cmd_plan.c - `kfuse plan FILE`: how a graph file is fused, as text, JSON
 * or Graphviz DOT, with the decision log; no GPU or NVRTC needed. */
#include <stdio.h>
#include <string.h>

#include "cli_util.h"
#include "commands.h"

enum { PLAN_JSON, PLAN_DOT, PLAN_NO_FUSION, PLAN_NO_HORIZONTAL };
static const cli_opt plan_opts[] = {
    [PLAN_JSON] = {"json", NULL, "the plan as JSON (kf_plan_describe; one line per kernel)"},
    [PLAN_DOT] = {"dot", NULL, "the plan as Graphviz DOT"},
    [PLAN_NO_FUSION] = {"no-fusion", NULL, "one kernel per op"},
    [PLAN_NO_HORIZONTAL] = {"no-horizontal", NULL, "no packing of independent kernels"},
};
const cli_spec plan_spec = {
    "plan", "FILE",    1, 1, "how a graph file is fused: kernels, launches, buffers, decisions",
    NULL,   plan_opts, 4};

int cmd_plan(int argc, char **argv) {
  cli_args a;
  int rc = cli_parse(&plan_spec, argc, argv, &a);
  if (rc) return rc < 0 ? CLI_OK : rc;
  if (a.set[PLAN_JSON] && a.set[PLAN_DOT]) return cli_usage_error(&plan_spec, "--json or --dot");
  const char *file = a.pos[0];
  bool json = a.set[PLAN_JSON];
  kf_format fmt = json ? KF_FORMAT_JSON : a.set[PLAN_DOT] ? KF_FORMAT_DOT : KF_FORMAT_TEXT;
  kf_options opt;
  kf_options_init(&opt);
  if (a.set[PLAN_NO_FUSION]) opt.fusion = false;
  if (a.set[PLAN_NO_HORIZONTAL]) opt.horizontal = false;
  kf_ctx *ctx = cli_ctx("plan");
  kf_graph *g = ctx ? cli_load(ctx, "plan", file, &rc) : NULL;
  kf_plan *plan = NULL;
  if (!ctx) rc = CLI_FAILED;
  kf_status st = g ? kf_plan_create(ctx, g, &opt, &plan) : KF_OK;
  if (st != KF_OK) {
    cli_fail("plan", "%s", kf_ctx_errmsg(ctx));
    rc = cli_exit_code(st);
  }
  char *text = plan ? kf_plan_describe(plan, fmt) : NULL;
  if (plan && !text) {
    cli_fail("plan", "out of memory");
    rc = CLI_FAILED;
  }
  /* Text and DOT name values from the file: shown escaped. The JSON is
   * escaped by the library's writer already. */
  if (text) fputs(json ? text : cli_show_text(text), stdout);
  if (rc && json) cli_json_failure(file, rc);
  kf_free(text);
  kf_plan_destroy(plan);
  kf_graph_destroy(g);
  kf_ctx_destroy(ctx);
  return rc;
}
