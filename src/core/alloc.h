/* alloc.h - the one allocator hook: every heap allocation kfuse itself makes
 * goes through these, so a test build can make the Nth one fail on purpose
 * (Lua's and SQLite's way of proving every failure path). libyaml and NVRTC
 * allocate on their own; their failures reach us through their APIs. */
#ifndef KF_CORE_ALLOC_H
#define KF_CORE_ALLOC_H

#include <stdbool.h>
#include <stddef.h>

/* Like malloc, calloc, realloc, strdup and strndup; NULL on failure (real
 * or injected). Memory from these is released with free() (or core_free).
 * Thread-safe. */
void *core_malloc(size_t n);
void *core_calloc(size_t count, size_t size);
void *core_realloc(void *p, size_t n);
char *core_strdup(const char *s);
char *core_strndup(const char *s, size_t n);
void core_free(void *p);

/* Test-only fault injection (not in kfuse.h; reached by tests that link the
 * static library). After core_alloc_fail(n, sticky), the n-th allocation
 * from now (1-based) fails, and with sticky every one after it too; n <= 0
 * turns injection off. The counter is atomic, so allocations from worker
 * threads count too (in whatever order they happen). */
void core_alloc_fail(long n, bool sticky);
/* Allocations made since the last core_alloc_fail (or since start). */
long core_alloc_count(void);
/* Whether an injected failure has happened since the last core_alloc_fail. */
bool core_alloc_failed(void);

#endif
