/* cache_state.c - the kernel caches' per-context state, content keys, the
 * blob store for other modules, and the public cache statistics API. */
#include "runtime/cache_state.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>

#include "core/alloc.h"
#include "core/pool.h"
#include "runtime/cache.h"
#include "runtime/cache_dir.h"
#include "runtime/cache_disk.h"
#include "runtime/cache_mem.h"
#include "runtime/cache_scan.h"

/* Each part is hashed with its length first, so parts cannot run together. */
static void hash_part(XXH3_state_t *st, const void *data, size_t size) {
  uint64_t n = size;
  XXH3_128bits_update(st, &n, sizeof n);
  if (size) XXH3_128bits_update(st, data, size);
}

static cache_key digest(XXH3_state_t *st) {
  XXH128_hash_t h = XXH3_128bits_digest(st);
  return (cache_key){h.low64, h.high64};
}

/* The source hashed without its comments (each one a space, as for the
 * compiler), string and character literals kept whole, then its hashed
 * length: comments name the graph's node ids, which must not tell apart
 * kernels that compile alike. Streams: no allocation to fail. */
static void hash_code(XXH3_state_t *st, const char *source) {
  uint64_t n = 0;
  const char *run = source, *p = source;
  while (*p) {
    if (p[0] == '/' && (p[1] == '/' || p[1] == '*')) {
      XXH3_128bits_update(st, run, (size_t)(p - run));
      n += (uint64_t)(p - run) + 1;
      XXH3_128bits_update(st, " ", 1);
      const char *e = p[1] == '/' ? strchr(p, '\n') : strstr(p + 2, "*/");
      p = !e ? p + strlen(p) : p[1] == '/' ? e : e + 2;
      run = p;
    } else if (*p == '"' || *p == '\'') {
      char q = *p++;
      for (; *p && *p != q; p++)
        if (*p == '\\' && p[1]) p++;
      if (*p) p++;
    } else {
      p++;
    }
  }
  XXH3_128bits_update(st, run, (size_t)(p - run));
  n += (uint64_t)(p - run);
  XXH3_128bits_update(st, &n, sizeof n);
}

cache_key rt_cache_key_kernel(const char *source, const char *options, const char *arch) {
  XXH3_state_t st;
  XXH3_INITSTATE(&st);
  XXH3_128bits_reset(&st);
  int ma = 0, mi = 0;
  kf_nvrtc_version(&ma, &mi);
  char versions[96];
  snprintf(versions, sizeof versions, "kfuse %s file %u nvrtc %d.%d", KFUSE_VERSION_STRING,
           CACHE_FILE_VERSION, ma, mi);
  hash_part(&st, "kernel", 6);
  hash_code(&st, source);
  hash_part(&st, options, strlen(options));
  hash_part(&st, arch, strlen(arch));
  hash_part(&st, versions, strlen(versions));
  return digest(&st);
}

cache_key rt_cache_key_blob(const char *domain, const void *data, size_t size) {
  XXH3_state_t st;
  XXH3_INITSTATE(&st);
  XXH3_128bits_reset(&st);
  hash_part(&st, "blob", 4);
  hash_part(&st, domain, strlen(domain));
  hash_part(&st, data, size);
  hash_part(&st, KFUSE_VERSION_STRING, strlen(KFUSE_VERSION_STRING));
  return digest(&st);
}

void rt_cache_key_hex(cache_key key, char out[33]) {
  snprintf(out, 33, "%016" PRIx64 "%016" PRIx64, key.hi, key.lo);
}

bool rt_cache_key_eq(cache_key a, cache_key b) {
  return a.lo == b.lo && a.hi == b.hi;
}

static struct cache_state *state_new(kf_ctx *ctx) {
  struct cache_state *cs = core_calloc(1, sizeof *cs);
  if (!cs) return NULL;
  cs->ctx = ctx;
  pthread_mutex_init(&cs->lock, NULL);
  pthread_cond_init(&cs->ready, NULL);
  pthread_mutex_init(&cs->disk_lock, NULL);
  cs->dir_fd = -1;
  /* A bound on the memory cache, so that a long-lived process compiling many
   * shapes does not grow without limit (the disk cache keeps the rest). */
  cs->mem_max_bytes = rt_cache_mb_bytes(core_knobs_get(ctx)->cache_mem_max_mb);
  return cs;
}

struct cache_state *rt_cache_state_get(kf_ctx *ctx) {
  if (!ctx) return NULL;
  pthread_mutex_lock(&ctx->lock);
  if (!ctx->cache) ctx->cache = state_new(ctx);
  struct cache_state *cs = ctx->cache;
  pthread_mutex_unlock(&ctx->lock);
  return cs;
}

