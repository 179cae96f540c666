/* pool.h - a small pthread pool that runs parallel-for batches: the NVRTC
 * compiles of one plan, and the parts of the reference interpreter's
 * nodes (src/ir/ref_parallel.c). */
#ifndef KF_CORE_POOL_H
#define KF_CORE_POOL_H

typedef struct core_pool core_pool;

/* Starts n_threads workers (n_threads <= 0: one per online core, at most
 * 32). NULL when no memory or no thread could be started. Not usable across
 * fork(): a child must create its own pool. */
core_pool *core_pool_create(int n_threads);
/* Waits for running batches to finish, then joins the workers. NULL: no-op. */
void core_pool_destroy(core_pool *pool);
/* Number of worker threads. */
int core_pool_size(const core_pool *pool);

/* Runs fn(arg, i) for every i in [0, n) and returns when all have returned.
 * The calling thread takes part, so a NULL pool runs the loop serially and
 * nested calls cannot deadlock. Thread-safe: several threads may run
 * batches on one pool at once. */
void core_pool_for(core_pool *pool, int n, void (*fn)(void *arg, int i), void *arg);

/* The cores this process may run on (its affinity mask; else the online
 * cores; at least 1). */
int core_cpu_count(void);

#endif
