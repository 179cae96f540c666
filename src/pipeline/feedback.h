/* feedback.h - the steps of the occupancy feedback loop that the driver
 * (pipeline.c) runs (feedback.c). */
#ifndef KF_PIPELINE_FEEDBACK_H
#define KF_PIPELINE_FEEDBACK_H

#include <stdbool.h>

#include "pipeline/pipeline.h"

struct cg_program;

/* After a load: each launch's measured numbers and the fuser's verdict on
 * them, into the plan's decision log (rule "occupancy", replacing those of
 * an earlier load) and the log. */
void pl_feedback_note(kf_plan *plan);
/* After a load: compares each suspicious fused kernel (spills, or
 * occupancy below 1 - drop) with its parts (compiled and measured, or read
 * from the cache), caches the measurements, and when some kernel should be
 * split, replaces plan->fuse and plan->code with the re-fused, compiled
 * plan: true means "load again". Failures keep the plan fused (logged). */
bool pl_feedback_split(kf_plan *plan);
/* Before NVRTC: re-fuses plan->fuse with the splits that cached
 * measurements call for, judged with the current limit; true when
 * plan->fuse changed and prog must be generated again. */
bool pl_feedback_apply_cached(kf_plan *plan, const struct cg_program *prog);

#endif
