/* test_cache.c - the kernel caches: keys, the memory table (waiting for
 * in-flight entries), the disk store and every fault it must survive:
 * corruption, truncation, wrong keys, foreign files, concurrent processes,
 * refused folders, read-only and full disks, the size bound. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cache_util.h"
#include "runtime/cache_disk.h"
#include "runtime/cache_mem.h"
#include "runtime/cache_state.h"

/* ---- fixtures ------------------------------------------------------------ */

static void setup(void) {
  cache_fixture_setup("cache");
  rt_cache_disk_inject_fault(0, 0);
  rt_cache_disk_inject_fault(1, 0);
}

static void teardown(void) {
  cache_fixture_teardown();
}

static struct cache_state *state(kf_ctx *ctx) {
  struct cache_state *cs = rt_cache_state_get(ctx);
  ck_assert_ptr_nonnull(cs);
  return cs;
}

static int count_files(const char *prefix) {
  char cmd[512];
  snprintf(cmd, sizeof cmd, "ls -A %s | grep -c '^%s' ", dir, prefix);
  FILE *p = popen(cmd, "r");
  int n = -1;
  if (p && fscanf(p, "%d", &n) != 1) n = -1;
  if (p) pclose(p);
  return n;
}

/* ---- keys ---------------------------------------------------------------- */

START_TEST(keys_cover_every_input) {
  cache_key a = rt_cache_key_kernel("src", "opts", "sm_90");
  ck_assert(rt_cache_key_eq(a, rt_cache_key_kernel("src", "opts", "sm_90")));
  ck_assert(!rt_cache_key_eq(a, rt_cache_key_kernel("src2", "opts", "sm_90")));
  ck_assert(!rt_cache_key_eq(a, rt_cache_key_kernel("src", "opts2", "sm_90")));
  ck_assert(!rt_cache_key_eq(a, rt_cache_key_kernel("src", "opts", "sm_80")));
  /* parts cannot run together */
  ck_assert(
      !rt_cache_key_eq(rt_cache_key_kernel("ab", "c", "x"), rt_cache_key_kernel("a", "bc", "x")));
  ck_assert(!rt_cache_key_eq(rt_cache_key_blob("d", "xy", 2), rt_cache_key_blob("d", "xz", 2)));
  ck_assert(!rt_cache_key_eq(rt_cache_key_blob("d1", "xy", 2), rt_cache_key_blob("d2", "xy", 2)));
  char hex[33];
  rt_cache_key_hex((cache_key){0x1, 0xabcdef}, hex);
  ck_assert_str_eq(hex, "0000000000abcdef0000000000000001");
}
END_TEST

/* ---- memory -------------------------------------------------------------- */

/* The memory cache holds at most KFUSE_CACHE_MEM_MAX_MB: publishing past it
 * drops the least recently used kernels (a hit counts as a use). */
