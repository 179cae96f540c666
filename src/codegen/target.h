/* target.h - what code is generated for (target.c): an arch name, parsed
 * strictly, and the target of that arch. */
#ifndef KF_CG_TARGET_H
#define KF_CG_TARGET_H

#include <stdbool.h>

#include "codegen/codegen.h"

/* Parses an arch name strictly into major * 10 + minor (90) and its suffix
 * letter ('a', 'f' or 0): "sm_90", "sm_90a", "compute_90", "90", "9.0";
 * false on anything else (signs, spaces, a leading 0, trailing text).
 * Either output may be NULL. Thread-safe. */
bool cg_arch_parse(const char *name, int *num, char *suffix);
/* Parses an arch name (cg_arch_parse) into a target with that arch's
 * defaults and the current knobs (core_knobs_quiet). false on a malformed
 * name or one before sm_50. A plan's target is built by pl_plan_target (one
 * place for kf_plan_source and kf_plan_compile). */
bool cg_target_from_arch(const char *arch, cg_target *out);

#endif
