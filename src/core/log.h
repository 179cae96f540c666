/* log.h - leveled, per-component logging (log.c). */
#ifndef KF_CORE_LOG_H
#define KF_CORE_LOG_H

#include <stdbool.h>

#include "kfuse.h"

/* Log components; KFUSE_LOG sets a level for each ("fuse=debug,cache=info")
 * or for all ("warn"). */
typedef enum core_component {
  LOG_IR,
  LOG_FUSE,
  LOG_CODEGEN,
  LOG_CACHE,
  LOG_RUNTIME,
  LOG_COMPONENT_COUNT
} core_component;

/* Logs a line if the component's level admits it. ctx may be NULL (then
 * KFUSE_LOG and the stderr logger decide). Thread-safe. */
void core_log(kf_ctx *ctx, kf_log_level level, core_component comp, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Whether a line at this level would be logged (to skip expensive formatting). */
bool core_log_enabled(const kf_ctx *ctx, kf_log_level level, core_component comp);
/* Parses a KFUSE_LOG string into levels; unknown words are ignored. */
void core_log_parse(const char *spec, kf_log_level levels[LOG_COMPONENT_COUNT]);

#endif
