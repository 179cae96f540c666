/* cache_disk.c - the on-disk cache: one checksummed file per key, written by
 * temp file + fsync + rename, checked before use, bounded in size. Every
 * failure here is a logged miss or a skipped write, never a failed compile. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>

#include "runtime/cache.h"

#define HEADER_SIZE 48
#define DEFAULT_MAX_MB 1024.0
#define STALE_TMP_SECONDS 600

/* ---- fault injection (tests) -------------------------------------------- */

static _Atomic int fault_errno[2]; /* [0] creating, [1] writing a temp file */

void cache_disk_inject_fault(int stage, int err) {
  if (stage == 0 || stage == 1) atomic_store(&fault_errno[stage], err);
}

static bool fault(int stage) {
  int err = atomic_load(&fault_errno[stage]);
  if (err) errno = err;
  return err != 0;
}

static void fault_from_env(void) {
  const char *f = getenv("KFUSE_CACHE_FAULT");
  if (!f) return;
  if (strcmp(f, "enospc") == 0) cache_disk_inject_fault(1, ENOSPC);
  if (strcmp(f, "erofs") == 0) cache_disk_inject_fault(0, EROFS);
}

/* ---- the folder ---------------------------------------------------------- */

static bool resolve_dir(char *out, size_t size) {
  const char *d = getenv("KFUSE_CACHE_DIR");
  if (d && *d) return snprintf(out, size, "%s", d) < (int)size;
  d = getenv("XDG_CACHE_HOME");
  if (d && d[0] == '/') return snprintf(out, size, "%s/kfuse", d) < (int)size;
  d = getenv("HOME");
  if (d && *d) return snprintf(out, size, "%s/.cache/kfuse", d) < (int)size;
  return false;
}

/* mkdir -p, each created level with mode 0700. */
static int make_dirs(const char *path) {
  char buf[PATH_MAX];
  snprintf(buf, sizeof buf, "%s", path);
  for (char *p = buf + 1;; p++) {
    if (*p != '/' && *p) continue;
    char c = *p;
    *p = 0;
    if (mkdir(buf, 0700) != 0 && errno != EEXIST) return -1;
    *p = c;
    if (!c) return 0;
  }
}

/* Why the folder may not be used, or NULL when it may. */
static const char *check_dir(const char *dir) {
  struct stat st;
  if (make_dirs(dir) != 0) return strerror(errno);
  if (stat(dir, &st) != 0) return strerror(errno);
  if (!S_ISDIR(st.st_mode)) return "not a directory";
  if (st.st_uid != geteuid()) return "owned by another user";
  if (st.st_mode & (S_IWGRP | S_IWOTH)) return "writable by group or others";
  return NULL;
}

static uint64_t max_bytes_from_env(kf_ctx *ctx) {
  const char *s = getenv("KFUSE_CACHE_MAX_MB");
  double mb = DEFAULT_MAX_MB;
  if (s && *s) {
    char *end;
    double v = strtod(s, &end);
    if (*end || !(v > 0) || v > 1e9)
      core_log(ctx, KF_LOG_WARN, LOG_CACHE,
               "KFUSE_CACHE_MAX_MB='%s' is not a positive size; using %g", s, mb);
    else
      mb = v;
  }
  return (uint64_t)(mb * 1024 * 1024);
}

static void open_disk(struct cache_state *cs) {
  fault_from_env();
  cs->max_bytes = max_bytes_from_env(cs->ctx);
  const char *off = getenv("KFUSE_DISK_CACHE");
  if (off && strcmp(off, "0") == 0) {
    resolve_dir(cs->dir, sizeof cs->dir);
    core_log(cs->ctx, KF_LOG_INFO, LOG_CACHE, "disk cache off (KFUSE_DISK_CACHE=0)");
    return;
  }
  if (!resolve_dir(cs->dir, sizeof cs->dir)) {
    cs->dir[0] = 0;
    core_log(cs->ctx, KF_LOG_WARN, LOG_CACHE,
             "no cache folder (set KFUSE_CACHE_DIR, XDG_CACHE_HOME or HOME); disk cache off");
    return;
  }
  const char *why = check_dir(cs->dir);
  if (why) {
    core_log(cs->ctx, KF_LOG_WARN, LOG_CACHE, "cache folder %s refused (%s); disk cache off",
             cs->dir, why);
    return;
  }
  cs->disk_enabled = true;
}

bool cache_disk_ready(struct cache_state *cs) {
  pthread_mutex_lock(&cs->disk_lock);
  if (!cs->disk_checked) {
    open_disk(cs);
    cs->disk_checked = true;
  }
  bool on = cs->disk_enabled;
  pthread_mutex_unlock(&cs->disk_lock);
  return on;
}

static void entry_path(struct cache_state *cs, cache_key key, char *out, size_t size) {
  char hex[33];
  cache_key_hex(key, hex);
  snprintf(out, size, "%s/%s%s", cs->dir, hex, CACHE_FILE_SUFFIX);
}

