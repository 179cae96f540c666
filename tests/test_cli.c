/* test_cli.c - the kfuse program end to end: every command's output and
 * exit status on example graphs and on bad input. Runs the built binary
 * (KFUSE_CLI, set by tests/CMakeLists.txt); passes with or without a GPU,
 * checking whichever path the machine takes. */
#include <glob.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check_main.h"
#include "cli_harness.h"

/* ---- the program --------------------------------------------------------- */

START_TEST(version_and_help) {
  cli_result r = cli("--version");
  ck_assert_int_eq(r.status, 0);
  ck_assert_str_eq(r.out, "kfuse 0.1.0\n");
  cli_free(&r);
  r = cli("--help");
  ck_assert_int_eq(r.status, 0);
  ck_contains(r.out, "usage: kfuse");
  const char *cmds[] = {"info", "check", "run", "bench"};
  for (int i = 0; i < 4; i++) {
    char pat[32];
    snprintf(pat, sizeof pat, "\n  %s ", cmds[i]);
    ck_contains(r.out, pat);
  }
  ck_assert_str_eq(r.err, "");
  cli_free(&r);
}
END_TEST

START_TEST(no_command_and_unknown_command) {
  cli_result r = cli("%s", "");
  ck_assert_int_eq(r.status, 2);
  ck_contains(r.err, "usage: kfuse");
  ck_assert_str_eq(r.out, "");
  cli_free(&r);
  r = cli("frobnicate x.yaml");
  ck_assert_int_eq(r.status, 2);
  ck_contains(r.err, "unknown command 'frobnicate'");
  cli_free(&r);
}
END_TEST

START_TEST(info) {
  cli_result r = cli("info");
  ck_assert_int_eq(r.status, 0);
  ck_contains(r.out, "kfuse        0.1.0");
  ck_contains(r.out, "nvrtc");
  ck_contains(r.out, "driver");
  ck_contains(r.out, "cache");
  cli_free(&r);
  r = cli("info extra");
  ck_assert_int_eq(r.status, 2);
  cli_free(&r);
}
END_TEST

/* ---- check, plan, emit, compile ------------------------------------------ */

START_TEST(check_every_example) {
  glob_t gl;
  ck_assert_int_eq(glob(KFUSE_SOURCE_DIR "/examples/graphs/*.yaml", 0, NULL, &gl), 0);
  ck_assert_uint_gt(gl.gl_pathc, 0);
  for (size_t i = 0; i < gl.gl_pathc; i++) {
    cli_result r = cli("check '%s'", gl.gl_pathv[i]);
    ck_assert_msg(r.status == 0, "check %s: status %d\n%s", gl.gl_pathv[i], r.status, r.err);
    ck_contains(r.out, ": valid");
    ck_contains(r.out, "hash: ");
    cli_free(&r);
  }
  globfree(&gl);
}
END_TEST

START_TEST(bad_files_every_command) {
  const char *bad = bad_graph();
  const char *cmds[] = {"check", "plan", "emit", "compile", "run", "bench"};
  for (int i = 0; i < 6; i++) {
    if (i >= 1 && !have_command(cmds[i])) continue;
    cli_result r = cli("%s '%s'", cmds[i], bad);
    ck_assert_msg(r.status == 3, "%s on a malformed file: status %d", cmds[i], r.status);
    ck_contains(r.err, "bad.yaml:5:");
    ck_contains(r.err, "frobnicate");
    ck_assert_str_eq(r.out, "");
    cli_free(&r);
    r = cli("%s '%s/missing.yaml'", cmds[i], tmpdir);
    ck_assert_msg(r.status == 3, "%s on a missing file: status %d", cmds[i], r.status);
    ck_contains(r.err, "missing.yaml");
    cli_free(&r);
    r = cli("%s", cmds[i]);
    ck_assert_msg(r.status == 2, "%s without a file: status %d", cmds[i], r.status);
    ck_contains(r.err, "usage");
    cli_free(&r);
  }
}
END_TEST

START_TEST(plan_command) {
  if (!have_command("plan")) return;
  cli_result r = cli("plan '%s'", small_graph());
  ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
  ck_contains(r.out, "k0");
  cli_free(&r);
  r = cli("plan '%s' --json", small_graph());
  ck_assert_int_eq(r.status, 0);
  ck_contains(r.out, "\"launches\"");
  ck_contains(r.out, "\"bytes_fused\"");
  cli_free(&r);
}
END_TEST

