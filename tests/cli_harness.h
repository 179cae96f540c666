/* cli_harness.h - running the built kfuse program from a Check suite
 * (test_cli.c, test_cli_args.c): its exit status, stdout and stderr; small
 * graph files in a temporary folder (setup/teardown as the fixture). */
#ifndef KF_TEST_CLI_HARNESS_H
#define KF_TEST_CLI_HARNESS_H

#include <check.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct cli_result {
  int status; /* exit status, or -1 when it did not exit normally */
  char *out, *err;
} cli_result;

static char tmpdir[256];

static inline char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return strdup("");
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = calloc((size_t)n + 1, 1);
  if (n > 0 && fread(s, 1, (size_t)n, f) != (size_t)n) s[0] = 0;
  fclose(f);
  return s;
}

/* Runs `kfuse ARGS` (ARGS through the shell) with stdout and stderr in
 * files; KFUSE_LOG=error keeps warnings out of stderr checks. */
__attribute__((format(printf, 1, 2))) static inline cli_result cli(const char *fmt, ...) {
  char args[2048], cmd[4096], out[400], err[400];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(args, sizeof args, fmt, ap);
  va_end(ap);
  snprintf(out, sizeof out, "%s/stdout", tmpdir);
  snprintf(err, sizeof err, "%s/stderr", tmpdir);
  snprintf(cmd, sizeof cmd, "KFUSE_LOG=error '%s' %s >'%s' 2>'%s' </dev/null", getenv("KFUSE_CLI"),
           args, out, err);
  int w = system(cmd);
  cli_result r = {WIFEXITED(w) ? WEXITSTATUS(w) : -1, slurp(out), slurp(err)};
  return r;
}

static inline void cli_free(cli_result *r) {
  free(r->out);
  free(r->err);
}

#define ck_contains(hay, needle) \
  ck_assert_msg(strstr((hay), (needle)) != NULL, "expected '%s' in:\n%s", (needle), (hay))

/* Writes a small graph file into the temporary folder; returns its path. */
static inline const char *write_file(const char *name, const char *text) {
  static char path[8][512];
  static int next;
  char *p = path[next++ % 8];
  snprintf(p, 512, "%s/%s", tmpdir, name);
  FILE *f = fopen(p, "w");
  ck_assert_ptr_nonnull(f);
  fputs(text, f);
  fclose(f);
  return p;
}

static inline const char *small_graph(void) {
  return write_file("small.yaml",
                    "kfuse: 1\nname: small\ninputs:\n"
                    "  x: {dtype: f32, shape: [64, 256]}\n"
                    "  b: {dtype: f32, shape: [256]}\n"
                    "nodes:\n"
                    "  - {name: h, op: add, args: [x, b]}\n"
                    "  - {name: g, op: gelu, args: [h]}\n"
                    "  - {name: y, op: softmax, args: [g], axis: -1}\n"
                    "outputs: [y, h]\n");
}

static inline const char *bad_graph(void) {
  return write_file("bad.yaml",
                    "kfuse: 1\ninputs:\n  x: {dtype: f32, shape: [4]}\n"
                    "nodes:\n  - {name: y, op: frobnicate, args: [x]}\noutputs: [y]\n");
}

/* Every command the tests use must be listed by --help: a missing one is a
 * failure, not a skip. */
static inline bool have_command(const char *name) {
  cli_result r = cli("--help");
  char pat[64];
  snprintf(pat, sizeof pat, "\n  %s ", name);
  bool yes = strstr(r.out, pat) != NULL;
  cli_free(&r);
  ck_assert_msg(yes, "`kfuse %s` is not listed by kfuse --help", name);
  return yes;
}

static inline bool have_gpu(void) {
  cli_result r = cli("info");
  bool yes = strstr(r.out, "\ngpu 0") != NULL;
  cli_free(&r);
  return yes;
}

static inline void setup(void) {
  snprintf(tmpdir, sizeof tmpdir, "/tmp/kfuse_test_cli.XXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(tmpdir));
  if (!getenv("KFUSE_CLI")) {
    fprintf(stderr, "SKIP: KFUSE_CLI is not set (run through ctest)\n");
    exit(77);
  }
}

static inline void teardown(void) {
  char cmd[400];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmpdir);
}

#endif
