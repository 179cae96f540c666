/* ref_parallel.c - the reference interpreter's nodes evaluated in parts on
 * several threads. A node's extent (ir_ref_extent) splits into contiguous
 * parts of about equal work; each part runs the node's evaluator on its own
 * range, writing only its own outputs, on the workers of one run's pool
 * (core/pool.h, started at the first node worth splitting), the calling
 * thread taking part. The results are the same bits on any number of
 * threads (ref.h). Reference runs of large graphs (a GPU test's
 * 10^7-element checks) were bound by one core. */
#include <stdlib.h>

#include "core/knobs.h"
#include "core/pool.h"
#include "ir/ref.h"
#include "ir/ref_parallel.h"

enum { REF_DEFAULT_THREADS = 16 };

void ir_ref_workers_init(ir_ref_workers *w) {
  int cpus = core_cpu_count();
  w->pool = NULL;
  const core_knobs *k = core_knobs_get(NULL); /* knobs.def bounds them: 1..64, 1..2^30 */
  w->threads = k->ref_threads > 0 ? (int)k->ref_threads
               : cpus < REF_DEFAULT_THREADS ? cpus
                                            : REF_DEFAULT_THREADS;
  w->grain = k->ref_grain;
}

void ir_ref_workers_free(ir_ref_workers *w) {
  core_pool_destroy(w->pool);
  w->pool = NULL;
}

typedef struct ref_job {
  ir_ref_eval_fn *fn;
  const kf_graph *g;
  const ir_node *n;
  const ir_ref_buf *const *a;
  ir_ref_buf *out;
  int64_t extent;
  int parts;
} ref_job;

static void run_part(void *arg, int i) {
  const ref_job *j = arg;
  j->fn(j->g, j->n, j->a, j->out, j->extent * i / j->parts, j->extent * (i + 1) / j->parts);
}

void ir_ref_parallel(ir_ref_workers *w, ir_ref_eval_fn *fn, const kf_graph *g, const ir_node *n,
                     const ir_ref_buf *const *a, ir_ref_buf *out, int64_t extent,
                     int64_t work_per_unit) {
  if (extent <= 0) return;
  int64_t parts = extent * (work_per_unit > 0 ? work_per_unit : 1) / w->grain;
  if (parts > w->threads) parts = w->threads;
  if (parts > extent) parts = extent;
  /* the workers start with the first node worth splitting; without them
   * (no thread could start) every node runs on the calling thread */
  if (parts > 1 && !w->pool) {
    w->pool = core_pool_create(w->threads - 1);
    if (!w->pool) w->threads = 1;
  }
  if (parts <= 1 || !w->pool) {
    fn(g, n, a, out, 0, extent);
    return;
  }
  ref_job job = {fn, g, n, a, out, extent, (int)parts};
  core_pool_for(w->pool, job.parts, run_part, &job);
}