START_TEST(memory_bound_evicts_least_recently_used) {
  kt_setenv("KFUSE_CACHE_MEM_MAX_MB", "1", 1);
  kf_ctx *ctx = new_ctx();
  struct cache_state *cs = state(ctx);
  size_t big = 400 << 10; /* three fit in 1 MiB only as two */
  char *blob = calloc(1, big);
  ck_assert_ptr_nonnull(blob);
  void *img;
  size_t size;
  for (int i = 1; i <= 2; i++) {
    ck_assert_int_eq(rt_cache_mem_acquire(cs, key_n(i), &img, &size), CACHE_MEM_RESERVED);
    rt_cache_mem_publish(cs, key_n(i), blob, big);
  }
  /* use key 1: key 2 becomes the least recently used */
  ck_assert_int_eq(rt_cache_mem_acquire(cs, key_n(1), &img, &size), CACHE_MEM_HIT);
  free(img);
  ck_assert_int_eq(rt_cache_mem_acquire(cs, key_n(3), &img, &size), CACHE_MEM_RESERVED);
  rt_cache_mem_publish(cs, key_n(3), blob, big);
  kf_cache_stats st;
  ck_assert_int_eq(kf_ctx_cache_stats(ctx, &st), KF_OK);
  ck_assert_uint_eq(st.mem_max_bytes, 1u << 20);
  ck_assert_uint_eq(st.mem_entries, 2);
  ck_assert_uint_eq(st.mem_bytes, 2 * big);
  ck_assert_uint_eq(st.mem_evictions, 1);
  ck_assert_int_eq(rt_cache_mem_acquire(cs, key_n(1), &img, &size), CACHE_MEM_HIT);
  free(img);
  ck_assert_int_eq(rt_cache_mem_acquire(cs, key_n(3), &img, &size), CACHE_MEM_HIT);
  free(img);
  ck_assert_int_eq(rt_cache_mem_acquire(cs, key_n(2), &img, &size), CACHE_MEM_RESERVED);
  rt_cache_mem_abandon(cs, key_n(2));
  /* one kernel larger than the bound is still kept (the newest never goes) */
  char *huge = calloc(1, 2u << 20);
  ck_assert_ptr_nonnull(huge);
  ck_assert_int_eq(rt_cache_mem_acquire(cs, key_n(4), &img, &size), CACHE_MEM_RESERVED);
  rt_cache_mem_publish(cs, key_n(4), huge, 2u << 20);
  ck_assert_int_eq(kf_ctx_cache_stats(ctx, &st), KF_OK);
  ck_assert_uint_eq(st.mem_entries, 1);
  ck_assert_int_eq(rt_cache_mem_acquire(cs, key_n(4), &img, &size), CACHE_MEM_HIT);
  free(img);
  rt_cache_mem_clear(cs);
  ck_assert_int_eq(kf_ctx_cache_stats(ctx, &st), KF_OK);
  ck_assert_uint_eq(st.mem_bytes, 0);
  free(huge);
  free(blob);
  kf_ctx_destroy(ctx);
  kt_unsetenv("KFUSE_CACHE_MEM_MAX_MB");
}
END_TEST

START_TEST(memory_reserve_publish_hit) {
  kf_ctx *ctx = new_ctx();
  struct cache_state *cs = state(ctx);
  void *img;
  size_t size;
  cache_key k = key_n(1);
  ck_assert_int_eq(rt_cache_mem_acquire(cs, k, &img, &size), CACHE_MEM_RESERVED);
  rt_cache_mem_publish(cs, k, "abcdef", 6);
  ck_assert_int_eq(rt_cache_mem_acquire(cs, k, &img, &size), CACHE_MEM_HIT);
  ck_assert_uint_eq(size, 6);
  ck_assert_int_eq(memcmp(img, "abcdef", 6), 0);
  free(img);
  /* an abandoned key can be reserved again */
  cache_key k2 = key_n(2);
  ck_assert_int_eq(rt_cache_mem_acquire(cs, k2, &img, &size), CACHE_MEM_RESERVED);
  rt_cache_mem_abandon(cs, k2);
  ck_assert_int_eq(rt_cache_mem_acquire(cs, k2, &img, &size), CACHE_MEM_RESERVED);
  rt_cache_mem_abandon(cs, k2);
  rt_cache_mem_clear(cs);
  ck_assert_int_eq(rt_cache_mem_acquire(cs, k, &img, &size), CACHE_MEM_RESERVED);
  rt_cache_mem_abandon(cs, k);
  kf_ctx_destroy(ctx);
}
END_TEST

static _Atomic int productions, hits;

static void *ask_same_key(void *arg) {
  struct cache_state *cs = arg;
  void *img;
  size_t size;
  cache_mem_result r = rt_cache_mem_acquire(cs, key_n(42), &img, &size);
  if (r == CACHE_MEM_RESERVED) {
    atomic_fetch_add(&productions, 1);
    usleep(50 * 1000); /* a slow compile: the others must wait, not redo it */
    rt_cache_mem_publish(cs, key_n(42), "image", 5);
  } else if (r == CACHE_MEM_HIT) {
    if (size == 5 && memcmp(img, "image", 5) == 0) atomic_fetch_add(&hits, 1);
    free(img);
  }
  return NULL;
}

START_TEST(memory_threads_wait_for_in_flight) {
  kf_ctx *ctx = new_ctx();
  struct cache_state *cs = state(ctx);
  productions = hits = 0;
  pthread_t t[16];
  for (int i = 0; i < 16; i++) pthread_create(&t[i], NULL, ask_same_key, cs);
  for (int i = 0; i < 16; i++) pthread_join(t[i], NULL);
  ck_assert_int_eq(productions, 1);
  ck_assert_int_eq(hits, 15);
  kf_ctx_destroy(ctx);
}
END_TEST

