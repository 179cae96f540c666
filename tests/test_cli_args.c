/* test_cli_args.c - the kfuse program's interface: every command's --help
 * and `kfuse help CMD`, --opt=VALUE for every option, --json on every
 * command (parsed here), the exit codes, "did you mean", and text from
 * files shown escaped. Runs the built binary (KFUSE_CLI). */
#include <ctype.h>

#include "check_main.h"
#include "cli_harness.h"

static const char *const commands[] = {"info", "check", "compile", "cache",
                                       "plan", "emit",  "run",     "bench"};
#define N_COMMANDS 8

#define ck_lacks(hay, needle) \
  ck_assert_msg(strstr((hay), (needle)) == NULL, "did not expect '%s' in:\n%s", (needle), (hay))

/* ---- a strict JSON reader (RFC 8259), to check documents ------------------ */

static const char *json_value(const char *p, int depth);

static const char *json_ws(const char *p) {
  while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
  return p;
}

static const char *json_string(const char *p) {
  if (*p++ != '"') return NULL;
  for (; *p != '"'; p++) {
    if ((unsigned char)*p < 0x20) return NULL; /* raw control characters are not JSON */
    if (*p != '\\') continue;
    p++;
    if (*p == 'u') {
      for (int i = 1; i <= 4; i++)
        if (!isxdigit((unsigned char)p[i])) return NULL;
      p += 4;
    } else if (!strchr("\"\\/bfnrt", *p) || !*p) {
      return NULL;
    }
  }
  return p + 1;
}

static const char *json_number(const char *p) {
  const char *s = p;
  if (*p == '-') p++;
  if (*p == '0') {
    p++;
  } else if (isdigit((unsigned char)*p)) {
    while (isdigit((unsigned char)*p)) p++;
  } else {
    return NULL;
  }
  if (*p == '.') {
    if (!isdigit((unsigned char)*++p)) return NULL;
    while (isdigit((unsigned char)*p)) p++;
  }
  if (*p == 'e' || *p == 'E') {
    p++;
    if (*p == '+' || *p == '-') p++;
    if (!isdigit((unsigned char)*p)) return NULL;
    while (isdigit((unsigned char)*p)) p++;
  }
  return p > s ? p : NULL;
}

/* Members of an object (close '}') or elements of an array (close ']'). */
static const char *json_items(const char *p, char close, int depth) {
  p = json_ws(p + 1);
  if (*p == close) return p + 1;
  for (;;) {
    if (close == '}') {
      if (!(p = json_string(json_ws(p)))) return NULL;
      p = json_ws(p);
      if (*p++ != ':') return NULL;
    }
    if (!(p = json_value(p, depth + 1))) return NULL;
    p = json_ws(p);
    if (*p == close) return p + 1;
    if (*p++ != ',') return NULL;
  }
}

static const char *json_value(const char *p, int depth) {
  p = json_ws(p);
  if (depth > 64) return NULL;
  if (*p == '{') return json_items(p, '}', depth);
  if (*p == '[') return json_items(p, ']', depth);
  if (*p == '"') return json_string(p);
  if (!strncmp(p, "true", 4)) return p + 4;
  if (!strncmp(p, "false", 5)) return p + 5;
  if (!strncmp(p, "null", 4)) return p + 4;
  return json_number(p);
}

/* One JSON document and a newline, nothing else. */
static void ck_json(const char *what, const char *text) {
  const char *end = json_value(text, 0);
  ck_assert_msg(end && !strcmp(end, "\n"), "%s: not one JSON document:\n%s", what, text);
}

START_TEST(json_reader_rejects) {
  const char *bad[] = {"{\"a\":}\n", "{\"a\":1,}\n", "[1 2]\n", "\"a\tb\"\n", "{\"a\":1}{}\n",
                       "{'a':1}\n",  "01\n",         "nan\n",   "\"\\x1b\"\n"};
  for (int i = 0; i < 9; i++)
    ck_assert_msg(!json_value(bad[i], 0) || strcmp(json_value(bad[i], 0), "\n"), "%s", bad[i]);
  ck_json("good", "{\"a\":[1,-2.5e3,true,null,\"\\u001b\\n\"],\"b\":{}}\n");
}
END_TEST

/* ---- help ------------------------------------------------------------------- */