START_TEST(emit_command) {
  if (!have_command("emit")) return;
  cli_result r = cli("emit '%s'", small_graph());
  ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
  ck_contains(r.out, "__global__");
  cli_free(&r);
}
END_TEST

START_TEST(compile_command) {
  if (!have_command("compile")) return;
  cli_result r = cli("compile '%s' --arch sm_90", small_graph());
  ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
  ck_contains(r.out, "sm_90");
  cli_free(&r);
  r = cli("compile '%s' --arch sm_1", small_graph());
  ck_assert_int_ne(r.status, 0);
  cli_free(&r);
}
END_TEST

/* ---- run ------------------------------------------------------------------ */

START_TEST(run_check_text) {
  cli_result r = cli("run '%s' --check --iters 3", small_graph());
  ck_assert_msg(r.status == 0, "status %d\nstdout:\n%s\nstderr:\n%s", r.status, r.out, r.err);
  ck_contains(r.out, "graph    small");
  ck_contains(r.out, "output   y ");
  ck_contains(r.out, "output   h ");
  if (have_gpu()) {
    ck_contains(r.out, "check    passed");
    ck_contains(r.out, "max abs err");
  } else {
    ck_contains(r.out, "device   none:");
    ck_contains(r.out, "no GPU: compiled ");
    ck_contains(r.out, " for sm_90 and ran the CPU reference\n");
    ck_contains(r.out, "0 NaN");
  }
  cli_free(&r);
}
END_TEST

START_TEST(run_json) {
  cli_result r = cli("run '%s' --check --json --seed 7 --iters 2", small_graph());
  ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
  ck_assert_msg(r.out[0] == '{' && r.out[strlen(r.out) - 2] == '}', "not one JSON object: %s",
                r.out);
  ck_contains(r.out, "\"ok\":true");
  ck_contains(r.out, "\"launches\":");
  ck_contains(r.out, "\"seed\":7");
  ck_contains(r.out, "\"outputs\":[{\"name\":\"y\",\"dtype\":\"f32\",\"shape\":[64,256]");
  ck_contains(r.out, "\"max_abs_err\":");
  ck_contains(r.out, "\"max_rel_err\":");
  ck_contains(r.out, "\"ms\":");
  if (!have_gpu()) {
    ck_contains(r.out, "\"device\":null");
    ck_contains(r.out, "\"arch\":\"sm_90\"");
  }
  cli_free(&r);
}
END_TEST

START_TEST(run_no_fusion_and_modes) {
  const char *g = small_graph();
  const char *modes[] = {"plain", "streams", "graph"};
  for (int m = 0; m < 3; m++) {
    cli_result r = cli("run '%s' --check --no-fusion --mode %s --iters 2", g, modes[m]);
    ck_assert_msg(r.status == 0, "mode %s: status %d: %s", modes[m], r.status, r.err);
    ck_contains(r.out, "fusion off");
    ck_contains(r.out, modes[m]);
    cli_free(&r);
  }
}
END_TEST

START_TEST(run_every_dtype) {
  const char *g = write_file("dtypes.yaml",
                             "kfuse: 1\nname: dtypes\ninputs:\n"
                             "  a: {dtype: f16, shape: [33]}\n"
                             "  b: {dtype: bf16, shape: [33]}\n"
                             "  c: {dtype: f64, shape: [33]}\n"
                             "  i: {dtype: i32, shape: [33]}\n"
                             "  j: {dtype: i64, shape: [33]}\n"
                             "  m: {dtype: bool, shape: [33]}\n"
                             "nodes:\n"
                             "  - {name: x, op: mul, args: [a, a]}\n"
                             "  - {name: y, op: exp, args: [b]}\n"
                             "  - {name: z, op: log, args: [c]}\n"
                             "  - {name: s, op: add, args: [i, 3]}\n"
                             "  - {name: t, op: mul, args: [j, j]}\n"
                             "  - {name: u, op: logical_not, args: [m]}\n"
                             "outputs: [x, y, z, s, t, u]\n");
  cli_result r = cli("run '%s' --check --json --iters 1", g);
  ck_assert_msg(r.status == 0, "status %d: %s%s", r.status, r.out, r.err);
  ck_contains(r.out, "\"ok\":true");
  ck_contains(r.out, "{\"name\":\"u\",\"dtype\":\"bool\"");
  cli_free(&r);
  /* log of negative inputs gives NaN, a legitimate result. */
  r = cli("run '%s' --check --iters 1", g);
  ck_assert_int_eq(r.status, 0);
  if (!have_gpu()) ck_contains(r.out, "output   z ");
  cli_free(&r);
}
END_TEST

