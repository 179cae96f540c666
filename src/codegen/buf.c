/* buf.c - the growable strings that generated source is written into. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/cg_internal.h"

static bool grow(cg_buf *b, size_t need) {
  if (b->oom) return false;
  if (b->len + need + 1 <= b->cap) return true;
  size_t cap = b->cap ? b->cap : 1024;
  while (cap < b->len + need + 1) cap *= 2;
  char *s = realloc(b->s, cap);
  if (!s) {
    b->oom = true;
    return false;
  }
  b->s = s;
  b->cap = cap;
  return true;
}

void cg_putn(cg_buf *b, const char *text, size_t n) {
  if (!grow(b, n)) return;
  memcpy(b->s + b->len, text, n);
  b->len += n;
  b->s[b->len] = 0;
}

void cg_puts(cg_buf *b, const char *text) { cg_putn(b, text, strlen(text)); }

/* Formats into the free space first: a second pass (after growing) only
 * when it did not fit. Source generation is mostly small printfs, and
 * measuring each one first doubled their cost (issue 8, warm start). */
void cg_vprintf(cg_buf *b, const char *fmt, va_list ap) {
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

void cg_printf(cg_buf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  cg_vprintf(b, fmt, ap);
  va_end(ap);
}

void cg_buf_free(cg_buf *b) {
  free(b->s);
  memset(b, 0, sizeof *b);
}

char *cg_buf_take(cg_buf *b) {
  if (b->oom) {
    cg_buf_free(b);
    return NULL;
  }
  char *s = b->s ? b->s : strdup("");
  memset(b, 0, sizeof *b);
  return s;
}

int64_t cg_min64(int64_t a, int64_t b) { return a < b ? a : b; }
int64_t cg_ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