/* Every command: `kfuse CMD --help`, `-h` and `kfuse help CMD` print the same
 * help on stdout, exit 0, with a usage line and one line per option. */
START_TEST(help_every_command) {
  for (int i = 0; i < N_COMMANDS; i++) {
    cli_result a = cli("%s --help", commands[i]);
    cli_result b = cli("help %s", commands[i]);
    cli_result c = cli("%s -h", commands[i]);
    char usage[64];
    snprintf(usage, sizeof usage, "usage: kfuse %s", commands[i]);
    ck_assert_msg(a.status == 0 && b.status == 0 && c.status == 0, "%s: %d %d %d", commands[i],
                  a.status, b.status, c.status);
    ck_assert_msg(!strncmp(a.out, usage, strlen(usage)), "%s --help:\n%s", commands[i], a.out);
    ck_assert_str_eq(a.out, b.out);
    ck_assert_str_eq(a.out, c.out);
    ck_assert_str_eq(a.err, "");
    ck_assert_str_eq(b.err, "");
    ck_contains(a.out, "\n  --json ");
    ck_contains(a.out, "\n  -h, --help ");
    cli_free(&a);
    cli_free(&b);
    cli_free(&c);
  }
  cli_result r = cli("help run");
  const char *run_opts[] = {"--check ",     "--iters N ",        "--mode MODE ",
                            "--seed S ",    "--trace OUT.json ", "--no-fusion ",
                            "--arch ARCH ", "--range LO,HI ",    "--rtol R ",
                            "--atol A ",    "--check-limit N "};
  for (int i = 0; i < 11; i++) {
    char line[64];
    snprintf(line, sizeof line, "\n  %s", run_opts[i]);
    ck_contains(r.out, line);
  }
  cli_free(&r);
  r = cli("help");
  ck_assert_int_eq(r.status, 0);
  ck_contains(r.out, "exit codes:\n  0 ");
  ck_contains(r.out, "\n  5  failed");
  cli_free(&r);
  r = cli("help rnu");
  ck_assert_int_eq(r.status, 2);
  ck_contains(r.err, "unknown command 'rnu'; did you mean 'run'?");
  ck_assert_str_eq(r.out, "");
  cli_free(&r);
}
END_TEST

/* ---- --opt=VALUE ------------------------------------------------------------ */

/* Every option that takes a value, given as --opt=VALUE, has the effect of
 * --opt VALUE; the JSON report shows the values. */
START_TEST(opt_equals_every_option) {
  const char *g = small_graph();
  char trace[400];
  snprintf(trace, sizeof trace, "%s/eq.json", tmpdir);
  cli_result r =
      cli("run '%s' --check --json --iters=2 --seed=7 --mode=streams --arch=sm_90 "
          "--range=-2,2 --rtol=0.001 --atol=0.0001 --check-limit=1e9 --trace='%s'",
          g, trace);
  ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
  ck_contains(r.out, "\"seed\":7,");
  ck_contains(r.out, "\"mode\":\"streams\"");
  ck_contains(r.out, "\"arch\":\"sm_90\"");
  ck_contains(r.out, "\"check_limit\":1e+09,");
  ck_contains(r.out, "\"trace\":\"");
  if (have_gpu()) {
    ck_contains(r.out, "\"iters\":2,");
    ck_contains(r.out, "\"rtol\":0.001,\"atol\":0.0001");
  }
  cli_free(&r);
  struct stat sb;
  ck_assert_int_eq(stat(trace, &sb), 0);
  /* the same with spaces, and the text report shows the range */
  r = cli("run '%s' --range -2,2 --seed 7 --iters 1", g);
  ck_assert_int_eq(r.status, 0);
  ck_contains(r.out, "seed 7, floats uniform in [-2, 2)");
  cli_free(&r);
  r = cli("run '%s' --range=-2,2 --seed=7 --iters=1", g);
  ck_assert_int_eq(r.status, 0);
  ck_contains(r.out, "seed 7, floats uniform in [-2, 2)");
  cli_free(&r);
  r = cli("compile '%s' --arch=sm_90 --json", g);
  ck_assert_int_eq(r.status, 0);
  ck_contains(r.out, "\"arch\":\"sm_90\"");
  cli_free(&r);
  r = cli("emit '%s' --arch=sm_90 --launch=0 --json", g);
  ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
  ck_contains(r.out, "\"sources\":[{\"launch\":0,\"source\":\"");
  cli_free(&r);
  r = cli("emit '%s' --launch=9", g);
  ck_assert_int_eq(r.status, 2);
  ck_contains(r.err, "--launch 9 is out of range");
  cli_free(&r);
  /* bench parses every option before it looks for a GPU: not a usage error */
  r = cli("bench '%s' --iters=3 --warmup=0 --seed=2 --copy-mb=64 --mode=graph --no-nvml --json", g);
  ck_assert_msg(r.status == (have_gpu() ? 0 : 4), "status %d: %s", r.status, r.err);
  cli_free(&r);
  /* bad values given with '=' are usage errors too */
  const char *bad[] = {"run '%s' --iters=0",     "run '%s' --mode=fast",  "run '%s' --seed=",
                       "bench '%s' --copy-mb=x", "emit '%s' --launch=-1", "run '%s' --json=yes"};
  for (int i = 0; i < 6; i++) {
    r = cli(bad[i], g);
    ck_assert_msg(r.status == 2, "%s: status %d", bad[i], r.status);
    ck_assert_str_eq(r.out, "");
    cli_free(&r);
  }
}
END_TEST

