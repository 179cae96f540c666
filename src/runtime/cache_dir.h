/* cache_dir.h - the cache folder, checked, and the size knobs (cache_dir.c). */
#ifndef KF_RUNTIME_CACHE_DIR_H
#define KF_RUNTIME_CACHE_DIR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/cache.h"

/* Bytes of a size in MB (KFUSE_CACHE_MAX_MB, KFUSE_CACHE_MEM_MAX_MB: their
 * bounds and defaults are in core/knobs.def). */
uint64_t rt_cache_mb_bytes(double mb);
/* Resolves the folder, creates it (0700), opens it and checks the opened
 * directory: ours (owner = euid) and not writable by group or others. Sets
 * cs->dir, cs->dir_fd and cs->disk_enabled; a refusal is one warning. Reads
 * KFUSE_DISK_CACHE (0 or 1) and KFUSE_CACHE_FAULT. Called once, under
 * disk_lock. */
void rt_cache_dir_open(struct cache_state *cs);

#endif
