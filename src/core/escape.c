/* escape.c - kf_escape: control characters, C1 controls and invalid UTF-8
 * written as escapes, for terminals, log lines and JSON strings. */
#include "core/escape.h"

#include <stdio.h>
#include <string.h>

/* The length of the valid UTF-8 sequence at s (1 to 4), or 0 when the byte
 * at s does not start one (overlong forms, surrogates and code points past
 * U+10FFFF are invalid). */
static int utf8_len(const unsigned char *s) {
  unsigned c = s[0];
  if (c < 0x80) return 1;
  int n = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
  if (!n) return 0;
  unsigned lo = 0x80, hi = 0xBF; /* the second byte's range */
  if (c == 0xE0) lo = 0xA0;
  if (c == 0xED) hi = 0x9F;
  if (c == 0xF0) lo = 0x90;
  if (c == 0xF4) hi = 0x8F;
  if (s[1] < lo || s[1] > hi) return 0;
  for (int i = 2; i < n; i++)
    if ((s[i] & 0xC0) != 0x80) return 0;
  return n;
}

/* Appends to buf as snprintf would, counting what does not fit. */
typedef struct esc_out {
  char *buf;
  size_t size, len;
} esc_out;

static void put(esc_out *o, const char *s, size_t n) {
  for (size_t i = 0; i < n; i++, o->len++)
    if (o->len + 1 < o->size) o->buf[o->len] = s[i];
}

static void put_byte_escape(esc_out *o, unsigned char c, kf_escape_style style) {
  char e[8];
  snprintf(e, sizeof e, style == KF_ESCAPE_JSON ? "\\u%04x" : "\\x%02X", c);
  put(o, e, strlen(e));
}

/* One ASCII character, plain or escaped. */
static void put_ascii(esc_out *o, unsigned char c, kf_escape_style style) {
  bool json = style == KF_ESCAPE_JSON;
  if (json && (c == '"' || c == '\\')) {
    char e[2] = {'\\', (char)c};
    put(o, e, 2);
  } else if (json && (c == '\n' || c == '\r' || c == '\t')) {
    put(o, c == '\n' ? "\\n" : c == '\r' ? "\\r" : "\\t", 2);
  } else if (style == KF_ESCAPE_TEXT && (c == '\n' || c == '\t')) {
    put(o, (const char *)&c, 1);
  } else if (c < 0x20 || c == 0x7f) {
    put_byte_escape(o, c, style);
  } else {
    put(o, (const char *)&c, 1);
  }
}

size_t kf_escape(char *buf, size_t size, const char *text, kf_escape_style style) {
  esc_out o = {buf, buf ? size : 0, 0};
  const unsigned char *s = (const unsigned char *)(text ? text : "");
  while (*s) {
    int n = utf8_len(s);
    if (n == 1) {
      put_ascii(&o, *s, style);
    } else if (n == 2 && s[0] == 0xC2 && s[1] <= 0x9F) { /* C1: U+0080..U+009F */
      if (style == KF_ESCAPE_JSON) {
        put_byte_escape(&o, s[1], style);
      } else {
        put_byte_escape(&o, s[0], style);
        put_byte_escape(&o, s[1], style);
      }
    } else if (n > 1) {
      put(&o, (const char *)s, (size_t)n);
    } else {
      put_byte_escape(&o, *s, style), n = 1;
    }
    s += n;
  }
  if (o.size) o.buf[o.len < o.size ? o.len : o.size - 1] = '\0';
  return o.len;
}

void core_str_escaped(core_str *b, const char *text, kf_escape_style style) {
  char small[256];
  size_t n = kf_escape(small, sizeof small, text, style);
  if (n < sizeof small) {
    core_str_putn(b, small, n);
    return;
  }
  /* Long text: grow the string by n, then escape straight into it. */
  size_t at = b->len;
  core_str_putn(b, small, sizeof small - 1); /* reserves and checks OOM */
  for (size_t i = sizeof small - 1; i < n && !b->oom; i += sizeof small - 1)
    core_str_putn(b, small, n - i < sizeof small - 1 ? n - i : sizeof small - 1);
  if (b->oom) return;
  kf_escape(b->s + at, n + 1, text, style);
}

const char *core_escaped(char *buf, size_t size, const char *text) {
  kf_escape(buf, size, text, KF_ESCAPE_LINE);
  return buf;
}