/* ---- --json ----------------------------------------------------------------- */

/* Every command, with --json, prints one valid JSON document on stdout,
 * when it succeeds and when it fails (then with "ok":false and the exit). */
START_TEST(json_every_command) {
  const char *g = small_graph(), *bad = bad_graph();
  char env[600];
  snprintf(env, sizeof env, "%s/jcache", tmpdir);
  kt_setenv("KFUSE_CACHE_DIR", env, 1);
  const char *ok_cmds[] = {
      "info --json",        "check '%s' --json",         "compile '%s' --arch sm_90 --json",
      "cache stats --json", "cache path --json",         "plan '%s' --json",
      "emit '%s' --json",   "run '%s' --json --iters 1", "cache clear --json"};
  for (int i = 0; i < 9; i++) {
    cli_result r = cli(ok_cmds[i], g);
    ck_assert_msg(r.status == 0, "%s: status %d: %s", ok_cmds[i], r.status, r.err);
    ck_json(ok_cmds[i], r.out);
    if (strncmp(ok_cmds[i], "plan", 4))
      ck_assert_msg(!strncmp(r.out, "{\"ok\":true,", 11), "%s", r.out);
    cli_free(&r);
  }
  const char *file_cmds[] = {"check", "compile", "plan", "emit", "run", "bench"};
  for (int i = 0; i < 6; i++) {
    cli_result r = cli("%s '%s' --json", file_cmds[i], bad);
    ck_assert_msg(r.status == 3, "%s: status %d", file_cmds[i], r.status);
    ck_json(file_cmds[i], r.out);
    ck_contains(r.out, "{\"ok\":false,");
    ck_contains(r.out, "\"exit\":3}");
    ck_contains(r.out, "unknown op 'frobnicate'");
    cli_free(&r);
  }
  cli_result r = cli("bench '%s' --json --iters 2 --copy-mb 64", g);
  ck_json("bench", r.out);
  if (!have_gpu()) ck_contains(r.out, "\"exit\":4}");
  cli_free(&r);
  kt_unsetenv("KFUSE_CACHE_DIR");
}
END_TEST

/* ---- exit codes ------------------------------------------------------------- */

