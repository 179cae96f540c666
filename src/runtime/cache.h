/* cache.h - the kernel caches' shared types and constants: content keys,
 * the per-context state, the disk format. The caches are an in-memory
 * table (thread-safe; a kernel being compiled is waited for), an on-disk
 * store (checksummed files, written by temp file and rename), and a
 * "blob by key" store for other records (occupancy measurements). Cache
 * I/O failing never fails a compile. Each file declares its functions in
 * its own header (cache_state.h, cache_mem.h, cache_dir.h, cache_disk.h,
 * cache_scan.h). */
#ifndef KF_RUNTIME_CACHE_H
#define KF_RUNTIME_CACHE_H

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/ctx.h"
#include "core/knobs.h"

/* A 128-bit content key (XXH3-128). */
typedef struct cache_key {
  uint64_t lo, hi;
} cache_key;

/* ---- per-context state ---------------------------------------------------- */

typedef struct cache_mem_entry cache_mem_entry;
struct core_pool;

#define CACHE_MEM_BUCKETS 256

struct cache_state {
  kf_ctx *ctx;
  pthread_mutex_t lock; /* guards the memory table and `pool` */
  pthread_cond_t ready; /* an in-flight entry was published or abandoned */
  cache_mem_entry *buckets[CACHE_MEM_BUCKETS];
  uint64_t mem_entries;
  uint64_t mem_bytes;     /* image bytes held in memory */
  uint64_t mem_max_bytes; /* KFUSE_CACHE_MEM_MAX_MB (default 256 MiB) */
  uint64_t mem_tick;      /* use clock: least recently used goes first */
  struct core_pool *pool; /* compile workers, created at the first plan */
  /* disk */
  pthread_mutex_t disk_lock; /* serializes opening and eviction scans */
  bool disk_checked;         /* the folder was resolved and checked */
  bool disk_enabled;
  char dir[PATH_MAX];
  int dir_fd;         /* the folder, opened once and checked; -1 when off */
  uint64_t max_bytes; /* KFUSE_CACHE_MAX_MB */
  uint64_t bytes_est; /* folder size as last scanned plus our writes */
  bool scanned;       /* bytes_est has been measured once */
  int64_t rescan_at;  /* over the bound with only fresh entries: wait until */
  bool write_warned;  /* later write failures log at debug level */
  /* counters, readable without the locks */
  _Atomic uint64_t mem_hits, disk_hits, misses, evictions, disk_errors, corrupt, mem_evictions;
};

/* ---- the disk format -------------------------------------------------------- */

/* File format version; bump when the header or payload layout changes. */
#define CACHE_FILE_VERSION 1u
#define CACHE_FILE_MAGIC "KFUSEKC\n"
#define CACHE_FILE_SUFFIX ".kfc"
/* No entry file is larger: a bigger one is refused unread (a miss), and a
 * bigger payload is not written. CUBINs and parsed graphs are far smaller. */
#define CACHE_ENTRY_MAX_BYTES ((uint64_t)256 << 20)
/* Entries read or written this recently are never evicted by the size
 * bound: they may be another process's, just written and about to be read. */
#define CACHE_FRESH_SECONDS 60

/* Bytes of an entry's header (the payload follows). */
#define CACHE_HEADER_SIZE 48

#endif