/* ---- disk: basics ------------------------------------------------------- */

START_TEST(disk_roundtrip_and_layout) {
  kf_ctx *ctx = new_ctx();
  struct cache_state *cs = state(ctx);
  ck_assert(rt_cache_disk_ready(cs));
  ck_assert_str_eq(kf_cache_dir(ctx), dir);
  struct stat st;
  ck_assert_int_eq(stat(dir, &st), 0);
  ck_assert_int_eq(st.st_mode & 0777, 0700);
  cache_key k = key_n(1);
  ck_assert(rt_cache_disk_put(cs, k, "payload!", 8));
  char path[512];
  entry_path(k, path, sizeof path);
  ck_assert_int_eq(stat(path, &st), 0);
  ck_assert_int_eq(st.st_size, 48 + 8);
  ck_assert_int_eq(st.st_mode & 0077, 0);
  void *data;
  size_t size;
  ck_assert(rt_cache_disk_get(cs, k, &data, &size));
  ck_assert_uint_eq(size, 8);
  ck_assert_int_eq(memcmp(data, "payload!", 8), 0);
  free(data);
  ck_assert(!rt_cache_disk_get(cs, key_n(2), &data, &size)); /* absent: a quiet miss */
  ck_assert_int_eq(warnings, 0);
  ck_assert_int_eq(count_files(".tmp-"), 0);
  kf_ctx_destroy(ctx);
}
END_TEST

START_TEST(blobs_for_other_modules) {
  kf_ctx *ctx = new_ctx();
  cache_key k = rt_cache_key_blob("occupancy-v1", "kernel+device", 13);
  void *data;
  size_t size;
  ck_assert(!rt_cache_blob_get(ctx, k, &data, &size));
  rt_cache_blob_put(ctx, k, "split", 5);
  kf_ctx *fresh = new_ctx();
  ck_assert(rt_cache_blob_get(fresh, k, &data, &size));
  ck_assert_uint_eq(size, 5);
  ck_assert_int_eq(memcmp(data, "split", 5), 0);
  free(data);
  kf_ctx_destroy(fresh);
  kf_ctx_destroy(ctx);
}
END_TEST

START_TEST(stats_and_clear) {
  kf_ctx *ctx = new_ctx();
  struct cache_state *cs = state(ctx);
  ck_assert(rt_cache_disk_ready(cs));
  for (int i = 0; i < 3; i++) ck_assert(rt_cache_disk_put(cs, key_n(i), "xyz", 3));
  kf_cache_stats s;
  ck_assert_int_eq(kf_ctx_cache_stats(ctx, &s), KF_OK);
  ck_assert(s.disk_enabled);
  ck_assert_uint_eq(s.disk_entries, 3);
  ck_assert_uint_eq(s.disk_bytes, 3 * 51);
  ck_assert_uint_eq(s.disk_max_bytes, 1024ull * 1024 * 1024);
  ck_assert_int_eq(kf_cache_clear(ctx), KF_OK);
  ck_assert_int_eq(kf_ctx_cache_stats(ctx, &s), KF_OK);
  ck_assert_uint_eq(s.disk_entries, 0);
  ck_assert_int_eq(kf_ctx_cache_stats(NULL, &s), KF_ERR_INVALID_ARG);
  kf_ctx_destroy(ctx);
}
END_TEST

/* ---- disk: bad entries ---------------------------------------------------- */

/* Puts key 1, damages its file with `damage`, and checks the read is a
 * deleted, counted, logged miss, and that a new put then reads back. */