START_TEST(exit_codes) {
  const char *g = small_graph();
  cli_result r = cli("check '%s'", g); /* 0: done */
  ck_assert_int_eq(r.status, 0);
  cli_free(&r);
  r = cli("run '%s' --frob", g); /* 2: usage */
  ck_assert_int_eq(r.status, 2);
  cli_free(&r);
  r = cli("plan '%s' extra.yaml", g);
  ck_assert_int_eq(r.status, 2);
  ck_contains(r.err, "unexpected argument 'extra.yaml'");
  cli_free(&r);
  r = cli("check '%s'", bad_graph()); /* 3: bad input */
  ck_assert_int_eq(r.status, 3);
  cli_free(&r);
  r = cli("compile '%s' --arch sm_1", g); /* 5: failed (NVRTC refuses the arch) */
  ck_assert_msg(r.status == 5, "status %d: %s", r.status, r.err);
  cli_free(&r);
  r = cli("run '%s' --trace '%s/no/dir/t.json' --iters 1", g, tmpdir);
  ck_assert_int_eq(r.status, 5);
  cli_free(&r);
  if (!have_gpu()) { /* 4: no device */
    r = cli("bench '%s'", g);
    ck_assert_int_eq(r.status, 4);
    cli_free(&r);
    r = cli("run '%s' --check --check-limit 1", g);
    ck_assert_int_eq(r.status, 4);
    cli_free(&r);
    return;
  }
  /* 1: outputs differ. Correct kernels pass the error bound at any
   * tolerance, so the kernels are made wrong on purpose: a copy of the
   * build's templates (build/templates, common.cuh generated) whose float add
   * scales b by 1.001 (the library reads templates from KFUSE_TEMPLATE_DIR;
   * the program run below is a new process). */
  char planted[600];
  snprintf(planted, sizeof planted,
           "d=$(mktemp -d) && cp '%s'/templates/* \"$d\" && "
           "sed -i 's/kf_add(float a, float b) { return a + b; }/kf_add(float a, float b) { return a + b * 1.001f; }/' \"$d\"/common.cuh && "
           "grep -q 'b \\* 1.001f' \"$d\"/common.cuh && echo \"$d\"",
           KFUSE_BINARY_DIR);
  FILE *p = popen(planted, "r");
  char dir[256] = "";
  ck_assert(p && fgets(dir, sizeof dir, p));
  pclose(p);
  dir[strcspn(dir, "\n")] = 0;
  ck_assert_msg(dir[0] == '/', "no patched template folder");
  r = cli("run '%s' --check --iters 1", g);
  ck_assert_msg(r.status == 0, "unpatched: status %d: %s", r.status, r.out);
  cli_free(&r);
  setenv("KFUSE_TEMPLATE_DIR", dir, 1); /* for the child only */
  r = cli("run '%s' --check --iters 1", g);
  unsetenv("KFUSE_TEMPLATE_DIR");
  ck_assert_msg(r.status == 1, "status %d: %s", r.status, r.out);
  ck_contains(r.out, "MISMATCH");
  cli_free(&r);
  char rm[300];
  snprintf(rm, sizeof rm, "rm -rf '%s'", dir);
  ck_assert_int_eq(system(rm), 0);
}
END_TEST

/* ---- did you mean ----------------------------------------------------------- */

