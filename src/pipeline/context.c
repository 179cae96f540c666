/* context.c - creating and destroying contexts: the pipeline owns kf_ctx
 * and releases what the runtime hung on it. */
#include <stdlib.h>

#include "core/alloc.h"
#include "core/ctx.h"
#include "core/knobs.h"
#include "runtime/cache.h"
#include "runtime/cache_state.h"
#include "runtime/rt.h"
#include "runtime/rt_state.h"

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
  rt_cache_state_destroy(ctx->cache);
  pthread_mutex_destroy(&ctx->lock);
  free(ctx);
}
