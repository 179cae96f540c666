/* progress.h - a progress line on stderr while many kernels compile
 * (progress.c). */
#ifndef KF_CORE_PROGRESS_H
#define KF_CORE_PROGRESS_H

#include <stdatomic.h>
#include <stdbool.h>

#include "kfuse.h"

typedef struct core_progress {
  const char *what; /* "compiling kernels" */
  int total;
  atomic_int done;
  atomic_bool shown; /* a line was drawn: core_progress_end erases it */
  double t0_ms;
} core_progress;

/* Starts counting `total` steps. A line ("kfuse: compiling kernels 12/200")
 * appears only when stderr is a terminal, total is at least 8, the work has
 * taken more than half a second, the context has no log callback and
 * KFUSE_PROGRESS is not 0 (KFUSE_PROGRESS=1: from the first step, any
 * total, still only on a terminal). Where the compiler calls it: the NVRTC
 * batch of kf_plan_compile (rt_compile_program), one core_progress_step
 * per finished launch, cache hits included. */
void core_progress_begin(core_progress *p, const kf_ctx *ctx, const char *what, int total);
/* One step done; thread-safe (workers call it). */
void core_progress_step(core_progress *p);
/* Erases the line if one was drawn. */
void core_progress_end(core_progress *p);

#endif
