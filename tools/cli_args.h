/* cli_args.h - the one command-line parser of the kfuse subcommands
 * (getopt_long over a table per command), their --help, the exit codes. */
#ifndef KF_TOOLS_CLI_ARGS_H
#define KF_TOOLS_CLI_ARGS_H

#include <stdbool.h>
#include <stdio.h>

/* Exit codes of every command (docs/cli.md, `kfuse --help`). */
enum {
  CLI_OK = 0,        /* done; a check passed */
  CLI_MISMATCH = 1,  /* run --check: outputs differ from the oracle */
  CLI_USAGE = 2,     /* the command line is wrong */
  CLI_BAD_INPUT = 3, /* the graph file cannot be read or is not a valid graph */
  CLI_NO_DEVICE = 4, /* the command needs a GPU (or a check it could make without) */
  CLI_FAILED = 5     /* anything else: compiling, memory, the driver, writing files */
};

#define CLI_MAX_OPTS 24
#define CLI_MAX_POS 4

/* One option: --name, or --name VALUE / --name=VALUE when value is set. */
typedef struct cli_opt {
  const char *name;  /* "iters" */
  const char *value; /* what it takes, for the help ("N"); NULL: a flag */
  const char *help;  /* one line */
} cli_opt;

/* A command's interface: positional arguments and options. */
typedef struct cli_spec {
  const char *name; /* "run" */
  const char *args; /* the positionals for the usage line: "FILE" */
  int min_pos, max_pos;
  const char *summary; /* one line, for `kfuse --help` */
  const char *about;   /* a few lines for `kfuse CMD --help`, or NULL */
  const cli_opt *opts;
  int n_opts;
} cli_spec;

/* What the command line said: per option of the table (by index), whether
 * it was given and its value (the last one given wins). */
typedef struct cli_args {
  const char *pos[CLI_MAX_POS];
  int n_pos;
  bool set[CLI_MAX_OPTS];
  const char *val[CLI_MAX_OPTS];
} cli_args;

/* Parses argv (the words after the command name). Returns CLI_OK, or -1
 * after printing the help on stdout (--help, -h: exit 0), or CLI_USAGE
 * after a message on stderr: an unknown option (with "did you mean"), an
 * ambiguous abbreviation, a missing or unwanted value, too few or too many
 * positionals. */
int cli_parse(const cli_spec *spec, int argc, char **argv, cli_args *out);
/* The help of one command: usage line, about, one line per option. */
void cli_help(const cli_spec *spec, FILE *f);
/* "kfuse CMD: message" and the usage line on stderr; returns CLI_USAGE. */
int cli_usage_error(const cli_spec *spec, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* The index of option name in spec (a programming error if absent: -1). */
int cli_opt_index(const cli_spec *spec, const char *name);

#endif
