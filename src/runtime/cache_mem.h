/* cache_mem.h - the in-memory kernel table; a kernel being compiled is waited
 * for (cache_mem.c). */
#ifndef KF_RUNTIME_CACHE_MEM_H
#define KF_RUNTIME_CACHE_MEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/cache.h"

typedef enum cache_mem_result {
  CACHE_MEM_HIT,      /* *image / *size hold a malloc'd copy, the caller's */
  CACHE_MEM_RESERVED, /* the caller must produce it, then publish or abandon */
  CACHE_MEM_NOMEM
} cache_mem_result;

/* Looks key up. If another thread is producing it, waits for that thread.
 * A miss reserves the key for the caller. Thread-safe. */
cache_mem_result rt_cache_mem_acquire(struct cache_state *cs, cache_key key, void **image,
                                      size_t *size);
/* Stores a copy of the image under a key reserved by rt_cache_mem_acquire and
 * wakes the waiters. On out of memory the reservation is abandoned. */
void rt_cache_mem_publish(struct cache_state *cs, cache_key key, const void *image, size_t size);
/* Drops a reservation (the compile failed); one waiter then tries itself. */
void rt_cache_mem_abandon(struct cache_state *cs, cache_key key);
/* Frees every ready entry (in-flight ones stay). */
void rt_cache_mem_clear(struct cache_state *cs);
void rt_cache_mem_destroy(struct cache_state *cs);

#endif
