/* strbuf.c - the growing string of strbuf.h. */
#include "core/strbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"

static bool grow(core_str *b, size_t need) {
  if (b->oom) return false;
  if (b->len + need + 1 <= b->cap) return true;
  size_t cap = b->cap ? b->cap : 1024;
  while (cap < b->len + need + 1) cap *= 2;
  char *s = core_realloc(b->s, cap);
  if (!s) {
    b->oom = true;
    return false;
  }
  b->s = s;
  b->cap = cap;
  return true;
}

void core_str_putn(core_str *b, const char *text, size_t n) {
  if (!text) { /* what an upstream allocation failure left: keep it sticky */
    b->oom = true;
    return;
  }
  if (!grow(b, n)) return;
  memcpy(b->s + b->len, text, n);
  b->len += n;
  b->s[b->len] = 0;
}

void core_str_puts(core_str *b, const char *text) {
  core_str_putn(b, text, text ? strlen(text) : 0);
}

/* Formats into the free space first: a second pass (after growing) only
 * when it did not fit. Source generation is mostly small printfs, and
 * measuring each one first doubled their cost (issue 8, warm start). */
void core_str_vprintf(core_str *b, const char *fmt, va_list ap) {
  if (b->oom || !grow(b, 0)) return;
  va_list ap2;
  va_copy(ap2, ap);
  size_t room = b->cap - b->len;
  int n = vsnprintf(b->s + b->len, room, fmt, ap2);
  va_end(ap2);
  if (n < 0) {
    b->s[b->len] = 0;
    return;
  }
  if ((size_t)n < room) {
    b->len += (size_t)n;
    return;
  }
  b->s[b->len] = 0; /* the truncated attempt is not kept */
  if (!grow(b, (size_t)n)) return;
  vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
  b->len += (size_t)n;
}

void core_str_printf(core_str *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  core_str_vprintf(b, fmt, ap);
  va_end(ap);
}

const char *core_str_use(core_str *into, const core_str *from) {
  if (from->oom) {
    into->oom = true;
    return "";
  }
  return from->s ? from->s : "";
}

void core_str_free(core_str *b) {
  free(b->s);
  memset(b, 0, sizeof *b);
}

char *core_str_take(core_str *b) {
  if (b->oom) {
    core_str_free(b);
    return NULL;
  }
  char *s = b->s ? b->s : core_strdup("");
  memset(b, 0, sizeof *b);
  return s;
}
