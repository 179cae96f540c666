/* cuda_graph.h - CUDA Graph mode: building, updating and replaying a plan's
 * graph (cuda_graph.c). */
#ifndef KF_RUNTIME_CUDA_GRAPH_H
#define KF_RUNTIME_CUDA_GRAPH_H

#include "runtime/rt.h"

kf_status rt_run_graph(rt_plan *plan, CUstream stream);
void rt_graph_free(rt_plan *plan);

#endif
