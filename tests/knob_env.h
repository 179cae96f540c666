/* knob_env.h - setting environment variables in a test: the library reads
 * its knobs once (core/knobs.def), so a test that changes one between cases
 * re-reads the table, as a new process would. */
#ifndef KF_TEST_KNOB_ENV_H
#define KF_TEST_KNOB_ENV_H

#include <stdlib.h>

#include "core/knobs.h"

static inline int kt_setenv(const char *name, const char *value, int overwrite) {
  int r = setenv(name, value, overwrite);
  core_knobs_reload();
  return r;
}

static inline int kt_unsetenv(const char *name) {
  int r = unsetenv(name);
  core_knobs_reload();
  return r;
}

#endif
