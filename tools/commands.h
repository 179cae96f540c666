/* commands.h - the subcommands of the kfuse program, one file each
 * (tools/cmd_<name>.c). Each gets argv after the command name and returns
 * the process exit status. */
#ifndef KF_TOOLS_COMMANDS_H
#define KF_TOOLS_COMMANDS_H

typedef int (*kfuse_command_fn)(int argc, char **argv);

typedef struct kfuse_command {
  const char *name;
  const char *usage; /* one line: "info" or "check FILE" */
  const char *help;  /* one line */
  kfuse_command_fn run;
} kfuse_command;

int cmd_info(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_compile(int argc, char **argv);
int cmd_cache(int argc, char **argv);
int cmd_plan(int argc, char **argv);
int cmd_emit(int argc, char **argv);

#endif
