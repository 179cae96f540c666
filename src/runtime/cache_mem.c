/* cache_mem.c - the in-memory kernel cache: a hash table of images keyed by
 * content, where a key being produced is marked in flight so that other
 * threads wait for it instead of compiling it again. */
#include "runtime/cache_mem.h"

#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "runtime/cache.h"
#include "runtime/cache_state.h"

struct cache_mem_entry {
  cache_key key;
  bool ready; /* false: in flight, its producer will publish or abandon */
  void *image;
  size_t size;
  uint64_t used; /* cs->mem_tick at the last publish or hit */
  cache_mem_entry *next;
};

static cache_mem_entry **bucket(struct cache_state *cs, cache_key key) {
  return &cs->buckets[key.lo % CACHE_MEM_BUCKETS];
}

static cache_mem_entry *find(struct cache_state *cs, cache_key key) {
  for (cache_mem_entry *e = *bucket(cs, key); e; e = e->next)
    if (rt_cache_key_eq(e->key, key)) return e;
  return NULL;
}

static void unlink_entry(struct cache_state *cs, cache_mem_entry *victim) {
  for (cache_mem_entry **pp = bucket(cs, victim->key); *pp; pp = &(*pp)->next)
    if (*pp == victim) {
      *pp = victim->next;
      return;
    }
}

cache_mem_result rt_cache_mem_acquire(struct cache_state *cs, cache_key key, void **image,
                                      size_t *size) {
  *image = NULL;
  *size = 0;
  pthread_mutex_lock(&cs->lock);
  cache_mem_entry *e;
  while ((e = find(cs, key)) && !e->ready) pthread_cond_wait(&cs->ready, &cs->lock);
  cache_mem_result r;
  if (e) { /* ready: hand out a copy, the table keeps its own */
    e->used = ++cs->mem_tick;
    *image = core_malloc(e->size);
    if (*image) {
      memcpy(*image, e->image, e->size);
      *size = e->size;
    }
    r = *image ? CACHE_MEM_HIT : CACHE_MEM_NOMEM;
  } else if ((e = core_calloc(1, sizeof *e))) {
    e->key = key;
    e->next = *bucket(cs, key);
    *bucket(cs, key) = e;
    r = CACHE_MEM_RESERVED;
  } else {
    r = CACHE_MEM_NOMEM;
  }
  pthread_mutex_unlock(&cs->lock);
  return r;
}

/* Drops least recently used ready entries (never `keep`) until the held
 * bytes fit the bound. A linear scan per victim: evictions are rare and the
 * table holds at most thousands of kernels. Called with cs->lock held. */
static void evict_to_bound(struct cache_state *cs, const cache_mem_entry *keep) {
  while (cs->mem_bytes > cs->mem_max_bytes) {
    cache_mem_entry *victim = NULL;
    for (int b = 0; b < CACHE_MEM_BUCKETS; b++)
      for (cache_mem_entry *e = cs->buckets[b]; e; e = e->next)
        if (e->ready && e != keep && (!victim || e->used < victim->used)) victim = e;
    if (!victim) return; /* only the newest (or in-flight ones) left */
    unlink_entry(cs, victim);
    cs->mem_bytes -= victim->size;
    cs->mem_entries--;
    free(victim->image);
    free(victim);
    atomic_fetch_add(&cs->mem_evictions, 1);
  }
}

void rt_cache_mem_publish(struct cache_state *cs, cache_key key, const void *image, size_t size) {
  void *copy = core_malloc(size ? size : 1);
  if (copy) memcpy(copy, image, size);
  pthread_mutex_lock(&cs->lock);
  cache_mem_entry *e = find(cs, key);
  if (e && !e->ready && copy) {
    e->image = copy;
    e->size = size;
    e->ready = true;
    e->used = ++cs->mem_tick;
    cs->mem_entries++;
    cs->mem_bytes += size;
    copy = NULL;
    evict_to_bound(cs, e);
  } else if (e && !e->ready) { /* out of memory: give the key up */
    unlink_entry(cs, e);
    free(e);
  }
  pthread_cond_broadcast(&cs->ready);
  pthread_mutex_unlock(&cs->lock);
  free(copy);
}

void rt_cache_mem_abandon(struct cache_state *cs, cache_key key) {
  pthread_mutex_lock(&cs->lock);
  cache_mem_entry *e = find(cs, key);
  if (e && !e->ready) {
    unlink_entry(cs, e);
    free(e);
  }
  pthread_cond_broadcast(&cs->ready);
  pthread_mutex_unlock(&cs->lock);
}

void rt_cache_mem_clear(struct cache_state *cs) {
  pthread_mutex_lock(&cs->lock);
  for (int b = 0; b < CACHE_MEM_BUCKETS; b++) {
    cache_mem_entry **pp = &cs->buckets[b];
    while (*pp) {
      cache_mem_entry *e = *pp;
      if (!e->ready) { /* a producer still owns it */
        pp = &e->next;
        continue;
      }
      *pp = e->next;
      cs->mem_bytes -= e->size;
      free(e->image);
      free(e);
      cs->mem_entries--;
    }
  }
  pthread_mutex_unlock(&cs->lock);
}

void rt_cache_mem_destroy(struct cache_state *cs) {
  for (int b = 0; b < CACHE_MEM_BUCKETS; b++) {
    cache_mem_entry *e = cs->buckets[b];
    while (e) {
      cache_mem_entry *next = e->next;
      free(e->image);
      free(e);
      e = next;
    }
    cs->buckets[b] = NULL;
  }
  cs->mem_entries = 0;
  cs->mem_bytes = 0;
}
