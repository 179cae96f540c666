/* main.c - the kfuse program: dispatches to one subcommand per file; the
 * global help lists the commands and the exit codes. */
#include <stdio.h>
#include <string.h>

#include "cli_util.h"
#include "commands.h"
#include "kfuse.h"

static const kfuse_command commands[] = {
    {&info_spec, cmd_info},   {&check_spec, cmd_check}, {&compile_spec, cmd_compile},
    {&cache_spec, cmd_cache}, {&plan_spec, cmd_plan},   {&emit_spec, cmd_emit},
    {&run_spec, cmd_run},     {&bench_spec, cmd_bench},
};
#define N_COMMANDS ((int)(sizeof commands / sizeof commands[0]))

static void usage(FILE *out) {
  fprintf(out, "usage: kfuse [--version] [--help] COMMAND [ARGS]\n\ncommands:\n");
  for (int i = 0; i < N_COMMANDS; i++) {
    const cli_spec *s = commands[i].spec;
    char left[64];
    snprintf(left, sizeof left, "%s%s%s", s->name, *s->args ? " " : "", s->args);
    fprintf(out, "  %-24s %s\n", left, s->summary);
  }
  fprintf(out,
          "  %-24s %s\n\n"
          "Every command takes --help (or: kfuse help COMMAND) and --json (one JSON object on\n"
          "stdout, also when it fails: {\"ok\":false,\"error\":...,\"exit\":N}).\n\n"
          "exit codes:\n"
          "  0  done (and a --check passed)\n"
          "  1  run --check: the outputs differ from the oracle\n"
          "  2  usage: an unknown command or option, a missing or bad option value\n"
          "  3  bad input: the graph file cannot be read or is not a valid graph\n"
          "  4  no device: the command needs a GPU (bench; run --check with nothing to\n"
          "     compare with)\n"
          "  5  failed: compiling, out of memory, the driver, writing a file\n",
          "help COMMAND", "the options of COMMAND, one line each");
}

static const kfuse_command *find(const char *name) {
  for (int i = 0; i < N_COMMANDS; i++)
    if (!strcmp(name, commands[i].spec->name)) return &commands[i];
  return NULL;
}

/* An unknown word where a command was expected: exit 2, with the closest. */
static int unknown(const char *word) {
  const char *names[N_COMMANDS + 1];
  for (int i = 0; i < N_COMMANDS; i++) names[i] = commands[i].spec->name;
  names[N_COMMANDS] = "help";
  int near = kf_suggest(word, names, N_COMMANDS + 1);
  if (word[0] == '-')
    fprintf(stderr, "kfuse: unknown option '%s'\n", cli_show(word));
  else if (near >= 0)
    fprintf(stderr, "kfuse: unknown command '%s'; did you mean '%s'?\n", cli_show(word),
            names[near]);
  else
    fprintf(stderr, "kfuse: unknown command '%s'\n", cli_show(word));
  fprintf(stderr, "kfuse --help lists the commands\n");
  return CLI_USAGE;
}

/* `kfuse help [COMMAND]` */
static int help(int argc, char **argv) {
  if (argc == 0) {
    usage(stdout);
    return CLI_OK;
  }
  const kfuse_command *c = find(argv[0]);
  if (argc > 1 || !c) {
    if (argc > 1) fprintf(stderr, "kfuse help: one COMMAND only\n");
    return argc > 1 ? CLI_USAGE : unknown(argv[0]);
  }
  cli_help(c->spec, stdout);
  return CLI_OK;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return CLI_USAGE;
  }
  const char *w = argv[1];
  if (!strcmp(w, "--version") || !strcmp(w, "version")) {
    printf("kfuse %s\n", kf_version());
    return CLI_OK;
  }
  if (!strcmp(w, "--help") || !strcmp(w, "-h")) return help(0, NULL);
  if (!strcmp(w, "help")) return help(argc - 2, argv + 2);
  const kfuse_command *c = find(w);
  return c ? c->run(argc - 2, argv + 2) : unknown(w);
}
