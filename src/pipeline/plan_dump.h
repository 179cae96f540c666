/* plan_dump.h - KFUSE_DUMP_DIR: files that show what kfuse did (plan_dump.c). */
#ifndef KF_PIPELINE_PLAN_DUMP_H
#define KF_PIPELINE_PLAN_DUMP_H

#include <stdbool.h>
#include <stddef.h>

#include "kfuse.h"

/* The folder from KFUSE_DUMP_DIR, or NULL when dumping is off. */
const char *pl_dump_dir(void);
/* Writes data[0..size) to $KFUSE_DUMP_DIR/name (creating the folder),
 * through a temporary file and a rename. Does nothing and returns false
 * when dumping is off; a failure is logged (runtime component), never an
 * error of the caller. name must be a plain file name. Thread-safe. */
bool pl_dump_file(kf_ctx *ctx, const char *name, const void *data, size_t size);
/* Dumps a plan as PREFIX.plan.json, PREFIX.plan.txt (the plan with the
 * fusion decision log), PREFIX.decisions.txt (fusion and occupancy
 * decisions), and per launch PREFIX.ENTRY.cu and PREFIX.ENTRY.cubin when
 * compiled; PREFIX is the graph's name (or "graph") and 8 hex digits of
 * its hash. Call after kf_plan_compile (kf_plan_compile calls it). */
void pl_dump_plan(kf_plan *plan);

#endif
