/* pool.c - a pthread pool running parallel-for batches from a queue;
 * callers help with their own batch so progress never depends on workers. */
#include "core/pool.h"

#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

#include "core/alloc.h"

typedef struct core_batch {
  void (*fn)(void *arg, int i);
  void *arg;
  int n;
  int next; /* next index to hand out */
  int done; /* indices finished */
  struct core_batch *link;
} core_batch;

struct core_pool {
  pthread_mutex_t lock;
  pthread_cond_t work; /* a batch was queued, or stopping */
  pthread_cond_t idle; /* some batch finished an index */
  core_batch *head, *tail;
  bool stop;
  int n_threads;
  pthread_t *threads;
};

/* The cores this process may run on: under taskset or a container's CPU
 * set, more threads than that only take turns on the same cores (a
 * compile pool of 16 threads pinned to 2 cores compiles no faster than 2,
 * and each waiting compile holds its memory). */
int core_cpu_count(void) {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    int n = CPU_COUNT(&set);
    if (n >= 1) return n;
  }
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n < 1 ? 1 : (int)n;
}

/* Takes one index of the front batch; pool->lock held. false: queue empty. */
static bool take(core_pool *pool, core_batch **batch, int *index) {
  core_batch *b = pool->head;
  if (!b) return false;
  *batch = b;
  *index = b->next++;
  if (b->next == b->n) { /* fully handed out: off the queue */
    pool->head = b->link;
    if (!pool->head) pool->tail = NULL;
  }
  return true;
}

static void finish(core_pool *pool, core_batch *b) {
  pthread_mutex_lock(&pool->lock);
  b->done++;
  if (b->done == b->n) pthread_cond_broadcast(&pool->idle);
  pthread_mutex_unlock(&pool->lock);
}

static void *worker(void *p) {
  core_pool *pool = p;
  pthread_mutex_lock(&pool->lock);
  for (;;) {
    core_batch *b;
    int i;
    while (!pool->stop && !take(pool, &b, &i)) pthread_cond_wait(&pool->work, &pool->lock);
    if (pool->stop) break;
    pthread_mutex_unlock(&pool->lock);
    b->fn(b->arg, i);
    finish(pool, b);
    pthread_mutex_lock(&pool->lock);
  }
  pthread_mutex_unlock(&pool->lock);
  return NULL;
}

core_pool *core_pool_create(int n_threads) {
  if (n_threads <= 0) n_threads = core_cpu_count();
  if (n_threads > 32) n_threads = 32;
  core_pool *pool = core_calloc(1, sizeof *pool);
  if (!pool) return NULL;
  pool->threads = core_calloc((size_t)n_threads, sizeof *pool->threads);
  if (!pool->threads) {
    free(pool);
    return NULL;
  }
  pthread_mutex_init(&pool->lock, NULL);
  pthread_cond_init(&pool->work, NULL);
  pthread_cond_init(&pool->idle, NULL);
  for (int i = 0; i < n_threads; i++) {
    if (pthread_create(&pool->threads[i], NULL, worker, pool) != 0) break;
    pool->n_threads++;
  }
  if (pool->n_threads == 0) {
    core_pool_destroy(pool);
    return NULL;
  }
  return pool;
}

void core_pool_destroy(core_pool *pool) {
  if (!pool) return;
  pthread_mutex_lock(&pool->lock);
  pool->stop = true;
  pthread_cond_broadcast(&pool->work);
  pthread_mutex_unlock(&pool->lock);
  for (int i = 0; i < pool->n_threads; i++) pthread_join(pool->threads[i], NULL);
  pthread_cond_destroy(&pool->idle);
  pthread_cond_destroy(&pool->work);
  pthread_mutex_destroy(&pool->lock);
  free(pool->threads);
  free(pool);
}

int core_pool_size(const core_pool *pool) {
  return pool ? pool->n_threads : 0;
}

void core_pool_for(core_pool *pool, int n, void (*fn)(void *arg, int i), void *arg) {
  if (n <= 0) return;
  if (!pool || n == 1) {
    for (int i = 0; i < n; i++) fn(arg, i);
    return;
  }
  core_batch b = {fn, arg, n, 0, 0, NULL};
  pthread_mutex_lock(&pool->lock);
  if (pool->tail)
    pool->tail->link = &b;
  else
    pool->head = &b;
  pool->tail = &b;
  pthread_cond_broadcast(&pool->work);
  /* Help with our own batch while indices remain. */
  while (b.next < b.n) {
    int i = b.next++;
    if (b.next == b.n) { /* unlink b: it may sit anywhere in the queue */
      core_batch **pp = &pool->head, *prev = NULL;
      while (*pp != &b) {
        prev = *pp;
        pp = &(*pp)->link;
      }
      *pp = b.link;
      if (pool->tail == &b) pool->tail = prev;
    }
    pthread_mutex_unlock(&pool->lock);
    fn(arg, i);
    pthread_mutex_lock(&pool->lock);
    b.done++;
  }
  while (b.done < b.n) pthread_cond_wait(&pool->idle, &pool->lock);
  pthread_mutex_unlock(&pool->lock);
}
