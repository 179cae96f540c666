/* cli_json.h - the kfuse program's one JSON writer: one compact object per
 * command on stdout, strings through kf_escape (the library's escaper; the
 * library's writer, src/core/json.c, writes the same style). */
#ifndef KF_TOOLS_CLI_JSON_H
#define KF_TOOLS_CLI_JSON_H

#include <stdbool.h>
#include <stdio.h>

#define CLI_JSON_DEPTH 16

/* A streaming writer: each call writes one member (key non-NULL, in an
 * object) or one element (key NULL, in an array or at the top). Numbers
 * that are not finite are written as null. */
typedef struct cli_json {
  FILE *f;
  int depth;
  bool first[CLI_JSON_DEPTH];
} cli_json;

void cj_init(cli_json *j, FILE *f);
void cj_obj(cli_json *j, const char *key);
void cj_obj_end(cli_json *j);
void cj_arr(cli_json *j, const char *key);
void cj_arr_end(cli_json *j);
void cj_str(cli_json *j, const char *key, const char *value); /* NULL -> null */
void cj_num(cli_json *j, const char *key, double value);      /* %.6g */
void cj_fixed(cli_json *j, const char *key, double value, int decimals);
void cj_int(cli_json *j, const char *key, long long value);
void cj_bool(cli_json *j, const char *key, bool value);
void cj_null(cli_json *j, const char *key);
/* Ends the document with a newline. */
void cj_done(cli_json *j);

#endif
