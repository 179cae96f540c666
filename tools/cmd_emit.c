/* cmd_emit.c - `kfuse emit FILE [--arch sm_90] [--launch N]`: the generated
 * CUDA C of a graph file's launches; no GPU or NVRTC needed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_util.h"
#include "commands.h"

enum { EMIT_ARCH, EMIT_LAUNCH, EMIT_JSON };
static const cli_opt emit_opts[] = {
    [EMIT_ARCH] = {"arch", "ARCH", "generate for this GPU (default sm_90)"},
    [EMIT_LAUNCH] = {"launch", "N", "only launch N (from 0)"},
    [EMIT_JSON] = {"json", NULL, "one JSON object: each launch's source as a string"},
};
const cli_spec emit_spec = {
    "emit", "FILE",    1, 1, "print the generated CUDA C of every launch (or of launch N)",
    NULL,   emit_opts, 3};

static void report(char **src, int n, const char *file, const char *arch, bool json) {
  if (!json) {
    for (int L = 0; L < n; L++)
      if (src[L]) printf("// ===== launch %d of %d =====\n%s\n", L, n, cli_show_text(src[L]));
    return;
  }
  cli_json j;
  cj_init(&j, stdout);
  cj_obj(&j, NULL);
  cj_bool(&j, "ok", true);
  cj_str(&j, "file", file);
  cj_str(&j, "arch", arch);
  cj_int(&j, "launches", n);
  cj_arr(&j, "sources");
  for (int L = 0; L < n; L++) {
    if (!src[L]) continue;
    cj_obj(&j, NULL);
    cj_int(&j, "launch", L);
    cj_str(&j, "source", src[L]);
    cj_obj_end(&j);
  }
  cj_arr_end(&j);
  cj_obj_end(&j);
  cj_done(&j);
}

/* Generates every source asked for (all, or launch `only`) before printing
 * any, so a failure prints nothing but the message; the exit code. */
static int emit_all(kf_plan *plan, const char *file, const char *arch, long long only, bool json) {
  int n = kf_plan_num_launches(plan), rc = CLI_OK;
  if (only >= n) {
    cli_fail("emit", "--launch %lld is out of range: the plan has %d launch%s", only, n,
             n == 1 ? "" : "es");
    return CLI_USAGE;
  }
  char **src = calloc((size_t)n + 1, sizeof *src);
  if (!src) {
    cli_fail("emit", "out of memory");
    return CLI_FAILED;
  }
  for (int L = 0; L < n && rc == CLI_OK; L++) {
    if (only >= 0 && L != only) continue;
    if (!(src[L] = kf_plan_source(plan, L, arch))) {
      cli_fail("emit", "%s", kf_plan_errmsg(plan));
      rc = CLI_FAILED;
    }
  }
  if (rc == CLI_OK) report(src, n, file, arch, json);
  for (int L = 0; L < n; L++) kf_free(src[L]);
  free(src);
  return rc;
}

int cmd_emit(int argc, char **argv) {
  cli_args a;
  int rc = cli_parse(&emit_spec, argc, argv, &a);
  if (rc) return rc < 0 ? CLI_OK : rc;
  const char *file = a.pos[0], *arch = a.set[EMIT_ARCH] ? a.val[EMIT_ARCH] : "sm_90";
  long long only = -1;
  if (a.set[EMIT_LAUNCH] && !cli_int("emit", "launch", a.val[EMIT_LAUNCH], 0, 1 << 30, &only))
    return CLI_USAGE;
  bool json = a.set[EMIT_JSON];
  kf_ctx *ctx = cli_ctx("emit");
  kf_graph *g = ctx ? cli_load(ctx, "emit", file, &rc) : NULL;
  kf_plan *plan = NULL;
  if (!ctx) rc = CLI_FAILED;
  kf_options opt;
  kf_options_init(&opt);
  opt.arch = arch;
  kf_status st = g ? kf_plan_create(ctx, g, &opt, &plan) : KF_OK;
  if (st != KF_OK) {
    cli_fail("emit", "%s", kf_ctx_errmsg(ctx));
    rc = cli_exit_code(st);
  }
  if (plan) rc = emit_all(plan, file, arch, only, json);
  if (rc && json) cli_json_failure(file, rc);
  kf_plan_destroy(plan);
  kf_graph_destroy(g);
  kf_ctx_destroy(ctx);
  return rc;
}
