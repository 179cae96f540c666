/* cache_dir.c - the disk cache's folder (found, created, opened once and
 * checked before anything in it is trusted) and the cache's environment
 * knobs, each parsed strictly: a bad value is a warning and the default. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/cache.h"

#define DEFAULT_MAX_MB 1024.0

/* ---- knobs --------------------------------------------------------------- */

/* Digits with an optional fraction ("512", "1.5"): no sign, exponent, hex,
 * spaces or units, so that "1e-9" or "0x10" cannot mean something odd. */
static bool parse_mb(const char *s, double *out) {
  size_t digits = strspn(s, "0123456789");
  if (digits == 0 || digits > 12) return false;
  const char *p = s + digits;
  if (*p == '.') {
    size_t frac = strspn(p + 1, "0123456789");
    if (frac == 0 || frac > 6) return false;
    p += 1 + frac;
  }
  if (*p) return false;
  *out = strtod(s, NULL);
  return *out >= CACHE_MB_MIN && *out <= CACHE_MB_MAX;
}

uint64_t cache_env_mb(kf_ctx *ctx, const char *name, double def_mb) {
  const char *s = getenv(name);
  double mb = def_mb;
  if (s && *s && !parse_mb(s, &mb)) {
    mb = def_mb;
    core_log(ctx, KF_LOG_WARN, LOG_CACHE,
             "%s='%.64s' is not a size in MB from %.10g to %.10g (digits, optionally with a "
             "fraction: 512, 1.5); using %.10g",
             name, s, CACHE_MB_MIN, CACHE_MB_MAX, def_mb);
  }
  return (uint64_t)(mb * 1024 * 1024);
}

/* KFUSE_DISK_CACHE: 0 (off) or 1 (on, the default). */
static bool disk_cache_wanted(kf_ctx *ctx) {
  const char *s = getenv("KFUSE_DISK_CACHE");
  if (!s || !*s || strcmp(s, "1") == 0) return true;
  if (strcmp(s, "0") == 0) return false;
  core_log(ctx, KF_LOG_WARN, LOG_CACHE, "KFUSE_DISK_CACHE='%.64s' is not 0 or 1; using 1 (on)", s);
  return true;
}

/* KFUSE_CACHE_FAULT (tests): enospc or erofs. */
static void fault_from_env(kf_ctx *ctx) {
  const char *f = getenv("KFUSE_CACHE_FAULT");
  if (!f || !*f) return;
  if (strcmp(f, "enospc") == 0)
    cache_disk_inject_fault(1, ENOSPC);
  else if (strcmp(f, "erofs") == 0)
    cache_disk_inject_fault(0, EROFS);
  else
    core_log(ctx, KF_LOG_WARN, LOG_CACHE,
             "KFUSE_CACHE_FAULT='%.64s' is not enospc or erofs; no fault injected", f);
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

/* Opens the folder and checks what was opened, not the path, so that a
 * folder renamed or replaced after the check is never used: every later
 * access goes through the descriptor. Why it is refused, or NULL. */
static const char *open_dir(struct cache_state *cs, char *why, size_t size) {
  if (make_dirs(cs->dir) != 0) return strerror(errno);
  int fd = open(cs->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return errno == ENOTDIR ? "not a directory" : strerror(errno);
  struct stat st;
  const char *bad = NULL;
  if (fstat(fd, &st) != 0) {
    bad = strerror(errno);
  } else if (!S_ISDIR(st.st_mode)) {
    bad = "not a directory";
  } else if (st.st_uid != geteuid()) {
    snprintf(why, size, "owned by another user (uid %u; this process runs as uid %u)",
             (unsigned)st.st_uid, (unsigned)geteuid());
    bad = why;
  } else if (st.st_mode & (S_IWGRP | S_IWOTH)) {
    bad = "writable by group or others";
  }
  if (bad) {
    close(fd);
    return bad;
  }
  cs->dir_fd = fd;
  return NULL;
}

void cache_dir_open(struct cache_state *cs) {
  fault_from_env(cs->ctx);
  cs->max_bytes = cache_env_mb(cs->ctx, "KFUSE_CACHE_MAX_MB", DEFAULT_MAX_MB);
  bool wanted = disk_cache_wanted(cs->ctx);
  if (!resolve_dir(cs->dir, sizeof cs->dir)) {
    cs->dir[0] = 0;
    if (wanted)
      core_log(cs->ctx, KF_LOG_WARN, LOG_CACHE,
               "no cache folder (set KFUSE_CACHE_DIR, XDG_CACHE_HOME or HOME); disk cache off");
    return;
  }
  if (!wanted) {
    core_log(cs->ctx, KF_LOG_INFO, LOG_CACHE, "disk cache off (KFUSE_DISK_CACHE=0)");
    return;
  }
  char buf[160];
  const char *why = open_dir(cs, buf, sizeof buf);
  if (why) {
    core_log(cs->ctx, KF_LOG_WARN, LOG_CACHE, "cache folder %s refused (%s); disk cache off",
             cs->dir, why);
    return;
  }
  cs->disk_enabled = true;
}
