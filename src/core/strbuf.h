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
/* A NULL text (a string whose allocation failed upstream) latches oom, so
 * that the failure reaches whoever checks this buffer. */
void core_str_puts(core_str *b, const char *text);
/* Appends the first n bytes of text (which need not be NUL-terminated). */
void core_str_putn(core_str *b, const char *text, size_t n);
void core_str_free(core_str *b);
/* The text of `from` for writing into `into` (as a printf argument or a
 * template hole): "" when nothing was written; after an allocation failure
 * in `from` it latches into->oom and gives "", so that a sub-buffer's
 * failure cannot turn into missing code in a buffer that looks whole. */
const char *core_str_use(core_str *into, const core_str *from);
/* The string, now the caller's (free()), "" when nothing was written, or
 * NULL after an allocation failure (the buffer is then freed). Leaves b
 * empty. */
char *core_str_take(core_str *b);

#endif
