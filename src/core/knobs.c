/* knobs.c - the one reader of the environment: parses every variable of
 * core/knobs.def strictly into an immutable snapshot (core/knobs.h). */
#include "core/knobs.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/ctx.h"

enum {
  KNOB_COUNT = 0
#define KNOB(field, var, type, def, lo, hi, acc, cls, comp, doc) +1
#include "core/knobs.def"
#undef KNOB
};

static const core_knob_row rows[] = {
#define KNOB(field, var, type, def, lo, hi, acc, cls, comp, doc) \
  {#var, def, acc, doc, type, cls, comp, lo, hi},
#include "core/knobs.def"
#undef KNOB
};

const core_knob_row *core_knob_rows(int *n) {
  *n = KNOB_COUNT;
  return rows;
}

/* A snapshot and what its reading found wrong. Snapshots are never freed:
 * plans and targets keep pointers to theirs (a reload, tests only, makes a
 * new one, still reachable through `prev`). */
typedef struct snapshot {
  core_knobs k;
  char *text[KNOB_COUNT]; /* owned copies of the KT_STR / KT_PATH values */
  char warn[8][320];
  core_component warn_comp[8];
  int n_warn, n_bad;
  atomic_bool warned;
  struct snapshot *prev;
} snapshot;

static _Atomic(snapshot *) current;
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* ---- parsing -------------------------------------------------------------- */

static bool parse_long(const char *s, long *out) {
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (end == s || *end || errno) return false;
  *out = v;
  return true;
}

/* Digits with an optional fraction ("512", "1.5"): no sign, exponent, hex,
 * spaces or units, so that "1e-9" or "0x10" cannot mean something odd. */
static bool parse_mb(const char *s, double *out) {
  size_t digits = strspn(s, "0123456789");
  if (digits == 0 || digits > 12) return false;
  const char *p = s + digits;
  if (*p == '.') {
    size_t frac = strspn(p + 1, "0123456789");
    if (frac == 0 || frac > 6) return false;
    p += 1 + frac;
  }
  if (*p) return false;
  *out = strtod(s, NULL);
  return true;
}

const char *core_knob_enum_value(const char *accepted, int i, char *out, size_t size) {
  const char *p = accepted;
  for (; i > 0 && p; i--) p = strchr(p, '|') ? strchr(p, '|') + 1 : NULL;
  size_t n = p ? strcspn(p, "|") : 0;
  snprintf(out, size, "%.*s", (int)n, p ? p : "");
  return out;
}

static int enum_index(const char *accepted, const char *s) {
  char v[64];
  for (int i = 0; *core_knob_enum_value(accepted, i, v, sizeof v); i++)
    if (strcmp(v, s) == 0) return i;
  return -1;
}

/* Parses s as row r into *out (the field's type); `ranged`: lo..hi apply
 * (not to defaults, which may lie outside to mean "decided by the code"). */
static bool parse_value(const core_knob_row *r, const char *s, bool ranged, void *out) {
  long l;
  double d;
  switch (r->type) {
    case KT_BOOL:
      if (strcmp(s, "0") && strcmp(s, "1")) return false;
      *(bool *)out = s[0] == '1';
      return true;
    case KT_INT:
    case KT_POW2:
      if (!parse_long(s, &l)) return false;
      if (ranged && (l < r->lo || l > r->hi) && !(r->type == KT_POW2 && l == 0)) return false;
      if (ranged && r->type == KT_POW2 && (l & (l - 1))) return false;
      *(long *)out = l;
      return true;
    case KT_MB:
      if (!parse_mb(s, &d) || (ranged && (d < r->lo || d > r->hi))) return false;
      *(double *)out = d;
      return true;
    case KT_ENUM:
      l = enum_index(r->accepted, s);
      if (l < 0) return false;
      *(int *)out = (int)l;
      return true;
    case KT_STR:
    case KT_PATH:
      *(const char **)out = *s ? s : NULL;
      return true;
  }
  return false;
}

void core_knob_accepts(const core_knob_row *r, char *out, size_t size) {
  switch (r->type) {
    case KT_BOOL:
      snprintf(out, size, "0 or 1");
      break;
    case KT_INT:
      snprintf(out, size, "an integer from %.0f to %.0f", r->lo, r->hi);
      break;
    case KT_POW2:
      snprintf(out, size, "0, or a power of two from %.0f to %.0f", r->lo, r->hi);
      break;
    case KT_MB:
      snprintf(out, size,
               "a size in MB from %.10g to %.10g (digits, optionally with a fraction: "
               "512, 1.5)",
               r->lo, r->hi);
      break;
    case KT_ENUM: {
      snprintf(out, size, "one of ");
      char v[64];
      for (int i = 0; *core_knob_enum_value(r->accepted, i, v, sizeof v); i++)
        snprintf(out + strlen(out), size - strlen(out), "%s%s", i ? ", " : "", v);
      break;
    }
    case KT_STR:
    case KT_PATH:
      snprintf(out, size, "any text");
      break;
  }
}

/* The default in words: "unset" for text and for a number outside the range
 * (the code decides; the doc says how), else the table's text. */
static const char *default_words(const core_knob_row *r) {
  if (r->type == KT_STR || r->type == KT_PATH) return "unset";
  long l;
  if ((r->type == KT_INT || r->type == KT_POW2) && parse_long(r->def, &l) &&
      (l < r->lo || l > r->hi) && !(r->type == KT_POW2 && l == 0))
    return "unset";
  return r->def;
}

void core_knob_markdown(const core_knob_row *r, char *out, size_t size) {
  char acc[160];
  core_knob_accepts(r, acc, sizeof acc);
  snprintf(out, size, "| `%s` | %s | %s | %s |", r->name, acc, default_words(r), r->doc);
}

/* ---- reading -------------------------------------------------------------- */

/* Reads row i's variable into its field (*field); the default on a bad value,
 * with a warning kept on the snapshot. */
static void read_one(snapshot *s, int i, void *field) {
  const core_knob_row *r = &rows[i];
  parse_value(r, r->def, false, field); /* the table's defaults always parse */
  const char *v = getenv(r->name);
  if (!v || !*v) return;
  if (r->type == KT_STR || r->type == KT_PATH) {
    s->text[i] = core_strdup(v);
    if (s->text[i]) *(const char **)field = s->text[i];
    return;
  }
  if (parse_value(r, v, true, field)) return;
  parse_value(r, r->def, false, field);
  s->n_bad++;
  if (s->n_warn >= (int)(sizeof s->warn / sizeof s->warn[0])) return;
  char acc[160];
  core_knob_accepts(r, acc, sizeof acc);
  s->warn_comp[s->n_warn] = (core_component)r->comp;
  snprintf(s->warn[s->n_warn++], sizeof s->warn[0], "%s='%.40s' is not %s; using the default (%s)",
           r->name, v, acc, r->def);
}

static snapshot *read_all(void) {
  snapshot *s = core_calloc(1, sizeof *s);
  if (!s) return NULL;
  int i = 0;
#define KNOB(field, var, type, def, lo, hi, acc, cls, comp, doc) read_one(s, i++, &s->k.field);
#include "core/knobs.def"
#undef KNOB
  (void)i;
  return s;
}

/* Out of memory at the first read: the table's defaults, and no warnings. */
static snapshot fallback;

static void read_first(void) {
  snapshot *s = read_all();
  if (!s) {
    int i = 0;
#define KNOB(field, var, type, def, lo, hi, acc, cls, comp, doc) \
  parse_value(&rows[i++], def, false, &fallback.k.field);
#include "core/knobs.def"
#undef KNOB
    (void)i;
    atomic_store(&fallback.warned, true);
    s = &fallback;
  }
  atomic_store(&current, s);
}

/* Each context logs a snapshot's warnings once (an embedder's log_fn sees
 * them, set after kf_ctx_create); without a context, once to stderr. The
 * flag is set before logging: core_log itself asks for the snapshot. */
static void warn_once(kf_ctx *ctx, snapshot *s) {
  if (!s->n_warn) return;
  if (ctx ? atomic_exchange(&ctx->knobs_warned, (void *)s) == s : atomic_exchange(&s->warned, true))
    return;
  for (int i = 0; i < s->n_warn; i++) core_log(ctx, KF_LOG_WARN, s->warn_comp[i], "%s", s->warn[i]);
}

const core_knobs *core_knobs_get(kf_ctx *ctx) {
  pthread_once(&once, read_first);
  snapshot *s = atomic_load(&current);
  warn_once(ctx, s);
  return &s->k;
}

const core_knobs *core_knobs_quiet(void) {
  pthread_once(&once, read_first);
  return &atomic_load(&current)->k;
}

void core_knobs_reload(void) {
  pthread_once(&once, read_first);
  snapshot *s = read_all();
  if (!s) return; /* out of memory: the last snapshot stays */
  s->prev = atomic_load(&current);
  atomic_store(&current, s);
}
