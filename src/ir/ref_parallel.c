/* ref_parallel.c - the reference interpreter's nodes evaluated in parts on
 * several threads. A node's extent (ref_extent) splits into contiguous
 * parts of about equal work; each part runs the node's evaluator on its own
 * range, writing only its own outputs, and the calling thread waits for
 * all of them. The results are the same bits on any number of threads
 * (ref.h). Reference runs of large graphs (a GPU test's 10^7-element
 * checks) were bound by one core. */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "ir/ref.h"

enum { REF_MAX_THREADS = 64, REF_DEFAULT_THREADS = 16, REF_DEFAULT_GRAIN = 65536 };

typedef struct ref_part {
  ref_eval_fn *fn;
  const kf_graph *g;
  const ir_node *n;
  const ref_buf *const *a;
  ref_buf *out;
  int64_t p0, p1;
} ref_part;

static long env_long(const char *name, long lo, long hi, long dflt) {
  const char *e = getenv(name);
  if (!e || !*e) return dflt;
  char *end;
  long v = strtol(e, &end, 10);
  return *end || v < lo || v > hi ? dflt : v;
}

/* KFUSE_REF_THREADS (1..64), else the online processors, at most 16. */
static int ref_threads(void) {
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  if (cpus < 1) cpus = 1;
  if (cpus > REF_DEFAULT_THREADS) cpus = REF_DEFAULT_THREADS;
  return (int)env_long("KFUSE_REF_THREADS", 1, REF_MAX_THREADS, cpus);
}

static void *run_part(void *arg) {
  ref_part *p = arg;
  p->fn(p->g, p->n, p->a, p->out, p->p0, p->p1);
  return NULL;
}

void ref_parallel(ref_eval_fn *fn, const kf_graph *g, const ir_node *n, const ref_buf *const *a,
                  ref_buf *out, int64_t extent, int64_t work_per_unit) {
  if (extent <= 0) return;
  int64_t grain = env_long("KFUSE_REF_GRAIN", 1, 1L << 30, REF_DEFAULT_GRAIN);
  int64_t work = extent * (work_per_unit > 0 ? work_per_unit : 1);
  int64_t parts = work / grain;
  if (parts > ref_threads()) parts = ref_threads();
  if (parts > extent) parts = extent;
  if (parts <= 1) {
    fn(g, n, a, out, 0, extent);
    return;
  }
  ref_part part[REF_MAX_THREADS];
  pthread_t tid[REF_MAX_THREADS];
  bool started[REF_MAX_THREADS] = {false};
  for (int64_t i = 0; i < parts; i++)
    part[i] = (ref_part){fn, g, n, a, out, extent * i / parts, extent * (i + 1) / parts};
  /* parts 1.. on their own threads, part 0 here; a part whose thread
   * cannot start runs here too */
  for (int64_t i = 1; i < parts; i++)
    started[i] = pthread_create(&tid[i], NULL, run_part, &part[i]) == 0;
  run_part(&part[0]);
  for (int64_t i = 1; i < parts; i++) {
    if (started[i])
      pthread_join(tid[i], NULL);
    else
      run_part(&part[i]);
  }
}
