/* cli_json.c - the kfuse program's JSON writer (cli_json.h). */
#include "cli_json.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kfuse.h"

void cj_init(cli_json *j, FILE *f) {
  memset(j, 0, sizeof *j);
  j->f = f;
  j->first[0] = true;
}

static void put_string(FILE *f, const char *s) {
  char small[512];
  size_t n = kf_escape(small, sizeof small, s, KF_ESCAPE_JSON);
  char *text = n < sizeof small ? small : malloc(n + 1);
  if (text != small && text) kf_escape(text, n + 1, s, KF_ESCAPE_JSON);
  fprintf(f, "\"%s\"", text ? text : "(out of memory)");
  if (text != small) free(text);
}

/* The separator and the key of the next member or element. */
static void put_key(cli_json *j, const char *key) {
  if (!j->first[j->depth]) fputc(',', j->f);
  j->first[j->depth] = false;
  if (key) {
    put_string(j->f, key);
    fputc(':', j->f);
  }
}

static void open_nested(cli_json *j, const char *key, char c) {
  put_key(j, key);
  fputc(c, j->f);
  if (j->depth + 1 < CLI_JSON_DEPTH) j->depth++;
  j->first[j->depth] = true;
}

void cj_obj(cli_json *j, const char *key) {
  open_nested(j, key, '{');
}
void cj_arr(cli_json *j, const char *key) {
  open_nested(j, key, '[');
}

void cj_obj_end(cli_json *j) {
  fputc('}', j->f);
  if (j->depth > 0) j->depth--;
}

void cj_arr_end(cli_json *j) {
  fputc(']', j->f);
  if (j->depth > 0) j->depth--;
}

void cj_str(cli_json *j, const char *key, const char *value) {
  put_key(j, key);
  if (value)
    put_string(j->f, value);
  else
    fputs("null", j->f);
}

void cj_num(cli_json *j, const char *key, double value) {
  put_key(j, key);
  if (isfinite(value))
    fprintf(j->f, "%.6g", value);
  else
    fputs("null", j->f);
}

void cj_fixed(cli_json *j, const char *key, double value, int decimals) {
  put_key(j, key);
  if (isfinite(value))
    fprintf(j->f, "%.*f", decimals, value);
  else
    fputs("null", j->f);
}

void cj_int(cli_json *j, const char *key, long long value) {
  put_key(j, key);
  fprintf(j->f, "%lld", value);
}

void cj_bool(cli_json *j, const char *key, bool value) {
  put_key(j, key);
  fputs(value ? "true" : "false", j->f);
}

void cj_null(cli_json *j, const char *key) {
  put_key(j, key);
  fputs("null", j->f);
}

void cj_done(cli_json *j) {
  fputc('\n', j->f);
  fflush(j->f);
}
