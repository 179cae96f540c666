/* log.c - leveled, per-component logging through the context's callback,
 * or to stderr; never to stdout. */
#include "core/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ctx.h"
#include "core/knobs.h"

static const char *const component_names[LOG_COMPONENT_COUNT] = {"ir", "fuse", "codegen", "cache",
                                                                 "runtime"};
static const char *const level_names[] = {"error", "warn", "info", "debug"};

static int parse_level(const char *s, size_t n) {
  for (int i = 0; i < 4; i++)
    if (strlen(level_names[i]) == n && strncmp(s, level_names[i], n) == 0) return i;
  return -1;
}

void core_log_parse(const char *spec, kf_log_level levels[LOG_COMPONENT_COUNT]) {
  for (int i = 0; i < LOG_COMPONENT_COUNT; i++) levels[i] = KF_LOG_WARN;
  if (!spec) return;
  const char *p = spec;
  while (*p) {
    size_t n = strcspn(p, ",");
    const char *eq = memchr(p, '=', n);
    if (eq) {
      int lv = parse_level(eq + 1, n - (size_t)(eq + 1 - p));
      for (int c = 0; c < LOG_COMPONENT_COUNT && lv >= 0; c++)
        if (strlen(component_names[c]) == (size_t)(eq - p) &&
            strncmp(p, component_names[c], (size_t)(eq - p)) == 0)
          levels[c] = (kf_log_level)lv;
    } else {
      int lv = parse_level(p, n);
      for (int c = 0; c < LOG_COMPONENT_COUNT && lv >= 0; c++) levels[c] = (kf_log_level)lv;
    }
    p += n;
    if (*p == ',') p++;
  }
}

bool core_log_enabled(const kf_ctx *ctx, kf_log_level level, core_component comp) {
  if (ctx) return level <= ctx->levels[comp];
  kf_log_level levels[LOG_COMPONENT_COUNT];
  core_log_parse(core_knobs_quiet()->log, levels);
  return level <= levels[comp];
}

void core_log(kf_ctx *ctx, kf_log_level level, core_component comp, const char *fmt, ...) {
  if (!core_log_enabled(ctx, level, comp)) return;
  char msg[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  /* A log line is one line: names and paths in it came from files and the
   * environment, and a newline or an ESC sequence there must not forge a
   * line or act on the terminal. */
  char line[sizeof msg * 4];
  kf_escape(line, sizeof line, msg, KF_ESCAPE_LINE);
  if (ctx && ctx->log_fn) {
    ctx->log_fn(ctx->log_user, level, component_names[comp], line);
    return;
  }
  fprintf(stderr, "kfuse %s [%s]: %s\n", level_names[level], component_names[comp], line);
}