static void check_bad_entry(void (*damage)(const char *path), const char *why) {
  kf_ctx *ctx = new_ctx();
  struct cache_state *cs = state(ctx);
  ck_assert(rt_cache_disk_ready(cs));
  cache_key k = key_n(1);
  char payload[1000];
  memset(payload, 'p', sizeof payload);
  ck_assert(rt_cache_disk_put(cs, k, payload, sizeof payload));
  char path[512];
  entry_path(k, path, sizeof path);
  damage(path);
  void *data = (void *)1;
  size_t size = 1;
  ck_assert(!rt_cache_disk_get(cs, k, &data, &size));
  ck_assert_ptr_null(data);
  ck_assert_msg(!exists(path), "bad entry not deleted");
  ck_assert_int_eq(atomic_load(&cs->corrupt), 1);
  ck_assert_int_eq(warnings, 1);
  ck_assert_msg(strstr(last_warning, why) != NULL, "warning: %s", last_warning);
  ck_assert(rt_cache_disk_put(cs, k, payload, sizeof payload));
  ck_assert(rt_cache_disk_get(cs, k, &data, &size));
  ck_assert_uint_eq(size, sizeof payload);
  free(data);
  kf_ctx_destroy(ctx);
}

static void patch(const char *path, long offset, const void *bytes, size_t n) {
  int fd = open(path, O_WRONLY);
  ck_assert_int_ge(fd, 0);
  ck_assert_int_eq(pwrite(fd, bytes, n, offset), (ssize_t)n);
  close(fd);
}

static void flip_payload(const char *path) {
  patch(path, 48 + 500, "q", 1);
}
static void cut_header(const char *path) {
  ck_assert_int_eq(truncate(path, 20), 0);
}
static void cut_payload(const char *path) {
  ck_assert_int_eq(truncate(path, 48 + 300), 0);
}
static void empty_file(const char *path) {
  ck_assert_int_eq(truncate(path, 0), 0);
}
static void bad_magic(const char *path) {
  patch(path, 0, "ELF!", 4);
}
static void other_version(const char *path) {
  patch(path, 8, "\x63\0\0\0", 4);
}
static void wrong_key(const char *path) {
  patch(path, 16, "\x01\x02\x03", 3);
}
static void foreign(const char *path) {
  FILE *f = fopen(path, "w");
  fputs("not a cache entry at all, but long enough to hold a header of 48 bytes...", f);
  fclose(f);
}
/* Another valid entry moved over this key's name. */
static void swapped(const char *path) {
  kf_ctx *ctx = new_ctx();
  struct cache_state *cs = state(ctx);
  ck_assert(rt_cache_disk_ready(cs));
  char payload[1000];
  memset(payload, 'p', sizeof payload);
  ck_assert(rt_cache_disk_put(cs, key_n(7), payload, sizeof payload));
  char other[512];
  entry_path(key_n(7), other, sizeof other);
  ck_assert_int_eq(rename(other, path), 0);
  kf_ctx_destroy(ctx);
}

START_TEST(bad_payload_checksum) {
  check_bad_entry(flip_payload, "checksum");
}
END_TEST
START_TEST(bad_truncated_header) {
  check_bad_entry(cut_header, "truncated");
}
END_TEST
START_TEST(bad_truncated_payload) {
  check_bad_entry(cut_payload, "truncated");
}
END_TEST
START_TEST(bad_empty_file) {
  check_bad_entry(empty_file, "truncated");
}
END_TEST
START_TEST(bad_magic_foreign) {
  check_bad_entry(bad_magic, "magic");
}
END_TEST
START_TEST(bad_format_version) {
  check_bad_entry(other_version, "version");
}
END_TEST
START_TEST(bad_wrong_key_field) {
  check_bad_entry(wrong_key, "wrong key");
}
END_TEST
START_TEST(bad_foreign_file) {
  check_bad_entry(foreign, "magic");
}
END_TEST
START_TEST(bad_swapped_entry) {
  check_bad_entry(swapped, "wrong key");
}
END_TEST

/* Every single-byte change and every truncation of an entry is caught. */
START_TEST(random_damage_always_detected) {
  kf_ctx *ctx = new_ctx();
  struct cache_state *cs = state(ctx);
  ck_assert(rt_cache_disk_ready(cs));
  cache_key k = key_n(5);
  char payload[300], path[512];
  for (size_t i = 0; i < sizeof payload; i++) payload[i] = (char)(i * 7);
  entry_path(k, path, sizeof path);
  srand(12345);
  for (int round = 0; round < 400; round++) {
    ck_assert(rt_cache_disk_put(cs, k, payload, sizeof payload));
    long total = 48 + (long)sizeof payload;
    if (round % 2) {
      ck_assert_int_eq(truncate(path, rand() % total), 0);
    } else {
      unsigned char flip = (unsigned char)(1 + rand() % 255);
      long at = rand() % total;
      int fd = open(path, O_RDWR);
      unsigned char b;
      ck_assert_int_eq(pread(fd, &b, 1, at), 1);
      b ^= flip;
      ck_assert_int_eq(pwrite(fd, &b, 1, at), 1);
      close(fd);
    }
    void *data;
    size_t size;
    ck_assert_msg(!rt_cache_disk_get(cs, k, &data, &size), "damage in round %d was not caught",
                  round);
    ck_assert(!exists(path));
  }
  ck_assert_int_eq(atomic_load(&cs->corrupt), 400);
  kf_ctx_destroy(ctx);
}
END_TEST