START_TEST(json_failures) {
  cli_result r = cli("run '%s' --json", bad_graph());
  ck_assert_int_eq(r.status, 3);
  ck_contains(r.out, "{\"ok\":false,\"file\":\"");
  ck_contains(r.out, ",\"exit\":3}");
  ck_contains(r.out, "\"error\":\"");
  ck_contains(r.out, "frobnicate");
  ck_contains(r.err, "kfuse run: ");
  cli_free(&r);
  r = cli("run '%s/missing.yaml' --json", tmpdir);
  ck_assert_int_eq(r.status, 3);
  ck_contains(r.out, "\"ok\":false");
  cli_free(&r);
}
END_TEST

START_TEST(run_bad_options) {
  const char *g = small_graph();
  const char *bad[] = {"--iters 0",   "--iters x", "--mode fast", "--seed -1", "--frob",
                       "--range 1,0", "--rtol x",  "--iters",     "other.yaml"};
  for (int i = 0; i < 9; i++) {
    cli_result r = cli("run '%s' %s", g, bad[i]);
    ck_assert_msg(r.status == 2, "run %s: status %d", bad[i], r.status);
    ck_contains(r.err, "kfuse run:");
    ck_assert_str_eq(r.out, "");
    cli_free(&r);
  }
  cli_result r = cli("run --help");
  ck_assert_int_eq(r.status, 0);
  ck_contains(r.out, "usage: kfuse run FILE");
  cli_free(&r);
}
END_TEST

START_TEST(run_trace) {
  char trace[400];
  snprintf(trace, sizeof trace, "%s/trace.json", tmpdir);
  cli_result r = cli("run '%s' --trace '%s' --iters 1", small_graph(), trace);
  ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
  ck_contains(r.out, "trace    ");
  char *t = slurp(trace);
  ck_contains(t, "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[");
  ck_contains(t, "\"name\":\"load graph file\"");
  ck_contains(t, "\"name\":\"compile\"");
  ck_contains(t, "\"process_name\"");
  if (have_gpu()) {
    /* the kernels run; without --check the reference does not */
    ck_contains(t, "\"cat\":\"kernel\"");
    ck_contains(t, "\"name\":\"plan\"");
    ck_assert_msg(!strstr(t, "\"name\":\"cpu reference\""), "reference without --check: %s", t);
  } else {
    ck_contains(t, "\"name\":\"cpu reference\"");
  }
  ck_assert_msg(strcmp(t + strlen(t) - 4, "\n]}\n") == 0, "trace not closed: %s", t);
  free(t);
  cli_free(&r);
  if (have_gpu()) { /* with --check, the reference is in the trace too */
    r = cli("run '%s' --trace '%s' --iters 1 --check", small_graph(), trace);
    ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
    t = slurp(trace);
    ck_contains(t, "\"name\":\"cpu reference\"");
    ck_contains(t, "\"cat\":\"kernel\"");
    free(t);
    cli_free(&r);
  }
  r = cli("run '%s' --trace '%s/no/such/dir/t.json' --iters 1", small_graph(), tmpdir);
  ck_assert_int_eq(r.status, 5); /* failed: writing a file */
  ck_contains(r.err, "cannot write the trace");
  cli_free(&r);
}
END_TEST

/* The one file matching DIR/PATTERN (asserted unique), read whole; *size
 * gets its length. */
static char *dumped(const char *dir, const char *pattern, size_t *size) {
  glob_t gl;
  char pat[600];
  snprintf(pat, sizeof pat, "%s/%s", dir, pattern);
  int rc = glob(pat, 0, NULL, &gl);
  ck_assert_msg(rc == 0 && gl.gl_pathc == 1, "expected one %s, found %d", pat,
                rc == 0 ? (int)gl.gl_pathc : 0);
  struct stat sb;
  ck_assert_int_eq(stat(gl.gl_pathv[0], &sb), 0);
  *size = (size_t)sb.st_size;
  char *text = slurp(gl.gl_pathv[0]);
  globfree(&gl);
  return text;
}