/* ---- header -------------------------------------------------------------- */

static void put_u32(unsigned char *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static void put_u64(unsigned char *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static uint32_t get_u32(const unsigned char *p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; i--) v = v << 8 | p[i];
  return v;
}
static uint64_t get_u64(const unsigned char *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
  return v;
}

static void make_header(unsigned char h[HEADER_SIZE], cache_key key, const void *data,
                        size_t size) {
  memcpy(h, CACHE_FILE_MAGIC, 8);
  put_u32(h + 8, CACHE_FILE_VERSION);
  put_u32(h + 12, HEADER_SIZE);
  put_u64(h + 16, key.lo);
  put_u64(h + 24, key.hi);
  put_u64(h + 32, size);
  put_u64(h + 40, XXH3_64bits(data, size));
}

/* Why the header does not describe `key` in a file of file_size bytes. */
static const char *check_header(const unsigned char h[HEADER_SIZE], cache_key key,
                                uint64_t file_size) {
  if (memcmp(h, CACHE_FILE_MAGIC, 8) != 0) return "bad magic (not a kfuse cache entry)";
  if (get_u32(h + 8) != CACHE_FILE_VERSION || get_u32(h + 12) != HEADER_SIZE)
    return "another format version";
  if (get_u64(h + 16) != key.lo || get_u64(h + 24) != key.hi) return "wrong key";
  if (get_u64(h + 32) != file_size - HEADER_SIZE) return "truncated or oversized";
  return NULL;
}

/* ---- reading ------------------------------------------------------------- */

static bool read_all(int fd, void *buf, size_t size) {
  char *p = buf;
  while (size) {
    ssize_t n = read(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= (size_t)n;
  }
  return true;
}

/* Deletes a bad entry, unless a writer has meanwhile replaced it. */
static void drop_bad(struct cache_state *cs, const char *path, const struct stat *seen,
                     const char *why) {
  struct stat now;
  atomic_fetch_add(&cs->corrupt, 1);
  core_log(cs->ctx, KF_LOG_WARN, LOG_CACHE,
           "cache entry %s is bad (%s); deleted, treated as a miss", path, why);
  if (stat(path, &now) == 0 && now.st_ino == seen->st_ino && now.st_dev == seen->st_dev)
    unlink(path);
}

/* Reads and checks the payload of an open entry; NULL (with *why) if bad. */
static void *read_entry(int fd, const struct stat *st, cache_key key, size_t *size,
                        const char **why) {
  unsigned char h[HEADER_SIZE];
  *why = "truncated";
  if (st->st_size < HEADER_SIZE || !read_all(fd, h, HEADER_SIZE)) return NULL;
  if ((*why = check_header(h, key, (uint64_t)st->st_size))) return NULL;
  size_t n = (size_t)(st->st_size - HEADER_SIZE);
  void *data = malloc(n ? n : 1);
  *why = "out of memory";
  if (!data) return NULL;
  *why = "truncated";
  if (!read_all(fd, data, n)) {
    free(data);
    return NULL;
  }
  *why = "checksum mismatch";
  if (XXH3_64bits(data, n) != get_u64(h + 40)) {
    free(data);
    return NULL;
  }
  *size = n;
  return data;
}

bool cache_disk_get(struct cache_state *cs, cache_key key, void **data, size_t *size) {
  char path[PATH_MAX + 64];
  entry_path(cs, key, path, sizeof path);
  *data = NULL;
  *size = 0;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno != ENOENT) {
      atomic_fetch_add(&cs->disk_errors, 1);
      core_log(cs->ctx, KF_LOG_WARN, LOG_CACHE, "cannot read %s: %s", path, strerror(errno));
    }
    return false;
  }
  struct stat st = {0};
  const char *why = "cannot stat";
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
    *data = read_entry(fd, &st, key, size, &why);
  else
    why = "not a regular file";
  if (*data) futimens(fd, NULL); /* recently used: evicted last */
  close(fd);
  if (!*data && strcmp(why, "out of memory") != 0) drop_bad(cs, path, &st, why);
  return *data != NULL;
}

/* ---- writing ------------------------------------------------------------- */