/* A directory is not an entry: an empty one is removed at the read (a
 * miss), a full one is left (its contents are not ours) and said so, and a
 * write cannot replace it (rename onto a directory fails) and leaves no
 * temp file. */
START_TEST(directory_in_place_of_entry) {
  kf_ctx *ctx = new_ctx();
  struct cache_state *cs = state(ctx);
  ck_assert(rt_cache_disk_ready(cs));
  char path[512], inner[600];
  entry_path(key_n(3), path, sizeof path);
  ck_assert_int_eq(mkdir(path, 0700), 0);
  void *data;
  size_t size;
  ck_assert(!rt_cache_disk_get(cs, key_n(3), &data, &size));
  ck_assert_msg(!exists(path), "an empty directory in place of an entry stayed");
  ck_assert_ptr_nonnull(strstr(last_warning, "a directory"));
  ck_assert_ptr_nonnull(strstr(last_warning, "deleted"));
  ck_assert_int_eq(mkdir(path, 0700), 0);
  snprintf(inner, sizeof inner, "%s/keep", path);
  fclose(fopen(inner, "w"));
  ck_assert(!rt_cache_disk_get(cs, key_n(3), &data, &size));
  ck_assert(exists(inner));
  ck_assert_msg(strstr(last_warning, "could not be deleted") != NULL, "warning: %s", last_warning);
  ck_assert_msg(strstr(last_warning, "deleted;") == NULL, "warning: %s", last_warning);
  ck_assert(!rt_cache_disk_put(cs, key_n(3), "x", 1)); /* rename onto a directory fails */
  ck_assert_int_eq(count_files(".tmp-"), 0);
  kf_ctx_destroy(ctx);
}
END_TEST

/* ---- disk: folders ------------------------------------------------------ */

static void expect_refused(const char *why) {
  kf_ctx *ctx = new_ctx();
  kf_cache_stats s;
  ck_assert_int_eq(kf_ctx_cache_stats(ctx, &s), KF_OK);
  ck_assert(!s.disk_enabled);
  ck_assert_int_eq(warnings, 1);
  ck_assert_msg(strstr(last_warning, why) != NULL, "warning: %s", last_warning);
  rt_cache_blob_put(ctx, key_n(1), "x", 1); /* a no-op, not a crash */
  kf_ctx_destroy(ctx);
}

START_TEST(folder_group_writable_refused) {
  ck_assert_int_eq(mkdir(dir, 0700), 0);
  ck_assert_int_eq(chmod(dir, 0777), 0);
  expect_refused("writable by group or others");
}
END_TEST

START_TEST(folder_of_another_user_refused) {
  ck_assert_int_eq(mkdir(dir, 0700), 0);
  if (geteuid() != 0 || chown(dir, 12345, 12345) != 0) return; /* needs root to test */
  expect_refused("owned by another user");
}
END_TEST

START_TEST(folder_is_a_regular_file) {
  FILE *f = fopen(dir, "w");
  fclose(f);
  expect_refused("not a directory");
}
END_TEST

START_TEST(folder_from_xdg_and_home) {
  const char *base = top;
  kt_unsetenv("KFUSE_CACHE_DIR");
  char xdg[300], want[320];
  snprintf(xdg, sizeof xdg, "%s/xdg", base);
  kt_setenv("XDG_CACHE_HOME", xdg, 1);
  snprintf(want, sizeof want, "%s/kfuse", xdg);
  kf_ctx *ctx = new_ctx();
  ck_assert_str_eq(kf_cache_dir(ctx), want);
  ck_assert(exists(want));
  kf_ctx_destroy(ctx);
  kt_unsetenv("XDG_CACHE_HOME");
  kt_setenv("HOME", base, 1);
  snprintf(want, sizeof want, "%s/.cache/kfuse", base);
  ctx = new_ctx();
  ck_assert_str_eq(kf_cache_dir(ctx), want);
  ck_assert(exists(want));
  kf_ctx_destroy(ctx);
}
END_TEST

