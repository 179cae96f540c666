/* similar.c - edit distance (optimal string alignment: insert, delete,
 * substitute, swap neighbours; letter case free) for "did you mean". */
#include "core/similar.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "kfuse.h"

#define SIM_MAX 64 /* longer words get no suggestion */

/* The most edits still taken for a typo of a word of len characters. */
static int threshold(size_t len) {
  /* One edit of a 2-letter word makes another word, not a typo. */
  return len <= 2 ? 0 : len <= 5 ? 1 : len <= 8 ? 2 : 3;
}

static bool same(char a, char b) {
  return tolower((unsigned char)a) == tolower((unsigned char)b);
}

static int min3(int a, int b, int c) {
  int m = a < b ? a : b;
  return m < c ? m : c;
}

/* Three rows of the dynamic programme: the swap looks two rows back. */
static int distance(const char *a, size_t na, const char *b, size_t nb) {
  int rows[3][SIM_MAX + 1];
  for (size_t j = 0; j <= nb; j++) rows[0][j] = (int)j;
  for (size_t i = 1; i <= na; i++) {
    int *cur = rows[i % 3], *prev = rows[(i - 1) % 3], *prev2 = rows[(i + 1) % 3];
    cur[0] = (int)i;
    for (size_t j = 1; j <= nb; j++) {
      int cost = same(a[i - 1], b[j - 1]) ? 0 : 1;
      cur[j] = min3(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost);
      if (i > 1 && j > 1 && same(a[i - 1], b[j - 2]) && same(a[i - 2], b[j - 1]) &&
          prev2[j - 2] + 1 < cur[j])
        cur[j] = prev2[j - 2] + 1;
    }
  }
  return rows[na % 3][nb];
}

void core_similar_init(core_similar *s, const char *word) {
  s->word = word;
  s->len = word ? strlen(word) : 0;
  s->best = NULL;
  s->best_d = 0;
}

void core_similar_add(core_similar *s, const char *candidate) {
  if (!s->word || !candidate || s->len == 0 || s->len > SIM_MAX) return;
  size_t n = strlen(candidate);
  if (n > SIM_MAX) return;
  size_t gap = n > s->len ? n - s->len : s->len - n;
  int limit = threshold(s->len);
  if ((int)gap > limit) return; /* the distance is at least the gap */
  int d = distance(s->word, s->len, candidate, n);
  if (d <= limit && (!s->best || d < s->best_d)) s->best = candidate, s->best_d = d;
}

const char *core_similar_best(const core_similar *s) {
  return s->best;
}

const char *core_similar_hint(const core_similar *s, char *buf, size_t size) {
  if (size) buf[0] = '\0';
  if (s->best) snprintf(buf, size, "; did you mean '%s'?", s->best);
  return buf;
}

int kf_suggest(const char *word, const char *const *candidates, int n) {
  core_similar s;
  core_similar_init(&s, word);
  int best = -1;
  for (int i = 0; candidates && i < n; i++) {
    const char *before = s.best;
    core_similar_add(&s, candidates[i]);
    if (s.best != before) best = i;
  }
  return best;
}
