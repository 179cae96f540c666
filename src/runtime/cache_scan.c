/* cache_scan.c - the disk cache folder as a whole: listing it (nothing
 * followed or opened), evicting least recently used entries past the size
 * bound, clearing it, and its usage. */
#include "runtime/cache_scan.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/alloc.h"
#include "runtime/cache.h"

#define STALE_TMP_SECONDS 600

/* ---- listing, eviction, clearing ------------------------------------------ */

typedef struct disk_file {
  char name[48];
  struct timespec mtime;
  uint64_t bytes;
  bool regular; /* false: a link, FIFO, directory... under an entry's name */
  bool dir;
} disk_file;

static bool is_entry_name(const char *name) {
  size_t n = strlen(name);
  if (n != 32 + strlen(CACHE_FILE_SUFFIX) || strcmp(name + 32, CACHE_FILE_SUFFIX) != 0)
    return false;
  return strspn(name, "0123456789abcdef") == 32;
}

/* Appends one listed file; false on out of memory. */
static bool add_file(disk_file **out, int *n, int *cap, const char *name, const struct stat *st) {
  if (*n == *cap) {
    int ncap = *cap ? 2 * *cap : 64;
    disk_file *grown = core_realloc(*out, (size_t)ncap * sizeof **out);
    if (!grown) return false;
    *out = grown;
    *cap = ncap;
  }
  disk_file *f = &(*out)[(*n)++];
  memcpy(f->name, name, strlen(name) + 1); /* 36 chars: checked */
  f->mtime = st->st_mtim;
  f->regular = S_ISREG(st->st_mode);
  f->dir = S_ISDIR(st->st_mode);
  f->bytes = f->regular ? (uint64_t)st->st_size : 0;
  return true;
}

/* Lists whatever holds an entry's name (and removes temp files that a
 * crashed writer left); *total counts the regular files' bytes. Nothing is
 * followed or opened. *out is malloc'd; returns the count, or -1 (errno). */
static int list_entries(struct cache_state *cs, disk_file **out, uint64_t *total) {
  *out = NULL;
  *total = 0;
  int fd = openat(cs->dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
  if (!d) {
    int err = errno;
    if (fd >= 0) close(fd);
    errno = err;
    return -1;
  }
  int n = 0, cap = 0;
  time_t now = time(NULL);
  for (struct dirent *de; (de = readdir(d));) {
    struct stat st;
    bool entry = is_entry_name(de->d_name);
    if ((!entry && strncmp(de->d_name, ".tmp-", 5) != 0) ||
        fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
      continue;
    if (!entry) {
      if (now - st.st_mtime > STALE_TMP_SECONDS) unlinkat(dirfd(d), de->d_name, 0);
      continue;
    }
    if (!add_file(out, &n, &cap, de->d_name, &st)) break;
    *total += (*out)[n - 1].bytes;
  }
  closedir(d);
  return n;
}

static int older_first(const void *a, const void *b) {
  const disk_file *x = a, *y = b;
  if (x->mtime.tv_sec != y->mtime.tv_sec) return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
  if (x->mtime.tv_nsec != y->mtime.tv_nsec) return x->mtime.tv_nsec < y->mtime.tv_nsec ? -1 : 1;
  return strcmp(x->name, y->name);
}

/* Removes least recently used entries until the folder fits the bound,
 * never one used in the last CACHE_FRESH_SECONDS (it may be another
 * process's, just written: the bound is soft by those). disk_lock held. */
static void evict_scan(struct cache_state *cs) {
  disk_file *files;
  uint64_t total;
  int n = list_entries(cs, &files, &total);
  if (n < 0) return;
  time_t now = time(NULL);
  cs->rescan_at = 0;
  if (total > cs->max_bytes) {
    qsort(files, (size_t)n, sizeof *files, older_first);
    for (int i = 0; i < n && total > cs->max_bytes; i++) {
      if (!files[i].regular) continue;
      time_t age = now - files[i].mtime.tv_sec; /* a future mtime does not pin an entry */
      if (age >= 0 && age < CACHE_FRESH_SECONDS) {
        /* the first fresh one is the oldest: rescan once it may go */
        if (!cs->rescan_at) cs->rescan_at = (int64_t)files[i].mtime.tv_sec + CACHE_FRESH_SECONDS;
        continue;
      }
      if (unlinkat(cs->dir_fd, files[i].name, 0) == 0) atomic_fetch_add(&cs->evictions, 1);
      total -= files[i].bytes; /* gone either way (another process may have won) */
    }
    core_log(cs->ctx, KF_LOG_DEBUG, LOG_CACHE, "evicted down to %llu bytes",
             (unsigned long long)total);
  }
  free(files);
  cs->bytes_est = total;
  cs->scanned = true;
}

/* The folder is measured once; afterwards our own writes are added to the
 * estimate and the folder is rescanned only when the estimate passes the
 * bound (and, when only fresh entries were left, once the oldest of them
 * may be evicted), so a put costs no directory scan in the common case. */
void rt_cache_disk_evict(struct cache_state *cs, uint64_t added) {
  pthread_mutex_lock(&cs->disk_lock);
  cs->bytes_est += added;
  if (!cs->scanned || (cs->bytes_est > cs->max_bytes && (int64_t)time(NULL) >= cs->rescan_at))
    evict_scan(cs);
  pthread_mutex_unlock(&cs->disk_lock);
}

bool rt_cache_disk_clear(struct cache_state *cs, uint64_t *removed, uint64_t *failed,
                         char first_name[64], int *first_err) {
  disk_file *files;
  uint64_t total;
  *removed = *failed = 0;
  *first_err = 0;
  first_name[0] = 0;
  pthread_mutex_lock(&cs->disk_lock);
  int n = list_entries(cs, &files, &total);
  if (n < 0) *first_err = errno;
  for (int i = 0; i < n; i++) {
    /* a directory goes only if empty: what is inside is not ours */
    if (unlinkat(cs->dir_fd, files[i].name, files[i].dir ? AT_REMOVEDIR : 0) == 0) {
      (*removed)++;
    } else if (errno != ENOENT) { /* ENOENT: another process removed it first */
      if (!(*failed)++) {
        *first_err = errno;
        snprintf(first_name, 64, "%s", files[i].name);
      }
    }
  }
  free(files);
  cs->bytes_est = 0;
  cs->scanned = false;
  pthread_mutex_unlock(&cs->disk_lock);
  return n >= 0;
}

void rt_cache_disk_usage(struct cache_state *cs, uint64_t *entries, uint64_t *bytes) {
  disk_file *files;
  pthread_mutex_lock(&cs->disk_lock);
  int n = list_entries(cs, &files, bytes);
  pthread_mutex_unlock(&cs->disk_lock);
  uint64_t regular = 0;
  for (int i = 0; i < n; i++) regular += files[i].regular;
  free(files);
  *entries = regular;
}
