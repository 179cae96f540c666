/* cache_state.h - a context's caches, the keys, and blobs: any record by key,
 * disk only, for other modules (cache_state.c). */
#ifndef KF_RUNTIME_CACHE_STATE_H
#define KF_RUNTIME_CACHE_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/cache.h"

/* The context's cache state, created at first use under ctx->lock. NULL
 * only on out of memory. Thread-safe. */
struct cache_state *rt_cache_state_get(kf_ctx *ctx);
/* Releases a context's caches (kf_ctx_destroy); tolerates NULL. */
void rt_cache_state_destroy(struct cache_state *cache);
/* The context's compile pool (created at first use; NULL: run serially). */
struct core_pool *rt_cache_state_pool(struct cache_state *cs);

/* The key of a kernel: source (less its comments, which cannot change the
 * CUBIN), NVRTC options, arch, NVRTC version and kfuse version. */
cache_key rt_cache_key_kernel(const char *source, const char *options, const char *arch);
/* The key of any other record: a domain string ("occupancy-v1") and the
 * bytes that identify it (e.g. a kernel key plus the device name). */
cache_key rt_cache_key_blob(const char *domain, const void *data, size_t size);
/* 32 lowercase hex digits, hi then lo, NUL-terminated. */
void rt_cache_key_hex(cache_key key, char out[33]);
bool rt_cache_key_eq(cache_key a, cache_key b);

/* true with *data (malloc'd, the caller's) when ctx's disk cache holds it. */
bool rt_cache_blob_get(kf_ctx *ctx, cache_key key, void **data, size_t *size);
/* Stores a record; failures are logged and otherwise ignored. */
void rt_cache_blob_put(kf_ctx *ctx, cache_key key, const void *data, size_t size);

#endif
