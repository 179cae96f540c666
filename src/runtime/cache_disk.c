/* cache_disk.c - the on-disk cache's entries: one checksummed file per key,
 * written by temp file + fsync + rename, opened without following links or
 * blocking, and checked before use. Every failure here is a logged miss or
 * a skipped write, never a failed compile. */
#include "runtime/cache_disk.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>

#include "core/alloc.h"
#include "runtime/cache.h"
#include "runtime/cache_dir.h"
#include "runtime/cache_scan.h"
#include "runtime/cache_state.h"

#define HEADER_SIZE CACHE_HEADER_SIZE

/* ---- fault injection (tests) -------------------------------------------- */

static _Atomic int fault_errno[2]; /* [0] creating, [1] writing a temp file */

void rt_cache_disk_inject_fault(int stage, int err) {
  if (stage == 0 || stage == 1) atomic_store(&fault_errno[stage], err);
}

static bool fault(int stage) {
  int err = atomic_load(&fault_errno[stage]);
  if (err) errno = err;
  return err != 0;
}

bool rt_cache_disk_ready(struct cache_state *cs) {
  pthread_mutex_lock(&cs->disk_lock);
  if (!cs->disk_checked) {
    rt_cache_dir_open(cs);
    cs->disk_checked = true;
  }
  bool on = cs->disk_enabled;
  pthread_mutex_unlock(&cs->disk_lock);
  return on;
}

/* An entry's file name inside the folder. */
static void entry_name(cache_key key, char out[48]) {
  char hex[33];
  rt_cache_key_hex(key, hex);
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
  void *data = core_malloc(n ? n : 1);
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
  } else {
    int err = errno;
    if (fstatat(cs->dir_fd, name, st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG(st->st_mode))
      return -1; /* a link (ELOOP), a socket (ENXIO), ...: the caller refuses it */
    errno = err;
  }
  memset(st, 0, sizeof *st);
  atomic_fetch_add(&cs->disk_errors, 1);
  core_log(cs->ctx, KF_LOG_WARN, LOG_CACHE, "cannot read %s/%s: %s", cs->dir, name,
           strerror(errno));
  return -1;
}

bool rt_cache_disk_get(struct cache_state *cs, cache_key key, void **data, size_t *size) {
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
  rt_cache_key_hex(key, hex);
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

bool rt_cache_disk_put(struct cache_state *cs, cache_key key, const void *data, size_t size) {
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
  rt_cache_disk_evict(cs, size + HEADER_SIZE);
  return true;
}
