/* threadpool.h - a small pthread pool that runs parallel-for batches; the
 * NVRTC compiles of one plan are spread over it. */
#ifndef KF_RUNTIME_THREADPOOL_H
#define KF_RUNTIME_THREADPOOL_H

typedef struct rt_pool rt_pool;

/* Starts n_threads workers (n_threads <= 0: one per online core, at most
 * 32). NULL when no memory or no thread could be started. Not usable across
 * fork(): a child must create its own pool. */
rt_pool *rt_pool_create(int n_threads);
/* Waits for running batches to finish, then joins the workers. NULL: no-op. */
void rt_pool_destroy(rt_pool *pool);
/* Number of worker threads. */
int rt_pool_size(const rt_pool *pool);

/* Runs fn(arg, i) for every i in [0, n) and returns when all have returned.
 * The calling thread takes part, so a NULL pool runs the loop serially and
 * nested calls cannot deadlock. Thread-safe: several threads may run
 * batches on one pool at once. */
void rt_pool_for(rt_pool *pool, int n, void (*fn)(void *arg, int i), void *arg);

/* Online cores (at least 1). */
int rt_cpu_count(void);

#endif
