/* commands.h - the subcommands of the kfuse program, one file each
 * (tools/cmd_<name>.c): each has its interface (a cli_spec, which also
 * gives its --help) and a function that gets argv after the command name
 * and returns the exit status (cli_args.h). */
#ifndef KF_TOOLS_COMMANDS_H
#define KF_TOOLS_COMMANDS_H

#include "cli_args.h"

typedef int (*kfuse_command_fn)(int argc, char **argv);

typedef struct kfuse_command {
  const cli_spec *spec;
  kfuse_command_fn run;
} kfuse_command;

extern const cli_spec info_spec, check_spec, compile_spec, cache_spec, plan_spec, emit_spec,
    run_spec, bench_spec;

int cmd_info(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_compile(int argc, char **argv);
int cmd_cache(int argc, char **argv);
int cmd_plan(int argc, char **argv);
int cmd_emit(int argc, char **argv);

#endif