START_TEST(did_you_mean) {
  const char *g = small_graph();
  struct {
    const char *args, *want;
  } cases[] = {
      {"run '%s' --sed 3", "unknown option '--sed'; did you mean '--seed'?"},
      {"run '%s' --chek", "unknown option '--chek'; did you mean '--check'?"},
      {"bench '%s' --itres 3", "unknown option '--itres'; did you mean '--iters'?"},
      {"plan '%s' --no-fuson", "unknown option '--no-fuson'; did you mean '--no-fusion'?"},
      {"emit '%s' --lunch 0", "unknown option '--lunch'; did you mean '--launch'?"},
      {"compile '%s' --acrh sm_90", "unknown option '--acrh'; did you mean '--arch'?"},
      {"check '%s' --jsno", "unknown option '--jsno'; did you mean '--json'?"},
      {"info --jason", "unknown option '--jason'; did you mean '--json'?"},
      {"run '%s' --mode stream", "not 'stream'; did you mean 'streams'?"},
      {"cache stat", "unknown action 'stat'; did you mean 'stats'?"},
      {"comple '%s'", "unknown command 'comple'; did you mean 'compile'?"},
      {"run '%s' --ch", "ambiguous option '--ch' (--check, --check-limit)"},
      {"run '%s' --frobnicate", "unknown option '--frobnicate'\n"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    cli_result r = cli(cases[i].args, g);
    ck_assert_msg(r.status == 2, "%s: status %d", cases[i].args, r.status);
    ck_contains(r.err, cases[i].want);
    ck_assert_str_eq(r.out, "");
    cli_free(&r);
  }
  /* in graph files: ops, keys, attributes, dtypes, names (exit 3) */
  const char *y = write_file("typo.yaml",
                             "kfuse: 1\ninputs:\n  x: {dtype: f32, shape: [4, 8]}\n"
                             "nodes:\n  - {name: y, op: sofmax, args: [x], axis: 1}\n"
                             "outputs: [y]\n");
  cli_result r = cli("check '%s'", y);
  ck_assert_int_eq(r.status, 3);
  ck_contains(r.err, "typo.yaml:5:19: node 'y': unknown op 'sofmax'; did you mean 'softmax'?");
  cli_free(&r);
}
END_TEST

/* ---- text from files -------------------------------------------------------- */

/* A graph name holding an ESC sequence and a newline, and a file name
 * holding them: every command shows them escaped (\xNN), JSON as \u00NN;
 * no raw control character reaches the terminal. */
START_TEST(escaped_text) {
  const char *g = write_file("evil.yaml",
                             "kfuse: 1\nname: \"ev\\e[31mil\\nname\"\ninputs:\n"
                             "  x: {dtype: f32, shape: [4, 8]}\n"
                             "nodes:\n  - {name: y, op: exp, args: [x]}\noutputs: [y]\n");
  const char *text_cmds[] = {"check '%s'", "run '%s' --iters 1", "plan '%s'", "plan '%s' --dot"};
  for (int i = 0; i < 4; i++) {
    cli_result r = cli(text_cmds[i], g);
    ck_assert_msg(r.status == 0, "%s: %d %s", text_cmds[i], r.status, r.err);
    ck_contains(r.out, i == 3 ? "ev\\\\x1B[31mil\\\\x0Aname" : "ev\\x1B[31mil\\x0Aname");
    ck_lacks(r.out, "\033");
    cli_free(&r);
  }
  cli_result r = cli("check '%s' --json", g);
  ck_contains(r.out, "\"graph\":\"ev\\u001b[31mil\\nname\"");
  ck_json("check", r.out);
  cli_free(&r);
  r = cli("plan '%s' --json", g);
  ck_contains(r.out, "{\"graph\":\"ev\\u001b[31mil\\nname\",");
  ck_json("plan", r.out);
  cli_free(&r);
  /* a file name with ESC and a newline, missing: the message shows it escaped */
  r = cli("check \"$(printf '%s/no\\033[2Jpe\\nx.yaml')\"", tmpdir);
  ck_assert_int_eq(r.status, 3);
  ck_contains(r.err, "/no\\x1B[2Jpe\\x0Ax.yaml: cannot open");
  ck_lacks(r.err, "\033");
  cli_free(&r);
  /* the same file under a hostile name: found, and shown escaped */
  char cmd[1200];
  snprintf(cmd, sizeof cmd, "cp '%s' \"$(printf '%s/ba\\033[1md.yaml')\"", g, tmpdir);
  ck_assert_int_eq(system(cmd), 0);
  r = cli("check \"$(printf '%s/ba\\033[1md.yaml')\"", tmpdir);
  ck_assert_int_eq(r.status, 0);
  ck_contains(r.out, "/ba\\x1B[1md.yaml: valid");
  ck_lacks(r.out, "\033");
  cli_free(&r);
  r = cli("compile \"$(printf '%s/ba\\033[1md.yaml')\" --arch sm_90", tmpdir);
  ck_assert_int_eq(r.status, 0);
  ck_contains(r.out, "/ba\\x1B[1md.yaml: 1 kernels");
  ck_lacks(r.out, "\033");
  cli_free(&r);
  /* options typed by the user */
  r = cli("run '%s' \"$(printf -- '--mode=\\033[5m')\"", g);
  ck_assert_int_eq(r.status, 2);
  ck_contains(r.err, "not '\\x1B[5m'");
  ck_lacks(r.err, "\033");
  cli_free(&r);
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("cli_args");
  TCase *t = tcase_create("cli_args");
  tcase_add_checked_fixture(t, setup, teardown);
  tcase_set_timeout(t, 120);
  tcase_add_test(t, json_reader_rejects);
  tcase_add_test(t, help_every_command);
  tcase_add_test(t, opt_equals_every_option);
  tcase_add_test(t, json_every_command);
  tcase_add_test(t, exit_codes);
  tcase_add_test(t, did_you_mean);
  tcase_add_test(t, escaped_text);
  suite_add_tcase(s, t);
  return s;
}