START_TEST(disk_cache_switch_off) {
  kt_setenv("KFUSE_DISK_CACHE", "0", 1);
  kf_ctx *ctx = new_ctx();
  kf_cache_stats s;
  ck_assert_int_eq(kf_ctx_cache_stats(ctx, &s), KF_OK);
  ck_assert(!s.disk_enabled);
  ck_assert(!exists(dir));
  kf_ctx_destroy(ctx);
}
END_TEST

/* ---- disk: faults ------------------------------------------------------- */

static void expect_write_fault(int stage, int err, const char *text) {
  kf_ctx *ctx = new_ctx();
  struct cache_state *cs = state(ctx);
  ck_assert(rt_cache_disk_ready(cs));
  rt_cache_disk_inject_fault(stage, err);
  ck_assert(!rt_cache_disk_put(cs, key_n(1), "abc", 3));
  ck_assert(!rt_cache_disk_put(cs, key_n(2), "abc", 3));
  ck_assert_int_eq(atomic_load(&cs->disk_errors), 2);
  ck_assert_int_eq(warnings, 1); /* warned once, then quietly */
  ck_assert_msg(strstr(last_warning, text) != NULL, "warning: %s", last_warning);
  ck_assert_int_eq(count_files(""), 0); /* no temp file left behind */
  rt_cache_disk_inject_fault(stage, 0);
  ck_assert(rt_cache_disk_put(cs, key_n(1), "abc", 3));
  kf_ctx_destroy(ctx);
}

START_TEST(full_disk_survived) {
  expect_write_fault(1, ENOSPC, strerror(ENOSPC));
}
END_TEST
START_TEST(read_only_disk_survived) {
  expect_write_fault(0, EROFS, strerror(EROFS));
}
END_TEST

START_TEST(fault_from_environment) {
  kt_setenv("KFUSE_CACHE_FAULT", "enospc", 1);
  kf_ctx *ctx = new_ctx();
  struct cache_state *cs = state(ctx);
  ck_assert(rt_cache_disk_ready(cs));
  ck_assert(!rt_cache_disk_put(cs, key_n(1), "abc", 3));
  ck_assert_int_eq(count_files(""), 0);
  kf_ctx_destroy(ctx);
}
END_TEST

START_TEST(read_only_folder_by_mode) {
  /* Root ignores permission bits; elsewhere this is the real thing. */
  kf_ctx *ctx = new_ctx();
  struct cache_state *cs = state(ctx);
  ck_assert(rt_cache_disk_ready(cs));
  ck_assert_int_eq(chmod(dir, 0500), 0);
  bool ok = rt_cache_disk_put(cs, key_n(1), "abc", 3);
  if (geteuid() != 0) {
    ck_assert(!ok);
    ck_assert_int_eq(atomic_load(&cs->disk_errors), 1);
  }
  chmod(dir, 0700);
  kf_ctx_destroy(ctx);
}
END_TEST

/* ---- disk: size bound ---------------------------------------------------- */

static void set_mtime(cache_key k, time_t when) {
  char path[512];
  entry_path(k, path, sizeof path);
  struct timespec ts[2] = {{when, 0}, {when, 0}};
  ck_assert_int_eq(utimensat(AT_FDCWD, path, ts, 0), 0);
}

