/* ref_parallel.h - a node's evaluator run in parts on several threads
 * (ref_parallel.c). */
#ifndef KF_IR_REF_PARALLEL_H
#define KF_IR_REF_PARALLEL_H

#include "ir/ref.h"

/* The threads of one reference run: KFUSE_REF_THREADS (1..64; default the
 * online processors, at most 16) in all, the calling thread included, and
 * the least work per part, KFUSE_REF_GRAIN (default 65536). The pool's
 * workers start at the first node worth splitting. */
typedef struct ir_ref_workers {
  struct core_pool *pool;
  int threads;
  int64_t grain;
} ir_ref_workers;

void ir_ref_workers_init(ir_ref_workers *w);
void ir_ref_workers_free(ir_ref_workers *w);
/* Runs fn over [0, extent) in parts of at least w->grain units of work
 * (work_per_unit each), at most w->threads of them; on the calling thread
 * alone when one part is enough or no worker could start. */
void ir_ref_parallel(ir_ref_workers *w, ir_ref_eval_fn *fn, const kf_graph *g, const ir_node *n,
                     const ir_ref_buf *const *a, ir_ref_buf *out, int64_t extent,
                     int64_t work_per_unit);

#endif /* KF_IR_REF_PARALLEL_H */
