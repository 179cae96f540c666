/* gen_ops.c - the build's generator of templates/common.cuh: copies the
 * hand-written prelude templates/common.cuh.in and writes, in place of each
 * "@@ops SECTION@@" line, the device functions kf_<op> that the device
 * columns of src/ir/ops.def define (docs/codegen.md, "Adding an op").
 * Run by CMake at build time: gen_ops IN OUT. A malformed row or marker
 * fails the build with a message naming it; nothing is written then. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "ir/ops_dev.h"

/* The device columns of one UNARY or BINARY row (ir/ops_dev.h). */
typedef ir_op_dev op_dev;

typedef struct op_row {
  const char *id, *name;
  int arity;
  ir_accept acc;
  ir_result res;
  const char *f64; /* the reference's f64 expression: the double function */
  op_dev d;
} op_row;

static const op_row rows[] = {
#define UNARY(ID, lname, acc, res, fexpr, iexpr, ...) \
  {#ID, #lname, 1, acc, res, #fexpr, {__VA_ARGS__}},
#define BINARY(ID, lname, acc, res, fexpr, iexpr, ...) \
  {#ID, #lname, 2, acc, res, #fexpr, {__VA_ARGS__}},
#include "ir/ops.def"
};
enum { N_ROWS = sizeof rows / sizeof rows[0] };

/* A function goes on one line when it fits in this many columns (as the
 * prelude was written), else over three. */
enum { ONE_LINE_MAX = 110 };
/* The column before the backslash of each line of the KF_INT_OPS macro. */
enum { MACRO_PAD = 81 };

static const char *G_in = "";
static int G_line;
static char G_tmp[4096]; /* the output being written, removed on failure */

static void fail(const char *fmt, const char *a, const char *b) {
  if (G_line)
    fprintf(stderr, "gen_ops: %s:%d: ", G_in, G_line);
  else
    fprintf(stderr, "gen_ops: src/ir/ops.def: ");
  fprintf(stderr, fmt, a, b);
  fputc('\n', stderr);
  if (G_tmp[0]) remove(G_tmp);
  exit(1);
}

/* A body without ';' is an expression (returned); with one, statements,
 * one per line ('\n'), comments allowed. */
static bool is_expr(const char *s) {
  return !strchr(s, ';');
}

static void put_body(FILE *o, const char *s) {
  if (is_expr(s)) {
    fprintf(o, "  return %s;\n", s);
    return;
  }
  for (const char *p = s; *p;) {
    const char *e = strchr(p, '\n');
    size_t n = e ? (size_t)(e - p) : strlen(p);
    fprintf(o, "  %.*s\n", (int)n, p);
    p += n + (e != NULL);
  }
}

static void put_note(FILE *o, const char *note) {
  for (const char *p = note; p && *p;) {
    const char *e = strchr(p, '\n');
    size_t n = e ? (size_t)(e - p) : strlen(p);
    fprintf(o, "// %.*s\n", (int)n, p);
    p += n + (e != NULL);
  }
}

static const char *or_def(const char *s, const char *def) {
  return s ? s : def;
}

/* kf_<name> of type t returning ret, with its policy variants. */
static void put_fn(FILE *o, const char *prefix, const op_row *r, const char *t, const char *ret,
                   const char *def, const char *strict, const char *fast) {
  char params[64], head[256];
  if (r->arity == 1)
    snprintf(params, sizeof params, "%s x", t);
  else
    snprintf(params, sizeof params, "%s a, %s b", t, t);
  snprintf(head, sizeof head, "%sKF_INLINE %s kf_%s(%s)", prefix, ret, r->name, params);
  strict = or_def(strict, def);
  fast = or_def(fast, def);
  bool s_same = !strcmp(strict, def), f_same = !strcmp(fast, def);
  if (s_same && f_same) {
    /* head " { return " def "; }" */
    if (is_expr(def) && strlen(head) + 10 + strlen(def) + 3 <= ONE_LINE_MAX) {
      fprintf(o, "%s { return %s; }\n", head, def);
    } else {
      fprintf(o, "%s {\n", head);
      put_body(o, def);
      fputs("}\n", o);
    }
    return;
  }
  fprintf(o, "%s {\n", head);
  if (s_same || f_same) {
    fprintf(o, "#ifdef %s\n", s_same ? "KF_MATH_FAST" : "KF_MATH_STRICT");
    put_body(o, s_same ? fast : strict);
  } else if (!strcmp(strict, fast)) {
    fputs("#if defined(KF_MATH_STRICT) || defined(KF_MATH_FAST)\n", o);
    put_body(o, strict);
  } else {
    fputs("#if defined(KF_MATH_STRICT)\n", o);
    put_body(o, strict);
    fputs("#elif defined(KF_MATH_FAST)\n", o);
    put_body(o, fast);
  }
  fputs("#else\n", o);
  put_body(o, def);
  fputs("#endif\n}\n", o);
}

/* Checks a row's device columns against what the op accepts. */
static void check_row(const op_row *r) {
  const op_dev *d = &r->d;
  if (d->every) {
    if (d->f32 || d->f32_strict || d->f32_fast || d->f32_note || d->half || d->half_note ||
        d->ints || d->bools)
      fail("op %s: .every is the only device column it may have", r->id, "");
    return;
  }
  if (!d->f32) fail("op %s: no .f32 (nor .every) device column", r->id, "");
  if (d->half_note && !d->half) fail("op %s: .half_note needs a .half column", r->id, "");
  if (d->half && r->res != RES_SAME) fail("op %s: .half is for ops of float results", r->id, "");
  if (r->acc == ACC_FLT && (d->ints || d->bools))
    fail("op %s accepts floats only: no .ints or .bools", r->id, "");
  if (r->acc != ACC_FLT && !d->ints) fail("op %s accepts integers: it needs .ints", r->id, "");
  if (r->acc == ACC_NUM && d->bools) fail("op %s does not accept bool: no .bools", r->id, "");
  if (r->acc == ACC_ANY && !d->bools) fail("op %s accepts bool: it needs .bools", r->id, "");
}

static int row_index(const char *id, int dflt) {
  if (!*id) return dflt;
  for (int i = 0; i < N_ROWS; i++)
    if (!strcmp(rows[i].id, id)) return i;
  fail("no UNARY or BINARY op %s in ops.def", id, "");
  return -1;
}

static bool G_f32_done[N_ROWS];
static bool G_section_done[5];

/* "f32 FIRST..LAST" (either side may be empty: from the first, to the
 * last): the float functions of those rows. */
static void put_f32(FILE *o, const char *range) {
  char first[64] = "", last[64] = "";
  const char *dots = strstr(range, "..");
  if (!dots || (size_t)(dots - range) >= sizeof first || strlen(dots + 2) >= sizeof last)
    fail("@@ops f32 FIRST..LAST@@ expected, not '%s'", range, "");
  memcpy(first, range, (size_t)(dots - range));
  snprintf(last, sizeof last, "%s", dots + 2);
  int a = row_index(first, 0), b = row_index(last, N_ROWS - 1);
  for (int i = a; i <= b; i++) {
    const op_row *r = &rows[i];
    if (r->d.every) continue;
    if (G_f32_done[i]) fail("op %s: float function in two @@ops f32@@ ranges", r->id, "");
    G_f32_done[i] = true;
    put_note(o, r->d.f32_note);
    put_fn(o, "", r, "float", r->res == RES_BOOL ? "bool" : "float", r->d.f32, r->d.f32_strict,
           r->d.f32_fast);
  }
}

static void put_f64(FILE *o) {
  for (int i = 0; i < N_ROWS; i++)
    if (!rows[i].d.every)
      put_fn(o, "", &rows[i], "double", rows[i].res == RES_BOOL ? "bool" : "double", rows[i].f64,
             NULL, NULL);
}

/* The KF_INT_OPS(T, U) macro, expanded by the prelude for int and long long. */
static void put_ints(FILE *o) {
  const char *lines[N_ROWS + 1];
  char buf[N_ROWS][320];
  int n = 0;
  lines[n] = "#define KF_INT_OPS(T, U)";
  n++;
  for (int i = 0; i < N_ROWS; i++) {
    const op_row *r = &rows[i];
    if (!r->d.ints) continue;
    snprintf(buf[i], sizeof buf[i], "  KF_INLINE %s kf_%s(%s) { return %s; }",
             r->res == RES_BOOL ? "bool" : "T", r->name, r->arity == 1 ? "T x" : "T a, T b",
             r->d.ints);
    if (!is_expr(r->d.ints)) fail("op %s: .ints must be one expression", r->id, "");
    lines[n++] = buf[i];
  }
  for (int i = 0; i < n; i++) {
    int len = (int)strlen(lines[i]);
    if (i == n - 1)
      fprintf(o, "%s\n", lines[i]);
    else
      fprintf(o, "%s%*s\\\n", lines[i], len < MACRO_PAD ? MACRO_PAD - len : 1, "");
  }
}

static void put_bools(FILE *o) {
  for (int i = 0; i < N_ROWS; i++)
    if (rows[i].d.bools) {
      if (!is_expr(rows[i].d.bools)) fail("op %s: .bools must be one expression", rows[i].id, "");
      put_fn(o, "", &rows[i], "bool", "bool", rows[i].d.bools, NULL, NULL);
    }
}

/* kf_<name>_h16 (f16 and bf16 compute) of a row with a .half column: the
 * 16-bit body under the default policy; under KF_MATH_STRICT (and
 * KF_MATH_FAST when the row has a .f32_fast) the float function, as for
 * every other op. */
static void put_half_fn(FILE *o, const op_row *r, const char *body) {
  const char *params = r->arity == 1 ? "float x" : "float a, float b";
  const char *args = r->arity == 1 ? "x" : "a, b";
  fprintf(o, "KF_INLINE float kf_%s_h16(%s) {\n", r->name, params);
  fputs(r->d.f32_fast ? "#if defined(KF_MATH_STRICT) || defined(KF_MATH_FAST)\n"
                      : "#ifdef KF_MATH_STRICT\n",
        o);
  fprintf(o, "  return kf_%s(%s);\n#else\n", r->name, args);
  put_body(o, body);
  fputs("#endif\n}\n", o);
}

static void put_half(FILE *o) {
  for (int i = 0; i < N_ROWS; i++) {
    const op_row *r = &rows[i];
    if (!r->d.half) continue;
    put_note(o, r->d.half_note);
    put_half_fn(o, r, r->d.half);
  }
}

static void put_every(FILE *o) {
  for (int i = 0; i < N_ROWS; i++)
    if (rows[i].d.every)
      put_fn(o, "template <typename T> ", &rows[i], "T", rows[i].res == RES_BOOL ? "bool" : "T",
             rows[i].d.every, NULL, NULL);
}

/* One "@@ops SECTION@@" line. */
static void put_section(FILE *o, const char *line) {
  static const char *const names[5] = {"f64", "ints", "bools", "every", "half"};
  char sec[128];
  size_t n = strlen(line);
  if (n < 10 || strcmp(line + n - 2, "@@") || n - 8 >= sizeof sec)
    fail("a marker is @@ops SECTION@@, not '%s'", line, "");
  memcpy(sec, line + 6, n - 8);
  sec[n - 8] = 0;
  if (!strncmp(sec, "f32 ", 4)) {
    put_f32(o, sec + 4);
    return;
  }
  for (int s = 0; s < 5; s++) {
    if (strcmp(sec, names[s])) continue;
    if (G_section_done[s]) fail("@@ops %s@@ twice", sec, "");
    G_section_done[s] = true;
    if (s == 0) put_f64(o);
    if (s == 1) put_ints(o);
    if (s == 2) put_bools(o);
    if (s == 3) put_every(o);
    if (s == 4) put_half(o);
    return;
  }
  fail("unknown section '%s' (f32 FIRST..LAST, f64, ints, bools, every, half)", sec, "");
}

static void finish_checks(void) {
  for (int i = 0; i < N_ROWS; i++)
    if (!rows[i].d.every && !G_f32_done[i])
      fail("op %s: its float function is in no @@ops f32@@ range", rows[i].id, "");
  static const char *const names[5] = {"f64", "ints", "bools", "every", "half"};
  for (int s = 0; s < 5; s++)
    if (!G_section_done[s]) fail("no @@ops %s@@ line", names[s], "");
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: gen_ops common.cuh.in common.cuh\n");
    return 2;
  }
  G_in = argv[1];
  for (int i = 0; i < N_ROWS; i++) check_row(&rows[i]);
  FILE *in = fopen(argv[1], "r");
  if (!in) fail("cannot read %s", argv[1], "");
  snprintf(G_tmp, sizeof G_tmp, "%s.tmp", argv[2]);
  FILE *o = fopen(G_tmp, "w");
  if (!o) fail("cannot write %s", G_tmp, "");
  char line[4096];
  while (fgets(line, sizeof line, in)) {
    G_line++;
    size_t n = strlen(line);
    if (n && line[n - 1] == '\n') line[--n] = 0;
    if (!strncmp(line, "@@#", 3)) continue; /* a note of the .in file */
    if (!strncmp(line, "@@ops ", 6))
      put_section(o, line);
    else
      fprintf(o, "%s\n", line);
  }
  finish_checks();
  bool bad = ferror(in) || ferror(o);
  fclose(in);
  if (fclose(o) != 0 || bad || rename(G_tmp, argv[2]) != 0) fail("cannot write %s", argv[2], "");
  return 0;
}
