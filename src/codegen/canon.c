/* canon.c - cg_canon_names: codegen's numbered local names renumbered in
 * order of appearance (canon.h says why). */
#include "codegen/canon.h"

#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"

/* The stems codegen numbers identifiers with by node id or temporary
 * (kf_g, a launch's group index, is local already and names its tables
 * too: kf_g0_start). A stem missing here only costs sharing, never a wrong
 * program; a stem here must never name something outside generated code
 * (a prelude or CUDA identifier), which the prelude test checks. */
static const char *const stems[] = {"p",    "x",   "t",      "o",     "h",    "r",
                                    "red",  "acc", "ix",     "dx",    "sp",   "kf_s",
                                    "kf_c", "s_s", "s_part", "skf_s", "skf_c"};
enum { N_STEMS = sizeof stems / sizeof stems[0] };

static bool is_id_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
static bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
static bool is_id(char c) {
  return is_id_start(c) || is_digit(c);
}

/* The stem's index for an identifier stem+digits, or -1. */
static int stem_of(const char *id, size_t n, size_t *digits_at) {
  size_t d = n;
  while (d > 0 && is_digit(id[d - 1])) d--;
  if (d == 0 || d == n) return -1;
  for (int s = 0; s < N_STEMS; s++)
    if (strlen(stems[s]) == d && memcmp(stems[s], id, d) == 0) {
      *digits_at = d;
      return s;
    }
  return -1;
}

bool cg_canon_stem(const char *id, size_t n) {
  size_t d;
  return stem_of(id, n, &d) >= 0;
}

/* The numbers seen for one stem, in order of first appearance: the index
 * is the new number. Numbers are kept as text (p01 and p1 differ). */
typedef struct seen {
  const char **num;
  size_t *len;
  int n, cap;
} seen;

static int rank_of(seen *s, const char *num, size_t len) {
  for (int i = 0; i < s->n; i++)
    if (s->len[i] == len && memcmp(s->num[i], num, len) == 0) return i;
  if (s->n == s->cap) {
    int cap = s->cap ? 2 * s->cap : 16;
    const char **nn = core_realloc(s->num, (size_t)cap * sizeof *nn);
    if (!nn) return -1;
    s->num = nn;
    size_t *nl = core_realloc(s->len, (size_t)cap * sizeof *nl);
    if (!nl) return -1;
    s->len = nl;
    s->cap = cap;
  }
  s->num[s->n] = num;
  s->len[s->n] = len;
  return s->n++;
}

/* The length of the comment, literal or number at p (0: none of those). */
static size_t skip_verbatim(const char *p) {
  const char *q = p;
  if (p[0] == '/' && p[1] == '/') {
    while (*q && *q != '\n') q++;
  } else if (p[0] == '/' && p[1] == '*') {
    const char *e = strstr(p + 2, "*/");
    q = e ? e + 2 : p + strlen(p);
  } else if (*p == '"' || *p == '\'') {
    for (q = p + 1; *q && *q != *p; q++)
      if (*q == '\\' && q[1]) q++;
    if (*q) q++;
  } else if (is_digit(*p)) { /* 0x1f, 1.5e3f, 16u: one token, no name in it */
    while (is_id(*q) || *q == '.') q++;
  }
  return (size_t)(q - p);
}

static void put_legend(core_str *legend, const seen *p) {
  for (int i = 0; i < p->n; i++)
    core_str_printf(legend, "%sp%d = %%%.*s", i ? ", " : "", i, (int)p->len[i], p->num[i]);
}

bool cg_canon_names(core_str *src, size_t from, core_str *legend) {
  if (src->oom || !src->s || from > src->len) return !src->oom;
  seen all[N_STEMS];
  memset(all, 0, sizeof all);
  core_str out = {0};
  core_str_putn(&out, src->s, from);
  bool ok = true;
  for (const char *p = src->s + from; *p && ok;) {
    size_t n = skip_verbatim(p);
    if (n == 0 && is_id_start(*p)) {
      while (is_id(p[n])) n++;
      size_t d = 0;
      int s = stem_of(p, n, &d);
      if (s >= 0) {
        int r = rank_of(&all[s], p + d, n - d);
        ok = r >= 0;
        core_str_printf(&out, "%s%d", stems[s], r);
        p += n;
        continue;
      }
    }
    if (n == 0) n = 1;
    core_str_putn(&out, p, n);
    p += n;
  }
  if (ok && !out.oom && legend) put_legend(legend, &all[0]);
  for (int s = 0; s < N_STEMS; s++) {
    free(all[s].num);
    free(all[s].len);
  }
  if (!ok || out.oom) {
    core_str_free(&out);
    src->oom = true;
    return false;
  }
  core_str_free(src);
  *src = out;
  return true;
}
