/* decide.h - the fuser's decision log, the one log of a plan's choices (decide.c). */
#ifndef KF_FUSER_DECIDE_H
#define KF_FUSER_DECIDE_H

#include <stdbool.h>

#include "fuser/plan.h"

void fuse_decide(fuse_plan *plan, bool accepted, const char *rule, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* The same with the text given as pieces to concatenate: the hot path
 * (one accepted merge per node) stays clear of printf. */
void fuse_decide_parts(fuse_plan *plan, bool accepted, const char *rule, const char *const *parts,
                       int n);
/* False once the log ran out of memory (the plan then fails). */
bool fuse_decisions_ok(const fuse_plan *plan);

#endif
