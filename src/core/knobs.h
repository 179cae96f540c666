/* knobs.h - the environment, read once: every variable of core/knobs.def
 * as one immutable snapshot (core_knobs), carried by plans and by the code
 * generation target. No other file of src/ reads the environment. */
#ifndef KF_CORE_KNOBS_H
#define KF_CORE_KNOBS_H

#include <stdbool.h>
#include <stddef.h>

#include "kfuse.h"

typedef enum core_knob_type {
  KT_BOOL,
  KT_INT,
  KT_POW2,
  KT_MB,
  KT_ENUM,
  KT_STR,
  KT_PATH
} core_knob_type;

typedef enum core_knob_class { KC_USER, KC_TUNE, KC_SYS } core_knob_class;

/* The field types by knob type: bool, long (KT_INT, KT_POW2), double
 * (KT_MB), int (KT_ENUM: the index of the value in `accepted`), const char *
 * (KT_STR, KT_PATH: NULL when unset or empty). */
#define KT_FIELD_KT_BOOL bool
#define KT_FIELD_KT_INT long
#define KT_FIELD_KT_POW2 long
#define KT_FIELD_KT_MB double
#define KT_FIELD_KT_ENUM int
#define KT_FIELD_KT_STR const char *
#define KT_FIELD_KT_PATH const char *

typedef struct core_knobs {
#define KNOB(field, var, type, def, lo, hi, acc, cls, comp, doc) KT_FIELD_##type field;
#include "core/knobs.def"
#undef KNOB
} core_knobs;

/* One row of the table, for docs and tests (core_knob_rows). */
typedef struct core_knob_row {
  const char *name, *def, *accepted, *doc;
  core_knob_type type;
  core_knob_class cls;
  int comp; /* core_component of a bad value's warning */
  double lo, hi;
} core_knob_row;

/* The rows of knobs.def in order; *n their count. */
const core_knob_row *core_knob_rows(int *n);

/* The current snapshot: the environment as read at the first call (or at
 * the last core_knobs_reload). Never NULL; valid, unchanged, for the whole
 * process (a reload makes a new one). Thread-safe. The first caller after a
 * read logs its warnings (bad values) through ctx's log (ctx may be NULL:
 * stderr, as core_log). */
const core_knobs *core_knobs_get(kf_ctx *ctx);

/* The current snapshot, logging nothing (for the logger itself, and where
 * no context is at hand and a later call with one will warn). */
const core_knobs *core_knobs_quiet(void);

/* Reads the environment again into a new snapshot (tests set variables
 * between cases with setenv). Not thread-safe with other calls of this
 * module: call it with no other thread in the library. */
void core_knobs_reload(void);

/* What `row` accepts, in words ("0 or 1", "an integer from 1 to 64", ...). */
void core_knob_accepts(const core_knob_row *row, char *out, size_t size);

/* The row as a line of the Markdown tables of README.md / docs (checked by
 * tests/test_knobs.c): | `NAME` | accepts | default | doc | */
void core_knob_markdown(const core_knob_row *row, char *out, size_t size);

/* The `accepted` value of enum knob `row` with index i ("" past the end). */
const char *core_knob_enum_value(const char *accepted, int i, char *out, size_t size);

#endif
