/* strbuf.h - a growing, printf-fed string for every text the library
 * renders (dumps, YAML, plans, generated CUDA C); an allocation failure
 * latches `oom` and later writes do nothing, so callers check once at the
 * end. The string stays NUL-terminated once anything was written. */
#ifndef KF_CORE_STRBUF_H
#define KF_CORE_STRBUF_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct core_str {
  char *s; /* NUL-terminated once anything was written; NULL before */
  size_t len, cap;
  bool oom;
} core_str;

void core_str_printf(core_str *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void core_str_vprintf(core_str *b, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));
void core_str_puts(core_str *b, const char *text);
/* Appends the first n bytes of text (which need not be NUL-terminated). */
void core_str_putn(core_str *b, const char *text, size_t n);
void core_str_free(core_str *b);
/* The string, now the caller's (free()), "" when nothing was written, or
 * NULL after an allocation failure (the buffer is then freed). Leaves b
 * empty. */
char *core_str_take(core_str *b);

#endif