/* KFUSE_DUMP_DIR: `kfuse compile` writes the plan JSON and text, the
 * decision log, and each launch's CUDA source and CUBIN (src/pipeline/plan_dump.c),
 * named GRAPH-HASH.*; cache hits dump their CUBIN too. */
START_TEST(compile_dump_dir) {
  char dir[400];
  snprintf(dir, sizeof dir, "%s/dump/sub", tmpdir);
  const char *g = small_graph();
  for (int pass = 0; pass < 2; pass++) { /* the second compile hits the disk cache */
    char cmd[500];
    snprintf(cmd, sizeof cmd, "rm -rf '%s/dump'", tmpdir);
    ck_assert_int_eq(system(cmd), 0);
    kt_setenv("KFUSE_DUMP_DIR", dir, 1);
    cli_result r = cli("compile '%s' --arch sm_90", g);
    kt_unsetenv("KFUSE_DUMP_DIR");
    ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
    cli_free(&r);
    size_t n;
    char *t = dumped(dir, "small-????????.plan.json", &n);
    ck_contains(t, "{\"graph\":\"small\",");
    ck_contains(t, "\"kernels\":[\n");
    free(t);
    t = dumped(dir, "small-????????.plan.txt", &n);
    ck_assert_uint_gt(n, 0);
    free(t);
    t = dumped(dir, "small-????????.decisions.txt", &n);
    ck_contains(t, "fuse took    vertical");
    free(t);
    t = dumped(dir, "small-????????.kf_*.cu", &n);
    ck_contains(t, "extern \"C\" __global__");
    free(t);
    t = dumped(dir, "small-????????.kf_*.cubin", &n);
    ck_assert_uint_gt(n, 4);
    ck_assert_msg(memcmp(t, "\177ELF", 4) == 0, "the CUBIN is not an ELF file");
    free(t);
  }
  /* Unset, nothing is written. */
  char cmd[500];
  snprintf(cmd, sizeof cmd, "rm -rf '%s/dump'", tmpdir);
  ck_assert_int_eq(system(cmd), 0);
  cli_result r = cli("compile '%s' --arch sm_90", g);
  ck_assert_int_eq(r.status, 0);
  cli_free(&r);
  struct stat sb;
  ck_assert_int_ne(stat(dir, &sb), 0);
}
END_TEST

/* Occurrences of needle in hay. */
static int count(const char *hay, const char *needle) {
  int n = 0;
  for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle)) n++;
  return n;
}

/* The pipeline's own spans reach the Chrome trace (the same calls open the
 * NVTX ranges): parse, fuse, codegen per launch, NVRTC per compile; with a
 * GPU also the module load and each launch. The disk cache is off so that
 * NVRTC runs. */
START_TEST(run_trace_pipeline_spans) {
  char trace[400];
  snprintf(trace, sizeof trace, "%s/spans.json", tmpdir);
  kt_setenv("KFUSE_DISK_CACHE", "0", 1);
  cli_result r = cli("run '%s' --trace '%s' --iters 1 --no-fusion", small_graph(), trace);
  kt_unsetenv("KFUSE_DISK_CACHE");
  ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
  char *t = slurp(trace);
  ck_assert_int_eq(count(t, "\"name\":\"parse\""), 1);
  ck_assert_int_eq(count(t, "\"name\":\"fuse\""), 1);
  /* unfused: one launch per op (add, gelu, softmax) */
  int launches = count(t, "\"name\":\"codegen launch ");
  ck_assert_msg(launches >= 3, "%d codegen spans in %s", launches, t);
  ck_contains(t, "\"name\":\"codegen launch 0\"");
  int nvrtc = count(t, "\"name\":\"nvrtc kf_");
  if (!have_gpu()) {
    ck_assert_int_eq(nvrtc, launches); /* every launch compiled once */
  } else {
    /* occupancy feedback may generate code again and hit the memory cache */
    ck_assert_msg(nvrtc >= 3 && nvrtc <= launches, "%d nvrtc, %d codegen", nvrtc, launches);
    ck_assert_int_ge(count(t, "\"name\":\"module load\""), 1);
    ck_assert_int_ge(count(t, "\"name\":\"launch kf_"), 3);
  }
  /* every span is closed */
  ck_assert_int_eq(count(t, "\"ph\":\"B\""), count(t, "\"ph\":\"E\""));
  free(t);
  cli_free(&r);
}
END_TEST

/* The progress line goes to a terminal only. KFUSE_PROGRESS=1 draws it
 * from the first step, so the terminal case (under script(1), where there
 * is one) shows the check below could fail. */