START_TEST(eviction_oldest_first) {
  kt_setenv("KFUSE_CACHE_MAX_MB", "1", 1);
  kf_ctx *ctx = new_ctx();
  struct cache_state *cs = state(ctx);
  ck_assert(rt_cache_disk_ready(cs));
  size_t n = 400 * 1024;
  char *payload = calloc(1, n);
  time_t t = time(NULL) - 1000;
  ck_assert(rt_cache_disk_put(cs, key_n(0), payload, n));
  set_mtime(key_n(0), t + 2); /* newer than key 1, though written first */
  ck_assert(rt_cache_disk_put(cs, key_n(1), payload, n));
  set_mtime(key_n(1), t + 1);
  ck_assert_int_eq(atomic_load(&cs->evictions), 0);
  ck_assert(rt_cache_disk_put(cs, key_n(2), payload, n)); /* 1.2 MB > 1 MB */
  ck_assert_int_eq(atomic_load(&cs->evictions), 1);
  char path[512];
  entry_path(key_n(1), path, sizeof path);
  ck_assert_msg(!exists(path), "the oldest entry survived");
  entry_path(key_n(0), path, sizeof path);
  ck_assert(exists(path));
  kf_cache_stats s;
  kf_ctx_cache_stats(ctx, &s);
  ck_assert_uint_le(s.disk_bytes, 1024 * 1024);
  ck_assert_uint_eq(s.evictions, 1);
  free(payload);
  kf_ctx_destroy(ctx);
}
END_TEST

START_TEST(eviction_spares_recently_read) {
  kt_setenv("KFUSE_CACHE_MAX_MB", "1", 1);
  kf_ctx *ctx = new_ctx();
  struct cache_state *cs = state(ctx);
  ck_assert(rt_cache_disk_ready(cs));
  size_t n = 400 * 1024;
  char *payload = calloc(1, n);
  time_t t = time(NULL) - 1000;
  ck_assert(rt_cache_disk_put(cs, key_n(0), payload, n));
  set_mtime(key_n(0), t);
  ck_assert(rt_cache_disk_put(cs, key_n(1), payload, n));
  set_mtime(key_n(1), t + 1);
  void *data;
  size_t size;
  ck_assert(rt_cache_disk_get(cs, key_n(0), &data, &size)); /* key 0 is now the newest */
  free(data);
  ck_assert(rt_cache_disk_put(cs, key_n(2), payload, n));
  char path[512];
  entry_path(key_n(1), path, sizeof path);
  ck_assert_msg(!exists(path), "the least recently used entry survived");
  entry_path(key_n(0), path, sizeof path);
  ck_assert_msg(exists(path), "a recently read entry was evicted");
  free(payload);
  kf_ctx_destroy(ctx);
}
END_TEST

START_TEST(stale_temp_files_removed) {
  ck_assert_int_eq(mkdir(dir, 0700), 0);
  char stale[512], fresh[512];
  snprintf(stale, sizeof stale, "%s/.tmp-dead-AAAAAA", dir);
  snprintf(fresh, sizeof fresh, "%s/.tmp-live-BBBBBB", dir);
  fclose(fopen(stale, "w"));
  fclose(fopen(fresh, "w"));
  struct timespec old[2] = {{time(NULL) - 3600, 0}, {time(NULL) - 3600, 0}};
  ck_assert_int_eq(utimensat(AT_FDCWD, stale, old, 0), 0);
  kf_ctx *ctx = new_ctx();
  struct cache_state *cs = state(ctx);
  ck_assert(rt_cache_disk_ready(cs));
  ck_assert(rt_cache_disk_put(cs, key_n(1), "x", 1)); /* the first write measures the folder */
  ck_assert_msg(!exists(stale), "a crashed writer's temp file was kept");
  ck_assert_msg(exists(fresh), "a live writer's temp file was removed");
  kf_ctx_destroy(ctx);
}
END_TEST

START_TEST(bad_size_bound_uses_default) {
  kt_setenv("KFUSE_CACHE_MAX_MB", "lots", 1);
  kf_ctx *ctx = new_ctx();
  kf_cache_stats s;
  kf_ctx_cache_stats(ctx, &s);
  ck_assert_uint_eq(s.disk_max_bytes, 1024ull * 1024 * 1024);
  ck_assert_int_eq(warnings, 1);
  kf_ctx_destroy(ctx);
}
END_TEST

/* ---- several processes at once ------------------------------------------ */

/* Each child writes a shared key and keys of its own, reading as it goes;
 * exits non-zero if it ever read something wrong. */
