/* streams.h - streams mode: the schedule of a plan's launches over the pool's
 * streams, and running it (streams.c). */
#ifndef KF_RUNTIME_STREAMS_H
#define KF_RUNTIME_STREAMS_H

#include "runtime/rt.h"

/* Computes dependencies, costs, the critical path and stream assignment
 * for n_streams streams (pure logic, no driver calls). */
kf_status rt_schedule(rt_plan *plan, int n_streams);
kf_status rt_run_streams(rt_plan *plan, CUstream stream);

#endif