struct core_pool *rt_cache_state_pool(struct cache_state *cs) {
  pthread_mutex_lock(&cs->lock);
  /* cores - 1 workers: the calling thread is the last one */
  if (!cs->pool && core_cpu_count() > 1) cs->pool = core_pool_create(core_cpu_count() - 1);
  struct core_pool *pool = cs->pool;
  pthread_mutex_unlock(&cs->lock);
  return pool;
}

void rt_cache_state_destroy(struct cache_state *cache) {
  if (!cache) return;
  core_pool_destroy(cache->pool);
  rt_cache_mem_destroy(cache);
  if (cache->dir_fd >= 0) close(cache->dir_fd);
  pthread_mutex_destroy(&cache->disk_lock);
  pthread_cond_destroy(&cache->ready);
  pthread_mutex_destroy(&cache->lock);
  free(cache);
}

bool rt_cache_blob_get(kf_ctx *ctx, cache_key key, void **data, size_t *size) {
  struct cache_state *cs = rt_cache_state_get(ctx);
  return cs && rt_cache_disk_ready(cs) && rt_cache_disk_get(cs, key, data, size);
}

void rt_cache_blob_put(kf_ctx *ctx, cache_key key, const void *data, size_t size) {
  struct cache_state *cs = rt_cache_state_get(ctx);
  if (cs && rt_cache_disk_ready(cs)) rt_cache_disk_put(cs, key, data, size);
}

kf_status kf_ctx_cache_stats(kf_ctx *ctx, kf_cache_stats *out) {
  if (!ctx || !out) return core_error(ctx, KF_ERR_INVALID_ARG, "kf_ctx_cache_stats: NULL argument");
  struct cache_state *cs = rt_cache_state_get(ctx);
  if (!cs) return core_error(ctx, KF_ERR_OUT_OF_MEMORY, "kf_ctx_cache_stats: out of memory");
  memset(out, 0, sizeof *out);
  out->mem_hits = atomic_load(&cs->mem_hits);
  out->disk_hits = atomic_load(&cs->disk_hits);
  out->misses = atomic_load(&cs->misses);
  out->evictions = atomic_load(&cs->evictions);
  out->disk_errors = atomic_load(&cs->disk_errors);
  out->corrupt = atomic_load(&cs->corrupt);
  pthread_mutex_lock(&cs->lock);
  out->mem_entries = cs->mem_entries;
  out->mem_bytes = cs->mem_bytes;
  pthread_mutex_unlock(&cs->lock);
  out->mem_max_bytes = cs->mem_max_bytes;
  out->mem_evictions = atomic_load(&cs->mem_evictions);
  out->disk_enabled = rt_cache_disk_ready(cs);
  out->disk_max_bytes = cs->max_bytes;
  if (out->disk_enabled) rt_cache_disk_usage(cs, &out->disk_entries, &out->disk_bytes);
  return KF_OK;
}

kf_status kf_cache_clear_report(kf_ctx *ctx, uint64_t *removed, uint64_t *kept) {
  if (removed) *removed = 0;
  if (kept) *kept = 0;
  if (!ctx) return KF_ERR_INVALID_ARG;
  struct cache_state *cs = rt_cache_state_get(ctx);
  if (!cs) return core_error(ctx, KF_ERR_OUT_OF_MEMORY, "kf_cache_clear: out of memory");
  rt_cache_mem_clear(cs);
  if (!rt_cache_disk_ready(cs)) return KF_OK;
  uint64_t gone = 0, failed = 0;
  char first[64];
  int err = 0;
  bool listed = rt_cache_disk_clear(cs, &gone, &failed, first, &err);
  if (removed) *removed = gone;
  if (kept) *kept = failed;
  if (!listed)
    return core_error(ctx, KF_ERR_IO, "kf_cache_clear: cannot list %s: %s", cs->dir, strerror(err));
  if (failed)
    return core_error(ctx, KF_ERR_IO,
                      "kf_cache_clear: removed %" PRIu64 " entries from %s; %" PRIu64
                      " could not be removed (%s: %s)",
                      gone, cs->dir, failed, first, strerror(err));
  core_log(ctx, KF_LOG_INFO, LOG_CACHE, "cleared %" PRIu64 " entries from %s", gone, cs->dir);
  return KF_OK;
}

kf_status kf_cache_clear(kf_ctx *ctx) {
  return kf_cache_clear_report(ctx, NULL, NULL);
}

const char *kf_cache_dir(kf_ctx *ctx) {
  struct cache_state *cs = rt_cache_state_get(ctx);
  if (!cs) return "";
  rt_cache_disk_ready(cs);
  return cs->dir;
}
