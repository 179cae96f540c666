/* similar.h - "did you mean": the closest of a set of names to a word that
 * matched none (kf_suggest in kfuse.h states the rule). */
#ifndef KF_CORE_SIMILAR_H
#define KF_CORE_SIMILAR_H

#include <stddef.h>

/* Candidates come one at a time, so any table (ops, keys, dtypes, defined
 * names) can be searched without building a list. */
typedef struct core_similar {
  const char *word;
  size_t len;
  const char *best; /* NULL while none is close enough */
  int best_d;
} core_similar;

void core_similar_init(core_similar *s, const char *word);
void core_similar_add(core_similar *s, const char *candidate);
/* The closest candidate so far, or NULL. */
const char *core_similar_best(const core_similar *s);

/* "; did you mean 'x'?" for an error message, or "" when nothing is close
 * (into buf, which is returned). */
const char *core_similar_hint(const core_similar *s, char *buf, size_t size);

#endif
