/* fuse_stub.c - TEMPORARY scaffolding so the library links while the fusion
 * pass is written; the fuser replaces this file. */
#include <stdio.h>
#include <stdlib.h>

#include "fuser/plan.h"

void fuse_options_default(fuse_options *opt) {
  opt->fusion = true;
  opt->horizontal = true;
  opt->sm_count = 132;
  opt->max_parts = 64;
  opt->max_param_bytes = 4096;
}

kf_status fuse_plan_build(const kf_graph *g, const fuse_options *opt, fuse_plan **out,
                          char *err, size_t errsize) {
  (void)g;
  (void)opt;
  *out = NULL;
  snprintf(err, errsize, "the fusion pass is not built yet");
  return KF_ERR_UNSUPPORTED;
}

void fuse_plan_free(fuse_plan *plan) { free(plan); }
char *fuse_plan_text(const fuse_plan *plan) { (void)plan; return NULL; }
char *fuse_plan_json(const fuse_plan *plan) { (void)plan; return NULL; }
char *fuse_plan_dot(const fuse_plan *plan) { (void)plan; return NULL; }
const char *fuse_kind_name(fuse_kind kind) { (void)kind; return "?"; }
