/* ctx.c - a context's last-error text and its logger (src/pipeline/context.c
 * creates and destroys contexts). */
#include "core/ctx.h"

#include <stdio.h>
#include <string.h>

const char *kf_ctx_errmsg(const kf_ctx *ctx) {
  return ctx ? ctx->errmsg : "";
}

void kf_ctx_set_log(kf_ctx *ctx, kf_log_fn fn, void *user) {
  if (!ctx) return;
  ctx->log_fn = fn;
  ctx->log_user = user;
}

kf_status core_verror(kf_ctx *ctx, kf_status st, const char *fmt, va_list ap) {
  if (!ctx) return st;
  char buf[sizeof ctx->errmsg];
  vsnprintf(buf, sizeof buf, fmt, ap);
  pthread_mutex_lock(&ctx->lock);
  memcpy(ctx->errmsg, buf, sizeof buf);
  pthread_mutex_unlock(&ctx->lock);
  return st;
}

kf_status core_error(kf_ctx *ctx, kf_status st, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  core_verror(ctx, st, fmt, ap);
  va_end(ap);
  return st;
}

kf_status core_error_buf(kf_ctx *ctx, char *buf, size_t size, kf_status st, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, size, fmt, ap);
  va_end(ap);
  /* buf may be the only copy a later call overwrites: the context gets its own */
  return core_error(ctx, st, "%s", buf);
}
