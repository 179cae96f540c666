/* scratch_plan.h - a second plan of the same graph, for the driver's
 * re-planning steps (occupancy splits, the library-or-template choice): it
 * borrows the graph, copies options and knobs, keeps the arch the plan
 * compiled for, and can hand its fusion and code over to the plan. */
#ifndef KF_PIPELINE_SCRATCH_PLAN_H
#define KF_PIPELINE_SCRATCH_PLAN_H

#include "pipeline/pipeline.h"

/* A scratch plan without fusion or code (NULL: out of memory). */
kf_plan *pl_scratch_new(const kf_plan *plan);
/* Frees it without the borrowed graph; NULL is fine. */
void pl_scratch_free(kf_plan *tmp);
/* plan takes tmp's fusion and code; tmp is freed. */
void pl_scratch_adopt(kf_plan *plan, kf_plan *tmp);

#endif
