/* cli_args.c - the subcommands' parser (cli_args.h) on getopt_long: it
 * permutes, so options and FILE come in any order, and takes --opt VALUE,
 * --opt=VALUE and unambiguous abbreviations of long options alike. */
#include "cli_args.h"

#include <getopt.h>
#include <stdarg.h>
#include <string.h>

#include "cli_util.h"
#include "kfuse.h"

#define OPT_BASE 256 /* getopt_long's val for option i is OPT_BASE + i */

void cli_help(const cli_spec *spec, FILE *f) {
  fprintf(f, "usage: kfuse %s%s%s [options]\n\n%s\n", spec->name, *spec->args ? " " : "",
          spec->args, spec->summary);
  if (spec->about) fprintf(f, "\n%s\n", spec->about);
  fprintf(f, "\noptions:\n");
  for (int i = 0; i < spec->n_opts; i++) {
    char left[64];
    const cli_opt *o = &spec->opts[i];
    snprintf(left, sizeof left, "--%s%s%s", o->name, o->value ? " " : "", o->value ? o->value : "");
    fprintf(f, "  %-22s %s\n", left, o->help);
  }
  fprintf(f, "  %-22s %s\n", "-h, --help", "this help");
  fprintf(f, "\n--opt VALUE and --opt=VALUE are the same; exit codes: kfuse --help\n");
}

int cli_usage_error(const cli_spec *spec, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  fprintf(stderr, "kfuse %s: %s\nusage: kfuse %s%s%s [options] (kfuse %s --help lists them)\n",
          spec->name, cli_show(msg), spec->name, *spec->args ? " " : "", spec->args, spec->name);
  return CLI_USAGE;
}

int cli_opt_index(const cli_spec *spec, const char *name) {
  for (int i = 0; i < spec->n_opts; i++)
    if (!strcmp(spec->opts[i].name, name)) return i;
  return -1;
}

/* The option's name as typed: "--sed=3" gives "sed". */
static void typed_name(const char *arg, char *buf, size_t size) {
  while (*arg == '-') arg++;
  snprintf(buf, size, "%.*s", (int)strcspn(arg, "="), arg);
}

/* An option getopt_long refused: unknown, ambiguous, or given a value it
 * does not take. */
static int bad_option(const cli_spec *spec, const char *arg, int optopt_) {
  if (optopt_ >= OPT_BASE && optopt_ < OPT_BASE + spec->n_opts)
    return cli_usage_error(spec, "--%s takes no value ('%s')", spec->opts[optopt_ - OPT_BASE].name,
                           arg);
  if (optopt_ > 0 && optopt_ < OPT_BASE) /* a short option: only -h is one */
    return cli_usage_error(spec, "unknown option '-%c'", optopt_);
  char name[128], list[512] = "";
  typed_name(arg, name, sizeof name);
  int prefixed = 0;
  const char *names[CLI_MAX_OPTS + 1];
  for (int i = 0; i < spec->n_opts; i++) {
    names[i] = spec->opts[i].name;
    if (*name && !strncmp(names[i], name, strlen(name)) && strlen(list) + 40 < sizeof list) {
      snprintf(list + strlen(list), sizeof list - strlen(list), "%s--%s", prefixed ? ", " : "",
               names[i]);
      prefixed++;
    }
  }
  names[spec->n_opts] = "help";
  if (prefixed > 1) return cli_usage_error(spec, "ambiguous option '%s' (%s)", arg, list);
  int near = kf_suggest(name, names, spec->n_opts + 1);
  if (near >= 0)
    return cli_usage_error(spec, "unknown option '%s'; did you mean '--%s'?", arg, names[near]);
  return cli_usage_error(spec, "unknown option '%s'", arg);
}

int cli_parse(const cli_spec *spec, int argc, char **argv, cli_args *out) {
  memset(out, 0, sizeof *out);
  struct option longs[CLI_MAX_OPTS + 2];
  for (int i = 0; i < spec->n_opts && i < CLI_MAX_OPTS; i++)
    longs[i] = (struct option){spec->opts[i].name, spec->opts[i].value ? required_argument : 0,
                               NULL, OPT_BASE + i};
  longs[spec->n_opts] = (struct option){"help", no_argument, NULL, 'h'};
  longs[spec->n_opts + 1] = (struct option){0};
  /* getopt wants the program name first: the command's name stands in. */
  char *args[argc + 2];
  args[0] = (char *)spec->name;
  for (int i = 0; i < argc; i++) args[i + 1] = argv[i];
  args[argc + 1] = NULL;
  optind = 0; /* glibc: start afresh */
  opterr = 0; /* our own messages */
  int c;
  while ((c = getopt_long(argc + 1, args, ":h", longs, NULL)) != -1) {
    if (c == 'h') {
      cli_help(spec, stdout);
      return -1;
    }
    if (c == ':' && optopt >= OPT_BASE)
      return cli_usage_error(spec, "--%s needs a value (%s)", spec->opts[optopt - OPT_BASE].name,
                             spec->opts[optopt - OPT_BASE].value);
    if (c == '?' || c == ':') return bad_option(spec, args[optind - 1], optopt);
    out->set[c - OPT_BASE] = true;
    out->val[c - OPT_BASE] = optarg;
  }
  for (int i = optind; i < argc + 1; i++) {
    if (out->n_pos == spec->max_pos)
      return cli_usage_error(spec, "unexpected argument '%s'%s", args[i],
                             spec->max_pos ? " (one FILE only)" : "");
    out->pos[out->n_pos++] = args[i];
  }
  if (out->n_pos < spec->min_pos) return cli_usage_error(spec, "no %s given", spec->args);
  return CLI_OK;
}