START_TEST(progress_only_on_a_tty) {
  const char *g = small_graph();
  kt_setenv("KFUSE_PROGRESS", "1", 1);
  kt_setenv("KFUSE_DISK_CACHE", "0", 1);
  cli_result r = cli("compile '%s' --arch sm_90", g);
  ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
  ck_assert_str_eq(r.err, ""); /* stderr is a file: nothing, not even \r */
  cli_free(&r);
  if (system("script -qec true /dev/null >/dev/null 2>&1") != 0) {
    fprintf(stderr, "SKIP (part): no script(1) to give kfuse a terminal\n");
  } else {
    char cmd[2000], out[400];
    snprintf(out, sizeof out, "%s/tty.txt", tmpdir);
    snprintf(cmd, sizeof cmd,
             "KFUSE_LOG=error script -qec \"'%s' compile '%s' --arch sm_90\" /dev/null "
             ">'%s' 2>&1 </dev/null",
             getenv("KFUSE_CLI"), g, out);
    ck_assert_int_eq(system(cmd), 0);
    char *t = slurp(out);
    ck_contains(t, "\rkfuse: compiling kernels 1/1 ");
    ck_contains(t, "\r\033[K"); /* erased at the end */
    free(t);
  }
  kt_unsetenv("KFUSE_PROGRESS");
  kt_unsetenv("KFUSE_DISK_CACHE");
}
END_TEST

/* ---- run --check: which oracle (--check-limit) ----------------------------- */

/* The small graph's reference cost, by hand: add 16384 + 16384 + 256, gelu
 * 2 x 16384, then softmax's max 64 + 16384, sub 2 x 16384 + 64, exp
 * 2 x 16384, sum 64 + 16384, div 2 x 16384 + 64. */
START_TEST(run_reference_cost) {
  cli_result r = cli("run '%s' --check --json --iters 1", small_graph());
  ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
  ck_contains(r.out, "\"reference_cost\":197120,");
  ck_contains(r.out, "\"check_limit\":2e+09,");
  ck_contains(r.out, "\"reference\":true");
  if (have_gpu()) ck_contains(r.out, "\"oracle\":\"reference\"");
  cli_free(&r);
  /* A matmul adds M*N*K: out 8*4, operands 8*16 and 16*4, 8*4*16. */
  const char *mm = write_file("mm.yaml",
                              "kfuse: 1\nname: mm\ninputs:\n"
                              "  a: {dtype: f32, shape: [8, 16]}\n"
                              "  b: {dtype: f32, shape: [16, 4]}\n"
                              "nodes:\n  - {name: c, op: matmul, args: [a, b]}\noutputs: [c]\n");
  r = cli("run '%s' --check --json --iters 1", mm);
  ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
  ck_contains(r.out, "\"reference_cost\":736,");
  cli_free(&r);
}
END_TEST

START_TEST(run_check_limit_exceeded) {
  const char *g = small_graph();
  cli_result r = cli("run '%s' --check --check-limit 1 --iters 1", g);
  if (have_gpu()) {
    ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
    ck_contains(r.out, "oracle   unfused-gpu: the CPU reference would cost 1.97e+05");
    ck_contains(r.out, "check    passed: every output matches the unfused plan on the GPU");
  } else {
    ck_assert_msg(r.status == 4, "status %d: %s", r.status, r.err);
    ck_contains(r.out, "not computed (no GPU, and the CPU reference was not run)");
    ck_contains(r.out, "too costly, so it was not run and nothing was compared");
    ck_contains(r.err, "kfuse run: --check: no GPU, and the CPU reference would cost");
  }
  cli_free(&r);
  r = cli("run '%s' --check --check-limit 1 --json --iters 1", g);
  ck_contains(r.out, "\"check_limit\":1,");
  ck_contains(r.out, "\"reference\":false");
  if (have_gpu()) {
    ck_assert_int_eq(r.status, 0);
    ck_contains(r.out, "\"oracle\":\"unfused-gpu\"");
    ck_contains(r.out, "\"checked\":true");
  } else {
    ck_assert_int_eq(r.status, 4);
    ck_contains(r.out, "{\"ok\":false,");
    ck_contains(r.out, "\"checked\":false,\"oracle\":null,\"oracle_reason\":\"the CPU reference");
  }
  cli_free(&r);
  /* Without --check, a GPU-less run above the limit skips the reference and
   * still succeeds (it compiled the kernels). */
  r = cli("run '%s' --check-limit 1 --iters 1", g);
  ck_assert_int_eq(r.status, 0);
  cli_free(&r);
  const char *bad[] = {"--check-limit -1", "--check-limit x", "--check-limit inf", "--check-limit"};
  for (int i = 0; i < 4; i++) {
    r = cli("run '%s' %s", g, bad[i]);
    ck_assert_msg(r.status == 2, "run %s: status %d", bad[i], r.status);
    ck_contains(r.err, "kfuse run:");
    cli_free(&r);
  }
}
END_TEST

