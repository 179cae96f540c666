/* cache_util.h - fixtures shared by the disk-cache suites (test_cache.c,
 * test_cache_faults.c): a fresh folder per test, a log hook that counts the
 * cache's warnings, distinct kernel keys and the path of a key's entry. */
#ifndef KFUSE_TESTS_CACHE_UTIL_H
#define KFUSE_TESTS_CACHE_UTIL_H

#include <ftw.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "check_main.h"
#include "runtime/cache.h"
#include "runtime/cache_state.h"

/* top: the mkdtemp folder; dir: the cache folder inside it (not created,
 * so the cache must create it). */
static char top[256], dir[300];
static _Atomic int warnings;
static char last_warning[2048];

static void count_log(void *user, kf_log_level level, const char *component, const char *msg) {
  (void)user;
  if (level <= KF_LOG_WARN && strcmp(component, "cache") == 0) {
    atomic_fetch_add(&warnings, 1);
    snprintf(last_warning, sizeof last_warning, "%s", msg);
  }
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  (void)st, (void)flag, (void)ftw;
  return remove(path);
}

/* A fresh folder named after the suite, the cache knobs reset. */
static void cache_fixture_setup(const char *suite) {
  snprintf(top, sizeof top, "/tmp/kfuse-test-%s-XXXXXX", suite);
  ck_assert_ptr_nonnull(mkdtemp(top));
  snprintf(dir, sizeof dir, "%s/c", top);
  kt_setenv("KFUSE_CACHE_DIR", dir, 1);
  kt_unsetenv("KFUSE_CACHE_MAX_MB");
  kt_unsetenv("KFUSE_CACHE_MEM_MAX_MB");
  kt_unsetenv("KFUSE_CACHE_FAULT");
  kt_unsetenv("KFUSE_DISK_CACHE");
  warnings = 0;
  last_warning[0] = 0;
}

static void cache_fixture_teardown(void) {
  chmod(dir, 0700);
  nftw(top, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static kf_ctx *new_ctx(void) {
  kf_ctx *ctx;
  ck_assert_int_eq(kf_ctx_create(&ctx), KF_OK);
  kf_ctx_set_log(ctx, count_log, NULL);
  return ctx;
}

/* The key of a distinct tiny kernel per n. */
static cache_key key_n(int n) {
  char src[64];
  snprintf(src, sizeof src, "__global__ void k%d() {}", n);
  return rt_cache_key_kernel(src, "--gpu-architecture=sm_90", "sm_90");
}

static void entry_path(cache_key key, char *out, size_t size) {
  char hex[33];
  rt_cache_key_hex(key, hex);
  snprintf(out, size, "%s/%s.kfc", dir, hex);
}

/* lstat: a dangling symbolic link or a FIFO under an entry's name exists. */
static bool exists(const char *path) {
  struct stat st;
  return lstat(path, &st) == 0;
}

#endif
