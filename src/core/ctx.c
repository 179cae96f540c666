/* ctx.c - creating and destroying contexts, and their last-error text. */
#include "core/ctx.h"
#include "core/knobs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"

/* Module hooks that release what a module hung on the context; each module
 * defines its own, and tolerates NULL state. */
void rt_state_destroy(struct rt_state *rt);
void cache_state_destroy(struct cache_state *cache);

kf_status kf_ctx_create(kf_ctx **out) {
  if (!out) return KF_ERR_INVALID_ARG;
  *out = NULL;
  kf_ctx *ctx = core_calloc(1, sizeof *ctx);
  if (!ctx) return KF_ERR_OUT_OF_MEMORY;
  if (pthread_mutex_init(&ctx->lock, NULL) != 0) {
    free(ctx);
    return KF_ERR_INTERNAL;
  }
  core_log_parse(core_knobs_quiet()->log, ctx->levels);
  *out = ctx;
  return KF_OK;
}

void kf_ctx_destroy(kf_ctx *ctx) {
  if (!ctx) return;
  rt_state_destroy(ctx->rt);
  cache_state_destroy(ctx->cache);
  pthread_mutex_destroy(&ctx->lock);
  free(ctx);
}

const char *kf_ctx_errmsg(const kf_ctx *ctx) { return ctx ? ctx->errmsg : ""; }

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
