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

bool cache_disk_ready(struct cache_state *cs) {
  pthread_mutex_lock(&cs->disk_lock);
  if (!cs->disk_checked) {
    cache_dir_open(cs);
    cs->disk_checked = true;
  }
  bool on = cs->disk_enabled;
  pthread_mutex_unlock(&cs->disk_lock);
  return on;
}

/* An entry's file name inside the folder. */
static void entry_name(cache_key key, char out[48]) {
  char hex[33];
  cache_key_hex(key, hex);
  snprintf(out, 48, "%s%s", hex, CACHE_FILE_SUFFIX);
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

static const char *file_kind(mode_t mode) {
  if (S_ISLNK(mode)) return "a symbolic link";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  return "not a regular file";
}

/* Removes name (a directory only if empty) unless it is no longer the file
 * `seen` (a writer renamed a fresh entry in meanwhile). 0, or the errno. */
static int remove_same(int dir_fd, const char *name, const struct stat *seen) {
  struct stat now;
  if (fstatat(dir_fd, name, &now, AT_SYMLINK_NOFOLLOW) != 0) return errno == ENOENT ? 0 : errno;
  if (now.st_ino != seen->st_ino || now.st_dev != seen->st_dev) return EAGAIN;
  int flags = S_ISDIR(now.st_mode) ? AT_REMOVEDIR : 0;
  return unlinkat(dir_fd, name, flags) == 0 || errno == ENOENT ? 0 : errno;
}

/* A refused entry: counted, removed, logged, a miss. */
static void refuse(struct cache_state *cs, const char *name, const struct stat *seen,
                   const char *why) {
  atomic_fetch_add(&cs->corrupt, 1);
  int err = remove_same(cs->dir_fd, name, seen);
  const char *what = err == 0        ? "deleted"
                     : err == EAGAIN ? "left for the writer that replaced it"
                                     : "could not be deleted";
  core_log(cs->ctx, KF_LOG_WARN, LOG_CACHE,
           "cache entry %s/%s is bad (%s); %s%s%s, treated as a miss", cs->dir, name, why, what,
           err && err != EAGAIN ? ": " : "", err && err != EAGAIN ? strerror(err) : "");
}

/* Why an open entry may not be read, or NULL. */
static const char *check_file(const struct stat *st, char *buf, size_t size) {
  if (!S_ISREG(st->st_mode)) return file_kind(st->st_mode);
  if (st->st_uid != geteuid()) {
    snprintf(buf, size, "owned by uid %u, not by this process's uid %u", (unsigned)st->st_uid,
             (unsigned)geteuid());
    return buf;
  }
  if ((uint64_t)st->st_size > CACHE_ENTRY_MAX_BYTES) return "larger than any entry (256 MB)";
  if (st->st_size < HEADER_SIZE) return "truncated";
  return NULL;
}

/* Reads and checks the payload of an open entry; NULL (with *why) if bad. */
static void *read_entry(int fd, const struct stat *st, cache_key key, size_t *size,
                        const char **why) {
  unsigned char h[HEADER_SIZE];
  *why = "truncated";
  if (!read_all(fd, h, HEADER_SIZE)) return NULL;
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

/* Opens an entry without following a link or blocking on a FIFO (a FIFO
 * opens at once with O_NONBLOCK; fstat then tells it from a file). -1 with
 * *st filled (st_mode 0: nothing there, or a read error logged) when it
 * cannot be opened. */
static int open_entry(struct cache_state *cs, const char *name, struct stat *st) {
  int fd = openat(cs->dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  memset(st, 0, sizeof *st);
  if (fd >= 0) {
    if (fstat(fd, st) == 0) return fd;
    int err = errno;
    close(fd);
    errno = err;
  } else if (errno == ENOENT) {
    return -1;
  } else if (fstatat(cs->dir_fd, name, st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG(st->st_mode)) {
    return -1; /* a link (ELOOP), a socket (ENXIO), ...: the caller refuses it */
  }
  memset(st, 0, sizeof *st);
  atomic_fetch_add(&cs->disk_errors, 1);
  core_log(cs->ctx, KF_LOG_WARN, LOG_CACHE, "cannot read %s/%s: %s", cs->dir, name,
           strerror(errno));
  return -1;
}

bool cache_disk_get(struct cache_state *cs, cache_key key, void **data, size_t *size) {
  char name[48], buf[96];
  entry_name(key, name);
  *data = NULL;
  *size = 0;
  struct stat st;
  int fd = open_entry(cs, name, &st);
  if (fd < 0) {
    if (st.st_mode) refuse(cs, name, &st, file_kind(st.st_mode));
    return false;
  }
  const char *why = check_file(&st, buf, sizeof buf);
  if (!why) *data = read_entry(fd, &st, key, size, &why);
  if (*data) futimens(fd, NULL); /* recently used: evicted last (best effort) */
  close(fd);
  if (!*data && strcmp(why, "out of memory") != 0) refuse(cs, name, &st, why);
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

/* Creates a fresh temp file in the folder: O_EXCL (never an existing file,
 * never through a link), mode 0600. Its fd, or -1. */
static int create_temp(struct cache_state *cs, cache_key key, char tmp[80]) {
  static _Atomic uint64_t counter;
  char hex[33];
  cache_key_hex(key, hex);
  for (int attempt = 0; attempt < 100; attempt++) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t seed[4] = {(uint64_t)getpid(), atomic_fetch_add(&counter, 1), (uint64_t)ts.tv_sec,
                        (uint64_t)ts.tv_nsec};
    snprintf(tmp, 80, ".tmp-%s-%012llx", hex,
             (unsigned long long)(XXH3_64bits(seed, sizeof seed) & 0xffffffffffffull));
    int fd = openat(cs->dir_fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  return -1;
}

/* Writes the entry to a fresh temp file in the folder; its fd or -1. */
static int write_temp(struct cache_state *cs, cache_key key, const void *data, size_t size,
                      char tmp[80]) {
  if (fault(0)) return -1;
  if ((uint64_t)size > CACHE_ENTRY_MAX_BYTES - HEADER_SIZE) {
    errno = EFBIG;
    return -1;
  }
  int fd = create_temp(cs, key, tmp);
  if (fd < 0) return -1;
  unsigned char h[HEADER_SIZE];
  make_header(h, key, data, size);
  if (write_all(fd, h, sizeof h) && write_all(fd, data, size) && fsync(fd) == 0) return fd;
  int saved = errno;
  close(fd);
  unlinkat(cs->dir_fd, tmp, 0);
  errno = saved;
  return -1;
}

static void write_failed(struct cache_state *cs, const char *name, int err) {
  atomic_fetch_add(&cs->disk_errors, 1);
  pthread_mutex_lock(&cs->disk_lock);
  kf_log_level level = cs->write_warned ? KF_LOG_DEBUG : KF_LOG_WARN;
  cs->write_warned = true;
  pthread_mutex_unlock(&cs->disk_lock);
  core_log(cs->ctx, level, LOG_CACHE, "cannot write cache entry %s/%s: %s; going on without it",
           cs->dir, name, strerror(err));
}

static void evict(struct cache_state *cs, uint64_t added);

bool cache_disk_put(struct cache_state *cs, cache_key key, const void *data, size_t size) {
  char tmp[80], name[48];
  entry_name(key, name);
  int fd = write_temp(cs, key, data, size, tmp);
  if (fd < 0) {
    write_failed(cs, name, errno);
    return false;
  }
  int err = close(fd) == 0 ? 0 : errno;
  /* rename within the folder: readers see the old entry or the new one */
  if (!err && renameat(cs->dir_fd, tmp, cs->dir_fd, name) != 0) err = errno;
  if (err) {
    unlinkat(cs->dir_fd, tmp, 0);
    write_failed(cs, name, err);
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
    disk_file *grown = realloc(*out, (size_t)ncap * sizeof **out);
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
  if (total > cs->max_bytes) {
    qsort(files, (size_t)n, sizeof *files, older_first);
    for (int i = 0; i < n && total > cs->max_bytes; i++) {
      if (!files[i].regular) continue;
      if (now - files[i].mtime.tv_sec < CACHE_FRESH_SECONDS) {
        /* the rest are fresher: wait for the oldest of them to age */
        cs->rescan_at = (int64_t)files[i].mtime.tv_sec + CACHE_FRESH_SECONDS;
        break;
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
static void evict(struct cache_state *cs, uint64_t added) {
  pthread_mutex_lock(&cs->disk_lock);
  cs->bytes_est += added;
  if (!cs->scanned || (cs->bytes_est > cs->max_bytes && (int64_t)time(NULL) >= cs->rescan_at))
    evict_scan(cs);
  pthread_mutex_unlock(&cs->disk_lock);
}

bool cache_disk_clear(struct cache_state *cs, uint64_t *removed, uint64_t *failed,
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

void cache_disk_usage(struct cache_state *cs, uint64_t *entries, uint64_t *bytes) {
  disk_file *files;
  pthread_mutex_lock(&cs->disk_lock);
  int n = list_entries(cs, &files, bytes);
  pthread_mutex_unlock(&cs->disk_lock);
  uint64_t regular = 0;
  for (int i = 0; i < n; i++) regular += files[i].regular;
  free(files);
  *entries = regular;
}
