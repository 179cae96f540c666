/* json.c - the library's JSON writer (json.h). */
#include "core/json.h"

#include <math.h>

#include "core/escape.h"

void core_json_init(core_json *j, core_str *out) {
  *j = (core_json){.out = out};
  j->first[0] = true;
}

static void put_string(core_json *j, const char *s) {
  core_str_puts(j->out, "\"");
  core_str_escaped(j->out, s, KF_ESCAPE_JSON);
  core_str_puts(j->out, "\"");
}

/* The separator, the line break of a line array, and the key. */
static void put_key(core_json *j, const char *key) {
  if (!j->first[j->depth]) core_str_puts(j->out, ",");
  if (j->lines[j->depth]) core_str_puts(j->out, "\n");
  j->first[j->depth] = false;
  if (key) {
    put_string(j, key);
    core_str_puts(j->out, ":");
  }
}

static void open_nested(core_json *j, const char *key, const char *bracket, bool lines) {
  put_key(j, key);
  core_str_puts(j->out, bracket);
  if (j->depth + 1 < CORE_JSON_DEPTH) j->depth++;
  j->first[j->depth] = true;
  j->lines[j->depth] = lines;
}

static void close_nested(core_json *j, const char *bracket) {
  if (j->lines[j->depth]) core_str_puts(j->out, "\n");
  core_str_puts(j->out, bracket);
  j->lines[j->depth] = false;
  if (j->depth > 0) j->depth--;
}

void core_json_obj(core_json *j, const char *key) {
  open_nested(j, key, "{", false);
}
void core_json_arr(core_json *j, const char *key) {
  open_nested(j, key, "[", false);
}
void core_json_arr_lines(core_json *j, const char *key) {
  open_nested(j, key, "[", true);
}
void core_json_obj_end(core_json *j) {
  close_nested(j, "}");
}
void core_json_arr_end(core_json *j) {
  close_nested(j, "]");
}

void core_json_str(core_json *j, const char *key, const char *value) {
  put_key(j, key);
  if (value)
    put_string(j, value);
  else
    core_str_puts(j->out, "null");
}

void core_json_int(core_json *j, const char *key, long long value) {
  put_key(j, key);
  core_str_printf(j->out, "%lld", value);
}

void core_json_fixed(core_json *j, const char *key, double value, int decimals) {
  put_key(j, key);
  if (isfinite(value))
    core_str_printf(j->out, "%.*f", decimals, value);
  else
    core_str_puts(j->out, "null");
}

void core_json_bool(core_json *j, const char *key, bool value) {
  put_key(j, key);
  core_str_puts(j->out, value ? "true" : "false");
}

void core_json_null(core_json *j, const char *key) {
  put_key(j, key);
  core_str_puts(j->out, "null");
}

void core_json_raw(core_json *j, const char *key, const char *json) {
  put_key(j, key);
  core_str_puts(j->out, json ? json : "null");
}
