/* cache_dir.c - the disk cache's folder (found, created, opened once and
 * checked before anything in it is trusted), from the cache's knobs
 * (core/knobs.def, which parses them strictly). */
#include "runtime/cache_dir.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/cache.h"
#include "runtime/cache_disk.h"

/* ---- knobs (core/knobs.def: parsed strictly there, warned about once) ---- */

uint64_t rt_cache_mb_bytes(double mb) {
  return (uint64_t)(mb * 1024 * 1024);
}

/* KFUSE_CACHE_FAULT (tests): enospc or erofs. */
static void fault_from_knob(const core_knobs *k) {
  if (k->cache_fault == 1)
    rt_cache_disk_inject_fault(1, ENOSPC);
  else if (k->cache_fault == 2)
    rt_cache_disk_inject_fault(0, EROFS);
}

/* ---- the folder ---------------------------------------------------------- */

static bool resolve_dir(const core_knobs *k, char *out, size_t size) {
  if (k->cache_dir) return snprintf(out, size, "%s", k->cache_dir) < (int)size;
  const char *d = k->xdg_cache_home;
  if (d && d[0] == '/') return snprintf(out, size, "%s/kfuse", d) < (int)size;
  if (k->home) return snprintf(out, size, "%s/.cache/kfuse", k->home) < (int)size;
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

void rt_cache_dir_open(struct cache_state *cs) {
  const core_knobs *k = core_knobs_get(cs->ctx);
  fault_from_knob(k);
  cs->max_bytes = rt_cache_mb_bytes(k->cache_max_mb);
  bool wanted = k->disk_cache;
  if (!resolve_dir(k, cs->dir, sizeof cs->dir)) {
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
