/* rt_plan.c - a plan's loaded modules, functions, streams and CUDA Graph.
 * Owned by src/runtime. */
#include <stdlib.h>

#include "core/plan.h"

void rt_plan_free(struct rt_plan *rt) { free(rt); }
