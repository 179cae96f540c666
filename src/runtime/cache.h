/* cache.h - the kernel caches: content-addressed keys, the in-memory table
 * (thread-safe; a kernel being compiled is waited for), the on-disk store
 * (checksummed files, written by temp file and rename), and a generic
 * "blob by key" store for other records (the runtime's occupancy
 * decisions). Cache I/O failing never fails a compile. */
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

/* The key of a kernel: source, NVRTC options, arch, NVRTC version and kfuse
 * version. */
cache_key cache_key_kernel(const char *source, const char *options, const char *arch);
/* The key of any other record: a domain string ("occupancy-v1") and the
 * bytes that identify it (e.g. a kernel key plus the device name). */
cache_key cache_key_blob(const char *domain, const void *data, size_t size);
/* 32 lowercase hex digits, hi then lo, NUL-terminated. */
void cache_key_hex(cache_key key, char out[33]);
bool cache_key_eq(cache_key a, cache_key b);

/* ---- per-context state (cache_state.c) ---------------------------------- */

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

/* The context's cache state, created at first use under ctx->lock. NULL
 * only on out of memory. Thread-safe. */
struct cache_state *cache_state_get(kf_ctx *ctx);
/* Releases a context's caches (kf_ctx_destroy); tolerates NULL. */
void cache_state_destroy(struct cache_state *cache);
/* The context's compile pool (created at first use; NULL: run serially). */
struct core_pool *cache_state_pool(struct cache_state *cs);

/* ---- memory (cache_mem.c) ----------------------------------------------- */

typedef enum cache_mem_result {
  CACHE_MEM_HIT,      /* *image / *size hold a malloc'd copy, the caller's */
  CACHE_MEM_RESERVED, /* the caller must produce it, then publish or abandon */
  CACHE_MEM_NOMEM
} cache_mem_result;

/* Looks key up. If another thread is producing it, waits for that thread.
 * A miss reserves the key for the caller. Thread-safe. */
cache_mem_result cache_mem_acquire(struct cache_state *cs, cache_key key, void **image,
                                   size_t *size);
/* Stores a copy of the image under a key reserved by cache_mem_acquire and
 * wakes the waiters. On out of memory the reservation is abandoned. */
void cache_mem_publish(struct cache_state *cs, cache_key key, const void *image, size_t size);
/* Drops a reservation (the compile failed); one waiter then tries itself. */
void cache_mem_abandon(struct cache_state *cs, cache_key key);
/* Frees every ready entry (in-flight ones stay). */
void cache_mem_clear(struct cache_state *cs);
void cache_mem_destroy(struct cache_state *cs);

/* ---- the folder and the knobs (cache_dir.c) ----------------------------- */

/* Bytes of a size in MB (KFUSE_CACHE_MAX_MB, KFUSE_CACHE_MEM_MAX_MB: their
 * bounds and defaults are in core/knobs.def). */
uint64_t cache_mb_bytes(double mb);
/* Resolves the folder, creates it (0700), opens it and checks the opened
 * directory: ours (owner = euid) and not writable by group or others. Sets
 * cs->dir, cs->dir_fd and cs->disk_enabled; a refusal is one warning. Reads
 * KFUSE_DISK_CACHE (0 or 1) and KFUSE_CACHE_FAULT. Called once, under
 * disk_lock. */
void cache_dir_open(struct cache_state *cs);

/* ---- disk (cache_disk.c) ------------------------------------------------ */

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

/* Resolves and checks the folder once (KFUSE_CACHE_DIR, XDG_CACHE_HOME,
 * HOME); false when the disk cache is off, with a warning logged once. */
bool cache_disk_ready(struct cache_state *cs);
/* Reads an entry: true with *data (malloc'd, the caller's) and *size on a
 * valid entry. Only a regular file owned by the euid, at most
 * CACHE_ENTRY_MAX_BYTES, is opened and read (never through a symbolic
 * link, never blocking on a FIFO); a truncated, corrupt or foreign entry,
 * or anything else under an entry's name, is removed with a warning and is
 * a miss. */
bool cache_disk_get(struct cache_state *cs, cache_key key, void **data, size_t *size);
/* Writes an entry (temp file, fsync, rename), then evicts oldest entries
 * past the size bound. false (warning logged, disk_errors counted) when it
 * could not be written; nothing else happens. */
bool cache_disk_put(struct cache_state *cs, cache_key key, const void *data, size_t size);
/* Bytes of an entry's header (the payload follows). */
#define CACHE_HEADER_SIZE 48
/* Adds a written entry's bytes to the folder's estimate; past the bound,
 * rescans the folder and evicts least recently used entries (never fresh
 * ones). cache_scan.c; called by cache_disk_put. */
void cache_disk_evict(struct cache_state *cs, uint64_t added);
/* Deletes every entry (and whatever else holds an entry's name: a link, a
 * FIFO, an empty directory). *removed counts what was really removed;
 * *failed what could not be, with the first one's name and errno in
 * first_name / *first_err. false when the folder could not be listed
 * (*first_err set). */
bool cache_disk_clear(struct cache_state *cs, uint64_t *removed, uint64_t *failed,
                      char first_name[64], int *first_err);
/* Counts entries and their bytes now. */
void cache_disk_usage(struct cache_state *cs, uint64_t *entries, uint64_t *bytes);

/* Test hooks: make the writer fail as if the disk were full (ENOSPC) or
 * read-only (EROFS) when creating (stage 0) or writing (stage 1) a temp
 * file; err 0 turns the fault off. Process-wide. KFUSE_CACHE_FAULT=
 * "enospc" or "erofs" sets the same from the environment. */
void cache_disk_inject_fault(int stage, int err);

/* ---- blobs: any record by key, disk only, for other modules -------------- */

/* true with *data (malloc'd, the caller's) when ctx's disk cache holds it. */
bool cache_blob_get(kf_ctx *ctx, cache_key key, void **data, size_t *size);
/* Stores a record; failures are logged and otherwise ignored. */
void cache_blob_put(kf_ctx *ctx, cache_key key, const void *data, size_t size);

#endif
