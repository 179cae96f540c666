/* cache_scan.h - the folder as a whole: eviction, clearing, usage (cache_scan.c). */
#ifndef KF_RUNTIME_CACHE_SCAN_H
#define KF_RUNTIME_CACHE_SCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/cache.h"

/* Adds a written entry's bytes to the folder's estimate; past the bound,
 * rescans the folder and evicts least recently used entries (never fresh
 * ones). cache_scan.c; called by rt_cache_disk_put. */
void rt_cache_disk_evict(struct cache_state *cs, uint64_t added);
/* Deletes every entry (and whatever else holds an entry's name: a link, a
 * FIFO, an empty directory). *removed counts what was really removed;
 * *failed what could not be, with the first one's name and errno in
 * first_name / *first_err. false when the folder could not be listed
 * (*first_err set). */
bool rt_cache_disk_clear(struct cache_state *cs, uint64_t *removed, uint64_t *failed,
                         char first_name[64], int *first_err);
/* Counts entries and their bytes now. */
void rt_cache_disk_usage(struct cache_state *cs, uint64_t *entries, uint64_t *bytes);

#endif