static bool write_all(int fd, const void *buf, size_t size) {
  const char *p = buf;
  while (size) {
    if (fault(1)) return false;
    ssize_t n = write(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    if (n == 0) {
      errno = ENOSPC;
      return false;
    }
    p += n;
    size -= (size_t)n;
  }
  return true;
}

/* Writes the entry to a fresh temp file in the folder; its fd or -1. */
static int write_temp(struct cache_state *cs, cache_key key, const void *data, size_t size,
                      char *tmp, size_t tmpsize) {
  char hex[33];
  cache_key_hex(key, hex);
  snprintf(tmp, tmpsize, "%s/.tmp-%s-XXXXXX", cs->dir, hex);
  if (fault(0)) return -1;
  int fd = mkostemp(tmp, O_CLOEXEC);
  if (fd < 0) return -1;
  unsigned char h[HEADER_SIZE];
  make_header(h, key, data, size);
  if (write_all(fd, h, sizeof h) && write_all(fd, data, size) && fsync(fd) == 0) return fd;
  int saved = errno;
  close(fd);
  unlink(tmp);
  errno = saved;
  return -1;
}

static void write_failed(struct cache_state *cs, const char *what, int err) {
  atomic_fetch_add(&cs->disk_errors, 1);
  pthread_mutex_lock(&cs->disk_lock);
  kf_log_level level = cs->write_warned ? KF_LOG_DEBUG : KF_LOG_WARN;
  cs->write_warned = true;
  pthread_mutex_unlock(&cs->disk_lock);
  core_log(cs->ctx, level, LOG_CACHE, "cannot write cache entry %s: %s; going on without it", what,
           strerror(err));
}

static void evict(struct cache_state *cs, uint64_t added);

bool cache_disk_put(struct cache_state *cs, cache_key key, const void *data, size_t size) {
  char tmp[PATH_MAX + 64], path[PATH_MAX + 64];
  entry_path(cs, key, path, sizeof path);
  int fd = write_temp(cs, key, data, size, tmp, sizeof tmp);
  if (fd < 0) {
    write_failed(cs, path, errno);
    return false;
  }
  int err = close(fd) == 0 ? 0 : errno;
  if (!err && rename(tmp, path) != 0) err = errno;
  if (err) {
    unlink(tmp);
    write_failed(cs, path, err);
    return false;
  }
  evict(cs, size + HEADER_SIZE);
  return true;
}

/* ---- listing, eviction, clearing ------------------------------------------ */

typedef struct disk_file {
  char name[48];
  struct timespec mtime;
  uint64_t bytes;
} disk_file;

static bool is_entry_name(const char *name) {
  size_t n = strlen(name);
  if (n != 32 + strlen(CACHE_FILE_SUFFIX) || strcmp(name + 32, CACHE_FILE_SUFFIX) != 0)
    return false;
  return strspn(name, "0123456789abcdef") == 32;
}

/* Lists the entries (and removes temp files that a crashed writer left).
 * *out is malloc'd; returns the count, or -1. */
static int list_entries(struct cache_state *cs, disk_file **out, uint64_t *total) {
  DIR *d = opendir(cs->dir);
  *out = NULL;
  *total = 0;
  if (!d) return -1;
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
    if (n == cap) {
      cap = cap ? 2 * cap : 64;
      disk_file *grown = realloc(*out, (size_t)cap * sizeof **out);
      if (!grown) break;
      *out = grown;
    }
    disk_file *f = &(*out)[n++];
    memcpy(f->name, de->d_name, strlen(de->d_name) + 1); /* 36 chars: checked */
    f->mtime = st.st_mtim;
    f->bytes = (uint64_t)st.st_size;
    *total += f->bytes;
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

/* Removes oldest entries until the folder fits the bound. disk_lock held. */
static void evict_scan(struct cache_state *cs) {
  disk_file *files;
  uint64_t total;
  int n = list_entries(cs, &files, &total);
  if (n < 0) return;
  if (total > cs->max_bytes) {
    qsort(files, (size_t)n, sizeof *files, older_first);
    for (int i = 0; i < n && total > cs->max_bytes; i++) {
      char path[PATH_MAX + 64];
      snprintf(path, sizeof path, "%s/%s", cs->dir, files[i].name);
      if (unlink(path) == 0) atomic_fetch_add(&cs->evictions, 1);
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
 * bound, so a put costs no directory scan in the common case. */
static void evict(struct cache_state *cs, uint64_t added) {
  pthread_mutex_lock(&cs->disk_lock);
  cs->bytes_est += added;
  if (!cs->scanned || cs->bytes_est > cs->max_bytes) evict_scan(cs);
  pthread_mutex_unlock(&cs->disk_lock);
}

int cache_disk_clear(struct cache_state *cs) {
  disk_file *files;
  uint64_t total;
  pthread_mutex_lock(&cs->disk_lock);
  int n = list_entries(cs, &files, &total), removed = 0;
  for (int i = 0; i < n; i++) {
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/%s", cs->dir, files[i].name);
    if (unlink(path) == 0) removed++;
  }
  free(files);
  cs->bytes_est = 0;
  cs->scanned = false;
  pthread_mutex_unlock(&cs->disk_lock);
  return removed;
}

void cache_disk_usage(struct cache_state *cs, uint64_t *entries, uint64_t *bytes) {
  disk_file *files;
  pthread_mutex_lock(&cs->disk_lock);
  int n = list_entries(cs, &files, bytes);
  pthread_mutex_unlock(&cs->disk_lock);
  free(files);
  *entries = n < 0 ? 0 : (uint64_t)n;
}
