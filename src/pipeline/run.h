/* run.h - the plan's runtime part as the runtime sees it (run.c; the
 * run entry points themselves are kfuse.h's). */
#ifndef KF_PIPELINE_RUN_H
#define KF_PIPELINE_RUN_H

#include "kfuse.h"

struct rt_plan;

/* plan->rt, created at first need, with its inputs (context, graph, fuse
 * plan, program, options, knobs, message buffer, load driver) refreshed
 * from the plan: every call into the runtime's plan functions goes
 * through it, since a re-fuse replaces the fuse plan and the program.
 * NULL for a NULL plan, and on out of memory (message on the plan). */
struct rt_plan *pl_rt_plan(kf_plan *plan);

#endif
