/* strbuf.c - the growing string of strbuf.h. */
#include "core/strbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void core_str_vprintf(core_str *b, const char *fmt, va_list ap) {
  if (b->oom) return;
  for (;;) {
    va_list copy;
    va_copy(copy, ap);
    int n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? b->cap - b->len : 0, fmt, copy);
    va_end(copy);
    if (n < 0) {
      b->oom = true;
      return;
    }
    if (b->s && b->len + (size_t)n < b->cap) {
      b->len += (size_t)n;
      return;
    }
    size_t cap = b->cap ? b->cap : 1024;
    while (cap <= b->len + (size_t)n) cap *= 2;
    char *p = realloc(b->s, cap);
    if (!p) {
      b->oom = true;
      return;
    }
    b->s = p;
    b->cap = cap;
  }
}

void core_str_printf(core_str *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  core_str_vprintf(b, fmt, ap);
  va_end(ap);
}

char *core_str_take(core_str *b) {
  char *s = b->oom ? NULL : b->s;
  if (b->oom) free(b->s);
  if (s == NULL && !b->oom) s = calloc(1, 1); /* nothing written: "" */
  b->s = NULL;
  b->len = b->cap = 0;
  b->oom = false;
  return s;
}
