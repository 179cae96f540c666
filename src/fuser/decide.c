/* decide.c - the decision log: every choice of the fuser (and the
 * occupancy verdicts the pipeline adds) as an entry of plan->decisions,
 * logged at debug level as it is made. */
#include "fuser/decide.h"

#include <stdarg.h>
#include <stdio.h>

#include "core/alloc.h"
#include "core/ctx.h"
#include "fuser/text.h"

/* A new entry of the log, or NULL once it ran out of memory. */
static fuse_decision *push_decision(fuse_plan *plan, bool accepted, const char *rule) {
  if (plan->cap_decisions < 0) return NULL;
  if (plan->n_decisions == plan->cap_decisions) {
    int32_t cap = plan->cap_decisions ? plan->cap_decisions * 2 : 64;
    fuse_decision *d = core_realloc(plan->decisions, (size_t)cap * sizeof *d);
    if (!d) {
      plan->cap_decisions = -1;
      return NULL;
    }
    plan->decisions = d;
    plan->cap_decisions = cap;
  }
  fuse_decision *d = &plan->decisions[plan->n_decisions++];
  size_t n = 0;
  d->accepted = accepted;
  fuse_put_str(d->rule, sizeof d->rule, &n, rule);
  return d;
}

static void log_decision(const fuse_plan *plan, const fuse_decision *d) {
  if (plan->log_decisions)
    core_log(plan->graph->ctx, KF_LOG_DEBUG, LOG_FUSE, "%s %s: %s",
             d->accepted ? "accept" : "refuse", d->rule, d->text);
}

void fuse_decide(fuse_plan *plan, bool accepted, const char *rule, const char *fmt, ...) {
  fuse_decision *d = push_decision(plan, accepted, rule);
  if (!d) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(d->text, sizeof d->text, fmt, ap);
  va_end(ap);
  log_decision(plan, d);
}

void fuse_decide_parts(fuse_plan *plan, bool accepted, const char *rule, const char *const *parts,
                       int n) {
  fuse_decision *d = push_decision(plan, accepted, rule);
  if (!d) return;
  size_t len = 0;
  d->text[0] = '\0';
  for (int i = 0; i < n; i++) fuse_put_str(d->text, sizeof d->text, &len, parts[i]);
  log_decision(plan, d);
}

bool fuse_decisions_ok(const fuse_plan *plan) {
  return plan->cap_decisions >= 0;
}
