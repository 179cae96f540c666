/* json.h - the library's one JSON writer (plans, traces): compact members
 * in the order written, strings through kf_escape. The kfuse program has
 * its own writer of the same style on stdout (tools/cli_json.c). */
#ifndef KF_CORE_JSON_H
#define KF_CORE_JSON_H

#include <stdbool.h>

#include "core/strbuf.h"

#define CORE_JSON_DEPTH 16

/* Each call writes one member (key non-NULL, inside an object) or one
 * element (key NULL, inside an array or at the top). An array opened with
 * core_json_arr_lines puts each element on a line of its own (plans'
 * kernels, a trace's events: long lists that people and grep read by line).
 * Deeper nesting than CORE_JSON_DEPTH is a caller bug; it still writes
 * well-formed text but separators may be lost. */
typedef struct core_json {
  core_str *out;
  int depth;
  bool first[CORE_JSON_DEPTH];
  bool lines[CORE_JSON_DEPTH];
} core_json;

void core_json_init(core_json *j, core_str *out);
void core_json_obj(core_json *j, const char *key);
void core_json_obj_end(core_json *j);
void core_json_arr(core_json *j, const char *key);
void core_json_arr_lines(core_json *j, const char *key);
void core_json_arr_end(core_json *j);
void core_json_str(core_json *j, const char *key, const char *value); /* NULL: null */
void core_json_int(core_json *j, const char *key, long long value);
/* With `decimals` digits after the point; not finite: null. */
void core_json_fixed(core_json *j, const char *key, double value, int decimals);
void core_json_bool(core_json *j, const char *key, bool value);
void core_json_null(core_json *j, const char *key);
/* A value that is already JSON text (an object built elsewhere). */
void core_json_raw(core_json *j, const char *key, const char *json);

#endif
