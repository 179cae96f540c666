/* cmd_compile.c - `kfuse compile FILE [--arch sm_90] [--json]`: plans a
 * graph file and compiles every launch with NVRTC through the caches. */
#include <stdio.h>
#include <string.h>

#include "cli_util.h"
#include "commands.h"

enum { COMPILE_ARCH, COMPILE_JSON };
static const cli_opt compile_opts[] = {
    [COMPILE_ARCH] = {"arch", "ARCH", "compile for this GPU (sm_90); default: GPU 0's"},
    [COMPILE_JSON] = {"json", NULL, "one JSON object: kernels, cache hits, compile_ms"},
};
const cli_spec compile_spec = {
    "compile",
    "FILE",
    1,
    1,
    "compile every kernel of a graph file with NVRTC, through the caches",
    "Without a GPU, give --arch (sm_90). KFUSE_DUMP_DIR=DIR also writes the plan and each\n"
    "kernel's CUDA C and CUBIN there.",
    compile_opts,
    2};

static void report_text(const char *file, const kf_compile_stats *s) {
  printf("%s: %d kernels for %s in %.1f ms: %d compiled, %d cache hits (%d memory, %d disk)\n",
         cli_show(file), s->kernels, cli_show(s->arch), s->compile_ms, s->compiled, s->cache_hits,
         s->mem_hits, s->disk_hits);
}

static void report_json(const char *file, const kf_compile_stats *s) {
  cli_json j;
  cj_init(&j, stdout);
  cj_obj(&j, NULL);
  cj_bool(&j, "ok", true);
  cj_str(&j, "file", file);
  cj_str(&j, "arch", s->arch);
  cj_int(&j, "kernels", s->kernels);
  cj_int(&j, "compiled", s->compiled);
  cj_int(&j, "cache_hits", s->cache_hits);
  cj_int(&j, "mem_hits", s->mem_hits);
  cj_int(&j, "disk_hits", s->disk_hits);
  cj_fixed(&j, "compile_ms", s->compile_ms, 3);
  cj_obj_end(&j);
  cj_done(&j);
}

static int compile_file(kf_ctx *ctx, const char *file, const char *arch, bool json) {
  int rc = CLI_OK;
  kf_graph *g = cli_load(ctx, "compile", file, &rc);
  if (!g) return rc;
  kf_options opt;
  kf_options_init(&opt);
  opt.arch = arch;
  kf_plan *plan;
  kf_status st = kf_compile(ctx, g, &opt, &plan);
  kf_graph_destroy(g);
  if (st != KF_OK) {
    cli_fail("compile", "%s: %s", kf_status_name(st), kf_ctx_errmsg(ctx));
    return cli_exit_code(st);
  }
  kf_compile_stats s;
  kf_plan_compile_stats(plan, &s);
  if (json)
    report_json(file, &s);
  else
    report_text(file, &s);
  kf_plan_destroy(plan);
  return CLI_OK;
}

int cmd_compile(int argc, char **argv) {
  cli_args a;
  int rc = cli_parse(&compile_spec, argc, argv, &a);
  if (rc) return rc < 0 ? CLI_OK : rc;
  bool json = a.set[COMPILE_JSON];
  kf_ctx *ctx = cli_ctx("compile");
  rc = ctx ? compile_file(ctx, a.pos[0], a.val[COMPILE_ARCH], json) : CLI_FAILED;
  if (rc && json) cli_json_failure(a.pos[0], rc);
  kf_ctx_destroy(ctx);
  return rc;
}
