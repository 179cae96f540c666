/* cache_disk.h - disk entries: reading, writing, fault hooks (cache_disk.c). */
#ifndef KF_RUNTIME_CACHE_DISK_H
#define KF_RUNTIME_CACHE_DISK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/cache.h"

/* Resolves and checks the folder once (KFUSE_CACHE_DIR, XDG_CACHE_HOME,
 * HOME); false when the disk cache is off, with a warning logged once. */
bool rt_cache_disk_ready(struct cache_state *cs);
/* Reads an entry: true with *data (malloc'd, the caller's) and *size on a
 * valid entry. Only a regular file owned by the euid, at most
 * CACHE_ENTRY_MAX_BYTES, is opened and read (never through a symbolic
 * link, never blocking on a FIFO); a truncated, corrupt or foreign entry,
 * or anything else under an entry's name, is removed with a warning and is
 * a miss. */
bool rt_cache_disk_get(struct cache_state *cs, cache_key key, void **data, size_t *size);
/* Writes an entry (temp file, fsync, rename), then evicts oldest entries
 * past the size bound. false (warning logged, disk_errors counted) when it
 * could not be written; nothing else happens. */
bool rt_cache_disk_put(struct cache_state *cs, cache_key key, const void *data, size_t size);
/* Test hooks: make the writer fail as if the disk were full (ENOSPC) or
 * read-only (EROFS) when creating (stage 0) or writing (stage 1) a temp
 * file; err 0 turns the fault off. Process-wide. KFUSE_CACHE_FAULT=
 * "enospc" or "erofs" sets the same from the environment. */
void rt_cache_disk_inject_fault(int stage, int err);

#endif
