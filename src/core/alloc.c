/* alloc.c - the allocator hook of alloc.h and its test-only fault injector. */
#include "core/alloc.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

static atomic_long count;   /* allocations since the last core_alloc_fail */
static atomic_long fail_at; /* 1-based index of the first failure; 0: off */
static atomic_bool sticky_fail, failed;

void core_alloc_fail(long n, bool sticky) {
  atomic_store(&fail_at, 0);
  atomic_store(&count, 0);
  atomic_store(&failed, false);
  atomic_store(&sticky_fail, sticky);
  atomic_store(&fail_at, n > 0 ? n : 0);
}

long core_alloc_count(void) {
  return atomic_load(&count);
}

bool core_alloc_failed(void) {
  return atomic_load(&failed);
}

/* Counts one allocation; true when it is to fail. */
static bool inject(void) {
  long i = atomic_fetch_add(&count, 1) + 1;
  long at = atomic_load(&fail_at);
  if (at <= 0 || i < at || (i > at && !atomic_load(&sticky_fail))) return false;
  atomic_store(&failed, true);
  return true;
}

void *core_malloc(size_t n) {
  return inject() ? NULL : malloc(n);
}

void *core_calloc(size_t count_, size_t size) {
  return inject() ? NULL : calloc(count_, size);
}

void *core_realloc(void *p, size_t n) {
  return inject() ? NULL : realloc(p, n);
}

char *core_strdup(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = core_malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

char *core_strndup(const char *s, size_t n) {
  size_t len = strnlen(s, n);
  char *d = core_malloc(len + 1);
  if (!d) return NULL;
  memcpy(d, s, len);
  d[len] = 0;
  return d;
}

void core_free(void *p) {
  free(p);
}
