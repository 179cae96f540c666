/* matmul_choice.h - the pipeline's choice for matmul kernels (matmul_choice.c): cuBLASLt
 * library calls or kfuse's template kernels. */
#ifndef KF_PIPELINE_MATMUL_CHOICE_H
#define KF_PIPELINE_MATMUL_CHOICE_H

#include <stdbool.h>

#include "fuser/plan.h"
#include "pipeline/pipeline.h"

/* The library is absent or refused a product (the load said
 * KF_ERR_UNSUPPORTED): plan->fuse and plan->code become the template
 * plan, with one log line; the caller loads again. */
kf_status pl_matmul_fallback(kf_plan *plan);
/* After a load with library calls: each call's cuBLASLt candidates and
 * the whole plan against its template form, timed once (KFUSE_MATMUL=auto;
 * =library times the candidates only) or read back from the disk cache;
 * the choice goes into the decision log. *reload: the template won and
 * plan->fuse, plan->code changed, so the caller loads again. Failures to
 * time keep the library with the heuristic's first candidates (logged),
 * except running out of memory: KF_ERR_OUT_OF_MEMORY, the message in
 * plan->errmsg. */
kf_status pl_matmul_choose(kf_plan *plan, bool *reload);

/* The template plan of a plan with library calls, planned (fused, not yet
 * generated) for kf_plan_compile to compile ahead, beside the plan's own
 * kernels, so that the load's choice times it without compiling:
 * KFUSE_MATMUL=auto and a GPU present. A choice on record is not looked
 * up first: its name needs cuBLASLt's version, and loading cuBLASLt is
 * what pl_matmul_ahead_setup does beside the compile; on a warm start the
 * template's kernels come from the disk cache (milliseconds), and the
 * load's choice frees the plan unused. NULL when not wanted or when
 * planning fails (logged at debug: the load plans it again and reports).
 * Frees an earlier compile's (plan->ahead). The compile runs where
 * kf_plan_compile runs (the torch backend's worker threads, beside the
 * other partitions' compiles), not on the thread that loads. */
kf_plan *pl_matmul_ahead_plan(kf_plan *plan);
/* What the load needs next, set up as one more job of the compile's batch
 * (arg: the kf_plan): the CUDA context and cuBLASLt, whose first load
 * reads a few hundred MB; once per context (the first compile's job does
 * it, later ones return at once). Failures are left for the load to
 * report. Thread-safe against the batch's compiles. */
void pl_matmul_ahead_setup(void *arg);

/* The choice as made, kept across the load's re-planning (occupancy
 * splits replace plan->fuse and plan->code): its counters, its decision,
 * and the fusion it was made on. */
typedef struct pl_matmul_kept {
  const void *fuse;
  fuse_mm_choice r;
  bool accepted;
  char text[sizeof(((fuse_decision *)0)->text)];
} pl_matmul_kept;
void pl_matmul_keep(const kf_plan *plan, pl_matmul_kept *k);
/* After a re-plan of a loaded plan: the kept counters and decision on the
 * new fusion, and each library call's candidate from its product's record
 * (the launches' order changed). Nothing when the plan was not re-planned. */
void pl_matmul_restore(kf_plan *plan, const pl_matmul_kept *k);

#endif
