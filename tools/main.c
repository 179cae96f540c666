/* main.c - the kfuse program: dispatches to one subcommand per file. */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "kfuse.h"

static const kfuse_command commands[] = {
    {"info", "info", "versions of kfuse and NVRTC; the driver and GPU when present", cmd_info},
    {"check", "check FILE", "validate a YAML graph file and summarize it", cmd_check},
    {"compile", "compile FILE [--arch sm_90] [--json]",
     "compile every kernel of a graph file with NVRTC, through the caches", cmd_compile},
    {"cache", "cache stats [--json] | clear | path", "the disk kernel cache: contents, emptying, folder",
     cmd_cache},
    {"plan", "plan FILE [--json] [--dot] [--no-fusion] [--no-horizontal]",
     "how a graph file is fused: kernels, launches, buffers, decisions", cmd_plan},
    {"emit", "emit FILE [--arch sm_90] [--launch N]",
     "print the generated CUDA C of every launch (or of launch N)", cmd_emit},
    {"run", "run FILE [--check] [--json] [--trace OUT] ...",
     "run a graph file on random inputs (GPU, or the CPU reference without one)", cmd_run},
    {"bench", "bench FILE [--json] [--iters N]",
     "time the fused plan against fusion off and a device-to-device copy", cmd_bench},
};
static const int n_commands = (int)(sizeof commands / sizeof commands[0]);

static void usage(FILE *out) {
  fprintf(out, "usage: kfuse [--version] [--help] COMMAND [ARGS]\n\ncommands:\n");
  for (int i = 0; i < n_commands; i++)
    fprintf(out, "  %-44s %s\n", commands[i].usage, commands[i].help);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "version") == 0) {
    printf("kfuse %s\n", kf_version());
    return 0;
  }
  if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
      strcmp(argv[1], "help") == 0) {
    usage(stdout);
    return 0;
  }
  for (int i = 0; i < n_commands; i++)
    if (strcmp(argv[1], commands[i].name) == 0) return commands[i].run(argc - 2, argv + 2);
  fprintf(stderr, "kfuse: unknown command '%s'\n", argv[1]);
  usage(stderr);
  return 2;
}