static int child_work(int id) {
  kf_ctx *ctx;
  if (kf_ctx_create(&ctx) != KF_OK) return 2;
  struct cache_state *cs = rt_cache_state_get(ctx);
  if (!rt_cache_disk_ready(cs)) return 3;
  char payload[20000];
  for (int round = 0; round < 30; round++) {
    memset(payload, 's', sizeof payload);
    rt_cache_disk_put(cs, key_n(1000), payload, sizeof payload);
    memset(payload, 'a' + id, sizeof payload);
    rt_cache_disk_put(cs, key_n(id * 100 + round % 5), payload, sizeof payload - (size_t)id);
    void *data;
    size_t size;
    if (rt_cache_disk_get(cs, key_n(1000), &data, &size)) {
      if (size != sizeof payload || ((char *)data)[size - 1] != 's') return 4;
      free(data);
    }
  }
  int bad = (int)atomic_load(&cs->corrupt);
  kf_ctx_destroy(ctx);
  return bad ? 5 : 0;
}

START_TEST(concurrent_processes_stay_consistent) {
  enum { N = 8 };
  pid_t pids[N];
  for (int i = 0; i < N; i++) {
    pids[i] = fork();
    ck_assert_int_ge(pids[i], 0);
    if (pids[i] == 0) _exit(child_work(i));
  }
  for (int i = 0; i < N; i++) {
    int status;
    ck_assert_int_eq(waitpid(pids[i], &status, 0), pids[i]);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child %d: status %d", i, status);
  }
  kf_ctx *ctx = new_ctx();
  struct cache_state *cs = state(ctx);
  ck_assert(rt_cache_disk_ready(cs));
  ck_assert_int_eq(count_files(".tmp-"), 0);
  ck_assert_int_eq(count_files(""), 1 + N * 5);
  void *data;
  size_t size;
  for (int i = 0; i < N; i++)
    for (int r = 0; r < 5; r++) {
      ck_assert(rt_cache_disk_get(cs, key_n(i * 100 + r), &data, &size));
      ck_assert_uint_eq(size, 20000 - (size_t)i);
      ck_assert_int_eq(((char *)data)[0], 'a' + i);
      free(data);
    }
  ck_assert(rt_cache_disk_get(cs, key_n(1000), &data, &size));
  free(data);
  ck_assert_int_eq(atomic_load(&cs->corrupt), 0);
  ck_assert_int_eq(warnings, 0);
  kf_ctx_destroy(ctx);
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("cache");
  TCase *tc = tcase_create("cache");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, keys_cover_every_input);
  tcase_add_test(tc, memory_reserve_publish_hit);
  tcase_add_test(tc, memory_bound_evicts_least_recently_used);
  tcase_add_test(tc, memory_threads_wait_for_in_flight);
  tcase_add_test(tc, disk_roundtrip_and_layout);
  tcase_add_test(tc, blobs_for_other_modules);
  tcase_add_test(tc, stats_and_clear);
  tcase_add_test(tc, bad_payload_checksum);
  tcase_add_test(tc, bad_truncated_header);
  tcase_add_test(tc, bad_truncated_payload);
  tcase_add_test(tc, bad_empty_file);
  tcase_add_test(tc, bad_magic_foreign);
  tcase_add_test(tc, bad_format_version);
  tcase_add_test(tc, bad_wrong_key_field);
  tcase_add_test(tc, bad_foreign_file);
  tcase_add_test(tc, bad_swapped_entry);
  tcase_add_test(tc, random_damage_always_detected);
  tcase_add_test(tc, directory_in_place_of_entry);
  tcase_add_test(tc, folder_group_writable_refused);
  tcase_add_test(tc, folder_of_another_user_refused);
  tcase_add_test(tc, folder_is_a_regular_file);
  tcase_add_test(tc, folder_from_xdg_and_home);
  tcase_add_test(tc, disk_cache_switch_off);
  tcase_add_test(tc, full_disk_survived);
  tcase_add_test(tc, read_only_disk_survived);
  tcase_add_test(tc, fault_from_environment);
  tcase_add_test(tc, read_only_folder_by_mode);
  tcase_add_test(tc, eviction_oldest_first);
  tcase_add_test(tc, eviction_spares_recently_read);
  tcase_add_test(tc, stale_temp_files_removed);
  tcase_add_test(tc, bad_size_bound_uses_default);
  tcase_add_test(tc, concurrent_processes_stay_consistent);
  suite_add_tcase(s, tc);
  return s;
}