/* The 4096x4096x11008 MLP: its f64 reference would take hours, so --check
 * must not run it (exit 4 without a GPU, the unfused oracle with one). */
START_TEST(run_check_huge_example) {
  cli_result r =
      cli("run '%s/examples/graphs/mlp_silu.yaml' --check --json --iters 1", KFUSE_SOURCE_DIR);
  ck_contains(r.out, "\"reference\":false");
  if (have_gpu()) {
    ck_assert_msg(r.status == 0, "status %d: %s%s", r.status, r.out, r.err);
    ck_contains(r.out, "\"oracle\":\"unfused-gpu\"");
  } else {
    ck_assert_msg(r.status == 4, "status %d: %s%s", r.status, r.out, r.err);
    ck_contains(r.out, "\"reference_cost\":5.54597e+11,");
  }
  cli_free(&r);
}
END_TEST

/* ---- bench ---------------------------------------------------------------- */

START_TEST(bench_command) {
  const char *g = small_graph();
  if (!have_gpu()) {
    cli_result r = cli("bench '%s'", g);
    ck_assert_int_eq(r.status, 4); /* no device */
    ck_contains(r.err, "kfuse bench: no GPU:");
    ck_contains(r.err, "needs a GPU");
    ck_assert_str_eq(r.out, "");
    cli_free(&r);
    r = cli("bench '%s' --json", g);
    ck_assert_int_eq(r.status, 4);
    ck_contains(r.out, "{\"ok\":false,\"file\":");
    ck_contains(r.out, "\"error\":\"no GPU: ");
    cli_free(&r);
    return;
  }
  cli_result r = cli("bench '%s' --json --iters 5 --copy-mb 64", g);
  ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
  const char *keys[] = {"\"fused_ms\":", "\"unfused_ms\":", "\"speedup\":",
                        "\"gbps\":",     "\"copy_gbps\":",  "\"host_us\":{\"plain\":"};
  for (int i = 0; i < 6; i++) ck_contains(r.out, keys[i]);
  cli_free(&r);
}
END_TEST

START_TEST(bench_bad_options) {
  const char *bad[] = {"--iters 0", "--copy-mb x", "--mode x", "--frob"};
  for (int i = 0; i < 4; i++) {
    cli_result r = cli("bench '%s' %s", small_graph(), bad[i]);
    ck_assert_msg(r.status == 2, "bench %s: status %d", bad[i], r.status);
    cli_free(&r);
  }
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("cli");
  TCase *t = tcase_create("cli");
  tcase_add_checked_fixture(t, setup, teardown);
  tcase_set_timeout(t, 120);
  tcase_add_test(t, version_and_help);
  tcase_add_test(t, no_command_and_unknown_command);
  tcase_add_test(t, info);
  tcase_add_test(t, check_every_example);
  tcase_add_test(t, bad_files_every_command);
  tcase_add_test(t, plan_command);
  tcase_add_test(t, emit_command);
  tcase_add_test(t, compile_command);
  tcase_add_test(t, run_check_text);
  tcase_add_test(t, run_json);
  tcase_add_test(t, run_no_fusion_and_modes);
  tcase_add_test(t, run_every_dtype);
  tcase_add_test(t, json_failures);
  tcase_add_test(t, run_bad_options);
  tcase_add_test(t, run_trace);
  tcase_add_test(t, compile_dump_dir);
  tcase_add_test(t, run_trace_pipeline_spans);
  tcase_add_test(t, progress_only_on_a_tty);
  tcase_add_test(t, run_reference_cost);
  tcase_add_test(t, run_check_limit_exceeded);
  tcase_add_test(t, run_check_huge_example);
  tcase_add_test(t, bench_command);
  tcase_add_test(t, bench_bad_options);
  suite_add_tcase(s, t);
  return s;
}
